"""The load readings kept for second looks: when cubes left a plate."""

import numpy as np
import pytest

from dsp.detect.acoustic import AcousticLevelModel
from dsp.detect.cubes import CubeScale
from dsp.detect.events import Removal
from dsp.detect.fusion import Fusion
from dsp.detect.loadcell import LoadConnection, LoadStep
from dsp.detect.loadhistory import LoadHistory, Press
from dsp.detect.removals import taken_per_press
from tests.dsp.detect.test_fusion_arrivals import _T as ARRIVALS_T
from tests.dsp.detect.test_fusion_arrivals import UNIT as ARRIVALS_UNIT
from tests.dsp.detect.test_fusion_arrivals import _fusion as arrivals_fusion

UNIT = 1000.0
RATE = 80.0


def _history(load: np.ndarray, level: int = 4) -> LoadHistory:
    t = np.arange(load.size) / RATE
    values = np.zeros((t.size, 8))
    values[:, level] = load
    history = LoadHistory(keep_s=60.0)
    history.add(t, values, np.ones((t.size, 8), bool))
    return history


def _press_then_lift(press_at: float, left_at: float, end: float = 6.0) -> np.ndarray:
    """A plate holding a cube, a finger pressing it, then the cube lifted off."""
    t = np.arange(0.0, end, 1 / RATE)
    load = np.full(t.size, UNIT)
    load[(t >= press_at) & (t < left_at)] += 1.5 * UNIT
    load[t >= left_at] = 0.0
    return load


def test_cubes_left_when_the_load_passed_half_way_to_stay_not_when_the_press_began() -> None:
    history = _history(_press_then_lift(2.0, 2.6))
    left = history.crossed_at(4, 1.5, 5.0, UNIT, 0.0, stay_s=0.3)
    assert left == pytest.approx(2.6, abs=1 / RATE)


def test_a_plate_jolted_past_half_way_for_a_moment_is_not_where_they_left() -> None:
    load = _press_then_lift(2.0, 2.6)
    t = np.arange(load.size) / RATE
    # A hand bumps the module: the plate swings down past half-way and back.
    load[(t >= 1.7) & (t < 1.75)] = 0.0
    history = _history(load)
    left = history.crossed_at(4, 1.5, 5.5, UNIT, 0.0, stay_s=0.3)
    assert left == pytest.approx(2.6, abs=1 / RATE)
    # Not asked to stay: the bump's.
    assert history.crossed_at(4, 1.5, 5.5, UNIT, 0.0) == pytest.approx(1.7, abs=1 / RATE)


def test_no_crossing_no_time() -> None:
    history = _history(np.full(400, UNIT))
    assert history.crossed_at(4, 0.5, 4.0, UNIT, 0.0) is None
    assert history.crossed_at(4, 0.5, 4.0, UNIT, UNIT) is None
    assert LoadHistory(keep_s=60.0).crossed_at(4, 0.5, 4.0, UNIT, 0.0) is None


def test_a_removal_by_hand_is_timed_when_the_cube_left_not_when_the_finger_pressed() -> None:
    readings = np.zeros((ARRIVALS_T.size, 8))
    readings[:, 4] = _press_then_lift(2.0, 2.6, end=4.0) * (ARRIVALS_UNIT / UNIT)
    fusion = arrivals_fusion(readings)
    fusion.accounted[4] = ARRIVALS_UNIT
    fusion.cubes_on[4] = 1
    fusion.add_load([], [LoadConnection(k, False, 0.5, 0.6) for k in range(5, 8)], 0.6)
    fusion.advance(1.5)  # the lift is decided: level 4 open
    removal = LoadStep(level=4, t_before_s=1.98, t_settled_s=3.0, t_decided_s=3.2,
                       delta_counts=-ARRIVALS_UNIT, before_counts=ARRIVALS_UNIT, after_counts=0.0)
    out = [e for e in fusion.add_settled_step(removal) if isinstance(e, Removal)]
    assert len(out) == 1 and not out[0].knocked
    assert out[0].t == pytest.approx(2.6, abs=1 / RATE)


