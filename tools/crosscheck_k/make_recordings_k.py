#!/usr/bin/env python3
"""Cross-check model K: recordings of simulated towers, with ground truth, from physics
written apart from the detector (see README.md beside this file).

Usage::

    .venv/bin/python tools/crosscheck_k/make_recordings_k.py --out DIR --towers N \
        --first-seed S --duration SECONDS [--scenarios single rapid noisy game]

Writes ``{scenario}_t{seed}.bin`` (the device -> host byte stream, contracts.md 1-2) and
``{scenario}_t{seed}.truth.json`` (``towerear-crosscheck-truth/1``).

What is particular to model K: the tower is one coupled structure (each plate family of
modes is an 8-level chain, so crosstalk is not monotonic with distance and a far disc can
be louder than a neighbour in a band), a direct wave runs through the walls with a delay per
level, the contact time of an impact shapes its spectrum (wood on wood clicks, felt thuds),
resting cubes load and damp their plate and rattle, cubes land on cubes, a pile near a hole
drops a cube later, handfuls of cubes, misses, tight rims that stick and slip, the ADC's
channel-to-channel sampling skew, floating inputs while modules are lifted, and contract
edge cases a real device emits (variable sets per message, a 10 SPS HX711 board, joining a
running device near its clock wrap).
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
import numpy.typing as npt
from scipy import signal as sps

FArr = npt.NDArray[np.float64]
Rng = np.random.Generator

TRUTH_FORMAT = "towerear-crosscheck-truth/1"
K_CONST = 0x4B4B4B4B  # "KKKK": the seed prefix of every model-K random stream
SCENARIOS = ("single", "rapid", "noisy", "game")
LEVELS = 8
G = 9.81
MODULE_H_M = 0.031  # a 25 cm tower of eight modules
COLOURS = ("yellow", "blue", "brown", "gray", "black", "white")
# HX711 gain 128: full scale is +-0.5 AVDD / 128 and the bridge is fed from AVDD, so one
# mV/V of bridge output is 128 * 2^23 / 500 counts whatever AVDD is (ratiometric).
COUNTS_PER_MV_PER_V = 128 * 2**23 / 500
CELL_CAPACITY_G = 100.0
N_FAMILIES = 5  # plate mode families: (1,1)-like fundamental and four higher ones
QUIRKS = ("tight_rims", "module_bias", "ground_loop", "rate_pin_10sps", "reversed_cell",
          "joined_running", "mixed_cells", "one_set_per_message")


# --------------------------------------------------------------------------- wire

def crc16_ccitt_false(data: bytes) -> int:
    """CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, not reflected): binascii's crc_hqx."""
    return binascii.crc_hqx(data, 0xFFFF)


def crc16_ccitt_false_reference(data: bytes) -> int:
    """The same CRC, bit by bit as a textbook writes it."""
    crc = 0xFFFF
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
            crc &= 0xFFFF
    return crc


def cobs_encode(data: bytes) -> bytes:
    """COBS by splitting on zeros (fast: the splitting runs in C)."""
    out = bytearray()
    for chunk in data.split(b"\x00"):
        while len(chunk) >= 254:
            out.append(0xFF)
            out += chunk[:254]
            chunk = chunk[254:]
        out.append(len(chunk) + 1)
        out += chunk
    return bytes(out)


def cobs_encode_reference(data: bytes) -> bytes:
    """COBS as Cheshire and Baker describe it, one byte at a time."""
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


def frame(msg_type: int, seq: int, body: bytes) -> bytes:
    """One framed message: COBS(type | seq | body | crc) + 0x00."""
    msg = struct.pack("<BH", msg_type, seq & 0xFFFF) + body
    msg += struct.pack("<H", crc16_ccitt_false(msg))
    assert len(msg) <= 254
    return cobs_encode(msg) + b"\x00"


def hello_body(piezo_rate_hz: int, load_rate_hz: int, fw: tuple[int, int, int],
               device_id: bytes) -> bytes:
    """HELLO: proto 1, firmware version, 8 piezo, 8 load, rates, 10-bit ADC, id."""
    return struct.pack("<BBBBBBHHB", 1, *fw, LEVELS, LEVELS, piezo_rate_hz, load_rate_hz,
                       10) + device_id


def piezo_body(t_us: int, sets: npt.NDArray[np.uint16]) -> bytes:
    """PIEZO: t_us of the first set, n sets of 8 u16 samples, set-major."""
    return struct.pack("<IB", t_us & 0xFFFFFFFF, len(sets)) + sets.astype("<u2").tobytes()


def load_body(t_us: int, valid: int, values24: bytes) -> bytes:
    """LOAD: t_us, valid bits, eight s24 values (already packed)."""
    return struct.pack("<IB", t_us & 0xFFFFFFFF, valid) + values24


def pack_s24(values: npt.NDArray[np.int64]) -> list[bytes]:
    """Rows of eight signed 24-bit little-endian values, one bytes object per row."""
    v = np.asarray(values, dtype="<i4")
    raw = v.view(np.uint8).reshape(len(v), LEVELS, 4)[:, :, :3].reshape(len(v), 3 * LEVELS)
    return [r.tobytes() for r in raw]


def status_body(uptime_ms: int, load_timeouts: int, cpu_pct: int) -> bytes:
    """STATUS: uptime, overruns 0, dropped 0, load timeouts, cpu load, flags 0."""
    return struct.pack("<IHHHBB", uptime_ms & 0xFFFFFFFF, 0, 0, load_timeouts & 0xFFFF,
                       cpu_pct, 0)


# --------------------------------------------------------------------------- tower

def _u(rng: Rng, lo: float, hi: float) -> float:
    return float(rng.uniform(lo, hi))


