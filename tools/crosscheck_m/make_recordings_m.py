#!/usr/bin/env python3
"""Cross-check model M: a by-the-book simulator of a real home tower played by real families.

Written only from /work/shared/contracts.md, design.md, the rule texts, the scorer
(tools/crosscheck/score.py) and public datasheets, without reading the project's own
simulator, detector, host code or the other cross-check generators. See README.md in
this folder for every modelling choice and its numbers.

Usage::

    .venv/bin/python tools/crosscheck_m/make_recordings_m.py --out DIR --towers N \
        --first-seed S --duration SECONDS [--scenarios single rapid noisy game]

writes DIR/{scenario}_t{seed}.bin (the device -> host bytes) and
DIR/{scenario}_t{seed}.truth.json (ground truth in stream seconds) for every seed
S..S+N-1. A seed is one physical tower (geometry, sensors, electronics, firmware
build); the four scenarios of a seed are four sessions on that same tower.
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
from scipy.signal import butter, lfilter

FORMAT = "towerear-crosscheck-truth/1"
SCENARIOS = ("single", "rapid", "noisy", "game")
TAG = 0x4D  # "M": keeps this model's random streams apart from any other use of a seed
G = 9.80665
N_LEV = 8
QUIET_S = 4.0  # the detector tares on the first seconds: nothing happens before this
COLOURS = ("yellow", "blue", "brown", "gray", "black", "white")

# Square-plate mode shapes (a, b): phi = cos(a*pi*(x/W + 1/2)) * cos(b*pi*(y/W + 1/2)), and
# the frequency ratios of the first bending modes of a thin square plate with light supports.
MODE_AB = ((1, 1), (2, 0), (0, 2), (2, 1), (1, 2), (2, 2), (3, 1))
MODE_RATIO = np.array([1.0, 1.48, 1.83, 2.62, 3.25, 4.10, 5.30])
MODE_WEIGHT = np.array([1.0, 0.8, 0.8, 0.6, 0.6, 0.45, 0.35])
ADC_SKEW_S = 54e-6  # ADC clock 250 kHz (16 MHz / 64): 13 cycles + ISR per channel
HX_COUNTS_PER_G_PER_MV_V = 128 * 2**24 / 100.0 / 1000.0  # 100 g cell, gain 128: 21474.8
LOAD_TIMEOUT_S = 0.020  # firmware: give up waiting for a silent HX711 after 20 ms
TIP_PUSH = 0.1  # m/s: a cube tipping over a rim is pushed toward the hole
TIP_SPIN = 0.3  # m/s: ... and sideways by its spin


# ============================================================================ wire encoding

def _make_crc_table() -> np.ndarray:
    table = np.zeros(256, np.uint32)
    for i in range(256):
        c = i << 8
        for _ in range(8):
            c = ((c << 1) ^ 0x1021) if c & 0x8000 else (c << 1)
        table[i] = c & 0xFFFF
    return table


_CRC_TABLE = _make_crc_table()
_CRC_LIST = [int(x) for x in _CRC_TABLE]


def crc16_ccitt_false(data: bytes) -> int:
    """CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, no reflection, xorout 0), table driven."""
    crc = 0xFFFF
    for b in data:
        crc = ((crc << 8) & 0xFFFF) ^ _CRC_LIST[(crc >> 8) ^ b]
    return crc


def crc16_ccitt_false_reference(data: bytes) -> int:
    """The same CRC bit by bit, straight from the definition (a second implementation)."""
    crc = 0xFFFF
    for b in data:
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) & 0xFFFF if crc & 0x8000 else (crc << 1) & 0xFFFF
    return crc


def crc16_rows(rows: np.ndarray) -> np.ndarray:
    """CRC-16/CCITT-FALSE of every row of a (N, L) uint8 array at once."""
    crc = np.full(rows.shape[0], 0xFFFF, np.uint32)
    for col in range(rows.shape[1]):
        crc = ((crc << 8) & 0xFFFF) ^ _CRC_TABLE[(crc >> 8) ^ rows[:, col]]
    return crc


def cobs_encode(data: bytes) -> bytes:
    """Consistent Overhead Byte Stuffing (no trailing delimiter).

    Each zero-free run becomes (length + 1, run); a run of 254 bytes is sent as a 0xFF
    block that implies no zero; data ending right after such a block needs no final block.
    """
    out = bytearray()
    segments = data.split(b"\x00")
    for i, seg in enumerate(segments):
        last = i == len(segments) - 1
        full = 0
        while len(seg) >= 254:
            out.append(0xFF)
            out += seg[:254]
            seg = seg[254:]
            full += 1
        if last and full and not seg:
            break
        out.append(len(seg) + 1)
        out += seg
    return bytes(out)


def cobs_encode_rows(rows: np.ndarray) -> np.ndarray:
    """COBS-encode every row of a (N, L) uint8 array (L <= 253) and append the 0x00 delimiter.

    With L <= 253 no run reaches 254 bytes, so the encoding is the row with a leading
    code byte, each zero replaced by the distance to the next zero (or to the end).
    Returns an (N, L + 2) uint8 array.
    """
    n, length = rows.shape
    assert length <= 253
    ext = np.zeros((n, length + 2), np.int32)
    ext[:, 1:length + 1] = rows
    zero = ext == 0
    pos = np.arange(length + 2)
    idx = np.where(zero, pos, length + 2)
    idx[:, length + 1] = length + 1
    nxt = np.minimum.accumulate(idx[:, ::-1], axis=1)[:, ::-1]  # next zero at or after i
    dist = nxt[:, 1:] - pos[:length + 1]
    out = np.zeros((n, length + 2), np.uint8)
    out[:, :length + 1] = np.where(zero[:, :length + 1], dist, ext[:, :length + 1])
    return out


# ============================================================================ the tower

class Tower:
    """One physical tower: cardboard, cubes, sensors, electronics and firmware build."""

    def __init__(self, seed: int) -> None:
        rng = np.random.default_rng([TAG, seed, 0])
        self.seed = seed
        # --- geometry (metres) -------------------------------------------------------
        self.half_w = float(rng.uniform(0.046, 0.052))  # inner half width of a module
        self.cube_side = float(rng.uniform(0.0088, 0.0102))
        density = float(rng.uniform(0.50, 0.72))  # g/cm^3: lime/pine .. beech
        self.cube_mass_g = float(np.clip(density * (self.cube_side * 100) ** 3, 0.3, 0.8))
        self.drop_h = rng.uniform(0.025, 0.030, N_LEV)  # roof plane of module m -> plate m
        # Square holes, smaller upwards (24 mm wide in plate 1 to 19 mm in plate 7); each
        # hole sits off the axis, in a direction turning ~120 degrees from level to level,
        # farther out in the lower modules, so few cubes fall clean to the ground floor.
        hs = np.sort(np.linspace(0.0120, 0.0095, 7) + rng.normal(0, 0.0004, 7))[::-1]
        self.hole_half = np.r_[0.0, hs]  # plate m (m >= 1) has a square hole; the base none
        r_lo = np.array([0, 8, 7, 6, 5, 4, 3, 3]) * 1e-3
        self.hole_off = np.zeros((N_LEV, 2))
        th = float(rng.uniform(0, 2 * np.pi))
        for m in range(1, N_LEV):
            th += np.deg2rad(120 + rng.uniform(-30, 30))
            rad = rng.uniform(r_lo[m], r_lo[m] + 0.003)
            self.hole_off[m] = rad * np.cos(th), rad * np.sin(th)
        self.entry_half = float(hs[-1] - 0.0005)
        self.entry_off = np.clip(rng.normal(0, 0.0015, 2), -0.003, 0.003)
        self.restitution = float(rng.uniform(0.30, 0.50))  # wood on card over a spring
        self.mu = float(rng.uniform(0.30, 0.50))  # wood on printed card, sliding + tumbling
        # --- plates on their cells ---------------------------------------------------
        self.plate_g = rng.uniform(10.0, 22.0, N_LEV)
        self.plate_g[0] = rng.uniform(18.0, 35.0)
        self.f_rigid = rng.uniform(45.0, 110.0, N_LEV)  # plate mass on the cell's stiffness
        self.zeta_rigid = rng.uniform(0.02, 0.07, N_LEV)
        f1 = rng.uniform(190.0, 360.0, N_LEV)
        self.mode_f = f1[:, None] * MODE_RATIO[None, :] * (1 + rng.normal(0, 0.04, (N_LEV, 7)))
        q1 = rng.uniform(14.0, 35.0, N_LEV)
        self.mode_q = q1[:, None] * (self.mode_f / f1[:, None]) ** -0.3
        self.mode_w = MODE_WEIGHT[None, :] * rng.uniform(0.7, 1.3, (N_LEV, 7))
        ang = rng.uniform(0, 2 * np.pi, N_LEV)
        rad = rng.uniform(0.022, 0.036, N_LEV)
        self.piezo_xy = np.stack([rad * np.cos(ang), rad * np.sin(ang)], axis=1)
        # Wall-borne coupling: each stacking joint between modules costs 8-14 dB, more at
        # high frequencies (card damps them); a per-pair factor for the receiving plate.
        self.joint_db = rng.uniform(8.0, 14.0, N_LEV)
        self.joint_db_per_khz = rng.uniform(2.0, 6.0, N_LEV)
        self.rcv_part = rng.uniform(0.3, 1.0, (N_LEV, N_LEV, 7)) * rng.choice([-1, 1],
                                                                              (N_LEV, N_LEV, 7))
        self.rubbing = -1  # a plate touching a wall (warped card): friction in the load path
        self.rub_g = 0.0
        if rng.random() < 0.2:
            self.rubbing = int(rng.integers(1, N_LEV))
            self.rub_g = float(rng.uniform(0.04, 0.15))
        # --- piezo front end and the AVR ADC ----------------------------------------
        self.piezo_rate = 2000
        self.piezo_sens = rng.uniform(0.8, 1.8, N_LEV) * 2.0e5  # codes per N s (see README)
        self.piezo_hp_hz = rng.uniform(8.0, 30.0) * rng.uniform(0.95, 1.05, N_LEV)
        self.bias = 511.5 + rng.normal(0, 2.5, N_LEV)
        self.adc_noise = float(rng.uniform(0.35, 0.8))
        self.ghost = rng.uniform(0.001, 0.005, N_LEV)
        shielded = rng.random() < 0.6
        self.wiring = "shielded" if shielded else "ribbon"
        base_hum = rng.uniform(0.2, 1.0) if shielded else rng.uniform(1.0, 4.0)
        self.hum_codes = base_hum * rng.uniform(0.6, 1.4, N_LEV) * (1 + 0.08 * np.arange(N_LEV))
        self.hum_phase = rng.uniform(0, 2 * np.pi, (N_LEV, 5))
        self.mains_hz = 50.0 if rng.random() < 0.8 else 60.0
        self.hum_harm = np.array([1.0, rng.uniform(0.05, 0.2), rng.uniform(0.3, 0.6),
                                  rng.uniform(0.1, 0.3), rng.uniform(0.05, 0.15)])
        # --- microcontroller and firmware -------------------------------------------
        self.resonator = bool(rng.random() < 0.3)
        self.clock_err = float(rng.uniform(-3e-3, 3e-3) if self.resonator
                               else rng.normal(0, 40e-6))
        fw = [((1, 0, 3), 8, 1.0), ((1, 1, 0), 10, 1.0), ((1, 2, 1), 12, 2.0),
              ((1, 1, 2), 5, 1.0)][int(rng.choice(4, p=[0.3, 0.35, 0.2, 0.15]))]
        self.fw_version: tuple[int, int, int] = fw[0]
        self.piezo_batch: int = fw[1]
        self.status_period_s: float = fw[2]
        self.device_id = bytes(rng.integers(0, 256, 8).astype(np.uint8))
        self.host_pings = bool(rng.random() < 0.3)
        self.cpu_load = float(rng.uniform(24, 40))
        # --- HX711s and cells --------------------------------------------------------
        osc = np.clip(rng.normal(0, 0.02, N_LEV), -0.05, 0.05)  # on-chip oscillator spread
        self.hx_rate = 80.0 * (1 + osc)  # true conversions per second
        self.hx_period = (1 / self.hx_rate) * (1 + self.clock_err)  # in device seconds
        self.cells = "matched" if rng.random() < 0.6 else "mixed"
        cell_types = [("bar 100 g, 1.0 mV/V", 1.0), ("mini 100 g, 0.6 mV/V", 0.6),
                      ("bar 100 g, 0.8 mV/V", 0.8)]
        first = int(rng.choice(3, p=[0.6, 0.25, 0.15]))
        self.cell_type = [cell_types[first][0]] * N_LEV
        lot = cell_types[first][1] * (1 + rng.uniform(-0.15, 0.15))
        ro = lot * (1 + rng.normal(0, 0.02, N_LEV))
        self.cell_sign = np.ones(N_LEV)
        if self.cells == "mixed":
            n_second = int(rng.integers(2, 5))
            which = rng.choice(N_LEV, n_second, replace=False)
            other = int(rng.choice([i for i in range(3) if i != first]))
            lot2 = cell_types[other][1] * (1 + rng.uniform(-0.15, 0.15))
            ro[which] = lot2 * (1 + rng.normal(0, 0.02, n_second))
            for w in which:
                self.cell_type[int(w)] = cell_types[other][0]
            if rng.random() < 0.35:  # the other vendor's wire colours: signal leads swapped
                self.cell_sign[which] = -1.0
        self.rated_mv_v = ro
        self.counts_per_g = ro * HX_COUNTS_PER_G_PER_MV_V
        zero_bal_g = rng.uniform(-0.1, 0.1, N_LEV) / ro * 100.0  # zero balance +-0.1 mV/V
        self.zero_counts = self.cell_sign * self.counts_per_g * (self.plate_g + zero_bal_g)
        self.hx_noise_counts = 45.0 * rng.uniform(1.0, 2.5, N_LEV)  # 90 nV rms at 80 SPS
        self.drift_mg_rt_s = rng.uniform(0.1, 0.5, N_LEV)
        self.eccentric = rng.uniform(0.002, 0.01, N_LEV)
        self.ecc_dir = rng.uniform(0, 2 * np.pi, N_LEV)

    # -- derived helpers -----------------------------------------------------------------
    def phi(self, level: int, xy: np.ndarray) -> np.ndarray:
        """Mode shapes of plate ``level`` at point(s) ``xy`` (metres from the tower axis)."""
        w = 2 * self.half_w
        xy = np.atleast_2d(xy)
        out = np.empty((xy.shape[0], len(MODE_AB)))
        for k, (a, b) in enumerate(MODE_AB):
            out[:, k] = (np.cos(a * np.pi * (xy[:, 0] / w + 0.5))
                         * np.cos(b * np.pi * (xy[:, 1] / w + 0.5)))
        return out

    def path_gain(self, src: int, dst: int, f: np.ndarray) -> np.ndarray:
        """Amplitude factor of the wall path from plate ``src`` to plate ``dst`` at ``f``."""
        if src == dst:
            return np.ones_like(f)
        lo, hi = sorted((src, dst))
        joints = range(lo + 1, hi + 1)
        db = sum(self.joint_db[j] + self.joint_db_per_khz[j] * f / 1000.0 for j in joints)
        return np.asarray(10 ** (-db / 20))

    def describe(self) -> dict[str, Any]:
        return {
            "cube_side_mm": round(self.cube_side * 1000, 2),
            "cube_mass_g": round(self.cube_mass_g, 4),
            "inner_width_mm": round(2 * self.half_w * 1000, 1),
            "hole_width_mm": [round(2 * h * 1000, 1) for h in self.hole_half],
            "hole_offset_mm": np.round(self.hole_off * 1000, 2).tolist(),
            "restitution": round(self.restitution, 3), "friction": round(self.mu, 3),
            "plate_g": np.round(self.plate_g, 2).tolist(),
            "plate_on_cell_hz": np.round(self.f_rigid, 1).tolist(),
            "plate_first_mode_hz": np.round(self.mode_f[:, 0], 1).tolist(),
            "rubbing_plate": self.rubbing, "rubbing_friction_g": round(self.rub_g, 3),
            "cells": self.cells, "cell_type": self.cell_type,
            "counts_per_g": np.round(self.counts_per_g, 1).tolist(),
            "cell_sign": self.cell_sign.astype(int).tolist(),
            "hx711_rate_hz": np.round(self.hx_rate, 3).tolist(),
            "hx711_noise_counts": np.round(self.hx_noise_counts, 1).tolist(),
            "piezo_rate_hz": self.piezo_rate, "piezo_batch": self.piezo_batch,
            "piezo_wiring": self.wiring, "mains_hz": self.mains_hz,
            "mcu_clock": "resonator" if self.resonator else "crystal",
            "clock_error_ppm": round(self.clock_err * 1e6, 1),
            "firmware": ".".join(map(str, self.fw_version)),
            "status_period_s": self.status_period_s, "host_pings": self.host_pings,
        }


# ============================================================================ rooms

@dataclass
class Room:
    name: str
    talk_per_s: float  # utterances per second
    talk_codes: tuple[float, float]  # amplitude range on the piezos
    laugh_per_s: float
    music: bool
    hum_gain: float
    knock_every_s: float  # mean interval of table knocks (inf: none)


def make_room(scenario: str, rng: np.random.Generator) -> Room:
    if scenario == "single":
        return Room("quiet kitchen table", 1 / 25, (0.2, 1.0), 0.0, False,
                    float(rng.uniform(0.8, 1.2)), math.inf)
    if scenario == "rapid":
        return Room("living room", 1 / 12, (0.3, 1.5), 1 / 120, False,
                    float(rng.uniform(0.8, 1.3)), math.inf)
    if scenario == "noisy":
        return Room("party", 1.2, (0.8, 3.5), 1 / 15, True, float(rng.uniform(1.5, 3.0)),
                    float(rng.uniform(6.0, 12.0)))
    return Room("family game evening", 1 / 4, (0.4, 2.5), 1 / 40, False,
                float(rng.uniform(1.0, 1.5)), float(rng.uniform(60.0, 120.0)))


# ============================================================================ physics of play

@dataclass
class Cube:
    cid: int
    mass_g: float
    colour: str
    level: int = -1
    pos: np.ndarray = field(default_factory=lambda: np.zeros(2))
    t_rest: float = math.inf
    t_gone: float = math.inf


@dataclass
class Strike:
    t: float
    level: int  # plate whose modes it drives
    impulse: float  # N s
    kind: str
    xy: np.ndarray
    contact_s: float
    load_g: float  # cubes resting on that plate (mass loading of its modes)
    to_cell: bool  # whether the impulse goes through that plate's load cell


@dataclass
class Burst:
    """Band-limited noise on the piezos: scraping, fingers, hands rubbing card."""

    t0: float
    t1: float
    level: int
    codes: float
    band: tuple[float, float]
    spread: float  # 1: wall-borne to other levels as strikes; 0: this level only


def cheb(v: np.ndarray) -> float:
    return float(max(abs(v[0]), abs(v[1])))


class World:
    """The tower's physical state and everything that happens to it, in stream seconds."""

    def __init__(self, tower: Tower, rng: np.random.Generator, duration: float) -> None:
        self.tw = tower
        self.rng = rng
        self.duration = duration
        self.cubes: list[Cube] = []
        self.strikes: list[Strike] = []
        self.weights: list[tuple[float, int, float]] = []  # (t, level, grams)
        self.touches: list[tuple[float, float, int, float]] = []  # (t0, t1, level, grams)
        self.bursts: list[Burst] = []
        self.clicks: list[tuple[float, int, float]] = []
        self.lifted: list[tuple[float, float, int]] = []  # (t_break, t_make, exposed)
        self.base_acc: list[tuple[float, float, float, int]] = []  # (t, m/s^2, s, top level)
        self.stack_acc: list[tuple[float, float, int, float]] = []
        self.thermal: list[tuple[float, int, float]] = []
        self.landings: list[dict[str, Any]] = []
        self.knockdowns: list[dict[str, Any]] = []
        self.removals: list[dict[str, Any]] = []
        self.lifts: list[dict[str, Any]] = []
        self.closes: list[dict[str, Any]] = []
        self.knocks: list[dict[str, Any]] = []
        self._knocked_this_throw = False
        self._pending_knocked: list[dict[str, Any]] = []

    # ---- state ----------------------------------------------------------------------
    def checkpoint(self) -> dict[str, Any]:
        lists = {k: len(v) for k, v in vars(self).items() if isinstance(v, list)}
        state = [(c.level, c.pos.copy(), c.t_rest, c.t_gone) for c in self.cubes]
        return {"lists": lists, "cubes": state}

    def restore(self, cp: dict[str, Any]) -> None:
        for k, n in cp["lists"].items():
            del getattr(self, k)[n:]
        for c, (level, pos, t_rest, t_gone) in zip(self.cubes, cp["cubes"], strict=True):
            c.level, c.pos, c.t_rest, c.t_gone = level, pos, t_rest, t_gone

    def resting(self, level: int, t: float) -> list[Cube]:
        return [c for c in self.cubes if c.level == level and c.t_rest <= t < c.t_gone]

    def load_on(self, level: int, t: float) -> float:
        return sum(c.mass_g for c in self.resting(level, t))

    def new_cube(self, colour: str) -> Cube:
        m = self.tw.cube_mass_g * (1 + float(np.clip(self.rng.normal(0, 0.04), -0.1, 0.1)))
        cube = Cube(len(self.cubes), m, colour)
        self.cubes.append(cube)
        return cube

    # ---- primitives -----------------------------------------------------------------
    def strike(self, t: float, level: int, impulse: float, kind: str, xy: np.ndarray,
               rec: dict[str, Any] | None, contact: float | None = None,
               to_cell: bool = True) -> None:
        if contact is None:
            contact = {"cube": 1.5e-4, "clack": 3e-4}.get(kind, float(self.rng.uniform(3e-4,
                                                                                       9e-4)))
        self.strikes.append(Strike(t, level, impulse, kind, np.array(xy, float), contact,
                                   self.load_on(level, t), to_cell))
        if rec is not None:
            rec["strikes"].append([round(t, 5), level, kind])

    def move(self, t: float, p: np.ndarray, u: np.ndarray, dt: float, module: int,
             mass_kg: float, rec: dict[str, Any] | None) -> tuple[np.ndarray, np.ndarray]:
        """Move a flying cube for ``dt`` inside module ``module``, bouncing off its walls."""
        lim = self.tw.half_w - self.tw.cube_side / 2
        p = p + u * dt
        u = u.copy()
        for ax in (0, 1):
            if abs(p[ax]) > lim:
                side = math.copysign(lim, p[ax])
                frac = (side - (p[ax] - u[ax] * dt)) / (u[ax] * dt) if u[ax] != 0 else 0.5
                t_hit = t + float(np.clip(frac, 0, 1)) * dt
                j = mass_kg * 1.5 * abs(u[ax])
                wall_xy = p.copy()
                wall_xy[ax] = side
                # A wall of module m carries the cell of plate m+1 (the module's roof).
                upper = min(module + 1, N_LEV - 1)
                self.strike(t_hit, upper, 0.5 * j, "wall", wall_xy, rec, 6e-4, False)
                if upper != module:
                    self.strike(t_hit, module, 0.25 * j, "wall", wall_xy, None, 6e-4, False)
                p[ax] = side - (p[ax] - side) * 0.5
                u[ax] *= -0.5
        return p, u

    # ---- one cube through the tower -------------------------------------------------
    def throw(self, t_release: float, colour: str, why: str, by: str) -> dict[str, Any]:
        """Drop one cube into the shaft at ``t_release``; returns its landing record."""
        rng, tw = self.rng, self.tw
        cube = self.new_cube(colour)
        rec = self._record(cube, why, by)
        rec["t_release"] = round(t_release, 5)
        self._knocked_this_throw = False
        self._pending_knocked = []
        h = float(rng.uniform(0.01, 0.12))  # release height above the shaft
        kind = rng.random()  # most let go, some toss, a few flick it in hard
        v0 = 0.0 if kind < 0.65 else float(rng.uniform(0.0, 0.5)) if kind < 0.95 else float(
            rng.uniform(0.8, 1.8))
        w = math.sqrt(v0 * v0 + 2 * G * h)
        t = t_release + (w - v0) / G
        p = tw.entry_off + rng.normal(0, 0.0015 + 0.025 * h, 2)  # aim: worse from higher up
        u = rng.normal(0, 0.08, 2)
        a = tw.cube_side
        if cheb(p - tw.entry_off) > tw.entry_half - a / 2:  # hits the rim of the shaft
            self.strike(t, N_LEV - 1, cube.mass_g * 1e-3 * w * 0.8, "rim", p, rec,
                        to_cell=False)
            p = tw.entry_off + np.clip(p - tw.entry_off, -(tw.entry_half - a / 2),
                                       tw.entry_half - a / 2)
            w *= 0.4
            d = rng.normal(0, 1, 2)
            u = d / np.linalg.norm(d) * rng.uniform(0.1, 0.3)
        self.fly(cube, rec, t, p, u, w, N_LEV - 1, allow_knock=True)
        for k in self._pending_knocked:
            k["by_landing"] = rec
        return rec

    def _record(self, cube: Cube, why: str, by: str) -> dict[str, Any]:
        return {"cube": cube.cid, "colour": cube.colour, "mass_g": round(cube.mass_g, 4),
                "why": why, "by_player": by, "strikes": [], "path": [], "knocked": False,
                "caused_knockdown": False}

    def fly(self, cube: Cube, rec: dict[str, Any], t: float, p: np.ndarray, u: np.ndarray,
            w: float, module: int, allow_knock: bool) -> None:
        """A cube falling inside ``module`` from its roof plane at time ``t``."""
        rng, tw = self.rng, self.tw
        a = tw.cube_side
        mkg = cube.mass_g * 1e-3
        m = module
        while True:
            h = tw.drop_h[m]
            tf = (-w + math.sqrt(w * w + 2 * G * h)) / G
            p, u = self.move(t, p, u, tf, m, mkg, rec)
            t += tf
            w += G * tf
            if m > 0:
                d = cheb(p - tw.hole_off[m])
                hs = tw.hole_half[m]
                if d < hs - a / 2:  # clean through the hole, touching nothing
                    rec["path"].append([m, "through"])
                    m -= 1
                    continue
                if d < hs + 0.15 * a and (d < hs or rng.random() < 0.5):
                    # catches the rim of the hole, pivots over it and drops
                    self.strike(t, m, mkg * w * float(rng.uniform(0.3, 0.7)), "edge", p, rec)
                    rec["path"].append([m, "edge"])
                    # tumbling over the rim: a sideways push toward the hole's middle plus
                    # a random one from the spin
                    to_c = tw.hole_off[m] - p
                    n = to_c / (np.linalg.norm(to_c) + 1e-9)
                    spin = rng.normal(0, 1, 2)
                    u = (0.3 * u + n * float(rng.uniform(0.0, TIP_PUSH)) + spin / (
                        np.linalg.norm(spin) + 1e-12) * float(rng.uniform(0.05, TIP_SPIN)))
                    w *= float(rng.uniform(0.35, 0.75))
                    t += float(rng.uniform(0.008, 0.03))
                    m -= 1
                    continue
            out = self.on_plate(cube, rec, t, p, u, w, m, allow_knock)
            if out is None:
                return
            t, p, u, w = out
            m -= 1

    def on_plate(self, cube: Cube, rec: dict[str, Any], t: float, p: np.ndarray, u: np.ndarray,
                 w: float, m: int, allow_knock: bool
                 ) -> tuple[float, np.ndarray, np.ndarray, float] | None:
        """Bounces and slide on plate ``m``; None when the cube comes to rest there."""
        rng, tw = self.rng, self.tw
        a = tw.cube_side
        mkg = cube.mass_g * 1e-3
        hs = tw.hole_half[m]
        bounces = 0
        rec["path"].append([m, "plate"])
        while True:
            e = float(np.clip(tw.restitution + rng.normal(0, 0.05), 0.15, 0.65))
            hit = self.cube_at(m, p, t, cube)
            if hit is not None:
                self.strike(t, m, mkg * (1 + e) * w, "cube", p, rec)
                u = self.collide(hit, rec, t, p, u, w, m, allow_knock)
                w_out = e * w * 0.7
            else:
                self.strike(t, m, mkg * (1 + e) * w, "plate", p, rec)
                d = rng.normal(0, 1, 2)
                kick = d / (np.linalg.norm(d) + 1e-12) * w * float(rng.uniform(0.1, 0.4))
                u = float(rng.uniform(0.4, 0.8)) * u + kick
                w_out = e * w
            bounces += 1
            if w_out < 0.09:
                break
            tb = 2 * w_out / G
            p, u = self.move(t, p, u, tb, m, mkg, rec)
            t += tb
            w = w_out
            if m > 0 and cheb(p - tw.hole_off[m]) < hs - 0.2 * a:
                if cheb(p - tw.hole_off[m]) >= hs - a / 2:
                    self.strike(t, m, mkg * w * 0.5, "edge", p, rec)
                rec["path"].append([m, "bounced into the hole"])
                return t, p, u, w
        # sliding and tumbling to rest (or over the rim of the hole)
        rec["bounces"] = rec.get("bounces", 0) + bounces
        t_contact = t
        speed = float(np.linalg.norm(u))
        dec = tw.mu * G
        dist = speed * speed / (2 * dec)
        n = u / speed if speed > 1e-6 else np.zeros(2)
        lim = tw.half_w - a / 2
        s_fall = None
        if m > 0 and dist > 1e-4:
            for s in np.linspace(0, dist, 24)[1:]:
                q = p + n * s
                if cheb(q - tw.hole_off[m]) < hs - 0.1 * a:
                    s_fall = float(s)
                    break
        if s_fall is not None:
            t_s = (speed - math.sqrt(max(speed * speed - 2 * dec * s_fall, 0.0))) / dec
            self.scrape(t, t + t_s, m, cube.mass_g, speed)
            q = p + n * s_fall
            self.strike(t + t_s + 0.01, m, mkg * 0.4, "edge", q, rec)
            rec["path"].append([m, "slid into the hole"])
            rem = math.sqrt(max(speed * speed - 2 * dec * s_fall, 0.0))
            return t + t_s + 0.02, q, n * rem * 0.5, 0.12
        t_s = speed / dec
        q = np.clip(p + n * dist, -lim, lim)
        self.scrape(t, t + t_s, m, cube.mass_g, speed)
        n_clack = min(4, int(dist / a))
        for i in range(n_clack):
            tc = t + t_s * (i + 1) / (n_clack + 1)
            self.strike(tc, m, mkg * float(rng.uniform(0.05, 0.2)), "clack", p + n * dist * (
                i + 1) / (n_clack + 1), rec)
        t_rest = t + t_s + float(rng.uniform(0.005, 0.03))
        self.strike(t_rest - 0.003, m, mkg * 0.05, "clack", q, rec)
        cube.level, cube.pos, cube.t_rest = m, q, t_rest
        ecc = 1 + tw.eccentric[m] * (q[0] * math.cos(tw.ecc_dir[m]) + q[1] * math.sin(
            tw.ecc_dir[m])) / tw.half_w
        self.weights.append((t_contact, m, cube.mass_g * ecc))
        rec.update({"floor": m, "t": round(t_rest, 5), "t_contact": round(t_contact, 5),
                    "rest_xy_mm": np.round(q * 1000, 1).tolist()})
        rec["t_first_impact"] = rec["strikes"][0][0] if rec["strikes"] else round(t_contact, 5)
        self.landings.append(rec)
        return None

    def cube_at(self, m: int, p: np.ndarray, t: float, me: Cube) -> Cube | None:
        best, best_d = None, self.tw.cube_side * 0.95
        for c in self.resting(m, t):
            if c is me:
                continue
            d = cheb(c.pos - p)
            if d < best_d:
                best, best_d = c, d
        return best

    def collide(self, hit: Cube, rec: dict[str, Any], t: float, p: np.ndarray, u: np.ndarray,
                w: float, m: int, allow_knock: bool) -> np.ndarray:
        """A falling cube strikes a resting one: push it; maybe over the rim of the hole."""
        rng, tw = self.rng, self.tw
        a = tw.cube_side
        hs = tw.hole_half[m]
        dvec = hit.pos - p
        if np.linalg.norm(dvec) < 1e-4:
            dvec = rng.normal(0, 1, 2)
        n = dvec / np.linalg.norm(dvec)
        v = w * float(rng.uniform(0.12, 0.45)) + 0.5 * float(np.linalg.norm(u))
        dec = tw.mu * G
        dist = v * v / (2 * dec)
        lim = tw.half_w - a / 2
        s_fall = None
        if m > 0:
            for s in np.linspace(0, dist, 24)[1:]:
                if cheb(hit.pos + n * s - tw.hole_off[m]) < hs - 0.1 * a:
                    s_fall = float(s)
                    break
        u_new = -n * float(np.linalg.norm(u)) * 0.5 + rng.normal(0, 0.05, 2)
        if s_fall is not None and allow_knock and not self._knocked_this_throw:
            self._knocked_this_throw = True
            t_s = (v - math.sqrt(max(v * v - 2 * dec * s_fall, 0.0))) / dec
            q = hit.pos + n * s_fall
            self.scrape(t, t + t_s, m, hit.mass_g, v)
            hit.t_gone = t + t_s
            self.weights.append((t + t_s, m, -hit.mass_g))
            krec = self._record(hit, "knocked down", "")
            krec["knocked"] = True
            krec["from_floor"] = m
            krec["t_knocked"] = round(t, 5)
            self.strike(t + t_s + 0.01, m, hit.mass_g * 1e-3 * 0.4, "edge", q, krec)
            rem = math.sqrt(max(v * v - 2 * dec * s_fall, 0.0))
            new = Cube(len(self.cubes), hit.mass_g, hit.colour)
            self.cubes.append(new)
            self.fly(new, krec, t + t_s + 0.02, q, n * rem * 0.5, 0.12, m - 1, allow_knock=False)
            rec["caused_knockdown"] = True
            kd = {"t": round(t, 5), "from_floor": m, "to_floor": krec["floor"],
                  "knocked_landing": krec}
            self.knockdowns.append(kd)
            self._pending_knocked.append(kd)
            return u_new
        if s_fall is not None:  # stops right at the rim
            dist = max(0.0, s_fall - 0.35 * a)
        t_s = v / dec
        self.scrape(t, t + t_s, m, hit.mass_g, v)
        hit.pos = np.clip(hit.pos + n * dist, -lim, lim)
        return u_new

    def scrape(self, t0: float, t1: float, m: int, mass_g: float, speed: float) -> None:
        if t1 - t0 > 0.004:
            self.bursts.append(Burst(t0, t1, m, 8.0 * mass_g * speed / 0.3, (150.0, 900.0), 1.0))

    # ---- hands and tables -----------------------------------------------------------
    def knock(self, t: float, peak: float) -> None:
        dur = float(self.rng.uniform(0.002, 0.008))  # knuckles, a fist, a knee
        self.base_acc.append((t, peak, dur, N_LEV - 1))
        self.knocks.append({"t": round(t, 5), "peak_m_s2": round(peak, 2),
                            "what": "table knock"})

    def lift(self, t_grip: float, t_break: float, k: int) -> None:
        rng = self.rng
        self.bursts.append(Burst(t_grip, t_break + 0.15, max(k - 1, 0),
                                 float(rng.uniform(1.5, 5.0)), (40.0, 600.0), 1.0))
        self.stack_acc.append((t_break - float(rng.uniform(0.12, 0.3)), t_break, k,
                               float(rng.uniform(1.0, 4.0))))
        self.strike(t_break, max(k, 0), float(rng.uniform(2e-5, 1e-4)), "contacts", np.array(
            [self.tw.half_w, 0.0]), None, 2e-3, False)
        for c in range(k + 1, N_LEV):
            self.clicks.append((t_break + float(rng.uniform(0, 0.004)), c,
                                float(rng.uniform(-40, 40))))
        self.lifts.append({"t": round(t_break, 5), "exposed": k, "t_grip": round(t_grip, 5)})

    def close(self, t_make: float, k: int, t_break: float) -> None:
        rng = self.rng
        self.lifted.append((t_break, t_make, k))
        # the stack is set down on module k-1: a soft, heavy thump at joint k
        self.base_acc.append((t_make - 0.004, float(rng.uniform(1.0, 5.0)),
                              float(rng.uniform(0.01, 0.03)), k))
        self.bursts.append(Burst(t_make - 0.4, t_make + 0.3, max(k - 1, 0),
                                 float(rng.uniform(1.5, 5.0)), (40.0, 600.0), 1.0))
        for c in range(k + 1, N_LEV):
            self.clicks.append((t_make + float(rng.uniform(0, 0.006)), c,
                                float(rng.uniform(-60, 60))))
            # warm hands on the lifted modules: a zero shift that cools off
            self.thermal.append((t_make, c, float(rng.normal(0, 0.01))))
        self.closes.append({"t": round(t_make, 5), "exposed": k})

    def remove(self, t_touch: float, t_off: float, k: int, cubes: list[Cube]) -> None:
        rng = self.rng
        press = float(rng.uniform(3.0, 30.0))
        self.touches.append((t_touch, t_off, k, press))
        self.bursts.append(Burst(t_touch, t_off, k, float(rng.uniform(2.0, 8.0)),
                                 (30.0, 500.0), 0.5))
        for c in cubes:
            c.t_gone = t_off
            self.weights.append((t_off, k, -c.mass_g))
            self.strike(float(rng.uniform(t_touch, t_off)), k, c.mass_g * 1e-3 * 0.15, "clack",
                        c.pos, None)
        self.removals.append({"t": round(t_off, 5), "t_touch": round(t_touch, 5), "floor": k,
                              "cubes": len(cubes), "colours": [c.colour for c in cubes],
                              "mass_g": round(sum(c.mass_g for c in cubes), 4),
                              "press_g": round(press, 2)})

    def fall_out(self, t: float, cube: Cube, exposed: int) -> None:
        """A cube slips out of a lifted module onto the table (rules: thrown back later)."""
        cube.t_gone = t
        self.weights.append((t, cube.level, -cube.mass_g))
        self.base_acc.append((t, 0.3, 0.003, exposed))

    def leave_open(self, t_break: float, k: int) -> None:
        """The recording ends while modules k+1.. are still lifted."""
        self.lifted.append((t_break, math.inf, k))


