"""How the live view scales its traces into their bands (no Qt: plain numpy).

Each level is drawn in a band of height 1 (level k between k and k + 1). The
scales are chosen for a person glancing at the screen after a throw:

- The scopes share one symmetric scale around each channel's resting code, so
  the level that rang loudest is the tallest trace. The scale follows the
  loudest deviation in view, but never zooms in below a floor, so an idle
  tower shows flat lines, not magnified noise.
- Each load trace is scaled on its own, on the trace without impact spikes (a
  running median), so that the step of one cube fills the band rather than
  the spike of the impact; spikes are cut at the band's edge. A trace never
  spans less than many times its own noise, so a quiet cell is a flat line.

Both scales move only when the trace leaves them or shrinks well inside them:
a steady scale is easier to read.
"""

from __future__ import annotations

import warnings

import numpy as np
import numpy.typing as npt
from scipy.ndimage import median_filter

# Why 1/64 of full scale: an idle piezo channel wanders by a few codes; at
# 10 bits 16 codes of half-span keep that under a fifth of the band, while a
# cube's ring (tens to hundreds of codes) still fills it.
PIEZO_MIN_HALF_SPAN = 1 / 64
# Why 0.6 s: an impact shakes a plate for up to a quarter of a second (a
# few HX711 readings of spike, then the plate's ring); a running median
# twice as long drops it and keeps a step.
LOAD_SPIKE_MEDIAN_S = 0.6
# Why 40 sigma: noise then fills at most a sixth of the band (+-3 sigma),
# and one cube's step (hundreds of sigma on an HX711) still fills it.
LOAD_MIN_SPAN_SIGMA = 40.0
# The fraction of the range left free above and below a trace.
_MARGIN = 0.25
# Spikes are cut this far inside the band, so that neighbours stay apart.
_EDGE = 0.02
# A scale shrinks only once the trace needs less than this part of it (the
# scopes sooner: a ring is gone from view within seconds).
_SHRINK_BELOW = 0.25
_SCOPE_SHRINK_BELOW = 0.5


def noise_sigma(values: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """Per-column noise sigma from the median absolute first difference.

    Parameters
    ----------
    values
        ``(n, channels)`` readings in time order; NaN (gaps) ignored.

    Returns
    -------
    ``(channels,)`` sigma, 0 where fewer than two readings are finite.
    """
    v = np.asarray(values, dtype=np.float64)
    if v.shape[0] < 2:
        return np.zeros(v.shape[1] if v.ndim == 2 else 1)
    steps = np.abs(np.diff(v, axis=0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a column of gaps only
        middle = np.nanmedian(steps, axis=0)
    # MAD -> sigma for a Gaussian, and a difference of two readings has
    # sqrt(2) times the noise of one.
    return np.nan_to_num(1.4826 * middle / np.sqrt(2.0))


class ScopeScale:
    """One symmetric scale, in ADC codes, shared by every scope.

    Parameters
    ----------
    full_scale
        The largest ADC code (1023 for 10 bits).
    """

    def __init__(self, full_scale: float = 1023.0) -> None:
        self.full_scale = float(full_scale)
        self.half_span = self.min_half_span

    @property
    def min_half_span(self) -> float:
        """The smallest half-span shown, in codes."""
        return max(1.0, self.full_scale * PIEZO_MIN_HALF_SPAN)

    def bands(self, values: npt.NDArray[np.floating]) -> npt.NDArray[np.float64]:
        """``(m, levels)`` codes to band heights: level k's trace within ``[k, k + 1]``.

        Each channel is centred on its median code in view (its resting code,
        mid-scale for an AC-coupled front end); the scale follows the largest
        deviation of any channel.
        """
        v = np.asarray(values, dtype=np.float64)
        levels = np.arange(v.shape[1], dtype=np.float64)
        if v.shape[0] == 0:
            return v.copy()
        centre = np.median(v, axis=0)
        deviation = v - centre
        peak = float(np.max(np.abs(deviation)))
        if peak > self.half_span or peak < self.half_span * _SCOPE_SHRINK_BELOW:
            self.half_span = max(self.min_half_span, peak * (1.0 + _MARGIN))
        unit = np.clip(deviation / self.half_span, -1.0, 1.0)
        return levels + 0.5 + 0.45 * unit


class LoadScale:
    """Per-level ranges for the load traces, in counts or grams."""

    def __init__(self, levels: int) -> None:
        self.ranges: list[tuple[float, float] | None] = [None] * levels

    def bands(
        self,
        times_s: npt.NDArray[np.floating],
        values: npt.NDArray[np.floating],
        sigma: npt.NDArray[np.floating],
    ) -> npt.NDArray[np.float64]:
        """``(m, levels)`` readings to band heights, each level in ``[k, k + 1]``.

        Parameters
        ----------
        times_s
            ``(m,)`` times of the points drawn, increasing.
        values
            Readings in time order (NaN where a cell was disconnected).
        sigma
            ``(levels,)`` each trace's noise in the same unit (:func:`noise_sigma`).
        """
        v = np.asarray(values, dtype=np.float64)
        out = np.empty_like(v)
        spacing = float(np.median(np.diff(times_s))) if len(times_s) > 1 else 0.0
        # Points in the running median: an odd number, so it is centred.
        points = int(LOAD_SPIKE_MEDIAN_S / spacing) | 1 if spacing > 0 else 1
        for level in range(v.shape[1]):
            low, high = self._follow(level, v[:, level], float(sigma[level]), points)
            band = 0.05 + 0.9 * (v[:, level] - low) / (high - low)
            out[:, level] = level + np.clip(band, _EDGE, 1.0 - _EDGE)
        return out

    def _follow(
        self, level: int, trace: npt.NDArray[np.float64], sigma: float, points: int
    ) -> tuple[float, float]:
        current = self.ranges[level]
        finite = trace[np.isfinite(trace)]
        if finite.size == 0:
            return current if current is not None else (0.0, 1.0)
        size = min(points, finite.size)
        calm = median_filter(finite, size=size, mode="nearest") if size > 2 else finite
        low, high = float(calm.min()), float(calm.max())
        least = max(1.0, LOAD_MIN_SPAN_SIGMA * sigma)
        if high - low < least:
            middle = 0.5 * (low + high)
            low, high = middle - 0.5 * least, middle + 0.5 * least
        span = high - low
        if current is None or low < current[0] or high > current[1] or (
            span < (current[1] - current[0]) * _SHRINK_BELOW
        ):
            margin = span * _MARGIN
            current = (low - margin, high + margin)
            self.ranges[level] = current
        return current
