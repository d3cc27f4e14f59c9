"""The signs that a tower's cubes rest a moment on a plate and slide on."""

import numpy as np
import pytest

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
    # Read a cube for 30 ms: too short for anything. Left 1.5 s later:
    # knocked down by another throw. Within two seconds of the modules
    # being set back: hands. A third or twice a cube up and down: a hand
    # pressing, two cubes.
    for fall_at, handled_since, cubes in ((1.03, -np.inf, 1.0), (2.5, -np.inf, 1.0),
                                          (1.3, 0.0, 1.0), (1.3, -np.inf, 0.3),
                                          (1.3, -np.inf, 2.0)):
        signs = SlideSigns()
        _rise_and_fall(signs, fall_at, handled_since=handled_since, cubes=cubes)
        assert signs.due(9.0, 0.0) == []
    # Each of them, changed back, is a sign; so is a cube read at a third
    # more than the plate's size (where it rests shares its weight otherwise).
    for cubes in (1.0, 1.35, 0.7):
        signs = SlideSigns()
        _rise_and_fall(signs, 1.3, cubes=cubes)
        assert len(signs.due(9.0, 0.0)) == 1


def test_a_cube_that_rested_less_than_a_tenth_is_told_from_a_jolt_by_how_it_came_and_went(
) -> None:
    # Model J: cubes roll 30-250 ms on a plate before dropping into the hole;
    # one that came with a bounce (rose over 50 ms) and left at once is a
    # sign after 60 ms. A strike's jolt rises and falls within a reading;
    # a hand lets go slowly.
    from dsp.detect.slides import RESTED_S

    def signs_of(rise: tuple[float, float], fall: tuple[float, float]) -> int:
        signs = SlideSigns()
        signs.note_step(_step(*rise, 1.0), 1.0, 0.25, -np.inf)
        signs.note_step(_step(*fall, -1.0), -1.0, 0.25, -np.inf)
        return len(signs.due(9.0, 0.0))

    assert RESTED_S > 0.06
    assert signs_of((0.95, 1.0), (1.06, 1.0975)) == 1
    assert signs_of((0.9875, 1.0), (1.06, 1.0725)) == 0  # a jolt's spike
    assert signs_of((0.95, 1.0), (1.06, 1.16)) == 0  # let go slowly
    assert signs_of((0.95, 1.0), (1.12, 1.22)) == 1  # rested long enough for either


def test_two_slides_or_four_bounces_on_empty_plates_tell_the_tower() -> None:
    signs = SlideSigns()
    signs.count_slide()
    signs.count_bounce_on_empty()
    assert not signs.slides
    signs.count_bounce_on_empty()
    assert signs.slides


def _arrivals(signs: SlideSigns, n: int, start: int) -> int:
    """``n`` cubes seen arriving on plates 0.2 s apart (each a rise of one cube); the next start."""
    for k in range(start, start + n):
        t = 1.0 + 0.2 * k
        signs.note_step(_step(t - 0.05, t, 1.0, level=k % 8), 1.0, 0.25, -np.inf)
    return start + n


def test_signs_now_and_then_over_an_evening_do_not_tell_the_tower() -> None:
    # Model P's towers, whose cubes stay: a sign at 1-2 % of the cubes seen
    # arriving over half an hour. Two of them, far apart, are not a tower
    # whose cubes slide on (every landing after would wait).
    from dsp.detect.slides import SIGN_MEMORY

    signs = SlideSigns()
    start = _arrivals(signs, 10, 0)
    signs.count_slide()
    start = _arrivals(signs, SIGN_MEMORY, start)
    signs.count_slide()
    assert not signs.slides
    # Three bounces on empty plates among the last sixty arrivals, and a
    # slide: too few once that many arrived (under SIGN_SHARE of them).
    for _ in range(3):
        start = _arrivals(signs, 10, start)
        signs.count_bounce_on_empty()
    assert 2 * signs.slides_seen + signs.bounced_on_empty == 5 and not signs.slides
    signs.count_slide()
    assert signs.slides


def test_a_tower_whose_cubes_slide_stays_known_through_a_long_session() -> None:
    # Model I: a sign at about one cube in ten seen arriving.
    signs = SlideSigns()
    start = 0
    for arrival in range(2000):
        start = _arrivals(signs, 1, start)
        if arrival % 10 == 9:
            signs.count_slide()
        if arrival >= 20:
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
    # Where the landing waited to see its cube stay (``SlideSigns.wary``) and
    # it did not, the plate's size is still unknown when it leaves: a fall of
    # no known size as large as the rise is the sign; another one is not.
    for fall_counts, signs_seen in ((-1.05, 1), (-2.0, 0), (0.5, 0)):
        signs = SlideSigns()
        signs.note_step(_step(0.95, 1.0, 1.0), float("nan"), 0.25, -np.inf)
        signs.note_step(_step(1.3, 1.32, fall_counts), float("nan"), 0.25, -np.inf)
        assert len(signs.due(9.0, 0.0)) == signs_seen


