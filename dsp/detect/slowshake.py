"""Slow swaying that moves every load cell at once (a boat's heave), taken out of the rows.

A tower on a boat rises and falls with the swell: waves of 3-12 s lift the
floor with a few hundredths of ``g``, a tenth in a rough sea, and every
plate with its cubes weighs ``M_k (1 + a(t)/g)`` on its cell, as on a
train (:mod:`dsp.detect.commonshake`), but slowly. A 6 g plate then swings
by a third of a cube or more over seconds: a drift that comes back, on
every cell at once. Each window of readings looks still, so the swaying
is read as steps: cubes where none landed, and cube sizes learnt from it.
:class:`~dsp.detect.commonshake.CommonShakeCanceller` does not see it (a
reading's difference from the one before is mostly noise at these
speeds), and could not take it out (its integral of those differences
forgets in 2 s, or would wander with their noise over longer).

:class:`SlowShakeCanceller` finds it on the means of blocks of
``BLOCK_S``: their differences, over ``COVARIANCE_TAU_S``, move together
on every channel while the tower sways (a block with a cube's step or a
strike on any channel, beyond ``OUTLIER_SIGMAS`` of that channel's
typical difference or of its typical stray from the swaying, is not
weighed). When they have moved as one for
``ENGAGE_HOLD_S`` (:class:`~dsp.detect.commonshake.CoherenceHold`; at
once at the stream's start), and each block's move goes on the way the
last one went (``MIN_PERSISTENCE``: what a faster shaking leaves in the
means jitters instead), each channel's share of the swaying is the
covariance's top eigenvector, and the swaying of each row is read from
the levels themselves: the weighted median over the channels of their
reading less their own level, divided by their share (a cube's step on one
plate, or on three, does not move it). Each channel's own level is the
median of its block's readings with the swaying taken out, so that it
follows the cubes that land within a block. Each channel's level starts
from its reading when the swaying is found, so that the rows go on from
there with no step on every cell at once: where the swaying had the
plates then stays in them, the same ever after, a step in no window.

Parameters change at block boundaries counted from the stream's first
row, so rows fed in blocks of any size give the same result. Rows with
too few channels reading (modules lifted) are cleaned from the cells still
in place, three or more. It reads the rows as the device sent them, before
``commonshake``: after it, what a train's canceller leaves passed for
swaying (cross-check model AM, docs/crosscheck.md run 74).
"""

from __future__ import annotations

from collections import deque

import numpy as np

from dsp.detect.commonshake import (
    DISENGAGE_SHARE,
    CoherenceHold,
    together_share,
    top_eigen,
)
from dsp.detect.orderstats import nanmedian_columns

# Why a quarter second: a swell's period is 3-12 s, so a block's mean
# follows it; 20 readings at 80 a second leave a fifth of one reading's
# noise in it, against the several hundred counts a block moves while
# the tower sways.
BLOCK_S = 0.25
# Why 30 s: several waves, and the shares follow the cubes that land
# (each plate's share is its load).
COVARIANCE_TAU_S = 30.0
# Why 4: a block mean's difference with a cube's step in it stands tens of
# typical differences out; the swaying's own stay within 2-3.
OUTLIER_SIGMAS = 4.0
TYPICAL_BLOCKS = 40
# Why a fifth: each plate's share of the swaying is its load, and a cube
# changes a light plate's by a tenth; a block whose channels stray from the
# swaying by less than a fifth of it more is still weighed (its share
# learnt anew), where a bound on the strays alone left out the swell's
# fastest moves after every cube.
SHARE_SLACK = 0.2
# Why 8 (2 s), and every block judged over the first 20 (5 s): the swaying
# must be found while the tare is read; a swell's quarter seconds move as
# one from the first.
WARMUP_BLOCKS = 8
EARLY_BLOCKS = 20
# Why every fourth block (a second) after that: the correlations'
# eigenvalue and the bounds cost as much as many blocks' weighing, and a
# swell changes over seconds. Judged every block, with every message's
# rows taken in at once, detect took 19 % longer than without this
# canceller; now 12 % (model AN towers 1-8: 83.00 -> 84.78 % right).
UPDATE_BLOCKS = 4
# Why 10 s: a hand leaning on the table, someone sitting down on the bench
# move every cell together slowly for a few seconds; a swell goes on.
ENGAGE_HOLD_S = 10.0
# Why a tenth: a channel with hardly a share of the swaying tells it by
# dividing noise by nearly nothing.
MIN_SHARE = 0.1
MIN_LIVE_CHANNELS = 3
# Why 0: a swell's blocks' moves follow one another (0.3-0.9 on model
# AN's boats, more for long waves alone); a faster shaking's remainder in
# the means alternates (model AM's train: -0.4 to -0.75).
MIN_PERSISTENCE = 0.0


