"""Encoding messages into wire frames and decoding one message from its bytes."""

from __future__ import annotations

import struct

from hostapp.protocol import constants as c
from hostapp.protocol.cobs import cobs_encode
from hostapp.protocol.crc import crc16
from hostapp.protocol.messages import MESSAGE_CLASSES, BodyError, Message

_HEADER = struct.Struct("<BH")
_CRC = struct.Struct("<H")


def encode_message(msg: Message, seq: int) -> bytes:
    """The message before framing: ``type | seq | body | crc``.

    Parameters
    ----------
    msg : Message
        Any protocol message.
    seq : int
        Sequence number, taken modulo 65536.

    Returns
    -------
    bytes
        At most 254 bytes.

    Raises
    ------
    BodyError
        If a field is out of range or the message is longer than 254 bytes.
    """
    try:
        raw = encode_raw(msg.TYPE, seq, msg.body())
    except struct.error as exc:
        raise BodyError(f"{type(msg).__name__}: {exc}") from exc
    if len(raw) > c.MAX_MESSAGE_SIZE:
        raise BodyError(f"{type(msg).__name__} is {len(raw)} bytes, more than {c.MAX_MESSAGE_SIZE}")
    return raw


def encode_raw(msg_type: int, seq: int, body: bytes) -> bytes:
    """``type | seq | body | crc`` from a body already packed (as ``FrameDecoder.feed_raw`` gives).

    ``seq`` is taken modulo 65536; the size is not checked.
    """
    head = _HEADER.pack(msg_type, seq % c.SEQ_MODULUS) + body
    return head + _CRC.pack(crc16(head))


def encode_frame(msg: Message, seq: int) -> bytes:
    """The message as it goes on the wire: COBS-encoded, then one 0x00.

    Parameters
    ----------
    msg : Message
        Any protocol message.
    seq : int
        Sequence number, taken modulo 65536.

    Returns
    -------
    bytes
        The frame, ending in its 0x00 delimiter.
    """
    return cobs_encode(encode_message(msg, seq)) + c.FRAME_DELIMITER


def decode_body(msg_type: int, body: bytes) -> Message:
    """Build the message of a known ``msg_type`` from its body.

    Raises
    ------
    KeyError
        If ``msg_type`` is not a known message type.
    BodyError
        If the body does not fit the type.
    """
    return MESSAGE_CLASSES[msg_type].from_body(body)
