"""The investigation sheet, drawn like the board: floors 7 to 0, crime scenes, clues.

Everything on it is public at the table: clues put on the sheet and the
crime scenes found. It never shows the tower's contents.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from PyQt6.QtCore import Qt
from PyQt6.QtWidgets import QFrame, QGridLayout, QHBoxLayout, QLabel, QWidget

from hostapp.games.arosa import N_FLOORS, floor_points
from hostapp.i18n import tr
from hostapp.ui.markers import ColourMarker, colour_name


def floor_label(floor: int) -> str:
    """The translated name of a floor (0 is the ground floor)."""
    return tr("Ground floor") if floor == 0 else tr("Floor {floor}", floor=floor)


class CubeRow(QWidget):
    """A row of colour markers with counts (``{colour: n}``, zeros left out)."""

    def __init__(self, counts: Mapping[str, int], order: Sequence[str], size_px: int = 32) -> None:
        super().__init__()
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        self.markers: list[ColourMarker] = []
        for colour in order:
            n = counts.get(colour, 0)
            if n:
                marker = ColourMarker(colour, n, size_px)
                self.markers.append(marker)
                layout.addWidget(marker)
        layout.addStretch(1)

    def text(self) -> str:
        """All markers' texts, for tests and screen readers."""
        return " ".join(m.text() for m in self.markers)


class SheetWidget(QFrame):
    """The investigation sheet of one moment of the game.

    Parameters
    ----------
    players
        Seating order (the order the clues are drawn in).
    sheet
        ``{colour: clues on floors 0..7}``.
    victims_on_sheet
        Victims found per floor; a floor with any is a crime scene.
    """

    def __init__(
        self,
        players: Sequence[str],
        sheet: Mapping[str, Sequence[int]],
        victims_on_sheet: Sequence[int],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setObjectName("investigationSheet")
        self.setStyleSheet("#investigationSheet { background: #f4ecd8; }")
        grid = QGridLayout(self)
        grid.setHorizontalSpacing(12)
        title = QLabel(tr("Investigation sheet"))
        title.setStyleSheet("font-size: 18px; font-weight: bold;")
        grid.addWidget(title, 0, 0, 1, 4)
        scenes = [f for f in range(N_FLOORS) if victims_on_sheet[f]]
        points = floor_points(scenes)
        self.rows: dict[int, CubeRow] = {}
        for row, floor in enumerate(reversed(range(N_FLOORS)), start=1):
            name = QLabel(floor_label(floor))
            name.setStyleSheet("font-size: 15px; font-weight: bold;")
            grid.addWidget(name, row, 0)
            scene = CubeRow({"red": victims_on_sheet[floor]}, ["red"])
            scene.setToolTip(tr("Crime scene") if victims_on_sheet[floor] else "")
            grid.addWidget(scene, row, 1)
            value = QLabel(tr("{points} pt", points=points[floor]) if scenes else "")
            value.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            grid.addWidget(value, row, 2)
            clues = CubeRow({c: sheet[c][floor] for c in players}, players)
            self.rows[floor] = clues
            grid.addWidget(clues, row, 3)
        grid.setColumnStretch(3, 1)
        legend = QLabel(
            ", ".join(f"{colour_name(c)}" for c in players) + " \u2014 " + tr("red: victim")
        )
        legend.setWordWrap(True)
        grid.addWidget(legend, N_FLOORS + 1, 0, 1, 4)
