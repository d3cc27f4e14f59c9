"""LOAD rows polled faster than the converters convert, and stale readings among them."""

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dsp.detect.cadence import CADENCE_ROWS, LoadRegrid, cadence_rows, load_cadence
from dsp.detect.detector import Detector
from dsp.detect.events import Closed, Landing, Lift
from dsp.detect.loadcell import LoadChannelProcessor
from dsp.detect.loadfront import LoadFrontEnd
from dsp.detect.stale import HOLD_READINGS, SLOWEST_INTERVAL_S, StaleReadingHold
from dsp.detect.synthetic import SyntheticTower
from tests.dsp.detect.broken_tower import tower_with_a_lift
from tests.scripts import detect_model_l


def polled(tower: SyntheticTower, poll_hz: float, seed: int = 1
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The tower's load as a device polling at ``poll_hz`` sends it.

    Each channel's converter reads at the tower's rate with a phase of its
    own; a poll carries the newest reading of each channel that converted
    since the poll before, the others not fresh (valid 0, value 0).
    """
    rng = np.random.default_rng(seed)
    interval = 1.0 / tower.load_rate_hz
    conversions = tower.load_t_s[:, None] + rng.uniform(0.0, interval, 8)[None, :]
    polls = np.arange(tower.load_t_s[0] + interval, tower.load_t_s[-1], 1.0 / poll_hz)
    newest = np.stack([np.searchsorted(conversions[:, ch], polls, side="right") - 1
                       for ch in range(8)], axis=1)
    before = np.vstack([np.full((1, 8), -1), newest[:-1]])
    counts = tower.load_counts()
    fresh = (newest > before) & tower.load_valid[newest, np.arange(8)[None, :]]
    values = np.where(fresh, counts[newest, np.arange(8)[None, :]], 0)
    return polls, values.astype(np.int32), fresh


def _session() -> SyntheticTower:
    return tower_with_a_lift(11)


def _detect(tower: SyntheticTower, load: tuple[np.ndarray, np.ndarray, np.ndarray],
            block_s: float = 0.5, hello_rate_hz: float | None = None) -> list:
    det = Detector(piezo_rate_hz=2000.0, load_rate_hz=hello_rate_hz or tower.load_rate_hz)
    piezo = tower.piezo_codes()
    t_l, v_l, ok_l = load
    out: list = []
    step = round(block_s * 2000)
    for first in range(0, piezo.shape[0], step):
        a, b = first / 2000.0, (first + step) / 2000.0
        out += det.feed_piezo(a, piezo[first : first + step])
        sel = (t_l >= a) & (t_l < b)
        out += det.feed_load(t_l[sel], v_l[sel], ok_l[sel])
    return out + det.finish()


@pytest.mark.parametrize("factor", [1.25, 1.5, 2.0, 3.0])
def test_a_device_polling_faster_than_its_converters_gives_every_landing(factor: float) -> None:
    # One reading in five stale on every channel at 1.25 times the rate: no
    # window of five whole readings, and no landing at all before session 25.
    tower = _session()
    events = _detect(tower, polled(tower, factor * tower.load_rate_hz))
    landings = [e for e in events if isinstance(e, Landing)]
    assert [e.floor for e in landings] == [x.level for x in tower.landings]
    for e, x in zip(landings, tower.landings, strict=True):
        assert e.cubes == 1
        assert -0.2 < e.t - x.t_rest_s < 0.1
    assert [(round(e.t, 1), e.exposed) for e in events if isinstance(e, Lift)] == [(24.0, 2)]
    assert [round(e.t, 1) for e in events if isinstance(e, Closed)] == [27.0]


def _slow_session() -> SyntheticTower:
    """Throws 1.5-2.5 s apart onto random levels, HX711s at 10 readings a second."""
    tower = SyntheticTower(duration_s=30.0, seed=5, load_rate_hz=10.0)
    rng = np.random.default_rng(5)
    t = 3.0
    while t < 27.0:
        tower.throw(t, int(rng.integers(0, 8)))
        t += float(rng.uniform(1.5, 2.5))
    return tower


def test_converters_at_10_a_second_polled_on_an_80_hz_timer_give_every_landing() -> None:
    # HX711 boards strapped to 10 readings a second (their default) under a
    # firmware that sends LOAD at HELLO's 80 Hz: a fresh reading in every
    # eighth row. From 16 rows the cadence was unknown; the processors took
    # one conversion held over eight rows for a stable window: no landing.
    tower = _slow_session()
    load = polled(tower, 80.0)
    events = _detect(tower, load, hello_rate_hz=80.0)
    landings = [e for e in events if isinstance(e, Landing)]
    assert [e.floor for e in landings] == [x.level for x in tower.landings]
    for e, x in zip(landings, tower.landings, strict=True):
        assert e.cubes == 1
        assert -0.3 < e.t - x.t_rest_s < 0.3  # a reading is 0.1 s
    assert _detect(tower, load, 0.07, hello_rate_hz=80.0) == events


def test_model_l_whose_firmware_polls_10_a_second_converters_at_80_hz(tmp_path: Path) -> None:
    # Cross-check model L (written apart from the detector), tower 1: every
    # HX711 at 10 readings a second, settling over four conversions, polled
    # at HELLO's 80 Hz. Before the cadence waited for the converters to show
    # their interval, none of its landings was found.
    found = detect_model_l(1, "single", 30.0, tmp_path)
    assert found["n_truth"] >= 4 and found["right"] == found["n_truth"]
    assert found["false"] <= 1


def test_the_cadence_waits_for_most_converters_to_show_their_interval() -> None:
    fast = SyntheticTower(duration_s=3.0, seed=2)
    t, _, fresh = polled(fast, 100.0)
    assert cadence_rows(t[:15], fresh[:15]) is None
    assert cadence_rows(t, fresh) == CADENCE_ROWS
    slow = SyntheticTower(duration_s=4.0, seed=2, load_rate_hz=10.0)
    t, _, fresh = polled(slow, 80.0)
    shown = cadence_rows(t, fresh)
    assert shown is not None and 24 < shown <= 48  # five readings of most channels
    assert np.median(fresh[:shown].sum(axis=0)) == 5
    assert cadence_rows(t[: shown - 1], fresh[: shown - 1]) is None
    row_s, conversion_s = load_cadence(t[:shown], fresh[:shown])
    assert row_s == pytest.approx(0.0125, rel=0.02)
    assert conversion_s == pytest.approx(0.1, rel=0.1)
    # Channels that never send still leave it known after 2 s.
    quiet = np.zeros_like(fresh)
    assert t[cadence_rows(t, quiet) - 1] - t[0] == pytest.approx(2.0, abs=0.0125)


def test_blocks_of_any_size_give_the_same_events_on_a_fast_poll() -> None:
    tower = _session()
    load = polled(tower, 130.0)
    assert _detect(tower, load, 0.05) == _detect(tower, load, 1.0)


def test_the_cadence_tells_a_poll_from_its_converters() -> None:
    tower = SyntheticTower(duration_s=3.0, seed=2)
    t, _, fresh = polled(tower, 100.0)
    row_s, conversion_s = load_cadence(t[:16], fresh[:16])
    assert row_s == pytest.approx(0.01, rel=0.02)
    assert conversion_s == pytest.approx(0.0125, rel=0.1)
    row_s, conversion_s = load_cadence(tower.load_t_s[:16], tower.load_valid[:16])
    assert row_s == pytest.approx(conversion_s) == pytest.approx(0.0125)


def test_a_stale_reading_is_held_briefly_and_a_lift_is_left_a_gap() -> None:
    hold = StaleReadingHold(n_channels=2, reading_interval_s=0.0125)
    t = np.arange(12) * 0.01
    values = np.column_stack([np.arange(12.0) + 100.0, np.arange(12.0) + 200.0])
    fresh = np.ones((12, 2), dtype=bool)
    fresh[3, 0] = False  # stale for one poll
    fresh[6:, 1] = False  # lifted
    held_v, held_ok, _ = hold.process(t, np.where(fresh, values, 0.0), fresh)
    assert held_ok[3, 0] and held_v[3, 0] == 102.0
    # Held for HOLD_READINGS of the converter's interval from its last fresh one only.
    assert HOLD_READINGS * 0.0125 < 0.02
    assert held_ok[6, 1] and held_v[6, 1] == 205.0
    assert not held_ok[7:, 1].any() and (held_v[7:, 1] == 0).all()
    assert hold.held == 2


def test_a_converter_slower_than_the_others_is_held_over_its_own_interval() -> None:
    # Model K, tower 16: one HX711 with its RATE pin low converts 10 times a
    # second among seven at 80. Each reading of it holds until its next one
    # (it never leaves a gap in a window); lifted, it is a gap within 1.25
    # of its interval.
    hold = StaleReadingHold(n_channels=2, reading_interval_s=0.0125)
    t = np.arange(160) * 0.0125
    values = np.column_stack([np.full(160, 100.0), 200.0 + np.arange(160) // 8])
    fresh = np.ones((160, 2), dtype=bool)
    fresh[:, 1] = np.arange(160) % 8 == 0
    fresh[120:, 1] = False  # lifted at 1.5 s: its last reading was at 1.4 s
    held_v, held_ok, _ = hold.process(t, np.where(fresh, values, 0.0), fresh)
    assert held_ok[:, 0].all()
    # From its second reading on, when its interval is known.
    assert held_ok[8:122, 1].all() and not held_ok[123:, 1].any()
    assert not held_ok[2:8, 1].any()
    np.testing.assert_array_equal(held_v[8:120, 1], values[8:120, 1])
    assert SLOWEST_INTERVAL_S >= 0.1 / 0.96 and HOLD_READINGS * SLOWEST_INTERVAL_S < 0.25
    # A channel's first reading is held for the nominal interval only.
    hold = StaleReadingHold(n_channels=1, reading_interval_s=0.0125)
    _, ok, _ = hold.process(t[:8], np.full((8, 1), 5.0), (np.arange(8) == 0)[:, None])
    assert ok[:2, 0].all() and not ok[2:, 0].any()


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=299), max_size=12), st.integers(0, 2**16))
def test_stale_hold_and_regrid_give_one_answer_however_the_rows_are_cut(
    cuts: list[int], seed: int
) -> None:
    rng = np.random.default_rng(seed)
    t = np.cumsum(rng.uniform(0.006, 0.012, 300))
    fresh = rng.random((300, 3)) < 0.6
    values = rng.normal(0.0, 50.0, (300, 3))
    made = t[:, None] - rng.uniform(0.0, 0.005, (300, 3))
    edges = [0, *sorted(set(cuts)), 300]

    def run(pieces: list[tuple[int, int]]) -> tuple[np.ndarray, ...]:
        hold = StaleReadingHold(n_channels=3, reading_interval_s=0.0125)
        grid = LoadRegrid(n_channels=3, interval_s=0.0125)
        parts = []
        for a, b in pieces:
            gt, gv, gok, gread = grid.process(t[a:b], values[a:b], fresh[a:b], made[a:b])
            hv, hok, hread = hold.process(t[a:b], values[a:b], fresh[a:b], made[a:b])
            parts.append((gt, gv, gok, gread, hv, hok, hread))
        return tuple(np.concatenate([p[i] for p in parts]) for i in range(7))

    whole = run([(0, 300)])
    cut = run(list(zip(edges[:-1], edges[1:], strict=True)))
    for a, b in zip(whole, cut, strict=True):
        np.testing.assert_array_equal(a, b)


def test_the_grid_gives_each_conversion_once_in_its_own_row() -> None:
    tower = SyntheticTower(duration_s=4.0, seed=5)
    t, values, fresh = polled(tower, 2.0 * tower.load_rate_hz)
    grid = LoadRegrid(n_channels=8, interval_s=1.0 / tower.load_rate_hz)
    gt, gv, gok, _ = grid.process(t, values, fresh)
    assert np.diff(gt) == pytest.approx(np.full(gt.size - 1, 0.0125))
    # Every conversion polled is given once, in order, on its channel (but
    # the first poll's, which may be two conversions on, and the last, after
    # the last row).
    for ch in range(8):
        given, sent = gv[gok[:, ch], ch], values[fresh[:, ch], ch]
        assert any(np.array_equal(given, sent[i : i + given.size]) for i in (0, 1))


def test_a_channel_polled_stale_twice_in_a_row_is_not_taken_for_lifted() -> None:
    # Converters at 10 a second, polled at 25: up to two stale rows in a
    # row, as many as a lift takes to show at 10 rows a second.
    cell = LoadChannelProcessor(n_channels=1, sample_rate_hz=10.0)
    t = np.arange(100) * 0.04
    fresh = (np.floor(t / 0.1) != np.floor((t - 0.04) / 0.1))[:, None]
    fresh[0] = True
    assert np.convolve(~fresh[:, 0], [1, 1], "valid").max() == 2
    values = np.where(fresh, 1000.0, 0.0)
    result = cell.process(t_s=t, values=values, valid=fresh)
    assert result.connections == [] and cell.connected.all()
    # Lifted: nothing fresh for longer than two readings' time.
    later = 4.0 + np.arange(1, 11) * 0.04
    result = cell.process(t_s=later, values=np.zeros((10, 1)), valid=np.zeros((10, 1), bool))
    (gone,) = result.connections
    # From the first row it sent nothing fresh (a stale one, or the first lifted).
    assert not gone.connected and t[-1] <= gone.t_s <= later[0]
    assert gone.t_decided_s - t[fresh[:, 0]][-1] >= 0.15


@pytest.mark.parametrize(("factor", "regrid", "rate_hz"), [
    (1.0, False, 80.0), (1.25, False, 100.0), (2.0, True, 80.0),
])
def test_the_front_end_builds_for_the_rate_its_rows_come_at(
    factor: float, regrid: bool, rate_hz: float
) -> None:
    tower = SyntheticTower(duration_s=3.0, seed=3)
    t, values, fresh = (
        polled(tower, factor * tower.load_rate_hz) if factor > 1.0
        else (tower.load_t_s, tower.load_counts(), tower.load_valid)
    )
    front = LoadFrontEnd(n_channels=8, hello_rate_hz=80.0)
    assert front.process(t[:10], values[:10], fresh[:10]) is None and front.measuring
    rows = front.process(t[10:], values[10:], fresh[10:])
    assert rows is not None and not front.measuring
    assert (front.regrid is not None) == regrid
    assert front.rate_hz == pytest.approx(rate_hz, rel=0.03)
    # Every reading the processors get is whole: fresh, or held a moment.
    assert rows.valid[1:].all()


def test_a_stream_shorter_than_its_cadence_is_given_at_its_end() -> None:
    tower = SyntheticTower(duration_s=1.0, seed=3)
    front = LoadFrontEnd(n_channels=8, hello_rate_hz=80.0)
    assert front.process(tower.load_t_s[:5], tower.load_counts()[:5], tower.load_valid[:5]) is None
    rows = front.flush()
    assert rows is not None and rows.t_s.size == 5 and front.rate_hz == 80.0
    assert front.flush() is None


def test_a_converter_slower_than_the_stream_is_no_module_lifted_at_each_reading() -> None:
    # One HX711 at 10 readings a second (its interval 0.105 s: its oscillator
    # a little slow) in a stream polled at 80 Hz: fresh in every eighth or
    # ninth row, longer apart than the 100 ms that tell a lifted module. It
    # was taken off and put back at every conversion (cross-check model L,
    # tower 9); lifted for real, it is off within two of its intervals.
    proc = LoadChannelProcessor(n_channels=2, sample_rate_hz=80.0)
    t = np.arange(1, 1201) / 80.0
    conversions = np.arange(0.0, 15.0, 0.105)
    newest = np.searchsorted(conversions, t, side="right") - 1
    fresh = np.ones((t.size, 2), dtype=bool)
    fresh[:, 1] = np.diff(np.concatenate([[-1], newest])) > 0
    fresh[(t >= 11.0) & (t < 13.0), :] = False  # both modules lifted for 2 s
    rng = np.random.default_rng(3)
    values = np.where(fresh, 1e5 + rng.normal(0.0, 30.0, (t.size, 2)), 0.0)
    hold = StaleReadingHold(n_channels=2, reading_interval_s=1 / 80.0)
    connections = []
    for a in range(0, t.size, 37):
        held_v, held_ok, _ = hold.process(t[a : a + 37], values[a : a + 37], fresh[a : a + 37])
        connections += proc.process(t_s=t[a : a + 37], values=held_v, valid=held_ok,
                                    fresh=fresh[a : a + 37]).connections
    assert sorted((c.connected, c.level) for c in connections) == [
        (False, 0), (False, 1), (True, 0), (True, 1)
    ]
    for c in connections:
        assert abs(c.t_s - (13.0 if c.connected else 11.0)) <= 0.105 + 1 / 80.0
    slow_off = next(c for c in connections if c.level == 1 and not c.connected)
    last_fresh = t[fresh[:, 1] & (t < 11.0)][-1]
    assert slow_off.t_decided_s - last_fresh <= 2.0 * 0.105 + 1 / 80.0
