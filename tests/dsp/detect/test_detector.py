import functools

import numpy as np
import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from dsp.detect.acoustic import DEFAULT_FLOOR_DB, AcousticLevelModel, loudness_profile
from dsp.detect.calibration import DetectorCalibration
from dsp.detect.cubes import CubeScale
from dsp.detect.detector import Detector
from dsp.detect.events import Closed, Landing, Lift, Removal
from dsp.detect.synthetic import SyntheticTower
from tests.dsp.detect.broken_tower import tower_with_a_lift


def _session(seed: int = 3) -> SyntheticTower:
    return tower_with_a_lift(seed)


def _detect(tower: SyntheticTower, piezo_cuts: list[int], load_cuts: list[int],
            calibration: DetectorCalibration | None = None) -> list:
    det = Detector(piezo_rate_hz=2000.0, load_rate_hz=80.0, calibration=calibration)
    p, load = tower.piezo_codes(), tower.load_counts()
    pe = [0, *sorted(set(piezo_cuts)), len(p)]
    le = [0, *sorted(set(load_cuts)), len(load)]
    # Blocks of both streams are fed in the order of their start times, as
    # they would arrive from a device (the detector waits for the slower one).
    blocks = [(a / 2000.0, "p", a, b) for a, b in zip(pe[:-1], pe[1:], strict=True)]
    blocks += [(float(tower.load_t_s[a]), "l", a, b) for a, b in zip(le[:-1], le[1:], strict=True)]
    out = []
    for _, kind, a, b in sorted(blocks):
        if kind == "p":
            out += det.feed_piezo(a / 2000.0, p[a:b])
        else:
            out += det.feed_load(tower.load_t_s[a:b], load[a:b], tower.load_valid[a:b])
    out += det.finish()
    return out


def test_every_synthetic_landing_is_found_on_its_level_in_time() -> None:
    tower = _session()
    events = _detect(tower, list(range(0, 60000, 2000)), list(range(0, 2400, 80)))
    landings = [e for e in events if isinstance(e, Landing)]
    assert [e.floor for e in landings] == [x.level for x in tower.landings]
    for e, x in zip(landings, tower.landings, strict=True):
        assert e.cubes == 1
        assert -0.2 < e.t - x.t_rest_s < 0.1
        assert 0.0 < e.t_decided - x.t_rest_s < 0.7
    lifts = [e for e in events if isinstance(e, Lift)]
    closes = [e for e in events if isinstance(e, Closed)]
    assert [(round(e.t, 2), e.exposed) for e in lifts] == [(24.0, 2)]
    assert [round(e.t, 2) for e in closes] == [27.0]


@functools.cache
def _reference(seed: int) -> list:
    return _detect(_session(seed), list(range(0, 60000, 2000)), list(range(0, 2400, 80)))


@settings(max_examples=4, deadline=None, phases=[Phase.explicit, Phase.reuse, Phase.generate])
@given(
    st.lists(st.integers(min_value=1, max_value=59999), min_size=20, max_size=60),
    st.lists(st.integers(min_value=1, max_value=2399), min_size=20, max_size=60),
)
def test_block_sizes_do_not_change_the_events(piezo_cuts: list[int], load_cuts: list[int]) -> None:
    # Any block sizes up to a second (a stream running more than a couple of
    # seconds ahead of the other is taken as the other being absent).
    tower = _session(5)
    reference = _reference(5)
    seconds_p, seconds_l = list(range(0, 60000, 2000)), list(range(0, 2400, 80))
    assert _detect(tower, piezo_cuts + seconds_p, load_cuts + seconds_l) == reference


