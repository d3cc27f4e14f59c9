"""Entering a mugshot card: one drop-down per clue type, keyboard-friendly."""

from __future__ import annotations

from PyQt6.QtWidgets import QComboBox, QGridLayout, QLabel, QWidget

from hostapp.games.mugshots import ANIMALS, CLUE_TYPES, COLOURS, PATTERNS, NameBook
from hostapp.ui.cardgames.labels import clue_name, value_name


class CardEditor(QWidget):
    """Four drop-downs (animal, pattern, colour, name as printed) for one card.

    Blotted names are offered as printed, with ``*`` for the ink blot.
    Typing a value's first letters selects it, so a card can be entered
    with Tab and a few keys.
    """

    def __init__(self, book: NameBook, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        self.combos: dict[str, QComboBox] = {}
        values = {"animal": ANIMALS, "pattern": PATTERNS, "colour": COLOURS}
        for column, clue in enumerate(CLUE_TYPES):
            label = QLabel(clue_name(clue))
            combo = QComboBox()
            combo.setMinimumWidth(130)
            if clue == "name":
                for shown in book.shown_forms:
                    combo.addItem(shown, shown)
            else:
                for value in values[clue]:
                    combo.addItem(value_name(value), value)
            label.setBuddy(combo)
            grid.addWidget(label, 0, column)
            grid.addWidget(combo, 1, column)
            self.combos[clue] = combo

    def card(self) -> dict[str, str]:
        """The card as an event's ``card`` dict."""
        return {clue: str(combo.currentData()) for clue, combo in self.combos.items()}

    def set_card(self, card: dict[str, str]) -> None:
        """Select the values of ``card``."""
        for clue, combo in self.combos.items():
            index = combo.findData(card[clue])
            if index >= 0:
                combo.setCurrentIndex(index)

    def focus_first(self) -> None:
        """Put the keyboard focus on the animal."""
        self.combos["animal"].setFocus()


def card_text(card: dict[str, str]) -> str:
    """A card in one line of words."""
    return " · ".join(
        card[clue] if clue == "name" else value_name(card[clue]) for clue in CLUE_TYPES
    )
