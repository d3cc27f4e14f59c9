"""The settled view's multi-cube changes: one landing per cube that arrived apart."""

from dataclasses import replace

import numpy as np
import pytest

from dsp.detect.acoustic import AcousticLevelModel
from dsp.detect.cubes import CubeScale
from dsp.detect.events import Disturbance, Landing, Removal
from dsp.detect.flatdiscs import FlatDiscs
from dsp.detect.fusion import Fusion
from dsp.detect.fusion.base import BUSY_KEPT_S
from dsp.detect.fusion.fastview import _FIRST_HOLD_S
from dsp.detect.fusion.settledview import _FIRST_SETTLED_HOLD_S
from dsp.detect.grouping import Impact
from dsp.detect.loadcell import LoadConnection, LoadStep
from dsp.detect.loadhistory import LoadHistory
from dsp.detect.piezo import PlateBusy, TimedImpact
from dsp.detect.slides import FIRST_HELD, SlideSigns
from dsp.detect.stops import STOP_REWEIGH_FROM_S, PassSwings, SuspectedStop

UNIT = 1000.0


# Load reading times of the fusions below: 80 Hz over the first 4 s.
_T = np.arange(0.0, 4.0, 1 / 80)


def _fusion(readings: np.ndarray | None = None) -> Fusion:
    """A fusion that knows every level's cube (UNIT), its plates read ``readings`` at ``_T``."""
    scale, acoustic = CubeScale(n_levels=8), AcousticLevelModel(n_levels=8)
    fusion = Fusion(n_levels=8, first_landings_held=0, scale=scale, acoustic=acoustic)
    for level in range(8):
        fusion.scale.learn(level, UNIT, 1)
    values = np.zeros((_T.size, 8)) if readings is None else readings
    fusion.load_coverage.add(_T)
    fusion.load_history.add(_T, values, np.ones((_T.size, 8), bool))
    fusion.accounted[:] = 0.0
    return fusion


def _strike(t_s: float, level: int, amplitude: float = 300.0) -> TimedImpact:
    peaks = np.where(np.arange(8) == level, amplitude, amplitude / 10)
    return TimedImpact(t_s, Impact(frame=0, channels=(level,), peaks=peaks, floor=np.ones(8)))


def _step(level: int, t_before: float, t_settled: float, cubes: float) -> LoadStep:
    return LoadStep(level=level, t_before_s=t_before, t_settled_s=t_settled,
                    t_decided_s=t_settled + 0.3, delta_counts=cubes * UNIT,
                    before_counts=0.0, after_counts=cubes * UNIT)


def _settling_with(restless: tuple[int, ...], t_settled: float = 1.3) -> LoadStep:
    """A one-cube step on level 3 while the plates ``restless`` were not still."""
    return LoadStep(level=3, t_before_s=0.95, t_settled_s=t_settled, t_decided_s=t_settled + 0.06,
                    delta_counts=UNIT, before_counts=0.0, after_counts=UNIT,
                    busy_levels=len(restless), busy_mask=sum(1 << k for k in restless))


def _landings(events: list) -> list[tuple[int, int, float]]:
    return [(e.floor, e.cubes, round(e.t, 3)) for e in events if isinstance(e, Landing)]


def _suspected(events: list) -> list[tuple[int, int, float, int | None]]:
    """Landings with the level their thrown cube may have stopped on instead."""
    return [
        (e.floor, e.cubes, round(e.t, 3), e.maybe_stopped_on)
        for e in events if isinstance(e, Landing)
    ]


def test_two_cubes_heard_apart_are_two_landings_each_at_its_last_bounce() -> None:
    fusion = _fusion()
    fusion.add_impacts([
        _strike(1.00, 3), _strike(1.05, 3),    # first cube and its bounce
        _strike(1.60, 3), _strike(1.66, 3),    # second cube, half a second later
        _strike(2.00, 3, 150.0), _strike(2.06, 1),  # a third cube clips level 3 on its way to 1
    ])
    out = fusion.add_settled_step(_step(3, 0.9, 2.3, 2.0))
    assert _landings(out) == [(3, 1, 1.05), (3, 1, 1.66)]
    assert fusion.cubes_on[3] == 2


def test_two_cubes_heard_as_one_drop_stay_one_landing_of_two() -> None:
    fusion = _fusion()
    fusion.add_impacts([_strike(1.00, 3), _strike(1.05, 3), _strike(1.10, 3)])
    out = fusion.add_settled_step(_step(3, 0.9, 1.6, 2.0))
    assert _landings(out) == [(3, 2, 1.1)]


def test_doubted_fast_steps_that_add_up_time_each_landing() -> None:
    fusion = _fusion()
    fusion.add_impacts([_strike(1.00, 5), _strike(1.04, 5), _strike(1.50, 5), _strike(1.55, 5)])
    # The fast view saw each cube settle but doubted both (other plates shook).
    fusion._doubt(_step(5, 0.9, 1.2, 1.0))
    first_after = LoadStep(level=5, t_before_s=1.2, t_settled_s=1.7, t_decided_s=1.75,
                           delta_counts=UNIT, before_counts=UNIT, after_counts=2 * UNIT)
    fusion._doubt(first_after)
    out = fusion.add_settled_step(_step(5, 0.9, 2.0, 2.0))
    assert _landings(out) == [(5, 1, 1.04), (5, 1, 1.55)]
    assert not fusion._levels[5].doubted


def test_a_cube_that_rested_a_moment_among_doubted_arrivals_is_no_landing_of_them() -> None:
    # Model R's quick series: the fast view doubted two cubes that came to
    # stay, and a third that rested on the plate a moment and went on.
    fusion = _fusion()
    fusion.add_impacts([_strike(1.00, 5), _strike(1.50, 5), _strike(2.10, 5), _strike(2.35, 4)])
    fusion._doubt(_step(5, 0.9, 1.05, 1.0))
    fusion._doubt(LoadStep(level=5, t_before_s=1.45, t_settled_s=1.55, t_decided_s=1.6,
                           delta_counts=UNIT, before_counts=UNIT, after_counts=2 * UNIT))
    fusion._doubt(LoadStep(level=5, t_before_s=2.05, t_settled_s=2.15, t_decided_s=2.2,
                           delta_counts=UNIT, before_counts=2 * UNIT, after_counts=3 * UNIT))
    fusion._doubt(LoadStep(level=5, t_before_s=2.3, t_settled_s=2.33, t_decided_s=2.4,
                           delta_counts=-UNIT, before_counts=3 * UNIT, after_counts=2 * UNIT))
    out = fusion.add_settled_step(_step(5, 0.9, 2.6, 2.0))
    assert [(floor, cubes) for floor, cubes, _ in _landings(out)] == [(5, 1), (5, 1)]
    assert [e.t for e in out if isinstance(e, Landing)][1] < 1.6
    assert not fusion._levels[5].doubted


def test_a_cube_landing_under_a_hand_is_timed_by_the_plates_last_gain() -> None:
    fusion = _fusion()
    # A hand on plate 6 (a soft strike, the plate pressed and pulled), then a
    # cube lands there while the hand lets go: no fast step is whole cubes.
    fusion.add_impacts([_strike(1.00, 6, 60.0), _strike(1.75, 6), _strike(1.82, 6)])
    for before, settled, cubes in ((0.9, 1.1, -1.1), (1.2, 1.5, -7.2), (1.6, 1.9, 9.3)):
        fusion._doubt(_step(6, before, settled, cubes))
    out = fusion.add_settled_step(_step(6, 0.9, 2.6, 1.0))
    assert _landings(out) == [(6, 1, 1.82)]


def test_a_lone_strike_followed_at_once_by_one_below_is_not_where_a_cube_rested() -> None:
    drop = [_strike(1.00, 3), _strike(1.05, 3), _strike(1.50, 3, 150.0), _strike(1.56, 1)]
    last = _fusion()._last_impact_near(drop, 3)
    assert last is not None and last.t_s == 1.05
    # Without the strike below, the lone strike may be the cube's last bounce.
    last = _fusion()._last_impact_near(drop[:3], 3)
    assert last is not None and last.t_s == 1.50


def test_plates_the_cube_struck_on_its_way_down_do_not_make_its_landing_suspect() -> None:
    fusion = _fusion()
    # Plates 6 and 7 jolted by the cube clipping their holes, then it lands on 3.
    fusion.add_impacts([_strike(1.00, 7, 120.0), _strike(1.04, 6, 120.0),
                        _strike(1.10, 3), _strike(1.15, 3)])
    assert fusion._fast_step_trusted(_settling_with((6, 7)))
    # Plates 1 and 5 restless as well: nothing the cube struck, hands maybe.
    assert not fusion._fast_step_trusted(_settling_with((1, 5, 6, 7)))


def test_the_plates_next_to_a_landing_jolted_by_it_do_not_make_it_suspect() -> None:
    fusion = _fusion()
    fusion.add_impacts([_strike(1.10, 3), _strike(1.15, 3)])
    # Plates 2 and 4 share the walls of level 3: the landing jolts them.
    step = _settling_with((2, 4), t_settled=1.12)
    assert fusion._fast_step_trusted(step)
    # Plates further away restless too: a hand on the tower, maybe.
    assert not fusion._fast_step_trusted(_settling_with((0, 2, 4, 6), t_settled=1.12))
    # Not heard striking this level at all: nothing is excused.
    fusion = _fusion()
    fusion.add_impacts([_strike(1.10, 6)])
    assert fusion._unexplained_busy(step) == 2


def test_plates_a_cube_strikes_while_a_landing_is_decided_do_not_make_it_suspect() -> None:
    # A knocked cube (or the next one) strikes plates 1 and 0 below, in turn,
    # after the one on 3 first struck it and before its step is decided.
    fusion = _fusion()
    fusion.add_impacts([_strike(1.10, 3), _strike(1.15, 3),
                        _strike(1.25, 1, 120.0), _strike(1.33, 0, 120.0)])
    assert fusion._fast_step_trusted(_settling_with((0, 1)))
    # In any order: the next cube clips 6 and bounces up against 7.
    fusion = _fusion()
    fusion.add_impacts([_strike(1.10, 3), _strike(1.15, 3),
                        _strike(1.20, 6, 120.0), _strike(1.22, 7, 120.0)])
    assert fusion._fast_step_trusted(_settling_with((6, 7)))


def test_restless_plates_heard_only_as_hands_after_the_landing_are_not_excused() -> None:
    fusion = _fusion()
    fusion.add_impacts([_strike(1.10, 3), _strike(1.15, 3), _rumble(1.20, 6), _rumble(1.24, 0)])
    assert fusion._unexplained_busy(_settling_with((0, 6))) == 2
    assert not fusion._fast_step_trusted(_settling_with((0, 6)))


def test_plates_the_next_cube_strikes_on_its_way_down_do_not_make_a_landing_suspect() -> None:
    fusion = _fusion()
    # Rapid throws: the next cube clips 7, then 6, while this one settles on 3.
    fusion.add_impacts([_strike(1.10, 3), _strike(1.15, 3),
                        _strike(1.20, 7, 120.0), _strike(1.24, 6, 120.0)])
    assert fusion._fast_step_trusted(_settling_with((6, 7)))


def test_a_step_doubted_while_the_plate_swung_is_decided_by_its_second_look() -> None:
    fusion = _fusion()
    fusion.add_impacts([_strike(1.00, 3), _strike(1.05, 3)])
    swinging = LoadStep(level=3, t_before_s=0.95, t_settled_s=1.10, t_decided_s=1.16,
                        delta_counts=1.5 * UNIT, before_counts=0.0, after_counts=1.5 * UNIT)
    out = fusion.add_load([swinging], [], 1.2) + fusion.advance(1.5)
    assert _landings(out) == []  # half a cube off: doubted
    still = LoadStep(level=3, t_before_s=0.95, t_settled_s=1.40, t_decided_s=1.46,
                     delta_counts=1.02 * UNIT, before_counts=0.0, after_counts=1.02 * UNIT,
                     revises=True)
    out = fusion.add_load([still], [], 1.5) + fusion.advance(2.0)
    assert _landings(out) == [(3, 1, 1.05)]
    assert not fusion._levels[3].doubted
    # A second look at a step that was not doubted changes nothing.
    again = LoadStep(level=3, t_before_s=0.95, t_settled_s=1.60, t_decided_s=1.66,
                     delta_counts=1.0 * UNIT, before_counts=0.0, after_counts=1.0 * UNIT,
                     revises=True)
    assert _landings(fusion.add_load([again], [], 1.7) + fusion.advance(2.5)) == []


def test_a_clean_two_cube_step_heard_as_two_arrivals_is_two_landings_at_once() -> None:
    fusion = _fusion()
    fusion.add_impacts([_strike(1.00, 2), _strike(1.05, 2), _strike(1.45, 2), _strike(1.50, 2)])
    step = LoadStep(level=2, t_before_s=0.95, t_settled_s=1.60, t_decided_s=1.66,
                    delta_counts=2.02 * UNIT, before_counts=0.0, after_counts=2.02 * UNIT)
    out = fusion.add_load([step], [], 1.7) + fusion.advance(2.0)
    assert _landings(out) == [(2, 1, 1.05), (2, 1, 1.5)]
    # Heard as one drop: left to the settled view.
    fusion = _fusion()
    fusion.add_impacts([_strike(1.00, 2), _strike(1.05, 2)])
    out = fusion.add_load([step], [], 1.7) + fusion.advance(2.0)
    assert _landings(out) == []


def test_a_step_doubted_because_the_tower_shook_is_not_decided_by_a_second_look() -> None:
    fusion = _fusion()
    fusion.add_impacts([_strike(1.00, 3), _strike(1.05, 3)])
    shaken = LoadStep(level=3, t_before_s=0.95, t_settled_s=1.10, t_decided_s=1.16,
                      delta_counts=1.5 * UNIT, before_counts=0.0, after_counts=1.5 * UNIT,
                      busy_levels=5, busy_mask=0b1110110)
    assert _landings(fusion.add_load([shaken], [], 1.2) + fusion.advance(1.5)) == []
    still = LoadStep(level=3, t_before_s=0.95, t_settled_s=1.40, t_decided_s=1.46,
                     delta_counts=1.0 * UNIT, before_counts=0.0, after_counts=1.0 * UNIT,
                     revises=True)
    assert _landings(fusion.add_load([still], [], 1.5) + fusion.advance(2.0)) == []
    assert fusion._levels[3].doubted == [shaken]  # still the settled view's to decide


def test_a_plate_without_landings_of_its_own_swings_like_the_towers_others() -> None:
    fusion = _fusion()
    assert np.isnan(fusion._usual_swing(5, UNIT))
    for level, swing in ((1, 2000.0), (2, 2100.0), (3, 1900.0)):
        fusion._levels[level].landing_swings = [swing]
    # Two cubes' worth on the others: two of this plate's cubes, in its own counts.
    assert fusion._usual_swing(5, UNIT) == 2000.0
    assert fusion._usual_swing(5, 3 * UNIT) == 6000.0
    fusion._levels[5].landing_swings = [500.0, 600.0, 700.0]
    assert fusion._usual_swing(5, UNIT) == 600.0


def test_a_thrown_cube_that_stopped_on_a_plate_new_to_landings_is_found() -> None:
    fusion = _fusion()
    for level, swing in ((1, 2000.0), (2, 2100.0), (3, 1900.0)):
        fusion._levels[level].landing_swings = [swing]
    fusion.cubes_on[5] = 1
    # Plate 5 swings by two cubes after the drop and comes back: one in, one out.
    t = np.arange(4.0, 6.0, 1 / 80)
    values = np.zeros((t.size, 8))
    ring = t >= 5.0
    values[ring, 5] = 2000.0 * np.exp(-(t[ring] - 5.0) / 0.1) * np.cos(60 * (t[ring] - 5.0))
    fusion.load_history.add(t, values, np.ones((t.size, 8), bool))
    drop = [_strike(5.00, 5), _strike(5.05, 5), _strike(5.10, 4), _strike(5.15, 4)]
    assert fusion._stopped_above(4, drop, 4.95, 5.9).level == 5
    # A plate that only swung a little was passed, not stopped on.
    values[ring, 5] *= 0.2
    quiet = _fusion()
    quiet._levels = fusion._levels
    quiet.cubes_on[5] = 1
    quiet.load_history.add(t, values, np.ones((t.size, 8), bool))
    assert quiet._stopped_above(4, drop, 4.95, 5.9) is None


def _ringing(t: np.ndarray, starts: tuple[float, ...], amplitude: float = 1800.0) -> np.ndarray:
    """Readings at ``t`` with plate 5 ringing down from a landing at each of ``starts``."""
    values = np.zeros((t.size, 8))
    for start in starts:
        ring = t >= start
        tau = t[ring] - start
        values[ring, 5] += amplitude * np.exp(-tau / 0.1) * np.cos(60 * tau)
    return values


def _plate_holding(cubes: int, t: np.ndarray, values: np.ndarray) -> Fusion:
    """Plate 5 holds ``cubes``, its landings swing it by two cubes, it read ``values`` at ``t``."""
    fusion = _fusion()
    fusion._levels[5].landing_swings = [2000.0, 2000.0, 2000.0]
    fusion.cubes_on[5] = cubes
    fusion.load_history.add(t, values, np.ones((t.size, 8), bool))
    return fusion


# The thrown cube bounces on plate 5 (5.00, 5.05), the knocked cube lands on 3.
# A stop is never reported: the landing on 3 stays the thrown cube's and
# carries the suspicion that it stopped on 5 (``Landing.maybe_stopped_on``).
_STOP_DROP = ((5.00, 5), (5.05, 5), (5.10, 3), (5.15, 3))
_STOPPED = [(3, 1, 5.15, 5)]
_PASSED = [(3, 1, 5.15, None)]


def _landing_below(fusion: Fusion, now_s: float, *, settled: bool = False) -> list:
    """The landings reported when the knocked cube's landing on 3 is decided at ``now_s``."""
    fusion.add_impacts([_strike(t, level) for t, level in _STOP_DROP])
    out = fusion._landings(_step(3, 5.0, 5.2, 1.0), 1, 0.9, now_s, settled=settled)
    assert not any(isinstance(e, Removal) for e in out)
    return _suspected(out)


def _plate_gaining(
    cubes: int, gain_at: float, seen: tuple[float, float], end: float = 6.0
) -> Fusion:
    """Plate 5 rings from a stop at 5.0 and gains a cube at ``gain_at``.

    The fast view saw that gain from its last still window to its settling, ``seen``.
    """
    t = np.arange(4.0, end, 1 / 80)
    values = _ringing(t, (5.0,))
    values[t >= gain_at, 5] += UNIT
    fusion = _plate_holding(cubes, t, values)
    fusion._recent_steps.append((_step(5, *seen, 1.0), 1))
    return fusion


def _stop_candidate(amplitude: float = 1800.0) -> Fusion:
    """Plate 5 holds a cube and swings like a landing from 5.0 s."""
    t = np.arange(4.0, 6.0, 1 / 80)
    return _plate_holding(1, t, _ringing(t, (5.0,), amplitude))


def test_a_plate_struck_once_counts_as_stopped_on_when_the_knocked_cube_fell_from_rest() -> None:
    # Struck once, 60 ms before the cube below: long enough for a knocked
    # cube to fall from rest; a plate that swung like a landing was stopped on.
    fell = [_strike(5.00, 5), _strike(5.06, 4), _strike(5.12, 4)]
    assert _stop_candidate(1800.0)._stopped_above(4, fell, 4.95, 5.9).level == 5
    assert _stop_candidate(800.0)._stopped_above(4, fell, 4.95, 5.9) is None
    # 25 ms: the thrown cube itself, clipping the edge on its way down.
    passed = [_strike(5.00, 5), _strike(5.025, 4), _strike(5.08, 4)]
    assert _stop_candidate(3000.0)._stopped_above(4, passed, 4.95, 5.9) is None
    # The cube reached a level further down 25 ms after the strike, though
    # the plate it came to rest on was first struck later: it was falling fast.
    past_two = [_strike(5.00, 5), _strike(5.025, 3), _strike(5.08, 2), _strike(5.12, 2)]
    assert _stop_candidate(1800.0)._stopped_above(2, past_two, 4.95, 5.9) is None
    fell_two = [_strike(5.00, 5), _strike(5.06, 3), _strike(5.11, 2), _strike(5.15, 2)]
    assert _stop_candidate(1800.0)._stopped_above(2, fell_two, 4.95, 5.9).level == 5
    # Struck twice (a bounce): stopped on, however soon the cube below came.
    twice = [_strike(5.00, 5), _strike(5.05, 5), _strike(5.065, 4), _strike(5.12, 4)]
    assert _stop_candidate(1800.0)._stopped_above(4, twice, 4.95, 5.9).level == 5
    # Two onsets 10 ms apart are one hit (a tumbling cube's corners, a plate
    # ringing up again), not a bounce: with the cube below 25 ms later, passing.
    one_hit = [_strike(5.00, 5), _strike(5.01, 5), _strike(5.025, 4), _strike(5.08, 4)]
    assert _stop_candidate(1800.0)._stopped_above(4, one_hit, 4.95, 5.9) is None


def test_a_cube_heard_below_long_after_it_struck_a_plate_bounced_past_it() -> None:
    # Struck once and heard below 0.18 s later: in the air in between, off
    # the plate and through the hole, however far the plate swung.
    late = [_strike(5.00, 5), _strike(5.18, 4), _strike(5.24, 4)]
    assert _stop_candidate(3000.0)._stopped_above(4, late, 4.95, 5.9) is None
    in_time = [_strike(5.00, 5), _strike(5.15, 4), _strike(5.21, 4)]
    assert _stop_candidate(3000.0)._stopped_above(4, in_time, 4.95, 5.9).level == 5
    # Bounces over 0.08 s, the plate below 0.22 s after the first: the same.
    brief = [_strike(5.00, 5), _strike(5.05, 5), _strike(5.08, 5), _strike(5.22, 4)]
    assert _stop_candidate(3000.0)._stopped_above(4, brief, 4.95, 5.9) is None
    # Bouncing for 0.15 s, the cube there may have been pushed off at the last.
    long = [_strike(5.00, 5), _strike(5.08, 5), _strike(5.15, 5), _strike(5.24, 4)]
    assert _stop_candidate(3000.0)._stopped_above(4, long, 4.95, 5.9).level == 5


def test_a_plate_that_swung_with_the_whole_tower_was_not_stopped_on() -> None:
    # A knock on the table as the cube fell: every plate swung about as far.
    t = np.arange(4.0, 6.0, 1 / 80)
    knocked = _ringing(t, (5.0,))
    for level in range(8):
        knocked[:, level] = knocked[:, 5] * (0.9 if level != 5 else 1.0)
    fusion = _plate_holding(1, t, knocked)
    for level in range(8):
        fusion._levels[level].landing_swings = [2000.0, 2000.0, 2000.0]
    fell = [_strike(5.00, 5), _strike(5.06, 4), _strike(5.12, 4)]
    assert fusion._stopped_above(4, fell, 4.95, 5.9) is None
    # Plate 5 alone: a stop.
    assert _stop_candidate()._stopped_above(4, fell, 4.95, 5.9).level == 5


def test_a_plate_still_at_once_after_one_blow_was_struck_in_passing() -> None:
    # A damped plate read as one spike of two cubes: struck, and left. The
    # same spike followed by the plate moving on (the thrown cube bouncing
    # and settling there) is a stop.
    t = np.arange(4.0, 6.0, 1 / 80)
    blow = np.zeros((t.size, 8))
    blow[np.argmax(t >= 5.0125), 5] = 4000.0
    fell = [_strike(5.00, 5), _strike(5.06, 4), _strike(5.12, 4)]
    assert _plate_holding(1, t, blow)._stopped_above(4, fell, 4.95, 5.9) is None
    settling = blow.copy()
    settling[(t >= 5.06) & (t < 5.3), 5] = 250.0  # an eighth of a landing's swing
    assert _plate_holding(1, t, settling)._stopped_above(4, fell, 4.95, 5.9).level == 5


def test_at_ten_readings_a_second_the_blow_read_after_the_strike_is_no_sign_of_staying() -> None:
    # A slow converter shows the strike's blow in the reading that covers it
    # (5.0-5.1 s, read at 5.1): 50 ms after the strike that is still the
    # blow, not the plate moving on. Still after it: struck in passing.
    t = np.arange(4.0, 6.0, 1 / 10)
    blow = np.zeros((t.size, 8))
    blow[np.argmin(np.abs(t - 5.1)), 5] = 4000.0
    fell = [_strike(5.00, 5), _strike(5.06, 4), _strike(5.12, 4)]
    assert _plate_holding(1, t, blow)._stopped_above(4, fell, 4.95, 5.9) is None
    # The plate moving on in the readings after the blow: a stop.
    settling = blow.copy()
    settling[(t > 5.15) & (t < 5.45), 5] = 300.0
    assert _plate_holding(1, t, settling)._stopped_above(4, fell, 4.95, 5.9).level == 5


def test_a_strike_on_the_plate_above_soon_after_one_on_the_landing_level_is_its_ceiling() -> None:
    # The cube bounced on plate 4 and hit plate 5 from below 30 ms later:
    # faster than anything falls a module from rest; plate 5 was not stopped on.
    ceiling = [_strike(5.00, 4), _strike(5.03, 5), _strike(5.08, 4)]
    assert _stop_candidate()._stopped_above(4, ceiling, 4.95, 5.9) is None
    # The hole edge of plate 5, the bounce below, then that ceiling: one
    # strike of its own, just before the level below, is a cube passing.
    edge_and_ceiling = [_strike(5.00, 5), _strike(5.024, 4), _strike(5.05, 5), _strike(5.09, 4)]
    assert _stop_candidate()._stopped_above(4, edge_and_ceiling, 4.95, 5.9) is None
    # Struck well before the cube below came, it still was stopped on.
    fell = [_strike(5.00, 5), _strike(5.06, 4), _strike(5.12, 4)]
    assert _stop_candidate()._stopped_above(4, fell, 4.95, 5.9).level == 5
    # Two levels up a strike after the landing level's is no ceiling hit.
    high = [_strike(5.00, 5), _strike(5.05, 3), _strike(5.07, 5), _strike(5.12, 3)]
    assert _stop_candidate()._stopped_above(3, high, 4.95, 5.9).level == 5
    # Nor is one after the knocked cube came down from rest (60 ms after the
    # strike above): that slow a cube does not bounce back up to the plate
    # above; the thrown cube bounced there again. Bounced on, half a
    # landing's swing is enough.
    slow = [_strike(5.00, 5), _strike(5.06, 4), _strike(5.09, 5), _strike(5.14, 4)]
    assert _stop_candidate(1200.0)._stopped_above(4, slow, 4.95, 5.9).level == 5


