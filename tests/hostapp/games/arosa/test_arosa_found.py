"""Actions carrying what the players saw: the physical truth corrects the engine's tower."""

from __future__ import annotations

import pytest

from hostapp.errors import IllegalMoveError, ScriptError
from hostapp.games.arosa import (
    GameState,
    Inspect,
    Suspect,
    Throw,
    apply,
    event_from_dict,
    event_to_dict,
    new_game,
)


def after_prologue() -> GameState:
    state = new_game(["yellow", "blue"])
    for event in [
        Throw("red", 5),
        Throw("red", 2),
        Throw("yellow", 4),
        Throw("yellow", 1),
        Throw("blue", 5),
        Throw("blue", 6),
    ]:
        state = apply(state, event)
    return state


def test_a_cube_found_but_believed_elsewhere_comes_from_the_nearest_level() -> None:
    state = apply(after_prologue(), Inspect("yellow", 5, found={"red": 1, "blue": 2}))
    # the blue cube heard on 6 was really on 5: both are caught at the crime scene
    assert state.sheet["blue"][5] == 2
    assert state.tower["blue"] == (0,) * 8
    assert state.owed == {"blue": 2}


def test_a_cube_believed_here_but_not_found_moves_to_a_neighbour() -> None:
    state = apply(after_prologue(), Inspect("yellow", 4, found={}))
    # yellow's cube was not on 4 after all; the engine now believes it on 3
    assert state.tower["yellow"] == (0, 1, 0, 1, 0, 0, 0, 0)
    assert state.owed == {"yellow": 1}  # only the penalty: nothing was taken out


def test_a_victim_found_where_none_was_heard() -> None:
    state = apply(after_prologue(), Inspect("yellow", 1, found={"red": 1, "yellow": 1}))
    assert state.crime_scenes == (1,)
    assert sum(state.tower["red"]) == 1  # the other victim is still believed in the tower


def test_more_cubes_than_the_tower_holds_is_refused() -> None:
    state = after_prologue()
    with pytest.raises(IllegalMoveError, match="only 2 blue cubes are in the tower"):
        apply(state, Inspect("yellow", 5, found={"blue": 3}))
    with pytest.raises(IllegalMoveError, match="cannot hold -1"):
        apply(state, Inspect("yellow", 5, found={"blue": -1}))
    with pytest.raises(IllegalMoveError, match="Colours"):
        apply(state, Inspect("yellow", 5, found={"white": 1}))


def test_found_round_trips_through_the_journal_form_but_not_scripts() -> None:
    event = Suspect("blue", ("yellow",), 3, found={"yellow": 1})
    data = event_to_dict(event)
    assert event_from_dict(data, extensions=True) == event
    with pytest.raises(ScriptError, match="unknown key"):
        event_from_dict(data)
