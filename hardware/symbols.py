"""A small SKiDL symbol library holding just the stock symbols the kit uses."""

from __future__ import annotations

from pathlib import Path

from hardware.errors import HardwareError
from hardware.skidl_env import import_skidl

# Every stock symbol the kit uses: (SKiDL library, symbol name).
SYMBOLS = (
    ("Device", "R"),
    ("Device", "C"),
    ("Diode", "BAT54S"),
    ("Transistor_BJT", "MMBT3906"),
    ("Amplifier_Operational", "MCP6004"),
    ("Analog_ADC", "HX711"),
    ("Oscillator", "SG-8002CA"),
    ("MCU_Module", "Arduino_Nano_v3.x"),
)
PROJECT_LIBRARY = "towerear_sklib.py"


def stock_library_dir() -> Path:
    """Where SKiDL keeps its own symbol libraries (``*_sklib.py``)."""
    import_skidl()
    import skidl.tools.skidl.libs as libs

    return Path(libs.__file__).parent


def _symbol_block(library_text: str, name: str, library: str) -> str:
    start = library_text.find(f"Part(**{{ 'name':'{name}',")
    if start < 0:
        raise HardwareError(f"SKiDL's {library} library has no symbol {name}")
    end = library_text.find("'unit_defs':", start)
    end = library_text.find("})", end) + 2
    return library_text[start:end]


def write_project_library(dest_dir: Path) -> Path:
    """Copy the kit's symbols out of SKiDL's stock libraries into one small library.

    SKiDL parses a whole library to find one symbol (the Device library alone
    holds ~600); a project library holding only :data:`SYMBOLS`, taken
    verbatim from the stock files, builds the circuit in seconds. It is the
    SKiDL counterpart of a KiCad project's symbol cache.
    """
    stock = stock_library_dir()
    texts: dict[str, str] = {}
    blocks = []
    for library, name in SYMBOLS:
        if library not in texts:
            texts[library] = (stock / f"{library}_sklib.py").read_text(encoding="utf-8")
        blocks.append(_symbol_block(texts[library], name, library))
    header = texts[SYMBOLS[0][0]].split("SKIDL_lib_version", 1)[0]
    body = ",\n        ".join(blocks)
    dest_dir.mkdir(parents=True, exist_ok=True)
    path = dest_dir / PROJECT_LIBRARY
    path.write_text(
        f"{header}towerear = SchLib(tool=SKIDL).add_parts(*[\n        {body}])\n",
        encoding="utf-8",
    )
    return path
