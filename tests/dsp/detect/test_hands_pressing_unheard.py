"""A hand pressing plates unheard, for seconds, and letting go: no cube came."""

import numpy as np
import pytest

from dsp.detect.events import Landing
from dsp.detect.loadhistory import LoadHistory
from dsp.detect.synthetic import SyntheticTower
from tests.dsp.detect.broken_tower import detect_in_blocks

OTHERS = [2, 4, 6, 3, 5, 7, 1, 4]
PRESS_AT_S = 14.0
# A hand steadying the tower leans on two plates, lightly (its press swings
# them less than a landing's blow) or hard (as far, but smoothly).
LIGHT = {5: 2.0, 6: 1.5}
HARD = {5: 6.0, 6: 4.0}
RAMP_S = 0.08
RING_CUBES = 10.0  # a landing rings its plate by many cubes (model AJ), read for tenths of a second
RING_HZ = 9.0
RING_DECAY_S = 0.12
AFTER_S = 18.5  # a cube thrown after the hand let go
DURATION_S = 24.0


def _pressed_tower(hold_s: float, press: dict[int, float]) -> SyntheticTower:
    """Cubes onto every plate (sizes and sounds learnt), a hand's press, then one more cube.

    Each landing rings its plate; the press comes with no strike and swings
    no plate: the load rises
    smoothly (a cosine over 80 ms), holds ``hold_s`` and falls back.
    """
    tower = SyntheticTower(duration_s=DURATION_S, seed=7)
    t = 2.5
    for level in OTHERS:
        _ringing_throw(tower, t, level)
        t += 1.3
    on = np.clip((tower.load_t_s - PRESS_AT_S) / RAMP_S, 0.0, 1.0)
    off = np.clip((PRESS_AT_S + hold_s - tower.load_t_s) / RAMP_S, 0.0, 1.0)
    shape = 0.5 * (1.0 - np.cos(np.pi * np.minimum(on, off)))
    for level, cubes in press.items():
        tower.load[:, level] += cubes * tower.cube_counts * tower.gain[level] * shape
    _ringing_throw(tower, AFTER_S, 3)
    return tower


def _ringing_throw(tower: SyntheticTower, t_s: float, level: int) -> None:
    """A cube thrown onto ``level``, its plate rung by it as a cube's landing rings it."""
    rested = tower.throw(t_s, level).t_rest_s
    age = tower.load_t_s - rested
    after = age >= 0
    tower.load[after, level] += (
        RING_CUBES * tower.cube_counts * tower.gain[level]
        * np.exp(-age[after] / RING_DECAY_S) * np.sin(2 * np.pi * RING_HZ * age[after])
    )


@pytest.mark.parametrize("press", [LIGHT, HARD])
@pytest.mark.parametrize("hold_s", [1.5, 2.6])
@pytest.mark.parametrize("cuts", [
    [float(s) for s in range(1, int(DURATION_S))],
    sorted(np.random.default_rng(3).uniform(0.0, DURATION_S, 60).tolist()),
])
def test_a_hand_pressing_two_plates_unheard_and_letting_go_is_no_landing(
    press: dict[int, float], hold_s: float, cuts: list[float]
) -> None:
    tower = _pressed_tower(hold_s, press)
    _, events = detect_in_blocks(tower, tower.piezo_codes(), tower.load_counts(), cuts)
    landings = [e for e in events if isinstance(e, Landing)]
    pressed = [e for e in landings if PRESS_AT_S - 0.5 <= e.t <= PRESS_AT_S + hold_s + 1.0]
    assert pressed == []
    # Every cube thrown is told once, on its level, soon after it rested.
    told = sorted((e.floor, round(e.t, 1)) for e in landings)
    assert told == sorted((x.level, round(x.t_rest_s, 1)) for x in tower.landings)
    last = [e for e in landings if e.t > AFTER_S]
    assert len(last) == 1 and last[0].t_decided - last[0].t < 0.5


def test_a_smooth_press_goes_no_further_than_its_loads_and_a_ringing_landing_does() -> None:
    history = LoadHistory(keep_s=10.0)
    t = np.arange(240) / 80.0
    ramp = 3000.0 * np.clip((t - 1.0) / RAMP_S, 0.0, 1.0)
    age = np.clip(t - 1.0, 0.0, None)
    ringing = np.where(t >= 1.0, 1000.0 + 8000.0 * np.exp(-age / 0.1) * np.sin(2 * np.pi * 9 * age),
                       0.0)
    values = np.stack([ramp, ringing] + [np.zeros(t.size)] * 6, axis=1)
    history.add(t, values, np.ones(values.shape, dtype=bool))
    assert history.overshoot(0, 0.9, 1.5, 0.0, 3000.0) == 0.0
    assert history.overshoot(1, 0.9, 1.5, 0.0, 1000.0) > 4000.0
    assert np.isnan(history.overshoot(0, 5.0, 6.0, 0.0, 1.0))  # no readings then
