"""Fast checks of the independent, datasheet-driven tower simulator W (tools/crosscheck_w)."""

from __future__ import annotations

import binascii
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

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tools" / "crosscheck_w" / "make_recordings_w.py"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_recordings_w", SCRIPT)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["make_recordings_w"] = mod
    spec.loader.exec_module(mod)
    return mod


W = _load()
DUR = 24.0
SEED = 5


@pytest.fixture(scope="module")
def recordings() -> dict[str, tuple[bytes, dict[str, Any]]]:
    return {sc: W.generate(SEED, sc, DUR) for sc in W.SCENARIOS}


@pytest.fixture(scope="module")
def game() -> tuple[int, bytes, dict[str, Any]]:
    """A game long enough to hold an inspection (lift, removals, close)."""
    for seed in (2, 3, 4, 6, 7):
        raw, truth = W.generate(seed, "game", 80.0)
        if truth["lifts"] and truth["removals"]:
            return seed, raw, truth
    raise AssertionError("no tower lifted a module within 80 s of play")


def _series(raw: bytes) -> dict[str, Any]:
    d = W.decode_stream(raw)
    t0 = min(d["piezo_t_us"][0], d["load_t_us"][0])
    d["lt"] = (np.array(d["load_t_us"], float) - t0) / 1e6
    d["lv"] = np.array(d["load"], float)
    d["valid"] = np.array(d["load_valid"])
    d["pz"] = np.concatenate(d["piezo"]).astype(float)
    d["pt"] = np.concatenate([(t - t0) / 1e6 + np.arange(n) / d["hello"]["piezo_rate_hz"]
                              for t, n in zip(d["piezo_t_us"], d["n_piezo_sets"], strict=True)])
    return d


# -- protocol ---------------------------------------------------------------


def test_crc_check_value_and_fast_path() -> None:
    assert W.crc16_ccitt_false(b"123456789") == 0x29B1
    assert W.crc16(b"123456789") == 0x29B1
    rng = np.random.default_rng(1)
    for n in (0, 1, 3, 64, 254):
        data = bytes(rng.integers(0, 256, n, dtype=np.uint8))
        assert W.crc16_ccitt_false(data) == W.crc16(data) == binascii.crc_hqx(data, 0xFFFF)


@pytest.mark.parametrize("n", [0, 1, 2, 253, 254])
def test_cobs_round_trip(n: int) -> None:
    rng = np.random.default_rng(n)
    cases = [bytes(n), bytes([1 + i % 255 for i in range(n)]),
             bytes(rng.integers(0, 256, n, dtype=np.uint8)),
             bytes(rng.integers(0, 3, n, dtype=np.uint8))]
    ref = None
    try:
        from cobs import cobs as ref
    except ImportError:
        pass
    for data in cases:
        enc = W.cobs_encode(data)
        assert b"\x00" not in enc
        assert W.cobs_decode(enc) == data
        if ref is not None:
            assert enc == ref.encode(data)


def test_cobs_decoder_rejects_damage() -> None:
    with pytest.raises(ValueError):
        W.cobs_decode(b"\x05\x01\x02")
    with pytest.raises(ValueError):
        W.cobs_decode(b"\x03\x01\x00")


def test_frame_layout() -> None:
    fr = W.frame(0x04, 0xFFFF, b"\x00\x01\x02")
    assert fr.endswith(b"\x00") and fr.count(b"\x00") == 1
    msg = W.cobs_decode(fr[:-1])
    assert msg[0] == 0x04 and msg[1:3] == b"\xff\xff" and msg[3:-2] == b"\x00\x01\x02"
    assert int.from_bytes(msg[-2:], "little") == binascii.crc_hqx(msg[:-2], 0xFFFF)


