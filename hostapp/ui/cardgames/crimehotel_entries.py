"""Typing room cards: one field per player, Enter moves on, the last one submits."""

from __future__ import annotations

import re
from collections.abc import Callable

from PyQt6.QtWidgets import QFormLayout, QLabel, QLineEdit, QWidget

from hostapp.games.crimehotel import CrimeHotelError
from hostapp.i18n import tr

_MAX_PLAYERS = 4


def parse_rooms(text: str) -> list[int]:
    """Room numbers typed with spaces or commas between them."""
    parts = [p for p in re.split(r"[\s,;]+", text.strip()) if p]
    if not all(p.isdigit() for p in parts):
        raise CrimeHotelError(tr("Type room numbers like 23, separated by spaces."))
    return [int(p) for p in parts]


def parse_room(text: str, who: str) -> int:
    """One room number typed for ``who``."""
    rooms = parse_rooms(text)
    if len(rooms) != 1:
        raise CrimeHotelError(tr("Enter one room card for {player}.", player=who))
    return rooms[0]


class CardRows(QWidget):
    """One room-card field per player, relabelled in playing order."""

    def __init__(self, on_submit: Callable[[], None], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._form = QFormLayout(self)
        self.labels: list[QLabel] = []
        self.edits: list[QLineEdit] = []
        self.players: tuple[str, ...] = ()
        for index in range(_MAX_PLAYERS):
            label = QLabel()
            edit = QLineEdit()
            edit.setMaxLength(2)
            edit.setPlaceholderText("11-39")
            edit.returnPressed.connect(lambda i=index: self._next(i, on_submit))
            self._form.addRow(label, edit)
            self.labels.append(label)
            self.edits.append(edit)

    def show_players(self, players: tuple[str, ...], hints: dict[str, str] | None = None) -> None:
        """Label the fields with ``players`` in order; clear them."""
        self.players = players
        for index, (label, edit) in enumerate(zip(self.labels, self.edits, strict=True)):
            used = index < len(players)
            self._form.setRowVisible(index, used)
            if used:
                hint = (hints or {}).get(players[index], "")
                label.setText(f"{players[index]}{hint}")
                label.setBuddy(edit)
            edit.clear()

    def cards(self) -> dict[str, int]:
        """The typed cards by player (raises a one-sentence error if unreadable)."""
        return {
            player: parse_room(edit.text(), player)
            for player, edit in zip(self.players, self.edits, strict=False)
        }

    def focus_first(self) -> None:
        """Put the cursor in the first field."""
        self.edits[0].setFocus()

    def _next(self, index: int, on_submit: Callable[[], None]) -> None:
        if index + 1 < len(self.players):
            self.edits[index + 1].setFocus()
        else:
            on_submit()
