"""tools/crosscheck_l/make_recordings_l.py (cross-check model L, written from the contracts,
the design, the rules and physics) writes bytes our decoder reads, truth the scorer reads,
and the physics its README claims: the ADC's scan with its sample-and-hold ghost, clipping
and hum; HX711s with their own oscillators and sinc^4 settling; creeping cells; floating
inputs and silent converters while modules are lifted; bouncing, knocked-down cubes."""

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

SCRIPT = TOOLS / "crosscheck_l" / "make_recordings_l.py"
gen = load_script(SCRIPT, "crosscheck_l_generator")
score = load_script(TOOLS / "crosscheck" / "score.py", "crosscheck_score_for_l")

# (scenario, seed, seconds). Tower 1: all eight HX711s at 10 SPS, two cells mounted the
# other way round. Tower 25: a cracked disc on level 5, two boards at 10 SPS. Tower 2: 80 SPS,
# mixed cells. Tower 3: a noisy room. Tower 23: a game that opens levels 4 and 1 within
# its minute, with HX711s at 10 SPS on levels 2, 6 and 7 among 80 SPS ones.
RECORDINGS = [("single", 1, 30.0), ("single", 25, 30.0), ("rapid", 2, 20.0),
              ("noisy", 3, 25.0), ("game", 23, 60.0)]


@dataclass
class Decoded(DecodedStream):
    truth: dict[str, Any]
    tower: Any

    def grams(self, ch: int, t0: float, t1: float) -> np.ndarray:
        """Fresh readings of ``ch`` in [t0, t1), grams above the quiet start."""
        ok = (self.load_valid >> ch) & 1 == 1
        quiet = ok & (self.load_t < 4.0)
        base = np.median(self.load_values[quiet, ch])
        sel = ok & (self.load_t >= t0) & (self.load_t < t1)
        return (self.load_values[sel, ch] - base) / self.tower.counts_per_g[ch]


def decode(data: bytes, truth: dict[str, Any], tower: Any) -> Decoded:
    return Decoded(**vars(decode_stream(data)), truth=truth, tower=tower)


def hum_basis(t: np.ndarray, tower: Any) -> np.ndarray:
    """Columns of a constant and the mains harmonics at times ``t`` (to fit hum away)."""
    f = tower.mains_hz / (1 + tower.clock_error)
    cols = [np.ones_like(t)]
    for h in (1, 2, 3, 5, 7):
        cols += [np.sin(2 * np.pi * h * f * t), np.cos(2 * np.pi * h * f * t)]
    return np.stack(cols, axis=1)


def without_hum(rec: Decoded, t0: float, t1: float) -> np.ndarray:
    """Piezo codes in [t0, t1) with bias and hum fitted away, channel by channel."""
    x = rec.piezo_window(t0, t1)
    basis = hum_basis(rec.piezo_t[(rec.piezo_t >= t0) & (rec.piezo_t < t1)], rec.tower)
    return x - basis @ np.linalg.lstsq(basis, x, rcond=None)[0]


def key(scenario: str, seed: int) -> str:
    return f"{scenario}_t{seed}"


@pytest.fixture(scope="module")
def recordings(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Decoded]:
    out = tmp_path_factory.mktemp("model_l")
    result = {}
    for scenario, seed, duration in RECORDINGS:
        bin_path, truth_path = gen.make_recording(seed, scenario, duration, out)
        result[key(scenario, seed)] = decode(bin_path.read_bytes(),
                                             json.loads(truth_path.read_text()), gen.Tower(seed))
    return result


def render_scene(scene: Any) -> Decoded:
    """Bytes of a hand-made scene, decoded by our decoder."""
    data, truth = gen.render(scene)
    return decode(data, truth, scene.tower)


