"""SimavrSource: the firmware in simavr as a live source, like a serial port."""

from __future__ import annotations

import time

import numpy as np
import pytest

from hostapp.protocol import Hello, Piezo, Ping, Pong
from hostapp.sources import SourceState
from hostapp.sources.simavr import FirmwareBuild, SimavrSource

pytestmark = pytest.mark.firmware


def _block(seconds: float) -> object:
    from dsp.sim import SensorBlock

    n, m = int(seconds * 2000), int(seconds * 80)
    piezo = (512 + 100 * np.sin(np.arange(n) / 7.0)[:, None] + np.arange(8)).astype(np.uint16)
    return SensorBlock(
        piezo_t0_s=0.0,
        piezo=piezo,
        load_t_s=0.005 + np.arange(m) / 80.0,
        load=np.tile(np.arange(8, dtype=np.int32) * 1000, (m, 1)),
        load_valid=np.ones((m, 8), dtype=bool),
    )


def test_source_streams_answers_and_stops(firmware_build: FirmwareBuild) -> None:
    block = _block(2.0)
    source = SimavrSource(block=block, realtime=False, retry_interval_s=0.05)
    frames = []
    with source:
        assert source.wait_connected(30.0), source.stats().last_error
        deadline = time.monotonic() + 60.0
        while sum(isinstance(f.msg, Piezo) for f in frames) < 100:
            assert time.monotonic() < deadline
            frames += source.get_frames(timeout_s=0.2)
        seq = source.send(Ping(0xC0FFEE))
        assert seq is not None
        while not any(isinstance(f.msg, Pong) for f in frames):
            assert time.monotonic() < deadline
            frames += source.get_frames(timeout_s=0.2)
        stats = source.stats()
    assert source.state is SourceState.STOPPED
    assert stats.decoder.damaged_frames == 0 and stats.decoder.lost_messages == 0
    assert isinstance(frames[0].msg, Hello)
    pong = next(f.msg for f in frames if isinstance(f.msg, Pong))
    assert pong.token == 0xC0FFEE
    samples = np.concatenate([f.msg.samples for f in frames if isinstance(f.msg, Piezo)])
    # the scenario loops: compare with it modulo its length
    n = min(len(samples), len(block.piezo))
    np.testing.assert_array_equal(samples[:n], block.piezo[:n])
