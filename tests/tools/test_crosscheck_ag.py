"""Fast checks of the blind cross-check model AG (tools/crosscheck_ag): a production batch of
sixteen towers, each within its parts' tolerances and with one or two ordinary imperfections
(loose or off-centre discs, rubbing plates, preloaded cells, slow HX711s, humming cables,
clocks off nominal, a firmware that drains its buffer in messages of varying size)."""

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
    check_game_follows_the_rules,
    check_landings_weighed,
    check_lifted_levels_invalid,
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

SCRIPT = TOOLS / "crosscheck_ag" / "make_recordings_ag.py"
AG = load_script(SCRIPT, "make_recordings_ag")
SCORE = load_script(TOOLS / "crosscheck" / "score.py", "crosscheck_score_for_ag")
SEED = 5  # a slow HX711 on level 2: the board reads at 72 SPS
GAME_SEED = 12  # a resonator 0.45 % fast; the game reaches Act II
DURATIONS = {"single": 40.0, "rapid": 30.0, "noisy": 40.0, "game": 90.0}

Rec = SimulatedRecording


@pytest.fixture(scope="module")
def recs() -> dict[str, Rec]:
    return recordings_by_scenario(AG, SEED, GAME_SEED, DURATIONS)


def _quiet(truth: dict[str, Any], t0: float, t1: float, own: tuple[float, float]) -> bool:
    return quiet_except(busy_spans(truth, knock_keys=("knocks",)), t0, t1, own)


# -- wire -------------------------------------------------------------------------------


def test_wire_encoder_follows_the_contract() -> None:
    check_wire_encoder(AG)
    check_row_encoders(AG)
    raw, _ = AG.render(AG.simulate(2, "single", 12.0))  # a draining firmware: mixed lengths
    check_own_framing(AG, raw)


def test_streams_decode_clean(recs: dict[str, Rec]) -> None:
    for sc, r in recs.items():
        frames = decode_clean(r.raw, sc)
        h = frames[0].msg
        assert isinstance(h, Hello)
        assert (h.proto, h.n_piezo, h.n_load, h.adc_bits) == (1, 8, 8, 10)
        assert (h.piezo_rate_hz, h.load_rate_hz) == (2000, r.tw.load_rate_hz)
        pz = [f.msg for f in frames if isinstance(f.msg, Piezo)]
        assert {len(m.samples) for m in pz} == {r.tw.sets_per_msg}
        steps = np.diff([m.t_us for m in pz])
        assert np.all(steps == 500 * np.array([len(m.samples) for m in pz[:-1]]))
        assert all(m.t_us % 4 == 0 for m in pz)  # micros() on a 16 MHz board
        loads = [f.msg for f in frames if isinstance(f.msg, Load)]
        gaps = np.diff([m.t_us for m in loads]) / 1e6
        assert abs(np.median(gaps) * h.load_rate_hz - 1.0) < 0.01
        status = [f.msg for f in frames if isinstance(f.msg, Status)]
        assert abs(len(status) - DURATIONS[sc]) <= 2
        assert (status[-1].load_timeouts > 0) == bool(r.truth["lifts"])
        assert r.d.piezo.max() <= 1023


def test_a_draining_firmware_sends_varying_sets() -> None:
    tw = AG.make_tower(2)
    assert "drain_firmware" in tw.faults and tw.sets_min < tw.sets_per_msg <= 14
    raw, _ = AG.render(AG.simulate(2, "single", 20.0))
    pz = [f.msg for f in decode_clean(raw) if isinstance(f.msg, Piezo)]
    sizes = [len(m.samples) for m in pz]
    assert min(sizes) >= tw.sets_min and max(sizes) <= tw.sets_per_msg
    assert len(set(sizes)) > 3
    assert np.all(np.diff([m.t_us for m in pz]) == 500 * np.array(sizes[:-1]))


# -- determinism, command line, truth ---------------------------------------------------


def test_same_seed_same_bytes(tmp_path: Path) -> None:
    check_same_seed_same_bytes(AG, tmp_path)


