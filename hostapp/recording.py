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
from hostapp.protocol.constants import (
    HELLO,
    LOAD,
    LOAD_HEADER_SIZE,
    NOMINAL_PIEZO_RATE_HZ,
    PIEZO,
    PIEZO_HEADER_SIZE,
    PONG,
)
from hostapp.protocol.decoder import FrameBatch, byte_rows
from hostapp.protocol.messages import MESSAGE_CLASSES, s24_to_int32

# Why 1 MiB (about half a minute of a stream): the detector is fed 2-s
# slices, and each chunk ends in a slice of its own; with 256 KiB chunks
# (7 s) those added a third to the calls of the load processors. The events
# are the same at any chunk size (tested); 17 cross-check and own
# recordings: 8.3 -> 7.2-7.9 s of CPU.
DEFAULT_CHUNK_SIZE = 1 << 20


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
        # Device clocks found restarted with no HELLO seen, and lone messages
        # whose clock left the stream's time, dropped (StreamClock).
        self.clock_restarts = 0
        self.clock_outliers = 0

    def chunks(self) -> Iterator[list[TimedFrame]]:
        """Yield the frames decoded from each chunk of the file (lists may be empty)."""
        clock = StreamClock()
        for decoder, data in self._read():
            timed = []
            for seq, msg in decoder.feed(data):
                if isinstance(msg, Hello):
                    self.hello = msg
                timed.append(TimedFrame(seq, msg, clock.stamp(seq, msg)))
            self.clock_restarts = clock.restarts_unannounced
            self.clock_outliers = clock.outliers
            yield timed

    def __iter__(self) -> Iterator[TimedFrame]:
        for timed in self.chunks():
            yield from timed

    def blocks(self) -> Iterator[DecodedBlock]:
        """Like :meth:`chunks`, with the PIEZO and LOAD messages of each chunk as arrays.

        The same frames, counters and stream times as :meth:`chunks`, but the
        PIEZO and LOAD messages are checked, timed and parsed together with
        numpy instead of one message object each: replays of recordings are
        several times faster. Other messages come as :class:`TimedFrame`. A
        PIEZO or LOAD message the clock left untimed (:class:`StreamClock`
        holds one whose time leaves the stream's) is left out here, where
        :meth:`chunks` gives it with ``t_s`` None.
        """
        clock = StreamClock()
        for decoder, data in self._read():
            batch = decoder.feed_batch(data)
            msg_type = batch.msg_type
            timed = (msg_type == PIEZO) | (msg_type == LOAD)
            # A PONG is timed and a HELLO may restart the device's clock;
            # every other message leaves the clock alone.
            clocked = (msg_type == PONG) | (msg_type == HELLO)
            t_s = np.zeros(len(batch))
            t_us = batch.u32_at(0)
            others: list[TimedFrame] = []
            done = 0
            # Runs of PIEZO and LOAD are timed at once, the PONG and HELLO
            # messages between them in turn; a run goes on over messages that
            # leave the clock alone (a STATUS a second): the clock takes the
            # same messages in the same order, one by one or in runs.
            for j in [*np.flatnonzero(~timed).tolist(), len(batch)]:
                if j < len(batch) and not clocked[j]:
                    others.append(self._other(batch, j, clock))
                    continue
                if j > done:
                    rows = done + np.flatnonzero(timed[done:j])
                    t_s[rows] = clock.stamp_timed(t_us[rows])
                if j < len(batch):
                    others.append(self._other(batch, j, clock))
                done = j + 1
            self.clock_restarts = clock.restarts_unannounced
            self.clock_outliers = clock.outliers
            held = np.isnan(t_s)  # untimed while the clock made sense of them
            yield DecodedBlock(
                MessageRows.of(batch, t_s, (msg_type == PIEZO) & ~held),
                MessageRows.of(batch, t_s, (msg_type == LOAD) & ~held),
                others,
            )

    def _other(self, batch: FrameBatch, j: int, clock: StreamClock) -> TimedFrame:
        """Message ``j`` of a batch (not a PIEZO or LOAD one), timed by the clock."""
        seq = int(batch.seq[j])
        msg = MESSAGE_CLASSES[int(batch.msg_type[j])].from_body(batch.body(j))
        if isinstance(msg, Hello):
            self.hello = msg
        return TimedFrame(seq, msg, clock.stamp(seq, msg))

    def _read(self) -> Iterator[tuple[FrameDecoder, bytes]]:
        """A fresh decoder (its counters become :attr:`stats`) and the file, chunk by chunk."""
        decoder = FrameDecoder()
        self.stats = decoder.stats
        self.hello = None
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
                yield decoder, data
        if decoder.stats.frames_ok == 0:
            raise RecordingError(f"recording {self.path} holds no decodable protocol v1 frame")


