"""A tower whose discs miss many of its landings has its clean unheard cubes told at once."""

import numpy as np
import pytest

from dsp.detect.acoustic import AcousticLevelModel
from dsp.detect.cubes import CubeScale
from dsp.detect.events import Landing
from dsp.detect.fusion import Fusion
from dsp.detect.fusion.base import _HEARD_KEPT, _HEARD_SEEN, _UNHEARD_SHARE
from dsp.detect.grouping import Impact
from dsp.detect.loadcell import LoadStep
from dsp.detect.piezo import TimedImpact

UNIT = 1000.0
RATE = 80.0


def _fusion(level_5_from: float = 3.0) -> Fusion:
    """Sizes known; a cube heard landing on level 2 at 1 s; one lands unheard on level 5 at 3 s."""
    fusion = Fusion(n_levels=8, first_landings_held=0, scale=CubeScale(n_levels=8),
                    acoustic=AcousticLevelModel(n_levels=8))
    for level in range(8):
        fusion.scale.learn(level, UNIT, 1)
        fusion.scale.learn_sign(level, UNIT, cubes_added=True)
    t = np.arange(0.0, 5.0, 1 / RATE)
    values = np.zeros((t.size, 8))
    values[:, 2] = np.where(t >= 1.05, UNIT, 0.0)
    # The cube's weight, and the plate ringing a moment as a cube's landing rings it.
    after = np.clip(t - level_5_from, 0.0, None)
    ring = 0.8 * UNIT * np.exp(-after / 0.05) * np.sin(2 * np.pi * 15 * after)
    values[:, 5] = np.where(t >= level_5_from, UNIT + ring, 0.0)
    fusion.load_coverage.add(t)
    fusion.load_history.add(t, values, np.ones((t.size, 8), bool))
    fusion.accounted[:] = 0.0
    peaks = np.where(np.arange(8) == 2, 300.0, 30.0)
    fusion.add_impacts([TimedImpact(1.0, Impact(frame=0, channels=(2,), peaks=peaks,
                                                floor=np.ones(8)))])
    return fusion


def _step(restless: tuple[int, ...] = ()) -> LoadStep:
    """A clean one-cube step on level 5 at 3 s, nothing heard since 1 s."""
    return LoadStep(level=5, t_before_s=2.95, t_settled_s=3.05, t_decided_s=3.11,
                    delta_counts=UNIT, before_counts=0.0, after_counts=UNIT,
                    busy_levels=len(restless), busy_mask=sum(1 << k for k in restless))


def _landed(fusion: Fusion, heard: list[bool]) -> None:
    """The tower's last single landings, heard or not."""
    fusion._landed_heard.extend(heard)


def _fast_landings(fusion: Fusion, step: LoadStep) -> list[tuple[int, float]]:
    out = fusion.add_load([step], [], step.t_decided_s) + fusion.advance(step.t_decided_s + 0.1)
    return [(e.floor, round(e.t_decided, 2)) for e in out if isinstance(e, Landing)]


def test_an_unheard_cube_waits_for_the_settled_view_where_the_discs_hear_the_landings() -> None:
    fusion = _fusion()
    _landed(fusion, [True] * 10)
    assert not fusion._heard_a_drop(_step())
    assert not fusion._fast_step_trusted(_step())
    assert _fast_landings(fusion, _step()) == []


def test_an_unheard_clean_cube_is_told_at_once_where_a_quarter_of_landings_went_unheard() -> None:
    fusion = _fusion()
    _landed(fusion, [True] * 6 + [False] * 2)
    assert fusion._fast_step_trusted(_step())
    assert _fast_landings(fusion, _step()) == [(5, 3.11)]


@pytest.mark.parametrize("heard", [[False] * (_HEARD_SEEN - 1), [True] * 16 + [False] * 3])
def test_too_few_landings_or_too_few_unheard_say_nothing(heard: list[bool]) -> None:
    fusion = _fusion()
    _landed(fusion, heard)
    assert not fusion._lands_unheard()
    assert not fusion._fast_step_trusted(_step())


def test_only_the_last_landings_count() -> None:
    fusion = _fusion()
    _landed(fusion, [False] * 10 + [True] * _HEARD_KEPT)
    assert not fusion._lands_unheard()
    _landed(fusion, [False] * int(np.ceil(_UNHEARD_SHARE * _HEARD_KEPT)))
    assert fusion._lands_unheard()


def test_not_with_another_plate_restless_that_no_cube_explains() -> None:
    fusion = _fusion()
    _landed(fusion, [False] * 10)
    assert not fusion._fast_step_trusted(_step(restless=(1,)))


def test_not_a_step_far_from_one_cube() -> None:
    fusion = _fusion()
    _landed(fusion, [False] * 10)
    assert not fusion._fast_step_trusted(
        LoadStep(level=5, t_before_s=2.95, t_settled_s=3.05, t_decided_s=3.11,
                 delta_counts=1.4 * UNIT, before_counts=0.0, after_counts=1.4 * UNIT,
                 busy_levels=0, busy_mask=0))


def test_not_once_such_a_landing_came_just_before_a_lift() -> None:
    # Hands squeeze a plate as they grip the tower to lift it: an unheard
    # "landing" a moment before a lift shows it, and no later one is trusted.
    fusion = _fusion()
    _landed(fusion, [False] * 10)
    assert _fast_landings(fusion, _step()) == [(5, 3.11)]  # counted among the unheard rises
    assert not fusion._grips_seen()
    fusion.openings.lift_top(3.5, 3.6)
    fusion.openings.close_top(3.8, 3.9, handling=True)
    assert fusion._grips_seen()
    later = LoadStep(level=4, t_before_s=4.95, t_settled_s=5.05, t_decided_s=5.11,
                     delta_counts=UNIT, before_counts=0.0, after_counts=UNIT,
                     busy_levels=0, busy_mask=0)
    assert not fusion._clean_and_unheard(later)
