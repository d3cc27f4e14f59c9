#!/usr/bin/env python3
"""Blind cross-check model AB: cube motion simulated as rigid-body physics, not scripted.

Every cube thrown into the tower (and every resting cube it touches) is a
rigid square body in a vertical section through the tower: plates with
offset holes, walls, the entry roof, gravity, restitution and Coulomb
friction, cube-on-cube contacts. Whether a cube stops, bounces, slides,
teeters at a hole edge and drops, passes several plates, knocks a resting
cube down, or jams, comes out of a hand-written sequential-impulse solver;
nothing of it is drawn from a table. The sensors are driven by the
simulated contacts: each plate's load cell sees the normal contact forces on
its plate through a plate-on-cell spring/damper and an HX711 (80 SPS on its
own oscillator, a four-period settling filter, gain 128, 24-bit two's
complement); each piezo disc sees its plate's bending modes excited by the
contact impulses, with crosstalk through the walls, an AC-coupled input on
the ATmega328P's multiplexed 10-bit ADC, noise and hum.

Usage::

    .venv/bin/python tools/crosscheck_ab/make_recordings_ab.py --out DIR \
        [--towers 8] [--first-seed 1] [--duration 120] \
        [--scenarios single rapid noisy game] [--workers N]

Writes ``DIR/{scenario}_t{seed}.bin`` (the device's bytes from boot, as
contracts.md section 1 defines them) and ``DIR/{scenario}_t{seed}.truth.json``
(``towerear-crosscheck-truth/1``, times in stream seconds). See README.md.
"""

from __future__ import annotations

import argparse
import binascii
import json
import math
import sys
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from scipy import signal

SCENARIOS = ("single", "rapid", "noisy", "game")
MODEL = "AB"
FS = 2000  # piezo sample sets per second (contract's nominal rate, sent in HELLO)
FINE = 8  # the analogue world is computed at 8 x FS: one fine step per mux slot (62.5 us)
FS_FINE = FS * FINE
LOAD_RATE_NOMINAL = 80
QUIET_S = 4.0  # an empty, quiet tower at the start: the detector tares on it
G = 9.81

# -- wire (contracts.md section 1) -------------------------------------------------------

T_HELLO, T_PIEZO, T_LOAD, T_STATUS = 0x01, 0x02, 0x03, 0x04


def crc16_ccitt_false(data: bytes) -> int:
    """CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, not reflected, xorout 0)."""
    return binascii.crc_hqx(data, 0xFFFF)


def crc16_ccitt_false_reference(data: bytes) -> int:
    """The same CRC bit by bit, from the contract's definition (a second implementation)."""
    crc = 0xFFFF
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) & 0xFFFF if crc & 0x8000 else (crc << 1) & 0xFFFF
    return crc


def cobs_encode(data: bytes) -> bytes:
    """COBS without the trailing 0x00 delimiter."""
    out = bytearray()
    blocks = bytes(data).split(b"\x00")
    last = len(blocks) - 1
    for i, block in enumerate(blocks):
        pos = 0
        while len(block) - pos >= 254:
            out.append(0xFF)
            out += block[pos:pos + 254]
            pos += 254
        rest = block[pos:]
        if i == last and pos > 0 and not rest:
            break  # ends on a full 254-byte run: no zero to imply
        out.append(len(rest) + 1)
        out += rest
    return bytes(out)


def cobs_decode_own(encoded: bytes) -> bytes:
    """Inverse of :func:`cobs_encode` (for the tests' round trips)."""
    out = bytearray()
    i = 0
    n = len(encoded)
    while i < n:
        code = encoded[i]
        if code == 0:
            raise ValueError("zero byte inside a COBS frame")
        out += encoded[i + 1:i + code]
        i += code
        if code < 0xFF and i < n:
            out.append(0)
    return bytes(out)


def frame(msg_type: int, seq: int, body: bytes) -> bytes:
    """One framed message: COBS(type | seq | body | crc) followed by 0x00."""
    msg = bytes([msg_type]) + (seq & 0xFFFF).to_bytes(2, "little") + body
    msg += crc16_ccitt_false(msg).to_bytes(2, "little")
    assert len(msg) <= 254
    return cobs_encode(msg) + b"\x00"


# -- the tower and the kit ---------------------------------------------------------------

# Geometry of the real Mord im Arosa hotel as far as the reviews give it: about 25 cm
# high, eight stacked card boxes ("half-boxes"), a ziggurat (each smaller than the one
# below), a square hole in the middle of each top, smaller upwards, "big enough for a
# cube to fall through". Widths, hole sizes and offsets are our estimates (README).
N_LEVELS = 8
MODULE_H = 0.031  # 8 x 31 mm = 248 mm
PLATE_T = 0.002  # 2 mm greyboard
WALL_T = 0.002
HOLE_TOP = 0.018  # the entry hole's side
HOLE_STEP = 0.0009  # each hole this much larger than the one above
HOLE_OFFSET = (0.006, 0.010)  # a hole's centre this far off the one above


@dataclass
class Tower:
    """One kit: the tower as built and the sensors on it (every figure from the seed)."""

    seed: int
    # geometry (metres); index L = plate L (0 = base plate, 8 = entry roof)
    y_top: np.ndarray  # top surface of plate L
    half_in: np.ndarray  # inner half width of module r (r = 0..7)
    hole_c: np.ndarray  # hole centre x of plate L (1..8); NaN for 0
    hole_w: np.ndarray  # hole side of plate L (1..8)
    depth_half: np.ndarray  # inner half depth of module r (out of the section plane)
    cube_side: float
    cube_density: float  # kg/m3
    e_plate: float
    e_cube: float
    e_wall: float
    mu_plate: float
    mu_cube: float
    # load cells
    cpg: np.ndarray  # counts per gram
    offset: np.ndarray  # counts of the empty plate
    plate_g: np.ndarray
    cell_f0: np.ndarray
    cell_zeta: np.ndarray
    chip_rate_hz: np.ndarray
    chip_phase: np.ndarray
    load_noise: np.ndarray  # counts rms
    drift_mg_per_min: np.ndarray
    # piezo
    mode_f: np.ndarray  # (8, 3) Hz
    mode_q: np.ndarray  # (8, 3)
    disc_x: np.ndarray  # disc position across plate L, as a fraction of the half width
    disc_gain: np.ndarray  # counts per (N s) of modal drive, per plate
    crosstalk: np.ndarray  # amplitude per level of distance through the walls
    ac_hz: np.ndarray
    piezo_bias: np.ndarray
    piezo_noise: np.ndarray
    hum: np.ndarray
    hum_hz: float
    contact_ms: float  # half-sine contact time of wood on greyboard at 1 m/s
    sets_per_msg: int
    device_id: bytes
    cells: str = "matched"

    @property
    def cube_mass(self) -> float:
        return self.cube_density * self.cube_side ** 3


def make_tower(seed: int) -> Tower:
    """The kit of tower ``seed``: geometry with its build tolerances, materials, sensors."""
    rng = np.random.default_rng([seed, 0xAB, 1])
    u = rng.uniform
    y_top = np.arange(N_LEVELS + 1) * MODULE_H
    # Inner half widths from 68 mm (ground-floor box, 14 cm outside) to 40 mm at the top.
    half_in = 0.068 - 0.004 * np.arange(N_LEVELS) + rng.normal(0, 0.0005, N_LEVELS)
    # Square holes, smaller upwards: 20 mm at the entry, about 1.2 mm more per level down.
    hole_w = np.full(N_LEVELS + 1, np.nan)
    hole_w[1:] = HOLE_TOP + HOLE_STEP * (N_LEVELS - np.arange(1, N_LEVELS + 1))
    hole_w[1:] += rng.normal(0, 0.0004, N_LEVELS)
    # Hole centres: the printed boxes put them "in the middle", but the boxes clip together
    # with play and the card is cut by hand-fed dies; each hole sits a few mm off the one
    # above, to alternating sides (the way the cube is seen to zig-zag).
    hole_c = np.full(N_LEVELS + 1, np.nan)
    hole_c[8] = 0.0
    side = 1.0 if rng.random() < 0.5 else -1.0
    for lv in range(7, 0, -1):
        hole_c[lv] = hole_c[lv + 1] + side * u(*HOLE_OFFSET)
        hole_c[lv] = float(np.clip(hole_c[lv], -0.011, 0.011))
        side = -side
    depth_half = half_in.copy()
    cube_side = float(rng.choice([0.008, 0.009, 0.010], p=[0.25, 0.5, 0.25]))
    cube_density = u(600.0, 760.0)  # beech/maple-like hardwood: 0.31-0.76 g per cube
    # Restitution and friction: wood on greyboard is lossy (the plate is card over a cell);
    # wood on wood bounces more. Friction figures bracket the tabulated dry wood-on-wood
    # (mu_s 0.5, mu_k 0.3) and paper/board sled tests.
    e_plate, e_cube, e_wall = u(0.30, 0.45), u(0.45, 0.60), u(0.30, 0.42)
    mu_plate, mu_cube = u(0.32, 0.50), u(0.28, 0.45)
    # Load cells: 100 g bar cells, rated output 0.6-1.0 mV/V; the HX711 is ratiometric,
    # so counts per gram = S * 2^24 * 128 / 100 g (gain 128 is +-0.5 AVDD/128 full scale).
    s_mvv = u(0.6, 1.0, N_LEVELS) * (1 + rng.normal(0, 0.03, N_LEVELS))
    cpg = s_mvv * 1e-3 * 2 ** 24 * 128 / 100.0
    plate_g = u(6.0, 11.0, N_LEVELS)
    zero_g = rng.normal(0, 2.5, N_LEVELS)  # zero balance, a few % of rated output
    offset = np.round(cpg * (plate_g + zero_g))
    cell_f0 = u(70.0, 190.0, N_LEVELS)  # a bar cell of a few kN/m under 6-11 g
    cell_zeta = u(0.06, 0.2, N_LEVELS)
    chip_rate_hz = LOAD_RATE_NOMINAL * u(0.96, 1.10, N_LEVELS)  # on-chip oscillators
    chip_phase = u(0, 1, N_LEVELS)
    # HX711 input noise 90 nV rms at 80 SPS is ~45 counts at AVDD 4.3 V; the cell, the
    # excitation and the board add to it.
    load_noise = u(40.0, 90.0, N_LEVELS)
    drift = rng.normal(0, 5.0, N_LEVELS)
    # Plate bending modes: a 2 mm greyboard plate 8-14 cm wide on a central bar.
    f1 = u(170.0, 420.0, N_LEVELS)
    mode_f = np.stack([f1, f1 * u(1.9, 2.7, N_LEVELS), f1 * u(3.3, 4.8, N_LEVELS)], axis=1)
    mode_q = u(6.0, 16.0, (N_LEVELS, 3))
    disc_x = u(-0.6, 0.6, N_LEVELS)
    # counts per N s: a 0.5 g cube hitting at 1 m/s (~0.7 mN s with its bounce) rings the
    # plate it hits with 60-200 counts on the ATmega's 4.9 mV steps.
    disc_gain = u(1.0e5, 2.6e5, N_LEVELS)
    crosstalk = u(0.15, 0.32, N_LEVELS)
    # AC coupling: a ~20 nF disc into a 0.5-1 MOhm bias divider.
    ac_hz = u(3.0, 10.0, N_LEVELS)
    piezo_bias = 511.5 + rng.normal(0, 1.5, N_LEVELS)
    piezo_noise = u(0.45, 1.2, N_LEVELS)
    hum = u(0.05, 0.35, N_LEVELS)
    hum_hz = 60.0 if rng.random() < 0.2 else 50.0
    return Tower(
        seed=seed, y_top=y_top, half_in=half_in, hole_c=hole_c, hole_w=hole_w,
        depth_half=depth_half, cube_side=cube_side, cube_density=cube_density,
        e_plate=e_plate, e_cube=e_cube, e_wall=e_wall, mu_plate=mu_plate, mu_cube=mu_cube,
        cpg=cpg, offset=offset, plate_g=plate_g, cell_f0=cell_f0, cell_zeta=cell_zeta,
        chip_rate_hz=chip_rate_hz, chip_phase=chip_phase, load_noise=load_noise,
        drift_mg_per_min=drift, mode_f=mode_f, mode_q=mode_q, disc_x=disc_x,
        disc_gain=disc_gain, crosstalk=crosstalk, ac_hz=ac_hz, piezo_bias=piezo_bias,
        piezo_noise=piezo_noise, hum=hum, hum_hz=hum_hz, contact_ms=u(0.35, 0.7),
        sets_per_msg=int(rng.choice([8, 10, 12])),
        device_id=bytes(rng.integers(0, 256, 8, dtype=np.uint8)),
    )


make_kit = make_tower


# -- rigid-body physics -------------------------------------------------------------------

DT = 0.0005  # base step: one piezo set
DT_FAST = DT / 2  # fast contacts
DT_SLOW = DT * 2  # contacts that only settle (every cube in them slower than V_SETTLE)
DT_FREE = DT * 4  # free flight, far from anything
NB_REACH = 0.014  # m: neighbours cached within this gap ...
NB_MOVE = 0.005  # m: ... until the cube has moved this far
ITERATIONS = 8
SLOP = 2e-5  # penetration left alone (20 um), as Box2D's linear slop
BETA = 0.15  # Baumgarte share of the penetration removed per step
V_RESTITUTION = 0.03  # m/s: slower approaches do not bounce (resting contact)
V_IMPACT = 0.03  # m/s: contacts approaching faster are impacts for the piezo
V_QUIET = 0.008  # m/s: corner speed under which a cube counts as still
T_SLEEP = 0.03  # s still before it is put to sleep
T_RESLEEP = 0.002  # s, for a cube that a touch woke and that never moved
V_SETTLE = 0.05  # m/s: contacts all slower than this only settle (1 ms steps)
V_WAKE = 0.15  # m/s: a cube moving slower leans on sleeping cubes as on fixed ones
V_WAKE_CHAIN = 0.3  # m/s: the same for a cube that was itself woken
KNOCK_JOLT = 0.03  # m/s the tower is jolted per unit of a knock's strength (2 mN s at
# the base): a fist on a table of a few kg gives it a few cm/s
V_DWELL = 0.03  # m/s: "stopped a moment" on a plate ...
T_DWELL = 0.02  # s ... for at least this long

