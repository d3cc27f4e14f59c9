#!/usr/bin/env python3
"""Blind cross-check model AF: an acoustics engineer's tower.

Writes recordings (the device -> host bytes of contracts.md section 2, HELLO
first) and their ground truth (``towerear-crosscheck-truth/1``, the format
tools/crosscheck/score.py reads) for the scenarios single, rapid, noisy,
game and acoustic. The physics is a modal one: every cardboard plate rings
in its own bending modes, a cube's strike excites them by where and how hard
it hits, the vibration reaches the other levels through the walls with a
loss that grows with frequency and distance, and the disc feeds a biased,
high-passed front end into a 10-bit ADC that clips. The load cells are
HX711s (80 or 10 SPS by tower) behind a plate that rings on its cell.
Every open figure is drawn per tower from the seed (README.md, section 3).

Usage::

    .venv/bin/python tools/crosscheck_af/make_recordings_af.py --out DIR \
        [--towers 8] [--first-seed 1] [--duration 120] \
        [--scenarios single rapid noisy game] [--workers 2]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy import signal

FArr = npt.NDArray[np.float64]
U8Arr = npt.NDArray[np.uint8]

MODEL = "AF"
TRUTH_FORMAT = "towerear-crosscheck-truth/1"
SCENARIOS = ("single", "rapid", "noisy", "game", "acoustic")
DEFAULT_SCENARIOS = ("single", "rapid", "noisy", "game")
COLOURS = ("yellow", "blue", "brown", "gray", "black", "white")

FS = 2000  # piezo sample sets per second (contract nominal; timer-driven, exact)
QUIET_S = 5.0  # an empty, quiet tower first: the detector tares on it
G = 9.81
J_REF = 1e-3  # N s: the impulse the piezo gains are given for
ADC_SKEW_S = 52e-6  # 13 ADC clocks at 250 kHz (prescaler 64): channel k is read k x 52 us late
PROTO = 1
FW = (1, 0, 4)
N_CHANNELS = 8
V_STOP = 0.06  # m/s: a cube bouncing up slower than this has settled
RELEASE_MARGIN_S = 4.0  # no throw released closer than this to the end
# Plate modes (m, n) of the free-edge cosine approximation, lowest first.
MODES_MN = ((1, 1), (2, 0), (0, 2), (2, 1), (1, 2), (2, 2), (3, 0), (0, 3), (3, 1), (1, 3))
N_MODES = len(MODES_MN)


# -- wire: CRC-16/CCITT-FALSE and COBS, written from contracts.md ----------------------


def _crc_table() -> list[int]:
    table = []
    for byte in range(256):
        crc = byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
            crc &= 0xFFFF
        table.append(crc)
    return table


CRC_TABLE = _crc_table()
CRC_TABLE_NP = np.array(CRC_TABLE, dtype=np.uint32)


def crc16_ccitt_false(data: bytes) -> int:
    """CRC-16/CCITT-FALSE by table (poly 0x1021, init 0xFFFF, no reflection, xorout 0)."""
    crc = 0xFFFF
    for b in data:
        crc = ((crc << 8) & 0xFFFF) ^ CRC_TABLE[((crc >> 8) ^ b) & 0xFF]
    return crc


def crc16_ccitt_false_reference(data: bytes) -> int:
    """The same CRC bit by bit, as a second implementation to check the first."""
    crc = 0xFFFF
    for b in data:
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) & 0xFFFF if crc & 0x8000 else (crc << 1) & 0xFFFF
    return crc


def crc16_rows(rows: U8Arr) -> npt.NDArray[np.uint32]:
    """The CRC of every row of an (M, L) byte matrix, column by column in numpy."""
    crc = np.full(rows.shape[0], 0xFFFF, np.uint32)
    for col in rows.T.astype(np.uint32):
        crc = ((crc << 8) & 0xFFFF) ^ CRC_TABLE_NP[((crc >> 8) ^ col) & 0xFF]
    return crc


def cobs_encode(data: bytes) -> bytes:
    """COBS-encode one message (no trailing delimiter)."""
    out = bytearray([0])
    code_at, code = 0, 1
    for b in data:
        if b == 0:
            out[code_at] = code
            code_at, code = len(out), 1
            out.append(0)
        else:
            out.append(b)
            code += 1
            if code == 0xFF:
                out[code_at] = code
                code_at, code = len(out), 1
                out.append(0)
    out[code_at] = code
    return bytes(out)


def cobs_decode_own(encoded: bytes) -> bytes:
    """Undo :func:`cobs_encode` (ValueError on a malformed block)."""
    out = bytearray()
    i = 0
    while i < len(encoded):
        code = encoded[i]
        if code == 0 or i + code > len(encoded):
            raise ValueError("malformed COBS block")
        out += encoded[i + 1:i + code]
        i += code
        if code < 0xFF and i < len(encoded):
            out.append(0)
    return bytes(out)


def cobs_encode_rows(rows: U8Arr) -> U8Arr:
    """COBS of every row of an (M, L) matrix, L <= 253, each followed by its 0x00."""
    m, length = rows.shape
    assert length <= 253
    idx = np.arange(length)
    zero = rows == 0
    nxt = np.where(zero, idx, length)
    nxt = np.minimum.accumulate(nxt[:, ::-1], axis=1)[:, ::-1]  # next zero at or after j
    after = np.concatenate([nxt[:, 1:], np.full((m, 1), length)], axis=1)
    out = np.zeros((m, length + 2), np.uint8)
    out[:, 0] = (nxt[:, 0] + 1) if length else 1
    out[:, 1:length + 1] = np.where(zero, after - idx, rows)
    return out


def frame(msg_type: int, seq: int, payload: bytes) -> bytes:
    """One framed message: COBS(type | seq | payload | crc) + 0x00."""
    msg = bytes([msg_type]) + (seq & 0xFFFF).to_bytes(2, "little") + payload
    return cobs_encode(msg + crc16_ccitt_false(msg).to_bytes(2, "little")) + b"\x00"


# -- the tower ---------------------------------------------------------------------------


@dataclass
class Tower:
    """One build of the tower: every figure drawn from the seed (README section 3)."""

    seed: int
    # mechanics and cubes
    plate_m: float
    module_h_m: float
    hole_half_m: FArr  # (9,): index 1..7 the plate holes, 8 the entry hole; 0 unused
    hole_c_m: FArr  # (9, 2) hole centres
    cube_side_m: float
    cube_mass_g: float
    restitution: float
    kick: float
    pause_tower: bool
    p_teeter: float
    toss: float  # m/s: the largest horizontal speed a cube is thrown in with
    slide_m: float  # the longest slide after the last hop
    # plates and discs
    mode_f: FArr  # (8, M) Hz
    mode_zeta: FArr  # (8, M)
    disc_xy: FArr  # (8, 2)
    phi_disc: FArr  # (8, M)
    edge_phi: FArr  # (8, M): mode shape where the walls drive a plate
    disc_gain: FArr  # (8,) counts for J_REF at a mode's antinode
    bounce_c: float
    qs_c: float
    c_edge: float
    c_rx: float
    loss_b0: float
    loss_b1: float  # per kHz
    cross_jit: FArr  # (8, 8)
    cross_psi: FArr  # (8, 8, M)
    level_delay_s: float
    f_hp: float
    f_lp: float
    bias: FArr
    adc_noise: FArr
    mux_k: float
    clamp_over: float
    mains_hz: float
    hum_amp: FArr
    hum_phase: FArr
    table_f: float
    table_zeta: float
    # load cells
    cell_f: FArr
    cell_zeta: FArr
    plate_mass_g: FArr
    load_rate_hz: int
    chip_period_s: FArr
    cells: str
    rated_mv_v: FArr
    cpg: FArr  # counts per gram
    offset: FArr  # counts of the empty plate at boot
    load_noise_g: FArr
    load_rw_g: FArr  # random walk, g per sqrt(s)
    warm_g: FArr
    warm_tau_s: FArr
    # device
    sets_per_msg: int
    boot_s: float
    device_id: bytes

    def figures(self) -> dict[str, Any]:
        """The tower's figures for the truth file."""
        def r(x: Any) -> Any:
            return np.round(np.asarray(x, float), 5).tolist()
        return {
            "plate_mm": round(self.plate_m * 1e3, 2),
            "module_h_mm": round(self.module_h_m * 1e3, 2),
            "hole_side_mm": r(2e3 * self.hole_half_m[1:]),
            "hole_centre_mm": r(1e3 * self.hole_c_m[1:]),
            "cube_side_mm": round(self.cube_side_m * 1e3, 2),
            "cube_mass_g": round(self.cube_mass_g, 4),
            "restitution": round(self.restitution, 3), "pause_tower": self.pause_tower,
            "p_teeter": round(self.p_teeter, 3), "mode_hz": r(self.mode_f),
            "mode_zeta": r(self.mode_zeta), "disc_gain": r(self.disc_gain),
            "f_hp_hz": round(self.f_hp, 2), "f_lp_hz": round(self.f_lp, 1),
            "bias": r(self.bias), "adc_noise": r(self.adc_noise), "mains_hz": self.mains_hz,
            "cell_hz": r(self.cell_f), "load_rate_hz": self.load_rate_hz,
            "chip_rate_hz": r(1.0 / self.chip_period_s), "cells": self.cells,
            "rated_mv_v": r(self.rated_mv_v), "counts_per_g": r(self.cpg),
            "offset_counts": r(self.offset), "load_noise_g": r(self.load_noise_g),
            "sets_per_msg": self.sets_per_msg,
        }


