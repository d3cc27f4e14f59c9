"""Fast checks of the independent plywood-tower simulator X (tools/crosscheck_x)."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from hostapp.protocol import FrameDecoder, Hello, Load, Piezo, Status, cobs_decode, unwrap_t_us

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tools" / "crosscheck_x" / "make_recordings_x.py"


def _load(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


X = _load(SCRIPT, "make_recordings_x")
SCORE = _load(ROOT / "tools" / "crosscheck" / "score.py", "crosscheck_score_for_x")
DUR = 24.0
SEED = 4


class Decoded:
    """A recording read by the project's decoder, with stream times (contracts.md 2)."""

    def __init__(self, raw: bytes) -> None:
        dec = FrameDecoder()
        self.frames = []
        for i in range(0, len(raw), 4093):  # odd chunks: frames cut anywhere
            self.frames += dec.feed(raw[i:i + 4093])
        self.stats = dec.stats
        data = [f.msg for f in self.frames if isinstance(f.msg, Piezo | Load)]
        t_us = unwrap_t_us(np.array([m.t_us for m in data], np.int64))
        st = (t_us - t_us[0]) / 1e6
        self.hello = next(f.msg for f in self.frames if isinstance(f.msg, Hello))
        self.status = [f.msg for f in self.frames if isinstance(f.msg, Status)]
        loads = [(s, m) for s, m in zip(st, data, strict=True) if isinstance(m, Load)]
        pz = [(s, m) for s, m in zip(st, data, strict=True) if isinstance(m, Piezo)]
        self.lt = np.array([s for s, _ in loads])
        self.valid = np.array([m.valid for _, m in loads], np.int64)
        self.lv = np.array([m.values for _, m in loads], float)
        self.n_sets = [len(m.samples) for _, m in pz]
        self.pt = np.concatenate([s + np.arange(len(m.samples)) / self.hello.piezo_rate_hz
                                  for s, m in pz])
        self.pz = np.concatenate([m.samples for _, m in pz]).astype(float)


@pytest.fixture(scope="module")
def recs() -> dict[str, tuple[Decoded, dict[str, Any]]]:
    out = {}
    for sc in X.SCENARIOS:
        raw, truth = X.generate(SEED, sc, DUR if sc != "game" else 70.0)
        out[sc] = (Decoded(raw), truth)
    return out


@pytest.fixture(scope="module")
def long_single() -> tuple[Decoded, dict[str, Any]]:
    raw, truth = X.generate(11, "single", 120.0)
    return Decoded(raw), truth


# -- wire ---------------------------------------------------------------------------


def test_crc_and_cobs_follow_the_contract() -> None:
    assert X.crc16_ccitt_false(b"123456789") == 0x29B1
    assert X.crc16_ccitt_false_reference(b"123456789") == 0x29B1
    rng = np.random.default_rng(7)
    samples = [b"", b"\x00", b"\x00\x00", bytes(range(1, 255)), bytes(range(1, 256)),
               b"\x01" * 254 + b"\x00", bytes(range(256)), b"\x05" * 508]
    samples += [rng.integers(0, 3, n).astype(np.uint8).tobytes() for n in (1, 9, 120, 254)]
    samples += [rng.integers(0, 256, n).astype(np.uint8).tobytes() for n in (5, 253, 254)]
    for data in samples:
        assert X.crc16_ccitt_false(data) == X.crc16_ccitt_false_reference(data)
        enc = X.cobs_encode(data)
        assert b"\x00" not in enc
        assert cobs_decode(enc) == data
    fr = X.frame(0x04, 0xFFFF, b"\x00\x01\x02")
    assert fr.endswith(b"\x00") and fr.count(b"\x00") == 1
    msg = cobs_decode(fr[:-1])
    assert msg[0] == 0x04 and msg[1:3] == b"\xff\xff" and msg[3:-2] == b"\x00\x01\x02"
    assert int.from_bytes(msg[-2:], "little") == X.crc16_ccitt_false_reference(msg[:-2])
    assert X.s24(np.array([-1, 2**23 - 1, -(2**23), 5])) == bytes(
        [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F, 0, 0, 0x80, 5, 0, 0])