# static kinds
K_PLATE, K_ROOF, K_WALL = 0, 1, 2


class Cube:
    """One wooden cube: a rigid square in the section plane, at a fixed depth ``z``."""

    __slots__ = ("id", "x", "y", "a", "vx", "vy", "w", "z", "vz", "h", "m", "im", "ii", "awake",
                 "quiet", "rest_t", "plate", "ca", "sa", "gx", "gy", "event", "waker",
                 "colour", "track", "room", "support", "t_move", "slow_t", "slow_room",
                 "anchor", "span", "nb", "margin", "holes")

    def __init__(self, cid: int, h: float, m: float) -> None:
        self.id = cid
        self.h = h
        self.m = m
        self.im = 1.0 / m
        self.ii = 1.0 / (m * (2 * h) ** 2 / 6.0)
        self.x = self.y = self.a = self.vx = self.vy = self.w = self.z = self.vz = 0.0
        self.awake = False
        self.quiet = 0.0
        self.rest_t = 0.0
        self.plate = -1
        self.ca, self.sa = 1.0, 0.0
        self.gx, self.gy = 0.0, -G
        self.event = -1
        self.waker = -1
        self.colour = ""
        self.track: dict[str, Any] = {}
        self.room = 8
        self.support: dict[int, float] = {}
        self.t_move = 0.0
        self.slow_t = 0.0
        self.slow_room = -1
        self.anchor = (0.0, 0.0, 0.0, 0.0)
        self.span = [1.0, -1.0, False]  # x range of the contacts holding it up; leaning?
        self.nb: tuple[Any, ...] | None = None  # cached neighbourhood (World._neighbours)
        self.margin = 0.0  # at rest: how far its centre is inside what holds it up (m)
        self.holes: dict[int, bool] = {}  # per plate: does its slice have the hole?

    def energy(self) -> float:
        """Kinetic plus potential energy (J), the potential from y = 0."""
        inertia = 1.0 / self.ii
        return 0.5 * self.m * (self.vx ** 2 + self.vy ** 2 + self.vz ** 2) \
            + 0.5 * inertia * self.w ** 2 + self.m * G * self.y