def quiet_tower(seed: int) -> Any:
    """A tower whose slow drifts are switched off (to see one effect alone)."""
    tw = gen.Tower(seed)
    tw.drift_g_per_s[:] = 0.0
    tw.drift_wander_g[:] = 0.0
    tw.ripple_g[:] = 0.0
    return tw


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
    assert isinstance(rec.frames[0].msg, Hello) and rec.frames[0].seq == 0
    h = rec.hello
    assert (h.proto, h.n_piezo, h.n_load, h.adc_bits) == (1, 8, 8, 10)
    assert (h.piezo_rate_hz, h.load_rate_hz, h.device_id) == (tw.piezo_rate, 80, tw.device_id)
    assert st.bytes_in / duration < 100_000  # fits 1 Mbaud 8N1
    assert len(rec.piezo) == round(duration * tw.piezo_rate)
    sizes = [len(f.msg.samples) for f in rec.frames if isinstance(f.msg, Piezo)]
    assert max(sizes) == tw.piezo_batch <= 14
    assert np.allclose(np.diff(rec.piezo_t), 1 / tw.piezo_rate, atol=5e-6)  # micros(): 4 us
    assert abs(np.mean(np.diff(rec.load_t)) - 1 / 80) < 1e-5
    status = [f.msg for f in rec.frames if isinstance(f.msg, Status)]
    assert len(status) in (int(duration) - 1, int(duration))
    assert np.all(np.diff([s.uptime_ms for s in status]) == 1000)


@pytest.mark.parametrize(("scenario", "seed", "duration"), RECORDINGS)
def test_truth_is_what_the_scorer_reads(recordings: dict[str, Decoded], scenario: str,
                                        seed: int, duration: float) -> None:
    truth = recordings[key(scenario, seed)].truth
    check_truth(truth, score, scenario=scenario, seed=seed, duration_s=duration)
    check_scored_perfect(truth, score)
    assert truth["cells"] == gen.Tower(seed).cells
    assert truth["tower"] == gen.Tower(seed).describe()
    for x in truth["landings"]:
        assert x["strike_times"][0] == x["t_first_impact"] < x["t"] < x["t_first_impact"] + 1.5
        assert all(x["t_first_impact"] <= s <= x["t"] for s in x["strike_times"])
        if x["knocked"]:
            throw = truth["landings"][x["by"]]
            assert throw["caused_knockdown"] and x["floor"] < x["from_floor"]
            assert x["t_knocked"] < x["t_first_impact"]
    firsts = [x["t_first_impact"] for x in truth["landings"]] + [
        x["t"] for k in ("knocks", "lifts", "removals") for x in truth[k]]
    assert min(firsts) >= truth["quiet_s"] >= 4.5


def test_a_seed_is_a_tower(tmp_path: Path) -> None:
    check_same_seed_same_bytes(gen, tmp_path)
    assert gen.Tower(7).describe() != gen.Tower(8).describe()
    builds = [gen.Tower(s) for s in range(1, 30)]
    assert {t.piezo_rate for t in builds} == {1600, 2000, 2500}
    assert {t.cells for t in builds} == {"matched", "mixed"}
    assert any((t.hx_rate_nominal == 10).any() and (t.hx_rate_nominal == 80).any()
               for t in builds)
    assert {f for t in builds for f in t.faults} == {"ok", "weak", "cracked", "open"}
    ghosts = np.concatenate([t.ghost[1:] for t in builds])
    assert 0.01 < ghosts.min() and ghosts.max() < 0.2 and np.median(ghosts) > 0.03
    assert max(t.ghost[0] for t in builds) < 1e-6  # channel 0 tracks through the idle gap


def test_the_first_seconds_are_an_empty_quiet_tower(recordings: dict[str, Decoded]) -> None:
    for rec in recordings.values():
        tw = rec.tower
        for ch in range(8):
            g = rec.grams(ch, 0.0, 4.0)
            assert len(g) >= 30 * (tw.hx_rate_nominal[ch] / 10) and np.std(g) < 0.03
        p = rec.piezo_window(0.0, 4.0)
        hum = rec.truth["room"]["hum_gain"] * tw.hum_counts * tw.hum_harmonics.sum()
        hum = np.where(np.array(tw.faults) == "open", hum * tw.float_hum_gain, hum)
        assert np.all(np.abs(p - np.median(p, axis=0)).max(axis=0) < 1.2 * hum + 6)
        assert np.all(np.abs(np.median(p, axis=0) - 512) < 20)  # mid-scale bias


