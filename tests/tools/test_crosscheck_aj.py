"""Fast checks of the blind cross-check model AJ (tools/crosscheck_aj): a board-game café's
tower, played all evening by one group after another (plates that wear through the evening,
phones buzzing on the table, the espresso machine and the fridge, a dimmer, the café's mixed
cube sets, a firmware whose PIEZO batches grow while it bit-bangs the HX711s)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hostapp.protocol import Hello, Load, Piezo, Status
from tests.scripts import (
    TOOLS,
    SimulatedRecording,
    busy_spans,
    check_damaged_twin,
    check_extra_families_command_line,
    check_game_follows_the_rules,
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

SCRIPT = TOOLS / "crosscheck_aj" / "make_recordings_aj.py"
AJ = load_script(SCRIPT, "make_recordings_aj")
SCORE = load_script(TOOLS / "crosscheck" / "score.py", "crosscheck_score_for_aj")
SEED = 7  # 2000 sets/s in batches of 10, HX711s at 80 SPS
GAME_SEED = 2  # five players; the game reaches Act II in 90 s
DURATIONS = {"single": 30.0, "rapid": 20.0, "noisy": 30.0, "game": 90.0}
CAFE_KEYS = ("knocks", "touches", "phones", "cafe", "noise")


def _busy(truth: dict[str, Any]) -> dict[str, Any]:
    """The truth with the steady fridge left out of its café spells (it hums all evening)."""
    return dict(truth, cafe=[v for v in truth["cafe"] if v["kind"] != "fridge"])

Rec = SimulatedRecording


@pytest.fixture(scope="module")
def recs() -> dict[str, Rec]:
    return recordings_by_scenario(AJ, SEED, GAME_SEED, DURATIONS)


def _spectrum(x: np.ndarray, fs: float, hann: bool = True) -> tuple[np.ndarray, np.ndarray]:
    x = x - x.mean()
    spec = np.abs(np.fft.rfft(x * np.hanning(len(x)) if hann else x))
    return np.fft.rfftfreq(len(x), 1 / fs), spec


def _band(freq: np.ndarray, spec: np.ndarray, f0: float, half: float = 3.0) -> float:
    return float(spec[(freq > f0 - half) & (freq < f0 + half)].max())


def _quiet_scene(seed: int, duration: float, hour: float) -> Any:
    return AJ.Scene(AJ.make_tower(seed), duration, np.random.default_rng(1), "single", hour=hour)


# -- wire -------------------------------------------------------------------------------


def test_wire_encoder_follows_the_contract() -> None:
    check_wire_encoder(AJ)
    check_row_encoders(AJ)
    assert AJ.cobs_encode(bytes(range(1, 255))) == b"\xff" + bytes(range(1, 255))
    raw, _ = AJ.render(AJ.simulate(3, "single", 8.0))
    check_own_framing(AJ, raw)


def test_streams_decode_clean(recs: dict[str, Rec]) -> None:
    for sc, r in recs.items():
        tw = r.tw
        frames = decode_clean(r.raw, sc)
        h = frames[0].msg
        assert isinstance(h, Hello)
        assert (h.proto, h.n_piezo, h.n_load, h.adc_bits) == (1, 8, 8, 10)
        assert (h.piezo_rate_hz, h.load_rate_hz) == (tw.piezo_rate_hz, tw.load_rate_hz)
        assert h.device_id == tw.device_id
        pz = [f.msg for f in frames if isinstance(f.msg, Piezo)]
        assert pz[0].t_us == tw.t0_us < 250_000  # the Nano was just reset by DTR: no wrap
        period = 1_000_000 // tw.piezo_rate_hz
        for a, b in zip(pz, pz[1:], strict=False):  # every set sent once, in order
            assert b.t_us - a.t_us == len(a.samples) * period
        loads = [f.msg for f in frames if isinstance(f.msg, Load)]
        gaps = np.diff(np.array([m.t_us for m in loads], np.int64))
        # Timer2 can only make 80.128 Hz: HELLO says 80, the stamps step 12,480 us
        assert np.all(gaps == tw.load_period_us)
        assert abs(1e6 / tw.load_period_us - tw.load_rate_hz) < 0.5
        for m in loads:  # "0 where not valid"
            assert all(v == 0 for k, v in enumerate(m.values) if not (m.valid >> k) & 1)
        status = [f.msg for f in frames if isinstance(f.msg, Status)]
        assert abs(len(status) - DURATIONS[sc]) <= 1 and status[0].uptime_ms == 1000
        idle = np.median(r.d.piezo_window(0.5, 3.9), axis=0)  # biased at mid-scale
        np.testing.assert_allclose(idle, 512 + tw.bias_lsb, atol=1.0)


def test_piezo_batches_grow_while_the_loop_reads_the_converters(recs: dict[str, Rec]) -> None:
    """The firmware sends ``batch`` sets a message, but a LOAD read (bit-banged, about a
    millisecond) holds the loop: the PIEZO after it carries the sets that piled up."""
    r = recs["single"]
    frames = decode_clean(r.raw)
    n0 = r.tw.batch
    sizes = []
    for prev, f in zip(frames, frames[1:], strict=False):
        if isinstance(f.msg, Piezo):
            n = len(f.msg.samples)
            sizes.append(n)
            assert n0 <= n <= 14
            if n > n0:
                assert isinstance(prev.msg, Load)
    assert n0 in sizes and any(n > n0 for n in sizes)
    assert set(sizes) <= set(range(n0, n0 + 4))
    raw, _ = AJ.render(AJ.simulate(3, "single", 10.0))
    assert len(raw) / 10.0 < 85_000  # within 1 Mbaud 8N1


# -- determinism, command line, truth ---------------------------------------------------


def test_same_seed_same_bytes(tmp_path: Path) -> None:
    check_same_seed_same_bytes(AJ, tmp_path)


def test_towers_differ() -> None:
    towers = [AJ.make_tower(s) for s in range(1, 31)]
    assert len({t.device_id for t in towers}) == 30
    assert {t.load_rate_hz for t in towers} == {10, 80}
    assert {t.piezo_rate_hz for t in towers} == {2000, 2500}
    assert {t.batch for t in towers} == {4, 6, 8, 10}
    assert {t.cells for t in towers} == {"matched", "mixed"}
    json.dumps(towers[0].figures())
    assert AJ.make_tower(3).figures() == AJ.make_tower(3).figures()
    assert AJ.simulate(3, "single", 20.0).tw.figures() == \
        AJ.simulate(3, "game", 20.0).tw.figures()


def test_cli_workers_do_not_change_bytes(tmp_path: Path) -> None:
    check_workers_same_bytes(SCRIPT, SCORE, tmp_path, 6, 10, in_process=AJ.main)


def test_cli_unknown_scenario(tmp_path: Path) -> None:
    check_unknown_scenario_refused(SCRIPT, tmp_path / "o")
    with pytest.raises(ValueError, match="bogus"):
        AJ.simulate(1, "bogus", 20.0)


def test_cli_extra_families(tmp_path: Path) -> None:
    check_extra_families_command_line(SCRIPT, tmp_path / "x")
    long = SCORE.read_truth(tmp_path / "x" / "long_t2.truth.json")
    assert long["duration_s"] == 40.0 and long["evening"]["end_h"] > long["evening"]["start_h"]


def test_truth_is_what_the_scorer_reads(recs: dict[str, Rec]) -> None:
    for sc, r in recs.items():
        check_truth(r.truth, SCORE, scenario=sc, seed=r.seed, duration_s=DURATIONS[sc])
        check_scored_perfect(r.truth, SCORE)
        assert r.truth["model"] == "AJ" and r.truth["cells"] == r.tw.cells
        assert r.truth["tower"] == json.loads(json.dumps(r.tw.figures()))
        assert 4.0 <= r.truth["quiet_until"] <= 7.0
        first = min([x["t_release"] for x in r.truth["landings"]]
                    + [x["t"] for key in CAFE_KEYS for x in _busy(r.truth)[key]])
        assert first >= r.truth["quiet_until"]  # nothing in the first 4-7 s
        for x in r.truth["landings"]:
            assert x["t_release"] <= x["t_first_impact"] <= x["t_on_plate"] <= x["t"]
            assert ("knocked_from" in x) == x["knocked"]
    noisy = recs["noisy"].truth
    assert noisy["knocks"] and noisy["phones"] and {"pump", "grinder"} <= {
        v["kind"] for v in noisy["cafe"]}


def test_a_game_follows_the_rules(recs: dict[str, Rec]) -> None:
    truth = recs["game"].truth
    check_game_follows_the_rules(truth, victims_counted=True)
    game = truth["game"]
    assert set(game["crime_scenes"]) == {t["floor"] for t in game["turns"] if t["victims"]}
    assert any(x["kind"] == "throwback" for x in truth["landings"])
    assert len(truth["lifts"]) == len(truth["closes"]) and truth["removals"]


def test_a_long_evening_plays_several_games() -> None:
    sc = AJ.simulate(2, "long", 1800.0)
    assert len(sc.games) >= 2 and sc.games[0]["phase"] == "over"
    g = sc.games[0]
    assert any(sum(v) >= 10 for v in g["sheet"].values()) or min(g["supply"].values()) <= 0
    assert max(g["suspicion"].values()) == g["suspicion"][g["culprits"][0]]
    assert len({tuple(x["players"]) for x in sc.games}) == len(sc.games)  # new groups
    check_weights_add_up(sc)
    kinds = {v["kind"] for v in sc.vib}
    assert "fridge" in kinds and "pump" in kinds


# -- what the sensors say ------------------------------------------------------------------


def test_lifted_levels_read_invalid(recs: dict[str, Rec]) -> None:
    r = recs["game"]
    assert r.tw.load_rate_hz == 80
    assert any(lf["exposed"] < 7 for lf in r.truth["lifts"])
    check_lifted_levels_invalid(r.d, r.truth, after_lift_s=0.02, fresh_least=0.85,
                                back_within_s=1.0, back_least=0.5)
    status = [f.msg for f in r.d.frames if isinstance(f.msg, Status)]
    assert status[-1].load_timeouts == sum(7 - lf["exposed"] for lf in r.truth["lifts"])


def test_removals_take_the_cubes_off_the_open_level(recs: dict[str, Rec]) -> None:
    check_removals_weighed(recs["game"])


def test_landings_weigh_their_own_cube(recs: dict[str, Rec]) -> None:
    """Each cube of the mixed sets steps its level by its own mass (phones, the pump and the
    knock-box are busy spans too: they move the load readings)."""
    def quiet(truth: dict[str, Any], t0: float, t1: float, own: tuple[float, float]) -> bool:
        return quiet_except(busy_spans(_busy(truth), knock_keys=CAFE_KEYS), t0, t1, own)

    check_landings_weighed(recs, quiet, DURATIONS, least=4, per_g=0.04)


def test_the_cafes_box_mixes_cube_sets() -> None:
    tw = AJ.make_tower(SEED)
    mats = {c.material for c in tw.cubes}
    assert "original" in mats and len(mats) >= 3
    mass = np.array([c.mass_g for c in tw.cubes])
    assert 0.28 <= mass.min() < 0.42 and 0.62 < mass.max() <= 0.85
    by = {m: [c for c in tw.cubes if c.material == m] for m in mats}
    if "abs" in by:  # plastic bounces higher and clicks shorter than the wood
        assert min(c.restitution for c in by["abs"]) > max(c.restitution for c in by["original"])
        assert max(c.contact_ms for c in by["abs"]) < min(c.contact_ms for c in by["original"])
    landed = {x["material"] for s in range(1, 6) for x in AJ.simulate(s, "rapid", 60.0).landings}
    assert len(landed) >= 3


def test_where_cubes_come_to_rest() -> None:
    floors: list[int] = []
    n_knocked = 0
    for seed in range(1, 9):
        sc = AJ.simulate(seed, "rapid", 120.0)
        floors += [x["floor"] for x in sc.landings if not x["knocked"]]
        n_knocked += len(sc.knockdowns)
        check_weights_add_up(sc)
    share = np.bincount(floors, minlength=8) / len(floors)
    assert share[0] < 0.1 and share[5:].sum() > 0.5 and np.all(share > 0.005)
    assert 0.01 < n_knocked / len(floors) < 0.1


def test_plates_ring_lower_and_duller_late_in_the_evening() -> None:
    """The same strike on the top plate at 18:00 and at 23:30: the worn, damp card's modes
    sit lower by sqrt(1 - wear) and die away faster."""
    seed = SEED
    tw = AJ.make_tower(seed)
    out = {}
    for hour in (18.0, 23.5):
        sc = _quiet_scene(seed, 7.0, hour)
        sc.impacts.append(AJ.Impact(5.0, 7, 1.0, 0.8, "plate"))
        d = decode_stream(AJ.render(sc)[0])
        x = d.piezo_window(5.0, 5.25)[:, 7]
        freq, spec = _spectrum(x, tw.piezo_rate_hz, hann=False)
        band = (freq > 200) & (freq < 1000)
        f_peak = freq[band][np.argmax(spec[band])]
        env = np.abs(x - np.median(d.piezo_window(4.0, 4.9)[:, 7]))
        out[hour] = (f_peak, env[:10].max(), env[20:40].max())
        w = float(sc.wear(7, 5.0, sc.strike_times()[7]))
        assert abs(f_peak - tw.mode_f0[7, 0] * np.sqrt(1 - w)) < 8
    assert out[23.5][0] < out[18.0][0] * 0.95
    # duller: what is left 10-20 ms after the strike, relative to the first 5 ms
    assert out[23.5][2] / out[23.5][1] < out[18.0][2] / out[18.0][1]


def test_a_sagging_plate_leans_on_its_ledge() -> None:
    """A worn plate sags onto its card ledge and the cell carries less of a load."""
    tw = AJ.make_tower(SEED)
    lv = int(np.argmax(tw.ledge_k * tw.wear_per_h))
    got = {}
    for hour in (18.0, 23.5):
        sc = _quiet_scene(SEED, 10.0, hour)
        sc.weights.append((5.0, lv, 20.0))
        d = decode_stream(AJ.render(sc)[0])
        sel = d.fresh(lv)
        t = d.load_t[sel]
        v = d.load_values[sel, lv]
        got[hour] = (np.median(v[t > 7.0]) - np.median(v[(t > 2) & (t < 4.8)])) / tw.cpg[lv]
        w = float(sc.wear(lv, 6.0, sc.strike_times()[lv]))
        assert got[hour] == pytest.approx(20.0 * (1 - tw.ledge_k[lv] * w), abs=0.02)
    assert got[23.5] < got[18.0] - 0.05


def test_a_phone_on_the_table_buzzes_at_217_hz() -> None:
    """A GSM call: 577 us bursts every 4.615 ms, rectified on the 1 MOhm pins (a 216.7 Hz
    line and its harmonics, every 26th frame idle) and an offset in the bridge inputs."""
    tw = AJ.make_tower(SEED)
    sc = _quiet_scene(SEED, 14.0, 19.0)
    sc.phone(6.0, "call")
    sc.phones[-1].update(t_end=13.0, amp_lsb=25.0)
    d = decode_stream(AJ.render(sc)[0])
    freq, before = _spectrum(d.piezo_window(1.0, 5.9)[:, 3], tw.piezo_rate_hz)
    _, during = _spectrum(d.piezo_window(7.0, 11.9)[:, 3], tw.piezo_rate_hz)
    f_gsm = 1 / AJ.GSM_FRAME_S
    assert _band(freq, during, f_gsm) > 20 * _band(freq, before, f_gsm)
    assert _band(freq, during, 2 * f_gsm) > 10 * _band(freq, before, 2 * f_gsm)
    # the idle frame: lines 8.3 Hz either side of the carrier's comb
    assert _band(freq, during, f_gsm - f_gsm / 26, 1.0) > 3 * _band(freq, before,
                                                                   f_gsm - f_gsm / 26, 1.0)
    for ch in range(8):
        sel = d.fresh(ch)
        v, t = d.load_values[sel, ch], d.load_t[sel]
        shift = (np.median(v[(t > 8) & (t < 12.5)]) - np.median(v[(t > 2) & (t < 5.5)]))
        want = tw.rf_load_g[ch] * 25.0 / 12.0 * AJ.GSM_SLOT_S / AJ.GSM_FRAME_S * 25 / 26 * 4
        assert shift / tw.cpg[ch] == pytest.approx(want, abs=0.004)


def test_the_espresso_pump_shakes_the_table_at_mains_frequency() -> None:
    tw = AJ.make_tower(SEED)
    sc = _quiet_scene(SEED, 50.0, 20.0)
    t_end = sc.espresso(5.0)
    pump = next(v for v in sc.vib if v["kind"] == "pump")
    assert pump["t_end"] - pump["t"] >= 20 and t_end > pump["t_end"]
    assert [n["kind"] for n in sc.noise].count("knockbox") >= 2
    pump["accel"] = 0.05
    d = decode_stream(AJ.render(sc)[0])
    freq, before = _spectrum(d.piezo_window(pump["t"] - 4.0, pump["t"] - 0.5)[:, 0],
                             tw.piezo_rate_hz)
    _, during = _spectrum(d.piezo_window(pump["t"] + 2.0, pump["t"] + 5.5)[:, 0],
                          tw.piezo_rate_hz)
    # the mains hum has 50 and 150 Hz already; the half-wave piston adds 100 Hz
    assert _band(freq, during, 2 * tw.mains_hz, 1.0) > 5 * _band(freq, before, 2 * tw.mains_hz,
                                                                 1.0)
    assert _band(freq, during, tw.mains_hz, 1.0) > 1.3 * _band(freq, before, tw.mains_hz, 1.0)


def test_dimmed_lights_click_on_the_pins() -> None:
    """After the owner dims the lights, the triac's firing steps couple into the pins."""
    tw = AJ.make_tower(SEED)
    lines = {}
    for hour in (tw.dim_hour - 0.5, tw.dim_hour + 0.5):
        sc = _quiet_scene(SEED, 5.0, hour)
        d = decode_stream(AJ.render(sc)[0])
        ch = int(np.argmax(tw.dimmer_lsb))
        freq, spec = _spectrum(d.piezo_window(0.5, 4.5)[:, ch], tw.piezo_rate_hz)
        # the steps alternate each half cycle: odd harmonics of the mains, far above the hum
        lines[hour] = [_band(freq, spec, h * tw.mains_hz, 1.0) for h in (5, 7, 9)]
    assert np.all(np.array(lines[tw.dim_hour + 0.5]) > 2.5 * np.array(lines[tw.dim_hour - 0.5]))


def test_a_table_knock_is_heard_but_weighs_nothing() -> None:
    table_knock_heard(AJ, SEED, heard_over_s=0.1, louder=5.0)


# -- damage, acoustic-only ---------------------------------------------------------------


def test_damaged_recording_beside_its_clean_twin(tmp_path: Path) -> None:
    assert check_damaged_twin(AJ, SCORE, 1, 35.0, tmp_path) == {"bits", "lost", "reboot"}


def test_acoustic_sessions_send_no_load() -> None:
    sc = AJ.simulate(4, "acoustic", 20.0)
    raw, truth = AJ.render(sc)
    frames = decode_clean(raw)
    assert not any(isinstance(f.msg, Load) for f in frames)
    h = frames[0].msg
    assert isinstance(h, Hello) and h.n_load == 8
    assert truth["landings"] and not truth["lifts"] and truth["load_stream"] is False
    check_truth(truth, SCORE, scenario="acoustic", seed=4, duration_s=20.0)
