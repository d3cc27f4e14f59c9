"""Read and validate ``hardware/pinout.json``, the single source of truth for the Nano's pins.

The schematic, the docs' wiring table and the firmware's board header are all
derived from this file, so it is checked strictly here: eight levels, each
with one analogue input and one HX711 DOUT pin, no pin used twice.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hardware.errors import HardwareError

PINOUT_PATH = Path(__file__).with_name("pinout.json")
N_LEVELS = 8


@dataclass(frozen=True)
class PinRef:
    """One Nano pin: its board label (``"A3"``, ``"D10"``) and the ATmega port name."""

    pin: str
    port: str


@dataclass(frozen=True)
class Pinout:
    """The Nano's pin assignment, as read from ``pinout.json``.

    Attributes
    ----------
    board : str
        The board the pins belong to.
    piezo : tuple of PinRef
        Analogue input of level k's piezo front end at index k.
    piezo_adc : tuple of int
        ADC channel (MUX value) of level k's piezo at index k.
    hx711_dout : tuple of PinRef
        DOUT line of level k's HX711 at index k.
    hx711_sck : PinRef
        The clock line shared by all eight HX711s.
    uart_rx, uart_tx : PinRef
        The USB-serial lines.
    uart_baud : int
        The serial rate in baud.
    status_led : PinRef
        The status LED.
    spare : tuple of PinRef
        Pins left free.
    """

    board: str
    piezo: tuple[PinRef, ...]
    piezo_adc: tuple[int, ...]
    hx711_dout: tuple[PinRef, ...]
    hx711_sck: PinRef
    uart_rx: PinRef
    uart_tx: PinRef
    uart_baud: int
    status_led: PinRef
    spare: tuple[PinRef, ...]

    def used_pins(self) -> list[str]:
        """Every board pin this assignment uses, spares excluded."""
        return [
            *(p.pin for p in self.piezo),
            *(p.pin for p in self.hx711_dout),
            self.hx711_sck.pin,
            self.uart_rx.pin,
            self.uart_tx.pin,
            self.status_led.pin,
        ]


def _pin(entry: Any, where: str) -> PinRef:
    if not isinstance(entry, dict) or not isinstance(entry.get("pin"), str):
        raise HardwareError(f"pinout: {where} needs a 'pin' name")
    if not isinstance(entry.get("port"), str):
        raise HardwareError(f"pinout: {where} needs a 'port' name")
    return PinRef(pin=entry["pin"], port=entry["port"])


def _per_level(data: dict[str, Any], key: str) -> list[dict[str, Any]]:
    entries = data.get(key)
    if not isinstance(entries, list) or len(entries) != N_LEVELS:
        raise HardwareError(f"pinout: '{key}' must list exactly {N_LEVELS} levels")
    by_level = {}
    for entry in entries:
        level = entry.get("level") if isinstance(entry, dict) else None
        if not isinstance(level, int) or not 0 <= level < N_LEVELS or level in by_level:
            raise HardwareError(f"pinout: '{key}' must give each level 0..7 exactly once")
        by_level[level] = entry
    return [by_level[k] for k in range(N_LEVELS)]


def parse_pinout(data: Any) -> Pinout:
    """Validate the decoded JSON of a pinout file.

    Parameters
    ----------
    data : Any
        The object ``json.load`` returned.

    Returns
    -------
    Pinout
        The checked pin assignment.

    Raises
    ------
    HardwareError
        When a section is missing, a level is missing or doubled, an analogue
        input is not A0..A7, or a pin is used twice.
    """
    if not isinstance(data, dict):
        raise HardwareError("pinout: the file must hold one JSON object")
    piezo_entries = _per_level(data, "piezo")
    piezo = tuple(_pin(e, f"piezo level {k}") for k, e in enumerate(piezo_entries))
    adc: list[int] = []
    for k, (ref, entry) in enumerate(zip(piezo, piezo_entries, strict=True)):
        channel = entry.get("adc")
        if not isinstance(channel, int) or ref.pin != f"A{channel}" or not 0 <= channel < 8:
            raise HardwareError(f"pinout: piezo level {k} must be an analogue pin A0..A7")
        adc.append(channel)
    dout = tuple(
        _pin(e, f"hx711_dout level {k}") for k, e in enumerate(_per_level(data, "hx711_dout"))
    )
    uart = data.get("uart")
    if not isinstance(uart, dict) or not isinstance(uart.get("baud"), int):
        raise HardwareError("pinout: 'uart' needs 'rx', 'tx' and an integer 'baud'")
    spare = data.get("spare", [])
    if not isinstance(spare, list):
        raise HardwareError("pinout: 'spare' must be a list")
    pinout = Pinout(
        board=str(data.get("board", "")),
        piezo=piezo,
        piezo_adc=tuple(adc),
        hx711_dout=dout,
        hx711_sck=_pin(data.get("hx711_sck"), "hx711_sck"),
        uart_rx=_pin(uart.get("rx"), "uart rx"),
        uart_tx=_pin(uart.get("tx"), "uart tx"),
        uart_baud=uart["baud"],
        status_led=_pin(data.get("status_led"), "status_led"),
        spare=tuple(_pin(e, f"spare {i}") for i, e in enumerate(spare)),
    )
    pins = pinout.used_pins() + [p.pin for p in pinout.spare]
    doubled = sorted({p for p in pins if pins.count(p) > 1})
    if doubled:
        raise HardwareError(f"pinout: pin {', '.join(doubled)} is assigned twice")
    return pinout


def load_pinout(path: Path = PINOUT_PATH) -> Pinout:
    """Read and validate a pinout file (by default ``hardware/pinout.json``).

    Raises
    ------
    HardwareError
        When the file cannot be read, is not JSON, or fails :func:`parse_pinout`.
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise HardwareError(f"pinout: cannot read {path}: {exc.strerror}") from exc
    except json.JSONDecodeError as exc:
        raise HardwareError(f"pinout: {path} is not valid JSON (line {exc.lineno})") from exc
    return parse_pinout(data)
