"""Scenario files: what Python writes, and what the harness refuses."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

from hostapp.errors import SourceError
from hostapp.sources.simavr import FirmwareBuild, HostBytes, SimavrError, write_scenario

pytestmark = pytest.mark.firmware


def _block(**change: object) -> object:
    from dsp.sim import SensorBlock

    fields: dict[str, object] = {
        "piezo_t0_s": 1.0,
        "piezo": np.full((200, 8), 512, dtype=np.uint16),
        "load_t_s": 1.0 + np.array([0.002, 0.0145, 0.027]),
        "load": np.zeros((3, 8), dtype=np.int32),
        "load_valid": np.ones((3, 8), dtype=bool),
    }
    fields.update(change)
    return SensorBlock(**fields)  # type: ignore[arg-type]


def test_layout_is_as_documented(tmp_path: Path) -> None:
    valid = np.ones((3, 8), dtype=bool)
    valid[1, 5:] = False
    path = tmp_path / "s.bin"
    write_scenario(path, _block(load_valid=valid), commands=[HostBytes(0.25, b"\x01\x02\x00")])
    data = path.read_bytes()
    assert data[:8] == b"TWRSCN01"
    rate, n_sets, n_load, n_cmds, n_piezo, n_ch = np.frombuffer(data, "<u4", 6, 8)
    assert (rate, n_sets, n_load, n_cmds, n_piezo, n_ch) == (2000, 200, 3, 1, 8, 8)
    at = 32 + 200 * 16
    t_us = np.frombuffer(data, "<u4", 3, at)
    assert t_us.tolist() == [2000, 14500, 27000]  # relative to the first piezo set
    masks = data[at + 12 + 3 * 32 : at + 12 + 3 * 32 + 3]
    assert list(masks) == [0xFF, 0x1F, 0xFF]
    assert data[-9:] == np.array([250000], "<u4").tobytes() + b"\x03\x00\x01\x02\x00"


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"piezo": np.full((10, 8), 1024, dtype=np.uint16)}, "10-bit"),
        ({"piezo": np.zeros((10, 4), dtype=np.uint16)}, "shape"),
        ({"load": np.full((3, 8), 1 << 23, dtype=np.int32)}, "24 bits"),
        ({"load_t_s": np.array([1.1, 1.0, 1.2])}, "increasing"),
    ],
)
def test_bad_blocks_are_refused_in_one_sentence(
    tmp_path: Path, change: dict[str, object], words: str
) -> None:
    with pytest.raises(SimavrError, match=words) as err:
        write_scenario(tmp_path / "s.bin", _block(**change))
    assert isinstance(err.value, SourceError)
    assert "\n" not in str(err.value)


def test_harness_refuses_a_file_that_is_not_a_scenario(
    tmp_path: Path, firmware_build: FirmwareBuild
) -> None:
    bad = tmp_path / "bad.bin"
    bad.write_bytes(b"TWRSCN01" + bytes(10))
    result = subprocess.run(
        [str(firmware_build.harness), str(firmware_build.elf), str(bad)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "towerear-sim:" in result.stderr
