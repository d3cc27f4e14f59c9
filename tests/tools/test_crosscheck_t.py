"""Fast checks of cross-check model T (tools/crosscheck_t/make_recordings_t.py)."""

from __future__ import annotations

import binascii
import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tools" / "crosscheck_t" / "make_recordings_t.py"


def _load():
    spec = importlib.util.spec_from_file_location("make_recordings_t", SCRIPT)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["make_recordings_t"] = mod
    spec.loader.exec_module(mod)
    return mod


m = _load()


@pytest.fixture(scope="module")
def single_rec():
    return m.make_one(3, "single", 40.0)


def test_crc_known_vector():
    assert m.crc16_ccitt_false(b"123456789") == 0x29B1
    rng = np.random.default_rng(0)
    rows = rng.integers(0, 256, (50, 37), dtype=np.uint8)
    vec = m.crc16_rows(rows)
    for row, c in zip(rows, vec, strict=True):
        assert (
            int(c) == m.crc16_ccitt_false(row.tobytes()) == binascii.crc_hqx(row.tobytes(), 0xFFFF)
        )


@pytest.mark.parametrize("n", [0, 1, 2, 253, 254])
def test_cobs_round_trip_edges(n):
    rng = np.random.default_rng(n)
    for data in (
        bytes(n),
        bytes(rng.integers(1, 256, n, dtype=np.uint8)),
        bytes(rng.integers(0, 3, n, dtype=np.uint8)),
    ):
        enc = m.cobs_encode(data)
        assert 0 not in enc
        assert m.cobs_decode(enc) == data


def test_cobs_matches_reference_library():
    cobs = pytest.importorskip("cobs.cobs")
    rng = np.random.default_rng(1)
    for n in range(0, 254, 7):
        data = bytes(rng.integers(0, 4, n, dtype=np.uint8))
        assert cobs.decode(m.cobs_encode(data)) == data


def test_frames_round_trip_and_resync():
    body = bytes(range(20)) + b"\x00\x00\x01"
    frames = [m.frame_message(0x02, s, body) for s in (65534, 65535, 0)]
    damaged = frames[1][:5] + b"\x13" + frames[1][6:]
    dec = m.FrameDecoder()
    out = dec.feed(frames[0][7:] + frames[0] + damaged + frames[2][:4])
    out += dec.feed(frames[2][4:] + b"\x00\x00" + bytes([0x01, 0x7F]) + b"\x00")
    assert [(t, s, b) for t, s, b in out] == [(0x02, 65534, body), (0x02, 0, body)]
    assert dec.bad_frames == 3


def test_recording_decodes_and_times_line_up(single_rec):
    data, truth = single_rec
    d = m.decode_recording(data)
    hello = d["hello"]
    assert hello["proto"] == 1 and hello["n_piezo"] == 8 and hello["n_load"] == 8
    assert hello["piezo_rate_hz"] == 2000 and hello["adc_bits"] == 10
    assert set(d["other_types"]) <= {m.T_HELLO, m.T_ACK}
    seqs = np.array(d["seqs"])
    assert np.all(np.diff(seqs) % 65536 == 1)
    # piezo sets are contiguous, 500 us apart
    ends = d["piezo_t_us"][:-1] + d["piezo_n"][:-1] * 500
    assert np.array_equal(ends, d["piezo_t_us"][1:])
    assert d["piezo"].shape[0] == int(round(40.0 * 2000))
    assert np.all(np.abs(np.median(d["piezo"], axis=0).astype(int) - 512) < 30)
    rate = hello["load_rate_hz"]
    dt = np.diff(d["load_t_us"]) / 1e6
    assert abs(np.median(dt) * rate - 1.0) < 0.05
    origin = d["first_data_t_us"]
    assert origin - truth["tower"]["t0_us"] >= 0
    # the truth's time base is the contract's stream time
    t0 = truth["tower"]["t0_us"]
    assert truth["duration_s"] == pytest.approx((t0 + 80_000 * 500 - origin) / 1e6, abs=1e-6)
    # the truth's landings show up as one-cube load steps on their floor, at their time
    lt = (d["load_t_us"] - origin) / 1e6
    cpg = np.array(truth["tower"]["counts_per_g"])
    mass = truth["tower"]["cube_mass_g"]
    steps = []
    for ld in truth["landings"]:
        f = ld["floor"]
        before = (lt > ld["t_first_impact"] - 0.6) & (lt < ld["t_first_impact"] - 0.1)
        after = (lt > ld["t"] + 0.4) & (lt < ld["t"] + 1.2)
        steps.append((np.median(d["load"][after, f]) - np.median(d["load"][before, f])) / cpg[f])
    assert np.median(steps) == pytest.approx(mass, rel=0.25)


def test_truth_sane(single_rec):
    _, truth = single_rec
    assert truth["format"] == "towerear-crosscheck-truth/1"
    assert truth["cells"] in ("matched", "mixed")
    ts = [ld["t"] for ld in truth["landings"]]
    assert ts == sorted(ts) and len(ts) >= 5
    for ld in truth["landings"]:
        assert 0 <= ld["floor"] <= 7 and ld["cubes"] == 1
        assert 5.0 < ld["t_first_impact"] <= ld["t"] < truth["duration_s"]


def test_game_truth_sane():
    _, truth = m.make_one(4, "game", 75.0)
    assert truth["lifts"] and len(truth["lifts"]) == len(truth["closes"])
    for key in ("landings", "knockdowns", "removals", "lifts", "closes", "knocks"):
        ts = [e["t"] for e in truth[key]]
        assert ts == sorted(ts)
        assert all(t > 5.0 for t in ts)
    for lift, close in zip(truth["lifts"], truth["closes"], strict=True):
        assert lift["t"] < close["t"] and lift["exposed"] == close["exposed"]
    for kd in truth["knockdowns"]:
        assert 0 <= kd["to_floor"] < kd["from_floor"] <= 7
    n_knocked = sum(ld["knocked"] for ld in truth["landings"])
    assert n_knocked == len(truth["knockdowns"])
    assert sum(ld["caused_knockdown"] for ld in truth["landings"]) == n_knocked


def test_deterministic():
    a = m.make_one(7, "rapid", 12.0)
    b = m.make_one(7, "rapid", 12.0)
    assert a[0] == b[0] and a[1] == b[1]
    assert m.make_one(8, "rapid", 12.0)[0] != a[0]


def test_unknown_scenario_exits_2(tmp_path):
    out = tmp_path / "never"
    proc = subprocess.run(
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
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1
    assert not out.exists()
