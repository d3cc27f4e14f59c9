#!/usr/bin/env python3
"""Cross-check model O: the tower of design.md taken literally, written blind to the detector.

Writes ``DIR/{scenario}_t{seed}.bin`` (the device -> host byte stream of
contracts.md section 1, nothing added) and ``DIR/{scenario}_t{seed}.truth.json``
(format ``towerear-crosscheck-truth/1``, stream seconds) for every seed and
scenario. A seed is one tower (its holes, plates, cells, discs, cube set and
board); the scenario adds the people and the room. See README.md beside this
file for every choice and number.

Usage::

    .venv/bin/python tools/crosscheck_o/make_recordings_o.py --out DIR --towers 8 \
        --first-seed 1 --duration 120 [--scenarios single rapid noisy game] [--workers 2]
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import struct
import sys
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

import numpy as np
from scipy import signal

G = 9.81
FS = 2000  # piezo sample sets per second (nominal = true: the timer is the crystal)
N_LEVELS = 8
MODULE_H = 0.031  # m between plates: a ~25 cm tower of eight card boxes
SCENARIOS = ("single", "rapid", "noisy", "game")
COLOURS = ("yellow", "blue", "brown", "gray", "black", "white")
COUNTS_PER_MV_V = 2**23 * 256 * 1e-3  # HX711 gain 128, excitation = AVDD: counts per mV/V
S24_MAX = 2**23 - 1

# Knock-downs (README "Knock-downs"): per cube resting on the struck plate, the chance
# that an impact on that plate pushes it into the hole (touch ~0.1 x near the hole ~0.3).
KNOCK_P_PER_CUBE = 0.015
KNOCK_P_MAX = 0.3
# A thrown cube that knocks a resting one gave it most of its momentum: it stays on
# that plate this often (equal masses; a head-on elastic hit would stop it dead).
KNOCK_THROWN_STAYS = 0.6


# ---------------------------------------------------------------------------
# Wire encoding (contracts.md section 1), our own implementation.

def _make_crc_table() -> np.ndarray:
    table = np.zeros(256, np.uint32)
    for i in range(256):
        c = i << 8
        for _ in range(8):
            c = ((c << 1) ^ 0x1021) if c & 0x8000 else (c << 1)
            c &= 0xFFFF
        table[i] = c
    return table


_CRC_TABLE = _make_crc_table()
_CRC_LIST = [int(x) for x in _CRC_TABLE]


def crc16_ccitt_false(data: bytes) -> int:
    """CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, no reflection), table driven."""
    crc = 0xFFFF
    for b in data:
        crc = ((crc << 8) & 0xFFFF) ^ _CRC_LIST[((crc >> 8) ^ b) & 0xFF]
    return crc


def crc16_ccitt_false_reference(data: bytes) -> int:
    """The same CRC bit by bit, straight from its definition (a second implementation)."""
    crc = 0xFFFF
    for b in data:
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) & 0xFFFF if crc & 0x8000 else (crc << 1) & 0xFFFF
    return crc


def crc16_rows(rows: np.ndarray) -> np.ndarray:
    """CRC-16/CCITT-FALSE of every row of a (R, L) uint8 array, as uint16."""
    crc = np.full(rows.shape[0], 0xFFFF, np.uint32)
    for j in range(rows.shape[1]):
        crc = ((crc << 8) & 0xFFFF) ^ _CRC_TABLE[((crc >> 8) ^ rows[:, j]) & 0xFF]
    return crc.astype(np.uint16)


def cobs_encode(data: bytes) -> bytes:
    """COBS-encode one message (no trailing 0x00 delimiter)."""
    out = bytearray()
    block = bytearray()
    for b in data:
        if b == 0:
            out.append(len(block) + 1)
            out += block
            block.clear()
        else:
            block.append(b)
            if len(block) == 254:
                out.append(255)
                out += block
                block.clear()
    out.append(len(block) + 1)
    out += block
    return bytes(out)


def cobs_encode_rows(rows: np.ndarray) -> np.ndarray:
    """COBS-encode each row of a (R, L) uint8 array (L <= 253), each followed by its 0x00.

    With L <= 253 no block reaches 254 bytes, so every row encodes to L + 2
    bytes: a code byte in front, each zero replaced by the distance to the
    next zero (or to the end), the delimiter at the end.
    """
    n_rows, length = rows.shape
    if length > 253:
        raise ValueError("cobs_encode_rows handles rows of at most 253 bytes")
    idx = np.where(rows == 0, np.arange(length), length)
    # next_zero[:, j]: index of the first zero at or after j (length if none).
    next_zero = np.minimum.accumulate(idx[:, ::-1], axis=1)[:, ::-1]
    next_zero = np.concatenate([next_zero, np.full((n_rows, 1), length)], axis=1)
    out = np.zeros((n_rows, length + 2), np.uint8)
    out[:, 0] = next_zero[:, 0] + 1
    after = next_zero[:, 1:] - np.arange(length)  # code for a zero at j: next zero after j - j
    out[:, 1:length + 1] = np.where(rows == 0, after, rows)
    return out


def _frames(kind: int, seqs: np.ndarray, bodies: np.ndarray) -> np.ndarray:
    """Encoded frames (R, L+4+2) for messages of one type with equal-length bodies."""
    head = np.empty((len(seqs), 3), np.uint8)
    head[:, 0] = kind
    head[:, 1] = seqs & 0xFF
    head[:, 2] = (seqs >> 8) & 0xFF
    msg = np.concatenate([head, bodies], axis=1)
    crc = crc16_rows(msg)
    tail = np.stack([crc & 0xFF, crc >> 8], axis=1).astype(np.uint8)
    return cobs_encode_rows(np.concatenate([msg, tail], axis=1))


def _u32_bytes(v: np.ndarray) -> np.ndarray:
    return np.asarray(v, np.int64).astype("<u4").view(np.uint8).reshape(-1, 4)


def _s24_bytes(v: np.ndarray) -> np.ndarray:
    u = np.asarray(v, np.int64) & 0xFFFFFF
    return np.stack([u & 0xFF, (u >> 8) & 0xFF, (u >> 16) & 0xFF], axis=-1).astype(np.uint8)


# ---------------------------------------------------------------------------
# The tower: everything a seed fixes.

@dataclass
class Tower:
    """One physical tower and its electronics, drawn from the seed."""

    seed: int
    cube_mass_g: float
    cube_spread: float
    rest_p: np.ndarray  # chance a cube arriving on plate L stays there (hole offsets)
    plate_f: np.ndarray  # plate-on-cell resonance, Hz
    plate_zeta: np.ndarray
    plate_mass_g: np.ndarray
    mode_f: np.ndarray  # (8, 2) card bending modes heard by the disc, Hz
    mode_tau: np.ndarray  # (8, 2) decay, s
    mode_amp2: np.ndarray  # weight of the second mode
    disc_k: np.ndarray  # codes per N s of impulse on its own plate
    xt_down: float  # crosstalk amplitude per joint, towards lower levels
    xt_up: float
    hp_hz: float  # AC coupling corner of the piezo front end
    bias: np.ndarray
    adc_noise: float
    hum: np.ndarray  # codes per channel (quiet room)
    mains_hz: float
    cells: str
    cpg: np.ndarray  # counts per gram, signed (a reversed cell counts down)
    offset: np.ndarray  # counts at an empty plate
    load_noise: np.ndarray  # counts rms
    drift_rw: np.ndarray  # g per sqrt(s)
    load_period: float  # s between HX711 conversions (on-chip oscillator)
    sets_per_frame: int
    device_id: bytes
    boot_us: int

    def describe(self) -> dict[str, Any]:
        """The tower's numbers for the truth file."""
        return {
            "cube_mass_g": round(self.cube_mass_g, 4),
            "rest_p": [round(float(x), 3) for x in self.rest_p],
            "plate_f_hz": [round(float(x), 1) for x in self.plate_f],
            "mode_f_hz": [[round(float(x), 1) for x in r] for r in self.mode_f],
            "xt_db_per_joint": [round(20 * math.log10(self.xt_down), 1),
                                round(20 * math.log10(self.xt_up), 1)],
            "cells": self.cells,
            "counts_per_g": [round(float(x), 1) for x in self.cpg],
            "load_noise_counts": [round(float(x), 1) for x in self.load_noise],
            "load_rate_hz": round(1 / self.load_period, 3),
            "mains_hz": self.mains_hz,
            "sets_per_frame": self.sets_per_frame,
        }