def test_one_slide_makes_landings_wait_until_a_few_stayed() -> None:
    from dsp.detect.slides import WARY_HOLDS

    signs = SlideSigns(first_held=0)
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


def test_the_sessions_first_landings_wait_to_see_their_cube_stay() -> None:
    from dsp.detect.slides import FIRST_HELD

    signs = SlideSigns()
    assert signs.wary and signs.first_landings
    for _ in range(FIRST_HELD - 1):
        signs.note_landed()
    assert signs.wary and signs.first_landings
    signs.note_landed()
    assert not signs.wary and not signs.first_landings


def test_a_slide_among_the_first_landings_makes_them_wait_as_in_a_sliding_tower() -> None:
    signs = SlideSigns(first_held=3)
    signs.note_landed()
    signs.count_slide()
    assert signs.wary and not signs.first_landings  # the known tower's holds now
    for _ in range(5):
        signs.note_landed()
    assert signs.wary  # until WARY_HOLDS landings stayed, however many came first


def _revision(t_settled: float, delta: float) -> LoadStep:
    # A second look at the rise of ``_rise`` (same level before), once the plate was still.
    return LoadStep(level=5, t_before_s=0.95, t_settled_s=t_settled,
                    t_decided_s=t_settled + 0.05, delta_counts=delta,
                    before_counts=0.0, after_counts=delta, revises=True)


def test_a_cube_read_on_a_plate_that_a_second_look_finds_gone_is_judged_like_a_fall() -> None:
    # Model I: a cube dwells 30-250 ms on each plate it passes. The fast
    # view reads it there (a rise of one cube) and it leaves before the
    # plate is still: the second look measures no change from the load
    # before it came, and no fall of its own is ever read.
    signs = SlideSigns()
    signs.note_step(_step(0.95, 1.0, 1.0), 1.0, 0.25, -np.inf)
    signs.note_step(_revision(1.3, 0.05), 0.05, 0.25, -np.inf)
    assert signs.due(1.40, impact_delay_s=0.03) == []
    [fall] = signs.due(1.50, impact_delay_s=0.03)
    # Struck below from the end of the rise's still window on (its own
    # bounces there were before), up to the strike after the plate was still.
    assert SlideSigns.strike_window(fall) == pytest.approx((1.05, 1.45))
    assert fall.delta_counts == -1.0 and not fall.revises


@pytest.mark.parametrize(
    ("revised_cubes", "settled_at", "handled_since"),
    [(0.9, 1.3, -np.inf),  # the plate still holds it: read short, not gone
     (0.05, 1.9, -np.inf),  # gone only after 0.9 s: knocked down by the next throw
     (0.05, 1.3, 0.0)],  # the modules were set back a second before: hands
)
def test_a_second_look_that_finds_the_cube_still_there_or_late_or_handled_is_no_sign(
    revised_cubes: float, settled_at: float, handled_since: float
) -> None:
    signs = SlideSigns()
    signs.note_step(_step(0.95, 1.0, 1.0), 1.0, 0.25, handled_since)
    signs.note_step(_revision(settled_at, revised_cubes), revised_cubes, 0.25, handled_since)
    assert signs.due(9.0, 0.0) == []


def test_a_second_look_at_another_rise_is_no_sign() -> None:
    signs = SlideSigns()
    signs.note_step(_step(0.95, 1.0, 1.0), 1.0, 0.25, -np.inf)
    other = LoadStep(level=5, t_before_s=0.5, t_settled_s=1.3, t_decided_s=1.35,
                     delta_counts=0.05, before_counts=0.0, after_counts=0.05, revises=True)
    signs.note_step(other, 0.05, 0.25, -np.inf)
    assert signs.due(9.0, 0.0) == []


def test_a_landing_waits_as_long_as_the_slides_timed_on_this_tower() -> None:
    # Until enough slides were timed, the wait is the fast view's own.
    from dsp.detect.slides import DWELL_LEAST_S, DWELL_MARGIN_S, DWELLS_KNOWN

    signs = SlideSigns()
    assert signs.dwell_hold_s() == float("inf")
    rests = [0.12, 0.2, 0.15, 0.18, 0.1, 0.16, 0.14]
    for k, rest in enumerate(rests):
        t0 = 10.0 * k
        signs.note_step(_step(t0 + 0.95, t0 + 1.0, 1.0), 1.0, 0.25, -np.inf)
        signs.note_step(_step(t0 + 1.0 + rest, t0 + 1.02 + rest, -1.0), -1.0, 0.25, -np.inf)
        for fall in signs.due(t0 + 9.0, 0.0):
            signs.count_slide(fall)
        if k + 1 < DWELLS_KNOWN:
            assert signs.dwell_hold_s() == float("inf")
    # The longest rest before a cube slid on (0.2 s), and a reading or two more.
    assert signs.dwell_hold_s() == pytest.approx(max(0.2 + DWELL_MARGIN_S, DWELL_LEAST_S))
    # A slide counted without its fall (the settled view's signs) times nothing.
    signs.count_slide()
    assert signs.dwell_hold_s() == pytest.approx(0.2 + DWELL_MARGIN_S)
