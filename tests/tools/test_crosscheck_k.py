"""tools/crosscheck_k/make_recordings_k.py (cross-check model K, physics written apart from
the detector) writes bytes our decoder reads, truth the scorer reads, and the physics its
README claims: crosstalk through one coupled tower, wall-wave onsets, wood-on-wood clicks,
loaded plates, floating inputs while lifted, tight rims, a 10 SPS HX711 board."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hostapp.protocol import Ack, DecoderStats, Hello, Piezo, Pong, Status
from tests.scripts import (
    TOOLS,
    check_command_line,
    check_same_seed_same_bytes,
    check_scored_perfect,
    check_seqs_consecutive,
    check_truth,
    check_wire_encoder,
    decode_in_odd_chunks,
    load_script,
    stream_timed,
)

SCRIPT = TOOLS / "crosscheck_k" / "make_recordings_k.py"
gen = load_script(SCRIPT, "crosscheck_k_generator")
score = load_script(TOOLS / "crosscheck" / "score.py", "crosscheck_score_for_k")

# (scenario, seed, seconds). Tower 1 is a careful build; 17 has tight rims and mixed cells;
# 3 was joined while running (HELLO on request, clock near its wrap) and has a reversed
# cell; 16 has one HX711 board left at 10 SPS and a 2500 Hz piezo rate; the game on
# tower 7 opens level 1 within its minute.
RECORDINGS = [("single", 1, 30.0), ("single", 17, 30.0), ("rapid", 3, 20.0),
              ("noisy", 16, 25.0), ("game", 7, 60.0)]


@dataclass
class Decoded:
    truth: dict[str, Any]
    tower: Any
    frames: list[Any]
    stats: DecoderStats
    hello: Hello
    load_t: np.ndarray
    load_valid: np.ndarray
    load_values: np.ndarray
    piezo_t0: float
    piezo: np.ndarray


def key(scenario: str, seed: int) -> str:
    return f"{scenario}_t{seed}"


@pytest.fixture(scope="module")
def recordings(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Decoded]:
    out = tmp_path_factory.mktemp("model_k")
    result = {}
    for scenario, seed, duration in RECORDINGS:
        bin_path, truth_path = gen.make_recording(seed, scenario, duration, out)
        frames, stats = decode_in_odd_chunks(bin_path.read_bytes())
        piezos, timed_loads = stream_timed(frames)
        loads = [m for _, m in timed_loads]
        result[key(scenario, seed)] = Decoded(
            json.loads(truth_path.read_text()), gen.Tower(seed), frames, stats,
            next(f.msg for f in frames if isinstance(f.msg, Hello)),
            np.array([s for s, _ in timed_loads]), np.array([m.valid for m in loads]),
            np.array([m.values for m in loads], np.int64), float(piezos[0][0]),
            np.concatenate([m.samples for _, m in piezos]))
    return result


def grams(rec: Decoded, ch: int, mask: np.ndarray) -> np.ndarray:
    """Valid readings of channel ``ch`` where ``mask``, in grams above the quiet start."""
    ok = mask & ((rec.load_valid >> ch) & 1 == 1)
    quiet = (rec.load_t < 4.0) & ((rec.load_valid >> ch) & 1 == 1)
    base = np.median(rec.load_values[quiet, ch])
    return (rec.load_values[ok, ch] - base) / rec.tower.counts_per_g[ch]


# --------------------------------------------------------------------------- wire and truth

def test_crc_and_cobs_follow_the_contract() -> None:
    check_wire_encoder(gen)
    rng = np.random.default_rng(11)
    for n in (0, 1, 253, 254, 255, 300, 508, 509):
        for zeros in (0.0, 0.01, 0.5):
            data = np.where(rng.random(n) < zeros, 0, rng.integers(1, 256, n)).astype(np.uint8)
            assert gen.cobs_encode(data.tobytes()) == gen.cobs_encode_reference(data.tobytes())


@pytest.mark.parametrize(("scenario", "seed"), [(s, n) for s, n, _ in RECORDINGS])
def test_our_decoder_reads_every_frame(recordings: dict[str, Decoded], scenario: str,
                                       seed: int) -> None:
    rec = recordings[key(scenario, seed)]
    st, tw = rec.stats, rec.tower
    assert st.crc_errors == 0 and st.framing_errors == 0 and st.lost_messages == 0
    assert st.unknown_types == 0 and st.partial_start == 0 and st.oversize == 0
    assert st.bad_length == 0
    check_seqs_consecutive(rec.frames)
    h = rec.hello
    assert (h.proto, h.n_piezo, h.n_load, h.adc_bits) == (1, 8, 8, 10)
    assert (h.piezo_rate_hz, h.load_rate_hz) == (tw.piezo_rate, 80)
    assert st.bytes_in / rec.truth["duration_s"] < 90_000  # fits 1 Mbaud 8N1
    assert len(rec.piezo) == round(rec.truth["duration_s"] * h.piezo_rate_hz)
    assert rec.piezo_t0 == 0.0 and rec.piezo.max() <= 1023
    assert np.all(np.abs(np.median(rec.piezo[:4000], axis=0) - 512) < 12)  # mid-scale bias
    sizes = [len(f.msg.samples) for f in rec.frames if isinstance(f.msg, Piezo)]
    assert max(sizes) <= 14 and min(sizes[:-1]) >= 1
    rate = (len(rec.load_t) - 1) / (rec.load_t[-1] - rec.load_t[0])
    assert abs(rate - 80) < 0.01
    status = [f.msg for f in rec.frames if isinstance(f.msg, Status)]
    assert len(status) == int(rec.truth["duration_s"]) - 1


def test_a_device_joined_while_running_answers_get_info(recordings: dict[str, Decoded]) -> None:
    """Tower 3: no DTR reset, so HELLO comes only as the answer to the host's GET_INFO,
    after data, with its ACK; a PING's PONG follows; seq does not start at 0."""
    rec = recordings[key("rapid", 3)]
    kinds = [type(f.msg) for f in rec.frames]
    assert kinds[0] is Piezo and kinds.count(Hello) == 1
    i = kinds.index(Hello)
    ack = rec.frames[i + 1].msg
    assert isinstance(ack, Ack) and (ack.cmd_type, ack.result) == (0x81, 0)
    assert any(isinstance(f.msg, Pong) for f in rec.frames)
    assert rec.frames[0].seq != 0
    status = next(f.msg for f in rec.frames if isinstance(f.msg, Status))
    assert status.uptime_ms > 4_000_000  # over an hour up: the u32 t_us is near its wrap