# ============================================================================ scenarios

def _throw_checked(world: World, t: float, colour: str, why: str, by: str
                   ) -> dict[str, Any] | None:
    """Throw, unless its landing would fall after the end: then undo it and return None."""
    cp = world.checkpoint()
    rec = world.throw(t, colour, why, by)
    times = [x["t"] for x in world.landings[cp["lists"]["landings"]:]]
    if not times or max(times) > world.duration - 0.3:
        world.restore(cp)
        return None
    return rec


def _last_rest(world: World, n_before: int) -> float:
    return max(x["t"] for x in world.landings[n_before:])


TIDY_AT = 64  # cubes in the tower: a long session without a game empties it now and then


def in_tower(world: World, t: float) -> int:
    return sum(1 for c in world.cubes if c.t_rest <= t < c.t_gone)


def grab_out(world: World, rng: np.random.Generator, k: int, t: float, cubes: list[Cube],
             end: float, sizes: tuple[int, ...], p: tuple[float, ...]
             ) -> tuple[float, list[Cube]]:
    """Pick ``cubes`` off the exposed plate in grabs (finger on the plate, then lift-off);
    returns the time after the last grab and the cubes taken (fewer if time ran out)."""
    taken: list[Cube] = []
    cubes = list(cubes)
    while cubes:
        n = min(len(cubes), int(rng.choice(sizes, p=p)))
        grab, cubes = cubes[:n], cubes[n:]
        t_off = t + float(rng.uniform(0.4, 1.2))
        if t_off > end:
            break
        world.remove(t, t_off, k, grab)
        taken += grab
        t = t_off + float(rng.uniform(1.0, 2.5))
    return t, taken


