"""The tower model: beliefs from detections, knock-downs, confirmations, and its accuracy."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from hostapp.games.arosa.tower_model import (
    ConfidenceCalibration,
    Landing,
    Removal,
    TowerModel,
    count_distribution,
    detection_from_json,
    level_likelihood,
    most_likely_level,
)
from hostapp.games.arosa.tower_sim import DetectorErrors, compare


def test_a_landing_is_believed_where_reported_with_its_confidence() -> None:
    model = TowerModel()
    p = model.throw("blue", [Landing(1.0, 4, 1, 0.9)])
    assert p.sum() == pytest.approx(1.0)
    assert p[4] == pytest.approx(0.9)
    assert p[3] == p[5] > p[2] > p[1]
    assert most_likely_level(p) == 4
    assert model.propose(4).counts == {"blue": 1}


def test_floor_probabilities_from_the_detector_win_over_the_confidence() -> None:
    model = TowerModel()
    probs = [0, 0, 0, 0.3, 0.7, 0, 0, 0]
    p = model.throw("gray", [Landing(0.0, 4, 1, 0.99, floor_probabilities=probs)])
    assert list(p) == pytest.approx(probs)


def test_a_seen_knock_down_moves_the_resting_cube() -> None:
    model = TowerModel()
    model.throw("yellow", [Landing(0, 5, 1, 0.95)])
    model.throw("gray", [Landing(1, 2, 1, 0.95)])
    blue = model.throw("blue", [Landing(2, 5, 1, 0.95), Removal(2, 5, 1, 0.95), Landing(2, 3)])
    belief = model.expected_counts()
    assert most_likely_level(blue) == 5
    assert belief["yellow"][3] > 0.8 and belief["yellow"][5] < 0.15
    assert belief["gray"][2] > 0.9  # not on the level that was hit, so it stayed
    assert model.propose(5).counts == {"blue": 1}
    assert model.propose(3).counts == {"yellow": 1}


def test_a_suspected_stop_keeps_both_stories_until_a_level_is_opened() -> None:
    """The thrown cube rests where reported, or it stopped on the level above
    and knocked the cube resting there down to the reported level."""
    model = TowerModel()
    model.throw("yellow", [Landing(0, 5, 1, 0.99)])
    blue = model.throw("blue", [Landing(2, 3, 1, 0.99, maybe_stopped_on=5, stop_chance=0.45)])
    belief = model.expected_counts()
    assert blue[3] == pytest.approx(belief["blue"][3]) and 0.5 < blue[3] < 0.56
    assert blue[5] == pytest.approx(0.45, abs=0.01)
    # the yellow cube fell to 3 exactly when blue stayed on 5
    assert belief["yellow"][3] == pytest.approx(blue[5], abs=0.1)
    assert belief["yellow"][5] + belief["yellow"][3] > 0.95
    # the players open level 5 and find the yellow cube: blue went on to 3
    model.confirm(5, {"yellow": 1}, take_out=False)
    assert model.propose(3).counts == {"blue": 1}
    assert model.propose(5).counts == {"yellow": 1}


def test_the_chance_of_a_suspected_stop_is_learnt_from_what_players_find() -> None:
    """On a tower whose suspected stops keep turning out to be stops, the
    next suspicion puts the thrown cube on the level above; on one where
    they turn out passes, on the level reported."""
    def after(found_where_stopped: bool) -> np.ndarray:
        model = TowerModel()
        for k in range(6):
            model.throw("yellow", [Landing(k, 5, 1, 0.99)])
            model.throw("blue", [Landing(k + 0.5, 3, 1, 0.99, maybe_stopped_on=5,
                                         stop_chance=0.45)])
            model.confirm(5 if found_where_stopped else 3, {"blue": 1})
            model.confirm(3 if found_where_stopped else 5, {"yellow": 1})
        return model.throw("blue", [Landing(9, 3, 1, 0.99, maybe_stopped_on=5, stop_chance=0.45)])

    assert after(found_where_stopped=True)[5] > 0.75
    assert after(found_where_stopped=False)[3] > 0.75
    # With nothing learnt yet, the detector's share.
    first = TowerModel().throw("blue", [Landing(0, 3, 1, 0.99, maybe_stopped_on=5,
                                                stop_chance=0.45)])
    assert first[5] == pytest.approx(0.45, abs=0.01)


def test_a_stop_weighed_later_puts_the_thrown_cube_where_it_stopped() -> None:
    """The detector weighed the suspected stop on 5 late: blue stayed there
    and the yellow cube resting there fell to 3, the story that had only the
    suspicion's chance. A stop weighed on a level no suspicion named, or
    after the cube was taken out, changes nothing."""
    model = TowerModel()
    model.throw("yellow", [Landing(0, 5, 1, 0.99)])
    model.throw("blue", [Landing(2, 3, 1, 0.99, maybe_stopped_on=5, stop_chance=0.45)])
    assert not model.stop_weighed(6, 3, 0.9)
    assert model.stop_weighed(5, 3, 0.9)
    belief = model.expected_counts()
    assert belief["blue"][5] == pytest.approx(0.9, abs=0.01)
    assert belief["yellow"][3] > 0.85 and belief["yellow"][5] < 0.1
    assert model.propose(5).counts == {"blue": 1}
    assert model.propose(3).counts == {"yellow": 1}
    # Once told, the suspicion is spent; a confirmation judges the report on 5.
    assert not model.stop_weighed(5, 3, 0.9)
    model.confirm(5, {"blue": 1})
    assert model.stop_calibration.judged == 0


def test_a_suspected_stop_below_the_landing_is_ignored() -> None:
    model = TowerModel()
    model.throw("yellow", [Landing(0, 2, 1, 0.99)])
    blue = model.throw("blue", [Landing(2, 4, 1, 0.9, maybe_stopped_on=2, stop_chance=0.45)])
    assert most_likely_level(blue) == 4
    assert model.expected_counts()["yellow"][2] > 0.95


def test_a_knock_down_whose_removal_was_missed_takes_a_cube_from_above() -> None:
    model = TowerModel()
    model.throw("white", [Landing(0, 6, 1, 0.95)])
    model.throw("black", [Landing(1, 1, 1, 0.95)])
    model.throw("blue", [Landing(2, 6, 1, 0.95), Landing(2, 2, 1, 0.9)])
    belief = model.expected_counts()
    assert belief["white"][2] > 0.5
    assert belief["black"][1] > 0.9  # below the extra landing: it cannot have fallen there


def test_a_cube_not_found_is_believed_elsewhere_lower_first() -> None:
    model = TowerModel()
    model.throw("gray", [Landing(0, 4, 1, 0.99)])
    proposal = model.lift(4)
    assert proposal.counts == {"gray": 1}
    model.confirm(4, {})
    model.closed()
    belief = model.expected_counts()["gray"]
    assert belief[4] == 0.0 and belief.sum() == pytest.approx(1.0)
    assert belief[3] > belief[5]
    assert model.accuracy.levels_checked == 1 and model.accuracy.levels_right == 0
    assert model.accuracy.cubes_off == 1


def test_a_cube_found_is_the_one_most_likely_there_and_is_taken_out() -> None:
    model = TowerModel()
    model.throw("blue", [Landing(0, 3, 1, 0.6)])  # probably 3, maybe 2 or 4
    model.throw("blue", [Landing(1, 6, 1, 0.95)])
    model.confirm(2, {"blue": 1})
    belief = model.expected_counts()["blue"]
    assert belief.sum() == pytest.approx(1.0)
    assert belief[6] > 0.9  # the cube heard on 3 was the one found on 2
    model.confirm(6, {"blue": 1})
    assert "blue" not in model.expected_counts()
    assert model.accuracy.levels_checked == 2 and model.accuracy.levels_right == 1


def test_keeping_confirmed_cubes_makes_them_certain() -> None:
    model = TowerModel()
    model.throw("yellow", [Landing(0, 1, 1, 0.5)])
    model.confirm(1, {"yellow": 1, "white": 1}, take_out=False)
    assert model.unexplained_cubes == 1  # a white cube the model never saw thrown
    proposal = model.propose(1)
    assert proposal.counts == {"yellow": 1, "white": 1}
    assert proposal.probability == pytest.approx(1.0)


def test_calibration_learns_how_often_the_detector_is_right() -> None:
    calibration = ConfidenceCalibration()
    assert calibration.probability_right(0.6) == pytest.approx(0.6)
    for _ in range(40):
        calibration.record(0.6, True)
    assert calibration.probability_right(0.6) > 0.9
    assert calibration.probability_right(0.95) == pytest.approx(0.95)  # other band untouched


def test_count_distribution_matches_enumeration() -> None:
    probs = [0.2, 0.7, 0.5, 0.9]
    expected = np.zeros(len(probs) + 1)
    for outcome in itertools.product([0, 1], repeat=len(probs)):
        weight = np.prod([p if o else 1 - p for p, o in zip(probs, outcome, strict=True)])
        expected[sum(outcome)] += weight
    assert count_distribution(probs) == pytest.approx(expected)


def test_level_likelihood_sums_to_one_at_the_ends() -> None:
    for floor in (0, 7):
        p = level_likelihood(floor, 0.8)
        assert p.sum() == pytest.approx(1.0) and p[floor] == pytest.approx(0.8)


def test_detections_from_the_detect_json_lines() -> None:
    landing = detection_from_json(
        {"event": "landing", "t": 1.5, "t_decided": 1.7, "floor": 3, "cubes": 1, "confidence": 0.9}
    )
    assert landing == Landing(1.5, 3, 1, 0.9)
    suspected = detection_from_json(
        {"event": "landing", "t": 1.5, "t_decided": 1.7, "floor": 3, "cubes": 1,
         "confidence": 0.99, "maybe_stopped_on": 6, "stop_chance": 0.45}
    )
    assert suspected == Landing(1.5, 3, 1, 0.99, maybe_stopped_on=6, stop_chance=0.45)
    removal = detection_from_json({"event": "removal", "t": 2, "floor": 3, "cubes": 2})
    assert removal == Removal(2.0, 3, 2, 1.0)
    assert detection_from_json({"event": "lift", "t": 3, "exposed": 2}) is None


def test_the_model_proposes_opened_levels_better_than_raw_detections() -> None:
    result = compare(2026, sessions=20, n_openings=30)
    print(
        f"\nopened levels proposed exactly right over {result.openings} openings: "
        f"tower model {result.model_rate:.1%}, raw detections {result.raw_rate:.1%}; "
        f"cubes off: model {result.model_cubes_off}, raw {result.raw_cubes_off}"
    )
    assert result.openings == 600
    assert result.model_rate >= result.raw_rate + 0.02
    assert result.model_cubes_off <= 0.85 * result.raw_cubes_off


def test_with_a_perfect_detector_both_are_nearly_always_right() -> None:
    perfect = DetectorErrors(p_exact=1.0, p_knock=0.0)
    result = compare(7, sessions=4, n_openings=20, errors=perfect)
    assert result.raw_rate == 1.0
    assert result.model_rate >= 0.95
