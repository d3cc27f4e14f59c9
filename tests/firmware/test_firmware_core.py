"""The firmware core's host unit tests (under ASan/UBSan) and its fuzz run."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from hostapp.sources.simavr import build_lock

pytestmark = pytest.mark.firmware


@pytest.fixture(scope="module")
def host_binaries(firmware_dir: Path) -> Path:
    build = firmware_dir / "build"
    with build_lock(build / ".build.lock"):
        subprocess.run(["make", "-s", "-C", str(firmware_dir), "host"], check=True)
    return build / "host"


def test_core_unit_tests_pass_under_sanitizers(host_binaries: Path) -> None:
    result = subprocess.run(
        [str(host_binaries / "test_core")], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "FAIL" not in result.stdout
    assert ", 0 failed" in result.stdout


def test_fuzzing_the_command_decoder_finds_nothing(host_binaries: Path) -> None:
    result = subprocess.run(
        [str(host_binaries / "fuzz_cmd"), "-runs=200000", "-seed=0x7E57"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "no invariant broken" in result.stdout
    assert int(result.stdout.split()[1]) == 200_000
