#!/usr/bin/env python3
"""Cross-check model I: a hobbyist's real build, with its real-world imperfections.

Writes ``{scenario}_t{seed}.bin`` (device -> host bytes as off the wire,
contracts.md sections 1-2) and ``{scenario}_t{seed}.truth.json`` (format
``towerear-crosscheck-truth/1``, as tools/crosscheck/score.py reads it) for
every seed in ``--first-seed .. --first-seed + --towers - 1`` and every
scenario. Written from contracts.md, design.md and the rules only; see README.md.

Usage::

    .venv/bin/python tools/crosscheck_i/make_recordings_i.py --out DIR \
        [--towers 8] [--first-seed 1] [--duration 120] [--scenarios single rapid noisy game]
"""

from __future__ import annotations

import argparse
import binascii
import json
import math
import struct
import sys
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy import signal

F64 = npt.NDArray[np.float64]
U8 = npt.NDArray[np.uint8]

FORMAT = "towerear-crosscheck-truth/1"
SCENARIOS = ("single", "rapid", "noisy", "game")
COLOURS = ("yellow", "blue", "brown", "gray", "black", "white")
G = 9.81
LEVELS = 8
LOAD_FS = 1000  # the mechanical grid the load path is computed on (Hz)
QUIET_S = 4.0  # the detector tares on an empty, quiet tower: nothing happens before this
LAST_THROW_S = 8.0  # no throw this close to the end: every cube comes to rest in the recording
S24_MAX = 2 ** 23 - 1

# Message types (contracts.md section 1).
HELLO, PIEZO, LOAD, STATUS, ACK = 0x01, 0x02, 0x03, 0x04, 0x05
GET_INFO = 0x81


# --------------------------------------------------------------------------------------
# Wire encoding, written from the contract (not shared with the project's codec).
# --------------------------------------------------------------------------------------

def crc16_ccitt_false(data: bytes) -> int:
    """CRC-16/CCITT-FALSE: binascii's CRC-CCITT is this polynomial, MSB first, from 0xFFFF."""
    return binascii.crc_hqx(data, 0xFFFF)


def crc16_ccitt_false_reference(data: bytes) -> int:
    """The same CRC bit by bit, so the fast one has something independent to agree with."""
    crc = 0xFFFF
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
            crc &= 0xFFFF
    return crc


def cobs_encode(data: bytes) -> bytes:
    """COBS without the trailing delimiter (any length; blocks of 254 get code 0xFF)."""
    out = bytearray([0])
    code_at, code = 0, 1
    for byte in data:
        if byte == 0:
            out[code_at] = code
            code_at, code = len(out), 1
            out.append(0)
            continue
        out.append(byte)
        code += 1
        if code == 0xFF:
            out[code_at] = code
            code_at, code = len(out), 1
            out.append(0)
    out[code_at] = code
    return bytes(out)


def cobs_frames(rows: U8) -> U8:
    """COBS-encode equal-length messages at once and append the 0x00 delimiter.

    Messages of up to 253 bytes never need a 0xFF block, so each code byte is
    simply the distance to the next zero (a virtual zero sits after the end).
    """
    m, n = rows.shape
    assert n <= 253
    pos = np.where(rows == 0, np.arange(n), n)
    # Index of the first zero at or after each position (n where there is none).
    next_zero = np.minimum.accumulate(np.concatenate([pos, np.full((m, 1), n)], 1)[:, ::-1],
                                      axis=1)[:, ::-1]
    out = np.zeros((m, n + 2), np.uint8)
    out[:, 0] = next_zero[:, 0] + 1
    out[:, 1:n + 1] = np.where(rows == 0, next_zero[:, 1:] - np.arange(n), rows)
    return out


def _frame(msg: bytes) -> bytes:
    return cobs_encode(msg + struct.pack("<H", crc16_ccitt_false(msg))) + b"\x00"


# --------------------------------------------------------------------------------------
# The tower: every figure drawn from the seed (the same tower in every scenario).
# --------------------------------------------------------------------------------------

def _counts_per_volt(avdd_v: float) -> float:
    # HX711 channel A, gain 128: full scale +-0.5 * AVDD / 128 maps to +-2^23.
    return 2 ** 23 / (0.5 * avdd_v / 128)


