"""The rulebook's own examples, and the rules around them, through the engine."""

from __future__ import annotations

import pytest

from hostapp.errors import IllegalMoveError
from hostapp.games.arosa import (
    Cover,
    GameState,
    Inspect,
    Suspect,
    Throw,
    apply,
    final_scores,
    floor_points,
    new_game,
    score,
)


def play(players: list[str], events: list[object]) -> GameState:
    state = new_game(players)
    for event in events:
        state = apply(state, event)  # type: ignore[arg-type]
    return state


def prologue(victims: tuple[int, int], clues: dict[str, tuple[int, int]]) -> list[object]:
    events: list[object] = [Throw("red", victims[0]), Throw("red", victims[1])]
    for color, (a, b) in clues.items():
        events += [Throw(color, a), Throw(color, b)]
    return events


def test_final_scoring_example_blue_is_culprit_brown_wins() -> None:
    # Crime scenes on floors 3 and 5. Blue: 2 clues at crime scenes, 6 next to
    # them, 3 elsewhere = 21 points. Brown: 9 points, the fewest.
    sheet = {
        "blue": [1, 1, 2, 1, 2, 1, 2, 1],  # 3+5: 2 clues; 2,4,6: 6 clues; 0,1,7: 3 clues
        "brown": [4, 3, 0, 0, 0, 0, 0, 2],  # all elsewhere: 9 x 1
        "gray": [0, 2, 2, 1, 0, 1, 0, 0],  # 2 + 4 + 3 + 3 = 12
    }
    scores = score(["blue", "brown", "gray"], sheet, [3, 5])
    assert scores.suspicion == {"blue": 21, "brown": 9, "gray": 12}
    assert scores.culprits == ("blue",)
    assert scores.winners == ("brown",)


def test_adjacent_floors_at_the_ends_of_the_tower() -> None:
    assert floor_points([0]) == (3, 2, 1, 1, 1, 1, 1, 1)
    assert floor_points([7]) == (1, 1, 1, 1, 1, 1, 2, 3)
    assert floor_points([3, 5]) == (1, 1, 2, 3, 2, 3, 2, 1)
    assert floor_points([]) == (1,) * 8


def test_several_culprits_and_several_winners() -> None:
    sheet = {"blue": [1] + [0] * 7, "gray": [1] + [0] * 7, "white": [0] * 7 + [3]}
    scores = score(["white", "blue", "gray"], sheet, [])
    assert scores.culprits == ("white",)
    assert scores.winners == ("blue", "gray")
    all_equal = score(["blue", "gray"], {"blue": [0] * 8, "gray": [0] * 8}, [])
    assert all_equal.culprits == all_equal.winners == ("blue", "gray")


def test_act1_victim_found_with_blues_clues() -> None:
    # Investigator Yellow exposes floor 5: a victim. Yellow places the victim but
    # none of his own clues; Blue puts two clues from his supply on the sheet.
    state = play(
        ["yellow", "blue"],
        prologue((5, 2), {"yellow": (5, 1), "blue": (5, 5)}),
    )
    state = apply(state, Inspect("yellow", 5))
    assert state.crime_scenes == (5,)
    assert state.sheet["blue"] == (0, 0, 0, 0, 0, 2, 0, 0)
    assert state.sheet["yellow"] == (0,) * 8
    assert state.supply == {"yellow": 18, "blue": 16}
    # every clue found is taken out and thrown back; no penalty for a find
    assert state.owed == {"yellow": 1, "blue": 2}
    assert state.tower["red"] == (0, 0, 1, 0, 0, 0, 0, 0)
    assert state.phase == "act1"
    assert state.last is not None and state.last.penalty == 0
    state = apply(state, Throw("blue", 4))
    state = apply(state, Throw("yellow", 4))
    state = apply(state, Throw("blue", 4))
    # the throw-backs come from hand, not from the supply
    assert state.supply == {"yellow": 18, "blue": 16}
    assert state.investigator == "blue"


