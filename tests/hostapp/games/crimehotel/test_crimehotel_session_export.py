"""Crime Hotel through the journal (resume, undo) and its exports."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hostapp.errors import JournalError
from hostapp.games.cardsession import CardGameSession
from hostapp.games.crimehotel import CrimeHotelError, CrimeHotelGame
from hostapp.games.export import ExportError, score_sheet_html, write_html, write_json
from hostapp.journal import list_games

SETUP = {"type": "new_game", "players": ["Ann", "<Ben>", "Cid", "Dora"], "rules": {}}
TRICK = {"type": "trick", "cards": {"Ann": 21, "<Ben>": 22, "Cid": 29, "Dora": 11}}


def start() -> CardGameSession[CrimeHotelGame]:
    return CardGameSession.start("crimehotel", CrimeHotelGame, SETUP, "Crime Hotel test")


def test_events_survive_a_restart_and_undo_is_journalled() -> None:
    session = start()
    session.apply({"type": "deal", "face_up": [38, 39]})
    session.apply(TRICK)
    session.apply({"type": "guess", "player": "Cid", "space": "R25"})
    session.undo()
    game_id = session.game_id
    session.close()  # as if the app had crashed here: everything is on disk

    resumed = CardGameSession.resume("crimehotel", CrimeHotelGame, game_id)
    assert resumed.engine.phase == "place" and resumed.engine.pending[0].player == "Cid"
    assert [g.game_id for g in list_games()] == [game_id]
    with pytest.raises(JournalError, match="open in another window"):
        CardGameSession.resume("crimehotel", CrimeHotelGame, game_id)
    resumed.close()
    with pytest.raises(JournalError, match="not a mugshots game"):
        CardGameSession.resume("mugshots", CrimeHotelGame, game_id)


def test_refused_event_is_not_journalled() -> None:
    session = start()
    with pytest.raises(CrimeHotelError):
        session.apply({"type": "deal", "face_up": [38]})
    assert session.journal is not None and len(session.journal.events) == 1
    assert not session.can_undo()
    session.undo()  # the set-up is never undone
    assert len(session.engine.events) == 1
    session.close()


def test_bad_setup_creates_no_file() -> None:
    with pytest.raises(CrimeHotelError):
        bad_setup = {"type": "new_game", "players": []}
        CardGameSession.start("crimehotel", CrimeHotelGame, bad_setup, "x")
    assert list_games() == []


def test_exports_hold_the_scored_game(tmp_path: Path) -> None:
    game = CrimeHotelGame.replay([SETUP, {"type": "deal", "face_up": [38, 39]}, TRICK])
    summary: dict[str, Any] = game.summary()
    write_json(tmp_path / "game.json", summary, game.events)
    loaded = json.loads((tmp_path / "game.json").read_text("utf-8"))
    assert loaded["summary"] == summary
    assert CrimeHotelGame.replay(loaded["events"]).summary() == summary
    write_html(tmp_path / "sheet.html", summary)
    html = (tmp_path / "sheet.html").read_text("utf-8")
    assert "&lt;Ben&gt;" in html and "<Ben>" not in html
    assert "Investigation 1" in html and "not finished" in html
    with pytest.raises(ExportError, match="no score sheet"):
        score_sheet_html({"game": "chess"})
    with pytest.raises(ExportError, match="Cannot write"):
        write_html(tmp_path / "missing-dir" / "sheet.html", summary)


def test_score_sheet_shows_a_tie() -> None:
    game = CrimeHotelGame.replay([{"type": "new_game", "players": ["Ann", "Ben", "Cid"]}])
    summary = game.summary()
    summary["winners"] = list(game.winners())  # nobody has scored: all three tie
    html = score_sheet_html(summary)
    assert "Tie between Ann, Ben, Cid" in html
    assert html.count('<tr class="winner">') == 3


def test_event_the_disk_refuses_is_not_kept() -> None:
    session = start()
    assert session.journal is not None
    session.journal.close()  # stands in for a disk that stops accepting writes
    with pytest.raises(JournalError, match="closed"):
        session.apply({"type": "deal", "face_up": [38, 39]})
    assert session.engine.phase == "deal" and len(session.engine.events) == 1
