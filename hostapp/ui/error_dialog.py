"""Errors reach the user as one sentence in a dialog, never as a traceback.

:func:`install_excepthook` replaces ``sys.excepthook``: a
:class:`hostapp.errors.TowerearError` is shown as its own sentence; anything
else is logged with its traceback (for the bug report) and shown as a short
generic sentence naming the log file.
"""

from __future__ import annotations

import logging
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

from PyQt6.QtWidgets import QMessageBox, QWidget

from hostapp.errors import TowerearError
from hostapp.i18n import tr, tr_sentence

log = logging.getLogger(__name__)

ShowError = Callable[[str], None]


def user_sentence(exc: BaseException, log_path: Path | None) -> str:
    """The one sentence a user sees for ``exc``."""
    if isinstance(exc, TowerearError):
        return tr_sentence(str(exc))
    where = str(log_path) if log_path is not None else tr("the terminal")
    return tr("Something went wrong inside towerear; the details are in {where}.", where=where)


def displayed_sentence(sentence: str) -> str:
    """``sentence`` as a dialog shows it: translated, capitalised, ending in a stop.

    An English sentence that never went through :func:`~hostapp.i18n.tr` (a
    simulator's refusal, say) is translated by :func:`~hostapp.i18n.tr_sentence`;
    an already translated one is left as is. Errors are written like Python's
    own ("the tower is already open at level 3"), which reads as a fragment
    in a dialog of its own.
    """
    text = tr_sentence(sentence).strip()
    if not text:
        return text
    text = text[0].upper() + text[1:]
    return text if text[-1] in ".!?:)" else text + "."


def show_error_dialog(parent: QWidget | None, sentence: str) -> None:
    """Show ``sentence`` in a modal warning box (as :func:`displayed_sentence`)."""
    box = QMessageBox(parent)
    box.setIcon(QMessageBox.Icon.Warning)
    box.setWindowTitle(tr("towerear"))
    box.setText(displayed_sentence(sentence))
    box.setStandardButtons(QMessageBox.StandardButton.Ok)
    box.exec()


def install_excepthook(show: ShowError, log_path: Path | None) -> None:
    """Route every uncaught exception to the log and to ``show(sentence)``.

    Parameters
    ----------
    show
        Called on the UI thread with one user-facing sentence.
    log_path
        Where the traceback is written (named in the sentence for bugs).
    """

    def hook(exc_type: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
        if issubclass(exc_type, KeyboardInterrupt):
            sys.__excepthook__(exc_type, exc, tb)
            return
        log.error("uncaught: %s", "".join(traceback.format_exception(exc_type, exc, tb)))
        try:
            show(user_sentence(exc, log_path))
        except Exception:  # the hook must never raise itself
            log.exception("could not show the error dialog")

    sys.excepthook = hook
