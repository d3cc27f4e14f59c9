"""The live view page: scopes, load traces, level states and events.

Locked while a game runs (the traces would show where cubes landed) until a
player unlocks it on purpose.
"""

from __future__ import annotations

import logging
from typing import Any

import pyqtgraph as pg
from PyQt6.QtCore import Qt, QTimer
from PyQt6.QtGui import QShowEvent
from PyQt6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QListWidget,
    QMessageBox,
    QPushButton,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from hostapp.calibration.profile import ProfileStore
from hostapp.i18n import tr
from hostapp.ui.context import AppContext
from hostapp.ui.live.data import N_LEVELS, LiveData
from hostapp.ui.live.ring import clip_to_window, peak_downsample

log = logging.getLogger(__name__)

PIEZO_WINDOW_S = 2.0
LOAD_WINDOW_S = 20.0
# 30 frames/s is smooth for a scope and leaves the UI thread mostly idle.
REFRESH_INTERVAL_MS = 33
# Points per curve: about two per horizontal pixel of a half-width plot.
MAX_POINTS = 1200
MAX_EVENTS_SHOWN = 200


def describe_event(event: Any) -> str:
    """One line for the events list (the live view may show floors)."""
    data = event.to_json() if hasattr(event, "to_json") else {"event": str(event)}
    kind = str(data.get("event", "?"))
    t = float(data.get("t", 0.0))
    details = ", ".join(f"{k}={v}" for k, v in data.items() if k not in ("event", "t", "t_decided"))
    return f"{t:9.3f} s  {kind}  {details}"


