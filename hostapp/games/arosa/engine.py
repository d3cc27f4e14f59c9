"""The rules of Mord im Arosa: apply one event to a state, or refuse it.

:func:`apply` is pure: it returns a new :class:`GameState` or raises
:class:`IllegalMoveError` naming the rule the event breaks, and never changes
the state it was given. docs/rules-arosa.md lists every decision taken where
the rulebook is silent or ambiguous.
"""

from __future__ import annotations

from collections.abc import Mapping

from hostapp.errors import IllegalMoveError
from hostapp.games.arosa.colours import colour_word
from hostapp.games.arosa.events import Action, Cover, Event, Inspect, Suspect, Throw, event_kind
from hostapp.games.arosa.rules import FLOORS, N_VICTIMS, SHEET_LIMIT, VICTIM
from hostapp.games.arosa.scoring import Scores, score
from hostapp.games.arosa.state import GameState, Outcome, Phase
from hostapp.i18n import tr


class _Table:
    """A mutable working copy of a state, used only inside :func:`apply`."""

    def __init__(self, state: GameState) -> None:
        self.players = state.players
        self.phase: Phase = state.phase
        self.turn = state.turn
        self.tower = {c: list(v) for c, v in state.tower.items()}
        self.sheet = {c: list(v) for c, v in state.sheet.items()}
        self.supply = dict(state.supply)
        self.hand = dict(state.hand)
        self.owed = dict(state.owed)
        self.victims_on_sheet = list(state.victims_on_sheet)
        self.last = state.last

    def freeze(self) -> GameState:
        return GameState(
            players=self.players,
            phase=self.phase,
            turn=self.turn,
            tower={c: tuple(v) for c, v in self.tower.items()},
            sheet={c: tuple(v) for c, v in self.sheet.items()},
            supply=dict(self.supply),
            hand=dict(self.hand),
            owed={c: n for c, n in self.owed.items() if n > 0},
            victims_on_sheet=tuple(self.victims_on_sheet),
            last=self.last,
        )

    def owe(self, color: str, n: int) -> None:
        if n > 0:
            self.owed[color] = self.owed.get(color, 0) + n

    def put_on_sheet(self, color: str, n: int, floor: int) -> int:
        """Move ``n`` clues of ``color`` to the sheet; returns how many came off the floor.

        The rulebook's finale: a player who must place more clues than his
        supply holds takes the rest out of the exposed floor.
        """
        from_supply = min(n, self.supply[color])
        from_floor = n - from_supply
        self.supply[color] -= from_supply
        self.tower[color][floor] -= from_floor
        self.sheet[color][floor] += n
        return from_floor

    def take_out(self, floor: int) -> dict[str, int]:
        """Take every clue off ``floor`` into the investigator's hand; each is owed back."""
        taken = {}
        for color in self.players:
            n = self.tower[color][floor]
            if n:
                self.tower[color][floor] = 0
                self.hand[color] += n
                self.owe(color, n)
                taken[color] = n
        return taken

    def end_turn_if_done(self) -> None:
        if any(self.owed.values()):
            return
        self.owed = {}
        if self.phase == "prologue":
            self.phase = "act1"
            self.turn = 0
        else:
            self.turn = (self.turn + 1) % len(self.players)

    def end_game_if_due(self) -> None:
        full_sheet = any(sum(v) >= SHEET_LIMIT for v in self.sheet.values())
        empty_supply = any(n == 0 for n in self.supply.values())
        if full_sheet or empty_supply:
            self.phase = "over"
            self.owed = {}


def _illegal(message: str, /, **fields: object) -> IllegalMoveError:
    return IllegalMoveError(tr(message, **fields))


def _check_floor(floor: int) -> None:
    if floor not in FLOORS:
        raise _illegal(
            "The hotel: its floors are 0 (ground floor) to 7, there is no floor {floor}.",
            floor=floor,
        )


def apply(state: GameState, event: Event) -> GameState:
    """Apply ``event`` to ``state`` and return the new state.

    Parameters
    ----------
    state
        The state before the event; it is not modified.
    event
        A throw or an action (see :mod:`hostapp.games.arosa.events`).

    Returns
    -------
    GameState
        The state after the event, with the end conditions checked.

    Raises
    ------
    IllegalMoveError
        When the event breaks a rule; the message names the rule.
    """
    if state.phase == "over":
        raise _illegal("The finale: the game is over, nothing more can happen.")
    table = _Table(state)
    if isinstance(event, Throw):
        _throw(table, event)
    else:
        _check_action(state, event)
        if event.found is not None:
            _reconcile(table, event.floor, event.found)
        if isinstance(event, Inspect):
            _inspect(table, event)
        elif isinstance(event, Suspect):
            _suspect(table, event)
        else:
            _cover(table, event)
        table.end_turn_if_done()
    table.end_game_if_due()
    return table.freeze()