def test_load_readings_out_of_time_order_are_dropped_and_change_nothing() -> None:
    # A damaged stream's stray time stamps and messages sent twice: the
    # readings not after every one fed before are counted and left out, and
    # the events are the clean stream's.
    tower = _session(5)
    det = Detector(piezo_rate_hz=2000.0, load_rate_hz=80.0)
    p, load, t, ok = tower.piezo_codes(), tower.load_counts(), tower.load_t_s, tower.load_valid
    out, inserted = [], 0
    for k, a in enumerate(range(0, len(load), 80)):
        out += det.feed_piezo(a / 80.0, p[a * 25 : (a + 80) * 25])
        rows = list(range(a, min(a + 80, len(load))))
        times = [float(t[r]) for r in rows]
        if k % 5 == 3:
            # the block before's last three rows sent again, then in the
            # middle a stray stamp 5 s back and a row sent twice
            rows = [a - 3, a - 2, a - 1, *rows[:40], rows[39], rows[39], *rows[40:]]
            times = [*(float(t[r]) for r in (a - 3, a - 2, a - 1)), *times[:40],
                     times[39] - 5.0, times[39], *times[40:]]
            inserted += 5
        out += det.feed_load(np.array(times), load[rows], ok[rows])
    out += det.finish()
    assert det.load_rows_dropped == inserted
    assert det.diagnostics().load_rows_dropped == inserted
    assert out == _detect(tower, list(range(0, 60000, 2000)), list(range(0, 2400, 80)))


def test_a_calibration_counts_cubes_from_the_first_landing() -> None:
    tower = _session(7)
    cube = tuple(float(tower.cube_counts * g) for g in tower.gain)
    cal = DetectorCalibration(counts_per_gram=cube, cube_mass_g=1.0)
    events = _detect(tower, list(range(0, 60000, 2000)), list(range(0, 2400, 80)), calibration=cal)
    first = [e for e in events if isinstance(e, Landing)][0]
    assert first.confidence > 0.9 and first.cubes == 1


def test_no_input_gives_no_events() -> None:
    det = Detector(piezo_rate_hz=2000.0, load_rate_hz=80.0)
    assert det.feed_load(np.zeros(0), np.zeros((0, 8)), np.zeros((0, 8), bool)) == []
    assert det.feed_piezo(0.0, np.zeros((0, 8), dtype=np.uint16)) == []
    assert det.finish() == []


def test_cube_scale_learns_size_and_sign_per_level() -> None:
    scale = CubeScale(n_levels=8)
    assert scale.count(2, 5000.0) == (1, 0.0)  # nothing known: one cube
    scale.learn_sign(2, 5000.0, cubes_added=True)
    scale.learn(2, 5000.0, 1)
    scale.learn_sign(0, -5200.0, cubes_added=True)  # level 0's cell reads the other way
    # One learnt level says nothing of another's cell (kits may mix cells):
    # a first step elsewhere is one cube, whatever its size.
    assert scale.count(0, -10100.0) == (1, 0.0)
    assert scale.count(2, -5000.0)[0] == -1
    assert scale.count(2, 10100.0) == (2, pytest.approx(0.02, abs=0.01))
    # Three levels that agree are a matched set: the others borrow their cube.
    scale.learn(3, 5100.0, 1)
    scale.learn(4, 4900.0, 1)
    assert scale.count(0, -10100.0) == (2, pytest.approx(0.02, abs=0.01))
    # A mixed set lends nothing.
    mixed = CubeScale(n_levels=8)
    for level, size in [(1, 5000.0), (2, 20000.0), (3, 60000.0)]:
        mixed.learn(level, size, 1)
    assert mixed.count(5, 40000.0) == (1, 0.0)
    assert mixed.count(3, 119000.0)[0] == 2
    # A first cube learnt from a double step is corrected by the next single
    # one measured on a still plate; a half-size step of a ringing plate (or
    # an impact spike) is no such evidence and is not a whole cube.
    fresh = CubeScale(n_levels=8)
    fresh.learn(1, 10000.0, 1)
    assert fresh.count(1, 5000.0) == (0, 0.5)
    assert fresh.unit(1) == 10000.0
    assert fresh.learnt_from_several(1, 5000.0) == 2
    fresh.forget(1)
    assert fresh.count(1, 5000.0) == (1, 0.0)
    fresh.learn(1, 5000.0, 1)
    assert fresh.unit(1) == 5000.0
    # A size learnt from fewer than three landings may be forgotten (the
    # fusion does, when it was a hand's touch); a calibrated one never is.
    touched = CubeScale(n_levels=8)
    touched.learn(2, 500.0, 1)
    assert touched.learnt_from_few(2) and not touched.learnt_from_few(3)
    touched.forget(2)
    assert touched.unit(2) is None and touched.count(2, 10000.0) == (1, 0.0)
    for _ in range(3):
        touched.learn(2, 10000.0, 1)
    assert not touched.learnt_from_few(2)
    assert not CubeScale(n_levels=8, cube_counts=(9000.0,) * 8).learnt_from_few(2)


