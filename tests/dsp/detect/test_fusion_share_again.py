"""A share of a plate's size read twice on a shaken tower shows the size was several cubes'."""

from dsp.detect.acoustic import AcousticLevelModel
from dsp.detect.cubes import CubeScale
from dsp.detect.fusion import Fusion
from dsp.detect.loadcell import LoadStep

UNIT = 2000.0  # learnt from two cubes that settled together


def _fusion() -> Fusion:
    return Fusion(n_levels=8, first_landings_held=0, scale=CubeScale(n_levels=8),
                  acoustic=AcousticLevelModel(n_levels=8))


def _step(t_s: float, delta: float) -> LoadStep:
    return LoadStep(level=6, t_before_s=t_s, t_settled_s=t_s + 0.4, t_decided_s=t_s + 0.7,
                    delta_counts=delta, before_counts=0.0, after_counts=delta,
                    busy_levels=7, busy_mask=0b10111111)


def test_the_second_cube_read_as_the_same_half_tells_when_the_first_settled() -> None:
    fusion = _fusion()
    assert fusion._shown_again(_step(70.0, 0.45 * UNIT), 2, 0.45 * UNIT) is None
    assert fusion._shown_again(_step(92.0, 0.47 * UNIT), 2, 0.47 * UNIT) == 70.4


def test_shares_that_differ_tell_nothing() -> None:
    fusion = _fusion()
    # A cube sliding on leaves a different part of itself each time.
    assert fusion._shown_again(_step(70.0, 0.40 * UNIT), 2, 0.40 * UNIT) is None
    assert fusion._shown_again(_step(80.0, 0.55 * UNIT), 2, 0.55 * UNIT) is None
    # Nor does a share of another count, or one the other way.
    assert fusion._shown_again(_step(90.0, 0.55 * UNIT), 3, 0.55 * UNIT) is None
    assert fusion._shown_again(_step(95.0, -0.55 * UNIT), 2, -0.55 * UNIT) is None