def test_a_removal_seen_on_the_plate_the_thrown_cube_stopped_on_is_that_knock_down() -> None:
    # The knocked cube left plate 5 before the thrown one settled there: the
    # fast view saw a removal on 5, though its load ends where it was. Weighed
    # leaving, the stop is reported, not only suspected.
    drop = [_strike(5.00, 5), _strike(5.05, 5), _strike(5.10, 3), _strike(5.15, 3)]
    fusion = _stop_candidate()
    fusion._recent_steps.append((_step(5, 5.0, 5.06, -1.0), -1))
    fusion.add_impacts(drop)
    out = fusion._landings(_step(3, 5.0, 5.2, 1.0), 1, 0.9, 5.5)
    assert _landings(out) == [(5, 1, 5.05), (3, 1, 5.15)]
    assert [e.knocked_from for e in out if isinstance(e, Landing) and e.floor == 3] == [5]
    assert [(e.floor, e.knocked) for e in out if isinstance(e, Removal)] == [(5, True)]
    # A gain seen on plate 5 is a cube that came, not one-in, one-out.
    fusion = _stop_candidate()
    fusion._recent_steps.append((_step(5, 5.0, 5.06, 1.0), 1))
    assert fusion._stopped_above(3, drop, 4.95, 5.9) is None


def test_a_cube_thrown_back_soon_after_the_tower_is_closed_is_trusted() -> None:
    """Setting the modules down shakes the plates around the moment the
    contacts close; a cube thrown in a second later is a cube."""
    def step_at(t: float) -> LoadStep:
        return LoadStep(level=3, t_before_s=t, t_settled_s=t + 0.2, t_decided_s=t + 0.26,
                        delta_counts=UNIT, before_counts=0.0, after_counts=UNIT)

    fusion = _fusion()
    fusion.add_load([], [LoadConnection(k, False, 0.2, 0.3) for k in range(5, 8)], 0.3)
    fusion.add_load([], [LoadConnection(k, True, 1.0, 1.0) for k in range(5, 8)], 1.0)
    fusion.add_impacts([_strike(1.45, 3), _strike(2.1, 3)])
    assert not fusion._fast_step_trusted(step_at(1.4))  # hands still on the tower
    # The settled view counts it: a cube was heard striking there after the
    # modules' thump, and the plate began to change 0.8 s after the close.
    assert not fusion._handled_during(step_at(1.8))
    assert fusion._handled_during(step_at(1.3))  # too soon after the close
    # So does the fast view (session 55); unheard, the change waits out
    # the handling guard.
    assert fusion._fast_step_trusted(step_at(1.9))
    assert fusion._fast_step_trusted(step_at(2.05))
    assert not fusion._handled_during(step_at(2.05))
    unheard = _fusion()
    unheard.add_load([], [LoadConnection(k, False, 0.2, 0.3) for k in range(5, 8)], 0.3)
    unheard.add_load([], [LoadConnection(k, True, 1.0, 1.0) for k in range(5, 8)], 1.0)
    assert not unheard._fast_step_trusted(step_at(1.9))
    assert unheard._fast_step_trusted(step_at(2.05))


def test_a_cube_thrown_back_is_not_claimed_by_the_next_cube_landing_next_to_it() -> None:
    """Module 5 lifted at 0.2 s and set back at 1.0 s; plate 3 was pressed
    by the hands while the tower was open (a doubted step at 0.5 s) and
    still moved when a cube thrown back struck it at 1.6 and 1.65 s, so
    its settled change spans the close. The next cube, thrown 0.7 s later,
    came to rest on plate 4 before that change was judged: its landing
    claims the strikes up to its rest, but not the thrown-back cube's,
    which came before it began to fall. The landing on plate 3 is timed by
    its own last bounce after the close, not by the hands' press."""
    fusion = _fusion()
    fusion.add_load([], [LoadConnection(k, False, 0.2, 0.3) for k in range(5, 8)], 0.3)
    fusion.advance(0.9)
    fusion.add_load([], [LoadConnection(k, True, 1.0, 1.0) for k in range(5, 8)], 1.0)
    fusion._doubt(_step(3, 0.4, 0.5, 1.0))
    fusion.add_impacts([_strike(1.6, 3), _strike(1.65, 3), _strike(2.3, 4), _strike(2.35, 4)])
    fusion._landings(_step(4, 2.25, 2.4, 1.0), 1, 0.99, 2.45)
    spanning = LoadStep(level=3, t_before_s=0.1, t_settled_s=2.6, t_decided_s=2.9,
                        delta_counts=UNIT, before_counts=0.0, after_counts=UNIT)
    assert fusion._thrown_back(spanning, 1.0)
    assert _landings(fusion._landings(spanning, 1, 0.9, 2.9, settled=True)) == [(3, 1, 1.65)]


def test_without_load_cells_the_cube_rests_where_its_last_strikes_are_heard() -> None:
    """Acoustic only: loud hole edges on the way down, then a landing whose
    bounces made one onset; the edges must not outvote it."""
    scale, acoustic = CubeScale(n_levels=8), AcousticLevelModel(n_levels=8)
    fusion = Fusion(n_levels=8, first_landings_held=0, scale=scale, acoustic=acoustic)
    drop = [_strike(1.00, 6, 400.0), _strike(1.03, 5, 400.0), _strike(1.07, 4, 300.0)]
    fusion.add_impacts(drop)
    events = fusion.advance(2.0)
    assert [(e.floor, e.source) for e in events if isinstance(e, Landing)] == [(4, "acoustic")]
    # Two bounces heard on the resting level are pooled, a quiet ceiling hit
    # above them between is not where the cube rests.
    fusion = Fusion(n_levels=8, first_landings_held=0, scale=CubeScale(n_levels=8),
                    acoustic=AcousticLevelModel(n_levels=8))
    fusion.add_impacts([_strike(3.00, 7, 400.0), _strike(3.05, 2, 300.0), _strike(3.08, 3, 30.0),
                        _strike(3.12, 2, 100.0)])
    events = fusion.advance(4.0)
    assert [e.floor for e in events if isinstance(e, Landing)] == [2]


def _rumble(t_s: float, level: int) -> TimedImpact:
    """Hands shaking the tower: every plate hears it about alike."""
    peaks = np.full(8, 30.0)
    peaks[level] = 60.0
    return TimedImpact(t_s, Impact(frame=0, channels=(level,), peaks=peaks, floor=np.ones(8)))


def test_a_plate_pressed_while_hands_rumble_on_the_tower_is_left_to_the_settled_view() -> None:
    fusion = _fusion()
    # Before a lift: hands grip the tower (a rumble every 40-60 ms) and press plate 3.
    fusion.add_impacts([_rumble(0.70 + 0.05 * i, i % 8) for i in range(8)])
    assert not fusion._fast_step_trusted(_settling_with((), t_settled=1.12))
    # Rumbles whose loudest plate stands 10.5 dB over the median one are
    # still hands: a cube's strike stands out further.
    fusion = _fusion()
    peaks = np.full(8, 30.0)
    peaks[3] = 30.0 * 10 ** (10.5 / 20)
    fusion.add_impacts([TimedImpact(0.70 + 0.06 * i, Impact(frame=0, channels=(3,), peaks=peaks,
                                                            floor=np.ones(8))) for i in range(6)])
    assert not fusion._fast_step_trusted(_settling_with((), t_settled=1.12))
    # A cube heard among a few such shakes is still a cube.
    fusion = _fusion()
    fusion.add_impacts([_rumble(0.80, 5), _rumble(0.85, 0), _rumble(0.90, 6),
                        _strike(1.05, 3), _strike(1.10, 3)])
    assert fusion._fast_step_trusted(_settling_with((), t_settled=1.12))


def test_without_load_cells_a_faint_last_strike_on_the_plate_above_is_the_ceiling() -> None:
    def decided(drop: list[TimedImpact]) -> list[int]:
        fusion = Fusion(n_levels=8, first_landings_held=0, scale=CubeScale(n_levels=8),
                        acoustic=AcousticLevelModel(n_levels=8))
        fusion.add_impacts(drop)
        return [e.floor for e in fusion.advance(drop[-1].t_s + 1.0) if isinstance(e, Landing)]

    edge = _strike(1.00, 6, 400.0)
    # The cube rests on 3; bouncing, it touches the underside of plate 4.
    assert decided([edge, _strike(1.05, 3, 300.0), _strike(1.09, 4, 40.0)]) == [3]
    # As loud as the strike below it: a strike of its own, not a touch.
    assert decided([edge, _strike(1.05, 3, 300.0), _strike(1.09, 4, 200.0)]) == [4]


def test_a_confirmed_landing_teaches_the_ear_its_last_bounce_not_a_later_strike() -> None:
    fusion = _fusion()
    # The cube's bounces on 3, then the next cube clips the hole edge of 6
    # before the plate of 3 is seen to settle.
    fusion.add_impacts([_strike(1.00, 3), _strike(1.05, 3), _strike(1.10, 6)])
    events = fusion.add_load([_step(3, 0.9, 1.12, 1.0)], [], 1.5) + fusion.advance(1.5)
    assert _landings(events) == [(3, 1, 1.05)]
    assert fusion.acoustic.counts[3] == 1 and fusion.acoustic.counts[6] == 0
    assert fusion.acoustic.classify(_strike(2.0, 3).peaks).level == 3
    learnt = fusion.acoustic.sums[3]
    assert int(np.argmax(learnt)) == 3


def test_an_arrival_read_halfway_on_a_ringing_plate_is_one_landing_when_its_rest_comes() -> None:
    def fast(t_before: float, t_settled: float, before: float, after: float) -> LoadStep:
        return LoadStep(level=3, t_before_s=t_before, t_settled_s=t_settled,
                        t_decided_s=t_settled + 0.06, delta_counts=(after - before) * UNIT,
                        before_counts=before * UNIT, after_counts=after * UNIT)

    fusion = _fusion()
    fusion.add_impacts([_strike(1.00, 3), _strike(1.05, 3)])
    out = fusion.add_load([fast(0.95, 1.10, 0.0, 1.0)], [], 1.2) + fusion.advance(1.4)
    assert _landings(out) == [(3, 1, 1.05)]
    # The next cube lands while the plate still rings: a window mean halfway,
    # then the rest of the cube.
    fusion.add_impacts([_strike(1.50, 3), _strike(1.56, 3)])
    out = fusion.add_load([fast(1.45, 1.60, 1.0, 1.45)], [], 1.7) + fusion.advance(1.75)
    assert _landings(out) == []
    out = fusion.add_load([fast(1.65, 1.72, 1.45, 2.02)], [], 1.8) + fusion.advance(2.0)
    assert _landings(out) == [(3, 1, 1.56)]
    assert fusion.cubes_on[3] == 2 and fusion._levels[3].doubted == []
    # Half a cube and then nothing more: still the settled view's to decide.
    fusion.add_impacts([_strike(2.50, 3)])
    out = fusion.add_load([fast(2.45, 2.60, 2.02, 2.50)], [], 2.7) + fusion.advance(3.0)
    out += fusion.add_load([fast(3.10, 3.20, 2.50, 2.52)], [], 3.3) + fusion.advance(3.5)
    assert _landings(out) == []


def test_a_plate_clipped_by_two_throws_in_turn_was_not_bounced_on() -> None:
    fusion = _fusion()
    fusion._levels[6].landing_swings = [2000.0, 2000.0, 2000.0]
    fusion.cubes_on[6] = 1
    t = np.arange(4.0, 8.0, 1 / 80)
    values = np.zeros((t.size, 8))
    ring = t >= 5.0  # plate 6 jolted by the first cube's clip and still swinging
    values[ring, 6] = 1800.0 * np.exp(-(t[ring] - 5.0) / 0.5) * np.cos(60 * (t[ring] - 5.0))
    for landed in (5.1, 5.8):  # plate 3 swung by each cube landing on it
        after = t >= landed
        values[after, 3] += UNIT + 2000.0 * np.exp(-(t[after] - landed) / 0.05)
    fusion.load_coverage.add(t)
    fusion.load_history.add(t, values, np.ones((t.size, 8), bool))
    # Two cubes thrown 0.7 s apart, each clipping the hole of 6 on its way to 3.
    fusion.add_impacts([_strike(5.00, 6), _strike(5.03, 4), _strike(5.10, 3), _strike(5.15, 3)])
    first = LoadStep(level=3, t_before_s=5.05, t_settled_s=5.20, t_decided_s=5.26,
                     delta_counts=UNIT, before_counts=0.0, after_counts=UNIT)
    out = fusion.add_load([first], [], 5.3) + fusion.advance(5.5)
    assert _landings(out) == [(3, 1, 5.15)]
    fusion.add_impacts([_strike(5.70, 6), _strike(5.73, 5), _strike(5.80, 3), _strike(5.85, 3)])
    step = LoadStep(level=3, t_before_s=5.75, t_settled_s=5.90, t_decided_s=5.96,
                    delta_counts=UNIT, before_counts=UNIT, after_counts=2 * UNIT)
    out = fusion.add_load([step], [], 6.0) + fusion.advance(6.2)
    # Not a cube that stopped on 6 and knocked one down to 3: one landing.
    assert _landings(out) == [(3, 1, 5.85)]


def test_a_landing_is_never_timed_by_an_onset_before_its_plate_was_last_still() -> None:
    # Talk made an onset on plate 3 a second before; the cube's own bounces
    # there went unheard (it clipped a hole edge on 5 just before, heard).
    # The plate was still until 1.05 s.
    fusion = _fusion()
    fusion.add_impacts([_strike(0.2, 3), _strike(0.98, 5)])
    step = _step(3, 1.05, 1.2, 1.0)
    assert _landings(fusion.add_load([step], [], 1.5) + fusion.advance(2.0)) == [(3, 1, 1.2)]
    # A bounce heard there after (up to the converter's lag before) is the rest.
    fusion = _fusion()
    fusion.add_impacts([_strike(0.2, 3), _strike(0.98, 5), _strike(1.02, 3)])
    assert _landings(fusion.add_load([step], [], 1.5) + fusion.advance(2.0)) == [(3, 1, 1.02)]


def test_a_landing_is_never_timed_by_the_previous_cube_on_its_level() -> None:
    fusion = _fusion()
    fusion.add_impacts([_strike(1.00, 4), _strike(1.05, 4)])
    first = LoadStep(level=4, t_before_s=0.95, t_settled_s=1.10, t_decided_s=1.16,
                     delta_counts=UNIT, before_counts=0.0, after_counts=UNIT)
    assert _landings(fusion.add_load([first], [], 1.2) + fusion.advance(1.3)) == [(4, 1, 1.05)]
    # The next cube's bounces on 4 are heard loudest on 5 (a hotter disc).
    fusion.add_impacts([_strike(1.50, 5), _strike(1.56, 5)])
    second = LoadStep(level=4, t_before_s=1.45, t_settled_s=1.62, t_decided_s=1.68,
                      delta_counts=UNIT, before_counts=UNIT, after_counts=2 * UNIT)
    assert _landings(fusion.add_load([second], [], 1.7) + fusion.advance(1.9)) == [(4, 1, 1.56)]


def test_two_cubes_on_one_plate_a_fifth_of_a_second_apart_are_split_by_the_strike_above() -> None:
    step = LoadStep(level=6, t_before_s=0.95, t_settled_s=1.55, t_decided_s=1.61,
                    delta_counts=2.02 * UNIT, before_counts=0.0, after_counts=2.02 * UNIT)
    first = [_strike(1.00, 6), _strike(1.07, 6), _strike(1.12, 6)]
    second = [_strike(1.32, 6), _strike(1.40, 6), _strike(1.45, 6)]
    # The next cube clipped the hole of 7 in the 0.2 s between the two runs.
    fusion = _fusion()
    fusion.add_impacts([*first, _strike(1.28, 7), *second])
    out = fusion.add_load([step], [], 1.7) + fusion.advance(2.0)
    assert _landings(out) == [(6, 1, 1.12), (6, 1, 1.45)]
    # Without it a gap that short may be within one cube's bounces: left to
    # the settled view.
    fusion = _fusion()
    fusion.add_impacts([*first, *second])
    assert _landings(fusion.add_load([step], [], 1.7) + fusion.advance(2.0)) == []


def test_plates_still_ringing_from_their_own_cubes_do_not_make_a_landing_suspect() -> None:
    def fusion_heard() -> Fusion:
        fusion = _fusion()
        fusion.add_impacts([_strike(1.00, 3), _strike(1.05, 3)])
        return fusion

    step = _settling_with((0, 6))  # two other plates restless while 3 settled
    quiet = fusion_heard()
    assert quiet._unexplained_busy(step) == 2 and not quiet._fast_step_trusted(step)
    # Rapid throws: cubes landed on 0 and 6 a moment before; their plates ring.
    rapid = fusion_heard()
    rapid._levels[0].landed_t, rapid._levels[6].landed_t = 0.70, 0.80
    assert rapid._unexplained_busy(step) == 0 and rapid._fast_step_trusted(step)


def test_two_cubes_on_the_top_plate_are_split_where_a_strike_is_far_louder_than_the_last() -> None:
    step = LoadStep(level=7, t_before_s=0.95, t_settled_s=1.45, t_decided_s=1.51,
                    delta_counts=2.0 * UNIT, before_counts=0.0, after_counts=2.0 * UNIT)
    fading = [_strike(1.00, 7, 400.0), _strike(1.07, 7, 150.0), _strike(1.12, 7, 60.0)]
    fusion = _fusion()  # nothing above 7 to hear the next cube on its way
    fusion.add_impacts([*fading, _strike(1.18, 7, 400.0), _strike(1.30, 7, 150.0)])
    out = fusion.add_load([step], [], 1.6) + fusion.advance(2.0)
    assert _landings(out) == [(7, 1, 1.12), (7, 1, 1.3)]
    # Bounces that only fade are one cube's: left to the settled view.
    fusion = _fusion()
    fusion.add_impacts([*fading, _strike(1.18, 7, 50.0), _strike(1.30, 7, 40.0)])
    assert _landings(fusion.add_load([step], [], 1.6) + fusion.advance(2.0)) == []


def test_a_plate_bounced_on_before_the_knocked_cube_fell_needs_less_swing() -> None:
    # Struck twice, and the cube below came 80 ms after the first strike (a
    # fall from rest): a swing of 0.6 landings is enough, in a quick series too.
    bounced = [_strike(5.00, 5), _strike(5.05, 5), _strike(5.08, 3), _strike(5.14, 3)]
    fusion = _stop_candidate(1200.0)
    swing = fusion.load_history.swing(5, 4.95, 5.9) / 2000.0
    assert 0.5 < swing < 0.7
    assert fusion._stopped_above(3, bounced, 4.95, 5.9).level == 5
    fusion = _stop_candidate(1200.0)
    fusion._levels[1].landed_t = 4.5
    assert fusion._stopped_above(3, bounced, 4.95, 5.9).level == 5
    # Two cubes of a quick series striking the plate in turn, a throw's
    # interval apart, did not bounce on it.
    in_turn = [_strike(4.70, 5), _strike(5.00, 5), _strike(5.08, 3), _strike(5.14, 3)]
    assert _stop_candidate(1200.0)._stopped_above(3, in_turn, 4.65, 5.9) is None
    # Nor when nothing was heard arriving below (talking may mask strikes),
    # nor when the cube below came as soon as a passing cube would.
    unheard = [_strike(5.00, 5), _strike(5.05, 5)]
    assert _stop_candidate(1200.0)._stopped_above(3, unheard, 4.95, 5.9) is None
    fast = [_strike(5.00, 5), _strike(5.02, 3), _strike(5.05, 5), _strike(5.10, 3)]
    assert _stop_candidate(1200.0)._stopped_above(3, fast, 4.95, 5.9) is None
    # Struck once, it needs the full swing of a landing.
    once = [_strike(5.00, 5), _strike(5.08, 3), _strike(5.14, 3)]
    assert _stop_candidate(1200.0)._stopped_above(3, once, 4.95, 5.9) is None


def test_strikes_that_timed_a_landing_next_door_are_not_heard_for_a_later_step() -> None:
    # A cube landed on plate 5 (its last bounce at 5.50). A second later a
    # hand on plate 5 shakes plate 6 by about a cube: nothing struck since.
    fusion = _fusion()
    fusion.add_impacts([_strike(5.42, 5), _strike(5.45, 6), _strike(5.50, 5)])
    fusion._levels[5].landed_t = 5.50
    step = LoadStep(level=6, t_before_s=6.40, t_settled_s=6.46, t_decided_s=6.50,
                    delta_counts=UNIT, before_counts=0.0, after_counts=UNIT)
    assert not fusion._heard_a_drop(step)
    # A cube that struck plate 6 after that landing was heard.
    fusion.add_impacts([_strike(6.35, 6)])
    assert fusion._heard_a_drop(step)


def test_a_stop_decided_late_is_judged_before_the_next_cube_lands_on_its_plate() -> None:
    # A thrown cube stopped on plate 5 and knocked its cube down to 3 (rested
    # at 5.2). The settled view decided that landing at 6.5, after the next
    # cube of the series had landed on plate 5 (at 5.8).
    fusion = _plate_gaining(1, 5.8, (5.75, 5.9), end=7.0)
    fusion.add_impacts([_strike(t, level) for t, level in _STOP_DROP])
    out = fusion._landings(_step(3, 5.0, 5.2, 1.0), 1, 0.9, 6.5, settled=True)
    assert _suspected(out) == _STOPPED
    assert not any(isinstance(e, Removal) for e in out)


def test_a_stop_is_judged_from_the_thrown_cubes_strikes_not_the_cube_before() -> None:
    # The cube before landed on plate 5 at 4.6; after a silence the thrown
    # cube stopped on 5 and knocked a cube down to 3. Measured from the
    # earlier cube's strikes, plate 5 would have gained a cube in the drop.
    t = np.arange(4.0, 6.0, 1 / 80)
    values = _ringing(t, (5.0,))
    values[t >= 4.6, 5] += UNIT
    fusion = _plate_holding(2, t, values)
    fusion.add_impacts([_strike(4.50, 6), _strike(4.55, 5), _strike(4.60, 5)])
    fusion._levels[5].landed_t = 4.60
    assert _landing_below(fusion, 5.5) == _STOPPED
    # Strikes with no silence between them are one drop: the plate gained.
    fusion = _plate_holding(2, t, values)
    rumble = [_strike(4.6 + 0.1 * i, 6) for i in range(1, 4)]
    fusion.add_impacts([_strike(4.55, 5), _strike(4.60, 5), *rumble])
    assert _landing_below(fusion, 5.5) == _PASSED


def test_two_throws_in_turn_may_each_stop_on_one_plate_and_knock_a_cube_down() -> None:
    t = np.arange(4.0, 7.0, 1 / 80)
    fusion = _plate_holding(2, t, _ringing(t, (5.0, 5.7)))
    fusion.add_impacts([_strike(5.00, 5), _strike(5.05, 5), _strike(5.10, 3), _strike(5.15, 3)])
    first = fusion._landings(_step(3, 5.0, 5.2, 1.0), 1, 0.9, 5.5)
    assert _suspected(first) == [(3, 1, 5.15, 5)]
    # The next throw, 0.7 s later, stopped there too: not the first one's stop again.
    fusion.add_impacts([_strike(5.70, 5), _strike(5.75, 5), _strike(5.80, 2), _strike(5.85, 2)])
    second = fusion._landings(_step(2, 5.7, 5.9, 1.0), 1, 0.9, 6.2)
    assert _suspected(second) == [(2, 1, 5.85, 5)]
    # The same drop decided once more (a second look) finds no second stop.
    again = fusion._landings(_step(2, 5.7, 5.9, 1.0), 1, 0.9, 6.3)
    assert [(e.floor, e.maybe_stopped_on) for e in again if isinstance(e, Landing)] == [(2, None)]


def test_a_fall_from_rest_is_longer_than_forty_ms_however_the_frame_times_round() -> None:
    frame = 0.004
    for first in (1250, 2979, 3001, 12503):
        at = first * frame
        t = np.arange(at - 1.0, at + 1.0, 1 / 80)
        candidate = _plate_holding(1, t, _ringing(t, (at,), 3000.0))
        rest = _strike((first + 20) * frame, 4)
        exactly = [_strike(at, 5), _strike((first + 10) * frame, 4), rest]
        assert candidate._stopped_above(4, exactly, at - 0.05, at + 0.9) is None
        later = [_strike(at, 5), _strike((first + 11) * frame, 4), rest]
        assert candidate._stopped_above(4, later, at - 0.05, at + 0.9).level == 5


def test_a_stop_is_judged_up_to_the_next_cube_heard_on_its_plate() -> None:
    # The knocked cube fell from plate 5 to plate 1 and rested late (5.4);
    # the next cube of the series struck plate 5 at 5.45 and its load shows
    # from 5.5, before the landing on 1 was decided (5.6).
    t = np.arange(4.0, 6.0, 1 / 80)
    values = _ringing(t, (5.0,))
    values[t >= 5.5, 5] += UNIT
    fusion = _plate_holding(1, t, values)
    fusion.add_impacts([_strike(5.00, 5), _strike(5.05, 5), _strike(5.20, 3),
                        _strike(5.35, 1), _strike(5.40, 1), _strike(5.45, 5)])
    out = fusion._landings(_step(1, 5.0, 5.4, 1.0), 1, 0.9, 5.6)
    assert _suspected(out) == [(1, 1, 5.4, 5)]