def test_act1_floor_without_victim_costs_a_penalty_clue() -> None:
    state = play(["yellow", "blue"], prologue((5, 2), {"yellow": (3, 1), "blue": (3, 5)}))
    state = apply(state, Inspect("yellow", 3))
    assert state.owed == {"yellow": 2, "blue": 1}
    assert state.hand == {"yellow": 1, "blue": 1}
    for color in ("yellow", "yellow", "blue"):
        state = apply(state, Throw(color, 6))
    # one yellow came from hand, the penalty from the supply
    assert state.supply == {"yellow": 17, "blue": 18}
    assert state.tower["yellow"][6] == 2
    assert state.investigator == "blue"


def test_both_victims_on_one_floor_is_one_crime_scene_and_act2_follows() -> None:
    state = play(
        ["gray", "yellow", "blue"],
        prologue((5, 5), {"gray": (1, 2), "yellow": (3, 4), "blue": (6, 7)}),
    )
    state = apply(state, Inspect("gray", 5))
    assert state.crime_scenes == (5,)
    assert state.victims_on_sheet[5] == 2
    assert state.phase == "act2"
    assert state.owed == {}
    # Act II starts with the player after the one who found the second victim
    assert state.investigator == "yellow"
    with pytest.raises(IllegalMoveError, match="Act II"):
        apply(state, Inspect("yellow", 3))


def act2_example() -> GameState:
    """Yellow to play in Act II; two gray clues and one brown on floor 3, none of blue's."""
    state = play(
        ["gray", "yellow", "blue", "brown"],
        prologue(
            (5, 5),
            {"gray": (3, 3), "yellow": (6, 0), "blue": (1, 2), "brown": (3, 7)},
        ),
    )
    state = apply(state, Inspect("gray", 5))
    assert state.phase == "act2" and state.investigator == "yellow"
    return state


def test_act2_yellow_suspects_gray_and_blue_on_floor_3() -> None:
    state = apply(act2_example(), Suspect("yellow", ("gray", "blue"), 3))
    assert state.sheet["gray"][3] == 2
    assert state.supply["gray"] == 16
    # Brown was not suspected: nothing on the sheet for him
    assert state.sheet["brown"] == (0,) * 8
    assert state.sheet["blue"] == (0,) * 8
    # one penalty clue for wrongly suspecting Blue, plus the clues to throw back
    assert state.last is not None and state.last.wrongly_suspected == ("blue",)
    assert state.owed == {"gray": 2, "brown": 1, "yellow": 1}
    assert state.tower["gray"][3] == state.tower["brown"][3] == 0


def test_ground_floor_without_own_clue_puts_nothing_on_the_sheet() -> None:
    state = act2_example()
    state = apply(state, Suspect("yellow", ("gray",), 6))  # yellow's own clue there
    for color, n in dict(state.owed).items():
        for _ in range(n):
            state = apply(state, Throw(color, 0))
    # blue's turn; yellow has clues on the ground floor, blue none
    assert state.investigator == "blue"
    assert state.tower["blue"][0] == 0 and state.tower["yellow"][0] == 3
    before_sheet = state.sheet
    state = apply(state, Suspect("blue", ("gray", "yellow"), 0))
    assert state.sheet == before_sheet
    assert state.last is not None and state.last.ground_floor_case
    # one clue per suspect from Blue's supply, and every clue found thrown back
    assert state.owed["blue"] == 2
    assert sum(state.owed.values()) == 2 + sum(state.last.taken_out.values())


def test_ground_floor_with_own_clue_is_an_ordinary_floor() -> None:
    state = play(
        ["gray", "yellow", "blue"],
        prologue((5, 5), {"gray": (1, 2), "yellow": (0, 4), "blue": (0, 7)}),
    )
    state = apply(state, Inspect("gray", 5))
    state = apply(state, Suspect("yellow", ("blue",), 0))
    assert state.sheet["blue"][0] == 1
    assert state.last is not None and not state.last.ground_floor_case
    assert state.owed == {"yellow": 1, "blue": 1}


