"""Mugshot-game score sheets and the score pad through the journal."""

from __future__ import annotations

from hostapp.games.cardsession import CardGameSession
from hostapp.games.export import score_sheet_html
from hostapp.games.mugshots import MugshotsGame, ScorePad, default_name_book

OWL = {"animal": "owl", "pattern": "wood", "colour": "pink", "name": "Rosa"}


def test_mugshots_sheet_shows_cards_goal_points_and_winner() -> None:
    game = MugshotsGame.replay([
        {"type": "new_game", "players": ["Ann", "Ben"], "rules": {"goals": True},
         "names": default_name_book().to_dict(),
         "goals": {"Ann": [{"kind": "colour", "value": "pink", "points": 3}]}},
        {"type": "draw", "card": OWL},
        {"type": "identify", "clue": "animal", "card": OWL},
    ])
    html = score_sheet_html(game.summary())
    # Ann: 2 cards + 2 pink cards x 3 goal points = 8.
    assert '<tr><td class="name">Ann</td><td>2</td><td>6</td><td>8</td></tr>' in html
    assert "The game is not finished." in html
    assert "1 turns played, 1 of them successful." in html


def test_score_pad_resumes_from_its_journal() -> None:
    session = CardGameSession.start(
        "mugshots-pad", ScorePad, {"type": "new_pad", "players": ["Ann", "Ben"]}, "pad"
    )
    session.apply({"type": "archive", "player": "Ben", "cards": 2})
    session.apply({"type": "archive", "player": "Ben", "cards": 2})
    session.undo()
    game_id = session.game_id
    session.close()
    resumed = CardGameSession.resume("mugshots-pad", ScorePad, game_id)
    assert resumed.engine.counts == {"Ann": 0, "Ben": 2}
    assert "Ben" in score_sheet_html(resumed.engine.summary())
    resumed.close()
