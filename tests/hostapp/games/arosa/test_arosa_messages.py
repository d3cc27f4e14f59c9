"""Every rule message of the engine has a German text with the same placeholders."""

from __future__ import annotations

import ast
import string
from pathlib import Path

import pytest

import hostapp.games.arosa.engine as engine
from hostapp.errors import IllegalMoveError
from hostapp.games.arosa import Throw, apply, new_game
from hostapp.games.arosa.events import Inspect
from hostapp.locale.de_arosa_rules import MESSAGES


def engine_messages() -> set[str]:
    tree = ast.parse(Path(engine.__file__).read_text())
    found = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("_illegal", "tr")
            and node.args
            and isinstance(node.args[0], ast.Constant)
        ):
            found.add(node.args[0].value)
    return found


def fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def test_catalog_covers_exactly_the_engine_messages() -> None:
    messages = engine_messages()
    assert len(messages) > 15
    assert messages == set(MESSAGES)
    for english, german in MESSAGES.items():
        assert fields(english) == fields(german), english


@pytest.mark.usefixtures("german")
def test_rule_violations_read_in_german() -> None:
    with pytest.raises(IllegalMoveError, match="Etage 9 gibt es nicht"):
        apply(new_game(["blue", "gray"]), Throw("red", 9))


@pytest.mark.usefixtures("german")
def test_colours_in_rule_violations_read_in_german() -> None:
    with pytest.raises(IllegalMoveError) as refused:
        apply(new_game(["blue", "white"]), Inspect(by="white", floor=2))
    assert "noch fällig: 2 Rot, 2 Blau, 2 Weiß" in str(refused.value)
    with pytest.raises(IllegalMoveError) as refused:
        apply(new_game(["blue", "white"]), Throw("green", 2))
    assert "die Spieler sind Blau, Weiß" in str(refused.value)
    assert "green" in str(refused.value)  # not a colour of the game: as typed


def test_colours_in_rule_violations_stay_english_words_in_english() -> None:
    with pytest.raises(IllegalMoveError) as refused:
        apply(new_game(["blue", "white"]), Inspect(by="white", floor=2))
    assert "(still owed: 2 red, 2 blue, 2 white)" in str(refused.value)
