"""The sensor kit's schematic as code (SKiDL), wired from ``hardware/pinout.json``.

What is on which board:

- **base board**: the Arduino Nano, the eight piezo front ends (see
  :mod:`hardware.frontend`), the DOUT pull-ups, the HX711 clock oscillator,
  VMID, decoupling, and level 0's sensors (its plate rests on the base);
- **module m** (m = 0..6, carrying the roof that is level m+1's floor): level
  m+1's HX711 board, bar load cell, piezo disc and bleed resistor;
- **spring contacts**: boundary j (j = 0..6) joins module j to what lies
  below it (the base for j = 0). It carries the five shared lines (+5 V, GND,
  VMID, SCK, the HX711 clock) and the DOUT and piezo lines of levels
  j+1..7, so lifting modules k..7 opens boundary k and disconnects exactly
  levels k+1..7. Module 7 carries no sensor and needs no contacts.

Run ``python -m hardware.schematic`` from the repository root to run the ERC
and write ``hardware/build/towerear.net`` (a KiCad netlist).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hardware.contacts import (
    BASE,
    SHARED_CONTACTS,
    board_of_level,
    contact_signals,
    on_board,
)
from hardware.errors import HardwareError
from hardware.frontend import FRONT_END, FrontEnd
from hardware.pinout import N_LEVELS, Pinout, load_pinout
from hardware.skidl_env import import_skidl
from hardware.symbols import write_project_library

BUILD_DIR = Path(__file__).with_name("build")

# KiCad footprints; the BOM matches schematic parts by (value, footprint).
FP_R = "Resistor_SMD:R_0805_2012Metric"
FP_C = "Capacitor_SMD:C_0805_2012Metric"
FP_C_BULK = "Capacitor_SMD:C_1206_3216Metric"
FP_SOT23 = "Package_TO_SOT_SMD:SOT-23"
FP_SOIC14 = "Package_SO:SOIC-14_3.9x8.7mm_P1.27mm"
FP_SOP16 = "Package_SO:SOP-16_3.9x9.9mm_P1.27mm"
FP_OSC = "Oscillator:Oscillator_SMD_SeikoEpson_SG8002CA-4Pin_7.0x5.0mm"
FP_NANO = "Module:Arduino_Nano"
FP_POGO = "towerear:PogoPin_P75"
FP_PIEZO = "towerear:Piezo_Disc_20mm_Wires"
FP_LOADCELL = "towerear:LoadCell_Bar_Wires"

# The HX711's nominal crystal: with RATE high it gives exactly 80 readings/s.
HX711_CLOCK_HZ = 11.0592e6


def ohms(value: float) -> str:
    """A resistor value as printed on the schematic and BOM (``"15k"``, ``"1M"``, ``"100"``)."""
    for scale, suffix in ((1e6, "M"), (1e3, "k"), (1.0, "")):
        if value >= scale:
            return f"{value / scale:g}{suffix}"
    raise ValueError(f"resistance {value} is below 1 ohm")


def farads(value: float) -> str:
    """A capacitor value as printed on the schematic and BOM (``"47n"``, ``"10u"``)."""
    for scale, suffix in ((1e-6, "u"), (1e-9, "n"), (1e-12, "p")):
        if value >= scale * 0.999:
            return f"{value / scale:g}{suffix}"
    raise ValueError(f"capacitance {value} is below 1 pF")


@dataclass(frozen=True)
class ErcReport:
    """Outcome of SKiDL's electrical rule check."""

    errors: int
    warnings: int
    messages: tuple[str, ...]


