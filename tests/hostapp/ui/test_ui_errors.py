"""Errors reach the user as one sentence, never as a traceback."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from hostapp.errors import SourceError
from hostapp.ui.error_dialog import install_excepthook


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
