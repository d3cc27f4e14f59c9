"""tools/crosscheck_m/make_recordings_m.py (cross-check model M: a by-the-book simulator of a
real home tower played by real families, written from the contracts, the design, the rules
and datasheets) writes bytes our decoder reads, truth the scorer reads, and the physics its
README claims: cubes spread over the floors by the holes' geometry, each landing steps its
own cell by the cube's mass, the first strike is loudest on its own disc with wall-borne
crosstalk falling per joint, HX711s read together at the slowest chip's pace with sinc^4
settling, soft plates leave impact spikes, a rubbing plate holds load back, lifted modules
go silent and come back after settling, fingers press before cubes leave, a game by the
rules."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hostapp.protocol import Load, Piezo
from tests.scripts import (
    TOOLS,
    DecodedStream,
    check_command_line,
    check_row_encoders,
    check_same_seed_same_bytes,
    check_scored_perfect,
    check_seqs_consecutive,
    check_truth,
    check_wire_encoder,
    decode_stream,
    load_script,
)

SCRIPT = TOOLS / "crosscheck_m" / "make_recordings_m.py"
gen = load_script(SCRIPT, "crosscheck_m_generator")
score = load_script(TOOLS / "crosscheck" / "score.py", "crosscheck_score_for_m")

# (scenario, seed, seconds). Tower 4: mixed cells, four of them wired the other way round,
# the app pinging. Tower 7: a throw at 9.7 s knocks a cube from level 5 down to level 4;
# 60 Hz mains on ribbon cable (and a party). Tower 11: quick series. Tower 5: a game that
# opens levels 2 and 3 in its first 70 s; its level-4 plate rubs on a wall.
RECORDINGS = [("single", 4, 30.0), ("single", 7, 30.0), ("rapid", 11, 30.0),
              ("noisy", 7, 25.0), ("game", 5, 70.0)]


@dataclass
class Decoded(DecodedStream):
    truth: dict[str, Any]
    tower: Any

    def msgs(self, name: str) -> list[Any]:
        return [f.msg for f in self.frames if type(f.msg).__name__ == name]

    def grams(self, ch: int, t0: float, t1: float) -> np.ndarray:
        """Fresh readings of ``ch`` in [t0, t1) in grams above the quiet start."""
        tw = self.tower
        ok = self.fresh(ch)
        base = np.median(self.load_values[ok & (self.load_t < 4.0), ch])
        sel = ok & (self.load_t >= t0) & (self.load_t < t1)
        return (self.load_values[sel, ch] - base) / (tw.counts_per_g[ch] * tw.cell_sign[ch])


def decode(data: bytes, truth: dict[str, Any], tower: Any) -> Decoded:
    return Decoded(**vars(decode_stream(data)), truth=truth, tower=tower)


def key(scenario: str, seed: int) -> str:
    return f"{scenario}_t{seed}"


@pytest.fixture(scope="module")
def recordings(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Decoded]:
    out = tmp_path_factory.mktemp("model_m")
    result = {}
    for scenario, seed, duration in RECORDINGS:
        b, t = gen.make_recording(seed, scenario, duration, out)
        result[key(scenario, seed)] = decode(b.read_bytes(), json.loads(t.read_text()),
                                             gen.Tower(seed))
    return result


def quiet_scene(seed: int, duration: float) -> tuple[Any, Any, Any]:
    """A tower in a silent room with noiseless, drift-free cells (to see one effect alone)."""
    tw = gen.Tower(seed)
    tw.hx_noise_counts[:] = 0.0
    tw.drift_mg_rt_s[:] = 0.0
    room = gen.make_room("single", np.random.default_rng(0))
    room.talk_per_s = 0.0
    room.hum_gain = 0.0
    return tw, room, gen.World(tw, np.random.default_rng(1), duration)


def render_scene(seed: int, duration: float, tw: Any, room: Any, world: Any) -> Decoded:
    data, truth = gen.render_world(seed, "single", duration, tw, room, world)
    return decode(data, truth, tw)


def landing_step(rec: Decoded, x: dict[str, Any]) -> float | None:
    """Load change on the landing's floor from before its first impact to after its rest."""
    f = x["floor"]
    before = rec.grams(f, x["t_first_impact"] - 0.8, x["t_first_impact"] - 0.05)
    after = rec.grams(f, x["t"] + 0.35, x["t"] + 0.9)
    if len(before) < 5 or len(after) < 5:
        return None
    return float(np.median(after) - np.median(before))


