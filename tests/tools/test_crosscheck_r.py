"""Cross-check model R (tools/crosscheck_r): its bytes follow contracts.md, its truth the bytes,
and its electronics, rooms and players do what its README says."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hostapp.protocol import Load, Piezo, Status
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
    decode_stream,
    load_script,
)

SCRIPT = TOOLS / "crosscheck_r" / "make_recordings_r.py"
gen = load_script(SCRIPT, "crosscheck_r_under_test")
score = load_script(TOOLS / "crosscheck" / "score.py", "crosscheck_score_for_r")


class Rec(GeneratedRecording):
    """One recording of model R, decoded, with its truth and tower."""

    def __init__(self, seed: int, scenario: str, duration: float, out: Path) -> None:
        super().__init__(gen, score, seed, scenario, duration, out)

    def settle_s(self) -> float:
        """Time for a step to be fully in the readings: four conversions and one of age."""
        return 5.0 / float(self.tower.load_rate_hello) + 0.05


def _first_seed(pred: Any, seeds: range = range(1, 80)) -> int:
    return next(s for s in seeds if pred(gen.make_tower(s)))


@pytest.fixture(scope="module")
def game(tmp_path_factory: pytest.TempPathFactory) -> Rec:
    seed = _first_seed(lambda tw: tw.load_rate_nominal == 80 and tw.glitch_shift_per_min == 0)
    return Rec(seed, "game", 100.0, tmp_path_factory.mktemp("r_game"))


@pytest.fixture(scope="module")
def single(tmp_path_factory: pytest.TempPathFactory) -> Rec:
    seed = _first_seed(lambda tw: tw.load_rate_nominal == 80 and tw.cells == "mixed")
    return Rec(seed, "single", 90.0, tmp_path_factory.mktemp("r_single"))


@pytest.fixture(scope="module")
def slow(tmp_path_factory: pytest.TempPathFactory) -> Rec:
    seed = _first_seed(lambda tw: tw.load_rate_nominal == 10)  # HX711s at 10 readings/s
    return Rec(seed, "single", 60.0, tmp_path_factory.mktemp("r_slow"))


@pytest.fixture(scope="module")
def noisy(tmp_path_factory: pytest.TempPathFactory) -> Rec:
    seed = _first_seed(lambda tw: tw.load_rate_nominal == 80 and tw.glitch_shift_per_min == 0
                       and tw.glitch_pdown_per_min == 0)
    return Rec(seed, "noisy", 60.0, tmp_path_factory.mktemp("r_noisy"))


def test_wire_encoder_follows_contract() -> None:
    check_wire_encoder(gen)
    check_row_encoders(gen)


def test_bytes_decode_per_contract(game: Rec, single: Rec, slow: Rec) -> None:
    for rec in (game, single, slow):
        d, tw = rec.d, rec.tower
        st = d.stats
        assert (st.crc_errors, st.framing_errors, st.unknown_types, st.lost_messages) == \
            (0, 0, 0, 0)
        check_seqs_consecutive(d.frames)
        h = d.hello
        assert (h.proto, h.n_piezo, h.n_load, h.adc_bits) == (1, 8, 8, 10)
        assert h.piezo_rate_hz == 2000 and h.load_rate_hz == tw.load_rate_hello
        assert d.frames[0].msg == h  # HELLO first: at boot, or the answer to GET_INFO
        assert isinstance(d.frames[2].msg, Piezo) or isinstance(d.frames[1].msg, Piezo)
        assert d.piezo_t[0] == 0.0
        raw = np.array([f.msg.t_us for f in d.frames if isinstance(f.msg, Piezo | Load)], np.int64)
        assert np.all(raw % 4 == 0)  # micros() counts in steps of 4 us
        n_sets = sum(len(f.msg.samples) for f in d.frames if isinstance(f.msg, Piezo))
        p_raw = np.array([f.msg.t_us for f in d.frames if isinstance(f.msg, Piezo)], np.int64)
        assert n_sets / (((p_raw[-1] - p_raw[0]) % 2**32) / 1e6) == pytest.approx(2000, rel=2e-3)
        # LOADs come at the slowest chip's pace, which HELLO reports rounded
        lrate = (len(d.load_t) - 1) / (d.load_t[-1] - d.load_t[0])
        assert lrate == pytest.approx(h.load_rate_hz, rel=0.04)
        assert np.all(np.diff(d.load_t) > 0) and d.load_t[0] > 0
        quiet = d.piezo_window(0.5, 3.5)
        assert np.all(np.abs(np.median(quiet, axis=0) - 512) < 16)
        assert quiet.std(axis=0).max() < 8
        assert d.piezo.max() <= 1023 and np.abs(d.load_values).max() < 2**23
        assert np.mean(d.load_valid[d.load_t < 4.0] == 0xFF) > 0.9
        status = [f.msg for f in d.frames if isinstance(f.msg, Status)]
        assert len(status) >= rec.duration - 2
        assert np.all(np.diff([s.uptime_ms for s in status]) == 1000)


def test_truth_is_what_the_scorer_reads(game: Rec, single: Rec, noisy: Rec) -> None:
    for rec in (game, single, noisy):
        check_truth(rec.truth, score, scenario=rec.scenario, seed=rec.seed,
                    duration_s=rec.duration)
        check_scored_perfect(rec.truth, score)
        assert rec.truth["tower"]["seed"] == rec.seed


def _isolated(rec: Rec) -> list[dict[str, Any]]:
    tr = rec.truth
    events = [x["t"] for x in tr["removals"] + tr["lifts"] + tr["closes"] + tr["knocks"]]
    busy = [(r["t"], r.get("t_end", r["t"]) + 1.0) for r in tr["room"]
            if r["kind"] in ("steady", "lean", "chair", "phone")]
    out = []
    for x in tr["landings"]:
        lo, hi = x["t_first_impact"] - 1.5, x["t"] + 2.0
        if any(lo < y["t_first_impact"] < hi or lo < y["t"] < hi
               for y in tr["landings"] if y is not x) \
                or any(lo - 2 < t < hi + 2 for t in events) \
                or any(a < hi and b > lo for a, b in busy) \
                or any(lo - 1 < s[1] and s[0] < hi + 1 for s in tr["open_spans"]) \
                or any(lo - 1 < g["t"] < hi + 1 for g in tr["hx711_glitches"]):
            continue
        out.append(x)
    return out


def test_each_landing_raises_its_level_by_one_cube(game: Rec, single: Rec, slow: Rec) -> None:
    checked = 0
    for rec in (game, single, slow):
        for x in _isolated(rec):
            f = x["floor"]
            before = (x["t_first_impact"] - 1.2, x["t_first_impact"] - 0.1)
            after = (x["t"] + rec.settle_s(), x["t"] + 1.8)
            step = rec.grams(f, *after) - rec.grams(f, *before)
            assert step == pytest.approx(x["mass_g"], abs=0.05), x
            assert 0.25 < x["mass_g"] < 0.9
            for k in range(8):
                if k != f:
                    assert abs(rec.grams(k, *after) - rec.grams(k, *before)) < 0.05, (k, x)
            checked += 1
    assert checked >= 6


def test_impacts_ring_the_discs_and_spike_the_cells(single: Rec) -> None:
    rings = spikes = 0
    rec = single
    xs = [x for x in _isolated(rec) if not x["knocked"]]
    bias = np.median(rec.d.piezo_window(0.5, 3.5), axis=0)
    for x in xs:
        f = x["floor"]
        w = np.abs(rec.d.piezo_window(x["t_first_impact"] - 0.002, x["t"] + 0.01) - bias)
        rings += w[:, f].max() > 15
        sel = rec.d.fresh(f) & (rec.d.load_t > x["t_first_impact"]) \
            & (rec.d.load_t < x["t"] + 0.1)
        grams = (rec.d.load_values[sel, f] - rec.tower.offset[f]) / rec.tower.cpg[f]
        base = rec.grams(f, x["t_first_impact"] - 1.0, x["t_first_impact"] - 0.1)
        spikes += np.abs(grams - base).max() > 1.5 * x["mass_g"]
    assert xs and rings >= 0.8 * len(xs) and spikes >= 0.5 * len(xs)


def test_floors_and_knockdowns_are_physical() -> None:
    floors = np.zeros(8)
    throws = knocked = 0
    for seed in range(1, 9):
        sc = gen.build_scene(gen.make_tower(seed), "single", 120.0, seed)
        for x in sc.landings:
            if x["knocked"]:
                knocked += 1
                assert x["floor"] < x["from_floor"]
            else:
                floors[x["floor"]] += 1
                throws += 1
        for k in sc.knockdowns:
            assert sc.landings[k["by"]]["caused_knockdown"]
            assert sc.landings[k["landing"]]["knocked"]
    assert floors[0] < floors[4:].mean() and floors[0] < 0.12 * throws
    assert 0 < knocked < 0.15 * throws


def test_a_knockdown_changes_the_load_on_two_or_three_levels(tmp_path: Path) -> None:
    found = None
    for seed in range(1, 200):
        tw = gen.make_tower(seed)
        if tw.load_rate_nominal != 80 or tw.glitch_shift_per_min or tw.glitch_pdown_per_min:
            continue
        sc = gen.build_scene(tw, "single", 90.0, seed)
        for k in sc.knockdowns:
            pair = [x for x in sc.landings if abs(x["t_first_impact"] - k["t"]) < 4]
            if len(pair) == 2 and k["t"] < 82 and not any(
                    abs(q["t"] - k["t"]) < 4 for q in sc.knocks + sc.room):
                found = (seed, k["t"])
                break
        if found:
            break
    assert found, "no isolated knock-down"
    rec = Rec(found[0], "single", 90.0, tmp_path)
    tr = rec.truth
    kd = next(k for k in tr["knockdowns"] if abs(k["t"] - found[1]) < 1e-3)
    knocked, thrown = tr["landings"][kd["landing"]], tr["landings"][kd["by"]]
    assert knocked["knocked"] and thrown["caused_knockdown"] and not thrown["knocked"]
    assert knocked["from_floor"] == kd["from_floor"] > knocked["floor"] == kd["to_floor"]
    expect = np.zeros(8)
    expect[kd["from_floor"]] -= knocked["mass_g"]
    expect[knocked["floor"]] += knocked["mass_g"]
    expect[thrown["floor"]] += thrown["mass_g"]
    t0 = thrown["t_first_impact"] - 1.0
    t1 = max(thrown["t"], knocked["t"]) + 0.3
    seen = np.array([rec.grams(k, t1, t1 + 1.0) - rec.grams(k, t0, t0 + 0.9) for k in range(8)])
    assert np.allclose(seen, expect, atol=0.05), (seen.round(3), expect.round(3))
    assert np.sum(np.abs(seen) > 0.15) >= 2


def _shift_garbage(value: int, bit: int) -> int:
    """What the firmware reads when the chip saw one SCK edge too many after ``bit`` bits."""
    raw = value & 0xFFFFFF
    low = (1 << (24 - bit)) - 1
    out = (raw & ~low & 0xFFFFFF) | (((raw << 1) | 1) & low)
    return out - (1 << 24) if out >= 1 << 23 else out


def test_hx711_glitches_return_garbage_with_the_valid_bit_set(tmp_path: Path) -> None:
    visible = checked = 0
    for seed in range(1, 80):  # kits whose SCK line glitches, until one is seen grams off
        tw = gen.make_tower(seed)
        if tw.load_rate_nominal != 80 or tw.glitch_shift_per_min < 0.5:
            continue
        rec = Rec(seed, "single", 90.0, tmp_path / str(seed))
        d = rec.d
        for g in (g for g in rec.truth["hx711_glitches"] if g["kind"] == "shifted"):
            ch = g["ch"]
            i = int(np.argmin(np.abs(d.load_t - g["t"])))
            assert abs(d.load_t[i] - g["t"]) < 1e-4 and d.load_valid[i] >> ch & 1  # "fresh"
            fresh = np.nonzero(d.fresh(ch))[0]
            j = int(np.searchsorted(fresh, i))
            normal = int(np.median(d.load_values[fresh[j + 3:j + 13], ch]))
            got = int(d.load_values[i, ch])
            sigma = 6 * tw.noise_g[ch] * abs(tw.cpg[ch]) + 50
            # the reading is the true one with its low bits shifted by one place
            assert abs(got - _shift_garbage(normal, g["bit"])) < 4 * sigma, g
            visible += abs(got - normal) / abs(tw.cpg[ch]) > 1.0
            checked += 1
            # the 26th clock selected channel B: the next reading is garbage too, also "fresh"
            nb = next(b for b in rec.truth["hx711_glitches"]
                      if b["kind"] == "channel_b" and b["ch"] == ch and b["t"] > g["t"])
            k = int(np.searchsorted(d.load_t, nb["t"]))
            k += int(np.argmax(d.fresh(ch)[k:]))
            assert abs(int(d.load_values[k, ch]) - normal) > 20 * sigma
            # while the chip settles on a new channel it is not ready: no fresh reading
            assert d.load_t[fresh[j + 1]] - d.load_t[fresh[j]] > 3.0 / tw.load_rate_hello
        if visible:
            break
    assert visible and checked


def test_lifted_levels_read_invalid_and_removals_weigh(game: Rec) -> None:
    tr, d = game.truth, game.d
    assert tr["lifts"] and tr["removals"] and len(tr["closes"]) >= 1
    # back after the spring contacts chatter and the HX711s settle (four conversions)
    check_lifted_levels_invalid(d, tr, after_lift_s=0.002, fresh_least=0.9,
                                back_within_s=1.5, back_least=0.8)
    status = [f.msg for f in d.frames if isinstance(f.msg, Status)]
    assert status[-1].load_timeouts > status[0].load_timeouts  # the firmware waited for them
    for r in tr["removals"]:
        if r["fell_out"]:
            continue
        f = r["floor"]
        drop = game.grams(f, r["t_untouch"] + 0.15, r["t_untouch"] + 0.5) \
            - game.grams(f, r["t_touch"] - 0.5, r["t_touch"] - 0.05)
        assert drop == pytest.approx(-r["mass_g"], abs=0.06)


def test_lifted_discs_float_with_hum(game: Rec) -> None:
    d, tw = game.d, game.tower
    lift, close = game.truth["lifts"][0], game.truth["closes"][0]
    w = d.piezo_window(lift["t"] + 0.3, close["t"] - 0.3)
    for ch in range(lift["exposed"] + 1, 8):
        spec = np.abs(np.fft.rfft(w[:, ch] - w[:, ch].mean()))
        freqs = np.fft.rfftfreq(len(w), 1 / 2000)
        near = np.abs(freqs - tw.mains_hz) < 2
        assert spec[near].max() > 5 * np.median(spec[(freqs > 20) & (freqs < 400)])


def test_game_follows_the_rules(game: Rec) -> None:
    g = game.truth["game"]["games"][0]
    log, players = g["log"], g["players"]
    throws = [e for e in log if e["do"] == "throw"]
    assert [e["color"] for e in throws[:2]] == ["red", "red"]
    prologue = [e["color"] for e in throws[2:2 + 2 * len(players)]]
    assert prologue == [p for p in players for _ in range(2)]
    first_action = next(i for i, e in enumerate(log) if e["do"] != "throw")
    assert first_action == 2 + 2 * len(players) and log[first_action]["do"] == "inspect"
    assert len(game.truth["lifts"]) == sum(e["do"] != "throw" for e in log)
    # a thrown-back cube is the same cube: it weighs what it weighed when taken out
    out = {round(r["mass_g"], 5) for r in game.truth["removals"] if r["cubes"] == 1}
    back = [x for x in game.truth["landings"]
            if not x["knocked"] and round(x["mass_g"], 5) in out]
    assert back


def test_hard_throws_clip_at_the_rails() -> None:
    near_rail = 0
    for seed in range(1, 7):
        tw = gen.make_tower(seed)
        sc = gen.build_scene(tw, "rapid", 30.0, seed)
        rng = np.random.default_rng(0)
        codes = gen.render_piezo(tw, sc, 1.0, rng, gen.render_table(sc, rng)).astype(int)
        # the op-amp's output swing ends short of the supply; the S/H ghost blurs it a little
        assert codes.max() <= tw.clip_hi + 1 and codes.min() >= tw.clip_lo - 1
        near_rail += int(np.sum((codes > tw.clip_hi - 12) | (codes < tw.clip_lo + 12)))
    assert near_rail > 20


def test_table_knock_shakes_every_level_without_a_step(noisy: Rec) -> None:
    tr = noisy.truth
    assert tr["knocks"]
    bias = np.median(noisy.d.piezo_window(0.5, 3.5), axis=0)
    for k in tr["knocks"]:
        w = np.abs(noisy.d.piezo_window(k["t"], k["t"] + 0.08) - bias)
        assert np.all(w.max(axis=0) > 4)
        if any(abs(x["t"] - k["t"]) < 3 or abs(x["t_first_impact"] - k["t"]) < 3
               for x in tr["landings"]) or any(abs(r["t"] - k["t"]) < 4 for r in tr["room"]):
            continue
        for ch in range(8):
            assert abs(noisy.grams(ch, k["t"] + 1.3, k["t"] + 1.9)
                       - noisy.grams(ch, k["t"] - 0.7, k["t"] - 0.1)) < 0.06


def test_mains_hum_is_in_every_channel(slow: Rec) -> None:
    single = slow
    w = single.d.piezo_window(0.2, 3.9)
    freqs = np.fft.rfftfreq(len(w), 1 / 2000)
    for ch in range(8):
        spec = np.abs(np.fft.rfft(w[:, ch] - w[:, ch].mean()))
        peak = freqs[np.argmax(spec * (freqs > 20))]
        assert abs(peak - single.tower.mains_hz) < 1.0 or \
            abs(peak - 3 * single.tower.mains_hz) < 1.0


def test_acoustic_has_no_load_stream(tmp_path: Path) -> None:
    seen = set()
    for seed in (1, 2):
        rec = Rec(seed, "acoustic", 20.0, tmp_path / str(seed))
        assert not any(isinstance(f.msg, Load) for f in rec.d.frames)
        assert len(rec.d.load_t) == 0 and len(rec.d.piezo_t) > 39950
        seen.add(rec.d.hello.n_load)
        check_truth(rec.truth, score, scenario="acoustic", seed=seed, duration_s=20.0)
    assert seen == {0, 8}


def test_long_session_clock_wraps(tmp_path: Path) -> None:
    rec = Rec(1, "long", 60.0, tmp_path)
    raw = np.array([f.msg.t_us for f in rec.d.frames if isinstance(f.msg, Piezo | Load)],
                   np.int64)
    assert np.any(np.diff(raw) < 0) and rec.truth["clock_wraps"]
    assert np.all(np.diff(rec.d.piezo_t) > 0)
    check_truth(rec.truth, score, scenario="long", seed=1, duration_s=60.0)
    check_scored_perfect(rec.truth, score)
    check_seqs_consecutive(rec.d.frames)


def test_damaged_equals_its_clean_twin_outside_the_damage(tmp_path: Path) -> None:
    kinds: set[str] = set()
    for seed in (1, 2):
        kinds |= check_damaged_twin(gen, score, seed, 50.0, tmp_path)
        dc = decode_stream((tmp_path / f"damagedclean_t{seed}.bin").read_bytes())
        assert dc.stats.crc_errors + dc.stats.framing_errors == 0
    assert {"bitflip", "lost", "reboot", "midframe", "noise"} <= kinds


def test_same_seed_same_bytes(tmp_path: Path) -> None:
    check_same_seed_same_bytes(gen, tmp_path)


def test_command_line(tmp_path: Path) -> None:
    check_command_line(SCRIPT, score, tmp_path / "set", 12.0)
    check_extra_families_command_line(SCRIPT, tmp_path / "extra")
    bad = subprocess.run([sys.executable, str(SCRIPT), "--out", str(tmp_path / "o"),
                          "--scenarios", "party"], capture_output=True, text=True, check=False,
                         timeout=60)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "o").exists()
