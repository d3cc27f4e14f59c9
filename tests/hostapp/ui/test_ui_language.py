"""German and English: switching rebuilds the pages in the new language and keeps the game."""

from __future__ import annotations

from pathlib import Path

from PyQt6.QtCore import QCoreApplication
from pytestqt.qtbot import QtBot
from ui_game_driver import enter_landing_by_hand, play_panel, set_up_game

from hostapp import i18n
from hostapp.ui.app import build_app
from hostapp.ui.arosa.journal_adapter import JournalGameStore
from hostapp.ui.streaming import SourceChoice
from hostapp.ui.translator import CatalogTranslator


def test_switching_to_german_and_back_keeps_the_game(qtbot: QtBot, journal_dir: Path) -> None:
    app = build_app(
        store=JournalGameStore(journal_dir),
        show_error=lambda s: None,
        first_source=SourceChoice(""),
    )
    qtbot.addWidget(app.window)
    app.window.show()
    set_up_game(qtbot, app.window.pages["arosa"], ["brown", "gray"], manual=True)
    enter_landing_by_hand(qtbot, app.window.pages["arosa"], 2)
    state = app.controller.state

    app.window.set_language("de")
    tabs = [app.window.tabs.tabText(i) for i in range(app.window.tabs.count())]
    assert tabs[:3] == ["Mord im Arosa", "Live-Ansicht", "Kalibrierung"]
    panel = play_panel(app.window.pages["arosa"])
    assert panel.prompt_label.text() == "Braun: wirf einen Hinweis" or "wirf" in (
        panel.prompt_label.text()
    )
    assert app.controller.state == state
    assert app.window.windowTitle() == "towerear"

    app.window.set_language("en")
    panel = play_panel(app.window.pages["arosa"])
    assert "throw" in panel.prompt_label.text()
    app.close()


def test_qt_translator_answers_from_the_catalogs(qtbot: QtBot) -> None:
    translator = CatalogTranslator()
    app = QCoreApplication.instance()
    assert app is not None
    app.installTranslator(translator)
    try:
        i18n.set_language("de")
        assert QCoreApplication.translate("ctx", "Live view") == "Live-Ansicht"
        assert QCoreApplication.translate("ctx", "no such text here") == "no such text here"
        i18n.set_language("en")
        assert QCoreApplication.translate("ctx", "Live view") == "Live view"
    finally:
        app.removeTranslator(translator)
