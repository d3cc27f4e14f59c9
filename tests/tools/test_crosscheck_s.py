"""Cross-check model S (tools/crosscheck_s): the cardboard tower as one mechanical body, played by
a family. Its bytes follow contracts.md (read by its own decoder and by ours), its truth is what
the scorer reads and what the physics did, and each family has what it promises."""

from __future__ import annotations

import dataclasses
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
    crc_valid_messages,
    decode_stream,
    load_script,
)

SCRIPT = TOOLS / "crosscheck_s" / "make_recordings_s.py"
gen = load_script(SCRIPT, "crosscheck_s_under_test")
score = load_script(TOOLS / "crosscheck" / "score.py", "crosscheck_score_for_s")


class Rec(GeneratedRecording):
    """One recording of model S, decoded by the project's decoder, with truth and tower."""

    def __init__(self, seed: int, scenario: str, duration: float, out: Path) -> None:
        super().__init__(gen, score, seed, scenario, duration, out)

    def settle_s(self) -> float:
        return 2.0 / float(self.tower.load_rate_hello) + 0.15


def _first_seed(pred: Any, seeds: range = range(1, 120)) -> int:
    return next(s for s in seeds if pred(gen.make_tower(s)))


@pytest.fixture(scope="module")
def single(tmp_path_factory: pytest.TempPathFactory) -> Rec:
    seed = _first_seed(lambda tw: tw.load_rate_nominal == 80 and tw.cells == "mixed")
    return Rec(seed, "single", 60.0, tmp_path_factory.mktemp("s_single"))


@pytest.fixture(scope="module")
def game(tmp_path_factory: pytest.TempPathFactory) -> Rec:
    return Rec(_first_seed(lambda tw: tw.load_rate_nominal == 80), "game", 100.0,
               tmp_path_factory.mktemp("s_game"))


@pytest.fixture(scope="module")
def noisy(tmp_path_factory: pytest.TempPathFactory) -> Rec:
    return Rec(3, "noisy", 45.0, tmp_path_factory.mktemp("s_noisy"))


@pytest.fixture(scope="module")
def slow(tmp_path_factory: pytest.TempPathFactory) -> Rec:
    seed = _first_seed(lambda tw: tw.load_rate_nominal == 10)
    return Rec(seed, "rapid", 40.0, tmp_path_factory.mktemp("s_slow"))


def test_wire_encoder_follows_contract() -> None:
    check_wire_encoder(gen)
    check_row_encoders(gen)
    rng = np.random.default_rng(5)
    for n in (0, 1, 17, 200, 254, 300, 600):  # the generator's own decoder undoes its encoder
        data = rng.integers(0, 4, n).astype(np.uint8).tobytes()
        assert gen.cobs_decode_own(gen.cobs_encode(data)) == data
        msg = bytes([2, 1, 0]) + data[:240]
        assert gen.decode_own(b"\x13\x00" + gen.frame(msg) + gen.frame(msg)[:-3]) == [msg]


def test_own_decoder_and_ours_read_the_same_messages(single: Rec, game: Rec) -> None:
    for rec in (single, game):
        data = rec.bin_path.read_bytes()
        own = gen.decode_own(data)
        assert own == crc_valid_messages(data)
        assert len(own) == len(rec.d.frames)
        # type | seq, as the project's decoder saw them
        types = {Piezo: 2, Load: 3, Status: 4}
        assert [types.get(type(f.msg), m[0]) for f, m in zip(rec.d.frames, own, strict=True)] \
            == [m[0] for m in own]
        assert [int.from_bytes(m[1:3], "little") for m in own] == [f.seq for f in rec.d.frames]