class Tower:
    """One built tower: every figure drawn once from ``default_rng([K_CONST, seed])``."""

    def __init__(self, seed: int) -> None:
        rng = np.random.default_rng([K_CONST, seed])
        self.seed = seed
        quirks: list[str] = []
        if rng.random() >= 0.6:  # most makers are careful; 40 % have one or two quirks
            k = 1 if rng.random() < 0.65 else 2
            quirks = sorted(str(q) for q in rng.choice(QUIRKS, size=k, replace=False))
        self.quirks = quirks
        self.surface = str(rng.choice(["wood", "felt", "glass"], p=[0.7, 0.18, 0.12]))

        # ---- device and firmware
        self.joined_running = "joined_running" in quirks
        self.piezo_rate = 2500 if rng.random() < 0.15 else 2000
        self.load_rate = 80
        if "one_set_per_message" in quirks:
            self.piezo_rate = 2000
            self.n_policy, self.n_target = "fixed", 1
        elif rng.random() < 0.35:
            self.n_policy, self.n_target = "fixed", int(rng.choice([8, 10, 14]))
        else:
            self.n_policy, self.n_target = "drain", int(rng.integers(5, 11))
        skews = [13e-6, 26e-6] if self.piezo_rate > 2000 else [13e-6, 26e-6, 52e-6]
        self.skew_s = float(rng.choice(skews))  # one ADC conversion per channel, A0 first
        self.fw = (1, int(rng.integers(0, 4)), int(rng.integers(0, 10)))
        self.device_id = rng.integers(0, 256, 8).astype(np.uint8).tobytes()

        # ---- piezo front end
        self.f_hp = _u(rng, 8.0, 25.0)  # disc C (15-30 nF) into 0.5-1 Mohm bias
        self.f_lp = _u(rng, 900.0, 2500.0) if rng.random() < 0.5 else math.inf
        self.bias = 512 + rng.normal(0, 2.5, LEVELS) + rng.uniform(-4, 4, LEVELS)
        self.bias_wander = rng.uniform(0.2, 1.2, LEVELS)
        self.adc_noise = _u(rng, 0.35, 0.7)
        self.hum_lsb = rng.uniform(0.2, 1.0) * (1 + 0.12 * np.arange(LEVELS)) \
            * rng.uniform(0.7, 1.3, LEVELS)
        self.hum_phase = rng.uniform(0, 2 * np.pi, LEVELS)
        self.float_hum = _u(rng, 2.5, 5.0)  # the disc (160 kohm at 50 Hz) no longer shunts
        self.module_bias = "module_bias" in quirks
        self.ghost = rng.uniform(0.7, 0.95, LEVELS)
        self.usb_lsb = _u(rng, 0.8, 2.5) if "ground_loop" in quirks else 0.0
        self.usb_ppm = _u(rng, -60.0, 60.0)

        # ---- structure: five plate families, each an 8-level coupled chain
        base_f1 = _u(rng, 150.0, 260.0)
        ratios = np.array([1.0, _u(rng, 1.9, 2.3), _u(rng, 3.1, 3.8), _u(rng, 4.9, 5.8),
                           _u(rng, 7.2, 8.8)])
        lvl = np.arange(LEVELS)
        # upper plates have smaller holes (stiffer, heavier): a few % higher upwards
        f1 = base_f1 * (1 + 0.02 * (lvl - 3.5)) * np.exp(rng.normal(0, 0.08, LEVELS))
        self.f_plate = f1[None, :] * ratios[:, None] * np.exp(
            rng.normal(0, 0.03, (N_FAMILIES, LEVELS)))
        self.q_plate = np.array([[_u(rng, 14, 26)], [_u(rng, 12, 22)], [_u(rng, 9, 18)],
                                 [_u(rng, 7, 14)], [_u(rng, 6, 12)]]) \
            * rng.uniform(0.85, 1.15, (N_FAMILIES, LEVELS))
        self.kappa = rng.uniform(0.04, 0.14, N_FAMILIES)
        self.kappa2 = self.kappa * rng.uniform(-0.35, 0.35, N_FAMILIES)
        # a disc senses strain (curvature ~ w x displacement): the 1/w of an impulse
        # cancels, less the averaging of shorter waves over the 20-27 mm disc
        self.fam_w = np.array([1.0, 0.8, 0.65, 0.5, 0.4])
        self.disc_c = np.vstack([rng.uniform(0.7, 1.0, LEVELS),
                                 rng.uniform(0.25, 1.0, (N_FAMILIES - 1, LEVELS))])
        self.disc_g = np.clip(np.exp(rng.normal(0, 0.2, LEVELS)), 0.5, 1.6)
        self.lsb_per_j = _u(rng, 110.0, 190.0)  # LSB per (g m/s) of momentum change
        self.wall_delay_s = _u(rng, 60e-6, 220e-6)
        self.wall_att = _u(rng, 0.3, 0.55)
        self.wall_f = _u(rng, 700.0, 1400.0)
        self.wall_w = 0.35
        sway_lo, sway_hi = {"wood": (7, 14), "felt": (4, 7), "glass": (9, 16)}[self.surface]
        self.sway_f = _u(rng, sway_lo, sway_hi)
        self.sway_q = _u(rng, 4, 8)
        self.acc_lsb = _u(rng, 60.0, 140.0)  # LSB per m/s^2 of floor-borne vibration
        self.plate_g = rng.uniform(8.0, 25.0, LEVELS)  # the insert resting on each cell

        # ---- geometry and cubes
        ang = rng.uniform(0, 2 * np.pi, LEVELS)
        rad = rng.uniform(4, 12, LEVELS)
        self.zone = np.stack([rad * np.cos(ang), rad * np.sin(ang)], axis=1)  # under hole above
        self.hole_w = np.linspace(30, 20, LEVELS) + rng.uniform(-1.5, 1.5, LEVELS)
        d = self.hole_w / 2 + rng.uniform(1, 8, LEVELS)
        a2 = ang + np.pi + rng.uniform(-0.9, 0.9, LEVELS)  # holes alternate, never aligned
        self.hole = self.zone + np.stack([d * np.cos(a2), d * np.sin(a2)], axis=1)
        lim = (38 - self.hole_w / 2)[:, None]
        self.hole = np.clip(self.hole, -lim, lim)
        self.catch = np.clip(0.18 + 0.035 * (7 - lvl) + rng.uniform(-0.05, 0.05, LEVELS),
                             0.1, 0.6)
        self.catch[0] = 1.0
        self.p_strike = rng.uniform(0.45, 0.85, LEVELS)
        self.cube_side_mm = _u(rng, 8.0, 10.0)
        density = _u(rng, 0.55, 0.75)
        self.cube_g = self.cube_side_mm ** 3 * density / 1000
        self.colour_f = {c: _u(rng, 0.95, 1.05) for c in (*COLOURS, "red", "cube")}
        self.colour_f["cube"] = 1.0

        # ---- load cells and HX711s
        mixed = "mixed_cells" in quirks
        if mixed:
            self.mv_per_v = rng.uniform(0.6, 1.25, LEVELS)
        else:
            self.mv_per_v = _u(rng, 0.9, 1.1) * rng.normal(1.0, 0.02, LEVELS)
        self.polarity = np.ones(LEVELS)
        if "reversed_cell" in quirks:
            for k in rng.choice(np.arange(1, LEVELS), size=int(rng.integers(1, 3)),
                                replace=False):
                self.polarity[k] = -1.0
        self.counts_per_g = self.mv_per_v * COUNTS_PER_MV_PER_V / CELL_CAPACITY_G \
            * self.polarity
        self.zero_counts = rng.normal(0, 0.05, LEVELS) * COUNTS_PER_MV_PER_V \
            + rng.normal(0, 2000, LEVELS)
        self.hx_rate = 80.0 * rng.uniform(0.98, 1.08, LEVELS)
        self.slow_level = -1
        if "rate_pin_10sps" in quirks:
            self.slow_level = int(rng.integers(0, LEVELS))
            self.hx_rate[self.slow_level] = 10.0 * _u(rng, 0.98, 1.08)
        self.hx_noise_g = rng.uniform(0.0025, 0.006, LEVELS)
        self.hx_walk_g = rng.uniform(0.0002, 0.0008, LEVELS)  # per sqrt(s)
        self.cell_f0 = rng.uniform(50, 120, LEVELS)
        self.cell_zeta = rng.uniform(0.06, 0.15, LEVELS)  # a cardboard insert: lossy
        self.tight = np.zeros(LEVELS, bool)
        if "tight_rims" in quirks:
            self.tight[rng.choice(LEVELS, size=int(rng.integers(2, 6)), replace=False)] = True
        self.hold_frac = rng.uniform(0.05, 0.25, LEVELS)
        self.cells = "mixed" if mixed or "reversed_cell" in quirks \
            or "rate_pin_10sps" in quirks else "matched"
        self._modes: dict[tuple[int, ...], tuple[Any, ...]] = {}

    # --------------------------------------------------------------- modes

    def modes(self, load_g: tuple[float, ...]) -> tuple[Any, ...]:
        """Eigenmodes of the tower with ``load_g`` grams of cubes on each plate.

        Returns ``(lam, phi, fam, readout)``: complex poles (rad/s), mode shapes (M, 8),
        family index (M,), and the disc readout (M, 8) = shape x disc coupling x gain.
        """
        key = tuple(int(round(x * 10)) for x in load_g)
        hit = self._modes.get(key)
        if hit is not None:
            return hit
        cubes = np.array(load_g)
        n_cubes = cubes / max(self.cube_g, 1e-6)
        modal_mass = 0.35 * self.plate_g
        lam_l, phi_l, fam_l, read_l = [], [], [], []
        for n in range(N_FAMILIES):
            f = self.f_plate[n] * np.sqrt(modal_mass / (modal_mass + 0.7 * cubes))
            q = 1 / (1 / self.q_plate[n] + 0.004 * n_cubes)
            w2 = (2 * np.pi * f) ** 2
            k = np.diag(w2)
            w = np.sqrt(w2)
            for i in range(LEVELS - 1):
                k[i, i + 1] = k[i + 1, i] = self.kappa[n] * w[i] * w[i + 1]
            for i in range(LEVELS - 2):
                k[i, i + 2] = k[i + 2, i] = self.kappa2[n] * w[i] * w[i + 2]
            ev, vec = np.linalg.eigh(k)
            om = np.sqrt(np.maximum(ev, 1.0))
            sigma = (vec ** 2).T @ (2 * np.pi * f / (2 * q))
            lam_l.append(-sigma + 1j * om)
            phi_l.append(vec.T)
            fam_l.append(np.full(LEVELS, n))
            # displacement after a velocity impulse is sin(wt)/w: within a family the
            # 1/w keeps far levels silent at first (they grow like t^3, not t)
            read_l.append(vec.T * (om.mean() / om)[:, None]
                          * (self.disc_c[n] * self.disc_g)[None, :])
        lam = np.concatenate(lam_l)
        phi = np.vstack(phi_l)
        fam = np.concatenate(fam_l)
        readout = np.vstack(read_l)
        hit = (lam, phi, fam, readout)
        self._modes[key] = hit
        return hit

    def h_elec(self, s: npt.NDArray[np.complex128]) -> npt.NDArray[np.complex128]:
        """Front end: bias-resistor high-pass and optional RC low-pass, at poles ``s``."""
        wh = 2 * np.pi * self.f_hp
        h = (s / wh) / (1 + s / wh)
        if math.isfinite(self.f_lp):
            h = h / (1 + s / (2 * np.pi * self.f_lp))
        return h

    def filter_terms(self, lam: npt.NDArray[np.complex128]) -> tuple[Any, Any, Any, float, float]:
        """Exact front-end response to ``Im(C exp(lam t))`` switched on at t = 0 (C real):
        ``Im(C (H exp(lam t) + Rh exp(-wh t) + Rl exp(-wl t)))``, which starts at 0.

        Returns ``(H, Rh, Rl, wh, wl)``: the steady-state gain and the residues at the
        high-pass and low-pass poles (partial fractions of H(s) / (s - lam))."""
        wh = 2 * np.pi * self.f_hp
        h = self.h_elec(lam)
        if math.isfinite(self.f_lp):
            wl = 2 * np.pi * self.f_lp
            rh = wh * wl / ((wl - wh) * (wh + lam))
            rl = -wl * wl / ((wl - wh) * (wl + lam))
        else:
            wl = math.inf
            rh = wh / (wh + lam)
            rl = np.zeros_like(lam)
        return h, rh, rl, wh, wl

    def describe(self) -> dict[str, Any]:
        """The tower's figures that the truth file carries."""
        return {
            "quirks": self.quirks, "surface": self.surface, "cells": self.cells,
            "piezo_rate_hz": self.piezo_rate, "load_rate_hz": self.load_rate,
            "sets_per_message": f"{self.n_policy} {self.n_target}",
            "adc_skew_us": round(self.skew_s * 1e6, 1),
            "f_hp_hz": round(self.f_hp, 1),
            "f_lp_hz": None if not math.isfinite(self.f_lp) else round(self.f_lp, 1),
            "plate_f1_hz": [round(float(x), 1) for x in self.f_plate[0]],
            "family_ratios": [round(float(x), 2) for x in self.f_plate[:, 4] / self.f_plate[0, 4]],
            "coupling": [round(float(x), 3) for x in self.kappa],
            "wall_delay_us": round(self.wall_delay_s * 1e6, 1),
            "wall_att": round(self.wall_att, 3),
            "sway_hz": round(self.sway_f, 2),
            "cube_g": round(self.cube_g, 4), "cube_side_mm": round(self.cube_side_mm, 2),
            "plate_g": [round(float(x), 2) for x in self.plate_g],
            "counts_per_g": [round(float(x), 1) for x in self.counts_per_g],
            "hx711_rate_hz": [round(float(x), 2) for x in self.hx_rate],
            "tight_rims": [int(x) for x in np.flatnonzero(self.tight)],
            "catch": [round(float(x), 3) for x in self.catch],
            "usb_ground_loop_lsb": round(self.usb_lsb, 2),
            "joined_running": self.joined_running,
        }


# --------------------------------------------------------------------------- scene

@dataclass
class Impact:
    """A momentum change on the structure: drive over levels, strength and contact time."""

    t: float
    drive: FArr
    src: float  # level the wall wave starts from (-1: the table under the base)
    j: float  # g m/s
    tc: float  # contact time, s
    load_g: tuple[float, ...]
    sway: float = 0.05
    cell: FArr | None = None  # share of the impulse each load cell feels


@dataclass
class Cube:
    colour: str
    mass: float
    pos: FArr
    precarious: float = 0.0  # impulse (g m/s) that shakes it into the hole; 0: stable
    cid: int = 0


@dataclass
class Landing:
    t: float
    floor: int
    t_first: float
    t_throw: float | None
    mass: float
    colour: str
    knocked: bool = False
    caused_knockdown: bool = False
    on_cube: bool = False
    heavy: bool = False
    from_floor: int | None = None
    by: int | None = None
    cause: str = "throw"
    lid: int = 0
    strikes: list[int] = field(default_factory=list)


