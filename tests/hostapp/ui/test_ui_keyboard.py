"""Full keyboard control: every game button has a key, no two visible ones the same.

(Qt's offscreen platform does not route synthetic key presses through its
shortcut map, so this checks the keys themselves rather than pressing them.)
"""

from __future__ import annotations

from PyQt6.QtWidgets import QAbstractButton, QCheckBox, QRadioButton, QWidget
from pytestqt.qtbot import QtBot
from ui_game_driver import enter_landing_by_hand, play_panel, set_up_game

from hostapp.ui.app import App


def _keys(window: QWidget) -> dict[str, list[str]]:
    """Shortcut -> texts of the visible buttons that carry it ('' for none)."""
    keys: dict[str, list[str]] = {}
    for button in window.findChildren(QAbstractButton):
        if not button.isVisible() or isinstance(button, QCheckBox | QRadioButton):
            continue
        if not button.isEnabled():
            continue
        keys.setdefault(button.shortcut().toString(), []).append(button.text())
    return keys


def _check(window: QWidget, where: str) -> None:
    keys = _keys(window)
    # the confirmation panel's many minus and plus buttons are reached with
    # Tab; every other button has its own key
    unkeyed = [t for t in keys.get("", []) if t not in ("\u2212", "+")]
    assert not unkeyed, f"{where}: buttons without a key: {unkeyed}"
    clashes = {k: v for k, v in keys.items() if k and len(v) > 1}
    assert not clashes, f"{where}: keys used twice: {clashes}"


def test_every_game_button_has_its_own_key(qtbot: QtBot, offline_app: App) -> None:
    app = offline_app
    page = app.window.pages["arosa"]
    _check(app.window, "start")
    set_up_game(qtbot, page, ["blue", "yellow"], manual=True)
    _check(app.window, "throw")
    for floor in (4, 4, 1, 2, 6, 0):
        enter_landing_by_hand(qtbot, page, floor)
    _check(app.window, "turn")
    play_panel(page).floor_keypad.buttons[4].click()
    _check(app.window, "confirm")
    app.close()