def tidy_up(world: World, rng: np.random.Generator, t: float, end: float) -> float | None:
    """Empty the tower level by level from the top (lift, take out by the handful, close).
    Returns the time after, or None when the recording ends first."""
    for k in range(N_LEV - 1, -1, -1):
        if not world.resting(k, t):
            continue
        t_grip = t + float(rng.uniform(1.0, 3.0))
        t_break = t_grip + float(rng.uniform(0.3, 0.8))
        if t_break > end:
            return None
        world.lift(t_grip, t_break, k)
        t = t_break + float(rng.uniform(0.8, 2.0))
        cubes = world.resting(k, t)
        t, taken = grab_out(world, rng, k, t, cubes, end, (2, 3, 4), (0.3, 0.4, 0.3))
        t_make = t + float(rng.uniform(0.5, 2.0))
        if len(taken) < len(cubes) or t_make > end:
            world.leave_open(t_break, k)
            return None
        world.close(t_make, k, t_break)
        t = t_make
    return t + float(rng.uniform(2.0, 5.0))


def play_single(world: World, rng: np.random.Generator, end: float) -> None:
    t = QUIET_S + 0.3 + float(rng.uniform(0, 1.2))
    while t < end:
        if in_tower(world, t) >= TIDY_AT:
            after = tidy_up(world, rng, t, end)
            if after is None:
                return
            t = after
        n0 = len(world.landings)
        if _throw_checked(world, t, "yellow", "single", "player") is None:
            return
        if rng.random() < 0.06:  # a child lets go of two cubes at once
            _throw_checked(world, t + float(rng.uniform(0.03, 0.25)), "yellow", "pair", "player")
        t = _last_rest(world, n0) + float(rng.uniform(1.5, 6.0))


