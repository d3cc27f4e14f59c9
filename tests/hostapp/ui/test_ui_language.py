"""German and English: switching rebuilds the pages in the new language and keeps the game."""

from __future__ import annotations

from PyQt6.QtCore import QCoreApplication
from pytestqt.qtbot import QtBot
from ui_game_driver import enter_landing_by_hand, play_panel, set_up_game

from hostapp import i18n
from hostapp.ui.app import App, build_app
from hostapp.ui.streaming import SourceChoice
from hostapp.ui.translator import CatalogTranslator


def test_switching_to_german_and_back_keeps_the_game(qtbot: QtBot, offline_app: App) -> None:
    app = offline_app
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


def test_source_bar_names_the_source_in_german(qtbot: QtBot) -> None:
    app = build_app(show_error=lambda s: None, first_source=SourceChoice("sim"))
    qtbot.addWidget(app.window)
    app.window.show()
    bar = app.window.source_bar
    assert bar is not None
    qtbot.waitUntil(lambda: "simulated tower" in bar.state_label.text(), timeout=3_000)
    assert "in process" in bar.state_label.text()
    app.window.set_language("de")
    bar = app.window.source_bar
    assert bar is not None
    qtbot.waitUntil(lambda: "simulierter Turm" in bar.state_label.text(), timeout=3_000)
    text = bar.state_label.text()
    assert "simulated" not in text and "im Programm" in text and "verbunden" in text
    app.close()


def test_every_source_name_has_a_german_name() -> None:
    from hostapp.ui.sources_adapter import source_display_name

    i18n.set_language("de")
    assert source_display_name("simulated tower 1") == "simulierter Turm 1"
    assert source_display_name("replay of game.bin") == "Aufnahme game.bin"
    assert source_display_name("USB device") == "USB-Gerät"
    assert source_display_name("audio interface") == "Audio-Interface"
    assert source_display_name("audio interface 3") == "Audio-Interface 3"
    assert source_display_name("firmware in simavr") == "Firmware in simavr"
    assert source_display_name("/dev/ttyACM0") == "/dev/ttyACM0"
