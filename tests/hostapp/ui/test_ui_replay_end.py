"""A recording replayed to its end says so in the source bar, not that a cable was lost."""

from __future__ import annotations

from pathlib import Path

from pytestqt.qtbot import QtBot
from ui_game_driver import replayed

from tests.scripts import TOOLS, load_script

model_ah = load_script(TOOLS / "crosscheck_ah" / "make_recordings_ah.py", "ah_for_replay")


def test_a_replay_read_to_its_end_says_so_and_is_no_lost_cable(
    qtbot: QtBot, journal_dir: Path, tmp_path: Path
) -> None:
    recording, _ = model_ah.make_recording(3, "single", 10.0, tmp_path)
    errors: list[str] = []
    app, bar = replayed(qtbot, journal_dir, recording, errors)
    qtbot.waitUntil(lambda: "replay finished" in bar.state_label.text(), timeout=10_000)
    assert "NOT CONNECTED" not in bar.state_label.text()
    assert "#b00000" not in bar.state_label.styleSheet()
    assert errors == []
    app.close()
