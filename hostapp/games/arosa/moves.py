"""What may happen next: the throw queue, the turn prompt and every legal event.

The app builds its prompts from :func:`prompt` ("Gray: throw a blue clue",
"Yellow: suspect or cover"), which reveals nothing about the tower;
:func:`legal_actions` enumerates every legal event (tests drive random games
with it) and does use what the engine believes lies in the tower.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from typing import Literal

from hostapp.games.arosa.engine import cover_limit
from hostapp.games.arosa.events import Cover, Event, Inspect, Suspect, Throw
from hostapp.games.arosa.rules import FLOORS, VICTIM
from hostapp.games.arosa.state import GameState

Source = Literal["box", "hand", "supply"]


@dataclass(frozen=True)
class ThrowRequest:
    """One throw the rules demand.

    Attributes
    ----------
    color
        The cube's colour (``"red"`` for a victim).
    thrower
        Who throws it: in the prologue the colour's own player (None for the
        victims: whoever last held a knife), later the investigator.
    source
        Where the cube comes from: the box (victims), the investigator's hand
        (clues taken out of the tower) or the player's supply (prologue and
        penalty clues).
    """

    color: str
    thrower: str | None
    source: Source


@dataclass(frozen=True)
class Prompt:
    """Whose move it is and what kind of move, without revealing the tower.

    Attributes
    ----------
    kind
        ``"throw"`` (throws are owed), ``"act1"`` (inspect a floor),
        ``"act2"`` (suspect or cover) or ``"over"``.
    player
        Who acts: the next thrower (None for the victims) or the investigator.
    throws
        The throw queue, in the order the app should ask for them.
    actions
        The action kinds the investigator may choose from.
    suspectable
        Players the investigator may suspect (Act II).
    """

    kind: Literal["throw", "act1", "act2", "over"]
    player: str | None
    throws: tuple[ThrowRequest, ...] = ()
    actions: tuple[str, ...] = ()
    suspectable: tuple[str, ...] = ()


def owed_throws(state: GameState) -> dict[str, int]:
    """``{colour: throws}`` the rules demand before the next action (empty when none)."""
    return dict(state.owed)


def throw_queue(state: GameState) -> list[ThrowRequest]:
    """The owed throws in a natural order: victims, cubes in hand, then supply cubes.

    Any order is legal; this is the order the app asks for them. In the
    prologue it gives the victims, then two clues per player in seating order.
    """
    prologue = state.phase == "prologue"
    queue = [ThrowRequest(VICTIM, None, "box")] * state.owed.get(VICTIM, 0)
    for color in state.players:
        n = min(state.owed.get(color, 0), state.hand[color])
        queue += [ThrowRequest(color, state.investigator, "hand")] * n
    for color in state.players:
        n = state.owed.get(color, 0) - min(state.owed.get(color, 0), state.hand[color])
        thrower = color if prologue else state.investigator
        queue += [ThrowRequest(color, thrower, "supply")] * n
    return queue


def prompt(state: GameState) -> Prompt:
    """What the app should ask for next."""
    if state.phase == "over":
        return Prompt("over", None)
    if state.owed:
        queue = tuple(throw_queue(state))
        return Prompt("throw", queue[0].thrower, throws=queue)
    others = tuple(p for p in state.players if p != state.investigator)
    if state.phase == "act1":
        return Prompt("act1", state.investigator, actions=("inspect",))
    return Prompt("act2", state.investigator, actions=("suspect", "cover"), suspectable=others)


def legal_actions(state: GameState) -> list[Event]:
    """Every event the rules allow now, with explicit ``remove`` counts for covers.

    Throws are listed for every floor; in Act II every non-empty set of other
    players may be suspected on every floor.
    """
    if state.phase == "over":
        return []
    if state.owed:
        return [Throw(color, floor) for color in state.owed for floor in FLOORS]
    by = state.investigator
    if state.phase == "act1":
        return [Inspect(by, floor) for floor in FLOORS]
    others = [p for p in state.players if p != by]
    events: list[Event] = []
    for size in range(1, len(others) + 1):
        for suspects in combinations(others, size):
            events += [Suspect(by, suspects, floor) for floor in FLOORS]
    for floor in FLOORS:
        events += [Cover(by, floor, remove) for remove in range(cover_limit(state, floor) + 1)]
    return events
