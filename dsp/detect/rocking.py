"""A tower that rocks on its table: how fast it rocks, and a comb that takes it out.

A hobbyist's tower on a light table rocks as a whole in one mode of a few
hertz, set going by every strike, knock and hand (cross-check model I:
2.5-8 Hz, half a cube or more on the upper cells, each with its own
sign). Its cells then never look still, and a cube's step is buried in a
swing as large as itself. Averaged over exactly one period of the
rocking, the swing is gone and the step is not: a moving mean over one
period is a comb with its zeros on the rocking and its harmonics.

:class:`RockingPeriod` finds the period in the spectra of the cells'
readings, second by second of stream time (a second is measured once it
is over and used from the next on, as :mod:`dsp.detect.playnoise` does,
so blocks of any size give the same answer). Each spectrum is taken
relative to the cells' noise in the stream's first, quiet seconds (the
converters' own filters, the mains aliased), over the seconds in which
the cell moved (a long run of seconds in which the whole tower moved
evenly is a hand steadying it, not rocking, and does not count; one that
died down after a throw is a tower rocking on between throws); where most
cells share one peak, the tower rocks there. A tower once seen rocking keeps
its comb. :class:`RockingComb` is the
moving mean, per cell over its fresh readings. The settled view reads
its plates through the comb (:class:`dsp.detect.loadcell.LoadChannelProcessor`).
"""

from __future__ import annotations

import functools
from collections import deque

import numpy as np

from dsp.detect.orderstats import median
from dsp.detect.playnoise import SecondRows, fresh_differences, second_noise

# Why 3 seconds: at 10 readings a second a period of 2-4 readings must show
# several times over to stand out of the noise; three seconds of 80
# readings hold 8-24 periods of a 2.5-8 Hz rocking.
ANALYSIS_S = 3
# Why 1-12 Hz: a tower rocking on a table moves at a few hertz (model I:
# 2.5-8 Hz); slower motion is drift, creep and hands, faster the plates'
# own ringing on their cells and the mains aliased (30 Hz at 80 a second).
MIN_HZ = 1.0
MAX_HZ = 12.0
# The grid the spectra are kept on, in hertz.
GRID_HZ = 0.05
# Zero padding of each second's spectra (a finer grid for the peak).
PAD = 4
# Why a cell counts in a second once it moves at 1.5 times its tare noise:
# a rocking tower's upper cells swing far while its lowest barely do
# (model I: 1.2-28 times); a quiet cell's spectrum is only its noise.
MOVING_RATIO = 1.5
# Why 60 seconds: long enough to gather a tower's rocking over a dozen
# throws, short against a session.
MEMORY_S = 60
# Why 4 seconds in which a cell moved: model I's towers showed their
# rocking after a median 21-27 s of play this way (20 of 32 recordings of
# towers 1-8; 18 with 8 seconds). No tower of models A and D-H was taken
# for rocking, a few recordings of B and C were (later, at 9-10 Hz and
# 2-3 Hz). With 2 the rocking came sooner (16 s) but model C's false
# landings went 16 -> 28 on towers 1-8 (before runs were looked at).
MIN_EVIDENCE = 4.0
# The peak: the spectrum within PEAK_WIDTH of its frequency is PEAKY times
# as dense as from FLANK_WIDTH to FLANK_OUT either side (what of that lies
# in the band). Why a tenth: a 3 s window resolves a third of a hertz,
# a tenth of a 3 Hz rocking. Why 3 times: at 2.5 five recordings of model
# C (a hand steadying the tower, with its tremor) and four of B were taken
# for rocking, at 3 two of each.
PEAK_WIDTH = 0.1
FLANK_WIDTH = 0.25
FLANK_OUT = 0.5
PEAKY = 3.0
# Why runs of seconds with 2 or more cells moving, and 10 s at most: after
# a throw a rocking tower rocks for a few seconds and calms (model I:
# runs of 2-6 s, 4-14 s on a tower that rocks between throws); a hand
# steadying the tower moves every cell for as long as it stays, with a
# tremor of its own (model C's noisy rooms: 7-11 Hz for 3-12 s; runs of
# 10-16 s). A run counts once it has ended. Without this two of model
# C's towers 25-32 were taken for rocking in noisy rooms, and their false
# landings went 43 -> 66; with it model I lost 2.3 of the comb's 8
# points (its towers that rock between throws), and at 6 s 2.6.
RUN_CELLS = 2
MAX_RUN_S = 10
# Why 0.6 (session 56): a run counts, and gives its comb while it goes on,
# once the cells' motion in one of its seconds fell to 0.6 of the most it had
# reached. A tower that rocks with every throw may rock on between throws
# (model I's towers 9-16: runs of 12-47 s, the first often begun with the
# first throw, and the comb 19-65 s into a game or never), but its rocking
# dies down after each throw, second by second by half or more; a hand
# steadying the tower shakes it evenly while it stays (our test: within 10 %;
# model C: within a third, until the hand lets go). Over models A-AA: I +32
# landings right and 12 false fewer, nothing else changed; at 0.5, I +27 and
# 1 fewer; at 0.7, +40 and 11 fewer. Taking the comb a run shows while it is
# no longer than ``MAX_RUN_S`` instead (and a run of 12 s as short): I +37
# and 7 fewer, model C 1 false landing more, and a hand's 12 s taken for
# rocking (a test of ours).
DIED_DOWN = 0.6
# Why half the cells: the rocking is one mode of the whole tower, seen by
# every cell; a plate ringing on its own cell, or two, is not.
SHARED_BY = 0.5
# Why 5 readings: fewer first differences say nothing of a spectrum.
_MIN_READINGS = 5
# Seconds whose comb is remembered for a second view (its blocks lag by one at most).
_COMBS_KEPT = 8
# The longest comb kept: a second at 80 readings a second, and then some.
MAX_COMB_READINGS = 128
_GRID = np.arange(MIN_HZ, MAX_HZ + GRID_HZ / 2, GRID_HZ)


