"""A plate's change heard only through flat rumble is a hand's, unless it is one clean cube."""

import numpy as np
import pytest

from dsp.detect.acoustic import AcousticLevelModel
from dsp.detect.cubes import CubeScale
from dsp.detect.fusion import Fusion
from dsp.detect.grouping import Impact
from dsp.detect.loadcell import LoadStep
from dsp.detect.piezo import TimedImpact

UNIT = 1000.0


def _fusion() -> Fusion:
    """Sizes known; a phone buzzing on the table rumbles alike on every disc from 2.8 s to 3.2 s."""
    fusion = Fusion(n_levels=8, first_landings_held=0, scale=CubeScale(n_levels=8),
                    acoustic=AcousticLevelModel(n_levels=8))
    for level in range(8):
        fusion.scale.learn(level, UNIT, 1)
        fusion.scale.learn_sign(level, UNIT, cubes_added=True)
    flat = Impact(frame=0, channels=tuple(range(8)), peaks=np.full(8, 60.0), floor=np.ones(8))
    fusion.add_impacts([TimedImpact(t, flat) for t in np.arange(2.8, 3.2, 0.04)])
    return fusion


def _step(cubes: float, restless: tuple[int, ...] = (2,)) -> LoadStep:
    """A settled change of ``cubes`` on level 5, settled at 3.1 s, with ``restless`` plates."""
    return LoadStep(level=5, t_before_s=2.9, t_settled_s=3.1, t_decided_s=3.4,
                    delta_counts=cubes * UNIT, before_counts=0.0, after_counts=cubes * UNIT,
                    busy_levels=len(restless), busy_mask=sum(1 << k for k in restless))


@pytest.mark.parametrize("cubes", [0.6, 1.3, 2.0])
def test_a_change_of_no_single_clean_cube_under_flat_rumble_is_a_hands(cubes: float) -> None:
    assert _fusion()._shaken_by_hands(_step(cubes))


@pytest.mark.parametrize("cubes", [1.0, 0.9, 1.12])
def test_one_clean_cube_under_flat_rumble_is_a_cube_landing_while_the_room_is_loud(
    cubes: float,
) -> None:
    assert not _fusion()._shaken_by_hands(_step(cubes))


def test_nor_is_a_plate_that_moved_alone() -> None:
    assert not _fusion()._shaken_by_hands(_step(0.6, restless=()))
