"""The load readings kept for second looks: when cubes left a plate."""

import numpy as np
import pytest

from dsp.detect.events import Removal
from dsp.detect.loadcell import LoadConnection, LoadStep
from dsp.detect.loadhistory import LoadHistory
from tests.dsp.detect.test_fusion_arrivals import _T as ARRIVALS_T
from tests.dsp.detect.test_fusion_arrivals import UNIT as ARRIVALS_UNIT
from tests.dsp.detect.test_fusion_arrivals import _fusion as arrivals_fusion

UNIT = 1000.0
RATE = 80.0


def _history(load: np.ndarray, level: int = 4) -> LoadHistory:
    t = np.arange(load.size) / RATE
    values = np.zeros((t.size, 8))
    values[:, level] = load
    history = LoadHistory(keep_s=60.0)
    history.add(t, values, np.ones((t.size, 8), bool))
    return history


def _press_then_lift(press_at: float, left_at: float, end: float = 6.0) -> np.ndarray:
    """A plate holding a cube, a finger pressing it, then the cube lifted off."""
    t = np.arange(0.0, end, 1 / RATE)
    load = np.full(t.size, UNIT)
    load[(t >= press_at) & (t < left_at)] += 1.5 * UNIT
    load[t >= left_at] = 0.0
    return load


def test_cubes_left_when_the_load_passed_half_way_to_stay_not_when_the_press_began() -> None:
    history = _history(_press_then_lift(2.0, 2.6))
    left = history.crossed_at(4, 1.5, 5.0, UNIT, 0.0, stay_s=0.3)
    assert left == pytest.approx(2.6, abs=1 / RATE)


def test_a_plate_jolted_past_half_way_for_a_moment_is_not_where_they_left() -> None:
    load = _press_then_lift(2.0, 2.6)
    t = np.arange(load.size) / RATE
    # A hand bumps the module: the plate swings down past half-way and back.
    load[(t >= 1.7) & (t < 1.75)] = 0.0
    history = _history(load)
    left = history.crossed_at(4, 1.5, 5.5, UNIT, 0.0, stay_s=0.3)
    assert left == pytest.approx(2.6, abs=1 / RATE)
    # Not asked to stay: the bump's.
    assert history.crossed_at(4, 1.5, 5.5, UNIT, 0.0) == pytest.approx(1.7, abs=1 / RATE)


def test_no_crossing_no_time() -> None:
    history = _history(np.full(400, UNIT))
    assert history.crossed_at(4, 0.5, 4.0, UNIT, 0.0) is None
    assert history.crossed_at(4, 0.5, 4.0, UNIT, UNIT) is None
    assert LoadHistory(keep_s=60.0).crossed_at(4, 0.5, 4.0, UNIT, 0.0) is None


def test_a_removal_by_hand_is_timed_when_the_cube_left_not_when_the_finger_pressed() -> None:
    readings = np.zeros((ARRIVALS_T.size, 8))
    readings[:, 4] = _press_then_lift(2.0, 2.6, end=4.0) * (ARRIVALS_UNIT / UNIT)
    fusion = arrivals_fusion(readings)
    fusion.accounted[4] = ARRIVALS_UNIT
    fusion.cubes_on[4] = 1
    fusion.add_load([], [LoadConnection(5, False, 0.5, 0.6)], 0.6)
    fusion.advance(1.5)  # the lift is decided: level 4 open
    removal = LoadStep(level=4, t_before_s=1.98, t_settled_s=3.0, t_decided_s=3.2,
                       delta_counts=-ARRIVALS_UNIT, before_counts=ARRIVALS_UNIT, after_counts=0.0)
    out = [e for e in fusion.add_settled_step(removal) if isinstance(e, Removal)]
    assert len(out) == 1 and not out[0].knocked
    assert out[0].t == pytest.approx(2.6, abs=1 / RATE)
