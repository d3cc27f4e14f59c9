"""The independent cross-check generator (model B) writes recordings our codec reads.

tools/crosscheck_b/ is a folder of scripts, not a package: load it by path. Only
the test imports the project's decoder; the generator has its own encoder.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hostapp.protocol import FrameDecoder, Hello, Load, Piezo, Status, cobs_decode
from tests.scripts import TOOLS, load_script

gen = load_script(TOOLS / "crosscheck_b" / "make_recordings_b.py", "crosscheck_b_make_recordings")
score = load_script(TOOLS / "crosscheck" / "score.py", "crosscheck_score_for_b")


def test_crc_and_cobs_follow_the_contract_and_agree_with_our_decoder() -> None:
    assert gen.crc16_ccitt_false(b"123456789") == 0x29B1
    assert gen.crc16_bitwise(b"123456789") == 0x29B1
    rng = np.random.default_rng(7)
    samples = [b"", b"\x00", b"\x00\x00", b"\x01" * 253, b"\x01" * 254, b"\x01" * 255,
               b"\x01" * 254 + b"\x00", bytes(range(256)) * 2]
    samples += [rng.integers(0, 3, n).astype(np.uint8).tobytes() for n in (1, 9, 120, 254, 600)]
    for data in samples:
        encoded = gen.cobs_encode(data)
        assert b"\x00" not in encoded
        assert cobs_decode(encoded) == data
        assert gen.crc16_ccitt_false(data) == gen.crc16_bitwise(data)
        if len(data) <= 254:
            assert gen._cobs_fast(data) == encoded


def _decode(path: Path) -> tuple[list[Any], Any]:
    decoder = FrameDecoder()
    data = path.read_bytes()
    frames = []
    for i in range(0, len(data), 3001):  # odd chunk size: frames cut anywhere
        frames += decoder.feed(data[i:i + 3001])
    return frames, decoder.stats


# seed 4: every 4th tower starts 10-50 s before the u32 clock wraps (and mid-frame)
@pytest.mark.parametrize(("seed", "scenario", "seconds"),
                         [(1, "single", 20.0), (2, "rapid", 20.0), (3, "noisy", 20.0),
                          (4, "game", 40.0)])
def test_recording_decodes_cleanly_and_truth_fits_the_scorer(
    tmp_path: Path, seed: int, scenario: str, seconds: float
) -> None:
    rec, truth_path = gen.make_recording(seed, scenario, seconds, tmp_path)
    assert rec.name == f"{scenario}_t{seed}.bin"
    assert truth_path.name == f"{scenario}_t{seed}.truth.json"
    truth = json.loads(truth_path.read_text())
    info = truth["recording"]
    frames, stats = _decode(rec)
    assert stats.crc_errors == stats.framing_errors == stats.bad_length == 0
    assert stats.lost_messages == stats.unknown_types == 0
    assert stats.partial_start == (1 if info["starts_mid_frame"] else 0)

    hello = frames[0].msg
    assert isinstance(hello, Hello)
    tower = truth["tower"]
    assert (hello.n_piezo, hello.n_load, hello.piezo_rate_hz, hello.load_rate_hz) == (
        8, 8, 2000, tower["load_rate_hello"])
    seqs = [f.seq for f in frames]
    assert seqs[0] == info["first_seq"]
    assert all((b - a) % 65536 == 1 for a, b in zip(seqs, seqs[1:], strict=False))

    kinds = [type(f.msg) for f in frames]
    counts = info["counts"]
    assert kinds.count(Hello) == 1
    assert kinds.count(Piezo) == counts["piezo_frames"]
    assert kinds.count(Load) == counts["load"]
    assert kinds.count(Status) == counts["status"] > 0
    piezo = [f.msg for f in frames if isinstance(f.msg, Piezo)]
    assert all(1 <= p.samples.shape[0] <= 14 and p.samples.shape[1] == 8 for p in piezo)
    samples = np.concatenate([p.samples for p in piezo])
    assert samples.max() <= 1023
    quiet = samples[: int(2000 * 3)]  # the first seconds: an empty, quiet tower
    assert np.all(np.abs(np.median(quiet, axis=0) - 512) <= 40)

    first = next(f.msg for f in frames if isinstance(f.msg, Piezo | Load))
    assert first.t_us == info["t_us_first_data"]
    data_t = np.array([f.msg.t_us for f in frames if isinstance(f.msg, Piezo | Load)],
                      dtype=np.int64)
    unwrapped = data_t + (1 << 32) * np.cumsum(np.r_[0, np.diff(data_t) < -(1 << 31)])
    assert (unwrapped[-1] >= (1 << 32)) == info["wraps"]
    assert info["wraps"] == (seed % 4 == 0)
    stream_s = (unwrapped.max() - unwrapped[0]) / 1e6
    assert truth["duration_s"] == pytest.approx(stream_s, abs=1e-3)
    assert truth["duration_s"] == pytest.approx(seconds, abs=0.1)
    set_t = np.array([p.t_us for p in piezo], dtype=np.int64)
    steps = np.diff(set_t) % (1 << 32) / np.array([p.samples.shape[0] for p in piezo[:-1]])
    assert np.all(np.abs(steps - 500) < 1.5)  # 2000 sets/s, +-500 ppm, rounding

    assert score.TRUTH_KEYS <= truth.keys()
    assert truth["format"] == "towerear-crosscheck-truth/1" and truth["scenario"] == scenario
    assert truth["cells"] in ("matched", "mixed") and truth["seed"] == seed
    assert truth["landings"]
    quiet_s = info["quiet_s"]
    assert 4.0 <= quiet_s <= 7.0
    for x in truth["landings"]:
        assert {"t", "floor", "cubes", "t_first_impact", "knocked"} <= x.keys()
        assert 0 <= x["floor"] <= 7 and x["cubes"] == 1
        assert quiet_s <= x["t_first_impact"] <= x["t"] < truth["duration_s"]
    for kind in ("knockdowns", "removals", "lifts", "closes", "knocks"):
        for x in truth[kind]:
            assert quiet_s <= x["t"] < truth["duration_s"]
    assert sum(x["knocked"] for x in truth["landings"]) == len(truth["knockdowns"])
    if scenario == "game":
        assert truth["lifts"] and len(truth["lifts"]) == len(truth["closes"])
        lift = truth["lifts"][0]
        loads = [f.msg for f in frames if isinstance(f.msg, Load)]
        t_load = np.array([ld.t_us for ld in loads], dtype=np.int64)
        t_load = (t_load - info["t_us_first_data"]) % (1 << 32) / 1e6
        during = (t_load > lift["t"] + 0.05) & (t_load < truth["closes"][0]["t"])
        lifted_bits = sum(1 << k for k in range(lift["exposed"] + 1, 8))
        assert all(ld.valid & lifted_bits == 0 and ld.valid | lifted_bits == 0xFF
                   for ld, d in zip(loads, during, strict=True) if d)
    if scenario == "noisy":
        assert truth["knocks"]

    res = score.score_one(truth, score.DetectRun([], 0, 1.0), tolerance_s=0.5)
    assert res["n_truth"] == sum(not x["knocked"] for x in truth["landings"])


def test_towers_differ_and_stay_within_the_documented_ranges() -> None:
    towers = [gen.Tower.from_seed(s) for s in range(1, 13)]
    masses = [t.cube_mass_g for t in towers]
    assert len(set(masses)) == len(masses) and all(0.25 <= m <= 1.0 for m in masses)
    for t in towers:
        assert np.all((np.abs(t.sens) >= 3000 * 0.9) & (np.abs(t.sens) <= 80000 * 1.1))
        assert np.all(np.abs(t.offset) + np.abs(t.sens) * 40 <= (1 << 23))
        assert all(80 <= f <= 2000 for p in t.plates for f in p.modes_hz)
        assert all(6 <= p.f0_hz <= 30 for p in t.plates)
        assert abs(t.piezo_ppm) <= 500


def test_the_replays_slices_do_not_change_what_is_decided(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Model B's quick series keep several steps and second looks pending at
    # once. Each is judged at its own time with the readings of then, not
    # when the next evidence or the end of a slice comes (live, the app
    # feeds a few readings at a time). Times may differ by a fraction of a
    # sample: the piezo grid follows the stamps from where blocks begin.
    from hostapp import pipeline
    from hostapp.cli.detect import detect_recording

    rec, _ = gen.make_recording(1, "rapid", 120.0, tmp_path)
    runs = []
    for slice_s in (2.0, 0.1):
        monkeypatch.setattr(pipeline, "_SLICE_S", slice_s)
        runs.append(detect_recording(rec).events)
    big, small = runs
    assert len(big) == len(small) > 50

    def what(e: dict[str, Any]) -> tuple[Any, ...]:
        return tuple(e.get(k) for k in ("event", "floor", "cubes", "exposed", "knocked_from"))

    for a, b in zip(big, small, strict=True):
        assert what(a) == what(b)
        assert a["t"] == pytest.approx(b["t"], abs=0.002)
        assert a["t_decided"] == pytest.approx(b["t_decided"], abs=0.002)