def _hands_wander(
    load: np.ndarray, since_s: float, amplitude: float, hz: float = 0.9
) -> np.ndarray:
    """Fingers resting on the plate after the grab: a slow wander past half a cube."""
    t = np.arange(load.size) / RATE
    out = load.copy()
    on = t >= since_s
    out[on] += amplitude * np.sin(2 * np.pi * hz * (t[on] - since_s))
    return out


def test_a_hard_press_let_go_is_when_the_cubes_left() -> None:
    # A finger pushes the cube (three cubes' weight), lifts it off at 2.6 s,
    # and the hands then rest on the plate, crossing half-way back and
    # forth: the first stay past half-way comes long after.
    load = _hands_wander(_press_then_lift(2.0, 2.6, end=8.0), 2.6, 0.7 * UNIT)
    load[(np.arange(load.size) / RATE >= 2.0) & (np.arange(load.size) / RATE < 2.6)] += 1.5 * UNIT
    history = _history(load)
    presses = history.presses(4, 1.5, 7.0, UNIT, 0.0, press=2.0)
    assert len(presses) == 1
    assert presses[0].began_s == pytest.approx(2.0, abs=1 / RATE)
    assert presses[0].let_go_s == pytest.approx(2.6, abs=1 / RATE)
    crossed = history.crossed_at(4, 1.5, 7.0, UNIT, 0.0, stay_s=0.3)
    assert crossed is not None and crossed > 2.8


def test_no_press_that_hard_no_release() -> None:
    history = _history(_press_then_lift(2.0, 2.6))  # a press of 1.5 cubes
    assert history.presses(4, 1.5, 5.0, UNIT, 0.0, press=2.0) == []
    [press] = history.presses(4, 1.5, 5.0, UNIT, 0.0, press=1.0)
    assert press.let_go_s == pytest.approx(2.6, abs=1 / RATE)
    # Pressed to the end: it never let go within the span.
    assert history.presses(4, 1.5, 2.5, UNIT, 0.0, press=1.0) == []


_LONG_T = np.arange(0.0, 8.0, 1 / RATE)


def _open_plate(readings: np.ndarray, cubes: int) -> Fusion:
    """A fusion whose plates read ``readings`` at ``_LONG_T``; level 4 open, holding ``cubes``."""
    scale, acoustic = CubeScale(n_levels=8), AcousticLevelModel(n_levels=8)
    fusion = Fusion(n_levels=8, scale=scale, acoustic=acoustic)
    for level in range(8):
        fusion.scale.learn(level, UNIT, 1)
    fusion.load_coverage.add(_LONG_T)
    fusion.load_history.add(_LONG_T, readings, np.ones((_LONG_T.size, 8), bool))
    fusion.accounted[:] = 0.0
    fusion.accounted[4] = cubes * UNIT
    fusion.cubes_on[4] = cubes
    fusion.add_load([], [LoadConnection(k, False, 0.5, 0.6) for k in range(5, 8)], 0.6)
    fusion.advance(1.5)  # the lift is decided: level 4 open
    return fusion


def _taken(left: list[float], cubes: int, wander: float = 0.0) -> np.ndarray:
    """Level 4 holding ``cubes``, each lifted off at its time in ``left`` (several: a scoop)."""
    readings = np.zeros((_LONG_T.size, 8))
    load = np.full(_LONG_T.size, cubes * UNIT)
    for at in left:
        load[_LONG_T >= at] -= UNIT
    readings[:, 4] = _hands_wander(load, 1.8, wander) if wander else load
    return readings


def _removals(fusion: Fusion, cubes: int) -> list[Removal]:
    step = LoadStep(level=4, t_before_s=1.9, t_settled_s=6.5, t_decided_s=6.7,
                    delta_counts=-cubes * UNIT, before_counts=cubes * UNIT, after_counts=0.0)
    return [e for e in fusion.add_settled_step(step) if isinstance(e, Removal)]


def test_cubes_taken_one_grab_at_a_time_are_one_removal_each() -> None:
    # The settled view saw one fall of three cubes (fingers stayed on the
    # plate between the grabs); each left at its own time.
    out = _removals(_open_plate(_taken([2.2, 3.6, 5.0], 3), 3), 3)
    assert [r.cubes for r in out] == [1, 1, 1]
    assert [r.t for r in out] == pytest.approx([2.2, 3.6, 5.0], abs=1 / RATE)
    assert not any(r.knocked for r in out)