# --------------------------------------------------------------------------- the piezo ADC

def test_the_ghost_is_on_the_next_scanned_channel() -> None:
    """README: the S/H capacitor keeps a fraction g of the channel converted before, so a
    strike heard only on level 3 shows on channel 4 as g4 times channel 3, and nowhere
    before it in the scan."""
    tw = gen.Tower(3)
    tw.crosstalk = np.eye(8)
    tw.hum_counts[:] = 0.0
    scene = gen.Scene(tw, "single", 3.0, 3)
    drive = np.zeros(8)
    drive[3] = 1.0
    scene.strikes.append(gen.Strike(1.0, 3.0, drive, 1.0, 8e-4, np.zeros(8)))
    rec = render_scene(scene)
    x = rec.piezo_window(0.99, 1.2)
    dev = x - np.median(rec.piezo_window(0.2, 0.9), axis=0)
    assert np.abs(dev[:, 3]).max() > 150
    slope = np.polyfit(dev[:, 3], dev[:, 4], 1)[0]
    assert slope == pytest.approx(tw.ghost[4], rel=0.1)
    assert np.abs(dev[:, [0, 1, 2, 6, 7]]).max() <= 3


def test_a_cracked_disc_hears_its_neighbour_in_the_scan(recordings: dict[str, Decoded]) -> None:
    """Tower 25's level-5 disc is cracked: what channel 5 still shows of each throw is the
    ghost of channel 4, sample for sample, and not channel 6's sound."""
    rec = recordings[key("single", 25)]
    tw = rec.tower
    assert tw.faults[5] == "cracked"
    seg = np.concatenate([without_hum(rec, x["t_first_impact"] - 0.05, x["t_first_impact"] + 0.15)
                          for x in rec.truth["landings"]])
    loud = seg[np.abs(seg[:, 4]) > 30]  # where channel 4 rings above the ADC's quantum
    assert len(loud) > 50
    slope = np.polyfit(loud[:, 4], loud[:, 5], 1)[0]
    assert slope == pytest.approx(tw.ghost[5], rel=0.2)
    ghost_corr = np.corrcoef(loud[:, 4], loud[:, 5])[0, 1]
    assert ghost_corr > 0.8 and np.corrcoef(loud[:, 6], loud[:, 5])[0, 1] < ghost_corr - 0.2


def test_hard_strikes_clip_and_the_hum_is_on_the_mains(recordings: dict[str, Decoded]) -> None:
    """README: the hardest strikes drive the pin past the rails (codes 0 and 1023, only
    while something happens); the hum sits at the mains frequency as the device's own
    resonator clock measures it, with its odd harmonics."""
    clipped = 0
    for rec in recordings.values():
        quiet = rec.piezo_window(0.0, 4.0)
        assert quiet.min() > 0 and quiet.max() < 1023
        clipped += int(np.sum((rec.piezo == 0) | (rec.piezo == 1023)))
        tw = rec.tower
        x = quiet - quiet.mean(axis=0)
        spec = np.abs(np.fft.rfft(x * np.hanning(len(x))[:, None], axis=0)).sum(axis=1)
        f = np.fft.rfftfreq(len(x), 1 / tw.piezo_rate)
        band = (f > 40) & (f < 70)
        assert abs(f[band][np.argmax(spec[band])] - tw.mains_hz / (1 + tw.clock_error)) < 0.5
        third = (f > 2.9 * tw.mains_hz) & (f < 3.1 * tw.mains_hz)
        floor = (f > 3.3 * tw.mains_hz) & (f < 3.7 * tw.mains_hz)
        assert spec[third].max() > 5 * np.median(spec[floor])
    assert clipped > 0


