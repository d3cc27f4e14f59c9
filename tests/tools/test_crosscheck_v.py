"""Fast checks of the independent tower simulator V (tools/crosscheck_v).

The stream is read back with a decoder written here, independently of the
generator's own, and the truth is checked against what the bytes show.
"""

from __future__ import annotations

import binascii
import importlib.util
import json
import os
import struct
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tools" / "crosscheck_v" / "make_recordings_v.py"
SCORE = ROOT / "tools" / "crosscheck" / "score.py"


def _load(name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod  # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


V = _load("make_recordings_v", SCRIPT)
DUR = 14.0


# ---------------------------------------------------------------- a decoder of our own


def _crc_bitwise(data: bytes) -> int:
    crc = 0xFFFF
    for b in data:
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


def _unstuff(enc: bytes) -> bytes | None:
    out, i = bytearray(), 0
    while i < len(enc):
        code = enc[i]
        if code == 0 or i + code > len(enc):
            return None
        out += enc[i + 1:i + code]
        i += code
        if code < 0xFF and i < len(enc):
            out.append(0)
    return bytes(out)


def read_stream(raw: bytes) -> dict[str, Any]:
    """Messages of a recording, with stream time as contracts.md section 2 defines it."""
    msgs, bad = [], 0
    for enc in raw.split(b"\x00")[:-1]:
        if not enc:
            continue
        msg = _unstuff(enc)
        # crc_hqx with init 0xFFFF is CRC-16/CCITT-FALSE (checked bitwise in test_crc_*)
        if msg is None or len(msg) < 5 or binascii.crc_hqx(msg[:-2], 0xFFFF) != struct.unpack(
                "<H", msg[-2:])[0]:
            bad += 1
            continue
        msgs.append((msg[0], struct.unpack("<H", msg[1:3])[0], msg[3:-2]))
    out: dict[str, Any] = {"bad": bad, "types": [m[0] for m in msgs],
                           "seqs": [m[1] for m in msgs], "hello": None}
    stamps: list[int] = []  # every data message's t_us, in file order, unwrapped below
    pz_sets, pz_first = [], []
    ld_idx, ld_valid, ld_vals, st = [], [], [], []
    for mtype, _seq, body in msgs:
        if mtype == 0x01:
            f = struct.unpack("<BBBBBBHHB", body[:11])
            out["hello"] = {"proto": f[0], "n_piezo": f[4], "n_load": f[5], "piezo_rate": f[6],
                            "load_rate": f[7], "adc_bits": f[8], "id": body[11:19].hex()}
            out.setdefault("hello_at", len(stamps))
        elif mtype == 0x02:
            t_us, n = struct.unpack("<IB", body[:5])
            assert len(body) == 5 + 16 * n
            pz_first.append(len(stamps))
            stamps.append(t_us)
            pz_sets.append(np.frombuffer(body[5:], "<u2").reshape(n, 8))
        elif mtype == 0x03:
            t_us, valid = struct.unpack("<IB", body[:5])
            b = np.frombuffer(body[5:], np.uint8).reshape(8, 3).astype(np.int64)
            v = b[:, 0] | b[:, 1] << 8 | b[:, 2] << 16
            ld_idx.append(len(stamps))
            stamps.append(t_us)
            ld_valid.append(valid)
            ld_vals.append(np.where(v >= 1 << 23, v - (1 << 24), v))
        elif mtype == 0x04:
            st.append(struct.unpack("<IHHHBB", body))
    raw_s = np.array(stamps, dtype=np.int64)
    # In file order a PIEZO stamp (its first set) may lie a little before the LOAD stamp
    # written ahead of it: unwrap by signed steps modulo 2**32.
    step = (np.diff(raw_s) + (1 << 31)) % (1 << 32) - (1 << 31)
    t = np.concatenate(([0], np.cumsum(step))) / 1e6
    rate = out["hello"]["piezo_rate"] if out["hello"] else 2000
    out["pz_t"] = np.concatenate([t[i] + np.arange(len(p)) / rate
                                  for i, p in zip(pz_first, pz_sets, strict=True)])
    out["pz"] = np.concatenate(pz_sets).astype(float)
    out["pz_n"] = [len(p) for p in pz_sets]
    out["ld_t"] = t[ld_idx]
    out["valid"] = np.array(ld_valid)
    out["load"] = np.array(ld_vals, dtype=float)
    out["status"] = st
    out["wraps"] = int((raw_s[0] + np.concatenate(([0], np.cumsum(step))))[-1] >> 32)
    return out


@pytest.fixture(scope="module")
def recordings() -> dict[str, tuple[bytes, dict]]:
    return {sc: V.generate(2, sc, DUR) for sc in V.SCENARIOS}


@pytest.fixture(scope="module")
def decoded(recordings: dict[str, tuple[bytes, dict]]) -> dict[str, dict[str, Any]]:
    return {sc: read_stream(raw) for sc, (raw, _) in recordings.items()}


# ---------------------------------------------------------------- framing


def test_crc_known_vector() -> None:
    assert V.crc16_ccitt_false(b"123456789") == 0x29B1
    assert V.crc16_fast(b"123456789") == 0x29B1
    rng = np.random.default_rng(3)
    for n in (0, 1, 5, 254):
        data = bytes(rng.integers(0, 256, n, dtype=np.uint8))
        assert V.crc16_fast(data) == _crc_bitwise(data) == binascii.crc_hqx(data, 0xFFFF)


@pytest.mark.parametrize("n", [0, 1, 2, 253, 254, 255, 600])
def test_cobs_round_trip(n: int) -> None:
    rng = np.random.default_rng(n)
    cases = (bytes(n), bytes(rng.integers(0, 256, n, dtype=np.uint8)),
             bytes(1 + i % 255 for i in range(n)), bytes(rng.integers(0, 2, n, dtype=np.uint8)))
    for data in cases:
        enc = V.cobs_encode(data)
        assert b"\x00" not in enc
        assert enc == V.cobs_encode_ref(data)
        assert _unstuff(enc) == data and V.cobs_decode(enc) == data
    try:
        from cobs import cobs
    except ImportError:
        return
    assert V.cobs_encode(data) == cobs.encode(data)


def test_frame_layout() -> None:
    fr = V.frame_message(0x04, 65536 + 7, b"\x00\x01\x00")
    assert fr.endswith(b"\x00") and fr.count(b"\x00") == 1
    msg = _unstuff(fr[:-1])
    assert msg is not None and msg[0] == 0x04 and msg[1:3] == b"\x07\x00"
    assert struct.unpack("<H", msg[-2:])[0] == _crc_bitwise(msg[:-2])


# ---------------------------------------------------------------- the stream


def test_stream_decodes_clean(recordings: dict[str, tuple[bytes, dict]],
                              decoded: dict[str, dict[str, Any]]) -> None:
    for sc, (_raw, truth) in recordings.items():
        d = decoded[sc]
        assert truth["tower"]["auto_reset"]  # tower 2 resets when the port opens
        assert d["bad"] == 0 and d["types"][0] == 0x01
        assert set(d["types"]) == {1, 2, 3, 4}
        assert all((b - a) % 65536 == 1 for a, b in zip(d["seqs"], d["seqs"][1:], strict=False))
        h = d["hello"]
        assert (h["proto"], h["n_piezo"], h["n_load"], h["adc_bits"]) == (1, 8, 8, 10)
        assert h["piezo_rate"] == 2000 and 70 <= h["load_rate"] <= 90
        assert h["load_rate"] == truth["tower"]["load_rate_hz"]
        assert all(1 <= n <= 14 for n in d["pz_n"])
        assert abs(len(d["pz"]) / h["piezo_rate"] - DUR) < 0.02
        assert np.allclose(np.diff(d["pz_t"]), 1 / h["piezo_rate"], atol=2e-5)
        assert d["pz"].max() <= 1023 and abs(np.median(d["pz"]) - 512) < 10
        # HELLO's load rate is what the stream delivers, within a reading per second
        n_load = len(d["ld_t"])
        assert abs(n_load / (d["ld_t"][-1] - d["ld_t"][0]) - h["load_rate"]) < 1.5
        assert DUR - 2 <= len(d["status"]) <= DUR + 1
        up = [s[0] for s in d["status"]]
        assert np.allclose(np.diff(up), 1000, atol=2)


def test_running_tower_starts_mid_frame_and_wraps() -> None:
    raw, truth = V.generate(8, "single", DUR)  # tower 8: no auto-reset, clock wraps at 10 s
    assert not truth["tower"]["auto_reset"]
    d = read_stream(raw)
    assert d["bad"] == 1 and d["types"][0] in (2, 3)  # the torn first frame
    assert d["wraps"] == 1
    assert d["hello"] is not None and d["hello"]["piezo_rate"] == 2000
    assert np.all(np.diff(d["pz_t"]) > 0) and abs(d["pz_t"][-1] - DUR) < 0.02
    # HELLO is beaconed every 2 s: the first comes within about 2 s of stream start
    assert d["hello_at"] <= 2.1 * (2000 / 4 + 80 + 1)


def test_determinism() -> None:
    a, ta = V.generate(11, "noisy", 10.0)
    b, tb = V.generate(11, "noisy", 10.0)
    assert a == b and json.dumps(ta) == json.dumps(tb)
    c, _ = V.generate(12, "noisy", 10.0)
    assert c != a


def test_kit_depends_on_seed_only(recordings: dict[str, tuple[bytes, dict]],
                                  decoded: dict[str, dict[str, Any]]) -> None:
    ids = {d["hello"]["id"] for d in decoded.values()}
    assert len(ids) == 1
    towers = [{k: v for k, v in tr["tower"].items() if k in ("counts_per_g", "plate_g",
                                                               "hx711_rates_hz", "holes_mm")}
              for _, tr in recordings.values()]
    assert all(t == towers[0] for t in towers)


# ---------------------------------------------------------------- truth


def test_truth_shape_and_scorer(recordings: dict[str, tuple[bytes, dict]]) -> None:
    score = _load("crosscheck_score_for_v", SCORE)
    for sc, (_raw, tr) in recordings.items():
        assert score.TRUTH_KEYS <= tr.keys()
        assert tr["format"] == "towerear-crosscheck-truth/1" and tr["model"] == "V"
        assert tr["scenario"] == sc and tr["cells"] in ("matched", "mixed")
        quiet = tr["tower"]["quiet_until_s"]
        assert 4.0 <= quiet <= 7.0
        for ld in tr["landings"]:
            assert quiet <= ld["t_first_impact"] <= ld["t"] < DUR
            assert 0 <= ld["floor"] <= 7 and ld["cubes"] == 1
            assert ("from_floor" in ld) == ld["knocked"]
            assert ld["knocked"] or "caused_knockdown" in ld
        for kd in tr["knockdowns"]:
            assert 0 <= kd["to_floor"] < kd["from_floor"] <= 7
        for key in ("removals", "lifts", "closes", "knocks"):
            assert all(quiet <= ev["t"] < DUR for ev in tr[key])
        # A detector that reports exactly the truth scores perfectly.
        det = [{"event": "landing", "t": x["t"], "t_decided": x["t"] + 0.3, "floor": x["floor"],
                "cubes": 1, "confidence": 1.0} for x in tr["landings"]]
        run = score.DetectRun(det, 0, 0.1)
        res = score.score_one(tr, run, tolerance_s=0.5)
        assert res["right"] == res["n_truth"] and res["false"] == 0
    assert recordings["single"][1]["landings"], "a throw should land within 14 s"


def test_load_steps_match_truth() -> None:
    raw, tr = V.generate(3, "single", 40.0)
    d = read_stream(raw)
    cpg = np.array(tr["tower"]["counts_per_g"])
    checked = 0
    busy = [(x["t_first_impact"], x["t"], x["floor"]) for x in tr["landings"]]
    busy += [(k["t"], k["t"] + 1.0, k["from_floor"]) for k in tr["knockdowns"]]
    for x in tr["landings"]:
        c, t0, t1 = x["floor"], x["t_first_impact"], x["t"]
        if x["knocked"] or x.get("caused_knockdown") or any(
                f == c and a < t1 + 1.0 and b > t0 - 1.5 and b != t1 for a, b, f in busy):
            continue
        ok = (d["valid"] >> c) & 1 == 1
        before = ok & (d["ld_t"] > t0 - 0.8) & (d["ld_t"] < t0 - 0.1)
        after = ok & (d["ld_t"] > t1 + 0.12) & (d["ld_t"] < t1 + 0.8)
        step = (np.median(d["load"][after, c]) - np.median(d["load"][before, c])) / cpg[c]
        assert abs(step - x["load_g"]) < 0.03, (x, step)
        checked += 1
    assert checked >= 3


def test_piezo_hears_first_impact() -> None:
    raw, tr = V.generate(4, "single", 40.0)
    d = read_stream(raw)
    dev = np.abs(d["pz"] - np.median(d["pz"][:4000], axis=0)).max(axis=1)
    heard = 0
    for x in tr["landings"]:
        win = (d["pz_t"] >= x["t_first_impact"] - 0.001) & (d["pz_t"] <= x["t_first_impact"] + 0.01)
        quiet = (d["pz_t"] >= x["t_first_impact"] - 0.45) & (d["pz_t"] < x["t_first_impact"] - 0.35)
        heard += dev[win].max() > max(8.0, 3 * dev[quiet].max())
    assert heard >= 0.8 * len(tr["landings"]) > 0


def test_lift_invalidates_upper_channels() -> None:
    raw, tr = V.generate(2, "game", 45.0)
    assert tr["lifts"] and tr["closes"]
    lift, close = tr["lifts"][0], tr["closes"][0]
    k = lift["exposed"]
    d = read_stream(raw)
    upper = sum(1 << c for c in range(k + 1, 8))
    lower = (1 << (k + 1)) - 1
    inside = (d["ld_t"] > lift["t"] + 0.1) & (d["ld_t"] < close["t"])
    assert inside.sum() > 100
    assert not np.any(d["valid"][inside] & upper)
    assert np.all(d["valid"][inside] & lower == lower)
    lifted_vals = d["load"][inside][:, k + 1:]
    assert np.all(lifted_vals == 0)  # 0 where not valid
    later = d["ld_t"] > close["t"] + 0.5
    assert np.all(d["valid"][later][:10] == 0xFF)
    # the open floor's removals show as load drops on a channel still reporting
    for rem in tr["removals"]:
        assert rem["floor"] == k and lift["t"] < rem["t"] < close["t"]


# ---------------------------------------------------------------- command line


def _cli(tmp: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), "--out", str(tmp), "--towers", "1",
                           "--first-seed", "7", "--duration", "10", *extra],
                          capture_output=True, text=True, timeout=120, check=False)


def test_cli_unknown_scenario(tmp_path: Path) -> None:
    out = tmp_path / "o"
    r = _cli(out, "--scenarios", "single", "bogus")
    assert r.returncode == 2
    assert len(r.stderr.strip().splitlines()) == 1 and "bogus" in r.stderr
    assert not out.exists() or not os.listdir(out)


def test_cli_writes_files(tmp_path: Path) -> None:
    r = _cli(tmp_path, "--scenarios", "rapid", "--workers", "1")
    assert r.returncode == 0, r.stderr
    raw = (tmp_path / "rapid_t7.bin").read_bytes()
    assert len(raw) > 300_000
    score = _load("crosscheck_score_for_v", SCORE)
    truth = score.read_truth(tmp_path / "rapid_t7.truth.json")
    assert truth["seed"] == 7 and truth["duration_s"] == 10.0
    assert raw == V.generate(7, "rapid", 10.0)[0]
