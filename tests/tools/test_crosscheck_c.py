"""Cross-check C generator: contract-conformant bytes our decoder reads cleanly, sane truth.

tools/crosscheck_c/ is a folder of scripts, not a package: load it by path.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from hostapp.protocol import Hello, Load, Piezo, Status
from hostapp.recording import read_recording
from tests.scripts import (
    TOOLS,
    check_seqs_consecutive,
    check_truth,
    check_wire_encoder,
    decode_in_odd_chunks,
    load_script,
)

gen = load_script(TOOLS / "crosscheck_c" / "make_recordings_c.py", "crosscheck_c_make_recordings_c")
score = load_script(TOOLS / "crosscheck" / "score.py", "crosscheck_score_for_c")
U32 = 1 << 32


def test_crc_and_cobs_follow_the_contract_and_our_decoder_reads_them() -> None:
    check_wire_encoder(gen)


@pytest.mark.parametrize(("seed", "scenario", "t_us_start"), [
    (1, "single", U32 - 5_000_000),  # the u32 clock wraps 5 s in
    (2, "rapid", None),
    (3, "noisy", None),
    (4, "game", None),  # every 4th seed starts 10-50 s before the wrap by itself
])
def test_recordings_decode_with_zero_errors(tmp_path: Path, seed: int, scenario: str,
                                            t_us_start: int | None) -> None:
    duration = 14.0
    rec, truth_path = gen.make_recording(seed, scenario, duration, tmp_path,
                                         t_us_start=t_us_start)
    assert rec.name == f"{scenario}_t{seed}.bin"
    assert truth_path.name == f"{scenario}_t{seed}.truth.json"
    truth = json.loads(truth_path.read_text())
    data = rec.read_bytes()
    frames, st = decode_in_odd_chunks(data)
    assert st.crc_errors == st.framing_errors == st.bad_length == st.oversize == 0
    assert st.lost_messages == st.unknown_types == st.partial_start == st.resets == 0
    check_seqs_consecutive(frames)

    hello = frames[0].msg
    assert isinstance(hello, Hello)
    tower = truth["tower"]
    assert (hello.proto, hello.n_piezo, hello.n_load, hello.adc_bits) == (1, 8, 8, 10)
    assert hello.piezo_rate_hz == tower["piezo_rate_hz"] in (1000, 2000, 4000)
    assert hello.load_rate_hz == tower["load_rate_hz"] in (10, 40, 80)
    kinds = [type(f.msg) for f in frames]
    assert kinds.count(Hello) == 1
    assert kinds.count(Piezo) == truth["counts"]["piezo_frames"]
    assert kinds.count(Load) == truth["counts"]["load"]
    assert kinds.count(Status) == truth["counts"]["status"]
    piezo = [f.msg for f in frames if isinstance(f.msg, Piezo)]
    assert all(1 <= p.samples.shape[0] <= 14 and p.samples.shape[1] == 8 for p in piezo)
    first = next(f.msg for f in frames if isinstance(f.msg, Piezo | Load))
    assert isinstance(first, Piezo) and first.t_us == truth["t_us_start"]

    t_us = np.array([p.t_us for p in piezo], dtype=np.int64)
    wraps = int(np.sum(np.diff(t_us) < 0))
    start = truth["t_us_start"]
    assert wraps == (1 if start + duration * 1e6 > U32 else 0)
    if t_us_start is not None:
        assert wraps == 1 and start == t_us_start
    elif seed % 4 == 0:
        assert U32 - 50_000_000 <= start <= U32 - 10_000_000

    r = read_recording(rec)
    assert r.stats.crc_errors == r.stats.lost_messages == 0
    assert abs(r.duration_s - duration) < 0.01
    assert np.all(np.diff(r.piezo_t_s) > 0) and np.all(np.diff(r.load_t_s) > 0)
    rate = len(r.load_t_s) / r.duration_s
    assert abs(rate - hello.load_rate_hz) < 0.03 * hello.load_rate_hz
    # The first 4 s: an empty, quiet tower, every load channel fresh, piezos at mid-scale.
    quiet = r.load_t_s < 4.0
    assert r.load_valid[quiet].mean() > 0.99
    idle = r.piezo[r.piezo_t_s < 4.0]
    assert np.all(np.abs(np.median(idle, axis=0) - 512) <= 40)

    check_truth(truth, score, scenario=scenario, seed=seed, duration_s=duration)


def test_an_inspection_clears_the_lifted_valid_bits_and_removes_the_cubes() -> None:
    tower = gen.Tower.from_seed(6)
    world = gen.World(tower, np.random.default_rng(1))
    for t in (1.0, 3.0, 5.0, 7.0, 9.0, 11.0):
        world.throw(t)
    k = 2
    t_end, taken = world.inspect(14.0, k)
    lift, close = world.lifts[0]["t"], world.closes[0]["t"]
    assert world.lifts[0]["exposed"] == k and lift < close == pytest.approx(t_end, abs=1e-3)
    assert sum(x["cubes"] for x in world.removals) == len(taken)
    assert all(x["floor"] == k and lift < x["t"] < close for x in world.removals)
    assert not world.resting(k, t_end + 1)
    duration = t_end + 3.0
    rng = np.random.default_rng(2)
    t_read = gen.reading_times(tower, duration, 0.01, rng)
    counts, valid = gen.render_load(tower, world.ev, t_read, duration, rng)
    during = (t_read > lift + 0.05) & (t_read < close - 0.05)
    assert not valid[during][:, k + 1:].any()
    assert valid[during][:, :k + 1].mean() > 0.98
    assert (counts[~valid] == 0).all()
    assert valid[t_read > close + 0.5].mean() > 0.98
