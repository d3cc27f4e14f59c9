"""Landings just after the tower is closed are throws; those that came to rest before, not."""

from __future__ import annotations

from pathlib import Path

from pytestqt.qtbot import QtBot

from dsp.detect.events import Closed, Landing, Lift
from hostapp.ui.arosa.controller import ArosaController
from hostapp.ui.arosa.journal_adapter import JournalGameStore


def _landing(t: float, floor: int) -> Landing:
    return Landing(t=t, t_decided=t + 0.3, floor=floor, cubes=1, confidence=0.9, source="load")


def test_a_cube_thrown_back_just_after_the_close_is_recorded(qtbot: QtBot, tmp_path: Path) -> None:
    # The detector tells the modules' jolt from a cube (docs/detection.md,
    # "Handled, not thrown"); the game takes what it tells once closed.
    game = ArosaController(JournalGameStore(tmp_path))
    game.new_game(["yellow", "blue", "brown"], "yellow", "sensors")
    game.on_detection_events([Lift(t=5.0, t_decided=5.1, exposed=4)])
    logged = len(game.public_log)
    game.on_detection_events([_landing(7.0, 2)])  # while open: hands, no throw
    assert len(game.public_log) == logged
    game.on_detection_events([Closed(t=10.0, t_decided=10.1), _landing(9.9, 3)])
    assert len(game.public_log) == logged  # came to rest before the close
    game.on_detection_events([_landing(10.3, 3)])
    assert len(game.public_log) == logged + 1


def test_a_stop_weighed_late_is_no_throw_and_moves_the_cube_in_the_tower_belief(
    qtbot: QtBot, tmp_path: Path
) -> None:
    game = ArosaController(JournalGameStore(tmp_path))
    game.new_game(["yellow", "blue", "brown"], "yellow", "sensors")
    game.on_detection_events([_landing(1.0, 5), _landing(2.0, 1)])  # the two victims
    request = game.next_throw()
    assert request is not None and request.color != "red"
    suspected = Landing(t=3.0, t_decided=3.3, floor=2, cubes=1, confidence=0.9,
                        maybe_stopped_on=5, stop_chance=0.4)
    game.on_detection_events([suspected])
    logged, owed = len(game.public_log), game.next_throw()
    model = game.tower_belief.model
    assert 0.3 < model.expected_counts()[request.color][5] < 0.5
    assert 0.3 < model.expected_counts()["red"][2] < 0.5
    game.on_detection_events([Landing(t=2.9, t_decided=3.9, floor=5, cubes=1, confidence=0.9,
                                      knocked_down_to=2)])
    assert len(game.public_log) == logged and game.next_throw() == owed
    assert model.expected_counts()[request.color][5] > 0.85
    assert model.expected_counts()["red"][2] > 0.85
