"""The top module lifted alone: level 7 opened, which no load channel shows."""

from dataclasses import replace

import numpy as np
import pytest

from dsp.detect.acoustic import AcousticLevelModel
from dsp.detect.cubes import CubeScale
from dsp.detect.events import Closed, Landing, Lift, Removal
from dsp.detect.fusion import Fusion
from dsp.detect.grouping import Impact
from dsp.detect.loadcell import LoadConnection, LoadStep
from dsp.detect.piezo import TimedImpact
from dsp.detect.topmodule import (
    LIFT_REACH_S,
    SET_DOWN_REACH_S,
    lifted_at,
    lifted_with_a_knock,
    set_down_at,
    taken_by_hand,
)

UNIT = 1000.0


def test_cubes_leave_the_top_plate_by_hand_when_nothing_is_heard_falling() -> None:
    # A finger's tap on the top plate as it takes the cube: by hand.
    assert taken_by_hand([(9.9, 7), (12.0, 7)], 10.0, 7, until_s=11.0)
    # The knocked cube heard striking level 6: knocked down.
    assert not taken_by_hand([(9.9, 7), (10.05, 6)], 10.0, 7, until_s=11.0)
    # Heard below more than a second after: no knocked cube (the module set
    # back down, or a throw since), whenever it is judged.
    assert taken_by_hand([(12.4, 7), (12.45, 5)], 10.0, 7, until_s=12.5)
    assert taken_by_hand([(12.4, 7), (12.45, 5)], 10.0, 7, until_s=11.2)
    assert not taken_by_hand([(10.4, 7), (10.45, 5)], 10.0, 7, until_s=12.5)


def test_the_top_module_was_lifted_when_the_hands_began_to_be_heard() -> None:
    # Grip, lift, reach in: sounds under 3.5 s apart before the removal,
    # six seconds back at most.
    assert lifted_at([4.0, 7.9, 9.0, 10.4], 11.0) == pytest.approx(7.9)
    assert lifted_at([5.2, 9.0, 10.4], 11.0) == pytest.approx(9.0)
    # Nothing heard: the removal's own time.
    assert lifted_at([], 11.0) == 11.0
    assert lifted_at([3.0], 11.0) == 11.0


def _fusion_with_top_cube() -> Fusion:
    fusion = Fusion(n_levels=8, first_landings_held=0, scale=CubeScale(n_levels=8),
                    acoustic=AcousticLevelModel(n_levels=8))
    for level in range(8):
        fusion.scale.learn(level, UNIT, 1)
        fusion.scale.learn_sign(level, UNIT, cubes_added=True)
    t = np.arange(0.0, 20.0, 1 / 80)
    fusion.load_coverage.add(t)
    fusion.load_history.add(t, np.zeros((t.size, 8)), np.ones((t.size, 8), bool))
    fusion.accounted[:] = UNIT
    fusion.cubes_on[7] = 2
    fusion._levels[7].landings = 5
    return fusion


def _strike(t_s: float, level: int, *, everywhere: bool = False) -> TimedImpact:
    peaks = np.where(np.arange(8) == level, 300.0, 30.0)
    channels = tuple(range(8)) if everywhere else (level,)
    return TimedImpact(t_s, Impact(frame=0, channels=channels, peaks=peaks, floor=np.ones(8)))


def _removal_from_top(t_before: float, before: float = UNIT) -> LoadStep:
    return LoadStep(level=7, t_before_s=t_before, t_settled_s=t_before + 0.3,
                    t_decided_s=t_before + 0.6, delta_counts=-UNIT, before_counts=before,
                    after_counts=before - UNIT)


