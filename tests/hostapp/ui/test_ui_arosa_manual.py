"""A whole game in manual mode (no sensors) through the real widgets."""

from __future__ import annotations

from pathlib import Path

from PyQt6.QtWidgets import QPushButton
from pytestqt.qtbot import QtBot
from ui_game_driver import enter_landing_by_hand, play_panel, set_up_game, take_action

from hostapp.games import arosa
from hostapp.ui.app import build_app
from hostapp.ui.arosa.end_panel import RevealPanel, ScorePanel
from hostapp.ui.arosa.journal_adapter import JournalGameStore
from hostapp.ui.streaming import SourceChoice

PLAYERS = ["yellow", "blue", "gray"]


def _refuse_to_open(choice: SourceChoice) -> object:
    raise AssertionError("manual mode must not open a source")


def test_manual_game_from_setup_to_score(qtbot: QtBot, journal_dir: Path) -> None:
    errors: list[str] = []
    app = build_app(
        open_source=_refuse_to_open,  # type: ignore[arg-type]
        store=JournalGameStore(journal_dir),
        show_error=errors.append,
        first_source=SourceChoice(""),
    )
    qtbot.addWidget(app.window)
    app.window.show()
    page = app.window.pages["arosa"]
    set_up_game(qtbot, page, PLAYERS, manual=True)
    controller = app.controller
    assert app.context.debug_lock.locked

    steps = 0
    while not controller.state.is_over:  # type: ignore[union-attr]
        steps += 1
        assert steps < 400, "the game does not end"
        prompt = controller.prompt()
        assert prompt is not None
        if prompt.kind == "throw":
            # every cube comes to rest on floor 1: the game ends quickly
            enter_landing_by_hand(qtbot, page, 1)
        elif prompt.kind == "act1":
            take_action(qtbot, page, "inspect", 1)
        else:
            others = tuple(p for p in PLAYERS if p != prompt.player)
            take_action(qtbot, page, "suspect", 1, suspects=others)
    assert errors == []

    state = controller.state
    assert state is not None and state.is_over
    assert state.crime_scenes == (1,)
    # independently recompute the score from the sheet: 3 points per clue at the scene
    expected = {c: 3 * state.sheet[c][1] for c in PLAYERS}
    score_panel = page.panel
    assert isinstance(score_panel, ScorePanel)
    for colour in PLAYERS:
        assert score_panel.point_labels[colour].text() == str(expected[colour])
    most = max(expected.values())
    culprits = [c for c in PLAYERS if expected[c] == most]
    scores = arosa.final_scores(state)
    assert list(scores.culprits) == culprits
    assert not app.context.debug_lock.locked  # nothing left to hide

    score_panel.reveal_button.click()
    reveal = page.panel
    assert isinstance(reveal, RevealPanel)
    # the game ended on a suspicion: the clues found were in hand, the tower is empty
    assert all(reveal.level_rows[f].text() == "" for f in range(8))
    throws = app.controller.throw_history()
    assert len(throws) >= 2 + 2 * len(PLAYERS)
    assert {floor for _, floor in throws} == {1}
    assert reveal.history.text().count("\u2192") == len(throws) - 1
    # in manual mode the app's belief is exactly what was entered: always right
    checked = app.controller.tower_belief.model.accuracy.levels_checked
    assert checked > 0
    assert f"right {checked} of {checked} times" in reveal.accuracy.text()
    reveal_back = reveal.findChildren(QPushButton)[-1]
    reveal_back.click()
    assert isinstance(page.panel, ScorePanel)
    assert page.findChildren(RevealPanel) == []  # the reveal is gone, not hidden
    app.close()


def test_wrong_belief_is_corrected_in_the_confirmation_panel(
    qtbot: QtBot, journal_dir: Path
) -> None:
    app = build_app(store=JournalGameStore(journal_dir), first_source=SourceChoice(""))
    qtbot.addWidget(app.window)
    app.window.show()
    page = app.window.pages["arosa"]
    set_up_game(qtbot, page, ["yellow", "blue"], manual=True)
    # victims on 5; yellow's clues on 2 and 5; blue's on 2 and 2
    for floor in (5, 5, 2, 5, 2, 2):
        enter_landing_by_hand(qtbot, page, floor)
    panel = play_panel(page)
    panel.floor_keypad.buttons[5].click()
    assert panel.editor is not None
    assert panel.editor.counts["red"] == 2
    assert panel.editor.counts["yellow"] == 1
    # the players see one blue clue more than the app believes (a knock-down it missed)
    panel.editor.plus["blue"].click()
    panel.confirm_button.click()
    state = app.controller.state
    assert state is not None
    assert state.crime_scenes == (5,)
    # the corrected blue clue went to the sheet: blue was caught at the crime scene
    assert state.sheet["blue"][5] == 1
    app.close()
