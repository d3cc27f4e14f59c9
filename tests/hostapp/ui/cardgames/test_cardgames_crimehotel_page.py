"""A whole Crime Hotel game (three investigations) played through the page."""

from __future__ import annotations

import os
import random
from pathlib import Path

from PyQt6.QtCore import Qt
from PyQt6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from hostapp.games.crimehotel import ALL_SPACES, ROOMS, CrimeHotelGame
from hostapp.games.crimehotel.hotel import floor_of
from hostapp.ui.cardgames import CrimeHotelPage

PLAYERS = ["Anna", "Ben", "Carla", "Dario"]


def deal(rng: random.Random) -> tuple[dict[str, list[int]], int, list[int]]:
    cards = list(ROOMS)
    rng.shuffle(cards)
    hands = {p: cards[6 * i : 6 * i + 6] for i, p in enumerate(PLAYERS)}
    return hands, cards[24], cards[25:]


def legal_trick(game: CrimeHotelGame, hands: dict[str, list[int]]) -> list[int]:
    order = game.trick_order()
    led = hands[order[0]][0]
    played = [led]
    for player in order[1:]:
        follow = [c for c in hands[player] if floor_of(c) == floor_of(led)]
        played.append((follow or hands[player])[0])
    for player, card in zip(order, played, strict=True):
        hands[player].remove(card)
    return played


def type_and_enter(qtbot: QtBot, widget: object, text: str) -> None:
    qtbot.keyClicks(widget, text)
    qtbot.keyClick(widget, Qt.Key.Key_Return)


def test_full_game_through_the_widgets(qtbot: QtBot, tmp_path: Path) -> None:
    page = CrimeHotelPage()
    qtbot.addWidget(page)
    page.resize(1280, 860)
    with qtbot.waitActive(page):
        page.show()
        page.activateWindow()
    setup = page.setup
    for edit, name in zip(setup.name_edits, PLAYERS, strict=True):
        edit.setText(name)
    setup.bonus.setValue(4)
    qtbot.mouseClick(setup.start_button, Qt.MouseButton.LeftButton)
    assert page.stack.currentWidget() is page.play

    rng = random.Random(8)
    expected = dict.fromkeys(PLAYERS, 0)
    for number in range(1, 4):
        hands, murderer, face_up = deal(rng)
        assert page.panels.currentWidget() is page.deal_panel
        type_and_enter(qtbot, page.face_up, " ".join(map(str, face_up)))
        for trick in range(5):
            if number == 2 and trick == 3:
                grab = os.environ.get("TOWEREAR_SCREENSHOT_DIR")
                if grab:
                    page.grab().save(str(Path(grab) / "crime-hotel.png"))
            assert page.panels.currentWidget() is page.trick_panel
            for edit, card in zip(page.trick_rows.edits, legal_trick(page.game, hands),
                                  strict=False):
                edit.setText(str(card))
            qtbot.mouseClick(page.trick_button, Qt.MouseButton.LeftButton)
            while page.game.phase == "place":
                inv = page.game.current
                assert inv is not None
                if page.panels.currentWidget() is page.guess_panel:
                    free = [s for s in ALL_SPACES if not inv.occupants(s)]
                    # The mouse: click the space on the board.
                    qtbot.mouseClick(page.board.buttons[rng.choice(free).code],
                                     Qt.MouseButton.LeftButton)
                else:
                    assert page.panels.currentWidget() is page.help_panel
                    kinds = [page.help_kind.itemData(i) for i in range(page.help_kind.count())]
                    page.help_kind.setCurrentIndex(kinds.index("bonus" if "bonus" in kinds
                                                               else "none"))
                    # The keyboard: the list has the focus, Ctrl+Enter takes the help.
                    assert QApplication.focusWidget() is page.help_kind
                    qtbot.keyClick(page.help_kind, Qt.Key.Key_Return,
                                   Qt.KeyboardModifier.ControlModifier)
                assert page.error.text() == ""
        assert page.panels.currentWidget() is page.last_panel
        for edit, player in zip(page.last_rows.edits, page.last_rows.players, strict=False):
            edit.setText(str(hands[player][0]))
        qtbot.mouseClick(page.last_button, Qt.MouseButton.LeftButton)
        assert page.game.candidates() == (murderer,)
        assert str(murderer) in page.status.text()
        # A wrong hidden card is refused with a sentence, not a traceback.
        wrong = next(r for r in ROOMS if r != murderer)
        type_and_enter(qtbot, page.hidden_card, str(wrong))
        assert "entered wrongly" in page.error.text()
        page.hidden_card.clear()
        type_and_enter(qtbot, page.hidden_card, str(murderer))
        inv = page.game.investigations[-1]
        assert inv.number == number and inv.scores is not None
        for player in PLAYERS:
            guessed = sum(d.space.points(murderer) for d in inv.detectives if d.player == player)
            bonus = 4 * sum(1 for h in inv.helps if h.player == player and h.kind == "bonus")
            expected[player] += guessed + (bonus if guessed else 0)

    assert page.panels.currentWidget() is page.over_panel
    assert page.game.totals() == expected
    best = max(expected.values())
    winners = [p for p in PLAYERS if expected[p] == best]
    assert all(w in page.result.text() for w in winners)
    for row, player in enumerate(PLAYERS):
        assert page.scores.item(row, 3).text() == str(expected[player])  # type: ignore[union-attr]

    page.export.ask_path = lambda suggested, _filter: tmp_path / f"sheet{suggested.suffix}"
    qtbot.mouseClick(page.export.html_button, Qt.MouseButton.LeftButton)
    qtbot.mouseClick(page.export.json_button, Qt.MouseButton.LeftButton)
    html = (tmp_path / "sheet.html").read_text("utf-8")
    assert f"<td>{expected[PLAYERS[0]]}</td></tr>" in html or "winner" in html
    assert (tmp_path / "sheet.json").exists()
    grab = os.environ.get("TOWEREAR_SCREENSHOT_DIR")
    if grab:
        page.grab().save(str(Path(grab) / "crime-hotel-end.png"))