@dataclass
class Schematic:
    """A built circuit and the handles tests and generators need."""

    circuit: Any
    pinout: Pinout
    contacts: dict[int, list[Any]]

    def part_counts(self) -> Counter[tuple[str, str]]:
        """How many parts of each (value, footprint) the circuit holds."""
        return Counter((str(p.value), str(p.footprint)) for p in self.circuit.parts)

    def net_pins(self, name: str) -> set[str]:
        """``"REF.pin-name"`` of every pin on the net called ``name``."""
        for net in self.circuit.nets:
            if net.name == name:
                return {f"{pin.part.ref}.{pin.name}" for pin in net.pins}
        raise KeyError(name)

    def connected_levels(self, *, open_boundary: int | None = None) -> list[int]:
        """Levels whose sensors reach the Nano when the tower is opened at a boundary.

        Lifting modules k..7 opens boundary k: its spring contacts no longer
        touch their pads. A level counts as connected when every line its
        board needs (supplies, SCK, clock, its DOUT and piezo) is joined to
        the base board's net of the same name through the remaining contacts.

        Parameters
        ----------
        open_boundary : int, optional
            The boundary whose contacts are separated; None for a closed tower.
        """
        parent: dict[str, str] = {}

        def root(name: str) -> str:
            while parent.get(name, name) != name:
                name = parent[name]
            return name

        for boundary, parts in self.contacts.items():
            if boundary == open_boundary:
                continue
            for part in parts:
                a, b = (root(str(pin.net.name)) for pin in part.pins)
                parent[a] = b
        connected = []
        for level in range(N_LEVELS):
            board = board_of_level(level)
            lines = [*SHARED_CONTACTS, f"DOUT{level}", f"PIEZO{level}"]
            if all(root(on_board(board, line)) == root(line) for line in lines):
                connected.append(level)
        return connected

    def erc(self) -> ErcReport:
        """Run SKiDL's ERC and collect its verdict."""
        from skidl.logger import erc_logger

        messages: list[str] = []

        class _Collect(logging.Handler):
            def emit(self, record: logging.LogRecord) -> None:
                if record.levelno >= logging.WARNING:
                    messages.append(record.getMessage())

        handler = _Collect()
        saved_level = erc_logger.level
        erc_logger.setLevel(logging.WARNING)
        erc_logger.addHandler(handler)
        try:
            self.circuit.ERC()
        finally:
            erc_logger.removeHandler(handler)
            erc_logger.setLevel(saved_level)
        return ErcReport(
            errors=int(erc_logger.error.count),
            warnings=int(erc_logger.warning.count),
            messages=tuple(messages),
        )

    def netlist(self) -> str:
        """The KiCad netlist of the circuit."""
        return str(self.circuit.generate_netlist(tool="kicad8"))


class _Builder:
    """Places parts into one SKiDL circuit; keeps tags deterministic."""

    def __init__(self, fe: FrontEnd, library: Path) -> None:
        self.skidl: Any = import_skidl()
        self.fe = fe
        self.library = library
        self._lib_templates: dict[str, Any] = {}
        self.circuit = self.skidl.Circuit(tag="towerear")
        self.circuit.no_files = True
        self._nets: dict[str, Any] = {}
        self._tags: Counter[str] = Counter()
        pin_types = self.skidl.Pin.types
        self._piezo = self._template(
            "Piezo_Disc",
            "PZ",
            FP_PIEZO,
            [("1", "HOT", pin_types.PASSIVE), ("2", "COLD", pin_types.PASSIVE)],
        )
        self._load_cell = self._template(
            "Load_Cell_Bar",
            "LC",
            FP_LOADCELL,
            [
                ("1", "E+", pin_types.PASSIVE),
                ("2", "E-", pin_types.PASSIVE),
                ("3", "A+", pin_types.PASSIVE),
                ("4", "A-", pin_types.PASSIVE),
            ],
        )
        # A mated contact joins two boards' nets: the spring (lower board) and
        # the pad it presses on (upper board); lifting a module separates them.
        self._pogo = self._template(
            "Pogo_Pin",
            "SP",
            FP_POGO,
            [("1", "SPRING", pin_types.PASSIVE), ("2", "PAD", pin_types.PASSIVE)],
        )
        self.contacts: dict[int, list[Any]] = {}

    def _template(
        self, name: str, prefix: str, footprint: str, pins: list[tuple[str, str, Any]]
    ) -> Any:
        sk = self.skidl
        return sk.Part(
            name=name,
            tool=sk.SKIDL,
            dest=sk.TEMPLATE,
            ref_prefix=prefix,
            footprint=footprint,
            tag=f"template-{name}",
            pins=[sk.Pin(num=num, name=pin_name, func=func) for num, pin_name, func in pins],
        )

    def _tag(self, role: str) -> str:
        self._tags[role] += 1
        return f"{role}{self._tags[role]}"

    def net(self, name: str) -> Any:
        """The net called ``name``, made on first use."""
        if name not in self._nets:
            self._nets[name] = self.skidl.Net(name, circuit=self.circuit)
        return self._nets[name]

    def power_net(self, name: str) -> Any:
        """A supply net; ERC is told it is driven (see the call sites for by what)."""
        net = self.net(name)
        net.drive = self.skidl.POWER
        return net

    def lib(self, name: str, footprint: str, role: str, value: str = "") -> Any:
        """A part from the project library (one of :data:`SYMBOLS`)."""
        if name not in self._lib_templates:
            self._lib_templates[name] = self.skidl.Part(
                str(self.library), name, tool=self.skidl.SKIDL, dest=self.skidl.TEMPLATE
            )
        part = self._lib_templates[name](
            circuit=self.circuit, tag=self._tag(role), footprint=footprint
        )
        if value:
            part.value = value
        return part

    def resistor(self, ohm: float, a: Any, b: Any, role: str) -> Any:
        r = self.lib("R", FP_R, role, ohms(ohm))
        a += r[1]
        b += r[2]
        return r

    def capacitor(self, farad: float, a: Any, b: Any, role: str) -> Any:
        footprint = FP_C_BULK if farad >= 1e-6 else FP_C
        c = self.lib("C", footprint, role, farads(farad))
        a += c[1]
        b += c[2]
        return c

    def piezo(self, role: str) -> Any:
        part = self._piezo(circuit=self.circuit, tag=self._tag(role))
        part.value = "7BB-20-6"
        return part

    def load_cell(self, role: str) -> Any:
        part = self._load_cell(circuit=self.circuit, tag=self._tag(role))
        part.value = "TAL221 100g"
        return part

    def pogo(self, boundary: int) -> Any:
        part = self._pogo(circuit=self.circuit, tag=self._tag(f"SP{boundary}_"))
        part.value = "Pogo pin"
        self.contacts.setdefault(boundary, []).append(part)
        return part

    def no_connect(self, *pins: Any) -> None:
        for pin in pins:
            self.circuit.NC += pin


