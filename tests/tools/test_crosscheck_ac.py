"""Fast checks of the blind cross-check model AC (tools/crosscheck_ac): the judges' simulator,
an ordinary tower model written from contracts.md and design.md alone."""

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
    load_script,
    quiet_except,
    recordings_by_scenario,
    table_knock_heard,
)

SCRIPT = TOOLS / "crosscheck_ac" / "make_recordings_ac.py"
AC = load_script(SCRIPT, "make_recordings_ac")
SCORE = load_script(TOOLS / "crosscheck" / "score.py", "crosscheck_score_for_ac")
SEED = 3
GAME_SEED = 2
DURATIONS = {"single": 40.0, "rapid": 30.0, "noisy": 40.0, "game": 80.0}


Rec = SimulatedRecording


@pytest.fixture(scope="module")
def recs() -> dict[str, Rec]:
    return recordings_by_scenario(AC, SEED, GAME_SEED, DURATIONS)


def _quiet(truth: dict[str, Any], t0: float, t1: float, own: tuple[float, float]) -> bool:
    """Whether nothing but ``own`` moves the tower in [t0, t1] (``busy_spans``)."""
    busy = busy_spans(truth, before_release_s=0.0, handling_s=1.3, knock_keys=("knocks",))
    return quiet_except(busy, t0, t1, own)


# -- wire -------------------------------------------------------------------------------


def test_wire_encoder_follows_the_contract(recs: dict[str, Rec]) -> None:
    check_wire_encoder(AC)
    check_row_encoders(AC)
    check_own_framing(AC, recs["single"].raw)


def test_streams_decode_clean(recs: dict[str, Rec]) -> None:
    for sc, r in recs.items():
        frames = decode_clean(r.raw, sc)
        assert not r.truth["damage"]
        h = frames[0].msg
        assert (h.proto, h.n_piezo, h.n_load, h.adc_bits, h.piezo_rate_hz) == (1, 8, 8, 10, 2000)
        assert abs(h.load_rate_hz - 80) <= 5
        pz = [f.msg for f in frames if isinstance(f.msg, Piezo)]
        assert {len(m.samples) for m in pz} == {AC.SETS_PER_MSG}
        assert sum(len(m.samples) for m in pz) == int(DURATIONS[sc] * AC.FS)
        t_us = np.array([m.t_us for m in pz], np.int64)
        assert np.all(np.diff(t_us) == 500 * AC.SETS_PER_MSG)
        loads = [f.msg for f in frames if isinstance(f.msg, Load)]
        rate = len(loads) / DURATIONS[sc]
        assert abs(rate - h.load_rate_hz) < 2.5
        assert all(m.t_us > pz[0].t_us for m in loads)
        status = [f.msg for f in frames if isinstance(f.msg, Status)]
        assert abs(len(status) - DURATIONS[sc]) <= 1
        assert status[-1].load_timeouts == r.truth["tower"]["load_timeouts"]
        assert np.all(r.d.piezo <= 1023)


def test_idle_tower_is_quiet(recs: dict[str, Rec]) -> None:
    for sc, r in recs.items():
        d, tw = r.d, r.tw
        q = (d.piezo_t > 0.2) & (d.piezo_t < AC.QUIET_S - 0.1)
        pz = d.piezo[q].astype(float)
        hum = tw.hum_lsb * r.sc.hum_gain * 1.2
        assert np.all(np.abs(pz.mean(axis=0) - tw.piezo_bias) < 1.0), sc
        assert np.all(pz.std(axis=0) < 1.5 * np.hypot(tw.piezo_noise, hum) + 1.0), sc
        lq = (d.load_t > 0.3) & (d.load_t < AC.QUIET_S - 0.1)
        assert np.all(d.load_valid[lq] == 0xFF)
        grams = (d.load_values[lq] - tw.offset) / tw.cpg
        assert np.all(np.abs(np.median(grams, axis=0)) < 0.03)
        assert np.all(grams.std(axis=0) < 0.02)


# -- determinism, command line, truth ---------------------------------------------------


def test_same_seed_same_bytes(tmp_path: Path) -> None:
    check_same_seed_same_bytes(AC, tmp_path)


def test_cli_workers_do_not_change_bytes(tmp_path: Path) -> None:
    check_workers_same_bytes(SCRIPT, SCORE, tmp_path, 6, 12, in_process=AC.main)


def test_cli_unknown_scenario(tmp_path: Path) -> None:
    check_unknown_scenario_refused(SCRIPT, tmp_path / "o")