def test_a_scoop_and_a_single_grab_are_two_removals() -> None:
    out = _removals(_open_plate(_taken([2.2, 2.2, 4.0], 3), 3), 3)
    assert [(r.cubes, round(r.t, 1)) for r in out] == [(2, 2.2), (1, 4.0)]


def test_cubes_that_left_together_are_one_removal() -> None:
    out = _removals(_open_plate(_taken([2.2, 2.2], 2), 2), 2)
    assert [(r.cubes, round(r.t, 1)) for r in out] == [(2, 2.2)]


def test_a_removal_under_wandering_hands_is_timed_when_the_press_let_go() -> None:
    readings = np.zeros((_LONG_T.size, 8))
    load = _press_then_lift(2.0, 2.6, end=8.0)
    load[(_LONG_T >= 2.0) & (_LONG_T < 2.6)] += 1.5 * UNIT  # three cubes' push in all
    readings[:, 4] = _hands_wander(load, 2.6, 0.7 * UNIT)
    out = _removals(_open_plate(readings, 1), 1)
    assert len(out) == 1 and out[0].t == pytest.approx(2.6, abs=1 / RATE)


def test_cubes_picked_in_one_reach_are_one_removal() -> None:
    # One hand lifting cubes 0.3 s apart: one removal, not one per cube.
    out = _removals(_open_plate(_taken([2.2, 2.5, 2.8], 3), 3), 3)
    assert [r.cubes for r in out] == [3]


def test_grabs_that_come_back_within_a_second_are_one_removal_each() -> None:
    # A hand back for the next cube 0.6 and 0.8 s later (cross-check models
    # X and Z take cubes out so): three grabs, not one reach.
    out = _removals(_open_plate(_taken([2.2, 2.8, 3.6], 3), 3), 3)
    assert [(r.cubes, round(r.t, 1)) for r in out] == [(1, 2.2), (1, 2.8), (1, 3.6)]


def _grabbed(left: list[float], cubes: int, push: float = 3.0) -> np.ndarray:
    """Level 4 holding ``cubes``; a finger pushes ``push`` cubes for 0.4 s before each leaves."""
    readings = _taken(left, cubes)
    for at in left:
        readings[(_LONG_T >= at - 0.4) & (_LONG_T < at), 4] += push * UNIT
    return readings


def test_each_push_let_go_is_a_grab_under_wandering_hands() -> None:
    readings = _grabbed([2.6, 4.1, 5.6], 3)
    # Hands resting on the level wander slowly by 0.4 of a cube.
    readings[:, 4] = _hands_wander(readings[:, 4], 1.9, 0.4 * UNIT, hz=0.2)
    out = _removals(_open_plate(readings, 3), 3)
    assert [r.cubes for r in out] == [1, 1, 1]
    assert [r.t for r in out] == pytest.approx([2.6, 4.1, 5.6], abs=2 / RATE)


def test_a_fall_that_settled_as_the_last_push_let_go_is_counted_to_where_it_settled() -> None:
    # The settled view found the plate still from the last let-go on: no
    # readings after it to count that grab by but the step's own level.
    fusion = _open_plate(_grabbed([2.6, 4.1, 5.6, 5.6], 4), 4)
    step = LoadStep(level=4, t_before_s=1.9, t_settled_s=5.62, t_decided_s=6.0,
                    delta_counts=-4 * UNIT, before_counts=4 * UNIT, after_counts=0.0)
    presses = [Press(2.2, 2.6), Press(3.7, 4.1), Press(5.2, 5.6)]
    taken = taken_per_press(fusion.load_history, step, 4, presses)
    assert [(round(t, 1), n) for t, n in taken] == [(2.6, 1), (4.1, 1), (5.6, 2)]


def test_a_push_that_took_two_cubes_counts_them() -> None:
    out = _removals(_open_plate(_grabbed([2.6, 2.6, 4.6], 3), 3), 3)
    assert [(r.cubes, round(r.t, 1)) for r in out] == [(2, 2.6), (1, 4.6)]


