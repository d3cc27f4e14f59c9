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

import heapq
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from dsp.sim.block import SensorBlock
from dsp.sim.constants import (
    STANDARD_GRAVITY_M_S2,
    RoomConstants,
    TowerConstants,
    draw_room,
)
from dsp.sim.errors import SimulatorError
from dsp.sim.fall import FallPlan, plan_bounces_on, plan_fall
from dsp.sim.scene import Scene
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

_STREAM_ACTION = 0xAC7
_CELL_CAPACITY_G = 100.0


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
        self._scene = Scene(tower, self.room, seed)
        self._time_s = 0.0

        self._events: list[TruthEvent] = []
        self._cubes: dict[int, CubeRecord] = {}
        self._residence: dict[int, list[_Residence]] = {}
        self._hand: set[int] = set()
        self._masses: list[list[float]] = [[] for _ in range(self._n)]
        self._open: int | None = None
        self._lifted_at = 0.0  # when the lifted modules came free
        self._schedule: list[tuple[int, int, Callable[[float], None]]] = []
        self._n_actions = 0
        self._n_items = 0

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
                if (
                    stay.level == level
                    and stay.t_from <= t_s
                    and (stay.t_to is None or t_s < stay.t_to)
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

    @property
    def load_g(self) -> tuple[float, ...]:
        """True static load on each plate now: resting cubes plus reference masses, grams."""
        return tuple(
            sum(self._cubes[c].mass_g for c in self.residents(level, self._time_s))
            + sum(self._masses[level])
            for level in range(self._n)
        )

    def cube_mass_g(self, cube: int) -> float:
        """True mass of one cube in grams."""
        return self._cubes[cube].mass_g

    def cube_color(self, cube: int) -> str:
        """The colour a cube was first thrown (or dropped) with."""
        return self._cubes[cube].color

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
            action(self._scene.pgrid.time(self._scene.p_next))
            return
        if at_s < self._time_s - 1e-9:
            raise SimulatorError(
                f"cannot schedule an action at {at_s:.3f} s: the simulator is already at "
                f"{self._time_s:.3f} s"
            )
        k = max(self._scene.pgrid.first_at_or_after(at_s), self._scene.p_next)
        heapq.heappush(self._schedule, (k, self._n_items, action))
        self._n_items += 1

    def _fire_due(self, upto_index: int) -> None:
        while self._schedule and self._schedule[0][0] <= upto_index:
            k, _, action = heapq.heappop(self._schedule)
            self._scene.render_to(k)
            action(self._scene.pgrid.time(k))

    def _check_level(self, level: int) -> None:
        if not 0 <= level < self._n:
            raise SimulatorError(f"level {level} does not exist; levels are 0 to {self._n - 1}")

    def _check_open_at(self, level: int, what: str) -> None:
        self._check_level(level)
        if self._open != level:
            where = "closed" if self._open is None else f"open at level {self._open}"
            raise SimulatorError(f"cannot {what} level {level}: the tower is {where}")

    # ---------------------------------------------------------------- effects

    def _apply_fall(self, plan: FallPlan, color: str, via: str, rng: np.random.Generator) -> None:
        record = self._cubes[plan.cube]
        for imp in plan.impacts:
            self._scene.add_impact(
                imp.t_s, imp.level, imp.impulse_n_s, imp.contact_s, at=(imp.x, imp.y)
            )
            self._events.append(Strike(imp.t_s, imp.level, plan.cube, imp.energy_j, imp.where))
        # The cube rocks onto its face over a few milliseconds.
        self._scene.add_step(plan.rest_t_s - 0.005, plan.rest_level, record.mass_g, 0.005)
        self._residence.setdefault(plan.cube, []).append(_Residence(plan.rest_level, plan.rest_t_s))
        self._events.append(
            Landing(
                plan.rest_t_s,
                plan.cube,
                color or record.color,
                plan.rest_level,
                record.mass_g,
                plan.first_impact_t_s,
                via,
            )
        )
        if plan.knock is None:
            return
        knock = plan.knock
        victim = self._cubes[knock.victim]
        for stay in self._residence[knock.victim]:
            if stay.t_to is None:
                stay.t_to = knock.t_s
        self._scene.add_step(knock.t_s, knock.level, -victim.mass_g, 0.01)
        below = knock.level - 1
        vplan = plan_fall(
            self.tower,
            rng,
            cube=knock.victim,
            mass_g=victim.mass_g,
            level=below,
            t_s=knock.t_s,
            speed_m_s=knock.speed_m_s,
            drop_m=self.tower.levels[below].module_height_m,
            residents=self.residents,
            allow_knock=False,
        )
        for imp in vplan.impacts:
            self._scene.add_impact(
                imp.t_s, imp.level, imp.impulse_n_s, imp.contact_s, at=(imp.x, imp.y)
            )
            self._events.append(Strike(imp.t_s, imp.level, knock.victim, imp.energy_j, imp.where))
        self._scene.add_step(vplan.rest_t_s - 0.005, vplan.rest_level, victim.mass_g, 0.005)
        self._residence[knock.victim].append(_Residence(vplan.rest_level, vplan.rest_t_s))
        self._events.append(
            KnockDown(
                knock.t_s,
                knock.victim,
                plan.cube,
                knock.level,
                vplan.rest_level,
                vplan.rest_t_s,
                victim.mass_g,
            )
        )

    def _new_cube(self, color: str, rng: np.random.Generator) -> int:
        cube = len(self._cubes)
        spread = self.tower.cube_mass_spread
        factor = 1.0 + spread * float(np.clip(rng.standard_normal(), -3.0, 3.0))
        self._cubes[cube] = CubeRecord(cube, color, self.tower.nominal_cube_mass_g * factor)
        return cube

    # ---------------------------------------------------------------- actions

    def throw(self, color: str = "", *, at_s: float | None = None, cube: int | None = None) -> int:
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
                self.tower,
                rng,
                cube=thrown,
                mass_g=record.mass_g,
                level=self._n - 1,
                t_s=t,
                speed_m_s=speed,
                drop_m=top.module_height_m,
                residents=self.residents,
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
            self._lifted_at = t_off
            self._scene.add_handling(
                t,
                t_off + 0.3,
                [float(rng.uniform(1e-3, 4e-3)) for _ in range(self._n)],
                [float(rng.uniform(0.2, 1.2)) for _ in range(self._n)],
            )
            for level in range(exposed + 1, self._n):
                self._scene.disconnect(level, t_off)
            # The modules come free with a little jolt on the plate left behind.
            self._scene.add_impact(
                t_off,
                exposed,
                float(rng.uniform(2e-4, 8e-4)),
                float(rng.uniform(2e-3, 5e-3)),
                load_share=0.3,
            )
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
        t = self._scene.pgrid.time(self._scene.p_next)
        reach = t + float(rng.uniform(0.3, 0.8))
        # The hand takes what lies there when it arrives, including a cube
        # that was still bouncing when the player reached in.
        present = self.residents(level, reach)
        if count is None:
            chosen = present
        elif count < 0 or count > len(present):
            raise SimulatorError(
                f"cannot take {count} cubes out of level {level}: {len(present)} lie there"
            )
        else:
            chosen = sorted(rng.choice(present, size=count, replace=False).tolist())
        if rng.random() < 0.4:
            times = [reach + float(rng.uniform(0.0, 0.05)) for _ in chosen]  # swept out at once
        else:
            times = list(reach + np.cumsum(rng.uniform(0.25, 0.7, size=len(chosen))))
        last = max(times, default=reach)
        weights_p = [0.0] * self._n
        weights_l = [0.0] * self._n
        weights_p[level] = float(rng.uniform(3e-3, 1e-2))
        weights_l[level] = float(rng.uniform(1.0, 4.0))
        self._scene.add_handling(reach - 0.1, last + 0.3, weights_p, weights_l)
        self._scene.add_impact(reach, level, float(rng.uniform(2e-4, 1e-3)), 5e-3)
        total = 0.0
        for cube, t_pick in zip(chosen, times, strict=True):
            mass = self._cubes[cube].mass_g
            total += mass
            self._scene.add_step(t_pick, level, -mass, 0.08)
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
            # Modules cannot be set down before they were off.
            down = max(t + float(rng.uniform(0.2, 0.5)), self._lifted_at + 0.2)
            self._scene.add_handling(
                t,
                down + 0.2,
                [float(rng.uniform(1e-3, 4e-3)) for _ in range(self._n)],
                [float(rng.uniform(0.2, 1.2)) for _ in range(self._n)],
            )
            thump = float(rng.uniform(1e-3, 4e-3))
            for level in range(self._n):
                # The modules' rims land on module k-1's walls, not on a plate:
                # the cells below feel only a little of it.
                self._scene.add_impact(
                    down,
                    level,
                    thump * 0.75 ** abs(level - k),
                    float(rng.uniform(2e-3, 5e-3)),
                    load_share=0.03 if level <= k else 0.0,
                )
            last_on = down
            for level in range(k + 1, self._n):
                t_on = down + float(rng.uniform(0.01, 0.06))
                breaks = []
                t_back = t_on
                for _ in range(int(rng.integers(0, 4))):  # spring contacts bounce
                    t_off = t_back + float(rng.uniform(0.005, 0.03))
                    t_back = t_off + float(rng.uniform(0.003, 0.025))
                    breaks.append((t_off, t_back))
                # The disc comes back carrying a little charge (bled by its
                # 1 MOhm within milliseconds): a short step at the input.
                kick = float(rng.choice([-1.0, 1.0]) * rng.uniform(0.01, 0.1))
                final = self._scene.reconnect(level, t_on, breaks, kick)
                # Reseating shifts how the plate bears on its cell a little.
                self._scene.add_step(final, level, float(rng.normal(0.0, 0.02)))
                last_on = max(last_on, final)
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
                self._scene.add_impact(t, level, base * upward**level, contact, load_share=0.0)
                # The table jerks the plate's mass: an inertial force on the cell.
                self._scene.add_load_impulse(
                    t, level, lv.plate_mass_g * dv / STANDARD_GRAVITY_M_S2, contact
                )
            self._events.append(Knock(t, strength))

        self._at(at_s, fire)

    def touch(
        self, level: int, *, duration_s: float | None = None, at_s: float | None = None
    ) -> None:
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
            self._scene.add_handling(t, t + dur, wp, wl)
            self._scene.add_impact(t, level, float(rng.uniform(5e-5, 3e-4)), 4e-3, load_share=0.5)
            self._events.append(Touch(t, level, dur))

        self._at(at_s, fire)

    def talk(self, duration_s: float, *, at_s: float | None = None) -> None:
        """People talk next to the tower for ``duration_s`` seconds."""
        if duration_s <= 0:
            raise SimulatorError("talking must last a positive time")

        def fire(t: float) -> None:
            self._scene.add_talk(t, t + duration_s)
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
            self._scene.add_handling(t, t_on + ramp + 0.3, wp, wl)
            self._scene.add_step(t_on, level, grams, ramp)
            self._scene.add_impact(t_on, level, float(rng.uniform(5e-5, 2e-4)), 3e-3)
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
            self._scene.add_handling(t, t_off + ramp + 0.3, wp, wl)
            self._scene.add_step(t_off, level, -grams, ramp)
            self._events.append(MassRemoved(t_off + ramp, level, grams))

        self._at(at_s, fire)

    def drop_onto(
        self, level: int, *, height_m: float = 0.03, color: str = "", at_s: float | None = None
    ) -> int:
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
            plan = plan_bounces_on(
                self.tower, rng, cube=cube, mass_g=mass, level=level, t_s=t, height_m=height_m
            )
            self._apply_fall(plan, color, "drop", rng)

        self._at(at_s, fire)
        return cube

    # -------------------------------------------------------------- rendering

    def advance(self, duration_s: float) -> SensorBlock:
        """Simulate the next ``duration_s`` seconds and return their sensor data."""
        if not duration_s >= 0.0 or math.isinf(duration_s):
            raise SimulatorError("advance() needs a finite, non-negative duration")
        t_end = self._time_s + duration_s
        b = max(self._scene.pgrid.first_at_or_after(t_end), self._scene.p_next)
        self._fire_due(b - 1)
        block = self._scene.take_block(b)
        self._time_s = t_end
        return block
