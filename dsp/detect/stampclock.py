"""PIEZO message stamps in, runs of sample sets on one time grid out.

The device stamps each PIEZO message with the time of its first set, but a
firmware that reads its clock when it builds the message, not in the ADC
interrupt, stamps late by an interrupt latency that changes from message to
message (up to some hundred microseconds: a set or more at 3-4 kHz). Taken
at their word, such stamps re-timed the samples at almost every message,
and the piezo chain ran on blocks of a few sets (a cross-check tower at 41x
real time instead of 300x), its strikes timed by the latency of whichever
message they fell in.

:class:`PiezoStampClock` keeps the samples on the nominal-rate grid and
moves that grid only on evidence that it is off:

- a stamp *earlier* than the grid by more than ``TOLERANCE_SETS``: latency
  only ever makes a stamp late, so the grid is late; it moves to that stamp
  (over a few messages it settles on the least delayed stamps);
- stamps *all later* than the grid by more than ``TOLERANCE_SETS`` for
  ``LATE_FOR_S``: the grid is early (or the sample clock runs slow against
  the stamps); it moves later by the least delay of that stretch;
- holes (lost messages) and overlaps (a message sent twice) as the piezo
  chain fills and drops them (:data:`dsp.detect.piezo.HOLE_SETS` ...): each
  run then begins exactly a whole number of sets off the grid, so the
  chain's fill or drop is the same however the run is sliced.

Every run starts on this grid, so the chain re-times only where the clock
moved the grid (more than ``DRIFT_ANCHOR_SETS``, a fifth of a set), and a
stream stamped without latency is timed as before: its stamps sit on the
grid, to the microsecond, until the sample clock drifts a quarter of a set.
"""

from __future__ import annotations

import numpy as np

from dsp.detect.piezo import HOLE_SETS, MAX_FILL_S, OVERLAP_SETS

# Why a quarter of a set: above the chain's fifth (DRIFT_ANCHOR_SETS), so a
# grid the clock moves is always re-timed by the chain and a grid it keeps
# never is; and as before this clock, the drift a run was allowed.
TOLERANCE_SETS = 0.25
# Why 0.1 s: delays drawn message by message leave a stamp near the grid
# within a few messages (a cross-check tower with delays of 0-300 us: every
# 2-ms message has a chance of 3 in 4 to be a quarter set late, so 45 in a
# row happen once in a million stretches); a sample clock 400 ppm slow
# against the stamps drifts 0.08 of a set in that time at 2000 sets/s.
LATE_FOR_S = 0.1
# Stamps are whole microseconds: offsets are compared to a millionth of a
# set, so that how the sets before a message were summed cannot decide
# which side of a threshold it lies.
_SETS_DECIMALS = 6

Run = tuple[float, int, int]
"""A run: the grid time of its first set, and its sets ``[first, end)`` in the call's sets."""