def test_every_first_impact_is_heard_then_and_not_before(recordings: dict[str, Decoded]) -> None:
    """Truth times are where the bytes say: nothing 50 ms before a throw's first impact,
    a thump within 3 ms of it; once the cube rests (``t``) the tower falls silent
    (single throws, several seconds apart)."""
    for seed in (1, 25):
        rec = recordings[key("single", seed)]
        base = np.median(rec.piezo_window(0.0, 4.0), axis=0)
        quiet = np.abs(rec.piezo_window(0.0, 4.0) - base).max(axis=0)
        starts = [x["t_first_impact"] for x in rec.truth["landings"]]
        for x in rec.truth["landings"]:
            if x["knocked"]:
                continue
            t = x["t_first_impact"]
            before = np.abs(rec.piezo_window(t - 0.05, t - 0.001) - base).max()
            after = np.abs(rec.piezo_window(t, t + 0.003) - base).max()
            assert after > 2 * before, (seed, t)
            if not any(x["t"] < s < x["t"] + 1.5 for s in starts):
                rest = np.abs(rec.piezo_window(x["t"] + 0.3, x["t"] + 1.0) - base).max(axis=0)
                assert np.all(rest <= quiet + 4), (seed, x["t"])


def test_bounces_come_faster_and_faster(recordings: dict[str, Decoded]) -> None:
    """README: each bounce keeps e < 1 of the speed, so the flight times shrink; the
    piezo of the resting level hears each of the first bounces."""
    seen = 0
    for rec in recordings.values():
        base = np.median(rec.piezo_window(0.0, 4.0), axis=0)
        for x in rec.truth["landings"]:
            b = np.array(x["bounce_times"])
            if len(b) >= 3:
                gaps = np.diff(b)
                assert np.all(gaps[1:] < gaps[:-1])
                seen += 1
            if len(b) >= 2 and rec.truth["scenario"] == "single" and not x["knocked"]:
                ch = x["floor"]
                if rec.tower.faults[ch] != "ok":
                    continue
                pre = np.abs(rec.piezo_window(b[1] - 0.004, b[1] - 0.0005)[:, ch] - base[ch])
                post = np.abs(rec.piezo_window(b[1], b[1] + 0.004)[:, ch] - base[ch])
                assert post.max() > pre.max() * 0.9
    assert seen >= 10


# --------------------------------------------------------------------------- the load cells

def test_steps_settle_over_four_conversions_as_the_datasheet_says() -> None:
    """README: the HX711's sinc^4 filter reads a step as a ramp over four conversions
    (400 ms at 10 SPS, 50 ms at 80 SPS) and is settled after them."""
    tw = quiet_tower(5)
    slow, fast = int(np.flatnonzero(tw.hx_rate_nominal == 10)[0]), 0
    assert tw.hx_rate_nominal[fast] == 80
    tw.noise_counts[:] = 0.0
    tw.creep_frac[:] = 0.0
    tw.hyst_g[:] = 0.0
    scene = gen.Scene(tw, "single", 8.0, 5)
    for ch in (slow, fast):
        scene.weights.append((5.0, ch, 1.0))
    rec = render_scene(scene)
    for ch in (slow, fast):
        period = tw.hx_period_s[ch]
        g = rec.grams(ch, 4.0, 8.0)
        t = rec.load_t[((rec.load_valid >> ch) & 1 == 1) & (rec.load_t >= 4.0)]
        ramp = (g > 0.05) & (g < 0.95)
        assert ramp.sum() >= 2  # two or three readings part way
        assert t[ramp].min() > 5.0 and t[ramp].max() < 5.0 + 4 * period + 0.02
        settled = g[t > 5.0 + 4 * period + 1 / 80]
        assert np.all(np.abs(settled - 1.0) < 0.005)


