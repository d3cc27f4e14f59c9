"""Plays Mord im Arosa through the real widgets, the way a player clicks."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PyQt6.QtCore import Qt
from PyQt6.QtWidgets import (
    QAbstractButton,
    QApplication,
    QGroupBox,
    QLabel,
    QListWidget,
    QTabBar,
    QWidget,
)
from pytestqt.qtbot import QtBot

from hostapp.ui.app import App, build_app
from hostapp.ui.arosa.journal_adapter import JournalGameStore
from hostapp.ui.arosa.page import ArosaPage, StartPanel
from hostapp.ui.arosa.play_panel import PlayPanel
from hostapp.ui.arosa.setup_panel import SetupPanel
from hostapp.ui.markers import ColourMarker
from hostapp.ui.source_bar import SourceBar
from hostapp.ui.streaming import SourceChoice


def click(qtbot: QtBot, button: object) -> None:
    """A left click, as a user would."""
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)  # type: ignore[arg-type]


def set_up_game(qtbot: QtBot, page: ArosaPage, players: list[str], manual: bool) -> None:
    """From the start panel: new game, colours in seating order, mode, start."""
    start = page.panel
    assert isinstance(start, StartPanel)
    click(qtbot, start.new_button)
    setup = page.panel
    assert isinstance(setup, SetupPanel)
    for colour in players:
        click(qtbot, setup.colour_buttons[colour])
    if manual:
        assert not setup.manual_radio.isChecked()
        setup.manual_radio.click()  # a mouse click at its centre can miss the label
        assert setup.manual_radio.isChecked()
    click(qtbot, setup.start_button)
    assert isinstance(page.panel, PlayPanel)
    assert page.controller.mode == ("manual" if manual else "sensors")


def play_panel(page: ArosaPage) -> PlayPanel:
    """The visible play panel."""
    panel = page.panel
    assert isinstance(panel, PlayPanel), type(panel)
    return panel


def enter_landing_by_hand(qtbot: QtBot, page: ArosaPage, floor: int) -> None:
    """Enter where the called-out cube landed on the keypad."""
    panel = play_panel(page)
    if not panel.throw_box.isVisible():
        click(qtbot, panel.by_hand_button)
    click(qtbot, panel.throw_keypad.buttons[floor])


def take_action(
    qtbot: QtBot,
    page: ArosaPage,
    kind: str,
    floor: int | None,
    suspects: tuple[str, ...] = (),
    correct: Callable[[PlayPanel], None] | None = None,
) -> None:
    """Choose the action, the suspects and (unless a lift opened it) the floor, then confirm."""
    panel = play_panel(page)
    if floor is not None:
        click(qtbot, panel.kind_buttons[kind])
        for suspect in suspects:
            panel.suspect_checks[suspect].setChecked(True)
        click(qtbot, panel.floor_keypad.buttons[floor])
    assert panel.confirm_box.isVisible()
    if correct is not None:
        correct(panel)
    click(qtbot, panel.confirm_button)
    QApplication.processEvents()


def visible_texts(window: QWidget) -> list[str]:
    """Every text a player can see in the window right now, title first."""
    texts = [window.windowTitle()]
    for widget in window.findChildren(QWidget):
        if not widget.isVisible():
            continue
        if isinstance(widget, QLabel | QAbstractButton):
            texts.append(widget.text())
        elif isinstance(widget, QGroupBox):
            texts.append(widget.title())
        elif isinstance(widget, QListWidget):
            texts.extend(widget.item(i).text() for i in range(widget.count()))  # type: ignore[union-attr]
        elif isinstance(widget, ColourMarker):
            texts.append(widget.text())
        elif isinstance(widget, QTabBar):
            texts.extend(widget.tabText(i) for i in range(widget.count()))
    return texts


def replayed(
    qtbot: QtBot, journal_dir: Path, recording: Path, errors: list[str]
) -> tuple[App, SourceBar]:
    """The app shown on ``recording`` replayed at 20 times its pace, and its source bar."""
    app = build_app(
        store=JournalGameStore(journal_dir),
        show_error=errors.append,
        first_source=SourceChoice("replay", path=str(recording), speed=20.0),
    )
    qtbot.addWidget(app.window)
    app.window.show()
    bar = app.window.source_bar
    assert bar is not None
    return app, bar