def mode_shape(xy: FArr, plate_m: float) -> FArr:
    """The modes' shapes at ``xy`` (..., 2), free-edge cosine approximation: (..., M)."""
    u = np.asarray(xy)[..., 0:1] / plate_m + 0.5
    v = np.asarray(xy)[..., 1:2] / plate_m + 0.5
    m = np.array([mn[0] for mn in MODES_MN], float)
    n = np.array([mn[1] for mn in MODES_MN], float)
    return np.asarray(np.cos(m * np.pi * u) * np.cos(n * np.pi * v), float)


def make_tower(seed: int) -> Tower:
    """The tower of ``seed``: the four scenarios of a seed share one build."""
    rng = np.random.default_rng([0xAF, seed])
    a = rng.uniform(0.085, 0.100)
    h_mod = rng.uniform(0.029, 0.033)
    side = rng.uniform(0.008, 0.010)
    density = rng.uniform(550.0, 780.0)  # kg/m^3: pine to beech
    mass_g = float(np.clip(density * side ** 3 * 1e3, 0.3, 0.8))
    entry_half = rng.uniform(0.0085, 0.0105)
    widen = rng.uniform(0.0002, 0.0007)  # each hole's half-side is this much wider downwards
    hole_half = np.zeros(9)
    hole_half[8] = entry_half
    for lv in range(7, 0, -1):
        hole_half[lv] = entry_half + (8 - lv) * widen
    mis = rng.uniform(0.005, 0.009)
    hole_c = rng.normal(0.0, mis, (9, 2))
    for lv in range(1, 9):
        lim = a / 2 - hole_half[lv] - 0.012
        hole_c[lv] = np.clip(hole_c[lv], -lim, lim)
    hole_c[0] = 0.0

    # Plates: 1.2-2 mm greyboard; the (1, 1) frequency from the thin-plate formula.
    e_mod = rng.uniform(2e9, 4e9)
    thick = rng.uniform(1.2e-3, 2.0e-3)
    rho = rng.uniform(600.0, 850.0)
    bend = e_mod * thick ** 3 / (12 * (1 - 0.3 ** 2))
    f11 = (np.pi / 2) * math.sqrt(bend / (rho * thick)) * (2 / a ** 2)
    lam = np.array([m * m + n * n for m, n in MODES_MN], float)
    mode_f = f11 * lam / 2 * rng.uniform(0.85, 1.15, (8, N_MODES))
    eta0 = rng.uniform(0.03, 0.08)
    mode_zeta = eta0 / 2 * (mode_f / 300.0) ** 0.25 * rng.uniform(0.8, 1.25, (8, N_MODES))

    # 27 mm discs where they fit beside the widest hole, 20 mm ones otherwise.
    disc_r = 0.0135 if a / 2 - 0.0145 >= hole_half[1] + 0.0145 + 0.006 else 0.010
    disc_xy = np.zeros((8, 2))
    for lv in range(8):
        half = hole_half[lv] if lv > 0 else 0.0
        edge = a / 2 - disc_r - 0.001
        while True:
            p = rng.uniform(-edge, edge, 2)
            if lv == 0 or np.max(np.abs(p - hole_c[lv])) >= half + disc_r + 0.001:
                disc_xy[lv] = p
                break
    phi_disc = mode_shape(disc_xy, a)
    edge_phi = rng.choice([-1.0, 1.0], (8, N_MODES)) * rng.uniform(0.4, 1.0, (8, N_MODES))
    disc_gain = rng.uniform(450.0, 1100.0) * rng.uniform(0.7, 1.4, 8)

    load_rate = 10 if seed % 3 == 0 else 80
    cells = "mixed" if seed % 2 == 0 else "matched"
    if cells == "matched":
        rated = rng.uniform(0.9, 1.1) * (1 + rng.normal(0.0, 0.01, 8))
    else:
        rated = rng.uniform(0.6, 1.2, 8)
    cpg = rated * 2 ** 23 * 256 / 100 / 1000  # ratiometric: gain 128, +-0.5 AVDD/128 full scale
    plate_mass = rng.uniform(6.0, 16.0, 8)
    offset = np.round(cpg * (plate_mass + rng.uniform(-10.0, 10.0, 8)))
    counts_per_nv = 2 ** 23 / (0.5 * 4.3 / 128 * 1e9)
    noise_nv = (90.0 if load_rate == 80 else 50.0) * rng.uniform(2.0, 6.0, 8)
    return Tower(
        seed=seed, plate_m=a, module_h_m=h_mod, hole_half_m=hole_half, hole_c_m=hole_c,
        cube_side_m=side, cube_mass_g=mass_g, restitution=rng.uniform(0.25, 0.5),
        kick=rng.uniform(0.1, 0.35), pause_tower=bool(rng.random() < 0.5),
        p_teeter=rng.uniform(0.5, 1.0), toss=rng.uniform(0.1, 0.3), slide_m=rng.uniform(0.0, 0.02),
        mode_f=mode_f, mode_zeta=mode_zeta, disc_xy=disc_xy, phi_disc=phi_disc,
        edge_phi=edge_phi, disc_gain=disc_gain, bounce_c=rng.uniform(0.03, 0.12),
        qs_c=rng.uniform(0.3, 0.9), c_edge=rng.uniform(0.3, 0.6), c_rx=rng.uniform(0.2, 0.5),
        loss_b0=rng.uniform(0.6, 1.1), loss_b1=rng.uniform(0.3, 1.0),
        cross_jit=rng.uniform(0.8, 1.25, (8, 8)),
        cross_psi=rng.uniform(0, 2 * np.pi, (8, 8, N_MODES)),
        level_delay_s=rng.uniform(0.1e-3, 0.3e-3), f_hp=rng.uniform(5.0, 25.0),
        f_lp=rng.uniform(1500.0, 5000.0), bias=512 + rng.normal(0.0, 2.5, 8),
        adc_noise=rng.uniform(0.35, 1.0) * rng.uniform(0.8, 1.25, 8),
        mux_k=rng.uniform(0.0005, 0.002), clamp_over=rng.uniform(40.0, 100.0),
        mains_hz=50.0 if rng.random() < 0.75 else 60.0,
        hum_amp=rng.uniform(0.2, 1.0) * rng.uniform(0.5, 1.5, 8),
        hum_phase=rng.uniform(0, 2 * np.pi, 8), table_f=rng.uniform(35.0, 90.0),
        table_zeta=rng.uniform(0.04, 0.12),
        cell_f=rng.uniform(60.0, 140.0, 8), cell_zeta=rng.uniform(0.03, 0.12, 8),
        plate_mass_g=plate_mass, load_rate_hz=load_rate,
        chip_period_s=(1.0 / load_rate) * (1 + rng.uniform(-0.02, 0.02, 8)),
        cells=cells, rated_mv_v=rated, cpg=cpg, offset=offset,
        load_noise_g=noise_nv * counts_per_nv / cpg, load_rw_g=rng.uniform(0.0003, 0.002, 8),
        warm_g=rng.uniform(-0.06, 0.06, 8), warm_tau_s=rng.uniform(200.0, 900.0, 8),
        sets_per_msg=int(rng.choice([8, 10, 14])), boot_s=rng.uniform(0.15, 0.9),
        device_id=bytes(rng.integers(0, 256, 8, dtype=np.uint8).tolist()),
    )


# -- the scene: what happens, physically -------------------------------------------------


@dataclass
class Cube:
    """One cube and where it has been: (t_from, t_to, level, x, y); level -1 is outside."""

    cid: int
    colour: str
    mass_g: float
    place: list[list[float]] = field(default_factory=list)

    def where(self, t: float) -> list[float] | None:
        """Its last placement if it lies in the tower at ``t`` and has not moved since."""
        if not self.place:
            return None
        p = self.place[-1]
        return p if p[0] <= t < p[1] and p[2] >= 0 else None

    def level_at(self, t: float) -> int:
        for p in self.place:
            if p[0] <= t < p[1]:
                return int(p[2])
        return -1


@dataclass
class Strike:
    """An impact on plate ``level`` (-1: the table under the base)."""

    t: float
    level: int
    x: float
    y: float
    j: float  # N s
    tau_c: float  # contact time, s


