"""The interactive, deterministic tower simulator.

A :class:`TowerSimulator` holds one tower in one room for one session. Actions
(throw a cube, lift modules, take cubes out, close, knock, touch, ...) happen
at the current time or are scheduled for a later simulator time; each action
draws from its own random stream (numbered by the order of the calls), so the
session depends on the seed and the actions only. :meth:`advance` renders the
next span of sensor data; its output does not depend on how the time axis is
cut into calls.
"""

from __future__ import annotations

import bisect
import heapq
import math
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt
from scipy import signal

from dsp.sim.block import SensorBlock
from dsp.sim.constants import (
    GRAM_FORCE_N,
    STANDARD_GRAVITY_M_S2,
    RoomConstants,
    TowerConstants,
    draw_room,
)
from dsp.sim.errors import SimulatorError
from dsp.sim.excitation import (
    Envelope,
    Grid,
    Outage,
    Pulse,
    Step,
    deposit_pulses,
    envelope_sum,
)
from dsp.sim.fall import FallPlan, plan_bounces_on, plan_fall
from dsp.sim.loadcell import LoadChain
from dsp.sim.noise import IndexedNoise
from dsp.sim.piezo import FLUSH_GRID, OVERSAMPLE, PiezoChain
from dsp.sim.truth import (
    Closed,
    CubeRecord,
    GroundTruth,
    Knock,
    KnockDown,
    Landing,
    Lift,
    MassPlaced,
    MassRemoved,
    Removal,
    Strike,
    Talk,
    Throw,
    Touch,
    TruthEvent,
)

FloatArray = npt.NDArray[np.float64]

_STREAM_ACTION = 0xAC7
_STREAM_HAND_PIEZO = 31
_STREAM_HAND_LOAD = 32
_CELL_CAPACITY_G = 100.0
# Why 8 Hz: hands, fingers and a lifted module move the plate at walking-pace
# frequencies; faster content comes from the impacts, modelled separately.
_HAND_LOWPASS_HZ = 8.0


@dataclass
class _Residence:
    """A cube resting on a level from ``t_from`` until ``t_to`` (None: still there)."""

    level: int
    t_from: float
    t_to: float | None = None


