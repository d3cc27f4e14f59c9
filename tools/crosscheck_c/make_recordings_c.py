#!/usr/bin/env python3
"""Cross-check C: independent recordings of a simulated Arosa tower, with ground truth.

Written from contracts.md (sections 1-3) and design.md only: its own wire
encoder (COBS, CRC-16/CCITT-FALSE, HELLO/PIEZO/LOAD/STATUS/ACK layouts) and its
own physics. Every model range is documented in tools/crosscheck_c/README.md.

Usage::

    .venv/bin/python tools/crosscheck_c/make_recordings_c.py --out /tmp/xc_c \
        [--towers 4] [--first-seed 1] [--duration 120] [--scenarios single rapid noisy game]

Writes ``{scenario}_t{seed}.bin`` and ``{scenario}_t{seed}.truth.json`` per
tower and scenario; score them with ``tools/crosscheck/score.py``.
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
SCENARIOS = ("single", "rapid", "noisy", "game")
N_LEVELS = 8
G_ACC = 9.81  # m/s^2
U32 = 1 << 32

# --------------------------------------------------------------------------------------
# Wire layer (contracts.md section 1), written from the contract text.
# --------------------------------------------------------------------------------------

T_HELLO, T_PIEZO, T_LOAD, T_STATUS, T_ACK = 0x01, 0x02, 0x03, 0x04, 0x05
T_GET_INFO = 0x81


def _crc_table() -> list[int]:
    table = []
    for byte in range(256):
        crc = byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
            crc &= 0xFFFF
        table.append(crc)
    return table


_CRC_TABLE = _crc_table()


def crc16_ccitt_false_reference(data: bytes) -> int:
    """CRC-16/CCITT-FALSE, bitwise-table reference (poly 0x1021, init 0xFFFF, no reflection)."""
    crc = 0xFFFF
    for b in data:
        crc = ((crc << 8) & 0xFFFF) ^ _CRC_TABLE[((crc >> 8) ^ b) & 0xFF]
    return crc


def crc16_ccitt_false(data: bytes) -> int:
    """Fast CRC-16/CCITT-FALSE: stdlib ``crc_hqx`` is the same polynomial, unreflected.

    Seeded with 0xFFFF and no final xor it is exactly CCITT-FALSE; the test checks it
    against :func:`crc16_ccitt_false_reference` and the check value 0x29B1.
    """
    return binascii.crc_hqx(data, 0xFFFF)


def cobs_encode(data: bytes) -> bytes:
    """Consistent-overhead byte stuffing; the output holds no 0x00 (delimiter not added)."""
    out = bytearray()
    parts = data.split(b"\x00")
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        while len(part) >= 254:
            out.append(0xFF)
            out += part[:254]
            part = part[254:]
            if not part and last:
                return bytes(out)
        out.append(len(part) + 1)
        out += part
    return bytes(out)


def frame(msg_type: int, seq: int, body: bytes) -> bytes:
    """One wire frame: COBS(type | seq | body | crc) + 0x00."""
    msg = struct.pack("<BH", msg_type, seq & 0xFFFF) + body
    if len(msg) + 2 > 254:
        raise ValueError("message longer than 254 bytes")
    msg += struct.pack("<H", crc16_ccitt_false(msg))
    return cobs_encode(msg) + b"\x00"


def hello_body(piezo_rate: int, load_rate: int, fw: tuple[int, int, int],
               device_id: bytes) -> bytes:
    """HELLO: proto, fw x3, n_piezo, n_load, piezo_rate_hz:u16, load_rate_hz:u16, adc_bits, id."""
    assert len(device_id) == 8
    return struct.pack("<BBBBBBHHB", 1, *fw, 8, 8, piezo_rate, load_rate, 10) + device_id


def status_body(uptime_ms: int, overruns: int, tx_dropped: int, load_timeouts: int,
                cpu_pct: int, flags: int) -> bytes:
    """STATUS: uptime_ms:u32, piezo_overruns:u16, tx_dropped:u16, load_timeouts:u16, cpu, flags."""
    return struct.pack("<IHHHBB", uptime_ms & 0xFFFFFFFF, overruns & 0xFFFF,
                       tx_dropped & 0xFFFF, load_timeouts & 0xFFFF, cpu_pct, flags)


def s24_bytes(counts: npt.NDArray[np.int64]) -> npt.NDArray[np.uint8]:
    """Signed 24-bit two's complement, little-endian, 3 bytes per value; shape (..., 3)."""
    u = (counts.astype(np.int64) & 0xFFFFFF).astype("<u4")
    return u.view(np.uint8).reshape(*counts.shape, 4)[..., :3]


# --------------------------------------------------------------------------------------
# The tower: every physical and electrical parameter, drawn per seed.
# --------------------------------------------------------------------------------------