@dataclass
class Scene:
    """Everything that happens in one recording, before it is turned into signals."""

    tw: Tower
    duration: float
    rng: np.random.Generator
    scenario: str
    cubes: list[Cube] = field(default_factory=list)
    strikes: list[Strike] = field(default_factory=list)
    impulses: list[tuple[float, int, float]] = field(default_factory=list)  # t, level, N s
    weights: list[tuple[float, int, float]] = field(default_factory=list)  # t, level, grams
    presses: list[tuple[float, float, int, float]] = field(default_factory=list)
    shakes: list[tuple[float, float, float]] = field(default_factory=list)  # t, m/s^2, scale
    rubs: list[tuple[float, float, int, float]] = field(default_factory=list)
    clicks: list[tuple[float, int]] = field(default_factory=list)
    lifted: list[list[float]] = field(default_factory=list)  # level, t_off, t_on
    talk: list[tuple[float, float]] = field(default_factory=list)
    hum_factor: float = 1.0
    load: bool = True
    n_load: int = 8
    landings: list[dict[str, Any]] = field(default_factory=list)
    knockdowns: list[dict[str, Any]] = field(default_factory=list)
    removals: list[dict[str, Any]] = field(default_factory=list)
    lifts: list[dict[str, Any]] = field(default_factory=list)
    closes: list[dict[str, Any]] = field(default_factory=list)
    knocks: list[dict[str, Any]] = field(default_factory=list)
    pauses: list[dict[str, Any]] = field(default_factory=list)
    spills: list[dict[str, Any]] = field(default_factory=list)
    game: dict[str, Any] | None = None
    last_rest: float = 0.0
    n_falls: int = 0

    def new_fall(self) -> int:
        self.n_falls += 1
        return self.n_falls

    def on_level(self, level: int, t: float) -> list[Cube]:
        return [c for c in self.cubes if (p := c.where(t)) is not None and p[2] == level]

    def strike(self, t: float, level: int, xy: FArr, j: float, tau_c: float,
               load: bool = True) -> None:
        self.strikes.append(Strike(t, level, float(xy[0]), float(xy[1]), j, tau_c))
        if load and level >= 0:
            self.impulses.append((t, level, j))


def _cheb(d: FArr) -> float:
    return float(np.max(np.abs(d)))


def _fly(xy: FArr, vh: FArr, dt: float, lim: float) -> tuple[FArr, FArr]:
    """Horizontal flight for ``dt``, bouncing off the module walls (losing half its speed)."""
    xy = xy + vh * dt
    vh = vh.copy()
    for k in range(2):
        for _ in range(4):
            if xy[k] > lim:
                xy[k], vh[k] = 2 * lim - xy[k], -0.5 * vh[k]
            elif xy[k] < -lim:
                xy[k], vh[k] = -2 * lim - xy[k], -0.5 * vh[k]
        xy[k] = float(np.clip(xy[k], -lim, lim))
    return xy, vh


def throw(sc: Scene, t_release: float, colour: str, kind: str) -> dict[str, Any] | None:
    """A cube dropped into the shaft at ``t_release``; its landing (None: too late to throw)."""
    if t_release > sc.duration - RELEASE_MARGIN_S:
        return None
    tw, rng = sc.tw, sc.rng
    cube = Cube(len(sc.cubes), colour, tw.cube_mass_g * float(1 + rng.normal(0.0, 0.02)))
    sc.cubes.append(cube)
    r = tw.cube_side_m / 2
    h_drop = rng.uniform(0.01, 0.08)
    spread = tw.hole_half_m[8] - r
    xy = tw.hole_c_m[8] + rng.uniform(-spread, spread, 2)
    ang = rng.uniform(0, 2 * np.pi)
    vh = rng.uniform(0.0, tw.toss) * np.array([math.cos(ang), math.sin(ang)])  # tossed in
    info: dict[str, Any] = {"t_release": t_release, "kind": kind, "knocked_from": None,
                            "caused": False, "fid": sc.new_fall()}
    t_entry = t_release + math.sqrt(2 * h_drop / G)
    return fall(sc, cube, t_entry, 7, xy, vh, math.sqrt(2 * G * h_drop), tw.module_h_m, info)


def fall(sc: Scene, cube: Cube, t: float, level: int, xy: FArr, vh: FArr, vz: float,
         h: float, info: dict[str, Any]) -> dict[str, Any]:
    """A cube ``h`` above plate ``level``, falling: hole edges, bounces, rest. Its landing."""
    tw, rng = sc.tw, sc.rng
    r = tw.cube_side_m / 2
    m = cube.mass_g / 1e3
    lim = tw.plate_m / 2 - r
    impacts: list[list[float]] = []
    while True:
        tf = (-vz + math.sqrt(vz * vz + 2 * G * h)) / G
        xy, vh = _fly(xy, vh, tf, lim)
        t += tf
        vz += G * tf
        theta = rng.uniform(0, np.pi / 2)
        reff = r * (math.cos(theta) + math.sin(theta))
        if level > 0:
            c, half = tw.hole_c_m[level], tw.hole_half_m[level]
            d = _cheb(xy - c)
            if d + reff <= half:  # clean through the hole
                level, h = level - 1, tw.module_h_m
                continue
            if d - reff < half:  # the footprint catches the hole's edge
                over = (d + reff - half) / (2 * reff)
                p_in = 1 - over if d < half else 0.5 * (1 - over)
                edge = c + (xy - c) * half / max(d, 1e-9)
                j = m * vz * (1 + tw.restitution) * rng.uniform(0.2, 0.6)
                sc.strike(t, level, edge, j, rng.uniform(0.3e-3, 0.8e-3))
                impacts.append([t, level, j])
                if rng.random() < p_in:
                    vz *= rng.uniform(0.5, 0.85)
                    towards = (c - xy) / max(float(np.linalg.norm(c - xy)), 1e-9)
                    vh = 0.5 * vh + towards * rng.uniform(0.03, 0.15)
                    if d > half - reff:
                        xy = c + (xy - c) * max(half - reff, 0.0) / max(d, 1e-9)
                    level, h = level - 1, tw.module_h_m
                    continue
                xy = c + (xy - c) * (half + reff * rng.uniform(0.3, 1.0)) / max(d, 1e-9)
                xy = np.clip(xy, -lim, lim)
                vz *= 0.7
                t += rng.uniform(0.003, 0.012)  # it tips off the edge onto the plate
        out = bounce(sc, cube, t, level, xy, vh, vz, impacts, info)
        if isinstance(out, dict):
            return out
        t, xy, vh, vz = out
        level, h = level - 1, tw.module_h_m


def bounce(sc: Scene, cube: Cube, t: float, level: int, xy: FArr, vh: FArr, v: float,
           impacts: list[list[float]], info: dict[str, Any]
           ) -> dict[str, Any] | tuple[float, FArr, FArr, float]:
    """Bounces on plate ``level``: its landing, or (t, xy, vh, vz) when it drops into the hole."""
    tw, rng = sc.tw, sc.rng
    r = tw.cube_side_m / 2
    m = cube.mass_g / 1e3
    lim = tw.plate_m / 2 - r
    c, half = tw.hole_c_m[level], tw.hole_half_m[level]
    first = True
    j = 0.0
    while True:
        ek = float(np.clip(tw.restitution * rng.uniform(0.8, 1.2), 0.05, 0.9))
        if first and not info["caused"] and try_knock(sc, cube, t, level, xy, v, info):
            v *= 0.6
        j = m * v * (1 + ek)
        sc.strike(t, level, xy, j, rng.uniform(0.7e-3, 2.0e-3))
        impacts.append([t, level, j])
        first = False
        vup = v * ek
        if vup < V_STOP:
            break
        flight = 2 * vup / G
        ang = rng.uniform(0, 2 * np.pi)
        vh = 0.5 * vh + tw.kick * v * rng.uniform(0, 1) * np.array([math.cos(ang), math.sin(ang)])
        xy, vh = _fly(xy, vh, flight, lim)
        t += flight
        v = vup
        if level > 0 and _cheb(xy - c) < half:  # came down over the hole: in it goes
            return t, xy, vh, v
    # The last hop ends in a short slide (or a tumble) along the plate; over the hole it drops.
    slide = rng.uniform(0.0, tw.slide_m)
    if slide > 0 and np.linalg.norm(vh) > 1e-6:
        way = vh / np.linalg.norm(vh)
        for s_ in np.linspace(0.0, slide, 8)[1:]:
            q = np.clip(xy + way * s_, -lim, lim)
            if level > 0 and _cheb(q - c) < half:
                sc.strike(t + 0.01, level, q, m * v * rng.uniform(0.1, 0.3), 1e-3)
                return t + 0.01 + s_ / 0.3, q, way * 0.1, 0.05
        xy = np.clip(xy + way * slide, -lim, lim)
    for _ in range(int(rng.integers(0, 3))):  # the cube rocks on an edge before it lies flat
        jr = j * rng.uniform(0.03, 0.12)
        tr = t + rng.uniform(0.004, 0.03)
        sc.strike(tr, level, xy, jr, rng.uniform(0.5e-3, 1.5e-3))
    t_rest = t + rng.uniform(0.02, 0.06)
    if level > 0:
        d = _cheb(xy - c)
        if half < d < half + r:  # overhangs the hole
            into = c + (xy - c) * max(half - r, 0.0) / max(d, 1e-9)
            if tw.pause_tower and rng.random() < tw.p_teeter:
                pause = rng.uniform(0.1, 0.6)
                cube.place.append([t_rest, t_rest + pause, level, float(xy[0]), float(xy[1])])
                sc.weights += [(t_rest, level, cube.mass_g), (t_rest + pause, level, -cube.mass_g)]
                sc.pauses.append({"t": t_rest, "t_end": t_rest + pause, "floor": level,
                                  "cid": cube.cid})
                t_slide = t_rest + pause
                sc.strike(t_slide, level, xy, m * rng.uniform(0.03, 0.1), 1.0e-3)
                return t_slide, into, np.zeros(2), rng.uniform(0.05, 0.15)
            if not tw.pause_tower and d - half < 0.35 * r:  # barely held: tips in at once
                return t + 0.02, into, np.zeros(2), rng.uniform(0.05, 0.15)
    cube.place.append([t_rest, math.inf, level, float(xy[0]), float(xy[1])])
    sc.weights.append((t_rest, level, cube.mass_g))
    sc.last_rest = max(sc.last_rest, t_rest)
    landing: dict[str, Any] = {
        "t": t_rest, "t_first_impact": info.get("t_first", impacts[0][0]),
        "t_release": info["t_release"], "floor": level, "cubes": 1,
        "knocked": info["knocked_from"] is not None, "kind": info["kind"],
        "colour": cube.colour, "mass_g": cube.mass_g, "cid": cube.cid, "fid": info["fid"],
        "caused_knockdown": info["caused"],
        "impacts": [[x[0], int(x[1]), x[2] * 1e3] for x in impacts],
    }
    if info["knocked_from"] is not None:
        landing["knocked_from"] = info["knocked_from"]
    info["landing"] = landing
    sc.landings.append(landing)
    return landing


