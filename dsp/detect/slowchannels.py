"""Slow converters in a fast stream: their readings drawn between conversions, not held.

A tower may mix HX711 boards at 10 readings a second with boards at 80,
all polled at 80 Hz. The load processors judge every channel on windows of
the stream's rows; a slow channel's conversion, held over the eight rows
until its next (``dsp.detect.stale``), lies flat under a window of five and
passes for a still plate, so each conversion of a knock's or a cube's ramp
(an HX711 reads a new load over four conversions) is a step of its own.
:class:`SlowChannelBridge` keeps the rows until such a channel's next
conversion has come and draws its readings in between on the straight line
from one conversion to the next: a ramp stays a ramp, and only a plate that
stays still reads still.
"""

from __future__ import annotations

import numpy as np

from dsp.detect.stale import HOLD_READINGS, SLOWEST_INTERVAL_S

# Why 2.5 rows: a channel fresh in every row, or missing one now and then
# (an HX711 read that timed out, a poll a little faster than its
# converter: two rows apart), keeps its held readings and its rows are
# given at once; a board at 10 readings a second among boards at 80 is
# eight rows apart.
SLOW_ROWS = 2.5
# Why 1.25 of the slowest interval: a conversion later than that is no
# conversion's interval but a lift or a lost reading; the rows before it
# are given as held, and wait no longer.
WAIT_S = HOLD_READINGS * SLOWEST_INTERVAL_S


