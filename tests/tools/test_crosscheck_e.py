"""Cross-check E generator (sinc-filtered HX711, two cube kinds, noisy ADC): bytes our decoder
reads cleanly, sane truth, and the features that set model E apart are really in the bytes.

tools/crosscheck_e/ is a folder of scripts, not a package: load it by path.
"""

from __future__ import annotations

import dataclasses
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

SCRIPT = TOOLS / "crosscheck_e" / "make_recordings_e.py"
gen = load_script(SCRIPT, "crosscheck_e_make_recordings_e")
score = load_script(TOOLS / "crosscheck" / "score.py", "crosscheck_score_for_e")


def _truth(path: Path) -> dict:
    return json.loads(path.read_text())


def test_crc_and_cobs_follow_the_contract_and_our_decoder_reads_them() -> None:
    check_wire_encoder(gen)
    for data in (b"", b"\x00", bytes(range(256)), b"\x05" * 254, b"\x05" * 254 + b"\x00"):
        assert gen.cobs_decode(gen.cobs_encode(data)) == data
    assert gen.s24_bytes(np.array([-1, 1, -(1 << 23), (1 << 23) - 1])) == \
        b"\xff\xff\xff\x01\x00\x00\x00\x00\x80\xff\xff\x7f"
    with pytest.raises(ValueError, match="254"):
        gen.frame(0x02, 0, bytes(250))


@pytest.mark.parametrize(("seed", "scenario"), [
    (1, "single"),  # boot, begins mid-frame, ends mid-frame, a reversed cell
    (2, "rapid"),  # GET_INFO start, u32 wrap inside, a lagging HX711
    (3, "noisy"),  # 1000 sets/s, GET_INFO start, begins mid-frame
    (5, "game"),  # 10 readings/s
    (6, "single"),  # 4000 sets/s
    (7, "noisy"),  # u32 wrap, mid-frame at both ends
])
def test_recordings_decode_with_zero_errors(tmp_path: Path, seed: int, scenario: str) -> None:
    duration = 40.0 if scenario == "game" else 16.0
    rec, truth_path = gen.make_recording(seed, scenario, duration, tmp_path)
    assert rec.name == f"{scenario}_t{seed}.bin"
    assert truth_path.name == f"{scenario}_t{seed}.truth.json"
    truth = _truth(truth_path)
    start, tower, counts = truth["start"], truth["tower"], truth["counts"]
    assert start["mid_frame"] == (seed % 2 == 1) == (start["cut_bytes"] > 0)
    assert start["u32_wrap"] == (seed % 8 in (2, 7))
    assert (start["end_cut_bytes"] > 0) == (seed % 3 == 1)
    data = rec.read_bytes()
    assert truth["wire_bytes_per_s"] < 100_000  # fits 1 Mbaud 8N1
    frames, st = decode_in_odd_chunks(data)
    assert st.crc_errors + st.framing_errors + st.bad_length == 0
    assert st.partial_start == (1 if start["mid_frame"] else 0)
    assert st.oversize == st.lost_messages == st.unknown_types == st.resets == 0
    check_seqs_consecutive(frames)
    assert (frames[0].seq == 0) == start["boot"]

    hello = frames[0].msg
    assert isinstance(hello, Hello)
    assert (hello.proto, hello.n_piezo, hello.n_load, hello.adc_bits) == (1, 8, 8, 10)
    assert hello.piezo_rate_hz == tower["piezo_rate_hz"] == {3: 1000, 6: 4000}.get(seed, 2000)
    assert hello.load_rate_hz == tower["load_rate_hz"] == (10 if seed == 5 else 80)
    kinds = [type(f.msg) for f in frames]
    assert kinds.count(Hello) == 1
    acks = [f.msg for f in frames if isinstance(f.msg, Ack)]
    assert [a.cmd_type for a in acks] == ([] if start["boot"] else [0x81, 0x82])
    assert kinds[1:1 + len(acks)] == [Ack] * len(acks)
    assert kinds.count(Piezo) == counts["piezo_frames"]
    assert kinds.count(Load) == counts["load"]
    assert kinds.count(Status) == counts["status"]
    piezo = [f.msg for f in frames if isinstance(f.msg, Piezo)]
    lo, hi = tower["sets_per_frame"]
    n_sets = np.array([p.samples.shape[0] for p in piezo[:-1]])  # the last: what is left
    assert n_sets.min() >= lo and n_sets.max() <= hi and len(set(n_sets)) > 3
    first = next(f.msg for f in frames if isinstance(f.msg, Piezo | Load))
    assert isinstance(first, Piezo) and first.t_us == start["t_us_start"]
    t_us = np.array([p.t_us for p in piezo], dtype=np.int64)
    assert int(np.sum(np.diff(t_us) < 0)) == (1 if start["u32_wrap"] else 0)
    assert np.all(t_us % 4 == 0)  # micros() of a 16 MHz AVR

    r = read_recording(rec)
    assert r.stats.crc_errors == 0 and r.stats.lost_messages == 0
    assert abs(r.duration_s - duration) < 0.03
    assert np.all(np.diff(r.piezo_t_s) > 0) and np.all(np.diff(r.load_t_s) > 0)
    rate = len(r.load_t_s) / r.duration_s
    assert abs(rate - hello.load_rate_hz) < 0.006 * hello.load_rate_hz  # its own oscillator
    # The first 4 s: an empty, quiet tower, piezos at mid-scale.
    quiet = r.load_t_s < 4.0
    steady = [k for k in range(8) if k != tower["lag_channel"]]
    assert r.load_valid[quiet][:, steady].all()
    idle = r.piezo[r.piezo_t_s < 4.0].astype(float)
    assert np.all(np.abs(np.median(idle, axis=0) - 512) <= 8)
    assert np.all(r.load[quiet].std(axis=0) > 0)

    check_truth(truth, score, scenario=scenario, seed=seed, duration_s=duration)
    check_scored_perfect(truth, score)


