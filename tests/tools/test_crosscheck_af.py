"""Fast checks of the blind cross-check model AF (tools/crosscheck_af): an acoustics
engineer's tower, with modal plates, a high-passed and clipping piezo front end, and HX711
cells at 80 or 10 SPS."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hostapp.protocol import Hello, Load, Piezo, Status
from tests.scripts import (
    TOOLS,
    SimulatedRecording,
    busy_spans,
    check_command_line,
    check_landings_weighed,
    check_own_framing,
    check_row_encoders,
    check_same_seed_same_bytes,
    check_scored_perfect,
    check_truth,
    check_unknown_scenario_refused,
    check_wire_encoder,
    check_workers_same_bytes,
    decode_clean,
    decode_stream,
    load_script,
    quiet_except,
    recordings_by_scenario,
    table_knock_heard,
)

SCRIPT = TOOLS / "crosscheck_af" / "make_recordings_af.py"
AF = load_script(SCRIPT, "make_recordings_af")
SCORE = load_script(TOOLS / "crosscheck" / "score.py", "crosscheck_score_for_af")
SEED = 2  # 80 SPS, mixed cells
GAME_SEED = 4  # 80 SPS, a game that reaches Act II
DURATIONS = {"single": 40.0, "rapid": 30.0, "noisy": 40.0, "game": 90.0}

Rec = SimulatedRecording


@pytest.fixture(scope="module")
def recs() -> dict[str, Rec]:
    return recordings_by_scenario(AF, SEED, GAME_SEED, DURATIONS)


def _quiet(truth: dict[str, Any], t0: float, t1: float, own: tuple[float, float]) -> bool:
    """Whether nothing but ``own`` moves the tower in [t0, t1] (pauses count as moving)."""
    busy = busy_spans(truth, knock_keys=("knocks",))
    busy += [(x["t"] - 0.2, x["t_end"] + 0.2) for x in truth["pauses"]]
    return quiet_except(busy, t0, t1, own)


def _grams(r: Rec, ch: int, t0: float, t1: float) -> float:
    return r.grams(ch, t0, t1, least=3)


# -- wire -------------------------------------------------------------------------------


def test_wire_encoder_follows_the_contract() -> None:
    check_wire_encoder(AF)
    check_row_encoders(AF)
    raw, _ = AF.render(AF.simulate(5, "single", 12.0))
    check_own_framing(AF, raw)


def test_streams_decode_clean(recs: dict[str, Rec]) -> None:
    for sc, r in recs.items():
        frames = decode_clean(r.raw, sc)
        h = frames[0].msg
        assert isinstance(h, Hello)
        assert (h.proto, h.n_piezo, h.n_load, h.adc_bits) == (1, 8, 8, 10)
        assert (h.piezo_rate_hz, h.load_rate_hz) == (2000, r.tw.load_rate_hz)
        pz = [f.msg for f in frames if isinstance(f.msg, Piezo)]
        per = r.tw.sets_per_msg
        assert {len(m.samples) for m in pz} == {per}
        assert sum(len(m.samples) for m in pz) == int(DURATIONS[sc] * 2000) // per * per
        assert np.all(np.diff([m.t_us for m in pz]) == 500 * per)
        loads = [f.msg for f in frames if isinstance(f.msg, Load)]
        gaps = np.diff([m.t_us for m in loads]) / 1e6
        # The firmware reads all eight together, when the slowest chip is ready.
        assert 1.0 <= np.median(gaps) * h.load_rate_hz <= 1.06
        status = [f.msg for f in frames if isinstance(f.msg, Status)]
        assert abs(len(status) - DURATIONS[sc]) <= 2
        assert (status[-1].load_timeouts > 0) == bool(r.truth["lifts"])
        assert r.d.piezo.max() <= 1023


def test_acoustic_has_no_load_messages(tmp_path: Path) -> None:
    """Odd towers have no cells in HELLO, even ones eight that never answer."""
    for seed, n_load in ((1, 0), (2, 8)):
        bin_path, truth_path = AF.make_recording(seed, "acoustic", 12.0, tmp_path)
        frames = decode_clean(bin_path.read_bytes())
        h = frames[0].msg
        assert isinstance(h, Hello) and h.n_load == n_load
        assert h.load_rate_hz == (AF.make_tower(seed).load_rate_hz if n_load else 0)
        assert not any(isinstance(f.msg, Load) for f in frames)
        status = [f.msg for f in frames if isinstance(f.msg, Status)]
        assert {s.load_timeouts for s in status} == {n_load}
        truth = SCORE.read_truth(truth_path)
        assert truth["scenario"] == "acoustic" and truth["cells"] == "none" and truth["landings"]
        check_scored_perfect(truth, SCORE)


# -- determinism, command line, truth ---------------------------------------------------


def test_same_seed_same_bytes(tmp_path: Path) -> None:
    check_same_seed_same_bytes(AF, tmp_path)


def test_towers_differ() -> None:
    towers = [AF.make_tower(s) for s in range(1, 17)]
    assert len({round(t.plate_m, 6) for t in towers}) == 16
    assert len({round(float(t.mode_f[0, 0]), 3) for t in towers}) == 16
    assert {t.load_rate_hz for t in towers} == {80, 10}
    assert {t.cells for t in towers} == {"matched", "mixed"}
    assert {t.pause_tower for t in towers} == {True, False}
    assert len({t.sets_per_msg for t in towers}) > 1
    assert len({t.device_id for t in towers}) == 16
    a, b = AF.make_tower(3), AF.make_tower(3)
    assert a.figures() == b.figures()


def test_cli_workers_do_not_change_bytes(tmp_path: Path) -> None:
    check_workers_same_bytes(SCRIPT, SCORE, tmp_path, 6, 12, in_process=AF.main)


def test_cli_writes_what_the_scorer_reads(tmp_path: Path) -> None:
    check_command_line(SCRIPT, SCORE, tmp_path / "o", 12)


def test_cli_unknown_scenario(tmp_path: Path) -> None:
    check_unknown_scenario_refused(SCRIPT, tmp_path / "o")


def test_truth_is_what_the_scorer_reads(recs: dict[str, Rec]) -> None:
    for sc, r in recs.items():
        check_truth(r.truth, SCORE, scenario=sc, seed=r.seed, duration_s=DURATIONS[sc])
        check_scored_perfect(r.truth, SCORE)
        assert r.truth["model"] == "AF" and r.truth["cells"] == r.tw.cells
        for x in r.truth["landings"]:
            assert x["t_release"] <= x["t_first_impact"] < x["t"]
            assert ("knocked_from" in x) == x["knocked"]
            assert x["impacts"][0][0] == pytest.approx(x["t_first_impact"]) or x["knocked"]
            assert x["impacts"][-1][1] == x["floor"]
    game = recs["game"].truth
    assert game["lifts"] and len(game["lifts"]) == len(game["closes"]) and game["removals"]
    assert any(x["kind"] == "throwback" for x in game["landings"])
    assert recs["noisy"].truth["knocks"] and recs["noisy"].truth["talk"]
    assert recs["noisy"].truth["hum_factor"] > 1


# -- what the sensors say ---------------------------------------------------------------


def test_lifted_levels_read_invalid(recs: dict[str, Rec]) -> None:
    """Levels above the exposed one: invalid and zero from the lift to the close; back
    within the contacts' bounce and the HX711's four settling periods."""
    r = recs["game"]
    d, period = r.d, 1.0 / r.tw.load_rate_hz
    for lift, close in zip(r.truth["lifts"], r.truth["closes"], strict=True):
        k = lift["exposed"]
        assert close["exposed"] == k and lift["t"] < close["t"]
        during = (d.load_t > lift["t"] + 1.6 * period) & (d.load_t < close["t"])
        assert during.sum() > 10
        for ch in range(8):
            fresh = d.fresh(ch)[during]
            if ch > k:
                assert not fresh.any() and np.all(d.load_values[during, ch] == 0)
            else:
                assert fresh.all()
        back = d.load_t > close["t"] + 0.15 + 5 * period
        back &= d.load_t < close["t"] + 1.0
        assert back.sum() > 3 and np.all(d.load_valid[back] == 0xFF)
        # The discs of the lifted levels hear only the bias network while they are away.
        quiet = d.piezo_window(lift["t"] + 0.1, close["t"] - 0.05)
        if k < 7:
            assert np.ptp(quiet[:, k + 1:], axis=0).max() < 30


def test_landings_weigh_their_cube(recs: dict[str, Rec]) -> None:
    check_landings_weighed(recs, _quiet, DURATIONS)


def test_removals_take_the_cubes_off_the_open_level(recs: dict[str, Rec]) -> None:
    r = recs["game"]
    checked = 0
    for x in r.truth["removals"]:
        lifts = [lf for lf in r.truth["lifts"] if lf["t"] < x["t"]]
        assert max(lifts, key=lambda lf: lf["t"])["exposed"] == x["floor"]
        others = [y["t"] for y in r.truth["removals"] if y is not x]
        if any(-2.0 < t - x["t"] < 1.5 for t in others):
            continue  # another grab too close for clean windows
        before = _grams(r, x["floor"], x["t_touch"] - 0.45, x["t_touch"] - 0.05)
        after = _grams(r, x["floor"], x["t"] + 0.3, x["t"] + 0.8)
        assert before - after == pytest.approx(x["mass_g"], abs=0.04 + 0.03 * x["mass_g"])
        checked += 1
    assert checked >= 1


def test_a_strike_is_heard_loudest_on_its_level(recs: dict[str, Rec]) -> None:
    """Isolated firm strikes: the struck level's disc leads, its neighbours follow."""
    own = near = total = 0
    for sc in ("single", "rapid"):
        r = recs[sc]
        strikes = r.sc.strikes
        base = np.median(r.d.piezo_window(1.0, 4.0), axis=0)
        for st in strikes:
            if st.level < 0 or st.j < 0.3e-3:
                continue
            if any(o is not st and -0.02 < st.t - o.t < 0.15 for o in strikes):
                continue
            dev = np.abs(r.d.piezo_window(st.t, st.t + 0.02) - base).max(axis=0)
            loudest = int(np.argmax(dev))
            total += 1
            own += loudest == st.level
            near += abs(loudest - st.level) <= 1
    assert total >= 15
    assert own / total >= 0.75 and near / total >= 0.95