def cell_spectra(rows: np.ndarray, fresh: np.ndarray, per_second: float) -> np.ndarray:
    """Each cell's power spectrum of its first differences, on ``_GRID``, summing to 1.

    First differences over the fresh readings turn a step into one short
    blip and take drift out. Frequencies above the readings' Nyquist rate
    are 0; a cell with fewer than ``_MIN_READINGS`` is NaN.
    """
    diffs = fresh_differences(np.asarray(rows, dtype=np.float64), np.asarray(fresh, dtype=bool))
    n = diffs.shape[1]
    out = np.full((n, _GRID.size), np.nan)
    if per_second <= 0:
        return out
    size = 1 << int(PAD * diffs.shape[0] - 1).bit_length()
    inside, below, weight = _onto_grid(size, per_second)
    finite = np.isfinite(diffs)
    counts = np.count_nonzero(finite, axis=0)
    # Cells whose fresh readings fall alike (all, when every reading is
    # fresh) are taken together; others one by one.
    groups: dict[bytes, list[int]] = {}
    for k in np.flatnonzero(counts >= _MIN_READINGS):
        groups.setdefault(finite[:, k].tobytes(), []).append(int(k))
    for cells in groups.values():
        rows_of = finite[:, cells[0]]
        d = diffs[rows_of][:, cells]
        power = np.abs(np.fft.rfft(d - d.mean(axis=0), size, axis=0)) ** 2
        on_grid = power[below] * (1.0 - weight)[:, None] + power[below + 1] * weight[:, None]
        on_grid[~inside] = 0.0
        total = on_grid.sum(axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            out[cells] = np.where(total > 0.0, on_grid / total, np.nan).T
    return out


@functools.lru_cache(maxsize=16)
def _onto_grid(size: int, per_second: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Linear interpolation from an FFT of ``size`` onto ``_GRID`` (as np.interp).

    Which grid points lie under the Nyquist rate, the FFT bin below each
    and its weight. The same few sizes and rates come back every second:
    kept (read-only).
    """
    hz = np.fft.rfftfreq(size) * per_second
    inside = _GRID <= 0.5 * per_second
    below = np.clip(np.searchsorted(hz, _GRID, side="right") - 1, 0, hz.size - 2)
    weight = np.clip((_GRID - hz[below]) / (hz[below + 1] - hz[below]), 0.0, 1.0)
    for a in (inside, below, weight):
        a.flags.writeable = False
    return inside, below, weight


def smoothed(spectrum: np.ndarray, half_width_hz: float = 0.5) -> np.ndarray:
    """``spectrum`` (on ``_GRID``) averaged over ``half_width_hz`` either side."""
    half = max(1, round(half_width_hz / GRID_HZ))
    kernel = np.ones(2 * half + 1)
    sums = np.convolve(spectrum, kernel, mode="same")
    counts = np.convolve(np.ones_like(spectrum), kernel, mode="same")
    return sums / counts


def shared_peak(spectra: np.ndarray, weights: np.ndarray) -> float:
    """The frequency (Hz) of a peak most cells' spectra share, or NaN.

    ``spectra``: each cell's spectrum on ``_GRID`` (rows summing to 1);
    ``weights``: how much motion each was gathered over. The peak is the
    highest point of the weighted mean away from the band's edges (where
    the tilt of differenced noise, or a step's, piles up), refined by a
    parabola; a cell shows it where the spectrum within ``PEAK_WIDTH`` of
    it is ``PEAKY`` times as dense as beyond ``FLANK_WIDTH``.
    """
    counted = (weights >= MIN_EVIDENCE) & np.isfinite(spectra).all(axis=1)
    if np.count_nonzero(counted) < 2:
        return float("nan")
    usable = spectra[counted]
    top = _GRID[np.flatnonzero(usable.sum(axis=0) > 0)[-1]] if usable.any() else 0.0
    mean = usable.mean(axis=0)
    interior = (_GRID >= MIN_HZ * (1 + FLANK_OUT)) & (_GRID <= top / (1 + FLANK_WIDTH))
    if not interior.any():
        return float("nan")
    peak = int(np.argmax(np.where(interior, mean, -1.0)))
    below, at, above = mean[peak - 1], mean[peak], mean[min(peak + 1, mean.size - 1)]
    curve = below - 2.0 * at + above
    shift = 0.5 * (below - above) / curve if curve < 0.0 else 0.0
    f = float(_GRID[peak] + np.clip(shift, -0.5, 0.5) * GRID_HZ)
    near = np.abs(_GRID - f) <= PEAK_WIDTH * f
    flank = (
        (np.abs(_GRID - f) > FLANK_WIDTH * f) & (np.abs(_GRID - f) <= FLANK_OUT * f)
        & (_GRID <= top) & (_GRID >= MIN_HZ)
    )
    with np.errstate(invalid="ignore", divide="ignore"):
        density = usable[:, near].mean(axis=1) / usable[:, flank].mean(axis=1)
    if np.count_nonzero(density >= PEAKY) < SHARED_BY * spectra.shape[0]:
        return float("nan")
    return f


def died_down(motion: list[float]) -> bool:
    """Whether the motion, second by second, fell to ``DIED_DOWN`` of the most it had reached.

    A tower's rocking is set going by a strike and dies down until the next
    one; a hand steadying the tower shakes it as long as it stays.
    """
    most = -np.inf
    for m in motion:
        if m <= DIED_DOWN * most:
            return True
        most = max(most, m)
    return False


class RockingPeriod:
    """Whether the tower rocks as a whole, and its period in fresh readings.

    Parameters
    ----------
    n_channels : int
        Number of load cells.
    """

    def __init__(self, n_channels: int) -> None:
        self.n_channels = int(n_channels)
        self._gathered = SecondRows()
        self._last_t = -np.inf
        # The comb each recent second began with (for a second view).
        self._combs: dict[int | None, tuple[int, float]] = {}
        # Each recent closed second's noise (the same readings' for a view whose comb was off).
        self._noises: dict[int | None, np.ndarray] = {}
        self._recent: deque[tuple[np.ndarray, np.ndarray]] = deque(maxlen=ANALYSIS_S)
        self._quiet: np.ndarray | None = None
        # Closed seconds not yet judged: their analysis window's readings,
        # each cell's noise, fresh readings a second.
        self._pending: list[tuple[np.ndarray, np.ndarray, np.ndarray, float]] = []
        # The judged seconds of the memory (the cells each added, and their
        # spectra), the sums of those spectra, and how many each cell has.
        self._memory: deque[tuple[np.ndarray, np.ndarray]] = deque()
        # The seconds of a run in which several cells moved, held until it
        # ends: the cells that moved, their spectra, and how far the cells
        # moved (their median, in tare noises).
        self._run: list[tuple[np.ndarray, np.ndarray, float]] = []
        self._total = np.zeros((self.n_channels, _GRID.size))
        self._weights = np.zeros(self.n_channels)
        self._tare_key = b""
        # A tower once seen rocking rocks again with every throw: its comb stays.
        self._established = 1
        self._established_interval_s = 0.0  # between fresh readings, as then
        # The comb the run of seconds still going on shows, with the memory,
        # until it ends (None: none): see :meth:`_judge_run`.
        self._provisional: tuple[int, float] | None = None
        #: Seconds between a cell's fresh readings (the cells' median), as last measured.
        self.reading_interval_s = float("nan")

    def begin(self, second: int) -> None:
        """Readings of ``second`` come next: the second before is over and measured.

        (A second before the newest begun is one another view sharing the
        tracker has already taken through: nothing to do.)
        """
        if self._gathered.second is not None and second <= self._gathered.second:
            return
        if self._gathered.second is not None:
            self._close()
        self._gathered.second = int(second)

    def add(self, t_s: np.ndarray, values: np.ndarray, fresh: np.ndarray) -> None:
        """Readings of the current second at times ``t_s`` (shape ``(m, n_channels)``).

        Readings at or before the last one added are already known and
        left out: two views fed the same rows can share one tracker.
        """
        t_s = np.asarray(t_s, dtype=np.float64)
        new = t_s > self._last_t
        if new.any():
            self._gathered.add(np.asarray(values)[new], np.asarray(fresh)[new])
            self._last_t = float(t_s[new][-1])

    def _close(self) -> None:
        taken = self._gathered.take()
        if taken is None:
            return
        rows, fresh = taken
        self._recent.append((rows, fresh))
        noise = second_noise(rows, fresh)
        self._noises[self._gathered.second] = noise
        while len(self._noises) > _COMBS_KEPT:
            del self._noises[next(iter(self._noises))]
        # Fresh readings a second (the cells' median).
        per_second = float(median(np.count_nonzero(fresh, axis=0)))
        if per_second > 0:
            self.reading_interval_s = 1.0 / per_second
        if len(self._recent) < ANALYSIS_S:
            return
        window = np.concatenate([r for r, _ in self._recent])
        window_fresh = np.concatenate([f for _, f in self._recent])
        if self._quiet is None:
            # The stream's first seconds: the empty, quiet tower the tare
            # reads. Its cells' mean spectrum is the shape of their noise
            # (the converters' filters, the differences' tilt, the mains
            # aliased), which every later spectrum is measured against.
            spectra = cell_spectra(window, window_fresh, per_second)
            if np.isfinite(spectra).any():
                quiet = smoothed(np.nanmean(spectra, axis=0))
                self._quiet = np.where(quiet > 0, quiet, np.nan)
        self._pending.append((window, window_fresh, noise, per_second))

    def noise_of(self, second: int | None) -> np.ndarray | None:
        """Each cell's noise (:func:`second_noise`) in a recent closed second, if known."""
        return self._noises.get(second)

    @property
    def rocking_hz(self) -> float:
        """How fast the tower rocks, as its comb takes it out (0: never seen rocking)."""
        if self._established <= 1 or not self._established_interval_s > 0:
            return 0.0
        return 1.0 / (self._established * self._established_interval_s)

    def comb_at(self, tare_sigma: np.ndarray, second: int | None = None) -> tuple[int, float]:
        """Fresh readings in one period of the rocking (1: none seen), and their interval then.

        For ``second`` (default: the newest begun), as it was judged when
        that second began: a view sharing the tracker gets the same comb
        for the same second, however far the other has gone.

        Each cell's spectra of the last ``MEMORY_S`` seconds in which it
        moved (``MOVING_RATIO`` times its tare noise) are summed, those of
        a run of seconds in which several cells moved once it has ended
        and only if it was short (``MAX_RUN_S``) or died down
        (:func:`died_down`); where most cells share a peak
        (:func:`shared_peak`), the tower rocks at it. Until then, a run
        still going on that died down gives the comb it shows with them
        (:meth:`_judge_run`).
        Each second is judged once, and spectra are taken only of cells
        that moved: a quiet tower costs next to nothing.
        """
        if second is None:
            second = self._gathered.second
        if second not in self._combs:
            self._judge(tare_sigma)
            if self._established <= 1 and self._provisional is not None:
                self._combs[second] = self._provisional
            else:
                self._combs[second] = (self._established, self._established_interval_s)
            while len(self._combs) > _COMBS_KEPT:
                del self._combs[next(iter(self._combs))]
        return self._combs[second]

    def _remember(self, moving: np.ndarray, spectra: np.ndarray) -> bool:
        """Add one second's spectra to the memory's sums (the oldest leaves); whether any."""
        self._memory.append((moving, spectra))
        self._total[moving] += spectra
        self._weights += moving
        if len(self._memory) > MEMORY_S:
            gone, gone_spectra = self._memory.popleft()
            self._total[gone] -= gone_spectra
            self._weights -= gone
        return bool(moving.any())

    def _judge(self, tare_sigma: np.ndarray) -> int:
        tare = np.asarray(tare_sigma, dtype=np.float64)
        key = tare.tobytes()
        if key != self._tare_key:
            # Judged by another tare (only ever the tare's own end): afresh.
            self._tare_key = key
            self._memory.clear()
            self._run = []
            self._total[:] = 0.0
            self._weights[:] = 0.0
        added = False
        for window, window_fresh, noise, per_second in self._pending:
            moving = np.zeros(self.n_channels, dtype=bool)
            spectra = np.zeros((0, _GRID.size))
            with np.errstate(invalid="ignore"):
                candidates = noise > MOVING_RATIO * tare
            if candidates.any() and self._quiet is not None:
                with np.errstate(invalid="ignore", divide="ignore"):
                    white = np.nan_to_num(
                        cell_spectra(window[:, candidates], window_fresh[:, candidates],
                                     per_second) / self._quiet,
                        nan=0.0, posinf=0.0,
                    )
                sums = white.sum(axis=1)
                usable = sums > 0
                moving[np.flatnonzero(candidates)[usable]] = True
                spectra = white[usable] / sums[usable, None]
            if np.count_nonzero(candidates) >= RUN_CELLS:
                with np.errstate(invalid="ignore", divide="ignore"):
                    ratio = noise / tare
                ratio = ratio[np.isfinite(ratio)]
                self._run.append((moving, spectra, float(median(ratio)) if ratio.size else 0.0))
                continue
            # The run of seconds in which several cells moved has ended: a
            # short one (a throw's rocking dying down) counts, a long one
            # (a hand steadying the tower, with its tremor) only if it died
            # down somewhere (a tower rocking on between throws).
            held = [(m, sp) for m, sp, _ in self._run] if self._run_rocks(ended=True) else []
            for entry in [*held, (moving, spectra)]:
                added = self._remember(*entry) or added
            self._run = []
        self._pending.clear()
        self._provisional = self._judge_run()
        if not added:
            return self._established
        comb = self._comb_of(self._total, self._weights)
        if comb is not None:
            self._established, self._established_interval_s = comb
        return self._established

    def _judge_run(self) -> tuple[int, float] | None:
        """The comb the memory shows with the run of seconds still going on, if it rocks.

        A tower that rocks with every throw may rock on between throws, and
        its first run of moving seconds then lasts as long as the throws
        come; a run counts only once it has ended, so the comb came late
        or never. Once the run has died down somewhere (:func:`died_down`:
        a throw's rocking, not a hand's tremor) the comb it shows with the
        memory is given at once (the settled view reads through it), until
        a comb is established.
        """
        if self._established > 1 or not self._run or not self._run_rocks(ended=False):
            return None
        total = self._total.copy()
        weights = self._weights.copy()
        for moving, spectra, _ in self._run:
            total[moving] += spectra
            weights += moving
        return self._comb_of(total, weights)

    def _run_rocks(self, *, ended: bool) -> bool:
        """Whether the run of seconds in which several cells moved is a rocking tower's.

        One that died down since it began (a throw's rocking calming before
        the next throw sets it going again), or, once ended, a short one.
        """
        motion = [m for _, _, m in self._run]
        return died_down(motion) or (ended and len(self._run) <= MAX_RUN_S)

    def _comb_of(self, total: np.ndarray, weights: np.ndarray) -> tuple[int, float] | None:
        """The comb (readings a period, their interval) summed spectra show, or None."""
        if np.count_nonzero(weights >= MIN_EVIDENCE) < SHARED_BY * self.n_channels:
            return None  # (too few cells yet to share a peak)
        with np.errstate(invalid="ignore", divide="ignore"):
            spectra = total / weights[:, None]
        f = shared_peak(spectra, weights)
        per_second = 1.0 / self.reading_interval_s
        if not (np.isfinite(f) and f > 0 and per_second > 0):
            return None
        return int(min(MAX_COMB_READINGS, max(1, round(per_second / f)))), self.reading_interval_s


class RockingComb:
    """Each cell's mean over its last ``length`` fresh readings: the rocking averaged out.

    A stale reading (a converter slower than the messages) holds the mean
    of the fresh ones before it; an invalid one (a lifted module) passes
    as it is and starts the cell's mean afresh. Readings are remembered
    whether or not the comb is on, so it starts with a full period. The
    means are differences of one running sum per cell, kept from block to
    block, so blocks of any size give the same numbers to the bit.
    """

    def __init__(self, n_channels: int) -> None:
        self.n_channels = int(n_channels)
        # Each cell's running sums up to its last fresh readings (the first: 0).
        self._sums: list[np.ndarray] = [np.zeros(1) for _ in range(self.n_channels)]
        self._held = np.full(self.n_channels, np.nan)

    def apply(
        self, values: np.ndarray, valid: np.ndarray, fresh: np.ndarray, length: int
    ) -> np.ndarray:
        """The readings seen through the comb (``length`` 1: as they are)."""
        values = np.asarray(values, dtype=np.float64)
        length = max(1, int(length))
        full = MAX_COMB_READINGS + 1
        out = values.copy()
        # The usual cells: every reading valid and fresh. Those whose sums are
        # as long (all, once each mean is long begun) at once; a cell that is
        # not (an absent cell, a slow converter) does not hold the others up.
        usual = (valid.all(axis=0) & fresh.all(axis=0)) if len(values) else np.zeros(
            self.n_channels, dtype=bool)
        sizes = np.array([sums.size for sums in self._sums])
        # (A set, not np.unique: that imports numpy.ma, 20-30 ms at the
        # start of every `towerear detect`.)
        for size in sorted(set(sizes[usual].tolist())):
            cells = np.flatnonzero(usual & (sizes == size))
            kept = np.array([self._sums[k] for k in cells])
            running = np.cumsum(
                np.concatenate([kept[:, -1:], values[:, cells].T], axis=1), axis=1)[:, 1:]
            whole = np.concatenate([kept, running], axis=1)
            for row, cell in enumerate(cells):
                self._sums[int(cell)] = whole[row, -full:]
            if length > 1:
                at = np.arange(size, whole.shape[1])
                span = np.minimum(length, at)
                out[:, cells] = ((whole[:, at] - whole[:, at - span]) / span).T
            self._held[cells] = out[-1, cells]
        for k in np.flatnonzero(~usual).tolist():
            ok = valid[:, k]
            new = ok & fresh[:, k]
            sums = self._sums[k]
            breaks = np.flatnonzero(~ok)
            # Segments between invalid readings: each starts the mean afresh.
            # (Empty ones only start it afresh: the next one does that too,
            # and a block ending on an invalid reading leaves it begun anew.)
            starts = np.concatenate([[0], breaks + 1])
            ends = np.concatenate([breaks, [values.shape[0]]])
            filled = ends > starts
            for a, b in zip(starts[filled].tolist(), ends[filled].tolist(), strict=True):
                if a > 0:
                    sums = np.zeros(1)
                    self._held[k] = np.nan
                idx = a + np.flatnonzero(new[a:b])
                means = np.zeros(0)
                if idx.size:
                    # np.cumsum adds in order: the same sums however the stream is cut.
                    running = np.cumsum(np.concatenate([sums[-1:], values[idx, k]]))[1:]
                    whole = np.concatenate([sums, running])
                    if length > 1:
                        at = np.arange(sums.size, whole.size)
                        span = np.minimum(length, at)
                        means = (whole[at] - whole[at - span]) / span
                    sums = whole[-full:]
                if length == 1:
                    # As they are (and remembered, the last one to be held).
                    if idx.size:
                        self._held[k] = values[idx[-1], k]
                    continue
                # Stale readings hold the last fresh mean (or the reading itself before any).
                order = np.searchsorted(idx, np.arange(a, b), side="right") - 1
                held = np.where(order >= 0, means[np.maximum(order, 0)] if means.size else 0.0,
                                self._held[k])
                out[a:b, k] = np.where(np.isfinite(held), held, values[a:b, k])
                if means.size:
                    self._held[k] = means[-1]
            if breaks.size and breaks[-1] == values.shape[0] - 1:
                sums = np.zeros(1)
                self._held[k] = np.nan
            self._sums[k] = sums
        return out
