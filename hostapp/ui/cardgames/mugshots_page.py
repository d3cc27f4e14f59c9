"""The mugshot-game page: set-up, the turn helper or the bare score pad, export.

In the turn helper the table enters each card as it is turned face up (one
drop-down per clue type) and presses what the active player does: draw,
identify naming a clue type, or challenge. The engine judges the match, moves
the cards and refills the centre; the page shows whose turn it is, the clue
area, the centre, the archives and the scores.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from PyQt6.QtCore import Qt
from PyQt6.QtGui import QBrush, QColor
from PyQt6.QtWidgets import (
    QComboBox,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QStackedWidget,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from hostapp.errors import TowerearError
from hostapp.games.cardsession import CardEngine, CardGameSession
from hostapp.games.mugshots import CLUE_TYPES, MugshotsGame, NameBook, ScorePad, load_name_book
from hostapp.i18n import tr
from hostapp.ui.cardgames.card_editor import CardEditor, card_text
from hostapp.ui.cardgames.common import (
    PAGE_STYLE,
    ErrorLine,
    ExportBar,
    SessionHolder,
    add_shortcut,
    add_undo_shortcuts,
    unfinished_games,
)
from hostapp.ui.cardgames.labels import clue_name
from hostapp.ui.cardgames.mugshots_setup import MugshotsSetup

GAME, PAD = "mugshots", "mugshots-pad"

# The rule text's own examples of name powers, shown when the name book
# gives none: "Fahndungsfotos zu vertauschen oder unter verdeckte Karten in
# der Tischmitte zu schauen".
_EXAMPLE_POWERS = ("swap mugshots", "look under face-down cards in the centre")


def _is_over(events: list[dict[str, Any]]) -> bool:
    first = events[0] if events else {}
    if first.get("type") == "new_pad":
        return ScorePad.replay(events).over
    return MugshotsGame.replay(events).step == "over"


def winner_text(winners: tuple[str, ...]) -> str:
    """Who won, or who tied."""
    if len(winners) == 1:
        return tr("{player} wins!", player=winners[0])
    return tr("Tie: {players} share the win.", players=", ".join(winners))


class MugshotsPage(QWidget):
    """The animal mugshot game at the table: turn helper or score pad."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setStyleSheet(PAGE_STYLE)
        self.book, self.book_warning = load_name_book()
        self.holder: SessionHolder[Any] = SessionHolder()
        self.kind = GAME
        outer = QVBoxLayout(self)
        self.stack = QStackedWidget()
        outer.addWidget(self.stack)
        self.setup = MugshotsSetup(self.book, self.start_game, self.resume_game)
        if self.book_warning:
            self.setup.error.setText(self.book_warning)
        self.stack.addWidget(self.setup)
        self.helper = self._build_helper()
        self.stack.addWidget(self.helper)
        self.pad = self._build_pad()
        self.stack.addWidget(self.pad)
        add_undo_shortcuts(self, self.undo)
        for keys, action in (
            ("Alt+D", self.draw),
            ("Alt+I", self.identify),
            ("Alt+C", self.challenge),
            ("Alt+O", self.collect),
        ):
            add_shortcut(self, keys, partial(self._if_playing, action))
        self.show_setup()

    # -- building -------------------------------------------------------------

    def _bottom_bar(self) -> tuple[QHBoxLayout, QPushButton, ExportBar, ErrorLine]:
        error = ErrorLine()
        bar = QHBoxLayout()
        undo = QPushButton(tr("Undo last entry (Alt+U)"))
        undo.clicked.connect(self.undo)
        new = QPushButton(tr("&New game"))
        new.clicked.connect(self.show_setup)
        export = ExportBar(self._export_data, error.show_error)
        bar.addWidget(undo)
        bar.addWidget(new)
        bar.addWidget(export, 1)
        return bar, undo, export, error

    def _build_helper(self) -> QWidget:
        page = QWidget()
        layout = QVBoxLayout(page)
        self.status = QLabel()
        self.status.setObjectName("status")
        self.status.setWordWrap(True)
        layout.addWidget(self.status)
        columns = QHBoxLayout()
        left = QVBoxLayout()
        entry = QGroupBox(tr("Card turned face up"))
        entry_layout = QVBoxLayout(entry)
        self.editor = CardEditor(self.book)
        entry_layout.addWidget(self.editor)
        actions = QHBoxLayout()
        self.draw_button = QPushButton(tr("Draw it (Alt+D)"))
        self.draw_button.clicked.connect(self.draw)
        actions.addWidget(self.draw_button)
        self.clue = QComboBox()
        for clue in CLUE_TYPES:
            self.clue.addItem(clue_name(clue), clue)
        actions.addWidget(QLabel(tr("Named clue:")))
        actions.addWidget(self.clue)
        self.own = QComboBox()
        actions.addWidget(self.own)
        self.identify_button = QPushButton(tr("Identify (Alt+I)"))
        self.identify_button.clicked.connect(self.identify)
        actions.addWidget(self.identify_button)
        entry_layout.addLayout(actions)
        challenge = QHBoxLayout()
        self.challenge_button = QPushButton(tr("Challenge: turn it over (Alt+C)"))
        self.challenge_button.clicked.connect(self.challenge)
        self.collect_button = QPushButton(tr("Collect the cards (Alt+O)"))
        self.collect_button.clicked.connect(self.collect)
        challenge.addWidget(self.challenge_button)
        challenge.addWidget(self.collect_button)
        challenge.addStretch(1)
        entry_layout.addLayout(challenge)
        left.addWidget(entry)
        self.table_view = QLabel()
        self.table_view.setWordWrap(True)
        self.table_view.setTextFormat(Qt.TextFormat.RichText)
        self.table_view.setAlignment(Qt.AlignmentFlag.AlignTop)
        left.addWidget(self.table_view, 1)
        columns.addLayout(left, 3)
        right = QVBoxLayout()
        self.score_table = self._score_table()
        right.addWidget(self.score_table)
        powers = QGroupBox(tr("Advanced mode: name powers"))
        powers_layout = QVBoxLayout(powers)
        self.powers = QLabel(self._powers_text())
        self.powers.setWordWrap(True)
        powers_layout.addWidget(self.powers)
        right.addWidget(powers)
        right.addStretch(1)
        columns.addLayout(right, 2)
        layout.addLayout(columns, 1)
        bar, self.helper_undo, self.helper_export, self.helper_error = self._bottom_bar()
        layout.addWidget(self.helper_error)
        layout.addLayout(bar)
        return page

    def _score_table(self) -> QTableWidget:
        table = QTableWidget()
        table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        table.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        header = table.horizontalHeader()
        assert header is not None
        header.setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        table.setMaximumHeight(260)
        return table

    def _powers_text(self) -> str:
        lines = [f"{e.name}: {e.power}" for e in self.book.entries if e.power]
        if not lines:
            examples = ", ".join(tr(p) for p in _EXAMPLE_POWERS)
            return tr(
                "A name named as the clue in a successful identification triggers its "
                "power, for example: {examples}. Add each name's power to the name "
                "book to list them here.",
                examples=examples,
            )
        return "\n".join(lines)

    def _build_pad(self) -> QWidget:
        page = QWidget()
        layout = QVBoxLayout(page)
        self.pad_status = QLabel()
        self.pad_status.setObjectName("status")
        layout.addWidget(self.pad_status)
        self.pad_rows = QVBoxLayout()
        layout.addLayout(self.pad_rows)
        self.pad_labels: dict[str, QLabel] = {}
        layout.addStretch(1)
        bar, self.pad_undo, self.pad_export, self.pad_error = self._bottom_bar()
        layout.addWidget(self.pad_error)
        layout.addLayout(bar)
        return page

    # -- sessions -------------------------------------------------------------

    def show_setup(self) -> None:
        """Show the new-game form, listing saved games that can be resumed."""
        self.holder.replace(None)
        games = unfinished_games(GAME, _is_over) + unfinished_games(PAD, _is_over)
        self.setup.set_saved_games(games)
        self.stack.setCurrentWidget(self.setup)
        self.setup.name_edits[0].setFocus()

    def start_game(self, kind: str, event: dict[str, Any]) -> None:
        """Start a journalled game (``kind`` ``mugshots`` or ``mugshots-pad``)."""
        title = tr("Mugshots: {players}", players=", ".join(event.get("players", [])))
        factory = ScorePad if kind == PAD else MugshotsGame
        try:
            session: CardGameSession[Any] = CardGameSession.start(kind, factory, event, title)
        except TowerearError as exc:
            self.setup.error.show_error(exc)
            return
        self._play(kind, session)

    def resume_game(self, kind: str, game_id: str) -> None:
        """Resume a saved game or pad."""
        factory = ScorePad if kind == PAD else MugshotsGame
        SessionHolder.release(game_id)
        try:
            session: CardGameSession[Any] = CardGameSession.resume(kind, factory, game_id)
        except TowerearError as exc:
            self.setup.error.show_error(exc)
            return
        self._play(kind, session)

    def _play(self, kind: str, session: CardGameSession[Any]) -> None:
        self.holder.replace(session)
        self.kind = kind
        self.setup.error.clear_error()
        if kind == PAD:
            self._build_pad_rows(session.engine)
            self.stack.setCurrentWidget(self.pad)
        else:
            engine: MugshotsGame = session.engine
            if engine.book is not None and engine.book != self.book:
                self._use_book(engine.book)
            self.stack.setCurrentWidget(self.helper)
        self.refresh()

    def _use_book(self, book: NameBook) -> None:
        # A resumed game keeps the names it was started with.
        old = self.editor
        self.editor = CardEditor(book)
        parent_layout = old.parentWidget().layout()  # type: ignore[union-attr]
        assert parent_layout is not None
        parent_layout.replaceWidget(old, self.editor)
        old.deleteLater()

    @property
    def error(self) -> ErrorLine:
        """The error line of the view in use."""
        return self.pad_error if self.kind == PAD else self.helper_error

    def send(self, event: dict[str, Any]) -> bool:
        """Apply one event; show the refusal instead if the rules forbid it."""
        session = self.holder.session
        if session is None:
            return False
        try:
            session.apply(event)
        except TowerearError as exc:
            self.error.show_error(exc)
            return False
        self.error.clear_error()
        self.refresh()
        return True

    def undo(self) -> None:
        """Take back the last entry."""
        session = self.holder.session
        if session is not None and session.can_undo():
            session.undo()
            self.error.clear_error()
            self.refresh()

    # -- turn helper entries --------------------------------------------------

    def _if_playing(self, action: Callable[[], None]) -> None:
        if self.stack.currentWidget() is self.helper:
            action()

    def draw(self) -> None:
        """The active player draws the card in the editor."""
        self.send({"type": "draw", "card": self.editor.card()})

    def identify(self) -> None:
        """Identify: the editor holds the centre card turned over."""
        event: dict[str, Any] = {
            "type": "identify",
            "clue": str(self.clue.currentData()),
            "card": self.editor.card(),
        }
        session = self.holder.session
        in_double = session is not None and session.engine.step == "identify2"
        if in_double and self.own.currentData() is not None:
            event["own"] = int(self.own.currentData())
        self.send(event)

    def challenge(self) -> None:
        """Challenge: the editor holds the next centre card turned over."""
        self.send({"type": "challenge", "card": self.editor.card()})

    def collect(self) -> None:
        """End a challenge and archive its cards."""
        self.send({"type": "collect"})

    def pad_add(self, player: str, cards: int) -> None:
        """Add (or take back) archived cards on the score pad."""
        self.send({"type": "archive", "player": player, "cards": cards})

    # -- drawing --------------------------------------------------------------

    def refresh(self) -> None:
        """Redraw the view in use from the engine's state."""
        session = self.holder.session
        if session is None:
            return
        if self.kind == PAD:
            self._refresh_pad(session.engine)
            self.pad_undo.setEnabled(session.can_undo())
        else:
            self._refresh_helper(session.engine)
            self.helper_undo.setEnabled(session.can_undo())

    def _refresh_helper(self, game: MugshotsGame) -> None:
        step = game.step
        player = game.active_player
        texts = {
            "draw": tr("{player}: draw a card and enter it.", player=player),
            "choose": tr(
                "{player}: identify (name a clue, turn a centre card over), draw a "
                "second card, or challenge.",
                player=player,
            ),
            "identify2": tr(
                "{player}: two identifications, one centre card for each drawn card.", player=player
            ),
            "challenge": tr(
                "{player}: turn over another centre card, or collect after {n}.",
                player=player,
                n=game.rules.challenge_minimum,
            ),
            "over": tr("The game is over.") + " " + winner_text(game.winners()),
        }
        self.status.setText(texts[step])
        self.draw_button.setEnabled(step in ("draw", "choose"))
        self.identify_button.setEnabled(step in ("choose", "identify2"))
        self.clue.setEnabled(step in ("choose", "identify2"))
        self.challenge_button.setEnabled(step in ("choose", "challenge"))
        self.collect_button.setEnabled(
            step == "challenge" and len(game.revealed) >= game.rules.challenge_minimum
        )
        self.own.clear()
        unused = [i for i in range(len(game.clue_area)) if i not in game.turn.used_own]
        for index in unused:
            self.own.addItem(tr("with drawn card {n}", n=index + 1), index)
        self.own.setVisible(step == "identify2")
        self._show_table(game)
        self._show_scores(game)
        if step == "over":
            self.helper_export.html_button.setFocus()
        else:
            self.editor.focus_first()

    def _show_table(self, game: MugshotsGame) -> None:
        def cards(items: tuple[Any, ...]) -> str:
            return (
                "<br>".join(f"{i + 1}. {card_text(c.to_dict())}" for i, c in enumerate(items))
                or "–"
            )

        last = ""
        if game.results:
            result = game.results[-1]
            verdict = tr("won {n} cards", n=result.cards_won) if result.success else tr("failed")
            last = tr(
                "Last turn: {player} {verdict} ({reason}).",
                player=result.player,
                verdict=verdict,
                reason=result.reason,
            )
        self.table_view.setText(
            f"<p><b>{tr('Clue area')}:</b><br>{cards(game.clue_area)}</p>"
            f"<p><b>{tr('Turned over this turn')}:</b><br>{cards(game.revealed)}</p>"
            f"<p><b>{tr('Centre (face down)')}:</b> {game.face_down}</p>"
            f"<p>{last}</p>"
        )

    def _show_scores(self, game: MugshotsGame) -> None:
        table = self.score_table
        headers = [tr("Archived cards"), tr("Goal points"), tr("Points")]
        table.setColumnCount(3)
        table.setRowCount(len(game.players))
        table.setHorizontalHeaderLabels(headers)
        table.setVerticalHeaderLabels(list(game.players))
        winners = set(game.winners()) if game.step == "over" else set()
        for row, player in enumerate(game.players):
            cards = len(game.archive[player])
            score = game.score(player)
            for column, value in enumerate((cards, score - cards, score)):
                item = QTableWidgetItem(str(value))
                item.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
                if player in winners:
                    item.setBackground(QBrush(QColor("#fff3b0")))
                if row == game.active and game.step != "over":
                    item.setForeground(QBrush(QColor("#0b3d91")))
                table.setItem(row, column, item)

    def _build_pad_rows(self, pad: ScorePad) -> None:
        while self.pad_rows.count():
            item = self.pad_rows.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.deleteLater()
        self.pad_labels = {}
        for player in pad.players:
            row = QWidget()
            line = QHBoxLayout(row)
            name = QLabel(player)
            name.setStyleSheet("font-size: 22px; font-weight: bold;")
            count = QLabel()
            count.setStyleSheet("font-size: 22px;")
            line.addWidget(name, 2)
            line.addWidget(count, 1)
            for delta, text in ((2, "+2"), (5, "+5"), (1, "+1"), (-1, "−1")):
                button = QPushButton(text)
                button.setAccessibleName(tr("{player} {delta} cards", player=player, delta=text))
                button.clicked.connect(lambda _=False, p=player, d=delta: self.pad_add(p, d))
                line.addWidget(button)
            self.pad_rows.addWidget(row)
            self.pad_labels[player] = count

    def _refresh_pad(self, pad: ScorePad) -> None:
        for player, label in self.pad_labels.items():
            label.setText(tr("{n} cards", n=pad.counts[player]))
        if pad.over:
            self.pad_status.setText(tr("The game is over.") + " " + winner_text(pad.winners()))
        else:
            self.pad_status.setText(
                tr("Score pad: first to {n} archived cards ends the game.", n=pad.archive_to_win)
            )

    def _export_data(self) -> tuple[dict[str, Any], list[dict[str, Any]], str]:
        session = self.holder.session
        if session is None:
            return {}, [], "mugshots"
        engine: CardEngine = session.engine
        stem = f"mugshots-{session.game_id}" if session.game_id else "mugshots"
        return engine.summary(), list(engine.events), stem
