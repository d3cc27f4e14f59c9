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
        self._t: list[float] = []
        self._rows: list[tuple[np.ndarray, ...]] = []
        # Each channel's last fresh reading given or waiting: time, value,
        # and the interval before it (0: none yet).
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
        if not self._rows and not (self._interval >= self.slow_s).any():
            # No channel slow so far: the block as it came, unless one turns
            # out slow in it (then row by row, from the block's start).
            at_once = self._fast_block(t_s, np.asarray(values), np.asarray(fresh))
            if at_once:
                return t_s, np.asarray(values, dtype=np.float64), valid, fresh, read_t
        for k in range(t_s.size):
            self._t.append(float(t_s[k]))
            self._rows.append((values[k].astype(np.float64), valid[k].copy(), fresh[k].copy(),
                               read_t[k].copy()))
        return self._release(final=False)

    def flush(self) -> tuple[np.ndarray, ...]:
        """Every row still kept, as held (the stream ended)."""
        return self._release(final=True)

    def _release(self, *, final: bool) -> tuple[np.ndarray, ...]:
        out: list[tuple[float, np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
        while self._rows:
            t = self._t[0]
            values, valid, fresh, read_t = self._rows[0]
            waiting = np.flatnonzero(self._waiting(t, fresh) & valid)
            found = {int(ch): self._next_fresh(int(ch)) for ch in waiting}
            if not final and self._t[-1] - t < WAIT_S and any(f is None for f in found.values()):
                break  # a slow channel's next conversion may still come
            values = values.copy()
            read_t = read_t.copy()
            for ch, nxt in found.items():
                t_a, v_a = self._fresh_t[ch], self._fresh_v[ch]
                if nxt is not None and nxt[0] - t_a <= WAIT_S:
                    t_b, v_b = nxt
                    values[ch] = v_a + (v_b - v_a) * (t - t_a) / (t_b - t_a)
                    read_t[ch] = t
                    self.drawn += 1
            self._note_fresh(t, values, fresh)
            out.append((t, values, valid, fresh, read_t))
            self._t.pop(0)
            self._rows.pop(0)
        n = self._fresh_t.size
        if not out:
            empty = np.zeros((0, n))
            return (np.zeros(0), empty, empty.astype(bool), empty.astype(bool), empty)
        return (
            np.array([r[0] for r in out]),
            np.array([r[1] for r in out]),
            np.array([r[2] for r in out]),
            np.array([r[3] for r in out]),
            np.array([r[4] for r in out]),
        )

    def _waiting(self, t: float, fresh: np.ndarray) -> np.ndarray:
        """Channels of a row at ``t`` that are slow and not fresh in it."""
        return (
            ~fresh & (self._interval >= self.slow_s) & (t - self._fresh_t <= WAIT_S)
        )

    def _next_fresh(self, ch: int) -> tuple[float, float] | None:
        """Channel ``ch``'s next fresh reading among the rows kept after the first (None: none)."""
        for t, (values, _, fresh, _) in zip(self._t[1:], self._rows[1:], strict=True):
            if fresh[ch]:
                return t, float(values[ch])
        return None

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

    def _note_fresh(self, t: float, values: np.ndarray, fresh: np.ndarray) -> None:
        for ch in np.flatnonzero(fresh):
            if t - self._fresh_t[ch] <= SLOWEST_INTERVAL_S:
                self._interval[ch] = t - self._fresh_t[ch]
            self._fresh_t[ch] = t
            self._fresh_v[ch] = values[ch]
