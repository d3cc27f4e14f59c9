"""The signs that a tower's cubes rest a moment on a plate and slide on."""

import numpy as np

from dsp.detect.loadcell import LoadStep
from dsp.detect.slides import SlideSigns


def _step(t_before: float, t_settled: float, delta: float, level: int = 5) -> LoadStep:
    return LoadStep(level=level, t_before_s=t_before, t_settled_s=t_settled,
                    t_decided_s=t_settled + 0.05, delta_counts=delta,
                    before_counts=0.0, after_counts=delta)


def _rise_and_fall(signs: SlideSigns, fall_at: float, *, handled_since: float = -np.inf,
                   cubes: float = 1.0) -> LoadStep:
    signs.note_step(_step(0.95, 1.0, 1.0), cubes, 0.25, handled_since)
    fall = _step(fall_at, fall_at + 0.02, -1.0)
    signs.note_step(fall, -cubes, 0.25, handled_since)
    return fall


def test_a_cube_that_settled_and_left_is_judged_once_the_strikes_after_it_are_known() -> None:
    signs = SlideSigns()
    fall = _rise_and_fall(signs, 1.3)
    assert signs.due(1.40, impact_delay_s=0.03) == []
    assert signs.due(1.50, impact_delay_s=0.03) == [fall]
    assert signs.due(2.0, impact_delay_s=0.03) == []  # taken once
    assert SlideSigns.strike_window(fall) == (1.2, 1.32 + 0.15)


def test_jolts_hands_and_parts_of_cubes_are_no_signs() -> None:
    # Read a cube for 50 ms: a strike's jolt. Left 1.5 s later: knocked down
    # by another throw. Within two seconds of the modules being set back:
    # hands. Half a cube up and down: a hand pressing.
    for fall_at, handled_since, cubes in ((1.05, -np.inf, 1.0), (2.5, -np.inf, 1.0),
                                          (1.3, 0.0, 1.0), (1.3, -np.inf, 0.5)):
        signs = SlideSigns()
        _rise_and_fall(signs, fall_at, handled_since=handled_since, cubes=cubes)
        assert signs.due(9.0, 0.0) == []
    # Each of them, changed back, is a sign.
    signs = SlideSigns()
    _rise_and_fall(signs, 1.3)
    assert len(signs.due(9.0, 0.0)) == 1


def test_two_slides_or_four_bounces_on_empty_plates_tell_the_tower() -> None:
    signs = SlideSigns()
    signs.count_slide()
    signs.count_bounce_on_empty()
    assert not signs.slides
    signs.count_bounce_on_empty()
    assert signs.slides


def test_a_plates_first_cube_of_no_known_size_is_a_sign_when_as_much_left_soon() -> None:
    # The size is learnt from the rise itself, so only the fall has one.
    for rise_counts, signs_seen in ((1.0, 1), (1.1, 1), (2.0, 0)):
        signs = SlideSigns()
        signs.note_step(_step(0.95, 1.0, rise_counts), float("nan"), 0.25, -np.inf)
        signs.note_step(_step(1.3, 1.32, -1.0), -1.0, 0.25, -np.inf)
        assert len(signs.due(9.0, 0.0)) == signs_seen
    # A cell wired the other way reads its first cube as a fall in counts.
    signs = SlideSigns()
    signs.note_step(_step(0.95, 1.0, -1.0), float("nan"), 0.25, -np.inf)
    signs.note_step(_step(1.3, 1.32, 1.0), -1.0, 0.25, -np.inf)
    assert len(signs.due(9.0, 0.0)) == 1
    # A fall of no known size is no sign.
    signs = SlideSigns()
    signs.note_step(_step(0.95, 1.0, 1.0), float("nan"), 0.25, -np.inf)
    signs.note_step(_step(1.3, 1.32, -1.0), float("nan"), 0.25, -np.inf)
    assert signs.due(9.0, 0.0) == []


def test_one_slide_makes_landings_wait_until_a_few_stayed() -> None:
    from dsp.detect.slides import WARY_HOLDS

    signs = SlideSigns()
    assert not signs.wary
    signs.count_slide()
    assert signs.wary and not signs.slides
    for _ in range(WARY_HOLDS - 1):
        signs.note_held()
    assert signs.wary
    signs.note_held()
    assert not signs.wary  # that many cubes stayed: something else slid
    signs.count_slide()  # another slide: wary again, and the tower is known
    assert signs.wary and signs.slides
    for _ in range(2 * WARY_HOLDS):
        signs.note_held()
    assert signs.wary
