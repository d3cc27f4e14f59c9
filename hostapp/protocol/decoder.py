"""The streaming frame decoder: bytes in, in chunks of any size; messages out.

It never raises on any input. Every problem becomes a counter in
:class:`DecoderStats` and the decoder carries on at the next 0x00.
"""

from __future__ import annotations

from binascii import crc_hqx
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import NamedTuple

import numpy as np
import numpy.typing as npt
from cobs import cobs as _c_cobs
from numpy.lib.stride_tricks import sliding_window_view

from hostapp.protocol import constants as c
from hostapp.protocol.crc import crc16, crc16_rows
from hostapp.protocol.messages import MESSAGE_CLASSES, BodyError, Load, Message, Piezo, Status

_MIN_MESSAGE_SIZE = c.HEADER_SIZE + c.CRC_SIZE


def _cobs_decode_piece(piece: bytes) -> bytes:
    """COBS-decode a piece known to hold no 0x00; b"" if it is not valid COBS.

    The C implementation of the ``cobs`` package does this about ten times
    faster than a Python walk along the code bytes (piezo samples near
    mid-scale put a 0x00 in every other byte, so the chains are short and
    many), and decoding is most of what replaying a recording costs.
    :func:`hostapp.protocol.cobs.cobs_decode` is the reference it is tested against.
    """
    try:
        return bytes(_c_cobs.decode(piece))
    except _c_cobs.DecodeError:
        return b""


class Frame(NamedTuple):
    """One decoded message with the sequence number it arrived with."""

    seq: int
    msg: Message


class RawFrame(NamedTuple):
    """One good frame, its body not yet decoded (see :meth:`FrameDecoder.feed_raw`)."""

    msg_type: int
    seq: int
    body: bytes


@dataclass(frozen=True, eq=False)
class FrameBatch:
    """The good frames one chunk completed, as arrays (see :meth:`FrameDecoder.feed_batch`).

    Frame ``i`` has type ``msg_type[i]``, sequence number ``seq[i]`` and its
    body at ``data[start[i] : start[i] + length[i]]``, in arrival order.
    """

    msg_type: npt.NDArray[np.uint8]
    seq: npt.NDArray[np.int64]
    start: npt.NDArray[np.int64]
    length: npt.NDArray[np.int64]
    data: npt.NDArray[np.uint8]

    def __len__(self) -> int:
        return int(self.msg_type.size)

    def body(self, i: int) -> bytes:
        """The body of frame ``i``."""
        a = int(self.start[i])
        return self.data[a : a + int(self.length[i])].tobytes()

    def u32_at(self, offset: int) -> npt.NDArray[np.int64]:
        """The little-endian u32 at ``offset`` into every frame's body (t_us of PIEZO and LOAD)."""
        if not len(self):
            return np.zeros(0, dtype=np.int64)
        at = self.start + offset
        limit = self.data.size - 1
        b = [self.data[np.minimum(at + k, limit)].astype(np.int64) for k in range(4)]
        return b[0] | b[1] << 8 | b[2] << 16 | b[3] << 24


def byte_rows(
    data: npt.NDArray[np.uint8], start: npt.NDArray[np.int64], length: int
) -> npt.NDArray[np.uint8]:
    """The ``length`` bytes from each ``start`` in ``data``, as rows of one array.

    A row copied whole from a window view of the buffer costs a tenth of
    gathering it byte by byte through an index array, and a chunk of a
    recording holds tens of thousands of rows.
    """
    if start.size == 0:
        return np.zeros((0, length), dtype=np.uint8)
    return np.asarray(sliding_window_view(data, length)[start])


_NO_FRAMES = FrameBatch(
    np.zeros(0, np.uint8), np.zeros(0, np.int64), np.zeros(0, np.int64),
    np.zeros(0, np.int64), np.zeros(0, np.uint8),
)


