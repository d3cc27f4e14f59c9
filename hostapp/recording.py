"""Reading recordings (contracts.md section 2): the raw device -> host byte stream.

Two ways in:

- :func:`read_recording` decodes a whole file into numpy arrays with stream
  times (a :class:`Recording`), for analysis, tests and plots.
- :class:`RecordingReader` yields :class:`TimedFrame` objects chunk by chunk,
  for the detection pipeline on recordings of any size.

Stream time is ``(unwrapped t_us - t_us of the first PIEZO or LOAD) / 1e6``.
Damage in a recording is counted in the decoder stats, never fatal; only a
file that cannot be used at all raises :class:`~hostapp.errors.RecordingError`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, NamedTuple

import numpy as np
import numpy.typing as npt

from hostapp.errors import RecordingError
from hostapp.protocol import (
    DecoderStats,
    FrameDecoder,
    Hello,
    Load,
    Message,
    Piezo,
    Status,
    StreamClock,
)
from hostapp.protocol.constants import NOMINAL_PIEZO_RATE_HZ

DEFAULT_CHUNK_SIZE = 1 << 18


class TimedFrame(NamedTuple):
    """A decoded message with its seq and stream time (None for untimed messages)."""

    seq: int
    msg: Message
    t_s: float | None


def _open_recording(path: Path) -> BinaryIO:
    try:
        handle = path.open("rb")
    except FileNotFoundError as exc:
        raise RecordingError(f"recording {path} does not exist") from exc
    except IsADirectoryError as exc:
        raise RecordingError(f"recording {path} is a directory, not a file") from exc
    except OSError as exc:
        raise RecordingError(f"recording {path} cannot be read: {exc.strerror}") from exc
    try:
        empty = path.stat().st_size == 0
    except OSError as exc:
        handle.close()
        raise RecordingError(f"recording {path} cannot be read: {exc.strerror}") from exc
    if empty:
        handle.close()
        raise RecordingError(f"recording {path} is empty")
    return handle


class RecordingReader:
    """Decode a recording incrementally.

    Parameters
    ----------
    path : str or Path
        The recording (``*.bin``).
    chunk_size : int
        Bytes read per step.

    Raises
    ------
    RecordingError
        If the file is missing, not readable or empty (at construction), or
        holds no decodable frame at all (at the end of iteration).

    Notes
    -----
    ``hello`` is the latest HELLO seen, ``stats`` the decoder counters so far.
    Iterating twice reads the file twice with fresh counters.
    """

    def __init__(self, path: str | Path, *, chunk_size: int = DEFAULT_CHUNK_SIZE) -> None:
        self.path = Path(path)
        self.chunk_size = chunk_size
        _open_recording(self.path).close()
        self.stats = DecoderStats()
        self.hello: Hello | None = None

    def chunks(self) -> Iterator[list[TimedFrame]]:
        """Yield the frames decoded from each chunk of the file (lists may be empty)."""
        decoder = FrameDecoder()
        self.stats = decoder.stats
        self.hello = None
        clock = StreamClock()
        with _open_recording(self.path) as handle:
            while True:
                try:
                    data = handle.read(self.chunk_size)
                except OSError as exc:
                    raise RecordingError(
                        f"recording {self.path} cannot be read: {exc.strerror}"
                    ) from exc
                if not data:
                    break
                timed = []
                for seq, msg in decoder.feed(data):
                    if isinstance(msg, Hello):
                        self.hello = msg
                    timed.append(TimedFrame(seq, msg, clock.stamp(seq, msg)))
                yield timed
        if decoder.stats.frames_ok == 0:
            raise RecordingError(f"recording {self.path} holds no decodable protocol v1 frame")

    def __iter__(self) -> Iterator[TimedFrame]:
        for timed in self.chunks():
            yield from timed


@dataclass(frozen=True, eq=False)
class Recording:
    """A whole recording decoded into arrays.

    Attributes
    ----------
    path : Path
        Where it was read from.
    hello : Hello or None
        The last HELLO in the recording, if any.
    piezo_rate_hz : float
        From HELLO if seen, else the nominal 2000 sets/s; spaces the sets of a frame.
    piezo_t_s : ndarray, shape (n,), float64
        Stream time of every piezo sample set.
    piezo : ndarray, shape (n, n_piezo), uint16
        ADC codes.
    load_t_s : ndarray, shape (m,), float64
        Stream time of every LOAD message.
    load : ndarray, shape (m, n_load), int32
        HX711 counts, 0 where not valid.
    load_valid : ndarray, shape (m, n_load), bool
        Fresh-reading flags from the ``valid`` bitmask.
    status : list of (float or None, Status)
        STATUS messages with the stream time of the last timed message before them.
    stats : DecoderStats
        Decoder counters for the whole file.
    frames : list of TimedFrame
        Every decoded message in order.
    """

    path: Path
    hello: Hello | None
    piezo_rate_hz: float
    piezo_t_s: npt.NDArray[np.float64] = field(repr=False)
    piezo: npt.NDArray[np.uint16] = field(repr=False)
    load_t_s: npt.NDArray[np.float64] = field(repr=False)
    load: npt.NDArray[np.int32] = field(repr=False)
    load_valid: npt.NDArray[np.bool_] = field(repr=False)
    status: list[tuple[float | None, Status]] = field(repr=False)
    stats: DecoderStats
    frames: list[TimedFrame] = field(repr=False)

    @property
    def duration_s(self) -> float:
        """Stream time of the last piezo set or load reading."""
        ends = [a[-1] for a in (self.piezo_t_s, self.load_t_s) if a.size]
        return float(max(ends)) if ends else 0.0


def read_recording(path: str | Path, *, chunk_size: int = DEFAULT_CHUNK_SIZE) -> Recording:
    """Decode a whole recording into numpy arrays with stream times.

    Parameters
    ----------
    path : str or Path
        The recording (``*.bin``).
    chunk_size : int
        Bytes read per step.

    Returns
    -------
    Recording
        Arrays of piezo sets and load readings with stream times, the HELLO,
        STATUS messages and decoder counters.

    Raises
    ------
    RecordingError
        If the file is missing, not readable, empty, or holds no decodable frame.
    """
    reader = RecordingReader(path, chunk_size=chunk_size)
    frames = list(reader)
    piezo_frames = [(f.t_s, f.msg) for f in frames if isinstance(f.msg, Piezo)]
    load_frames = [(f.t_s, f.msg) for f in frames if isinstance(f.msg, Load)]
    rate = float(reader.hello.piezo_rate_hz) if reader.hello else float(NOMINAL_PIEZO_RATE_HZ)
    if rate <= 0:
        rate = float(NOMINAL_PIEZO_RATE_HZ)
    piezo_t_s, piezo = _piezo_arrays(piezo_frames, rate)
    load_t_s, load, load_valid = _load_arrays(load_frames)
    status: list[tuple[float | None, Status]] = []
    last_t: float | None = None
    for timed in frames:
        if timed.t_s is not None:
            last_t = timed.t_s
        if isinstance(timed.msg, Status):
            status.append((last_t, timed.msg))
    return Recording(
        path=reader.path,
        hello=reader.hello,
        piezo_rate_hz=rate,
        piezo_t_s=piezo_t_s,
        piezo=piezo,
        load_t_s=load_t_s,
        load=load,
        load_valid=load_valid,
        status=status,
        stats=reader.stats,
        frames=frames,
    )


def _most_common_width(widths: list[int]) -> int:
    values, counts = np.unique(np.asarray(widths), return_counts=True)
    return int(values[np.argmax(counts)])


def _piezo_arrays(
    frames: list[tuple[float | None, Piezo]], rate_hz: float
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.uint16]]:
    if not frames:
        return np.empty(0), np.empty((0, 0), dtype=np.uint16)
    # A frame whose channel count differs from the rest (possible only with a
    # damaged stream that still passed the CRC) cannot share the array.
    width = _most_common_width([m.samples.shape[1] for _, m in frames])
    kept = [(t, m) for t, m in frames if m.samples.shape[1] == width and t is not None]
    if not kept:
        return np.empty(0), np.empty((0, width), dtype=np.uint16)
    samples = np.concatenate([m.samples for _, m in kept])
    counts = np.array([m.samples.shape[0] for _, m in kept])
    starts = np.repeat(np.array([t for t, _ in kept], dtype=np.float64), counts)
    first_index = np.repeat(np.cumsum(counts) - counts, counts)
    offsets = (np.arange(samples.shape[0]) - first_index) / rate_hz
    return starts + offsets, samples


def _load_arrays(
    frames: list[tuple[float | None, Load]],
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int32], npt.NDArray[np.bool_]]:
    if not frames:
        return np.empty(0), np.empty((0, 0), dtype=np.int32), np.empty((0, 0), dtype=bool)
    width = _most_common_width([m.values.shape[0] for _, m in frames])
    kept = [(t, m) for t, m in frames if m.values.shape[0] == width and t is not None]
    t_s = np.array([t for t, _ in kept], dtype=np.float64)
    values = (
        np.stack([m.values for _, m in kept]) if kept else np.empty((0, width), dtype=np.int32)
    )
    masks = np.array([m.valid for _, m in kept], dtype=np.int64).reshape(-1, 1)
    valid = (masks >> np.arange(width)) & 1 == 1
    return t_s, values.astype(np.int32), valid
