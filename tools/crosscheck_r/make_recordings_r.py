#!/usr/bin/env python3
"""Cross-check model R: real electronics, real rooms, real players.

An independent generator of towerear recordings (contracts.md sections 1-2) with their
ground truth (``towerear-crosscheck-truth/1``, read by tools/crosscheck/score.py). Written
from /work/shared/design.md, contracts.md and the rules only; it imports no project code and
has its own CRC-16/CCITT-FALSE and COBS encoder. Every number is explained in README.md.

Usage::

    .venv/bin/python tools/crosscheck_r/make_recordings_r.py --out DIR --towers 8 \
        --first-seed 1 --duration 120 [--scenarios single rapid noisy game long damaged \
        acoustic] [--long-duration 1800] [--workers 2]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from scipy import signal

FORMAT = "towerear-crosscheck-truth/1"
SCENARIOS = ("single", "rapid", "noisy", "game", "long", "damaged", "acoustic")
DEFAULT_SCENARIOS = ("single", "rapid", "noisy", "game")
SCENARIO_CODE = {name: i + 1 for i, name in enumerate(SCENARIOS)}
COLOURS = ("yellow", "blue", "brown", "gray", "black", "white")

FS = 2000  # piezo sample sets per second (device clock)
FM = 1000  # mechanical grid of the load path, samples per second
PRE_S = 1.0  # the mechanical grid starts this long before stream time 0
GRAV = 9.81
N_LEV = 8
LEVELS = np.arange(N_LEV, dtype=float)
MODULE_H = 0.031  # m, 25 cm tower / 8 modules
CUBE_EDGE = 0.009  # m
CLEARANCE = MODULE_H - CUBE_EDGE  # m a cube can bounce before it meets the plate above
V_REF = math.sqrt(2 * GRAV * MODULE_H)  # m/s, a cube dropped through one module
J_REF = 0.5e-3 * V_REF * 1.4  # N s, a 0.5 g cube landing from one module (e = 0.4)
ADC_SKEW_S = 52e-6  # one ATmega conversion (13 ADC clocks at 250 kHz): channel k is k*52 us late
COUNTS_PER_G_PER_MVV = 2**24 * 128 * 1e-3 / 100.0  # HX711 gain 128, 100 g cell, per mV/V
QUIET_S = 4.0


# --------------------------------------------------------------------------------------------
# Wire encoder (contracts.md section 1), written from the contract text


def _crc_table() -> list[int]:
    table = []
    for byte in range(256):
        crc = byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) & 0xFFFF if crc & 0x8000 else (crc << 1) & 0xFFFF
        table.append(crc)
    return table


_CRC_TABLE = _crc_table()
_CRC_TABLE_NP = np.array(_CRC_TABLE, np.int32)


def crc16_ccitt_false(data: bytes) -> int:
    """CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, not reflected), table driven."""
    crc = 0xFFFF
    for b in data:
        crc = ((crc << 8) & 0xFFFF) ^ _CRC_TABLE[((crc >> 8) ^ b) & 0xFF]
    return crc


def crc16_ccitt_false_reference(data: bytes) -> int:
    """The same CRC bit by bit, as the contract states it (a second implementation)."""
    crc = 0xFFFF
    for b in data:
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) & 0xFFFF if crc & 0x8000 else (crc << 1) & 0xFFFF
    return crc


def crc16_rows(rows: np.ndarray) -> np.ndarray:
    """The CRC of every row of a (n, L) uint8 array (many messages of one length at once)."""
    crc = np.full(rows.shape[0], 0xFFFF, np.int32)
    for col in range(rows.shape[1]):
        crc = ((crc << 8) & 0xFFFF) ^ _CRC_TABLE_NP[((crc >> 8) ^ rows[:, col]) & 0xFF]
    return crc


def cobs_encode(data: bytes) -> bytes:
    """Consistent Overhead Byte Stuffing of one message (without the 0x00 delimiter)."""
    out = bytearray()
    chunks = data.split(b"\x00")
    last = len(chunks) - 1
    for i, chunk in enumerate(chunks):
        while len(chunk) >= 254:
            out.append(0xFF)
            out += chunk[:254]
            chunk = chunk[254:]
            if not chunk and i == last:
                return bytes(out)
        out.append(len(chunk) + 1)
        out += chunk
    return bytes(out)


def cobs_encode_rows(rows: np.ndarray) -> np.ndarray:
    """COBS of every row of a (n, L) uint8 array, each followed by the 0x00 delimiter."""
    n, length = rows.shape
    if length >= 254:
        enc = [np.frombuffer(cobs_encode(r.tobytes()) + b"\x00", np.uint8) for r in rows]
        return np.array(enc, np.uint8)
    out = np.zeros((n, length + 2), np.uint8)
    if length == 0:
        out[:, 0] = 1
        return out
    col = np.arange(length, dtype=np.uint8)
    for a in range(0, n, 8192):  # in blocks that stay in the cache
        r = rows[a:a + 8192]
        zero = r == 0
        pos = np.where(zero, col, np.uint8(length))
        nxt = np.minimum.accumulate(pos[:, ::-1], axis=1)[:, ::-1]  # first zero at or after i
        after = np.empty_like(nxt)
        after[:, :-1] = nxt[:, 1:]
        after[:, -1] = length
        out[a:a + 8192, 0] = nxt[:, 0] + 1
        out[a:a + 8192, 1:length + 1] = np.where(zero, after - col, r)
    return out


def frame(msg_type: int, seq: int, body: bytes) -> bytes:
    """One framed message: COBS(type | seq | body | crc) + 0x00."""
    raw = bytes([msg_type]) + (seq & 0xFFFF).to_bytes(2, "little") + body
    raw += crc16_ccitt_false(raw).to_bytes(2, "little")
    return cobs_encode(raw) + b"\x00"


# --------------------------------------------------------------------------------------------
# The tower: a kit as built by one team (drawn per seed)


@dataclass
class Tower:
    """A towerear kit's drawn parameters (every array is per level 0..7)."""

    seed: int
    cells: str
    cpg: np.ndarray
    offset: np.ndarray
    noise_g: np.ndarray
    bad_chip: int
    load_rate_nominal: int
    chip_rate: np.ndarray
    load_rate_hello: int
    piezo_rate_hello: int
    plate_mass_g: np.ndarray
    f_mech: np.ndarray
    zeta_mech: np.ndarray
    tc_zero_g_per_c: np.ndarray
    creep_frac: np.ndarray
    creep_tau_s: np.ndarray
    selfheat_g: np.ndarray
    selfheat_tau_s: np.ndarray
    resettle_g: float
    glitch_shift_per_min: float
    glitch_pdown_per_min: float
    b_reading: np.ndarray
    cube_mass_g: float
    colour_factor: dict[str, float]
    bias: np.ndarray
    noise_codes: np.ndarray
    disc_gain: np.ndarray
    fe_codes: float
    mode_f: np.ndarray  # (4, 8): three plate modes and the plate-on-cell bounce
    mode_tau: np.ndarray
    mode_w: np.ndarray
    hp_tau_s: float
    k_static: float
    k_acc: float
    clip_lo: float
    clip_hi: float
    ghost: float
    dnl: np.ndarray
    mains_hz: float
    hum_amp: np.ndarray
    hum_harm: np.ndarray  # relative amplitude of harmonics 1, 2, 3, 5
    hum_phase: np.ndarray  # (4, 8)
    float_hum: float
    db_down: float
    db_up: float
    db_table: float
    stop_p: np.ndarray
    direct_p: np.ndarray
    frame_sets: int
    device_id: bytes
    fw: tuple[int, int, int]

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for k, v in self.__dict__.items():
            if isinstance(v, np.ndarray):
                out[k] = np.round(v, 6).tolist()
            elif isinstance(v, bytes):
                out[k] = v.hex()
            elif isinstance(v, float):
                out[k] = round(v, 6)
            else:
                out[k] = v
        del out["dnl"]
        return out


def make_tower(seed: int) -> Tower:
    """The kit of tower ``seed``: cells, HX711s, plates, discs, front end, hole geometry."""
    rng = np.random.default_rng([seed, 0x52, 0x7E])
    matched = seed % 2 == 0
    if matched:  # one batch of cells, one wiring convention
        s_mvv = rng.uniform(0.6, 1.0) * rng.uniform(0.96, 1.04, N_LEV)
        sign = np.full(N_LEV, -1.0 if rng.random() < 0.2 else 1.0)
    else:  # cells from different shops, some mounted upside down or wired A+/A- swapped
        s_mvv = rng.uniform(0.45, 1.5, N_LEV)
        sign = np.where(rng.random(N_LEV) < 0.3, -1.0, 1.0)
    cpg = sign * s_mvv * COUNTS_PER_G_PER_MVV
    plate_mass = rng.uniform(6.0, 15.0, N_LEV)
    zero_balance = rng.uniform(-0.12, 0.12, N_LEV) * 1e-3 * 2**24 * 128
    offset = np.round(zero_balance + cpg * plate_mass)

    nominal = 10 if rng.random() < 0.25 else 80
    chip_rate = nominal * rng.uniform(0.98, 1.13) * rng.normal(1.0, 0.008, N_LEV)
    avdd = rng.uniform(4.2, 4.4)
    counts_per_volt = 2**24 * 128 / avdd
    spec_nv = 50.0 if nominal == 10 else 90.0
    board = rng.uniform(1.3, 3.5, N_LEV)
    bad_chip = int(rng.integers(0, N_LEV)) if rng.random() < 0.35 else -1
    if bad_chip >= 0:
        board[bad_chip] *= rng.uniform(6.0, 15.0)
    noise_g = spec_nv * 1e-9 * counts_per_volt * board / np.abs(cpg)

    stiffness = rng.uniform(2500.0, 6500.0, N_LEV)  # N/m of a 100 g bar cell
    f_mech = np.sqrt(stiffness / (plate_mass * 1e-3)) / (2 * np.pi)
    zeta = rng.uniform(0.03, 0.12, N_LEV)

    shift_rate = 0.0 if rng.random() < 0.4 else rng.uniform(0.15, 1.0)
    pdown_rate = 0.0 if rng.random() < 0.5 else rng.uniform(0.02, 0.2)

    m0 = rng.uniform(0.3, 0.8)
    colour_factor = {c: float(rng.uniform(0.96, 1.04)) for c in (*COLOURS, "red")}

    f1 = rng.uniform(180.0, 450.0, N_LEV)
    mode_f = np.stack([f1, f1 * rng.uniform(1.7, 2.6, N_LEV), rng.uniform(1000, 2600, N_LEV),
                       f_mech])
    tau1 = rng.uniform(0.008, 0.025, N_LEV)
    mode_tau = np.stack([tau1, tau1 * rng.uniform(0.4, 0.7, N_LEV),
                         rng.uniform(0.0015, 0.004, N_LEV), 1.0 / (zeta * 2 * np.pi * f_mech)])
    mode_w = np.stack([np.ones(N_LEV), rng.uniform(0.3, 0.9, N_LEV), rng.uniform(0.1, 0.4, N_LEV),
                       rng.uniform(0.08, 0.2, N_LEV)])

    rro = rng.random() >= 0.3
    dnl = np.clip(rng.normal(0.0, 0.15, 1025), -0.45, 0.45)
    mains = 50.0 if rng.random() < 0.75 else 60.0
    hum_amp = rng.uniform(0.3, 1.8, N_LEV) * (1 + 0.12 * LEVELS)
    hum_harm = np.array([1.0, rng.uniform(0.05, 0.2), rng.uniform(0.2, 0.6),
                         rng.uniform(0.05, 0.3)])
    hum_phase = rng.uniform(0, 2 * np.pi, (4, 1)) + rng.normal(0, 0.3, (4, N_LEV))

    base_stop = np.array([1.0, 0.6, 0.36, 0.28, 0.23, 0.19, 0.16, 0.14])
    odds = base_stop / (1 - np.minimum(base_stop, 0.999)) * np.exp(rng.normal(0, 0.3, N_LEV))
    stop_p = odds / (1 + odds)
    stop_p[0] = 1.0
    direct_p = rng.uniform(0.1, 0.35, N_LEV)
    direct_p[0] = 0.0

    return Tower(
        seed=seed, cells="matched" if matched else "mixed", cpg=cpg, offset=offset,
        noise_g=noise_g, bad_chip=bad_chip, load_rate_nominal=nominal, chip_rate=chip_rate,
        load_rate_hello=round(float(chip_rate.min())), piezo_rate_hello=FS,
        plate_mass_g=plate_mass, f_mech=f_mech, zeta_mech=zeta,
        tc_zero_g_per_c=rng.uniform(0.005, 0.03, N_LEV) * rng.choice([-1.0, 1.0], N_LEV),
        creep_frac=rng.uniform(0.001, 0.006, N_LEV), creep_tau_s=rng.uniform(120, 900, N_LEV),
        selfheat_g=rng.uniform(0.01, 0.05, N_LEV) * rng.choice([-1.0, 1.0], N_LEV),
        selfheat_tau_s=rng.uniform(30, 120, N_LEV), resettle_g=float(rng.uniform(0.003, 0.015)),
        glitch_shift_per_min=float(shift_rate), glitch_pdown_per_min=float(pdown_rate),
        b_reading=rng.uniform(-2**21, 2**21, N_LEV).round(), cube_mass_g=float(m0),
        colour_factor=colour_factor,
        bias=512 + rng.uniform(-12, 12, N_LEV), noise_codes=rng.uniform(0.4, 1.2, N_LEV),
        disc_gain=np.exp(rng.normal(0, 0.35, N_LEV)), fe_codes=float(rng.uniform(150, 380)),
        mode_f=mode_f, mode_tau=mode_tau, mode_w=mode_w,
        hp_tau_s=float(rng.uniform(0.008, 0.025)), k_static=float(rng.uniform(1.0, 2.0)),
        k_acc=float(rng.uniform(2.0, 6.0)), clip_lo=float(rng.uniform(0.5, 6.0)),
        clip_hi=float(1023 - rng.uniform(1.0, 8.0) if rro else rng.uniform(690, 740)),
        ghost=float(rng.uniform(0.002, 0.02)),
        dnl=dnl, mains_hz=mains, hum_amp=hum_amp, hum_harm=hum_harm, hum_phase=hum_phase,
        float_hum=float(rng.uniform(5, 40) if rng.random() < 0.6 else rng.uniform(0.3, 2.0)),
        db_down=float(rng.uniform(7, 14)), db_up=float(rng.uniform(9, 16)),
        db_table=float(rng.uniform(1.5, 3.0)), stop_p=stop_p, direct_p=direct_p,
        frame_sets=int(rng.choice([4, 6, 8, 10, 12, 14])),
        device_id=rng.integers(0, 256, 8).astype(np.uint8).tobytes(),
        fw=(1, int(rng.integers(0, 4)), int(rng.integers(0, 10))),
    )