def play_rapid(world: World, rng: np.random.Generator, end: float) -> None:
    t = QUIET_S + 0.3 + float(rng.uniform(0, 1.0))
    while t < end:
        if in_tower(world, t) >= TIDY_AT:
            after = tidy_up(world, rng, t, end)
            if after is None:
                return
            t = after
        n0 = len(world.landings)
        for _ in range(int(rng.integers(2, 6))):
            if _throw_checked(world, t, "blue", "rapid series", "player") is None:
                break
            t += float(rng.uniform(0.3, 0.8))
        if len(world.landings) == n0:
            return
        t = _last_rest(world, n0) + float(rng.uniform(3.0, 8.0))


def add_knocks(world: World, rng: np.random.Generator, room: Room, start: float,
               end: float) -> None:
    if not math.isfinite(room.knock_every_s):
        return
    t = start + float(rng.exponential(room.knock_every_s))
    while t < end:
        peak = float(np.exp(rng.uniform(np.log(0.8), np.log(8.0))))
        world.knock(t, peak)
        t += max(0.8, float(rng.exponential(room.knock_every_s)))


class Game:
    """Mord im Arosa by the rule text, played with this tower (who throws what, when)."""

    def __init__(self, world: World, rng: np.random.Generator, end: float) -> None:
        self.w = world
        self.rng = rng
        self.end = end
        n = int(rng.choice([3, 4, 5], p=[0.35, 0.45, 0.2]))
        self.players = [str(c) for c in rng.choice(COLOURS, n, replace=False)]
        self.supply = {p: 20 for p in self.players}
        self.sheet = {p: [0] * N_LEV for p in self.players}
        self.hand: dict[str, int] = {}
        self.crime_scenes: set[int] = set()
        self.victims_found = 0
        self.phase = "prologue"
        self.over = False  # the rules ended the game
        self.stopped = False  # the recording ends before the game does
        self.log: list[dict[str, Any]] = []
        self.t = QUIET_S + 0.3 + float(rng.uniform(0, 1.0))

    # -- bookkeeping ---------------------------------------------------------------------
    def check_end(self) -> None:
        if any(sum(v) >= 10 for v in self.sheet.values()) or any(
                v <= 0 for v in self.supply.values()):
            self.over = True
            self.phase = "over"

    def throw(self, colour: str, why: str, by: str, gap: tuple[float, float]) -> bool:
        """One throw after the previous cube rested and the app asked for the next."""
        if self.over or self.stopped:
            return False
        t = self.t + float(self.rng.uniform(*gap))
        rec = _throw_checked(self.w, t, colour, why, by) if t < self.end else None
        if rec is None:
            self.stopped = True
            return False
        if colour != "red":  # a thrown colour comes from the hand before the supply
            if self.hand.get(colour, 0) > 0:
                self.hand[colour] -= 1
            else:
                self.supply[colour] -= 1
        self.t = max(x["t"] for x in self.w.landings if x["t"] >= rec["t_release"])
        self.log.append({"do": "throw", "colour": colour, "floor": rec["floor"],
                         "t": rec["t"], "why": why})
        self.check_end()
        return True

    # -- play ------------------------------------------------------------------------------
    def play(self) -> None:
        rng = self.rng
        n = len(self.players)
        knife = int(rng.integers(n))  # the last to have a knife in hand throws the victims
        for _ in range(2):
            if not self.throw("red", "victim", self.players[knife], (1.0, 2.5)):
                return
        for i in range(n):
            p = self.players[(knife + 1 + i) % n]
            for j in range(2):
                if not self.throw(p, "prologue clue", p, (0.8, 2.0) if j else (2.0, 4.5)):
                    return
        self.phase = "act1"
        inv = int(rng.integers(n))  # whoever was last inside a hotel
        while not (self.over or self.stopped) and self.t < self.end - 12.0:
            me = self.players[inv]
            if self.phase == "act1":
                found = self.turn_act1(me)
                if self.phase == "act2" and found:
                    inv = (self.players.index(found) + 1) % n
                    continue
            else:
                self.turn_act2(me)
            inv = (inv + 1) % n

    def choose_floor(self, likely: list[int]) -> int:
        rng = self.rng
        if likely and rng.random() < 0.5:
            k = int(rng.choice(likely))
            if rng.random() < 0.35:  # heard it one floor off
                k = int(np.clip(k + rng.choice([-1, 1]), 0, N_LEV - 1))
            return k
        weights = np.array([0.5, 1, 1, 1, 1, 1, 1, 1.0])
        return int(rng.choice(N_LEV, p=weights / weights.sum()))

    def open_floor(self, k: int, think: tuple[float, float]) -> tuple[float, float] | None:
        """Deliberate, grip and lift modules k..7; returns (t_break, t now)."""
        rng = self.rng
        t_grip = self.t + float(rng.uniform(*think))
        t_break = t_grip + float(rng.uniform(0.3, 0.9))
        if t_break > self.end:
            self.stopped = True
            return None
        self.w.lift(t_grip, t_break, k)
        # A cube on a lifted plate may slip out when the stack tilts.
        upper = [c for j in range(k + 1, N_LEV) for c in self.w.resting(j, t_break)]
        if upper and rng.random() < 0.1:
            c = upper[int(rng.integers(len(upper)))]
            self.w.fall_out(t_break + float(rng.uniform(0.3, 1.5)), c, k)
            self.hand[c.colour] = self.hand.get(c.colour, 0) + 1
            self.log.append({"do": "fell out while lifting", "colour": c.colour})
        return t_break, t_break + float(rng.uniform(1.0, 4.0))

    def take_out(self, k: int, t: float, cubes: list[Cube], to_hand: bool) -> float:
        """Take ``cubes`` off the exposed plate in grabs of one to three."""
        if self.stopped:
            return t
        t, taken = grab_out(self.w, self.rng, k, t, cubes, self.end, (1, 2, 3),
                            (0.5, 0.35, 0.15))
        if len(taken) < len(cubes):
            self.stopped = True
        if to_hand:
            for c in taken:
                self.hand[c.colour] = self.hand.get(c.colour, 0) + 1
        return t

    def close_and_throw_back(self, k: int, t_break: float, t: float, me: str,
                             penalties: int) -> None:
        rng = self.rng
        t_make = t + float(rng.uniform(0.5, 3.0))
        if self.stopped or t_make > self.end:
            self.w.leave_open(t_break, k)
            self.stopped = True
            return
        self.w.close(t_make, k, t_break)
        self.t = t_make
        first = True
        for colour in sorted(self.hand):
            while self.hand.get(colour, 0) > 0:
                if not self.throw(colour, "thrown back", me, (1.5, 3.5) if first else (0.8, 2.5)):
                    self.hand.clear()
                    return
                first = False
        self.hand.clear()
        for _ in range(penalties):  # sloppy investigation
            if not self.throw(me, "penalty", me, (1.0, 3.0)):
                return

    def alive(self, colours: set[str]) -> list[Cube]:
        return [c for c in self.w.cubes if c.colour in colours and c.t_rest <= self.t < c.t_gone]

    def turn_act1(self, me: str) -> str | None:
        k = self.choose_floor([c.level for c in self.alive({"red"})])
        self.log.append({"do": "inspect", "by": me, "floor": k, "t": round(self.t, 3)})
        opened = self.open_floor(k, (3.0, 10.0))
        if opened is None:
            return None
        t_break, t = opened
        here = self.w.resting(k, t)
        reds = [c for c in here if c.colour == "red"]
        clues = [c for c in here if c.colour != "red"]
        found = None
        if reds:  # a crime scene: victims to the sheet, caught players add clues
            t = self.take_out(k, t, reds, to_hand=False)
            self.crime_scenes.add(k)
            self.victims_found += len(reds)
            for p in self.players:
                if p != me:
                    put = min(sum(c.colour == p for c in clues), self.supply[p])
                    self.supply[p] -= put
                    self.sheet[p][k] += put
            self.check_end()
            t += float(self.rng.uniform(2.0, 8.0))  # clues to the sheet, talk
            if self.victims_found >= 2 and not self.over:
                self.phase = "act2"
                found = me
        t = self.take_out(k, t, clues, to_hand=True)
        self.close_and_throw_back(k, t_break, t, me, 0 if reds else 1)
        return found

    def turn_act2(self, me: str) -> None:
        rng = self.rng
        others = [p for p in self.players if p != me]
        if sum(self.sheet[me]) > 0 and rng.random() < 0.4:  # covering one's tracks
            k = self.choose_floor([j for j in range(N_LEV) if self.sheet[me][j] > 0])
            self.log.append({"do": "cover", "by": me, "floor": k, "t": round(self.t, 3)})
            opened = self.open_floor(k, (5.0, 20.0))
            if opened is None:
                return
            t_break, t = opened
            own = sum(c.colour == me for c in self.w.resting(k, t))
            back = min(own, self.sheet[me][k])
            self.sheet[me][k] -= back
            self.supply[me] += back
            penalties = 0 if own else 1
        else:  # suspecting other players
            suspects = [str(x) for x in rng.choice(others, min(len(others), int(
                rng.choice([1, 2], p=[0.6, 0.4]))), replace=False)]
            k = self.choose_floor([c.level for c in self.alive(set(suspects))])
            self.log.append({"do": "suspect", "by": me, "suspects": suspects, "floor": k,
                             "t": round(self.t, 3)})
            opened = self.open_floor(k, (6.0, 25.0))
            if opened is None:
                return
            t_break, t = opened
            here = self.w.resting(k, t)
            penalties = 0
            if k == 0 and not any(c.colour == me for c in here):
                penalties = len(suspects)  # the ground-floor case: nothing to the sheet
            else:
                for x in suspects:
                    theirs = [c for c in here if c.colour == x]
                    if not theirs:
                        penalties += 1
                        continue
                    put = min(len(theirs), self.supply[x])
                    self.supply[x] -= put
                    self.sheet[x][k] += put
                    short = len(theirs) - put  # supply ran out: taken from the floor itself
                    if short:
                        t = self.take_out(k, t, theirs[:short], to_hand=False)
                        self.sheet[x][k] += short
        self.check_end()
        t += float(rng.uniform(1.5, 6.0))
        t = self.take_out(k, t, self.w.resting(k, t), to_hand=True)
        self.close_and_throw_back(k, t_break, t, me, 0 if self.over else penalties)


