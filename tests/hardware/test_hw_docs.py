"""Generated doc sections, the BOM file, and the drawings stay in step with their sources."""

import csv
import re
import shutil
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import pytest

from hardware import docgen, drawings
from hardware.bom import BOM_PATH, read_bom, total_usd
from hardware.contacts import contact_signals
from hardware.errors import HardwareError

DOCS = docgen.DOCS_DIR


def _copy_docs(tmp_path: Path) -> Path:
    for name in ("hardware.md", "build-guide.md"):
        shutil.copy(DOCS / name, tmp_path / name)
    return tmp_path


def test_generated_sections_are_current() -> None:
    assert docgen.refresh(write=False) == [], "run: python -m hardware.docgen"
    assert docgen.main(["--check"]) == 0


def test_a_stale_section_is_found_and_rewritten(tmp_path: Path) -> None:
    docs = _copy_docs(tmp_path)
    guide = docs / "build-guide.md"
    guide.write_text(
        guide.read_text(encoding="utf-8").replace("| D10 (PB2) |", "| D11 (PB3) |"),
        encoding="utf-8",
    )
    assert docgen.refresh(docs_dir=docs, write=False) == ["build-guide.md: wiring"]
    assert docgen.refresh(docs_dir=docs, write=True) == ["build-guide.md: wiring"]
    assert docgen.refresh(docs_dir=docs, write=False) == []
    original = (DOCS / "build-guide.md").read_text(encoding="utf-8")
    assert guide.read_text(encoding="utf-8") == original


def test_missing_markers_are_an_error(tmp_path: Path) -> None:
    docs = _copy_docs(tmp_path)
    text = (docs / "hardware.md").read_text(encoding="utf-8")
    (docs / "hardware.md").write_text(text.replace("generated:frontend end", "x"), encoding="utf-8")
    with pytest.raises(HardwareError, match="generated:frontend"):
        docgen.refresh(docs_dir=docs, write=False)


def test_bom_total_is_the_sum_of_the_lines_and_is_in_the_docs() -> None:
    with BOM_PATH.open(newline="", encoding="utf-8") as fh:
        expected = sum(int(r["quantity"]) * float(r["unit_price_usd"]) for r in csv.DictReader(fh))
    total = total_usd(read_bom())
    assert total == pytest.approx(expected, abs=0.005)
    assert f"**{total:.2f} USD**" in (DOCS / "hardware.md").read_text(encoding="utf-8")
    assert f"**{total:.2f}**" in (DOCS / "build-guide.md").read_text(encoding="utf-8")


def test_every_bom_line_names_a_supplier_part_and_price() -> None:
    for row in read_bom():
        assert row.supplier and row.supplier_pn and row.unit_price_usd > 0, row


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda t: t.replace("unit_price_usd", "price"), "header"),
        (lambda t: t.replace(",8,LCSC,", ",eight,LCSC,"), "not a number"),
        (lambda t: t.replace(",8,LCSC,", ",0,LCSC,"), "quantity must be >= 1"),
        (lambda t: t + t.splitlines()[3] + "\n", "listed twice"),
    ],
)
def test_a_broken_bom_gives_one_clear_error(
    tmp_path: Path, edit: Callable[[str], str], message: str
) -> None:
    path = tmp_path / "bom.csv"
    path.write_text(edit(BOM_PATH.read_text(encoding="utf-8")), encoding="utf-8")
    with pytest.raises(HardwareError, match=message) as info:
        read_bom(path)
    assert "\n" not in str(info.value)


def test_contact_drawing_is_current_and_draws_every_contact() -> None:
    path = drawings.IMG_PATH
    assert path.read_text(encoding="utf-8") == drawings.render(), "run: python -m hardware.drawings"
    root = ET.parse(path).getroot()
    circles = root.findall("{http://www.w3.org/2000/svg}circle")
    shown = range(drawings.SHOWN_MODULES + 1)
    assert len(circles) == 2 * sum(len(contact_signals(b)) for b in shown)


@pytest.mark.parametrize("doc", ["hardware.md", "build-guide.md"])
def test_images_referenced_by_the_docs_exist_and_svgs_parse(doc: str) -> None:
    text = (DOCS / doc).read_text(encoding="utf-8")
    for image in re.findall(r"\]\((img/[^)]+)\)", text):
        path = DOCS / image
        assert path.is_file(), image
        if path.suffix == ".svg":
            assert ET.parse(path).getroot().tag.endswith("svg")
