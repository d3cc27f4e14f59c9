"""Calibration profiles: round trip, validation, atomic saves, refusals that change nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hostapp.calibration.profile import (
    CalibrationProfile,
    LoadCellProfile,
    ProfileStore,
    now_utc,
    read_profile,
)
from hostapp.errors import CalibrationError

DEVICE = "00112233aabbccdd"
OTHER = "ffeeddccbbaa9988"


def make_profile(device: str = DEVICE, cpg: float = 21000.0) -> CalibrationProfile:
    cell = LoadCellProfile(offset_counts=-1234.5, counts_per_gram=cpg,
                           counts_per_gram_uncertainty=210.0, noise_g_rms=0.004,
                           drift_g_per_min=0.01, cube_mass_g=0.51, cube_mass_uncertainty_g=0.006)
    return CalibrationProfile(device_id=device, created_utc=now_utc()).with_load(3, cell)


def test_round_trip(tmp_path: Path) -> None:
    store = ProfileStore(tmp_path)
    profile = make_profile()
    store.save(profile)
    loaded = store.load(DEVICE)
    assert loaded == profile
    assert loaded.cube_mass_g() == pytest.approx(0.51)
    assert loaded.load[0] is None


@pytest.mark.parametrize(
    "text,needle",
    [
        ("{not json", "corrupt"),
        ("[]", "not a calibration profile"),
        ('{"schema_version": 99}', "schema version 99"),
        ('{"schema_version": 1, "device_id": "xyz"}', "device_id"),
    ],
)
def test_corrupt_profile_falls_back_with_one_sentence(tmp_path: Path, text: str,
                                                      needle: str) -> None:
    store = ProfileStore(tmp_path)
    store.path_for(DEVICE).parent.mkdir(parents=True, exist_ok=True)
    store.path_for(DEVICE).write_text(text)
    profile, why = store.load_for_device(DEVICE)
    assert profile is None
    assert why is not None and needle in why and "\n" not in why
    assert why.endswith("running uncalibrated")


def test_bad_field_is_named(tmp_path: Path) -> None:
    data = make_profile().to_json()
    data["load"][3]["counts_per_gram"] = "heavy"
    path = tmp_path / "p.json"
    path.write_text(json.dumps(data))
    with pytest.raises(CalibrationError, match=r"load\[3\].counts_per_gram"):
        read_profile(path)


def test_a_binary_file_read_as_a_profile_is_named_in_one_sentence(tmp_path: Path) -> None:
    path = tmp_path / "session.bin"
    path.write_bytes(bytes(range(256)) * 4)  # a recording chosen by mistake
    with pytest.raises(CalibrationError, match="not a profile") as caught:
        read_profile(path)
    assert "\n" not in str(caught.value)
    store = ProfileStore(tmp_path / "store")
    with pytest.raises(CalibrationError, match="not a profile"):
        store.import_file(path, device_id=DEVICE)


def _acoustic() -> dict[str, object]:
    return {"signatures": [[-3.0 * abs(i - j) for j in range(8)] for i in range(8)],
            "detection_rate": [0.9] * 8,
            "confusion": [[5 if i == j else 0 for j in range(8)] for i in range(8)],
            "drops_per_level": 5}


@pytest.mark.parametrize(
    ("field", "value", "needle"),
    [
        ("confusion", [[float("inf")] * 8] * 8, "acoustic.confusion must be a finite number"),
        ("confusion", [[1.5] * 8] * 8, "acoustic.confusion must be a whole number"),
        ("confusion", [[1] * 8] * 7, "acoustic.confusion must be 8 rows of 8 numbers"),
        ("detection_rate", [0.9] * 7, "acoustic.detection_rate must be 8 numbers"),
        ("detection_rate", "all", "acoustic.detection_rate must be 8 numbers"),
        ("signatures", [None] * 8, "acoustic.signatures must be 8 rows of 8 numbers"),
        ("drops_per_level", True, "acoustic.drops_per_level must be a finite number"),
        ("drops_per_level", None, "acoustic.drops_per_level must be a finite number"),
    ],
)
def test_a_bad_acoustic_section_is_named_in_one_sentence(
    tmp_path: Path, field: str, value: object, needle: str
) -> None:
    data = make_profile().to_json()
    data["acoustic"] = _acoustic()
    path = tmp_path / "p.json"
    path.write_text(json.dumps(data))
    assert read_profile(path).acoustic is not None  # the section as written reads back
    data["acoustic"][field] = value
    path.write_text(json.dumps(data))
    with pytest.raises(CalibrationError, match=needle.replace(".", r"\.")) as caught:
        read_profile(path)
    assert "\n" not in str(caught.value)


def test_import_from_another_device_changes_nothing(tmp_path: Path) -> None:
    store = ProfileStore(tmp_path / "store")
    store.save(make_profile(cpg=21000.0))
    before = store.path_for(DEVICE).read_bytes()
    foreign = tmp_path / "foreign.json"
    foreign.write_text(json.dumps(make_profile(OTHER, cpg=5.0).to_json()))
    with pytest.raises(CalibrationError, match="made for device ffeeddccbbaa9988"):
        store.import_file(foreign, device_id=DEVICE)
    assert store.path_for(DEVICE).read_bytes() == before
    assert store.device_ids() == [DEVICE]


def test_export_then_import(tmp_path: Path) -> None:
    store = ProfileStore(tmp_path / "a")
    store.save(make_profile())
    exported = store.export(DEVICE, tmp_path / "out.json")
    other_store = ProfileStore(tmp_path / "b")
    imported = other_store.import_file(exported, device_id=DEVICE)
    assert imported == store.load(DEVICE)


def test_failed_write_keeps_previous_profile(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    store = ProfileStore(tmp_path)
    store.save(make_profile(cpg=21000.0))

    def boom(*_args: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr("hostapp.calibration.profile.os.replace", boom)
    with pytest.raises(OSError):
        store.save(make_profile(cpg=1.0))
    monkeypatch.undo()
    assert store.load(DEVICE).load[3] is not None
    assert store.load(DEVICE).load[3].counts_per_gram == 21000.0  # type: ignore[union-attr]
    assert list(tmp_path.glob("*.tmp")) == []