# --------------------------------------------------------------------------------------------
# The scene: what happens on and around the table, in device-clock seconds from stream zero

KIND_PLATE, KIND_EDGE, KIND_WALL, KIND_TABLE = 0, 1, 2, 3


@dataclass
class Cube:
    """One wooden cube; ``level`` -1 when out of the tower, -2 while falling."""

    cid: int
    mass: float
    colour: str
    level: int = -1
    t_from: float = 0.0


@dataclass
class Scene:
    """Everything the sensors will see, as lists of events (rendered later)."""

    duration: float
    contacts: list[tuple[float, float, float, float, int]] = field(default_factory=list)
    statics: list[tuple[float, int, float]] = field(default_factory=list)  # cube weight changes
    settles: list[tuple[float, int, float]] = field(default_factory=list)  # plate seat offset
    forces: list[tuple[int, float, np.ndarray]] = field(default_factory=list)  # hand, grams @FM
    slides: list[tuple[float, float, int, float]] = field(default_factory=list)
    table: list[tuple[str, float, float, float, float]] = field(default_factory=list)
    piezo_bg: list[tuple[str, float, float, float, float]] = field(default_factory=list)
    rumbles: list[tuple[float, float, float, float, float, float]] = field(default_factory=list)
    open_spans: list[tuple[float, float, float, int]] = field(default_factory=list)
    landings: list[dict[str, Any]] = field(default_factory=list)
    knockdowns: list[dict[str, Any]] = field(default_factory=list)
    removals: list[dict[str, Any]] = field(default_factory=list)
    lifts: list[dict[str, Any]] = field(default_factory=list)
    closes: list[dict[str, Any]] = field(default_factory=list)
    knocks: list[dict[str, Any]] = field(default_factory=list)
    moved: list[dict[str, Any]] = field(default_factory=list)
    room: list[dict[str, Any]] = field(default_factory=list)
    game: dict[str, Any] = field(default_factory=dict)


ROOMS = {  # events per minute (or share of time) by family
    "quiet": {"talk": 0.3, "music": 0.0, "steps": 1.0, "chairs": 0.3, "phone": 0.1,
              "knocks": 0.25, "lean": 0.2, "emi": 0.2, "pops": 0.2, "hum_x": 1.0},
    "game": {"talk": 0.6, "music": 0.2, "steps": 1.5, "chairs": 0.8, "phone": 0.3,
             "knocks": 0.8, "lean": 0.6, "emi": 0.3, "pops": 0.3, "hum_x": 1.3},
    "noisy": {"talk": 0.7, "music": 0.8, "steps": 4.0, "chairs": 2.0, "phone": 1.2,
              "knocks": 3.5, "lean": 1.5, "emi": 1.5, "pops": 1.0, "hum_x": 3.0},
}