def test_a_gain_read_across_a_stop_and_the_next_cube_does_not_hide_the_stop() -> None:
    # Plate 5 rang on from the stop (5.0) until the next cube settled it: the
    # fast view read that cube's gain from the last still window before the
    # stop (5.02) to 5.9, after the landing below was decided (5.45).
    assert _landing_below(_plate_gaining(1, 5.65, (5.02, 5.9)), 5.45) == _STOPPED
    # A gain the plate had settled to by then was the thrown cube landing there.
    fusion = _plate_gaining(1, 5.65, (5.02, 5.3))
    assert _landing_below(fusion, 5.45) == _PASSED


def test_a_plate_the_cube_before_landed_on_is_judged_from_after_that_landing() -> None:
    # The cube before landed on plate 5 (seen settled at 4.75) in the same
    # run of strikes; then the thrown cube stopped there and knocked one down.
    fusion = _plate_gaining(2, 4.6, (4.55, 4.75))
    rumble = [_strike(4.6 + 0.1 * i, 6) for i in range(1, 4)]
    fusion.add_impacts([_strike(4.55, 5), _strike(4.60, 5), *rumble])
    assert _landing_below(fusion, 5.5) == _STOPPED


def test_a_plate_still_ringing_from_the_cube_before_is_measured_from_after_that_cube() -> None:
    # The cube before landed on plate 5 at 4.6 and rang it hard; the fast
    # view saw it settle (4.62). The thrown cube stopped there at 5.0: the
    # plate's level before it is read from after that cube's arrival only.
    t = np.arange(4.0, 6.0, 1 / 80)
    values = _ringing(t, (5.0,))
    before = t >= 4.6
    tau = t[before] - 4.6
    values[before, 5] += UNIT + 3000.0 * np.exp(-tau / 0.4) * np.cos(40 * tau)
    fusion = _plate_holding(2, t, values)
    fusion._recent_steps.append((_step(5, 4.58, 4.62, 1.0), 1))
    fusion.add_impacts([_strike(4.55, 5), _strike(4.60, 5)])
    assert _landing_below(fusion, 5.5) == _STOPPED


def test_a_plate_struck_once_long_before_the_cube_below_needs_under_half_a_swing() -> None:
    # Struck once, and the cube just below came 52 ms later (two thirds of a
    # fall from rest over a module): too late for a cube passing by, so the
    # thrown cube stopped there though its plate swung only 0.47 times as
    # far as a landing; 0.42 is not enough.
    clear = [_strike(5.000, 5), _strike(5.052, 4), _strike(5.12, 4)]
    assert _stop_candidate(940.0)._stopped_above(4, clear, 4.95, 5.9).level == 5
    assert _stop_candidate(840.0)._stopped_above(4, clear, 4.95, 5.9) is None
    # 48 ms later it may have been passing; and two levels further down, the
    # first strike below may have been the thrown cube at another hole edge.
    sooner = [_strike(5.000, 5), _strike(5.048, 4), _strike(5.12, 4)]
    assert _stop_candidate(1200.0)._stopped_above(4, sooner, 4.95, 5.9) is None
    deeper = [_strike(5.00, 5), _strike(5.072, 3), _strike(5.12, 3)]
    assert _stop_candidate(1200.0)._stopped_above(3, deeper, 4.95, 5.9) is None
    # Struck twice, the bounce bar holds (half a landing): a strike heard on
    # plate 5 may be the bounce below misplaced, which makes the fall look long.
    twice = [_strike(5.000, 5), _strike(5.060, 5), _strike(5.13, 4), _strike(5.17, 4)]
    assert _stop_candidate(940.0)._stopped_above(4, twice, 4.95, 5.9) is None
    assert _stop_candidate(1040.0)._stopped_above(4, twice, 4.95, 5.9).level == 5
    # In a quick series the plate may still swing from the cube before.
    fusion = _stop_candidate(1200.0)
    fusion._levels[1].landed_t = 4.5
    assert fusion._stopped_above(4, clear, 4.95, 5.9) is None


def _unheard_step(swing_cubes: float, cubes: float = 1.0) -> tuple[Fusion, LoadStep]:
    """Plate 7 read ``cubes`` more after ringing by ``swing_cubes``; no strike heard near it."""
    fusion = _fusion()
    for level in range(8):
        fusion._levels[level].landing_swings = [10 * UNIT] * 3  # landings swing by ten cubes
    fusion.scale.learn_sign(7, UNIT, cubes_added=True)  # plate 7 has had landings
    t = np.arange(4.0, 6.0, 1 / 80)
    values = np.zeros((t.size, 8))
    ring = t >= 5.0
    tau = t[ring] - 5.0
    values[ring, 7] = cubes * UNIT + swing_cubes * UNIT * np.exp(-tau / 0.1) * np.cos(60 * tau)
    fusion.load_history.add(t, values, np.ones((t.size, 8), bool))
    fusion.add_impacts([_strike(3.0, 2)])  # the piezos work: the room is only noisy
    step = LoadStep(level=7, t_before_s=5.0, t_settled_s=5.4, t_decided_s=5.46,
                    delta_counts=cubes * UNIT, before_counts=0.0, after_counts=cubes * UNIT)
    return fusion, step


def test_a_clean_cube_step_not_heard_but_swinging_its_plate_like_a_landing_is_trusted() -> None:
    # A cube dropped onto the top plate strikes too softly to be heard in a
    # noisy room; its plate rings as far as a landing's.
    fusion, step = _unheard_step(swing_cubes=9.0)
    assert not fusion._heard_a_drop(step)
    assert fusion._fast_step_trusted(step)
    assert _landings(fusion._fast_step_event(step, 5.46)) == [(7, 1, 5.4)]
    # Its first cube, which tells which way its cell is wired, must be heard.
    fusion, step = _unheard_step(swing_cubes=9.0)
    fusion.scale.sign[7] = 0.0
    fusion.scale._votes[7] = 0.0
    assert not fusion._fast_step_trusted(step)
    # A hand pressing the plate by a cube's weight barely rings it.
    fusion, step = _unheard_step(swing_cubes=2.0)
    assert not fusion._fast_step_trusted(step)
    # Nor is a swinging plate trusted with a step between whole cubes.
    fusion, step = _unheard_step(swing_cubes=9.0, cubes=1.2)
    assert not fusion._fast_step_trusted(step)


def _touched_step(
    swing_cubes: float, strikes: list[TimedImpact], sign: float = 1.0
) -> tuple[Fusion, LoadStep]:
    """Plate 3 a cube heavier, rung by ``swing_cubes`` (a press: none), with ``strikes`` heard.

    ``sign``: -1 for a plate read a cube lighter (a cell wired the other way, or pulled up).
    """
    fusion = _fusion()
    for level in range(8):
        fusion._levels[level].landing_swings = [12 * UNIT] * 3  # landings swing by 12 cubes
    t = np.arange(4.0, 6.0, 1 / 80)
    values = np.zeros((t.size, 8))
    tau = t - 5.0
    values[:, 3] = sign * UNIT * np.clip(tau / 0.1, 0.0, 1.0)  # pressed smoothly in 0.1 s
    values[tau >= 0, 3] += swing_cubes * UNIT * np.exp(-tau[tau >= 0] / 0.05) * np.sin(
        60 * tau[tau >= 0])
    fusion.load_history.add(t, values, np.ones((t.size, 8), bool))
    fusion.add_impacts(strikes)
    fusion.scale.learn_sign(3, UNIT, cubes_added=True)  # plate 3 has had landings
    step = LoadStep(level=3, t_before_s=4.95, t_settled_s=5.15, t_decided_s=5.21,
                    delta_counts=sign * UNIT, before_counts=0.0, after_counts=sign * UNIT)
    return fusion, step


def test_a_plate_pressed_by_a_touch_that_sounded_like_a_strike_is_no_landing() -> None:
    # A hand touches level 3 (one soft strike there) and presses its plate a cube down.
    fusion, step = _touched_step(0.0, [_strike(5.0, 3, 100.0)])
    assert fusion._heard_a_drop(step)
    assert not fusion._fast_step_trusted(step)
    # A cube landing there rings its plate.
    fusion, step = _touched_step(6.0, [_strike(5.0, 3, 100.0)])
    assert fusion._fast_step_trusted(step)
    # A cube knocked down a level barely swings its plate, but comes with a
    # throw's strikes (the thrown cube on 4 and the fall).
    fusion, step = _touched_step(0.0, [_strike(4.9, 4), _strike(4.95, 4), _strike(5.0, 3)])
    assert fusion._fast_step_trusted(step)
    # A plate with no landing yet, read a cube lighter by a hand: its cell
    # might be wired the other way, so that is no gain of a cube either.
    fusion, step = _touched_step(0.0, [_strike(5.0, 3, 100.0)], sign=-1.0)
    fusion.scale.sign[3] = fusion.scale._votes[3] = 0.0
    assert fusion._pressed(step)
    assert not fusion._fast_step_trusted(step)


def test_a_plates_first_cube_is_trusted_only_when_heard_striking_that_plate() -> None:
    # A kit of mixed cells: no level borrows another's cube, so plate 6's
    # first step teaches its size for the rest of the session.
    fusion = Fusion(n_levels=8, first_landings_held=0, scale=CubeScale(n_levels=8),
                    acoustic=AcousticLevelModel(n_levels=8))
    for level, unit in ((7, UNIT), (5, 1.5 * UNIT), (3, 1.1 * UNIT)):
        fusion.scale.learn(level, unit, 1)
    assert fusion.scale.unit(6) is None
    step = LoadStep(level=6, t_before_s=1.0, t_settled_s=1.2, t_decided_s=1.26,
                    delta_counts=0.4 * UNIT, before_counts=0.0, after_counts=0.4 * UNIT)
    # A cube heard landing on 7 while a hand moved plate 6 a little.
    fusion.add_impacts([_strike(1.05, 7), _strike(1.10, 7)])
    assert not fusion._fast_step_trusted(step)
    # A cube heard striking plate 6 itself.
    fusion.add_impacts([_strike(1.12, 6), _strike(1.16, 6)])
    assert fusion._fast_step_trusted(step)


def test_a_plates_first_step_against_the_other_cells_sign_must_swing_like_a_landing() -> None:
    strikes = [_strike(4.9, 5), _strike(4.95, 4), _strike(5.0, 3), _strike(5.05, 3)]
    # Read a cube lighter, heard on its plate, with no landing there yet: a
    # hand lifting the plate (it barely swings) ...
    fusion, step = _touched_step(0.0, strikes, sign=-1.0)
    fusion.scale.sign[3] = fusion.scale._votes[3] = 0.0
    assert not fusion._fast_step_trusted(step)
    # ... or a cube on a cell wired the other way (it swings like a landing).
    fusion, step = _touched_step(12.0, strikes, sign=-1.0)
    fusion.scale.sign[3] = fusion.scale._votes[3] = 0.0
    assert fusion._fast_step_trusted(step)


def test_a_plate_jolted_by_part_of_a_cube_does_not_vote_on_its_cells_sign() -> None:
    fusion = _fusion()
    # A landing next door jolts plate 3 down by half a cube: no cube came or left.
    jolt = LoadStep(level=3, t_before_s=1.0, t_settled_s=1.1, t_decided_s=1.16,
                    delta_counts=-0.45 * UNIT, before_counts=0.0, after_counts=-0.45 * UNIT)
    assert fusion._fast_step_event(jolt, 1.16) == []
    assert not fusion.scale.knows_sign(3)
    # Its first cube is a landing, not a cube taken away.
    fusion.add_impacts([_strike(3.0, 3)])
    out = fusion._fast_step_event(_step(3, 2.9, 3.1, 1.0), 3.4)
    assert _landings(out) == [(3, 1, 3.0)]
    assert fusion.scale.sign[3] == 1.0


def _jolted(holds: bool) -> tuple[Fusion, LoadStep]:
    """Plate 3 rose by a cube between two readings just as it was struck; it holds or goes back."""
    values = np.zeros((_T.size, 8))
    values[(_T >= 1.0) & (holds | (_T < 1.07)), 3] = UNIT
    fusion = _fusion(values)
    fusion.add_impacts([_strike(0.995, 3)])
    step = LoadStep(level=3, t_before_s=0.9875, t_settled_s=1.0, t_decided_s=1.0625,
                    delta_counts=UNIT, before_counts=0.0, after_counts=UNIT)
    return fusion, step


def test_a_step_read_on_a_strikes_jolt_is_read_again_once_the_jolt_has_passed() -> None:
    # A cube clipping the hole edge on its way past jolts the plate for a few readings.
    fusion, step = _jolted(holds=False)
    assert fusion.add_load([step], [], 1.0625) + fusion.advance(1.0625) == []
    assert fusion.advance(1.5) == []
    # Left to the settled view, which times what it counts by the doubted step.
    assert [(s.level, s.t_settled_s) for s in fusion._levels[3].doubted] == [(3, 1.0)]
    # A cube that came to rest there is still there a tenth of a second later.
    fusion, step = _jolted(holds=True)
    assert fusion.add_load([step], [], 1.0625) + fusion.advance(1.0625) == []
    out = fusion.advance(1.5)
    assert _landings(out) == [(3, 1, 0.995)]
    assert [round(e.t_decided, 3) for e in out] == [1.125]
    # Evidence handed over late decides both looks at once, in order.
    fusion, step = _jolted(holds=True)
    fusion.add_load([step], [], 1.0625)
    assert [round(e.t_decided, 3) for e in fusion.advance(1.5)] == [1.125]


def _touched(holds: bool) -> tuple[Fusion, LoadStep]:
    """Plate 3 rose smoothly by a cube after a soft strike there; it holds or goes back."""
    values = np.zeros((_T.size, 8))
    values[:, 3] = np.clip((_T - 0.9) / 0.1, 0.0, 1.0) * UNIT
    if not holds:
        values[_T >= 1.05, 3] = 0.0
    values += np.random.default_rng(3).normal(0.0, 10.0, values.shape)  # the cells' noise
    fusion = _fusion(values)
    for level in range(8):
        fusion._levels[level].landing_swings = [5 * UNIT] * 3  # landings swing by five cubes
    fusion.add_impacts([_strike(0.9, 3)])
    step = LoadStep(level=3, t_before_s=0.9, t_settled_s=1.0, t_decided_s=1.0625,
                    delta_counts=UNIT, before_counts=0.0, after_counts=UNIT)
    return fusion, step


def test_a_step_that_swung_its_plate_less_than_a_landing_is_read_again() -> None:
    # Heard and clean, but the plate swung a fifth as far as a landing: a
    # hand touching the tower (a soft strike) may be pressing it.
    fusion, step = _touched(holds=False)
    assert fusion.add_load([step], [], 1.0625) + fusion.advance(1.0625) == []
    assert fusion.advance(1.5) == []
    assert [s.t_settled_s for s in fusion._levels[3].doubted] == [1.0]
    # A cube is still there 125 ms on.
    fusion, step = _touched(holds=True)
    assert fusion.add_load([step], [], 1.0625) + fusion.advance(1.0625) == []
    out = fusion.advance(1.5)
    assert _landings(out) == [(3, 1, 0.9)]
    assert [round(e.t_decided, 3) for e in out] == [1.125]


def test_the_settled_views_first_step_counts_from_the_tower_the_stream_began_with() -> None:
    # A cube that landed in the stream's first second, the fast view having
    # doubted it: the settled view's first step on the plate is a landing
    # (from the empty plate the stream began with). A plate back on the
    # tower after a lift is learnt anew instead.
    fusion = _fusion()
    fusion.accounted[:] = np.nan
    events = fusion.add_settled_step(_step(3, 0.3, 0.7, 1))
    assert [(type(e).__name__, e.floor, e.cubes) for e in events] == [("Landing", 3, 1)]
    fusion.add_load([], [LoadConnection(k, False, 2.0, 2.1) for k in range(5, 8)], 2.1)
    fusion.add_load([], [LoadConnection(k, True, 3.0, 3.0) for k in range(5, 8)], 3.0)
    assert fusion.add_settled_step(_step(5, 3.1, 3.5, 1)) == []


def _settled(level: int, t: float, before_cubes: float, after_cubes: float) -> LoadStep:
    return LoadStep(level=level, t_before_s=t, t_settled_s=t + 0.4, t_decided_s=t + 0.7,
                    delta_counts=(after_cubes - before_cubes) * UNIT,
                    before_counts=before_cubes * UNIT, after_counts=after_cubes * UNIT)


def test_a_plate_whose_size_a_hand_taught_learns_it_again_from_the_next_cube() -> None:
    # Plate 2's first "cube" was a hand's touch, a twentieth of a cube.
    fusion = _fusion()
    fusion.scale.forget(2)
    fusion.scale.learn(2, UNIT / 20, 1)
    # The next cube reads as twenty, unheard as such: one cube, learnt anew.
    out = fusion.add_settled_step(_settled(2, 5.0, 0.0, 1.0))
    assert [(e.floor, e.cubes) for e in out if isinstance(e, Landing)] == [(2, 1)]
    assert fusion.scale.unit(2) == UNIT
    # Three cubes heard arriving one by one on a plate learnt from one
    # landing are three landings, and its size stands.
    fusion = _fusion()
    fusion.add_impacts([_strike(t, 4) for t in (5.0, 5.05, 5.6, 5.65, 6.2, 6.25)])
    out = fusion.add_settled_step(_step(4, 4.9, 6.5, 3.0))
    assert [(e.floor, e.cubes) for e in out if isinstance(e, Landing)] == [(4, 1)] * 3
    assert fusion.scale.unit(4) == UNIT


def _half_cube_heard_on_plate_2(busy_before: int) -> tuple[Fusion, list]:
    """Plate 2 learnt its size from two cubes that settled as one; then a single cube lands.

    Six steps elsewhere came first with ``busy_before`` other plates
    restless; the single cube's step has all seven restless, the plates
    above struck by it on its way down.
    """
    fusion = _fusion()
    fusion.scale.forget(2)
    fusion.scale.learn(2, 2 * UNIT, 1)
    restless = (0, 1, 3, 4, 5, 6, 7)
    for k in range(6):
        t = 1.0 + 4.0 * k
        fusion.add_impacts([_strike(t + 0.3, 5)])
        fusion.add_settled_step(replace(_settled(5, t, k, k + 1), busy_levels=busy_before,
                                        busy_mask=(1 << busy_before) - 1))
    fusion.add_impacts([_strike(t, level) for t, level in
                        ((40.0, 7), (40.06, 6), (40.12, 5), (40.18, 4), (40.24, 3), (40.3, 2),
                         (40.4, 2))])
    step = replace(_settled(2, 40.0, 0.0, 1.0), busy_levels=len(restless),
                   busy_mask=sum(1 << k for k in restless))
    assert fusion._unexplained_busy(step) <= 2
    return fusion, fusion.add_settled_step(step)


def test_a_share_of_a_plates_size_tells_on_a_tower_whose_plates_are_always_restless() -> None:
    # Model P tower 7: cells so noisy that six or seven plates read
    # restless at every step. A clean half of plate 2's size, heard landing
    # there, shows its size was two cubes': learnt again, and both told.
    fusion, out = _half_cube_heard_on_plate_2(busy_before=7)
    assert fusion.scale.unit(2) == pytest.approx(UNIT)
    assert [e.floor for e in out if isinstance(e, Landing)] == [2]
    assert fusion.cubes_on[2] == 2
    # On a tower whose steps are usually quiet, so many restless plates
    # are hands on it, and the size stands.
    fusion, _ = _half_cube_heard_on_plate_2(busy_before=2)
    assert fusion.scale.unit(2) == pytest.approx(2 * UNIT)


def test_a_plate_whose_sign_a_hand_taught_learns_it_again_from_a_cube_it_cannot_lose() -> None:
    def kinds(events: list) -> list[tuple[str, int]]:
        return [(type(e).__name__, e.floor) for e in events]

    fusion = _fusion()
    # A hand let go of plate 2 before anything else happened there: its
    # first step, down by a cube, taught it a cell wired the other way.
    assert kinds(fusion.add_settled_step(_settled(2, 1.0, 0.0, -1.0))) == [("Landing", 2)]
    assert fusion.scale.sign[2] == -1.0
    # The next cube reads as that "cube" taken away (it may have been knocked down) ...
    assert kinds(fusion.add_settled_step(_settled(2, 5.0, -1.0, 0.0))) == [("Removal", 2)]
    # ... but with nothing left on the plate of a closed tower, a cube
    # going is impossible: the sign is learnt again, and the cube is a landing.
    assert kinds(fusion.add_settled_step(_settled(2, 9.0, 0.0, 1.0))) == [("Landing", 2)]
    assert fusion.scale.sign[2] == 1.0
    assert kinds(fusion.add_settled_step(_settled(2, 13.0, 1.0, 2.0))) == [("Landing", 2)]
    # A plate that has held two landings keeps its sign: a loss from it
    # when the count says it is empty is a count gone wrong, not a sign.
    fusion = _fusion()
    for t, (a, b) in zip((1.0, 5.0, 9.0, 13.0), ((0, 1), (1, 2), (2, 1), (1, 0)), strict=True):
        fusion.add_settled_step(_settled(4, t, a, b))
    assert fusion.cubes_on[4] == 0
    assert kinds(fusion.add_settled_step(_settled(4, 17.0, 0.0, -1.0))) == [("Removal", 4)]
    assert fusion.scale.sign[4] == 1.0


def test_a_plate_under_the_open_level_that_loses_load_lost_no_cube() -> None:
    # Modules 4-7 lifted at 2.0 s: level 3 lies open. Plates 1 and 3 hold a
    # cube each. A hand on plate 3 presses the stacked modules under it,
    # and plate 1 reads a cube lighter: nothing can leave it while the
    # tower is open, and nobody throws then, so nothing was knocked down.
    # The cube taken off plate 3 is a removal.
    fusion = _fusion()
    for level in (1, 3):
        fusion.add_settled_step(_settled(level, 0.5, 0.0, 1.0))
    fusion.add_load([], [LoadConnection(k, False, 2.0, 2.1) for k in range(4, 8)], 2.1)
    fusion.advance(2.4)
    assert fusion.openings.exposed_level == 3
    pressed = fusion.add_settled_step(_settled(1, 2.5, 1.0, 0.0))
    assert [e for e in pressed if isinstance(e, Removal)] == []
    assert fusion.cubes_on[1] == 1
    taken = fusion.add_settled_step(_settled(3, 2.6, 1.0, 0.0))
    assert [(e.floor, e.cubes, e.knocked) for e in taken if isinstance(e, Removal)] == [
        (3, 1, False)]


def test_a_closed_level_loses_a_cube_only_to_a_cube_heard_striking_there_or_above() -> None:
    # Plate 3 holds a cube in a closed tower, the piezos listening. Its load
    # drops by a cube with nothing heard: no throw, so nothing was knocked
    # down (a cell's zero moving after a close). The same drop just after a
    # cube was heard striking plate 5 is that cube knocking it down.
    def loss(strikes: list[TimedImpact]) -> list[tuple[int, bool]]:
        fusion = _fusion()
        fusion.piezo_since_s = 0.0
        fusion.add_settled_step(_settled(3, 0.5, 0.0, 1.0))
        fusion.add_impacts(strikes)
        out = fusion.add_settled_step(_settled(3, 2.0, 1.0, 0.0))
        return [(e.floor, e.knocked) for e in out if isinstance(e, Removal)]

    assert loss([]) == []
    assert loss([_strike(2.1, 5), _strike(2.15, 5)]) == [(3, True)]
    # Nor with a strike that stands out on no plate (hands, talk).
    flat = TimedImpact(2.1, Impact(frame=0, channels=tuple(range(8)),
                                   peaks=np.full(8, 300.0), floor=np.ones(8)))
    assert loss([flat]) == []


def _fast(level: int, t_before: float, t_settled: float, delta_cubes: float,
          before_cubes: float) -> LoadStep:
    return LoadStep(level=level, t_before_s=t_before, t_settled_s=t_settled,
                    t_decided_s=t_settled + 0.05, delta_counts=delta_cubes * UNIT,
                    before_counts=before_cubes * UNIT,
                    after_counts=(before_cubes + delta_cubes) * UNIT)


def _ring_reads_then_a_cube(first_read_cubes: float) -> list:
    """A cube lands on plate 5 and rings slowly: read once as part of a cube;
    0.6 s later the next cube lands there, heard, and reads clean."""
    fusion = _fusion()
    fusion.add_impacts([_strike(1.00, 5), _strike(1.04, 5)])
    out = fusion._fast_step_event(_fast(5, 0.9, 1.15, 1.0, 0.0), 1.3)
    assert _landings(out) == [(5, 1, 1.04)]
    fusion._fast_step_event(_fast(5, 1.2, 1.35, first_read_cubes, 1.0), 1.45)
    fusion.add_impacts([_strike(1.80, 5), _strike(1.84, 5)])
    return fusion._fast_step_event(_fast(5, 1.7, 1.95, 1.0, 1.0 + first_read_cubes), 2.1)


def test_a_clean_cube_on_a_plate_whose_ring_was_read_in_part_is_a_landing() -> None:
    # Plates ringing at 8-12 Hz for most of a second are read in part-cube
    # steps; the next cube on them is no hand's work.
    assert _landings(_ring_reads_then_a_cube(0.45)) == [(5, 1, 1.84)]


def test_a_cube_after_the_plate_was_read_lower_waits_for_the_settled_view() -> None:
    # A plate read lower was lifted or pressed from below by a hand.
    assert _landings(_ring_reads_then_a_cube(-0.45)) == []


