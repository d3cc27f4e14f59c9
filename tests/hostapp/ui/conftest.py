"""Fixtures for the UI tests: Qt warnings fail the test, an app wired like the real one."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from PyQt6.QtCore import QMessageLogContext, QtMsgType, qInstallMessageHandler
from pytestqt.qtbot import QtBot

from hostapp import i18n
from hostapp.ui.app import App, build_app
from hostapp.ui.arosa.journal_adapter import JournalGameStore
from hostapp.ui.streaming import SourceChoice

# Messages Qt prints in an offscreen session that say nothing about our code.
_HARMLESS = ("This plugin does not support propagateSizeHints()",)


@pytest.fixture(autouse=True)
def qt_warnings_fail() -> Iterator[list[str]]:
    """Collect Qt warnings and fail the test if any was emitted."""
    seen: list[str] = []

    def handler(kind: QtMsgType, context: QMessageLogContext, message: str | None) -> None:
        text = message or ""
        if kind in (QtMsgType.QtWarningMsg, QtMsgType.QtCriticalMsg, QtMsgType.QtFatalMsg):
            if not any(h in text for h in _HARMLESS):
                seen.append(text)

    previous = qInstallMessageHandler(handler)
    yield seen
    qInstallMessageHandler(previous)
    assert not seen, f"Qt warnings: {seen}"


@pytest.fixture(autouse=True)
def english() -> Iterator[None]:
    """Tests read English texts; restore the language afterwards."""
    before = i18n.current_language()
    i18n.set_language("en")
    yield
    i18n.set_language(before)


@pytest.fixture
def journal_dir(tmp_path: Path) -> Path:
    """A private journal directory."""
    path = tmp_path / "journals"
    path.mkdir()
    return path


@pytest.fixture
def offline_app(qtbot: QtBot, journal_dir: Path) -> App:
    """The app as it starts with no source, its games journalled to ``journal_dir``, shown."""
    app = build_app(
        store=JournalGameStore(journal_dir),
        show_error=lambda s: None,
        first_source=SourceChoice(""),
    )
    qtbot.addWidget(app.window)
    app.window.show()
    return app
