#!/usr/bin/env python3
"""Blind cross-check model AG: a production batch of towers, tested by a hardware QA engineer.

Sixteen towers off one small assembly line. Every figure of a tower is drawn
within the tolerances of its parts (piezo discs, glue, bar load cells, HX711
oscillators, the board's ceramic resonator, cables), and each unit ships with
one or two of the ordinary imperfections a QA bench finds in a batch: a disc
glued loose or off-centre, a plate that rubs the wall (sticky load steps), a
cell mounted with preload, a slow HX711, a cable that picks up hum, a board
clock off nominal, a firmware build that drains its piezo buffer in messages
of varying size, a cell from another lot. Cubes are thrown by ordinary players
into plain rooms. Every recording is a conforming stream (contracts.md) and
every truth file is what ``tools/crosscheck/score.py`` reads.

Usage::

    python tools/crosscheck_ag/make_recordings_ag.py --out DIR --towers 16 \
        --first-seed 1 --duration 120 [--scenarios single rapid noisy game] [--workers 2]

Writes ``<scenario>_t<seed>.bin`` and ``<scenario>_t<seed>.truth.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import struct
import sys
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

MODEL = "AG"
FORMAT = "towerear-crosscheck-truth/1"
SCENARIOS = ("single", "rapid", "noisy", "game")
PIEZO_RATE = 2000  # sets/s, from the board's own timer: exact in device time
ADC_BITS = 10
N_LEVELS = 8
G = 9.81
LEVEL_H_M = 0.031  # 25 cm / 8 levels
QUIET_S = 4.0  # nothing happens in the first seconds: the detector tares there
IMPERFECTIONS = ("loose_disc", "offcentre_disc", "rub_plate", "preload_cell", "slow_chip",
                 "hum_cable", "clock_off", "drain_firmware", "other_lot_cell")
COLOURS = ("yellow", "blue", "brown", "gray", "black", "white")

# --------------------------------------------------------------------------------------
# Wire: CRC-16/CCITT-FALSE and COBS, written from contracts.md section 1
# --------------------------------------------------------------------------------------


def _crc_table() -> list[int]:
    table = []
    for byte in range(256):
        crc = byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
        table.append(crc & 0xFFFF)
    return table


CRC_TABLE = _crc_table()
CRC_TABLE_NP = np.array(CRC_TABLE, dtype=np.uint32)


def crc16_ccitt_false(data: bytes) -> int:
    """CRC-16/CCITT-FALSE by table (poly 0x1021, init 0xFFFF, not reflected, xorout 0)."""
    crc = 0xFFFF
    for b in data:
        crc = ((crc << 8) & 0xFFFF) ^ CRC_TABLE[((crc >> 8) ^ b) & 0xFF]
    return crc


def crc16_ccitt_false_reference(data: bytes) -> int:
    """The same CRC bit by bit, as the definition reads."""
    crc = 0xFFFF
    for b in data:
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) & 0xFFFF if crc & 0x8000 else (crc << 1) & 0xFFFF
    return crc


def crc16_rows(rows: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint32]:
    """The CRC of every row of a (messages, bytes) array, column by column."""
    crc = np.full(rows.shape[0], 0xFFFF, dtype=np.uint32)
    for col in range(rows.shape[1]):
        idx = ((crc >> 8) ^ rows[:, col]) & 0xFF
        crc = ((crc << 8) & 0xFFFF) ^ CRC_TABLE_NP[idx]
    return crc


def cobs_encode(data: bytes) -> bytes:
    """COBS, one frame (without the closing 0x00)."""
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


def cobs_decode_own(enc: bytes) -> bytes:
    """Undo :func:`cobs_encode` (ValueError on a malformed block)."""
    out = bytearray()
    i = 0
    while i < len(enc):
        code = enc[i]
        if code == 0 or i + code > len(enc):
            raise ValueError("bad COBS block")
        out += enc[i + 1:i + code]
        i += code
        if code < 0xFF and i < len(enc):
            out.append(0)
    return bytes(out)


def cobs_encode_rows(rows: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint8]:
    """COBS of every row (rows of at most 253 bytes), each followed by its 0x00.

    With fewer than 254 bytes a row needs exactly one code byte in front:
    every byte keeps its place one to the right, zeros become the distance
    to the next zero (or to the end).
    """
    n, length = rows.shape
    assert length <= 253
    idx = np.arange(length + 1, dtype=np.int64)
    marks = np.where(np.concatenate([rows == 0, np.ones((n, 1), bool)], axis=1), idx, length)
    nxt = np.minimum.accumulate(marks[:, ::-1], axis=1)[:, ::-1]  # next zero at or after i
    out = np.zeros((n, length + 2), dtype=np.uint8)
    out[:, 0] = nxt[:, 0] + 1
    dist = nxt[:, 1:] - idx[None, :length]
    out[:, 1:length + 1] = np.where(rows == 0, dist, rows).astype(np.uint8)
    return out


def frame(msg_type: int, seq: int, payload: bytes) -> bytes:
    """One message, framed: COBS(type | seq | body | crc) and 0x00."""
    msg = struct.pack("<BH", msg_type, seq & 0xFFFF) + payload
    return cobs_encode(msg + struct.pack("<H", crc16_ccitt_false(msg))) + b"\x00"


# --------------------------------------------------------------------------------------
# The tower: one unit of the batch
# --------------------------------------------------------------------------------------


@dataclass
class Tower:
    """One tower of the batch: every figure drawn from its seed."""

    seed: int
    device_id: bytes
    fw: tuple[int, int, int]
    faults: list[str]
    fault_level: dict[str, int]
    clock_ppm: float  # the board's resonator, off nominal
    sets_per_msg: int  # fixed firmware: sets in every PIEZO; draining firmware: the most
    sets_min: int  # draining firmware: the fewest (== sets_per_msg when fixed)
    mains_hz: float  # in device time
    bias: npt.NDArray[np.float64]  # ADC code of an idle disc
    piezo_noise: npt.NDArray[np.float64]  # codes rms
    hum: npt.NDArray[np.float64]  # codes, 1st harmonic
    gain: npt.NDArray[np.float64]  # codes per N*s of impulse on the disc's own plate
    mode_f: npt.NDArray[np.float64]  # (8, 3) Hz
    mode_tau: npt.NDArray[np.float64]  # (8, 3) s
    mode_w: npt.NDArray[np.float64]  # (8, 3) weights
    couple: npt.NDArray[np.float64]  # (8,) crosstalk per level of distance, as heard by disc k
    offset: npt.NDArray[np.float64]  # counts of the empty plate
    cpg: npt.NDArray[np.float64]  # counts per gram
    load_noise_g: npt.NDArray[np.float64]
    chip_rate: npt.NDArray[np.float64]  # each HX711's own conversion rate (device time)
    plate_f: npt.NDArray[np.float64]  # plate on its cell, Hz
    plate_zeta: npt.NDArray[np.float64]
    drift_g: npt.NDArray[np.float64]  # warm-up drift of the cell zero, grams
    drift_tau: float
    p_stop: npt.NDArray[np.float64]  # a cube coming down on level k stays there
    p_edge: float  # a cube passing a hole clips its edge
    p_knock: float  # per resting cube near the hole, per passing cube
    restitution: float
    cube_mass_g: float  # this set's mean cube mass
    rub_frac: float
    rub_hold_s: tuple[float, float]
    cpu_pct: int
    cells: str

    @property
    def load_rate_hz(self) -> int:
        """What HELLO says: the board reads all eight when the slowest is ready."""
        return int(round(float(self.chip_rate.min())))

    @property
    def read_rate(self) -> float:
        return float(self.chip_rate.min())

    def figures(self) -> dict[str, Any]:
        """The tower's figures, JSON-ready (in the truth file)."""
        def r(a: Any, n: int = 4) -> Any:
            return np.round(np.asarray(a, float), n).tolist()

        return {
            "device_id": self.device_id.hex(), "firmware": ".".join(map(str, self.fw)),
            "faults": list(self.faults), "fault_level": dict(self.fault_level),
            "clock_ppm": round(self.clock_ppm, 1),
            "sets_per_msg": [self.sets_min, self.sets_per_msg], "mains_hz": round(self.mains_hz, 4),
            "bias": r(self.bias, 2), "piezo_noise": r(self.piezo_noise, 3), "hum": r(self.hum, 3),
            "gain": r(self.gain, 0), "mode_f": r(self.mode_f, 1), "couple": r(self.couple, 3),
            "offset": r(self.offset, 0), "cpg": r(self.cpg, 1),
            "load_noise_g": r(self.load_noise_g),
            "chip_rate": r(self.chip_rate, 3), "load_rate_hz": self.load_rate_hz,
            "plate_f": r(self.plate_f, 1), "plate_zeta": r(self.plate_zeta, 3),
            "p_stop": r(self.p_stop, 3), "p_edge": round(self.p_edge, 3),
            "p_knock": round(self.p_knock, 4), "restitution": round(self.restitution, 3),
            "cube_mass_g": round(self.cube_mass_g, 4), "cells": self.cells,
        }


