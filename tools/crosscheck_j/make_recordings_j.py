#!/usr/bin/env python3
"""Cross-check model J: recordings of simulated towers whose physics was written apart
from the detector, from contracts.md, design.md and the rule texts only.

What it adds to the other models (README.md, "the model in one screen"): the share of a
cube's weight a load cell sees depends on where the cube rests (plates partly carried by
their rims), rim creep after a landing, piezos on the walls in some towers, thrower
styles, cubes of several woods in one game, ADC sampling without an anti-alias filter
(per-channel skew, aliased disc resonance), the table as a ringing body, USB ground
bursts, hum that rises when a hand comes near, warm-up drift after boot, the lifted stack's
weight leaking into the lower cells, floating piezo inputs of lifted modules, HX711s that
restart after their spring contacts reconnect, cubes falling out of a lifted stack.

Usage::

    .venv/bin/python tools/crosscheck_j/make_recordings_j.py --out /tmp/xj \
        --towers 8 --first-seed 1 --duration 120 [--scenarios single rapid noisy game]
"""

from __future__ import annotations

import argparse
import binascii
import json
import math
import struct
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from scipy import signal

SEED_KEY = 0x4A_70_E3_A4  # "J", tower, ear: every figure of model J hangs off this key
FORMAT = "towerear-crosscheck-truth/1"
SCENARIOS = ("single", "rapid", "noisy", "game")
FS = 2000  # piezo sets per second: the firmware's timer, announced in HELLO
LOAD_TICK_HZ = 80  # the firmware's HX711 poll rate, announced in HELLO
N = 8  # levels
G = 9.81
CUBE_HALF = 0.12  # a 1 cm cube on a plate of about 8 cm, in plate half-widths
COLOURS = ("yellow", "blue", "brown", "gray", "black", "white")
STYLES = {  # speed at the entry hole (m/s) and how long cubes slide afterwards (factor)
    "gentle": (0.05, 0.6, 0.6),
    "normal": (0.6, 1.8, 1.0),
    "hard": (1.8, 3.5, 1.6),
}
P_REF_LSB = 170.0  # piezo peak (LSB, 5 V reference, unit sensitivity) for 1 g*m/s of impulse

Arr = np.ndarray[Any, np.dtype[np.float64]]


# ----------------------------------------------------------------------------- wire


def crc16_ccitt_false(data: bytes) -> int:
    """CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF): binascii's XMODEM CRC with init 0xFFFF."""
    return binascii.crc_hqx(data, 0xFFFF)


def crc16_ccitt_false_reference(data: bytes) -> int:
    """The same CRC bit by bit, as a second implementation to test the first against."""
    crc = 0xFFFF
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) & 0xFFFF if crc & 0x8000 else (crc << 1) & 0xFFFF
    return crc


def cobs_encode(data: bytes) -> bytes:
    """COBS (Cheshire and Baker), without the trailing 0x00 delimiter."""
    out = bytearray()
    segments = data.split(b"\x00")
    last = len(segments) - 1
    for i, seg in enumerate(segments):
        full_block = False
        while len(seg) >= 254:
            out.append(0xFF)
            out += seg[:254]
            seg = seg[254:]
            full_block = True
        if i < last or seg or not full_block:
            out.append(len(seg) + 1)
            out += seg
    return bytes(out)


def cobs_encode_reference(data: bytes) -> bytes:
    """COBS byte by byte, the textbook loop, to test :func:`cobs_encode` against."""
    out = bytearray([0])
    code_at, code = 0, 1
    for k, byte in enumerate(data):
        if byte:
            out.append(byte)
            code += 1
        if not byte or code == 0xFF:
            out[code_at] = code
            code = 1
            if not byte or k < len(data) - 1:
                code_at = len(out)
                out.append(0)
            else:
                code_at = -1
    if code_at >= 0:
        out[code_at] = code
    return bytes(out)


def frame(mtype: int, seq: int, body: bytes) -> bytes:
    """One message on the wire: COBS(type | seq | body | crc) and a 0x00."""
    msg = struct.pack("<BH", mtype, seq & 0xFFFF) + body
    return cobs_encode(msg + struct.pack("<H", crc16_ccitt_false(msg))) + b"\x00"


def s24(value: int) -> bytes:
    """A signed 24-bit little-endian integer."""
    return (value & 0xFFFFFF).to_bytes(3, "little")


# ----------------------------------------------------------------------------- the tower