def _next_cube_read_short(ring_cubes: float) -> list:
    """A cube lands on plate 5 at 1.04 s; its plate rings ``ring_cubes`` at
    10 Hz until 1.8 s (0: it lay still); the next cube lands there at
    1.84 s, heard, and reads 0.8 of a cube (off by more than a ringing
    plate's next cube may be, within what a still plate's may)."""
    readings = np.zeros((_T.size, 8))
    on = _T >= 1.1
    readings[on, 5] = UNIT
    ringing = (_T >= 1.1) & (_T < 1.8)
    readings[ringing, 5] += ring_cubes * UNIT * np.sin(2 * np.pi * 10 * _T[ringing])
    readings[_T >= 1.9, 5] = 1.8 * UNIT
    fusion = _fusion(readings)
    fusion.add_impacts([_strike(1.00, 5), _strike(1.04, 5)])
    assert _landings(fusion._fast_step_event(_fast(5, 0.9, 1.15, 1.0, 0.0), 1.3)) == [(5, 1, 1.04)]
    fusion.add_impacts([_strike(1.80, 5), _strike(1.84, 5)])
    return fusion._fast_step_event(_fast(5, 1.75, 1.95, 0.8, 1.0), 2.1)


def test_the_next_cube_on_a_plate_that_lay_still_after_its_landing_is_read_at_once() -> None:
    # Its ring had died: the quick series' next cube is read like any
    # (models K, N: p95 latency of quick series 0.75 -> 0.72 s and 0.75 -> 0.53 s).
    assert _landings(_next_cube_read_short(0.0)) == [(5, 1, 1.84)]


def test_the_next_cube_on_a_plate_still_ringing_waits_for_the_settled_view() -> None:
    assert _landings(_next_cube_read_short(0.3)) == []


def _next_rise_after_a_reseat(closed_at: float) -> list:
    """Plate 5 reseats by a fifth of a cube at 1.05 s (a fast step, no
    landing), lies still, and a cube heard at 1.84 s reads 0.8 of one
    (1.2 s after the close at 0.6 s, or long after one)."""
    readings = np.zeros((_T.size, 8))
    readings[_T >= 1.05, 5] = 0.2 * UNIT
    readings[_T >= 1.9, 5] = UNIT
    fusion = _fusion(readings)
    fusion.openings.last_handled_t = closed_at
    assert _landings(fusion._fast_step_event(_fast(5, 1.0, 1.1, 0.2, 0.0), 1.2)) == []
    fusion.add_impacts([_strike(1.80, 5), _strike(1.84, 5)])
    return _landings(fusion._fast_step_event(_fast(5, 1.75, 1.95, 0.8, 0.2), 2.1))


def test_a_rise_soon_after_the_plate_reseated_at_a_close_still_waits() -> None:
    # Cubes thrown back after a close may rest a moment on the plates they
    # pass (model S's long sessions).
    assert _next_rise_after_a_reseat(0.6) == []
    assert _next_rise_after_a_reseat(-np.inf) == [(5, 1, 1.84)]


def _touched_before_its_cube(*later: TimedImpact) -> list[tuple[int, int, float]]:
    """A hand's touch on plate 6 (unheard) moved it at 1.0 s; the fast view
    doubted the change, which settled at 1.3 s; ``later`` strikes follow,
    and the settled view counts one cube there by 2.2 s."""
    fusion = _fusion()
    fusion.add_impacts([_strike(0.5, 2), *later])
    fusion._doubt(_step(6, 1.0, 1.3, 1.0))
    fusion._levels[6].fast_settled_t = 1.3
    return _landings(fusion.add_settled_step(_step(6, 1.0, 2.2, 1.0)))


def test_a_cube_that_struck_its_plate_after_a_hand_moved_it_is_timed_by_its_own_bounces() -> None:
    # The thrown cube came half a second after the touch: its last bounce
    # times the landing, not the hand's change the fast view saw settle.
    assert _touched_before_its_cube(_strike(1.70, 6), _strike(1.78, 6)) == [(6, 1, 1.78)]
    # A later strike there that went on below was a cube passing the hole:
    # the change the fast view saw is the landing.
    assert _touched_before_its_cube(_strike(1.70, 6), _strike(1.76, 3)) == [(6, 1, 1.3)]


def test_in_a_quick_series_a_later_strike_on_the_plate_does_not_retime_its_landing() -> None:
    # A cube landed on 2 at 1.1 s: the strike on 6 later may be the next
    # throw's cube; the fast view's settle times this one.
    fusion = _fusion()
    fusion.add_impacts([_strike(1.05, 6), _strike(1.10, 6), _strike(1.70, 6), _strike(1.78, 6)])
    fusion._levels[2].landed_t = 1.1
    fusion._doubt(_step(6, 1.0, 1.3, 1.0))
    assert _landings(fusion.add_settled_step(_step(6, 1.0, 2.2, 1.0))) == [(6, 1, 1.1)]


def test_the_rest_of_a_first_cube_read_short_is_not_a_second_cube() -> None:
    # Plate 1's first cube was read by the fast view at 0.7 of its true size
    # while a hand shook the tower; that is the size the level learnt.
    fusion = _fusion()
    fusion.scale.forget(1)
    fusion.scale.learn(1, 0.7 * UNIT, 1)
    fusion._levels[1].fast_landed.append((1.3, 1))
    fusion.accounted[1] = 0.7 * UNIT
    # The settled view reads the whole cube: the 0.3 left over (under half
    # the size learnt) is that cube's, and the level learns its size anew.
    out = fusion.add_settled_step(_step(1, 0.9, 2.0, 1.0))
    assert _landings(out) == []
    assert fusion.scale.unit(1) == UNIT
    # Half the size learnt, on a plate the fast view counted nothing on, is
    # a cube: the first was two that came together.
    fusion = _fusion()
    fusion.scale.forget(1)
    fusion.scale.learn(1, 2 * UNIT, 1)
    fusion.accounted[1] = 2 * UNIT
    out = fusion.add_settled_step(_settled(1, 5.0, 2.0, 3.0))
    assert [(e.floor, e.cubes) for e in out if isinstance(e, Landing)] == [(1, 1)]


def test_a_plate_moved_long_after_the_last_strike_was_not_moved_by_that_drop() -> None:
    # A cube struck plate 4 at 0.95 and 1.0 s. Its first touch moves the
    # plate before its last bounce is heard, and the plate is read still
    # last up to a third of a second after it.
    fusion = _fusion()
    fusion.add_impacts([_strike(0.95, 4), _strike(1.0, 4)])
    assert fusion._heard_a_drop(_step(4, 0.9, 1.2, 1.0))
    assert fusion._heard_a_drop(_step(4, 1.35, 1.5, 1.0))
    # Still for more than 0.4 s after all was quiet, then moved by a cube's
    # weight: a hand.
    assert not fusion._heard_a_drop(_step(4, 1.45, 1.6, 1.0))


def test_a_cube_step_that_hardly_swung_its_plate_is_left_to_the_settled_view() -> None:
    # Plate 3 rose smoothly by a cube after a soft strike and still holds it
    # 125 ms on, while a thrown cube struck plate 6; its landings swing it by
    # 12 cubes, a twelfth of which is a hand pressing it, not a cube landing.
    fusion, step = _touched(holds=True)
    fusion.add_impacts([_strike(0.92, 6), _strike(0.95, 6), _strike(0.98, 6)])
    for level in range(8):
        fusion._levels[level].landing_swings = [12 * UNIT] * 3
    assert not fusion._pressed(step) and fusion._fast_step_trusted(step)
    assert fusion.add_load([step], [], 1.0625) + fusion.advance(1.5) == []
    assert [s.t_settled_s for s in fusion._levels[3].doubted] == [1.0]


def _first_touch(swing_cubes: float) -> tuple[Fusion, LoadStep]:
    """Plate 6, no cube size of its own, rose by 4 cubes of the others' size after a strike
    there, rung by ``swing_cubes`` of its own step; the tower's landings swing plates by 12."""
    scale, acoustic = CubeScale(n_levels=8), AcousticLevelModel(n_levels=8)
    fusion = Fusion(n_levels=8, first_landings_held=0, scale=scale, acoustic=acoustic)
    for level in (0, 1, 2):
        fusion.scale.learn(level, UNIT, 1)
        fusion.scale.learn_sign(level, UNIT, cubes_added=True)
        fusion._levels[level].landing_swings = [12 * UNIT]
    fusion.scale.refuse_pool(6)
    values = np.zeros((_T.size, 8))
    tau = _T - 0.9
    values[:, 6] = 4 * UNIT * np.clip(tau / 0.1, 0.0, 1.0)
    values[tau >= 0, 6] += swing_cubes * 4 * UNIT * np.exp(-tau[tau >= 0] / 0.05) * np.sin(
        60 * tau[tau >= 0])
    fusion.load_coverage.add(_T)
    fusion.load_history.add(_T, values, np.ones((_T.size, 8), bool))
    fusion.accounted[:] = 0.0
    fusion.add_impacts([_strike(0.9, 6, 100.0)])
    step = LoadStep(level=6, t_before_s=0.9, t_settled_s=1.0, t_decided_s=1.0625,
                    delta_counts=4 * UNIT, before_counts=0.0, after_counts=4 * UNIT)
    return fusion, step


def test_a_plates_first_cube_that_hardly_swung_it_is_left_to_the_settled_view() -> None:
    # Heard striking plate 6 and the plate's first step: it would teach the
    # plate its cube. It swung the plate a twelfth of what a cube of that
    # size swings the tower's plates: a hand pressing it as it touched.
    fusion, step = _first_touch(swing_cubes=1.0)
    assert fusion.scale.unit(6) is None and fusion._heard_here(step)
    assert not fusion._fast_step_trusted(step)
    assert not fusion._fast_step_trusted(step, shaken_too=False)
    # A cube landing rings it.
    fusion, step = _first_touch(swing_cubes=12.0)
    assert fusion._fast_step_trusted(step)
    # One landing of the tower is enough to compare with (a touch in the
    # first minute of a session).
    fusion, step = _first_touch(swing_cubes=1.0)
    for level in (1, 2):
        fusion._levels[level].landing_swings = []
    assert not fusion._fast_step_trusted(step)


def test_a_plate_whose_first_cube_left_unseen_forgets_the_size_it_taught() -> None:
    # Plate 6's first "cube" (4 of the others' size) was counted by the fast
    # view; the plate was back where it was when the settled view next saw it
    # still: a hand pressed it and let go. Its cubes must count again.
    fusion, step = _first_touch(swing_cubes=12.0)
    assert _landings(fusion.add_load([step], [], 1.0625) + fusion.advance(1.2)) == [(6, 1, 0.9)]
    assert fusion.scale.unit(6) == 4 * UNIT
    levels = np.full(8, np.nan)
    levels[6] = 0.0
    times = np.full(8, np.nan)
    # Seen still, but only until before the cube came to rest: says nothing.
    times[6] = 0.85
    fusion.track_settled_levels(levels, times, 2.0)
    assert fusion.scale.unit(6) == 4 * UNIT
    times[6] = 1.6
    # Seen still later than the fusion has reached: a step may be on its way.
    fusion.track_settled_levels(levels, times, 1.5)
    assert fusion.scale.unit(6) == 4 * UNIT
    fusion.track_settled_levels(levels, times, 1.7)
    assert fusion.scale.unit(6) is None and fusion.cubes_on[6] == 0
    assert fusion.accounted[6] == 0.0
    # A plate that still holds its cube keeps its size.
    fusion, step = _first_touch(swing_cubes=12.0)
    fusion.add_load([step], [], 1.0625)
    fusion.advance(1.2)
    levels[6] = 4 * UNIT
    fusion.track_settled_levels(levels, times, 2.0)
    assert fusion.scale.unit(6) == 4 * UNIT and fusion.cubes_on[6] == 1


def _rests_a_moment(leaves_at: float | None) -> tuple[Fusion, LoadStep]:
    """A cube struck plate 5 at 0.95 s and settled on it by 1.0 s; it leaves at ``leaves_at``."""
    values = np.zeros((_T.size, 8))
    values[(_T >= 1.0), 5] = UNIT
    if leaves_at is not None:
        values[_T >= leaves_at, 5] = 0.0
    fusion = _fusion(values)
    fusion.add_impacts([_strike(0.95, 5)])
    step = LoadStep(level=5, t_before_s=0.95, t_settled_s=1.0, t_decided_s=1.0625,
                    delta_counts=UNIT, before_counts=0.0, after_counts=UNIT)
    return fusion, step


def _decide(fusion: Fusion, step: LoadStep, until: float) -> list:
    out = fusion.add_load([step], [], step.t_decided_s)
    for now in np.arange(step.t_decided_s, until, 0.05):
        out += fusion.advance(float(now))
    return out


def test_cubes_that_leave_a_plate_they_had_just_settled_on_tell_a_tower_whose_cubes_slide() -> None:
    fusion, step = _rests_a_moment(None)
    assert _landings(_decide(fusion, step, 1.2)) == [(5, 1, 0.95)]
    assert not fusion.slides
    # 0.3 s later the plate is back where it was; the cube strikes the plate
    # below after the fast view has decided that it left (a module's fall).
    gone = LoadStep(level=5, t_before_s=1.28, t_settled_s=1.30, t_decided_s=1.35,
                    delta_counts=-UNIT, before_counts=UNIT, after_counts=0.0)
    _decide(fusion, gone, 1.40)
    assert fusion.stats.slides_seen == 0
    fusion.add_impacts([_strike(1.41, 4)])
    fusion.advance(1.6)
    assert fusion.stats.slides_seen == 1 and not fusion.slides
    # Nothing heard below by then: a hand that pressed the plate and let go.
    fusion, step = _rests_a_moment(None)
    _decide(fusion, step, 1.2)
    _decide(fusion, gone, 1.40)
    fusion.add_impacts([_strike(1.5, 4)])
    fusion.advance(1.6)
    assert fusion.stats.slides_seen == 0
    # A plate read a cube for 50 ms, risen within one reading, then none:
    # the jolt of a strike (a cube that bounced there rises over several).
    fusion, step = _rests_a_moment(None)
    _decide(fusion, replace(step, t_before_s=0.9875), 1.04)
    jolt = replace(gone, t_before_s=1.05, t_settled_s=1.07, t_decided_s=1.12)
    _decide(fusion, jolt, 1.2)
    fusion.add_impacts([_strike(1.1, 4)])
    fusion.advance(1.6)
    assert fusion.stats.slides_seen == 0
    # A cube leaving a plate a second or more after it settled there was
    # knocked down by another throw: no sign of sliding cubes.
    fusion, step = _rests_a_moment(None)
    _decide(fusion, step, 1.2)
    fusion.add_impacts([_strike(2.2, 4)])
    _decide(fusion, replace(gone, t_before_s=2.18, t_settled_s=2.25, t_decided_s=2.31), 2.5)
    assert fusion.stats.slides_seen == 0


def test_a_cube_counted_landing_that_slid_on_unseen_by_the_settled_view_is_removed() -> None:
    # The fast view counted the cube on plate 5 (the tower not yet known
    # for cubes that slide); 0.3 s later it slid into the hole, struck the
    # plate below, and the fast view doubted the loss. The settled view
    # never saw plate 5 still with the cube on it: no step of its own.
    gone = LoadStep(level=5, t_before_s=1.28, t_settled_s=1.30, t_decided_s=1.35,
                    delta_counts=-UNIT, before_counts=UNIT, after_counts=0.0)
    levels = np.where(np.arange(8) == 5, 0.0, np.nan)
    times = np.where(np.arange(8) == 5, 1.6, np.nan)

    def slid(
        *, loss_seen: bool, still_until: float = 1.6, heard_below: bool = True
    ) -> tuple[Fusion, list]:
        fusion, step = _rests_a_moment(leaves_at=1.3)
        for _ in range(5):
            # The plate's size is sure (a first cube gone unseen is a hand's).
            fusion.scale.learn(5, UNIT, 1)
        assert _landings(_decide(fusion, step, 1.2)) == [(5, 1, 0.95)]
        if loss_seen:
            _decide(fusion, gone, 1.40)
        if heard_below:
            fusion.add_impacts([_strike(1.41, 4)])
        fusion.advance(1.6)
        fusion.slide_signs.slides_seen = 0  # as if the fall had not been judged yet
        return fusion, fusion.track_settled_levels(
            levels, np.where(np.arange(8) == 5, still_until, np.nan), 1.7
        )

    fusion, out = slid(loss_seen=True)
    removals = [e for e in out if isinstance(e, Removal)]
    assert [(e.floor, e.cubes, e.knocked) for e in removals] == [(5, 1, True)]
    assert 1.2 <= removals[0].t <= 1.3 and removals[0].t_decided == 1.7
    assert fusion.cubes_on[5] == 0 and fusion.accounted[5] == 0.0
    assert fusion.stats.slid_unseen == 1
    assert fusion.slide_signs.slides_seen == 1  # a sign that cubes slide on here
    # Reported once: the plate seen still again says nothing more.
    assert fusion.track_settled_levels(levels, times, 1.8) == []
    # Seen still only before the loss settled: nothing yet.
    fusion, out = slid(loss_seen=True, still_until=1.35)
    assert out == [] and fusion.cubes_on[5] == 1
    # No loss seen by the fast view: not this rule's (a plate read short).
    fusion, out = slid(loss_seen=False)
    assert out == [] and fusion.cubes_on[5] == 1
    # Nothing heard falling below: no cube slid on (a hand pressed and let go).
    fusion, out = slid(loss_seen=True, heard_below=False)
    assert out == [] and fusion.cubes_on[5] == 1 and fusion.slide_signs.slides_seen == 0


def test_where_cubes_slide_a_landing_waits_until_its_plate_has_held_the_cube() -> None:
    # The tower has shown cubes resting a moment and sliding on.
    fusion, step = _rests_a_moment(leaves_at=1.3)
    fusion.slide_signs.slides_seen = 2
    assert _landings(_decide(fusion, step, 2.0)) == []
    # The plate still holds it 0.4 s on: a landing, decided then.
    fusion, step = _rests_a_moment(leaves_at=None)
    fusion.slide_signs.slides_seen = 2
    out = _decide(fusion, step, 2.0)
    assert _landings(out) == [(5, 1, 0.95)]
    assert 1.4 <= out[0].t_decided < 1.6
    # A plate still sounding 0.4 s on (a sliding cube scrapes) waits until it is quiet.
    fusion, step = _rests_a_moment(leaves_at=None)
    fusion.slide_signs.slides_seen = 2
    fusion.add_busy(PlateBusy(0.96, 5, True))
    fusion.add_busy(PlateBusy(1.55, 5, False))
    out = _decide(fusion, step, 2.0)
    # (At rest when it fell quiet, or half a second after its strike at most.)
    assert _landings(out) == [(5, 1, 1.45)]
    assert 1.55 <= out[0].t_decided < 1.75
    # The next cube of a quick series strikes the plate 0.25 s on and takes
    # the place of this one, which goes on 0.45 s after it settled: the
    # plate holds a cube throughout, but the wait starts again from the
    # strike, and the plate is seen to have let its cube go.
    fusion, step = _rests_a_moment(leaves_at=1.45)
    fusion.slide_signs.slides_seen = 2
    fusion.add_impacts([_strike(1.25, 5)])
    assert _landings(_decide(fusion, step, 2.0)) == []
    fusion, step = _rests_a_moment(leaves_at=None)
    fusion.slide_signs.slides_seen = 2
    fusion.add_impacts([_strike(1.25, 5)])
    out = _decide(fusion, step, 2.0)
    assert _landings(out) == [(5, 1, 0.95)] and 1.5 <= out[0].t_decided < 1.6
    # Elsewhere the fast view decides at once.
    fusion, step = _rests_a_moment(leaves_at=1.3)
    out = _decide(fusion, step, 2.0)
    assert _landings(out) == [(5, 1, 0.95)] and out[0].t_decided < 1.2
    # One cube seen sliding on already: landings wait too, and one that
    # stayed counts towards waiting no more.
    fusion, step = _rests_a_moment(leaves_at=1.3)
    fusion.slide_signs.slides_seen = 1
    assert _landings(_decide(fusion, step, 2.0)) == []
    fusion, step = _rests_a_moment(leaves_at=None)
    fusion.slide_signs.slides_seen = 1
    assert _landings(_decide(fusion, step, 2.0)) == [(5, 1, 0.95)]
    assert fusion.slide_signs._held_since_slide == 1


def test_after_a_slide_a_landing_whose_plate_alone_still_sounds_waits_until_it_is_quiet() -> None:
    # One cube was seen sliding on, and three landings stayed since: the
    # tower is not taken for one whose cubes slide on. A cube whose plate
    # alone still sounds as its landing would be decided is still moving:
    # it waits until the plate is quiet, and is no landing if it left.
    def decided(leaves_at: float | None, *, room: bool = False) -> list:
        fusion, step = _rests_a_moment(leaves_at=leaves_at)
        fusion.slide_signs.count_slide()
        for _ in range(3):
            fusion.slide_signs.note_held()
        assert not fusion.slide_signs.wary
        fusion.add_busy(PlateBusy(0.96, 5, True))
        fusion.add_busy(PlateBusy(1.25, 5, False))
        if room:  # talk: plates far from it sound as well
            fusion.add_busy(PlateBusy(0.9, 1, True))
            fusion.add_busy(PlateBusy(1.5, 1, False))
        return _decide(fusion, step, 2.0)

    out = decided(None)
    assert _landings(out) == [(5, 1, 1.25)] and 1.25 <= out[0].t_decided < 1.4
    assert _landings(decided(1.2)) == []
    # Other plates sounding as well is the room (talk), decided at once as before.
    out = decided(1.3, room=True)
    assert [(e.floor, e.cubes) for e in out if isinstance(e, Landing)] == [(5, 1)]
    assert out[0].t_decided < 1.2


def test_the_sessions_first_landings_wait_a_little_to_see_their_cube_stay() -> None:
    # Nothing is known of the tower yet: a cube that rests a moment on a
    # plate it passes (a quarter of a second here) and goes on is no
    # landing; one that stays is told 0.3 s after its plate settled, sooner
    # than where cubes were seen sliding on (0.4 s).
    fusion, step = _rests_a_moment(leaves_at=1.25)
    fusion.slide_signs = SlideSigns()
    assert _landings(_decide(fusion, step, 2.0)) == []
    fusion, step = _rests_a_moment(leaves_at=None)
    fusion.slide_signs = SlideSigns()
    out = _decide(fusion, step, 2.0)
    assert _landings(out) == [(5, 1, 0.95)] and 1.3 <= out[0].t_decided < 1.4
    # Once the first few landings were told, the fast view decides at once.
    fusion, step = _rests_a_moment(leaves_at=1.3)
    fusion.slide_signs = SlideSigns()
    for _ in range(FIRST_HELD):
        fusion.slide_signs.note_landed()
    out = _decide(fusion, step, 2.0)
    assert _landings(out) == [(5, 1, 0.95)] and out[0].t_decided < 1.2


def test_a_landing_waiting_to_see_its_cube_stay_is_not_swept_away_with_plates_changing_after_it(
) -> None:
    # Where cubes slide on, the next cubes of a quick series rest a moment
    # on plates 7 and 6 just after the cube on plate 5 settled: three plates
    # changed within the coincidence window, but plate 5's step was judged
    # alone when it came, and only waits to see its cube stay (model R:
    # 22 and 12 landings more right, towers 1-8, 9-16).
    values = np.zeros((_T.size, 8))
    values[_T >= 1.0, 5] = UNIT
    values[(_T >= 1.15) & (_T < 1.5), 7] = UNIT
    values[(_T >= 1.25) & (_T < 1.6), 6] = UNIT
    fusion = _fusion(values)
    fusion.slide_signs.slides_seen = 2
    fusion.add_impacts([_strike(0.95, 5), _strike(1.1, 7), _strike(1.2, 6)])
    step = LoadStep(level=5, t_before_s=0.95, t_settled_s=1.0, t_decided_s=1.0625,
                    delta_counts=UNIT, before_counts=0.0, after_counts=UNIT)
    out = fusion.add_load([step], [], step.t_decided_s)
    out += fusion.advance(1.1)
    passing = [
        LoadStep(level=7, t_before_s=1.1, t_settled_s=1.2, t_decided_s=1.25,
                 delta_counts=UNIT, before_counts=0.0, after_counts=UNIT),
        LoadStep(level=6, t_before_s=1.2, t_settled_s=1.3, t_decided_s=1.35,
                 delta_counts=UNIT, before_counts=0.0, after_counts=UNIT),
    ]
    out += fusion.add_load(passing, [], 1.25)
    for now in np.arange(1.25, 2.0, 0.05):
        out += fusion.advance(float(now))
    assert (5, 1, 0.95) in _landings(out)


def test_a_landing_waiting_to_see_its_cube_stay_is_reported_once_if_the_settled_view_counts_it(
) -> None:
    fusion, step = _rests_a_moment(leaves_at=None)
    fusion.slide_signs.slides_seen = 2
    out = fusion.add_load([step], [], step.t_decided_s)
    for now in np.arange(step.t_decided_s, 1.3, 0.05):
        out += fusion.advance(float(now))
    assert _landings(out) == []  # still waiting
    # The plate fell still first: the settled view counts the cube.
    out += fusion.add_settled_step(_step(5, 0.9, 1.2, 1.0))
    for now in np.arange(1.3, 2.0, 0.05):
        out += fusion.advance(float(now))
    assert [floor for floor, _, _ in _landings(out)] == [5]
    assert fusion.cubes_on[5] == 1


