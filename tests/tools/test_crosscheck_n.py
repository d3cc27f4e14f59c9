"""tools/crosscheck_n/make_recordings_n.py (cross-check model N: the tower as a mechanical
structure of cardboard, written from the contracts, the design, the rules and physics)
writes bytes our decoder reads, truth the scorer reads, and the mechanics its README
claims: momentum through the cells, the tape that shares and then hands over a plate's
load, cubes as masses on the plate beam, the piezo input's high-pass and clamp diodes,
lifted discs and cells, gripped modules, warm-up."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hostapp.protocol import Hello, Piezo, Status
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

SCRIPT = TOOLS / "crosscheck_n" / "make_recordings_n.py"
gen = load_script(SCRIPT, "crosscheck_n_generator")
score = load_script(TOOLS / "crosscheck" / "score.py", "crosscheck_score_for_n")

RECORDINGS = [("single", 3, 30.0), ("rapid", 4, 20.0), ("noisy", 5, 20.0), ("game", 6, 70.0)]


@dataclass
class Decoded(DecodedStream):
    truth: dict[str, Any]
    tower: Any

    def grams(self, ch: int, t0: float, t1: float) -> tuple[np.ndarray, np.ndarray]:
        """Times and grams (above the quiet start) of ``ch``'s fresh readings in [t0, t1)."""
        ok = self.fresh(ch)
        base = np.median(self.load_values[ok & (self.load_t < 0.9), ch])
        sel = ok & (self.load_t >= t0) & (self.load_t < t1)
        return self.load_t[sel], (self.load_values[sel, ch] - base) / self.tower.counts_per_g[ch]


def decode(data: bytes, truth: dict[str, Any], tower: Any) -> Decoded:
    return Decoded(**vars(decode_stream(data)), truth=truth, tower=tower)


@pytest.fixture(scope="module")
def recordings(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Decoded]:
    out = tmp_path_factory.mktemp("model_n")
    result = {}
    for scenario, seed, duration in RECORDINGS:
        bin_path, truth_path = gen.make_recording(seed, scenario, duration, out)
        result[scenario] = decode(bin_path.read_bytes(), json.loads(truth_path.read_text()),
                                  gen.Tower(seed))
    return result


def still_tower(seed: int) -> Any:
    """A tower with its electronic noise and slow drifts switched off."""
    tw = gen.Tower(seed)
    tw.hx_noise[:] = 0.0
    tw.warm_g[:] = 0.0
    tw.tc_g_per_k[:] = 0.0
    tw.hygro_um[:] = 0.0
    tw.hum_counts[:] = 0.0
    return tw


def render_scene(scene: Any) -> Decoded:
    data, truth = gen.render(scene)
    return decode(data, truth, scene.tower)


def conversion_s(tw: Any, ch: int) -> float:
    return float(gen.POLL_S * tw.hx_osc[ch] * (1 + tw.clock_ppm * 1e-6))


# --------------------------------------------------------------------------- wire and truth

def test_crc_and_cobs_follow_the_contract() -> None:
    check_wire_encoder(gen)
    check_row_encoders(gen)


