"""The stream from the active source to the UI, with detection off the UI thread.

Threads only at the edges: the source's own reader thread decodes bytes into
messages; one :class:`DetectionWorker` thread (plain Python, no Qt) takes
those messages, runs the detection pipeline and queues both the messages
and the events; :class:`StreamHub` (a ``QObject`` on the UI thread) drains
those queues on a timer and emits Qt signals. No widget is ever touched off
the UI thread and nothing on the UI thread waits for the source.
"""

from __future__ import annotations

import collections
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from PyQt6.QtCore import QObject, QTimer, pyqtSignal

from hostapp.errors import TowerearError
from hostapp.protocol.messages import Hello, Load, Piezo, Status
from hostapp.ui.sim_tower import SimulatedTower

log = logging.getLogger(__name__)


class LiveSource(Protocol):
    """What the hub needs from a source (see :mod:`hostapp.ui.sources_adapter`)."""

    name: str
    tower: SimulatedTower | None
    """The simulated tower behind the source (to act on it), else ``None``."""

    def start(self) -> None:
        """Open the transport and start the reader thread."""

    def stop(self) -> None:
        """Stop the reader thread and close the transport."""

    def read(self, timeout_s: float) -> list[Any]:
        """Decoded messages received since the last call (waits up to ``timeout_s``)."""

    def health(self) -> SourceHealth:
        """Counters and connection state, safe to call from any thread."""

    def start_recording(self, path: str) -> None:
        """Append the raw byte stream to ``path`` from now on."""

    def stop_recording(self) -> None:
        """Stop writing the recording."""


class Detector(Protocol):
    """The detection pipeline as the worker uses it: messages in, events out."""

    def feed(self, messages: Sequence[Any]) -> list[Any]:
        """Process messages in arrival order; return the events decided."""

    def silent_cells(self) -> tuple[int, ...]:
        """Levels whose load cells read nothing (their landings are heard only)."""

    def flaky_cells(self) -> tuple[int, ...]:
        """Levels whose load cells stopped answering now and then, no module lifted."""

    def deaf_discs(self) -> tuple[int, ...]:
        """Levels whose contact microphones hear none of their plate's landings."""

    def rocking_hz(self) -> float:
        """How fast the tower rocks on its table (0: it does not)."""

    def shaking(self) -> bool:
        """Whether the load cells feel a shaking common to all (a train's floor), taken out."""

    def disc_gains_db(self) -> tuple[float, ...]:
        """Each contact microphone's gain as the ear equalises it, dB (0: like the others)."""

    def hum_hz(self) -> tuple[float, ...]:
        """The mains harmonics notched out of the contact microphones' signals (none: no hum)."""


@dataclass(frozen=True)
class SourceHealth:
    """How well the source is doing; problems are counters, never exceptions.

    Attributes
    ----------
    connected
        The transport is open and bytes arrive.
    lost_messages
        Sequence gaps counted by the decoder.
    crc_errors
        Frames dropped for a bad CRC or bad COBS.
    overruns
        Device-side overruns and dropped transmissions (from STATUS).
    reconnects
        How often the transport was reopened after being lost.
    detail
        One short line for the source bar (port name, replay speed...).
    finished
        A recording replayed to its end: nothing more will come, and
        nothing is wrong.
    """

    connected: bool = False
    lost_messages: int = 0
    crc_errors: int = 0
    overruns: int = 0
    reconnects: int = 0
    detail: str = ""
    finished: bool = False


@dataclass(frozen=True)
class StreamStatus:
    """What the source bar shows, emitted by :attr:`StreamHub.status`."""

    source_name: str
    health: SourceHealth
    hello: Hello | None
    recording: str | None
    messages_per_s: float
    silent_cells: tuple[int, ...] = ()
    deaf_discs: tuple[int, ...] = ()
    rocking_hz: float = 0.0
    disc_gains_db: tuple[float, ...] = ()
    hum_hz: tuple[float, ...] = ()
    flaky_cells: tuple[int, ...] = ()
    shaking: bool = False