def test_crosstalk_dies_with_distance_and_frequency() -> None:
    tw = AF.make_tower(5)
    st = AF.Strike(1.0, 4, 0.02, 0.02, 1e-3, 1e-3)
    f1, _, a1, _ = AF._strike_components(tw, st, 5)  # one level away
    f3, _, a3, _ = AF._strike_components(tw, st, 7)  # three levels away
    m = AF.N_MODES  # the struck plate's own modes come first
    ratio = np.abs(a3[:m]) / np.abs(a1[:m])
    assert np.all(ratio < 0.2)
    order = np.argsort(f1[:m])
    assert ratio[order[-1]] < ratio[order[0]]  # the highest mode has lost the most


def test_a_hard_hit_clips_and_the_bias_recovers() -> None:
    tw = AF.make_tower(7)
    sc = AF.Scene(tw, 12.0, np.random.default_rng(1), "single")
    sc.strike(6.0, 3, tw.disc_xy[3], 4e-3, 0.8e-3)
    d = decode_stream(AF.render(sc)[0])
    w = d.piezo_window(6.0, 6.03)[:, 3]
    assert w.max() == 1023 and w.min() == 0
    bias = np.median(d.piezo_window(1.0, 5.0)[:, 3])
    assert abs(np.median(d.piezo_window(6.6, 7.5)[:, 3]) - bias) <= 1.0


