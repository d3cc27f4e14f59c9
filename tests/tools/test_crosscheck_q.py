"""Cross-check model Q (tools/crosscheck_q): its bytes follow contracts.md, its truth the bytes,
its damaged files their clean twins outside the damage."""

from __future__ import annotations

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

SCRIPT = TOOLS / "crosscheck_q" / "make_recordings_q.py"
gen = load_script(SCRIPT, "crosscheck_q_under_test")
score = load_script(TOOLS / "crosscheck" / "score.py", "crosscheck_score_for_q")


class Rec(GeneratedRecording):
    """One recording of model Q, decoded, with its truth and tower."""

    def __init__(self, seed: int, scenario: str, duration: float, out: Path) -> None:
        super().__init__(gen, score, seed, scenario, duration, out)


def _first_seed(pred: Any, seeds: range = range(1, 60)) -> int:
    return next(s for s in seeds if pred(gen.make_tower(s)))


@pytest.fixture(scope="module")
def game(tmp_path_factory: pytest.TempPathFactory) -> Rec:
    seed = _first_seed(lambda tw: tw.load_rate_hello >= 70)
    return Rec(seed, "game", 100.0, tmp_path_factory.mktemp("q_game"))


@pytest.fixture(scope="module")
def single(tmp_path_factory: pytest.TempPathFactory) -> Rec:
    return Rec(2, "single", 120.0, tmp_path_factory.mktemp("q_single"))


@pytest.fixture(scope="module")
def noisy(tmp_path_factory: pytest.TempPathFactory) -> Rec:
    return Rec(4, "noisy", 60.0, tmp_path_factory.mktemp("q_noisy"))


def test_wire_encoder_follows_contract() -> None:
    check_wire_encoder(gen)
    check_row_encoders(gen)


def test_bytes_decode_per_contract(game: Rec, single: Rec) -> None:
    for rec in (game, single):
        d, tw = rec.d, rec.tower
        st = d.stats
        assert (st.crc_errors, st.framing_errors, st.unknown_types, st.lost_messages) == \
            (0, 0, 0, 0)
        check_seqs_consecutive(d.frames)
        h = d.hello
        assert (h.proto, h.n_piezo, h.n_load, h.adc_bits) == (1, 8, 8, 10)
        assert (h.piezo_rate_hz, h.load_rate_hz) == (tw.piezo_rate_hello, tw.load_rate_hello)
        assert d.piezo_t[0] == 0.0
        rate = (len(d.piezo_t) - 1) / (d.piezo_t[-1] - d.piezo_t[0])
        assert rate == pytest.approx(h.piezo_rate_hz, rel=1e-3)
        raw = np.array([f.msg.t_us for f in d.frames if isinstance(f.msg, Piezo)], np.int64)
        n_sets = sum(len(f.msg.samples) for f in d.frames if isinstance(f.msg, Piezo))
        assert n_sets / (((raw[-1] - raw[0]) % 2**32) / 1e6) == pytest.approx(
            h.piezo_rate_hz, rel=2e-3)
        lrate = (len(d.load_t) - 1) / (d.load_t[-1] - d.load_t[0])
        assert lrate == pytest.approx(h.load_rate_hz, rel=0.02)
        assert np.all(np.diff(d.load_t) > 0)
        quiet = d.piezo_window(0.5, 3.5)
        assert np.all(np.abs(np.median(quiet, axis=0) - 512) < 12)
        assert quiet.std(axis=0).max() < 6
        assert d.piezo.max() <= 1023 and np.abs(d.load_values).max() <= 2**23
        # While nothing is lifted almost every reading is fresh (HX711 clocks differ a little).
        assert np.mean(d.load_valid[d.load_t < 4.0] == 0xFF) > 0.9


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
        lo, hi = x["t_first_impact"] - 1.0, x["t"] + 1.5
        if any(lo < y["t_first_impact"] < hi or lo < y["t"] < hi
               for y in tr["landings"] if y is not x) \
                or any(abs(t - x["t"]) < 4.0 for t in events) \
                or any(lo - 1 < s[1] and s[0] < hi + 1 for s in tr["open_spans"]):
            continue
        out.append(x)
    return out


