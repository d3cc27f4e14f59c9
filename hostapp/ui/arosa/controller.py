"""The game as the screens see it: the engine's state, the ritual, the journal.

:class:`ArosaController` owns one game at a time. It binds detected landings
to the cube the app asked for, turns a lifted tower into a floor to confirm,
applies the players' confirmation through the rules engine, and journals
every step before the state moves on. Its public texts (prompts, the throw
log) never say where a cube landed.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from PyQt6.QtCore import QObject, pyqtSignal

from dsp.detect.events import Closed, Landing, Lift, Removal
from hostapp.errors import TowerearError
from hostapp.games import arosa
from hostapp.games.arosa import GameState, ThrowRequest
from hostapp.i18n import tr, tr_sentence
from hostapp.ui.arosa.belief import TowerBelief
from hostapp.ui.markers import colour_name

log = logging.getLogger(__name__)

MODES = ("sensors", "manual")
# The text of the journal note written when a player unlocks the live view
# during a game (journal data, not UI text: it stays English in every language).
UNLOCK_NOTE = "debug views unlocked"


class GameRecord(Protocol):
    """A journalled game (see :mod:`hostapp.ui.arosa.journal_adapter`)."""

    @property
    def state(self) -> GameState:
        """The state after every journalled event."""

    @property
    def meta(self) -> Mapping[str, Any]:
        """What was set up with the game (mode, who threw the victims)."""

    def events(self) -> list[arosa.Event]:
        """The events in force (undone ones left out), in order."""

    def apply(self, event: arosa.Event) -> GameState:
        """Journal ``event`` and apply it; raises ``IllegalMoveError`` if illegal."""

    def undo(self) -> GameState:
        """Take back the last event (journalled too)."""

    def note(self, text: str, data: Mapping[str, Any]) -> None:
        """Journal something that is not a game event (an unlock of the live view)."""

    def notes(self) -> list[dict[str, Any]]:
        """The notes journalled so far, oldest first (each has ``text`` and ``at``)."""

    def close(self) -> None:
        """Close the journal file."""


class GameStore(Protocol):
    """Where games are created, listed and reopened."""

    def create(self, players: Sequence[str], meta: Mapping[str, Any]) -> GameRecord:
        """Start a new journalled game."""

    def resumable(self) -> list[tuple[str, str]]:
        """``(game id, one-line description)`` of games not yet over, newest first."""

    def open(self, game_id: str) -> GameRecord:
        """Reopen a game from its journal."""


@dataclass(frozen=True)
class OpenFloor:
    """A floor the players are looking into, waiting for their confirmation.

    Attributes
    ----------
    floor
        The exposed floor.
    detected
        True when the lift was detected by the sensors, False when chosen by hand.
    """

    floor: int
    detected: bool


def throw_prompt(request: ThrowRequest, victim_thrower: str | None) -> str:
    """The sentence that calls out a throw, e.g. "Gray: throw a clue"."""
    if request.color == arosa.VICTIM:
        who = colour_name(victim_thrower) if victim_thrower else tr("The victims' thrower")
        return tr("{who}: throw a victim", who=who)
    thrower = colour_name(request.thrower) if request.thrower else ""
    if request.source == "hand":
        return tr(
            "{who}: throw back a clue ({colour})", who=thrower, colour=colour_name(request.color)
        )
    if request.thrower == request.color:
        return tr("{who}: throw a clue", who=thrower)
    return tr("{who}: throw a clue ({colour})", who=thrower, colour=colour_name(request.color))


def landed_line(color: str) -> str:
    """The throw log's line for a landing: the colour, never the floor."""
    if color == arosa.VICTIM:
        return tr("A victim landed.")
    return tr("A clue ({colour}) landed.", colour=colour_name(color))


def outcome_lines(outcome: arosa.Outcome) -> list[str]:
    """What the last action did, in sentences (all of it is public at the table)."""
    lines: list[str] = []
    if outcome.victims_found:
        lines.append(tr("Victim found! The floor is a crime scene."))
    for colour, n in outcome.to_sheet.items():
        if n:
            lines.append(tr("{who} puts {n} clue(s) on the sheet.", who=colour_name(colour), n=n))
    if outcome.removed:
        lines.append(
            tr(
                "{who} takes {n} clue(s) off the sheet.",
                who=colour_name(outcome.by),
                n=outcome.removed,
            )
        )
    for colour in outcome.wrongly_suspected:
        lines.append(tr("{who} was wrongly suspected.", who=colour_name(colour)))
    if outcome.ground_floor_case:
        lines.append(tr("Ground floor without an own clue: the suspicion fails."))
    if outcome.penalty:
        lines.append(
            tr(
                "Sloppy work: {who} throws {n} penalty clue(s).",
                who=colour_name(outcome.by),
                n=outcome.penalty,
            )
        )
    return lines


