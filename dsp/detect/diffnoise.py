"""A channel's noise from the differences of consecutive readings.

Steps, drift and a slow swing move a channel's readings far more than its
noise does, but change few of the differences between consecutive ones: a
median of those is the noise alone.
"""

from __future__ import annotations

import numpy as np

from dsp.detect.orderstats import median


def robust_sigma_from_differences(values: np.ndarray) -> np.ndarray:
    """Noise sigma per channel from first differences, immune to a few steps.

    Parameters
    ----------
    values : ndarray, shape (n, channels)
        Readings of channels at rest.

    Returns
    -------
    ndarray, shape (channels,)
        Robust standard deviation of one reading; NaN where ``n < 3``.
    """
    values = np.asarray(values, dtype=np.float64)
    if values.ndim != 2 or values.shape[0] < 3:
        return np.full(values.shape[-1] if values.ndim == 2 else 0, np.nan)
    diffs = np.diff(values, axis=0)
    mad = median(np.abs(diffs - median(diffs, axis=0)), axis=0)
    # MAD -> sigma for a Gaussian, and a difference of two readings has
    # sqrt(2) times the sigma of one.
    return 1.4826 * mad / np.sqrt(2.0)