def test_a_cube_taken_from_the_top_plate_unheard_below_opens_level_seven() -> None:
    fusion = _fusion_with_top_cube()
    fusion.add_impacts([_strike(8.0, 7), _strike(9.9, 7)])  # the lift's bump, a finger
    out = fusion.add_settled_step(_removal_from_top(10.0))
    assert [type(e) for e in out] == [Lift, Removal]
    lift, removal = out
    assert isinstance(lift, Lift) and lift.exposed == 7 and lift.t == pytest.approx(8.0)
    assert isinstance(removal, Removal) and not removal.knocked and removal.floor == 7
    # The next cube taken while it is off: by hand too, no second lift.
    out = fusion.add_settled_step(_removal_from_top(11.5, before=0.0))
    assert [(type(e), getattr(e, "knocked", None)) for e in out] == [(Removal, False)]
    # Set back down with a thump heard through the tower: closed.
    out = fusion.add_impacts([_strike(13.0, 7, everywhere=True)], known_s=13.02)
    assert [(type(e), e.t) for e in out] == [(Closed, 13.0)]
    fusion.cubes_on[7] = 1
    # Closed again, a cube leaving the top plate heard falling is knocked down.
    fusion.add_impacts([_strike(15.9, 7), _strike(16.05, 6)])
    out = fusion.add_settled_step(_removal_from_top(16.0, before=-UNIT))
    assert [(type(e), getattr(e, "knocked", None)) for e in out] == [(Removal, True)]


def _rumble(t_s: float, loudest: int) -> TimedImpact:
    # Hands reaching in, or talk: every disc about as loud (a dB or two apart).
    peaks = np.where(np.arange(8) == loudest, 120.0, 100.0)
    return TimedImpact(t_s, Impact(frame=0, channels=tuple(range(8)), peaks=peaks,
                                   floor=np.ones(8)))


def test_hands_rumbling_below_the_top_plate_as_its_cube_is_taken_are_no_knocked_cube() -> None:
    # Loudest on level 4, but as loud on every disc: no cube's fall.
    fusion = _fusion_with_top_cube()
    fusion.add_impacts([_strike(8.0, 7)] + [_rumble(9.8 + 0.05 * i, 4) for i in range(8)])
    out = fusion.add_settled_step(_removal_from_top(10.0))
    assert [type(e) for e in out] == [Lift, Removal]
    assert isinstance(out[1], Removal) and not out[1].knocked


def test_a_top_lift_found_only_after_the_module_was_set_back_is_closed_then() -> None:
    # The settled view judges the cube gone only once the hands have let go
    # of the tower, after the module was set back with a thump.
    fusion = _fusion_with_top_cube()
    fusion.add_impacts([_strike(8.0, 7), _strike(9.9, 7), _strike(11.6, 6)])
    step = replace(_removal_from_top(10.0), t_decided_s=12.0)
    out = fusion.add_settled_step(step)
    assert [type(e) for e in out] == [Lift, Closed, Removal]
    assert out[1].t == pytest.approx(11.6)
    removal = out[2]
    assert isinstance(removal, Removal) and not removal.knocked
    # Closed: the next cube heard landing below counts.
    assert fusion.openings.exposed is None


def test_a_cube_falling_past_the_top_plate_shows_it_back_on() -> None:
    fusion = _fusion_with_top_cube()
    fusion.add_settled_step(_removal_from_top(10.0))
    out = fusion.add_impacts([_strike(14.0, 7), _strike(14.05, 5)], known_s=14.1)
    assert [(type(e), e.t) for e in out] == [(Closed, 14.05)]


def test_a_top_module_set_back_unheard_is_closed_a_reach_after_the_hands_left() -> None:
    fusion = _fusion_with_top_cube()
    fusion.add_settled_step(_removal_from_top(10.0))
    left = fusion.openings.top_handled_t
    # The next throw, long after the hands left: the module went back unheard.
    out = fusion.add_impacts([_strike(18.0, 7), _strike(18.05, 5)], known_s=18.1)
    assert [(type(e), e.t) for e in out] == [(Closed, pytest.approx(left + SET_DOWN_REACH_S))]


