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
- (fast view) a plate that rings about its new load is read before it stops:
  from the load a fitted damped oscillation settles to, else from a longer
  window whose halves balance (both in :mod:`dsp.detect.ringing`); a step
  read from a swinging plate gets a second look once the plate is still
  (``LoadStep.revises``);
- a channel whose valid bit stays 0 for ``disconnect_ms`` is disconnected (its
  module is lifted); when it is valid again its level is re-learnt silently.
  A channel that has not sent a valid reading yet is absent (its cell is not
  plugged in), not disconnected: ``reported`` tells which have.

Noise sigmas come from the calibration or from the first ``tare_time_s`` of
the stream (the tower should be empty and quiet then, contracts.md section
3); a cube that lands before that second is over is still a step, decided
once the noise is known. The settled view's may rise above them while the
whole tower rocks for most of the last seconds (:mod:`dsp.detect.playnoise`).
Everything is vectorised per block; results do not depend on how the stream
is cut into blocks.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from dsp.detect.orderstats import median
from dsp.detect.playnoise import PlayNoise
from dsp.detect.ringing import RING_FIT_READINGS, balanced_windows, fitted_windows
from dsp.detect.rocking import RockingComb, RockingPeriod
from dsp.detect.stale import SLOWEST_INTERVAL_S

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
# Why two of its own intervals: a converter slower than the stream (an
# HX711 at 10 readings a second among boards at 80, polled at 80 Hz) is
# fresh every 0.1 s, longer than the 100 ms that tell a lifted module: it
# was taken off and put back at every conversion, and every landing fell
# within the handling guard (cross-check model L, tower 9: no cube size
# learnt, 183 landings missed). Its interval is the last one between two
# fresh readings, up to ``stale.SLOWEST_INTERVAL_S`` (a longer gap is no
# conversion's).
DISCONNECT_OWN_INTERVALS = 2.0
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
# Why 0.6 cube and 4 sigma (the settled view only): on a noisy cell (model
# B: 0.045 g rms under a 0.28 g cube, a sixth of a cube) six sigma is more
# than a cube, and every cube after the plate's first went unseen by both
# views. Over 24-reading windows the difference of two means has a sigma of
# 0.29 sigma: 4 sigma is still 14 of those. The fast view keeps its 12
# sigma: a hand's press just before a lift, decided at once, is a false
# landing there (model A). A plate with no cube of its own is capped by the
# size the other cells lend it (``set_cube_counts``): model B's level 5 of
# tower 2, a cube 4.8 sigma, showed none of its five cubes without. Two
# levels agreeing on a size lend it for the cap (``CubeScale.cap_units``),
# three for the count.
NOISY_CAP_CUBES = 0.6
NOISY_FLOOR_SIGMAS = 4.0
# Why the settled view's bars fall with the square root of its window's
# readings beyond those at the nominal 80 a second: SETTLED_STEP_SIGMAS and
# NOISY_FLOOR_SIGMAS are sigmas of one reading, set for 24-reading windows,
# where they stand 20 and 14 sigmas of the difference of two window means
# over the noise. A converter read faster averages more readings a window
# (96 at 320 a second), and the same bars stand that far over it only at
# sqrt(24/96) of them: model AI's cubes of four sigmas a reading (28 of the
# means' difference) were never seen on plates whose size no other cell
# could lend (+50 landings right, +4 false; no other model's count changed,
# docs/crosscheck.md, run 66). Slower converters keep their bars.
NOMINAL_RATE_HZ = 80.0
# Why 1.5: a step read from a ringing plate is trusted only when the ring's
# whole swing is at most one and a half times the step (its window mean is
# then within a small fraction of the step of the settled load); a plate
# still swinging by several cubes waits for its still windows.
RING_SWING_STEPS = 1.5
# Why 0.1 and 6: the two part fits agree within a tenth of the step when the
# oscillation model holds; a fitted load is trusted while the plate still
# swings by up to six steps (the fit reads through the swing, where the
# balanced windows above need it under one and a half).
RING_FIT_AGREE = 0.1
RING_FIT_SWING_STEPS = 6.0
# A channel's noise is never taken below one count: HX711 readings are
# integers, and a perfectly quiet simulated channel must not make every
# quantisation step look like a load change.
_MIN_SIGMA_COUNTS = 1.0
# Why 5 readings however slow the HX711 runs: an impact's spike is spread by
# the converter's settling over up to four readings of about equal value; a
# window of fewer readings can lie flat on it and pass as a new load. Under
# 20 readings/s, once the converter has shown that it does not (its spikes
# are sharp, :mod:`dsp.detect.converter`), the fast view takes 3 readings
# and the settled view 4: five are half a second at 10/s, slower than a
# quick series. Taken at once, that cost model A's towers, whose converter
# averages its last four conversions, 233 false landings an hour instead of 4.
_MIN_WINDOW_READINGS = 5
_SLOW_RATE_HZ = 20.0
_SHORT_FAST_READINGS = 3
_SHORT_SETTLED_READINGS = 4
# Why 30: the noise sigma comes from the median of the readings' first
# differences, which scatters by a third over the 9 differences one second
# gives at 10 readings/s; a sigma read half too low took a drift of 3 sigma
# for a first cube.
_MIN_TARE_READINGS = 30
# Windows from this many readings on take their extremes by doubling spans
# and their sums from a running sum, when those are exact (``_window_stats``).
_DOUBLING_WINDOW = 8


