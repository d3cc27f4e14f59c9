"""Replay scripts (contracts.md section 4): read one, play it, print the final state."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from hostapp.errors import IllegalMoveError, ScriptError
from hostapp.games.arosa.engine import apply, final_scores
from hostapp.games.arosa.events import Event, event_from_dict, event_kind
from hostapp.games.arosa.rules import VICTIM
from hostapp.games.arosa.state import GameState, check_players, new_game
from hostapp.i18n import tr


def parse_script(data: Any) -> tuple[tuple[str, ...], list[Event]]:
    """Check a decoded script's shape and return its seating order and events.

    Raises
    ------
    ScriptError
        When it is not a valid script; the message names the bad event's index.
    """
    if not isinstance(data, dict):
        raise ScriptError(tr("a script must be a JSON object with 'players' and 'events'"))
    unknown = sorted(data.keys() - {"players", "events"})
    if unknown:
        raise ScriptError(
            tr("a script has only 'players' and 'events', not {keys}", keys=", ".join(unknown))
        )
    if "players" not in data or "events" not in data:
        raise ScriptError(tr("a script needs both 'players' and 'events'"))
    players = check_players(data["players"])
    if not isinstance(data["events"], list):
        raise ScriptError(tr("'events' must be a list"))
    events = []
    for index, raw in enumerate(data["events"]):
        try:
            events.append(event_from_dict(raw))
        except ScriptError as exc:
            raise ScriptError(tr("event {index}: {reason}", index=index, reason=exc)) from exc
    return players, events


def load_script(path: Path) -> tuple[tuple[str, ...], list[Event]]:
    """Read and check a script file.

    Raises
    ------
    ScriptError
        When the file cannot be read, is not JSON or is not a valid script.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ScriptError(
            tr("cannot read {path}: {reason}", path=path, reason=exc.__class__.__name__)
        ) from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ScriptError(
            tr("{path} is not JSON: {reason} (line {line})", path=path, reason=exc.msg,
               line=exc.lineno)
        ) from exc
    try:
        return parse_script(data)
    except ScriptError as exc:
        raise ScriptError(
            tr("{path} is not a valid script: {reason}", path=path, reason=exc)
        ) from exc


def play(players: Sequence[str], events: Sequence[Event]) -> GameState:
    """Play ``events`` from a new game.

    Raises
    ------
    IllegalMoveError
        At the first illegal event, naming its index (from 0) and the rule.
    """
    state = new_game(players)
    for index, event in enumerate(events):
        try:
            state = apply(state, event)
        except IllegalMoveError as exc:
            raise IllegalMoveError(
                tr("event {index} ({kind}): {reason}", index=index, kind=event_kind(event),
                   reason=exc)
            ) from exc
    return state


def output(state: GameState) -> dict[str, Any]:
    """The contract's output object for ``state`` (contracts.md section 4)."""
    out: dict[str, Any] = {
        "phase": state.phase,
        "crime_scenes": list(state.crime_scenes),
        "sheet": {p: list(state.sheet[p]) for p in state.players},
        "supply": {p: state.supply[p] for p in state.players},
        "tower": {c: list(state.tower[c]) for c in (*state.players, VICTIM)},
        "owed": {c: n for c, n in state.owed.items() if n},
    }
    if state.phase == "over":
        scores = final_scores(state)
        out["suspicion"] = dict(scores.suspicion)
        out["culprits"] = list(scores.culprits)
        out["winners"] = list(scores.winners)
    return out


def replay_file(path: Path) -> Mapping[str, Any]:
    """Load, play and summarise a script file: the object ``replay`` prints."""
    players, events = load_script(path)
    return output(play(players, events))
