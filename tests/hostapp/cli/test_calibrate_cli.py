"""``towerear calibrate`` in the terminal: simulated run, report, errors, health."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hostapp.cli import main


def test_simulated_calibration_saves_profile_and_report(tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str],
                                                        towerear_home: Path) -> None:
    status = main(["calibrate", "--sim", "--seed", "4", "--levels", "6", "--cubes", "3",
                   "--report", str(tmp_path / "rep")])
    out = capsys.readouterr().out
    assert status == 0, out
    assert "Level 6: put the 1 euro in the middle of the plate." in out
    profiles = list((towerear_home / "config" / "profiles").glob("*.json"))
    assert len(profiles) == 1
    data = json.loads(profiles[0].read_text())
    assert data["load"][6]["counts_per_gram"] > 0 and data["load"][5] is None
    report = (tmp_path / "rep" / "calibration-report.md").read_text()
    assert "| 6 |" in report and "PASS" in report
    # The report alone, from the stored profile.
    assert main(["calibrate", "--report", str(tmp_path / "again")]) == 0
    assert (tmp_path / "again" / "calibration-load.png").exists()
    # Health check on the simulated tower, now calibrated on level 6.
    status = main(["calibrate", "--sim", "--seed", "4", "--health"])
    out = capsys.readouterr().out
    assert "Level 6: load noise" in out


@pytest.mark.parametrize(
    "argv,needle",
    [
        (["calibrate", "--sim", "--levels", "9"], "distinct level numbers 0-7"),
        (["calibrate", "--sim", "--coin", "eur-7"], "unknown coin"),
        (["calibrate", "--sim", "--mass", "500"], "outside 0.5-90 g"),
        (["calibrate", "--report"], "no calibration profile is stored yet"),
    ],
)
def test_bad_arguments_give_one_line(argv: list[str], needle: str,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert needle in err and "\n" not in err and "Traceback" not in err
