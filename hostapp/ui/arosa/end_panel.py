"""The end of a game: suspicion points, culprit(s) and winner(s); then the reveal."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from PyQt6.QtWidgets import (
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from hostapp.games.arosa import N_FLOORS, VICTIM, GameState, Scores
from hostapp.i18n import tr
from hostapp.ui.arosa.sheet import CubeRow, SheetWidget, floor_label
from hostapp.ui.markers import ColourMarker, colour_name


class ScorePanel(QWidget):
    """Suspicion points per player, culprits and winners, and the final sheet."""

    def __init__(
        self,
        state: GameState,
        scores: Scores,
        on_reveal: Callable[[], None],
        on_new_game: Callable[[], None],
    ) -> None:
        super().__init__()
        outer = QHBoxLayout(self)
        left = QVBoxLayout()
        outer.addLayout(left, 1)
        title = QLabel(tr("The game is over."))
        title.setStyleSheet("font-size: 28px; font-weight: bold;")
        left.addWidget(title)
        culprits = ", ".join(colour_name(c) for c in scores.culprits)
        winners = ", ".join(colour_name(c) for c in scores.winners)
        self.verdict = QLabel(
            tr("Culprit: {culprits}", culprits=culprits)
            + "\n"
            + tr("Winner: {winners}", winners=winners)
        )
        self.verdict.setStyleSheet("font-size: 22px;")
        left.addWidget(self.verdict)
        grid = QGridLayout()
        grid.addWidget(QLabel(tr("Player")), 0, 0, 1, 2)
        grid.addWidget(QLabel(tr("Suspicion points")), 0, 2)
        ranked = sorted(state.players, key=lambda c: -scores.suspicion[c])
        self.point_labels: dict[str, QLabel] = {}
        for row, colour in enumerate(ranked, start=1):
            grid.addWidget(ColourMarker(colour, None, 36), row, 0)
            grid.addWidget(QLabel(colour_name(colour)), row, 1)
            points = QLabel(str(scores.suspicion[colour]))
            points.setStyleSheet("font-size: 22px; font-weight: bold;")
            self.point_labels[colour] = points
            grid.addWidget(points, row, 2)
            badge = ""
            if colour in scores.culprits:
                badge = tr("culprit")
            elif colour in scores.winners:
                badge = tr("winner")
            grid.addWidget(QLabel(badge), row, 3)
        left.addLayout(grid)
        buttons = QHBoxLayout()
        self.reveal_button = QPushButton(tr("&Reveal the tower"))
        self.reveal_button.setMinimumHeight(44)
        self.reveal_button.clicked.connect(on_reveal)
        self.new_button = QPushButton(tr("&New game"))
        self.new_button.clicked.connect(on_new_game)
        buttons.addWidget(self.reveal_button)
        buttons.addWidget(self.new_button)
        left.addLayout(buttons)
        left.addStretch(1)
        right = QVBoxLayout()
        right.addWidget(SheetWidget(state.players, state.sheet, state.victims_on_sheet))
        right.addStretch(1)
        outer.addLayout(right, 1)


class RevealPanel(QWidget):
    """Everything the app tracked, level by level, and every throw with its floor.

    Parameters
    ----------
    state
        The final state (its ``tower`` is what the app believes lies where).
    throws
        ``(colour, floor)`` of every throw in order, from the journal.
    proposals
        ``(right, checked)``: opened levels whose proposal the players
        confirmed unchanged, of all opened levels.
    notes
        The game's journal notes (live view unlocked during the game), each
        with ``at`` (ISO 8601 UTC) and ``after_events``.
    """

    def __init__(
        self,
        state: GameState,
        throws: Sequence[tuple[str, int]],
        on_back: Callable[[], None],
        proposals: tuple[int, int] = (0, 0),
        notes: Sequence[Mapping[str, object]] = (),
    ) -> None:
        super().__init__()
        layout = QVBoxLayout(self)
        title = QLabel(tr("What the app tracked in the tower"))
        title.setStyleSheet("font-size: 24px; font-weight: bold;")
        layout.addWidget(title)
        grid = QGridLayout()
        colours = [*state.players, VICTIM]
        self.level_rows: dict[int, CubeRow] = {}
        for row, floor in enumerate(reversed(range(N_FLOORS))):
            grid.addWidget(QLabel(floor_label(floor)), row, 0)
            counts: Mapping[str, int] = {c: state.tower[c][floor] for c in colours}
            cubes = CubeRow(counts, colours, 30)
            self.level_rows[floor] = cubes
            grid.addWidget(cubes, row, 1)
            per_floor = [c for c, f in throws if f == floor]
            grid.addWidget(QLabel(tr("{n} throw(s) landed here", n=len(per_floor))), row, 2)
        grid.setColumnStretch(1, 1)
        layout.addLayout(grid)
        history = " \u2192 ".join(f"{colour_name(c)} {f}" for c, f in throws)
        self.history = QLabel(tr("Every throw in order: {history}", history=history))
        self.history.setWordWrap(True)
        layout.addWidget(self.history)
        right, checked = proposals
        self.accuracy = QLabel(
            tr(
                "The app's guess of an opened level was right {right} of {checked} times.",
                right=right,
                checked=checked,
            )
        )
        layout.addWidget(self.accuracy)
        unlocks = [
            tr(
                "The live view was unlocked at {time} UTC, after {n} steps.",
                time=str(note.get("at", "")).replace("T", " ").rstrip("Z"),
                n=note.get("after_events", 0),
            )
            for note in notes
        ]
        self.notes = QLabel(
            "\n".join(unlocks) if unlocks else tr("Nobody unlocked the live view during the game.")
        )
        self.notes.setWordWrap(True)
        layout.addWidget(self.notes)
        back = QPushButton(tr("&Back to the score"))
        back.clicked.connect(on_back)
        layout.addWidget(back)
        layout.addStretch(1)