def try_knock(sc: Scene, cube: Cube, t: float, level: int, xy: FArr, v: float,
              info: dict[str, Any]) -> bool:
    """A falling cube hits a resting one on ``level``: nudged, or knocked into the hole."""
    tw, rng = sc.tw, sc.rng
    r = tw.cube_side_m / 2
    best, best_d = None, 1.6 * r
    for other in sc.cubes:
        p = other.where(t)
        if other is cube or p is None or p[2] != level:
            continue
        dist = float(np.hypot(p[3] - xy[0], p[4] - xy[1]))
        if dist < best_d:
            best, best_d = other, dist
    if best is None or rng.random() >= (0.5 if best_d < r else 0.2):
        return False
    p = best.where(t)
    assert p is not None
    at = np.array([p[3], p[4]])
    ang = math.atan2(at[1] - xy[1], at[0] - xy[0]) if best_d > 1e-4 else rng.uniform(0, 2 * np.pi)
    ang += rng.uniform(-0.7, 0.7)
    direction = np.array([math.cos(ang), math.sin(ang)])
    push = rng.uniform(0.002, 0.015) * min(1.0, v / 1.5)
    sc.strike(t, level, at, cube.mass_g / 1e3 * v * rng.uniform(0.2, 0.5),
              rng.uniform(0.2e-3, 0.5e-3))
    lim = tw.plate_m / 2 - r
    path = [np.clip(at + direction * s, -lim, lim) for s in np.linspace(0, push, 12)]
    if level > 0:
        c, half = tw.hole_c_m[level], tw.hole_half_m[level]
        into = next((q for q in path if _cheb(q - c) < half), None)
        if into is not None:
            p[1] = t
            sc.weights.append((t, level, -best.mass_g))
            info["caused"] = True
            kinfo: dict[str, Any] = {"t_release": t, "t_first": t, "kind": "knocked",
                                     "knocked_from": level, "caused": False,
                                     "fid": sc.new_fall()}
            kd: dict[str, Any] = {"t": t, "floor_from": level, "cid": best.cid,
                                  "fid": kinfo["fid"], "by_fid": info["fid"]}
            sc.knockdowns.append(kd)
            landing = fall(sc, best, t + 0.005, level - 1, into,
                           direction * rng.uniform(0.1, 0.3), rng.uniform(0.05, 0.3),
                           tw.module_h_m, kinfo)
            kd["floor_to"] = landing["floor"]
            kd["t_rest"] = landing["t"]
            return True
    p[1] = t
    best.place.append([t, math.inf, level, float(path[-1][0]), float(path[-1][1])])
    return False


def take_out(sc: Scene, t: float, level: int) -> tuple[float, list[Cube]]:
    """The investigator's fingers take every cube off the exposed ``level``, a few at a time."""
    rng = sc.rng
    cubes = sc.on_level(level, t)
    rng.shuffle(cubes)
    taken: list[Cube] = []
    i = 0
    while i < len(cubes):
        n = int(min(len(cubes) - i, rng.choice([1, 1, 2, 2, 3])))
        group = cubes[i:i + n]
        i += n
        t_g = t + rng.uniform(0.8, 1.8)
        t_touch = t_g - rng.uniform(0.3, 0.7)
        sc.presses.append((t_touch, t_g, level, rng.uniform(3.0, 25.0)))
        sc.rubs.append((t_g - 0.6, t_g + 0.15, level, rng.uniform(3.0, 10.0)))
        for _ in range(int(rng.integers(1, 4))):
            sc.strike(t_g - rng.uniform(0.05, 0.5), level,
                      rng.uniform(-0.03, 0.03, 2), rng.uniform(0.05e-3, 0.3e-3), 3e-3, load=False)
        for cb in group:
            p = cb.where(t_g)
            assert p is not None
            p[1] = t_g
            cb.place.append([t_g, math.inf, -1, 0.0, 0.0])
            sc.weights.append((t_g, level, -cb.mass_g))
        sc.removals.append({"t": t_g, "t_touch": t_touch, "floor": level, "cubes": n,
                            "mass_g": sum(cb.mass_g for cb in group),
                            "colours": [cb.colour for cb in group]})
        taken += group
        t = t_g
    return t, taken


def lift(sc: Scene, t: float, exposed: int) -> list[Cube]:
    """Modules ``exposed``..7 lifted at ``t``: levels above lose contact. Cubes spilled."""
    rng = sc.rng
    sc.rubs.append((t - rng.uniform(0.6, 1.2), t + rng.uniform(0.2, 0.5), exposed,
                    rng.uniform(4.0, 15.0)))
    sc.shakes.append((t - rng.uniform(0.0, 0.3), rng.uniform(0.3, 1.5), 1.0))
    for lv in range(exposed + 1, 8):
        sc.lifted.append([lv, t, math.inf])
        sc.clicks.append((t, lv))
    sc.lifts.append({"t": t, "exposed": exposed})
    spilled: list[Cube] = []
    riding = [c for lv in range(exposed + 1, 8) for c in sc.on_level(lv, t)]
    if riding and rng.random() < 0.08:  # one slides out of the tilted stack onto the table
        cb = riding[int(rng.integers(len(riding)))]
        t_s = t + rng.uniform(0.3, 1.0)
        p = cb.where(t)
        assert p is not None
        lv = int(p[2])
        p[1] = t_s
        cb.place.append([t_s, math.inf, -1, 0.0, 0.0])
        sc.weights.append((t_s, lv, -cb.mass_g))
        sc.strike(t_s + 0.05, -1, np.zeros(2), rng.uniform(0.2e-3, 0.6e-3), 0.5e-3)
        sc.spills.append({"t": t_s, "floor": lv, "colour": cb.colour, "cid": cb.cid})
        spilled.append(cb)
    return spilled


def close(sc: Scene, t: float, exposed: int) -> None:
    """The lifted modules set back on at ``t``: a thud, and the contacts make again."""
    rng = sc.rng
    sc.rubs.append((t - rng.uniform(0.5, 1.0), t + 0.15, exposed, rng.uniform(4.0, 12.0)))
    edge = np.array([sc.tw.plate_m / 2 - 0.005, rng.uniform(-0.03, 0.03)])
    sc.strike(t, exposed, edge, rng.uniform(1e-3, 4e-3), rng.uniform(2e-3, 5e-3), load=False)
    sc.shakes.append((t, rng.uniform(0.5, 2.0), 1.0))
    for span in sc.lifted:
        if span[2] == math.inf:
            span[2] = t
            sc.clicks.append((t, int(span[0])))
    sc.closes.append({"t": t, "exposed": exposed})


def table_knock(sc: Scene, t: float, strength: float = 1.0) -> None:
    """Someone knocks on the table: one to three blows."""
    rng = sc.rng
    n = int(rng.integers(1, 4))
    tk = t
    for i in range(n):
        if i:
            tk += rng.uniform(0.1, 0.25)
        sc.strike(tk, -1, np.zeros(2), strength * rng.uniform(2e-3, 10e-3), rng.uniform(1e-3, 3e-3))
        sc.shakes.append((tk, strength * rng.uniform(1.0, 8.0), 1.0))
    sc.knocks.append({"t": t, "t_end": tk + 0.3, "blows": n})