@dataclass
class Tower:
    """One simulated tower (same tower for all scenarios of a seed)."""

    seed: int
    piezo_rate: int
    load_rate: int
    hx_rate_true: float          # readings/s on the device clock (HX711 oscillator error)
    clock_ppm: float
    frame_sets: tuple[int, int]  # sets per PIEZO frame, min..max (equal: fixed)
    cells: str                   # "matched" or "mixed"
    sens: F64                    # counts per gram, signed
    offset: F64                  # counts at empty plate
    load_noise_g: F64
    creep_frac: F64
    creep_tau: F64
    drift_g_per_min: F64
    load_hum_g: float
    mains_hz: float
    outlier_rate: float          # per reading and channel
    miss_rate: float             # reading not fresh (valid bit 0), per reading and channel
    cube_g: float
    p_stop: F64                  # per plate 1..7: chance a falling cube stops there
    ring_hz: F64                 # plate + cell resonance seen by the load cell
    ring_zeta: F64
    ring_gain: float
    load_xtalk: F64              # (8, 8) impact transient coupling, source -> cell
    shift_prob: float            # chance a landing leaves a lasting shift on a neighbour
    shift_frac: tuple[float, float]
    shift_tau: tuple[float, float]
    piezo_gain: F64
    piezo_k: float               # codes per (g m/s) of impact momentum
    modes_hz: F64                # (8, 3) physical plate modes (aliased at sampling)
    modes_q: F64
    modes_g: F64
    piezo_xtalk: F64             # (8, 8) source level -> channel
    xtalk_lp_hz: float
    click: float
    thump: float
    ac_hz: float
    piezo_noise: F64
    bias: F64
    wander: F64
    wander_s: float
    piezo_hum: float
    status_period_s: float
    fw: tuple[int, int, int]
    device_id: bytes
    cpu_pct: int
    lift_settle_s: tuple[float, float]
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_seed(cls, seed: int) -> Tower:
        rng = np.random.default_rng([seed, 0xC0C0])
        u = rng.uniform
        piezo_rate = int(rng.choice([2000, 1000, 4000], p=[0.74, 0.13, 0.13]))
        load_rate = int(rng.choice([80, 40, 10], p=[0.74, 0.11, 0.15]))
        clock_ppm = float(u(-350, 350))
        hx_err = float(u(-0.015, 0.015))
        # Bandwidth at 1 Mbaud: (12 + 16 n) bytes per n sets must fit with room to spare.
        n_min = 1 if piezo_rate <= 2000 else 3
        if rng.random() < 0.3:
            lo = int(rng.integers(n_min, 8))
            hi = int(rng.integers(lo + 1, 15))
            sets = (lo, hi)
        else:
            n = int(rng.choice([k for k in (1, 2, 4, 5, 7, 8, 10, 12, 14) if k >= n_min]))
            sets = (n, n)
        mixed = rng.random() < 0.35
        base = u(8000, 25000)
        if mixed:
            sens = base * rng.uniform(0.35, 2.0, N_LEVELS)
            sens *= np.where(rng.random(N_LEVELS) < 0.3, -1.0, 1.0)
        else:
            sens = base * rng.uniform(0.93, 1.07, N_LEVELS) * (-1.0 if rng.random() < 0.25 else 1.0)
        offset = rng.uniform(-400_000, 400_000, N_LEVELS)
        rate_noise = {80: 1.0, 40: 0.75, 10: 0.4}[load_rate]
        load_noise = rng.uniform(0.002, 0.02, N_LEVELS) * rate_noise * u(0.7, 1.5)
        if rng.random() < 0.2:  # one noisy cell (poor solder joint, long wire)
            load_noise[rng.integers(N_LEVELS)] *= u(2, 4)
        xl = np.zeros((N_LEVELS, N_LEVELS))
        xp = np.zeros((N_LEVELS, N_LEVELS))
        for a in range(N_LEVELS):
            for b in range(N_LEVELS):
                d = abs(a - b)
                if d == 0:
                    xl[a, b] = 1.0
                elif d == 1:
                    xl[a, b] = u(0.08, 0.4)
                    xp[a, b] = u(0.15, 0.55)
                else:
                    xl[a, b] = u(0.0, 0.1) * 0.5 ** (d - 2)
                    xp[a, b] = u(0.1, 0.4) * u(0.3, 0.65) ** (d - 1)
        gains = rng.uniform(0.6, 1.4, N_LEVELS)
        weak = -1
        if rng.random() < 0.3:
            weak = int(rng.integers(N_LEVELS))
            gains[weak] *= u(0.08, 0.3)
        # Chance to stop on plate L (1..7) given the cube reached it: rising downwards so
        # that the levels fill about evenly with ~5 % on the ground floor, times a
        # per-tower, per-plate factor (hole offsets, plate warp).
        target = np.array([1.0, 0.74, 0.425, 0.30, 0.23, 0.187, 0.157, 0.136])
        p_stop = np.clip(target * rng.uniform(0.6, 1.5, N_LEVELS), 0.05, 0.9)
        p_stop[0] = 1.0
        return cls(
            seed=seed, piezo_rate=piezo_rate, load_rate=load_rate,
            hx_rate_true=load_rate * (1 + hx_err) * (1 + clock_ppm * 1e-6),
            clock_ppm=clock_ppm, frame_sets=sets, cells="mixed" if mixed else "matched",
            sens=sens, offset=offset, load_noise_g=load_noise,
            creep_frac=rng.uniform(0.0, 0.015, N_LEVELS),
            creep_tau=rng.uniform(15, 120, N_LEVELS),
            drift_g_per_min=rng.uniform(0.0, 0.05, N_LEVELS) * rng.choice([-1.0, 1.0], N_LEVELS),
            load_hum_g=float(u(0.005, 0.06)) if rng.random() < 0.35 else 0.0,
            mains_hz=float(rng.choice([50.0, 60.0], p=[0.75, 0.25])) * (1 - clock_ppm * 1e-6),
            outlier_rate=float(u(2e-5, 1.5e-4)) if rng.random() < 0.5 else 0.0,
            miss_rate=float(u(5e-4, 4e-3)) if rng.random() < 0.3 else 0.0,
            cube_g=float(u(0.3, 0.8)), p_stop=p_stop,
            ring_hz=rng.uniform(15, 60, N_LEVELS), ring_zeta=rng.uniform(0.05, 0.3, N_LEVELS),
            ring_gain=float(u(0.1, 0.6)), load_xtalk=xl,
            shift_prob=float(u(0.2, 0.9)), shift_frac=(0.03, 0.15),
            shift_tau=(float(u(0.8, 2.5)), float(u(3.0, 10.0))),
            piezo_gain=gains, piezo_k=float(u(120, 450)),
            modes_hz=rng.uniform(150, 1900, (N_LEVELS, 3)),
            modes_q=rng.uniform(4, 30, (N_LEVELS, 3)),
            modes_g=rng.uniform(0.3, 1.0, (N_LEVELS, 3)),
            piezo_xtalk=xp, xtalk_lp_hz=float(u(150, 600)),
            click=float(u(0.1, 0.5)), thump=float(u(0.1, 0.8)), ac_hz=float(u(1.0, 15.0)),
            piezo_noise=rng.uniform(0.4, 2.0, N_LEVELS),
            bias=512 + rng.uniform(-18, 18, N_LEVELS), wander=rng.uniform(1, 10, N_LEVELS),
            wander_s=float(u(1.5, 15)),
            piezo_hum=float(u(0.3, 3.0)) if rng.random() < 0.45 else 0.0,
            status_period_s=float(rng.choice([1.0, 0.5, 2.0], p=[0.7, 0.15, 0.15])),
            fw=(1, int(rng.integers(0, 4)), int(rng.integers(0, 10))),
            device_id=bytes(rng.integers(0, 256, 8, dtype=np.uint8).tolist()),
            cpu_pct=int(rng.integers(25, 75)),
            lift_settle_s=(0.05, 0.45),
            extra={"weak_disc": weak},
        )

    def summary(self) -> dict[str, Any]:
        """Parameters worth keeping beside the truth (for reading failures)."""
        return {
            "piezo_rate_hz": self.piezo_rate, "load_rate_hz": self.load_rate,
            "hx_rate_device_hz": round(self.hx_rate_true, 4), "clock_ppm": round(self.clock_ppm, 1),
            "sets_per_frame": list(self.frame_sets), "cells": self.cells,
            "sens_counts_per_g": [round(float(x)) for x in self.sens],
            "load_noise_g": [round(float(x), 4) for x in self.load_noise_g],
            "load_hum_g": round(self.load_hum_g, 4), "mains_hz": round(self.mains_hz, 3),
            "outlier_rate": self.outlier_rate, "miss_rate": self.miss_rate,
            "cube_g": round(self.cube_g, 3), "p_stop": [round(float(x), 3) for x in self.p_stop],
            "piezo_gain": [round(float(x), 3) for x in self.piezo_gain],
            "piezo_k": round(self.piezo_k, 1), "weak_disc": self.extra.get("weak_disc", -1),
            "piezo_hum_codes": round(self.piezo_hum, 2),
        }


