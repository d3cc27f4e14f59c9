"""Write the generated sections of docs/hardware.md and docs/build-guide.md.

Each section sits between ``<!-- generated:NAME begin ... -->`` and
``<!-- generated:NAME end -->`` markers and is rendered from a source file:
the BOM table and total from ``bom.csv``, the wiring and contact tables from
``pinout.json``, the front-end figures from :mod:`hardware.frontend`.

``python -m hardware.docgen`` rewrites them; ``--check`` only reports stale
sections (exit status 1), which is what the tests run.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from pathlib import Path

from hardware.bom import read_bom, total_usd
from hardware.contacts import contact_signals
from hardware.errors import HardwareError
from hardware.frontend import FRONT_END, figures
from hardware.pinout import N_LEVELS, Pinout, load_pinout
from hardware.schematic import HX711_CLOCK_HZ

DOCS_DIR = Path(__file__).resolve().parent.parent / "docs"


def render_bom() -> str:
    """The BOM as a Markdown table with the kit's total."""
    rows = read_bom()
    lines = [
        "| part | value | package | qty | supplier | supplier part no. | unit USD | total USD |",
        "|---|---|---|--:|---|---|--:|--:|",
    ]
    for r in rows:
        lines.append(
            f"| {r.part} | {r.value} | {r.package} | {r.quantity} | {r.supplier} | "
            f"{r.supplier_pn} | {r.unit_price_usd:.2f} | {r.extended_usd:.2f} |"
        )
    lines.append(f"| **total** | | | | | | | **{total_usd(rows):.2f}** |")
    return "\n".join(lines)


def render_bom_total() -> str:
    """One sentence with the kit's total cost."""
    rows = read_bom()
    return (
        f"The whole kit costs **{total_usd(rows):.2f} USD** in single quantities "
        f"({sum(r.quantity for r in rows)} pieces on {len(rows)} BOM lines)."
    )


def _wiring_rows(p: Pinout) -> list[str]:
    rows = []
    for level in range(N_LEVELS):
        piezo, dout = p.piezo[level], p.hx711_dout[level]
        board = "base" if level == 0 else f"module {level - 1}"
        crossed = "none" if level == 0 else "0" if level == 1 else f"0..{level - 1}"
        adc = f"ADC{p.piezo_adc[level]}"
        port = adc if piezo.port == adc else f"{piezo.port}, {adc}"
        rows.append(
            f"| {level} | {board} | {piezo.pin} ({port}) | {dout.pin} ({dout.port}) | {crossed} |"
        )
    return rows


def render_wiring() -> str:
    """The Nano's pin assignment, level by level, from ``pinout.json``."""
    p = load_pinout()
    lines = [
        "| level | sensors on | piezo front end -> Nano | HX711 DOUT -> Nano (10k pull-up) "
        "| boundaries crossed |",
        "|--:|---|---|---|---|",
        *_wiring_rows(p),
        "",
        "| signal | Nano pin | note |",
        "|---|---|---|",
        f"| HX711 SCK (all eight) | {p.hx711_sck.pin} ({p.hx711_sck.port}) "
        "| every boundary carries it |",
        f"| HX711 clock {HX711_CLOCK_HZ / 1e6:g} MHz | - | oscillator on the base board, "
        "33 ohm series, every boundary carries it |",
        f"| USB-serial RX / TX | {p.uart_rx.pin} / {p.uart_tx.pin} "
        f"| the Nano's own USB chip, {p.uart_baud} baud |",
        f"| status LED | {p.status_led.pin} ({p.status_led.port}) | the Nano's on-board LED |",
        "| AREF | AREF | 100 nF to GND (AVcc reference) |",
    ]
    for spare in p.spare:
        lines.append(f"| spare | {spare.pin} ({spare.port}) | free |")
    return "\n".join(lines)


def render_contacts() -> str:
    """Which lines the spring contacts of each module boundary carry."""
    lines = [
        "| boundary | between | contacts | lines carried |",
        "|--:|---|--:|---|",
    ]
    for boundary in range(N_LEVELS - 1):
        below = "base" if boundary == 0 else f"module {boundary - 1}"
        signals = contact_signals(boundary)
        lines.append(
            f"| {boundary} | {below} / module {boundary} | {len(signals)} | {', '.join(signals)} |"
        )
    total = sum(len(contact_signals(b)) for b in range(N_LEVELS - 1))
    lines.append(f"| | | **{total}** | |")
    return "\n".join(lines)


