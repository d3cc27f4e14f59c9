"""The real firmware in simavr: a simulated session decoded with the Python codec."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from hostapp.protocol import Frame, FrameDecoder, Hello, Load, Piezo, Status
from hostapp.sources.simavr import SimavrRun

pytestmark = pytest.mark.firmware

LOAD_PERIOD_S = 1 / 80


def _decode(run: SimavrRun) -> tuple[FrameDecoder, list[Frame]]:
    decoder = FrameDecoder()
    return decoder, decoder.feed(run.stream)


def _sim_time_s(run: SimavrRun, frames: list[Frame], t_us: int) -> float:
    """Device clock -> simulation time, anchored at the first piezo set."""
    first = next(f.msg for f in frames if isinstance(f.msg, Piezo))
    return (t_us - first.t_us + run.stats["adc_first_start_us"]) / 1e6


def test_stream_is_clean(session_run: tuple[Any, SimavrRun]) -> None:
    _, run = session_run
    decoder, frames = _decode(run)
    stats = decoder.stats
    assert stats.damaged_frames == 0
    assert stats.lost_messages == 0
    assert stats.unknown_types == 0 and stats.partial_start == 0 and stats.resets == 0
    assert frames[0].seq == 0 and isinstance(frames[0].msg, Hello)
    hello = frames[0].msg
    assert (hello.n_piezo, hello.n_load, hello.adc_bits) == (8, 8, 10)
    assert (hello.piezo_rate_hz, hello.load_rate_hz) == (2000, 80)
    statuses = [f.msg for f in frames if isinstance(f.msg, Status)]
    assert len(statuses) >= 10
    assert all(s.piezo_overruns == 0 and s.tx_dropped == 0 for s in statuses)
    # the firmware's own CPU measure, and the harness's view of the ISRs
    assert max(s.cpu_load_pct for s in statuses[1:]) <= 60
    assert run.stats["sck_power_down_violations"] == 0
    assert run.stats["adc_late_starts"] == 0


def test_every_piezo_sample_is_the_injected_code(session_run: tuple[Any, SimavrRun]) -> None:
    block, run = session_run
    _, frames = _decode(run)
    piezo = [f.msg for f in frames if isinstance(f.msg, Piezo)]
    samples = np.concatenate([p.samples for p in piezo])
    n = samples.shape[0]
    assert n >= 2000 * 10
    np.testing.assert_array_equal(samples, block.piezo[:n])
    # contiguous sets, exactly 500 us apart, no gaps between frames
    starts = np.array([p.t_us for p in piezo], dtype=np.int64)
    sizes = np.array([p.samples.shape[0] for p in piezo])
    assert np.all(np.diff(starts) % (1 << 32) == 500 * sizes[:-1])


def test_every_load_value_is_the_injected_count(session_run: tuple[Any, SimavrRun]) -> None:
    block, run = session_run
    _, frames = _decode(run)
    loads = [f.msg for f in frames if isinstance(f.msg, Load)]
    assert len(loads) >= 80 * 10
    reads = run.hx711_reads
    # what the emulated HX711s shifted out is the scenario's row, bit for bit
    np.testing.assert_array_equal(reads[:, 3], block.load[reads[:, 2], reads[:, 1]])
    for ch in range(8):
        sent = [int(m.values[ch]) for m in loads if m.valid >> ch & 1]
        served = reads[reads[:, 1] == ch, 3].tolist()
        assert sent == served, f"channel {ch}"
        invalid = [int(m.values[ch]) for m in loads if not m.valid >> ch & 1]
        assert not any(invalid)
    # every scenario row of a connected channel reached the host exactly once
    rows = reads[:, 2]
    for ch in range(8):
        got = np.sort(rows[reads[:, 1] == ch])
        connected = np.flatnonzero(block.load_valid[:, ch])
        last = got.max()
        np.testing.assert_array_equal(got, connected[connected <= last])


def test_lift_and_return_show_in_valid_bits_within_two_periods(
    session_run: tuple[Any, SimavrRun],
) -> None:
    block, run = session_run
    _, frames = _decode(run)
    loads = [f.msg for f in frames if isinstance(f.msg, Load)]
    t_load = np.array([_sim_time_s(run, frames, m.t_us) for m in loads])
    bits = np.array([[m.valid >> ch & 1 for ch in range(8)] for m in loads], dtype=bool)
    t_rows = np.asarray(block.load_t_s) - block.piezo_t0_s
    valid = np.asarray(block.load_valid)
    changes = 0
    for ch in range(8):
        for j in np.flatnonzero(valid[1:, ch] != valid[:-1, ch]) + 1:
            if t_rows[j] > t_load[-1] - 2 * LOAD_PERIOD_S:
                continue
            now_valid = bool(valid[j, ch])
            # Contact bounce on closing flips a channel for single readings;
            # the promise is about lasting changes: three readings or more.
            if not np.all(valid[j : j + 3, ch] == now_valid):
                continue
            after = np.flatnonzero((t_load >= t_rows[j]) & (bits[:, ch] == now_valid))
            assert after.size, f"channel {ch} never followed the change at {t_rows[j]:.3f} s"
            assert t_load[after[0]] - t_rows[j] <= 2 * LOAD_PERIOD_S
            changes += 1
    assert changes >= 6  # lifting 4..7 disconnects three channels, closing reconnects them
    # never valid while the scenario says the module is off the tower
    for i in range(len(loads)):
        row = np.searchsorted(t_rows, t_load[i], side="right") - 1
        lifted_throughout = ~valid[max(row - 1, 0)] & ~valid[row]
        assert not np.any(bits[i] & lifted_throughout)
