"""The load stream's cadence: LOAD rows a device sends faster than its converters convert.

A device may send LOAD on a timer of its own (a poll at 100 Hz, say) while
each HX711 converts at its own 80 Hz (contracts.md: a channel without a
fresh reading has valid bit 0). The load processors judge windows of
consecutive rows as consecutive conversions; :class:`LoadRegrid` gives them
those: one row per conversion interval, each channel's newest fresh
reading in it. :func:`load_cadence` tells, from a stream's first rows,
whether that is needed.
"""

from __future__ import annotations

import numpy as np

from dsp.detect.orderstats import median
from dsp.detect.stale import load_rows

# Why 16 rows: fifteen intervals give a median good to a few percent, and
# at a slow converter (10 a second) the stream's first 1.6 s, still within
# the tare, wait for it.
CADENCE_ROWS = 16
# Why 5 fresh readings, for most channels, or 2 s: a poll many times faster
# than the converters (a timer at HELLO's 80 Hz over HX711s strapped to 10
# a second, their boards' default) gives each channel a fresh reading in
# every eighth row only, so 16 rows show each converter once or twice and
# its interval not at all: the processors then took a single conversion,
# held over eight rows, for a stable window, and every spike for a step
# (cross-check model L: no landing found). Five readings show four
# intervals; half the channels may be dead. The stream's first 2 s lie in
# its tare, while the tower is empty and quiet.
CADENCE_FRESH = 5
CADENCE_LONGEST_S = 2.0
# Why 15 %: HX711 oscillators run within a few percent of their nominal
# rate, and a device sending LOAD once per conversion round comes at that
# rate; rows coming 15 % or more faster than each channel's fresh
# readings are a poll of the device's own.
CADENCE_TOLERANCE = 0.15

# Why 1.6: a poll that much faster than a converter catches each of its
# conversions within a small part of its interval, so a grid at the
# converter's interval gets one conversion a row. A slower poll catches
# them up to a whole poll late and its rows, put on a grid, lose a
# conversion and repeat one every few rows; those are held instead (their
# stale readings filled in). Cross-check towers of models A and E polled
# at 1.25, 1.5 and 2 times their converters' rate (session 25): a grid
# from 1.15 on gave 1-4 more false landings and up to 1.9 points fewer
# right at 1.25 and 1.5; no grid at 2 left the 10 Hz tower 11 landings
# fewer and the 80 Hz ones 0.45 s more p95 latency.
REGRID_RATIO = 1.6


def cadence_rows(t_s: np.ndarray, fresh: np.ndarray) -> int | None:
    """How many of a stream's first rows show its cadence (None: not yet).

    The first ``CADENCE_ROWS`` rows, or more until most channels have
    given ``CADENCE_FRESH`` fresh readings, or the rows span
    ``CADENCE_LONGEST_S``. Depends on the rows only, not on the blocks
    they came in.
    """
    t_s = np.asarray(t_s, dtype=np.float64).reshape(-1)
    if t_s.size < CADENCE_ROWS:
        return None
    fresh = np.asarray(fresh, dtype=bool).reshape(t_s.size, -1)
    counts = np.cumsum(fresh, axis=0)
    enough = np.median(counts, axis=1) >= CADENCE_FRESH
    enough |= t_s - t_s[0] >= CADENCE_LONGEST_S
    enough[: CADENCE_ROWS - 1] = False
    hits = np.flatnonzero(enough)
    return int(hits[0]) + 1 if hits.size else None


