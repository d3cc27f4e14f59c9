"""Replaying recordings as a source, and finding the board by USB id."""

from __future__ import annotations

import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from hostapp.errors import RecordingError, SourceError
from hostapp.protocol import Frame, Ping
from hostapp.recording import read_recording
from hostapp.sources import SourceState
from hostapp.sources.recording_replay import ReplaySource
from hostapp.sources.serial_port import USB_IDS, find_device_port
from hostapp.sources.sim_device import DeviceInfo, SimulatedDevice


def make_recording(tmp_path: Path, physics: Any, seconds: float) -> Path:
    path = tmp_path / "rec.bin"
    device = SimulatedDevice(physics, DeviceInfo(), clock_offset_us=2**32 - 400_000)
    path.write_bytes(device.generate(seconds))
    return path


def drain(source: ReplaySource, timeout_s: float = 10.0) -> list[Frame]:
    frames: list[Frame] = []
    deadline = time.monotonic() + timeout_s
    while not source.finished and time.monotonic() < deadline:
        frames += source.get_frames(0.02)
    return frames + source.get_frames()


def test_fast_replay_delivers_the_recording(tmp_path: Path, synthetic_physics: Any) -> None:
    path = make_recording(tmp_path, synthetic_physics(8), 3.0)
    expected = [(f.seq, f.msg) for f in read_recording(path).frames]
    with ReplaySource(path, speed=None) as source:
        frames = drain(source)
        assert source.send(Ping(1)) is None
    assert [(f.seq, f.msg) for f in frames] == expected
    assert source.state is SourceState.STOPPED


def test_paced_replay_follows_stream_time(tmp_path: Path, synthetic_physics: Any) -> None:
    path = make_recording(tmp_path, synthetic_physics(8), 2.0)
    started = time.monotonic()
    with ReplaySource(path, speed=10.0) as source:
        frames = drain(source)
    elapsed = time.monotonic() - started
    assert 0.15 <= elapsed < 1.5  # 2 s of stream at 10x: about 0.2 s
    assert len(frames) == len(read_recording(path).frames)


def test_pacing_never_sleeps_a_negative_time_when_the_deadline_passes_meanwhile(
    tmp_path: Path, synthetic_physics: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A busy machine: every reading of the clock is 30 ms later, so the
    # deadline may pass between testing it and computing the sleep.
    import hostapp.sources.recording_replay as replay

    now = [100.0]

    def monotonic() -> float:
        now[0] += 0.03
        return now[0]

    slept: list[float] = []

    def sleep(seconds: float) -> None:
        if seconds < 0:
            raise ValueError("sleep length must be non-negative")
        slept.append(seconds)

    monkeypatch.setattr(replay.time, "monotonic", monotonic)
    monkeypatch.setattr(replay.time, "sleep", sleep)
    path = make_recording(tmp_path, synthetic_physics(8), 1.0)
    for offset_ms in range(0, 60, 5):  # wherever in a 30 ms step the deadline falls
        source = ReplaySource(path, speed=1.0)
        source._wall_start = monotonic() + offset_ms / 1000.0
        source._pace(path.read_bytes())
    assert slept and min(slept) > 0


@pytest.mark.parametrize("speed", [0.5, 101.0])
def test_replay_speed_range(tmp_path: Path, synthetic_physics: Any, speed: float) -> None:
    path = make_recording(tmp_path, synthetic_physics(8), 0.1)
    with pytest.raises(SourceError, match="1..100"):
        ReplaySource(path, speed=speed)


def test_replay_of_missing_or_empty_file(tmp_path: Path) -> None:
    with pytest.raises(RecordingError, match="cannot be opened"):
        ReplaySource(tmp_path / "nope.bin")
    (tmp_path / "empty.bin").write_bytes(b"")
    with pytest.raises(RecordingError, match="empty"):
        ReplaySource(tmp_path / "empty.bin")


def port(device: str, vid: int | None = None, pid: int | None = None) -> SimpleNamespace:
    return SimpleNamespace(device=device, vid=vid, pid=pid)


def test_board_found_by_usb_id() -> None:
    ports = [
        port("/dev/ttyS0"),
        port("/dev/ttyUSB3", 0x0403, 0x6015),
        port("/dev/ttyUSB1", 0x1A86, 0x7523),
    ]
    assert find_device_port(ports) == "/dev/ttyUSB1"
    assert (0x0403, 0x6001) in USB_IDS and (0x2341, 0x0043) in USB_IDS


def test_no_board_lists_the_ports_seen() -> None:
    with pytest.raises(SourceError) as info:
        find_device_port([port("/dev/ttyS0"), port("/dev/ttyUSB3", 0x0403, 0x6015)])
    message = str(info.value)
    assert "1A86:7523" in message
    assert "/dev/ttyS0, /dev/ttyUSB3 (0403:6015)" in message
    assert "\n" not in message
    with pytest.raises(SourceError, match="no serial ports seen"):
        find_device_port([])


def test_failing_tap_is_switched_off_not_fatal(tmp_path: Path, synthetic_physics: Any) -> None:
    path = make_recording(tmp_path, synthetic_physics(8), 1.0)
    calls = []

    def full_disk(data: bytes) -> None:
        calls.append(len(data))
        raise OSError(28, "No space left on device")

    with ReplaySource(path, speed=None, tap=full_disk) as source:
        frames = drain(source)
    assert len(calls) == 1
    assert "No space left" in source.stats().tap_error
    assert len(frames) == len(read_recording(path).frames)
