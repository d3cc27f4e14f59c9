"""The SKiDL schematic: ERC, netlist, wiring from the pinout, spring contacts, BOM counts."""

import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from hardware.bom import read_bom, schematic_mismatches
from hardware.contacts import SHARED_CONTACTS, board_of_level, contact_signals, on_board
from hardware.pinout import N_LEVELS
from hardware.schematic import main


def test_erc_passes_with_no_errors_and_no_warnings(built_schematic: Any) -> None:
    report = built_schematic.erc()
    assert report.errors == 0, report.messages
    assert report.warnings == 0, report.messages


def test_erc_catches_two_hx711_outputs_shorted(skidl_data_home: Path) -> None:
    from hardware import schematic, symbols
    from hardware.frontend import FRONT_END

    library = symbols.write_project_library(skidl_data_home / "short")
    b = schematic._Builder(FRONT_END, library)
    schematic._hx711_board(b, 1)
    schematic._hx711_board(b, 2)
    b.net(on_board(board_of_level(1), "DOUT1")).connect(b.net(on_board(board_of_level(2), "DOUT2")))
    report = schematic.Schematic(circuit=b.circuit, pinout=None, contacts={}).erc()  # type: ignore[arg-type]
    assert report.errors >= 1
    assert any("DOUT" in m for m in report.messages)


def test_netlist_lists_every_part_and_the_level_nets(built_schematic: Any) -> None:
    text = built_schematic.netlist()
    assert len(re.findall(r"\(comp\s+\(ref ", text)) == len(built_schematic.circuit.parts)
    for level in range(N_LEVELS):
        assert f'(name "DOUT{level}")' in text
        assert f'(name "ADC{level}")' in text


def test_nano_pins_come_from_the_pinout(built_schematic: Any) -> None:
    p = built_schematic.pinout
    for level in range(N_LEVELS):
        adc = built_schematic.net_pins(f"ADC{level}")
        nano_adc = {pin for pin in adc if pin.startswith("A1.")}
        assert nano_adc == {f"A1.{p.piezo[level].pin}"}
        dout = built_schematic.net_pins(f"DOUT{level}")
        nano_dout = {pin.split("/")[0] for pin in dout if pin.startswith("A1.")}
        assert nano_dout == {f"A1.{p.hx711_dout[level].pin}"}
    sck = built_schematic.net_pins("HX_SCK")
    assert f"A1.{p.hx711_sck.pin}" in sck


def test_each_dout_has_a_pull_up_on_the_base_and_its_hx711_on_its_board(
    built_schematic: Any,
) -> None:
    parts = {part.ref: part for part in built_schematic.circuit.parts}
    for level in range(N_LEVELS):
        base_side = built_schematic.net_pins(f"DOUT{level}")
        pull_ups = [
            pin
            for pin in base_side
            if pin.startswith("R") and parts[pin.split(".")[0]].value == "10k"
        ]
        assert len(pull_ups) == 1, f"level {level}: {base_side}"
        own_board = built_schematic.net_pins(on_board(board_of_level(level), f"DOUT{level}"))
        hx = [pin for pin in own_board if pin.endswith(".DOUT")]
        assert len(hx) == 1 and parts[hx[0].split(".")[0]].value == "HX711"


@pytest.mark.parametrize("boundary", range(N_LEVELS - 1))
def test_contact_count_per_boundary(built_schematic: Any, boundary: int) -> None:
    expected = len(SHARED_CONTACTS) + 2 * (N_LEVELS - 1 - boundary)
    assert len(contact_signals(boundary)) == expected
    assert len(built_schematic.contacts[boundary]) == expected


def test_closed_tower_connects_every_level(built_schematic: Any) -> None:
    assert built_schematic.connected_levels() == list(range(N_LEVELS))


@pytest.mark.parametrize("k", range(N_LEVELS))
def test_lifting_modules_k_to_7_disconnects_levels_above_k(built_schematic: Any, k: int) -> None:
    # Lifting modules k..7 opens boundary k (module 7 has no contacts beneath it
    # worth opening: it carries no sensor).
    assert built_schematic.connected_levels(open_boundary=k) == list(range(k + 1))


def test_bom_quantities_agree_with_the_schematic(built_schematic: Any) -> None:
    assert schematic_mismatches(read_bom(), built_schematic.part_counts()) == []


def test_bom_check_reports_a_wrong_quantity_and_a_missing_part() -> None:
    rows = [r for r in read_bom() if r.value != "BAT54S"]
    counts: Counter[tuple[str, str]] = Counter(
        {(r.value, r.footprint): r.quantity for r in rows if r.in_schematic}
    )
    counts[("BAT54S", "Package_TO_SOT_SMD:SOT-23")] = 8
    first = next(r for r in rows if r.in_schematic)
    counts[(first.value, first.footprint)] += 1
    problems = schematic_mismatches(rows, counts)
    assert len(problems) == 2
    assert any("BAT54S" in p and "not in the BOM" in p for p in problems)


def test_command_line_writes_a_netlist(
    tmp_path: Path, skidl_data_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "kit.net"
    assert main(["--out", str(out)]) == 0
    assert "(export" in out.read_text(encoding="utf-8")
    assert "ERC: 0 errors, 0 warnings" in capsys.readouterr().out


def test_project_library_symbols_are_verbatim_stock_symbols(
    tmp_path: Path, skidl_data_home: Path
) -> None:
    from hardware import symbols

    text = symbols.write_project_library(tmp_path).read_text(encoding="utf-8")
    for library, name in symbols.SYMBOLS:
        stock = (symbols.stock_library_dir() / f"{library}_sklib.py").read_text(encoding="utf-8")
        block = symbols._symbol_block(stock, name, library)
        assert block in text
        assert block.endswith("})")
        assert f"'name':'{name}'" in block


def test_an_unknown_symbol_is_a_clear_error(skidl_data_home: Path) -> None:
    from hardware import symbols
    from hardware.errors import HardwareError

    with pytest.raises(HardwareError, match="has no symbol NE555X"):
        symbols._symbol_block("no parts here", "NE555X", "Timer")