def make_tower(seed: int) -> Tower:
    """Draw tower ``seed``: its own random stream, shared by all its scenarios."""
    r = np.random.default_rng([seed, 7919])
    # Holes smaller upwards and not quite aligned: a cube arriving on a plate stays
    # there 15-35 % of the time; the hole down to the ground floor is the worst
    # aligned, so "few cubes reach the ground floor".
    rest_p = r.uniform(0.15, 0.35, N_LEVELS)
    rest_p[1] = r.uniform(0.5, 0.75)
    rest_p[0] = 1.0  # the base plate has no hole
    mode1 = r.uniform(180, 650, N_LEVELS)
    mode_f = np.stack([mode1, mode1 * r.uniform(1.6, 2.8, N_LEVELS)], axis=1)
    mode_tau = np.stack([r.uniform(0.010, 0.040, N_LEVELS), r.uniform(0.004, 0.015, N_LEVELS)],
                        axis=1)
    cells = "matched" if r.random() < 0.5 else "mixed"
    if cells == "matched":
        ro = r.uniform(0.7, 1.1) * (1 + r.normal(0, 0.015, N_LEVELS))
        sign = np.ones(N_LEVELS)
    else:
        ro = r.choice([0.6, 0.8, 1.0], N_LEVELS) * (1 + r.normal(0, 0.05, N_LEVELS))
        sign = np.where(r.random(N_LEVELS) < 0.2, -1.0, 1.0)  # leads swapped
    cpg = sign * ro * COUNTS_PER_MV_V / 100.0  # a 100 g cell: rated output at 100 g
    plate_mass = r.uniform(10, 22, N_LEVELS)
    zero_balance = r.uniform(-0.1, 0.1, N_LEVELS) * COUNTS_PER_MV_V
    offset = zero_balance + cpg * plate_mass
    mains = 50.0 if r.random() < 0.75 else 60.0
    ppm = r.uniform(-300, 300)
    return Tower(
        seed=seed,
        cube_mass_g=float(r.uniform(0.3, 0.8)),
        cube_spread=float(r.uniform(0.01, 0.04)),
        rest_p=rest_p,
        plate_f=r.uniform(40, 95, N_LEVELS),
        plate_zeta=r.uniform(0.03, 0.10, N_LEVELS),
        plate_mass_g=plate_mass,
        mode_f=mode_f,
        mode_tau=mode_tau,
        mode_amp2=r.uniform(0.2, 0.6, N_LEVELS),
        disc_k=r.uniform(1.6e5, 4.0e5, N_LEVELS),
        xt_down=float(10 ** (-r.uniform(7, 13) / 20)),
        xt_up=float(10 ** (-r.uniform(9, 16) / 20)),
        hp_hz=float(r.uniform(4, 15)),
        bias=511.5 + r.normal(0, 2.0, N_LEVELS),
        adc_noise=float(r.uniform(0.35, 0.9)),
        hum=r.uniform(0.2, 1.2, N_LEVELS) * (1 + 0.06 * np.arange(N_LEVELS)),
        mains_hz=mains * (1 + ppm * 1e-6),  # as the device's own clock measures it
        cells=cells,
        cpg=cpg,
        offset=offset,
        load_noise=r.uniform(40, 130, N_LEVELS),
        drift_rw=r.uniform(0.1e-3, 0.5e-3, N_LEVELS),
        load_period=1 / (80.0 * (1 + r.normal(0, 0.01))),
        sets_per_frame=int(r.choice([8, 10, 12, 14])),
        device_id=r.integers(0, 256, 8).astype(np.uint8).tobytes(),
        boot_us=int(r.integers(150_000, 600_000)) // 4 * 4,
    )


# ---------------------------------------------------------------------------
# The scene: what happens, in stream seconds.

@dataclass
class Cube:
    """One wooden cube."""

    id: int
    mass_g: float
    colour: str
    floor: int = -1  # -1: not in the tower
    t_rest: float = -1.0


@dataclass
class Scene:
    """Events that the renderer turns into sensor signals, plus the truth."""

    duration: float
    strikes: list[tuple[float, int, float]] = field(default_factory=list)  # t, level, N s
    steps: list[tuple[float, int, float]] = field(default_factory=list)  # t, level, grams
    presses: list[tuple[float, float, int, float]] = field(default_factory=list)
    dull: list[tuple[float, int, float]] = field(default_factory=list)  # t, centre/-1, m/s
    noises: list[tuple[float, float, int, float, float, float]] = field(default_factory=list)
    disconnected: list[tuple[float, float, int]] = field(default_factory=list)  # lift, back
    talk: list[tuple[float, float, float]] = field(default_factory=list)
    hum_scale: float = 1.0
    landings: list[dict[str, Any]] = field(default_factory=list)
    knockdowns: list[dict[str, Any]] = field(default_factory=list)
    removals: list[dict[str, Any]] = field(default_factory=list)
    lifts: list[dict[str, Any]] = field(default_factory=list)
    closes: list[dict[str, Any]] = field(default_factory=list)
    knocks: list[dict[str, Any]] = field(default_factory=list)
    spills: list[dict[str, Any]] = field(default_factory=list)
    game: dict[str, Any] | None = None


