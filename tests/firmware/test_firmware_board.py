"""The board header is generated from hardware/pinout.json, never copied by hand."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GEN = ROOT / "firmware" / "tools" / "gen_board.py"
PINOUT = ROOT / "hardware" / "pinout.json"


def _generate(pinout: Path, out: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(GEN), str(pinout), str(out)], capture_output=True, text=True
    )


def _define(header: str, name: str) -> str:
    match = re.search(rf"^#define {name} (.*)$", header, re.MULTILINE)
    assert match, name
    return match.group(1)


def test_header_matches_pinout(tmp_path: Path) -> None:
    out = tmp_path / "board.h"
    assert _generate(PINOUT, out).returncode == 0
    header = out.read_text()
    pinout = json.loads(PINOUT.read_text())
    dout = sorted(pinout["hx711_dout"], key=lambda p: p["level"])
    ports = "".join(p["port"][1] for p in dout)
    bits = [int(p["port"][2]) for p in dout]
    assert _define(header, "BOARD_HX711_DOUT_PORTS") == f'"{ports}"'
    assert _define(header, "BOARD_HX711_DOUT_BITS") == "{" + ", ".join(map(str, bits)) + "}"
    masks = _define(header, "BOARD_HX711_CHAN_MASK").strip("{}").split(", ")
    assert [int(m, 16) for m in masks] == [1 << b for b in bits]
    sck = pinout["hx711_sck"]["port"]
    assert _define(header, "BOARD_HX711_SCK_PORT_LETTER") == f"'{sck[1]}'"
    assert _define(header, "BOARD_HX711_SCK_BIT") == sck[2]
    adc = [p["adc"] for p in sorted(pinout["piezo"], key=lambda p: p["level"])]
    assert _define(header, "BOARD_PIEZO_ADC_CHANNELS") == "{" + ", ".join(map(str, adc)) + "}"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda p: p["hx711_dout"][0].update(port="PC0"), "two ports"),
        (lambda p: p["hx711_dout"][1].update(port="PD2"), "used twice"),
        (lambda p: p["hx711_dout"][2].update(port="PD1"), "UART"),
        (lambda p: p["hx711_sck"].update(port="PE9"), "port pin"),
    ],
)
def test_unusable_pinouts_are_refused(tmp_path: Path, change: object, message: str) -> None:
    pinout = json.loads(PINOUT.read_text())
    change(pinout)  # type: ignore[operator]
    bad = tmp_path / "pinout.json"
    bad.write_text(json.dumps(pinout))
    result = _generate(bad, tmp_path / "board.h")
    assert result.returncode != 0
    assert message in result.stderr
    assert not (tmp_path / "board.h").exists()