def test_each_landing_raises_its_level_by_one_cube(game: Rec, single: Rec) -> None:
    checked = 0
    for rec in (game, single):
        slow = rec.tower.load_rate_hello < 50
        for x in _isolated(rec):
            f = x["floor"]
            before = (x["t_first_impact"] - 0.9, x["t_first_impact"] - 0.1)
            after = (x["t"] + (0.6 if slow else 0.3), x["t"] + 1.4)
            step = rec.grams(f, *after) - rec.grams(f, *before)
            assert step == pytest.approx(x["mass_g"], abs=0.06), x
            assert 0.25 < x["mass_g"] < 0.9
            for k in range(8):
                if k != f:
                    assert abs(rec.grams(k, *after) - rec.grams(k, *before)) < 0.06, (k, x)
            checked += 1
    assert checked >= 8


def test_impacts_ring_their_piezo_and_spike_their_load(single: Rec) -> None:
    rings = spikes = 0
    xs = _isolated(single)
    for x in xs:
        f = x["floor"]
        w = np.abs(single.d.piezo_window(x["t_first_impact"] - 0.002, x["t"] + 0.01) - 512)
        rings += w[:, f].max() > 30
        sel = single.d.fresh(f) & (single.d.load_t > x["t_first_impact"]) \
            & (single.d.load_t < x["t"] + 0.1)
        dev = np.abs(single.d.load_values[sel, f] - single.tower.offset[f]) \
            / abs(single.tower.cpg[f])
        spikes += dev.max() > 1.5 * x["mass_g"]
    assert rings >= 0.8 * len(xs) and spikes >= 0.5 * len(xs)


def test_floors_and_knockdowns_are_physical() -> None:
    floors = np.zeros(8)
    throws = 0
    kds: list[tuple[Any, Any]] = []
    for seed in range(1, 9):
        sc = gen.build_scene(gen.make_tower(seed), "single", 120.0, seed)
        for x in sc.landings:
            if not x["knocked"]:
                floors[x["floor"]] += 1
                throws += 1
        kds += [(k, sc) for k in sc.knockdowns]
    assert floors[0] < floors[4:].mean() and floors[0] < 0.12 * throws
    assert 0 < len(kds) < 0.15 * throws
    for k, _ in kds:  # a knocked cube always goes down
        assert k["to_floor"] < k["from_floor"]


def test_knockdown_moves_mass_between_levels(tmp_path: Path) -> None:
    for seed in range(1, 40):
        tw = gen.make_tower(seed)
        if tw.load_rate_hello < 50:
            continue
        sc = gen.build_scene(tw, "single", 60.0, seed)
        ok = [k for k in sc.knockdowns
              if len([x for x in sc.landings if abs(x["t_first_impact"] - k["t"]) < 3]) == 2
              and k["t"] < 55]
        if ok:
            break
    else:
        raise AssertionError("no isolated knock-down")
    rec = Rec(seed, "single", 60.0, tmp_path)
    tr = rec.truth
    kd = next(k for k in tr["knockdowns"]
              if len([x for x in tr["landings"] if abs(x["t_first_impact"] - k["t"]) < 3]) == 2)
    knocked, thrown = tr["landings"][kd["landing"]], tr["landings"][kd["by"]]
    assert knocked["knocked"] and thrown["caused_knockdown"] and not thrown["knocked"]
    expect = np.zeros(8)
    expect[kd["from_floor"]] -= knocked["mass_g"]
    expect[knocked["floor"]] += knocked["mass_g"]
    expect[thrown["floor"]] += thrown["mass_g"]
    t0 = thrown["t_first_impact"] - 0.9
    t1 = max(thrown["t"], knocked["t"]) + 0.4
    seen = np.array([rec.grams(k, t1, t1 + 0.8) - rec.grams(k, t0, t0 + 0.8) for k in range(8)])
    assert np.allclose(seen, expect, atol=0.06), (seen.round(3), expect.round(3))