# --------------------------------------------------------------------------- wire and truth

def test_crc_and_cobs_follow_the_contract() -> None:
    check_wire_encoder(gen)
    check_row_encoders(gen)


@pytest.mark.parametrize(("scenario", "seed", "duration"), RECORDINGS)
def test_our_decoder_reads_every_frame(recordings: dict[str, Decoded], scenario: str,
                                       seed: int, duration: float) -> None:
    rec = recordings[key(scenario, seed)]
    st, tw = rec.stats, rec.tower
    assert st.crc_errors == 0 and st.framing_errors == 0 and st.lost_messages == 0
    assert st.unknown_types == 0 and st.partial_start == 0 and st.oversize == 0
    assert st.bad_length == 0 and st.resets == 0
    check_seqs_consecutive(rec.frames)
    assert type(rec.frames[0].msg).__name__ == "Hello" and rec.frames[0].seq == 0
    (h,) = rec.msgs("Hello")
    assert (h.proto, h.n_piezo, h.n_load, h.adc_bits) == (1, 8, 8, 10)
    assert (h.piezo_rate_hz, h.load_rate_hz, h.device_id) == (2000, 80, tw.device_id)
    assert (h.fw_major, h.fw_minor, h.fw_patch) == tw.fw_version
    assert st.bytes_in / duration < 100_000  # fits 1 Mbaud 8N1
    piezo = [f.msg for f in rec.frames if isinstance(f.msg, Piezo)]
    assert {len(m.samples) for m in piezo} == {tw.piezo_batch}
    step = np.diff([m.t_us for m in piezo])  # timer-paced sets, stamped by micros()
    assert np.all(np.abs(step - tw.piezo_batch * 500) <= 4) and np.all(step % 4 == 0)
    assert duration * 2000 <= len(rec.piezo) < duration * 2000 + tw.piezo_batch
    status = rec.msgs("Status")
    assert abs(len(status) - duration / tw.status_period_s) <= 1
    up = np.diff([s.uptime_ms for s in status])
    assert np.all(np.abs(up - 1000 * tw.status_period_s) <= 1)
    assert all(20 <= s.cpu_load_pct <= 45 and s.piezo_overruns == 0 for s in status)
    assert bool(rec.msgs("Pong")) == tw.host_pings


@pytest.mark.parametrize(("scenario", "seed", "duration"), RECORDINGS)
def test_truth_is_what_the_scorer_reads(recordings: dict[str, Decoded], scenario: str,
                                        seed: int, duration: float) -> None:
    truth = recordings[key(scenario, seed)].truth
    check_truth(truth, score, scenario=scenario, seed=seed, duration_s=duration)
    check_scored_perfect(truth, score)
    assert truth["cells"] == gen.Tower(seed).cells
    assert truth["tower"] == json.loads(json.dumps(gen.Tower(seed).describe()))
    assert truth["quiet_s"] >= 4.3
    for x in truth["landings"]:
        times = [s[0] for s in x["strikes"]]
        assert times[0] == x["t_first_impact"] and all(
            x["t_first_impact"] <= s <= x["t"] for s in times)
        assert 0.02 < x["t"] - x["t_first_impact"] < 1.5
        if x["knocked"]:
            throw = truth["landings"][x["by"]]
            assert throw["caused_knockdown"] and x["floor"] < x["from_floor"]
            assert x["t_knocked"] < x["t_first_impact"]
            assert [x["from_floor"], "plate"] in throw["path"]


def test_a_seed_is_a_tower(tmp_path: Path) -> None:
    check_same_seed_same_bytes(gen, tmp_path)
    assert gen.Tower(7).describe() != gen.Tower(8).describe()
    builds = [gen.Tower(s) for s in range(1, 41)]
    assert {t.cells for t in builds} == {"matched", "mixed"}
    assert {t.piezo_batch for t in builds} == {5, 8, 10, 12}
    assert {t.mains_hz for t in builds} == {50.0, 60.0}
    assert any(t.resonator for t in builds) and not all(t.resonator for t in builds)
    assert any((t.cell_sign < 0).any() for t in builds if t.cells == "mixed")
    assert all((t.cell_sign > 0).all() for t in builds if t.cells == "matched")
    assert 0.1 < np.mean([t.rubbing >= 0 for t in builds]) < 0.35
    cpg = np.concatenate([t.counts_per_g for t in builds])  # 0.45-1.15 mV/V at gain 128
    assert 9_000 < cpg.min() and cpg.max() < 26_000
    assert all(np.all(np.diff(t.hole_half[1:]) < 0.001) for t in builds)  # smaller upwards
    assert all(0.3 <= t.cube_mass_g <= 0.8 for t in builds)