class DetectionWorker(threading.Thread):
    """Pull messages from a source, detect events, queue both for the UI.

    Parameters
    ----------
    source
        Where messages come from (its own reader thread fills it).
    detector
        The pipeline; only this thread calls it.
    max_queued
        Messages kept for the UI; older ones are dropped (counted) when the
        UI falls behind, so memory stays bounded.
    """

    def __init__(self, source: LiveSource, detector: Detector, max_queued: int = 20_000) -> None:
        super().__init__(name=f"detect-{source.name}", daemon=True)
        self._source = source
        self._detector = detector
        self._lock = threading.Lock()
        self._messages: collections.deque[Any] = collections.deque(maxlen=max_queued)
        self._events: list[Any] = []
        self._stopping = threading.Event()
        self.dropped_for_ui = 0
        self.detector_errors = 0
        self.messages_seen = 0
        self.silent_cells: tuple[int, ...] = ()
        self.deaf_discs: tuple[int, ...] = ()
        self.flaky_cells: tuple[int, ...] = ()
        self.rocking_hz = 0.0
        self.shaking = False
        self.disc_gains_db: tuple[float, ...] = ()
        self.hum_hz: tuple[float, ...] = ()

    def run(self) -> None:
        while not self._stopping.is_set():
            batch = self._source.read(0.05)
            if not batch:
                continue
            try:
                events = self._detector.feed(batch)
            except Exception:  # a detector bug must not kill the stream: count it
                log.exception("detection failed on a batch of %d messages", len(batch))
                self.detector_errors += 1
                events = []
            silent, deaf = self._detector.silent_cells(), self._detector.deaf_discs()
            flaky = self._detector.flaky_cells()
            rocking = self._detector.rocking_hz()
            shaking = self._detector.shaking()
            gains = self._detector.disc_gains_db()
            hum = self._detector.hum_hz()
            with self._lock:
                self.silent_cells, self.deaf_discs = silent, deaf
                self.flaky_cells = flaky
                self.rocking_hz = rocking
                self.shaking = shaking
                self.disc_gains_db = gains
                self.hum_hz = hum
                overflow = len(self._messages) + len(batch) - (self._messages.maxlen or 0)
                if overflow > 0:
                    self.dropped_for_ui += overflow
                self._messages.extend(batch)
                self._events.extend(events)
                self.messages_seen += len(batch)

    def take(self) -> tuple[list[Any], list[Any]]:
        """Everything queued since the last call: ``(messages, events)``."""
        with self._lock:
            messages = list(self._messages)
            self._messages.clear()
            events, self._events = self._events, []
        return messages, events

    def stop(self) -> None:
        """Ask the thread to end after its current batch."""
        self._stopping.set()


@dataclass(frozen=True)
class SourceChoice:
    """Which source to open.

    Attributes
    ----------
    kind
        ``"sim"`` (simulated tower), ``"device"`` (serial, found by USB id),
        ``"simavr"`` (firmware in simavr), ``"audio"`` (audio interface) or
        ``"replay"`` (a recording).
    path
        The recording for ``"replay"``.
    speed
        Replay speed, 1 to 100 times real time.
    """

    kind: str
    path: str = ""
    speed: float = 1.0


SOURCE_KINDS = ("sim", "device", "simavr", "audio", "replay")
REPLAY_SPEEDS = (1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0)

SourceOpener = Callable[[SourceChoice], LiveSource]
DetectorFactory = Callable[[], Detector]


