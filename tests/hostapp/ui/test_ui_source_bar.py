"""The source bar over a real serial path: an unplugged cable shows at once and heals itself.

The simulated device runs behind a pseudo-terminal (as a board behind a USB
serial chip); the app reads it through pyserial. Pulling the "cable" must
show NOT CONNECTED, reconnect by itself, and leave the game untouched; the
record button must write a recording that reads back.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pytestqt.qtbot import QtBot
from ui_game_driver import enter_landing_by_hand, set_up_game

from hostapp.recording import read_recording
from hostapp.sources.pty_server import PtyDeviceServer
from hostapp.sources.serial_port import SerialSource
from hostapp.sources.sim_device import tower_device
from hostapp.ui.app import App, build_app
from hostapp.ui.arosa.journal_adapter import JournalGameStore
from hostapp.ui.recorder import RawRecorder
from hostapp.ui.source_bar import SourceBar
from hostapp.ui.sources_adapter import FrameSourceAdapter
from hostapp.ui.streaming import SourceChoice


def _connected_app(
    qtbot: QtBot, journal_dir: Path, errors: list[str], choice: SourceChoice, **kwargs: Any
) -> tuple[App, SourceBar]:
    """The app on ``choice``, shown, once its source bar says it is connected."""
    app = build_app(
        store=JournalGameStore(journal_dir), show_error=errors.append, first_source=choice,
        **kwargs,
    )
    qtbot.addWidget(app.window)
    app.window.show()
    bar = app.window.source_bar
    assert bar is not None
    qtbot.waitUntil(lambda: ": connected" in bar.state_label.text(), timeout=5_000)
    return app, bar


@pytest.fixture
def pty_device(tmp_path: Path) -> PtyDeviceServer:
    device = tower_device(seed=5, scenario="quiet", duration_s=600.0)
    server = PtyDeviceServer(device, pace=1.0, link_path=tmp_path / "ttyTOWER")
    server.start()
    yield server
    server.stop()


def test_unplug_is_shown_and_healed_and_recording_works(
    qtbot: QtBot, journal_dir: Path, pty_device: PtyDeviceServer, tmp_path: Path
) -> None:
    def open_port(choice: SourceChoice) -> FrameSourceAdapter:
        recorder = RawRecorder()
        source = SerialSource(pty_device.path, tap=recorder, retry_interval_s=0.05)
        return FrameSourceAdapter(source, recorder, pty_device.path)

    errors: list[str] = []
    app, bar = _connected_app(
        qtbot, journal_dir, errors, SourceChoice("device"), open_source=open_port
    )
    qtbot.waitUntil(lambda: "firmware" in bar.state_label.text(), timeout=5_000)

    set_up_game(qtbot, app.window.pages["arosa"], ["yellow", "black"], manual=False)
    enter_landing_by_hand(qtbot, app.window.pages["arosa"], 3)
    state_before = app.controller.state

    bar.record_button.click()
    recording = app.context.stream.recording
    assert recording is not None
    qtbot.wait(600)
    pty_device.unplug()
    qtbot.waitUntil(lambda: "NOT CONNECTED" in bar.state_label.text(), timeout=3_000)
    app.context.stream.hello = None
    pty_device.replug()
    qtbot.waitUntil(lambda: ": connected" in bar.state_label.text(), timeout=5_000)
    qtbot.waitUntil(lambda: "reconnects 1" in bar.counters_label.text(), timeout=3_000)
    # The rebooted board's HELLO (asked for again if it is slow) is in the recording.
    qtbot.waitUntil(lambda: app.context.stream.hello is not None, timeout=5_000)
    assert app.controller.state == state_before  # the game lost nothing
    qtbot.wait(600)
    bar.record_button.click()
    assert app.context.stream.recording is None

    saved = read_recording(recording)
    assert saved.hello is not None
    # about 1.2 s of streaming around a reboot: at least half a second of piezo data
    assert saved.piezo.shape[1] == 8 and saved.piezo.shape[0] > 1000
    assert errors == []
    app.close()


def test_two_recordings_started_in_one_second_get_two_files(
    qtbot: QtBot, journal_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import hostapp.ui.source_bar as source_bar

    monkeypatch.setattr(source_bar.time, "strftime", lambda _fmt: "20261203-120000")
    errors: list[str] = []
    app, bar = _connected_app(qtbot, journal_dir, errors, SourceChoice("sim"))
    paths = []
    for _ in range(3):
        bar.record_button.click()  # start
        assert app.context.stream.recording is not None
        paths.append(Path(app.context.stream.recording))
        bar.record_button.click()  # stop
    assert errors == []
    assert [p.name for p in paths] == [
        "towerear-20261203-120000.bin", "towerear-20261203-120000-2.bin",
        "towerear-20261203-120000-3.bin",
    ]
    assert all(p.exists() for p in paths)
    app.close()