class Scene:
    """The events of one recording and the physical state they act on."""

    def __init__(self, tower: Tower, scenario: str, duration_s: float, rng: Rng) -> None:
        self.tw = tower
        self.scenario = scenario
        self.dur = duration_s
        self.rng = rng
        self.rate = tower.piezo_rate
        self.n = int(round(duration_s * self.rate))
        self.quiet_s = _u(rng, 5.0, 7.0)
        self.impacts: list[Impact] = []
        self.plates: list[list[Cube]] = [[] for _ in range(LEVELS)]
        self.landings: list[Landing] = []
        self.knockdowns: list[dict[str, Any]] = []
        self.removals: list[dict[str, Any]] = []
        self.lifts: list[dict[str, Any]] = []
        self.closes: list[dict[str, Any]] = []
        self.knocks: list[dict[str, Any]] = []
        self.misses: list[dict[str, Any]] = []
        self.fallouts: list[dict[str, Any]] = []
        self.ambient: list[dict[str, Any]] = []
        self.weight_steps: list[tuple[float, int, float, float]] = []  # t, level, g, ramp
        self.presses: list[tuple[float, float, int, float]] = []  # t0, t1, level, g
        self.offsets: list[tuple[float, float, float, FArr]] = []  # t0, t1, ramp, g/level
        self.jolts: list[tuple[float, int, float]] = []  # t, level, impulse there
        self.open_spans: list[tuple[float, float, int]] = []  # lift, close, exposed
        self.handling: list[tuple[float, float, float]] = []  # t0, t1, LSB
        self.scrapes: list[tuple[float, float, int, float]] = []
        self.n_cid = 0
        self.busy_until = 0.0  # nothing may knock a cube off before it came to rest

    # --------------------------------------------------------------- helpers

    def load_state(self) -> tuple[float, ...]:
        return tuple(sum(c.mass for c in p) for p in self.plates)

    def add_impact(self, t: float, level: float, j: float, tc: float, *, sway: float = 0.05,
                   drive: FArr | None = None, cell: FArr | None = None) -> None:
        if drive is None:
            drive = np.zeros(LEVELS)
            drive[int(level)] = 1.0
        if cell is None:
            lv = np.arange(LEVELS)
            cell = 0.12 * self.tw.wall_att ** np.abs(lv - level)
            if 0 <= level < LEVELS and float(level).is_integer():
                cell[int(level)] = 1.0
        self.impacts.append(Impact(t, drive, float(level), j, tc, self.load_state(), sway,
                                   cell))

    def new_mass(self, colour: str) -> float:
        return self.tw.cube_g * self.tw.colour_f.get(colour, 1.0) \
            * float(self.rng.normal(1, 0.025))

    def is_open(self, t: float) -> bool:
        return any(a - 0.3 <= t <= b + 0.3 for a, b, _ in self.open_spans)

    # --------------------------------------------------------------- a cube's way down

    def throw(self, t_rel: float, colour: str, *, heavy: bool = False, handful: bool = False,
              cause: str = "throw") -> Landing:
        """A cube released above the entry; returns its landing (already recorded)."""
        rng = self.rng
        m = self.new_mass(colour)
        if heavy:
            v = _u(rng, 2.0, 3.5)  # thrown down hard
            t = t_rel + _u(rng, 0.02, 0.05)
        else:
            h = _u(rng, 0.02, 0.08)  # dropped from 2-8 cm above the entry
            v = math.sqrt(2 * G * h)
            t = t_rel + v / G
        if rng.random() < (0.3 if heavy else 0.12):  # clips the entry rim
            self.add_impact(t, 7.6, m * v * _u(rng, 0.15, 0.4), _u(rng, 3e-4, 8e-4),
                            drive=_top_drive(), cell=np.zeros(LEVELS))
            v *= _u(rng, 0.5, 0.8)
            t += _u(rng, 0.004, 0.02)
        land = self._fall(t, 7, v, m, colour, heavy=heavy)
        land.t_throw = t_rel
        land.cause = cause
        return land

    def _fall(self, t: float, level: int, v: float, m: float, colour: str, *,
              heavy: bool = False, knocked_from: int | None = None) -> Landing:
        rng, tw = self.rng, self.tw
        strikes: list[int] = []
        lv = level
        while True:
            v_new = math.sqrt(v * v + 2 * G * MODULE_H_M)
            t += (v_new - v) / G
            v = v_new
            pile = sum(1 for c in self.plates[lv]
                       if np.hypot(*(c.pos - tw.zone[lv])) < 14)
            caught = lv == 0 or rng.random() < min(0.7, tw.catch[lv] + 0.04 * pile)
            if caught:
                break
            if rng.random() < tw.p_strike[lv]:
                jj = m * v * _u(rng, 0.25, 0.7)
                self.add_impact(t, lv, jj, _u(rng, 3e-4, 9e-4))
                self.jolts.append((t, lv, jj))
                strikes.append(lv)
                v *= _u(rng, 0.2, 0.6)
                t += _u(rng, 0.005, 0.04)
            lv -= 1
        return self._land(t, lv, v, m, colour, strikes, heavy=heavy, knocked_from=knocked_from)

    def _rest_position(self, lv: int) -> FArr:
        tw, rng = self.tw, self.rng
        half = tw.cube_side_mm / 2
        best, best_gap = tw.zone[lv].copy(), -math.inf
        for _ in range(50):
            p = tw.zone[lv] + rng.normal(0, 16, 2)
            p = np.clip(p, -38 + half, 38 - half)
            if lv == 0:
                return p
            gap = float(np.max(np.abs(p - tw.hole[lv]))) - tw.hole_w[lv] / 2
            if gap > 0:
                return p
            if gap > best_gap:
                best, best_gap = p, gap
        return best

    def _land(self, t: float, lv: int, v: float, m: float, colour: str, strikes: list[int],
              *, heavy: bool, knocked_from: int | None) -> Landing:
        rng, tw = self.rng, self.tw
        t_first = t
        p1 = tw.zone[lv] + rng.normal(0, 4, 2)
        hit = [c for c in self.plates[lv] if np.hypot(*(c.pos - p1)) < 0.7 * tw.cube_side_mm]
        on_cube = bool(hit)
        e = _u(rng, 0.5, 0.62) if on_cube else _u(rng, 0.25, 0.5)
        j = m * v * (1 + e)
        tc = _u(rng, 5e-5, 1.5e-4) if on_cube else _u(rng, 5e-4, 1.2e-3)
        self.add_impact(t, lv, j, tc)
        self.jolts.append((t, lv, j))
        t_last = t
        vb = v * e
        n_b = 0
        while vb > 0.06 and n_b < 8:
            t_last += 2 * vb / G
            e = _u(rng, 0.2, 0.5)
            self.add_impact(t_last, lv, m * vb * (1 + e), _u(rng, 5e-4, 1.2e-3))
            vb *= e
            n_b += 1
        if on_cube and rng.random() < 0.85:  # slides off the cube onto the plate
            t_last += _u(rng, 0.02, 0.08)
            self.add_impact(t_last, lv, m * _u(rng, 0.1, 0.25), _u(rng, 6e-4, 1.5e-3))
        if rng.random() < 0.5:  # lands on an edge and tips over
            t_last += _u(rng, 0.01, 0.06)
            self.add_impact(t_last, lv, m * _u(rng, 0.05, 0.15), _u(rng, 1e-3, 2e-3))
        t_rest = t_last + _u(rng, 0.0, 0.03)  # a last slide, no impact
        self._rattle(t_first, lv, j)
        # the cube's weight comes in over the bounces: its mean force is its weight
        self.weight_steps.append((t_first, lv, m, max(t_rest - t_first, 0.01)))
        self.n_cid += 1
        cube = Cube(colour, m, self._rest_position(lv), cid=self.n_cid)
        if lv > 0:
            gap = np.max(np.abs(cube.pos - tw.hole[lv])) - tw.hole_w[lv] / 2
            # its edge within a millimetre of the hole: it overhangs and may tip in later
            if gap < tw.cube_side_mm / 2 + 1.0 and rng.random() < 0.6:
                cube.precarious = _u(rng, 0.1, 1.0)
        land = Landing(t_rest, lv, t_first, None, m, colour, on_cube=on_cube, heavy=heavy,
                       strikes=strikes)
        land.lid = len(self.landings)
        self.landings.append(land)
        self.busy_until = max(self.busy_until, t_rest)
        # a jolt at first impact may send a cube that sits on the hole's edge down
        if knocked_from is None:
            self._knock_down_by(land, t_first, lv, j, hit)
        self.plates[lv].append(cube)
        return land

    def _rattle(self, t: float, lv: int, j: float) -> None:
        """Resting cubes on a struck plate jump and land again a few ms later."""
        rng = self.rng
        for c in self.plates[lv][:4]:
            if rng.random() < min(0.8, j * 1.2):
                self.add_impact(t + _u(rng, 0.003, 0.04), lv, c.mass * _u(rng, 0.03, 0.1),
                                _u(rng, 6e-5, 2e-4))

    def _knock_down_by(self, land: Landing, t: float, lv: int, j: float,
                       hit: list[Cube]) -> None:
        rng = self.rng
        if lv == 0:
            return
        cand = [c for c in self.plates[lv] if c.precarious and j >= c.precarious]
        if hit and not cand and rng.random() < 0.06:  # the struck cube is shoved in
            tw = self.tw
            near = [c for c in hit if np.max(np.abs(c.pos - tw.hole[lv])) - tw.hole_w[lv] / 2
                    < 6 + tw.cube_side_mm / 2]
            cand = near
        if not cand:
            return
        victim = cand[0]
        t_off = t + _u(rng, 0.01, 0.08)
        self._drop_from(victim, lv, t_off, knocked_by=land)

    def _drop_from(self, cube: Cube, lv: int, t_off: float, *, knocked_by: Landing | None,
                   cause: str = "knocked") -> Landing:
        self.plates[lv].remove(cube)
        self.weight_steps.append((t_off, lv, -cube.mass, 0.02))
        sub = self._fall(t_off, lv - 1, _u(self.rng, 0.05, 0.25), cube.mass, cube.colour,
                         knocked_from=lv)
        # the cube keeps its identity (colour, mass) on its new plate
        sub.from_floor = lv
        sub.t_throw = None
        if knocked_by is not None:
            sub.knocked = True
            sub.by = knocked_by.lid
            sub.cause = "knocked"
            knocked_by.caused_knockdown = True
            self.knockdowns.append({"t": round(t_off, 4), "from_floor": lv,
                                    "floor": sub.floor, "by": knocked_by.lid})
        else:
            sub.cause = cause
        return sub

    def shake(self, t: float, strength: float, cause: str) -> None:
        """A jolt to the whole tower: precarious cubes may fall (a landing, no throw)."""
        if t < self.busy_until + 0.5:
            return
        for lv in range(LEVELS - 1, 0, -1):
            for c in list(self.plates[lv]):
                if c.precarious and strength * (0.5 + 0.07 * lv) >= c.precarious:
                    self._drop_from(c, lv, t + _u(self.rng, 0.02, 0.2), knocked_by=None,
                                    cause=cause)
                    return

    # --------------------------------------------------------------- disturbances

    def knock(self, t: float, kind: str) -> None:
        """Something hits the table: the tower is driven from its base."""
        rng, tw = self.rng, self.tw
        jr, tcr, sway = {"knuckle": ((0.15, 0.6), (4e-4, 1e-3), 0.6),
                         "cup": ((0.2, 0.8), (1e-3, 3e-3), 0.8),
                         "elbow": ((0.5, 1.4), (8e-3, 2e-2), 3.0),
                         "dice": ((0.03, 0.1), (1.5e-4, 3e-4), 0.2),
                         "cube_on_table": ((0.05, 0.15), (4e-4, 1e-3), 0.3)}[kind]
        tc_f, j_f = {"wood": (1.0, 1.0), "felt": (5.0, 0.6), "glass": (0.3, 1.1)}[tw.surface]
        n = int(rng.integers(3, 7)) if kind == "dice" else 1
        tt = t
        for _ in range(n):
            j = _u(rng, *jr) * j_f
            self.add_impact(tt, -1, j, _u(rng, *tcr) * tc_f, sway=sway, drive=_base_drive(),
                            cell=np.asarray(0.1 * tw.wall_att ** (np.arange(LEVELS) + 1) + 0.02,
                                            dtype=np.float64))
            tt += _u(rng, 0.05, 0.15)
        if kind == "cup":
            self.add_impact(t + _u(rng, 0.01, 0.03), -1, _u(rng, 0.05, 0.2) * j_f,
                            _u(rng, 2e-4, 5e-4), drive=_base_drive())
        self.knocks.append({"t": round(t, 4), "kind": kind})
        self.shake(t, _u(rng, *jr) * 0.5, f"shaken_off_by_{kind}")

    def miss(self, t_rel: float, colour: str) -> None:
        """A cube that hits the tower top beside the entry and falls onto the table."""
        rng = self.rng
        m = self.new_mass(colour)
        v = math.sqrt(2 * G * _u(rng, 0.02, 0.08))
        t = t_rel + v / G
        self.add_impact(t, 7.6, m * v * 1.3, _u(rng, 4e-4, 9e-4), drive=_top_drive(),
                        cell=np.zeros(LEVELS))
        t2 = t + _u(rng, 0.04, 0.1)
        self.add_impact(t2, 7.6, m * 0.3, _u(rng, 4e-4, 9e-4), drive=_top_drive(),
                        cell=np.zeros(LEVELS))
        t3 = t2 + _u(rng, 0.2, 0.3)
        self.add_impact(t3, -1, m * 2.4 * 0.5, _u(rng, 3e-4, 8e-4), drive=_base_drive(),
                        cell=np.zeros(LEVELS))
        self.misses.append({"t": round(t, 4), "t_table": round(t3, 4), "colour": colour})
        self.knocks.append({"t": round(t, 4), "kind": "missed_cube"})

    # --------------------------------------------------------------- lifting

    def lift(self, t: float, k: int) -> None:
        """Modules k..7 come up: load channels k+1..7 and their discs disconnect."""
        rng = self.rng
        self.add_impact(t, k, _u(rng, 0.05, 0.2), _u(rng, 2e-3, 5e-3), sway=1.0)
        self.lifts.append({"t": round(t, 4), "exposed": k})

    def remove(self, t_touch: float, k: int, cubes: list[Cube]) -> float:
        """Fingers reach onto plate k and lift ``cubes`` off; returns the lift-off time."""
        rng = self.rng
        self.add_impact(t_touch, k, _u(rng, 0.03, 0.1), _u(rng, 8e-3, 1.5e-2), sway=0.3)
        t_off = t_touch + _u(rng, 0.3, 1.0)
        self.presses.append((t_touch, t_off, k, _u(rng, 3.0, 20.0)))
        self.scrapes.append((t_touch + 0.05, t_off, k, _u(rng, 1.0, 5.0)))
        for c in cubes:
            self.plates[k].remove(c)
        self.weight_steps.append((t_off, k, -sum(c.mass for c in cubes), 0.03))
        self.removals.append({"t": round(t_off, 4), "floor": k, "cubes": len(cubes),
                              "colours": sorted(c.colour for c in cubes)})
        return t_off

    def close(self, t: float, k: int, t_lift: float) -> None:
        rng = self.rng
        j = _u(rng, 0.2, 0.6)
        drive = np.zeros(LEVELS)
        drive[k] = 0.7
        if k + 1 < LEVELS:
            drive[k + 1] = 0.7
        self.add_impact(t, k + 0.5, j, _u(rng, 3e-3, 8e-3), sway=1.5, drive=drive)
        self.jolts.append((t, k, j))
        self.open_spans.append((t_lift, t, k))
        self.handling.append((t_lift - 0.4, t + 0.3, _u(rng, 2.0, 10.0)))
        self.closes.append({"t": round(t, 4), "exposed": k})
        self.shake(t + 0.05, j, "shaken_off_by_close")


