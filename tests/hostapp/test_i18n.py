"""Every user-facing text has a German translation with the same placeholders."""

from __future__ import annotations

import ast
import string
from collections.abc import Iterator
from pathlib import Path

import pytest

from hostapp import i18n

ROOT = Path(__file__).resolve().parents[2]


def _fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def _tr_calls() -> Iterator[tuple[str, ast.Call, str]]:
    """Every ``tr("literal", ...)`` call in hostapp (also ``self.tr``): place, call, text."""
    for path in sorted((ROOT / "hostapp").rglob("*.py")):
        if "locale" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            func = node.func
            name = func.id if isinstance(func, ast.Name) else (
                func.attr if isinstance(func, ast.Attribute) else "")
            first = node.args[0]
            if name == "tr" and isinstance(first, ast.Constant) and isinstance(first.value, str):
                yield f"{path.relative_to(ROOT)}:{node.lineno}", node, first.value


def _texts_in_code() -> dict[str, str]:
    """Literal first arguments of ``tr(...)`` calls, with their place."""
    found: dict[str, str] = {}
    for where, _, text in _tr_calls():
        found.setdefault(text, where)
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


def test_tr_sentence_uses_an_exact_key(german: None) -> None:
    assert i18n.tr_sentence("closed") == "geschlossen"
    assert i18n.tr_sentence("there is nothing to undo") == "es gibt nichts rückgängig zu machen"


def test_tr_sentence_fills_a_template_with_the_values_it_captured(german: None) -> None:
    # a dsp.sim refusal arrives formatted in English; its template is in the catalog
    assert (
        i18n.tr_sentence("the tower is already open at level 5")
        == "der Turm ist bereits bei Ebene 5 geöffnet"
    )
    # format specs do not matter: the values are already formatted
    assert i18n.tr_sentence("Calibration is 12 days old.") == "Die Kalibrierung ist 12 Tage alt."
    # a field used twice must capture the same text both times
    assert (
        i18n.tr_sentence("Lift modules 3 to 7 together to open level 3.")
        == "Module 3 bis 7 gemeinsam anheben, um Ebene 3 zu öffnen."
    )


def test_tr_sentence_translates_nested_english_values(german: None) -> None:
    assert (
        i18n.tr_sentence("cannot take cubes out of level 3: the tower is open at level 5")
        == "aus Ebene 3 können keine Würfel genommen werden: der Turm ist bei Ebene 5 geöffnet"
    )
    assert (
        i18n.tr_sentence("cannot put a mass on level 2: the tower is closed")
        == "auf Ebene 2 kann kein Gewicht gelegt werden: der Turm ist geschlossen"
    )
    assert (
        i18n.tr_sentence("no calibration profile at /tmp/x.json; running uncalibrated")
        == "kein Kalibrierprofil unter /tmp/x.json; die Erkennung läuft unkalibriert"
    )


def test_tr_sentence_leaves_unknown_and_german_text_alone(german: None) -> None:
    assert i18n.tr_sentence("a sentence no catalog knows") == "a sentence no catalog knows"
    assert i18n.tr_sentence("") == ""
    german_text = "der Turm ist bereits bei Ebene 5 geöffnet"
    assert i18n.tr_sentence(german_text) == german_text
    # short templates ("L{level}") would match anything starting with an L
    assert i18n.tr_sentence("Lorem ipsum") == "Lorem ipsum"


def test_tr_sentence_in_english_returns_the_input() -> None:
    assert i18n.current_language() == "en"
    for text in ("closed", "the tower is already open at level 5", "anything"):
        assert i18n.tr_sentence(text) == text


def test_no_text_has_two_translations() -> None:
    # The catalogs merge into one dict: a text in two modules with different
    # German would take whichever module loads last.
    import importlib
    import pkgutil

    import hostapp.locale as pkg

    seen: dict[str, tuple[str, str]] = {}
    clashes = []
    for info in pkgutil.iter_modules(pkg.__path__):
        module = importlib.import_module(f"hostapp.locale.{info.name}")
        for english, german in module.MESSAGES.items():
            first = seen.setdefault(english, (info.name, german))
            if first[1] != german:
                clashes.append(f"{english!r}: {first} vs {(info.name, german)}")
    assert not clashes, "; ".join(clashes)


def test_every_tr_call_passes_exactly_the_fields_its_text_names() -> None:
    # A field the call does not pass is a KeyError at the moment the message
    # is needed (often while raising an error): a crash instead of a sentence.
    wrong = []
    for where, call, text in _tr_calls():
        if any(k.arg is None for k in call.keywords):
            continue  # **fields: checked where they are built
        passed = {k.arg for k in call.keywords if k.arg is not None}
        if _fields(text) != passed:
            wrong.append(f"{where}: {text!r} gets {sorted(passed)}")
    assert not wrong, "; ".join(wrong)