class Tower:
    """Every figure of one physical tower, drawn from its seed (a seed is a tower)."""

    def __init__(self, seed: int) -> None:
        r = np.random.default_rng([SEED_KEY, seed])
        self.seed = seed
        self.device_id = bytes(r.integers(0, 256, 8, dtype=np.uint8))
        self.fw = (1, int(r.integers(0, 4)), int(r.integers(0, 10)))
        self.piezo_rate = FS
        self.load_rate = LOAD_TICK_HZ
        self.n_batch = int(r.choice([10, 12, 14]))  # sets per PIEZO message (firmware build)
        # --- piezo front end
        self.mount = "wall" if r.random() < 0.25 else "plate"
        self.vref = 1.1 if r.random() < 0.3 else 5.0
        self.piezo_scale = r.uniform(2.5, 5.0) if self.vref == 1.1 else r.uniform(0.5, 1.5)
        self.adc_step_s = float(r.choice([26e-6, 52e-6]))  # channel k sampled k steps late
        self.frontend_lp_hz = float(r.uniform(1200, 3000)) if r.random() < 0.4 else 0.0
        self.hp_tau_s = r.uniform(0.006, 0.04, N)  # disc capacitance x 1 Mohm bias resistor
        self.bias = 512 + r.uniform(-6, 6, N)
        self.sens = np.exp(r.normal(0, 0.3, N))
        self.weak_channel = int(r.integers(0, N)) if r.random() < 0.15 else -1
        if self.weak_channel >= 0:
            self.sens[self.weak_channel] *= r.uniform(0.15, 0.35)  # glue joint half loose
        self.noise_lsb = r.uniform(0.3, 0.9) * (2.2 if self.vref == 1.1 else 1.0)
        if self.mount == "plate":
            self.c_up = r.uniform(0.15, 0.45)
            self.c_down = min(0.6, self.c_up * r.uniform(0.7, 1.3))
            self.fc_cross = r.uniform(250, 700)
            self.direct = 1.0
        else:  # glued to the module wall beside the plate: neighbours hear nearly as well
            self.c_up = r.uniform(0.55, 0.85)
            self.c_down = min(0.9, self.c_up * r.uniform(0.85, 1.15))
            self.fc_cross = r.uniform(500, 1500)
            self.direct = r.uniform(0.5, 0.8)
        self.delay_per_level_s = r.uniform(0.1e-3, 0.35e-3)
        self.sympathy = r.uniform(0.25, 0.6)  # how much a neighbour plate rings along
        f1 = r.uniform(150, 400, N)
        ratios = np.stack([np.ones(N), r.uniform(1.6, 2.2, N), r.uniform(2.6, 3.4, N),
                           r.uniform(4.0, 5.0, N), r.uniform(6.0, 8.0, N)], axis=1)
        self.mode_f = f1[:, None] * ratios
        self.mode_q = r.uniform(6, 20, (N, 5))
        self.disc_f = r.uniform(3000, 7000, N)
        self.disc_tau = r.uniform(0.4e-3, 1.5e-3, N)
        self.floating_inputs = r.random() < 0.3  # bias network on the module side
        # --- table and room
        self.table_f = np.array([r.uniform(70, 180), r.uniform(250, 600)])
        self.table_tau = np.array([r.uniform(0.04, 0.15), r.uniform(0.015, 0.05)])
        self.c_table = r.uniform(0.6, 0.9)
        self.table_gain_lsb = r.uniform(8, 25)  # level-0 piezo LSB per m/s^2 of the table
        self.hum_lsb = r.uniform(0.1, 1.2) * (1 + 0.2 * np.arange(N)) * r.uniform(0.6, 1.4, N)
        self.hum_h3 = r.uniform(0.2, 0.6)
        self.grid_hz = r.uniform(49.95, 50.05)
        self.hum_phase = r.uniform(0, 2 * np.pi, N)
        # --- the shaft
        self.spacing_m = r.uniform(0.028, 0.034, N)
        self.hole_half = np.zeros(N)
        self.hole_half[1:] = r.uniform(0.2, 0.26, N - 1) + 0.025 * (7 - np.arange(1, N))
        self.p_catch = np.zeros(N)
        # the holes are not aligned: a cube stops on a plate or finds that plate's hole;
        # lower plates catch a little more often, so few cubes reach the ground floor
        self.p_catch[1:] = r.uniform(0.15, 0.3, N - 1) + 0.03 * (7 - np.arange(1, N))
        self.q_straight = r.uniform(0.15, 0.35)
        self.restitution = r.uniform(0.25, 0.45)
        # --- plates on their cells: how much of a cube's weight the cell sees, by place
        self.support = str(r.choice(["floating", "typical", "tight"], p=[0.25, 0.5, 0.25]))
        lo, hi = {"floating": (0.0, 0.12), "typical": (0.15, 0.4), "tight": (0.35, 0.6)}[
            self.support]
        self.rim_share = r.uniform(lo, hi, N)
        self.rim_contact = np.where(r.random((N, 4)) < 0.4, 0.0, r.uniform(0.3, 1.0, (N, 4)))
        self.cell_xy = r.uniform(-0.25, 0.25, (N, 2))
        self.creep_kappa = r.uniform(0.0, 0.35, N)
        self.creep_tau = r.uniform(4, 30, N)
        self.plate_g = r.uniform(8, 20, N)
        self.stiction_frac = r.uniform(0.01, 0.04)
        # --- load cells and HX711s
        self.cells = "mixed" if r.random() < 0.5 else "matched"
        if self.cells == "matched":
            self.rated_g = np.full(N, 100.0)
            self.sign = np.ones(N)
            if r.random() < 0.3:
                self.sign = -self.sign  # all mounted the same way round, upside down
        else:
            self.rated_g = r.choice([100.0, 200.0, 300.0], N, p=[0.5, 0.3, 0.2])
            self.sign = np.where(r.random(N) < 0.35, -1.0, 1.0)
            if np.all(self.rated_g == self.rated_g[0]) and np.all(self.sign == self.sign[0]):
                self.sign[int(r.integers(0, N))] *= -1
        self.mv_per_v = r.uniform(0.85, 1.15, N)
        self.counts_per_g = self.sign * self.mv_per_v * 1e-3 * 2**31 / self.rated_g
        self.offset_counts = (self.mv_per_v * r.uniform(-0.15, 0.15, N) * 1e-3 * 2**31
                              + self.counts_per_g * self.plate_g)
        self.cell_f0 = r.uniform(50, 160, N)
        self.cell_zeta = r.uniform(0.04, 0.15, N)
        self.hx_clock = "crystal" if r.random() < 0.4 else "internal"
        if self.hx_clock == "crystal":  # one 11.0592 MHz oscillator on every XI
            self.hx_rate = np.full(N, LOAD_TICK_HZ * (1 + r.uniform(-0.005, 0.005)))
        else:
            self.hx_rate = LOAD_TICK_HZ * r.uniform(0.97, 1.08, N)
        self.hx_phase = r.uniform(0, 1, N)
        self.hx_noise_counts = r.uniform(30, 120, N)
        self.wander_g = r.uniform(0.002, 0.01, N)
        self.warmup_g = r.uniform(0.005, 0.06, N) * np.where(r.random(N) < 0.5, -1, 1)
        self.warmup_tau = r.uniform(40, 300, N)
        self.hum_load_counts = r.uniform(5, 60, N)
        self.stack_leak = r.uniform(0.0, 0.006, N) * np.where(r.random(N) < 0.5, -1, 1)
        self.squeeze_leak = r.uniform(0.0005, 0.003, N)
        self.sleeve_leak = r.uniform(0.0005, 0.004, N)
        self.module_g = r.uniform(18, 35)
        self.loose_contacts = r.random() < 0.25
        self.boot_s = r.uniform(0.25, 1.6)
        # --- the cubes of this game box: one wood, a lot of paint per colour
        self.cube_g = r.uniform(0.35, 0.75)
        self.colour_factor = {c: float(r.uniform(0.92, 1.08)) for c in (*COLOURS, "red")}

    def share(self, level: int, x: float, y: float) -> float:
        """Fraction of a cube's weight the cell of ``level`` sees with the cube at (x, y).

        The plate rests on its cell and, where it touches them, on the rims of its opening:
        a cube near a touching rim puts part of its weight into the rim, not the cell.
        """
        xc, yc = self.cell_xy[level]
        ramps = (max(0.0, (x - xc) / (1 - xc)), max(0.0, (xc - x) / (1 + xc)),
                 max(0.0, (y - yc) / (1 - yc)), max(0.0, (yc - y) / (1 + yc)))
        s = self.rim_share[level] * sum(c * rr for c, rr in
                                        zip(self.rim_contact[level], ramps, strict=True))
        return float(np.clip(1.0 - s, 0.45, 1.0))

    def piezo_gain(self, source: int, wall_borne: bool = False) -> Arr:
        """Amplitude at each channel of a hit on plate ``source`` (crosstalk through the walls)."""
        d = np.arange(N) - source
        cu, cd = (math.sqrt(self.c_up), math.sqrt(self.c_down)) if wall_borne else (
            self.c_up, self.c_down)
        g = np.where(d >= 0, cu ** np.abs(d), cd ** np.abs(d))
        return np.asarray(g * self.direct * self.sens, float)

    def describe(self) -> dict[str, Any]:
        """The tower's figures as JSON, for the truth file."""
        return {
            "seed": self.seed, "mount": self.mount, "vref": self.vref,
            "piezo_scale": round(float(self.piezo_scale), 4),
            "adc_step_us": round(self.adc_step_s * 1e6, 1),
            "frontend_lp_hz": round(self.frontend_lp_hz, 1),
            "floating_inputs": bool(self.floating_inputs),
            "c_up": round(float(self.c_up), 4), "c_down": round(float(self.c_down), 4),
            "support": self.support, "cells": self.cells,
            "rated_g": self.rated_g.tolist(), "sign": self.sign.tolist(),
            "counts_per_g": [round(float(c), 2) for c in self.counts_per_g],
            "hx_clock": self.hx_clock, "hx_rate_hz": [round(float(x), 4) for x in self.hx_rate],
            "loose_contacts": bool(self.loose_contacts), "cube_g": round(float(self.cube_g), 4),
            "colour_factor": {c: round(v, 4) for c, v in self.colour_factor.items()},
            "p_catch": [round(float(x), 4) for x in self.p_catch],
            "creep_kappa": [round(float(x), 4) for x in self.creep_kappa],
            "n_batch": self.n_batch,
        }


# ----------------------------------------------------------------------------- a scene


@dataclass
class Cube:
    """One wooden cube: its colour and mass."""

    ident: int
    colour: str
    mass_g: float


@dataclass
class Segment:
    """A cube's weight on one plate: ramps from share ``f_a`` to ``f_b`` while it slides,
    then creeps towards the cell as the plate's rim contact relaxes."""

    level: int
    t_on: float
    t_rest: float
    t_off: float
    mass_g: float
    f_a: float
    f_b: float
    kappa: float = 0.0
    tau: float = 10.0


@dataclass
class Resting:
    """A cube lying on a plate."""

    cube: Cube
    level: int
    t_rest: float
    x: float
    y: float
    share: float
    seg: Segment


@dataclass
class Impact:
    """A short blow on a plate: impulse in g*m/s, contact time in s."""

    t: float
    level: int
    j: float
    tc: float
    kind: str
    share: float = 1.0


@dataclass
class Force:
    """A slow push on a plate or its mounting (g-force), trapezoid with a wobbling hold."""

    level: int
    t0: float
    t_up: float
    t_down: float
    t1: float
    peak_g: float
    wobble: float = 0.0