def test_hands_shaking_the_plate_split_nothing() -> None:
    # Cubes lifted 1.2 s apart while hands shake the plate by two cubes
    # either way: when it passed each cube's half-way says nothing.
    readings = _taken([2.2, 3.4, 4.6], 3)
    shake = 2.0 * UNIT * np.sin(2 * np.pi * 3.1 * _LONG_T)
    readings[(_LONG_T >= 2.0) & (_LONG_T < 5.0), 4] += shake[(_LONG_T >= 2.0) & (_LONG_T < 5.0)]
    out = _removals(_open_plate(readings, 3), 3)
    assert [r.cubes for r in out] == [3]


def test_no_more_cubes_leave_a_pile_than_lie_there() -> None:
    # Eight cubes counted on the plate; the scoop reads as nine (heavier ones).
    fusion = _open_plate(_taken([2.2] * 9, 9), 8)
    fusion.accounted[4] = 9 * UNIT
    assert [r.cubes for r in _removals(fusion, 9)] == [8]
    assert fusion.cubes_on[4] == 0


def test_a_removal_over_a_small_count_is_kept() -> None:
    # Two counted, three measured: as likely a landing missed on the plate.
    fusion = _open_plate(_taken([2.2] * 3, 3), 2)
    fusion.accounted[4] = 3 * UNIT
    assert [r.cubes for r in _removals(fusion, 3)] == [3]


def test_a_push_begun_before_the_plate_could_be_read_again_is_the_same_reach() -> None:
    # The finger came back 0.1 s after letting go and pushed for a second:
    # no load to read between, so the two pushes are one reach (two cubes).
    readings = _taken([2.6, 3.7, 5.6], 3)
    for began, let_go in ((2.2, 2.6), (2.7, 3.7), (5.2, 5.6)):
        readings[(_LONG_T >= began) & (_LONG_T < let_go), 4] += 3.0 * UNIT
    fusion = _open_plate(readings, 3)
    step = LoadStep(level=4, t_before_s=1.9, t_settled_s=6.5, t_decided_s=6.7,
                    delta_counts=-3 * UNIT, before_counts=3 * UNIT, after_counts=0.0)
    presses = [Press(2.2, 2.6), Press(2.7, 3.7), Press(5.2, 5.6)]
    taken = taken_per_press(fusion.load_history, step, 3, presses)
    assert [(round(t, 2), n) for t, n in taken] == [(3.7, 2), (5.6, 1)]


def test_changes_of_several_plates_are_each_plates_own_change() -> None:
    # Plates ringing about a new load (fitted), plates still (the tail's
    # mean), a plate with a gap in its readings, one that never reported.
    t = np.arange(0.0, 4.0, 1 / 80)
    rng = np.random.default_rng(5)
    values = rng.normal(0.0, 30.0, (t.size, 8))
    after = t >= 1.0
    for level, (cube, hz, tau) in enumerate([(9000, 11, 0.3), (-7000, 23, 0.15), (8000, 0, 0)]):
        ring = np.exp(-(t - 1.0) / tau) * np.cos(2 * np.pi * hz * (t - 1.0)) if tau else 0.0
        values[after, level] += cube * (1.0 + 2.0 * ring)[after] if tau else cube
    valid = np.ones(values.shape, bool)
    valid[(t > 1.2) & (t < 1.4), 3] = False
    valid[:, 7] = False
    history = LoadHistory(5.0)
    history.add(t, values, valid)
    levels = list(range(8))
    for t1 in (1.1, 1.3, 1.6, 3.0):
        together = history.changes(levels, 0.9, t1, 0.15)
        alone = [history.changes([k], 0.9, t1, 0.15)[0] for k in levels]
        np.testing.assert_array_equal(together, alone)
    assert np.isnan(history.changes([7], 0.9, 2.0, 0.15)[0])
    assert history.changes([0], 0.9, 3.0, 0.15)[0] == pytest.approx(9000, abs=60)
    # Still ringing by thousands of counts at 1.3 s, plate 0 is read at the
    # load its ring settles to, not at its last readings' mean.
    assert history.change(0, 0.9, 1.3, 0.15) == pytest.approx(9000, abs=300)


