"""The Mord im Arosa page: start, setup, play, score and reveal, one at a time."""

from __future__ import annotations

from PyQt6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPushButton,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from hostapp.errors import TowerearError
from hostapp.i18n import tr, tr_sentence
from hostapp.ui.arosa.controller import ArosaController
from hostapp.ui.arosa.end_panel import RevealPanel, ScorePanel
from hostapp.ui.arosa.play_panel import PlayPanel
from hostapp.ui.arosa.setup_panel import SetupPanel
from hostapp.ui.context import AppContext


class StartPanel(QWidget):
    """Start a new game or resume one from its journal."""

    def __init__(self, page: ArosaPage) -> None:
        super().__init__()
        layout = QVBoxLayout(self)
        title = QLabel(tr("Mord im Arosa"))
        title.setStyleSheet("font-size: 32px; font-weight: bold;")
        layout.addWidget(title)
        intro = QLabel(
            tr(
                "The app calls out every throw, listens for the landing and keeps the"
                " investigation sheet. It never tells where a cube landed."
            )
        )
        intro.setWordWrap(True)
        intro.setStyleSheet("font-size: 16px;")
        layout.addWidget(intro)
        self.new_button = QPushButton(tr("&New game"))
        self.new_button.setMinimumHeight(48)
        self.new_button.clicked.connect(page.show_setup)
        layout.addWidget(self.new_button)
        layout.addWidget(QLabel(tr("Games to resume:")))
        self.games = QListWidget()
        self.games.setAccessibleName(tr("Games to resume"))
        for game_id, description in page.controller.store.resumable():
            item = QListWidgetItem(description)
            item.setData(256, game_id)
            self.games.addItem(item)
        if self.games.count():
            self.games.setCurrentRow(0)
        self.games.itemActivated.connect(lambda item: page.resume(str(item.data(256))))
        layout.addWidget(self.games, 1)
        row = QHBoxLayout()
        self.resume_button = QPushButton(tr("&Resume the selected game"))
        self.resume_button.setEnabled(self.games.count() > 0)
        self.resume_button.clicked.connect(self._resume_selected)
        row.addStretch(1)
        row.addWidget(self.resume_button)
        layout.addLayout(row)
        self._page = page

    def _resume_selected(self) -> None:
        item = self.games.currentItem()
        if item is not None:
            self._page.resume(str(item.data(256)))


class ArosaPage(QWidget):
    """The game tab.

    Parameters
    ----------
    context
        The app context (errors, the debug lock).
    controller
        The game; it outlives this page (pages are rebuilt on a language switch).
    """

    def __init__(
        self, context: AppContext, controller: ArosaController, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.context = context
        self.controller = controller
        self._stack = QStackedWidget()
        layout = QVBoxLayout(self)
        layout.addWidget(self._stack)
        self.panel: QWidget | None = None
        self._showing_reveal = False
        controller.changed.connect(self._state_changed)
        controller.failed.connect(context.show_error)
        self._state_changed()

    def _show(self, panel: QWidget) -> None:
        old = self.panel
        self._stack.addWidget(panel)
        self._stack.setCurrentWidget(panel)
        self.panel = panel
        if old is not None:
            self._stack.removeWidget(old)
            old.setParent(None)
            old.deleteLater()

    def _state_changed(self) -> None:
        state = self.controller.state
        self.context.debug_lock.set_game_running(self.controller.running)
        if state is None:
            if not isinstance(self.panel, StartPanel | SetupPanel):
                self.show_start()
        elif state.is_over:
            if self._showing_reveal or isinstance(self.panel, ScorePanel):
                return
            scores = self.controller.scores()
            assert scores is not None
            self._show(ScorePanel(state, scores, self.show_reveal, self.show_setup))
        elif not isinstance(self.panel, PlayPanel):
            self._show(PlayPanel(self.controller, self.ask_unlock_live))

    def show_start(self) -> None:
        """The start panel: new game or resume."""
        self._showing_reveal = False
        self._show(StartPanel(self))

    def show_setup(self) -> None:
        """The new-game form."""
        self._showing_reveal = False
        if self.controller.state is not None:
            self.controller.close()
        self._show(SetupPanel(self.start_game, self.show_start))

    def start_game(self, players: list[str], victim_thrower: str, mode: str) -> None:
        """Start a journalled game with this setup."""
        try:
            self.controller.new_game(players, victim_thrower, mode)
        except TowerearError as exc:
            self.context.show_error(tr_sentence(str(exc)))

    def resume(self, game_id: str) -> None:
        """Reopen a game from its journal."""
        try:
            self.controller.resume(game_id)
        except TowerearError as exc:
            self.context.show_error(tr_sentence(str(exc)))

    def show_reveal(self) -> None:
        """Everything the app tracked (only once the game is over)."""
        state = self.controller.state
        if state is None or not state.is_over:
            return
        self._showing_reveal = True
        accuracy = self.controller.tower_belief.model.accuracy
        proposals = (accuracy.levels_right, accuracy.levels_checked)
        self._show(
            RevealPanel(
                state,
                self.controller.throw_history(),
                self.show_score,
                proposals,
                self.controller.notes(),
            )
        )

    def show_score(self) -> None:
        """Back from the reveal to the score."""
        self._showing_reveal = False
        state = self.controller.state
        scores = self.controller.scores()
        if state is not None and scores is not None:
            self._show(ScorePanel(state, scores, self.show_reveal, self.show_setup))

    def ask_unlock_live(self) -> None:
        """Unlock the live view after a warning; the unlock is journalled."""
        answer = QMessageBox.warning(
            self,
            tr("Unlock the live view?"),
            tr(
                "Everyone at the table will be able to see where cubes landed."
                " The unlock is written into the game journal. Unlock?"
            ),
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            QMessageBox.StandardButton.No,
        )
        if answer == QMessageBox.StandardButton.Yes:
            self.context.debug_lock.unlock()