class Tower:
    """One hobbyist build: geometry, cubes, load cells, converters, piezo front end."""

    def __init__(self, seed: int) -> None:
        rng = np.random.default_rng([0x1D, seed])
        self.seed = seed
        u = rng.uniform
        # ---- firmware and clocks
        self.piezo_rate = int(rng.choice([1500, 2000, 2000, 2000, 2400]))
        self.sets_per_msg = int(rng.choice([8, 10, 12, 14]))
        self.load_rate = 80 if rng.random() < 0.7 else 10  # cheap boards ship with RATE low
        self.hx_rate = self.load_rate * (1 + u(-0.04, 0.04, LEVELS))  # each chip's own RC clock
        self.read_latency_s = u(150e-6, 450e-6)  # 24 shared clocks with the piezo ISR cutting in
        self.adc_bits = 10
        self.fw = (0, int(rng.integers(1, 5)), int(rng.integers(0, 12)))
        self.device_id = bytes(rng.integers(0, 256, 8).astype(np.uint8))
        self.start = "boot" if rng.random() < 0.5 else "attached"
        if self.start == "boot":
            self.t0_us = int(u(1.1e6, 2.5e6))
            self.seq0 = 0
        else:  # the app opened the port of a running device and asked GET_INFO
            near_wrap = rng.random() < 0.3
            self.t0_us = int(2 ** 32 - u(5e6, 150e6)) if near_wrap else int(u(3e6, 4.2e9))
            self.seq0 = int(rng.integers(0, 65536))
        self.junk_prefix = self.start == "attached" and rng.random() < 0.6
        self.junk = bytes(rng.integers(1, 256, int(rng.integers(3, 60))).astype(np.uint8))
        # ---- geometry and cubes
        self.height_m = u(0.235, 0.27)
        self.module_h = self.height_m / LEVELS
        self.cube_g = u(0.3, 0.8)
        self.cube_sd = u(0.01, 0.04)  # wood density and cut, cube to cube
        # Holes are smaller upwards and not aligned: a cube stops more often high up.
        self.pass_p = np.concatenate([[0.0], u(0.55, 0.75, 7) + 0.1 * (7 - np.arange(1, 8)) / 7])
        self.clean_p = u(0.04, 0.2)  # falls through a hole without touching the plate
        self.long_dwell_p = u(0.03, 0.1)  # rests a moment, then tips into the hole
        self.restitution = u(0.22, 0.5)
        # Per resting cube, that a cube arriving dislodges it (only cubes near the hole can go).
        self.knock_q = u(0.005, 0.02)
        self.swap_p = u(0.3, 0.6)  # knocked one falls, the arriving one stays
        self.pos_sd = u(0.01, 0.05)  # where on the plate a cube lies changes its reading
        # ---- load cells and HX711s
        self.cells = "matched" if rng.random() < 0.6 else "mixed"
        if self.cells == "matched":
            self.capacity_g = np.full(LEVELS, 100.0)
            self.rated_mv_v = u(0.6, 1.0) * (1 + u(-0.05, 0.05, LEVELS))
        else:
            self.capacity_g = rng.choice([100.0, 200.0], LEVELS)
            self.rated_mv_v = u(0.6, 1.0, LEVELS)
        self.avdd_v = float(rng.choice([4.3, 5.0, 3.3]))
        cpv = _counts_per_volt(self.avdd_v)
        self.counts_per_g = self.rated_mv_v * 1e-3 * self.avdd_v / self.capacity_g * cpv
        self.sign = rng.choice([-1.0, 1.0], LEVELS)  # wiring and mounting, cell by cell
        plate_g = u(4.0, 15.0, LEVELS)
        self.plate_g = plate_g
        zero_mv_v = rng.normal(0, 0.1, LEVELS)
        self.offset = (self.sign * plate_g * self.counts_per_g
                       + zero_mv_v * 1e-3 * self.avdd_v * cpv)
        nv = 90e-9 if self.load_rate == 80 else 50e-9  # datasheet input-referred noise
        self.noise_counts = nv * u(1.0, 3.0, LEVELS) * cpv
        self.hum_alias = u(0.0, 2.0, LEVELS) * self.noise_counts if self.load_rate == 80 \
            else np.zeros(LEVELS)
        self.hyst_g = u(0.01, 0.05, LEVELS) * self.capacity_g / 100
        self.creep = u(0.01, 0.05, LEVELS)
        self.creep_tau = u(3.0, 25.0, LEVELS)
        self.plate_f0 = u(25.0, 70.0, LEVELS)
        self.plate_zeta = u(0.06, 0.25, LEVELS)
        self.share_up = u(0.0, 0.04, LEVELS)
        self.share_dn = u(0.0, 0.04, LEVELS)
        self.share_up[7] = self.share_dn[0] = 0.0
        self.drift_common_g = u(0.02, 0.2)
        self.drift_own_g = u(0.01, 0.1, LEVELS)
        self.drift_temp_sens = u(0.5, 1.5, LEVELS) * self.sign
        self.warmup_g = u(0.05, 0.5, LEVELS) * rng.choice([-1.0, 1.0], LEVELS)
        self.warmup_tau = u(40.0, 200.0)
        self.glitch_p = u(0.0, 4e-5)
        # ---- the tower rocking on the table
        self.rock_f = u(2.5, 8.0)
        self.rock_zeta = u(0.03, 0.12)
        heights = (np.arange(LEVELS) + 1) / LEVELS
        self.rock_g = (u(0.02, 0.15) * heights ** u(0.5, 1.5) * u(0.7, 1.3, LEVELS)
                       * rng.choice([-1.0, 1.0], LEVELS))  # g per unit of rocking on each cell
        self.rock_piezo = u(0.5, 3.0, LEVELS)  # counts per unit, before the high-pass
        # ---- piezo front end
        self.opamp = str(rng.choice(["lm358", "rail-to-rail", "none"], p=[0.45, 0.35, 0.2]))
        if self.opamp == "lm358":  # its output cannot reach the top rail
            self.rail_lo, self.rail_hi = u(3, 15), u(680, 740)
        elif self.opamp == "rail-to-rail":
            self.rail_lo, self.rail_hi = u(1, 4), u(1018, 1023)
        else:  # piezo straight to the pin: the protection diodes clamp
            self.rail_lo, self.rail_hi = 0.0, 1023.0
        self.bias = 512 + rng.normal(0, 8, LEVELS)
        self.wander = u(0.5, 4.0, LEVELS)
        self.sens = u(80.0, 400.0)  # counts per (m/s) of a cube striking its own plate
        self.gain = 10 ** (rng.normal(0, 4, LEVELS) / 20)
        self.hp_fc = u(2.0, 15.0, LEVELS)
        self.block_k = u(0.0, 1.0)
        self.block_tau = u(0.03, 0.3)
        self.piezo_noise = u(0.4, 1.5, LEVELS)
        self.ghost = u(0.01, 0.08)  # ADC sample-and-hold keeps some of the previous channel
        self.mains_hz = 50 + u(-0.05, 0.05)
        has_hum = rng.random() < 0.55
        hum_ch = rng.random(LEVELS) < 0.25 + 0.08 * np.arange(LEVELS)  # longer wires up top
        self.hum = np.where(has_hum & hum_ch, u(0.5, 6.0, LEVELS), 0.0)
        self.hum_harm = np.array([1.0, u(0.0, 0.3), u(0.1, 0.6), u(0.0, 0.3)])  # 50/100/150/250
        self.crackle_rate = np.zeros(LEVELS)
        if rng.random() < 0.4:  # a bad joint or a spring contact on one or two levels
            for ch in rng.choice(LEVELS, int(rng.integers(1, 3)), replace=False):
                self.crackle_rate[ch] = u(0.01, 0.1)
        self.rho = u(0.25, 0.7)  # structure-borne crosstalk per level of distance
        xt = self.rho ** np.abs(np.subtract.outer(np.arange(LEVELS), np.arange(LEVELS)))
        self.xtalk = np.minimum(xt * u(0.6, 1.4, (LEVELS, LEVELS)), 0.95)
        np.fill_diagonal(self.xtalk, 1.0)
        self.rho_table = u(0.5, 0.85)
        self.modes_f = np.exp(u(np.log(180), np.log(2600), (LEVELS, 3)))
        self.modes_tau = u(0.003, 0.02, (LEVELS, 3))
        self.modes_a = u(0.3, 1.0, (LEVELS, 3))
        self.kernel_seed = int(rng.integers(0, 2 ** 31))

    def describe(self) -> dict[str, Any]:
        """The tower's figures for the truth file (so a result can be traced to the build)."""
        return {
            "piezo_rate_hz": self.piezo_rate, "load_rate_hz": self.load_rate,
            "hx711_true_rate_hz": np.round(self.hx_rate, 3).tolist(),
            "sets_per_message": self.sets_per_msg, "start": self.start,
            "cube_g": round(self.cube_g, 4), "cells": self.cells,
            "counts_per_g": np.round(self.counts_per_g * self.sign, 1).tolist(),
            "cube_counts": np.round(self.counts_per_g * self.cube_g, 0).tolist(),
            "noise_counts": np.round(self.noise_counts, 1).tolist(),
            "pass_p": np.round(self.pass_p, 3).tolist(), "opamp": self.opamp,
            "rails": [round(self.rail_lo, 1), round(self.rail_hi, 1)],
            "hum_counts": np.round(self.hum, 2).tolist(),
            "crackle_per_s": np.round(self.crackle_rate, 3).tolist(),
            "xtalk_rho": round(self.rho, 3), "creep": np.round(self.creep, 3).tolist(),
            "hysteresis_g": np.round(self.hyst_g, 3).tolist(),
            "rock_hz": round(self.rock_f, 2),
        }


# --------------------------------------------------------------------------------------
# What happens: cubes, hands, knocks, talk (planned in time order, then rendered).
# --------------------------------------------------------------------------------------

@dataclass
class Cube:
    """A cube in the tower: where it rests and since when."""

    colour: str
    mass_g: float  # what its own cell sees of it (position on the plate included)
    level: int = -1
    t_rest: float = math.inf
    segments: list[tuple[int, float, float]] = field(default_factory=list)  # level, on, off