# ============================================================================ rendering

@dataclass
class Timeline:
    """When the firmware read the HX711s (stream seconds) and which conversion it got."""

    read_t: np.ndarray  # read times
    read_valid: np.ndarray  # valid bits
    read_conv: np.ndarray  # (N, 8) time each channel's conversion completed (NaN: none)


def micros(t_dev: np.ndarray | float) -> np.ndarray:
    """Arduino micros(): device microseconds in steps of 4 us (timer 0 at 16 MHz / 64)."""
    return (np.floor(np.asarray(t_dev) * 1e6 / 4.0) * 4).astype(np.int64)


def power_segments(tw: Tower, world: World, rng: np.random.Generator, boot: float
                   ) -> list[list[tuple[float, float, float]]]:
    """Per HX711: (powered from, powered until, first data ready) in stream seconds.

    ``boot``: the firmware resets all chips at once (PD_SCK high 100 us) when it starts.
    """
    segs: list[list[tuple[float, float, float]]] = []
    for c in range(N_LEV):
        s = [(boot, math.inf, boot + 4 * tw.hx_period[c])]
        for t_break, t_make, k in sorted(world.lifted):
            if c > k:
                on, _, ready = s[-1]
                s[-1] = (on, t_break, ready)
                pu = float(rng.uniform(0.002, 0.008))  # regulator + power-on reset
                s.append((t_make, math.inf, t_make + pu + 4 * tw.hx_period[c]))
        segs.append(s)
    return segs