def test_lifted_levels_read_invalid_and_removals_weigh(game: Rec) -> None:
    tr, d = game.truth, game.d
    assert tr["lifts"] and tr["removals"] and len(tr["closes"]) >= 1
    check_lifted_levels_invalid(d, tr, after_lift_s=0.01, fresh_least=0.9,
                                back_within_s=1.5, back_least=0.8)
    for r in tr["removals"]:
        if r.get("fell_out"):
            continue
        f = r["floor"]
        drop = game.grams(f, r["t_untouch"] + 0.15, r["t_untouch"] + 0.45) \
            - game.grams(f, r["t_touch"] - 0.5, r["t_touch"] - 0.05)
        assert drop == pytest.approx(-r["mass_g"], abs=0.08)


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
    assert len(thrown) == len([e for e in throws if e["t"] < game.duration - 4])
    assert len(game.truth["lifts"]) == sum(e["do"] != "throw" for e in log)


def test_table_knock_shakes_every_level_without_a_step(noisy: Rec) -> None:
    tr = noisy.truth
    assert tr["knocks"]
    for k in tr["knocks"]:
        w = np.abs(noisy.d.piezo_window(k["t"], k["t"] + 0.06) - 512)
        assert np.all(w.max(axis=0) > 5)
        if any(abs(x["t"] - k["t"]) < 3 or abs(x["t_first_impact"] - k["t"]) < 3
               for x in tr["landings"]):
            continue
        for ch in range(8):
            assert abs(noisy.grams(ch, k["t"] + 1.3, k["t"] + 1.8)
                       - noisy.grams(ch, k["t"] - 0.6, k["t"] - 0.1)) < 0.06


def test_acoustic_has_no_load_stream(tmp_path: Path) -> None:
    seen = set()
    for seed in (1, 2):
        rec = Rec(seed, "acoustic", 20.0, tmp_path / str(seed))
        assert not any(isinstance(f.msg, Load) for f in rec.d.frames)
        assert len(rec.d.load_t) == 0 and len(rec.d.piezo_t) > 15000
        seen.add(rec.d.hello.n_load)
        check_truth(rec.truth, score, scenario="acoustic", seed=seed, duration_s=20.0)
        x = rec.truth["landings"][0]
        w = np.abs(rec.d.piezo_window(x["t_first_impact"] - 0.002, x["t"] + 0.01) - 512)
        assert w.max() > 30
    assert seen == {0, 8}


def test_long_session_clock_wraps(tmp_path: Path) -> None:
    rec = Rec(1, "long", 90.0, tmp_path)
    raw = np.array([f.msg.t_us for f in rec.d.frames if isinstance(f.msg, Piezo | Load)],
                   np.int64)
    assert np.any(np.diff(raw) < 0) and rec.truth["clock_wraps"]
    assert np.all(np.diff(rec.d.piezo_t) > 0)
    check_truth(rec.truth, score, scenario="long", seed=1, duration_s=90.0)
    check_scored_perfect(rec.truth, score)
    check_seqs_consecutive(rec.d.frames)


def test_damaged_equals_its_clean_twin_outside_the_damage(tmp_path: Path) -> None:
    kinds: set[str] = set()
    for seed in (1, 2, 3):
        kinds |= check_damaged_twin(gen, score, seed, 60.0, tmp_path)
    assert {"bitflip", "lost", "reboot", "midframe"} <= kinds


def test_same_seed_same_bytes(tmp_path: Path) -> None:
    check_same_seed_same_bytes(gen, tmp_path)


def test_command_line(tmp_path: Path) -> None:
    check_command_line(SCRIPT, score, tmp_path / "set", 12.0)
    out = tmp_path / "extra"
    check_extra_families_command_line(SCRIPT, out)
    bad = subprocess.run([sys.executable, str(SCRIPT), "--out", str(tmp_path / "o"),
                          "--scenarios", "party"], capture_output=True, text=True, check=False,
                         timeout=60)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "o").exists()