def test_bytes_decode_per_contract(single: Rec, game: Rec, slow: Rec) -> None:
    for rec in (single, game, slow):
        d, tw = rec.d, rec.tower
        st = d.stats
        assert (st.crc_errors, st.unknown_types, st.lost_messages) == (0, 0, 0)
        assert st.framing_errors <= 1  # a recording may begin mid-frame
        check_seqs_consecutive(d.frames)
        h = d.hello
        assert (h.proto, h.n_piezo, h.n_load, h.adc_bits) == (1, 8, 8, 10)
        assert h.piezo_rate_hz == tw.piezo_rate and h.load_rate_hz == tw.load_rate_hello
        assert d.frames[0].msg == h
        piezo = [f.msg for f in d.frames if isinstance(f.msg, Piezo)]
        assert all(1 <= len(m.samples) <= 14 for m in piezo)
        raw = np.array([m.t_us for m in piezo], np.int64)
        n_sets = sum(len(m.samples) for m in piezo)
        span = ((raw[-1] - raw[0]) % 2**32) / 1e6 + len(piezo[-1].samples) / tw.piezo_rate
        assert n_sets / span == pytest.approx(tw.piezo_rate, rel=2e-3)
        assert np.all(raw % 4 == 0) and d.piezo_t[0] == 0.0
        lrate = (len(d.load_t) - 1) / (d.load_t[-1] - d.load_t[0])
        assert lrate == pytest.approx(h.load_rate_hz, abs=0.6)  # HELLO rounds to whole Hz
        assert np.all(np.diff(d.load_t) > 0) and d.load_t[0] > 0
        quiet = d.piezo_window(0.3, 4.0)
        assert np.all(np.abs(np.median(quiet, axis=0) - 512) < 16)
        assert quiet.std(axis=0).max() < 8
        assert d.piezo.max() <= 1023 and np.abs(d.load_values).max() < 2**23
        assert np.mean(d.load_valid[d.load_t < 4.0] == 0xFF) > 0.8
        status = [f.msg for f in d.frames if isinstance(f.msg, Status)]
        assert len(status) >= rec.duration - 2
        assert np.all(np.diff([s.uptime_ms for s in status]) == 1000)


def test_truth_is_what_the_scorer_reads(single: Rec, game: Rec, noisy: Rec, slow: Rec) -> None:
    for rec in (single, game, noisy, slow):
        check_truth(rec.truth, score, scenario=rec.scenario, seed=rec.seed,
                    duration_s=rec.duration)
        check_scored_perfect(rec.truth, score)
        assert rec.truth["tower"]["seed"] == rec.seed


def test_landings_sorted_and_cubes_conserved(single: Rec, game: Rec, noisy: Rec,
                                            slow: Rec) -> None:
    for rec in (single, game, noisy, slow):
        tr = rec.truth
        ts = [x["t"] for x in tr["landings"]]
        assert ts == sorted(ts)
        assert all(0 <= x["floor"] <= 7 for x in tr["landings"])
        thrown = sum(not x["knocked"] for x in tr["landings"])
        removed = sum(r["cubes"] for r in tr["removals"])
        resting = sum(len(v) for v in tr["final_tower"].values())
        assert thrown == tr["cubes_thrown"] and thrown == resting + removed
        # where each cube last came to rest, unless taken out afterwards
        last: dict[int, tuple[float, int]] = {}
        for x in tr["landings"]:
            last[x["cube"]] = (x["t"], x["floor"])
        for r in tr["removals"]:
            for c in r["cube_ids"]:
                if last.get(c, (np.inf, 0))[0] < r["t"]:
                    del last[c]
        assert {c: f for c, (_, f) in last.items()} == {
            c: int(f) for f, ids in tr["final_tower"].items() for c in ids}


def test_floors_and_knockdowns_are_physical() -> None:
    floors = np.zeros(8)
    throws = knocked = 0
    shares = []
    for seed in range(1, 9):
        sc = gen.build_scene(gen.make_tower(seed), "single", 120.0, seed)
        by = [k["by"] for k in sc.knockdowns]
        assert len(by) == len(set(by))  # one falling cube knocks at most one resting cube
        for x in sc.landings:
            shares.append(x["share"])
            if x["knocked"]:
                knocked += 1
                assert x["floor"] < x["from_floor"]
            else:
                floors[x["floor"]] += 1
                throws += 1
        for k in sc.knockdowns:
            assert sc.landings[k["by"]]["caused_knockdown"]
            assert sc.landings[k["landing"]]["knocked"]
            assert sc.landings[k["landing"]]["floor"] == k["to_floor"] < k["from_floor"]
    assert floors[0] < floors[4:].mean() and floors[0] < 0.15 * throws
    assert 0 < knocked < 0.2 * throws
    # the plate rests partly on the walls: the cell sees 40-100 % of a cube
    assert min(shares) >= 0.4 and max(shares) <= 1.0
    assert np.percentile(shares, 10) < 0.8 and np.percentile(shares, 90) > 0.9


def _isolated(rec: Rec) -> list[dict[str, Any]]:
    tr = rec.truth
    events = [x["t"] for x in tr["removals"] + tr["lifts"] + tr["closes"] + tr["knocks"]
              + tr["nudges"]]
    busy = [(r["t"], r.get("t_end", r["t"]) + 1.0) for r in tr["room"]
            if r["kind"] in ("steady", "chair")]
    out = []
    for x in tr["landings"]:
        lo, hi = x["t_first_impact"] - 1.5, x["t"] + 2.0
        if any(lo < y["t_first_impact"] < hi or lo < y["t"] < hi
               for y in tr["landings"] if y is not x) \
                or any(lo - 2 < t < hi + 2 for t in events) \
                or any(a < hi and b > lo for a, b in busy) \
                or any(lo - 1 < b and a < hi + 1 for a, b, _ in tr["open_spans"]) or x["paused"]:
            continue
        out.append(x)
    return out


