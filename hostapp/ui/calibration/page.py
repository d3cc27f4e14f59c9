"""The calibration wizard: set up, follow the prompts, see the results, keep the profile.

The page drives the same :class:`~hostapp.calibration.tower_session.TowerCalibration`
as ``towerear calibrate``, fed from the stream's decoded messages on the UI
thread (a few dozen per drain, cheap). Nothing is saved until a session
finishes; aborting keeps the previous profile. When the active source is the
simulated tower, a "simulated user" can do the handwork (a demonstration,
and how the tests calibrate through the real widgets).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from PyQt6.QtCore import Qt, QTimer
from PyQt6.QtGui import QFont, QKeySequence, QShortcut
from PyQt6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from hostapp.calibration.coins import COINS, ReferenceMass, typed_mass
from hostapp.calibration.feed import FrameFeeder
from hostapp.calibration.health import ReadingCollector
from hostapp.calibration.profile import N_LEVELS, CalibrationProfile, ProfileStore
from hostapp.calibration.report import grade_level, write_report
from hostapp.calibration.simulated import SimulatedUser
from hostapp.calibration.tower_session import TowerCalibration, TowerCalibrationPlan
from hostapp.errors import TowerearError
from hostapp.i18n import tr, tr_sentence
from hostapp.paths import data_dir
from hostapp.ui.context import AppContext

_HEALTH_LISTEN_MS = 3000
_COLUMNS = ("counts/g", "noise g", "drift g/min", "linearity %", "cube g", "grade")


class CalibrationPage(QWidget):
    """Guided calibration of the connected device, level by level."""

    def __init__(
        self, context: AppContext, parent: QWidget | None = None, store: ProfileStore | None = None
    ) -> None:
        super().__init__(parent)
        self.context = context
        self.store = store or ProfileStore()
        self.feeder = FrameFeeder()
        self.session: TowerCalibration | None = None
        self.user: SimulatedUser | None = None
        self.profile: CalibrationProfile | None = None
        self._collector: ReadingCollector | None = None

        self.device_label = QLabel(tr("Waiting for a device ..."))
        self.device_label.setWordWrap(True)

        setup = QGroupBox(tr("Set-up"))
        form = QFormLayout(setup)
        levels_row = QHBoxLayout()
        self.level_boxes: list[QCheckBox] = []
        for level in range(N_LEVELS):
            box = QCheckBox(str(level))
            box.setChecked(True)
            box.setAccessibleName(tr("Calibrate level {level}", level=level))
            self.level_boxes.append(box)
            levels_row.addWidget(box)
        form.addRow(tr("Levels:"), levels_row)
        self.reference_box = self._mass_combo(optional=False)
        self.reference_grams = QDoubleSpinBox()
        self.reference_grams.setRange(0.5, 90.0)
        self.reference_grams.setValue(10.0)
        self.reference_grams.setSuffix(" g")
        self.reference_grams.setEnabled(False)
        self.reference_box.currentIndexChanged.connect(
            lambda _i: self.reference_grams.setEnabled(self.reference_box.currentData() == "typed"))
        form.addRow(tr("Reference mass:"), self._row(self.reference_box, self.reference_grams))
        self.second_box = self._mass_combo(optional=True)
        form.addRow(tr("Second mass (linearity):"), self.second_box)
        self.cubes_box = QSpinBox()
        self.cubes_box.setRange(1, 20)
        self.cubes_box.setValue(5)
        form.addRow(tr("Cubes to weigh per level:"), self.cubes_box)
        self.simulated_user = QCheckBox(tr("Let a simulated user do the handwork"))
        form.addRow("", self.simulated_user)

        self.start_button = QPushButton(tr("&Start calibration"))
        self.start_button.clicked.connect(self.start)
        self.abort_button = QPushButton(tr("&Abort"))
        self.abort_button.clicked.connect(self.abort)
        self.abort_button.setEnabled(False)
        self.health_button = QPushButton(tr("&Health check"))
        self.health_button.clicked.connect(self.health_check)
        self.report_button = QPushButton(tr("Write &report"))
        self.report_button.clicked.connect(self.write_report)
        self.export_button = QPushButton(tr("E&xport profile ..."))
        self.export_button.clicked.connect(self._export_dialog)
        self.import_button = QPushButton(tr("&Import profile ..."))
        self.import_button.clicked.connect(self._import_dialog)
        buttons = QHBoxLayout()
        for button in (
            self.start_button,
            self.abort_button,
            self.health_button,
            self.report_button,
            self.export_button,
            self.import_button,
        ):
            buttons.addWidget(button)
        buttons.addStretch(1)

        self.prompt = QLabel(tr("Choose the levels and the reference mass, then start."))
        font = QFont(self.prompt.font())
        font.setPointSize(max(font.pointSize(), 10) + 6)
        font.setBold(True)
        self.prompt.setFont(font)
        self.prompt.setWordWrap(True)
        self.prompt.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        self.prompt.setMinimumHeight(70)
        self.progress = QProgressBar()
        self.progress.setRange(0, 100)

        self.table = QTableWidget(N_LEVELS, len(_COLUMNS))
        self.table.setHorizontalHeaderLabels([tr(c) for c in _COLUMNS])
        self.table.setVerticalHeaderLabels([tr("Level {level}", level=k) for k in range(N_LEVELS)])
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        header = self.table.horizontalHeader()
        if header is not None:
            header.setStretchLastSection(True)
        self.findings = QListWidget()
        self.findings.setMaximumHeight(140)
        self.message = QLabel("")
        self.message.setWordWrap(True)

        layout = QVBoxLayout(self)
        layout.addWidget(self.device_label)
        layout.addWidget(setup)
        layout.addLayout(buttons)
        layout.addWidget(self.prompt)
        layout.addWidget(self.progress)
        layout.addWidget(self.table, 1)
        layout.addWidget(QLabel(tr("Health check:")))
        layout.addWidget(self.findings)
        layout.addWidget(self.message)
        QShortcut(QKeySequence("Escape"), self, self.abort)

        context.stream.messages.connect(self._on_messages)
        context.stream.source_changed.connect(lambda _choice: self._reset_device())
        self._health_timer = QTimer(self)
        self._health_timer.setSingleShot(True)
        self._health_timer.timeout.connect(self._finish_health)

    # -- widgets ----------------------------------------------------------------
    @staticmethod
    def _row(*widgets: QWidget) -> QWidget:
        holder = QWidget()
        row = QHBoxLayout(holder)
        row.setContentsMargins(0, 0, 0, 0)
        for widget in widgets:
            row.addWidget(widget)
        return holder

    @staticmethod
    def _mass_combo(*, optional: bool) -> QComboBox:
        box = QComboBox()
        if optional:
            box.addItem(tr("none"), None)
        for item in COINS:
            box.addItem(f"{item.label} ({item.grams:g} g)", item.key)
        box.addItem(tr("typed mass"), "typed")
        return box

    def _reference(self, box: QComboBox) -> ReferenceMass | None:
        key = box.currentData()
        if key is None:
            return None
        if key == "typed":
            return typed_mass(self.reference_grams.value())
        return next(c for c in COINS if c.key == key)

    # -- the stream -------------------------------------------------------------
    def _reset_device(self) -> None:
        if self.session is not None:
            self.abort()
        self.feeder = FrameFeeder(self.feeder.consumer)
        self.profile = None
        self.device_label.setText(tr("Waiting for a device ..."))

    def _on_messages(self, messages: list[object]) -> None:
        had_hello = self.feeder.hello is not None
        self.feeder.feed_messages((msg, 1) for msg in messages)
        if not had_hello and self.feeder.device_id is not None:
            self._show_device()
        session = self.session
        if session is None:
            return
        if self.user is not None:
            self.user.react(session)
        self.prompt.setText(session.prompt)
        self.progress.setValue(round(100 * session.progress))
        if session.finished:
            self._finish()

    def _show_device(self) -> None:
        device = self.feeder.device_id
        assert device is not None
        self.profile, why = self.store.load_for_device(device)
        if self.profile is None:
            text = tr("Device {device}: {why}", device=device, why=why or "")
        else:
            text = _calibrated_text(self.profile)
            self._show_profile(self.profile)
        self.device_label.setText(text)

    # -- actions ----------------------------------------------------------------
    def start(self) -> None:
        """Start a calibration with the chosen set-up."""
        device = self.feeder.device_id
        if device is None:
            self.context.show_error(
                tr(
                    "No device is streaming: connect one or choose the "
                    "simulated tower in the source bar."
                )
            )
            return
        levels = tuple(k for k in range(N_LEVELS - 1, -1, -1) if self.level_boxes[k].isChecked())
        reference = self._reference(self.reference_box)
        try:
            plan = TowerCalibrationPlan(
                levels=levels,
                reference=reference,
                second_reference=self._reference(self.second_box),
                n_cubes=self.cubes_box.value(),
                load_rate_hz=float(self.feeder.hello.load_rate_hz if self.feeder.hello else 80),
                piezo_rate_hz=float(self.feeder.hello.piezo_rate_hz if self.feeder.hello else 2000),
            )
            self.session = TowerCalibration(plan, device, previous=self.profile)
        except (TowerearError, ValueError) as exc:
            self.context.show_error(tr_sentence(str(exc)))
            return
        self.user = None
        tower = getattr(self.context.stream.source, "tower", None)
        if self.simulated_user.isChecked() and tower is not None and reference is not None:
            self.user = SimulatedUser(
                tower.act,
                reference,
                self._reference(self.second_box),
                refusals=lambda: len(tower.refused_actions()),
            )
        self.feeder.consumer = self.session
        self.start_button.setEnabled(False)
        self.abort_button.setEnabled(True)
        self.message.setText("")
        self.prompt.setText(self.session.prompt)

    def abort(self) -> None:
        """Stop the running calibration; the stored profile stays as it was."""
        if self.session is None:
            return
        self.session = None
        self.user = None
        self.feeder.consumer = None
        self.start_button.setEnabled(True)
        self.abort_button.setEnabled(False)
        self.prompt.setText(tr("Calibration aborted; the previous profile is unchanged."))

    def _finish(self) -> None:
        assert self.session is not None
        try:
            profile = self.session.result()
            self.store.save(profile)
        except (TowerearError, OSError) as exc:
            self.context.show_error(
                tr("The profile could not be saved: {why}", why=tr_sentence(str(exc)))
            )
            return
        finally:
            self.session = None
            self.user = None
            self.feeder.consumer = None
            self.start_button.setEnabled(True)
            self.abort_button.setEnabled(False)
        self.profile = profile
        self._show_profile(profile)
        self.device_label.setText(_calibrated_text(profile))
        self.message.setText(
            tr("Saved to {path}.", path=str(self.store.path_for(profile.device_id)))
        )

    def _show_profile(self, profile: CalibrationProfile) -> None:
        for level, cell in enumerate(profile.load):
            grade = grade_level(profile, level)
            if cell is None:
                values = ["-"] * (len(_COLUMNS) - 1)
            else:
                values = [
                    f"{cell.counts_per_gram:.1f} ± {cell.counts_per_gram_uncertainty:.1f}",
                    f"{cell.noise_g_rms:.4f}",
                    f"{cell.drift_g_per_min:+.4f}",
                    "-" if cell.linearity_error_pct is None else f"{cell.linearity_error_pct:+.2f}",
                    "-"
                    if cell.cube_mass_g is None or cell.cube_mass_uncertainty_g is None
                    else f"{cell.cube_mass_g:.3f} ± {cell.cube_mass_uncertainty_g:.3f}",
                ]
            values.append(tr("pass") if grade.passed else tr("fail: ") + "; ".join(grade.reasons))
            for column, text in enumerate(values):
                self.table.setItem(level, column, QTableWidgetItem(text))
        self.table.resizeColumnsToContents()

    def health_check(self) -> None:
        """Listen to the quiet tower for a few seconds, then list what is wrong."""
        if self.feeder.device_id is None:
            self.context.show_error(tr("No device is streaming, so there is nothing to check."))
            return
        if self.session is not None:
            return
        self._collector = ReadingCollector()
        self.feeder.consumer = self._collector
        self.findings.clear()
        self.findings.addItem(tr("Listening to the quiet tower ..."))
        self._health_timer.start(_HEALTH_LISTEN_MS)

    def _finish_health(self) -> None:
        collector, self._collector = self._collector, None
        if self.feeder.consumer is collector:
            self.feeder.consumer = None
        self.findings.clear()
        findings = collector.check(self.profile) if collector else []
        if not findings:
            self.findings.addItem(tr("No load readings arrived: is the device streaming?"))
        for f in findings:
            mark = "✓" if f.ok else "✗"
            self.findings.addItem(f"{mark} {f.what}" + (f"  → {f.fix}" if f.fix else ""))

    def write_report(self) -> Path | None:
        """Write the report of the stored profile; returns its path."""
        if self.profile is None:
            self.context.show_error(tr("This device has no calibration yet: calibrate first."))
            return None
        path = write_report(self.profile, data_dir() / "reports" / self.profile.device_id)
        self.message.setText(tr("Report written to {path}.", path=str(path)))
        return path

    def export_to(self, path: Path) -> None:
        """Export the device's profile to ``path``."""
        if self.profile is None:
            self.context.show_error(tr("This device has no calibration yet: calibrate first."))
            return
        try:
            self.store.export(self.profile.device_id, path)
        except (TowerearError, OSError) as exc:
            self.context.show_error(tr_sentence(str(exc)))
            return
        self.message.setText(tr("Exported to {path}.", path=str(path)))

    def import_from(self, path: Path) -> None:
        """Import a profile for the connected device; refuse another device's."""
        device = self.feeder.device_id
        if device is None:
            self.context.show_error(
                tr("Connect the device first: a profile belongs to one device.")
            )
            return
        try:
            self.profile = self.store.import_file(path, device_id=device)
        except TowerearError as exc:
            self.context.show_error(tr_sentence(str(exc)))
            return
        self._show_profile(self.profile)
        self.message.setText(tr("Imported {path}.", path=str(path)))

    def _export_dialog(self) -> None:
        name, _ = QFileDialog.getSaveFileName(self, tr("Export profile"), "", "JSON (*.json)")
        if name:
            self.export_to(Path(name))

    def _import_dialog(self) -> None:
        name, _ = QFileDialog.getOpenFileName(self, tr("Import profile"), "", "JSON (*.json)")
        if name:
            self.import_from(Path(name))


def _calibrated_text(profile: CalibrationProfile) -> str:
    """"Device ...: calibrated 2026-12-03 20:25 UTC." (the profile's ISO time, readable)."""
    try:
        when = datetime.fromisoformat(profile.created_utc).astimezone(UTC)
        shown = f"{when:%Y-%m-%d %H:%M} UTC"
    except ValueError:
        shown = profile.created_utc
    return tr("Device {device}: calibrated {when}.", device=profile.device_id, when=shown)