@pytest.mark.parametrize(("scenario", "seed", "duration"), RECORDINGS)
def test_truth_is_what_the_scorer_reads(recordings: dict[str, Decoded], scenario: str,
                                        seed: int, duration: float) -> None:
    truth = recordings[key(scenario, seed)].truth
    check_truth(truth, score, scenario=scenario, seed=seed, duration_s=duration)
    check_scored_perfect(truth, score)
    assert truth["cells"] == recordings[key(scenario, seed)].tower.cells
    for x in truth["landings"]:
        assert x["t_first_impact"] < x["t"] < x["t_first_impact"] + 0.6
        if x["knocked"]:
            throw = truth["landings"][x["by"]]
            assert throw["caused_knockdown"] and x["floor"] < x["from_floor"]
        elif x["cause"] in ("throw",):
            assert x["t_throw"] < x["t_first_impact"] < x["t_throw"] + 0.6
    first = min([x["t_first_impact"] for x in truth["landings"]]
                + [x["t"] for k in ("knocks", "lifts") for x in truth[k]]
                + [a["t0"] for a in truth["ambient"]])
    assert first >= truth["quiet_s"] >= 5.0


def test_a_seed_is_a_tower(tmp_path: Path, recordings: dict[str, Decoded]) -> None:
    check_same_seed_same_bytes(gen, tmp_path)
    assert gen.Tower(7).describe() == recordings[key("game", 7)].truth["tower"]
    assert gen.Tower(7).describe() != gen.Tower(8).describe()


def test_the_first_seconds_are_an_empty_quiet_tower(recordings: dict[str, Decoded]) -> None:
    for rec in recordings.values():
        quiet = rec.load_t < 4.0
        for ch in range(8):
            g = grams(rec, ch, quiet)
            assert len(g) > 20 and np.std(g) < 0.02
        rate = rec.hello.piezo_rate_hz
        p = rec.piezo[:4 * rate].astype(float)
        assert np.abs(p - np.median(p, axis=0)).max() < 25  # hum and ADC noise only
        assert rec.truth["quiet_s"] > 4.0