# --------------------------------------------------------------------------------------
# The world: cubes, throws, hands. Everything in stream seconds.
# --------------------------------------------------------------------------------------


@dataclass
class Cube:
    """A cube and where it has been: history of (from time, level or None = out of the tower)."""

    mass: float
    kind: str
    history: list[tuple[float, int | None]] = field(default_factory=list)

    def level_at(self, t: float) -> int | None:
        lvl: int | None = None
        for t0, lv in self.history:
            if t0 <= t:
                lvl = lv
        return lvl


@dataclass
class Events:
    """What the sensors will see."""

    impacts: list[tuple[float, int, float]] = field(default_factory=list)  # t, level, J (g m/s)
    scrapes: list[tuple[float, float, int, float]] = field(default_factory=list)  # t0, t1, lvl, J
    mass: list[tuple[float, int, float, float]] = field(default_factory=list)  # t, lvl, dg, rise
    shifts: list[tuple[float, int, float, float]] = field(default_factory=list)  # t, lvl, dg, tau
    offsets: list[tuple[float, int, float]] = field(default_factory=list)  # t, lvl, dg (lasting)
    # hand/rumble: t0, t1, per-level load weight (g), per-level piezo weight (codes), band
    hands: list[tuple[float, float, F64, F64, tuple[float, float], float]] = field(
        default_factory=list)
    talk: list[tuple[float, float, float]] = field(default_factory=list)
    invalid: list[tuple[float, float, int]] = field(default_factory=list)  # t0, t1 (reconnect), k
    first_after_power: list[tuple[float, int, float]] = field(default_factory=list)


