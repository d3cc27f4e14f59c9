"""With the German UI, game file and replay errors reach the user as German sentences."""

from __future__ import annotations

from pathlib import Path

import pytest

from hostapp.errors import JournalError, ScriptError, TowerearError
from hostapp.games.arosa.script import load_script
from hostapp.games.arosa.session import replay
from hostapp.games.export import score_sheet_html


def test_a_bad_script_is_named_in_german(tmp_path: Path, german: None) -> None:
    path = tmp_path / "game.json"
    path.write_text('{"players": ["blue", "white"], "events": [{"do": "dance"}]}')
    with pytest.raises(ScriptError) as info:
        load_script(path)
    assert str(info.value).startswith(
        f"{path} ist kein gültiges Skript: Ereignis 0: 'do' muss eines von "
    )
    assert str(info.value).endswith(" sein, nicht 'dance'")


def test_a_saved_game_that_cannot_be_replayed_is_named_in_german(german: None) -> None:
    with pytest.raises(JournalError) as info:
        replay(["blue", "blue"], [], "g1.tej")
    assert str(info.value) == (
        "g1.tej hat keine gültige Sitzreihenfolge: jede Spielerfarbe darf nur einmal mitspielen"
    )


def test_an_unknown_score_sheet_is_named_in_german(german: None) -> None:
    with pytest.raises(TowerearError) as info:
        score_sheet_html({"game": "chess"})
    assert str(info.value) == "Für ein Spiel der Art 'chess' gibt es kein Wertungsblatt."