class Play:
    """Builds a scene: players, cubes and the room, event by event in time order."""

    def __init__(self, tower: Tower, duration: float, rng: np.random.Generator) -> None:
        self.tw = tower
        self.rng = rng
        self.sc = Scene(duration)
        self.cubes: list[Cube] = []
        self.t_busy = 0.0  # latest time a cube is still moving

    # ---- cubes -------------------------------------------------------------------------------

    def new_cube(self, colour: str) -> Cube:
        m = self.tw.cube_mass_g * self.tw.colour_factor[colour] \
            * float(np.clip(self.rng.normal(1.0, 0.04), 0.9, 1.1))
        c = Cube(len(self.cubes), m, colour)
        self.cubes.append(c)
        return c

    def resting(self, level: int, t: float) -> list[Cube]:
        return [c for c in self.cubes if c.level == level and c.t_from <= t]

    def contact(self, t: float, pos: float, j: float, tc: float, kind: int) -> None:
        self.sc.contacts.append((t, pos, j, tc, kind))

    def throw(self, t: float, cube: Cube, style: str | None = None) -> dict[str, Any]:
        """A cube let go at the top hole at ``t``; returns its landing record."""
        rng = self.rng
        if style is None:
            style = "hard" if rng.random() < 0.3 else "gentle"
        if style == "hard":
            v0, h = rng.uniform(1.2, 2.6), 0.0
        else:
            v0, h = rng.uniform(0.0, 0.3), rng.uniform(0.005, 0.04)
        v = math.sqrt(v0 * v0 + 2 * GRAV * (MODULE_H + h))
        t_arr = t + (v - v0) / GRAV
        first = None
        if rng.random() < (0.45 if style == "hard" else 0.25):  # grazes the rim of the top hole
            first = t + rng.uniform(0.003, 0.02)
            self.contact(first, 7.5, cube.mass * 1e-3 * max(v0, 0.3) * rng.uniform(0.2, 0.6),
                         rng.uniform(3e-4, 8e-4), KIND_WALL)
        rec = self._landing(cube, style, t)
        self.fall(cube, 7, t_arr, v, rec, first, knock_scale=1.0)
        return rec

    def _landing(self, cube: Cube, style: str, t_throw: float | None) -> dict[str, Any]:
        rec: dict[str, Any] = {"t": None, "t_first_impact": None, "t_throw": t_throw,
                               "floor": None, "cubes": 1, "knocked": style == "knocked",
                               "caused_knockdown": False, "mass_g": round(cube.mass, 5),
                               "style": style, "colour": cube.colour, "cube": cube.cid,
                               "paused": []}
        self.sc.landings.append(rec)
        return rec

    def fall(self, cube: Cube, level: int, t: float, v: float, rec: dict[str, Any],
             first: float | None, knock_scale: float) -> None:
        """The cube arrives at plate ``level`` at ``t`` with speed ``v`` and goes on down."""
        rng, tw = self.rng, self.tw
        m = cube.mass * 1e-3
        cube.level = -2
        may_knock = True
        while True:
            s = tw.stop_p[level] * (0.6 if level == 7 and v > 1.3 else 1.0)
            stop = level == 0 or rng.random() < s
            if not stop and rng.random() < tw.direct_p[level]:  # straight through the hole
                if rng.random() < 0.5:
                    self.contact(t, level, m * v * rng.uniform(0.08, 0.35),
                                 rng.uniform(2e-4, 5e-4), KIND_EDGE)
                    first = t if first is None else first
                v2 = math.sqrt(v * v + 2 * GRAV * MODULE_H)
                t += (v2 - v) / GRAV
                v = v2
                level -= 1
                continue
            e = rng.uniform(0.25, 0.5)
            tc = 1e-3 * (v / V_REF) ** -0.2 * rng.uniform(0.6, 1.5)
            self.contact(t, level, m * v * (1 + e), tc, KIND_PLATE)
            first = t if first is None else first
            if may_knock and level > 0:
                here = [c for c in self.resting(level, t) if c is not cube]
                p = min(0.06, 0.006 * len(here) * v / V_REF) * knock_scale
                if here and rng.random() < p:
                    victim = here[int(rng.integers(0, len(here)))]
                    self.knock(victim, level, t, rec, knock_scale)
                    may_knock = False
            vr, tb = e * v, t
            while vr > 0.12:
                top = level + 1 if level < 7 else 7.5
                if vr * vr / (2 * GRAV) > CLEARANCE:  # hits the ceiling: the plate above
                    vc = math.sqrt(vr * vr - 2 * GRAV * CLEARANCE)
                    t_up = (vr - vc) / GRAV
                    e2 = rng.uniform(0.2, 0.45)
                    if top == 7.5:
                        self.contact(tb + t_up, 7.5, m * vc * (1 + e2), 5e-4, KIND_WALL)
                    else:
                        self.contact(tb + t_up, top, -m * vc * (1 + e2), 6e-4, KIND_PLATE)
                    vd = math.sqrt((e2 * vc) ** 2 + 2 * GRAV * CLEARANCE)
                    tb += t_up + (vd - e2 * vc) / GRAV
                    vimp = vd
                else:
                    tb += 2 * vr / GRAV
                    vimp = vr
                e = rng.uniform(0.2, 0.5)
                self.contact(tb, level, m * vimp * (1 + e), 1e-3 * rng.uniform(0.6, 1.5),
                             KIND_PLATE)
                vr = e * vimp
            if stop:
                tt = tb
                for i in range(int(rng.integers(0, 3))):  # tumbles over an edge or two
                    tt += rng.uniform(0.03, 0.09)
                    self.contact(tt, level, m * rng.uniform(0.08, 0.25) * 0.6**i,
                                 1e-3 * rng.uniform(0.8, 2.0), KIND_PLATE)
                slide = rng.uniform(0.02, 0.15)
                self.sc.slides.append((tb, tt + slide - tb, level,
                                       rng.uniform(1, 4) * cube.mass / 0.5))
                self.sc.statics.append((tb, level, cube.mass))
                t_rest = tt + slide
                cube.level, cube.t_from = level, t_rest
                rec.update(t=round(t_rest, 6), t_first_impact=round(first, 6), floor=level)
                self.t_busy = max(self.t_busy, t_rest)
                return
            dwell = rng.uniform(0.03, 0.25)
            if rng.random() < 0.02:  # rests on the hole's edge a moment, then tips in
                dwell = rng.uniform(0.25, 1.4)
                rec["paused"].append({"floor": level, "t": round(tb, 6),
                                      "t_end": round(tb + dwell, 6)})
            self.sc.statics.append((tb, level, cube.mass))
            self.sc.statics.append((tb + dwell, level, -cube.mass))
            self.sc.slides.append((tb, dwell, level, rng.uniform(0.5, 2.5) * cube.mass / 0.5))
            t_tip = tb + dwell
            vf = math.sqrt(2 * GRAV * rng.uniform(0.022, 0.030))
            if rng.random() < 0.2:  # brushes the module wall on the way down
                self.contact(t_tip + rng.uniform(0.01, 0.05), level - 0.5,
                             m * rng.uniform(0.1, 0.3), 5e-4, KIND_WALL)
            t, v, level = t_tip + vf / GRAV + 0.008, vf, level - 1

    def knock(self, victim: Cube, level: int, t: float, by: dict[str, Any],
              knock_scale: float) -> None:
        """A resting cube pushed into the hole by a falling one."""
        rng = self.rng
        t_leave = t + rng.uniform(0.03, 0.15)
        self.sc.statics.append((t_leave, level, -victim.mass))
        rec = self._landing(victim, "knocked", None)
        rec["from_floor"] = level
        by["caused_knockdown"] = True
        kd = {"t": round(t, 6), "from_floor": level, "to_floor": None,
              "landing": len(self.sc.landings) - 1,
              "by": self.sc.landings.index(by)}
        self.sc.knockdowns.append(kd)
        vf = math.sqrt(2 * GRAV * rng.uniform(0.022, 0.030))
        self.fall(victim, level - 1, t_leave + vf / GRAV + 0.008, vf, rec, t, knock_scale * 0.5)
        kd["to_floor"] = rec["floor"]

    # ---- hands ------------------------------------------------------------------------------

    def force_bumps(self, level: int, t0: float, dur: float, amp_g: float, *,
                    tremor: float = 0.0, residual: float = 0.0) -> None:
        """A smooth random hand force on one plate (grams), with physiological tremor."""
        rng = self.rng
        n = max(8, int(dur * FM))
        tt = np.arange(n) / FM
        prof = np.zeros(n)
        for _ in range(int(rng.integers(2, 6))):
            c, w = rng.uniform(0, dur), rng.uniform(0.05, 0.4)
            prof += rng.normal(0, amp_g) * np.exp(-0.5 * ((tt - c) / w) ** 2)
        if tremor > 0:
            prof += tremor * np.sin(2 * np.pi * rng.uniform(8, 12) * tt + rng.uniform(0, 6.3))
        prof *= np.sqrt(np.clip(np.sin(np.pi * np.arange(n) / (n - 1)), 0.0, 1.0))
        self.sc.forces.append((level, t0, prof.astype(np.float32)))
        if residual:
            self.sc.settles.append((t0 + dur, level, float(rng.normal(0, residual))))

    def handling(self, t0: float, dur: float, levels: range, strength: float) -> None:
        """Hands on the tower: rumble on the discs, wobbling loads, plates re-seat a little."""
        rng = self.rng
        for lv in levels:
            self.force_bumps(lv, t0, dur, strength * rng.uniform(0.05, 0.5), tremor=0.01,
                             residual=self.tw.resettle_g)
        self.sc.rumbles.append((t0, dur, strength * rng.uniform(5, 30), 15.0, 250.0, -1.0))
        self.sc.rumbles.append((t0, dur, strength * rng.uniform(1, 6), 300.0, 900.0, -1.0))

    def steady(self, t: float) -> None:
        """A hand steadies the tower for a few seconds."""
        rng = self.rng
        dur = rng.uniform(1.0, 5.0)
        for lv in range(N_LEV):
            self.force_bumps(lv, t, dur, rng.uniform(0.005, 0.05), tremor=0.004)
        self.sc.rumbles.append((t, dur, rng.uniform(1, 6), 8.0, 120.0, -1.0))
        self.contact(t, rng.uniform(2, 7), J_REF * rng.uniform(0.1, 0.4), 4e-3, KIND_WALL)
        self.sc.room.append({"t": round(t, 3), "t_end": round(t + dur, 3), "kind": "steady"})

    def finger(self, level: int, t0: float, hold: float, press_g: float) -> None:
        rng = self.rng
        rise, fall = rng.uniform(0.05, 0.15), rng.uniform(0.05, 0.1)
        n = int((rise + hold + fall) * FM)
        tt = np.arange(n) / FM
        prof = np.interp(tt, [0, rise, rise + hold, rise + hold + fall], [0, press_g,
                         press_g * rng.uniform(0.7, 1.2), 0])
        prof *= 1 + 0.05 * np.sin(2 * np.pi * rng.uniform(8, 12) * tt)
        self.sc.forces.append((level, t0, prof.astype(np.float32)))
        self.sc.slides.append((t0, rise + hold + fall, level, rng.uniform(2, 8)))
        self.sc.settles.append((t0 + rise + hold + fall, level,
                                float(rng.normal(0, self.tw.resettle_g))))

    # ---- lifting modules --------------------------------------------------------------------

    def inspect(self, t: float, k: int, *, take: bool = True, keep: tuple[str, ...] = ()
                ) -> tuple[float, list[Cube], list[Cube]]:
        """Lift modules k..7 to expose level k, take its cubes out, put the modules back.

        Returns (close time, cubes to throw back, cubes kept out, e.g. victims).
        """
        rng, sc = self.rng, self.sc
        grip = rng.uniform(0.4, 1.2)
        t_lift = t + grip
        self.handling(t, grip + 0.5, range(N_LEV), rng.uniform(0.6, 1.5))
        # the stack lets go of the module below: a jolt in the walls at plate k's height
        self.contact(t_lift, k, J_REF * rng.uniform(0.2, 1.0), 3e-3, KIND_WALL)
        sc.lifts.append({"t": round(t_lift, 6), "exposed": k})
        back: list[Cube] = []
        kept: list[Cube] = []
        # a cube on the lowest lifted plate (module k's roof) can slip through its hole and
        # out of module k's open bottom while the stack is tilted: it drops onto the table
        lifted = [c for c in self.cubes if c.level == k + 1]
        if lifted and rng.random() < 0.12:
            c = lifted[int(rng.integers(0, len(lifted)))]
            tf = t_lift + rng.uniform(0.3, 1.5)
            sc.statics.append((tf, c.level, -c.mass))
            sc.removals.append({"t": round(tf, 6), "floor": c.level, "cubes": 1,
                                "mass_g": round(c.mass, 5), "fell_out": True})
            self.contact(tf + 0.1, -0.5, c.mass * 1e-3 * 1.0, 2e-3, KIND_TABLE)
            c.level = -1
            back.append(c)
        lifted = [c for c in self.cubes if c.level > k + 1]
        if lifted and rng.random() < 0.05:  # one slides through a hole inside the lifted stack
            c = lifted[int(rng.integers(0, len(lifted)))]
            tm = t_lift + rng.uniform(0.3, 1.5)
            sc.statics.append((tm, c.level, -c.mass))
            sc.statics.append((tm + 0.1, c.level - 1, c.mass))
            sc.moved.append({"t": round(tm, 6), "from_floor": c.level, "to_floor": c.level - 1,
                             "mass_g": round(c.mass, 5)})
            c.level -= 1
        look = rng.uniform(1.0, 4.0)
        tp = t_lift + look
        # one hand holds the lower floors while the other looks and picks
        hold_len = look + 1.0
        for lv in range(k + 1):
            self.force_bumps(lv, t_lift, hold_len, rng.uniform(0.02, 0.2), tremor=0.005)
        here = self.resting(k, tp) if take else []
        here = [here[i] for i in rng.permutation(len(here))]
        while here:
            n = 2 if len(here) >= 2 and rng.random() < 0.25 else 1
            group, here = here[:n], here[n:]
            hold = rng.uniform(0.25, 0.8)
            rise = 0.1
            self.finger(k, tp, hold, rng.uniform(3.0, 40.0))
            t_out = tp + rise + rng.uniform(0.1, hold - 0.05)
            for c in group:
                sc.statics.append((t_out, k, -c.mass))
                c.level = -1
                (kept if c.colour in keep else back).append(c)
            sc.removals.append({"t": round(t_out, 6), "floor": k, "cubes": n,
                                "mass_g": round(sum(c.mass for c in group), 5),
                                "t_touch": round(tp, 6),
                                "t_untouch": round(tp + rise + hold + 0.1, 6),
                                "fell_out": False})
            tp += rise + hold + 0.1 + rng.uniform(0.3, 1.2)
        t_close = tp + rng.uniform(0.5, 1.5)
        chatter = rng.uniform(0.0, 0.06)
        sc.open_spans.append((t_lift, t_close, t_close + chatter, k))
        sc.closes.append({"t": round(t_close, 6)})
        self.contact(t_close, k, J_REF * rng.uniform(0.5, 3.0), 2.5e-3, KIND_WALL)
        self.handling(t_close - 0.6, 1.4, range(N_LEV), rng.uniform(0.6, 1.5))
        return t_close, back, kept

    # ---- the room ---------------------------------------------------------------------------

    def room(self, t0: float, t1: float, profile: str) -> None:
        """Room noises between t0 and t1 (no big ones in the quiet first seconds)."""
        rng, sc = self.rng, self.sc
        pr = ROOMS[profile]
        span = t1 - t0
        lo = max(t0, QUIET_S + 0.5)

        def times(rate_per_min: float) -> np.ndarray:
            n = rng.poisson(rate_per_min * span / 60.0)
            return np.sort(rng.uniform(t0, t1, n))

        for share, kind in ((pr["talk"], "talk"), (pr["music"], "music")):
            t = t0
            while share > 0 and t < t1:
                dur = rng.uniform(5, 40)
                if rng.random() < share:
                    amp = rng.uniform(0.2, 1.0) if kind == "talk" else rng.uniform(0.5, 4.0)
                    f = 0.0 if kind == "talk" else rng.uniform(1.6, 2.2)  # kick drum per second
                    sc.piezo_bg.append((kind, t, min(dur, t1 - t), amp, f))
                    if kind == "music":
                        kick = 1.0 / f
                        for tk in np.arange(t, min(t + dur, t1), kick):
                            sc.table.append(("pulse", float(tk), rng.uniform(45, 65), 0.25,
                                             amp * rng.uniform(0.005, 0.01)))
                    sc.room.append({"t": round(t, 3), "t_end": round(t + dur, 3), "kind": kind})
                t += dur
        for ts in times(pr["steps"]):
            n = int(rng.integers(3, 12))
            a = rng.uniform(0.01, 0.08)
            for i in range(n):
                sc.table.append(("pulse", float(ts + i * rng.uniform(0.45, 0.65)),
                                 rng.uniform(8, 25), 0.3, a * rng.uniform(0.6, 1.2)))
            sc.room.append({"t": round(ts, 3), "kind": "footsteps", "n": n})
        for tc in times(pr["chairs"]):
            if tc < lo:
                continue
            dur = rng.uniform(0.3, 1.0)
            sc.table.append(("noise", float(tc), dur, rng.uniform(15, 80), rng.uniform(0.03, 0.15)))
            sc.table.append(("pulse", float(tc + dur), rng.uniform(15, 40), 0.2,
                             rng.uniform(0.05, 0.3)))
            sc.room.append({"t": round(tc, 3), "kind": "chair"})
        for tp in times(pr["phone"]):
            if tp < lo:
                continue
            f = rng.uniform(150, 230)
            a = rng.uniform(0.05, 0.3)
            tt = tp
            for _ in range(int(rng.integers(2, 6))):
                on = rng.uniform(0.4, 0.8)
                sc.table.append(("tone", float(tt), on, f, a))
                tt += on + rng.uniform(0.3, 0.6)
            sc.room.append({"t": round(tp, 3), "t_end": round(tt, 3), "kind": "phone"})
        for tk in times(pr["knocks"]):
            if tk < lo or tk > self.sc.duration - 1.0:
                continue
            self.table_knock(float(tk))
        for tl in times(pr["lean"]):
            if tl < lo:
                continue
            dur = rng.uniform(3, 20)
            for lv in range(N_LEV):
                n = int(dur * FM)
                ramp = np.clip(np.minimum(np.arange(n), n - np.arange(n)) / (1.5 * FM), 0, 1)
                prof = rng.uniform(-1, 1) * rng.uniform(0.01, 0.06) * ramp
                sc.forces.append((lv, float(tl), prof.astype(np.float32)))
                sc.settles.append((float(tl + dur), lv, float(rng.normal(0, 0.004))))
            sc.room.append({"t": round(tl, 3), "t_end": round(tl + dur, 3), "kind": "lean"})
        for te in times(pr["emi"]):
            dur = rng.uniform(0.3, 3.0)
            sc.piezo_bg.append(("emi", float(te), dur, rng.uniform(5, 40),
                                2 * self.tw.mains_hz))
            sc.room.append({"t": round(te, 3), "t_end": round(te + dur, 3), "kind": "emi"})
        for tq in times(pr["pops"]):
            sc.piezo_bg.append(("pop", float(tq), 0.0, rng.uniform(20, 150), 0.0))
            sc.room.append({"t": round(tq, 3), "kind": "pop"})

    def table_knock(self, t: float) -> None:
        rng = self.rng
        strength = rng.uniform(0.3, 3.0)
        self.sc.table.append(("pulse", t, rng.uniform(15, 40), 0.12,
                              strength * rng.uniform(0.3, 1.0)))
        self.contact(t, -0.5, J_REF * strength * rng.uniform(0.5, 1.5), rng.uniform(1e-3, 4e-3),
                     KIND_TABLE)
        self.sc.knocks.append({"t": round(t, 6), "strength": round(strength, 3)})