def test_a_set_down_is_timed_by_its_knock_or_by_the_strike_that_showed_it() -> None:
    # Its knock on the top plate, if one was heard.
    assert set_down_at([11.0], 10.0, 18.0, by_a_cube=True) == pytest.approx(11.0)
    # Heard soon after the hands left, the strike may be the set-down itself.
    assert set_down_at([], 10.0, 13.0, by_a_cube=True) == pytest.approx(13.0)
    # The hands' sound: then.
    assert set_down_at([], 10.0, 18.0) == pytest.approx(18.0)
    # A cube long after: a reach after the hands left.
    assert set_down_at([], 10.0, 18.0, by_a_cube=True) == pytest.approx(10.0 + SET_DOWN_REACH_S)
    # Hands never seen on it: nothing to reach from.
    assert set_down_at([], float("-inf"), 18.0, by_a_cube=True) == pytest.approx(18.0)


def test_no_top_module_is_lifted_from_a_plate_believed_empty_or_just_landed_on() -> None:
    fusion = _fusion_with_top_cube()
    fusion.cubes_on[7] = 0
    assert [type(e) for e in fusion.add_settled_step(_removal_from_top(10.0))] == [Removal]
    fusion = _fusion_with_top_cube()
    fusion._levels[3].landed_t = 9.2  # a throw a moment before: no hand in the tower
    assert [type(e) for e in fusion.add_settled_step(_removal_from_top(10.0))] == [Removal]


def test_cubes_that_left_an_open_level_are_taken_by_hand_though_decided_after_the_close() -> None:
    fusion = _fusion_with_top_cube()
    fusion.cubes_on[4] = 1
    fusion.add_load([], [LoadConnection(k, False, 2.0, 2.1) for k in range(5, 8)], 2.1)
    fusion.advance(3.0)  # the lift is decided: level 4 open
    fusion.add_load([], [LoadConnection(k, True, 6.0, 6.0) for k in range(5, 8)], 6.0)
    removal = LoadStep(level=4, t_before_s=5.0, t_settled_s=6.2, t_decided_s=6.5,
                       delta_counts=-UNIT, before_counts=UNIT, after_counts=0.0)
    out = fusion.add_settled_step(removal)
    assert [(type(e), getattr(e, "knocked", None)) for e in out] == [(Removal, False)]


def _scoop_from_top(cubes: int) -> LoadStep:
    return LoadStep(level=7, t_before_s=10.0, t_settled_s=10.5, t_decided_s=10.8,
                    delta_counts=-cubes * UNIT, before_counts=cubes * UNIT, after_counts=0.0)


@pytest.mark.parametrize(("held", "scooped", "lifted"), [
    (16, 18, True),   # a long game's pile, read two cubes over the landings counted
    (9, 10, True),
    (2, 3, True),     # a cube over
    (2, 4, False),    # twice what it held: no cubes' leaving
    (6, 9, False),
])
def test_a_scoop_from_the_top_pile_read_a_cube_or_two_over_its_count_still_opens_level_seven(
    held: int, scooped: int, lifted: bool
) -> None:
    fusion = _fusion_with_top_cube()
    fusion.cubes_on[7] = held
    fusion.accounted[7] = scooped * UNIT
    fusion.add_impacts([_strike(8.0, 7)])
    out = fusion.add_settled_step(_scoop_from_top(scooped))
    assert (Lift in [type(e) for e in out]) == lifted


def _rustle(t_s: float, level: int) -> TimedImpact:
    """Hands on the tower: heard about alike on every plate, a little louder on ``level``."""
    peaks = np.full(8, 20.0)
    peaks[level] = 40.0
    return TimedImpact(t_s, Impact(frame=0, channels=(level,), peaks=peaks, floor=np.ones(8)))


