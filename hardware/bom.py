"""Read ``hardware/bom.csv``, total it, and hold it against the schematic.

Rows with a KiCad footprint are electrical parts: their quantity must equal
the number of schematic parts with the same value and footprint. Rows without
one are mechanical (boards, screws, brackets) and are not in the schematic.
"""

from __future__ import annotations

import csv
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from hardware.errors import HardwareError

BOM_PATH = Path(__file__).with_name("bom.csv")
COLUMNS = (
    "part",
    "value",
    "package",
    "footprint",
    "quantity",
    "supplier",
    "supplier_pn",
    "unit_price_usd",
    "notes",
)


@dataclass(frozen=True)
class BomRow:
    """One line of the bill of materials; prices in US dollars."""

    part: str
    value: str
    package: str
    footprint: str
    quantity: int
    supplier: str
    supplier_pn: str
    unit_price_usd: float
    notes: str

    @property
    def extended_usd(self) -> float:
        """Quantity times unit price."""
        return self.quantity * self.unit_price_usd

    @property
    def in_schematic(self) -> bool:
        """True for electrical parts, which the schematic must contain."""
        return bool(self.footprint)


def _row(record: dict[str, str], line: int) -> BomRow:
    missing = [
        c
        for c in ("part", "value", "quantity", "supplier", "supplier_pn", "unit_price_usd")
        if not record.get(c, "").strip()
    ]
    if missing:
        raise HardwareError(f"bom.csv line {line}: empty {', '.join(missing)}")
    try:
        quantity = int(record["quantity"])
        price = float(record["unit_price_usd"])
    except ValueError as exc:
        raise HardwareError(f"bom.csv line {line}: quantity or price is not a number") from exc
    if quantity < 1 or price < 0:
        raise HardwareError(f"bom.csv line {line}: quantity must be >= 1 and price >= 0")
    return BomRow(
        part=record["part"].strip(),
        value=record["value"].strip(),
        package=record["package"].strip(),
        footprint=record["footprint"].strip(),
        quantity=quantity,
        supplier=record["supplier"].strip(),
        supplier_pn=record["supplier_pn"].strip(),
        unit_price_usd=price,
        notes=record["notes"].strip(),
    )


def read_bom(path: Path = BOM_PATH) -> list[BomRow]:
    """Read and check a BOM file.

    Raises
    ------
    HardwareError
        When the file cannot be read, its header differs from :data:`COLUMNS`,
        a field is empty or not a number, or two rows claim the same part.
    """
    try:
        with path.open(newline="", encoding="utf-8") as fh:
            reader = csv.DictReader(fh)
            if tuple(reader.fieldnames or ()) != COLUMNS:
                raise HardwareError(f"bom.csv: the header must be {','.join(COLUMNS)}")
            rows = [_row(record, n) for n, record in enumerate(reader, start=2)]
    except OSError as exc:
        raise HardwareError(f"bom.csv: cannot read {path}: {exc.strerror}") from exc
    keys = Counter((r.value, r.footprint) for r in rows if r.in_schematic)
    doubled = [f"{v} ({fp})" for (v, fp), n in keys.items() if n > 1]
    if doubled:
        raise HardwareError(f"bom.csv: {', '.join(doubled)} is listed twice")
    return rows


def total_usd(rows: list[BomRow]) -> float:
    """The cost of the whole kit, rounded to cents."""
    return round(sum(r.extended_usd for r in rows), 2)


def schematic_mismatches(rows: list[BomRow], counts: Counter[tuple[str, str]]) -> list[str]:
    """Where the BOM and the schematic's part counts disagree, one sentence each.

    Parameters
    ----------
    rows : list of BomRow
        The bill of materials.
    counts : Counter
        Parts per ``(value, footprint)`` in the schematic.

    Returns
    -------
    list of str
        Empty when every electrical row matches and no schematic part is missing.
    """
    problems = []
    listed = set()
    for row in rows:
        if not row.in_schematic:
            continue
        key = (row.value, row.footprint)
        listed.add(key)
        if counts.get(key, 0) != row.quantity:
            problems.append(
                f"{row.value} ({row.footprint}): BOM {row.quantity}, schematic {counts.get(key, 0)}"
            )
    for (value, footprint), n in sorted(counts.items()):
        if (value, footprint) not in listed:
            problems.append(f"{value} ({footprint}): {n} in the schematic, not in the BOM")
    return problems
