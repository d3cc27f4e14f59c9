"""Random legal games played to their end, and random illegal events refused."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from hostapp.errors import IllegalMoveError
from hostapp.games.arosa import (
    PLAYER_COLORS,
    Cover,
    Event,
    GameState,
    Inspect,
    Suspect,
    Throw,
    apply,
    cover_limit,
    final_scores,
    legal_actions,
    new_game,
    prompt,
    throw_queue,
)

MAX_EVENTS = 1500

seatings = st.permutations(PLAYER_COLORS).flatmap(
    lambda colors: st.integers(2, 6).map(lambda n: list(colors[:n]))
)


def check_invariants(state: GameState) -> None:
    for color in state.players:
        total = (
            state.supply[color] + sum(state.tower[color]) + sum(state.sheet[color])
        ) + state.hand[color]
        assert total == 20, (color, state.to_json())
        assert state.supply[color] >= 0 and state.hand[color] >= 0
        assert min(state.tower[color]) >= 0 and min(state.sheet[color]) >= 0
    red = sum(state.tower["red"]) + state.victims_found
    if state.phase == "prologue":
        assert red + state.owed.get("red", 0) == 2
    else:
        assert red == 2
    assert all(n > 0 for n in state.owed.values())
    assert sum(state.victims_on_sheet) == 2 or state.phase in ("prologue", "act1", "over")
    queue = throw_queue(state)
    assert len(queue) == sum(state.owed.values())


def end_due(state: GameState) -> bool:
    return any(sum(v) >= 10 for v in state.sheet.values()) or any(
        n == 0 for n in state.supply.values()
    )


def play_random(players: list[str], rng: random.Random) -> list[GameState]:
    state = new_game(players)
    states = [state]
    for _ in range(MAX_EVENTS):
        if state.is_over:
            break
        options = legal_actions(state)
        assert options, "a game that is not over always has a legal event"
        before = state
        state = apply(state, rng.choice(options))
        check_invariants(state)
        if before.phase != "over":
            # the game ends exactly when an end condition holds, and at once
            assert (state.phase == "over") == end_due(state)
        if state.phase == "over":
            assert state.owed == {}
        states.append(state)
    return states


@settings(max_examples=30, deadline=None)
@given(players=seatings, seed=st.integers(0, 2**32 - 1))
def test_random_legal_games_keep_every_cube_and_end_as_specified(
    players: list[str], seed: int
) -> None:
    states = play_random(players, random.Random(seed))
    final = states[-1]
    if final.is_over:
        scores = final_scores(final)
        assert set(scores.suspicion) == set(players)
        assert scores.culprits and scores.winners
        assert prompt(final).kind == "over"
        assert legal_actions(final) == []
    # act II only after both victims were found, and never back
    phases = [s.phase for s in states]
    order = {"prologue": 0, "act1": 1, "act2": 2, "over": 3}
    assert [order[p] for p in phases] == sorted(order[p] for p in phases)
    for state in states:
        if state.phase == "act2":
            assert state.victims_found == 2


def random_event(state: GameState, rng: random.Random) -> Event:
    """Any event at all, legal or not: wrong kinds, players, colours and floors."""
    colors = [*PLAYER_COLORS, "red"]
    floor = rng.choice([-1, 0, 1, 2, 3, 4, 5, 6, 7, 8])
    kind = rng.randrange(4)
    if kind == 0:
        return Throw(rng.choice(colors), floor)
    by = rng.choice(list(PLAYER_COLORS))
    if kind == 1:
        return Inspect(by, floor)
    if kind == 2:
        suspects = tuple(rng.choice(colors) for _ in range(rng.randrange(0, 4)))
        return Suspect(by, suspects, floor)
    return Cover(by, floor, rng.choice([None, -1, 0, 1, 2, 3]))


def is_listed_legal(state: GameState, event: Event) -> bool:
    legal = legal_actions(state)
    if isinstance(event, Suspect):
        seat = {p: i for i, p in enumerate(state.players)}
        if len(set(event.suspects)) != len(event.suspects) or not set(event.suspects) <= set(seat):
            return False
        event = Suspect(event.by, tuple(sorted(event.suspects, key=seat.__getitem__)), event.floor)
    if isinstance(event, Cover) and event.remove is None and event.floor in range(8):
        event = Cover(event.by, event.floor, cover_limit(state, event.floor))
    return event in legal


@settings(max_examples=30, deadline=None)
@given(players=seatings, seed=st.integers(0, 2**32 - 1))
def test_random_events_are_applied_exactly_when_legal(players: list[str], seed: int) -> None:
    rng = random.Random(seed)
    states = play_random(players, rng)
    for state in [*states[::7], states[-1]]:
        for _ in range(12):
            event = random_event(state, rng)
            snapshot = state.to_json()
            try:
                apply(state, event)
                applied = True
            except IllegalMoveError as exc:
                applied = False
                assert str(exc) and "\n" not in str(exc)
            assert applied == is_listed_legal(state, event), (event, state.to_json())
            assert state.to_json() == snapshot


@settings(max_examples=20, deadline=None)
@given(players=seatings, seed=st.integers(0, 2**32 - 1))
def test_state_survives_a_json_round_trip(players: list[str], seed: int) -> None:
    for state in play_random(players, random.Random(seed))[::25]:
        assert GameState.from_json(state.to_json()) == state


@settings(max_examples=20, deadline=None)
@given(players=seatings, seed=st.integers(0, 2**32 - 1))
def test_random_confirmations_keep_every_cube(players: list[str], seed: int) -> None:
    """Actions that carry what the players saw (any count the tower can hold) keep the books."""
    rng = random.Random(seed)
    state = new_game(players)
    for _ in range(MAX_EVENTS):
        if state.is_over:
            break
        event = rng.choice(legal_actions(state))
        if not isinstance(event, Throw):
            found = {
                color: rng.randint(0, sum(column))
                for color, column in state.tower.items()
                if sum(column) and rng.random() < 0.5
            }
            if isinstance(event, Cover):
                event = Cover(event.by, event.floor, None, found)
            elif isinstance(event, Suspect):
                event = Suspect(event.by, event.suspects, event.floor, found)
            else:
                event = Inspect(event.by, event.floor, found)
        state = apply(state, event)
        check_invariants(state)