class Builder:
    """Builds a scene: throws, handling and room, with the tower's cube state."""

    def __init__(self, tower: Tower, duration: float, rng: np.random.Generator) -> None:
        self.tower = tower
        self.rng = rng
        self.scene = Scene(duration)
        self.cubes: list[Cube] = []
        self.on_floor: list[list[Cube]] = [[] for _ in range(N_LEVELS)]
        self._throw_no = 0

    def new_cube(self, colour: str) -> Cube:
        t = self.tower
        cube = Cube(len(self.cubes), t.cube_mass_g * (1 + self.rng.normal(0, t.cube_spread)),
                    colour)
        self.cubes.append(cube)
        return cube

    # -- a cube's way down -------------------------------------------------
    def throw(self, t_release: float, cube: Cube) -> int:
        """Drop ``cube`` into the entry; returns the floor it rests on (state updated)."""
        rng = self.rng
        h0 = rng.uniform(0.02, 0.08)  # dropped from the fingers above the lid
        v = math.sqrt(2 * G * h0)
        t = t_release + math.sqrt(2 * h0 / G)
        self._throw_no += 1
        rec = {"id": cube.id, "colour": cube.colour, "mass_g": round(cube.mass_g, 4),
               "t_release": round(t_release, 4), "knocked": False, "caused_knockdown": False,
               "throw": self._throw_no}
        return self._fall(cube, 7, t, v, rec, may_knock=True)

    def _fall(self, cube: Cube, level: int, t: float, v: float, rec: dict[str, Any],
              may_knock: bool) -> int:
        """Fall from just above plate ``level`` (through the hole of the level above)."""
        rng = self.rng
        m_kg = cube.mass_g * 1e-3
        path: list[list[Any]] = []
        t_first: float | None = None
        while True:
            v_new = math.sqrt(v * v + 2 * G * MODULE_H)
            t += (v_new - v) / G
            v = v_new
            if level == 0 or rng.random() < self.tower.rest_p[level]:
                outcome = "rest"
            else:
                u = rng.random()
                outcome = "clean" if u < 0.3 else ("glance" if u < 0.7 else "hit")
            if outcome == "clean":  # through the hole without touching it
                path.append([round(t, 4), level, "clean"])
                level -= 1
                continue
            e = rng.uniform(0.3, 0.5)  # wood on card
            if outcome == "glance":  # catches the hole edge of this plate, falls on
                j = m_kg * v * rng.uniform(0.15, 0.45)
                self.scene.strikes.append((t, level, j))
                t_first = t if t_first is None else t_first
                path.append([round(t, 4), level, "edge"])
                v *= rng.uniform(0.7, 0.9)
                level -= 1
                continue
            # The cube hits the plate itself: it may knock a resting cube into the hole.
            self.scene.strikes.append((t, level, m_kg * v * (1 + e)))
            t_first = t if t_first is None else t_first
            path.append([round(t, 4), level, "plate"])
            settled = [c for c in self.on_floor[level] if c.t_rest < t]
            if may_knock and level >= 1 and settled:
                p = min(KNOCK_P_MAX, KNOCK_P_PER_CUBE * len(settled))
                if rng.random() < p:
                    self._knock(settled[int(rng.integers(len(settled)))], level, t, rec)
                    may_knock = False
                    outcome = "rest" if rng.random() < KNOCK_THROWN_STAYS else "hit"
                    v *= rng.uniform(0.3, 0.6)  # momentum given away
            if outcome == "hit":  # bounces, tumbles into the hole
                t += rng.uniform(0.04, 0.15)
                self.scene.strikes.append((t, level, m_kg * rng.uniform(0.05, 0.25)))
                v = rng.uniform(0.05, 0.3)
                level -= 1
                continue
            # Rest here: bounces until a rebound is under 0.12 m/s, then slides and rocks.
            vb = e * v
            while vb > 0.12:
                t += 2 * vb / G
                eb = rng.uniform(0.3, 0.5)
                self.scene.strikes.append((t, level, m_kg * vb * (1 + eb)))
                vb *= eb
            t_contact = t
            self.scene.steps.append((t_contact, level, cube.mass_g))
            t_rest = t + rng.uniform(0.03, 0.15)
            for tc in np.sort(rng.uniform(t_contact + 0.01, t_rest, rng.integers(1, 3))):
                self.scene.strikes.append((float(tc), level, m_kg * rng.uniform(0.01, 0.04)))
            cube.floor, cube.t_rest = level, t_rest
            self.on_floor[level].append(cube)
            assert t_first is not None
            rec.update({"t": round(t_rest, 4), "t_first_impact": round(t_first, 4),
                        "t_contact": round(t_contact, 4), "floor": level, "cubes": 1,
                        "path": path})
            self.scene.landings.append(rec)
            return level

    def _knock(self, victim: Cube, level: int, t_hit: float, by: dict[str, Any]) -> None:
        """``victim`` is pushed off plate ``level`` into its hole and lands lower down."""
        t_knock = t_hit + self.rng.uniform(0.01, 0.05)
        self.on_floor[level].remove(victim)
        self.scene.steps.append((t_knock, level, -victim.mass_g))
        by["caused_knockdown"] = True
        rec = {"id": victim.id, "colour": victim.colour, "mass_g": round(victim.mass_g, 4),
               "knocked": True, "caused_knockdown": False, "from_floor": level,
               "t_knocked": round(t_knock, 4), "by_id": by["id"], "by_throw": by["throw"]}
        floor = self._fall(victim, level - 1, t_knock, self.rng.uniform(0.05, 0.3), rec,
                           may_knock=False)
        self.scene.knockdowns.append({"t": round(t_knock, 4), "from_floor": level,
                                      "floor": floor, "id": victim.id, "by_id": by["id"]})

    # -- hands ---------------------------------------------------------------
    def lift(self, t_grip: float, exposed: int) -> float:
        """Grip and lift modules exposed..7; returns the time contacts part."""
        rng = self.rng
        t_lift = t_grip + rng.uniform(0.3, 0.9)
        # Hands on the card walls while gripping and lifting: low rumble everywhere.
        self.scene.noises.append((t_grip, t_lift + 0.3, max(exposed, 1), rng.uniform(5, 25),
                                  20.0, 300.0))
        # The lifting hand tugs the stack just before the contacts part.
        self.scene.dull.append((t_lift - 0.02, exposed, rng.uniform(0.002, 0.01)))
        self._lift_state = (t_lift, exposed)
        self.scene.lifts.append({"t": round(t_lift, 4), "exposed": exposed,
                                 "t_grip": round(t_grip, 4)})
        return t_lift

    def close(self, t_start: float) -> float:
        """Set the lifted modules back; returns the time contacts make."""
        rng = self.rng
        t_lift, exposed = self._lift_state
        t_close = t_start + rng.uniform(0.5, 2.0)
        self.scene.noises.append((t_close - 0.6, t_close + 0.2, max(exposed, 1),
                                  rng.uniform(5, 20), 20.0, 300.0))
        self.scene.dull.append((t_close, exposed, rng.uniform(0.005, 0.03)))  # set down
        for lv in range(exposed + 1, N_LEVELS):
            self.scene.disconnected.append((t_lift, t_close, lv))
        self.scene.closes.append({"t": round(t_close, 4), "exposed": exposed})
        return t_close

    def remove(self, t: float, floor: int, cubes: list[Cube]) -> float:
        """Fingers take ``cubes`` off ``floor``; returns when they left the plate."""
        rng = self.rng
        dur = rng.uniform(0.4, 1.2)
        t_leave = t + dur
        self.scene.presses.append((t, t_leave, floor, rng.uniform(4, 25)))
        self.scene.noises.append((t, t_leave, floor, rng.uniform(3, 12), 100.0, 800.0))
        mass = sum(c.mass_g for c in cubes)
        self.scene.steps.append((t_leave, floor, -mass))
        for c in cubes:
            self.on_floor[floor].remove(c)
            c.floor = -1
        self.scene.removals.append({"t": round(t_leave, 4), "floor": floor, "cubes": len(cubes),
                                    "t_touch": round(t, 4), "mass_g": round(mass, 4),
                                    "colours": [c.colour for c in cubes]})
        return t_leave

    def empty_floor(self, t: float, floor: int) -> tuple[float, list[Cube]]:
        """Take every cube off ``floor`` in grabs of 1-3; returns end time and cubes."""
        taken: list[Cube] = []
        while self.on_floor[floor]:
            k = min(len(self.on_floor[floor]), int(self.rng.integers(1, 4)))
            grab = list(self.on_floor[floor][:k])
            t = self.remove(t, floor, grab) + self.rng.uniform(0.6, 2.0)
            taken += grab
        return t, taken

    def spill(self, t_lift: float, exposed: int) -> Cube | None:
        """Sometimes a cube slips out of a lifted module onto the table."""
        candidates = [c for lv in range(exposed + 1, N_LEVELS) for c in self.on_floor[lv]]
        if not candidates or self.rng.random() >= 0.05:
            return None
        c = candidates[int(self.rng.integers(len(candidates)))]
        self.on_floor[c.floor].remove(c)
        # The channel is disconnected: its load simply comes back lighter.
        t = t_lift + self.rng.uniform(0.2, 0.8)
        self.scene.steps.append((t, c.floor, -c.mass_g))
        self.scene.spills.append({"t": round(t, 4), "floor": c.floor, "id": c.id})
        c.floor = -1
        return c

    # -- room ------------------------------------------------------------------
    def table_knock(self, t: float, lo: float, hi: float) -> None:
        self.scene.dull.append((t, -1, self.rng.uniform(lo, hi)))
        self.scene.knocks.append({"t": round(t, 4), "kind": "table"})

    def talking(self, t0: float, t1: float, amp: tuple[float, float], busy: float) -> None:
        """Phrases of speech over ``busy`` of the time between t0 and t1."""
        t = t0 + self.rng.uniform(0, 2)
        while t < t1:
            length = self.rng.uniform(1.0, 5.0)
            self.scene.talk.append((t, min(t + length, t1), self.rng.uniform(*amp)))
            t += length / busy * self.rng.uniform(0.7, 1.3)