def add_talk(sc: Scene) -> None:
    """People talking by the table: utterances of 1-4 s, a few seconds apart."""
    rng = sc.rng
    t = rng.uniform(0.0, 3.0)
    while t < sc.duration:
        d = rng.uniform(1.0, 4.0)
        sc.talk.append((t, min(t + d, sc.duration)))
        t += d + rng.uniform(1.0, 6.0)


# -- scenarios ---------------------------------------------------------------------------


def _next_colour(rng: np.random.Generator) -> str:
    return str(COLOURS[int(rng.integers(len(COLOURS)))])


def script_single(sc: Scene, spacing: tuple[float, float] = (3.0, 7.0)) -> None:
    rng = sc.rng
    t = QUIET_S + rng.uniform(0.3, 1.5)
    while len(sc.cubes) < 122 and throw(sc, t, _next_colour(rng), "throw") is not None:
        t = max(t + rng.uniform(*spacing), sc.last_rest + 0.5)


def script_rapid(sc: Scene) -> None:
    rng = sc.rng
    t = QUIET_S + rng.uniform(0.3, 1.5)
    while len(sc.cubes) < 122:
        for _ in range(int(rng.integers(2, 7))):
            if throw(sc, t, _next_colour(rng), "throw") is None:
                return
            t += rng.uniform(0.3, 0.8)
        t += rng.uniform(2.5, 5.0)


def script_noisy(sc: Scene) -> None:
    rng = sc.rng
    sc.hum_factor = rng.uniform(3.0, 8.0)
    add_talk(sc)
    t = QUIET_S + rng.uniform(0.5, 3.0)
    while t < sc.duration - 1.5:
        table_knock(sc, t, rng.uniform(0.5, 1.5))
        t += rng.uniform(5.0, 14.0)
    script_single(sc, (2.5, 6.0))


class Arosa:
    """The bits of Mord im Arosa the scripted game needs (rules/004, contracts.md section 4)."""

    def __init__(self, players: list[str]) -> None:
        self.players = players
        self.supply = {p: 20 for p in players}
        self.sheet = {p: [0] * 8 for p in players}
        self.crime_scenes: list[int] = []
        self.phase = "prologue"
        self.turns: list[dict[str, Any]] = []

    def over(self) -> bool:
        return any(sum(s) >= 10 for s in self.sheet.values()) or min(self.supply.values()) == 0

    def to_sheet(self, p: str, floor: int, n: int) -> int:
        """``n`` clues of ``p`` onto the sheet from the supply; returns the shortfall."""
        k = min(n, self.supply[p])
        self.supply[p] -= k
        self.sheet[p][floor] += k
        return n - k


def script_game(sc: Scene) -> None:
    """A game by the rulebook, with the app's ritual: throw, listen, lift, take out, close."""
    rng = sc.rng
    n_players = int(rng.integers(3, 6))
    players = [str(c) for c in rng.permutation(COLOURS)[:n_players]]
    game = Arosa(players)
    t = QUIET_S + rng.uniform(0.5, 1.5)

    def do_throw(colour: str, kind: str, from_supply: bool) -> bool:
        nonlocal t
        t = max(t, sc.last_rest + 0.6)
        if game.over() or throw(sc, t, colour, kind) is None:
            return False
        if from_supply:
            game.supply[colour] -= 1
        t += rng.uniform(1.2, 3.0)
        return True

    # Prologue: the first player throws both victims, then two clues each.
    for _ in range(2):
        do_throw("red", "victim", False)
    for p in players:
        for _ in range(2):
            do_throw(p, "prologue", True)
    game.phase = "act1"
    turn = 0
    while not game.over():
        inv = players[turn % n_players]
        t = max(t + rng.uniform(1.5, 4.0), sc.last_rest + 1.0)
        in_tower = {lv: sc.on_level(lv, t) for lv in range(8)}
        entry: dict[str, Any] = {"by": inv, "act": game.phase}
        if game.phase == "act1":
            victims = [lv for lv, cs in in_tower.items() for c in cs if c.colour == "red"]
            if victims and rng.random() < 0.35:  # heard it
                floor = int(victims[int(rng.integers(len(victims)))])
            else:
                floor = int(rng.integers(8))
            entry["action"] = "inspect"
        else:
            own_sheet = [lv for lv in range(8) if game.sheet[inv][lv]]
            if own_sheet and rng.random() < 0.4:
                entry["action"] = "cover"
                own_there = [lv for lv in range(8) if any(c.colour == inv for c in in_tower[lv])]
                pool = own_there if own_there and rng.random() < 0.5 else own_sheet
                floor = int(pool[int(rng.integers(len(pool)))])
            else:
                entry["action"] = "suspect"
                others = [p for p in players if p != inv]
                n_s = 1 if rng.random() < 0.7 else 2
                suspects = [str(s) for s in rng.permutation(others)[:n_s]]
                entry["suspects"] = suspects
                theirs = [lv for lv in range(8) if any(c.colour == suspects[0]
                                                        for c in in_tower[lv])]
                if theirs and rng.random() < 0.45:
                    floor = int(theirs[int(rng.integers(len(theirs)))])
                else:
                    floor = int(rng.integers(8))
        entry["floor"] = floor
        n_there = len(in_tower[floor])
        # Lift, look, take out (about 0.75 s a cube) and close must fit; throws that do
        # not fit before the end are simply not in the recording.
        if t + 5.5 + 1.0 * n_there > sc.duration - 2.0:
            break
        t_lift = t + rng.uniform(0.6, 1.2)
        spilled = lift(sc, t_lift, floor)
        t_end, taken = take_out(sc, t_lift + rng.uniform(1.0, 2.5), floor)
        t_close = t_end + rng.uniform(0.8, 2.0)
        close(sc, t_close, floor)
        t = t_close + rng.uniform(1.0, 2.5)
        count = {p: sum(c.colour == p for c in taken) for p in players}
        to_sheet_from_floor: dict[str, int] = {}
        penalties = 0
        next_turn = turn + 1
        if entry["action"] == "inspect":
            reds = sum(c.colour == "red" for c in taken)
            if reds:
                game.crime_scenes.append(floor)
                for p in players:
                    if p != inv and count[p]:
                        to_sheet_from_floor[p] = game.to_sheet(p, floor, count[p])
                if sum(col == "red" for x in sc.removals for col in x["colours"]) >= 2:
                    game.phase = "act2"
                    next_turn = players.index(inv) + 1
            else:
                penalties = 1
            entry["victims"] = reds
        elif entry["action"] == "suspect":
            own_ground = count[inv] > 0
            if floor == 0 and not own_ground:
                penalties = len(entry["suspects"])
                entry["ground_floor_case"] = True
            else:
                for s in entry["suspects"]:
                    if count[s]:
                        to_sheet_from_floor[s] = game.to_sheet(s, floor, count[s])
                    else:
                        penalties += 1
        else:
            back = min(count[inv], game.sheet[inv][floor])
            game.sheet[inv][floor] -= back
            game.supply[inv] += back
            entry["covered"] = back
            penalties = 0 if count[inv] else 1
        for p, short in to_sheet_from_floor.items():  # supply short: taken from the floor
            game.sheet[p][floor] += short
        game.turns.append(entry)
        # Throw back what was taken out (not the victims, not clues gone to the sheet).
        keep_out = dict(to_sheet_from_floor)
        back_in: list[str] = []
        for c in taken:
            if c.colour == "red":
                continue
            if keep_out.get(c.colour, 0) > 0:
                keep_out[c.colour] -= 1
                continue
            back_in.append(c.colour)
        for colour in back_in:
            if not do_throw(colour, "throwback", False):
                break
        for _ in range(penalties):
            if not do_throw(inv, "penalty", True):
                break
        for cb in spilled:  # fell out while lifting: back in at the end of the turn
            if not do_throw(cb.colour, "throwback", False):
                break
        turn = next_turn
    sc.game = {
        "players": players, "turns": game.turns, "crime_scenes": sorted(set(game.crime_scenes)),
        "sheet": game.sheet, "supply": game.supply, "phase": game.phase, "over": game.over(),
    }


SCRIPTS = {"single": script_single, "rapid": script_rapid, "noisy": script_noisy,
           "game": script_game, "acoustic": script_single}


def simulate(seed: int, scenario: str, duration: float) -> Scene:
    """The scene of one recording: tower ``seed`` in ``scenario`` for ``duration`` s."""
    tw = make_tower(seed)
    rng = np.random.default_rng([0xAF, seed, SCENARIOS.index(scenario)])
    sc = Scene(tw, duration, rng, scenario)
    if scenario == "acoustic":
        sc.load = False
        sc.n_load = 0 if seed % 2 else 8
    SCRIPTS[scenario](sc)
    return sc


# -- signals -----------------------------------------------------------------------------