def hx_reads(tw: Tower, world: World, rng: np.random.Generator, boot: float,
             t_end: float) -> tuple[list[float], list[int], list[list[float]], list[float]]:
    """The firmware's read loop: wait until every present HX711 has data (one shared SCK),
    then clock all out together; a chip silent for 20 ms is dropped (load_timeouts) until
    its DOUT goes low again."""
    segs = power_segments(tw, world, rng, boot)
    period = tw.hx_period

    def next_ready(c: int, after: float) -> float:
        for _on, off, ready in segs[c]:
            if after >= off:
                continue
            if after < ready:
                return ready if ready < off else math.inf
            n = math.floor((after - ready) / period[c]) + 1
            t = ready + n * period[c]
            if t < off:
                return t
        return math.inf

    def latest(c: int, at: float) -> float:
        for _on, off, ready in segs[c]:
            if ready <= at < off:
                return ready + math.floor((at - ready) / period[c]) * period[c]
        return math.nan

    present = set(range(N_LEV))
    r_prev = boot
    times: list[float] = []
    valids: list[int] = []
    convs: list[list[float]] = []
    timeouts: list[float] = []
    patience = 0.6  # after the reset at boot the firmware waits for the first data
    while True:
        nxt = {c: next_ready(c, r_prev) for c in present}
        t_all = max(nxt.values()) if nxt else math.inf
        limit = r_prev + patience
        patience = LOAD_TIMEOUT_S
        if t_all <= limit:
            r = t_all + float(rng.uniform(8e-6, 60e-6))
        else:
            r = limit
            gone = {c for c in present if nxt[c] > r}
            present -= gone
            timeouts += [r] * len(gone)
        if r >= t_end:
            break
        valid = 0
        conv = [math.nan] * N_LEV
        for c in range(N_LEV):
            lc = latest(c, r)
            if math.isnan(lc) or lc <= r_prev:
                continue  # powered off, not ready since power-up, or nothing new
            present.add(c)  # a chip back from a lift joins the wait again
            valid |= 1 << c
            conv[c] = lc
        times.append(r)
        valids.append(valid)
        convs.append(conv)
        r_prev = r
    return times, valids, convs, timeouts


def _half_sine_gain(f: np.ndarray, contact: float) -> np.ndarray:
    """Spectrum of a half-sine force pulse of length ``contact`` (1 at 0 Hz)."""
    x = 2 * f * contact
    den = 1 - x * x
    safe = np.where(np.abs(den) < 1e-6, 1.0, den)
    return np.asarray(np.where(np.abs(den) < 1e-6, np.pi / 4, np.cos(np.pi * f * contact) / safe))


class PiezoSynth:
    """Adds modal responses of plates to the (N, 8) piezo signal, in ADC codes."""

    def __init__(self, tw: Tower, set_t: np.ndarray) -> None:
        self.tw = tw
        self.set_t = set_t
        self.rate = tw.piezo_rate
        self.sig = np.zeros((len(set_t), N_LEV), np.float32)
        self.skew = ADC_SKEW_S * np.arange(N_LEV) + 2e-6
        self.piezo_phi = np.array([tw.phi(c, tw.piezo_xy[c])[0] for c in range(N_LEV)])

    def hp(self, f: np.ndarray) -> np.ndarray:
        fc = self.tw.piezo_hp_hz
        return np.asarray(f / np.sqrt(f * f + fc * fc))

    def plate_modes(self, level: int, load_g: float) -> tuple[np.ndarray, np.ndarray]:
        """Frequencies and decay times of the plate's modes (bending + rigid on its cell)."""
        tw = self.tw
        ratio = load_g / tw.plate_g[level]
        f = np.r_[tw.mode_f[level] / math.sqrt(1 + 0.5 * ratio),
                  tw.f_rigid[level] / math.sqrt(1 + ratio)]
        q = np.r_[tw.mode_q[level] / (1 + 2 * ratio), 1 / (2 * tw.zeta_rigid[level])]
        return f, q / (np.pi * f)

    def strike(self, s: Strike) -> None:
        tw = self.tw
        m = s.level
        f_src, tau_src = self.plate_modes(m, s.load_g)
        w_src = np.r_[tw.mode_w[m] * tw.phi(m, s.xy)[0], 0.25]
        drive_src = s.impulse * _half_sine_gain(f_src, s.contact_s) * w_src  # (K,)
        bend_rms = float(np.sqrt(np.mean(w_src[:-1] ** 2)))
        k = len(f_src)
        amps = np.zeros((N_LEV, 2 * k))
        freqs = np.zeros((N_LEV, 2 * k))
        taus = np.full((N_LEV, 2 * k), 1e-3)
        for c in range(N_LEV):
            sens = tw.piezo_sens[c]
            if c == m:
                amps[c, :k] = sens * drive_src * np.r_[self.piezo_phi[c], 0.6] * self.hp(f_src)
                freqs[c, :k], taus[c, :k] = f_src, tau_src
                continue
            g_src = tw.path_gain(m, c, f_src)
            amps[c, :k] = sens * drive_src * 0.5 * g_src * self.hp(f_src)
            freqs[c, :k], taus[c, :k] = f_src, tau_src * 0.7
            # the receiving plate rings in its own modes, driven through its support by
            # what the struck plate pushes into the walls: its bending (as struck) and its
            # rigid motion on the cell (whatever the point)
            f_r, tau_r = self.plate_modes(c, 0.0)
            g_r = tw.path_gain(m, c, f_r)
            part = np.r_[tw.rcv_part[m, c] * bend_rms, 0.5 * 0.25]
            drive_r = s.impulse * _half_sine_gain(f_r, s.contact_s) * g_r * part * np.r_[
                tw.mode_w[c], 1.0]
            amps[c, k:] = sens * drive_r * 0.5 * np.r_[self.piezo_phi[c], 0.6] * self.hp(f_r)
            freqs[c, k:], taus[c, k:] = f_r, tau_r
        self.add_modes(s.t + s.contact_s / 2, amps, freqs, taus)

    def add_modes(self, t0: float, amps: np.ndarray, freqs: np.ndarray, taus: np.ndarray,
                  floor: float = 0.25, cap_s: float = 0.4) -> None:
        big = np.abs(amps) > floor
        if not big.any():
            return
        dur = float(np.max(np.where(big, taus * np.log(np.abs(amps) / floor + 1e-12), 0.0)))
        dur = min(max(dur, 0.005), cap_s)
        n0 = int(np.searchsorted(self.set_t, t0 - 0.001))
        n1 = int(np.searchsorted(self.set_t, t0 + dur))
        if n1 <= n0:
            return
        keep = np.flatnonzero(big.any(axis=0))
        a, f, tau = amps[:, keep], freqs[:, keep], taus[:, keep]
        t = self.set_t[n0:n1, None] + self.skew[None, :] - t0  # (N, 8)
        tp = np.maximum(t, 0.0)[:, :, None]
        y = (a[None] * np.exp(-tp / tau[None]) * np.sin(2 * np.pi * f[None] * tp)).sum(axis=2)
        self.sig[n0:n1] += np.where(t > 0, y, 0.0).astype(np.float32)