def test_acoustic_model_learns_a_tower_whose_crosstalk_fools_the_prior() -> None:
    rng = np.random.default_rng(0)
    # This tower's channel gains differ by up to 16 dB (piezo discs and how
    # they are glued): the loudest channel is often not the level, so the
    # prior (pure crosstalk model) is poor. Beyond about 20 dB of spread the
    # channels more than 20 dB down (DEFAULT_FLOOR_DB) carry the level and
    # learning reaches only about 90 %.
    gains_db = 0.8 * np.array([0.0, 14.0, -6.0, 10.0, -8.0, 18.0, 0.0, -10.0])

    def impact(level: int) -> np.ndarray:
        db = -8.0 * np.abs(np.arange(8) - level) + gains_db + rng.normal(0, 2.0, 8)
        return 10 ** (db / 20) * 300

    model = AcousticLevelModel(n_levels=8)
    test = [(lv, impact(lv)) for lv in range(8) for _ in range(10)]
    before = np.mean([model.classify(p).level == lv for lv, p in test])
    for _ in range(8):
        for lv in range(8):
            model.learn(impact(lv), lv)
    after = np.mean([model.classify(p).level == lv for lv, p in test])
    assert before < 0.8 and after > 0.95
    assert model.n_learnt == 64
    assert loudness_profile(np.zeros(8)).tolist() == [DEFAULT_FLOOR_DB] * 8


@pytest.mark.parametrize("slice_s", [0.5, 2.0])
def test_one_stream_fed_ahead_of_the_other_changes_nothing(slice_s: float) -> None:
    # Piezo for a whole slice, then load for it (how the pipeline replays a
    # recording): the first slice's impacts must wait for the load cells,
    # whether load is present at an impact must not depend on the slicing,
    # and the cube size learnt from the first landings reaches the load
    # processors at the same stream times: the very same events.
    tower = _session(5)
    det = Detector(piezo_rate_hz=2000.0, load_rate_hz=80.0)
    p, load = tower.piezo_codes(), tower.load_counts()
    out = []
    for start in np.arange(0.0, 30.0, slice_s):
        a, b = int(start * 2000), int(min(start + slice_s, 30.0) * 2000)
        out += det.feed_piezo(a / 2000.0, p[a:b])
        sel = (tower.load_t_s >= start) & (tower.load_t_s < start + slice_s)
        out += det.feed_load(tower.load_t_s[sel], load[sel], tower.load_valid[sel])
    out += det.finish()
    assert out == _reference(5)


def test_load_history_tells_a_swing_from_a_change() -> None:
    from dsp.detect.loadhistory import LoadHistory

    history = LoadHistory(keep_s=5.0)
    t = np.arange(0, 4.0, 1 / 80)
    values = np.zeros((t.size, 2))
    ring = (t >= 2.0) & (t < 2.5)
    # Level 0 swings by 3 cubes (1000 counts each) and comes back: one in, one out.
    values[ring, 0] = 3000 * np.exp(-(t[ring] - 2.0) / 0.1) * np.cos(60 * t[ring])
    values[t >= 2.0, 1] = 1000.0  # level 1 gains a cube
    for a in range(0, t.size, 37):  # any block sizes
        history.add(t[a : a + 37], values[a : a + 37], np.ones((len(t[a : a + 37]), 2), bool))
    assert 2000 < history.swing(0, 2.0, 3.0) <= 3000
    assert abs(history.change(0, 2.0, 3.0, 0.1)) < 50
    assert history.change(1, 2.0, 3.0, 0.1) == pytest.approx(1000)
    assert np.isnan(history.swing(0, 9.0, 10.0))


