"""New Crime Hotel game: players, the edition's help spaces and bonus, or resume."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PyQt6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from hostapp.games.crimehotel import HELP_KINDS, CrimeHotelRules
from hostapp.i18n import tr
from hostapp.journal import GameInfo
from hostapp.ui.cardgames.common import ErrorLine, title_label
from hostapp.ui.cardgames.labels import help_name


class CrimeHotelSetup(QWidget):
    """The form that starts (or resumes) a Crime Hotel game.

    Parameters
    ----------
    on_start
        Called with the ``new_game`` event built from the form.
    on_resume
        Called with the game id chosen from the saved, unfinished games.
    """

    def __init__(
        self,
        on_start: Callable[[dict[str, Any]], None],
        on_resume: Callable[[str], None],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._on_start = on_start
        self._on_resume = on_resume
        defaults = CrimeHotelRules()
        layout = QVBoxLayout(self)
        layout.addWidget(title_label(tr("New game of Crime Hotel")))

        players = QGroupBox(tr("Players in seating order (clockwise)"))
        form = QFormLayout(players)
        self.name_edits: list[QLineEdit] = []
        for number in range(1, 5):
            edit = QLineEdit()
            edit.setPlaceholderText(tr("leave empty for 3 players") if number == 4 else tr("name"))
            label = tr("Player {n}", n=number)
            if number == 1:
                label = tr("Player 1 (police car)")
            form.addRow(label, edit)
            edit.returnPressed.connect(self.start)
            self.name_edits.append(edit)
        layout.addWidget(players)

        edition = QGroupBox(tr("Edition: police station"))
        edition_form = QFormLayout(edition)
        edition_form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.FieldsStayAtSizeHint)
        self.bonus = QSpinBox()
        self.bonus.setRange(0, 99)
        self.bonus.setValue(defaults.bonus_points)
        edition_form.addRow(tr("Bonus points per bonus space"), self.bonus)
        self.help_counts: dict[str, QSpinBox] = {}
        for kind in HELP_KINDS:
            spin = QSpinBox()
            spin.setRange(0, 9)
            spin.setValue(defaults.spaces_for(kind))
            edition_form.addRow(tr("Spaces: {help}", help=help_name(kind)), spin)
            self.help_counts[kind] = spin
        self.middle_may_guess = QCheckBox(tr("Middle places may guess instead of taking help"))
        edition_form.addRow(self.middle_may_guess)
        layout.addWidget(edition)

        self.start_button = QPushButton(tr("&Start the game"))
        self.start_button.clicked.connect(self.start)
        layout.addWidget(self.start_button)
        self.error = ErrorLine()
        layout.addWidget(self.error)

        self.resume_box = QGroupBox(tr("Resume a saved game"))
        resume_row = QHBoxLayout(self.resume_box)
        self.resume_choice = QComboBox()
        self.resume_button = QPushButton(tr("&Resume"))
        self.resume_button.clicked.connect(self._resume)
        resume_row.addWidget(self.resume_choice, 1)
        resume_row.addWidget(self.resume_button)
        layout.addWidget(self.resume_box)
        layout.addStretch(1)

    def set_saved_games(self, games: list[GameInfo]) -> None:
        """List the unfinished saved games (the box hides when there are none)."""
        self.resume_choice.clear()
        for info in games:
            self.resume_choice.addItem(f"{info.title}  ({info.created})", info.game_id)
        self.resume_box.setVisible(bool(games))

    def new_game_event(self) -> dict[str, Any]:
        """The ``new_game`` event the form describes."""
        names = [e.text().strip() for e in self.name_edits]
        if not names[3]:
            names = names[:3]
        rules = {
            "bonus_points": self.bonus.value(),
            "help_spaces": {kind: spin.value() for kind, spin in self.help_counts.items()},
            "middle_may_guess": self.middle_may_guess.isChecked(),
        }
        return {"type": "new_game", "players": names, "rules": rules}

    def start(self) -> None:
        """Start a game from the form."""
        self._on_start(self.new_game_event())

    def _resume(self) -> None:
        game_id = self.resume_choice.currentData()
        if game_id:
            self._on_resume(str(game_id))
