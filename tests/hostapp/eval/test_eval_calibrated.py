"""The ``calibrated`` variant: the same recording detected with its tower's profile.

Real code path: the simulated calibration of the session's tower, the
recording through ``detect_recording`` twice, scoring and the report.
"""

from __future__ import annotations

import math
from pathlib import Path

from hostapp.eval.report import gain_lines, summary_lines, target_for, write_report
from hostapp.eval.runner import (
    CALIBRATED,
    CALIBRATED_FAMILIES,
    GAIN_KEYS,
    FamilyPlan,
    _run_job,
    _spec,
    calibration_gains,
    plans,
    score_results,
    tower_calibration,
)


def test_calibrated_variant_is_scored_and_reported(tmp_path: Path) -> None:
    assert CALIBRATED_FAMILIES == ("single", "rapid")
    # The quick single session's tower (the profile is cached per tower), 30 s.
    spec = _spec("single", FamilyPlan("single", 1, 30.0), 0)
    assert spec.tower_seed == _spec("single", plans(True)["single"], 0).tower_seed
    results = _run_job(("single", spec, ""))
    assert [r.variant for r in results] == ["", CALIBRATED]
    plain, calibrated = results
    assert plain.truth == calibrated.truth
    assert calibrated.diagnostics["seconds_calibrating"] > 0
    assert calibrated.detected, "nothing detected with the profile"
    # The whole tower was calibrated: every level's tare and scale, and the cube.
    calibration, _ = tower_calibration(spec.tower_seed)
    assert calibration.tare_counts is not None and calibration.counts_per_gram is not None
    assert calibration.cube_mass_g is not None and calibration.acoustic_signatures is not None

    scored = score_results(results)
    assert set(scored) == {"single", "single:calibrated"}
    for name in scored:
        assert scored[name].landings.expected > 0
        assert scored[name].sessions == 1
    gains = calibration_gains(scored)
    assert [g.key for g in gains] == list(GAIN_KEYS)
    assert all(g.family == "single" for g in gains)
    level = next(g for g in gains if g.key == "level_right")
    assert level.without == scored["single"].landings.summary()["level_right"]
    assert level.with_profile == scored["single:calibrated"].landings.summary()["level_right"]
    assert math.isclose(level.difference, level.with_profile - level.without)

    lines = summary_lines(scored)
    assert any(x.startswith("single:calibrated") for x in lines)
    gain = gain_lines(scored)
    assert len(gain) == 1 and gain[0] in lines
    assert gain[0].startswith("gain single with profile: resting level right ")
    for label in ("cubes per landing right", "missed landings", "false landings per hour",
                  "latency median", "latency p95", " -> "):
        assert label in gain[0]

    report = write_report(scored, tmp_path, quick=True).read_text()
    assert "| single:calibrated | 1 |" in report
    assert "## What a calibration profile gains" in report
    assert "| single | resting level right |" in report
    assert (tmp_path / "confusion_single_calibrated.png").stat().st_size > 1000


def test_calibrated_twins_are_held_to_their_familys_targets() -> None:
    assert target_for("rapid:calibrated", "level_right") == (">=", 0.98)
    assert target_for("single:calibrated", "level_right") == (">=", 0.995)
    assert target_for("single:calibrated", "latency_p95_s") == ("<=", 0.5)


def test_no_gain_without_a_calibrated_twin() -> None:
    assert calibration_gains({}) == []
    assert gain_lines({}) == []