def test_load_history_tells_how_far_apart_the_converter_reads() -> None:
    from dsp.detect.loadhistory import LoadHistory

    for rate in (10.0, 80.0):
        history = LoadHistory(keep_s=5.0)
        t = np.arange(0, 3.0, 1 / rate)
        history.add(t, np.zeros((t.size, 1)), np.ones((t.size, 1), bool))
        assert history.reading_interval_s(2.5) == pytest.approx(1 / rate)
    assert np.isnan(LoadHistory(keep_s=5.0).reading_interval_s(1.0))


def test_load_history_keeps_what_its_asker_may_still_ask_however_far_ahead_it_was_fed() -> None:
    from dsp.detect.loadhistory import LoadHistory

    t = np.arange(0, 20.0, 1 / 80)
    values = np.where(t >= 3.0, 1000.0, 0.0)[:, None]
    ok = np.ones((t.size, 1), bool)
    ahead = LoadHistory(keep_s=5.0)
    ahead.add(t, values, ok)  # all of it at once, 17 s ahead of a decision at 7 s
    step_by_step = LoadHistory(keep_s=5.0)
    for a in range(0, 7 * 80, 40):
        step_by_step.add(t[a : a + 40], values[a : a + 40], ok[a : a + 40])
    for history in (ahead, step_by_step):
        history.forget_before(7.0)
        assert history.change(0, 3.0, 7.0, 0.1) == pytest.approx(1000)
        history.forget_before(9.0)  # the clock moved on: 3.0 s is out of reach
        assert np.isnan(history.change(0, 3.0, 7.0, 0.1))


def test_load_history_reads_a_plate_still_ringing_hard_at_its_settled_load() -> None:
    from dsp.detect.loadhistory import LoadHistory

    # One cube came and one left (no net change), and the plate still rings
    # by ten cubes (1000 counts each) a quarter of a second later: the mean
    # of its last few readings is far off, the load it settles to is not.
    history = LoadHistory(keep_s=5.0)
    t = np.arange(0, 3.0, 1 / 80)
    values = np.zeros((t.size, 1))
    ring = t >= 2.0
    tau = t[ring] - 2.0
    values[ring, 0] = 20000 * np.exp(-tau / 0.4) * np.cos(2 * np.pi * 27 * tau + 0.3)
    history.add(t, values, np.ones((t.size, 1), bool))
    tail = (t > 2.25 - 0.1) & (t <= 2.25)
    assert abs(values[tail, 0].mean()) > 500
    assert abs(history.change(0, 2.0, 2.25, 0.1)) < 100


def test_plates_that_never_swing_do_not_break_the_knock_down_check() -> None:
    # A simulated plate with no ringing swings 0 counts on its own landings:
    # the check for a thrown cube that stopped above must simply not apply.
    from dsp.detect.fusion import Fusion
    from dsp.detect.grouping import Impact
    from dsp.detect.piezo import TimedImpact

    scale, acoustic = CubeScale(n_levels=8), AcousticLevelModel(n_levels=8)
    fusion = Fusion(n_levels=8, scale=scale, acoustic=acoustic)
    for level in range(8):
        fusion.scale.learn(level, 1000.0, 1)
        fusion._levels[level].landing_swings = [0.0, 0.0, 0.0]
        fusion.cubes_on[level] = 1
    t = np.arange(0, 3.0, 1 / 80)
    fusion.load_history.add(t, np.zeros((t.size, 8)), np.ones((t.size, 8), bool))
    peaks = np.where(np.arange(8) == 5, 300.0, 10.0)
    strike = Impact(frame=0, channels=(5,), peaks=peaks, floor=np.ones(8))
    drop = [TimedImpact(1.2, strike), TimedImpact(1.3, strike)]  # struck twice on level 5
    assert fusion._stopped_above(2, drop, 1.0, 2.0) is None