def test_each_hx711_runs_on_its_own_oscillator(recordings: dict[str, Decoded]) -> None:
    """README: the firmware polls at 80 Hz and marks a channel valid only when its chip
    finished a conversion since the last poll, so a 10 SPS chip is fresh about one poll in
    eight and an 80 SPS chip whose oscillator runs slow misses some polls."""
    for rec in recordings.values():
        if rec.truth["scenario"] == "game":
            continue
        tw = rec.tower
        duty = np.array([np.mean((rec.load_valid >> ch) & 1) for ch in range(8)])
        expect = np.minimum(1.0, tw.hx_rate_nominal * tw.hx_osc / 80)
        assert np.allclose(duty, expect, atol=0.015)


def test_cells_mounted_either_way_round(recordings: dict[str, Decoded]) -> None:
    """Tower 1 has two cells upside down: a cube lowers their counts."""
    rec = recordings[key("single", 1)]
    tw = rec.tower
    reversed_ = [ch for ch in range(8) if tw.cell_sign[ch] < 0]
    assert reversed_
    steps = 0
    for x in rec.truth["landings"]:
        ch = x["floor"]
        ok = (rec.load_valid >> ch) & 1 == 1
        before = rec.load_values[ok & (rec.load_t > x["t_first_impact"] - 1.0)
                                 & (rec.load_t < x["t_first_impact"] - 0.05), ch]
        after = rec.load_values[ok & (rec.load_t > x["t"] + 0.6) & (rec.load_t < x["t"] + 1.5), ch]
        if len(before) and len(after):
            rise = np.median(after) - np.median(before)
            assert np.sign(rise) == tw.cell_sign[ch]
            grams = rise / tw.counts_per_g[ch]
            assert grams == pytest.approx(x["mass_g"], rel=0.12)
            steps += 1
    assert steps >= 4


def test_a_cell_creeps_after_a_load_and_recovers_after_unloading() -> None:
    """README: a few tenths of a percent of a load change follow it over tens of seconds
    (a first-order lag), in the direction of the change."""
    tw = quiet_tower(2)
    ch = 3
    tw.noise_counts[:] = 5.0
    tw.hyst_g[:] = 0.0
    scene = gen.Scene(tw, "single", 80.0, 2)
    scene.weights.append((5.0, ch, 10.0))
    scene.weights.append((45.0, ch, -10.0))
    rec = render_scene(scene)
    c, tau = tw.creep_frac[ch], tw.creep_tau_s[ch]

    def mean(t0: float, t1: float) -> float:
        return float(np.mean(rec.grams(ch, t0, t1)))

    grew = mean(40.0, 44.0) - mean(6.0, 7.0)
    expect = 10.0 * c * (np.exp(-1.5 / tau) - np.exp(-37.0 / tau))
    assert grew == pytest.approx(expect, rel=0.1) and grew > 0.01
    back = mean(79.0, 80.0) - mean(46.0, 47.0)  # the residual creeps back towards zero
    assert back < -0.5 * expect * np.exp(-1.5 / tau) * (1 - np.exp(-33 / tau))


def test_an_impact_leaves_a_short_spike_on_its_plate(recordings: dict[str, Decoded]) -> None:
    """README: a strike's impulse rings the plate on its cell; at 80 SPS one or two
    readings jump by several times the cube's weight, then the step remains."""
    rec = recordings[key("rapid", 2)]
    peaks = []
    for x in rec.truth["landings"]:
        ch = x["floor"]
        g = rec.grams(ch, x["t_first_impact"] - 0.05, x["t"] + 0.1)
        g0 = rec.grams(ch, x["t_first_impact"] - 0.3, x["t_first_impact"] - 0.02)
        if len(g) and len(g0):
            peaks.append((g.max() - np.median(g0)) / x["mass_g"])
    assert np.median(peaks) > 2.0


# --------------------------------------------------------------------------- the game