def test_a_soft_long_contact_undershoots_through_the_high_pass() -> None:
    """The plate's bend under a long contact, high-passed by the bias network: a pulse up,
    then the disc sits below its bias and creeps back with the network's time constant."""
    tw = AF.make_tower(7)
    tau_hp = 1 / (2 * np.pi * tw.f_hp)
    sc = AF.Scene(tw, 12.0, np.random.default_rng(1), "single")
    sc.strike(6.0, 3, tw.disc_xy[3], 1e-3, 3e-3)
    d = decode_stream(AF.render(sc)[0])
    bias = np.median(d.piezo_window(1.0, 5.0)[:, 3])
    assert d.piezo_window(6.0, 6.003)[:, 3].max() > bias + 100
    assert np.mean(d.piezo_window(6.01, 6.01 + tau_hp)[:, 3]) < bias - 3
    assert abs(np.mean(d.piezo_window(6.01 + 6 * tau_hp, 7.0)[:, 3]) - bias) < 1.0


@pytest.mark.parametrize("seed", [2, 3])  # 80 SPS, 10 SPS
def test_a_landing_spikes_the_cell_then_settles_in_four_readings(seed: int) -> None:
    tw = AF.make_tower(seed)
    sc = AF.Scene(tw, 12.0, np.random.default_rng(1), "single")
    sc.impulses.append((7.0, 2, 1.5e-3))  # a cube strikes, bounces and comes to rest
    sc.weights.append((7.1, 2, 0.5))
    raw, _ = AF.render(sc)
    d = decode_stream(raw)
    period = 1.0 / tw.load_rate_hz
    sel = d.fresh(2)
    g = (d.load_values[sel, 2] - tw.offset[2]) / tw.cpg[2]
    t = d.load_t[sel]
    before = np.median(g[(t > 5.0) & (t < 6.9)])
    after = np.median(g[(t > 7.1 + 5 * period) & (t < 11.5)])
    assert after - before == pytest.approx(0.5, abs=0.02)
    spike = g[(t > 7.0) & (t < 7.0 + 5 * period)].max() - before
    assert spike > 0.5 + (0.3 if seed == 2 else 0.05)  # the impulse shows, less at 10 SPS
    settling = (t > 7.1) & (g - before > 0.05) & (g - before < 0.45)
    assert settling.sum() <= 4


