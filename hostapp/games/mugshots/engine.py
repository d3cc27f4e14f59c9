"""The mugshot game's turn helper as a fold over a list of event dicts.

The state is exactly ``replay(events)``; :meth:`MugshotsGame.apply` checks an
event fully before changing anything. The app never sees face-down cards: the
centre ("unidentified area") is a count, and a card enters the game when a
player turns it over and the table enters what it shows.

Events (JSON objects):

``{"type": "new_game", "players": [...], "rules": {...}, "names": {...},
"goals": {player: [goal, ...]}}``
    First event. ``names`` is the name book in force (copied in, so a later
    edit of the book does not change a saved game); ``goals`` only with the
    module variant.
``{"type": "draw", "card": card}``
    The active player draws a card face up into their clue area. A second
    draw before any identification is option 2 (two identifications).
``{"type": "identify", "clue": type, "card": card, "own": 0 | 1}``
    Name a clue type and turn over a centre card showing ``card``; ``own``
    says which drawn card it is compared with (option 2 only).
``{"type": "challenge", "card": card}``
    Turn over one more centre card for a challenge.
``{"type": "collect"}``
    End a challenge after at least four cards and archive them all.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from hostapp.games.mugshots.cards import (
    CLUE_TYPES,
    Card,
    ClueType,
    MugshotsError,
    NameBook,
    matching_clues,
)
from hostapp.games.mugshots.goals import Goal
from hostapp.i18n import tr

Step = Literal["draw", "choose", "identify2", "challenge", "over"]
Event = Mapping[str, Any]


@dataclass(frozen=True)
class MugshotsRules:
    """Settings where the rule text can be read two ways (docs/rules-mugshots.md).

    Attributes
    ----------
    strict_single_match
        False: an identification succeeds when the named clue type matches
        (matches in other types do not count, for or against). True: it
        also fails when any clue type that was not named matches.
    archive_to_win
        Archived cards that end the game at once (10 in the rule text).
    centre_size
        Face-down cards the centre is refilled to after each turn (4).
    challenge_minimum
        Cards a challenge must turn over before collecting (4).
    goals
        Whether the goal-card module is played.
    """

    strict_single_match: bool = False
    archive_to_win: int = 10
    centre_size: int = 4
    challenge_minimum: int = 4
    goals: bool = False

    def to_dict(self) -> dict[str, Any]:
        """The settings as JSON-ready data."""
        return {
            "strict_single_match": self.strict_single_match,
            "archive_to_win": self.archive_to_win,
            "centre_size": self.centre_size,
            "challenge_minimum": self.challenge_minimum,
            "goals": self.goals,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> MugshotsRules:
        """Settings from a dict; missing keys take their defaults."""
        if data is None:
            data = {}
        if not isinstance(data, Mapping):
            raise MugshotsError(tr("The mugshot-game settings must be a set of named values."))
        data = dict(data)
        defaults = cls().to_dict()
        unknown = set(data) - set(defaults)
        if unknown:
            raise MugshotsError(
                tr("Unknown mugshot-game setting {value!r}.", value=sorted(unknown)[0])
            )
        merged = {**defaults, **data}
        for key in ("archive_to_win", "centre_size", "challenge_minimum"):
            value = merged[key]
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 50:
                raise MugshotsError(
                    tr("The setting {key} must be a whole number from 1 to 50.", key=key)
                )
        if merged["challenge_minimum"] > merged["centre_size"]:
            raise MugshotsError(tr("A challenge cannot need more cards than the centre holds."))
        for key in ("strict_single_match", "goals"):
            if not isinstance(merged[key], bool):
                raise MugshotsError(tr("The setting {key} must be true or false.", key=key))
        return cls(
            strict_single_match=merged["strict_single_match"],
            archive_to_win=merged["archive_to_win"],
            centre_size=merged["centre_size"],
            challenge_minimum=merged["challenge_minimum"],
            goals=merged["goals"],
        )


@dataclass(frozen=True)
class TurnResult:
    """How one turn ended, for the table's log."""

    player: str
    action: Literal["identify", "double", "challenge"]
    success: bool
    cards_won: int
    reason: str


@dataclass
class _Turn:
    drawn: list[Card] = field(default_factory=list)
    revealed: list[Card] = field(default_factory=list)
    used_own: list[int] = field(default_factory=list)


