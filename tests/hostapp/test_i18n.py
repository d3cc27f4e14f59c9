"""Every user-facing text has a German translation with the same placeholders."""

from __future__ import annotations

import ast
import string
from pathlib import Path

import pytest

from hostapp import i18n

ROOT = Path(__file__).resolve().parents[2]


def _fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def _texts_in_code() -> dict[str, str]:
    """Literal first arguments of ``tr(...)`` and ``self.tr(...)`` calls, with their place."""
    found: dict[str, str] = {}
    for path in sorted((ROOT / "hostapp").rglob("*.py")):
        if "locale" in path.parts:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            func = node.func
            name = func.id if isinstance(func, ast.Name) else (
                func.attr if isinstance(func, ast.Attribute) else "")
            first = node.args[0]
            if name == "tr" and isinstance(first, ast.Constant) and isinstance(first.value, str):
                found.setdefault(first.value, f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def test_catalog_placeholders_match() -> None:
    for english, german in i18n.catalog("de").items():
        assert german.strip(), f"empty German text for {english!r}"
        assert _fields(english) == _fields(german), english


def test_every_text_in_code_is_translated() -> None:
    german = i18n.catalog("de")
    missing = {text: where for text, where in _texts_in_code().items() if text not in german}
    assert not missing, "untranslated: " + "; ".join(f"{w}: {t!r}" for t, w in missing.items())


def test_switching_language() -> None:
    i18n.set_language("de")
    try:
        assert i18n.tr("Level {level} is calibrated.", level=2) == "Ebene 2 ist kalibriert."
    finally:
        i18n.set_language("en")
    assert i18n.tr("Level {level} is calibrated.", level=2) == "Level 2 is calibrated."
    with pytest.raises(ValueError, match="unsupported language"):
        i18n.set_language("fr")
