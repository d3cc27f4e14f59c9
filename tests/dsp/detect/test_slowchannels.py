"""Slow converters in a fast stream: readings drawn between conversions (slowchannels)."""

from pathlib import Path

import numpy as np
import pytest

from dsp.detect.slowchannels import WAIT_S, SlowChannelBridge
from dsp.detect.stale import StaleReadingHold
from tests.scripts import detect_model_l

ROW_S = 0.0125  # polled at 80 Hz


def _mixed(n: int = 400, lifted: tuple[int, int] | None = None):
    """Channel 0 converts at 80 a second, channel 1 at 10 (every eighth row), as held."""
    t = np.arange(n) * ROW_S
    fresh = np.ones((n, 2), dtype=bool)
    fresh[:, 1] = np.arange(n) % 8 == 3
    if lifted is not None:
        fresh[lifted[0] : lifted[1], 1] = False
    rng = np.random.default_rng(4)
    ramp = np.clip((t - 1.0) / 0.4, 0.0, 1.0) * 9000.0  # a cube read over four conversions
    values = np.column_stack([1e5 + rng.normal(0, 30, n), 2e5 + ramp])
    values = np.where(fresh, values, 0.0)
    held_v, held_ok, read_t = StaleReadingHold(n_channels=2, reading_interval_s=ROW_S).process(
        t, values, fresh
    )
    return t, held_v, held_ok, fresh, read_t


def _bridge(rows, cuts: list[int]) -> tuple[SlowChannelBridge, tuple[np.ndarray, ...]]:
    t, values, valid, fresh, read_t = rows
    bridge = SlowChannelBridge(n_channels=2, row_interval_s=ROW_S)
    edges = [0, *sorted(set(cuts)), t.size]
    parts = [bridge.process(t[a:b], values[a:b], valid[a:b], fresh[a:b], read_t[a:b])
             for a, b in zip(edges[:-1], edges[1:], strict=True)]
    parts.append(bridge.flush())
    return bridge, tuple(np.concatenate([p[k] for p in parts]) for k in range(5))


def test_a_slow_channel_is_drawn_on_the_line_between_its_conversions() -> None:
    rows = _mixed()
    t, values, valid, fresh, _ = rows
    bridge, (t_out, v_out, ok_out, fresh_out, read_out) = _bridge(rows, [])
    np.testing.assert_array_equal(t_out, t)
    np.testing.assert_array_equal(ok_out, valid)
    np.testing.assert_array_equal(fresh_out, fresh)
    # The fast channel, and the slow one's own conversions, as they came.
    np.testing.assert_array_equal(v_out[:, 0], values[:, 0])
    np.testing.assert_array_equal(v_out[fresh[:, 1], 1], values[fresh[:, 1], 1])
    # Between its second conversion and its last, every row lies on the
    # line from one to the next: the ramp never reads flat.
    conv = np.flatnonzero(fresh[:, 1])
    for a, b in zip(conv[1:-1], conv[2:], strict=True):
        line = np.interp(t[a:b], [t[a], t[b]], [values[a, 1], values[b, 1]])
        np.testing.assert_allclose(v_out[a:b, 1], line)
        assert (read_out[a + 1 : b, 1] == t[a + 1 : b]).all()
    assert bridge.drawn == 7 * (conv.size - 2)


@pytest.mark.parametrize("cuts", [[1, 2, 3, 50, 51, 140], list(range(0, 400, 7)), [200]])
def test_blocks_of_any_size_give_the_same_rows(cuts: list[int]) -> None:
    rows = _mixed()
    _, whole = _bridge(rows, [])
    _, cut = _bridge(rows, cuts)
    for a, b in zip(whole, cut, strict=True):
        np.testing.assert_array_equal(a, b)


def test_rows_wait_for_the_next_conversion_only_where_a_channel_is_slow() -> None:
    t, values, valid, fresh, read_t = _mixed()
    bridge = SlowChannelBridge(n_channels=2, row_interval_s=ROW_S)
    given = 0
    for k in range(t.size):
        out = bridge.process(t[k : k + 1], values[k : k + 1], valid[k : k + 1],
                             fresh[k : k + 1], read_t[k : k + 1])
        given += out[0].size
        # Never more than a slow converter's interval behind.
        assert k + 1 - given <= 8
    # Both channels at 80 a second: every row given at once.
    fast = SlowChannelBridge(n_channels=2, row_interval_s=ROW_S)
    ones = np.ones((t.size, 2), dtype=bool)
    out = fast.process(t, values, ones, ones, read_t)
    assert out[0].size == t.size and fast.drawn == 0


def test_a_lifted_slow_channel_is_held_as_before_and_waited_for_no_longer_than_WAIT_S() -> None:
    rows = _mixed(lifted=(200, 320))
    t, values, valid, fresh, _ = rows
    bridge = SlowChannelBridge(n_channels=2, row_interval_s=ROW_S)
    out = bridge.process(*rows)
    last = np.flatnonzero(fresh[:200, 1])[-1]
    # The rows after its last conversion before the lift are given once
    # WAIT_S has passed, held (or invalid) as the hold left them.
    m = out[0].size
    assert m >= np.searchsorted(t, t[-1] - WAIT_S)  # the last rows wait for a conversion
    after = ((t > t[last]) & (t < t[last] + 0.3))[:m]
    np.testing.assert_array_equal(out[1][after, 1], values[:m][after, 1])
    np.testing.assert_array_equal(out[2], valid[:m])


def test_model_l_tower_11_whose_level_6_converts_10_times_a_second_among_boards_at_80(
    tmp_path: Path,
) -> None:
    # Cross-check model L (written apart from the detector), tower 11: three
    # boards at 10 readings a second among five at 80, all polled at 80 Hz.
    # Held over eight rows, each conversion of a knock's or a cube's ramp
    # on level 6 was a step of its own: 24 false landings in one game.
    found = detect_model_l(11, "game", 120.0, tmp_path)
    assert found["right"] >= found["n_truth"] - 1
    assert found["false"] <= 1