def test_the_first_seconds_are_an_empty_quiet_tower(recordings: dict[str, Decoded]) -> None:
    for rec in recordings.values():
        tw = rec.tower
        p = rec.piezo_window(0.0, 4.0)
        assert np.all(np.abs(np.median(p, axis=0) - 512) < 12)  # biased at mid-scale
        hum = rec.truth["room"]["hum_gain"] * tw.hum_codes * tw.hum_harm.sum()
        assert np.all(np.abs(p - np.median(p, axis=0)).max(axis=0) < hum + 6)
        for ch in range(8):
            g = rec.grams(ch, 0.0, 4.0)
            assert len(g) > 280 and np.std(g) < 0.01


# --------------------------------------------------------------------------- cubes and cells

def test_cubes_spread_over_the_floors_from_the_geometry() -> None:
    """README: holes smaller upwards and off the axis; few cubes reach the ground floor,
    every floor gets some; a cube rests 0.05-1 s after its first strike."""
    floors = np.zeros(8)
    rests = []
    knocked = 0
    for seed in (1, 2, 3):
        world = gen.World(gen.Tower(seed), np.random.default_rng(seed), 1e6)
        t = 5.0
        for _ in range(80):
            x = world.throw(t, "gray", "test", "p")
            floors[x["floor"]] += 1
            rests.append(x["t"] - x["t_first_impact"])
            t = x["t"] + 2.0
        knocked += len(world.knockdowns)
    share = floors / floors.sum()
    assert np.all(share > 0.01) and share[0] < 0.12
    assert share[5:].sum() > share[:3].sum()  # upper floors catch more
    assert 0.05 < np.min(rests) and np.max(rests) < 1.0 and 0.15 < np.median(rests) < 0.45
    assert knocked >= 2  # a filling tower: falling cubes push resting ones over the rim


def test_a_landing_steps_its_own_cell_by_the_cube_mass(recordings: dict[str, Decoded]) -> None:
    """Each cube adds its mass on the level where it rests and nowhere else (no cell reads
    position: bar cells, eccentric error under 1 %); cells wired the other way round count
    down."""
    checked = 0
    for rec in recordings.values():
        tw, truth = rec.tower, rec.truth
        events = [x["t_first_impact"] for x in truth["landings"]] + [
            x["t"] for k in ("lifts", "closes", "removals", "knocks") for x in truth[k]]
        for x in truth["landings"]:
            if x["floor"] == tw.rubbing or any(
                    0 < abs(e - x["t_first_impact"]) < 1.6 for e in events):
                continue
            step = landing_step(rec, x)
            if step is None:
                continue
            assert step == pytest.approx(x["mass_g"], abs=0.02 + 0.01 * x["mass_g"])
            others = [c for c in range(8) if c != x["floor"] and rec.fresh(c).all()]
            for c in others[:3]:
                y = dict(x, floor=c)
                assert abs(landing_step(rec, y) or 0.0) < 0.02
            checked += 1
    assert checked >= 10
    rec = recordings[key("single", 4)]
    raw = [x for x in rec.truth["landings"] if rec.tower.cell_sign[x["floor"]] < 0]
    assert raw
    for x in raw:
        f = x["floor"]
        ok = rec.fresh(f)
        pre = rec.load_values[ok & (rec.load_t < x["t_first_impact"] - 0.05), f][-5:]
        post = rec.load_values[ok & (rec.load_t > x["t"] + 0.35), f][:5]
        assert np.median(post) < np.median(pre) - 0.8 * x["mass_g"] * rec.tower.counts_per_g[f]


