"""Stale load readings: a channel's last fresh reading held for the moment it is missing.

A device may send LOAD messages more often than its converters convert (a
poll on a timer, while each HX711 runs on its own oscillator), or miss a
conversion now and then (a read that timed out). contracts.md marks such a
channel with valid bit 0 and value 0. To the load processors, which judge
windows of consecutive readings, every such gap makes the windows over it
unusable: a device polling at 100 Hz for converters at 80 Hz leaves one
reading in five stale on every channel, so that no window of five is ever
whole and no cube is ever seen (cross-check, session 25: 0 landings of 20).

The plate did not move in that moment as far as anyone can tell: the
reading is its last fresh one, held for at most ``HOLD_READINGS`` of the
converter's intervals (its own, where it converts slower than the others:
``SLOWEST_INTERVAL_S``). A module lifted off the tower sends nothing for much
longer, and is left as the gap it is (``dsp.detect.loadcell`` times its
disconnection from its last fresh reading).
"""

from __future__ import annotations

import numpy as np

# Why 1.25 intervals: at any poll, however fast, the newest conversion of a
# converter that is running is less than one of its intervals old; a
# quarter more allows for its oscillator (HX711s are within a few percent of
# nominal) and the poll's timing. A lift keeps a channel silent for
# seconds: the hold covers its first reading or two, never a whole window.
HOLD_READINGS = 1.25
# Why 0.15 s: a converter of its own, slower than the others, is held over
# its own interval (the last one between its fresh readings): an HX711 whose
# RATE pin was left low converts 10 times a second among boards at 80, and
# without its hold its windows are never whole (cross-check model K, tower
# 16: no landing on its plate). 10 a second, a few percent off, is the
# slowest an HX711 runs; a module lifted off is silent for seconds.
SLOWEST_INTERVAL_S = 0.15


class StaleReadingHold:
    """Fills readings without a fresh value from the channel's last fresh one, briefly.

    Parameters
    ----------
    n_channels : int
        Load channels.
    reading_interval_s : float
        The converters' nominal time between readings (1 / HELLO's load rate).

    Blocks may be of any size: the result is the same as for one big block.
    """

    def __init__(self, *, n_channels: int, reading_interval_s: float) -> None:
        if not reading_interval_s > 0:
            raise ValueError("reading_interval_s must be positive")
        self.hold_s = HOLD_READINGS * float(reading_interval_s)
        self._fresh_t = np.full(int(n_channels), -np.inf)
        self._fresh_v = np.zeros(int(n_channels))
        self._fresh_read_t = np.full(int(n_channels), np.nan)
        # The interval before each channel's last fresh reading (0: none yet).
        self._interval = np.zeros(int(n_channels))
        #: Readings filled so far (all channels).
        self.held = 0

    def process(
        self, t_s: np.ndarray, values: np.ndarray, valid: np.ndarray,
        read_t: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The block's readings with stale ones held: ``(values, valid, read_t)``.

        Parameters
        ----------
        t_s : ndarray, shape (m,)
            Stream time of each row, increasing.
        values : ndarray, shape (m, n_channels)
            Counts as sent (0 where not valid).
        valid : ndarray of bool, shape (m, n_channels)
            The valid bits as sent: a fresh reading.
        read_t : ndarray, shape (m, n_channels), optional
            When each reading was read (default: its row's time).

        Returns
        -------
        values, valid, read_t
            A held reading keeps the time it was read.
        """
        t_s, values, valid, read_t = load_rows(t_s, values, valid, read_t)
        n = values.shape[1]
        if t_s.size == 0:
            return values, valid, read_t
        m = t_s.size
        if valid.all():
            # Every reading fresh (the usual converter): nothing to hold, and
            # the last row is all there is to remember (as below, its
            # interval from the fresh reading before it).
            since = t_s[-1] - (np.full(n, t_s[-2]) if m >= 2 else self._fresh_t)
            self._interval = np.where(np.isfinite(since), since, 0.0)
            self._fresh_t = np.full(n, t_s[-1])
            self._fresh_v = values[-1].copy()
            self._fresh_read_t = read_t[-1].copy()
            return values, valid, read_t
        cols = np.arange(n)[None, :]
        last = np.maximum.accumulate(np.where(valid, np.arange(m)[:, None], -1), axis=0)
        seen = last >= 0
        at = np.maximum(last, 0)
        fresh_t = np.where(seen, t_s[at], self._fresh_t[None, :])
        fresh_v = np.where(seen, values[at, cols], self._fresh_v[None, :])
        fresh_read_t = np.where(seen, read_t[at, cols], self._fresh_read_t[None, :])
        # Each fresh reading's interval from the one before it, and each
        # row's: its last fresh reading's.
        before_t = np.concatenate([self._fresh_t[None, :], fresh_t[:-1]])
        since = t_s[:, None] - before_t
        own = np.where(np.isfinite(since), since, 0.0)
        interval = np.where(seen, own[at, cols], self._interval[None, :])
        hold = np.maximum(self.hold_s, HOLD_READINGS * np.minimum(interval, SLOWEST_INTERVAL_S))
        fill = ~valid & (t_s[:, None] - fresh_t <= hold)
        self.held += int(np.count_nonzero(fill))
        self._fresh_t = fresh_t[-1].copy()
        self._fresh_v = fresh_v[-1].copy()
        self._fresh_read_t = fresh_read_t[-1].copy()
        self._interval = interval[-1].copy()
        if not fill.any():
            return values, valid, read_t
        return (
            np.where(fill, fresh_v, values), valid | fill, np.where(fill, fresh_read_t, read_t)
        )


def load_rows(
    t_s: np.ndarray, values: np.ndarray, flags: np.ndarray, read_t: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A block of load rows as arrays: times (m,), counts and flags (m, n), read times (m, n).

    ``read_t`` defaults to each row's own time.
    """
    t_s = np.asarray(t_s, dtype=np.float64).reshape(-1)
    values = np.asarray(values, dtype=np.float64).reshape(t_s.size, -1)
    flags = np.asarray(flags, dtype=bool).reshape(t_s.size, -1)
    if read_t is None:
        read_t = np.repeat(t_s[:, None], values.shape[1], axis=1)
    return t_s, values, flags, read_t
