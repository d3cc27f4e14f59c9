"""One command measures the detector on the cross-check models."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.scripts import TOOLS, load_script

run_all = load_script(TOOLS / "crosscheck" / "run_all.py", "crosscheck_run_all")


def test_every_generator_is_measured() -> None:
    # A blind model written but not registered would never be run.
    scripts = sorted(TOOLS.glob("crosscheck*/make_recordings*.py"))
    assert len(scripts) >= 39
    assert sorted(run_all.GENERATORS.values()) == scripts


def test_run_all_makes_detects_and_scores_each_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--sets", str(tmp_path), "--tag", "t", "--models", "A", "B",
            "--towers", "1", "--ranges", "1", "--duration", "30", "--jobs", "1"]
    assert run_all.main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines[:2]] == ["A", "B"]
    for model in ("a1", "b1"):
        recordings = sorted((tmp_path / model).glob("*.bin"))
        assert len(recordings) == 4  # the four scenarios of tower 1
        assert all(r.with_suffix(".t.jsonl").exists() for r in recordings)
    right = float(re.search(r"right +([\d.]+) %", lines[0]).group(1))  # type: ignore[union-attr]
    assert right >= 90.0
    assert "x real time per core" in lines[-1]
    # Made once: a second run with another tag reuses the recordings.
    before = {p: p.stat().st_mtime for p in (tmp_path / "a1").glob("*.bin")}
    assert run_all.main([*argv[:3], "u", *argv[4:]]) == 0
    assert {p: p.stat().st_mtime for p in (tmp_path / "a1").glob("*.bin")} == before


def test_run_all_scores_the_families_only_some_models_make(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--sets", str(tmp_path), "--tag", "t", "--models", "P", "--towers", "1",
            "--ranges", "1", "--duration", "30", "--jobs", "1", "--families",
            "--long-duration", "60"]
    assert run_all.main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("P 1-1 ")
    families = [line.split()[2] for line in lines[1:-1]]
    assert families == ["acoustic", "damaged", "damagedclean", "long"]
    assert len(list((tmp_path / "p1x").glob("*.t.jsonl"))) == 4
    long_line = next(line for line in lines if " long " in line)
    assert float(re.search(r"right +([\d.]+) %", long_line).group(1)) >= 80.0  # type: ignore[union-attr]
