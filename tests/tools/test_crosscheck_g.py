"""Cross-check model G (tools/crosscheck_g/make_recordings_g.py): an independent tower
model with damaged streams, failing sensors, 12-bit ADCs and odd rates. The project's
decoder must read its bytes cleanly outside the damage it marks, the scorer must read
its truth, and its physics must do what its README says."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hostapp.protocol import Hello, Load, Piezo
from hostapp.recording import Recording, read_recording
from tests.scripts import (
    TOOLS,
    check_command_line,
    check_row_encoders,
    check_same_seed_same_bytes,
    check_scored_perfect,
    check_seqs_consecutive,
    check_truth,
    check_wire_encoder,
    decode_in_odd_chunks,
    load_script,
)

SCRIPT = TOOLS / "crosscheck_g" / "make_recordings_g.py"
gen = load_script(SCRIPT, "crosscheck_g_make_recordings")
score = load_script(TOOLS / "crosscheck" / "score.py", "crosscheck_score_for_g")

SHORT_S = 20.0  # too short for damage: it is planned only after 12 s and 10 s before the end
DAMAGE_S = 32.0


def _seed(pred: Callable[[int], bool]) -> int:
    """The first tower seed with a property (planning is cheap, generating is not)."""
    return next(s for s in range(1, 500) if pred(s))


def _truth(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())


def _errors(stats: Any) -> int:
    return int(stats.crc_errors + stats.framing_errors + stats.oversize + stats.bad_length
               + stats.unknown_types)


@pytest.fixture(scope="module")
def short_recordings(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Path]]:
    """One short recording per scenario of tower 2 (1500 sets/s, a saturated cell)."""
    out = tmp_path_factory.mktemp("g_short")
    return {s: gen.make_recording(2, s, SHORT_S, out) for s in gen.SCENARIOS}


def test_wire_encoder() -> None:
    check_wire_encoder(gen)


def test_vectorised_crc_and_cobs_match_the_scalar_ones() -> None:
    check_row_encoders(gen)
    body = np.random.default_rng(5).integers(0, 256, (3, 29)).astype(np.uint8)
    rows = gen.encode_rows(0x03, np.array([0, 1, 65535]), body)
    for i, seq in enumerate((0, 1, 65535)):
        assert rows[i].tobytes() == gen.encode_frame(0x03, seq, body[i].tobytes())


@pytest.mark.parametrize("scenario", ["single", "rapid", "noisy", "game"])
def test_recordings_decode_cleanly(short_recordings: dict[str, tuple[Path, Path]],
                                   scenario: str) -> None:
    bin_path, truth_path = short_recordings[scenario]
    truth = _truth(truth_path)
    assert truth["damage"] == []
    rec = read_recording(bin_path)
    assert _errors(rec.stats) == 0 and rec.stats.lost_messages == 0 and rec.stats.resets == 0
    tower = truth["tower"]
    assert rec.hello is not None
    assert (rec.hello.piezo_rate_hz, rec.hello.load_rate_hz, rec.hello.adc_bits) == (
        tower["piezo_rate_hz"], tower["load_rate_hz"], tower["adc_bits"])
    assert abs(rec.duration_s - SHORT_S) < 0.05
    assert rec.piezo.shape[1] == 8 and rec.load.shape[1] == 8
    # The first seconds: an empty, quiet, closed tower; every healthy cell reports once
    # its HX711 has settled after power-up.
    faulty = [f["channel"] for f in tower["faults"] if f["kind"] == "load_dropouts"]
    early = (rec.load_t_s > 0.6) & (rec.load_t_s < 4.0)
    assert np.delete(rec.load_valid[early], faulty, axis=1).all()
    frames, stats = decode_in_odd_chunks(bin_path.read_bytes(), chunk=2999)
    assert _errors(stats) == 0
    check_seqs_consecutive(frames)
    assert stats.partial_start == (truth["session"]["start_mode"] == "attach")


@pytest.mark.parametrize("scenario", ["single", "rapid", "noisy", "game"])
def test_truth_is_what_the_scorer_reads(short_recordings: dict[str, tuple[Path, Path]],
                                        scenario: str) -> None:
    truth = _truth(short_recordings[scenario][1])
    check_truth(truth, score, scenario=scenario, seed=2, duration_s=SHORT_S)
    check_scored_perfect(truth, score)
    assert truth["model"] == "G"
    score.read_truth(short_recordings[scenario][1])


def test_same_seed_same_bytes(tmp_path: Path) -> None:
    check_same_seed_same_bytes(gen, tmp_path)


def test_a_seed_is_one_tower(short_recordings: dict[str, tuple[Path, Path]]) -> None:
    hellos = []
    towers = []
    for bin_path, truth_path in short_recordings.values():
        rec = read_recording(bin_path)
        hellos.append(rec.hello)
        towers.append(_truth(truth_path)["tower"])
    assert all(h == hellos[0] for h in hellos) and all(t == towers[0] for t in towers)
    assert gen.make_tower(2).summary() == towers[0]


def test_command_line(tmp_path: Path) -> None:
    check_command_line(SCRIPT, score, tmp_path / "out", 10.0)


# -- damaged streams ------------------------------------------------------------------


def _with_damage(kind: str) -> int:
    return _seed(lambda s: [d["kind"] for d in gen.plan_session(s, "single", DAMAGE_S).damage]
                 == [kind])


@pytest.fixture(scope="module")
def damaged(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[int, Path, Path]]:
    """A recording with one damage of each kind: kind -> (seed, bin, truth)."""
    out = tmp_path_factory.mktemp("g_damaged")
    made = {}
    for kind in gen.DAMAGE_KINDS:
        seed = _with_damage(kind)
        made[kind] = (seed, *gen.make_recording(seed, "single", DAMAGE_S, out))
    return made


@pytest.mark.parametrize("kind", ["bit_errors", "overrun", "unplug", "reboot"])
def test_damage_is_inside_its_spans_and_nowhere_else(
        damaged: dict[str, tuple[int, Path, Path]], kind: str) -> None:
    seed, bin_path, truth_path = damaged[kind]
    truth = _truth(truth_path)
    check_truth(truth, score, scenario="single", seed=seed, duration_s=DAMAGE_S)
    check_scored_perfect(truth, score)
    (dmg,) = truth["damage"]
    assert dmg["kind"] == kind and 12.0 < dmg["t_start"] <= dmg["t_end"] < DAMAGE_S
    data = bin_path.read_bytes()
    b0, b1 = dmg["bytes"]
    # Before the span and after the first delimiter past it, the stream is clean.
    resume = data.index(b"\x00", b1)
    for piece in (data[:b0], data[resume:]):
        frames, stats = decode_in_odd_chunks(piece, chunk=4093)
        assert _errors(stats) == 0 and stats.lost_messages == 0 and stats.resets == 0
        check_seqs_consecutive(frames)
    # Inside it the stream really is damaged.
    start = data.rindex(b"\x00", 0, b0)
    _, inside = decode_in_odd_chunks(data[start:resume + 1])
    _, whole = decode_in_odd_chunks(data)
    if kind == "reboot":
        assert whole.resets == 1
    else:
        assert _errors(inside) >= 1 and whole.lost_messages >= 1
        assert whole.resets == 0
    if kind == "bit_errors":
        assert whole.crc_errors + whole.framing_errors >= 1


def test_an_unplugged_cable_leaves_a_gap_in_the_clock(
        damaged: dict[str, tuple[int, Path, Path]]) -> None:
    _, bin_path, truth_path = damaged["unplug"]
    (dmg,) = _truth(truth_path)["damage"]
    rec = read_recording(bin_path)
    t = rec.load_t_s
    gap = np.diff(t)
    i = int(np.argmax(gap))
    # Nothing arrives while the cable is out; the device clock kept running.
    assert gap[i] == pytest.approx(dmg["gap_s"], abs=0.1)
    assert dmg["t_start"] - 0.05 <= t[i] and t[i + 1] <= dmg["t_end"] + 0.05
    assert abs(rec.duration_s - DAMAGE_S) < 0.05


def test_a_reboot_restarts_the_clock_and_the_sequence(
        damaged: dict[str, tuple[int, Path, Path]]) -> None:
    _, bin_path, truth_path = damaged["reboot"]
    truth = _truth(truth_path)
    (dmg,) = truth["damage"]
    frames, stats = decode_in_odd_chunks(bin_path.read_bytes())
    hellos = [i for i, f in enumerate(frames) if isinstance(f.msg, Hello)]
    assert len(hellos) == 2  # at power-up (or the answer to GET_INFO) and after the reboot
    i = hellos[-1]
    assert i > 100 and frames[i].seq == 0 and stats.resets == 1
    timed = [f.msg for f in frames[i:] if isinstance(f.msg, Piezo | Load)]
    before = [f.msg for f in frames[:i] if isinstance(f.msg, Piezo | Load)]
    assert timed[0].t_us < 50_000 and before[-1].t_us > 1_000_000
    check_seqs_consecutive(frames[i:])
    # The stream is shorter by the time the device was off.
    rec = read_recording(bin_path)
    assert rec.duration_s == pytest.approx(DAMAGE_S - dmg["gap_s"], abs=0.1)
    assert truth["session"]["reboot_joined_at_t"] == pytest.approx(dmg["t_start"], abs=1e-3)


# -- sensors ----------------------------------------------------------------------------


def _faulty(kind: str) -> tuple[int, dict[str, Any]]:
    seed = _seed(lambda s: gen.tower_fault(gen.make_tower(s), kind) is not None)
    return seed, gen.tower_fault(gen.make_tower(seed), kind)


@pytest.mark.parametrize("kind", ["load_stuck", "load_saturated", "load_dropouts"])
def test_failing_load_cells(tmp_path: Path, kind: str) -> None:
    seed, fault = _faulty(kind)
    bin_path, _ = gen.make_recording(seed, "single", SHORT_S, tmp_path)
    rec = read_recording(bin_path)
    k = fault["channel"]
    valid = rec.load_valid[:, k]
    values = rec.load[valid, k]
    later = rec.load_t_s > 1.0
    if kind == "load_stuck":
        assert valid[later].all() and np.all(values == fault["value"])
    elif kind == "load_saturated":
        assert valid[later].all() and np.all(values == fault["value"])
        assert fault["value"] in (2 ** 23 - 1, -2 ** 23)
    else:
        missing = ~valid[later]
        assert 0.3 * fault["rate"] < missing.mean() < 3 * fault["rate"]
        # Single readings drop out, not runs of them.
        runs = np.sum(missing[1:] & ~missing[:-1])
        assert runs >= 0.8 * missing.sum()
        assert np.all(rec.load[~rec.load_valid[:, k], k] == 0)
    healthy = [c for c in range(8) if c != k]
    assert rec.load_valid[later][:, healthy].all()


@pytest.mark.parametrize("kind", ["piezo_dead", "piezo_weak"])
def test_failing_contact_mics(tmp_path: Path, kind: str) -> None:
    seed, fault = _faulty(kind)
    bin_path, truth_path = gen.make_recording(seed, "rapid", SHORT_S, tmp_path)
    truth = _truth(truth_path)
    rec = read_recording(bin_path)
    k = fault["channel"]
    x = rec.piezo.astype(float)
    dev = np.abs(x - np.median(x[rec.piezo_t_s < 4.0], axis=0)).max(axis=0)
    others = np.median(np.delete(dev, k))
    scale = 4 if truth["tower"]["adc_bits"] == 12 else 1
    assert others > 40 * scale  # the healthy mics heard the cubes
    if kind == "piezo_dead":
        assert dev[k] < 15 * scale  # bias, hum and noise only
    else:
        assert dev[k] < 0.35 * others


def test_12_bit_adc_and_odd_rates_are_told_in_hello(tmp_path: Path) -> None:
    seed = _seed(lambda s: (t := gen.make_tower(s)).adc_bits == 12
                 and t.piezo_rate_hz != 2000 and t.load_rate_hz != 80)
    bin_path, _ = gen.make_recording(seed, "single", 12.0, tmp_path)
    rec = read_recording(bin_path)
    tower = gen.make_tower(seed)
    assert rec.hello is not None and rec.hello.adc_bits == 12
    assert (rec.hello.piezo_rate_hz, rec.hello.load_rate_hz) == (tower.piezo_rate_hz,
                                                                 tower.load_rate_hz)
    quiet = rec.piezo[(rec.piezo_t_s > 0.5) & (rec.piezo_t_s < 4.0)].astype(float)
    assert np.all(np.abs(quiet.mean(axis=0) - 2048) < 30) and quiet.max() < 4096
    assert 1 / np.median(np.diff(rec.piezo_t_s)) == pytest.approx(tower.piezo_rate_hz, rel=2e-3)
    assert 1 / np.median(np.diff(rec.load_t_s)) == pytest.approx(tower.load_rate_hz, rel=2e-3)


def _medians(rec: Recording, k: int, t0: float, t1: float) -> float:
    sel = (rec.load_t_s >= t0) & (rec.load_t_s < t1) & rec.load_valid[:, k]
    assert sel.sum() >= 5
    return float(np.median(rec.load[sel, k].astype(float)))


def test_a_landing_moves_one_load_channel_by_its_step(tmp_path: Path) -> None:
    seed = _seed(lambda s: not gen.make_tower(s).faults and gen.make_tower(s).load_rate_hz >= 40)
    bin_path, truth_path = gen.make_recording(seed, "single", 45.0, tmp_path)
    truth = _truth(truth_path)
    rec = read_recording(bin_path)
    landings = truth["landings"]
    checked = 0
    for x in landings:
        near = [y for y in landings if y is not x and abs(y["t"] - x["t"]) < 3.0]
        if x["knocked"] or x["caused_knockdown"] or near:
            continue
        t0, t1 = x["t_first_impact"], x["t"]
        delta = np.array([_medians(rec, k, t1 + 0.5, t1 + 1.5) - _medians(rec, k, t0 - 1.0,
                                                                            t0 - 0.1)
                          for k in range(8)])
        step = x["step_counts"]
        # Within the cardboard's creep (at most 3 %, over seconds) and the noise.
        assert delta[x["floor"]] == pytest.approx(step, rel=0.06)
        assert np.all(np.abs(np.delete(delta, x["floor"])) < 0.05 * abs(step))
        checked += 1
    assert checked >= 3


def test_a_bump_shifts_every_zero_and_moves_no_cube(tmp_path: Path) -> None:
    def bumped(s: int) -> bool:
        tw = gen.make_tower(s)
        if any(f["kind"].startswith("load") for f in tw.faults):
            return False
        w = gen.World(tw, gen.plan_session(s, "noisy", 30.0))
        w.run()
        return any(k["kind"] == "bump" and not any(abs(x["a"] - k["a"]) < 2.5
                                                   for x in w.landings + w.knocks if x is not k)
                   for k in w.knocks)

    seed = _seed(bumped)
    bin_path, truth_path = gen.make_recording(seed, "noisy", 30.0, tmp_path)
    truth = _truth(truth_path)
    rec = read_recording(bin_path)
    for bump in (k for k in truth["knocks"] if k["kind"] == "bump"):
        t = bump["t"]
        if any(abs(x["t"] - t) < 2.5 for x in truth["landings"] + truth["knocks"] if x != bump):
            continue
        shift = np.array([_medians(rec, k, t + 0.3, t + 0.8) - _medians(rec, k, t - 1.0, t - 0.1)
                          for k in range(8)])
        shift *= np.sign(truth["tower"]["counts_per_g"])  # in grams' direction
        assert np.all(np.sign(shift) == np.sign(shift[0]))
        assert np.all(np.abs(shift) > 100)  # at least ~0.005 g on every cell
        break
    else:
        pytest.fail("no lone bump in the recording")


def test_a_lift_clears_the_valid_bits_above_the_exposed_level(tmp_path: Path) -> None:
    def lifts_low(s: int) -> bool:
        tw = gen.make_tower(s)
        if any(f["kind"] == "load_dropouts" for f in tw.faults):
            return False
        w = gen.World(tw, gen.plan_session(s, "game", 90.0))
        w.run()
        return any(lift["exposed"] < 7 for lift in w.lifts) and not w.fallouts

    seed = _seed(lifts_low)
    bin_path, truth_path = gen.make_recording(seed, "game", 90.0, tmp_path)
    truth = _truth(truth_path)
    rec = read_recording(bin_path)
    t = rec.load_t_s
    pairs = [(lift, close) for lift, close in zip(truth["lifts"], truth["closes"], strict=True)
             if lift["exposed"] < 7]
    assert pairs
    for lift, close in pairs:
        k = lift["exposed"]
        assert close["exposed"] == k and close["t"] > lift["t"]
        before = (t > lift["t"] - 0.5) & (t < lift["t"] - 0.05)
        during = (t > lift["t"] + 0.05) & (t < close["t"])
        after = (t > close["t"] + 0.8) & (t < close["t"] + 1.5)
        assert rec.load_valid[before].all() and rec.load_valid[after].all()
        assert not rec.load_valid[during][:, k + 1:].any()
        assert rec.load_valid[during][:, :k + 1].all()
        # The cubes leave the exposed level while it is open.
    # Cubes leave a level only while it is open.
    for r in truth["removals"]:
        assert any(lift["t"] < r["t"] < close["t"] and r["floor"] == lift["exposed"]
                   for lift, close in zip(truth["lifts"], truth["closes"], strict=True))


# -- physics in the large ----------------------------------------------------------------


def test_temperature_drifts_the_zeros_slowly() -> None:
    seed = _seed(lambda s: gen.make_tower(s).warm_c > 2.0)
    tw = gen.make_tower(seed)
    ss = gen.plan_session(seed, "game", 1800.0)
    ss.uptime0_s = 0.02  # just powered on: the electronics warm up
    world = gen.World(tw, ss)  # an empty tower, nobody near it
    forces = gen.synth_load_force(tw, world, 900.0, ss, np.random.default_rng(0))
    temp = gen.temperature_c(tw, ss, np.array([0.0, 900.0]))
    for k in range(8):
        f = forces[k]
        drift = f[-1000:].mean() - f[:1000].mean()
        expect = tw.temp_coef_g_per_c[k] * tw.heat_share[k] * (temp[1] - temp[0])
        assert drift == pytest.approx(expect, rel=0.05, abs=1e-4)
        # Slow: never more than a hundredth of a gram within a second.
        per_s = np.abs(f[1000:] - f[:-1000]).max()
        assert per_s < 0.01
    assert abs(temp[1] - temp[0]) > 1.0


def test_hard_throws_strike_harder_and_knock_down_more_than_gentle_ones() -> None:
    first_j: dict[str, list[float]] = {"gentle": [], "hard": []}
    knocked = {"gentle": 0, "hard": 0}
    thrown = {"gentle": 0, "hard": 0}
    for seed in range(1, 41):
        world = gen.World(gen.make_tower(seed), gen.plan_session(seed, "single", 200.0))
        a = 5.0
        for i in range(30):
            style = ("gentle", "normal", "hard")[i % 3]
            n = len(world.contacts)
            res = world.throw(world.new_cube("blue"), a, style, "throw")
            a = res.a_rest + 2.0
            if style in thrown:
                thrown[style] += 1
                knocked[style] += res.knocked
                first_j[style].append(max(c.j for c in world.contacts[n:]))
    assert np.median(first_j["hard"]) > 2 * np.median(first_j["gentle"])
    assert knocked["hard"] / thrown["hard"] > 1.3 * knocked["gentle"] / thrown["gentle"]


def test_few_cubes_reach_the_ground_floor() -> None:
    floors = np.zeros(8)
    for seed in range(1, 31):
        world = gen.World(gen.make_tower(seed), gen.plan_session(seed, "rapid", 120.0))
        world.run()
        for x in world.landings:
            floors[x["floor"]] += not x["knocked"]
    share = floors / floors.sum()
    assert share[0] < 0.1 and share[7] < 0.5 and np.all(share[2:] > 0.01)


def test_two_sizes_of_cubes_weigh_differently(tmp_path: Path) -> None:
    seed = _seed(lambda s: bool(gen.plan_session(s, "game", 60.0).odd_cubes))
    _, truth_path = gen.make_recording(seed, "game", 60.0, tmp_path)
    truth = _truth(truth_path)
    odd = set(truth["session"]["odd_cubes"])
    small = [x["mass_g"] for x in truth["landings"] if x["colour"] in odd]
    usual = [x["mass_g"] for x in truth["landings"] if x["colour"] not in odd]
    assert small and usual and max(small) < 0.8 * min(usual)
