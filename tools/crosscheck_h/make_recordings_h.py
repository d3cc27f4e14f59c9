#!/usr/bin/env python3
"""Cross-check model H: simulated towers whose firmware polls the load cells on its own timer.

Writes recordings (the device's wire bytes, contracts.md sections 1-2) and their
ground truth (``towerear-crosscheck-truth/1``, read by tools/crosscheck/score.py)
of towers drawn from a seed. Written only from /work/shared (contracts, design,
rules) and the scorer; every modelling choice and range is in README.md.

Usage::

    .venv/bin/python tools/crosscheck_h/make_recordings_h.py --out /tmp/sets_h \
        [--towers 8] [--first-seed 1] [--duration 120] [--scenarios single rapid noisy game]
    .venv/bin/python tools/crosscheck_h/make_recordings_h.py --cell-ranges [--towers 2000]
"""

from __future__ import annotations

import argparse
import bisect
import json
import math
import struct
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy import signal

FORMAT = "towerear-crosscheck-truth/1"
SCENARIOS = ("single", "rapid", "noisy", "game")
COLOURS = ("yellow", "blue", "brown", "gray", "black", "white")
N_LEVELS = 8

G_MM = 9810.0  # gravity, mm/s^2
GF = 9.81e-3  # newtons per gram-force
J_REF = 0.5e-3 * 1.0 * 1.4  # N s: a 0.5 g cube striking at 1 m/s with restitution 0.4
V_STOP = 30.0  # mm/s: a bounce slower than this (0.05 mm high) ends the bouncing
FS_GRID = 2000.0  # Hz: the grid on which the force on each load cell is built
QUIET_UNTIL_S = 4.3  # no event (throw, knock, hand, talk) before this physics time
S24_MAX = (1 << 23) - 1
S24_MIN = -(1 << 23)
U32 = 1 << 32

# Message types (contracts.md section 1).
HELLO, PIEZO, LOAD, STATUS, ACK, PONG = 0x01, 0x02, 0x03, 0x04, 0x05, 0x06
GET_INFO, START = 0x81, 0x82

F64 = npt.NDArray[np.floating[Any]]
I64 = npt.NDArray[np.int64]
U8 = npt.NDArray[np.uint8]


# ----------------------------------------------------------------------------------------------
# Wire encoding: CRC-16/CCITT-FALSE and COBS, written from contracts.md.


def _crc_table() -> I64:
    table = np.zeros(256, np.int64)
    for i in range(256):
        crc = i << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
        table[i] = crc
    return table


_CRC_TABLE = _crc_table()


def crc16_rows(rows: U8) -> I64:
    """CRC-16/CCITT-FALSE of every row of a 2-D uint8 array (one table step per column)."""
    crc = np.full(rows.shape[0], 0xFFFF, np.int64)
    for col in range(rows.shape[1]):
        crc = ((crc << 8) & 0xFFFF) ^ _CRC_TABLE[(crc >> 8) ^ rows[:, col].astype(np.int64)]
    return crc


def crc16_ccitt_false(data: bytes) -> int:
    """CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, not reflected, xorout 0)."""
    return int(crc16_rows(np.frombuffer(data, np.uint8).reshape(1, -1))[0])


def crc16_ccitt_false_reference(data: bytes) -> int:
    """The same CRC bit by bit, as the contract states it (a check on the table version)."""
    crc = 0xFFFF
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) & 0xFFFF if crc & 0x8000 else (crc << 1) & 0xFFFF
    return crc


def cobs_encode(data: bytes) -> bytes:
    """Consistent Overhead Byte Stuffing of any ``data`` (no 0x00 in the result)."""
    out = bytearray()
    parts = data.split(b"\x00")
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        full_block = False
        while len(part) >= 254:
            out.append(0xFF)
            out += part[:254]
            part = part[254:]
            full_block = True
        if part or not last or not full_block:
            out.append(len(part) + 1)
            out += part
    return bytes(out)


def cobs_frames(rows: U8) -> U8:
    """COBS-encode every row (messages shorter than 254 bytes) and append the 0x00 delimiter.

    A message shorter than 254 bytes has no run of 254 non-zero bytes, so its
    encoding is one code byte in front and every 0x00 replaced by the distance
    to the next 0x00 (or to the end): the same length for every row.
    """
    n, length = rows.shape
    if length >= 254:
        raise ValueError("cobs_frames takes messages shorter than 254 bytes")
    ext = np.concatenate([np.zeros((n, 1), np.uint8), rows, np.zeros((n, 1), np.uint8)], axis=1)
    # ext[:, 0] stands for the leading code byte, ext[:, -1] for the implied final zero.
    pos = np.arange(length + 2, dtype=np.int16)
    zero_at = np.where(ext[:, 1:] == 0, pos[None, 1:], np.int16(length + 1))
    # For a code byte at ext column p: the first zero strictly after p, minus p.
    next_zero = np.minimum.accumulate(zero_at[:, ::-1], axis=1)[:, ::-1]
    codes = (next_zero - pos[None, :-1]).astype(np.uint8)
    is_code = np.concatenate([np.ones((n, 1), bool), rows == 0], axis=1)
    enc = ext.copy()
    enc[:, :-1] = np.where(is_code, codes, ext[:, :-1])
    enc[:, -1] = 0
    return enc


# ----------------------------------------------------------------------------------------------
# The tower: everything drawn per seed.


def _log_uniform(rng: np.random.Generator, lo: float, hi: float, size: Any = None) -> Any:
    return np.exp(rng.uniform(math.log(lo), math.log(hi), size))


PIEZO_RATES = (1000, 1250, 1600, 2000, 2500, 3125, 3200, 4000)

# Load cells and HX711s: the datasheet figures and the ranges drawn (README's table).
CELL_CAPACITY_G = (100.0, 200.0)  # rated capacity of a small bar cell
CELL_RATED_MV_V = (0.6, 1.0)  # rated output at capacity, mV per V of excitation
AVDD_V = (4.3, 5.0)  # the HX711's AVDD (bridge excitation) on a 5 V board
AVDD_LOW_V, AVDD_LOW_SHARE = 3.3, 0.2  # a board whose HX711 runs at 3.3 V
HX711_GAIN = 128  # channel A
HX711_NOISE_NV = {10: 50.0, 80: 90.0}  # input-referred noise, nV rms per reading, gain 128
NOISE_ENV = (1.0, 4.0)  # per tower (leads, supply), log-uniform
NOISE_CELL = (0.85, 1.15)  # per cell
LOAD_PATH = (0.85, 1.0)  # of a plate's load carried by the cells (the rest by the card)
SHARE_MAX = 0.04  # most of a plate's load a neighbouring cell can carry (per side)
CUBE_MASS_G = (0.3, 0.8)


def counts_per_volt(avdd_v: float) -> float:
    """HX711 counts per volt at the input: 2^23 counts are 0.5 x AVDD / gain."""
    return float(2 ** 23 / (0.5 * avdd_v / HX711_GAIN))


def counts_per_gram(rated_mv_v: Any, capacity_g: Any, avdd_v: float) -> Any:
    """Counts per gram on a cell excited by AVDD (AVDD cancels: the bridge is ratiometric)."""
    volts_per_g = np.asarray(rated_mv_v) * 1e-3 * avdd_v / np.asarray(capacity_g)
    return volts_per_g * counts_per_volt(avdd_v)


def cell_ranges() -> dict[str, dict[str, tuple[float, float]]]:
    """The extremes the drawn ranges allow, per converter rate: a cube's step on its own
    cell (counts), the noise per reading (counts) and their ratio."""
    gain_lo = counts_per_gram(CELL_RATED_MV_V[0], CELL_CAPACITY_G[1], 5.0)
    gain_hi = counts_per_gram(CELL_RATED_MV_V[1], CELL_CAPACITY_G[0], 5.0)
    step = (CUBE_MASS_G[0] * gain_lo * LOAD_PATH[0] * (1 - 2 * SHARE_MAX),
            CUBE_MASS_G[1] * gain_hi * LOAD_PATH[1])
    out = {}
    for rate, nv in HX711_NOISE_NV.items():
        noise = (nv * NOISE_ENV[0] * NOISE_CELL[0] * 1e-9 * counts_per_volt(AVDD_V[1]),
                 nv * NOISE_ENV[1] * NOISE_CELL[1] * 1e-9 * counts_per_volt(AVDD_LOW_V))
        out[f"{rate}/s"] = {"cube_counts": step, "noise_counts": noise,
                            "cube_over_noise": (step[0] / noise[1], step[1] / noise[0])}
    return out


def cell_report(seeds: range) -> str:
    """The extremes (cell_ranges) and what the towers of ``seeds`` draw: 5/50/95 % and the
    extremes over all their cells, per converter rate (the README's figures)."""
    lines = []
    for key, r in cell_ranges().items():
        lines.append(f"{key} bounds: cube {r['cube_counts'][0]:.0f}-{r['cube_counts'][1]:.0f}"
                     f" counts, noise {r['noise_counts'][0]:.1f}-{r['noise_counts'][1]:.1f},"
                     f" cube/noise {r['cube_over_noise'][0]:.1f}-{r['cube_over_noise'][1]:.0f}")
    towers = [Tower(s) for s in seeds]
    for rate in sorted(HX711_NOISE_NV):
        tws = [t for t in towers if t.load_rate == rate]
        for name, vals in (("cube", [t.cube_step for t in tws]),
                           ("noise", [t.noise_counts for t in tws]),
                           ("cube/noise", [t.cube_step / t.noise_counts for t in tws])):
            v = np.concatenate(vals)
            q = np.percentile(v, [5, 50, 95])
            lines.append(f"{rate}/s {name} over {len(tws)} towers: {v.min():.1f} | "
                         f"{q[0]:.1f} / {q[1]:.1f} / {q[2]:.1f} | {v.max():.1f}")
    return "\n".join(lines)


