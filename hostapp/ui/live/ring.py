"""Preallocated ring buffers and peak downsampling for the live plots.

Plain numpy, no Qt: the plots draw what these return, so the cost per
refresh is bounded by the screen width, not by the data rate.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt


class RingBuffer:
    """A fixed-size history of multichannel samples with their times.

    Parameters
    ----------
    capacity
        Samples kept per channel; older ones are overwritten.
    n_channels
        Channels on the last axis.
    dtype
        Sample type (``float32`` keeps memory small).
    """

    def __init__(self, capacity: int, n_channels: int, dtype: npt.DTypeLike = np.float32) -> None:
        if capacity < 1 or n_channels < 1:
            raise ValueError("capacity and n_channels must be positive")
        self._values = np.zeros((capacity, n_channels), dtype=dtype)
        self._times = np.zeros(capacity, dtype=np.float64)
        self._next = 0
        self._count = 0

    @property
    def capacity(self) -> int:
        """Samples kept per channel."""
        return int(self._values.shape[0])

    def __len__(self) -> int:
        return self._count

    def clear(self) -> None:
        """Forget every sample."""
        self._next = 0
        self._count = 0

    def extend(self, times_s: npt.ArrayLike, values: npt.ArrayLike) -> None:
        """Append ``(n,)`` times in seconds and ``(n, n_channels)`` values."""
        t = np.asarray(times_s, dtype=np.float64).reshape(-1)
        v = np.asarray(values).reshape(t.size, -1)
        cap = self.capacity
        if t.size >= cap:
            t, v = t[-cap:], v[-cap:]
        n = t.size
        first = min(n, cap - self._next)
        self._times[self._next : self._next + first] = t[:first]
        self._values[self._next : self._next + first] = v[:first]
        rest = n - first
        if rest:
            self._times[:rest] = t[first:]
            self._values[:rest] = v[first:]
        self._next = (self._next + n) % cap
        self._count = min(cap, self._count + n)

    def snapshot(self) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.generic]]:
        """Times ``(n,)`` and values ``(n, n_channels)``, oldest first (copies)."""
        if self._count < self.capacity:
            return self._times[: self._count].copy(), self._values[: self._count].copy()
        order = np.r_[self._next : self.capacity, 0 : self._next]
        return self._times[order], self._values[order]


def peak_downsample(
    times_s: npt.NDArray[np.float64], values: npt.NDArray[np.generic], *, max_points: int
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Reduce one channel to at most ``max_points`` points keeping every peak.

    Each bin of consecutive samples becomes its minimum and its maximum (in
    that order), as pyqtgraph's "peak" mode does, so short transients stay
    visible however far the view is zoomed out.

    Parameters
    ----------
    times_s
        ``(n,)`` sample times, increasing.
    values
        ``(n,)`` samples of one channel.
    max_points
        Upper bound on the returned length (at least 2).

    Returns
    -------
    times_s, values
        Float arrays of equal length ``<= max_points``.
    """
    n = int(times_s.size)
    v = np.asarray(values, dtype=np.float64).reshape(-1)
    if n <= max_points or max_points < 2:
        return np.asarray(times_s, dtype=np.float64), v
    bins = max_points // 2
    per_bin = n // bins
    used = bins * per_bin
    start = n - used  # keep the newest samples whole; drop the oldest remainder
    block = v[start:].reshape(bins, per_bin)
    t_block = times_s[start:].reshape(bins, per_bin)
    out_v = np.empty(bins * 2)
    out_v[0::2] = block.min(axis=1)
    out_v[1::2] = block.max(axis=1)
    out_t = np.empty(bins * 2)
    out_t[0::2] = t_block[:, 0]
    out_t[1::2] = t_block[:, -1]
    return out_t, out_v


def peak_downsample_channels(
    times_s: npt.NDArray[np.float64], values: npt.NDArray[np.generic], *, max_points: int
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """:func:`peak_downsample` for every channel at once (one numpy pass, no loop).

    Parameters
    ----------
    times_s
        ``(n,)`` sample times, increasing.
    values
        ``(n, n_channels)`` samples; NaN (a gap) is ignored inside a bin and
        kept only where a whole bin is NaN.
    max_points
        Upper bound on the returned length per channel (at least 2).

    Returns
    -------
    times_s, values
        ``(m,)`` times and ``(m, n_channels)`` float values, ``m <= max_points``.
    """
    n = int(times_s.size)
    v = np.asarray(values, dtype=np.float64)
    if v.ndim == 1:
        v = v[:, None]
    if n <= max_points or max_points < 2:
        return np.asarray(times_s, dtype=np.float64), v
    bins = max_points // 2
    per_bin = n // bins
    start = n - bins * per_bin  # keep the newest samples whole; drop the oldest remainder
    block = v[start:].reshape(bins, per_bin, v.shape[1])
    t_block = times_s[start:].reshape(bins, per_bin)
    out_v = np.empty((bins * 2, v.shape[1]))
    # fmin/fmax skip NaN without the all-NaN warning of nanmin/nanmax
    out_v[0::2] = np.fmin.reduce(block, axis=1)
    out_v[1::2] = np.fmax.reduce(block, axis=1)
    out_t = np.empty(bins * 2)
    out_t[0::2] = t_block[:, 0]
    out_t[1::2] = t_block[:, -1]
    return out_t, out_v


def stack_traces(
    times_s: npt.NDArray[np.float64], bands: npt.NDArray[np.float64]
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.bool_]]:
    """Lay ``n_channels`` traces end to end as one curve, for a single draw call.

    Parameters
    ----------
    times_s
        ``(m,)`` x values shared by every trace.
    bands
        ``(m, n_channels)`` y values; NaN marks a gap.

    Returns
    -------
    x, y, connect
        ``(m * n_channels,)`` arrays, channel after channel; ``connect[i]``
        says whether point ``i`` joins point ``i + 1`` (never across two
        traces or into a gap). NaN in ``y`` is replaced by 0 (not connected).
    """
    m, channels = bands.shape
    x = np.tile(np.asarray(times_s, dtype=np.float64), channels)
    y = np.ascontiguousarray(bands.T, dtype=np.float64).reshape(-1)
    finite = np.isfinite(y)
    connect = np.zeros(y.size, dtype=bool)
    connect[:-1] = finite[:-1] & finite[1:]
    if m:
        connect[m - 1 :: m] = False
    y[~finite] = 0.0
    return x, y, connect


def clip_to_window(
    times_s: npt.NDArray[np.float64], values: npt.NDArray[np.generic], *, t_from_s: float
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.generic]]:
    """Keep only the samples at or after ``t_from_s`` (the visible window)."""
    first = int(np.searchsorted(times_s, t_from_s, side="left"))
    return times_s[first:], values[first:]
