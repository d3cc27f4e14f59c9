"""Load-cell calibration arithmetic: pure functions over HX711 readings.

Every result carries its standard uncertainty, propagated from the scatter of
the readings (standard error of a robust mean) and from the reference mass.
Spikes from knocks are excluded by a median-absolute-deviation cut before
averaging, so one bump of the table does not bias a calibration.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from hostapp.calibration.coins import ReferenceMass

# Why 5: a MAD cut at 5 robust sigmas keeps every reading of a Gaussian noise
# floor (losing ~1 in 1.7 million) and drops impact spikes, which are tens of
# sigmas off.
_OUTLIER_ROBUST_SIGMAS = 5.0
_MAD_TO_SIGMA = 1.4826


@dataclass(frozen=True)
class ReadingStats:
    """Robust summary of a span of steady readings of one channel, in counts."""

    mean: float
    std: float
    n: int

    @property
    def sem(self) -> float:
        """Standard error of the mean, in counts."""
        return self.std / math.sqrt(self.n) if self.n > 0 else math.inf


@dataclass(frozen=True)
class Measured:
    """A value with its standard uncertainty."""

    value: float
    uncertainty: float

    def relative(self) -> float:
        """Relative standard uncertainty (uncertainty / |value|)."""
        return self.uncertainty / abs(self.value) if self.value else math.inf

    def __str__(self) -> str:
        return f"{self.value:.6g} ± {self.uncertainty:.2g}"


def summarize_readings(counts: np.ndarray) -> ReadingStats:
    """Robust mean and scatter of steady readings, spikes excluded.

    Parameters
    ----------
    counts : ndarray, shape (n,)
        Raw readings of one channel while nothing changes on its plate.

    Returns
    -------
    ReadingStats
        ``n == 0`` (and NaN mean) for empty input.
    """
    values = np.asarray(counts, dtype=np.float64).ravel()
    values = values[np.isfinite(values)]
    if values.size == 0:
        return ReadingStats(mean=math.nan, std=math.nan, n=0)
    median = float(np.median(values))
    robust_sigma = _MAD_TO_SIGMA * float(np.median(np.abs(values - median)))
    if robust_sigma > 0:
        values = values[np.abs(values - median) <= _OUTLIER_ROBUST_SIGMAS * robust_sigma]
    std = float(np.std(values, ddof=1)) if values.size > 1 else 0.0
    return ReadingStats(mean=float(np.mean(values)), std=std, n=int(values.size))


def counts_per_gram(
    empty: ReadingStats, loaded: ReadingStats, reference: ReferenceMass
) -> Measured:
    """Scale factor of a cell from its readings without and with a reference mass.

    The uncertainty combines both means' standard errors and the reference's
    own uncertainty (for a coin, about 1 %; it dominates).
    """
    delta = loaded.mean - empty.mean
    scale = delta / reference.grams
    delta_u = math.hypot(empty.sem, loaded.sem)
    rel = math.hypot(delta_u / abs(delta) if delta else math.inf, reference.relative_uncertainty)
    return Measured(scale, abs(scale) * rel)


def linearity_error(
    empty: ReadingStats, loaded: ReadingStats, reference: ReferenceMass, scale: Measured
) -> Measured:
    """How far a second mass reads from what the first one's scale predicts, in %.

    Positive when the cell reads heavy. The uncertainty combines the second
    reference's uncertainty with the scale's.
    """
    measured_g = (loaded.mean - empty.mean) / scale.value
    error_pct = 100.0 * (measured_g - reference.grams) / reference.grams
    u = 100.0 * math.hypot(reference.relative_uncertainty, scale.relative())
    return Measured(error_pct, u)


def drift_rate(times_s: np.ndarray, means_counts: np.ndarray, scale: Measured) -> Measured:
    """Drift of the empty plate in grams per minute, from empty-plate means over time.

    A straight line through the means; with fewer than two distinct times the
    drift is unknown (NaN).
    """
    t = np.asarray(times_s, dtype=np.float64)
    y = np.asarray(means_counts, dtype=np.float64) / scale.value
    if t.size < 2 or float(np.ptp(t)) <= 0:
        return Measured(math.nan, math.nan)
    slope, intercept = np.polyfit(t, y, 1)
    if t.size > 2:
        residuals = y - (slope * t + intercept)
        s2 = float(np.sum(residuals**2)) / (t.size - 2)
        slope_u = math.sqrt(s2 / float(np.sum((t - t.mean()) ** 2)))
    else:
        slope_u = abs(float(slope))  # two points: no scatter to judge by, say so honestly
    return Measured(float(slope) * 60.0, slope_u * 60.0)


def noise_grams(empty: ReadingStats, scale: Measured) -> Measured:
    """RMS noise of the empty plate in grams."""
    value = empty.std / abs(scale.value)
    # The standard deviation of a sample std is about std / sqrt(2(n-1)).
    rel = math.hypot(1.0 / math.sqrt(max(2 * (empty.n - 1), 1)), scale.relative())
    return Measured(value, value * rel)


def bracketed_baseline(
    before: ReadingStats, t_before_s: float, after: ReadingStats, t_after_s: float, t_s: float
) -> ReadingStats:
    """The empty plate's reading at ``t_s``, interpolated between one before and one after.

    The plate drifts (a random walk of a few hundredths of a gram per
    minute): weighing a handful of cubes against the empty reading taken
    before them alone puts the drift since then into the cubes' mass; a
    straight line to the empty reading after them takes out all but the
    drift's curvature. The result's standard error combines both means'.
    """
    span = t_after_s - t_before_s
    if not span > 0:
        return before
    w = min(max((t_s - t_before_s) / span, 0.0), 1.0)
    mean = (1.0 - w) * before.mean + w * after.mean
    sem = math.hypot((1.0 - w) * before.sem, w * after.sem)
    n = before.n + after.n
    return ReadingStats(mean=mean, std=sem * math.sqrt(n), n=n)


def cube_mass(
    empty: ReadingStats, loaded: ReadingStats, n_cubes: int, scale: Measured
) -> Measured:
    """Mean mass of one cube from a handful weighed together, in grams."""
    if n_cubes < 1:
        raise ValueError("weigh at least one cube")
    grams = (loaded.mean - empty.mean) / scale.value / n_cubes
    delta_u = math.hypot(empty.sem, loaded.sem) / abs(scale.value) / n_cubes
    u = math.hypot(delta_u, abs(grams) * scale.relative())
    return Measured(grams, u)
