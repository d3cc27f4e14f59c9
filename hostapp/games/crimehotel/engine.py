"""The Crime Hotel scoring aid as a fold over a list of event dicts.

The state of a game is exactly ``replay(events)``: nothing else is stored, so
a crash-safe journal of the events is a complete save, and undo is "replay all
but the last". :meth:`CrimeHotelGame.apply` validates an event completely
before it changes anything, so a rejected event leaves the state untouched.

Events (JSON objects, ``"type"`` first):

``{"type": "new_game", "players": [...], "rules": {...}}``
    Always the first event; players in seating (clockwise) order, 3 or 4.
``{"type": "deal", "face_up": [rooms], "leader": name}``
    Starts an investigation: the cards laid face up on their windows (2 with
    four players, 8 with three); ``leader`` holds the police car and plays first
    (optional after the first investigation: the car stays where it was).
``{"type": "trick", "cards": {name: room, ...}}``
    One card from every player. Trick order runs clockwise from the leader.
``{"type": "guess", "player": name, "space": "F2" | "C5" | "R23"}``
    The player due to place puts their card in the hotel and a detective on a
    guess space.
``{"type": "help", "player": name, "help": kind, ...}``
    The player due to place puts their card in the hotel and a detective on a
    police-station space. ``kind`` is one of ``move`` (with ``"from"`` and
    ``"to"`` space codes), ``swap`` (with ``"with"``: a player), ``look`` (with
    ``"at"``: a player), ``share``, ``bonus``, or ``none`` (no free space wanted).
``{"type": "last_cards", "cards": {name: room, ...}}``
    After five tricks every player's last card goes straight into the hotel.
``{"type": "reveal", "card": room}``
    The hidden murderer card is turned over; it must be the room left dark.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal

from hostapp.games.crimehotel.hotel import (
    ROOMS,
    CrimeHotelError,
    Space,
    check_room,
    floor_of,
)
from hostapp.games.crimehotel.rules import (
    FACE_UP_CARDS,
    HELP_KINDS,
    INVESTIGATIONS,
    TRICKS_PER_INVESTIGATION,
    CrimeHotelRules,
)
from hostapp.games.crimehotel.scoring import placement_order, score_investigation
from hostapp.games.crimehotel.state import (
    Detective,
    FollowSuitViolation,
    HelpUse,
    Investigation,
    Placement,
    Role,
)
from hostapp.i18n import tr

Phase = Literal["deal", "trick", "place", "last_cards", "reveal", "over"]
Event = Mapping[str, Any]


class CrimeHotelGame:
    """A game of Crime Hotel built from its events; see the module docstring."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.players: tuple[str, ...] = ()
        self.rules = CrimeHotelRules()
        self.investigations: list[Investigation] = []
        self.phase: Phase = "deal"
        self.police_car: str = ""
        self.pending: list[Placement] = []
        self.current_trick: dict[str, int] = {}

    # -- building -------------------------------------------------------------

    @classmethod
    def replay(cls, events: Iterable[Event]) -> CrimeHotelGame:
        """The game after applying ``events`` in order."""
        game = cls()
        for event in events:
            game.apply(event)
        return game

    def apply(self, event: Event) -> None:
        """Validate ``event`` against the rules and the state, then record it.

        Raises
        ------
        CrimeHotelError
            With one sentence naming the broken rule; the state is unchanged.
        """
        if not isinstance(event, Mapping):
            raise CrimeHotelError(tr("A Crime Hotel event must be a JSON object."))
        kind = event.get("type")
        if not self.events and kind != "new_game":
            raise CrimeHotelError(tr("A Crime Hotel game must start with a new_game event."))
        handlers = {
            "new_game": self._new_game,
            "deal": self._deal,
            "trick": self._trick,
            "guess": self._guess,
            "help": self._help,
            "last_cards": self._last_cards,
            "reveal": self._reveal,
        }
        handler = handlers.get(str(kind))
        if handler is None:
            raise CrimeHotelError(tr("Unknown Crime Hotel event type {kind!r}.", kind=kind))
        handler(event)
        self.events.append(dict(event))

    # -- reading --------------------------------------------------------------

    @property
    def current(self) -> Investigation | None:
        """The investigation being played (or the last one, once the game is over)."""
        return self.investigations[-1] if self.investigations else None

    def trick_order(self) -> tuple[str, ...]:
        """Players in the order they play to the next trick (leader first)."""
        start = self.players.index(self.police_car)
        return self.players[start:] + self.players[:start]

    def seen_rooms(self) -> set[int]:
        """Every room card visible on the table in the current investigation."""
        inv = self.current
        if inv is None:
            return set()
        return set(inv.placed) | set(self.current_trick.values())

    def candidates(self) -> tuple[int, ...]:
        """Rooms that can still be the murderer's room, given every card seen."""
        seen = self.seen_rooms()
        return tuple(room for room in ROOMS if room not in seen)

    def totals(self) -> dict[str, int]:
        """Each player's points summed over the scored investigations."""
        totals = dict.fromkeys(self.players, 0)
        for inv in self.investigations:
            for player, score in (inv.scores or {}).items():
                totals[player] += score.total
        return totals

    def winners(self) -> tuple[str, ...]:
        """The player(s) with the most points; several on a tie."""
        totals = self.totals()
        if not totals:
            return ()
        best = max(totals.values())
        return tuple(p for p in self.players if totals[p] == best)

    def summary(self) -> dict[str, Any]:
        """A JSON-ready account of the game for export and score sheets."""
        return {
            "game": "crime-hotel",
            "players": list(self.players),
            "rules": self.rules.to_dict(),
            "phase": self.phase,
            "investigations": [
                {
                    "number": inv.number,
                    "face_up": list(inv.face_up),
                    "tricks": [dict(t) for t in inv.tricks],
                    "murderer_room": inv.dark_room if inv.scores is not None else None,
                    "detectives": [
                        {"player": d.player, "space": d.space.code} for d in inv.detectives
                    ],
                    "help": [
                        {"player": h.player, "help": h.kind, "detail": h.detail} for h in inv.helps
                    ],
                    "follow_suit_violations": [
                        {"player": v.player, "floor": v.floor, "card": v.card, "trick": v.trick}
                        for v in inv.violations
                    ],
                    "scores": {
                        p: {
                            "guesses": [list(g) for g in s.guesses],
                            "bonus": s.bonus,
                            "total": s.total,
                        }
                        for p, s in (inv.scores or {}).items()
                    },
                }
                for inv in self.investigations
            ],
            "totals": self.totals(),
            "winners": list(self.winners()) if self.phase == "over" else [],
        }

    # -- event handlers -------------------------------------------------------

    def _need_phase(self, *phases: Phase) -> None:
        if self.phase not in phases:
            raise CrimeHotelError(
                tr(
                    "That is not possible now: the game is at the {phase} step.",
                    phase=tr(self.phase),
                )
            )

    def _player(self, name: object) -> str:
        if name not in self.players:
            raise CrimeHotelError(tr("{name!r} is not playing in this game.", name=name))
        return str(name)

    def _new_game(self, event: Event) -> None:
        if self.events:
            raise CrimeHotelError(tr("This game has already started."))
        players = event.get("players")
        if not isinstance(players, list) or not all(isinstance(p, str) for p in players):
            raise CrimeHotelError(tr("Players must be a list of names."))
        names = tuple(p.strip() for p in players)
        if len(names) not in FACE_UP_CARDS:
            raise CrimeHotelError(tr("Crime Hotel is played by 3 or 4 players."))
        if any(not n for n in names) or len(set(names)) != len(names):
            raise CrimeHotelError(tr("Every player needs a name of their own."))
        rules = CrimeHotelRules.from_dict(event.get("rules"))
        self.players, self.rules = names, rules
        self.police_car = names[0]
        self.phase = "deal"

    def _deal(self, event: Event) -> None:
        self._need_phase("deal")
        leader = self._player(event.get("leader", self.police_car))
        face_up_raw = event.get("face_up")
        if not isinstance(face_up_raw, list):
            raise CrimeHotelError(tr("face_up must be a list of room cards."))
        face_up = tuple(check_room(c) for c in face_up_raw)
        wanted = FACE_UP_CARDS[len(self.players)]
        if len(face_up) != wanted or len(set(face_up)) != wanted:
            raise CrimeHotelError(
                tr(
                    "With {value} players {wanted} different cards lie face up.",
                    value=len(self.players),
                    wanted=wanted,
                )
            )
        self.police_car = leader
        inv = Investigation(len(self.investigations) + 1, face_up, leader)
        inv.placed = dict.fromkeys(face_up, "")
        self.investigations.append(inv)
        self.phase = "trick"

    def _check_cards(self, cards_raw: object) -> dict[str, int]:
        if not isinstance(cards_raw, Mapping):
            raise CrimeHotelError(tr("The cards must map every player to one room card."))
        if set(cards_raw) != set(self.players):
            raise CrimeHotelError(tr("Every player gives exactly one card."))
        cards = {p: check_room(cards_raw[p]) for p in self.players}
        if len(set(cards.values())) != len(cards):
            raise CrimeHotelError(
                tr("Each room card exists only once; two players entered the same.")
            )
        inv = self.current
        assert inv is not None
        for player, card in cards.items():
            if card in inv.placed:
                owner = inv.placed[card]
                if owner == "":
                    message = tr(
                        "Room {card} lies face up; {player} cannot play it.",
                        card=card,
                        player=player,
                    )
                else:
                    message = tr(
                        "Room {card} was already played by {owner}; {player} cannot play it.",
                        card=card,
                        owner=owner,
                        player=player,
                    )
                raise CrimeHotelError(message)
        return cards

    def _trick(self, event: Event) -> None:
        self._need_phase("trick")
        inv = self.current
        assert inv is not None
        cards = self._check_cards(event.get("cards"))
        order = self.trick_order()
        led_floor = floor_of(cards[order[0]])
        trick_number = len(inv.tricks) + 1
        # Follow suit cannot be checked against hands the app never sees;
        # not following is taken as the player's claim to have no card of the
        # led floor, and only a later card of that floor proves a breach.
        for player in order:
            self._note_violation(inv, player, cards[player], trick_number)
        for player in order[1:]:
            if floor_of(cards[player]) != led_floor:
                inv.renounced.setdefault(player, set()).add(led_floor)
        inv.tricks.append({p: cards[p] for p in order})
        self.current_trick = {p: cards[p] for p in order}
        self.pending = placement_order(order, cards)
        self.police_car = self.pending[0].player
        self.phase = "place"

    @staticmethod
    def _note_violation(inv: Investigation, player: str, card: int, trick: int) -> None:
        floor = floor_of(card)
        if floor in inv.renounced.get(player, set()):
            inv.violations.append(FollowSuitViolation(player, floor, card, trick))

    def _start_placement(self, event: Event, role: Role) -> Placement:
        self._need_phase("place")
        player = self._player(event.get("player"))
        due = self.pending[0]
        if player != due.player:
            raise CrimeHotelError(
                tr(
                    "It is {player}'s turn to place, not {player2}'s.",
                    player=due.player,
                    player2=player,
                )
            )
        if due.role != role and not (role == "guess" and self.rules.middle_may_guess):
            if due.role == "guess":
                message = tr(
                    "{player} played the {reason} card and must guess.",
                    player=player,
                    reason=tr(due.reason),
                )
            else:
                message = tr(
                    "{player} played the {reason} card and must go to the police station.",
                    player=player,
                    reason=tr(due.reason),
                )
            raise CrimeHotelError(message)
        return due

    def _finish_placement(self, due: Placement) -> None:
        inv = self.current
        assert inv is not None
        inv.placed[due.card] = due.player
        del self.current_trick[due.player]
        self.pending.pop(0)
        if self.pending:
            return
        self.phase = "last_cards" if len(inv.tricks) == TRICKS_PER_INVESTIGATION else "trick"

    def _check_guess_space(self, inv: Investigation, player: str, space: Space) -> bool:
        """Check ``space`` may take ``player``'s detective; True if it uses a share."""
        occupants = inv.occupants(space)
        if player in occupants:
            raise CrimeHotelError(
                tr("{player} already has a detective on {code}.", player=player, code=space.code)
            )
        if not occupants:
            return False
        if len(occupants) >= 2:
            raise CrimeHotelError(
                tr("{code} is already shared by two detectives.", code=space.code)
            )
        if inv.share_tokens.get(player, 0) < 1:
            raise CrimeHotelError(
                tr(
                    "{code} is taken; only the share help lets a second detective in.",
                    code=space.code,
                )
            )
        return True

    def _guess(self, event: Event) -> None:
        due = self._start_placement(event, "guess")
        inv = self.current
        assert inv is not None
        space = Space.parse(event.get("space"))
        shared = self._check_guess_space(inv, due.player, space)
        if shared:
            inv.share_tokens[due.player] -= 1
        inv.detectives.append(Detective(due.player, space))
        self._finish_placement(due)

    def _help(self, event: Event) -> None:
        due = self._start_placement(event, "help")
        inv = self.current
        assert inv is not None
        kind = event.get("help")
        if kind != "none" and kind not in HELP_KINDS:
            known = ", ".join(HELP_KINDS)
            raise CrimeHotelError(
                tr("Unknown help {kind!r}; choose one of {known} or none.", kind=kind, known=known)
            )
        kind = str(kind)
        if kind != "none" and inv.help_taken(kind) >= self.rules.spaces_for(kind):
            raise CrimeHotelError(
                tr("Every {kind} space at the police station is taken.", kind=tr(kind))
            )
        detail = ""
        if kind == "move":
            detail = self._move(inv, due.player, event)
        elif kind in ("swap", "look"):
            key = "with" if kind == "swap" else "at"
            other = self._player(event.get(key))
            if other == due.player:
                raise CrimeHotelError(tr("{player} must choose another player.", player=due.player))
            detail = other
            if kind == "swap":
                # After a blind swap neither hand is what it was, so earlier
                # "could not follow" claims prove nothing any more.
                inv.renounced.pop(due.player, None)
                inv.renounced.pop(other, None)
        elif kind == "share":
            inv.share_tokens[due.player] = inv.share_tokens.get(due.player, 0) + 1
        inv.helps.append(HelpUse(due.player, kind, detail))
        self._finish_placement(due)

    def _move(self, inv: Investigation, player: str, event: Event) -> str:
        source = Space.parse(event.get("from"))
        target = Space.parse(event.get("to"))
        mine = [d for d in inv.detectives if d.player == player and d.space == source]
        if not mine:
            raise CrimeHotelError(
                tr("{player} has no detective on {code} to move.", player=player, code=source.code)
            )
        if source == target:
            raise CrimeHotelError(tr("A moved detective must go to another space."))
        shared = self._check_guess_space(inv, player, target)
        if shared:
            inv.share_tokens[player] -= 1
        mine[0].space = target
        return f"{source.code}->{target.code}"

    def _last_cards(self, event: Event) -> None:
        self._need_phase("last_cards")
        inv = self.current
        assert inv is not None
        cards = self._check_cards(event.get("cards"))
        for player in self.players:
            self._note_violation(inv, player, cards[player], TRICKS_PER_INVESTIGATION + 1)
            inv.placed[cards[player]] = player
        dark = [room for room in ROOMS if room not in inv.placed]
        assert len(dark) == 1, "27 rooms minus 26 placed cards leave one dark room"
        inv.dark_room = dark[0]
        self.phase = "reveal"

    def _reveal(self, event: Event) -> None:
        self._need_phase("reveal")
        inv = self.current
        assert inv is not None and inv.dark_room is not None
        card = check_room(event.get("card"))
        if card != inv.dark_room:
            raise CrimeHotelError(
                tr(
                    "Room {dark_room} is dark but the hidden card is {card}: a card was"
                    " entered wrongly; undo and correct it.",
                    dark_room=inv.dark_room,
                    card=card,
                )
            )
        inv.hidden_card = card
        inv.scores = score_investigation(inv, self.players, self.rules, card)
        self.phase = "over" if len(self.investigations) == INVESTIGATIONS else "deal"
