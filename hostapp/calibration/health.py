"""The health check before a game: is every level ready to be listened to?

A pure function over a few seconds of recent sensor data and the device's
profile. Each finding names the level, what is wrong and what to do about it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import numpy as np

from hostapp.calibration.load_math import summarize_readings
from hostapp.calibration.profile import STALE_AFTER_DAYS, CalibrationProfile
from hostapp.i18n import tr

# Why 0.05 g: a third of the difference between one light cube (0.3 g) and
# nothing would still be resolved at 2 sigma; above it single cubes blur.
MAX_NOISE_G = 0.05
# Why 0.15 g: half the lightest cube; more than that on an "empty" plate is
# a cube or debris left behind, or a tare that has walked off.
MAX_EMPTY_OFFSET_G = 0.15
# Why 8 % of full scale: the front end biases at mid-scale; a channel whose
# idle level sits further off has a broken divider or a leaky piezo.
MAX_BIAS_ERROR = 0.08
# Why 2 % of full scale: idle piezo noise above ~20 codes would hide the
# soft landings on the ground floor.
MAX_PIEZO_NOISE = 0.02


# The HX711's 24-bit output clamps at these codes: an input driven past its
# range (a broken bridge wire) reads one of them for good.
HX711_RAILS = (0x7FFFFF, -0x800000)


def _reads_nothing(counts: np.ndarray) -> bool:
    """Whether a load cell's readings never move (a broken wire) or sit on a rail.

    A working bridge and HX711 always show a few counts of noise.
    """
    if counts.size < 2:
        return False
    return bool(np.ptp(counts) == 0 or np.all(np.isin(counts, HX711_RAILS)))


class ReadingCollector:
    """Keeps a few seconds of readings (a ``feed_load``/``feed_piezo`` consumer) for the check."""

    def __init__(self) -> None:
        self.load: list[np.ndarray] = []
        self.valid: list[np.ndarray] = []
        self.piezo: list[np.ndarray] = []

    def feed_load(self, t_s: np.ndarray, counts: np.ndarray, valid: np.ndarray) -> None:
        self.load.append(np.asarray(counts))
        self.valid.append(np.asarray(valid, dtype=bool))

    def feed_piezo(self, t0_s: float, samples: np.ndarray) -> None:
        self.piezo.append(np.asarray(samples))

    def check(self, profile: CalibrationProfile | None) -> list[HealthFinding]:
        """Run :func:`health_check` on what was collected (empty if nothing arrived)."""
        if not self.load:
            return []
        return health_check(
            load_counts=np.concatenate(self.load), load_valid=np.concatenate(self.valid),
            piezo_codes=np.concatenate(self.piezo) if self.piezo else np.zeros((0, 8)),
            profile=profile,
        )


@dataclass(frozen=True)
class HealthFinding:
    """One check's verdict: ``level`` is None for checks about the whole device."""

    level: int | None
    ok: bool
    what: str
    fix: str = ""


def health_check(
    *,
    load_counts: np.ndarray,
    load_valid: np.ndarray,
    piezo_codes: np.ndarray,
    profile: CalibrationProfile | None,
    adc_bits: int = 10,
    now: datetime | None = None,
) -> list[HealthFinding]:
    """Check every level before a game.

    Parameters
    ----------
    load_counts : ndarray, shape (m, n_levels)
        Recent raw HX711 readings (a few seconds of an empty, quiet tower).
    load_valid : ndarray of bool, shape (m, n_levels)
        Their valid bits.
    piezo_codes : ndarray, shape (n, n_levels)
        Recent piezo ADC codes.
    profile : CalibrationProfile or None
        The device's calibration, if any.
    adc_bits : int
        Resolution of the piezo ADC.
    now : datetime, optional
        The time to judge the profile's age against.

    Returns
    -------
    list of HealthFinding
        One finding per check and level; all ``ok`` means ready to play.
    """
    findings: list[HealthFinding] = []
    n_levels = load_counts.shape[1] if load_counts.ndim == 2 else 0
    full_scale = float(2**adc_bits)
    if profile is None:
        findings.append(HealthFinding(None, False, tr("No calibration for this device."),
                                      tr("Run the calibration, or play uncalibrated: the "
                                         "detector then tares itself on a quiet tower.")))
    else:
        age = profile.age_days(now)
        fresh = age <= STALE_AFTER_DAYS
        findings.append(HealthFinding(
            None, fresh,
            tr("Calibration is {days:.0f} days old.", days=age),
            "" if fresh else tr("Calibrate again: cells creep and cardboard settles."),
        ))
    for level in range(n_levels):
        valid = load_valid[:, level].astype(bool)
        if valid.size == 0 or valid.mean() < 0.9:
            findings.append(HealthFinding(
                level, False, tr("Level {level} does not report its load.", level=level),
                tr("Seat the modules firmly; clean the spring contacts above level {level}.",
                   level=level),
            ))
            continue
        counts = load_counts[valid, level]
        if _reads_nothing(counts):
            findings.append(HealthFinding(
                level, False,
                tr("Level {level}'s load cell reads a constant {value}: it weighs nothing.",
                   level=level, value=int(counts[-1])),
                tr("Check the cell's four wires and the HX711's joints; until then "
                   "cubes on level {level} are only heard.", level=level),
            ))
            continue
        stats = summarize_readings(counts)
        cell = profile.load[level] if profile is not None else None
        if cell is None:
            findings.append(HealthFinding(level, True, tr("Level {level} reports (uncalibrated).",
                                                          level=level)))
        else:
            noise_g = stats.std / abs(cell.counts_per_gram)
            findings.append(HealthFinding(
                level, noise_g <= MAX_NOISE_G,
                tr("Level {level}: load noise {noise:.3f} g.", level=level, noise=noise_g),
                "" if noise_g <= MAX_NOISE_G else
                tr("Keep the tower away from fans and vibration; check the cell's wiring."),
            ))
            offset_g = (stats.mean - cell.offset_counts) / cell.counts_per_gram
            empty = abs(offset_g) <= MAX_EMPTY_OFFSET_G
            findings.append(HealthFinding(
                level, empty,
                tr("Level {level}: plate reads {grams:+.2f} g.", level=level, grams=offset_g),
                "" if empty else tr("Empty level {level}'s plate; if it is empty, tare again.",
                                    level=level),
            ))
        if piezo_codes.size:
            channel = piezo_codes[:, level].astype(np.float64)
            bias_error = abs(float(np.median(channel)) - full_scale / 2) / full_scale
            noise = float(np.std(channel)) / full_scale
            findings.append(HealthFinding(
                level, bias_error <= MAX_BIAS_ERROR and noise <= MAX_PIEZO_NOISE,
                tr("Level {level}: piezo idles at {bias:.0f} with noise {noise:.1f} codes.",
                   level=level, bias=float(np.median(channel)), noise=noise * full_scale),
                "" if bias_error <= MAX_BIAS_ERROR and noise <= MAX_PIEZO_NOISE else
                tr("Check level {level}'s piezo front end (bias divider, cable shield).",
                   level=level),
            ))
    return findings
