"""Fast checks of the independent tower simulator U (tools/crosscheck_u)."""

from __future__ import annotations

import binascii
import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tools" / "crosscheck_u" / "make_recordings_u.py"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_recordings_u", SCRIPT)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


U = _load()
DUR = 14.0


@pytest.fixture(scope="module")
def recordings() -> dict[str, tuple[bytes, dict]]:
    return {sc: U.generate(5, sc, DUR) for sc in U.SCENARIOS}


def test_crc_known_vector_and_stdlib() -> None:
    assert U.crc16_ccitt_false(b"123456789") == 0x29B1
    assert U.crc16_fast(b"123456789") == 0x29B1
    rng = np.random.default_rng(1)
    for n in (0, 1, 2, 7, 64, 254):
        data = bytes(rng.integers(0, 256, n, dtype=np.uint8))
        assert U.crc16_ccitt_false(data) == binascii.crc_hqx(data, 0xFFFF)


@pytest.mark.parametrize("n", [0, 1, 2, 253, 254])
def test_cobs_round_trip_edges(n: int) -> None:
    cobs = pytest.importorskip("cobs.cobs")
    rng = np.random.default_rng(n)
    cases = [
        bytes([1 + (i % 255) for i in range(n)]),
        bytes(n),
        bytes(rng.integers(0, 256, n, dtype=np.uint8)),
        bytes(rng.integers(0, 3, n, dtype=np.uint8)),
    ]
    for data in cases:
        enc = U.cobs_encode(data)
        assert b"\x00" not in enc
        assert enc == cobs.encode(data)
        assert U.cobs_decode(enc) == data
        assert cobs.decode(enc) == data


def test_frame_message_layout() -> None:
    fr = U.frame_message(0x04, 65535, b"\x01\x02\x00\x03")
    assert fr.endswith(b"\x00") and fr.count(b"\x00") == 1
    msg = U.cobs_decode(fr[:-1])
    assert msg[0] == 0x04 and msg[1:3] == b"\xff\xff"
    assert int.from_bytes(msg[-2:], "little") == binascii.crc_hqx(msg[:-2], 0xFFFF)


def test_determinism() -> None:
    a, ta = U.generate(11, "noisy", 11.0)
    b, tb = U.generate(11, "noisy", 11.0)
    assert a == b and ta == tb
    c, _ = U.generate(12, "noisy", 11.0)
    assert c != a


def test_kit_depends_on_seed_only(recordings: dict[str, tuple[bytes, dict]]) -> None:
    hellos = {U.decode_stream(raw)["hello"]["device_id"] for raw, _ in recordings.values()}
    assert len(hellos) == 1
    towers = [tr["tower"]["counts_per_g"] for _, tr in recordings.values()]
    assert all(t == towers[0] for t in towers)


def test_decoder_reads_clean(recordings: dict[str, tuple[bytes, dict]]) -> None:
    for raw, truth in recordings.values():
        d = U.decode_stream(raw)
        assert d["crc_errors"] == 0 and d["framing_errors"] == 0
        assert d["seq_gaps"] == 0 and d["unknown_types"] == 0
        assert d["first_type"] == 0x01
        h = d["hello"]
        assert h["proto"] == 1 and h["n_piezo"] == 8 and h["n_load"] == 8
        assert h["adc_bits"] == 10 and h["load_rate_hz"] in (10, 80)
        assert h["load_rate_hz"] == truth["tower"]["load_rate_hz"]
        sets = sum(n for _, n in d["piezo_t_us"])
        assert abs(sets / h["piezo_rate_hz"] - DUR) < 0.05
        assert all(1 <= n <= 14 for _, n in d["piezo_t_us"])
        pz = np.concatenate(d["piezo"])
        assert pz.max() <= 1023 and abs(np.median(pz) - 512) < 20
        n_load = len(d["load_t_us"])
        assert 0.8 * h["load_rate_hz"] * DUR < n_load < 1.2 * h["load_rate_hz"] * DUR
        assert len(d["status"]) >= DUR - 2


def test_truth_shape(recordings: dict[str, tuple[bytes, dict]]) -> None:
    keys = {
        "format",
        "model",
        "scenario",
        "seed",
        "duration_s",
        "cells",
        "landings",
        "knockdowns",
        "removals",
        "lifts",
        "closes",
        "knocks",
        "tower",
    }
    for sc, (_raw, tr) in recordings.items():
        assert set(tr) == keys
        assert tr["format"] == "towerear-crosscheck-truth/1" and tr["model"] == "U"
        assert tr["scenario"] == sc and tr["cells"] in ("mixed", "matched")
        assert tr["duration_s"] == DUR
        for ld in tr["landings"]:
            assert 4.0 <= ld["t_first_impact"] <= ld["t"] < DUR
            assert 0 <= ld["floor"] <= 7 and ld["cubes"] == 1
            assert ("from_floor" in ld) == ld["knocked"]
            if ld["knocked"]:
                assert ld["from_floor"] > ld["floor"]
        for kd in tr["knockdowns"]:
            assert 0 <= kd["to_floor"] < kd["from_floor"] <= 7 and 0 <= kd["t"] < DUR
        for key in ("removals", "lifts", "closes", "knocks"):
            for ev in tr[key]:
                assert 4.0 <= ev["t"] < DUR
        for ev in tr["removals"]:
            assert 0 <= ev["floor"] <= 7 and ev["cubes"] >= 1
        for ev in tr["lifts"] + tr["closes"]:
            assert 0 <= ev["exposed"] <= 7
    assert recordings["single"][1]["landings"], "a throw should land within 14 s"


def test_lift_invalidates_upper_channels() -> None:
    sim_raw, tr = U.generate(2, "game", 120.0)
    assert tr["lifts"], "tower 2's game should hold an inspection"
    d = U.decode_stream(sim_raw)
    t0 = d["piezo_t_us"][0][0]
    lt = (np.array(d["load_t_us"], float) - t0) / 1e6
    valid = np.array(d["load_valid"])
    lift, close = tr["lifts"][0], tr["closes"][0]
    k = lift["exposed"]
    inside = (lt > lift["t"] + 0.2) & (lt < close["t"] - 0.1)
    assert inside.any()
    upper = sum(1 << L for L in range(k + 1, 8))
    assert not np.any(valid[inside] & upper)
    assert np.all(valid[inside] & ((1 << (k + 1)) - 1) == (1 << (k + 1)) - 1)


def test_cli_unknown_scenario(tmp_path: Path) -> None:
    out = tmp_path / "o"
    r = subprocess.run(
        [
            sys.executable,
            str(SCRIPT),
            "--out",
            str(out),
            "--towers",
            "1",
            "--first-seed",
            "1",
            "--duration",
            "10",
            "--scenarios",
            "single",
            "bogus",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 2
    assert len(r.stderr.strip().splitlines()) == 1
    assert not out.exists() or not os.listdir(out)


def test_cli_writes_files(tmp_path: Path) -> None:
    r = subprocess.run(
        [
            sys.executable,
            str(SCRIPT),
            "--out",
            str(tmp_path),
            "--towers",
            "1",
            "--first-seed",
            "7",
            "--duration",
            "10",
            "--scenarios",
            "rapid",
            "--workers",
            "1",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "rapid_t7.bin").stat().st_size > 100_000
    assert (tmp_path / "rapid_t7.truth.json").exists()