class ArosaController(QObject):
    """One game of Mord im Arosa, driven by the screens and by detection events.

    Parameters
    ----------
    store
        Creates and reopens journalled games.
    """

    changed = pyqtSignal()
    """Anything visible changed (state, prompt, log, open floor)."""
    failed = pyqtSignal(str)
    """A user action was refused; the sentence says why."""

    def __init__(self, store: GameStore, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._store = store
        self._record: GameRecord | None = None
        self.open_floor: OpenFloor | None = None
        self.public_log: list[str] = []
        self.last_outcome: list[str] = []
        self.tower_belief = TowerBelief()
        self.just_landed = False
        # Between a detected lift and the closing of the tower, load changes
        # are hands and modules, never a thrown cube coming to rest.
        self.tower_open = False
        self._closed_at_s = -math.inf

    # -- the game's life ---------------------------------------------------

    @property
    def running(self) -> bool:
        """A game is loaded and not over."""
        return self._record is not None and not self._record.state.is_over

    @property
    def state(self) -> GameState | None:
        """The current state, or ``None`` with no game loaded."""
        return None if self._record is None else self._record.state

    @property
    def mode(self) -> str:
        """``"sensors"`` (landings detected) or ``"manual"`` (entered by hand)."""
        if self._record is None:
            return "manual"
        return str(self._record.meta.get("mode", "sensors"))

    @property
    def victim_thrower(self) -> str | None:
        """Who throws the victims in the prologue."""
        if self._record is None:
            return None
        value = self._record.meta.get("victim_thrower")
        return str(value) if value else None

    @property
    def store(self) -> GameStore:
        """The game store (to list resumable games)."""
        return self._store

    def new_game(self, players: Sequence[str], victim_thrower: str, mode: str) -> None:
        """Start a journalled game; raises a :class:`TowerearError` for a bad setup."""
        if mode not in MODES:
            raise TowerearError(f"unknown game mode {mode!r}")
        self.close()
        self._record = self._store.create(
            list(players), {"mode": mode, "victim_thrower": victim_thrower}
        )
        self.tower_belief = TowerBelief()
        self.public_log = [tr("New game: {n} players.", n=len(players))]
        self.changed.emit()

    def resume(self, game_id: str) -> None:
        """Reopen a game from its journal, exactly as it was."""
        self.close()
        self._record = self._store.open(game_id)
        self.tower_belief = TowerBelief.from_events(self._record.events())
        self.public_log = [tr("Game resumed.")]
        self.changed.emit()

    def close(self) -> None:
        """Put the current game away (it stays in its journal)."""
        if self._record is not None:
            self._record.close()
        self._record = None
        self.open_floor = None
        self.last_outcome = []
        self.public_log = []
        self.just_landed = False
        self.changed.emit()

    # -- what to ask for ---------------------------------------------------

    def prompt(self) -> arosa.Prompt | None:
        """The engine's prompt for the current state."""
        state = self.state
        return None if state is None else arosa.prompt(state)

    def next_throw(self) -> ThrowRequest | None:
        """The throw being called out, or ``None`` when no throw is owed."""
        p = self.prompt()
        if p is None or p.kind != "throw" or not p.throws:
            return None
        return p.throws[0]

    def belief(self, floor: int) -> dict[str, int]:
        """What the app believes lies on ``floor``: ``{colour: cubes}`` (red included)."""
        state = self.state
        if state is None:
            return {}
        return self.tower_belief.propose(floor, [*state.players, arosa.VICTIM])

    # -- throws ------------------------------------------------------------

    def record_landing(self, floor: int, cubes: int = 1, detection: object | None = None) -> None:
        """Bind a landing on ``floor`` to the next ``cubes`` requested throws.

        ``detection`` is the pipeline's landing event (None when entered by hand).
        """
        for _ in range(cubes):
            request = self.next_throw()
            if request is None or self._record is None:
                log.info("landing with no throw owed; ignored")
                return
            if not self._apply(arosa.Throw(request.color, floor)):
                return
            self.tower_belief.thrown(request.color, detection, floor)
            self.public_log.append(landed_line(request.color))
            self.just_landed = True
        self.changed.emit()

    def on_detection_events(self, events: list[Any]) -> None:
        """Take the pipeline's events (sensor mode only)."""
        if self.mode != "sensors" or not self.running:
            return
        for event in events:
            if isinstance(event, Landing) and event.knocked_down_to is not None:
                # A suspected stop weighed late: the cube thrown before stayed
                # on this floor; no throw, and the landing below was the
                # knocked cube's. The game's floor for that throw stands (the
                # players correct it when they open a level).
                if not self.tower_open:
                    self.tower_belief.stop_weighed(event)
            elif isinstance(event, Landing) and event.knocked_from is None:
                # A cube that came to rest before the close was no throw. The
                # modules' jolt as they are set back is the detector's to tell
                # from a cube (docs/detection.md, "Handled, not thrown"); held
                # back 0.6 s here too, cubes thrown back sooner were lost to
                # the game (cross-check games and long sessions: 183 of the
                # 186 landings told within 0.6 s of a close were right).
                settled = event.t >= self._closed_at_s
                if self.next_throw() is not None and self.open_floor is None:
                    if not self.tower_open and settled:
                        self.record_landing(int(event.floor), max(1, int(event.cubes)), event)
            elif isinstance(event, Landing | Removal) and not self.tower_open:
                # a knocked-down cube, or cubes leaving a closed level: the
                # tower model binds them to the next throw's drop
                self.tower_belief.note(event)
            elif isinstance(event, Closed):
                self.tower_open = False
                self._closed_at_s = event.t
                self.changed.emit()
            elif isinstance(event, Lift):
                self.tower_open = True
                p = self.prompt()
                if p is not None and p.kind in ("act1", "act2") and self.open_floor is None:
                    self.open_floor = OpenFloor(int(event.exposed), detected=True)
                    self.changed.emit()

    # -- actions -----------------------------------------------------------

    def choose_floor(self, floor: int) -> None:
        """The players say which floor they opened (or correct the detected one)."""
        self.open_floor = OpenFloor(floor, detected=False)
        self.changed.emit()

    def cancel_floor(self) -> None:
        """Close the confirmation panel without an action."""
        self.open_floor = None
        self.changed.emit()

    def act(
        self,
        kind: str,
        found: Mapping[str, int],
        suspects: Sequence[str] = (),
        remove: int | None = None,
    ) -> bool:
        """Apply the investigator's action on the open floor with what was found there.

        Returns
        -------
        bool
            True if applied; False if refused (the reason goes to :attr:`failed`).
        """
        state = self.state
        if state is None or self.open_floor is None:
            return False
        floor = self.open_floor.floor
        by = state.investigator
        found_counts = {c: int(n) for c, n in found.items()}
        event: arosa.Event
        if kind == "inspect":
            event = arosa.Inspect(by, floor, found=found_counts)
        elif kind == "suspect":
            event = arosa.Suspect(by, tuple(suspects), floor, found=found_counts)
        elif kind == "cover":
            event = arosa.Cover(by, floor, remove, found=found_counts)
        else:
            self.failed.emit(tr("Unknown action."))
            return False
        if not self._apply(event):
            return False
        self.tower_belief.confirmed(floor, found_counts)
        self.just_landed = False
        self.open_floor = None
        after = self.state
        self.last_outcome = outcome_lines(after.last) if after and after.last else []
        self.public_log.append(self._action_line(kind, by, floor, suspects))
        self.public_log.extend(self.last_outcome)
        if after is not None and after.is_over:
            self.public_log.append(tr("The game is over."))
        self.changed.emit()
        return True

    def undo(self) -> None:
        """Take back the last event (throw or action)."""
        if self._record is None:
            return
        try:
            self._record.undo()
        except TowerearError as exc:
            self.failed.emit(tr_sentence(str(exc)))
            return
        self.tower_belief = TowerBelief.from_events(self._record.events())
        self.open_floor = None
        self.last_outcome = []
        self.just_landed = False
        self.public_log.append(tr("The last step was undone."))
        self.changed.emit()

    def note_unlock(self) -> None:
        """Journal that a player unlocked the live view during the game."""
        if self._record is not None and self.running:
            try:
                self._record.note(UNLOCK_NOTE, {"do": "debug_unlock"})
            except TowerearError as exc:
                self.failed.emit(tr_sentence(str(exc)))
            self.public_log.append(tr("The live view was unlocked."))
            self.changed.emit()

    def notes(self) -> list[dict[str, Any]]:
        """The game's journal notes (unlocks of the live view): for the reveal."""
        return [] if self._record is None else self._record.notes()

    def throw_history(self) -> list[tuple[str, int]]:
        """``(colour, floor)`` of every throw in force: for the reveal only."""
        if self._record is None:
            return []
        return [(e.color, e.floor) for e in self._record.events() if isinstance(e, arosa.Throw)]

    def scores(self) -> arosa.Scores | None:
        """Suspicion points, culprits and winners (final once the game is over)."""
        state = self.state
        return None if state is None else arosa.final_scores(state)

    def _apply(self, event: arosa.Event) -> bool:
        assert self._record is not None
        try:
            self._record.apply(event)
        except TowerearError as exc:
            self.failed.emit(tr_sentence(str(exc)))
            return False
        return True

    @staticmethod
    def _action_line(kind: str, by: str, floor: int, suspects: Sequence[str]) -> str:
        who = colour_name(by)
        place = tr("the ground floor") if floor == 0 else tr("floor {floor}", floor=floor)
        if kind == "inspect":
            return tr("{who} inspected {place}.", who=who, place=place)
        if kind == "suspect":
            names = ", ".join(colour_name(s) for s in suspects)
            return tr("{who} suspected {names} on {place}.", who=who, names=names, place=place)
        return tr("{who} covered tracks on {place}.", who=who, place=place)
