"""Protocol benchmark: decoder throughput in MB/s of wire bytes."""

from __future__ import annotations

import time

import numpy as np

from hostapp.bench import BenchResult
from hostapp.protocol import FrameDecoder, Load, Message, Piezo, Status, encode_frame

TARGET_MB_S = 10.0  # issue 2: replays must run hundreds of times faster than live


def live_like_stream(seconds: float, seed: int = 0) -> bytes:
    """Wire bytes shaped like a live tower: PIEZO every 5 ms, LOAD at 80 Hz, STATUS at 1 Hz.

    Piezo samples are noise around the mid-scale bias, so their low bytes hit
    0x00 as often as on a real idle channel (the expensive case for COBS).
    """
    rng = np.random.default_rng(seed)
    n_frames = int(seconds * 200)
    samples = (512 + rng.normal(0, 3, (n_frames, 10, 8))).clip(0, 1023).astype(np.uint16)
    loads = rng.integers(-300_000, 300_000, (int(seconds * 80) + 1, 8)).astype(np.int32)
    msgs: list[Message] = []
    for i in range(n_frames):
        msgs.append(Piezo(i * 5000, samples[i]))
        if i % 5 == 2:  # 80 Hz against 200 frames/s, close enough for byte mix
            msgs.append(Load(i * 5000, 0xFF, loads[(i * 2) // 5]))
        if i % 200 == 199:
            msgs.append(Status(i * 5))
    return b"".join(encode_frame(m, seq) for seq, m in enumerate(msgs))


def decoder_mb_per_s(wire: bytes, *, chunk: int = 65536, repeats: int = 3) -> float:
    """Best-of-``repeats`` decoding speed of ``wire`` fed in ``chunk``-byte pieces."""
    best = float("inf")
    for _ in range(repeats):
        decoder = FrameDecoder()
        started = time.process_time()  # CPU time: fair on a shared machine
        for start in range(0, len(wire), chunk):
            decoder.feed(wire[start : start + chunk])
        best = min(best, time.process_time() - started)
        if decoder.stats.damaged_frames:
            raise RuntimeError("benchmark stream did not decode cleanly")
    return len(wire) / best / 1e6


def simulated_device_speed(seconds: float, *, scenario: str = "game", seed: int = 1) -> float:
    """Stream seconds per CPU second of ``towerear simulate``: tower physics plus encoding."""
    from hostapp.sources.sim_device import tower_device

    device = tower_device(seed=seed, scenario=scenario, duration_s=seconds)
    started = time.process_time()
    device.generate(seconds)
    return seconds / (time.process_time() - started)


def run(quick: bool) -> list[BenchResult]:
    """Measure the decoder on a live-like stream (20 s quick, 120 s full)."""
    wire = live_like_stream(20.0 if quick else 120.0)
    speed = decoder_mb_per_s(wire)
    live_rate = len(wire) / (20.0 if quick else 120.0)
    simulate = simulated_device_speed(20.0 if quick else 120.0)
    return [
        BenchResult("simulated device (physics + encoding), game", simulate, "x real time"),
        BenchResult("protocol decoder throughput", speed, "MB/s", f">= {TARGET_MB_S:g}",
                    speed >= TARGET_MB_S),
        BenchResult("protocol decoder vs live stream", speed * 1e6 / live_rate, "x real time"),
        BenchResult("live stream wire rate", live_rate / 1000, "kB/s"),
    ]
