"""The load-cell channel: readings in, lasting steps and (dis)connections out.

A cube coming to rest on a plate shows as a *lasting* step of about one cube
in that plate's load, after a little ringing. The processor therefore works
on short windows of consecutive readings:

- a window is *stable* when every reading in it is valid, the readings are
  contiguous in time and their spread is within a few noise sigmas;
- each channel remembers the mean of its last stable window; when the next
  stable window (after an unstable stretch: ringing, an impact spike, a hand)
  sits more than a threshold away, that is a step. Between steps the
  remembered level follows the readings, which is how slow drift and creep
  are absorbed without ever being reported;
- impact spikes are short, so they make windows unstable but leave the level
  where it was: no step;
- a channel whose valid bit stays 0 for ``disconnect_ms`` is disconnected (its
  module is lifted); when it is valid again its level is re-learnt silently.

Noise sigmas come from the calibration or from the first ``tare_time_s`` of
the stream (the tower must be empty and quiet then, contracts.md section 3).
Everything is vectorised per block; results do not depend on how the stream
is cut into blocks.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

# Why 62.5 ms: at the nominal 80 Hz that is 5 readings, enough for a spread
# test and a mean good to a small fraction of a cube; tuned on towers 1-4
# (100 ms and 75 ms windows gave median latencies of 350 and 265 ms).
DEFAULT_STABLE_WINDOW_MS = 62.5
# Why 6: the range of 5 Gaussian readings exceeds 6 sigma with a probability
# of about 1e-4, so quiet windows are almost always stable, while any step
# larger than the step threshold cannot hide inside one stable window.
DEFAULT_STABLE_RANGE_SIGMAS = 6.0
# Why 12: the difference of two window means has a sigma of about
# sigma*sqrt(2/5) = 0.63 sigma; 12 sigma is 19 of those, far from noise, and
# still a small fraction of a cube on any realistic HX711 channel.
DEFAULT_STEP_SIGMAS = 12.0
# Why 100 ms: single missing readings (an HX711 timeout) are not a lifted
# module; a lift keeps the channel silent for seconds.
DEFAULT_DISCONNECT_MS = 100.0
# Why 1 s: the contract promises an empty, quiet tower for the first seconds;
# one second gives 80 readings per channel for the noise estimate.
DEFAULT_TARE_TIME_S = 1.0
# Why 0.4 cube: whole cubes round from 0.5 up; a lasting change under 0.4
# of a cube is drift, creep or a re-seated module, never a cube.
STEP_CUBES = 0.4
# Why 0.8 cube: a window containing a step edge of one cube spreads over at
# least one cube, so it can never pass as stable; ringing of +-0.4 cube
# moves a window mean by far less than the 0.5 cube that would miscount
# (0.6 gave the same counts on towers 1-4, 90 ms later).
RING_CUBES = 0.8
# Why 300 ms: the settled view of a channel (see the detector): a hand
# wandering on a plate or a tower being handled is not still that long, and
# every landing the fast view doubts waits for it (500 ms gave the same
# counts on the cross-check towers and 0.1-0.2 s more latency at p95).
SETTLED_WINDOW_MS = 300.0
# Why 6 sigma for the settled view: its windows average 24 readings, so the
# difference of two window means has a sigma of about 0.29 sigma and 6 sigma
# is 20 of those; 12 sigma there missed every cube on a cell whose noise is a
# twelfth of a cube (a 0.32 g cube on a 0.027 g rms cross-check cell).
SETTLED_STEP_SIGMAS = 6.0
# A channel's noise is never taken below one count: HX711 readings are
# integers, and a perfectly quiet simulated channel must not make every
# quantisation step look like a load change.
_MIN_SIGMA_COUNTS = 1.0


@dataclass(frozen=True)
class LoadStep:
    """A lasting change of one channel's load.

    Attributes
    ----------
    level : int
        Channel (level) index.
    t_before_s : float
        Time of the last reading of the last stable window before the change.
    t_settled_s : float
        Time of the first reading of the first stable window after it.
    t_decided_s : float
        Time of the reading that completed that window (the decision).
    delta_counts : float
        New level minus old level, HX711 counts.
    before_counts, after_counts : float
        Window means before and after, counts.
    busy_levels : int
        Other channels that were not still (or not valid) while this one
        settled: many means the whole tower was shaken (a hand, a knock).
    """

    level: int
    t_before_s: float
    t_settled_s: float
    t_decided_s: float
    delta_counts: float
    before_counts: float
    after_counts: float
    busy_levels: int = 0


@dataclass(frozen=True)
class LoadConnection:
    """A channel stopped (``connected=False``) or resumed reporting.

    ``t_s`` is the time of the first invalid (or first valid again) reading;
    ``t_decided_s`` the reading at which the change was certain.
    """

    level: int
    connected: bool
    t_s: float
    t_decided_s: float


@dataclass(frozen=True)
class LoadBlockResult:
    """What one block of readings produced, in time order per kind."""

    steps: list[LoadStep]
    connections: list[LoadConnection]


def robust_sigma_from_differences(values: np.ndarray) -> np.ndarray:
    """Noise sigma per channel from first differences, immune to a few steps.

    Parameters
    ----------
    values : ndarray, shape (n, channels)
        Readings of channels at rest.

    Returns
    -------
    ndarray, shape (channels,)
        Robust standard deviation of one reading; NaN where ``n < 3``.
    """
    values = np.asarray(values, dtype=np.float64)
    if values.ndim != 2 or values.shape[0] < 3:
        return np.full(values.shape[-1] if values.ndim == 2 else 0, np.nan)
    diffs = np.diff(values, axis=0)
    mad = np.median(np.abs(diffs - np.median(diffs, axis=0)), axis=0)
    # MAD -> sigma for a Gaussian, and a difference of two readings has
    # sqrt(2) times the sigma of one.
    return 1.4826 * mad / np.sqrt(2.0)


class LoadChannelProcessor:
    """Streaming step and connection detector for all load channels.

    Parameters
    ----------
    n_channels : int
        Number of load channels (levels).
    sample_rate_hz : float
        Load reading rate from HELLO.
    noise_counts : sequence of float, optional
        Known noise sigma per channel (from a calibration); else estimated
        on the first ``tare_time_s``.
    stable_window_ms, stable_range_sigmas, step_sigmas, disconnect_ms, tare_time_s
        See the module constants for the defaults and why.
    """

    def __init__(
        self,
        *,
        n_channels: int,
        sample_rate_hz: float,
        noise_counts: tuple[float, ...] | None = None,
        stable_window_ms: float = DEFAULT_STABLE_WINDOW_MS,
        stable_range_sigmas: float = DEFAULT_STABLE_RANGE_SIGMAS,
        step_sigmas: float = DEFAULT_STEP_SIGMAS,
        disconnect_ms: float = DEFAULT_DISCONNECT_MS,
        tare_time_s: float = DEFAULT_TARE_TIME_S,
    ) -> None:
        if sample_rate_hz <= 0:
            raise ValueError("sample_rate_hz must be positive")
        self.n_channels = int(n_channels)
        self.sample_rate_hz = float(sample_rate_hz)
        self.window = max(3, round(stable_window_ms * 1e-3 * sample_rate_hz))
        self.stable_range_sigmas = float(stable_range_sigmas)
        self.step_sigmas = float(step_sigmas)
        self.disconnect_readings = max(2, round(disconnect_ms * 1e-3 * sample_rate_hz))
        self.tare_readings = max(3, round(tare_time_s * sample_rate_hz))
        # A gap longer than 1.5 periods means readings were lost: windows
        # spanning it are not trusted as stable.
        self._max_window_span_s = (self.window - 1 + 0.5) / sample_rate_hz
        n = self.n_channels
        self.sigma = np.full(n, np.nan)
        if noise_counts is not None:
            self.sigma = np.maximum(np.asarray(noise_counts, dtype=np.float64), _MIN_SIGMA_COUNTS)
        self._tare_rows: list[np.ndarray] = []
        self._tare_valid: list[np.ndarray] = []
        self._n_tare = 0
        #: Minimum step size per channel in counts, once a cube's size is known
        #: (set by the fusion stage through :meth:`set_min_step_counts`).
        self.min_step_counts = np.zeros(n)
        self.ring_tolerance_counts = np.zeros(n)
        self._hist_t = np.zeros(0)
        self._hist_v = np.zeros((0, n))
        self._hist_ok = np.zeros((0, n), dtype=bool)
        self.level = np.full(n, np.nan)  # mean of the last stable window
        self.level_t = np.full(n, np.nan)  # time of its last reading
        self.connected = np.ones(n, dtype=bool)
        self._invalid_run = np.zeros(n, dtype=np.int64)
        self._invalid_since = np.full(n, np.nan)
        self._valid_since = np.full(n, np.nan)
        # Disconnection times not yet followed by a stable window: the first
        # stable window after one re-learns the level instead of comparing.
        self._pending_resets: list[list[float]] = [[] for _ in range(n)]
        self._n_rows = 0
        # Why two windows back: the other channels are judged over the
        # settling of the step itself, not over the whole drop (a falling
        # cube's edge strikes briefly shake the plates above).
        self._busy_lookback = 2 * self.window
        self._restless_hist = np.zeros((0, n), dtype=bool)
        self._first_scored_row = 0 if noise_counts is not None else self.tare_readings - 1

    # -- configuration -----------------------------------------------------
    def set_cube_counts(
        self,
        counts: np.ndarray,
        *,
        ring_tolerant: bool = True,
        ring_counts: np.ndarray | None = None,
    ) -> None:
        """Tell the size of one cube per channel (counts, NaN where unknown).

        Steps smaller than ``STEP_CUBES`` of a cube are then ignored, and a
        window whose spread is under ``RING_CUBES`` of a cube counts as
        stable even while the plate still rings: its mean is already within
        a small fraction of a cube of the settled load, which is all that
        counting whole cubes needs, and the decision comes much sooner.
        ``ring_counts`` (default ``counts``) gives the cube size trusted for
        that: NaN on a level keeps its windows strict.
        """
        units = np.nan_to_num(np.abs(np.asarray(counts, dtype=np.float64)), nan=0.0)
        self.min_step_counts = STEP_CUBES * units
        if ring_tolerant:
            ring = units if ring_counts is None else np.nan_to_num(
                np.abs(np.asarray(ring_counts, dtype=np.float64)), nan=0.0
            )
            self.ring_tolerance_counts = RING_CUBES * ring

    @property
    def noise_ready(self) -> bool:
        """True once every channel has a noise sigma."""
        return bool(np.all(np.isfinite(self.sigma)))

    def step_threshold_counts(self) -> np.ndarray:
        """Current step threshold per channel, counts (NaN until the noise is known)."""
        return np.maximum(self.step_sigmas * self.sigma, self.min_step_counts)

    # -- streaming -----------------------------------------------------------
    def process(
        self, *, t_s: np.ndarray, values: np.ndarray, valid: np.ndarray
    ) -> LoadBlockResult:
        """Feed a block of readings.

        Parameters
        ----------
        t_s : ndarray, shape (m,)
            Stream time of each reading, seconds, increasing.
        values : ndarray, shape (m, n_channels)
            HX711 counts.
        valid : ndarray of bool, shape (m, n_channels)
            Fresh-reading flags (valid bits).

        Returns
        -------
        LoadBlockResult
            Steps and connection changes decided by this block.
        """
        t_s = np.asarray(t_s, dtype=np.float64).reshape(-1)
        values = np.asarray(values, dtype=np.float64).reshape(-1, self.n_channels)
        valid = np.asarray(valid, dtype=bool).reshape(-1, self.n_channels)
        if t_s.size == 0:
            return LoadBlockResult([], [])
        connections = self._track_connections(t_s, valid)
        if not self.noise_ready:
            self._learn_noise(values, valid)
        steps: list[LoadStep] = []
        all_t = np.concatenate([self._hist_t, t_s])
        all_v = np.concatenate([self._hist_v, values])
        all_ok = np.concatenate([self._hist_ok, valid])
        w = self.window
        if all_t.size >= w and self.noise_ready:
            # Windows are scored from the same global reading on, however the
            # stream is cut: the first one ending after the noise is known.
            first_end = self._n_rows - self._hist_t.size + w - 1
            skip = max(0, self._first_scored_row - first_end)
            steps = self._find_steps(all_t, all_v, all_ok, skip)
        self._n_rows += t_s.size
        keep = w - 1
        self._hist_t = all_t[-keep:]
        self._hist_v = all_v[-keep:]
        self._hist_ok = all_ok[-keep:]
        return LoadBlockResult(steps, connections)

    def _learn_noise(self, values: np.ndarray, valid: np.ndarray) -> None:
        take = min(values.shape[0], self.tare_readings - self._n_tare)
        self._tare_rows.append(values[:take])
        self._tare_valid.append(valid[:take])
        self._n_tare += take
        if self._n_tare < self.tare_readings:
            return
        rows = np.concatenate(self._tare_rows)
        ok = np.concatenate(self._tare_valid)
        sigma = np.empty(self.n_channels)
        for ch in range(self.n_channels):
            sigma[ch] = robust_sigma_from_differences(rows[ok[:, ch], ch : ch + 1])[0]
        # A channel that never reported during the tare borrows the median of
        # the others: same HX711, same kind of cell.
        if np.all(~np.isfinite(sigma)):
            sigma[:] = _MIN_SIGMA_COUNTS
        sigma[~np.isfinite(sigma)] = np.nanmedian(sigma)
        self.sigma = np.maximum(sigma, _MIN_SIGMA_COUNTS)
        self._tare_rows.clear()
        self._tare_valid.clear()

    def _track_connections(self, t_s: np.ndarray, valid: np.ndarray) -> list[LoadConnection]:
        out: list[LoadConnection] = []
        need = self.disconnect_readings
        for ch in range(self.n_channels):
            col = valid[:, ch]
            if self.connected[ch] and col.all():
                self._invalid_run[ch] = 0
                continue
            if not self.connected[ch] and not col.any():
                continue
            # Rare path (some reading invalid or a reconnection): walk the
            # run boundaries only, not every reading.
            changes = np.flatnonzero(np.diff(np.concatenate([[col[0]], col]).astype(np.int8)))
            starts = np.concatenate([[0], changes])
            ends = np.concatenate([changes, [col.size]])
            for a, b in zip(starts, ends, strict=True):
                if col[a]:
                    self._invalid_run[ch] = 0
                    if not self.connected[ch]:
                        self.connected[ch] = True
                        out.append(LoadConnection(ch, True, float(t_s[a]), float(t_s[a])))
                else:
                    if self._invalid_run[ch] == 0:
                        self._invalid_since[ch] = t_s[a]
                    before = self._invalid_run[ch]
                    self._invalid_run[ch] += b - a
                    if self.connected[ch] and self._invalid_run[ch] >= need:
                        self.connected[ch] = False
                        decided = t_s[a + (need - before) - 1]
                        self._pending_resets[ch].append(float(self._invalid_since[ch]))
                        out.append(
                            LoadConnection(
                                ch, False, float(self._invalid_since[ch]), float(decided)
                            )
                        )
        out.sort(key=lambda c: (c.t_decided_s, c.level))
        return out

    def _find_steps(
        self, all_t: np.ndarray, all_v: np.ndarray, all_ok: np.ndarray, skip: int
    ) -> list[LoadStep]:
        w = self.window
        win_v = sliding_window_view(all_v, w, axis=0)[skip:]  # (k, n, w)
        win_ok = np.asarray(sliding_window_view(all_ok, w, axis=0).all(axis=2))[skip:]
        win_t = sliding_window_view(all_t, w)[skip:]
        contiguous = (win_t[:, -1] - win_t[:, 0]) <= self._max_window_span_s
        spread = win_v.max(axis=2) - win_v.min(axis=2)
        means = win_v.mean(axis=2)
        tolerance = np.maximum(self.stable_range_sigmas * self.sigma, self.ring_tolerance_counts)
        stable = win_ok & contiguous[:, None] & (spread <= tolerance)
        threshold = self.step_threshold_counts()
        k, n = stable.shape
        rows = np.arange(k)[:, None]
        # For every stable window, the index of the stable window before it
        # on the same channel (-1: the one remembered from earlier blocks).
        last_incl = np.maximum.accumulate(np.where(stable, rows, -1), axis=0)
        prev_idx = np.vstack([np.full((1, n), -1), last_incl[:-1]])
        cols = np.arange(n)[None, :]
        prev_mean = np.where(prev_idx >= 0, means[np.maximum(prev_idx, 0), cols], self.level)
        prev_t = np.where(prev_idx >= 0, win_t[np.maximum(prev_idx, 0), -1], self.level_t)
        for ch in range(n):
            for reset_t in self._pending_resets[ch]:
                # The module was lifted between these windows: its level is
                # re-learnt, never compared across the lift.
                after = np.flatnonzero(stable[:, ch] & (win_t[:, 0] >= reset_t))
                if after.size:
                    prev_mean[after[0], ch] = np.nan
            if self._pending_resets[ch] and stable[:, ch].any():
                last_start = win_t[last_incl[-1, ch], 0]
                self._pending_resets[ch] = [r for r in self._pending_resets[ch] if r > last_start]
        # A step edge makes the windows across it unstable, so the stable
        # windows on either side never share a reading. Overlapping ones that
        # differ are the two sides of an impact spike inside a ring-tolerant window.
        apart = win_t[:, :1] > prev_t
        with np.errstate(invalid="ignore"):
            jumps = stable & apart & (np.abs(means - prev_mean) > threshold[None, :])
        # Rows of "not still" per channel, with enough history to look back
        # over the settling of a step found early in this block.
        restless = np.vstack([self._restless_hist, ~stable])
        offset = self._restless_hist.shape[0]
        steps: list[LoadStep] = []
        for j, ch in zip(*np.nonzero(jumps), strict=True):
            look = restless[max(0, offset + j - self._busy_lookback) : offset + j + 1]
            busy = int(np.count_nonzero(look.any(axis=0))) - int(look[:, ch].any())
            steps.append(
                LoadStep(
                    level=int(ch),
                    t_before_s=float(prev_t[j, ch]),
                    t_settled_s=float(win_t[j, 0]),
                    t_decided_s=float(win_t[j, -1]),
                    delta_counts=float(means[j, ch] - prev_mean[j, ch]),
                    before_counts=float(prev_mean[j, ch]),
                    after_counts=float(means[j, ch]),
                    busy_levels=busy,
                )
            )
        self._restless_hist = restless[-self._busy_lookback :]
        seen = last_incl[-1] >= 0
        self.level = np.where(seen, means[np.maximum(last_incl[-1], 0), np.arange(n)], self.level)
        self.level_t = np.where(seen, win_t[np.maximum(last_incl[-1], 0), -1], self.level_t)
        steps.sort(key=lambda s: (s.t_decided_s, s.level))
        return steps