def _contact_spectrum(f: FArr, tau_c: float) -> FArr:
    """|F(f)| / J of a half-sine contact force lasting ``tau_c``."""
    x = 2 * f * tau_c
    near = np.abs(1 - x * x) < 1e-6
    val = np.abs(np.cos(np.pi * f * tau_c) / np.where(near, 1.0, 1 - x * x))
    return np.asarray(np.where(near, np.pi / 4, val), float)


def _front_end(tw: Tower, f: FArr) -> npt.NDArray[np.complex128]:
    """The disc's bias network (high-pass) and the input RC (low-pass) at ``f``."""
    hp = (1j * f / tw.f_hp) / (1 + 1j * f / tw.f_hp)
    lp = 1 / (1 + 1j * f / tw.f_lp)
    return np.asarray(hp * lp)


def _strike_components(tw: Tower, st: Strike, q: int) -> tuple[FArr, FArr, npt.NDArray[
        np.complex128], float]:
    """Frequencies, dampings and complex amplitudes of a strike at channel ``q``, and delay."""
    jr = st.j / J_REF
    gain = tw.disc_gain[q]
    p = st.level
    if p == q:
        phi_s = mode_shape(np.array([st.x, st.y]), tw.plate_m)
        f = np.append(tw.mode_f[p], tw.cell_f[p])
        z = np.append(tw.mode_zeta[p], tw.cell_zeta[p])
        amp = gain * jr * _contact_spectrum(f, st.tau_c) * np.append(
            phi_s * tw.phi_disc[p], tw.bounce_c)
        return f, z, amp.astype(complex), 0.0
    dist = (q + 0.5) if p < 0 else abs(p - q)
    f_rx, z_rx = tw.mode_f[q], tw.mode_zeta[q]
    loss_rx = np.exp(-dist * (tw.loss_b0 + tw.loss_b1 * f_rx / 1000))
    a_rx = gain * jr * _contact_spectrum(f_rx, st.tau_c) * tw.c_rx * loss_rx \
        * tw.edge_phi[q] * tw.phi_disc[q]
    if p < 0:  # the table: the base rocks (the table's own mode) and the plates ring
        thump = gain * jr * 0.3 * math.exp(-0.25 * q)
        f = np.append(f_rx, tw.table_f)
        z = np.append(z_rx, tw.table_zeta)
        return f, z, np.append(a_rx, thump).astype(complex), dist * tw.level_delay_s
    phi_s = mode_shape(np.array([st.x, st.y]), tw.plate_m)
    f_src, z_src = tw.mode_f[p], tw.mode_zeta[p]
    loss = np.exp(-dist * (tw.loss_b0 + tw.loss_b1 * f_src / 1000))
    a_src = gain * jr * _contact_spectrum(f_src, st.tau_c) * phi_s * tw.c_edge * loss \
        * tw.cross_jit[p, q] * np.exp(1j * tw.cross_psi[p, q])
    return (np.concatenate([f_src, f_rx]), np.concatenate([z_src, z_rx]),
            np.concatenate([a_src, a_rx.astype(complex)]), dist * tw.level_delay_s)


def synth_strikes(tw: Tower, strikes: list[Strike], n: int) -> FArr:
    """Every strike's ringing at every disc, evaluated at the ADC's sampling instants."""
    x = np.zeros((n, N_CHANNELS))
    tau_hp = 1 / (2 * np.pi * tw.f_hp)
    for st in strikes:
        for q in range(N_CHANNELS):
            f, z, amp, delay = _strike_components(tw, st, q)
            amp = amp * _front_end(tw, f) * -1j  # strain of an impulse-driven mode: a sine
            keep = np.abs(amp) > 0.02
            qs = st.level == q
            if not keep.any() and not qs:
                continue
            w = 2 * np.pi * f[keep]
            decay = z[keep] * w
            s = -decay + 1j * w * np.sqrt(1 - z[keep] ** 2)
            a = amp[keep]
            need = float(np.max(np.log(np.abs(a) / 0.02) / decay)) if keep.any() else 0.0
            if qs:
                need = max(need, 6 * tau_hp)
            t0 = st.t + delay
            n0 = int(math.ceil((t0 - q * ADC_SKEW_S) * FS))
            width = int(min(need, 0.5) * FS) + 2
            if n0 >= n:
                continue
            width = min(width, n - n0)
            tt = (n0 + np.arange(width)) / FS + q * ADC_SKEW_S - t0
            tt = np.maximum(tt, 0.0)
            y = (a[:, None] * np.exp(s[:, None] * tt[None, :])).real.sum(axis=0)
            if qs:  # the plate's quasi-static bend under the contact, and its high-pass tail
                dist = math.hypot(st.x - tw.disc_xy[q, 0], st.y - tw.disc_xy[q, 1])
                peak = tw.disc_gain[q] * tw.qs_c * st.j / J_REF * (1e-3 / st.tau_c) \
                    * math.exp(-dist / 0.02)
                during = tt < st.tau_c
                y += np.where(during, peak * np.sin(np.pi * tt / st.tau_c), 0.0)
                area = peak * 2 * st.tau_c / np.pi
                y -= np.where(during, 0.0,
                              area / tau_hp * np.exp(-(tt - st.tau_c) / tau_hp))
            x[n0:n0 + width, q] += y
    return x


def _bandpass_noise(rng: np.random.Generator, n: int, lo: float, hi: float,
                    channels: int = N_CHANNELS) -> FArr:
    sos = signal.butter(2, [lo, hi], btype="bandpass", fs=FS, output="sos")
    out = signal.sosfilt(sos, rng.normal(0.0, 1.0, (n, channels)), axis=0)
    return np.asarray(out / max(float(np.std(out)), 1e-12), float)


def _talk_signal(sc: Scene, rng: np.random.Generator, n: int) -> FArr:
    """Speech at the discs: voiced harmonics and breath noise under a syllable envelope."""
    t = np.arange(n) / FS
    env = np.zeros(n)
    for t0, t1 in sc.talk:
        i0, i1 = int(t0 * FS), min(int(t1 * FS), n)
        if i1 <= i0:
            continue
        tt = t[i0:i1] - t0
        rate = rng.uniform(3.0, 6.0)
        syll = np.clip(np.sin(2 * np.pi * rate * tt + rng.uniform(0, 6.3)), 0, None) ** 2
        env[i0:i1] += syll * rng.uniform(0.5, 1.5) * np.abs(np.sin(np.pi * tt / (t1 - t0))) ** 0.3
    f0 = rng.uniform(100.0, 220.0) * (1 + 0.1 * np.sin(2 * np.pi * 0.3 * t))
    phase = 2 * np.pi * np.cumsum(f0) / FS
    voiced = sum(np.sin(k * phase) / k for k in range(1, 6))
    breath = _bandpass_noise(rng, n, 300.0, 950.0, 1)[:, 0]
    mono = env * (0.8 * voiced + 0.5 * breath)
    level = rng.uniform(1.0, 5.0)
    gains = level * rng.uniform(0.5, 1.5, N_CHANNELS)
    return np.asarray(mono[:, None] * gains[None, :], float)


def _disconnected(sc: Scene, n: int) -> list[tuple[int, int, int]]:
    out = []
    for lv, t_off, t_on in sc.lifted:
        i0 = max(0, int(math.ceil(t_off * FS)))
        i1 = n if t_on == math.inf else min(n, int(math.ceil(t_on * FS)))
        if i1 > i0:
            out.append((int(lv), i0, i1))
    return out


def render_piezo(sc: Scene, rng: np.random.Generator, n: int) -> npt.NDArray[np.uint16]:
    """The eight ADC channels, (n, 8) codes."""
    tw = sc.tw
    t = np.arange(n) / FS
    x = synth_strikes(tw, sc.strikes, n)
    tau_hp = 1 / (2 * np.pi * tw.f_hp)
    for t0, t1, centre, amp in sc.rubs:  # hands on the cardboard
        i0, i1 = max(0, int(t0 * FS)), min(n, int(t1 * FS))
        if i1 - i0 < 8:
            continue
        rub = _bandpass_noise(rng, i1 - i0, 20.0, 400.0)
        env = np.hanning(i1 - i0)[:, None]
        fall_off = amp * np.exp(-0.5 * np.abs(np.arange(N_CHANNELS) - centre))
        x[i0:i1] += rub * env * fall_off[None, :]
    hum = np.zeros((n, N_CHANNELS))
    for k, rel in ((1, 1.0), (3, 0.3), (5, 0.15)):
        hum += rel * np.sin(2 * np.pi * k * tw.mains_hz * t[:, None] + k * tw.hum_phase[None, :])
    hum *= tw.hum_amp[None, :]
    x += hum * sc.hum_factor
    if sc.talk:
        x += _talk_signal(sc, rng, n)
    x += rng.normal(0.0, 1.0, (n, N_CHANNELS)) * tw.adc_noise[None, :]
    for lv, i0, i1 in _disconnected(sc, n):  # the disc is off the base: only the bias network
        x[i0:i1, lv] = hum[i0:i1, lv] * 3.0 + rng.normal(0.0, 1.2, i1 - i0) * tw.adc_noise[lv]
    for tc, lv in sc.clicks:  # a spring contact breaks or makes: the disc's charge jumps
        i0 = int(math.ceil(tc * FS))
        if 0 <= i0 < n:
            m = min(n - i0, int(8 * tau_hp * FS) + 1)
            x[i0:i0 + m, lv] += rng.choice([-1, 1]) * rng.uniform(10.0, 60.0) \
                * np.exp(-np.arange(m) / (tau_hp * FS))
    x[:, 1:] += tw.mux_k * x[:, :-1]  # the ADC's sample cap remembers the channel before
    v = x + tw.bias[None, :]
    _clamp(v, tw, tau_hp)
    return np.asarray(np.clip(np.round(v), 0, 1023), np.uint16)