@pytest.mark.parametrize(("scenario", "seed", "duration"), RECORDINGS)
def test_our_decoder_reads_every_frame(recordings: dict[str, Decoded], scenario: str,
                                       seed: int, duration: float) -> None:
    rec = recordings[scenario]
    st, tw = rec.stats, rec.tower
    assert st.crc_errors == 0 and st.framing_errors == 0 and st.lost_messages == 0
    assert st.unknown_types == 0 and st.partial_start == 0 and st.oversize == 0
    assert st.bad_length == 0 and st.resets == 0
    check_seqs_consecutive(rec.frames)
    assert isinstance(rec.frames[0].msg, Hello) and rec.frames[0].seq == 0
    h = rec.hello
    assert (h.proto, h.n_piezo, h.n_load, h.adc_bits) == (1, 8, 8, 10)
    assert (h.piezo_rate_hz, h.load_rate_hz, h.device_id) == (2000, 80, tw.device_id)
    assert st.bytes_in / duration < 100_000
    assert len(rec.piezo) == round(duration * 2000)
    assert max(len(f.msg.samples) for f in rec.frames if isinstance(f.msg, Piezo)) == tw.batch
    assert np.allclose(np.diff(rec.piezo_t), 1 / 2000, atol=5e-6)
    assert abs(np.mean(np.diff(rec.load_t)) - 1 / 80) < 1e-5
    status = [f.msg for f in rec.frames if isinstance(f.msg, Status)]
    assert len(status) in (int(duration) - 1, int(duration))
    assert np.all(np.diff([s.uptime_ms for s in status]) == 1000)


@pytest.mark.parametrize(("scenario", "seed", "duration"), RECORDINGS)
def test_truth_is_what_the_scorer_reads(recordings: dict[str, Decoded], scenario: str,
                                        seed: int, duration: float) -> None:
    truth = recordings[scenario].truth
    check_truth(truth, score, scenario=scenario, seed=seed, duration_s=duration)
    check_scored_perfect(truth, score)
    assert truth["cells"] == gen.Tower(seed).cells
    for x in truth["landings"]:
        assert x["strike_times"][0] == x["t_first_impact"] < x["t"] < x["t_first_impact"] + 2
        assert x["path"][-1] == x["floor"] and x["bounce_times"]
        if x["knocked"]:
            throw = truth["landings"][x["by"]]
            assert throw["caused_knockdown"] and x["from_floor"] in throw["path"]
            assert x["floor"] < x["from_floor"] and x["t_knocked"] < x["t_first_impact"]
    assert truth["quiet_s"] >= 4.3
    for r in truth["removals"]:
        assert any(lf["t"] < r["t"] < c["t"] and lf["exposed"] == r["floor"]
                   for lf, c in zip(truth["lifts"], truth["closes"], strict=True))


def test_a_seed_is_a_tower(tmp_path: Path) -> None:
    check_same_seed_same_bytes(gen, tmp_path)
    builds = [gen.Tower(s) for s in range(1, 40)]
    assert {t.cells for t in builds} == {"matched", "mixed"}
    assert {t.feet for t in builds} == {"felt", "rubber", "bare"}
    assert 4 <= sum(t.stiff_tape >= 0 for t in builds) <= 16  # a few harder towers
    assert {t.batch for t in builds} == {8, 10, 12}


def test_the_first_seconds_are_an_empty_quiet_tower(recordings: dict[str, Decoded]) -> None:
    for rec in recordings.values():
        for ch in range(8):
            _, g = rec.grams(ch, 0.0, 4.0)
            assert len(g) >= 280 and np.std(g) < 0.02
        p = rec.piezo_window(0.0, 4.0)
        assert np.all(np.abs(np.median(p, axis=0) - 512) < 8)
        assert np.all(np.abs(p - np.median(p, axis=0)).max(axis=0) < 20)


# --------------------------------------------------------------------------- mechanics

def test_an_impact_s_momentum_goes_through_its_cell() -> None:
    """README: an impulse I on a plate leaves the plate through its cell and tape; the
    HX711's readings (filter weights sum to one) integrate to I times the cell's static
    share, whatever the ringing; the other cells integrate to nothing."""
    tw = still_tower(4)
    scene = gen.Scene(tw, "single", 4, 3.0, gen.still_room())
    level, xi, impulse = 5, 0.7, 1e-3
    scene.strikes.append(gen.Strike(1.0, f"P{level}", impulse, 2e-4, xi))
    rec = render_scene(scene)
    share = gen.build_modal(tw, None, np.zeros((8, 6))).static_cell_share(level, xi)
    for ch in range(8):
        t, g = rec.grams(ch, 0.9, 2.5)
        assert np.abs(rec.grams(ch, 0.2, 0.9)[1]).max() < 1e-3
        area = g.sum() * conversion_s(tw, ch)
        if ch == level:
            assert area == pytest.approx(impulse * share / gen.GRAM_N, rel=0.06)
            assert g.max() > 2.0  # a spike several times a cube's weight
        else:
            assert abs(area) < 0.02 * impulse / gen.GRAM_N