def test_lifted_levels_stop_reporting_while_open(recordings: dict[str, Decoded]) -> None:
    rec = recordings[key("game", 7)]
    truth = rec.truth
    assert truth["lifts"] and len(truth["lifts"]) == len(truth["closes"])
    for lift, close in zip(truth["lifts"], truth["closes"], strict=True):
        k = lift["exposed"]
        inside = (rec.load_t > lift["t"] + 0.02) & (rec.load_t < close["t"])
        above = sum(1 << c for c in range(k + 1, 8))
        assert np.all(rec.load_valid[inside] & above == 0)
        back = (rec.load_t > close["t"] + 0.8) & (rec.load_t < close["t"] + 2.0)
        assert np.mean((rec.load_valid[back] & above) == above) > 0.9
    for r in truth["removals"]:
        assert any(lf["t"] < r["t"] < c["t"] and lf["exposed"] == r["floor"]
                   for lf, c in zip(truth["lifts"], truth["closes"], strict=True))
    status = [f.msg for f in rec.frames if isinstance(f.msg, Status)]
    assert status[-1].load_timeouts > 0  # the firmware counted the silent HX711s


# --------------------------------------------------------------------------- the physics

def impact(level: float, j: float = 0.6, tc: float = 8e-4, load: tuple[float, ...] = (0.0,) * 8,
           t: float = 0.01) -> Any:
    drive = np.zeros(8)
    drive[int(level)] = 1.0
    return gen.Impact(t, drive, float(level), j, tc, load, 0.0, None)


def band_energy(x: np.ndarray, rate: float, lo: float, hi: float) -> np.ndarray:
    spec = np.abs(np.fft.rfft(x * np.hanning(len(x))[:, None], axis=0)) ** 2
    f = np.fft.rfftfreq(len(x), 1 / rate)
    return spec[(f >= lo) & (f <= hi)].sum(axis=0)


def test_crosstalk_is_not_monotonic_with_distance() -> None:
    """README: each plate family is an 8-level chain; a strike excites the chain's modes,
    so in some band a level two away is louder than the neighbour, and the struck disc is
    not the loudest in every band; yet the first arrival is always loudest where struck."""
    tw = gen.Tower(1)
    rate = float(tw.piezo_rate)
    lam = tw.modes((0.0,) * 8)[0]
    fam = tw.modes((0.0,) * 8)[2]
    far_louder = struck_not_loudest = 0
    for k in range(1, 7):
        x = gen.render_impacts(tw, [impact(k)], int(0.4 * rate), rate)[int(0.02 * rate):]
        for f_i in range(3):
            fr = lam.imag[fam == f_i] / (2 * np.pi)
            e = band_energy(x, rate, 0.97 * fr.min(), 1.03 * fr.max())
            if (k + 2 < 8 and e[k + 2] > e[k + 1]) or (k >= 2 and e[k - 2] > e[k - 1]):
                far_louder += 1
            struck_not_loudest += int(np.argmax(e) != k)
        tw.skew_s = 0.0
        early = gen.render_impacts(tw, [impact(k, t=0.0)], 40, 100_000.0)[:30]  # first 0.3 ms
        assert int(np.argmax(np.abs(early).max(axis=0))) == k
        tw.skew_s = gen.Tower(1).skew_s
    assert far_louder >= 2 and struck_not_loudest >= 2


def test_the_wall_wave_climbs_level_by_level() -> None:
    """README: the first arrival runs through the walls, 60-220 us per module joint, and
    the modal build-up at a far level starts later still (it grows like t^3)."""
    for seed in (1, 4):
        tw = gen.Tower(seed)
        tw.skew_s = 0.0
        rate = 400_000.0
        x = gen.render_impacts(tw, [impact(2, j=2.0, tc=1e-4, t=0.0)], int(0.002 * rate), rate)
        onset = [int(np.argmax(np.abs(x[:, lv]) > 0.1)) / rate for lv in range(8)]
        up, down = np.diff(onset[2:7]), -np.diff(onset[:3])
        assert np.all(up > 0) and np.all(down > 0), onset
        assert 0.5 * tw.wall_delay_s < float(np.mean(up)) < 1.6 * tw.wall_delay_s


