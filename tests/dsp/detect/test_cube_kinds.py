"""A game that mixes two kinds of cube: the heavier is one cube, not two."""

import numpy as np

from dsp.detect.cubes import CubeScale
from dsp.detect.events import Landing
from dsp.detect.fusion import Fusion
from dsp.detect.grouping import Impact
from dsp.detect.loadcell import LoadStep
from dsp.detect.piezo import TimedImpact
from tests.dsp.detect.test_fusion_calm_look import UNIT
from tests.dsp.detect.test_fusion_calm_look import _fusion as calm_look_fusion
from tests.dsp.detect.test_fusion_calm_look import _landed_at as landed_at

LIGHT = 8000.0


def _scale_that_learnt_the_lighter() -> CubeScale:
    scale = CubeScale(n_levels=8)
    for level in range(8):
        scale.learn(level, LIGHT, 1)
    return scale


def test_steps_that_read_the_same_odd_size_again_and_again_tell_a_second_kind() -> None:
    scale = _scale_that_learnt_the_lighter()
    assert scale.kind_ratio() is None
    assert not scale.one_of_the_heavier(5, 1.6 * LIGHT)
    scale.note_step(5, 1.6 * LIGHT)
    assert scale.kind_ratio() is None  # once may be anything
    # The lighter kind on a level that learnt the heavier reads the inverse.
    scale.forget(7)
    scale.learn(7, 1.58 * LIGHT, 1)
    scale.note_step(7, LIGHT)
    ratio = scale.kind_ratio()
    assert ratio is not None and 1.55 < ratio < 1.62
    assert scale.one_of_the_heavier(6, 1.59 * LIGHT)
    # Two cubes of the lighter kind still read two.
    assert not scale.one_of_the_heavier(6, 2.0 * LIGHT)
    # One cube of the other kind, either way, is close to one.
    assert scale.other_kind_residual(6, 1.59 * LIGHT) < 0.05
    assert scale.other_kind_residual(7, LIGHT) < 0.05
    assert scale.other_kind_residual(6, 2.0 * LIGHT) > 0.3


def test_two_odd_steps_that_agree_among_many_whole_ones_are_no_second_kind() -> None:
    # A long game of one kind: two misread steps in 40 agree by chance.
    scale = _scale_that_learnt_the_lighter()
    scale.note_step(5, 1.45 * LIGHT)
    for _ in range(30):
        scale.learn(3, LIGHT, 1)
    scale.note_step(2, 1.46 * LIGHT)
    assert scale.kind_ratio() is None
    assert scale.other_kind_residual(4, 1.45 * LIGHT) == float("inf")


def test_the_ratio_is_the_size_most_odd_steps_agree_on_not_the_first_pair() -> None:
    # Model E: a dozen heavier cubes read 1.53-1.67, two misread steps 1.34
    # and 1.39 agree as well; the heavier kind is still 1.6 lighter ones.
    scale = _scale_that_learnt_the_lighter()
    for x in (1.61, 1.57, 1.66, 1.39, 1.34, 1.53, 1.59, 1.59, 1.58, 1.62, 1.57, 1.6):
        scale.note_step(4, x * LIGHT)
    ratio = scale.kind_ratio()
    assert ratio is not None and 1.57 <= ratio <= 1.61
    assert scale.one_of_the_heavier(4, 1.59 * LIGHT)


def test_steps_between_one_and_two_cubes_that_do_not_agree_tell_nothing() -> None:
    scale = _scale_that_learnt_the_lighter()
    for level, x in ((1, 1.35), (2, 1.62)):  # a hand, a plate still ringing
        scale.note_step(level, x * LIGHT)
    scale.note_step(3, 1.05 * LIGHT)  # one cube, a little heavy: no odd step
    assert scale.kind_ratio() is None


def _fusion_with_a_heavier_cube_landing(*, kinds_known: bool) -> tuple[Fusion, LoadStep]:
    """Every level learnt the lighter cube (UNIT); one of 1.45 times it lands on level 5."""
    fusion = calm_look_fusion({5: landed_at(1.1, 1.45)})
    if kinds_known:
        for level, x in ((1, 1.44), (2, 1.46)):
            fusion.scale.note_step(level, x * UNIT)
    step = LoadStep(level=5, t_before_s=0.95, t_settled_s=1.10, t_decided_s=1.16,
                    delta_counts=1.45 * UNIT, before_counts=0.0, after_counts=1.45 * UNIT)
    return fusion, step


def test_one_cube_of_the_other_kind_is_decided_at_once_and_teaches_no_size() -> None:
    fusion, step = _fusion_with_a_heavier_cube_landing(kinds_known=True)
    out = fusion.add_load([step], [], step.t_decided_s) + fusion.advance(1.3)
    assert [(e.floor, e.cubes) for e in out if isinstance(e, Landing)] == [(5, 1)]
    assert fusion.scale.unit(5) == UNIT
    # Before the game showed two kinds, the settled view decides it.
    fusion, step = _fusion_with_a_heavier_cube_landing(kinds_known=False)
    out = fusion.add_load([step], [], step.t_decided_s) + fusion.advance(1.3)
    assert [e for e in out if isinstance(e, Landing)] == []
    assert fusion._levels[5].doubted == [step]


def test_the_settled_view_notes_a_cube_heard_dropping_that_reads_one_and_a_half() -> None:
    fusion, _ = _fusion_with_a_heavier_cube_landing(kinds_known=False)
    for level, t in ((5, 1.0), (2, 2.5)):
        peaks = np.where(np.arange(8) == level, 300.0, 30.0)
        fusion.add_impacts([
            TimedImpact(t + dt, Impact(frame=0, channels=(level,), peaks=peaks, floor=np.ones(8)))
            for dt in (0.0, 0.05)
        ])
        settled = LoadStep(level=level, t_before_s=t - 0.05, t_settled_s=t + 0.4,
                           t_decided_s=t + 0.45, delta_counts=1.45 * UNIT,
                           before_counts=0.0, after_counts=1.45 * UNIT)
        fusion.add_settled_step(settled)
    ratio = fusion.scale.kind_ratio()
    assert ratio is not None and abs(ratio - 1.45) < 0.01