def _nano_pin(nano: Any, label: str) -> Any:
    """The Nano symbol's pin for a board label: ``"D0"`` is named ``"D0/RX"`` there."""
    for pin in nano.pins:
        if pin.name == label or pin.name.startswith(label + "/"):
            return pin
    raise HardwareError(f"the Nano symbol has no pin {label}")


def _supply(b: _Builder, board: int, name: str) -> Any:
    """A supply net on ``board``; on a module it is fed through the spring contacts."""
    if board == BASE:
        return b.net(name)
    return b.power_net(on_board(board, name))


def _hx711_board(b: _Builder, level: int) -> None:
    """One HX711 board after the datasheet's reference design, with its load cell.

    The PNP and the 20k/8.2k divider regulate AVDD = 1.25 V x (1 + 20/8.2) =
    4.30 V, which also excites the bridge (E+). RATE is tied high for 80 SPS;
    XI takes the shared clock so all eight convert in lockstep; channel B is
    unused and tied to AGND.
    """
    board = board_of_level(level)
    gnd, vcc = _supply(b, board, "GND"), _supply(b, board, "+5V")
    # AVDD is the PNP's regulated output; SKiDL cannot see a collector drive it.
    avdd = b.power_net(f"AVDD{level}")
    vfb, vbg, base = b.net(f"VFB{level}"), b.net(f"VBG{level}"), b.net(f"HXBASE{level}")
    hx = b.lib("HX711", FP_SOP16, "HX")
    vcc += hx["VSUP"], hx["DVDD"], hx["RATE"]
    gnd += hx["AGND"], hx["INB+"], hx["INB-"]
    avdd += hx["AVDD"]
    vfb += hx["VFB"]
    vbg += hx["VBG"]
    base += hx["BASE"]
    b.net(on_board(board, "HX_SCK")).connect(hx["PD_SCK"])
    b.net(on_board(board, "HX_CLK")).connect(hx["XI"])
    b.net(on_board(board, f"DOUT{level}")).connect(hx["DOUT"])
    b.no_connect(hx["XO"])
    # The datasheet's S8550 in SOT-23 has a non-standard pin order; the MMBT3906
    # (200 mA) does the same job for the bridge's ~4 mA with standard pins.
    q = b.lib("MMBT3906", FP_SOT23, "Q", "MMBT3906")
    vcc += q["E"]
    base += q["B"]
    avdd += q["C"]
    b.resistor(20e3, avdd, vfb, "RFB")
    b.resistor(8.2e3, vfb, gnd, "RFB")
    b.capacitor(10e-6, avdd, gnd, "CAVDD")
    b.capacitor(100e-9, vbg, gnd, "CVBG")
    b.capacitor(100e-9, vcc, gnd, "CDVDD")
    b.capacitor(10e-6, vcc, gnd, "CVSUP")
    cell = b.load_cell("LC")
    avdd += cell["E+"]
    gnd += cell["E-"]
    b.net(f"CELLP{level}").connect(cell["A+"], hx["INA+"])
    b.net(f"CELLN{level}").connect(cell["A-"], hx["INA-"])


