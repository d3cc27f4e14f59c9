"""The common shape of every byte-stream source: a reader thread and a frame queue."""

from __future__ import annotations

import enum
import queue
import threading
import time
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from hostapp.protocol import (
    DecoderStats,
    Frame,
    FrameDecoder,
    GetInfo,
    Hello,
    HostCommand,
    encode_frame,
)
from hostapp.protocol.constants import SEQ_MODULUS

# Frames held for a consumer that is not draining: 20 000 frames is about 80 s
# of a live tower, long enough for any UI hiccup, small enough to bound memory.
DEFAULT_QUEUE_FRAMES = 20_000
# How often a source that lost its device tries again.
DEFAULT_RETRY_INTERVAL_S = 0.5
_RATE_WINDOW_S = 1.0
# A device answers GET_INFO within a few milliseconds; one whose HELLO has not
# come a second after connecting is asked again, twice more at most (the
# first question or its answer may be lost to a board still booting, or to
# the input flush of a port just opened).
HELLO_WAIT_S = 1.0
HELLO_ASKS = 3


class SourceState(enum.Enum):
    """Where a source is in its life."""

    STOPPED = "stopped"
    CONNECTING = "connecting"
    CONNECTED = "connected"
    DISCONNECTED = "disconnected"  # lost or not yet there; retrying


@dataclass(frozen=True)
class SourceStats:
    """A snapshot of a source's health.

    Attributes
    ----------
    state : SourceState
        Current state.
    decoder : DecoderStats
        Copy of the decoder counters (summed over reconnects).
    bytes_per_s : float
        Bytes received per second over the last second or so.
    connects : int
        Successful connections so far (>1 means it reconnected).
    queue_dropped : int
        Frames dropped because the consumer did not drain the queue.
    commands_sent : int
        Host commands written.
    last_error : str
        Why the last connection attempt failed or was lost ("" if none).
    tap_error : str
        Why the tap failed and was switched off ("" if it works or there is none).
    """

    state: SourceState
    decoder: DecoderStats
    bytes_per_s: float
    connects: int
    queue_dropped: int
    commands_sent: int
    last_error: str
    tap_error: str = ""