@dataclass
class Scene:
    """Everything that happens in one recording, in simulation seconds (0 = first set)."""

    tower: Tower
    scenario: str
    duration: float
    rng: np.random.Generator
    impacts: list[Impact] = field(default_factory=list)
    segments: list[Segment] = field(default_factory=list)
    forces: list[Force] = field(default_factory=list)
    base: list[tuple[float, float, Arr, Arr]] = field(default_factory=list)
    scrapes: list[tuple[float, float, int, float, float, float]] = field(default_factory=list)
    proximity: list[tuple[float, float, int, float]] = field(default_factory=list)
    talk: list[tuple[float, float, float, float]] = field(default_factory=list)
    usb: list[tuple[float, float, float]] = field(default_factory=list)
    disconnect: list[tuple[float, float, int]] = field(default_factory=list)
    stiction: list[tuple[float, int, float]] = field(default_factory=list)
    resting: list[Resting] = field(default_factory=list)
    landings: list[dict[str, Any]] = field(default_factory=list)
    knockdowns: list[dict[str, Any]] = field(default_factory=list)
    removals: list[dict[str, Any]] = field(default_factory=list)
    lifts: list[dict[str, Any]] = field(default_factory=list)
    closes: list[dict[str, Any]] = field(default_factory=list)
    knocks: list[dict[str, Any]] = field(default_factory=list)
    ambient: list[dict[str, Any]] = field(default_factory=list)
    hum_factor: float = 1.0
    next_ident: int = 0
    throws: int = 0

    # --- cubes and positions

    def new_cube(self, colour: str) -> Cube:
        m = self.tower.cube_g * self.tower.colour_factor[colour] * self.rng.normal(1, 0.03)
        self.next_ident += 1
        return Cube(self.next_ident, colour, float(m))

    def on_plate(self, level: int, t: float) -> list[Resting]:
        return [r for r in self.resting if r.level == level and r.t_rest <= t]

    def position(self, level: int, *, near_hole: bool) -> tuple[float, float, bool]:
        """A place on the plate: (x, y, against the wall)."""
        rng = self.rng
        inner = self.tower.hole_half[level] + CUBE_HALF + 0.03 if level else 0.0
        along = rng.uniform(-1 + CUBE_HALF, 1 - CUBE_HALF)
        wall = False
        if near_hole:
            rad = inner + rng.uniform(0, 0.15)
        elif rng.random() < 0.55:
            rad, wall = 1 - CUBE_HALF, True
        else:
            rad = rng.uniform(inner, 1 - CUBE_HALF)
        side = int(rng.integers(4))
        x, y = [(rad, along), (-rad, along), (along, rad), (along, -rad)][side]
        return float(x), float(y), wall

    def hit(self, t: float, level: int, j: float, tc: float, kind: str, share: float) -> None:
        self.impacts.append(Impact(t, level, j, tc, kind, share))
        tw = self.tower
        if kind in ("plate", "cube", "edge") and j > 0.2 and level > 0:
            # the plate slips a little on its rim contacts: the zero moves
            self.stiction.append((t, level, float(self.rng.normal(0, tw.stiction_frac)
                                                  * tw.cube_g * min(2.0, j / 0.7))))
        if tw.loose_contacts and j > 1.0 and self.rng.random() < 0.03:
            # a spring contact between two modules chatters: every level above it blinks
            first = int(self.rng.integers(2, N))
            self.disconnect.append((t, t + self.rng.uniform(0.003, 0.03), first))

    # --- a cube falling down the shaft

    def drop(self, cube: Cube, t: float, v: float, top: int, *, style: str,
             may_knock: bool) -> tuple[dict[str, Any], dict[str, Any] | None]:
        """Let ``cube`` fall from above plate ``top`` at speed ``v``; returns its landing
        (truth, simulation time) and the landing of a cube it knocked down, if any."""
        tw, rng = self.tower, self.rng
        e = tw.restitution
        m = cube.mass_g
        first: float | None = None
        knocked: dict[str, Any] | None = None
        slide_factor = STYLES[style][2]
        for level in range(top, -1, -1):
            h = tw.spacing_m[level]
            dt = (-v + math.sqrt(v * v + 2 * G * h)) / G
            t += dt
            v = math.sqrt(v * v + 2 * G * h)
            rest = level == 0 or rng.random() < tw.p_catch[level]
            if not rest:
                if rng.random() < tw.q_straight:  # through the hole, maybe grazing its edge
                    if rng.random() < 0.5:
                        x, y, _ = self.position(level, near_hole=True)
                        self.hit(t, level, m * v * rng.uniform(0.15, 0.45),
                                 rng.uniform(0.15e-3, 0.35e-3), "edge", tw.share(level, x, y))
                        first = t if first is None else first
                        if may_knock and knocked is None:
                            knocked = self.maybe_knock(t, level, m * v * 0.3, cube)
                        v *= rng.uniform(0.75, 0.95)
                    continue
                x, y, _ = self.position(level, near_hole=True)
                f = tw.share(level, x, y)
                self.hit(t, level, m * v * (1 + e), rng.uniform(0.4e-3, 0.9e-3), "plate", f)
                first = t if first is None else first
                if may_knock and knocked is None:
                    knocked = self.maybe_knock(t, level, m * v * (1 + e), cube)
                vb = e * v
                if vb > 0.15:
                    t += 2 * vb / G
                    self.hit(t, level, m * vb * (1 + e), rng.uniform(0.4e-3, 0.9e-3), "plate", f)
                roll = rng.uniform(0.03, 0.25)
                if rng.random() < 0.08:  # teeters on the hole's edge before tipping in
                    roll += rng.uniform(0.1, 0.6)
                self.segments.append(Segment(level, t, t, t + roll, m, f, f))
                self.scrapes.append((t, t + roll, level, 0.8 * m / 0.5, 250.0, 1200.0))
                t += roll
                v = rng.uniform(0.05, 0.3)
                continue
            # --- comes to rest on this plate
            x0, y0, _ = self.position(level, near_hole=level > 0)
            f0 = tw.share(level, x0, y0)
            j1 = m * v * (1 + e)
            self.hit(t, level, j1, rng.uniform(0.4e-3, 0.9e-3), "plate", f0)
            first = t if first is None else first
            t_weight_first = t
            if may_knock and knocked is None:
                knocked = self.maybe_knock(t, level, j1, cube)
            vb = e * v
            tb = t
            while vb > 0.12:
                tb += 2 * vb / G
                self.hit(tb, level, m * vb * (1 + e), rng.uniform(0.5e-3, 1.0e-3), "plate", f0)
                vb *= e
            slide = min(1.0, rng.uniform(0.04, 0.15)
                        + rng.exponential(0.1 * slide_factor * max(v, 0.3)))
            t_rest = tb + slide
            x1, y1, wall = self.position(level, near_hole=False)
            f1 = tw.share(level, x1, y1)
            if wall and rng.random() < 0.2:  # rests tilted, leaning on the wall
                f1 = max(0.4, f1 * rng.uniform(0.8, 0.95))
            if rng.random() < 0.35:
                self.hit(tb + rng.uniform(0.3, 0.9) * slide, level, m * rng.uniform(0.1, 0.4),
                         rng.uniform(0.2e-3, 0.5e-3), "wall", f1)
            for _ in range(int(rng.integers(0, 4))):  # tumbles over an edge
                self.hit(tb + rng.uniform(0, 1) * slide, level, m * rng.uniform(0.05, 0.2),
                         rng.uniform(0.3e-3, 0.7e-3), "plate", f1)
            if rng.random() < 0.6:  # the last tip onto a face
                self.hit(t_rest, level, m * rng.uniform(0.02, 0.06), rng.uniform(0.3e-3, 0.6e-3),
                         "plate", f1)
            self.scrapes.append((tb, t_rest, level, 1.2 * m / 0.5 * slide_factor, 200.0, 1500.0))
            seg = Segment(level, tb, t_rest, math.inf, m, f0, f1, tw.creep_kappa[level],
                          tw.creep_tau[level])
            self.segments.append(seg)
            self.resting.append(Resting(cube, level, t_rest, x1, y1, f1, seg))
            landing = {"t": t_rest, "floor": level, "cubes": 1, "knocked": False,
                       "t_first_impact": first, "t_weight": tb, "t_weight_first": t_weight_first,
                       "colour": cube.colour, "mass_g": m, "load_fraction": f1, "cube": cube.ident,
                       "style": style}
            return landing, knocked
        raise AssertionError("the base plate always catches")  # pragma: no cover

    def maybe_knock(self, t: float, level: int, j: float, by: Cube) -> dict[str, Any] | None:
        """A hit on ``level`` may push a resting cube near the hole down the shaft."""
        if level == 0:
            return None
        rng, tw = self.rng, self.tower
        near = [r for r in self.on_plate(level, t)
                if max(abs(r.x), abs(r.y)) < tw.hole_half[level] + CUBE_HALF + 0.2]
        if not near or rng.random() > min(0.5, 0.12 * j / 0.7 * math.sqrt(len(near))):
            return None
        victim = near[int(rng.integers(len(near)))]
        t_off = t + rng.uniform(0.02, 0.12)
        self.hit(t, level, j * 0.3, rng.uniform(0.05e-3, 0.15e-3), "cube", victim.share)
        self.leave(victim, t_off)
        landing, _ = self.drop(victim.cube, t_off, rng.uniform(0.1, 0.4), level - 1,
                               style="gentle", may_knock=False)
        landing.update(knocked=True, from_floor=level, t_knock=t_off)
        return landing

    def leave(self, r: Resting, t: float) -> None:
        r.seg.t_off = t
        self.resting.remove(r)

    # --- a throw

    def throw(self, t_release: float, colour: str | Cube, style: str,
              sleeve_p: float = 0.0) -> list[dict[str, Any]]:
        rng = self.rng
        cube = colour if isinstance(colour, Cube) else self.new_cube(colour)
        lo, hi, _ = STYLES[style]
        v = rng.uniform(lo, hi)
        t_entry = t_release + rng.uniform(0.03, 0.12)  # released just above the hole
        self.proximity.append((t_release - rng.uniform(0.5, 1.2), t_release + 0.15, 7,
                               rng.uniform(1.0, 4.0)))
        rim_p = {"gentle": 0.05, "normal": 0.15, "hard": 0.3}[style]
        if rng.random() < rim_p:
            self.hit(t_entry, 7, cube.mass_g * v * rng.uniform(0.1, 0.3), 0.3e-3, "rim", 0.0)
        if rng.random() < sleeve_p:
            t0 = t_release - rng.uniform(0.0, 0.2)
            t1 = t0 + rng.uniform(0.3, 1.5)
            self.sleeve(t0, t1)
        landing, knocked = self.drop(cube, t_entry, v, 7, style=style, may_knock=True)
        self.throws += 1
        landing.update(t_throw=t_release, throw=self.throws, caused_knockdown=False)
        out = [landing]
        if knocked is not None:
            landing["caused_knockdown"] = True
            knocked.update(by_throw=self.throws, caused_knockdown=False)
            self.knockdowns.append({"t": knocked["t_knock"], "from_floor": knocked["from_floor"],
                                    "to_floor": knocked["floor"], "cube": knocked["cube"],
                                    "by_throw": self.throws})
            out.append(knocked)
        self.landings += out
        return out

    def sleeve(self, t0: float, t1: float) -> None:
        """A sleeve brushes the top of the tower: fabric scratch, a light push on the walls."""
        rng = self.rng
        self.scrapes.append((t0, t1, 7, rng.uniform(1.5, 6.0), 150.0, 900.0))
        push = rng.uniform(10, 120)  # g-force on the walls of the top modules
        for level in range(N):
            self.forces.append(Force(level, t0, t0 + 0.1, t1 - 0.1, t1,
                                     push * self.tower.sleeve_leak[level], 0.3))
        self.ambient.append({"t": t0, "t_end": t1, "kind": "sleeve"})

    # --- room

    def knock(self, t: float, kind: str) -> None:
        """Something hits the table: it rings, the tower shakes with it."""
        rng, tw = self.rng, self.tower
        if kind == "bump":  # a chair or a knee against the table leg: low and heavy
            f = np.array([rng.uniform(15, 35), rng.uniform(60, 120)])
            tau = np.array([rng.uniform(0.1, 0.3), rng.uniform(0.03, 0.08)])
            amp = rng.uniform(0.3, 2.0) * np.array([1.0, 0.3])
        else:
            f = tw.table_f * rng.uniform(0.95, 1.05, 2)
            tau = tw.table_tau * rng.uniform(0.8, 1.2, 2)
            a = {"knuckle": (0.5, 4.0), "cup": (0.3, 2.0), "elbow": (0.5, 3.0)}[kind]
            amp = rng.uniform(*a) * np.array([1.0, rng.uniform(0.3, 0.8)])
        self.base.append((t, 0.0, f, np.stack([amp, tau])))
        self.knocks.append({"t": t, "kind": kind})

    def phone(self, t: float) -> None:
        """A phone buzzing on the table: 1-2 s of a motor's hum through the wood."""
        rng = self.rng
        t1 = t + rng.uniform(1.0, 2.0)
        f = np.array([rng.uniform(150, 230), 0.0])
        self.base.append((t, t1, f, np.stack([np.array([rng.uniform(0.1, 0.5), 0.0]),
                                              np.array([0.0, 0.0])])))
        self.ambient.append({"t": t, "t_end": t1, "kind": "phone"})

    def speak(self, t: float, dur: float, loud: float) -> None:
        self.talk.append((t, t + dur, self.rng.uniform(90, 230), loud))
        self.ambient.append({"t": t, "t_end": t + dur, "kind": "talk"})

    def usb_burst(self, t: float, amp: float) -> None:
        dur = self.rng.uniform(0.01, 0.1)
        self.usb.append((t, t + dur, amp))
        self.ambient.append({"t": t, "t_end": t + dur, "kind": "usb"})

    # --- hands in the tower

    def open_tower(self, t: float, k: int) -> tuple[float, list[Cube], list[Cube]]:
        """Grasp, lift modules k..7 (level k laid open), take every cube off plate k,
        put the stack back. Returns (close time, cubes taken out, cubes fallen out)."""
        rng, tw = self.rng, self.tower
        t_lift = t + rng.uniform(0.5, 1.2)
        # the hands hold the lower floors from the grasp until after the close
        self.scrapes.append((t, t_lift + 0.2, min(7, k + 1), rng.uniform(1.0, 5.0), 100.0, 800.0))
        self.impacts.append(Impact(t_lift, k, rng.uniform(0.3, 1.5), rng.uniform(3e-3, 8e-3),
                                   "soft", 0.3))
        self.lifts.append({"t": t_lift, "exposed": k})
        above = [r for r in self.resting if r.level > k]
        fallen: list[Cube] = []
        for r in above:
            if rng.random() < 0.03:
                tf = t_lift + rng.uniform(0.2, 1.0)
                self.leave(r, tf)
                fallen.append(r.cube)
                self.base.append((tf + 0.12, 0.0, tw.table_f.copy(), np.stack(
                    [np.array([0.05 * r.cube.mass_g, 0.0]), tw.table_tau])))
                self.ambient.append({"t": tf, "kind": "fallout", "from_floor": r.level,
                                     "colour": r.cube.colour})
        tr = t_lift + rng.uniform(1.0, 3.0)
        taken: list[Cube] = []
        here = sorted(self.on_plate(k, t_lift), key=lambda r: (r.cube.colour != "red", r.t_rest))
        while here:
            n = min(len(here), int(rng.choice([1, 1, 2, 2, 3])))
            group, here = here[:n], here[n:]
            t_press = tr - rng.uniform(0.2, 0.5)
            self.forces.append(Force(k, t_press, t_press + 0.08, tr - 0.02, tr,
                                     rng.uniform(2, 20), 0.2))
            self.impacts.append(Impact(t_press, k, rng.uniform(0.1, 0.5),
                                       rng.uniform(5e-3, 10e-3), "soft", 0.8))
            self.proximity.append((t_press - 0.5, tr + 0.3, k, rng.uniform(2, 5)))
            for r in group:
                self.leave(r, tr)
                taken.append(r.cube)
            self.removals.append({"t": tr, "floor": k, "cubes": len(group),
                                  "colours": [r.cube.colour for r in group]})
            tr += rng.uniform(0.6, 1.5)
        t_close = tr + rng.uniform(0.0, 0.8)
        self.closes.append({"t": t_close, "exposed": k})
        make = t_close + rng.uniform(0.01, 0.08)
        self.disconnect.append((t_lift, make, k + 1))
        self.proximity.append((t - 0.3, t_close + 0.5, k, rng.uniform(2, 5)))
        squeeze = rng.uniform(300, 1000)  # g-force of the hand holding the lower floors
        stack = tw.module_g * (N - k)
        for level in range(k + 1):
            self.forces.append(Force(level, t, t_lift, t_close, t_close + 0.3,
                                     squeeze * tw.squeeze_leak[level], 0.2))
            self.forces.append(Force(level, t_lift - 0.05, t_lift + 0.05, t_close - 0.03,
                                     t_close + 0.03, -stack * tw.stack_leak[level]))
        self.impacts.append(Impact(t_close, k, rng.uniform(1.0, 4.0), rng.uniform(4e-3, 8e-3),
                                   "soft", 0.3))
        self.base.append((t_close, 0.0, tw.table_f.copy(),
                          np.stack([np.array([rng.uniform(0.1, 0.6), 0.0]), tw.table_tau])))
        # cubes carried in the stack may have slid while it was tilted
        for r in [r for r in self.resting if r.level > k]:
            if rng.random() < 0.3:
                x, y, _ = self.position(r.level, near_hole=False)
                f = tw.share(r.level, x, y)
                old = r.seg
                old.t_off = t_close
                seg = Segment(r.level, t_close, t_close, math.inf, r.cube.mass_g, f, f,
                              0.5 * tw.creep_kappa[r.level], tw.creep_tau[r.level])
                self.segments.append(seg)
                r.seg, r.x, r.y, r.share = seg, x, y, f
        for _ in range(int(rng.integers(0, 4))):  # the cardboard creaks as it settles
            self.impacts.append(Impact(t_close + rng.uniform(0.5, 4.0), int(rng.integers(0, N)),
                                       rng.uniform(0.02, 0.1), 0.3e-3, "plate", 1.0))
        return t_close, taken, fallen


