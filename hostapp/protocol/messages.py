"""Protocol v1 messages as frozen dataclasses, one per message type.

Each class knows its ``TYPE`` and how to pack its body (``body()``) and unpack
it (``from_body``). Array fields are numpy arrays; equality compares their
contents so messages can be compared in tests.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
import numpy.typing as npt

from hostapp.protocol import constants as c


class BodyError(ValueError):
    """A message body has the wrong length or an out-of-range field."""


_HELLO = struct.Struct("<BBBBBBHHB8s")
_PIEZO_HEAD = struct.Struct("<IB")
_LOAD_HEAD = struct.Struct("<IB")
_STATUS = struct.Struct("<IHHHBB")
_ACK = struct.Struct("<BHB")
_PONG = struct.Struct("<II")
_U8 = struct.Struct("<B")
_U32 = struct.Struct("<I")


def s24_to_int32(raw: npt.NDArray[np.uint8]) -> npt.NDArray[np.int32]:
    """Little-endian s24 values, shape ``(..., 3)`` bytes, as int32 of shape ``(...)``."""
    # Put each s24 in the top three bytes of an s32; the arithmetic shift
    # back down sign-extends it.
    wide = np.zeros(raw.shape[:-1] + (4,), dtype=np.uint8)
    wide[..., 1:] = raw
    return (wide.view("<i4")[..., 0] >> 8).astype(np.int32, copy=False)


def _unpack(layout: struct.Struct, body: bytes, name: str) -> tuple[int | bytes, ...]:
    if len(body) != layout.size:
        raise BodyError(f"{name} body must be {layout.size} bytes, got {len(body)}")
    return layout.unpack(body)


@dataclass(frozen=True)
class Hello:
    """HELLO (0x01): who the device is and what it streams."""

    TYPE: ClassVar[int] = c.HELLO
    proto: int = c.PROTOCOL_VERSION
    fw_major: int = 0
    fw_minor: int = 0
    fw_patch: int = 0
    n_piezo: int = c.NOMINAL_N_PIEZO
    n_load: int = c.NOMINAL_N_LOAD
    piezo_rate_hz: int = c.NOMINAL_PIEZO_RATE_HZ
    load_rate_hz: int = c.NOMINAL_LOAD_RATE_HZ
    adc_bits: int = c.NOMINAL_ADC_BITS
    device_id: bytes = bytes(c.DEVICE_ID_SIZE)

    def body(self) -> bytes:
        if len(self.device_id) != c.DEVICE_ID_SIZE:
            raise BodyError(f"HELLO device_id must be {c.DEVICE_ID_SIZE} bytes")
        return _HELLO.pack(
            self.proto,
            self.fw_major,
            self.fw_minor,
            self.fw_patch,
            self.n_piezo,
            self.n_load,
            self.piezo_rate_hz,
            self.load_rate_hz,
            self.adc_bits,
            self.device_id,
        )

    @classmethod
    def from_body(cls, body: bytes) -> Hello:
        fields = _unpack(_HELLO, body, "HELLO")
        return cls(*fields)  # type: ignore[arg-type]

    @property
    def firmware_version(self) -> str:
        """The firmware version as ``"major.minor.patch"``."""
        return f"{self.fw_major}.{self.fw_minor}.{self.fw_patch}"


@dataclass(frozen=True, eq=False)
class Piezo:
    """PIEZO (0x02): ``n`` consecutive sample sets of every piezo channel.

    Attributes
    ----------
    t_us : int
        Device clock (u32, microseconds) of the first set.
    samples : ndarray, shape (n, n_piezo), uint16
        ADC codes, set-major; ``n`` is 1..14. Decoded messages hold a
        read-only view of the received bytes (copy before changing it).
    """

    TYPE: ClassVar[int] = c.PIEZO
    t_us: int
    samples: npt.NDArray[np.uint16] = field(repr=False)

    def body(self) -> bytes:
        samples = np.asarray(self.samples)
        if samples.ndim != 2 or not 1 <= samples.shape[0] <= c.PIEZO_MAX_SETS:
            raise BodyError(f"PIEZO needs an (n, channels) array with n in 1..{c.PIEZO_MAX_SETS}")
        return _PIEZO_HEAD.pack(self.t_us, samples.shape[0]) + samples.astype("<u2").tobytes()

    @staticmethod
    def layout(body: bytes) -> tuple[int, int] | None:
        """``(sets, channels)`` of a PIEZO body, or None if it is not a valid one.

        n_piezo follows from the length, so frames decode before HELLO is seen.
        """
        payload = len(body) - c.PIEZO_HEADER_SIZE
        if payload < 2:
            return None
        n = body[4]
        if not 1 <= n <= c.PIEZO_MAX_SETS or payload % (2 * n):
            return None
        return n, payload // (2 * n)

    @classmethod
    def from_body(cls, body: bytes) -> Piezo:
        shape = cls.layout(body)
        if shape is None:
            raise BodyError(f"PIEZO body of {len(body)} bytes is not whole sample sets")
        (t_us,) = _U32.unpack_from(body)
        # A read-only view of the (immutable) body, no copy.
        samples = np.ndarray(shape, dtype="<u2", buffer=body, offset=c.PIEZO_HEADER_SIZE)
        return cls(t_us, samples)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Piezo):
            return NotImplemented
        return self.t_us == other.t_us and np.array_equal(self.samples, other.samples)

    __hash__ = None  # type: ignore[assignment]


@dataclass(frozen=True, eq=False)
class Load:
    """LOAD (0x03): one HX711 reading per load channel.

    Attributes
    ----------
    t_us : int
        Device clock (u32, microseconds) of the readings.
    valid : int
        Bitmask; bit k set means channel k has a fresh reading.
    values : ndarray, shape (n_load,), int32
        Signed 24-bit counts, 0 where not valid.
    """

    TYPE: ClassVar[int] = c.LOAD
    t_us: int
    valid: int
    values: npt.NDArray[np.int32] = field(repr=False)

    def body(self) -> bytes:
        values = np.asarray(self.values, dtype=np.int64)
        if values.ndim != 1 or values.size == 0:
            raise BodyError("LOAD values must be a non-empty 1-D array")
        if values.min() < c.S24_MIN or values.max() > c.S24_MAX:
            raise BodyError("LOAD values must fit in signed 24 bits")
        raw = (values & 0xFFFFFF).astype("<u4").view(np.uint8).reshape(-1, 4)[:, :3]
        return _LOAD_HEAD.pack(self.t_us, self.valid) + raw.tobytes()

    @staticmethod
    def layout(body: bytes) -> int | None:
        """Channels in a LOAD body, or None if it is not a valid one."""
        payload = len(body) - c.LOAD_HEADER_SIZE
        if payload < 3 or payload % 3:
            return None
        return payload // 3

    @classmethod
    def from_body(cls, body: bytes) -> Load:
        if cls.layout(body) is None:
            raise BodyError(f"LOAD body of {len(body)} bytes is not a whole number of s24 values")
        t_us, valid = _LOAD_HEAD.unpack_from(body)
        raw = np.frombuffer(body, dtype=np.uint8, offset=c.LOAD_HEADER_SIZE).reshape(1, -1, 3)
        return cls(t_us, valid, s24_to_int32(raw)[0])

    def is_valid(self, channel: int) -> bool:
        """Whether ``channel`` has a fresh reading in this message."""
        return bool(self.valid >> channel & 1)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Load):
            return NotImplemented
        return (
            self.t_us == other.t_us
            and self.valid == other.valid
            and np.array_equal(self.values, other.values)
        )

    __hash__ = None  # type: ignore[assignment]


@dataclass(frozen=True)
class Status:
    """STATUS (0x04): device health counters, sent once a second."""

    TYPE: ClassVar[int] = c.STATUS
    BODY_SIZE: ClassVar[int] = _STATUS.size
    uptime_ms: int
    piezo_overruns: int = 0
    tx_dropped: int = 0
    load_timeouts: int = 0
    cpu_load_pct: int = 0
    flags: int = 0

    def body(self) -> bytes:
        return _STATUS.pack(
            self.uptime_ms,
            self.piezo_overruns,
            self.tx_dropped,
            self.load_timeouts,
            self.cpu_load_pct,
            self.flags,
        )

    @classmethod
    def from_body(cls, body: bytes) -> Status:
        return cls(*_unpack(_STATUS, body, "STATUS"))  # type: ignore[arg-type]


@dataclass(frozen=True)
class Ack:
    """ACK (0x05): the device's answer to a host command."""

    TYPE: ClassVar[int] = c.ACK
    cmd_type: int
    cmd_seq: int
    result: int = c.RESULT_OK

    def body(self) -> bytes:
        return _ACK.pack(self.cmd_type, self.cmd_seq, self.result)

    @classmethod
    def from_body(cls, body: bytes) -> Ack:
        return cls(*_unpack(_ACK, body, "ACK"))  # type: ignore[arg-type]