class MugshotsGame:
    """A game of the animal mugshot game built from its events."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.players: tuple[str, ...] = ()
        self.rules = MugshotsRules()
        self.book: NameBook | None = None
        self.goals: dict[str, tuple[Goal, ...]] = {}
        self.archive: dict[str, list[Card]] = {}
        self.centre = 0
        self.active = 0
        self.step: Step = "draw"
        self.turn = _Turn()
        self.results: list[TurnResult] = []

    @classmethod
    def replay(cls, events: Iterable[Event]) -> MugshotsGame:
        """The game after applying ``events`` in order."""
        game = cls()
        for event in events:
            game.apply(event)
        return game

    def apply(self, event: Event) -> None:
        """Validate ``event`` and record it.

        Raises
        ------
        MugshotsError
            With one sentence naming the broken rule; the state is unchanged.
        """
        if not isinstance(event, Mapping):
            raise MugshotsError(tr("A mugshot-game event must be a JSON object."))
        kind = event.get("type")
        if not self.events and kind != "new_game":
            raise MugshotsError(tr("A mugshot game must start with a new_game event."))
        handlers = {
            "new_game": self._new_game,
            "draw": self._draw,
            "identify": self._identify,
            "challenge": self._challenge,
            "collect": self._collect,
        }
        handler = handlers.get(str(kind))
        if handler is None:
            raise MugshotsError(tr("Unknown mugshot-game event type {kind!r}.", kind=kind))
        handler(event)
        self.events.append(dict(event))

    # -- reading --------------------------------------------------------------

    @property
    def active_player(self) -> str:
        """Whose turn it is."""
        return self.players[self.active]

    @property
    def clue_area(self) -> tuple[Card, ...]:
        """The active player's face-up cards this turn."""
        return tuple(self.turn.drawn)

    @property
    def revealed(self) -> tuple[Card, ...]:
        """Centre cards turned over this turn (kept face up while the turn lasts)."""
        return tuple(self.turn.revealed)

    @property
    def face_down(self) -> int:
        """Centre cards still face down and available to turn over this turn."""
        return self.centre - len(self.turn.revealed)

    def score(self, player: str) -> int:
        """One point per archived card plus the player's goal-card points."""
        assert self.book is not None
        goals = self.goals.get(player, ())
        bonus = sum(goal.score(self.archive[player], self.book) for goal in goals)
        return len(self.archive[player]) + bonus

    def scores(self) -> dict[str, int]:
        """Every player's score."""
        return {p: self.score(p) for p in self.players}

    def winners(self) -> tuple[str, ...]:
        """The player(s) with the most points; several on a tie."""
        scores = self.scores()
        if not scores:
            return ()
        best = max(scores.values())
        return tuple(p for p in self.players if scores[p] == best)

    def summary(self) -> dict[str, Any]:
        """A JSON-ready account of the game for export and score sheets."""
        return {
            "game": "mugshots",
            "players": list(self.players),
            "rules": self.rules.to_dict(),
            "over": self.step == "over",
            "archive": {p: [c.to_dict() for c in self.archive[p]] for p in self.players},
            "goals": {p: [g.to_dict() for g in gs] for p, gs in self.goals.items()},
            "turns": [
                {
                    "player": r.player,
                    "action": r.action,
                    "success": r.success,
                    "cards_won": r.cards_won,
                    "reason": r.reason,
                }
                for r in self.results
            ],
            "scores": self.scores(),
            "winners": list(self.winners()) if self.step == "over" else [],
        }

    # -- handlers -------------------------------------------------------------

    def _card(self, event: Event) -> Card:
        assert self.book is not None
        return Card.from_dict(event.get("card"), self.book)

    def _need_step(self, *steps: Step, doing: str) -> None:
        if self.step not in steps:
            raise MugshotsError(
                tr(
                    "{active_player} cannot {doing} now (step: {step}).",
                    active_player=self.active_player,
                    doing=tr(doing),
                    step=tr(self.step),
                )
            )

    def _new_game(self, event: Event) -> None:
        if self.events:
            raise MugshotsError(tr("This game has already started."))
        players = event.get("players")
        if not isinstance(players, list) or not all(isinstance(p, str) for p in players):
            raise MugshotsError(tr("Players must be a list of names."))
        names = tuple(p.strip() for p in players)
        if not 2 <= len(names) <= 8:
            raise MugshotsError(tr("The mugshot game is scored here for 2 to 8 players."))
        if any(not n for n in names) or len(set(names)) != len(names):
            raise MugshotsError(tr("Every player needs a name of their own."))
        rules = MugshotsRules.from_dict(event.get("rules"))
        book = NameBook.from_dict(event.get("names"))
        goals_raw = event.get("goals") or {}
        if not isinstance(goals_raw, Mapping) or set(goals_raw) - set(names):
            raise MugshotsError(tr("Goals must be given per player of this game."))
        if goals_raw and not rules.goals:
            raise MugshotsError(tr("Goal cards are only used in the module variant."))
        goals = {}
        for player, items in goals_raw.items():
            if not isinstance(items, list):
                raise MugshotsError(tr("The goals of {player} must be a list.", player=player))
            goals[player] = tuple(Goal.from_dict(item, book) for item in items)
        self.players, self.rules, self.book, self.goals = names, rules, book, goals
        self.archive = {p: [] for p in names}
        # "Zieht verdeckt vier Fahndungsfotos und legt sie in die Mitte des Tisches."
        self.centre = rules.centre_size
        self.step = "draw"

    def _draw(self, event: Event) -> None:
        self._need_step("draw", "choose", doing="draw a card")
        card = self._card(event)
        self.turn.drawn.append(card)
        self.step = "choose" if self.step == "draw" else "identify2"

    def _identify(self, event: Event) -> None:
        self._need_step("choose", "identify2", doing="identify")
        assert self.book is not None
        clue = event.get("clue")
        if clue not in CLUE_TYPES:
            known = ", ".join(CLUE_TYPES)
            raise MugshotsError(
                tr("{clue!r} is not a clue type; name one of {known}.", clue=clue, known=known)
            )
        own_index = event.get("own", self._first_unused_own())
        if own_index not in range(len(self.turn.drawn)) or own_index in self.turn.used_own:
            raise MugshotsError(tr("Each drawn card is compared with one centre card only."))
        if self.face_down < 1:
            raise MugshotsError(tr("No face-down card is left in the centre."))
        revealed = self._card(event)
        own = self.turn.drawn[own_index]
        success, reason = self.judge(own, revealed, clue)
        self.turn.used_own.append(own_index)
        self.turn.revealed.append(revealed)
        double = len(self.turn.drawn) == 2
        if not success:
            self._end_turn(
                TurnResult(self.active_player, "double" if double else "identify", False, 0, reason)
            )
        elif len(self.turn.used_own) == len(self.turn.drawn):
            won = 2 * len(self.turn.drawn)
            self._win_turn(
                TurnResult(
                    self.active_player, "double" if double else "identify", True, won, reason
                )
            )

    def _first_unused_own(self) -> int:
        unused = [i for i in range(len(self.turn.drawn)) if i not in self.turn.used_own]
        return unused[0] if unused else -1

    def judge(self, own: Card, revealed: Card, clue: ClueType) -> tuple[bool, str]:
        """Whether an identification naming ``clue`` succeeds, and why.

        "Gibt es keine Übereinstimmung oder gibt es eine in einer Hinweisart, die
        nicht explizit angesagt wurde, ist die Identifizierung gescheitert."
        """
        assert self.book is not None
        matches = matching_clues(own, revealed, self.book)
        if clue not in matches:
            if matches:
                return False, tr(
                    "match only in an unnamed clue ({clues})",
                    clues=", ".join(tr(m) for m in matches),
                )
            return False, "no match"
        others = [m for m in matches if m != clue]
        if others and self.rules.strict_single_match:
            return False, tr(
                "also matches in an unnamed clue ({clues})", clues=", ".join(tr(o) for o in others)
            )
        return True, tr("{clue} matches", clue=tr(clue))

    def _challenge(self, event: Event) -> None:
        self._need_step("choose", "challenge", doing="make a challenge")
        assert self.book is not None
        if len(self.turn.drawn) != 1:
            raise MugshotsError(tr("A challenge is made with one drawn card."))
        if self.face_down < 1:
            raise MugshotsError(tr("No face-down card is left; collect the cards turned over."))
        revealed = self._card(event)
        own = self.turn.drawn[0]
        self.turn.revealed.append(revealed)
        self.step = "challenge"
        # "Bei der Challenge hingegen geht es darum, KEINE Übereinstimmungen mit
        # der eigenen gezogenen Karte zu finden."
        shared = matching_clues(own, revealed, self.book)
        if shared:
            self._end_turn(
                TurnResult(
                    self.active_player,
                    "challenge",
                    False,
                    0,
                    tr(
                        "card {n} matches in {clues}",
                        n=len(self.turn.revealed),
                        clues=", ".join(tr(c) for c in shared),
                    ),
                )
            )

    def _collect(self, event: Event) -> None:
        self._need_step("challenge", doing="collect the cards")
        minimum = self.rules.challenge_minimum
        if len(self.turn.revealed) < minimum:
            raise MugshotsError(
                tr(
                    "A challenge turns over at least {minimum} cards before collecting.",
                    minimum=minimum,
                )
            )
        won = 1 + len(self.turn.revealed)
        self._win_turn(
            TurnResult(
                self.active_player,
                "challenge",
                True,
                won,
                tr("{n} cards without a match", n=len(self.turn.revealed)),
            )
        )

    def _win_turn(self, result: TurnResult) -> None:
        self.archive[self.active_player] += self.turn.drawn + self.turn.revealed
        self.centre -= len(self.turn.revealed)
        self._finish(result)

    def _end_turn(self, failed: TurnResult) -> None:
        # "Das Fahndungsfoto aus der Tischmitte wird wieder umgedreht und die eigene
        # gezogene Karte wird ebenfalls umgedreht und den anderen Karten der
        # Tischmitte hinzugefügt."
        self.centre += len(self.turn.drawn)
        self._finish(failed)

    def _finish(self, result: TurnResult) -> None:
        self.results.append(result)
        self.turn = _Turn()
        # "Liegen am Ende eines Zuges weniger als vier verdeckte Karten in der
        # Tischmitte, wird die verdeckte Auslage wieder auf vier Karten aufgefüllt."
        self.centre = max(self.centre, self.rules.centre_size)
        # "Das Spiel endet sofort, wenn eine Person mindestens 10 Fahndungsfotos
        # in ihrem Stapel besitzt."
        if len(self.archive[result.player]) >= self.rules.archive_to_win:
            self.step = "over"
            return
        self.active = (self.active + 1) % len(self.players)
        self.step = "draw"
