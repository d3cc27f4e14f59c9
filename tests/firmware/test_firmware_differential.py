"""The firmware's command decoder against the Python codec, on generated streams.

The C core is loaded through ctypes (build/host/libtowerear_core.so) and fed
streams that hypothesis builds from good frames, garbage and bit flips. The
oracle is the Python codec's own COBS and CRC: split at 0x00, drop pieces
too long for a message, COBS-decode, check the CRC. Both must find exactly
the same frames, and the C side's ACK result must follow contracts.md.
"""

from __future__ import annotations

import ctypes
import struct
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hostapp.protocol import CobsError, cobs_decode, cobs_encode, crc16
from hostapp.protocol import constants as c
from hostapp.sources.simavr import build_lock

pytestmark = pytest.mark.firmware

MAX_ENCODED = 255


@pytest.fixture(scope="module")
def core(firmware_dir: Path) -> ctypes.CDLL:
    build = firmware_dir / "build"
    with build_lock(build / ".build.lock"):
        subprocess.run(
            ["make", "-s", "-C", str(firmware_dir), "build/host/libtowerear_core.so"], check=True
        )
    lib = ctypes.CDLL(str(build / "host" / "libtowerear_core.so"))
    lib.core_decode_stream.restype = ctypes.c_int
    lib.core_decode_stream.argtypes = [
        ctypes.c_char_p,
        ctypes.c_size_t,
        ctypes.c_uint16,
        ctypes.c_char_p,
        ctypes.c_size_t,
        ctypes.POINTER(ctypes.c_uint16),
    ]
    return lib


def c_decode(lib: ctypes.CDLL, stream: bytes, cap: int) -> list[tuple[int, int, bytes, int]]:
    out = ctypes.create_string_buffer(len(stream) * 2 + 64)
    counters = (ctypes.c_uint16 * 4)()
    n = lib.core_decode_stream(stream, len(stream), cap, out, len(out), counters)
    assert n >= 0
    raw = out.raw[:n]
    frames = []
    i = 0
    while i < n:
        msg_type, seq, length = raw[i], raw[i + 1] | raw[i + 2] << 8, raw[i + 3]
        body = raw[i + 4 : i + 4 + length]
        frames.append((msg_type, seq, body, raw[i + 4 + length]))
        i += 5 + length
    return frames


def oracle(stream: bytes, cap: int) -> list[tuple[int, int, bytes]]:
    frames = []
    pieces = stream.split(b"\x00")[:-1]  # the tail has no delimiter yet
    for piece in pieces:
        if not piece or len(piece) > cap:
            continue
        try:
            raw = cobs_decode(piece)
        except CobsError:
            continue
        if len(raw) < 5 or crc16(raw[:-2]) != struct.unpack("<H", raw[-2:])[0]:
            continue
        frames.append((raw[0], raw[1] | raw[2] << 8, raw[3:-2]))
    return frames


def expected_result(msg_type: int, body: bytes) -> int:
    if msg_type in (c.GET_INFO, c.STOP, c.RESET):
        return c.RESULT_OK if not body else c.RESULT_BAD_ARGUMENT
    if msg_type == c.START:
        ok = len(body) == 1 and not body[0] & ~c.STREAM_ALL
        return c.RESULT_OK if ok else c.RESULT_BAD_ARGUMENT
    if msg_type == c.PING:
        return c.RESULT_OK if len(body) == 4 else c.RESULT_BAD_ARGUMENT
    return c.RESULT_UNKNOWN_COMMAND


def frame(msg_type: int, seq: int, body: bytes) -> bytes:
    head = struct.pack("<BH", msg_type, seq) + body
    return cobs_encode(head + struct.pack("<H", crc16(head))) + b"\x00"


good_frames = st.builds(
    frame,
    st.sampled_from([c.GET_INFO, c.START, c.STOP, c.PING, c.RESET, 0xC7, 0x02, 0x00, 0xFF]),
    st.integers(0, 0xFFFF),
    st.binary(max_size=40),
)
garbage = st.binary(max_size=300)
part = st.one_of(good_frames, good_frames, garbage)


@st.composite
def streams(draw: st.DrawFn) -> bytes:
    data = bytearray(b"".join(draw(st.lists(part, max_size=8))))
    for _ in range(draw(st.integers(0, 3))):
        if data:
            at = draw(st.integers(0, len(data) - 1))
            data[at] ^= 1 << draw(st.integers(0, 7))
    return bytes(data)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(streams())
def test_decoder_agrees_with_the_python_codec(core: ctypes.CDLL, stream: bytes) -> None:
    for cap in (32, MAX_ENCODED):  # the firmware's buffer, and one as long as any message
        got = c_decode(core, stream, cap)
        assert [(t, s, b) for t, s, b, _ in got] == oracle(stream, cap)
        for msg_type, _, body, result in got:
            assert result == expected_result(msg_type, body)