# ----------------------------------------------------------------------------- scenarios


def style_of(rng: np.random.Generator, favourite: str) -> str:
    if rng.random() < 0.7:
        return favourite
    return str(rng.choice(list(STYLES)))


def run_single(sc: Scene, t: float, *, gap: tuple[float, float], sleeve_p: float = 0.0) -> None:
    rng = sc.rng
    fav = str(rng.choice(list(STYLES), p=[0.3, 0.5, 0.2]))
    colours = list(COLOURS)
    while t < sc.duration - 5.0:
        sc.throw(t, str(rng.choice(colours)), style_of(rng, fav), sleeve_p)
        t += rng.uniform(*gap)


def run_rapid(sc: Scene, t: float) -> None:
    rng = sc.rng
    fav = str(rng.choice(list(STYLES)))
    while t < sc.duration - 5.0:
        for _ in range(int(rng.integers(2, 6))):
            if t >= sc.duration - 5.0:
                break
            sc.throw(t, str(rng.choice(COLOURS)), style_of(rng, fav))
            t += rng.uniform(0.3, 0.8)
        t += rng.uniform(3.0, 6.0)


def run_noisy(sc: Scene, t0: float) -> None:
    rng = sc.rng
    sc.hum_factor = rng.uniform(2.0, 4.0)
    run_single(sc, t0, gap=(2.5, 7.0), sleeve_p=0.25)
    end = sc.duration - 1.0
    for t in poisson(rng, t0, end, 6 / 60):
        sc.knock(t, str(rng.choice(["knuckle", "cup", "bump"], p=[0.5, 0.3, 0.2])))
    for t in poisson(rng, t0, end, 8 / 60):
        sc.speak(t, rng.uniform(1.0, 4.0), rng.uniform(0.5, 4.0))
    for t in poisson(rng, t0, end, 4 / 60):
        sc.usb_burst(t, rng.uniform(2.0, 12.0))
    if rng.random() < 0.5:
        sc.phone(rng.uniform(t0, end - 2))