class World:
    """Cube physics and the truth it produces."""

    MODULE_H = 0.031  # m, 25 cm / 8

    def __init__(self, tower: Tower, rng: np.random.Generator) -> None:
        self.tw = tower
        self.rng = rng
        self.cubes: list[Cube] = []
        self.ev = Events()
        self.landings: list[dict[str, Any]] = []
        self.knockdowns: list[dict[str, Any]] = []
        self.removals: list[dict[str, Any]] = []
        self.lifts: list[dict[str, Any]] = []
        self.closes: list[dict[str, Any]] = []
        self.knocks: list[dict[str, Any]] = []

    # -- cubes -----------------------------------------------------------------------
    def resting(self, level: int, t: float) -> list[Cube]:
        return [c for c in self.cubes if c.history and c.history[-1][1] == level
                and c.history[-1][0] <= t]

    def _fall_time(self, h: float, v: float) -> float:
        return (-v + math.sqrt(v * v + 2 * G_ACC * h)) / G_ACC

    def _fall(self, cube: Cube, t: float, plate: int, v: float, h: float,
              knocked: bool) -> dict[str, Any]:
        """Drop ``cube`` towards ``plate`` from height ``h`` at speed ``v``; returns its landing."""
        rng, tw = self.rng, self.tw
        t_first: float | None = None
        caused = False
        while True:
            dt = self._fall_time(h, v)
            t += dt
            v += G_ACC * dt
            h = self.MODULE_H
            if plate > 0 and rng.random() >= tw.p_stop[plate]:
                # Through the hole; holes are not aligned, so it often clips an edge.
                if rng.random() < 0.65:
                    j = cube.mass * v * rng.uniform(0.08, 0.45)
                    self.ev.impacts.append((t, plate, j))
                    t_first = t if t_first is None else t_first
                    v *= rng.uniform(0.35, 0.8)
                else:
                    v *= rng.uniform(0.85, 1.0)
                plate -= 1
                continue
            break
        # Lands on ``plate``: bounces, maybe on a resting cube, maybe knocks one off.
        t_hit = t
        t_first = t_hit if t_first is None else t_first
        here = [c for c in self.resting(plate, t_hit) if c is not cube]
        stacked = bool(here) and rng.random() < min(0.5, 0.15 * len(here))
        e = rng.uniform(0.2, 0.5) * (0.7 if stacked else 1.0)
        j0 = cube.mass * v * (1 + e) * (0.6 if stacked else 1.0)
        n_b = int(rng.integers(1, 5))
        vb = v * e  # rebound speed
        tb = t_hit
        self.ev.impacts.append((tb, plate, j0))
        for _ in range(n_b):
            if vb < 0.03:
                break
            tb += 2 * vb / G_ACC
            self.ev.impacts.append((tb, plate, cube.mass * vb * (1 + e) * rng.uniform(0.6, 1.0)))
            vb *= e
        # Its weight is on the plate from the end of the bouncing; it is at rest once it
        # has stopped sliding or rocking.
        self.ev.mass.append((tb, plate, cube.mass, 0.03))
        t_rest = tb + rng.uniform(0.01, 0.05)
        if rng.random() < 0.6:  # slides, tumbles, settles against a wall or a cube
            dur = rng.uniform(0.03, 0.35)
            self.ev.scrapes.append((tb, tb + dur, plate, cube.mass * rng.uniform(0.005, 0.04)))
            t_rest = tb + dur
            if rng.random() < 0.35:  # tips over at the end
                self.ev.impacts.append((t_rest, plate, cube.mass * rng.uniform(0.05, 0.2)))
            t_rest += rng.uniform(0.01, 0.06)
        cube.history.append((t_rest, plate))
        self._neighbour_shift(t_hit, plate, cube.mass)
        rec: dict[str, Any] = {"t": round(t_rest, 4), "floor": plate, "cubes": 1,
                               "t_first_impact": round(t_first, 4), "knocked": knocked}
        # Knock-down: a resting cube near the hole is pushed through it.
        if not knocked and plate > 0 and here:
            p_knock = min(0.25, 0.04 + 0.04 * len(here))
            if rng.random() < p_knock:
                victim = here[int(rng.integers(len(here)))]
                t_k = t_hit + rng.uniform(0.01, 0.08)
                victim.history.append((t_k, None))
                self.ev.mass.append((t_k, plate, -victim.mass, 0.02))
                self.ev.impacts.append((t_k, plate, victim.mass * rng.uniform(0.05, 0.2)))
                land = self._fall(victim, t_k, plate - 1, rng.uniform(0.05, 0.3),
                                  self.MODULE_H * rng.uniform(0.5, 1.0), knocked=True)
                land["t_first_impact"] = round(t_k, 4)
                self.knockdowns.append({"t": round(t_k, 4), "from": plate,
                                        "floor": land["floor"]})
                self.landings.append(land)
                caused = True
        if caused:
            rec["caused_knockdown"] = True
        return rec

    def _neighbour_shift(self, t: float, plate: int, mass: float) -> None:
        tw, rng = self.tw, self.rng
        for nb in (plate - 1, plate + 1):
            if 0 <= nb < N_LEVELS and rng.random() < tw.shift_prob:
                frac = rng.uniform(*tw.shift_frac) * rng.choice([-1.0, 1.0], p=[0.35, 0.65])
                self.ev.shifts.append((t + 0.02, nb, mass * frac, rng.uniform(*tw.shift_tau)))

    def throw(self, t0: float, kind: str = "clue") -> None:
        """A cube let go just above the entry hole at ``t0``."""
        rng = self.rng
        cube = Cube(mass=self.tw.cube_g * rng.uniform(0.96, 1.04), kind=kind)
        self.cubes.append(cube)
        h = rng.uniform(0.01, 0.08) + self.MODULE_H
        if rng.random() < 0.3:  # clips the entry hole in the top roof
            t_e = t0 + self._fall_time(h - self.MODULE_H, 0.0)
            self.ev.impacts.append((t_e, 7, cube.mass * rng.uniform(0.05, 0.25)))
        land = self._fall(cube, t0, 7, 0.0, h, knocked=False)
        self.landings.append(land)

    # -- people and room -------------------------------------------------------------
    def table_knock(self, t: float, strength: float) -> None:
        rng = self.rng
        for lvl in range(N_LEVELS):
            self.ev.impacts.append((t + 0.0005 * lvl, lvl,
                                    strength * rng.uniform(0.6, 0.9) ** lvl))
        self.knocks.append({"t": round(t, 4), "kind": "table knock"})

    def rumble(self, t0: float, t1: float, load_g: float, codes: float,
               band: tuple[float, float], levels: F64 | None = None,
               tremor_hz: float = 0.0, press: bool = False) -> None:
        rng = self.rng
        w = rng.uniform(0.3, 1.0, N_LEVELS) if levels is None else levels
        lw = load_g * w * (1.0 if press else rng.choice([-1.0, 1.0], N_LEVELS))
        pw = codes * w * rng.uniform(0.5, 1.0, N_LEVELS)
        self.ev.hands.append((t0, t1, lw, pw, band, tremor_hz))

    def hand_steady(self, t0: float, dur: float) -> None:
        rng = self.rng
        lvl_touch = int(rng.integers(2, 8))
        self.ev.impacts.append((t0, lvl_touch, rng.uniform(0.05, 0.4)))
        self.rumble(t0, t0 + dur, rng.uniform(0.03, 0.6), rng.uniform(2, 12), (3.0, 40.0),
                    tremor_hz=rng.uniform(7, 11))
        self.ev.impacts.append((t0 + dur, lvl_touch, rng.uniform(0.03, 0.2)))
        self.knocks.append({"t": round(t0, 4), "kind": "hand on tower"})
        self.knocks.append({"t": round(t0 + dur, 4), "kind": "hand off tower"})

    def chair(self, t0: float) -> None:
        rng = self.rng
        dur = rng.uniform(0.5, 2.0)
        self.rumble(t0, t0 + dur, rng.uniform(0.02, 0.3), rng.uniform(4, 30), (8.0, 70.0))
        if rng.random() < 0.5:  # bumps the table at the end
            self.table_knock(t0 + dur * rng.uniform(0.5, 1.0), rng.uniform(0.1, 0.6))
        self.knocks.append({"t": round(t0, 4), "kind": "chair moved"})

    # -- inspection ------------------------------------------------------------------
    def inspect(self, t: float, k: int) -> tuple[float, list[Cube]]:
        """Lift modules k..7, take every cube off level k, close. Returns (end time, cubes)."""
        rng, tw = self.rng, self.tw
        grip = rng.uniform(0.3, 1.0)
        t_lift = t + grip
        look = rng.uniform(1.0, 3.5)
        taken: list[Cube] = []
        tt = t_lift + look
        on_k = self.resting(k, t_lift)
        here = [on_k[i] for i in rng.permutation(len(on_k))]
        while here:
            n = min(len(here), int(rng.choice([1, 1, 2, 2, 3])))
            grab, here = here[:n], here[n:]
            touch = rng.uniform(0.4, 1.3)
            w = np.zeros(N_LEVELS)
            w[k] = 1.0
            self.rumble(tt, tt + touch, rng.uniform(0.5, 12.0), rng.uniform(3, 25), (2.0, 30.0),
                        levels=w, press=True)  # fingers press on the plate
            self.ev.impacts.append((tt, k, rng.uniform(0.02, 0.15)))
            t_rm = tt + touch
            for c in grab:
                c.history.append((t_rm, None))
                self.ev.mass.append((t_rm - 0.05, k, -c.mass, 0.1))
            self.removals.append({"t": round(t_rm, 4), "floor": k, "cubes": len(grab)})
            taken += grab
            tt = t_rm + rng.uniform(0.8, 3.0)
        t_close = tt + rng.uniform(0.3, 2.0)
        # Hands: squeeze and hold on everything below (and the lifted part, unseen).
        self.rumble(t, t_close + rng.uniform(0.2, 0.8), rng.uniform(0.05, 1.5),
                    rng.uniform(3, 20), (2.0, 25.0), tremor_hz=rng.uniform(7, 11))
        self.ev.impacts.append((t_lift, min(k + 1, 7), rng.uniform(0.05, 0.4)))
        settle = rng.uniform(*tw.lift_settle_s)
        if k < 7:
            self.ev.invalid.append((t_lift, t_close + settle, k))
            for lvl in range(k + 1, N_LEVELS):
                if rng.random() < 0.3:
                    self.ev.first_after_power.append(
                        (t_close + settle, lvl, rng.uniform(-0.5, 0.5)))
        # Seating the modules: a thump through the whole tower, small lasting re-seat offsets.
        for lvl in range(N_LEVELS):
            self.ev.impacts.append((t_close + 0.0005 * abs(lvl - k), lvl,
                                    rng.uniform(0.1, 0.8) * rng.uniform(0.5, 0.85) ** abs(lvl - k)))
            if lvl >= k:
                self.ev.offsets.append((t_close, lvl, tw.cube_g * rng.uniform(-0.08, 0.08)))
        self.lifts.append({"t": round(t_lift, 4), "exposed": k})
        self.closes.append({"t": round(t_close, 4)})
        return t_close, taken


