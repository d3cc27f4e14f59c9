"""Draw docs/img/hardware-contacts.svg from the same contact list the schematic uses.

Two stacks side by side: the closed tower, where every boundary's spring
contacts press on the pads of the module above, and the tower opened at
level 2 (modules 2..7 lifted), where boundary 2's springs touch nothing and
levels 3..7 fall silent. One pin is drawn per contact of
:func:`hardware.schematic.contact_signals`, so the picture cannot drift from
the design. ``python -m hardware.drawings`` rewrites it.
"""

from __future__ import annotations

import sys
from pathlib import Path

from hardware.contacts import SHARED_CONTACTS, contact_signals
from hardware.pinout import N_LEVELS

IMG_PATH = Path(__file__).resolve().parent.parent / "docs" / "img" / "hardware-contacts.svg"

WIDTH, HEIGHT = 900, 630
BOX_W, BOX_H = 330, 50
GAP = 16  # the boundary: springs stand in it, pads line the upper box's underside
PITCH = BOX_H + GAP
BASE_Y = 520
SHOWN_MODULES = 4  # modules 0..3 drawn in full, 4..7 as one dashed block
OPEN_AT = 2
LIFT = 60
LEVEL_COLOURS = (
    "#000000",
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
)
SHARED_COLOUR = "#7f7f7f"


def _colour(signal: str) -> str:
    if signal in SHARED_CONTACTS:
        return SHARED_COLOUR
    return LEVEL_COLOURS[int(signal[-1])]


def _box(x: float, y: float, label: str, sub: str, dashed: bool = False) -> list[str]:
    dash = ' stroke-dasharray="6 4"' if dashed else ""
    return [
        f'<rect x="{x}" y="{y}" width="{BOX_W}" height="{BOX_H}" fill="#f3e5c8" '
        f'stroke="#7a5b33"{dash}/>',
        f'<text x="{x + 10}" y="{y + 20}" font-weight="bold">{label}</text>',
        f'<text x="{x + 10}" y="{y + 38}" font-size="12">{sub}</text>',
    ]


def _contacts(x: float, y_spring: float, y_pad: float | None, boundary: int) -> list[str]:
    """Springs standing on the lower box's top edge and, when mated, the pads above them."""
    signals = contact_signals(boundary)
    pitch = 15.0
    x0 = x + BOX_W - 20 - pitch * (len(signals) - 1)
    out = []
    for i, signal in enumerate(signals):
        cx = x0 + i * pitch
        colour = _colour(signal)
        top = y_spring - GAP + (3 if y_pad is not None else 0)
        out.append(
            f'<line x1="{cx}" y1="{y_spring}" x2="{cx}" y2="{top + 2}" '
            f'stroke="{colour}" stroke-width="3"/>'
        )
        out.append(f'<circle cx="{cx}" cy="{top + 2}" r="2.5" fill="{colour}"/>')
        if y_pad is not None:
            out.append(f'<rect x="{cx - 5}" y="{y_pad}" width="10" height="3" fill="#c9a227"/>')
    out.append(
        f'<text x="{x0 - 10}" y="{y_spring - 4}" text-anchor="end" font-size="11">'
        f"boundary {boundary}: {len(signals)} contacts</text>"
    )
    return out


def _stack(x: float, open_at: int | None) -> list[str]:
    out: list[str] = []
    lifted = (lambda m: m >= open_at) if open_at is not None else (lambda m: False)
    out += _box(x, BASE_Y, "base", "Nano, front ends; level 0")
    for m in range(SHOWN_MODULES + 1):
        y = BASE_Y - (m + 1) * PITCH - (LIFT if lifted(m) else 0)
        if m < SHOWN_MODULES:
            out += _box(x, y, f"module {m}", f"roof = level {m + 1}: cell, HX711, piezo")
        else:
            out += _box(
                x,
                y,
                f"modules {m}..{N_LEVELS - 1}",
                f"levels {m + 1}..{N_LEVELS - 1}; module 7 has no sensor",
                dashed=True,
            )
    for boundary in range(SHOWN_MODULES + 1):
        if boundary >= N_LEVELS - 1:
            break
        below_lifted = boundary > 0 and lifted(boundary - 1)
        top_of_below = BASE_Y - boundary * PITCH - (LIFT if below_lifted else 0)
        mated = not (open_at is not None and boundary == open_at)
        out += _contacts(x, top_of_below, top_of_below - GAP if mated else None, boundary)
    return out


def render() -> str:
    """The whole SVG document as text."""
    parts = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" font-family="DejaVu Sans, Arial, sans-serif" '
        'font-size="13">',
        "<title>Spring contacts between modules</title>",
        f'<rect x="0" y="0" width="{WIDTH}" height="{HEIGHT}" fill="#ffffff"/>',
        '<text x="450" y="28" text-anchor="middle" font-size="18" font-weight="bold">'
        "Spring contacts carry the lines of the levels above</text>",
        '<text x="285" y="60" text-anchor="middle" font-weight="bold">tower closed: '
        "all 8 levels connected</text>",
        f'<text x="725" y="60" text-anchor="middle" font-weight="bold">modules {OPEN_AT}..7 '
        f"lifted: levels 0..{OPEN_AT} connected</text>",
    ]
    parts += _stack(120, None)
    parts += _stack(560, OPEN_AT)
    gap_y = BASE_Y - OPEN_AT * PITCH - GAP - LIFT / 2
    parts.append(
        f'<text x="580" y="{gap_y + 4}" fill="#c00000" font-size="12">'
        f"springs of boundary {OPEN_AT} touch nothing:</text>"
    )
    parts.append(
        f'<text x="580" y="{gap_y + 18}" fill="#c00000" font-size="12">'
        f"levels {OPEN_AT + 1}..7 read DOUT high (pull-up) = not ready</text>"
    )
    legend_y = HEIGHT - 30
    parts.append(
        f'<text x="50" y="{legend_y}" font-size="12">Each boundary: 5 shared '
        f"contacts (grey: {', '.join(SHARED_CONTACTS)}), then DOUT and PIEZO of "
        "every level above it,</text>"
    )
    parts.append(
        f'<text x="50" y="{legend_y + 16}" font-size="12">coloured by level '
        "(spring-loaded pins on the lower module; gold: pads on the upper module's "
        "underside).</text>"
    )
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def main() -> int:
    """Write docs/img/hardware-contacts.svg."""
    IMG_PATH.write_text(render(), encoding="utf-8")
    print(f"wrote {IMG_PATH}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