def test_wood_on_wood_drives_the_upper_families() -> None:
    """README: contact time shapes the spectrum: a cube landing on a cube (0.05-0.15 ms)
    puts 5-30x more of its energy above 1 kHz than one landing on the cardboard (0.5-1.2
    ms). Seen unaliased here; at 2 kHz that energy folds back into 0-1 kHz."""
    for seed in (1, 5, 12):
        tw = gen.Tower(seed)
        rate = 20_000.0
        frac = []
        for tc in (1e-4, 9e-4):
            x = gen.render_impacts(tw, [impact(4, tc=tc)], int(0.1 * rate), rate)[:, 4]
            spec = np.abs(np.fft.rfft(x)) ** 2
            f = np.fft.rfftfreq(len(x), 1 / rate)
            frac.append(float(spec[f > 1000].sum() / spec.sum()))
        assert frac[0] > 5 * frac[1] and frac[0] > 0.01, (seed, frac)


def test_a_loaded_plate_rings_lower_and_shorter() -> None:
    """README: cubes resting on a plate add mass (lower modes) and friction (less Q)."""
    tw = gen.Tower(1)
    rate = float(tw.piezo_rate)
    load = [0.0] * 8
    load[3] = 12 * tw.cube_g
    out = []
    for lg in ((0.0,) * 8, tuple(load)):
        x = gen.render_impacts(tw, [impact(3, load=lg)], int(0.5 * rate), rate)[:, 3]
        seg = x[int(0.02 * rate):]
        spec = np.abs(np.fft.rfft(seg * np.hanning(len(seg))))
        f = np.fft.rfftfreq(len(seg), 1 / rate)
        band = (f > 0.6 * tw.f_plate[0].min()) & (f < 1.3 * tw.f_plate[0].max())
        peak = float(f[band][np.argmax(spec[band])])
        late = float(np.sum(x[int(0.06 * rate):int(0.2 * rate)] ** 2))
        early = float(np.sum(x[:int(0.06 * rate)] ** 2))
        out.append((peak, late / early))
    (f_empty, tail_empty), (f_loaded, tail_loaded) = out
    assert f_loaded < 0.95 * f_empty
    assert tail_loaded < 0.7 * tail_empty


def lifted_scene(seed: int) -> tuple[Any, Any, np.ndarray]:
    tw = gen.Tower(seed)
    sc = gen.Scene(tw, "game", 8.0, np.random.default_rng(3))
    sc.lift(3.0, 2)
    sc.close(6.0, 2, 3.0)
    return tw, sc, gen.render_piezo(sc, np.random.default_rng(4)).astype(float)


def hum_amp(x: np.ndarray, rate: float, i0: int, i1: int) -> np.ndarray:
    t = np.arange(i0, i1) / rate
    ref = np.exp(2j * np.pi * 50.0 * t)[:, None]
    seg = x[i0:i1] - x[i0:i1].mean(axis=0)
    return np.abs((seg * ref).mean(axis=0)) * 2


def test_lifted_discs_float_then_pop_back() -> None:
    """README: a lifted disc is off its ADC pin. With the bias on the base board the pin
    hums 2.5-5x louder and hears no vibration; when the contacts meet the disc's handling
    charge pops back. With the bias in the module (tower 2) the floating pin shows the
    sample-and-hold charge of the channel converted before it."""
    tw, _sc, x = lifted_scene(1)
    rate = float(tw.piezo_rate)
    before = hum_amp(x, rate, int(1.0 * rate), int(2.8 * rate))
    during = hum_amp(x, rate, int(3.6 * rate), int(5.6 * rate))
    assert np.all(during[3:] > 2.0 * before[3:]) and np.all(during[:3] < 1.5 * before[:3] + 0.5)
    pop = np.abs(x[int(6.0 * rate):int(6.02 * rate), 3:] - tw.bias[3:]).max(axis=0)
    assert np.median(pop) > 10
    tw2, _sc2, y = lifted_scene(2)
    assert tw2.module_bias
    sl = slice(int(3.6 * rate), int(5.6 * rate))
    ghost = np.corrcoef(y[sl, 3], y[sl, 2])[0, 1]
    plain = np.corrcoef(x[sl, 3], x[sl, 2])[0, 1]
    assert ghost > 0.8 and abs(plain) < 0.5