# --------------------------------------------------------------------------------------
# Scenarios
# --------------------------------------------------------------------------------------


def plan_scenario(world: World, scenario: str, duration: float) -> None:
    """Fill the world with the scenario's throws and disturbances."""
    rng = world.rng
    quiet = rng.uniform(4.0, 7.0)
    last = duration - 2.5

    def throw_maybe_double(t: float, p_double: float) -> None:
        world.throw(t)
        if rng.random() < p_double:
            world.throw(t + rng.uniform(0.0, 0.12))

    if scenario in ("single", "noisy"):
        t = quiet + rng.uniform(0.2, 2.0)
        while t < last:
            throw_maybe_double(t, 0.08)
            t += rng.uniform(3.0, 8.0)
    if scenario == "rapid":
        t = quiet + rng.uniform(0.2, 2.0)
        while t < last:
            for _ in range(int(rng.integers(2, 7))):
                if t >= last:
                    break
                throw_maybe_double(t, 0.05)
                t += rng.uniform(0.3, 0.8)
            t += rng.uniform(3.5, 8.0)
    if scenario == "noisy":
        t = quiet + rng.uniform(1.0, 6.0)
        while t < duration - 1.5:
            r = rng.random()
            if r < 0.45:
                world.table_knock(t, rng.uniform(0.15, 2.5))
            elif r < 0.65:
                dur = min(rng.uniform(3.0, 12.0), duration - 1.0 - t)
                world.hand_steady(t, dur)
            elif r < 0.85:
                world.chair(t)
            else:
                dur = rng.uniform(2.0, 8.0)
                world.ev.talk.append((t, min(t + dur, duration), rng.uniform(0.5, 3.0)))
            t += rng.uniform(4.0, 14.0)
        # Talking in the background is frequent and not a disturbance of the tower.
        for _ in range(int(rng.integers(1, 4))):
            t0 = rng.uniform(quiet, duration - 2)
            world.ev.talk.append((t0, min(t0 + rng.uniform(2, 10), duration), rng.uniform(0.3, 2)))
    if scenario == "game":
        plan_game(world, quiet, last)


def plan_game(world: World, t: float, last: float) -> None:
    """Prologue (2 victims, 2 clues each), then inspections with clues thrown back."""
    rng = world.rng
    n_players = int(rng.integers(3, 6))
    prologue = ["victim", "victim"] + ["clue"] * (2 * n_players)
    t += rng.uniform(0.5, 2.0)
    for kind in prologue:
        if t >= last:
            return
        world.throw(t, kind)
        t += rng.uniform(2.5, 6.0)
    victims_found = 0
    while t < last - 10:
        # Choose the level to open: mostly one believed to hold cubes.
        occupied = [lv for lv in range(N_LEVELS) if world.resting(lv, t)]
        if occupied and rng.random() < 0.8:
            k = int(rng.choice(occupied))
        else:
            k = int(rng.choice(N_LEVELS, p=np.r_[np.full(7, 0.95 / 7), 0.05]))
        t_end, taken = world.inspect(t, k)
        victims = [c for c in taken if c.kind == "victim"]
        victims_found += len(victims)
        back = [c for c in taken if c.kind != "victim"]
        n_pen = 0
        if victims_found < 2:
            n_pen = 0 if victims else 1
        elif rng.random() < 0.5:
            n_pen = 1
        t = t_end + rng.uniform(1.5, 4.0)
        for _ in range(len(back) + n_pen):
            if t >= last:
                return
            world.throw(t)
            t += rng.uniform(2.5, 6.0)
        t += rng.uniform(1.0, 4.0)


# --------------------------------------------------------------------------------------
# Sensors
# --------------------------------------------------------------------------------------