def _piezo_disc(b: _Builder, level: int) -> None:
    """The disc under level's plate with its bleed resistor, both across hot and VMID."""
    board = board_of_level(level)
    hot, vmid = b.net(on_board(board, f"PIEZO{level}")), _supply(b, board, "VMID")
    disc = b.piezo("PZ")
    hot += disc["HOT"]
    vmid += disc["COLD"]
    b.resistor(b.fe.bleed_ohm, hot, vmid, "RBLEED")


def _op_amp_units(chip: Any) -> list[dict[str, Any]]:
    """The four amplifiers of an MCP6004 as {"+", "-", "out"} pin handles.

    The symbol names every output ``~``, so the units are picked by pin number
    (datasheet order A, B, C, D).
    """
    numbers = (("3", "2", "1"), ("5", "6", "7"), ("10", "9", "8"), ("12", "13", "14"))
    return [{"+": chip[p], "-": chip[n], "out": chip[o]} for p, n, o in numbers]


def _front_end(
    b: _Builder, level: int, follower: dict[str, Any], lowpass: dict[str, Any], adc_pin: Any
) -> None:
    """Level's piezo channel on the base board: clamp, bias, follower, Sallen-Key, ADC."""
    fe = b.fe
    vcc, gnd, vmid = b.net("+5V"), b.net("GND"), b.net("VMID")
    clamp = b.net(f"PZCLAMP{level}")
    b.resistor(fe.series_ohm, b.net(f"PIEZO{level}"), clamp, "RS")
    b.resistor(fe.bias_ohm, clamp, vmid, "RBIAS")
    diodes = b.lib("BAT54S", FP_SOT23, "D", "BAT54S")
    gnd += diodes["A"]
    vcc += diodes["K"]
    clamp += diodes["COM"]
    buffered = b.net(f"PZBUF{level}")
    clamp += follower["+"]
    buffered += follower["-"], follower["out"]
    mid, node = b.net(f"PZLP1_{level}"), b.net(f"PZLP2_{level}")
    filtered = b.net(f"PZFILT{level}")
    b.resistor(fe.filter_r_ohm, buffered, mid, "RLP")
    b.resistor(fe.filter_r_ohm, mid, node, "RLP")
    b.capacitor(fe.filter_c_feedback_f, mid, filtered, "CLP")
    b.capacitor(fe.filter_c_ground_f, node, gnd, "CLP")
    node += lowpass["+"]
    filtered += lowpass["-"], lowpass["out"]
    b.resistor(fe.output_ohm, filtered, b.net(f"ADC{level}"), "ROUT")
    b.net(f"ADC{level}").connect(adc_pin)


