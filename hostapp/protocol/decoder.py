"""The streaming frame decoder: bytes in, in chunks of any size; messages out.

It never raises on any input. Every problem becomes a counter in
:class:`DecoderStats` and the decoder carries on at the next 0x00.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import NamedTuple

from cobs import cobs as _c_cobs

from hostapp.protocol import constants as c
from hostapp.protocol.crc import crc16
from hostapp.protocol.messages import MESSAGE_CLASSES, BodyError, Load, Message, Piezo

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
        the message :meth:`feed` would; a reader of recordings can instead
        parse the bodies of many PIEZO and LOAD messages at once with numpy.
        The counters are the same either way.
        """
        stats = self.stats
        stats.bytes_in += len(data)
        buffer = self._pending + bytes(data) if self._pending else bytes(data)
        pieces = buffer.split(c.FRAME_DELIMITER)
        tail = pieces.pop()
        frames: list[RawFrame] = []
        append = frames.append
        decode = _c_cobs.decode
        piezo_layout, load_layout = Piezo.layout, Load.layout
        ok_count = 0
        for piece in pieces:
            first = not self._seen_delimiter
            self._seen_delimiter = True
            if self._discarding:
                # The end of a frame already counted as oversize.
                self._discarding = False
                continue
            if not piece:
                continue  # back-to-back delimiters carry nothing
            # Fast path for the good PIEZO and LOAD frames that make up a
            # stream; anything else (damage, other types) takes _decode_piece.
            if not first and len(piece) <= c.MAX_ENCODED_SIZE:
                try:
                    raw = decode(piece)
                except _c_cobs.DecodeError:
                    raw = b""
                if (
                    len(raw) >= _MIN_MESSAGE_SIZE
                    and crc16(raw[:-2]) == raw[-2] | raw[-1] << 8
                    and (
                        (raw[0] == c.PIEZO and piezo_layout(raw[3:-2]) is not None)
                        or (raw[0] == c.LOAD and load_layout(raw[3:-2]) is not None)
                    )
                ):
                    seq = raw[1] | raw[2] << 8
                    last, self._last_seq = self._last_seq, seq
                    if last is not None:
                        stats.lost_messages += (seq - last - 1) % c.SEQ_MODULUS
                    ok_count += 1
                    append(RawFrame(raw[0], seq, raw[3:-2]))
                    continue
            frame = self._decode_piece(piece, first)
            if frame is not None:
                append(frame)
        stats.frames_ok += ok_count
        if self._discarding:
            tail = b""  # still inside a frame already counted as oversize
        elif len(tail) > c.MAX_ENCODED_SIZE:
            if self._seen_delimiter:
                stats.oversize += 1
            else:
                stats.partial_start = 1
            self._seen_delimiter = True
            self._discarding = True
            tail = b""
        self._pending = tail
        return frames

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