def _throw(table: _Table, event: Throw) -> None:
    color = event.color
    if color != VICTIM and color not in table.players:
        raise _illegal(
            "Colours: {color} is not a colour in this game; the players are {players} and "
            "the victims are red.",
            color=colour_word(color),
            players=", ".join(colour_word(p) for p in table.players),
        )
    _check_floor(event.floor)
    if table.owed.get(color, 0) == 0:
        if not table.owed:
            raise _illegal(
                "Throws: no cube is owed now; it is {player}'s turn to investigate.",
                player=colour_word(table.players[table.turn]),
            )
        raise _illegal(
            "Throws: no {color} cube is owed now; the rules demand {owed}.",
            color=colour_word(color),
            owed=describe_owed(table.owed),
        )
    table.owed[color] -= 1
    # A thrown colour comes out of hand (cubes taken out of the tower) first,
    # then from the supply; victims come out of the box.
    if color != VICTIM:
        if table.hand[color] > 0:
            table.hand[color] -= 1
        else:
            table.supply[color] -= 1
    table.tower[color][event.floor] += 1
    table.end_turn_if_done()


def describe_owed(owed: Mapping[str, int]) -> str:
    """``{"blue": 2, "red": 1}`` as "2 blue, 1 red"."""
    return ", ".join(f"{n} {colour_word(c)}" for c, n in owed.items() if n) or tr("nothing")


def _check_action(state: GameState, action: Action) -> None:
    kind = event_kind(action)
    if state.phase == "prologue":
        raise _illegal(
            "The prologue: both victims and two clues per player are thrown before "
            "anyone investigates (still owed: {owed}).",
            owed=describe_owed(state.owed),
        )
    if state.owed:
        raise _illegal(
            "Throws first: the throws the rules demand ({owed}) come before the next action.",
            owed=describe_owed(state.owed),
        )
    if action.by not in state.players:
        raise _illegal("Players: {by} is not playing.", by=colour_word(action.by))
    if action.by != state.investigator:
        raise _illegal(
            "Turn order: it is {player}'s turn to investigate, not {by}'s.",
            player=colour_word(state.investigator),
            by=colour_word(action.by),
        )
    if state.phase == "act1" and kind != "inspect":
        raise _illegal(
            "Act I: until both victims are found the investigator can only inspect a floor, "
            "not {kind}.",
            kind=kind,
        )
    if state.phase == "act2" and kind == "inspect":
        raise _illegal(
            "Act II: once both victims are found the investigator suspects other players or "
            "covers his tracks; inspecting for victims is over."
        )
    _check_floor(action.floor)


def _reconcile(table: _Table, floor: int, found: Mapping[str, int]) -> None:
    """Make the engine's belief agree with what the players saw on ``floor``.

    The physical truth wins. A cube believed elsewhere but found here is
    taken from the nearest floor that holds one; a cube believed here but not
    found is moved to the nearest other floor (detectors err to neighbours).
    """
    colors = [*table.players, VICTIM]
    for color in found:
        if color not in colors:
            raise _illegal(
                "Colours: {color} is not a colour in this game; the players are {players} and "
                "the victims are red.",
                color=colour_word(color),
                players=", ".join(colour_word(p) for p in table.players),
            )
    for color in colors:
        want = found.get(color, 0)
        column = table.tower[color]
        if want < 0:
            raise _illegal(
                "Cubes: a floor cannot hold {want} {color} cubes.",
                want=want,
                color=colour_word(color),
            )
        if want > sum(column):
            raise _illegal(
                "Cubes: only {n} {color} cubes are in the tower, so {want} cannot lie on "
                "floor {floor}.",
                n=sum(column),
                color=colour_word(color),
                want=want,
                floor=floor,
            )
        others = sorted((f for f in FLOORS if f != floor), key=lambda f: (abs(f - floor), f))
        while column[floor] < want:
            source = next(f for f in others if column[f] > 0)
            column[source] -= 1
            column[floor] += 1
        if column[floor] > want:
            column[others[0]] += column[floor] - want
            column[floor] = want


