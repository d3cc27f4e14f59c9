"""Every text of the card-game pages has a German translation, and it is used."""

from __future__ import annotations

import ast
import string
from collections.abc import Iterator
from pathlib import Path

import pytest
from PyQt6.QtCore import Qt
from pytestqt.qtbot import QtBot

import hostapp
from hostapp.locale.de_cardgames import MESSAGES
from hostapp.ui.cardgames import CrimeHotelPage, MugshotsPage

ROOT = Path(hostapp.__file__).parent
SOURCES = [
    *sorted((ROOT / "ui" / "cardgames").glob("*.py")),
    *sorted((ROOT / "games" / "crimehotel").glob("*.py")),
    *sorted((ROOT / "games" / "mugshots").glob("*.py")),
    ROOT / "games" / "export.py",
]


def translated_literals() -> Iterator[tuple[str, str]]:
    for path in SOURCES:
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "tr"
                and node.args
                and isinstance(node.args[0], ast.Constant)
            ):
                yield path.name, str(node.args[0].value)


def fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def test_every_text_has_german_with_the_same_placeholders() -> None:
    literals = list(translated_literals())
    assert len(literals) > 100
    for source, text in literals:
        assert text in MESSAGES, f"{source}: no German for {text!r}"
        assert fields(MESSAGES[text]) == fields(text), text


@pytest.mark.usefixtures("german")
def test_pages_speak_german(qtbot: QtBot) -> None:
    hotel = CrimeHotelPage()
    qtbot.addWidget(hotel)
    assert hotel.setup.start_button.text() == "Spiel &starten"
    for edit, name in zip(hotel.setup.name_edits, ["A", "B", "C", "D"], strict=True):
        edit.setText(name)
    qtbot.mouseClick(hotel.setup.start_button, Qt.MouseButton.LeftButton)
    assert "Durchgang 1" in hotel.status.text()
    assert hotel.board.buttons["F2"].text() == "Etage 2"
    hotel.face_up.setText("11")
    qtbot.mouseClick(hotel.deal_button, Qt.MouseButton.LeftButton)
    assert hotel.error.text() == "Bei 4 Spielern liegen 2 verschiedene Karten offen aus."
    mugshots = MugshotsPage()
    qtbot.addWidget(mugshots)
    assert mugshots.editor.combos["animal"].currentText() == "Elefant"
    mugshots.setup.name_edits[0].setText("A")
    mugshots.setup.name_edits[1].setText("B")
    mugshots.setup.start()
    mugshots.draw()
    mugshots.clue.setCurrentIndex(mugshots.clue.findData("colour"))
    mugshots.editor.combos["colour"].setCurrentIndex(1)
    mugshots.identify()
    assert "Übereinstimmung nur in nicht angesagter Hinweisart (Tier" in mugshots.table_view.text()
