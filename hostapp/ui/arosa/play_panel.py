"""The game screen: the called-out throw or the turn prompt, the open floor, the sheet.

Nothing here says where a thrown cube landed: the prompt says "landed", the
throw log names colours only, and the floor keypad of manual mode shows no
trace of what was entered.
"""

from __future__ import annotations

from collections.abc import Callable

from PyQt6.QtCore import Qt
from PyQt6.QtGui import QKeySequence, QShortcut
from PyQt6.QtWidgets import (
    QCheckBox,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from hostapp.games.arosa import N_FLOORS, VICTIM
from hostapp.i18n import tr
from hostapp.ui.arosa.controller import ArosaController, throw_prompt
from hostapp.ui.arosa.count_editor import CountEditor
from hostapp.ui.arosa.sheet import CubeRow, SheetWidget, floor_label
from hostapp.ui.markers import colour_name, style_sheet

PROMPT_STYLE = "font-size: 30px; font-weight: bold;"


def _clear(layout: QVBoxLayout | QHBoxLayout | QGridLayout) -> None:
    while layout.count():
        item = layout.takeAt(0)
        if item is None:
            continue
        widget = item.widget()
        if widget is not None:
            # Detach now: deferred deletion waits for the event loop, and until
            # then the old widget would still paint at its parent's corner.
            widget.setParent(None)
            widget.deleteLater()


class FloorKeypad(QWidget):
    """Eight floor buttons, 7 on top like the tower; keys 0-7 press them."""

    def __init__(self, on_floor: Callable[[int], None]) -> None:
        super().__init__()
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        self.buttons: dict[int, QPushButton] = {}
        for floor in range(N_FLOORS):
            button = QPushButton(str(floor))
            button.setAccessibleName(floor_label(floor))
            button.setMinimumSize(56, 44)
            button.setStyleSheet("font-size: 18px; font-weight: bold;")
            button.setShortcut(QKeySequence(str(floor)))
            button.clicked.connect(lambda _=False, f=floor: on_floor(f))
            self.buttons[floor] = button
            grid.addWidget(button, 0, floor)


class PlayPanel(QWidget):
    """The screen a game is played on.

    Parameters
    ----------
    controller
        The game; the panel redraws on its ``changed`` signal.
    on_unlock_live
        Asks to unlock the live view (with its warning).
    """

    def __init__(self, controller: ArosaController, on_unlock_live: Callable[[], None]) -> None:
        super().__init__()
        self._c = controller
        self._kind = "inspect"
        outer = QHBoxLayout(self)
        left = QVBoxLayout()
        right = QVBoxLayout()
        outer.addLayout(left, 3)
        outer.addLayout(right, 2)

        self.prompt_label = QLabel()
        self.prompt_label.setStyleSheet(PROMPT_STYLE)
        self.prompt_label.setWordWrap(True)
        self.status_label = QLabel()
        self.status_label.setStyleSheet("font-size: 18px;")
        self.status_label.setWordWrap(True)
        left.addWidget(self.prompt_label)
        left.addWidget(self.status_label)

        # Throws: the keypad (manual mode, or "enter by hand" in sensor mode).
        self.throw_box = QGroupBox(tr("Where did it land?"))
        throw_layout = QVBoxLayout(self.throw_box)
        self.throw_hint = QLabel(
            tr("Whoever enters the floor should be the only one looking at the keys.")
        )
        self.throw_hint.setWordWrap(True)
        self.throw_keypad = FloorKeypad(self._landing_by_hand)
        throw_layout.addWidget(self.throw_hint)
        throw_layout.addWidget(self.throw_keypad)
        self.by_hand_button = QPushButton(tr("&Enter this landing by hand"))
        self.by_hand_button.setCheckable(True)
        self.by_hand_button.toggled.connect(lambda _on: self.refresh())
        left.addWidget(self.by_hand_button)
        left.addWidget(self.throw_box)

        # Turn: choose the action, the suspects and the floor.
        self.turn_box = QGroupBox(tr("Your turn"))
        turn_layout = QVBoxLayout(self.turn_box)
        kinds = QHBoxLayout()
        self.kind_buttons: dict[str, QPushButton] = {}
        for kind, text in (
            ("inspect", tr("&Inspect a floor")),
            ("suspect", tr("&Suspect players")),
            ("cover", tr("&Cover your tracks")),
        ):
            button = QPushButton(text)
            button.setCheckable(True)
            button.setMinimumHeight(40)
            button.clicked.connect(lambda _=False, k=kind: self._choose_kind(k))
            self.kind_buttons[kind] = button
            kinds.addWidget(button)
        turn_layout.addLayout(kinds)
        self.suspects_row = QHBoxLayout()
        self.suspect_checks: dict[str, QCheckBox] = {}
        turn_layout.addLayout(self.suspects_row)
        self.floor_hint = QLabel(tr("Lift the tower at the floor you choose, or pick it here:"))
        turn_layout.addWidget(self.floor_hint)
        self.floor_keypad = FloorKeypad(self._controller_floor)
        turn_layout.addWidget(self.floor_keypad)
        left.addWidget(self.turn_box)

        # The open floor: what the app believes, to confirm or correct.
        self.confirm_box = QGroupBox()
        confirm_layout = QVBoxLayout(self.confirm_box)
        self.confirm_text = QLabel()
        self.confirm_text.setWordWrap(True)
        self.confirm_text.setStyleSheet("font-size: 18px;")
        confirm_layout.addWidget(self.confirm_text)
        self.editor_holder = QVBoxLayout()
        confirm_layout.addLayout(self.editor_holder)
        confirm_buttons = QHBoxLayout()
        self.confirm_button = QPushButton(tr("C&onfirm what lies there"))
        self.confirm_button.setMinimumHeight(44)
        self.confirm_button.setDefault(True)
        self.confirm_button.clicked.connect(self._confirm)
        self.cancel_button = QPushButton(tr("&Not this floor"))
        self.cancel_button.clicked.connect(self._c.cancel_floor)
        confirm_buttons.addWidget(self.cancel_button)
        confirm_buttons.addStretch(1)
        confirm_buttons.addWidget(self.confirm_button)
        confirm_layout.addLayout(confirm_buttons)
        left.addWidget(self.confirm_box)
        self.editor: CountEditor | None = None
        self._editor_floor: int | None = None

        self.outcome_label = QLabel()
        self.outcome_label.setWordWrap(True)
        self.outcome_label.setStyleSheet("font-size: 16px; color: #103a70;")
        left.addWidget(self.outcome_label)
        left.addWidget(QLabel(tr("What happened")))
        self.log_list = QListWidget()
        self.log_list.setAccessibleName(tr("What happened"))
        self.log_list.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        left.addWidget(self.log_list, 1)

        self.sheet_holder = QVBoxLayout()
        right.addLayout(self.sheet_holder)
        self.supply_title = QLabel(tr("Supplies"))
        self.supply_title.setStyleSheet("font-weight: bold; font-size: 16px;")
        right.addWidget(self.supply_title)
        self.supply_holder = QVBoxLayout()
        right.addLayout(self.supply_holder)
        right.addStretch(1)
        buttons = QHBoxLayout()
        self.undo_button = QPushButton(tr("&Undo last step"))
        self.undo_button.clicked.connect(self._c.undo)
        QShortcut(QKeySequence.StandardKey.Undo, self, self._c.undo)
        # Enter confirms the open floor from anywhere on the panel (a default
        # button only reacts to Enter inside dialogs).
        for key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            QShortcut(QKeySequence(key), self, self._confirm)
        self.unlock_button = QPushButton(tr("Unloc&k the live view..."))
        self.unlock_button.clicked.connect(on_unlock_live)
        buttons.addWidget(self.undo_button)
        buttons.addWidget(self.unlock_button)
        right.addLayout(buttons)

        controller.changed.connect(self.refresh)
        self.refresh()

    # -- drawing -------------------------------------------------------------

    def refresh(self) -> None:
        """Redraw from the controller's state."""
        state = self._c.state
        prompt = self._c.prompt()
        if state is None or prompt is None:
            return
        self._draw_sheet()
        request = self._c.next_throw()
        open_floor = self._c.open_floor
        throwing = request is not None and open_floor is None
        manual = self._c.mode == "manual"
        if throwing and request is not None:
            self.prompt_label.setText(throw_prompt(request, self._c.victim_thrower))
            self.prompt_label.setStyleSheet(
                PROMPT_STYLE + style_sheet(request.color) + " padding: 8px;"
            )
            queued = len(prompt.throws) - 1
            waiting = (
                tr("Enter the floor it landed on.")
                if manual
                else tr("Listening for the landing\u2026")
            )
            more = " " + tr("{n} more throw(s) queued.", n=queued) if queued else ""
            landed = tr("Landed.") + " " if self._c.just_landed else ""
            if self._c.tower_open and not manual:
                waiting = tr("Close the tower, then throw.")
            self.status_label.setText(landed + waiting + more)
        elif prompt.kind in ("act1", "act2") and prompt.player is not None:
            self.prompt_label.setStyleSheet(PROMPT_STYLE)
            if prompt.kind == "act1":
                text = tr("{who}: inspect a floor", who=colour_name(prompt.player))
            else:
                text = tr("{who}: suspect or cover your tracks", who=colour_name(prompt.player))
            self.prompt_label.setText(text)
            self.status_label.setText(tr("Landed.") if self._c.just_landed else "")
        else:
            self.prompt_label.setStyleSheet(PROMPT_STYLE)
            self.prompt_label.setText(tr("The game is over."))
            self.status_label.setText("")

        by_hand = manual or self.by_hand_button.isChecked()
        self.by_hand_button.setVisible(throwing and not manual)
        self.throw_box.setVisible(throwing and by_hand)
        self.turn_box.setVisible(prompt.kind in ("act1", "act2") and open_floor is None)
        if prompt.kind == "act1":
            self._kind = "inspect"
        elif self._kind == "inspect":
            self._kind = "suspect"
        for kind, button in self.kind_buttons.items():
            button.setVisible(kind in prompt.actions)
            button.setChecked(kind == self._kind)
        self._draw_suspects(prompt.suspectable if self._kind == "suspect" else ())
        self._draw_confirm(
            open_floor.floor if open_floor else None, open_floor.detected if open_floor else False
        )
        self.outcome_label.setText("\n".join(self._c.last_outcome))
        self.log_list.clear()
        self.log_list.addItems(self._c.public_log)
        self.log_list.scrollToBottom()

    def _players(self) -> tuple[str, ...]:
        state = self._c.state
        return () if state is None else state.players

    def _draw_sheet(self) -> None:
        state = self._c.state
        if state is None:
            return
        _clear(self.sheet_holder)
        self.sheet_widget = SheetWidget(state.players, state.sheet, state.victims_on_sheet)
        self.sheet_holder.addWidget(self.sheet_widget)
        _clear(self.supply_holder)
        self.supply_row = CubeRow(state.supply, state.players, 30)
        self.supply_holder.addWidget(self.supply_row)

    def _draw_suspects(self, suspectable: tuple[str, ...]) -> None:
        if tuple(self.suspect_checks) == suspectable:
            return
        _clear(self.suspects_row)
        self.suspect_checks = {}
        for colour in suspectable:
            check = QCheckBox(colour_name(colour))
            check.setStyleSheet("font-size: 16px;")
            self.suspect_checks[colour] = check
            self.suspects_row.addWidget(check)

    def _draw_confirm(self, floor: int | None, detected: bool) -> None:
        self.confirm_box.setVisible(floor is not None)
        if floor is None:
            self.editor = None
            self._editor_floor = None
            return
        if self._editor_floor == floor and self.editor is not None:
            return
        how = tr("The sensors saw the tower opened at this floor.") if detected else ""
        self.confirm_box.setTitle(tr("{floor} is open", floor=floor_label(floor)))
        self.confirm_text.setText(
            (how + " " if how else "")
            + tr(
                "This is what the app believes lies there."
                " Correct it to what you see, then confirm."
            )
        )
        _clear(self.editor_holder)
        colours = [*self._players(), VICTIM]
        self.editor = CountEditor(colours, self._c.belief(floor))
        self.editor_holder.addWidget(self.editor)
        self._editor_floor = floor
        self.confirm_button.setFocus()

    # -- input ---------------------------------------------------------------

    def _landing_by_hand(self, floor: int) -> None:
        self.by_hand_button.setChecked(False)
        self._c.record_landing(floor)

    def _choose_kind(self, kind: str) -> None:
        self._kind = kind
        self.refresh()

    def _controller_floor(self, floor: int) -> None:
        self._c.choose_floor(floor)

    def _confirm(self) -> None:
        if self.editor is None or not self.confirm_box.isVisible():
            return
        suspects = [c for c, box in self.suspect_checks.items() if box.isChecked()]
        if self._kind == "suspect" and not suspects:
            self._c.failed.emit(tr("Choose at least one player to suspect."))
            return
        if self._c.act(self._kind, dict(self.editor.counts), suspects=suspects):
            for box in self.suspect_checks.values():
                box.setChecked(False)
