"""The composition root: the one place where the app is wired together.

:func:`run` creates the ``QApplication``, the translator, the stream hub with
its source and detection worker, the game controller and the main window,
then hands each page an :class:`~hostapp.ui.context.AppContext`. Nothing else
in :mod:`hostapp.ui` builds a source, a thread or a journal.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import logging
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from PyQt6.QtWidgets import QApplication, QLabel, QWidget

from hostapp import i18n
from hostapp.i18n import tr
from hostapp.paths import data_dir
from hostapp.ui.arosa.controller import ArosaController, GameStore
from hostapp.ui.arosa.journal_adapter import JournalGameStore
from hostapp.ui.arosa.page import ArosaPage
from hostapp.ui.context import AppContext, DebugLock
from hostapp.ui.error_dialog import install_excepthook, show_error_dialog
from hostapp.ui.live.page import LivePage
from hostapp.ui.main_window import MainWindow, PageFactory, PageSpec
from hostapp.ui.sources_adapter import default_choice, make_detector, open_live_source
from hostapp.ui.streaming import DetectorFactory, SourceChoice, SourceOpener, StreamHub
from hostapp.ui.translator import CatalogTranslator

log = logging.getLogger(__name__)


def _log_file() -> Path:
    return data_dir() / "towerear.log"


def _optional_page(module: str, attribute: str, missing: Callable[[], str]) -> PageFactory:
    """A page built by another area's package, or a sentence while it is absent.

    The calibration wizard and the card-game pages are developed in their own
    packages; the window keeps their slots either way.
    """

    def factory(context: AppContext, parent: QWidget) -> QWidget:
        try:
            built = getattr(importlib.import_module(module), attribute)
        except (ImportError, AttributeError):
            label = QLabel(missing(), parent)
            label.setWordWrap(True)
            return label
        if attribute == "create_page":
            page: QWidget = built(context, parent)
            return page
        widget: QWidget = built(parent)
        return widget

    return factory


@dataclass
class App:
    """Everything :func:`build_app` wired, for :func:`run`, tests and screenshots.

    Attributes
    ----------
    context
        What the pages receive.
    controller
        The Mord im Arosa game.
    window
        The main window (not yet shown).
    """

    context: AppContext
    controller: ArosaController
    window: MainWindow

    def close(self) -> None:
        """Stop streaming and put the game away (it stays journalled)."""
        self.context.stream.close()
        self.controller.close()
        self.window.close()


def build_app(
    *,
    open_source: SourceOpener = open_live_source,
    make_pipeline: DetectorFactory = make_detector,
    store: GameStore | None = None,
    show_error: Callable[[str], None] | None = None,
    first_source: SourceChoice | None = None,
) -> App:
    """Wire the app (a ``QApplication`` must exist); start the first source.

    Parameters
    ----------
    open_source, make_pipeline
        How sources and detection pipelines are built.
    store
        Where games are journalled (default: the user's data directory).
    show_error
        Shows one sentence to the user (default: a dialog over the window).
    first_source
        The source to stream from at start (default: the device if plugged
        in, else the simulated tower); ``SourceChoice("")`` starts none.
    """
    hub = StreamHub(open_source, make_pipeline)
    recordings = data_dir() / "recordings"
    recordings.mkdir(parents=True, exist_ok=True)
    window_ref: list[QWidget] = []

    def dialog(sentence: str) -> None:
        show_error_dialog(window_ref[0] if window_ref else None, sentence)

    context = AppContext(
        stream=hub, debug_lock=DebugLock(), data_dir=recordings, show_error=show_error or dialog
    )
    controller = ArosaController(store or JournalGameStore())
    hub.events.connect(controller.on_detection_events)
    context.debug_lock.unlocked_during_game.connect(controller.note_unlock)
    pages = [
        PageSpec("arosa", lambda: tr("Mord im Arosa"), lambda c, p: ArosaPage(c, controller, p)),
        PageSpec("live", lambda: tr("Live view"), LivePage),
        PageSpec(
            "calibration",
            lambda: tr("Calibration"),
            _optional_page(
                "hostapp.ui.calibration",
                "create_page",
                lambda: tr(
                    "Calibration: run 'towerear calibrate' in a terminal for the guided procedure."
                ),
            ),
        ),
        PageSpec(
            "crimehotel",
            lambda: tr("Crime Hotel"),
            _optional_page(
                "hostapp.ui.cardgames",
                "CrimeHotelPage",
                lambda: tr("Crime Hotel is not installed."),
            ),
        ),
        PageSpec(
            "mugshots",
            lambda: tr("Mugshots"),
            _optional_page(
                "hostapp.ui.cardgames", "MugshotsPage", lambda: tr("Mugshots is not installed.")
            ),
        ),
    ]
    window = MainWindow(context, pages)
    window_ref.append(window)
    choice = first_source if first_source is not None else default_choice()
    if choice.kind and window.source_bar is not None:
        window.source_bar.choose(choice)
    return App(context, controller, window)


def freeze_startup_objects() -> None:
    """Exempt everything built so far from the cyclic garbage collector.

    The window, pyqtgraph's scene and the imported modules are hundreds of
    thousands of objects that live as long as the app. A full collection
    walks them all and held the UI thread for 120 ms while streaming (the
    worst stall of the live view); frozen, a full collection only walks what
    was allocated since, a few milliseconds.
    """
    gc.collect()
    gc.freeze()


def run(args: argparse.Namespace) -> int:
    """Open the main window and run the Qt event loop; returns the exit status."""
    logging.basicConfig(
        filename=str(_log_file()),
        level=logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    i18n.set_language(i18n.system_language())
    existing = QApplication.instance()
    qt_app = existing if isinstance(existing, QApplication) else QApplication(sys.argv[:1])
    qt_app.setApplicationName("towerear")
    translator = CatalogTranslator(qt_app)
    qt_app.installTranslator(translator)
    window_ref: list[QWidget] = []

    def show_error(sentence: str) -> None:
        show_error_dialog(window_ref[0] if window_ref else None, sentence)

    install_excepthook(show_error, _log_file())
    app = build_app(show_error=show_error)
    window_ref.append(app.window)
    app.window.show()
    freeze_startup_objects()
    status = qt_app.exec()
    app.close()
    return int(status)
