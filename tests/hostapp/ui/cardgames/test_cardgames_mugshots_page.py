"""A whole mugshot game, and a score pad, played through the page."""

from __future__ import annotations

import os
from pathlib import Path

from PyQt6.QtCore import Qt
from PyQt6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from hostapp.games.mugshots.namebook import user_name_book_path
from hostapp.ui.cardgames import MugshotsPage


def card(animal: str, pattern: str, colour: str, name: str) -> dict[str, str]:
    return {"animal": animal, "pattern": pattern, "colour": colour, "name": name}


OWL = card("owl", "wood", "pink", "Bruno")
OWL_TWIN = card("owl", "bricks", "yellow", "Rosa")  # matches OWL in the animal only
STRANGERS = [
    card("bear", "bricks", "yellow", "Rosa"),
    card("goat", "wavy", "orange", "Lola"),
    card("pig", "round tiles", "turquoise", "Lotte"),
    card("elephant", "diamond tiles", "purple", "Rocco"),
]


def click(qtbot: QtBot, button: object) -> None:
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


def test_full_game_through_the_widgets(qtbot: QtBot, tmp_path: Path) -> None:
    page = MugshotsPage()
    qtbot.addWidget(page)
    page.resize(1280, 820)
    with qtbot.waitActive(page):
        page.show()
        page.activateWindow()
    setup = page.setup
    setup.name_edits[0].setText("Anna")
    setup.name_edits[1].setText("Ben")
    setup.goals.setChecked(True)
    setup.goal_rows[0].kind.setCurrentIndex(setup.goal_rows[0].kind.findData("pattern"))
    setup.goal_rows[0].value.setCurrentIndex(setup.goal_rows[0].value.findData("wood"))
    setup.goal_rows[0].points.setValue(2)
    click(qtbot, setup.start_button)
    assert page.stack.currentWidget() is page.helper

    def draw(c: dict[str, str]) -> None:
        page.editor.set_card(c)
        click(qtbot, page.draw_button)

    def identify(clue: str, c: dict[str, str]) -> None:
        page.clue.setCurrentIndex(page.clue.findData(clue))
        page.editor.set_card(c)
        click(qtbot, page.identify_button)

    # Anna: a simple identification by animal (2 cards), with the keyboard alone.
    page.editor.set_card(OWL)
    focused = QApplication.focusWidget()
    assert focused is page.editor.combos["animal"]
    qtbot.keyClick(focused, Qt.Key.Key_D, Qt.KeyboardModifier.AltModifier)
    page.editor.set_card(OWL_TWIN)
    qtbot.keyClick(page.editor.combos["animal"], Qt.Key.Key_I, Qt.KeyboardModifier.AltModifier)
    assert len(page.holder.engine.archive["Anna"]) == 2
    # Ben: names the colour, but the cards match only in the animal: it fails.
    draw(OWL)
    identify("colour", OWL_TWIN)
    assert "unnamed clue" in page.table_view.text()
    # Anna: a challenge with four cards sharing nothing with hers (5 cards).
    draw(OWL)
    for stranger in STRANGERS:
        page.editor.set_card(stranger)
        click(qtbot, page.challenge_button)
    assert page.collect_button.isEnabled()
    grab = os.environ.get("TOWEREAR_SCREENSHOT_DIR")
    if grab:
        page.grab().save(str(Path(grab) / "mugshots.png"))
    click(qtbot, page.collect_button)
    # Ben: a challenge that meets a match fails at once.
    draw(OWL)
    page.editor.set_card(OWL_TWIN)
    click(qtbot, page.challenge_button)
    assert page.holder.engine.archive["Ben"] == []
    # Anna: draws a second card and makes two identifications (4 cards: 11 in all).
    draw(OWL)
    draw(STRANGERS[0])
    assert page.own.count() == 2
    page.own.setCurrentIndex(1)
    identify("animal", card("bear", "wood", "pink", "Lola"))
    assert page.holder.engine.step == "identify2"
    identify("pattern", card("goat", "wood", "yellow", "Rosa"))
    game = page.holder.engine
    assert game.step == "over"
    assert "Anna wins" in page.status.text()
    # 11 cards; goal: wood cards x 2 -> OWL, OWL, OWL (own cards), wood revealed x2.
    wood = sum(c.pattern == "wood" for c in game.archive["Anna"])
    assert page.score_table.item(0, 2).text() == str(11 + 2 * wood)  # type: ignore[union-attr]
    assert page.score_table.item(1, 0).text() == "0"  # type: ignore[union-attr]

    page.helper_export.ask_path = lambda suggested, _f: tmp_path / f"m{suggested.suffix}"
    click(qtbot, page.helper_export.html_button)
    assert "Anna" in (tmp_path / "m.html").read_text("utf-8")


def test_name_book_copy_is_saved_for_editing(qtbot: QtBot) -> None:
    page = MugshotsPage()
    qtbot.addWidget(page)
    assert "shipped with towerear" in page.setup.names_label.text()
    click(qtbot, page.setup.save_names_button)
    path = user_name_book_path()
    assert path.exists() and str(path) in page.setup.names_label.text()
    edited = path.read_text("utf-8").replace('"Bruno"', '"Brutus"')
    edited = edited.replace('"Br*"', '"Bru*"').replace('"*uno"', '"*tus"')
    path.write_text(edited, "utf-8")
    reopened = MugshotsPage()
    qtbot.addWidget(reopened)
    assert reopened.book.names[0] == "Brutus"
    assert reopened.editor.combos["name"].findData("Bru*") >= 0


def test_score_pad_and_refusals(qtbot: QtBot) -> None:
    page = MugshotsPage()
    qtbot.addWidget(page)
    page.setup.name_edits[0].setText("Anna")
    click(qtbot, page.setup.start_button)
    assert "2 to 8 players" in page.setup.error.text()
    page.setup.name_edits[1].setText("Ben")
    page.setup.pad_mode.setChecked(True)
    assert not page.setup.goals.isEnabled()
    click(qtbot, page.setup.start_button)
    assert page.stack.currentWidget() is page.pad
    page.pad_add("Ben", 2)
    page.pad_add("Ben", -5)
    assert "fewer than 0" in page.pad_error.text()
    for _ in range(2):
        page.pad_add("Anna", 5)
    assert "Anna wins" in page.pad_status.text()
    click(qtbot, page.pad_undo)
    assert page.pad_labels["Anna"].text() == "5 cards"
    grab = os.environ.get("TOWEREAR_SCREENSHOT_DIR")
    if grab:
        page.grab().save(str(Path(grab) / "mugshots-pad.png"))
