"""Load readings kept for the fusion: are the load cells there, how far did a plate swing?"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass

import numpy as np

from dsp.detect import orderstats
from dsp.detect.ringing import (
    RING_FIT_READINGS,
    RING_FIT_RESIDUAL,
    fitted_windows,
    oscillation_fit,
)

# Why 0.5 s: the plate's level before a drop, from the readings just before it.
SWING_BASE_S = 0.5
# Why 30 s: a load stream that far ahead of the piezo stream has the other
# taken for absent (the detector's 2.5 s), so nothing asks that far back.
_AHEAD_CAP_S = 30.0
# Why 1 s: cutting the arrays costs a copy of them; once a second is enough.
_FORGET_GRID_S = 1.0
# Why 1 s: enough readings to tell 80 a second from 10 (ten at the least),
# all of them fed by the time anything after them is asked.
_INTERVAL_SPAN_S = 1.0
# Why 5: the fewest readings (half a second at 10 a second) whose
# differences tell a spread at all.
_NOISE_READINGS = 5
# A normal distribution's sigma per median absolute deviation.
_MAD_SIGMA = 1.4826
# Why 256: gaps in the load stream (lifts disconnect some channels, but the
# LOAD messages go on; only an absent stream leaves gaps) are rare; the last
# ones are all that is ever asked about.
_GAPS_KEPT = 256
# Why 64: the fits of the last few plates asked about within a decision or
# two (the oldest goes first).
_FITS_KEPT = 64
# Why 0.3 s: a finger's push wavers (model C's tremor), and a reading or two
# under the bar in the middle of it is the same push.
PRESS_GAP_S = 0.3
# Why 0.5 s: a push rises within 30-200 ms (cross-check models); the plate's
# level before it is read from the half second before each reading.
PRESS_RISE_S = 0.5
# Why 3: a finger pushes on the cubes it takes several times harder than
# the hands resting on the level pull at it (models C and E: pushes of 0.5-12
# and 0.3-3 g against 0.02-1.5 g); hands shaking the plate (our simulator:
# 1-4 g rms either way) pull about as hard as they push. At 2, one of our
# simulator's shakes read as a push that let go 1.6 s before the last cube
# left (models B and C gained 3 removals at 2).
PRESS_OVER_HANDS = 3.0


class LoadCoverage:
    """Which stream times had a load reading shortly before: are the load cells there?

    Filled with every reading's time as it is fed (not as the evidence is
    decided), so the answer for a time does not depend on how far ahead of
    the piezo stream the load stream was fed.

    Parameters
    ----------
    max_gap_s : float
        A time is covered when a reading lies at most this long before it.
    """

    def __init__(self, max_gap_s: float) -> None:
        self.max_gap_s = float(max_gap_s)
        self.first_s: float | None = None
        self.last_s = -np.inf
        self._gaps: deque[tuple[float, float]] = deque(maxlen=_GAPS_KEPT)

    def add(self, t_s: np.ndarray) -> None:
        """Note the times of new readings (increasing, after the earlier ones)."""
        if t_s.size == 0:
            return
        if self.first_s is None:
            self.first_s = float(t_s[0])
            times = t_s
        else:
            times = np.concatenate([[self.last_s], t_s])
        for i in np.flatnonzero(np.diff(times) > self.max_gap_s):
            self._gaps.append((float(times[i]), float(times[i + 1])))
        self.last_s = max(self.last_s, float(t_s[-1]))

    def present(self, t_s: float) -> bool:
        """True if a reading lies in ``[t_s - max_gap_s, t_s]``."""
        if self.first_s is None or t_s < self.first_s or t_s - self.last_s > self.max_gap_s:
            return False
        return not any(a + self.max_gap_s < t_s < b for a, b in self._gaps)


@dataclass(frozen=True)
class Press:
    """A finger's push on a plate: when it began and when it let go (stream seconds)."""

    began_s: float
    let_go_s: float