# ---- families -------------------------------------------------------------------------------


def _throw_any(p: Play, t: float, style: str | None = None) -> None:
    c = p.new_cube(COLOURS[int(p.rng.integers(0, len(COLOURS)))])
    p.throw(t, c, style)
    if p.rng.random() < 0.05:
        p.steady(max(QUIET_S + 0.5, t + p.rng.uniform(-1.5, 0.5)))


def play_single(p: Play, t_end: float, spacing: tuple[float, float] = (2.5, 8.0),
                pair_p: float = 0.0) -> None:
    rng = p.rng
    t = rng.uniform(4.6, 6.0)
    while t < t_end:
        _throw_any(p, t)
        if rng.random() < pair_p:
            t += rng.uniform(0.4, 1.0)
            _throw_any(p, t)
        t = max(t + rng.uniform(*spacing), p.t_busy + rng.uniform(1.2, 3.0))


def play_rapid(p: Play, t_end: float) -> None:
    rng = p.rng
    t = rng.uniform(4.6, 6.0)
    while t < t_end:
        for _ in range(int(rng.integers(2, 7))):
            if t >= t_end:
                break
            _throw_any(p, t)
            t += rng.uniform(0.3, 0.8)
        t = max(t, p.t_busy) + rng.uniform(3.0, 7.0)


class Game:
    """Mord im Arosa as players play it (rules/004): prologue, Act I, Act II, the end."""

    def __init__(self, p: Play, n_players: int, t_end: float) -> None:
        self.p = p
        self.t_end = t_end
        rng = p.rng
        order = list(rng.permutation(len(COLOURS))[:n_players])
        self.players = [COLOURS[i] for i in order]
        self.supply = dict.fromkeys(self.players, 20)
        self.sheet = {c: [0] * N_LEV for c in self.players}
        self.crime: list[int] = []
        self.victims_found = 0
        self.hand: list[Cube] = []
        self.log: list[dict[str, Any]] = []
        self.over = False

    def throw(self, t: float, colour: str) -> None:
        p = self.p
        if t > self.t_end:  # the recording ends before this throw
            return
        same = [c for c in self.hand if c.colour == colour]
        if same:
            cube = same[0]
            self.hand.remove(cube)
        else:
            if colour != "red":
                if self.supply[colour] <= 0:
                    return
                self.supply[colour] -= 1
            cube = p.new_cube(colour)
        rec = p.throw(t, cube)
        self.log.append({"do": "throw", "color": colour, "t": round(t, 3),
                         "landing": p.sc.landings.index(rec)})

    def check_end(self) -> None:
        if any(sum(v) >= 10 for v in self.sheet.values()) or min(self.supply.values()) <= 0:
            self.over = True

    def burst(self, t: float, colours: list[str]) -> float:
        for col in colours:
            self.throw(t, col)
            t += self.p.rng.uniform(0.3, 0.8)
        return t

    def prologue(self, t: float) -> float:
        rng = self.p.rng
        t = self.burst(t, ["red"])
        t += rng.uniform(0.8, 2.0)
        self.throw(t, "red")
        for pl in self.players:
            t = max(t + rng.uniform(1.5, 4.0), self.p.t_busy + rng.uniform(0.8, 2.0))
            self.throw(t, pl)
            t += rng.uniform(0.6, 1.6)
            self.throw(t, pl)
        return t

    def contents(self, k: int) -> list[Cube]:
        return [c for c in self.p.cubes if c.level == k]

    def turn(self, t: float, who: str) -> float:
        p, rng = self.p, self.p.rng
        by_floor = [self.contents(k) for k in range(N_LEV)]
        if self.victims_found < 2:
            action = "inspect"
            weights = np.array([3.0 if any(c.colour == "red" for c in f) else 1.0
                                for f in by_floor])
            weights[0] *= 0.6
        else:
            action = "suspect" if rng.random() < 0.75 else "cover"
            weights = np.array([1.0 + len(f) for f in by_floor])
        k = int(rng.choice(N_LEV, p=weights / weights.sum()))
        entry: dict[str, Any] = {"do": action, "by": who, "floor": k, "t": round(t, 3)}
        suspects: list[str] = []
        if action == "suspect":
            others = [q for q in self.players if q != who]
            suspects = [str(x) for x in rng.choice(
                others, size=min(len(others), int(rng.integers(1, 3))), replace=False)]
            entry["suspects"] = suspects
        self.log.append(entry)
        here = by_floor[k]
        keep = ("red",) if action == "inspect" else ()
        t_close, back, kept = p.inspect(t, k, keep=keep)
        penalties: list[str] = []
        if action == "inspect":
            reds = [c for c in kept if c.colour == "red"]
            if reds:
                self.victims_found += len(reds)
                self.crime.append(k)
                for c in here:
                    if c.colour in self.sheet and c.colour != who and self.supply[c.colour] > 0:
                        self.supply[c.colour] -= 1
                        self.sheet[c.colour][k] += 1
            else:
                penalties.append(who)
        elif action == "suspect":
            own0 = any(c.colour == who for c in here)
            for s in suspects:
                n = sum(c.colour == s for c in here)
                if k == 0 and not own0:
                    penalties.append(who)
                elif n == 0:
                    penalties.append(who)
                else:
                    put = min(n, self.supply[s])
                    self.supply[s] -= put
                    self.sheet[s][k] += put
        else:
            n = sum(c.colour == who for c in here)
            if n == 0:
                penalties.append(who)
            else:
                take = min(n, self.sheet[who][k])
                self.sheet[who][k] -= take
                self.supply[who] += take
        self.hand += back
        self.check_end()
        t = t_close + rng.uniform(0.8, 2.5)
        if not self.over:
            t = self.burst(t, [c.colour for c in back])
            if penalties:
                t += rng.uniform(0.8, 2.5)
                t = self.burst(t, penalties)
        self.check_end()
        return t


def play_game(p: Play, t: float, t_end: float, *, max_turns: int = 1000) -> tuple[float, Game]:
    rng = p.rng
    g = Game(p, int(rng.integers(3, 7)), t_end)
    t = g.prologue(t)
    turn = 0
    while not g.over and turn < max_turns:
        t = max(t, p.t_busy) + rng.uniform(2.0, 8.0)
        if t > t_end - 22.0:
            break
        t = g.turn(t, g.players[turn % len(g.players)])
        turn += 1
    p.sc.game.setdefault("games", []).append(
        {"players": g.players, "log": g.log, "crime_scenes": g.crime, "over": g.over,
         "sheet": g.sheet, "supply": g.supply})
    return t, g


def play_long(p: Play, t_end: float) -> None:
    rng = p.rng
    t = rng.uniform(4.6, 6.0)
    while t < t_end - 10:
        t, _ = play_game(p, t, t_end, max_turns=int(rng.integers(14, 30)))
        # the reveal: every level opened from the top, everything taken out
        t = max(t, p.t_busy) + rng.uniform(5, 20)
        for k in range(N_LEV - 1, -1, -1):
            if t > t_end - 12:
                break
            t, _, _ = p.inspect(t, k)
            t += rng.uniform(1.0, 4.0)
        t += rng.uniform(30, 120)


def build_scene(tower: Tower, scenario: str, duration: float, seed: int) -> Scene:
    """The scene of one recording (deterministic in seed and scenario)."""
    rng = np.random.default_rng([seed, SCENARIO_CODE[scenario], 1])
    p = Play(tower, duration, rng)
    t_end = duration - 6.0
    if scenario == "single":
        play_single(p, t_end)
        p.room(0, duration, "quiet")
    elif scenario == "rapid":
        play_rapid(p, t_end)
        p.room(0, duration, "quiet")
    elif scenario == "noisy":
        play_single(p, t_end, (2.5, 7.0), pair_p=0.2)
        p.room(0, duration, "noisy")
        for lv in p.sc.landings[:]:
            if rng.random() < 0.15 and lv["t_throw"]:
                p.steady(max(QUIET_S + 0.5, lv["t_throw"] + rng.uniform(-2.0, 0.2)))
    elif scenario == "long":
        play_long(p, t_end)
        t = 0.0
        while t < duration:  # the room changes over half an hour
            seg = rng.uniform(120, 420)
            p.room(t, min(duration, t + seg), str(rng.choice(["quiet", "game", "game", "noisy"])))
            t += seg
    else:  # game, damaged, acoustic: a game of Mord im Arosa
        play_game(p, rng.uniform(4.6, 6.0), t_end)
        p.room(0, duration, "game")
        for lv in p.sc.landings[:]:
            if rng.random() < 0.08 and lv["t_throw"]:
                p.steady(max(QUIET_S + 0.5, lv["t_throw"] + rng.uniform(-2.0, 0.2)))
    _trim(p.sc)
    return p.sc


def _trim(sc: Scene) -> None:
    """Drop what falls outside the recording (a cube still rolling when it ends)."""
    late = {i for i, x in enumerate(sc.landings) if x["t"] is None or x["t"] >= sc.duration - 0.1}
    for kd in sc.knockdowns:  # a knock-down is listed with both of its landings or not at all
        if kd["landing"] in late or kd["by"] in late:
            late |= {kd["landing"], kd["by"]}
    keep = sorted((i for i in range(len(sc.landings)) if i not in late),
                  key=lambda i: sc.landings[i]["t"])  # in the order the cubes came to rest
    new_index = {old: new for new, old in enumerate(keep)}
    kds = []
    for kd in sc.knockdowns:
        if kd["landing"] in new_index and kd["by"] in new_index:
            kds.append({**kd, "landing": new_index[kd["landing"]], "by": new_index[kd["by"]]})
    sc.landings = [sc.landings[i] for i in keep]
    caused = {kd["by"] for kd in kds}
    for i, x in enumerate(sc.landings):
        x["caused_knockdown"] = i in caused
    sc.knockdowns = kds
    for g in sc.game.get("games", []):
        for e in g["log"]:
            if "landing" in e:
                e["landing"] = new_index.get(e["landing"])
    sc.removals = [x for x in sc.removals if QUIET_S <= x["t"] < sc.duration]
    sc.lifts = [x for x in sc.lifts if x["t"] < sc.duration]
    sc.closes = [x for x in sc.closes if x["t"] < sc.duration]
    sc.knocks = [x for x in sc.knocks if QUIET_S <= x["t"] < sc.duration]


# --------------------------------------------------------------------------------------------
# Rendering: the discs (2 kHz, 8 channels) and the load path (1 kHz mechanical grid)


def _pulse_spectrum(f: np.ndarray, tc: float) -> np.ndarray:
    """|spectrum| of a half-sine force pulse of duration tc, 1 at DC."""
    x = 2 * f * tc
    den = 1 - x * x
    safe = np.where(np.abs(den) < 1e-6, 1.0, den)
    return np.where(np.abs(den) < 1e-6, np.pi / 4, np.abs(np.cos(np.pi * f * tc) / safe))