def test_hands_heard_below_the_top_plate_close_it_as_handling_a_cube_past_it_does_not() -> None:
    gain = LoadStep(level=2, t_before_s=13.2, t_settled_s=13.5, t_decided_s=13.8,
                    delta_counts=UNIT, before_counts=0.0, after_counts=UNIT)
    for closing, landing_counts in ((_rustle(13.0, 2), False), (_strike(13.0, 2), True)):
        fusion = _fusion_with_top_cube()
        fusion.accounted[2] = 0.0
        fusion.add_settled_step(_removal_from_top(10.0))
        assert fusion.openings.open
        out = fusion.add_impacts([closing], known_s=13.02)
        assert [(type(e), e.t) for e in out] == [(Closed, 13.0)]
        # A plate that gained a cube's weight just after: the hands letting go.
        landed = [e for e in fusion.add_settled_step(gain) if isinstance(e, Landing)]
        assert bool(landed) == landing_counts


def test_a_top_module_shown_back_on_by_a_later_throw_was_set_down_with_its_own_strike() -> None:
    # Set down on the top plate at 15.0 (a strike standing out there, the
    # hands done taking cubes), shown closed only by a cube thrown at 20.0.
    fusion = _fusion_with_top_cube()
    fusion.add_impacts([_strike(8.0, 7), _strike(9.9, 7)])
    assert [type(e) for e in fusion.add_settled_step(_removal_from_top(10.0))] == [Lift, Removal]
    # A finger on the top plate as the hand leaves (under half a second
    # after the grab) is not the module.
    fusion.add_impacts([_strike(10.5, 7), _strike(15.0, 7)])
    out = fusion.add_impacts([_strike(20.0, 7), _strike(20.06, 5)], known_s=20.1)
    assert [(type(e), e.t) for e in out] == [(Closed, 15.0)]


def test_a_top_lift_found_late_is_closed_at_the_set_down_after_the_last_grab() -> None:
    # The settled view finds the cube gone only after a throw showed the
    # tower closed; the module was set down at 13.0, after the grab.
    fusion = _fusion_with_top_cube()
    fusion.add_impacts([_strike(8.0, 7), _strike(9.9, 7), _strike(13.0, 7)])
    fusion.add_impacts([_strike(15.0, 7), _strike(15.05, 6)])
    step = replace(_removal_from_top(10.0), t_decided_s=15.5)
    out = fusion.add_settled_step(step)
    assert [type(e) for e in out] == [Lift, Closed, Removal]
    assert out[1].t == pytest.approx(13.0)


def test_the_top_module_came_off_with_its_knock_on_the_top_plate() -> None:
    # Knocks on the top plate after the last landing (and close): the first.
    assert lifted_with_a_knock([2.0, 5.0, 9.0], 9.0, 3.0, 10.0) == pytest.approx(5.0)
    # Not one from before the quiet began, nor more than 10 s before the cubes left.
    assert lifted_with_a_knock([2.0, 3.2, 9.0], 9.0, 3.0, 10.0) == pytest.approx(9.0)
    assert lifted_with_a_knock([5.0, 16.0], 16.5, 0.0, 17.0) == pytest.approx(16.0)
    # None: when the hands were first heard.
    assert lifted_with_a_knock([], 9.0, 3.0, 10.0) == pytest.approx(9.0)


def test_a_top_lift_heard_by_nothing_came_a_reach_before_the_cubes_left() -> None:
    # Neither a knock nor the hands: the module came off a reach before.
    assert lifted_with_a_knock([], 10.0, 3.0, 10.0) == pytest.approx(10.0 - LIFT_REACH_S)
    # Not before the last landing (a cube thrown into a closed tower).
    assert lifted_with_a_knock([], 10.0, 8.9, 10.0) == pytest.approx(9.4)
    fusion = _fusion_with_top_cube()
    out = fusion.add_settled_step(_removal_from_top(10.0))
    assert [type(e) for e in out] == [Lift, Removal]
    assert out[0].t == pytest.approx(out[1].t - LIFT_REACH_S)
    # The players' own reach, where lifts the channels showed tell it.
    assert lifted_with_a_knock([], 10.0, 3.0, 10.0, reach_s=3.5) == pytest.approx(6.5)


