"""A plate that keeps swinging by more than a cube: its cubes are told by ear, weighed later."""

import numpy as np
import pytest

from dsp.detect.events import Landing
from dsp.detect.loadhistory import LoadHistory
from dsp.detect.swinging import (
    RISE_CUBES,
    STILL_SWINGING_CUBES,
    SWUNG_CUBES,
    WEIGHED_MARGIN_S,
    keeps_swinging,
    weighed_by,
)
from dsp.detect.synthetic import SyntheticTower
from tests.dsp.detect.broken_tower import detect_in_blocks

RING_HZ = 3.3  # a cell's ring near the reading rate, read as a slow swing (aliased)
RING_CUBES = 2.5
RING_DECAY_S = 1.5
RUNG_AT_S = 13.2  # a hand taps the top plate: it swings before the first cube comes
TOP = 7
OTHERS = [2, 4, 6, 3, 5, 2, 4, 6]
SWUNG = [14.0, 14.9, 15.8, 16.7]  # cubes thrown onto the top plate while it swings
DURATION_S = 34.0


def _swinging_top_plate() -> SyntheticTower:
    """Cubes onto other plates first (sizes and sounds learnt), then four onto a swinging top.

    A tap, then every strike on the top plate sets its cell ringing again,
    read as a swing of 2.5 cubes that takes seconds to die away: the plate
    is never still while the cubes come, and stills long after.
    """
    tower = SyntheticTower(duration_s=DURATION_S, seed=11)
    t = 2.5
    for level in OTHERS:
        tower.throw(t, level)
        t += 1.3
    rung = [RUNG_AT_S] + [tower.throw(start, TOP).t_rest_s for start in SWUNG]
    for struck in rung:
        age = tower.load_t_s - struck
        after = age >= 0
        tower.load[after, TOP] += (
            RING_CUBES * tower.cube_counts * tower.gain[TOP]
            * np.exp(-age[after] / RING_DECAY_S) * np.sin(2 * np.pi * RING_HZ * age[after])
        )
    return tower


# Both streams in blocks of a second, and of any length (they arrive together, as from a device).
@pytest.mark.parametrize("cuts", [
    [float(s) for s in range(1, int(DURATION_S))],
    sorted(np.random.default_rng(5).uniform(0.0, DURATION_S, 80).tolist()),
])
def test_cubes_on_a_plate_that_keeps_swinging_are_told_by_ear_once(cuts: list[float]) -> None:
    tower = _swinging_top_plate()
    _, events = detect_in_blocks(tower, tower.piezo_codes(), tower.load_counts(), cuts)
    on_top = [e for e in events if isinstance(e, Landing) and e.floor == TOP]
    truth = [x.t_rest_s for x in tower.landings if x.level == TOP]
    # Each cube told once, at its own strikes, by ear, about a second after
    # it came (the load's chance to show it); the settled view that weighs
    # the four once the plate stills, ten seconds on, tells none again.
    assert sum(e.cubes for e in on_top) == len(truth)
    assert [e.source for e in on_top] == ["acoustic"] * len(truth)
    for told, rested in zip(sorted(e.t for e in on_top), truth, strict=True):
        assert abs(told - rested) < 0.1
    assert all(e.t_decided - e.t < 2.0 for e in on_top)
    # The other plates, still between their cubes, are weighed as always.
    others = [e for e in events if isinstance(e, Landing) and e.floor != TOP]
    assert sorted((e.floor, e.source) for e in others) == sorted((lv, "load") for lv in OTHERS)


def test_a_plate_keeps_swinging_only_when_it_swung_before_and_after_and_holds_the_cube() -> None:
    unit = 1000.0
    assert keeps_swinging(SWUNG_CUBES * unit, STILL_SWINGING_CUBES * unit, RISE_CUBES, unit)
    # Still before the cube (its load shows it), stilled by the due time (it
    # had every chance to), or swinging about the load it had (a cube passed).
    assert not keeps_swinging(0.9 * unit, unit, 1.0, unit)
    assert not keeps_swinging(2 * unit, 0.4 * unit, 1.0, unit)
    assert not keeps_swinging(2 * unit, unit, 0.2, unit)
    assert not keeps_swinging(2 * unit, unit, float("nan"), unit)
    assert not keeps_swinging(2 * unit, unit, 1.0, 0.0)


def test_a_step_weighs_the_cubes_told_by_ear_within_it_earliest_first() -> None:
    told = [10.0, 11.0, 12.0, 20.0]
    assert weighed_by(told, 9.8, 12.1, 2) == [10.0, 11.0]
    assert weighed_by(told, 10.0 + WEIGHED_MARGIN_S + 0.01, 19.0, 5) == [11.0, 12.0]
    assert weighed_by(told, 13.0, 19.0, 1) == []
    assert weighed_by(told, 19.8, 20.2, 0) == []


def test_the_middle_range_of_a_plate_ignores_a_strike_and_a_step() -> None:
    history = LoadHistory(keep_s=10.0)
    t = np.arange(400) / 80.0
    noise = np.random.default_rng(1).normal(0.0, 20.0, t.size)
    spiked = noise.copy()
    spiked[100:102] += 50000.0  # a strike's spike, two readings
    stepped = noise + np.where(t >= 2.5, 1000.0, 0.0)
    swinging = noise + 1500.0 * np.sin(2 * np.pi * 3.3 * t)
    values = np.stack([spiked, stepped, swinging] + [noise] * 5, axis=1)
    history.add(t, values, np.ones(values.shape, dtype=bool))
    assert history.middle_range(0, 0.0, 4.9) < 100.0
    assert history.middle_range(1, 1.5, 2.4) < 100.0  # before the step
    assert history.middle_range(2, 0.0, 4.9) > 2000.0
