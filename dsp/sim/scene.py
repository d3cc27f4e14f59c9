"""The timed physical inputs of one session, rendered into sensor data.

The :class:`Scene` collects what actions planned (impacts, static loads, hands,
talking, channels out of contact) as functions of absolute time, and renders
them through the piezo and load chains sample range by sample range. Which
ranges it is asked for never changes the numbers (see docs/simulator.md,
"Block-split invariance").
"""

from __future__ import annotations

import bisect
import math

import numpy as np
import numpy.typing as npt

from dsp.sim.block import SensorBlock
from dsp.sim.constants import GRAM_FORCE_N, RoomConstants, TowerConstants
from dsp.sim.excitation import (
    Envelope,
    Grid,
    Outage,
    Pulse,
    Step,
    deposit_pulses,
    envelope_sum,
)
from dsp.sim.loadcell import CELL_GRID, LoadChain
from dsp.sim.noise import IndexedNoise
from dsp.sim.piezo import FLUSH_GRID, OVERSAMPLE, PiezoChain

FloatArray = npt.NDArray[np.float64]

_STREAM_HAND_PIEZO = 31
_STREAM_HAND_LOAD = 32
# Why knots 80 points apart (five HX711 conversions, 16 a second): hands,
# fingers and a lifted module push the plate at a few hertz; faster content
# comes from the impacts, modelled separately.
_HAND_KNOT = 80


