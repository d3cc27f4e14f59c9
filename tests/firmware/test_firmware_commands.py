"""Every host command answered by the firmware in simavr, RESET included."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from hostapp.protocol import (
    Ack,
    FrameDecoder,
    GetInfo,
    Hello,
    Load,
    Piezo,
    Ping,
    Pong,
    Reset,
    Start,
    Status,
    Stop,
    cobs_encode,
    crc16,
    encode_frame,
)
from hostapp.protocol import constants as c
from hostapp.sources.simavr import FirmwareBuild, HostBytes, run_simavr

pytestmark = pytest.mark.firmware

TOKEN = 0xDEADBEEF


def _raw_frame(msg_type: int, seq: int, body: bytes) -> bytes:
    head = struct.pack("<BH", msg_type, seq) + body
    return cobs_encode(head + struct.pack("<H", crc16(head))) + b"\x00"


def _quiet_block(seconds: float) -> object:
    from dsp.sim import SensorBlock

    n = int(seconds * 2000)
    m = int(seconds * 80)
    rng = np.random.default_rng(7)
    return SensorBlock(
        piezo_t0_s=0.0,
        piezo=rng.integers(480, 545, size=(n, 8)).astype(np.uint16),
        load_t_s=0.003 + np.arange(m) / 80.0,
        load=rng.integers(-1000, 1000, size=(m, 8)).astype(np.int32),
        load_valid=np.ones((m, 8), dtype=bool),
    )


@pytest.fixture(scope="module")
def answered(firmware_build: FirmwareBuild) -> list[tuple[int, object]]:
    commands = [
        HostBytes(0.50, encode_frame(GetInfo(), 10)),
        HostBytes(0.60, encode_frame(Stop(), 11)),
        HostBytes(0.90, encode_frame(Ping(TOKEN), 12)),
        HostBytes(1.00, encode_frame(Start(c.STREAM_LOAD), 13)),
        HostBytes(1.30, encode_frame(Start(c.STREAM_ALL), 14)),
        HostBytes(1.40, _raw_frame(0xC5, 15, b"")),
        HostBytes(1.45, _raw_frame(c.START, 16, b"\x08")),
        HostBytes(1.50, _raw_frame(c.PING, 17, b"\x01\x02")),
        # garbage, then a frame with a bad CRC: ignored, nothing breaks
        HostBytes(1.55, b"\x55" * 40 + b"\x00" + encode_frame(Ping(1), 18)[:-3] + b"\x01\x00"),
        HostBytes(1.60, encode_frame(Ping(2), 19)),
        HostBytes(1.80, encode_frame(Reset(), 20)),
    ]
    run = run_simavr(_quiet_block(3.0), commands=commands, build=firmware_build)
    decoder = FrameDecoder()
    frames = decoder.feed(run.stream)
    assert decoder.stats.damaged_frames == 0 and decoder.stats.lost_messages == 0
    assert decoder.stats.resets == 1
    return [(f.seq, f.msg) for f in frames]


def _index(frames: list[tuple[int, object]], want: object) -> int:
    return next(i for i, (_, msg) in enumerate(frames) if msg == want)


def test_get_info_answers_hello_then_ack(answered: list[tuple[int, object]]) -> None:
    i = _index(answered, Ack(c.GET_INFO, 10, c.RESULT_OK))
    assert isinstance(answered[i - 1][1], Hello)
    assert answered[i - 1][0] > 0  # a second HELLO, not the boot one


def test_stop_silences_and_start_resumes_chosen_streams(
    answered: list[tuple[int, object]],
) -> None:
    stop = _index(answered, Ack(c.STOP, 11, c.RESULT_OK))
    load_only = _index(answered, Ack(c.START, 13, c.RESULT_OK))
    everything = _index(answered, Ack(c.START, 14, c.RESULT_OK))
    stopped = [m for _, m in answered[stop + 1 : load_only]]
    assert stopped and all(isinstance(m, Pong) for m in stopped)
    between = [m for _, m in answered[load_only + 1 : everything]]
    assert any(isinstance(m, Load) for m in between)
    assert not any(isinstance(m, Piezo | Status) for m in between)
    after = [type(m) for _, m in answered[everything + 1 :]]
    assert Piezo in after and Load in after and Status in after


def test_ping_answers_pong_with_the_token(answered: list[tuple[int, object]]) -> None:
    pongs = [m for _, m in answered if isinstance(m, Pong)]
    assert [p.token for p in pongs] == [TOKEN, 2]
    # no ACK for a PING that was answered
    ping_acks = [m for _, m in answered if isinstance(m, Ack) and m.cmd_type == c.PING]
    assert all(a.result != c.RESULT_OK for a in ping_acks)
    # its clock is the stream's clock: between the PIEZO frames around it
    i = next(i for i, (_, m) in enumerate(answered) if isinstance(m, Pong) and m.token == 2)
    before = next(m for _, m in reversed(answered[:i]) if isinstance(m, Piezo | Load))
    assert 0 <= pongs[1].t_us - before.t_us < 20_000


def test_bad_commands_get_the_right_results(answered: list[tuple[int, object]]) -> None:
    acks = [m for _, m in answered if isinstance(m, Ack)]
    assert Ack(0xC5, 15, c.RESULT_UNKNOWN_COMMAND) in acks
    assert Ack(c.START, 16, c.RESULT_BAD_ARGUMENT) in acks
    assert Ack(c.PING, 17, c.RESULT_BAD_ARGUMENT) in acks
    assert not any(a.cmd_seq == 18 for a in acks)  # the damaged frame is not answered


def test_reset_acks_then_reboots(answered: list[tuple[int, object]]) -> None:
    i = _index(answered, Ack(c.RESET, 20, c.RESULT_OK))
    seq, hello = answered[i + 1]
    assert seq == 0 and isinstance(hello, Hello)
    after = [m for _, m in answered[i + 2 :]]
    assert any(isinstance(m, Piezo) for m in after)
    # the load cells are read again: the HX711 rounds restart after the reboot
    assert any(isinstance(m, Load) and m.valid == 0xFF for m in after)
    status = next(m for m in after if isinstance(m, Status))
    assert status.flags & 0x20  # booted by the watchdog
    assert status.flags & c.STREAM_ALL == c.STREAM_ALL  # streaming again, unasked
