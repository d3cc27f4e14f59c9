"""Colour markers for cubes and players: colour plus letters, readable by all.

The game's colours are fixed by the wooden cubes, so the marker cannot pick a
colour-blind-safe palette; instead every marker carries the colour's short
name in high-contrast text and a distinct outline, so that no information is
carried by hue alone. Brown and red, blue and black, gray and white differ in
lightness and in their letters.
"""

from __future__ import annotations

from dataclasses import dataclass

from PyQt6.QtCore import QSize, Qt
from PyQt6.QtGui import QColor, QFont, QPainter, QPaintEvent, QPen
from PyQt6.QtWidgets import QSizePolicy, QWidget

from hostapp.games.arosa.colours import colour_word
from hostapp.i18n import tr

PLAYER_COLOURS = ("yellow", "blue", "brown", "gray", "black", "white")
VICTIM = "red"


@dataclass(frozen=True)
class ColourStyle:
    """How one cube colour is drawn."""

    fill: str
    text: str
    outline: str


# Fills are close to the real cubes; text colour is chosen for contrast
# (WCAG ratio above 4.5 against the fill), the outline separates white
# and yellow from a light background.
STYLES: dict[str, ColourStyle] = {
    "yellow": ColourStyle("#f2c80f", "#000000", "#7a6400"),
    "blue": ColourStyle("#1f5fbf", "#ffffff", "#0b2a5c"),
    "brown": ColourStyle("#7b4a24", "#ffffff", "#3b2210"),
    "gray": ColourStyle("#8c8c8c", "#000000", "#3f3f3f"),
    "black": ColourStyle("#111111", "#ffffff", "#777777"),
    "white": ColourStyle("#f7f7f7", "#000000", "#444444"),
    "red": ColourStyle("#c8102e", "#ffffff", "#5c0714"),
}


def colour_name(colour: str) -> str:
    """The translated, capitalised name of a cube colour."""
    word = colour_word(colour)
    return word[:1].upper() + word[1:]


def colour_letters(colour: str) -> str:
    """The short label printed on a marker (unique within a language)."""
    letters = {
        "yellow": tr("Ye"),
        "blue": tr("Bu"),
        "brown": tr("Br"),
        "gray": tr("Gy"),
        "black": tr("Bk"),
        "white": tr("Wh"),
        "red": tr("Re"),
    }
    return letters.get(colour, colour[:2].title())


def style_sheet(colour: str) -> str:
    """A Qt style sheet fragment painting a button or label in ``colour``."""
    style = STYLES[colour]
    return (
        f"background-color: {style.fill}; color: {style.text};"
        f" border: 3px solid {style.outline}; font-weight: bold;"
    )


class ColourMarker(QWidget):
    """A rounded square in the cube's colour with its letters, and a count.

    Parameters
    ----------
    colour
        One of :data:`PLAYER_COLOURS` or ``"red"``.
    count
        Drawn as ``"Br x3"`` when above 1; ``None`` draws the letters only.
    size_px
        Edge length of the square.
    """

    def __init__(
        self,
        colour: str,
        count: int | None = None,
        size_px: int = 36,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._colour = colour
        self._count = count
        self._size = size_px
        self.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
        self.setAccessibleName(self.text())
        self.setToolTip(colour_name(colour))

    def text(self) -> str:
        """What the marker says, for tests and screen readers."""
        letters = colour_letters(self._colour)
        if self._count is not None and self._count != 1:
            return f"{letters}\u00d7{self._count}"
        return letters

    def sizeHint(self) -> QSize:
        width = self._size if self._count in (None, 1) else int(self._size * 1.8)
        return QSize(width, self._size)

    def paintEvent(self, event: QPaintEvent | None) -> None:
        style = STYLES[self._colour]
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(QPen(QColor(style.outline), 3))
        painter.setBrush(QColor(style.fill))
        rect = self.rect().adjusted(2, 2, -2, -2)
        painter.drawRoundedRect(rect, 6, 6)
        font = QFont(self.font())
        font.setBold(True)
        font.setPixelSize(max(10, self._size // 2 - 2))
        painter.setFont(font)
        painter.setPen(QColor(style.text))
        painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, self.text())
        painter.end()