def test_lifted_levels_stop_reporting_while_open(recordings: dict[str, Decoded]) -> None:
    """contracts.md: the HX711s of lifted modules give no fresh reading; after the close
    they power up and report again once their filter settled (four conversions)."""
    rec = recordings[key("game", 23)]
    truth, tw = rec.truth, rec.tower
    exposed = [lf["exposed"] for lf in truth["lifts"]]
    assert len(exposed) == len(truth["closes"]) >= 2 and min(exposed) <= 5
    for lift, close in zip(truth["lifts"], truth["closes"], strict=True):
        k = lift["exposed"]
        above = sum(1 << c for c in range(k + 1, 8))
        inside = (rec.load_t > lift["t"] + 1e-3) & (rec.load_t < close["t"])
        assert np.all(rec.load_valid[inside] & above == 0)
        before = (rec.load_t > lift["t"] - 1.0) & (rec.load_t < lift["t"])
        for ch in range(k + 1, 8):
            period = tw.hx_period_s[ch]
            assert np.any((rec.load_valid[before] >> ch) & 1)
            fresh = rec.load_t[((rec.load_valid >> ch) & 1 == 1) & (rec.load_t > close["t"])]
            assert 4 * period < fresh[0] - close["t"] < 4 * period + 0.03
    for r in truth["removals"]:
        assert any(lf["t"] < r["t"] < c["t"] and lf["exposed"] == r["floor"]
                   for lf, c in zip(truth["lifts"], truth["closes"], strict=True))
        ch = r["floor"]
        drop = np.median(rec.grams(ch, r["t"] + 0.5, r["t"] + 1.0)) \
            - np.median(rec.grams(ch, r["t_touch"] - 0.6, r["t_touch"] - 0.1))
        assert drop == pytest.approx(-r["cubes"] * tw.cube_mass_g, rel=0.2, abs=0.08)
    status = [f.msg for f in rec.frames if isinstance(f.msg, Status)]
    assert status[-1].load_timeouts > 0


def test_a_lifted_disc_floats_hums_and_ghosts(recordings: dict[str, Decoded]) -> None:
    """README: a disc lifted off its pin leaves a high-impedance input: louder hum, no
    sound of its own, and the S/H ghost of the channel before grows to ~40-55 %."""
    rec = recordings[key("game", 23)]
    tw = rec.tower
    lift = next(lf for lf in rec.truth["lifts"] if lf["exposed"] <= 5)
    k = lift["exposed"]
    close = next(c for c in rec.truth["closes"] if c["t"] > lift["t"])
    removal = next(r for r in rec.truth["removals"] if lift["t"] < r["t"] < close["t"])
    f = tw.mains_hz / (1 + tw.clock_error)

    def hum_amp(t0: float, t1: float) -> np.ndarray:
        x = rec.piezo_window(t0, t1)
        t = rec.piezo_t[(rec.piezo_t >= t0) & (rec.piezo_t < t1)]
        ref = np.exp(2j * np.pi * f * t)[:, None]
        return 2 * np.abs(((x - x.mean(axis=0)) * ref).mean(axis=0))

    before, during = hum_amp(lift["t"] - 2.0, lift["t"] - 0.2), hum_amp(lift["t"] + 0.2,
                                                                        close["t"] - 0.2)
    assert np.all(during[k + 1:] > 3 * before[k + 1:])
    # The scraping of the removal is on channel k; channel k+1 floats and holds its ghost.
    x = without_hum(rec, removal["t_touch"], removal["t"])
    slope = np.polyfit(x[:, k], x[:, k + 1], 1)[0]
    assert slope == pytest.approx(tw.ghost_float[k + 1], rel=0.25)
    assert 0.3 < tw.ghost_float[k + 1] < 0.6


