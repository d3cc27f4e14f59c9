"""Cross-check model O (tools/crosscheck_o): its bytes follow contracts.md, its truth the bytes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.scripts import (
    TOOLS,
    GeneratedRecording,
    check_command_line,
    check_lifted_levels_invalid,
    check_row_encoders,
    check_same_seed_same_bytes,
    check_scored_perfect,
    check_seqs_consecutive,
    check_truth,
    check_wire_encoder,
    load_script,
)

SCRIPT = TOOLS / "crosscheck_o" / "make_recordings_o.py"
gen = load_script(SCRIPT, "crosscheck_o_under_test")
score = load_script(TOOLS / "crosscheck" / "score.py", "crosscheck_score_for_o")

GAME_SEED = 2
GAME_S = 75.0


class Rec(GeneratedRecording):
    """One recording of model O, decoded, with its truth and tower."""

    def __init__(self, seed: int, scenario: str, duration: float, out: Path) -> None:
        super().__init__(gen, score, seed, scenario, duration, out)


def _first_seed_with_isolated_knockdown(scenario: str) -> int:
    """A tower whose ``scenario`` run has a knock-down with no other cube falling near it."""
    for seed in range(1, 60):
        scene = gen.build_scene(gen.make_tower(seed), scenario, 60.0, seed)
        for k in scene.knockdowns:
            near = [x for x in scene.landings if abs(x["t_first_impact"] - k["t"]) < 3.0]
            if len(near) == 2:
                return seed
    raise AssertionError("no knock-down in 60 towers")


@pytest.fixture(scope="module")
def game(tmp_path_factory: pytest.TempPathFactory) -> Rec:
    return Rec(GAME_SEED, "game", GAME_S, tmp_path_factory.mktemp("o_game"))


@pytest.fixture(scope="module")
def knockdown(tmp_path_factory: pytest.TempPathFactory) -> Rec:
    seed = _first_seed_with_isolated_knockdown("single")
    return Rec(seed, "single", 60.0, tmp_path_factory.mktemp("o_knock"))


@pytest.fixture(scope="module")
def noisy(tmp_path_factory: pytest.TempPathFactory) -> Rec:
    return Rec(4, "noisy", 60.0, tmp_path_factory.mktemp("o_noisy"))


def test_wire_encoder_follows_contract() -> None:
    check_wire_encoder(gen)
    check_row_encoders(gen)


def test_bytes_decode_per_contract(game: Rec) -> None:
    d = game.d
    st = d.stats
    assert (st.crc_errors, st.framing_errors, st.unknown_types, st.lost_messages) == (0, 0, 0, 0)
    check_seqs_consecutive(d.frames)
    assert d.frames[0].seq == 0
    h = d.hello
    assert (h.proto, h.n_piezo, h.n_load, h.piezo_rate_hz, h.load_rate_hz, h.adc_bits) == \
        (1, 8, 8, 2000, 80, 10)
    # Sets every 0.5 ms from stream time 0, all of the recording (but a last partial frame).
    assert d.piezo_t[0] == 0.0
    assert abs(len(d.piezo_t) - GAME_S * 2000) < 16
    rate = (len(d.load_t) - 1) / (d.load_t[-1] - d.load_t[0])
    assert 76 < rate < 84
    assert np.all(np.diff(d.load_t) > 0)
    # Idle piezos sit at mid-scale of the 10-bit ADC; loads are s24.
    quiet = d.piezo_window(0.5, 3.5)
    assert np.all(np.abs(np.median(quiet, axis=0) - 512) < 10)
    assert quiet.std(axis=0).max() < 5
    assert d.piezo.max() <= 1023
    assert np.abs(d.load_values).max() < 2**23


def test_truth_is_what_the_scorer_reads(game: Rec, knockdown: Rec) -> None:
    for rec in (game, knockdown):
        check_truth(rec.truth, score, scenario=rec.scenario, seed=rec.seed,
                    duration_s=rec.duration)
        check_scored_perfect(rec.truth, score)


def test_each_landing_raises_its_level_by_one_cube(game: Rec) -> None:
    tr = game.truth
    events = [x["t"] for x in tr["removals"] + tr["lifts"] + tr["closes"] + tr["knocks"]]
    checked = 0
    for x in tr["landings"]:
        others = [y for y in tr["landings"] if y is not x]
        lo, hi = x["t_first_impact"] - 0.9, x["t"] + 1.1
        if any(lo < y["t_first_impact"] < hi or lo < y["t"] < hi for y in others) \
                or any(abs(t - x["t"]) < 3.0 for t in events):
            continue
        f = x["floor"]
        step = game.grams(f, x["t"] + 0.3, x["t"] + 1.0) \
            - game.grams(f, x["t_first_impact"] - 0.8, x["t_first_impact"] - 0.1)
        assert step == pytest.approx(x["mass_g"], abs=0.05), x
        for k in range(8):  # the other levels do not move
            if k != f and game.d.fresh(k)[np.searchsorted(game.d.load_t, x["t"])]:
                other = game.grams(k, x["t"] + 0.3, x["t"] + 1.0) \
                    - game.grams(k, x["t_first_impact"] - 0.8, x["t_first_impact"] - 0.1)
                assert abs(other) < 0.05
        checked += 1
    assert checked >= 5
    floors = {x["floor"] for x in tr["landings"]}
    assert len(floors) >= 4


def test_impacts_ring_their_piezo_and_spike_their_load(game: Rec) -> None:
    x = game.truth["landings"][0]
    f = x["floor"]
    w = np.abs(game.d.piezo_window(x["t_first_impact"] - 0.002, x["t"] + 0.01) - 512)
    assert w[:, f].max() > 60
    # A short spike bigger than the cube's weight while it bounces, then the step.
    sel = game.d.fresh(f) & (game.d.load_t > x["t_first_impact"]) & (game.d.load_t < x["t"])
    spike = np.abs(game.d.load_values[sel, f] - game.tower.offset[f]) / abs(game.tower.cpg[f])
    assert spike.max() > 2 * x["mass_g"]


def test_knockdown_changes_two_or_three_levels(knockdown: Rec) -> None:
    tr = knockdown.truth
    kd = next(k for k in tr["knockdowns"]
              if len([x for x in tr["landings"] if abs(x["t_first_impact"] - k["t"]) < 3]) == 2)
    knocked = tr["landings"][kd["landing"]]
    thrown = tr["landings"][kd["by"]]
    assert knocked["knocked"] and thrown["caused_knockdown"] and not thrown["knocked"]
    assert knocked["from_floor"] == kd["from_floor"] > knocked["floor"]
    # The thrown cube struck the plate the knocked cube rested on.
    assert any(p[1] == kd["from_floor"] and p[2] == "plate" for p in thrown["path"])
    expect = np.zeros(8)
    expect[kd["from_floor"]] -= knocked["mass_g"]
    expect[knocked["floor"]] += knocked["mass_g"]
    expect[thrown["floor"]] += thrown["mass_g"]
    t0 = thrown["t_first_impact"] - 0.8
    t1 = max(thrown["t"], knocked["t"]) + 0.3
    seen = np.array([knockdown.grams(k, t1, t1 + 0.7) - knockdown.grams(k, t0, t0 + 0.7)
                     for k in range(8)])
    assert np.allclose(seen, expect, atol=0.05), (seen.round(3), expect.round(3))
    # Two or three levels: the one knocked from (which nets zero when the thrown cube
    # stays there), the knocked cube's and the thrown cube's resting levels.
    assert 2 <= len({kd["from_floor"], knocked["floor"], thrown["floor"]}) <= 3


def test_lifted_levels_read_invalid_and_removals_weigh(game: Rec) -> None:
    tr = game.truth
    d = game.d
    assert tr["lifts"] and tr["removals"]
    check_lifted_levels_invalid(d, tr, after_lift_s=0.02, fresh_least=1.0,
                                back_within_s=1.0, back_least=1.0)
    for lift in tr["lifts"]:
        before = (d.load_t > lift["t"] - 1.0) & (d.load_t < lift["t"] - 0.01)
        assert np.all(d.load_valid[before] == 0xFF)
    for r in tr["removals"]:
        f = r["floor"]
        drop = game.grams(f, r["t"] + 0.2, r["t"] + 0.5) \
            - game.grams(f, r["t_touch"] - 0.5, r["t_touch"] - 0.05)
        assert drop == pytest.approx(-r["mass_g"], abs=0.05)


def test_game_follows_the_rules(game: Rec) -> None:
    g = game.truth["game"]
    log = g["log"]
    throws = [e for e in log if e["do"] == "throw"]
    players = g["players"]
    assert [e["color"] for e in throws[:2]] == ["red", "red"]
    prologue = [e["color"] for e in throws[2:2 + 2 * len(players)]]
    assert sorted(prologue) == sorted(players * 2)
    assert all(prologue[2 * i] == prologue[2 * i + 1] for i in range(len(players)))
    first_inspect = next(i for i, e in enumerate(log) if e["do"] == "inspect")
    assert first_inspect == 2 + 2 * len(players)
    # Every throw of the log is a landing (the truth carries every cube that fell).
    thrown = [x for x in game.truth["landings"] if not x["knocked"]]
    assert len(thrown) == len(throws)


def test_table_knock_shakes_every_level_without_a_step(noisy: Rec) -> None:
    tr = noisy.truth
    assert tr["knocks"]
    for k in tr["knocks"]:
        w = np.abs(noisy.d.piezo_window(k["t"], k["t"] + 0.06) - 512)
        assert np.all(w.max(axis=0) > 8)
        for ch in range(8):
            assert abs(noisy.grams(ch, k["t"] + 0.3, k["t"] + 0.6)
                       - noisy.grams(ch, k["t"] - 0.5, k["t"] - 0.1)) < 0.05


def test_few_cubes_reach_the_ground_floor_and_knockdowns_are_rare() -> None:
    floors = np.zeros(8)
    throws = knocks = 0
    for seed in range(1, 5):
        scene = gen.build_scene(gen.make_tower(seed), "single", 120.0, seed)
        for x in scene.landings:
            if not x["knocked"]:
                floors[x["floor"]] += 1
                throws += 1
        knocks += len(scene.knockdowns)
    assert floors[0] < floors[5:].mean()
    assert knocks < 0.15 * throws


def test_same_seed_same_bytes(tmp_path: Path) -> None:
    check_same_seed_same_bytes(gen, tmp_path)


def test_command_line(tmp_path: Path) -> None:
    check_command_line(SCRIPT, score, tmp_path / "set", 12.0)
    truth = json.loads((tmp_path / "set" / "game_t5.truth.json").read_text())
    assert truth["tower"] == json.loads(
        (tmp_path / "set" / "single_t5.truth.json").read_text())["tower"]


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


def test_missing_out_is_one_line() -> None:
    proc = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True,
                          check=False, timeout=60)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1
    assert "--out" in proc.stderr
