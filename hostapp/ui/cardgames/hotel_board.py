"""The Crime Hotel board on screen: rooms lit as cards go in, detectives on the edge.

Every guess space is a button: floor spaces on the left (floor 3 at the top,
as in a building), column spaces along the top, and each room's window. A
room whose card is in the hotel is lit; rooms still dark are the candidates
for the murderer's room. Clicking a space (or pressing Space on it) reports
its code, e.g. ``"F2"``, ``"C5"``, ``"R23"``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from PyQt6.QtWidgets import QGridLayout, QPushButton, QSizePolicy, QWidget

from hostapp.games.crimehotel import Space
from hostapp.games.crimehotel.hotel import COLUMNS, FLOORS
from hostapp.i18n import tr

_LIT = "background-color: #ffe27a; color: #222; border: 2px solid #8a6d00;"
_DARK = "background-color: #2b2f45; color: #f0f0f0; border: 2px solid #11131f;"
_DARK_OUT = "background-color: #6b6f85; color: #ffffff; border: 2px dashed #11131f;"
_EDGE = "background-color: #d8e4f0; color: #102030; border: 2px solid #5a7390;"
_MURDER = "background-color: #c8102e; color: #ffffff; border: 3px solid #5c0714;"


class HotelBoard(QWidget):
    """Three floors of nine rooms with the guess spaces around them.

    Parameters
    ----------
    on_space
        Called with a space code when a space is clicked.
    """

    def __init__(self, on_space: Callable[[str], None], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._on_space = on_space
        grid = QGridLayout(self)
        grid.setSpacing(4)
        self.buttons: dict[str, QPushButton] = {}
        for column in COLUMNS:
            self._add(grid, Space("column", column), 0, column)
        for row, floor in enumerate(reversed(FLOORS), start=1):
            self._add(grid, Space("floor", floor), row, 0)
            for column in COLUMNS:
                self._add(grid, Space("room", 10 * floor + column), row, column)

    def _add(self, grid: QGridLayout, space: Space, row: int, column: int) -> None:
        button = QPushButton()
        button.setMinimumSize(100 if space.kind == "floor" else 68, 54)
        button.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        button.clicked.connect(lambda _=False, code=space.code: self._on_space(code))
        button.setAccessibleName(space_name(space))
        button.setToolTip(space_name(space))
        grid.addWidget(button, row, column)
        self.buttons[space.code] = button

    def show_state(
        self,
        placed: Mapping[int, str],
        on_table: Sequence[int],
        detectives: Mapping[str, Sequence[str]],
        murderer_room: int | None,
    ) -> None:
        """Draw the board.

        Parameters
        ----------
        placed
            Room -> who put the card there (``""`` for face-up cards).
        on_table
            Rooms whose cards are played but not yet placed (seen, not lit).
        detectives
            Space code -> players with a detective there.
        murderer_room
            The room left dark, once known.
        """
        for code, button in self.buttons.items():
            space = Space.parse(code)
            who = ", ".join(initials(p) for p in detectives.get(code, ()))
            if space.kind == "room":
                label = str(space.value)
                style = _LIT if space.value in placed else _DARK
                if space.value in on_table:
                    style = _DARK_OUT
                if space.value == murderer_room:
                    style = _MURDER
            else:
                label = short_space_label(space)
                style = _EDGE
            button.setText(f"{label}\n{who}" if who else label)
            button.setStyleSheet(style + " font-size: 16px; font-weight: bold; padding: 2px;")


def initials(player: str) -> str:
    """Up to three letters of a player's name, to fit on a board space."""
    return player[:3]


def short_space_label(space: Space) -> str:
    """The label printed on an edge space: floor or column and its number."""
    if space.kind == "floor":
        return tr("Floor {n}", n=space.value)
    if space.kind == "column":
        return tr("Col. {n}", n=space.value)
    return str(space.value)


def space_name(space: Space) -> str:
    """A space spelled out for a screen reader or a tooltip."""
    if space.kind == "floor":
        return tr("Floor {n} (2 points)", n=space.value)
    if space.kind == "column":
        return tr("Column {n} (5 points)", n=space.value)
    return tr("Room {n} (10 points)", n=space.value)