def test_towers_differ() -> None:
    towers = [AG.make_tower(s) for s in range(1, 17)]
    assert len({t.device_id for t in towers}) == 16
    assert len({round(float(t.mode_f[0, 0]), 3) for t in towers}) == 16
    assert len({round(t.cube_mass_g, 4) for t in towers}) == 16
    assert all(1 <= len(t.faults) <= 2 for t in towers)
    seen = {f for t in towers for f in t.faults}
    assert seen == set(AG.IMPERFECTIONS)
    assert {t.cells for t in towers} == {"matched", "mixed"}
    assert len({t.load_rate_hz for t in towers}) > 2
    assert len({t.sets_per_msg for t in towers}) > 1
    a, b = AG.make_tower(3), AG.make_tower(3)
    assert a.figures() == b.figures()


def test_cli_workers_do_not_change_bytes(tmp_path: Path) -> None:
    check_workers_same_bytes(SCRIPT, SCORE, tmp_path, 6, 12, in_process=AG.main)


def test_cli_writes_what_the_scorer_reads(tmp_path: Path) -> None:
    check_command_line(SCRIPT, SCORE, tmp_path / "o", 12)


def test_cli_unknown_scenario(tmp_path: Path) -> None:
    check_unknown_scenario_refused(SCRIPT, tmp_path / "o")


def test_truth_is_what_the_scorer_reads(recs: dict[str, Rec]) -> None:
    for sc, r in recs.items():
        check_truth(r.truth, SCORE, scenario=sc, seed=r.seed, duration_s=DURATIONS[sc])
        check_scored_perfect(r.truth, SCORE)
        assert r.truth["model"] == "AG" and r.truth["cells"] == r.tw.cells
        assert r.truth["tower"]["faults"] == r.tw.faults
        for x in r.truth["landings"]:
            assert x["t_release"] <= x["t_first_impact"] < x["t"] <= x["t_weighed"]
            assert ("knocked_from" in x) == x["knocked"]
            assert x["impacts"][0][0] == pytest.approx(x["t_first_impact"])
            assert x["impacts"][-1][1] == x["floor"]
    game = recs["game"].truth
    assert game["lifts"] and len(game["lifts"]) == len(game["closes"]) and game["removals"]
    assert any(x["kind"] == "throwback" for x in game["landings"])
    assert recs["noisy"].truth["knocks"] and recs["noisy"].truth["talk"]
    assert recs["noisy"].truth["hum_factor"] > 1


# -- what the sensors say ---------------------------------------------------------------


def test_lifted_levels_read_invalid(recs: dict[str, Rec]) -> None:
    r = recs["game"]
    check_lifted_levels_invalid(r.d, r.truth, after_lift_s=0.05, fresh_least=1.0,
                                back_within_s=1.0, back_least=0.5)
    for lift, close in zip(r.truth["lifts"], r.truth["closes"], strict=True):
        k = lift["exposed"]
        if k < 7:  # the lifted discs are gone: the base reads only its bias network
            quiet = r.d.piezo_window(lift["t"] + 0.05, close["t"] - 0.01)
            assert np.ptp(quiet[:, k + 1:], axis=0).max() <= 4


def test_landings_weigh_their_cube(recs: dict[str, Rec]) -> None:
    assert "rub_plate" not in recs["single"].tw.faults
    check_landings_weighed(recs, _quiet, DURATIONS)


def test_a_rubbing_plate_shows_its_step_late() -> None:
    """The plate rubs the wall: part of each step waits until friction lets go."""
    seed = 3
    tw = AG.make_tower(seed)
    k = tw.fault_level["rub_plate"]
    r = Rec(AG, seed, "single", 70.0)
    checked = 0
    for x in r.truth["landings"]:
        if x["floor"] != k or x["knocked"] or x.get("caused_knockdown"):
            continue
        late = x["t_weighed"] - x["t"]
        assert 0.3 <= late <= 1.5
        own = (x["t_release"] - 0.2, x["t"] + 0.1)
        t0, t1 = x["t_release"] - 0.6, x["t_weighed"] + 1.0
        if t1 > 70.0 or not quiet_except(busy_spans(r.truth, knock_keys=("knocks",)),
                                          t0, t1, own):
            continue
        if late < 0.45:
            continue
        base = r.grams(k, t0, x["t_release"])
        early = r.grams(k, x["t"] + 0.1, x["t_weighed"] - 0.02, least=2) - base
        full = r.grams(k, x["t_weighed"] + 0.3, x["t_weighed"] + 0.9) - base
        assert early == pytest.approx((1 - tw.rub_frac) * x["mass_g"], abs=0.03)
        assert full == pytest.approx(x["mass_g"], abs=0.03)
        checked += 1
    assert checked >= 1