def _base_drive() -> FArr:
    d = np.zeros(LEVELS)
    d[0], d[1] = 1.0, 0.25
    return d


def _top_drive() -> FArr:
    d = np.zeros(LEVELS)
    d[7], d[6] = 0.6, 0.15
    return d


# --------------------------------------------------------------------------- scenarios

def plan_single(sc: Scene) -> None:
    t = sc.quiet_s + _u(sc.rng, 0.5, 2.0)
    while t < sc.dur - 2.5:
        land = sc.throw(t, "cube")
        t = max(land.t, sc.busy_until) + _u(sc.rng, 3.0, 8.0)
    _light_ambient(sc)


def plan_rapid(sc: Scene) -> None:
    rng = sc.rng
    t = sc.quiet_s + _u(rng, 0.5, 2.0)
    while t < sc.dur - 3.5:
        for _ in range(int(rng.integers(3, 7))):
            if t >= sc.dur - 2.5:
                break
            if rng.random() < 0.12:  # a handful: 2-4 cubes let go together
                tt = t
                for _ in range(int(rng.integers(2, 5))):
                    sc.throw(tt, "cube", handful=True)
                    tt += _u(rng, 0.015, 0.08)
            else:
                sc.throw(t, "cube")
            t += _u(rng, 0.3, 0.8)
        t = max(t, sc.busy_until) + _u(rng, 3.0, 7.0)
    _light_ambient(sc)


def plan_noisy(sc: Scene) -> None:
    rng = sc.rng
    child = rng.random() < 0.4
    t0 = sc.quiet_s
    # the disturbances first (their times), then throws among them
    kinds = ["knuckle", "cup", "elbow", "dice"]
    t = t0 + _u(rng, 0.5, 6.0)
    knock_times = []
    while t < sc.dur - 2.0:
        knock_times.append((t, str(rng.choice(kinds, p=[0.45, 0.25, 0.15, 0.15]))))
        t += float(rng.exponential(9.0)) + 1.0
    if rng.random() < 0.4:
        sc.ambient.append({"kind": "music", "t0": t0 + _u(rng, 0, 10), "t1": sc.dur,
                           "bpm": _u(rng, 88, 128), "a_kick": _u(rng, 0.02, 0.06),
                           "a_bass": _u(rng, 0.005, 0.02)})
    if rng.random() < 0.25:
        a = t0 + _u(rng, 0, 30)
        sc.ambient.append({"kind": "washer", "t0": a, "t1": min(sc.dur, a + _u(rng, 30, 100)),
                           "f": _u(rng, 14, 18), "a": _u(rng, 0.005, 0.02)})
    room = max(0.5, sc.dur - t0 - 8)
    for _ in range(int(rng.integers(1, 4))):
        a = t0 + _u(rng, 0, room)
        sc.ambient.append({"kind": "footsteps", "t0": a, "t1": a + _u(rng, 3, 8),
                           "f": _u(rng, 12, 25), "a": _u(rng, 0.01, 0.05),
                           "cadence": _u(rng, 1.7, 2.2)})
    for _ in range(int(rng.integers(1, 4))):
        a = t0 + _u(rng, 0, room)
        sc.ambient.append({"kind": "forearms", "t0": a, "t1": min(sc.dur, a + _u(rng, 3, 20))})
    if rng.random() < 0.5:
        a = t0 + _u(rng, 0, room)
        sc.ambient.append({"kind": "hum_boost", "t0": a, "t1": a + _u(rng, 10, 30),
                           "factor": _u(rng, 3, 6)})
    _talk(sc, busy=1.0, loud=1.5)
    t = t0 + _u(rng, 1.0, 3.0)
    ki = 0
    while t < sc.dur - 2.5:
        while ki < len(knock_times) and knock_times[ki][0] <= t:
            sc.knock(*knock_times[ki])
            ki += 1
        if rng.random() < 0.07:
            sc.miss(t, "cube")
            t += _u(rng, 2.0, 4.0)
            continue
        land = sc.throw(t, "cube", heavy=child and rng.random() < 0.35)
        t = max(land.t, sc.busy_until) + _u(rng, 2.5, 7.0)
    while ki < len(knock_times):
        sc.knock(*knock_times[ki])
        ki += 1
    for amb in sc.ambient:
        if amb["kind"] == "footsteps":
            sc.shake(amb["t0"] + 1.0, amb["a"] * 8, "shaken_off_by_footsteps")


def _light_ambient(sc: Scene) -> None:
    rng = sc.rng
    if rng.random() < 0.5:
        _talk(sc, busy=0.3, loud=0.6)


def _talk(sc: Scene, *, busy: float, loud: float) -> None:
    rng = sc.rng
    t = sc.quiet_s + _u(rng, 0.5, 5.0)
    while t < sc.dur - 1.0:
        d = _u(rng, 1.5, 8.0)
        sc.ambient.append({"kind": "talk", "t0": t, "t1": min(sc.dur, t + d),
                           "f0": _u(rng, 95, 240), "a": _u(rng, 0.3, 2.0) * loud,
                           "laugh": bool(rng.random() < 0.15)})
        t += d + float(rng.exponential(6.0 / busy))


