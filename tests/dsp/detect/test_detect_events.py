import json

import pytest

from dsp.detect.calibration import CalibrationDataError, DetectorCalibration
from dsp.detect.events import Closed, Disturbance, Landing, Lift, Removal

CONTRACT_KEYS = {
    "landing": {"event", "t", "t_decided", "floor", "cubes", "confidence"},
    "removal": {"event", "t", "t_decided", "floor", "cubes", "confidence"},
    "lift": {"event", "t", "t_decided", "exposed"},
    "closed": {"event", "t", "t_decided"},
    "disturbance": {"event", "t", "t_decided"},
}


@pytest.mark.parametrize(
    "event",
    [
        Landing(t=12.345, t_decided=12.611, floor=3, cubes=1, confidence=0.97),
        Removal(t=80.2, t_decided=80.5, floor=3, cubes=2, confidence=0.9),
        Lift(t=75.0, t_decided=75.1, exposed=3),
        Closed(t=90.4, t_decided=90.5),
        Disturbance(t=101.0, t_decided=101.1),
    ],
)
def test_to_json_has_every_contract_key_with_json_types(event: object) -> None:
    data = event.to_json()  # type: ignore[attr-defined]
    assert CONTRACT_KEYS[data["event"]] <= set(data)
    assert json.loads(json.dumps(data)) == data
    assert isinstance(data["t"], float) and isinstance(data["t_decided"], float)


def test_landing_values_survive_to_json() -> None:
    data = Landing(t=1.5, t_decided=1.75, floor=6, cubes=2, confidence=0.8123, knocked_from=7)
    out = data.to_json()
    assert (out["floor"], out["cubes"], out["confidence"], out["knocked_from"]) == (6, 2, 0.812, 7)
    assert "knocked_from" not in Landing(t=1, t_decided=2, floor=1, cubes=1, confidence=1).to_json()
    suspected = Landing(t=1, t_decided=2, floor=1, cubes=1, confidence=0.99, maybe_stopped_on=4,
                        stop_chance=0.45)
    data = suspected.to_json()
    assert (data["maybe_stopped_on"], data["stop_chance"]) == (4, 0.45)
    assert "maybe_stopped_on" not in Landing(t=1, t_decided=2, floor=1, cubes=1,
                                             confidence=1).to_json()


def test_calibration_round_trip() -> None:
    cal = DetectorCalibration(
        tare_counts=tuple(float(i) for i in range(8)),
        counts_per_gram=tuple(20000.0 + i for i in range(8)),
        cube_mass_g=0.45,
        load_noise_counts=(30.0,) * 8,
        acoustic_signatures=tuple(tuple(-float(abs(i - j)) for j in range(8)) for i in range(8)),
        acoustic_counts=(5.0,) * 8,
    )
    again = DetectorCalibration.from_dict(json.loads(json.dumps(cal.to_dict())))
    assert again == cal
    assert again.cube_counts() == pytest.approx([c * 0.45 for c in cal.counts_per_gram or ()])
    assert DetectorCalibration.from_dict({}) == DetectorCalibration()


@pytest.mark.parametrize(
    "bad",
    [
        [],
        {"cube_mass_g": -1},
        {"cube_mass_g": "heavy"},
        {"counts_per_gram": [1, 2, 3]},
        {"counts_per_gram": [0] * 8},
        {"load_noise_counts": [-1] * 8},
        {"acoustic_signatures": [[0] * 8] * 7},
        {"acoustic_signatures": [None] + [[0] * 8] * 7},  # a row missing, not skipped
        {"load_noise_counts": [40, 40, 40, 40, 40, True, 40, 40]},
        {"piezo_noise_codes": ["2"] * 8},
        {"tare_counts": [float("nan")] * 8},
        {"version": 99},
    ],
)
def test_calibration_rejects_bad_data_with_a_clear_error(bad: object) -> None:
    with pytest.raises(CalibrationDataError):
        DetectorCalibration.from_dict(bad)  # type: ignore[arg-type]