def poisson(rng: np.random.Generator, t0: float, t1: float, rate: float) -> list[float]:
    out: list[float] = []
    t = t0
    while True:
        t += rng.exponential(1 / rate)
        if t >= t1:
            return out
        out.append(float(t))


@dataclass
class Game:
    """Mord im Arosa by its rules (rules/004_*.txt), as far as the tower sees it."""

    players: list[str]
    styles: dict[str, str]
    supply: dict[str, int]
    sheet: dict[str, list[int]]
    crime_scenes: set[int] = field(default_factory=set)
    victims_found: int = 0
    phase: str = "prologue"
    log: list[str] = field(default_factory=list)

    def over(self) -> bool:
        return any(sum(v) >= 10 for v in self.sheet.values()) or any(
            n <= 0 for n in self.supply.values())

    def to_sheet(self, colour: str, floor: int, n: int) -> None:
        n = min(n, self.supply[colour])
        self.supply[colour] -= n
        self.sheet[colour][floor] += n
        if n:
            self.log.append(f"sheet {colour} {floor} {n}")


def run_game(sc: Scene, t: float) -> dict[str, Any]:
    rng = sc.rng
    n_players = int(rng.integers(3, 6))
    players = [str(c) for c in rng.permutation(COLOURS)[:n_players]]
    styles = {p: str(rng.choice(list(STYLES), p=[0.3, 0.5, 0.2])) for p in players}
    game = Game(players, styles, {p: 20 for p in players}, {p: [0] * N for p in players})
    sc.hum_factor = rng.uniform(1.0, 1.8)
    end = sc.duration
    last_rest = t

    def throw(who: str, what: str | Cube, t_at: float) -> float:
        nonlocal last_rest
        colour = what.colour if isinstance(what, Cube) else what
        out = sc.throw(t_at, what, style_of(rng, game.styles[who]), 0.1)
        game.log.append(f"throw {colour} {out[0]['floor']}"
                        + (" knocked-down" if len(out) > 1 else ""))
        last_rest = max([last_rest] + [x["t"] for x in out])
        return t_at

    def pace(t_at: float) -> float:
        return t_at + (rng.uniform(0.5, 1.2) if rng.random() < 0.15 else rng.uniform(1.8, 4.0))

    # prologue: both victims, then two clues per player in turn
    thrower = players[int(rng.integers(n_players))]
    for _ in range(2):
        t = pace(throw(thrower, "red", t))
    for p in players:
        for _ in range(2):
            if t > end - 5.0:
                break
            game.supply[p] -= 1
            t = pace(throw(p, p, t))
    game.phase = "act1"
    turn = int(rng.integers(n_players))  # whoever was last inside a hotel
    while not game.over():
        t = max(t, last_rest) + rng.uniform(2.0, 4.5)
        if t > end - 14.0:
            break
        who = players[turn % n_players]
        owed: list[str | Cube] = []
        if game.phase == "act1":
            k = int(rng.integers(0, N))
            game.log.append(f"inspect {who} {k}")
            present = [r.cube for r in sc.on_plate(k, t)]
            t_close, taken, fallen = sc.open_tower(t, k)
            victims = [c for c in taken if c.colour == "red"]
            clues = [c for c in taken if c.colour != "red"]
            if victims:
                game.crime_scenes.add(k)
                game.victims_found += len(victims)
                for p in players:
                    if p != who:
                        game.to_sheet(p, k, sum(c.colour == p for c in present))
            owed += clues
            if not victims:
                owed.append(who)
            if game.victims_found >= 2:
                game.phase = "act2"
                game.log.append("act2")
        else:
            mine_on_sheet = sum(game.sheet[who])
            k = int(rng.integers(0, N))
            present = [r.cube for r in sc.on_plate(k, t)]
            t_close, taken, fallen = sc.open_tower(t, k)
            owed += taken
            if mine_on_sheet and rng.random() < 0.35:
                game.log.append(f"cover {who} {k}")
                mine = sum(c.colour == who for c in present)
                back = min(mine, game.sheet[who][k])
                game.sheet[who][k] -= back
                game.supply[who] += back
                if mine == 0:
                    owed.append(who)
            else:
                others = [p for p in players if p != who]
                suspects = [str(s) for s in rng.permutation(others)[:int(rng.integers(1, 3))]]
                game.log.append(f"suspect {who} {k} {','.join(suspects)}")
                if k == 0 and not any(c.colour == who for c in present):
                    owed += [who] * len(suspects)  # the ground-floor case
                else:
                    for s in suspects:
                        n = sum(c.colour == s for c in present)
                        if n:
                            game.to_sheet(s, k, n)
                        else:
                            owed.append(who)
        owed += fallen  # cubes that fell out while lifting go back in at the end of the turn
        game.log.append(f"close {k}")
        t = t_close + rng.uniform(1.2, 2.5)
        for what in owed:
            if game.over() or t > end - 5.0:
                break
            if isinstance(what, str):
                game.supply[what] -= 1
            t = pace(throw(who, what, t))
        turn += 1
    if game.over():
        game.phase = "over"
        game.log.append("over")
    return {"players": players, "styles": styles, "log": game.log, "supply": game.supply,
            "sheet": game.sheet, "crime_scenes": sorted(game.crime_scenes), "phase": game.phase}