def test_the_tape_shares_the_load_then_hands_it_over() -> None:
    """README: the tape over the slot carries a share of a plate's load that grows towards
    the far edge (the plate bends); cardboard relaxes, so over minutes part of that share
    moves to the cell. A 5 g weight at the bolt and one at the far edge of a stiffly
    taped plate."""
    seed = next(s for s in range(1, 40) if gen.Tower(s).stiff_tape >= 0)
    tw = still_tower(seed)
    tw.cell_creep[:] = 0.0
    level = tw.stiff_tape
    scene = gen.Scene(tw, "single", seed, 130.0, gen.still_room())
    scene.steps.append(gen.Step(2.0, level, 5.0, 1.0))
    rec = render_scene(scene)
    s_far = float(tw.shunt_share(level, 1.0))
    assert s_far > 2 * float(tw.shunt_share(level, 0.0)) and s_far > 0.1

    def held(t0: float, t1: float) -> float:
        return float(np.median(rec.grams(level, t0, t1)[1]))

    taus, ws = tw.relax_tau, tw.relax_w
    for t in (2.75, 20.0, 60.0, 125.0):
        moved = s_far * tw.relax_frac[level] * np.sum(ws * (1 - np.exp(-(t - 2.0) / taus)))
        span = 0.25 if t < 3 else 0.5
        assert held(t - span, t + span) == pytest.approx(5.0 * (1 - s_far + moved), abs=0.01)
    assert held(124.0, 126.0) - held(2.5, 3.0) > 0.1


def test_resting_cubes_are_masses_on_the_plate_beam() -> None:
    """README: cubes resting on a plate join the beam's modal mass where they lie: ten
    cubes at the far edge pull the plate's lowest mode down much further than ten cubes
    over the bolt, which only add to the mass on the cell."""
    for seed, level in ((6, 4), (9, 2)):
        tw = still_tower(seed)
        lowest = []
        for xi in (None, 1.0, -0.1):
            scene = gen.Scene(tw, "single", seed, 2.5, gen.still_room())
            if xi is not None:
                scene.steps += [gen.Step(0.2, level, 1.0, xi) for _ in range(10)]
            scene.strikes.append(gen.Strike(1.5, f"P{level}", 3e-4, 2e-4, 0.5))
            x = render_scene(scene).piezo_window(1.5, 2.1)[:, level]
            spec = np.abs(np.fft.rfft(x - np.median(x[-100:]), 16384))
            f = np.fft.rfftfreq(16384, 1 / 2000)
            band = (f > 20) & (f < 100)
            lowest.append(f[band][np.argmax(spec[band])])
        bare, far, bolt = lowest
        assert far < 0.7 * bare and bolt > 1.2 * far and bolt < bare


def test_the_piezo_input_is_a_bias_resistor_high_pass() -> None:
    """README: a finger held on a plate bends it; the disc's charge leaks through the
    bias resistors, so the piezo shows the press as a bump decaying with
    tau = R_bias * (C_disc + C_shunt)."""
    tw = still_tower(2)
    level = 3
    scene = gen.Scene(tw, "single", 2, 3.0, gen.still_room())
    scene.presses.append(gen.Press(1.0, 2.8, level, 40.0, 0.8, 10.0))
    tw2 = scene.tower
    rec = render_scene(scene)
    x = rec.piezo_window(0.5, 2.0)[:, level] - np.median(rec.piezo_window(0.2, 0.9)[:, level])
    t = rec.piezo_t[(rec.piezo_t >= 0.5) & (rec.piezo_t < 2.0)]
    tau = float(tw2.tau_hp()[level])
    peak = int(np.argmax(np.abs(x)))
    assert np.abs(x).max() > 15
    sel = (t > t[peak] + 0.01) & (t < t[peak] + 2.5 * tau) & (np.abs(x) > 3)
    slope = np.polyfit(t[sel], np.log(np.abs(x[sel])), 1)[0]
    assert -1 / slope == pytest.approx(tau, rel=0.25)
    assert abs(np.mean(x[(t > 1.5) & (t < 2.0)])) < 2  # held still: no lasting offset


