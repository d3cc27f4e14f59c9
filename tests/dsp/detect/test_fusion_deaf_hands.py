"""A plate restless for seconds with others gained unheard: hands, unless the discs miss cubes."""

import numpy as np
import pytest

from dsp.detect.acoustic import AcousticLevelModel
from dsp.detect.cubes import CubeScale
from dsp.detect.fusion import Fusion
from dsp.detect.grouping import Impact
from dsp.detect.loadcell import LoadStep
from dsp.detect.piezo import TimedImpact

UNIT = 1000.0


def _fusion(unheard_landings: int) -> Fusion:
    """Sizes known; of the last 8 single landings, ``unheard_landings`` were not heard."""
    fusion = Fusion(n_levels=8, first_landings_held=0, scale=CubeScale(n_levels=8),
                    acoustic=AcousticLevelModel(n_levels=8))
    for level in range(8):
        fusion.scale.learn(level, UNIT, 1)
        fusion.scale.learn_sign(level, UNIT, cubes_added=True)
    fusion._landed_heard.extend([False] * unheard_landings + [True] * (8 - unheard_landings))
    # The piezos listen (a faint tick on the base plate long before).
    faint = Impact(frame=0, channels=(0,), peaks=np.full(8, 5.0), floor=np.ones(8))
    fusion.add_impacts([TimedImpact(1.0, faint)])
    return fusion


def _step(cubes: float) -> LoadStep:
    """A change of ``cubes`` on level 5 settling over 3 s, with five other plates restless."""
    return LoadStep(level=5, t_before_s=20.0, t_settled_s=23.0, t_decided_s=23.3,
                    delta_counts=cubes * UNIT, before_counts=0.0, after_counts=cubes * UNIT,
                    busy_levels=5, busy_mask=0b11011)


def test_a_long_unheard_change_with_restless_plates_is_a_hands_on_a_tower_that_hears() -> None:
    assert _fusion(unheard_landings=0)._unheard_under_hands(_step(1.0))


def test_one_clean_cube_is_a_cube_where_the_discs_miss_cubes() -> None:
    assert not _fusion(unheard_landings=3)._unheard_under_hands(_step(1.0))


@pytest.mark.parametrize("cubes", [0.7, 1.3, 2.0])
def test_but_no_clean_single_cube_stays_a_hands_there_too(cubes: float) -> None:
    assert _fusion(unheard_landings=3)._unheard_under_hands(_step(cubes))