class SlowShakeCanceller:
    """Removes slow swaying common to every load channel (see the module docstring).

    Parameters
    ----------
    n_channels : int
    rate_hz : float
        The rows' rate (the processors' rate).
    """

    def __init__(self, *, n_channels: int, rate_hz: float) -> None:
        if n_channels < MIN_LIVE_CHANNELS:
            raise ValueError(f"slow swaying needs 3 load channels or more, not {n_channels}")
        self.n_channels = int(n_channels)
        self.rate_hz = float(rate_hz)
        self.block_rows = max(2, round(BLOCK_S * self.rate_hz))
        block_s = self.block_rows / self.rate_hz
        self._weight = block_s / COVARIANCE_TAU_S
        hold = round(ENGAGE_HOLD_S / block_s)
        self._coherence = CoherenceHold(hold)
        n = self.n_channels
        # The block being gathered: its rows' sum while every channel read,
        # and its rows and their swaying while cleaning.
        self._filled = 0
        self._wait: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # rows not taken in yet
        self._waiting = 0
        self._sum = np.zeros(n)
        self._whole = True
        self._rows: list[np.ndarray] = []
        self._live: list[np.ndarray] = []
        self._swaying: list[np.ndarray] = []
        self._previous_mean: np.ndarray | None = None
        # How far each channel's block moves, and strays from the swaying
        # (along the shares' top eigenvector), typically: a block moving
        # beyond it on any channel is not weighed, one straying beyond it not
        # into the shares.
        self._direction: np.ndarray | None = None
        self._moves: deque[np.ndarray] = deque(maxlen=TYPICAL_BLOCKS)
        self._strays: deque[np.ndarray] = deque(maxlen=TYPICAL_BLOCKS)
        self._move_bound = np.full(n, np.inf)
        self._stray_bound = np.full(n, np.inf)
        self._cov = np.zeros((n, n))
        self._cov_blocks = 0
        # The same, of the blocks that keep to the swaying: the shares.
        self._share_cov = np.zeros((n, n))
        # The same, of each block's difference with the one before.
        self._lagged = np.zeros((n, n))
        self._weighed_before: np.ndarray | None = None
        self._blocks = 0
        self._engaged = False
        self._gain = np.zeros(n)  # each channel's share of the swaying
        self._level = np.zeros(n)  # each channel's own level, the swaying taken out
        self.together = 0.0
        self.persistence = 0.0  # how much each block's move goes on the last one's way (1: all)
        self.engaged_rows = 0  # rows the swaying was taken out of
        self.cleaned = np.zeros(0, dtype=bool)  # which rows of the last block were cleaned

    @property
    def engaged(self) -> bool:
        """Whether the rows are being cleaned now."""
        return self._engaged

    def process(self, values: np.ndarray, valid: np.ndarray, fresh: np.ndarray) -> np.ndarray:
        """The rows ``(m, n)`` with the slow swaying taken out.

        While the tower does not sway, ``values`` itself is given back.
        Which rows were cleaned is ``cleaned`` afterwards.
        """
        m = len(values)
        if not self._engaged and self._filled + self._waiting + m < self.block_rows:
            # No block ends here: the rows wait for the one that ends it (one
            # pass over the block, not one for each message).
            self._wait.append((values, valid, fresh))
            self._waiting += m
            self.cleaned = np.zeros(m, dtype=bool)
            return values
        if self._wait:
            waiting = self._waiting
            self._wait.append((values, valid, fresh))
            joined = [np.concatenate([w[k] for w in self._wait]) for k in range(3)]
            self._wait.clear()
            self._waiting = 0
            out = self._rows_in(*joined)
            self.cleaned = self.cleaned[waiting:]
            return out[waiting:] if self.cleaned.any() else values
        return self._rows_in(values, valid, fresh)

    def _rows_in(self, values: np.ndarray, valid: np.ndarray, fresh: np.ndarray) -> np.ndarray:
        live = np.asarray(valid, bool) & np.asarray(fresh, bool)
        m = live.shape[0]
        self.cleaned = np.zeros(m, dtype=bool)
        out = values
        start = 0
        while start < m:
            stop = min(m, start + self.block_rows - self._filled)
            x = np.asarray(values[start:stop], dtype=np.float64)
            part_live = live[start:stop]
            if self._engaged:
                if out is values:
                    out = np.array(values, dtype=np.float64)
                out[start:stop], self.cleaned[start:stop] = self._clean(x, part_live)
            self._gather(x, part_live)
            start = stop
        self.engaged_rows += int(np.count_nonzero(self.cleaned))
        return out

    def _gather(self, x: np.ndarray, live: np.ndarray) -> None:
        self._filled += x.shape[0]
        if self._whole and live.all():
            self._sum += x.sum(axis=0)
        else:
            self._whole = False
        if self._engaged:
            self._rows.append(x)
            self._live.append(live)
        if self._filled == self.block_rows:
            self._end_block()

    def _clean(self, x: np.ndarray, live: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        swaying, ok = read_swaying(x - self._level, live, self._gain)
        self._swaying.append(swaying)
        return x - np.where(live, swaying[:, None] * self._gain, 0.0), ok

    def _end_block(self) -> None:
        self._blocks += 1
        whole, mean = self._whole, self._sum / self.block_rows
        self._filled, self._whole = 0, True
        self._sum = np.zeros(self.n_channels)
        if self._rows:
            self._follow_levels()
        if not whole:
            self._previous_mean = None  # no difference across a lift
            self._weighed_before = None
            return
        if self._previous_mean is not None:
            self._weigh(mean - self._previous_mean)
        self._previous_mean = mean
        if self._cov_blocks < WARMUP_BLOCKS or not self._updates_now():
            return
        self.together = together_share(self._cov)
        if self.together < DISENGAGE_SHARE and not self._engaged:
            # Nothing sways: no shares are read, and every block weighed
            # goes into them (judging each block's strays cost a tenth of
            # detect's time on every still tower).
            self._direction = None
            return
        start = self._direction if self._direction is not None else np.ones(self.n_channels)
        self._direction, share_top = top_eigen(self._share_cov, start)
        if not self._coherence.shaking(self.together, self._blocks, engaged=self._engaged):
            self._engaged = False
            return
        # Swaying is slow: each block's move goes on the way the last one
        # went. What is left of a faster shaking in the blocks' means
        # jitters from block to block instead (cross-check model AM's
        # train: -0.4 to -0.75, its rows made worse when taken out).
        start = self._gain if np.any(self._gain) else np.ones(self.n_channels)
        direction, top = top_eigen(self._cov, start)
        self.persistence = float(direction @ self._lagged @ direction) / max(top, 1e-300)
        if not self._engaged and self.persistence < MIN_PERSISTENCE:
            return
        self._gain = self._direction * np.sqrt(max(share_top, 0.0))
        if not self._engaged:
            # From where the plates are now: the rows go on from there, with
            # no step on every cell at once (where the swaying had them
            # stays in them, the same ever after).
            self._level = mean.copy()
        self._engaged = True

    def _updates_now(self) -> bool:
        """Whether the block just ended updates the parameters: every one over the
        stream's first ``EARLY_BLOCKS`` (the tare must read a swaying tower
        cleaned), then every ``UPDATE_BLOCKS``.
        """
        return self._blocks <= EARLY_BLOCKS or self._blocks % UPDATE_BLOCKS == 0

    def _weigh(self, d: np.ndarray) -> None:
        self._moves.append(np.abs(d))
        stray = None
        if self._direction is not None:
            swaying, _ = read_swaying(d[None, :], np.ones((1, d.size), dtype=bool),
                                      self._direction)
            stray = d - self._direction * swaying[0]
            # The channel the median was read from strays by nothing: no measure.
            self._strays.append(np.where(stray == 0.0, np.nan, np.abs(stray)))
        if self._updates_now():
            self._move_bound = _bound(self._moves)
            if self._strays:
                self._stray_bound = _bound(self._strays)
        if not np.all(np.abs(d) <= self._move_bound):
            self._weighed_before = None
            return
        outer = np.outer(d, d)
        self._cov = (1.0 - self._weight) * self._cov + self._weight * outer
        self._cov_blocks += 1
        if self._weighed_before is not None:
            self._lagged = (1.0 - self._weight) * self._lagged + self._weight * np.outer(
                d, self._weighed_before)
        self._weighed_before = d
        # A cube's step that falls across two blocks leaves a part of it in
        # each, within the bound of a rough sea's moves: weighed into the
        # shares, it set its plate's by up to a fifth wrong (a 2.5 % swell
        # read four cubes heavy). The shares weigh only blocks that keep to
        # the swaying, which every channel agrees on. Whether the tower
        # sways is judged on every block all the same: kept to the blocks
        # that agree, a still tower's moves looked as one (model AE).
        if stray is None or np.all(
                np.abs(stray) <= self._stray_bound + SHARE_SLACK * np.abs(d - stray)):
            self._share_cov = (1.0 - self._weight) * self._share_cov + self._weight * outer

    def _follow_levels(self) -> None:
        """Each channel's own level from the block just cleaned."""
        rows, live = np.vstack(self._rows), np.vstack(self._live)
        own = rows - np.concatenate(self._swaying)[:, None] * self._gain
        self._rows.clear()
        self._live.clear()
        self._swaying.clear()
        reading = live.any(axis=0)
        self._level = np.where(reading, nanmedian_columns(np.where(live, own, np.nan)),
                               self._level)



def _bound(typical_of: deque[np.ndarray]) -> np.ndarray:
    """``OUTLIER_SIGMAS`` of the values' median, as a standard deviation, per channel."""
    typical = 1.4826 * nanmedian_columns(np.vstack(typical_of))
    return np.where(typical > 0, OUTLIER_SIGMAS * typical, np.inf)


def read_swaying(x: np.ndarray, live: np.ndarray, share: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Per row of ``x`` ``(m, n)``, the swaying its channels tell, and whether enough told it.

    ``x`` is each reading less its channel's own level (or a block's move),
    ``share`` each channel's share of the swaying. The swaying is the
    median over the live channels with a share worth reading (over
    ``MIN_SHARE`` of the largest) of their values divided by their shares,
    weighted by the shares' size: a cube's step on one plate, or on three,
    does not move it. 0 where fewer than ``MIN_LIVE_CHANNELS`` tell.
    """
    usable = live & (np.abs(share) > MIN_SHARE * np.max(np.abs(share)))
    if x.shape[0] == 1:
        # One row (a block's move, four a second): numpy's calls on eight
        # values cost more than the sort itself (detect took 10 % longer).
        told = [(v / g, abs(g)) for v, g, u in zip(x[0].tolist(), share.tolist(),
                                                   usable[0].tolist(), strict=True) if u]
        if len(told) < MIN_LIVE_CHANNELS:
            return np.zeros(1), np.zeros(1, dtype=bool)
        told.sort(key=lambda vw: vw[0])
        half, total = 0.5 * sum(w for _, w in told), 0.0
        for value, weight in told:
            total += weight
            if total >= half:
                return np.array([value]), np.ones(1, dtype=bool)
    ok = usable.sum(axis=1) >= MIN_LIVE_CHANNELS
    scaled = np.where(usable, x / np.where(usable, share, 1.0), 0.0)
    read = weighted_median(scaled, np.where(usable, np.abs(share), 0.0))
    return np.where(ok, read, 0.0), ok


def weighted_median(x: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Per row of ``x`` ``(m, n)``, the median weighted by ``weights`` (broadcast to ``x``).

    Entries of weight 0 take no part; a row needs some weight.
    """
    w = np.broadcast_to(weights, x.shape)
    order = np.argsort(np.where(w > 0, x, np.inf), axis=1)
    xs = np.take_along_axis(x, order, axis=1)
    cumulative = np.cumsum(np.take_along_axis(w, order, axis=1), axis=1)
    i = np.minimum((cumulative < 0.5 * cumulative[:, -1:]).sum(axis=1), x.shape[1] - 1)
    return xs[np.arange(x.shape[0]), i]
