"""The live view against the simulated tower: traces fill, events show, the lock holds."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from pytestqt.qtbot import QtBot
from ui_game_driver import set_up_game

from dsp.detect.events import Closed, Disturbance, Landing, Lift, Removal
from hostapp import i18n
from hostapp.journal import export_game
from hostapp.ui.app import build_app
from hostapp.ui.arosa.journal_adapter import JournalGameStore
from hostapp.ui.live.page import LivePage, describe_event
from hostapp.ui.sources_adapter import FrameSourceAdapter, open_live_source
from hostapp.ui.streaming import SourceChoice, StreamStatus

PACE = 8.0


def _open(choice: SourceChoice) -> FrameSourceAdapter:
    return open_live_source(choice, sim_pace=PACE)


def test_live_view_streams_detects_and_locks_during_a_game(
    qtbot: QtBot, journal_dir: Path, monkeypatch: object
) -> None:
    app = build_app(
        open_source=_open,
        store=JournalGameStore(journal_dir),
        show_error=lambda s: None,
        first_source=SourceChoice("sim"),
    )
    qtbot.addWidget(app.window)
    app.window.show()
    app.window.show_page("live")
    live = app.window.pages["live"]
    assert isinstance(live, LivePage)
    statuses: list[StreamStatus] = []
    app.context.stream.status.connect(statuses.append)
    tower = app.context.stream.source.tower  # type: ignore[union-attr]
    assert tower is not None
    qtbot.waitUntil(lambda: tower.time_s > 4.0, timeout=10_000)
    controls = app.window.sim_controls
    assert controls is not None and controls.isVisible()
    controls.throw_button.click()  # the simulated tower's hands, as a user clicks them
    qtbot.waitUntil(lambda: live.events_list.count() > 0, timeout=10_000)
    assert "landed on floor" in live.events_list.item(0).text()  # type: ignore[union-attr]
    qtbot.waitUntil(lambda: live.plots.frames_drawn > 3, timeout=5_000)
    # the scopes hold about four seconds of 2 kHz samples around their
    # resting code, each level in its own band (level 3 between 3 and 4)
    x, y = live.plots.piezo_trace(3)
    assert x is not None and 100 < x.size <= 500
    assert abs(float(np.median(y)) - 3.5) < 0.05 and 3.0 <= float(y.min()) <= float(y.max()) <= 4.0
    assert -4.1 < float(x.min()) < -2.0 and float(x.max()) <= 0.0
    # once the plate is still, the landing's load step is drawn at least a
    # fifth of its band high (0.3-0.65 seen; the old scaling, set by the spike,
    # drew it 0.02-0.03 high), and the impact's spike stays in the band
    level = next(f for f in range(8) if tower.colours_on(f))
    landed = tower.time_s
    qtbot.waitUntil(lambda: tower.time_s > landed + 1.5, timeout=10_000)
    live.plots.refresh()
    x, y = live.plots.load_trace(level)
    assert float(np.median(y[-10:]) - np.median(y[:20])) > 0.2
    assert level <= float(y.min()) <= float(y.max()) <= level + 1
    assert all("connected" in label.text() for label in live.level_labels)
    qtbot.waitUntil(lambda: bool(statuses), timeout=3_000)
    assert statuses[-1].health.connected and statuses[-1].health.crc_errors == 0

    # lifting the modules shows their levels as disconnected
    # open the level the cube came to rest on (the seed fixes it below the top)
    resting = next(f for f in range(8) if tower.colours_on(f))
    assert resting < 7
    controls.level_box.setValue(resting)
    controls.lift_button.click()
    qtbot.waitUntil(lambda: "lifted" in live.level_labels[0].text(), timeout=10_000)
    assert "connected" in live.level_labels[7 - resting].text()  # the open level stays
    controls.take_button.click()
    assert controls.back_button.isEnabled()  # the cube taken out is in hand
    controls.close_button.click()
    qtbot.waitUntil(lambda: "connected" in live.level_labels[0].text(), timeout=10_000)

    # a game locks the live view; unlocking is explicit and journalled
    app.window.show_page("arosa")
    set_up_game(qtbot, app.window.pages["arosa"], ["blue", "white"], manual=False)
    assert app.context.debug_lock.locked
    app.window.show_page("live")
    assert not live.plots.isVisible() and live.unlock_button.isVisible()
    assert live.events_list.count() == 0
    app.context.debug_lock.unlock()
    assert live.plots.isVisible()
    # the unlock is a note in the game's own journal, with its time
    (journal_file,) = journal_dir.glob("*.tej")
    saved = export_game(journal_file.stem, journal_dir)
    (note,) = saved["notes"]
    assert note["text"] == "debug views unlocked" and note["at"].endswith("Z")
    assert [r["type"] for r in saved["records"]][-1] == "note"
    state = app.controller.state
    app.close()

    # resuming from that journal replays the game and keeps the note
    store = JournalGameStore(journal_dir)
    record = store.open(journal_file.stem)
    try:
        assert record.state == state
        assert [n["text"] for n in record.notes()] == ["debug views unlocked"]
    finally:
        record.close()


@pytest.mark.parametrize(
    ("event", "english", "german"),
    [
        (Landing(12.345, 12.6, 3, 1, 0.971), "a cube landed on floor 3 (97 % sure)",
         "Würfel auf Ebene 3 gelandet (97 % sicher)"),
        (Landing(1.0, 1.2, 5, 2, 0.5, "acoustic", knocked_from=6),
         "2 cubes landed on floor 5 (50 % sure), heard only, knocked down from floor 6",
         "2 Würfel auf Ebene 5 gelandet (50 % sicher), nur gehört, von Ebene 6 heruntergestoßen"),
        (Landing(1.0, 1.2, 3, 1, 0.5, maybe_stopped_on=5),
         "a cube landed on floor 3 (50 % sure), perhaps knocked down from floor 5",
         "Würfel auf Ebene 3 gelandet (50 % sicher), vielleicht von Ebene 5 heruntergestoßen"),
        (Landing(1.0, 1.9, 5, 1, 0.9, knocked_down_to=3),
         "a cube landed on floor 5 (90 % sure), the thrown cube stopped here and knocked the "
         "one on floor 3 down",
         "Würfel auf Ebene 5 gelandet (90 % sicher), der geworfene Würfel blieb hier liegen "
         "und stieß den auf Ebene 3 hinunter"),
        (Removal(2.0, 2.5, 4, 1, 0.9, knocked=True),
         "a cube left floor 4 (90 % sure), knocked down",
         "Würfel von Ebene 4 weg (90 % sicher), heruntergestoßen"),
        (Lift(3.0, 3.1, 2), "the tower was opened: level 2 lies open",
         "der Turm wurde geöffnet: Ebene 2 liegt offen"),
        (Closed(4.0, 4.1), "the tower was closed", "der Turm wurde geschlossen"),
        (Disturbance(5.0, 5.1), "a disturbance (not a landing)", "eine Störung (keine Landung)"),
    ],
)
def test_each_event_is_one_readable_line_in_the_ui_language(
    event: object, english: str, german: str
) -> None:
    t = f"{event.t:7.2f} s  "  # type: ignore[attr-defined]
    assert describe_event(event) == t + english
    i18n.set_language("de")
    try:
        assert describe_event(event) == t + german
    finally:
        i18n.set_language("en")


def test_the_reveal_lists_the_unlocks(qtbot: QtBot) -> None:
    from hostapp.games.arosa.state import new_game
    from hostapp.ui.arosa.end_panel import RevealPanel

    state = new_game(["blue", "white"])
    note = {"text": "debug views unlocked", "at": "2026-05-09T20:15:00Z", "after_events": 4}
    panel = RevealPanel(state, [], lambda: None, (0, 0), [note])
    qtbot.addWidget(panel)
    assert "2026-05-09 20:15:00" in panel.notes.text() and "4" in panel.notes.text()
    quiet = RevealPanel(state, [], lambda: None)
    qtbot.addWidget(quiet)
    assert "Nobody" in quiet.notes.text()