# ---------------------------------------------------------------------------
# Scenarios.

def _quiet_start(rng: np.random.Generator) -> float:
    return float(rng.uniform(4.5, 7.0))


FULL_TOWER = 100  # cubes; a tester empties the tower then (long sessions only)


def _empty_tower(b: Builder, t: float, end: float) -> float:
    """Empty a full tower floor by floor from the top; returns when done (inf: no time)."""
    if t + sum(4 + 1.8 * len(f) for f in b.on_floor) > end:
        return math.inf
    for floor in range(N_LEVELS - 1, -1, -1):
        if b.on_floor[floor]:
            t = b.lift(t, floor) + b.rng.uniform(0.5, 1.5)
            t, _ = b.empty_floor(t, floor)
            t = b.close(t) + b.rng.uniform(1.0, 3.0)
    return t


def _throws_single(b: Builder, t: float, end: float, gap: tuple[float, float]) -> None:
    colours = b.rng.choice(COLOURS, 4, replace=False)
    while t < end:
        if sum(map(len, b.on_floor)) >= FULL_TOWER:
            t = _empty_tower(b, t, end)
            continue
        b.throw(t, b.new_cube(str(b.rng.choice(colours))))
        t += b.rng.uniform(*gap)


def _throws_rapid(b: Builder, t: float, end: float) -> None:
    colours = b.rng.choice(COLOURS, 4, replace=False)
    while t < end:
        if sum(map(len, b.on_floor)) >= FULL_TOWER:
            t = _empty_tower(b, t, end)
            continue
        for _ in range(int(b.rng.integers(2, 7))):
            if t >= end:
                break
            b.throw(t, b.new_cube(str(b.rng.choice(colours))))
            t += b.rng.uniform(0.3, 0.8)
        t += b.rng.uniform(3.0, 6.0)


def _knocks_away_from_throws(b: Builder, t0: float, end: float, every: tuple[float, float],
                             strength: tuple[float, float]) -> None:
    """Table knocks at random, but not within 0.6 s of a cube's fall (truth stays clear)."""
    busy = [(x["t_first_impact"] - 0.6, x["t"] + 0.6) for x in b.scene.landings]
    busy += [(x["t_grip"] - 0.6, (c["t"] if c else b.scene.duration) + 0.6)
             for x, c in zip(b.scene.lifts, b.scene.closes + [None] * len(b.scene.lifts),
                             strict=False)]
    busy += [(x["t"] - 2.5, x["t"] + 0.6) for x in b.scene.closes + b.scene.removals]
    t = t0 + b.rng.uniform(*every)
    while t < end:
        if not any(lo <= t <= hi for lo, hi in busy):
            b.table_knock(t, *strength)
            t += b.rng.uniform(*every)
        else:
            t += 0.7