def test_a_cube_that_bounced_on_an_empty_plate_and_went_on_tells_cubes_that_slide() -> None:
    # Plate 5 swung like a landing, bounced on twice, and holds what it
    # held: with a cube on it, the thrown cube stopped there and knocked it
    # down; with none, nothing could be knocked down: the cube went on.
    twice = [_strike(5.00, 5), _strike(5.05, 5), _strike(5.065, 4), _strike(5.12, 4)]
    occupied = _stop_candidate(1800.0)
    assert occupied._stopped_above(4, twice, 4.95, 5.9).level == 5
    assert occupied.stats.bounced_on_empty == 0
    empty = _stop_candidate(1800.0)
    empty.cubes_on[5] = 0
    assert empty._stopped_above(4, twice, 4.95, 5.9) is None
    assert empty.stats.bounced_on_empty == 1 and not empty.slides
    # Such bounces count half as much as cubes seen leaving a plate (a
    # neighbour's jolt can look like one): four tell a tower whose cubes slide.
    for _ in range(2):
        assert empty._stopped_above(4, twice, 4.95, 5.9) is None
    assert empty.stats.bounced_on_empty == 3 and not empty.slides
    assert empty._stopped_above(4, twice, 4.95, 5.9) is None
    assert empty.slides


def test_where_cubes_slide_no_knock_down_is_inferred_from_a_plate_whose_load_came_back() -> None:
    assert _landing_below(_stop_candidate(), 5.9) == _STOPPED
    sliding = _stop_candidate()
    sliding.slide_signs.slides_seen = 2
    assert _landing_below(sliding, 5.9) == _PASSED


def test_three_cubes_over_a_long_settling_keep_a_size_two_landings_agreed_on() -> None:
    # Plate 6 learnt its cube from two landings that agree. A quick series
    # kept it moving for 5 s while three cubes landed there, not heard
    # apart: three cubes, not a size to forget.
    def settled_over(span: float, cubes: float = 3.0) -> LoadStep:
        return LoadStep(level=6, t_before_s=1.0, t_settled_s=1.0 + span,
                        t_decided_s=1.3 + span, delta_counts=cubes * UNIT,
                        before_counts=0.0, after_counts=cubes * UNIT)

    long_one = _fusion()
    long_one.scale.learn(6, 1.02 * UNIT, 1)
    assert [(e.floor, e.cubes) for e in long_one.add_settled_step(settled_over(5.0))
            if isinstance(e, Landing)] == [(6, 3)]
    assert long_one.scale.own_unit(6)
    # Within one settling (1 s), three at once is a size learnt from
    # something else, when the plate's size is not the other plates' cube:
    # forgotten, the plate borrows the size they agree on.
    touched = _fusion()
    touched.scale.forget(6)
    touched.scale.learn(6, 0.6 * UNIT, 1)
    touched.scale.learn(6, 0.62 * UNIT, 1)
    touched.add_settled_step(settled_over(1.0, cubes=1.8))
    assert touched.scale.borrowed(6)
    # A size the other plates weigh their cubes at is a cube's: three at
    # once are a handful thrown together (model AK), and it is kept.
    handful = _fusion()
    handful.scale.learn(6, 1.02 * UNIT, 1)
    assert [(e.floor, e.cubes) for e in handful.add_settled_step(settled_over(1.0))
            if isinstance(e, Landing)] == [(6, 3)]
    assert handful.scale.own_unit(6)


def test_a_plate_whose_every_cube_reads_as_two_learns_its_cube_again() -> None:
    # Plate 4 learnt its cube from a hand's jolt half a cube deep. A still
    # step of two such cubes, not heard arriving apart, may be two cubes;
    # the same again, with no single cube between, is one cube each time.
    fusion = _fusion()
    fusion.scale.forget(4)
    fusion.scale.learn(4, UNIT / 2, 1)
    first = fusion.add_settled_step(_step(4, 1.0, 2.0, 1.0))
    assert [(e.floor, e.cubes) for e in first if isinstance(e, Landing)] == [(4, 2)]
    again = LoadStep(level=4, t_before_s=5.0, t_settled_s=6.0, t_decided_s=6.3,
                     delta_counts=UNIT, before_counts=UNIT, after_counts=2 * UNIT)
    second = fusion.add_settled_step(again)
    assert [(e.floor, e.cubes) for e in second if isinstance(e, Landing)] == [(4, 1)]
    assert fusion.scale.unit(4) == UNIT
    # A single cube between two doubles: they were doubles.
    fusion = _fusion()
    fusion.scale.forget(4)
    fusion.scale.learn(4, UNIT / 2, 1)
    fusion.add_settled_step(_step(4, 1.0, 2.0, 1.0))
    single = LoadStep(level=4, t_before_s=3.0, t_settled_s=4.0, t_decided_s=4.3,
                      delta_counts=UNIT / 2, before_counts=UNIT, after_counts=1.5 * UNIT)
    assert [(e.floor, e.cubes) for e in fusion.add_settled_step(single)
            if isinstance(e, Landing)] == [(4, 1)]
    double = LoadStep(level=4, t_before_s=5.0, t_settled_s=6.0, t_decided_s=6.3,
                      delta_counts=UNIT, before_counts=1.5 * UNIT, after_counts=2.5 * UNIT)
    assert [(e.floor, e.cubes) for e in fusion.add_settled_step(double)
            if isinstance(e, Landing)] == [(4, 2)]


@pytest.mark.parametrize("restless", [(), (0, 1, 2, 4, 5, 6)])
def test_a_cube_a_third_of_a_plates_one_step_size_shows_the_step_was_three(
    restless: tuple[int, ...],
) -> None:
    # Plate 3's first step was three cubes that settled together (at 1.0 s),
    # taken for one. A cube heard landing there reads a third of that size:
    # the plate learns again, and the two cubes more are reported (timed by
    # the first step); not while every other plate was restless (a hand
    # steadying the tower, its touch heard on the plate).
    fusion = _fusion()
    fusion.scale.forget(3)
    fusion.scale.learn(3, 3 * UNIT, 1)
    fusion._levels[3].sized_at = 1.0
    fusion.cubes_on[3] = 1
    fusion.accounted[3] = 3 * UNIT
    fusion.add_impacts([_strike(2.0, 3), _strike(2.05, 3)])
    step = LoadStep(level=3, t_before_s=1.95, t_settled_s=2.4, t_decided_s=2.7,
                    delta_counts=UNIT, before_counts=3 * UNIT, after_counts=4 * UNIT,
                    busy_levels=len(restless), busy_mask=sum(1 << k for k in restless))
    out = fusion.add_settled_step(step)
    if restless:
        assert _landings(out) == [] and fusion.scale.unit(3) == 3 * UNIT
        assert fusion.cubes_on[3] == 1
    else:
        assert [(e.floor, e.cubes, e.t) for e in out if isinstance(e, Landing)][0] == (3, 2, 1.0)
        assert [(e.floor, e.cubes) for e in out if isinstance(e, Landing)][1:] == [(3, 1)]
        assert fusion.scale.unit(3) == UNIT and fusion.cubes_on[3] == 4


@pytest.mark.parametrize("span", [0.3, 1.0])
def test_a_plates_first_step_that_settled_slowly_is_timed_by_its_first_strike_too(
    span: float,
) -> None:
    # Plate 3 has no size yet; its first step is struck at 1.05 and at the
    # end. Should it prove to hold several cubes, the others came from the
    # first strike on when the plate took long to settle; else with the last.
    fusion = _fusion()
    fusion.scale.forget(3)
    last = 1.0 + span - 0.05
    fusion.add_impacts([_strike(1.05, 3), _strike(last, 3)])
    fusion.add_settled_step(LoadStep(
        level=3, t_before_s=1.0, t_settled_s=1.0 + span, t_decided_s=1.3 + span,
        delta_counts=3 * UNIT, before_counts=0.0, after_counts=3 * UNIT))
    assert fusion._levels[3].sized_at == pytest.approx(1.05 if span > 0.5 else last)


def test_a_plate_that_learnt_from_several_jolts_learns_again_when_cubes_read_many_twice() -> None:
    # Plate 3 learnt its cube from three jolts a tenth of a cube deep, so its
    # size is trusted. A still step of many such cubes, not heard arriving
    # apart, is reported as many; the same again, with no single cube
    # between, is one cube, and the plate learns its size from it.
    fusion = _fusion()
    fusion.scale.forget(3)
    for _ in range(3):
        fusion.scale.learn(3, UNIT / 10, 1)
    assert not fusion.scale.learnt_from_few(3)
    first = fusion.add_settled_step(_settled(3, 1.0, 0.0, 1.0))
    assert [(e.floor, e.cubes) for e in first if isinstance(e, Landing)] == [(3, 10)]
    second = fusion.add_settled_step(_settled(3, 5.0, 1.0, 2.0))
    assert [(e.floor, e.cubes) for e in second if isinstance(e, Landing)] == [(3, 1)]
    assert fusion.scale.unit(3) == UNIT


def test_a_plate_jolted_by_a_landing_next_door_does_not_learn_its_cube_from_it() -> None:
    # Plate 6 has no cube size yet. A cube landed on plate 7 (a step of a
    # cube there); plate 6's cell shifted with it by a tenth of that and
    # stayed there: the tower's walls, not a cube.
    fusion = _fusion()
    fusion.scale.forget(6)
    fusion.scale.refuse_pool(6)
    assert fusion.scale.unit(6) is None
    fusion._recent_steps.append((_step(7, 1.0, 1.1, 1.0), 1))
    jolt = LoadStep(level=6, t_before_s=1.0, t_settled_s=1.2, t_decided_s=1.5,
                    delta_counts=0.1 * UNIT, before_counts=0.0, after_counts=0.1 * UNIT)
    assert fusion.add_settled_step(jolt) == []
    assert fusion.scale.unit(6) is None and fusion.accounted[6] == 0.1 * UNIT
    # Its own cube, later, teaches it.
    cube = LoadStep(level=6, t_before_s=3.0, t_settled_s=3.2, t_decided_s=3.5,
                    delta_counts=0.8 * UNIT, before_counts=0.1 * UNIT, after_counts=0.9 * UNIT)
    assert _landings(fusion.add_settled_step(cube)) == [(6, 1, 3.2)]
    assert fusion.scale.unit(6) == 0.8 * UNIT
    # A step as large as the neighbour's is no jolt (a cell of another batch).
    fusion = _fusion()
    fusion.scale.forget(6)
    fusion.scale.refuse_pool(6)
    fusion._recent_steps.append((_step(7, 1.0, 1.1, 1.0), 1))
    big = replace(jolt, delta_counts=0.5 * UNIT, after_counts=0.5 * UNIT)
    assert [e.floor for e in fusion.add_settled_step(big) if isinstance(e, Landing)] == [6]


def test_a_plate_with_no_cube_size_learns_it_from_the_step_not_from_a_stale_account() -> None:
    # A hand had pushed plate 6 down and let go, seen by no step: the load
    # accounted for is where the plate ends after its first cube.
    fusion = _fusion()
    fusion.scale.forget(6)
    fusion.scale.refuse_pool(6)
    fusion.accounted[6] = 0.97 * UNIT
    cube = LoadStep(level=6, t_before_s=3.0, t_settled_s=3.2, t_decided_s=3.5,
                    delta_counts=UNIT, before_counts=0.0, after_counts=UNIT)
    assert _landings(fusion.add_settled_step(cube)) == [(6, 1, 3.2)]
    assert fusion.scale.unit(6) == UNIT


def _set_back(fusion: Fusion, t_s: float) -> None:
    """Module 6 lifted half a second before ``t_s`` and set back at ``t_s``."""
    fusion.add_load([], [
        LoadConnection(6, connected=False, t_s=t_s - 0.5, t_decided_s=t_s - 0.45),
        LoadConnection(6, connected=True, t_s=t_s, t_decided_s=t_s + 0.05),
    ], t_s + 0.05)


def test_no_landing_is_counted_while_the_tower_is_opened_or_closed() -> None:
    # Plate 2 gained a cube's weight as modules 5-7 were set back (a thump,
    # hands on the tower): nobody throws then.
    fusion = _fusion()
    _set_back(fusion, 1.1)
    assert fusion.add_settled_step(_step(2, 1.0, 1.3, 1.0)) == []
    assert fusion.accounted[2] == UNIT
    # While the tower stands open, neither.
    fusion = _fusion()
    fusion.add_load([], [LoadConnection(6, connected=False, t_s=2.0, t_decided_s=2.05)], 2.05)
    assert fusion.add_settled_step(_step(2, 3.0, 3.3, 1.0)) == []
    # A cube thrown back a second after the close lands.
    fusion = _fusion()
    _set_back(fusion, 1.1)
    assert _landings(fusion.add_settled_step(_step(2, 2.5, 2.7, 1.0))) == [(2, 1, 2.7)]


def test_a_jolt_is_told_by_the_neighbours_readings_before_its_landing_is_decided() -> None:
    # Plate 7 gained a cube at 1.05 s; its landing is not decided yet (the
    # settled view decides each plate once it is still), but its readings
    # show it: plate 6's first step, a tenth of that, is the walls' jolt.
    values = np.zeros((_T.size, 8))
    values[_T >= 1.05, 7] = UNIT
    fusion = _fusion(values)
    fusion.scale.forget(6)
    fusion.scale.refuse_pool(6)
    jolt = LoadStep(level=6, t_before_s=1.0, t_settled_s=1.2, t_decided_s=1.5,
                    delta_counts=0.1 * UNIT, before_counts=0.0, after_counts=0.1 * UNIT)
    assert fusion.add_settled_step(jolt) == []
    # Its neighbour still as the plate moved: plate 6's own first cube.
    fusion = _fusion()
    fusion.scale.forget(6)
    fusion.scale.refuse_pool(6)
    assert [e.floor for e in fusion.add_settled_step(jolt) if isinstance(e, Landing)] == [6]


def _tower_knowing_no_cube(
    plate: int, moved: float, from_s: float, until_s: float = np.inf
) -> Fusion:
    """No plate knows its cube; ``plate`` moved ``moved`` UNIT from ``from_s`` (to ``until_s``).

    Read 10 times a second.
    """
    t = np.arange(0.0, 4.0, 0.1)
    values = np.zeros((t.size, 8))
    values[(t >= from_s) & (t < until_s), plate] = moved * UNIT
    fusion = Fusion(n_levels=8, first_landings_held=0, scale=CubeScale(n_levels=8),
                    acoustic=AcousticLevelModel(n_levels=8))
    fusion.load_coverage.add(t)
    fusion.load_history.add(t, values, np.ones((t.size, 8), bool))
    fusion.accounted[:] = 0.0
    return fusion


def _first_cube_of_the_tower(heard_on: int, moved: float = 9.0) -> Fusion:
    """No plate knows its cube; plate 1 moved ``moved`` UNIT at 1.05 s, heard on ``heard_on``."""
    fusion = _tower_knowing_no_cube(1, moved, 1.05)
    fusion.add_impacts([_strike(1.0, heard_on), _strike(1.05, heard_on)])
    return fusion


def test_the_towers_first_cube_does_not_teach_the_plate_next_door_its_jolt() -> None:
    # Plate 2 shifted by a tenth of plate 1's step as the tower's first cube
    # landed on 1 (heard there); plate 2 is decided first, knowing no cube.
    jolt = LoadStep(level=2, t_before_s=0.9, t_settled_s=1.27, t_decided_s=1.67,
                    delta_counts=-0.9 * UNIT, before_counts=0.0, after_counts=-0.9 * UNIT)
    fusion = _first_cube_of_the_tower(heard_on=1)
    assert fusion.add_settled_step(jolt) == []
    assert fusion.scale.unit(2) is None
    # Heard on plate 2 itself, the small step is its own cube (a cell that
    # reads small; plate 1, of another batch, moved with it). Not where plate
    # 1 moved by eight times as much: no jolt of a cube goes so far, a cube
    # went on down to it.
    fusion = _first_cube_of_the_tower(heard_on=2, moved=5.0)
    assert [e.floor for e in fusion.add_settled_step(jolt) if isinstance(e, Landing)] == [2]
    # Struck on its way down to plate 1, where the drop ended: still a jolt,
    # faint onsets after it (a humming disc) notwithstanding.
    fusion = _first_cube_of_the_tower(heard_on=2)
    fusion.add_impacts([_strike(1.1, 1), _strike(1.15, 1), _strike(1.2, 5, amplitude=40.0)])
    assert fusion.add_settled_step(jolt) == []


def test_a_plate_with_no_cube_size_moved_by_a_hand_on_another_plate_learns_nothing() -> None:
    # A hand pressed plate 5 (9 cubes' worth, read 10 times a second, still
    # enough to look settled) and plate 1, knowing no cube yet, moved by a
    # tenth of that: unheard, it is the hand, not plate 1's first cube.
    t = np.arange(0.0, 4.0, 0.1)
    values = np.zeros((t.size, 8))
    values[(t >= 1.05) & (t < 2.0), 5] = 9 * UNIT
    fusion = Fusion(n_levels=8, first_landings_held=0, scale=CubeScale(n_levels=8),
                    acoustic=AcousticLevelModel(n_levels=8))
    fusion.load_coverage.add(t)
    fusion.load_history.add(t, values, np.ones((t.size, 8), bool))
    fusion.accounted[:] = 0.0
    moved = LoadStep(level=1, t_before_s=0.9, t_settled_s=1.27, t_decided_s=1.67,
                     delta_counts=0.9 * UNIT, before_counts=0.0, after_counts=0.9 * UNIT)
    assert fusion.add_settled_step(moved) == []
    assert fusion.scale.unit(1) is None
    # Heard striking plate 1, it is plate 1's first cube, whatever else moved.
    fusion.accounted[:] = 0.0
    fusion.add_impacts([_strike(1.0, 1), _strike(1.05, 1)])
    assert [e.floor for e in fusion.add_settled_step(moved) if isinstance(e, Landing)] == [1]


def _passing_the_towers_first_cube(below_cubes: float, strikes: tuple[int, ...]) -> Fusion:
    """No plate knows its cube; plate 0 gained ``below_cubes`` at 1.3 s, struck on ``strikes``."""
    fusion = _tower_knowing_no_cube(0, below_cubes, 1.3)
    fusion.add_impacts([_strike(1.0 + 0.1 * k, level) for k, level in enumerate(strikes)])
    return fusion


def test_a_cube_that_struck_a_plate_on_its_way_down_does_not_teach_it_its_cube() -> None:
    # The tower's first cube struck plate 3 and went on down to plate 0;
    # plate 3's cell kept a thirtieth of a cube (its hysteresis) and is
    # decided before plate 0 is.
    rest = LoadStep(level=3, t_before_s=0.95, t_settled_s=1.25, t_decided_s=1.6,
                    delta_counts=0.3 * UNIT, before_counts=0.0, after_counts=0.3 * UNIT)
    fusion = _passing_the_towers_first_cube(9.0, strikes=(3, 2, 1, 0))
    assert fusion.add_settled_step(rest) == []
    assert fusion.scale.unit(3) is None and fusion.accounted[3] == 0.3 * UNIT
    # No plate below moved: plate 3's first cube, however small.
    fusion = _passing_the_towers_first_cube(0.0, strikes=(4, 3))
    assert [e.floor for e in fusion.add_settled_step(rest) if isinstance(e, Landing)] == [3]
    # Gone on down to a plate that moved only twice as far: a kit of mixed
    # cells, and plate 3 took a cube of its own.
    fusion = _passing_the_towers_first_cube(0.6, strikes=(3, 2, 1, 0))
    assert [e.floor for e in fusion.add_settled_step(rest) if isinstance(e, Landing)] == [3]


def test_a_plate_with_no_cube_size_let_go_by_a_hand_does_not_learn_its_cube_from_it() -> None:
    # A hand pressed plate 3 by a tenth of a cube from 1.0 s to 1.8 s (taken
    # for drift) and let go as a cube was heard striking there: the plate
    # is back where it held still a moment ago, which no cube does.
    release = LoadStep(level=3, t_before_s=1.8, t_settled_s=1.9, t_decided_s=2.2,
                       delta_counts=-0.1 * UNIT, before_counts=0.1 * UNIT, after_counts=0.0)
    fusion = _tower_knowing_no_cube(3, 0.1, 1.0, until_s=1.85)
    fusion.accounted[3] = 0.1 * UNIT
    fusion.add_impacts([_strike(1.75, 3), _strike(1.8, 3)])
    assert fusion.add_settled_step(release) == []
    assert fusion.scale.unit(3) is None
    # A plate never at that load before: its first cube (a cell wired the
    # other way).
    fusion = _tower_knowing_no_cube(3, 0.0, 1.0)
    fusion.add_impacts([_strike(1.75, 3), _strike(1.8, 3)])
    first = replace(release, before_counts=0.0, after_counts=-0.1 * UNIT)
    assert [e.floor for e in fusion.add_settled_step(first) if isinstance(e, Landing)] == [3]


def test_a_plate_giving_up_more_cubes_than_it_holds_learnt_its_cube_from_a_drift() -> None:
    # Plate 6 learnt its cube, a tenth of its neighbours', from one step
    # down (a drift heard with a drop) and took the sign of a landing from
    # it. A cube heard landing on it then reads as ten taken away from a
    # closed tower: it is the plate's first cube.
    fusion = _fusion()
    fusion.scale.forget(6)
    fusion.scale.learn(6, 0.1 * UNIT, 1)
    fusion.scale.relearn_sign(6, -0.1 * UNIT, cubes_added=True)
    fusion.cubes_on[6] = 1
    fusion.add_impacts([_strike(1.0, 6), _strike(1.05, 6)])
    cube = LoadStep(level=6, t_before_s=0.95, t_settled_s=1.2, t_decided_s=1.5,
                    delta_counts=UNIT, before_counts=0.0, after_counts=UNIT)
    assert _landings(fusion.add_settled_step(cube)) == [(6, 1, 1.05)]
    assert fusion.scale.sign[6] == 1.0
    # Unheard, it is a hand's doing, and the plate's size stands.
    fusion = _fusion()
    fusion.scale.forget(6)
    fusion.scale.learn(6, 0.1 * UNIT, 1)
    fusion.scale.relearn_sign(6, -0.1 * UNIT, cubes_added=True)
    fusion.cubes_on[6] = 1
    fusion.add_impacts([_strike(0.1, 1)])  # the discs listen, and heard nothing since
    assert not _landings(fusion.add_settled_step(cube))
    assert fusion.scale.unit(6) == 0.1 * UNIT
    # Nor as the modules above are set back: a plate pressed while they were
    # off is let go, heard with the thump.
    fusion = _fusion()
    fusion.scale.forget(3)
    fusion.scale.learn(3, 0.1 * UNIT, 1)
    fusion.scale.relearn_sign(3, -0.1 * UNIT, cubes_added=True)
    fusion.cubes_on[3] = 1
    _set_back(fusion, 1.1)
    fusion.add_impacts([_strike(1.0, 3), _strike(1.05, 3)])
    assert not _landings(fusion.add_settled_step(replace(cube, level=3)))
    assert fusion.scale.unit(3) == 0.1 * UNIT


def test_an_earlier_throws_knock_down_does_not_hide_this_ones_stop() -> None:
    # Plate 7 lost a cube 0.7 s before this throw (the last throw's
    # knock-down, in a quick series): this throw's cube still stopped on
    # plate 5 and knocked its cube down to 3.
    fusion = _stop_candidate()
    fusion._recent_steps.append((_step(7, 4.2, 4.3, -1.0), -1))
    assert _landing_below(fusion, 5.9) == _STOPPED
    # A loss above in this very drop is where the cube below came from.
    fusion = _stop_candidate()
    fusion._recent_steps.append((_step(7, 5.0, 5.08, -1.0), -1))
    assert _landing_below(fusion, 5.9) == _PASSED


def test_events_come_out_in_the_order_they_were_decided() -> None:
    # Plate 4 settled first but its still window took longer to complete
    # than plate 2's: plate 2's landing was decided first and comes first
    # (contracts.md section 3: JSON Lines in the order decided).
    fusion = _fusion()
    fusion.add_impacts([_strike(0.95, 4), _strike(1.0, 2)])
    first = LoadStep(level=4, t_before_s=0.95, t_settled_s=1.0, t_decided_s=1.30,
                     delta_counts=UNIT, before_counts=0.0, after_counts=UNIT)
    second = LoadStep(level=2, t_before_s=1.0, t_settled_s=1.05, t_decided_s=1.25,
                      delta_counts=UNIT, before_counts=0.0, after_counts=UNIT)
    out = fusion.add_load([first, second], [], 1.30) + fusion.advance(2.0)
    assert sorted(_landings(out)) == [(2, 1, 1.0), (4, 1, 0.95)]
    decided = [e.t_decided for e in out]
    assert decided == sorted(decided)


def _landing_heard_busy(busy: list[tuple[float, bool]]) -> list[tuple[int, int, float]]:
    """A cube struck plate 5 last at 0.95 s; its plate made sound as ``busy`` says."""
    fusion, step = _rests_a_moment(None)
    for t, on in busy:
        fusion.add_busy(PlateBusy(t, 5, on))
    return _landings(_decide(fusion, step, 1.2))


def test_a_landing_is_timed_when_its_plate_fell_quiet_after_the_last_strike() -> None:
    # Busy from the strike until the cube stopped rocking 80 ms later.
    assert _landing_heard_busy([(0.96, True), (1.03, False)]) == [(5, 1, 1.03)]
    # Still busy when the landing was decided: as late as that.
    assert _landing_heard_busy([(0.96, True)]) == [(5, 1, 1.062)]
    # Not busy after the strike (too faint), or busy since long before it (a
    # noisy room): the strike times it.
    assert _landing_heard_busy([]) == [(5, 1, 0.95)]
    assert _landing_heard_busy([(0.2, True), (1.03, False)]) == [(5, 1, 0.95)]
    # A quiet spell after the landing was decided is not known then.
    assert _landing_heard_busy([(0.96, True), (1.1, False)]) == [(5, 1, 1.062)]