def test_removals_take_the_cubes_off_the_open_level(recs: dict[str, Rec]) -> None:
    r = recs["game"]
    checked = 0
    for x in r.truth["removals"]:
        lifts = [lf for lf in r.truth["lifts"] if lf["t"] < x["t"]]
        assert max(lifts, key=lambda lf: lf["t"])["exposed"] == x["floor"]
        before = r.grams(x["floor"], x["t_touch"] - 0.45, x["t_touch"] - 0.05, least=3)
        after = r.grams(x["floor"], x["t"] + 0.3, x["t"] + 0.8, least=3)
        assert before - after == pytest.approx(x["mass_g"], abs=0.03 + 0.03 * x["mass_g"])
        checked += 1
    assert checked >= 2


def _isolated_strikes(r: Rec) -> list[Any]:
    strikes = r.sc.strikes
    return [st for st in strikes if st.level >= 0 and st.j >= 2e-4
            and not any(o is not st and -0.03 < st.t - o.t < 0.15 for o in strikes)]


def test_a_strike_is_heard_loudest_on_its_level() -> None:
    """On a tower without disc faults the struck level leads; with a weak disc, after
    its gain is taken out."""
    for seed, per_gain in ((5, False), (16, True)):
        r = Rec(AG, seed, "rapid", 60.0)
        base = np.median(r.d.piezo_window(1.0, 4.0), axis=0)
        own = near = total = 0
        for st in _isolated_strikes(r):
            dev = np.abs(r.d.piezo_window(st.t, st.t + 0.02) - base).max(axis=0)
            if per_gain:
                dev = dev / r.tw.gain
            loudest = int(np.argmax(dev))
            total += 1
            own += loudest == st.level
            near += abs(loudest - st.level) <= 1
        assert total >= 15
        assert own / total >= 0.8 and near / total >= 0.95


def test_a_loose_disc_is_quieter_and_duller() -> None:
    seed = 7
    tw = AG.make_tower(seed)
    k = tw.fault_level["loose_disc"]
    sound = {}
    for level in (k, k + 1):
        sc = AG.Scene(tw, 12.0, np.random.default_rng(1), "single")
        sc.hit(6.0, level, 4e-4)
        d = decode_stream(AG.render(sc)[0])
        base = np.median(d.piezo_window(1.0, 5.0)[:, level])
        w = d.piezo_window(6.0, 6.06)[:, level] - base
        spec = np.abs(np.fft.rfft(w, 512))
        freqs = np.fft.rfftfreq(512, 1 / 2000)
        sound[level] = (np.abs(w).max(), float((spec * freqs).sum() / spec.sum()))
    assert sound[k][0] < 0.6 * sound[k + 1][0]
    assert sound[k][1] < 0.9 * sound[k + 1][1]


def test_a_humming_cable_hums_on_its_channel() -> None:
    seed = next(s for s in range(1, 40) if "hum_cable" in AG.make_tower(s).faults)
    tw = AG.make_tower(seed)
    k = tw.fault_level["hum_cable"]
    sc = AG.Scene(tw, 10.0, np.random.default_rng(1), "single")
    d = decode_stream(AG.render(sc)[0])
    w = d.piezo_window(1.0, 9.0)
    w = w - w.mean(axis=0)
    spec = np.abs(np.fft.rfft(w, axis=0))
    freqs = np.fft.rfftfreq(len(w), 1 / 2000)
    at = int(np.argmin(np.abs(freqs - tw.mains_hz)))
    hum = spec[at - 2:at + 3].max(axis=0)
    assert int(np.argmax(hum)) == k and hum[k] > 3 * np.median(hum)


