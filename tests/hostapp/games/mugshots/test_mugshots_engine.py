"""Mugshot-game engine tests, built from the rule text's own sentences."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from hostapp.games.mugshots import (
    ANIMALS,
    COLOURS,
    PATTERNS,
    Card,
    Goal,
    MugshotsError,
    MugshotsGame,
    NameBook,
    ScorePad,
    default_name_book,
    load_name_book,
    matching_clues,
)
from hostapp.games.mugshots.goals import complete_sets
from hostapp.games.mugshots.namebook import save_name_book, user_name_book_path

BOOK = default_name_book()


def card(animal: str, pattern: str, colour: str, name: str) -> dict[str, str]:
    return {"animal": animal, "pattern": pattern, "colour": colour, "name": name}


OWN = card("owl", "wood", "pink", "Bruno")
# Shares nothing with OWN: another animal, pattern, colour and a name Bruno cannot be.
STRANGERS = [
    card("bear", "bricks", "yellow", "Rosa"),
    card("goat", "wavy", "orange", "Lola"),
    card("pig", "round tiles", "turquoise", "Lotte"),
    card("elephant", "diamond tiles", "purple", "Rocco"),
    card("bear", "wavy", "turquoise", "Ro*"),
]


def new_game(players: tuple[str, ...] = ("Ann", "Ben"), **extra: Any) -> MugshotsGame:
    goals = extra.pop("goals", None)
    event: dict[str, Any] = {
        "type": "new_game",
        "players": list(players),
        "rules": extra,
        "names": BOOK.to_dict(),
    }
    if goals:
        event["goals"] = goals
    return MugshotsGame.replay([event])


def test_clue_types_have_five_values_and_seven_names() -> None:
    """"vier unterschiedliche Hinweisarten mit jeweils fünf Möglichkeiten [...] Der
    Name bildet hier die Ausnahme, denn es gibt sieben zur Auswahl."
    """
    assert len(ANIMALS) == len(PATTERNS) == len(COLOURS) == 5
    assert len(BOOK.names) == 7


def test_ink_blot_needs_only_the_visible_part() -> None:
    """"Auf einigen Karten befindet sich auf Teilen des Namens ein Tintenfleck. Hier
    genügt es dann, wenn der sichtbare Teil eine Übereinstimmung darstellt."
    """
    assert BOOK.names_match("Rosa", "Rosa")
    assert not BOOK.names_match("Rosa", "Rocco")
    assert BOOK.names_match("Ro*", "Rocco")
    assert BOOK.names_match("Ro*", "Rosa")
    assert not BOOK.names_match("Ro*", "Lola")
    # Both blotted: some name must fit what is visible on both ("Rosa").
    assert BOOK.names_match("Ro*", "*a")
    assert not BOOK.names_match("Lo*", "*uno")


def test_name_book_rejects_blots_that_do_not_fit() -> None:
    with pytest.raises(MugshotsError, match="does not show part"):
        NameBook.from_dict({"names": [{"name": "Rosa", "blotted": ["Li*"]}]})
    with pytest.raises(MugshotsError, match="twice"):
        NameBook.from_dict({"names": [{"name": "Rosa"}, {"name": "rosa"}]})


def test_user_name_book_is_edited_and_a_corrupt_one_reported() -> None:
    book = NameBook.from_dict({"names": [{"name": "Kuno", "blotted": ["Ku*"], "power": "swap"}]})
    save_name_book(book)
    loaded, warning = load_name_book()
    assert warning is None and loaded.names == ("Kuno",) and loaded.entries[0].power == "swap"
    user_name_book_path().write_text("{not json", "utf-8")
    fallback, warning = load_name_book()
    assert fallback.names == BOOK.names
    assert warning is not None and "default names" in warning


def test_identify_success_takes_both_cards() -> None:
    """"Ist dies der Fall, erhält die Person beide Fahndungsfotos." """
    game = new_game()
    game.apply({"type": "draw", "card": OWN})
    game.apply({"type": "identify", "clue": "animal",
                "card": card("owl", "bricks", "yellow", "Rosa")})
    assert len(game.archive["Ann"]) == 2
    assert game.centre == 4  # three left face down, refilled to four
    assert game.active_player == "Ben" and game.step == "draw"


def test_identify_match_only_in_unnamed_clue_fails() -> None:
    """"Gibt es keine Übereinstimmung oder gibt es eine in einer Hinweisart, die nicht
    explizit angesagt wurde, ist die Identifizierung gescheitert. [...] die eigene
    gezogene Karte wird ebenfalls umgedreht und den anderen Karten der Tischmitte
    hinzugefügt."
    """
    game = new_game()
    game.apply({"type": "draw", "card": OWN})
    game.apply({"type": "identify", "clue": "colour",
                "card": card("owl", "bricks", "yellow", "Rosa")})
    assert game.archive["Ann"] == []
    assert game.centre == 5
    assert game.results[-1].reason.startswith("match only in an unnamed clue")
    assert game.active_player == "Ben"


@pytest.mark.parametrize(("strict", "success"), [(False, True), (True, False)])
def test_extra_match_in_unnamed_clue_depends_on_reading(strict: bool, success: bool) -> None:
    """The sentence read strictly: any match in an unnamed type fails the attempt."""
    game = new_game(strict_single_match=strict)
    game.apply({"type": "draw", "card": OWN})
    game.apply({"type": "identify", "clue": "animal",
                "card": card("owl", "wood", "yellow", "Rosa")})
    assert game.results[-1].success is success


def test_name_identification_uses_the_blot_rule() -> None:
    game = new_game()
    game.apply({"type": "draw", "card": card("owl", "wood", "pink", "Ro*")})
    game.apply({"type": "identify", "clue": "name",
                "card": card("bear", "bricks", "yellow", "Rocco")})
    assert game.results[-1].success


def test_double_identification_needs_two_matches() -> None:
    """"Sollte der Person Möglichkeit b) gewählt haben, muss sie die Identifizierung
    nacheinander mit zwei Karten aus der Tischmitte durchführen. Sie ist nur dann
    erfolgreich, falls sie jedes Mal eine Übereinstimmung findet."
    """
    game = new_game()
    second = card("goat", "bricks", "orange", "Lola")
    game.apply({"type": "draw", "card": OWN})
    game.apply({"type": "draw", "card": second})
    game.apply({"type": "identify", "clue": "animal", "own": 1,
                "card": card("goat", "wavy", "yellow", "Rosa")})
    assert game.step == "identify2" and game.face_down == 3
    with pytest.raises(MugshotsError, match="one centre card only"):
        game.apply({"type": "identify", "clue": "animal", "own": 1, "card": OWN})
    matching_pattern = card("pig", "wood", "purple", "Lotte")
    game.apply({"type": "identify", "clue": "pattern", "card": matching_pattern})
    assert len(game.archive["Ann"]) == 4 and game.centre == 4

    # Ben: first match, then a miss; both drawn cards go face down to the centre.
    game.apply({"type": "draw", "card": OWN})
    game.apply({"type": "draw", "card": second})
    game.apply({"type": "identify", "clue": "colour", "own": 0, "card": OWN})
    game.apply({"type": "identify", "clue": "colour", "card": card("pig", "wood", "pink", "Rosa")})
    assert game.archive["Ben"] == [] and game.centre == 6
    assert game.results[-1].action == "double" and not game.results[-1].success


def test_challenge_needs_four_cards_without_any_match() -> None:
    """"Dazu muss die Person nacheinander mindestens vier Fahndungsfotos aus der
    Tischmitte aufdecken. Stimmt keine Hinweisart überein, geht sie zum nächsten Foto
    über [...] War sie erfolgreich, kann sie alle fünf Fahndungsfotos ihrem
    persönlichen Stapel hinzufügen (oder weitere Karten aufdecken)."
    """
    game = new_game()
    game.apply({"type": "draw", "card": OWN})
    for stranger in STRANGERS[:3]:
        game.apply({"type": "challenge", "card": stranger})
    with pytest.raises(MugshotsError, match="at least 4"):
        game.apply({"type": "collect"})
    game.apply({"type": "challenge", "card": STRANGERS[3]})
    with pytest.raises(MugshotsError, match="No face-down card"):
        game.apply({"type": "challenge", "card": STRANGERS[4]})
    game.apply({"type": "collect"})
    assert len(game.archive["Ann"]) == 5 and game.centre == 4


def test_challenge_may_go_on_and_fails_on_any_match() -> None:
    game = new_game()
    # Ann fails an identification, so the centre holds five face-down cards.
    game.apply({"type": "draw", "card": OWN})
    game.apply({"type": "identify", "clue": "animal", "card": STRANGERS[0]})
    assert game.centre == 5
    game.apply({"type": "draw", "card": OWN})
    for stranger in STRANGERS[:4]:
        game.apply({"type": "challenge", "card": stranger})
    # Going on past four risks it all: "Br*" may be Bruno, a name match.
    game.apply({"type": "challenge", "card": card("bear", "bricks", "yellow", "Br*")})
    result = game.results[-1]
    assert not result.success and "name" in result.reason
    assert game.archive["Ben"] == [] and game.centre == 6


def test_game_ends_at_ten_archived_cards_and_scores_one_per_card() -> None:
    """"Das Spiel endet sofort, wenn eine Person mindestens 10 Fahndungsfotos in ihrem
    Stapel besitzt. Jedes Foto zählt als 1 Punkt und die Person mit den meisten Punkten
    gewinnt."
    """
    game = new_game()
    for _turn in range(4):  # Ann: four successes of two cards; Ben fails each time
        game.apply({"type": "draw", "card": OWN})
        game.apply({"type": "identify", "clue": "animal", "card": OWN})
        game.apply({"type": "draw", "card": OWN})
        game.apply({"type": "identify", "clue": "animal", "card": STRANGERS[0]})
    game.apply({"type": "draw", "card": OWN})
    game.apply({"type": "identify", "clue": "pattern", "card": OWN})
    assert game.step == "over"
    assert game.scores() == {"Ann": 10, "Ben": 0}
    assert game.winners() == ("Ann",)
    with pytest.raises(MugshotsError, match="cannot draw"):
        game.apply({"type": "draw", "card": OWN})


def test_goal_cards_add_points() -> None:
    """"In der Modul-Variante erhält jede Person am Anfang des Spiels eine Zielkarte,
    die ihr am Spielende Extrapunkte gibt, zum Beispiel für Fahndungsfotos mit einem
    bestimmten Hintergrund oder Namen oder für Sets aus unterschiedlichen Tieren oder
    Farben."
    """
    cards = [Card.from_dict(c, BOOK) for c in [OWN, *STRANGERS]]
    assert Goal("pattern", "wavy", 2).score(cards, BOOK) == 4
    assert Goal("colour", "turquoise", 1).score(cards, BOOK) == 2
    # "Ro*" may be Rosa: a blotted name counts when the goal's name fits.
    assert Goal("name", "Rosa", 3).score(cards, BOOK) == 6
    assert Goal("animal_set", points=5, set_size=5).score(cards, BOOK) == 5
    assert Goal("colour_set", points=1, set_size=3).score(cards, BOOK) == 2
    wood_goal = {"Ann": [{"kind": "pattern", "value": "wood", "points": 2}]}
    with pytest.raises(MugshotsError, match="module variant"):
        new_game(goals=wood_goal)
    game = MugshotsGame.replay([{
        "type": "new_game", "players": ["Ann", "Ben"], "rules": {"goals": True},
        "names": BOOK.to_dict(), "goals": wood_goal,
    }])
    game.apply({"type": "draw", "card": OWN})
    game.apply({"type": "identify", "clue": "animal", "card": card("owl", "wood", "pink", "Lola")})
    assert game.scores() == {"Ann": 2 + 2 * 2, "Ben": 0}


@pytest.mark.parametrize(
    ("counts", "size", "sets"),
    [({}, 5, 0), ({"a": 3, "b": 3, "c": 3, "d": 3, "e": 1}, 5, 1),
     ({"a": 2, "b": 2, "c": 2}, 3, 2), ({"a": 9, "b": 1}, 2, 1), ({"a": 4, "b": 4, "c": 4}, 2, 6)],
)
def test_complete_sets(counts: dict[str, int], size: int, sets: int) -> None:
    assert complete_sets(counts, size) == sets


def test_bad_cards_and_events_rejected_without_change() -> None:
    game = new_game()
    before = game.summary()
    for bad in (
        {"type": "draw", "card": card("cat", "wood", "pink", "Rosa")},
        {"type": "draw", "card": card("owl", "wood", "pink", "Zorro")},
        {"type": "identify", "clue": "animal", "card": OWN},
        {"type": "collect"},
        {"type": "fly"},
    ):
        with pytest.raises(MugshotsError):
            game.apply(bad)
    assert game.summary() == before and len(game.events) == 1
    game.apply({"type": "draw", "card": OWN})
    with pytest.raises(MugshotsError, match="not a clue type"):
        game.apply({"type": "identify", "clue": "smell", "card": OWN})


def test_random_games_keep_the_card_count() -> None:
    """Every card is somewhere: centre, archives, or (mid-turn) the clue area."""
    rng = random.Random(5)
    game = new_game(("Ann", "Ben", "Cid"))
    refilled = 0
    while game.step != "over":
        before = game.centre
        game.apply({"type": "draw", "card": random_card(rng)})
        action = rng.choice(["identify", "double", "challenge"])
        if action == "double":
            game.apply({"type": "draw", "card": random_card(rng)})
        if action == "challenge":
            while game.step == "challenge" or len(game.turn.revealed) == 0:
                if len(game.turn.revealed) >= 4 and (game.face_down == 0 or rng.random() < 0.5):
                    game.apply({"type": "collect"})
                    break
                game.apply({"type": "challenge", "card": random_card(rng)})
                if game.step != "challenge":
                    break
        else:
            while game.step in ("choose", "identify2"):
                game.apply({"type": "identify", "clue": rng.choice(["animal", "colour"]),
                            "card": random_card(rng)})
        won = game.results[-1].cards_won
        drawn = 2 if action == "double" else 1
        after_turn = before - (won - drawn if won else 0) + (0 if won else drawn)
        refilled += max(0, 4 - after_turn)
        assert game.centre == max(after_turn, 4)
    total_archived = sum(len(cards) for cards in game.archive.values())
    assert max(len(cards) for cards in game.archive.values()) >= 10
    assert sum(game.scores().values()) == total_archived
    assert json.loads(json.dumps(game.summary()))["over"] is True
    assert MugshotsGame.replay(game.events).summary() == game.summary()


def random_card(rng: random.Random) -> dict[str, str]:
    return card(rng.choice(ANIMALS), rng.choice(PATTERNS), rng.choice(COLOURS),
                rng.choice(BOOK.shown_forms))


def test_matching_clues_lists_every_agreement() -> None:
    a = Card.from_dict(OWN, BOOK)
    b = Card.from_dict(card("owl", "wood", "yellow", "Br*"), BOOK)
    assert matching_clues(a, b, BOOK) == ("animal", "pattern", "name")


def test_score_pad_counts_and_corrects(tmp_path: Path) -> None:
    pad = ScorePad.replay([{"type": "new_pad", "players": ["Ann", "Ben"]}])
    pad.apply({"type": "archive", "player": "Ann", "cards": 5})
    pad.apply({"type": "archive", "player": "Ben", "cards": 2})
    pad.apply({"type": "archive", "player": "Ben", "cards": -1})
    with pytest.raises(MugshotsError, match="fewer than 0"):
        pad.apply({"type": "archive", "player": "Ben", "cards": -2})
    assert not pad.over
    pad.apply({"type": "archive", "player": "Ann", "cards": 5})
    assert pad.over and pad.winners() == ("Ann",)
    with pytest.raises(MugshotsError, match="over"):
        pad.apply({"type": "archive", "player": "Ben", "cards": 1})
    assert ScorePad.replay(pad.events).summary() == pad.summary()


@pytest.mark.parametrize(
    ("rules", "message"),
    [
        (7, "settings must be"),
        (["goals"], "settings must be"),
        ({"goals": "yes"}, "goals must be true or false"),
        ({"strict_single_match": 1}, "strict_single_match must be true or false"),
    ],
)
def test_settings_of_the_wrong_kind_are_refused_in_one_sentence(
    rules: object, message: str
) -> None:
    event = {"type": "new_game", "players": ["Ann", "Ben"], "rules": rules, "names": BOOK.to_dict()}
    with pytest.raises(MugshotsError, match=message) as caught:
        MugshotsGame.replay([event])
    assert "\n" not in str(caught.value)