def short_window_readings(sample_rate_hz: float, *, settled: bool) -> int | None:
    """The window a converter proven not to spread spikes flat may use; None: no shorter.

    Only slow converters (under 20 readings/s) gain from it.
    """
    if sample_rate_hz >= _SLOW_RATE_HZ:
        return None
    return _SHORT_SETTLED_READINGS if settled else _SHORT_FAST_READINGS


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
    busy_mask : int
        Which ones: bit ``k`` set for channel ``k``.
    revises : bool
        A second look at the step decided last on this channel, which was
        read while the plate still swung: the change from the same level
        before, now measured on a still plate.
    noise_counts : float
        The channel's reading noise (sigma, counts) as the processor knew it.
    """

    level: int
    t_before_s: float
    t_settled_s: float
    t_decided_s: float
    delta_counts: float
    before_counts: float
    after_counts: float
    busy_levels: int = 0
    busy_mask: int = 0
    revises: bool = False
    noise_counts: float = float("nan")


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


def _all_in_windows(ok: np.ndarray, w: int, start: int, k: int) -> np.ndarray:
    """For ``k`` windows of ``w`` rows starting at ``start``: whether every flag is set."""
    if ok.all():
        return np.ones((k, ok.shape[1]), dtype=bool)  # (the usual block)
    bad = np.concatenate([np.zeros((1, ok.shape[1]), np.int64), np.cumsum(~ok, axis=0)])
    return np.asarray(bad[start + w : start + w + k] - bad[start : start + k] == 0)


def _window_stats(
    v: np.ndarray, w: int, start: int, k: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per channel, the highest, lowest and mean reading of ``k`` windows of ``w`` rows.

    Window ``j`` is rows ``start + j .. start + j + w - 1``. The same numbers
    as reducing a sliding window view along its window axis, a few times
    faster: ``w`` elementwise steps over ``(k, n)`` arrays instead of a
    reduction over a strided axis for every window. The readings are whole
    HX711 counts, whose sums are exact in any order: the means are the
    reduction's to the bit. (Readings that are not, the settled view's comb
    means, are summed in window order all the same; long windows of whole
    counts take a running sum and doubling spans, a few numpy steps instead
    of three per reading.)
    """
    if w >= _DOUBLING_WINDOW:
        rows = v[start : start + k + w - 1]
        # Long windows (the settled view's 24 readings) of whole counts, as
        # they come while the comb is off: their sums are exact however
        # they are added, so a running sum's differences are the same
        # numbers; maxima and minima are exact anyway. A comb's means (not
        # whole) or a partial sum past 2**53 take the steps below.
        whole = not (np.floor(rows) != rows).any()  # (NaN is not; infinity fails below)
        if whole and np.abs(rows).max(initial=0.0) * rows.shape[0] < 2.0**53:
            # (+ 0.0: a zero sum comes out +0.0, as the steps below give it.)
            running = np.concatenate([np.zeros((1, rows.shape[1])), np.cumsum(rows + 0.0, axis=0)])
            total = running[w : w + k] - running[:k]
            return _sliding(np.maximum, rows, w), _sliding(np.minimum, rows, w), total / w
    first = v[start : start + k]
    high, low, total = first.copy(), first.copy(), first + 0.0
    for i in range(1, w):
        rows = v[start + i : start + i + k]
        np.maximum(high, rows, out=high)
        np.minimum(low, rows, out=low)
        total += rows
    return high, low, total / w


def _converter_interval(before_s: float, fresh_s: float, known_s: float) -> float:
    """A converter's interval between fresh readings at ``before_s`` and ``fresh_s``.

    ``known_s`` (the interval known so far) when the gap is none, or longer
    than a converter's (``stale.SLOWEST_INTERVAL_S``: readings were lost).
    """
    gap = fresh_s - before_s
    return gap if 0.0 < gap <= SLOWEST_INTERVAL_S else known_s