class TowerSimulator:
    """One tower, one room, one session: actions in, sensor data out.

    Parameters
    ----------
    tower : TowerConstants
        The physical tower (see :func:`dsp.sim.draw_tower`).
    seed : int
        Session seed: noise streams and every action's random draws.
    room : RoomConstants, optional
        The room; drawn from ``seed`` when omitted.
    noisy_room : bool
        Draw a noisy room (strong hum, loud background) when ``room`` is omitted.
    """

    def __init__(
        self,
        tower: TowerConstants,
        *,
        seed: int,
        room: RoomConstants | None = None,
        noisy_room: bool = False,
    ) -> None:
        if seed < 0:
            raise SimulatorError("the session seed must be a non-negative integer")
        self.tower = tower
        self.seed = seed
        self.room = room if room is not None else draw_room(seed, noisy=noisy_room)
        self._n = tower.n_levels
        self._piezo = PiezoChain(tower, self.room, seed)
        self._load = LoadChain(tower, seed)
        self._pgrid = Grid(0.0, tower.piezo_rate_hz)
        self._fgrid = Grid(0.0, tower.piezo_rate_hz * OVERSAMPLE)
        self._qgrid = self._load.grid
        self._p_next = 0
        self._q_next = 0
        self._time_s = 0.0

        self._piezo_pulses: list[Pulse] = []
        self._load_pulses: list[Pulse] = []
        self._piezo_envs: list[Envelope] = []
        self._load_envs: list[Envelope] = []
        self._talk_envs: list[Envelope] = []
        self._steps: list[tuple[float, int, Step]] = []
        self._static_base = np.zeros(self._n)
        self._outages: list[Outage] = []
        self._open_outages: dict[int, int] = {}  # level -> index into _outages
        self._kick_tau_s = 1.0 / (2 * np.pi * tower.highpass_hz)

        self._events: list[TruthEvent] = []
        self._cubes: dict[int, CubeRecord] = {}
        self._residence: dict[int, list[_Residence]] = {}
        self._hand: set[int] = set()
        self._masses: list[list[float]] = [[] for _ in range(self._n)]
        self._open: int | None = None
        self._schedule: list[tuple[int, int, Callable[[float], None]]] = []
        self._n_actions = 0
        self._n_items = 0

        self._hand_piezo = IndexedNoise(seed, _STREAM_HAND_PIEZO, self._n)
        self._hand_load = IndexedNoise(seed, _STREAM_HAND_LOAD, self._n)
        a = float(np.exp(-2 * np.pi * _HAND_LOWPASS_HZ / self._qgrid.rate_hz))
        self._hand_b, self._hand_a = np.array([1.0 - a]), np.array([1.0, -a])
        self._hand_norm = 1.0 / math.sqrt((1.0 - a) / (1.0 + a))  # unit rms out
        self._hand_zi = np.zeros((1, self._n))

    # ------------------------------------------------------------------ state

    @property
    def time_s(self) -> float:
        """Simulator time reached by :meth:`advance`, in seconds."""
        return self._time_s

    @property
    def exposed(self) -> int | None:
        """The level laid open by a lift, or None when the tower is closed."""
        return self._open

    @property
    def in_hand(self) -> tuple[int, ...]:
        """Cubes taken out of the tower and not yet thrown back."""
        return tuple(sorted(self._hand))

    def residents(self, level: int, t_s: float) -> list[int]:
        """Cube ids resting on ``level`` at simulator time ``t_s`` (as planned so far)."""
        found = []
        for cube, stays in self._residence.items():
            for stay in stays:
                if stay.level == level and stay.t_from <= t_s and (
                    stay.t_to is None or t_s < stay.t_to
                ):
                    found.append(cube)
        return sorted(found)

    @property
    def contents(self) -> tuple[tuple[int, ...], ...]:
        """Cube ids resting on each level now (levels 0..7)."""
        return tuple(tuple(self.residents(lv, self._time_s)) for lv in range(self._n))

    @property
    def masses_on(self) -> tuple[float, ...]:
        """Grams of reference masses lying on each plate now."""
        return tuple(float(sum(m)) for m in self._masses)

    def cube_mass_g(self, cube: int) -> float:
        """True mass of one cube in grams."""
        return self._cubes[cube].mass_g

    @property
    def truth(self) -> GroundTruth:
        """Ground truth of everything that happened up to :attr:`time_s`."""
        return self._truth(until_s=self._time_s)

    def planned_truth(self) -> GroundTruth:
        """Ground truth including effects already planned beyond :attr:`time_s`."""
        return self._truth(until_s=math.inf)

    def _truth(self, until_s: float) -> GroundTruth:
        events = sorted((e for e in self._events if e.t <= until_s), key=lambda e: e.t)
        return GroundTruth(
            events=events,
            cubes=dict(self._cubes),
            tower=self.tower.to_json(),
            room=self.room.to_json(),
            session_seed=self.seed,
        )

    # ------------------------------------------------------------- scheduling

    def _rng(self) -> np.random.Generator:
        rng = np.random.default_rng([self.seed, _STREAM_ACTION, self._n_actions])
        self._n_actions += 1
        return rng

    def _at(self, at_s: float | None, action: Callable[[float], None]) -> None:
        """Run ``action(t)`` now, or at ``at_s`` (snapped to the next piezo sample)."""
        if at_s is None:
            action(self._pgrid.time(self._p_next))
            return
        if at_s < self._time_s - 1e-9:
            raise SimulatorError(
                f"cannot schedule an action at {at_s:.3f} s: the simulator is already at "
                f"{self._time_s:.3f} s"
            )
        k = max(self._pgrid.first_at_or_after(at_s), self._p_next)
        heapq.heappush(self._schedule, (k, self._n_items, action))
        self._n_items += 1

    def _fire_due(self, upto_index: int) -> None:
        while self._schedule and self._schedule[0][0] <= upto_index:
            k, _, action = heapq.heappop(self._schedule)
            self._render_to(k)
            action(self._pgrid.time(k))

    def _check_level(self, level: int) -> None:
        if not 0 <= level < self._n:
            raise SimulatorError(f"level {level} does not exist; levels are 0 to {self._n - 1}")

    def _check_open_at(self, level: int, what: str) -> None:
        self._check_level(level)
        if self._open != level:
            where = "closed" if self._open is None else f"open at level {self._open}"
            raise SimulatorError(f"cannot {what} level {level}: the tower is {where}")

    # ---------------------------------------------------------------- effects

    def _add_impact(self, t: float, level: int, impulse_n_s: float, contact_s: float,
                    load_share: float = 1.0) -> None:
        self._piezo_pulses.append(Pulse(t, level, impulse_n_s, contact_s))
        if load_share:
            self._load_pulses.append(
                Pulse(t, level, load_share * impulse_n_s / GRAM_FORCE_N, contact_s)
            )

    def _add_step(self, t: float, level: int, delta_g: float, ramp_s: float = 0.0) -> None:
        step = Step(t, level, delta_g, ramp_s)
        bisect.insort(self._steps, (t, self._n_items, step), key=lambda s: (s[0], s[1]))
        self._n_items += 1

    def _handling(self, t0: float, t1: float, piezo_n: list[float], load_g: list[float]) -> None:
        self._piezo_envs.append(Envelope(t0, t1, tuple(piezo_n), ramp_s=0.1))
        self._load_envs.append(Envelope(t0, t1, tuple(load_g), ramp_s=0.1))

    def _apply_fall(self, plan: FallPlan, color: str, via: str, rng: np.random.Generator) -> None:
        record = self._cubes[plan.cube]
        for imp in plan.impacts:
            self._add_impact(imp.t_s, imp.level, imp.impulse_n_s, imp.contact_s)
            self._events.append(Strike(imp.t_s, imp.level, plan.cube, imp.energy_j, imp.where))
        # The cube rocks onto its face over a few milliseconds.
        self._add_step(plan.rest_t_s - 0.005, plan.rest_level, record.mass_g, 0.005)
        self._residence.setdefault(plan.cube, []).append(
            _Residence(plan.rest_level, plan.rest_t_s)
        )
        self._events.append(
            Landing(plan.rest_t_s, plan.cube, color or record.color, plan.rest_level,
                    record.mass_g, plan.first_impact_t_s, via)
        )
        if plan.knock is None:
            return
        knock = plan.knock
        victim = self._cubes[knock.victim]
        for stay in self._residence[knock.victim]:
            if stay.t_to is None:
                stay.t_to = knock.t_s
        self._add_step(knock.t_s, knock.level, -victim.mass_g, 0.01)
        below = knock.level - 1
        vplan = plan_fall(
            self.tower, rng, cube=knock.victim, mass_g=victim.mass_g, level=below,
            t_s=knock.t_s, speed_m_s=knock.speed_m_s,
            drop_m=self.tower.levels[below].module_height_m,
            residents=self.residents, allow_knock=False,
        )
        for imp in vplan.impacts:
            self._add_impact(imp.t_s, imp.level, imp.impulse_n_s, imp.contact_s)
            self._events.append(Strike(imp.t_s, imp.level, knock.victim, imp.energy_j, imp.where))
        self._add_step(vplan.rest_t_s - 0.005, vplan.rest_level, victim.mass_g, 0.005)
        self._residence[knock.victim].append(_Residence(vplan.rest_level, vplan.rest_t_s))
        self._events.append(
            KnockDown(knock.t_s, knock.victim, plan.cube, knock.level, vplan.rest_level,
                      vplan.rest_t_s, victim.mass_g)
        )

    def _new_cube(self, color: str, rng: np.random.Generator) -> int:
        cube = len(self._cubes)
        spread = self.tower.cube_mass_spread
        factor = 1.0 + spread * float(np.clip(rng.standard_normal(), -3.0, 3.0))
        self._cubes[cube] = CubeRecord(cube, color, self.tower.nominal_cube_mass_g * factor)
        return cube

    # ---------------------------------------------------------------- actions

    def throw(self, color: str = "", *, at_s: float | None = None,
              cube: int | None = None) -> int:
        """A player drops a cube into the shaft at the top of the tower.

        Parameters
        ----------
        color : str
            The cube's colour (ground truth only; weight cannot tell colours apart).
        at_s : float, optional
            Simulator time of the throw; now when omitted.
        cube : int, optional
            Throw back a cube taken out earlier (see :attr:`in_hand`); a new
            cube from the supply when omitted.

        Returns
        -------
        int
            The cube's id.
        """
        rng = self._rng()
        if cube is None:
            cube = self._new_cube(color, rng)
        elif cube not in self._cubes:
            raise SimulatorError(f"cube {cube} does not exist")
        thrown = cube

        def fire(t: float) -> None:
            if self._open is not None:
                raise SimulatorError(
                    f"cannot throw a cube while the tower is open at level {self._open}"
                )
            if thrown in self._hand:
                self._hand.discard(thrown)
            elif any(s.t_to is None for s in self._residence.get(thrown, [])):
                raise SimulatorError(f"cube {thrown} is still in the tower")
            record = self._cubes[thrown]
            # Released 2-10 cm above the opening: it enters at sqrt(2 g h).
            speed = math.sqrt(2 * STANDARD_GRAVITY_M_S2 * float(rng.uniform(0.02, 0.10)))
            self._events.append(Throw(t, thrown, color or record.color, record.mass_g))
            top = self.tower.levels[-1]
            plan = plan_fall(
                self.tower, rng, cube=thrown, mass_g=record.mass_g, level=self._n - 1,
                t_s=t, speed_m_s=speed, drop_m=top.module_height_m, residents=self.residents,
            )
            self._apply_fall(plan, color, "throw", rng)

        self._at(at_s, fire)
        return thrown

    def lift(self, exposed: int, *, at_s: float | None = None) -> None:
        """Players lift modules ``exposed``..7 to look into level ``exposed``.

        Load channels ``exposed+1``..7 disconnect (their modules are in the air)
        and those piezo inputs float; hands shake everything.
        """
        self._check_level(exposed)
        rng = self._rng()

        def fire(t: float) -> None:
            if self._open is not None:
                raise SimulatorError(f"the tower is already open at level {self._open}")
            self._open = exposed
            t_off = t + float(rng.uniform(0.25, 0.5))
            self._handling(
                t, t_off + 0.3,
                [float(rng.uniform(1e-3, 4e-3)) for _ in range(self._n)],
                [float(rng.uniform(0.2, 1.2)) for _ in range(self._n)],
            )
            for level in range(exposed + 1, self._n):
                self._open_outages[level] = len(self._outages)
                self._outages.append(Outage(level, t_off, math.inf))
            # The modules come free with a little jolt on the plate left behind.
            self._add_impact(t_off, exposed, float(rng.uniform(2e-4, 8e-4)),
                             float(rng.uniform(2e-3, 5e-3)), load_share=0.3)
            self._events.append(Lift(t_off, exposed))

        self._at(at_s, fire)

    def remove_cubes(self, level: int, count: int | None = None) -> list[int]:
        """Take cubes out of the opened level by hand, now.

        Parameters
        ----------
        level : int
            Must be the exposed level.
        count : int, optional
            How many (chosen at random among those lying there); all when omitted.

        Returns
        -------
        list of int
            Ids of the cubes now in hand, in the order they were picked.
        """
        self._check_open_at(level, "take cubes out of")
        rng = self._rng()
        t = self._pgrid.time(self._p_next)
        present = self.residents(level, t)
        if count is None:
            chosen = present
        elif count < 0 or count > len(present):
            raise SimulatorError(
                f"cannot take {count} cubes out of level {level}: {len(present)} lie there"
            )
        else:
            chosen = sorted(rng.choice(present, size=count, replace=False).tolist())
        reach = t + float(rng.uniform(0.3, 0.8))
        if rng.random() < 0.4:
            times = [reach + float(rng.uniform(0.0, 0.05)) for _ in chosen]  # swept out at once
        else:
            times = list(reach + np.cumsum(rng.uniform(0.25, 0.7, size=len(chosen))))
        last = max(times, default=reach)
        weights_p = [0.0] * self._n
        weights_l = [0.0] * self._n
        weights_p[level] = float(rng.uniform(3e-3, 1e-2))
        weights_l[level] = float(rng.uniform(1.0, 4.0))
        self._handling(reach - 0.1, last + 0.3, weights_p, weights_l)
        self._add_impact(reach, level, float(rng.uniform(2e-4, 1e-3)), 5e-3)
        total = 0.0
        for cube, t_pick in zip(chosen, times, strict=True):
            mass = self._cubes[cube].mass_g
            total += mass
            self._add_step(t_pick, level, -mass, 0.08)
            for stay in self._residence[cube]:
                if stay.t_to is None:
                    stay.t_to = t_pick
            self._hand.add(cube)
        if chosen:
            self._events.append(
                Removal(last + 0.08, level, tuple(chosen), tuple(float(x) for x in times), total)
            )
        return list(chosen)

    def close(self, *, at_s: float | None = None) -> None:
        """Put the lifted modules back; their channels reconnect after contact bounce."""
        rng = self._rng()

        def fire(t: float) -> None:
            if self._open is None:
                raise SimulatorError("cannot close the tower: it is not open")
            k = self._open
            self._open = None
            down = t + float(rng.uniform(0.2, 0.5))
            self._handling(
                t, down + 0.2,
                [float(rng.uniform(1e-3, 4e-3)) for _ in range(self._n)],
                [float(rng.uniform(0.2, 1.2)) for _ in range(self._n)],
            )
            thump = float(rng.uniform(1e-3, 4e-3))
            for level in range(self._n):
                share = 0.75 ** abs(level - k)
                self._add_impact(down, level, thump * share, float(rng.uniform(2e-3, 5e-3)),
                                 load_share=0.03 if level <= k else 0.0)
            last_on = down
            for level in range(k + 1, self._n):
                idx = self._open_outages.pop(level)
                t_on = down + float(rng.uniform(0.01, 0.06))
                self._outages[idx] = replace(self._outages[idx], t_on_s=t_on)
                for _ in range(int(rng.integers(0, 4))):  # spring contacts bounce
                    t_off = t_on + float(rng.uniform(0.005, 0.03))
                    t_on = t_off + float(rng.uniform(0.003, 0.025))
                    self._outages.append(Outage(level, t_off, t_on))
                kick = float(rng.choice([-1.0, 1.0]) * rng.uniform(0.05, 0.6))
                idx_last = max(i for i, o in enumerate(self._outages) if o.level == level)
                self._outages[idx_last] = replace(self._outages[idx_last], reconnect_kick_v=kick)
                # Reseating shifts how the plate bears on its cell a little.
                self._add_step(t_on, level, float(rng.normal(0.0, 0.02)))
                last_on = max(last_on, t_on)
            self._outages.sort(key=lambda o: o.t_off_s)
            self._open_outages = {}
            for i, o in enumerate(self._outages):
                if math.isinf(o.t_on_s):
                    self._open_outages[o.level] = i
            self._events.append(Closed(down, k, last_on))

        self._at(at_s, fire)

    def knock(self, strength: float = 1.0, *, at_s: float | None = None) -> None:
        """Someone knocks on the table: every level feels it at once.

        Parameters
        ----------
        strength : float
            1 for an ordinary knuckle knock; 3 for a fist.
        """
        if not 0.0 < strength <= 10.0:
            raise SimulatorError("a knock's strength must be between 0 and 10")
        rng = self._rng()

        def fire(t: float) -> None:
            # A knuckle on a wooden table: a 1-4 ms contact (its spectrum reaches
            # the plate modes) that loses a share at every module joint upwards.
            base = strength * float(rng.uniform(2e-3, 6e-3))
            upward = float(rng.uniform(0.6, 0.85))
            contact = float(rng.uniform(1e-3, 4e-3))
            dv = strength * float(rng.uniform(0.005, 0.015)) * float(rng.choice([-1.0, 1.0]))
            for level, lv in enumerate(self.tower.levels):
                self._piezo_pulses.append(Pulse(t, level, base * upward**level, contact))
                # The table jerks the plate's mass: an inertial force on the cell.
                self._load_pulses.append(
                    Pulse(t, level, lv.plate_mass_g * dv / STANDARD_GRAVITY_M_S2, contact)
                )
            self._events.append(Knock(t, strength))

        self._at(at_s, fire)

    def touch(self, level: int, *, duration_s: float | None = None,
              at_s: float | None = None) -> None:
        """A hand touches the tower near ``level`` (rubbing; a little load)."""
        self._check_level(level)
        rng = self._rng()
        dur = float(rng.uniform(0.3, 1.2)) if duration_s is None else duration_s
        if dur <= 0:
            raise SimulatorError("a touch must last a positive time")

        def fire(t: float) -> None:
            wp = [0.0] * self._n
            wl = [0.0] * self._n
            p_rms = float(rng.uniform(2e-3, 1e-2))
            l_rms = float(rng.uniform(0.2, 2.0))
            for lv in range(self._n):
                share = 0.3 ** abs(lv - level)
                wp[lv] = p_rms * share
                wl[lv] = l_rms * share
            self._handling(t, t + dur, wp, wl)
            self._add_impact(t, level, float(rng.uniform(5e-5, 3e-4)), 4e-3, load_share=0.5)
            self._events.append(Touch(t, level, dur))

        self._at(at_s, fire)

    def talk(self, duration_s: float, *, at_s: float | None = None) -> None:
        """People talk next to the tower for ``duration_s`` seconds."""
        if duration_s <= 0:
            raise SimulatorError("talking must last a positive time")

        def fire(t: float) -> None:
            self._talk_envs.append(Envelope(t, t + duration_s, (1.0,), ramp_s=0.3))
            self._events.append(Talk(t, duration_s))

        self._at(at_s, fire)

    def place_mass(self, level: int, grams: float, *, at_s: float | None = None) -> None:
        """Put a reference mass (a coin) on the opened level's plate."""
        self._check_level(level)
        if not 0.0 < grams <= _CELL_CAPACITY_G:
            raise SimulatorError(
                f"a reference mass must weigh between 0 and {_CELL_CAPACITY_G:.0f} g"
            )
        rng = self._rng()

        def fire(t: float) -> None:
            self._check_open_at(level, "put a mass on")
            on_plate = sum(self._masses[level]) + sum(
                self._cubes[c].mass_g for c in self.residents(level, t)
            )
            if on_plate + grams > _CELL_CAPACITY_G:
                raise SimulatorError(
                    f"level {level}'s 100 g load cell would be overloaded by {grams:g} g more"
                )
            self._masses[level].append(grams)
            t_on = t + float(rng.uniform(0.4, 0.7))
            ramp = float(rng.uniform(0.1, 0.3))
            wp, wl = [0.0] * self._n, [0.0] * self._n
            wp[level], wl[level] = 1e-3, float(rng.uniform(0.2, 0.8))
            self._handling(t, t_on + ramp + 0.3, wp, wl)
            self._add_step(t_on, level, grams, ramp)
            self._add_impact(t_on, level, float(rng.uniform(5e-5, 2e-4)), 3e-3)
            self._events.append(MassPlaced(t_on + ramp, level, grams))

        self._at(at_s, fire)

    def remove_mass(self, level: int, *, at_s: float | None = None) -> None:
        """Take the last reference mass put on the opened level off again."""
        self._check_level(level)
        rng = self._rng()

        def fire(t: float) -> None:
            self._check_open_at(level, "take a mass off")
            if not self._masses[level]:
                raise SimulatorError(f"no reference mass lies on level {level}")
            grams = self._masses[level].pop()
            t_off = t + float(rng.uniform(0.3, 0.6))
            ramp = float(rng.uniform(0.1, 0.2))
            wp, wl = [0.0] * self._n, [0.0] * self._n
            wp[level], wl[level] = 1e-3, float(rng.uniform(0.2, 0.8))
            self._handling(t, t_off + ramp + 0.3, wp, wl)
            self._add_step(t_off, level, -grams, ramp)
            self._events.append(MassRemoved(t_off + ramp, level, grams))

        self._at(at_s, fire)

    def drop_onto(self, level: int, *, height_m: float = 0.03, color: str = "",
                  at_s: float | None = None) -> int:
        """Drop a new cube straight onto the opened level's plate from ``height_m``.

        Returns
        -------
        int
            The cube's id.
        """
        self._check_level(level)
        if not 0.0 < height_m <= 0.3:
            raise SimulatorError("a drop height must be between 0 and 0.3 m")
        rng = self._rng()
        cube = self._new_cube(color, rng)

        def fire(t: float) -> None:
            self._check_open_at(level, "drop a cube onto")
            mass = self._cubes[cube].mass_g
            plan = plan_bounces_on(self.tower, rng, cube=cube, mass_g=mass, level=level,
                                   t_s=t, height_m=height_m)
            self._apply_fall(plan, color, "drop", rng)

        self._at(at_s, fire)
        return cube

    # -------------------------------------------------------------- rendering

    def advance(self, duration_s: float) -> SensorBlock:
        """Simulate the next ``duration_s`` seconds and return their sensor data."""
        if not duration_s >= 0.0 or math.isinf(duration_s):
            raise SimulatorError("advance() needs a finite, non-negative duration")
        t_end = self._time_s + duration_s
        b = max(self._pgrid.first_at_or_after(t_end), self._p_next)
        piezo_parts: list[npt.NDArray[np.uint16]] = []
        load_parts: list[tuple[npt.NDArray[np.int64], FloatArray]] = []
        self._sink = (piezo_parts, load_parts)
        self._fire_due(b - 1)
        self._render_to(b)
        self._time_s = t_end
        del self._sink
        piezo = (np.concatenate(piezo_parts) if piezo_parts
                 else np.zeros((0, self._n), dtype=np.uint16))
        if load_parts:
            j = np.concatenate([p[0] for p in load_parts])
            counts = np.concatenate([p[1] for p in load_parts])
        else:
            j = np.zeros(0, dtype=np.int64)
            counts = np.zeros((0, self._n))
        t_load = np.array([self._load.reading_time(int(x)) for x in j], dtype=np.float64)
        valid = self._connected_at(t_load)
        load = np.where(valid, counts, 0).astype(np.int32)
        self._prune()
        return SensorBlock(
            piezo_t0_s=self._pgrid.time(b - len(piezo)),
            piezo=piezo,
            load_t_s=t_load,
            load=load,
            load_valid=valid,
        )

    def _connected_at(self, t: FloatArray) -> npt.NDArray[np.bool_]:
        valid = np.ones((len(t), self._n), dtype=bool)
        for o in self._outages:
            valid[(t >= o.t_off_s) & (t < o.t_on_s), o.level] = False
        return valid

    def _render_to(self, b: int) -> None:
        """Render piezo samples up to ``b`` and load points before ``b``'s time."""
        while self._p_next < b:
            a = self._p_next
            stop = min(b, (a // FLUSH_GRID + 1) * FLUSH_GRID)
            t_a = self._pgrid.time(a)
            for o in self._outages:
                for edge in (o.t_off_s, o.t_on_s):
                    if math.isfinite(edge) and edge > t_a:
                        k = self._pgrid.first_at_or_after(edge)
                        if a < k < stop:
                            stop = k
            self._render_piezo(a, stop)
            self._p_next = stop
        q_end = max(self._qgrid.first_at_or_after(self._pgrid.time(b)), self._q_next)
        while self._q_next < q_end:
            a = self._q_next
            stop = q_end
            resets: list[int] = []
            for o in self._outages:
                if math.isfinite(o.t_on_s):
                    k = self._qgrid.first_at_or_after(o.t_on_s)
                    if k == a:
                        resets.append(o.level)
                    elif a < k < stop:
                        stop = k
            for level in resets:
                self._load.power_up(level)
            self._render_load(a, stop)
            self._q_next = stop

    def _render_piezo(self, a: int, b: int) -> None:
        fa, fb = a * OVERSAMPLE, b * OVERSAMPLE
        t_lo, t_hi = self._fgrid.time(fa), self._fgrid.time(fb)
        pulses = [p for p in self._piezo_pulses if p.t_s < t_hi and p.end_s >= t_lo - 1e-3]
        force: FloatArray | None = None
        if pulses:
            force = np.zeros((fb - fa, self._n))
            deposit_pulses(force, pulses, self._fgrid, fa)
        envs = [e for e in self._piezo_envs if e.t_start_s < t_hi and e.t_stop_s > t_lo]
        if envs:
            tf = self._fgrid.times(fa, fb)
            env = envelope_sum(envs, tf, self._n)
            if env is not None:
                noise = self._hand_piezo.rows(fa, fb) * env
                force = noise if force is None else force + noise
        t_mid = self._pgrid.time(a)
        connected = np.ones(self._n, dtype=bool)
        for o in self._outages:
            if o.t_off_s <= t_mid < o.t_on_s:
                connected[o.level] = False
        tp = self._pgrid.times(a, b)
        extra = self._reconnect_kicks(tp)
        talk = envelope_sum(self._talk_envs, tp, 1) if self._talk_envs else None
        codes = self._piezo.render(
            a, b, force=force, connected=connected, extra_v=extra,
            talk=None if talk is None else talk[:, 0],
        )
        self._sink[0].append(codes)

    def _reconnect_kicks(self, tp: FloatArray) -> FloatArray | None:
        """AC-coupling capacitors recharging after a piezo reconnects, in volts."""
        extra: FloatArray | None = None
        for o in self._outages:
            fades_s = o.t_on_s + 10 * self._kick_tau_s
            if not o.reconnect_kick_v or o.t_on_s >= tp[-1] or tp[0] >= fades_s:
                continue
            if extra is None:
                extra = np.zeros((len(tp), self._n))
            dt = tp - o.t_on_s
            extra[:, o.level] += np.where(
                dt >= 0, o.reconnect_kick_v * np.exp(-np.maximum(dt, 0) / self._kick_tau_s), 0
            )
        return extra

    def _render_load(self, a: int, b: int) -> None:
        tq = self._qgrid.times(a, b)
        static = np.repeat(self._static_base[None, :], b - a, axis=0)
        for _, _, step in self._steps:
            if step.t_s > tq[-1]:
                break
            static[:, step.level] += step.delta_g * step.fraction(tq)
        dynamic: FloatArray | None = None
        t_lo, t_hi = tq[0], tq[-1] + 1.0 / self._qgrid.rate_hz
        pulses = [p for p in self._load_pulses if p.t_s < t_hi and p.end_s >= t_lo - 2e-3]
        if pulses:
            dynamic = np.zeros((b - a, self._n))
            deposit_pulses(dynamic, pulses, self._qgrid, a)
        hand, self._hand_zi = signal.lfilter(
            self._hand_b, self._hand_a, self._hand_load.rows(a, b), axis=0, zi=self._hand_zi
        )
        envs = [e for e in self._load_envs if e.t_start_s < t_hi and e.t_stop_s > t_lo]
        env = envelope_sum(envs, tq, self._n) if envs else None
        if env is not None:
            noise = hand * self._hand_norm * env
            dynamic = noise if dynamic is None else dynamic + noise
        j, counts = self._load.render(a, b, static_g=static, dynamic_g=dynamic)
        if len(j):
            self._sink[1].append((j, counts))

    def _prune(self) -> None:
        """Forget inputs that can no longer affect samples not yet rendered."""
        t_p = self._pgrid.time(self._p_next)
        t_q = self._qgrid.time(self._q_next)
        t = min(t_p, t_q) - 0.05
        self._piezo_pulses = [p for p in self._piezo_pulses if p.end_s >= t]
        self._load_pulses = [p for p in self._load_pulses if p.end_s >= t]
        self._piezo_envs = [e for e in self._piezo_envs if e.t_stop_s >= t]
        self._load_envs = [e for e in self._load_envs if e.t_stop_s >= t]
        self._talk_envs = [e for e in self._talk_envs if e.t_stop_s >= t]
        while self._steps and self._steps[0][2].end_s < t_q - 0.05:
            step = self._steps.pop(0)[2]
            self._static_base[step.level] += step.delta_g
        keep = [o for o in self._outages
                if not (o.t_on_s + 10 * self._kick_tau_s < t and o.t_on_s < t)]
        if len(keep) != len(self._outages):
            self._outages = keep
            self._open_outages = {
                o.level: i for i, o in enumerate(self._outages) if math.isinf(o.t_on_s)
            }