def _smooth_noise(rng: np.random.Generator, t: F64, scale_s: float, n_ch: int) -> F64:
    """Zero-mean, unit-std noise that wanders on ``scale_s``; shape (len(t), n_ch)."""
    knots = np.arange(t[0] - scale_s, t[-1] + 2 * scale_s, scale_s / 3)
    v = rng.standard_normal((knots.size, n_ch))
    v = signal.lfilter([1 / 3] * 3, [1], v, axis=0)
    out = np.stack([np.interp(t, knots, v[:, c]) for c in range(n_ch)], axis=1)
    return np.asarray(out / max(float(out.std()), 1e-9))


def _band_noise(rng: np.random.Generator, n: int, fs: float, band: tuple[float, float],
                tremor_hz: float = 0.0) -> F64:
    lo, hi = band
    hi = min(hi, 0.45 * fs)
    sos = signal.butter(2, [lo, hi], btype="band", fs=fs, output="sos")
    x = signal.sosfilt(sos, rng.standard_normal(n + 200))[200:]
    x /= max(float(x.std()), 1e-9)
    if tremor_hz:
        x = 0.6 * x + 0.8 * np.sin(2 * np.pi * tremor_hz * np.arange(n) / fs
                                   + rng.uniform(0, 2 * np.pi))
    return np.asarray(x)