def test_clamp_diodes_leave_the_input_off_its_bias() -> None:
    """README: a strike hard enough to drive the pin past the rails makes the protection
    diodes drain charge; the signal's mean is off the bias afterwards and recovers with
    the input's time constant. A small strike leaves no offset."""
    tw = still_tower(7)
    level = 2
    tau = float(tw.tau_hp()[level])
    found = []
    for impulse in (6e-3, 3e-4):
        scene = gen.Scene(tw, "single", 7, 3.0, gen.still_room())
        scene.strikes.append(gen.Strike(1.0, f"P{level}", impulse, 2e-4, 0.9))
        rec = render_scene(scene)
        x = rec.piezo_window(0.5, 3.0)[:, level] - np.median(rec.piezo_window(0.2, 0.9)[:, level])
        t = rec.piezo_t[(rec.piezo_t >= 0.5) & (rec.piezo_t < 3.0)]
        clipped = int(np.sum((x + 512 > 1020) | (x + 512 < 3)))
        mean = np.convolve(x, np.ones(40) / 40, mode="same")  # 20 ms: the ringing averages out

        def offset(a: float, mean: np.ndarray = mean, t: np.ndarray = t) -> float:
            return float(mean[(t > a) & (t < a + 0.02)].mean())

        found.append((clipped, offset(1.05), offset(1.2)))
    (clip_hard, early, late), (clip_soft, soft, _) = found
    assert clip_hard > 5 and clip_soft == 0
    assert abs(early) > 10 and late / early == pytest.approx(np.exp(-0.15 / tau), rel=0.3)
    assert abs(soft) < 1


def test_crosstalk_comes_through_the_stack_and_falls_with_distance(
        recordings: dict[str, Decoded]) -> None:
    """README: a strike reaches the other levels through the cell, the module and the
    rough rim contacts between modules, at some -20 dB; neighbours hear a little more
    than levels three away; the struck level is by far the loudest."""
    ratios: dict[int, list[float]] = {1: [], 3: []}
    for seed in (1, 2, 3, 5):
        tw = still_tower(seed)
        md = gen.build_modal(tw, None, np.zeros((8, 6)))
        t = np.arange(3000) / 20000
        for level in (2, 3, 4, 5):
            w = md.modal_impulse(md.plate_vector(level, 0.6) * 1e-3, 2e-4)
            y = np.real(np.exp(np.outer(t, md.s)) @ (w[:, None] * md.piezo_out.T))
            peak = np.abs(y).max(axis=0) * tw.counts_per_strain()
            for d in (1, 3):
                for other in (level - d, level + d):
                    if 0 <= other < 8:
                        ratios[d].append(peak[other] / peak[level])
    assert np.median(ratios[1]) > 1.1 * np.median(ratios[3])
    assert 0.02 < np.median(ratios[3]) and np.median(ratios[1]) < 0.2
    rec = recordings["single"]  # and so it is in the bytes
    base = np.median(rec.piezo_window(0, 4), axis=0)
    for x in rec.truth["landings"]:
        if x["path"] == [x["floor"]] and 1 <= x["floor"] <= 6:
            pk = np.abs(rec.piezo_window(x["t_first_impact"], x["t"]) - base).max(axis=0)
            assert pk[x["floor"]] > 2 * max(pk[x["floor"] - 1], pk[x["floor"] + 1])