def load_cadence(t_s: np.ndarray, fresh: np.ndarray) -> tuple[float, float]:
    """How often LOAD rows come, and how often each converter gives a fresh reading.

    Parameters
    ----------
    t_s : ndarray, shape (m,)
        Row times, increasing.
    fresh : ndarray of bool, shape (m, n_channels)
        The valid bits as sent.

    Returns
    -------
    (row_interval_s, conversion_interval_s)
        The median interval between rows, and the median over the channels
        of each one's mean interval between fresh readings; NaN where there
        are too few.
    """
    t_s = np.asarray(t_s, dtype=np.float64).reshape(-1)
    fresh = np.asarray(fresh, dtype=bool).reshape(t_s.size, -1)
    row = float(median(np.diff(t_s))) if t_s.size >= 3 else float("nan")
    # Each channel's mean interval: on a poll a quarter faster than the
    # converter, most of its fresh readings still come a poll apart. Not
    # from its first fresh reading where it has four or more: the first
    # poll carries the conversion made before it, up to an interval early.
    per_channel = [
        float(np.ptp(times) / (times.size - 1))
        for ch in range(fresh.shape[1])
        if (times := _after_first(t_s[fresh[:, ch]])).size >= 3
    ]
    conversion = float(median(per_channel)) if per_channel else float("nan")
    return row, conversion


def _after_first(times: np.ndarray) -> np.ndarray:
    return times[1:] if times.size >= 4 else times


class LoadRegrid:
    """Rows at the converters' own interval from rows polled faster.

    Row ``k`` lies at ``t0 + k * interval_s`` (``t0``: the first row fed)
    and holds each channel's newest fresh reading at or before it, flagged
    fresh when it is new since row ``k - 1``; a channel with none new is
    flagged not fresh, value 0, as a device would send it. A row is given
    once a row at or after its time has been fed. Blocks may be of any
    size: the result is the same as for one big block.
    """

    def __init__(self, *, n_channels: int, interval_s: float) -> None:
        if not interval_s > 0:
            raise ValueError("interval_s must be positive")
        self.interval_s = float(interval_s)
        self._t0: float | None = None
        self._k = 0  # the next row to give
        n = int(n_channels)
        self._last_t = np.full(n, -np.inf)  # newest fresh reading so far
        self._last_v = np.zeros(n)
        self._last_read_t = np.full(n, np.nan)
        self._given_t = np.full(n, -np.inf)  # the reading the last row gave

    def process(
        self, t_s: np.ndarray, values: np.ndarray, fresh: np.ndarray,
        read_t: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Rows in, rows on the grid out: ``(t_s, values, fresh, read_t)``.

        ``read_t`` (rows, channels): when each reading was made (default:
        its row's time); on the grid, the reading's own (the grid row's
        where none is fresh).
        """
        t_s, values, fresh, read_t = load_rows(t_s, values, fresh, read_t)
        n = values.shape[1]
        if t_s.size == 0:
            return t_s, values, fresh, np.zeros(values.shape)
        if self._t0 is None:
            self._t0 = float(t_s[0])
        last = int(np.floor((t_s[-1] - self._t0) / self.interval_s + 1e-9))
        grid = self._t0 + np.arange(self._k, last + 1) * self.interval_s
        out_v = np.zeros((grid.size, n))
        out_ok = np.zeros((grid.size, n), dtype=bool)
        out_read_t = np.repeat(grid[:, None], n, axis=1)
        for ch in range(n):
            times = np.concatenate([[self._last_t[ch]], t_s[fresh[:, ch]]])
            vals = np.concatenate([[self._last_v[ch]], values[fresh[:, ch], ch]])
            made = np.concatenate([[self._last_read_t[ch]], read_t[fresh[:, ch], ch]])
            at = np.searchsorted(times, grid + 1e-9, side="right") - 1
            src_t = times[np.maximum(at, 0)]
            given = np.concatenate([[self._given_t[ch]], src_t[:-1]])
            new = (at >= 0) & np.isfinite(src_t) & (src_t > given)
            out_v[:, ch] = np.where(new, vals[np.maximum(at, 0)], 0.0)
            out_ok[:, ch] = new
            out_read_t[new, ch] = made[np.maximum(at, 0)][new]
            if grid.size:
                self._given_t[ch] = src_t[-1]
            self._last_t[ch], self._last_v[ch] = times[-1], vals[-1]
            self._last_read_t[ch] = made[-1]
        self._k = last + 1
        return grid, out_v, out_ok, out_read_t