class World:
    """The tower's interior as static boxes, the cubes in it, and a step-by-step solver.

    Records every contact impulse on a plate, the roof or a wall with its time,
    place and approach speed (``rec``), and the steps of the weight that sleeping
    cubes put on their plates (``weights``), for the sensors.
    """

    def __init__(self, tower: Tower) -> None:
        self.tw = tower
        self.t = 0.0
        self.cubes: list[Cube] = []
        self.awake: list[Cube] = []
        self.sleeping: list[list[Cube]] = [[] for _ in range(N_LEVELS + 2)]
        self.statics: list[tuple[Any, ...]] = []
        self._build_statics()
        self.warm: dict[tuple[int, ...], tuple[float, float]] = {}
        self.faces_prev: dict[tuple[int, ...], int] = {}
        self.faces_now: dict[tuple[int, ...], int] = {}
        # sensor records: t, static index, vertical impulse (down on the static), horizontal
        # impulse, contact x, approach speed (>0 for impacts, 0 for steady contact), dt
        self.rec: list[tuple[float, int, float, float, float, float, float]] = []
        self.weights: list[tuple[float, int, float]] = []  # (t, plate, +-newtons)
        self.lifted_from = 99  # plates >= this are in a lifted stack (frozen)
        self.on_sleep: Any = None
        self.on_wake: Any = None
        self.on_room: Any = None
        self.on_out: Any = None
        self.next_id = 0
        self.version = 0  # counts sleeps, wakes and removals (neighbour caches go stale)
        self.steps = 0
        self.next_dt = DT

    # geometry -----------------------------------------------------------------------------

    def _build_statics(self) -> None:
        tw = self.tw
        y = tw.y_top
        st = self.statics
        # base plate (level 0): no hole
        a0 = tw.half_in[0]
        st.append((-a0 - WALL_T, a0 + WALL_T, -PLATE_T, 0.0, K_PLATE, 0, tw.e_plate,
                   tw.mu_plate, 0, 0.0))
        for lv in range(1, N_LEVELS + 1):
            # plate lv is the roof of module lv-1: it spans that module's outer width
            a = tw.half_in[lv - 1] + WALL_T
            c, hw = tw.hole_c[lv], tw.hole_w[lv] / 2
            kind = K_ROOF if lv == N_LEVELS else K_PLATE
            y0, y1, e, mu = y[lv] - PLATE_T, y[lv], tw.e_plate, tw.mu_plate
            # In the slices through the square hole (|z| < hw) the plate has a gap; in the
            # others it is whole. The sensed plate (an insert inside module lv) and the
            # roof share the geometry.
            st.append((-a, c - hw, y0, y1, kind, lv, e, mu, 1, hw))
            st.append((c + hw, a, y0, y1, kind, lv, e, mu, 1, hw))
            st.append((-a, a, y0, y1, kind, lv, e, mu, 2, hw))
        for r in range(N_LEVELS):
            a = tw.half_in[r]
            y0, y1 = y[r], y[r + 1] - PLATE_T
            st.append((-a - WALL_T, -a, y0, y1, K_WALL, r, tw.e_wall, tw.mu_plate, 0, 0.0))
            st.append((a, a + WALL_T, y0, y1, K_WALL, r, tw.e_wall, tw.mu_plate, 0, 0.0))
        self._wall_index = [i for i, s in enumerate(st) if s[4] == K_WALL][::2]
        # per room: the statics within reach
        self.near: list[list[int]] = []
        for r in range(N_LEVELS + 1):
            lo = y[r] - 0.016
            hi = (y[r + 1] if r < N_LEVELS else y[N_LEVELS] + 0.05) + 0.016
            self.near.append([i for i, s in enumerate(st) if s[3] > lo and s[2] < hi])

    def room_of(self, yy: float) -> int:
        r = int(yy // MODULE_H)
        return 0 if r < 0 else (N_LEVELS if r > N_LEVELS else r)

    # cubes ----------------------------------------------------------------------------------

    def add_cube(self, c: Cube) -> None:
        self.cubes.append(c)
        c.awake = True
        c.quiet = 0.0
        c.anchor = (c.x, c.y, c.a, self.t)
        c.room = self.room_of(c.y)
        c.t_move = self.t
        self.awake.append(c)

    def wake(self, c: Cube, by: Cube | None) -> None:
        if c.awake:
            return
        self.version += 1
        self.sleeping[c.room].remove(c)
        c.awake = True
        c.quiet = 0.0
        c.t_move = self.t
        c.anchor = (c.x, c.y, c.a, self.t)
        self.awake.append(c)
        if c.plate >= 0:
            self.weights.append((self.t, c.plate, -c.m * G))
        if self.on_wake is not None:
            self.on_wake(c, by)

    def put_to_sleep(self, c: Cube, plate: int) -> None:
        self.version += 1
        c.awake = False
        c.vx = c.vy = c.w = c.vz = 0.0
        lo, hi, lean = c.span
        c.margin = 0.0 if lean or hi < lo else min(c.x - lo, hi - c.x)
        c.plate = plate
        c.room = self.room_of(c.y)
        self.sleeping[c.room].append(c)
        self.weights.append((self.t, plate, c.m * G))
        if self.on_sleep is not None:
            self.on_sleep(c)

    def remove(self, c: Cube) -> None:
        """A hand takes a sleeping cube out (its weight leaves its plate now)."""
        self.version += 1
        if c.awake:
            self.awake.remove(c)
        else:
            self.sleeping[c.room].remove(c)
            if c.plate >= 0:
                self.weights.append((self.t, c.plate, -c.m * G))
        self.cubes.remove(c)
        c.awake = False
        c.plate = -1

    def resting_on(self, plate: int) -> list[Cube]:
        return [c for c in self.cubes if not c.awake and c.plate == plate]

    # collision detection ----------------------------------------------------------------------

    def _neighbours(self, c: Cube) -> tuple[Any, ...]:
        """The statics and sleeping cubes within NB_REACH of ``c`` (kept while it moves
        less than NB_MOVE and nothing falls asleep or wakes)."""
        rad = c.h * 1.4143
        x, y = c.x, c.y
        st = []
        r0 = self.room_of(y - rad - NB_REACH)
        r1 = self.room_of(y + rad + NB_REACH)
        seen: set[int] = set()
        for r in range(r0, r1 + 1):
            for si in self.near[r]:
                if si in seen:
                    continue
                seen.add(si)
                s = self.statics[si]
                if max(s[0] - x - rad, x - rad - s[1], s[2] - y - rad, y - rad - s[3]) \
                        < NB_REACH:
                    st.append(si)
        sl = []
        for r in range(r0, r1 + 1):
            for o in self.sleeping[r]:
                if max(abs(o.x - x), abs(o.y - y)) - rad - o.h * 1.4143 < NB_REACH:
                    sl.append(o)
        return (self.version, x, y, st, sl)

    def _collide_static(self, c: Cube, out: list[list[Any]], dt: float,
                        near: list[int]) -> float:
        """Contacts of cube ``c`` with the static boxes near it; returns the clearance."""
        h = c.h
        rad = h * 1.4143
        x, y = c.x, c.y
        ca, sa = c.ca, c.sa
        hx, hy = h * ca, h * sa  # h * u
        gap = 1.0
        statics = self.statics
        lifted = self.lifted_from
        corners = None
        for si in near:
            s = statics[si]
            x0, x1, y0, y1 = s[0], s[1], s[2], s[3]
            if s[8] and not (y - rad < y1 and y + rad > y0):
                c.holes[s[5]] = abs(c.z) < s[9]  # clear of the plate: its slice follows z
            g = max(x0 - x - rad, x - rad - x1, y0 - y - rad, y - rad - y1)
            if g > 0.0:
                if g < gap:
                    gap = g
                continue
            if s[5] >= lifted and s[4] != K_WALL:
                continue
            mode = s[8]
            if mode:
                # The cube's slice has the hole while its centre is within the hole's
                # depth; a cube inside the plate's thickness keeps the slice it came in
                # with (a cube in the hole does not find the plate closing round it).
                open_ = c.holes.get(s[5])
                if open_ is None:
                    open_ = c.holes[s[5]] = abs(c.z) < s[9]
                if open_ != (mode == 1):
                    continue  # this slice has (mode 1) or has not (mode 2) the hole
            gap = 0.0
            if corners is None:
                corners = ((0, hx - hy, hy + hx), (1, -hx - hy, -hy + hx),
                           (2, -hx + hy, -hy - hx), (3, hx + hy, hy - hx))
            # cube corners inside the box
            for k, rx, ry in corners:
                px, py = x + rx, y + ry
                if x0 < px < x1 and y0 < py < y1:
                    vx = c.vx - c.w * ry
                    vy = c.vy + c.w * rx
                    qx, qy = px - vx * dt, py - vy * dt  # where the corner was a step ago
                    faces = ((py - y0, 0.0, -1.0, qy <= y0 + SLOP),
                             (y1 - py, 0.0, 1.0, qy >= y1 - SLOP),
                             (px - x0, -1.0, 0.0, qx <= x0 + SLOP),
                             (x1 - px, 1.0, 0.0, qx >= x1 - SLOP))
                    key = (c.id, -1 - si, k)
                    best = self._face(key, faces)
                    out.append([c, None, best[1], best[2], rx, ry, 0.0, 0.0, 0.0, 0.0, 0.0,
                                0.0, 0.0, s[7], key, si, 0.0, px, s[6], best[0], None])
            # box corners inside the cube (hole edges, wall ends)
            for k, (qx, qy) in enumerate(((x0, y0), (x1, y0), (x1, y1), (x0, y1))):
                dx, dy = qx - x, qy - y
                lx = dx * ca + dy * sa
                ly = -dx * sa + dy * ca
                if -h < lx < h and -h < ly < h:
                    # the cube's material point at the corner, a step ago, in the cube's frame
                    vx = c.vx - c.w * dy
                    vy = c.vy + c.w * dx
                    ex, ey = dx + vx * dt, dy + vy * dt
                    plx = ex * ca + ey * sa
                    ply = -ex * sa + ey * ca
                    faces = ((h - lx, -ca, -sa, plx >= h - SLOP),
                             (lx + h, ca, sa, plx <= -h + SLOP),
                             (h - ly, sa, -ca, ply >= h - SLOP),
                             (ly + h, -sa, ca, ply <= -h + SLOP))
                    key = (c.id, -1 - si, 4 + k)
                    best = self._face(key, faces)
                    out.append([c, None, best[1], best[2], dx, dy, 0.0, 0.0, 0.0, 0.0, 0.0,
                                0.0, 0.0, s[7], key, si, 0.0, qx, s[6], best[0], None])
        return gap

    def _face(self, key: tuple[int, ...], faces: tuple[tuple[float, float, float, bool], ...]
              ) -> tuple[float, float, float, bool]:
        """The face a corner is pushed out of: the one it crossed, kept while it persists.

        Of the faces the corner was outside of a step ago, the least penetrated
        (else the least penetrated of all). A contact that goes on keeps its face,
        so a corner wedged at a hole edge does not flip between two normals.
        """
        old = self.faces_prev.get(key)
        if old is not None and faces[old][0] < 0.0008:
            self.faces_now[key] = old
            return faces[old]
        best = -1
        for i, f in enumerate(faces):
            if f[3] and (best < 0 or f[0] < faces[best][0]):
                best = i
        if best < 0:
            best = min(range(4), key=lambda i: faces[i][0])
        self.faces_now[key] = best
        return faces[best]

    def _collide_cubes(self, a: Cube, b: Cube, out: list[list[Any]] | None, dt: float) -> bool:
        """Contacts between two cubes (normal from b to a); True when they touch.

        Separating axes and edge clipping as in Box2D-lite (E. Catto): the face of
        least penetration is the reference face, the other cube's edge most
        anti-parallel to it is clipped to the face's width, and the clipped points
        below the face are the contacts (two for cubes lying face on face).
        """
        if abs(a.z - b.z) >= a.h + b.h:
            return False
        dpx, dpy = b.x - a.x, b.y - a.y
        ha, hb = a.h, b.h
        # rotations: columns u = (c, s), v = (-s, c)
        a1x, a1y, a2x, a2y = a.ca, a.sa, -a.sa, a.ca
        b1x, b1y, b2x, b2y = b.ca, b.sa, -b.sa, b.ca
        dax, day = dpx * a1x + dpy * a1y, dpx * a2x + dpy * a2y  # dp in A's frame
        dbx, dby = dpx * b1x + dpy * b1y, dpx * b2x + dpy * b2y  # dp in B's frame
        c11 = abs(a1x * b1x + a1y * b1y)
        c12 = abs(a1x * b2x + a1y * b2y)
        c21 = abs(a2x * b1x + a2y * b1y)
        c22 = abs(a2x * b2x + a2y * b2y)
        fax = abs(dax) - ha - (c11 + c12) * hb
        if fax > 0.0:
            return False
        fay = abs(day) - ha - (c21 + c22) * hb
        if fay > 0.0:
            return False
        fbx = abs(dbx) - (c11 + c21) * ha - hb
        if fbx > 0.0:
            return False
        fby = abs(dby) - (c12 + c22) * ha - hb
        if fby > 0.0:
            return False
        if out is None:
            return True
        # the reference face: least penetration, with a bias to A's faces for coherence
        axis, sep = 0, fax
        nx, ny = (a1x, a1y) if dax > 0 else (-a1x, -a1y)
        if fay > 0.95 * sep + 0.01 * ha:
            axis, sep = 1, fay
            nx, ny = (a2x, a2y) if day > 0 else (-a2x, -a2y)
        if fbx > 0.95 * sep + 0.01 * hb:
            axis, sep = 2, fbx
            nx, ny = (b1x, b1y) if dbx > 0 else (-b1x, -b1y)
        if fby > 0.95 * sep + 0.01 * hb:
            axis, sep = 3, fby
            nx, ny = (b2x, b2y) if dby > 0 else (-b2x, -b2y)
        # n points from A to B. Reference body R (face), incident body I (edge).
        if axis < 2:
            ref, inc = a, b
            fnx, fny = nx, ny
        else:
            ref, inc = b, a
            fnx, fny = -nx, -ny
        hr, hi = ref.h, inc.h
        front = ref.x * fnx + ref.y * fny + hr
        snx, sny = -fny, fnx  # side direction along the reference face
        side = ref.x * snx + ref.y * sny
        neg_side, pos_side = -side + hr, side + hr
        # incident edge: the face of I most anti-parallel to the front normal
        i1x, i1y, i2x, i2y = inc.ca, inc.sa, -inc.sa, inc.ca
        n1 = -(fnx * i1x + fny * i1y)
        n2 = -(fnx * i2x + fny * i2y)
        if abs(n1) > abs(n2):
            s1 = 1.0 if n1 > 0 else -1.0
            ex0, ey0 = s1 * hi, -s1 * hi
            ex1, ey1 = s1 * hi, s1 * hi
        else:
            s2 = 1.0 if n2 > 0 else -1.0
            ex0, ey0 = s2 * hi, s2 * hi
            ex1, ey1 = -s2 * hi, s2 * hi
        v0x = inc.x + i1x * ex0 + i2x * ey0
        v0y = inc.y + i1y * ex0 + i2y * ey0
        v1x = inc.x + i1x * ex1 + i2x * ey1
        v1y = inc.y + i1y * ex1 + i2y * ey1
        pts = [(v0x, v0y, 0), (v1x, v1y, 1)]
        for cnx, cny, off in ((-snx, -sny, neg_side), (snx, sny, pos_side)):
            (p0x, p0y, k0), (p1x, p1y, k1) = pts
            d0 = cnx * p0x + cny * p0y - off
            d1 = cnx * p1x + cny * p1y - off
            kept = []
            if d0 <= 0.0:
                kept.append((p0x, p0y, k0))
            if d1 <= 0.0:
                kept.append((p1x, p1y, k1))
            if d0 * d1 < 0.0:
                f = d0 / (d0 - d1)
                kept.append((p0x + f * (p1x - p0x), p0y + f * (p1y - p0y), 2 + k0))
            if len(kept) < 2:
                return False
            pts = kept[:2]
        found = False
        e, mu = self.tw.e_cube, self.tw.mu_cube
        for k, (px, py, feat) in enumerate(pts):
            s = fnx * px + fny * py - front
            if s > 0.0:
                continue
            found = True
            # the contact point on the reference face; normal pushes a away from b
            cx, cy = px - s * fnx, py - s * fny
            out.append([a, b, -nx, -ny, cx - a.x, cy - a.y, cx - b.x, cy - b.y, 0.0, 0.0, 0.0,
                        0.0, 0.0, mu, (a.id, b.id, axis, k, feat), -1, 0.0, cx, e, -s, None])
        return found

    # the step -------------------------------------------------------------------------------

    def step(self, dt: float) -> None:
        """Advance the awake cubes by ``dt`` (gravity, contacts, friction, sleep)."""
        self.steps += 1
        t = self.t
        aw = self.awake
        for c in aw:
            c.vx += c.gx * dt
            c.vy += c.gy * dt
            c.ca = math.cos(c.a)
            c.sa = math.sin(c.a)
        contacts: list[list[Any]] = []
        self.faces_prev, self.faces_now = self.faces_now, {}
        k = 0
        best = DT_FREE  # the next step, from how close each cube is to anything
        near = DT_FREE
        lifted = self.lifted_from
        while k < len(aw):
            c = aw[k]
            cx, cy = c.x, c.y
            nb = c.nb
            if nb is None or nb[0] != self.version or abs(cx - nb[1]) > NB_MOVE \
                    or abs(cy - nb[2]) > NB_MOVE:
                nb = c.nb = self._neighbours(c)
            g = self._collide_static(c, contacts, dt, nb[3])
            if g > NB_REACH - NB_MOVE:
                g = NB_REACH - NB_MOVE  # what the cache does not hold is at least this far
            rc = c.h * 1.4143
            for j in range(k):
                o = aw[j]
                gg = max(abs(o.x - cx), abs(o.y - cy)) - rc - o.h * 1.4143
                if gg < g:
                    g = gg
                if gg <= 0.0:
                    self._collide_cubes(c, o, contacts, dt)
            speed = abs(c.vx) + abs(c.vy) + abs(c.w) * rc
            # a thrown cube wakes what it touches above V_WAKE; a cube that was itself
            # woken only above V_WAKE_CHAIN (a pile's resting cubes hold each other)
            moving = speed > (V_WAKE_CHAIN if "wake" in c.track else V_WAKE)
            for o in nb[4]:
                gg = max(abs(o.x - cx), abs(o.y - cy)) - rc - o.h * 1.4143
                if gg < g:
                    g = gg
                if gg > 0.0 or o.plate >= lifted:
                    continue
                o.ca, o.sa = math.cos(o.a), math.sin(o.a)
                if moving:
                    if self._collide_cubes(c, o, None, dt):
                        self.wake(o, c)  # its contacts come in its own turn
                else:
                    # a cube settling on a sleeping one leans on it as on the plate
                    # under it (the sleeper stays put)
                    n0 = len(contacts)
                    self._collide_cubes(c, o, contacts, dt)
                    for ct in contacts[n0:]:
                        ct[1] = None
                        ct[20] = o
            if g <= 0.0005:
                # in contact or about to be: the step must keep a corner's travel per
                # step well under the 2 mm plate (0.25 ms above 1.3 m/s)
                need = DT_FAST if speed > 1.3 else (DT if speed > V_SETTLE else DT_SLOW)
                if need < near:
                    near = need
            else:
                allowed = (g - speed * dt) / (speed + 0.02 + G * DT_FREE)
                if allowed < best:
                    best = allowed
            k += 1
        if best >= DT_FREE:
            best = DT_FREE
        elif best >= 2 * DT:
            best = 2 * DT
        else:
            best = DT
        self.next_dt = min(near, best)
        inv_dt = 1.0 / dt
        warm = self.warm
        new_warm: dict[tuple[int, ...], tuple[float, float]] = {}
        # pre-step: effective masses, restitution and position bias, warm start
        solve = []
        for ct in contacts:
            a, b = ct[0], ct[1]
            nx, ny, rax, ray = ct[2], ct[3], ct[4], ct[5]
            rna = rax * ny - ray * nx
            rta = -(rax * nx + ray * ny)
            kn = a.im + a.ii * rna * rna
            kt = a.im + a.ii * rta * rta
            vn = a.vx * nx + a.vy * ny + a.w * rna
            rnb = rtb = 0.0
            if b is not None:
                rbx, rby = ct[6], ct[7]
                rnb = rbx * ny - rby * nx
                rtb = -(rbx * nx + rby * ny)
                kn += b.im + b.ii * rnb * rnb
                kt += b.im + b.ii * rtb * rtb
                vn -= b.vx * nx + b.vy * ny + b.w * rnb
            ct[16] = vn
            bias = -ct[18] * vn if vn < -V_RESTITUTION else 0.0
            pen = ct[19] - SLOP
            if pen > 0.0:
                pb = BETA * inv_dt * pen
                if pb > bias:
                    bias = pb
            pn, pt = warm.get(ct[14], (0.0, 0.0))
            if pn or pt:
                px = pn * nx + pt * ny
                py = pn * ny - pt * nx
                a.vx += px * a.im
                a.vy += py * a.im
                a.w += a.ii * (pn * rna + pt * rta)
                if b is not None:
                    b.vx -= px * b.im
                    b.vy -= py * b.im
                    b.w -= b.ii * (pn * rnb + pt * rtb)
            # a, b, n, lever arms, 1/k, bias, mu, accumulated impulses
            solve.append([a, b, nx, ny, rna, rnb, rta, rtb, 1.0 / kn, 1.0 / kt, bias, ct[13],
                          pn, pt, ct])
        # iterations (sequential impulses with accumulated clamping, as Box2D)
        for _ in range(ITERATIONS):
            moved = 0.0
            for sv in solve:
                a, b, nx, ny, rna, rnb, rta, rtb, mn, mt, bias, mu, pn0, pt0, _ct = sv
                if b is None:
                    vn = a.vx * nx + a.vy * ny + a.w * rna
                    pn = pn0 + mn * (bias - vn)
                    if pn < 0.0:
                        pn = 0.0
                    dpn = pn - pn0
                    if dpn:
                        moved += abs(dpn) * a.im
                        q = dpn * a.im
                        a.vx += nx * q
                        a.vy += ny * q
                        a.w += a.ii * dpn * rna
                    vt = a.vx * ny - a.vy * nx + a.w * rta
                    lim = mu * pn
                    pt = pt0 - mt * vt
                    if pt > lim:
                        pt = lim
                    elif pt < -lim:
                        pt = -lim
                    dpt = pt - pt0
                    if dpt:
                        moved += abs(dpt) * a.im
                        q = dpt * a.im
                        a.vx += ny * q
                        a.vy -= nx * q
                        a.w += a.ii * dpt * rta
                else:
                    vn = (a.vx - b.vx) * nx + (a.vy - b.vy) * ny + a.w * rna - b.w * rnb
                    pn = pn0 + mn * (bias - vn)
                    if pn < 0.0:
                        pn = 0.0
                    dpn = pn - pn0
                    if dpn:
                        moved += abs(dpn) * a.im
                        q, r = dpn * a.im, dpn * b.im
                        a.vx += nx * q
                        a.vy += ny * q
                        a.w += a.ii * dpn * rna
                        b.vx -= nx * r
                        b.vy -= ny * r
                        b.w -= b.ii * dpn * rnb
                    vt = (a.vx - b.vx) * ny - (a.vy - b.vy) * nx + a.w * rta - b.w * rtb
                    lim = mu * pn
                    pt = pt0 - mt * vt
                    if pt > lim:
                        pt = lim
                    elif pt < -lim:
                        pt = -lim
                    dpt = pt - pt0
                    if dpt:
                        moved += abs(dpt) * a.im
                        q, r = dpt * a.im, dpt * b.im
                        a.vx += ny * q
                        a.vy -= nx * q
                        a.w += a.ii * dpt * rta
                        b.vx -= ny * r
                        b.vy += nx * r
                        b.w -= b.ii * dpt * rtb
                sv[12] = pn
                sv[13] = pt
            if moved < 1e-4:  # the contacts changed no velocity by 0.1 mm/s: converged
                break
        for sv in solve:
            ct = sv[14]
            ct[11] = sv[12]
            ct[12] = sv[13]
        # depth: Coulomb friction from this step's normal impulses, then the walls
        npush: dict[int, float] = {}
        for ct in contacts:
            if ct[11] > 0.0:
                a = ct[0]
                npush[a.id] = npush.get(a.id, 0.0) + ct[11] * ct[13]
                if ct[1] is not None:
                    npush[ct[1].id] = npush.get(ct[1].id, 0.0) + ct[11] * ct[13]
        tw = self.tw
        for c in aw:
            if c.vz:
                f = npush.get(c.id, 0.0) * c.im
                if f >= abs(c.vz):
                    c.vz = 0.0
                elif f:
                    c.vz -= f if c.vz > 0 else -f
            c.x += c.vx * dt
            c.y += c.vy * dt
            c.a += c.w * dt
            c.z += c.vz * dt
            r = c.room if c.room < N_LEVELS else N_LEVELS - 1
            lim = tw.depth_half[r] - c.h
            if c.z > lim or c.z < -lim:
                vz = c.vz
                c.z = lim if c.z > 0 else -lim
                if (vz > 0) == (c.z > 0):
                    c.vz = -tw.e_wall * vz
                    # a wall out of the section plane: counted with the side walls
                    self.rec.append((t, self._wall_index[r], 0.0, c.m * (1 + tw.e_wall) * vz,
                                     c.x, abs(vz) if abs(vz) > V_IMPACT else 0.0, dt))
        # records, warm start, support
        rec = self.rec
        for c in aw:
            c.support = {}
            c.span = [1.0, -1.0, False]
        for ct in contacts:
            pn, pt = ct[11], ct[12]
            new_warm[ct[14]] = (pn, pt)
            nx, ny = ct[2], ct[3]
            a, b = ct[0], ct[1]
            # the x range of the points a cube stands on (touching, whatever they carry)
            up = a if ny > 0.3 else (b if ny < -0.3 else None)
            if up is not None:
                sp = up.span
                cx = ct[17]
                if cx < sp[0]:
                    sp[0] = cx
                if cx > sp[1]:
                    sp[1] = cx
            elif pn > 0.0:
                a.span[2] = True  # leaning on a wall or a neighbour's side
                if b is not None:
                    b.span[2] = True
            if pn <= 0.0:
                continue
            if "first" not in a.track:
                a.track["first"] = t
                a.track["first_part"] = self._part(ct)
            if b is not None and "first" not in b.track:
                b.track["first"] = t
                b.track["first_part"] = ("cube", b.plate if b.plate >= 0 else b.room)
            jy = pn * ny - pt * nx  # impulse on the cube, vertical (t = (ny, -nx))
            jx = pn * nx + pt * ny
            si = ct[15]
            if si >= 0:
                vn = ct[16]
                rec.append((t, si, jy, jx, ct[17], -vn if vn < -V_IMPACT else 0.0, dt))
                s = self.statics[si]
                if s[4] != K_WALL and jy > 0.0:
                    key = s[5]
                    a.support[key] = a.support.get(key, 0.0) + jy
            elif b is not None:
                # cube on cube: the upper one is supported by the lower one
                if jy > 0.0:
                    a.support[-1 - b.id] = a.support.get(-1 - b.id, 0.0) + jy
                elif jy < 0.0:
                    b.support[-1 - a.id] = b.support.get(-1 - a.id, 0.0) - jy
            else:
                # leaning on a sleeping cube: the push goes through it into its plate
                o = ct[20]
                if jy > 0.0:
                    a.support[-1 - o.id] = a.support.get(-1 - o.id, 0.0) + jy
                rec.append((t, -1 - o.plate, jy, jx, o.x, 0.0, dt))
        self.warm = new_warm
        self.t = t + dt
        self._after_step(dt)

    def _part(self, ct: list[Any]) -> tuple[str, int]:
        """What a contact touches: a plate, the roof, a wall (by module) or a cube."""
        si = ct[15]
        if si >= 0:
            s = self.statics[si]
            return ({K_PLATE: "plate", K_ROOF: "roof", K_WALL: "wall"}[s[4]], int(s[5]))
        other = ct[1] if ct[1] is not None else ct[20]
        return ("cube", other.plate if other.plate >= 0 else other.room)

    def _outside(self, c: Cube) -> bool:
        """Off the tower: over the roof's edge, or fallen past the walls outside."""
        if c.y >= self.tw.y_top[N_LEVELS]:
            return abs(c.x) > self.tw.half_in[N_LEVELS - 1] + WALL_T + c.h \
                or c.y > self.tw.y_top[N_LEVELS] + 0.4
        r = self.room_of(c.y)
        return abs(c.x) > self.tw.half_in[r] + WALL_T or c.y < -0.01

    def _after_step(self, dt: float) -> None:
        t = self.t
        for c in list(self.awake):
            if self._outside(c):
                self.awake.remove(c)
                self.cubes.remove(c)
                c.awake = False
                c.plate = -1
                if self.on_out is not None:
                    self.on_out(c, "off")
                continue
            sp = abs(c.vx) + abs(c.vy) + abs(c.vz) + abs(c.w) * c.h * 1.4143
            room = self.room_of(c.y)
            if room != c.room:
                old = c.room
                c.room = room
                if self.on_room is not None:
                    self.on_room(c, old, room)
            if sp < V_QUIET:
                if c.quiet == 0.0:
                    c.rest_t = t - dt
                c.quiet += dt
            else:
                c.quiet = 0.0
            # A cube wedged in a jam may tremble in the solver without going anywhere: it
            # is at rest when it has stayed within 0.3 mm and 2 degrees for 0.3 s.
            ax, ay, aa, at = c.anchor
            if abs(c.x - ax) > 0.0003 or abs(c.y - ay) > 0.0003 or abs(c.a - aa) > 0.035:
                c.anchor = (c.x, c.y, c.a, t)
            elif t - at > 0.3:
                if c.quiet < T_SLEEP:
                    c.quiet = T_SLEEP
                    c.rest_t = at
                c.span[2] = True  # held where it is, whatever holds it
            if sp < V_DWELL:
                if c.slow_t == 0.0 or c.slow_room != room:
                    c.slow_t = t
                    c.slow_room = room
            else:
                if c.slow_t and t - c.slow_t >= T_DWELL:
                    c.track.setdefault("slow", []).append((c.slow_room, c.slow_t, t))
                c.slow_t = 0.0
        # a cube woken by a touch that never got going sleeps again sooner
        ready = [c for c in self.awake if c.support and (
            c.quiet >= T_SLEEP or (c.quiet >= T_RESLEEP and c.rest_t <= c.t_move + 1e-9))
            and (c.span[2] or c.span[0] - 1e-4 <= c.x <= c.span[1] + 1e-4)]
        if not ready:
            return
        ids = {c.id for c in ready}
        awake_ids = {c.id for c in self.awake}
        # a cube sleeps only when nothing awake it leans on still moves
        changed = True
        while changed:
            changed = False
            for c in list(ready):
                for key in c.support:
                    if key < 0 and (-1 - key) in awake_ids and (-1 - key) not in ids:
                        ready.remove(c)
                        ids.discard(c.id)
                        changed = True
                        break
        by_id = {c.id: c for c in self.cubes}
        for c in sorted(ready, key=lambda q: q.y):
            self.awake.remove(c)
            plate = self._support_plate(c, by_id, 0)
            if plate >= N_LEVELS:  # at rest on the roof: a hand picks it up
                self.cubes.remove(c)
                c.plate = -1
                if self.on_out is not None:
                    self.on_out(c, "roof")
                continue
            self.put_to_sleep(c, plate)

    def _support_plate(self, c: Cube, by_id: dict[int, Cube], depth: int) -> int:
        """The plate that carries ``c``'s weight: directly, or through the cubes under it."""
        share: dict[int, float] = {}
        for key, j in c.support.items():
            if key >= 0:
                plate = key if key < N_LEVELS else N_LEVELS
            else:
                o = by_id.get(-1 - key)
                if o is None:
                    continue
                plate = o.plate if (not o.awake and o.plate >= 0) else (
                    self._support_plate(o, by_id, depth + 1) if depth < 6 else -1)
            if plate >= 0:
                share[plate] = share.get(plate, 0.0) + j
        if not share:
            return min(max(self.room_of(c.y), 0), N_LEVELS)
        return max(share, key=lambda p: share[p])

    # running ---------------------------------------------------------------------------------

    def run_until(self, t_end: float) -> None:
        """Step the awake cubes until ``t_end`` (time jumps while everything sleeps)."""
        while self.t < t_end - 1e-9:
            if not self.awake:
                break
            dt = self.next_dt
            if self.t + dt > t_end - 1e-6:
                dt = max(t_end - self.t, 1e-6)  # the last step lands on t_end
            self.step(dt)
        if self.t < t_end:
            self.t = t_end


# -- players, the game, the session ----------------------------------------------------------

COLOURS = ("yellow", "blue", "brown", "gray", "black", "white")


@dataclass
class Style:
    """How one player throws: where the hand is, how hard, how well aimed."""

    height: float  # m above the roof where the cube leaves the fingers
    push: float  # m/s downward at release
    aim: float  # m, spread of where the cube crosses the roof plane
    lateral: float  # m/s, spread of its sideways speed
    spin: float  # rad/s, spread of its spin


def make_style(rng: np.random.Generator, scenario: str) -> Style:
    """A player's habits; quick series are thrown from lower, harder and less carefully."""
    quick = scenario == "rapid"
    return Style(
        height=float(rng.uniform(0.02, 0.10 if quick else 0.20)),
        push=float(rng.uniform(0.0, 1.0 if quick else 0.6)),
        aim=float(rng.uniform(0.0010, 0.0028 if quick else 0.0020)),
        lateral=float(rng.uniform(0.04, 0.16)),
        spin=float(rng.uniform(4.0, 18.0)),
    )


class Session:
    """One recording's world: the tower, the cubes in it, the people at the table.

    Scenario code calls :meth:`throw`, :meth:`lift`, :meth:`take`, :meth:`close`,
    :meth:`knock` with times; the physics runs between them. Everything that
    happened is collected for the sensors and the truth.
    """

    def __init__(self, seed: int, scenario: str, duration_s: float) -> None:
        self.seed, self.scenario, self.duration = seed, scenario, float(duration_s)
        self.tw = make_tower(seed)
        self.rng = np.random.default_rng([seed, 0xAB, 2, SCENARIOS.index(scenario)])
        self.w = World(self.tw)
        self.w.on_sleep = self._on_sleep
        self.w.on_wake = self._on_wake
        self.w.on_room = self._on_room
        self.w.on_out = self._on_out
        self.throws: list[dict[str, Any]] = []
        self.knocked: list[dict[str, Any]] = []
        self.shaken: list[dict[str, Any]] = []
        self.misses: list[dict[str, Any]] = []
        self.lifts: list[dict[str, Any]] = []
        self.closes: list[dict[str, Any]] = []
        self.removals: list[dict[str, Any]] = []
        self.knocks: list[dict[str, Any]] = []
        self.fell_out: list[dict[str, Any]] = []
        # for the sensors: finger presses (t0, t1, plate, newtons), structure hits
        # (t, level, N s, contact s, table?), load channels off (t_off, t_on, levels),
        # talk spans (t0, t1, loudness)
        self.hands: list[tuple[float, float, int, float]] = []
        self.thumps: list[tuple[float, int, float, float, bool]] = []
        self.off: list[tuple[float, float, tuple[int, ...]]] = []
        self.talk: list[tuple[float, float, float]] = []
        self.cube_throw: dict[int, dict[str, Any]] = {}
        self.owed: list[dict[str, Any]] = []  # missed throws to be thrown again
        self.open_level: int | None = None
        self.game: dict[str, Any] = {}
        self.pending_knocks: list[tuple[float, str, float, float]] = []

    # physics bookkeeping -------------------------------------------------------------------

    def advance(self, t: float) -> None:
        """Run the physics to ``t``; knocks scheduled before then happen on the way."""
        while self.pending_knocks and self.pending_knocks[0][0] <= t:
            tk, kind, strength, t_end = self.pending_knocks.pop(0)
            self.w.run_until(tk)
            self.knock(tk, kind, strength, t_end)
        self.w.run_until(t)

    def schedule_knock(self, t: float, kind: str, strength: float, t_end: float) -> None:
        """Something will hit the table at ``t``, whatever else goes on then."""
        self.pending_knocks.append((t, kind, strength, t_end))
        self.pending_knocks.sort()

    def _on_room(self, c: Cube, old: int, new: int) -> None:
        if new < old:
            passes = c.track.setdefault("passes", [])
            for plate in range(min(old, N_LEVELS - 1), new, -1):  # the entry is no plate
                passes.append((plate, self.w.t))

    def _on_wake(self, c: Cube, by: Cube | None) -> None:
        ev = by.event if by is not None else self._shake_event
        c.track["wake"] = (self.w.t, c.plate, ev, by.id if by is not None else -1)
        c.event = ev

    def _on_out(self, c: Cube, kind: str) -> None:
        rec = self.cube_throw.get(c.id)
        if rec is not None and rec["status"] == "flying":
            rec["status"] = "missed"
            rec["t_out"] = self.w.t
            self.misses.append({"t": rec["t_release"], "t_out": round(self.w.t, 4),
                                "kind": kind, "colour": rec["colour"], "by": rec["by"]})
            self.owed.append(rec)

    def _on_sleep(self, c: Cube) -> None:
        rec = self.cube_throw.get(c.id)
        wake = c.track.pop("wake", None)
        if wake is None:
            if rec is not None and rec["status"] == "flying":
                rec.update(status="landed", floor=c.plate, t=c.rest_t,
                           t_first_impact=c.track.get("first", c.rest_t),
                           first_contact=c.track.get("first_part", ("plate", c.plate)),
                           passes=list(c.track.get("passes", [])),
                           slow=list(c.track.get("slow", [])))
            return
        t_wake, from_plate, ev, waker = wake
        if c.plate == from_plate:
            return
        if rec is not None and ev == rec["id"]:
            # its own throw's knock-downs moved it on after a moment's rest: the throw's
            # landing is where it came to rest at last (the stop was a dwell)
            rec["dwell_then_moved"] = rec.get("dwell_then_moved", 0) + 1
            rec.update(floor=c.plate, t=c.rest_t, passes=list(c.track.get("passes", [])),
                       slow=list(c.track.get("slow", [])))
            return
        if isinstance(ev, int) and ev >= 0:
            self.knocked.append({"cube": c.id, "event": ev, "waker": waker,
                                 "t_first_impact": t_wake, "t": c.rest_t, "floor": c.plate,
                                 "knocked_from": from_plate, "colour": c.colour,
                                 "mass_g": c.m * 1000, "passes": list(
                                     p for p in c.track.get("passes", []) if p[1] >= t_wake)})
        else:
            self.shaken.append({"t": round(t_wake, 4), "t_rest": round(c.rest_t, 4),
                                "from": from_plate, "to": c.plate, "cause": ev,
                                "colour": c.colour})
            if ev == "lift" and self.open_level is not None and c.plate <= self.open_level:
                # out through the bottom of the lifted stack, onto the open floor
                self.fell_out.append({"t": round(t_wake, 4), "from": from_plate,
                                      "to": c.plate, "colour": c.colour})

    # throwing --------------------------------------------------------------------------------

    def throw(self, t_release: float, by: str, colour: str, kind: str, style: Style,
              rethrow_of: dict[str, Any] | None = None) -> dict[str, Any]:
        """A cube leaves the fingers at ``t_release`` above the entry hole."""
        rng, tw = self.rng, self.tw
        h = tw.cube_side / 2
        m = tw.cube_mass * (1 + rng.normal(0, 0.03))
        c = Cube(self.w.next_id, h, m)
        self.w.next_id += 1
        c.colour = colour
        height = float(np.clip(style.height * rng.lognormal(0, 0.3), 0.01, 0.35))
        push = abs(float(rng.normal(style.push, 0.15)))
        y_start = tw.y_top[N_LEVELS] + h * 1.4143 + 0.002
        drop = max(height - (y_start - tw.y_top[N_LEVELS]), 0.0)
        t_fall = (-push + math.sqrt(push * push + 2 * G * drop)) / G
        c.vy = -(push + G * t_fall)
        c.vx = float(rng.normal(0, style.lateral))
        c.vz = float(rng.normal(0, style.lateral))
        half = tw.hole_w[N_LEVELS] / 2
        c.x = tw.hole_c[N_LEVELS] + float(np.clip(rng.normal(0, style.aim), -half, half))
        c.z = float(np.clip(rng.normal(0, style.aim), -half + 0.0005, half - 0.0005))
        c.y = y_start
        c.a = float(rng.uniform(0, math.pi / 2))
        c.w = float(rng.normal(0, style.spin))
        rec: dict[str, Any] = {
            "id": len(self.throws), "t_release": float(t_release), "colour": colour, "by": by,
            "kind": kind, "status": "flying", "cube": c.id, "mass_g": m * 1000,
            "release_height_m": height, "speed_in_m_s": -c.vy}
        if rethrow_of is not None:
            rec["rethrow_after"] = round(rethrow_of["t_out"], 4)
        self.throws.append(rec)
        self.cube_throw[c.id] = rec
        self.advance(t_release + t_fall)
        c.event = rec["id"]
        self.w.add_cube(c)
        return rec

    def wait_rest(self, rec: dict[str, Any], limit_s: float = 4.0) -> float:
        """Run the physics until the throw has landed or missed; returns the time then."""
        t_end = min(self.w.t + limit_s, self.duration)
        while rec["status"] == "flying" and self.w.t < t_end - 1e-9:
            self.advance(min(self.w.t + 0.05, t_end))
        return rec.get("t", self.w.t) if rec["status"] == "landed" else self.w.t

    # shakes: lifts, closes, knocks -------------------------------------------------------

    _shake_event: Any = "shake"

    def _shake(self, cubes: list[Cube], cause: str, dvx: float, dvy: float,
               settle_s: float, gravity: tuple[float, float] | None = None) -> None:
        """Give resting cubes a jolt relative to the tower and let them settle."""
        self._shake_event = cause
        for c in cubes:
            if c.awake or c not in self.w.cubes:
                continue
            if gravity is not None:
                c.gx, c.gy = gravity
            self.w.wake(c, None)
            c.vx += dvx * (1 + 0.2 * self.rng.normal())
            c.vy += dvy * (1 + 0.2 * self.rng.normal())
        self.advance(self.w.t + settle_s)
        self._shake_event = "shake"

    def lift(self, t: float, exposed: int, by: str, kind: str) -> None:
        """Modules ``exposed``..7 come off together: level ``exposed`` lies open."""
        self.advance(t)
        rng = self.rng
        self.lifts.append({"t": round(t, 4), "exposed": exposed, "by": by, "kind": kind})
        self.open_level = exposed
        levels = tuple(range(exposed + 1, N_LEVELS))
        self.off.append((t + float(rng.uniform(0.005, 0.03)), math.inf, levels))
        # two hands grip the tower: soft knocks on the walls
        self.thumps.append((t - 0.08, exposed, float(rng.uniform(0.5, 2e0)) * 1e-3, 0.01,
                            False))
        # the stack is held a little askew while the floor is looked at: its cubes feel
        # gravity tilted by a few degrees; those resting at an edge may go
        stack = [c for c in self.w.cubes if not c.awake and c.plate > exposed]
        tilt = math.radians(float(np.clip(rng.normal(0, 4.0), -10, 10)))
        self._shake(stack, "lift", 0.0, 0.02, 0.35,
                    gravity=(G * math.sin(tilt), -G * math.cos(tilt)))
        # whatever the tilt set going settles before the stack is taken away
        while any(c.event == "lift" for c in self.w.awake) and self.w.t < t + 1.0:
            self.advance(self.w.t + 0.05)
        self.w.lifted_from = exposed + 1

    def take(self, t: float, n: int) -> list[str]:
        """A pinch takes up to ``n`` cubes off the open level (the topmost first)."""
        self.advance(t)
        lv = self.open_level
        assert lv is not None
        cubes = sorted(self.w.resting_on(lv), key=lambda c: -c.y)[:n]
        if not cubes:
            return []
        press = float(self.rng.uniform(0.02, 0.08))
        self.hands.append((t - float(self.rng.uniform(0.25, 0.5)), t, lv, press))
        for c in cubes:
            self.w.remove(c)
        colours = [c.colour for c in cubes]
        self.removals.append({"t": round(t, 4), "floor": lv, "cubes": len(cubes),
                              "colours": colours})
        return colours

    def close(self, t: float) -> None:
        """The stack is set back on the tower."""
        self.advance(t)
        rng = self.rng
        lv = self.open_level
        assert lv is not None
        self.w.lifted_from = 99
        t_on = t + float(rng.uniform(0.01, 0.06))  # spring contacts meet
        t_off, _, levels = self.off[-1]
        self.off[-1] = (t_off, t_on, levels)
        v_set = float(rng.uniform(0.04, 0.2))
        # the stack (about 30 g a module) lands on the tower: card on card, a few ms
        m_stack = 0.03 * (N_LEVELS - lv)
        self.thumps.append((t, lv, m_stack * v_set * float(rng.uniform(0.1, 0.25)), 0.005,
                            False))
        self.closes.append({"t": round(t, 4), "exposed": lv, "t_set_down": round(t, 4)})
        stack = [c for c in self.w.cubes if not c.awake and c.plate > lv]
        self._shake(stack, "close", 0.0, -v_set, 0.3, gravity=(0.0, -G))
        self.open_level = None

    def knock(self, t: float, kind: str, strength: float, t_end: float) -> None:
        """Something hits the table (or the tower): resting cubes get a jolt."""
        self.w.run_until(t)
        rng = self.rng
        self.knocks.append({"t": round(t, 4), "t_end": round(t_end, 4), "kind": kind})
        # impulse into the table at 10-40 cm; the tower's base takes a share
        self.thumps.append((t, 0, strength * 2e-3, float(rng.uniform(0.003, 0.012)), True))
        dv = strength * KNOCK_JOLT  # m/s of the tower's jolt relative to resting cubes
        # Cubes well inside what holds them do not move under a jolt this small (no
        # bounce below the restitution threshold, friction holds): only the ones near
        # an edge or leaning are simulated.
        cubes = [c for c in self.w.cubes if not c.awake and c.plate < self.w.lifted_from
                 and (c.margin < 0.0015 or dv > 0.06)]
        self._shake(cubes, "knock", dv * float(rng.normal()), dv * float(rng.normal()), 0.1)


# -- scenarios -------------------------------------------------------------------------------

LAST_THROW_S = 3.5  # no throw later than this before the end: every cube has come to rest


def _rethrow_owed(sess: Session, t: float, styles: dict[str, Style]) -> float:
    """Misses are picked up (off the table, off the roof) and thrown again."""
    while sess.owed and t < sess.duration - LAST_THROW_S:
        rec = sess.owed.pop(0)
        t = max(t, rec["t_out"] + float(sess.rng.uniform(1.2, 2.5)))
        if t >= sess.duration - LAST_THROW_S:
            break
        new = sess.throw(t, rec["by"], rec["colour"], rec["kind"], styles[rec["by"]], rec)
        t = sess.wait_rest(new) + float(sess.rng.uniform(1.5, 3.0))
    return t


def play_single(sess: Session) -> None:
    """Throws several seconds apart, each after the last came to rest."""
    rng = sess.rng
    players = list(rng.choice(COLOURS, size=int(rng.integers(1, 4)), replace=False))
    _throw_in_turn(sess, players, {p: make_style(rng, sess.scenario) for p in players}, "single")


def _throw_in_turn(sess: Session, players: list[str], styles: dict[str, Style], kind: str) -> None:
    """The players throw in turn, each 2-5 s after the last cube came to rest."""
    rng = sess.rng
    t = QUIET_S + float(rng.uniform(0.5, 2.0))
    i = 0
    while t < sess.duration - LAST_THROW_S:
        p = players[i % len(players)]
        rec = sess.throw(t, p, p, kind, styles[p])
        t = sess.wait_rest(rec) + float(rng.uniform(2.0, 5.0))
        t = _rethrow_owed(sess, t, styles)
        i += 1


def play_rapid(sess: Session) -> None:
    """Quick series: one player throws 3-6 cubes 0.3-0.8 s apart; now and then a
    neighbour throws at the same moment; a pause of 4-7.5 s between series."""
    rng = sess.rng
    players = list(rng.choice(COLOURS, size=int(rng.integers(2, 5)), replace=False))
    styles = {p: make_style(rng, "rapid") for p in players}
    t = QUIET_S + float(rng.uniform(0.5, 1.5))
    k = 0
    while t < sess.duration - LAST_THROW_S:
        p = players[k % len(players)]
        for _ in range(int(rng.integers(3, 7))):
            if t >= sess.duration - LAST_THROW_S:
                break
            sess.throw(t, p, p, "rapid", styles[p])
            if rng.random() < 0.1:
                q = players[(k + 1) % len(players)]
                t2 = t + float(rng.uniform(0.05, 0.3))
                if t2 < sess.duration - LAST_THROW_S:
                    sess.throw(t2, q, q, "rapid", styles[q])
            t += float(rng.uniform(0.3, 0.8))
        sess.advance(min(t, sess.duration))
        t += float(rng.uniform(4.0, 7.5))
        while sess.owed and t < sess.duration - LAST_THROW_S:
            rec = sess.owed.pop(0)
            sess.throw(t, rec["by"], rec["colour"], rec["kind"], styles[rec["by"]], rec)
            t += float(rng.uniform(0.4, 0.8))
        k += 1


def _talk(sess: Session, share: float, loud: tuple[float, float]) -> None:
    """Voices around the table: phrases of 0.8-4 s, pauses between."""
    rng = sess.rng
    t = QUIET_S + float(rng.uniform(0.2, 2.0))
    while t < sess.duration:
        d = float(rng.uniform(0.8, 4.0))
        if rng.random() < share:
            sess.talk.append((t, min(t + d, sess.duration), float(rng.uniform(*loud))))
        t += d + float(rng.uniform(0.2, 1.5))


def play_noisy(sess: Session) -> None:
    """A loud table: voices and laughter, fists and cups on the table, a louder hum,
    and throws every few seconds through it all."""
    rng = sess.rng
    _talk(sess, 0.75, (0.8, 3.5))
    knocks = []
    t = QUIET_S + float(rng.uniform(2.0, 6.0))
    while t < sess.duration - 1.0:
        kind = str(rng.choice(["fist", "cup", "slap", "elbow"], p=[0.35, 0.3, 0.2, 0.15]))
        strength = float({"fist": rng.uniform(0.6, 2.5), "cup": rng.uniform(0.2, 0.8),
                          "slap": rng.uniform(1.0, 3.0), "elbow": rng.uniform(0.5, 2.0)}[kind])
        knocks.append((t, kind, strength))
        t += float(rng.uniform(4.0, 12.0))
    for tk, kind, strength in knocks:
        sess.schedule_knock(tk, kind, strength, tk + float(rng.uniform(0.05, 0.25)))
    # throws every few seconds, whatever the table does meanwhile
    players = list(rng.choice(COLOURS, size=int(rng.integers(2, 5)), replace=False))
    _throw_in_turn(sess, players, {p: make_style(rng, "noisy") for p in players}, "noisy")


def play_game(sess: Session) -> None:
    """Mord im Arosa by the rulebook, as far as the recording lasts.

    Prologue: the victims, two clues each in turn. Act I: inspect a floor (lift,
    victims to the sheet and the caught players' supply clues with them, every clue
    on the floor taken out, close, the clues thrown back one after another, a
    penalty clue when no victim was there). Act II (after the second victim):
    suspect one or two players on a floor, or cover one's tracks; the same
    lifting, emptying and throwing back; penalties as the rules say.
    """
    rng = sess.rng
    n_players = int(rng.integers(3, 7))
    players = [str(p) for p in rng.choice(COLOURS, size=n_players, replace=False)]
    styles = {p: make_style(rng, "game") for p in players}
    supply = {p: 20 for p in players}
    sheet = {p: [0] * N_LEVELS for p in players}
    crime: list[int] = []
    heard: dict[str, list[int]] = {}  # what the table thinks it heard, per colour
    turns: list[dict[str, Any]] = []
    sess.game = {"players": players, "turns": turns, "sheet": sheet, "supply": supply,
                 "crime_scenes": crime}
    _talk(sess, 0.45, (0.5, 2.0))
    end = sess.duration

    def throw_one(t: float, by: str, colour: str, kind: str) -> float:
        rec = sess.throw(t, by, colour, kind, styles[by])
        t_rest = sess.wait_rest(rec)
        while rec["status"] == "missed" and sess.w.t < end - LAST_THROW_S:
            sess.owed.remove(rec)
            t2 = rec["t_out"] + float(rng.uniform(1.2, 2.5))
            if t2 >= end - LAST_THROW_S:
                break
            rec = sess.throw(t2, by, colour, kind, styles[by], rec)
            t_rest = sess.wait_rest(rec)
        if rec["status"] == "landed":
            # the listeners' guess: right most of the time, a floor off sometimes
            guess = rec["floor"] + int(rng.choice([0, 0, 0, -1, 1]))
            heard.setdefault(colour, []).append(int(np.clip(guess, 0, N_LEVELS - 1)))
        return t_rest + float(rng.uniform(1.8, 3.5))

    t = QUIET_S + float(rng.uniform(1.0, 3.0))
    knife = players[int(rng.integers(n_players))]
    for _ in range(2):
        if t >= end - LAST_THROW_S:
            return
        t = throw_one(t, knife, "red", "victim")
    for p in players:
        for _ in range(2):
            if t >= end - LAST_THROW_S:
                return
            supply[p] -= 1
            t = throw_one(t, p, p, "prologue")
    act = 1
    inv = int(rng.integers(n_players))
    while t < end - 14.0:
        p = players[inv]
        t += float(rng.uniform(2.0, 8.0))  # thinking, talking
        if act == 1:
            options = [f for f in heard.get("red", []) if f not in crime]
        else:
            options = [f for q in players if q != p for f in heard.get(q, [])]
        u = rng.random()
        if options and u < 0.45:
            floor = int(rng.choice(options))
        elif options and u < 0.75:
            floor = int(np.clip(int(rng.choice(options)) + int(rng.choice([-1, 1])), 0, 7))
        else:
            floor = int(rng.choice(np.arange(N_LEVELS), p=np.r_[0.05, np.full(7, 0.95 / 7)]))
        action = "inspect" if act == 1 else ("suspect" if rng.random() < 0.75 else "cover")
        suspects: list[str] = []
        if action == "suspect":
            others = [q for q in players if q != p]
            suspects = [str(q) for q in rng.choice(others, size=min(len(others), int(
                rng.integers(1, 3))), replace=False)]
        if t >= end - 12.0:
            break
        sess.lift(t, floor, p, action)
        t += float(rng.uniform(1.2, 2.5))
        on_floor = [c.colour for c in sess.w.resting_on(floor)]
        # the victims go to the sheet, everything else comes out in pinches
        taken: list[str] = []
        victims = 0
        while True:
            left = sess.w.resting_on(floor)
            if not left:
                break
            got = sess.take(t, int(rng.integers(1, 4)))
            if not got:
                break
            victims += got.count("red")
            taken += [c for c in got if c != "red"]
            t += float(rng.uniform(0.7, 1.6))
        penalties = 0
        if act == 1:
            if victims:
                crime.append(floor)
                for q in players:
                    if q != p:
                        n = min(on_floor.count(q), supply[q])
                        supply[q] -= n
                        sheet[q][floor] += n
            else:
                penalties = 1
        elif action == "suspect":
            own = on_floor.count(p)
            for q in suspects:
                n = on_floor.count(q)
                if floor == 0 and own == 0:
                    penalties += 1
                    continue
                if n == 0:
                    penalties += 1
                else:
                    n = min(n, supply[q])
                    supply[q] -= n
                    sheet[q][floor] += n
        else:
            own = on_floor.count(p)
            back = min(own, sheet[p][floor])
            sheet[p][floor] -= back
            supply[p] += back
            if own == 0:
                penalties = 1
        t += float(rng.uniform(0.8, 2.0))
        sess.close(t)
        turns.append({"by": p, "action": action, "floor": floor, "suspects": suspects,
                      "t_lift": sess.lifts[-1]["t"], "t_close": round(t, 4),
                      "victims": victims, "taken": taken, "penalties": penalties})
        if act == 1 and victims:
            found = sum(tu["victims"] for tu in turns)
            if found >= 2:
                act = 2
        t += float(rng.uniform(1.5, 3.0))
        for colour in taken:
            if t >= end - LAST_THROW_S:
                break
            t = throw_one(t, p, colour, "throw_back")
        for _ in range(penalties):
            if t >= end - LAST_THROW_S or supply[p] <= 0:
                break
            supply[p] -= 1
            t = throw_one(t, p, p, "penalty")
        if any(sum(v) >= 10 for v in sheet.values()) or any(v <= 0 for v in supply.values()):
            sess.game["over"] = round(t, 4)
            break
        inv = (inv + 1) % n_players
    sess.game["act"] = act


def simulate(seed: int, scenario: str, duration_s: float) -> Session:
    """Play one recording's session through the physics (no sensors yet)."""
    if scenario not in SCENARIOS:
        raise ValueError(f"unknown scenario {scenario!r}")
    sess = Session(seed, scenario, duration_s)
    if scenario == "single":
        play_single(sess)
    elif scenario == "rapid":
        play_rapid(sess)
    elif scenario == "noisy":
        play_noisy(sess)
    else:
        play_game(sess)
    sess.advance(sess.duration + 1.0)
    return sess


# -- sensors: load cells and HX711s -----------------------------------------------------------

BOOT_S = 0.3  # the device boots this long before its first PIEZO set (stream time 0)


def _contact_arrays(sess: Session) -> dict[str, np.ndarray]:
    """The world's contact records as arrays, with each static resolved to its part."""
    rec = sess.w.rec
    if not rec:
        z = np.zeros(0)
        return {"t": z, "plate": z.astype(int), "wall": z.astype(int), "roof": z.astype(bool),
                "jy": z, "jx": z, "x": z, "v": z, "dt": z}
    a = np.array(rec, dtype=float)
    si = a[:, 1].astype(int)
    st = sess.w.statics
    kind = np.array([s[4] for s in st])
    idx = np.array([s[5] for s in st])
    via = si < 0
    sis = np.where(via, 0, si)
    plate = np.where(via, -1 - si, np.where(kind[sis] == K_PLATE, idx[sis], -1))
    wall = np.where(~via & (kind[sis] == K_WALL), idx[sis], -1)
    roof = ~via & (kind[sis] == K_ROOF)
    return {"t": a[:, 0], "plate": plate, "wall": wall, "roof": roof, "jy": a[:, 2],
            "jx": a[:, 3], "x": a[:, 4], "v": a[:, 5], "dt": a[:, 6]}


def plate_forces(sess: Session, ca: dict[str, np.ndarray]) -> np.ndarray:
    """Force (N, downward) on each plate at every piezo set time: contacts, resting
    cubes, fingers, and the plate's own inertia when the table is hit."""
    n = int(round(sess.duration * FS))
    f = np.zeros((N_LEVELS, n + 2))
    sel = ca["plate"] >= 0
    bins = np.clip(((ca["t"][sel] + ca["dt"][sel] / 2) * FS).astype(int), 0, n + 1)
    np.add.at(f, (ca["plate"][sel], bins), ca["jy"][sel] * FS)
    steps = np.zeros((N_LEVELS, n + 2))
    for t, p, df in sess.w.weights:
        if 0 <= p < N_LEVELS:
            steps[p, min(max(int(math.ceil(t * FS)), 0), n + 1)] += df
    f += np.cumsum(steps, axis=1)
    tt = np.arange(n + 2) / FS
    for t0, t1, p, press in sess.hands:
        i0, i1 = max(int(t0 * FS), 0), min(int(t1 * FS) + 1, n + 2)
        if i1 > i0:
            ph = (tt[i0:i1] - t0) / max(t1 - t0, 1e-3)
            f[p, i0:i1] += press * np.sin(np.pi * np.clip(ph, 0, 1)) ** 2
    tw = sess.tw
    for t, lv, j, dur, table in sess.thumps:
        # the tower jolts and rings: each plate's own mass presses on its cell. A table
        # knock moves the tower with the table (the jolt its resting cubes get, see
        # Session.knock); a hand or a stack moves the 0.4 kg tower by its impulse.
        i0 = int(t * FS)
        if i0 >= n or i0 < 0:
            continue
        k = np.arange(min(int(0.12 * FS), n + 2 - i0))
        f_hz = 28.0 if table else 55.0
        dv = j / 2e-3 * KNOCK_JOLT if table else j / 0.4
        acc = dv / dur * np.exp(-k / FS / 0.025) * np.sin(2 * np.pi * f_hz * k / FS)
        for p in range(N_LEVELS):
            share = 1.0 if table else 0.7 ** abs(p - lv)
            f[p, i0:i0 + len(k)] += share * tw.plate_g[p] * 1e-3 * acc
    return f[:, :n]


def cell_outputs(sess: Session, force: np.ndarray) -> np.ndarray:
    """The force through each bar cell: the plate rides on the cell as a mass-spring."""
    tw = sess.tw
    out = np.empty_like(force)
    for p in range(N_LEVELS):
        w0 = 2 * np.pi * tw.cell_f0[p]
        b, a = signal.bilinear([w0 * w0], [1.0, 2 * tw.cell_zeta[p] * w0, w0 * w0], fs=FS)
        out[p] = signal.lfilter(b, a, force[p])
    return out


def _power_spans(sess: Session, ch: int) -> list[tuple[float, float]]:
    """When chip ``ch`` has power (its module seated on the tower)."""
    spans = [(-BOOT_S, math.inf)]
    for t_off, t_on, levels in sess.off:
        if ch not in levels:
            continue
        new = []
        for a, b in spans:
            if t_off <= a or t_off >= b:
                new.append((a, b))
            else:
                new.append((a, t_off))
                if t_on < b:
                    new.append((t_on, b))
        spans = new
    return spans


def hx711_reads(sess: Session, cell: np.ndarray) -> tuple[list[tuple[float, int, list[int]]],
                                                           int, list[float]]:
    """The firmware's LOAD readings: (t, valid bits, counts) and the timeouts.

    Each HX711 converts on its own oscillator (80 SPS nominal, a few % off). A
    conversion is a sinc-like average over the last four conversion periods (weights
    1:3:3:1 of one-period means: a step settles in four conversions, the
    datasheet's 50 ms at 80 SPS); after power-up the filter starts empty. The
    firmware clocks all chips out together on the shared SCK when every powered chip
    has a fresh conversion, or after 1.6 nominal periods (a timeout; the late chip is
    left out of that reading).
    """
    tw, rng = sess.tw, np.random.default_rng([sess.seed, 0xAB, 3,
                                              SCENARIOS.index(sess.scenario)])
    n = cell.shape[1]
    grid = np.arange(n + 1) / FS
    integ = np.concatenate([np.zeros((N_LEVELS, 1)), np.cumsum(cell, axis=1) / FS], axis=1)
    convs: list[np.ndarray] = []
    values: list[np.ndarray] = []
    end = sess.duration
    for ch in range(N_LEVELS):
        period = 1.0 / tw.chip_rate_hz[ch]
        t_list, v_list = [], []
        for a, b in _power_spans(sess, ch):
            start = a + (tw.chip_phase[ch] * period if a <= -BOOT_S else float(
                rng.uniform(0.01, 0.03)))
            k = np.arange(1, int(max(min(b, end) - start, 0) / period) + 1)
            tk = start + k * period
            tk = tk[(tk < b) & (tk < end)]
            if not len(tk):
                continue
            acc = np.zeros(len(tk))
            for j, wj in enumerate((1, 3, 3, 1)):
                hi = tk - j * period
                lo = hi - period
                ok = lo >= start - 1e-9
                m = (np.interp(np.clip(hi, 0, end), grid, integ[ch])
                     - np.interp(np.clip(lo, 0, end), grid, integ[ch])) / period
                # before stream time 0 the tower is empty and still
                acc += np.where(ok, wj / 8 * m, 0.0)
            t_list.append(tk)
            v_list.append(acc)
        tk = np.concatenate(t_list) if t_list else np.zeros(0)
        acc = np.concatenate(v_list) if v_list else np.zeros(0)
        grams = acc / G * 1000
        drift_g = tw.drift_mg_per_min[ch] * 1e-3 * tk / 60 + np.cumsum(
            rng.normal(0, 0.4e-3 * math.sqrt(period), len(tk)))
        counts = tw.offset[ch] + tw.cpg[ch] * (grams + drift_g) + rng.normal(
            0, tw.load_noise[ch], len(tk))
        convs.append(tk)
        values.append(np.clip(np.round(counts), -(2 ** 23), 2 ** 23 - 1).astype(np.int64))
    # the firmware's reads
    timeout = 1.6 / LOAD_RATE_NOMINAL
    reads: list[tuple[float, int, list[int]]] = []
    timeouts = 0
    t_prev = 0.0
    t_timeouts: list[float] = []
    spans = [_power_spans(sess, ch) for ch in range(N_LEVELS)]
    conv_t = [c.tolist() for c in convs]
    conv_v = [v.tolist() for v in values]
    ptr = [0] * N_LEVELS  # first conversion after the previous read, per chip

    def powered(ch: int, t: float) -> bool:
        return any(a <= t < b for a, b in spans[ch])

    while True:
        nxt = []
        for ch in range(N_LEVELS):
            tk = conv_t[ch]
            i = ptr[ch]
            while i < len(tk) and tk[i] <= t_prev:
                i += 1
            ptr[ch] = i
            if i < len(tk) and powered(ch, t_prev + 1e-4):
                nxt.append((ch, tk[i]))
        if not nxt:
            break
        t_all = max(tt for _, tt in nxt)
        if t_all > t_prev + timeout:
            timeouts += 1
            t_timeouts.append(t_prev + timeout)
            t_read = t_prev + timeout
        else:
            t_read = t_all
        t_read = max(t_read, t_prev + 2e-4)
        if t_read >= end:
            break
        valid = 0
        vals = [0] * N_LEVELS
        for ch, tt in nxt:
            if tt <= t_read and powered(ch, t_read):
                tk = conv_t[ch]
                i = ptr[ch]
                while i + 1 < len(tk) and tk[i + 1] <= t_read:
                    i += 1  # a fast chip's older conversion was overwritten
                valid |= 1 << ch
                vals[ch] = int(conv_v[ch][i])
        if valid:
            reads.append((t_read, valid, vals))
        t_prev = t_read
    return reads, timeouts, t_timeouts


# -- sensors: piezo discs on the ATmega's ADC ---------------------------------------------------

MODE_AMP = (1.0, 0.7, 0.5)  # strain per unit modal drive, by mode, at an antinode


def _mode_shapes(xi: np.ndarray) -> np.ndarray:
    """Bending mode shapes across a plate (xi = -1..1 from wall to wall): (len, 3)."""
    xi = np.clip(xi, -1, 1)
    return np.stack([np.cos(np.pi * xi / 2), np.sin(np.pi * xi), np.cos(1.5 * np.pi * xi)],
                    axis=-1)


def _pulses(t: np.ndarray, width: np.ndarray, amp: np.ndarray, half_sine: np.ndarray,
            n_fine: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Spread impulses over the fine grid: half-sines of ``width`` s (impacts) or flat
    steps (steady contact). Returns fine-grid indices, weights (summing to ``amp`` per
    impulse) and the impulse each sample belongs to."""
    if not len(t):
        return np.zeros(0, int), np.zeros(0), np.zeros(0, int)
    nmax = int(np.ceil(width.max() * FS_FINE)) + 2
    i0 = np.floor(t * FS_FINE).astype(int)
    k = np.arange(nmax)
    ti = (i0[:, None] + k[None, :] + 0.5) / FS_FINE
    ph = (ti - t[:, None]) / width[:, None]
    inside = (ph >= 0) & (ph <= 1)
    wgt = np.where(half_sine[:, None], np.sin(np.pi * np.clip(ph, 0, 1)), 1.0) * inside
    norm = wgt.sum(axis=1)
    empty = norm <= 0
    wgt[empty, 0] = 1.0
    norm[empty] = 1.0
    wgt = wgt / norm[:, None] * amp[:, None]
    idx = i0[:, None] + k[None, :]
    ok = (idx >= 0) & (idx < n_fine) & (wgt != 0)
    owner = np.broadcast_to(np.arange(len(t))[:, None], idx.shape)
    return idx[ok], wgt[ok], owner[ok]


def piezo_codes(sess: Session, ca: dict[str, np.ndarray]) -> np.ndarray:
    """The ADC codes of the eight discs at every sample set: (N, 8) uint16."""
    tw = sess.tw
    rng = np.random.default_rng([sess.seed, 0xAB, 4, SCENARIOS.index(sess.scenario)])
    n = int(round(sess.duration * FS))
    nf = n * FINE
    # every excitation: (t, plate, impulse, x across the plate or NaN for the structure,
    # contact time, half-sine?)
    t = ca["t"]
    is_imp = ca["v"] > 0
    tau = tw.contact_ms * 1e-3 * np.power(np.maximum(ca["v"], 0.05), -0.2)
    width = np.where(is_imp, np.clip(tau, 2e-4, 1.5e-3), np.maximum(ca["dt"], 1 / FS_FINE))
    # bending drive: the vertical impulse, and a fifth of the sideways one (an edge hit)
    j = ca["jy"] + 0.2 * ca["jx"]
    ev_t, ev_p, ev_j, ev_x, ev_w, ev_h = [], [], [], [], [], []
    sel = ca["plate"] >= 0
    ev_t.append(t[sel])
    ev_p.append(ca["plate"][sel])
    ev_j.append(j[sel])
    ev_x.append(ca["x"][sel])
    ev_w.append(width[sel])
    ev_h.append(is_imp[sel])
    # the walls and the roof shake the plates they stand on or carry
    for part, share, plates in (("wall", 0.35, (0, 1)), ("roof", 0.45, (None,))):
        sel = ca[part] >= 0 if part == "wall" else ca["roof"]
        if not sel.any():
            continue
        jj = np.hypot(ca["jx"][sel], ca["jy"][sel]) * share
        for off in plates:
            pp = (ca["wall"][sel] + off) if off is not None else np.full(sel.sum(), 7)
            keep = (pp >= 0) & (pp < N_LEVELS)
            ev_t.append(t[sel][keep])
            ev_p.append(pp[keep])
            ev_j.append(jj[keep])
            ev_x.append(np.full(keep.sum(), np.nan))
            ev_w.append(width[sel][keep])
            ev_h.append(is_imp[sel][keep])
    for tk, lv, jk, dur, table in sess.thumps:
        # hands and stacks on the walls, table knocks through the base
        for p in range(N_LEVELS):
            share = (0.55 ** p if table else 0.4 * 0.6 ** abs(p - lv))
            if share < 0.01:
                continue
            ev_t.append(np.array([tk + abs(p - (0 if table else lv)) * 1.2e-4]))
            ev_p.append(np.array([p]))
            ev_j.append(np.array([jk * share]))
            ev_x.append(np.array([np.nan]))
            ev_w.append(np.array([dur]))
            ev_h.append(np.array([True]))
    for t0, _t1, p, press in sess.hands:
        # a fingertip on the open floor: a soft, long touch
        ev_t.append(np.array([t0]))
        ev_p.append(np.array([p]))
        ev_j.append(np.array([press * 0.01]))
        ev_x.append(np.array([0.0]))
        ev_w.append(np.array([0.012]))
        ev_h.append(np.array([True]))
    et = np.concatenate(ev_t)
    ep = np.concatenate(ev_p).astype(int)
    ej = np.concatenate(ev_j)
    ex = np.concatenate(ev_x)
    ew = np.concatenate(ev_w)
    eh = np.concatenate(ev_h)
    inside = (et >= 0) & (et < sess.duration)
    et, ep, ej, ex, ew, eh = et[inside], ep[inside], ej[inside], ex[inside], ew[inside], eh[inside]
    out = np.zeros((n, N_LEVELS))
    for p in range(N_LEVELS):
        sel = ep == p
        if not sel.any():
            continue
        half = tw.half_in[p]
        xi = np.where(np.isnan(ex[sel]), np.nan, ex[sel] / half)
        shapes = _mode_shapes(np.nan_to_num(xi))
        shapes[np.isnan(xi)] = 0.5  # the structure drives every mode alike
        disc = _mode_shapes(np.array([tw.disc_x[p]]))[0]
        imp = eh[sel]
        idx, wts, ev_of = _pulses(et[sel][imp], ew[sel][imp], ej[sel][imp],
                                  np.ones(imp.sum(), bool), nf)
        # steady contact: each step's impulse spread evenly over the step (as a running sum)
        st_i0 = np.clip(np.round(et[sel][~imp] * FS_FINE).astype(int), 0, nf)
        st_i1 = np.clip(np.round((et[sel][~imp] + ew[sel][~imp]) * FS_FINE).astype(int), 0,
                        nf)
        st_i1 = np.maximum(st_i1, np.minimum(st_i0 + 1, nf))
        st_rate = ej[sel][~imp] / np.maximum(st_i1 - st_i0, 1)
        shp_imp, shp_st = shapes[imp], shapes[~imp]
        v = np.zeros(nf)
        for m in range(3):
            drive = np.bincount(idx, weights=wts * shp_imp[ev_of, m], minlength=nf)[:nf]
            ramp = np.bincount(st_i0, weights=st_rate * shp_st[:, m], minlength=nf + 1) \
                - np.bincount(st_i1, weights=st_rate * shp_st[:, m], minlength=nf + 1)
            drive += np.cumsum(ramp)[:nf]
            f0 = tw.mode_f[p, m]
            q = tw.mode_q[p, m]
            r = math.exp(-math.pi * f0 / q / FS_FINE)
            th = 2 * math.pi * f0 / FS_FINE
            y = signal.lfilter([math.sin(th)], [1.0, -2 * r * math.cos(th), r * r], drive)
            v += MODE_AMP[m] * disc[m] * y
        v *= tw.disc_gain[p]
        # the own disc, then through the walls to the neighbours: weaker, duller (a
        # binomial low-pass per level, -3 dB near 2.4 kHz) and 0.125 ms later per level
        vpad = np.concatenate([np.zeros(64), v, np.zeros(64)])
        for d in range(4):
            kern = np.array([1.0])
            for _ in range(d):
                kern = np.convolve(kern, [1 / 16, 4 / 16, 6 / 16, 4 / 16, 1 / 16])
            gain = tw.crosstalk[p] ** d
            half_k = len(kern) // 2
            for c in {p - d, p + d}:
                if not 0 <= c < N_LEVELS:
                    continue
                acc = np.zeros(n)
                base = 64 + c - 2 * d - half_k
                for k, wk in enumerate(kern):
                    acc += wk * vpad[base + k:base + k + n * FINE:FINE][:n]
                out[:, c] += gain * acc
    # table knocks also arrive through the base as low rumble
    tt = np.arange(n) / FS
    for tk, _lv, jk, _dur, table in sess.thumps:
        if not table:
            continue
        i0 = int(tk * FS)
        if not 0 <= i0 < n:
            continue
        steps = np.arange(min(int(0.25 * FS), n - i0))
        f_t = float(rng.uniform(70, 300))
        wave = np.exp(-steps / FS / 0.04) * np.sin(2 * np.pi * f_t * steps / FS)
        for c in range(N_LEVELS):
            out[i0:i0 + len(steps), c] += jk * 2.0e4 * 0.75 ** c * wave
    # AC coupling of each disc into its bias divider
    for c in range(N_LEVELS):
        b, a = signal.butter(1, tw.ac_hz[c], btype="high", fs=FS)
        out[:, c] = signal.lfilter(b, a, out[:, c])
    # A lifted module's disc leaves its input: the ADC reads the bare bias divider (no
    # signal, far more hum without the disc's capacitance), with a jump as the contacts
    # open and close that the coupling capacitor lets decay.
    hum_gain = np.full((n, N_LEVELS), 2.5 if sess.scenario == "noisy" else 1.0)
    for t_off, t_on, levels in sess.off:
        i0 = max(int(t_off * FS), 0)
        i1 = min(int(t_on * FS), n) if math.isfinite(t_on) else n
        for c in levels:
            out[i0:i1, c] = 0.0
            hum_gain[i0:i1, c] *= float(rng.uniform(8.0, 25.0))
            tau = FS / (2 * np.pi * tw.ac_hz[c])
            for i, jump in ((i0, rng.normal(0, 25)), (i1, rng.normal(0, 25))):
                if i < n:
                    out[i:, c] += jump * np.exp(-np.arange(n - i) / tau)
    ph = rng.uniform(0, 2 * np.pi, N_LEVELS)
    for c in range(N_LEVELS):
        tc = tt + c / FS_FINE
        out[:, c] += hum_gain[:, c] * tw.hum[c] * (np.sin(2 * np.pi * tw.hum_hz * tc + ph[c])
                                                    + 0.3 * np.sin(6 * np.pi * tw.hum_hz * tc))
    if sess.talk:
        voice = signal.lfilter(*signal.butter(2, [150, 900], btype="band", fs=FS),
                               rng.normal(0, 1, n))
        voice /= voice.std() + 1e-12
        env = np.zeros(n)
        for t0, t1, loud in sess.talk:
            i0, i1 = int(t0 * FS), min(int(t1 * FS), n)
            if i1 <= i0:
                continue
            syl = 0.5 + 0.5 * np.sin(2 * np.pi * float(rng.uniform(3, 6)) * tt[i0:i1]
                                     + float(rng.uniform(0, 6.3)))
            env[i0:i1] += loud * syl * np.hanning(i1 - i0) ** 0.2
        pick = rng.uniform(0.6, 1.4, N_LEVELS)
        out += (voice * env)[:, None] * pick[None, :]
    out += rng.normal(0, 1, (n, N_LEVELS)) * tw.piezo_noise[None, :]
    codes = np.round(out + tw.piezo_bias[None, :])
    return np.clip(codes, 0, 1023).astype(np.uint16)


# -- the byte stream -------------------------------------------------------------------------

FW_VERSION = (1, 2, 0)


def build_stream(sess: Session, codes: np.ndarray, reads: list[tuple[float, int, list[int]]],
                 t_timeouts: list[float]) -> bytes:
    """HELLO at boot, then PIEZO, LOAD and STATUS in the order the UART sent them."""
    tw = sess.tw
    rng = np.random.default_rng([sess.seed, 0xAB, 5, SCENARIOS.index(sess.scenario)])
    t0_us = int(BOOT_S * 1e6)  # the device clock at stream time 0 (its first PIEZO set)
    msgs: list[tuple[float, int, bytes]] = []
    hello = bytes([1, *FW_VERSION, N_LEVELS, N_LEVELS]) + FS.to_bytes(2, "little") \
        + LOAD_RATE_NOMINAL.to_bytes(2, "little") + bytes([10]) + tw.device_id
    msgs.append((-BOOT_S + 0.004, T_HELLO, hello))
    per = tw.sets_per_msg
    n = codes.shape[0] // per * per
    for k in range(0, n, per):
        body = (t0_us + k * 500).to_bytes(4, "little") + bytes([per]) \
            + codes[k:k + per].astype("<u2").tobytes()
        msgs.append(((k + per) / FS + 5e-5, T_PIEZO, body))
    for t_read, valid, vals in reads:
        row = bytearray((t0_us + int(round(t_read * 1e6))).to_bytes(4, "little"))
        row.append(valid)
        for ch in range(N_LEVELS):
            v = vals[ch] if valid >> ch & 1 else 0
            row += (v & 0xFFFFFF).to_bytes(3, "little")
        msgs.append((t_read + 1.5e-4, T_LOAD, bytes(row)))
    t_to = np.array(t_timeouts)
    cpu = 40.0
    for k in range(1, int(sess.duration + BOOT_S) + 1):
        t = k - BOOT_S
        if t <= 0 or t >= sess.duration:
            continue
        cpu = float(np.clip(cpu + rng.normal(0, 0.7), 34, 48))
        timeouts = int(np.sum(t_to <= t))
        body = (k * 1000).to_bytes(4, "little") + (0).to_bytes(2, "little") \
            + (0).to_bytes(2, "little") + (timeouts & 0xFFFF).to_bytes(2, "little") \
            + bytes([int(round(cpu)), 0])
        msgs.append((t + 3e-5, T_STATUS, body))
    msgs.sort(key=lambda m: m[0])
    out = bytearray()
    for seq, (_t, typ, body) in enumerate(msgs):
        out += frame(typ, seq, body)
    return bytes(out)


# -- the truth ---------------------------------------------------------------------------------


def _r(x: float) -> float:
    return round(float(x), 4)


def build_truth(sess: Session, t_timeouts: list[float]) -> dict[str, Any]:
    """What happened, in score.py's terms, plus everything the physics produced."""
    tw, dur = sess.tw, sess.duration

    def ok(t: float, t_first: float) -> bool:
        return QUIET_S <= t_first <= t < dur

    landed = [r for r in sess.throws if r["status"] == "landed" and ok(r["t"],
                                                                         r["t_first_impact"])]
    by_event = {r["id"]: r for r in landed}
    knocked = [k for k in sess.knocked if k["event"] in by_event and ok(k["t"],
                                                                         k["t_first_impact"])]
    landings: list[dict[str, Any]] = []
    land_of_throw: dict[int, dict[str, Any]] = {}
    for r in landed:
        passes = sorted({p for p, _ in r["passes"]}, reverse=True)
        slow = r.get("slow", [])
        pass_t = {p: tt for p, tt in r["passes"]}
        dwells = [{"floor": int(room), "t": _r(a), "s": _r(b - a),
                   "then_passed": bool(room in pass_t and pass_t[room] > a)}
                  for room, a, b in slow if 0 <= room < N_LEVELS]
        x = {"t_release": _r(r["t_release"]), "t_first_impact": _r(r["t_first_impact"]),
             "t": _r(r["t"]), "floor": int(r["floor"]), "cubes": 1, "knocked": False,
             "colour": r["colour"], "by": r["by"], "kind": r["kind"],
             "mass_g": round(r["mass_g"], 4), "load_g": round(r["mass_g"], 4),
             "passed": passes, "dwells": dwells,
             "first_contact": {"part": r["first_contact"][0],
                               "level": int(r["first_contact"][1])},
             "release_height_m": round(r["release_height_m"], 4),
             "speed_in_m_s": round(r["speed_in_m_s"], 3)}
        if "rethrow_after" in r:
            x["rethrow_after"] = r["rethrow_after"]
        if r.get("dwell_then_moved"):
            x["rested_then_moved_on"] = r["dwell_then_moved"]
        landings.append(x)
        land_of_throw[r["id"]] = x
    # knocked cubes: each is a landing of its own, caused by the throw's cube or by a
    # cube that one knocked down (a chain); every cause is named once
    cube_land: dict[tuple[int, int], dict[str, Any]] = {}
    for r in landed:
        cube_land[(r["id"], r["cube"])] = land_of_throw[r["id"]]
    knockdowns: list[dict[str, Any]] = []
    for k in sorted(knocked, key=lambda k: k["t_first_impact"]):
        x = {"t_release": land_of_throw[k["event"]]["t_release"],
             "t_first_impact": _r(k["t_first_impact"]), "t": _r(k["t"]),
             "floor": int(k["floor"]), "cubes": 1, "knocked": True,
             "knocked_from": int(k["knocked_from"]), "colour": k["colour"], "by": None,
             "kind": "knocked", "mass_g": round(k["mass_g"], 4),
             "load_g": round(k["mass_g"], 4),
             "passed": sorted({p for p, _ in k["passes"]}, reverse=True)}
        cause = cube_land.get((k["event"], k["waker"]))
        if cause is None or cause.get("caused_knockdown"):
            # the cube that touched it has no landing of its own in this throw (it was
            # only jostled), or is named already: the nearest free landing of the throw
            free = [v for (ev, _c), v in cube_land.items()
                    if ev == k["event"] and not v.get("caused_knockdown")]
            cause = free[0] if free else land_of_throw[k["event"]]
        cause["caused_knockdown"] = True
        thrown = land_of_throw[k["event"]]
        knockdowns.append({"t": x["t_first_impact"], "t_rest": x["t"],
                           "floor_from": x["knocked_from"], "floor_to": x["floor"],
                           "throw_t_release": thrown["t_release"],
                           "throw_floor": thrown["floor"],
                           "thrown_stayed": thrown["floor"] == x["knocked_from"],
                           "direct": cause is thrown})
        cube_land[(k["event"], k["cube"])] = x  # it may knock another one down in turn
        landings.append(x)
    landings.sort(key=lambda x: x["t"])
    # the physics in numbers
    floors = np.bincount([x["floor"] for x in landings if not x["knocked"]],
                         minlength=N_LEVELS)
    dwell_pass = sum(d["then_passed"] for x in landings for d in x.get("dwells", []))
    physics = {
        "throws": len(sess.throws), "landed": len(landed), "missed": len(sess.misses),
        "stops_per_floor": floors.tolist(),
        "plates_passed_per_throw": _r(float(np.mean([len(x["passed"]) for x in landings
                                                     if not x["knocked"]])) if landed else 0.0),
        "passes_per_plate": np.bincount([p for x in landings if not x["knocked"]
                                         for p in x["passed"]], minlength=N_LEVELS).tolist(),
        "dwells_per_plate": np.bincount([d["floor"] for x in landings
                                         for d in x.get("dwells", [])],
                                        minlength=N_LEVELS).tolist(),
        "knockdowns": len(knockdowns),
        "knockdowns_thrown_stayed": sum(k["thrown_stayed"] for k in knockdowns),
        "dwells_then_passed": int(dwell_pass),
        "rested_then_moved_on": sum(x.get("rested_then_moved_on", 0) for x in landings),
        "settle_s_median": _r(np.median([x["t"] - x["t_first_impact"] for x in landings
                                         if not x["knocked"]]) if landed else 0.0),
        "shaken_falls": len(sess.shaken), "fell_out_of_lifted_stack": len(sess.fell_out),
        "solver_steps": sess.w.steps,
    }
    tower = {
        "geometry_m": {"module_height": MODULE_H, "plate_thickness": PLATE_T,
                       "inner_half_width": [round(v, 5) for v in tw.half_in],
                       "hole_centre": [None] + [round(v, 5) for v in tw.hole_c[1:]],
                       "hole_side": [None] + [round(v, 5) for v in tw.hole_w[1:]]},
        "cube_side_m": tw.cube_side, "cube_density_kg_m3": round(tw.cube_density, 1),
        "restitution": {"plate": round(tw.e_plate, 3), "cube": round(tw.e_cube, 3),
                        "wall": round(tw.e_wall, 3)},
        "friction": {"plate": round(tw.mu_plate, 3), "cube": round(tw.mu_cube, 3)},
        "counts_per_gram": [round(v, 2) for v in tw.cpg],
        "offset_counts": [int(v) for v in tw.offset],
        "cell_f0_hz": [round(v, 1) for v in tw.cell_f0],
        "chip_rate_hz": [round(v, 3) for v in tw.chip_rate_hz],
        "mode_hz": np.round(tw.mode_f, 1).tolist(),
        "crosstalk": [round(v, 3) for v in tw.crosstalk],
        "ac_hz": [round(v, 2) for v in tw.ac_hz],
        "piezo_bias": [round(v, 2) for v in tw.piezo_bias],
        "hum_hz": tw.hum_hz, "sets_per_msg": tw.sets_per_msg,
        "load_timeouts": len(t_timeouts),
    }
    truth: dict[str, Any] = {
        "format": "towerear-crosscheck-truth/1", "model": MODEL, "scenario": sess.scenario,
        "seed": sess.seed, "duration_s": dur, "cells": tw.cells, "quiet_s": QUIET_S,
        "landings": landings, "knockdowns": knockdowns,
        "removals": [r for r in sess.removals if QUIET_S <= r["t"] < dur],
        "lifts": sess.lifts, "closes": sess.closes,
        "knocks": [k for k in sess.knocks if QUIET_S <= k["t"] < dur],
        "damage": [], "misses": sess.misses, "shaken_falls": sess.shaken,
        "fell_out": sess.fell_out, "physics": physics, "tower": tower,
    }
    if sess.game:
        truth["game"] = sess.game
    return truth


# -- one recording -------------------------------------------------------------------------------


def render(sess: Session) -> tuple[bytes, dict[str, Any]]:
    """The sensors' view of a simulated session: the device's bytes and the truth."""
    ca = _contact_arrays(sess)
    force = plate_forces(sess, ca)
    cell = cell_outputs(sess, force)
    reads, _timeouts, t_timeouts = hx711_reads(sess, cell)
    codes = piezo_codes(sess, ca)
    raw = build_stream(sess, codes, reads, t_timeouts)
    truth = build_truth(sess, t_timeouts)
    return raw, truth


def generate(seed: int, scenario: str, duration_s: float) -> tuple[bytes, dict[str, Any]]:
    """One recording: the bytes exactly as the device sends them, and its truth."""
    return render(simulate(seed, scenario, duration_s))


def make_recording(seed: int, scenario: str, duration_s: float, out: Path) -> tuple[Path, Path]:
    """Write ``out/{scenario}_t{seed}.bin`` and its ``.truth.json``."""
    raw, truth = generate(seed, scenario, duration_s)
    out.mkdir(parents=True, exist_ok=True)
    bin_path = out / f"{scenario}_t{seed}.bin"
    truth_path = out / f"{scenario}_t{seed}.truth.json"
    bin_path.write_bytes(raw)
    truth_path.write_text(json.dumps(truth, indent=1, default=_json_default))
    return bin_path, truth_path


def _json_default(o: Any) -> Any:
    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, np.floating):
        return float(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    raise TypeError(type(o))


def _job(args: tuple[int, str, float, str]) -> str:
    seed, scenario, duration, out = args
    make_recording(seed, scenario, duration, Path(out))
    return f"{scenario}_t{seed}"


def main(argv: list[str] | None = None) -> int:
    """Command line (see the module docstring)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--towers", type=int, default=8)
    p.add_argument("--first-seed", type=int, default=1)
    p.add_argument("--duration", type=float, default=120.0)
    p.add_argument("--scenarios", nargs="+", default=list(SCENARIOS))
    p.add_argument("--workers", type=int, default=1)
    args = p.parse_args(argv)
    bad = [s for s in args.scenarios if s not in SCENARIOS]
    if bad:
        print(f"unknown scenario {bad[0]!r} (known: {', '.join(SCENARIOS)})", file=sys.stderr)
        return 2
    if args.duration < QUIET_S + 6:
        print(f"--duration must be at least {QUIET_S + 6:g} s", file=sys.stderr)
        return 2
    jobs = [(seed, sc, float(args.duration), str(args.out))
            for seed in range(args.first_seed, args.first_seed + args.towers)
            for sc in args.scenarios]
    args.out.mkdir(parents=True, exist_ok=True)
    if args.workers <= 1:
        for job in jobs:
            _job(job)
    else:
        with ProcessPoolExecutor(args.workers) as pool:
            list(pool.map(_job, jobs))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