def render_piezo(tw: Tower, room: Room, world: World, set_t: np.ndarray,
                 rng: np.random.Generator) -> np.ndarray:
    syn = PiezoSynth(tw, set_t)
    for s in world.strikes:
        syn.strike(s)
    n = len(set_t)
    rate = tw.piezo_rate
    # table knocks and stack set-downs: the base (or joint k) accelerates, every plate on
    # its cell rings, and the tower body sways once
    for t, peak, dur, top in world.base_acc:
        dv = peak * dur * 2 / np.pi
        amps = np.zeros((N_LEV, 9))
        freqs = np.zeros((N_LEV, 9))
        taus = np.full((N_LEV, 9), 1e-3)
        src = 0 if top == N_LEV - 1 else top
        for c in range(N_LEV):
            f, tau = syn.plate_modes(c, 0.0)
            # below ~100 Hz the stack moves as one body: each plate's rigid mode feels the
            # full acceleration; its bending modes get what the card joints let through
            g = np.r_[tw.path_gain(src, c, f[:7]) * 0.5, 1.0] * (1.0 if c <= top else 0.3)
            j = tw.plate_g[c] * 1e-3 * dv
            drive = j * _half_sine_gain(f, dur) * g * np.r_[tw.mode_w[c], 1.0]
            amps[c, :8] = tw.piezo_sens[c] * drive * np.r_[syn.piezo_phi[c], 0.6] * syn.hp(f)
            freqs[c, :8], taus[c, :8] = f, tau
            body_f = 18.0 + 2.0 * (tw.seed % 5)
            amps[c, 8] = tw.piezo_sens[c] * j * 0.3 * (c + 1) / N_LEV * syn.hp(np.array(
                [body_f]))[0]
            freqs[c, 8], taus[c, 8] = body_f, 0.08
        syn.add_modes(t + dur / 2, amps, freqs, taus)
    sig = syn.sig
    # band-limited noise: scraping cubes, fingers on a plate, hands on the card walls
    for b in world.bursts:
        n0 = int(np.searchsorted(set_t, b.t0))
        n1 = int(np.searchsorted(set_t, b.t1))
        if n1 - n0 < 4:
            continue
        lo, hi = b.band
        bb, aa = butter(2, [lo / (rate / 2), min(hi / (rate / 2), 0.95)], btype="band")
        x = lfilter(bb, aa, rng.normal(0, 1, n1 - n0))
        env = np.minimum(1.0, np.minimum(np.arange(n1 - n0), np.arange(n1 - n0)[::-1]) / (
            0.01 * rate) + 0.05)
        x = x / (np.std(x) + 1e-9) * env * b.codes
        gains = np.array([1.0 if c == b.level else b.spread * float(
            tw.path_gain(b.level, c, np.array([300.0]))[0]) for c in range(N_LEV)])
        sig[n0:n1] += (x[:, None] * gains[None, :] * tw.piezo_sens / tw.piezo_sens.mean()
                       ).astype(np.float32)
    # people talking and music (air- and table-borne), mains hum (its frequency as the
    # device's own clock measures it)
    common = room_sound(room, tw, set_t, rng)
    level_gain = rng.uniform(0.6, 1.4, N_LEV)
    sig += (common[0][:, None] * level_gain[None, :]).astype(np.float32)
    sig += (common[1][:, None] * (10 ** (-2 * np.arange(N_LEV) / 20))[None, :]).astype(
        np.float32)
    hum_f = tw.mains_hz / (1 + tw.clock_err)
    wander = np.cumsum(rng.normal(0, 0.002, n // rate + 2))  # grid frequency wanders
    fdev = hum_f + np.interp(set_t, np.arange(len(wander)), wander)
    phase = 2 * np.pi * np.cumsum(fdev) / rate
    hum = np.zeros((n, N_LEV), np.float32)
    for h_i, h in enumerate((1, 2, 3, 5, 7)):
        for c in range(N_LEV):
            ph = h * (phase + 2 * np.pi * hum_f * syn.skew[c]) + tw.hum_phase[c, h_i]
            hum[:, c] += (tw.hum_codes[c] * tw.hum_harm[h_i] * room.hum_gain * np.sin(ph)
                          ).astype(np.float32)
    # modules lifted off: their discs are disconnected, the base board's bias remains
    for t_break, t_make, k in world.lifted:
        n0 = int(np.searchsorted(set_t, t_break))
        n1 = int(np.searchsorted(set_t, t_make))
        sig[n0:n1, k + 1:] = 0.0
        hum[n0:n1, k + 1:] *= 0.3
    sig += hum
    tau_hp = 1 / (2 * np.pi * tw.piezo_hp_hz)
    for t, c, amp in world.clicks:
        n0 = int(np.searchsorted(set_t, t))
        n1 = min(n, n0 + int(6 * tau_hp[c] * rate) + 2)
        tt = set_t[n0:n1] - t
        sig[n0:n1, c] += (amp * np.exp(-tt / tau_hp[c])).astype(np.float32)
    # the AVR ADC: S/H charge of the channel converted just before, noise, 10-bit codes
    ghost = np.empty_like(sig)
    ghost[:, 1:] = sig[:, :-1]
    ghost[1:, 0] = sig[:-1, -1]
    ghost[0, 0] = 0.0
    x = tw.bias[None, :] + sig + tw.ghost[None, :] * ghost + rng.normal(
        0, tw.adc_noise, sig.shape)
    return np.clip(np.round(x), 0, 1023).astype(np.uint16)


def room_sound(room: Room, tw: Tower, set_t: np.ndarray, rng: np.random.Generator
               ) -> tuple[np.ndarray, np.ndarray]:
    """(air-borne voices, table-borne music) seen by the discs, in codes, before gains."""
    n = len(set_t)
    rate = tw.piezo_rate
    voice = np.zeros(n)
    start = QUIET_S + 0.2
    span = set_t[-1] - start if n else 0.0
    def utter(t0: float, dur: float, amp: float, f0: float, laugh: bool) -> None:
        n0 = int(np.searchsorted(set_t, t0))
        n1 = int(np.searchsorted(set_t, t0 + dur))
        if n1 - n0 < 8:
            return
        tt = set_t[n0:n1] - t0
        syl = 4.5 if not laugh else 6.0
        env = np.clip(np.sin(np.pi * syl * tt + rng.uniform(0, np.pi)), 0, None) ** 1.5
        env *= np.minimum(1.0, np.minimum(tt, dur - tt) / 0.05)
        fcont = f0 * (1 + 0.1 * np.sin(2 * np.pi * rng.uniform(0.3, 1.2) * tt))
        ph = 2 * np.pi * np.cumsum(fcont) / rate
        y = np.zeros_like(tt)
        for h in range(1, 9):
            y += np.sin(h * ph) / h ** 0.8
        voice[n0:n1] += amp * env * y / 2.0
    if span > 0 and room.talk_per_s > 0:
        k = rng.poisson(room.talk_per_s * span)
        for t0 in rng.uniform(start, set_t[-1], k):
            utter(float(t0), float(rng.uniform(0.5, 3.0)), float(rng.uniform(*room.talk_codes)),
                  float(rng.uniform(90, 250)), False)
    if span > 0 and room.laugh_per_s > 0:
        k = rng.poisson(room.laugh_per_s * span)
        for t0 in rng.uniform(start, set_t[-1], k):
            utter(float(t0), float(rng.uniform(0.6, 2.0)), float(rng.uniform(3.0, 10.0)),
                  float(rng.uniform(180, 400)), True)
    music = np.zeros(n)
    if room.music and span > 0:
        bpm = float(rng.uniform(100, 128))
        beat = 60 / bpm
        fade = np.clip((set_t - start) / 3.0, 0, 1)
        kick_amp = float(rng.uniform(3.0, 12.0))
        n_beats = int(span / beat)
        for i in range(n_beats):
            t0 = start + i * beat
            n0 = int(np.searchsorted(set_t, t0))
            n1 = int(np.searchsorted(set_t, t0 + 0.3))
            tt = set_t[n0:n1] - t0
            music[n0:n1] += kick_amp * np.exp(-tt / 0.07) * np.sin(2 * np.pi * (
                55 + 40 * np.exp(-tt / 0.02)) * tt)
        notes = 40 + 60 * rng.random(n_beats + 1)
        idx = np.clip(((set_t - start) / beat).astype(int), 0, n_beats)
        music += kick_amp * 0.3 * np.sin(2 * np.pi * np.cumsum(notes[idx]) / rate)
        music *= fade
    return voice, music


def render_load(tw: Tower, world: World, tl: Timeline, rng: np.random.Generator,
                duration: float) -> np.ndarray:
    """Counts of every HX711 read (N_reads, 8) as int64; NaN conversions give 0."""
    fs = 2000.0
    s_start = -0.3
    ng = int((duration + 0.4 - s_start) * fs)
    grid = s_start + np.arange(ng) / fs
    out = np.zeros((len(tl.read_t), N_LEV), np.int64)
    for c in range(N_LEV):
        static = np.zeros(ng)
        for t, lev, g in world.weights:
            if lev == c:
                static[int(np.clip((t - s_start) * fs, 0, ng)):] += g
        for t0, t1, lev, press in world.touches:
            if lev != c:
                continue
            i0, i1 = int((t0 - s_start) * fs), int((t1 - s_start) * fs)
            if i1 <= i0:
                continue
            tt = np.arange(i1 - i0) / fs
            rise = np.clip(tt / float(rng.uniform(0.05, 0.15)), 0, 1)
            fall = np.clip((tt[-1] - tt) / 0.04, 0, 1)
            tremor = 1 + 0.1 * np.sin(2 * np.pi * float(rng.uniform(8, 12)) * tt)
            static[i0:i1] += press * rise * fall * tremor
        if c == tw.rubbing:
            static = _play_operator(static, tw.rub_g, world, c, s_start, fs, rng)
        dyn = np.zeros(ng)
        for s in world.strikes:
            if s.level == c and s.to_cell:
                i = int((s.t - s_start) * fs)
                if 0 <= i < ng:
                    dyn[i] += s.impulse / (G * 1e-3) * fs  # N s -> gram-force seconds
        for t, peak, dur, top in world.base_acc:
            if c > top:
                continue
            i0 = int((t - s_start) * fs)
            nn = max(2, int(dur * fs))
            if 0 <= i0 < ng - nn:
                dyn[i0:i0 + nn] += tw.plate_g[c] * peak / G * np.sin(np.pi * np.arange(nn) / nn)
        for t0, t1, k, acc in world.stack_acc:
            if c <= k:
                continue
            i0, i1 = int((t0 - s_start) * fs), int((t1 - s_start) * fs)
            if i1 > i0:
                ramp = np.sin(np.pi * np.arange(i1 - i0) / (i1 - i0))
                dyn[i0:i1] += tw.plate_g[c] * acc / G * ramp
        # plate mass on the cell's spring (unity static gain)
        w0 = 2 * np.pi * tw.f_rigid[c]
        z = tw.zeta_rigid[c]
        r = math.exp(-z * w0 / fs)
        th = w0 * math.sqrt(1 - z * z) / fs
        a1, a2 = -2 * r * math.cos(th), r * r
        force = lfilter([1 + a1 + a2], [1, a1, a2], static + dyn)
        # drifts: temperature wander, hand-warmed cells after a lift
        drift = np.cumsum(rng.normal(0, tw.drift_mg_rt_s[c] * 1e-3, int(duration) + 3))
        force += np.interp(grid, np.arange(len(drift)) + s_start, drift)
        for t, lev, dg in world.thermal:
            if lev == c:
                i0 = int(np.clip((t - s_start) * fs, 0, ng))
                force[i0:] += dg * np.exp(-(grid[i0:] - t) / 120.0)
        # HX711: sinc^4-like settling over four conversions (four boxcars of one period)
        length = max(1, int(round(tw.hx_period[c] * fs)))
        y = force
        for _ in range(4):
            cs = np.cumsum(np.r_[np.full(length, y[0]), y])
            y = (cs[length:] - cs[:-length]) / length
        conv = tl.read_conv[:, c]
        ok = ~np.isnan(conv)
        idx = np.clip(((conv[ok] - s_start) * fs).astype(np.int64), 0, ng - 1)
        grams = y[idx]
        counts = tw.zero_counts[c] + tw.cell_sign[c] * tw.counts_per_g[c] * grams
        counts += rng.normal(0, tw.hx_noise_counts[c], len(counts))
        out[ok, c] = np.clip(np.round(counts), -(2**23), 2**23 - 1).astype(np.int64)
    return out


def _play_operator(x: np.ndarray, band: float, world: World, c: int, s_start: float,
                   fs: float, rng: np.random.Generator) -> np.ndarray:
    """A plate rubbing on a wall: the cell sees the load through static friction (a play of
    +-``band`` grams); a strike or knock near it shakes it loose part of the way."""
    step = 10  # 200 Hz is plenty for the static load
    xs = x[::step]
    shakes = sorted(
        [(s.t, 0.3) for s in world.strikes if abs(s.level - c) <= 1 and s.impulse > 2e-4]
        + [(t, 0.2) for t, peak, _, _ in world.base_acc if peak > 0.5])
    shake_idx = {int((t - s_start) * fs / step): keep for t, keep in shakes}
    y = np.empty_like(xs)
    prev = 0.0
    for i, xi in enumerate(xs):
        prev = min(xi + band, max(xi - band, prev))
        keep = shake_idx.get(i)
        if keep is not None:
            prev = xi + (prev - xi) * keep * float(rng.uniform(0.5, 1.5))
        y[i] = prev
    return np.repeat(y, step)[: len(x)]


# ============================================================================ messages

def u8(x: np.ndarray) -> np.ndarray:
    return np.asarray(x, np.uint8).reshape(-1, 1)


def le(x: np.ndarray, dtype: str) -> np.ndarray:
    a = np.ascontiguousarray(np.asarray(x).astype(dtype))
    return a.view(np.uint8).reshape(len(a), -1)


def s24(x: np.ndarray) -> np.ndarray:
    """(N, 8) signed values -> (N, 24) little-endian 24-bit two's complement bytes."""
    v = (np.asarray(x, np.int64) & 0xFFFFFF).astype("<u4")
    return v.view(np.uint8).reshape(x.shape[0], x.shape[1], 4)[:, :, :3].reshape(x.shape[0], -1)


def assemble(groups: list[tuple[np.ndarray, np.ndarray]]) -> bytes:
    """Messages (rows without seq/crc; column 1-2 reserved for seq) and their send times ->
    the framed byte stream in send order, seq numbered from 0."""
    times = np.concatenate([g[1] for g in groups])
    gid = np.concatenate([np.full(len(g[1]), i) for i, g in enumerate(groups)])
    order = np.lexsort((gid, times))
    seq = np.empty(len(times), np.int64)
    seq[order] = np.arange(len(times)) % 65536
    lengths = []
    starts = np.zeros(len(times), np.int64)
    flat_parts = []
    pos = 0
    for i, (rows, _) in enumerate(groups):
        sel = gid == i
        rows = rows.copy()
        rows[:, 1:3] = le(seq[sel], "<u2")
        crc = crc16_rows(rows)
        msg = np.concatenate([rows, le(crc, "<u2")], axis=1)
        enc = cobs_encode_rows(msg)
        lengths.append(enc.shape[1])
        starts[sel] = pos + np.arange(len(rows)) * enc.shape[1]
        flat_parts.append(enc.ravel())
        pos += enc.size
    flat = np.concatenate(flat_parts)
    frame_len = np.array(lengths)[gid[order]]
    src = starts[order]
    total = int(frame_len.sum())
    first = np.repeat(src - np.r_[0, np.cumsum(frame_len)[:-1]], frame_len)
    idx = first + np.arange(total)
    return flat[idx].tobytes()


def build_stream(tw: Tower, world: World, room: Room, duration: float,
                 rng: np.random.Generator) -> tuple[bytes, dict[str, Any]]:
    rate, batch = tw.piezo_rate, tw.piezo_batch
    # firmware start = device time 0: HELLO at 0.8 ms, the ADC timer runs from 2 ms
    t_adc_dev = 0.002 + float(rng.uniform(0, 0.0005))
    t0_dev = float(micros(t_adc_dev)) / 1e6  # t_us of the first PIEZO: stream time zero
    n_msgs = int(math.ceil(duration * rate / batch))
    n_sets = n_msgs * batch
    set_dev = t_adc_dev + np.arange(n_sets) / rate
    set_t = set_dev - t0_dev
    codes = render_piezo(tw, room, world, set_t, rng)
    first_dev = set_dev[::batch]
    p_rows = np.concatenate([
        u8(np.full(n_msgs, 0x02)), np.zeros((n_msgs, 2), np.uint8),
        le(micros(first_dev), "<u4"), u8(np.full(n_msgs, batch)),
        codes.astype("<u2").reshape(n_msgs, batch * N_LEV).view(np.uint8)], axis=1)
    p_send = set_dev[batch - 1::batch] + 6e-5
    # HX711 reads
    times, valids, convs, timeouts = hx_reads(tw, world, rng, 0.001 - t0_dev, duration)
    tl = Timeline(np.array(times), np.array(valids, np.int64),
                  np.array(convs, float).reshape(-1, N_LEV))
    values = render_load(tw, world, tl, rng, duration)
    r_dev = tl.read_t + t0_dev
    l_rows = np.concatenate([
        u8(np.full(len(r_dev), 0x03)), np.zeros((len(r_dev), 2), np.uint8),
        le(micros(r_dev), "<u4"), u8(tl.read_valid), s24(values)], axis=1)
    l_send = r_dev + 2.5e-4
    # STATUS
    end_dev = duration + t0_dev
    n_st = int(math.floor((end_dev - 0.002) / tw.status_period_s))
    st_dev = tw.status_period_s * np.arange(1, n_st + 1) + rng.uniform(0, 0.001, n_st)
    to_dev = np.sort(np.array(timeouts) + t0_dev)
    n_to = np.searchsorted(to_dev, st_dev).astype(np.int64)
    absent = np.zeros(len(st_dev), np.int64)
    for t_break, t_make, _ in world.lifted:
        absent |= ((st_dev - t0_dev >= t_break) & (st_dev - t0_dev < t_make)).astype(np.int64)
    s_rows = np.concatenate([
        u8(np.full(len(st_dev), 0x04)), np.zeros((len(st_dev), 2), np.uint8),
        le(np.floor(st_dev * 1000), "<u4"), le(np.zeros(len(st_dev)), "<u2"),
        le(np.zeros(len(st_dev)), "<u2"), le(n_to, "<u2"),
        u8(np.clip(tw.cpu_load + rng.normal(0, 1.5, len(st_dev)), 0, 100).round()),
        u8(absent)], axis=1)
    hello = np.array([[0x01, 0, 0, 1, *tw.fw_version, N_LEV, N_LEV, rate & 0xFF, rate >> 8,
                       80, 0, 10, *tw.device_id]], np.uint8)
    groups = [(hello, np.array([0.0008])), (p_rows, p_send), (l_rows, l_send),
              (s_rows, st_dev)]
    if tw.host_pings:
        pg_dev = np.arange(1.0, end_dev - 0.01, 2.0)
        pg_dev = pg_dev + rng.uniform(0.0002, 0.002, len(pg_dev))
        token0 = int(rng.integers(0, 2**31))
        pg_rows = np.concatenate([
            u8(np.full(len(pg_dev), 0x06)), np.zeros((len(pg_dev), 2), np.uint8),
            le((token0 + np.arange(len(pg_dev))) % 2**32, "<u4"), le(micros(pg_dev), "<u4")],
            axis=1)
        groups.append((pg_rows, pg_dev))
    data = assemble(groups)
    info = {"load_reads": len(r_dev), "load_timeouts": len(timeouts),
            "piezo_messages": n_msgs, "status_messages": len(st_dev),
            "clipped_samples": int(np.sum((codes == 0) | (codes == 1023)))}
    return data, info


# ============================================================================ one recording

def _clean(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_clean(v) for v in x]
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.floating | float):
        return float(x) if math.isfinite(x) else None
    return x


def make_world(seed: int, scenario: str, duration_s: float
               ) -> tuple[Tower, Room, World, dict[str, Any]]:
    """Tower, room and the physical history of one session (no signals yet)."""
    if scenario not in SCENARIOS:
        raise ValueError(f"unknown scenario {scenario!r}")
    tw = Tower(seed)
    sidx = SCENARIOS.index(scenario)
    rng = np.random.default_rng([TAG, seed, 1 + sidx, 1])
    room = make_room(scenario, rng)
    world = World(tw, rng, duration_s)
    end = duration_s - 1.0
    extra: dict[str, Any] = {}
    if scenario == "single":
        play_single(world, rng, end)
    elif scenario == "rapid":
        play_rapid(world, rng, end)
    elif scenario == "noisy":
        play_single(world, rng, end)
        add_knocks(world, rng, room, QUIET_S + 0.5, duration_s - 0.5)
    else:
        game = Game(world, rng, end)
        game.play()
        add_knocks(world, rng, room, QUIET_S + 0.5, duration_s - 0.5)
        extra["game"] = {"players": game.players, "phase": game.phase,
                         "crime_scenes": sorted(game.crime_scenes), "sheet": game.sheet,
                         "supply": game.supply, "log": game.log}
    return tw, room, world, extra


def truth_doc(seed: int, scenario: str, duration_s: float, tw: Tower, room: Room,
              world: World, extra: dict[str, Any], info: dict[str, Any]) -> dict[str, Any]:
    lands = sorted(world.landings, key=lambda x: (x["t"], x["cube"]))
    index = {id(x): i for i, x in enumerate(lands)}
    out_l = []
    for x in lands:
        y = {k: v for k, v in x.items()}
        y["cubes"] = 1
        out_l.append(y)
    kds = []
    for kd in world.knockdowns:
        k_i = index[id(kd["knocked_landing"])]
        b_i = index[id(kd["by_landing"])]
        out_l[k_i]["by"] = b_i
        kds.append({"t": kd["t"], "from_floor": kd["from_floor"], "to_floor": kd["to_floor"],
                    "by": b_i, "landing": k_i})
    firsts = [x["t_first_impact"] for x in out_l] + [
        x["t"] for x in world.knocks + world.lifts + world.removals + world.closes]
    doc = {
        "format": FORMAT, "generator": "crosscheck_m", "scenario": scenario, "seed": seed,
        "duration_s": duration_s, "cells": tw.cells,
        "quiet_s": round(min(firsts), 4) if firsts else duration_s,
        "tower": tw.describe(), "room": vars(room),
        "landings": out_l, "knockdowns": kds,
        "removals": sorted(world.removals, key=lambda x: x["t"]),
        "lifts": world.lifts, "closes": world.closes,
        "knocks": sorted(world.knocks, key=lambda x: x["t"]),
        "stream": info,
    }
    doc.update(extra)
    return _clean(doc)


def render_world(seed: int, scenario: str, duration_s: float, tw: Tower, room: Room,
                 world: World, extra: dict[str, Any] | None = None
                 ) -> tuple[bytes, dict[str, Any]]:
    """Bytes and truth of a session already played out in ``world`` (tests build scenes)."""
    rng = np.random.default_rng([TAG, seed, 1 + SCENARIOS.index(scenario), 2])
    data, info = build_stream(tw, world, room, duration_s, rng)
    return data, truth_doc(seed, scenario, duration_s, tw, room, world, extra or {}, info)


def render(seed: int, scenario: str, duration_s: float) -> tuple[bytes, dict[str, Any]]:
    """Bytes and truth of one recording."""
    tw, room, world, extra = make_world(seed, scenario, duration_s)
    return render_world(seed, scenario, duration_s, tw, room, world, extra)


def make_recording(seed: int, scenario: str, duration_s: float, out: Path
                   ) -> tuple[Path, Path]:
    """Write ``{scenario}_t{seed}.bin`` and ``.truth.json`` into ``out``; return both paths."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    data, truth = render(seed, scenario, float(duration_s))
    bin_path = out / f"{scenario}_t{seed}.bin"
    truth_path = out / f"{scenario}_t{seed}.truth.json"
    bin_path.write_bytes(data)
    truth_path.write_text(json.dumps(truth, indent=1, sort_keys=True))
    return bin_path, truth_path


def _job(args: tuple[int, str, float, str]) -> str:
    seed, scenario, duration, out = args
    b, _ = make_recording(seed, scenario, duration, Path(out))
    return b.name


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--towers", type=int, default=8)
    p.add_argument("--first-seed", type=int, default=1)
    p.add_argument("--duration", type=float, default=120.0)
    p.add_argument("--scenarios", nargs="+", choices=SCENARIOS, default=list(SCENARIOS))
    p.add_argument("--workers", type=int, default=2)
    args = p.parse_args(argv)
    if args.duration < 10.0:
        print("--duration must be at least 10 s", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    jobs = [(s, sc, args.duration, str(args.out)) for s in range(
        args.first_seed, args.first_seed + args.towers) for sc in args.scenarios]
    started = time.perf_counter()
    if args.workers > 1 and len(jobs) > 1:
        with ProcessPoolExecutor(max_workers=args.workers) as ex:
            names = list(ex.map(_job, jobs))
    else:
        names = [_job(j) for j in jobs]
    print(f"wrote {len(names)} recordings to {args.out} in "
          f"{time.perf_counter() - started:.1f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
