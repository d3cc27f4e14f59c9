"""Turning a stored calibration profile into what the detector accepts.

The profile keeps what a builder measured (with uncertainties, per level,
possibly only some levels); the detector takes a :class:`DetectorCalibration`
whose per-level vectors cover all eight levels. Levels that were not
calibrated leave the detector to learn those quantities itself.
"""

from __future__ import annotations

import json
from pathlib import Path

from dsp.detect.calibration import CalibrationDataError, DetectorCalibration
from hostapp.calibration.profile import N_LEVELS, CalibrationProfile, read_profile
from hostapp.errors import CalibrationError
from hostapp.i18n import tr


def to_detector_calibration(profile: CalibrationProfile) -> DetectorCalibration:
    """The detector's view of a profile."""
    cells = profile.load
    complete = all(cell is not None for cell in cells)
    tare = cpg = noise = None
    if complete:
        tare = tuple(cell.offset_counts for cell in cells if cell is not None)
        cpg = tuple(cell.counts_per_gram for cell in cells if cell is not None)
        noise = tuple(abs(cell.noise_g_rms * cell.counts_per_gram)
                      for cell in cells if cell is not None)
    signatures = counts = None
    if profile.acoustic is not None:
        signatures = tuple(tuple(row) for row in profile.acoustic.signatures)
        counts = tuple(float(profile.acoustic.drops_per_level) for _ in range(N_LEVELS))
    return DetectorCalibration(
        tare_counts=tare,
        counts_per_gram=cpg,
        cube_mass_g=profile.cube_mass_g(),
        load_noise_counts=noise,
        acoustic_signatures=signatures,
        acoustic_counts=counts,
    )


def load_detector_calibration(path: Path) -> DetectorCalibration:
    """Read ``--calibration FILE``: a towerear profile, or a bare detector calibration.

    Raises
    ------
    CalibrationError
        With one sentence when the file is neither.
    """
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise CalibrationError(tr("no calibration file at {path}", path=path)) from exc
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CalibrationError(
            tr("calibration file {path} is not readable JSON", path=path)
        ) from exc
    if isinstance(data, dict) and "schema_version" in data:
        return to_detector_calibration(read_profile(Path(path)))
    try:
        return DetectorCalibration.from_dict(data)
    except CalibrationDataError as exc:
        raise CalibrationError(
            tr("calibration file {path} is not valid: {reason}", path=path, reason=exc)
        ) from exc