def _quiet_scene(duration: float) -> object:
    return gen.Scene(duration=duration)


@pytest.mark.parametrize("seed", [5, 8])  # 10 and 80 readings/s
def test_the_hx711_filter_spreads_a_step_over_four_conversions(seed: int) -> None:
    tw = gen.draw_tower(seed)
    sc = _quiet_scene(6.0)
    t_step = 2.0 + 0.37 / tw.load_rate_true  # inside a conversion period
    sc.masses.append((t_step, 3, 0.6))
    out = gen.render_load(tw, sc, np.random.default_rng(1), 0.0, 6.0)
    y = out.raw[:, 3].astype(float)
    before = y[out.tau < t_step - 0.05].mean()
    after = y[(out.tau > t_step + 1.0) & (out.tau < t_step + 1.5)].mean()
    assert (after - before) / tw.cpg[3] == pytest.approx(0.6, rel=0.03)
    frac = (y - before) / (after - before)
    between = (frac > 0.03) & (frac < 0.97) & (out.tau > t_step - 0.01)
    assert 3 <= between.sum() <= 4  # a 4-tap filter of conversion-period boxcars
    assert np.all(np.diff(frac[between]) > 0)


def test_a_reversed_cell_reads_less_when_a_cube_lands() -> None:
    tw = gen.draw_tower(1)
    assert tw.reversed_level is not None and tw.cpg[tw.reversed_level] < 0
    assert (tw.cpg < 0).sum() == 1
    sc = _quiet_scene(5.0)
    sc.masses.append((2.0, tw.reversed_level, 0.5))
    out = gen.render_load(tw, sc, np.random.default_rng(2), 0.0, 5.0)
    y = out.raw[:, tw.reversed_level]
    assert y[out.tau > 3.0].mean() < y[out.tau < 1.9].mean() - 0.4 * abs(tw.cpg[
        tw.reversed_level])


def test_two_cube_kinds_make_two_step_sizes(tmp_path: Path) -> None:
    rec, truth_path = gen.make_recording(8, "single", 45.0, tmp_path)
    truth = _truth(truth_path)
    r = read_recording(rec)
    cpg = np.array(truth["tower"]["counts_per_g"])
    masses = truth["tower"]["cube_mass_g"]
    assert masses["heavy"] >= 1.2 * masses["light"]
    seen = set()
    for x in truth["landings"]:
        f = x["floor"]
        if x["knocked"] or x["caused_knockdown"] or x["together"]:
            continue
        before = r.load[(r.load_t_s > x["t_first_impact"] - 1.0)
                        & (r.load_t_s < x["t_first_impact"] - 0.2), f].mean()
        after = r.load[(r.load_t_s > x["t"] + 1.0) & (r.load_t_s < x["t"] + 1.5), f].mean()
        step = (after - before) / cpg[f]
        assert step == pytest.approx(x["mass_g"], abs=0.06)
        assert step == pytest.approx(masses[x["kind"]], abs=0.06)
        seen.add(x["kind"])
    assert seen == {"light", "heavy"}