def make_tower(seed: int) -> Tower:
    """Tower ``seed`` of the batch."""
    rng = np.random.default_rng([seed, 0xA6])
    # The QA bench finds every kind of fault once in each run of nine units (a batch's
    # shuffled list), and half the units have a second one, drawn at random.
    n_imp = len(IMPERFECTIONS)
    deal = np.random.default_rng([(seed - 1) // n_imp, 0xBA7C]).permutation(n_imp)
    faults = [int(deal[(seed - 1) % n_imp])]
    if rng.random() < 0.5:
        faults.append(int(rng.choice([i for i in range(n_imp) if i != faults[0]])))
    faults.sort()
    names = [IMPERFECTIONS[i] for i in faults]
    fault_level = {nm: int(rng.integers(0, N_LEVELS)) for nm in names}
    lv = N_LEVELS
    # Board: ATmega328P on a ceramic resonator (+-0.5 %), micros() in 4 us steps.
    clock_ppm = float(rng.normal(0, 600))
    if "clock_off" in names:
        clock_ppm = float(rng.choice([-1, 1]) * rng.uniform(2500, 4500))
    sets = int(rng.choice([8, 10, 12, 14]))
    sets_min = sets
    if "drain_firmware" in names:
        sets, sets_min = int(rng.integers(9, 15)), int(rng.integers(3, 7))
    mains = 50.0 * (1 + rng.normal(0, 0.0008)) / (1 + clock_ppm * 1e-6)
    # Piezo discs and the front end.
    bias = 2 ** (ADC_BITS - 1) + rng.normal(0, 2.5, lv)
    piezo_noise = rng.uniform(0.7, 1.4, lv)
    hum = rng.uniform(0.2, 0.9, lv)
    gain = 5.0e5 * rng.normal(1.0, 0.12, lv)
    mode_f = np.sort(np.stack([rng.uniform(140, 260, lv), rng.uniform(330, 560, lv),
                               rng.uniform(620, 930, lv)], axis=1), axis=1)
    mode_tau = np.stack([rng.uniform(0.012, 0.03, lv), rng.uniform(0.006, 0.015, lv),
                         rng.uniform(0.003, 0.008, lv)], axis=1)
    mode_w = np.stack([rng.uniform(0.6, 1.0, lv), rng.uniform(0.4, 0.8, lv),
                       rng.uniform(0.2, 0.5, lv)], axis=1)
    couple = rng.uniform(0.18, 0.32, lv)
    if "loose_disc" in names:  # quieter and duller: lower, shorter modes
        k = fault_level["loose_disc"]
        gain[k] *= rng.uniform(0.25, 0.45)
        mode_f[k] *= rng.uniform(0.6, 0.8)
        mode_tau[k] *= 0.5
        mode_w[k, 2] *= 0.3
    if "offcentre_disc" in names:  # own plate quieter, the wall (and neighbours) louder
        k = fault_level["offcentre_disc"]
        gain[k] *= rng.uniform(0.45, 0.65)
        couple[k] = min(0.6, couple[k] * rng.uniform(1.6, 2.2))
    if "hum_cable" in names:
        hum[fault_level["hum_cable"]] *= rng.uniform(5, 10)
    # Load cells: 100 g bar cells, 1.0 +- 0.1 mV/V, HX711 gain 128 (+-20 mV full scale).
    exc_v = rng.uniform(4.2, 4.4)
    sens = rng.normal(1.0, 0.05, lv)
    cells = "matched"
    if "other_lot_cell" in names:
        sens[fault_level["other_lot_cell"]] = rng.uniform(0.55, 0.75)
        cells = "mixed"
    cpg = sens * exc_v / 100.0 / 20.0 * 2**23
    plate_g = rng.uniform(6, 11, lv)
    offset = rng.normal(0, 0.04, lv) * exc_v / 20.0 * 2**23 + plate_g * cpg
    if "preload_cell" in names:
        k = fault_level["preload_cell"]
        offset[k] += rng.uniform(40, 90) * cpg[k]  # a plate screwed down onto its cell
    load_noise_g = rng.uniform(0.003, 0.007, lv)
    if "hum_cable" in names:
        load_noise_g[fault_level["hum_cable"]] *= 2.5
    # HX711 internal oscillator: 80 SPS nominal, a few per cent per chip.
    chip_rate = 80.0 * rng.normal(1.01, 0.012, lv) / (1 + clock_ppm * 1e-6)
    chip_rate = np.clip(chip_rate, 77.0, 84.0)
    if "slow_chip" in names:
        chip_rate[fault_level["slow_chip"]] = 80.0 * rng.uniform(0.88, 0.93)
    plate_f = rng.uniform(28, 55, lv)
    plate_zeta = rng.uniform(0.06, 0.14, lv)
    drift_g = rng.normal(0, 0.02, lv)
    # Cube path: the holes are not quite aligned; few cubes reach the ground.
    p_stop = np.clip(rng.normal(0.32, 0.05, lv), 0.2, 0.45)
    p_stop[7] = rng.uniform(0.33, 0.45)
    p_stop[0] = 1.0
    return Tower(
        seed=seed, device_id=bytes(rng.integers(0, 256, 8, dtype=np.uint8)),
        fw=(1, int(rng.integers(2, 4)), int(rng.integers(0, 6))), faults=names,
        fault_level=fault_level, clock_ppm=clock_ppm, sets_per_msg=sets, sets_min=sets_min,
        mains_hz=float(mains), bias=bias, piezo_noise=piezo_noise, hum=hum, gain=gain,
        mode_f=mode_f, mode_tau=mode_tau, mode_w=mode_w, couple=couple, offset=offset,
        cpg=cpg, load_noise_g=load_noise_g, chip_rate=chip_rate, plate_f=plate_f,
        plate_zeta=plate_zeta, drift_g=drift_g, drift_tau=float(rng.uniform(60, 240)),
        p_stop=p_stop, p_edge=float(rng.uniform(0.45, 0.7)),
        p_knock=float(rng.uniform(0.006, 0.016)), restitution=float(rng.uniform(0.28, 0.42)),
        cube_mass_g=float(rng.uniform(0.38, 0.72)), rub_frac=float(rng.uniform(0.3, 0.6)),
        rub_hold_s=(0.3, float(rng.uniform(0.8, 1.5))), cpu_pct=int(rng.integers(38, 62)),
        cells=cells,
    )


# --------------------------------------------------------------------------------------
# The scene: what happens, in stream seconds
# --------------------------------------------------------------------------------------


@dataclass
class Strike:
    """An impact heard by the discs: on level ``level`` (-1: the table), impulse ``j`` N*s."""

    t: float
    level: int
    j: float


@dataclass
class Cube:
    fid: int
    colour: str
    mass_g: float


@dataclass
class Scene:
    """Everything that happens to one tower in one recording."""

    tw: Tower
    duration: float
    rng: np.random.Generator
    scenario: str
    strikes: list[Strike] = field(default_factory=list)
    impulses: list[tuple[float, int, float]] = field(default_factory=list)  # on a cell: N*s
    weights: list[tuple[float, int, float]] = field(default_factory=list)  # static grams
    touches: list[tuple[float, float, int, float]] = field(default_factory=list)  # hand
    lifted: list[tuple[float, float, int]] = field(default_factory=list)  # t_lift, t_close, k
    talk: list[dict[str, float]] = field(default_factory=list)
    landings: list[dict[str, Any]] = field(default_factory=list)
    knockdowns: list[dict[str, Any]] = field(default_factory=list)
    removals: list[dict[str, Any]] = field(default_factory=list)
    lifts: list[dict[str, Any]] = field(default_factory=list)
    closes: list[dict[str, Any]] = field(default_factory=list)
    knocks: list[dict[str, Any]] = field(default_factory=list)
    tower: list[list[Cube]] = field(default_factory=lambda: [[] for _ in range(N_LEVELS)])
    hum_factor: float = 1.0
    game: dict[str, Any] | None = None
    next_fid: int = 0

    def new_cube(self, colour: str) -> Cube:
        m = self.tw.cube_mass_g * float(self.rng.normal(1.0, 0.04))
        self.next_fid += 1
        return Cube(self.next_fid, colour, round(m, 4))

    def weigh(self, t: float, level: int, grams: float) -> None:
        self.weights.append((t, level, grams))

    def hit(self, t: float, level: int, j: float, on_cell: bool = True) -> None:
        self.strikes.append(Strike(t, level, j))
        if on_cell and level >= 0:
            self.impulses.append((t, level, j))

    def on_level(self, level: int, t: float) -> list[Cube]:
        return list(self.tower[level])

    # -- a cube's way down -------------------------------------------------------------

    def _fall(self, cube: Cube, t: float, level: int, v: float,
              impacts: list[list[Any]], may_knock: bool) -> tuple[float, int, Cube | None,
                                                                   tuple[float, int] | None]:
        """A cube comes down on ``level`` at ``t`` with speed ``v``: where and when it rests.

        Returns (rest time, floor, knocked cube or None, (knock time, from level)).
        """
        tw, rng = self.tw, self.rng
        m = cube.mass_g * 1e-3
        knocked: Cube | None = None
        knock_at: tuple[float, int] | None = None
        while True:
            if level == 0 or rng.random() < tw.p_stop[level]:
                e = tw.restitution * float(rng.uniform(0.85, 1.15))
                self.hit(t, level, m * v * (1 + e))
                impacts.append([round(t, 5), level])
                vb, tb = e * v, t
                while vb > 0.07:
                    tb += 2 * vb / G
                    e2 = e * float(rng.uniform(0.8, 1.1))
                    self.hit(tb, level, m * vb * (1 + e2))
                    impacts.append([round(tb, 5), level])
                    vb *= e2
                # rocking and sliding to a stop on the cardboard
                t_rest = tb + float(rng.uniform(0.04, 0.22))
                self.hit(tb + 0.5 * (t_rest - tb), level, m * 0.05 * float(rng.uniform(0.3, 1)))
                return t_rest, level, knocked, knock_at
            # passes the hole in plate ``level``
            if rng.random() < tw.p_edge:
                self.hit(t, level, m * v * float(rng.uniform(0.25, 0.7)))
                impacts.append([round(t, 5), level])
                v *= float(rng.uniform(0.45, 0.8))
            lying = self.tower[level]
            if may_knock and knocked is None and lying \
                    and rng.random() < 1 - (1 - tw.p_knock) ** min(3, len(lying)):
                knocked = lying.pop(int(rng.integers(0, len(lying))))
                knock_at = (t + 0.005, level)
                self.weigh(t + 0.005, level, -knocked.mass_g)
            dz = LEVEL_H_M * float(rng.uniform(0.85, 1.0))
            dt = (-v + np.sqrt(v * v + 2 * G * dz)) / G
            t += float(dt)
            v = float(np.sqrt(v * v + 2 * G * dz))
            level -= 1

    def throw(self, t_release: float, colour: str, kind: str) -> dict[str, Any]:
        """A player lets a cube go over the top hole at ``t_release``; returns its landing."""
        rng = self.rng
        cube = self.new_cube(colour)
        h = float(rng.uniform(0.03, 0.09))  # hand over the top plate
        t = t_release + float(np.sqrt(2 * h / G))
        impacts: list[list[Any]] = []
        t_rest, floor, knocked, knock_at = self._fall(cube, t, 7, float(np.sqrt(2 * G * h)),
                                                      impacts, may_knock=True)
        self.tower[floor].append(cube)
        self.weigh(t_rest, floor, cube.mass_g)
        landing = {"t": round(t_rest, 5), "t_release": round(t_release, 5),
                   "t_first_impact": impacts[0][0], "floor": floor, "cubes": 1,
                   "knocked": False, "mass_g": cube.mass_g, "colour": colour, "kind": kind,
                   "fid": cube.fid, "impacts": impacts}
        self.landings.append(landing)
        if knocked is not None and knock_at is not None:
            landing["caused_knockdown"] = True
            tk, frm = knock_at
            kimp: list[list[Any]] = []
            v0 = float(rng.uniform(0.05, 0.25))
            dz = LEVEL_H_M * float(rng.uniform(0.85, 1.0))
            t1 = tk + (-v0 + np.sqrt(v0 * v0 + 2 * G * dz)) / G
            t_r, fl, _, _ = self._fall(knocked, float(t1), frm - 1,
                                       float(np.sqrt(v0 * v0 + 2 * G * dz)), kimp, False)
            self.tower[fl].append(knocked)
            self.weigh(t_r, fl, knocked.mass_g)
            self.landings.append({
                "t": round(t_r, 5), "t_release": round(t_release, 5),
                "t_first_impact": round(tk, 5), "floor": fl, "cubes": 1, "knocked": True,
                "knocked_from": frm, "mass_g": knocked.mass_g, "colour": knocked.colour,
                "kind": "knocked", "fid": knocked.fid, "by_fid": cube.fid,
                "impacts": [[round(tk, 5), frm]] + kimp})
            self.knockdowns.append({"t": round(tk, 5), "floor_from": frm, "floor_to": fl,
                                    "fid": knocked.fid, "by_fid": cube.fid})
        return landing

    # -- hands, tables, rooms -------------------------------------------------------------

    def lift(self, t: float, k: int) -> None:
        """Modules k..7 lifted together: levels k+1..7 leave the base."""
        rng = self.rng
        self.lifts.append({"t": round(t, 4), "exposed": k})
        for lv in range(N_LEVELS):
            self.impulses.append((t + float(rng.uniform(0, 0.05)), lv,
                                  float(rng.uniform(2e-4, 6e-4))))
        self.strikes.append(Strike(t, k, float(rng.uniform(1e-4, 3e-4))))
        if k < 7:
            self.strikes.append(Strike(t + 0.01, k + 1, float(rng.uniform(1e-4, 3e-4))))
        self.lifted.append((t, np.inf, k))

    def close(self, t: float) -> None:
        rng = self.rng
        t_lift, _, k = self.lifted.pop()
        self.lifted.append((t_lift, t, k))
        self.closes.append({"t": round(t, 4), "exposed": k})
        for lv in range(k + 1):
            self.impulses.append((t, lv, float(rng.uniform(3e-4, 8e-4))))
        for lv in range(max(0, k - 1), min(N_LEVELS, k + 3)):
            self.strikes.append(Strike(t + 0.002 * abs(lv - k), lv,
                                       float(rng.uniform(1.5e-4, 4e-4))))

    def remove(self, t_touch: float, t: float, k: int, cubes: list[Cube]) -> None:
        """Fingers on plate k from ``t_touch``; the cubes leave it at ``t``."""
        rng = self.rng
        mass = sum(c.mass_g for c in cubes)
        self.touches.append((t_touch, t + 0.08, k, float(rng.uniform(2.0, 6.0))))
        self.strikes.append(Strike(t_touch, k, float(rng.uniform(3e-5, 1e-4))))
        for c in cubes:
            self.tower[k].remove(c)
        self.weigh(t, k, -mass)
        self.removals.append({"t": round(t, 4), "t_touch": round(t_touch, 4), "floor": k,
                              "cubes": len(cubes), "mass_g": round(mass, 4),
                              "colours": [c.colour for c in cubes]})

    def add_talk(self, t0: float, t1: float, amp: float) -> None:
        self.talk.append({"t": round(t0, 3), "t_end": round(t1, 3), "amp": amp})  # codes


def table_knock(sc: Scene, t: float, j: float | None = None) -> None:
    """A knuckle or a mug on the table: every disc hears it, the base first; cells shake."""
    rng = sc.rng
    j = float(rng.uniform(1.5e-3, 3e-3)) if j is None else j
    sc.strikes.append(Strike(t, -1, j))
    for lv in range(N_LEVELS):
        sc.impulses.append((t + 0.0005 * lv, lv, j * 0.25 * 0.85 ** lv))
    sc.knocks.append({"t": round(t, 4), "t_end": round(t + 0.3, 4), "kind": "table"})


# --------------------------------------------------------------------------------------
# Scenarios
# --------------------------------------------------------------------------------------


def _throws(sc: Scene, gap: tuple[float, float], colours: list[str]) -> None:
    t = QUIET_S + float(sc.rng.uniform(0.3, 1.5))
    i = 0
    while t < sc.duration - 3.0:
        sc.throw(t, colours[i % len(colours)], "clue")
        i += 1
        t += float(sc.rng.uniform(*gap))


def _noisy(sc: Scene) -> None:
    rng = sc.rng
    sc.hum_factor = float(rng.uniform(1.8, 3.5))
    t = QUIET_S + float(rng.uniform(0.5, 2.0))
    colours = list(rng.permutation(COLOURS))
    i = 0
    while t < sc.duration - 3.5:
        if rng.random() < 0.2:  # a knock on the table in a gap between throws
            table_knock(sc, t)
            t += float(rng.uniform(1.8, 3.0))
            continue
        x = sc.throw(t, colours[i % 6], "clue")
        i += 1
        t = max(t + float(rng.uniform(3.0, 6.5)), x["t"] + 1.8)
    t = float(rng.uniform(QUIET_S, 15.0))
    while t < sc.duration - 2:
        t1 = min(sc.duration - 0.5, t + float(rng.uniform(2.0, 8.0)))
        sc.add_talk(t, t1, float(rng.uniform(1.0, 4.0)))
        t = t1 + float(rng.uniform(2.0, 10.0))


def _game(sc: Scene) -> None:
    """Mord im Arosa as the rulebook has it, played by 3-5 players until time runs out."""
    rng = sc.rng
    n_pl = int(rng.integers(3, 6))
    players = [str(c) for c in rng.permutation(COLOURS)[:n_pl]]
    supply = {p: 20 for p in players}
    sheet = {p: [0] * N_LEVELS for p in players}
    crime: list[int] = []
    victims_found = 0
    turns: list[dict[str, Any]] = []
    end = sc.duration - 2.5
    t = QUIET_S + float(rng.uniform(0.3, 1.2))

    def throw(colour: str, kind: str) -> bool:
        nonlocal t
        if t > end:
            return False
        x = sc.throw(t, colour, kind)
        t = x["t"] + float(rng.uniform(1.8, 3.5))
        return True

    # Prologue: both victims, then two clues each.
    for _ in range(2):
        throw("red", "victim")
    for p in players:
        for _ in range(2):
            if throw(p, "prologue"):
                supply[p] -= 1
    phase = "act1"
    turn = 0
    while t < sc.duration - 14.0:
        who = players[turn % n_pl]
        filled = [lv for lv in range(N_LEVELS) if sc.tower[lv]]
        k = int(rng.choice(filled)) if filled and rng.random() < 0.8 \
            else int(rng.integers(0, N_LEVELS))
        action = "inspect" if phase == "act1" else (
            "cover" if sum(sheet[who]) and rng.random() < 0.35 else "suspect")
        suspects: list[str] = []
        if action == "suspect":
            others = [p for p in players if p != who]
            suspects = [str(s) for s in rng.choice(others, int(rng.integers(1, min(2, len(others))
                                                                              + 1)), replace=False)]
        sc.lift(t, k)
        lying = list(sc.tower[k])
        t_now = t + float(rng.uniform(0.9, 1.6))
        grabs = [lying] if len(lying) <= 4 else [lying[:len(lying) // 2], lying[len(lying) // 2:]]
        for grab in grabs if lying else []:
            t_touch = t_now
            t_off = t_touch + float(rng.uniform(0.3, 0.7))
            sc.remove(t_touch, t_off, k, grab)
            t_now = t_off + float(rng.uniform(0.9, 1.4))
        t_close = t_now + float(rng.uniform(0.2, 0.8))
        sc.close(t_close)
        counts = {p: sum(c.colour == p for c in lying) for p in players}
        penalties = 0
        found = sum(c.colour == "red" for c in lying)
        if action == "inspect":
            if found:
                victims_found += found
                crime.append(k)
                for p in players:
                    if p != who and counts[p]:
                        n = min(counts[p], supply[p])
                        sheet[p][k] += n
                        supply[p] -= n
            else:
                penalties = 1
        elif action == "suspect":
            if k == 0 and counts[who] == 0:
                penalties = len(suspects)
            else:
                for s in suspects:
                    if counts[s]:
                        n = min(counts[s], supply[s])
                        sheet[s][k] += n
                        supply[s] -= n
                    else:
                        penalties += 1
        else:  # cover
            if counts[who]:
                back = min(counts[who], sheet[who][k])
                sheet[who][k] -= back
                supply[who] += back
            else:
                penalties = 1
        turns.append({"by": who, "action": action, "floor": k, "suspects": suspects,
                      "t": round(sc.lifts[-1]["t"], 4)})
        t = t_close + float(rng.uniform(1.5, 2.5))
        for c in lying:
            if c.colour != "red":
                throw(c.colour, "throwback")
        for _ in range(penalties):
            if supply[who] > 0 and throw(who, "penalty"):
                supply[who] -= 1
        if phase == "act1" and victims_found >= 2:
            phase = "act2"
        if any(sum(v) >= 10 for v in sheet.values()) or min(supply.values()) == 0:
            phase = "over"
            break
        turn += 1
        t += float(rng.uniform(1.0, 3.0))
    sc.game = {"players": players, "phase": phase, "turns": turns, "supply": supply,
               "sheet": sheet, "crime_scenes": sorted(set(crime))}


def simulate(seed: int, scenario: str, duration: float) -> Scene:
    """The scene of tower ``seed`` in ``scenario`` (stream seconds)."""
    if scenario not in SCENARIOS:
        raise ValueError(f"unknown scenario {scenario!r}")
    tw = make_tower(seed)
    rng = np.random.default_rng([seed, SCENARIOS.index(scenario), 0xA6])
    sc = Scene(tw, duration, rng, scenario)
    colours = [str(c) for c in rng.permutation(COLOURS)[: int(rng.integers(2, 6))]]
    if scenario == "single":
        _throws(sc, (4.0, 7.5), colours)
    elif scenario == "rapid":
        _throws(sc, (0.7, 1.8), colours)
    elif scenario == "noisy":
        _noisy(sc)
    else:
        _game(sc)
    return sc


# --------------------------------------------------------------------------------------
# Rendering: the discs, the cells and the firmware
# --------------------------------------------------------------------------------------


def _lifted_mask(sc: Scene, t: npt.NDArray[np.float64]) -> npt.NDArray[np.bool_]:
    """(len(t), 8): whether level k's module is off the base at t."""
    out = np.zeros((len(t), N_LEVELS), bool)
    for t0, t1, k in sc.lifted:
        inside = (t >= t0) & (t < t1)
        out[inside, k + 1:] = True
    return out


def render_piezo(sc: Scene, n_sets: int) -> npt.NDArray[np.uint16]:
    """The eight discs' ADC codes, (n_sets, 8)."""
    tw = sc.tw
    rng = np.random.default_rng([tw.seed, SCENARIOS.index(sc.scenario), 0x91E2])
    t = np.arange(n_sets) / PIEZO_RATE
    x = rng.normal(0.0, 1.0, (n_sets, N_LEVELS)) * tw.piezo_noise
    ph = rng.uniform(0, 2 * np.pi, 2)
    w = 2 * np.pi * tw.mains_hz * t
    hum1, hum3 = np.sin(w + ph[0]), np.sin(3 * w + ph[1])
    x += sc.hum_factor * (np.outer(hum1, tw.hum) + np.outer(hum3, 0.3 * tw.hum))
    # Impacts: each disc rings in its plate's modes; far levels lose the high ones first.
    n_tail = int(0.12 * PIEZO_RATE)
    tt = np.arange(n_tail) / PIEZO_RATE
    for st in sc.strikes:
        i0 = int(np.ceil(st.t * PIEZO_RATE))
        if i0 >= n_sets:
            continue
        frac = i0 / PIEZO_RATE - st.t
        seg = min(n_tail, n_sets - i0)
        for ch in range(N_LEVELS):
            if st.level < 0:
                dist, amp = ch + 1, tw.gain[ch] * st.j * 0.3 * 0.82 ** ch
            else:
                dist = abs(ch - st.level)
                amp = tw.gain[ch] * st.j * (1.0 if dist == 0 else tw.couple[ch] ** dist)
            if amp < 0.3 * tw.piezo_noise[ch]:
                continue
            delay = 0.00015 * dist
            tl = tt[:seg] + frac - delay
            f, tau, mw = tw.mode_f[ch], tw.mode_tau[ch], tw.mode_w[ch]
            lp = np.exp(-dist * f / 1400.0)  # the walls low-pass what they carry
            env = np.where(tl >= 0, 1.0, 0.0)
            y = np.zeros(seg)
            for m in range(3):
                y += mw[m] * lp[m] * np.exp(-np.maximum(tl, 0) / tau[m]) \
                    * np.sin(2 * np.pi * f[m] * np.maximum(tl, 0))
            x[i0:i0 + seg, ch] += amp * env * y
    # Talk: air-borne speech, a few codes, 120-900 Hz, syllables at ~4 Hz.
    for tk in sc.talk:
        a, b = int(tk["t"] * PIEZO_RATE), min(n_sets, int(tk["t_end"] * PIEZO_RATE))
        if b <= a:
            continue
        spec = np.fft.rfft(rng.normal(0, 1, b - a))
        fr = np.fft.rfftfreq(b - a, 1 / PIEZO_RATE)
        spec[(fr < 120) | (fr > 900)] = 0
        v = np.fft.irfft(spec, b - a)
        v /= max(float(v.std()), 1e-9)
        syl = 0.5 + 0.5 * np.sin(2 * np.pi * 4.2 * t[a:b] + rng.uniform(0, 6)) ** 2
        x[a:b] += np.outer(v * syl * tk["amp"], rng.uniform(0.6, 1.0, N_LEVELS))
    # A module off the base: its disc is gone; the base's bias network reads quiet.
    lifted = _lifted_mask(sc, t)
    x[lifted] = rng.normal(0, 0.3, int(lifted.sum()))
    codes = np.rint(x + tw.bias)
    return np.clip(codes, 0, 2**ADC_BITS - 1).astype(np.uint16)


def _static_grams(sc: Scene, t: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """(len(t), 8) grams on each plate as its cell feels it, rubbing plates included."""
    tw = sc.tw
    out = np.zeros((len(t), N_LEVELS))
    rub = tw.fault_level.get("rub_plate") if "rub_plate" in tw.faults else None
    rng = np.random.default_rng([tw.seed, SCENARIOS.index(sc.scenario), 0x5B])
    for tc, lv, grams in sorted(sc.weights):
        if lv == rub:
            held = tw.rub_frac * grams
            hold = float(rng.uniform(*tw.rub_hold_s))
            out[t >= tc, lv] += grams - held
            out[t >= tc + hold, lv] += held
        else:
            out[t >= tc, lv] += grams
    for t0, t1, lv, grams in sc.touches:
        inside = (t >= t0) & (t < t1)
        u = (t[inside] - t0) / max(t1 - t0, 1e-3)
        out[inside, lv] += grams * np.sin(np.pi * u) * (1 + 0.3 * np.sin(2 * np.pi * 7 * u))
    out += tw.drift_g * (1 - np.exp(-t / tw.drift_tau))[:, None]
    return out


def rub_delays(sc: Scene) -> dict[int, float]:
    """For a rubbing plate: when each weight change on it is fully shown (by its time)."""
    tw = sc.tw
    if "rub_plate" not in tw.faults:
        return {}
    rng = np.random.default_rng([tw.seed, SCENARIOS.index(sc.scenario), 0x5B])
    out = {}
    for tc, lv, _ in sorted(sc.weights):
        if lv == tw.fault_level["rub_plate"]:
            out[int(round(tc * 1e5))] = tc + float(rng.uniform(*tw.rub_hold_s))
    return out


def render_load(sc: Scene, t_read: npt.NDArray[np.float64]
                ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.bool_]]:
    """Each reading's counts and validity, (len(t_read), 8)."""
    tw = sc.tw
    rng = np.random.default_rng([tw.seed, SCENARIOS.index(sc.scenario), 0x711])
    fs = 2000.0
    n = int((sc.duration + 0.5) * fs)
    tg = np.arange(n) / fs
    force = _static_grams(sc, tg)
    # Impacts ring the plate on its cell; the force's integral is the impulse.
    n_tail = int(0.6 * fs)
    tt = np.arange(n_tail) / fs
    for ti, lv, j in sc.impulses:
        i0 = int(np.ceil(ti * fs))
        if i0 >= n:
            continue
        seg = min(n_tail, n - i0)
        om = 2 * np.pi * tw.plate_f[lv]
        z = tw.plate_zeta[lv]
        wd = om * np.sqrt(1 - z * z)
        tl = tt[:seg] + (i0 / fs - ti)
        force[i0:i0 + seg, lv] += (j / (G * 1e-3)) * om / np.sqrt(1 - z * z) \
            * np.exp(-z * om * tl) * np.sin(wd * tl)
    cs = np.vstack([np.zeros((1, N_LEVELS)), np.cumsum(force, axis=0) / fs])
    tcs = np.arange(n + 1) / fs
    counts = np.zeros((len(t_read), N_LEVELS), np.int64)
    phase = rng.uniform(0, 1, N_LEVELS)
    for ch in range(N_LEVELS):
        r = tw.chip_rate[ch]
        k = np.floor(t_read * r - phase[ch])
        end = (k + phase[ch]) / r
        start = end - 1.0 / r
        avg = (np.interp(end, tcs, cs[:, ch]) - np.interp(start, tcs, cs[:, ch])) * r
        g = avg + rng.normal(0, tw.load_noise_g[ch], len(t_read))
        if "hum_cable" in tw.faults and tw.fault_level["hum_cable"] == ch:
            g += 0.01 * np.sin(2 * np.pi * abs(tw.mains_hz - r) * t_read)
        counts[:, ch] = np.rint(tw.offset[ch] + tw.cpg[ch] * g).astype(np.int64)
    valid = np.ones((len(t_read), N_LEVELS), bool)
    for t0, t1, k in sc.lifted:
        back = t1 + float(rng.uniform(0.05, 0.15)) + 4.0 / tw.read_rate  # contacts, settling
        gone = (t_read >= t0 + float(rng.uniform(0.0, 0.03))) & (t_read < back)
        valid[np.ix_(gone, np.arange(k + 1, N_LEVELS))] = False
    counts = np.clip(counts, -(2**23) + 1, 2**23 - 1)
    counts[~valid] = 0
    return counts, valid


def _rows(parts: list[npt.NDArray[np.uint8]]) -> npt.NDArray[np.uint8]:
    return np.concatenate(parts, axis=1)


def _u_le(values: npt.NDArray[np.int64], nbytes: int) -> npt.NDArray[np.uint8]:
    v = np.asarray(values, np.int64) & ((1 << (8 * nbytes)) - 1)
    return np.stack([(v >> (8 * i)) & 0xFF for i in range(nbytes)], axis=-1).astype(np.uint8)


def _piezo_counts(sc: Scene, n_total: int) -> list[int]:
    """Sets per PIEZO message, in order (fixed, or a draining firmware's varying counts)."""
    tw = sc.tw
    if tw.sets_min == tw.sets_per_msg:
        return [tw.sets_per_msg] * (n_total // tw.sets_per_msg)
    rng = np.random.default_rng([tw.seed, SCENARIOS.index(sc.scenario), 0xD2])
    out: list[int] = []
    left = n_total
    while left >= tw.sets_per_msg:
        k = int(rng.integers(tw.sets_min, tw.sets_per_msg + 1))
        out.append(k)
        left -= k
    return out


def render(sc: Scene) -> tuple[bytes, dict[str, Any]]:
    """The recording's bytes and its truth."""
    tw = sc.tw
    rng = np.random.default_rng([tw.seed, SCENARIOS.index(sc.scenario), 0xF1])
    t0_us = 4 * int(rng.integers(80_000, 160_000))  # first set, after boot; micros() steps of 4
    counts_per_msg = _piezo_counts(sc, int(round(sc.duration * PIEZO_RATE)))
    n_sets = int(sum(counts_per_msg))
    codes = render_piezo(sc, n_sets)
    # LOAD: the firmware reads all eight when the slowest chip is ready (a little poll jitter).
    period = 1.0 / tw.read_rate
    first = 0.02 + float(rng.uniform(0, period))
    n_read = int((n_sets / PIEZO_RATE - first) / period) + 1
    t_read = first + np.arange(n_read) * period + rng.uniform(0, 2e-4, n_read)
    t_read = t_read[t_read < n_sets / PIEZO_RATE]
    counts, valid = render_load(sc, t_read)
    load_us = t0_us + 4 * np.floor(t_read * 1e6 / 4).astype(np.int64)
    # Messages and when each goes out on the wire (emission order decides seq).
    starts = np.concatenate([[0], np.cumsum(counts_per_msg)[:-1]]).astype(np.int64)
    p_us = t0_us + starts * (1_000_000 // PIEZO_RATE)
    p_emit = p_us + np.array(counts_per_msg) * (1_000_000 // PIEZO_RATE) + 40
    l_emit = load_us + 320  # 25 SCK pulses and packing
    n_status = int((t0_us / 1e6 + n_sets / PIEZO_RATE) // 1.0)
    s_emit = (np.arange(1, n_status + 1) * 1_000_000).astype(np.int64)
    s_emit = s_emit[s_emit > p_emit[0]]
    kinds = np.concatenate([np.zeros(len(p_emit), np.int64), np.ones(len(l_emit), np.int64),
                            np.full(len(s_emit), 2, np.int64)])
    emit = np.concatenate([p_emit, l_emit, s_emit])
    order = np.lexsort((kinds, emit))
    seq = np.empty(len(order), np.int64)
    seq[order] = np.arange(1, len(order) + 1)  # HELLO is seq 0
    # Group rows of equal length; encode each group at once.
    pieces: list[tuple[npt.NDArray[np.int64], npt.NDArray[np.uint8]]] = []
    p_seq = seq[kinds == 0]
    n_arr = np.array(counts_per_msg)
    for n in sorted(set(counts_per_msg)):
        sel = np.flatnonzero(n_arr == n)
        idx = starts[sel][:, None] + np.arange(n)[None, :]
        samples = codes[idx].reshape(len(sel), n * N_LEVELS).astype(np.int64)
        body = _rows([np.full((len(sel), 1), 2, np.uint8), _u_le(p_seq[sel], 2),
                      _u_le(p_us[sel], 4), np.full((len(sel), 1), n, np.uint8),
                      _u_le(samples, 2).reshape(len(sel), 2 * n * N_LEVELS)])
        pieces.append((order_pos(order, np.flatnonzero(kinds == 0)[sel]), body))
    l_seq = seq[kinds == 1]
    vbits = (valid.astype(np.int64) << np.arange(N_LEVELS)).sum(axis=1)
    body = _rows([np.full((len(l_emit), 1), 3, np.uint8), _u_le(l_seq, 2), _u_le(load_us, 4),
                  _u_le(vbits, 1), _u_le(counts, 3).reshape(len(l_emit), 3 * N_LEVELS)])
    pieces.append((order_pos(order, np.flatnonzero(kinds == 1)), body))
    # STATUS: lifted modules' chips time out once per reading while away.
    missing = (~valid).any(axis=1)
    s_seq = seq[kinds == 2]
    timeouts = np.searchsorted(load_us[missing] - t0_us, s_emit - t0_us) if len(s_emit) else \
        np.zeros(0, np.int64)
    if len(s_emit):
        busy = np.clip(tw.cpu_pct + rng.integers(-3, 4, len(s_emit)), 0, 100)
        body = _rows([np.full((len(s_emit), 1), 4, np.uint8), _u_le(s_seq, 2),
                      _u_le(s_emit // 1000, 4), _u_le(np.zeros(len(s_emit), np.int64), 2),
                      _u_le(np.zeros(len(s_emit), np.int64), 2), _u_le(timeouts, 2),
                      _u_le(busy, 1), _u_le(np.zeros(len(s_emit), np.int64), 1)])
        pieces.append((order_pos(order, np.flatnonzero(kinds == 2)), body))
    # Frame everything and lay the frames out in emission order.
    total = len(order)
    lengths = np.zeros(total, np.int64)
    encoded: list[tuple[npt.NDArray[np.int64], npt.NDArray[np.uint8]]] = []
    for pos, rows in pieces:
        crc = crc16_rows(rows)
        msg = np.concatenate([rows, _u_le(crc.astype(np.int64), 2)], axis=1)
        enc = cobs_encode_rows(msg)
        lengths[pos] = enc.shape[1]
        encoded.append((pos, enc))
    offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    out = np.zeros(int(lengths.sum()), np.uint8)
    for pos, enc in encoded:
        at = offsets[pos][:, None] + np.arange(enc.shape[1])[None, :]
        out[at] = enc
    hello = struct.pack("<BBBBBBHHB8s", 1, tw.fw[0], tw.fw[1], tw.fw[2], N_LEVELS, N_LEVELS,
                        PIEZO_RATE, tw.load_rate_hz, ADC_BITS, tw.device_id)
    raw = frame(0x01, 0, hello) + out.tobytes()
    return raw, make_truth(sc)


def order_pos(order: npt.NDArray[np.int64], which: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """Position in emission order of messages ``which`` (indices into the unsorted list)."""
    pos = np.empty(len(order), np.int64)
    pos[order] = np.arange(len(order))
    return pos[which]


def make_truth(sc: Scene) -> dict[str, Any]:
    """The truth file's contents (format towerear-crosscheck-truth/1, with AG's extras)."""
    delays = rub_delays(sc)
    landings = []
    for x in sorted(sc.landings, key=lambda y: y["t"]):
        y = dict(x)
        y["t_weighed"] = round(delays.get(int(round(x["t"] * 1e5)), x["t"]), 5)
        landings.append(y)
    return {
        "format": FORMAT, "model": MODEL, "scenario": sc.scenario, "seed": sc.tw.seed,
        "duration_s": sc.duration, "cells": sc.tw.cells,
        "landings": landings, "knockdowns": sc.knockdowns, "removals": sc.removals,
        "lifts": sc.lifts, "closes": sc.closes, "knocks": sc.knocks, "talk": sc.talk,
        "hum_factor": round(sc.hum_factor, 3), "tower": sc.tw.figures(),
        **({"game": sc.game} if sc.game is not None else {}),
    }


# --------------------------------------------------------------------------------------
# Files and command line
# --------------------------------------------------------------------------------------


def make_recording(seed: int, scenario: str, duration: float, out: Path) -> tuple[Path, Path]:
    """Write ``<scenario>_t<seed>.bin`` and its truth into ``out``; returns both paths."""
    out.mkdir(parents=True, exist_ok=True)
    raw, truth = render(simulate(seed, scenario, duration))
    bin_path = out / f"{scenario}_t{seed}.bin"
    truth_path = out / f"{scenario}_t{seed}.truth.json"
    bin_path.write_bytes(raw)
    truth_path.write_text(json.dumps(truth, indent=1, sort_keys=True))
    return bin_path, truth_path


def _job(args: tuple[int, str, float, str]) -> str:
    seed, scenario, duration, out = args
    b, _ = make_recording(seed, scenario, duration, Path(out))
    return b.name


def main(argv: list[str] | None = None) -> int:
    """Command line: make the recordings of ``--towers`` towers from ``--first-seed``."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--towers", type=int, default=16)
    p.add_argument("--first-seed", type=int, default=1)
    p.add_argument("--duration", type=float, default=120.0)
    p.add_argument("--scenarios", nargs="+", default=list(SCENARIOS))
    p.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1))
    args = p.parse_args(argv)
    unknown = [s for s in args.scenarios if s not in SCENARIOS]
    if unknown:
        print(f"unknown scenario {unknown[0]!r} (known: {', '.join(SCENARIOS)})",
              file=sys.stderr)
        return 2
    if args.duration < 10.0:
        print("--duration must be at least 10 s", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    jobs = [(seed, sc, args.duration, str(args.out)) for sc in args.scenarios
            for seed in range(args.first_seed, args.first_seed + args.towers)]
    if args.workers <= 1:
        for j in jobs:
            _job(j)
    else:
        with ProcessPoolExecutor(args.workers) as pool:
            list(pool.map(_job, jobs))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
