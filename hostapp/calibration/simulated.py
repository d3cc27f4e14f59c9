"""Calibrating the simulated tower: a simulated user who does what the prompts say.

Used by ``towerear calibrate --sim`` (a demonstration that needs no hands),
by the tests (whose simulator knows the true constants) and by the wizard's
tests. The user reacts to :attr:`TowerCalibration.action` after a human
pause and acts on the :class:`dsp.sim.TowerSimulator` behind the simulated
device, whose bytes go through the real decoder like a serial stream's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from dsp.sim import TowerSimulator, draw_tower
from hostapp.calibration.coins import ReferenceMass
from hostapp.calibration.feed import FrameFeeder
from hostapp.calibration.profile import CalibrationProfile
from hostapp.calibration.tower_session import TowerCalibration, TowerCalibrationPlan, UserAction
from hostapp.errors import CalibrationError
from hostapp.i18n import tr
from hostapp.protocol import FrameDecoder
from hostapp.sources.sim_device import (
    SimulatedDevice,
    clock_offset_for_seed,
    tower_device_info,
)

# Why 0.6 s: about how long a person takes to read a prompt and reach the tower.
HUMAN_PAUSE_S = 0.6
# Why 1 s: putting the lifted modules back down before lifting at another level.
_CLOSE_THEN_LIFT_S = 1.0
_TICK_S = 0.05


SimulatorAccess = Callable[[Callable[[TowerSimulator], Any]], Any]
"""Runs a function on the simulator, e.g. under the lock of a streaming source."""


@dataclass
class SimulatedUser:
    """Acts on the simulator as the session asks, once per request.

    ``act`` runs a function with the simulator: ``lambda f: f(sim)`` when the
    caller steps the simulator itself, ``SimulatedTower.act`` in the app,
    where a reader thread advances the physics.
    """

    act: SimulatorAccess
    reference: ReferenceMass
    second_reference: ReferenceMass | None = None
    pause_s: float = HUMAN_PAUSE_S
    #: How many scheduled actions the simulator has refused so far (in the app,
    #: a player's own hands may change the tower before this user's come).
    refusals: Callable[[], int] | None = None
    _done: set[tuple[UserAction, int, int]] = field(default_factory=set)
    _refusals_seen: int = 0

    def react(self, session: TowerCalibration) -> None:
        """Look at the session's request; schedule the action a human pause later.

        An action refused when its time came (the tower was opened at another
        level by hand, say) is tried again, as a person still seeing the
        prompt would; the session's prompt never changes for it otherwise.
        """
        if self.refusals is not None and (refused := self.refusals()) > self._refusals_seen:
            self._refusals_seen = refused
            self._done.clear()
        action = session.action
        key = (action, session.level, session.drops_this_level)
        if action is UserAction.WAIT or key in self._done:
            return
        self._done.add(key)
        level = session.level
        self.act(lambda sim: self._do(sim, action, level, sim.time_s + self.pause_s))

    def _do(self, sim: TowerSimulator, action: UserAction, level: int, at_s: float) -> None:
        # Scheduled in simulator time, so the pause is the same however late
        # the prompt reached this user (a busy UI thread delivers in batches).
        if action is UserAction.OPEN:
            if sim.exposed is not None and sim.exposed != level:
                sim.close(at_s=at_s)  # open at another level: put it back first
                at_s += _CLOSE_THEN_LIFT_S
            sim.lift(exposed=level, at_s=at_s)
        elif action is UserAction.CLOSE:
            sim.close(at_s=at_s)
        elif action is UserAction.PLACE_REFERENCE:
            sim.place_mass(level, self.reference.grams, at_s=at_s)
        elif action is UserAction.PLACE_SECOND and self.second_reference is not None:
            sim.place_mass(level, self.second_reference.grams, at_s=at_s)
        elif action in (UserAction.REMOVE_REFERENCE, UserAction.REMOVE_SECOND):
            sim.remove_mass(level, at_s=at_s)
        elif action is UserAction.DROP_CUBE:
            sim.drop_onto(level, height_m=0.03, at_s=at_s)
        elif action is UserAction.REMOVE_CUBES:
            sim.remove_cubes(level)


@dataclass
class SimulatedRig:
    """The simulated tower, its device and the decoder, stepped together."""

    seed: int
    sim: TowerSimulator = field(init=False)
    device: SimulatedDevice = field(init=False)

    def __post_init__(self) -> None:
        tower = draw_tower(self.seed)
        self.sim = TowerSimulator(tower, seed=self.seed)
        self.device = SimulatedDevice(
            self.sim, tower_device_info(tower, self.seed),
            clock_offset_us=clock_offset_for_seed(self.seed),
            clock_scale=tower.piezo_rate_hz / 2000.0,
        )
        self.decoder = FrameDecoder()

    def step(self, feeder: FrameFeeder, duration_s: float = _TICK_S) -> None:
        """Advance the physics and feed what the device sent."""
        feeder.feed(self.decoder.feed(self.device.generate(duration_s)))


def calibrate_simulated(
    session_factory: Callable[[str], TowerCalibration],
    *,
    seed: int,
    reference: ReferenceMass,
    second_reference: ReferenceMass | None = None,
    max_s: float = 1200.0,
    on_tick: Callable[[TowerCalibration], None] | None = None,
) -> tuple[TowerCalibration, SimulatedRig]:
    """Run a whole calibration of the simulated tower with a simulated user.

    Parameters
    ----------
    session_factory : callable
        Makes the session once the device id is known (from HELLO).
    seed : int
        Tower and session seed.
    reference, second_reference : ReferenceMass
        What the simulated user puts on the plates.
    max_s : float
        Give up after this much simulated time.
    on_tick : callable, optional
        Called after every step (progress display).

    Returns
    -------
    (TowerCalibration, SimulatedRig)
        The finished (or, after ``max_s``, unfinished) session and the rig
        whose simulator knows the truth.
    """
    rig = SimulatedRig(seed)
    feeder = FrameFeeder()
    while feeder.device_id is None:
        rig.step(feeder)
    session = session_factory(feeder.device_id)
    feeder.consumer = session
    user = SimulatedUser(lambda f: f(rig.sim), reference, second_reference)
    while not session.finished and rig.sim.time_s < max_s:
        rig.step(feeder)
        user.react(session)
        if on_tick is not None:
            on_tick(session)
    return session, rig


def calibrate_tower_profile(
    seed: int,
    *,
    levels: tuple[int, ...] = (7, 6, 5, 4, 3, 2, 1, 0),
    reference: ReferenceMass | None = None,
    n_cubes: int = 5,
) -> CalibrationProfile:
    """Calibrate the simulated tower of ``seed`` as a builder would, and return its profile.

    The evaluation uses this to compare detection with and without a
    calibration on the same tower (a calibration session, then a game).

    Raises
    ------
    CalibrationError
        If the simulated session does not finish.
    """
    from hostapp.calibration.coins import coin

    ref = reference or coin("eur-1")
    plan = TowerCalibrationPlan(levels=levels, reference=ref, n_cubes=n_cubes)
    session, _rig = calibrate_simulated(lambda device: TowerCalibration(plan, device),
                                        seed=seed, reference=ref)
    if not session.finished:
        raise CalibrationError(
            tr("the simulated calibration of tower {seed} did not finish", seed=seed)
        )
    return session.result()