@dataclass(frozen=True)
class Pong:
    """PONG (0x06): answer to PING with the token and the device clock."""

    TYPE: ClassVar[int] = c.PONG
    token: int
    t_us: int

    def body(self) -> bytes:
        return _PONG.pack(self.token, self.t_us)

    @classmethod
    def from_body(cls, body: bytes) -> Pong:
        return cls(*_unpack(_PONG, body, "PONG"))  # type: ignore[arg-type]


@dataclass(frozen=True)
class GetInfo:
    """GET_INFO (0x81): ask for HELLO."""

    TYPE: ClassVar[int] = c.GET_INFO

    def body(self) -> bytes:
        return b""

    @classmethod
    def from_body(cls, body: bytes) -> GetInfo:
        _unpack(struct.Struct("<"), body, "GET_INFO")
        return cls()


@dataclass(frozen=True)
class Start:
    """START (0x82): switch streams on; bit0 piezo, bit1 load, bit2 status."""

    TYPE: ClassVar[int] = c.START
    streams: int = c.STREAM_ALL

    def body(self) -> bytes:
        return _U8.pack(self.streams)

    @classmethod
    def from_body(cls, body: bytes) -> Start:
        return cls(*_unpack(_U8, body, "START"))  # type: ignore[arg-type]


@dataclass(frozen=True)
class Stop:
    """STOP (0x83): switch every stream off."""

    TYPE: ClassVar[int] = c.STOP

    def body(self) -> bytes:
        return b""

    @classmethod
    def from_body(cls, body: bytes) -> Stop:
        _unpack(struct.Struct("<"), body, "STOP")
        return cls()


