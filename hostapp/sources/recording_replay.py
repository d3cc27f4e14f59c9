"""A recording replayed as a source: at 1x-100x its own pace, or as fast as possible."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

from hostapp.errors import RecordingError, SourceError
from hostapp.i18n import os_reason, tr
from hostapp.protocol import FrameDecoder, StreamClock
from hostapp.sources.base import ByteSource

MAX_SPEED = 100.0
_CHUNK = 4096  # about 0.1 s of a live stream: fine-grained enough to pace smoothly


class ReplaySource(ByteSource):
    """Replay a recording file through the usual reader thread and frame queue.

    Parameters
    ----------
    path : str or Path
        The recording.
    speed : float or None
        Stream seconds per wall second, 1..100; None replays as fast as possible.
    tap : callable, optional
        Gets every raw chunk.
    **kwargs
        Passed to :class:`~hostapp.sources.base.ByteSource`.

    Raises
    ------
    RecordingError
        If the file cannot be opened or is empty.
    SourceError
        If ``speed`` is outside 1..100.

    Notes
    -----
    Pacing follows the stream times inside the recording (its ``t_us``), not
    the byte count. A recording cannot take commands: :meth:`send` returns None.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        speed: float | None = 1.0,
        tap: Callable[[bytes], None] | None = None,
        **kwargs: Any,
    ) -> None:
        if speed is not None and not 1.0 <= speed <= MAX_SPEED:
            raise SourceError(
                tr("replay speed must be 1..{max:g} (or as fast as possible)", max=MAX_SPEED)
            )
        self.path = Path(path)
        try:
            size = self.path.stat().st_size
        except OSError as exc:
            raise RecordingError(
                tr(
                    "recording {path} cannot be opened: {reason}",
                    path=self.path,
                    reason=os_reason(exc),
                )
            ) from exc
        if size == 0:
            raise RecordingError(tr("recording {path} is empty", path=self.path))
        kwargs.setdefault("request_info_on_connect", False)
        super().__init__(f"replay of {self.path.name}", tap=tap, **kwargs)
        self.speed = speed
        self._handle: BinaryIO | None = None
        self._eof = False
        self._pace_decoder = FrameDecoder()
        self._pace_clock = StreamClock()
        self._wall_start = 0.0

    def _open(self) -> None:
        if self._eof:
            raise OSError(tr("replay finished"))
        self._handle = self.path.open("rb")
        self._wall_start = time.monotonic()

    def _read(self) -> bytes:
        handle = self._handle
        if handle is None:
            raise OSError("replay not open")
        data = handle.read(_CHUNK)
        if not data:
            self._eof = True
            return b""
        if self.speed is not None:
            self._pace(data)
        return data

    def _pace(self, data: bytes) -> None:
        latest = None
        for seq, msg in self._pace_decoder.feed(data):
            t_s = self._pace_clock.stamp(seq, msg)
            if t_s is not None:
                latest = t_s
        if latest is None or self.speed is None:
            return
        delay = self._wall_start + latest / self.speed - time.monotonic()
        if delay > 0:
            # Sleep in short steps so stop() is honoured promptly.
            deadline = time.monotonic() + delay
            while not self._stop.is_set() and (left := deadline - time.monotonic()) > 0:
                # What is left, read once: read again after the test it may be past.
                time.sleep(min(0.05, left))

    def _write(self, data: bytes) -> None:
        raise OSError("a recording cannot take commands")

    def _close(self) -> None:
        handle, self._handle = self._handle, None
        if handle is not None:
            handle.close()

    def _end_of_stream(self) -> bool:
        return self._eof