@dataclass
class World:
    """Everything the sensors will see, and the truth."""

    tower: Tower
    duration: float
    rng: np.random.Generator
    impacts: list[tuple[float, int, float, str]] = field(default_factory=list)  # t, lvl, v, kind
    impulses: list[tuple[float, int, float]] = field(default_factory=list)  # t, level, N s
    rock: list[tuple[float, float]] = field(default_factory=list)  # t, units
    scrapes: list[tuple[float, float, int, float]] = field(default_factory=list)
    presses: list[tuple[float, float, int, float]] = field(default_factory=list)  # t1, dur, l, g
    hands: list[tuple[float, float, int, float]] = field(default_factory=list)  # t0, t1, l, s
    opened: list[tuple[float, float, int]] = field(default_factory=list)  # lift, close, level
    talk: list[tuple[float, float, float]] = field(default_factory=list)
    cubes: list[Cube] = field(default_factory=list)
    plates: list[list[Cube]] = field(default_factory=lambda: [[] for _ in range(LEVELS)])
    landings: list[dict[str, Any]] = field(default_factory=list)
    knockdowns: list[dict[str, Any]] = field(default_factory=list)
    removals: list[dict[str, Any]] = field(default_factory=list)
    lifts: list[dict[str, Any]] = field(default_factory=list)
    closes: list[dict[str, Any]] = field(default_factory=list)
    knocks: list[dict[str, Any]] = field(default_factory=list)

    # ---- cube flight ------------------------------------------------------------------
    def _impact(self, t: float, level: int, v: float, cube: Cube, kind: str = "cube") -> None:
        self.impacts.append((t, level, v, kind))
        e = self.tower.restitution
        self.impulses.append((t, level, cube.mass_g * 1e-3 * v * (1 + e)))
        self.rock.append((t, cube.mass_g * v * (1 + e) / 0.5))  # unit: a 0.5 g cube at 1 m/s

    def _settle(self, t: float, level: int, v: float, cube: Cube) -> tuple[float, float]:
        """Bounces and slide on a plate from an impact at ``t``; (t on the plate, t at rest)."""
        tw, rng = self.tower, self.rng
        e = tw.restitution * rng.uniform(0.8, 1.15)
        self._impact(t, level, v, cube)
        vb = e * v
        while vb > 0.1:  # bounces under half a millimetre are part of the slide
            t += 2 * vb / G
            self._impact(t, level, vb, cube)
            vb *= e
        t_on = t
        slide = rng.uniform(0.02, 0.35) if rng.random() < 0.8 else rng.uniform(0.35, 0.7)
        self.scrapes.append((t_on, t_on + slide, level, rng.uniform(1.5, 8.0) * min(v, 2.0)))
        return t_on, t_on + slide

    def _fall(self, cube: Cube, level: int, t: float, v: float, *, can_knock: bool,
              forced_stop: int | None = None) -> dict[str, Any]:
        """The cube arrives at plate ``level`` at ``t`` with speed ``v``; follow it to rest."""
        tw, rng = self.tower, self.rng
        first_impact: float | None = None
        knock: dict[str, Any] | None = None
        dwelt = False  # one long rest before tipping into a hole is enough for a flight
        while True:
            stop = level == 0 or rng.random() >= tw.pass_p[level] or forced_stop == level
            resting = [c for c in self.plates[level] if c.t_rest < t]
            p_knock = 1 - (1 - tw.knock_q) ** len(resting)
            if can_knock and knock is None and level > 0 and resting \
                    and rng.random() < min(0.12, p_knock):
                knock = {"cube": resting[int(rng.integers(len(resting)))], "level": level}
                if not stop and rng.random() < tw.swap_p:
                    stop = True  # the arriving cube takes the place of the one it knocked
            if stop:
                if first_impact is None:
                    first_impact = t
                t_on, t_rest = self._settle(t, level, v, cube)
                break
            if rng.random() < tw.clean_p and knock is None:
                self.impacts.append((t, level, 0.15 * v, "edge"))  # a graze of the hole's edge
                t_leave, v0 = t, v * 0.9
            else:
                if first_impact is None:
                    first_impact = t
                self._impact(t, level, v, cube)
                t_hit = t + 2 * tw.restitution * v / G
                self._impact(t_hit, level, tw.restitution ** 2 * v, cube)
                long_rest = not dwelt and rng.random() < tw.long_dwell_p
                dwelt |= long_rest
                dwell = rng.uniform(0.3, 1.0) if long_rest else rng.uniform(0.03, 0.25)
                t_leave = t_hit + dwell
                cube.segments.append((level, t_hit, t_leave))
                self.scrapes.append((t_hit, t_leave, level, rng.uniform(1.0, 4.0)))
                v0 = rng.uniform(0.1, 0.4)
            if knock is not None and knock["level"] == level and "t" not in knock:
                knock["t"] = t_leave + rng.uniform(0.0, 0.08)
            h = tw.module_h
            t = t_leave + (-v0 + math.sqrt(v0 * v0 + 2 * G * h)) / G
            v = math.sqrt(v0 * v0 + 2 * G * h)
            level -= 1
        if knock is not None and "t" not in knock:  # swapped: the resting one is pushed in
            knock["t"] = t + rng.uniform(0.01, 0.1)
        cube.level, cube.t_rest = level, t_rest
        cube.segments.append((level, t_on, math.inf))
        self.plates[level].append(cube)
        return {"floor": level, "t": t_rest, "t_on": t_on, "t_first_impact": first_impact,
                "knock": knock}

    def throw(self, t_throw: float, colour: str = "clue") -> int:
        """A cube dropped into the shaft at ``t_throw``; returns the floor it came to rest on."""
        tw, rng = self.tower, self.rng
        cube = Cube(colour, tw.cube_g * (1 + rng.normal(0, tw.cube_sd))
                    * (1 + rng.normal(0, tw.pos_sd)))
        self.cubes.append(cube)
        h = rng.uniform(0.02, 0.15) + tw.module_h  # from the fingers to plate 7
        v = math.sqrt(2 * G * h)
        res = self._fall(cube, 7, t_throw + v / G, v, can_knock=True)
        landing = {"t": res["t"], "floor": res["floor"], "cubes": 1, "knocked": False,
                   "caused_knockdown": res["knock"] is not None, "colour": colour,
                   "t_throw": t_throw, "t_first_impact": res["t_first_impact"],
                   "t_weight": res["t_on"]}
        self.landings.append(landing)
        if res["knock"] is not None:
            self._knocked(res["knock"], len(self.landings) - 1)
        return int(res["floor"])

    def _knocked(self, knock: dict[str, Any], by: int) -> None:
        """The dislodged cube leaves its plate through the hole and falls on."""
        cube: Cube = knock["cube"]
        src, t_leave = knock["level"], knock["t"]
        self.plates[src].remove(cube)
        lvl, on, _ = cube.segments[-1]
        cube.segments[-1] = (lvl, on, t_leave)
        v0 = self.rng.uniform(0.05, 0.3)
        h = self.tower.module_h
        v = math.sqrt(v0 * v0 + 2 * G * h)
        res = self._fall(cube, src - 1, t_leave + (v - v0) / G, v, can_knock=False)
        self.landings.append({"t": res["t"], "floor": res["floor"], "cubes": 1, "knocked": True,
                              "caused_knockdown": False, "colour": cube.colour,
                              "from_floor": src, "by": by,
                              "t_first_impact": res["t_first_impact"], "t_weight": res["t_on"]})
        self.knockdowns.append({"t": t_leave, "from_floor": src, "floor": res["floor"],
                                "by": by})

    # ---- hands and room -----------------------------------------------------------------
    def table_knock(self, t: float) -> None:
        """A knuckle or a cup on the table: the whole tower jolts and rocks."""
        rng = self.rng
        v = rng.uniform(0.3, 2.0)
        self.impacts.append((t, 0, v, "table"))
        dv = v * rng.uniform(0.01, 0.03)  # the base's vertical jolt, m/s
        for lvl in range(LEVELS):
            m = self.tower.plate_g[lvl] + sum(c.mass_g for c in self.plates[lvl])
            self.impulses.append((t, lvl, m * 1e-3 * dv))
        self.rock.append((t, v * rng.uniform(1.0, 6.0)))
        self.knocks.append({"t": t, "kind": "table"})

    def hand_touch(self, t0: float, t1: float, level: int, strength: float) -> None:
        """A hand on the tower's walls: pressure through friction, rumble, body hum."""
        self.hands.append((t0, t1, level, strength))
        self.rock.append((t0, strength * self.rng.uniform(1.0, 4.0)))
        self.rock.append((t1, strength * self.rng.uniform(0.5, 2.0)))

    def open_level(self, t_grab: float, k: int, grabs: list[int]) -> float:
        """Lift modules k..7, take the cubes of level k out in ``grabs``, close; t closed."""
        rng = self.rng
        t_lift = t_grab + rng.uniform(0.4, 0.9)
        self.hand_touch(t_grab, t_lift + rng.uniform(0.2, 0.6), k, rng.uniform(1.0, 2.5))
        self.rock.append((t_lift, rng.uniform(1.0, 4.0)))
        self.lifts.append({"t": t_lift, "exposed": k})
        t = t_lift + rng.uniform(1.0, 2.5)
        for n in grabs:
            cubes = [c for c in self.plates[k] if c.t_rest < t][:n]
            press = rng.uniform(0.15, 0.5)
            self.presses.append((t, press, k, rng.uniform(1.0, 5.0)))
            self.scrapes.append((t - press, t + 0.1, k, rng.uniform(3.0, 12.0)))
            for c in cubes:
                self.plates[k].remove(c)
                lvl, on, _ = c.segments[-1]
                c.segments[-1] = (lvl, on, t)
            self.removals.append({"t": t, "floor": k, "cubes": len(cubes),
                                  "colours": sorted(c.colour for c in cubes)})
            t += rng.uniform(0.8, 2.0)
        t_close = t + rng.uniform(0.3, 1.5)
        self.hand_touch(t_close - rng.uniform(0.6, 1.2), t_close + rng.uniform(0.1, 0.3), k,
                        rng.uniform(1.0, 2.5))
        self.impacts.append((t_close, max(k, 0), rng.uniform(0.3, 1.2), "seat"))
        self.rock.append((t_close, rng.uniform(2.0, 6.0)))
        self.closes.append({"t": t_close, "exposed": k})
        self.opened.append((t_lift, t_close, k))
        return t_close

    def add_talk(self, t0: float, t1: float, share: float) -> None:
        """Phrases of speech covering about ``share`` of [t0, t1]."""
        rng = self.rng
        t = t0 + rng.uniform(0, 3)
        while t < t1:
            n = rng.uniform(0.8, 4.0)
            self.talk.append((t, min(t + n, t1), rng.uniform(1.0, 5.0)))
            t += n / share * rng.uniform(0.5, 1.5)


