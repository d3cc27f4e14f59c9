"""The simulated device on a pseudo-terminal, read through pyserial at 1,000,000 baud."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hostapp.protocol import Frame, Load, Piezo, Ping, Pong, Start
from hostapp.protocol import constants as c
from hostapp.sources import SourceState
from hostapp.sources.pty_server import PtyDeviceServer
from hostapp.sources.serial_port import SerialSource
from hostapp.sources.sim_device import Damage, DeviceInfo, SimulatedDevice

PACE = 10.0  # 10 s of stream in about 1 s of wall time
STREAM_S = 10.0
OFFSET_US = 2**32 - 3_000_000  # the device clock wraps during the run


def read_stream(source: SerialSource, seconds: float, timeout_s: float = 10.0) -> list[Frame]:
    """Frames until PIEZO frames cover ``seconds`` of device time."""
    frames: list[Frame] = []
    first_t = None
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for frame in source.get_frames(0.05):
            frames.append(frame)
            if isinstance(frame.msg, Piezo):
                if first_t is None:
                    first_t = frame.msg.t_us
                elif (frame.msg.t_us - first_t) % 2**32 >= seconds * 1e6:
                    return frames
    raise AssertionError(f"only {len(frames)} frames arrived in {timeout_s} s")


def run_device(tmp_path: Path, physics: Any, damage: Damage | None) -> tuple[list[Frame], Any]:
    device = SimulatedDevice(physics, DeviceInfo(), clock_offset_us=OFFSET_US, damage=damage)
    with PtyDeviceServer(device, pace=PACE, link_path=tmp_path / "tty") as server:
        source = SerialSource(server.path, retry_interval_s=0.05)
        with source:
            assert source.wait_connected(3.0)
            frames = read_stream(source, STREAM_S)
            stats = source.stats()
        assert server.bytes_dropped == 0
    return frames, stats


def check_samples(frames: list[Frame], reference: Any) -> None:
    piezo = [f.msg for f in frames if isinstance(f.msg, Piezo)]
    first_set = ((piezo[0].t_us - OFFSET_US) % 2**32) // 500
    got = np.concatenate([m.samples for m in piezo])
    assert len(got) >= STREAM_S * 2000
    expected = reference.piezo_sets(first_set, len(got))
    # Set-exact: sample k of the run is the simulator's set first_set + k.
    set_index = (np.array([(m.t_us - OFFSET_US) % 2**32 for m in piezo]) // 500)
    np.testing.assert_array_equal(set_index, first_set + 10 * np.arange(len(piezo)))
    np.testing.assert_array_equal(got, expected)
    loads = [f.msg for f in frames if isinstance(f.msg, Load)]
    first_load = round(((loads[0].t_us - OFFSET_US) % 2**32) / 12_500)
    values, _ = reference.load_readings(first_load, len(loads))
    np.testing.assert_array_equal(np.stack([m.values for m in loads]), values)


def test_ten_seconds_through_pyserial_are_sample_exact(
    tmp_path: Path, synthetic_physics: Any
) -> None:
    frames, stats = run_device(tmp_path, synthetic_physics(21), None)
    assert stats.decoder.lost_messages == 0
    assert stats.decoder.crc_errors == 0
    assert stats.decoder.damaged_frames == 0
    check_samples(frames, synthetic_physics(21))


def test_injected_damage_is_counted_exactly(tmp_path: Path, synthetic_physics: Any) -> None:
    damage = Damage(bit_flip_prob=0.01, drop_prob=0.005, seed=5)
    frames, stats = run_device(tmp_path, synthetic_physics(21), damage)
    first, last = frames[0].seq, frames[-1].seq
    hit = [s for s in damage.damaged_seqs if first < s < last]
    assert len(hit) > 10
    assert stats.decoder.lost_messages == len(hit)
    assert stats.decoder.damaged_frames == len(hit)
    received = {f.seq for f in frames}
    assert received.isdisjoint(hit)
    assert len(received) == last - first + 1 - len(hit)


def test_commands_are_answered_over_the_port(tmp_path: Path, synthetic_physics: Any) -> None:
    device = SimulatedDevice(synthetic_physics(2), DeviceInfo())
    with PtyDeviceServer(device, pace=PACE) as server:
        with SerialSource(server.path, request_info_on_connect=False) as source:
            assert source.wait_connected(3.0)
            ping_seq = source.send(Ping(77))
            load_seq = source.send(Start(c.STREAM_LOAD))
            assert (ping_seq, load_seq) == (0, 1)
            answers: list[Any] = []
            deadline = time.monotonic() + 5
            while len(answers) < 2 and time.monotonic() < deadline:
                answers += [f.msg for f in source.get_frames(0.05) if f.msg.TYPE >= c.ACK]
            assert isinstance(answers[0], Pong) and answers[0].token == 77
            assert answers[1].cmd_type == c.START and answers[1].result == c.RESULT_OK
            source.get_frames(0.3)
            time.sleep(0.1)
            later = source.get_frames(0.3)
            assert later and all(isinstance(f.msg, Load) for f in later)


def test_unplugged_port_is_a_state_and_reconnects(tmp_path: Path, synthetic_physics: Any) -> None:
    device = SimulatedDevice(synthetic_physics(3), DeviceInfo())
    with PtyDeviceServer(device, pace=PACE, link_path=tmp_path / "tty") as server:
        with SerialSource(server.path, retry_interval_s=0.05) as source:
            assert source.wait_connected(3.0)
            assert source.get_frames(1.0)
            server.unplug()
            deadline = time.monotonic() + 3
            while source.state is not SourceState.DISCONNECTED and time.monotonic() < deadline:
                time.sleep(0.02)
            assert source.state is SourceState.DISCONNECTED
            assert source.stats().last_error
            assert source.send(Ping(1)) is None
            server.replug()
            assert source.wait_connected(3.0)
            assert source.stats().connects == 2
            deadline = time.monotonic() + 3
            hellos = []
            while not hellos and time.monotonic() < deadline:
                hellos = [f for f in source.get_frames(0.05) if f.msg.TYPE == c.HELLO]
            assert hellos  # answered the GET_INFO sent on reconnecting


@pytest.mark.parametrize("pace", [0.0, -1.0])
def test_pace_must_be_positive(synthetic_physics: Any, pace: float) -> None:
    with pytest.raises(ValueError, match="pace"):
        PtyDeviceServer(SimulatedDevice(synthetic_physics(1), DeviceInfo()), pace=pace)
