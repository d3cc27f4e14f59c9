"""The main window: the source bar on top, the pages as tabs, menus.

The window title is always just "towerear": titles show up in task bars and
screen sharing, so they must never carry game information.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PyQt6.QtCore import pyqtSignal
from PyQt6.QtGui import QAction, QActionGroup, QCloseEvent, QKeySequence
from PyQt6.QtWidgets import QMainWindow, QTabWidget, QVBoxLayout, QWidget

from hostapp import i18n
from hostapp.i18n import tr
from hostapp.ui.context import AppContext
from hostapp.ui.sim_controls import SimTowerControls
from hostapp.ui.source_bar import SourceBar

PageFactory = Callable[[AppContext, QWidget], QWidget]


@dataclass(frozen=True)
class PageSpec:
    """One tab of the main window.

    Attributes
    ----------
    key
        Stable name (``"arosa"``, ``"live"``, ``"calibration"``...).
    title
        Returns the translated tab title (called again after a language switch).
    factory
        Builds the page; called again when the language changes, so pages keep
        no state that is not also held by the objects in the context.
    """

    key: str
    title: Callable[[], str]
    factory: PageFactory


class MainWindow(QMainWindow):
    """The towerear window.

    Parameters
    ----------
    context
        Handed to every page.
    pages
        The tabs, in order; ``Alt+1`` .. ``Alt+9`` jump to them.
    """

    language_changed = pyqtSignal(str)

    def __init__(self, context: AppContext, pages: list[PageSpec]) -> None:
        super().__init__()
        self.context = context
        self._specs = pages
        self.setWindowTitle("towerear")
        self.resize(1280, 900)
        self.tabs = QTabWidget()
        self.pages: dict[str, QWidget] = {}
        self.source_bar: SourceBar | None = None
        self.sim_controls: SimTowerControls | None = None
        self._build()

    def _build(self) -> None:
        current = self.current_page_key()
        central = QWidget()
        layout = QVBoxLayout(central)
        layout.setContentsMargins(0, 0, 0, 0)
        self.source_bar = SourceBar(
            self.context.stream, self.context.data_dir, self.context.show_error, central
        )
        self.sim_controls = SimTowerControls(self.context.stream, self.context.show_error, central)
        self.tabs = QTabWidget(central)
        self.pages = {}
        for spec in self._specs:
            page = spec.factory(self.context, self.tabs)
            self.pages[spec.key] = page
            self.tabs.addTab(page, spec.title())
        layout.addWidget(self.source_bar)
        layout.addWidget(self.sim_controls)
        layout.addWidget(self.tabs, 1)
        old = self.takeCentralWidget()
        self.setCentralWidget(central)
        if old is not None:
            old.deleteLater()
        self._build_menus()
        if current is not None:
            self.show_page(current)

    def _build_menus(self) -> None:
        bar = self.menuBar()
        assert bar is not None
        bar.clear()
        file_menu = bar.addMenu(tr("&File"))
        assert file_menu is not None
        quit_action = QAction(tr("&Quit"), self)
        quit_action.setShortcut(QKeySequence.StandardKey.Quit)
        quit_action.triggered.connect(self.close)
        file_menu.addAction(quit_action)

        view_menu = bar.addMenu(tr("&View"))
        assert view_menu is not None
        for index, spec in enumerate(self._specs[:9], start=1):
            action = QAction(spec.title(), self)
            action.setShortcut(QKeySequence(f"Alt+{index}"))
            action.triggered.connect(lambda _=False, key=spec.key: self.show_page(key))
            view_menu.addAction(action)

        language_menu = bar.addMenu(tr("&Language"))
        assert language_menu is not None
        group = QActionGroup(self)
        for code, label in (("en", "English"), ("de", "Deutsch")):
            action = QAction(label, self)
            action.setCheckable(True)
            action.setChecked(i18n.current_language() == code)
            action.triggered.connect(lambda _=False, c=code: self.set_language(c))
            group.addAction(action)
            language_menu.addAction(action)

    def current_page_key(self) -> str | None:
        """The key of the visible tab."""
        page = self.tabs.currentWidget()
        for key, widget in self.pages.items():
            if widget is page:
                return key
        return None

    def show_page(self, key: str) -> None:
        """Bring the tab ``key`` to the front."""
        page = self.pages.get(key)
        if page is not None:
            self.tabs.setCurrentWidget(page)

    def set_language(self, language: str) -> None:
        """Switch the UI language and rebuild every page in it."""
        if language == i18n.current_language():
            return
        i18n.set_language(language)
        self._build()
        self.language_changed.emit(language)

    def closeEvent(self, event: QCloseEvent | None) -> None:
        self.context.stream.close()
        super().closeEvent(event)