def build_scene(tower: Tower, scenario: str, duration: float, seed: int) -> Scene:
    """What happens in recording (seed, scenario): a random stream of its own."""
    rng = np.random.default_rng([seed, SCENARIOS.index(scenario), 104729])
    b = Builder(tower, duration, rng)
    t0 = _quiet_start(rng)
    end = duration - 2.5  # every cube has come to rest before the recording stops
    if scenario == "single":
        _throws_single(b, t0, end, (3.0, 8.0))
    elif scenario == "rapid":
        _throws_rapid(b, t0, end)
    elif scenario == "noisy":
        b.scene.hum_scale = float(rng.uniform(3.0, 6.0))
        _throws_single(b, t0, end, (3.0, 8.0))
        b.talking(0.5, duration, (1.0, 5.0), 0.7)
        # Somebody steadies the tower now and then: hands on the card, no lift.
        t = t0 + rng.uniform(10, 40)
        while t < end:
            b.scene.noises.append((t, t + rng.uniform(0.3, 1.0), int(rng.integers(0, 8)),
                                   rng.uniform(3, 15), 20.0, 300.0))
            t += rng.uniform(15, 45)
        _knocks_away_from_throws(b, t0, end, (8.0, 25.0), (0.005, 0.04))
    elif scenario == "game":
        b.scene.hum_scale = float(rng.uniform(1.0, 2.0))
        b.talking(0.5, duration, (0.3, 2.0), 0.5)
        play_game(b, t0, end)
        _knocks_away_from_throws(b, t0, end, (20.0, 60.0), (0.003, 0.02))
    else:
        raise ValueError(f"unknown scenario {scenario!r}")
    return b.scene


def play_game(b: Builder, t: float, end: float) -> None:
    """Mord im Arosa by the rule text, until the game ends or time runs out."""
    rng = b.rng
    n_players = int(rng.integers(3, 6))
    players = [str(c) for c in rng.choice(COLOURS, n_players, replace=False)]
    supply = dict.fromkeys(players, 20)
    sheet = {p: [0] * N_LEVELS for p in players}
    crime_scenes: list[int] = []
    log: list[dict[str, Any]] = []
    victims_found = 0
    phase = "prologue"

    def over() -> bool:
        return any(sum(sheet[p]) >= 10 or supply[p] == 0 for p in players)

    def throw(colour: str, why: str) -> None:
        throw_cube(b.new_cube(colour), why)

    def throw_cube(cube: Cube, why: str) -> None:
        nonlocal t
        if t >= end:  # the recording stops; the game goes on without us
            return
        floor = b.throw(t, cube)
        log.append({"t": round(t, 3), "do": "throw", "color": cube.colour, "floor": floor,
                    "why": why})
        t += rng.uniform(1.2, 2.8)  # wait for the rest, the app names the next thrower

    # Prologue: the last to hold a knife throws both victims, then two clues each in turn.
    knife = int(rng.integers(n_players))
    for _ in range(2):
        throw("red", "victim")
    for i in range(n_players):
        p = players[(knife + i) % n_players]
        for _ in range(2):
            supply[p] -= 1
            throw(p, "prologue")
        t += rng.uniform(0.5, 2.0)
    phase = "act1"
    turn = int(rng.integers(n_players))  # whoever was last inside a hotel
    while t < end - 8 and not over():
        me = players[turn]
        t += rng.uniform(3, 10) if phase == "act1" else rng.uniform(5, 20)
        reds = [lv for lv in range(N_LEVELS) if any(c.colour == "red" for c in b.on_floor[lv])]
        action = "inspect"
        suspects: list[str] = []
        if phase == "act1":
            # Half the time the investigator heard a victim (give or take a floor).
            if reds and rng.random() < 0.5:
                floor = int(np.clip(rng.choice(reds) + rng.choice([-1, 0, 0, 1]), 0, 7))
            else:
                floor = int(rng.integers(0, 8))
        else:
            floor = int(rng.integers(0, 8))
            if sum(sheet[me]) > 0 and rng.random() < 0.4:
                action = "cover"
            else:
                action = "suspect"
                others = [p for p in players if p != me]
                suspects = [str(s) for s in rng.choice(others, min(len(others),
                                                                   int(rng.integers(1, 3))),
                                                       replace=False)]
        # A turn must fit before the end: look, grabs of 1-3 cubes, closing.
        if t + 8 + 3.5 * len(b.on_floor[floor]) > end:
            break
        t_lift = b.lift(t, floor)
        spilled = b.spill(t_lift, floor)
        t = t_lift + rng.uniform(1.0, 4.0)
        here = list(b.on_floor[floor])
        penalties = 0
        entry: dict[str, Any] = {"t": round(t_lift, 3), "do": action, "by": me,
                                 "floor": floor}
        if action == "inspect":
            victims = [c for c in here if c.colour == "red"]
            if victims:
                crime_scenes.append(floor)
                victims_found += len(victims)
                for p in players:
                    if p != me:  # the investigator overlooks his own clues
                        n = min(supply[p], sum(c.colour == p for c in here))
                        supply[p] -= n
                        sheet[p][floor] += n
            else:
                penalties = 1
        elif action == "suspect":
            entry["suspects"] = suspects
            if floor == 0 and not any(c.colour == me for c in here):
                penalties = len(suspects)  # the ground-floor case
            else:
                for s in suspects:
                    n = min(supply[s], sum(c.colour == s for c in here))
                    supply[s] -= n
                    sheet[s][floor] += n
                    penalties += n == 0
        else:
            mine = sum(c.colour == me for c in here)
            back = min(mine, sheet[me][floor])
            sheet[me][floor] -= back
            supply[me] += back
            penalties = int(mine == 0)
        log.append(entry)
        t, taken = b.empty_floor(t, floor)
        t = b.close(t) + rng.uniform(1.5, 3.5)
        # Victims go onto the sheet; the clues found are thrown back one after another.
        for c in taken:
            if c.colour != "red" and not over():
                throw_cube(c, "back")
        if spilled is not None and not over():
            throw_cube(spilled, "fell out")
        for _ in range(penalties):
            if over() or supply[me] == 0:
                break
            supply[me] -= 1
            throw(me, "penalty")
        if phase == "act1" and victims_found >= 2:
            phase = "act2"
        turn = (turn + 1) % n_players
        t += rng.uniform(2, 4.5)
    b.scene.game = {"players": players, "phase": "over" if over() else phase,
                    "crime_scenes": sorted(set(crime_scenes)), "sheet": sheet,
                    "supply": supply, "log": log}


