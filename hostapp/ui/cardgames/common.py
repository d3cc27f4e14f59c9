"""Pieces shared by the two card-game pages: the game in play, errors, export."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar, Generic, TypeVar

from PyQt6.QtCore import Qt
from PyQt6.QtGui import QKeySequence, QShortcut
from PyQt6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QWidget,
)

from hostapp.errors import TowerearError
from hostapp.games.cardsession import CardEngine, CardGameSession
from hostapp.games.export import write_html, write_json
from hostapp.i18n import tr
from hostapp.journal import GameInfo, list_games, read_game
from hostapp.paths import data_dir

E = TypeVar("E", bound=CardEngine)

# Readable across a table from a laptop: larger than Qt's default everywhere.
PAGE_STYLE = """
QWidget { font-size: 16px; }
QPushButton { padding: 6px 12px; }
QLabel#title { font-size: 24px; font-weight: bold; }
QLabel#status { font-size: 21px; font-weight: bold; }
QLabel#error { color: #b00020; font-weight: bold; }
"""


def add_shortcut(page: QWidget, keys: str | QKeySequence, slot: Callable[[], None]) -> None:
    """Bind ``keys`` to ``slot`` while the focus is anywhere inside ``page``.

    Explicit shortcuts, not ``&`` mnemonics: mnemonics are not available on
    every platform, and a mnemonic plus a shortcut on the same key would make
    Qt call neither.
    """
    shortcut = QShortcut(QKeySequence(keys), page)
    shortcut.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
    shortcut.activated.connect(slot)


def add_undo_shortcuts(page: QWidget, undo: Callable[[], None]) -> None:
    """Ctrl+Z and Alt+U take back the last entry.

    A text field keeps Ctrl+Z for undoing typing while it has the focus, so
    Alt+U is the one that works everywhere.
    """
    add_shortcut(page, QKeySequence(QKeySequence.StandardKey.Undo), undo)
    add_shortcut(page, "Alt+U", undo)


def title_label(text: str) -> QLabel:
    """A page or section title in large bold type."""
    label = QLabel(text)
    label.setObjectName("title")
    return label


class ErrorLine(QLabel):
    """One line under the controls showing why the last entry was refused."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("error")
        self.setWordWrap(True)

    def show_error(self, exc: TowerearError) -> None:
        """Show the error's sentence."""
        self.setText(str(exc))

    def clear_error(self) -> None:
        """Remove the message (after an accepted entry)."""
        self.clear()


class SessionHolder(Generic[E]):
    """Owns the game in play for a page.

    The main window rebuilds its pages on a language switch while the old
    ones still exist, and a journal admits one writer at a time. So every
    game open in this process is registered here by game id: resuming a game
    first takes it from whichever page held it (:meth:`release`), without
    relying on when Qt gets round to deleting the old page.
    """

    _open: ClassVar[dict[str, CardGameSession[Any]]] = {}

    def __init__(self) -> None:
        self.session: CardGameSession[E] | None = None

    def replace(self, session: CardGameSession[E] | None) -> None:
        """Close the game in play (its journal stays on disk) and hold ``session``."""
        old = self.session
        if old is not None:
            game_id = old.game_id
            if SessionHolder._open.get(game_id) is old:
                del SessionHolder._open[game_id]
            old.close()
        self.session = session
        if session is not None and session.game_id:
            SessionHolder._open[session.game_id] = session

    @staticmethod
    def release(game_id: str) -> None:
        """Close ``game_id`` if a page of this process holds it open."""
        session = SessionHolder._open.pop(game_id, None)
        if session is not None:
            session.close()

    @property
    def engine(self) -> E:
        """The engine of the game in play."""
        assert self.session is not None
        return self.session.engine


def unfinished_games(kind: str, is_over: Callable[[list[dict[str, Any]]], bool]) -> list[GameInfo]:
    """Saved games of ``kind`` that can be resumed, newest first.

    ``is_over(events)`` replays a game's events and says whether it ended;
    games that no longer replay are left out.
    """
    found = []
    for info in list_games():
        if info.kind != kind or info.problem is not None:
            continue
        try:
            _, events = read_game(info.game_id)
            if not is_over(events):
                found.append(info)
        except TowerearError:
            continue
    return found


class ExportBar(QWidget):
    """Buttons that save the game as JSON and as a printable HTML score sheet.

    Parameters
    ----------
    game
        Returns ``(summary, events, file stem)`` of the game to export.
    on_error
        Shows a refused export's sentence.
    ask_path
        Asks where to save (``(suggested path, filter) -> path or None``); a
        file dialog unless replaced (tests pass a function).
    """

    def __init__(
        self,
        game: Callable[[], tuple[dict[str, Any], list[dict[str, Any]], str]],
        on_error: Callable[[TowerearError], None],
        ask_path: Callable[[Path, str], Path | None] | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._game = game
        self._on_error = on_error
        self.ask_path = ask_path or self._dialog
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.json_button = QPushButton(tr("Export &JSON"))
        self.html_button = QPushButton(tr("Score &sheet (HTML)"))
        self.json_button.clicked.connect(self.export_json)
        self.html_button.clicked.connect(self.export_html)
        layout.addWidget(self.json_button)
        layout.addWidget(self.html_button)
        self.saved = QLabel()
        layout.addWidget(self.saved, 1)

    def _dialog(self, suggested: Path, file_filter: str) -> Path | None:
        name, _ = QFileDialog.getSaveFileName(self, tr("Export"), str(suggested), file_filter)
        return Path(name) if name else None

    def _export(self, suffix: str, file_filter: str, write: Callable[[Path], None]) -> None:
        _, _, stem = self._game()
        path = self.ask_path(data_dir() / f"{stem}{suffix}", file_filter)
        if path is None:
            return
        try:
            write(path)
        except TowerearError as exc:
            self._on_error(exc)
            return
        self.saved.setText(tr("Saved {path}", path=str(path)))

    def export_json(self) -> None:
        """Save the game (summary and every event) as JSON."""
        summary, events, _ = self._game()
        self._export(".json", "JSON (*.json)", lambda p: write_json(p, summary, events))

    def export_html(self) -> None:
        """Save the printable score sheet."""
        summary, _, _ = self._game()
        self._export(".html", "HTML (*.html)", lambda p: write_html(p, summary))