def _envelope(n: int, fs: float, ramp_s: float) -> F64:
    r = max(1, min(n // 2, int(ramp_s * fs)))
    env = np.ones(n)
    ramp = 0.5 - 0.5 * np.cos(np.linspace(0, np.pi, r))
    env[:r] = ramp
    env[n - r:] = ramp[::-1]
    return env


def render_piezo(tw: Tower, ev: Events, duration: float, rng: np.random.Generator) -> npt.NDArray[
        np.uint16]:
    """ADC codes, shape (n_sets, 8), set i at stream time i / piezo_rate."""
    fs = float(tw.piezo_rate)
    n = int(round(duration * fs))
    t = np.arange(n) / fs
    exc = np.zeros((n, N_LEVELS))
    for ti, lvl, j in ev.impacts:
        x = ti * fs
        i = int(x)
        if 0 <= i < n - 1:
            f = x - i
            exc[i, lvl] += j * (1 - f)
            exc[i + 1, lvl] += j * f
    for t0, t1, lvl, j in ev.scrapes:
        m = int(rng.integers(4, 25))
        for ts in rng.uniform(t0, t1, m):
            i = int(ts * fs)
            if 0 <= i < n:
                exc[i, lvl] += j * rng.uniform(0.2, 1.0)
    exc *= tw.piezo_k
    out = np.zeros((n, N_LEVELS))
    lp_b, lp_a = signal.butter(1, min(tw.xtalk_lp_hz, 0.45 * fs), fs=fs)
    th_b, th_a = signal.butter(1, min(80.0, 0.4 * fs), fs=fs)
    ac_b, ac_a = signal.butter(1, tw.ac_hz, btype="high", fs=fs)
    for c in range(N_LEVELS):
        direct = exc[:, c]
        cross = exc @ tw.piezo_xtalk[:, c]
        x = direct + signal.lfilter(lp_b, lp_a, cross)
        y = tw.click * direct
        for f_phys, q, g in zip(tw.modes_hz[c], tw.modes_q[c], tw.modes_g[c], strict=True):
            f = abs(f_phys - fs * round(f_phys / fs))  # no anti-alias filter before the ADC
            f = min(max(f, 40.0), 0.46 * fs)
            w = 2 * np.pi * f / fs
            r = math.exp(-math.pi * f / (q * fs))
            y += g * signal.lfilter([math.sin(w)], [1, -2 * r * math.cos(w), r * r], x)
        # Plate deflection under the hit, through the AC coupling: an undershoot that recovers.
        thump = signal.lfilter(ac_b, ac_a, signal.lfilter(th_b, th_a, x)) * tw.thump * 3
        out[:, c] = tw.piezo_gain[c] * (y + thump)
    # Room and hands: rumble through the structure.
    for t0, t1, _lw, pw, band, trem in ev.hands:
        i0, i1 = max(0, int(t0 * fs)), min(n, int(t1 * fs))
        if i1 - i0 < 8:
            continue
        base = _band_noise(rng, i1 - i0, fs, band, trem) * _envelope(i1 - i0, fs, 0.15)
        out[i0:i1] += base[:, None] * pw[None, :] * tw.piezo_gain[None, :].clip(0.3, None)
    for t0, t1, amp in ev.talk:
        i0, i1 = max(0, int(t0 * fs)), min(n, int(t1 * fs))
        if i1 - i0 < 8:
            continue
        syll = (np.sin(2 * np.pi * rng.uniform(3, 6) * t[i0:i1]) > rng.uniform(-0.3, 0.3))
        env = signal.lfilter([0.02], [1, -0.98], syll.astype(float)) * _envelope(i1 - i0, fs, 0.2)
        for c in range(N_LEVELS):
            out[i0:i1, c] += amp * env * _band_noise(rng, i1 - i0, fs, (90.0, 450.0))
    out += tw.bias[None, :]
    out += _smooth_noise(rng, t, tw.wander_s, N_LEVELS) * tw.wander[None, :]
    if tw.piezo_hum:
        ph = rng.uniform(0, 2 * np.pi, N_LEVELS)
        hum = tw.piezo_hum * rng.uniform(0.3, 1.0, N_LEVELS)
        out += hum[None, :] * np.sin(2 * np.pi * tw.mains_hz * t[:, None] + ph[None, :])
    out += rng.standard_normal((n, N_LEVELS)) * tw.piezo_noise[None, :]
    return np.asarray(np.clip(np.rint(out), 0, 1023).astype(np.uint16))


def reading_times(tw: Tower, duration: float, t_first: float,
                  rng: np.random.Generator) -> F64:
    """Device-clock stream times of the LOAD messages."""
    period = 1.0 / tw.hx_rate_true
    k = np.arange(int((duration - t_first) / period))
    t = t_first + k * period + rng.uniform(0, 250e-6, k.size)  # polling jitter
    return np.asarray(t[t < duration])


def render_load(tw: Tower, ev: Events, t_read: F64, duration: float,
                rng: np.random.Generator) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.bool_]]:
    """HX711 counts and fresh flags at ``t_read``; counts 0 where not valid."""
    fs = 1000.0
    n = int(duration * fs) + 2
    t = np.arange(n) / fs
    cubes = np.zeros((n, N_LEVELS))
    for ti, lvl, dg, rise in ev.mass:
        i0 = int(ti * fs)
        if i0 >= n:
            continue
        r = max(1, int(rise * fs))
        ramp = np.clip((np.arange(n - max(i0, 0)) + 1) / r, 0, 1)
        cubes[max(i0, 0):, lvl] += dg * ramp[: n - max(i0, 0)]
    force = cubes.copy()
    for c in range(N_LEVELS):  # creep of the cell under a changed load
        a = math.exp(-1 / (tw.creep_tau[c] * fs))
        force[:, c] += tw.creep_frac[c] * signal.lfilter([1 - a], [1, -a], cubes[:, c])
    for ti, lvl, dg, tau in ev.shifts:
        i0 = int(ti * fs)
        if i0 >= n:
            continue
        tt = t[i0:] - t[i0]
        force[i0:, lvl] += dg * (1 - np.exp(-tt / 0.08)) * np.exp(-tt / tau)
    for ti, lvl, dg in ev.offsets:
        i0 = int(ti * fs)
        if i0 < n:
            force[i0:, lvl] += dg
    # Impact transients: plate + cell ringing, on the hit plate and, weaker, its neighbours.
    span = int(0.8 * fs)
    tt = np.arange(span) / fs
    rings = []
    for c in range(N_LEVELS):
        w = 2 * np.pi * tw.ring_hz[c]
        rings.append(np.exp(-tw.ring_zeta[c] * w * tt) * np.sin(w * tt) * w / G_ACC)
    for ti, lvl, j in ev.impacts:
        i0 = int(ti * fs)
        if i0 >= n:
            continue
        m = min(span, n - i0)
        for c in range(N_LEVELS):
            g = tw.load_xtalk[lvl, c]
            if g > 0.005:
                force[i0:i0 + m, c] += j * tw.ring_gain * g * rings[c][:m]
    for t0, t1, lw, _pw, band, trem in ev.hands:
        i0, i1 = max(0, int(t0 * fs)), min(n, int(t1 * fs))
        if i1 - i0 < 8:
            continue
        env = _envelope(i1 - i0, fs, 0.3)
        slow = 0.7 + 0.3 * _band_noise(rng, i1 - i0, fs, (0.2, 2.0))
        fast = 0.15 * _band_noise(rng, i1 - i0, fs, (band[0], min(band[1], 40.0)), trem)
        force[i0:i1] += ((slow + fast) * env)[:, None] * lw[None, :]
    # Temperature / humidity drift of each cell's zero.
    drift = (tw.drift_g_per_min / 60.0)[None, :] * t[:, None]
    drift += _smooth_noise(rng, t, 40.0, N_LEVELS) * (np.abs(tw.drift_g_per_min) * 0.3)[None, :]
    force += drift
    # HX711: each reading averages the conversion window before it.
    win = 0.9 / tw.hx_rate_true
    csum = np.vstack([np.zeros((1, N_LEVELS)), np.cumsum(force, axis=0) / fs])
    tc = np.arange(n + 1) / fs
    avg = np.empty((t_read.size, N_LEVELS))
    for c in range(N_LEVELS):
        hi = np.interp(t_read, tc, csum[:, c])
        lo = np.interp(t_read - win, tc, csum[:, c])
        avg[:, c] = (hi - lo) / win
    if tw.load_hum_g:
        att = abs(np.sinc(tw.mains_hz * win))
        ph = rng.uniform(0, 2 * np.pi, N_LEVELS)
        amp = tw.load_hum_g * rng.uniform(0.3, 1.0, N_LEVELS) * max(att, 0.05)
        avg += amp[None, :] * np.sin(2 * np.pi * tw.mains_hz * (t_read[:, None] - win / 2)
                                     + ph[None, :])
    avg += rng.standard_normal(avg.shape) * tw.load_noise_g[None, :]
    valid = np.ones(avg.shape, dtype=bool)
    for t0, t1, k in ev.invalid:
        sel = (t_read >= t0) & (t_read < t1)
        valid[np.ix_(sel, np.arange(k + 1, N_LEVELS))] = False
    for t0, lvl, err in ev.first_after_power:
        idx = int(np.searchsorted(t_read, t0))
        if idx < t_read.size:
            avg[idx, lvl] += err
    counts = np.rint(tw.offset[None, :] + tw.sens[None, :] * avg).astype(np.int64)
    if tw.outlier_rate:
        hit = rng.random(counts.shape) < tw.outlier_rate
        for i, c in zip(*np.nonzero(hit), strict=True):
            v = int(counts[i, c]) & 0xFFFFFF
            if rng.random() < 0.6:
                v ^= 1 << int(rng.integers(12, 24))
            else:
                v = (v << 1) & 0xFFFFFF  # one clock edge late: shifted by a bit
            counts[i, c] = v - (1 << 24) if v & 0x800000 else v
    counts = np.clip(counts, -(1 << 23), (1 << 23) - 1)
    if tw.miss_rate:
        valid &= rng.random(valid.shape) >= tw.miss_rate
    counts[~valid] = 0
    return counts, valid


# --------------------------------------------------------------------------------------
# Putting a recording together
# --------------------------------------------------------------------------------------


def _frame_sizes(tw: Tower, n_sets: int, rng: np.random.Generator) -> list[int]:
    lo, hi = tw.frame_sets
    sizes: list[int] = []
    total = 0
    while total < n_sets:
        s = lo if lo == hi else int(rng.integers(lo, hi + 1))
        s = min(s, n_sets - total)
        sizes.append(s)
        total += s
    return sizes