def talk_through_game(sc: Scene, t0: float) -> None:
    rng = sc.rng
    for t in poisson(rng, t0, sc.duration - 1.0, 6 / 60):
        sc.speak(t, rng.uniform(0.8, 3.0), rng.uniform(0.3, 2.0))
    for t in poisson(rng, t0, sc.duration - 1.0, 0.8 / 60):
        sc.knock(t, "elbow")
    for t in poisson(rng, t0, sc.duration - 1.0, 0.5 / 60):
        sc.usb_burst(t, rng.uniform(1.0, 6.0))


# ----------------------------------------------------------------------------- rendering


def render_piezo(sc: Scene, n: int) -> np.ndarray[Any, np.dtype[np.uint16]]:
    """ADC samples (n sets x 8), sampled as the AVR does: channel k a few us after k-1."""
    tw, rng = sc.tower, sc.rng
    dt = 1.0 / FS
    skew = np.arange(N) * tw.adc_step_s
    mech = np.zeros((n, N))
    amp_scale = P_REF_LSB * tw.piezo_scale

    def lp(f: Arr, fc: float) -> Arr:
        return np.asarray(1 / np.sqrt(1 + (f / fc) ** 2)) if fc > 0 else np.ones_like(f)

    for imp in sc.impacts:
        i0 = int(math.ceil(imp.t * FS))
        if i0 >= n or imp.j <= 0:
            continue
        i0 = max(i0, 0)
        wall_borne = imp.kind in ("rim", "wall", "soft")
        src = imp.level
        gains = tw.piezo_gain(src, wall_borne) * amp_scale * imp.j ** 0.9
        if imp.kind == "rim":
            gains *= 0.6
        if gains.max() < 0.2:
            continue
        d = np.abs(np.arange(N) - src)
        f_src = tw.mode_f[src]
        tau_src = tw.mode_q[src] / (np.pi * f_src)
        win = min(n - i0, int(FS * min(0.6, 6 * float(tau_src.max()) + 0.01)) + 2)
        t = (i0 + np.arange(win))[:, None] * dt + skew[None, :] - imp.t
        t = t - d[None, :] * tw.delay_per_level_s
        on = t >= 0
        spec = 1 / np.sqrt(1 + (1.3 * f_src * imp.tc) ** 4)
        w = rng.uniform(0.3, 1.0, 5) / np.arange(1, 6) ** 0.6 * spec * lp(f_src, tw.frontend_lp_hz)
        w = w / max(w.sum(), 1e-9) * spec.max()
        phase = rng.uniform(-0.3, 0.3, 5)
        cross = lp(f_src[None, :], tw.fc_cross) ** d[:, None]  # (ch, mode)
        a = gains[:, None] * cross * w[None, :]  # (ch, mode)
        tt = np.where(on, t, 0.0)[:, :, None]
        sig = (a[None] * np.exp(-tt / tau_src) * np.sin(2 * np.pi * f_src * tt + phase)).sum(2)
        # neighbours' own plates ring along (sympathetic modes, a short attack)
        f_rx = tw.mode_f[:, :3]
        tau_rx = tw.mode_q[:, :3] / (np.pi * f_rx)
        spec_rx = 1 / np.sqrt(1 + (1.3 * f_rx * imp.tc) ** 4) * lp(f_rx, tw.frontend_lp_hz)
        a_rx = np.where(d[:, None] > 0, gains[:, None] * tw.sympathy * spec_rx / 3, 0.0)
        env = (1 - np.exp(-tt / 2e-3)) * np.exp(-tt / tau_rx[None])
        sig += (a_rx[None] * env * np.sin(2 * np.pi * f_rx[None] * tt)).sum(2)
        if imp.kind != "soft":
            # the disc's own resonance, kHz: no anti-alias filter, so it folds down
            f_d = tw.disc_f[src]
            a_d = 0.5 * gains[src] * float(1 / np.sqrt(1 + (1.3 * f_d * imp.tc) ** 4)) * float(
                lp(np.array([f_d]), tw.frontend_lp_hz)[0])
            td = tt[:, src, 0]
            sig[:, src] += a_d * np.exp(-td / tw.disc_tau[src]) * np.sin(2 * np.pi * f_d * td)
        mech[i0:i0 + win] += np.where(on, sig, 0.0)

    # slides, rolls, fingers and sleeves: band-limited scratching
    for t0, t1, level, amp, f_lo, f_hi in sc.scrapes:
        i0, i1 = max(0, int(t0 * FS)), min(n, int(t1 * FS))
        if i1 - i0 < 4:
            continue
        b, a_ = signal.butter(2, [f_lo / (FS / 2), min(0.95, f_hi / (FS / 2))], "bandpass")
        x = signal.lfilter(b, a_, rng.normal(0, 1, i1 - i0))
        env = np.clip(np.sin(np.linspace(0, np.pi, i1 - i0)), 0, 1) ** 0.5
        g = tw.piezo_gain(level, True) * tw.piezo_scale * amp
        mech[i0:i1] += (x * env)[:, None] * g[None, :]

    # the table: base acceleration, strongest at the bottom of the tower
    accel = render_base(sc, n)
    table = tw.table_gain_lsb * tw.piezo_scale * tw.c_table ** np.arange(N) * tw.sens
    mech += accel[:, None] * table[None, :]

    # talk: air-borne, the whole tower hears it about alike
    for t0, t1, f0, loud in sc.talk:
        i0, i1 = max(0, int(t0 * FS)), min(n, int(t1 * FS))
        if i1 <= i0:
            continue
        tt = np.arange(i0, i1) * dt
        f_inst = f0 * (1 + 0.12 * np.sin(2 * np.pi * 0.7 * tt + rng.uniform(0, 6)))
        ph = 2 * np.pi * np.cumsum(f_inst) * dt
        voice = np.zeros(i1 - i0)
        for h in range(1, 7):
            voice += np.sin(h * ph) / h
        syll = np.abs(np.sin(np.pi * rng.uniform(3, 6) * (tt - t0))) ** 2
        syll *= np.clip(np.sin(np.pi * (tt - t0) / (t1 - t0)), 0, 1) ** 0.3
        g = loud * tw.piezo_scale * tw.sens * rng.uniform(0.6, 1.4, N)
        mech[i0:i1] += (voice * syll)[:, None] * g[None, :]

    # AC coupling: disc capacitance into its 1 Mohm bias resistor
    for k in range(N):
        alpha = tw.hp_tau_s[k] / (tw.hp_tau_s[k] + dt)
        mech[:, k] = signal.lfilter([alpha, -alpha], [1, -alpha], mech[:, k])

    # mains hum, louder with a hand near the high-impedance inputs
    t_all = np.arange(n) * dt
    env = np.ones((n, N))
    for t0, t1, level, factor in sc.proximity:
        i0, i1 = max(0, int(t0 * FS)), min(n, int(t1 * FS))
        if i1 <= i0:
            continue
        ramp = np.clip(np.sin(np.linspace(0, np.pi, i1 - i0)), 0, 1) ** 0.5
        near = 1.0 / (1 + np.abs(np.arange(N) - level))
        env[i0:i1] += (factor - 1) * ramp[:, None] * near[None, :]
    for k in range(N):
        ph = 2 * np.pi * tw.grid_hz * (t_all + skew[k]) + tw.hum_phase[k]
        mech[:, k] += sc.hum_factor * tw.hum_lsb[k] * env[:, k] * (
            np.sin(ph) + tw.hum_h3 * np.sin(3 * ph + 0.7))
    # USB ground bursts: the same on every channel (the 1 kHz frame tick folds to Nyquist)
    for t0, t1, amp in sc.usb:
        i0, i1 = max(0, int(t0 * FS)), min(n, int(t1 * FS))
        if i1 <= i0:
            continue
        m = i1 - i0
        burst = amp * (0.6 * (-1.0) ** np.arange(m) + 0.4 * rng.standard_t(3, m) / 3)
        mech[i0:i1] += burst[:, None] * rng.uniform(0.7, 1.3, N)[None, :]
    mech += rng.normal(0, tw.noise_lsb, (n, N))

    # lifted modules: their piezo inputs are cut off at the spring contacts
    for t_break, t_make, first in sc.disconnect:
        i0, i1 = max(0, int(t_break * FS)), min(n, int(t_make * FS) + 1)
        if i1 <= i0 or first >= N:
            continue
        for k in range(first, N):
            if tw.floating_inputs:  # a floating pin: the S/H cap keeps the previous channel
                ghost = 0.8 * mech[i0:i1, k - 1] + 20 * tw.hum_lsb[k] * np.sin(
                    2 * np.pi * tw.grid_hz * t_all[i0:i1])
                mech[i0:i1, k] = ghost
            else:
                mech[i0:i1, k] = rng.normal(0, 0.5 * tw.noise_lsb, i1 - i0)
            for i_pop in (i0, i1):  # the coupling capacitor recharges: a decaying step
                m = min(n - i_pop, int(5 * tw.hp_tau_s[k] * FS) + 1)
                if m > 0:
                    mech[i_pop:i_pop + m, k] += rng.uniform(-150, 150) * np.exp(
                        -np.arange(m) * dt / tw.hp_tau_s[k])
    out = np.clip(np.rint(mech + tw.bias[None, :]), 0, 1023)
    return out.astype(np.uint16)


