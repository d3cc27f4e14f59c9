"""Fast checks of the blind cross-check model AE (tools/crosscheck_ae): a grader in a hurry,
literal to contracts.md and design.md, with ideal (noiseless) channels on some towers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hostapp.protocol import Load, Piezo, Status
from tests.scripts import (
    TOOLS,
    SimulatedRecording,
    busy_spans,
    check_command_line,
    check_landings_weighed,
    check_lifted_levels_invalid,
    check_own_framing,
    check_removals_weighed,
    check_row_encoders,
    check_same_seed_same_bytes,
    check_scored_perfect,
    check_truth,
    check_unknown_scenario_refused,
    check_weights_add_up,
    check_wire_encoder,
    check_workers_same_bytes,
    decode_clean,
    decode_stream,
    load_script,
    quiet_except,
    recordings_by_scenario,
    table_knock_heard,
)

SCRIPT = TOOLS / "crosscheck_ae" / "make_recordings_ae.py"
AE = load_script(SCRIPT, "make_recordings_ae")
SCORE = load_script(TOOLS / "crosscheck" / "score.py", "crosscheck_score_for_ae")
SEED = 2  # an ordinary tower: noise on both kinds of channel
GAME_SEED = 3  # noiseless load channels
DURATIONS = {"single": 40.0, "rapid": 30.0, "noisy": 40.0, "game": 90.0}


Rec = SimulatedRecording


@pytest.fixture(scope="module")
def recs() -> dict[str, Rec]:
    return recordings_by_scenario(AE, SEED, GAME_SEED, DURATIONS)


def _quiet(truth: dict[str, Any], t0: float, t1: float, own: tuple[float, float]) -> bool:
    """Whether nothing but ``own`` moves the tower in [t0, t1] (``busy_spans``)."""
    return quiet_except(busy_spans(truth), t0, t1, own)


# -- wire -------------------------------------------------------------------------------


def test_wire_encoder_follows_the_contract() -> None:
    check_wire_encoder(AE)
    check_row_encoders(AE)
    raw, _ = AE.render(AE.simulate(5, "single", 12.0))
    check_own_framing(AE, raw)


def test_streams_decode_clean(recs: dict[str, Rec]) -> None:
    for sc, r in recs.items():
        frames = decode_clean(r.raw, sc)
        assert not r.truth["damage"]
        h = frames[0].msg
        assert (h.proto, h.n_piezo, h.n_load, h.adc_bits) == (1, 8, 8, 10)
        assert (h.piezo_rate_hz, h.load_rate_hz) == (2000, 80)  # nominal, exactly
        pz = [f.msg for f in frames if isinstance(f.msg, Piezo)]
        assert {len(m.samples) for m in pz} == {AE.SETS_PER_MSG}
        assert sum(len(m.samples) for m in pz) == int(DURATIONS[sc] * AE.FS)
        t_us = np.array([m.t_us for m in pz], np.int64)
        assert np.all(np.diff(t_us) == 500 * AE.SETS_PER_MSG)
        loads = [f.msg for f in frames if isinstance(f.msg, Load)]
        assert np.all(np.diff([m.t_us for m in loads]) == 12_500)
        assert abs(len(loads) - 80 * DURATIONS[sc]) <= 1
        status = [f.msg for f in frames if isinstance(f.msg, Status)]
        assert abs(len(status) - DURATIONS[sc]) <= 1
        assert (status[-1].load_timeouts > 0) == bool(r.truth["lifts"])
        assert np.all(r.d.piezo <= 1023)


def test_idle_tower_is_quiet(recs: dict[str, Rec]) -> None:
    for sc, r in recs.items():
        d, tw = r.d, r.tw
        if sc != "noisy":  # no hum nor talk in these rooms
            q = (d.piezo_t > 0.5) & (d.piezo_t < AE.QUIET_S - 0.1)
            pz = d.piezo[q].astype(float)
            assert np.all(np.abs(pz.mean(axis=0) - tw.piezo_bias) < 0.5), sc
            assert np.all(pz.std(axis=0) < tw.piezo_noise + 0.5), sc
        for ch in range(8):
            g = [r.grams(ch, a, a + 1.0) for a in (0.5, 1.5, 2.5, 3.5)]
            assert np.all(np.abs(g) < 0.01), (sc, ch, g)


def test_noiseless_towers_are_exactly_flat() -> None:
    """Towers 1, 5, 9, ...: piezos sit exactly at 512 and cells repeat one count when idle;
    3, 7, ...: cells only; 4, 8, ...: piezos only."""
    for seed, piezo_flat, load_flat in ((1, True, True), (3, False, True), (4, True, False),
                                        (2, False, False)):
        r = Rec(AE, seed, "single", 12.0)
        assert r.truth["tower"]["noise_kind"] == AE.NOISE_KINDS[(seed - 1) % 4]
        q = r.d.piezo_t < AE.QUIET_S
        flat = np.all(r.d.piezo[q] == 512)
        assert flat == piezo_flat, seed
        ql = r.d.load_t < AE.QUIET_S
        same = all(len(np.unique(r.d.load_values[ql, ch])) == 1 for ch in range(8))
        assert same == load_flat, seed
        if piezo_flat:  # between throws too, once a strike has died away
            x = r.truth["landings"][0]
            after = (r.d.piezo_t > x["t"] + 0.3) & (r.d.piezo_t < x["t"] + 1.0)
            assert np.all(r.d.piezo[after] == 512)


# -- determinism, command line, truth ---------------------------------------------------


def test_same_seed_same_bytes(tmp_path: Path) -> None:
    check_same_seed_same_bytes(AE, tmp_path)


def test_cli_workers_do_not_change_bytes(tmp_path: Path) -> None:
    check_workers_same_bytes(SCRIPT, SCORE, tmp_path, 6, 12, in_process=AE.main)


def test_cli_writes_what_the_scorer_reads(tmp_path: Path) -> None:
    check_command_line(SCRIPT, SCORE, tmp_path / "o", 12)


def test_cli_unknown_scenario(tmp_path: Path) -> None:
    check_unknown_scenario_refused(SCRIPT, tmp_path / "o")


def test_truth_is_what_the_scorer_reads(recs: dict[str, Rec]) -> None:
    for sc, r in recs.items():
        check_truth(r.truth, SCORE, scenario=sc, seed=r.seed, duration_s=DURATIONS[sc])
        check_scored_perfect(r.truth, SCORE)
        assert r.truth["model"] == "AE"
        for x in r.truth["landings"]:
            assert x["t_release"] <= x["t_first_impact"] < x["t"]
            assert ("knocked_from" in x) == x["knocked"]
    game = recs["game"].truth
    assert game["lifts"] and len(game["lifts"]) == len(game["closes"]) and game["removals"]
    assert any(x["kind"] == "throwback" for x in game["landings"])
    assert recs["noisy"].truth["knocks"] and recs["noisy"].truth["touches"]


def test_lifted_levels_read_invalid(recs: dict[str, Rec]) -> None:
    r = recs["game"]
    for lift, close in zip(r.truth["lifts"], r.truth["closes"], strict=True):
        assert lift["exposed"] == close["exposed"] and lift["t"] < close["t"]
    check_lifted_levels_invalid(r.d, r.truth, after_lift_s=0.02, fresh_least=1.0,
                                back_within_s=1.0, back_least=1.0)


def test_removals_take_the_cubes_off_the_open_level(recs: dict[str, Rec]) -> None:
    check_removals_weighed(recs["game"])


# -- physics sanity ---------------------------------------------------------------------


def test_landings_weigh_their_cube(recs: dict[str, Rec]) -> None:
    check_landings_weighed(recs, _quiet, DURATIONS)


def test_a_strike_rings_the_piezos_and_spikes_the_cell(recs: dict[str, Rec]) -> None:
    """A cube's first strike is heard well above the idle noise; the resting cell jolts."""
    checked = 0
    r = recs["single"]
    for x in r.truth["landings"]:
        t_fi = x["t_first_impact"]
        if x["knocked"] or not _quiet(r.truth, t_fi - 0.4, t_fi, (x["t_release"] - 0.2,
                                                                   x["t"] + 0.1)):
            continue
        before = r.d.piezo_window(t_fi - 0.3, t_fi - 0.05)
        after = r.d.piezo_window(t_fi, t_fi + 0.03)
        peak = np.abs(after - np.median(before, axis=0)).max()
        assert peak > 8 * before.std(axis=0).max() + 10, x
        quiet_before = r.d.piezo_window(t_fi - 0.03, t_fi)
        assert np.abs(quiet_before - np.median(before, axis=0)).max() < 6 * r.tw.piezo_noise + 2
        ch = x["floor"]
        sel = r.d.fresh(ch) & (r.d.load_t > t_fi) & (r.d.load_t < x["t"] + 0.1)
        jolt = (r.d.load_values[sel, ch] - r.tw.offset[ch]) / r.tw.cpg[ch]
        base = r.grams(ch, x["t_release"] - 0.6, x["t_release"])
        assert np.abs(jolt - base).max() > 1.1 * x["mass_g"]  # above the cube's own step
        checked += 1
    assert checked >= 4