class SlowChannelBridge:
    """Rows out as they came, but for slow channels' readings drawn between conversions.

    Parameters
    ----------
    n_channels : int
        Load channels.
    row_interval_s : float
        The stream's time between rows.

    A row is given once every slow channel's next conversion after it has
    come, or ``WAIT_S`` has passed; a stream with no slow channel is given
    at once. Blocks may be of any size: the rows given are the same as for
    one big block.
    """

    def __init__(self, *, n_channels: int, row_interval_s: float) -> None:
        n = int(n_channels)
        self.slow_s = SLOW_ROWS * float(row_interval_s)
        # The rows kept until slow channels' next conversions come.
        self._t = np.zeros(0)
        self._values = np.zeros((0, n))
        self._valid = np.zeros((0, n), dtype=bool)
        self._fresh = np.zeros((0, n), dtype=bool)
        self._read_t = np.zeros((0, n))
        # Each channel's last fresh reading given: time, value, and the
        # interval before it (0: none yet).
        self._fresh_t = np.full(n, -np.inf)
        self._fresh_v = np.zeros(n)
        self._interval = np.zeros(n)
        #: Readings drawn between conversions so far (all channels).
        self.drawn = 0

    def process(
        self, t_s: np.ndarray, values: np.ndarray, valid: np.ndarray, fresh: np.ndarray,
        read_t: np.ndarray,
    ) -> tuple[np.ndarray, ...]:
        """Feed rows; the rows ready, as ``(t_s, values, valid, fresh, read_t)``."""
        t_s = np.asarray(t_s, dtype=np.float64)
        if not self._t.size and not (self._interval >= self.slow_s).any():
            # No channel slow so far: the block as it came, unless one turns
            # out slow in it (then kept like any other, from the block's start).
            at_once = self._fast_block(t_s, np.asarray(values), np.asarray(fresh))
            if at_once:
                return t_s, np.asarray(values, dtype=np.float64), valid, fresh, read_t
        self._t = np.concatenate([self._t, t_s])
        self._values = np.concatenate([self._values, np.asarray(values, dtype=np.float64)])
        self._valid = np.concatenate([self._valid, np.asarray(valid, dtype=bool)])
        self._fresh = np.concatenate([self._fresh, np.asarray(fresh, dtype=bool)])
        self._read_t = np.concatenate([self._read_t, np.asarray(read_t, dtype=np.float64)])
        return self._release(final=False)

    def flush(self) -> tuple[np.ndarray, ...]:
        """Every row still kept, as held (the stream ended)."""
        return self._release(final=True)

    def _release(self, *, final: bool) -> tuple[np.ndarray, ...]:
        """The kept rows up to the first whose slow channel still waits for its next conversion.

        Row by row, in order, as if each row were judged on what the rows
        before it left: a slow channel (its last interval ``slow_s`` or more)
        not fresh in a row, and fresh less than ``WAIT_S`` before, is drawn
        on the line to its next fresh reading kept, if that comes within
        ``WAIT_S`` of the one before; a row whose slow channel has none kept
        yet waits, unless ``WAIT_S`` of rows came after it.
        """
        t = self._t
        m, n = self._values.shape
        values = self._values.copy()
        read_t = self._read_t.copy()
        ready = m
        states = []
        rows = np.arange(m)
        for ch in range(n):
            fresh = self._fresh[:, ch]
            at = np.flatnonzero(fresh)
            # Each fresh reading's interval to the one before, where it was
            # one (a longer gap keeps the interval before it).
            times = np.concatenate([[self._fresh_t[ch]], t[at]])
            gaps = np.diff(times)
            kept = np.where(gaps <= SLOWEST_INTERVAL_S, np.arange(at.size), -1)
            latest = np.maximum.accumulate(kept)
            intervals = np.concatenate(
                [[self._interval[ch]], np.where(latest >= 0, gaps[np.maximum(latest, 0)],
                                                self._interval[ch])]
            )
            readings = np.concatenate([[self._fresh_v[ch]], self._values[at, ch]])
            before = np.searchsorted(at, rows, side="left")  # fresh readings before each row
            t_a, v_a = times[before], readings[before]
            waiting = (
                ~fresh & (intervals[before] >= self.slow_s) & (t - t_a <= WAIT_S)
                & self._valid[:, ch]
            )
            has_next = before < at.size
            if not final:
                blocked = np.flatnonzero(waiting & ~has_next & (t[-1] - t < WAIT_S))
                if blocked.size:
                    ready = min(ready, int(blocked[0]))
            drawn = np.flatnonzero(waiting & has_next)
            t_b = times[before[drawn] + 1]
            v_b = readings[before[drawn] + 1]
            near = t_b - t_a[drawn] <= WAIT_S
            drawn, t_b, v_b = drawn[near], t_b[near], v_b[near]
            t_d, t_ad, v_ad = t[drawn], t_a[drawn], v_a[drawn]
            states.append((drawn, t_b, v_b, t_d, t_ad, v_ad, times, readings, intervals, at))
        out_values = values[:ready]
        out_read_t = read_t[:ready]
        for ch, (drawn, t_b, v_b, t_d, t_ad, v_ad, times, readings, intervals, at) in enumerate(
            states
        ):
            use = drawn < ready
            d = drawn[use]
            out_values[d, ch] = v_ad[use] + (v_b[use] - v_ad[use]) * (t_d[use] - t_ad[use]) / (
                t_b[use] - t_ad[use]
            )
            out_read_t[d, ch] = t_d[use]
            self.drawn += int(d.size)
            given = int(np.searchsorted(at, ready, side="left"))  # fresh readings given
            self._fresh_t[ch] = times[given]
            self._fresh_v[ch] = readings[given]
            self._interval[ch] = intervals[given]
        out = (t[:ready], out_values, self._valid[:ready], self._fresh[:ready], out_read_t)
        self._t = t[ready:]
        self._values = self._values[ready:]
        self._valid = self._valid[ready:]
        self._fresh = self._fresh[ready:]
        self._read_t = self._read_t[ready:]
        return out

    def _fast_block(self, t_s: np.ndarray, values: np.ndarray, fresh: np.ndarray) -> bool:
        """Take a block's fresh readings at once if no channel is slow in it (else leave all)."""
        if t_s.size and fresh.all():
            # Every channel fresh in every row (the usual stream): in one go.
            gaps = np.concatenate([t_s[:1] - self._fresh_t, np.diff(t_s)])
            kept = gaps <= SLOWEST_INTERVAL_S
            if (gaps[kept] >= self.slow_s).any():
                return False
            last = np.diff(t_s[-2:]) if t_s.size >= 2 else t_s[:1] - self._fresh_t
            self._interval = np.where(last <= SLOWEST_INTERVAL_S, last, self._interval)
            self._fresh_t = np.full(self._fresh_t.size, t_s[-1])
            self._fresh_v = values[-1].astype(np.float64)
            return True
        n = self._fresh_t.size
        fresh_t = self._fresh_t.copy()
        fresh_v = self._fresh_v.copy()
        interval = self._interval.copy()
        for ch in range(n):
            times = t_s[fresh[:, ch]]
            if times.size == 0:
                continue
            gaps = np.diff(np.concatenate([[fresh_t[ch]], times]))
            kept = gaps[gaps <= SLOWEST_INTERVAL_S]
            if (kept >= self.slow_s).any():
                return False
            if kept.size:
                interval[ch] = kept[-1]
            fresh_t[ch] = times[-1]
            fresh_v[ch] = values[fresh[:, ch], ch][-1]
        self._fresh_t, self._fresh_v, self._interval = fresh_t, fresh_v, interval
        return True