def test_a_tight_rim_holds_part_of_a_cube_until_the_next_jolt(
        recordings: dict[str, Decoded]) -> None:
    """README (tower 17): a rim that touches holds 5-25 % of a load change by friction; the
    next jolt on or next to that plate lets the plate settle, so a small step appears at
    another cube's impact."""
    tw = gen.Tower(17)
    lv = int(np.flatnonzero(tw.tight)[0])
    sc = gen.Scene(tw, "single", 6.0, np.random.default_rng(1))
    sc.weight_steps.append((1.0, lv, 0.5, 0.1))
    sc.jolts.append((3.0, min(7, lv + 1), 0.8))  # a cube strikes the plate above
    force = gen.render_force(sc, np.random.default_rng(2))
    load = gen.read_hx711(sc, force, 0.01, np.random.default_rng(3))
    g = (load.counts[:, lv] - tw.zero_counts[lv]) / tw.counts_per_g[lv] - tw.plate_g[lv]
    ok = (load.valid >> lv) & 1 == 1
    held = np.median(g[ok & (load.t > 1.5) & (load.t < 2.9)])
    settled = np.median(g[ok & (load.t > 3.3) & (load.t < 5.0)])
    assert held == pytest.approx(0.5 * (1 - tw.hold_frac[lv]), abs=0.01)
    assert settled == pytest.approx(0.5, abs=0.01)
    # in the recording, cubes resting on tight plates first weigh in short
    rec = recordings[key("single", 17)]
    ratios = []
    for x in rec.truth["landings"]:
        near = [y for y in rec.truth["landings"] if y is not x and abs(y["t"] - x["t"]) < 3]
        if near or x["knocked"] or x["caused_knockdown"] or not tw.tight[x["floor"]]:
            continue
        ch = x["floor"]
        before = grams(rec, ch, (rec.load_t > x["t_first_impact"] - 1.0)
                       & (rec.load_t < x["t_first_impact"] - 0.05))
        after = grams(rec, ch, (rec.load_t > x["t"] + 0.4) & (rec.load_t < x["t"] + 1.2))
        ratios.append(float(np.median(after) - np.median(before)) / x["mass_g"])
    assert ratios and max(ratios) < 0.97


def test_a_board_left_at_10_sps_reports_one_reading_in_eight(
        recordings: dict[str, Decoded]) -> None:
    """README (tower 16): the RATE pin of one green HX711 board is still tied low; the MCU
    reads all eight every 1/80 s, so that channel is fresh about one time in eight."""
    rec = recordings[key("noisy", 16)]
    slow = rec.tower.slow_level
    assert slow >= 0
    duty = [float(np.mean((rec.load_valid >> ch) & 1)) for ch in range(8)]
    assert 0.1 < duty[slow] < 0.15
    assert all(d > 0.9 for ch, d in enumerate(duty) if ch != slow)


def test_people_drop_handfuls_miss_and_cubes_land_on_cubes() -> None:
    sc, _ = gen.make_scene(1, "rapid", 120.0)
    throws = sorted(x.t_throw for x in sc.landings if x.t_throw is not None)
    assert sum(1 for a, b in zip(throws, throws[1:], strict=False) if b - a < 0.1) >= 2
    assert sum(x.on_cube for x in sc.landings) >= 5
    assert sc.knockdowns and all(k["floor"] < k["from_floor"] for k in sc.knockdowns)
    noisy = [gen.make_scene(s, "noisy", 120.0)[0] for s in (1, 2, 3, 4)]
    assert sum(len(n.misses) for n in noisy) >= 1


def test_reversed_cell_counts_down(recordings: dict[str, Decoded]) -> None:
    rec = recordings[key("rapid", 3)]
    rev = [ch for ch in range(8) if rec.tower.polarity[ch] < 0]
    assert rev and all(rec.tower.counts_per_g[ch] < 0 for ch in rev)
    for ch in rev:
        on = [x for x in rec.truth["landings"] if x["floor"] == ch]
        if on:
            end = (rec.load_t > rec.truth["duration_s"] - 1.0)
            raw = rec.load_values[end & ((rec.load_valid >> ch) & 1 == 1), ch]
            quiet = rec.load_values[(rec.load_t < 4) & ((rec.load_valid >> ch) & 1 == 1), ch]
            assert np.median(raw) < np.median(quiet)


def test_command_line(tmp_path: Path) -> None:
    check_command_line(SCRIPT, score, tmp_path / "cli", 15.0)