def test_self_heating_warms_the_cells_up() -> None:
    """README: a freshly powered cell's zero follows warm_g * (1 - exp(-t / tau))."""
    tw = still_tower(7)
    tw.warm_tau = 20.0
    tw.warm_g[:] = np.linspace(-0.2, 0.2, 8)
    room = gen.still_room()
    room.powered_s = 0.0
    rec = render_scene(gen.Scene(tw, "single", 7, 60.0, room))
    for ch in (0, 7):
        ok = rec.fresh(ch)
        g = (rec.load_values[ok, ch] - tw.zero_counts[ch]) / tw.counts_per_g[ch]
        t = rec.load_t[ok]
        expect = tw.warm_g[ch] * (1 - np.exp(-t / 20.0))
        assert np.abs(g - expect)[t > 0.2].max() < 0.002


def test_lifted_modules_fall_silent_and_grips_squeeze_the_cells(
        recordings: dict[str, Decoded]) -> None:
    """contracts.md: cells of lifted modules give no fresh reading; README: their discs
    leave the bias divider on the base board alone (no hum, no sound); the hand holding
    the module below squeezes it, and the tape pulls the exposed level's cell."""
    rec = recordings["game"]
    truth, tw = rec.truth, rec.tower
    assert truth["lifts"] and len(truth["lifts"]) == len(truth["closes"])
    for lift, close in zip(truth["lifts"], truth["closes"], strict=True):
        k = lift["exposed"]
        inside = (rec.load_t > lift["t"] + 1e-3) & (rec.load_t < close["t"])
        above = sum(1 << c for c in range(k + 1, 8))
        assert np.all(rec.load_valid[inside] & above == 0)
        for ch in range(k + 1, 8):
            fresh = rec.load_t[rec.fresh(ch) & (rec.load_t > close["t"])]
            if len(fresh):
                assert 4 * conversion_s(tw, ch) < fresh[0] - close["t"] < 6 * conversion_s(tw, ch)
        quiet = rec.piezo_window(lift["t"] + 0.3, close["t"] - 0.1)[:, k + 1:]
        if len(quiet):
            assert np.all(np.std(quiet, axis=0) < 1.0)
        grip = next(g for g in truth["grips"] if g["level"] == k and g["t0"] < lift["t"])
        _, before = rec.grams(k, grip["t0"] - 1.0, grip["t0"] - 0.1)
        _, held = rec.grams(k, grip["t0"] + 0.3, lift["t"])
        if len(before) > 10 and len(held) > 10:
            assert np.median(held) - np.median(before) == pytest.approx(
                grip["grams"], rel=0.35, abs=0.01)


def test_knocked_cubes_follow_from_the_physics() -> None:
    """README: a cube that lands on a resting one near the hole may push it in (one per
    throw); it falls from that level to a lower one after the knock."""
    scenes = [gen.make_scene(s, "rapid", 90.0) for s in (1, 3, 6)]
    assert sum(len(sc.knockdowns) for sc in scenes) >= 3
    for sc in scenes:
        by_id = {x["id"]: x for x in sc.landings}
        for kd in sc.knockdowns:
            throw, knocked = by_id[kd["by_id"]], by_id[kd["knocked_id"]]
            assert throw["caused_knockdown"] and knocked["knocked"]
            assert throw["t_first_impact"] <= kd["t"] < knocked["t_first_impact"]
            assert kd["from_floor"] in throw["path"] and knocked["floor"] < kd["from_floor"]
    floors = np.bincount([x["floor"] for sc in scenes for x in sc.landings], minlength=8)
    assert np.count_nonzero(floors) >= 6 and floors[0] < floors[7]


def test_command_line(tmp_path: Path) -> None:
    check_command_line(SCRIPT, score, tmp_path / "cli", 12.0)