class LoadHistory:
    """The last few seconds of load readings, to ask how far a plate swung.

    Readings may be fed ahead of the decisions that ask about them (the
    load stream can run seconds ahead of the piezo stream); they are let go
    by the asker's clock (:meth:`forget_before`), so an answer never
    depends on how far ahead they came. Past ``keep_s`` plus
    ``_AHEAD_CAP_S`` behind the newest reading they go anyway.

    Parameters
    ----------
    keep_s : float
        How much history before the asker's clock is kept.
    """

    def __init__(self, keep_s: float) -> None:
        self.keep_s = float(keep_s)
        self._t = np.zeros(0)
        self._v = np.zeros((0, 0))
        self._ok = np.zeros((0, 0), dtype=bool)
        self._fresh = np.zeros((0, 0), dtype=bool)
        # Whether the times never go back: then the readings of a span are
        # found by bisection (``_rows``), not by comparing every time kept.
        self._in_order = True
        # The last ring fits of :meth:`change`, by their readings' bytes: a stop
        # weighed again asks :meth:`ring_change` of the same readings at once,
        # and the fusion asks :meth:`change` of the same last readings of a
        # plate again and again (a sixth of the fits on our recordings).
        self._fits: dict[bytes, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}

    def add(
        self, t_s: np.ndarray, values: np.ndarray, valid: np.ndarray,
        fresh: np.ndarray | None = None,
    ) -> None:
        """Append readings (times increasing).

        ``valid``: readings a window may use (a slow converter's last one
        held); ``fresh``: the ones its converter made then (default: ``valid``).
        """
        if t_s.size == 0:
            return
        new = valid.copy() if fresh is None else fresh & valid
        # (A NaN time compares false: the history is then taken as out of order.)
        in_order = bool(np.all(t_s[1:] >= t_s[:-1])) and not math.isnan(float(t_s[0]))
        if self._t.size == 0:
            self._in_order = in_order
            self._t, self._v, self._ok = t_s.copy(), values.astype(float), valid.copy()
            self._fresh = new
        else:
            self._in_order = self._in_order and in_order and bool(t_s[0] >= self._t[-1])
            self._t = np.concatenate([self._t, t_s])
            self._v = np.concatenate([self._v, values.astype(float)])
            self._ok = np.concatenate([self._ok, valid])
            self._fresh = np.concatenate([self._fresh, new])
        self._drop_before(self._t[-1] - self.keep_s - _AHEAD_CAP_S)

    def forget_before(self, now_s: float) -> None:
        """Let go of the readings older than ``keep_s`` before ``now_s`` (the asker's clock).

        On a grid of whole seconds, so that the arrays are cut once a second
        of stream, not at every question.
        """
        self._drop_before(np.floor((now_s - self.keep_s) / _FORGET_GRID_S) * _FORGET_GRID_S)

    def _drop_before(self, t_s: float) -> None:
        if self._t.size == 0 or self._t[0] >= t_s:
            return
        keep = self._rows(t_s, np.inf)
        self._t, self._v, self._ok = self._t[keep], self._v[keep], self._ok[keep]
        self._fresh = self._fresh[keep]

    def _rows(
        self, t0_s: float, t1_s: float, *, after_t0: bool = False, before_t1: bool = False
    ) -> slice | np.ndarray:
        """The rows with ``t0 <= t <= t1`` (``t0 < t``: ``after_t0``; ``t < t1``: ``before_t1``).

        A slice found by bisection while the times are in order, else a
        mask: either picks the same rows in the same order. (The fusion asks
        about a fraction of a second of the seconds kept, many times a second.)
        """
        if not self._in_order:
            lo = self._t > t0_s if after_t0 else self._t >= t0_s
            hi = self._t < t1_s if before_t1 else self._t <= t1_s
            return lo & hi
        if math.isnan(t0_s) or math.isnan(t1_s):
            return slice(0, 0)  # no time compares true with NaN
        a = int(self._t.searchsorted(t0_s, side="right" if after_t0 else "left"))
        b = int(self._t.searchsorted(t1_s, side="left" if before_t1 else "right"))
        return slice(a, max(a, b))

    def _last_rows(self, t_s: float, count: int) -> np.ndarray:
        """Indices of the last ``count`` (or fewer) readings at or before ``t_s``."""
        if not self._in_order:
            return np.flatnonzero(self._t <= t_s)[-count:]
        end = 0 if math.isnan(t_s) else int(self._t.searchsorted(t_s, side="right"))
        return np.arange(max(0, end - count), end)

    def reading_interval_s(self, t_s: float) -> float:
        """The converter's time between readings, over the second before ``t_s`` (NaN: too few)."""
        times = self._t[self._rows(t_s - _INTERVAL_SPAN_S, t_s)]
        if times.size < 3:
            return float("nan")
        return float(orderstats.median_of(np.diff(times).tolist()))

    def noise(self, level: int, t0_s: float, t1_s: float) -> float:
        """Spread of ``level``'s readings in ``[t0, t1]`` (a sigma), NaN with too few.

        From the median of the first differences, so that a step or a
        strike within the span moves it little.
        """
        rows = self._rows(t0_s, t1_s)
        ok = self._ok[rows, level]
        if ok.sum() < _NOISE_READINGS:
            return float("nan")
        diffs = np.abs(np.diff(self._v[rows, level][ok]))
        return float(_MAD_SIGMA * orderstats.median(diffs) / np.sqrt(2.0))

    def fresh_readings(self, level: int, t0_s: float, t1_s: float) -> int:
        """How many readings ``level``'s converter made in ``[t0, t1]`` (held ones not counted)."""
        return int(np.count_nonzero(self._fresh[:, level] & (self._t >= t0_s) & (self._t <= t1_s)))

    def spread(self, level: int, t0_s: float, t1_s: float, readings: int = 3) -> float:
        """Standard deviation of ``level``'s readings in ``[t0, t1]`` (NaN: under ``readings``).

        Unlike :meth:`noise`, readings that follow one another closely (a
        converter's filter settling over several) count at their full
        spread; a step or a strike within the span widens it.
        """
        rows = self._rows(t0_s, t1_s)
        ok = self._ok[rows, level]
        if ok.sum() < max(2, readings):
            return float("nan")
        return float(np.std(self._v[rows, level][ok]))

    def overshoot(self, level: int, t0_s: float, t1_s: float, before: float, after: float) -> float:
        """How far ``level``'s readings in ``[t0, t1]`` went beyond both ``before`` and ``after``.

        A plate pressed smoothly from one load to another reads between
        them; one a cube landed on rings past them. NaN with no readings.
        """
        low, high = self.extent(level, t0_s, t1_s)
        if not np.isfinite(low):
            return float("nan")
        return max(0.0, high - max(before, after), min(before, after) - low)

    def middle_range(self, level: int, t0_s: float, t1_s: float) -> float:
        """How far apart the 10th and 90th percentiles of ``level``'s readings in ``[t0, t1]`` lie.

        A plate that keeps swinging spreads most of its readings that far; a
        strike's spike of a reading or two, and a step, leave it at the noise.
        NaN with fewer than three readings.
        """
        rows = self._rows(t0_s, t1_s)
        ok = self._ok[rows, level]
        if ok.sum() < 3:
            return float("nan")
        readings = self._v[rows, level][ok][np.newaxis, :]
        lo = orderstats.percentile_along_1(readings, 10.0)[0]
        hi = orderstats.percentile_along_1(readings, 90.0)[0]
        return float(hi - lo)

    def crossed_at(
        self, level: int, t0_s: float, t1_s: float, before: float, after: float,
        stay_s: float = 0.0,
    ) -> float | None:
        """When ``level``'s load crossed from ``before`` to ``after`` within ``[t0, t1]``, to stay.

        The moment it passed half-way, interpolated between the two readings
        either side, the first time it then stayed past half-way for
        ``stay_s`` (or to ``t1``); None when no two valid readings in the
        span do.
        """
        if self._t.size == 0 or before == after:
            return None
        during = np.flatnonzero(self._ok[:, level] & (self._t >= t0_s) & (self._t <= t1_s))
        if during.size < 2:
            return None
        mid = 0.5 * (before + after)
        v = self._v[during, level].astype(np.float64)
        past = (v - mid) * np.sign(after - before) > 0
        t = self._t[during]
        back = np.flatnonzero(~past)
        for k in np.flatnonzero(~past[:-1] & past[1:]).tolist():
            later = back[back > k]
            if later.size == 0 or t[later[0]] > t[k + 1] + stay_s:
                break
        else:
            return None
        t_a, t_b = float(self._t[during[k]]), float(self._t[during[k + 1]])
        v_a, v_b = float(v[k]), float(v[k + 1])
        return t_a + (t_b - t_a) * (mid - v_a) / (v_b - v_a)

    def presses(
        self, level: int, t0_s: float, t1_s: float, before: float, after: float, press: float,
    ) -> list[Press]:
        """Hard presses on ``level`` in ``[t0, t1]`` that let go, in a fall ``before -> after``.

        Loads are measured as progress of the fall (0 at ``before``, 1 at
        ``after``). A press is a run of readings further back than the
        plate's level just before it (the most progress within
        ``PRESS_RISE_S``) by more than ``press`` (a finger pushing on the
        cubes it is about to take); readings less than ``PRESS_GAP_S``
        apart are one run. It let go when the load came back to that level,
        interpolated between the two readings either side; a press that
        never did by ``t1`` is left out. None stand out when hands pulled
        the plate the other way, past ``after``, by more than a
        ``PRESS_OVER_HANDS``-th of the hardest push: hands shaking it, not
        fingers pushing on cubes.
        """
        if self._t.size == 0 or before == after:
            return []
        during = np.flatnonzero(self._ok[:, level] & (self._t >= t0_s) & (self._t <= t1_s))
        if during.size < 2:
            return []
        t = self._t[during]
        progress = (self._v[during, level].astype(np.float64) - before) / (after - before)
        if -progress.min() < PRESS_OVER_HANDS * (progress.max() - 1.0):
            return []
        out: list[Press] = []
        i = 0
        while i < t.size:
            rest = float(progress[np.searchsorted(t, t[i] - PRESS_RISE_S): i + 1].max())
            if not progress[i] < rest - press:
                i += 1
                continue
            j = last = i
            while j < t.size and (progress[j] < rest - press or t[j] - t[last] < PRESS_GAP_S):
                if progress[j] < rest - press:
                    last = j
                j += 1
            back = np.flatnonzero(progress[last:] >= rest)
            if back.size == 0:
                break
            k = int(last + back[0])
            p_a, p_b = float(progress[k - 1]), float(progress[k])
            let_go = float(t[k - 1] + (t[k] - t[k - 1]) * (rest - p_a) / (p_b - p_a))
            out.append(Press(float(t[i]), let_go))
            i = k
        return out

    def extent(self, level: int, t0_s: float, t1_s: float) -> tuple[float, float]:
        """Lowest and highest of ``level``'s readings in ``[t0, t1]`` (NaN, NaN: none)."""
        rows = self._rows(t0_s, t1_s)
        ok = self._ok[rows, level]
        if not ok.any():
            return float("nan"), float("nan")
        v = self._v[rows, level][ok]
        return float(v.min()), float(v.max())

    def held_extent(
        self, level: int, t0_s: float, t1_s: float, held_s: float
    ) -> tuple[float, float]:
        """Lowest and highest load ``level`` held ``held_s`` in ``[t0, t1]``, from where it was.

        Medians of each run of readings spanning ``held_s`` (one reading at
        the least), against the median of the half second before ``t0``: a
        strike's spike or a ringing plate's swing does not last that long
        one way. ``(NaN, NaN)`` with too few readings to tell.
        """
        before = self._base_rows(t0_s, -np.inf)
        before_ok = self._ok[before, level]
        during = self._rows(t0_s, t1_s)
        during_ok = self._ok[during, level]
        if before_ok.sum() < 3 or not during_ok.any():
            return float("nan"), float("nan")
        base = float(orderstats.median_of(self._v[before, level][before_ok].tolist()))
        values = self._v[during, level][during_ok] - base
        interval = self.reading_interval_s(t0_s)
        run = 1 if not np.isfinite(interval) else max(1, int(round(held_s / interval)))
        if values.size < run:
            return float("nan"), float("nan")
        held = [orderstats.median_of(values[i : i + run].tolist())
                for i in range(values.size - run + 1)]
        return float(min(held)), float(max(held))

    def last_held_near(
        self, level: int, t0_s: float, t1_s: float, value: float, within: float, held_s: float
    ) -> float:
        """When ``level`` last held ``value`` (give or take ``within``) ``held_s`` in ``[t0, t1]``.

        The time of the last reading of the last such run (its median
        within reach of ``value``); NaN when it never did.
        """
        ok = self._ok[:, level] & (self._t >= t0_s) & (self._t <= t1_s)
        values, times = self._v[ok, level], self._t[ok]
        interval = self.reading_interval_s(t1_s)
        run = 1 if not np.isfinite(interval) else max(1, int(round(held_s / interval)))
        for i in range(values.size - run, -1, -1):
            if abs(orderstats.median_of(values[i : i + run].tolist()) - value) <= within:
                return float(times[i + run - 1])
        return float("nan")

    def level_near(self, level: int, t0_s: float, t1_s: float) -> float:
        """Median of ``level``'s readings in ``[t0, t1]`` (NaN: none)."""
        if self._t.size == 0:
            return float("nan")
        ok = self._ok[:, level] & (self._t >= t0_s) & (self._t <= t1_s)
        if not ok.any():
            return float("nan")
        return float(orderstats.median(self._v[ok, level]))

    def swing(
        self,
        level: int,
        t0_s: float,
        t1_s: float,
        base_from_s: float = -np.inf,
        *,
        from_s: float | None = None,
    ) -> float:
        """Largest distance of ``level``'s readings in ``[t0, t1]`` from its median just before.

        The median is of the readings in the half second before ``t0``, none
        before ``base_from_s``. With ``from_s``, only the readings from then
        on are measured (against the same median). NaN when there are too
        few valid readings to tell.
        """
        if self._t.size == 0:
            return float("nan")
        before = self._base_rows(t0_s, base_from_s)
        before_ok = self._ok[before, level]
        start = t0_s if from_s is None else max(t0_s, from_s)
        during = self._rows(start, t1_s)
        during_ok = self._ok[during, level]
        if before_ok.sum() < 3 or not during_ok.any():
            return float("nan")
        # A median of a plain list: the same value as numpy's, far cheaper for
        # a half second of readings (asked for every plate a drop may concern).
        base = float(orderstats.median_of(self._v[before, level][before_ok].tolist()))
        return float(np.max(np.abs(self._v[during, level][during_ok] - base)))

    def change(
        self, level: int, t0_s: float, t1_s: float, tail_s: float, base_from_s: float = -np.inf
    ) -> float:
        """Load at ``t1``, less the level before ``t0`` (as in :meth:`swing`).

        The load at ``t1`` is the mean of the last ``tail_s`` of readings, or,
        while the plate still rings, the load its ringing settles to
        (:func:`~dsp.detect.ringing.oscillation_fit` of its last readings):
        a plate ringing by several cubes has a mean over a few readings
        that is off by a cube.
        """
        if self._t.size == 0:
            return float("nan")
        before_rows = self._base_rows(t0_s, base_from_s)
        tail_rows = self._rows(t1_s - tail_s, t1_s, after_t0=True)
        before = self._ok[before_rows, level]
        tail = self._ok[tail_rows, level]
        if not (np.count_nonzero(before) >= 3 and tail.any()):
            return float("nan")
        at = float("nan")
        last = self._last_rows(t1_s, RING_FIT_READINGS)
        if last.size == RING_FIT_READINGS and self._ok[last, level].all():
            window = self._v[last, level][None, :]
            key = window.tobytes()
            fit = self._fits.get(key)
            if fit is None:
                fit = self._fits[key] = oscillation_fit(window)
                if len(self._fits) > _FITS_KEPT:
                    del self._fits[next(iter(self._fits))]
            settles, residual, fits = fit
            if fits[0] and residual[0] < RING_FIT_RESIDUAL:
                at = settles[0]
        if not np.isfinite(at):
            # np.mean's sum over the count, without its wrapper (asked 10k times a replay).
            readings = self._v[tail_rows, level][tail]
            at = float(np.add.reduce(readings) / readings.size)
        return float(at - float(orderstats.median(self._v[before_rows, level][before])))

    def changes(
        self, levels: list[int], t0_s: float, t1_s: float, tail_s: float,
        base_from_s: float = -np.inf,
    ) -> np.ndarray:
        """:meth:`change` of several levels (NaN where a level has too few readings)."""
        return np.array(
            [self.change(level, t0_s, t1_s, tail_s, base_from_s) for level in levels], dtype=float
        )

    def ring_change(
        self, level: int, t0_s: float, t1_s: float, noise: float, base_from_s: float = -np.inf
    ) -> tuple[float, float] | None:
        """Where a plate still ringing at ``t1`` settles, less its level before ``t0``.

        Returns the change and how far apart the fits of its last
        ``RING_FIT_READINGS`` readings, whole and each end left off, put
        the load (``ringing.fitted_windows``); None unless all three fit one
        decaying oscillation, ``noise`` (a sigma, counts) allowed for.
        """
        if self._t.size == 0:
            return None
        last = self._last_rows(t1_s, RING_FIT_READINGS)
        before = self._base_rows(t0_s, base_from_s)
        before_ok = self._ok[before, level]
        if last.size < RING_FIT_READINGS or not self._ok[last, level].all() or before_ok.sum() < 3:
            return None
        window = self._v[last, level][None, :]
        good, settles, apart, _ = fitted_windows(
            window, np.array([noise]), self._fits.get(window.tobytes())
        )
        if not good[0]:
            return None
        return (
            float(settles[0] - orderstats.median(self._v[before, level][before_ok])),
            float(apart[0]),
        )

    def _base_rows(self, t0_s: float, base_from_s: float) -> slice | np.ndarray:
        """The rows of the half second before ``t0_s`` (none before ``base_from_s``)."""
        return self._rows(max(t0_s - SWING_BASE_S, base_from_s), t0_s, before_t1=True)