# ---------------------------------------------------------------------------
# Rendering the sensors.

def _burst(n: int, tau: float) -> int:
    return min(n, int(6 * tau * FS) + 2)


def render_piezo(tower: Tower, scene: Scene, n: int, rng: np.random.Generator) -> np.ndarray:
    """The eight piezo channels as ADC codes, (n, 8) uint16."""
    x = np.zeros((N_LEVELS, n))
    lv_idx = np.arange(N_LEVELS)
    for t0, level, j in scene.strikes:
        amp = tower.disc_k[level] * j
        for k in lv_idx:
            dist = k - level
            gain = 1.0 if dist == 0 else (tower.xt_up ** dist if dist > 0
                                           else tower.xt_down ** -dist)
            a = amp * gain
            if a < 0.2:
                continue
            start = t0 + 0.00025 * abs(dist)  # through the card, ~0.25 ms a joint
            i0 = int(math.ceil(start * FS))
            length = _burst(n - i0, float(tower.mode_tau[level, 0]))
            if length <= 0:
                continue
            tt = (i0 + np.arange(length)) / FS - start
            wave = _modes(tower, level, tt)
            if dist != 0:  # the neighbour hears the struck plate and rings its own
                wave = 0.5 * wave + 0.5 * _modes(tower, int(k), tt)
            x[k, i0:i0 + length] += a * wave
    for t0, centre, dv in scene.dull:
        # A knock or a module set down: the whole stack moves, every disc hears a dull
        # 25-120 Hz thump, plus its own plate ringing a little.
        f_body = rng.uniform(25, 120)
        tau = rng.uniform(0.015, 0.05)
        i0 = int(math.ceil(t0 * FS))
        length = _burst(n - i0, tau)
        if length <= 0:
            continue
        tt = (i0 + np.arange(length)) / FS - t0
        body = np.exp(-tt / tau) * np.sin(2 * np.pi * f_body * tt)
        for k in lv_idx:
            near = 1.0 if centre < 0 else 0.7 ** abs(int(k) - centre)
            a = dv * 6000 * near * rng.uniform(0.7, 1.3)  # codes per m/s of base motion
            x[k, i0:i0 + length] += a * (body + 0.3 * _modes(tower, int(k), tt))
    for t0, t1, centre, amp, lo, hi in scene.noises:
        i0, i1 = int(t0 * FS), min(n, int(t1 * FS))
        if i1 - i0 < 16:
            continue
        sos = signal.butter(2, [lo, hi], "bandpass", fs=FS, output="sos")
        env = np.sin(np.linspace(0, np.pi, i1 - i0)) ** 0.5
        for k in lv_idx:
            a = amp * 0.6 ** abs(int(k) - centre)
            if a < 0.2:
                continue
            noise = signal.sosfilt(sos, rng.normal(0, 1, i1 - i0))
            x[k, i0:i1] += a * env * noise / max(float(np.std(noise)), 1e-9)
    x += _talk(scene, n, rng)
    # AC coupling: first-order high-pass of the disc's capacitance into the bias resistors.
    b_hp, a_hp = signal.butter(1, tower.hp_hz, "highpass", fs=FS)
    x = signal.lfilter(b_hp, a_hp, x, axis=1)
    tt = np.arange(n) / FS
    ph = rng.uniform(0, 2 * np.pi)
    hum_wave = (np.sin(2 * np.pi * tower.mains_hz * tt + ph)
                + 0.3 * np.sin(2 * np.pi * 3 * tower.mains_hz * tt + 3 * ph)
                + 0.1 * np.sin(2 * np.pi * 5 * tower.mains_hz * tt + 5 * ph))
    hum = tower.hum[:, None] * scene.hum_scale * hum_wave[None, :]
    x += hum
    # A lifted module's disc is off its contacts: the pin keeps the base board's bias,
    # a fifth of the hum; reconnecting, the disc brings some charge back (a click).
    tau_hp = 1 / (2 * np.pi * tower.hp_hz)
    for t_off, t_on, ch in scene.disconnected:
        i0, i1 = int(t_off * FS), min(n, int(t_on * FS))
        x[ch, i0:i1] = 0.2 * hum[ch, i0:i1]
        if i1 < n:
            length = _burst(n - i1, tau_hp)
            x[ch, i1:i1 + length] += rng.normal(0, 20) * np.exp(-np.arange(length) / FS / tau_hp)
    x += tower.bias[:, None] + rng.normal(0, tower.adc_noise, x.shape)
    return np.clip(np.rint(x), 0, 1023).astype(np.uint16).T


def _modes(tower: Tower, level: int, tt: np.ndarray) -> np.ndarray:
    f1, f2 = tower.mode_f[level]
    t1, t2 = tower.mode_tau[level]
    return (np.exp(-tt / t1) * np.sin(2 * np.pi * f1 * tt)
            + tower.mode_amp2[level] * np.exp(-tt / t2) * np.sin(2 * np.pi * f2 * tt + 0.7))


def _talk(scene: Scene, n: int, rng: np.random.Generator) -> np.ndarray:
    """Voices in the room: air-borne, so every disc hears them at a similar level."""
    out = np.zeros(n)
    for t0, t1, amp in scene.talk:
        i0, i1 = int(t0 * FS), min(n, int(t1 * FS))
        if i1 - i0 < 50:
            continue
        tt = np.arange(i1 - i0) / FS
        f0 = rng.uniform(95, 240) * (1 + 0.08 * np.sin(2 * np.pi * rng.uniform(0.3, 1.0) * tt))
        phase = 2 * np.pi * np.cumsum(f0) / FS
        syll = np.maximum(0.0, np.sin(2 * np.pi * rng.uniform(3.5, 5.5) * tt)) ** 2
        voice = np.zeros(i1 - i0)
        for h in range(1, 9):
            voice += np.sin(h * phase) / h
        out[i0:i1] += amp * syll * voice
    gains = rng.uniform(0.7, 1.3, N_LEVELS)
    return gains[:, None] * out[None, :]


