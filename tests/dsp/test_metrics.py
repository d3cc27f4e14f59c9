import numpy as np

from dsp.metrics import expected_landings, score_landings, score_other_events

TRUTH = [
    {"event": "landing", "t": 3.0, "first_impact_t": 2.8, "level": 4},
    {"event": "landing", "t": 6.0, "first_impact_t": 5.9, "level": 2, "cube": 7},
    {"event": "knockdown", "t": 6.0, "rest_t": 6.3, "from_level": 2, "to_level": 1, "cube": 3,
     "by_cube": 7},
    {"event": "landing", "t": 9.0, "first_impact_t": 8.9, "level": 5},
    {"event": "landing", "t": 9.5, "first_impact_t": 9.4, "level": 5},
    {"event": "landing", "t": 12.0, "first_impact_t": 11.9, "level": 6},
    {"event": "lift", "t": 20.0, "exposed": 3},
    {"event": "removal", "t": 22.0, "level": 3, "cubes": [1, 2], "times": [21.5, 21.9]},
    {"event": "closed", "t": 25.0, "exposed": 3, "reconnected_t": 25.1},
]


def _landing(t: float, floor: int, cubes: int = 1, delay: float = 0.2) -> dict:
    return {"event": "landing", "t": t, "t_decided": t + delay, "floor": floor, "cubes": cubes,
            "confidence": 0.9}


def test_expected_landings_include_knocked_down_cubes() -> None:
    got = [(x.t, x.level, x.knocked) for x in expected_landings(TRUTH)]
    assert got == [(3.0, 4, False), (6.0, 2, False), (6.3, 1, True), (9.0, 5, False),
                   (9.5, 5, False), (12.0, 6, False)]


def test_landings_are_matched_one_to_one_with_counts_of_every_kind() -> None:
    detected = [
        _landing(2.95, 4),  # right
        _landing(6.28, 1, delay=0.3),  # the knocked cube, right; the thrown one is missed
        _landing(9.6, 5, cubes=2),  # two landings in one step: both right, cubes right
        _landing(11.95, 3),  # wrong level
        _landing(40.0, 0),  # false
    ]
    s = score_landings(TRUTH, detected, duration_s=3600.0)
    assert (s.expected, s.level_right, s.level_wrong, s.missed, s.false) == (6, 4, 1, 1, 1)
    assert (s.thrown_expected, s.thrown_right) == (5, 3)
    # The throw that knocked a cube down is the one missed: the plain ones are all right.
    assert (s.plain_expected, s.plain_right) == (4, 3)
    assert [x.knocked_another for x in expected_landings(TRUTH)] == [
        False, True, False, False, False, False
    ]
    assert (s.cubes_checked, s.cubes_right) == (4, 4)
    assert s.confusion[6, 3] == 1 and s.confusion[2, 8] == 1 and s.false_by_floor[0] == 1
    summary = s.summary()
    assert summary["false_per_hour"] == 1.0
    assert np.isclose(summary["latency_median_s"], np.median([0.15, 0.28, 0.8, 0.3]))


def test_each_landing_is_matched_to_the_closest_truth_not_the_first() -> None:
    # A cube stopped on 6 at 1.0 (not found); the next came to rest on 6 at
    # 1.6 and was found at 1.65: that one is right, the first is missed.
    truth = [
        {"event": "landing", "t": 1.0, "first_impact_t": 0.9, "level": 6},
        {"event": "landing", "t": 1.6, "first_impact_t": 1.5, "level": 6},
    ]
    s = score_landings(truth, [_landing(1.65, 6)], duration_s=60.0)
    assert (s.level_right, s.missed, s.false) == (1, 1, 0)
    assert np.allclose(s.latencies_s, [0.25])


def test_a_double_count_is_a_cube_error_and_ignored_spans_drop_out() -> None:
    s = score_landings(TRUTH, [_landing(3.0, 4, cubes=2)], duration_s=60.0)
    assert (s.level_right, s.false, s.cubes_right, s.cubes_checked) == (1, 1, 0, 1)
    skipped = score_landings(TRUTH, [], duration_s=60.0, ignore_spans=[(0.0, 10.0)])
    assert skipped.expected == 1 and skipped.missed == 1


def test_lifts_closures_and_removals_are_scored() -> None:
    detected = [
        {"event": "lift", "t": 20.1, "t_decided": 20.3, "exposed": 3},
        {"event": "removal", "t": 22.3, "t_decided": 22.9, "floor": 3, "cubes": 2,
         "confidence": 0.9},
        {"event": "removal", "t": 23.0, "t_decided": 23.5, "floor": 3, "cubes": 1,
         "confidence": 0.9},
        {"event": "closed", "t": 25.12, "t_decided": 25.2},
    ]
    o = score_other_events(TRUTH, detected)
    assert (o.lifts_right, o.closed_found, o.removals_right, o.false_removals) == (1, 1, 1, 1)