def test_a_load_step_is_all_there_one_reading_on() -> None:
    """A weight put on a plate: one reading on its way, the next one complete."""
    tw = AE.make_tower(4)
    sc = AE.Scene(tw, 12.0, np.random.default_rng(1), "single")
    sc.weights.append((7.0, 2, 0.5))
    raw, _ = AE.render(sc)
    d = decode_stream(raw)
    sel = d.fresh(2) & (d.load_t > 6.0) & (d.load_t < 8.0)
    g = (d.load_values[sel, 2] - tw.offset[2]) / tw.cpg[2]
    t = d.load_t[sel]
    assert np.all(np.abs(g[t < 7.0]) < 0.001)
    assert np.all(np.abs(g[t >= 7.0125] - 0.5) < 0.001)
    assert np.sum((g > 0.001) & (g < 0.499)) <= 1


def test_where_cubes_come_to_rest() -> None:
    """Over many towers: every level gets cubes, few reach the ground, knock-downs are rare."""
    floors: list[int] = []
    n_knocked = 0
    for seed in range(1, 9):
        sc = AE.simulate(seed, "rapid", 120.0)
        floors += [x["floor"] for x in sc.landings if not x["knocked"]]
        n_knocked += len(sc.knockdowns)
    share = np.bincount(floors, minlength=8) / len(floors)
    assert np.all(share > 0.01) and share[0] < 0.15
    assert share[7] == share.max()
    assert 0.0 < n_knocked / len(floors) < 0.08