# --------------------------------------------------------------------------- the game

class Arosa:
    """Mord im Arosa as the rules read (rules/004_*.txt), played on the simulated tower."""

    def __init__(self, sc: Scene, players: list[str]) -> None:
        self.sc = sc
        self.players = players
        self.supply = {p: 20 for p in players}
        self.sheet = {p: [0] * LEVELS for p in players}
        self.crime_scenes: list[int] = []
        self.phase = "prologue"
        self.log: list[str] = []
        self.over = False
        self.turn = 0

    def check_end(self) -> None:
        if any(sum(s) >= 10 for s in self.sheet.values()) or any(
                n <= 0 for n in self.supply.values()):
            self.over = True
            self.phase = "over"

    def throw(self, t: float, colour: str, from_supply: bool) -> float:
        """One throw; returns the time the next may start."""
        sc, rng = self.sc, self.sc.rng
        if from_supply and colour != "red":
            self.supply[colour] -= 1
        if rng.random() < 0.04 and t < sc.dur - 8.0:
            sc.miss(t, colour)
            t += _u(rng, 2.0, 4.0)
        land = sc.throw(t, colour)
        self.log.append(f"throw {colour} {land.floor}")
        self.check_end()
        return max(land.t, sc.busy_until) + _u(rng, 1.2, 3.0)

    def throw_many(self, t: float, hand: list[str], penalty: list[str]) -> float:
        rng = self.sc.rng
        i = 0
        queue = [(c, False) for c in hand] + [(c, True) for c in penalty]
        while i < len(queue) and not self.over:
            if t > self.sc.dur - 2.5:
                return t
            c, sup = queue[i]
            if not sup and i + 1 < len(queue) and not queue[i + 1][1] and rng.random() < 0.1:
                # a sloppy handful: two found clues let go together
                self.throw(t, c, False)
                t2 = self.throw(t + _u(rng, 0.02, 0.08), queue[i + 1][0], False)
                t = t2
                i += 2
                continue
            t = self.throw(t, c, sup)
            i += 1
        return t

    def play(self) -> None:
        sc, rng = self.sc, self.sc.rng
        t = sc.quiet_s + _u(rng, 0.5, 2.0)
        prologue = ["red", "red"] + [p for p in self.players for _ in range(2)]
        t = self.throw_many(t, [], prologue)
        if self.over:
            return
        self.phase = "act1"
        self.turn = 0
        while not self.over:
            inv = self.players[self.turn % len(self.players)]
            t += _u(rng, 2.0, 6.0)
            if self.phase == "act1":
                k = self._choose_act1()
                action = "inspect"
                suspects: list[str] = []
            else:
                action, k, suspects = self._choose_act2(inv)
            n_here = len(sc.plates[k])
            needed = 6.0 + 1.8 * n_here + 3.0 * (n_here + len(suspects) + 1)
            if t + needed > sc.dur - 2.0:
                break
            if action == "suspect":
                self.log.append(f"suspect {inv} {' '.join(suspects)} {k}")
            else:
                self.log.append(f"{action} {inv} {k}")
            t, found_second = self._open_and_apply(t, inv, action, k, suspects)
            if found_second is not None:
                self.phase = "act2"
                self.turn = self.players.index(found_second) + 1
            else:
                self.turn += 1

    def _choose_act1(self) -> int:
        sc, rng = self.sc, self.sc.rng
        reds = [lv for lv in range(LEVELS) for c in sc.plates[lv] if c.colour == "red"]
        if reds and rng.random() < 0.45:  # good ears
            return int(rng.choice(reds))
        weights = np.array([len(p) + 0.5 for p in sc.plates])
        weights[0] *= 0.4
        return int(rng.choice(LEVELS, p=weights / weights.sum()))

    def _choose_act2(self, inv: str) -> tuple[str, int, list[str]]:
        sc, rng = self.sc, self.sc.rng
        own_on_sheet = sum(self.sheet[inv])
        own_floors = [lv for lv in range(LEVELS) if any(c.colour == inv for c in sc.plates[lv])
                      and self.sheet[inv][lv] > 0]
        if own_on_sheet and own_floors and rng.random() < 0.5:
            return "cover", int(rng.choice(own_floors)), []
        others = [p for p in self.players if p != inv]
        k = int(rng.choice(LEVELS, p=_norm([len(p) + 0.3 for p in sc.plates])))
        present = sorted({c.colour for c in sc.plates[k] if c.colour in others})
        pool = present if present and rng.random() < 0.7 else others
        n = 1 if rng.random() < 0.7 or len(pool) < 2 else 2
        return "suspect", k, sorted(str(x) for x in rng.choice(pool, size=n, replace=False))

    def _open_and_apply(self, t: float, inv: str, action: str, k: int,
                        suspects: list[str]) -> tuple[float, str | None]:
        sc, rng = self.sc, self.sc.rng
        t_lift = t
        sc.lift(t_lift, k)
        t += _u(rng, 1.2, 3.0)  # look
        here = list(sc.plates[k])
        colours = [c.colour for c in here]
        penalty: list[str] = []
        found_second: str | None = None
        # the sheet is settled while the floor lies open
        if action == "inspect":
            if "red" in colours:
                if k not in self.crime_scenes:
                    self.crime_scenes.append(k)
                for p in self.players:
                    if p != inv:
                        for _ in range(colours.count(p)):
                            self._to_sheet(p, k)
                if sum(1 for x in self.log if x.startswith("victim")) + colours.count("red") >= 2:
                    found_second = inv
                for _ in range(colours.count("red")):
                    self.log.append(f"victim {k}")
            else:
                penalty.append(inv)
        elif action == "suspect":
            if k == 0 and inv not in colours:
                penalty += [inv] * len(suspects)
            else:
                for s in suspects:
                    n_s = colours.count(s)
                    for _ in range(n_s):
                        self._to_sheet(s, k)
                    if n_s == 0:
                        penalty.append(inv)
        else:  # cover
            own = colours.count(inv)
            back = min(own, self.sheet[inv][k])
            self.sheet[inv][k] -= back
            self.supply[inv] += back
            if own == 0:
                penalty.append(inv)
        # take everything out, a pinch of 1-3 cubes at a time
        hand: list[str] = []
        rest = [here[i] for i in rng.permutation(len(here))]
        while rest:
            n = min(len(rest), int(rng.choice([1, 1, 2, 2, 3])))
            grab, rest = rest[:n], rest[n:]
            t_off = sc.remove(t, k, grab)
            hand += [c.colour for c in grab if c.colour != "red"]
            t = t_off + _u(rng, 0.6, 2.0)
        # a cube from the lifted part may fall out onto the table
        lifted = [(lv, c) for lv in range(k + 1, LEVELS) for c in sc.plates[lv]]
        if lifted and rng.random() < 0.06:
            lv, c = lifted[int(rng.integers(len(lifted)))]
            sc.plates[lv].remove(c)
            tf = t_lift + _u(rng, 0.3, (t - t_lift) * 0.8 + 0.31)
            sc.add_impact(tf, -1, c.mass * 1.5, _u(rng, 3e-4, 8e-4), drive=_base_drive(),
                          cell=np.zeros(LEVELS))
            sc.fallouts.append({"t": round(tf, 4), "from_floor": lv, "colour": c.colour})
            sc.knocks.append({"t": round(tf, 4), "kind": "fallout_on_table"})
            sc.busy_until = max(sc.busy_until, tf)
            hand.append(c.colour)
            self.log.append(f"fallout {c.colour} {lv}")
        t_close = t + _u(rng, 0.5, 1.5)
        sc.close(t_close, k, t_lift)
        self.log.append(f"close {k}")
        self.check_end()
        if self.over:
            return t_close, found_second
        t = t_close + _u(rng, 1.0, 2.5)
        t = self.throw_many(t, hand, penalty)
        return t, found_second

    def _to_sheet(self, p: str, k: int) -> None:
        if self.over or self.supply[p] <= 0:
            return
        self.supply[p] -= 1
        self.sheet[p][k] += 1
        self.check_end()

    def summary(self) -> dict[str, Any]:
        return {"players": self.players, "phase": self.phase, "log": self.log,
                "crime_scenes": sorted(self.crime_scenes), "sheet": self.sheet,
                "supply": self.supply}


def _norm(w: list[float]) -> FArr:
    a = np.array(w, float)
    return a / a.sum()


def plan_game(sc: Scene) -> dict[str, Any]:
    rng = sc.rng
    n = int(rng.integers(3, 6))
    players = [str(x) for x in rng.choice(COLOURS, size=n, replace=False)]
    game = Arosa(sc, players)
    game.play()
    _talk(sc, busy=0.8, loud=1.0)
    t = sc.quiet_s + _u(rng, 5.0, 30.0)
    while t < sc.dur - 5:  # players lean on the table, set down cups
        if rng.random() < 0.5:
            sc.ambient.append({"kind": "forearms", "t0": t, "t1": min(sc.dur, t + _u(rng, 3, 15))})
        elif not sc.is_open(t):
            sc.knock(t, "cup" if rng.random() < 0.6 else "knuckle")
        t += _u(rng, 15.0, 40.0)
    return game.summary()


# --------------------------------------------------------------------------- rendering

def _during_contact(u: Any, mu: Any, k: Any, a: float) -> Any:
    """exp(mu u) convolved with the half-sine force, for 0 <= u < tc."""
    return k * (a * np.exp(mu * u) - mu * np.sin(a * u) - a * np.cos(a * u))


def _g(u: Any, mu: Any, tc: float) -> Any:
    """exp(mu u) convolved with the half-sine force, any u >= 0 (after the contact written
    as k a (exp(mu u) + exp(mu (u - tc))), which cannot overflow)."""
    a = math.pi / tc
    k = (math.pi / (2 * tc)) / (mu * mu + a * a)
    after = k * a * (np.exp(mu * u) + np.exp(mu * np.maximum(u - tc, 0)))
    return np.where(u < tc, _during_contact(np.minimum(u, tc), mu, k, a), after)


