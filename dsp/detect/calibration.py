"""What the detector may be told about a particular tower: pure data.

:class:`DetectorCalibration` is produced by the calibration procedures (from
a JSON profile) and accepted by :class:`dsp.detect.detector.Detector`. Every
field is optional: the detector learns what it is not told. Sequences are
indexed by level (0 = ground floor .. 7).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

N_LEVELS = 8
SCHEMA_VERSION = 1


class CalibrationDataError(ValueError):
    """A calibration mapping is not a valid :class:`DetectorCalibration`."""


def _vector(value: Any, name: str) -> tuple[float, ...] | None:
    if value is None:
        return None
    if not isinstance(value, Sequence) or isinstance(value, str) or len(value) != N_LEVELS:
        raise CalibrationDataError(f"{name} must be a list of {N_LEVELS} numbers")
    if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in value):
        raise CalibrationDataError(f"{name} must be a list of {N_LEVELS} numbers")
    out = tuple(float(v) for v in value)
    if not all(math.isfinite(v) for v in out):
        raise CalibrationDataError(f"{name} must hold finite numbers")
    return out


def _matrix(value: Any, name: str) -> tuple[tuple[float, ...], ...] | None:
    if value is None:
        return None
    if not isinstance(value, Sequence) or isinstance(value, str) or len(value) != N_LEVELS:
        raise CalibrationDataError(f"{name} must be {N_LEVELS} lists of {N_LEVELS} numbers")
    rows = tuple(_vector(row, name) for row in value)
    if any(row is None for row in rows):
        raise CalibrationDataError(f"{name} must be {N_LEVELS} lists of {N_LEVELS} numbers")
    return tuple(row for row in rows if row is not None)


@dataclass(frozen=True)
class DetectorCalibration:
    """Per-tower constants the detector would otherwise learn during play.

    Attributes
    ----------
    tare_counts : tuple of 8 float, optional
        HX711 counts of each level's plate when it holds no cube.
    counts_per_gram : tuple of 8 float, optional
        Load-cell sensitivity of each level, HX711 counts per gram (positive).
    cube_mass_g : float, optional
        Mass of one cube, grams.
    load_noise_counts : tuple of 8 float, optional
        Standard deviation of one load reading at rest, counts.
    piezo_noise_codes : tuple of 8 float, optional
        RMS of each conditioned piezo channel at rest, ADC codes.
    acoustic_signatures : 8 x 8 floats, optional
        Row ``L``: the mean normalised log-energy profile over the eight
        piezo channels of the last impact of cubes that came to rest on level
        ``L`` (what :class:`dsp.detect.acoustic.AcousticLevelModel` learns).
    acoustic_counts : tuple of 8 float, optional
        How many landings each signature row was averaged over (its weight).
    """

    tare_counts: tuple[float, ...] | None = None
    counts_per_gram: tuple[float, ...] | None = None
    cube_mass_g: float | None = None
    load_noise_counts: tuple[float, ...] | None = None
    piezo_noise_codes: tuple[float, ...] | None = None
    acoustic_signatures: tuple[tuple[float, ...], ...] | None = None
    acoustic_counts: tuple[float, ...] | None = None

    def cube_counts(self) -> tuple[float, ...] | None:
        """Load step of one cube on each level in counts, if sensitivity and mass are known."""
        if self.counts_per_gram is None or self.cube_mass_g is None:
            return None
        return tuple(c * self.cube_mass_g for c in self.counts_per_gram)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready mapping; :meth:`from_dict` reads it back unchanged."""
        out: dict[str, Any] = {"version": SCHEMA_VERSION}
        for key in (
            "tare_counts",
            "counts_per_gram",
            "cube_mass_g",
            "load_noise_counts",
            "piezo_noise_codes",
            "acoustic_counts",
        ):
            value = getattr(self, key)
            if value is not None:
                out[key] = list(value) if isinstance(value, tuple) else value
        if self.acoustic_signatures is not None:
            out["acoustic_signatures"] = [list(row) for row in self.acoustic_signatures]
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> DetectorCalibration:
        """Read a mapping written by :meth:`to_dict`; unknown keys are ignored.

        Raises
        ------
        CalibrationDataError
            When a known key holds a value of the wrong shape or sign.
        """
        if not isinstance(data, Mapping):
            raise CalibrationDataError("a detector calibration must be a JSON object")
        version = data.get("version", SCHEMA_VERSION)
        if version != SCHEMA_VERSION:
            raise CalibrationDataError(f"detector calibration version {version!r} is not supported")
        mass = data.get("cube_mass_g")
        if mass is not None:
            if isinstance(mass, bool) or not isinstance(mass, int | float):
                raise CalibrationDataError("cube_mass_g must be a number")
            mass = float(mass)
            if not (math.isfinite(mass) and mass > 0):
                raise CalibrationDataError("cube_mass_g must be a positive number")
        cpg = _vector(data.get("counts_per_gram"), "counts_per_gram")
        if cpg is not None and not all(abs(c) > 0 for c in cpg):
            raise CalibrationDataError("counts_per_gram must be non-zero on every level")
        noise = _vector(data.get("load_noise_counts"), "load_noise_counts")
        if noise is not None and not all(n >= 0 for n in noise):
            raise CalibrationDataError("load_noise_counts must not be negative")
        return cls(
            tare_counts=_vector(data.get("tare_counts"), "tare_counts"),
            counts_per_gram=cpg,
            cube_mass_g=mass,
            load_noise_counts=noise,
            piezo_noise_codes=_vector(data.get("piezo_noise_codes"), "piezo_noise_codes"),
            acoustic_signatures=_matrix(data.get("acoustic_signatures"), "acoustic_signatures"),
            acoustic_counts=_vector(data.get("acoustic_counts"), "acoustic_counts"),
        )