def make_recording(seed: int, scenario: str, duration: float, out_dir: Path,
                   *, t_us_start: int | None = None) -> tuple[Path, Path]:
    """Write ``{scenario}_t{seed}.bin`` and its truth; returns both paths."""
    if scenario not in SCENARIOS:
        raise ValueError(f"unknown scenario {scenario!r}")
    tw = Tower.from_seed(seed)
    rng = np.random.default_rng([seed, zlib.crc32(scenario.encode())])
    world = World(tw, rng)
    plan_scenario(world, scenario, duration)

    # Device clock: wrap case every 4th seed, else fresh boot or mid-run GET_INFO.
    boot = "fresh"
    if t_us_start is None:
        if seed % 4 == 0:
            t_us_start = U32 - int(rng.uniform(10e6, 50e6))
            boot = "get_info"
        elif rng.random() < 0.6:
            t_us_start = int(rng.uniform(0.05e6, 0.6e6))
        else:
            t_us_start = int(rng.uniform(5e6, 3.5e9))
            boot = "get_info"
    elif t_us_start > 60_000_000:
        boot = "get_info"

    piezo = render_piezo(tw, world.ev, duration, rng)
    n_sets = piezo.shape[0]
    sizes = _frame_sizes(tw, n_sets, rng)
    # The first PIEZO frame goes out before the first LOAD: stream time 0 is its first set.
    t_load0 = sizes[0] / tw.piezo_rate + 0.0005 + rng.uniform(0, 1.0 / tw.hx_rate_true)
    t_read = reading_times(tw, duration, t_load0, rng)
    counts, valid = render_load(tw, world.ev, t_read, duration, rng)

    # Messages: (send time in device µs since stream zero, order, type, body)
    msgs: list[tuple[int, int, int, bytes]] = []
    raw = piezo.astype("<u2").tobytes()
    per_us = 1e6 / tw.piezo_rate
    i = 0
    for s in sizes:
        t_first = int(round(i * per_us))
        t_sent = int(round((i + s) * per_us)) + 60
        body = struct.pack("<IB", (t_us_start + t_first) % U32, s) + raw[i * 16:(i + s) * 16]
        msgs.append((t_sent, 1, T_PIEZO, body))
        i += s
    vbits = (valid.astype(np.int64) << np.arange(N_LEVELS)[None, :]).sum(axis=1)
    s24 = s24_bytes(counts).reshape(counts.shape[0], 24)
    t_read_us = np.rint(t_read * 1e6).astype(np.int64)
    for r in range(t_read.size):
        body = struct.pack("<IB", int(t_us_start + t_read_us[r]) % U32, int(vbits[r]))
        msgs.append((int(t_read_us[r]) + 200, 2, T_LOAD, body + s24[r].tobytes()))
    lifted = np.zeros(valid.shape, dtype=bool)
    for t0, t1, k in world.ev.invalid:
        lifted[np.ix_((t_read >= t0) & (t_read < t1), np.arange(k + 1, N_LEVELS))] = True
    timeouts = np.cumsum((~valid & ~lifted).sum(axis=1))  # lifted channels are not timeouts
    t_st = tw.status_period_s * (1 + rng.uniform(0, 0.5))
    while t_st < duration:
        n_to = int(timeouts[np.searchsorted(t_read, t_st) - 1]) if t_st > t_read[0] else 0
        up_ms = (t_us_start + int(t_st * 1e6)) // 1000
        cpu = int(np.clip(tw.cpu_pct + rng.normal(0, 3), 5, 99))
        msgs.append((int(t_st * 1e6), 3, T_STATUS, status_body(up_ms, 0, 0, n_to, cpu, 0)))
        t_st += tw.status_period_s
    msgs.sort(key=lambda m: (m[0], m[1]))

    seq = 0 if boot == "fresh" else int(rng.integers(0, 65536))
    out = bytearray()
    out += frame(T_HELLO, seq, hello_body(tw.piezo_rate, tw.load_rate, tw.fw, tw.device_id))
    seq += 1
    if boot == "get_info":  # the host asked: HELLO, then ACK
        out += frame(T_ACK, seq, struct.pack("<BHB", T_GET_INFO, int(rng.integers(0, 65536)), 0))
        seq += 1
    counts_n = {"piezo_frames": 0, "load": 0, "status": 0}
    name_of = {T_PIEZO: "piezo_frames", T_LOAD: "load", T_STATUS: "status"}
    for _, _, typ, body in msgs:
        out += frame(typ, seq, body)
        seq = (seq + 1) & 0xFFFF
        counts_n[name_of[typ]] += 1

    out_dir.mkdir(parents=True, exist_ok=True)
    rec = out_dir / f"{scenario}_t{seed}.bin"
    rec.write_bytes(bytes(out))
    landings = sorted(world.landings, key=lambda x: x["t"])
    truth = {
        "format": "towerear-crosscheck-truth/1",
        "generator": "tools/crosscheck_c/make_recordings_c.py",
        "scenario": scenario, "seed": seed, "duration_s": duration, "cells": tw.cells,
        "t_us_start": t_us_start, "boot": boot,
        "landings": landings,
        "knockdowns": sorted(world.knockdowns, key=lambda x: x["t"]),
        "removals": world.removals, "lifts": world.lifts, "closes": world.closes,
        "knocks": sorted(world.knocks, key=lambda x: x["t"]),
        "counts": counts_n,
        "tower": tw.summary(),
    }
    truth_path = out_dir / f"{scenario}_t{seed}.truth.json"
    truth_path.write_text(json.dumps(truth, indent=1))
    return rec, truth_path


def main(argv: list[str] | None = None) -> int:
    """Command line."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--towers", type=int, default=4)
    p.add_argument("--first-seed", type=int, default=1)
    p.add_argument("--duration", type=float, default=120.0)
    p.add_argument("--scenarios", nargs="+", default=list(SCENARIOS), choices=SCENARIOS)
    args = p.parse_args(argv)
    started = time.perf_counter()
    for seed in range(args.first_seed, args.first_seed + args.towers):
        for sc in args.scenarios:
            t0 = time.perf_counter()
            rec, truth = make_recording(seed, sc, args.duration, args.out)
            doc = json.loads(truth.read_text())
            print(f"{rec.name}: {len(doc['landings'])} landings, "
                  f"{len(doc['knockdowns'])} knock-downs, {len(doc['lifts'])} lifts, "
                  f"{len(doc['knocks'])} knocks, {rec.stat().st_size / 1e6:.1f} MB, "
                  f"{time.perf_counter() - t0:.1f} s", file=sys.stderr)
    print(f"done in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
