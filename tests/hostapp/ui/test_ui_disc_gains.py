"""A contact microphone that hears far more or less than the others is named in the source bar."""

from __future__ import annotations

from pathlib import Path

from pytestqt.qtbot import QtBot
from ui_game_driver import replayed

from hostapp.i18n import set_language
from hostapp.ui.source_bar import warning_line
from hostapp.ui.streaming import SourceHealth, StreamStatus
from tests.scripts import TOOLS, load_script

# Cross-check model AH (docs/crosscheck.md, run 65): a maker's tower whose
# microphone boards differ in gain; tower 11's board on level 6 hears more.
model_ah = load_script(TOOLS / "crosscheck_ah" / "make_recordings_ah.py", "crosscheck_ah_for_ui")
heard_only = load_script(TOOLS / "crosscheck" / "heard_only.py", "heard_only_for_ui")


def _status(gains: tuple[float, ...]) -> StreamStatus:
    return StreamStatus("audio", SourceHealth(connected=True), None, None, 0.0,
                        disc_gains_db=gains)


def test_the_warning_names_a_loud_and_a_quiet_disc_and_what_to_check() -> None:
    assert warning_line(_status(())) == ""
    assert warning_line(_status((0.0, 4.5, -5.9, 0.0, 0.0, 0.0, 0.0, 0.0))) == ""
    line = warning_line(_status((0.0, 8.4, 0.0, -7.0, 0.0, 0.0, 0.0, 0.0)))
    assert line.startswith("The contact microphone of level 1 hears about 8 dB more than the "
                           "others")
    assert "amplifier's gain" in line
    assert "level 3 hears about 7 dB less than the others" in line and "glue" in line
    set_language("de")
    try:
        german = warning_line(_status((0.0, 8.4, 0.0, -7.0, 0.0, 0.0, 0.0, 0.0)))
        assert german.startswith("Das Kontaktmikrofon von Ebene 1 hört etwa 8 dB mehr")
        assert "Ebene 3 hört etwa 7 dB weniger" in german and "Check" not in german
    finally:
        set_language("en")


def test_the_source_bar_tells_a_loud_disc_heard_without_load_cells(
    qtbot: QtBot, journal_dir: Path, tmp_path: Path
) -> None:
    recording, _ = model_ah.make_recording(11, "rapid", 60.0, tmp_path)
    alone = tmp_path / "heard.bin"
    alone.write_bytes(heard_only.without_load(recording.read_bytes(), say_no_cells=False))
    errors: list[str] = []
    app, bar = replayed(qtbot, journal_dir, alone, errors)
    assert not bar.warning_label.isVisible()
    qtbot.waitUntil(
        lambda: "contact microphone of level 6 hears about" in bar.warning_label.text(),
        timeout=15_000,
    )
    assert "dB more than the others" in bar.warning_label.text()
    assert bar.warning_label.isVisible()
    assert errors == []
    app.close()