def test_stream_decodes_clean(recordings: dict[str, tuple[bytes, dict[str, Any]]]) -> None:
    for raw, truth in recordings.values():
        d = W.decode_stream(raw)
        assert d["crc_errors"] == d["framing_errors"] == d["seq_gaps"] == d["unknown_types"] == 0
        assert d["types"][0] == 0x01, "the device boots (DTR reset) and says HELLO first"
        h = d["hello"]
        assert (h["proto"], h["n_piezo"], h["n_load"], h["adc_bits"]) == (1, 8, 8, 10)
        assert h["piezo_rate_hz"] == 2000
        assert h["load_rate_hz"] == truth["kit"]["load_rate_hz"]
        assert abs(h["load_rate_hz"] - 80) <= 4
        assert sum(d["n_piezo_sets"]) == int(DUR * 2000)
        assert all(1 <= n <= 14 for n in d["n_piezo_sets"])
        # Consecutive PIEZO stamps advance by exactly n sets (micros(): 4 us steps).
        st = np.array(d["piezo_t_us"], np.int64)
        adv = np.diff(st) - 500 * np.array(d["n_piezo_sets"][:-1])
        assert np.all(np.abs(adv) <= 8) and np.all(st % 4 == 0)
        lt = np.diff(np.array(d["load_t_us"], np.int64))
        assert 0.95 * DUR * h["load_rate_hz"] < len(d["load_t_us"]) < 1.05 * DUR * 84
        assert np.all(lt > 0) and np.median(lt) == pytest.approx(1e6 / h["load_rate_hz"], rel=0.03)
        assert len(d["status"]) >= DUR - 2


def test_idle_levels_follow_the_datasheets(recordings: dict[str, tuple[bytes, dict]]) -> None:
    raw, truth = recordings["single"]
    d = _series(raw)
    quiet = truth["quiet_s"] - 0.3
    pz = d["pz"][d["pt"] < quiet]
    # AC-coupled, biased at mid-scale: within a few LSB of 512, < 1.5 LSB noise.
    assert np.all(np.abs(pz.mean(axis=0) - 512) < 8)
    assert np.all(pz.std(axis=0) < 1.5)
    lv = d["lv"][d["lt"] < quiet]
    noise = lv.std(axis=0)
    expect = np.array(truth["kit"]["noise_counts_rms"])
    assert np.all(noise < 1.5 * expect) and np.all(noise > 0.6 * expect)
    # A quiet load channel is still 100 times finer than one cube.
    cpg = np.array(truth["kit"]["counts_per_g"])
    assert np.all(noise < 0.01 * truth["kit"]["cube_mass_g"][0] * cpg)


# -- determinism and kit ------------------------------------------------------


def test_determinism() -> None:
    a = W.generate(11, "noisy", 10.0)
    b = W.generate(11, "noisy", 10.0)
    assert a[0] == b[0] and a[1] == b[1]
    assert W.generate(12, "noisy", 10.0)[0] != a[0]


def test_kit_depends_on_seed_only(recordings: dict[str, tuple[bytes, dict[str, Any]]]) -> None:
    ids = {W.decode_stream(raw)["hello"]["device_id"] for raw, _ in recordings.values()}
    assert len(ids) == 1
    kits = [json.dumps(tr["kit"], sort_keys=True) for _, tr in recordings.values()]
    assert len(set(kits)) == 1
    assert all(tr["cells"] in ("matched", "mixed") for _, tr in recordings.values())


def test_counts_per_gram_from_rated_output() -> None:
    kit = W.make_kit(3)
    for p in kit.plates:
        # 1 mV/V into HX711 gain 128, ratiometric: 2^24 * 128 * 1e-3 / 100 g = 21475 /g.
        assert p.counts_per_g == pytest.approx(p.s_vv / 1e-3 * 21474.8, rel=1e-4)
        assert 0.45e-3 <= p.s_vv <= 1.15e-3
        assert 4.2 < p.avdd < 4.4
    masses = [m for col in kit.cube_mass.values() for m in col]
    assert 0.28 < min(masses) and max(masses) < 0.85


# -- truth against the stream ---------------------------------------------------