# ---- the scenarios ---------------------------------------------------------------------

def _plan_single(w: World) -> None:
    t = QUIET_S + w.rng.uniform(0.5, 2.0)
    while t < w.duration - LAST_THROW_S:
        w.throw(t)
        t += w.rng.uniform(3.0, 7.0)


def _plan_rapid(w: World) -> None:
    rng = w.rng
    t = QUIET_S + rng.uniform(0.5, 2.0)
    while t < w.duration - LAST_THROW_S:
        for _ in range(int(rng.integers(3, 9))):
            if t >= w.duration - LAST_THROW_S:
                break
            w.throw(t)
            t += rng.uniform(0.3, 0.8)
        t += rng.uniform(2.5, 5.0)


def _plan_noisy(w: World) -> None:
    rng = w.rng
    t = QUIET_S + rng.uniform(0.5, 2.0)
    while t < w.duration - LAST_THROW_S:
        w.throw(t)
        t += rng.uniform(2.5, 6.0)
    w.add_talk(QUIET_S, w.duration, rng.uniform(0.3, 0.6))
    t = QUIET_S + rng.exponential(15.0)
    while t < w.duration - 0.5:
        w.table_knock(t)
        t += rng.exponential(18.0) + 1.0
    t = QUIET_S + rng.exponential(25.0)
    while t < w.duration - 4.5:
        d = rng.uniform(0.5, 3.0)
        w.hand_touch(t, t + d, int(rng.integers(0, LEVELS)), rng.uniform(0.3, 1.5))
        w.knocks.append({"t": t, "kind": "hand", "t_end": t + d})
        t += d + rng.exponential(25.0) + 1.0


class Game:
    """Mord im Arosa as the rulebook tells it, played on ``World`` with the real cubes."""

    def __init__(self, w: World) -> None:
        self.w = w
        rng = w.rng
        n = int(rng.integers(3, 6))
        self.players = [str(c) for c in rng.permutation(COLOURS)[:n]]
        self.supply = {p: 20 for p in self.players}
        self.sheet = {p: [0] * LEVELS for p in self.players}
        self.scenes: list[int] = []
        self.victims_found = 0
        self.act = "prologue"
        self.log: list[str] = []
        self.t = QUIET_S + rng.uniform(0.8, 2.5)

    def _throw(self, colour: str) -> None:
        w = self.w
        if self.t >= w.duration - LAST_THROW_S:
            return
        floor = w.throw(self.t, colour)
        self.log.append(f"throw {colour} {floor} t={self.t:.2f}")
        self.t += w.rng.uniform(1.3, 3.2)

    def _over(self) -> bool:
        return any(sum(s) >= 10 for s in self.sheet.values()) or \
            any(v <= 0 for v in self.supply.values())

    def play(self) -> None:
        """Prologue and turns until the game ends or the recording does."""
        w, rng = self.w, self.w.rng
        for colour in ["red", "red"] + [p for p in self.players for _ in range(2)]:
            if colour != "red":
                self.supply[colour] -= 1
            self._throw(colour)
        self.act = "act1"
        turn = 0
        while not self._over():
            self.t += rng.uniform(2.0, 6.0)  # deliberation
            n_here = np.array([len(p) for p in w.plates], float)
            weights = 1.0 + 2.0 * (n_here > 0)
            k = int(rng.choice(LEVELS, p=weights / weights.sum()))
            grabs: list[int] = []
            left = int(n_here[k])
            while left > 0:
                g = min(left, int(rng.choice([1, 1, 2, 2, 3])))
                grabs.append(g)
                left -= g
            if self.t + 5.0 + 2.0 * len(grabs) > w.duration - 2.0:
                break
            inv = self.players[turn % len(self.players)]
            on_level = [c.colour for c in w.plates[k]]
            t_close = w.open_level(self.t, k, grabs)
            self.t = t_close + rng.uniform(1.5, 3.0)
            back, penalties, next_turn = self._rules(inv, k, on_level, turn)
            self.log.append(f"{self.act} {inv} opens {k}: {sorted(on_level)}")
            for colour in back:
                self._throw(colour)
            for _ in range(penalties):
                if self._over():
                    break
                self.supply[inv] -= 1
                self._throw(inv)
            turn = next_turn
        self.log.append(f"end t={self.t:.2f} over={self._over()}")

    def _rules(self, inv: str, k: int, on_level: list[str], turn: int
               ) -> tuple[list[str], int, int]:
        """Apply one inspection: the clues thrown back, penalty clues, the next turn."""
        rng = self.w.rng
        clues = [c for c in on_level if c != "red"]
        victims = len(on_level) - len(clues)
        nxt = turn + 1
        if self.act == "act1":
            if not victims:
                return clues, 1, nxt  # sloppy investigation
            self.victims_found += victims
            if k not in self.scenes:
                self.scenes.append(k)
            for p in self.players:
                if p != inv:
                    n = min(clues.count(p), self.supply[p])
                    self.sheet[p][k] += n
                    self.supply[p] -= n
            if self.victims_found >= 2:
                self.act = "act2"
                nxt = turn + 1  # Act II starts with the player after the finder
            return clues, 0, nxt
        others = [p for p in self.players if p != inv]
        if any(self.sheet[inv]) and rng.random() < 0.35:  # cover your tracks
            own = clues.count(inv)
            back = min(own, self.sheet[inv][k])
            self.sheet[inv][k] -= back
            self.supply[inv] += back
            return clues, 0 if own else 1, nxt
        suspects = list(rng.choice(others, min(len(others), int(rng.integers(1, 3))),
                                   replace=False))
        if k == 0 and inv not in clues:  # the ground-floor case
            return clues, len(suspects), nxt
        penalties = 0
        for s in suspects:
            n = min(clues.count(s), self.supply[s])
            self.sheet[s][k] += n
            self.supply[s] -= n
            penalties += clues.count(s) == 0
        return clues, penalties, nxt


