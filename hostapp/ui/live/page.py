"""The live view page: scopes, load traces, level states and events.

Locked while a game runs (the traces would show where cubes landed) until a
player unlocks it on purpose.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
import numpy.typing as npt
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
from hostapp.ui.live.ring import clip_to_window, peak_downsample_channels, stack_traces
from hostapp.ui.live.scales import LoadScale, ScopeScale, noise_sigma

log = logging.getLogger(__name__)

# Why 4 s: long enough that a throw is still on the scopes when its landing
# shows in the events list and the eye moves over.
PIEZO_WINDOW_S = 4.0
LOAD_WINDOW_S = 20.0
# Half a frame per tick: 16 ms ticks give 30 full frames/s, smooth for a
# scope, with the UI thread idle between the halves.
REFRESH_INTERVAL_MS = 16
# Points per curve: about two per horizontal pixel of a plot (half the window).
MAX_POINTS = 500
MAX_EVENTS_SHOWN = 200


def _set_stacked(
    curve: pg.PlotCurveItem, times_s: npt.NDArray[np.float64], bands: npt.NDArray[np.float64]
) -> None:
    """Draw ``(m, N_LEVELS)`` bands against ``(m,)`` times as one curve."""
    x, y, connect = stack_traces(times_s, bands)
    curve.setData(x, y, connect=connect, skipFiniteCheck=True)
    curve.points_per_trace = int(times_s.size)


def _trace(
    curve: pg.PlotCurveItem, level: int
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """One level's ``(x, y)`` out of a curve drawn by :func:`_set_stacked`."""
    x, y = curve.getData()
    m = int(getattr(curve, "points_per_trace", 0))
    if x is None or y is None or m == 0:
        return np.zeros(0), np.zeros(0)
    return np.asarray(x[level * m : (level + 1) * m]), np.asarray(y[level * m : (level + 1) * m])


def describe_event(event: Any) -> str:
    """One short line for the events list, in the UI's language (the live view may show floors)."""
    data = event.to_json() if hasattr(event, "to_json") else {"event": str(event)}
    kind = str(data.get("event", "?"))
    when = f"{float(data.get('t', 0.0)):7.2f} s  "
    sure = round(100 * float(data.get("confidence", 0.0)))
    if kind in ("landing", "removal"):
        floor, cubes = data["floor"], int(data["cubes"])
        if kind == "landing" and cubes == 1:
            text = tr("a cube landed on floor {floor} ({sure} % sure)", floor=floor, sure=sure)
        elif kind == "landing":
            text = tr("{cubes} cubes landed on floor {floor} ({sure} % sure)",
                      cubes=cubes, floor=floor, sure=sure)
        elif cubes == 1:
            text = tr("a cube left floor {floor} ({sure} % sure)", floor=floor, sure=sure)
        else:
            text = tr("{cubes} cubes left floor {floor} ({sure} % sure)",
                      cubes=cubes, floor=floor, sure=sure)
        if data.get("source") == "acoustic":
            text += ", " + tr("heard only")
        if data.get("knocked_from") is not None:
            text += ", " + tr("knocked down from floor {floor}", floor=data["knocked_from"])
        if data.get("knocked"):
            text += ", " + tr("knocked down")
        if data.get("maybe_stopped_on") is not None:
            text += ", " + tr("perhaps knocked down from floor {floor}",
                              floor=data["maybe_stopped_on"])
        if data.get("knocked_down_to") is not None:
            text += ", " + tr("the thrown cube stopped here and knocked the one on floor "
                              "{floor} down", floor=data["knocked_down_to"])
    elif kind == "lift":
        text = tr("the tower was opened: level {level} lies open", level=data["exposed"])
    elif kind == "closed":
        text = tr("the tower was closed")
    elif kind == "disturbance":
        text = tr("a disturbance (not a landing)")
    else:
        text = kind
    return when + text