def test_a_cube_landing_in_the_first_second_is_found() -> None:
    # The load cells' noise is learnt from the stream's first second; a cube
    # thrown before that is over still lands on its level.
    tower = SyntheticTower(duration_s=8.0, seed=11)
    tower.throw(0.3, 4)
    tower.throw(4.0, 2)
    events = _detect(tower, list(range(0, 16000, 2000)), list(range(0, 640, 80)))
    landings = [e for e in events if isinstance(e, Landing)]
    assert [(e.floor, e.cubes) for e in landings] == [(4, 1), (2, 1)]
    assert landings[0].t < 1.0 <= landings[0].t_decided


@pytest.mark.parametrize("gain", [0.3, 2.2])
def test_a_cell_unlike_a_matched_looking_set_counts_its_own_cubes(gain: float) -> None:
    # Three cells agree by chance, so the others borrow their cube; level 6's
    # cell reads a cube as a third of it, or as twice it (a kit of mixed cells).
    tower = SyntheticTower(duration_s=16.0, seed=5)
    tower.gain[:] = 1.0
    tower.gain[6] = gain
    for t, level in [(2.0, 2), (4.0, 3), (6.0, 4), (10.0, 6), (12.5, 6)]:
        tower.throw(t, level)
    # Before that, a hand resting on level 5 a while presses it by as much, unheard.
    pressed = (tower.load_t_s >= 7.0) & (tower.load_t_s < 9.0)
    tower.load[pressed, 5] += 0.3 * tower.cube_counts
    events = _detect(tower, list(range(0, 32000, 2000)), list(range(0, 1280, 80)))
    landings = [e for e in events if isinstance(e, Landing)]
    assert [(e.floor, e.cubes) for e in landings] == [(2, 1), (3, 1), (4, 1), (6, 1), (6, 1)]
    for e, x in zip(landings, tower.landings, strict=True):
        assert abs(e.t - x.t_rest_s) < 0.2
    # The first cube on level 6 waited for the settled view; the next one,
    # measured against its own cube, did not.
    assert landings[4].t_decided - landings[4].t < 0.5
    assert [e for e in events if isinstance(e, Removal)] == []


def test_a_size_learnt_from_several_cubes_is_told_by_a_share_of_it() -> None:
    scale = CubeScale(n_levels=8)
    scale.learn(4, 30000.0, 1)  # three cubes that settled together, taken for one
    assert scale.settled_units()[4] == 15000.0  # so that a third of it still shows
    assert scale.learnt_from_several(4, 10400.0) == 3
    assert scale.learnt_from_several(4, 7400.0) == 4
    assert scale.learnt_from_several(4, 15500.0) == 2
    # Not drift (under a fifth), a loss, or a cube of the other kind (0.62-0.8 of one).
    assert scale.learnt_from_several(4, 4500.0) == 1
    assert scale.learnt_from_several(4, -10000.0) == 1
    assert scale.learnt_from_several(4, 18600.0) == 1
    assert scale.learnt_from_several(4, 21000.0) == 1
    # Two landings that agree are one cube's size; two that disagree are not yet.
    scale.learn(4, 29000.0, 1)
    assert scale.learnt_from_several(4, 10000.0) == 1
    assert scale.settled_units()[4] == 29500.0
    other = CubeScale(n_levels=8)
    other.learn(2, 20000.0, 1)
    other.learn(2, 27000.0, 1)
    assert other.learnt_from_several(2, 7800.0) == 3
    assert CubeScale(n_levels=8, cube_counts=(9000.0,) * 8).learnt_from_several(2, 3000.0) == 1