def render_piezo(tw: Tower, sc: Scene, hum_x: float, rng: np.random.Generator,
                 a_tab: np.ndarray) -> np.ndarray:
    """The 10-bit codes of every sample set, (N, 8) uint16."""
    n = int(round(sc.duration * FS))
    skew = np.arange(N_LEV) * ADC_SKEW_S
    x = rng.standard_normal((n, N_LEV), dtype=np.float32) * tw.noise_codes.astype(np.float32)
    x += tw.bias.astype(np.float32)
    # mains hum: 50/60 Hz wandering by a few mHz, harmonics from rectifier loads
    t_coarse = np.arange(0, sc.duration + 2, 1.0)
    f_dev = np.cumsum(rng.normal(0, 0.002, len(t_coarse)))
    f_dev = np.clip(f_dev, -0.05, 0.05)
    tt = np.arange(n) / FS
    phase = 2 * np.pi * (tw.mains_hz * tt + np.cumsum(np.interp(tt, t_coarse, f_dev)) / FS)
    amp = tw.hum_amp * hum_x
    for i, h in enumerate((1, 2, 3, 5)):
        a = amp * tw.hum_harm[i]
        basis = np.stack([np.sin(h * phase), np.cos(h * phase)], axis=1).astype(np.float32)
        mix = np.stack([a * np.cos(tw.hum_phase[i]),
                        a * np.sin(tw.hum_phase[i])]).astype(np.float32)
        x += basis @ mix
    # table-borne motion seen quasi-statically by the plates' inertia (AC-coupled)
    hp_a = tw.hp_tau_s / (tw.hp_tau_s + 1.0 / FS)
    a_hp = signal.lfilter([hp_a, -hp_a], [1, -hp_a], a_tab)
    tgain = tw.k_acc * tw.disc_gain * 10 ** (-(LEVELS + 0.5) * tw.db_table / 20)
    x += np.outer(a_hp, tgain).astype(np.float32)
    _render_contacts(x, tw, sc.contacts, skew)
    _render_slides(x, tw, sc.slides, rng)
    _render_forces_piezo(x, tw, sc.forces, hp_a)
    _render_bg(x, tw, sc, rng)
    _render_disconnected(x, tw, sc, rng)
    # front end: op-amp rails, then the ADC's sample-and-hold remembers the previous channel
    np.clip(x, tw.clip_lo, tw.clip_hi, out=x)
    flat = x.reshape(-1)
    g = np.float32(tw.ghost)
    out = np.empty(x.shape, np.uint16)
    step = 1 << 17
    carry = flat[0]
    for a in range(0, n, step):  # sample-and-hold: a share of the channel converted before
        blk = x[a:a + step].reshape(-1)
        prev = np.concatenate([[carry], blk[:-1]])
        carry = blk[-1]
        out[a:a + step] = _quantize((blk + g * (prev - blk)).reshape(-1, N_LEV), tw.dnl)
    return out


def _quantize(x: np.ndarray, dnl: np.ndarray) -> np.ndarray:
    """10-bit ADC with differential non-linearity: code c spans [c-0.5+dnl[c], c+0.5+dnl[c+1])."""
    c0 = np.clip(np.floor(x + 0.5), 0, 1023).astype(np.int32)
    lo = c0 - 0.5 + dnl[c0]
    hi = c0 + 0.5 + dnl[c0 + 1]
    c = c0 - (x < lo) + (x >= hi)
    return np.clip(c, 0, 1023).astype(np.uint16)


def _render_contacts(x: np.ndarray, tw: Tower,
                     contacts: list[tuple[float, float, float, float, int]],
                     skew: np.ndarray) -> None:
    n = x.shape[0]
    f, tau, w = tw.mode_f, tw.mode_tau, tw.mode_w
    length = int(6 * float(tau.max()) * FS) + 2
    k_idx = np.arange(length)
    for t, pos, j, tc, kind in contacts:
        n0 = int(math.ceil(t * FS))
        if n0 >= n or n0 + length <= 0:
            continue
        d = LEVELS - pos
        if kind == KIND_TABLE:
            att = (LEVELS - pos) * tw.db_table + 3.0
        else:
            dist = np.abs(d) if kind != KIND_WALL else np.maximum(np.abs(d), 0.5) + 0.3
            att = np.where(d > 0, dist * tw.db_up, dist * tw.db_down)
        own = (np.abs(d) < 1e-9) & (kind in (KIND_PLATE, KIND_EDGE))
        amp = tw.fe_codes * tw.disc_gain * 10 ** (-att / 20) * j / J_REF
        exc = w * _pulse_spectrum(f, tc)
        exc[3] *= own
        delay = np.where(own, 0.0, 5e-5 * np.abs(d) + 1e-4)
        tt = (n0 + k_idx)[:, None] / FS + skew[None, :] - t - delay[None, :]
        ttc = np.maximum(tt, 0.0)
        s = np.zeros((length, N_LEV))
        for m in range(4):
            s += exc[m] * np.exp(-ttc / tau[m]) * np.sin(2 * np.pi * f[m] * ttc)
        rise = np.where(own, 1.0, 1.0 - np.exp(-ttc / 6e-4))
        s *= np.where(tt >= 0, rise, 0.0) * amp
        a, b = max(n0, 0), min(n0 + length, n)
        x[a:b] += s[a - n0:b - n0].astype(np.float32)


def _resonator(level: int, tw: Tower) -> tuple[list[float], list[float]]:
    r = math.exp(-1.0 / (float(tw.mode_tau[0, level]) * FS))
    th = 2 * math.pi * float(tw.mode_f[0, level]) / FS
    return [1 - r], [1.0, -2 * r * math.cos(th), r * r]


def _render_slides(x: np.ndarray, tw: Tower, slides: list[tuple[float, float, int, float]],
                   rng: np.random.Generator) -> None:
    n = x.shape[0]
    for t0, dur, level, amp in slides:
        n0, m = int(t0 * FS), max(4, int(dur * FS))
        if n0 >= n or n0 < 0:
            continue
        b, a = _resonator(level, tw)
        y = signal.lfilter(b, a, rng.standard_normal(m))
        y *= amp * tw.disc_gain[level] / (np.std(y) + 1e-12) * np.hanning(m)
        m = min(m, n - n0)
        x[n0:n0 + m, level] += y[:m].astype(np.float32)
        for nb in (level - 1, level + 1):
            if 0 <= nb < N_LEV:
                x[n0:n0 + m, nb] += (0.25 * y[:m] * tw.disc_gain[nb] / tw.disc_gain[level]
                                     ).astype(np.float32)