class StreamHub(QObject):
    """The active source as the UI sees it: signals on the UI thread.

    Parameters
    ----------
    open_source
        Builds a source from a :class:`SourceChoice`.
    make_detector
        Builds a fresh detection pipeline for each new source.
    drain_interval_ms
        How often the UI thread takes what the worker queued.
    """

    messages = pyqtSignal(list)
    """Decoded protocol messages, in order, about every ``drain_interval_ms``."""
    events = pyqtSignal(list)
    """Detection events (landing, removal, lift, closed, disturbance)."""
    status = pyqtSignal(object)
    """A :class:`StreamStatus`, about twice a second."""
    source_changed = pyqtSignal(object)
    """The :class:`SourceChoice` of the new source."""

    def __init__(
        self,
        open_source: SourceOpener,
        make_detector: DetectorFactory,
        drain_interval_ms: int = 30,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._open_source = open_source
        self._make_detector = make_detector
        self._source: LiveSource | None = None
        self._worker: DetectionWorker | None = None
        self._choice: SourceChoice | None = None
        self._recording: str | None = None
        self.hello: Hello | None = None
        self._rate_count = 0
        self._rate_since = time.monotonic()
        self._rate = 0.0
        self._drain = QTimer(self)
        self._drain.setInterval(drain_interval_ms)
        self._drain.timeout.connect(self._drain_once)
        self._status_timer = QTimer(self)
        self._status_timer.setInterval(500)
        self._status_timer.timeout.connect(self._emit_status)

    @property
    def choice(self) -> SourceChoice | None:
        """The active source's choice, ``None`` when idle."""
        return self._choice

    @property
    def source(self) -> LiveSource | None:
        """The active source, for actions that act on it (the simulated tower)."""
        return self._source

    @property
    def recording(self) -> str | None:
        """The path being recorded to, or ``None``."""
        return self._recording

    def switch_to(self, choice: SourceChoice) -> None:
        """Close the active source and open ``choice``.

        Raises
        ------
        TowerearError
            When the new source cannot be opened; the hub is then idle.
        """
        self.close()
        source = self._open_source(choice)
        source.start()
        self._source = source
        self._choice = choice
        self.hello = None
        self._worker = DetectionWorker(source, self._make_detector())
        self._worker.start()
        self._drain.start()
        self._status_timer.start()
        self.source_changed.emit(choice)
        self._emit_status()

    def close(self) -> None:
        """Stop the active source and its worker (idempotent)."""
        self._drain.stop()
        self._status_timer.stop()
        if self._worker is not None:
            self._worker.stop()
        if self._source is not None:
            try:
                if self._recording is not None:
                    self._source.stop_recording()
                self._source.stop()
            except TowerearError:
                log.exception("closing the source failed")
        if self._worker is not None:
            self._worker.join(timeout=2.0)
        self._drain_once()
        self._source = None
        self._worker = None
        self._recording = None
        self._choice = None

    def start_recording(self, path: str) -> None:
        """Write the active source's raw bytes to ``path`` (contracts.md section 2)."""
        if self._source is None:
            raise TowerearError("no source is streaming, so there is nothing to record")
        self._source.start_recording(path)
        self._recording = path
        self._emit_status()

    def stop_recording(self) -> str | None:
        """Stop recording; returns the path written, if any."""
        path = self._recording
        if self._source is not None and path is not None:
            self._source.stop_recording()
        self._recording = None
        self._emit_status()
        return path

    def _drain_once(self) -> None:
        if self._worker is None:
            return
        messages, events = self._worker.take()
        if messages:
            for message in messages:
                if isinstance(message, Hello):
                    self.hello = message
            self._rate_count += sum(isinstance(m, Piezo | Load | Status) for m in messages)
            self.messages.emit(messages)
        if events:
            self.events.emit(events)

    def _emit_status(self) -> None:
        if self._source is None:
            return
        now = time.monotonic()
        if now - self._rate_since >= 0.5:
            self._rate = self._rate_count / (now - self._rate_since)
            self._rate_count = 0
            self._rate_since = now
        health = self._source.health()
        if self._worker is not None and self._worker.detector_errors:
            health = replace(health, detail=f"{health.detail} (detector errors)")
        self.status.emit(
            StreamStatus(
                source_name=self._source.name,
                health=health,
                hello=self.hello,
                recording=self._recording,
                messages_per_s=self._rate,
                silent_cells=self._worker.silent_cells if self._worker is not None else (),
                deaf_discs=self._worker.deaf_discs if self._worker is not None else (),
                flaky_cells=self._worker.flaky_cells if self._worker is not None else (),
                rocking_hz=self._worker.rocking_hz if self._worker is not None else 0.0,
                disc_gains_db=self._worker.disc_gains_db if self._worker is not None else (),
                hum_hz=self._worker.hum_hz if self._worker is not None else (),
                shaking=self._worker.shaking if self._worker is not None else False,
            )
        )
