"""New game: players in seating order, who throws the victims, sensors or manual."""

from __future__ import annotations

from collections.abc import Callable

from PyQt6.QtWidgets import (
    QButtonGroup,
    QComboBox,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QRadioButton,
    QVBoxLayout,
    QWidget,
)

from hostapp.games.arosa import PLAYER_COLORS
from hostapp.i18n import tr
from hostapp.ui.markers import colour_letters, colour_name, style_sheet

MIN_PLAYERS = 2
MAX_PLAYERS = 6

StartGame = Callable[[list[str], str, str], None]


class SetupPanel(QWidget):
    """Pick 2-6 colours in seating order (click order, clockwise), then start.

    Parameters
    ----------
    on_start
        Called with ``(players, victim_thrower, mode)``.
    on_cancel
        Called when the players go back without starting.
    """

    def __init__(self, on_start: StartGame, on_cancel: Callable[[], None]) -> None:
        super().__init__()
        self._on_start = on_start
        self.seating: list[str] = []
        layout = QVBoxLayout(self)
        title = QLabel(tr("New game of Mord im Arosa"))
        title.setStyleSheet("font-size: 24px; font-weight: bold;")
        layout.addWidget(title)
        hint = QLabel(
            tr(
                "Click the players' colours in seating order, clockwise, starting with"
                " the first investigator (2 to 6 players). Click again to remove."
            )
        )
        hint.setWordWrap(True)
        layout.addWidget(hint)

        grid = QGridLayout()
        self.colour_buttons: dict[str, QPushButton] = {}
        for index, colour in enumerate(PLAYER_COLORS):
            button = QPushButton(f"{colour_letters(colour)}  {colour_name(colour)}")
            button.setCheckable(True)
            button.setMinimumHeight(48)
            button.setStyleSheet(style_sheet(colour) + " font-size: 16px;")
            button.setShortcut(f"Ctrl+{index + 1}")
            button.toggled.connect(lambda on, c=colour: self._toggle(c, on))
            self.colour_buttons[colour] = button
            grid.addWidget(button, index // 3, index % 3)
        layout.addLayout(grid)

        self.seating_label = QLabel()
        self.seating_label.setStyleSheet("font-size: 16px;")
        layout.addWidget(self.seating_label)

        row = QHBoxLayout()
        victims_label = QLabel(tr("&Who throws the victims (last to hold a knife)?"))
        self.victim_box = QComboBox()
        victims_label.setBuddy(self.victim_box)
        row.addWidget(victims_label)
        row.addWidget(self.victim_box, 1)
        layout.addLayout(row)

        mode_row = QHBoxLayout()
        self.sensors_radio = QRadioButton(tr("&Sensors hear the landings"))
        self.manual_radio = QRadioButton(tr("&Manual: enter each landing by hand (no sensors)"))
        self.sensors_radio.setChecked(True)
        group = QButtonGroup(self)
        group.addButton(self.sensors_radio)
        group.addButton(self.manual_radio)
        mode_row.addWidget(self.sensors_radio)
        mode_row.addWidget(self.manual_radio)
        layout.addLayout(mode_row)

        buttons = QHBoxLayout()
        self.start_button = QPushButton(tr("S&tart the game"))
        self.start_button.setMinimumHeight(44)
        self.start_button.clicked.connect(self._start)
        back = QPushButton(tr("&Back"))
        back.clicked.connect(on_cancel)
        buttons.addWidget(back)
        buttons.addStretch(1)
        buttons.addWidget(self.start_button)
        layout.addLayout(buttons)
        layout.addStretch(1)
        self._update()

    def _toggle(self, colour: str, on: bool) -> None:
        if on and colour not in self.seating:
            if len(self.seating) >= MAX_PLAYERS:
                return
            self.seating.append(colour)
        elif not on and colour in self.seating:
            self.seating.remove(colour)
        self._update()

    def _update(self) -> None:
        if self.seating:
            order = " \u2192 ".join(colour_name(c) for c in self.seating)
            self.seating_label.setText(tr("Seating (clockwise): {order}", order=order))
        else:
            self.seating_label.setText(tr("No players chosen yet."))
        current = self.victim_box.currentData()
        self.victim_box.clear()
        for colour in self.seating:
            self.victim_box.addItem(colour_name(colour), colour)
        if current in self.seating:
            self.victim_box.setCurrentIndex(self.seating.index(current))
        self.start_button.setEnabled(MIN_PLAYERS <= len(self.seating) <= MAX_PLAYERS)

    def _start(self) -> None:
        mode = "manual" if self.manual_radio.isChecked() else "sensors"
        thrower = str(self.victim_box.currentData() or self.seating[0])
        self._on_start(list(self.seating), thrower, mode)