def _inspect(table: _Table, action: Inspect) -> None:
    floor = action.floor
    victims = table.tower[VICTIM][floor]
    if victims == 0:
        taken = table.take_out(floor)
        table.owe(action.by, 1)  # sloppy investigation
        table.last = Outcome("inspect", action.by, floor, taken_out=taken, penalty=1)
        return
    table.tower[VICTIM][floor] = 0
    table.victims_on_sheet[floor] += victims
    to_sheet = {}
    from_floor = {}
    for color in table.players:
        # the investigator overlooks his own clues at the crime scene
        n = table.tower[color][floor]
        if color == action.by or n == 0:
            continue
        to_sheet[color] = n
        short = table.put_on_sheet(color, n, floor)
        if short:
            from_floor[color] = short
    taken = table.take_out(floor)
    table.last = Outcome(
        "inspect",
        action.by,
        floor,
        victims_found=victims,
        to_sheet=to_sheet,
        from_floor=from_floor,
        taken_out=taken,
    )
    if sum(table.victims_on_sheet) == N_VICTIMS:
        # both victims found: the search is over; Act II begins with the next player
        table.phase = "act2"


def _suspect(table: _Table, action: Suspect) -> None:
    suspects = action.suspects
    if not suspects:
        raise _illegal("Suspicion: the investigator names at least one player he suspects.")
    for suspect in suspects:
        if suspect not in table.players:
            raise _illegal("Suspicion: {suspect} is not playing.", suspect=suspect)
        if suspect == action.by:
            raise _illegal("Suspicion: the investigator suspects other players, not himself.")
    if len(set(suspects)) != len(suspects):
        raise _illegal("Suspicion: each suspect is named once.")
    floor = action.floor
    if floor == 0 and table.tower[action.by][0] == 0:
        # ground-floor special case: no own clue there, so the search fails
        taken = table.take_out(floor)
        table.owe(action.by, len(suspects))
        table.last = Outcome(
            "suspect",
            action.by,
            floor,
            taken_out=taken,
            penalty=len(suspects),
            wrongly_suspected=tuple(suspects),
            ground_floor_case=True,
        )
        return
    to_sheet = {}
    from_floor = {}
    wrong = []
    for suspect in suspects:
        n = table.tower[suspect][floor]
        if n == 0:
            wrong.append(suspect)
            continue
        to_sheet[suspect] = n
        short = table.put_on_sheet(suspect, n, floor)
        if short:
            from_floor[suspect] = short
    taken = table.take_out(floor)
    table.owe(action.by, len(wrong))  # one penalty clue per false accusation
    table.last = Outcome(
        "suspect",
        action.by,
        floor,
        to_sheet=to_sheet,
        from_floor=from_floor,
        taken_out=taken,
        penalty=len(wrong),
        wrongly_suspected=tuple(wrong),
    )


def cover_limit(state: GameState, floor: int) -> int:
    """How many clues the investigator may take off the sheet by covering ``floor``."""
    by = state.investigator
    return min(state.tower[by][floor], state.sheet[by][floor])


def _cover(table: _Table, action: Cover) -> None:
    floor = action.floor
    by = action.by
    own = table.tower[by][floor]
    limit = min(own, table.sheet[by][floor])
    remove = limit if action.remove is None else action.remove
    if remove < 0:
        raise _illegal("Covering tracks: the number of clues removed cannot be negative.")
    if remove > limit:
        raise _illegal(
            "Covering tracks: the investigator may remove at most as many of his clues from "
            "floor {floor} of the sheet as he found there in the tower ({found} found, "
            "{on_sheet} on the sheet), not {remove}.",
            floor=floor,
            found=own,
            on_sheet=table.sheet[by][floor],
            remove=remove,
        )
    table.sheet[by][floor] -= remove
    table.supply[by] += remove
    taken = table.take_out(floor)
    penalty = 0 if own else 1  # sloppy job: none of his own clues there
    table.owe(by, penalty)
    table.last = Outcome("cover", by, floor, taken_out=taken, penalty=penalty, removed=remove)


def final_scores(state: GameState) -> Scores:
    """Suspicion points, culprits and winners of the sheet as it stands."""
    return score(state.players, state.sheet, state.crime_scenes)