def test_truth_shape(recordings: dict[str, tuple[bytes, dict[str, Any]]]) -> None:
    need = {"format", "model", "scenario", "seed", "duration_s", "cells", "landings",
            "knockdowns", "removals", "lifts", "closes", "knocks"}
    for sc, (_raw, tr) in recordings.items():
        assert need <= tr.keys()
        assert tr["format"] == "towerear-crosscheck-truth/1" and tr["model"] == "W"
        assert tr["scenario"] == sc and tr["duration_s"] == DUR and tr["seed"] == SEED
        assert 4.0 <= tr["quiet_s"] <= 7.0
        for ld in tr["landings"]:
            assert tr["quiet_s"] < ld["t_first_impact"] <= ld["t"] < DUR
            assert 0 <= ld["floor"] <= 7 and ld["cubes"] == 1
            assert ("from_floor" in ld) == ld["knocked"]
            if ld["knocked"]:
                assert ld["from_floor"] > ld["floor"]
        for kd in tr["knockdowns"]:
            assert 0 <= kd["to_floor"] < kd["from_floor"] <= 7
        for key in ("removals", "lifts", "closes", "knocks"):
            assert all(tr["quiet_s"] < ev["t"] < DUR for ev in tr[key])
    assert len(recordings["single"][1]["landings"]) >= 3
    assert recordings["noisy"][1]["knocks"] or DUR < 30


def test_single_count_and_rapid_spacing() -> None:
    _, tr = W.generate(8, "single", 120.0)
    throws = [x for x in tr["landings"] if not x["knocked"]]
    assert 18 <= len(throws) <= 22
    _, tr = W.generate(8, "rapid", 40.0)
    rel = sorted(x["t_release"] for x in tr["landings"] if not x["knocked"])
    gaps = np.diff(rel)
    assert np.any((gaps >= 0.3) & (gaps <= 0.8))
    assert np.all(gaps >= 0.3 - 1e-9)


def test_load_steps_at_landings(recordings: dict[str, tuple[bytes, dict[str, Any]]]) -> None:
    """Each undisturbed landing raises its floor by one cube's weight."""
    checked = 0
    for raw, tr in (W.generate(9, "single", 50.0), recordings["rapid"]):
        d = _series(raw)
        cpg = tr["kit"]["counts_per_g"]
        events = tr["landings"] + [{"t": k["t"], "t_first_impact": k["t"],
                                    "floor": k["from_floor"]} for k in tr["knockdowns"]]
        for ld in tr["landings"]:
            f = ld["floor"]
            # Any other cube in flight may rest briefly on this floor and tip on.
            others = [e for e in events if e is not ld and e["t_first_impact"] < ld["t"] + 1.0
                      and e["t"] > ld["t_first_impact"] - 0.7]
            if ld["caused_knockdown"] or others or ld["t"] > tr["duration_s"] - 1.2:
                continue
            t1 = ld["t_first_impact"]
            before = (d["lt"] > t1 - 0.5) & (d["lt"] < t1 - 0.05)
            after = (d["lt"] > ld["t"] + 0.4) & (d["lt"] < ld["t"] + 0.9)
            step = np.median(d["lv"][after, f]) - np.median(d["lv"][before, f])
            assert step == pytest.approx(ld["mass_g"] * cpg[f], rel=0.12), ld
            # No other floor changed.
            for g in range(8):
                if g != f and not any(e["floor"] == g and abs(e["t"] - ld["t"]) < 1.5
                                      for e in events):
                    other = np.median(d["lv"][after, g]) - np.median(d["lv"][before, g])
                    assert abs(other) < 0.1 * ld["mass_g"] * cpg[g]
            checked += 1
    assert checked >= 5


def test_impacts_spike_load_and_ring_piezo(recordings: dict[str, tuple[bytes, dict]]) -> None:
    raw, tr = recordings["single"]
    d = _series(raw)
    cpg = tr["kit"]["counts_per_g"]
    strong = 0
    for ld in tr["landings"]:
        f = ld["floor"]
        before = (d["lt"] > ld["t_first_impact"] - 0.5) & (d["lt"] < ld["t_first_impact"] - 0.05)
        win = (d["lt"] > ld["t_first_impact"]) & (d["lt"] < ld["t"] + 0.1)
        spike_g = (d["lv"][win, f].max() - np.median(d["lv"][before, f])) / cpg[f]
        # Momentum through the HX711's filter: more than the cube's own weight.
        assert spike_g > ld["mass_g"]
        pw = (d["pt"] > ld["t_first_impact"] - 0.005) & (d["pt"] < ld["t"] + 0.02)
        peak = np.abs(d["pz"][pw] - 512).max(axis=0)
        strong += peak[f] > 30
        # Nothing happens on the piezos in the quiet opening.
    assert strong >= 0.8 * len(tr["landings"])
    quiet = d["pt"] < tr["quiet_s"] - 0.3
    assert np.abs(d["pz"][quiet] - 512).max() < 20