def _base_board(b: _Builder, pinout: Pinout) -> None:
    vcc = b.net("+5V")
    # The host powers the kit through USB; the Nano's ground is that supply's return.
    gnd = b.power_net("GND")
    nano = b.lib("Arduino_Nano_v3.x", FP_NANO, "A", "Arduino Nano v3")
    vcc += nano["+5V"]
    gnd += nano["GND"]
    used = set()
    for level in range(N_LEVELS):
        adc = _nano_pin(nano, pinout.piezo[level].pin)
        dout = _nano_pin(nano, pinout.hx711_dout[level].pin)
        b.net(f"DOUT{level}").connect(dout)
        # A lifted module leaves DOUT floating: the pull-up makes it read "not ready".
        b.resistor(10e3, vcc, b.net(f"DOUT{level}"), "RPU")
        used.update({adc.name, dout.name})
    sck = _nano_pin(nano, pinout.hx711_sck.pin)
    b.net("HX_SCK").connect(sck)
    used.add(sck.name)
    aref = b.net("AREF")
    aref += _nano_pin(nano, "AREF")
    b.capacitor(100e-9, aref, gnd, "CAREF")
    used.update({"AREF", "+5V", "GND"})
    # The Nano's own USB-serial chip and LED use D0, D1 and D13; the rest are free.
    b.no_connect(*(p for p in nano.pins if p.name not in used and not p.is_connected()))

    # VMID: a quiet 2.5 V for the piezo bias; the op amps' inputs draw only pA.
    vmid = b.power_net("VMID")
    b.resistor(b.fe.vmid_divider_ohm, vcc, vmid, "RMID")
    b.resistor(b.fe.vmid_divider_ohm, vmid, gnd, "RMID")
    b.capacitor(b.fe.vmid_capacitance_f, vmid, gnd, "CMID")
    b.capacitor(10e-6, vcc, gnd, "CBULK")

    units = []
    for _ in range(N_LEVELS * 2 // 4):
        chip = b.lib("MCP6004", FP_SOIC14, "U", "MCP6004")
        vcc += chip["V+"]
        gnd += chip["V-"]
        b.capacitor(100e-9, vcc, gnd, "CDEC")
        units += _op_amp_units(chip)
    for level in range(N_LEVELS):
        adc = _nano_pin(nano, pinout.piezo[level].pin)
        _front_end(b, level, units[2 * level], units[2 * level + 1], adc)

    # One oscillator clocks every HX711 so they convert in lockstep (docs/hardware.md).
    # SG-8002CA: programmable CMOS oscillator that runs from 5 V, so XI sees full-swing edges.
    osc = b.lib("SG-8002CA", FP_OSC, "X", f"{HX711_CLOCK_HZ / 1e6:g}MHz")
    vcc += osc["Vcc"], osc["OE"]
    gnd += osc["GND"]
    b.capacitor(100e-9, vcc, gnd, "CDEC")
    # Series termination: tames ringing on the clock's long, branched run up the stack.
    b.resistor(33.0, b.net("HX_CLK_SRC"), b.net("HX_CLK"), "RCLK")
    b.net("HX_CLK_SRC").connect(osc["OUT"])


def _spring_contacts(b: _Builder) -> None:
    for boundary in range(N_LEVELS - 1):
        below = BASE if boundary == 0 else boundary - 1
        for signal in contact_signals(boundary):
            contact = b.pogo(boundary)
            b.net(on_board(below, signal)).connect(contact["SPRING"])
            b.net(on_board(boundary, signal)).connect(contact["PAD"])


@contextmanager
def _quiet_skidl() -> Iterator[None]:
    """Silence SKiDL's library-search chatter on stderr while building."""
    loggers = [logging.getLogger(name) for name in ("skidl", "ERC_Logger", "Runtime_Logger")]
    saved = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.ERROR)
    try:
        yield
    finally:
        for lg, level in zip(loggers, saved, strict=True):
            lg.setLevel(level)


def build(
    pinout: Pinout | None = None, fe: FrontEnd = FRONT_END, *, work_dir: Path | None = None
) -> Schematic:
    """Build the whole kit's circuit from the pinout and the front-end values.

    Parameters
    ----------
    pinout : Pinout, optional
        Pin assignment; by default ``hardware/pinout.json``.
    fe : FrontEnd
        Piezo front-end component values.
    work_dir : Path, optional
        Where to write the project symbol library; by default ``hardware/build``.

    Returns
    -------
    Schematic
        The circuit, ready for :meth:`Schematic.erc` and :meth:`Schematic.netlist`.
    """
    pinout = pinout or load_pinout()
    # SKiDL must create its own loggers before _quiet_skidl touches them.
    import_skidl()

    library = write_project_library(work_dir or BUILD_DIR)
    with _quiet_skidl():
        b = _Builder(fe, library)
        _base_board(b, pinout)
        for level in range(N_LEVELS):
            _hx711_board(b, level)
            _piezo_disc(b, level)
        _spring_contacts(b)
    return Schematic(circuit=b.circuit, pinout=pinout, contacts=b.contacts)


def main(argv: list[str] | None = None) -> int:
    """Run the ERC and write the netlist; exit status 1 on ERC errors, 2 on bad sources."""
    parser = argparse.ArgumentParser(prog="python -m hardware.schematic", description=main.__doc__)
    parser.add_argument("--out", type=Path, default=BUILD_DIR / "towerear.net")
    args = parser.parse_args(argv)
    # SKiDL caches parsed libraries under XDG_DATA_HOME; keep them with the build.
    os.environ.setdefault("XDG_DATA_HOME", str(BUILD_DIR / "skidl-data"))
    try:
        schematic = build(work_dir=args.out.parent)
    except HardwareError as exc:
        print(f"schematic: {exc}", file=sys.stderr)
        return 2
    report = schematic.erc()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(schematic.netlist(), encoding="utf-8")
    print(f"ERC: {report.errors} errors, {report.warnings} warnings; netlist: {args.out}")
    for message in report.messages:
        print(f"  {message}")
    return 1 if report.errors else 0


if __name__ == "__main__":
    sys.exit(main())