def _plate_moves_with(others: int, strikes: int, landed_there: bool = False) -> list:
    """Plate 3 gained a cube's weight by 1.3 s; ``others`` plates moved by 0.4 cube with it."""
    values = np.zeros((_T.size, 8))
    values[_T >= 1.0, 3] = UNIT
    for k in (0, 1, 6, 7)[:others]:
        values[_T >= 1.0, k] = 0.4 * UNIT
    fusion = _fusion(values)
    if landed_there:
        for k in (0, 1, 6, 7)[:others]:
            fusion._levels[k].landed_t = 0.2
    fusion.add_impacts([_strike(0.95 + 0.04 * i, 3) for i in range(strikes)])
    return _landings(fusion.add_settled_step(_step(3, 0.95, 1.3, 1.0)))


def test_a_plate_that_moved_with_others_unheard_was_moved_by_a_hand_steadying_the_tower() -> None:
    # A hand on the tower moves every plate a little; one by about a cube.
    assert _plate_moves_with(others=3, strikes=1) == []
    assert _plate_moves_with(others=4, strikes=0) == []
    # A cube heard striking its way down moves its plate, the others may
    # still ring from the last throw.
    assert _landings_of(_plate_moves_with(others=3, strikes=2)) == [3]
    # Two plates moving with it may be cubes sliding by; alone, it is a cube.
    assert _landings_of(_plate_moves_with(others=2, strikes=1)) == [3]
    assert _landings_of(_plate_moves_with(others=0, strikes=0)) == [3]
    # Plates that cubes had just landed on move on their own (a quick series).
    assert _landings_of(_plate_moves_with(others=3, strikes=1, landed_there=True)) == [3]


def _first_cube_moves_with(heard: list[TimedImpact], *, others: int = 2,
                           flat: bool = False, gained: float = 0.07) -> list[int]:
    """Plate 3, knowing no cube yet, gained ``gained`` of UNIT by 1.3 s.

    ``others`` plates (0 and 6, then 1) moved with it by 0.05 of UNIT: a
    hand on the tower. Plates 0, 1, 6 and 7 know their cubes, of mixed
    cells (none lent), the smallest 0.2 of UNIT.
    """
    values = np.zeros((_T.size, 8))
    values[_T >= 1.0, 3] = gained * UNIT
    for k in (0, 6, 1)[:others]:
        values[_T >= 1.0, k] = 0.05 * UNIT
    scale, acoustic = CubeScale(n_levels=8), AcousticLevelModel(n_levels=8)
    fusion = Fusion(n_levels=8, first_landings_held=0, scale=scale, acoustic=acoustic)
    for level, size in ((0, 1.0), (1, 3.0), (6, 0.2), (7, 10.0)):
        fusion.scale.learn(level, size * UNIT, 1)
    fusion.load_coverage.add(_T)
    fusion.load_history.add(_T, values, np.ones((_T.size, 8), bool))
    fusion.accounted[:] = 0.0
    for _ in range(10):
        fusion.flat_discs.note(stood_out=not flat)
    fusion.add_impacts(heard)
    step = LoadStep(level=3, t_before_s=0.95, t_settled_s=1.3, t_decided_s=1.6,
                    delta_counts=gained * UNIT, before_counts=0.0, after_counts=gained * UNIT)
    return _landings_of(_landings(fusion.add_settled_step(step)))


def test_a_plate_knowing_no_cube_moved_with_two_others_and_no_cube_heard_is_a_hand() -> None:
    # A hand steadying the tower (model AC) moves three plates by a few
    # hundredths of a cube; one that knows no cube yet would take that for
    # its first cube, and every cube after it for fourteen.
    rumble = [_rumble(0.96 + 0.1 * i, (3, 5, 7)[i]) for i in range(3)]
    assert _first_cube_moves_with(rumble) == []
    # A cube heard standing out on the plate: its first cube.
    assert _first_cube_moves_with(rumble + [_strike(0.98, 3)]) == [3]
    # One heard anywhere just before (in a quick series the plate's strike
    # may be loudest on another, and other plates move with their own cubes).
    assert _first_cube_moves_with(rumble + [_strike(0.6, 6)]) == [3]
    # An older cube's strikes elsewhere are that cube's.
    assert _first_cube_moves_with(rumble + [_strike(0.3, 6)]) == []
    # One other plate moving with it is not enough; nor do strikes that
    # never stand out on a disc (flat discs) tell the hands.
    assert _first_cube_moves_with(rumble, others=1) == [3]
    assert _first_cube_moves_with(rumble, flat=True) == [3]


def test_a_first_step_far_below_any_cube_weighed_moved_with_two_others_is_a_hand() -> None:
    # A table knock heard as a hand steadies the tower (model AC): plate 3,
    # knowing no cube, moves by a quarter of the smallest cube any plate
    # weighed (0.2 of UNIT), and two others with it. Heard or not, a hand's.
    rumble = [_rumble(0.96 + 0.1 * i, (3, 5, 7)[i]) for i in range(3)]
    knock = [_strike(0.98, 3)]
    assert _first_cube_moves_with(rumble + knock, gained=0.05) == []
    # Over a third of it (a 300 g cell beside 100 g ones reads a cube so): a cube.
    assert _first_cube_moves_with(rumble + knock, gained=0.07) == [3]
    # Alone, the plate's step is a cube's, however small.
    assert _first_cube_moves_with(rumble + knock, gained=0.05, others=0) == [3]


def test_a_plate_that_moved_as_hands_rumbled_with_no_cube_heard_is_no_landing() -> None:
    # Hands gripping the tower before a lift rumble on every disc alike and
    # move several plates; the settled view sees plate 3 hold about a
    # cube's worth (1.3 of one: a hand's press is no whole cube but by chance).
    def settled(heard: list[TimedImpact], restless: tuple[int, ...], cubes: float = 1.3
                ) -> list[int]:
        fusion = _fusion()
        fusion.add_impacts(heard)
        step = replace(_settling_with(restless), delta_counts=cubes * UNIT,
                       after_counts=cubes * UNIT)
        return _landings_of(_landings(fusion.add_settled_step(step)))

    rumble = [_rumble(0.96 + 0.05 * i, i % 8) for i in range(6)]
    assert settled(rumble, (1, 6)) == []
    # One other plate held by the hands is enough (model E's hands hold each
    # lower plate with a 60 % chance).
    assert settled(rumble, (6,)) == []
    # A strike standing out on one plate among the rumble: a cube.
    assert settled(rumble + [_strike(1.2, 3)], (1, 6)) == [3]
    # The other plates still: one plate moved, as a cube moves it.
    assert settled(rumble, ()) == [3]
    # One clean cube: a cube that landed unheard while a phone buzzed on the
    # table or a hand rested on the tower (cross-check models F-U's noisy
    # rooms: such steps were cubes 46 times and hands 4).
    assert settled(rumble, (1, 6), cubes=1.0) == [3]


def test_a_plate_with_no_cube_size_that_moved_with_others_is_judged_by_its_own_step() -> None:
    # Plate 3 knows no cube yet; it moved by a fifth of the others' cube,
    # heard by one strike, while three plates moved by 0.15 cube (under the
    # quarter cube asked of plates with a size) and so half as far as it did.
    def first_step(others_cubes: float) -> list:
        values = np.zeros((_T.size, 8))
        values[_T >= 1.0, 3] = 0.2 * UNIT
        for k in (0, 1, 6):
            values[_T >= 1.0, k] = others_cubes * UNIT
        fusion = _fusion(values)
        fusion.scale.forget(3)
        fusion.scale.refuse_pool(3)
        fusion.add_impacts([_strike(0.95, 3)])
        return _landings_of(_landings(fusion.add_settled_step(_step(3, 0.95, 1.3, 0.2))))

    assert first_step(0.15) == []
    # Others still (a cube's jolt moves them by a few percent): its first cube.
    assert first_step(0.02) == [3]


def _landings_of(landings: list[tuple[int, int, float]]) -> list[int]:
    return [floor for floor, _, _ in landings]


def test_the_fast_view_leaves_a_plate_moved_with_others_unheard_to_the_settled_view() -> None:
    values = np.zeros((_T.size, 8))
    values[_T >= 1.0, 3] = UNIT
    for k in (0, 1, 6):
        values[_T >= 1.0, k] = 0.4 * UNIT
    fusion = _fusion(values)
    fusion.add_impacts([_strike(0.95, 3)])
    step = LoadStep(level=3, t_before_s=0.95, t_settled_s=1.2, t_decided_s=1.3,
                    delta_counts=UNIT, before_counts=0.0, after_counts=UNIT)
    assert not fusion._fast_step_trusted(step)
    alone = _fusion(np.where(np.arange(8) == 3, values, 0.0))
    alone.add_impacts([_strike(0.95, 3)])
    assert alone._fast_step_trusted(step)


def test_a_plate_does_not_learn_its_first_cube_from_drift_that_no_strike_came_with() -> None:
    # Plate 2 knows no cube; its cell drifted by six times its noise before
    # anything was thrown, the piezos listening all along.
    def first_change(delta_noises: float, struck: bool, drifted_noises: float = 0.0) -> list:
        fusion = _fusion()
        fusion.scale.forget(2)
        fusion.scale.refuse_pool(2)
        fusion.piezo_since_s = 0.0
        if struck:
            fusion.add_impacts([_strike(0.95, 2)])
        step = replace(_step(2, 0.95, 1.3, delta_noises * 4.0 / UNIT), noise_counts=4.0)
        # Drifted since its load was last accounted for, the same way.
        fusion.accounted[2] = step.before_counts - drifted_noises * 4.0
        return _landings(fusion.add_settled_step(step))

    assert first_change(6.0, struck=False) == []
    # Heard, or many times the noise: a cube, whose size the plate learns.
    assert [f for f, _, _ in first_change(6.0, struck=True)] == [2]
    assert [f for f, _, _ in first_change(40.0, struck=False)] == [2]
    # Eight times the noise, ten with the drift before it: the step is no
    # cube however far the plate wandered (model J: a false landing that
    # taught the plate a cube a twentieth of its neighbours').
    assert first_change(8.0, struck=False, drifted_noises=3.0) == []
    assert [f for f, _, _ in first_change(8.0, struck=True, drifted_noises=3.0)] == [2]


def test_in_a_game_of_two_kinds_of_cube_one_heavier_cube_is_one_landing() -> None:
    def settled(fusion: Fusion) -> list[tuple[int, int, float]]:
        fusion.add_impacts([_strike(1.00, 3), _strike(1.05, 3)])  # one cube's drop
        return _landings(fusion.add_settled_step(_step(3, 0.9, 1.6, 1.6)))

    assert [cubes for _, cubes, _ in settled(_fusion())] == [2]
    # The tower has read that odd size before, heard as one drop each time.
    fusion = _fusion()
    for level in (5, 6):
        fusion.scale.note_step(level, 1.58 * UNIT)
    assert [cubes for _, cubes, _ in settled(fusion)] == [1]


def test_a_first_gain_far_too_small_for_any_cell_of_the_kit_is_no_cube() -> None:
    def first_gain(cubes: float) -> list[tuple[int, int, float]]:
        fusion = Fusion(n_levels=8, first_landings_held=0, scale=CubeScale(n_levels=8),
                        acoustic=AcousticLevelModel(n_levels=8))
        for level in (1, 2, 3):  # a matched set: plate 6 borrows their cube
            fusion.scale.learn(level, UNIT, 1)
        fusion.load_coverage.add(_T)
        fusion.load_history.add(_T, np.zeros((_T.size, 8)), np.ones((_T.size, 8), bool))
        fusion.accounted[:] = 0.0
        fusion.add_impacts([_strike(1.00, 6), _strike(1.05, 6)])
        return _landings(fusion.add_settled_step(_step(6, 0.9, 1.6, cubes)))

    # A third of the borrowed cube: a cell of another kind, its first cube.
    assert [floor for floor, _, _ in first_gain(0.35)] == [6]
    # A seventh: a neighbour's cube jolting the stacked modules, or a hand.
    assert first_gain(0.14) == []


def test_a_noisy_plate_borrowing_its_cube_keeps_it_when_its_account_is_stale() -> None:
    # Plate 6 borrows the matched set's cube. Its cell was too noisy to show
    # its first three cubes, so the load accounted for is four cubes behind
    # when its first step, one cube of the borrowed size, heard striking it,
    # comes: four cubes are on it, and the borrowed size is right.
    fusion = Fusion(n_levels=8, first_landings_held=0, scale=CubeScale(n_levels=8),
                    acoustic=AcousticLevelModel(n_levels=8))
    for level in (1, 2, 3):
        fusion.scale.learn(level, UNIT, 1)
    fusion.load_coverage.add(_T)
    fusion.load_history.add(_T, np.zeros((_T.size, 8)), np.ones((_T.size, 8), bool))
    fusion.accounted[:] = 0.0
    fusion.add_impacts([_strike(1.00, 6), _strike(1.05, 6)])
    step = LoadStep(level=6, t_before_s=0.9, t_settled_s=1.6, t_decided_s=1.9,
                    delta_counts=UNIT, before_counts=3 * UNIT, after_counts=4 * UNIT)
    assert [(floor, cubes) for floor, cubes, _ in _landings(fusion.add_settled_step(step))] == [
        (6, 4)]
    assert fusion.scale.borrowed(6) and fusion.scale.unit(6) == UNIT


def test_a_cube_the_fast_view_counted_is_not_counted_again_on_a_plate_that_had_drifted() -> None:
    # The plate crept up by 0.56 of a cube since its load was last accounted
    # for; then a cube lands, read 0.94 of a cube by the fast view.
    readings = np.zeros((_T.size, 8))
    readings[:, 3] = np.where(_T < 1.1, 0.56, 1.56) * UNIT
    fusion = _fusion(readings)
    fusion.add_impacts([_strike(1.00, 3), _strike(1.05, 3)])
    fast = LoadStep(level=3, t_before_s=0.95, t_settled_s=1.10, t_decided_s=1.16,
                    delta_counts=0.94 * UNIT, before_counts=0.56 * UNIT,
                    after_counts=1.50 * UNIT)
    first = fusion.add_load([fast], [], 1.16) + fusion.advance(1.3)
    assert _landings(first) == [(3, 1, 1.05)]
    # Zero tracking with the settled view's level from before the cube takes
    # nothing back of it.
    fusion.track_settled_levels(np.where(np.arange(8) == 3, 0.56 * UNIT, 0.0),
                                np.where(np.arange(8) == 3, 0.9, 1.3), 1.3)
    assert fusion.accounted[3] == pytest.approx(0.94 * UNIT)
    # The settled view measures the same cube, still: one cube, already counted.
    settled = LoadStep(level=3, t_before_s=0.9, t_settled_s=1.4, t_decided_s=1.45,
                       delta_counts=1.0 * UNIT, before_counts=0.56 * UNIT,
                       after_counts=1.56 * UNIT)
    assert _landings(fusion.add_settled_step(settled)) == []
    assert fusion.accounted[3] == pytest.approx(1.56 * UNIT)


def test_a_plate_restless_for_seconds_with_four_others_gains_a_cube_only_if_one_was_heard() -> None:
    # A hand steadies the tower from 0.5 s to 3.5 s; plate 3 ends a cube heavier.
    under_hand = LoadStep(level=3, t_before_s=0.5, t_settled_s=3.5, t_decided_s=3.6,
                          delta_counts=UNIT, before_counts=0.0, after_counts=UNIT,
                          busy_levels=4, busy_mask=0b11100011)
    # Nothing heard of plate 3 meanwhile, a cube far above on 7: the hand's.
    for heard in ([], [_strike(2.0, 7), _strike(2.05, 7)]):
        fusion = _fusion()
        fusion.piezo_since_s = 0.0  # the discs were listening
        fusion.add_impacts(heard)
        assert _landings(fusion.add_settled_step(under_hand)) == []
    # A cube heard striking plate 3 (or the plate next to it) in that time: a cube.
    for level in (3, 4):
        fusion = _fusion()
        fusion.add_impacts([_strike(2.0, level), _strike(2.05, level)])
        assert [(f, n) for f, n, _ in _landings(fusion.add_settled_step(under_hand))] == [(3, 1)]


def _fusion_knowing(units: dict[int, float]) -> Fusion:
    """A fusion in which only the levels of ``units`` have learnt a cube, of those sizes."""
    scale, acoustic = CubeScale(n_levels=8), AcousticLevelModel(n_levels=8)
    fusion = Fusion(n_levels=8, first_landings_held=0, scale=scale, acoustic=acoustic)
    for level, unit in units.items():
        fusion.scale.learn(level, unit, 1)
    fusion.load_coverage.add(_T)
    fusion.load_history.add(_T, np.zeros((_T.size, 8)), np.ones((_T.size, 8), bool))
    fusion.accounted[:] = 0.0
    return fusion


_THREE_APART = [
    _strike(1.00, 7), _strike(1.05, 7),  # three cubes onto the top plate, a third of a second apart
    _strike(1.35, 7), _strike(1.40, 7),
    _strike(1.70, 7), _strike(1.74, 7),
]


def test_a_levels_first_step_heard_as_three_drops_of_the_others_size_is_three_landings() -> None:
    # A quick series onto a plate read 10 times a second settles as one
    # step of three cubes before the plate has a size of its own: the
    # other levels' agreeing cubes and the three drops heard say three.
    fusion = _fusion_knowing({2: 950.0, 3: 1050.0})
    fusion.add_impacts(_THREE_APART)
    out = fusion.add_settled_step(_step(7, 0.9, 2.2, 3.0))
    assert _landings(out) == [(7, 1, 1.05), (7, 1, 1.4), (7, 1, 1.74)]
    assert fusion.scale.unit(7) == pytest.approx(UNIT)


@pytest.mark.parametrize(
    ("units", "drops"),
    [
        ({2: 950.0}, _THREE_APART),  # one level's size alone says little
        ({2: 300.0, 3: 3000.0}, _THREE_APART),  # a mixed set of cells: sizes say nothing
        ({2: 950.0, 3: 1050.0}, _THREE_APART[:2]),  # one drop heard: one heavy cube
    ],
)
def test_a_levels_first_step_is_one_cube_unless_sizes_and_drops_both_say_more(
    units: dict[int, float], drops: list[TimedImpact]
) -> None:
    fusion = _fusion_knowing(units)
    fusion.add_impacts(drops)
    out = fusion.add_settled_step(_step(7, 0.9, 2.2, 3.0))
    assert [(floor, cubes) for floor, cubes, _ in _landings(out)] == [(7, 1)]
    assert fusion.scale.unit(7) == pytest.approx(3 * UNIT)


def test_the_fast_view_splits_a_levels_first_step_heard_as_three_drops_too() -> None:
    fusion = _fusion_knowing({2: 950.0, 3: 1050.0})
    fusion.add_impacts(_THREE_APART)
    step = _step(7, 0.9, 2.2, 3.0)
    out = fusion.add_load([step], [], step.t_decided_s) + fusion.advance(3.0)
    assert [(floor, cubes) for floor, cubes, _ in _landings(out)] == [(7, 1)] * 3


def test_a_many_cube_step_counted_again_as_no_cube_is_no_landing() -> None:
    # Level 5 learnt a touch's size (a twentieth of a cube); three of those,
    # unheard, make its size forgotten, and with the matched cells' size
    # borrowed the step is no cube at all: nothing to report, and never a
    # landing of zero cubes.
    fusion = _fusion_knowing({0: UNIT, 1: UNIT, 2: UNIT, 5: 0.05 * UNIT})
    out = fusion.add_settled_step(_step(5, 1.0, 1.2, 0.15))
    assert [e for e in out if isinstance(e, Landing)] == []
    assert fusion.scale.unit(5) == pytest.approx(UNIT)


def test_a_cube_leaving_a_plate_that_holds_it_does_not_turn_its_cell_around() -> None:
    # Level 4's votes on its cell's sign stand even (a landing, then a step
    # misread the other way); it holds one cube. That cube leaving (slid on
    # into the hole, knocked down) is a clean loss of one cube, which the
    # plate can account for: it is no vote that its cell is wired the other
    # way, and no landing.
    fusion = _fusion_knowing({0: UNIT, 1: UNIT, 2: UNIT, 4: UNIT})
    fusion.scale.learn_sign(4, UNIT, cubes_added=True)
    fusion.scale.learn_sign(4, -UNIT, cubes_added=True)
    fusion.cubes_on[4] = 1
    fusion.add_impacts([_strike(1.00, 4), _strike(1.08, 3)])
    step = replace(_step(4, 0.9, 1.3, -1.0), before_counts=UNIT, after_counts=0.0)
    out = fusion.add_load([step], [], step.t_decided_s) + fusion.advance(2.5)
    assert _landings(out) == []
    assert fusion.scale.sign[4] == 1.0


@pytest.mark.parametrize("doubted", [True, False])
def test_a_doubted_cube_left_over_by_a_plates_first_cube_shows_that_cube_was_two(
    doubted: bool,
) -> None:
    # Level 7 has no size and the other cells are mixed. Its first cube is
    # seen by the fast view but doubted (plates restless in a quick series);
    # the next two settle together and are taken for its first cube. Once
    # still, a cube's worth is left over, as much as the doubted step: the
    # size was two cubes', and all three are reported. Without that doubted
    # step the rest is the one cube measured short, as before.
    fusion = _fusion_knowing({2: 300.0, 3: 3000.0})
    fusion.add_impacts([_strike(1.0, 7), _strike(1.05, 7), _strike(1.6, 7), _strike(1.65, 7),
                        _strike(1.9, 7), _strike(1.95, 7)])
    if doubted:
        fusion._doubt(LoadStep(level=7, t_before_s=0.95, t_settled_s=1.3, t_decided_s=1.35,
                               delta_counts=UNIT, before_counts=0.0, after_counts=UNIT))
    pair = LoadStep(level=7, t_before_s=1.55, t_settled_s=2.3, t_decided_s=2.35,
                    delta_counts=2 * UNIT, before_counts=UNIT, after_counts=3 * UNIT)
    out = fusion.add_load([pair], [], pair.t_decided_s) + fusion.advance(2.6)
    assert [(floor, cubes) for floor, cubes, _ in _landings(out)] == [(7, 1)]
    settled = LoadStep(level=7, t_before_s=0.95, t_settled_s=3.0, t_decided_s=3.3,
                       delta_counts=3 * UNIT, before_counts=0.0, after_counts=3 * UNIT)
    out = fusion.add_settled_step(settled)
    if doubted:
        # Timed by the doubted step, and by the pair's first strike.
        assert sorted(_landings(out)) == [(7, 1, 1.3), (7, 1, 1.6)]
        assert fusion.scale.unit(7) == pytest.approx(UNIT)
        assert fusion.cubes_on[7] == 3
    else:
        assert _landings(out) == []
        assert fusion.cubes_on[7] == 1


@pytest.mark.parametrize(("amplitude", "told"), [(3000.0, False), (600.0, True)])
def test_stops_are_not_inferred_where_passing_cubes_swing_plates_like_landings(
    amplitude: float, told: bool
) -> None:
    # Five cubes clip plate 5's hole edge on their way down (one strike,
    # the cube below 25 ms later) while it holds a cube, and it rings from
    # each. Where they swing it like a landing (3000 counts against its
    # usual 2000), a stop's swing tells nothing: the stop that follows
    # (plate 5 bounced on and rang like a landing) is not reported, nor
    # suspected; it is only weighed once the plate is still.
    t = np.arange(2.0, 6.0, 1 / 80)
    passes = (2.4, 2.8, 3.2, 3.6, 4.0)
    values = _ringing(t, passes, amplitude) + _ringing(t, (5.0,))
    fusion = _plate_holding(1, t, values)
    for at in passes:
        assert fusion.pass_swings.stops_told  # not before five passes
        clipped = [_strike(at, 5), _strike(at + 0.025, 4), _strike(at + 0.08, 4)]
        assert fusion._stopped_above(4, clipped, at - 0.05, at + 0.35) is None
    assert fusion.pass_swings.passes == 5
    assert fusion.pass_swings.stops_told is told
    twice = [_strike(5.00, 5), _strike(5.05, 5), _strike(5.065, 4), _strike(5.12, 4)]
    stop = fusion._stopped_above(4, twice, 4.95, 5.9)
    assert stop is not None and stop.level == 5 and stop.told is told
    fusion.add_impacts(twice)
    out = fusion._landings(_step(4, 5.0, 5.2, 1.0), 1, 0.9, 5.3, settled=False)
    [landing] = [e for e in out if isinstance(e, Landing)]
    assert landing.maybe_stopped_on == (5 if told else None)
    assert [(s.level, s.below) for s in fusion._suspected_stops] == [(5, 4)]


def test_a_pass_looked_at_again_counts_once() -> None:
    swings = PassSwings()
    for _ in range(3):
        swings.note(5, 4.2, like_landing=True)
    assert swings.passes == 1 and swings.like_landings == 1


@pytest.mark.parametrize(("later", "holds"), [(0.05, False), (1.0, True), (3.0, True)])
def test_a_plate_with_no_size_holds_its_first_cube_until_it_goes_back(
    later: float, holds: bool
) -> None:
    # Plate 3 has no cube size yet; a step of 1000 counts settles at 1.1 s
    # and is looked at again at 1.8 s. If the cube slid on at 1.5 s (the
    # plate back to within a twentieth of it), the plate no longer holds
    # it, though any gain would read as "one cube"; two more cubes landing
    # there meanwhile (a quick series) do not make it go.
    scale, acoustic = CubeScale(n_levels=8), AcousticLevelModel(n_levels=8)
    fusion = Fusion(n_levels=8, first_landings_held=0, scale=scale, acoustic=acoustic)
    values = np.zeros((_T.size, 8))
    values[_T >= 1.0, 3] = UNIT
    values[_T >= 1.5, 3] = later * UNIT
    fusion.load_history.add(_T, values, np.ones((_T.size, 8), bool))
    step = LoadStep(level=3, t_before_s=0.9, t_settled_s=1.1, t_decided_s=1.8,
                    delta_counts=UNIT, before_counts=0.0, after_counts=UNIT)
    assert fusion.scale.unit(3) is None
    assert fusion._still_holds(step) is holds


