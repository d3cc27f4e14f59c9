"""Fast checks of the blind cross-check model AD (tools/crosscheck_ad): a second grading
team's tower, built from first principles out of contracts.md and design.md alone."""

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

SCRIPT = TOOLS / "crosscheck_ad" / "make_recordings_ad.py"
AD = load_script(SCRIPT, "make_recordings_ad")
SCORE = load_script(TOOLS / "crosscheck" / "score.py", "crosscheck_score_for_ad")
SEED = 3
GAME_SEED = 2
DURATIONS = {"single": 40.0, "rapid": 30.0, "noisy": 40.0, "game": 90.0}


Rec = SimulatedRecording


@pytest.fixture(scope="module")
def recs() -> dict[str, Rec]:
    return recordings_by_scenario(AD, SEED, GAME_SEED, DURATIONS)


def _quiet(truth: dict[str, Any], t0: float, t1: float, own: tuple[float, float]) -> bool:
    """Whether nothing but ``own`` moves the tower in [t0, t1] (``busy_spans``)."""
    return quiet_except(busy_spans(truth), t0, t1, own)


# -- wire -------------------------------------------------------------------------------


def test_wire_encoder_follows_the_contract() -> None:
    check_wire_encoder(AD)
    check_row_encoders(AD)
    raw, _ = AD.render(AD.simulate(5, "single", 12.0))
    check_own_framing(AD, raw)


def test_streams_decode_clean(recs: dict[str, Rec]) -> None:
    for sc, r in recs.items():
        frames = decode_clean(r.raw, sc)
        assert not r.truth["damage"]
        h = frames[0].msg
        assert (h.proto, h.n_piezo, h.n_load, h.adc_bits, h.piezo_rate_hz) == (1, 8, 8, 10, 2000)
        assert abs(h.load_rate_hz - 80) <= 6
        pz = [f.msg for f in frames if isinstance(f.msg, Piezo)]
        assert {len(m.samples) for m in pz} == {AD.SETS_PER_MSG}
        assert sum(len(m.samples) for m in pz) == int(DURATIONS[sc] * AD.FS)
        t_us = np.array([m.t_us for m in pz], np.int64)
        assert np.all(np.diff(t_us) == 500 * AD.SETS_PER_MSG)
        loads = [f.msg for f in frames if isinstance(f.msg, Load)]
        assert abs(len(loads) / DURATIONS[sc] - h.load_rate_hz) < 2.0
        status = [f.msg for f in frames if isinstance(f.msg, Status)]
        assert abs(len(status) - DURATIONS[sc]) <= 1
        assert status[-1].load_timeouts <= r.truth["tower"]["load_timeouts"]
        assert np.all(r.d.piezo <= 1023)


def test_idle_tower_is_quiet(recs: dict[str, Rec]) -> None:
    for sc, r in recs.items():
        d, tw = r.d, r.tw
        if sc in ("single", "rapid"):  # no talking in these rooms
            q = (d.piezo_t > 0.5) & (d.piezo_t < AD.QUIET_S - 0.1)
            pz = d.piezo[q].astype(float)
            assert np.all(np.abs(pz.mean(axis=0) - tw.piezo_bias) < 1.0), sc
            assert np.all(pz.std(axis=0) < tw.piezo_noise + 1.3 * tw.hum_lsb + 1.0), sc
        for ch in range(8):
            g = [r.grams(ch, a, a + 1.0) for a in (0.5, 1.5, 2.5, 3.5)]
            assert np.all(np.abs(g) < 0.03), (sc, ch, g)


# -- determinism, command line, truth ---------------------------------------------------


def test_same_seed_same_bytes(tmp_path: Path) -> None:
    check_same_seed_same_bytes(AD, tmp_path)


def test_cli_workers_do_not_change_bytes(tmp_path: Path) -> None:
    check_workers_same_bytes(SCRIPT, SCORE, tmp_path, 6, 12, in_process=AD.main)


def test_cli_unknown_scenario(tmp_path: Path) -> None:
    check_unknown_scenario_refused(SCRIPT, tmp_path / "o")


def test_truth_is_what_the_scorer_reads(recs: dict[str, Rec]) -> None:
    for sc, r in recs.items():
        check_truth(r.truth, SCORE, scenario=sc, seed=r.seed, duration_s=DURATIONS[sc])
        check_scored_perfect(r.truth, SCORE)
        assert r.truth["model"] == "AD"
        for x in r.truth["landings"]:
            assert x["t_release"] <= x["t_first_impact"] < x["t"]
    game = recs["game"].truth
    assert game["lifts"] and len(game["lifts"]) == len(game["closes"]) and game["removals"]
    assert any(x["kind"] == "throwback" for x in game["landings"])
    assert recs["noisy"].truth["knocks"]