def render_base(sc: Scene, n: int) -> Arr:
    """Acceleration of the table top under the tower (m/s^2), per set."""
    dt = 1.0 / FS
    acc = np.zeros(n)
    for t0, t_end, f, at in sc.base:
        amp, tau = at[0], at[1]
        i0 = max(0, int(math.ceil(t0 * FS)))
        if i0 >= n:
            continue
        if t_end > t0:  # a steady buzz between t0 and t_end
            i1 = min(n, int(t_end * FS))
            tt = np.arange(i0, i1) * dt - t0
            acc[i0:i1] += amp[0] * np.sin(2 * np.pi * f[0] * tt) * np.minimum(1, tt / 0.05)
            continue
        win = min(n - i0, int(FS * 6 * float(tau.max())) + 2)
        tt = np.arange(i0, i0 + win) * dt - t0
        for a, ff, ta in zip(amp, f, tau, strict=True):
            if a > 0 and ta > 0:
                acc[i0:i0 + win] += a * np.exp(-tt / ta) * np.sin(2 * np.pi * ff * tt)
    return acc


def render_load_g(sc: Scene, n: int) -> Arr:
    """What each cell carries (g-force, per set, tare excluded), before the cell's dynamics."""
    tw = sc.tower
    dt = 1.0 / FS
    load = np.zeros((n, N))
    t_all = np.arange(n) * dt
    for s in sc.segments:
        i0 = max(0, int(math.ceil(s.t_on * FS)))
        i1 = n if math.isinf(s.t_off) else min(n, int(math.ceil(s.t_off * FS)))
        if i1 <= i0:
            continue
        tt = t_all[i0:i1]
        if s.t_rest > s.t_on:
            frac = np.clip((tt - s.t_on) / (s.t_rest - s.t_on), 0, 1)
        else:
            frac = np.ones_like(tt)
        f = s.f_a + (s.f_b - s.f_a) * frac
        if s.kappa > 0:
            age = np.maximum(0.0, tt - s.t_rest)
            f = f + s.kappa * (1 - s.f_b) * (1 - np.exp(-age / s.tau))
        load[i0:i1, s.level] += s.mass_g * f
    for fo in sc.forces:
        i0, i1 = max(0, int(fo.t0 * FS)), min(n, int(fo.t1 * FS))
        if i1 <= i0:
            continue
        tt = t_all[i0:i1]
        up = np.clip((tt - fo.t0) / max(fo.t_up - fo.t0, dt), 0, 1)
        down = np.clip((fo.t1 - tt) / max(fo.t1 - fo.t_down, dt), 0, 1)
        shape = np.minimum(0.5 - 0.5 * np.cos(np.pi * up), 0.5 - 0.5 * np.cos(np.pi * down))
        if fo.wobble:  # a hand is no vice: its grip wanders, slowly and irregularly
            knots = sc.rng.normal(0, 1, int((fo.t1 - fo.t0) * 8) + 4)
            knots = signal.lfilter([0.5], [1, -0.5], knots) / 1.15
            shape = shape * (1 + fo.wobble * np.interp(tt, fo.t0 + np.arange(len(knots)) / 8,
                                                       knots))
        load[i0:i1, fo.level] += fo.peak_g * shape
    for t, level, shift in sc.stiction:
        i0 = max(0, int(math.ceil(t * FS)))
        if i0 < n:
            load[i0:, level] += shift
    for imp in sc.impacts:  # the blow itself, as one sample of force
        i = int(math.ceil(imp.t * FS))
        if 0 <= i < n and imp.kind not in ("rim", "table"):
            load[i, imp.level] += imp.j / G * FS * imp.share
    accel = render_base(sc, n)
    load += (load + tw.plate_g[None, :]) * (accel[:, None] / G)
    return load