def test_truth_is_what_the_scorer_reads(recs: dict[str, Rec]) -> None:
    for sc, r in recs.items():
        check_truth(r.truth, SCORE, scenario=sc, seed=r.seed, duration_s=DURATIONS[sc])
        check_scored_perfect(r.truth, SCORE)
        assert r.truth["model"] == "AC"
        for x in r.truth["landings"]:
            assert x["t_release"] <= x["t_first_impact"] < x["t"]
    game = recs["game"].truth
    assert game["lifts"] and len(game["lifts"]) == len(game["closes"]) and game["removals"]
    assert recs["noisy"].truth["knocks"]
    assert any(x["knocked"] for r in recs.values() for x in r.truth["landings"])


def test_lifted_levels_read_invalid(recs: dict[str, Rec]) -> None:
    r = recs["game"]
    for lift, close in zip(r.truth["lifts"], r.truth["closes"], strict=True):
        assert lift["exposed"] == close["exposed"] and lift["t"] < close["t"]
    check_lifted_levels_invalid(r.d, r.truth, after_lift_s=0.05, fresh_least=0.9,
                                back_within_s=1.0, back_least=0.5)


def test_removals_take_the_cubes_off_the_open_level(recs: dict[str, Rec]) -> None:
    check_removals_weighed(recs["game"], before_s=(1.2, 0.8), after_s=(0.15, 0.5), slack_g=0.02)


# -- physics sanity ---------------------------------------------------------------------


def test_landings_weigh_their_cube(recs: dict[str, Rec]) -> None:
    check_landings_weighed(recs, _quiet, DURATIONS, release_margin_s=0.0, per_g=0.01, least=6)


def test_first_impact_rings_the_top_of_the_tower(recs: dict[str, Rec]) -> None:
    checked = 0
    for sc in ("single", "noisy", "rapid"):
        r = recs[sc]
        for x in r.truth["landings"]:
            t_fi = x["t_first_impact"]
            if x["knocked"] or not _quiet(r.truth, t_fi - 0.3, t_fi, (x["t_release"],
                                                                       x["t"] + 0.1)):
                continue
            before = r.d.piezo_window(t_fi - 0.25, t_fi - 0.01)[:, 5:]
            # a rim tick may come first; the first plate is struck within 0.15 s
            after = r.d.piezo_window(t_fi - 0.001, t_fi + 0.15)[:, 5:]
            peak = np.max(np.abs(after - np.median(before, axis=0)))
            assert peak > 6 * before.std() + 4, (sc, x)
            checked += 1
    assert checked >= 8


def test_where_cubes_come_to_rest() -> None:
    """Over many towers: every level gets cubes, few reach the ground, knock-downs are rare."""
    floors: list[int] = []
    n_knocked = 0
    for seed in range(1, 13):
        sc = AC.simulate(seed, "single", 120.0)
        floors += [x["floor"] for x in sc.landings if not x["knocked"]]
        n_knocked += len(sc.knockdowns)
    share = np.bincount(floors, minlength=8) / len(floors)
    assert np.all(share[1:] > 0.04) and 0.01 < share[0] < 0.15
    assert 0.0 < n_knocked / len(floors) < 0.12


def test_a_knocked_cube_moves_its_weight_down() -> None:
    for seed in range(1, 40):
        sc = AC.simulate(seed, "single", 60.0)
        if sc.knockdowns:
            break
    k = sc.knockdowns[0]
    x = next(y for y in sc.landings if y["knocked"] and y.get("knocked_from") == k["floor_from"])
    cause = next(y for y in sc.landings if y.get("caused_knockdown") and y["t"] >= k["t"] - 2)
    moved = [w for w in sc.weights if abs(w[0] - k["t"]) < 1e-4 and w[1] == k["floor_from"]]
    assert len(moved) == 1 and moved[0][2] == pytest.approx(-x["mass_g"], abs=1e-3)
    assert x["floor"] < k["floor_from"] and x["t"] > k["t"] > cause["t_first_impact"]
    # every cube in the tower at the end rests where the weights say
    check_weights_add_up(sc)


def test_table_knock_shakes_every_level_but_weighs_nothing() -> None:
    d, tw = table_knock_heard(AC, 4, heard_over_s=0.05, louder=4)
    for ch in range(8):
        shaken = d.fresh(ch) & (d.load_t > 6.0) & (d.load_t < 6.05)
        assert np.abs(d.load_values[shaken, ch] - tw.offset[ch]).max() / tw.cpg[ch] > 0.05
