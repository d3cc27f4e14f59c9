"""The calibration report: grades per level and the files it writes."""

from __future__ import annotations

from pathlib import Path

import pytest

from hostapp.calibration.profile import (
    AcousticProfile,
    CalibrationProfile,
    LoadCellProfile,
    now_utc,
)
from hostapp.calibration.report import grade_level, write_report
from hostapp.errors import CalibrationError


def make_profile() -> CalibrationProfile:
    p = CalibrationProfile(device_id="0011223344556677", created_utc=now_utc())
    for level in range(7):
        noise = 0.004 if level != 2 else 0.09
        p = p.with_load(level, LoadCellProfile(
            offset_counts=0.0, counts_per_gram=21000.0, counts_per_gram_uncertainty=210.0,
            noise_g_rms=noise, drift_g_per_min=0.001, linearity_error_pct=0.1 * level,
            cube_mass_g=0.5, cube_mass_uncertainty_g=0.005))
    confusion = [[10 if i == j else 0 for j in range(8)] for i in range(8)]
    confusion[5][4], confusion[5][5] = 3, 7
    rates = [1.0] * 8
    rates[5] = 0.7
    return CalibrationProfile(p.device_id, p.created_utc, p.load,
                              AcousticProfile([[1.0 / 8] * 8] * 8, rates, confusion, 10))


def test_grades_name_each_failure() -> None:
    profile = make_profile()
    assert grade_level(profile, 0).passed
    noisy = grade_level(profile, 2)
    assert not noisy.passed and any("noise" in r for r in noisy.reasons)
    assert any("only" in r for r in noisy.reasons)  # 0.5 g / 0.09 g < 10
    assert any("acoustic" in r for r in grade_level(profile, 5).reasons)
    assert grade_level(profile, 7).reasons == ("load cell not calibrated",)


def test_report_files(tmp_path: Path) -> None:
    path = write_report(make_profile(), tmp_path)
    text = path.read_text()
    assert text.count("| PASS |") == 5  # levels 0, 1, 3, 4, 6
    assert "FAIL: load cell not calibrated" in text
    for png in ("calibration-load.png", "calibration-acoustic.png"):
        assert (tmp_path / png).read_bytes()[:4] == b"\x89PNG"


def test_levels_without_drops_are_not_graded_on_acoustics() -> None:
    profile = make_profile()
    confusion = [row[:] for row in profile.acoustic.confusion]  # type: ignore[union-attr]
    confusion[0] = [0] * 8
    rates = list(profile.acoustic.detection_rate)  # type: ignore[union-attr]
    rates[0] = 0.0
    quiet = CalibrationProfile(profile.device_id, profile.created_utc, profile.load,
                               AcousticProfile([[0.0] * 8] * 8, rates, confusion, 10))
    assert grade_level(quiet, 0).passed


def test_a_report_directory_that_cannot_be_made_is_named_in_one_sentence(tmp_path: Path) -> None:
    blocker = tmp_path / "report"
    blocker.write_text("a file where the directory should go")
    with pytest.raises(CalibrationError, match="cannot write the calibration report") as caught:
        write_report(make_profile(), blocker)
    assert "\n" not in str(caught.value)