def test_project_decoder_reads_every_scenario(recs: dict[str, tuple[Decoded, dict]]) -> None:
    for sc, (d, truth) in recs.items():
        s = d.stats
        assert (s.crc_errors, s.framing_errors, s.lost_messages, s.bad_length,
                s.unknown_types, s.oversize, s.partial_start, s.resets) == (0,) * 8, sc
        assert d.frames[0].seq == 0 and isinstance(d.frames[0].msg, Hello)
        seqs = [f.seq for f in d.frames]
        assert all((b - a) % 65536 == 1 for a, b in zip(seqs, seqs[1:], strict=False))
        h = d.hello
        assert (h.proto, h.n_piezo, h.n_load, h.adc_bits, h.piezo_rate_hz, h.load_rate_hz) == (
            1, 8, 8, 10, 2000, 80)
        assert h.device_id == bytes.fromhex(truth["tower"]["device_id"])
        dur = truth["duration_s"]
        assert sum(d.n_sets) == int(dur * 2000) and set(d.n_sets) == {8}
        assert d.pt[0] == 0.0 and np.allclose(np.diff(d.pt), 5e-4)
        # The eight HX711s share one crystal: one LOAD per conversion, 80 Hz in device time.
        assert np.median(np.diff(d.lt)) == pytest.approx(1 / 80, rel=2e-3)
        assert len(d.lt) == pytest.approx(dur * 80, abs=3)
        assert len(d.status) == int(dur)


def test_idle_tower_noise(recs: dict[str, tuple[Decoded, dict]]) -> None:
    d, truth = recs["single"]
    quiet = d.lt < truth["quiet_s"] - 0.2
    sd = d.lv[quiet].std(axis=0)
    noise = np.array(truth["tower"]["hx_noise_counts"]) * np.sqrt(1.25)  # white + slow part
    assert np.all(sd > 0.5 * noise) and np.all(sd < 1.6 * noise)
    cpg = np.array(truth["tower"]["counts_per_g"])
    assert np.all(sd / cpg < 0.02 * 0.44), "a quiet channel is 50 times finer than a cube"
    offset = np.array(truth["tower"]["offset_counts"])
    assert np.all(np.abs(np.median(d.lv[quiet], axis=0) - offset) < 0.01 * cpg)
    pq = d.pz[d.pt < truth["quiet_s"] - 0.2]
    assert np.all(np.abs(np.median(pq, axis=0) - 512) <= 3)
    assert np.all(pq.std(axis=0) < 1.2) and np.all(pq.std(axis=0) > 0.3)


# -- determinism, command line ---------------------------------------------------------


def test_determinism_and_kit_from_seed() -> None:
    a = X.generate(11, "noisy", 10.0)
    b = X.generate(11, "noisy", 10.0)
    assert a[0] == b[0] and a[1] == b[1]
    assert X.generate(12, "noisy", 10.0)[0] != a[0]
    towers = {json.dumps(X.generate(11, sc, 10.0)[1]["tower"], sort_keys=True)
              for sc in X.SCENARIOS}
    assert len(towers) == 1


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True,
                          timeout=60, check=False)


def test_cli_unknown_scenario(tmp_path: Path) -> None:
    out = tmp_path / "o"
    r = _run("--out", str(out), "--towers", "1", "--duration", "10", "--scenarios", "single",
             "bogus")
    assert r.returncode == 2
    assert len(r.stderr.strip().splitlines()) == 1 and "bogus" in r.stderr
    assert not out.exists()


def test_cli_workers_do_not_change_bytes(tmp_path: Path) -> None:
    digests = []
    for workers in ("1", "2"):
        out = tmp_path / f"w{workers}"
        r = _run("--out", str(out), "--towers", "2", "--first-seed", "7", "--duration", "9",
                 "--scenarios", "rapid", "game", "--workers", workers)
        assert r.returncode == 0, r.stderr
        names = sorted(os.listdir(out))
        assert names == sorted(f"{sc}_t{s}{ext}" for s in (7, 8) for sc in ("rapid", "game")
                               for ext in (".bin", ".truth.json"))
        digests.append({n: hashlib.sha256((out / n).read_bytes()).hexdigest() for n in names})
        for t in out.glob("*.truth.json"):
            SCORE.read_truth(t)
    assert digests[0] == digests[1]


# -- truth ------------------------------------------------------------------------------


