#!/usr/bin/env python3
"""Blind cross-check model AA: a real game night's mistakes and table-top chaos.

A competent towerear kit (eight cardboard plates on bar load cells read by
HX711s on their own clocks, eight piezo discs on a multiplexed 10-bit ADC)
played the way a real table plays Mord im Arosa: cubes that miss the entrance,
clip the roof or land on the table, the wrong modules lifted and put straight
back, a stack set down askew and pushed home, throw-backs released while the
closing hand is still on the tower, a clue slipping from the fingers back onto
the open floor, two players throwing at once, clues slapped onto the
investigation sheet beside the tower, a fist on the table ("Aha!"), a spilled
glass, a wiped table and the tower carried aside, long discussions, a peeking
player, a child and a cat. Every such mishap is labelled in the truth file
(key ``mishaps``); landings, removals, lifts, closes and knocks are exactly
what ``tools/crosscheck/score.py`` reads.

Written blind from contracts.md sections 1-3, design.md, the rulebook and
datasheets; see README.md beside this file.

Usage::

    .venv/bin/python tools/crosscheck_aa/make_recordings_aa.py --out DIR \
        [--towers 8] [--first-seed 1] [--duration 120] \
        [--scenarios single rapid noisy game] [--workers N]
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import sys
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
from numpy.typing import NDArray
from scipy import signal

Arr = NDArray[np.float64]

MODEL = "AA"
FORMAT = "towerear-crosscheck-truth/1"
SCENARIOS = ("single", "rapid", "noisy", "game")
COLOURS = ("yellow", "blue", "brown", "gray", "black", "white")

FS = 2000  # piezo sample sets a second (the contract's nominal rate; HELLO says so)
MUX_S = 1.0 / (8 * FS)  # one conversion of the multiplexed ADC: channel c lags set time c*MUX_S
LOAD_NOMINAL_HZ = 80  # HX711 with RATE high; HELLO carries the nominal value (see README)
G = 9.81
MODULE_H_M = 0.031  # 25 cm tower / 8 modules: the fall from one plate to the next
QUIET_S = 4.0  # the first seconds: an empty, quiet tower (the detector tares on them)
END_MARGIN_S = 1.2  # nothing is left half done this close to the end of a recording


# --------------------------------------------------------------------------------------------
# Wire format (contracts.md section 1), written from the contract text alone.
# --------------------------------------------------------------------------------------------


def _crc_table() -> NDArray[np.uint16]:
    table = np.zeros(256, np.uint16)
    for byte in range(256):
        crc = byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
        table[byte] = crc & 0xFFFF
    return table


CRC_TABLE = _crc_table()
_CRC_LIST = [int(x) for x in CRC_TABLE]


def crc16_ccitt_false(data: bytes) -> int:
    """CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, no reflection, no xorout), by table."""
    crc = 0xFFFF
    for b in data:
        crc = ((crc << 8) & 0xFFFF) ^ _CRC_LIST[((crc >> 8) ^ b) & 0xFF]
    return crc


def crc16_ccitt_false_reference(data: bytes) -> int:
    """The same CRC bit by bit, straight from its definition (a check on the table)."""
    crc = 0xFFFF
    for b in data:
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) & 0xFFFF if crc & 0x8000 else (crc << 1) & 0xFFFF
    return crc


def crc16_rows(rows: NDArray[np.uint8]) -> NDArray[np.uint16]:
    """The CRC of every row of a (R, n) byte matrix at once (column by column)."""
    crc = np.full(rows.shape[0], 0xFFFF, np.uint32)
    table = CRC_TABLE.astype(np.uint32)
    for col in range(rows.shape[1]):
        crc = ((crc << 8) & 0xFFFF) ^ table[((crc >> 8) ^ rows[:, col]) & 0xFF]
    return crc.astype(np.uint16)


def cobs_encode(data: bytes) -> bytes:
    """Consistent Overhead Byte Stuffing of one message (no trailing delimiter)."""
    out = bytearray([0])
    code_at, code = 0, 1
    for b in data:
        if b == 0:
            out[code_at] = code
            code_at, code = len(out), 1
            out.append(0)
            continue
        out.append(b)
        code += 1
        if code == 0xFF:
            out[code_at] = code
            code_at, code = len(out), 1
            out.append(0)
    out[code_at] = code
    return bytes(out)


def cobs_decode_own(data: bytes) -> bytes:
    """Undo :func:`cobs_encode` (for this model's own tests)."""
    out = bytearray()
    i = 0
    while i < len(data):
        code = data[i]
        if code == 0 or i + code > len(data):
            raise ValueError("not COBS")
        out += data[i + 1:i + code]
        i += code
        if code < 0xFF and i < len(data):
            out.append(0)
    return bytes(out)


def cobs_encode_rows(rows: NDArray[np.uint8]) -> NDArray[np.uint8]:
    """COBS-encode every row of a (R, n) matrix (n <= 253) and append the 0x00 delimiter.

    With n <= 253 no block reaches 254 data bytes, so each encoded row is
    exactly n + 2 bytes: code, the data with every zero replaced by the
    distance to the next zero (or to the end), then 0x00.
    """
    r, n = rows.shape
    assert n <= 253
    ext = np.concatenate([rows, np.zeros((r, 1), np.uint8)], axis=1)
    pos = np.where(ext == 0, np.arange(n + 1, dtype=np.int16), np.int16(n + 1))
    nxt = np.minimum.accumulate(pos[:, ::-1], axis=1)[:, ::-1]  # next zero at or after j
    out = np.zeros((r, n + 2), np.uint8)
    out[:, 0] = nxt[:, 0] + 1
    body = rows.copy()
    zr, zc = np.nonzero(rows == 0)
    body[zr, zc] = (nxt[zr, zc + 1] - zc).astype(np.uint8)
    out[:, 1:n + 1] = body
    return out


def frame(msg_type: int, seq: int, body: bytes) -> bytes:
    """One framed message: COBS(type | seq | body | crc) followed by 0x00."""
    msg = bytes([msg_type]) + (seq & 0xFFFF).to_bytes(2, "little") + body
    return cobs_encode(msg + crc16_ccitt_false(msg).to_bytes(2, "little")) + b"\x00"


# --------------------------------------------------------------------------------------------
# The kit: every build figure comes from the seed alone.
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Kit:
    """One built tower with its electronics (figures and their reasons in README.md)."""

    seed: int
    device_id: bytes
    fw: tuple[int, int, int]
    boot_to_first_set_us: int
    sets_per_msg: int
    cpu_load_pct: int
    # load cells and HX711s
    cells: str
    cell_model: tuple[str, ...]
    cpg: Arr  # counts per gram
    offset: Arr  # counts of the empty plate
    load_noise: Arr  # counts rms
    drift_g_per_min: Arr
    walk_g_per_sqrt_s: Arr
    chip_rate_hz: Arr
    wake_s: Arr  # HX711 power-up to first conversion after the contacts close
    plate_mass_g: Arr
    plate_f_hz: Arr
    plate_zeta: Arr
    share_slope_per_cm: Arr
    # piezos
    piezo_bias: Arr
    piezo_noise: Arr
    piezo_gain: Arr  # counts per mN s of impulse on its own plate
    mode_f: Arr  # (8, 3) plate bending modes
    mode_q: Arr
    mode_w: Arr
    crosstalk: float  # per level through the walls
    table_gain: float  # counts per mN s of a table hit 10 cm from the base, at level 0
    table_up: float  # per level up the tower
    table_f: Arr
    table_q: Arr
    hpf_hz: Arr
    ghost: float
    ghost_open: float
    hum_hz: float
    hum: Arr
    hum_open: Arr
    # cubes and holes
    cube_edge_mm: float
    wood_g_cm3: float
    p_pass: Arr  # chance to fall on through plate L's hole (0 for the base plate)
    perch_prob: float
    restitution: float
    sheet_d_m: float
    box_d_m: float

    @property
    def cube_mass_g(self) -> float:
        return float((self.cube_edge_mm / 10) ** 3 * self.wood_g_cm3)

    def summary(self) -> dict[str, Any]:
        """The figures a truth file carries (json-able)."""
        return {
            "cells": self.cells, "cell_model": list(self.cell_model),
            "cpg": _r(self.cpg, 1), "offset": _r(self.offset, 0),
            "load_noise_counts": _r(self.load_noise, 1),
            "chip_rate_hz": _r(self.chip_rate_hz, 3), "hello_load_rate_hz": LOAD_NOMINAL_HZ,
            "piezo_rate_hz": FS, "sets_per_msg": self.sets_per_msg,
            "piezo_bias": _r(self.piezo_bias, 2), "piezo_noise": _r(self.piezo_noise, 2),
            "piezo_gain": _r(self.piezo_gain, 1), "mode_f_hz": _r(self.mode_f, 0),
            "crosstalk": round(self.crosstalk, 3), "plate_f_hz": _r(self.plate_f_hz, 1),
            "cube_mass_g": round(self.cube_mass_g, 4), "p_pass": _r(self.p_pass, 3),
            "perch_prob": round(self.perch_prob, 3), "hum_hz": self.hum_hz,
        }


def _r(a: Arr, nd: int) -> list[float]:
    return [round(float(x), nd) for x in np.ravel(a)]


def make_kit(seed: int) -> Kit:
    """The kit of tower ``seed``."""
    rng = np.random.default_rng([seed, 0xAA, 1])
    u = rng.uniform
    mixed = bool(rng.random() < 0.3)
    models = ["TAL221-100g"] * 8
    sens = u(0.45, 0.75, 8)  # mV/V, TAL221 100 g: 0.6 +- 0.15 mV/V
    cap = np.full(8, 100.0)
    if mixed:  # one or two cells replaced by what was at hand: a 200 g, 1.0 mV/V bar
        for lv in rng.choice(8, size=int(rng.integers(1, 3)), replace=False):
            models[lv] = "bar-200g"
            sens[lv], cap[lv] = u(0.9, 1.1), 200.0
    # counts/g = (mV/V) * 2^24 * 128 / capacity: the HX711 is ratiometric at gain 128.
    cpg = sens * 1e-3 * 2**24 * 128 / cap
    plate = u(6.0, 11.0, 8)
    zero_bal = u(-0.05, 0.05, 8) * sens * 1e-3 * 2**24 * 128  # +-5 % of rated output
    # The empty plate (with its glue and the screw into the cell) weighs on the cell too.
    offset = np.round(zero_bal + cpg * plate * (1 + u(0.0, 0.02, 8)))
    edge = float(rng.choice([8.0, 9.0, 10.0]))
    w = np.array([0.25, 1, 1, 1, 1, 1, 1, 1]) * np.exp(rng.normal(0, 0.3, 8))
    pf = w / w.sum()
    p_pass = np.zeros(8)
    below = np.cumsum(pf)  # P(floor <= L)
    for lv in range(1, 8):
        p_pass[lv] = 1.0 - pf[lv] / below[lv]
    f1 = u(180, 420, 8)
    mode_f = np.stack([f1, f1 * u(1.8, 2.6, 8), f1 * u(3.2, 4.6, 8)], axis=1)
    return Kit(
        seed=seed,
        device_id=bytes(rng.integers(0, 256, 8, dtype=np.uint8)),
        fw=(1, int(rng.integers(0, 4)), int(rng.integers(0, 10))),
        boot_to_first_set_us=int(rng.integers(20_000, 90_000)),
        sets_per_msg=int(rng.choice([8, 10, 12])),
        cpu_load_pct=int(rng.integers(35, 60)),
        cells="mixed" if mixed else "matched",
        cell_model=tuple(models),
        cpg=cpg, offset=offset,
        load_noise=u(35, 110, 8),
        drift_g_per_min=rng.normal(0, 0.006, 8),
        walk_g_per_sqrt_s=u(0.0003, 0.0012, 8),
        chip_rate_hz=LOAD_NOMINAL_HZ * u(0.95, 1.12, 8),
        wake_s=u(0.06, 0.25, 8),
        plate_mass_g=plate,
        plate_f_hz=u(70, 190, 8),
        plate_zeta=u(0.08, 0.25, 8),
        share_slope_per_cm=rng.normal(0, 0.006, 8),
        piezo_bias=511.5 + rng.normal(0, 1.5, 8),
        piezo_noise=u(0.5, 1.3, 8),
        piezo_gain=u(70, 220, 8),
        mode_f=mode_f,
        mode_q=u(6, 16, (8, 3)),
        mode_w=np.stack([np.ones(8), u(0.4, 0.8, 8), u(0.2, 0.5, 8)], axis=1),
        crosstalk=float(u(0.15, 0.35)),
        table_gain=float(u(3.0, 9.0)),
        table_up=float(u(0.5, 0.75)),
        table_f=np.array([u(70, 110), u(140, 220), u(260, 400)]),
        table_q=u(5, 12, 3),
        hpf_hz=u(3, 10, 8),
        ghost=float(u(0.0005, 0.003)),
        ghost_open=float(u(0.02, 0.5)),
        hum_hz=float(rng.choice([50.0, 60.0], p=[0.8, 0.2])),
        hum=u(0.05, 0.4, 8),
        hum_open=u(2.0, 9.0, 8),
        cube_edge_mm=edge,
        wood_g_cm3=float(u(0.6, 0.78)),
        p_pass=p_pass,
        perch_prob=float(u(0.08, 0.2)),
        restitution=float(u(0.3, 0.5)),
        sheet_d_m=float(u(0.15, 0.3)),
        box_d_m=float(u(0.35, 0.6)),
    )


make_tower = make_kit  # the name other models' tests use for the kit


# --------------------------------------------------------------------------------------------
# The world: what happens on and around the tower, as sources for the sensors.
# --------------------------------------------------------------------------------------------

ROOF = 8  # impact site: the tower's own top (module 7's lid), no plate of its own
TABLE = -1  # impact site: the table top (``dist_m`` from the base)


@dataclass
class Cube:
    cid: int
    colour: str
    mass_g: float
    x_cm: float = 0.0
    perched: bool = False

    def load_g(self, slope: float) -> float:
        """What its plate's cell weighs of it (bar cells are not quite moment-free)."""
        return float(self.mass_g * (1.0 + slope * self.x_cm))


@dataclass
class Impact:
    t: float
    site: int
    j_ns: float  # impulse, N s
    tau_s: float  # contact time
    dist_m: float = 0.1
    wall: bool = False  # on the tower's walls (a hand, a stack set down), not on a plate
    tag: str = ""  # what made it (tests find each mishap's own sound by it)


@dataclass
class Rumble:
    """Band-limited noise on the piezos (hands, cloth, fur, voices): counts rms per channel."""

    t0: float
    t1: float
    amp: Arr
    lo_hz: float
    hi_hz: float
    am_hz: float = 0.0
    common: float = 0.7
    tag: str = ""


Fn = TypeVar("Fn", bound=Callable[..., Any])


def _tagged(tag: str) -> Callable[[Fn], Fn]:
    """Sources made inside the decorated method carry ``tag`` (the innermost method wins)."""
    def deco(fn: Fn) -> Fn:
        @functools.wraps(fn)
        def inner(self: World, *args: Any, **kwargs: Any) -> Any:
            old, self.tag = self.tag, tag
            try:
                return fn(self, *args, **kwargs)
            finally:
                self.tag = old
        return inner  # type: ignore[return-value]
    return deco


@dataclass
class World:
    """Sources for the sensors plus the ground truth, built by a scenario script."""

    kit: Kit
    rng: np.random.Generator
    duration: float
    impacts: list[Impact] = field(default_factory=list)
    rumbles: list[Rumble] = field(default_factory=list)
    steps: list[tuple[float, int, float, float]] = field(default_factory=list)
    kicks: list[tuple[float, int, float]] = field(default_factory=list)
    presses: list[tuple[float, float, int, float]] = field(default_factory=list)
    shakes: list[tuple[float, int, float, float, float]] = field(default_factory=list)
    carries: list[tuple[float, float, float]] = field(default_factory=list)
    off: list[tuple[float, float, int]] = field(default_factory=list)
    floors: list[list[Cube]] = field(default_factory=lambda: [[] for _ in range(8)])
    landings: list[dict[str, Any]] = field(default_factory=list)
    knockdowns: list[dict[str, Any]] = field(default_factory=list)
    removals: list[dict[str, Any]] = field(default_factory=list)
    lifts: list[dict[str, Any]] = field(default_factory=list)
    closes: list[dict[str, Any]] = field(default_factory=list)
    knocks: list[dict[str, Any]] = field(default_factory=list)
    mishaps: list[dict[str, Any]] = field(default_factory=list)
    n_cubes: int = 0
    lifted_from: int | None = None  # exposed level while a stack is off
    tag: str = ""

    # -- bookkeeping ---------------------------------------------------------------------

    @property
    def t_end(self) -> float:
        return self.duration - END_MARGIN_S

    def new_cube(self, colour: str) -> Cube:
        self.n_cubes += 1
        mass = self.kit.cube_mass_g * (1 + 0.03 * float(self.rng.standard_normal()))
        return Cube(self.n_cubes, colour, mass)

    def mishap(self, kind: str, t: float, **info: Any) -> dict[str, Any]:
        entry = {"kind": kind, "t": round(t, 4), **info}
        self.mishaps.append(entry)
        return entry

    def knock(self, kind: str, t: float, t_end: float, **info: Any) -> None:
        self.knocks.append({"t": round(t, 4), "t_end": round(t_end, 4), "kind": kind, **info})

    def latest(self) -> float:
        """The time of the last thing that happened so far."""
        return max([x.t for x in self.impacts] + [x[0] for x in self.steps] + [QUIET_S])

    def static_g(self, lv: int) -> float:
        s = self.kit.share_slope_per_cm[lv]
        return float(sum(c.load_g(s) for c in self.floors[lv]))

    # -- primitive sources ---------------------------------------------------------------

    def hit(self, t: float, site: int, j_ns: float, tau_s: float, dist_m: float = 0.1,
            wall: bool = False) -> None:
        """An impact; on a plate it kicks that plate's load cell.

        A hit on the walls (or the roof) jolts the whole tower (about 0.4 kg
        with its base); each plate, a mass on its cell's spring, feels the
        jolt as a kick of m_plate / M_tower of the impulse, less the part a
        soft contact is too slow to excite at the plate's frequency.
        """
        wall = wall or site == ROOF
        self.impacts.append(Impact(t, site, j_ns, tau_s, dist_m, wall, self.tag))
        if 0 <= site <= 7 and not wall:
            self.kicks.append((t, site, j_ns))
        elif wall:
            hc = _contact_gain(self.kit.plate_f_hz, tau_s)
            for lv in range(8):
                share = self.kit.plate_mass_g[lv] * 1e-3 / 0.4 * 0.7 ** abs(lv - site)
                self.kicks.append((t, lv, j_ns * share * float(hc[lv])))
        elif site == TABLE and j_ns * 0.1 / dist_m > 0.02:
            # The table's own ringing shakes every plate on its cell (m * a).
            a = 8.0 * j_ns * 0.1 / dist_m  # m/s^2 at the base per N s of table hit
            for lv in range(8):
                m = self.kit.plate_mass_g[lv] + self.static_g(lv)
                self.shakes.append((t, lv, m * a / G, float(self.kit.table_f[0]), 0.04))

    def step(self, t: float, lv: int, dg: float, rise_s: float = 0.012) -> None:
        self.steps.append((t, lv, dg, rise_s))

    def rumble(self, t0: float, t1: float, amp: Any, lo: float, hi: float,
               am_hz: float = 0.0, common: float = 0.7) -> None:
        a = np.broadcast_to(np.asarray(amp, float), (8,)).copy()
        self.rumbles.append(Rumble(t0, t1, a, lo, hi, am_hz, common, self.tag))

    def hands(self, t0: float, t1: float, lv: int, amp: float) -> None:
        """Fingers on cardboard around level ``lv``: scratchy rumble, strongest there."""
        w = amp * self.kit.crosstalk ** (0.6 * np.abs(np.arange(8) - lv))
        self.rumble(t0, t1, w, 20.0, 600.0, common=0.6)

    def table_rumble(self, t0: float, t1: float, amp: float) -> None:
        """Something rubbing the table top: up the tower from the base."""
        w = amp * np.power(self.kit.table_up, np.arange(8, dtype=float))
        self.rumble(t0, t1, w, 15.0, 300.0, am_hz=3.0, common=0.85)

    @_tagged("talk")
    def talk(self, t0: float, t1: float, loud: float) -> None:
        """Voices: the cardboard tower is a poor microphone, but not a deaf one."""
        t = t0
        while t < t1:
            d = float(self.rng.uniform(0.4, 3.0))
            amp = loud * float(self.rng.uniform(0.4, 1.0)) * (0.7 + 0.3 * self.rng.random(8))
            self.rumble(t, min(t + d, t1), amp, 90.0, 450.0, am_hz=float(self.rng.uniform(3, 6)),
                        common=0.9)
            t += d + float(self.rng.exponential(1.5))

    # -- a cube in the shaft -------------------------------------------------------------

    def _contact(self) -> float:
        return float(self.rng.uniform(0.35e-3, 0.8e-3))  # wood on greyboard

    def _rest(self, cube: Cube, lv: int, t: float, v: float) -> float:
        """Bounces and a slide on plate ``lv`` after an impact at speed ``v``; rest time."""
        rng, e = self.rng, self.kit.restitution
        m = cube.mass_g * 1e-3
        vb = e * v
        while vb > 0.06:
            t += 2 * vb / G
            self.hit(t, lv, m * vb * (1 + e), self._contact() * 1.3)
            vb *= e
        slide = float(rng.uniform(0.03, 0.3))
        for _ in range(int(rng.integers(0, 3))):  # tipping over an edge while it slides
            self.hit(t + float(rng.uniform(0, slide)), lv, m * float(rng.uniform(0.03, 0.12)),
                     self._contact() * 2)
        cube.x_cm = float(rng.uniform(-3.0, 3.0))
        cube.perched = lv > 0 and bool(rng.random() < self.kit.perch_prob)
        # In contact from the slide on: the cell carries the cube from there.
        self.step(t, lv, cube.load_g(self.kit.share_slope_per_cm[lv]), 0.01)
        self.floors[lv].append(cube)
        return t + slide

    def _fall(self, cube: Cube, lv: int, t: float, v: float, throw: dict[str, Any] | None
              ) -> tuple[int, float, float]:
        """A cube hits plate ``lv`` at ``t`` with speed ``v``; it goes on down or stays.

        Returns the floor, the rest time and the time of its first impact.
        """
        rng, e = self.rng, self.kit.restitution
        m = cube.mass_g * 1e-3
        first = t
        while True:
            self.hit(t, lv, m * v * (1 + e), self._contact())
            if throw is not None:
                self._maybe_knock(lv, t, v, throw)
            if lv > 0 and rng.random() < self.kit.p_pass[lv]:
                t += float(rng.uniform(0.02, 0.09))  # it tips over the hole's edge
                self.hit(t, lv, m * float(rng.uniform(0.05, 0.25)) * (1 + e), self._contact())
                v0 = float(rng.uniform(0.1, 0.45))
                v = math.sqrt(v0 * v0 + 2 * G * MODULE_H_M)
                t += (v - v0) / G
                lv -= 1
                continue
            return lv, self._rest(cube, lv, t, v), first

    def _maybe_knock(self, lv: int, t: float, v: float, throw: dict[str, Any]) -> None:
        """A falling cube may push a cube perched at the hole's edge down through it."""
        perched = [c for c in self.floors[lv] if c.perched]
        # Each cube at the edge is in the faller's way about one time in eight (at 1 m/s).
        p_knock = 1 - (1 - 0.12 * min(1.0, v)) ** len(perched)
        if throw.get("caused_knockdown") or not perched or self.rng.random() > p_knock:
            return
        b = perched[int(self.rng.integers(len(perched)))]
        self.floors[lv].remove(b)
        t_off = t + float(self.rng.uniform(0.005, 0.03))
        self.step(t_off, lv, -b.load_g(self.kit.share_slope_per_cm[lv]), 0.015)
        v_b = math.sqrt(0.2**2 + 2 * G * MODULE_H_M)
        t_hit = t_off + (v_b - 0.2) / G
        floor, t_rest, first = self._fall(b, lv - 1, t_hit, v_b, None)
        throw["caused_knockdown"] = True
        self.knockdowns.append({"t": round(t_off, 4), "from_floor": lv, "to_floor": floor,
                                "colour": b.colour, "by_throw_t": throw["t_release"]})
        self.landings.append({
            "t_release": round(t_off, 4), "t_first_impact": round(first, 4),
            "t": round(t_rest, 4), "floor": floor, "cubes": 1, "knocked": True,
            "knocked_from": lv, "colour": b.colour, "kind": "knocked",
            "mass_g": round(b.mass_g, 4),
            "load_g": round(b.load_g(self.kit.share_slope_per_cm[floor]), 4)})

    @_tagged("throw")
    def throw(self, t_rel: float, cube: Cube, *, by: str, kind: str, entry: str = "top",
              **info: Any) -> dict[str, Any]:
        """A cube dropped into the shaft at ``t_rel``; ``entry`` "rim" clips the roof first."""
        rng, e = self.rng, self.kit.restitution
        m = cube.mass_g * 1e-3
        rec: dict[str, Any] = {"t_release": round(t_rel, 4), "caused_knockdown": False}
        if entry == "rim":
            h = float(rng.uniform(0.05, 0.15))
            t = t_rel + math.sqrt(2 * h / G)
            self.hit(t, ROOF, m * math.sqrt(2 * G * h) * (1 + e), self._contact())
            t_first: float | None = t
            t += float(rng.uniform(0.06, 0.2))  # it rolls over the rim into the hole
            v0 = float(rng.uniform(0.1, 0.3))
        else:
            h = float(rng.uniform(0.02, 0.08))  # the hand's height above the roof
            t, v0, t_first = t_rel + math.sqrt(2 * h / G), math.sqrt(2 * G * h), None
        v = math.sqrt(v0 * v0 + 2 * G * MODULE_H_M)
        t += (v - v0) / G
        floor, t_rest, first = self._fall(cube, 7, t, v, rec)
        rec.update({
            "t_first_impact": round(t_first if t_first is not None else first, 4),
            "t": round(t_rest, 4), "floor": floor, "cubes": 1, "knocked": False,
            "colour": cube.colour, "by": by, "kind": kind, "entry": entry,
            "mass_g": round(cube.mass_g, 4),
            "load_g": round(cube.load_g(self.kit.share_slope_per_cm[floor]), 4), **info})
        self.landings.append(rec)
        # keep caused_knockdown only where true (the scorer counts the key's truth)
        return rec

    @_tagged("miss")
    def miss(self, t_rel: float, cube: Cube, how: str) -> float:
        """A throw that does not go in: off the roof onto the table, or straight onto it.

        Returns the time the cube lies still on the table.
        """
        rng, e = self.rng, self.kit.restitution
        m = cube.mass_g * 1e-3
        self.tag = how
        info: dict[str, Any] = {"colour": cube.colour}
        if how == "miss_roof":
            h = float(rng.uniform(0.05, 0.15))
            t = t_rel + math.sqrt(2 * h / G)
            v = math.sqrt(2 * G * h)
            self.hit(t, ROOF, m * v * (1 + e), self._contact())
            info["t_roof"] = round(t, 4)
            t += float(rng.uniform(0.18, 0.3))  # off the roof's edge, 25 cm down
            v = math.sqrt(2 * G * 0.25)
        else:
            t = t_rel + float(rng.uniform(0.15, 0.25))
            v = float(rng.uniform(1.8, 2.6))
        d = float(rng.uniform(0.05, 0.25))
        info["t_table"] = round(t, 4)
        info["dist_m"] = round(d, 3)
        e_t = 0.55  # wood on a wooden table
        while v > 0.15:
            self.hit(t, TABLE, m * v * (1 + e_t), float(rng.uniform(0.15e-3, 0.35e-3)), d)
            t += 2 * e_t * v / G
            v *= e_t
            d += float(rng.uniform(0.0, 0.04))
        t += float(rng.uniform(0.1, 0.5))  # rolls to a stop
        self.mishap(how, t_rel, t_still=round(t, 4), **info)
        return t

    # -- hands on the tower -------------------------------------------------------------

    @_tagged("lift")
    def lift(self, t: float, k: int, *, by: str, kind: str, tilt_fall: bool = True
             ) -> list[Cube]:
        """Modules k..7 leave the tower at ``t`` (contacts open): level k is exposed.

        Returns the cubes that fell out of the lifted stack onto the table.
        """
        rng = self.rng
        self.hands(t - float(rng.uniform(0.3, 0.7)), t + 0.3, k, float(rng.uniform(1.5, 4)))
        self.hands(t - 0.4, t + 0.3, max(k - 1, 0), float(rng.uniform(0.8, 2.0)))
        for lv in range(k + 1, 8):
            self.off.append((t, math.inf, lv))
        self.lifted_from = k
        self.lifts.append({"t": round(t, 4), "exposed": k, "by": by, "kind": kind})
        fell: list[Cube] = []
        if tilt_fall:
            for lv in range(k + 1, 8):
                for c in list(self.floors[lv]):
                    if c.perched and rng.random() < 0.25:
                        # Through the holes below and out of the open bottom, onto the table.
                        self.floors[lv].remove(c)
                        gone = c.load_g(self.kit.share_slope_per_cm[lv])
                        self.step(t + 0.01, lv, -gone)
                        t_tab = t + float(rng.uniform(0.15, 0.7))
                        self.tag = "fall_out"
                        self.hit(t_tab, TABLE, c.mass_g * 1e-3 * 1.4 * 1.55,
                                 float(rng.uniform(0.15e-3, 0.3e-3)), 0.12)
                        self.tag = "lift"
                        self.mishap("fall_out", t_tab, from_floor=lv, colour=c.colour,
                                    load_g=round(gone, 4), lift_t=round(t, 4))
                        fell.append(c)
        # Lifting tilts the stack: the cubes on the carried plates shift a little.
        for lv in range(k + 1, 8):
            s = self.kit.share_slope_per_cm[lv]
            for c in self.floors[lv]:
                old = c.load_g(s)
                c.x_cm = float(np.clip(c.x_cm + rng.normal(0, 0.6), -3.2, 3.2))
                self.step(t + 0.05, lv, c.load_g(s) - old)
        return fell

    @_tagged("close")
    def close(self, t_set: float, k: int, *, askew: bool = False) -> float:
        """The stack comes back onto module k-1; returns the time the tower is closed.

        An askew stack sits on the tower rotated by a few degrees: some
        spring contacts meet their pads, others do not, until a hand pushes
        it home (the close is then, see README).
        """
        rng = self.rng
        self.hands(t_set - float(rng.uniform(0.3, 0.6)), t_set + 0.2, k,
                   float(rng.uniform(1.5, 3.5)))
        stack_kg = (8 - k) * 0.025
        self.hit(t_set, k, stack_kg * float(rng.uniform(0.03, 0.1)),
                 float(rng.uniform(3e-3, 8e-3)), wall=True)
        t_close = t_set
        late: list[int] = list(range(k + 1, 8))
        if askew:
            late = [lv for lv in late if rng.random() < 0.6] or late[-1:]
            t_close = t_set + float(rng.uniform(1.2, 4.0))
            self.hands(t_close - 0.25, t_close + 0.15, k, float(rng.uniform(1.0, 2.5)))
            self.hit(t_close, k, stack_kg * float(rng.uniform(0.01, 0.04)),
                     float(rng.uniform(4e-3, 10e-3)), wall=True)
            self.mishap("askew_close", t_set, t_pushed_home=round(t_close, 4), exposed=k,
                        late_levels=late)
        for i, (t0, t1, lv) in enumerate(self.off):
            if t1 == math.inf:
                self.off[i] = (t0, t_close if lv in late else t_set, lv)
        self.lifted_from = None
        self.closes.append({"t": round(t_close, 4), "exposed": k, "t_set_down": round(t_set, 4),
                            "askew": askew})
        return t_close

    @_tagged("remove")
    def remove(self, t: float, k: int, cubes: list[Cube]) -> None:
        """Fingers pinch ``cubes`` off the exposed plate k; they leave it at ``t``."""
        rng = self.rng
        s = self.kit.share_slope_per_cm[k]
        dur = float(rng.uniform(0.15, 0.45))
        self.presses.append((t - dur, dur, k, float(rng.uniform(3.0, 20.0))))
        self.hands(t - dur - 0.2, t + 0.1, k, float(rng.uniform(0.6, 1.5)))
        for c in cubes:
            self.floors[k].remove(c)
            self.step(t, k, -c.load_g(s), 0.03)
        self.removals.append({"t": round(t, 4), "floor": k, "cubes": len(cubes),
                              "colours": [c.colour for c in cubes]})

    @_tagged("put_back")
    def put_back(self, t: float, k: int, cube: Cube, *, dropped: bool) -> None:
        """A cube in the hand goes back onto the open plate k (slips, or is set down)."""
        rng = self.rng
        self.tag = "drop_back" if dropped else "put_back"
        if dropped:
            h = float(rng.uniform(0.02, 0.05))
            v = math.sqrt(2 * G * h)
            self._rest(cube, k, t + math.sqrt(2 * h / G), v)
            self.hit(t + math.sqrt(2 * h / G), k, cube.mass_g * 1e-3 * v * 1.4, self._contact())
        else:
            cube.x_cm = float(rng.uniform(-3, 3))
            cube.perched = False
            self.presses.append((t - 0.1, 0.25, k, float(rng.uniform(2.0, 8.0))))
            self.step(t, k, cube.load_g(self.kit.share_slope_per_cm[k]), 0.05)
            self.floors[k].append(cube)

    @_tagged("steady")
    def steady(self, t0: float, t1: float) -> None:
        """A hand resting on the tower top: tremor and a little rumble."""
        self.hands(t0, t1, 7, float(self.rng.uniform(0.5, 1.2)))
        f = float(self.rng.uniform(8, 12))  # physiological tremor
        for lv in range(8):
            self.shakes.append((t0, lv, 0.004 * (lv + 1), f, (t1 - t0) / 2))

    def table_tap(self, t: float, j_ns: float, d: float, soft: bool = False) -> None:
        tau = float(self.rng.uniform(2e-3, 6e-3) if soft else self.rng.uniform(0.2e-3, 0.5e-3))
        self.hit(t, TABLE, j_ns, tau, d)

    @_tagged("sheet")
    def sheet_place(self, t: float, cube_g: float, *, slap: bool = False) -> None:
        """A cube put onto the investigation sheet beside the tower."""
        v = float(self.rng.uniform(1.0, 2.5) if slap else self.rng.uniform(0.2, 0.6))
        self.table_tap(t, cube_g * 1e-3 * v * 1.5 * (4 if slap else 1), self.kit.sheet_d_m)

    @_tagged("into_box")
    def into_box(self, t: float, cube_g: float) -> None:
        v = float(self.rng.uniform(1.0, 2.0))
        self.table_tap(t, cube_g * 1e-3 * v * 1.3, self.kit.box_d_m, soft=True)
        self.mishap("into_box", t)

    @_tagged("pour")
    def pour(self, t: float, n: int, kind: str = "pour") -> float:
        """A player's supply poured out of the bag onto the table: n small taps."""
        d = float(self.rng.uniform(0.3, 0.5))
        dur = float(self.rng.uniform(0.4, 1.0))
        for _ in range(n):
            tt = t + float(self.rng.uniform(0, dur))
            v = float(self.rng.uniform(0.5, 1.4))
            self.table_tap(tt, self.kit.cube_mass_g * 1e-3 * v * 1.5, d)
        self.mishap(kind, t, t_end=round(t + dur, 4), cubes=n, dist_m=round(d, 3))
        return t + dur

    @_tagged("slap")
    def slap(self, t: float, why: str) -> None:
        """A flat hand on the table ("Aha!"): a heavy, soft hit 30-50 cm away."""
        d = float(self.rng.uniform(0.3, 0.5))
        j = float(self.rng.uniform(0.3, 0.9))
        self.hit(t, TABLE, j, float(self.rng.uniform(6e-3, 14e-3)), d)
        self._jostle(t, 0.3)
        self.knock("slap", t, t + 0.3, why=why, dist_m=round(d, 3))
        self.mishap("slap", t, why=why)

    def _jostle(self, t: float, p: float) -> None:
        """A hard shake moves some resting cubes a little (their share changes)."""
        for lv in range(8):
            if self.lifted_from is not None and lv > self.lifted_from:
                continue
            s = self.kit.share_slope_per_cm[lv]
            for c in self.floors[lv]:
                if self.rng.random() < p:
                    old = c.load_g(s)
                    c.x_cm = float(np.clip(c.x_cm + self.rng.normal(0, 0.5), -3.2, 3.2))
                    self.step(t + 0.05, lv, c.load_g(s) - old)

    def rock(self, t: float, top_g: float, f: float, tau: float) -> None:
        """The tower rocks on its base: vertical wobble growing with height."""
        for lv in range(8):
            self.shakes.append((t, lv, top_g * (lv + 1) / 8, f, tau))

    @_tagged("bump")
    def bump(self, t: float, by: str) -> dict[str, Any] | None:
        """A sleeve or elbow hits the tower while reaching across; returns a fallen cube's fall."""
        rng = self.rng
        lv = int(rng.integers(2, 8))
        self.hit(t, lv, float(rng.uniform(0.02, 0.08)), float(rng.uniform(6e-3, 15e-3)), wall=True)
        self.hands(t - 0.05, t + 0.15, lv, float(rng.uniform(2, 5)))
        tau = float(rng.uniform(0.3, 0.8))
        self.rock(t, float(rng.uniform(0.1, 0.5)), float(rng.uniform(5, 12)), tau)
        for lv2 in range(8):  # resting cubes chatter on their plates
            if self.floors[lv2] and (self.lifted_from is None or lv2 <= self.lifted_from):
                for _ in range(int(rng.integers(1, 4))):
                    self.hit(t + float(rng.uniform(0.01, 0.2)), lv2,
                             self.kit.cube_mass_g * 1e-3 * float(rng.uniform(0.02, 0.08)),
                             self._contact())
        self._jostle(t, 0.5)
        self.knock("bump", t, t + tau, by=by, level=lv)
        fall: dict[str, Any] | None = None
        perched = [(lv2, c) for lv2 in range(1, 8) for c in self.floors[lv2]
                   if c.perched and (self.lifted_from is None or lv2 <= self.lifted_from)]
        if perched and rng.random() < 0.4:
            lv2, c = perched[int(rng.integers(len(perched)))]
            self.floors[lv2].remove(c)
            t_off = t + float(rng.uniform(0.03, 0.15))
            self.step(t_off, lv2, -c.load_g(self.kit.share_slope_per_cm[lv2]), 0.015)
            v = math.sqrt(0.15**2 + 2 * G * MODULE_H_M)
            floor, t_rest, first = self._fall(c, lv2 - 1, t_off + (v - 0.15) / G, v, None)
            fall = {"t": round(t_off, 4), "from_floor": lv2, "to_floor": floor,
                    "t_first_impact": round(first, 4), "t_rest": round(t_rest, 4),
                    "colour": c.colour,
                    "load_g": round(c.load_g(self.kit.share_slope_per_cm[floor]), 4)}
            self.mishap("bump_fall", t_off, **{k: v for k, v in fall.items() if k != "t"})
        self.mishap("bump", t, by=by, level=lv, fall=fall is not None)
        return fall

    @_tagged("spill")
    def spill(self, t: float, move_tower: bool) -> float:
        """A glass goes over: thud, a cloth wipes round the base, maybe the tower is carried.

        Returns the time it is all over.
        """
        rng = self.rng
        d = float(rng.uniform(0.2, 0.45))
        self.hit(t, TABLE, float(rng.uniform(0.15, 0.4)), float(rng.uniform(1e-3, 3e-3)), d)
        self.knock("glass", t, t + 0.4, dist_m=round(d, 3))
        t_w = t + float(rng.uniform(2.0, 5.0))  # someone fetches a cloth
        t_w1 = t_w + float(rng.uniform(4.0, 10.0))
        self.tag = "wipe"
        self.table_rumble(t_w, t_w1, float(rng.uniform(2.0, 5.0)))
        info: dict[str, Any] = {"t_wipe": round(t_w, 4), "t_wipe_end": round(t_w1, 4),
                                "dist_m": round(d, 3)}
        if move_tower:
            # Picked up by the base, carried 10-20 cm, set down: the cells weigh plate
            # and cubes times (1 + a/g) on the way.
            t_up = t_w + float(rng.uniform(1.0, 2.5))
            dur = float(rng.uniform(0.8, 1.8))
            self.tag = "tower_moved"
            self.carries.append((t_up, dur, float(rng.uniform(1.0, 3.0))))
            self.hands(t_up - 0.3, t_up + dur + 0.3, 0, float(rng.uniform(3, 8)))
            self.hit(t_up + dur, 0, float(rng.uniform(0.02, 0.06)), float(rng.uniform(4e-3, 9e-3)),
                     wall=True)
            self.rock(t_up + dur, float(rng.uniform(0.2, 0.6)), float(rng.uniform(5, 10)), 0.5)
            self._jostle(t_up + dur, 0.6)
            self.knock("tower_moved", t_up, t_up + dur + 0.5)
            info.update(t_carry=round(t_up, 4), t_set_down=round(t_up + dur, 4))
        self.mishap("spill", t, **info)
        return t_w1 + 0.5

    @_tagged("cat")
    def cat(self, t: float) -> float:
        """The cat walks past and brushes the tower: fur, a slow sway."""
        rng = self.rng
        dur = float(rng.uniform(0.8, 2.0))
        lv = int(rng.integers(0, 3))
        self.hands(t, t + dur, lv, float(rng.uniform(1.0, 3.0)))
        self.rock(t + 0.2, float(rng.uniform(0.05, 0.25)), float(rng.uniform(3, 6)), dur)
        self.knock("cat", t, t + dur)
        self.mishap("cat", t, t_end=round(t + dur, 4), level=lv)
        return t + dur

    @_tagged("child_poke")
    def poke(self, t: float) -> None:
        """A child's finger on the tower's roof."""
        self.hit(t, ROOF, float(self.rng.uniform(0.005, 0.02)), float(self.rng.uniform(4e-3, 8e-3)))
        self.rock(t, float(self.rng.uniform(0.05, 0.2)), float(self.rng.uniform(6, 12)), 0.4)
        self.knock("child_poke", t, t + 0.4)
        self.mishap("child_poke", t)

    def peek(self, t: float, k: int, by: str) -> float:
        """A player lifts modules k..7 an inch, looks, sets them down: returns the close."""
        self.lift(t, k, by=by, kind="peek", tilt_fall=False)
        t_c = self.close(t + float(self.rng.uniform(0.7, 1.6)), k)
        self.mishap("peek", t, exposed=k, by=by, t_close=round(t_c, 4))
        return t_c


# --------------------------------------------------------------------------------------------
# Scenarios.
# --------------------------------------------------------------------------------------------


def _throw_or_miss(w: World, t: float, cube: Cube, *, by: str, kind: str, p_miss: float,
                   p_rim: float, **info: Any) -> dict[str, Any]:
    """A throw as players throw: sometimes it misses and is thrown again."""
    rng = w.rng
    r = rng.random()
    if r < p_miss and t + 7.0 < w.t_end:  # room to pick it up and throw it again
        how = "miss_roof" if rng.random() < 0.45 else "miss_table"
        t_still = w.miss(t, cube, how)
        t = t_still + float(rng.uniform(1.2, 3.0))  # picked up, thrown again
        info["rethrow_after"] = how
    entry = "rim" if rng.random() < p_rim else "top"
    rec = w.throw(t, cube, by=by, kind=kind, entry=entry, **info)
    if entry == "rim":
        w.mishap("rim_in", rec["t_first_impact"], floor=rec["floor"], landing_t=rec["t"])
    return rec


def scenario_single(w: World) -> None:
    rng = w.rng
    t = QUIET_S + float(rng.uniform(1.0, 2.0))
    while t + 2.0 < w.t_end:
        c = w.new_cube(COLOURS[int(rng.integers(6))])
        rec = _throw_or_miss(w, t, c, by=c.colour, kind="single", p_miss=0.03, p_rim=0.05)
        t = rec["t"] + float(rng.uniform(2.0, 5.0))
    w.talk(QUIET_S + 0.5, w.duration, 0.3)


def scenario_rapid(w: World) -> None:
    rng = w.rng
    t = QUIET_S + float(rng.uniform(1.0, 2.0))
    while t + 2.5 < w.t_end:
        n = int(rng.integers(4, 11))
        by = COLOURS[int(rng.integers(6))]
        for _ in range(n):
            if t + 1.5 > w.t_end:
                break
            c = w.new_cube(by)
            rec = w.throw(t, c, by=by, kind="rapid")
            if rng.random() < 0.12 and t + 2 < w.t_end:  # a neighbour throws at once
                other = COLOURS[int(rng.integers(6))]
                t2 = t + float(rng.uniform(0.04, 0.3))
                rec2 = w.throw(t2, w.new_cube(other), by=other, kind="rapid")
                w.mishap("simultaneous", t, releases=[rec["t_release"], rec2["t_release"]],
                         floors=[rec["floor"], rec2["floor"]])
            t += float(rng.uniform(0.3, 0.8))
        t += float(rng.uniform(2.0, 5.0))
    w.talk(QUIET_S + 0.5, w.duration, 0.4)


def scenario_noisy(w: World) -> None:
    """Throws a few seconds apart at a loud, busy table."""
    rng = w.rng
    t = QUIET_S + float(rng.uniform(0.8, 1.5))
    n_pl = int(rng.integers(3, 7))
    players = [str(x) for x in rng.permutation(COLOURS)[:n_pl]]
    for _ in players[: int(rng.integers(1, 3)) if w.duration >= 30 else 0]:
        t = w.pour(t, 20) + float(rng.uniform(0.3, 1.0))
    spill_at = float(rng.uniform(0.2, 0.8)) * w.duration if rng.random() < 0.5 else math.inf
    cat_at = float(rng.uniform(0.1, 0.9)) * w.duration if rng.random() < 0.3 else math.inf
    t += 1.0 if w.duration >= 30 else 0.0
    while t + 2.5 < w.t_end:
        if t > spill_at and t + 16 < w.t_end and w.landings:
            t = w.spill(t, bool(rng.random() < 0.6)) + float(rng.uniform(1.5, 3.0))
            spill_at = math.inf
            continue
        if t > cat_at and t + 6 < w.t_end and w.landings:
            t = w.cat(t) + float(rng.uniform(1.5, 3.0))
            cat_at = math.inf
            continue
        p = players[int(rng.integers(n_pl))]
        rec = _throw_or_miss(w, t, w.new_cube(p), by=p, kind="noisy", p_miss=0.06, p_rim=0.06)
        t = rec["t"] + float(rng.uniform(0.8, 1.5))
        r = rng.random() if t + 2.0 < w.t_end else 1.0
        if r < 0.25:
            w.sheet_place(t, w.kit.cube_mass_g, slap=bool(rng.random() < 0.3))
        elif r < 0.35:
            w.slap(t, "argument")
        elif r < 0.45:
            w.bump(t, p)
        elif r < 0.5:
            w.into_box(t, w.kit.cube_mass_g)
        elif r < 0.55:
            w.poke(t)
        t += float(rng.uniform(1.2, 3.5))
    w.talk(QUIET_S + 0.3, w.duration, 1.2)
    for _ in range(int(w.duration / 20)):  # laughter
        t0 = float(rng.uniform(QUIET_S + 0.5, w.duration - 1))
        w.rumble(t0, t0 + float(rng.uniform(0.5, 2.0)), float(rng.uniform(1.5, 3.5)), 150, 900,
                 am_hz=float(rng.uniform(4, 7)), common=0.9)


# -- the game -----------------------------------------------------------------------------------


class GameOver(Exception):
    """The end conditions hold (10 clues of a colour on the sheet, or an empty supply)."""


class OutOfTime(Exception):
    """The recording ends before the next action could be finished."""


@dataclass
class Game:
    """Mord im Arosa per the rulebook, played into the world with a real table's mistakes.

    How often each mistake happens, and why, is tabled in README.md ("How often").
    """

    w: World
    players: list[str]
    supply: dict[str, int] = field(default_factory=dict)
    sheet: dict[str, list[int]] = field(default_factory=dict)
    crime_scenes: set[int] = field(default_factory=set)
    victims_found: int = 0
    phase: str = "prologue"
    turn: int = 0
    games: int = 0
    log: list[dict[str, Any]] = field(default_factory=list)
    results: list[dict[str, Any]] = field(default_factory=list)
    early: tuple[float, float] | None = None  # a throw due right after a close, and the close

    def reset(self) -> None:
        self.supply = {p: 20 for p in self.players}
        self.sheet = {p: [0] * 8 for p in self.players}
        self.crime_scenes = set()
        self.victims_found = 0
        self.phase = "prologue"
        self.games += 1

    @property
    def rng(self) -> np.random.Generator:
        return self.w.rng

    def u(self, a: float, b: float) -> float:
        return float(self.rng.uniform(a, b))

    def need(self, t: float, s: float) -> None:
        if t + s > self.w.t_end:
            raise OutOfTime

    def check_end(self) -> None:
        full = [p for p, v in self.sheet.items() if sum(v) >= 10]
        empty = [p for p, n in self.supply.items() if n <= 0]
        if full or empty:
            raise GameOver(f"10 clues of {full[0]} on the sheet" if full
                           else f"{empty[0]}'s supply is empty")

    def final(self, reason: str, t: float) -> dict[str, Any]:
        """Suspicion points per the rulebook: 3 at a crime scene, 2 next to one, else 1."""
        points = {}
        for p, row in self.sheet.items():
            pts = 0
            for lv, n in enumerate(row):
                if lv in self.crime_scenes:
                    pts += 3 * n
                elif lv - 1 in self.crime_scenes or lv + 1 in self.crime_scenes:
                    pts += 2 * n
                else:
                    pts += n
            points[p] = pts
        hi, lo = max(points.values()), min(points.values())
        return {"t": round(t, 4), "ended": reason, "sheet": {p: list(v) for p, v in
                                                             self.sheet.items()},
                "supply": dict(self.supply), "crime_scenes": sorted(self.crime_scenes),
                "suspicion": points, "culprits": [p for p in points if points[p] == hi],
                "winners": [p for p in points if points[p] == lo]}

    # -- throws ------------------------------------------------------------------------

    def throw(self, t: float, cube: Cube, by: str, kind: str) -> float:
        """One throw; returns when the next may come (the table listens, then goes on)."""
        self.need(t, 2.5)
        if self.early is not None and self.early[0] == t:
            self.w.mishap("early_throw", t, after_close=round(t - self.early[1], 3))
        self.early = None
        rec = _throw_or_miss(self.w, t, cube, by=by, kind=kind, p_miss=0.04, p_rim=0.05,
                             turn=self.turn)
        self.log.append({"do": "throw", "color": cube.colour, "floor": rec["floor"]})
        return rec["t"] + self.u(1.0, 2.5)

    def from_supply(self, p: str) -> Cube:
        self.supply[p] -= 1
        return self.w.new_cube(p)

    def to_sheet(self, t: float, p: str, lv: int, n: int, exposed: list[Cube]) -> float:
        """``n`` of p's clues onto the sheet at floor lv; short supply comes out of the floor."""
        w = self.w
        for _ in range(n):
            if self.supply[p] > 0:
                self.supply[p] -= 1
            else:
                own = [c for c in exposed if c.colour == p]
                if own:  # the rulebook's end case: taken from the exposed floor
                    w.remove(t, lv, [own[0]])
                    exposed.remove(own[0])
                    t += 0.6
            self.sheet[p][lv] += 1
            if self.rng.random() < 0.05:
                w.into_box(t, w.kit.cube_mass_g)  # it goes in the box, and is fished out
                t += self.u(1.0, 2.0)
            w.sheet_place(t, w.kit.cube_mass_g, slap=bool(self.rng.random() < 0.2))
            t += self.u(0.5, 1.2)
        return t

    # -- the structure of a game --------------------------------------------------------

    def prologue(self, t: float) -> float:
        w = self.w
        knife = int(self.rng.integers(len(self.players)))
        self.phase = "prologue"
        for _ in range(2):
            t = self.throw(t, w.new_cube("red"), self.players[knife], "victim")
        order = [self.players[(knife + i) % len(self.players)] for i in range(len(self.players))]
        pending: list[tuple[str, int]] = [(p, i) for p in order for i in range(2)]
        i = 0
        while i < len(pending):
            p, _ = pending[i]
            if i + 1 < len(pending) and pending[i + 1][0] != p and self.rng.random() < 0.2:
                # The next player does not wait: two cubes in the shaft at once.
                q = pending[i + 1][0]
                self.need(t, 4.0)
                r1 = w.throw(t, self.from_supply(p), by=p, kind="prologue", turn=self.turn)
                r2 = w.throw(t + self.u(0.05, 0.4), self.from_supply(q), by=q, kind="prologue",
                             turn=self.turn)
                w.mishap("simultaneous", t, releases=[r1["t_release"], r2["t_release"]],
                         floors=[r1["floor"], r2["floor"]], by=[p, q])
                for r in (r1, r2):
                    self.log.append({"do": "throw", "color": r["colour"], "floor": r["floor"]})
                t = max(r1["t"], r2["t"]) + self.u(1.5, 3.0)
                i += 2
                continue
            t = self.throw(t, self.from_supply(p), p, "prologue")
            if pending[min(i + 1, len(pending) - 1)][0] != p:
                t += self.u(0.3, 1.5)  # the bag passes on
            i += 1
        self.phase = "act1"
        self.check_end()
        return t

    def choose_floor(self, inv: str) -> int:
        """Where the investigator looks: what was heard, blurred (players are no sensors)."""
        w, rng = self.w, self.rng
        if self.phase == "act1":
            targets = [lv for lv in range(8) for c in w.floors[lv] if c.colour == "red"]
        else:
            targets = [lv for lv in range(8) for c in w.floors[lv] if c.colour != "red"]
        r = rng.random()
        if targets and r < 0.45:
            return int(targets[int(rng.integers(len(targets)))])
        if targets and r < 0.75:
            lv = int(targets[int(rng.integers(len(targets)))]) + int(rng.choice([-1, 1]))
            return int(np.clip(lv, 0, 7))
        return int(rng.choice(8, p=np.array([0.4, 1, 1, 1, 1, 1, 1, 1]) / 7.4))

    def open_floor(self, t: float, k: int, inv: str) -> tuple[float, list[Cube]]:
        """Lift (sometimes the wrong stack first); returns the time and any fallen cubes."""
        w = self.w
        self.need(t, 16.0 + 2.5 * len(w.floors[k]))  # the lift must get its close
        if self.rng.random() < 0.15:
            wrong = int(np.clip(k + (1 if k < 7 and self.rng.random() < 0.6 else -1), 0, 7))
            if wrong != k:
                w.lift(t, wrong, by=inv, kind="wrong", tilt_fall=False)
                t_c = w.close(t + self.u(0.7, 2.2), wrong)
                w.mishap("wrong_lift", t, exposed=wrong, meant=k, t_close=round(t_c, 4))
                t = t_c + self.u(1.0, 2.5)
        fell = w.lift(t, k, by=inv, kind="inspect")
        return t, fell

    def shut(self, t: float, k: int) -> float:
        """Close the tower (sometimes askew and pushed home); returns the first throw-back time."""
        w = self.w
        askew = bool(self.rng.random() < 0.18)
        t_c = w.close(t, k, askew=askew)
        self.early = None
        if self.rng.random() < 0.3:
            # The thrower does not wait for the closing hand to leave the tower.
            w.steady(t_c, t_c + self.u(0.5, 1.2))
            t_next = t_c + self.u(0.15, 0.5)
            self.early = (t_next, t_c)
            return t_next
        return t_c + self.u(1.0, 2.5)

    def take_out(self, t: float, k: int, cubes: list[Cube]) -> tuple[float, list[Cube]]:
        """Every clue off the exposed floor, in pinches of 1-3; slips and put-backs included."""
        w = self.w
        taken: list[Cube] = []
        todo = list(cubes)
        while todo:
            n = min(len(todo), int(self.rng.integers(1, 4)))
            grab, todo = todo[:n], todo[n:]
            t += self.u(0.5, 1.3)
            w.remove(t, k, grab)
            taken += grab
            r = self.rng.random()
            if r < 0.1 or (r < 0.17 and len(grab) == 1):
                c = grab[-1]
                dropped = r < 0.1
                t_b = t + self.u(0.3, 0.9)
                w.put_back(t_b, k, c, dropped=dropped)
                taken.remove(c)
                w.mishap("drop_back" if dropped else "put_back", t_b, floor=k, colour=c.colour,
                         load_g=round(c.load_g(w.kit.share_slope_per_cm[k]), 4))
                todo.append(c)
                t = t_b + self.u(0.6, 1.4)  # find it again on the plate
        return t, taken

    def throw_back(self, t: float, inv: str, hand: list[Cube]) -> float:
        for c in hand:
            t = self.throw(t, c, inv, "throw_back")
        return t

    def penalty(self, t: float, inv: str, n: int) -> float:
        for _ in range(n):
            self.check_end()
            t = self.throw(t, self.from_supply(inv), inv, "penalty")
        return t

    def act1_turn(self, t: float, inv: str) -> float:
        w = self.w
        k = self.choose_floor(inv)
        t, fell = self.open_floor(t, k, inv)
        t += self.u(0.8, 2.0)
        here = list(w.floors[k])
        victims = [c for c in here if c.colour == "red"]
        if victims:
            w.remove(t, k, victims)
            self.crime_scenes.add(k)
            self.victims_found += len(victims)
            self.log.append({"do": "inspect", "by": inv, "floor": k})
            if self.rng.random() < 0.4:
                w.slap(t + 0.4, "victim found")
            t += self.u(0.6, 1.2)
            for _ in victims:
                w.sheet_place(t, w.kit.cube_mass_g)
                t += self.u(0.4, 0.8)
            clues = [c for c in w.floors[k]]
            for p in self.players:
                n = sum(c.colour == p for c in clues)
                if p != inv and n:
                    t = self.to_sheet(t, p, k, n, clues)
                    self.check_end()
        else:
            self.log.append({"do": "inspect", "by": inv, "floor": k})
        t, hand = self.take_out(t, k, list(w.floors[k]))
        t = self.shut(t + self.u(0.5, 1.5), k)
        t = self.throw_back(t, inv, hand + fell)
        if not victims:
            t = self.penalty(t, inv, 1)  # sloppy investigation
        if self.victims_found >= 2 and self.phase == "act1":
            self.phase = "act2"
            return t
        return t

    def act2_turn(self, t: float, inv: str) -> float:
        w, rng = self.w, self.rng
        own_on_sheet = sum(self.sheet[inv])
        if own_on_sheet and rng.random() < 0.35:  # covering your tracks
            lv_sheet = [lv for lv in range(8) if self.sheet[inv][lv]]
            k = (int(rng.choice(lv_sheet)) if rng.random() < 0.6 else self.choose_floor(inv))
            t, fell = self.open_floor(t + self.u(0.5, 1.5), k, inv)
            t += self.u(0.8, 2.0)
            mine = sum(c.colour == inv for c in w.floors[k])
            back = min(mine, self.sheet[inv][k])
            self.sheet[inv][k] -= back
            self.supply[inv] += back
            self.log.append({"do": "cover", "by": inv, "floor": k, "remove": back})
            t += back * self.u(0.4, 0.8)
            t, hand = self.take_out(t, k, list(w.floors[k]))
            t = self.shut(t + self.u(0.5, 1.5), k)
            t = self.throw_back(t, inv, hand + fell)
            if mine == 0:
                t = self.penalty(t, inv, 1)
            return t
        others = [p for p in self.players if p != inv]
        n_s = 1 if rng.random() < 0.6 or len(others) < 2 else 2
        suspects = [str(x) for x in rng.choice(others, size=n_s, replace=False)]
        if rng.random() < 0.3:
            w.slap(t, "accusation")
        theirs = [lv for lv in range(8) for c in w.floors[lv] if c.colour in suspects]
        k = (int(theirs[int(rng.integers(len(theirs)))]) if theirs and rng.random() < 0.55
             else self.choose_floor(inv))
        t, fell = self.open_floor(t + self.u(0.5, 1.5), k, inv)
        t += self.u(0.8, 2.0)
        self.log.append({"do": "suspect", "by": inv, "suspects": suspects, "floor": k})
        clues = list(w.floors[k])
        ground_fail = k == 0 and not any(c.colour == inv for c in clues)
        if not ground_fail:
            for p in suspects:
                n = sum(c.colour == p for c in clues)
                if n:
                    t = self.to_sheet(t, p, k, n, clues)
                    self.check_end()
        t, hand = self.take_out(t, k, list(w.floors[k]))
        t = self.shut(t + self.u(0.5, 1.5), k)
        if ground_fail:
            t = self.penalty(t, inv, len(suspects))
            t = self.throw_back(t, inv, hand + fell)
        else:
            t = self.throw_back(t, inv, hand + fell)
            misses = sum(1 for p in suspects if not any(c.colour == p for c in clues))
            t = self.penalty(t, inv, misses)
        return t

    def between_turns(self, t: float, inv: str) -> float:
        """The table talks, thinks, spills and fidgets before the next action."""
        w, rng = self.w, self.rng
        t += self.u(2.0, 6.0)
        self.need(t, 5.0)
        r = rng.random()
        if r < 0.18:  # a long discussion: near silence but for voices, and drift
            long = w.duration >= 600
            dur = self.u(30, 150) if long else self.u(8, 22)
            dur = min(dur, max(0.0, w.t_end - t - 20))
            if dur > 5:
                w.mishap("pause", t, t_end=round(t + dur, 4))
                if rng.random() < 0.45 and dur > 6:
                    peeker = self.players[int(rng.integers(len(self.players)))]
                    tp = t + self.u(2.0, dur - 3.0)
                    w.peek(tp, int(rng.integers(1, 8)), peeker)
                t += dur
        elif r < 0.3:
            by = self.players[int(rng.integers(len(self.players)))]
            w.bump(t, by)
            t += self.u(1.5, 3.0)
        elif r < 0.36:
            t = w.cat(t) + self.u(1.0, 2.0)
        elif r < 0.42:
            w.poke(t)
            t += self.u(1.5, 2.5)
        elif r < 0.5 and t + 6 < w.t_end:
            # A child takes a cube from a supply and drops it in, out of turn.
            p = self.players[int(rng.integers(len(self.players)))]
            if self.supply[p] > 0:
                c = self.from_supply(p)
                rec = w.throw(t, c, by="child", kind="child", turn=self.turn)
                self.log.append({"do": "throw", "color": p, "floor": rec["floor"],
                                 "note": "out of turn"})
                w.mishap("child_drop", t, colour=p, floor=rec["floor"], landing_t=rec["t"])
                t = rec["t"] + self.u(2.0, 4.0)
                self.check_end()
        return t

    def play(self, t: float, spill_at: float) -> float:
        w = self.w
        self.reset()
        t = self.prologue(t)
        first = int(self.rng.integers(len(self.players)))
        while True:
            if t > spill_at:
                self.need(t, 22.0)
                t = w.spill(t, bool(self.rng.random() < 0.5)) + self.u(2.0, 4.0)
                spill_at = math.inf
            inv_i = (first + self.turn) % len(self.players)
            inv = self.players[inv_i]
            self.need(t, 14.0)
            if self.phase == "act1":
                before = self.victims_found
                t = self.act1_turn(t, inv)
                self.turn += 1
                if self.phase == "act2" and before < 2:
                    # Act II starts with the player after the one who found the second victim.
                    first = (inv_i + 1) - self.turn
            else:
                t = self.act2_turn(t, inv)
                self.turn += 1
            self.check_end()
            t = self.between_turns(t, inv)

    def after_game(self, t: float) -> float:
        """Game over: the tower is opened at the ground floor and emptied, then a new game."""
        w = self.w
        t += self.u(4.0, 10.0)
        self.need(t, 10.0)
        w.lift(t, 0, by=self.players[0], kind="reveal", tilt_fall=False)
        t += self.u(1.5, 3.0)
        if w.floors[0]:
            w.remove(t, 0, list(w.floors[0]))
            t += self.u(0.8, 1.5)
        # The stack is turned over above the table: its cubes rain out (no sensor sees them).
        n = sum(len(f) for f in w.floors[1:])
        for lv in range(1, 8):  # unseen: their cells are in the lifted stack
            w.step(t, lv, -w.static_g(lv))
            w.floors[lv].clear()
        t = w.pour(t, max(n, 1), kind="empty_tower") + self.u(1.0, 2.0)
        t = w.close(t, 0) + self.u(3.0, 6.0)
        return t


def scenario_game(w: World) -> dict[str, Any]:
    rng = w.rng
    n_pl = int(rng.choice([3, 4, 4, 5, 5, 6]))
    players = [str(p) for p in rng.permutation(COLOURS)[:n_pl]]
    g = Game(w, players)
    t = QUIET_S + g.u(0.5, 1.5)
    for _ in range(n_pl if w.duration >= 60 else 0):  # everyone pours out their clues
        t = w.pour(t, 20) + g.u(0.2, 0.8)
    t += g.u(1.0, 3.0) if w.duration >= 60 else 0.0
    spill_at = g.u(0.15, 1.0) * w.duration if rng.random() < 0.35 else math.inf
    w.talk(QUIET_S + 0.4, w.duration, float(rng.uniform(0.3, 0.9)))
    while True:
        try:
            t = g.play(t, spill_at)
        except GameOver as over:
            g.phase = "over"
            g.results.append(g.final(str(over), w.latest()))
            try:
                t = g.after_game(w.latest())
            except OutOfTime:
                break
            continue
        except OutOfTime:
            break
    return {"players": players, "games_started": g.games, "phase": g.phase,
            "crime_scenes": sorted(g.crime_scenes), "sheet": g.sheet, "supply": g.supply,
            "turns": g.turn, "script": g.log, "results": g.results,
            "tower": {"red" if c == "red" else c: [sum(x.colour == c for x in w.floors[lv])
                                                   for lv in range(8)]
                      for c in ["red", *players]}}


# --------------------------------------------------------------------------------------------
# Sensors: piezo front end + ADC, plates on load cells + HX711s, firmware framing.
# --------------------------------------------------------------------------------------------


def _contact_gain(f: Arr, tau: float) -> Arr:
    """Spectrum of a half-sine contact pulse of length ``tau`` at ``f``, 1 at DC."""
    x = 2 * f * tau
    with np.errstate(divide="ignore", invalid="ignore"):
        h = np.abs(np.cos(np.pi * f * tau) / (1 - x * x))
    return np.where(np.abs(1 - x * x) < 1e-6, np.pi / 4, h)


def impact_wave(kit: Kit, imp: Impact) -> tuple[int, Arr]:
    """(first set index, (W, 8) counts) of one impact as the eight piezos hear it."""
    ch = np.arange(8)
    if imp.site == TABLE:
        mnss = imp.j_ns * 1e3 * 0.1 / max(imp.dist_m, 0.05)
        amp = kit.piezo_gain / kit.piezo_gain.mean() * kit.table_gain * mnss
        amp = amp * kit.table_up ** ch
        delay = 0.0002 + ch * 0.00015
        f = np.concatenate([np.broadcast_to(kit.table_f, (8, 3)), kit.mode_f], axis=1)
        q = np.concatenate([np.broadcast_to(kit.table_q, (8, 3)), kit.mode_q], axis=1)
        wts = np.concatenate([np.broadcast_to([1.0, 0.6, 0.3], (8, 3)), 0.3 * kit.mode_w], axis=1)
    else:
        dist = np.abs(ch - imp.site).astype(float)
        amp = kit.piezo_gain * imp.j_ns * 1e3 * kit.crosstalk ** dist
        if imp.wall and imp.site != ROOF:
            amp = amp * 0.5  # heard through the walls, not struck on the disc's own plate
        delay = dist * 0.00012
        f, q, wts = kit.mode_f, kit.mode_q, kit.mode_w
    hc = _contact_gain(f, imp.tau_s)
    wts = wts * hc
    wts = wts / np.maximum(np.abs(wts).sum(axis=1, keepdims=True), 1e-12) * hc.max(axis=1,
                                                                                   keepdims=True)
    tau_m = q / (np.pi * f)
    n = int(min(0.5, 5 * float(tau_m.max())) * FS) + 2
    i0 = int(math.floor(imp.t * FS))
    tt = (i0 + np.arange(n))[:, None] / FS + ch[None, :] * MUX_S - imp.t - delay[None, :]
    arg = 2 * np.pi * f[None, :, :] * tt[:, :, None]
    wave = (wts[None] * np.exp(-np.maximum(tt, 0)[:, :, None] / tau_m[None])
            * np.sin(arg)).sum(axis=2)
    wave = np.where(tt >= 0, wave, 0.0) * amp[None, :]
    return i0, wave


_SOS_CACHE: dict[tuple[float, float], Arr] = {}


def _band(lo: float, hi: float) -> Arr:
    key = (lo, hi)
    if key not in _SOS_CACHE:
        _SOS_CACHE[key] = np.asarray(signal.butter(2, [lo, min(hi, 0.45 * FS)], "bandpass",
                                                   fs=FS, output="sos"))
    return _SOS_CACHE[key]


def piezo_events(w: World, n_sets: int, rng: np.random.Generator) -> Arr:
    """What the discs make of the world's impacts and rumbles, AC-coupled: (n_sets, 8) counts."""
    kit = w.kit
    sig = np.zeros((n_sets, 8))
    for imp in w.impacts:
        i0, wave = impact_wave(kit, imp)
        if i0 >= n_sets:
            continue
        a, b = max(i0, 0), min(i0 + len(wave), n_sets)
        sig[a:b] += wave[a - i0:b - i0]
    for rb in w.rumbles:
        a, b = max(int(rb.t0 * FS), 0), min(int(rb.t1 * FS), n_sets)
        if b - a < 8:
            continue
        n = b - a
        sos = _band(rb.lo_hz, rb.hi_hz)
        raw = signal.sosfilt(sos, rng.standard_normal((n, 9)), axis=0)
        raw /= max(float(raw.std()), 1e-9)
        mix = rb.common * raw[:, :1] + math.sqrt(1 - rb.common**2) * raw[:, 1:]
        env = np.sin(np.pi * np.arange(n) / n) ** 0.5
        if rb.am_hz > 0:
            env = env * (0.55 + 0.45 * np.sin(2 * np.pi * rb.am_hz * np.arange(n) / FS
                                              + float(rng.uniform(0, 6.3))))
        sig[a:b] += mix * env[:, None] * rb.amp[None, :]
    return ac_couple(kit, sig)


def ac_couple(kit: Kit, sig: Arr) -> Arr:
    """The disc's coupling capacitor into the mid-scale bias divider: one pole, high-pass."""
    out = np.empty_like(sig)
    for c in range(8):
        a = 1.0 / (1.0 + 2 * np.pi * kit.hpf_hz[c] / FS)
        out[:, c] = signal.lfilter([a, -a], [1.0, -a], sig[:, c])
    return out


def render_piezo(w: World, n_sets: int, rng: np.random.Generator, connected: NDArray[np.bool_]
                 ) -> NDArray[np.uint16]:
    """The (n_sets, 8) ADC codes: events, hum, noise, the mux's memory, 10 bits."""
    kit = w.kit
    sig = piezo_events(w, n_sets, rng)
    hum_ph = rng.uniform(0, 2 * np.pi, 8)
    codes = np.empty((n_sets, 8), np.uint16)
    last = 0.0  # channel 7 of the set before: the mux converts it just before channel 0
    step = 60 * FS  # in pieces: half-hour recordings stay small in memory
    for a in range(0, n_sets, step):
        b = min(a + step, n_sets)
        t = np.arange(a, b)[:, None] / FS + np.arange(8)[None, :] * MUX_S
        hum = np.sin(2 * np.pi * kit.hum_hz * t + hum_ph[None, :])
        conn = connected[a:b]
        dev = np.where(conn, sig[a:b] + kit.hum[None, :] * hum, kit.hum_open[None, :] * hum)
        dev += rng.standard_normal((b - a, 8)) * kit.piezo_noise[None, :]
        # The sample-and-hold keeps a little of the channel converted before (more if no disc).
        prev = np.concatenate([np.concatenate([[last], dev[:-1, 7]])[:, None], dev[:, :7]],
                              axis=1)
        last = float(dev[-1, 7])
        dev = dev + np.where(conn, kit.ghost, kit.ghost_open) * prev
        codes[a:b] = np.clip(np.round(kit.piezo_bias[None, :] + dev), 0, 1023)
    return codes


def _connected_mask(w: World, n_sets: int) -> NDArray[np.bool_]:
    mask = np.ones((n_sets, 8), bool)
    for t0, t1, lv in w.off:
        a = max(int(math.ceil(t0 * FS)), 0)
        b = n_sets if t1 == math.inf else min(int(math.ceil(t1 * FS)), n_sets)
        mask[a:b, lv] = False
    return mask


def render_force(w: World, n: int) -> Arr:
    """Force on each load cell beyond the empty plate, in grams, on the 2 kHz grid."""
    kit = w.kit
    f = np.zeros((n + 1, 8))
    step_d = np.zeros((n + 1, 8))
    for t, lv, dg, rise in w.steps:
        if dg == 0.0:
            continue
        i0 = int(math.ceil(t * FS))
        m = max(int(rise * FS), 1)
        if i0 >= n:
            continue
        i0 = max(i0, 0)
        ramp = (np.arange(1, m + 1) / m)[: n - i0]
        f[i0:i0 + len(ramp), lv] += dg * ramp
        if i0 + m <= n:
            step_d[i0 + m, lv] += dg
    np.cumsum(step_d, axis=0, out=step_d)
    f += step_d
    del step_d
    for t, lv, j in w.kicks:
        om = 2 * np.pi * kit.plate_f_hz[lv]
        z = kit.plate_zeta[lv]
        od = om * math.sqrt(1 - z * z)
        i0 = int(math.ceil(t * FS))
        m = int(6 / (z * om) * FS) + 1
        if i0 >= n:
            continue
        tt = (i0 + np.arange(m)[: n - i0]) / FS - t
        f[i0:i0 + len(tt), lv] += (j * om * om / od * np.exp(-z * om * tt) * np.sin(od * tt)
                                   / G * 1000)
    for t0, dur, lv, peak in w.presses:
        i0, i1 = max(int(t0 * FS), 0), min(int((t0 + dur) * FS), n)
        if i1 > i0:
            f[i0:i1, lv] += peak * np.sin(np.pi * (np.arange(i0, i1) / FS - t0) / dur).clip(0)
    for t, lv, amp, fr, tau in w.shakes:
        i0 = max(int(math.ceil(t * FS)), 0)
        m = int(5 * tau * FS) + 1
        if i0 >= n:
            continue
        tt = (i0 + np.arange(m)[: n - i0]) / FS - t
        f[i0:i0 + len(tt), lv] += amp * np.exp(-tt / tau) * np.sin(2 * np.pi * fr * tt)
    for t0, dur, a_peak in w.carries:
        # Up, carried, down: a = a_peak * sin(2 pi t/dur) (lift then brake), plus a tilt.
        i0, i1 = max(int(t0 * FS), 0), min(int((t0 + dur) * FS), n)
        if i1 <= i0:
            continue
        tt = np.arange(i0, i1) / FS - t0
        acc = a_peak * np.sin(2 * np.pi * tt / dur) + 0.4 * np.sin(2 * np.pi * 3.1 * tt)
        tilt = 1 - np.cos(np.radians(8) * np.sin(np.pi * tt / dur))
        for lv in range(8):
            total = kit.plate_mass_g[lv] + f[i0:i1, lv]
            f[i0:i1, lv] += total * (acc / G - tilt)
    return f[:n]


@dataclass
class LoadStream:
    t_read: Arr  # stream seconds
    valid: NDArray[np.int64]
    values: NDArray[np.int64]  # (M, 8) counts (0 where not valid)
    timeouts: NDArray[np.int64]  # cumulative HX711 timeouts at each read


def render_load(w: World, n_sets: int, rng: np.random.Generator) -> LoadStream:
    """Eight HX711s on their own oscillators, read in parallel by the firmware."""
    kit = w.kit
    dur = n_sets / FS
    csum = np.zeros((n_sets + 1, 8))
    np.cumsum(render_force(w, n_sets), axis=0, out=csum[1:])
    boot_s = kit.boot_to_first_set_us / 1e6
    conv_t: list[Arr] = []
    conv_v: list[Arr] = []
    conv_e: list[Arr] = []  # when the chip that made the conversion loses its contacts
    for c in range(8):
        period = 1 / kit.chip_rate_hz[c]
        spans = sorted((t0, t1) for t0, t1, lv in w.off if lv == c)
        on = [(-boot_s + kit.wake_s[c], math.inf)]
        for t0, t1 in spans:  # contacts open: the chip loses power until they close
            last = on.pop()
            on.append((last[0], t0))
            if t1 != math.inf:
                on.append((t1 + kit.wake_s[c], math.inf))
        times: list[Arr] = []
        settle: list[Arr] = []
        ends: list[Arr] = []
        for a, b in on:
            b = min(b, dur + 0.1)
            if b <= a:
                continue
            ts = a + (np.arange(int((b - a) / period) + 1) + 1) * period
            ts = ts[ts < b]
            times.append(ts)
            ends.append(np.full(len(ts), b))
            s = np.ones(len(ts))
            s[:3] = [0.3, 0.8, 0.97][: len(s[:3])]  # the digital filter fills after power-up
            settle.append(s)
        tc = np.concatenate(times) if times else np.zeros(0)
        sc = np.concatenate(settle) if settle else np.zeros(0)
        conv_e.append(np.concatenate(ends) if ends else np.zeros(0))
        # Each conversion averages the input over its period (sinc-like, taken as a boxcar).
        i1 = np.clip(np.round(tc * FS).astype(int), 0, n_sets)
        i0 = np.clip(np.round((tc - period) * FS).astype(int), 0, n_sets)
        mean = np.where(i1 > i0, (csum[i1, c] - csum[i0, c]) / np.maximum(i1 - i0, 1), 0.0)
        drift = kit.drift_g_per_min[c] * tc / 60 + np.cumsum(
            rng.standard_normal(len(tc)) * kit.walk_g_per_sqrt_s[c] * math.sqrt(period))
        counts = kit.offset[c] + kit.cpg[c] * (mean + drift) + rng.standard_normal(len(tc)) * \
            kit.load_noise[c]
        counts = np.clip(np.round(counts * sc), -(2**23), 2**23 - 1)
        conv_t.append(tc)
        conv_v.append(counts)
    # The firmware: wait until every chip read last time is ready again (or 1.6 periods
    # have passed), clock all eight out together; a chip that did not answer drops out
    # (a timeout) until it is seen ready again.
    timeout = 1.6 / LOAD_NOMINAL_HZ
    # Loads stream once the first PIEZO is out, so that PIEZO starts stream time.
    t_start = kit.sets_per_msg / FS + 0.0005
    ptr = [int(np.searchsorted(conv_t[c], t_start, side="right")) for c in range(8)]
    expect = {c for c in range(8) if ptr[c] < len(conv_t[c])}
    t_last = t_start
    out_t: list[float] = []
    out_valid: list[int] = []
    out_vals: list[list[int]] = []
    out_to: list[int] = []
    n_timeouts = 0
    ct = [x.tolist() for x in conv_t]
    cv = [x.tolist() for x in conv_v]
    ce = [x.tolist() for x in conv_e]
    while True:
        for c in range(8):  # a chip whose contacts opened can no longer be read out
            while ptr[c] < len(ct[c]) and ce[c][ptr[c]] <= t_last:
                ptr[c] += 1
        nxt = [ct[c][ptr[c]] if ptr[c] < len(ct[c]) else math.inf for c in range(8)]
        waits = [nxt[c] for c in expect]
        if waits and max(waits) <= t_last + timeout:
            t_read = max(waits)
        elif waits:
            t_read = t_last + timeout
        else:
            t_read = min(nxt)
        t_read += float(rng.uniform(20e-6, 120e-6))  # the main loop's polling
        if t_read >= dur - 0.001:
            break
        valid = 0
        vals = [0] * 8
        ready = set()
        for c in range(8):
            if nxt[c] <= t_read:
                while ptr[c] + 1 < len(ct[c]) and ct[c][ptr[c] + 1] <= t_read:
                    ptr[c] += 1  # an unread conversion is overwritten by the next
                if ce[c][ptr[c]] <= t_read:
                    continue  # ready, but gone with its module before the clocks came
                vals[c] = int(cv[c][ptr[c]])
                ptr[c] += 1
                valid |= 1 << c
                ready.add(c)
        n_timeouts += len(expect - ready)
        expect = ready
        t_last = t_read
        out_t.append(t_read)
        out_valid.append(valid)
        out_vals.append(vals)
        out_to.append(n_timeouts)
    return LoadStream(np.array(out_t), np.array(out_valid, np.int64),
                      np.array(out_vals, np.int64).reshape(-1, 8), np.array(out_to, np.int64))


def _rows_with_crc(rows: NDArray[np.uint8]) -> NDArray[np.uint8]:
    crc = crc16_rows(rows)
    tail = np.stack([crc & 0xFF, crc >> 8], axis=1).astype(np.uint8)
    return cobs_encode_rows(np.concatenate([rows, tail], axis=1))


def _le(values: NDArray[Any], nbytes: int) -> NDArray[np.uint8]:
    wide = 2 if nbytes == 2 else 4
    v = (np.asarray(values).astype(np.int64) & ((1 << (8 * nbytes)) - 1)).astype(f"<u{wide}")
    return np.ascontiguousarray(v).view(np.uint8).reshape(*v.shape, wide)[..., :nbytes]


def encode_stream(kit: Kit, codes: NDArray[np.uint16], loads: LoadStream) -> bytes:
    """The device's byte stream: HELLO at boot, then PIEZO, LOAD and STATUS as emitted."""
    t0 = kit.boot_to_first_set_us
    b = kit.sets_per_msg
    n_msg = len(codes) // b
    # Emission times (device microseconds) and a tie-break order per kind.
    p_emit = t0 + ((np.arange(n_msg) + 1) * b - 1) * 500 + 40
    l_us = t0 + np.round(loads.t_read * 1e6).astype(np.int64)
    l_emit = l_us + 260  # 24 clocks in parallel, then the frame
    end_us = t0 + n_msg * b * 500
    keep = l_emit < end_us
    l_us, l_emit = l_us[keep], l_emit[keep]
    s_emit = np.arange(1, int(end_us // 1_000_000) + 1, dtype=np.int64) * 1_000_000 + 300
    s_emit = s_emit[s_emit < end_us]
    emit = np.concatenate([[1200], p_emit, l_emit, s_emit])
    kind = np.concatenate([[0], np.full(n_msg, 1), np.full(len(l_emit), 2),
                           np.full(len(s_emit), 3)])
    idx = np.concatenate([[0], np.arange(n_msg), np.arange(len(l_emit)), np.arange(len(s_emit))])
    order = np.lexsort((kind, emit))
    seq = np.empty(len(order), np.int64)
    seq[order] = np.arange(len(order))
    seq_of = {k: seq[kind == k] for k in range(4)}
    # HELLO
    hello = bytes([1, *kit.fw, 8, 8]) + FS.to_bytes(2, "little") + \
        LOAD_NOMINAL_HZ.to_bytes(2, "little") + bytes([10]) + kit.device_id
    enc: dict[int, list[bytes]] = {0: [frame(0x01, int(seq_of[0][0]), hello)]}
    # PIEZO
    if n_msg:
        samples = codes[: n_msg * b].reshape(n_msg, b * 8)
        rows = np.concatenate([
            np.full((n_msg, 1), 0x02, np.uint8), _le(seq_of[1], 2),
            _le((p_emit - 40 - (b - 1) * 500) & 0xFFFFFFFF, 4),
            np.full((n_msg, 1), b, np.uint8),
            _le(samples, 2).reshape(n_msg, b * 16)], axis=1)
        enc[1] = [r.tobytes() for r in _rows_with_crc(rows)]
    else:
        enc[1] = []
    # LOAD
    m = len(l_emit)
    if m:
        vals = loads.values[keep]
        rows = np.concatenate([
            np.full((m, 1), 0x03, np.uint8), _le(seq_of[2], 2), _le(l_us & 0xFFFFFFFF, 4),
            loads.valid[keep].astype(np.uint8)[:, None], _le(vals, 3).reshape(m, 24)], axis=1)
        enc[2] = [r.tobytes() for r in _rows_with_crc(rows)]
    else:
        enc[2] = []
    # STATUS, once a second of uptime
    st = []
    for i, te in enumerate(s_emit):
        up_ms = int(te // 1000)
        t_s = (te - t0) / 1e6
        j = int(np.searchsorted(loads.t_read, t_s))
        tos = int(loads.timeouts[j - 1]) if j > 0 else 0
        body = (up_ms.to_bytes(4, "little") + (0).to_bytes(2, "little")
                + (0).to_bytes(2, "little") + (tos & 0xFFFF).to_bytes(2, "little")
                + bytes([kit.cpu_load_pct + (i * 7) % 5, 0]))
        st.append(frame(0x04, int(seq_of[3][i]), body))
    enc[3] = st
    return b"".join(enc[int(kind[o])][int(idx[o])] for o in order)


# --------------------------------------------------------------------------------------------
# One recording.
# --------------------------------------------------------------------------------------------

SCENARIO_SCRIPTS: dict[str, Callable[[World], Any]] = {
    "single": scenario_single, "rapid": scenario_rapid, "noisy": scenario_noisy,
    "game": scenario_game,
}


def render(w: World, sensor_rng: np.random.Generator) -> bytes:
    """The device's bytes for what happened in ``w``."""
    n_sets = int(round(w.duration * FS))
    n_sets -= n_sets % w.kit.sets_per_msg
    connected = _connected_mask(w, n_sets)
    codes = render_piezo(w, n_sets, sensor_rng, connected)
    loads = render_load(w, n_sets, sensor_rng)
    return encode_stream(w.kit, codes, loads)


def simulate(seed: int, scenario: str, duration_s: float) -> tuple[World, bytes, dict[str, Any]]:
    """The world, the bytes and the truth of one recording."""
    if scenario not in SCENARIO_SCRIPTS:
        raise ValueError(f"unknown scenario {scenario!r}")
    kit = make_kit(seed)
    code = SCENARIOS.index(scenario)
    w = World(kit, np.random.default_rng([seed, 0xAA, 2, code]), float(duration_s))
    extra = SCENARIO_SCRIPTS[scenario](w) or {}
    raw = render(w, np.random.default_rng([seed, 0xAA, 3, code]))
    truth = make_truth(w, scenario, seed, float(duration_s), extra)
    return w, raw, truth


def make_truth(w: World, scenario: str, seed: int, duration_s: float, extra: dict[str, Any]
               ) -> dict[str, Any]:
    """The truth file's content; every event lies after the quiet start and before the end."""
    for kind in (w.landings, w.knockdowns, w.removals, w.lifts, w.closes, w.knocks, w.mishaps):
        for x in kind:
            assert QUIET_S <= x["t"] < duration_s - 0.5, (scenario, seed, x)
            assert x.get("t_end", x["t"]) < duration_s, (scenario, seed, x)

    def by_t(xs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return sorted(xs, key=lambda x: x["t"])

    landings = []
    for x in by_t(w.landings):
        y = dict(x)
        if not y.get("caused_knockdown"):
            y.pop("caused_knockdown", None)
        landings.append(y)
    return {
        "format": FORMAT, "model": MODEL, "scenario": scenario, "seed": seed,
        "duration_s": duration_s, "cells": w.kit.cells,
        "landings": landings, "knockdowns": by_t(w.knockdowns),
        "removals": by_t(w.removals), "lifts": by_t(w.lifts), "closes": by_t(w.closes),
        "knocks": by_t(w.knocks), "damage": [],
        "mishaps": sorted(w.mishaps, key=lambda x: (x["t"], x["kind"])),
        "quiet_s": QUIET_S, "tower": w.kit.summary(),
        **({"game": extra} if extra else {}),
    }


def generate(seed: int, scenario: str, duration_s: float) -> tuple[bytes, dict[str, Any]]:
    """The recording's bytes and its truth (``towerear-crosscheck-truth/1``)."""
    _w, raw, truth = simulate(seed, scenario, duration_s)
    return raw, truth


def make_recording(seed: int, scenario: str, duration_s: float, out: Path) -> tuple[Path, Path]:
    """Write ``{scenario}_t{seed}.bin`` and its ``.truth.json`` into ``out``."""
    raw, truth = generate(seed, scenario, duration_s)
    out.mkdir(parents=True, exist_ok=True)
    bin_path = out / f"{scenario}_t{seed}.bin"
    truth_path = out / f"{scenario}_t{seed}.truth.json"
    bin_path.write_bytes(raw)
    truth_path.write_text(json.dumps(truth, indent=1, sort_keys=True))
    return bin_path, truth_path


def _job(args: tuple[int, str, float, str]) -> str:
    seed, scenario, duration, out = args
    make_recording(seed, scenario, duration, Path(out))
    return f"{scenario}_t{seed}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--towers", type=int, default=8)
    p.add_argument("--first-seed", type=int, default=1)
    p.add_argument("--duration", type=float, default=120.0)
    p.add_argument("--scenarios", nargs="+", default=list(SCENARIOS))
    p.add_argument("--workers", type=int, default=1)
    args = p.parse_args(argv)
    unknown = [s for s in args.scenarios if s not in SCENARIOS]
    if unknown:
        print(f"unknown scenario {unknown[0]!r}; known: {', '.join(SCENARIOS)}", file=sys.stderr)
        return 2
    if args.duration < 10:
        print(f"--duration {args.duration} is too short (at least 10 s)", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    jobs = [(seed, sc, float(args.duration), str(args.out))
            for seed in range(args.first_seed, args.first_seed + args.towers)
            for sc in args.scenarios]
    if args.workers > 1:
        with ProcessPoolExecutor(max_workers=args.workers) as ex:
            list(ex.map(_job, jobs))
    else:
        for job in jobs:
            _job(job)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
