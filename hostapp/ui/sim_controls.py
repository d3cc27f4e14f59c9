"""Hands on the simulated tower: throw, lift, take out, close (no board needed).

Shown under the source bar while the simulated tower streams, so a new user
can play a whole game with the sensors "hearing" a tower that exists only in
the simulation. The buttons act on the physics; the app learns what happened
only through the sensor stream, exactly as with the real tower.
"""

from __future__ import annotations

from collections.abc import Callable

from PyQt6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QSpinBox, QWidget

from dsp.sim import SimulatorError
from hostapp.i18n import tr, tr_sentence
from hostapp.ui.sim_tower import SimulatedTower
from hostapp.ui.streaming import StreamHub

# The colour of a cube thrown from these buttons is ground truth only: the
# sensors cannot tell colours apart, and the game knows whose cube it asked for.
HAND_THROWN = "any"


class SimTowerControls(QWidget):
    """Buttons that act on the active source's simulated tower, if it has one."""

    def __init__(
        self, hub: StreamHub, show_error: Callable[[str], None], parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self._hub = hub
        self._show_error = show_error
        self._held: list[int] = []
        layout = QHBoxLayout(self)
        layout.setContentsMargins(6, 0, 6, 2)
        layout.addWidget(QLabel(tr("Simulated tower:")))
        self.throw_button = QPushButton(tr("Throw a cube"))
        self.throw_button.clicked.connect(self.throw)
        self.level_box = QSpinBox()
        self.level_box.setRange(0, 7)
        self.level_box.setAccessibleName(tr("Level to open"))
        self.lift_button = QPushButton(tr("Lift above level"))
        self.lift_button.clicked.connect(self.lift)
        self.take_button = QPushButton(tr("Take cubes out"))
        self.take_button.clicked.connect(self.take_out)
        self.close_button = QPushButton(tr("Close the tower"))
        self.close_button.clicked.connect(self.close_tower)
        self.back_button = QPushButton(tr("Throw back what was taken out"))
        self.back_button.clicked.connect(self.throw_back)
        for widget in (
            self.throw_button,
            self.lift_button,
            self.level_box,
            self.take_button,
            self.close_button,
            self.back_button,
        ):
            layout.addWidget(widget)
        layout.addStretch(1)
        hub.source_changed.connect(lambda _choice: self._update())
        self._update()

    def tower(self) -> SimulatedTower | None:
        """The simulated tower of the active source, if any."""
        source = self._hub.source
        return None if source is None else source.tower

    def _update(self) -> None:
        self.setVisible(self.tower() is not None)
        self.back_button.setEnabled(bool(self._held))

    def _do(self, action: Callable[[SimulatedTower], object]) -> None:
        tower = self.tower()
        if tower is None:
            return
        try:
            action(tower)
        except SimulatorError as exc:
            self._show_error(tr_sentence(str(exc)))
        self._update()

    def throw(self) -> None:
        """Drop a new cube into the shaft."""
        self._do(lambda t: t.throw(HAND_THROWN))

    def lift(self) -> None:
        """Lift the modules above the chosen level."""
        self._do(lambda t: t.lift(self.level_box.value()))

    def take_out(self) -> None:
        """Take every cube out of the open level (kept to throw back)."""

        def take(t: SimulatedTower) -> None:
            level = t.exposed
            if level is None:
                raise SimulatorError(tr("Lift the tower first: no level is open."))
            self._held += t.take_out(level)

        self._do(take)

    def close_tower(self) -> None:
        """Put the lifted modules back."""
        self._do(lambda t: t.close())

    def throw_back(self) -> None:
        """Throw the next cube taken out back into the shaft."""

        def back(t: SimulatedTower) -> None:
            if self._held:
                t.throw_back(self._held.pop(0))

        self._do(back)
