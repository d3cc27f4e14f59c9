"""A game survives the window being destroyed mid-turn: resumed from its journal."""

from __future__ import annotations

from pathlib import Path

from pytestqt.qtbot import QtBot
from ui_game_driver import click, enter_landing_by_hand, play_panel, set_up_game, take_action

from hostapp.ui.app import build_app
from hostapp.ui.arosa.journal_adapter import JournalGameStore
from hostapp.ui.arosa.page import StartPanel
from hostapp.ui.streaming import SourceChoice

PLAYERS = ["brown", "black", "yellow"]


def test_resume_after_the_window_is_destroyed_mid_turn(qtbot: QtBot, journal_dir: Path) -> None:
    app = build_app(
        store=JournalGameStore(journal_dir), show_error=print, first_source=SourceChoice("")
    )
    app.window.show()
    page = app.window.pages["arosa"]
    set_up_game(qtbot, page, PLAYERS, manual=True)
    for floor in (4, 2, 4, 6, 1, 1, 3, 4):  # two victims, two clues each
        enter_landing_by_hand(qtbot, page, floor)
    take_action(qtbot, page, "inspect", 6)  # brown finds no victim: clue back + penalty
    enter_landing_by_hand(qtbot, page, 5)  # the first owed throw; one more is owed
    before = app.controller.state
    assert before is not None and sum(before.owed.values()) == 1
    prompt_before = play_panel(page).prompt_label.text()
    # mid-turn, the window goes away; the only goodbye is the journal file being
    # released, as the operating system does when a process dies
    app.window.deleteLater()
    app.controller.close()
    del app, page
    qtbot.wait(10)

    errors: list[str] = []
    again = build_app(
        store=JournalGameStore(journal_dir), show_error=errors.append, first_source=SourceChoice("")
    )
    qtbot.addWidget(again.window)
    again.window.show()
    page = again.window.pages["arosa"]
    start = page.panel
    assert isinstance(start, StartPanel)
    assert start.games.count() == 1
    click(qtbot, start.resume_button)
    assert errors == []
    after = again.controller.state
    assert after == before
    panel = play_panel(page)
    assert panel.prompt_label.text() == prompt_before
    assert again.controller.mode == "manual"
    # and the game goes on from there
    enter_landing_by_hand(qtbot, page, 0)
    assert again.controller.prompt().kind == "act1"  # type: ignore[union-attr]
    again.close()
