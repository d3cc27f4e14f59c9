"""What the calibration page says about a profile, in both languages."""

from __future__ import annotations

import pytest

from hostapp.calibration.profile import CalibrationProfile
from hostapp.calibration.report import grade_level
from hostapp.ui.calibration.page import _calibrated_text


def test_the_calibration_time_reads_as_a_date_not_iso() -> None:
    profile = CalibrationProfile(device_id="00aa", created_utc="2026-12-03T21:25:10+01:00")
    assert _calibrated_text(profile) == "Device 00aa: calibrated 2026-12-03 20:25 UTC."
    odd = CalibrationProfile(device_id="00aa", created_utc="last spring")
    assert _calibrated_text(odd) == "Device 00aa: calibrated last spring."


def test_a_levels_verdict_reads_in_the_ui_language(german: None) -> None:
    profile = CalibrationProfile(device_id="00aa", created_utc="2026-12-03T20:25:10+00:00")
    assert grade_level(profile, 0).reasons == ("Wägezelle nicht kalibriert",)


@pytest.mark.parametrize("level", [0, 7])
def test_a_levels_verdict_in_english(level: int) -> None:
    profile = CalibrationProfile(device_id="00aa", created_utc="2026-12-03T20:25:10+00:00")
    assert grade_level(profile, level).reasons == ("load cell not calibrated",)