def test_each_landing_raises_its_level_by_the_share_the_cell_sees(single: Rec, game: Rec,
                                                                  slow: Rec) -> None:
    checked = 0
    for rec in (single, game, slow):
        for x in _isolated(rec):
            f = x["floor"]
            before = (x["t_first_impact"] - 1.2, x["t_first_impact"] - 0.1)
            after = (x["t"] + rec.settle_s(), x["t"] + 1.8)
            step = rec.grams(f, *after) - rec.grams(f, *before)
            # creep adds up to a few % within the window
            assert step == pytest.approx(x["seen_g"], abs=0.03 + 0.1 * x["seen_g"]), x
            assert 0.4 * x["mass_g"] - 1e-9 <= x["seen_g"] <= x["mass_g"] + 1e-9
            for k in range(8):
                if k != f:
                    assert abs(rec.grams(k, *after) - rec.grams(k, *before)) < 0.05, (k, x)
            checked += 1
    assert checked >= 6


def test_cardboard_creeps_after_a_load_change() -> None:
    seed = _first_seed(lambda tw: tw.creep_fast.max() > 0.05)
    tw = gen.make_tower(seed)
    k = int(np.argmax(tw.creep_fast))
    sc = gen.Scene(tw, "single", 40.0)
    sc.load_changes.append((10.0, k, 1.0))
    g = gen.render_load_grams(tw, sc, np.random.default_rng(0))

    def at(t: float) -> float:
        return float(g[k, int(t * gen.FS_LOAD)])

    assert at(10.05) == pytest.approx(1.0, abs=0.02)
    late = at(10.0 + 8 * tw.creep_tau_fast[k])
    assert late - 1.0 == pytest.approx(tw.creep_fast[k], abs=0.01)
    assert at(10.0 + tw.creep_tau_fast[k]) - 1.0 == pytest.approx(
        tw.creep_fast[k] * (1 - np.exp(-1)), abs=0.01)


def test_crosstalk_is_strong_and_dull() -> None:
    for seed in (1, 2, 3):
        tw = gen.make_tower(seed)
        fs = tw.piezo_rate
        for j in range(1, 7):
            own = tw.kern_hard[j, j] / tw.disc_sens[j]
            for i in (j - 1, j + 1):
                xt = tw.kern_hard[j, i] / tw.disc_sens[i]
                ratio = np.abs(xt).max() / np.abs(own).max()
                assert 0.1 < ratio < 0.9  # -1 to -20 dB through one glued box
                # the stack passes the low frequencies: crosstalk is duller than the strike
                freqs = np.fft.rfftfreq(len(own), 1 / fs)

                def high(x: np.ndarray, freqs: np.ndarray = freqs) -> float:
                    s = np.abs(np.fft.rfft(x)) ** 2
                    return float(s[freqs > 400].sum() / s.sum())

                assert high(xt) < 0.5 * high(own)