def test_a_lifted_disc_hears_nothing_but_the_ghost_of_its_neighbour() -> None:
    """README: a disc off its pin is not heard at all; a floating input shows only the S/H
    charge of the channel converted before it (so the ghosts chain up the lifted levels)."""
    tw = gen.Tower(3)
    tw.crosstalk = np.ones((8, 8))  # every disc would hear the strike equally loud
    tw.hum_counts[:] = 0.0
    scene = gen.Scene(tw, "single", 3.0, 3)
    scene.lifted.append((1.0, 2.5, 3))  # modules 3..7 are up: levels 4..7 float
    drive = np.zeros(8)
    drive[3] = 1.0
    scene.strikes.append(gen.Strike(1.5, 3.0, drive, 0.5, 8e-4, np.zeros(8)))
    rec = render_scene(scene)
    dev = rec.piezo_window(1.49, 1.7) - np.median(rec.piezo_window(1.1, 1.45), axis=0)
    assert np.all(np.abs(dev[:, :4]).max(axis=0) > 30)  # the connected discs hear it
    for ch in (4, 5):  # further up the chain the ghost drowns in the ADC's quantum
        assert np.abs(dev[:, ch - 1]).max() > 50
        slope, icpt = np.polyfit(dev[:, ch - 1], dev[:, ch], 1)
        assert slope == pytest.approx(tw.ghost_float[ch], rel=0.1)
        assert np.std(dev[:, ch] - slope * dev[:, ch - 1] - icpt) < 2.5


def test_knocked_cubes_follow_from_the_physics() -> None:
    """README: a thrown cube that lands on a resting one pushes it with part of its speed;
    if that slide reaches the hole, the cube falls to a lower level (one per throw)."""
    scene = gen.make_scene(2, "rapid", 120.0)
    assert len(scene.knockdowns) >= 2
    for k in scene.knockdowns:
        throw, knocked = k["throw_landing"], k["knocked_landing"]
        assert throw["caused_knockdown"] and knocked["knocked"]
        assert knocked["floor"] < k["from_floor"] and knocked["t_first_impact"] > k["t"]
        assert throw["t_first_impact"] <= k["t"]
        assert k["from_floor"] in throw["path"]
    floors = np.bincount([x["floor"] for x in scene.landings], minlength=8)
    assert np.count_nonzero(floors) >= 5  # cubes come to rest all over the tower


def test_a_loaded_plate_rings_lower_and_shorter() -> None:
    """README: cubes on a plate add mass (lower modes) and friction (lower Q)."""
    rings = []
    for cubes in (0, 12):
        tw = gen.Tower(6)
        tw.crosstalk = np.eye(8)
        tw.hum_counts[:] = 0.0
        tw.mode_weight[:, 1:] = 0.0  # the fundamental alone
        scene = gen.Scene(tw, "single", 2.0, 6)
        drive = np.zeros(8)
        drive[2] = 1.0
        masses = np.zeros(8)
        masses[2] = cubes * tw.cube_mass_g
        scene.strikes.append(gen.Strike(1.0, 2.0, drive, 0.6, 8e-4, masses))
        x = render_scene(scene).piezo_window(1.0, 1.25)[:, 2]
        x = x - np.median(x[-50:])
        spec = np.abs(np.fft.rfft(x, 8192))
        f = np.fft.rfftfreq(8192, 1 / tw.piezo_rate)
        env = np.abs(x)
        rings.append((f[np.argmax(spec)], env[env > 0.2 * env.max()].size))
    (f_empty, long_empty), (f_loaded, long_loaded) = rings
    assert f_loaded < 0.9 * f_empty
    assert long_loaded < long_empty * (f_empty / f_loaded)  # fewer cycles above 20 %


def test_crosstalk_falls_with_distance_but_not_monotonically() -> None:
    near, far, kinks = [], [], 0
    for seed in range(1, 21):
        c = gen.Tower(seed).crosstalk
        for lv in range(1, 6):
            near.append(c[lv, lv + 1])
            far.append(c[lv, lv + 2])
            kinks += int(c[lv, lv + 2] > c[lv, lv + 1])
    assert np.median(near) > 1.5 * np.median(far) and kinks >= 3


def test_command_line(tmp_path: Path) -> None:
    check_command_line(SCRIPT, score, tmp_path / "cli", 15.0)