def test_truth_well_formed(recs: dict[str, tuple[Decoded, dict]]) -> None:
    for sc, (_d, tr) in recs.items():
        assert SCORE.TRUTH_KEYS <= tr.keys()
        assert tr["format"] == "towerear-crosscheck-truth/1" and tr["model"] == "X"
        assert tr["scenario"] == sc and tr["seed"] == SEED and tr["cells"] == "matched"
        dur = tr["duration_s"]
        assert 4.5 <= tr["quiet_s"] <= 5.7
        assert tr["landings"] == sorted(tr["landings"], key=lambda x: x["t"])
        for x in tr["landings"]:
            assert tr["quiet_s"] <= x["t_first_impact"] < x["t"] <= dur - 8.0
            assert 0 <= x["floor"] <= 7 and x["cubes"] == 1
            assert isinstance(x["knocked"], bool) and x["caused_knockdown"] is False
            assert x["t_contact"] < x["t"] < x["t_contact"] + 0.4
            if x["knocked"]:
                assert x["kind"] == "fell_from_lifted_stack" and x["from_floor"] == x["floor"] + 1
            else:
                assert x["t_release"] < x["t_first_impact"] < x["t_release"] + 0.5
        assert sum(x["knocked"] for x in tr["landings"]) == len(tr["knockdowns"])
        for kind in ("removals", "lifts", "closes", "knocks"):
            assert all(tr["quiet_s"] < e["t"] < dur for e in tr[kind])
        # A detector that says exactly the truth scores every landing right.
        perfect = [{"event": "landing", "t": x["t"], "t_decided": x["t"] + 0.3,
                    "floor": x["floor"], "cubes": 1, "confidence": 1.0}
                   for x in tr["landings"] if not x["knocked"]]
        res = SCORE.score_one(tr, SCORE.DetectRun(perfect, 0, 1.0), tolerance_s=0.5)
        assert res["right"] == res["n_truth"] > 0 and res["false"] == 0


def test_scenarios_differ_as_named() -> None:
    _, single = X.generate(6, "single", 120.0)
    throws = single["landings"]
    assert 15 <= len(throws) <= 28 and all(x["pair"] is None for x in throws)
    gaps = np.diff([x["t_release"] for x in throws])
    assert np.all(gaps > 3.0)
    _, rapid = X.generate(6, "rapid", 120.0)
    rel = np.array(sorted(x["t_release"] for x in rapid["landings"]))
    assert len(rel) > 2 * len(throws)
    assert np.mean(np.diff(rel) < 1.25) > 0.5
    pairs: dict[int, list[float]] = {}
    for x in rapid["landings"]:
        if x["pair"] is not None:
            pairs.setdefault(x["pair"], []).append(x["t_release"])
    assert len(pairs) >= 3 and all(len(v) == 2 and abs(v[0] - v[1]) <= 0.06
                                   for v in pairs.values())
    _, noisy = X.generate(6, "noisy", 120.0)
    assert len(noisy["knocks"]) >= 3 and noisy["music"] and noisy["phone_bursts"]
    assert not single["knocks"] and single["music"] is None and not single["phone_bursts"]


# -- physics ---------------------------------------------------------------------------------


def test_landing_steps_are_one_cube(long_single: tuple[Decoded, dict]) -> None:
    d, tr = long_single
    cpg = np.array(tr["tower"]["counts_per_g"])
    checked = 0
    for x in tr["landings"]:
        f = x["floor"]
        before = (d.lt > x["t_first_impact"] - 0.6) & (d.lt < x["t_first_impact"] - 0.05)
        after = (d.lt > x["t"] + 0.3) & (d.lt < x["t"] + 0.8)
        step = (np.median(d.lv[after], axis=0) - np.median(d.lv[before], axis=0)) / cpg
        # Drift and noise are a few mg: each landing is its cube's mass, within 5 %.
        assert step[f] == pytest.approx(x["mass_g"], rel=0.05, abs=0.012), x
        others = np.delete(step, f)
        assert np.all(np.abs(others) < 0.03), x
        # The impacts (momentum through the sinc^4 filter) spike well above the weight.
        during = (d.lt >= x["t_first_impact"]) & (d.lt <= x["t"])
        assert (d.lv[during, f].max() - np.median(d.lv[before, f])) / cpg[f] > 2 * x["mass_g"]
        checked += 1
    assert checked >= 15