def test_a_knocked_cube_leaves_its_floor_and_lands_lower(recordings: dict[str, Decoded]) -> None:
    """README: a falling cube that strikes a resting one pushes it; if the push carries it
    over the rim of the hole it falls on: one throw moves the load of two levels."""
    rec = recordings[key("single", 7)]
    (kd,) = rec.truth["knockdowns"]
    knocked = rec.truth["landings"][kd["landing"]]
    throw = rec.truth["landings"][kd["by"]]
    assert (kd["from_floor"], kd["to_floor"]) == (5, 4) and throw["floor"] == 5
    assert any(s[2] == "cube" and s[1] == 5 for s in throw["strikes"])
    # the thrown cube took the knocked one's place on level 5: its load hardly moves
    net = landing_step(rec, throw)
    assert net is not None and abs(net - (throw["mass_g"] - knocked["mass_g"])) < 0.03
    lower = landing_step(rec, dict(knocked, t_first_impact=throw["t_first_impact"]))
    assert lower == pytest.approx(knocked["mass_g"], abs=0.03)


def test_the_first_strike_is_loudest_on_its_own_disc(recordings: dict[str, Decoded]) -> None:
    """README: a strike drives the modes of the plate it hits; other levels hear it through
    the card joints, 8-14 dB per joint and more at high frequencies."""
    hits = total = 0
    drop: dict[int, list[float]] = {1: [], 2: []}
    for rec in recordings.values():
        if rec.truth["scenario"] not in ("single", "rapid"):
            continue
        base = np.median(rec.piezo_window(0.0, 4.0), axis=0)
        for x in rec.truth["landings"]:
            t, lev, kind = x["strikes"][0]  # rim and wall hits: on the disc above the cube
            if x["knocked"]:
                continue
            dev = np.abs(rec.piezo_window(t, t + 0.004) - base).max(axis=0)
            quiet = np.abs(rec.piezo_window(t - 0.05, t - 0.002) - base).max()
            if quiet > 10:  # the cube before still rattling (rapid series)
                continue
            total += 1
            hits += int(np.argmax(dev) == lev)
            if dev[lev] > 40 and kind == "plate":
                for d in drop:
                    if lev - d >= 0:
                        drop[d].append(20 * np.log10(max(dev[lev - d], 0.5) / dev[lev]))
    assert total >= 20 and hits >= 0.9 * total
    assert np.median(drop[1]) < -7 and np.median(drop[2]) < np.median(drop[1]) - 6


def test_a_table_knock_shakes_every_level() -> None:
    """README: a knock moves the whole stack at once: every plate's rigid mode on its cell
    rings (every disc hears it, about as loud on each level), every load wiggles by the
    plate's inertia, and every cube that rests stays where it is."""
    tw, room, world = quiet_scene(2, 7.0)
    world.knock(5.0, 5.0)
    rec = render_scene(2, 7.0, tw, room, world)
    base = np.median(rec.piezo_window(0.0, 4.0), axis=0)
    dev = np.abs(rec.piezo_window(5.0, 5.15) - base).max(axis=0)
    assert np.all(dev > 8) and dev.max() < 6 * dev.min()
    assert np.abs(rec.piezo_window(4.0, 4.99) - base).max() <= 3
    for c in range(8):
        g = rec.grams(c, 4.9, 5.3)
        assert np.ptp(g) > 0.05 and abs(np.median(rec.grams(c, 6.0, 7.0))) < 0.002


# --------------------------------------------------------------------------- the electronics

def test_the_load_stream_follows_the_slowest_hx711(recordings: dict[str, Decoded]) -> None:
    """README: one shared SCK, so the firmware clocks all eight out once every chip has
    data: LOAD comes at the pace of the slowest on-chip oscillator, with every bit set."""
    for rec in recordings.values():
        tw = rec.tower
        gaps = np.diff(rec.load_t)
        assert np.median(gaps) == pytest.approx(tw.hx_period.max(), rel=2e-3)
        if not rec.truth["lifts"]:
            assert np.all(rec.load_valid == 0xFF)
            assert np.all(gaps < tw.hx_period.max() + 1e-4)
    h = recordings[key("single", 4)].msgs("Hello")[0]
    assert h.load_rate_hz == 80  # the nominal rate; the chips run 2-5 % slow or fast


