"""A plate a hand pressed, taken for hands, is let go: its release is no cubes taken."""

import numpy as np
import pytest

from dsp.detect.acoustic import AcousticLevelModel
from dsp.detect.cubes import CubeScale
from dsp.detect.events import Landing
from dsp.detect.fusion import Fusion
from dsp.detect.grouping import Impact
from dsp.detect.loadcell import LoadStep
from dsp.detect.piezo import TimedImpact

UNIT = 1000.0
BASE = 50_000.0


def _fusion() -> Fusion:
    """Sizes known from one cube each; a hand rumbles alike on every disc from 2.8 s to 4.6 s."""
    fusion = Fusion(n_levels=8, first_landings_held=0, scale=CubeScale(n_levels=8),
                    acoustic=AcousticLevelModel(n_levels=8))
    for level in range(8):
        fusion.scale.learn(level, UNIT, 1)
        fusion.scale.learn_sign(level, UNIT, cubes_added=True)
        fusion.accounted[level] = BASE
    flat = Impact(frame=0, channels=tuple(range(8)), peaks=np.full(8, 60.0), floor=np.ones(8))
    fusion.add_impacts([TimedImpact(t, flat) for t in np.arange(2.8, 4.6, 0.04)])
    return fusion


def _step(t_s: float, before: float, after: float) -> LoadStep:
    """A settled change on level 5 from ``t_s``, with level 2 restless too."""
    return LoadStep(level=5, t_before_s=t_s, t_settled_s=t_s + 0.2, t_decided_s=t_s + 0.5,
                    delta_counts=after - before, before_counts=before, after_counts=after,
                    busy_levels=1, busy_mask=1 << 2)


def _pressed() -> Fusion:
    fusion = _fusion()
    pressed = fusion.add_settled_step(_step(2.9, BASE, BASE + 4.3 * UNIT))
    assert not [e for e in pressed if isinstance(e, Landing)], "the press is a hand's"
    return fusion


def test_a_plate_back_where_it_stood_before_the_press_is_the_hand_letting_go() -> None:
    fusion = _pressed()
    assert fusion.add_settled_step(_step(4.0, BASE + 4.3 * UNIT, BASE + 0.1 * UNIT)) == []
    # The plate's size and sign are as they were: a cube later is a cube landing.
    assert fusion.scale.count(5, UNIT)[0] == 1
    assert fusion.scale.unit(5) == UNIT


@pytest.mark.parametrize(
    ("t_s", "back_to"),
    [
        (4.0, BASE - 1.0 * UNIT),  # a cube lighter than before: one left too
        (4.0, BASE + 1.0 * UNIT),  # a cube heavier: one landed while pressed
        (4.0, BASE + 3.0 * UNIT),  # only part of the way back
        (7.0, BASE),  # long after: no hand holds a plate that long
    ],
)
def test_a_change_that_does_not_undo_the_press_is_not_the_hand_letting_go(
    t_s: float, back_to: float,
) -> None:
    fusion = _pressed()
    step = _step(t_s, BASE + 4.3 * UNIT, back_to)
    assert not fusion._hand_let_go(step, step.delta_counts)


def _fresh(press_by: float) -> tuple[Fusion, list[LoadStep]]:
    """A tower where only level 2 has learnt its cube (counts rising) and plate 5 is pressed.

    Early in a session (model AJ, 10 s in): a hand steadying the tower
    presses plate 5, whose cube is not known yet, by ``press_by`` counts,
    and lets go 2.3 s later, after the rumble, no other plate moving.
    """
    fusion = Fusion(n_levels=8, first_landings_held=0, scale=CubeScale(n_levels=8),
                    acoustic=AcousticLevelModel(n_levels=8))
    fusion.scale.learn(2, UNIT, 1)
    fusion.scale.learn_sign(2, UNIT, cubes_added=True)
    fusion.accounted[:] = BASE
    flat = Impact(frame=0, channels=tuple(range(8)), peaks=np.full(8, 60.0), floor=np.ones(8))
    fusion.add_impacts([TimedImpact(t, flat) for t in np.arange(2.8, 4.6, 0.04)])
    release = LoadStep(level=5, t_before_s=5.2, t_settled_s=5.4, t_decided_s=5.7,
                       delta_counts=-press_by, before_counts=BASE + press_by,
                       after_counts=BASE)
    return fusion, [_step(2.9, BASE, BASE + press_by), release]


def test_a_plate_with_no_cube_yet_pressed_the_way_cubes_weigh_is_let_go_too() -> None:
    # The press rises the way the other plate's cubes do: a hand's, and its
    # release is no cube (it had taught plate 5 the press as its cube, with
    # the sign reversed, and every cube after it read as nothing).
    fusion, (press, release) = _fresh(4.3 * UNIT)
    assert not [e for e in fusion.add_settled_step(press) if isinstance(e, Landing)]
    assert fusion.add_settled_step(release) == []
    assert fusion.scale.unit(5) is None
    # Against the way the other plate's cubes weigh, the "press" may be a
    # cube leaving a plate whose sign a hand taught: not remembered, and
    # what undoes it is judged as before.
    against, (press, release) = _fresh(-4.3 * UNIT)
    against.add_settled_step(press)
    assert against._levels[5].pressed is None
