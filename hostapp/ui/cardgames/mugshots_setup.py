"""New mugshot game: players, turn helper or bare score pad, options, goal cards."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PyQt6.QtCore import Qt
from PyQt6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QRadioButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from hostapp.games.mugshots import COLOURS, GOAL_KINDS, PATTERNS, NameBook
from hostapp.games.mugshots.namebook import save_name_book, user_name_book_path
from hostapp.i18n import tr
from hostapp.journal import GameInfo
from hostapp.ui.cardgames.common import ErrorLine, title_label
from hostapp.ui.cardgames.labels import value_name

MAX_PLAYERS = 6


def goal_kind_name(kind: str) -> str:
    """A goal kind in words."""
    names = {
        "pattern": tr("cards with the pattern"),
        "colour": tr("cards with the colour"),
        "name": tr("cards with the name"),
        "animal_set": tr("sets of different animals"),
        "colour_set": tr("sets of different colours"),
    }
    return names.get(kind, kind)


class GoalRow:
    """The goal-card fields of one player: kind, value, points, set size."""

    def __init__(self, book: NameBook) -> None:
        self.book = book
        self.kind = QComboBox()
        for kind in GOAL_KINDS:
            self.kind.addItem(goal_kind_name(kind), kind)
        self.value = QComboBox()
        self.points = QSpinBox()
        self.points.setRange(0, 20)
        self.points.setValue(1)
        self.points.setPrefix("+")
        self.set_size = QSpinBox()
        self.set_size.setRange(2, 5)
        self.set_size.setValue(5)
        self.set_size.setSuffix(" " + tr("per set"))
        self.kind.currentIndexChanged.connect(self._kind_changed)
        self._kind_changed()

    def _kind_changed(self) -> None:
        kind = self.kind.currentData()
        self.value.clear()
        choices = {"pattern": PATTERNS, "colour": COLOURS, "name": self.book.names}.get(kind, ())
        for value in choices:
            self.value.addItem(value_name(value), value)
        self.value.setEnabled(bool(choices))
        self.set_size.setEnabled(str(kind).endswith("_set"))

    def goal(self) -> dict[str, Any]:
        """The goal as an event's goal dict."""
        return {
            "kind": str(self.kind.currentData()),
            "value": str(self.value.currentData() or ""),
            "points": self.points.value(),
            "set_size": self.set_size.value(),
        }