@pytest.mark.parametrize("seed", [4, 9])  # the restarted HX711s: unsettled / settled
def test_a_lift_clears_the_valid_bits_above_the_exposed_level(tmp_path: Path,
                                                              seed: int) -> None:
    rec, truth_path = gen.make_recording(seed, "game", 70.0, tmp_path)
    truth = _truth(truth_path)
    assert truth["lifts"] and len(truth["lifts"]) == len(truth["closes"])
    unsettled = truth["tower"]["restart_unsettled"]
    assert unsettled == (seed == 4)
    r = read_recording(rec)
    for lift, close in zip(truth["lifts"], truth["closes"], strict=True):
        k = lift["exposed"]
        assert close["exposed"] == k
        during = (r.load_t_s > lift["t"] + 0.05) & (r.load_t_s < close["t"])
        assert during.any()
        assert not r.load_valid[during][:, k + 1:].any()
        assert r.load_valid[during][:, :k + 1].all()
        after = (r.load_t_s > close["t"] + 0.5) & (r.load_t_s < close["t"] + 1.0)
        assert r.load_valid[after].all()
        for ch in range(k + 1, 8):
            back = np.flatnonzero((r.load_t_s > close["t"]) & r.load_valid[:, ch])
            first, settled = float(r.load[back[0], ch]), float(r.load[back[40], ch])
            if unsettled:  # its filter restarts empty: half, then seven eighths of the value
                assert first == pytest.approx(0.5 * settled, abs=0.02 * abs(settled) + 3000)
                assert float(r.load[back[1], ch]) == pytest.approx(
                    0.875 * settled, abs=0.02 * abs(settled) + 3000)
            else:
                assert first == pytest.approx(settled, abs=3000)
        for rm in truth["removals"]:
            if lift["t"] < rm["t"] < close["t"]:
                assert rm["floor"] == k and rm["cubes"] >= 1
    piezo_float = r.piezo[(r.piezo_t_s > truth["lifts"][0]["t"] + 0.1)
                          & (r.piezo_t_s < truth["closes"][0]["t"] - 0.1)]
    k0 = truth["lifts"][0]["exposed"]
    if k0 < 7:  # disconnected discs hum at the floating ADC pin
        assert piezo_float[:, 7].astype(float).std() > 3


def test_a_lagging_hx711_misses_single_readings_and_status_counts_them(tmp_path: Path) -> None:
    rec, truth_path = gen.make_recording(2, "single", 40.0, tmp_path)
    truth = _truth(truth_path)
    lag = truth["tower"]["lag_channel"]
    assert lag is not None
    r = read_recording(rec)
    missing = ~r.load_valid
    assert missing[:, [k for k in range(8) if k != lag]].sum() == 0
    idx = np.flatnonzero(missing[:, lag])
    assert len(idx) >= 2 and np.all(np.diff(idx) > 1)  # isolated readings, never a run
    frames, _ = decode_in_odd_chunks(rec.read_bytes())
    status = [f.msg for f in frames if isinstance(f.msg, Status)]
    assert status[-1].load_timeouts <= len(idx) <= status[-1].load_timeouts + 80


def test_adc_multiplexer_ghosting_leaks_the_previous_channel() -> None:
    tw = dataclasses.replace(gen.draw_tower(3), ghost=0.05, piezo_noise=np.zeros(8))
    sc = _quiet_scene(1.0)
    sc.strikes.append((0.3, 7, 400.0, "land"))
    n = tw.piezo_rate
    with_ghost = gen.render_piezo(tw, sc, n, np.random.default_rng(3)).astype(float)
    without = gen.render_piezo(dataclasses.replace(tw, ghost=0.0), sc, n,
                               np.random.default_rng(3)).astype(float)
    d0 = with_ghost[1:, 0] - without[1:, 0]
    src = without[:-1, 7] - np.median(without[:, 7])
    loud = np.abs(src) > 100
    assert loud.sum() > 5
    assert np.median(d0[loud] / src[loud]) == pytest.approx(0.05, abs=0.015)


def test_the_same_seed_gives_the_same_bytes(tmp_path: Path) -> None:
    check_same_seed_same_bytes(gen, tmp_path)


def test_the_command_line(tmp_path: Path) -> None:
    out = tmp_path / "o"
    ok = subprocess.run([sys.executable, str(SCRIPT), "--out", str(out), "--towers", "1",
                         "--first-seed", "4", "--duration", "9", "--scenarios", "rapid"],
                        capture_output=True, text=True, check=False)
    assert ok.returncode == 0, ok.stderr
    assert sorted(p.name for p in out.iterdir()) == ["rapid_t4.bin", "rapid_t4.truth.json"]
    for bad in (["--towers", "0"], ["--duration", "2"], ["--scenarios", "windy"],
                ["--towers", "x"]):
        proc = subprocess.run([sys.executable, str(SCRIPT), "--out", str(tmp_path / "b"), *bad],
                              capture_output=True, text=True, check=False)
        assert proc.returncode == 2
        assert len(proc.stderr.strip().splitlines()) == 1
        assert not (tmp_path / "b").exists()