def _render_forces_piezo(x: np.ndarray, tw: Tower, forces: list[tuple[int, float, np.ndarray]],
                         hp_a: float) -> None:
    """Slow forces on a plate reach its disc through the AC coupling (a decaying step)."""
    n = x.shape[0]
    for level, t0, prof in forces:
        n0 = int(t0 * FS)
        up = np.repeat(prof.astype(float), FS // FM)
        m = min(len(up) + int(0.2 * FS), n - n0)
        if m <= 0 or n0 < 0:
            continue
        up = np.concatenate([up, np.zeros(int(0.2 * FS))])[:m]
        y = signal.lfilter([hp_a, -hp_a], [1, -hp_a], up) * tw.k_static * tw.disc_gain[level]
        x[n0:n0 + m, level] += y.astype(np.float32)


def _band_noise(rng: np.random.Generator, m: int, lo: float, hi: float, fs: float) -> np.ndarray:
    sos = signal.butter(2, [lo, min(hi, 0.45 * fs)], btype="bandpass", fs=fs, output="sos")
    y = signal.sosfilt(sos, rng.standard_normal(m))
    return np.asarray(y / (np.std(y) + 1e-12))


def _render_bg(x: np.ndarray, tw: Tower, sc: Scene, rng: np.random.Generator) -> None:
    n = x.shape[0]
    coupling = rng.uniform(0.6, 1.4, N_LEV)
    for kind, t0, dur, amp, f in sc.piezo_bg:
        n0 = int(t0 * FS)
        m = min(int(dur * FS), n - n0)
        if kind == "pop":  # a static discharge or a relay: one or two samples on every channel
            if 0 <= n0 < n - 2:
                x[n0:n0 + 2] += (amp * rng.choice([-1, 1]) * coupling
                                 * np.array([[1.0], [0.4]])).astype(np.float32)
            continue
        if m <= 10 or n0 < 0:
            continue
        if kind == "talk":  # voices near the table: 120-900 Hz, syllables at 3-6 Hz
            y = _band_noise(rng, m, 120, 900, FS)
            env = signal.sosfilt(signal.butter(2, 5, fs=FS, output="sos"), rng.standard_normal(m))
            env = np.clip(env / (np.std(env) + 1e-12), 0, None) ** 1.5
            y *= amp * env
        elif kind == "music":  # a bass line through the table and the air
            tt = np.arange(m) / FS
            note_len = rng.uniform(0.25, 0.5)
            notes = rng.choice([41.2, 49.0, 55.0, 61.7, 73.4, 82.4, 98.0], int(dur / note_len) + 2)
            fi = notes[(tt / note_len).astype(int)]
            ph = 2 * np.pi * np.cumsum(fi) / FS
            y = amp * (np.sin(ph) + 0.4 * np.sin(2 * ph)) * (0.6 + 0.4 * np.cos(2 * np.pi * f * tt))
        else:  # "emi": a dimmer or a motor on the mains, spikes at twice the mains frequency
            y = np.zeros(m)
            period = FS / f
            idx = (np.arange(0, m, period) + rng.uniform(0, period)).astype(int)
            idx = idx[idx < m - 1]
            y[idx] = amp * rng.uniform(0.5, 1.0, len(idx))
            y[idx + 1] = -0.5 * y[idx]
        x[n0:n0 + m] += np.outer(y, coupling).astype(np.float32)
    for t0, dur, amp, lo, hi, _ in sc.rumbles:
        n0 = int(t0 * FS)
        m = min(int(dur * FS), n - n0)
        if m <= 20 or n0 < 0:
            continue
        y = _band_noise(rng, m, lo, hi, FS) * amp * np.hanning(m)
        gains = tw.disc_gain * rng.uniform(0.5, 1.5, N_LEV)
        x[n0:n0 + m] += np.outer(y, gains).astype(np.float32)


def _render_disconnected(x: np.ndarray, tw: Tower, sc: Scene, rng: np.random.Generator) -> None:
    """A lifted module's disc is off its front end: bias, hum picked up, contact crackle."""
    n = x.shape[0]
    for t_lift, _t_close, t_on, k in sc.open_spans:
        a, b = int(t_lift * FS), min(int(t_on * FS), n)
        if a >= n or b <= a:
            continue
        tt = np.arange(a, b) / FS
        for ch in range(k + 1, N_LEV):
            hum = tw.float_hum * rng.uniform(0.6, 1.4) * (
                np.sin(2 * np.pi * tw.mains_hz * tt + rng.uniform(0, 6.3))
                + 0.4 * np.sin(6 * np.pi * tw.mains_hz * tt + rng.uniform(0, 6.3)))
            wander = np.cumsum(rng.normal(0, 0.05, len(tt)))
            wander -= np.linspace(0, wander[-1], len(tt))
            x[a:b, ch] = (tw.bias[ch] + hum + wander
                          + 0.5 * rng.standard_normal(len(tt))).astype(np.float32)
            for edge in (a, b):  # springs scraping on and off: crackle for a few ms
                m = int(rng.uniform(0.005, 0.03) * FS)
                e0 = min(max(edge - m // 2, 0), n - m)
                if m > 0 and e0 >= 0:
                    spikes = rng.standard_normal(m) * rng.uniform(50, 300) * (rng.random(m) < 0.3)
                    x[e0:e0 + m, ch] += spikes.astype(np.float32)
            if b < n:  # the disc comes back charged: a step that the coupling lets decay
                m = min(int(0.2 * FS), n - b)
                x[b:b + m, ch] += (rng.uniform(-150, 150)
                                   * np.exp(-np.arange(m) / (tw.hp_tau_s * FS))).astype(np.float32)


def render_table(sc: Scene, rng: np.random.Generator) -> np.ndarray:
    """Vertical acceleration of the table top under the tower, m/s^2 at FS."""
    n = int(round(sc.duration * FS))
    a = np.zeros(n)
    for kind, t0, p1, p2, p3 in sc.table:
        n0 = int(t0 * FS)
        if n0 >= n or n0 < 0:
            continue
        if kind == "pulse":  # a damped table mode: f=p1, zeta=p2, peak p3
            f, zeta, amp = p1, p2, p3
            m = min(int(6 / (zeta * 2 * np.pi * f) * FS) + 1, n - n0)
            tt = np.arange(m) / FS
            a[n0:n0 + m] += amp * np.exp(-zeta * 2 * np.pi * f * tt) * np.sin(2 * np.pi * f * tt)
        elif kind == "noise":  # a chair scraping: dur=p1, centre f=p2, rms p3
            m = min(int(p1 * FS), n - n0)
            if m > 20:
                a[n0:n0 + m] += p3 * _band_noise(rng, m, 0.6 * p2, 1.6 * p2, FS) * np.hanning(m)
        else:  # "tone": a phone's vibration motor: dur=p1, f=p2, amp p3
            m = min(int(p1 * FS), n - n0)
            tt = np.arange(m) / FS
            ramp = np.clip(tt / 0.05, 0, 1) * np.clip((p1 - tt) / 0.05, 0, 1)
            a[n0:n0 + m] += p3 * ramp * np.sin(2 * np.pi * p2 * (tt + 0.002 * np.sin(7 * tt)))
    return a


def render_mech(tw: Tower, sc: Scene, a_tab: np.ndarray) -> np.ndarray:
    """Force on each load cell in grams (static weights, impacts, hands, table), (M, 8) @FM."""
    m = int((sc.duration + PRE_S) * FM) + 2
    i0 = int(PRE_S * FM)
    w = np.zeros((m, N_LEV))
    steps = np.zeros((m, N_LEV))
    for t, level, dm in sc.statics:
        i = i0 + int(round(t * FM))
        if 0 <= i < m:
            steps[i, level] += dm
    # a plate re-seats on its mount after handling: a new small offset, not a random walk
    now = np.zeros(N_LEV)
    for t, level, value in sorted(sc.settles):
        i = i0 + int(round(t * FM))
        if 0 <= i < m:
            steps[i, level] += value - now[level]
            now[level] = value
    w += np.cumsum(steps, axis=0)
    for level, t0, prof in sc.forces:
        i = i0 + int(round(t0 * FM))
        k = min(len(prof), m - i)
        if k > 0 and i >= 0:
            w[i:i + k, level] += prof[:k]
    # impacts: the plate rings on its cell; walls pass a little to the neighbours
    omega = 2 * np.pi * tw.f_mech
    zeta = tw.zeta_mech
    wd = omega * np.sqrt(1 - zeta**2)
    length = int(6 / float((zeta * omega).min()) * FM) + 2
    tt = np.arange(length)[:, None] / FM
    for t, pos, j, _tc, kind in sc.contacts:
        if kind == KIND_TABLE:
            continue
        d = np.abs(LEVELS - pos)
        own = (d < 1e-9) & (kind != KIND_WALL)
        share = np.where(own, 1.0, 0.12 * 0.35 ** np.maximum(d - 0.5, 0.0))
        ti = i0 + t * FM
        i = int(math.ceil(ti))
        if i >= m or i < 0:
            continue
        dt = (i - ti) / FM
        ttt = tt + dt
        h = np.exp(-zeta * omega * ttt) * np.sin(wd * ttt) * omega**2 / wd
        h /= np.maximum(h.sum(axis=0) / FM, 1e-9)  # each plate's response carries exactly J
        h *= (j * share / (GRAV * 1e-3))[None, :]
        k = min(length, m - i)
        w[i:i + k] += h[:k]
    # the table's motion: each plate on its cell is a mass on a spring shaken from below
    a_m = np.zeros(m)
    a2 = a_tab[: 2 * ((len(a_tab)) // 2)].reshape(-1, 2).mean(axis=1)
    a_m[i0:i0 + len(a2)] = a2[: m - i0]
    for lv in range(N_LEV):
        om, z = float(omega[lv]), float(zeta[lv])
        b, a = signal.bilinear([2 * z * om, om * om], [1, 2 * z * om, om * om], fs=FM)
        resp = signal.lfilter(b, a, a_m)
        # the cardboard joints damp what travels up the stack
        w[:, lv] += tw.plate_mass_g[lv] * resp / GRAV * 10 ** (-lv * tw.db_table / 40)
    return w


# --------------------------------------------------------------------------------------------
# The HX711s and the firmware that reads them


def _bspline4(u: np.ndarray) -> np.ndarray:
    """Cubic B-spline on [0, 4] (four cascaded one-period averages: the sinc^4 filter)."""
    out = np.zeros_like(u)
    s = (u >= 0) & (u < 1)
    out[s] = u[s] ** 3 / 6
    s = (u >= 1) & (u < 2)
    out[s] = (-3 * u[s] ** 3 + 12 * u[s] ** 2 - 12 * u[s] + 4) / 6
    s = (u >= 2) & (u < 3)
    out[s] = (3 * u[s] ** 3 - 24 * u[s] ** 2 + 60 * u[s] - 44) / 6
    s = (u >= 3) & (u < 4)
    out[s] = (4 - u[s]) ** 3 / 6
    return out


@dataclass
class LoadReads:
    """What the firmware read from the HX711s: one row per LOAD message."""

    t: np.ndarray  # read time (stream s)
    valid: np.ndarray  # (R,) uint8
    values: np.ndarray  # (R, 8) int64 counts as sent (0 where not valid)
    timeouts: np.ndarray  # cumulative load_timeouts after each read
    glitches: list[dict[str, Any]]


def _power_intervals(sc: Scene, t_boot: float, fresh: bool) -> list[list[tuple[float, float]]]:
    start = t_boot if fresh else -1e3
    out: list[list[tuple[float, float]]] = [[] for _ in range(N_LEV)]
    for ch in range(N_LEV):
        on = start
        for t_lift, _t_close, t_on, k in sorted(sc.open_spans):
            if ch > k:
                out[ch].append((on, t_lift))
                on = t_on
        out[ch].append((on, math.inf))
    return out


def read_loads(tw: Tower, sc: Scene, mech: np.ndarray, rng: np.random.Generator, *,
               t_boot: float, fresh: bool, t_first: float, t_end: float) -> LoadReads:
    """Simulate the firmware's HX711 loop and return every LOAD message's contents."""
    period = 1.0 / tw.chip_rate
    t_nom = 1.0 / tw.load_rate_hello
    timeout = 1.6 * t_nom
    power = _power_intervals(sc, t_boot, fresh)
    iv = [0] * N_LEV
    anchor = [0.0] * N_LEV
    for ch in range(N_LEV):
        on = power[ch][0][0]
        anchor[ch] = on + 4 * period[ch] * rng.uniform(1.0, 1.05) if fresh \
            else on + rng.uniform(0, period[ch])
    mode = ["A"] * N_LEV
    last_c = [-math.inf] * N_LEV
    miss = [0] * N_LEV
    absent = [False] * N_LEV

    # glitches on the shared SCK line (Poisson in time)
    events: list[tuple[float, str]] = []
    for rate, kind in ((tw.glitch_shift_per_min, "shift"), (tw.glitch_pdown_per_min, "pdown")):
        k = rng.poisson(rate * (t_end - t_first) / 60.0)
        events += [(float(x), kind) for x in rng.uniform(t_first + 2.0, t_end, k)]
    events.sort()
    ev_i = 0

    def next_after(ch: int, after: float) -> float:
        while iv[ch] < len(power[ch]):
            off = power[ch][iv[ch]][1]
            a = anchor[ch]
            c = a if after < a else a + (math.floor((after - a) / period[ch] + 1e-9) + 1) \
                * period[ch]
            while c <= after + 1e-9:
                c += period[ch]
            if c < off:
                return c
            iv[ch] += 1
            if iv[ch] < len(power[ch]):
                anchor[ch] = power[ch][iv[ch]][0] + 4 * period[ch] * rng.uniform(1.0, 1.05)
                mode[ch] = "A"
        return math.inf

    def latest(ch: int, t: float) -> float:
        a = anchor[ch]
        return a + math.floor((t - a) / period[ch] + 1e-9) * period[ch]

    ts: list[float] = []
    valids: list[int] = []
    conv: list[list[float]] = []
    kinds: list[list[int]] = []
    bits: list[list[int]] = []
    tos: list[int] = []
    glitches: list[dict[str, Any]] = []
    timeouts = 0
    t_prev = t_first - t_nom
    while True:
        wait = [ch for ch in range(N_LEV) if not absent[ch]]
        nxt = [next_after(ch, last_c[ch]) for ch in range(N_LEV)]
        t_ready = max((nxt[ch] for ch in wait), default=math.inf)
        t_to = t_prev + timeout
        t_read = t_ready + rng.uniform(5e-6, 1.2e-4) if t_ready <= t_to else t_to
        if not wait:
            t_read = t_prev + t_nom
        t_read = max(t_read, t_first, t_prev + 1e-5)
        if t_read >= t_end:
            break
        valid = 0
        row_c = [0.0] * N_LEV
        row_k = [0] * N_LEV
        row_b = [0] * N_LEV
        for ch in range(N_LEV):
            powered = iv[ch] < len(power[ch]) and t_read < power[ch][iv[ch]][1]
            if nxt[ch] <= t_read and powered:
                valid |= 1 << ch
                c = latest(ch, t_read)
                row_c[ch] = c
                last_c[ch] = c
                miss[ch] = 0
                absent[ch] = False
                if mode[ch] == "B":  # this conversion was of channel B: then back to A
                    row_k[ch] = 2
                    mode[ch] = "A"
                    anchor[ch] = t_read + 4 * period[ch]
            else:
                if nxt[ch] <= t_read:  # converted just before its power went: lost
                    last_c[ch] = nxt[ch]
                if absent[ch]:
                    continue
                miss[ch] += 1
                timeouts += 1
                if miss[ch] >= 3:
                    absent[ch] = True
        while ev_i < len(events) and events[ev_i][0] <= t_read:
            _, kind = events[ev_i]
            ev_i += 1
            fresh_chs = [ch for ch in range(N_LEV) if valid >> ch & 1 and row_k[ch] == 0]
            if not fresh_chs:
                continue
            if kind == "shift":  # an extra edge seen by the far end of the SCK line
                r = rng.random()
                if r < 0.5:
                    hit = [fresh_chs[int(rng.integers(0, len(fresh_chs)))]]
                elif r < 0.85:
                    far = int(rng.integers(4, 7))  # the chips at the far end of the line
                    hit = [ch for ch in fresh_chs if ch >= far] or fresh_chs[-1:]
                else:
                    hit = fresh_chs
                for ch in hit:
                    row_k[ch] = 1
                    row_b[ch] = int(rng.integers(0, 24))
                    mode[ch] = "B"  # 26 clocks: the next conversion is channel B, gain 32
                    anchor[ch] = t_read + 4 * period[ch]
                    glitches.append({"t": round(t_read, 6), "ch": ch, "kind": "shifted",
                                     "bit": row_b[ch]})
                    glitches.append({"t": round(t_read + 4 * period[ch], 6), "ch": ch,
                                     "kind": "channel_b"})
            else:  # SCK held high > 60 us by an interrupt: every chip powers down and resets
                for ch in fresh_chs:
                    row_k[ch] = 3
                    row_b[ch] = int(rng.integers(4, 24))
                    anchor[ch] = t_read + 4 * period[ch] * rng.uniform(1.0, 1.05)
                    mode[ch] = "A"
                    glitches.append({"t": round(t_read, 6), "ch": ch, "kind": "power_down",
                                     "bit": row_b[ch]})
        t_prev = t_read
        if not valid:  # nothing fresh: the firmware sends no LOAD
            continue
        ts.append(t_read)
        valids.append(valid)
        conv.append(row_c)
        kinds.append(row_k)
        bits.append(row_b)
        tos.append(timeouts)

    t_arr = np.array(ts)
    valid_arr = np.array(valids, np.int64)
    conv_arr = np.array(conv).reshape(-1, N_LEV)
    kind_arr = np.array(kinds, np.int64).reshape(-1, N_LEV)
    bit_arr = np.array(bits, np.int64).reshape(-1, N_LEV)
    values = _conversion_values(tw, sc, mech, rng, conv_arr, t_boot=t_boot, fresh=fresh)
    # garbage: what the firmware clocks in when an edge is extra or the chip powered down
    raw = values & 0xFFFFFF
    low = (1 << (24 - bit_arr)) - 1  # the bits clocked after the extra edge are one late
    shifted = (raw & ~low & 0xFFFFFF) | (((raw << 1) | 1) & low)
    pdown = raw | ((1 << (24 - bit_arr)) - 1)
    raw = np.where(kind_arr == 1, shifted, raw)
    raw = np.where(kind_arr == 3, pdown & 0xFFFFFF, raw)
    b_val = (tw.b_reading[None, :] + rng.normal(0, 2000, raw.shape)).astype(np.int64) & 0xFFFFFF
    raw = np.where(kind_arr == 2, b_val, raw)
    signed = np.where(raw >= 1 << 23, raw - (1 << 24), raw)
    vmask = ((valid_arr[:, None] >> np.arange(N_LEV)[None, :]) & 1).astype(bool)
    signed = np.where(vmask, signed, 0)
    return LoadReads(t_arr, valid_arr.astype(np.uint8), signed.astype(np.int64),
                     np.array(tos, np.int64), glitches)


def _temperature(duration: float, rng: np.random.Generator, t: np.ndarray, t_boot: float,
                 fresh: bool) -> np.ndarray:
    """Board temperature above its start, degC: room wander plus warm-up after power-on."""
    out = np.zeros_like(t)
    for _ in range(3):
        period = rng.uniform(300, 2400)
        out += rng.uniform(0.05, 0.25) * np.sin(2 * np.pi * t / period + rng.uniform(0, 6.3))
    out -= out[0] if len(out) else 0.0
    if fresh:
        rise = rng.uniform(1.5, 4.0)
        out += rise * (1 - np.exp(-np.maximum(t - t_boot, 0) / rng.uniform(300, 900)))
    return out


def _conversion_values(tw: Tower, sc: Scene, mech: np.ndarray, rng: np.random.Generator,
                       conv: np.ndarray, *, t_boot: float, fresh: bool) -> np.ndarray:
    """Counts each chip converted at the given completion times (sinc^4 over 4 periods)."""
    out = np.zeros(conv.shape, np.int64)
    i0 = PRE_S * FM
    temp_t = np.arange(0, sc.duration + 2, 1.0)
    temp = _temperature(sc.duration, rng, temp_t, t_boot, fresh)
    power = _power_intervals(sc, t_boot, fresh)
    cube_steps = [(t, lv, dm) for t, lv, dm in sc.statics]
    for ch in range(N_LEV):
        period = 1.0 / tw.chip_rate[ch]
        u = np.arange(int(4 * period * FM) + 1) / FM / period
        kern = _bspline4(u)
        kern /= kern.sum()
        y = signal.oaconvolve(mech[:, ch], kern)[: mech.shape[0]]
        c = conv[:, ch]
        idx = np.clip(np.round(i0 + c * FM).astype(np.int64), 0, len(y) - 1)
        g = y[idx]
        g += tw.tc_zero_g_per_c[ch] * np.interp(c, temp_t, temp)
        # creep: the cell's strain follows a load change by a fraction over minutes
        steps = sorted((t, dm) for t, lv, dm in cube_steps if lv == ch)
        if steps:
            st = np.array([x[0] for x in steps])
            sm = np.array([x[1] for x in steps])
            tau = float(tw.creep_tau_s[ch])
            k = np.searchsorted(st, c, side="right")
            s1 = np.concatenate([[0.0], np.cumsum(sm)])[k]
            s2 = np.concatenate([[0.0], np.cumsum(sm * np.exp(st / tau))])[k]
            g += tw.creep_frac[ch] * (s1 - np.exp(-c / tau) * s2)
        # self-heating of the gauges once the bridge is powered (after boot or a lift)
        for on, off in power[ch]:
            if on < -100:
                continue
            gap = 1.0 if (fresh and on == t_boot) else 1 - math.exp(-min(
                _off_before(power[ch], on), 600) / tw.selfheat_tau_s[ch])
            dt = c - on
            g += np.where((dt > 0) & (c < off), tw.selfheat_g[ch] * gap
                          * (1 - np.exp(-np.maximum(dt, 0) / tw.selfheat_tau_s[ch])), 0.0)
        noise = rng.normal(0, tw.noise_g[ch], len(c))
        slow = signal.lfilter([0.02], [1, -0.98], rng.normal(0, tw.noise_g[ch] * 0.5, len(c)))
        counts = tw.offset[ch] + tw.cpg[ch] * (g + noise + slow)
        out[:, ch] = np.clip(np.round(counts), -(2**23), 2**23 - 1).astype(np.int64)
    return out


def _off_before(intervals: list[tuple[float, float]], on: float) -> float:
    prev_off = max((off for _on, off in intervals if off <= on), default=None)
    return 600.0 if prev_off is None else on - prev_off


# --------------------------------------------------------------------------------------------
# The byte stream


@dataclass
class Stream:
    """A device's bytes, with where each message lies and when it was stamped."""

    data: bytes
    offsets: np.ndarray  # start byte of each frame
    kinds: np.ndarray  # message type
    t: np.ndarray  # stream time of the message (stamp for data, send time otherwise)


@dataclass
class DeviceData:
    """Everything the device will send, before framing."""

    piezo: np.ndarray  # (N, 8) uint16
    batch_start: np.ndarray
    batch_n: np.ndarray
    loads: LoadReads | None
    n_load_hello: int
    load_rate_hello: int


def _batches(n: int, sets: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    sizes = np.full(n // max(sets - 1, 1) + 2, sets)
    jitter = rng.random(len(sizes))
    sizes = np.where(jitter < 0.06, np.minimum(sets + 1, 14), sizes)
    sizes = np.where(jitter > 0.94, np.maximum(sets - 1, 1), sizes)
    starts = np.concatenate([[0], np.cumsum(sizes)])
    keep = starts[:-1] < n
    starts, sizes = starts[:-1][keep], sizes[keep]
    sizes[-1] = n - starts[-1]
    return starts.astype(np.int64), sizes.astype(np.int64)


def _u32(v: np.ndarray) -> np.ndarray:
    v = v.astype(np.int64) & 0xFFFFFFFF
    return np.stack([(v >> s) & 0xFF for s in (0, 8, 16, 24)], axis=1).astype(np.uint8)


def _u16(v: np.ndarray) -> np.ndarray:
    v = v.astype(np.int64) & 0xFFFF
    return np.stack([v & 0xFF, (v >> 8) & 0xFF], axis=1).astype(np.uint8)


def encode_epoch(dev: DeviceData, tw: Tower, *, t_from: float, t_to: float, us_base: int,
                 seq0: int, t_boot: float, hello_t: float | None, ack_seq: int | None,
                 rng: np.random.Generator) -> Stream:
    """Frame what the device sends between t_from and t_to (one power-on of the device).

    ``us_base``: the device's micros() at stream time 0 (the t_us of set 0).
    """
    msgs: list[tuple[float, int, int]] = []  # (send time, priority/kind, index)
    bs, bn = dev.batch_start, dev.batch_n
    b_t = bs / FS
    b_send = (bs + bn) / FS + 3e-5 + 1e-4 * (bn > tw.frame_sets)
    sel_b = np.nonzero((b_t >= t_from) & (b_t < t_to) & (b_send < t_to))[0]
    first_send = float(b_send[sel_b[0]]) if len(sel_b) else t_from
    msgs += [(float(b_send[i]), 2, int(i)) for i in sel_b]
    sel_l = np.zeros(0, np.int64)
    if dev.loads is not None and dev.n_load_hello:
        lt = dev.loads.t
        sel_l = np.nonzero((lt + 2e-4 > first_send) & (lt + 2e-4 < t_to) & (lt >= t_from))[0]
        msgs += [(float(lt[i] + 2e-4), 3, int(i)) for i in sel_l]
    status_t = np.arange(t_boot + 1.0, t_to, 1.0)
    status_t = status_t[status_t >= t_from]
    msgs += [(float(t), 4, i) for i, t in enumerate(status_t)]
    if hello_t is not None:
        msgs.append((hello_t, 0, 0))
        if ack_seq is not None:
            msgs.append((hello_t + 1e-4, 1, 0))
    msgs.sort()
    order = np.array([(k, i) for _, k, i in msgs], np.int64).reshape(-1, 2)
    seqs = (seq0 + np.arange(len(msgs))) & 0xFFFF
    counts = {0: 1, 1: 1, 2: len(bs), 3: 0 if dev.loads is None else len(dev.loads.t),
              4: len(status_t)}
    seq_by = {k: np.zeros(c, np.int64) for k, c in counts.items()}
    for k in range(5):
        sel = order[:, 0] == k
        seq_by[k][order[sel, 1]] = seqs[sel]
    enc: dict[int, list[bytes]] = {k: [b""] * c for k, c in counts.items()}

    def stamp(t: np.ndarray) -> np.ndarray:
        return (us_base + np.floor(np.round(t * 1e6, 3) / 4).astype(np.int64) * 4) & 0xFFFFFFFF

    # PIEZO, grouped by number of sets (equal-length rows)
    for nsets in np.unique(bn[sel_b]) if len(sel_b) else []:
        idx = sel_b[bn[sel_b] == nsets]
        rows = len(idx)
        body = dev.piezo[bs[idx][:, None] + np.arange(nsets)[None, :]]
        body_b = body.astype("<u2").view(np.uint8).reshape(rows, -1)
        seq = seq_by[2][idx]
        raw = np.concatenate([np.full((rows, 1), 2, np.uint8), _u16(seq),
                              _u32(stamp(bs[idx] / FS)), np.full((rows, 1), nsets, np.uint8),
                              body_b], axis=1)
        _encode_rows(raw, 2, idx, enc)
    if len(sel_l):
        assert dev.loads is not None
        lr = dev.loads
        rows = len(sel_l)
        vals = lr.values[sel_l] & 0xFFFFFF
        vb = np.stack([(vals >> s) & 0xFF for s in (0, 8, 16)], axis=2).reshape(rows, -1)
        seq = seq_by[3][sel_l]
        raw = np.concatenate([np.full((rows, 1), 3, np.uint8), _u16(seq), _u32(stamp(lr.t[sel_l])),
                              lr.valid[sel_l, None].astype(np.uint8), vb.astype(np.uint8)], axis=1)
        _encode_rows(raw, 3, sel_l, enc)
    if len(status_t):
        rows = len(status_t)
        seq = seq_by[4]
        uptime = np.round((status_t - t_boot) * 1000).astype(np.int64)
        to = np.zeros(rows, np.int64)
        if dev.loads is not None and len(dev.loads.t):
            last = np.searchsorted(dev.loads.t, status_t) - 1
            before = np.searchsorted(dev.loads.t, t_boot) - 1
            base = dev.loads.timeouts[before] if before >= 0 else 0
            to = np.where(last >= 0, dev.loads.timeouts[np.maximum(last, 0)] - base, 0)
        cpu = rng.integers(36, 52, rows)
        raw = np.concatenate([np.full((rows, 1), 4, np.uint8), _u16(seq), _u32(uptime),
                              _u16(np.zeros(rows)), _u16(np.zeros(rows)), _u16(to),
                              cpu[:, None].astype(np.uint8), np.zeros((rows, 1), np.uint8)],
                             axis=1)
        _encode_rows(raw, 4, np.arange(rows), enc)
    if hello_t is not None:
        body = bytes([1, *tw.fw, N_LEV, dev.n_load_hello]) + FS.to_bytes(2, "little") \
            + dev.load_rate_hello.to_bytes(2, "little") + bytes([10]) + tw.device_id
        # at boot the firmware sends a lone 0x00 first: a receiver cut mid-frame resynchronises
        enc[0][0] = (b"\x00" if ack_seq is None else b"") + frame(0x01, int(seq_by[0][0]), body)
        if ack_seq is not None:
            enc[1][0] = frame(0x05, int(seq_by[1][0]), bytes([0x81])
                              + ack_seq.to_bytes(2, "little") + b"\x00")
    parts = [enc[k][i] for k, i in order.tolist()]
    lengths = np.array([len(p) for p in parts], np.int64)
    offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]]) if len(parts) else np.zeros(0)
    kinds = np.array([1, 5, 2, 3, 4], np.int64)[order[:, 0]]
    times = np.zeros(len(order))
    for k, tk in ((2, bs / FS), (3, None if dev.loads is None else dev.loads.t), (4, status_t),
                  (0, np.array([hello_t or 0.0])), (1, np.array([hello_t or 0.0]))):
        sel = order[:, 0] == k
        if tk is not None and sel.any():
            times[sel] = tk[order[sel, 1]]
    return Stream(b"".join(parts), offsets.astype(np.int64), kinds, times)


def _encode_rows(raw: np.ndarray, kind: int, idx: np.ndarray, enc: dict[int, list[bytes]]
                 ) -> None:
    crc = crc16_rows(raw)
    coded = cobs_encode_rows(np.concatenate([raw, _u16(crc)], axis=1))
    dest = enc[kind]
    for i, row in zip(idx.tolist(), coded, strict=True):
        dest[i] = row.tobytes()


# --------------------------------------------------------------------------------------------
# Damage (the damaged family): what a cable, a busy laptop and a watchdog do to the bytes


def damage_stream(dev: DeviceData, tw: Tower, clean: Stream, *, us_base: int, seq0: int,
                  t_boot: float, ack_seq: int, duration: float, rng: np.random.Generator
                  ) -> tuple[bytes, list[dict[str, Any]]]:
    """The damaged twin of ``clean`` and its damage spans (stream seconds, physical)."""
    spans: list[dict[str, Any]] = []
    # a watchdog reset part way through: the frame on the wire is cut, nothing, then HELLO
    t_r = float(rng.uniform(0.45, 0.7) * duration)
    cut_i = int(np.argmax(clean.t >= t_r))
    while cut_i < len(clean.kinds) and clean.kinds[cut_i] not in (2, 3):
        cut_i += 1
    data_before = [i for i in range(cut_i) if clean.kinds[i] in (2, 3)]
    t_last = float(clean.t[data_before[-1]])
    start = int(clean.offsets[cut_i])
    end = int(clean.offsets[cut_i + 1])
    head = clean.data[:start] + clean.data[start:start + int(rng.integers(2, end - start - 1))]
    gap_boot = float(rng.uniform(0.05, 0.3))  # reset, startup delay, init
    t_boot2 = t_r + gap_boot
    first_set = int(math.ceil((t_boot2 + rng.uniform(0.02, 0.08)) * FS))
    k_b = int(np.searchsorted(dev.batch_start, first_set))
    t_resume = float(dev.batch_start[k_b] / FS)
    us_base2 = int(round(-t_boot2 * 1e6 / 4)) * 4
    second = encode_epoch(dev, tw, t_from=t_resume, t_to=duration, us_base=us_base2, seq0=0,
                          t_boot=t_boot2, hello_t=t_boot2 + 0.01, ack_seq=None, rng=rng)
    first_data = next(i for i, k in enumerate(second.kinds) if k in (2, 3))
    t_after = float(second.t[first_data])
    t_us_after = int(round((t_after - t_boot2) * 1e6 / 4)) * 4
    spans.append({"t_start": round(t_last, 6), "t_end": round(t_after, 6), "kind": "reboot",
                  "gap_s": round(t_after - t_last, 6), "t_us_after": t_us_after})
    body = bytearray(head)
    tail = bytearray(second.data)

    def span_of(stream: Stream, lo: int, hi: int) -> tuple[float, float]:
        """Stream times covered by the messages whose bytes lie in [lo, hi] (and the next)."""
        i0 = max(int(np.searchsorted(stream.offsets, lo, side="right")) - 1, 0)
        i1 = min(max(int(np.searchsorted(stream.offsets, hi, side="right")) - 1, 0) + 1,
                 len(stream.t) - 1)
        ts = stream.t[i0:i1 + 1]
        return float(ts.min()), float(ts.max()) + 0.01

    # byte-level damage in the first epoch (before the reboot) and the second
    ops: list[tuple[str, int, int]] = []
    for part, stream, n_max in ((body, clean, start), (tail, second, len(tail))):
        lo_t = QUIET_S + 2.0 if part is body else t_after + 2.0
        lo = int(stream.offsets[np.argmax(stream.t >= lo_t)]) if stream.t[-1] > lo_t else n_max
        if lo >= n_max - 5000:
            continue
        picks = []
        for kind in ("lost", "lost", "noise", "bitflip", "bitflip", "bitflip"):
            pos = int(rng.integers(lo, n_max - 4000))
            picks.append((kind, pos))
        picks.sort(key=lambda x: -x[1])  # from the end, so earlier offsets stay valid
        for kind, pos in picks:
            if kind == "lost":  # the host did not read in time: a run of bytes is gone
                n = int(rng.choice([64, 128, 512, 1024, 3000]) * rng.uniform(0.5, 1.0))
                a, b = span_of(stream, pos, pos + n)
                del part[pos:pos + n]
            elif kind == "noise":  # a burst on the TTL line: bytes replaced by junk
                n = int(rng.integers(10, 200))
                a, b = span_of(stream, pos, pos + n)
                part[pos:pos + n] = rng.integers(0, 256, n).astype(np.uint8).tobytes()
            else:  # one or two flipped bits
                a, b = span_of(stream, pos, pos + 1)
                for _ in range(int(rng.integers(1, 3))):
                    part[pos] ^= 1 << int(rng.integers(0, 8))
            ops.append((kind, pos, 0))
            spans.append({"t_start": round(a, 6), "t_end": round(b, 6), "kind": kind})
    # the recording was started while the device was running: it begins mid-frame
    n_lead = tw.frame_sets
    lead_body = ((us_base - n_lead * 500) & 0xFFFFFFFF).to_bytes(4, "little") + bytes([n_lead]) \
        + dev.piezo[:n_lead].astype("<u2").tobytes()
    lead = frame(0x02, (seq0 - 1) & 0xFFFF, lead_body)
    cut = int(rng.integers(8, len(lead) - 2))
    prefix = lead[cut:]
    spans.append({"t_start": 0.0, "t_end": 0.0, "kind": "midframe"})
    spans.sort(key=lambda s: s["t_start"])
    return prefix + bytes(body) + bytes(tail), spans


# --------------------------------------------------------------------------------------------
# One recording


def make_recording(seed: int, scenario: str, duration: float, out: Path) -> tuple[Path, Path]:
    """Write ``{scenario}_t{seed}.bin`` and its ``.truth.json`` into ``out``; return both paths.

    ``damaged`` also writes its clean twin ``damagedclean_t{seed}``.
    """
    if scenario not in SCENARIOS:
        raise ValueError(f"unknown scenario {scenario!r}")
    out.mkdir(parents=True, exist_ok=True)
    tw = make_tower(seed)
    sc = build_scene(tw, scenario, duration, seed)
    rng = np.random.default_rng([seed, SCENARIO_CODE[scenario], 2])
    # the device: just booted (the port's DTR resets an Arduino) or running for a while
    fresh = scenario not in ("damaged",) and rng.random() < 0.65
    if scenario == "long":
        fresh = seed % 2 == 0
    if fresh:  # HELLO at boot, the first sample set a moment later
        us_base = int(rng.uniform(0.03, 0.12) * 1e6)
    elif scenario == "long" or rng.random() < 0.25:  # the u32 microsecond clock wraps in it
        us_base = 2**32 - int(rng.uniform(0.2, 0.8) * duration * 1e6)
    else:
        us_base = int(rng.uniform(60, 4000) * 1e6)
    us_base = (us_base // 4) * 4
    wraps_before = 0 if fresh else int(rng.integers(0, 2))
    t_boot = -(us_base + wraps_before * 2**32) / 1e6  # uptime agrees with t_us
    seq0 = 0 if fresh else int(rng.integers(0, 65536))
    ack_seq = None if fresh else int(rng.integers(0, 65536))  # the host asked GET_INFO
    hello_t = t_boot + 0.002 if fresh else -float(rng.uniform(0.002, 0.004))

    a_tab = render_table(sc, rng)
    piezo = render_piezo(tw, sc, max(1.0, _hum_x(sc, tw, seed, scenario)), rng, a_tab)
    starts, sizes = _batches(piezo.shape[0], tw.frame_sets, rng)
    acoustic = scenario == "acoustic"
    loads = None
    if not acoustic:
        mech = render_mech(tw, sc, a_tab)
        first_send = float((starts[0] + sizes[0]) / FS)
        loads = read_loads(tw, sc, mech, rng, t_boot=t_boot, fresh=fresh,
                           t_first=first_send + 1e-4, t_end=duration)
    n_load = (0 if seed % 2 else N_LEV) if acoustic else N_LEV
    dev = DeviceData(piezo, starts, sizes, loads, n_load,
                     0 if n_load == 0 else tw.load_rate_hello)
    stream = encode_epoch(dev, tw, t_from=0.0, t_to=duration, us_base=us_base, seq0=seq0,
                          t_boot=t_boot, hello_t=hello_t, ack_seq=ack_seq, rng=rng)
    truth = _truth(tw, sc, scenario, seed, duration, loads, fresh=fresh, us_base=us_base)
    bin_path = out / f"{scenario}_t{seed}.bin"
    truth_path = out / f"{scenario}_t{seed}.truth.json"
    if scenario == "damaged":
        clean_truth = {**truth, "scenario": "damagedclean"}
        (out / f"damagedclean_t{seed}.bin").write_bytes(stream.data)
        (out / f"damagedclean_t{seed}.truth.json").write_text(json.dumps(clean_truth, indent=1))
        data, spans = damage_stream(dev, tw, stream, us_base=us_base, seq0=seq0, t_boot=t_boot,
                                    ack_seq=ack_seq or 0, duration=duration, rng=rng)
        truth["damage"] = spans
        bin_path.write_bytes(data)
    else:
        bin_path.write_bytes(stream.data)
    truth_path.write_text(json.dumps(truth, indent=1))
    return bin_path, truth_path


def _hum_x(sc: Scene, tw: Tower, seed: int, scenario: str) -> float:
    rng = np.random.default_rng([seed, SCENARIO_CODE[scenario], 3])
    base = {"single": 1.0, "rapid": 1.0, "noisy": ROOMS["noisy"]["hum_x"]}.get(
        scenario, ROOMS["game"]["hum_x"])
    return float(base * rng.uniform(0.7, 1.3))


def _truth(tw: Tower, sc: Scene, scenario: str, seed: int, duration: float,
           loads: LoadReads | None, *, fresh: bool, us_base: int) -> dict[str, Any]:
    clock_wraps = us_base + duration * 1e6 >= 2**32
    return {
        "format": FORMAT,
        "generator": "crosscheck_r",
        "scenario": scenario,
        "seed": seed,
        "duration_s": duration,
        "cells": tw.cells,
        "landings": sc.landings,
        "knockdowns": sc.knockdowns,
        "removals": sc.removals,
        "lifts": sc.lifts,
        "closes": sc.closes,
        "knocks": sc.knocks,
        "open_spans": [[round(a, 6), round(b, 6)] for a, b, _c, _k in sc.open_spans],
        "moved_while_lifted": sc.moved,
        "hx711_glitches": loads.glitches if loads is not None else [],
        "room": sorted(sc.room, key=lambda r: r["t"]),
        "game": sc.game,
        "device": {"fresh_boot": fresh, "t_us_at_zero": us_base, "clock_wraps": bool(clock_wraps),
                   "load_messages": 0 if loads is None else len(loads.t)},
        "clock_wraps": bool(clock_wraps),
        "tower": tw.to_json(),
    }


# --------------------------------------------------------------------------------------------
# Command line


def _job(args: tuple[int, str, float, str]) -> str:
    seed, scenario, duration, out = args
    make_recording(seed, scenario, duration, Path(out))
    return f"{scenario}_t{seed}"


def main(argv: list[str] | None = None) -> int:
    """Command line: write recordings and truths for a range of tower seeds."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--towers", type=int, default=4)
    p.add_argument("--first-seed", type=int, default=1)
    p.add_argument("--duration", type=float, default=120.0)
    p.add_argument("--long-duration", type=float, default=1800.0)
    p.add_argument("--scenarios", nargs="+", default=list(DEFAULT_SCENARIOS))
    p.add_argument("--workers", type=int, default=2)
    args = p.parse_args(argv)
    bad = [s for s in args.scenarios if s not in SCENARIOS]
    if bad:
        print(f"unknown scenario {bad[0]!r} (known: {', '.join(SCENARIOS)})", file=sys.stderr)
        return 2
    if args.duration < 12 or args.long_duration < 12:
        print("durations must be at least 12 s", file=sys.stderr)
        return 2
    jobs = [(seed, s, args.long_duration if s == "long" else args.duration, str(args.out))
            for s in args.scenarios
            for seed in range(args.first_seed, args.first_seed + args.towers)]
    jobs.sort(key=lambda j: -j[2])  # long ones first
    started = time.perf_counter()
    args.out.mkdir(parents=True, exist_ok=True)
    if args.workers <= 1:
        for j in jobs:
            _job(j)
    else:
        with ProcessPoolExecutor(args.workers) as pool:
            list(pool.map(_job, jobs))
    print(f"{len(jobs)} recordings in {args.out} ({time.perf_counter() - started:.1f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
