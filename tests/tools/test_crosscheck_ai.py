"""Fast checks of the blind cross-check model AI (tools/crosscheck_ai): a school science
club's tower played in a classroom (stock 10-bit or MCP3208 12-bit piezo ADCs, HX711 /
CS1237 / HX717 load converters at 10-320 readings/s, card plates with glued or foam-taped
discs, a ceramic-resonator clock that may wrap, children who throw two cubes at once)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hostapp.protocol import Hello, Load, Piezo, Status
from tests.scripts import (
    TOOLS,
    DecodedStream,
    SimulatedRecording,
    busy_spans,
    check_damaged_twin,
    check_extra_families_command_line,
    check_game_follows_the_rules,
    check_knock_weighs_nothing,
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
)

SCRIPT = TOOLS / "crosscheck_ai" / "make_recordings_ai.py"
AI = load_script(SCRIPT, "make_recordings_ai")
SCORE = load_script(TOOLS / "crosscheck" / "score.py", "crosscheck_score_for_ai")
SEED = 4  # stock 10-bit ADC at 2000 sets/s, HX711 at 80 SPS on 300 g cells
GAME_SEED = 24  # MCP3208 at 1250 sets/s, HX711 at 80 SPS; the game reaches Act II in 60 s
DURATIONS = {"single": 30.0, "rapid": 20.0, "noisy": 30.0, "game": 60.0}

Rec = SimulatedRecording


@pytest.fixture(scope="module")
def recs() -> dict[str, Rec]:
    return recordings_by_scenario(AI, SEED, GAME_SEED, DURATIONS)


def _grams(d: DecodedStream, tw: Any, ch: int, t0: float, t1: float) -> float:
    sel = d.fresh(ch) & (d.load_t >= t0) & (d.load_t < t1)
    assert sel.sum() >= 2, (ch, t0, t1)
    return float((np.median(d.load_values[sel, ch]) - tw.offset[ch]) / tw.cpg[ch])


def _scene(tw: Any, duration: float, scenario: str = "single") -> Any:
    return AI.Scene(tw, duration, np.random.default_rng(1), scenario)


def _seed_where(pred: Any, upto: int = 80) -> int:
    return next(s for s in range(1, upto) if pred(AI.make_tower(s)))


# -- wire -------------------------------------------------------------------------------


def test_wire_encoder_follows_the_contract() -> None:
    check_wire_encoder(AI)
    check_row_encoders(AI)
    rng = np.random.default_rng(11)
    for n in (0, 1, 7, 120, 254, 300):
        data = rng.integers(0, 256, n).astype(np.uint8).tobytes()
        assert AI.crc16_ccitt_false(data) == AI.crc16_ccitt_false_reference(data)
        assert int(AI.crc16_rows(np.frombuffer(data, np.uint8)[None, :])[0]) == \
            AI.crc16_ccitt_false_reference(data)
    assert AI.crc16_ccitt_false_reference(b"123456789") == 0x29B1
    # 254 non-zero bytes: one full block, no redundant trailing code byte
    assert AI.cobs_encode(bytes(range(1, 255))) == b"\xff" + bytes(range(1, 255))
    raw, _ = AI.render(AI.simulate(2, "single", 8.0))
    check_own_framing(AI, raw)


def test_streams_decode_clean(recs: dict[str, Rec]) -> None:
    for sc, r in recs.items():
        tw = r.tw
        frames = decode_clean(r.raw, sc)
        h = frames[0].msg
        assert isinstance(h, Hello)
        assert (h.proto, h.n_piezo, h.n_load, h.adc_bits) == (1, 8, 8, tw.adc_bits)
        assert (h.piezo_rate_hz, h.load_rate_hz) == (tw.piezo_rate_hz, tw.load_rate_hz)
        assert h.device_id == tw.device_id
        pz = [f.msg for f in frames if isinstance(f.msg, Piezo)]
        assert {len(m.samples) for m in pz} == {tw.sets_per_msg}
        loads = [f.msg for f in frames if isinstance(f.msg, Load)]
        assert all(m.t_us % 4 == 0 for m in pz + loads)  # micros() on a 16 MHz AVR
        steps = np.diff(np.array([m.t_us for m in pz], np.int64)) % 2**32
        want = tw.sets_per_msg * tw.set_period_us
        assert np.all(np.abs(steps - want) <= 4)
        gaps = np.diff(np.array([m.t_us for m in loads], np.int64)) % 2**32 / 1e6
        assert np.allclose(gaps, 1 / tw.load_rate_hz, atol=5e-6)
        for m in loads:  # "0 where not valid"
            assert all(v == 0 for k, v in enumerate(m.values) if not (m.valid >> k) & 1)
        status = [f.msg for f in frames if isinstance(f.msg, Status)]
        assert abs(len(status) - DURATIONS[sc]) <= 1
        assert status[0].uptime_ms == 1000 and 0 < status[0].cpu_load_pct < 100
        assert r.d.piezo.max() < 2**tw.adc_bits
        idle = np.median(r.d.piezo_window(0.5, 3.9), axis=0)  # AC-coupled at mid-scale
        np.testing.assert_allclose(idle, 2 ** (tw.adc_bits - 1), rtol=0.015)


def test_the_stream_fits_the_uart() -> None:
    """1 Mbaud 8N1 is 100 kB/s: the batching keeps every tower below 85 % of it."""
    for seed in range(1, 60):
        tw = AI.make_tower(seed)
        n = tw.sets_per_msg
        per_s = tw.piezo_rate_hz * (16 + 13 / n) + tw.load_rate_hz * 36 + 20
        assert per_s < 85_000, seed
    seed = max(range(1, 60), key=lambda s: AI.make_tower(s).piezo_rate_hz
               / AI.make_tower(s).sets_per_msg + AI.make_tower(s).load_rate_hz / 10)
    raw, _ = AI.render(AI.simulate(seed, "single", 10.0))
    assert len(raw) / 10.0 < 85_000


# -- determinism, command line, truth ---------------------------------------------------


def test_same_seed_same_bytes(tmp_path: Path) -> None:
    check_same_seed_same_bytes(AI, tmp_path)


def test_towers_differ() -> None:
    towers = [AI.make_tower(s) for s in range(1, 41)]
    assert len({t.device_id for t in towers}) == 40
    assert len({round(t.cube_mass_g, 4) for t in towers}) == 40
    assert all(0.3 <= t.cube_mass_g <= 0.8 for t in towers)
    assert {t.adc for t in towers} == {"avr10", "mcp3208"}
    assert {(t.adc_bits, t.piezo_rate_hz) for t in towers if t.adc == "avr10"} == {(10, 2000)}
    assert {t.piezo_rate_hz for t in towers if t.adc == "mcp3208"} == {1000, 1250, 2000, 2500,
                                                                      3000}
    assert {t.load_rate_hz for t in towers} == {10, 40, 80, 320}
    assert {t.sets_per_msg for t in towers} >= {1, 2, 7, 13, 14}
    assert {t.cells for t in towers} == {"matched", "mixed"}
    assert {c for t in towers for c in t.capacity_g} == {100.0, 200.0, 300.0, 500.0, 780.0}
    assert all(t.coupling.count("glue") >= 2 and t.coupling.count("foam") >= 2 for t in towers)
    assert {t.opamp for t in towers} == {"lm324", "mcp6004"}
    assert {f for t in towers for f in t.f_aa} == {0.0, 723.0, 1592.0}
    assert any(np.any(t.orient < 0) for t in towers)
    assert all(abs(t.clock.ppm) <= 5000 for t in towers)
    assert max(abs(t.clock.ppm) for t in towers) > 4000
    assert sum(2**32 - t.clock.t_us_first < 120e6 for t in towers) >= 8  # these wrap
    assert all(t.clock.t_us_first % 4 == 0 for t in towers)
    json.dumps(towers[0].figures())
    assert AI.make_tower(3).figures() == AI.make_tower(3).figures()
    # the scenarios of a seed are played on the same build
    assert AI.simulate(3, "single", 20.0).tw.figures() == AI.simulate(3, "game", 20.0).tw.figures()


def test_cli_workers_do_not_change_bytes(tmp_path: Path) -> None:
    check_workers_same_bytes(SCRIPT, SCORE, tmp_path, 6, 10, in_process=AI.main)


def test_cli_unknown_scenario(tmp_path: Path) -> None:
    check_unknown_scenario_refused(SCRIPT, tmp_path / "o")
    with pytest.raises(ValueError, match="bogus"):
        AI.simulate(1, "bogus", 20.0)


def test_cli_extra_families(tmp_path: Path) -> None:
    check_extra_families_command_line(SCRIPT, tmp_path / "x")
    long = SCORE.read_truth(tmp_path / "x" / "long_t2.truth.json")
    assert long["duration_s"] == 40.0 and long["room"]["temp_rise_c"] > 0


def test_truth_is_what_the_scorer_reads(recs: dict[str, Rec]) -> None:
    for sc, r in recs.items():
        check_truth(r.truth, SCORE, scenario=sc, seed=r.seed, duration_s=DURATIONS[sc])
        check_scored_perfect(r.truth, SCORE)
        assert r.truth["model"] == "AI" and r.truth["cells"] == r.tw.cells
        assert r.truth["tower"] == json.loads(json.dumps(r.tw.figures()))
        assert 4.0 <= r.truth["quiet_until"] <= 7.1
        first = min([x["t_release"] for x in r.truth["landings"]]
                    + [x["t"] for x in r.truth["knocks"] + r.truth["touches"]
                       + r.truth["noise"]])
        assert first >= r.truth["quiet_until"] - 1e-6  # nothing in the first 4-7 s
        for x in r.truth["landings"]:
            assert x["t_release"] <= x["t_first_impact"] <= x["t_on_plate"] <= x["t"]
            assert ("knocked_from" in x) == x["knocked"]
            if not x["knocked"]:
                assert x["impacts"][0][0] == pytest.approx(x["t_first_impact"])
                assert x["impacts"][-1][1] == x["floor"]
    game = recs["game"].truth
    assert game["lifts"] and len(game["lifts"]) == len(game["closes"]) and game["removals"]
    assert all(lf["t"] < cl["t"] for lf, cl in zip(game["lifts"], game["closes"], strict=True))
    assert all(lf["exposed"] == cl["exposed"]
               for lf, cl in zip(game["lifts"], game["closes"], strict=True))
    assert any(x["kind"] == "throwback" for x in game["landings"])
    assert any(x["kind"] == "penalty" for x in game["landings"])
    noisy = recs["noisy"].truth
    assert noisy["knocks"] and noisy["noise"] and noisy["hum_factor"] > 1
    assert all(k["t"] < k["t_end"] for k in noisy["knocks"])


def test_a_game_follows_the_rules(recs: dict[str, Rec]) -> None:
    check_game_follows_the_rules(recs["game"].truth, victims_counted=True)
    game = recs["game"].truth["game"]
    assert 5 <= len(game["players"]) <= 6 and game["victim_thrower"] in game["players"]
    assert set(game["crime_scenes"]) == {t["floor"] for t in game["turns"] if t["victims"]}


def test_a_long_game_is_scored_when_it_ends() -> None:
    sc = next(s for s in (AI.simulate(seed, "long", 1800.0) for seed in (3, 1, 2))
              if s.game["phase"] == "over")
    g = sc.game
    assert any(sum(v) >= 10 for v in g["sheet"].values()) or min(g["supply"].values()) <= 0
    assert set(g["culprits"]) <= set(g["players"]) and set(g["winners"]) <= set(g["players"])
    assert max(g["suspicion"].values()) == g["suspicion"][g["culprits"][0]]
    check_weights_add_up(sc)


# -- what the sensors say ------------------------------------------------------------------


def test_lifted_levels_read_invalid(recs: dict[str, Rec]) -> None:
    r = recs["game"]
    assert r.tw.load_rate_hz == 80
    assert any(lf["exposed"] < 7 for lf in r.truth["lifts"])
    check_lifted_levels_invalid(r.d, r.truth, after_lift_s=0.05, fresh_least=0.85,
                                back_within_s=1.0, back_least=0.5)
    status = [f.msg for f in r.d.frames if isinstance(f.msg, Status)]
    # each converter carried away times out once per lift
    assert status[-1].load_timeouts == sum(7 - lf["exposed"] for lf in r.truth["lifts"])
    for lift, close in zip(r.truth["lifts"], r.truth["closes"], strict=True):
        k = lift["exposed"]
        if k == 7:
            continue
        # the discs went with the modules: the inputs float at the bias, humming
        w = r.d.piezo_window(lift["t"] + 0.1, close["t"] - 0.01)[:, k + 1:]
        assert np.all(np.abs(np.median(w, axis=0) - 2 ** (r.tw.adc_bits - 1)) < 12)


def test_removals_take_the_cubes_off_the_open_level(recs: dict[str, Rec]) -> None:
    check_removals_weighed(recs["game"])


def test_landings_weigh_their_cube(recs: dict[str, Rec]) -> None:
    def quiet(truth: dict[str, Any], t0: float, t1: float, own: tuple[float, float]) -> bool:
        return quiet_except(busy_spans(truth), t0, t1, own)

    check_landings_weighed(recs, quiet, DURATIONS, least=4)


def test_multi_cube_throws_and_wedges() -> None:
    sc = AI.simulate(5, "noisy", 120.0)
    groups: dict[int, list[dict[str, Any]]] = {}
    for x in sc.landings:
        if x["group"] is not None:
            groups.setdefault(x["group"], []).append(x)
    pairs = [g for g in groups.values() if len(g) == 2]
    assert pairs and all(g[0]["thrown_with"] == 2 for g in pairs)
    assert all(abs(g[0]["t_release"] - g[1]["t_release"]) <= 0.03 for g in pairs)
    truth = AI.truth_of(sc)
    for x in truth["landings"]:
        assert x["cubes"] == 1 and 1 <= x["landed_with"] <= x["thrown_with"]
    wedged = [w for s in range(1, 8) for x in AI.simulate(s, "rapid", 120.0).landings
              for w in x["wedged"]]
    assert wedged and all(0.15 <= w["dwell_s"] <= 1.6 for w in wedged)
    assert {w["dropped"] for w in wedged} == {True, False}


def test_where_cubes_come_to_rest() -> None:
    """Over many towers: few reach the ground, the upper floors catch most, knock-downs
    are a few per cent of the throws."""
    floors: list[int] = []
    n_knocked = 0
    for seed in range(1, 11):
        sc = AI.simulate(seed, "rapid", 120.0)
        floors += [x["floor"] for x in sc.landings if not x["knocked"]]
        n_knocked += len(sc.knockdowns)
        check_weights_add_up(sc)
    share = np.bincount(floors, minlength=8) / len(floors)
    assert share[0] < 0.12 and share[5:].sum() > 0.5
    assert set(np.argsort(share)[-2:]) == {6, 7}  # the small upper holes catch the most
    assert np.all(share > 0.005)
    assert 0.01 < n_knocked / len(floors) < 0.08


def test_a_knocked_cube_moves_its_weight_down() -> None:
    sc = next(s for s in (AI.simulate(seed, "rapid", 120.0) for seed in range(1, 40))
              if s.knockdowns)
    k = sc.knockdowns[0]
    x = next(y for y in sc.landings if y["fid"] == k["fid"] and y["knocked"])
    assert x["floor"] == k["floor_to"] < k["floor_from"] == x["knocked_from"]
    assert x["t_first_impact"] == k["t"] < x["t"]
    moved = [w for w in sc.weights if w[0] == pytest.approx(k["t"], abs=1e-9)
             and w[1] == k["floor_from"]]
    assert len(moved) == 1 and moved[0][2] == pytest.approx(-x["mass_g"])
    thrower = next(y for y in sc.landings if y["fid"] == k["by_fid"] and not y["knocked"])
    assert thrower["caused_knockdown"] and thrower["t_first_impact"] <= k["t"] <= thrower["t"]


@pytest.mark.parametrize("rate", [10, 40, 80, 320])
def test_converters_read_at_their_rate_and_settle(rate: int) -> None:
    """HELLO says the firmware's reading rate; each converter is fresh about as often as
    it converts (its RC oscillator is a few per cent off); a step appears over about
    four conversion periods (readings part way between), and once the plate has stopped
    ringing on its cell the new weight stays."""
    tw = AI.make_tower(_seed_where(lambda t: t.load_rate_hz == rate))
    sc = _scene(tw, 8.0)
    for level in range(8):
        sc.weights.append((4.0, level, 5.0))
    d = decode_stream(AI.render(sc)[0])
    t_step = float(tw.clock.stream(4.0))
    assert d.hello.load_rate_hz == rate
    for level in range(8):
        share = min(1.0, tw.conv_rate_hz[level] / rate * (1 + tw.clock.ppm * 1e-6))
        assert share - 0.04 <= d.fresh(level).mean() <= share + 0.01
        sel = d.fresh(level)
        t = d.load_t[sel]
        g = (d.load_values[sel, level] - tw.offset[level]) / tw.cpg[level]
        frac = (g - np.median(g[t < t_step - 0.1])) / 5.0
        period = 1.0 / tw.conv_rate_hz[level]
        noise = 4 * tw.load_noise_counts[level] / abs(tw.cpg[level]) / 5.0
        assert np.all(np.abs(frac[t < t_step]) < 0.01 + noise)
        if rate <= 80:  # slow enough to see the filter rather than the ringing
            # a sinc^4 filter: 1/24 of the step after one period, 23/24 after three (a
            # reading is the conversion finished up to one tick before its stamp)
            part = frac[(t > t_step + 2.15 * period) & (t < t_step + 2.9 * period)]
            assert part.size and np.all((part > 0.02) & (part < 0.98)), (level, part)
        first = t[(t > t_step) & (frac > 0.9)][0] - t_step
        assert first <= 4 * period + 2.0 / rate + 0.002, (level, first)
        assert np.all(np.abs(frac[t > t_step + 4 * period + 0.6] - 1.0) < 0.01 + noise)


def test_ten_sps_converters_reject_the_mains() -> None:
    spread = {}
    for rate in (10, 80):
        tw = AI.make_tower(_seed_where(lambda t, r=rate: t.load_rate_hz == r))
        sc = _scene(tw, 8.0, "noisy")
        sc.hum_factor = 300.0
        d = decode_stream(AI.render(sc)[0])
        k = int(np.argmax(tw.load_hum_counts))
        sel = d.fresh(k) & (d.load_t > 1.0)
        spread[rate] = d.load_values[sel, k].std() / (tw.load_hum_counts[k] * sc.hum_factor)
    assert spread[10] < 0.03 < spread[80]


def test_a_landing_spikes_its_cell_then_settles() -> None:
    tw = AI.make_tower(SEED)
    sc = _scene(tw, 10.0)
    sc.hit(6.0, 2, 8e-4)
    sc.weights.append((6.02, 2, 0.5))
    d = decode_stream(AI.render(sc)[0])
    t = float(tw.clock.stream(6.0))
    before = _grams(d, tw, 2, t - 2.0, t - 0.1)
    after = _grams(d, tw, 2, t + 0.5, t + 3.5)
    assert after - before == pytest.approx(0.5, abs=0.02)
    sel = d.fresh(2) & (d.load_t > t) & (d.load_t < t + 0.1)
    g = (d.load_values[sel, 2] - tw.offset[2]) / tw.cpg[2]
    assert np.abs(g - before).max() > 1.0  # the impact's impulse


def test_plates_creep_under_load() -> None:
    """A heavy load left on a plate: the card and the cell creep by their fraction of it."""
    tw = AI.make_tower(_seed_where(lambda t: abs(t.creep_frac[3]) > 0.008
                                   and t.creep_tau_s[3] < 300 and t.load_rate_hz == 80))
    sc = _scene(tw, 300.0)
    sc.weights.append((5.0, 3, 50.0))
    ld = AI.render_load(sc)
    sel = (ld.valid >> 3) & 1 == 1
    t = ld.tick_s[sel]
    g = (ld.values[sel, 3] - tw.offset[3]) / tw.cpg[3]
    early = np.median(g[(t > 6.0) & (t < 8.0)])
    late = np.median(g[t > 290.0])
    t_real = float(tw.clock.real(7.0)) - 5.0, float(tw.clock.real(295.0)) - 5.0

    def crept(dt: float) -> float:
        return 50.0 * (tw.creep_frac[3] * (1 - math.exp(-dt / tw.creep_tau_s[3]))
                       + tw.fast_creep_frac[3] * (1 - math.exp(-dt / tw.fast_tau_s[3])))

    want = crept(t_real[1]) - crept(t_real[0])
    assert late - early == pytest.approx(want, abs=0.03 + abs(want) * 0.1)
    assert abs(late - early) > 0.2


def test_a_table_knock_is_heard_but_weighs_nothing() -> None:
    tw = AI.make_tower(SEED)
    sc = _scene(tw, 12.0, "noisy")
    AI.table_knock(sc, 6.0)
    raw, truth = AI.render(sc)
    d = decode_stream(raw)
    t = truth["knocks"][0]["t"]
    before = d.piezo_window(t - 1.0, t - 0.01)
    jump = np.abs(d.piezo_window(t, t + 0.1) - np.median(before, axis=0)).max(axis=0)
    assert np.sum(jump > 5 * before.std(axis=0)) >= 6 and jump[0] >= jump[7]
    check_knock_weighs_nothing(d, tw, truth["knocks"][0], before=(t - 1.5, t - 0.1))


def test_strikes_arrive_at_the_device_clock() -> None:
    """A strike at real time 5 s shows up at 5 s * (1 + ppm), where the device's clock
    puts it; foam-taped and glued levels alike answer a solid strike."""
    tw = AI.make_tower(_seed_where(lambda t: abs(t.clock.ppm) > 3500))
    onsets = []
    levels = [tw.coupling.index("glue"), tw.coupling.index("foam")]
    levels += [7 - tw.coupling[::-1].index("glue"), 7 - tw.coupling[::-1].index("foam")]
    for level in levels:
        sc = _scene(tw, 6.0)
        sc.hit(5.0, level, 1e-3, "plate", 0.02, 0.015, 1e-4)
        d = decode_stream(AI.render(sc)[0])
        x = d.piezo[:, level].astype(float)
        base = np.median(x[d.piezo_t < 4.5])
        noise = x[d.piezo_t < 4.5].std()
        above = np.nonzero(np.abs(x - base) > 8 * noise + 2)[0]
        assert len(above), level
        onsets.append(d.piezo_t[above[0]])
    want = float(tw.clock.stream(5.0))
    assert abs(want - 5.0) > 0.017
    assert np.all(np.abs(np.array(onsets) - want) < 0.004), (onsets, want)


def test_the_device_clock_wraps() -> None:
    seed = _seed_where(lambda t: 2**32 - t.clock.t_us_first < 18e6)
    raw, truth = AI.render(AI.simulate(seed, "single", 20.0))
    frames = decode_clean(raw)
    stamps = np.array([f.msg.t_us for f in frames if isinstance(f.msg, Piezo)], np.int64)
    assert np.sum(np.diff(stamps) < 0) == 1  # one wrap, and the decoder follows it
    d = decode_stream(raw)
    assert np.all(np.diff(d.piezo_t) > 0) and d.piezo_t[-1] == pytest.approx(20.0, abs=0.02)
    check_truth(truth, SCORE, scenario="single", seed=seed, duration_s=20.0)


# -- damage, acoustic-only ---------------------------------------------------------------


def test_damaged_recording_beside_its_clean_twin(tmp_path: Path) -> None:
    """Bit errors and lost chunks from a flaky USB link, and a reboot when the cable is
    knocked; every message that got through is one of the clean twin's."""
    assert check_damaged_twin(AI, SCORE, 2, 35.0, tmp_path) == {"bits", "lost", "reboot"}


def test_acoustic_sessions_send_no_load() -> None:
    sc = AI.simulate(4, "acoustic", 20.0)
    raw, truth = AI.render(sc)
    frames = decode_clean(raw)
    assert not any(isinstance(f.msg, Load) for f in frames)
    h = frames[0].msg
    assert isinstance(h, Hello) and h.n_load == 8
    assert truth["landings"] and not truth["lifts"] and truth["load_stream"] is False
    check_truth(truth, SCORE, scenario="acoustic", seed=4, duration_s=20.0)