class LivePlots(QWidget):
    """Eight piezo scopes and eight load traces, level 7 on top like the tower.

    Drawing is what limits the frame rate, so: each side is one plot with its
    eight traces stacked (level k between k and k + 1), which keeps the scene
    to two view boxes instead of sixteen; the plots carry no axes (axis text is
    most of pyqtgraph's paint time); time runs relative to the newest sample
    so the x range never changes; the traces are scaled into their bands by
    :mod:`hostapp.ui.live.scales`, with scales that move only when a trace
    leaves them; and the two sides are refreshed on alternate ticks, so the
    UI thread never does more than half a frame's drawing at once.
    """

    def __init__(self, data: LiveData, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._data = data
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.piezo_view = pg.GraphicsLayoutWidget()
        self.load_view = pg.GraphicsLayoutWidget()
        for view in (self.piezo_view, self.load_view):
            view.setBackground("w")
            layout.addWidget(view, 1)
        self.piezo_label = self.piezo_view.addLabel(tr("Piezo (ADC codes)"), row=0, col=0)
        self._piezo_text = ""
        self.unit_label = self.load_view.addLabel(tr("Load"), row=0, col=0)
        self._unit_text = ""
        self.piezo_plot = self.piezo_view.addPlot(row=1, col=0)
        self.load_plot = self.load_view.addPlot(row=1, col=0)
        for plot, window in ((self.piezo_plot, PIEZO_WINDOW_S), (self.load_plot, LOAD_WINDOW_S)):
            plot.setMenuEnabled(False)
            plot.setMouseEnabled(x=False, y=False)
            plot.hideButtons()
            plot.hideAxis("left")
            plot.hideAxis("bottom")
            plot.disableAutoRange()
            plot.setXRange(-window, 0.0, padding=0.0)
            plot.setYRange(0.0, float(N_LEVELS), padding=0.0)
            for level in range(N_LEVELS):
                label = pg.TextItem(tr("L{level}", level=level), color="#555555", anchor=(0, 0.5))
                label.setPos(-window, level + 0.85)
                plot.addItem(label)
        piezo_pen = pg.mkPen("#1f5fbf", width=1)
        # width 1: wider pens take a much slower path in the raster paint engine
        load_pen = pg.mkPen("#7b4a24", width=1)
        # One curve per side, its eight traces laid end to end and kept apart
        # by a connect array: one setData and one path to paint per refresh
        # instead of eight (each item costs Python calls on the UI thread).
        self.piezo_curve = pg.PlotCurveItem(pen=piezo_pen, skipFiniteCheck=True)
        self.load_curve = pg.PlotCurveItem(pen=load_pen, skipFiniteCheck=True)
        self.piezo_plot.addItem(self.piezo_curve)
        self.load_plot.addItem(self.load_curve)
        self.scope_scale = ScopeScale()
        self.load_scale = LoadScale(N_LEVELS)
        self._next_half = 0
        self.frames_drawn = 0

    def refresh_half(self) -> None:
        """Redraw the scopes or the load traces, alternately (one call per timer tick)."""
        if self._next_half == 0:
            self._refresh_piezo()
        else:
            self._refresh_load()
            self.frames_drawn += 1
        self._next_half = 1 - self._next_half

    def refresh(self) -> None:
        """Redraw everything now (bounded work: MAX_POINTS per trace)."""
        self._refresh_piezo()
        self._refresh_load()
        self.frames_drawn += 1

    def piezo_trace(self, level: int) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """The drawn ``(x, y)`` of one level's scope (for tests and screenshots)."""
        return _trace(self.piezo_curve, level)

    def load_trace(self, level: int) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """The drawn ``(x, y)`` of one level's load trace."""
        return _trace(self.load_curve, level)

    def _refresh_piezo(self) -> None:
        latest = self._data.latest_s
        hello = self._data.hello
        if hello is not None:
            self.scope_scale.full_scale = float((1 << hello.adc_bits) - 1)
        t, v = self._data.piezo.snapshot()
        t, v = clip_to_window(t, v, t_from_s=latest - PIEZO_WINDOW_S)
        dt, dv = peak_downsample_channels(t - latest, v, max_points=MAX_POINTS)
        _set_stacked(self.piezo_curve, dt, self.scope_scale.bands(dv))
        text = tr("Piezo (±{codes} ADC codes)", codes=round(self.scope_scale.half_span))
        if text != self._piezo_text:  # a label change relayouts the view: only when needed
            self._piezo_text = text
            self.piezo_label.setText(text)

    def _refresh_load(self) -> None:
        latest = self._data.latest_s
        t, v = self._data.load.snapshot()
        t, v = clip_to_window(t, v, t_from_s=latest - LOAD_WINDOW_S)
        sigma = noise_sigma(v)
        dt, dv = peak_downsample_channels(t - latest, v, max_points=MAX_POINTS)
        any_calibrated = False
        values = np.empty_like(dv)
        for level in range(N_LEVELS):
            values[:, level], calibrated = self._data.load_in_grams(dv[:, level], level)
            if calibrated:
                sigma[level] /= abs(self._data.counts_per_gram(level))
            any_calibrated |= calibrated
        _set_stacked(self.load_curve, dt, self.load_scale.bands(dt, values, sigma))
        unit = tr("g") if any_calibrated else tr("counts")
        text = tr("Load") + f" ({unit})"
        if text != self._unit_text:  # a label change relayouts the view: only when needed
            self._unit_text = text
            self.unit_label.setText(text)


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
        self._shown_connected: tuple[bool, ...] = ()
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
        # wide enough for a whole line such as "123.45 s  a cube landed on floor 3 (97 % sure)"
        self.events_list.setMinimumWidth(350)
        # Whole lines, not a sideways scroll: knock-downs and suspicions run long.
        self.events_list.setWordWrap(True)
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
        self.plots.refresh_half()
        connected = tuple(bool(c) for c in self.data.connected_levels())
        if connected == self._shown_connected:
            return
        self._shown_connected = connected
        for row, level in enumerate(reversed(range(N_LEVELS))):
            on = connected[level]
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
