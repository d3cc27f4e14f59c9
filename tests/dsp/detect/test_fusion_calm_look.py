"""A cube doubted only for restless plates is looked at again once they are still."""

from collections.abc import Callable
from dataclasses import replace

import numpy as np

from dsp.detect.acoustic import AcousticLevelModel
from dsp.detect.cubes import CubeScale
from dsp.detect.events import Landing
from dsp.detect.fusion import Fusion
from dsp.detect.grouping import Impact
from dsp.detect.loadcell import LoadStep
from dsp.detect.piezo import TimedImpact

UNIT = 1000.0
RATE = 80.0

# A plate's load over time (counts), given the reading times.
Plate = Callable[[np.ndarray], np.ndarray]


def _still(t: np.ndarray) -> np.ndarray:
    return np.zeros_like(t)


def _landed_at(t0: float, cubes: float = 1.0) -> Plate:
    return lambda t: np.where(t >= t0, cubes * UNIT, 0.0)


def _shaken_until(t1: float, pressed_by: float = 0.0) -> Plate:
    """A plate ringing by a cube at 10 Hz from 1 s until ``t1``, then still.

    ``pressed_by``: pressed off its load meanwhile (a hand on it), let go at ``t1``.
    """
    def plate(t: np.ndarray) -> np.ndarray:
        shaking = (t >= 1.0) & (t < t1)
        return np.where(shaking, UNIT * np.sin(2 * np.pi * 10 * t) + pressed_by, 0.0)
    return plate


def _fusion(plates: dict[int, Plate], *, sizes_known: bool = True) -> Fusion:
    fusion = Fusion(n_levels=8, first_landings_held=0, scale=CubeScale(n_levels=8),
                    acoustic=AcousticLevelModel(n_levels=8))
    for level in range(8 if sizes_known else 0):
        fusion.scale.learn(level, UNIT, 1)
    t = np.arange(0.0, 4.0, 1 / RATE)
    values = np.column_stack([plates.get(k, _still)(t) for k in range(8)])
    fusion.load_coverage.add(t)
    fusion.load_history.add(t, values, np.ones((t.size, 8), bool))
    fusion.accounted[:] = 0.0
    # The cube's strikes on level 5 (its bounce, then rest).
    peaks = np.where(np.arange(8) == 5, 300.0, 30.0)
    fusion.add_impacts([
        TimedImpact(t_s, Impact(frame=0, channels=(5,), peaks=peaks, floor=np.ones(8)))
        for t_s in (1.00, 1.05)
    ])
    return fusion


def _step(restless: tuple[int, ...]) -> LoadStep:
    """A clean one-cube step on level 5 while the plates ``restless`` were not still."""
    return LoadStep(level=5, t_before_s=0.95, t_settled_s=1.10, t_decided_s=1.16,
                    delta_counts=UNIT, before_counts=0.0, after_counts=UNIT,
                    busy_levels=len(restless), busy_mask=sum(1 << k for k in restless))


def _decided(fusion: Fusion, step: LoadStep, until: float = 2.0) -> list[tuple[int, float]]:
    out = fusion.add_load([step], [], step.t_decided_s) + fusion.advance(until)
    return [(e.floor, round(e.t_decided, 3)) for e in out if isinstance(e, Landing)]


def test_a_cube_with_plates_shaken_far_below_is_decided_at_the_first_look() -> None:
    # A hand on level 1 shakes plates 0-2 for a second; the cube on 5 is clean.
    shaken = _shaken_until(2.5, UNIT / 2)
    fusion = _fusion({0: shaken, 1: shaken, 2: shaken, 5: _landed_at(1.1)})
    assert not fusion._fast_step_trusted(_step((0, 1, 2)))
    assert _decided(fusion, _step((0, 1, 2))) == [(5, 1.21)]


def test_a_cube_with_a_plate_near_it_pressed_waits_until_that_plate_is_let_go() -> None:
    # A hand presses plate 3 by half a cube, shaking it, and lets go at 1.5 s.
    fusion = _fusion({3: _shaken_until(1.5, UNIT / 2), 0: _shaken_until(2.5), 5: _landed_at(1.1)})
    # The first look whose last 62.5 ms of plate 3 are still.
    assert _decided(fusion, _step((0, 3))) == [(5, 1.56)]


def test_a_plate_near_it_ringing_about_its_old_load_is_as_good_as_still() -> None:
    # Plate 3 rings on (a knock on the table) about where it was: no hand presses it.
    fusion = _fusion({3: _shaken_until(2.5), 5: _landed_at(1.1)})
    assert _decided(fusion, _step((0, 3))) == [(5, 1.21)]


def test_a_plate_near_it_pressed_off_its_load_leaves_the_cube_to_the_settled_view() -> None:
    fusion = _fusion({3: _shaken_until(2.5, UNIT / 2), 5: _landed_at(1.1)})
    step = _step((0, 3))
    assert _decided(fusion, step) == []
    assert fusion._levels[5].doubted == [step]


def test_a_step_that_went_back_before_the_plates_were_still_was_no_cube() -> None:
    # A hand pressed plate 5 by a cube and let go, pressing plate 3 as well.
    pressed: Plate = lambda t: np.where((t >= 1.1) & (t < 1.3), UNIT, 0.0)  # noqa: E731
    fusion = _fusion({3: _shaken_until(1.5, UNIT / 2), 5: pressed})
    step = _step((0, 3))
    assert _decided(fusion, step) == []
    assert fusion._levels[5].doubted == [step]


