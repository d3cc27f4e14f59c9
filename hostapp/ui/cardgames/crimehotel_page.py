"""The Crime Hotel page: set-up, then the hotel, one entry panel per step, scores.

Each step of an investigation has its own small panel (deal, trick, place,
last cards, reveal); the page shows the one the engine is waiting for and
puts the keyboard focus in its first field, so a game can be entered with
the keyboard alone: type, Tab, Enter. The board's spaces are buttons for the
mouse; Ctrl+Enter presses the step's button (handy after choosing a help from
the list). Alt+U (or Ctrl+Z outside a text field) takes the last entry back.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PyQt6.QtCore import Qt
from PyQt6.QtGui import QBrush, QColor
from PyQt6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QStackedWidget,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from hostapp.errors import TowerearError
from hostapp.games.cardsession import CardGameSession
from hostapp.games.crimehotel import HELP_KINDS, CrimeHotelGame
from hostapp.games.crimehotel.rules import FACE_UP_CARDS, INVESTIGATIONS
from hostapp.i18n import tr
from hostapp.ui.cardgames.common import (
    PAGE_STYLE,
    ErrorLine,
    ExportBar,
    SessionHolder,
    add_shortcut,
    add_undo_shortcuts,
    unfinished_games,
)
from hostapp.ui.cardgames.crimehotel_entries import CardRows, parse_room, parse_rooms
from hostapp.ui.cardgames.crimehotel_setup import CrimeHotelSetup
from hostapp.ui.cardgames.hotel_board import HotelBoard
from hostapp.ui.cardgames.labels import help_name

KIND = "crimehotel"


def _is_over(events: list[dict[str, Any]]) -> bool:
    return CrimeHotelGame.replay(events).phase == "over"


class CrimeHotelPage(QWidget):
    """Crime Hotel at the table: set-up, investigations, scores, export."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setStyleSheet(PAGE_STYLE)
        self.holder: SessionHolder[CrimeHotelGame] = SessionHolder()
        outer = QVBoxLayout(self)
        self.stack = QStackedWidget()
        outer.addWidget(self.stack)
        self.setup = CrimeHotelSetup(self.start_game, self.resume_game)
        self.stack.addWidget(self.setup)
        self.play = self._build_play()
        self.stack.addWidget(self.play)
        add_undo_shortcuts(self, self.undo)
        add_shortcut(self, "Ctrl+Return", self.confirm_step)
        self.show_setup()

    # -- building -------------------------------------------------------------

    def _build_play(self) -> QWidget:
        play = QWidget()
        layout = QVBoxLayout(play)
        self.status = QLabel()
        self.status.setObjectName("status")
        self.status.setWordWrap(True)
        layout.addWidget(self.status)
        middle = QHBoxLayout()
        self.board = HotelBoard(self.space_clicked)
        middle.addWidget(self.board, 3)
        side = QVBoxLayout()
        self.panels = QStackedWidget()
        self._build_panels()
        side.addWidget(self.panels)
        self.error = ErrorLine()
        side.addWidget(self.error)
        self.candidates = QLabel()
        self.candidates.setWordWrap(True)
        side.addWidget(self.candidates)
        self.warnings = QLabel()
        self.warnings.setWordWrap(True)
        self.warnings.setStyleSheet("color: #8a4b00; font-weight: bold;")
        side.addWidget(self.warnings)
        side.addStretch(1)
        middle.addLayout(side, 2)
        layout.addLayout(middle, 1)
        self.scores = QTableWidget()
        self.scores.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.scores.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.scores.setMaximumHeight(175)
        header = self.scores.horizontalHeader()
        assert header is not None
        header.setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        layout.addWidget(self.scores)
        bar = QHBoxLayout()
        self.undo_button = QPushButton(tr("Undo last entry (Alt+U)"))
        self.undo_button.clicked.connect(self.undo)
        self.new_button = QPushButton(tr("&New game"))
        self.new_button.clicked.connect(self.show_setup)
        self.export = ExportBar(self._export_data, self.error.show_error)
        bar.addWidget(self.undo_button)
        bar.addWidget(self.new_button)
        bar.addWidget(self.export, 1)
        layout.addLayout(bar)
        return play

    def _panel(self, title: str) -> tuple[QWidget, QVBoxLayout, QLabel]:
        panel = QWidget()
        layout = QVBoxLayout(panel)
        layout.setContentsMargins(0, 0, 0, 0)
        heading = QLabel(title)
        heading.setStyleSheet("font-size: 19px; font-weight: bold;")
        heading.setWordWrap(True)
        layout.addWidget(heading)
        self.panels.addWidget(panel)
        return panel, layout, heading

    def _build_panels(self) -> None:
        self.deal_panel, deal, _ = self._panel(tr("Deal the cards"))
        self.deal_hint = QLabel()
        self.deal_hint.setWordWrap(True)
        deal.addWidget(self.deal_hint)
        form = QFormLayout()
        self.face_up = QLineEdit()
        self.face_up.setPlaceholderText(tr("e.g. 14 27"))
        self.face_up.returnPressed.connect(self.submit_deal)
        form.addRow(tr("&Face-up cards"), self.face_up)
        self.leader = QComboBox()
        form.addRow(tr("&Police car (plays first)"), self.leader)
        deal.addLayout(form)
        self.deal_button = QPushButton(tr("&Deal"))
        self.deal_button.clicked.connect(self.submit_deal)
        deal.addWidget(self.deal_button)

        self.trick_panel, trick, _ = self._panel(tr("Cards played to the trick, in order"))
        self.trick_rows = CardRows(self.submit_trick)
        trick.addWidget(self.trick_rows)
        self.trick_button = QPushButton(tr("&Play the trick"))
        self.trick_button.clicked.connect(self.submit_trick)
        trick.addWidget(self.trick_button)

        self.guess_panel, guess, self.guess_heading = self._panel("")
        guess.addWidget(QLabel(tr("Click a space on the board, or type F1-F3, C1-C9, R11-R39.")))
        self.guess_space = QLineEdit()
        self.guess_space.setPlaceholderText(tr("space, e.g. C5"))
        self.guess_space.returnPressed.connect(self.submit_guess)
        guess.addWidget(self.guess_space)
        self.guess_button = QPushButton(tr("&Guess"))
        self.guess_button.clicked.connect(self.submit_guess)
        guess.addWidget(self.guess_button)

        self.help_panel, help_layout, self.help_heading = self._panel("")
        help_form = QFormLayout()
        self.help_kind = QComboBox()
        self.help_kind.currentIndexChanged.connect(self._help_kind_changed)
        help_form.addRow(tr("&Help"), self.help_kind)
        self.help_player = QComboBox()
        help_form.addRow(tr("&Other player"), self.help_player)
        self.move_from = QLineEdit()
        self.move_from.setPlaceholderText(tr("space, e.g. C5"))
        help_form.addRow(tr("Move &from"), self.move_from)
        self.move_to = QLineEdit()
        self.move_to.setPlaceholderText(tr("space, e.g. R23"))
        self.move_to.returnPressed.connect(self.submit_help)
        help_form.addRow(tr("Move &to"), self.move_to)
        self.help_form = help_form
        help_layout.addLayout(help_form)
        self.help_button = QPushButton(tr("Take the help (Ctrl+Enter)"))
        self.help_button.clicked.connect(self.submit_help)
        help_layout.addWidget(self.help_button)

        self.last_panel, last, _ = self._panel(tr("The last card goes straight into the hotel"))
        self.last_rows = CardRows(self.submit_last)
        last.addWidget(self.last_rows)
        self.last_button = QPushButton(tr("&Place the last cards"))
        self.last_button.clicked.connect(self.submit_last)
        last.addWidget(self.last_button)

        self.reveal_panel, reveal, _ = self._panel(tr("Turn over the murderer's card"))
        self.dark_label = QLabel()
        self.dark_label.setWordWrap(True)
        reveal.addWidget(self.dark_label)
        self.hidden_card = QLineEdit()
        self.hidden_card.setMaxLength(2)
        self.hidden_card.returnPressed.connect(self.submit_reveal)
        reveal_form = QFormLayout()
        reveal_form.addRow(tr("&Hidden card"), self.hidden_card)
        reveal.addLayout(reveal_form)
        self.reveal_button = QPushButton(tr("Sc&ore the investigation"))
        self.reveal_button.clicked.connect(self.submit_reveal)
        reveal.addWidget(self.reveal_button)

        self.over_panel, over, _ = self._panel(tr("The game is over"))
        self.result = QLabel()
        self.result.setObjectName("title")
        self.result.setWordWrap(True)
        over.addWidget(self.result)

    # -- game in play ---------------------------------------------------------

    @property
    def game(self) -> CrimeHotelGame:
        """The engine of the game in play."""
        return self.holder.engine

    def show_setup(self) -> None:
        """Show the new-game form, listing saved games that can be resumed."""
        self.holder.replace(None)
        self.setup.set_saved_games(unfinished_games(KIND, _is_over))
        self.stack.setCurrentWidget(self.setup)
        self.setup.name_edits[0].setFocus()

    def start_game(self, event: dict[str, Any]) -> None:
        """Start a game from the set-up's ``new_game`` event (journalled)."""
        title = tr("Crime Hotel: {players}", players=", ".join(event["players"]))
        try:
            session = CardGameSession.start(KIND, CrimeHotelGame, event, title)
        except TowerearError as exc:
            self.setup_error(exc)
            return
        self._play(session)

    def resume_game(self, game_id: str) -> None:
        """Resume a saved game."""
        SessionHolder.release(game_id)
        try:
            session = CardGameSession.resume(KIND, CrimeHotelGame, game_id)
        except TowerearError as exc:
            self.setup_error(exc)
            return
        self._play(session)

    def setup_error(self, exc: TowerearError) -> None:
        """Show a refused set-up on the set-up form."""
        self.setup.error.show_error(exc)

    def _play(self, session: CardGameSession[CrimeHotelGame]) -> None:
        self.holder.replace(session)
        self.setup.error.clear_error()
        self.error.clear_error()
        self.stack.setCurrentWidget(self.play)
        self.refresh()

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

    # -- entries --------------------------------------------------------------

    def _try(self, build: Callable[[], dict[str, Any]]) -> None:
        try:
            event = build()
        except TowerearError as exc:
            self.error.show_error(exc)
            return
        self.send(event)

    def submit_deal(self) -> None:
        """Start the next investigation with the typed face-up cards."""
        self._try(
            lambda: {
                "type": "deal",
                "face_up": parse_rooms(self.face_up.text()),
                "leader": self.leader.currentText(),
            }
        )

    def submit_trick(self) -> None:
        """Record the trick typed in the card fields."""
        self._try(lambda: {"type": "trick", "cards": self.trick_rows.cards()})

    def submit_guess(self, space: str | None = None) -> None:
        """Place the due player's detective on the typed (or clicked) space."""
        code = space if space is not None else self.guess_space.text()
        player = self.game.pending[0].player if self.game.pending else ""
        self.send({"type": "guess", "player": player, "space": code})

    def submit_help(self) -> None:
        """Send the due player's detective to the chosen police-station help."""
        player = self.game.pending[0].player if self.game.pending else ""
        kind = str(self.help_kind.currentData())
        event: dict[str, Any] = {"type": "help", "player": player, "help": kind}
        if kind == "move":
            event.update({"from": self.move_from.text(), "to": self.move_to.text()})
        elif kind in ("swap", "look"):
            event["with" if kind == "swap" else "at"] = self.help_player.currentText()
        self.send(event)

    def submit_last(self) -> None:
        """Place every player's last card."""
        self._try(lambda: {"type": "last_cards", "cards": self.last_rows.cards()})

    def submit_reveal(self) -> None:
        """Check the hidden card against the dark room and score."""
        self._try(
            lambda: {
                "type": "reveal",
                "card": parse_room(self.hidden_card.text(), tr("the murderer")),
            }
        )

    def confirm_step(self) -> None:
        """Press the current step's button (Ctrl+Enter), e.g. after choosing a help."""
        buttons = {
            self.deal_panel: self.deal_button,
            self.trick_panel: self.trick_button,
            self.guess_panel: self.guess_button,
            self.help_panel: self.help_button,
            self.last_panel: self.last_button,
            self.reveal_panel: self.reveal_button,
        }
        current = self.panels.currentWidget()
        button = buttons.get(current) if current is not None else None
        if self.stack.currentWidget() is self.play and button is not None:
            button.click()

    def space_clicked(self, code: str) -> None:
        """A board space was clicked: guess there, or use it for a move."""
        if self.holder.session is None or self.game.phase != "place":
            return
        if self.panels.currentWidget() is self.guess_panel:
            self.submit_guess(code)
        elif self.help_kind.currentData() != "move" and self.game.rules.middle_may_guess:
            self.submit_guess(code)
        elif self.help_kind.currentData() == "move":
            target = self.move_from if not self.move_from.text() else self.move_to
            target.setText(code)

    def _help_kind_changed(self) -> None:
        kind = self.help_kind.currentData()
        self.help_form.setRowVisible(self.help_player, kind in ("swap", "look"))
        self.help_form.setRowVisible(self.move_from, kind == "move")
        self.help_form.setRowVisible(self.move_to, kind == "move")

    # -- drawing --------------------------------------------------------------

    def refresh(self) -> None:
        """Redraw everything from the engine's state."""
        game = self.game
        inv = game.current
        self.undo_button.setEnabled(
            self.holder.session is not None and self.holder.session.can_undo()
        )
        placed = inv.placed if inv else {}
        detectives: dict[str, list[str]] = {}
        for detective in inv.detectives if inv else []:
            detectives.setdefault(detective.space.code, []).append(detective.player)
        murderer = inv.dark_room if inv and inv.scores is not None else None
        self.board.show_state(placed, list(game.current_trick.values()), detectives, murderer)
        self._show_panel()
        self._show_candidates()
        self._show_scores()

    def _status_prefix(self) -> str:
        inv = self.game.current
        if inv is None:
            return ""
        trick = min(len(inv.tricks) + (0 if self.game.phase == "place" else 1), 5)
        return tr(
            "Investigation {n} of {total}, trick {trick}: ",
            n=inv.number,
            total=INVESTIGATIONS,
            trick=trick,
        )

    def _show_panel(self) -> None:
        game = self.game
        phase = game.phase
        prefix = self._status_prefix()
        if phase == "deal":
            number = len(game.investigations) + 1
            count = FACE_UP_CARDS[len(game.players)]
            self.status.setText(
                tr(
                    "Investigation {n}: deal 6 cards each, one hidden under the police car.",
                    n=number,
                )
            )
            hint = tr("Enter the {count} cards laid face up on their windows.", count=count)
            last = game.current
            if last is not None and last.dark_room is not None:
                hint = (
                    tr(
                        "Investigation {n}: the murderer was in room {room}.",
                        n=last.number,
                        room=last.dark_room,
                    )
                    + "\n"
                    + hint
                )
            self.deal_hint.setText(hint)
            self.leader.clear()
            self.leader.addItems(list(game.players))
            self.leader.setCurrentText(game.police_car)
            self.face_up.clear()
            self._focus(self.deal_panel, self.face_up)
        elif phase == "trick":
            order = game.trick_order()
            self.status.setText(prefix + tr("{player} leads the trick.", player=order[0]))
            self.trick_rows.show_players(order)
            self.panels.setCurrentWidget(self.trick_panel)
            self.trick_rows.focus_first()
        elif phase == "place":
            self._show_placement(prefix)
        elif phase == "last_cards":
            self.status.setText(prefix + tr("Five tricks played: everyone places their last card."))
            self.last_rows.show_players(game.players)
            self.panels.setCurrentWidget(self.last_panel)
            self.last_rows.focus_first()
        elif phase == "reveal":
            inv = game.current
            assert inv is not None
            self.status.setText(prefix + tr("Room {room} stays dark.", room=inv.dark_room))
            self.dark_label.setText(tr("Turn the hidden card over and type its number."))
            self.hidden_card.clear()
            self._focus(self.reveal_panel, self.hidden_card)
        else:
            self.status.setText(tr("Three investigations played."))
            self.result.setText(winner_text(game.winners()))
            self.panels.setCurrentWidget(self.over_panel)
            self.export.html_button.setFocus()

    def _show_placement(self, prefix: str) -> None:
        game = self.game
        due = game.pending[0]
        reason = {
            "highest": tr("highest card"),
            "lowest": tr("lowest card"),
            "middle": tr("middle card"),
        }[due.reason]
        may_guess = due.role == "guess" or game.rules.middle_may_guess
        if due.role == "guess":
            text = tr(
                "{player} ({reason}, {card}) places the card and must guess.",
                player=due.player,
                reason=reason,
                card=due.card,
            )
        else:
            text = tr(
                "{player} ({reason}, {card}) places the card and goes to the police station.",
                player=due.player,
                reason=reason,
                card=due.card,
            )
        self.status.setText(prefix + text)
        if due.role == "guess":
            self.guess_heading.setText(tr("{player}: guess", player=due.player))
            self.guess_space.clear()
            self._focus(self.guess_panel, self.guess_space)
            return
        inv = game.current
        assert inv is not None
        self.help_heading.setText(tr("{player}: police station", player=due.player))
        self.help_kind.blockSignals(True)
        self.help_kind.clear()
        for kind in HELP_KINDS:
            free = game.rules.spaces_for(kind) - inv.help_taken(kind)
            if free > 0:
                self.help_kind.addItem(
                    tr("{help} ({free} free)", help=help_name(kind), free=free), kind
                )
        self.help_kind.addItem(help_name("none"), "none")
        self.help_kind.blockSignals(False)
        self.help_player.clear()
        self.help_player.addItems([p for p in game.players if p != due.player])
        self.move_from.clear()
        self.move_to.clear()
        self._help_kind_changed()
        if may_guess:
            # A middle player allowed to guess can still click a space.
            self.help_heading.setText(
                self.help_heading.text() + "  " + tr("(or click a space to guess)")
            )
        self._focus(self.help_panel, self.help_kind)

    def _focus(self, panel: QWidget, widget: QWidget) -> None:
        self.panels.setCurrentWidget(panel)
        widget.setFocus()

    def _show_candidates(self) -> None:
        inv = self.game.current
        candidates = self.game.candidates()
        rooms = " ".join(str(r) for r in candidates)
        if inv is not None and inv.scores is not None:
            self.candidates.setText(
                tr(
                    "Investigation {n}: the murderer was in room {room}.",
                    n=inv.number,
                    room=inv.dark_room,
                )
            )
        else:
            self.candidates.setText(
                tr(
                    "Rooms the murderer can still be in ({n}): {rooms}",
                    n=len(candidates),
                    rooms=rooms,
                )
            )
        breaches = [
            tr(
                "{player} did not follow floor {floor} but later played {card}",
                player=v.player,
                floor=v.floor,
                card=v.card,
            )
            for v in (inv.violations if inv else [])
        ]
        self.warnings.setText("\n".join(breaches))

    def _show_scores(self) -> None:
        game = self.game
        headers = [tr("Investigation {n}", n=n) for n in range(1, INVESTIGATIONS + 1)]
        headers.append(tr("Total"))
        self.scores.setColumnCount(len(headers))
        self.scores.setRowCount(len(game.players))
        self.scores.setHorizontalHeaderLabels(headers)
        self.scores.setVerticalHeaderLabels(list(game.players))
        totals = game.totals()
        winners = set(game.winners()) if game.phase == "over" else set()
        for row, player in enumerate(game.players):
            values = []
            for index in range(INVESTIGATIONS):
                inv = game.investigations[index] if index < len(game.investigations) else None
                score = (inv.scores or {}).get(player) if inv else None
                values.append(
                    ""
                    if score is None
                    else (
                        f"{score.total}" if not score.bonus else f"{score.total} (+{score.bonus})"
                    )
                )
            values.append(str(totals[player]))
            for column, value in enumerate(values):
                item = QTableWidgetItem(value)
                item.setTextAlignment(Qt.AlignmentFlag.AlignCenter)
                if player in winners:
                    item.setBackground(QBrush(QColor("#fff3b0")))
                self.scores.setItem(row, column, item)

    def _export_data(self) -> tuple[dict[str, Any], list[dict[str, Any]], str]:
        session = self.holder.session
        if session is None:
            return {}, [], "crime-hotel"
        stem = f"crime-hotel-{session.game_id}" if session.game_id else "crime-hotel"
        return session.engine.summary(), list(session.engine.events), stem


def winner_text(winners: tuple[str, ...]) -> str:
    """Who won, or who tied."""
    if len(winners) == 1:
        return tr("{player} wins!", player=winners[0])
    return tr("Tie: {players} share the win.", players=", ".join(winners))
