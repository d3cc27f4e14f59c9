"""Medians and percentiles exactly as numpy computes them, for less per call.

``np.median`` and ``np.percentile`` are general: each call checks and
dispatches for a few dozen microseconds, and the first median of a process
imports ``numpy.ma`` (about a hundredth of a second). The detector asks for
small ones many times a second of a replay (noise floors, noise sigmas, the
balance of ringing windows), so these partition the data themselves. They
give the same numbers to the bit (both take the same order statistics and
combine them with the same arithmetic); NaN and empty input go to numpy.
``median_of`` is ``statistics.median`` for short lists of numbers, without
importing ``statistics`` (it brings ``fractions``, ``decimal`` and
``random``: a hundredth of a second at the start of `towerear detect`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import numpy.typing as npt

# Up to how many values a median is taken of a sorted list (above, sorting
# in Python costs more than numpy's partition and its calls).
_LISTED_MAX = 128


def median(values: npt.ArrayLike, axis: int | None = None) -> Any:
    """``np.median(values, axis=axis)``, to the bit."""
    a = np.asarray(values, dtype=np.float64)
    if axis is None:
        a, axis = a.reshape(-1), 0
    n = a.shape[axis]
    if n == 0 or np.isnan(a).any():
        return np.median(a, axis=axis)
    if a.ndim == 1 and n <= _LISTED_MAX:
        # A short run of numbers sorted as a list: the same order statistics
        # as partitioning, combined alike (``median_of``), for a fifth of the
        # cost. Only equal values may come out in another order, and among
        # finite floats only the zeros (0.0 and -0.0) are equal without
        # being the same: those go the way below.
        listed = a.tolist()
        if 0.0 not in listed:
            return np.float64(median_of(listed))
    half = n // 2
    if n % 2:
        return np.take(np.partition(a, half, axis=axis), half, axis=axis)
    ordered = np.partition(a, [half - 1, half], axis=axis)
    # numpy takes the mean of the two middle values: their sum over two.
    return (np.take(ordered, half - 1, axis=axis) + np.take(ordered, half, axis=axis)) / 2.0


def nanmedian_columns(values: np.ndarray) -> np.ndarray:
    """Median of each column of a 2-D array, NaN left out (NaN where a column has none).

    The numbers ``np.nanmedian(values, axis=0)`` gives, several times
    faster on the small blocks the detector asks about.
    """
    values = np.asarray(values, dtype=np.float64)
    # Each column sorted as a row of its own (NaN sort last): contiguous, and
    # the order statistics picked by plain indexing (``take_along_axis``
    # costs more in its Python than in the picking).
    ordered = np.sort(values.T, axis=1)
    n = (~np.isnan(values)).sum(axis=0)
    columns = np.arange(values.shape[1])
    low = ordered[columns, np.maximum((n - 1) // 2, 0)]
    high = ordered[columns, np.maximum(n // 2, 0)]
    return np.where(n > 0, (low + high) / 2.0, np.nan)


def median_of(values: Iterable[Any]) -> Any:
    """``statistics.median(values)``, to the bit: the middle value, or the mean of the two.

    Raises
    ------
    ValueError
        If there are no values.
    """
    data = sorted(values)
    n = len(data)
    if n == 0:
        raise ValueError("no median of no values")
    if n % 2 == 1:
        return data[n // 2]
    i = n // 2
    return (data[i - 1] + data[i]) / 2


def percentile_along_1(windows: np.ndarray, percentile: float) -> np.ndarray:
    """``np.percentile(windows, percentile, axis=1)``, to the bit (linear interpolation).

    Between the two order statistics around ``(n - 1) * percentile / 100``,
    interpolated as numpy interpolates (``numpy.lib._function_base_impl._lerp``).
    """
    if windows.shape[1] == 0 or np.isnan(windows).any():
        return np.asarray(np.percentile(windows, percentile, axis=1))
    n = windows.shape[1]
    virtual = (n - 1) * (percentile / 100.0)
    below = int(np.floor(virtual))
    above = min(below + 1, n - 1)
    ordered = np.partition(windows, [below, above] if above != below else below, axis=1)
    a, b = ordered[:, below], ordered[:, above]
    gamma = virtual - below
    diff = b - a
    if gamma >= 0.5:
        return b - diff * (1.0 - gamma)
    return a + diff * gamma