def test_a_size_trusted_on_steps_of_several_cubes_is_told_by_two_shares_in_a_row() -> None:
    # A quick series read 10 times a second: the plate's first three steps
    # held 3, 2 and 2 cubes, each counted as one; its size is trusted at 2.
    scale = CubeScale(n_levels=8)
    for cubes in (3, 2, 2):
        scale.learn(7, cubes * 7500.0, 1)
    assert not scale.size_unsure(7) and scale.unit(7) == 15000.0
    # One step of half of it (a hand, a jolt) tells nothing; a whole one in
    # between starts the count again.
    assert scale.learnt_from_several(7, 7550.0) == 1
    assert scale.learnt_from_several(7, 15100.0) == 1
    assert scale.learnt_from_several(7, 7450.0) == 1
    # Two single cubes in a row, each a clean half: the size was two cubes'.
    assert scale.learnt_from_several(7, 7520.0) == 2
    # Not 0.62-0.8 of it, as the lighter of two kinds of cube reads.
    for _ in range(3):
        assert scale.learnt_from_several(7, 0.7 * 15000.0) == 1


def test_cubes_after_a_first_step_of_three_are_counted_one_by_one() -> None:
    # In a quick series three cubes settle on level 4 at once, before it has
    # seen a cube of its own; each cube after is a third of the size learnt.
    tower = SyntheticTower(duration_s=20.0, seed=8)
    tower.gain[:] = np.linspace(0.6, 2.0, 8)  # mixed cells: no level lends another its size
    for t in (2.0, 2.02, 2.04):
        tower.throw(t, 4)
    for t, level in [(5.0, 1), (8.0, 4), (11.0, 6), (14.0, 4)]:
        tower.throw(t, level)
    events = _detect(tower, list(range(0, 40000, 2000)), list(range(0, 1600, 80)))
    landings = [e for e in events if isinstance(e, Landing)]
    # The two cubes the first step also held are told once the next cube
    # shows it, timed by that first step.
    assert [(e.floor, e.cubes) for e in landings] == [
        (4, 1), (1, 1), (4, 2), (4, 1), (6, 1), (4, 1)
    ]
    assert abs(landings[2].t - landings[0].t) < 0.1 and landings[2].t_decided > 8.0
    assert all(abs(e.t - x.t_rest_s) < 0.2 for e, x in zip(
        [landings[1], *landings[3:]], tower.landings[3:], strict=True))


def test_the_matched_set_stops_lending_a_level_whose_first_cube_did_not_fit() -> None:
    scale = CubeScale(n_levels=8)
    for level, size in [(1, 30000.0), (2, 31000.0), (3, 29000.0)]:
        scale.learn(level, size, 1)
    assert scale.borrowed(6) and scale.unit(6) == 30000.0
    # (Level 1's own size rests on one landing: halved for the settled view,
    # as it may be several cubes' that came together.)
    assert np.isnan(scale.settled_units()[6]) and scale.settled_units()[1] == 15000.0
    scale.refuse_pool(6)
    assert not scale.borrowed(6) and scale.unit(6) is None
    assert scale.count(6, 9000.0) == (1, 0.0)
    scale.learn(6, 9000.0, 1)
    # Now the set is mixed: it lends nothing to the levels still unseen.
    assert scale.unit(6) == 9000.0 and scale.unit(5) is None


@pytest.mark.parametrize("flat", [False, True])
def test_a_slow_converter_reads_shorter_windows_once_its_spikes_prove_sharp(flat: bool) -> None:
    # At 10 readings a second, impacts leave spikes on plate 0 (thrown cubes
    # passing it): in one reading and a little in two (a weighing filter) or
    # as four equal readings (a converter averaging its last four). Only
    # after sharp ones does the fast view decide a later landing from three
    # readings instead of five. The landing timed comes after the session's
    # first ones, which wait to see their cube stay (``slides.FIRST_HELD``).
    from dsp.detect.slides import FIRST_HELD

    tower = SyntheticTower(duration_s=30.0, seed=4, load_rate_hz=10.0)
    shape = np.array([1.0, 1.0, 1.0, 1.0]) if flat else np.array([1.0, 4.0, 1.0]) / 4.0
    for k in range(12):
        i = int((4.0 + 1.1 * k) * 10)
        tower.load[i : i + shape.size, 0] += 3000.0 * shape
    first_levels = [5, 6, 2, 4, 7][:FIRST_HELD]
    for k, level in enumerate(first_levels):
        tower.throw(16.6 + k * 3.0 / len(first_levels), level)
    landing = tower.throw(20.03, 3)
    det = Detector(piezo_rate_hz=2000.0, load_rate_hz=10.0)
    assert det.spikes is not None
    piezo, load, out = tower.piezo_codes(), tower.load_counts(), []
    for a in range(0, 30):  # a second of each stream at a time, as a device sends them
        out += det.feed_piezo(float(a), piezo[a * 2000 : (a + 1) * 2000])
        out += det.feed_load(tower.load_t_s[a * 10 : (a + 1) * 10], load[a * 10 : (a + 1) * 10],
                             tower.load_valid[a * 10 : (a + 1) * 10])
    out += det.finish()
    found = [e for e in out if isinstance(e, Landing)]
    assert [e.floor for e in found] == [*first_levels, 3]
    latency = found[-1].t_decided - landing.t_rest_s
    if flat:
        assert det.spikes.short_windows_since_s == np.inf
        assert latency > 0.45
    else:
        assert det.spikes.short_windows_since_s < 15.0
        assert latency < 0.4


