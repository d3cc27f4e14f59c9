"""The simulated tower's refusals reach the German UI in German."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from hostapp import i18n
from hostapp.ui.app import build_app
from hostapp.ui.sources_adapter import FrameSourceAdapter, open_live_source
from hostapp.ui.streaming import SourceChoice


def _open(choice: SourceChoice) -> FrameSourceAdapter:
    return open_live_source(choice, sim_pace=8.0)


def test_lifting_an_open_tower_again_is_refused_in_german(qtbot: QtBot) -> None:
    shown: list[str] = []
    app = build_app(open_source=_open, show_error=shown.append, first_source=SourceChoice("sim"))
    qtbot.addWidget(app.window)
    app.window.show()
    try:
        app.window.set_language("de")
        tower = app.context.stream.source.tower  # type: ignore[union-attr]
        assert tower is not None
        qtbot.waitUntil(lambda: tower.time_s > 1.0, timeout=10_000)
        controls = app.window.sim_controls
        assert controls is not None
        qtbot.waitUntil(controls.isVisible, timeout=3_000)  # rebuilt in German
        controls.level_box.setValue(5)
        controls.lift_button.click()  # the modules above level 5 come off
        assert shown == []
        controls.lift_button.click()  # and cannot come off again
        assert shown == ["der Turm ist bereits bei Ebene 5 geöffnet"]
        controls.close_button.click()
        controls.close_button.click()
        assert shown[-1] == "der Turm kann nicht geschlossen werden: er ist nicht geöffnet"
    finally:
        i18n.set_language("en")
        app.close()