def test_undo_and_refused_entries(qtbot: QtBot) -> None:
    page = CrimeHotelPage()
    qtbot.addWidget(page)
    with qtbot.waitActive(page):
        page.show()
        page.activateWindow()
    for edit, name in zip(page.setup.name_edits, ["A", "B", "C"], strict=False):
        edit.setText(name)
    qtbot.mouseClick(page.setup.start_button, Qt.MouseButton.LeftButton)
    # Three players: eight cards face up.
    type_and_enter(qtbot, page.face_up, "11 12")
    assert "8 different cards" in page.error.text()
    page.face_up.setText("11 12 13 14 15 16 17 18")
    qtbot.mouseClick(page.deal_button, Qt.MouseButton.LeftButton)
    assert page.panels.currentWidget() is page.trick_panel
    assert not page.trick_rows.edits[3].isVisibleTo(page)
    for edit, card in zip(page.trick_rows.edits, ["21", "x", "23"], strict=False):
        edit.setText(card)
    qtbot.mouseClick(page.trick_button, Qt.MouseButton.LeftButton)
    assert "room numbers" in page.error.text()
    page.trick_rows.edits[1].setText("29")
    qtbot.mouseClick(page.trick_button, Qt.MouseButton.LeftButton)
    assert page.panels.currentWidget() is page.guess_panel
    focused = QApplication.focusWidget()
    assert focused is page.guess_space  # the keyboard lands where the next entry goes
    # Ctrl+Z inside a text field undoes typing; Alt+U undoes the last entry.
    qtbot.keyClick(focused, Qt.Key.Key_U, Qt.KeyboardModifier.AltModifier)
    assert page.panels.currentWidget() is page.trick_panel
    qtbot.mouseClick(page.undo_button, Qt.MouseButton.LeftButton)
    assert page.panels.currentWidget() is page.deal_panel
    # The set-up is never undone, and the game can be resumed after leaving it.
    qtbot.mouseClick(page.undo_button, Qt.MouseButton.LeftButton)
    assert page.panels.currentWidget() is page.deal_panel
    qtbot.mouseClick(page.new_button, Qt.MouseButton.LeftButton)
    assert page.setup.resume_box.isVisibleTo(page)
    qtbot.mouseClick(page.setup.resume_button, Qt.MouseButton.LeftButton)
    assert page.stack.currentWidget() is page.play
    assert page.game.players == ("A", "B", "C")


def test_a_rebuilt_page_resumes_the_game(qtbot: QtBot) -> None:
    """The main window rebuilds its pages on a language switch: the game carries on."""
    old = CrimeHotelPage()
    for edit, name in zip(old.setup.name_edits, ["A", "B", "C"], strict=False):
        edit.setText(name)
    old.setup.start()
    old.face_up.setText("11 12 13 14 15 16 17 18")
    old.submit_deal()
    # The window builds the new page while the old one still exists.
    new = CrimeHotelPage()
    qtbot.addWidget(new)
    assert new.setup.resume_box.isVisibleTo(new)
    new.setup.resume_button.click()
    assert new.setup.error.text() == ""
    assert new.stack.currentWidget() is new.play
    assert new.game.phase == "trick"
    old.deleteLater()
