"""The simulated device's bytes: framing, timing, commands and damage."""

from __future__ import annotations

from typing import Any

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
    encode_frame,
    unwrap_t_us,
)
from hostapp.protocol import constants as c
from hostapp.protocol.cobs import cobs_encode
from hostapp.protocol.crc import crc16
from hostapp.sources.sim_device import Damage, DeviceInfo, SimulatedDevice

INFO = DeviceInfo(device_id=b"testtwr1")


def decode(data: bytes) -> tuple[list[Any], FrameDecoder]:
    decoder = FrameDecoder()
    return decoder.feed(data), decoder


def test_stream_matches_the_physics(synthetic_physics: Any) -> None:
    offset = 2**32 - 1_500_000  # the clock wraps 1.5 s in
    device = SimulatedDevice(synthetic_physics(3), INFO, clock_offset_us=offset)
    frames, decoder = decode(b"".join(device.generate(0.25) for _ in range(12)))
    assert frames[0].msg == INFO.hello() and frames[0].seq == 0
    assert [f.seq for f in frames] == list(range(len(frames)))
    assert decoder.stats.damaged_frames == 0
    piezo = [f.msg for f in frames if isinstance(f.msg, Piezo)]
    assert all(m.samples.shape == (10, 8) for m in piezo)
    reference = synthetic_physics(3)
    np.testing.assert_array_equal(
        np.concatenate([m.samples for m in piezo]), reference.piezo_sets(0, 6000)
    )
    times = unwrap_t_us([m.t_us for m in piezo])
    np.testing.assert_array_equal(times - offset, np.arange(600) * 5000)
    loads = [f.msg for f in frames if isinstance(f.msg, Load)]
    values, valid = reference.load_readings(0, len(loads))
    assert len(loads) == 240
    np.testing.assert_array_equal(np.stack([m.values for m in loads]), values)
    masks = [sum(1 << k for k in range(8) if row[k]) for row in valid]
    assert [m.valid for m in loads] == masks
    assert [(m.t_us - offset) % 2**32 for m in loads] == [round(j * 12_500) for j in range(240)]
    status = [f.msg for f in frames if isinstance(f.msg, Status)]
    assert [s.uptime_ms for s in status] == [1000, 2000, 3000]
    assert all(s.flags == c.STREAM_ALL for s in status)
    assert device.stream_origin_sim_s == 0.0


def test_any_step_size_gives_the_same_bytes(synthetic_physics: Any) -> None:
    whole = SimulatedDevice(synthetic_physics(5), INFO).generate(2.0)
    device = SimulatedDevice(synthetic_physics(5), INFO)
    stepped = b"".join(device.generate(step) for step in [0.0013, 0.5, 0.0007, 0.2, 1.298])
    assert stepped == whole


def test_frames_are_in_time_order(synthetic_physics: Any) -> None:
    device = SimulatedDevice(synthetic_physics(1), INFO)
    frames, _ = decode(device.generate(1.0))
    timed = [f.msg.t_us for f in frames if isinstance(f.msg, Load | Piezo)]
    # A PIEZO frame leaves when its tenth set is sampled, 4.5 ms after its t_us.
    sent = [t + (4500 if isinstance(f.msg, Piezo) else 0)
            for t, f in zip(timed, [f for f in frames if isinstance(f.msg, Load | Piezo)],
                            strict=True)]
    assert sent == sorted(sent)


def host(*commands: Any, first_seq: int = 0) -> bytes:
    return b"".join(encode_frame(cmd, first_seq + i) for i, cmd in enumerate(commands))


def test_command_answers(synthetic_physics: Any) -> None:
    device = SimulatedDevice(synthetic_physics(2), INFO, clock_offset_us=1000)
    device.generate(0.1)
    device.receive(host(GetInfo(), Ping(0xABCDEF01), Start(0x09), Start(0x02), first_seq=40))
    frames, _ = decode(device.generate(0.0))
    assert [f.msg for f in frames] == [
        INFO.hello(),
        Ack(c.GET_INFO, 40, c.RESULT_OK),
        Pong(0xABCDEF01, 1000 + 100_000),
        Ack(c.START, 42, c.RESULT_BAD_ARGUMENT),
        Ack(c.START, 43, c.RESULT_OK),
    ]
    frames, _ = decode(device.generate(1.0))
    assert {type(f.msg) for f in frames} == {Load}  # load only; status off too
    device.receive(host(Stop(), first_seq=44))
    frames, _ = decode(device.generate(1.0))
    assert [f.msg for f in frames] == [Ack(c.STOP, 44, c.RESULT_OK)]
    assert device.streams == 0


def test_unknown_and_malformed_commands(synthetic_physics: Any) -> None:
    device = SimulatedDevice(synthetic_physics(2), INFO)
    device.generate(0.0)
    head = bytes([c.START, 7, 0, 1, 2])  # START with a two-byte body
    bad_start = cobs_encode(head + crc16(head).to_bytes(2, "little")) + b"\x00"
    head = bytes([0xC5, 8, 0])
    unknown = cobs_encode(head + crc16(head).to_bytes(2, "little")) + b"\x00"
    device.receive(bad_start + unknown + host(Status(1), first_seq=9))
    frames, _ = decode(device.generate(0.0))
    assert [f.msg for f in frames] == [
        Ack(c.START, 7, c.RESULT_BAD_ARGUMENT),
        Ack(0xC5, 8, c.RESULT_UNKNOWN_COMMAND),
        Ack(c.STATUS, 9, c.RESULT_UNKNOWN_COMMAND),
    ]


def test_reset_acks_then_reboots(synthetic_physics: Any) -> None:
    device = SimulatedDevice(synthetic_physics(4), INFO, clock_offset_us=123_456_789)
    decoder = FrameDecoder()
    decoder.feed(device.generate(0.5))
    device.receive(host(Reset(), first_seq=3))
    frames = decoder.feed(device.generate(0.1))
    assert isinstance(frames[0].msg, Ack) and frames[0].msg.cmd_type == c.RESET
    assert frames[1].seq == 0 and isinstance(frames[1].msg, Hello)
    first_piezo = next(f.msg for f in frames if isinstance(f.msg, Piezo))
    assert first_piezo.t_us == 0  # the clock restarted
    assert decoder.stats.resets == 1 and decoder.stats.lost_messages == 0


@pytest.mark.parametrize(("flip", "drop"), [(0.05, 0.0), (0.0, 0.05), (0.03, 0.03)])
def test_damage_is_counted_exactly(synthetic_physics: Any, flip: float, drop: float) -> None:
    damage = Damage(bit_flip_prob=flip, drop_prob=drop, seed=11)
    device = SimulatedDevice(synthetic_physics(6), INFO, damage=damage)
    data = device.generate(5.0)
    clean = SimulatedDevice(synthetic_physics(6), INFO).generate(5.0)
    damaged = set(damage.damaged_seqs)
    assert 20 < len(damaged) < 200
    frames, decoder = decode(data + encode_frame(Status(0), device.frames_sent))
    assert decoder.stats.lost_messages == len(damaged)
    assert decoder.stats.damaged_frames == len(damaged)
    reference, _ = decode(clean)
    expected = [f for f in reference if f.seq not in damaged]
    assert frames[:-1] == expected