def _clamp(v: FArr, tw: Tower, tau_hp: float) -> None:
    """Input diodes clamp the node beyond the rails; the lost charge recovers with the bias RC."""
    hi, lo = 1023 + tw.clamp_over, -tw.clamp_over
    decay = math.exp(-1 / (FS * tau_hp))
    n = v.shape[0]
    for ch in range(N_CHANNELS):
        col = v[:, ch]
        over = np.flatnonzero((col > hi) | (col < lo))
        if over.size == 0:
            continue
        i = int(over[0])
        e = 0.0
        while i < n:
            orig = col[i]
            e *= decay
            u = orig - e
            if u > hi:
                e = orig - hi
            elif u < lo:
                e = orig - lo
            col[i] = orig - e
            i += 1
            if abs(e) < 0.05:
                k = int(np.searchsorted(over, i))
                if k >= over.size:
                    break
                i, e = int(over[k]), 0.0


def _box(x: FArr, width: int) -> FArr:
    """Causal moving average over ``width`` samples (the first value held before the start)."""
    pad = np.concatenate([np.full((width,) + x.shape[1:], x[0]), x])
    c = np.cumsum(pad, axis=0)
    return np.asarray((c[width:] - c[:-width]) / width, float)


def _resonance(f: float, zeta: float) -> tuple[FArr, FArr]:
    w = 2 * np.pi * f
    b, a = signal.bilinear([w * w], [1.0, 2 * zeta * w, w * w], fs=FS)
    return np.asarray(b, float), np.asarray(a, float)


def load_forces(sc: Scene, n: int) -> FArr:
    """What each cell feels, grams-force at the piezo rate, after the plate's ringing on it."""
    tw = sc.tw
    steps = np.zeros((n + 1, N_CHANNELS))
    for t, lv, g in sc.weights:
        steps[min(n, max(0, int(round(t * FS)))), lv] += g
    static = np.cumsum(steps[:n], axis=0)
    force = static.copy()
    for t, lv, j in sc.impulses:
        i = int(round(t * FS))
        if 0 <= i < n:
            force[i, lv] += j * FS / G * 1e3
    for t0, t1, lv, grams in sc.presses:  # fingertips pressing while they pick cubes up
        i0, i1 = max(0, int(t0 * FS)), min(n, int(t1 * FS))
        if i1 <= i0:
            continue
        k = i1 - i0
        rise = np.clip(np.arange(k) / max(1, int(0.4 * k)), 0, 1)
        wobble = 1 + 0.15 * np.sin(np.linspace(0, 6 * np.pi, k))
        force[i0:i1, lv] += grams * np.sin(np.pi / 2 * rise) ** 2 * wobble
        m = min(n - i1, int(0.06 * FS))
        force[i1:i1 + m, lv] += grams * np.cos(np.pi / 2 * np.arange(m) / max(m, 1)) ** 2
    w = 2 * np.pi * tw.table_f
    for t, accel, _ in sc.shakes:  # the base moves: each plate's inertia pulls on its cell
        i0 = int(round(t * FS))
        if not 0 <= i0 < n:
            continue
        m = min(n - i0, int(0.6 * FS))
        tt = np.arange(m) / FS
        a = accel * np.exp(-tw.table_zeta * w * tt) * np.sin(w * tt)
        carried = tw.plate_mass_g + static[i0]
        force[i0:i0 + m] -= (a / G)[:, None] * carried[None, :]
    out = np.empty_like(force)
    for ch in range(N_CHANNELS):
        b, a_ = _resonance(float(tw.cell_f[ch]), float(tw.cell_zeta[ch]))
        zi = signal.lfilter_zi(b, a_) * force[0, ch]
        out[:, ch] = signal.lfilter(b, a_, force[:, ch], zi=zi)[0]
    return out


def _chip_segments(sc: Scene, ch: int) -> list[tuple[float, float]]:
    """When chip ``ch`` converts: (first data ready, power lost), one pair per power-up."""
    tw = sc.tw
    period = float(tw.chip_period_s[ch])
    on = -tw.boot_s
    segs = []
    for lv, t_off, t_on in sorted(sc.lifted, key=lambda s: s[1]):
        if int(lv) != ch:
            continue
        segs.append((on + 4 * period, t_off))
        on = t_on + 0.02 + 0.13 * ((ch * 7919 + int(t_on * 1000)) % 97) / 97  # contact bounce
    segs.append((on + 4 * period, math.inf))
    return segs


def _next_conv(segs: list[tuple[float, float]], period: float, after: float) -> float:
    for first, off in segs:
        if first > after:
            cand = first
        else:
            cand = first + (math.floor((after - first) / period + 1e-6) + 1) * period
        if cand < off:
            return cand
    return math.inf


def _latest_conv(segs: list[tuple[float, float]], period: float, at: float) -> float:
    best = -math.inf
    for first, off in segs:
        if first <= at:
            cand = first + math.floor((at - first) / period + 1e-6) * period
            if cand >= off:  # powered off since: its last conversion before that
                cand = first + (math.ceil((off - first) / period) - 1) * period
            best = max(best, cand)
    return best


LoadReads = tuple[FArr, npt.NDArray[np.uint8], npt.NDArray[np.int64], FArr]


def render_load(sc: Scene, rng: np.random.Generator, n: int, t_start: float) -> LoadReads:
    """The firmware's HX711 reads: times (stream s), valid bits, counts; when chips timed out."""
    tw = sc.tw
    force = load_forces(sc, n)
    filtered = []
    for ch in range(N_CHANNELS):  # the HX711's sinc filter: settles in four readings
        width = max(1, int(round(tw.chip_period_s[ch] * FS)))
        y = force[:, ch]
        for _ in range(4):
            y = _box(y, width)
        filtered.append(y)
    segs = [_chip_segments(sc, ch) for ch in range(N_CHANNELS)]
    periods = [float(p) for p in tw.chip_period_s]
    nominal = 1.0 / tw.load_rate_hz
    last = [t_start] * N_CHANNELS
    present = [_next_conv(segs[ch], periods[ch], t_start) < t_start + 2 * nominal
               for ch in range(N_CHANNELS)]
    times: list[float] = []
    valids: list[int] = []
    values: list[list[float]] = []
    timeouts: list[float] = []
    t_prev = t_start
    while True:
        nxt = [_next_conv(segs[ch], periods[ch], last[ch]) for ch in range(N_CHANNELS)]
        wanted = [nxt[ch] for ch in range(N_CHANNELS) if present[ch]]
        t_read = min(max(wanted) if wanted else math.inf, t_prev + 1.5 * nominal)
        t_read = max(t_read, t_start) + rng.uniform(20e-6, 300e-6)
        if t_read >= sc.duration:
            break
        valid = 0
        row = [0.0] * N_CHANNELS
        for ch in range(N_CHANNELS):
            if nxt[ch] <= t_read:
                conv = _latest_conv(segs[ch], periods[ch], t_read)
                row[ch] = float(filtered[ch][min(n - 1, max(0, int(conv * FS)))])
                last[ch] = conv
                valid |= 1 << ch
                present[ch] = True
            elif present[ch]:
                present[ch] = False
                timeouts.append(t_read)
        times.append(t_read)
        valids.append(valid)
        values.append(row)
        t_prev = t_read
    t = np.array(times)
    grams = np.array(values).reshape(-1, N_CHANNELS)
    dt = np.diff(np.concatenate([[0.0], t]))[:, None]
    walk = np.cumsum(rng.normal(0.0, 1.0, grams.shape) * np.sqrt(dt), axis=0) * tw.load_rw_g
    warm = tw.warm_g * (1 - np.exp(-(t[:, None] + tw.boot_s) / tw.warm_tau_s))
    grams = grams + walk + warm + rng.normal(0.0, 1.0, grams.shape) * tw.load_noise_g
    counts = np.clip(np.round(tw.offset + tw.cpg * grams), -2 ** 23, 2 ** 23 - 1).astype(np.int64)
    valid_arr = np.array(valids, np.uint8)
    counts[(valid_arr[:, None] >> np.arange(N_CHANNELS)) & 1 == 0] = 0
    return t, valid_arr, counts, np.array(timeouts)


# -- the wire ----------------------------------------------------------------------------


