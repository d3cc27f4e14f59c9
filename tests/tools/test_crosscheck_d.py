"""Cross-check D generator (real piezo material): bytes our decoder reads cleanly, sane truth.

tools/crosscheck_d/ is a folder of scripts, not a package: load it by path.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from hostapp.protocol import Ack, Hello, Load, Piezo, Status
from hostapp.recording import read_recording
from tests.scripts import (
    TOOLS,
    check_same_seed_same_bytes,
    check_scored_perfect,
    check_seqs_consecutive,
    check_truth,
    check_wire_encoder,
    decode_in_odd_chunks,
    load_script,
)

SCRIPT = TOOLS / "crosscheck_d" / "make_recordings_d.py"
gen = load_script(SCRIPT, "crosscheck_d_make_recordings_d")
score = load_script(TOOLS / "crosscheck" / "score.py", "crosscheck_score_for_d")
U32 = 1 << 32

pytestmark = pytest.mark.skipif(not gen.DATA_DIR.is_dir(),
                                reason=f"real piezo data not present in {gen.DATA_DIR}")


def test_crc_and_cobs_follow_the_contract_and_our_decoder_reads_them() -> None:
    check_wire_encoder(gen)
    assert gen.cobs_decode(gen.cobs_encode(bytes(range(256)))) == bytes(range(256))
    assert gen.s24_bytes(np.array([-1, 1, -(1 << 23), (1 << 23) - 1])) == \
        b"\xff\xff\xff\x01\x00\x00\x00\x00\x80\xff\xff\x7f"


def test_real_material_is_cut_from_the_recordings() -> None:
    bank = gen.load_bank(gen.DATA_DIR)
    assert len(bank.hits) >= 40 and len(bank.leaks) >= 10
    assert all(abs(np.max(np.abs(h)) - 1.0) < 1e-9 for h in bank.hits)
    assert 0.001 < bank.leak_ratio < 0.05  # pads on one rack leak about half a percent
    assert abs(bank.noise.std() - 1.0) < 1e-6
    b2 = gen.bank_at(2000, gen.DATA_DIR)
    assert b2.pre == 4 and all(len(h) <= 1216 // 4 + 1 for h in b2.hits)


@pytest.mark.parametrize(("seed", "scenario"), [
    (1, "single"),  # boot, begins mid-frame
    (2, "rapid"),  # u32 wrap inside, GET_INFO start
    (3, "noisy"),  # boot
    (4, "game"),  # begins mid-frame, GET_INFO start
])
def test_recordings_decode_with_zero_errors(tmp_path: Path, seed: int, scenario: str) -> None:
    duration = 40.0 if scenario == "game" else 16.0
    rec, truth_path = gen.make_recording(seed, scenario, duration, tmp_path)
    assert rec.name == f"{scenario}_t{seed}.bin"
    assert truth_path.name == f"{scenario}_t{seed}.truth.json"
    truth = json.loads(truth_path.read_text())
    data = rec.read_bytes()
    cut = truth["start"]["cut_bytes"] > 0
    assert cut == (seed % 3 == 1)
    frames, st = decode_in_odd_chunks(data)
    assert st.crc_errors + st.framing_errors + st.bad_length <= (1 if cut else 0)
    assert st.partial_start == (1 if cut else 0)
    assert st.oversize == st.lost_messages == st.unknown_types == st.resets == 0
    check_seqs_consecutive(frames)

    hello = frames[0].msg
    assert isinstance(hello, Hello)
    tower = truth["tower"]
    assert (hello.proto, hello.n_piezo, hello.n_load, hello.adc_bits) == (1, 8, 8, 10)
    assert hello.piezo_rate_hz == tower["piezo_rate_hz"] in (1000, 2000, 3000, 4000)
    assert hello.load_rate_hz == tower["load_rate_hz"] in (10, 80)
    kinds = [type(f.msg) for f in frames]
    assert kinds.count(Hello) == 1
    assert kinds.count(Ack) == (0 if truth["start"]["boot"] else 1)
    assert kinds.count(Piezo) == truth["counts"]["piezo_frames"]
    assert kinds.count(Load) == truth["counts"]["load"]
    assert kinds.count(Status) == truth["counts"]["status"]
    piezo = [f.msg for f in frames if isinstance(f.msg, Piezo)]
    assert all(1 <= p.samples.shape[0] <= 14 and p.samples.shape[1] == 8 for p in piezo)
    first = next(f.msg for f in frames if isinstance(f.msg, Piezo | Load))
    assert isinstance(first, Piezo) and first.t_us == truth["start"]["t_us_start"]
    t_us = np.array([p.t_us for p in piezo], dtype=np.int64)
    wraps = int(np.sum(np.diff(t_us) < 0))
    assert wraps == (1 if truth["start"]["u32_wrap"] else 0) == (1 if seed % 4 == 2 else 0)

    r = read_recording(rec)
    assert r.stats.crc_errors <= (1 if cut else 0) and r.stats.lost_messages == 0
    assert abs(r.duration_s - duration) < 0.01
    assert np.all(np.diff(r.piezo_t_s) > 0) and np.all(np.diff(r.load_t_s) > 0)
    rate = len(r.load_t_s) / r.duration_s
    assert abs(rate - hello.load_rate_hz) < 0.03 * hello.load_rate_hz
    # The first 4 s: an empty, quiet tower, every load channel fresh, piezos at mid-scale.
    quiet = r.load_t_s < 4.0
    assert r.load_valid[quiet].all()
    idle = r.piezo[r.piezo_t_s < 4.0].astype(float)
    assert np.all(np.abs(np.median(idle, axis=0) - 512) <= 8)
    assert np.all(idle.std(axis=0) < 4) and np.all(np.abs(idle - 512).max(axis=0) < 40)
    assert np.all(r.load[quiet].std(axis=0) > 0)  # real noise, not constants

    check_truth(truth, score, scenario=scenario, seed=seed, duration_s=duration)
    check_scored_perfect(truth, score)


def test_a_landing_is_loudest_on_its_level_and_steps_its_load_cell(tmp_path: Path) -> None:
    rec, truth_path = gen.make_recording(5, "single", 30.0, tmp_path)
    truth = json.loads(truth_path.read_text())
    r = read_recording(rec)
    cpg = np.array(truth["tower"]["counts_per_g"])
    checked = 0
    for x in truth["landings"]:
        f = x["floor"]
        before = r.load[(r.load_t_s > x["t_first_impact"] - 1.0)
                        & (r.load_t_s < x["t_first_impact"] - 0.2), f].mean()
        after = r.load[(r.load_t_s > x["t"] + 0.3) & (r.load_t_s < x["t"] + 0.8), f].mean()
        step = (after - before) / cpg[f]
        if not any(k["t_hit"] < x["t"] + 0.8 and k["from_floor"] == f
                   for k in truth["knockdowns"]):
            assert step == pytest.approx(x["mass_g"], abs=0.12)
            checked += 1
        near = (r.piezo_t_s > x["t_first_impact"] - 0.01) & (r.piezo_t_s < x["t"] + 0.02)
        if not x["knocked"] and x["t"] - x["t_first_impact"] < 0.3:  # fell no further
            peak = np.abs(r.piezo[near].astype(float) - 512).max(axis=0)
            assert peak[f] >= 0.5 * peak.max()
    assert checked >= 3


def test_a_lift_clears_the_valid_bits_above_the_exposed_level(tmp_path: Path) -> None:
    rec, truth_path = gen.make_recording(6, "game", 110.0, tmp_path)
    truth = json.loads(truth_path.read_text())
    assert truth["lifts"] and len(truth["lifts"]) == len(truth["closes"])
    r = read_recording(rec)
    for lift, close in zip(truth["lifts"], truth["closes"], strict=True):
        k = lift["exposed"]
        during = (r.load_t_s > lift["t"] + 0.05) & (r.load_t_s < close["t"] - 0.05)
        assert during.any()
        assert not r.load_valid[during][:, k + 1:].any()
        assert r.load_valid[during][:, :k + 1].all()
        after = (r.load_t_s > close["t"] + 0.5) & (r.load_t_s < close["t"] + 1.0)
        assert r.load_valid[after].all()
        for rm in truth["removals"]:
            if lift["t"] < rm["t"] < close["t"]:
                assert rm["floor"] == k and rm["cubes"] >= 1


def test_the_same_seed_gives_the_same_bytes(tmp_path: Path) -> None:
    check_same_seed_same_bytes(gen, tmp_path)


def test_a_missing_data_directory_is_a_clear_error(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-dir"
    with pytest.raises(gen.DataDirError, match="not found"):
        gen.make_recording(1, "single", 10.0, tmp_path, data_dir=missing)
    proc = subprocess.run([sys.executable, str(SCRIPT), "--out", str(tmp_path / "o"),
                           "--towers", "1", "--duration", "10", "--data-dir", str(missing)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 2
    assert "not found" in proc.stderr and str(missing) in proc.stderr
    assert not (tmp_path / "o").exists()
