"""Writing the raw byte stream of a live source to a recording file.

The source's reader thread calls :meth:`RawRecorder.__call__` with every chunk
exactly as read (its ``tap``), so the file is the device -> host stream as it
came off the wire (contracts.md section 2). Starting and stopping happen on the
UI thread; a lock keeps the two sides apart.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import BinaryIO

from hostapp.errors import RecordingError

log = logging.getLogger(__name__)


class RawRecorder:
    """A tap that appends bytes to a file while recording is on."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._file: BinaryIO | None = None
        self._path: Path | None = None
        self.bytes_written = 0
        self.write_errors = 0

    @property
    def path(self) -> Path | None:
        """The file being written, or ``None`` when not recording."""
        return self._path

    def start(self, path: Path) -> None:
        """Begin a new recording at ``path``.

        Raises
        ------
        RecordingError
            When the file cannot be created.
        """
        try:
            handle = open(path, "xb")  # closed in stop()
        except OSError as exc:
            raise RecordingError(f"cannot create the recording {path}: {exc.strerror}") from exc
        with self._lock:
            self._close_locked()
            self._file = handle
            self._path = path
            self.bytes_written = 0

    def stop(self) -> Path | None:
        """End the recording; returns its path."""
        with self._lock:
            path = self._path
            self._close_locked()
            return path

    def __call__(self, data: bytes) -> None:
        with self._lock:
            if self._file is None:
                return
            try:
                self._file.write(data)
                self.bytes_written += len(data)
            except OSError:
                # A full disk must not stop the stream: count it, stop recording.
                self.write_errors += 1
                log.exception("recording stopped: write failed")
                self._close_locked()

    def _close_locked(self) -> None:
        if self._file is not None:
            try:
                self._file.close()
            except OSError:
                log.exception("closing the recording failed")
        self._file = None
        self._path = None
