"""How long the UI thread was kept from running: a timer measuring its own lateness.

A ``QTimer`` asks to fire every ``interval_ms``; when the UI thread is busy
(drawing plots, draining queues) the tick comes late. The worst lateness seen
is the UI thread's worst stall, the number the benchmark reports.
"""

from __future__ import annotations

import time

from PyQt6.QtCore import QObject, Qt, QTimer


class StallMeter(QObject):
    """Measure the UI thread's worst stall with a precise heartbeat timer.

    Parameters
    ----------
    interval_ms
        Heartbeat period; the resolution of the measurement.
    """

    def __init__(self, interval_ms: int = 5, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._interval_s = interval_ms / 1000.0
        self._timer = QTimer(self)
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self._tick)
        self._last: float | None = None
        self._late_ms: list[float] = []
        self.worst_stall_ms = 0.0
        self.ticks = 0

    def start(self) -> None:
        """Start measuring from now (forgets the previous worst)."""
        self._last = None
        self._late_ms = []
        self.worst_stall_ms = 0.0
        self.ticks = 0
        self._timer.start()

    def stop(self) -> None:
        """Stop the heartbeat; :attr:`worst_stall_ms` keeps its value."""
        self._timer.stop()

    def _tick(self) -> None:
        now = time.perf_counter()
        if self._last is not None:
            late_ms = (now - self._last - self._interval_s) * 1000.0
            self.worst_stall_ms = max(self.worst_stall_ms, late_ms)
            self._late_ms.append(late_ms)
        self._last = now
        self.ticks += 1

    def stall_percentile_ms(self, percent: float) -> float:
        """The lateness not exceeded by ``percent`` % of the ticks, in milliseconds.

        Unlike the worst stall it is not set by one moment when the operating
        system gave the CPU to another process.
        """
        if not self._late_ms:
            return 0.0
        ordered = sorted(self._late_ms)
        index = min(len(ordered) - 1, int(len(ordered) * percent / 100.0))
        return ordered[index]