class PiezoStampClock:
    """Streaming: PIEZO message stamps in, runs of sets timed on one grid out.

    Parameters
    ----------
    rate_hz : float
        Piezo set rate (from HELLO).

    Examples
    --------
    Stamps 0-150 us late at 2000 sets/s stay on one grid, in one run that
    begins within a quarter set of the first set's true time (0 s):

    >>> clock = PiezoStampClock(2000.0)
    >>> late = np.random.default_rng(1).uniform(0, 150e-6, 100)
    >>> stamps = np.arange(100) * 8 / 2000.0 + late
    >>> runs = clock.runs(stamps, np.full(100, 8))
    >>> len(runs), runs[0][1:], bool(0.0 <= runs[0][0] < 0.25 / 2000.0)
    (1, (0, 800), True)
    """

    def __init__(self, rate_hz: float) -> None:
        if not rate_hz > 0:
            raise ValueError(f"piezo rate must be positive, got {rate_hz}")
        self.rate = float(rate_hz)
        self._next_t: float | None = None  # grid time of the next message's first set
        self._ok_t = -np.inf  # stamp of the last message within the tolerance (or moved to)
        self._late_min = np.inf  # least delay (sets) of the late stretch since then
        self.moves = 0  # times the grid moved (not holes or overlaps)

    def runs(self, t_s: np.ndarray, sets: np.ndarray) -> list[Run]:
        """Cut messages (stamps ``t_s`` of their first sets, ``sets`` each) into timed runs.

        Returns
        -------
        list of (float, int, int)
            ``(t0, first, end)``: sets ``first:end`` of the messages' sets in
            order, their first set at grid time ``t0``. Together they cover
            every set once; a hole or an overlap is where one run ends and the
            next begins ``HOLE_SETS`` or more later or ``OVERLAP_SETS`` or
            more earlier than the grid goes on.
        """
        t = np.asarray(t_s, dtype=np.float64).reshape(-1)
        n_sets = np.asarray(sets, dtype=np.int64).reshape(-1)
        if t.size != n_sets.size:
            raise ValueError(f"{t.size} stamps for {n_sets.size} set counts")
        first_set = np.concatenate([[0], np.cumsum(n_sets)])
        out: list[Run] = []
        k = 0
        while k < t.size:
            if self._next_t is None:
                self._move_to(float(t[k]), float(t[k]))
            k = self._scan(t, n_sets, first_set, k, out)
        return out

    def _move_to(self, grid_t: float, stamp_t: float) -> None:
        self._next_t = grid_t
        self._ok_t = stamp_t
        self._late_min = np.inf

    def _scan(
        self, t: np.ndarray, n_sets: np.ndarray, first_set: np.ndarray, k: int, out: list[Run]
    ) -> int:
        """One run from message ``k`` on the current grid, up to the next event.

        Returns the message the next run begins with.
        """
        assert self._next_t is not None
        period = 1.0 / self.rate
        t0 = self._next_t
        offsets = first_set[k : t.size] - first_set[k]
        grid = t0 + offsets * period
        off = np.round((t[k:] - grid) * self.rate, _SETS_DECIMALS)
        within = off <= TOLERANCE_SETS
        ok_t = np.maximum.accumulate(np.where(within, t[k:], -np.inf))
        ok_t = np.maximum(ok_t, self._ok_t)
        early = off < -TOLERANCE_SETS
        hole = off >= HOLE_SETS
        late_long = ~within & (t[k:] - ok_t >= LATE_FOR_S)
        events = np.flatnonzero(early | hole | late_long)
        # The message at k begins the run on the grid: an event there is
        # handled as its own run below, not folded into the run before.
        if events.size == 0:
            end = t.size
        else:
            end = k + int(events[0])
        if end > k:
            out.append((t0, int(first_set[k]), int(first_set[end])))
            self._next_t = t0 + (first_set[end] - first_set[k]) * period
            last_within = np.flatnonzero(within[: end - k])
            tail = off[(last_within[-1] + 1 if last_within.size else 0) : end - k]
            if last_within.size:
                self._late_min = np.inf
            self._late_min = min(self._late_min, float(tail.min(initial=np.inf)))
            self._ok_t = float(ok_t[end - k - 1])
        if end == t.size:
            return end
        return self._event(t, n_sets, first_set, end, float(off[end - k]), out)

    def _event(
        self, t: np.ndarray, n_sets: np.ndarray, first_set: np.ndarray, j: int, off: float,
        out: list[Run],
    ) -> int:
        """Message ``j`` is off the grid by ``off`` sets: move, fill or drop; returns the next."""
        assert self._next_t is not None
        period = 1.0 / self.rate
        expected = self._next_t
        stamp = float(t[j])
        if off <= -OVERLAP_SETS:
            # Sent twice (or a clock stepping back): the chain drops the sets
            # it has. Alone in its run, so that what it drops ends with it.
            skip = int(round(-off))
            out.append((expected - skip * period, int(first_set[j]), int(first_set[j + 1])))
            self._next_t = expected + max(0, int(n_sets[j]) - skip) * period
            return j + 1
        if off >= HOLE_SETS:
            missing = int(round(off))
            if missing * period > MAX_FILL_S:
                self._move_to(stamp, stamp)  # the chain starts afresh there
                return j
            # The chain fills the hole and stays on the grid, a whole number
            # of sets on: this message goes there, alone in its run, and the
            # ones after it are judged against that grid.
            t0 = expected + missing * period
            out.append((t0, int(first_set[j]), int(first_set[j + 1])))
            self._move_to(t0 + int(n_sets[j]) * period, stamp)
            return j + 1
        self.moves += 1
        if off < 0:
            self._move_to(stamp, stamp)
        else:
            late = min(self._late_min, off)
            self._move_to(expected + late * period, stamp)
        return j
