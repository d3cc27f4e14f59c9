"""With the German UI, calibration errors reach the user as German sentences."""

from __future__ import annotations

from pathlib import Path

import pytest

from hostapp.calibration.detector_bridge import load_detector_calibration
from hostapp.calibration.profile import ProfileStore, read_profile
from hostapp.errors import CalibrationError

DEVICE = "00112233aabbccdd"


def test_a_missing_profile_is_named_in_german(tmp_path: Path, german: None) -> None:
    path = tmp_path / "gone.json"
    with pytest.raises(CalibrationError) as info:
        read_profile(path)
    assert str(info.value) == f"kein Kalibrierprofil unter {path}"


def test_a_broken_profile_file_falls_back_with_one_german_sentence(
    tmp_path: Path, german: None
) -> None:
    store = ProfileStore(tmp_path)
    path = store.path_for(DEVICE)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{not json")
    profile, why = store.load_for_device(DEVICE)
    assert profile is None
    assert why == (
        f"das Kalibrierprofil {path} ist beschädigt (ungültiges JSON in Zeile 1); "
        "die Erkennung läuft unkalibriert"
    )
    path.write_text('{"schema_version": 99}')
    with pytest.raises(CalibrationError) as info:
        store.load(DEVICE)
    assert str(info.value).startswith(f"das Kalibrierprofil {path} hat die Schemaversion 99;")


def test_a_broken_calibration_file_is_named_in_german(tmp_path: Path, german: None) -> None:
    path = tmp_path / "cal.json"
    path.write_text("\x00 no json")
    with pytest.raises(CalibrationError) as info:
        load_detector_calibration(path)
    assert str(info.value) == f"die Kalibrierdatei {path} ist kein lesbares JSON"


def test_english_is_unchanged(tmp_path: Path) -> None:
    with pytest.raises(CalibrationError) as info:
        read_profile(tmp_path / "gone.json")
    assert str(info.value) == f"no calibration profile at {tmp_path / 'gone.json'}"
