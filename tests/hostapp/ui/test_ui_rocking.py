"""A tower that rocks on its table, or hum on the discs, is named in the source bar."""

from __future__ import annotations

import re
from pathlib import Path

from pytestqt.qtbot import QtBot
from ui_game_driver import replayed

from hostapp.i18n import set_language
from hostapp.ui.source_bar import warning_line
from hostapp.ui.streaming import SourceHealth, StreamStatus
from tests.scripts import TOOLS, load_script

# Cross-check model I (docs/crosscheck.md): a hobbyist's tower that rocks on
# its table; its tower 6 at 2.69 Hz, read 80 times a second.
model_i = load_script(TOOLS / "crosscheck_i" / "make_recordings_i.py", "crosscheck_i_for_ui")


def _status(rocking_hz: float, silent: tuple[int, ...] = ()) -> StreamStatus:
    return StreamStatus("sim", SourceHealth(connected=True), None, None, 0.0, silent, (),
                        rocking_hz)


def test_the_warning_says_the_tower_rocks_and_what_helps() -> None:
    assert warning_line(_status(0.0)) == ""
    line = warning_line(_status(2.69))
    assert line.startswith("The tower rocks on its table (about 2.7 times a second)")
    assert "firm, heavy table" in line
    both = warning_line(_status(2.69, (5,)))
    assert both.startswith("The load cell of level 5 reads nothing") and "rocks" in both
    set_language("de")
    try:
        assert warning_line(_status(2.69)).startswith("Der Turm schaukelt")
    finally:
        set_language("en")


def test_the_source_bar_tells_a_rocking_tower_once_it_is_found(
    qtbot: QtBot, journal_dir: Path, tmp_path: Path
) -> None:
    recording, _ = model_i.make_recording(6, "single", 60.0, tmp_path)
    errors: list[str] = []
    app, bar = replayed(qtbot, journal_dir, recording, errors)
    assert not bar.warning_label.isVisible()
    qtbot.waitUntil(lambda: "The tower rocks" in bar.warning_label.text(), timeout=15_000)
    # (Told from the comb's length in readings: 80 a second over 29-31.)
    told = re.search(r"about ([0-9.]+) times a second", bar.warning_label.text())
    assert told is not None and abs(float(told.group(1)) - 2.69) < 0.2
    assert bar.warning_label.isVisible()
    assert errors == []
    app.close()


def test_the_warning_names_mains_hum_and_what_helps() -> None:
    status = StreamStatus("sim", SourceHealth(connected=True), None, None, 0.0,
                          hum_hz=(150.0, 250.2))
    line = warning_line(status)
    assert line.startswith("The contact microphones pick up mains hum (150, 250 Hz)")
    assert "another USB port" in line
    set_language("de")
    try:
        assert warning_line(status).startswith("Die Kontaktmikrofone fangen Netzbrummen auf")
    finally:
        set_language("en")
