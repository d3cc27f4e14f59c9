"""How restless the load cells are while the game is played, not only at the tare.

The load views judge a plate still by the noise its cell showed in the
first seconds, on an empty, quiet tower. A tower that rocks on its table
once play begins (a hobbyist's build on a light table: one mode of a few
hertz that every strike, knock and hand sets going, seen by every cell)
may never again be that still: its settled view then never finds a still
window, and cubes on its upper plates go unseen for seconds or for good.

This tracker measures each cell's noise over whole seconds of stream time
and, once most cells have moved together for most of the last seconds,
lets the settled view judge stillness and steps by that noise instead.
A second in which only a few cells moved (plates struck in a quick series,
a hand on one module) does not count: only a tower moving as a whole
raises the bar. So does a second whose rows had shaking every cell felt at
once taken out (:mod:`dsp.detect.commonshake`): the tower shook as a whole,
and what the cleaning left on each cell is that cell's noise now, however
few cells it left restless. The noise of a second is known once it is over, and is
used from the next second on, so the result does not depend on how the
stream is cut into blocks.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from dsp.detect.orderstats import median, nanmedian_columns

# Why whole seconds: ten readings at the slowest converter (10 a second),
# enough for a noise estimate from first differences that impacts and steps
# do not move (a median), and short against how long a tower keeps rocking.
BUCKET_S = 1.0
# Why 5 readings: fewer first differences scatter too much for a median.
_MIN_READINGS = 5
# MAD -> sigma for a Gaussian (as loadcell.robust_sigma_from_differences).
_MAD_SIGMA = 1.4826
# Why 20 seconds, and half of them: a tower shaken for a few seconds (a
# hand steadying it before a lift, a knock on the table: cross-check model
# C's noisy rooms, 4-23 times the tare's noise on every cell for 5-6 s)
# must not raise the bar; there, steps decided while it shook were false
# landings (model C towers 9-16, a cell counted as moving at 1.5 times:
# 17 -> 29 false with 10 seconds, 21 with 20). A rocking tower moves for
# most of a game.
BUCKETS = 20
# Why twice the tare's noise, on more than half the cells: a second's noise
# from 10 first differences (10 readings a second) scatters by a third, so
# at 1.5 times a quiet cell read high now and then, and three plates
# ringing in a quick series with one such cell looked like the whole tower
# (model C towers 9-16: 21 false landings at 1.5 times, 17 as before at
# twice). The rocking of a whole tower reaches every cell, its lower ones
# least (model I: 1.2-28 times the tare's noise, seven cells of eight
# over twice).
MOVING_RATIO = 2.0
MOVING_SHARE = 0.5
# Why a third less than measured: the bar rises only as far as the tower
# clearly moves. In the first prototype (both views, 10 seconds), half of
# the noise gave model I 63.4 / 56.7 % right and 149 / 195 false landings
# (towers 1-8 / 9-16), two thirds 62.9 / 58.9 % and 137 / 172; the whole
# noise was not tried.
DISCOUNT = 1.5


def fresh_differences(rows: np.ndarray, fresh: np.ndarray) -> np.ndarray:
    """Each cell's differences between its consecutive fresh readings, NaN elsewhere.

    ``rows`` and ``fresh`` have shape ``(m, n)``; the result too (row ``i``
    holds the change from the cell's fresh reading before ``i``). A
    converter slower than the messages leaves stale readings between.
    """
    m, n = rows.shape
    if m and fresh.all():
        # Every reading fresh (the usual converter): each row less the one
        # before, the same differences without looking them up.
        out = np.empty(rows.shape)
        out[0] = np.nan
        with np.errstate(invalid="ignore"):
            np.subtract(rows[1:], rows[:-1], out=out[1:])
        return out
    last = np.maximum.accumulate(np.where(fresh, np.arange(m)[:, None], -1), axis=0)
    before = np.vstack([np.full((1, n), -1), last[:-1]])
    cols = np.arange(n)[None, :]
    with np.errstate(invalid="ignore"):
        return np.where(fresh & (before >= 0), rows - rows[np.maximum(before, 0), cols], np.nan)


def second_noise(rows: np.ndarray, fresh: np.ndarray) -> np.ndarray:
    """Each cell's noise sigma over some readings, from its fresh ones' differences (MAD).

    NaN for a cell with fewer than ``_MIN_READINGS`` fresh readings.
    """
    fresh = np.asarray(fresh, dtype=bool)
    diffs = fresh_differences(np.asarray(rows, dtype=np.float64), fresh)
    with np.errstate(invalid="ignore"):
        centre = nanmedian_columns(diffs)
        sigma = _MAD_SIGMA * nanmedian_columns(np.abs(diffs - centre)) / np.sqrt(2.0)
    sigma[fresh.sum(axis=0) < _MIN_READINGS] = np.nan
    return sigma


class SecondRows:
    """The readings of the second of stream time now gathered, block by block."""

    def __init__(self) -> None:
        self.second: int | None = None
        self._rows: list[np.ndarray] = []
        self._fresh: list[np.ndarray] = []
        self.shaken_rows = 0  # of them, rows with common shaking taken out

    def add(self, values: np.ndarray, fresh: np.ndarray, shaken: np.ndarray | None = None) -> None:
        """More readings of the second (shape ``(m, n_channels)``).

        ``fresh``: which are fresh; ``shaken``: which rows had common
        shaking taken out (default none).
        """
        if len(values):
            self._rows.append(np.asarray(values, dtype=np.float64))
            self._fresh.append(np.asarray(fresh, dtype=bool))
            if shaken is not None:
                self.shaken_rows += int(np.count_nonzero(shaken))

    def take(self) -> tuple[np.ndarray, np.ndarray] | None:
        """All the second's readings and fresh flags, now let go (None: there were none)."""
        if not self._rows:
            return None
        taken = np.concatenate(self._rows), np.concatenate(self._fresh)
        self._rows.clear()
        self._fresh.clear()
        return taken


class PlayNoise:
    """Per-second noise of every load cell, and the noise a still plate may show now.

    Parameters
    ----------
    n_channels : int
        Number of load cells.
    """

    def __init__(self, n_channels: int) -> None:
        self.n_channels = int(n_channels)
        self._gathered = SecondRows()
        self._seconds: deque[np.ndarray] = deque(maxlen=BUCKETS)
        # Whether the whole tower moved in each second, judged against ``_flags_for``'s tare.
        self._whole_tower: deque[bool | None] = deque(maxlen=BUCKETS)
        # Whether most of each second's rows had common shaking taken out.
        self._shaken: deque[bool] = deque(maxlen=BUCKETS)
        self._flags_for = b""

    @staticmethod
    def second_of(t_s: np.ndarray) -> np.ndarray:
        """The whole second of stream time each reading falls in."""
        return np.floor(np.asarray(t_s, dtype=np.float64) / BUCKET_S).astype(np.int64)

    def begin(self, second: int, noise_before: np.ndarray | None = None) -> None:
        """Readings of ``second`` come next: the second before is over and measured.

        ``noise_before``: that second's noise where the caller has it
        already (:func:`second_noise` of the very same readings).
        """
        if self._gathered.second is not None and second != self._gathered.second:
            self._close(noise_before)
        self._gathered.second = int(second)

    def add(self, values: np.ndarray, fresh: np.ndarray, shaken: np.ndarray | None = None) -> None:
        """Readings of the current second (shape ``(m, n_channels)``).

        ``fresh``: which are fresh; ``shaken``: which rows had common
        shaking taken out (default none).
        """
        self._gathered.add(values, fresh, shaken)

    def _close(self, noise: np.ndarray | None = None) -> None:
        shaken_rows, self._gathered.shaken_rows = self._gathered.shaken_rows, 0
        taken = self._gathered.take()
        if taken is None:
            return
        self._seconds.append(second_noise(*taken) if noise is None else noise)
        self._whole_tower.append(None)
        self._shaken.append(2 * shaken_rows > taken[0].shape[0])

    def sigma(self, tare_sigma: np.ndarray) -> np.ndarray:
        """The noise a still plate may show now: the tare's, or the tower's while it rocks.

        Each past second counts where most cells moved together in it, or
        most of its rows had common shaking taken out (else at the tare's
        noise); a cell's noise is the median over the last
        ``BUCKETS`` seconds, less ``DISCOUNT``, and never under the tare's.
        """
        tare = np.asarray(tare_sigma, dtype=np.float64)
        if len(self._seconds) < BUCKETS // 2 + 1:
            return tare.copy()
        if tare.tobytes() != self._flags_for:
            self._flags_for = tare.tobytes()
            self._whole_tower = deque([None] * len(self._seconds), maxlen=BUCKETS)
        for i, flag in enumerate(self._whole_tower):
            if flag is None:
                with np.errstate(invalid="ignore"):
                    moving = np.count_nonzero(self._seconds[i] > MOVING_RATIO * tare)
                self._whole_tower[i] = (
                    bool(moving > MOVING_SHARE * self.n_channels) or self._shaken[i])
        if not any(self._whole_tower):
            return tare.copy()
        seconds = np.array(self._seconds)
        whole_tower = np.array(self._whole_tower, dtype=bool)
        counted = np.where(whole_tower[:, None] & np.isfinite(seconds), seconds, tare[None, :])
        play = median(counted, axis=0) / DISCOUNT
        return np.maximum(tare, np.nan_to_num(play, nan=0.0))
