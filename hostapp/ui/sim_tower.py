"""The simulated tower the app streams from when no board is plugged in, with hands.

A :class:`~dsp.sim.TowerSimulator` (physics) runs inside a
:class:`~hostapp.sources.sim_device.SimulatedDevice` (protocol bytes) inside a
:class:`~hostapp.sources.sim_device.SimulatedDeviceSource` (a reader thread
paced to the wall clock). :class:`SimulatedTower` lets the user (the source
bar's buttons) and the tests act on that physics as a player's hands would:
throw a cube, lift the modules above a level, take cubes out, close. The
physics is advanced by the source's thread, so every action and every advance
take one lock: an action lands between two advances, never inside one.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from typing import TypeVar

from dsp.sim import SensorBlock, SimulatorError, TowerSimulator, draw_tower
from hostapp.sources.sim_device import (
    SimulatedDevice,
    SimulatedDeviceSource,
    clock_offset_for_seed,
    tower_device_info,
)

T = TypeVar("T")


class _LockedPhysics:
    """The simulator as the device's physics, advanced under the tower's lock."""

    def __init__(self, simulator: TowerSimulator, lock: threading.Lock) -> None:
        self._simulator = simulator
        self._lock = lock
        self.refused: list[str] = []

    def advance(self, duration_s: float) -> SensorBlock:
        with self._lock:
            while True:
                try:
                    return self._simulator.advance(duration_s)
                except SimulatorError as exc:
                    # Hands scheduled for later (a calibration's simulated
                    # user) found the tower otherwise when their time came: a
                    # player had lifted or closed it first. That action is
                    # dropped (the simulator has taken it off its schedule)
                    # and the physics runs on; a stream must not die of it.
                    self.refused.append(str(exc))


class SimulatedTower:
    """A simulated tower streaming like the real device, and hands to play on it.

    Parameters
    ----------
    seed
        Draws the tower (its physical constants) and the session's randomness.
    pace
        Simulated seconds per wall second (tests run faster than real time).
    tap
        Receives every raw byte chunk (the recorder).
    """

    def __init__(
        self, seed: int = 1, pace: float = 1.0, tap: Callable[[bytes], None] | None = None
    ) -> None:
        tower = draw_tower(seed)
        self._lock = threading.Lock()
        self.simulator = TowerSimulator(tower, seed=seed)
        self._physics = _LockedPhysics(self.simulator, self._lock)
        device = SimulatedDevice(
            self._physics,
            tower_device_info(tower, seed),
            clock_offset_us=clock_offset_for_seed(seed),
            clock_scale=tower.piezo_rate_hz / 2000.0,
        )
        self.source = SimulatedDeviceSource(device, seed=seed, pace=pace, tap=tap)

    def refused_actions(self) -> list[str]:
        """Why scheduled hands were not done when their time came (oldest first)."""
        with self._lock:
            return list(self._physics.refused)

    def act(self, action: Callable[[TowerSimulator], T]) -> T:
        """Run ``action(simulator)`` between two advances of the physics."""
        with self._lock:
            return action(self.simulator)

    @property
    def time_s(self) -> float:
        """Simulator time reached so far."""
        return self.act(lambda sim: sim.time_s)

    @property
    def exposed(self) -> int | None:
        """The level lying open, or ``None`` when the tower is closed."""
        return self.act(lambda sim: sim.exposed)

    def throw(self, colour: str) -> int:
        """Drop a new cube of ``colour`` into the shaft now; returns its id."""
        return self.act(lambda sim: sim.throw(colour))

    def throw_back(self, cube: int) -> None:
        """Drop a cube taken out earlier back into the shaft."""
        self.act(lambda sim: sim.throw(cube=cube))

    def lift(self, exposed: int) -> None:
        """Lift the modules above ``exposed`` to look into that level."""
        self.act(lambda sim: sim.lift(exposed))

    def take_out(self, level: int) -> list[int]:
        """Take every cube out of the open ``level``; returns their ids."""
        return self.act(lambda sim: sim.remove_cubes(level))

    def close(self) -> None:
        """Put the lifted modules back."""
        self.act(lambda sim: sim.close())

    def colours_on(self, level: int) -> dict[str, int]:
        """What a player sees on an open level: ``{colour: cubes}``."""

        def look(sim: TowerSimulator) -> dict[str, int]:
            cubes = sim.truth.cubes
            return dict(Counter(cubes[c].color for c in sim.contents[level]))

        return self.act(look)

    def colour_of(self, cube: int) -> str:
        """The colour of a cube (as printed on it)."""
        return self.act(lambda sim: sim.truth.cubes[cube].color)
