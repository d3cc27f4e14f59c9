"""The state of a Mord im Arosa game: an immutable snapshot, serialisable to JSON.

Where every cube is: each player colour's 20 cubes are in the player's supply,
in the tower, on the investigation sheet or in hand (taken out of the tower
and not yet thrown back); the two red victims are in the tower or on the
sheet (before the prologue throws them, in the box).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from hostapp.errors import ScriptError
from hostapp.games.arosa.rules import (
    CLUES_PER_PLAYER,
    MAX_PLAYERS,
    MIN_PLAYERS,
    N_FLOORS,
    N_VICTIMS,
    PLAYER_COLORS,
    PROLOGUE_CLUES,
    VICTIM,
)
from hostapp.i18n import tr

Phase = Literal["prologue", "act1", "act2", "over"]
PHASES: tuple[Phase, ...] = ("prologue", "act1", "act2", "over")

Floors = tuple[int, ...]
"""Cube counts on floors 0..7."""


@dataclass(frozen=True)
class Outcome:
    """What the last action did, for the app's messages (all counts are cubes).

    Attributes
    ----------
    kind, by, floor
        The action, its investigator and the exposed floor.
    victims_found
        Victims taken to the sheet (Act I).
    to_sheet
        ``{colour: clues}`` put on the sheet at ``floor``.
    from_floor
        ``{colour: clues}`` of ``to_sheet`` taken from the exposed floor
        because the supply ran short.
    taken_out
        ``{colour: clues}`` taken out of the exposed floor, to be thrown back.
    penalty
        Penalty clues the investigator owes (sloppy investigation).
    wrongly_suspected
        Suspects with none of their clues on the floor.
    removed
        Clues the investigator took off the sheet (covering tracks).
    ground_floor_case
        The ground-floor special case applied (no own clue on floor 0).
    """

    kind: str
    by: str
    floor: int
    victims_found: int = 0
    to_sheet: Mapping[str, int] = field(default_factory=dict)
    from_floor: Mapping[str, int] = field(default_factory=dict)
    taken_out: Mapping[str, int] = field(default_factory=dict)
    penalty: int = 0
    wrongly_suspected: tuple[str, ...] = ()
    removed: int = 0
    ground_floor_case: bool = False

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict of every field."""
        return {
            "kind": self.kind,
            "by": self.by,
            "floor": self.floor,
            "victims_found": self.victims_found,
            "to_sheet": dict(self.to_sheet),
            "from_floor": dict(self.from_floor),
            "taken_out": dict(self.taken_out),
            "penalty": self.penalty,
            "wrongly_suspected": list(self.wrongly_suspected),
            "removed": self.removed,
            "ground_floor_case": self.ground_floor_case,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Outcome:
        """Inverse of :meth:`to_json`."""
        return cls(
            kind=data["kind"],
            by=data["by"],
            floor=data["floor"],
            victims_found=data["victims_found"],
            to_sheet=dict(data["to_sheet"]),
            from_floor=dict(data["from_floor"]),
            taken_out=dict(data["taken_out"]),
            penalty=data["penalty"],
            wrongly_suspected=tuple(data["wrongly_suspected"]),
            removed=data["removed"],
            ground_floor_case=data["ground_floor_case"],
        )


@dataclass(frozen=True)
class GameState:
    """One moment of a game. Treat the mappings as read-only; the engine never mutates them.

    Attributes
    ----------
    players
        Colours in seating order, clockwise; the first investigates first.
    phase
        ``"prologue"``, ``"act1"``, ``"act2"`` or ``"over"``.
    turn
        Index into ``players`` of the current investigator.
    tower
        ``{colour: floors}`` for every player colour and ``"red"``.
    sheet
        ``{colour: floors}`` clues on the investigation sheet, per player colour.
    supply
        ``{colour: cubes}`` in each player's supply.
    hand
        ``{colour: cubes}`` taken out of the tower and not yet thrown back.
    owed
        ``{colour: throws}`` the rules demand before the next action (no zeros).
    victims_on_sheet
        Victims found, per floor (a floor with any is a crime scene).
    last
        What the last action did, or None before the first action.
    """

    players: tuple[str, ...]
    phase: Phase
    turn: int
    tower: Mapping[str, Floors]
    sheet: Mapping[str, Floors]
    supply: Mapping[str, int]
    hand: Mapping[str, int]
    owed: Mapping[str, int]
    victims_on_sheet: Floors
    last: Outcome | None = None

    @property
    def investigator(self) -> str:
        """The player whose turn it is."""
        return self.players[self.turn]

    @property
    def crime_scenes(self) -> tuple[int, ...]:
        """Floors where victims were found, sorted."""
        return tuple(f for f, n in enumerate(self.victims_on_sheet) if n)

    @property
    def victims_found(self) -> int:
        """How many victims are on the sheet."""
        return sum(self.victims_on_sheet)

    @property
    def is_over(self) -> bool:
        """Whether the game has ended."""
        return self.phase == "over"

    def to_json(self) -> dict[str, Any]:
        """The whole state as a JSON-ready dict (inverse: :meth:`from_json`)."""
        return {
            "players": list(self.players),
            "phase": self.phase,
            "turn": self.turn,
            "tower": {c: list(v) for c, v in self.tower.items()},
            "sheet": {c: list(v) for c, v in self.sheet.items()},
            "supply": dict(self.supply),
            "hand": dict(self.hand),
            "owed": dict(self.owed),
            "victims_on_sheet": list(self.victims_on_sheet),
            "last": None if self.last is None else self.last.to_json(),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> GameState:
        """Rebuild a state saved with :meth:`to_json`.

        Raises
        ------
        ScriptError
            When ``data`` is not a saved state.
        """
        try:
            state = cls(
                players=tuple(data["players"]),
                phase=data["phase"],
                turn=int(data["turn"]),
                tower={c: tuple(int(n) for n in v) for c, v in data["tower"].items()},
                sheet={c: tuple(int(n) for n in v) for c, v in data["sheet"].items()},
                supply={c: int(n) for c, n in data["supply"].items()},
                hand={c: int(n) for c, n in data["hand"].items()},
                owed={c: int(n) for c, n in data["owed"].items()},
                victims_on_sheet=tuple(int(n) for n in data["victims_on_sheet"]),
                last=None if data.get("last") is None else Outcome.from_json(data["last"]),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ScriptError(
                tr("not a saved Mord im Arosa state ({reason!r})", reason=exc)
            ) from exc
        if state.phase not in PHASES:
            raise ScriptError(
                tr("not a saved Mord im Arosa state (phase {phase!r})", phase=state.phase)
            )
        return state


def check_players(players: Any) -> tuple[str, ...]:
    """Validate a seating order: 2-6 distinct player colours.

    Raises
    ------
    ScriptError
        With a sentence naming what is wrong.
    """
    if not isinstance(players, (list, tuple)) or not all(isinstance(p, str) for p in players):
        raise ScriptError(tr("'players' must be a list of colours"))
    if not MIN_PLAYERS <= len(players) <= MAX_PLAYERS:
        raise ScriptError(
            tr(
                "Mord im Arosa is played by {low} to {high} players, not {n}",
                low=MIN_PLAYERS,
                high=MAX_PLAYERS,
                n=len(players),
            )
        )
    unknown = [p for p in players if p not in PLAYER_COLORS]
    if unknown:
        raise ScriptError(
            tr(
                "{colour!r} is not a player colour (choose from {known})",
                colour=unknown[0],
                known=", ".join(PLAYER_COLORS),
            )
        )
    if len(set(players)) != len(players):
        raise ScriptError(tr("each player colour may be seated only once"))
    return tuple(players)


def new_game(players: Any) -> GameState:
    """The state before the prologue: full supplies, the victims and two clues each owed.

    Parameters
    ----------
    players
        Colours in seating order, clockwise; the first investigates first in Act I.
    """
    seating = check_players(players)
    empty: Floors = (0,) * N_FLOORS
    owed = {VICTIM: N_VICTIMS} | {p: PROLOGUE_CLUES for p in seating}
    return GameState(
        players=seating,
        phase="prologue",
        turn=0,
        tower={p: empty for p in seating} | {VICTIM: empty},
        sheet={p: empty for p in seating},
        supply={p: CLUES_PER_PLAYER for p in seating},
        hand={p: 0 for p in seating},
        owed=owed,
        victims_on_sheet=empty,
    )