def test_cover_removes_at_most_the_clues_found() -> None:
    state = act2_example()
    state = apply(state, Suspect("yellow", ("gray",), 3))
    state = apply(state, Throw("gray", 3))
    state = apply(state, Throw("gray", 4))
    state = apply(state, Throw("brown", 0))
    # blue suspects nobody useful; then brown (no clue on floor 4), then gray covers floor 3
    state = apply(state, Suspect("blue", ("brown",), 1))
    for color, n in dict(state.owed).items():
        for _ in range(n):
            state = apply(state, Throw(color, 7))
    state = apply(state, Cover("brown", 4))  # sloppy job: no brown clue on floor 4
    assert state.last is not None and state.last.penalty == 1 and state.last.removed == 0
    for color, n in dict(state.owed).items():
        for _ in range(n):
            state = apply(state, Throw(color, 2))
    assert state.investigator == "gray"
    assert state.tower["gray"][3] == 1 and state.sheet["gray"][3] == 2
    with pytest.raises(IllegalMoveError, match="Covering tracks"):
        apply(state, Cover("gray", 3, remove=2))
    covered = apply(state, Cover("gray", 3))
    assert covered.sheet["gray"][3] == 1
    assert covered.supply["gray"] == state.supply["gray"] + 1
    assert covered.last is not None and covered.last.penalty == 0


def test_short_supply_takes_clues_from_the_exposed_floor_and_ends_the_game() -> None:
    state = act2_example()
    # drain gray's supply down to one clue by hand-building the state
    from dataclasses import replace

    state = replace(state, supply={**state.supply, "gray": 1})
    state = apply(state, Suspect("yellow", ("gray",), 3))
    assert state.sheet["gray"][3] == 2
    assert state.last is not None and state.last.from_floor == {"gray": 1}
    assert state.supply["gray"] == 0
    assert state.phase == "over" and state.owed == {}
    assert final_scores(state).culprits == ("gray",)


def test_ten_clues_on_the_sheet_end_the_game_at_once() -> None:
    from dataclasses import replace

    state = act2_example()
    state = replace(state, sheet={**state.sheet, "blue": (0, 9, 0, 0, 0, 0, 0, 0)})
    state = apply(state, Suspect("yellow", ("gray", "blue"), 1))  # one blue clue on floor 1
    assert state.sheet["blue"][1] == 10
    # over at once: the throw-back and the penalty for gray are dropped
    assert state.phase == "over" and state.owed == {}
    # the sheet clue came from blue's supply; the cube found stays in hand
    assert state.supply["blue"] == 17 and state.hand["blue"] == 1
    with pytest.raises(IllegalMoveError, match="game is over"):
        apply(state, Throw("blue", 1))


@pytest.mark.parametrize(
    ("event", "rule"),
    [
        (Inspect("yellow", 3), "Act II"),
        (Suspect("blue", ("gray",), 3), "Turn order"),
        (Suspect("yellow", ("yellow",), 3), "not himself"),
        (Suspect("yellow", (), 3), "at least one"),
        (Suspect("yellow", ("gray", "gray"), 3), "once"),
        (Suspect("yellow", ("white",), 3), "not playing"),
        (Suspect("yellow", ("gray",), 8), "floors are 0"),
        (Throw("gray", 3), "no cube is owed"),
        (Throw("red", 3), "no cube is owed"),
        (Cover("white", 3), "not playing"),
    ],
)
def test_illegal_actions_name_the_rule_and_leave_state_unchanged(event: object, rule: str) -> None:
    state = act2_example()
    snapshot = state.to_json()
    with pytest.raises(IllegalMoveError, match=rule):
        apply(state, event)  # type: ignore[arg-type]
    assert state.to_json() == snapshot