class Tower:
    """One physical tower with its sensors and firmware build, drawn from ``seed``."""

    def __init__(self, seed: int) -> None:
        rng = np.random.default_rng([seed, 0x4854])
        self.seed = seed
        u = rng.uniform
        # Cubes and geometry (mm, g).
        self.cube_mass_g = float(u(*CUBE_MASS_G))
        self.wood_density = float(u(0.55, 0.75))  # g/cm^3
        self.edge_mm = 10.0 * (self.cube_mass_g / self.wood_density) ** (1 / 3)
        self.half = self.edge_mm / 2
        base_h = u(27.0, 33.0)
        self.height_mm = base_h + u(-1.0, 1.0, N_LEVELS)  # height of module L (plate L to L+1)
        self.wall_mm = float(u(28.0, 35.0))  # inner half width of every module
        a_top = self.half * u(1.45, 1.75)
        grow = self.half * u(0.0, 0.06)
        self.hole_mm = np.zeros(N_LEVELS + 1)  # half width of the square hole in plate L
        for level in range(1, N_LEVELS):
            self.hole_mm[level] = a_top + grow * (N_LEVELS - 1 - level) + u(-0.3, 0.3)
        self.hole_mm[N_LEVELS] = a_top * u(0.92, 1.0)  # the entrance on top of module 7
        self.hole_xy = np.clip(rng.normal(0.0, 2.5, (N_LEVELS + 1, 2)), -5.0, 5.0)
        self.hole_xy[0] = 0.0
        self.hole_xy[N_LEVELS] = 0.0
        self.restitution = float(u(0.25, 0.5))
        self.friction = float(u(0.3, 0.55))
        # Half the towers each way, whatever the draws: cadence by the seed's parity,
        # converter rate by the next bit (seeds 1..4 cover all four pairs).
        self.cadence = "poll" if seed % 2 == 1 else "rounds"
        self.load_rate = 80 if (seed // 2) % 2 == 0 else 10
        # Load cells and HX711s (README "Load cells and HX711s"). The bridge and the
        # converter are drawn from a stream of their own; the main stream skips the draws
        # it reserves for them, so the parameters drawn after this block do not depend on it.
        self.cells = "matched" if rng.random() < 0.5 else "mixed"
        rng.random(9 if self.cells == "matched" else 8)
        cell_rng = np.random.default_rng([seed, 0x4854, 0x4C43])
        cu = cell_rng.uniform
        if self.cells == "matched":  # one type of cell: one capacity, rated output +-5 %
            self.capacity_g = np.full(N_LEVELS, cu(*CELL_CAPACITY_G))
            self.rated_mv_v = np.clip(cu(*CELL_RATED_MV_V) * cu(0.95, 1.05, N_LEVELS),
                                      *CELL_RATED_MV_V)
        else:  # eight cells bought one by one
            self.capacity_g = cu(*CELL_CAPACITY_G, N_LEVELS)
            self.rated_mv_v = cu(*CELL_RATED_MV_V, N_LEVELS)
        self.avdd_v = AVDD_LOW_V if cell_rng.random() < AVDD_LOW_SHARE else float(cu(*AVDD_V))
        self.load_path = cu(*LOAD_PATH, N_LEVELS)  # of a plate's load that reaches the cells
        self.counts_per_g = counts_per_gram(self.rated_mv_v, self.capacity_g, self.avdd_v)
        self.counts_per_cube = self.counts_per_g * self.cube_mass_g  # a cube on the cell itself
        self.noise_env = float(_log_uniform(cell_rng, *NOISE_ENV))
        self.noise_nv = HX711_NOISE_NV[self.load_rate] * self.noise_env \
            * cu(*NOISE_CELL, N_LEVELS)
        self.noise_counts = self.noise_nv * 1e-9 * counts_per_volt(self.avdd_v)
        self.sign = np.where(rng.random(N_LEVELS) < 0.2, -1.0, 1.0)
        span = S24_MAX - 1_000_000 - 60.0 * self.counts_per_cube
        self.offset = rng.uniform(-span, span)
        rng.random(9)
        self.drift_cube_per_sqrt_s = u(0.0, 0.004, N_LEVELS)
        share_max = u(0.0, SHARE_MAX)
        self.share_up = u(0.0, share_max, N_LEVELS)  # of plate L's weight on cell L+1
        self.share_dn = u(0.0, share_max, N_LEVELS)  # of plate L's weight on cell L-1
        self.share_up[N_LEVELS - 1] = 0.0
        self.share_dn[0] = 0.0
        # What one cube coming to rest on plate L moves cell L by (counts, unsigned).
        self.cube_step = self.counts_per_cube * self.load_path \
            * (1.0 - self.share_up - self.share_dn)
        self.jolt = float(u(0.03, 0.2))  # share of an impact's impulse on the neighbour cells
        self.plate_f = u(40.0, 150.0, N_LEVELS)  # plate-on-cell mode, Hz
        self.plate_zeta = u(0.03, 0.12, N_LEVELS)
        self.plate_mass_g = u(4.0, 10.0, N_LEVELS)
        self.stack_coupling = u(-0.2, 0.2, N_LEVELS)  # cubes, while the modules above are off
        rng.random(2)  # reserved (cadence and rate are set from the seed above)
        self.poll_factor = float(u(1.0, 2.5))
        self.common_clock = bool(rng.random() < 0.4)
        if self.cadence == "rounds" and self.common_clock:
            self.conv_rate = self.load_rate * (1 + np.full(N_LEVELS, u(-0.002, 0.002)))
            self.conv_phase = u(0.0, 0.002, N_LEVELS)
        else:
            self.conv_rate = self.load_rate * (1 + u(-0.04, 0.04, N_LEVELS))
            self.conv_phase = u(0.0, 1.0, N_LEVELS) / self.conv_rate
        self.poll_phase = float(u(0.0, 1.0))
        self.reconnect_delay = (0.02, 0.15)
        # Piezo front end and ADC.
        self.piezo_rate = int(rng.choice(PIEZO_RATES))
        self.adc_bits = 10 if rng.random() < 0.7 else 12
        self.stagger = float(u(0.0, 1.0)) / (N_LEVELS * self.piezo_rate)  # between channels
        budget = 80_000.0  # bytes/s of the 100 kB/s UART for PIEZO
        n_min = max(1, math.ceil(12 * self.piezo_rate / (budget - 16 * self.piezo_rate)))
        self.sets_varying = bool(rng.random() < 0.5)
        self.sets_lo = int(rng.integers(n_min, 15))
        self.sets_hi = int(rng.integers(self.sets_lo, 15)) if self.sets_varying else self.sets_lo
        self.latency_max_us = int(rng.integers(0, 301))
        self.disc_gain = 10 ** (u(-8.0, 8.0, N_LEVELS) / 20)
        self.pz_sens = float(u(0.2, 0.8))  # full-scale fraction per J_REF
        self.pz_cross = u(0.08, 0.35, N_LEVELS - 1)  # between disc L and L+1
        self.card_fc = float(u(300.0, 900.0))
        self.card_delay = float(u(0.1e-3, 0.5e-3))
        self.modes_f = u(250.0, 2500.0, (N_LEVELS, 3))
        self.modes_tau = u(2e-3, 15e-3, (N_LEVELS, 3))
        self.modes_amp = u(0.3, 1.0, (N_LEVELS, 3))
        self.modes_phase = u(-0.3, 0.3, (N_LEVELS, 3))
        self.front_lp = float(u(0.3, 2.0)) * self.piezo_rate
        self.front_hp = float(u(3.0, 30.0))
        self.pz_bias = u(-0.015, 0.015, N_LEVELS)
        self.adc_noise = float(u(0.0004, 0.0015))
        self.mains = 50.0 if rng.random() < 0.8 else 60.0
        self.hum = u(0.0, 0.0015, N_LEVELS)
        self.hum_phase = u(0.0, 2 * math.pi, N_LEVELS)
        self.pz_float = bool(rng.random() < 0.5)  # a disconnected ADC input floats
        self.table_decay = float(u(0.6, 0.85))
        # Firmware build.
        self.start_mode = "boot" if rng.random() < 0.5 else "attach"
        self.junk_prefix = bool(rng.random() < 0.6)
        self.wrap_at_s = float(u(5.0, 100.0)) if rng.random() < 0.5 else None
        self.t_start_us = int(rng.integers(250_000, 600_000)) if self.start_mode == "boot" \
            else (U32 - int(self.wrap_at_s * 1e6) if self.wrap_at_s is not None
                  else int(rng.integers(0, U32)))
        self.boots_wraps = 0 if self.start_mode == "boot" else int(rng.integers(0, 6))
        self.seq0 = 0 if self.start_mode == "boot" else int(rng.integers(0, 65536))
        self.fw = (1, int(rng.integers(0, 10)), int(rng.integers(0, 30)))
        self.device_id = rng.integers(0, 256, 8).astype(np.uint8).tobytes()
        self.status_phase = float(u(0.0, 1.0))
        self.cpu_load = float(u(25.0, 60.0))
        self.ext_types: list[tuple[int, int, int, float]] = []  # type, len lo, len hi, per second
        if rng.random() < 0.5:
            for t in rng.choice(np.arange(0x10, 0x40), int(rng.integers(1, 4)), replace=False):
                lo = int(rng.integers(0, 41))
                self.ext_types.append((int(t), lo, int(rng.integers(lo, 41)), float(u(0.2, 5.0))))
        self.pong_per_min = float(u(0.0, 3.0))
        self.ack_per_min = float(u(0.0, 3.0))

    def describe(self) -> dict[str, Any]:
        """The tower's main parameters (written into the truth file, for reading)."""
        return {
            "cube_mass_g": round(self.cube_mass_g, 4), "edge_mm": round(self.edge_mm, 2),
            "hole_half_mm": [round(float(a), 2) for a in self.hole_mm[1:N_LEVELS]],
            "capacity_g": [round(float(c), 1) for c in self.capacity_g],
            "rated_output_mv_v": [round(float(r), 4) for r in self.rated_mv_v],
            "avdd_v": round(self.avdd_v, 3), "load_path": [round(float(x), 3)
                                                            for x in self.load_path],
            "counts_per_cube": [int(c) for c in self.counts_per_cube * self.sign],
            "cube_step_counts": [int(c) for c in self.cube_step * self.sign],
            "noise_counts": [round(float(n), 1) for n in self.noise_counts],
            "noise_env": round(self.noise_env, 3),
            "load_rate_hz": self.load_rate, "cadence": self.cadence,
            "poll_hz": round(self.load_rate * self.poll_factor, 3)
            if self.cadence == "poll" else None,
            "converter_hz": [round(float(r), 3) for r in self.conv_rate],
            "piezo_rate_hz": self.piezo_rate, "adc_bits": self.adc_bits,
            "sets_per_message": [self.sets_lo, self.sets_hi],
            "t_us_latency_max": self.latency_max_us,
            "extension_types": [t for t, *_ in self.ext_types], "start": self.start_mode,
        }


# ----------------------------------------------------------------------------------------------
# Cubes in the shaft.


@dataclass
class Impact:
    """A strike on a plate (or a module's wall) that the sensors feel."""

    t: float
    level: int
    j: float  # N s
    kind: str  # "flat", "bounce", "edge", "wall"


@dataclass
class Placement:
    """A cube lying on a plate from ``t_on`` (weight carried) until ``t_off``."""

    cube: int
    level: int
    x: float
    y: float
    t_on: float
    t_rest: float
    t_off: float = math.inf


@dataclass
class Flight:
    """One cube's way down: thrown in, or knocked off a plate."""

    cube: int
    t_start: float
    knocked: bool
    from_level: int
    impacts: list[Impact] = field(default_factory=list)
    t_first_impact: float = math.inf
    level: int = -1
    t_on: float = 0.0
    t_rest: float = 0.0
    caused: list[Flight] = field(default_factory=list)


class Shaft:
    """The cubes in one tower: throws, bounces, knock-downs, hands taking cubes out."""

    def __init__(self, tower: Tower, rng: np.random.Generator) -> None:
        self.tw = tower
        self.rng = rng
        self.placements: list[Placement] = []
        self.mass: list[float] = []
        self.colour: list[str] = []

    def new_cube(self, colour: str) -> int:
        spread = float(np.clip(self.rng.normal(0.0, 0.025), -0.07, 0.07))
        self.mass.append(self.tw.cube_mass_g * (1 + spread))
        self.colour.append(colour)
        return len(self.mass) - 1

    def on_plate(self, level: int, t: float) -> list[Placement]:
        return [p for p in self.placements if p.level == level and p.t_on <= t < p.t_off]

    # -- geometry -------------------------------------------------------------------------
    def _c_eff(self) -> float:
        theta = self.rng.uniform(0.0, math.pi / 2)
        return self.tw.half * (abs(math.cos(theta)) + abs(math.sin(theta)))

    def _s(self, level: int, x: float, y: float, c_eff: float) -> float:
        """How far the cube's footprint is inside plate ``level``'s hole (>= 1: all of it)."""
        if level == 0:
            return -math.inf
        hx, hy = self.tw.hole_xy[level]
        d = max(abs(x - hx), abs(y - hy))
        return (float(self.tw.hole_mm[level]) - d) / c_eff

    @staticmethod
    def _p_pass(s: float) -> float:
        return float(np.clip((s + 1) / 2, 0.0, 1.0)) ** 1.5

    def _move(self, x: float, v: float, dt: float, level: int, hits: list[tuple[float, float]]
              ) -> tuple[float, float]:
        """Move along one axis for ``dt`` between the module's walls (card: half the speed back)."""
        lim = self.tw.wall_mm - self.tw.half
        t_done = 0.0
        for _ in range(6):
            x_new = x + v * (dt - t_done)
            if abs(x_new) <= lim or v == 0.0:
                return x_new, v
            wall = math.copysign(lim, v)
            th = (wall - x) / v
            t_done += th
            hits.append((t_done, abs(v)))
            x, v = wall, -0.5 * v
        return float(np.clip(x, -lim, lim)), v

    # -- a cube's way down ----------------------------------------------------------------
    def descend(self, fl: Flight, level: int, z: float, v: float, x: float, y: float,
                vx: float, vy: float, t: float, depth: int) -> None:
        """Follow ``fl``'s cube from height ``z`` above plate ``level`` until it rests."""
        tw, rng = self.tw, self.rng
        m_kg = self.mass[fl.cube] * 1e-3
        e = tw.restitution
        while True:
            tf = (-v + math.sqrt(v * v + 2 * G_MM * z)) / G_MM
            hits: list[tuple[float, float]] = []
            x, vx = self._move(x, vx, tf, level, hits)
            y, vy = self._move(y, vy, tf, level, hits)
            for th, speed in hits:
                if speed > 30.0:
                    self._strike(fl, Impact(t + th, level, m_kg * speed * 1e-3 * 1.5, "wall"))
            t += tf
            v += G_MM * tf
            c_eff = self._c_eff()
            s = self._s(level, x, y, c_eff)
            if s >= 1.0:  # through the hole without touching it
                level -= 1
                z = float(tw.height_mm[level])
                continue
            if s > -1.0:  # the cube strikes the hole's edge
                j = m_kg * v * 1e-3 * (1 + e) * rng.uniform(0.25, 0.6)
                self._strike(fl, Impact(t, level, j, "edge"))
                self._knock(fl, level, x, y, t, j, depth)
                if rng.random() < self._p_pass(s):
                    v *= rng.uniform(0.5, 0.85)
                    hx, hy = tw.hole_xy[level]
                    kick = rng.uniform(50.0, 250.0)
                    r = math.hypot(hx - x, hy - y) or 1.0
                    vx += kick * (hx - x) / r + rng.normal(0.0, 50.0)
                    vy += kick * (hy - y) / r + rng.normal(0.0, 50.0)
                    level -= 1
                    z = float(tw.height_mm[level])
                    continue
                x, y = self._push_out(level, x, y, c_eff)
                v *= rng.uniform(0.3, 0.6)
                t += rng.uniform(0.001, 0.004)
            fell = self._bounce(fl, level, x, y, vx, vy, v, t, depth)
            if fell is None:
                return
            x, y, vx, vy, v, t = fell
            level -= 1
            z = float(tw.height_mm[level])

    def _push_out(self, level: int, x: float, y: float, c_eff: float) -> tuple[float, float]:
        """Where a cube that struck the edge and did not go through lands: beside the hole."""
        hx, hy = self.tw.hole_xy[level]
        a = float(self.tw.hole_mm[level])
        dx, dy = x - hx, y - hy
        target = a + c_eff * self.rng.uniform(0.0, 0.4)
        if abs(dx) >= abs(dy):
            dx = math.copysign(max(abs(dx), target), dx or 1.0)
        else:
            dy = math.copysign(max(abs(dy), target), dy or 1.0)
        lim = self.tw.wall_mm - self.tw.half
        return float(np.clip(hx + dx, -lim, lim)), float(np.clip(hy + dy, -lim, lim))

    def _bounce(self, fl: Flight, level: int, x: float, y: float, vx: float, vy: float,
                v: float, t: float, depth: int
                ) -> tuple[float, float, float, float, float, float] | None:
        """Bounce on plate ``level``: None once at rest, else the state falling through its hole."""
        tw, rng = self.tw, self.rng
        m_kg = self.mass[fl.cube] * 1e-3
        ang = rng.uniform(0.0, 2 * math.pi)
        kick = v * rng.uniform(0.05, 0.3)
        keep = rng.uniform(0.2, 0.6)
        vx, vy = vx * keep + kick * math.cos(ang), vy * keep + kick * math.sin(ang)
        kind = "flat"
        while True:
            j = m_kg * v * 1e-3 * (1 + tw.restitution)
            self._strike(fl, Impact(t, level, j, kind))
            if self._knock(fl, level, x, y, t, j, depth):
                ang = rng.uniform(0.0, 2 * math.pi)
                vx, vy = v * 0.2 * math.cos(ang), v * 0.2 * math.sin(ang)
            kind = "bounce"
            v_up = v * tw.restitution * rng.uniform(0.8, 1.1)
            if v_up < V_STOP:
                break
            flight = 2 * v_up / G_MM
            hits: list[tuple[float, float]] = []
            x, vx = self._move(x, vx, flight, level, hits)
            y, vy = self._move(y, vy, flight, level, hits)
            t += flight
            v = v_up
            c_eff = self._c_eff()
            s = self._s(level, x, y, c_eff)
            if s >= 1.0:
                return x, y, vx, vy, v, t
            if s > -1.0:
                if rng.random() < self._p_pass(s):
                    self._strike(fl, Impact(t, level, j * rng.uniform(0.2, 0.5), "edge"))
                    return x, y, vx, vy, v * rng.uniform(0.5, 0.85), t
                x, y = self._push_out(level, x, y, c_eff)
            keep = rng.uniform(0.5, 0.85)
            ang = rng.uniform(0.0, 2 * math.pi)
            kick = v * rng.uniform(0.0, 0.2)
            vx, vy = vx * keep + kick * math.cos(ang), vy * keep + kick * math.sin(ang)
        # Slide to a stop; the path may cross the hole.
        speed = math.hypot(vx, vy)
        mu_g = tw.friction * G_MM
        dist = speed * speed / (2 * mu_g)
        t_slide = speed / mu_g
        lim = tw.wall_mm - tw.half
        if speed > 0:
            c_eff = self._c_eff()
            for frac in (0.25, 0.5, 0.75, 1.0):
                px = float(np.clip(x + vx / speed * dist * frac, -lim, lim))
                py = float(np.clip(y + vy / speed * dist * frac, -lim, lim))
                s = self._s(level, px, py, c_eff)
                if s > 0.0 and rng.random() < self._p_pass(s):
                    tt = t + t_slide * frac
                    self._strike(fl, Impact(tt, level, m_kg * 0.05 * (1 + tw.restitution) * 0.3,
                                            "edge"))
                    return px, py, vx * 0.3, vy * 0.3, rng.uniform(30.0, 100.0), tt
            x = float(np.clip(x + vx / speed * dist, -lim, lim))
            y = float(np.clip(y + vy / speed * dist, -lim, lim))
        fl.level = level
        fl.t_on = t
        fl.t_rest = t + t_slide + rng.uniform(0.02, 0.15)
        self.placements.append(Placement(fl.cube, level, x, y, fl.t_on, fl.t_rest))
        return None

    def _strike(self, fl: Flight, imp: Impact) -> None:
        fl.impacts.append(imp)
        fl.t_first_impact = min(fl.t_first_impact, imp.t)

    def _knock(self, fl: Flight, level: int, x: float, y: float, t: float, j: float,
               depth: int) -> bool:
        """A strike at (x, y) on a cube lying there pushes it; over the hole it falls. Hit?"""
        tw, rng = self.tw, self.rng
        hit = False
        for p in self.on_plate(level, t):
            if p.cube == fl.cube or p.t_rest > t:
                continue
            dist = math.hypot(p.x - x, p.y - y)
            if dist > 1.1 * tw.edge_mm:
                continue
            hit = True
            push = tw.edge_mm * rng.uniform(0.2, 1.2) * min(1.5, j / J_REF)
            if dist > 1e-6:
                dx, dy = (p.x - x) / dist, (p.y - y) / dist
            else:
                dx, dy = 0.0, 0.0
            dx += rng.normal(0.0, 0.8)
            dy += rng.normal(0.0, 0.8)
            norm = math.hypot(dx, dy) or 1.0
            lim = tw.wall_mm - tw.half
            nx = float(np.clip(p.x + push * dx / norm, -lim, lim))
            ny = float(np.clip(p.y + push * dy / norm, -lim, lim))
            s = self._s(level, nx, ny, self._c_eff())
            # At most one knock-down per throw; a knocked cube knocks no other down.
            if depth == 0 and not fl.caused and s > 0.0 and rng.random() < self._p_pass(s):
                t_k = t + rng.uniform(0.003, 0.03)
                p.t_off = t_k
                kf = Flight(p.cube, t_k, True, level)
                fl.caused.append(kf)
                self.descend(kf, level - 1, float(tw.height_mm[level - 1]),
                             rng.uniform(50.0, 250.0), nx, ny, rng.normal(0.0, 40.0),
                             rng.normal(0.0, 40.0), t_k, depth + 1)
            else:
                p.x, p.y = nx, ny
        return hit

    def throw(self, colour: str, t_throw: float, cube: int | None = None) -> Flight:
        """A cube dropped into the entrance on top; it enters the tower at ``t_throw``.

        ``cube`` is a cube taken out of the tower before (thrown back), else a new one.
        """
        tw, rng = self.tw, self.rng
        if cube is None:
            cube = self.new_cube(colour)
        fl = Flight(cube, t_throw, False, N_LEVELS)
        room = max(0.2, float(tw.hole_mm[N_LEVELS]) - tw.half * 1.2)
        x, y = rng.uniform(-room, room, 2)
        v0 = math.sqrt(2 * G_MM * rng.uniform(0.0, 40.0))
        vx, vy = rng.normal(0.0, 50.0, 2)
        self.descend(fl, N_LEVELS - 1, float(tw.height_mm[N_LEVELS - 1]), v0, float(x),
                     float(y), float(vx), float(vy), t_throw, 0)
        return fl

    # -- undo, for throws that would end after the recording ------------------------------
    def snapshot(self) -> tuple[int, int, list[tuple[float, float, float]]]:
        return (len(self.placements), len(self.mass),
                [(p.x, p.y, p.t_off) for p in self.placements])

    def restore(self, snap: tuple[int, int, list[tuple[float, float, float]]]) -> None:
        n_pl, n_cubes, state = snap
        del self.placements[n_pl:]
        del self.mass[n_cubes:]
        del self.colour[n_cubes:]
        for p, (x, y, t_off) in zip(self.placements, state, strict=True):
            p.x, p.y, p.t_off = x, y, t_off


def all_flights(fl: Flight) -> list[Flight]:
    """A throw's flight and every flight it caused (knock-downs), depth first."""
    out = [fl]
    for sub in fl.caused:
        out += all_flights(sub)
    return out


# ----------------------------------------------------------------------------------------------
# What happens in a recording: throws, hands, lifts, knocks on the table, talk.


@dataclass
class Lift:
    """Modules ``exposed``..7 lifted off (channels exposed+1..7 disconnected) and set back."""

    exposed: int
    t_grab: float
    t_lift: float
    t_close: float
    t_release: float
    t_off: dict[int, float] = field(default_factory=dict)  # channel -> contact lost
    t_on: dict[int, float] = field(default_factory=dict)  # channel -> contact back


class Timeline:
    """The events of one recording, in physics time (device seconds from the first set)."""

    def __init__(self, tower: Tower, rng: np.random.Generator, duration: float) -> None:
        self.tw = tower
        self.rng = rng
        self.duration = duration
        self.shaft = Shaft(tower, rng)
        self.throws: list[tuple[Flight, str]] = []
        self.lifts: list[Lift] = []
        self.removals: list[dict[str, Any]] = []
        self.knocks: list[tuple[float, float]] = []  # (t, table acceleration in g), in the truth
        self.taps: list[tuple[float, float]] = []  # small table taps (spilled cubes), not listed
        self.spills: list[dict[str, Any]] = []
        self.talk: list[tuple[float, float, float]] = []  # (t0, t1, level FS)
        self.hand_cells: list[tuple[int, float, float, float]] = []  # cell, t0, dur, grams
        self.hand_plates: list[tuple[int, float, float, float]] = []  # plate, t0, dur, grams
        # Hands rubbing card: (t0, t1, rms FS, nearest level, on the walls (True) or a plate).
        self.scrapes: list[tuple[float, float, float, int, bool]] = []
        self.extra_impacts: list[Impact] = []
        self.game: dict[str, Any] | None = None
        self.end_margin = 0.6

    def try_throw(self, colour: str, t: float, cube: int | None = None) -> Flight | None:
        """Throw a cube at ``t`` unless it (or one it knocks down) would rest after the end."""
        if t < QUIET_UNTIL_S or t > self.duration - 1.5:
            return None
        snap = self.shaft.snapshot()
        fl = self.shaft.throw(colour, t, cube)
        if max(f.t_rest for f in all_flights(fl)) > self.duration - self.end_margin:
            self.shaft.restore(snap)
            return None
        self.throws.append((fl, colour))
        return fl

    def add_talk(self, t0: float, t1: float, level: float) -> None:
        rng = self.rng
        t = t0 + rng.uniform(0.0, 2.0)
        while t < t1:
            dur = rng.uniform(0.8, 4.0)
            self.talk.append((t, min(t + dur, t1), level * rng.uniform(0.3, 1.0)))
            t += dur + rng.uniform(0.3, 4.0)

    def hand_bumps(self, cells: range | list[int], t0: float, t1: float, grams: float) -> None:
        """Hands on the tower's walls: a few pushes on each cell between t0 and t1."""
        rng = self.rng
        for cell in cells:
            share = rng.uniform(0.1, 1.0)
            for _ in range(int(rng.integers(1, 4))):
                dur = rng.uniform(0.15, 0.6)
                start = rng.uniform(t0, max(t0, t1 - dur))
                self.hand_cells.append((cell, start, dur, grams * share * rng.uniform(-0.3, 1.0)))


def in_a_series(rng: np.random.Generator) -> int:
    return int(rng.integers(3, 11))


def build_timeline(tower: Tower, scenario: str, duration: float) -> Timeline:
    """The scripted recording: what is thrown when, and everything else that happens."""
    rng = np.random.default_rng([tower.seed, SCENARIOS.index(scenario) + 1, 0x48])
    tl = Timeline(tower, rng, duration)
    if scenario in ("single", "noisy"):
        t = QUIET_UNTIL_S + rng.uniform(0.0, 2.0)
        while tl.try_throw("red", t) is not None:
            t += rng.uniform(3.0, 8.0)
        if scenario == "noisy":
            t = QUIET_UNTIL_S + rng.uniform(0.5, 6.0)
            while t < duration - 1.0:
                tl.knocks.append((t, float(rng.uniform(0.3, 3.0))))
                t += rng.uniform(4.0, 15.0)
            tl.add_talk(2.5, duration, float(rng.uniform(0.002, 0.012)))
    elif scenario == "rapid":
        t = QUIET_UNTIL_S + rng.uniform(0.0, 1.0)
        done = False
        while not done:
            for _ in range(in_a_series(rng)):
                if tl.try_throw("red", t) is None:
                    done = True
                    break
                t += rng.uniform(0.3, 0.8)
            t += rng.uniform(2.5, 6.0)
    elif scenario == "game":
        play_game(tl)
        tl.add_talk(2.5, duration, float(rng.uniform(0.001, 0.006)))
    else:
        raise ValueError(f"unknown scenario {scenario!r}")
    return tl


def play_game(tl: Timeline) -> None:
    """A game of Mord im Arosa (rules/004_*.txt) until it ends or the recording does."""
    rng, shaft, tw = tl.rng, tl.shaft, tl.tw
    players = [str(c) for c in rng.choice(COLOURS, int(rng.integers(3, 6)), replace=False)]
    supply = dict.fromkeys(players, 20)
    sheet = {c: [0] * N_LEVELS for c in players}
    crime: set[int] = set()
    log: list[str] = []
    tl.game = {"players": players, "log": log}

    def throw_all(colours: list[tuple[str, int | None]], now: float) -> tuple[float, bool]:
        for colour, cube in colours:
            fl = tl.try_throw(colour, now, cube)
            if fl is None:
                return now, False
            log.append(f"throw {colour} -> {fl.level}")
            now = max(f.t_rest for f in all_flights(fl)) + rng.uniform(1.0, 3.0)
        return now, True

    def over() -> bool:
        return any(sum(s) >= 10 for s in sheet.values()) or any(v <= 0 for v in supply.values())

    now = QUIET_UNTIL_S + rng.uniform(0.0, 1.5)
    prologue: list[tuple[str, int | None]] = [("red", None), ("red", None)]
    for p in players:
        prologue += [(p, None), (p, None)]
        supply[p] -= 2
    now, ok = throw_all(prologue, now)
    act, found, turn = 1, 0, 0
    while ok and not over():
        inv = players[turn % len(players)]
        lying = {lv: shaft.on_plate(lv, now) for lv in range(N_LEVELS)}
        action = "inspect"
        if act == 2:
            action = "cover" if sum(sheet[inv]) and rng.random() < 0.3 else "suspect"
        weights = np.array([1.0 + 3.0 * sum(shaft.colour[p.cube] == "red" for p in lying[lv])
                            + 0.3 * len(lying[lv]) for lv in range(N_LEVELS)])
        k = int(rng.choice(N_LEVELS, p=weights / weights.sum()))
        # The turn's times, decided before anything is committed.
        t_grab = now + rng.uniform(2.0, 6.0)
        t_lift = t_grab + rng.uniform(0.4, 1.0)
        t_look = t_lift + rng.uniform(1.5, 4.0)
        cubes = [lying[k][i] for i in rng.permutation(len(lying[k]))]
        grabs: list[tuple[float, list[Placement]]] = []
        t = t_look
        while cubes:
            n = int(rng.choice([1, 2, 3], p=[0.5, 0.35, 0.15]))
            grabs.append((t, cubes[:n]))
            cubes = cubes[n:]
            t += rng.uniform(0.6, 1.6)
        t_close = (grabs[-1][0] if grabs else t_look) + rng.uniform(0.8, 2.0)
        t_release = t_close + rng.uniform(0.2, 0.6)
        if t_release > tl.duration - 1.5:
            break
        lift = Lift(k, t_grab, t_lift, t_close, t_release)
        for ch in range(k + 1, N_LEVELS):
            lift.t_off[ch] = t_lift + rng.uniform(0.0, 0.02)
            lift.t_on[ch] = t_close + rng.uniform(*tw.reconnect_delay)
        tl.lifts.append(lift)
        log.append(f"{inv} {action} floor {k}")
        tl.hand_bumps(range(N_LEVELS), t_grab, t_lift, tw.cube_mass_g * rng.uniform(0.3, 4.0))
        tl.hand_bumps(range(k + 1), t_close - 0.5, t_release,
                      tw.cube_mass_g * rng.uniform(0.3, 4.0))
        tl.scrapes.append((t_grab, t_lift + rng.uniform(0.2, 0.5), rng.uniform(0.005, 0.03), k,
                           True))
        tl.scrapes.append((t_close - 0.4, t_close + 0.2, rng.uniform(0.005, 0.03), k, True))
        tl.extra_impacts.append(Impact(t_lift, k, J_REF * rng.uniform(0.1, 0.5), "seat"))
        tl.extra_impacts.append(Impact(t_close, k, J_REF * rng.uniform(0.3, 2.0), "seat"))
        # Cubes near the hole of plate k+1 may fall out of the lifted modules onto the table.
        spilled: list[tuple[str, int | None]] = []
        if k + 1 < N_LEVELS:
            for up in shaft.on_plate(k + 1, t_lift):
                if shaft._s(k + 1, up.x, up.y, shaft._c_eff()) > -0.7 and rng.random() < 0.3:
                    t_sp = rng.uniform(t_lift + 0.2, max(t_lift + 0.3, t_close - 0.2))
                    up.t_off = t_sp
                    tl.spills.append({"t": t_sp, "from_floor": k + 1})
                    tl.taps.append((t_sp + rng.uniform(0.05, 0.15), float(rng.uniform(0.02, 0.08))))
                    spilled.append((shaft.colour[up.cube], up.cube))
        # The investigator takes every cube out of the exposed level.
        for t_g, group in grabs:
            for taken in group:
                taken.t_off = t_g
            tl.removals.append({"t": t_g, "floor": k, "cubes": len(group)})
            press = rng.uniform(0.15, 0.5)
            tl.hand_plates.append((k, t_g - press, press + rng.uniform(0.0, 0.1),
                                   float(rng.uniform(3.0, 30.0))))
            tl.scrapes.append((t_g - press - 0.1, t_g + 0.1, rng.uniform(0.005, 0.04), k, False))
        found_here = [p for p in lying[k] if shaft.colour[p.cube] == "red"]
        clues = [p for p in lying[k] if shaft.colour[p.cube] != "red"]
        counts = {c: sum(shaft.colour[p.cube] == c for p in clues) for c in players}
        penalty = 0
        if act == 1:
            if found_here:
                crime.add(k)
                found += len(found_here)
                log.append(f"  victims found on floor {k}: {len(found_here)}")
                for c in players:
                    if c != inv and counts[c]:
                        moved = min(counts[c], supply[c])
                        sheet[c][k] += moved
                        supply[c] -= moved
            else:
                penalty = 1
        elif action == "suspect":
            others = [c for c in players if c != inv]
            suspects = [str(c) for c in rng.choice(others, int(rng.integers(1, 3)), replace=False)]
            if k == 0 and counts[inv] == 0:
                penalty = len(suspects)
            else:
                for c in suspects:
                    if counts[c]:
                        moved = min(counts[c], supply[c])
                        sheet[c][k] += moved
                        supply[c] -= moved
                    else:
                        penalty += 1
            log.append(f"  suspects {suspects}")
        else:
            back = min(counts[inv], sheet[inv][k])
            sheet[inv][k] -= back
            supply[inv] += back
            penalty = 0 if counts[inv] else 1
        if over():
            break
        back_in: list[tuple[str, int | None]] = [
            (shaft.colour[clues[i].cube], clues[i].cube) for i in rng.permutation(len(clues))]
        back_in += spilled
        now = t_release + rng.uniform(1.0, 3.0)
        now, ok = throw_all(back_in, now)
        for _ in range(penalty if ok else 0):
            supply[inv] -= 1
            now, ok = throw_all([(inv, None)], now)
            if not ok or over():
                ok = False
                break
        if act == 1 and found >= 2:
            act = 2
            turn = players.index(inv) + 1
        else:
            turn += 1
    tl.game.update({"crime_scenes": sorted(crime), "sheet": sheet, "supply": supply})


# ----------------------------------------------------------------------------------------------
# Sensors: the force on each load cell, the HX711s, the piezo discs.


def bspline4(u: F64) -> F64:
    """The HX711 output weights: a cubic B-spline over the last 4 conversion periods."""
    out = np.zeros_like(u)
    for lo, poly in ((0, lambda v: v ** 3 / 6),
                     (1, lambda v: (-3 * v ** 3 + 12 * v ** 2 - 12 * v + 4) / 6),
                     (2, lambda v: (3 * v ** 3 - 24 * v ** 2 + 60 * v - 44) / 6),
                     (3, lambda v: (4 - v) ** 3 / 6)):
        m = (u >= lo) & (u < lo + 1)
        out[m] = poly(u[m])
    return out


def hx711_filter(force: F64, t0: float, fs: float, times: F64, period: float) -> F64:
    """What an HX711 converting every ``period`` reports at ``times``: the force (on a grid
    starting at ``t0``, rate ``fs``) weighted by :func:`bspline4` over the last 4 periods.

    A step therefore moves at most 4 readings; every reading made 4 periods or more
    after it shows the new value in full.
    """
    nw = int(math.ceil(4 * period * fs)) + 1
    i_end = np.floor((times - t0) * fs).astype(np.int64)
    idx = i_end[:, None] - np.arange(nw)[None, :]
    u = (times[:, None] - (t0 + idx / fs)) / period
    w = bspline4(u)
    return np.asarray((w * force[np.clip(idx, 0, force.size - 1)]).sum(1) / w.sum(1))


def share_matrix(tw: Tower, lifted: int | None) -> F64:
    """Cell c's share of plate L's weight: the load path (the rest goes down the card) split
    between cell L and the neighbours (plates share card walls with them)."""
    up, dn = tw.share_up.copy(), tw.share_dn.copy()
    if lifted is not None and lifted + 1 < N_LEVELS:
        up[lifted] = 0.0
        dn[lifted + 1] = 0.0
    s = np.diag(1.0 - up - dn)
    for lv in range(N_LEVELS):
        if lv + 1 < N_LEVELS:
            s[lv + 1, lv] = up[lv]
        if lv > 0:
            s[lv - 1, lv] = dn[lv]
    return np.asarray(s * tw.load_path[None, :])


class LoadSide:
    """The force on each cell (grams, on a 2 kHz grid) and every HX711 conversion."""

    T0 = -1.0  # grid start, s

    def __init__(self, tl: Timeline, rng: np.random.Generator) -> None:
        self.tl, self.tw, self.rng = tl, tl.tw, rng
        self.n = int((tl.duration + 1.5) * FS_GRID)
        self.t = self.T0 + np.arange(self.n) / FS_GRID
        self.force = np.zeros((N_LEVELS, self.n))
        self._static()
        self._impacts()
        self._hands()
        self._knocks()
        self._drift()

    def _idx(self, t: float) -> int:
        if not math.isfinite(t):
            return 0 if t < 0 else self.n
        return int(np.clip(math.ceil((t - self.T0) * FS_GRID), 0, self.n))

    def _static(self) -> None:
        tl, tw, sh = self.tl, self.tw, self.tl.shaft
        edges: list[tuple[float, int, float]] = []
        for p in sh.placements:
            edges.append((p.t_on, p.level, sh.mass[p.cube]))
            if math.isfinite(p.t_off):
                edges.append((p.t_off, p.level, -sh.mass[p.cube]))
        moves = {x for lf in tl.lifts for x in (lf.t_lift, lf.t_close)}
        times = sorted({e[0] for e in edges} | moves | {self.T0})
        edges.sort()
        plate = np.zeros(N_LEVELS)
        ei = 0
        for a, b in zip(times, [*times[1:], math.inf], strict=True):
            while ei < len(edges) and edges[ei][0] <= a:
                plate[edges[ei][1]] += edges[ei][2]
                ei += 1
            lifted = next((lf.exposed for lf in tl.lifts if lf.t_lift <= a < lf.t_close), None)
            cell = share_matrix(tw, lifted) @ plate
            if lifted is not None:
                cell[: lifted + 1] += tw.stack_coupling[: lifted + 1] * tw.cube_mass_g
            self.force[:, self._idx(a):self._idx(b)] = cell[:, None]
        for lv, t0, dur, grams in tl.hand_plates:
            i0, i1 = self._idx(t0), self._idx(t0 + dur)
            bump = grams * np.sin(np.pi * np.arange(i1 - i0) / max(1, i1 - i0))
            self.force[:, i0:i1] += share_matrix(tw, lv)[:, lv : lv + 1] * bump[None, :]

    def _impulse(self, cell: int, t: float, area: float) -> None:
        """A force of ``area`` gram-seconds through plate ``cell``'s mount (its ringing mode)."""
        tw = self.tw
        wn = 2 * math.pi * float(tw.plate_f[cell])
        z = float(tw.plate_zeta[cell])
        wd = wn * math.sqrt(1 - z * z)
        i0 = self._idx(t)
        nw = min(int(5 / (z * wn) * FS_GRID) + 2, self.n - i0)
        if nw <= 0:
            return
        tau = self.t[i0:i0 + nw] - t
        h = np.exp(-z * wn * tau) * np.sin(wd * tau)
        norm = h.sum() / FS_GRID
        if norm > 0:
            self.force[cell, i0:i0 + nw] += area * h / norm

    def _impacts(self) -> None:
        tw = self.tw
        for imp in [i for fl, _ in self.tl.throws for f in all_flights(fl) for i in f.impacts] \
                + self.tl.extra_impacts:
            area = imp.j / GF
            if imp.kind == "seat":
                area *= tw.jolt
            elif imp.kind == "wall":
                area *= 0.5
            self._impulse(imp.level, imp.t, area)
            for nb in (imp.level - 1, imp.level + 1):
                if 0 <= nb < N_LEVELS:
                    self._impulse(nb, imp.t, area * tw.jolt)

    def _hands(self) -> None:
        for cell, t0, dur, grams in self.tl.hand_cells:
            i0, i1 = self._idx(t0), self._idx(t0 + dur)
            self.force[cell, i0:i1] += grams * np.sin(np.pi * np.arange(i1 - i0) / max(1, i1 - i0))

    def _knocks(self) -> None:
        tw, rng = self.tw, self.rng
        for t, gee in self.tl.knocks + self.tl.taps:
            f = rng.uniform(20.0, 60.0)
            tau = rng.uniform(0.015, 0.04)
            i0 = self._idx(t)
            nw = min(int(6 * tau * FS_GRID), self.n - i0)
            x = self.t[i0:i0 + nw] - t
            shape = np.exp(-x / tau) * np.sin(2 * np.pi * f * x)
            for cell in range(N_LEVELS):
                amp = tw.plate_mass_g[cell] * gee * rng.uniform(0.6, 1.4)
                self.force[cell, i0:i0 + nw] += amp * shape

    def _drift(self) -> None:
        tw, rng = self.tw, self.rng
        n10 = int((self.tl.duration + 1.5) * 10) + 2
        t10 = self.T0 + np.arange(n10) / 10
        for cell in range(N_LEVELS):
            walk = np.cumsum(rng.normal(0.0, math.sqrt(0.1), n10))
            walk -= walk[int(-self.T0 * 10)]
            self.force[cell] += np.interp(self.t, t10, walk) * tw.drift_cube_per_sqrt_s[cell] \
                * tw.cube_mass_g

    def conversions(self, cell: int) -> tuple[F64, I64]:
        """Times and counts of every conversion of cell ``cell``'s HX711."""
        tw, rng, tl = self.tw, self.rng, self.tl
        period = 1.0 / float(tw.conv_rate[cell])
        powered: list[tuple[float, float]] = []
        start = float(tw.conv_phase[cell]) - period * math.ceil(0.5 / period)
        for lf in tl.lifts:
            if cell in lf.t_off:
                powered.append((start, lf.t_off[cell]))
                start = lf.t_on[cell] + 4 * period + rng.uniform(0.0, 0.1) * period
        powered.append((start, tl.duration + 0.2))
        times = np.concatenate([np.arange(a, b, period) for a, b in powered if b > a])
        grams = hx711_filter(self.force[cell], self.T0, FS_GRID, times, period)
        counts = tw.offset[cell] + tw.sign[cell] * tw.counts_per_g[cell] * grams \
            + rng.normal(0.0, float(tw.noise_counts[cell]), times.size)
        return times, np.clip(np.round(counts), S24_MIN, S24_MAX).astype(np.int64)


def disconnected(tl: Timeline, cell: int, t: F64) -> npt.NDArray[np.bool_]:
    """Whether channel ``cell``'s module is off the tower (contacts open) at each time."""
    out = np.zeros(t.shape, bool)
    for lf in tl.lifts:
        if cell in lf.t_off:
            out |= (t >= lf.t_off[cell]) & (t < lf.t_on[cell])
    return out


MODE_WEIGHTS = {"flat": (1.0, 1.0), "bounce": (1.0, 1.0), "edge": (0.4, 1.3),
                "wall": (0.2, 0.6), "seat": (1.5, 0.5)}


class PiezoSide:
    """The eight disc signals, sampled by the ADC (full-scale fractions, then counts)."""

    def __init__(self, tl: Timeline, rng: np.random.Generator, scenario: str) -> None:
        self.tl, self.tw, self.rng = tl, tl.tw, rng
        tw = self.tw
        self.fs = float(tw.piezo_rate)
        self.n = int(tl.duration * self.fs)
        self.x = np.zeros((N_LEVELS, self.n))
        for fl, _ in tl.throws:
            for f in all_flights(fl):
                for imp in f.impacts:
                    self._impact(imp)
        for imp in tl.extra_impacts:
            self._impact(imp)
        for t, gee in tl.knocks + tl.taps:
            self._table(t, gee)
        self._talk()
        self._scrapes()
        b, a = signal.butter(1, tw.front_hp / (self.fs / 2), "highpass")
        self.x = signal.lfilter(b, a, self.x, axis=1)
        ts = np.arange(self.n) / self.fs
        hum = tw.hum + (rng.uniform(0.002, 0.008, N_LEVELS) if scenario == "noisy" else 0.0)
        for ch in range(N_LEVELS):
            tc = ts + ch * tw.stagger
            self.x[ch] += hum[ch] * (np.sin(2 * np.pi * tw.mains * tc + tw.hum_phase[ch])
                                     + 0.3 * np.sin(6 * np.pi * tw.mains * tc))
        self.x += rng.normal(0.0, tw.adc_noise, self.x.shape)
        self._disconnections(ts)
        full = 1 << tw.adc_bits
        mid = (full // 2) * (1 + tw.pz_bias)
        self.samples = np.clip(np.round(mid[:, None] + self.x * full), 0, full - 1) \
            .astype(np.uint16).T.copy()  # (sets, channels)

    def _add(self, ch: int, t0: float, dur: float, fn: Any) -> None:
        i0 = max(0, math.ceil((t0 - ch * self.tw.stagger) * self.fs))
        i1 = min(self.n, i0 + int(dur * self.fs))
        if i1 > i0:
            tau = np.arange(i0, i1) / self.fs + ch * self.tw.stagger - t0
            self.x[ch, i0:i1] += fn(tau)

    def _impact(self, imp: Impact) -> None:
        tw = self.tw
        lv = imp.level
        thump_w, mode_w = MODE_WEIGHTS[imp.kind]
        f = np.concatenate([[tw.plate_f[lv]], tw.modes_f[lv]])
        tau = np.concatenate([[1 / (tw.plate_zeta[lv] * 2 * math.pi * tw.plate_f[lv])],
                              tw.modes_tau[lv]])
        amp = np.concatenate([[0.5 * thump_w], tw.modes_amp[lv] * mode_w])
        amp = amp / amp.sum() / np.sqrt(1 + (f / tw.front_lp) ** 2)
        phase = np.concatenate([[0.0], tw.modes_phase[lv]])
        base = tw.pz_sens * imp.j / J_REF
        dur = min(0.4, 5 * float(tau.max()))
        for ch in range(max(0, lv - 3), min(N_LEVELS, lv + 4)):
            d = abs(ch - lv)
            gain = base * tw.disc_gain[ch] * float(np.prod(tw.pz_cross[min(ch, lv):max(ch, lv)]))
            if gain < 0.1 * tw.adc_noise:
                continue
            a = gain * amp * (1 + (f / tw.card_fc) ** 2) ** (-d / 2)

            def ring(x: F64, a: F64 = a) -> F64:
                return np.sum(a[:, None] * np.exp(-x[None, :] / tau[:, None])
                              * np.sin(2 * np.pi * f[:, None] * x[None, :] + phase[:, None]), 0)
            self._add(ch, imp.t + d * tw.card_delay, dur, ring)

    def _table(self, t: float, gee: float) -> None:
        tw, rng = self.tw, self.rng
        f = rng.uniform(60.0, 250.0, 2)
        tau = rng.uniform(0.01, 0.04, 2)
        for ch in range(N_LEVELS):
            a = rng.uniform(0.2, 0.9) * gee / 1.5 * tw.disc_gain[ch] * tw.table_decay ** ch
            fm, tm = tw.modes_f[ch], tw.modes_tau[ch]

            def knock(x: F64, a: float = a, fm: F64 = fm, tm: F64 = tm) -> F64:
                low = np.sum(np.exp(-x[None, :] / tau[:, None])
                             * np.sin(2 * np.pi * f[:, None] * x[None, :]), 0) / 2
                high = np.sum(np.exp(-x[None, :] / tm[:, None])
                              * np.sin(2 * np.pi * fm[:, None] * x[None, :]), 0) / 3
                return np.asarray(a * (low + 0.3 * high))
            self._add(ch, t, 0.25, knock)

    def _band_noise(self, n: int, lo: float, hi: float) -> F64:
        hi = min(hi, 0.45 * self.fs)
        sos = signal.butter(2, [lo / (self.fs / 2), hi / (self.fs / 2)], "bandpass", output="sos")
        out = signal.sosfilt(sos, self.rng.normal(0.0, 1.0, n))
        return np.asarray(out / (out.std() or 1.0))

    def _talk(self) -> None:
        if not self.tl.talk:
            return
        tw, rng = self.tw, self.rng
        voice = self._band_noise(self.n, 150.0, 2500.0)
        env = np.zeros(self.n)
        t = np.arange(self.n) / self.fs
        for t0, t1, level in self.tl.talk:
            i0, i1 = int(t0 * self.fs), min(self.n, int(t1 * self.fs))
            syl = rng.uniform(3.0, 6.0)
            env[i0:i1] = level * (0.3 + 0.7 * np.abs(np.sin(np.pi * syl * t[i0:i1]
                                                            + rng.uniform(0, np.pi))))
        gains = tw.disc_gain * rng.uniform(0.7, 1.4, N_LEVELS)
        self.x += gains[:, None] * (env * voice)[None, :]

    def _scrapes(self) -> None:
        tw = self.tw
        for t0, t1, level, near, walls in self.tl.scrapes:
            i0, i1 = max(0, int(t0 * self.fs)), min(self.n, int(t1 * self.fs))
            if i1 <= i0:
                continue
            burst = self._band_noise(i1 - i0, 80.0, 1500.0) * np.hanning(i1 - i0)
            for ch in range(N_LEVELS):
                if walls:  # hands around the modules: every disc hears it
                    spread = 0.7 ** abs(ch - near)
                else:  # fingers on one plate: the card carries it to the others
                    spread = float(np.prod(tw.pz_cross[min(ch, near):max(ch, near)]))
                self.x[ch, i0:i1] += level * tw.disc_gain[ch] * spread * burst

    def _disconnections(self, t: F64) -> None:
        tw, rng = self.tw, self.rng
        for ch in range(N_LEVELS):
            off = disconnected(self.tl, ch, t + ch * tw.stagger)
            if not off.any():
                continue
            k = int(off.sum())
            if tw.pz_float:
                wander = np.cumsum(rng.normal(0.0, 0.002, k))
                hum = rng.uniform(0.01, 0.05) * np.sin(2 * np.pi * tw.mains * t[off])
                self.x[ch, off] = wander + hum + rng.normal(0.0, tw.adc_noise, k)
            else:
                self.x[ch, off] = rng.normal(0.0, tw.adc_noise, k)
            # Contacts opening and closing: the coupling capacitor's step, decaying.
            for lf in self.tl.lifts:
                if ch in lf.t_off:
                    for t_sw in (lf.t_off[ch], lf.t_on[ch]):
                        step = rng.choice([-1.0, 1.0]) * rng.uniform(0.05, 0.3)
                        tau_hp = 1 / (2 * math.pi * tw.front_hp)

                        def pop(x: F64, step: float = step, tau_hp: float = tau_hp) -> F64:
                            return np.asarray(step * np.exp(-x / tau_hp))
                        self._add(ch, t_sw, min(1.0, 5 * tau_hp), pop)


# ----------------------------------------------------------------------------------------------
# The firmware: what it sends, when, and the bytes.


@dataclass
class Group:
    """Messages of one type and body length, in no particular order."""

    mtype: int
    bodies: U8
    send: F64
    dev_us: I64 | None = None  # unwrapped device time of PIEZO and LOAD messages


def u32_bytes(values: I64) -> U8:
    return (np.asarray(values, np.int64) % U32).astype("<u4").view(np.uint8).reshape(-1, 4)


class Firmware:
    """The AVR's streams for one timeline: PIEZO, LOAD, STATUS and the rest."""

    def __init__(self, tl: Timeline, load: LoadSide, pz: PiezoSide,
                 rng: np.random.Generator) -> None:
        self.tl, self.tw, self.rng = tl, tl.tw, rng
        self.load, self.pz = load, pz
        self.groups: list[Group] = []
        self.timeouts: list[float] = []
        self.load_t_read: F64 = np.zeros(0)
        self.load_valid: I64 = np.zeros(0, np.int64)
        self.load_values: I64 = np.zeros((0, N_LEVELS), np.int64)
        self.conv = [load.conversions(c) for c in range(N_LEVELS)]
        self._hello()
        self._piezo()
        if self.tw.cadence == "poll":
            self._poll()
        else:
            self._rounds()
        self._status()
        self._others()

    def dev_us(self, t: F64 | float, lat: I64 | int = 0) -> I64:
        return self.tw.t_start_us + np.round(np.asarray(t) * 1e6).astype(np.int64) + lat

    def _add(self, mtype: int, bodies: U8, send: F64, dev_us: I64 | None = None) -> None:
        if len(send):
            self.groups.append(Group(mtype, np.ascontiguousarray(bodies, np.uint8),
                                     np.asarray(send, float), dev_us))

    def _single(self, mtype: int, body: bytes, t: float) -> None:
        self._add(mtype, np.frombuffer(body, np.uint8).reshape(1, -1), np.array([t]))

    def _hello(self) -> None:
        tw = self.tw
        t = -self.rng.uniform(0.002, 0.02)
        body = struct.pack("<BBBBBBHHB8s", 1, *tw.fw, N_LEVELS, N_LEVELS, tw.piezo_rate,
                           tw.load_rate, tw.adc_bits, tw.device_id)
        self._single(HELLO, body, t)
        if tw.start_mode == "attach":  # the host asked GET_INFO on opening the port
            self._single(ACK, struct.pack("<BHB", GET_INFO, int(self.rng.integers(0, 65536)), 0),
                         t + 0.0001)

    def _piezo(self) -> None:
        tw, rng, pz = self.tw, self.rng, self.pz
        n_sets = pz.n
        if tw.sets_varying:
            sizes = rng.integers(tw.sets_lo, tw.sets_hi + 1, n_sets // tw.sets_lo + 2)
        else:
            sizes = np.full(n_sets // tw.sets_lo + 1, tw.sets_lo)
        ends = np.cumsum(sizes)
        keep = ends <= n_sets
        sizes, ends = sizes[keep], ends[keep]
        starts = ends - sizes
        for size in np.unique(sizes).tolist():
            sel = starts[sizes == size]
            block = pz.samples[sel[:, None] + np.arange(size)[None, :]]  # (m, size, 8)
            lat = rng.integers(0, tw.latency_max_us + 1, sel.size)
            dev = self.dev_us(sel / pz.fs, lat)
            body = np.concatenate([u32_bytes(dev), np.full((sel.size, 1), size, np.uint8),
                                   block.astype("<u2").view(np.uint8).reshape(sel.size, -1)],
                                  axis=1)
            send = (sel + size - 1) / pz.fs + rng.uniform(20e-6, 150e-6, sel.size)
            self._add(PIEZO, body, send, dev)

    def _emit_load(self, t_read: F64, valid: I64, values: I64) -> None:
        tw, rng = self.tw, self.rng
        lat = rng.integers(0, tw.latency_max_us + 1, t_read.size)
        dev = self.dev_us(t_read, lat)
        raw = (values & 0xFFFFFF).astype("<u4").view(np.uint8).reshape(-1, N_LEVELS, 4)[:, :, :3]
        body = np.concatenate([u32_bytes(dev), valid.astype(np.uint8)[:, None],
                               raw.reshape(t_read.size, -1)], axis=1)
        self.load_t_read, self.load_valid, self.load_values = t_read, valid, values
        self._add(LOAD, body, t_read + rng.uniform(100e-6, 400e-6, t_read.size), dev)

    def _poll(self) -> None:
        """A timer reads every HX711 whose data is ready; the others are sent as not valid."""
        tw, tl = self.tw, self.tl
        rate = tw.load_rate * tw.poll_factor
        polls = (tw.poll_phase + np.arange(int(tl.duration * rate) + 1)) / rate
        polls = polls[polls < tl.duration]
        valid = np.zeros(polls.size, np.int64)
        values = np.zeros((polls.size, N_LEVELS), np.int64)
        for cell, (times, counts) in enumerate(self.conv):
            j = np.searchsorted(times, polls, "right") - 1
            fresh = (j > np.concatenate([[-1], j[:-1]])) & (j >= 0) \
                & ~disconnected(tl, cell, polls)
            valid |= fresh.astype(np.int64) << cell
            values[:, cell] = np.where(fresh, counts[np.maximum(j, 0)], 0)
        for lf in tl.lifts:
            self.timeouts += [lf.t_off[c] + 3.0 / tw.load_rate for c in lf.t_off]
        self._emit_load(polls, valid, values)

    def _rounds(self) -> None:
        """Classic: wait until every HX711 it knows has new data, read all, send one LOAD."""
        tw, tl = self.tw, self.tl
        times = [c[0].tolist() for c in self.conv]
        gaps = [[(lf.t_off[c], lf.t_on[c]) for lf in tl.lifts if c in lf.t_off]
                for c in range(N_LEVELS)]
        timeout = 2.5 / tw.load_rate
        present = set(range(N_LEVELS))
        last = [bisect.bisect_right(times[c], 0.0) - 1 for c in range(N_LEVELS)]
        t_prev = 0.0
        out_t: list[float] = []
        out_valid: list[int] = []
        out_idx: list[list[int]] = []
        while True:
            cand = {c: times[c][last[c] + 1] if last[c] + 1 < len(times[c]) else math.inf
                    for c in present}
            t_r = max(cand.values(), default=t_prev + timeout)
            if t_r > t_prev + timeout:
                for c in [c for c in present if cand[c] > t_prev + timeout]:
                    present.discard(c)
                    self.timeouts.append(t_prev + timeout)
                t_r = max([cand[c] for c in present], default=t_prev + timeout)
            if t_r >= tl.duration:
                break
            valid = 0
            idx = [-1] * N_LEVELS
            for c in range(N_LEVELS):
                j = bisect.bisect_right(times[c], t_r) - 1
                if j > last[c] and not any(a <= t_r < b for a, b in gaps[c]):
                    valid |= 1 << c
                    idx[c] = j
                    present.add(c)
                last[c] = max(last[c], j)
            out_t.append(t_r + 20e-6)
            out_valid.append(valid)
            out_idx.append(idx)
            t_prev = t_r
        idx_arr = np.array(out_idx, np.int64).reshape(-1, N_LEVELS)
        values = np.zeros(idx_arr.shape, np.int64)
        for c in range(N_LEVELS):
            ok = idx_arr[:, c] >= 0
            values[ok, c] = self.conv[c][1][idx_arr[ok, c]]
        self._emit_load(np.array(out_t), np.array(out_valid, np.int64), values)

    def _status(self) -> None:
        tw, rng, tl = self.tw, self.rng, self.tl
        t = tw.status_phase + np.arange(int(tl.duration) + 1)
        t = t[t < tl.duration]
        uptime = ((tw.boots_wraps * U32 + self.dev_us(t)) // 1000) % U32
        timeouts = np.searchsorted(np.sort(np.array(self.timeouts)), t, "right") % 65536
        cpu = np.clip(np.round(tw.cpu_load + rng.normal(0.0, 3.0, t.size)), 0, 100)
        body = np.concatenate([
            u32_bytes(uptime), np.zeros((t.size, 4), np.uint8),
            timeouts.astype("<u2").view(np.uint8).reshape(-1, 2),
            cpu.astype(np.uint8)[:, None], np.zeros((t.size, 1), np.uint8)], axis=1)
        self._add(STATUS, body, t)

    def _poisson(self, per_s: float) -> F64:
        if per_s <= 0:
            return np.zeros(0)
        gaps = self.rng.exponential(1.0 / per_s, int(self.tl.duration * per_s * 2) + 10)
        t = np.cumsum(gaps)
        return t[t < self.tl.duration]

    def _others(self) -> None:
        tw, rng = self.tw, self.rng
        for t in self._poisson(tw.pong_per_min / 60).tolist():
            tus = int(self.dev_us(t)) % U32
            self._single(PONG, struct.pack("<II", int(rng.integers(0, U32)), tus), t)
        for t in self._poisson(tw.ack_per_min / 60).tolist():
            self._single(ACK, struct.pack("<BHB", START, int(rng.integers(0, 65536)),
                                          int(rng.choice([0, 3]))), t)
        for mtype, lo, hi, per_s in tw.ext_types:
            for t in self._poisson(per_s).tolist():
                body = rng.integers(0, 256, int(rng.integers(lo, hi + 1))).astype(np.uint8)
                self._add(mtype, body.reshape(1, -1), np.array([t]))

    def prefix(self) -> bytes:
        """Bytes before the first whole frame: the tail of a frame sent before the port opened."""
        if not self.tw.junk_prefix:
            return b""
        rng = self.rng
        body = rng.integers(0, 256, int(rng.integers(20, 200))).astype(np.uint8).tobytes()
        enc = cobs_encode(bytes([PIEZO, 0x34, 0x12]) + body + b"\x99\x99")
        return enc[int(rng.integers(1, len(enc) - 2)):] + b"\x00"

    def wire(self) -> tuple[bytes, int]:
        """The byte stream, and the unwrapped t_us of the first PIEZO or LOAD message in it."""
        send = np.concatenate([g.send for g in self.groups])
        order = np.argsort(send, kind="stable")
        rank = np.empty(send.size, np.int64)
        rank[order] = np.arange(send.size)
        lengths = np.concatenate([np.full(g.send.size, g.bodies.shape[1] + 7) for g in self.groups])
        offsets = np.concatenate([[0], np.cumsum(lengths[order])[:-1]])
        flat = np.zeros(int(lengths.sum()), np.uint8)
        first_data = (math.inf, 0)
        start = 0
        for g in self.groups:
            n = g.send.size
            r = rank[start:start + n]
            seq = (self.tw.seq0 + r) % 65536
            rows = np.concatenate([np.full((n, 1), g.mtype, np.uint8),
                                   seq.astype("<u2").view(np.uint8).reshape(n, 2), g.bodies,
                                   np.zeros((n, 2), np.uint8)], axis=1)
            crc = crc16_rows(rows[:, :-2])
            rows[:, -2] = crc & 0xFF
            rows[:, -1] = crc >> 8
            enc = cobs_frames(rows)
            at = offsets[r][:, None] + np.arange(enc.shape[1])[None, :]
            flat[at] = enc
            if g.dev_us is not None:
                i = int(np.argmin(r))
                if r[i] < first_data[0]:
                    first_data = (int(r[i]), int(g.dev_us[i]))
            start += n
        return self.prefix() + flat.tobytes(), first_data[1]


# ----------------------------------------------------------------------------------------------
# One recording and its truth.


def make_recording(seed: int, scenario: str, duration: float, out_dir: Path
                   ) -> tuple[Path, Path]:
    """Write ``{scenario}_t{seed}.bin`` and its ``.truth.json`` into ``out_dir``."""
    tower = Tower(seed)
    tl = build_timeline(tower, scenario, duration)
    rng = np.random.default_rng([seed, SCENARIOS.index(scenario) + 1, 0x49])
    load = LoadSide(tl, rng)
    pz = PiezoSide(tl, rng, scenario)
    fw = Firmware(tl, load, pz, rng)
    data, first_us = fw.wire()
    offset = (first_us - tower.t_start_us) / 1e6  # physics time of stream time 0

    def st(t: float) -> float:
        return round(t - offset, 6)

    landings: list[dict[str, Any]] = []
    knockdowns: list[dict[str, Any]] = []
    for throw, _ in tl.throws:
        for f in all_flights(throw):
            landings.append({
                "t": st(f.t_rest), "floor": f.level, "cubes": 1, "knocked": f.knocked,
                "t_first_impact": st(f.t_first_impact), "t_throw": st(f.t_start),
                "caused_knockdown": bool(f.caused), "colour": tl.shaft.colour[f.cube],
                "t_weight": st(f.t_on), "mass_g": round(tl.shaft.mass[f.cube], 4),
            })
            if f.knocked:
                knockdowns.append({"t": st(f.t_start), "from_floor": f.from_level,
                                   "floor": f.level, "t_throw": st(throw.t_start)})
    landings.sort(key=lambda x: x["t"])
    truth: dict[str, Any] = {
        "format": FORMAT, "model": "h", "scenario": scenario, "seed": seed,
        "duration_s": float(duration), "cells": tower.cells,
        "landings": landings,
        "knockdowns": sorted(knockdowns, key=lambda x: x["t"]),
        "removals": [{"t": st(r["t"]), "floor": r["floor"], "cubes": r["cubes"]}
                     for r in tl.removals],
        "lifts": [{"t": st(lf.t_lift), "exposed": lf.exposed} for lf in tl.lifts],
        "closes": [{"t": st(lf.t_close), "exposed": lf.exposed} for lf in tl.lifts],
        "knocks": [{"t": st(t), "gee": round(g, 3)} for t, g in tl.knocks],
        "spills": [{"t": st(s["t"]), "from_floor": s["from_floor"]} for s in tl.spills],
        "damage": [],
        "stream_zero_physics_s": offset,
        "tower": tower.describe(),
    }
    if tl.game is not None:
        truth["game"] = tl.game
    out_dir.mkdir(parents=True, exist_ok=True)
    name = f"{scenario}_t{seed}"
    bin_path = out_dir / f"{name}.bin"
    truth_path = out_dir / f"{name}.truth.json"
    bin_path.write_bytes(data)
    truth_path.write_text(json.dumps(truth, indent=1) + "\n")
    return bin_path, truth_path


def main(argv: list[str] | None = None) -> int:
    """Command line: write recordings and truth for a range of towers and scenarios."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", type=Path)
    p.add_argument("--towers", type=int, default=8)
    p.add_argument("--first-seed", type=int, default=1)
    p.add_argument("--duration", type=float, default=120.0, help="seconds per recording")
    p.add_argument("--scenarios", nargs="+", choices=SCENARIOS, default=list(SCENARIOS))
    p.add_argument("--cell-ranges", action="store_true",
                   help="print the load cells' cube and noise ranges (README) and exit")
    args = p.parse_args(argv)
    if args.cell_ranges:
        print(cell_report(range(args.first_seed, args.first_seed + args.towers)))
        return 0
    if args.out is None:
        p.error("--out is required")
    if args.duration < 10:
        p.error("--duration must be at least 10 s (the first 4 s are quiet)")
    started = time.process_time()
    n = 0
    for seed in range(args.first_seed, args.first_seed + args.towers):
        for scenario in args.scenarios:
            make_recording(seed, scenario, args.duration, args.out)
            n += 1
    print(f"model H: {n} recordings in {args.out} ({time.process_time() - started:.1f} s CPU)",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
