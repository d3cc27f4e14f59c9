"""A load cell that stops answering now and then is named in the source bar."""

from __future__ import annotations

from pathlib import Path

from pytestqt.qtbot import QtBot
from ui_game_driver import replayed

from hostapp.i18n import set_language
from hostapp.ui.source_bar import warning_line
from hostapp.ui.streaming import SourceHealth, StreamStatus
from tests.scripts import TOOLS, load_script

# Cross-check model AL (docs/crosscheck.md, run 72): a family kit whose
# cell on level 1 (tower 3) has a cracked solder joint: its converter
# stops answering for up to 1.5 s, every few seconds, no module lifted.
model_al = load_script(TOOLS / "crosscheck_al" / "make_recordings_al.py", "crosscheck_al_for_ui")


def _status(flaky: tuple[int, ...]) -> StreamStatus:
    return StreamStatus("serial", SourceHealth(connected=True), None, None, 0.0,
                        flaky_cells=flaky)


def test_the_warning_names_the_flaky_cells_and_what_to_check() -> None:
    assert warning_line(_status(())) == ""
    assert warning_line(_status((1,))) == (
        "The load cell of level 1 stopped answering now and then with no module lifted. "
        "Check its solder joints and its wire."
    )
    assert warning_line(_status((1, 4))).startswith("The load cells of levels 1, 4 stopped")
    set_language("de")
    try:
        assert warning_line(_status((1,))).startswith("Die Wägezelle von Ebene 1 hat ab und zu")
    finally:
        set_language("en")


def test_the_source_bar_tells_a_cell_with_a_cracked_joint(
    qtbot: QtBot, journal_dir: Path, tmp_path: Path
) -> None:
    recording, _ = model_al.make_recording(3, "single", 24.0, tmp_path)
    errors: list[str] = []
    app, bar = replayed(qtbot, journal_dir, recording, errors)
    qtbot.waitUntil(
        lambda: "load cell of level 1 stopped answering" in bar.warning_label.text(),
        timeout=20_000,
    )
    assert bar.warning_label.isVisible()
    assert errors == []
    app.close()