def test_a_top_lift_is_timed_by_the_module_knocking_the_plate_before_the_hands() -> None:
    # Lifted at 3.0 (a knock standing out on the top plate), the hands heard
    # at 7.9 and 9.9, more than 3.5 s later: the lift was at the knock.
    fusion = _fusion_with_top_cube()
    fusion.add_impacts([_strike(3.0, 7), _strike(7.9, 7), _strike(9.9, 7)])
    out = fusion.add_settled_step(_removal_from_top(10.0))
    assert [type(e) for e in out] == [Lift, Removal]
    assert out[0].t == pytest.approx(3.0)


def test_a_cube_landing_on_the_top_plate_shows_the_module_set_back_at_its_knock() -> None:
    # The module set down at 13.0 (its knock on the top plate); the next
    # throw rests on that plate at 15.1: nobody throws while it is off, and
    # cubes are taken out, not put in, so the tower was closed at the knock.
    fusion = _fusion_with_top_cube()
    fusion.add_impacts([_strike(8.0, 7), _strike(9.9, 7)])
    assert [type(e) for e in fusion.add_settled_step(_removal_from_top(10.0))] == [Lift, Removal]
    fusion.add_impacts([_strike(13.0, 7), _strike(15.0, 7), _strike(15.06, 7)])
    landing = LoadStep(level=7, t_before_s=14.95, t_settled_s=15.3, t_decided_s=15.6,
                       delta_counts=UNIT, before_counts=0.0, after_counts=UNIT)
    out = fusion.add_settled_step(landing)
    assert [type(e) for e in out] == [Closed, Landing]
    assert out[0].t == pytest.approx(13.0) and out[1].floor == 7
    # Set down without a sound: a cube that bounced on the top plate soon
    # after the hands left shows the module on by its first strike (model
    # Q's hands set it down silently)...
    fusion = _fusion_with_top_cube()
    fusion.add_impacts([_strike(8.0, 7), _strike(9.9, 7)])
    fusion.add_settled_step(_removal_from_top(10.0))
    fusion.add_impacts([_strike(14.0, 7), _strike(14.06, 7)])
    out = fusion.add_settled_step(replace(landing, t_before_s=13.95, t_settled_s=14.3,
                                          t_decided_s=14.6))
    assert [type(e) for e in out] == [Closed, Landing]
    assert out[0].t == pytest.approx(14.0) and out[1].floor == 7
    # ... and one long after it, a reach after the hands left.
    fusion = _fusion_with_top_cube()
    fusion.add_impacts([_strike(8.0, 7), _strike(9.9, 7)])
    fusion.add_settled_step(_removal_from_top(10.0))
    left = fusion.openings.top_handled_t
    fusion.add_impacts([_strike(15.0, 7), _strike(15.06, 7)])
    out = fusion.add_settled_step(landing)
    assert [type(e) for e in out] == [Closed, Landing]
    assert out[0].t == pytest.approx(left + SET_DOWN_REACH_S) and out[1].floor == 7
    # One tap and a gain on the open top plate: a finger's, the module still off.
    fusion = _fusion_with_top_cube()
    fusion.add_impacts([_strike(8.0, 7), _strike(9.9, 7)])
    fusion.add_settled_step(_removal_from_top(10.0))
    fusion.add_impacts([_strike(15.0, 7)])
    assert fusion.add_settled_step(landing) == []


def test_the_top_module_was_set_down_with_its_knock_after_the_last_grab() -> None:
    # Grabbed last at 10.0; knocks at 10.2 (the hand leaving), 12.0 (the module).
    assert set_down_at([10.2, 12.0, 14.9], 10.0, 15.0) == pytest.approx(12.0)
    # The cube that showed it closed struck the top plate on its way: not the module.
    assert set_down_at([10.2, 14.9], 10.0, 15.0) == pytest.approx(15.0)
    assert set_down_at([], 10.0, 15.0) == pytest.approx(15.0)