def test_hum_sits_on_the_mains_as_the_device_clock_sees_it(
        recordings: dict[str, Decoded]) -> None:
    rec = recordings[key("noisy", 7)]
    tw = rec.tower
    assert tw.mains_hz == 60.0 and tw.wiring == "ribbon"
    x = rec.piezo_window(0.0, 4.0)
    x = x - x.mean(axis=0)
    spec = np.abs(np.fft.rfft(x * np.hanning(len(x))[:, None], axis=0)).sum(axis=1)
    f = np.fft.rfftfreq(len(x), 1 / 2000)
    band = (f > 40) & (f < 75)
    assert abs(f[band][np.argmax(spec[band])] - 60 / (1 + tw.clock_err)) < 0.5
    third = (f > 175) & (f < 185)
    floor = (f > 200) & (f < 280)
    assert spec[third].max() > 5 * np.median(spec[floor])


def test_hx711_settles_over_four_conversions() -> None:
    """README: the HX711's sinc^4 filter reads a step as a ramp over four conversions."""
    tw, room, world = quiet_scene(9, 9.0)
    tw.f_rigid[:] = 100.0  # a stiff mount: no ringing to speak of
    world.weights.append((5.0, 2, 1.0))
    rec = render_scene(9, 9.0, tw, room, world)
    period = tw.hx_period[2]
    ok = rec.fresh(2)
    t = rec.load_t[ok]
    g = rec.grams(2, 0.0, 9.0)
    assert np.all(np.abs(g[t < 5.0]) < 0.002)
    ramp = g[(t > 5.0) & (t < 5.0 + 5 * period)]
    assert np.sum((ramp > 0.05) & (ramp < 0.95)) >= 2 and np.all(np.diff(ramp) > -0.01)
    assert np.all(np.abs(g[t > 5.0 + 5 * period] - 1.0) < 0.01)


def test_an_impact_spike_carries_the_strike_s_momentum() -> None:
    """README: a strike's impulse goes through the plate into its cell: averaged by the
    HX711 it is a spike of a few grams whose area (grams x seconds) is the impulse, on that
    level only, and the plate ringing on its cell adds wiggles around it."""
    tw, room, world = quiet_scene(9, 8.0)
    world.strikes.append(gen.Strike(5.0, 2, 8e-4, "plate", np.zeros(2), 5e-4, 0.0, True))
    rec = render_scene(9, 8.0, tw, room, world)
    g = rec.grams(2, 4.99, 5.4)
    area = g.sum() * np.median(np.diff(rec.load_t))
    assert area == pytest.approx(8e-4 / (9.80665e-3), rel=0.15)
    assert 0.5 < g.max() < 20 * 8e-4 / 9.80665e-3 / 0.05
    assert all(np.abs(rec.grams(c, 4.9, 5.5)).max() < 0.002 for c in range(8) if c != 2)


def test_a_rubbing_plate_holds_load_back_until_shaken() -> None:
    """README: a plate touching a wall passes load through static friction: a new cube
    reads short by up to the friction band; the next strike shakes most of it loose."""
    tw, room, world = quiet_scene(3, 10.0)
    assert tw.rubbing == 3
    tw.rub_g = 0.1
    tw.f_rigid[:] = 100.0
    world.weights.append((5.0, 3, 0.5))
    world.strikes.append(gen.Strike(7.5, 3, 1e-3, "plate", np.zeros(2), 5e-4, 0.5, True))
    rec = render_scene(3, 10.0, tw, room, world)
    held = np.median(rec.grams(3, 6.0, 7.4))
    shaken = np.median(rec.grams(3, 8.5, 10.0))
    assert held == pytest.approx(0.4, abs=0.005)
    assert 0.45 < shaken < 0.5


# --------------------------------------------------------------------------- the game

