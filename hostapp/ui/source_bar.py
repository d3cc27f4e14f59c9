"""The source bar: which source streams, how well, and the record button."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from PyQt6.QtCore import Qt
from PyQt6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from hostapp.errors import TowerearError
from hostapp.i18n import tr, tr_sentence
from hostapp.ui.sources_adapter import source_display_name
from hostapp.ui.streaming import (
    REPLAY_SPEEDS,
    SOURCE_KINDS,
    SourceChoice,
    StreamHub,
    StreamStatus,
)


def source_kind_label(kind: str) -> str:
    """The translated name of a source kind."""
    return {
        "sim": tr("Simulated tower"),
        "device": tr("Sensor device (USB)"),
        "simavr": tr("Firmware in simavr"),
        "audio": tr("Audio interface"),
        "replay": tr("Recording replay"),
    }[kind]


def status_line(status: StreamStatus) -> str:
    """The connection sentence of the source bar."""
    h = status.health
    if h.connected:
        state = tr("connected")
    elif h.finished:
        state = tr("replay finished")
    else:
        state = tr("NOT CONNECTED - reconnecting")
    parts = [f"{source_display_name(status.source_name)}: {state}"]
    if h.detail:
        parts.append(h.detail)
    if status.hello is not None:
        parts.append(tr("firmware {version}", version=status.hello.firmware_version))
    return " \u2022 ".join(parts)


# What the detector finds wrong with a level's sensors: (one level, several).
_SILENT_CELLS = (
    "The load cell of level {levels} reads nothing: cubes landing there are only heard. "
    "Check its wires.",
    "The load cells of levels {levels} read nothing: cubes landing there are only heard. "
    "Check their wires.",
)
_FLAKY_CELLS = (
    "The load cell of level {levels} stopped answering now and then with no module lifted. "
    "Check its solder joints and its wire.",
    "The load cells of levels {levels} stopped answering now and then with no module lifted. "
    "Check their solder joints and their wires.",
)
_DEAF_DISCS = (
    "The contact microphone of level {levels} hears none of its plate's landings. "
    "Check its wire and glue.",
    "The contact microphones of levels {levels} hear none of their plates' landings. "
    "Check their wires and glue.",
)


_ROCKING = (
    "The tower rocks on its table (about {hz:.1f} times a second): landings come late "
    "or are missed while it does. Stand it on a firm, heavy table with a felt pad under it."
)


_SHAKING = (
    "The tower shakes with what it stands on (a moving train or boat, a machine nearby): "
    "the shaking, the same on every load cell, is taken out of their readings. Faint "
    "landings may still be missed; a felt pad under the tower helps."
)


_HUM = (
    "The contact microphones pick up mains hum ({hz} Hz): it is filtered out, but faint "
    "landings may be missed. A ground loop: try another USB port or unplug chargers near "
    "the tower."
)


# Why 6 dB (9 dB as read, before the ear's dead band): discs glued alike
# differ by a few dB; one that hears this much more or less than the others
# has an amplifier set to another gain or glue that gave way, and the user
# can set it right (the ear hears past it meanwhile).
UNEVEN_DISC_DB = 6.0
_LOUD_DISC = (
    "The contact microphone of level {level} hears about {db:.0f} dB more than the others: "
    "landings are heard as if it did not, but check its amplifier's gain."
)
_QUIET_DISC = (
    "The contact microphone of level {level} hears about {db:.0f} dB less than the others: "
    "landings are heard as if it did not, but check its glue and its amplifier's gain."
)


def warning_line(status: StreamStatus) -> str:
    """What the detector found wrong with the sensors or the tower ("" when nothing)."""
    parts = [
        tr(texts[len(levels) > 1], levels=", ".join(str(level) for level in levels))
        for levels, texts in ((status.silent_cells, _SILENT_CELLS),
                              (status.flaky_cells, _FLAKY_CELLS),
                              (status.deaf_discs, _DEAF_DISCS))
        if levels
    ]
    for level, gain in enumerate(status.disc_gains_db):
        if abs(gain) >= UNEVEN_DISC_DB:
            parts.append(tr(_LOUD_DISC if gain > 0 else _QUIET_DISC, level=level, db=abs(gain)))
    if status.rocking_hz > 0:
        parts.append(tr(_ROCKING, hz=status.rocking_hz))
    if status.shaking:
        parts.append(tr(_SHAKING))
    if status.hum_hz:
        parts.append(tr(_HUM, hz=", ".join(f"{hz:.0f}" for hz in status.hum_hz)))
    return " ".join(parts)


def counters_line(status: StreamStatus) -> str:
    """Lost messages, CRC errors, overruns and reconnects, always shown."""
    h = status.health
    return tr(
        "{rate:.0f} msg/s \u2022 lost {lost} \u2022 CRC errors {crc} \u2022 overruns {over}"
        " \u2022 reconnects {rec}",
        rate=status.messages_per_s,
        lost=h.lost_messages,
        crc=h.crc_errors,
        over=h.overruns,
        rec=h.reconnects,
    )


class SourceBar(QWidget):
    """Choose the source, see its health, record its raw stream.

    Parameters
    ----------
    hub
        The stream hub it controls and listens to.
    recordings_dir
        Where new recordings are written.
    show_error
        Shows a one-sentence error dialog.
    """

    def __init__(
        self,
        hub: StreamHub,
        recordings_dir: Path,
        show_error: Callable[[str], None],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._hub = hub
        self._recordings_dir = recordings_dir
        self._show_error = show_error
        self._replay_path = ""
        rows = QVBoxLayout(self)
        rows.setContentsMargins(6, 2, 6, 2)
        layout = QHBoxLayout()
        rows.addLayout(layout)
        # Below the bar, only while there is something wrong with a sensor.
        self.warning_label = QLabel("")
        self.warning_label.setWordWrap(True)
        self.warning_label.setStyleSheet("color: #b00000; font-weight: bold;")
        self.warning_label.setVisible(False)
        rows.addWidget(self.warning_label)

        self.kind_box = QComboBox()
        self.kind_box.setAccessibleName(tr("Source"))
        for kind in SOURCE_KINDS:
            self.kind_box.addItem(source_kind_label(kind), kind)
        self.kind_box.activated.connect(self._kind_chosen)
        source_label = QLabel(tr("Source:"))
        source_label.setBuddy(self.kind_box)

        self.speed_box = QComboBox()
        self.speed_box.setAccessibleName(tr("Replay speed"))
        for speed in REPLAY_SPEEDS:
            self.speed_box.addItem(f"{speed:g}\u00d7", speed)
        self.speed_box.activated.connect(self._speed_chosen)
        self.speed_box.setVisible(False)

        self.state_label = QLabel(tr("no source"))
        self.state_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.counters_label = QLabel("")
        # Long texts (a German counter line, a long port name) must not widen
        # the window: the labels may shrink below their text's width.
        for label in (self.state_label, self.counters_label):
            label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
            label.setMinimumWidth(120)
        self.record_button = QPushButton(tr("\u25cf Recor&d"))
        self.record_button.setCheckable(True)
        self.record_button.setToolTip(tr("Save the raw stream as a recording file"))
        self.record_button.toggled.connect(self._record_toggled)

        layout.addWidget(source_label)
        layout.addWidget(self.kind_box)
        layout.addWidget(self.speed_box)
        layout.addWidget(self.state_label, 1)
        layout.addWidget(self.counters_label, 1)
        layout.addWidget(self.record_button)
        hub.status.connect(self.show_status)
        hub.source_changed.connect(self._source_changed)
        if hub.choice is not None:
            self._source_changed(hub.choice)

    def show_status(self, status: StreamStatus) -> None:
        """Show ``status`` (connected or not at once, and the counters)."""
        self.state_label.setText(status_line(status))
        self.state_label.setStyleSheet(
            "" if status.health.connected or status.health.finished
            else "color: #b00000; font-weight: bold;"
        )
        self.counters_label.setText(counters_line(status))
        warning = warning_line(status)
        self.warning_label.setText(warning)
        self.warning_label.setVisible(bool(warning))
        if (status.recording is not None) != self.record_button.isChecked():
            self.record_button.blockSignals(True)
            self.record_button.setChecked(status.recording is not None)
            self.record_button.blockSignals(False)

    def choose(self, choice: SourceChoice) -> None:
        """Switch the hub to ``choice``; a failure is shown as one sentence."""
        try:
            self._hub.switch_to(choice)
        except TowerearError as exc:
            self.state_label.setText(tr("no source"))
            self._show_error(tr_sentence(str(exc)))

    def _source_changed(self, choice: object) -> None:
        if not isinstance(choice, SourceChoice):
            return
        index = self.kind_box.findData(choice.kind)
        if index >= 0:
            self.kind_box.setCurrentIndex(index)
        self.speed_box.setVisible(choice.kind == "replay")
        speed_index = self.speed_box.findData(choice.speed)
        if speed_index >= 0:
            self.speed_box.setCurrentIndex(speed_index)

    def _kind_chosen(self, index: int) -> None:
        kind = str(self.kind_box.itemData(index))
        if kind == "replay":
            path, _ = QFileDialog.getOpenFileName(
                self, tr("Open a recording"), str(self._recordings_dir), tr("Recordings (*.bin)")
            )
            if not path:
                self._source_changed(self._hub.choice)
                return
            self._replay_path = path
        speed = float(self.speed_box.currentData() or 1.0)
        self.choose(SourceChoice(kind, path=self._replay_path, speed=speed))

    def _speed_chosen(self, index: int) -> None:
        if self._replay_path:
            speed = float(self.speed_box.itemData(index))
            self.choose(SourceChoice("replay", path=self._replay_path, speed=speed))

    def _new_recording_path(self) -> Path:
        """A recording named by the time, with -2, -3 ... for a second one in the same second."""
        stamp = time.strftime("%Y%m%d-%H%M%S")
        path = self._recordings_dir / f"towerear-{stamp}.bin"
        n = 1
        while path.exists():
            n += 1
            path = self._recordings_dir / f"towerear-{stamp}-{n}.bin"
        return path

    def _record_toggled(self, on: bool) -> None:
        try:
            if on:
                self._hub.start_recording(str(self._new_recording_path()))
            else:
                self._hub.stop_recording()
        except TowerearError as exc:
            self.record_button.blockSignals(True)
            self.record_button.setChecked(False)
            self.record_button.blockSignals(False)
            self._show_error(tr_sentence(str(exc)))
