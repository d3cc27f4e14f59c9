"""The whole streaming detector: piezo chain, load channel, fusion.

See :mod:`dsp.detect` for the public API and an example.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, replace

import numpy as np

from dsp.detect.acoustic import AcousticLevelModel
from dsp.detect.calibration import DetectorCalibration
from dsp.detect.commonshake import CommonShakeCanceller
from dsp.detect.converter import SpikeShapes
from dsp.detect.cubes import CubeScale
from dsp.detect.discgains import DiscGains
from dsp.detect.events import Event
from dsp.detect.fusion import Fusion
from dsp.detect.loadcell import (
    DEFAULT_STABLE_WINDOW_MS,
    DEFAULT_STEP_SIGMAS,
    NOISY_CAP_CUBES,
    SETTLED_STEP_SIGMAS,
    SETTLED_WINDOW_MS,
    LoadChannelProcessor,
    LoadConnection,
    LoadStep,
    short_window_readings,
)
from dsp.detect.loadfront import LoadFrontEnd, LoadRows
from dsp.detect.memory import FusionStats
from dsp.detect.onsets import FAINT_THRESHOLD_DB
from dsp.detect.piezo import PiezoChain, PlateBusy, TimedImpact
from dsp.detect.rocking import RockingPeriod
from dsp.detect.slowshake import SlowShakeCanceller

# Why 2.5 s: the device sends piezo and load interleaved within milliseconds;
# a stream silent for a second is absent (or stalled) and must not hold back
# decisions on the other.
_STREAM_ABSENT_S = 2.5
# Why 2 s: the load processors are told a newly learnt cube size only at
# multiples of this stream time, from what the fusion knew there, so a
# replay gives the same events however its bytes are chunked, and the same
# as the live app, which feeds a few readings at a time. A size learnt from
# a level's first landing reaches them within 2 s (the fusion counts with it
# at once); every handover costs a call per load processor, and replays
# feed the detector in slices on the same grid (hostapp.pipeline).
UNIT_HANDOVER_S = 2.0


@dataclass(frozen=True)
class _LoadProgress:
    t_s: float
    settled_levels: np.ndarray
    settled_times: np.ndarray


@dataclass(frozen=True)
class _SettledStep:
    step: LoadStep


@dataclass(frozen=True)
class _CellsDeadAtTare:
    """Load channels that read nothing through the tare: not plugged in, or stuck at one value."""

    levels: tuple[int, ...]


@dataclass(frozen=True)
class DetectorDiagnostics:
    """What went on inside, for stderr and the eval report."""

    fusion: FusionStats
    load_noise_counts: tuple[float, ...]
    cube_counts: tuple[float, ...]
    piezo_filled_s: float
    piezo_gaps: int
    piezo_dropped_sets: int
    acoustic_learnt: int
    load_rows_dropped: int = 0
    rocking_hz: float = 0.0  # the tower's rocking, as the settled view combs it out (0: none)
    #: Each disc's gain as equalised, dB (``discgains``; 0: left alone).
    disc_gains_db: tuple[float, ...] = ()
    #: The mains harmonics notched out of the discs' signals (``hum``), Hz.
    hum_hz: tuple[float, ...] = ()
    #: Stream seconds whose load rows had a shaking common to every cell
    #: taken out (``commonshake``: a train's floor, a shaken table).
    shaken_s: float = 0.0
    #: Stream seconds whose load rows had a slow swaying common to every
    #: cell taken out (``slowshake``: a boat's heave).
    swayed_s: float = 0.0


class Detector:
    """Streaming landing detector over piezo and load blocks.

    Blocks of either stream may be of any size and interleaved in any order,
    with one limit: a stream that lags the other by more than
    ``_STREAM_ABSENT_S`` of stream time is taken for absent (an audio source
    has no load cells, a stalled reader must not hold the other back), and
    the other is decided without it. Feed both streams within that of each
    other (``hostapp.pipeline`` feeds replays in slices of a second).

    Parameters
    ----------
    n_levels : int
        Levels of the tower; piezo and load channels are ``0..n_levels-1``.
    piezo_rate_hz, load_rate_hz : float
        Sample rates from HELLO (or the audio interface).
    calibration : DetectorCalibration, optional
        What is known about this tower; without it everything is learnt.
    """

    def __init__(
        self,
        *,
        n_levels: int = 8,
        piezo_rate_hz: float,
        load_rate_hz: float,
        calibration: DetectorCalibration | None = None,
    ) -> None:
        cal = calibration or DetectorCalibration()
        self.n_levels = int(n_levels)
        self.calibration = cal
        self.piezo = PiezoChain(
            n_channels=n_levels, sample_rate_hz=piezo_rate_hz,
            faint_threshold_db=FAINT_THRESHOLD_DB,
        )

        # The processors are built for the rate the load rows come at, once
        # the stream's first rows have shown it (``loadfront``).
        self.load_front = LoadFrontEnd(n_channels=n_levels, hello_rate_hz=load_rate_hz)
        self.common_shake: CommonShakeCanceller | None = None
        self.slow_shake: SlowShakeCanceller | None = None
        self._build_load_views(load_rate_hz)
        self.scale = CubeScale(n_levels=n_levels, cube_counts=cal.cube_counts())
        self.acoustic = AcousticLevelModel(
            n_levels=n_levels, signatures=cal.acoustic_signatures, counts=cal.acoustic_counts
        )
        self.fusion = Fusion(
            n_levels=n_levels, scale=self.scale, acoustic=self.acoustic,
            impact_delay_s=self.piezo.decision_delay_s,
        )
        # Where the ear works alone, strikes reach the fusion as if every disc
        # heard alike (``discgains``): unless a calibration's signatures
        # already know this tower's discs.
        self.disc_gains = DiscGains(n_levels)
        self._equalise_discs = cal.acoustic_signatures is None
        self._now = -np.inf
        self._piezo_done = -np.inf
        self._load_done = -np.inf
        self._piezo_first = np.inf
        self._load_first = np.inf
        self._dead_cells_told = False
        # Evidence waits here until both streams have passed its time, so the
        # fusion sees it in time order however piezo and load blocks are
        # interleaved by the caller.
        self._queue: list[tuple[float, int, object]] = []
        self._seq = 0
        self._unit_version = -1
        self._sync_unit()
        # Load readings wait here until the fusion has reached the handover
        # time before them (UNIT_HANDOVER_S); those up to ``_unit_until`` go
        # to the processors at once, with the cube size handed over last.
        self._load_waiting: list[LoadRows] = []
        self._load_received = -np.inf
        self.load_rows_dropped = 0  # load readings out of time order (damage)
        self._unit_until = -np.inf

    def _build_load_views(self, rate_hz: float) -> None:
        """The load processors for rows coming ``rate_hz`` a second."""
        cal, n_levels = self.calibration, self.n_levels
        # The settled views take the same rows: one tracker of the rocking.
        self.rocking = rocking = RockingPeriod(n_levels)

        def view(*, settled: bool, short: bool = False) -> LoadChannelProcessor:
            # The fast view reads ringing plates too; the settled view takes
            # long, noise-tight windows only: slow, but not fooled by hands or
            # handling, it confirms or corrects the fast view.
            return LoadChannelProcessor(
                n_channels=n_levels,
                sample_rate_hz=rate_hz,
                noise_counts=cal.load_noise_counts,
                stable_window_ms=SETTLED_WINDOW_MS if settled else DEFAULT_STABLE_WINDOW_MS,
                step_sigmas=SETTLED_STEP_SIGMAS if settled else DEFAULT_STEP_SIGMAS,
                ring_windows=not settled,
                min_window_readings=(
                    short_window_readings(rate_hz, settled=settled) if short else None
                ),
                noisy_cap_cubes=NOISY_CAP_CUBES if settled else None,
                play_noise=settled,
                rocking=rocking if settled else None,
                window_scaled=settled,
            )

        self.load = view(settled=False)
        self.load_settled = view(settled=True)
        # A slow converter's views with shorter windows, run alongside: their
        # steps are taken instead once the converter has shown that it does
        # not spread an impact's spike flat (from ``spikes.short_windows_since_s``).
        self.spikes: SpikeShapes | None = None
        self.load_short: LoadChannelProcessor | None = None
        self.load_settled_short: LoadChannelProcessor | None = None
        if short_window_readings(rate_hz, settled=False) is not None:
            self.spikes = SpikeShapes(n_levels)
            self.load_short = view(settled=False, short=True)
            self.load_settled_short = view(settled=True, short=True)

    def _sync_unit(self) -> None:
        if self.scale.version == self._unit_version:
            return
        self._unit_version = self.scale.version
        for fast in (self.load, self.load_short):
            if fast is not None:
                fast.set_cube_counts(self.scale.units(), ring_counts=self.scale.trusted_units())
        for settled in (self.load_settled, self.load_settled_short):
            if settled is not None:
                # A noisy cell's threshold is capped by the size the other
                # cells show until it has its own (``NOISY_CAP_CUBES``).
                settled.set_cube_counts(
                    self.scale.settled_units(), ring_tolerant=False,
                    cap_counts=self.scale.cap_units(),
                )

    def feed_piezo(self, t0_s: float, samples: np.ndarray) -> list[Event]:
        """Feed piezo sample sets (shape ``(n, n_levels)``) starting at stream time ``t0_s``."""
        if len(samples):
            self._piezo_first = min(self._piezo_first, t0_s)
            self.fusion.piezo_since_s = min(self.fusion.piezo_since_s, t0_s)
        for imp in self.piezo.process(t0_s, samples):
            self._push(imp.t_s + self.piezo.decision_delay_s, imp)
        for change in self.piezo.take_busy_changes():
            self._push(change.t_s, change)
        self._piezo_done = max(self._piezo_done, self.piezo.t_done_s)
        return self._advance()

    def feed_load(self, t_s: np.ndarray, values: np.ndarray, valid: np.ndarray) -> list[Event]:
        """Feed load readings: times ``(m,)``, counts and valid flags ``(m, n_levels)``.

        A reading not after every one fed before it (a damaged stream's
        stray time stamp, a message sent twice) is dropped and counted, as
        the piezo chain drops sets it already has: the load views read
        consecutive conversions in time order.
        """
        t_s = np.asarray(t_s, dtype=np.float64).reshape(-1)
        if t_s.size == 0:
            return []
        latest = np.maximum.accumulate(np.concatenate([[self._load_received], t_s[:-1]]))
        in_order = t_s > latest
        if not in_order.all():
            self.load_rows_dropped += int(t_s.size - np.count_nonzero(in_order))
            t_s = t_s[in_order]
            values = np.asarray(values)[in_order]
            valid = np.asarray(valid)[in_order]
            if t_s.size == 0:
                return self._advance()
        self._load_first = min(self._load_first, float(t_s[0]))
        self._load_received = max(self._load_received, float(t_s[-1]))
        return self._take_load(self.load_front.process(t_s, values, valid))

    def _take_load(self, rows: LoadRows | None) -> list[Event]:
        if rows is None:
            return self._advance()
        if self.load_front.rate_hz != self.load.sample_rate_hz:
            # The rows come at another rate than HELLO said: processors for it.
            self._build_load_views(self.load_front.rate_hz)
            self._unit_version = -1
            self._sync_unit()
        rows = self._without_common_shaking(rows)
        t_s = rows.t_s
        self.fusion.load_coverage.add(t_s)
        self.fusion.load_history.add(t_s, rows.values, rows.valid, rows.fresh)
        self._load_waiting.append(rows)
        self._process_load()
        return self._advance()

    def _without_common_shaking(self, rows: LoadRows) -> LoadRows:
        """The rows with the shaking every cell feels at once taken out.

        Slow swaying first (``slowshake``: a boat's heave; judged on the
        rows as read, where a faster shaking's remainder cannot pass for
        it), then fast shaking (``commonshake``: a train's floor).
        """
        rate_hz = self.load_front.rate_hz
        if self.common_shake is None or self.common_shake.rate_hz != rate_hz:
            self.common_shake = CommonShakeCanceller(n_channels=self.n_levels, rate_hz=rate_hz)
            self.slow_shake = SlowShakeCanceller(n_channels=self.n_levels, rate_hz=rate_hz)
        assert self.slow_shake is not None
        slow = self.slow_shake.process(rows.values, rows.valid, rows.fresh)
        values = self.common_shake.process(slow, rows.valid, rows.fresh)
        if values is rows.values:
            return rows
        shaken = self.common_shake.cleaned | self.slow_shake.cleaned
        return replace(rows, values=values, shaken=shaken)

    def _process_load(self) -> None:
        """Run the load processors over the waiting readings up to ``_unit_until``."""
        if not self._load_waiting:
            return
        t_s = np.concatenate([rows.t_s for rows in self._load_waiting])
        cut = int(np.searchsorted(t_s, self._unit_until, side="right"))
        if cut == 0:
            self._note_handover()
            return
        waiting = LoadRows.joined(self._load_waiting)
        self._load_waiting = [waiting.after(cut)] if cut < t_s.size else []
        rows = waiting.before(cut)
        t_s, values = rows.t_s, rows.values
        result = self.load.process(**rows.given())
        for conn in result.connections:
            self._push(conn.t_decided_s, conn)
        if not self._dead_cells_told and self.load.noise_ready:
            # A level whose cell sent no reading through the tare, or one
            # value only, has no load to read: its cubes are judged by ear
            # from the start.
            self._dead_cells_told = True
            dead = ~self.load.reported | self.load.flat
            if dead.any():
                levels = tuple(int(k) for k in np.flatnonzero(dead))
                self._push(self.load.ready_t_s, _CellsDeadAtTare(levels))
        settled = self.load_settled.process(**rows.given())
        fast_steps, settled_steps = result.steps, settled.steps
        if self.spikes is not None and self.load_short and self.load_settled_short:
            # Steps begun once short windows are safe come from the short views.
            self.spikes.process(t_s, values, rows.valid, rows.fresh)
            since, until = self.spikes.short_windows_since_s, self.spikes.short_windows_until_s
            short = self.load_short.process(**rows.given())
            settled_short = self.load_settled_short.process(**rows.given())

            def short_window(step: LoadStep) -> bool:
                return since <= step.t_before_s < until

            fast_steps = [s for s in fast_steps if not short_window(s)] + [
                s for s in short.steps if short_window(s)
            ]
            settled_steps = [s for s in settled_steps if not short_window(s)] + [
                s for s in settled_short.steps if short_window(s)
            ]
        for step in fast_steps:
            self._push(step.t_decided_s, step)
        for step in settled_steps:
            self._push(step.t_decided_s, _SettledStep(step))
        self._load_done = max(self._load_done, float(t_s[-1]))
        self._note_handover()

    def _note_handover(self) -> None:
        # Readings after the next handover time wait, so the load stream is
        # done up to it: the fusion may decide up to there.
        handover = self._next_handover()
        if handover is not None:
            self._load_done = max(self._load_done, handover)

    def _next_handover(self) -> float | None:
        """The handover time the fusion must reach before the next waiting reading."""
        if not self._load_waiting:
            return None
        first = float(self._load_waiting[0].t_s[0])
        # The last boundary strictly before that reading: every reading up
        # to it has been processed.
        return (np.ceil(first / UNIT_HANDOVER_S) - 1.0) * UNIT_HANDOVER_S

    def _push_progress(self, t_s: float) -> None:
        """The settled levels as of ``t_s``, for the fusion's zero tracking."""
        self._push(
            t_s,
            _LoadProgress(t_s, self.load_settled.level.copy(), self.load_settled.level_t.copy()),
        )

    def _push(self, t_s: float, item: object) -> None:
        heapq.heappush(self._queue, (t_s, self._seq, item))
        self._seq += 1

    def _clock(self) -> float:
        piezo, load = self._piezo_done, self._load_done
        received = max(load, self._load_received)
        # A stream that has fallen silent for a while (no load channels on an
        # audio source, a stalled piezo) no longer holds the other back. One
        # not seen yet counts from when the other began, so that the first
        # block of one stream is not taken for the other being absent.
        start = min(self._piezo_first, self._load_first)
        if max(received, start) < piezo - _STREAM_ABSENT_S:
            return piezo
        if max(piezo, start) < received - _STREAM_ABSENT_S:
            return load
        return min(piezo, load)

    def _advance(self, until_s: float | None = None) -> list[Event]:
        out: list[Event] = []
        while True:
            now = self._clock() if until_s is None else until_s
            handover = self._next_handover()
            if handover is None or now < handover:
                out.extend(self._drain(now))
                return out
            # Every reading up to the handover time is in: the fusion decides
            # up to there, and the readings after it are processed with the
            # cube size it knows then.
            self._push_progress(handover)
            out.extend(self._drain(handover))
            self._sync_unit()
            self._unit_until = handover + UNIT_HANDOVER_S
            self._process_load()

    def _drain(self, now: float) -> list[Event]:
        """Deliver the evidence due by ``now`` in time order and decide up to ``now``."""
        out: list[Event] = []
        while self._queue and self._queue[0][0] <= now:
            t, _, item = heapq.heappop(self._queue)
            if isinstance(item, PlateBusy):
                # Asked about only up to each decision's own time, so it
                # needs no decision made before it is taken.
                self.fusion.add_busy(item)
                continue
            # Decide what was due before this evidence arrived, then take it.
            out.extend(self._decide_until(t))
            out.extend(self._deliver(t, item))
        if now > self._now:
            self._now = now
            out.extend(self._decide_until(now))
        return out

    def _decide_until(self, t: float) -> list[Event]:
        """Let the fusion decide, at its own times, everything due before ``t``, then at ``t``.

        Steps, second looks and drops fall due at times of their own; each is
        judged at its time, with what was known then and after what fell due
        before it, not at whatever time the next evidence or the end of a
        block happens to come (steps due together are judged in the order
        they settled, which would change what each one sees).
        """
        out: list[Event] = []
        last = -np.inf
        while (due := self.fusion.next_due()) is not None and last < due < t:
            out.extend(self.fusion.advance(due))
            last = due
        out.extend(self.fusion.advance(t))
        return out

    def _deliver(self, t: float, item: object) -> list[Event]:
        if isinstance(item, TimedImpact):
            if self._equalise_discs and not self.fusion.load_coverage.present(item.t_s):
                item = self.disc_gains.equalise(item)
            return self.fusion.add_impacts([item], known_s=t)
        if isinstance(item, LoadStep):
            return self.fusion.add_load([item], [], t)
        if isinstance(item, LoadConnection):
            return self.fusion.add_load([], [item], t)
        if isinstance(item, _SettledStep):
            return self.fusion.add_settled_step(item.step)
        if isinstance(item, _CellsDeadAtTare):
            self.fusion.add_dead_cells(item.levels)
            return []
        if isinstance(item, _LoadProgress):
            left = self.fusion.track_settled_levels(
                item.settled_levels, item.settled_times, item.t_s
            )
            return left + self.fusion.add_load([], [], t)
        return []

    def finish(self) -> list[Event]:
        """Decide whatever is pending at the end of the stream."""
        for imp in self.piezo.flush():
            self._push(imp.t_s + self.piezo.decision_delay_s, imp)
        end = max(self._piezo_done, self._load_received)
        if not np.isfinite(end):
            return []
        out: list[Event] = []
        if self.load_front.measuring:
            out.extend(self._take_load(self.load_front.flush()))
        out.extend(self._advance(until_s=end))
        if np.isfinite(self._load_done):
            self._push_progress(self._load_done)
            out.extend(self._drain(end))
        out.extend(self.fusion.flush(end))
        return out

    @property
    def disc_gains_db(self) -> tuple[float, ...]:
        """Each disc's gain as the ear equalises it, dB (``discgains``; 0: left alone)."""
        return tuple(float(g) for g in self.disc_gains.gain_db)

    @property
    def hum_hz(self) -> tuple[float, ...]:
        """The mains harmonics notched out of the discs' signals, Hz (``hum``; none: no hum)."""
        return self.piezo.conditioner.hum_hz

    def diagnostics(self) -> DetectorDiagnostics:
        """Counters and learnt quantities so far."""
        return DetectorDiagnostics(
            fusion=self.fusion.stats,
            load_noise_counts=tuple(float(s) for s in self.load.sigma),
            cube_counts=tuple(float(u) for u in self.scale.units()),
            piezo_filled_s=self.piezo.filled_s,
            piezo_gaps=self.piezo.gaps,
            piezo_dropped_sets=self.piezo.dropped_sets,
            load_rows_dropped=self.load_rows_dropped,
            acoustic_learnt=self.acoustic.n_learnt,
            rocking_hz=self.rocking.rocking_hz,
            disc_gains_db=self.disc_gains_db,
            hum_hz=self.hum_hz,
            shaken_s=self.shaken_s,
            swayed_s=self.swayed_s,
        )

    @property
    def shaken_s(self) -> float:
        """Stream seconds of load rows with the common shaking taken out."""
        shake = self.common_shake
        return 0.0 if shake is None else shake.engaged_rows / shake.rate_hz

    @property
    def swayed_s(self) -> float:
        """Stream seconds of load rows with the common slow swaying taken out."""
        sway = self.slow_shake
        return 0.0 if sway is None else sway.engaged_rows / sway.rate_hz

    def shaking(self) -> bool:
        """Whether the load cells feel a shaking or swaying common to all now, taken out."""
        return any(c is not None and c.engaged for c in (self.common_shake, self.slow_shake))

    def learnt_calibration(self) -> DetectorCalibration:
        """What the detector has learnt, as a calibration to start from next time."""
        sig = self.acoustic.signatures()
        return DetectorCalibration(
            tare_counts=self.calibration.tare_counts,
            counts_per_gram=self.calibration.counts_per_gram,
            cube_mass_g=self.calibration.cube_mass_g,
            load_noise_counts=tuple(float(s) for s in self.load.sigma)
            if self.load.noise_ready
            else None,
            acoustic_signatures=tuple(tuple(float(v) for v in row) for row in sig),
            acoustic_counts=tuple(float(c) for c in self.acoustic.counts),
        )
