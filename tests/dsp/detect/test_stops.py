"""Which strikes and which stretch of a plate's readings belong to the thrown cube."""

import numpy as np

from dsp.detect.grouping import Impact
from dsp.detect.piezo import TimedImpact
from dsp.detect.stops import (
    PassSwings,
    PlateWindow,
    bounced_past,
    fast_arrivals,
    fell_clearly,
    fell_from_rest,
    one_hit,
    plate_window,
    stop_held_window,
)


def _strike(t_s: float, level: int) -> TimedImpact:
    peaks = np.where(np.arange(8) == level, 300.0, 30.0)
    return TimedImpact(t_s, Impact(frame=0, channels=(level,), peaks=peaks, floor=np.ones(8)))


def test_a_fall_from_rest_is_longer_than_forty_ms_on_the_frame_grid() -> None:
    frame = 0.004
    for first in (1250, 2979, 3001, 12503):
        assert not fell_from_rest(first * frame, (first + 10) * frame)
        assert fell_from_rest(first * frame, (first + 11) * frame)


def test_a_cube_below_two_thirds_of_a_fall_from_rest_later_cannot_have_passed() -> None:
    # A module (2.8 cm) from rest takes 75.5 ms; passing cubes take 20-50 ms.
    assert fell_clearly(5.0, 5.052)
    assert not fell_clearly(5.0, 5.048)


def test_only_a_cube_that_came_down_fast_reaches_the_plate_above() -> None:
    # Plate 5 struck, then 4: 25 ms later the cube was falling fast; 60 ms
    # later it was the knocked cube, fallen from rest.
    fast = [_strike(5.00, 5), _strike(5.025, 4), _strike(5.06, 4)]
    assert fast_arrivals(fast, [5, 4, 4], 4) == [5.025, 5.06]
    slow = [_strike(5.00, 5), _strike(5.06, 4), _strike(5.09, 5)]
    assert fast_arrivals(slow, [5, 4, 5], 4) == []


def test_a_plate_is_judged_over_the_thrown_cubes_stretch_of_a_quick_series() -> None:
    struck = [5.00, 5.05]
    # Alone: the whole drop.
    assert plate_window(struck, [], [], 4.95, 5.5) == PlateWindow(4.95, 5.5, -np.inf, False)
    # Up to the next cube heard there a throw's interval later, or its gain.
    assert plate_window(struck, [], [5.2, 5.4], 4.95, 5.5).until_s == 5.4
    assert plate_window(struck, [(5.35, 5.6)], [], 4.95, 5.5).until_s == 5.35
    # The cube before, settled there before the thrown cube struck: read
    # from after it, and from the thrown cube's first strike.
    after_one = plate_window(struck, [(4.6, 4.75)], [], 4.55, 5.5)
    assert (after_one.since_s, after_one.base_from_s, after_one.gained) == (4.95, 4.75, False)
    # A gain begun with the thrown cube's bounces is a cube that stayed,
    # unless it settled only after the time judged (the next cube's).
    assert plate_window(struck, [(4.99, 5.3)], [], 4.95, 5.5).gained
    assert not plate_window(struck, [(4.99, 5.9)], [], 4.95, 5.5).gained
    # The plate reads as before for a few readings after a strike (the
    # HX711 settles in four): a gain whose last still window ended within
    # that lag of the last bounce is the thrown cube's too, not the next one's.
    last = struck[-1]
    just_after = plate_window(struck, [(last + 0.003, last + 0.12)], [], 4.95, 5.5)
    assert just_after.gained and just_after.until_s == 5.5
    assert not plate_window(struck, [(last + 0.08, last + 0.2)], [], 4.95, 5.5).gained


def test_onsets_within_45_ms_of_the_first_are_one_hit() -> None:
    assert one_hit([1.0, 1.01, 1.04]) == [1.0]
    assert one_hit([1.0, 1.05]) == [1.0, 1.05]
    assert one_hit([]) == []


def test_a_cube_heard_below_long_after_its_strike_bounced_past_the_plate() -> None:
    # One hit: heard below 0.17 s on or later, it was in the air in between.
    assert bounced_past([1.0], 1.18)
    assert not bounced_past([1.0, 1.03], 1.16)
    # Bounces over less than 0.12 s: 0.21 s.
    assert bounced_past([1.0, 1.05, 1.1], 1.22)
    assert not bounced_past([1.0, 1.05, 1.1], 1.2)
    # Bouncing for longer, the cube there may have been pushed off at the last,
    # but not heard below as late as 0.3 s after the first strike.
    assert not bounced_past([1.0, 1.08, 1.15], 1.29)
    assert bounced_past([1.0, 1.08, 1.15, 1.25], 1.31)


def test_a_plate_is_watched_for_staying_after_the_strike_has_passed_the_converter() -> None:
    # 80 readings a second: 50 ms to 0.4 s after the strike.
    assert stop_held_window(5.0, 1 / 80) == (5.05, 5.4)
    # 10 a second: the blow shows in the reading after the strike, a tenth
    # of a second on; the window moves by as much.
    start, end = stop_held_window(5.0, 0.1)
    assert (round(start, 6), round(end, 6)) == (5.1, 5.45)
    # Not known yet: as at 80.
    assert stop_held_window(5.0, float("nan")) == (5.05, 5.4)


def _passes(like: int, calm: int) -> PassSwings:
    swings = PassSwings()
    for k in range(like + calm):
        swings.note(k % 8, 1.0 + k, like_landing=k < like)
    return swings


def test_stops_are_told_until_a_tenth_of_at_least_five_passes_swung_like_landings() -> None:
    # Model H: passes there swing a plate like a landing about one time in
    # ten, while a stop is a few throws in a hundred: three such passes
    # among 30 already mean most stops found would be passes.
    assert not _passes(3, 27).stops_told
    assert _passes(3, 28).stops_told  # under a tenth
    assert _passes(2, 3).stops_told  # two are not enough, however few the passes
    assert not _passes(3, 2).stops_told
    assert _passes(3, 1).stops_told  # not before five passes