def _plan_game(w: World) -> dict[str, Any]:
    game = Game(w)
    game.play()
    w.add_talk(QUIET_S, w.duration, w.rng.uniform(0.2, 0.45))
    return {"players": game.players, "log": game.log, "supply": game.supply,
            "sheet": game.sheet, "crime_scenes": sorted(game.scenes), "act": game.act}


# --------------------------------------------------------------------------------------
# Rendering: the load path (1 kHz mechanics, HX711s) and the piezos (ADC rate).
# --------------------------------------------------------------------------------------

def _smooth_walk(rng: np.random.Generator, t: F64, periods: tuple[float, float], n: int = 4
                 ) -> F64:
    """A slow random wander with unit-ish amplitude (a few slow sinusoids and a ramp)."""
    out = rng.uniform(-0.5, 0.5) * t / max(t[-1], 1.0)
    for _ in range(n):
        p = rng.uniform(*periods)
        out = out + rng.normal(0, 0.5) * np.sin(2 * np.pi * t / p + rng.uniform(0, 2 * np.pi))
    return np.asarray(out, float)


def _rock_signal(w: World, fs: float, n: int) -> F64:
    """Sum of the tower's damped rocking responses, peak 1 per unit of excitation."""
    tw = w.tower
    train = np.zeros(n)
    for t, units in w.rock:
        i = int(t * fs)
        if 0 <= i < n:
            train[i] += units
    wn = 2 * np.pi * tw.rock_f
    wd = wn * math.sqrt(1 - tw.rock_zeta ** 2)
    tk = np.arange(int(fs * 5 / (tw.rock_zeta * wn))) / fs  # five time constants
    kern = np.exp(-tw.rock_zeta * wn * tk) * np.sin(wd * tk)
    return np.asarray(signal.fftconvolve(train, kern)[:n], float)