@dataclass(frozen=True)
class Ping:
    """PING (0x84): the device answers PONG with the same token."""

    TYPE: ClassVar[int] = c.PING
    token: int = 0

    def body(self) -> bytes:
        return _U32.pack(self.token)

    @classmethod
    def from_body(cls, body: bytes) -> Ping:
        return cls(*_unpack(_U32, body, "PING"))  # type: ignore[arg-type]


@dataclass(frozen=True)
class Reset:
    """RESET (0x85): the device ACKs, then reboots (HELLO again, seq from 0)."""

    TYPE: ClassVar[int] = c.RESET

    def body(self) -> bytes:
        return b""

    @classmethod
    def from_body(cls, body: bytes) -> Reset:
        _unpack(struct.Struct("<"), body, "RESET")
        return cls()


Message = Hello | Piezo | Load | Status | Ack | Pong | GetInfo | Start | Stop | Ping | Reset
DeviceMessage = Hello | Piezo | Load | Status | Ack | Pong
HostCommand = GetInfo | Start | Stop | Ping | Reset

MESSAGE_CLASSES: dict[int, type[Message]] = {
    cls.TYPE: cls
    for cls in (Hello, Piezo, Load, Status, Ack, Pong, GetInfo, Start, Stop, Ping, Reset)
}
