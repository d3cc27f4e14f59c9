"""A game that mixes two kinds of cube: the heavier is one cube, not two."""

from dsp.detect.cubes import CubeScale

LIGHT = 8000.0


def _scale_that_learnt_the_lighter() -> CubeScale:
    scale = CubeScale(n_levels=8)
    for level in range(8):
        for _ in range(3):
            scale.learn(level, LIGHT, 1)
    return scale


def test_steps_that_read_the_same_odd_size_again_and_again_tell_a_second_kind() -> None:
    scale = _scale_that_learnt_the_lighter()
    assert scale.kind_ratio() is None
    assert not scale.one_of_the_heavier(5, 1.6 * LIGHT)
    scale.note_step(5, 1.6 * LIGHT)
    assert scale.kind_ratio() is None  # once may be anything
    scale.note_step(2, 1.57 * LIGHT)
    ratio = scale.kind_ratio()
    assert ratio is not None and 1.55 < ratio < 1.62
    assert scale.one_of_the_heavier(6, 1.59 * LIGHT)
    # Two cubes of the lighter kind still read two.
    assert not scale.one_of_the_heavier(6, 2.0 * LIGHT)


def test_steps_between_one_and_two_cubes_that_do_not_agree_tell_nothing() -> None:
    scale = _scale_that_learnt_the_lighter()
    for level, x in ((1, 1.35), (2, 1.62)):  # a hand, a plate still ringing
        scale.note_step(level, x * LIGHT)
    scale.note_step(3, 1.05 * LIGHT)  # one cube, a little heavy: no odd step
    assert scale.kind_ratio() is None
