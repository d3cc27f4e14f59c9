"""What every page receives: the :class:`AppContext`.

Pages (the Arosa game, the live view, the calibration wizard, the card games)
get an ``AppContext`` from the composition root (:mod:`hostapp.ui.app`) and
take everything they need from it; none of them builds a source, a thread or a
journal itself.

For the calibration wizard (``hostapp/ui/calibration/``): the page is created
by ``hostapp.ui.calibration.create_page(context, parent) -> QWidget`` when that
module exists. It reads the stream through ``context.stream``:

- ``context.stream.messages`` (signal, ``list`` of decoded protocol messages,
  on the UI thread, about 30 times a second while streaming);
- ``context.stream.events`` (signal, ``list`` of detection events from
  :mod:`hostapp.pipeline`);
- ``context.stream.status`` (signal, a :class:`hostapp.ui.streaming.StreamStatus`);
- ``context.stream.hello`` (the device's last HELLO, or ``None``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from PyQt6.QtCore import QObject, pyqtSignal

from hostapp.ui.streaming import StreamHub


class DebugLock(QObject):
    """Whether the live view and debug panels may show sensor data.

    During a game they are locked, because sensor traces reveal where cubes
    landed. A player may unlock them explicitly; whoever owns the game
    journals that (it listens to :attr:`changed`).
    """

    changed = pyqtSignal(bool)
    """Emitted with the new ``locked`` value."""

    unlocked_during_game = pyqtSignal()
    """Emitted when a player unlocks while a game is running (to journal it)."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._game_running = False
        self._unlocked = False

    @property
    def locked(self) -> bool:
        """True while a game runs and nobody has unlocked."""
        return self._game_running and not self._unlocked

    def set_game_running(self, running: bool) -> None:
        """A game started (lock) or ended (unlock, nothing left to hide)."""
        before = self.locked
        self._game_running = running
        self._unlocked = False
        if self.locked != before:
            self.changed.emit(self.locked)

    def unlock(self) -> None:
        """A player chose to look at the sensors during the game."""
        if not self.locked:
            return
        self._unlocked = True
        self.unlocked_during_game.emit()
        self.changed.emit(False)


@dataclass
class AppContext:
    """Everything a page may use, built once by :func:`hostapp.ui.app.build_context`.

    Attributes
    ----------
    stream
        The active source with the detection worker; its signals carry
        decoded messages, detection events and status to the UI thread.
    debug_lock
        Locks sensor views while a game is running.
    data_dir
        Where journals and recordings are kept.
    show_error
        Shows one user-facing sentence in a dialog.
    """

    stream: StreamHub
    debug_lock: DebugLock
    data_dir: Path
    show_error: Callable[[str], None] = field(default=lambda sentence: None)