def render_load(tower: Tower, scene: Scene, n: int, rng: np.random.Generator
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """LOAD readings: stream times, valid bits, (M, 8) counts, and total timeouts."""
    force = np.zeros((N_LEVELS, n + 1))  # grams-force applied to each plate
    for t, level, dg in scene.steps:
        force[level, min(n, int(round(t * FS)))] += dg
    force = np.cumsum(force, axis=1)[:, :n]
    for t0, t1, level, peak in scene.presses:
        i0, i1 = int(t0 * FS), min(n, int(t1 * FS))
        tt = np.arange(i1 - i0) / FS
        rise = 1 - np.exp(-tt / rng.uniform(0.04, 0.1))
        tremor = 1 + 0.1 * np.sin(2 * np.pi * rng.uniform(8, 12) * tt)
        force[level, i0:i1] += peak * rise * tremor
    impulses = np.zeros((N_LEVELS, n))
    for t, level, j in scene.strikes:
        i = int(round(t * FS))
        if i < n:
            impulses[level, i] += j / 9.81e-3 * FS  # N s as grams-force over one sample
            # The tower passes a little of the blow to the plates next door.
            for k in (level - 1, level + 1):
                if 0 <= k < N_LEVELS:
                    impulses[k, i] += 0.08 * j / 9.81e-3 * FS
    for t, centre, dv in scene.dull:
        i = int(round(t * FS))
        if i < n:
            for k in range(N_LEVELS):
                near = 1.0 if centre < 0 else 0.7 ** abs(k - centre)
                # The base jumps by dv: each plate's inertia presses on its cell.
                impulses[k, i] += tower.plate_mass_g[k] * dv * near / 9.81 * FS
    readings_force = np.zeros((N_LEVELS, n))
    for k in range(N_LEVELS):
        w = 2 * np.pi * tower.plate_f[k]
        z = tower.plate_zeta[k]
        b_pl, a_pl = signal.bilinear([w * w], [1, 2 * z * w, w * w], fs=FS)
        readings_force[k] = signal.lfilter(b_pl, a_pl, force[k] + impulses[k])
    # HX711 sinc^4 filter: four boxcars of one conversion period (settles in four).
    box = np.ones(int(round(tower.load_period * FS))) / round(tower.load_period * FS)
    kernel = np.convolve(np.convolve(box, box), np.convolve(box, box))
    filt = signal.oaconvolve(readings_force, kernel[None, :], axes=1)[:, :n]
    t_conv = np.arange(0.004 + tower.sets_per_frame / FS, n / FS, tower.load_period)
    idx = np.minimum((t_conv * FS).astype(int), n - 1)
    grams = filt[:, idx].T  # (M, 8)
    m = len(t_conv)
    drift = np.cumsum(rng.normal(0, 1, (m, N_LEVELS)) * tower.drift_rw
                      * math.sqrt(tower.load_period), axis=0)
    counts = (tower.offset + tower.cpg * (grams + drift)
              + rng.normal(0, 1, (m, N_LEVELS)) * tower.load_noise)
    valid = np.full(m, 0xFF, np.int64)
    timeouts = 0
    for t_off, t_on, k in scene.disconnected:
        # The chip powers up on reconnection and has data after four conversions.
        back = t_on + rng.uniform(0.002, 0.008) + 4 * tower.load_period
        off = (t_conv >= t_off) & (t_conv < back)
        valid[off] &= ~(1 << k)
        timeouts += int(off.sum())
        # Warmed by hands and re-seated: a small zero shift from then on.
        counts[t_conv >= back, k] += tower.cpg[k] * rng.normal(0, 0.004)
    counts = np.clip(np.rint(counts), -S24_MAX - 1, S24_MAX).astype(np.int64)
    for k in range(N_LEVELS):
        counts[(valid >> k) & 1 == 0, k] = 0
    # Reads start 8-60 us after the conversions are ready.
    t_read = t_conv + rng.uniform(8e-6, 60e-6, m)
    return t_read, valid, counts, timeouts


# ---------------------------------------------------------------------------
# The byte stream.

def encode_stream(tower: Tower, piezo: np.ndarray, t_read: np.ndarray, valid: np.ndarray,
                  counts: np.ndarray, disconnected: list[tuple[float, float, int]],
                  rng: np.random.Generator) -> bytes:
    """HELLO, PIEZO, LOAD and STATUS frames in the order they leave the UART."""
    spf = tower.sets_per_frame
    n_frames = len(piezo) // spf
    t0_us = tower.boot_us
    p_t = np.arange(n_frames) * spf * (1e6 / FS)  # stream us of each frame's first set
    p_emit = p_t + (spf - 1) * 1e6 / FS + 60
    l_t = np.round(t_read * 1e6 / 4) * 4
    l_emit = l_t + 120
    duration_us = len(piezo) * 1e6 / FS
    s_t = np.arange(1e6 - (t0_us % 1_000_000), duration_us, 1e6)  # whole seconds of uptime
    kinds = np.concatenate([np.zeros(1), np.full(n_frames, 2), np.full(len(l_t), 3),
                            np.full(len(s_t), 4)])
    emit = np.concatenate([[-1e9], p_emit, l_emit, s_t + 30])
    order = np.lexsort((kinds, emit))
    seq = np.empty(len(order), np.int64)
    seq[order] = np.arange(len(order)) % 65536
    seq_p, seq_l, seq_s = (seq[1:1 + n_frames], seq[1 + n_frames:1 + n_frames + len(l_t)],
                           seq[1 + n_frames + len(l_t):])

    hello = struct.pack("<BBBBBBHHB", 1, 1, 4, 2, N_LEVELS, N_LEVELS, FS, 80, 10) \
        + tower.device_id
    msg = bytes([0x01, seq[0] & 0xFF, seq[0] >> 8]) + hello
    crc = crc16_ccitt_false(msg)
    rows: list[np.ndarray] = [np.frombuffer(cobs_encode(msg + struct.pack("<H", crc)) + b"\0",
                                            np.uint8)[None, :]]
    samples = piezo[:n_frames * spf].reshape(n_frames, spf * N_LEVELS)
    body_p = np.concatenate([
        _u32_bytes((t0_us + p_t.astype(np.int64)) % 2**32),
        np.full((n_frames, 1), spf, np.uint8),
        samples.astype("<u2").view(np.uint8).reshape(n_frames, -1)], axis=1)
    rows.append(_frames(0x02, seq_p, body_p))
    body_l = np.concatenate([
        _u32_bytes((t0_us + l_t.astype(np.int64)) % 2**32),
        valid.astype(np.uint8)[:, None],
        _s24_bytes(counts).reshape(len(l_t), -1)], axis=1)
    rows.append(_frames(0x03, seq_l, body_l))
    uptime_ms = ((t0_us + s_t) / 1000).astype(np.int64)
    lifted = np.zeros(len(s_t), np.int64)
    for t_off, t_on, _k in disconnected:
        lifted |= ((s_t / 1e6 >= t_off) & (s_t / 1e6 < t_on)).astype(np.int64)
    # load_timeouts: polls without data from an absent chip, cumulative (80 per second).
    timeouts = np.zeros(len(s_t), np.int64)
    for t_off, t_on, _k in disconnected:
        timeouts += ((np.clip(s_t / 1e6, t_off, t_on) - t_off) * 80).astype(np.int64)
    cpu = rng.integers(28, 42, len(s_t))
    body_s = np.concatenate([
        _u32_bytes(uptime_ms % 2**32),
        np.zeros((len(s_t), 4), np.uint8),
        np.stack([timeouts & 0xFF, (timeouts >> 8) & 0xFF], axis=1).astype(np.uint8),
        cpu.astype(np.uint8)[:, None], lifted.astype(np.uint8)[:, None]], axis=1)
    rows.append(_frames(0x04, seq_s, body_s) if len(s_t) else np.zeros((0, 1), np.uint8))
    # Concatenate all frames in emission order.
    chunks: list[bytes] = []
    flat = [rows[0][0].tobytes()]
    flat += [r.tobytes() for r in rows[1]]
    flat += [r.tobytes() for r in rows[2]]
    flat += [r.tobytes() for r in rows[3]] if len(s_t) else []
    for i in order:
        chunks.append(flat[i])
    return b"".join(chunks)


# ---------------------------------------------------------------------------
# One recording.

def _finish_truth(scene: Scene) -> None:
    """Sort landings by rest time and point knocked cubes at the throw that knocked them."""
    scene.landings.sort(key=lambda x: x["t"])
    index_of_id = {x["id"]: i for i, x in enumerate(scene.landings) if not x["knocked"]
                   and x["caused_knockdown"]}
    for i, x in enumerate(scene.landings):
        if x["knocked"]:
            x["by"] = index_of_id.get(x["by_id"])
            for k in scene.knockdowns:
                if k["id"] == x["id"] and abs(k["t"] - x["t_knocked"]) < 1e-6:
                    k["by"] = x["by"]
                    k["landing"] = i
                    k["to_floor"] = x["floor"]


def render(tower: Tower, scene: Scene, scenario: str, seed: int
           ) -> tuple[bytes, dict[str, Any]]:
    """Bytes and truth of a scene."""
    rng = np.random.default_rng([seed, SCENARIOS.index(scenario), 15485863])
    n = int(round(scene.duration * FS))
    piezo = render_piezo(tower, scene, n, rng)
    t_read, valid, counts, _ = render_load(tower, scene, n, rng)
    data = encode_stream(tower, piezo, t_read, valid, counts, scene.disconnected, rng)
    _finish_truth(scene)
    first = min([x["t_first_impact"] for x in scene.landings]
                + [x["t_grip"] for x in scene.lifts] + [x["t"] for x in scene.knocks]
                + [scene.duration])
    truth: dict[str, Any] = {
        "format": "towerear-crosscheck-truth/1",
        "model": "O",
        "scenario": scenario,
        "seed": seed,
        "duration_s": scene.duration,
        "cells": tower.cells,
        "landings": scene.landings,
        "knockdowns": scene.knockdowns,
        "removals": scene.removals,
        "lifts": scene.lifts,
        "closes": scene.closes,
        "knocks": scene.knocks,
        "spills": scene.spills,
        "quiet_s": round(first, 4),
        "tower": tower.describe(),
        "room": {"hum_scale": round(scene.hum_scale, 3), "talk_phrases": len(scene.talk)},
    }
    if scene.game is not None:
        truth["game"] = scene.game
    return data, truth


def make_recording(seed: int, scenario: str, duration_s: float, out: Path) -> tuple[Path, Path]:
    """Write ``{scenario}_t{seed}.bin`` and ``.truth.json`` into ``out``; returns both paths."""
    out.mkdir(parents=True, exist_ok=True)
    tower = make_tower(seed)
    scene = build_scene(tower, scenario, float(duration_s), seed)
    data, truth = render(tower, scene, scenario, seed)
    bin_path = out / f"{scenario}_t{seed}.bin"
    truth_path = out / f"{scenario}_t{seed}.truth.json"
    bin_path.write_bytes(data)
    truth_path.write_text(json.dumps(truth, indent=1, default=_json_default))
    return bin_path, truth_path


def _json_default(o: object) -> object:
    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, np.floating):
        return float(o)
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")