def test_lifted_modules_go_silent_and_come_back_settled(recordings: dict[str, Decoded]) -> None:
    """contracts.md: cells of lifted modules give no fresh reading. README: the firmware
    waits 20 ms for them, counts load_timeouts, flags the absence in STATUS; back on the
    tower each HX711 powers up and reports after four conversions; its disc is cut off."""
    rec = recordings[key("game", 5)]
    truth, tw = rec.truth, rec.tower
    assert [lf["exposed"] for lf in truth["lifts"]] == [2, 3] and len(truth["closes"]) == 2
    base = np.median(rec.piezo_window(0.0, 4.0), axis=0)
    for lift, close in zip(truth["lifts"], truth["closes"], strict=True):
        k = lift["exposed"]
        above = sum(1 << c for c in range(k + 1, 8))
        inside = (rec.load_t > lift["t"] + 0.021) & (rec.load_t < close["t"])
        assert np.all(rec.load_valid[inside] & above == 0)
        assert np.all(rec.load_valid[inside] & (1 << k))  # the exposed level still weighs
        assert np.all(rec.load_valid[(rec.load_t < lift["t"]) & (rec.load_t > lift["t"] - 1)]
                      == 0xFF)
        for ch in range(k + 1, 8):
            back = rec.load_t[rec.fresh(ch) & (rec.load_t > close["t"])][0] - close["t"]
            assert 4 * tw.hx_period[ch] < back < 4 * tw.hx_period[ch] + 0.008 + 0.014
        cut = rec.piezo_window(lift["t"] + 0.05, close["t"] - 0.01)[:, k + 1:] - base[k + 1:]
        assert np.abs(cut).max() < 0.3 * tw.hum_codes.max() * tw.hum_harm.sum() + 5
    status = rec.msgs("Status")
    up = np.array([s.uptime_ms for s in status]) / 1000 - 0.002
    timeouts = np.array([s.load_timeouts for s in status])
    flags = np.array([s.flags for s in status])
    assert timeouts[-1] == sum(7 - lf["exposed"] for lf in truth["lifts"])
    for lift, close in zip(truth["lifts"], truth["closes"], strict=True):
        assert np.all(flags[(up > lift["t"] + 0.05) & (up < close["t"] - 0.05)] & 1)
    assert not np.any(flags[up < truth["lifts"][0]["t"]])


def test_fingers_press_before_the_cubes_leave(recordings: dict[str, Decoded]) -> None:
    rec = recordings[key("game", 5)]
    removals = rec.truth["removals"]
    assert len(removals) >= 2
    for r in removals:
        f = r["floor"]
        assert f != rec.tower.rubbing
        before = np.median(rec.grams(f, r["t_touch"] - 0.6, r["t_touch"] - 0.05))
        during = rec.grams(f, r["t_touch"], r["t"])
        after = np.median(rec.grams(f, r["t"] + 0.3, r["t"] + 0.8))
        assert during.max() - before > min(2.0, 0.5 * r["press_g"])
        assert after - before == pytest.approx(-r["mass_g"], abs=0.03)


def test_a_game_is_played_by_the_rules(recordings: dict[str, Decoded]) -> None:
    truth = recordings[key("game", 5)].truth
    game = truth["game"]
    throws = [e for e in game["log"] if e["do"] == "throw"]
    n = len(game["players"])
    assert [e["colour"] for e in throws[:2]] == ["red", "red"]
    prologue = [e["colour"] for e in throws[2:2 + 2 * n]]
    assert sorted(prologue) == sorted(game["players"] * 2)
    assert all(prologue[i] == prologue[i + 1] for i in range(0, 2 * n, 2))  # two each
    t_throws = [x["t_first_impact"] for x in truth["landings"] if not x["knocked"]]
    for lift, close in zip(truth["lifts"], truth["closes"], strict=True):
        assert not any(lift["t"] - 0.5 < t < close["t"] for t in t_throws)  # closed to throw
        taken = [r for r in truth["removals"] if lift["t"] < r["t"] < close["t"]]
        assert all(r["floor"] == lift["exposed"] for r in taken)
        back = [x for x in truth["landings"] if x["why"] == "thrown back"
                and close["t"] < x["t_release"] < close["t"] + 40]
        clues = sum(c != "red" for r in taken for c in r["colours"])
        assert len(back) >= clues
    if game["crime_scenes"]:
        reds = [r for r in truth["removals"] if "red" in r["colours"]]
        assert sorted({r["floor"] for r in reds}) == game["crime_scenes"]


def test_command_line(tmp_path: Path) -> None:
    check_command_line(SCRIPT, score, tmp_path / "cli", 12.0)


def test_loads_decode_as_load_messages(recordings: dict[str, Decoded]) -> None:
    rec = recordings[key("single", 4)]
    loads = [f.msg for f in rec.frames if isinstance(f.msg, Load)]
    assert len(loads) == len(rec.load_t) > 30 * 75