def render_frontend() -> str:
    """The piezo front end's figures, computed from its component values."""
    fe, f = FRONT_END, figures()
    rows = [
        ("bias point (ADC pin)", f"{f.bias_v:.3f} V = code {round(f.bias_v / f.lsb_v)}"),
        ("1 LSB", f"{f.lsb_v * 1e3:.2f} mV"),
        ("linear input range (disc, open circuit)", f"+-{f.linear_peak_v:.3f} V"),
        ("high-pass corner (C_p with bleed and bias in parallel)", f"{f.highpass_hz:.1f} Hz"),
        ("Sallen-Key f0, Q", f"{f.lowpass_f0_hz:.1f} Hz, {f.lowpass_q:.3f}"),
        ("upper -3 dB corner (whole chain)", f"{f.corner_hz:.1f} Hz"),
        (
            f"attenuation at Nyquist ({f.nyquist_hz:.0f} Hz)",
            f"{f.attenuation_at_nyquist_db:.1f} dB",
        ),
        (
            f"attenuation at {fe.sets_per_second - f.corner_hz:.0f} Hz (folds onto the corner)",
            f"{f.attenuation_at_first_alias_db:.1f} dB",
        ),
        ("source impedance seen by the ADC", f"{f.source_impedance_ohm:.0f} ohm (limit 10 kohm)"),
        (
            f"sample-and-hold time (1.5 ADC clocks at {fe.adc_clock_hz / 1e3:.0f} kHz)",
            f"{f.sample_hold_time_s * 1e6:.1f} us",
        ),
        (
            "settling time constants in it (buffered / unbuffered 500 kohm)",
            f"{f.settling_time_constants:.0f} / {f.unbuffered_settling_time_constants:.2f}",
        ),
        ("clamp current, 20 V disc peak", f"{f.clamp_current_at_20v_a * 1e3:.2f} mA"),
        ("clamped node, 20 V disc peak", f"{f.clamp_voltage_at_20v_v:.2f} V"),
        ("largest safe disc peak (R_s rating, clamp current)", f"{f.max_piezo_peak_v:.0f} V"),
    ]
    lines = ["| quantity | value |", "|---|---|"]
    lines += [f"| {name} | {value} |" for name, value in rows]
    return "\n".join(lines)


SECTIONS: dict[str, tuple[str, Callable[[], str]]] = {
    "frontend": ("hardware.md", render_frontend),
    "contacts": ("hardware.md", render_contacts),
    "bom-total": ("hardware.md", render_bom_total),
    "wiring": ("build-guide.md", render_wiring),
    "bom": ("build-guide.md", render_bom),
}


def _pattern(name: str) -> re.Pattern[str]:
    tag = re.escape(f"generated:{name}")
    return re.compile(rf"(<!-- {tag} begin[^>]*-->\n)(.*?)(<!-- {tag} end -->)", re.DOTALL)


def refresh(*, docs_dir: Path = DOCS_DIR, write: bool) -> list[str]:
    """Bring every generated section up to date.

    Parameters
    ----------
    docs_dir : Path
        Directory holding the Markdown files.
    write : bool
        Rewrite stale sections when True; only report them when False.

    Returns
    -------
    list of str
        ``"file: section"`` for every section that was (or would be) changed.

    Raises
    ------
    HardwareError
        When a file or a section's markers are missing.
    """
    stale = []
    texts: dict[str, str] = {}
    for name, (doc, render) in SECTIONS.items():
        path = docs_dir / doc
        if doc not in texts:
            try:
                texts[doc] = path.read_text(encoding="utf-8")
            except OSError as exc:
                raise HardwareError(f"docgen: cannot read {path}: {exc.strerror}") from exc
        match = _pattern(name).search(texts[doc])
        if match is None:
            raise HardwareError(f"docgen: {doc} has no generated:{name} markers")
        body = render() + "\n"
        if match.group(2) != body:
            stale.append(f"{doc}: {name}")
            texts[doc] = texts[doc][: match.start(2)] + body + texts[doc][match.end(2) :]
    if write:
        for doc in {s.split(":")[0] for s in stale}:
            (docs_dir / doc).write_text(texts[doc], encoding="utf-8")
    return stale


def main(argv: list[str] | None = None) -> int:
    """Rewrite (or with ``--check`` verify) the generated doc sections."""
    parser = argparse.ArgumentParser(prog="python -m hardware.docgen", description=main.__doc__)
    parser.add_argument("--check", action="store_true", help="report stale sections, exit 1")
    args = parser.parse_args(argv)
    try:
        stale = refresh(write=not args.check)
    except HardwareError as exc:
        print(f"docgen: {exc}", file=sys.stderr)
        return 2
    for item in stale:
        print(("stale: " if args.check else "updated: ") + item)
    return 1 if (args.check and stale) else 0


if __name__ == "__main__":
    sys.exit(main())