def _sliding(op: np.ufunc, rows: np.ndarray, w: int) -> np.ndarray:
    """``op`` (np.maximum or np.minimum) of each ``w`` consecutive rows, by doubling spans.

    Row ``j`` of the result covers ``rows[j : j + w]``: two spans of the
    largest power of two up to ``w`` overlap to cover it (an extreme is
    the same however often a reading takes part).
    """
    span, acc = 1, rows
    while 2 * span <= w:
        acc = op(acc[:-span], acc[span:])
        span *= 2
    windows = rows.shape[0] - w + 1
    return op(acc[:windows], acc[w - span : w - span + windows])


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
    mad = median(np.abs(diffs - median(diffs, axis=0)), axis=0)
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
    ring_windows : bool
        Also read steps from ringing plates (the fast view).
    min_window_readings : int, optional
        The fewest readings in a stable window (default ``_MIN_WINDOW_READINGS``;
        fewer only on a converter that does not spread spikes flat, see
        :mod:`dsp.detect.converter`).
    noisy_cap_cubes : float, optional
        Cap the noise part of the step threshold at this many cubes (never
        under ``NOISY_FLOOR_SIGMAS``), once a cube's size is known: a channel
        whose noise is a good part of a cube must still show one cube.
    play_noise : bool
        Judge stillness and steps by the noise the cells show while the
        tower rocks as a whole, where that is above the tare's
        (:mod:`dsp.detect.playnoise`), and read the plates through a comb
        over one period of the rocking while it shows one
        (:mod:`dsp.detect.rocking`; the settled view).
    rocking : RockingPeriod, optional
        The tracker of the tower's rocking, shared with another view fed
        the same rows (else its own).
    window_scaled : bool
        Lower the step bars for windows of more readings than at
        ``NOMINAL_RATE_HZ`` (the settled view; see there).
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
        ring_windows: bool = False,
        min_window_readings: int | None = None,
        noisy_cap_cubes: float | None = None,
        play_noise: bool = False,
        rocking: RockingPeriod | None = None,
        window_scaled: bool = False,
    ) -> None:
        if sample_rate_hz <= 0:
            raise ValueError("sample_rate_hz must be positive")
        self.n_channels = int(n_channels)
        self.sample_rate_hz = float(sample_rate_hz)
        least = _MIN_WINDOW_READINGS if min_window_readings is None else int(min_window_readings)
        if least < 2:
            raise ValueError("a stable window needs at least two readings")
        self.window = max(least, round(stable_window_ms * 1e-3 * sample_rate_hz))
        self.ring_windows = bool(ring_windows)
        # Readings kept from one block to the next: enough for the longest window.
        self.fit_readings = max(RING_FIT_READINGS, 2 * self.window + 2)
        self._keep = (self.fit_readings if self.ring_windows else self.window) - 1
        self.stable_range_sigmas = float(stable_range_sigmas)
        self.step_sigmas = float(step_sigmas)
        nominal = max(least, round(stable_window_ms * 1e-3 * NOMINAL_RATE_HZ))
        # Sigmas of one reading per bar (``NOMINAL_RATE_HZ``): 1 up to the nominal window.
        self.window_scale = min(1.0, (nominal / self.window) ** 0.5) if window_scaled else 1.0
        self.noisy_cap_cubes = None if noisy_cap_cubes is None else float(noisy_cap_cubes)
        self.disconnect_readings = max(2, round(disconnect_ms * 1e-3 * sample_rate_hz))
        # The same time without a fresh reading, less half a reading for the
        # converter's clock and the stream's jitter.
        self._disconnect_s = (self.disconnect_readings - 0.5) / sample_rate_hz
        self.tare_readings = max(_MIN_TARE_READINGS, round(tare_time_s * sample_rate_hz))
        # A gap longer than 1.5 periods means readings were lost: windows
        # spanning it are not trusted as stable. (Not a window's whole span:
        # a converter running a few percent slow stretched every 24-reading
        # window past its nominal span plus half a reading, and the settled
        # view never saw its plate still: model H, session 25.)
        self._max_gap_s = 1.5 / sample_rate_hz
        self._gaps: tuple[np.ndarray | None, np.ndarray] = (None, np.zeros(0, dtype=np.int64))
        n = self.n_channels
        self.sigma = np.full(n, np.nan)
        if noise_counts is not None:
            self.sigma = np.maximum(np.asarray(noise_counts, dtype=np.float64), _MIN_SIGMA_COUNTS)
        # The noise learnt at the tare (or given); ``sigma`` may rise above it in play.
        self.tare_sigma = self.sigma.copy()
        # ``noise_ready`` of the ``sigma`` array it was last asked of.
        self._ready_of: np.ndarray | None = None
        self._ready = False
        self._play = PlayNoise(n) if play_noise else None
        self._rocking = (rocking or RockingPeriod(n)) if play_noise else None
        self._comb = RockingComb(n) if play_noise else None
        # The second the play noise now gathers, and the comb it is seen through.
        self._play_second: int | None = None
        self._play_comb = 1
        self._tare_rows: list[np.ndarray] = []
        self._tare_valid: list[np.ndarray] = []
        self._n_tare = 0
        #: Minimum step size per channel in counts, once a cube's size is known
        #: (set by the fusion stage through :meth:`set_min_step_counts`).
        self.min_step_counts = np.zeros(n)
        # The cube size that caps a noisy channel's threshold (0: unknown).
        self._cap_cube_counts = np.zeros(n)
        self.ring_tolerance_counts = np.zeros(n)
        self._hist_t = np.zeros(0)
        self._hist_v = np.zeros((0, n))
        self._hist_ok = np.zeros((0, n), dtype=bool)
        self._hist_read_t = np.zeros((0, n))  # when each kept reading was read
        # The last still (short, tight) window per channel, and whether a
        # ringing window has been taken as a step since.
        self._still_mean = np.full(n, np.nan)
        self._still_t = np.full(n, np.nan)
        self._ring_taken = np.zeros(n, dtype=bool)
        # Whether the last stable window was a ringing one taken as a step, and its size.
        self._last_was_ring = np.zeros(n, dtype=bool)
        self._ring_step_size = np.full(n, np.nan)
        # The last sure window per channel (strictly still or fitted), and
        # whether a step was found since it: a load that walked from one sure
        # level to another through ring-tolerant windows alone is a step too.
        self._sure_mean = np.full(n, np.nan)
        self._sure_t = np.full(n, np.nan)
        self._stepped_since_sure = np.zeros(n, dtype=bool)
        # The last step per channel read from a swinging plate, awaiting a second look.
        self._rev_pending = np.zeros(n, dtype=bool)
        self._rev_before = np.full(n, np.nan)
        self._rev_t_before = np.full(n, np.nan)
        self._rev_after = np.full(n, np.nan)
        self.level = np.full(n, np.nan)  # mean of the last stable window
        self.level_t = np.full(n, np.nan)  # time of its last reading
        self._level_read_t = np.full(n, np.nan)  # when that reading was read
        self.connected = np.ones(n, dtype=bool)
        # Whether each channel has sent a valid reading yet: one that never
        # has is absent (a cell not plugged in), not lifted off the tower.
        self.reported = np.zeros(n, dtype=bool)
        # Whether each channel read one value, exactly, all through the tare.
        self.flat = np.zeros(n, dtype=bool)
        self._invalid_run = np.zeros(n, dtype=np.int64)
        self._invalid_since = np.full(n, np.nan)
        self._fresh_t = np.full(n, -np.inf)
        # Each channel's interval between its last two fresh readings (0: not yet).
        self._own_interval = np.zeros(n)
        self._valid_since = np.full(n, np.nan)
        # Disconnection times not yet followed by a stable window: the first
        # stable window after one re-learns the level instead of comparing.
        self._pending_resets: list[list[float]] = [[] for _ in range(n)]
        # Why two windows back: the other channels are judged over the
        # settling of the step itself, not over the whole drop (a falling
        # cube's edge strikes briefly shake the plates above).
        self._busy_lookback = 2 * self.window
        self._restless_hist = np.zeros((0, n), dtype=bool)
        # When the noise became known: no step is decided before it.
        self._ready_t = -np.inf

    # -- configuration -----------------------------------------------------
    def set_cube_counts(
        self,
        counts: np.ndarray,
        *,
        ring_tolerant: bool = True,
        ring_counts: np.ndarray | None = None,
        cap_counts: np.ndarray | None = None,
    ) -> None:
        """Tell the size of one cube per channel (counts, NaN where unknown).

        Steps smaller than ``STEP_CUBES`` of a cube are then ignored, and a
        window whose spread is under ``RING_CUBES`` of a cube counts as
        stable even while the plate still rings: its mean is already within
        a small fraction of a cube of the settled load, which is all that
        counting whole cubes needs, and the decision comes much sooner.
        ``ring_counts`` (default ``counts``) gives the cube size trusted for
        that: NaN on a level keeps its windows strict. ``cap_counts`` gives
        the size that caps a noisy channel's threshold (``noisy_cap_cubes``)
        where ``counts`` has none: a size borrowed from the other cells may
        lower that cap, never hide a step.
        """
        units = np.nan_to_num(np.abs(np.asarray(counts, dtype=np.float64)), nan=0.0)
        self.min_step_counts = STEP_CUBES * units
        cap = units
        if cap_counts is not None:
            cap = np.where(
                units > 0, units,
                np.nan_to_num(np.abs(np.asarray(cap_counts, dtype=np.float64)), nan=0.0),
            )
        self._cap_cube_counts = cap
        if ring_tolerant:
            ring = units if ring_counts is None else np.nan_to_num(
                np.abs(np.asarray(ring_counts, dtype=np.float64)), nan=0.0
            )
            self.ring_tolerance_counts = RING_CUBES * ring

    @property
    def noise_ready(self) -> bool:
        """True once every channel has a noise sigma."""
        # Asked several times a block; ``sigma`` is replaced, never changed
        # in place, so the answer holds while it is the same array.
        if self._ready_of is not self.sigma:
            self._ready_of, self._ready = self.sigma, bool(np.all(np.isfinite(self.sigma)))
        return self._ready

    @property
    def ready_t_s(self) -> float:
        """Stream time of the reading that completed the noise estimate (-inf until then)."""
        return self._ready_t

    def step_threshold_counts(self) -> np.ndarray:
        """Current step threshold per channel, counts (NaN until the noise is known)."""
        noise = self.step_sigmas * self.sigma * self.window_scale
        if self.noisy_cap_cubes is not None:
            # A channel so noisy that its sigma threshold nears a cube.
            cap = np.where(
                self._cap_cube_counts > 0, self.noisy_cap_cubes * self._cap_cube_counts, np.inf
            )
            noise = np.maximum(
                np.minimum(noise, cap), NOISY_FLOOR_SIGMAS * self.sigma * self.window_scale
            )
        return np.maximum(noise, self.min_step_counts)

    # -- streaming -----------------------------------------------------------
    def process(
        self, *, t_s: np.ndarray, values: np.ndarray, valid: np.ndarray,
        fresh: np.ndarray | None = None, read_t: np.ndarray | None = None,
        shaken: np.ndarray | None = None,
    ) -> LoadBlockResult:
        """Feed a block of readings.

        Parameters
        ----------
        t_s : ndarray, shape (m,)
            Stream time of each reading, seconds, increasing.
        values : ndarray, shape (m, n_channels)
            HX711 counts.
        valid : ndarray of bool, shape (m, n_channels)
            Which readings the windows may use.
        fresh : ndarray of bool, shape (m, n_channels), optional
            The valid bits as the device sent them, where ``valid`` has
            stale readings held (:mod:`dsp.detect.stale`): connections and
            the noise are judged on fresh readings only. Default ``valid``.
        read_t : ndarray, shape (m, n_channels), optional
            When each reading was read, where that is before its row (a
            held stale reading, a reading put on a grid): a step's
            ``t_before_s`` is when its level before was last read. Default
            the row times.
        shaken : ndarray of bool, shape (m,), optional
            Rows the shaking every cell felt at once was taken out of
            (:mod:`dsp.detect.commonshake`): seconds of them count as the
            tower moving as a whole (``play_noise``). Default none.

        Returns
        -------
        LoadBlockResult
            Steps and connection changes decided by this block.
        """
        t_s = np.asarray(t_s, dtype=np.float64).reshape(-1)
        values = np.asarray(values, dtype=np.float64).reshape(-1, self.n_channels)
        valid = np.asarray(valid, dtype=bool).reshape(-1, self.n_channels)
        fresh = valid if fresh is None else np.asarray(fresh, dtype=bool).reshape(valid.shape)
        if t_s.size == 0:
            return LoadBlockResult([], [])
        if read_t is None:
            read_t = np.repeat(t_s[:, None], self.n_channels, axis=1)
        if self._play is None:
            return self._process(t_s, values, valid, fresh, read_t)
        shaken = (np.zeros(t_s.shape, dtype=bool) if shaken is None
                  else np.asarray(shaken, dtype=bool).reshape(-1))
        # Each second's readings are judged by the noise of the seconds
        # before it, however the stream is cut: the block is taken in runs
        # of seconds with one noise, and up to the end of the tare on its own.
        need = self.tare_readings - self._n_tare
        if not self.noise_ready and 0 < need < t_s.size:
            head = self._process_by_play_noise(
                t_s[:need], values[:need], valid[:need], fresh[:need], read_t[:need],
                shaken[:need])
            tail = self._process_by_play_noise(
                t_s[need:], values[need:], valid[need:], fresh[need:], read_t[need:],
                shaken[need:])
            return LoadBlockResult(head.steps + tail.steps, head.connections + tail.connections)
        return self._process_by_play_noise(t_s, values, valid, fresh, read_t, shaken)

    def _process_by_play_noise(
        self, t_s: np.ndarray, values: np.ndarray, valid: np.ndarray, fresh: np.ndarray,
        read_t: np.ndarray, shaken: np.ndarray,
    ) -> LoadBlockResult:
        assert self._play is not None and self._rocking is not None and self._comb is not None
        seconds = PlayNoise.second_of(t_s)
        edges = np.concatenate([[0], np.flatnonzero(seconds[1:] != seconds[:-1]) + 1, [t_s.size]])
        # (first row, noise, comb, seconds between fresh readings) of each
        # run of seconds judged alike.
        runs: list[tuple[int, np.ndarray | None, int, float]] = []
        ready = self.noise_ready
        seen = np.empty_like(values)
        for a, b in zip(edges[:-1], edges[1:], strict=True):
            second = int(seconds[a])
            self._rocking.begin(second)
            if second != self._play_second:
                # A second seen without the comb was the readings themselves:
                # its noise is the tracker's.
                self._play.begin(second, self._rocking.noise_of(self._play_second)
                                 if self._play_comb == 1 else None)
                self._play_second = second
            sigma = self._play.sigma(self.tare_sigma) if ready else None
            comb, interval_s = (
                self._rocking.comb_at(self.tare_sigma, second) if ready else (1, 0.0)
            )
            self._play_comb = comb
            self._rocking.add(t_s[a:b], values[a:b], fresh[a:b])
            seen[a:b] = self._comb.apply(values[a:b], valid[a:b], fresh[a:b], comb)
            # The noise that is left once the comb has taken the rocking out.
            self._play.add(seen[a:b], fresh[a:b], shaken[a:b])
            # (Before the tare's end no second has a noise: one run.)
            if not runs or (
                sigma is not None
                and (runs[-1][1] is None or not np.array_equal(sigma, runs[-1][1])
                     or (comb, interval_s) != runs[-1][2:])
            ):
                runs.append((int(a), sigma, comb, interval_s))
        steps: list[LoadStep] = []
        connections: list[LoadConnection] = []
        bounds = [a for a, _, _, _ in runs] + [t_s.size]
        for (a, sigma, comb, interval_s), b in zip(runs, bounds[1:], strict=True):
            if sigma is not None:
                self.sigma = sigma
            part = self._process(t_s[a:b], seen[a:b], valid[a:b], fresh[a:b], read_t[a:b])
            if comb > 1:
                # A mean over the comb's span lags the readings by half of it.
                # (Measured on model I towers 1-8 with the comb's first
                # version: 68.1 % right this way, 67.3 taking only the
                # settling as late, by the whole span.)
                lag_s = 0.5 * (comb - 1) * interval_s
                part.steps[:] = [
                    replace(step, t_before_s=step.t_before_s - lag_s,
                            t_settled_s=step.t_settled_s - lag_s)
                    for step in part.steps
                ]
            steps += part.steps
            connections += part.connections
        return LoadBlockResult(steps, connections)

    def _process(
        self, t_s: np.ndarray, values: np.ndarray, valid: np.ndarray, fresh: np.ndarray,
        read_t: np.ndarray,
    ) -> LoadBlockResult:
        connections = self._track_connections(t_s, fresh)
        learning = not self.noise_ready
        if learning:
            need = self.tare_readings - self._n_tare
            self._learn_noise(values, fresh)
            if self.noise_ready:
                self._ready_t = float(t_s[min(need, t_s.size) - 1])
        steps: list[LoadStep] = []
        all_t = np.concatenate([self._hist_t, t_s])
        all_v = np.concatenate([self._hist_v, values])
        all_ok = np.concatenate([self._hist_ok, valid])
        all_read_t = np.concatenate([self._hist_read_t, read_t])
        w = self.window
        first = max(w - 1, self._hist_t.size)  # windows ending in this block's readings
        if learning and self.noise_ready:
            # Every reading since the stream began is still here: the windows
            # of the tare's second are scored now, so a cube that landed in
            # it is a step (decided once the noise is known), not the start.
            first = w - 1
        if all_t.size > first and self.noise_ready:
            # Every window is scored once, from the stream's first on,
            # however the stream is cut.
            steps = self._find_steps(all_t, all_v, all_ok, first, all_read_t)
        # Until the noise is known, every reading is kept (see above).
        keep = self._keep if self.noise_ready else all_t.size
        self._hist_t = all_t[-keep:]
        self._hist_v = all_v[-keep:]
        self._hist_ok = all_ok[-keep:]
        self._hist_read_t = all_read_t[-keep:]
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
            readings = rows[ok[:, ch], ch : ch + 1]
            sigma[ch] = robust_sigma_from_differences(readings)[0]
            # A live HX711 never repeats one 24-bit value a second long: a
            # cell stuck at one reading, or an input pinned at a rail.
            self.flat[ch] = readings.shape[0] >= 2 and bool(np.ptp(readings) == 0)
        # A channel that never reported during the tare borrows the median of
        # the others: same HX711, same kind of cell.
        if np.all(~np.isfinite(sigma)):
            sigma[:] = _MIN_SIGMA_COUNTS
        sigma[~np.isfinite(sigma)] = median(sigma[~np.isnan(sigma)])
        self.sigma = np.maximum(sigma, _MIN_SIGMA_COUNTS)
        self.tare_sigma = self.sigma.copy()
        self._tare_rows.clear()
        self._tare_valid.clear()

    def _accept_ringing(
        self,
        all_t: np.ndarray,
        all_v: np.ndarray,
        all_ok: np.ndarray,
        first_end: int,
        still: np.ndarray,
        strict: np.ndarray,
        means: np.ndarray,
        win_t1: np.ndarray,
        threshold: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
        """Ringing windows taken as the new level: the first after each still one that shows a step.

        A window whose readings fit one decaying oscillation gives the load
        it settles to, for a step of at least a sixth of the swing
        (``RING_FIT_SWING_STEPS``); else a balanced window gives its mean,
        for a step of at least two thirds of the swing (``RING_SWING_STEPS``).
        Later ringing windows are not levels (the still windows after the
        ring take over), and a window only the ring tolerance made still
        counts at its oscillation's settled load when that fit holds.
        Returns per row and channel whether taken, the level and the start
        time, the still windows' means so corrected and which were; None
        when nothing was taken or corrected.
        """
        k, n = still.shape
        f = self.fit_readings
        if all_t.size < f or strict.all():
            self._note_still(still, means, win_t1)
            return None
        # Rows too near the stream's start for a long window are not ringing ones.
        pad = max(0, f - 1 - first_end)
        noise = self.sigma
        last_still = np.maximum.accumulate(np.where(still, np.arange(k)[:, None], -1), axis=0)
        # Only windows that could still be taken are tested (a plate held
        # by a hand leaves thousands of restless ones): none on a level
        # re-learnt after a lift, and none before this block's first still
        # window where a ringing one was taken since the last still one.
        resetting = self._resetting_rows(all_t, first_end, still, last_still, win_t1)
        open_rows = ((last_still >= 0) | ~self._ring_taken) & ~resetting
        # Nor a ringing window that reaches back to the still one before it
        # (it mixes two levels: never taken below), tested only to be dropped.
        ref_t = np.where(last_still >= 0, win_t1[np.maximum(last_still, 0)], self._still_t)[pad:]
        rows = np.arange(pad, k)
        with np.errstate(invalid="ignore"):
            ring_apart = all_t[first_end - (2 * self.window - 1) + rows][:, None] > ref_t
            fit_apart = all_t[first_end - (f - 1) + rows][:, None] > ref_t
        (passes, ring_mean, ring_swing), ring_t0 = self._window_tests(
            all_t, all_v, all_ok, first_end + pad, (~still & open_rows)[pad:] & ring_apart,
            2 * self.window,
            lambda v, ch: balanced_windows(v, self.stable_range_sigmas * noise[ch] / 2), 2,
        )
        # Still windows are fitted too: their load may be read through the fit.
        (fitted, fit_level, fit_parts, fit_swing), fit_t0 = self._window_tests(
            all_t, all_v, all_ok, first_end + pad,
            (~strict & still)[pad:] | ((~strict & open_rows)[pad:] & fit_apart), self.fit_readings,
            lambda v, ch: fitted_windows(v, noise[ch]), 3,
        )
        if pad:
            def grow(a: np.ndarray) -> np.ndarray:
                return np.concatenate([np.zeros((pad,) + a.shape[1:], a.dtype), a])

            passes, ring_mean, ring_swing, ring_t0 = (
                grow(passes), grow(ring_mean), grow(ring_swing), grow(ring_t0))
            fitted, fit_level, fit_parts, fit_swing, fit_t0 = (
                grow(fitted), grow(fit_level), grow(fit_parts), grow(fit_swing), grow(fit_t0))
        # A window the ring tolerance let through is as good as its
        # oscillation's settled load when the fit holds: in the trough of a
        # slow ring its mean is not the plate's level.
        cube = self.ring_tolerance_counts / RING_CUBES  # only such windows pass the tolerance
        refit = still & ~strict & fitted & (fit_parts <= RING_FIT_AGREE * cube)
        means = np.where(refit, fit_level, means)
        fitted &= ~still
        accepted = np.zeros((k, n), dtype=bool)
        level = np.zeros((k, n))
        start_t = np.zeros((k, n))
        for ch in np.flatnonzero((passes | fitted).any(axis=0)):
            group, taken = -1, bool(self._ring_taken[ch])
            for r in np.flatnonzero(passes[:, ch] | fitted[:, ch]):
                if resetting[r, ch]:
                    continue  # the level is re-learnt from still windows after a lift
                g = int(last_still[r, ch])
                if g != group and g >= 0:
                    group, taken = g, False
                if taken:
                    continue
                ref = means[g, ch] if g >= 0 else self._still_mean[ch]
                ref_t = win_t1[g] if g >= 0 else self._still_t[ch]
                # A window reaching back over the step edge mixes two levels.
                if fitted[r, ch] and fit_t0[r] > ref_t:
                    delta = abs(fit_level[r, ch] - ref)
                    if (
                        delta > threshold[ch]
                        and fit_parts[r, ch] <= RING_FIT_AGREE * delta
                        and fit_swing[r, ch] <= RING_FIT_SWING_STEPS * delta
                    ):
                        accepted[r, ch] = taken = True
                        level[r, ch], start_t[r, ch] = fit_level[r, ch], fit_t0[r]
                        continue
                if passes[r, ch] and ring_t0[r] > ref_t:
                    delta = abs(ring_mean[r, ch] - ref)
                    if delta > threshold[ch] and ring_swing[r, ch] <= RING_SWING_STEPS * delta:
                        accepted[r, ch] = taken = True
                        level[r, ch], start_t[r, ch] = ring_mean[r, ch], ring_t0[r]
        self._note_still(still, means, win_t1, accepted)
        if not accepted.any() and not refit.any():
            return None
        return accepted, level, start_t, means, refit

    def _resetting_rows(
        self, all_t: np.ndarray, first_end: int, still: np.ndarray, last_still: np.ndarray,
        win_t1: np.ndarray,
    ) -> np.ndarray:
        """Per row and channel: the level is being re-learnt after a lift (no ringing window).

        From the lift on until a still window begun after it, row by row:
        as the block's first rows clear a lift for the rest of it, so a
        block cut after them clears it for the next (``_find_steps``).
        Judged once for the whole block, a lift kept every ringing window of
        its channel out to the block's end, so where a replay's chunks
        ended moved a landing's decision (0.09 s on one of our games).
        """
        k, n = still.shape
        resetting = np.zeros((k, n), dtype=bool)
        if not any(self._pending_resets):
            return resetting
        start = first_end - (self.window - 1)
        win_t0 = all_t[start : start + k]
        last_t0 = np.where(last_still >= 0, win_t0[np.maximum(last_still, 0)], -np.inf)
        for ch, resets in enumerate(self._pending_resets):
            for reset_t in resets:
                resetting[:, ch] |= (win_t1 >= reset_t) & (last_t0[:, ch] < reset_t)
        return resetting

    def _window_tests(
        self,
        all_t: np.ndarray,
        all_v: np.ndarray,
        all_ok: np.ndarray,
        first_end: int,
        candidates: np.ndarray,
        length: int,
        test: Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, ...]],
        n_measures: int,
    ) -> tuple[list[np.ndarray], np.ndarray]:
        """Run a window test on each candidate (row, channel) window of ``length`` readings.

        ``test(readings, channels)`` gets the ``(m, length)`` readings of the
        ``m`` candidate windows and their channels, and returns per window
        whether it passes and the ``n_measures`` numbers it measured. These
        come back as (rows, channels) arrays, zero off the candidates; a
        window over invalid or lost readings never passes. Also returned:
        each row's window start time.
        """
        start = first_end - (length - 1)
        k = candidates.shape[0]
        t0 = all_t[start : start + k]
        if not candidates.any():
            # (A third of the blocks: zeros, without testing no window.)
            return [np.zeros(candidates.shape, dtype=bool)] + [
                np.zeros(candidates.shape) for _ in range(n_measures)], t0
        rows, cols = np.nonzero(candidates)
        gaps = self._gaps_before(all_t)
        contiguous = gaps[start + rows + length - 1] == gaps[start + rows]
        idx = (start + rows)[:, None] + np.arange(length)[None, :]
        v = all_v[idx, cols[:, None]]
        ok = all_ok[idx, cols[:, None]].all(axis=1) & contiguous
        passes, *measures = test(v, cols)
        out = []
        for values in (passes & ok, *measures):
            full = np.zeros(candidates.shape, dtype=values.dtype)
            full[rows, cols] = values
            out.append(full)
        return out, t0

    def _revise_loose_steps(
        self,
        jumps: np.ndarray,
        sure: np.ndarray,
        means: np.ndarray,
        prev_mean: np.ndarray,
        prev_t: np.ndarray,
    ) -> tuple[list[tuple[int, int, float, float]], np.ndarray]:
        """Second looks at steps read from a swinging plate, once its load is sure.

        A step decided on a window that only the ring tolerance (or the
        ringing path) let through is remembered; the first window after it
        whose mean is sure (strictly still, or read through a fitted
        oscillation) measures the change again from the same level before.
        When that differs from the first reading by more than a tenth of a
        cube (or the noise bar), a revision is returned as (row, channel,
        level before, time before). A sure window that moved less than half
        the first reading is that second look, not a step of its own: such
        rows are returned as a mask to drop from the steps.
        """
        k, n = jumps.shape
        loose = jumps & ~sure
        out: list[tuple[int, int, float, float]] = []
        corrections = np.zeros((k, n), dtype=bool)
        looked = np.flatnonzero(loose.any(axis=0) | self._rev_pending)
        if not looked.size:
            return out, corrections  # (most blocks)
        margin = np.maximum(self.stable_range_sigmas * self.sigma, 0.25 * self.min_step_counts)
        for ch in looked:
            rows = np.flatnonzero(jumps[:, ch] | sure[:, ch])
            for r in rows:
                if self._rev_pending[ch] and sure[r, ch]:
                    self._rev_pending[ch] = False
                    moved = abs(means[r, ch] - self._rev_after[ch])
                    first = abs(self._rev_after[ch] - self._rev_before[ch])
                    if not jumps[r, ch] or moved < 0.5 * first:
                        corrections[r, ch] = jumps[r, ch]
                        if moved > margin[ch]:
                            out.append((int(r), int(ch), float(self._rev_before[ch]),
                                        float(self._rev_t_before[ch])))
                        continue
                    # Moved by half the first reading or more: another change.
                if jumps[r, ch]:
                    self._rev_pending[ch] = bool(loose[r, ch])
                    self._rev_before[ch] = prev_mean[r, ch]
                    self._rev_t_before[ch] = prev_t[r, ch]
                    self._rev_after[ch] = means[r, ch]
        return out, corrections

    def _walked_steps(
        self,
        stable: np.ndarray,
        sure: np.ndarray,
        moved: np.ndarray,
        revisions: list[tuple[int, int, float, float]],
        means: np.ndarray,
        t_start: np.ndarray,
        win_t1: np.ndarray,
        threshold: np.ndarray,
    ) -> list[tuple[int, int, float, float]]:
        """Steps between two sure windows that the ring-tolerant ones between them hid.

        A cube that rocks or slides a while as it settles (up to 0.4 s on
        cross-check model C) moves its plate's load up in a ramp; every
        window of it may pass the ring tolerance and differ from the one
        before by less than a step, so no jump is ever seen. A sure window
        whose mean lies a step or more from the last sure one, with no step
        found in between, is that step: returned as (row, channel, level
        before, time before). ``moved``: the rows that stepped (whether or
        not a later look took the step back as a refinement) or were over
        lost or invalid readings (a lift re-learns the level).
        """
        k, n = stable.shape
        rows = np.arange(k)[:, None]
        cols = np.arange(n)[None, :]
        sure = sure & stable
        stepped = moved.copy()
        for j, ch, _, _ in revisions:
            stepped[j, ch] = True
        last_sure = np.maximum.accumulate(np.where(sure, rows, -1), axis=0)
        prev_sure = np.concatenate([np.full((1, n), -1), last_sure[:-1]])
        ref = np.maximum(prev_sure, 0)
        ref_mean = np.where(prev_sure >= 0, means[ref, cols], self._sure_mean[None, :])
        ref_t = np.where(prev_sure >= 0, win_t1[ref], self._sure_t[None, :])
        # Steps found after the reference sure window, up to and with this row.
        count = np.cumsum(stepped, axis=0)
        before = np.where(prev_sure >= 0, count[ref, cols], 0)
        since = count - before + np.where(prev_sure >= 0, 0, self._stepped_since_sure[None, :])
        with np.errstate(invalid="ignore"):
            found = (
                sure & (since == 0) & (t_start > ref_t)
                & (np.abs(means - ref_mean) > threshold[None, :])
            )
        out = [
            (int(j), int(ch), float(ref_mean[j, ch]), float(ref_t[j, ch]))
            for j, ch in zip(*np.nonzero(found), strict=True)
        ]
        last = last_sure[-1]
        seen = last >= 0
        idx = np.maximum(last, 0)
        col = np.arange(n)
        self._sure_mean = np.where(seen, means[idx, col], self._sure_mean)
        self._sure_t = np.where(seen, win_t1[idx], self._sure_t)
        after = np.where(seen, count[-1] - count[idx, col], count[-1])
        self._stepped_since_sure = np.where(seen, after > 0, self._stepped_since_sure | (after > 0))
        return out

    def _refines_ring_step(
        self,
        stable: np.ndarray,
        still: np.ndarray,
        means: np.ndarray,
        prev_idx: np.ndarray,
        prev_mean: np.ndarray,
        jumps: np.ndarray,
    ) -> np.ndarray:
        """Still windows that only refine the level a ringing window stepped to.

        A step read from a ringing plate is off by a small part of itself;
        the first still window after it corrects the level silently, unless
        it moved by half that step or more (another cube).
        """
        k, n = stable.shape
        ring_rows = stable & ~still
        if not ring_rows.any() and not self._last_was_ring.any():
            return np.zeros((k, n), dtype=bool)
        cols = np.arange(n)[None, :]
        after_ring = np.where(prev_idx >= 0, ring_rows[np.maximum(prev_idx, 0), cols],
                              self._last_was_ring[None, :])
        size = np.where(prev_idx >= 0, np.nan, self._ring_step_size[None, :])
        # The size of each ring step taken in this block, looked up at the row after it.
        ring_steps = np.where(jumps & ring_rows, np.abs(means - prev_mean), np.nan)
        size = np.where(prev_idx >= 0, ring_steps[np.maximum(prev_idx, 0), cols], size)
        with np.errstate(invalid="ignore"):
            refine = still & after_ring & (np.abs(means - prev_mean) < 0.5 * size)
        last = np.maximum.accumulate(np.where(stable, np.arange(k)[:, None], -1), axis=0)[-1]
        seen = last >= 0
        idx = np.maximum(last, 0)
        self._last_was_ring = np.where(seen, ring_rows[idx, np.arange(n)], self._last_was_ring)
        self._ring_step_size = np.where(seen, ring_steps[idx, np.arange(n)],
                                        self._ring_step_size)
        return np.asarray(refine)

    def _note_still(
        self, still: np.ndarray, means: np.ndarray, win_t1: np.ndarray,
        accepted: np.ndarray | None = None,
    ) -> None:
        """Remember each channel's last still window; a still window ends a ring's turn."""
        k, n = still.shape
        last = np.maximum.accumulate(np.where(still, np.arange(k)[:, None], -1), axis=0)[-1]
        seen = last >= 0
        cols = np.arange(n)
        self._still_mean = np.where(seen, means[np.maximum(last, 0), cols], self._still_mean)
        self._still_t = np.where(seen, win_t1[np.maximum(last, 0)], self._still_t)
        if accepted is None:
            self._ring_taken &= ~seen
        else:
            last_ring = np.maximum.reduce(np.where(accepted, np.arange(k)[:, None], -1), axis=0)
            self._ring_taken = np.where(seen & (last > last_ring), False, self._ring_taken)
            self._ring_taken |= last_ring > last

    def _track_connections(self, t_s: np.ndarray, valid: np.ndarray) -> list[LoadConnection]:
        out: list[LoadConnection] = []
        for ch in range(self.n_channels):
            col, times = valid[:, ch], t_s
            if not self.reported[ch]:
                if not col.any():
                    continue  # absent so far: nothing to disconnect
                # Readings before its first valid one are no lift: the
                # stream begins with the tower closed (contracts.md).
                first = int(np.argmax(col))
                self.reported[ch] = True
                col, times = col[first:], t_s[first:]
            if self.connected[ch] and col.all():
                self._invalid_run[ch] = 0
                self._note_interval(ch, times[-2] if times.size >= 2 else self._fresh_t[ch],
                                    times[-1])
                self._fresh_t[ch] = times[-1]
                continue
            if not self.connected[ch] and not col.any():
                continue
            self._walk_runs(ch, col, times, out)
        out.sort(key=lambda c: (c.t_decided_s, c.level))
        return out

    def _walk_runs(
        self, ch: int, col: np.ndarray, times: np.ndarray, out: list[LoadConnection]
    ) -> None:
        """The rare path of :meth:`_track_connections`: some reading invalid, or a reconnection.

        Walks the run boundaries only, not every reading, with the
        channel's state in Python numbers until the end (a slow converter
        leaves dozens of runs a block).
        """
        need = self.disconnect_readings
        changes = np.flatnonzero(np.diff(np.concatenate([[col[0]], col]).astype(np.int8)))
        starts = np.concatenate([[0], changes])
        ends = np.concatenate([changes, [col.size]])
        at = times.tolist()
        connected = bool(self.connected[ch])
        invalid_run = int(self._invalid_run[ch])
        invalid_since = float(self._invalid_since[ch])
        fresh_t = float(self._fresh_t[ch])
        own_interval = float(self._own_interval[ch])
        for a, b, ok in zip(starts.tolist(), ends.tolist(), col[starts].tolist(), strict=True):
            if ok:
                invalid_run = 0
                if connected:
                    own_interval = _converter_interval(
                        at[b - 2] if b - a >= 2 else fresh_t, at[b - 1], own_interval
                    )
                fresh_t = at[b - 1]
                if not connected:
                    connected = True
                    out.append(LoadConnection(ch, True, at[a], at[a]))
                continue
            if invalid_run == 0:
                invalid_since = at[a]
            before = invalid_run
            invalid_run += b - a
            if not connected or invalid_run < need:
                continue
            # As many readings missing as a disconnection takes, and as long
            # without a fresh one: a device polling faster than its
            # converters sends runs of stale readings too.
            reached = max(a, a + (need - before) - 1)
            silent_s = max(self._disconnect_s, DISCONNECT_OWN_INTERVALS * own_interval)
            late = times[reached:b] - fresh_t >= silent_s
            if late.any():
                connected = False
                decided = at[reached + int(np.argmax(late))]
                self._pending_resets[ch].append(invalid_since)
                out.append(LoadConnection(ch, False, invalid_since, decided))
        self.connected[ch] = connected
        self._invalid_run[ch] = invalid_run
        self._invalid_since[ch] = invalid_since
        self._fresh_t[ch] = fresh_t
        self._own_interval[ch] = own_interval

    def _note_interval(self, ch: int, before_s: float, fresh_s: float) -> None:
        """Fresh readings at ``before_s`` and ``fresh_s``: the interval of its converter."""
        self._own_interval[ch] = _converter_interval(before_s, fresh_s, self._own_interval[ch])

    def _gaps_before(self, all_t: np.ndarray) -> np.ndarray:
        """How many gaps of lost readings lie before each reading (a window spans none)."""
        # Asked for by each window test of a block: counted once per block.
        if self._gaps[0] is not all_t:
            lost = all_t[1:] - all_t[:-1] > self._max_gap_s
            self._gaps = (all_t, np.concatenate([[0], np.cumsum(lost)]))
        return self._gaps[1]

    def _find_steps(
        self, all_t: np.ndarray, all_v: np.ndarray, all_ok: np.ndarray, first_end: int,
        all_read_t: np.ndarray,
    ) -> list[LoadStep]:
        w = self.window
        start = first_end - (w - 1)
        k = all_t.size - (w - 1) - start
        high, low, means = _window_stats(all_v, w, start, k)
        win_ok = _all_in_windows(all_ok, w, start, k)
        win_t0 = all_t[start : start + k]  # first and last reading of each window
        win_t1 = all_t[start + w - 1 : start + w - 1 + k]
        gaps = self._gaps_before(all_t)
        contiguous = gaps[start + w - 1 : start + w - 1 + k] == gaps[start : start + k]
        spread = high - low
        tolerance = np.maximum(self.stable_range_sigmas * self.sigma, self.ring_tolerance_counts)
        stable = win_ok & contiguous[:, None] & (spread <= tolerance)
        # (k, n) start time of each row's window: a ringing window starts earlier.
        t_start = np.repeat(win_t0[:, None], self.n_channels, axis=1)
        still = stable.copy()
        strict = win_ok & contiguous[:, None] & (spread <= self.stable_range_sigmas * self.sigma)
        # Windows whose mean is the plate's load: strictly still, or read
        # through a fitted oscillation (a ring-tolerant one may sit on a crest).
        sure = strict
        threshold = self.step_threshold_counts()
        if self.ring_windows:
            ring = self._accept_ringing(all_t, all_v, all_ok, first_end, still, strict, means,
                                        win_t1, threshold)
            if ring is not None:
                accepted, ring_mean, ring_t0, means, fit_sure = ring
                sure = strict | fit_sure
                stable |= accepted
                means = np.where(accepted, ring_mean, means)
                t_start = np.where(accepted, ring_t0, t_start)
        k, n = stable.shape
        rows = np.arange(k)[:, None]
        # For every stable window, the index of the stable window before it
        # on the same channel (-1: the one remembered from earlier blocks).
        last_incl = np.maximum.accumulate(np.where(stable, rows, -1), axis=0)
        prev_idx = np.concatenate([np.full((1, n), -1), last_incl[:-1]])
        cols = np.arange(n)[None, :]
        in_block, prev_at = prev_idx >= 0, np.maximum(prev_idx, 0)
        prev_mean = np.where(in_block, means[prev_at, cols], self.level)
        prev_t = np.where(in_block, win_t1[prev_at], self.level_t)
        # The time a step's level before was last read, for its start: a
        # window ending on held stale readings was read before its last row.
        read_t1 = all_read_t[start + w - 1 : start + w - 1 + k]
        prev_read_t = np.where(in_block, read_t1[prev_at, cols], self._level_read_t)
        for ch in range(n):
            for reset_t in self._pending_resets[ch]:
                # The module was lifted between these windows: its level is
                # re-learnt, never compared across the lift.
                after = np.flatnonzero(stable[:, ch] & (t_start[:, ch] >= reset_t))
                if after.size:
                    prev_mean[after[0], ch] = np.nan
            if self._pending_resets[ch] and stable[:, ch].any():
                last_start = t_start[last_incl[-1, ch], ch]
                self._pending_resets[ch] = [r for r in self._pending_resets[ch] if r > last_start]
        # A step edge makes the windows across it unstable, so the stable
        # windows on either side never share a reading. Overlapping ones that
        # differ are the two sides of an impact spike inside a ring-tolerant window.
        apart = t_start > prev_t
        with np.errstate(invalid="ignore"):
            jumps = stable & apart & (np.abs(means - prev_mean) > threshold[None, :])
        # Whatever moved the level, or left a gap in it, since a sure window.
        moved = jumps | ~(win_ok & contiguous[:, None])
        if self.ring_windows:
            jumps &= ~self._refines_ring_step(stable, still, means, prev_idx, prev_mean, jumps)
        revisions: list[tuple[int, int, float, float]] = []
        if self.ring_windows:
            revisions, corrections = self._revise_loose_steps(jumps, sure, means, prev_mean,
                                                              prev_read_t)
            jumps &= ~corrections
        walked: list[tuple[int, int, float, float]] = []
        if self.ring_windows:
            walked = self._walked_steps(stable, sure, moved, revisions, means, t_start,
                                        win_t1, threshold)
        # Rows of "not still" per channel, with enough history to look back
        # over the settling of a step found early in this block. A window
        # over lost readings (a gap in the stream) tells nothing of the
        # plates: every channel has it, and no hand made it.
        restless = np.concatenate([self._restless_hist, ~still & contiguous[:, None]])
        offset = self._restless_hist.shape[0]

        def step(j: int, ch: int, before: float, t_before: float, *, revises: bool = False
                 ) -> LoadStep:
            busy, mask = 0, 0
            if not revises:
                look = restless[max(0, offset + j - self._busy_lookback) : offset + j + 1]
                others = np.asarray(look.any(axis=0))
                others[ch] = False
                busy = int(np.count_nonzero(others))
                mask = int(np.dot(others, 1 << np.arange(n, dtype=np.int64)))
            return LoadStep(
                level=int(ch),
                t_before_s=float(t_before),
                t_settled_s=float(t_start[j, ch]),
                t_decided_s=max(float(win_t1[j]), self._ready_t),
                delta_counts=float(means[j, ch] - before),
                before_counts=float(before),
                after_counts=float(means[j, ch]),
                busy_levels=busy,
                busy_mask=mask,
                revises=revises,
                noise_counts=float(self.sigma[ch]),
            )

        steps = [
            step(int(j), int(ch), float(prev_mean[j, ch]), float(prev_read_t[j, ch]))
            for j, ch in zip(*np.nonzero(jumps), strict=True)
        ]
        steps += [step(j, ch, before, t_before) for j, ch, before, t_before in walked]
        steps += [step(j, ch, before, t_before, revises=True)
                  for j, ch, before, t_before in revisions]
        self._restless_hist = restless[-self._busy_lookback :]
        seen = last_incl[-1] >= 0
        self.level = np.where(seen, means[np.maximum(last_incl[-1], 0), np.arange(n)], self.level)
        self.level_t = np.where(seen, win_t1[np.maximum(last_incl[-1], 0)], self.level_t)
        self._level_read_t = np.where(
            seen, read_t1[np.maximum(last_incl[-1], 0), np.arange(n)], self._level_read_t
        )
        steps.sort(key=lambda s: (s.t_decided_s, s.level))
        return steps
