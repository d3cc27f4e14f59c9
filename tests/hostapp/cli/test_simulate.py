"""``towerear simulate``: the recording, its ground truth, damage and errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from dsp.sim import draw_tower
from dsp.sim.scenarios import run_scenario
from hostapp.cli import main
from hostapp.recording import read_recording

SEED = 7
DURATION_S = 8.0


def test_recording_and_truth(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run.bin"
    assert main(["simulate", "--seed", str(SEED), "--duration", str(DURATION_S),
                 "--scenario", "single", "--out", str(out)]) == 0
    assert "wrote" in capsys.readouterr().err
    rec = read_recording(out)
    assert rec.stats.damaged_frames == 0 and rec.stats.lost_messages == 0
    assert rec.stats.partial_start == 0
    tower = draw_tower(SEED)
    block, truth = run_scenario("single", tower=tower, seed=SEED, duration_s=DURATION_S)
    # Everything but the last, unfinished PIEZO frame is in the recording.
    assert len(block.piezo) - 10 < len(rec.piezo) <= len(block.piezo)
    np.testing.assert_array_equal(rec.piezo, block.piezo[: len(rec.piezo)])
    np.testing.assert_array_equal(rec.load, block.load)
    np.testing.assert_array_equal(rec.load_valid, block.load_valid)

    document = json.loads((tmp_path / "run.truth.json").read_text())
    meta = document["simulate"]
    assert meta["recording"] == "run.bin" and meta["scenario"] == "single"
    assert meta["frames_sent"] == len(rec.frames) and meta["damage"] is None
    scale, origin = meta["clock_scale"], meta["stream_origin_sim_s"]
    assert scale == tower.piezo_rate_hz / 2000.0
    # The documented mapping takes simulator times to the recording's stream times.
    np.testing.assert_allclose((block.load_t_s - origin) * scale, rec.load_t_s, atol=1e-6)
    events = document["events"]
    assert [e["event"] for e in events] == [e.kind for e in truth.events]
    for event in events:
        assert event["t_stream"] == pytest.approx((event["t"] - origin) * scale)
    assert any(e["event"] == "landing" for e in events)


def test_damage_is_in_the_truth(tmp_path: Path) -> None:
    out = tmp_path / "bad.bin"
    assert main(["simulate", "--seed", "3", "--duration", "4", "--scenario", "quiet",
                 "--out", str(out), "--bit-flips", "0.02", "--drops", "0.01"]) == 0
    meta = json.loads((tmp_path / "bad.truth.json").read_text())["simulate"]
    rec = read_recording(out)
    assert meta["damage"]["frames_damaged"] > 5
    assert rec.stats.damaged_frames == meta["damage"]["frames_damaged"]


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        (["--scenario", "bogus"], "unknown scenario 'bogus'; known scenarios: acoustic"),
        (["--duration", "0"], "--duration must be a positive"),
        (["--seed", "-1"], "--seed must be"),
        (["--bit-flips", "1.5"], "--bit-flips must be a probability"),
    ],
)
def test_bad_arguments(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], words: str
) -> None:
    args = {"--seed": "1", "--duration": "2", "--scenario": "quiet",
            "--out": str(tmp_path / "x.bin")}
    for key, value in zip(extra[::2], extra[1::2], strict=True):
        args[key] = value
    assert main(["simulate", *[item for pair in args.items() for item in pair]]) == 2
    err = capsys.readouterr().err.strip()
    assert words in err and "\n" not in err
    assert not (tmp_path / "x.bin").exists()


def test_unwritable_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "no-such-dir" / "x.bin"
    assert main(["simulate", "--seed", "1", "--duration", "1", "--out", str(out)]) == 2
    assert "cannot write the recording" in capsys.readouterr().err