def test_ceiling_strikes_push_the_plate_above_up(long_single: tuple[Decoded, dict]) -> None:
    """A cube that bounces to the plate above hits it from below: that cell unloads briefly."""
    kernel = np.ones(25) / 25
    for _ in range(3):
        kernel = np.convolve(kernel, np.ones(25) / 25)
    peak_per_s = kernel.max() * 2000  # sinc^4 response to a unit impulse, 1/s
    seen = 0
    raw, tr1 = X.generate(2, "single", 120.0)
    for d, tr in (long_single, (Decoded(raw), tr1)):
        cpg = np.array(tr["tower"]["counts_per_g"])
        times = sorted((x["t_first_impact"], x["t"]) for x in tr["landings"])
        for x in tr["landings"]:
            up = x["floor"] + 1
            if not x["ceiling_impulse_mNs"] or up > 7:
                continue
            # Only cubes alone in the tower: nothing else touches the plate above.
            if sum(a < x["t"] + 0.3 and b > x["t_first_impact"] - 0.6 for a, b in times) > 1:
                continue
            before = (d.lt > x["t_first_impact"] - 0.5) & (d.lt < x["t_first_impact"] - 0.05)
            win = (d.lt >= x["t_first_impact"]) & (d.lt <= x["t"] + 0.06)
            dip = (d.lv[win, up].min() - np.median(d.lv[before, up])) / cpg[up]
            expect = max(x["ceiling_impulse_mNs"]) * 1e-3 / (9.81e-3) * peak_per_s
            assert -1.5 * sum(x["ceiling_impulse_mNs"]) * 1e-3 / 9.81e-3 * peak_per_s - 0.03 \
                < dip < -0.5 * expect + 0.02, (tr["seed"], x)
            seen += 1
    assert seen >= 3


def test_table_bump_rocks_every_plate() -> None:
    """A bumped folding table rocks at its mode; each cell feels (plate + cubes) x a."""
    raw, tr = X.generate(3, "noisy", 120.0)
    d = Decoded(raw)
    cpg = np.array(tr["tower"]["counts_per_g"])
    plate = np.array(tr["tower"]["plate_g"])
    quiet_sd = (d.lv[d.lt < 4.0].std(axis=0)) / cpg
    strong = [k for k in tr["knocks"] if k["a_peak_ms2"] > 0.4]
    assert strong
    for k in strong:
        win = (d.lt > k["t"]) & (d.lt < k["t"] + 0.6)
        swing = (d.lv[win].max(axis=0) - d.lv[win].min(axis=0)) / cpg
        expect = 2 * k["a_peak_ms2"] / 9.81 * plate
        assert np.all(swing > 0.4 * expect) and np.all(swing > 10 * quiet_sd), k
        # The thump climbs the tower from the table, weaker at every joint.
        pw = (d.pt > k["t"]) & (d.pt < k["t"] + 0.1)
        assert np.all(np.abs(d.pz[pw, :3] - 512).max(axis=0) > 8)


def test_phone_bursts_reach_the_piezo_lines(recs: dict[str, tuple[Decoded, dict]]) -> None:
    d, tr = recs["noisy"]
    assert tr["phone_bursts"]
    on = np.zeros(len(d.pt), bool)
    for a, b in tr["phone_bursts"]:
        on |= (d.pt >= a) & (d.pt < b)
    quiet = d.pt < tr["quiet_s"] - 0.2
    base = np.median(d.pz[quiet, 0])
    high_on = np.mean(d.pz[on, 0] > base + 4)
    high_quiet = np.mean(d.pz[quiet, 0] > base + 4)
    # 577 us of every 4.615 ms: about one set in eight catches a burst.
    assert high_on > 0.06 and high_quiet < 0.01


def test_thermal_drift_is_there(long_single: tuple[Decoded, dict]) -> None:
    """The laptop warms the lower cells: over the recording every level's zero moves as
    the truth says (end minus start, less the cubes that came to rest there)."""
    d, tr = long_single
    cpg = np.array(tr["tower"]["counts_per_g"])
    first = d.lt < 3.0
    last = d.lt > tr["duration_s"] - 3.0
    change = (np.median(d.lv[last], axis=0) - np.median(d.lv[first], axis=0)) / cpg
    landed = np.zeros(8)
    for x in tr["landings"]:
        landed[x["floor"]] += x["mass_g"]
    drift = change - landed
    expect = np.array(tr["thermal"]["drift_g_end"])
    assert np.all(np.abs(drift - expect) < 0.007), (drift, expect)  # slow HX711 noise: ~3 mg
    big = int(np.argmax(np.abs(expect)))
    assert abs(expect[big]) > 0.015 and abs(drift[big]) > 0.01, "this tower drifts visibly"