def _settled_rise(leaves_at: float | None) -> tuple[Fusion, LoadStep]:
    """The settled view's rise of one cube on plate 5, still from 1.0 s; gone at ``leaves_at``."""
    fusion, _ = _rests_a_moment(leaves_at)
    fusion.slide_signs.slides_seen = 2  # a tower whose cubes were seen to slide on
    rise = LoadStep(level=5, t_before_s=0.95, t_settled_s=1.0, t_decided_s=1.3,
                    delta_counts=UNIT, before_counts=0.0, after_counts=UNIT)
    return fusion, rise


def _advance_to(fusion: Fusion, start: float, until: float) -> list:
    out: list = []
    for now in np.arange(start, until, 0.05):
        out += fusion.advance(float(now))
    return out


def test_where_cubes_slide_the_settled_view_too_waits_until_its_plate_has_held_the_cube() -> None:
    # The plate still holds it 0.6 s after it fell still: a landing, decided then.
    fusion, rise = _settled_rise(leaves_at=None)
    assert fusion.add_settled_step(rise) == []
    out = _advance_to(fusion, 1.3, 2.0)
    assert _landings(out) == [(5, 1, 0.95)] and out[0].t_decided == pytest.approx(1.6)
    # The cube rolled on into the hole 0.45 s after the plate fell still: none.
    fusion, rise = _settled_rise(leaves_at=1.45)
    assert fusion.add_settled_step(rise) == []
    assert _landings(_advance_to(fusion, 1.3, 2.0)) == []
    assert fusion.slide_signs.slides_seen == 3 and fusion.accounted[5] == 0.0
    # Or the settled view saw it leave before the wait was over: neither counts.
    fusion, rise = _settled_rise(leaves_at=1.2)
    assert fusion.add_settled_step(rise) == []
    fall = LoadStep(level=5, t_before_s=1.18, t_settled_s=1.25, t_decided_s=1.5,
                    delta_counts=-UNIT, before_counts=UNIT, after_counts=0.0)
    assert fusion.add_settled_step(fall) == []
    assert _landings(_advance_to(fusion, 1.5, 2.0)) == []
    assert fusion.cubes_on[5] == 0
    # In a tower whose cubes were never seen to slide, the settled view decides at once.
    fusion, rise = _settled_rise(leaves_at=None)
    fusion.slide_signs.slides_seen = 0
    assert _landings(fusion.add_settled_step(rise)) == [(5, 1, 0.95)]


def test_a_landing_is_not_reported_once_its_plate_is_back_where_it_was() -> None:
    # The fast view decides the rise only when the cube has already left
    # (it rested 0.3 s on the plate, the decision came 0.4 s on).
    fusion, step = _rests_a_moment(leaves_at=1.3)
    late = replace(step, t_decided_s=1.4)
    assert _landings(_decide(fusion, late, 1.8)) == []
    # Still there when decided: a landing.
    fusion, step = _rests_a_moment(leaves_at=None)
    assert _landings(_decide(fusion, replace(step, t_decided_s=1.4), 1.8)) == [(5, 1, 0.95)]


def test_on_a_tower_whose_discs_hear_every_strike_alike_flat_strikes_are_no_hands() -> None:
    # Discs on the module walls: every throw sounds alike on all of them.
    rumble = [_rumble(0.96 + 0.05 * i, i % 8) for i in range(6)]
    wide = TimedImpact(0.9, Impact(frame=0, channels=tuple(range(8)), peaks=np.full(8, 50.0),
                                   floor=np.ones(8)))

    def settled(flat_landings: int) -> tuple[list[int], bool]:
        fusion = _fusion()
        for _ in range(flat_landings):
            fusion.flat_discs.note(stood_out=False)
        knocked = any(isinstance(e, Disturbance) for e in fusion.add_impacts([wide]))
        fusion.add_impacts(rumble)
        # 1.3 cubes: one clean cube is taken for a cube under hands' rumble too.
        step = replace(_settling_with((1, 6)), delta_counts=1.3 * UNIT, after_counts=1.3 * UNIT)
        return _landings_of(_landings(fusion.add_settled_step(step))), knocked

    # Until the tower has shown it, flat strikes are hands, a wide one a knock.
    assert settled(2) == ([], True)
    # Four one-cube changes in a row (this one the fourth) whose drops stood
    # out on no disc: flat strikes say nothing.
    assert settled(3) == ([3], True)
    assert settled(4) == ([3], False)


def test_flat_discs_are_told_by_four_flat_drops_or_most_of_the_last_twenty() -> None:
    discs = FlatDiscs()
    for _ in range(3):
        discs.note(stood_out=False)
    assert not discs.flat  # too few yet
    discs.note(stood_out=False)
    assert discs.flat  # four, every one flat
    discs = FlatDiscs()
    discs.note(stood_out=True)
    for _ in range(6):
        discs.note(stood_out=False)
    assert not discs.flat  # one stood out: eight are wanted, most of them flat
    discs.note(stood_out=False)
    assert discs.flat  # 7 of 8
    for _ in range(8):
        discs.note(stood_out=True)  # 7 of 16 flat
    assert not discs.flat
    for _ in range(5):
        discs.note(stood_out=False)  # 12 of the last 20
    assert discs.flat


def test_where_cubes_slide_a_cube_that_left_while_its_landing_waited_is_no_landing() -> None:
    # Model J: a gentle throw's cube rests a moment on plate after plate. Its
    # landing waits; when it leaves, the plate has not counted it, so its
    # fall must not be taken for a cube on a cell wired the other way (no
    # landing here has told the plate's sign yet).
    values = np.zeros((_T.size, 8))
    values[(_T >= 1.0) & (_T < 1.28), 5] = UNIT
    values[(_T >= 1.28) & (_T < 1.3), 5] = -UNIT  # the plate springs back as it lets go
    fusion = _fusion(values)
    for level in (0, 1, 2, 3, 4, 6, 7):  # landings elsewhere swung their plates by two cubes
        fusion._levels[level].landing_swings = [2 * UNIT] * 5
    fusion.add_impacts([_strike(0.95, 5)])
    step = LoadStep(level=5, t_before_s=0.95, t_settled_s=1.0, t_decided_s=1.0625,
                    delta_counts=UNIT, before_counts=0.0, after_counts=UNIT)
    fusion.slide_signs.slides_seen = 2
    assert not fusion.scale.knows_sign(5)
    out = fusion.add_load([step], [], step.t_decided_s)
    gone = LoadStep(level=5, t_before_s=1.28, t_settled_s=1.30, t_decided_s=1.35,
                    delta_counts=-UNIT, before_counts=UNIT, after_counts=0.0)
    for now in np.arange(step.t_decided_s, 1.35, 0.05):
        out += fusion.advance(float(now))
    out += fusion.add_load([gone], [], gone.t_decided_s)
    fusion.add_impacts([_strike(1.41, 4)])
    for now in np.arange(1.35, 2.0, 0.05):
        out += fusion.advance(float(now))
    assert _landings(out) == []
    assert not fusion.scale.knows_sign(5)


def test_a_plates_busy_changes_are_let_go_by_the_deciding_clock_not_by_the_newest_one() -> None:
    # A cube's last strike at 10.0 s on plate 3, which falls quiet at 10.09 s:
    # its rest time, asked when the landing is decided 3.3 s later. The
    # plate's later changes may have been taken up to a slice ahead of that
    # decision (how far depends on where the stream's chunks end); the
    # answer must not.
    def rest_time(ahead_s: float) -> float:
        fusion = _fusion()
        fusion.add_busy(PlateBusy(10.0, 3, True))
        fusion.add_busy(PlateBusy(10.09, 3, False))
        fusion.advance(13.3)
        for t in np.arange(13.4, 13.3 + ahead_s, 0.2):
            fusion.add_busy(PlateBusy(float(t), 3, bool(round(t * 5) % 2)))
        return fusion._rest_time(3, 10.0, 13.3)

    assert rest_time(0.0) == pytest.approx(10.09)
    assert rest_time(1.9) == rest_time(0.0)
    # Let go once the deciding clock has passed them by BUSY_KEPT_S.
    fusion = _fusion()
    fusion.add_busy(PlateBusy(10.0, 3, True))
    fusion.advance(10.0 + BUSY_KEPT_S + 0.1)
    assert not fusion._busy[3]


def test_a_tower_whose_grips_before_lifts_moved_a_plate_unheard_waits_with_unheard_rises() -> None:
    """Hands gripping the tower to lift it squeeze a plate by about a cube,
    with no strike: reported once, the lift after it shows the tower's grips,
    and the next unheard rise waits a second to see modules lifted."""
    def unheard_rise(level: int, t_s: float) -> LoadStep:
        return LoadStep(level=level, t_before_s=t_s, t_settled_s=t_s + 0.1, t_decided_s=t_s + 0.4,
                        delta_counts=UNIT, before_counts=0.0, after_counts=UNIT)

    def lifted(fusion: Fusion, lowest: int, t_s: float) -> list:
        gone = [LoadConnection(k, False, t_s, t_s + 0.05) for k in range(lowest, 8)]
        out = fusion.add_load([], gone, t_s + 0.05)
        return out + fusion.advance(t_s + 0.3)

    def closed(fusion: Fusion, lowest: int, t_s: float) -> None:
        fusion.add_load([], [LoadConnection(k, True, t_s, t_s) for k in range(lowest, 8)], t_s)

    def session(*, lift_again: bool) -> list:
        fusion = _fusion()
        fusion.piezo_since_s = 0.0
        found = _landings(fusion.add_settled_step(unheard_rise(2, 0.3)))
        assert found == [(2, 1, 0.4)]  # nothing yet says it was a hand
        lifted(fusion, 3, 0.9)
        closed(fusion, 3, 1.5)
        found = _landings(fusion.add_settled_step(unheard_rise(1, 2.6)))
        assert found == []  # waits: the tower has shown its grips
        if lift_again:
            found += _landings(lifted(fusion, 2, 3.2))
        return found + _landings(fusion.advance(3.8))

    assert session(lift_again=True) == []
    assert session(lift_again=False) == [(1, 1, 2.7)]


def test_unheard_rises_on_a_tower_that_showed_no_grips_are_reported_at_once() -> None:
    fusion = _fusion()
    fusion.piezo_since_s = 0.0
    for k, t in enumerate((0.3, 1.3, 2.3)):
        step = LoadStep(level=k, t_before_s=t, t_settled_s=t + 0.1, t_decided_s=t + 0.4,
                        delta_counts=UNIT, before_counts=0.0, after_counts=UNIT)
        assert _landings(fusion.add_settled_step(step)) == [(k, 1, round(t + 0.1, 3))]


def test_an_unheard_rise_far_from_whole_cubes_waits_for_a_lift_on_any_tower() -> None:
    """A grip's squeeze is no whole number of cubes: even before the tower
    showed a grip, an unheard rise of 0.6 cube waits a second, and modules
    lifted within it make it the hands'."""
    def squeeze(*, lift: bool) -> list:
        fusion = _fusion()
        fusion.piezo_since_s = 0.0
        step = LoadStep(level=4, t_before_s=0.3, t_settled_s=0.4, t_decided_s=0.7,
                        delta_counts=0.6 * UNIT, before_counts=0.0, after_counts=0.6 * UNIT)
        found = _landings(fusion.add_settled_step(step))
        assert found == []
        if lift:
            gone = [LoadConnection(k, False, 0.9, 0.95) for k in range(4, 8)]
            found += _landings(fusion.add_load([], gone, 0.95) + fusion.advance(1.2))
        return found + _landings(fusion.advance(1.6))

    assert squeeze(lift=True) == []
    assert squeeze(lift=False) == [(4, 1, 0.4)]


def test_a_plate_held_a_cube_lighter_after_the_blow_is_a_stop_weighed_and_reported() -> None:
    """The knocked cube left plate 5 before the thrown one's weight was on
    it: the plate read a cube lighter for 0.2 s (no step the fast view
    could take), then came back. That is weighed, not only suspected."""
    t = np.arange(4.0, 6.0, 1 / 80)
    values = _ringing(t, (5.0,))
    fusion = _plate_holding(1, t, values + np.where((t >= 5.02) & (t < 5.25), -UNIT, 0.0)[:, None]
                            * (np.arange(8) == 5))
    fusion.add_impacts([_strike(t, level) for t, level in _STOP_DROP])
    out = fusion._landings(_step(3, 5.0, 5.2, 1.0), 1, 0.9, 5.9, settled=False)
    assert _landings(out) == [(5, 1, 5.05), (3, 1, 5.15)]
    assert [(e.floor, e.knocked) for e in out if isinstance(e, Removal)] == [(5, True)]
    assert [e.knocked_from for e in out if isinstance(e, Landing) and e.floor == 3] == [5]
    # Swinging as far up as down, it is only suspected.
    assert _landing_below(_stop_candidate(), 5.9) == _STOPPED


def test_a_plate_left_lighter_than_before_holds_another_cube_a_stop_weighed_and_reported(
) -> None:
    """Plate 5 swung like a landing and ends a fifth of a cube lighter than
    before the throw: the cube there now is not the one that was (cubes
    differ in mass, and where one rests decides the share its cell sees).
    A stop, reported. Heavier by as much, or read 25 times a second (the
    change is then a reading or two of a plate that may still swing), or within
    three times the plate's noise, before the throw or as the change is read
    (a plate still ringing), it stays a suspicion."""
    def landing_below(
        offset: float, *, rate_hz: float = 80.0, noise: float = 0.0, ringing: float = 0.0
    ) -> list:
        t = np.arange(4.0, 6.0, 1 / rate_hz)
        values = _ringing(t, (5.0,))
        values[:, 5] += offset * UNIT * (t >= 5.0)
        values[:, 5] += ringing * UNIT * np.sin(2 * np.pi * 12 * t) * (t >= 5.0)
        values[:, 5] += noise * UNIT * np.random.default_rng(1).standard_normal(t.size)
        fusion = _plate_holding(1, t, values)
        fusion.add_impacts([_strike(at, level) for at, level in _STOP_DROP])
        return fusion._landings(_step(3, 5.0, 5.2, 1.0), 1, 0.9, 5.9, settled=False)

    out = landing_below(-0.2)
    assert _landings(out) == [(5, 1, 5.05), (3, 1, 5.15)]
    assert [(e.floor, e.knocked) for e in out if isinstance(e, Removal)] == [(5, True)]
    assert [e.knocked_from for e in out if isinstance(e, Landing) and e.floor == 3] == [5]
    heavier, hardly, slow, noisy, still_ringing = (
        landing_below(+0.2), landing_below(-0.03), landing_below(-0.2, rate_hz=25.0),
        landing_below(-0.2, noise=0.1), landing_below(-0.2, ringing=0.3),
    )
    for k, suspected in enumerate((heavier, hardly, slow, noisy, still_ringing)):
        assert _suspected(suspected) == _STOPPED, k


def test_a_suspected_stop_whose_plate_holds_another_cube_once_still_is_told_late() -> None:
    """Plate 5 swung like a landing and ends heavier (or lighter) by a few
    hundredths of a cube: as the landing below is decided the plate still
    rings, and the heavier side is no sign then (a passing blow leaves a
    plate reading high). Weighed again as it stills, two weighings in a row
    finding it changed the same way by three times its spread (or, while it
    still rings as one decaying mode, by three times how far the fits of its
    ringing put its load apart: told at the second weighing, 0.35 s after
    the landing, the ring still a tenth of a cube) tell the stop:
    a landing on 5, timed by the thrown cube's last strike there, naming the
    landing below as the knocked cube's. Unchanged, noisier than the change,
    or moved by the next cube, it stays a suspicion."""
    def told_late(
        offset: float, *, noise: float = 0.005, next_cube_at: float | None = None,
        stepped_at: float | None = None, twice: bool = False,
    ) -> list[tuple[int, float, float, int | None]]:
        t = np.arange(4.0, 6.4, 1 / 80)
        values = _ringing(t, (5.0,))
        values[:, 5] += offset * UNIT * (t >= 5.0)
        values[:, 5] += noise * UNIT * np.random.default_rng(2).standard_normal(t.size)
        if next_cube_at is not None:
            values[:, 5] += UNIT * (t >= next_cube_at)
        fusion = _plate_holding(1, t, values)
        fusion.load_coverage.add(t)
        fusion.add_impacts([_strike(at, level) for at, level in _STOP_DROP])
        out = fusion._landings(_step(3, 5.0, 5.2, 1.0), 1, 0.9, 5.3, settled=False)
        assert _suspected(out) == _STOPPED
        if twice:
            # The same strike suspected again from a second landing below.
            [first] = fusion._suspected_stops
            fusion._suspected_stops.append(replace(first, below=1))
        for at in (next_cube_at, stepped_at):
            if at is not None:
                step = replace(_step(5, at, at + 0.05, 1.0), t_decided_s=at + 0.1)
                fusion._recent_steps.append((step, 1))
        assert fusion.reweigh_due() == pytest.approx(5.15 + STOP_REWEIGH_FROM_S)
        late = fusion.advance(6.4)
        return [(e.floor, round(e.t, 3), round(e.t_decided, 3), e.knocked_down_to)
                for e in late if isinstance(e, Landing)]

    assert told_late(+0.08) == [(5, 5.05, 5.3, 3)]
    assert told_late(-0.04) == [(5, 5.05, 5.3, 3)]
    assert told_late(+0.01) == []
    # A fiftieth of a cube is enough where the converter reads 80 times a
    # second (a tenth of a second holds eight readings).
    assert told_late(+0.025) == [(5, 5.05, 5.3, 3)]
    assert told_late(+0.08, noise=0.05) == []
    assert told_late(+0.08, next_cube_at=5.27) == []
    # A step read on the plate since (a cube that rested a moment and went on).
    assert told_late(+0.08, stepped_at=5.1) == []
    # The next cube that landed after the stop was told does not undo it.
    assert told_late(+0.08, next_cube_at=5.7) == [(5, 5.05, 5.3, 3)]
    # Suspected from two landings below, the stop is one landing (rapid
    # throws on model L had told it twice).
    assert told_late(+0.08, twice=True) == [(5, 5.05, 5.3, 3)]


def test_a_slow_converter_weighs_a_suspected_stop_by_three_hundredths_of_a_cube() -> None:
    # Read 10 times a second, the tail weighed is five readings, half a
    # second of a plate that may still creep: a change of 0.025 cube tells
    # nothing there, where read 80 times a second it does.
    def sign(rate: float, offset: float) -> int:
        t = np.arange(0.0, 4.0, 1 / rate)
        values = np.zeros((t.size, 8))
        values[:, 5] = UNIT + 0.002 * UNIT * np.random.default_rng(4).standard_normal(t.size)
        values[t >= 2.0, 5] += offset * UNIT
        fusion = _fusion()
        fusion.load_history = LoadHistory(10.0)
        fusion.load_history.add(t, values, np.ones((t.size, 8), bool))
        stop = SuspectedStop(level=5, below=3, t_s=2.0, since_s=1.95, base_from_s=-np.inf,
                             due_s=3.5, last_s=4.0)
        return fusion._change_sign(stop)

    assert sign(80.0, 0.025) == 1 and sign(80.0, -0.025) == -1
    assert sign(10.0, 0.025) == 0
    assert sign(10.0, 0.04) == 1


def test_a_plate_that_bore_a_passing_cube_a_moment_knocked_nothing_down() -> None:
    """Plate 6 read a cube for 0.2 s as the thrown cube rested there on its
    way to plate 3: the loss after is that cube leaving, not a knock-down,
    and the landing below is the throw's. A plate that held its cube from
    before and lost it did knock one down; so did one whose gain was told
    as a landing (the thrown cube stayed and the other fell). Unless no
    other landing was told since the loss began: then this one is told as
    the throw's, which the game would otherwise wait for."""
    def landing_below(plate6: np.ndarray, *, told_on: int | None = None) -> int | None:
        readings = np.zeros((_T.size, 8))
        readings[:, 6] = plate6
        fusion = _fusion(readings)
        if told_on is not None:
            fusion._levels[told_on].landed_t = 1.02
            fusion._throws_told.append((1.02, told_on))
        fusion._recent_steps.append((_step(6, 1.0, 1.05, 1.0), 1))
        fall = LoadStep(level=6, t_before_s=1.2, t_settled_s=1.25, t_decided_s=1.55,
                        delta_counts=-UNIT, before_counts=UNIT, after_counts=0.0)
        fusion._recent_steps.append((fall, -1))
        out = fusion._landings(_step(3, 1.4, 1.5, 1.0), 1, 0.9, 1.9)
        [landing] = [e for e in out if isinstance(e, Landing)]
        return landing.knocked_from

    passing = np.where((_T >= 1.0) & (_T < 1.2), UNIT, 0.0)
    assert landing_below(passing) is None
    held = np.where(_T < 1.2, UNIT, 0.0)
    held[(_T >= 1.0) & (_T < 1.2)] = 2 * UNIT  # the thrown cube struck and went on
    assert landing_below(held - UNIT * (_T >= 1.2), told_on=1) == 6
    assert landing_below(held - UNIT * (_T >= 1.2)) is None
    assert landing_below(passing, told_on=6) == 6


def test_a_plates_last_hold_near_a_load_is_found_by_its_run_of_readings() -> None:
    # Runs of eight readings (0.1 s at 80 Hz), each judged by its median:
    # a run ends held while most of it still is.
    values = np.zeros((_T.size, 8))
    values[(_T >= 1.0) & (_T < 1.3), 2] = UNIT
    values[(_T >= 2.0) & (_T < 2.02), 2] = UNIT  # a spike, held no 0.1 s
    history = _fusion(values).load_history
    assert history.last_held_near(2, 0.5, 3.0, UNIT, 0.3 * UNIT, 0.1) == pytest.approx(1.325)
    assert np.isnan(history.last_held_near(2, 1.5, 3.0, UNIT, 0.3 * UNIT, 0.1))
    assert history.last_held_near(2, 0.0, 1.1, 0.0, 0.3 * UNIT, 0.1) == pytest.approx(1.025)


def test_a_cube_heard_thrown_back_just_after_the_close_is_a_landing() -> None:
    """Module 5 set back at 3.0 s: its plate's load is learnt anew, and for
    a second after a close a plate's change is the hands'. A cube heard
    striking plate 5 after the thump, its plate changing from 0.5 s after
    the close, was thrown back: a landing. Unheard, or sooner, it is not."""
    def after_close(strikes: list[float], t_before: float) -> list[tuple[int, int, float]]:
        fusion = _fusion()
        fusion.add_load([], [LoadConnection(k, False, 2.0, 2.1) for k in range(5, 8)], 2.1)
        fusion.add_load([], [LoadConnection(k, True, 3.0, 3.0) for k in range(5, 8)], 3.0)
        fusion.add_impacts([_strike(t, 5) for t in strikes])
        return _landings(fusion.add_settled_step(_step(5, t_before, t_before + 0.3, 1)))

    assert after_close([3.62, 3.68], 3.6) == [(5, 1, 3.68)]
    assert after_close([], 3.6) == []
    assert after_close([3.32, 3.38], 3.3) == []


def test_a_cube_thrown_back_is_first_heard_on_a_hole_edge_above_its_plate() -> None:
    """Plate 5 last still just after the set-down (3.3 s): the cube's first
    strike after the thump tells when it came. A cube thrown back enters
    at the top: that strike may be on a hole edge above the plate it lands
    on, not on a plate below it."""
    def first_struck_at(level: int) -> list[tuple[int, int, float]]:
        fusion = _fusion()
        fusion.add_load([], [LoadConnection(k, False, 2.0, 2.1) for k in range(5, 8)], 2.1)
        fusion.add_load([], [LoadConnection(k, True, 3.0, 3.0) for k in range(5, 8)], 3.0)
        fusion.add_impacts([_strike(3.55, level), _strike(3.62, 5), _strike(3.68, 5)])
        return _landings(fusion.add_settled_step(_step(5, 3.3, 3.75, 1)))

    assert first_struck_at(7) == [(5, 1, 3.68)]
    assert first_struck_at(6) == [(5, 1, 3.68)]
    assert first_struck_at(2) == []  # something else, below the cube's way


def test_plates_of_modules_just_set_back_are_not_hands_shaking_the_tower() -> None:
    """Modules 5-7 set back at 3.0 s: their channels come back restless.
    A cube landing on plate 3 within a second of that is not taken for one
    under hands; a second later, three restless plates are hands again."""
    fusion = _fusion()
    fusion.add_load([], [LoadConnection(k, False, 2.0, 2.1) for k in (5, 6, 7)], 2.1)
    fusion.add_load([], [LoadConnection(k, True, 3.0, 3.0) for k in (5, 6, 7)], 3.0)
    fusion.add_impacts([_strike(3.7, 3), _strike(5.0, 3)])
    assert fusion._unexplained_busy(_settling_with((5, 6, 7), t_settled=3.8)) == 0
    assert fusion._unexplained_busy(_settling_with((5, 6, 7), t_settled=5.1)) == 3


def test_a_cube_thrown_back_before_its_plate_read_still_again_is_a_landing() -> None:
    """Module 5 lifted at 2.0 s with its plate empty, set back at 3.0 s. Its
    converter answers late: the plate's first still load back holds a cube
    over what it was lifted with, and a cube was heard bouncing on plate 5
    after the set-down's thump. It was thrown back: a landing, timed by its
    last bounce. Not without the strikes, not for a plate that came back as
    it went, and not for one strike on the way down to a lower plate."""
    def first_still_back(
        cubes: float, strikes: list[tuple[float, int]]
    ) -> list[tuple[int, int, float]]:
        fusion = _fusion()
        fusion.scale.learn_sign(5, UNIT, cubes_added=True)
        fusion.add_load([], [LoadConnection(k, False, 2.0, 2.1) for k in range(5, 8)], 2.1)
        fusion.add_load([], [LoadConnection(k, True, 3.0, 3.0) for k in range(5, 8)], 3.0)
        fusion.add_impacts([_strike(t, level) for t, level in strikes])
        levels = np.full(8, np.nan)
        levels[5] = cubes * UNIT
        times = np.full(8, np.nan)
        times[5] = 3.9
        return _landings(fusion.track_settled_levels(levels, times, 4.0))

    assert first_still_back(1, [(3.45, 5), (3.52, 5)]) == [(5, 1, 3.52)]
    assert first_still_back(1, []) == []
    assert first_still_back(0, [(3.45, 5), (3.52, 5)]) == []
    assert first_still_back(1, [(3.45, 5), (3.55, 3), (3.6, 3)]) == []
    assert first_still_back(1, [(3.1, 5)]) == []  # the set-down's own thump