class ByteSource(ABC):
    """A source of protocol v1 bytes, read by its own thread.

    Subclasses implement four transport hooks (``_open``, ``_read``,
    ``_write``, ``_close``); this class runs the reader thread, decodes,
    queues frames, reconnects, and keeps the counters.

    Parameters
    ----------
    name : str
        Short human-readable description (a port path, "simulated tower").
    tap : callable, optional
        Called from the reader thread with every chunk of raw bytes as read
        (used to write recordings). Must be quick.
    request_info_on_connect : bool
        Send GET_INFO after each (re)connection so a HELLO arrives even if
        the device booted long before the host opened the port.
    retry_interval_s : float
        Pause between reconnection attempts.
    queue_frames : int
        Capacity of :attr:`frames`; when full, new frames are dropped and counted.
    """

    def __init__(
        self,
        name: str,
        *,
        tap: Callable[[bytes], None] | None = None,
        request_info_on_connect: bool = True,
        retry_interval_s: float = DEFAULT_RETRY_INTERVAL_S,
        queue_frames: int = DEFAULT_QUEUE_FRAMES,
    ) -> None:
        self.name = name
        self.frames: queue.Queue[Frame] = queue.Queue(maxsize=queue_frames)
        self._tap = tap
        self._request_info = request_info_on_connect
        self._retry_interval_s = retry_interval_s
        self._decoder = FrameDecoder()
        self._state = SourceState.STOPPED
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._connected = threading.Event()
        self._host_seq = 0
        self._connects = 0
        self._queue_dropped = 0
        self._commands_sent = 0
        self._last_error = ""
        self._tap_error = ""
        self._rate_marks: deque[tuple[float, int]] = deque()
        self._hello_asks = 0
        self._hello_due: float | None = None

    # -- transport hooks -------------------------------------------------

    @abstractmethod
    def _open(self) -> None:
        """Open the transport; raise OSError (or SourceError) if it is not there."""

    @abstractmethod
    def _read(self) -> bytes:
        """Block briefly (<= ~0.1 s) for bytes; b"" if none; OSError when lost."""

    @abstractmethod
    def _write(self, data: bytes) -> None:
        """Write bytes to the device; OSError when lost."""

    @abstractmethod
    def _close(self) -> None:
        """Close the transport; never raises."""

    def _end_of_stream(self) -> bool:
        """True when the source has no more bytes ever (a finished replay)."""
        return False

    # -- public API ------------------------------------------------------

    def start(self) -> None:
        """Start the reader thread (it connects, and reconnects, by itself)."""
        if self._thread is not None:
            return
        self._stop.clear()
        self._set_state(SourceState.CONNECTING)
        self._thread = threading.Thread(target=self._run, name=f"source {self.name}", daemon=True)
        self._thread.start()

    def stop(self, timeout_s: float = 2.0) -> None:
        """Stop the reader thread and close the transport."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout_s)
            self._thread = None
        self._set_state(SourceState.STOPPED)

    def __enter__(self) -> ByteSource:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def state(self) -> SourceState:
        """Current :class:`SourceState`."""
        return self._state

    @property
    def finished(self) -> bool:
        """True once a source with an end (a replay) has delivered everything."""
        return self._end_of_stream() and self._thread is not None and not self._thread.is_alive()

    def wait_connected(self, timeout_s: float) -> bool:
        """Block until connected or ``timeout_s`` passes; True if connected."""
        return self._connected.wait(timeout_s)

    def send(self, command: HostCommand) -> int | None:
        """Send a host command.

        Returns
        -------
        int or None
            The command's seq (to match the ACK), or None when not connected
            (the command is not sent; the state says why).
        """
        with self._write_lock:
            if self._state is not SourceState.CONNECTED:
                return None
            seq = self._host_seq
            try:
                self._write(encode_frame(command, seq))
            except OSError as exc:
                self._last_error = str(exc)
                return None
            self._host_seq = (seq + 1) % SEQ_MODULUS
            self._commands_sent += 1
            return seq

    def get_frames(self, timeout_s: float = 0.0, max_frames: int = 100_000) -> list[Frame]:
        """Drain queued frames, waiting up to ``timeout_s`` for the first one."""
        out: list[Frame] = []
        try:
            out.append(self.frames.get(block=timeout_s > 0, timeout=timeout_s or None))
        except queue.Empty:
            return out
        while len(out) < max_frames:
            try:
                out.append(self.frames.get_nowait())
            except queue.Empty:
                break
        return out

    def stats(self) -> SourceStats:
        """A consistent snapshot of the counters."""
        with self._lock:
            decoder = DecoderStats(**self._decoder.stats.as_dict())
            marks = list(self._rate_marks)
        rate = 0.0
        if len(marks) >= 2 and marks[-1][0] > marks[0][0]:
            rate = (marks[-1][1] - marks[0][1]) / (marks[-1][0] - marks[0][0])
        if marks and time.monotonic() - marks[-1][0] > _RATE_WINDOW_S:
            rate = 0.0  # nothing arrived for a while
        return SourceStats(
            state=self._state,
            decoder=decoder,
            bytes_per_s=rate,
            connects=self._connects,
            queue_dropped=self._queue_dropped,
            commands_sent=self._commands_sent,
            last_error=self._last_error,
            tap_error=self._tap_error,
        )

    # -- the reader thread -----------------------------------------------

    def _set_state(self, state: SourceState) -> None:
        self._state = state
        if state is SourceState.CONNECTED:
            self._connected.set()
        else:
            self._connected.clear()

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                if not self._connect():
                    self._stop.wait(self._retry_interval_s)
                    continue
                self._pump()
                if self._end_of_stream():
                    break
        finally:
            self._close()
            self._set_state(SourceState.STOPPED)

    def _connect(self) -> bool:
        try:
            self._open()
        except Exception as exc:  # any failure to open is a state, not a crash
            self._last_error = str(exc)
            self._set_state(SourceState.DISCONNECTED)
            return False
        with self._lock:
            self._decoder.resync()
        self._connects += 1
        self._last_error = ""
        self._set_state(SourceState.CONNECTED)
        self._hello_due = None
        if self._request_info:
            self._hello_asks = 0
            self._ask_for_hello()
        return True

    def _ask_for_hello(self) -> None:
        """Send GET_INFO, and look again later whether its HELLO came."""
        self._hello_asks += 1
        self._hello_due = (
            time.monotonic() + HELLO_WAIT_S if self._hello_asks < HELLO_ASKS else None
        )
        self.send(GetInfo())

    def _note_hello(self, frames: list[Frame]) -> None:
        """Stop waiting once a HELLO came; ask again when it is overdue."""
        if self._hello_due is None:
            return
        if any(isinstance(frame.msg, Hello) for frame in frames):
            self._hello_due = None
        elif time.monotonic() >= self._hello_due:
            self._ask_for_hello()

    def _pump(self) -> None:
        while not self._stop.is_set():
            try:
                data = self._read()
            except OSError as exc:
                self._last_error = str(exc) or type(exc).__name__
                with self._write_lock:
                    self._set_state(SourceState.DISCONNECTED)
                self._close()
                return
            if not data:
                if self._end_of_stream():
                    return
                self._note_hello([])
                continue
            if self._tap is not None:
                try:
                    self._tap(data)
                except Exception as exc:  # a full disk must not stop the live stream
                    self._tap_error = str(exc) or type(exc).__name__
                    self._tap = None
            with self._lock:
                frames = self._decoder.feed(data)
                self._rate_marks.append((time.monotonic(), self._decoder.stats.bytes_in))
                while self._rate_marks[-1][0] - self._rate_marks[0][0] > _RATE_WINDOW_S:
                    self._rate_marks.popleft()
            self._note_hello(frames)
            for frame in frames:
                try:
                    self.frames.put_nowait(frame)
                except queue.Full:
                    self._queue_dropped += 1