def test_lift_disconnects_upper_levels(game: tuple[int, bytes, dict[str, Any]]) -> None:
    _seed, raw, tr = game
    d = _series(raw)
    for lift, close in zip(tr["lifts"], tr["closes"], strict=True):
        k = lift["exposed"]
        assert close["exposed"] == k and close["t"] > lift["t"] + 2
        inside = (d["lt"] > lift["t"] + 0.06) & (d["lt"] < close["t"] - 0.2)
        lower = (1 << (k + 1)) - 1
        assert np.all(d["valid"][inside] == lower)
        back = (d["lt"] > close["t"] + 0.12) & (d["lt"] < close["t"] + 1.0)
        assert np.all(d["valid"][back] == 0xFF)
        assert np.all(d["lv"][inside][:, k + 1:] == 0)
    assert d["status"][-1][3] > 0, "STATUS counts the HX711 timeouts of lifted modules"


def test_removal_steps_down(game: tuple[int, bytes, dict[str, Any]]) -> None:
    _seed, raw, tr = game
    d = _series(raw)
    cpg = tr["kit"]["counts_per_g"]
    for rm in tr["removals"]:
        f = rm["floor"]
        later = [r for r in tr["removals"] if r["floor"] == f and r["t"] > rm["t"]]
        t_next = later[0]["t"] if later else rm["t"] + 3.0
        before = (d["lt"] > rm["t"] - 3.0) & (d["lt"] < rm["t"] - 1.6)
        after = (d["lt"] > rm["t"] + 0.5) & (d["lt"] < min(rm["t"] + 1.0, t_next - 0.6))
        if not after.any() or not before.any():
            continue
        drop = np.median(d["lv"][before, f]) - np.median(d["lv"][after, f])
        assert drop == pytest.approx(rm["mass_g"] * cpg[f], rel=0.2, abs=0.1 * cpg[f])


def test_game_follows_the_rules(game: tuple[int, bytes, dict[str, Any]]) -> None:
    _seed, _raw, tr = game
    throws = [x for x in tr["landings"] if not x["knocked"]]
    kinds = [x["kind"] for x in throws]
    assert kinds[:2] == ["victim", "victim"]
    assert kinds.count("prologue") >= 6 and kinds.count("prologue") % 2 == 0
    # Clues taken out are thrown back after the close, one after another.
    for close in tr["closes"]:
        after = [x for x in throws if x["t_release"] > close["t"]]
        assert not after or after[0]["kind"] in ("throw_back", "penalty")
    for lift, close in zip(tr["lifts"], tr["closes"], strict=True):
        rem = [r for r in tr["removals"] if lift["t"] < r["t"] < close["t"]]
        assert all(r["floor"] == lift["exposed"] for r in rem)


# -- command line -----------------------------------------------------------------


def _run(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True,
                          timeout=timeout, check=False)


def test_cli_unknown_scenario(tmp_path: Path) -> None:
    out = tmp_path / "o"
    r = _run("--out", str(out), "--towers", "1", "--first-seed", "1", "--duration", "10",
             "--scenarios", "single", "bogus")
    assert r.returncode == 2
    assert len(r.stderr.strip().splitlines()) == 1 and "bogus" in r.stderr
    assert not out.exists() or not os.listdir(out)


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
    assert digests[0] == digests[1]


def test_truth_readable_by_scorer(tmp_path: Path) -> None:
    path_score = ROOT / "tools" / "crosscheck" / "score.py"
    spec = importlib.util.spec_from_file_location("crosscheck_score_for_w", path_score)
    assert spec is not None and spec.loader is not None
    score = importlib.util.module_from_spec(spec)
    sys.modules["crosscheck_score_for_w"] = score
    spec.loader.exec_module(score)
    _raw, truth = W.generate(1, "single", 12.0)
    path = tmp_path / "single_t1.truth.json"
    path.write_text(json.dumps(truth))
    doc = score.read_truth(path)
    assert doc["landings"] == truth["landings"]