@dataclass(frozen=True, eq=False)
class MessageRows:
    """The PIEZO (or LOAD) messages of one chunk: stream times, bodies in one buffer.

    Message ``i`` has stream time ``t_s[i]`` and its checked body at
    ``data[start[i] : start[i] + length[i]]``, in arrival order.
    """

    t_s: npt.NDArray[np.float64]
    start: npt.NDArray[np.int64]
    length: npt.NDArray[np.int64]
    data: npt.NDArray[np.uint8]

    @classmethod
    def of(
        cls, batch: FrameBatch, t_s: npt.NDArray[np.float64], rows: npt.NDArray[np.bool_]
    ) -> MessageRows:
        """The rows of a decoded batch picked by ``rows``, with their stream times."""
        return cls(t_s[rows], batch.start[rows], batch.length[rows], batch.data)

    def __len__(self) -> int:
        return int(self.t_s.size)

    def bodies(self) -> list[bytes]:
        """Each message's body."""
        return [
            self.data[a : a + n].tobytes()
            for a, n in zip(self.start.tolist(), self.length.tolist(), strict=True)
        ]

    def table(self) -> npt.NDArray[np.uint8] | None:
        """The bodies as rows of one array, or None if there are none or their lengths differ."""
        if not len(self) or np.any(self.length != self.length[0]):
            return None
        return byte_rows(self.data, self.start, int(self.length[0]))


def _gather(
    data: npt.NDArray[np.uint8], start: npt.NDArray[np.int64], length: npt.NDArray[np.int64]
) -> npt.NDArray[np.uint8]:
    """The byte ranges ``data[start[i] : start[i] + length[i]]`` one after another."""
    if start.size > 1 and bool(np.all(start[1:] >= start[:-1] + length[:-1])):
        # In buffer order and apart (frames as they arrived): a mask of the
        # ranges, drawn as runs (gap, range, gap, ..., the tail) by np.repeat,
        # and taken in one pass over the buffer, without an index per byte.
        end = start + length
        runs = np.empty(2 * start.size + 1, dtype=np.int64)
        runs[0], runs[-1] = start[0], data.size - end[-1]
        runs[1:-1:2] = length
        runs[2:-1:2] = start[1:] - end[:-1]
        taken = np.zeros(runs.size, dtype=bool)
        taken[1::2] = True
        return data[np.repeat(taken, runs)]
    first = np.cumsum(length) - length
    index = np.arange(int(length.sum())) + np.repeat(start - first, length)
    return np.ascontiguousarray(data[index])


@dataclass(frozen=True, eq=False)
class DecodedBlock:
    """The messages of one chunk of a recording, PIEZO and LOAD bodies kept as bytes.

    Attributes
    ----------
    piezo, load : MessageRows
        Stream time and checked body of each PIEZO / LOAD message, arrival order.
    others : list of TimedFrame
        Every other message, in order.
    """

    piezo: MessageRows
    load: MessageRows
    others: list[TimedFrame]

    def piezo_arrays(
        self,
    ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int64], npt.NDArray[np.uint16]] | None:
        """``(t_s, sets, samples)`` of all PIEZO messages at once, or None if they differ.

        ``samples`` has shape ``(sets.sum(), channels)``, in arrival order.
        Messages may carry different numbers of sets (a firmware that sends
        what it has); None when their channel counts differ (then parse them
        one by one with :meth:`as_frames`).
        """
        table = self.piezo.table()
        if table is None:
            return self._piezo_arrays_of_any_length()
        length = table.shape[1]
        sets = table[:, 4].astype(np.int64)
        channels = (length - PIEZO_HEADER_SIZE) // (2 * int(sets[0]))
        if np.any(sets * channels * 2 != length - PIEZO_HEADER_SIZE):
            return None
        samples = np.ascontiguousarray(table[:, PIEZO_HEADER_SIZE:]).view("<u2")
        return self.piezo.t_s, sets, samples.reshape(-1, channels)

    def _piezo_arrays_of_any_length(
        self,
    ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int64], npt.NDArray[np.uint16]] | None:
        rows = self.piezo
        if not len(rows):
            return None
        sets = rows.data[rows.start + 4].astype(np.int64)
        payload = rows.length - PIEZO_HEADER_SIZE
        channels = payload // (2 * np.maximum(sets, 1))
        if np.any(sets < 1) or np.any(sets * channels * 2 != payload) or np.any(
            channels != channels[0]
        ):
            return None
        samples = _gather(rows.data, rows.start + PIEZO_HEADER_SIZE, payload).view("<u2")
        return rows.t_s, sets, samples.reshape(-1, int(channels[0]))

    def load_arrays(
        self,
    ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int64], npt.NDArray[np.int32]] | None:
        """``(t_s, valid_bits, values)`` of all LOAD messages at once, or None if they differ."""
        table = self.load.table()
        if table is None:
            return None
        values = s24_to_int32(table[:, LOAD_HEADER_SIZE:].reshape(len(self.load), -1, 3))
        return self.load.t_s, table[:, 4].astype(np.int64), values

    def as_frames(self, *, with_load: bool = True) -> list[TimedFrame]:
        """The block's messages as :class:`TimedFrame` objects (others, PIEZO, LOAD).

        The seq of PIEZO and LOAD messages is not kept (-1).
        """
        frames = list(self.others)
        frames += [
            TimedFrame(-1, Piezo.from_body(body), float(t))
            for t, body in zip(self.piezo.t_s.tolist(), self.piezo.bodies(), strict=True)
        ]
        if with_load:
            frames += [
                TimedFrame(-1, Load.from_body(body), float(t))
                for t, body in zip(self.load.t_s.tolist(), self.load.bodies(), strict=True)
            ]
        return frames


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