def _single_mode(tw: Tower, u: FArr, lam: complex, amp: FArr, tc: float) -> FArr:
    """One damped mode (e.g. the wall wave or the sway) at times ``u`` after its arrival,
    per channel (m, 8): contact force, mode and front end, all convolved exactly."""
    h, rh, rl, wh, wl = tw.filter_terms(np.array([lam]))
    uu = np.maximum(u, 0)
    y = h[0] * _g(uu, lam, tc) + rh[0] * _g(uu, -wh, tc)
    if math.isfinite(wl):
        y = y + rl[0] * _g(uu, -wl, tc)
    return np.imag(y) * (u >= 0) * amp[None, :]


def render_impacts(tw: Tower, impacts: list[Impact], n: int, rate: float) -> FArr:
    """Piezo voltages (LSB, no bias) of every impact, evaluated at each channel's own
    sample instant (set time + channel x skew), so aliasing and skew come out exact.

    Each mode is driven by a half-sine contact force (exact convolution, so a long soft
    contact rises slowly and a short hard one reaches high modes), and passed exactly
    through the front end's high-pass and low-pass (steady state plus the filters' own
    transients): every channel starts from zero, and far levels only build up later."""
    out = np.zeros((n, LEVELS))
    skew = tw.skew_s * np.arange(LEVELS)
    lam_w = complex(-2 * np.pi * tw.wall_f / (2 * 2.0), 2 * np.pi * tw.wall_f)
    lam_s = complex(-2 * np.pi * tw.sway_f / (2 * tw.sway_q), 2 * np.pi * tw.sway_f)
    sway_shape = (np.arange(LEVELS) + 1) / LEVELS
    lv = np.arange(LEVELS)
    floor_lsb = 0.03  # below a tenth of the ADC noise: stop computing the tail
    wh = 2 * np.pi * tw.f_hp
    n_trans = int(6 / wh * rate) + 2
    for imp in impacts:
        i0 = int(math.floor(imp.t * rate))
        if i0 >= n:
            continue
        lam, phi, fam, readout = tw.modes(imp.load_g)
        h, rh, rl, _, wl = tw.filter_terms(lam)
        kk = (math.pi / (2 * imp.tc)) / (lam * lam + (math.pi / imp.tc) ** 2)
        a = math.pi / imp.tc
        amp = imp.j * tw.lsb_per_j * tw.fam_w[fam] * (phi @ imp.drive)
        c0 = amp[:, None] * readout  # real: each channel's share of each mode
        # after the contact a mode carries k a (exp(lam t) + exp(lam (t - tc))); the
        # second term is folded in when lam tc is small, kept apart when it is not
        split = float(np.max(-lam.real)) * imp.tc > 30
        fold = kk * a * (1 + (0 if split else np.exp(-lam * imp.tc)))
        coef = (h * fold)[:, None] * c0 * np.exp(lam[:, None] * skew[None, :])
        coef2 = (h * kk * a)[:, None] * c0 * np.exp(lam[:, None] * skew[None, :])
        m_all = min(n - i0, int(rate) + 2)
        tau_all = (i0 + np.arange(m_all)) / rate - imp.t
        tt_all = tau_all[:, None] + skew[None, :]  # each channel's own instant
        sig = np.zeros((m_all, LEVELS))
        mode_amp = np.abs(coef).max(axis=1)
        used = 0
        for f_i in range(N_FAMILIES):  # each family decays at its own pace
            keep = (fam == f_i) & (mode_amp > floor_lsb / 8)
            if not keep.any():
                continue
            span = float(np.max(np.log(mode_amp[keep] * 8 / floor_lsb) / -lam.real[keep]))
            m = min(m_all, int(min(span, 1.0) * rate) + 2)
            z = np.exp(np.outer(tau_all[:m], lam[keep]))
            sig[:m] += np.imag(z @ coef[keep]) * (tt_all[:m] >= 0)
            if split:
                z2 = np.exp(np.outer(np.maximum(tau_all[:m] - imp.tc, 0), lam[keep]))
                sig[:m] += np.imag(z2 @ coef2[keep]) * (tt_all[:m] >= imp.tc)
            used = max(used, m)
        # the front end's own transients (poles -wh, -wl), through the same contact
        m = min(m_all, n_trans + int(imp.tc * rate))
        tt = np.maximum(tt_all[:m], 0)
        on = tt_all[:m] >= 0
        th = np.imag(np.sum(c0 * rh[:, None], axis=0))
        sig[:m] += th[None, :] * np.real(_g(tt, -wh, imp.tc)) * on
        if math.isfinite(wl):
            tl = np.imag(np.sum(c0 * rl[:, None], axis=0))
            sig[:m] += tl[None, :] * np.real(_g(tt, -wl, imp.tc)) * on
        used = max(used, m)
        # during the contact the mode's own part is the exact convolution too
        m_c = min(m_all, int(imp.tc * rate) + 2)
        inside = (tt_all[:m_c] >= 0) & (tt_all[:m_c] < imp.tc)
        if inside.any():
            u = np.maximum(tt_all[:m_c], 0)[:, :, None]
            yc = np.imag(np.sum((c0 * h[:, None]).T[None, :, :]
                                * _during_contact(u, lam, kk, a), axis=2))
            steady = np.imag(np.exp(np.outer(tau_all[:m_c], lam)) @ coef)
            if split:
                steady += np.imag(np.exp(np.outer(np.maximum(tau_all[:m_c] - imp.tc, 0), lam))
                                  @ coef2) * (tt_all[:m_c] >= imp.tc)
            sig[:m_c] += np.where(inside, yc - steady, 0.0)
        # the wall wave: first arrival, delayed and weakened per module joint
        a_w = imp.j * tw.lsb_per_j * tw.wall_w * tw.wall_att ** np.abs(lv - imp.src) * tw.disc_g
        if abs(a_w).max() > floor_lsb:
            mw = min(m_all, int((0.03 + imp.tc) * rate) + 2)
            u_w = tt_all[:mw] - (np.abs(lv - imp.src) * tw.wall_delay_s)[None, :]
            sig[:mw] += _single_mode(tw, u_w, lam_w, a_w, imp.tc)
            used = max(used, mw)
        out[i0:i0 + used] += sig[:used]
        a_s = imp.j * tw.lsb_per_j * imp.sway * 0.25 * float(sway_shape @ imp.drive) \
            * sway_shape * tw.disc_g
        top = float(np.abs(a_s).max())
        if top > floor_lsb:
            m = min(n - i0, int(math.log(top / floor_lsb) / -lam_s.real * rate) + 2)
            u_s = ((i0 + np.arange(m)) / rate - imp.t)[:, None] + np.zeros(LEVELS)[None, :]
            out[i0:i0 + m] += _single_mode(tw, u_s, lam_s, a_s, imp.tc)
    return out


def _hp(x: FArr, f_hz: float, rate: float) -> FArr:
    b, a = sps.butter(1, f_hz, "high", fs=rate)
    return sps.lfilter(b, a, x, axis=0)


def floor_accel(sc: Scene, n: int, rate: float) -> FArr:
    """Floor-borne acceleration at the tower (m/s^2): music, washer, footsteps."""
    rng = np.random.default_rng([K_CONST, sc.tw.seed, 77, SCENARIOS.index(sc.scenario)])
    t = np.arange(n) / rate
    a = np.zeros(n)
    for amb in sc.ambient:
        i0, i1 = int(amb["t0"] * rate), min(n, int(amb["t1"] * rate))
        if i1 <= i0:
            continue
        tt = t[i0:i1] - amb["t0"]
        if amb["kind"] == "music":
            beat = 60.0 / amb["bpm"]
            ph = np.mod(tt, beat)
            kick = amb["a_kick"] * np.exp(-ph / 0.12) * np.sin(2 * np.pi * (45 * ph + 40 * (
                1 - np.exp(-ph / 0.03)) * 0.03))
            notes = np.array([41.2, 46.2, 49.0, 55.0, 61.7, 65.4, 73.4, 82.4, 98.0, 110.0])
            idx = rng.integers(0, len(notes), int(tt[-1] / (2 * beat)) + 2)
            f_note = notes[idx[(tt / (2 * beat)).astype(int)]]
            bass = amb["a_bass"] * np.sin(np.cumsum(2 * np.pi * f_note / rate))
            a[i0:i1] += kick + bass * (0.6 + 0.4 * np.exp(-np.mod(tt, 2 * beat) / 0.4))
        elif amb["kind"] == "washer":
            am = 1 + 0.3 * np.sin(2 * np.pi * 0.07 * tt)
            ramp = np.clip(tt / 5, 0, 1) * np.clip((amb["t1"] - amb["t0"] - tt) / 5, 0, 1)
            a[i0:i1] += amb["a"] * ramp * am * (np.sin(2 * np.pi * amb["f"] * tt)
                                                + 0.3 * np.sin(4 * np.pi * amb["f"] * tt + 1))
        elif amb["kind"] == "footsteps":
            dur = amb["t1"] - amb["t0"]
            for ts in np.arange(0.2, dur, 1 / amb["cadence"]):
                env = math.sin(math.pi * ts / dur) ** 2
                j0 = int((amb["t0"] + ts) * rate)
                m = min(n - j0, int(0.4 * rate))
                if m <= 0:
                    continue
                u = np.arange(m) / rate
                a[j0:j0 + m] += amb["a"] * env * np.exp(-u / 0.08) * np.sin(
                    2 * np.pi * amb["f"] * u)
    return a


