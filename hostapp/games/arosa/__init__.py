"""Mord im Arosa: the rules engine, replay scripts and the tower model.

The engine is pure and deterministic: no I/O, no clock, no Qt. A game is a
seating order plus a list of events; the state after them is always the same.

Public API
----------
Starting and playing::

    from hostapp.games import arosa

    state = arosa.new_game(["blue", "yellow", "gray"])   # seating, clockwise
    state = arosa.apply(state, arosa.Throw("red", 4))     # new state, or
                                                          # IllegalMoveError
    state = arosa.apply(state, arosa.Inspect("blue", 4))
    state = arosa.apply(state, arosa.Suspect("yellow", ("gray",), 2))
    state = arosa.apply(state, arosa.Cover("gray", 5, remove=1))

Events (:mod:`.events`): ``Throw(color, floor)``, ``Inspect(by, floor)``,
``Suspect(by, suspects, floor)``, ``Cover(by, floor, remove=None)``. Actions
take an optional ``found={colour: n}``: what the players confirmed on the
exposed floor; the engine then corrects its belief about the tower first.
``event_from_dict`` / ``event_to_dict`` convert to the script form (the
journal stores that).

Asking what comes next (:mod:`.moves`): ``prompt(state)`` gives the kind
("throw", "act1", "act2", "over"), who acts, the throw queue (each a
``ThrowRequest(color, thrower, source)``), the action kinds and who may be
suspected; ``owed_throws(state)`` gives ``{colour: n}``;
``legal_actions(state)`` every legal event.

Reading the state (:class:`GameState`, immutable): ``phase``,
``investigator``, ``sheet``, ``supply``, ``hand``, ``owed``,
``crime_scenes``, ``tower`` (what the engine believes; reveal only after the
game), ``last`` (an :class:`Outcome`: what the last action did: victims found,
clues put on the sheet, cubes taken out, penalty). ``to_json`` / ``from_json``.

Scoring: ``final_scores(state)`` gives a :class:`Scores` (``suspicion``,
``culprits``, ``winners``), valid at any moment and final once over.

Saved games (:mod:`.session`): ``ArosaSession.new(players, directory=None)``
and ``ArosaSession.resume(game_id)``; ``session.act(event)`` checks the event,
journals it (fsynced) and only then moves ``session.state`` on;
``session.undo()`` takes the last event back (journalled as an undo record).
Listing, exporting and deleting saved games: :mod:`hostapp.journal`.

Tower model (:mod:`.tower_model`): ``TowerModel().throw(color, detections)``
turns the detections of one drop (``Landing``, ``Removal``) into a belief per
level; ``lift(level)`` / ``propose(level)`` give the confirmation panel's
proposal, ``confirm(level, found)`` takes the players' count as the truth,
``accuracy`` keeps score. Pass the confirmed ``found`` on the action too
(``Inspect(by, floor, found=...)``) so the engine's tower follows the truth.

Rule decisions where the rulebook is silent: docs/rules-arosa.md.
"""

from hostapp.games.arosa.engine import apply, cover_limit, describe_owed, final_scores
from hostapp.games.arosa.events import (
    Action,
    Cover,
    Event,
    Inspect,
    Suspect,
    Throw,
    event_from_dict,
    event_kind,
    event_to_dict,
)
from hostapp.games.arosa.moves import (
    Prompt,
    ThrowRequest,
    legal_actions,
    owed_throws,
    prompt,
    throw_queue,
)
from hostapp.games.arosa.rules import FLOORS, N_FLOORS, PLAYER_COLORS, VICTIM
from hostapp.games.arosa.scoring import Scores, floor_points, score
from hostapp.games.arosa.state import GameState, Outcome, Phase, new_game

__all__ = [
    "FLOORS",
    "N_FLOORS",
    "PLAYER_COLORS",
    "VICTIM",
    "Action",
    "Cover",
    "Event",
    "GameState",
    "Inspect",
    "Outcome",
    "Phase",
    "Prompt",
    "Scores",
    "Suspect",
    "Throw",
    "ThrowRequest",
    "apply",
    "cover_limit",
    "describe_owed",
    "event_from_dict",
    "event_kind",
    "event_to_dict",
    "final_scores",
    "floor_points",
    "legal_actions",
    "new_game",
    "owed_throws",
    "prompt",
    "score",
    "throw_queue",
]