# ---------------------------------------------------------------------------
# Command line.

class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line on stderr, exit status 2."""

    def error(self, message: str) -> NoReturn:
        print(f"make_recordings_o.py: error: {message}", file=sys.stderr)
        raise SystemExit(2)


def _job(args: tuple[int, str, float, str]) -> str:
    seed, scenario, duration, out = args
    make_recording(seed, scenario, duration, Path(out))
    return f"{scenario}_t{seed}"


def main(argv: list[str] | None = None) -> int:
    """Write the recordings the command line asks for."""
    p = _Parser(description=__doc__.split("\n")[0] if __doc__ else None)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--towers", type=int, default=8)
    p.add_argument("--first-seed", type=int, default=1)
    p.add_argument("--duration", type=float, default=120.0, help="seconds per recording")
    p.add_argument("--scenarios", nargs="+", choices=SCENARIOS, default=list(SCENARIOS))
    p.add_argument("--workers", type=int, default=2)
    args = p.parse_args(argv)
    if args.towers < 1:
        p.error(f"--towers must be at least 1, not {args.towers}")
    if args.first_seed < 0:
        p.error(f"--first-seed must be 0 or more, not {args.first_seed}")
    if not 10.0 <= args.duration <= 3600.0:
        p.error(f"--duration must be between 10 and 3600 s, not {args.duration:g}")
    if args.workers < 1:
        p.error(f"--workers must be at least 1, not {args.workers}")
    if args.out.exists() and not args.out.is_dir():
        p.error(f"--out {args.out} exists and is not a directory")
    args.out.mkdir(parents=True, exist_ok=True)
    jobs = [(seed, sc, args.duration, str(args.out))
            for seed in range(args.first_seed, args.first_seed + args.towers)
            for sc in dict.fromkeys(args.scenarios)]
    if args.workers == 1 or len(jobs) == 1:
        for job in jobs:
            _job(job)
    else:
        ctx = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(max_workers=args.workers, mp_context=ctx) as pool:
            list(pool.map(_job, jobs))
    print(f"wrote {len(jobs)} recordings to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
