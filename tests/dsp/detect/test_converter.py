"""Whether a slow converter spreads an impact's spike flat (dsp.detect.converter)."""

import numpy as np
import pytest

from dsp.detect.converter import SHARP_NEEDED, SpikeShapes

RATE = 10.0
SHARP = (1.0, 4.0, 1.0)  # a weighing filter: the push in one reading, a little in two
FLAT = (1.0, 1.0, 1.0, 1.0)  # the average of the last four conversions


def _stream(shape: tuple[float, ...], spikes: int, *, step_at: int | None = None):
    """Quiet readings on 8 channels with ``spikes`` impact spikes of ``shape`` on channel 2."""
    rng = np.random.default_rng(1)
    n = 400
    t = np.arange(n) / RATE
    v = rng.normal(0.0, 30.0, (n, 8)) + 1e5
    for k in range(spikes):
        i = 40 + 12 * k
        v[i : i + len(shape), 2] += 3000.0 * np.asarray(shape) / max(shape)
    if step_at is not None:
        v[step_at:, 5] += 6000.0  # a cube that stays: a step, not a spike
    return t, v, np.ones((n, 8), dtype=bool)


def _feed(t: np.ndarray, v: np.ndarray, ok: np.ndarray, cuts: list[int]) -> SpikeShapes:
    shapes = SpikeShapes(8)
    edges = [0, *sorted(set(cuts)), len(t)]
    for a, b in zip(edges[:-1], edges[1:], strict=True):
        shapes.process(t[a:b], v[a:b], ok[a:b])
    return shapes


def test_sharp_spikes_make_short_windows_safe_from_the_reading_that_proved_it() -> None:
    t, v, ok = _stream(SHARP, 20, step_at=100)
    shapes = _feed(t, v, ok, [])
    assert (shapes.sharp, shapes.flat) == (20, 0)
    # The spike that made it SHARP_NEEDED ends two quiet readings after its start + 2.
    proof = 40 + 12 * (SHARP_NEEDED - 1) + len(SHARP) + 1
    assert shapes.short_windows_since_s == t[proof]


def test_flat_spikes_never_make_short_windows_safe() -> None:
    t, v, ok = _stream(FLAT, 25)
    shapes = _feed(t, v, ok, [])
    assert (shapes.sharp, shapes.flat) == (0, 25)
    assert shapes.short_windows_since_s == np.inf


def test_a_few_flat_spikes_among_many_sharp_ones_wait_for_more_sharp_ones() -> None:
    t, v, ok = _stream(SHARP, 25)
    for k in (0, 1):  # the first two spikes came out flat (a strike and its bounce)
        i = 40 + 12 * k
        v[i : i + 4, 2] = 1e5 + 3000.0
    shapes = _feed(t, v, ok, [])
    assert (shapes.sharp, shapes.flat) == (23, 2)
    # Two flat in twenty sharp: safe only from the 20th sharp spike (the 22nd).
    assert shapes.short_windows_since_s == t[40 + 12 * 21 + len(SHARP) + 1]


@pytest.mark.parametrize("cuts", [[1, 2, 3, 50, 51, 140], list(range(0, 400, 7))])
def test_block_sizes_do_not_change_what_is_counted(cuts: list[int]) -> None:
    t, v, ok = _stream(SHARP, 20, step_at=100)
    whole, cut = _feed(t, v, ok, []), _feed(t, v, ok, cuts)
    assert (cut.sharp, cut.flat, cut.short_windows_since_s) == (
        whole.sharp, whole.flat, whole.short_windows_since_s
    )


def test_a_disconnected_channel_forgets_the_spike_it_was_reading() -> None:
    t, v, ok = _stream(SHARP, 1)
    ok[41:60, 2] = False  # the module was lifted in the middle of the spike
    shapes = _feed(t, v, ok, [])
    assert (shapes.sharp, shapes.flat) == (0, 0)


def test_a_converter_judged_sharp_by_chance_gives_short_windows_up_when_it_shows_flat_spikes(
) -> None:
    # Eight sharp spikes in a row, then only flat ones: three flat in ten
    # and short windows are given up, from that reading on, for good.
    t, v, ok = _stream(SHARP, 25)
    for k in range(8, 25):
        i = 40 + 12 * k
        v[i : i + 4, 2] = 1e5 + 3000.0
    for cuts in ([], list(range(0, 400, 13))):
        shapes = _feed(t, v, ok, cuts)
        assert (shapes.sharp, shapes.flat) == (8, 17)
        assert shapes.short_windows_since_s == t[40 + 12 * 7 + len(SHARP) + 1]
        # The third flat spike (three in eight sharp) ends two readings after its four.
        assert shapes.short_windows_until_s == t[40 + 12 * 10 + 4 + 1]