@dataclass
class DecoderStats:
    """Counters of everything the decoder saw.

    Attributes
    ----------
    bytes_in : int
        Bytes fed so far.
    frames_ok : int
        Messages decoded and returned.
    crc_errors : int
        Frames whose COBS was valid but whose CRC did not match.
    framing_errors : int
        Frames that were not valid COBS or shorter than a header and a CRC.
    oversize : int
        Frames longer than a 254-byte message can encode to.
    bad_length : int
        Frames with a good CRC and a known type whose body does not fit the type.
    unknown_types : int
        Frames with a good CRC and an unknown type (skipped).
    lost_messages : int
        Messages missing according to the sequence numbers (mod 65536).
    partial_start : int
        1 if the stream began mid-frame and that partial frame was dropped.
    resets : int
        Device reboots seen (HELLO with seq 0 after other messages).
    """

    bytes_in: int = 0
    frames_ok: int = 0
    crc_errors: int = 0
    framing_errors: int = 0
    oversize: int = 0
    bad_length: int = 0
    unknown_types: int = 0
    lost_messages: int = 0
    partial_start: int = 0
    resets: int = 0

    @property
    def damaged_frames(self) -> int:
        """Frames dropped because they were damaged (not counting a partial start)."""
        return self.crc_errors + self.framing_errors + self.oversize + self.bad_length

    def as_dict(self) -> dict[str, int]:
        """The counters as a plain dict (for JSON and printing)."""
        return asdict(self)