class LivePlots(QWidget):
    """Eight piezo scopes and eight load traces, level 7 on top like the tower."""

    def __init__(self, data: LiveData, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._data = data
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.graphics = pg.GraphicsLayoutWidget()
        self.graphics.setBackground("w")
        layout.addWidget(self.graphics)
        self.piezo_curves: list[pg.PlotDataItem] = []
        self.load_curves: list[pg.PlotDataItem] = []
        self.load_plots: list[pg.PlotItem] = []
        self.frames_drawn = 0
        pen = pg.mkPen("#1f5fbf", width=1)
        for row, level in enumerate(reversed(range(N_LEVELS))):
            piezo_plot = self.graphics.addPlot(row=row, col=0)
            load_plot = self.graphics.addPlot(row=row, col=1)
            for plot in (piezo_plot, load_plot):
                plot.setMenuEnabled(False)
                plot.setMouseEnabled(x=False, y=False)
                plot.hideButtons()
                plot.showGrid(x=True, y=True, alpha=0.2)
                plot.getAxis("bottom").setStyle(showValues=row == N_LEVELS - 1)
            piezo_plot.setLabel("left", tr("L{level}", level=level))
            piezo_plot.setYRange(0, 1023)
            if row == 0:
                piezo_plot.setTitle(tr("Piezo (ADC codes)"))
                load_plot.setTitle(tr("Load"))
            self.piezo_curves.append(piezo_plot.plot(pen=pen, skipFiniteCheck=True))
            self.load_curves.append(
                load_plot.plot(pen=pg.mkPen("#7b4a24", width=2), connect="finite")
            )
            self.load_plots.append(load_plot)

    def refresh(self) -> None:
        """Redraw from the ring buffers (bounded work: MAX_POINTS per curve)."""
        latest = self._data.latest_s
        t, v = self._data.piezo.snapshot()
        t, v = clip_to_window(t, v, t_from_s=latest - PIEZO_WINDOW_S)
        for row, level in enumerate(reversed(range(N_LEVELS))):
            dt, dv = peak_downsample(t, v[:, level], max_points=MAX_POINTS)
            self.piezo_curves[row].setData(dt, dv)
        t, v = self._data.load.snapshot()
        t, v = clip_to_window(t, v, t_from_s=latest - LOAD_WINDOW_S)
        for row, level in enumerate(reversed(range(N_LEVELS))):
            values, calibrated = self._data.load_in_grams(v[:, level], level)
            self.load_curves[row].setData(t, values)
            self.load_plots[row].setLabel("right", tr("g") if calibrated else tr("counts"))
        self.frames_drawn += 1


class LivePage(QWidget):
    """The live view, with its lock screen.

    Parameters
    ----------
    context
        Its ``stream`` feeds the plots; its ``debug_lock`` hides them in games.
    """

    def __init__(self, context: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._context = context
        self.data = LiveData()
        self._profiles = ProfileStore()
        self._stack = QStackedWidget()
        layout = QVBoxLayout(self)
        layout.addWidget(self._stack)

        self._lock_page = QWidget()
        lock_layout = QVBoxLayout(self._lock_page)
        lock_text = QLabel(
            tr(
                "The live view is locked during a game: the sensor traces would show"
                " where the cubes landed."
            )
        )
        lock_text.setWordWrap(True)
        lock_text.setAlignment(Qt.AlignmentFlag.AlignCenter)
        lock_text.setStyleSheet("font-size: 18px;")
        self.unlock_button = QPushButton(tr("&Unlock the live view..."))
        self.unlock_button.clicked.connect(self._ask_unlock)
        lock_layout.addStretch(1)
        lock_layout.addWidget(lock_text)
        lock_layout.addWidget(self.unlock_button, 0, Qt.AlignmentFlag.AlignCenter)
        lock_layout.addStretch(1)

        self._view = QWidget()
        view_layout = QHBoxLayout(self._view)
        self.plots = LivePlots(self.data)
        side = QVBoxLayout()
        side.addWidget(QLabel(tr("Levels")))
        self.level_labels: list[QLabel] = []
        for _ in range(N_LEVELS):
            label = QLabel()
            label.setMinimumWidth(180)
            self.level_labels.append(label)
            side.addWidget(label)
        side.addWidget(QLabel(tr("Detected events")))
        self.events_list = QListWidget()
        self.events_list.setAccessibleName(tr("Detected events"))
        side.addWidget(self.events_list, 1)
        view_layout.addWidget(self.plots, 1)
        view_layout.addLayout(side)

        self._stack.addWidget(self._lock_page)
        self._stack.addWidget(self._view)
        self._timer = QTimer(self)
        self._timer.setInterval(REFRESH_INTERVAL_MS)
        self._timer.timeout.connect(self._refresh)
        context.stream.messages.connect(self._on_messages)
        context.stream.events.connect(self._on_events)
        context.debug_lock.changed.connect(self._lock_changed)
        self._lock_changed(context.debug_lock.locked)
        self._timer.start()

    def _on_messages(self, messages: list[Any]) -> None:
        hello = self.data.hello
        self.data.add(messages)
        if self.data.hello is not None and self.data.hello is not hello:
            profile, reason = self._profiles.load_for_device(self.data.hello.device_id.hex())
            self.data.profile = profile
            if reason:
                log.info("live view: %s", reason)

    def _on_events(self, events: list[Any]) -> None:
        if self._context.debug_lock.locked:
            return
        for event in events:
            self.events_list.addItem(describe_event(event))
        while self.events_list.count() > MAX_EVENTS_SHOWN:
            self.events_list.takeItem(0)
        self.events_list.scrollToBottom()

    def _refresh(self) -> None:
        # Only draw when someone can see it: a hidden tab costs nothing.
        if not self.isVisible() or self._context.debug_lock.locked:
            return
        self.plots.refresh()
        connected = self.data.connected_levels()
        for row, level in enumerate(reversed(range(N_LEVELS))):
            on = bool(connected[level])
            text = (
                tr("Level {level}: connected", level=level)
                if on
                else tr("Level {level}: lifted / no signal", level=level)
            )
            self.level_labels[row].setText(text)
            self.level_labels[row].setStyleSheet("" if on else "color: #b00000;")

    def _lock_changed(self, locked: bool) -> None:
        self._stack.setCurrentWidget(self._lock_page if locked else self._view)
        if locked:
            self.events_list.clear()

    def _ask_unlock(self) -> None:
        answer = QMessageBox.warning(
            self,
            tr("Unlock the live view?"),
            tr(
                "Everyone at the table will be able to see where cubes landed."
                " The unlock is written into the game journal. Unlock?"
            ),
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            QMessageBox.StandardButton.No,
        )
        if answer == QMessageBox.StandardButton.Yes:
            self._context.debug_lock.unlock()

    def showEvent(self, event: QShowEvent | None) -> None:
        super().showEvent(event)
        self._refresh()