def test_a_resonator_off_nominal_moves_the_mains_in_device_time() -> None:
    tw = AG.make_tower(GAME_SEED)
    assert "clock_off" in tw.faults and abs(tw.clock_ppm) > 2000
    assert abs(tw.mains_hz - 50.0) > 0.1


@pytest.mark.parametrize("seed", [5, 9])  # a slow chip at 72 SPS, a board at 80
def test_a_landing_spikes_the_cell_then_settles(seed: int) -> None:
    tw = AG.make_tower(seed)
    sc = AG.Scene(tw, 12.0, np.random.default_rng(1), "single")
    sc.impulses.append((7.0, 2, 6e-4))  # a cube strikes, bounces and comes to rest
    sc.weights.append((7.1, 2, 0.5))
    d = decode_stream(AG.render(sc)[0])
    period = 1.0 / tw.read_rate
    sel = d.fresh(2)
    g = (d.load_values[sel, 2] - tw.offset[2]) / tw.cpg[2]
    t = d.load_t[sel]
    before = np.median(g[(t > 5.0) & (t < 6.9)])
    after = np.median(g[(t > 7.5) & (t < 11.5)])
    assert after - before == pytest.approx(0.5, abs=0.02)
    assert np.abs(g[(t > 7.0) & (t < 7.0 + 4 * period)] - before).max() > 1.0
    assert np.all(np.abs(g[(t > 7.5) & (t < 11.5)] - after) < 0.05)


def test_table_knock_shakes_every_level_but_weighs_nothing() -> None:
    d, tw = table_knock_heard(AG, 5, heard_over_s=0.1, louder=5)
    moved = 0
    for ch in range(8):
        shake = d.fresh(ch) & (d.load_t > 6.0) & (d.load_t < 6.3)
        moved += np.ptp(d.load_values[shake, ch]) > 3 * tw.load_noise_g[ch] * tw.cpg[ch]
    assert moved >= 6


def test_where_cubes_come_to_rest() -> None:
    """Over many towers: few reach the ground, the top catches most, knock-downs are few."""
    floors: list[int] = []
    n_knocked = 0
    for seed in range(1, 13):
        sc = AG.simulate(seed, "rapid", 120.0)
        floors += [x["floor"] for x in sc.landings if not x["knocked"]]
        n_knocked += len(sc.knockdowns)
    share = np.bincount(floors, minlength=8) / len(floors)
    assert share[0] < 0.1 and share[7] == share.max()
    assert share[4:].sum() > 0.6
    assert 0.01 < n_knocked / len(floors) < 0.08


def test_a_knocked_cube_moves_its_weight_down() -> None:
    for seed in range(1, 40):
        sc = AG.simulate(seed, "rapid", 120.0)
        if sc.knockdowns:
            break
    k = sc.knockdowns[0]
    x = next(y for y in sc.landings if y["fid"] == k["fid"] and y["knocked"])
    assert x["knocked"] and x["floor"] == k["floor_to"] < k["floor_from"] == x["knocked_from"]
    assert x["t_first_impact"] == k["t"] < x["t"]
    moved = [w for w in sc.weights if w[0] == pytest.approx(k["t"], abs=1e-4)
             and w[1] == k["floor_from"]]
    assert len(moved) == 1 and moved[0][2] == pytest.approx(-x["mass_g"])
    thrower = next(y for y in sc.landings if y["fid"] == k["by_fid"])
    assert thrower["caused_knockdown"] and thrower["t_first_impact"] <= k["t"] <= thrower["t"]
    total = np.zeros(8)
    for _t, lv, g in sc.weights:
        total[lv] += g
    on = np.array([sum(c.mass_g for c in sc.tower[lv]) for lv in range(8)])
    np.testing.assert_allclose(total, on, atol=1e-9)


def test_a_game_follows_the_rules(recs: dict[str, Rec]) -> None:
    """Prologue first (two victims, two clues each), then turns clockwise, a lift per turn;
    every clue is in a supply, on the sheet or thrown."""
    check_game_follows_the_rules(recs["game"].truth)