def test_table_knock_shakes_every_level_but_weighs_nothing() -> None:
    d, tw = table_knock_heard(AF, 2, heard_over_s=0.1, louder=5)
    assert tw.load_rate_hz == 80
    moved = 0
    for ch in range(8):
        shake = d.fresh(ch) & (d.load_t > 6.0) & (d.load_t < 6.3)
        moved += np.ptp(d.load_values[shake, ch]) > 3 * tw.load_noise_g[ch] * tw.cpg[ch]
    assert moved >= 4


def test_where_cubes_come_to_rest() -> None:
    """Over many towers: few reach the ground, the top catches most, knock-downs are few,
    and some towers hold a cube a moment on a hole's edge before it slides on."""
    floors: list[int] = []
    n_knocked = n_pauses = 0
    for seed in range(1, 13):
        sc = AF.simulate(seed, "rapid", 120.0)
        floors += [x["floor"] for x in sc.landings if not x["knocked"]]
        n_knocked += len(sc.knockdowns)
        n_pauses += len(sc.pauses)
        for p in sc.pauses:
            assert sc.tw.pause_tower and 0.1 <= p["t_end"] - p["t"] <= 0.6
    share = np.bincount(floors, minlength=8) / len(floors)
    assert share[0] < 0.1 and share[7] == share.max()
    assert share[4:].sum() > 0.6
    assert 0.003 < n_knocked / len(floors) < 0.06
    assert n_pauses >= 3


def test_a_knocked_cube_moves_its_weight_down() -> None:
    for seed in range(1, 40):
        sc = AF.simulate(seed, "rapid", 120.0)
        if sc.knockdowns:
            break
    k = sc.knockdowns[0]
    x = next(y for y in sc.landings if y["fid"] == k["fid"])
    assert x["knocked"] and x["floor"] == k["floor_to"] < k["floor_from"] == x["knocked_from"]
    assert x["t_first_impact"] == k["t"] < x["t"]
    moved = [w for w in sc.weights if w[0] == k["t"] and w[1] == k["floor_from"]]
    assert len(moved) == 1 and moved[0][2] == pytest.approx(-x["mass_g"])
    thrower = next(y for y in sc.landings if y["fid"] == k["by_fid"])
    assert thrower["caused_knockdown"] and thrower["t_first_impact"] <= k["t"] <= thrower["t"]
    # Every level weighs, in the end, the cubes that lie on it.
    total = np.zeros(8)
    for _t, lv, g in sc.weights:
        total[lv] += g
    on = np.array([sum(c.mass_g for c in sc.on_level(lv, 1e9)) for lv in range(8)])
    np.testing.assert_allclose(total, on, atol=1e-9)


def test_a_game_follows_the_rules(recs: dict[str, Rec]) -> None:
    """Prologue first (two victims, two clues each), then turns clockwise; Act II starts
    after the finder of the second victim; every clue is in a supply, on the sheet or thrown."""
    g = recs["game"].truth
    game = g["game"]
    players = game["players"]
    thrown = sorted((x for x in g["landings"] if not x["knocked"]), key=lambda x: x["t_release"])
    n_pro = 2 + 2 * len(players)
    assert [x["kind"] for x in thrown[:n_pro]] == ["victim"] * 2 + ["prologue"] * (n_pro - 2)
    assert [x["colour"] for x in thrown[2:n_pro]] == [p for p in players for _ in range(2)]
    assert all(x["t"] < g["lifts"][0]["t"] for x in thrown[:n_pro])
    assert all(x["kind"] in ("throwback", "penalty") for x in thrown[n_pro:])
    turns = game["turns"]
    assert game["phase"] == "act2" and [lf["exposed"] for lf in g["lifts"]] == \
        [t["floor"] for t in turns]
    # Clockwise; Act II opens with the player after the finder of the second victim,
    # who is the player after the investigator of that turn.
    who = [players.index(t["by"]) for t in turns]
    assert who[0] == 0
    assert all(b == (a + 1) % len(players) for a, b in zip(who, who[1:], strict=False))
    for p in players:
        from_supply = sum(x["colour"] == p and x["kind"] in ("prologue", "penalty")
                          for x in g["landings"])
        assert game["supply"][p] + sum(game["sheet"][p]) + from_supply == 20
    taken_back = sum(r["cubes"] - r["colours"].count("red") for r in g["removals"])
    thrown_back = sum(x["kind"] == "throwback" for x in g["landings"])
    assert taken_back - 6 <= thrown_back <= taken_back + len(g["spills"])
