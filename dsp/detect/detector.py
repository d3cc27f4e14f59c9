"""The whole streaming detector: piezo chain, load channel, fusion.

See :mod:`dsp.detect` for the public API and an example.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

import numpy as np

from dsp.detect.acoustic import AcousticLevelModel
from dsp.detect.calibration import DetectorCalibration
from dsp.detect.cubes import CubeScale
from dsp.detect.events import Event
from dsp.detect.fusion import Fusion, FusionStats
from dsp.detect.loadcell import (
    SETTLED_STEP_SIGMAS,
    SETTLED_WINDOW_MS,
    LoadChannelProcessor,
    LoadConnection,
    LoadStep,
)
from dsp.detect.piezo import PiezoChain, TimedImpact

# Why 2.5 s: the device sends piezo and load interleaved within milliseconds;
# a stream silent for a second is absent (or stalled) and must not hold back
# decisions on the other.
_STREAM_ABSENT_S = 2.5


@dataclass(frozen=True)
class _LoadProgress:
    t_s: float
    settled_levels: np.ndarray


@dataclass(frozen=True)
class _SettledStep:
    step: LoadStep


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


class Detector:
    """Streaming landing detector over piezo and load blocks.

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
        self.piezo = PiezoChain(n_channels=n_levels, sample_rate_hz=piezo_rate_hz)
        self.load = LoadChannelProcessor(
            n_channels=n_levels,
            sample_rate_hz=load_rate_hz,
            noise_counts=cal.load_noise_counts,
            ring_windows=True,
        )
        # The settled view: long, noise-tight windows only. Slow, but not
        # fooled by hands or handling; it confirms or corrects the fast view.
        self.load_settled = LoadChannelProcessor(
            n_channels=n_levels,
            sample_rate_hz=load_rate_hz,
            noise_counts=cal.load_noise_counts,
            stable_window_ms=SETTLED_WINDOW_MS,
            step_sigmas=SETTLED_STEP_SIGMAS,
        )
        self.scale = CubeScale(n_levels=n_levels, cube_counts=cal.cube_counts())
        self.acoustic = AcousticLevelModel(
            n_levels=n_levels, signatures=cal.acoustic_signatures, counts=cal.acoustic_counts
        )
        self.fusion = Fusion(
            n_levels=n_levels, scale=self.scale, acoustic=self.acoustic,
            impact_delay_s=self.piezo.decision_delay_s,
        )
        self._now = -np.inf
        self._piezo_done = -np.inf
        self._load_done = -np.inf
        self._piezo_first = np.inf
        self._load_first = np.inf
        # Evidence waits here until both streams have passed its time, so the
        # fusion sees it in time order however piezo and load blocks are
        # interleaved by the caller.
        self._queue: list[tuple[float, int, object]] = []
        self._seq = 0
        self._unit_version = -1
        self._sync_unit()

    def _sync_unit(self) -> None:
        if self.scale.version == self._unit_version:
            return
        self._unit_version = self.scale.version
        self.load.set_cube_counts(self.scale.units(), ring_counts=self.scale.trusted_units())
        self.load_settled.set_cube_counts(self.scale.units(), ring_tolerant=False)

    def feed_piezo(self, t0_s: float, samples: np.ndarray) -> list[Event]:
        """Feed piezo sample sets (shape ``(n, n_levels)``) starting at stream time ``t0_s``."""
        if len(samples):
            self._piezo_first = min(self._piezo_first, t0_s)
        for imp in self.piezo.process(t0_s, samples):
            self._push(imp.t_s + self.piezo.decision_delay_s, imp)
        self._piezo_done = max(self._piezo_done, self.piezo.t_done_s)
        return self._advance()

    def feed_load(self, t_s: np.ndarray, values: np.ndarray, valid: np.ndarray) -> list[Event]:
        """Feed load readings: times ``(m,)``, counts and valid flags ``(m, n_levels)``."""
        t_s = np.asarray(t_s, dtype=np.float64).reshape(-1)
        if t_s.size == 0:
            return []
        self._load_first = min(self._load_first, float(t_s[0]))
        self.fusion.load_coverage.add(t_s)
        self.fusion.load_history.add(
            t_s, np.asarray(values).reshape(t_s.size, -1), np.asarray(valid).reshape(t_s.size, -1)
        )
        result = self.load.process(t_s=t_s, values=values, valid=valid)
        for conn in result.connections:
            self._push(conn.t_decided_s, conn)
        for step in result.steps:
            self._push(step.t_decided_s, step)
        settled = self.load_settled.process(t_s=t_s, values=values, valid=valid)
        for step in settled.steps:
            self._push(step.t_decided_s, _SettledStep(step))
        self._load_done = max(self._load_done, float(t_s[-1]))
        self._push(
            self._load_done, _LoadProgress(self._load_done, self.load_settled.level.copy())
        )
        return self._advance()

    def _push(self, t_s: float, item: object) -> None:
        heapq.heappush(self._queue, (t_s, self._seq, item))
        self._seq += 1

    def _clock(self) -> float:
        piezo, load = self._piezo_done, self._load_done
        # A stream that has fallen silent for a while (no load channels on an
        # audio source, a stalled piezo) no longer holds the other back. One
        # not seen yet counts from when the other began, so that the first
        # block of one stream is not taken for the other being absent.
        start = min(self._piezo_first, self._load_first)
        if max(load, start) < piezo - _STREAM_ABSENT_S:
            return piezo
        if max(piezo, start) < load - _STREAM_ABSENT_S:
            return load
        return min(piezo, load)

    def _advance(self, until_s: float | None = None) -> list[Event]:
        now = self._clock() if until_s is None else until_s
        out: list[Event] = []
        while self._queue and self._queue[0][0] <= now:
            t, _, item = heapq.heappop(self._queue)
            # Decide what was due before this evidence arrived, then take it.
            out.extend(self.fusion.advance(t))
            out.extend(self._deliver(t, item))
        if now > self._now:
            self._now = now
            out.extend(self.fusion.advance(now))
        self._sync_unit()
        return out

    def _deliver(self, t: float, item: object) -> list[Event]:
        if isinstance(item, TimedImpact):
            return self.fusion.add_impacts([item], known_s=t)
        if isinstance(item, LoadStep):
            return self.fusion.add_load([item], [], t)
        if isinstance(item, LoadConnection):
            return self.fusion.add_load([], [item], t)
        if isinstance(item, _SettledStep):
            return self.fusion.add_settled_step(item.step)
        if isinstance(item, _LoadProgress):
            self.fusion.track_settled_levels(item.settled_levels)
            return self.fusion.add_load([], [], t)
        return []

    def finish(self) -> list[Event]:
        """Decide whatever is pending at the end of the stream."""
        for imp in self.piezo.flush():
            self._push(imp.t_s + self.piezo.decision_delay_s, imp)
        end = max(self._piezo_done, self._load_done)
        if not np.isfinite(end):
            return []
        out = self._advance(until_s=end)
        out.extend(self.fusion.flush(end))
        return out

    def diagnostics(self) -> DetectorDiagnostics:
        """Counters and learnt quantities so far."""
        return DetectorDiagnostics(
            fusion=self.fusion.stats,
            load_noise_counts=tuple(float(s) for s in self.load.sigma),
            cube_counts=tuple(float(u) for u in self.scale.units()),
            piezo_filled_s=self.piezo.filled_s,
            piezo_gaps=self.piezo.gaps,
            piezo_dropped_sets=self.piezo.dropped_sets,
            acoustic_learnt=self.acoustic.n_learnt,
        )

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