class Scene:
    """Timed inputs of one tower in one room, and their rendering.

    Parameters
    ----------
    tower, room : constants
    seed : int
        Session seed for the noise streams.
    """

    def __init__(self, tower: TowerConstants, room: RoomConstants, seed: int) -> None:
        self.tower = tower
        self._n = tower.n_levels
        self._piezo = PiezoChain(tower, room, seed)
        self._load = LoadChain(tower, seed)
        self.pgrid = Grid(0.0, tower.piezo_rate_hz)
        self._fgrid = Grid(0.0, tower.piezo_rate_hz * OVERSAMPLE)
        self._qgrid = self._load.grid
        self.p_next = 0  # next piezo sample set to render
        self._q_next = 0  # next internal load point to render

        self._piezo_pulses: list[Pulse] = []
        self._load_pulses: list[Pulse] = []
        self._piezo_envs: list[Envelope] = []
        self._load_envs: list[Envelope] = []
        self._talk_envs: list[Envelope] = []
        self._steps: list[tuple[float, int, Step]] = []
        self._n_steps = 0
        self._static_base = np.zeros(self._n)
        self._outages: list[Outage] = []
        self._kick_tau_s = 1.0 / (2 * np.pi * tower.highpass_hz)

        self._hand_piezo = IndexedNoise(seed, _STREAM_HAND_PIEZO, self._n)
        self._hand_load = IndexedNoise(seed, _STREAM_HAND_LOAD, self._n)

        self._piezo_parts: list[npt.NDArray[np.uint16]] = []
        self._load_parts: list[tuple[npt.NDArray[np.int64], FloatArray]] = []

    # ------------------------------------------------------------------ inputs

    def now_s(self) -> float:
        """Time of the next piezo sample to render: the earliest an effect can start."""
        return self.pgrid.time(self.p_next)

    def add_impact(
        self,
        t: float,
        level: int,
        impulse_n_s: float,
        contact_s: float,
        *,
        load_share: float = 1.0,
        at: tuple[float, float] | None = None,
    ) -> None:
        """A contact force on a plate: heard by its piezo, felt by its cell.

        Parameters
        ----------
        t : float
            Start of the contact.
        level : int
        impulse_n_s : float
            Impulse in newton seconds.
        contact_s : float
            Contact duration.
        load_share : float
            Share of the impulse that reaches the load cell (1 for an impact
            on the plate itself, less for blows on the module's walls).
        at : (x, y), optional
            Where on the plate, in plate widths; every mode alike when omitted.
        """
        weights = () if at is None else self._piezo.mode_weights(level, *at)
        self._piezo_pulses.append(Pulse(t, level, impulse_n_s, contact_s, weights))
        if load_share:
            self._load_pulses.append(
                Pulse(t, level, load_share * impulse_n_s / GRAM_FORCE_N, contact_s)
            )

    def add_load_impulse(self, t: float, level: int, gram_s: float, contact_s: float) -> None:
        """An impulse on a load cell alone, in gram-force seconds (inertial forces)."""
        self._load_pulses.append(Pulse(t, level, gram_s, contact_s))

    def add_step(self, t: float, level: int, delta_g: float, ramp_s: float = 0.0) -> None:
        """The static load on a plate changes by ``delta_g`` from ``t`` over ``ramp_s``."""
        step = Step(t, level, delta_g, ramp_s)
        # Steps are kept in time order and folded in that order, so the sum is
        # the same whenever the folding happens.
        bisect.insort(self._steps, (t, self._n_steps, step), key=lambda s: (s[0], s[1]))
        self._n_steps += 1

    def add_handling(self, t0: float, t1: float, piezo_n: list[float], load_g: list[float]) -> None:
        """Hands on the tower from ``t0`` to ``t1``: rms force per level on plates and cells."""
        self._piezo_envs.append(Envelope(t0, t1, tuple(piezo_n), ramp_s=0.1))
        self._load_envs.append(Envelope(t0, t1, tuple(load_g), ramp_s=0.1))

    def add_talk(self, t0: float, t1: float) -> None:
        """People talk from ``t0`` to ``t1``."""
        self._talk_envs.append(Envelope(t0, t1, (1.0,), ramp_s=0.3))

    def disconnect(self, level: int, t_off: float) -> None:
        """A level's module leaves the base at ``t_off`` (until :meth:`reconnect`)."""
        self._outages.append(Outage(level, t_off, math.inf))

    def reconnect(
        self, level: int, t_on: float, breaks: list[tuple[float, float]], kick_v: float
    ) -> float:
        """The level's contacts close at ``t_on``, break again for each ``(off, on)``.

        ``kick_v`` is the AC-coupling step at the final contact. Returns the
        time of the final contact.
        """
        index = next(
            i for i, o in enumerate(self._outages) if o.level == level and math.isinf(o.t_on_s)
        )
        self._outages[index] = Outage(level, self._outages[index].t_off_s, t_on)
        final = index
        for t_off, t_back in breaks:
            self._outages.append(Outage(level, t_off, t_back))
            final = len(self._outages) - 1
        last = self._outages[final]
        self._outages[final] = Outage(level, last.t_off_s, last.t_on_s, kick_v)
        return last.t_on_s

    # --------------------------------------------------------------- rendering

    def render_to(self, b: int) -> None:
        """Render piezo sample sets up to ``b`` and load points before that time."""
        while self.p_next < b:
            a = self.p_next
            stop = min(b, (a // FLUSH_GRID + 1) * FLUSH_GRID)
            t_a = self.pgrid.time(a)
            for o in self._outages:
                for edge in (o.t_off_s, o.t_on_s):
                    if math.isfinite(edge) and edge > t_a:
                        k = self.pgrid.first_at_or_after(edge)
                        if a < k < stop:
                            stop = k
            self._render_piezo(a, stop)
            self.p_next = stop
        q_end = max(self._qgrid.first_at_or_after(self.pgrid.time(b)), self._q_next)
        while self._q_next < q_end:
            a = self._q_next
            # Pieces end on the cell grid, where the load chain decides which
            # cells are at rest; bounded pieces also keep memory flat.
            stop = min(q_end, (a // CELL_GRID + 1) * CELL_GRID)
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

    def take_block(self, b: int) -> SensorBlock:
        """Render up to piezo sample ``b`` and return everything rendered since the last take."""
        self.render_to(b)
        parts = self._piezo_parts
        piezo = np.concatenate(parts) if parts else np.zeros((0, self._n), dtype=np.uint16)
        if self._load_parts:
            j = np.concatenate([p[0] for p in self._load_parts])
            counts = np.concatenate([p[1] for p in self._load_parts])
        else:
            j = np.zeros(0, dtype=np.int64)
            counts = np.zeros((0, self._n))
        self._piezo_parts, self._load_parts = [], []
        t_load = self._load.reading_time(0) + j / self.tower.load_rate_hz
        valid = self._connected_at(t_load)
        load = np.where(valid, counts, 0).astype(np.int32)
        self._prune()
        return SensorBlock(
            piezo_t0_s=self.pgrid.time(b - len(piezo)),
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

    def _render_piezo(self, a: int, b: int) -> None:
        fa, fb = a * OVERSAMPLE, b * OVERSAMPLE
        t_lo, t_hi = self._fgrid.time(fa), self._fgrid.time(fb)
        pulses = [p for p in self._piezo_pulses if p.t_s < t_hi and p.end_s >= t_lo - 1e-3]
        force: FloatArray | None = None
        if pulses:
            force = np.zeros((fb - fa, self._n, self._piezo.n_modes))
            deposit_pulses(force, pulses, self._fgrid, fa)
        envs = [e for e in self._piezo_envs if e.t_start_s < t_hi and e.t_stop_s > t_lo]
        if envs:
            env = envelope_sum(envs, self._fgrid.times(fa, fb), self._n)
            if env is not None:
                # Hands act on the whole plate: every mode alike.
                noise = (self._hand_piezo.rows(fa, fb) * env)[:, :, None]
                if force is None:
                    force = np.repeat(noise, self._piezo.n_modes, axis=2)
                else:
                    force += noise
        t_a = self.pgrid.time(a)
        connected = np.ones(self._n, dtype=bool)
        for o in self._outages:
            if o.t_off_s <= t_a < o.t_on_s:
                connected[o.level] = False
        tp = self.pgrid.times(a, b)
        talk = envelope_sum(self._talk_envs, tp, 1) if self._talk_envs else None
        codes = self._piezo.render(
            a,
            b,
            force=force,
            connected=connected,
            extra_v=self._reconnect_kicks(tp),
            talk=None if talk is None else talk[:, 0],
        )
        self._piezo_parts.append(codes)

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
        envs = [e for e in self._load_envs if e.t_start_s < t_hi and e.t_stop_s > t_lo]
        env = envelope_sum(envs, tq, self._n) if envs else None
        if env is not None:
            noise = self._hand_force(a, b) * env
            dynamic = noise if dynamic is None else dynamic + noise
        j, counts = self._load.render(a, b, static_g=static, dynamic_g=dynamic)
        if len(j):
            self._load_parts.append((j, counts))

    def _hand_force(self, a: int, b: int) -> FloatArray:
        """Slow random force of unit rms on internal load points ``a..b-1``.

        Knots of white noise every :data:`_HAND_KNOT` points, joined by straight
        lines: a pure function of the point index, so no filter state.
        """
        q = np.arange(a, b)
        k0 = a // _HAND_KNOT
        knots = self._hand_load.rows(k0, (b - 1) // _HAND_KNOT + 2)
        idx = q // _HAND_KNOT - k0
        frac = ((q % _HAND_KNOT) / _HAND_KNOT)[:, None]
        # Straight lines between unit-variance knots keep 2/3 of the variance.
        return (knots[idx] * (1.0 - frac) + knots[idx + 1] * frac) * math.sqrt(1.5)

    def _prune(self) -> None:
        """Forget inputs that can no longer affect samples not yet rendered."""
        t_p = self.pgrid.time(self.p_next)
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
        self._outages = [o for o in self._outages if not (o.t_on_s + 10 * self._kick_tau_s < t)]