class FrameDecoder:
    """Decode a byte stream of COBS frames into :class:`Frame` objects.

    One decoder follows one sender's stream (its sequence numbers). It works
    for both directions: the host decodes device messages, the simulated
    device decodes host commands with the same class.

    Parameters
    ----------
    on_rejected : callable, optional
        Called as ``on_rejected(msg_type, seq, reason)`` for a frame with a
        good CRC that is not returned: ``reason`` is ``"unknown_type"`` or
        ``"bad_length"``. A device uses it to answer an unknown command.
    """

    def __init__(self, *, on_rejected: Callable[[int, int, str], None] | None = None) -> None:
        self.stats = DecoderStats()
        self._on_rejected = on_rejected
        self._pending = b""
        self._discarding = False
        self._seen_delimiter = False
        self._last_seq: int | None = None

    def resync(self) -> None:
        """Forget the partial frame and the last seq, keep the counters.

        For a transport that reconnected: the new byte stream may start
        mid-frame and the sender may have rebooted, neither of which is damage.
        """
        self._pending = b""
        self._discarding = False
        self._seen_delimiter = False
        self._last_seq = None

    def feed(self, data: bytes | bytearray | memoryview) -> list[Frame]:
        """Take the next chunk of the stream and return the messages it completed.

        Parameters
        ----------
        data : bytes-like
            Any number of bytes, cut anywhere.

        Returns
        -------
        list of Frame
            The messages whose closing 0x00 was in ``data``, in order.
        """
        frames: list[Frame] = []
        for msg_type, seq, body in self.feed_raw(data):
            frames.append(Frame(seq, MESSAGE_CLASSES[msg_type].from_body(body)))
        return frames

    def feed_raw(self, data: bytes | bytearray | memoryview) -> list[RawFrame]:
        """Like :meth:`feed`, but the messages' bodies are left as bytes.

        Every body returned is known to decode (its type is known and its
        length fits), so ``MESSAGE_CLASSES[msg_type].from_body(body)`` gives
        the message :meth:`feed` would. The counters are the same either way.
        """
        batch = self.feed_batch(data)
        return [
            RawFrame(int(t), int(q), batch.body(i))
            for i, (t, q) in enumerate(zip(batch.msg_type, batch.seq, strict=True))
        ]

    def feed_batch(self, data: bytes | bytearray | memoryview) -> FrameBatch:
        """Like :meth:`feed_raw`, with the frames as arrays over one buffer.

        A reader of recordings can then time and parse the PIEZO and LOAD
        messages of a chunk together with numpy: a stream sends hundreds of
        them a second, and per-message Python would cost more than detecting.
        The counters are the same as :meth:`feed` gives.
        """
        self.stats.bytes_in += len(data)
        buffer = self._pending + bytes(data) if self._pending else bytes(data)
        pieces = buffer.split(c.FRAME_DELIMITER)
        tail = pieces.pop()
        parts: list[FrameBatch] = []
        if pieces and (self._discarding or not self._seen_delimiter):
            # Only a chunk's first piece can end a frame already counted as
            # oversize, or be the stream's partial start.
            first = not self._seen_delimiter
            self._seen_delimiter = True
            piece, pieces = pieces[0], pieces[1:]
            if self._discarding:
                self._discarding = False
            elif piece:
                frame = self._decode_piece(piece, first)
                if frame is not None:
                    parts.append(_one_frame(frame))
        if pieces:
            self._seen_delimiter = True
            parts.extend(self._decode_pieces(list(filter(None, pieces))))
        if self._discarding:
            tail = b""  # still inside a frame already counted as oversize
        elif len(tail) > c.MAX_ENCODED_SIZE:
            if self._seen_delimiter:
                self.stats.oversize += 1
            else:
                self.stats.partial_start = 1
            self._seen_delimiter = True
            self._discarding = True
            tail = b""
        self._pending = tail
        return _join(parts)

    def _decode_pieces(self, pieces: list[bytes]) -> list[FrameBatch]:
        """Decode whole frames (none the stream's first), good PIEZO, LOAD and STATUS ones at once.

        The rest (damage, other types) take :meth:`_decode_piece` in turn,
        so counters and sequence numbers are followed in arrival order (a
        good STATUS counts as :meth:`_decode_piece` counts it: a frame, and
        the sequence numbers it follows).
        """
        n = len(pieces)
        if n == 0:
            return []
        decode = _c_cobs.decode
        try:
            # map, not a comprehension: a stream sends thousands of frames a second.
            raws = list(map(decode, pieces))
        except _c_cobs.DecodeError:
            raws = [_cobs_decode_piece(p) for p in pieces]
        piece_len = np.fromiter(map(len, pieces), np.int64, n)
        raw_len = np.fromiter(map(len, raws), np.int64, n)
        buffer = np.frombuffer(b"".join(raws), dtype=np.uint8)
        fast = (piece_len <= c.MAX_ENCODED_SIZE) & (raw_len >= _MIN_MESSAGE_SIZE)
        if not fast.any():
            return [self._slow(pieces, 0, n)]
        end = np.cumsum(raw_len)
        begin = end - raw_len
        crcs = _checksums(raws, buffer, begin, raw_len, fast)
        last = buffer.size - 1

        def byte(at: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
            return buffer[np.clip(at, 0, last)].astype(np.int64)

        msg_type = byte(begin)
        seq = byte(begin + 1) | byte(begin + 2) << 8
        # The same tests as Piezo.layout and Load.layout, on every frame at once.
        samples = raw_len - _MIN_MESSAGE_SIZE - c.PIEZO_HEADER_SIZE
        sets = byte(begin + c.HEADER_SIZE + 4)
        piezo_ok = (
            (msg_type == c.PIEZO) & (samples >= 2) & (sets >= 1) & (sets <= c.PIEZO_MAX_SETS)
            & (samples % (2 * np.maximum(sets, 1)) == 0)
        )
        values = raw_len - _MIN_MESSAGE_SIZE - c.LOAD_HEADER_SIZE
        load_ok = (msg_type == c.LOAD) & (values >= 3) & (values % 3 == 0)
        # A STATUS (one a second) too: its body has one size (Status.from_body).
        status_ok = (msg_type == c.STATUS) & (raw_len - _MIN_MESSAGE_SIZE == Status.BODY_SIZE)
        fast &= (crcs == (byte(end - 2) | byte(end - 1) << 8)) & (piezo_ok | load_ok | status_ok)
        out: list[FrameBatch] = []
        done = 0
        for j in [*np.flatnonzero(~fast).tolist(), n]:
            if j > done:
                self._count_good(seq[done:j])
                out.append(FrameBatch(
                    msg_type[done:j].astype(np.uint8), seq[done:j],
                    begin[done:j] + c.HEADER_SIZE, raw_len[done:j] - _MIN_MESSAGE_SIZE, buffer,
                ))
            if j < n:
                out.append(self._slow(pieces, j, j + 1))
            done = j + 1
        return out

    def _slow(self, pieces: list[bytes], a: int, b: int) -> FrameBatch:
        frames = [f for p in pieces[a:b] if (f := self._decode_piece(p, False)) is not None]
        return _join([_one_frame(f) for f in frames])

    def _count_good(self, seq: npt.NDArray[np.int64]) -> None:
        """Follow the sequence numbers of a run of good PIEZO and LOAD frames."""
        if seq.size == 0:
            return
        gaps = (np.diff(seq) - 1) % c.SEQ_MODULUS
        lost = int(gaps.sum())
        if self._last_seq is not None:
            lost += (int(seq[0]) - self._last_seq - 1) % c.SEQ_MODULUS
        self.stats.lost_messages += lost
        self.stats.frames_ok += int(seq.size)
        self._last_seq = int(seq[-1])

    def _decode_piece(self, piece: bytes, first: bool) -> RawFrame | None:
        stats = self.stats
        if len(piece) > c.MAX_ENCODED_SIZE:
            if first:
                stats.partial_start = 1
            else:
                stats.oversize += 1
            return None
        raw = _cobs_decode_piece(piece)
        if len(raw) < _MIN_MESSAGE_SIZE:
            if first:
                stats.partial_start = 1
            else:
                stats.framing_errors += 1
            return None
        if crc16(raw[:-2]) != raw[-2] | raw[-1] << 8:
            if first:
                stats.partial_start = 1
            else:
                stats.crc_errors += 1
            return None
        msg_type = raw[0]
        seq = raw[1] | raw[2] << 8
        self._track_seq(msg_type, seq)
        body = raw[3:-2]
        if msg_type == c.PIEZO:
            ok = Piezo.layout(body) is not None
        elif msg_type == c.LOAD:
            ok = Load.layout(body) is not None
        else:
            cls = MESSAGE_CLASSES.get(msg_type)
            if cls is None:
                stats.unknown_types += 1
                if self._on_rejected is not None:
                    self._on_rejected(msg_type, seq, "unknown_type")
                return None
            try:
                cls.from_body(body)
                ok = True
            except BodyError:
                ok = False
        if not ok:
            stats.bad_length += 1
            if self._on_rejected is not None:
                self._on_rejected(msg_type, seq, "bad_length")
            return None
        stats.frames_ok += 1
        return RawFrame(msg_type, seq, body)

    def _track_seq(self, msg_type: int, seq: int) -> None:
        last = self._last_seq
        self._last_seq = seq
        if last is None:
            return
        if msg_type == c.HELLO and seq == 0:
            # A rebooted device starts counting again: not a loss.
            self.stats.resets += 1
            return
        self.stats.lost_messages += (seq - last - 1) % c.SEQ_MODULUS


# Why 64 bytes: up to this length a numpy step per two byte columns over all
# the frames of one length costs less than a crc_hqx call per frame; longer
# frames (many sample sets) come fewer a second.
_COLUMN_CRC_MAX = 64
# Why 512 frames: from that many on, longer frames of one length too (170
# bytes: 233 us for 512 frames instead of 251 us with a crc_hqx call each,
# 1.97 ms for 5.6k instead of 3.37 ms; 125 us against 173 us for 256); a
# column step costs a microsecond or so whatever the frames, a call half
# of one a frame.
_COLUMN_CRC_ROWS = 512


def _checksums(
    raws: list[bytes], buffer: npt.NDArray[np.uint8], begin: npt.NDArray[np.int64],
    raw_len: npt.NDArray[np.int64], candidates: npt.NDArray[np.bool_],
) -> npt.NDArray[np.int64]:
    """The CRC of each candidate message (-1 elsewhere), computed per length group."""
    crcs = np.full(raw_len.size, -1, dtype=np.int64)
    # (A set, not np.unique: that imports numpy.ma, a hundredth of a second
    # at the start of every `towerear detect`.)
    for length in sorted(set(raw_len[candidates].tolist())):
        rows = np.flatnonzero(candidates & (raw_len == length))
        covered = length - c.CRC_SIZE
        if covered <= _COLUMN_CRC_MAX or rows.size >= _COLUMN_CRC_ROWS:
            crcs[rows] = crc16_rows(byte_rows(buffer, begin[rows], covered))
        else:
            crcs[rows] = [crc_hqx(raws[i][:-2], 0xFFFF) for i in rows.tolist()]
    return crcs


def _one_frame(frame: RawFrame) -> FrameBatch:
    return FrameBatch(
        np.array([frame.msg_type], np.uint8), np.array([frame.seq], np.int64),
        np.zeros(1, np.int64), np.array([len(frame.body)], np.int64),
        np.frombuffer(frame.body, dtype=np.uint8),
    )


def _join(parts: list[FrameBatch]) -> FrameBatch:
    """One batch of the parts' frames, in order, over one buffer."""
    if not parts:
        return _NO_FRAMES
    if len(parts) == 1:
        return parts[0]
    buffers: list[npt.NDArray[np.uint8]] = []
    offsets: list[int] = []
    seen: dict[int, int] = {}
    size = 0
    for part in parts:
        key = id(part.data)
        if key not in seen:
            seen[key] = size
            buffers.append(part.data)
            size += part.data.size
        offsets.append(seen[key])
    return FrameBatch(
        np.concatenate([p.msg_type for p in parts]),
        np.concatenate([p.seq for p in parts]),
        np.concatenate([p.start + off for p, off in zip(parts, offsets, strict=True)]),
        np.concatenate([p.length for p in parts]),
        np.concatenate(buffers) if len(buffers) > 1 else buffers[0],
    )
