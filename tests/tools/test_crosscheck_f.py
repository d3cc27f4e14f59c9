"""Cross-check model F (tools/crosscheck_f/make_recordings_f.py): an independent tower
model whose recordings the project's decoder must read cleanly, with truth files the
scorer accepts, and whose physics behaves as its README says."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hostapp.protocol import Load, Piezo
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

SCRIPT = TOOLS / "crosscheck_f" / "make_recordings_f.py"
gen = load_script(SCRIPT, "crosscheck_f_make_recordings")
score = load_script(TOOLS / "crosscheck" / "score.py", "crosscheck_score_for_f")

SHORT_S = 20.0


@pytest.fixture(scope="module")
def short_recordings(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Path]]:
    """One short recording per scenario (seed 2: boot with line noise, attach, wrap)."""
    out = tmp_path_factory.mktemp("f_short")
    return {s: gen.make_recording(2, s, SHORT_S, out) for s in gen.SCENARIOS}


def _truth(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())


def test_wire_encoder() -> None:
    check_wire_encoder(gen)


def test_vectorised_crc_and_cobs_match_the_scalar_ones() -> None:
    check_row_encoders(gen, delimited=False)


@pytest.mark.parametrize("scenario", ["single", "rapid", "noisy", "game"])
def test_recordings_decode_cleanly(short_recordings: dict[str, tuple[Path, Path]],
                                   scenario: str) -> None:
    bin_path, truth_path = short_recordings[scenario]
    rec = read_recording(bin_path)
    stats = rec.stats
    assert stats.damaged_frames == 0 and stats.lost_messages == 0
    assert stats.unknown_types == 0 and stats.resets == 0
    assert rec.hello is not None and rec.hello.adc_bits == 10
    tower = _truth(truth_path)["tower"]
    assert rec.hello.piezo_rate_hz == tower["piezo_rate_hz"]
    assert rec.hello.load_rate_hz == round(tower["load_rate_hz"])
    assert abs(rec.duration_s - SHORT_S) < 0.05
    assert rec.piezo.shape[1] == 8 and rec.load.shape[1] == 8
    # The first seconds are an empty, quiet, closed tower: every load channel reports.
    assert rec.load_valid[rec.load_t_s < 4.0].all()
    frames, _ = decode_in_odd_chunks(bin_path.read_bytes())
    check_seqs_consecutive([f for f in frames])


@pytest.mark.parametrize("scenario", ["single", "rapid", "noisy", "game"])
def test_truth_is_what_the_scorer_reads(short_recordings: dict[str, tuple[Path, Path]],
                                        scenario: str) -> None:
    truth = _truth(short_recordings[scenario][1])
    check_truth(truth, score, scenario=scenario, seed=2, duration_s=SHORT_S)
    check_scored_perfect(truth, score)
    assert truth["model"] == "F"
    assert len(truth["tower"]["counts_per_g"]) == 8


def test_same_seed_same_bytes(tmp_path: Path) -> None:
    check_same_seed_same_bytes(gen, tmp_path)


def test_command_line(tmp_path: Path) -> None:
    check_command_line(SCRIPT, score, tmp_path / "out", 12.0)


def test_start_mid_frame_and_clock_wrap(tmp_path: Path) -> None:
    # Seed 1, "rapid": the host attached to a device up for hours, just before micros() wraps.
    bin_path, truth_path = gen.make_recording(1, "rapid", SHORT_S, tmp_path)
    truth = _truth(truth_path)
    assert truth["session"]["start_mode"] == "attach_wrap"
    (wrap_s,) = truth["session"]["t_us_wraps_at_s"]
    assert 0 < wrap_s < SHORT_S
    frames, stats = decode_in_odd_chunks(bin_path.read_bytes())
    assert stats.partial_start == 1 and stats.damaged_frames == 0
    raw = np.array([f.msg.t_us for f in frames if isinstance(f.msg, Piezo | Load)])
    assert np.sum(np.diff(raw) < -(1 << 31)) == 1
    rec = read_recording(bin_path)
    assert np.all(np.diff(rec.piezo_t_s) > 0)
    # Stream time 0 is the first PIEZO or LOAD decoded; a PIEZO sent just after a
    # LOAD may hold sets sampled a few ms before it (negative stream times).
    assert abs(rec.piezo_t_s[0]) < 0.01 and abs(rec.duration_s - SHORT_S) < 0.05


def _medians(rec: Recording, t0: float, t1: float) -> np.ndarray:
    sel = (rec.load_t_s >= t0) & (rec.load_t_s < t1) & rec.load_valid.all(axis=1)
    assert sel.sum() >= 20
    return np.median(rec.load[sel].astype(float), axis=0)


def test_a_landing_moves_one_load_channel_by_one_cube(tmp_path: Path) -> None:
    bin_path, truth_path = gen.make_recording(3, "single", 45.0, tmp_path)
    truth = _truth(truth_path)
    rec = read_recording(bin_path)
    landings = truth["landings"]
    checked = 0
    for x in landings:
        others = [y for y in landings if y is not x and abs(y["t"] - x["t"]) < 3.0]
        if x["knocked"] or x["caused_knockdown"] or others:
            continue
        before = _medians(rec, x["t_first_impact"] - 1.0, x["t_first_impact"] - 0.1)
        after = _medians(rec, x["t"] + 0.5, x["t"] + 1.5)
        delta = after - before
        step = x["step_counts"]
        floor = x["floor"]
        # Within a few percent: the shunt path through the cardboard creeps for seconds.
        assert delta[floor] == pytest.approx(step, rel=0.12)
        assert np.all(np.abs(np.delete(delta, floor)) < 0.15 * abs(step))
        checked += 1
    assert checked >= 3


def test_a_lift_clears_the_valid_bits_above_the_exposed_level(tmp_path: Path) -> None:
    bin_path, truth_path = gen.make_recording(1, "game", 70.0, tmp_path)
    truth = _truth(truth_path)
    rec = read_recording(bin_path)
    lifts = [(lift, close) for lift, close in zip(truth["lifts"], truth["closes"], strict=True)
             if lift["exposed"] < 7]
    assert lifts
    t = rec.load_t_s
    for lift, close in lifts:
        k = lift["exposed"]
        assert close["exposed"] == k
        before = (t > lift["t"] - 0.5) & (t < lift["t"] - 0.05)
        during = (t > lift["t"] + 0.03) & (t < close["t"] - 0.35)
        after = (t > close["t"] + 0.4) & (t < close["t"] + 1.5)
        assert rec.load_valid[before].all() and rec.load_valid[after].all()
        assert during.sum() > 50
        assert not rec.load_valid[during][:, k + 1:].any()
        assert rec.load_valid[during][:, : k + 1].all()
    # Removals happen while the tower is open, on the exposed level.
    for rem in truth["removals"]:
        assert any(lift["t"] < rem["t"] < close["t"] and rem["floor"] == lift["exposed"]
                   for lift, close in zip(truth["lifts"], truth["closes"], strict=True))


def test_load_messages_come_at_the_slowest_hx711s_rate(
        short_recordings: dict[str, tuple[Path, Path]]) -> None:
    bin_path, truth_path = short_recordings["single"]
    tower = _truth(truth_path)["tower"]
    rec = read_recording(bin_path)
    period = float(np.median(np.diff(rec.load_t_s)))
    # All eight chips are read together once the slowest has a conversion ready.
    assert 1 / period == pytest.approx(min(tower["hx_rate_hz"]), rel=0.01)
    piezo_period = float(np.median(np.diff(rec.piezo_t_s)))
    assert 1 / piezo_period == pytest.approx(tower["piezo_rate_hz"], rel=1e-3)