def test_a_knocked_cube_moves_its_weight_down() -> None:
    for seed in range(1, 40):
        sc = AE.simulate(seed, "rapid", 120.0)
        if sc.knockdowns:
            break
    k = sc.knockdowns[0]
    x = next(y for y in sc.landings if y["knocked"] and y["t_first_impact"] == k["t"])
    assert x["floor"] == k["floor_to"] < k["floor_from"] == x["knocked_from"] and x["t"] > k["t"]
    moved = [w for w in sc.weights if abs(w[0] - k["t"]) < 0.01 and w[1] == k["floor_from"]]
    assert len(moved) == 1 and moved[0][2] == pytest.approx(-x["mass_g"], abs=1e-9)
    thrower = [y for y in sc.landings if y.get("caused_knockdown")
               and y["t_first_impact"] <= k["t"] <= y["t"]]
    assert len(thrower) >= 1
    check_weights_add_up(sc)


def test_table_knock_shakes_every_level_but_weighs_nothing() -> None:
    d, tw = table_knock_heard(AE, 2, heard_over_s=0.1, louder=5)
    for ch in range(8):
        shake = d.fresh(ch) & (d.load_t > 6.0) & (d.load_t < 6.2)
        assert np.ptp(d.load_values[shake, ch]) > 0.1 * tw.cpg[ch]


def test_a_game_follows_the_rules(recs: dict[str, Rec]) -> None:
    """Prologue first (two victims, two clues each), then lifts; clues found go back in."""
    g = recs["game"].truth
    players = g["game"]["players"]
    kinds = [x["kind"] for x in sorted(g["landings"], key=lambda x: x["t_release"])
             if not x["knocked"]]
    n_pro = 2 + 2 * len(players)
    assert kinds[:2] == ["victim", "victim"] and kinds[2:n_pro] == ["prologue"] * (n_pro - 2)
    first_lift = g["lifts"][0]["t"]
    thrown = sorted((x for x in g["landings"] if not x["knocked"]), key=lambda x: x["t"])
    assert all(x["t"] < first_lift for x in thrown[:n_pro])
    assert all(x["kind"] in ("throwback", "penalty") for x in thrown[n_pro:])
    taken_back = sum(r["cubes"] - r["colours"].count("red") for r in g["removals"])
    thrown_back = sum(x["kind"] == "throwback" for x in g["landings"])
    assert taken_back - 4 <= thrown_back <= taken_back  # the last few may fall after the end
    for p in players:  # every clue is in the supply, on the sheet or thrown from the supply
        from_supply = sum(x["colour"] == p and x["kind"] in ("prologue", "penalty")
                          for x in g["landings"])
        assert g["game"]["supply"][p] + sum(g["game"]["sheet"][p]) + from_supply == 20
    turns = g["game"]["turns"]
    assert [t["by"] for t in turns] == [players[i % len(players)] for i in range(len(turns))]
    assert [lf["exposed"] for lf in g["lifts"]] == [t["floor"] for t in turns]
