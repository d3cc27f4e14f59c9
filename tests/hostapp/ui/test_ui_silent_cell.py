"""A load cell that reads nothing is named in the source bar while its cubes are heard."""

from __future__ import annotations

from pathlib import Path

from pytestqt.qtbot import QtBot
from ui_game_driver import replayed

from hostapp.eval.sessions import SessionSpec, record_session
from tests.broken_sensors import with_broken_sensor


def _stuck_recording(tmp_path: Path) -> Path:
    """30 s of throws (four onto level 5) whose level-5 cell is stuck at one reading."""
    intact = tmp_path / "intact.bin"
    record_session(SessionSpec("single", 4, 44, 30.0), intact)
    return with_broken_sensor(intact, tmp_path / "stuck.bin", load_level=5)


def test_the_source_bar_names_a_level_whose_load_cell_reads_nothing(
    qtbot: QtBot, journal_dir: Path, tmp_path: Path
) -> None:
    stuck = _stuck_recording(tmp_path)
    errors: list[str] = []
    app, bar = replayed(qtbot, journal_dir, stuck, errors)
    assert not bar.warning_label.isVisible()
    qtbot.waitUntil(lambda: "level 5 reads nothing" in bar.warning_label.text(), timeout=10_000)
    assert bar.warning_label.isVisible()
    assert "color: #b00000" in bar.warning_label.styleSheet()
    assert errors == []
    app.close()


def test_the_warning_names_every_silent_level() -> None:
    from hostapp.ui.source_bar import warning_line
    from hostapp.ui.streaming import SourceHealth, StreamStatus

    def status(silent: tuple[int, ...], deaf: tuple[int, ...] = ()) -> StreamStatus:
        return StreamStatus("sim", SourceHealth(connected=True), None, None, 0.0, silent, deaf)

    assert warning_line(status(())) == ""
    assert warning_line(status((5,))).startswith("The load cell of level 5 reads nothing")
    assert warning_line(status((2, 5))).startswith("The load cells of levels 2, 5 read nothing")
    both = warning_line(status((5,), (3,)))
    assert "level 5 reads nothing" in both
    assert "contact microphone of level 3 hears none of its plate's landings" in both
    # Every form has its German text (kept apart from tr(), so checked here).
    from hostapp.i18n import set_language

    set_language("de")
    try:
        for silent, deaf in (((5,), ()), ((2, 5), ()), ((), (3,)), ((), (1, 3))):
            text = warning_line(status(silent, deaf))
            assert text.startswith(("Die", "Das")) and "Check" not in text, text
    finally:
        set_language("en")
