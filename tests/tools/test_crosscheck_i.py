"""tools/crosscheck_i/make_recordings_i.py (cross-check model I, a hobbyist's real build)
writes bytes our decoder reads, truth the scorer reads, and physics its README describes."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hostapp.protocol import DecoderStats, Hello
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

SCRIPT = TOOLS / "crosscheck_i" / "make_recordings_i.py"
ROOT = TOOLS.parent
gen = load_script(SCRIPT, "crosscheck_i_generator")
score = load_script(TOOLS / "crosscheck" / "score.py", "crosscheck_score_for_i")

# (scenario, seed, seconds): short, but the game is long enough to open the tower.
RECORDINGS = [("single", 1, 25.0), ("rapid", 2, 20.0), ("noisy", 3, 25.0), ("game", 4, 70.0)]


@dataclass
class Decoded:
    truth: dict[str, Any]
    tower: Any
    stats: DecoderStats
    hello: Hello
    load_t: np.ndarray
    load_valid: np.ndarray
    load_values: np.ndarray
    piezo: np.ndarray


@pytest.fixture(scope="module")
def recordings(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Decoded]:
    out = tmp_path_factory.mktemp("model_i")
    result = {}
    for scenario, seed, duration in RECORDINGS:
        bin_path, truth_path = gen.make_recording(seed, scenario, duration, out)
        frames, stats = decode_in_odd_chunks(bin_path.read_bytes())
        check_seqs_consecutive(frames)
        piezos, timed_loads = stream_timed(frames)
        loads = [m for _, m in timed_loads]
        result[scenario] = Decoded(
            json.loads(truth_path.read_text()), gen.Tower(seed), stats,
            next(f.msg for f in frames if isinstance(f.msg, Hello)),
            np.array([s for s, _ in timed_loads]),
            np.array([m.valid for m in loads]), np.array([m.values for m in loads], np.int64),
            np.concatenate([m.samples for _, m in piezos]))
    return result


def test_crc_and_cobs_follow_the_contract() -> None:
    check_wire_encoder(gen)
    rng = np.random.default_rng(5)
    for length in (1, 7, 60, 205, 253):
        rows = rng.integers(0, 3, (30, length)).astype(np.uint8)
        for row, framed in zip(rows, gen.cobs_frames(rows), strict=True):
            assert framed.tobytes() == gen.cobs_encode(row.tobytes()) + b"\x00"


@pytest.mark.parametrize("scenario", [s for s, _, _ in RECORDINGS])
def test_our_decoder_reads_every_frame(recordings: dict[str, Decoded], scenario: str) -> None:
    rec = recordings[scenario]
    st, tw = rec.stats, rec.tower
    assert st.damaged_frames == 0 and st.lost_messages == 0 and st.unknown_types == 0
    assert st.partial_start == int(tw.junk_prefix)
    h = rec.hello
    assert (h.proto, h.n_piezo, h.n_load, h.adc_bits) == (1, 8, 8, 10)
    assert (h.piezo_rate_hz, h.load_rate_hz) == (tw.piezo_rate, tw.load_rate)
    assert st.bytes_in / rec.truth["duration_s"] < 90_000  # fits 1 Mbaud 8N1
    # The samples are contiguous: as many sets as the stream's seconds at the HELLO rate.
    assert abs(len(rec.piezo) / h.piezo_rate_hz - rec.truth["duration_s"]) < 0.05
    assert rec.piezo.max() < 1024
    assert abs(np.median(rec.piezo[: 2 * h.piezo_rate_hz]) - 512) < 40  # biased at mid-scale
    rate = (len(rec.load_t) - 1) / (rec.load_t[-1] - rec.load_t[0])
    assert 0.85 * h.load_rate_hz < rate < 1.05 * h.load_rate_hz


@pytest.mark.parametrize(("scenario", "seed", "duration"), RECORDINGS)
def test_truth_is_what_the_scorer_reads(recordings: dict[str, Decoded], scenario: str,
                                        seed: int, duration: float) -> None:
    truth = recordings[scenario].truth
    check_truth(truth, score, scenario=scenario, seed=seed, duration_s=duration)
    check_scored_perfect(truth, score)
    for x in truth["landings"]:
        assert x["t_first_impact"] <= x["t_weight"] <= x["t"]
        if x["knocked"]:
            throw = truth["landings"][x["by"]]
            assert throw["caused_knockdown"] and not throw["knocked"]
            assert x["floor"] < x["from_floor"]
        else:
            assert x["t_throw"] < x["t_first_impact"]


def test_a_seed_is_a_tower(tmp_path: Path, recordings: dict[str, Decoded]) -> None:
    check_same_seed_same_bytes(gen, tmp_path)
    assert gen.Tower(4).describe() == recordings["game"].truth["tower"]


def test_a_landing_raises_its_plate(recordings: dict[str, Decoded]) -> None:
    rec = recordings["single"]
    tw, truth = rec.tower, rec.truth
    checked = 0
    events = [x["t"] for x in truth["landings"]]
    for x in truth["landings"]:
        if x["knocked"] or x["caused_knockdown"] or sum(abs(t - x["t"]) < 3 for t in events) > 1:
            continue
        ch = x["floor"]
        before = (rec.load_t > x["t_throw"] - 1.0) & (rec.load_t < x["t_throw"])
        after = (rec.load_t > x["t"] + 0.8) & (rec.load_t < x["t"] + 1.8)
        step = np.median(rec.load_values[after, ch]) - np.median(rec.load_values[before, ch])
        cube = tw.sign[ch] * tw.counts_per_g[ch] * tw.cube_g
        assert 0.6 < step / cube < 1.4
        checked += 1
    assert checked >= 2


def test_lifted_levels_stop_reporting_and_removals_happen_while_open(
        recordings: dict[str, Decoded]) -> None:
    rec = recordings["game"]
    truth = rec.truth
    assert truth["lifts"] and len(truth["lifts"]) == len(truth["closes"])
    for lift, close in zip(truth["lifts"], truth["closes"], strict=True):
        k = lift["exposed"]
        assert 0 <= k <= 7 and close["exposed"] == k and close["t"] > lift["t"]
        inside = (rec.load_t > lift["t"] + 0.02) & (rec.load_t < close["t"])
        above = sum(1 << c for c in range(k + 1, 8))
        assert np.all(rec.load_valid[inside] & above == 0)
        assert np.all(rec.load_valid[inside] & 1)  # the ground floor never goes away
        for x in truth["landings"]:
            assert not lift["t"] - 0.5 < x.get("t_throw", x["t"]) < close["t"]
    for r in truth["removals"]:
        assert r["cubes"] >= 1
        assert any(lf["t"] < r["t"] < c["t"] and lf["exposed"] == r["floor"]
                   for lf, c in zip(truth["lifts"], truth["closes"], strict=True))
    game = truth["game"]
    throws = [line.split()[1] for line in game["log"] if line.startswith("throw")]
    assert throws[:2 + 2 * len(game["players"])] == \
        ["red", "red"] + [p for p in game["players"] for _ in range(2)]


def test_command_line(tmp_path: Path) -> None:
    check_command_line(SCRIPT, score, tmp_path / "cli", 15.0)


def test_the_scorer_scores_towerear_detect_on_a_recording(tmp_path: Path) -> None:
    bin_path, truth_path = gen.make_recording(6, "single", 20.0, tmp_path)
    proc = subprocess.run([str(ROOT / ".venv" / "bin" / "towerear"), "detect", str(bin_path)],
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr[-500:]
    events, malformed = score.parse_jsonl(proc.stdout)
    assert not malformed
    res = score.score_one(score.read_truth(truth_path), score.DetectRun(events, 0, 1.0),
                          tolerance_s=0.5)
    assert res["n_truth"] == sum(not x["knocked"] for x in json.loads(
        truth_path.read_text())["landings"])
    assert res["right"] + res["wrong_floor"] + res["time_off"] + res["missed"] == res["n_truth"]
