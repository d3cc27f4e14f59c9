"""A tower shaken by what it stands on is told in the source bar."""

from __future__ import annotations

from pathlib import Path

from pytestqt.qtbot import QtBot
from ui_game_driver import replayed

from hostapp.i18n import set_language
from hostapp.ui.source_bar import warning_line
from hostapp.ui.streaming import SourceHealth, StreamStatus
from tests.scripts import TOOLS, load_script

# Cross-check model AM (docs/crosscheck.md, run 73): a tower played in a
# night train's dining car, whose quick series start with the train moving.
model_am = load_script(TOOLS / "crosscheck_am" / "make_recordings_am.py", "crosscheck_am_for_ui")


def _status(shaking: bool) -> StreamStatus:
    return StreamStatus("serial", SourceHealth(connected=True), None, None, 0.0,
                        shaking=shaking)


def test_the_warning_says_the_shaking_is_taken_out() -> None:
    assert warning_line(_status(False)) == ""
    assert warning_line(_status(True)).startswith(
        "The tower shakes with what it stands on (a moving train or boat, a machine nearby)")
    set_language("de")
    try:
        assert warning_line(_status(True)).startswith("Der Turm wird von seiner Unterlage")
    finally:
        set_language("en")


def test_the_source_bar_tells_a_tower_on_a_moving_train(
    qtbot: QtBot, journal_dir: Path, tmp_path: Path
) -> None:
    recording, _ = model_am.make_recording(1, "rapid", 15.0, tmp_path)
    errors: list[str] = []
    app, bar = replayed(qtbot, journal_dir, recording, errors)
    qtbot.waitUntil(lambda: "The tower shakes" in bar.warning_label.text(), timeout=20_000)
    assert bar.warning_label.isVisible()
    assert errors == []
    app.close()