def test_a_loose_disc_is_weak_and_rattles() -> None:
    seed = _first_seed(lambda tw: tw.loose_level >= 0)
    tw = gen.make_tower(seed)
    lo = tw.loose_level
    others = np.median(np.delete(tw.disc_sens, lo))
    assert tw.disc_sens[lo] < 0.6 * others
    sc = gen.Scene(tw, "single", 3.0)
    sc.impacts.append((1.0, lo, 3 * gen.J_REF, 1.0))
    tight = dataclasses.replace(tw, loose_level=-1)
    a = gen.render_piezo(tw, sc, np.random.default_rng(1)).astype(float)[:, lo]
    b = gen.render_piezo(tight, sc, np.random.default_rng(1)).astype(float)[:, lo]
    n0 = tw.piezo_rate
    diff = (a - b)[n0:n0 + tw.piezo_rate // 20]
    spec = np.abs(np.fft.rfft(diff))
    freqs = np.fft.rfftfreq(len(diff), 1 / tw.piezo_rate)
    assert np.abs(diff).max() > 5 and abs(freqs[np.argmax(spec)] - tw.rattle_hz) < 60


def test_lifted_levels_read_invalid_and_removals_weigh_the_share(game: Rec) -> None:
    tr, d = game.truth, game.d
    assert tr["lifts"] and tr["removals"] and len(tr["closes"]) == len(tr["lifts"])
    check_lifted_levels_invalid(d, tr, after_lift_s=0.05, fresh_least=0.9,
                                back_within_s=1.5, back_least=0.6)
    for r in tr["removals"]:
        f = r["floor"]
        drop = game.grams(f, r["t_untouch"] + 0.3, r["t_untouch"] + 0.7) \
            - game.grams(f, r["t_touch"] - 0.5, r["t_touch"] - 0.05)
        assert drop == pytest.approx(-r["seen_g"], abs=0.08 + 0.1 * r["seen_g"])


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
    # a thrown-back cube is the same cube; victims go to the sheet, never back in
    lands = game.truth["landings"]
    back = 0
    for r in game.truth["removals"]:
        for cid, colour in zip(r["cube_ids"], r["colours"], strict=True):
            later = [x for x in lands if x["cube"] == cid and x["t"] > r["t"]]
            if colour == "red":
                assert not later
            else:
                back += bool(later)
    assert back >= 1


def test_rapid_throws_come_in_bursts_some_two_at_once() -> None:
    gaps: list[float] = []
    doubles = 0
    for seed in range(1, 7):
        sc = gen.build_scene(gen.make_tower(seed), "rapid", 120.0, seed)
        t = sorted(x["t_throw"] for x in sc.landings if not x["knocked"])
        gaps += np.diff(t).tolist()
        doubles += sum(x["style"] == "double" for x in sc.landings)
    gaps_a = np.array(gaps)
    assert np.mean((gaps_a >= 0.3) & (gaps_a <= 0.8)) > 0.5
    assert doubles >= 2 and np.sum(gaps_a < 0.05) >= 2


def test_single_throws_are_seconds_apart(single: Rec) -> None:
    t = [x["t_throw"] for x in single.truth["landings"] if not x["knocked"]]
    assert len(t) >= 6 and np.diff(t).min() >= 2.9


def test_noisy_table_knocks_shake_every_level_without_a_step(noisy: Rec) -> None:
    tr = noisy.truth
    assert tr["knocks"] and any(r["kind"] == "talk" for r in tr["room"])
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


def test_acoustic_has_no_load_stream(tmp_path: Path) -> None:
    seen = set()
    for seed in range(1, 5):
        rec = Rec(seed, "acoustic", 20.0, tmp_path / str(seed))
        assert not any(isinstance(f.msg, Load) for f in rec.d.frames)
        assert len(rec.d.piezo_t) >= 20 * rec.tower.piezo_rate - 14
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
    check_seqs_consecutive(rec.d.frames)


def test_some_sessions_start_mid_frame_on_a_running_device(tmp_path: Path) -> None:
    for seed in range(1, 40):
        sc = gen.build_scene(gen.make_tower(seed), "single", 12.0, seed)
        del sc
        bin_path, truth_path = gen.make_recording(seed, "single", 12.0, tmp_path)
        truth = score.read_truth(truth_path)
        if truth["device"]["starts_mid_frame"]:
            d = decode_stream(bin_path.read_bytes())
            assert d.stats.partial_start + d.stats.framing_errors + d.stats.crc_errors >= 1
            assert d.frames[0].msg == d.hello and d.frames[1].msg.cmd_type == 0x81
            assert not truth["device"]["fresh_boot"]
            return
    raise AssertionError("no session starts mid-frame")


def test_damaged_equals_its_clean_twin_outside_the_damage(tmp_path: Path) -> None:
    kinds: set[str] = set()
    for seed in (1, 2):
        kinds |= check_damaged_twin(gen, score, seed, 50.0, tmp_path)
        dc = decode_stream((tmp_path / f"damagedclean_t{seed}.bin").read_bytes())
        assert dc.stats.crc_errors + dc.stats.framing_errors == 0
    assert {"bitflip", "lost", "garbage", "truncated", "midframe"} <= kinds


def test_same_seed_same_bytes(tmp_path: Path) -> None:
    check_same_seed_same_bytes(gen, tmp_path)


def test_command_line(tmp_path: Path) -> None:
    check_command_line(SCRIPT, score, tmp_path / "set", 12.0)
    check_extra_families_command_line(SCRIPT, tmp_path / "extra")
    bad = subprocess.run([sys.executable, str(SCRIPT), "--out", str(tmp_path / "o"),
                          "--scenarios", "single", "party"], capture_output=True, text=True,
                         check=False, timeout=60)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "o").exists()