def render_piezo(sc: Scene, rng: Rng) -> npt.NDArray[np.uint16]:
    """The 10-bit samples of every channel: bias, noise, hum, ambient, impacts, lifts."""
    tw, n, rate = sc.tw, sc.n, float(sc.rate)
    t = np.arange(n) / rate
    skew = tw.skew_s * np.arange(LEVELS)
    ts = t[:, None] + skew[None, :]
    ev = render_impacts(tw, sc.impacts, n, rate)
    acc = floor_accel(sc, n, rate)
    if np.any(acc):
        ev += _hp(acc, tw.f_hp, rate)[:, None] * tw.acc_lsb * (
            0.8 + 0.4 * np.arange(LEVELS) / 7)[None, :] * tw.disc_g[None, :]
    # voices and hands: airborne and handling noise
    for amb in sc.ambient:
        if amb["kind"] != "talk":
            continue
        i0, i1 = int(amb["t0"] * rate), min(n, int(amb["t1"] * rate))
        tt = t[i0:i1] - amb["t0"]
        syl = np.clip(np.sin(2 * np.pi * _u(rng, 3.5, 6.0) * tt + _u(rng, 0, 6)), 0, 1) ** 2
        f0 = amb["f0"] * (1 + 0.08 * np.sin(2 * np.pi * 0.7 * tt))
        ph = np.cumsum(2 * np.pi * f0 / rate)
        v = sum(np.sin(h * ph) / h for h in range(1, 6))
        a = amb["a"] * (2.5 if amb["laugh"] else 1.0)
        gain = 0.5 + 0.5 * np.arange(LEVELS) / 7  # the open top hears the room best
        ev[i0:i1] += (a * syl * v)[:, None] * gain[None, :]
    for t0, t1, lsb in sc.handling:
        i0, i1 = max(0, int(t0 * rate)), min(n, int(t1 * rate))
        if i1 <= i0:
            continue
        b, a_ = sps.butter(2, [5, 150], "band", fs=rate)
        noise = sps.lfilter(b, a_, rng.normal(0, 1, (i1 - i0, LEVELS)), axis=0)
        noise *= lsb / max(float(noise.std()), 1e-9)
        ev[i0:i1] += noise * np.hanning(i1 - i0)[:, None]
    for t0, t1, k, lsb in sc.scrapes:
        i0, i1 = int(t0 * rate), min(n, int(t1 * rate))
        if i1 <= i0:
            continue
        b, a_ = sps.butter(2, [80, min(600, rate / 2 - 50)], "band", fs=rate)
        x = sps.lfilter(b, a_, rng.normal(0, 1, i1 - i0))
        x *= lsb / max(float(x.std()), 1e-9)
        for j in range(LEVELS):
            ev[i0:i1, j] += x * (tw.wall_att ** abs(j - k)) * 0.8
    # connection: while modules are lifted their discs are off the ADC pins
    conn = np.ones((n, LEVELS), bool)
    for t_l, t_c, k in sc.open_spans:
        i0, i1 = int(t_l * rate), min(n, int(t_c * rate))
        conn[i0:i1, k + 1:] = False
    ev *= conn
    hum_f = 50.0
    hum_amp = np.ones(n)
    for amb in sc.ambient:
        if amb["kind"] == "hum_boost":
            i0, i1 = int(amb["t0"] * rate), min(n, int(amb["t1"] * rate))
            ramp = np.clip(np.minimum(np.arange(i1 - i0), np.arange(i1 - i0)[::-1]) / rate, 0, 1)
            hum_amp[i0:i1] += (amb["factor"] - 1) * ramp
    hum_scale = hum_amp[:, None] * np.where(conn, 1.0, tw.float_hum)
    ph = 2 * np.pi * hum_f * ts + tw.hum_phase[None, :]
    hum = tw.hum_lsb[None, :] * (np.sin(ph) + 0.3 * np.sin(3 * ph + 0.5) + 0.1 * np.sin(5 * ph))
    x = ev + hum * hum_scale
    if tw.usb_lsb:
        x += tw.usb_lsb * np.cos(2 * np.pi * 1000.0 * (1 + tw.usb_ppm * 1e-6) * ts + 0.3)
    # the DC level: divider, pin leakage through the bias resistor, wandering as it warms
    k_w = max(1, int(rate * 20))
    walk = np.cumsum(rng.normal(0, 1, (n // k_w + 2, LEVELS)), axis=0)
    walk = (walk - walk[0]) / math.sqrt(max(len(walk), 1)) * tw.bias_wander[None, :]
    wander = np.vstack([np.interp(t, np.arange(len(walk)) * k_w / rate, walk[:, j])
                        for j in range(LEVELS)]).T
    x += tw.bias[None, :] + wander + rng.normal(0, tw.adc_noise, (n, LEVELS))
    # reconnection: the disc's charge from handling pops, spring contacts bounce
    tau_hp = 1 / (2 * np.pi * tw.f_hp)
    for _t_l, t_c, k in sc.open_spans:
        i0 = int(t_c * rate)
        m = min(n - i0, int(8 * tau_hp * rate) + 1)
        if m <= 0:
            continue
        u = np.arange(m) / rate
        for j in range(k + 1, LEVELS):
            x[i0:i0 + m, j] += _u(rng, -120, 120) * np.exp(-u / tau_hp)
            for _ in range(int(rng.integers(1, 4))):  # contact bounce: brief opens
                b0 = i0 + int(_u(rng, 0.001, 0.03) * rate)
                b1 = min(n, b0 + int(_u(rng, 0.001, 0.004) * rate) + 1)
                x[b0:b1, j] = tw.bias[j] + tw.float_hum * hum[b0:b1, j]
    if tw.module_bias:
        # the bias network rides in the module: a floating pin keeps the sample-and-hold
        # charge of the channel converted just before it
        for j in range(1, LEVELS):
            fl = ~conn[:, j]
            if fl.any():
                x[fl, j] = tw.bias[j] + tw.ghost[j] * (x[fl, j - 1] - tw.bias[j - 1]) \
                    + 0.3 * hum[fl, j] * tw.float_hum
    return np.clip(np.rint(x), 0, 1023).astype(np.uint16)


def stick_slip(sc: Scene) -> list[tuple[float, int, float, float]]:
    """Weight changes as the cells see them: a tight rim holds part of each change until
    the next jolt on (or next to) that plate lets the plate settle."""
    tw = sc.tw
    steps = sorted(sc.weight_steps)
    if not tw.tight.any():
        return steps
    out: list[tuple[float, int, float, float]] = []
    jolts = sorted(sc.jolts + [(i.t, int(round(i.src)), i.j) for i in sc.impacts
                               if i.src < 0 or not float(i.src).is_integer()])
    held = np.zeros(LEVELS)
    since = np.zeros(LEVELS)
    events: list[tuple[float, int, Any]] = [(t, 0, (lv, g, r)) for t, lv, g, r in steps]
    events += [(t, 1, (lv, j)) for t, lv, j in jolts]
    events.sort(key=lambda e: (e[0], e[1]))
    for t, kind, data in events:
        if kind == 0:
            lv, g, r = data
            if tw.tight[lv]:
                h = g * tw.hold_frac[lv]
                held[lv] += h
                since[lv] = t + r
                out.append((t, lv, g - h, r))
            else:
                out.append((t, lv, g, r))
        else:
            lv, j = data
            for k in range(LEVELS):
                reach = j if lv == k else (j * 0.4 if abs(lv - k) == 1 or lv < 0 else 0)
                if tw.tight[k] and held[k] != 0 and reach > 0.25 and t > since[k] + 0.3:
                    out.append((t + 0.01, k, float(held[k]), 0.02))
                    held[k] = 0.0
    return sorted(out)


def render_force(sc: Scene, rng: Rng) -> FArr:
    """What each cell carries beyond its plate, in grams, on the piezo time grid."""
    tw, n, rate = sc.tw, sc.n, float(sc.rate)
    t = np.arange(n) / rate
    f = np.zeros((n, LEVELS))
    for t0, lv, g, ramp in stick_slip(sc):
        i0 = max(0, int(t0 * rate))
        if i0 >= n:
            continue
        f[i0:, lv] += g * np.clip((t[i0:] - t0) / ramp, 0, 1)
    w0 = 2 * np.pi * tw.cell_f0
    for imp in sc.impacts:  # the plate rings on the cell's spring
        if imp.cell is None:
            continue
        i0 = int(math.floor(imp.t * rate)) + 1
        if i0 >= n:
            continue
        for kk in np.flatnonzero(imp.cell * imp.j > 0.002):
            k = int(kk)
            z = tw.cell_zeta[k]
            m = min(n - i0, int(5 / (z * w0[k]) * rate))
            u = (i0 + np.arange(m)) / rate - imp.t
            wd = w0[k] * math.sqrt(1 - z * z)
            # half the impulse goes into the insert's own bending, half moves it on the cell
            f[i0:i0 + m, k] += 0.5 * imp.cell[k] * imp.j * w0[k] / G * np.exp(-z * w0[k] * u) \
                * np.sin(wd * u)
    for t0, t1, lv, g in sc.presses:
        i0, i1 = int(t0 * rate), min(n, int(t1 * rate))
        u = t[i0:i1] - t0
        trem = 1 + 0.1 * np.sin(2 * np.pi * _u(rng, 8, 12) * u)
        f[i0:i1, lv] += g * np.clip(u / 0.08, 0, 1) * trem
        j1 = min(n, i1 + int(0.05 * rate))
        f[i1:j1, lv] += g * np.linspace(1, 0, j1 - i1) * 0.5
    acc = floor_accel(sc, n, rate)
    if np.any(acc):
        # the plate and its cubes are a mass on the cell: F = m a
        f += tw.plate_g[None, :] * acc[:, None] / G
    for amb in sc.ambient:
        if amb["kind"] != "forearms":
            continue
        i0, i1 = int(amb["t0"] * rate), min(n, int(amb["t1"] * rate))
        # the table sags under the arms, the tower leans, rims touching shift: a few mg
        share = rng.uniform(-1, 1, LEVELS) * np.where(tw.tight, 0.04, 0.008)
        u = np.arange(i1 - i0) / rate
        env = np.clip(u / _u(rng, 0.5, 2.0), 0, 1) * np.clip((u[-1] - u) / 0.5, 0, 1)
        f[i0:i1] += env[:, None] * share[None, :]
    for t0, t1, lsb in sc.handling:
        i0, i1 = max(0, int(t0 * rate)), min(n, int(t1 * rate))
        if i1 > i0:
            b, a_ = sps.butter(2, [2, 40], "band", fs=rate)
            x = sps.lfilter(b, a_, rng.normal(0, 1, (i1 - i0, LEVELS)), axis=0)
            f[i0:i1] += x / max(float(x.std()), 1e-9) * 0.02 * lsb / 5
    return f


@dataclass
class LoadStream:
    t: FArr  # stream seconds of each reading
    valid: npt.NDArray[np.int64]
    counts: npt.NDArray[np.int64]
    timeouts: npt.NDArray[np.int64]  # cumulative, per reading


def read_hx711(sc: Scene, force: FArr, t_first: float, rng: Rng) -> LoadStream:
    """Eight HX711s converting on their own oscillators, read every 1/80 s by the MCU.

    A reading is fresh when the chip finished a conversion since the last read; its value
    is the mean force over that conversion. Lifted channels time out (valid 0) and, once
    back, need a settling time before their first conversion."""
    tw, rate = sc.tw, float(sc.rate)
    period = 1.0 / tw.load_rate
    reads = np.arange(t_first, sc.dur, period)
    nr = len(reads)
    cum = np.concatenate([np.zeros((1, LEVELS)), np.cumsum(force, axis=0)]) / rate  # g s
    tgrid = np.arange(len(cum)) / rate
    valid = np.zeros(nr, np.int64)
    counts = np.zeros((nr, LEVELS), np.int64)
    n_off = np.zeros(nr, np.int64)
    for j in range(LEVELS):
        tk = 1.0 / tw.hx_rate[j]
        off = sorted((a, b) for a, b, k in sc.open_spans if j > k)
        segs: list[tuple[float, float, float]] = []
        start, phase = -1.0, -_u(rng, 0, tk)
        for a, b in off:
            segs.append((start, a, phase))
            settle = (0.45 if j == tw.slow_level else 0.06) + _u(rng, 0.0, 0.25)
            start, phase = b, b + settle  # power-up after the contacts meet again
            n_off += (reads >= a) & (reads < b)
        segs.append((start, math.inf, phase))
        fresh = np.zeros(nr, bool)
        c_end = np.zeros(nr)
        for a, b, ph in segs:
            sel = np.flatnonzero((reads >= a) & (reads < b))
            if not len(sel):
                continue
            m = np.floor((reads[sel] - 2e-4 - ph) / tk).astype(np.int64)  # last completed
            new = np.concatenate([[True], m[1:] != m[:-1]])
            fresh[sel] = (m >= 1) & new
            c_end[sel] = ph + m * tk
        mean = (np.interp(c_end, tgrid, cum[:, j]) - np.interp(c_end - tk, tgrid, cum[:, j])) / tk
        walk = np.cumsum(rng.normal(0, tw.hx_walk_g[j] * math.sqrt(period), nr))
        g = tw.plate_g[j] + mean + walk + rng.normal(0, tw.hx_noise_g[j], nr)
        for _a, b in off:  # each power-up resets the chip's offset a little
            g[reads >= b] += rng.normal(0, 0.01)
        c = np.rint(tw.zero_counts[j] + tw.counts_per_g[j] * g).astype(np.int64)
        c = np.clip(c, -(2**23), 2**23 - 1)
        counts[:, j] = np.where(fresh, c, 0)
        valid |= fresh.astype(np.int64) << j
    return LoadStream(reads, valid, counts, np.cumsum(n_off))


# --------------------------------------------------------------------------- bytes

def piezo_batches(tw: Tower, n_sets: int, rng: Rng) -> list[tuple[int, int]]:
    """(first set, n) of every PIEZO message, as the firmware's main loop sends them."""
    n_max = n_sets // max(1, tw.n_target - 1) + 16
    if tw.n_policy == "fixed":
        ks = np.full(n_max, tw.n_target)
    else:
        per_read = tw.piezo_rate / tw.load_rate
        ks = tw.n_target + rng.integers(-1, 2, n_max)
        # a load read holds the main loop up: the next message carries what piled up
        ks += (rng.random(n_max) < tw.n_target / per_read) * rng.integers(1, 4, n_max)
    ks = np.clip(ks, 1, 14)
    starts = np.concatenate([[0], np.cumsum(ks)])
    last = int(np.searchsorted(starts, n_sets))  # starts[last] >= n_sets
    out = [(int(starts[i]), int(ks[i])) for i in range(last)]
    a, k = out[-1]
    out[-1] = (a, min(k, n_sets - a))
    return out


def encode_stream(sc: Scene, piezo: npt.NDArray[np.uint16], load: LoadStream,
                  rng: Rng) -> bytes:
    """The device -> host bytes: HELLO (or GET_INFO's answer), PIEZO, LOAD, STATUS."""
    tw = sc.tw
    rate = tw.piezo_rate
    us_per_set = 1_000_000 // rate
    if tw.joined_running:
        uptime0 = int(rng.integers(0, 3)) * 2**32 + 2**32 - int(_u(rng, 10.0, 60.0) * 1e6)
        seq0 = int(rng.integers(0, 65536))
    else:
        uptime0 = int(_u(rng, 0.02, 0.2) * 1e6)  # reset by DTR when the port opened
        seq0 = 0
    msgs: list[tuple[float, int, bytes]] = []  # emission time (s), type, body
    hello = hello_body(rate, tw.load_rate, tw.fw, tw.device_id)
    if tw.joined_running:
        t_q = _u(rng, 0.05, 0.4)  # the host asks: GET_INFO (its seq 0), then PING
        msgs.append((t_q, 0x01, hello))
        msgs.append((t_q + 0.0001, 0x05, struct.pack("<BHB", 0x81, 0, 0)))
        token = int(rng.integers(0, 2**32))
        t_p = t_q + _u(rng, 0.01, 0.05)
        msgs.append((t_p, 0x06, struct.pack("<II", token,
                                            (uptime0 + int(t_p * 1e6)) & 0xFFFFFFFF)))
    else:
        msgs.append((-0.003, 0x01, hello))
    for a, k in piezo_batches(tw, len(piezo), rng):
        t_us = uptime0 + a * us_per_set
        msgs.append(((a + k - 1) / rate + 3e-5, 0x02, piezo_body(t_us, piezo[a:a + k])))
    packed = pack_s24(load.counts)
    for i, tr in enumerate(load.t):
        t_us = uptime0 + int(round(tr * 1e6))
        msgs.append((tr + 2e-4, 0x03, load_body(t_us, int(load.valid[i]), packed[i])))
    cpu = int(rng.integers(35, 60))
    for s in np.arange(1.0, sc.dur, 1.0):
        i = int(np.searchsorted(load.t, s))
        to = int(load.timeouts[min(i, len(load.t) - 1)]) if len(load.t) else 0
        up_ms = (uptime0 + int(s * 1e6)) // 1000
        msgs.append((s + 5e-4, 0x04, status_body(up_ms, to, cpu + int(rng.integers(-3, 4)))))
    msgs.sort(key=lambda m: m[0])
    out = bytearray()
    for i, (_t, typ, body) in enumerate(msgs):
        out += frame(typ, seq0 + i, body)
    return bytes(out)


# --------------------------------------------------------------------------- recordings

def make_scene(seed: int, scenario: str, duration_s: float) -> tuple[Scene, dict[str, Any]]:
    """Plan one recording's events on tower ``seed``."""
    tw = Tower(seed)
    rng = np.random.default_rng([K_CONST, seed, SCENARIOS.index(scenario), 1])
    sc = Scene(tw, scenario, duration_s, rng)
    extra: dict[str, Any] = {}
    if scenario == "single":
        plan_single(sc)
    elif scenario == "rapid":
        plan_rapid(sc)
    elif scenario == "noisy":
        plan_noisy(sc)
    elif scenario == "game":
        extra["game"] = plan_game(sc)
    else:
        raise ValueError(f"unknown scenario {scenario!r}")
    return sc, extra


def truth_doc(sc: Scene, seed: int, extra: dict[str, Any]) -> dict[str, Any]:
    """The scorer's truth (towerear-crosscheck-truth/1) plus model K's own keys."""
    order = sorted(range(len(sc.landings)), key=lambda i: sc.landings[i].t)
    new_index = {sc.landings[i].lid: pos for pos, i in enumerate(order)}
    landings = []
    for i in order:
        x = sc.landings[i]
        landings.append({
            "t": round(x.t, 4), "floor": x.floor, "cubes": 1, "knocked": x.knocked,
            "caused_knockdown": x.caused_knockdown, "t_first_impact": round(x.t_first, 4),
            "t_throw": None if x.t_throw is None else round(x.t_throw, 4),
            "mass_g": round(x.mass, 4), "colour": x.colour, "on_cube": x.on_cube,
            "heavy": x.heavy, "cause": x.cause, "strikes": x.strikes,
            "from_floor": x.from_floor, "by": None if x.by is None else new_index[x.by]})
    knockdowns = [dict(k, by=new_index[k["by"]]) for k in sc.knockdowns]
    doc: dict[str, Any] = {
        "format": TRUTH_FORMAT, "model": "K", "scenario": sc.scenario, "seed": seed,
        "duration_s": sc.dur, "cells": sc.tw.cells, "quiet_s": round(sc.quiet_s, 3),
        "t_definition": "landing t = end of the cube's last contact motion (last bounce or "
                        "tip-over tap plus its final slide): from then on it does not move",
        "landings": landings, "knockdowns": sorted(knockdowns, key=lambda k: k["t"]),
        "removals": sorted(sc.removals, key=lambda r: r["t"]),
        "lifts": sc.lifts, "closes": sc.closes,
        "knocks": sorted(sc.knocks, key=lambda k: k["t"]),
        "misses": sc.misses, "fallouts": sc.fallouts,
        "ambient": [{k: (round(v, 3) if isinstance(v, float) else v) for k, v in a.items()}
                    for a in sc.ambient],
        "damage": [],
        "tower": sc.tw.describe(),
    }
    doc.update(extra)
    return doc


def make_recording(seed: int, scenario: str, duration_s: float, out: Path
                   ) -> tuple[Path, Path]:
    """Write ``{scenario}_t{seed}.bin`` and its truth into ``out``; return both paths."""
    out.mkdir(parents=True, exist_ok=True)
    sc, extra = make_scene(seed, scenario, duration_s)
    rng = np.random.default_rng([K_CONST, seed, SCENARIOS.index(scenario), 2])
    piezo = render_piezo(sc, rng)
    force = render_force(sc, rng)
    t_first = _u(rng, 0.0075, 0.02)  # after the first PIEZO message (at most 14 sets) left
    load = read_hx711(sc, force, t_first, rng)
    data = encode_stream(sc, piezo, load, rng)
    bin_path = out / f"{scenario}_t{seed}.bin"
    truth_path = out / f"{scenario}_t{seed}.truth.json"
    bin_path.write_bytes(data)
    truth_path.write_text(json.dumps(truth_doc(sc, seed, extra), indent=1))
    return bin_path, truth_path


def main(argv: list[str] | None = None) -> int:
    """Command line: make 4 x N recordings."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--towers", type=int, required=True)
    p.add_argument("--first-seed", type=int, required=True)
    p.add_argument("--duration", type=float, required=True)
    p.add_argument("--scenarios", nargs="+", choices=SCENARIOS, default=list(SCENARIOS))
    args = p.parse_args(argv)
    if args.duration < 12:
        print("--duration must be at least 12 s (quiet start plus events)", file=sys.stderr)
        return 2
    for seed in range(args.first_seed, args.first_seed + args.towers):
        for scenario in args.scenarios:
            make_recording(seed, scenario, args.duration, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