def _set_back_and_read_stale() -> tuple[Fusion, np.ndarray, np.ndarray]:
    """Module 5 lifted at 2.0 s, set back at 3.0 s, a cube heard bouncing on
    plate 5 at 3.45 s; the settled levels are looked at (every 2 s) at 3.2 s,
    before the plate has read still since: its last still load is from
    before the lift. Returns the fusion and the levels and times looked at."""
    fusion = _fusion()
    fusion.scale.learn_sign(5, UNIT, cubes_added=True)
    fusion.add_load([], [LoadConnection(k, False, 2.0, 2.1) for k in range(5, 8)], 2.1)
    fusion.add_load([], [LoadConnection(k, True, 3.0, 3.0) for k in range(5, 8)], 3.0)
    fusion.add_impacts([_strike(3.45, 5), _strike(3.52, 5)])
    levels, times = np.full(8, np.nan), np.full(8, np.nan)
    levels[5], times[5] = 0.0, 1.9
    assert fusion.track_settled_levels(levels, times, 3.2) == []
    return fusion, levels, times


def test_a_cube_thrown_back_is_found_though_the_plate_was_first_read_as_before_the_lift() -> None:
    """The load from before the lift stands for the plate until it is still
    again (the module came back as it went), and is no reason to take the
    cube thrown onto it for the plate's own once it is."""
    fusion, levels, times = _set_back_and_read_stale()
    assert fusion.accounted[5] == 0.0
    levels[5], times[5] = UNIT, 3.9
    assert _landings(fusion.track_settled_levels(levels, times, 4.0)) == [(5, 1, 3.52)]
    # Looked at again, nothing more: the cube is accounted for.
    levels[5], times[5] = UNIT, 5.9
    assert fusion.track_settled_levels(levels, times, 6.0) == []


def test_a_plate_first_still_again_as_it_was_told_tells_no_cube_again() -> None:
    """The cube heard was told by a settled step before the plate's first
    still window since the set-down: that window holds nothing more."""
    fusion, levels, times = _set_back_and_read_stale()
    fusion.accounted[5] = UNIT
    levels[5], times[5] = UNIT, 3.9
    assert fusion.track_settled_levels(levels, times, 4.0) == []


def _let_go_after_close(cubes: float, starts_s: float) -> list[Removal]:
    """Module 6 lifted at 2.0 s (plate 5 open) and set back at 3.0 s; plate
    4, closed all along and heard struck at 3.55 s by a cube thrown back
    onto plate 2, loses ``cubes`` of its load from ``starts_s``."""
    fusion = _fusion()
    for level in range(8):
        fusion.scale.learn_sign(level, UNIT, cubes_added=True)
    fusion.cubes_on[4] = 3
    fusion.accounted[4] = 3 * UNIT
    fusion.add_load([], [LoadConnection(k, False, 2.0, 2.1) for k in range(6, 8)], 2.1)
    fusion.advance(2.9)
    fusion.add_load([], [LoadConnection(k, True, 3.0, 3.0) for k in range(6, 8)], 3.0)
    fusion.add_impacts([_strike(3.55, 4), _strike(3.7, 2), _strike(3.75, 2)])
    loss = LoadStep(level=4, t_before_s=starts_s, t_settled_s=starts_s + 0.6,
                    t_decided_s=starts_s + 0.9, delta_counts=-cubes * UNIT,
                    before_counts=3 * UNIT, after_counts=(3 - cubes) * UNIT)
    return [e for e in fusion.add_settled_step(loss) if isinstance(e, Removal)]


def test_a_plate_let_go_by_the_hands_after_the_close_lost_no_cube() -> None:
    """The hands that held the tower while module 6 was off let go of plate
    4 just after setting it back: its load falls by what they pressed, no
    whole cube. A whole cube lost then, with a cube heard there, was
    knocked down; so was a loss off whole cubes long after the close."""
    assert _let_go_after_close(0.57, 3.05) == []
    assert _let_go_after_close(0.6, 3.9) == []
    [knocked] = _let_go_after_close(1.0, 3.05)
    assert (knocked.floor, knocked.cubes, knocked.knocked) == (4, 1, True)
    [later] = _let_go_after_close(0.6, 4.2)
    assert (later.floor, later.cubes, later.knocked) == (4, 1, True)


def test_a_loss_above_long_before_the_landing_knocked_nothing_down() -> None:
    """The recent steps are trimmed only as fast steps come: after a quiet
    spell they still hold old ones. A plate's loss 1.5 s or more before a
    landing settled is no knock-down of it, however recently it was kept."""
    fusion = _fusion()
    fall = LoadStep(level=6, t_before_s=1.0, t_settled_s=1.05, t_decided_s=1.35,
                    delta_counts=-UNIT, before_counts=UNIT, after_counts=0.0)
    fusion._recent_steps.append((fall, -1))
    assert fusion._recent_removal_above(_step(2, 2.0, 2.2, 1.0)) == 6
    assert fusion._recent_removal_above(_step(2, 3.0, 3.2, 1.0)) is None


def _bounced_in_parts(*, remeasured: bool) -> list[tuple[int, int, float]]:
    """A cube bounces as it lands on plate 3: a window catches 0.42 of it,
    measured again at 0.26 once sure (when ``remeasured``), then the rest
    arrives as the next step, 0.78 of a cube from there."""
    fusion = _fusion()
    fusion.add_impacts([_strike(1.00, 3), _strike(1.05, 3)])
    part = LoadStep(level=3, t_before_s=0.95, t_settled_s=1.02, t_decided_s=1.08,
                    delta_counts=0.42 * UNIT, before_counts=0.0, after_counts=0.42 * UNIT)
    out = fusion.add_load([part], [], 1.1) + fusion.advance(1.12)
    if remeasured:
        again = LoadStep(level=3, t_before_s=0.95, t_settled_s=1.04, t_decided_s=1.10,
                         delta_counts=0.26 * UNIT, before_counts=0.0,
                         after_counts=0.26 * UNIT, revises=True)
        out += fusion.add_load([again], [], 1.12) + fusion.advance(1.14)
    rest_from = 0.26 if remeasured else 0.42
    rest = LoadStep(level=3, t_before_s=1.10, t_settled_s=1.14, t_decided_s=1.20,
                    delta_counts=(1.04 - rest_from) * UNIT, before_counts=rest_from * UNIT,
                    after_counts=1.04 * UNIT)
    out += fusion.add_load([rest], [], 1.2) + fusion.advance(1.5)
    return _landings(out)


def test_a_cube_read_in_parts_is_one_landing_from_the_parts_last_measure() -> None:
    # Joined with its first measure the two parts come to 1.2 cubes, a
    # plate read while it swung: the part's second measure is the one.
    assert _bounced_in_parts(remeasured=True) == [(3, 1, 1.05)]
    assert _bounced_in_parts(remeasured=False) == [(3, 1, 1.05)]


def _read_short_then(settles_at_cubes: float) -> list[tuple[int, int, float, float]]:
    """A cube lands on plate 3 (heard at 1.00 and 1.05 s); the fast view
    reads its step at 0.7 of a cube while it bounces; from 1.15 s the plate
    holds ``settles_at_cubes``."""
    readings = np.zeros((_T.size, 8))
    readings[(_T >= 1.0) & (_T < 1.15), 3] = 0.7 * UNIT
    readings[_T >= 1.15, 3] = settles_at_cubes * UNIT
    fusion = _fusion(readings)
    fusion.add_impacts([_strike(1.00, 3), _strike(1.05, 3)])
    short = LoadStep(level=3, t_before_s=0.95, t_settled_s=1.06, t_decided_s=1.12,
                     delta_counts=0.7 * UNIT, before_counts=0.0, after_counts=0.7 * UNIT)
    out = fusion.add_load([short], [], 1.12)
    for now in np.arange(1.15, 1.6, 0.0125):
        out += fusion.advance(float(now))
    return [(e.floor, e.cubes, round(e.t, 3), round(e.t_decided, 3))
            for e in out if isinstance(e, Landing)]


def test_a_step_read_short_while_its_cube_bounced_is_read_again_once_its_plate_holds_it() -> None:
    # Read again every 50 ms: one clean cube twice in a row, 0.1 s after
    # the plate took it, instead of the settled view's 0.3 s of calm.
    [(floor, cubes, t, decided)] = _read_short_then(1.02)
    assert (floor, cubes, t) == (3, 1, 1.05)
    assert decided <= 1.35
    # A plate that stays at part of a cube (a hand on it) is the settled view's.
    assert _read_short_then(0.7) == []
    assert _read_short_then(1.35) == []



def test_a_cube_that_bounced_off_its_plate_and_came_back_is_one_landing() -> None:
    # Read at 0.7 of a cube as it first struck, the plate then fell back
    # almost to where it was and rose again with the cube's return (model
    # T's plates, rung by a strike's impulse): read again from before the
    # first rise, the plate holds one cube, which the second rise tells
    # (here as a session's first landing, which waits to see its cube stay).
    readings = np.zeros((_T.size, 8))
    readings[(_T >= 1.0) & (_T < 1.15), 3] = 0.7 * UNIT
    readings[(_T >= 1.15) & (_T < 1.25), 3] = 0.05 * UNIT
    readings[_T >= 1.25, 3] = UNIT
    fusion = _fusion(readings)
    fusion.slide_signs = SlideSigns(first_held=FIRST_HELD)
    fusion.add_impacts([_strike(1.00, 3), _strike(1.20, 3)])
    short = LoadStep(level=3, t_before_s=0.95, t_settled_s=1.06, t_decided_s=1.12,
                     delta_counts=0.7 * UNIT, before_counts=0.0, after_counts=0.7 * UNIT)
    back = LoadStep(level=3, t_before_s=1.19, t_settled_s=1.3, t_decided_s=1.36,
                    delta_counts=0.95 * UNIT, before_counts=0.05 * UNIT, after_counts=UNIT)
    out = fusion.add_load([short], [], 1.12)
    for now in np.arange(1.15, 1.36, 0.0125):
        out += fusion.advance(float(now))
    out += fusion.add_load([back], [], 1.36)
    for now in np.arange(1.37, 2.2, 0.0125):
        out += fusion.advance(float(now))
    assert [(e.floor, e.cubes) for e in out if isinstance(e, Landing)] == [(3, 1)]


def _first_cube_settling_back(*, rise_doubted: bool) -> bool:
    """Plate 4 has no size yet (the tower knows two plates' cubes): a cube
    heard landing there carries its readings to 1.5 cubes for 0.3 s (a
    converter at 10 a second integrating the blow), then the plate settles
    at one. Whether the fall back is trusted as a fast step."""
    readings = np.zeros((_T.size, 8))
    readings[(_T >= 1.0) & (_T < 1.3), 4] = 1.5 * UNIT
    readings[_T >= 1.3, 4] = UNIT
    fusion = _fusion(readings)
    for level in range(6):
        fusion.scale.forget(level)
    fusion.piezo_since_s = 0.0
    fusion.add_impacts([_strike(1.00, 4), _strike(1.05, 4)])
    if rise_doubted:
        fusion._doubt(LoadStep(level=4, t_before_s=0.95, t_settled_s=1.05, t_decided_s=1.15,
                               delta_counts=1.5 * UNIT, before_counts=0.0,
                               after_counts=1.5 * UNIT))
    fall = LoadStep(level=4, t_before_s=1.15, t_settled_s=1.35, t_decided_s=1.45,
                    delta_counts=-0.5 * UNIT, before_counts=1.5 * UNIT, after_counts=UNIT)
    return fusion._fast_step_trusted(fall)


def test_a_plate_settling_back_from_a_blow_does_not_teach_its_first_cube() -> None:
    # Taken for a cube on a cell wired the other way, the fall taught the
    # plate a size of half a cube (model L): every later cube read as two.
    assert not _first_cube_settling_back(rise_doubted=True)
    # The same fall with no rise doubted before it is still a candidate.
    assert _first_cube_settling_back(rise_doubted=False)


def test_an_unheard_rise_under_which_the_plate_hardly_swung_waits_for_a_lift_on_any_tower() -> None:
    """Plate 5's landings swing it by ten cubes. A rise of one cube that no
    strike came with, the plate hardly moving, is a grip's squeeze until
    modules are lifted, or a hand's press until it lets go: told when
    three seconds have passed; one that swung the plate like a landing (a
    cube dropped gently, unheard) is reported at once."""
    t = np.arange(0.0, 4.0, 1 / 80)

    def unheard_rise(*, swung: bool, lift: bool) -> list:
        values = _ringing(t, (0.3,), 8 * UNIT) if swung else np.zeros((t.size, 8))
        values[t >= 0.3, 5] += UNIT
        fusion = _plate_holding(0, t, values)
        fusion._levels[5].landing_swings = [10 * UNIT] * 3
        fusion.piezo_since_s = 0.0
        step = LoadStep(level=5, t_before_s=0.25, t_settled_s=0.4, t_decided_s=0.7,
                        delta_counts=UNIT, before_counts=0.0, after_counts=UNIT)
        found = _landings(fusion.add_settled_step(step))
        if lift:
            gone = [LoadConnection(k, False, 0.9, 0.95) for k in range(5, 8)]
            found += _landings(fusion.add_load([], gone, 0.95) + fusion.advance(1.2))
        return found + _landings(fusion.advance(1.6)) + _landings(fusion.advance(3.6))

    assert unheard_rise(swung=False, lift=True) == []
    assert unheard_rise(swung=False, lift=False) == [(5, 1, 0.4)]
    assert unheard_rise(swung=True, lift=True) == [(5, 1, 0.4)]


def test_a_cube_rolling_on_after_its_last_bounce_rests_when_its_plate_falls_quiet_again() -> None:
    # Plate 3's last bounce rings until 10.05 s; the cube rolls on unstruck,
    # and the plate sounds again 0.1 s later until 10.40 s (model I).
    def rest_time(
        *, again_at: float = 10.15, strike: TimedImpact | None = None,
        room: bool = False, decided_s: float = 11.0,
    ) -> float:
        fusion = _fusion()
        for t, on in ((10.0, True), (10.05, False), (again_at, True), (10.40, False)):
            fusion.add_busy(PlateBusy(t, 3, on))
        if room:  # talk: the plates far from it sound too
            for level in (0, 1, 5, 6, 7):
                fusion.add_busy(PlateBusy(again_at + 0.02, level, True))
                fusion.add_busy(PlateBusy(10.38, level, False))
        if strike is not None:
            fusion.add_impacts([strike])
        fusion.advance(decided_s)
        return fusion._rest_time(3, 10.0, decided_s)

    assert rest_time() == pytest.approx(10.40)
    # Still rolling when the landing is decided: as late as that.
    assert rest_time(decided_s=10.3) == pytest.approx(10.3)
    # Never more than half a second after the last bounce.
    assert rest_time(again_at=10.06, decided_s=10.6) == pytest.approx(10.40)
    # Quiet longer than a roll pauses: at rest; what sounds after is not this cube.
    assert rest_time(again_at=10.25) == pytest.approx(10.05)
    # Struck again (another cube on this plate, or one heard on every plate).
    assert rest_time(strike=_strike(10.14, 3)) == pytest.approx(10.05)
    wide = TimedImpact(10.14, Impact(frame=0, channels=(0, 1, 6), peaks=np.full(8, 300.0),
                                     floor=np.ones(8)))
    assert rest_time(strike=wide) == pytest.approx(10.05)
    # A scrape heard next to the plate only is the rolling cube's own.
    near = TimedImpact(10.16, Impact(frame=0, channels=(2, 4), peaks=np.full(8, 300.0),
                                     floor=np.ones(8)))
    assert rest_time(strike=near) == pytest.approx(10.40)
    # The room sounding on every plate is talk, not this cube.
    assert rest_time(room=True) == pytest.approx(10.05)


def test_where_cubes_slide_a_landing_waits_while_its_plate_lately_sounded_unstruck() -> None:
    # The plate held its cube 0.4 s and is quiet then, but sounded 0.08 s
    # before, with nothing struck: its cube may still be rolling on.
    def decided(*, struck_elsewhere: bool = False, slides: bool = True) -> list:
        fusion, step = _rests_a_moment(leaves_at=None)
        fusion.slide_signs.slides_seen = 2 if slides else 1
        assert fusion.slides == slides
        fusion.add_busy(PlateBusy(1.30, 5, True))
        fusion.add_busy(PlateBusy(1.36, 5, False))
        if struck_elsewhere:  # the next cube, heard on three plates
            fusion.add_impacts([TimedImpact(1.29, Impact(
                frame=0, channels=(1, 2, 3), peaks=np.full(8, 300.0), floor=np.ones(8)))])
        return _decide(fusion, step, 2.0)

    out = decided()
    assert _landings(out) == [(5, 1, 0.95)] and 1.51 <= out[0].t_decided < 1.65
    # Another cube's strike made it sound: decided once it held the cube.
    out = decided(struck_elsewhere=True)
    assert _landings(out) == [(5, 1, 0.95)] and 1.4 <= out[0].t_decided < 1.51
    # Where the tower is not yet taken for one whose cubes slide on, as before.
    out = decided(slides=False)
    assert _landings(out) == [(5, 1, 0.95)] and 1.4 <= out[0].t_decided < 1.51


def _wary_fusion(level: int) -> Fusion:
    """A fusion whose first landings wait to see their cube stay; ``level`` gains a cube at 1 s.

    The plate rings as a landing's does: 0.8 cube at first, dying within 0.2 s.
    """
    fusion = Fusion(n_levels=8, scale=CubeScale(n_levels=8),
                    acoustic=AcousticLevelModel(n_levels=8))
    for k in range(8):
        fusion.scale.learn(k, UNIT, 1)
    values = np.zeros((_T.size, 8))
    since = np.maximum(_T - 1.0, 0.0)
    ring = 0.8 * np.exp(-since / 0.05) * np.cos(2 * np.pi * 12 * since)
    values[:, level] = np.where(_T >= 1.0, UNIT * (1.0 + ring), 0.0)
    fusion.load_coverage.add(_T)
    fusion.load_history.add(_T, values, np.ones((_T.size, 8), bool))
    fusion.accounted[:] = 0.0
    return fusion


@pytest.mark.parametrize("settled", [False, True])
def test_a_cube_on_the_ground_floor_does_not_wait_to_see_it_stay(settled: bool) -> None:
    # The session's first landings wait to see their cube stay (cubes that
    # rest a moment on a plate slide on into its hole); the ground floor
    # has no hole under it, so its cube is told at once, by either view.
    told_by = {}
    for level in (3, 0):
        fusion = _wary_fusion(level)
        assert fusion.slide_signs.wary
        fusion.add_impacts([_strike(1.00, level), _strike(1.05, level)])
        step = LoadStep(level=level, t_before_s=0.95, t_settled_s=1.10, t_decided_s=1.16,
                        delta_counts=UNIT, before_counts=0.0, after_counts=UNIT)
        if settled:
            out = fusion.add_settled_step(step) + fusion.advance(1.2)
        else:
            out = fusion.add_load([step], [], 1.2) + fusion.advance(1.2)
        out += fusion.advance(3.0)
        landings = [e for e in out if isinstance(e, Landing)]
        assert [(e.floor, e.cubes, e.t) for e in landings] == [(level, 1, 1.05)]
        told_by[level] = landings[0].t_decided
    assert told_by[0] <= 1.2
    hold_s = _FIRST_SETTLED_HOLD_S if settled else _FIRST_HOLD_S
    assert told_by[3] >= 1.10 + hold_s - 1e-9


def test_a_set_down_heard_a_fifth_of_a_second_before_fast_converters_answer_times_the_close(
) -> None:
    # Read 80 times a second, eight readings are 0.1 s; a converter that
    # settles after power-up and waits for its poll answers 0.11 s after the
    # thump (model AD). Heard earlier than 0.2 s before, a strike is no set-down.
    t80 = np.arange(0.0, 4.0, 1 / 80)

    def closed_at(thump_s: float) -> list[float]:
        scale, acoustic = CubeScale(n_levels=8), AcousticLevelModel(n_levels=8)
        fusion = Fusion(n_levels=8, first_landings_held=0, scale=scale, acoustic=acoustic)
        fusion.load_coverage.add(t80)
        fusion.load_history.add(t80, np.zeros((t80.size, 8)), np.ones((t80.size, 8), bool))
        out = fusion.add_load([], [LoadConnection(6, False, 0.5, 0.5),
                                   LoadConnection(7, False, 0.5, 0.5)], 0.5)
        out += fusion.advance(1.0)
        peaks = np.array([2.0, 2.0, 3.0, 5.0, 60.0, 400.0, 150.0, 20.0])
        fusion.add_impacts([TimedImpact(thump_s, Impact(frame=0, channels=(4, 5, 6, 7),
                                                        peaks=peaks, floor=np.ones(8)))])
        out += fusion.add_load([], [LoadConnection(6, True, 2.11, 2.11),
                                    LoadConnection(7, True, 2.11, 2.11)], 2.11)
        return [e.t for e in out if type(e).__name__ == "Closed"]

    assert closed_at(2.0) == [2.0]
    assert closed_at(1.85) == [2.11]


def test_modules_heard_set_down_before_their_converters_answer_close_the_tower_then() -> None:
    """Modules 6 and 7 set back at 2.0 s on a tower read 10 times a second:
    their converters power up through the spring contacts and settle four
    readings, so their channels come back 0.65 s later. The thump heard on
    their discs times the close, and a cube thrown back onto plate 1 at
    2.62 s (0.62 s after the set-down) is a landing. Had no thump been
    heard, the close would be when the channels came back, and the cube
    too soon after it to tell from the hands; had hands been heard at the
    tower after the thump, the change could be theirs."""
    t10 = np.arange(0.0, 4.0, 0.1)

    def thrown_back(
        set_down_heard: bool, hands_heard: bool = False
    ) -> tuple[list, list[tuple[int, int, float]]]:
        scale, acoustic = CubeScale(n_levels=8), AcousticLevelModel(n_levels=8)
        fusion = Fusion(n_levels=8, first_landings_held=0, scale=scale, acoustic=acoustic)
        for level in range(8):
            fusion.scale.learn(level, UNIT, 1)
        fusion.load_coverage.add(t10)
        fusion.load_history.add(t10, np.zeros((t10.size, 8)), np.ones((t10.size, 8), bool))
        fusion.accounted[:] = 0.0
        out = fusion.add_load([], [LoadConnection(6, False, 0.5, 0.5),
                                   LoadConnection(7, False, 0.5, 0.5)], 0.5)
        out += fusion.advance(1.0)
        peaks = np.array([2.0, 2.0, 3.0, 5.0, 60.0, 400.0, 150.0, 20.0])
        thump = TimedImpact(2.0, Impact(frame=0, channels=(4, 5, 6, 7), peaks=peaks,
                                        floor=np.ones(8)))
        fusion.add_impacts([thump] if set_down_heard else [])
        out += fusion.add_load([], [LoadConnection(6, True, 2.65, 2.65),
                                    LoadConnection(7, True, 2.65, 2.65)], 2.65)
        rustle = TimedImpact(2.4, Impact(frame=0, channels=(0, 1, 2, 3, 4),
                                         peaks=np.full(8, 30.0), floor=np.ones(8)))
        fusion.add_impacts([rustle] if hands_heard else [])
        fusion.add_impacts([_strike(2.62, 1), _strike(2.68, 1)])
        # The plate's last still window came just after the thump shook it.
        return out, _landings(fusion.add_settled_step(_step(1, 2.2, 2.9, 1.0)))

    events, landings = thrown_back(set_down_heard=True)
    assert [(type(e).__name__, e.t) for e in events if type(e).__name__ == "Closed"] == [
        ("Closed", 2.0)
    ]
    assert landings == [(1, 1, 2.68)]
    events, landings = thrown_back(set_down_heard=False)
    assert [e.t for e in events if type(e).__name__ == "Closed"] == [2.65]
    assert landings == []
    assert thrown_back(set_down_heard=True, hands_heard=True)[1] == []


def test_a_cube_that_rested_a_moment_on_the_plate_of_the_cube_before_is_no_second_landing() -> None:
    # Where cubes slide on, landings wait to see their cube stay. In a quick
    # series a cube lands on plate 5 at 1.0 s and the next rests on it from
    # 1.1 s to 1.3 s, then goes on. Read from the half second before its
    # rise, the plate's old load would be the empty plate's, and the plate
    # would seem to hold the second cube when its landing is looked at again.
    values = np.zeros((_T.size, 8))
    values[_T >= 1.0, 5] = UNIT
    values[(_T >= 1.1) & (_T < 1.3), 5] = 2 * UNIT
    fusion = _fusion(values)
    fusion.slide_signs.slides_seen = 5
    fusion.add_impacts([_strike(0.95, 5), _strike(1.07, 5)])
    first = LoadStep(level=5, t_before_s=0.95, t_settled_s=1.0, t_decided_s=1.05,
                     delta_counts=UNIT, before_counts=0.0, after_counts=UNIT)
    second = LoadStep(level=5, t_before_s=1.05, t_settled_s=1.1, t_decided_s=1.15,
                      delta_counts=UNIT, before_counts=UNIT, after_counts=2 * UNIT)
    out = fusion.add_load([first], [], 1.05)
    out += fusion.add_load([second], [], 1.15)
    for now in np.arange(1.15, 2.6, 0.05):
        out += fusion.advance(float(now))
    assert _landings_of(_landings(out)) == [5]
