"""The confirmation panel's editor: cubes per colour on the open floor, a few clicks to fix."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from PyQt6.QtWidgets import QGridLayout, QLabel, QPushButton, QWidget

from hostapp.i18n import tr
from hostapp.ui.markers import ColourMarker, colour_name

MAX_CUBES_PER_COLOUR = 20


class CountEditor(QWidget):
    """One row per colour: marker, minus, count, plus.

    Parameters
    ----------
    colours
        The colours to edit (players, then red).
    counts
        The starting counts (the app's belief).
    """

    def __init__(self, colours: Sequence[str], counts: Mapping[str, int]) -> None:
        super().__init__()
        self.counts = {c: int(counts.get(c, 0)) for c in colours}
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        self.labels: dict[str, QLabel] = {}
        self.minus: dict[str, QPushButton] = {}
        self.plus: dict[str, QPushButton] = {}
        for row, colour in enumerate(colours):
            grid.addWidget(ColourMarker(colour, None, 34), row, 0)
            name = QLabel(colour_name(colour))
            name.setStyleSheet("font-size: 15px;")
            grid.addWidget(name, row, 1)
            minus = QPushButton("\u2212")
            minus.setAccessibleName(tr("One {colour} cube fewer", colour=colour_name(colour)))
            minus.setFixedWidth(44)
            minus.clicked.connect(lambda _=False, c=colour: self.change(c, -1))
            count = QLabel()
            count.setMinimumWidth(36)
            count.setStyleSheet("font-size: 20px; font-weight: bold;")
            plus = QPushButton("+")
            plus.setAccessibleName(tr("One {colour} cube more", colour=colour_name(colour)))
            plus.setFixedWidth(44)
            plus.clicked.connect(lambda _=False, c=colour: self.change(c, +1))
            grid.addWidget(minus, row, 2)
            grid.addWidget(count, row, 3)
            grid.addWidget(plus, row, 4)
            self.labels[colour] = count
            self.minus[colour] = minus
            self.plus[colour] = plus
        grid.setColumnStretch(5, 1)
        self._show()

    def change(self, colour: str, delta: int) -> None:
        """Add ``delta`` cubes of ``colour`` (kept within 0..20)."""
        self.counts[colour] = min(MAX_CUBES_PER_COLOUR, max(0, self.counts[colour] + delta))
        self._show()

    def _show(self) -> None:
        for colour, n in self.counts.items():
            self.labels[colour].setText(str(n))
            self.minus[colour].setEnabled(n > 0)