def _rows_bytes(rows: U8Arr) -> list[bytes]:
    crc = crc16_rows(rows)
    full = np.concatenate([rows, (crc & 0xFF).astype(np.uint8)[:, None],
                           (crc >> 8).astype(np.uint8)[:, None]], axis=1)
    enc = cobs_encode_rows(full)
    return [r.tobytes() for r in enc]


def _u32_cols(v: npt.NDArray[np.int64]) -> U8Arr:
    v = v.astype(np.uint64) & 0xFFFFFFFF
    return np.stack([((v >> (8 * k)) & 0xFF).astype(np.uint8) for k in range(4)], axis=1)


def assemble(sc: Scene, codes: npt.NDArray[np.uint16], reads: LoadReads | None) -> bytes:
    """The device's byte stream: HELLO, then PIEZO, LOAD and STATUS in the order sent."""
    tw = sc.tw
    per = tw.sets_per_msg
    n_msgs = codes.shape[0] // per
    t0_us = int(round(tw.boot_s * 1e6))
    p_send = ((np.arange(n_msgs) + 1) * per - 1) / FS + 1e-4
    p_tus = t0_us + np.arange(n_msgs, dtype=np.int64) * per * (1_000_000 // FS)
    if reads is not None:
        l_t, l_valid, l_counts, timeouts = reads
        l_send = l_t + 1.5e-4
        l_tus = t0_us + np.round(l_t * 1e6).astype(np.int64)
    else:
        l_send, l_valid, l_counts = np.zeros(0), np.zeros(0, np.uint8), np.zeros((0, 8), np.int64)
        l_tus = np.zeros(0, np.int64)
    s_uptime = np.arange(1, int(sc.duration + tw.boot_s) + 1)
    s_send = s_uptime - tw.boot_s
    s_keep = (s_send > p_send[0]) & (s_send < sc.duration)
    s_uptime, s_send = s_uptime[s_keep], s_send[s_keep]
    kinds = np.concatenate([np.full(n_msgs, 0), np.full(len(l_send), 1), np.full(len(s_send), 2)])
    index = np.concatenate([np.arange(n_msgs), np.arange(len(l_send)), np.arange(len(s_send))])
    send = np.concatenate([p_send, l_send, s_send])
    order = np.lexsort((kinds, send))
    seq = np.empty(len(order), np.int64)
    seq[order] = np.arange(1, len(order) + 1)  # HELLO is seq 0
    seq_p, seq_l, seq_s = seq[kinds == 0], seq[kinds == 1], seq[kinds == 2]

    def head(msg_type: int, seqs: npt.NDArray[np.int64], tus: npt.NDArray[np.int64]) -> U8Arr:
        s = (seqs & 0xFFFF).astype(np.uint16)
        return np.concatenate([np.full((len(seqs), 1), msg_type, np.uint8),
                               (s & 0xFF).astype(np.uint8)[:, None],
                               (s >> 8).astype(np.uint8)[:, None], _u32_cols(tus)], axis=1)

    samples = codes[:n_msgs * per].astype("<u2").reshape(n_msgs, per * N_CHANNELS)
    p_rows = np.concatenate([head(2, seq_p, p_tus), np.full((n_msgs, 1), per, np.uint8),
                             samples.view(np.uint8).reshape(n_msgs, -1)], axis=1)
    frames: list[list[bytes]] = [_rows_bytes(p_rows)]
    if len(l_send):
        c = l_counts.astype(np.int64) & 0xFFFFFF
        s24 = np.stack([((c >> (8 * k)) & 0xFF).astype(np.uint8) for k in range(3)], axis=2)
        l_rows = np.concatenate([head(3, seq_l, l_tus), l_valid[:, None].astype(np.uint8),
                                 s24.reshape(len(l_send), -1)], axis=1)
        frames.append(_rows_bytes(l_rows))
    else:
        frames.append([])
    # STATUS: load_timeouts up to each report, a plausible CPU load, no overruns or drops.
    status = []
    for k in range(len(s_send)):
        lost_n = int(np.searchsorted(timeouts, s_send[k], side="right")) if reads is not None \
            else (8 if sc.n_load else 0)
        body = int(s_uptime[k] * 1000).to_bytes(4, "little") + bytes(4) \
            + (lost_n & 0xFFFF).to_bytes(2, "little") \
            + bytes([int(40 + 10 * math.sin(k * 0.7 + tw.seed)), 0])
        status.append(frame(4, int(seq_s[k]), body))
    frames.append(status)
    hello = bytes([PROTO, *FW, N_CHANNELS, sc.n_load]) + FS.to_bytes(2, "little") \
        + (tw.load_rate_hz if sc.n_load else 0).to_bytes(2, "little") + bytes([10]) + tw.device_id
    out = [frame(1, 0, hello)]
    out += [frames[kinds[i]][index[i]] for i in order]
    return b"".join(out)


# -- truth and files ---------------------------------------------------------------------


def _rounded(x: Any) -> Any:
    if isinstance(x, float):
        return round(x, 6)
    if isinstance(x, dict):
        return {k: _rounded(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_rounded(v) for v in x]
    return x


def truth_of(sc: Scene) -> dict[str, Any]:
    """The truth file: events a detector is scored on, and what made them."""
    end = sc.duration
    late = {x["fid"] for x in sc.landings if x["t"] >= end}
    landings = [dict(x) for x in sc.landings if x["fid"] not in late]
    kds = [k for k in sc.knockdowns if k["fid"] not in late]
    causers = {k["by_fid"] for k in kds}
    for x in landings:
        x["caused_knockdown"] = x["fid"] in causers
    landings.sort(key=lambda x: x["t"])
    return _rounded({
        "format": TRUTH_FORMAT, "model": MODEL, "scenario": sc.scenario, "seed": sc.tw.seed,
        "duration_s": sc.duration, "cells": sc.tw.cells if sc.load else "none",
        "landings": landings, "knockdowns": kds,
        "removals": [x for x in sc.removals if x["t"] < end],
        "lifts": [x for x in sc.lifts if x["t"] < end],
        "closes": [x for x in sc.closes if x["t"] < end],
        "knocks": [x for x in sc.knocks if x["t"] < end],
        "pauses": [x for x in sc.pauses if x["t"] < end],
        "spills": [x for x in sc.spills if x["t"] < end],
        "talk": [list(x) for x in sc.talk], "hum_factor": sc.hum_factor,
        "damage": [], "n_load": sc.n_load, "load_messages": sc.load,
        "tower": sc.tw.figures(), "game": sc.game,
    })


def render(sc: Scene) -> tuple[bytes, dict[str, Any]]:
    """The scene's bytes and truth."""
    rng = np.random.default_rng([0xAF, sc.tw.seed, SCENARIOS.index(sc.scenario), 1])
    per = sc.tw.sets_per_msg
    n = int(round(sc.duration * FS)) // per * per
    codes = render_piezo(sc, rng, n)
    reads = None
    if sc.load:
        t_start = (per - 1) / FS + 2e-4  # the firmware reads its cells once the first PIEZO is out
        reads = render_load(sc, rng, n, t_start)
    return assemble(sc, codes, reads), truth_of(sc)


def make_recording(seed: int, scenario: str, duration: float, out: Path) -> tuple[Path, Path]:
    """Write ``<scenario>_t<seed>.bin`` and its ``.truth.json`` into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    raw, truth = render(simulate(seed, scenario, duration))
    bin_path = out / f"{scenario}_t{seed}.bin"
    truth_path = out / f"{scenario}_t{seed}.truth.json"
    bin_path.write_bytes(raw)
    truth_path.write_text(json.dumps(truth, indent=1))
    return bin_path, truth_path


def _job(args: tuple[int, str, float, str]) -> str:
    seed, scenario, duration, out = args
    return make_recording(seed, scenario, duration, Path(out))[0].name


def main(argv: list[str] | None = None) -> int:
    """Command line (the generators' common one, see tools/crosscheck/run_all.py)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--towers", type=int, default=8)
    p.add_argument("--first-seed", type=int, default=1)
    p.add_argument("--duration", type=float, default=120.0)
    p.add_argument("--scenarios", nargs="+", default=list(DEFAULT_SCENARIOS))
    p.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1))
    args = p.parse_args(argv)
    unknown = [s for s in args.scenarios if s not in SCENARIOS]
    if unknown:
        print(f"unknown scenario {unknown[0]!r} (known: {', '.join(SCENARIOS)})", file=sys.stderr)
        return 2
    if args.duration < QUIET_S + RELEASE_MARGIN_S + 1:
        print(f"--duration must be at least {QUIET_S + RELEASE_MARGIN_S + 1:g} s", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    jobs = [(seed, sc, args.duration, str(args.out))
            for seed in range(args.first_seed, args.first_seed + args.towers)
            for sc in args.scenarios]
    if args.workers <= 1:
        for job in jobs:
            _job(job)
    else:
        with ProcessPoolExecutor(max_workers=args.workers) as pool:
            list(pool.map(_job, jobs))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
