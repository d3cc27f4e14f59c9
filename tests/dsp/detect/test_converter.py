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
    t, v, ok = _stream(SHARP, 20)
    shapes = _feed(t, v, ok, [])
    assert (shapes.sharp, shapes.flat, shapes.sharp_steps) == (20, 0, 0)
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
    assert whole.sharp_steps == 1
    assert (cut.sharp, cut.flat, cut.sharp_steps, cut.short_windows_since_s) == (
        whole.sharp, whole.flat, whole.sharp_steps, whole.short_windows_since_s
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


def _landings(readings: list[np.ndarray], *, every: int = 15) -> tuple[np.ndarray, ...]:
    """Quiet readings with one cube's step a channel, in turn: ``readings[k]`` from its start."""
    rng = np.random.default_rng(2)
    n = 40 + every * len(readings) + 20
    t = np.arange(n) / RATE
    v = rng.normal(0.0, 30.0, (n, 8)) + 1e5
    for k, shape in enumerate(readings):
        i = 40 + every * k
        v[i:, k % 8] += 6000.0 * np.concatenate([shape, np.ones(n - i - len(shape))])
    return t, v, np.ones((n, 8), dtype=bool)


def _averaged(taps: int, push: float) -> np.ndarray:
    """A cube's step as a converter averaging its last ``taps`` conversions reads it.

    The impact pushes the plate by ``push`` cubes more during its conversion.
    """
    conversions = np.concatenate([np.zeros(taps), [1.0 + push], np.ones(3 * taps)])
    return np.convolve(conversions, np.ones(taps) / taps)[taps : taps + 2 * taps]


def test_a_weighing_filter_proves_itself_by_the_steps_of_landings_alone() -> None:
    # The new load from the second reading on, or from the third after the
    # push overshot it: no spike at all (every cube stayed on its plate).
    shapes_read = [np.array([0.6, 1.0]), np.array([0.5, 1.6, 1.02]), np.array([1.3, 0.98])]
    t, v, ok = _landings([shapes_read[k % 3] for k in range(SHARP_NEEDED)])
    for cuts in ([], list(range(0, t.size, 4))):
        shapes = _feed(t, v, ok, cuts)
        assert (shapes.sharp, shapes.flat, shapes.sharp_steps) == (0, 0, SHARP_NEEDED)
        # The last step is judged once it has been read for seven readings.
        assert shapes.short_windows_since_s == t[40 + 15 * (SHARP_NEEDED - 1) + 6]


@pytest.mark.parametrize("phase", [0.0, 0.25, 0.5, 0.75])
@pytest.mark.parametrize("push", [0.0, 1.0, 3.0])
def test_a_converter_that_settles_over_four_readings_shows_no_sharp_step(
    phase: float, push: float
) -> None:
    # A smooth filter spreading a push over five readings (0.24, 0.82, 1,
    # 0.5, 0.085 of its peak), the cube come at any moment of a conversion.
    spread = np.array([0.24, 0.82, 1.0, 0.5, 0.085])
    spread /= spread.sum()
    settled = np.concatenate([[0.0], np.cumsum(spread)])
    pushed = np.concatenate([[0.0], spread, [0.0]])
    k = np.arange(12) + 1.0 - phase
    read = np.interp(k, np.arange(settled.size), settled, right=1.0) + push * np.interp(
        k, np.arange(pushed.size), pushed, right=0.0
    )
    t, v, ok = _landings([read] * 12)
    assert _feed(t, v, ok, []).sharp_steps == 0


@pytest.mark.parametrize("taps", [3, 4])
@pytest.mark.parametrize("push", [0.0, 0.2, 0.3, 0.6, 1.0, 2.0, 3.0, 5.0])
def test_a_converter_that_averages_three_or_more_conversions_shows_no_sharp_step(
    taps: int, push: float
) -> None:
    t, v, ok = _landings([_averaged(taps, push)] * 12)
    shapes = _feed(t, v, ok, [])
    assert shapes.sharp_steps == 0
    assert shapes.short_windows_since_s == np.inf


def test_readings_held_while_the_converter_had_none_are_passed_over() -> None:
    # A device polling faster than its converter: every third reading is the
    # last one held (valid, not fresh). Spikes keep their shape, and a step
    # is still read from the converter's own readings.
    t, v, ok = _stream(SHARP, 20, step_at=101)
    fresh = ok.copy()
    for i in range(2, t.size, 3):
        v[i] = v[i - 1]
        fresh[i] = False
    shapes = SpikeShapes(8)
    for a in range(0, t.size, 5):
        shapes.process(t[a : a + 5], v[a : a + 5], ok[a : a + 5], fresh[a : a + 5])
    # (One spike's peak was itself a held reading's moment: read off it.)
    assert (shapes.sharp, shapes.flat, shapes.sharp_steps) == (19, 0, 1)
    assert shapes.short_windows_since_s < np.inf
    # Without the distinction, each held reading broke the quiet before a spike.
    plain = _feed(t, v, fresh, [])
    assert (plain.sharp, plain.sharp_steps) == (0, 0)
