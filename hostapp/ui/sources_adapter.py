"""Opening the sources of :mod:`hostapp.sources` for the app, and the detector.

The hub sees every source through :class:`FrameSourceAdapter`: messages out
of the source's frame queue, its counters as a :class:`SourceHealth`, and a
:class:`~hostapp.ui.recorder.RawRecorder` on its byte tap for the record
button. :func:`open_live_source` is the one place that knows which class
serves which :class:`SourceChoice`.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from hostapp.errors import SourceError
from hostapp.i18n import tr
from hostapp.protocol.messages import Status
from hostapp.sources.base import SourceState, SourceStats
from hostapp.ui.recorder import RawRecorder
from hostapp.ui.sim_tower import SimulatedTower
from hostapp.ui.streaming import SourceChoice, SourceHealth

# The tower the app simulates by default: any seed gives a plausible tower;
# a fixed one makes the default source the same on every start.
SIM_SEED = 1


# The names hostapp.sources gives its sources (English, also used in logs and
# thread names), as patterns, so the source bar can show them translated.
_SIM_NAME = re.compile(r"^simulated tower (?P<seed>\S+)$")
_REPLAY_NAME = re.compile(r"^replay of (?P<file>.+)$")
_AUDIO_NAME = re.compile(r"^audio interface (?P<device>.+)$")


def source_display_name(name: str) -> str:
    """A source's name in the user's language (a port name stays as it is).

    Parameters
    ----------
    name
        ``source.name`` as :mod:`hostapp.sources` set it, e.g. ``"simulated
        tower 1"``, ``"replay of game.bin"``, ``"USB device"``.
    """
    if name == "USB device":
        return tr("USB device")
    if name == "firmware in simavr":
        return tr("firmware in simavr")
    if name == "audio interface":
        return tr("audio interface")
    if match := _SIM_NAME.match(name):
        return tr("simulated tower {seed}", seed=match["seed"])
    if match := _REPLAY_NAME.match(name):
        return tr("recording {file}", file=match["file"])
    if match := _AUDIO_NAME.match(name):
        return tr("audio interface {device}", device=match["device"])
    return name


class FrameSource(Protocol):
    """The part of :class:`hostapp.sources.base.ByteSource` the app uses."""

    name: str

    def start(self) -> None:
        """Start the reader thread."""

    def stop(self, timeout_s: float = 2.0) -> None:
        """Stop the reader thread."""

    def get_frames(self, timeout_s: float = 0.0, max_frames: int = 100_000) -> list[Any]:
        """Drain decoded frames."""

    def stats(self) -> SourceStats:
        """Counters and state."""

    @property
    def finished(self) -> bool:
        """Whether it has ended for good, nothing wrong (a recording read to its end)."""


class FrameSourceAdapter:
    """A :mod:`hostapp.sources` source as the stream hub wants it.

    Parameters
    ----------
    source
        The source, built with ``tap=recorder``.
    recorder
        The tap that writes recordings.
    detail
        Extra words for the source bar (port, replay speed), or a function
        giving them in the current language.
    tower
        The simulated tower behind the source, when it is one (its hands).
    """

    def __init__(
        self,
        source: FrameSource,
        recorder: RawRecorder,
        detail: str | Callable[[], str] = "",
        tower: SimulatedTower | None = None,
    ) -> None:
        self.name = source.name
        self.inner = source
        self.tower = tower
        self._recorder = recorder
        self._detail = detail
        self._lock = threading.Lock()
        self._overruns = 0

    def start(self) -> None:
        """Start the source's reader thread."""
        self.inner.start()

    def stop(self) -> None:
        """Stop the source and any recording."""
        self._recorder.stop()
        self.inner.stop()

    def read(self, timeout_s: float) -> list[Any]:
        """Messages decoded since the last call (STATUS counters are noted on the way)."""
        messages = [frame.msg for frame in self.inner.get_frames(timeout_s)]
        for message in messages:
            if isinstance(message, Status):
                with self._lock:
                    self._overruns = message.piezo_overruns + message.tx_dropped
        return messages

    def health(self) -> SourceHealth:
        """Connection state and counters."""
        stats = self.inner.stats()
        decoder = stats.decoder
        with self._lock:
            overruns = self._overruns
        detail = self._detail() if callable(self._detail) else self._detail
        # A source that has ended for good (a replay read to its end) lost nothing.
        finished = self.inner.finished
        if stats.state is not SourceState.CONNECTED and stats.last_error and not finished:
            detail = f"{detail} ({stats.last_error})" if detail else stats.last_error
        return SourceHealth(
            connected=stats.state is SourceState.CONNECTED,
            lost_messages=decoder.lost_messages + stats.queue_dropped,
            crc_errors=decoder.damaged_frames,
            overruns=overruns,
            reconnects=max(0, stats.connects - 1),
            detail=detail,
            finished=finished,
        )

    def start_recording(self, path: str) -> None:
        """Write the raw stream to ``path`` from now on."""
        self._recorder.start(Path(path))

    def stop_recording(self) -> None:
        """Stop writing the recording."""
        self._recorder.stop()


def default_choice() -> SourceChoice:
    """The real device when one is plugged in, else the simulated tower."""
    from hostapp.sources.serial_port import find_device_port

    try:
        find_device_port()
    except SourceError:
        return SourceChoice("sim")
    return SourceChoice("device")


def open_live_source(choice: SourceChoice, *, sim_pace: float = 1.0) -> FrameSourceAdapter:
    """Build (not start) the source for ``choice``.

    ``sim_pace`` runs the simulated tower faster than real time (tests).

    Raises
    ------
    SourceError
        When that kind of source is not available here (one sentence why).
    """
    recorder = RawRecorder()
    if choice.kind == "sim":
        tower = SimulatedTower(seed=SIM_SEED, pace=sim_pace, tap=recorder)
        return FrameSourceAdapter(tower.source, recorder, lambda: tr("in process"), tower=tower)
    if choice.kind == "device":
        from hostapp.sources.serial_port import SerialSource, find_device_port

        port = find_device_port()
        return FrameSourceAdapter(SerialSource(port, tap=recorder), recorder, port)
    if choice.kind == "replay":
        from hostapp.sources.recording_replay import ReplaySource

        if not choice.path:
            raise SourceError("choose a recording file to replay")
        source = ReplaySource(Path(choice.path), speed=choice.speed, tap=recorder)
        return FrameSourceAdapter(
            source, recorder, f"{Path(choice.path).name} {choice.speed:g}\u00d7"
        )
    if choice.kind == "simavr":
        from hostapp.sources.simavr import SimavrSource

        return FrameSourceAdapter(SimavrSource(tap=recorder), recorder, "")
    if choice.kind == "audio":
        from hostapp.sources.audio import AudioSource

        return FrameSourceAdapter(AudioSource(), recorder, "")
    raise SourceError(f"unknown source kind {choice.kind!r}")


def make_detector() -> Any:
    """A fresh detection pipeline (messages in, events out)."""
    from hostapp.pipeline import LivePipeline

    return LivePipeline()
