"""The simulated device over dsp.sim: sample-exact against an identically seeded simulator."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

from dsp.sim import SensorBlock, draw_tower
from dsp.sim.scenarios import run_scenario
from hostapp.errors import SourceError
from hostapp.protocol import Frame, FrameDecoder, Hello, Load, Piezo, Ping, Pong
from hostapp.sources.base import SourceStats
from hostapp.sources.pty_server import PtyDeviceServer
from hostapp.sources.serial_port import SerialSource
from hostapp.sources.sim_device import (
    Damage,
    SimulatedDeviceSource,
    clock_offset_for_seed,
    device_id_for_seed,
    tower_device,
)

SEED = 12
SCENARIO = "single"
SCENARIO_S = 20.0
STREAM_S = 10.0
PACE = 12.0


@pytest.fixture(scope="module")
def expected() -> tuple[SensorBlock, float]:
    tower = draw_tower(SEED)
    block, _ = run_scenario(SCENARIO, tower=tower, seed=SEED, duration_s=SCENARIO_S)
    return block, tower.piezo_rate_hz / 2000.0


def read_stream(source: SerialSource, seconds: float) -> list[Frame]:
    frames: list[Frame] = []
    first_t = None
    deadline = time.monotonic() + 10.0
    while time.monotonic() < deadline:
        for frame in source.get_frames(0.05):
            frames.append(frame)
            if isinstance(frame.msg, Piezo):
                first_t = frame.msg.t_us if first_t is None else first_t
                if (frame.msg.t_us - first_t) % 2**32 >= seconds * 1e6:
                    return frames
    raise AssertionError(f"only {len(frames)} frames arrived")


def run_on_pty(tmp_path: Path, damage: Damage | None) -> tuple[list[Frame], SourceStats, int]:
    offset = 2**32 - 4_000_000  # wraps 4 s in
    device = tower_device(seed=SEED, scenario=SCENARIO, duration_s=SCENARIO_S,
                          clock_offset_us=offset, damage=damage)
    with PtyDeviceServer(device, pace=PACE, link_path=tmp_path / "tty") as server:
        with SerialSource(server.path, retry_interval_s=0.05) as source:
            assert source.wait_connected(3.0)
            frames = read_stream(source, STREAM_S)
            stats = source.stats()
    # Frames sent before the port was opened may have been dropped (nobody read
    # them); from the first frame read on, nothing may be missing.
    return frames, stats, offset


def test_pty_stream_equals_the_simulator(
    tmp_path: Path, expected: tuple[SensorBlock, float]
) -> None:
    block, scale = expected
    frames, stats, offset = run_on_pty(tmp_path, None)
    assert stats.decoder.lost_messages == 0
    assert stats.decoder.crc_errors == 0
    assert stats.decoder.damaged_frames == 0
    got_piezo = [f.msg for f in frames if isinstance(f.msg, Piezo)]
    set_index = np.array([(m.t_us - offset) % 2**32 for m in got_piezo]) // 500
    assert np.all(np.diff(set_index) == 10)
    samples = np.concatenate([m.samples for m in got_piezo])
    assert len(samples) >= STREAM_S * 2000
    k0 = int(set_index[0])
    np.testing.assert_array_equal(samples, block.piezo[k0 : k0 + len(samples)])
    got_load = [f.msg for f in frames if isinstance(f.msg, Load)]
    expected_t_us = (offset + np.round(block.load_t_s * scale * 1e6).astype(np.int64)) % 2**32
    index = {int(t): j for j, t in enumerate(expected_t_us)}
    rows = [index[m.t_us] for m in got_load]
    assert rows == list(range(rows[0], rows[0] + len(rows)))
    np.testing.assert_array_equal(np.stack([m.values for m in got_load]), block.load[rows])
    masks = (block.load_valid[rows].astype(int) << np.arange(8)).sum(axis=1)
    assert [m.valid for m in got_load] == masks.tolist()


def test_pty_damage_counted_exactly(tmp_path: Path) -> None:
    damage = Damage(bit_flip_prob=0.01, drop_prob=0.005, seed=2)
    frames, stats, _ = run_on_pty(tmp_path, damage)
    first, last = frames[0].seq, frames[-1].seq
    hit = [s for s in damage.damaged_seqs if first < s < last]
    assert len(hit) > 10
    assert stats.decoder.lost_messages == len(hit)
    assert stats.decoder.damaged_frames == len(hit)
    assert {f.seq for f in frames}.isdisjoint(hit)


def test_hello_describes_the_tower() -> None:
    device = tower_device(seed=SEED, scenario="quiet", duration_s=5.0)
    frames = FrameDecoder().feed(device.generate(0.5))
    hello = frames[0].msg
    assert isinstance(hello, Hello)
    tower = draw_tower(SEED)
    assert hello.device_id == device_id_for_seed(SEED) != device_id_for_seed(SEED + 1)
    assert hello.piezo_rate_hz == 2000 and hello.adc_bits == tower.adc_bits
    assert hello.load_rate_hz == round(tower.load_rate_hz * 2000 / tower.piezo_rate_hz)
    first_piezo = next(f.msg for f in frames if isinstance(f.msg, Piezo))
    assert first_piezo.t_us == clock_offset_for_seed(SEED)


def test_unknown_scenario_lists_the_known_ones() -> None:
    with pytest.raises(SourceError, match="known: .*game"):
        tower_device(seed=1, scenario="bogus")


def test_in_process_source_streams_and_answers() -> None:
    with SimulatedDeviceSource(seed=3, scenario="quiet", pace=5.0) as source:
        assert source.wait_connected(5.0)
        frames: list[Frame] = []
        deadline = time.monotonic() + 5
        while not any(isinstance(f.msg, Load) for f in frames) and time.monotonic() < deadline:
            frames += source.get_frames(0.05)
        assert any(isinstance(f.msg, Hello) for f in frames)
        assert source.stats().decoder.damaged_frames == 0
        seq = source.send(Ping(0xC0FFEE))
        assert seq is not None
        pongs: list[Pong] = []
        deadline = time.monotonic() + 5
        while not pongs and time.monotonic() < deadline:
            pongs = [f.msg for f in source.get_frames(0.05) if isinstance(f.msg, Pong)]
        assert pongs and pongs[0].token == 0xC0FFEE