def test_hx711_settles_in_four_conversions() -> None:
    """A step into the HX711 model is complete after 4 conversions (datasheet: 50 ms)."""
    tw = X.make_tower(1)
    sc = X.Scene(3.0)
    n = 6000
    cell = np.zeros((8, n))
    cell[:, 3000:] = 1.0  # one gram from 1.5 s
    t, counts, valid = X.hx711_readings(tw, sc, np.random.default_rng(0), cell, np.zeros((8, n)))
    assert np.all(valid == 0xFF)
    g = (counts - tw.offset) / tw.cpg
    i = int(np.searchsorted(t, 1.5))
    assert np.all(np.abs(g[i + 4:i + 20] - 1.0) < 0.03)
    assert np.all(np.abs(g[i - 10:i]) < 0.03)
    assert np.all(np.abs(g[i] - 1.0) > 0.2), "the first conversion after the step is still off"


def test_game_by_the_rules(recs: dict[str, tuple[Decoded, dict]]) -> None:
    d, tr = recs["game"]
    throws = [x for x in tr["landings"] if not x["knocked"]]
    by_release = sorted(throws, key=lambda x: x["t_release"])
    assert [x["colour"] for x in by_release[:2]] == ["red", "red"]
    n_players = len(tr["players"])
    assert sum(x["kind"] == "prologue" for x in throws) == 2 * n_players
    for x in throws:
        if x["kind"] == "prologue":
            assert x["colour"] == x["player"]
    assert tr["lifts"] and len(tr["lifts"]) == len(tr["closes"])
    bounds = [lf["t"] for lf in tr["lifts"]] + [tr["duration_s"]]
    for i, (lift, close) in enumerate(zip(tr["lifts"], tr["closes"], strict=True)):
        assert lift["exposed"] == close["exposed"] and close["t"] > lift["t"] + 2.0
        k = lift["exposed"]
        rem = [r for r in tr["removals"] if lift["t"] < r["t"] < close["t"]]
        assert all(r["floor"] == k for r in rem)
        # What was taken out (not the victims) is thrown back after the close.
        taken = sum(c != "red" for r in rem for c in r["colours"])
        back = [x for x in throws if close["t"] < x["t_release"] < bounds[i + 1]]
        assert sum(x["kind"] == "throw_back" for x in back) == taken
        assert all(x["kind"] in ("throw_back", "penalty", "fell_out_back") for x in back)
        # Levels above the exposed one are disconnected while lifted, back 4 conversions later.
        inside = (d.lt > lift["t"] + 0.02) & (d.lt < close["t"])
        assert np.all(d.valid[inside] == (1 << (k + 1)) - 1)
        assert np.all(d.lv[inside][:, k + 1:] == 0)
        back_on = (d.lt > close["t"] + 0.12) & (d.lt < close["t"] + 1.0)
        assert np.all(d.valid[back_on] == 0xFF)
        # The exposed floor loses the removed mass.
        if rem and k <= 7:
            cpg = tr["tower"]["counts_per_g"][k]
            pre = (d.lt > rem[0]["t"] - 3.0) & (d.lt < lift["t"])
            post = (d.lt > rem[-1]["t"] + 0.15) & (d.lt < close["t"] - 0.05)
            if pre.sum() > 5 and post.sum() > 5:
                drop = (np.median(d.lv[pre, k]) - np.median(d.lv[post, k])) / cpg
                assert drop == pytest.approx(sum(r["mass_g"] for r in rem), abs=0.06)
    if any(lf["exposed"] < 7 for lf in tr["lifts"]):
        assert d.status[-1].load_timeouts > 0


def test_reconnected_cells_warm_up() -> None:
    """A cell whose bridge was unpowered during a lift reads cold, then relaxes back."""
    tw = X.make_tower(5)
    sc = X.Scene(20.0)
    sc.lifts.append({"t": 5.0, "t_close": 9.0, "exposed": 3, "chatter_s": 0.01})
    sc.thermal = {"dT_max": 0.0, "tau": 500.0, "t_on": 0.0, "weight": [1.0] * 8}
    n = 40000
    _cell, elec = X.render_load(np.random.default_rng(1), tw, sc, n, np.zeros(n))
    cool = 1 - np.exp(-4.0 / tw.warmup_tau_s)
    i = 9 * 2000
    for lvl in range(8):
        if lvl <= 3:
            assert np.all(elec[lvl] == 0)
        else:
            assert elec[lvl, i] == pytest.approx(-tw.warmup_g[lvl] * cool, rel=1e-6)
            j = i + int(tw.warmup_tau_s * 2000)
            assert elec[lvl, j] == pytest.approx(elec[lvl, i] / np.e, rel=1e-3)
            assert np.all(elec[lvl, :i] == 0)
