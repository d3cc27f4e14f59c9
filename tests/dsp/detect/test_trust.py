"""The fast view's trust in a load step: pure rules over strikes and swings."""

import numpy as np

from dsp.detect.grouping import Impact
from dsp.detect.loadcell import LoadStep
from dsp.detect.piezo import TimedImpact
from dsp.detect.trust import (
    DROP_STANDS_OUT_DB,
    HANDS_FLAT_DB,
    cube_like,
    drop_loudness_db,
    hands_rumbling,
    loud_as_a_cube,
    read_on_a_strike,
    sounded_like_a_cube,
    swung_like_a_landing,
)


def _impact(t_s: float, level: int, stands_out_db: float) -> TimedImpact:
    """A strike loudest on ``level`` by ``stands_out_db`` over the other plates (30 dB)."""
    peaks = np.full(8, 10 ** (30 / 20))
    peaks[level] = 10 ** ((30 + stands_out_db) / 20)
    return TimedImpact(t_s, Impact(frame=0, channels=(level,), peaks=peaks, floor=np.ones(8)))


def _step(t_before: float, t_settled: float) -> LoadStep:
    return LoadStep(level=3, t_before_s=t_before, t_settled_s=t_settled,
                    t_decided_s=t_settled + 0.06, delta_counts=1000.0,
                    before_counts=0.0, after_counts=1000.0)


def test_a_strike_standing_out_on_its_plate_is_a_cubes_and_a_flat_one_is_not() -> None:
    assert cube_like(_impact(1.0, 3, HANDS_FLAT_DB + 0.5))
    assert not cube_like(_impact(1.0, 3, HANDS_FLAT_DB - 0.5))


def test_five_flat_strikes_in_the_half_second_before_a_step_are_hands() -> None:
    step = _step(1.0, 1.1)
    flat = [_impact(0.6 + 0.08 * i, i, 5.0) for i in range(5)]
    assert hands_rumbling(flat, step)
    assert not hands_rumbling(flat[:4], step)
    # Strikes that stand out on their plates are cubes, however many.
    assert not hands_rumbling([_impact(0.6 + 0.08 * i, i, 25.0) for i in range(6)], step)
    # Flat strikes long before the step are not this step's.
    assert not hands_rumbling([_impact(0.1 + 0.05 * i, i, 5.0) for i in range(6)], step)
    # A noisy room's talk between a falling cube's strikes: the cube's stand out.
    cube = [_impact(0.9, 5, 25.0), _impact(0.97, 4, 25.0), _impact(1.05, 3, 20.0)]
    assert not hands_rumbling(flat + cube, step)
    assert hands_rumbling(flat + cube[:1], step)


def test_a_drop_is_heard_on_its_level_and_next_to_it_only() -> None:
    drop = [_impact(1.0, 6, 20.0), _impact(1.05, 4, 20.0)]
    assert drop_loudness_db(drop, 3) == 50.0  # the strike on 4, next to 3
    assert drop_loudness_db(drop, 1) is None


def test_a_drop_is_as_loud_as_a_cube_within_twenty_db_of_the_landings_heard() -> None:
    assert not loud_as_a_cube(None, [])
    assert loud_as_a_cube(5.0, [40.0] * 4)  # too few landings heard to judge
    assert loud_as_a_cube(21.0, [40.0] * 5)
    assert not loud_as_a_cube(19.0, [40.0] * 5)


def test_a_clean_cube_step_is_felt_when_its_plate_swung_like_a_landing() -> None:
    assert swung_like_a_landing(1, 0.05, swing=7.5, usual_swing=10.0, bar=0.7)
    assert not swung_like_a_landing(1, 0.05, swing=6.5, usual_swing=10.0, bar=0.7)
    assert not swung_like_a_landing(1, 0.15, swing=9.0, usual_swing=10.0, bar=0.7)
    assert not swung_like_a_landing(2, 0.05, swing=9.0, usual_swing=10.0, bar=0.7)
    assert not swung_like_a_landing(1, 0.05, swing=9.0, usual_swing=float("nan"), bar=0.7)


def test_a_step_between_two_readings_just_as_its_plate_was_struck_may_be_a_jolt() -> None:
    assert read_on_a_strike(_step(0.9875, 1.0), [0.995])
    # Struck well before it settled: the still window lies after the jolt.
    assert not read_on_a_strike(_step(0.9875, 1.0), [0.95])
    # A step that took several readings to rise is no jolt read at one reading.
    assert not read_on_a_strike(_step(0.95, 1.0), [0.995])


def test_talk_heard_on_every_disc_is_no_cube_dropped_on_a_silent_cell() -> None:
    # A cube's drop: edges clipped on the way, its last bounces loud on its
    # plate; one strike at least stands out far on one plate.
    cube = [_impact(1.0, 6, 12.0), _impact(1.05, 5, 18.0), _impact(1.1, 4, 22.0)]
    assert sounded_like_a_cube(cube, cube[-1:], 4, [])
    # Talk: many strikes, none standing out by more than a syllable's
    # unevenness between the discs.
    talk = [_impact(2.0 + 0.03 * i, 1, DROP_STANDS_OUT_DB - 1.0) for i in range(12)]
    assert all(cube_like(imp) for imp in talk)
    assert not sounded_like_a_cube(talk, talk[-3:], 1, [])
    # A lone click is an electrical pop, however far it stands out.
    assert not sounded_like_a_cube(cube[-1:], cube[-1:], 4, [])