def render_load(w: World) -> tuple[F64, npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """LOAD messages: (times s, valid masks, counts (n, 8))."""
    tw, rng = w.tower, w.rng
    n = int(w.duration * LOAD_FS) + LOAD_FS
    tg = np.arange(n) / LOAD_FS
    static = np.zeros((LEVELS, n))
    for c in w.cubes:
        for lvl, on, off in c.segments:
            i0, i1 = int(on * LOAD_FS), min(n, int(min(off, 1e6) * LOAD_FS))
            static[lvl, i0:i1] += c.mass_g
    for t1, dur, lvl, grams in w.presses:
        i0, i1 = max(0, int((t1 - dur) * LOAD_FS)), min(n, int(t1 * LOAD_FS))
        static[lvl, i0:i1] += grams * np.sin(np.linspace(0, np.pi, i1 - i0)) ** 2
    for t0, t1, lvl, s in w.hands:  # pressure on the walls reaches the plates by friction
        i0, i1 = int(t0 * LOAD_FS), min(n, int(t1 * LOAD_FS))
        if i1 <= i0:
            continue
        env = np.sin(np.linspace(0, np.pi, i1 - i0)) ** 0.5
        wob = 1 + 0.5 * np.sin(2 * np.pi * rng.uniform(0.5, 2) * tg[i0:i1])
        for d in (-1, 0, 1):
            if 0 <= lvl + d < LEVELS:
                static[lvl + d, i0:i1] += (s * rng.uniform(0.01, 0.15) * (0.4 if d else 1.0)
                                           * rng.choice([-1, 1]) * env * wob)
    # Neighbours share a little of each plate's load through the walls.
    share = np.diag(1 - tw.share_up - tw.share_dn)
    share += np.diag(tw.share_up[:-1], -1) + np.diag(tw.share_dn[1:], 1)
    static = share @ static
    # Hysteresis (a play operator on the slow load) at 100 Hz.
    step = LOAD_FS // 100
    slow = static[:, : n // step * step].reshape(LEVELS, -1, step).mean(2)
    play = np.empty_like(slow)
    y = slow[:, 0].copy()
    for i in range(slow.shape[1]):
        y = np.clip(y, slow[:, i] - tw.hyst_g, slow[:, i] + tw.hyst_g)
        play[:, i] = y
    hyst = np.repeat(play - slow, step, axis=1)
    static[:, : hyst.shape[1]] += hyst
    dyn = np.zeros((LEVELS, n))
    for t, lvl, j in w.impulses:  # an impact's momentum in one millisecond, in grams
        i = int(t * LOAD_FS)
        if i < n:
            dyn[lvl, i] += j * LOAD_FS / G * 1000
    force = np.empty((LEVELS, n))
    for ch in range(LEVELS):  # the plate on its cell rings, then settles
        wn = 2 * np.pi * tw.plate_f0[ch]
        b, a = signal.bilinear([wn * wn], [1, 2 * tw.plate_zeta[ch] * wn, wn * wn], LOAD_FS)
        x = static[ch] + dyn[ch]
        force[ch] = signal.lfilter(b, a, x - x[0]) + x[0]
        # Creep: a share of every change arrives slowly.
        al = math.exp(-1 / (tw.creep_tau[ch] * LOAD_FS))
        lp = signal.lfilter([1 - al], [1, -al], force[ch] - force[ch, 0]) + force[ch, 0]
        force[ch] -= tw.creep[ch] * (force[ch] - lp)
    force += tw.rock_g[:, None] * _rock_signal(w, LOAD_FS, n)[None, :]
    drift_c = _smooth_walk(rng, tg, (60.0, 900.0)) * tw.drift_common_g
    for ch in range(LEVELS):
        force[ch] += drift_c * tw.drift_temp_sens[ch]
        force[ch] += _smooth_walk(rng, tg, (40.0, 600.0), 3) * tw.drift_own_g[ch]
        if tw.start == "boot":
            force[ch] += tw.warmup_g[ch] * (1 - np.exp(-(tg + 1.5) / tw.warmup_tau))
    # Each HX711 averages with a sinc^3 over three of its own periods.
    filt = np.empty_like(force)
    for ch in range(LEVELS):
        length = max(1, int(round(LOAD_FS / tw.hx_rate[ch])))
        x = force[ch]
        for _ in range(3):
            cs = np.concatenate([[0.0], np.cumsum(x)])
            idx = np.arange(n)
            lo = np.maximum(idx + 1 - length, 0)
            x = (cs[idx + 1] - cs[lo]) / (idx + 1 - lo)
        filt[ch] = x
    # Conversion end times: each chip runs on its own clock; after the modules are set
    # back it powers up and needs four periods before its first reading.
    ends: list[list[float]] = []
    for ch in range(LEVELS):
        period = 1 / tw.hx_rate[ch]
        e = rng.uniform(0, period) + np.arange(0, w.duration + 1, period)
        for t_lift, t_close, k in w.opened:
            if ch > k:
                back = t_close + 4 * period + rng.uniform(0, period)
                e = np.concatenate([e[e < t_lift], back + np.arange(0, w.duration + 1, period)])
        ends.append(e[e < w.duration + 0.5].tolist())
    # The firmware waits until every chip that answers has a reading, then clocks all
    # eight out together; a chip that stays silent (lifted) is skipped until it is back.
    times: list[float] = []
    masks: list[int] = []
    vals: list[list[float]] = []
    ptr = [0] * LEVELS
    soon = [1.5 / r for r in tw.hx_rate]
    t = 0.0
    while True:
        due = [ends[ch][ptr[ch]] for ch in range(LEVELS)
               if ptr[ch] < len(ends[ch]) and ends[ch][ptr[ch]] <= t + soon[ch]]
        if not due:
            break
        t_ready = max(due)
        t = t_ready + tw.read_latency_s
        if t >= w.duration - 0.05:
            break
        mask, row = 0, []
        for ch in range(LEVELS):
            e, i = ends[ch], ptr[ch]
            while i < len(e) and e[i] <= t_ready:
                i += 1
            if i > ptr[ch]:
                mask |= 1 << ch
                row.append(filt[ch, min(n - 1, int(e[i - 1] * LOAD_FS))])
            else:
                row.append(math.nan)
            ptr[ch] = i
        times.append(t)
        masks.append(mask)
        vals.append(row)
    ta = np.array(times)
    load_g = np.array(vals)
    counts = tw.offset + tw.sign * tw.counts_per_g * load_g
    counts += rng.normal(0, 1, counts.shape) * tw.noise_counts
    counts += tw.hum_alias * np.sin(2 * np.pi * (tw.mains_hz - tw.load_rate) * ta[:, None]
                                    + rng.uniform(0, 2 * np.pi, LEVELS))
    glitch = rng.random(counts.shape) < tw.glitch_p
    if glitch.any():  # a clock pulse stretched by an interrupt shifts the word by one bit
        counts[glitch] = np.where(rng.random(int(glitch.sum())) < 0.5, counts[glitch] * 2,
                                  counts[glitch] / 2)
    counts = np.clip(np.round(np.nan_to_num(counts)), -S24_MAX - 1, S24_MAX).astype(np.int64)
    m = np.array(masks, np.int64)
    counts[((m[:, None] >> np.arange(LEVELS)) & 1) == 0] = 0
    return ta, m, counts


def _modal_kernel(tw: Tower, ch: int, fs: float, rng: np.random.Generator, *,
                  scale_f: float = 1.0, tau_x: float = 1.0, attack_s: float = 0.0003) -> F64:
    """A plate's ringing sampled at the ADC rate (no anti-alias filter: high modes fold)."""
    n = int(fs * 0.12)
    t = np.arange(n) / fs
    out = np.zeros(n)
    for f, tau, a in zip(tw.modes_f[ch], tw.modes_tau[ch], tw.modes_a[ch], strict=True):
        f2 = f * scale_f * rng.uniform(0.97, 1.03)
        out += a * rng.uniform(0.6, 1.4) * np.exp(-t / (tau * tau_x)) * np.sin(
            2 * np.pi * f2 * t + rng.uniform(0, 2 * np.pi))
    out *= 1 - np.exp(-t / attack_s)
    return out / max(np.abs(out).max(), 1e-9)


def render_piezo(w: World) -> npt.NDArray[np.uint16]:
    """ADC codes (n sets, 8)."""
    tw, rng = w.tower, w.rng
    fs = float(tw.piezo_rate)
    n = int(w.duration * fs) + 1
    t = np.arange(n) / fs
    krng = np.random.default_rng(tw.kernel_seed)
    x = np.zeros((LEVELS, n))
    table_xt = tw.rho_table ** np.arange(LEVELS)
    for ch in range(LEVELS):
        kern = {"own_a": _modal_kernel(tw, ch, fs, krng),
                "own_b": _modal_kernel(tw, ch, fs, krng, scale_f=1.04),
                "xt": _modal_kernel(tw, ch, fs, krng, tau_x=1.3, attack_s=0.0015),
                "low": _modal_kernel(tw, ch, fs, krng, scale_f=0.25, tau_x=3.0,
                                     attack_s=0.001)}
        trains = {k: np.zeros(n) for k in kern}
        click = np.zeros(n)
        for ti, lvl, v, kind in w.impacts:
            i = int(ti * fs + 0.3 + 0.05 * ch)  # channels are converted one after another
            if i >= n:
                continue
            amp = tw.sens * tw.gain[ch] * v * rng.uniform(0.6, 1.2)
            if kind in ("table", "seat"):
                trains["low"][i] += amp * 0.8 * table_xt[abs(ch - lvl)]
                trains["xt"][i] += amp * 0.3 * table_xt[abs(ch - lvl)]
            elif ch == lvl:
                trains["own_a" if rng.random() < 0.5 else "own_b"][i] += amp
                click[i] += amp * rng.uniform(0.2, 0.6) * rng.choice([-1, 1])
            else:
                trains["xt"][min(n - 1, i + 1)] += amp * tw.xtalk[lvl, ch]
        sig = sum((signal.fftconvolve(trains[k], kern[k])[:n] for k in kern), np.zeros(n))
        x[ch] = sig + click
    # Slides, fingers, hands: band noise on the plate and, weaker, its neighbours.
    for t0, t1, lvl, amp in w.scrapes:
        i0, i1 = int(t0 * fs), min(n, int(t1 * fs) + 1)
        if i1 <= i0:
            continue
        m = i1 - i0
        noise = np.diff(rng.normal(0, 1, m + 1)) * np.hanning(m + 2)[1:-1]
        for ch in range(LEVELS):
            x[ch, i0:i1] += amp * tw.gain[ch] * tw.xtalk[lvl, ch] * noise * rng.uniform(0.7, 1.3)
    hum_amp = np.repeat(tw.hum[:, None], n, axis=1)  # a hand brings the body's mains pickup
    for t0, t1, lvl, s in w.hands:
        i0, i1 = int(t0 * fs), min(n, int(t1 * fs) + 1)
        if i1 <= i0:
            continue
        m = i1 - i0
        env = np.hanning(m + 2)[1:-1]
        rumble = signal.lfilter([0.05], [1, -0.95], rng.normal(0, 1, m)) * env
        for ch in range(LEVELS):
            near = tw.rho_table ** abs(ch - lvl)
            x[ch, i0:i1] += s * rng.uniform(3, 15) * near * rumble
            hum_amp[ch, i0:i1] += s * rng.uniform(1, 5) * near * env
    if w.talk:
        sos = signal.butter(2, [120, min(900, 0.45 * fs)], "bandpass", fs=fs, output="sos")
        voice_gain = rng.uniform(0.5, 1.5, LEVELS)
        for t0, t1, amp in w.talk:
            i0, i1 = int(t0 * fs), min(n, int(t1 * fs) + 1)
            if i1 - i0 < 16:
                continue
            tt = t[i0:i1] - t0
            syll = np.clip(np.sin(2 * np.pi * rng.uniform(3, 6) * tt + rng.uniform(0, 6)), 0, 1)
            v = signal.sosfilt(sos, rng.normal(0, 1, i1 - i0)) * syll * amp * 2
            x[:, i0:i1] += voice_gain[:, None] * v[None, :]
    for ch in range(LEVELS):  # crackle: a bad joint, bursts of sharp spikes
        rate = tw.crackle_rate[ch]
        if rate <= 0:
            continue
        tc = np.cumsum(rng.exponential(1 / rate, int(rate * w.duration * 3) + 5))
        for tb in tc[tc < w.duration]:
            for _ in range(int(rng.integers(1, 7))):
                i = int((tb + rng.uniform(0, 0.03)) * fs)
                if i < n - 3:
                    x[ch, i:i + 2] += rng.uniform(10, 150) * rng.choice([-1, 1]) * np.array(
                        [1.0, -0.4])
    rock = np.interp(t, np.arange(int(w.duration * LOAD_FS) + LOAD_FS) / LOAD_FS,
                     _rock_signal(w, LOAD_FS, int(w.duration * LOAD_FS) + LOAD_FS))
    x += tw.rock_piezo[:, None] * rock[None, :]
    # AC coupling (piezo capacitance into the bias resistor).
    for ch in range(LEVELS):
        al = math.exp(-2 * np.pi * tw.hp_fc[ch] / fs)
        x[ch] = signal.lfilter([(1 + al) / 2, -(1 + al) / 2], [1, -al], x[ch])
    hum = np.zeros(n)
    for h, a in zip((1, 2, 3, 5), tw.hum_harm, strict=True):
        hum += a * np.sin(2 * np.pi * h * tw.mains_hz * t + rng.uniform(0, 2 * np.pi))
    x += hum_amp * hum[None, :]
    x += rng.normal(0, 1, x.shape) * tw.piezo_noise[:, None]
    slow_t = np.arange(0, w.duration + 2, 0.1)
    for ch in range(LEVELS):
        wander = np.interp(t, slow_t, _smooth_walk(rng, slow_t, (2.0, 40.0)))
        x[ch] += tw.bias[ch] + tw.wander[ch] * wander
    # Clipping, and the coupling capacitor charged by a clipped strike pulls the baseline.
    clipped = np.clip(x, tw.rail_lo, tw.rail_hi)
    over = x - clipped
    if np.any(over):
        al = math.exp(-1 / (tw.block_tau * fs))
        shift = signal.lfilter([1 - al], [1, -al], over, axis=1)
        clipped = np.clip(x - tw.block_k * shift * 20, tw.rail_lo, tw.rail_hi)
    # The ADC multiplexer: the hold capacitor keeps part of the channel converted before.
    flat = clipped.T.reshape(-1)
    prev = np.concatenate([[flat[0]], flat[:-1]])
    ghosted = ((1 - tw.ghost) * flat + tw.ghost * prev).reshape(n, LEVELS)
    # A lifted module's disc is off its input: the pin floats, echoing the channel before
    # it and picking up mains.
    for t_lift, t_close, k in w.opened:
        i0, i1 = int(t_lift * fs), min(n, int(t_close * fs))
        for ch in range(k + 1, LEVELS):
            ghosted[i0:i1, ch] = (0.9 * ghosted[i0:i1, ch - 1] + 0.1 * tw.bias[ch]
                                  + rng.uniform(5, 40) * hum[i0:i1])
    return np.clip(np.round(ghosted), 0, 2 ** tw.adc_bits - 1).astype(np.uint16)


# --------------------------------------------------------------------------------------
# The byte stream.
# --------------------------------------------------------------------------------------

def _msg_rows(kind: int, seqs: npt.NDArray[np.int64], body: U8) -> U8:
    m = len(seqs)
    head = np.zeros((m, 3), np.uint8)
    head[:, 0] = kind
    head[:, 1] = seqs & 0xFF
    head[:, 2] = (seqs >> 8) & 0xFF
    rows = np.concatenate([head, body], 1)
    crc = np.array([crc16_ccitt_false(r.tobytes()) for r in rows], np.int64)
    tail = np.stack([crc & 0xFF, crc >> 8], 1).astype(np.uint8)
    return np.concatenate([rows, tail], 1)


def encode_stream(w: World, piezo: npt.NDArray[np.uint16], load_t: F64,
                  load_valid: npt.NDArray[np.int64], load_counts: npt.NDArray[np.int64]
                  ) -> bytes:
    """The device -> host bytes: [junk], HELLO, [ACK], then PIEZO, LOAD, STATUS by send time."""
    tw, rng = w.tower, w.rng
    fs = tw.piezo_rate
    k = tw.sets_per_msg
    n_msgs = len(piezo) // k
    first = np.arange(n_msgs) * k
    p_t_us = tw.t0_us + np.round(first * 1e6 / fs).astype(np.int64)
    p_t_us = (p_t_us // 4) * 4  # micros() ticks in fours on a 16 MHz AVR
    p_send = (first + k - 1) / fs + rng.uniform(20e-6, 200e-6, n_msgs)
    l_t_us = tw.t0_us + np.round(load_t * 1e6).astype(np.int64) // 4 * 4
    n_status = int(w.duration)
    s_send = np.arange(1, n_status + 1) + rng.uniform(0, 0.002, n_status)
    send = np.concatenate([p_send, load_t + 30e-6, s_send])
    order = np.argsort(send, kind="stable")
    n_head = 1 if tw.start == "boot" else 2
    seq = np.empty(len(order), np.int64)
    seq[order] = (tw.seq0 + n_head + np.arange(len(order))) % 65536
    # PIEZO bodies.
    body = np.zeros((n_msgs, 5 + 16 * k), np.uint8)
    tu = p_t_us % 2 ** 32
    for b in range(4):
        body[:, b] = (tu >> (8 * b)) & 0xFF
    body[:, 4] = k
    samples = piezo[: n_msgs * k].reshape(n_msgs, k * LEVELS).astype(np.uint16)
    body[:, 5:] = samples.astype("<u2").view(np.uint8).reshape(n_msgs, -1)
    p_rows = cobs_frames(_msg_rows(PIEZO, seq[:n_msgs], body))
    # LOAD bodies.
    nl = len(load_t)
    body = np.zeros((nl, 5 + 3 * LEVELS), np.uint8)
    tu = l_t_us % 2 ** 32
    for b in range(4):
        body[:, b] = (tu >> (8 * b)) & 0xFF
    body[:, 4] = load_valid
    raw = load_counts % 2 ** 24
    for b in range(3):
        body[:, 5 + b::3] = (raw >> (8 * b)) & 0xFF
    l_rows = cobs_frames(_msg_rows(LOAD, seq[n_msgs:n_msgs + nl], body))
    # STATUS: uptime, counters (lifted channels count as HX711 timeouts), CPU load.
    timeouts = np.zeros(n_status, np.int64)
    for t_lift, t_close, kk in w.opened:
        secs = np.arange(1, n_status + 1)
        timeouts += (7 - kk) * np.clip(secs - t_lift, 0, t_close - t_lift).astype(np.int64) \
            * 2  # the firmware retries twice a second per missing chip
    # uptime_ms u32 | piezo_overruns u16 | tx_dropped u16 | load_timeouts u16 | cpu u8 | flags
    up = ((tw.t0_us // 1000) + np.arange(1, n_status + 1) * 1000) % 2 ** 32
    to = timeouts % 65536
    body = np.zeros((n_status, 12), np.uint8)
    for b in range(4):
        body[:, b] = (up >> (8 * b)) & 0xFF
    body[:, 8], body[:, 9] = to & 0xFF, to >> 8
    body[:, 10] = np.clip(np.round(rng.normal(55, 4, n_status)), 0, 100)
    s_rows = cobs_frames(_msg_rows(STATUS, seq[n_msgs + nl:], body))
    frames: list[bytes] = []
    if tw.junk_prefix:
        frames.append(tw.junk + b"\x00")
    hello = struct.pack("<BBBBBBHHB", 1, *tw.fw, LEVELS, LEVELS, tw.piezo_rate, tw.load_rate,
                        tw.adc_bits) + tw.device_id
    frames.append(_frame(struct.pack("<BH", HELLO, tw.seq0) + hello))
    if n_head == 2:
        ack = struct.pack("<BHB", GET_INFO, int(rng.integers(0, 65536)), 0)
        frames.append(_frame(struct.pack("<BH", ACK, (tw.seq0 + 1) % 65536) + ack))
    all_rows = [p_rows, l_rows, s_rows]
    offsets = np.cumsum([0, n_msgs, nl])
    for idx in order:
        part = int(np.searchsorted(offsets, idx, side="right") - 1)
        frames.append(all_rows[part][idx - offsets[part]].tobytes())
    return b"".join(frames)


# --------------------------------------------------------------------------------------
# One recording.
# --------------------------------------------------------------------------------------

def _scenario_seed(seed: int, scenario: str, duration: float) -> list[int]:
    return [seed, zlib.crc32(scenario.encode()), int(round(duration * 1000))]


def _keep_resting_in_recording(w: World) -> None:
    """Truth lists only cubes that come to rest before the end (the last throws are far
    enough from it that this hardly ever drops one); knock-down links stay paired."""
    late = {i for i, x in enumerate(w.landings) if x["t"] >= w.duration - 0.2}
    for i in list(late):
        x = w.landings[i]
        if x["knocked"]:
            w.landings[x["by"]]["caused_knockdown"] = False
        elif x["caused_knockdown"]:
            x["caused_knockdown"] = False
            late |= {j for j, y in enumerate(w.landings) if y["knocked"] and y["by"] == i}
    w.knockdowns = [k for k in w.knockdowns
                    if k["by"] not in late and w.landings[k["by"]]["caused_knockdown"]]
    keep = [x for i, x in enumerate(w.landings) if i not in late]
    index = {id(x): j for j, x in enumerate(keep)}
    for x in keep:
        if x["knocked"]:
            x["by"] = index[id(w.landings[x["by"]])]
    for k in w.knockdowns:
        k["by"] = index[id(w.landings[k["by"]])]
    w.landings = keep


def make_recording(seed: int, scenario: str, duration: float, out: Path) -> tuple[Path, Path]:
    """Write one recording and its truth; returns (bin path, truth path)."""
    tower = Tower(seed)
    w = World(tower, float(duration), np.random.default_rng(_scenario_seed(seed, scenario,
                                                                            duration)))
    game: dict[str, Any] | None = None
    if scenario == "single":
        _plan_single(w)
    elif scenario == "rapid":
        _plan_rapid(w)
    elif scenario == "noisy":
        _plan_noisy(w)
    elif scenario == "game":
        game = _plan_game(w)
    else:
        raise ValueError(f"unknown scenario {scenario!r}")
    _keep_resting_in_recording(w)
    load_t, valid, counts = render_load(w)
    # The first message on the wire is a PIEZO one: stream time 0 is its first set.
    first_piezo_sent = (tower.sets_per_msg - 1) / tower.piezo_rate + 0.0005
    keep = load_t > first_piezo_sent
    load_t, valid, counts = load_t[keep], valid[keep], counts[keep]
    piezo = render_piezo(w)
    data = encode_stream(w, piezo, load_t, valid, counts)
    out.mkdir(parents=True, exist_ok=True)
    bin_path = out / f"{scenario}_t{seed}.bin"
    truth_path = out / f"{scenario}_t{seed}.truth.json"
    bin_path.write_bytes(data)

    def r(x: dict[str, Any]) -> dict[str, Any]:
        return {k: (round(v, 4) if isinstance(v, float) else v) for k, v in x.items()}

    truth: dict[str, Any] = {
        "format": FORMAT, "model": "I", "scenario": scenario, "seed": seed,
        "duration_s": float(duration), "cells": tower.cells,
        "landings": [r(x) for x in sorted(w.landings, key=lambda x: x["t"])],
        "knockdowns": [r(x) for x in w.knockdowns],
        "removals": [r(x) for x in w.removals], "lifts": [r(x) for x in w.lifts],
        "closes": [r(x) for x in w.closes], "knocks": [r(x) for x in w.knocks],
        "tower": tower.describe(),
    }
    # "by" indexes the throw in time order, after the sort above.
    order = {id(x): i for i, x in enumerate(sorted(w.landings, key=lambda x: x["t"]))}
    for kd, x in zip(truth["knockdowns"], w.knockdowns, strict=True):
        kd["by"] = order[id(w.landings[x["by"]])]
    for x, src in zip(truth["landings"], sorted(w.landings, key=lambda x: x["t"]), strict=True):
        if src.get("knocked"):
            x["by"] = order[id(w.landings[src["by"]])]
    if game is not None:
        truth["game"] = game
    truth_path.write_text(json.dumps(truth, indent=1))
    return bin_path, truth_path


def main(argv: list[str] | None = None) -> int:
    """Command line: every (tower, scenario) pair."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--towers", type=int, default=8)
    p.add_argument("--first-seed", type=int, default=1)
    p.add_argument("--duration", type=float, default=120.0)
    p.add_argument("--scenarios", nargs="+", default=list(SCENARIOS), choices=SCENARIOS)
    args = p.parse_args(argv)
    started = time.perf_counter()
    for seed in range(args.first_seed, args.first_seed + args.towers):
        for scenario in args.scenarios:
            make_recording(seed, scenario, args.duration, args.out)
    print(f"{args.towers * len(args.scenarios)} recordings in "
          f"{time.perf_counter() - started:.1f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
