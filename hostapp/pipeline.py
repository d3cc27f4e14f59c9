"""Glue between decoded protocol messages and the streaming detector.

:class:`DetectionPipeline` takes timed frames (``hostapp.recording.TimedFrame``
or anything with ``seq``, ``msg`` and ``t_s``) in arrival order, batches
consecutive PIEZO sets into contiguous runs and LOAD messages into arrays,
and feeds :class:`dsp.detect.detector.Detector` in short time slices so the
evidence of both streams meets in time order. It is the one code path used
by ``towerear detect``, ``towerear eval`` and the app.

Rates come from HELLO. A recording that begins after its HELLO (or a device
whose HELLO was lost) has its rates measured from the first second of data.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from dsp.detect.calibration import DetectorCalibration
from dsp.detect.detector import UNIT_HANDOVER_S, Detector
from dsp.detect.events import Event
from dsp.detect.stampclock import PiezoStampClock
from hostapp.protocol import Hello, Load, Piezo
from hostapp.recording import DecodedBlock

N_LEVELS = 8
_NO_PIEZO = (np.zeros(0), np.zeros(0, dtype=np.int64), np.zeros((0, N_LEVELS), dtype=np.uint16))
_NO_LOAD = (np.zeros(0), np.zeros(0, dtype=np.int64), np.zeros((0, N_LEVELS), dtype=np.int32))
# Why 2 s: the detector waits for both streams to pass a time before it
# decides there, and takes a stream 2.5 s behind the other for absent;
# slices of 2 s stay clear of that and carry 4000 piezo sets each. They lie
# on the detector's grid for handing the cube size to its load processors,
# so each slice of load readings is processed in one call.
_SLICE_S = UNIT_HANDOVER_S
# Why 1 s: enough messages (~140 PIEZO, 80 LOAD) to measure both rates to
# better than a percent when HELLO is missing.
_RATE_PROBE_S = 1.0


class TimedMessage(Protocol):
    """A decoded message with its stream time (``None`` when it has none)."""

    @property
    def msg(self) -> object: ...

    @property
    def t_s(self) -> float | None: ...


@dataclass
class PipelineStats:
    """Counters of what reached the detector."""

    piezo_messages: int = 0
    piezo_sets: int = 0
    load_messages: int = 0
    hello_messages: int = 0
    untimed_messages: int = 0
    odd_shape_messages: int = 0
    rates_from: str = ""
    piezo_rate_hz: float = 0.0
    load_rate_hz: float = 0.0
    extra: dict[str, float] = field(default_factory=dict)


class DetectionPipeline:
    """Decoded frames in, detection events out.

    Parameters
    ----------
    calibration : DetectorCalibration, optional
        Passed to the detector.

    Examples
    --------
    >>> from hostapp.recording import RecordingReader
    >>> pipeline = DetectionPipeline()
    >>> for chunk in RecordingReader("game.bin").chunks():  # doctest: +SKIP
    ...     for event in pipeline.feed(chunk):
    ...         print(event.to_json())
    >>> events = pipeline.finish()  # doctest: +SKIP
    """

    def __init__(self, *, calibration: DetectorCalibration | None = None) -> None:
        self.calibration = calibration
        self.detector: Detector | None = None
        self.hello: Hello | None = None
        self.stats = PipelineStats()
        self._probe: list[tuple[float, object]] = []
        self._stamp_clock: PiezoStampClock | None = None

    # -- public --------------------------------------------------------------
    def feed(self, frames: Iterable[TimedMessage]) -> list[Event]:
        """Feed timed frames in arrival order; returns the events they decided."""
        timed: list[tuple[float, object]] = []
        for frame in frames:
            msg = frame.msg
            if isinstance(msg, Hello):
                self.stats.hello_messages += 1
                if self.hello is None:
                    self.hello = msg
                continue
            if not isinstance(msg, Piezo | Load):
                continue
            if frame.t_s is None:
                self.stats.untimed_messages += 1
                continue
            timed.append((frame.t_s, msg))
        if self.detector is None:
            self._probe.extend(timed)
            if not self._start():
                return []
            timed, self._probe = self._probe, []
        return self._feed_timed(timed)

    def finish(self) -> list[Event]:
        """Decide what is pending at the end of the stream."""
        out: list[Event] = []
        if self.detector is None and self._probe:
            self._start(force=True)
            timed, self._probe = self._probe, []
            out.extend(self._feed_timed(timed))
        if self.detector is not None:
            out.extend(self.detector.finish())
        return out

    # -- setup -----------------------------------------------------------------
    def _start(self, force: bool = False) -> bool:
        piezo_rate = load_rate = 0.0
        if self.hello is not None and self.hello.piezo_rate_hz > 0:
            from hostapp.protocol.constants import NOMINAL_LOAD_RATE_HZ

            piezo_rate = float(self.hello.piezo_rate_hz)
            # A source without load cells (an audio interface) says 0; LOAD
            # merged from elsewhere then runs at the nominal HX711 rate.
            load_rate = float(self.hello.load_rate_hz or NOMINAL_LOAD_RATE_HZ)
            self.stats.rates_from = "HELLO"
        else:
            times = [t for t, _ in self._probe]
            if not times or (max(times) - min(times) < _RATE_PROBE_S and not force):
                return False
            piezo_rate, load_rate = _measure_rates(self._probe)
            self.stats.rates_from = "measured"
        self.stats.piezo_rate_hz = piezo_rate
        self.stats.load_rate_hz = load_rate
        self.detector = Detector(
            n_levels=N_LEVELS,
            piezo_rate_hz=piezo_rate,
            load_rate_hz=load_rate,
            calibration=self.calibration,
        )
        self._stamp_clock = PiezoStampClock(piezo_rate)
        return True

    # -- feeding ---------------------------------------------------------------
    def _feed_timed(self, timed: Sequence[tuple[float, object]]) -> list[Event]:
        detector = self.detector
        if detector is None or not timed:
            return []
        piezo = [(t, m) for t, m in timed if isinstance(m, Piezo)]
        load = [(t, m) for t, m in timed if isinstance(m, Load)]
        runs = self._piezo_runs(piezo)
        load_t, load_v, load_ok = self._load_arrays(load)
        return self._feed_arrays(detector, runs, load_t, load_v, load_ok)

    def feed_block(self, block: DecodedBlock, *, with_load: bool = True) -> list[Event]:
        """Feed one :class:`~hostapp.recording.DecodedBlock` (a chunk of a recording).

        The same events as :meth:`feed` with the block's messages as frames,
        but without a Python object per message once the detector runs (a
        replay is several times faster). ``with_load=False`` leaves the LOAD
        messages out (acoustic-only).
        """
        piezo = block.piezo_arrays() if block.piezo else _NO_PIEZO
        load = block.load_arrays() if with_load and block.load else _NO_LOAD
        out: list[Event] = []
        others_fed = False
        if self.detector is None and any(isinstance(f.msg, Hello) for f in block.others):
            # The HELLO gives the rates: the detector starts before this
            # block's PIEZO and LOAD messages, which can then go as arrays.
            out = self.feed(block.others)
            others_fed = True
        detector = self.detector
        if detector is None or piezo is None or load is None:
            # Before the detector runs, or messages of several shapes: one by one.
            frames = block.as_frames(with_load=with_load)
            return out + self.feed(frames[len(block.others) :] if others_fed else frames)
        if not others_fed:
            for frame in block.others:
                if isinstance(frame.msg, Hello):
                    self.stats.hello_messages += 1
        runs = self._piezo_runs_from_arrays(*piezo)
        load_t, load_v, load_ok = self._load_arrays_from_arrays(*load)
        return out + self._feed_arrays(detector, runs, load_t, load_v, load_ok)

    def _piezo_runs_from_arrays(
        self, t: np.ndarray, sets: np.ndarray, samples: np.ndarray
    ) -> list[tuple[float, np.ndarray]]:
        """:meth:`_piezo_runs` over the arrays of many messages of one shape."""
        if t.size == 0:
            return []
        fitted = _fit_channels(samples, 512)
        if fitted is None:
            self.stats.odd_shape_messages += int(t.size)
            return []
        self._count_piezo(sets)
        return self._timed_runs(t, sets, fitted)

    def _load_arrays_from_arrays(
        self, t: np.ndarray, bits: np.ndarray, values: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`_load_arrays` over the arrays of many messages of one shape."""
        fitted = _fit_channels(values, 0) if t.size else None
        if fitted is None:
            self.stats.odd_shape_messages += int(t.size)
            return _no_load()
        self.stats.load_messages += int(t.size)
        return _load_rows(t, bits, fitted)

    def _feed_arrays(
        self,
        detector: Detector,
        runs: list[tuple[float, np.ndarray]],
        load_t: np.ndarray,
        load_v: np.ndarray,
        load_ok: np.ndarray,
    ) -> list[Event]:
        if not runs and load_t.size == 0:
            return []
        starts = [r[0] for r in runs] + ([float(load_t[0])] if load_t.size else [])
        ends = [r[0] + r[1].shape[0] / detector.piezo.rate for r in runs]
        if load_t.size:
            ends.append(float(load_t[-1]))
        first = np.floor(min(starts) / _SLICE_S) * _SLICE_S
        edges = np.arange(first, max(ends) + _SLICE_S, _SLICE_S)
        out: list[Event] = []
        run_pos = [0] * len(runs)
        for hi in edges[1:]:
            for i, (t0, samples) in enumerate(runs):
                pos = run_pos[i]
                if pos >= samples.shape[0]:
                    continue
                stop = int(np.ceil((hi - t0) * detector.piezo.rate - 1e-9))
                stop = min(max(stop, pos), samples.shape[0])
                if stop > pos:
                    out.extend(
                        detector.feed_piezo(t0 + pos / detector.piezo.rate, samples[pos:stop])
                    )
                    run_pos[i] = stop
            sel = (load_t >= hi - _SLICE_S) & (load_t < hi)
            if sel.any():
                out.extend(detector.feed_load(load_t[sel], load_v[sel], load_ok[sel]))
        return out

    def _piezo_runs(self, piezo: list[tuple[float, Piezo]]) -> list[tuple[float, np.ndarray]]:
        """Consecutive PIEZO messages joined into runs timed on one grid (``PiezoStampClock``)."""
        times: list[float] = []
        parts: list[np.ndarray] = []
        for t, msg in piezo:
            samples = _fit_channels(msg.samples, 512)
            if samples is None:
                self.stats.odd_shape_messages += 1
                continue
            times.append(t)
            parts.append(samples)
        if not parts:
            return []
        sets = np.array([p.shape[0] for p in parts], dtype=np.int64)
        self._count_piezo(sets)
        return self._timed_runs(np.asarray(times), sets, np.concatenate(parts))

    def _load_arrays(
        self, load: list[tuple[float, Load]]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        rows_t: list[float] = []
        rows_v: list[np.ndarray] = []
        masks: list[int] = []
        for t, msg in load:
            values = _fit_channels(msg.values.reshape(1, -1), 0)
            if values is None:
                self.stats.odd_shape_messages += 1
                continue
            rows_t.append(t)
            rows_v.append(values[0])
            masks.append(msg.valid)
        if not rows_t:
            return _no_load()
        self.stats.load_messages += len(rows_t)
        return _load_rows(np.asarray(rows_t), np.asarray(masks, dtype=np.int64), np.stack(rows_v))

    def _timed_runs(
        self, t: np.ndarray, sets: np.ndarray, samples: np.ndarray
    ) -> list[tuple[float, np.ndarray]]:
        """Messages (stamps, sets each, their samples in order) as runs timed on one grid."""
        assert self._stamp_clock is not None
        return [(t0, samples[a:b]) for t0, a, b in self._stamp_clock.runs(t, sets)]

    def _count_piezo(self, sets: np.ndarray) -> None:
        self.stats.piezo_messages += int(sets.size)
        self.stats.piezo_sets += int(sets.sum())

def _load_rows(
    t: np.ndarray, bits: np.ndarray, values: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """LOAD readings in time order, with the valid bits as a (m, levels) mask."""
    order = np.argsort(t, kind="stable")
    valid = (bits[:, None] >> np.arange(N_LEVELS)) & 1 == 1
    return t[order], values[order], valid[order]


def _no_load() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return np.zeros(0), np.zeros((0, N_LEVELS)), np.zeros((0, N_LEVELS), dtype=bool)


def _fit_channels(samples: np.ndarray, fill: int) -> np.ndarray | None:
    """Pad (with ``fill``) or cut a (n, channels) array to the tower's levels."""
    if samples.ndim != 2 or samples.shape[1] == 0 or samples.shape[1] > 4 * N_LEVELS:
        return None
    if samples.shape[1] == N_LEVELS:
        return samples
    if samples.shape[1] > N_LEVELS:
        return samples[:, :N_LEVELS]
    pad = np.full((samples.shape[0], N_LEVELS - samples.shape[1]), fill, dtype=samples.dtype)
    return np.concatenate([samples, pad], axis=1)


def _measure_rates(probe: list[tuple[float, object]]) -> tuple[float, float]:
    """Piezo and load rates from the messages' own time stamps (no HELLO)."""
    from hostapp.protocol.constants import NOMINAL_LOAD_RATE_HZ, NOMINAL_PIEZO_RATE_HZ

    piezo = [(t, m) for t, m in probe if isinstance(m, Piezo)]
    load_t = sorted(t for t, m in probe if isinstance(m, Load))
    piezo_rate = float(NOMINAL_PIEZO_RATE_HZ)
    if len(piezo) >= 2 and piezo[-1][0] > piezo[0][0]:
        sets = sum(m.samples.shape[0] for _, m in piezo[:-1])
        piezo_rate = sets / (piezo[-1][0] - piezo[0][0])
    load_rate = float(NOMINAL_LOAD_RATE_HZ)
    if len(load_t) >= 2 and load_t[-1] > load_t[0]:
        load_rate = (len(load_t) - 1) / (load_t[-1] - load_t[0])
    return piezo_rate, load_rate


@dataclass(frozen=True)
class _Stamped:
    msg: object
    t_s: float | None


class LivePipeline:
    """The pipeline for a live source: bare messages in arrival order, events out.

    Live sources hand over decoded messages without stream times; this class
    stamps them with the device clock exactly as a recording would be
    (:class:`hostapp.protocol.clock.StreamClock`), then runs
    :class:`DetectionPipeline`. Accepts bare messages, ``Frame`` (``seq,
    msg``) or ``TimedFrame`` objects.

    Parameters
    ----------
    calibration : DetectorCalibration, optional
        Passed to the detector.
    """

    def __init__(self, *, calibration: DetectorCalibration | None = None) -> None:
        from hostapp.protocol.clock import StreamClock

        self.pipeline = DetectionPipeline(calibration=calibration)
        self._clock = StreamClock()

    @property
    def detector(self) -> Detector | None:
        """The detector, once the stream's rates are known."""
        return self.pipeline.detector

    def silent_cells(self) -> tuple[int, ...]:
        """Levels whose load cells read nothing, so far (their landings are heard only)."""
        detector = self.pipeline.detector
        return tuple(sorted(detector.fusion.silent_cells.dead)) if detector else ()

    def flaky_cells(self) -> tuple[int, ...]:
        """Levels whose load cells stopped answering now and then with no module lifted, so far."""
        detector = self.pipeline.detector
        return detector.fusion.openings.flaky if detector else ()

    def deaf_discs(self) -> tuple[int, ...]:
        """Levels whose contact microphones hear none of their plate's landings, so far."""
        detector = self.pipeline.detector
        return tuple(sorted(detector.fusion.deaf_discs.deaf)) if detector else ()

    def shaking(self) -> bool:
        """Whether the load cells feel a shaking common to all, taken out (a train, a boat)."""
        detector = self.pipeline.detector
        return detector is not None and detector.shaking()

    def rocking_hz(self) -> float:
        """How fast the tower rocks on its table, as the detector combs it out (0: it does not)."""
        detector = self.pipeline.detector
        return detector.rocking.rocking_hz if detector else 0.0

    def disc_gains_db(self) -> tuple[float, ...]:
        """Each contact microphone's gain as the ear equalises it, dB (``dsp.detect.discgains``)."""
        detector = self.pipeline.detector
        return detector.disc_gains_db if detector else ()

    def hum_hz(self) -> tuple[float, ...]:
        """The mains harmonics notched out of the contact microphones' signals (``hum``), Hz."""
        detector = self.pipeline.detector
        return detector.hum_hz if detector else ()

    def feed(self, messages: Iterable[object]) -> list[Event]:
        """Feed messages in arrival order; returns the events they decided."""
        stamped: list[_Stamped] = []
        for item in messages:
            seq = getattr(item, "seq", 1)
            msg = getattr(item, "msg", item)
            t_s = getattr(item, "t_s", None)
            if t_s is None:
                t_s = self._clock.stamp(int(seq), msg)
            stamped.append(_Stamped(msg, t_s))
        return self.pipeline.feed(stamped)

    def finish(self) -> list[Event]:
        """Decide what is pending (when the source stops)."""
        return self.pipeline.finish()
