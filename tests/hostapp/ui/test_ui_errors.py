"""Errors reach the user as one sentence, never as a traceback."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from PyQt6.QtCore import QTimer
from PyQt6.QtWidgets import QApplication, QMessageBox
from pytestqt.qtbot import QtBot

from hostapp import i18n
from hostapp.errors import SourceError
from hostapp.ui.error_dialog import install_excepthook, show_error_dialog


@pytest.fixture
def restore_hook() -> Iterator[None]:
    before = sys.excepthook
    yield
    sys.excepthook = before


def _raise_and_hook(exc: BaseException) -> None:
    try:
        raise exc
    except BaseException as caught:
        sys.excepthook(type(caught), caught, caught.__traceback__)


def test_a_towerear_error_is_shown_as_its_sentence(
    restore_hook: None, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    shown: list[str] = []
    install_excepthook(shown.append, tmp_path / "towerear.log")
    _raise_and_hook(SourceError("the port /dev/ttyUSB0 went away"))
    assert shown == ["the port /dev/ttyUSB0 went away"]


def test_a_bug_is_logged_with_its_traceback_and_shown_as_one_sentence(
    restore_hook: None, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    shown: list[str] = []
    log_file = tmp_path / "towerear.log"
    install_excepthook(shown.append, log_file)
    with caplog.at_level(logging.ERROR):
        _raise_and_hook(ZeroDivisionError("division by zero"))
    assert len(shown) == 1
    assert "\n" not in shown[0] and "Traceback" not in shown[0]
    assert str(log_file) in shown[0]
    assert "Traceback" in caplog.text and "ZeroDivisionError" in caplog.text


@pytest.mark.parametrize(
    ("language", "sentence", "shown"),
    [
        ("en", "the tower is already open at level 3", "The tower is already open at level 3."),
        (
            "de",
            "the tower is already open at level 3",
            "Der Turm ist bereits bei Ebene 3 geöffnet.",
        ),
        ("en", "Choose a player first.", "Choose a player first."),
        ("en", "  ", ""),
    ],
)
def test_the_dialog_shows_a_translated_capitalised_sentence(
    qtbot: QtBot, language: str, sentence: str, shown: str
) -> None:
    seen: list[str] = []

    def close_the_box() -> None:
        box = QApplication.activeModalWidget()
        assert isinstance(box, QMessageBox)
        seen.append(box.text())
        box.close()

    i18n.set_language(language)
    try:
        QTimer.singleShot(0, close_the_box)
        show_error_dialog(None, sentence)
    finally:
        i18n.set_language("en")
    assert seen == [shown]
