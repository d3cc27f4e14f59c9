"""Shaking that moves every load cell at once, taken out of the load rows.

A tower standing on something that shakes (a train's or a boat's floor, a
table leant on, a washing machine next door) is accelerated as a whole:
every plate, with its cubes, weighs ``M_k (1 + a(t)/g)`` on its cell, and
each cell reads the same ``a(t)`` scaled by its own load and sensitivity.
Vertical accelerations of a few hundredths of ``g`` swing a 6 g plate by a
third of a cube's weight, several times a second, so that no window of
readings holds still and no cube's step stands out (cross-check model AM,
docs/crosscheck.md run 73). A cube's step, a strike's spike or a hand is on
one plate or a few; the shaking is on all of them in proportion.

:class:`CommonShakeCanceller` finds such shaking from the rows themselves:
the channels' first differences (each winsorised at ``WINSOR_SIGMAS`` of
its typical difference over the last blocks, so that a step or a strike
weighs as little as one noisy reading) move together while the tower
shakes. When the largest eigenvalue of their correlations has held ``ENGAGE_SHARE`` of the sum for
``ENGAGE_HOLD_S`` (at the stream's start at once; until it falls under
``DISENGAGE_SHARE``), the common shaking of a row is the median over
the channels of their differences divided by their shares of it (the
covariance's top eigenvector, scaled: a step or a strike on one plate, or
on three, does not move the median), leakily integrated (``LEAK_TAU_S``: a
slow drift is no shaking), and each channel's share of it is subtracted
from its reading. Otherwise the rows pass untouched, so a still tower reads
exactly as before.

Parameters are updated every ``BLOCK_S`` of rows (counted from the stream's
first row, at least 4; eight times as often at first), so that rows fed in
blocks of any size give the same result. Only
rows in which every channel is valid and fresh are weighed (one conversion
of each cell at one time). While modules are lifted the shaking, once
found, is told by the ``MIN_LIVE_CHANNELS`` or more cells still reading and
taken out of theirs; with fewer, or a slow converter among fast ones, the
cancelling stops until ``WARMUP_ROWS`` whole rows have passed.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from dsp.detect.biquad import linear_filter
from dsp.detect.orderstats import nanmedian_columns

# Why 1 s: engaging waits 5 s anyway, and each update (the correlations'
# eigenvalue, the bounds) costs as much as a second of weighing; at 0.4 s
# (computing the shares every time) detect took 10-25 % longer on a still
# tower, now about 7 %.
BLOCK_S = 1.0
# Why 5 s: a car's shaking (1-20 Hz) fills it many times over, and a
# landing's step, one winsorised row, weighs nothing in it.
COVARIANCE_TAU_S = 5.0
# Why 2 s: slower than any shaking worth taking out, faster than a drift.
LEAK_TAU_S = 2.0
# Why 0.8 / 0.6: model AM's moving trains held 0.82-1.00 throughout; a
# tower on a still table, 0.1-0.2; knocks, footsteps and a hand leaning on
# the table reached 0.80-0.93, but for 4 s at most (ENGAGE_HOLD_S).
ENGAGE_SHARE = 0.8
DISENGAGE_SHARE = 0.6
ENGAGE_HOLD_S = 5.0
# Why 16: from fewer rows than twice the channels, eight independent channels'
# correlations hold half their sum or more by chance.
WARMUP_ROWS = 16
EARLY_BLOCKS = 2
WINSOR_SIGMAS = 3.0
CLIP_BLOCKS = 5
# Why 3: the median of three still outvotes one cube's step among them.
MIN_LIVE_CHANNELS = 3
POWER_STEPS = 4
_ONE = np.array([1.0])


class CommonShakeCanceller:
    """Removes shaking common to every load channel (see the module docstring).

    Parameters
    ----------
    n_channels : int
    rate_hz : float
        The rows' rate (the processors' rate).
    """

    def __init__(self, *, n_channels: int, rate_hz: float) -> None:
        if n_channels < 3:
            raise ValueError(f"common shaking needs 3 load channels or more, not {n_channels}")
        self.n_channels = int(n_channels)
        self.rate_hz = float(rate_hz)
        dt = 1.0 / self.rate_hz
        self._weight = dt / COVARIANCE_TAU_S
        self._leak = float(np.exp(-dt / LEAK_TAU_S))
        self._leak_filter = np.array([1.0, -self._leak])  # y[n] = leak y[n-1] + x[n]
        self.block_rows = max(4, round(BLOCK_S * self.rate_hz))
        self._forget_rows = round(2 * LEAK_TAU_S * self.rate_hz)
        n = self.n_channels
        self._cov = np.zeros((n, n))
        self._cov_rows = 0  # whole rows weighed into the covariance
        self._clip = np.full(n, np.inf)  # winsorising bounds for this block
        self._block_abs: list[np.ndarray] = []  # the block's differences so far, unsigned
        self._typical: deque[np.ndarray] = deque(maxlen=CLIP_BLOCKS)  # the last blocks' own
        self._gain = np.zeros(n)  # each channel's share of the common shaking
        self._engaged = False
        self._integral = np.zeros(1)  # the leaky integral of the common shaking
        self._displacement = np.zeros(n)  # each channel's own, leakily integrated alike
        self._previous: np.ndarray | None = None  # the last row's readings (live ones)
        self._previous_live = np.zeros(n, dtype=bool)  # which channels were live in it
        self._pending: list[np.ndarray] = []  # whole rows not weighed yet
        self._pending_previous = np.zeros(n)  # the whole row before them
        self._whole_rows = 0  # whole rows in a row since the last broken one
        self._run_sum = np.zeros(n)  # their sum
        self._rows_seen = 0
        self.engaged_rows = 0  # rows the shaking was taken out of
        self.cleaned = np.zeros(0, dtype=bool)  # which rows of the last block were cleaned
        self.together = 0.0  # how much the channels move together (1: as one)
        self._coherence = CoherenceHold(round(ENGAGE_HOLD_S * self.rate_hz))

    @property
    def engaged(self) -> bool:
        """Whether the rows are being cleaned now."""
        return self._engaged

    def process(self, values: np.ndarray, valid: np.ndarray, fresh: np.ndarray) -> np.ndarray:
        """The rows ``(m, n)`` with the common shaking taken out.

        While the tower is not shaking, ``values`` itself is given back.
        Which rows were cleaned is ``cleaned`` afterwards.
        """
        live = np.asarray(valid, bool) & np.asarray(fresh, bool)
        whole = np.all(live, axis=1)
        m = whole.size
        self.cleaned = np.zeros(m, dtype=bool)
        if (
            not self._engaged and self._previous is not None and self._previous_live.all()
            and self._rows_seen + m < self._next_update() and whole.all()
        ):
            # Still, and no block ends here: the rows wait to be weighed at its
            # end (one product for the block, not one for each message).
            if not self._pending:
                self._pending_previous = self._previous
            self._pending.append(values)
            self._previous = values[-1]
            self._whole_rows += m
            self._run_sum += values.sum(axis=0)
            self._rows_seen += m
            return values
        self._weigh_pending()
        values = np.asarray(values, dtype=np.float64)
        out = values.copy()
        start = 0
        while start < m:
            # A segment ends at the next block boundary: the parameters hold within it.
            update = self._next_update()
            stop = min(m, start + update - self._rows_seen)
            self._segment(values[start:stop], live[start:stop], out[start:stop],
                          self.cleaned[start:stop])
            self._rows_seen += stop - start
            if self._rows_seen == update:
                self._update_parameters()
            start = stop
        self.engaged_rows += int(np.count_nonzero(self.cleaned))
        return out

    def _next_update(self) -> int:
        """The row count at which the parameters are next updated.

        Every eighth of a block over the stream's first ``EARLY_BLOCKS`` blocks:
        the tare, in the first second, must already read a shaken tower
        cleaned.
        """
        early = max(1, self.block_rows // 8)
        if self._rows_seen < EARLY_BLOCKS * self.block_rows:
            return (self._rows_seen // early + 1) * early
        return (self._rows_seen // self.block_rows + 1) * self.block_rows

    def _segment(self, x: np.ndarray, live: np.ndarray, out: np.ndarray,
                 cleaned: np.ndarray) -> None:
        whole = np.all(live, axis=1)
        i = 0
        while i < x.shape[0]:
            if whole[i] and (self._previous is None or self._previous_live.all()):
                j = i
                while j < x.shape[0] and whole[j]:
                    j += 1
                self._whole_run(x[i:j], out[i:j], cleaned[i:j])
                i = j
            else:
                cleaned[i] = self._odd_row(x[i], live[i], out[i])
                i += 1

    def _odd_row(self, x: np.ndarray, live: np.ndarray, out: np.ndarray) -> bool:
        """A row with channels missing (modules lifted), or the first whole one after.

        Whether it was cleaned.
        """
        previous = self._previous
        both = (live & self._previous_live) if previous is not None else np.zeros_like(live)
        if self._engaged and previous is not None and int(both.sum()) >= MIN_LIVE_CHANNELS:
            # The shaking goes on while modules are off: the cells still in
            # place tell it (their shares are known), and the plate a hand
            # takes cubes from is read cleaned.
            common = _common((x[both] - previous[both])[None, :], self._gain[both])
            self._integral = self._leak * self._integral + common[0]
            out[live] -= self._gain[live] * self._integral[0]
            self._previous = np.where(live, x, previous)
            self._previous_live = live.copy()
            return True
        # Too few cells to tell the shaking by, or none to take out: nothing
        # weighed, nothing taken out, start again.
        self._whole_rows = 0
        self._run_sum[:] = 0.0
        self._integral[:] = 0.0
        self._displacement[:] = 0.0
        self._engaged = False
        if live.all():
            self._previous = x.copy()  # a whole row begins a new run
            self._previous_live = live.copy()
            self._whole_rows = 1
            self._run_sum += x
        else:
            self._previous = None
            self._previous_live = np.zeros_like(live)
        return False

    def _whole_run(self, x: np.ndarray, out: np.ndarray, cleaned: np.ndarray) -> None:
        """Whole rows in a row, cleaned into ``out`` while engaged (marked in ``cleaned``)."""
        previous = x[0] if self._previous is None else self._previous
        diffs = np.diff(np.vstack([previous[None, :], x]), axis=0)
        out_used, cleaned_used = out, cleaned
        if self._previous is None:
            # The run's first row has no difference.
            diffs, out_used, cleaned_used = diffs[1:], out[1:], cleaned[1:]
        self._previous = x[-1].copy()
        self._previous_live[:] = True
        self._whole_rows += x.shape[0]
        self._run_sum += x.sum(axis=0)
        if diffs.shape[0] == 0:
            return
        if self._engaged:
            common = _common(diffs, self._gain)
            integral, _ = linear_filter(_ONE, self._leak_filter, common, 0,
                                        (self._leak * self._integral)[None, :])
            self._integral = integral[-1].copy()
            out_used -= integral * self._gain
            cleaned_used[:] = True
        self._weigh(diffs)

    def _weigh_pending(self) -> None:
        if not self._pending:
            return
        rows = np.vstack([self._pending_previous[None, :], *self._pending]).astype(np.float64)
        self._pending.clear()
        self._weigh(np.diff(rows, axis=0))

    def _weigh(self, diffs: np.ndarray) -> None:
        self._block_abs.append(np.abs(diffs))
        displaced, _ = linear_filter(_ONE, self._leak_filter, diffs, 0,
                                     (self._leak * self._displacement)[None, :])
        self._displacement = displaced[-1].copy()
        clipped = np.clip(diffs, -self._clip, self._clip)
        r = clipped.shape[0]
        keep = (1.0 - self._weight) ** np.arange(r - 1, -1, -1)
        self._cov = ((1.0 - self._weight) ** r) * self._cov + self._weight * np.einsum(
            "i,ij,ik->jk", keep, clipped, clipped)
        self._cov_rows += r

    def _update_parameters(self) -> None:
        self._weigh_pending()
        if self._cov_rows < WARMUP_ROWS:
            return
        spread = np.sqrt(np.maximum(np.diag(self._cov), 0.0))
        if self._block_abs:
            # The bounds from the blocks' own differences (their median, as a
            # standard deviation, the median over the last ``CLIP_BLOCKS``
            # blocks): they follow shaking that sets in within a few blocks,
            # where bounds from the covariance, itself weighed within them,
            # would take many; a knock or footsteps for a second are clipped.
            self._typical.append(1.4826 * nanmedian_columns(np.vstack(self._block_abs)))
            self._block_abs.clear()
            typical = nanmedian_columns(np.vstack(self._typical))
            self._clip = np.where(typical > 0, WINSOR_SIGMAS * typical, np.inf)
        together = together_share(self._cov)
        self.together = together
        shaking = self._coherence.shaking(together, self._rows_seen, engaged=self._engaged)
        if shaking and self._whole_rows >= WARMUP_ROWS:
            start = self._gain if np.any(self._gain) else spread
            direction, top = top_eigen(self._cov, start)
            self._gain = direction * np.sqrt(max(top, 0.0))
            if not self._engaged:
                # Where the shaking has the plates now: early in a run of
                # whole rows, each channel's reading less its mean since the
                # run began (the shaking is as much up as down); the leaky
                # integral of its differences alone would carry the shaking
                # of the run's first row, dying away over seconds like a
                # drift. Later, that integral, whose start has died away and
                # which forgets the cubes that came long ago.
                assert self._previous is not None
                if self._whole_rows < self._forget_rows:
                    self._displacement = self._previous - self._run_sum / self._whole_rows
                self._integral = _common(self._displacement[None, :], self._gain)[0]
            self._engaged = True
        else:
            self._engaged = False
            self._integral[:] = 0.0


class CoherenceHold:
    """Whether channels that move together shake with what the tower stands on.

    Shaking goes on; a knock on the table, footsteps or a hand leaning on it
    move every cell together for a moment only. So the channels must have
    moved together (their correlations' largest eigenvalue ``ENGAGE_SHARE``
    of the sum or more) for ``hold`` counts of rows or blocks first: unless
    at the stream's start, where the tare must read a shaken tower cleaned.
    Once shaking, it goes on until that share falls under ``DISENGAGE_SHARE``.
    """

    def __init__(self, hold: int) -> None:
        self.hold = int(hold)
        self._since: int | None = None  # when the channels began to move together

    def shaking(self, together: float, now: int, *, engaged: bool) -> bool:
        """Whether the tower shakes, at count ``now``, the channels ``together`` so much."""
        if together < ENGAGE_SHARE:
            self._since = None
        elif self._since is None:
            self._since = now
        if engaged:
            return together >= DISENGAGE_SHARE
        return self._since is not None and (now - self._since >= self.hold or now <= self.hold)


def together_share(cov: np.ndarray) -> float:
    """How much of the channels' correlations their largest eigenvalue holds (1: as one).

    Judged on the correlations, not the covariance: one noisy cell alone
    would hold most of a covariance.
    """
    spread = np.sqrt(np.maximum(np.diag(cov), 0.0))
    live = spread > 0
    scale = np.where(live, spread, 1.0)
    correlation = np.where(np.outer(live, live), cov / np.outer(scale, scale), 0.0)
    return top_eigen(correlation, np.ones(cov.shape[0]))[1] / cov.shape[0]


def top_eigen(matrix: np.ndarray, start: np.ndarray) -> tuple[np.ndarray, float]:
    """The largest eigenvalue of a symmetric positive semi-definite ``matrix`` and its vector.

    By power iteration from ``start``: where it stands well above the rest
    (all that matters here) a few steps find it.
    """
    direction = start / max(float(np.linalg.norm(start)), 1e-300)
    top = 0.0
    for _ in range(POWER_STEPS):
        image = matrix @ direction
        norm = float(np.linalg.norm(image))
        if norm == 0.0:
            return direction, 0.0
        direction = image / norm
        top = float(direction @ matrix @ direction)
    return direction, top


def _common(diffs: np.ndarray, gain: np.ndarray) -> np.ndarray:
    """Per row, the median of the channels' differences scaled by their ``gain``, ``(m, 1)``."""
    safe = np.abs(gain) > 1e-12
    scaled = np.where(safe, diffs / np.where(safe, gain, 1.0), 0.0)
    return np.median(scaled, axis=1, keepdims=True)