class MugshotsSetup(QWidget):
    """The form that starts (or resumes) a mugshot game or score pad.

    Parameters
    ----------
    book
        The name book in force (offered for name goals).
    on_start
        Called with ``(kind, first event)``: ``"mugshots"`` with a ``new_game``
        event, or ``"mugshots-pad"`` with a ``new_pad`` event.
    on_resume
        Called with ``(kind, game id)``.
    """

    def __init__(
        self,
        book: NameBook,
        on_start: Callable[[str, dict[str, Any]], None],
        on_resume: Callable[[str, str], None],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.book = book
        self._on_start = on_start
        self._on_resume = on_resume
        layout = QVBoxLayout(self)
        layout.addWidget(title_label(tr("New game of the animal mugshot game")))

        mode = QHBoxLayout()
        self.helper_mode = QRadioButton(tr("Turn &helper (enter the cards)"))
        self.pad_mode = QRadioButton(tr("Score &pad only (archive counts)"))
        self.helper_mode.setChecked(True)
        mode.addWidget(self.helper_mode)
        mode.addWidget(self.pad_mode)
        mode.addStretch(1)
        layout.addLayout(mode)

        players = QGroupBox(tr("Players in turn order (2 to 6)"))
        grid = QGridLayout(players)
        grid.addWidget(QLabel(tr("Name")), 0, 1)
        self.goals_header = QLabel(tr("Goal card"))
        grid.addWidget(self.goals_header, 0, 2, 1, 4)
        self.name_edits: list[QLineEdit] = []
        self.goal_rows: list[GoalRow] = []
        for index in range(MAX_PLAYERS):
            grid.addWidget(QLabel(tr("Player {n}", n=index + 1)), index + 1, 0)
            edit = QLineEdit()
            edit.setPlaceholderText(tr("name") if index < 2 else tr("optional"))
            edit.returnPressed.connect(self.start)
            grid.addWidget(edit, index + 1, 1)
            row = GoalRow(book)
            for column, widget in enumerate((row.kind, row.value, row.points, row.set_size), 2):
                grid.addWidget(widget, index + 1, column)
            self.name_edits.append(edit)
            self.goal_rows.append(row)
        layout.addWidget(players)

        options = QGroupBox(tr("Options"))
        form = QFormLayout(options)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.FieldsStayAtSizeHint)
        self.strict = QCheckBox(
            tr("Strict reading: a match in a clue type not named also fails an identification")
        )
        form.addRow(self.strict)
        self.goals = QCheckBox(tr("Module variant: goal cards"))
        self.goals.toggled.connect(self._show_goals)
        form.addRow(self.goals)
        self.names_label = QLabel()
        self.names_label.setWordWrap(True)
        self.names_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        form.addRow(self.names_label)
        self.save_names_button = QPushButton(tr("Save an editable cop&y"))
        self.save_names_button.clicked.connect(self._save_names)
        form.addRow(self.save_names_button)
        self._show_names()
        self.target = QSpinBox()
        self.target.setRange(1, 50)
        self.target.setValue(10)
        form.addRow(tr("Archived cards that end the game"), self.target)
        layout.addWidget(options)
        self.pad_mode.toggled.connect(self._show_goals)

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
        self._show_goals()

    def _show_goals(self) -> None:
        helper = self.helper_mode.isChecked()
        # The score pad knows only counts: no cards to judge or goals to score.
        self.strict.setEnabled(helper)
        self.goals.setEnabled(helper)
        show = self.goals.isChecked() and helper
        self.goals_header.setVisible(show)
        for row in self.goal_rows:
            for widget in (row.kind, row.value, row.points, row.set_size):
                widget.setVisible(show)

    def _show_names(self) -> None:
        path = user_name_book_path()
        where = (
            tr("edit {path} and open this page again", path=str(path))
            if path.exists()
            else tr("the names shipped with towerear; save a copy to edit them")
        )
        self.names_label.setText(
            tr(
                "Names on the cards: {names} ({where})",
                names=", ".join(self.book.names),
                where=where,
            )
        )
        self.save_names_button.setVisible(not path.exists())

    def _save_names(self) -> None:
        try:
            save_name_book(self.book)
        except OSError as exc:
            self.error.setText(tr("The name book could not be saved: {reason}", reason=str(exc)))
            return
        self._show_names()

    def set_saved_games(self, games: list[GameInfo]) -> None:
        """List unfinished saved games of both kinds (hidden when none)."""
        self.resume_choice.clear()
        for info in games:
            self.resume_choice.addItem(f"{info.title}  ({info.created})", (info.kind, info.game_id))
        self.resume_box.setVisible(bool(games))

    def first_event(self) -> tuple[str, dict[str, Any]]:
        """``(kind, first event)`` described by the form."""
        names = [e.text().strip() for e in self.name_edits]
        players = [n for n in names if n]
        if self.pad_mode.isChecked():
            return "mugshots-pad", {
                "type": "new_pad",
                "players": players,
                "archive_to_win": self.target.value(),
            }
        event: dict[str, Any] = {
            "type": "new_game",
            "players": players,
            "rules": {
                "strict_single_match": self.strict.isChecked(),
                "goals": self.goals.isChecked(),
                "archive_to_win": self.target.value(),
            },
            "names": self.book.to_dict(),
        }
        if self.goals.isChecked():
            event["goals"] = {
                name: [row.goal()] for name, row in zip(names, self.goal_rows, strict=True) if name
            }
        return "mugshots", event

    def start(self) -> None:
        """Start from the form."""
        kind, event = self.first_event()
        self._on_start(kind, event)

    def _resume(self) -> None:
        data = self.resume_choice.currentData()
        if data:
            self._on_resume(str(data[0]), str(data[1]))
