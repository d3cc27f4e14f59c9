"""Wire protocol v1 (contracts.md section 1): the codec, with no I/O.

- :mod:`~hostapp.protocol.constants`: message types, sizes, nominal rates.
- :func:`crc16`, :func:`cobs_encode`, :func:`cobs_decode`: the two layers.
- Message dataclasses: :class:`Hello`, :class:`Piezo`, :class:`Load`,
  :class:`Status`, :class:`Ack`, :class:`Pong` (device -> host) and
  :class:`GetInfo`, :class:`Start`, :class:`Stop`, :class:`Ping`,
  :class:`Reset` (host -> device).
- :func:`encode_frame` (message + seq -> wire bytes) and the streaming
  :class:`FrameDecoder` (wire bytes in any chunks -> :class:`Frame` list,
  counters in :class:`DecoderStats`, never raises).
- :class:`ClockUnwrapper` / :func:`unwrap_t_us` for the u32 device clock.
"""

from hostapp.protocol import constants
from hostapp.protocol.clock import ClockUnwrapper, StreamClock, unwrap_t_us
from hostapp.protocol.cobs import CobsError, cobs_decode, cobs_encode
from hostapp.protocol.codec import decode_body, encode_frame, encode_message
from hostapp.protocol.crc import crc16
from hostapp.protocol.decoder import DecoderStats, Frame, FrameDecoder, RawFrame
from hostapp.protocol.messages import (
    MESSAGE_CLASSES,
    Ack,
    BodyError,
    DeviceMessage,
    GetInfo,
    Hello,
    HostCommand,
    Load,
    Message,
    Piezo,
    Ping,
    Pong,
    Reset,
    Start,
    Status,
    Stop,
)

__all__ = [
    "MESSAGE_CLASSES",
    "Ack",
    "BodyError",
    "ClockUnwrapper",
    "CobsError",
    "DecoderStats",
    "DeviceMessage",
    "Frame",
    "FrameDecoder",
    "GetInfo",
    "Hello",
    "HostCommand",
    "Load",
    "Message",
    "Piezo",
    "Ping",
    "Pong",
    "RawFrame",
    "Reset",
    "Start",
    "Status",
    "StreamClock",
    "Stop",
    "cobs_decode",
    "cobs_encode",
    "constants",
    "crc16",
    "decode_body",
    "encode_frame",
    "encode_message",
    "unwrap_t_us",
]