def test_a_noisy_cell_shows_its_cubes_once_two_levels_agree_on_a_cube() -> None:
    # Level 5's cell is noisy: a cube is five sigma, under the settled view's
    # six. Two levels have learnt a cube of the same size (three lend it for
    # the count): that caps level 5's threshold, and its cubes show.
    tower = SyntheticTower(duration_s=20.0, seed=3)
    noise = np.random.default_rng(7).normal(0.0, 0.2 * tower.cube_counts, tower.load.shape[0])
    tower.load[:, 5] += noise
    for t, level in [(3.0, 1), (6.0, 7), (9.0, 5), (13.0, 5)]:
        tower.throw(t, level)
    events = _detect(tower, list(range(0, 40000, 2000)), list(range(0, 1600, 80)))
    landings = [(e.floor, e.cubes) for e in events if isinstance(e, Landing)]
    assert landings == [(1, 1), (7, 1), (5, 1), (5, 1)]
    scale = CubeScale(n_levels=8)
    scale.learn(1, 9000.0, 1)
    assert np.isnan(scale.cap_units()[5])  # one level says nothing of the others
    scale.learn(7, 9500.0, 1)
    assert np.isnan(scale.units()[5]) and scale.cap_units()[5] == 9250.0
    scale.learn(3, 20000.0, 1)  # a mixed set: nothing is lent
    assert np.isnan(scale.cap_units()[5])


def test_a_plate_whose_steps_held_several_cubes_counts_by_the_matched_cells_cube() -> None:
    # Quick series onto the top plate: it was still only between cubes two,
    # three or four apart, each step taken for one; five matched cells read
    # a cube as about 10,000 counts.
    scale = CubeScale(n_levels=8)
    for level, size in enumerate((9600.0, 10400.0, 9900.0, 10200.0, 9800.0)):
        scale.learn(level, size, 1)
    for cubes in (3, 2, 4, 3):
        scale.learn(7, cubes * 9900.0, 1)
    assert scale.unit(7) == pytest.approx(29700.0 / 3)
    assert scale.trusted_units()[7] == pytest.approx(29700.0 / 3)
    # A cell twice as sensitive whose steps agree (one cube each) keeps its own.
    scale.learn(6, 20000.0, 1)
    scale.learn(6, 21000.0, 1)
    assert scale.unit(6) == 20500.0
    # Nor where the cells do not agree (a mixed kit), or the sizes are given.
    mixed = CubeScale(n_levels=8)
    for level, size in enumerate((5000.0, 9000.0, 16000.0, 30000.0)):
        mixed.learn(level, size, 1)
    for cubes in (3, 2, 4):
        mixed.learn(7, cubes * 9000.0, 1)
    assert mixed.unit(7) == 27000.0
    given = CubeScale(n_levels=8, cube_counts=(10000.0,) * 7 + (30000.0,))
    for cubes in (3, 2, 4):
        given.learn(7, cubes * 10000.0, 1)
    assert given.unit(7) == 30000.0
