"""Wire protocol v1 constants: the one place they are written down in Python.

Everything here follows contracts.md section 1. Message layout before framing
is ``type:u8 | seq:u16 | body | crc:u16``, little-endian.
"""

from __future__ import annotations

from typing import Final

PROTOCOL_VERSION: Final = 1
BAUD_RATE: Final = 1_000_000

# Device -> host message types.
HELLO: Final = 0x01
PIEZO: Final = 0x02
LOAD: Final = 0x03
STATUS: Final = 0x04
ACK: Final = 0x05
PONG: Final = 0x06

# Host -> device message types.
GET_INFO: Final = 0x81
START: Final = 0x82
STOP: Final = 0x83
PING: Final = 0x84
RESET: Final = 0x85

DEVICE_EXTENSION_TYPES: Final = range(0x10, 0x40)
HOST_EXTENSION_TYPES: Final = range(0xC0, 0x100)

# ACK results.
RESULT_OK: Final = 0
RESULT_UNKNOWN_COMMAND: Final = 1
RESULT_BAD_ARGUMENT: Final = 2
RESULT_BUSY: Final = 3

# START streams bitmask.
STREAM_PIEZO: Final = 0x01
STREAM_LOAD: Final = 0x02
STREAM_STATUS: Final = 0x04
STREAM_ALL: Final = STREAM_PIEZO | STREAM_LOAD | STREAM_STATUS

HEADER_SIZE: Final = 3  # type:u8 + seq:u16
CRC_SIZE: Final = 2
MAX_MESSAGE_SIZE: Final = 254  # before COBS
# COBS adds one code byte per 254 data bytes, plus the leading one; a message of
# at most 254 bytes therefore never encodes to more than 255 bytes.
MAX_ENCODED_SIZE: Final = 255
FRAME_DELIMITER: Final = b"\x00"
SEQ_MODULUS: Final = 1 << 16
T_US_MODULUS: Final = 1 << 32

PIEZO_MAX_SETS: Final = 14
PIEZO_HEADER_SIZE: Final = 5  # t_us:u32 + n:u8
LOAD_HEADER_SIZE: Final = 5  # t_us:u32 + valid:u8
S24_MIN: Final = -(1 << 23)
S24_MAX: Final = (1 << 23) - 1

# Nominal device values; hosts prefer what HELLO says.
NOMINAL_N_PIEZO: Final = 8
NOMINAL_N_LOAD: Final = 8
NOMINAL_PIEZO_RATE_HZ: Final = 2000
NOMINAL_LOAD_RATE_HZ: Final = 80
NOMINAL_ADC_BITS: Final = 10
DEVICE_ID_SIZE: Final = 8

# Sets per PIEZO frame sent by the firmware: 10 sets at 2 kHz is one frame every
# 5 ms, a compromise between framing overhead (~6 %) and latency.
PIEZO_SETS_PER_FRAME: Final = 10

MESSAGE_NAMES: Final[dict[int, str]] = {
    HELLO: "HELLO",
    PIEZO: "PIEZO",
    LOAD: "LOAD",
    STATUS: "STATUS",
    ACK: "ACK",
    PONG: "PONG",
    GET_INFO: "GET_INFO",
    START: "START",
    STOP: "STOP",
    PING: "PING",
    RESET: "RESET",
}