def test_a_cube_the_settled_view_counted_first_is_not_reported_again() -> None:
    # Plate 3 is let go at 1.4 s, after the settled view counted the cube.
    fusion = _fusion({3: _shaken_until(1.4, UNIT / 2), 5: _landed_at(1.1)})
    step = _step((0, 3))
    assert fusion.add_load([step], [], 1.16) + fusion.advance(1.2) == []
    settled = LoadStep(level=5, t_before_s=0.95, t_settled_s=1.25, t_decided_s=1.3,
                       delta_counts=UNIT, before_counts=0.0, after_counts=UNIT)
    first = [e for e in fusion.add_settled_step(settled) if isinstance(e, Landing)]
    assert [(e.floor, e.cubes) for e in first] == [(5, 1)]
    assert [e for e in fusion.advance(3.0) if isinstance(e, Landing)] == []


def test_two_cubes_at_once_are_not_looked_at_again() -> None:
    # Plates 0 and 3 shook and are soon still again.
    fusion = _fusion({0: _shaken_until(1.2), 3: _shaken_until(1.2), 5: _landed_at(1.1, 2.0)})
    two = LoadStep(level=5, t_before_s=0.95, t_settled_s=1.10, t_decided_s=1.16,
                   delta_counts=2 * UNIT, before_counts=0.0, after_counts=2 * UNIT,
                   busy_levels=2, busy_mask=0b1001)
    assert _decided(fusion, two) == []
    # The fast view's second look is for steps doubted for their measure
    # alone: the tower shook, so the settled view decides this one.
    still = LoadStep(level=5, t_before_s=0.95, t_settled_s=1.40, t_decided_s=1.46,
                     delta_counts=2.0 * UNIT, before_counts=0.0, after_counts=2.0 * UNIT,
                     revises=True)
    assert _decided(fusion, still, until=2.5) == []
    assert fusion._levels[5].doubted == [two]


def _knock(t_s: float) -> TimedImpact:
    """A knock on the table: heard alike on every channel."""
    peaks = np.full(8, 200.0)
    return TimedImpact(t_s, Impact(frame=0, channels=tuple(range(8)), peaks=peaks,
                                   floor=np.ones(8)))


def test_a_cube_landing_as_the_table_is_knocked_is_decided_once_the_plates_ring_about_their_loads(
) -> None:
    knocked = _shaken_until(2.5)
    fusion = _fusion({k: knocked for k in range(8) if k != 5} | {5: _landed_at(1.1)})
    fusion.add_impacts([_knock(1.02)])
    step = _step((0, 1, 2, 3, 7))
    assert not fusion._fast_step_trusted(step)
    assert _decided(fusion, step) == [(5, 1.21)]


def test_a_cube_just_after_steps_on_many_plates_at_once_is_not_looked_at_again() -> None:
    # A hand on the tower moved three plates together (a disturbance) just before.
    fusion = _fusion({5: _landed_at(1.1)})
    hand = [LoadStep(level=k, t_before_s=0.7, t_settled_s=0.9, t_decided_s=0.95,
                     delta_counts=UNIT, before_counts=0.0, after_counts=UNIT)
            for k in (1, 3, 6)]
    fusion.add_load(hand, [], 0.95)
    assert [type(e).__name__ for e in fusion.advance(1.0)] == ["Disturbance"]
    assert _decided(fusion, _step((1, 3))) == []


def test_a_cube_waiting_for_calm_times_its_arrival_when_the_settled_view_counts_it() -> None:
    # Two cubes on plate 5, half a second apart; the second waits for plate 3
    # (pressed by a hand) when the settled view counts both.
    fusion = _fusion({3: _shaken_until(2.5, UNIT / 2),
                      5: lambda t: UNIT * ((t >= 0.6).astype(float) + (t >= 1.1))})
    first = LoadStep(level=5, t_before_s=0.45, t_settled_s=0.6, t_decided_s=0.66,
                     delta_counts=UNIT, before_counts=0.0, after_counts=UNIT)
    fusion._doubt(first)  # (a hand on the tower then too)
    second = replace(_step((0, 3)), before_counts=UNIT, after_counts=2 * UNIT)
    assert fusion.add_load([second], [], 1.16) + fusion.advance(1.2) == []
    both = LoadStep(level=5, t_before_s=0.45, t_settled_s=1.25, t_decided_s=1.3,
                    delta_counts=2 * UNIT, before_counts=0.0, after_counts=2 * UNIT)
    out = fusion.add_settled_step(both) + fusion.advance(3.0)
    # Each cube a landing, at the time the fast view saw it settle.
    assert [(e.floor, e.cubes, e.t <= 0.6) for e in out if isinstance(e, Landing)] == [
        (5, 1, True), (5, 1, False)
    ]


def test_the_first_cube_of_a_session_is_looked_at_again_by_its_own_size() -> None:
    # No plate's cube size is known yet: the step itself measures whether
    # the plates near it are back (model Q's rocking tower: its first cube
    # had waited for the settled view).
    fusion = _fusion({3: _shaken_until(2.5), 5: _landed_at(1.1)}, sizes_known=False)
    assert fusion.scale.unit(5) is None and fusion.scale.unit(3) is None
    assert _decided(fusion, _step((0, 3))) == [(5, 1.21)]
    pressed = _fusion({3: _shaken_until(2.5, UNIT / 2), 5: _landed_at(1.1)}, sizes_known=False)
    assert _decided(pressed, _step((0, 3))) == []