def render_load(sc: Scene, n: int) -> tuple[Arr, np.ndarray[Any, np.dtype[np.uint8]],
                                             np.ndarray[Any, np.dtype[np.int64]]]:
    """The firmware's LOAD readings: (read times s, valid bits, counts (reads x 8))."""
    tw, rng = sc.tower, sc.rng
    dt = 1.0 / FS
    load = render_load_g(sc, n)
    t_all = np.arange(n) * dt
    cells = np.zeros((n, N))
    for k in range(N):
        w0 = 2 * np.pi * tw.cell_f0[k]
        b, a = signal.bilinear([w0 * w0], [1, 2 * tw.cell_zeta[k] * w0, w0 * w0], FS)
        zi = signal.lfilter_zi(b, a) * load[0, k]
        cells[:, k], _ = signal.lfilter(b, a, load[:, k], zi=zi)
    # slow things: warm-up of the gauges after boot, air and floor wander, a little hum
    boot = t_all + tw.boot_s
    cells += tw.warmup_g[None, :] * (1 - np.exp(-boot[:, None] / tw.warmup_tau[None, :]))
    step = max(1, FS // 20)
    coarse = rng.normal(0, 1, (n // step + 2, N))
    coarse = signal.lfilter([0.02], [1, -0.98], coarse, axis=0)
    coarse *= tw.wander_g / max(1e-9, float(np.std(coarse)) if coarse.size else 1.0)
    cells += np.repeat(coarse, step, axis=0)[:n]
    cells += (tw.hum_load_counts / np.abs(tw.counts_per_g))[None, :] * np.sin(
        2 * np.pi * tw.grid_hz * t_all)[:, None]
    # HX711: sinc^4 over one conversion period, sampled at its own conversions
    values = np.zeros((n, N))
    for k in range(N):
        length = max(2, int(round(FS / tw.hx_rate[k])))
        y = cells[:, k]
        for _ in range(4):  # one boxcar per pass; before the first set, as at the first set
            c = np.cumsum(np.concatenate([np.full(length, y[0]), y]))
            y = (c[length:length + n] - c[:n]) / length
        values[:, k] = y
    end = n * dt
    # the firmware's reads
    if tw.hx_clock == "crystal":  # all chips on one clock: read when level 0 is ready
        reads = conversions(sc, 0, end) + 180e-6
    else:  # own oscillators: read at the AVR's timer tick whichever chips are ready
        period = 1 / LOAD_TICK_HZ
        reads = np.arange(tw.hx_phase[0] * period + period, end, period) + 150e-6
    reads = reads[reads < end - 1e-3]
    reads = reads + rng.uniform(0, 60e-6, len(reads))  # ISR latency
    valid = np.zeros(len(reads), np.uint8)
    counts = np.zeros((len(reads), N), np.int64)
    for k in range(N):
        conv = conversions(sc, k, end)
        idx = np.searchsorted(conv, reads, side="right") - 1  # last conversion before a read
        prev = np.concatenate([[-np.inf], reads[:-1]])
        ok = (idx >= 0) & (conv[np.maximum(idx, 0)] > prev)
        at = np.clip((conv[np.maximum(idx, 0)] * FS).astype(np.int64), 0, n - 1)
        raw = (tw.offset_counts[k] + tw.counts_per_g[k] * values[at, k]
               + rng.normal(0, tw.hx_noise_counts[k], len(reads)))
        raw = np.clip(np.rint(raw), -(2**23), 2**23 - 1).astype(np.int64)
        counts[:, k] = np.where(ok, raw, 0)
        valid |= (ok.astype(np.uint8) << k).astype(np.uint8)
    return reads, valid, counts


def conversions(sc: Scene, k: int, end: float) -> Arr:
    """When chip ``k`` finishes a conversion: it restarts after every power cut (a lift or a
    chattering contact) and gives its first settled result four periods later."""
    tw = sc.tower
    period = 1 / tw.hx_rate[k]
    cuts = sorted((a, b) for a, b, first in sc.disconnect if k >= first)
    merged: list[list[float]] = []
    for a, b in cuts:
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    starts = [(-tw.hx_phase[k] * period, 1)] + [(b, 4) for _, b in merged]
    stops = [a for a, _ in merged] + [end]
    out = []
    for (t0, first), t1 in zip(starts, stops, strict=True):
        m = np.arange(first, max(first, int((t1 - t0) / period) + 1))
        tc = t0 + m * period
        out.append(tc[(tc < t1) & (tc > t0)])
    return np.concatenate(out)


# ----------------------------------------------------------------------------- the wire


def encode_stream(tw: Tower, piezo: np.ndarray[Any, np.dtype[np.uint16]], reads: Arr,
                  valid: np.ndarray[Any, np.dtype[np.uint8]],
                  counts: np.ndarray[Any, np.dtype[np.int64]],
                  rng: np.random.Generator) -> tuple[bytes, float]:
    """The device's bytes from boot; returns (bytes, stream zero in simulation seconds)."""
    t0_us = int(tw.boot_s * 1e6)
    n = len(piezo)
    msgs: list[tuple[float, int, int, bytes]] = []  # (ready s, order, type, body)
    hello = struct.pack("<BBBBBBHHB", 1, *tw.fw, N, N, tw.piezo_rate, tw.load_rate, 10)
    msgs.append((-1.0, 0, 0x01, hello + tw.device_id))
    samples = piezo.astype("<u2")
    for i in range(0, n, tw.n_batch):
        j = min(n, i + tw.n_batch)
        t_us = (t0_us + i * 1_000_000 // FS) & 0xFFFFFFFF
        body = struct.pack("<IB", t_us, j - i) + samples[i:j].tobytes()
        msgs.append(((j - 1) / FS + 30e-6, 1, 0x02, body))
    missing = np.cumsum([N - bin(int(v)).count("1") for v in valid])
    for t, v, row in zip(reads, valid, counts, strict=True):
        t_us = (t0_us + int(t * 1e6)) & 0xFFFFFFFF
        body = struct.pack("<IB", t_us, int(v)) + b"".join(s24(int(c)) for c in row)
        msgs.append((float(t) + 90e-6, 2, 0x03, body))
    end = n / FS
    for s in range(1, int(end) + 1):
        up = int(tw.boot_s * 1000) + s * 1000
        i = int(np.searchsorted(reads, s)) - 1
        timeouts = int(missing[i]) if i >= 0 else 0
        body = struct.pack("<IHHHBB", up & 0xFFFFFFFF, 0, 0, timeouts & 0xFFFF,
                           int(rng.integers(35, 60)), 0)
        msgs.append((float(s) - 0.0003, 3, 0x04, body))
    msgs.sort(key=lambda m: (m[0], m[1]))
    out = bytearray()
    zero: float | None = None
    for seq, (_ready, _, mtype, body) in enumerate(msgs):
        out += frame(mtype, seq, body)
        if zero is None and mtype in (0x02, 0x03):
            zero = (struct.unpack_from("<I", body)[0] - t0_us) / 1e6
    assert zero is not None
    return bytes(out), zero


# ----------------------------------------------------------------------------- one recording


def build_scene(seed: int, scenario: str, duration: float) -> tuple[Scene, dict[str, Any]]:
    """The events of one recording (simulation time) and the game, if one was played."""
    tw = Tower(seed)
    rng = np.random.default_rng([SEED_KEY, seed, 1 + SCENARIOS.index(scenario)])
    sc = Scene(tw, scenario, duration, rng)
    # an empty, quiet tower first (detect tares on it); a hand nears the top up to 1.2 s
    # before the first release
    t_quiet = rng.uniform(5.2, 7.0)
    extra: dict[str, Any] = {}
    if scenario == "single":
        run_single(sc, t_quiet, gap=(3.0, 8.0))
    elif scenario == "rapid":
        run_rapid(sc, t_quiet)
    elif scenario == "noisy":
        run_noisy(sc, t_quiet)
    elif scenario == "game":
        talk_through_game(sc, t_quiet)
        extra["game"] = run_game(sc, t_quiet)
    else:
        raise ValueError(f"unknown scenario {scenario!r}")
    extra["quiet_s"] = t_quiet
    return sc, extra


def make_recording(seed: int, scenario: str, duration: float, out: Path) -> tuple[Path, Path]:
    """Write ``{scenario}_t{seed}.bin`` and its ``.truth.json`` into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    sc, extra = build_scene(seed, scenario, duration)
    n = int(round(duration * FS))
    piezo = render_piezo(sc, n)
    reads, valid, counts = render_load(sc, n)
    data, zero = encode_stream(sc.tower, piezo, reads, valid, counts, sc.rng)
    truth = truth_doc(sc, extra, zero)
    bin_path = out / f"{scenario}_t{seed}.bin"
    truth_path = out / f"{scenario}_t{seed}.truth.json"
    bin_path.write_bytes(data)
    truth_path.write_text(json.dumps(truth, indent=1) + "\n")
    return bin_path, truth_path


def truth_doc(sc: Scene, extra: dict[str, Any], zero: float) -> dict[str, Any]:
    """The truth file (format towerear-crosscheck-truth/1), times in stream seconds."""

    def st(t: float) -> float:
        return round(t - zero, 5)

    def conv(d: dict[str, Any]) -> dict[str, Any]:
        return {k: (st(v) if k.startswith("t") and isinstance(v, float) else
                    round(v, 5) if isinstance(v, float) else v) for k, v in d.items()}

    landings = sorted((dict(x) for x in sc.landings), key=lambda x: x["t"])
    index = {x["throw"]: i for i, x in enumerate(landings) if not x["knocked"]}
    for x in landings:
        if x["knocked"]:
            x["by"] = index[x["by_throw"]]  # index of the knocking throw in this list
    dur = sc.duration
    for x in landings:  # nothing may end after the recording
        assert x["t"] < dur - 0.05, x
    kinds = {"landings": landings, "knockdowns": sc.knockdowns, "removals": sc.removals,
             "lifts": sc.lifts, "closes": sc.closes, "knocks": sorted(sc.knocks,
                                                                      key=lambda k: k["t"])}
    doc: dict[str, Any] = {
        "format": FORMAT, "model": "J", "scenario": sc.scenario, "seed": sc.tower.seed,
        "duration_s": sc.duration, "cells": sc.tower.cells,
    }
    for kind, items in kinds.items():
        doc[kind] = [conv(x) for x in items]
    doc["damage"] = []
    doc["ambient"] = [conv(x) for x in sorted(sc.ambient, key=lambda a: a["t"])]
    doc["quiet_s"] = st(extra["quiet_s"])
    doc["tower"] = sc.tower.describe()
    if "game" in extra:
        doc["game"] = extra["game"]
    return doc


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--towers", type=int, default=8)
    p.add_argument("--first-seed", type=int, default=1)
    p.add_argument("--duration", type=float, default=120.0)
    p.add_argument("--scenarios", nargs="+", default=list(SCENARIOS), choices=SCENARIOS)
    args = p.parse_args(argv)
    if args.duration < 15:
        p.error("--duration must be at least 15 s (4-7 s of quiet tower come first)")
    for seed in range(args.first_seed, args.first_seed + args.towers):
        for scenario in args.scenarios:
            bin_path, _ = make_recording(seed, scenario, args.duration, args.out)
            print(f"{bin_path.name}: {bin_path.stat().st_size} bytes", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
