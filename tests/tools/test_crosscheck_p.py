"""Cross-check model P (tools/crosscheck_p): its bytes follow contracts.md, its truth the bytes,
its damaged files their clean twins outside the damage."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hostapp.protocol import Load, Piezo
from tests.scripts import (
    TOOLS,
    GeneratedRecording,
    check_command_line,
    check_damaged_twin,
    check_extra_families_command_line,
    check_lifted_levels_invalid,
    check_row_encoders,
    check_same_seed_same_bytes,
    check_scored_perfect,
    check_seqs_consecutive,
    check_truth,
    check_wire_encoder,
    load_script,
)

SCRIPT = TOOLS / "crosscheck_p" / "make_recordings_p.py"
gen = load_script(SCRIPT, "crosscheck_p_under_test")
score = load_script(TOOLS / "crosscheck" / "score.py", "crosscheck_score_for_p")

GAME_SEED = 3
GAME_S = 90.0


class Rec(GeneratedRecording):
    """One recording of model P, decoded, with its truth and tower."""

    def __init__(self, seed: int, scenario: str, duration: float, out: Path) -> None:
        super().__init__(gen, score, seed, scenario, duration, out)


@pytest.fixture(scope="module")
def game(tmp_path_factory: pytest.TempPathFactory) -> Rec:
    return Rec(GAME_SEED, "game", GAME_S, tmp_path_factory.mktemp("p_game"))


@pytest.fixture(scope="module")
def single(tmp_path_factory: pytest.TempPathFactory) -> Rec:
    return Rec(2, "single", 120.0, tmp_path_factory.mktemp("p_single"))


@pytest.fixture(scope="module")
def noisy(tmp_path_factory: pytest.TempPathFactory) -> Rec:
    return Rec(4, "noisy", 60.0, tmp_path_factory.mktemp("p_noisy"))


def test_wire_encoder_follows_contract() -> None:
    check_wire_encoder(gen)
    check_row_encoders(gen)


def test_bytes_decode_per_contract(game: Rec) -> None:
    d = game.d
    st = d.stats
    assert (st.crc_errors, st.framing_errors, st.unknown_types, st.lost_messages) == (0, 0, 0, 0)
    check_seqs_consecutive(d.frames)
    h = d.hello
    tw = game.tower
    assert (h.proto, h.n_piezo, h.n_load, h.adc_bits) == (1, 8, 8, 10)
    assert (h.piezo_rate_hz, h.load_rate_hz) == (tw.piezo_rate_hello, tw.load_rate_hello)
    assert d.piezo_t[0] == 0.0
    # Sets and readings come at the rates HELLO announces (the HX711's within its rounding).
    sets_rate = (len(d.piezo_t) - 1) / (d.piezo_t[-1] - d.piezo_t[0])
    assert sets_rate == pytest.approx(h.piezo_rate_hz, rel=1e-3)
    raw_t = np.array([f.msg.t_us for f in d.frames if isinstance(f.msg, Piezo)], np.int64)
    span_s = (((raw_t[-1] - raw_t[0]) % 2**32) / 1e6)
    n_sets = sum(len(f.msg.samples) for f in d.frames if isinstance(f.msg, Piezo))
    assert n_sets / span_s == pytest.approx(h.piezo_rate_hz, rel=1e-3)
    rate = (len(d.load_t) - 1) / (d.load_t[-1] - d.load_t[0])
    assert rate == pytest.approx(h.load_rate_hz, rel=0.01)
    assert np.all(np.diff(d.load_t) > 0)
    quiet = d.piezo_window(0.5, 3.5)
    assert np.all(np.abs(np.median(quiet, axis=0) - 512) < 10)
    assert quiet.std(axis=0).max() < 5
    assert d.piezo.max() <= 1023
    assert np.abs(d.load_values).max() < 2**23


def test_truth_is_what_the_scorer_reads(game: Rec, single: Rec, noisy: Rec) -> None:
    for rec in (game, single, noisy):
        check_truth(rec.truth, score, scenario=rec.scenario, seed=rec.seed,
                    duration_s=rec.duration)
        check_scored_perfect(rec.truth, score)


def _isolated(rec: Rec) -> list[dict[str, Any]]:
    tr = rec.truth
    events = [x["t"] for x in tr["removals"] + tr["lifts"] + tr["closes"] + tr["knocks"]]
    out = []
    for x in tr["landings"]:
        lo, hi = x["t_first_impact"] - 0.9, x["t"] + 1.1
        if any(lo < y["t_first_impact"] < hi or lo < y["t"] < hi
               for y in tr["landings"] if y is not x) \
                or any(abs(t - x["t"]) < 3.0 for t in events):
            continue
        out.append(x)
    return out


def test_each_landing_raises_its_level_by_one_cube(game: Rec, single: Rec) -> None:
    checked = 0
    for rec in (game, single):
        for x in _isolated(rec):
            f = x["floor"]
            t_before = (x["t_first_impact"] - 0.8, x["t_first_impact"] - 0.1)
            step = rec.grams(f, x["t"] + 0.3, x["t"] + 1.0) - rec.grams(f, *t_before)
            assert step == pytest.approx(x["mass_g"], abs=0.05), x
            assert 0.25 < x["mass_g"] < 0.85
            for k in range(8):
                if k != f:
                    other = rec.grams(k, x["t"] + 0.3, x["t"] + 1.0) - rec.grams(k, *t_before)
                    assert abs(other) < 0.05
            checked += 1
    assert checked >= 10
    floors = [x["floor"] for x in single.truth["landings"]]
    assert len(set(floors)) >= 4


def test_impacts_ring_their_piezo_and_spike_their_load(single: Rec) -> None:
    x = _isolated(single)[0]
    f = x["floor"]
    w = np.abs(single.d.piezo_window(x["t_first_impact"] - 0.002, x["t"] + 0.01) - 512)
    assert w[:, f].max() > 60
    sel = single.d.fresh(f) & (single.d.load_t > x["t_first_impact"]) \
        & (single.d.load_t < x["t"] + 0.2)
    spike = np.abs(single.d.load_values[sel, f] - single.tower.offset[f]) \
        / abs(single.tower.cpg[f])
    assert spike.max() > 2 * x["mass_g"]


def test_knockdown_changes_two_or_three_levels(tmp_path: Path) -> None:
    for seed in range(1, 30):
        scene = gen.build_scene(gen.make_tower(seed), "single", 60.0, seed)
        ok = [k for k in scene.knockdowns
              if len([x for x in scene.landings if abs(x["t_first_impact"] - k["t"]) < 3]) == 2]
        if ok:
            break
    else:
        raise AssertionError("no isolated knock-down in 30 towers")
    rec = Rec(seed, "single", 60.0, tmp_path)
    tr = rec.truth
    kd = next(k for k in tr["knockdowns"]
              if len([x for x in tr["landings"] if abs(x["t_first_impact"] - k["t"]) < 3]) == 2)
    knocked, thrown = tr["landings"][kd["landing"]], tr["landings"][kd["by"]]
    assert knocked["knocked"] and thrown["caused_knockdown"] and not thrown["knocked"]
    assert knocked["from_floor"] == kd["from_floor"] > knocked["floor"]
    expect = np.zeros(8)
    expect[kd["from_floor"]] -= knocked["mass_g"]
    expect[knocked["floor"]] += knocked["mass_g"]
    expect[thrown["floor"]] += thrown["mass_g"]
    t0 = thrown["t_first_impact"] - 0.8
    t1 = max(thrown["t"], knocked["t"]) + 0.3
    seen = np.array([rec.grams(k, t1, t1 + 0.7) - rec.grams(k, t0, t0 + 0.7) for k in range(8)])
    assert np.allclose(seen, expect, atol=0.05), (seen.round(3), expect.round(3))
    assert 2 <= len({kd["from_floor"], knocked["floor"], thrown["floor"]}) <= 3


def test_lifted_levels_read_invalid_and_removals_weigh(game: Rec) -> None:
    tr, d = game.truth, game.d
    assert tr["lifts"] and tr["removals"] and len(tr["lifts"]) == len(tr["closes"])
    check_lifted_levels_invalid(d, tr, after_lift_s=0.05, before_close_s=0.15,
                                fresh_least=0.99, back_within_s=1.0, back_least=0.95)
    for lift in tr["lifts"]:
        before = (d.load_t > lift["t"] - 1.0) & (d.load_t < lift["t"] - 0.01)
        assert np.mean(d.load_valid[before] == 0xFF) > 0.95
    for r in tr["removals"]:
        f = r["floor"]
        drop = game.grams(f, r["t"] + 0.2, r["t"] + 0.5) \
            - game.grams(f, r["t_touch"] - 0.5, r["t_touch"] - 0.05)
        assert drop == pytest.approx(-r["mass_g"], abs=0.05)


def test_game_follows_the_rules(game: Rec) -> None:
    g = game.truth["game"]
    log, players = g["log"], g["players"]
    throws = [e for e in log if e["do"] == "throw"]
    assert [e["color"] for e in throws[:2]] == ["red", "red"]
    prologue = [e["color"] for e in throws[2:2 + 2 * len(players)]]
    assert prologue == [p for p in players for _ in range(2)]
    first_action = next(i for i, e in enumerate(log) if e["do"] != "throw")
    assert first_action == 2 + 2 * len(players) and log[first_action]["do"] == "inspect"
    thrown = [x for x in game.truth["landings"] if not x["knocked"]]
    assert len(thrown) == len(throws)
    assert [x["floor"] for x in thrown] == [e["floor"] for e in sorted(throws,
                                                                       key=lambda e: e["t"])] \
        or sorted(x["floor"] for x in thrown) == sorted(e["floor"] for e in throws)
    assert len(game.truth["lifts"]) == sum(e["do"] != "throw" for e in log)


def test_table_knock_shakes_every_level_without_a_step(noisy: Rec) -> None:
    tr = noisy.truth
    assert tr["knocks"]
    for k in tr["knocks"]:
        w = np.abs(noisy.d.piezo_window(k["t"], k["t"] + 0.06) - 512)
        assert np.all(w.max(axis=0) > 8)
        for ch in range(8):
            assert abs(noisy.grams(ch, k["t"] + 1.3, k["t"] + 1.8)
                       - noisy.grams(ch, k["t"] - 0.5, k["t"] - 0.1)) < 0.05


def test_few_cubes_reach_the_ground_floor_and_knockdowns_are_rare() -> None:
    floors = np.zeros(8)
    throws = knocks = 0
    for seed in range(1, 7):
        scene = gen.build_scene(gen.make_tower(seed), "single", 120.0, seed)
        for x in scene.landings:
            if not x["knocked"]:
                floors[x["floor"]] += 1
                throws += 1
        knocks += len(scene.knockdowns)
    assert floors[0] < floors[4:].mean()
    assert knocks < 0.12 * throws


def test_acoustic_has_no_load_stream(tmp_path: Path) -> None:
    seen = set()
    for seed in (1, 2):
        rec = Rec(seed, "acoustic", 20.0, tmp_path / str(seed))
        assert not any(isinstance(f.msg, Load) for f in rec.d.frames)
        assert len(rec.d.load_t) == 0 and len(rec.d.piezo_t) > 30000
        seen.add(rec.d.hello.n_load)
        assert rec.truth["n_load"] == rec.d.hello.n_load
        check_truth(rec.truth, score, scenario="acoustic", seed=seed, duration_s=20.0)
        x = rec.truth["landings"][0]
        w = np.abs(rec.d.piezo_window(x["t_first_impact"] - 0.002, x["t"] + 0.01) - 512)
        assert w.max() > 60
    assert seen == {0, 8}


def test_long_session_clock_wraps_and_cells_drift(tmp_path: Path) -> None:
    seed = 1  # long sessions of seeds not divisible by 3 start near the u32 wrap
    rec = Rec(seed, "long", 120.0, tmp_path)
    raw = np.array([f.msg.t_us for f in rec.d.frames if isinstance(f.msg, Piezo | Load)],
                   np.int64)
    assert np.any(np.diff(raw) < 0) and rec.truth["clock_wraps"]
    assert np.all(np.diff(rec.d.piezo_t) > 0)  # unwrapped, stream time runs on
    check_truth(rec.truth, score, scenario="long", seed=seed, duration_s=120.0)
    check_scored_perfect(rec.truth, score)
    # The cells start cold: the zero of an unloaded level moves by warm-up, not by cubes.
    tw = rec.tower
    scene = gen.build_scene(tw, "long", 120.0, seed)
    assert not scene.warm
    ch = int(np.argmax(np.abs(tw.warmup_g)))
    assert abs(tw.warmup_g[ch]) > 0.05

    def residual(t0: float) -> float:  # measured minus the cubes resting there
        cubes = sum(dm for ts, lv, dm in scene.mass_steps if lv == ch and ts < t0)
        return rec.grams(ch, t0, t0 + 3.0) - cubes

    busy = [x[0] for x in scene.impacts if abs(x[1] - ch) <= 1] \
        + [x[0] + x[1] / 2 for x in scene.presses if x[2] == ch] \
        + [x[0] for x in scene.mass_steps if x[1] == ch] + [k["t"] for k in rec.truth["knocks"]]
    late = next(t for t in np.arange(115.0, 60.0, -0.5)
                if not any(t - 1.5 < b < t + 4.0 for b in busy))
    moved = residual(late) - residual(1.0)
    expect = tw.warmup_g[ch] * (np.exp(-2.5 / tw.warmup_tau_s)
                                - np.exp(-(late + 1.5) / tw.warmup_tau_s))
    assert abs(expect) > 0.02 and moved == pytest.approx(expect, abs=0.015), (moved, expect)
    # Long sessions of seeds divisible by 3 start far from the wrap.
    assert not gen.make_recording(3, "long", 20.0, tmp_path / "nowrap")[1].read_text().count(
        '"clock_wraps": true')


def test_damaged_equals_its_clean_twin_outside_the_damage(tmp_path: Path) -> None:
    kinds_seen: set[str] = set()
    for seed in range(1, 20):
        kinds_seen |= check_damaged_twin(gen, score, seed, 60.0, tmp_path)
        if len(kinds_seen) == 7:
            break
    assert {"bitflip", "lost", "garbage", "duplicate", "unplug", "reboot",
            "midframe"} <= kinds_seen


def test_same_seed_same_bytes(tmp_path: Path) -> None:
    check_same_seed_same_bytes(gen, tmp_path)


def test_command_line(tmp_path: Path) -> None:
    check_command_line(SCRIPT, score, tmp_path / "set", 12.0)
    truth = json.loads((tmp_path / "set" / "game_t5.truth.json").read_text())
    assert truth["tower"] == json.loads(
        (tmp_path / "set" / "single_t5.truth.json").read_text())["tower"]
    out = tmp_path / "extra"
    check_extra_families_command_line(SCRIPT, out)
    assert json.loads((out / "long_t2.truth.json").read_text())["duration_s"] == 40.0


@pytest.mark.parametrize("args", [
    ["--towers", "0"],
    ["--duration", "5"],
    ["--scenarios", "party"],
    ["--workers", "0"],
    ["--towers", "x"],
])
def test_bad_arguments_give_one_line(args: list[str], tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, str(SCRIPT), "--out", str(tmp_path / "o"), *args],
                          capture_output=True, text=True, check=False, timeout=60)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "error" in lines[0], proc.stderr
    assert not (tmp_path / "o").exists()