def test_lifted_levels_read_invalid(recs: dict[str, Rec]) -> None:
    r = recs["game"]
    for lift, close in zip(r.truth["lifts"], r.truth["closes"], strict=True):
        assert lift["exposed"] == close["exposed"] and lift["t"] < close["t"]
    check_lifted_levels_invalid(r.d, r.truth, after_lift_s=0.02, fresh_least=0.9,
                                back_within_s=1.0, back_least=0.5)


def test_removals_take_the_cubes_off_the_open_level(recs: dict[str, Rec]) -> None:
    check_removals_weighed(recs["game"])


# -- physics sanity ---------------------------------------------------------------------


def test_landings_weigh_their_cube(recs: dict[str, Rec]) -> None:
    check_landings_weighed(recs, _quiet, DURATIONS)


def test_a_strike_rings_the_piezos_and_spikes_the_cell(recs: dict[str, Rec]) -> None:
    """A cube's first strike is heard well above the idle noise; the struck cell jolts."""
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
        # the resting plate's cell: a spike of grams before it settles on one cube
        ch = x["floor"]
        sel = r.d.fresh(ch) & (r.d.load_t > x["t_first_impact"]) & (r.d.load_t < x["t"] + 0.1)
        if sel.any():
            jolt = (r.d.load_values[sel, ch] - r.tw.offset[ch]) / r.tw.cpg[ch]
            base = r.grams(ch, x["t_release"] - 0.6, x["t_release"])
            assert np.abs(jolt - base).max() > 0.3 * x["mass_g"]
        checked += 1
    assert checked >= 4


def test_hx711_settles_in_about_four_readings() -> None:
    """A weight put on a plate reaches its reading within ~50 ms plus the plate's ringing."""
    tw = AD.make_tower(4)
    sc = AD.Scene(tw, 12.0, np.random.default_rng(1), "single")
    sc.weights.append((7.0, 2, 0.5))
    raw, _ = AD.render(sc)
    d = decode_stream(raw)
    sel = d.fresh(2) & (d.load_t > 6.0) & (d.load_t < 8.0)
    g = (d.load_values[sel, 2] - tw.offset[2]) / tw.cpg[2]
    t = d.load_t[sel]
    base = np.median(g[t < 6.95])
    assert np.all(np.abs(g[t < 6.99] - base) < 0.02)
    assert np.all(np.abs(g[t > 7.12] - base - 0.5) < 0.03)
    mid = g[(t > 7.0) & (t < 7.06)] - base
    assert np.any((mid > 0.05) & (mid < 0.45))  # a reading on its way up


def test_where_cubes_come_to_rest() -> None:
    """Over many towers: every level gets cubes, few reach the ground, knock-downs are rare."""
    floors: list[int] = []
    n_knocked = 0
    for seed in range(1, 13):
        sc = AD.simulate(seed, "rapid", 120.0)
        floors += [x["floor"] for x in sc.landings if not x["knocked"]]
        n_knocked += len(sc.knockdowns)
    share = np.bincount(floors, minlength=8) / len(floors)
    assert np.all(share > 0.01) and share[0] < 0.15
    assert 0.0 < n_knocked / len(floors) < 0.08


def test_a_knocked_cube_moves_its_weight_down() -> None:
    for seed in range(1, 40):
        sc = AD.simulate(seed, "rapid", 120.0)
        if sc.knockdowns:
            break
    k = sc.knockdowns[0]
    x = next(y for y in sc.landings if y["knocked"] and y["knocked_from"] == k["floor_from"])
    assert x["floor"] == k["floor_to"] < k["floor_from"] and x["t"] > k["t"]
    moved = [w for w in sc.weights if abs(w[0] - k["t"]) < 1e-3 and w[1] == k["floor_from"]]
    assert len(moved) == 1 and moved[0][2] == pytest.approx(-x["mass_g"], abs=1e-3)
    # every cube in the tower at the end rests where the weights say
    check_weights_add_up(sc)


def test_table_knock_shakes_every_level_but_weighs_nothing() -> None:
    table_knock_heard(AD, 4, heard_over_s=0.1, louder=5)


def test_a_game_follows_the_rules(recs: dict[str, Rec]) -> None:
    """Prologue first (two victims, two clues each), then lifts; clues found go back in."""
    g = recs["game"].truth
    players = g["game"]["players"]
    kinds = [x["kind"] for x in sorted(g["landings"], key=lambda x: x["t_release"])
             if not x["knocked"]]
    n_pro = 2 + 2 * len(players)
    assert kinds[:2] == ["victim", "victim"] and kinds[2:n_pro] == ["prologue"] * (n_pro - 2)
    first_lift = g["lifts"][0]["t"]
    assert all(x["t"] < first_lift for x in g["landings"][:n_pro] if not x["knocked"])
    taken_back = sum(r["cubes"] - r["colours"].count("red") for r in g["removals"])
    thrown_back = sum(x["kind"] == "throwback" for x in g["landings"])
    assert thrown_back <= taken_back and thrown_back >= taken_back - 6
