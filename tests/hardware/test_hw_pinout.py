import json
from pathlib import Path
from typing import Any

import pytest

from hardware.errors import HardwareError
from hardware.pinout import PINOUT_PATH, load_pinout, parse_pinout


def _raw() -> dict[str, Any]:
    return json.loads(PINOUT_PATH.read_text(encoding="utf-8"))


def test_real_pinout_has_one_analogue_input_and_one_dout_per_level() -> None:
    p = load_pinout()
    assert [ref.pin for ref in p.piezo] == [f"A{k}" for k in range(8)]
    assert p.piezo_adc == tuple(range(8))
    assert len({ref.pin for ref in p.hx711_dout}) == 8
    assert p.hx711_sck.pin not in {ref.pin for ref in p.hx711_dout}
    assert p.uart_baud == 1_000_000


def test_a_pin_used_twice_is_rejected() -> None:
    raw = _raw()
    raw["hx711_dout"][3]["pin"] = raw["hx711_sck"]["pin"]
    with pytest.raises(HardwareError, match="D10 is assigned twice"):
        parse_pinout(raw)


def test_a_missing_level_is_rejected() -> None:
    raw = _raw()
    raw["hx711_dout"] = raw["hx711_dout"][:7]
    with pytest.raises(HardwareError, match="exactly 8 levels"):
        parse_pinout(raw)


def test_a_doubled_level_is_rejected() -> None:
    raw = _raw()
    raw["piezo"][5]["level"] = 4
    with pytest.raises(HardwareError, match="each level 0..7 exactly once"):
        parse_pinout(raw)


def test_a_piezo_on_a_digital_pin_is_rejected() -> None:
    raw = _raw()
    raw["piezo"][2]["pin"] = "D11"
    with pytest.raises(HardwareError, match="piezo level 2 must be an analogue pin"):
        parse_pinout(raw)


@pytest.mark.parametrize("text", ["", "{", "[1, 2]"])
def test_a_broken_file_gives_one_clear_error(tmp_path: Path, text: str) -> None:
    path = tmp_path / "pinout.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(HardwareError) as info:
        load_pinout(path)
    assert "\n" not in str(info.value)
    assert str(info.value).startswith("pinout:")


def test_a_missing_file_names_the_path(tmp_path: Path) -> None:
    with pytest.raises(HardwareError, match="cannot read"):
        load_pinout(tmp_path / "nope.json")