def test_the_load_a_plate_held_a_while_leaves_out_spikes_and_fast_ringing() -> None:
    t = np.arange(0.0, 2.0, 1 / 80)
    values = np.zeros((t.size, 8))
    values[(t >= 1.0) & (t < 1.3), 2] = -1000.0  # a cube lighter for 0.3 s
    values[(t >= 1.5) & (t < 1.53), 2] = 3000.0  # a strike's spike
    ring = t >= 1.0
    age = t[ring] - 1.0
    values[ring, 3] = 1800.0 * np.exp(-age / 0.3) * np.cos(2 * np.pi * 25 * age)  # 25 Hz
    history = LoadHistory(keep_s=10.0)
    history.add(t, values, np.ones(values.shape, bool))
    low, high = history.held_extent(2, 0.95, 1.9, 0.1)
    assert low == pytest.approx(-1000.0) and high == pytest.approx(0.0)
    low, high = history.held_extent(3, 0.95, 1.9, 0.1)
    assert abs(low) < 500.0 and abs(high) < 500.0
    # Held for one reading, the ringing and the spike count in full.
    assert history.held_extent(2, 0.95, 1.9, 0.0)[1] == pytest.approx(3000.0)
    assert np.isnan(history.held_extent(2, 0.0, 0.5, 0.1)[0])  # nothing before to measure from


def test_a_plate_ringing_as_one_mode_is_weighed_where_its_ring_settles() -> None:
    # Plate 0 settles 300 counts higher (a few hundredths of a cube) while
    # it still rings by thousands: the fits of its ringing put the change
    # there, and within a few counts of one another. A plate whose readings
    # hold a step (the next cube) or only noise gives no fit.
    t = np.arange(0.0, 3.0, 1 / 80)
    rng = np.random.default_rng(3)
    values = rng.normal(0.0, 20.0, (t.size, 8))
    after = t >= 1.0
    ring = np.exp(-(t - 1.0) / 0.15) * np.cos(2 * np.pi * 17 * (t - 1.0))
    values[after, 0] += 300.0 + 4000.0 * ring[after]
    values[after, 1] += 4000.0 * ring[after]
    values[t >= 1.25, 1] += 9000.0
    history = LoadHistory(5.0)
    history.add(t, values, np.ones(values.shape, bool))
    fitted = history.ring_change(0, 0.95, 1.3, 20.0)
    assert fitted is not None
    change, apart = fitted
    assert change == pytest.approx(300.0, abs=60.0) and apart < 60.0
    assert abs(history.change(0, 0.95, 1.3, 0.1) - 300.0) < 60.0
    assert history.spread(0, 1.2, 1.3) > 300.0  # the readings themselves: no measure
    assert history.ring_change(1, 0.95, 1.3, 20.0) is None
    assert history.ring_change(2, 0.95, 1.3, 20.0) is None
    assert history.ring_change(0, 0.95, 0.05, 20.0) is None  # too few readings yet


def test_readings_a_slow_converter_held_are_not_counted_as_its_own() -> None:
    # Level 2 converts 10 times a second among boards read at 80: its last
    # reading is held in between, for windows, but it made only one in 0.1 s.
    t = np.arange(0.0, 1.0, 1 / RATE)
    fresh = np.ones((t.size, 8), bool)
    fresh[:, 2] = np.arange(t.size) % 8 == 0
    history = LoadHistory(keep_s=0.5)
    history.add(t, np.zeros((t.size, 8)), np.ones((t.size, 8), bool), fresh)
    assert history.fresh_readings(2, 0.21, 0.69) == 4  # at 0.3, 0.4, 0.5, 0.6 s
    assert history.fresh_readings(3, 0.21, 0.69) == 39
    # Let go with the readings, a minute later.
    history.add(t + 60.0, np.zeros((t.size, 8)), np.ones((t.size, 8), bool), fresh)
    assert history.fresh_readings(2, 0.0, 1.0) == 0
    assert history.fresh_readings(2, 60.21, 60.69) == 4
