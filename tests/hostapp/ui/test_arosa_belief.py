"""The app's belief fed with the detector's own events (no Qt)."""

from __future__ import annotations

import pytest

from dsp.detect.events import Landing
from hostapp.ui.arosa.belief import TowerBelief


def test_a_landing_with_a_suspected_stop_reaches_the_tower_model_with_both_stories() -> None:
    belief = TowerBelief()
    belief.thrown("yellow", Landing(1.0, 1.2, 5, 1, 0.99), 5)
    suspected = Landing(3.0, 3.2, 2, 1, 0.99, maybe_stopped_on=5, stop_chance=0.45)
    belief.thrown("blue", suspected, 2)
    counts = belief.model.expected_counts()
    assert counts["blue"][5] == pytest.approx(0.45, abs=0.01)
    assert counts["yellow"][2] == pytest.approx(0.45, abs=0.05)
    # Entered on another floor by hand, the suspicion no longer applies.
    other = TowerBelief()
    other.thrown("blue", suspected, 4)
    assert other.model.expected_counts()["blue"][5] < 0.05


def test_a_stop_weighed_late_moves_the_thrown_cube_to_where_it_stopped() -> None:
    belief = TowerBelief()
    belief.thrown("yellow", Landing(1.0, 1.2, 5, 1, 0.99), 5)
    belief.thrown("blue", Landing(3.0, 3.2, 2, 1, 0.99, maybe_stopped_on=5, stop_chance=0.45), 2)
    belief.stop_weighed(Landing(2.9, 3.9, 5, 1, 0.9, knocked_down_to=2))
    assert belief.propose(5, ["blue", "yellow"]) == {"blue": 1, "yellow": 0}
    assert belief.propose(2, ["blue", "yellow"]) == {"blue": 0, "yellow": 1}
