#!/usr/bin/env python3
"""Cross-check model S: the cardboard tower as one mechanical body, played by a family.

Writes recordings (contracts.md section 2) of simulated towers with their
ground truth (``towerear-crosscheck-truth/1``), written blind of the
project's detector and simulator. See README.md beside this file.

Usage::

    .venv/bin/python tools/crosscheck_s/make_recordings_s.py --out DIR --towers 8 \
        --first-seed 1 --duration 120 [--scenarios single rapid noisy game long damaged acoustic]
"""

from __future__ import annotations

import argparse
import json
import sys
import zlib
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from scipy import signal

FORMAT = "towerear-crosscheck-truth/1"
SCENARIOS = ("single", "rapid", "noisy", "game", "long", "damaged", "acoustic")
DEFAULT_SCENARIOS = ("single", "rapid", "noisy", "game")
COLOURS = ("yellow", "blue", "brown", "gray", "black", "white")
G = 9.81
J_REF = 5e-4  # N s: a 0.5 g cube landing after one module's fall, restitution ~0.3
MODULE_H = 0.031  # m, 25 cm tower / 8 boxes
FS_LOAD = 500.0  # Hz, the mechanical grid the load cells are simulated on
QUIET_S = 5.0  # nothing happens before this (the detector tares on an empty, quiet tower)

# ----------------------------------------------------------------------------- wire codec


def _crc_table() -> np.ndarray:
    table = np.zeros(256, np.uint32)
    for i in range(256):
        c = i << 8
        for _ in range(8):
            c = ((c << 1) ^ 0x1021) if c & 0x8000 else (c << 1)
        table[i] = c & 0xFFFF
    return table


CRC_TABLE = _crc_table()


def crc16_ccitt_false_reference(data: bytes) -> int:
    """CRC-16/CCITT-FALSE bit by bit (poly 0x1021, init 0xFFFF, no reflection)."""
    crc = 0xFFFF
    for b in data:
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) & 0xFFFF if crc & 0x8000 else (crc << 1) & 0xFFFF
    return crc


def crc16_ccitt_false(data: bytes) -> int:
    """CRC-16/CCITT-FALSE, table driven."""
    crc = 0xFFFF
    for b in data:
        crc = ((crc << 8) & 0xFFFF) ^ int(CRC_TABLE[((crc >> 8) ^ b) & 0xFF])
    return crc


def crc16_rows(rows: np.ndarray) -> np.ndarray:
    """The CRC of every row of a (R, m) uint8 array."""
    crc = np.full(rows.shape[0], 0xFFFF, np.uint32)
    for col in range(rows.shape[1]):
        crc = ((crc << 8) & 0xFFFF) ^ CRC_TABLE[((crc >> 8) ^ rows[:, col]) & 0xFF]
    return crc.astype(np.uint16)


def cobs_encode(data: bytes) -> bytes:
    """COBS without the trailing delimiter (a final full 254-byte block gets no extra code)."""
    out = bytearray([0])
    code_i, code = 0, 1
    for i, b in enumerate(data):
        if b == 0:
            out[code_i] = code
            code_i, code = len(out), 1
            out.append(0)
        else:
            out.append(b)
            code += 1
            if code == 0xFF and i + 1 < len(data):
                out[code_i] = code
                code_i, code = len(out), 1
                out.append(0)
    out[code_i] = code
    return bytes(out)


def cobs_encode_rows(rows: np.ndarray) -> np.ndarray:
    """COBS of every row of a (R, m <= 254) uint8 array, each followed by its 0x00."""
    n_rows, m = rows.shape
    ext = np.concatenate([rows, np.zeros((n_rows, 1), np.uint8)], axis=1)
    pos = np.where(ext == 0, np.arange(m + 1), m + 1)
    nz = np.minimum.accumulate(pos[:, ::-1], axis=1)[:, ::-1]
    out = np.zeros((n_rows, m + 2), np.uint8)
    out[:, 0] = nz[:, 0] + 1
    out[:, 1:m + 1] = np.where(rows == 0, nz[:, 1:] - np.arange(m), rows)
    return out


def frame(msg: bytes) -> bytes:
    """One message (type|seq|body) with its CRC, COBS-encoded and delimited."""
    return cobs_encode(msg + crc16_ccitt_false(msg).to_bytes(2, "little")) + b"\x00"


def cobs_decode_own(data: bytes) -> bytes | None:
    """Our own COBS decoder (None when the chunk is not valid COBS)."""
    out = bytearray()
    i = 0
    while i < len(data):
        code = data[i]
        if code == 0 or i + code > len(data):
            return None
        block = data[i + 1:i + code]
        if len(block) != code - 1 or 0 in block:
            return None
        out += block
        i += code
        if code < 0xFF and i < len(data):
            out.append(0)
    return bytes(out)


def decode_own(data: bytes) -> list[bytes]:
    """CRC-valid messages (type|seq|body) in a byte stream, resynchronising at every 0x00."""
    msgs = []
    for chunk in data.split(b"\x00"):
        if not chunk:
            continue
        msg = cobs_decode_own(chunk)
        if msg is None or len(msg) < 5:
            continue
        if crc16_ccitt_false(msg[:-2]) == int.from_bytes(msg[-2:], "little"):
            msgs.append(msg[:-2])
    return msgs


# ----------------------------------------------------------------------------- the tower


@dataclass
class Tower:
    """Every drawn parameter of one tower (cardboard, discs, cells, electronics)."""

    seed: int
    cells: str
    piezo_rate: int
    sets_per_frame: int
    load_rate_nominal: int
    chip_rate: np.ndarray  # true conversion rate per HX711
    load_rate_hello: int
    cpg: np.ndarray  # counts per gram, signed
    offset: np.ndarray  # counts of the empty plate
    noise_g: np.ndarray  # HX711 noise, grams rms
    share_wall: np.ndarray  # share the cell sees of a cube at the plate's rim
    creep_fast: np.ndarray  # fraction of a load change that creeps in over seconds
    creep_tau_fast: np.ndarray
    creep_slow: np.ndarray
    creep_tau_slow: np.ndarray
    humidity_pct: float  # share drift over a long session (+- this many %)
    zero_drift_g: np.ndarray  # zero drift amplitude (temperature), grams
    plate_hz: np.ndarray  # plate-on-cell mode
    plate_zeta: np.ndarray
    load_xt: float  # share of a strike's force reaching the next level's cell
    p_stop: np.ndarray  # chance a cube arriving on level k stops there (k>=1)
    p_clean_pass: float
    p_dwell: float
    p_knock: float
    restitution: float
    disc_sens: np.ndarray  # codes per J_REF at the struck disc
    loose_level: int  # -1: none
    rattle_hz: float
    bias: np.ndarray
    noise_codes: np.ndarray
    clip_hi: int
    mains_hz: float
    hum_codes: np.ndarray
    float_when_lifted: bool
    static_codes_per_g: np.ndarray  # disc response to slow forces (AC coupled)
    xt_down_db: float
    xt_up_db: float
    xt_fc0: float
    xt_ratio: float
    cube_g: float
    colour_factor: dict[str, float]
    fw: tuple[int, int, int]
    device_id: bytes
    kern_hard: np.ndarray = field(repr=False)  # (8 struck, 8 discs, L) codes per J_REF
    kern_soft: np.ndarray = field(repr=False)
    kern_table: np.ndarray = field(repr=False)  # (8, L) codes per unit knock
    kern_load: np.ndarray = field(repr=False)  # (8, Ll) grams per J_REF on the struck cell
    params: dict[str, Any] = field(repr=False)

    def as_json(self) -> dict[str, Any]:
        return self.params


def _lu(rng: np.random.Generator, lo: float, hi: float, n: int | None = None) -> Any:
    return rng.uniform(lo, hi, n)


def make_tower(seed: int) -> Tower:
    """Draw one tower's cardboard, discs, cells and electronics from ``seed``."""
    rng = np.random.default_rng([seed, 0x5157])
    cells = "matched" if rng.random() < 0.6 else "mixed"
    piezo_rate = 2000 if rng.random() < 0.75 else 1500
    sets_per_frame = int(rng.integers(4, 15))
    load_nom = 80 if rng.random() < 0.8 else 10
    kit = _lu(rng, 0.97, 1.08)
    chip_rate = load_nom * kit * (1 + rng.uniform(-0.006, 0.006, 8))
    load_rate_hello = int(round(chip_rate.max()))
    if cells == "matched":
        rated = _lu(rng, 0.6, 1.0) * (1 + rng.uniform(-0.03, 0.03, 8))
        sign = np.full(8, -1.0 if rng.random() < 0.25 else 1.0)
    else:
        rated = rng.uniform(0.45, 1.4, 8)
        sign = np.where(rng.random(8) < 0.3, -1.0, 1.0)
    cpg = sign * rated * 21475.0
    offset = np.round(rng.uniform(-2.2e5, 2.2e5, 8) + cpg * rng.uniform(5, 14, 8))
    noise_g = rng.uniform(0.004, 0.014, 8) * (0.5 if load_nom == 10 else 1.0)
    if rng.random() < 0.25:
        noise_g[rng.integers(8)] *= _lu(rng, 3, 7)
    share_wall = rng.uniform(0.4, 0.72, 8)
    creep_fast = rng.uniform(-0.03, 0.08, 8)
    creep_tau_fast = rng.uniform(0.8, 4.0, 8)
    creep_slow = rng.uniform(0.0, 0.03, 8)
    creep_tau_slow = rng.uniform(60, 400, 8)
    # where cubes stop: small holes stop more; the holes are not aligned
    base = np.array([1.0, 0.5, 0.38, 0.32, 0.28, 0.25, 0.22, 0.2])
    odds = base / (1 - base + 1e-9) * np.exp(rng.normal(0, 0.3, 8))
    p_stop = odds / (1 + odds)
    p_stop[0] = 1.0
    fs = piezo_rate
    kern_len = int(0.25 * fs)
    t = np.arange(kern_len) / fs
    f1 = rng.uniform(90, 260, 8)
    tau1 = rng.uniform(0.006, 0.018, 8)
    f2 = f1 * rng.uniform(1.8, 2.7, 8)
    tau2 = tau1 * rng.uniform(0.4, 0.7, 8)
    w2 = rng.uniform(0.3, 0.8, 8)
    f_thud = rng.uniform(35, 70, 8)
    tau_thud = rng.uniform(0.010, 0.030, 8)
    w_thud = rng.uniform(0.4, 1.0, 8)
    f3 = np.minimum(rng.uniform(500, 900, 8), 0.42 * fs)
    tau3 = rng.uniform(0.001, 0.003, 8)
    w3 = rng.uniform(0.2, 0.6, 8)

    def mode(f: float, tau: float) -> np.ndarray:
        return np.asarray(np.exp(-t / tau) * np.sin(2 * np.pi * f * t))

    disc_gain = np.exp(rng.normal(0, 0.3, 8))
    sens = rng.uniform(70, 200) * disc_gain
    loose = int(rng.integers(8)) if rng.random() < 0.35 else -1
    if loose >= 0:
        sens[loose] *= _lu(rng, 0.15, 0.4)
    xt_down_db = _lu(rng, -8.0, -3.0)
    xt_up_db = _lu(rng, -10.0, -4.0)
    xt_fc0 = _lu(rng, 250, 500)
    xt_ratio = _lu(rng, 0.6, 0.8)
    delay_per_level = _lu(rng, 0.00015, 0.0004)
    couple_own = rng.uniform(0.3, 0.7, 8)
    kern_hard = np.zeros((8, 8, kern_len))
    kern_soft = np.zeros((8, 8, kern_len))
    for j in range(8):
        m1, m2 = mode(f1[j], tau1[j]), w2[j] * mode(f2[j], tau2[j])
        thud = w_thud[j] * mode(f_thud[j], tau_thud[j])
        hard = m1 + m2 + w3[j] * mode(f3[j], tau3[j]) + 0.5 * thud
        soft = thud + m1 + 0.5 * m2
        hard /= np.abs(hard).max()
        soft /= np.abs(soft).max()
        for i in range(8):
            d = i - j
            for src, dst in ((hard, kern_hard), (soft, kern_soft)):
                if d == 0:
                    y = src
                else:
                    att = 10 ** (((xt_up_db if d > 0 else xt_down_db) * abs(d)) / 20)
                    fc = min(xt_fc0 * xt_ratio ** (abs(d) - 1), 0.45 * fs)
                    b, a = signal.butter(2, fc / (fs / 2))
                    lp = signal.lfilter(b, a, src)
                    # the receiving plate rings at its own fundamental
                    r = np.exp(-1 / (tau1[i] * fs))
                    w = 2 * np.pi * f1[i] / fs
                    own = signal.lfilter([1 - r], [1, -2 * r * np.cos(w), r * r], lp)
                    own *= np.abs(lp).max() / max(np.abs(own).max(), 1e-12)
                    y = att * ((1 - couple_own[i]) * lp + couple_own[i] * own)
                    shift = int(round(abs(d) * delay_per_level * fs))
                    y = np.concatenate([np.zeros(shift), y[:kern_len - shift]])
                dst[j, i] = y * sens[i]
    # table knock: strongest at the base, damped upwards through the stack
    f_tab = _lu(rng, 25, 60)
    tab = np.exp(-t / _lu(rng, 0.02, 0.05)) * np.sin(2 * np.pi * f_tab * t)
    tab += 0.4 * np.exp(-t / 0.004) * np.sin(2 * np.pi * _lu(rng, 150, 300) * t)
    tab /= np.abs(tab).max()
    up_db = _lu(rng, -3.5, -1.5)
    kern_table = np.array([tab * _lu(rng, 80, 250) * disc_gain[i] * 10 ** (up_db * i / 20)
                           * (0.3 if i == loose else 1.0) for i in range(8)])
    plate_hz = rng.uniform(40, 110, 8)
    plate_zeta = rng.uniform(0.1, 0.3, 8)
    tl = np.arange(int(0.3 * FS_LOAD)) / FS_LOAD
    kern_load = np.zeros((8, len(tl)))
    for j in range(8):
        w = 2 * np.pi * plate_hz[j]
        wd = w * np.sqrt(1 - plate_zeta[j] ** 2)
        kern_load[j] = J_REF * w * w / wd * np.exp(-plate_zeta[j] * w * tl) * np.sin(wd * tl) \
            / (G * 1e-3)
    bias = np.round(512 + rng.uniform(-10, 10, 8))
    noise_codes = rng.uniform(0.4, 1.3, 8)
    clip_hi = int(rng.integers(1000, 1024))
    mains_hz = 50.0 if rng.random() < 0.7 else 60.0
    hum_codes = rng.uniform(0.3, 1.5, 8) * np.linspace(1.0, _lu(rng, 1.0, 1.8), 8)
    cube_g = _lu(rng, 0.3, 0.8)
    colour_factor = {c: float(_lu(rng, 0.96, 1.04)) for c in (*COLOURS, "red")}
    fw = (1, int(rng.integers(0, 5)), int(rng.integers(0, 10)))
    device_id = rng.integers(0, 256, 8).astype(np.uint8).tobytes()
    p_clean_pass = _lu(rng, 0.15, 0.35)
    p_dwell = _lu(rng, 0.0, 0.05)
    p_knock = _lu(rng, 0.08, 0.2)
    restitution = _lu(rng, 0.15, 0.35)
    params = {
        "seed": seed, "cells": cells, "piezo_rate_hz": piezo_rate,
        "sets_per_frame": sets_per_frame, "load_rate_nominal": load_nom,
        "chip_rate": chip_rate.round(4).tolist(), "load_rate_hello": load_rate_hello,
        "cpg": cpg.round(2).tolist(), "offset": offset.tolist(),
        "noise_g": noise_g.round(5).tolist(), "share_wall": share_wall.round(3).tolist(),
        "creep_fast": creep_fast.round(4).tolist(),
        "creep_tau_fast_s": creep_tau_fast.round(3).tolist(),
        "creep_slow": creep_slow.round(4).tolist(),
        "creep_tau_slow_s": creep_tau_slow.round(1).tolist(),
        "p_stop": p_stop.round(3).tolist(), "p_clean_pass": round(p_clean_pass, 3),
        "p_dwell": round(p_dwell, 3), "p_knock": round(p_knock, 3),
        "restitution": round(restitution, 3), "disc_sens": sens.round(1).tolist(),
        "loose_level": loose, "plate_modes_hz": [f1.round(1).tolist(), f2.round(1).tolist()],
        "thud_hz": f_thud.round(1).tolist(), "xt_down_db_per_level": round(xt_down_db, 2),
        "xt_up_db_per_level": round(xt_up_db, 2), "xt_lowpass_hz": round(xt_fc0, 1),
        "xt_lowpass_ratio_per_level": round(xt_ratio, 3), "plate_on_cell_hz":
            plate_hz.round(1).tolist(), "bias": bias.tolist(), "mains_hz": mains_hz,
        "cube_g": round(cube_g, 4), "fw": list(fw), "device_id": device_id.hex(),
    }
    return Tower(
        seed=seed, cells=cells, piezo_rate=piezo_rate, sets_per_frame=sets_per_frame,
        load_rate_nominal=load_nom, chip_rate=chip_rate, load_rate_hello=load_rate_hello,
        cpg=cpg, offset=offset, noise_g=noise_g, share_wall=share_wall,
        creep_fast=creep_fast, creep_tau_fast=creep_tau_fast, creep_slow=creep_slow,
        creep_tau_slow=creep_tau_slow, humidity_pct=float(_lu(rng, 0.5, 3.0)),
        zero_drift_g=rng.uniform(0.01, 0.08, 8), plate_hz=plate_hz, plate_zeta=plate_zeta,
        load_xt=float(_lu(rng, 0.05, 0.2)), p_stop=p_stop, p_clean_pass=float(p_clean_pass),
        p_dwell=float(p_dwell), p_knock=float(p_knock), restitution=float(restitution),
        disc_sens=sens, loose_level=loose, rattle_hz=float(_lu(rng, 300, 0.45 * fs)),
        bias=bias, noise_codes=noise_codes, clip_hi=clip_hi, mains_hz=mains_hz,
        hum_codes=hum_codes, float_when_lifted=bool(rng.random() < 0.6),
        static_codes_per_g=rng.uniform(1.0, 3.0, 8), xt_down_db=float(xt_down_db),
        xt_up_db=float(xt_up_db), xt_fc0=float(xt_fc0), xt_ratio=float(xt_ratio),
        cube_g=float(cube_g), colour_factor=colour_factor, fw=fw, device_id=device_id,
        kern_hard=kern_hard, kern_soft=kern_soft, kern_table=kern_table,
        kern_load=kern_load, params=params,
    )


# ----------------------------------------------------------------------------- the scene


@dataclass
class Cube:
    """One wooden cube: a thrown-back cube keeps its id and mass."""

    id: int
    colour: str
    mass_g: float


@dataclass
class Resting:
    cube: Cube
    floor: int
    r: float  # 0 at the hole's edge, 1 at the wall
    share: float
    t_rest: float
    landing: int  # index into Scene.landings (unsorted)


@dataclass
class Scene:
    """What happened in front of the tower, in stream seconds."""

    tower: Tower
    scenario: str
    duration: float
    landings: list[dict[str, Any]] = field(default_factory=list)
    knockdowns: list[dict[str, Any]] = field(default_factory=list)
    removals: list[dict[str, Any]] = field(default_factory=list)
    lifts: list[dict[str, Any]] = field(default_factory=list)
    closes: list[dict[str, Any]] = field(default_factory=list)
    knocks: list[dict[str, Any]] = field(default_factory=list)
    room: list[dict[str, Any]] = field(default_factory=list)
    nudges: list[dict[str, Any]] = field(default_factory=list)
    impacts: list[tuple[float, int, float, float]] = field(default_factory=list)
    load_changes: list[tuple[float, int, float]] = field(default_factory=list)
    forces: list[dict[str, Any]] = field(default_factory=list)
    open_spans: list[tuple[float, float, int]] = field(default_factory=list)
    games: list[dict[str, Any]] = field(default_factory=list)
    resting: list[Resting] = field(default_factory=list)
    n_cubes: int = 0


class Family:
    """The players: adults throw gently, children hard and sometimes two at once."""

    def __init__(self, rng: np.random.Generator, n: int) -> None:
        self.colours = [str(c) for c in rng.permutation(COLOURS)[:n]]
        self.child = {c: bool(rng.random() < 0.45) for c in self.colours}


class World:
    """Drops cubes through the tower and keeps the scene."""

    def __init__(self, tower: Tower, scene: Scene, rng: np.random.Generator) -> None:
        self.tw, self.sc, self.rng = tower, scene, rng

    def new_cube(self, colour: str) -> Cube:
        self.sc.n_cubes += 1
        m = self.tw.cube_g * self.tw.colour_factor[colour] * float(
            np.clip(self.rng.normal(1, 0.03), 0.92, 1.08))
        return Cube(self.sc.n_cubes, colour, m)

    def _fall(self, v: float, h: float) -> tuple[float, float]:
        dt = (-v + np.sqrt(v * v + 2 * G * h)) / G
        return float(dt), v + G * float(dt)

    def throw(self, cube: Cube, t_throw: float, v0: float, style: str) -> int:
        """A cube let go at the top hole; returns its landing index."""
        return self._drop(cube, t_throw, v0, 7, style, None, depth=0)

    def _drop(self, cube: Cube, t0: float, v: float, level: int, style: str,
              knocked_from: int | None, depth: int) -> int:
        tw, rng, sc = self.tw, self.rng, self.sc
        t, first, paused = t0, None, []
        knocked_one = False
        idx = len(sc.landings)
        sc.landings.append({})  # reserved: knock-downs below refer to it
        while True:
            dt, v = self._fall(v, MODULE_H)
            t += dt
            p = tw.p_stop[level] * (1 - 0.15 * min(1.0, max(0.0, (v - 1.0) / 2.0)))
            if level == 0 or rng.random() < p:
                break
            if rng.random() < tw.p_clean_pass:
                if rng.random() < 0.5:  # grazes the hole's edge
                    self._impact(t, level, cube.mass_g * 1e-3 * v * rng.uniform(0.05, 0.2), 0.8)
                    first = t if first is None else first
                level -= 1
                continue
            j = cube.mass_g * 1e-3 * v * (1 + tw.restitution) * rng.uniform(0.3, 0.8)
            self._impact(t, level, j, 0.7)
            first = t if first is None else first
            if not knocked_one and depth < 2:
                knocked_one = self._maybe_knock(t, level, idx, 0.3 * tw.p_knock / 2 ** depth,
                                                depth)
            v *= rng.uniform(0.2, 0.5)
            if rng.random() < tw.p_dwell:  # rests a moment on the rim, then tips in
                dwell = rng.uniform(0.1, 0.4)
                share = 1 - (1 - tw.share_wall[level]) * 0.04
                sc.load_changes.append((t + 0.02, level, share * cube.mass_g))
                sc.load_changes.append((t + dwell, level, -share * cube.mass_g))
                paused.append(level)
                t += dwell
                v = 0.05
            level -= 1
        # landing strike, bounces and the tumble
        j = cube.mass_g * 1e-3 * v * (1 + tw.restitution)
        self._impact(t, level, j, 1.0 if v > 1.2 else 0.5)
        first = t if first is None else first
        if not knocked_one and depth < 2:
            knocked_one = self._maybe_knock(t, level, idx, tw.p_knock / 2 ** depth, depth)
        vb = v * tw.restitution
        for _ in range(int(rng.integers(1, 4))):
            t += 2 * vb / G
            self._impact(t, level, cube.mass_g * 1e-3 * vb * (1 + tw.restitution), 0.3)
            vb *= tw.restitution
        slide = rng.uniform(0.05, 0.5)
        for tc in np.sort(rng.uniform(0, slide, int(rng.integers(0, 5)))):
            self._impact(t + tc, level, cube.mass_g * 1e-3 * rng.uniform(0.02, 0.08), 0.2)
        t += slide
        r = float(np.clip(rng.beta(2.0, 1.5), 0.05, 1.0))
        share = float(1 - (1 - tw.share_wall[level]) * r ** 2)
        self._nudge(t, level)
        sc.load_changes.append((t, level, share * cube.mass_g))
        sc.landings[idx] = {
            "t": round(t, 4), "t_first_impact": round(first, 4), "t_throw": round(t0, 4),
            "floor": level, "cubes": 1, "knocked": knocked_from is not None,
            **({"from_floor": knocked_from} if knocked_from is not None else {}),
            "caused_knockdown": knocked_one, "mass_g": round(cube.mass_g, 5),
            "share": round(share, 4), "seen_g": round(share * cube.mass_g, 5),
            "style": style, "colour": cube.colour, "cube": cube.id, "paused": paused,
        }
        sc.resting.append(Resting(cube, level, r, share, t, idx))
        return idx

    def _impact(self, t: float, level: int, j: float, hardness: float) -> None:
        self.sc.impacts.append((t, level, j, hardness))

    def _maybe_knock(self, t: float, level: int, by: int, p: float, depth: int) -> bool:
        if level == 0:
            return False
        cands = [c for c in self.sc.resting if c.floor == level and c.t_rest < t - 0.05]
        if not cands:
            return False
        w = np.array([(1 - c.r) ** 2 for c in cands])
        if self.rng.random() > min(0.35, p * min(1.0, float(w.sum()))):
            return False
        victim = cands[int(self.rng.choice(len(cands), p=w / w.sum()))]
        self.sc.resting.remove(victim)
        self.sc.load_changes.append((t + 0.01, level, -victim.share * victim.cube.mass_g))
        kd = {"t": round(t, 4), "from_floor": level, "by": by}
        self.sc.knockdowns.append(kd)
        land = self._drop(victim.cube, t + 0.02, self.rng.uniform(0.05, 0.3), level - 1,
                          "knocked", level, depth + 1)
        kd["landing"] = land
        kd["to_floor"] = self.sc.landings[land]["floor"]
        self.sc.landings[land]["t_first_impact"] = round(t, 4)
        self.sc.landings[land]["t_throw"] = round(t, 4)
        return True

    def _nudge(self, t: float, level: int) -> None:
        """A landing cube pushes a resting one: the cell sees a little more or less."""
        cands = [c for c in self.sc.resting if c.floor == level and c.t_rest < t - 0.05]
        if not cands or self.rng.random() > 0.15:
            return
        c = cands[int(self.rng.integers(len(cands)))]
        r = float(np.clip(c.r + self.rng.normal(0, 0.2), 0.05, 1.0))
        share = float(1 - (1 - self.tw.share_wall[level]) * r ** 2)
        dg = (share - c.share) * c.cube.mass_g
        c.r, c.share = r, share
        self.sc.load_changes.append((t, level, dg))
        self.sc.nudges.append({"t": round(t, 4), "floor": level, "cube": c.cube.id,
                               "delta_g": round(dg, 5)})

    def on_floor(self, k: int) -> list[Resting]:
        return sorted((c for c in self.sc.resting if c.floor == k), key=lambda c: c.r)

    # --- hands, lifts, room -------------------------------------------------------------

    def force(self, t0: float, t1: float, levels: dict[int, float], kind: str,
              tremor_hz: float | None = None) -> None:
        self.sc.forces.append({"t0": t0, "t1": t1, "levels": levels, "kind": kind,
                               "tremor_hz": tremor_hz or float(self.rng.uniform(1, 4))})

    def steady(self, t: float, dur: float) -> None:
        """A hand steadies the tower: force through the walls, some of it on every plate."""
        amp = self.rng.uniform(0.05, 0.6)
        self.force(t, t + dur, {k: amp * (0.4 + 0.6 * k / 7) * (1 - self.tw.share_wall[k])
                                for k in range(8)}, "steady")
        self.sc.room.append({"kind": "steady", "t": round(t, 3), "t_end": round(t + dur, 3)})

    def knock(self, t: float, strength: float) -> None:
        self.sc.knocks.append({"t": round(t, 4), "strength": round(strength, 3)})

    def lift_and_clear(self, t: float, k: int, take: bool = True,
                       keep_colours: tuple[str, ...] = ()) -> tuple[float, list[Cube], list[Cube]]:
        """Lift modules k..7, take the cubes off level k, close. Returns (t, in hand, kept)."""
        rng, sc = self.rng, self.sc
        self.force(t - 0.6, t + 0.3, {i: rng.uniform(0.3, 1.5) for i in range(8)}, "grip")
        sc.lifts.append({"t": round(t, 4), "exposed": k})
        t_close = t + rng.uniform(2.0, 4.5)
        t_cur = t + rng.uniform(1.2, 2.5)
        hand: list[Cube] = []
        kept: list[Cube] = []
        cubes = self.on_floor(k) if take else []
        # the hand holding the lower floors while the top is off
        self.force(t, t_close, {i: rng.uniform(0.02, 0.12) for i in range(k + 1)}, "hold")
        while cubes:
            n = 2 if len(cubes) >= 2 and rng.random() < 0.3 else 1
            grab, cubes = cubes[:n], cubes[n:]
            t_touch = t_cur
            t_off = t_touch + rng.uniform(0.25, 0.6)
            t_untouch = t_off + rng.uniform(0.05, 0.25)
            self.force(t_touch, t_untouch, {k: rng.uniform(0.5, 3.0)}, "finger", 6.0)
            for c in grab:
                sc.resting.remove(c)
                sc.load_changes.append((t_off, k, -c.share * c.cube.mass_g))
                (kept if c.cube.colour in keep_colours else hand).append(c.cube)
            sc.removals.append({
                "t": round(t_off, 4), "floor": k, "cubes": n,
                "mass_g": round(sum(c.cube.mass_g for c in grab), 5),
                "seen_g": round(sum(c.share * c.cube.mass_g for c in grab), 5),
                "t_touch": round(t_touch, 4), "t_untouch": round(t_untouch, 4),
                "cube_ids": [c.cube.id for c in grab], "colours": [c.cube.colour for c in grab],
            })
            t_cur = t_untouch + rng.uniform(0.9, 2.0)
        t_close = max(t_close, t_cur + rng.uniform(0.5, 1.5))
        sc.closes.append({"t": round(t_close, 4), "exposed": k})
        sc.open_spans.append((t, t_close, k))
        # setting the modules down: a thump on the connected levels, plates re-seat
        self._impact(t_close, min(k + 1, 7), rng.uniform(2, 5) * J_REF, 0.2)
        for i in range(8):
            sc.load_changes.append((t_close + 0.05, i, float(rng.normal(0, 0.006))))
        self.force(t_close - 0.3, t_close + 0.4, {i: rng.uniform(0.2, 1.0) for i in range(8)},
                   "settle")
        return t_close, hand, kept


def _throw_speed(rng: np.random.Generator, child: bool) -> tuple[float, str]:
    if child:
        return float(rng.uniform(0.8, 2.5)), "hard"
    return float(rng.uniform(0.0, 0.6)), "gentle"


def _room_noise(w: World, duration: float, level: float) -> None:
    """Talk, a dog, chairs and knocks on the table, at ``level`` (0 quiet .. 1 noisy)."""
    rng, sc = w.rng, w.sc
    t = QUIET_S + rng.uniform(0, 3)
    while t < duration - 2:
        kind = rng.choice(["talk", "bark", "chair", "knock"], p=[0.5, 0.15, 0.15, 0.2])
        if kind == "talk":
            dur = rng.uniform(1.0, 6.0)
            sc.room.append({"kind": "talk", "t": round(t, 3), "t_end": round(t + dur, 3),
                            "codes": round(float(rng.uniform(0.5, 4.0) * level), 3)})
        elif kind == "bark":
            n = int(rng.integers(1, 5))
            sc.room.append({"kind": "bark", "t": round(t, 3), "n": n,
                            "t_end": round(t + 0.45 * n, 3),
                            "codes": round(float(rng.uniform(3, 15) * level), 3)})
        elif kind == "chair":
            dur = rng.uniform(0.4, 1.5)
            sc.room.append({"kind": "chair", "t": round(t, 3), "t_end": round(t + dur, 3),
                            "codes": round(float(rng.uniform(2, 10) * level), 3)})
            w.force(t, t + dur, {i: rng.uniform(0.0, 0.1) for i in range(8)}, "chair", 12.0)
        elif t < duration - 3:
            w.knock(t, float(rng.uniform(0.3, 1.0)))
        t += rng.exponential(8.0 / max(level, 0.2)) + 0.5


def _clear_of(sc: Scene, t: float, gap: float) -> bool:
    return all(abs(k["t"] - t) > gap for k in sc.knocks)


def _single(w: World, fam: Family, duration: float, gap: tuple[float, float]) -> None:
    rng = w.rng
    t = QUIET_S + rng.uniform(0, 1)
    i = 0
    while t < duration - 3.5:
        colour = fam.colours[i % len(fam.colours)]
        if _clear_of(w.sc, t, 2.5):
            v, style = _throw_speed(rng, fam.child[colour])
            w.throw(w.new_cube(colour), t, v, style)
            if rng.random() < 0.08:
                w.steady(t + rng.uniform(-1.5, 0.5), rng.uniform(0.5, 2.5))
        i += 1
        t += rng.uniform(*gap)


def _rapid(w: World, fam: Family, duration: float) -> None:
    rng = w.rng
    t = QUIET_S + rng.uniform(0, 1)
    while t < duration - 6:
        colour = fam.colours[int(rng.integers(len(fam.colours)))]
        child = fam.child[colour]
        for _ in range(int(rng.integers(2, 6))):
            v, style = _throw_speed(rng, child)
            w.throw(w.new_cube(colour), t, v, style)
            if child and rng.random() < 0.15:  # two at once
                v2, _ = _throw_speed(rng, child)
                w.throw(w.new_cube(colour), t + rng.uniform(0.0, 0.04), v2, "double")
            t += rng.uniform(0.3, 0.8)
            if t > duration - 4:
                break
        t += rng.uniform(3.0, 6.0)


class Game:
    """Mord im Arosa by the rules (rules/004), as far as the time allows."""

    def __init__(self, w: World, fam: Family, t: float, until: float) -> None:
        self.w, self.fam, self.t, self.until = w, fam, t, until
        self.players = fam.colours
        self.supply = {c: 20 for c in self.players}
        self.sheet = {c: [0] * 8 for c in self.players}
        self.crime: list[int] = []
        self.victims_found = 0
        self.phase = "prologue"
        self.log: list[dict[str, Any]] = []
        self.over = False
        self.out_of_time = False
        self.in_hand: list[int] = []  # cubes taken out and never thrown back (time ran out)

    def _throw(self, cube: Cube, child: bool, gap: float) -> None:
        rng = self.w.rng
        if self.t + gap > self.until - 3.0:
            self.out_of_time = True
            self.in_hand.append(cube.id)
            return
        self.t += gap
        v, style = _throw_speed(rng, child)
        if child and style == "hard" and gap < 0.05:
            style = "double"
        land = self.w.throw(cube, self.t, v, style)
        self.log.append({"do": "throw", "color": cube.colour,
                         "floor": self.w.sc.landings[land]["floor"], "t": round(self.t, 3)})

    def _from_supply(self, colour: str) -> Cube | None:
        if self.supply[colour] <= 0:
            return None
        self.supply[colour] -= 1
        return self.w.new_cube(colour)

    def _check_end(self) -> bool:
        if any(sum(s) >= 10 for s in self.sheet.values()) or \
                any(n <= 0 for n in self.supply.values()):
            self.over, self.phase = True, "over"
        return self.over

    def _pair_gap(self, child: bool) -> float:
        return float(self.w.rng.uniform(0.3, 0.8) if child else self.w.rng.uniform(0.6, 1.6))

    def play(self) -> None:
        rng = self.w.rng
        victim_thrower = self.players[int(rng.integers(len(self.players)))]
        child = self.fam.child[victim_thrower]
        for i in range(2):
            self._throw(self.w.new_cube("red"), child,
                        rng.uniform(0.5, 1.5) if i == 0 else self._pair_gap(child))
        for p in self.players:
            ch = self.fam.child[p]
            for i in range(2):
                if self.t + 5 > self.until:
                    self.out_of_time = True
                    return
                cube = self._from_supply(p)
                if cube is None:
                    return
                if i == 1 and ch and rng.random() < 0.15:
                    self._throw(cube, ch, float(rng.uniform(0.0, 0.04)))  # two at once
                else:
                    self._throw(cube, ch, rng.uniform(2.0, 4.0) if i == 0
                                else self._pair_gap(ch))
        self.phase = "act1"
        turn = 0
        while not self.over:
            me = self.players[turn % len(self.players)]
            turn += 1
            pause = rng.uniform(2.0, 5.0)
            k = int(rng.choice(8, p=np.array([0.4, 1, 1, 1, 1, 1, 1, 0.8]) / 7.2))
            red = [c.floor for c in self.w.sc.resting if c.cube.colour == "red"]
            if self.phase == "act1" and red and rng.random() < 0.35:  # someone heard it land
                k = int(rng.choice(red))
            n_there = len(self.w.on_floor(k))
            if self.t + pause + 12 + 4.5 * n_there > self.until:
                self.out_of_time = True
                break
            self.t += pause
            if rng.random() < 0.3:
                self.w.steady(self.t - rng.uniform(0.5, 1.5), rng.uniform(0.5, 2.0))
            if self.phase == "act1":
                turn = self._inspect(me, k, turn)
            else:
                self._act2(me, k)

    def _reveal(self, k: int, action: dict[str, Any]) -> tuple[list[Cube], list[Cube]]:
        self.log.append({**action, "t": round(self.t, 3)})
        t_close, hand, kept = self.w.lift_and_clear(
            self.t, k, keep_colours=("red",) if self.phase == "act1" else ())
        self.t = t_close
        return hand, kept

    def _throw_back(self, me: str, hand: list[Cube]) -> None:
        child = self.fam.child[me]
        rng = self.w.rng
        for i, cube in enumerate(hand):
            if self.over:
                self.in_hand.append(cube.id)
                continue
            self._throw(cube, child, rng.uniform(1.0, 2.0) if i == 0 else self._pair_gap(child))

    def _penalty(self, me: str, n: int) -> None:
        for _ in range(n):
            if self._check_end():
                return
            cube = self._from_supply(me)
            if cube is None:
                self._check_end()
                return
            self._throw(cube, self.fam.child[me], self.w.rng.uniform(1.0, 2.5))
            self._check_end()

    def _counts(self, k: int) -> dict[str, int]:
        counts = {p: 0 for p in self.players}
        for c in self.w.on_floor(k):
            if c.cube.colour in counts:
                counts[c.cube.colour] += 1
        return counts

    def _inspect(self, me: str, k: int, turn: int) -> int:
        counts = self._counts(k)
        hand, kept = self._reveal(k, {"do": "inspect", "by": me, "floor": k})
        if kept:  # victims found: a crime scene; the caught players pay onto the sheet
            self.crime.append(k)
            self.victims_found += len(kept)
            for p in self.players:
                if p != me:
                    n = min(counts[p], self.supply[p])
                    self.supply[p] -= n
                    self.sheet[p][k] += n
            if self._check_end():
                self.in_hand += [c.id for c in hand]
                return turn
            self._throw_back(me, hand)
            if self.victims_found >= 2:
                self.phase = "act2"
                return self.players.index(me) + 1
        else:
            self._throw_back(me, hand)
            self._penalty(me, 1)
        self._check_end()
        return turn

    def _act2(self, me: str, k: int) -> None:
        rng = self.w.rng
        counts = self._counts(k)
        if rng.random() < 0.6:
            others = [p for p in self.players if p != me]
            n_sus = int(rng.integers(1, min(2, len(others)) + 1))
            sus = [str(p) for p in rng.permutation(others)[:n_sus]]
            hand, _ = self._reveal(k, {"do": "suspect", "by": me, "suspects": sus, "floor": k})
            if k == 0 and counts[me] == 0:
                self._throw_back(me, hand)
                self._penalty(me, len(sus))
                return
            wrong = 0
            for p in sus:
                n = min(counts[p], self.supply[p])
                self.supply[p] -= n
                self.sheet[p][k] += n
                wrong += counts[p] == 0
            if self._check_end():
                self.in_hand += [c.id for c in hand]
                return
            self._throw_back(me, hand)
            self._penalty(me, wrong)
        else:
            n = min(counts[me], self.sheet[me][k])
            hand, _ = self._reveal(k, {"do": "cover", "by": me, "floor": k, "remove": n})
            self.sheet[me][k] -= n
            self.supply[me] += n
            self._throw_back(me, hand)
            if counts[me] == 0:
                self._penalty(me, 1)
        self._check_end()

    def as_json(self) -> dict[str, Any]:
        return {"players": self.players, "children": [p for p in self.players
                                                      if self.fam.child[p]],
                "phase": self.phase, "crime_scenes": sorted(set(self.crime)),
                "victims_found": self.victims_found, "supply": self.supply,
                "sheet": self.sheet, "out_of_time": self.out_of_time,
                "never_thrown_back": self.in_hand, "log": self.log}


def _games(w: World, duration: float, long_pauses: bool) -> None:
    rng = w.rng
    t = QUIET_S + rng.uniform(0, 1)
    while t + (10 if not w.sc.games else 30) < duration:
        fam = Family(rng, int(rng.integers(3, 6)))
        g = Game(w, fam, t, duration - 2)
        g.play()
        w.sc.games.append(g.as_json())
        t = g.t + rng.uniform(4, 10)
        if not long_pauses:
            break
        # clear the tower for the next game, from the top down
        for k in range(7, -1, -1):
            if w.on_floor(k) and t + 8 + 3.5 * len(w.on_floor(k)) < duration - 2:
                t, _, _ = w.lift_and_clear(t, k)
                t += rng.uniform(2, 5)
        t += rng.uniform(10, 60)


def build_scene(tower: Tower, scenario: str, duration: float, seed: int) -> Scene:
    """What happens in front of the tower in one session (no bytes yet)."""
    base = "game" if scenario in ("damaged", "damagedclean", "acoustic") else scenario
    # each family its own scene (a damaged recording and its clean twin share theirs)
    rng = np.random.default_rng([seed, zlib.crc32(scenario.encode()), 0x5C])
    sc = Scene(tower, scenario, duration)
    w = World(tower, sc, rng)
    fam = Family(rng, int(rng.integers(2, 6)))
    if base == "single":
        _room_noise(w, duration, 0.15)
        sc.knocks.clear()
        _single(w, fam, duration, (3.0, 7.0))
    elif base == "rapid":
        _room_noise(w, duration, 0.2)
        sc.knocks.clear()
        _rapid(w, fam, duration)
    elif base == "noisy":
        _room_noise(w, duration, 1.0)
        _single(w, fam, duration, (3.0, 8.0))
    elif base == "game":
        _room_noise(w, duration, 0.4)
        sc.knocks[:] = sc.knocks[:2]
        _games(w, duration, False)
    elif base == "long":
        _room_noise(w, duration, 0.3)
        _games(w, duration, True)
    else:
        raise ValueError(f"unknown scenario {scenario!r}")
    if not sc.landings:  # every session has at least one throw
        w.throw(w.new_cube(fam.colours[0]), QUIET_S + 1.0, 0.3, "gentle")
    return sc


# ----------------------------------------------------------------------------- rendering


def _band_noise(rng: np.random.Generator, n: int, lo: float, hi: float, fs: float) -> np.ndarray:
    b, a = signal.butter(2, [lo / (fs / 2), min(hi / (fs / 2), 0.95)], btype="band")
    x = signal.lfilter(b, a, rng.standard_normal(n))
    return np.asarray(x / max(np.std(x), 1e-9))


def _force_profile(f: dict[str, Any], fs: float, rng: np.random.Generator) -> np.ndarray:
    n = max(2, int((f["t1"] - f["t0"]) * fs))
    tt = np.arange(n) / fs
    ramp = min(0.12, (f["t1"] - f["t0"]) / 3)
    env = np.clip(np.minimum(tt, tt[-1] - tt) / max(ramp, 1e-3), 0, 1)
    env = 0.5 - 0.5 * np.cos(np.pi * env)
    return np.asarray(env * (1 + 0.3 * np.sin(2 * np.pi * f["tremor_hz"] * tt
                                              + rng.uniform(0, 6.3))
                             + 0.1 * _band_noise(rng, n, 0.5, 8.0, fs)))


def render_piezo(tower: Tower, scene: Scene, rng: np.random.Generator) -> np.ndarray:
    """The eight discs' ADC codes, (N, 8) uint16, at the tower's piezo rate."""
    fs = tower.piezo_rate
    n = int(round(scene.duration * fs))
    x = np.zeros((8, n), np.float32)
    kl = tower.kern_hard.shape[2]
    loose = tower.loose_level
    for t, level, j, hard in scene.impacts:
        n0 = int(round(t * fs))
        if n0 >= n:
            continue
        m = min(kl, n - n0)
        amp = j / J_REF
        seg = amp * (hard * tower.kern_hard[level][:, :m]
                     + (1 - hard) * tower.kern_soft[level][:, :m])
        x[:, n0:n0 + m] += seg
        if loose >= 0 and amp > 0.3:  # the loose disc rattles on strong strikes
            rl = min(int(0.05 * fs), m)
            tt = np.arange(rl) / fs
            buzz = np.sign(np.sin(2 * np.pi * tower.rattle_hz * tt + rng.uniform(0, 6.3)))
            x[loose, n0:n0 + rl] += (buzz * np.exp(-tt / 0.015) * min(amp, 4.0)
                                     * tower.disc_sens[loose] * 0.25).astype(np.float32)
    for k in scene.knocks:
        n0 = int(round(k["t"] * fs))
        m = min(tower.kern_table.shape[1], n - n0)
        x[:, n0:n0 + m] += k["strength"] * tower.kern_table[:, :m]
    for f in scene.forces:  # slow forces through an AC-coupled front end, and rustle
        n0 = int(f["t0"] * fs)
        prof = _force_profile(f, fs, rng)
        m = min(len(prof), n - n0)
        if m <= 0 or n0 < 0:
            continue
        hp = np.diff(prof[:m], prepend=0.0) * fs * 0.01  # ~10 ms coupling
        rustle = _band_noise(rng, m, 80, 400, fs) * prof[:m]
        for lev, g in f["levels"].items():
            x[lev, n0:n0 + m] += (tower.static_codes_per_g[lev] * g * hp
                                  + 0.8 * min(g, 2.0) * rustle).astype(np.float32)
    for r in scene.room:
        if r["kind"] not in ("talk", "bark", "chair"):
            continue
        n0 = int(r["t"] * fs)
        m = min(int((r["t_end"] - r["t"]) * fs), n - n0)
        if m <= 10:
            continue
        tt = np.arange(m) / fs
        if r["kind"] == "talk":
            syl = np.clip(np.sin(2 * np.pi * rng.uniform(3, 6) * tt + rng.uniform(0, 6)), 0, 1)
            src = _band_noise(rng, m, 110, 350, fs) * syl
            gains = rng.uniform(0.5, 1.2, 8)
        elif r["kind"] == "bark":
            gate = (np.mod(tt, 0.45) < rng.uniform(0.1, 0.25)).astype(float)
            src = _band_noise(rng, m, 400, min(1200, 0.45 * fs), fs) * gate
            gains = rng.uniform(0.5, 1.2, 8)
        else:
            src = _band_noise(rng, m, 15, 80, fs)
            gains = np.asarray(10.0 ** (-np.arange(8) * rng.uniform(0.1, 0.2)), np.float64)
        x[:, n0:n0 + m] += (r["codes"] * gains[:, None] * src[None, :]).astype(np.float32)
    # mains hum: one phase for all channels, a little wander
    t_all = np.arange(n) / fs
    hum_level = 3.0 if scene.scenario == "noisy" else 1.0
    phase = 2 * np.pi * tower.mains_hz * t_all + 0.3 * np.sin(2 * np.pi * 0.05 * t_all)
    hum = np.sin(phase) + 0.4 * np.sin(3 * phase + 1.0) + 0.15 * np.sin(5 * phase + 2.0)
    x += (hum_level * tower.hum_codes[:, None] * hum[None, :]).astype(np.float32)
    x += (rng.standard_normal((8, n)) * tower.noise_codes[:, None]).astype(np.float32)
    # lifted modules: their discs are disconnected (float with hum or sit at bias)
    for t_lift, t_close, k_open in scene.open_spans:
        a, b = int(t_lift * fs), min(int(t_close * fs), n)
        if b <= a or k_open >= 7:
            continue
        tt = np.arange(b - a) / fs
        for ch in range(k_open + 1, 8):
            if tower.float_when_lifted:
                fl_amp = rng.uniform(5, 40)
                fl = fl_amp * np.sin(2 * np.pi * tower.mains_hz * tt + rng.uniform(0, 6.3)) \
                    + 20 * np.sin(2 * np.pi * rng.uniform(0.1, 0.5) * tt)
            else:
                fl = rng.standard_normal(b - a) * 0.5
            x[ch, a:b] = fl.astype(np.float32)
            for edge in (a, b):  # contact crackle at breaking and making
                cm = min(int(rng.uniform(0.005, 0.03) * fs), n - edge)
                if cm > 0:
                    x[ch, edge:edge + cm] += rng.uniform(-200, 200, cm).astype(np.float32)
    codes = np.clip(np.round(x + tower.bias[:, None]), 0, tower.clip_hi)
    return codes.T.astype(np.uint16)


def _one_pole(x: np.ndarray, tau: float, fs: float) -> np.ndarray:
    a = np.exp(-1.0 / (tau * fs))
    return np.asarray(signal.lfilter([1 - a], [1, -a], x))


def render_load_grams(tower: Tower, scene: Scene, rng: np.random.Generator) -> np.ndarray:
    """What each cell feels, grams on the FS_LOAD grid, (8, M)."""
    m = int(scene.duration * FS_LOAD) + 1
    step = np.zeros((8, m))
    for t, level, dg in scene.load_changes:
        i = int(round(t * FS_LOAD))
        if i < m:
            step[level, i] += dg
    static = np.cumsum(step, axis=1)
    tt = np.arange(m) / FS_LOAD
    # humidity: the walls take more or less of the plate over a long session
    hum = tower.humidity_pct / 100 * np.sin(2 * np.pi * tt / rng.uniform(900, 3000)
                                            + rng.uniform(0, 6.3))
    g = np.zeros((8, m))
    for k in range(8):
        creep = tower.creep_fast[k] * _one_pole(static[k], tower.creep_tau_fast[k], FS_LOAD) \
            + tower.creep_slow[k] * _one_pole(static[k], tower.creep_tau_slow[k], FS_LOAD)
        ph = rng.uniform(0, 6.3)
        drift = tower.zero_drift_g[k] * (np.sin(2 * np.pi * tt / rng.uniform(600, 2400) + ph)
                                         - np.sin(ph)) * min(1.0, scene.duration / 1200)
        g[k] = static[k] * (1 + hum * (0.5 + k / 14)) + creep + drift
    kl = tower.kern_load.shape[1]
    for t, level, j, _hard in scene.impacts:
        i = int(round(t * FS_LOAD))
        if i >= m:
            continue
        n = min(kl, m - i)
        amp = j / J_REF * rng.uniform(0.8, 1.0)
        for k in range(8):
            share = amp * tower.load_xt ** abs(k - level)
            if share > 0.01:
                g[k, i:i + n] += share * tower.kern_load[k, :n]
    for kn in scene.knocks:  # the table jumps: every plate's inertia on its cell
        i = int(round(kn["t"] * FS_LOAD))
        n = min(kl, m - i)
        for k in range(8):
            g[k, i:i + n] += kn["strength"] * rng.uniform(0.5, 1.5) * 3.0 \
                * tower.kern_load[k, :n] / np.abs(tower.kern_load[k]).max()
    for f in scene.forces:
        i = int(f["t0"] * FS_LOAD)
        prof = _force_profile(f, FS_LOAD, rng)
        n = min(len(prof), m - i)
        if n <= 0 or i < 0:
            continue
        for lev, amp in f["levels"].items():
            g[lev, i:i + n] += amp * prof[:n]
    return g


def hx711_readings(tower: Tower, scene: Scene, grams: np.ndarray, rng: np.random.Generator
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """LOAD messages: (times s, valid bits, values (M, 8) counts)."""
    r_ref = float(tower.chip_rate.max())
    t_msg = rng.uniform(0.2, 1.0) / r_ref + np.arange(int(scene.duration * r_ref)) / r_ref
    t_msg = t_msg[t_msg < scene.duration - 0.01]
    csum = np.concatenate([np.zeros((8, 1)), np.cumsum(grams, axis=1) / FS_LOAD], axis=1)
    grid = np.arange(csum.shape[1]) / FS_LOAD
    valid = np.zeros((len(t_msg), 8), bool)
    values = np.zeros((len(t_msg), 8), np.int64)
    wander = np.cumsum(rng.standard_normal((8, len(t_msg))), axis=1)
    for k in range(8):
        rate = tower.chip_rate[k]
        tc = rng.uniform(0, 1 / rate) + np.arange(int(scene.duration * rate) + 2) / rate
        tc = tc[(tc > 1 / rate) & (tc < scene.duration)]
        mean = (np.interp(tc, grid, csum[k]) - np.interp(tc - 1 / rate, grid, csum[k])) * rate
        mean += rng.standard_normal(len(tc)) * tower.noise_g[k]
        ok = np.ones(len(tc), bool)
        for t_lift, t_close, ex in scene.open_spans:
            if k > ex:
                settle = t_close + 4 / rate + rng.uniform(0.02, 0.15)
                ok &= ~((tc > t_lift) & (tc < settle))
        # the latest conversion of this chip at each LOAD message, fresh if new since the last
        j = np.searchsorted(tc, t_msg, side="right") - 1
        prev = np.concatenate([[-1], j[:-1]])
        has = j >= 0
        jj = np.clip(j, 0, len(tc) - 1)
        fresh = has & (j != prev) & ok[jj]
        v = tower.offset[k] + tower.cpg[k] * (mean[jj] + 0.3 * tower.noise_g[k]
                                              * wander[k] / np.sqrt(len(t_msg) + 1))
        valid[:, k] = fresh
        values[:, k] = np.where(fresh, np.clip(np.round(v), -(2**23), 2**23 - 1), 0)
    bits = (valid * (1 << np.arange(8))).sum(axis=1)
    return t_msg, bits, values


# ----------------------------------------------------------------------------- the bytes


@dataclass
class Stream:
    """Encoded bytes with a table of messages: byte offset, length, stream time, type."""

    data: bytes
    start: np.ndarray
    length: np.ndarray
    t: np.ndarray
    mtype: np.ndarray
    device: dict[str, Any]


def _le(values: np.ndarray, nbytes: int) -> np.ndarray:
    v = np.asarray(values, np.int64) & ((1 << (8 * nbytes)) - 1)
    return np.stack([(v >> (8 * i)) & 0xFF for i in range(nbytes)], axis=-1).astype(np.uint8)


def encode_stream(tower: Tower, scene: Scene, piezo: np.ndarray,
                  load: tuple[np.ndarray, np.ndarray, np.ndarray] | None,
                  rng: np.random.Generator, *, midframe: bool, n_load: int) -> Stream:
    """The device -> host bytes of a session (contracts.md section 1)."""
    fs = tower.piezo_rate
    duration = scene.duration
    fresh_boot = rng.random() < 0.35 and not midframe
    if scene.scenario == "long" or rng.random() < 0.15:  # the clock wraps in this session
        t_us0 = 2**32 - int(rng.uniform(0.1, 0.9) * min(duration, 3000) * 1e6)
        uptime_us0 = t_us0 + 2**32 * int(rng.integers(0, 3))
    elif fresh_boot:
        uptime_us0 = int(rng.uniform(0.25, 0.6) * 1e6)
        t_us0 = uptime_us0
    else:
        uptime_us0 = int(rng.uniform(300, 4e5) * 1e6)
        t_us0 = uptime_us0 % 2**32
    t_us0 -= t_us0 % 4

    def us(t: np.ndarray) -> np.ndarray:
        return (t_us0 + (np.floor(t * 1e6 / 4) * 4).astype(np.int64)) % 2**32

    # PIEZO frames: n sets each, sometimes one more or fewer when the loop ran late
    n_sets = piezo.shape[0]
    nominal = tower.sets_per_frame
    sizes = np.full(n_sets // max(1, nominal - 1) + 2, nominal)
    jig = rng.random(len(sizes))
    sizes[jig < 0.03] += 1
    sizes[(jig > 0.03) & (jig < 0.06)] -= 1
    sizes = np.clip(sizes, 1, 14)
    starts = np.concatenate([[0], np.cumsum(sizes)])
    keep = starts[:-1] < n_sets
    sizes, starts = sizes[keep], starts[:-1][keep]
    sizes[-1] = n_sets - starts[-1]
    p_t = starts / fs
    p_emit = (starts + sizes) / fs + 0.0002
    # LOAD and STATUS
    if load is not None:
        l_t, l_bits, l_vals = load
    else:
        l_t, l_bits, l_vals = np.zeros(0), np.zeros(0, np.int64), np.zeros((0, 8), np.int64)
    l_emit = l_t + 0.0009
    s_emit = np.arange(1, int(duration)) + rng.uniform(0, 0.5)
    # the opening messages
    head: list[tuple[int, bytes]] = []
    hello = bytes([1, *tower.fw, 8, n_load]) + tower.piezo_rate.to_bytes(2, "little") \
        + (tower.load_rate_hello if n_load else 0).to_bytes(2, "little") + bytes([10]) \
        + tower.device_id
    seq0 = 0 if fresh_boot else int(rng.integers(0, 65536))
    head.append((0x01, hello))
    if not fresh_boot:  # the host asked GET_INFO (and maybe START) when it opened the port
        host_seq = int(rng.integers(0, 65536))
        head.append((0x05, bytes([0x81]) + host_seq.to_bytes(2, "little") + b"\x00"))
        if n_load and load is None:
            head.append((0x05, bytes([0x82]) + ((host_seq + 1) % 65536).to_bytes(2, "little")
                         + b"\x00"))
    elif n_load and load is None:
        head.append((0x05, bytes([0x82, 0, 0, 0])))
    # order every message by the time it leaves the device
    emit = np.concatenate([p_emit, l_emit, s_emit])
    order = np.argsort(emit, kind="stable")
    n_head = len(head)
    seq_of = np.empty(len(order), np.int64)
    seq_of[order] = (seq0 + n_head + np.arange(len(order))) % 65536
    head_bytes = b"".join(frame(bytes([ty]) + ((seq0 + i) % 65536).to_bytes(2, "little") + b)
                          for i, (ty, b) in enumerate(head))
    prefix = b""
    if midframe:  # the port was opened in the middle of a PIEZO frame
        old = bytes([2]) + int(rng.integers(0, 65536)).to_bytes(2, "little") \
            + rng.integers(1, 255, 7 + 16 * nominal).astype(np.uint8).tobytes()
        enc = frame(old)
        prefix = enc[int(rng.integers(2, len(enc) - 1)):]
    # rows per kind
    encoded: dict[int, list[tuple[np.ndarray, np.ndarray]]] = {0: [], 1: [], 2: []}
    p_seq = seq_of[:len(p_emit)]
    p_tus = us(p_t)
    for size in np.unique(sizes):
        sel = np.nonzero(sizes == size)[0]
        idx = starts[sel][:, None] + np.arange(size)[None, :]
        samples = piezo[idx].reshape(len(sel), -1).astype(np.int64)
        rows = np.concatenate([np.full((len(sel), 1), 2, np.uint8), _le(p_seq[sel], 2),
                               _le(p_tus[sel], 4), np.full((len(sel), 1), size, np.uint8),
                               _le(samples, 2).reshape(len(sel), -1)], axis=1)
        encoded[0].append((sel, rows))
    if len(l_t):
        l_seq = seq_of[len(p_emit):len(p_emit) + len(l_emit)]
        rows = np.concatenate([np.full((len(l_t), 1), 3, np.uint8), _le(l_seq, 2),
                               _le(us(l_t), 4), _le(l_bits, 1),
                               _le(l_vals, 3).reshape(len(l_t), -1)], axis=1)
        encoded[1].append((np.arange(len(l_t)), rows))
    s_seq = seq_of[len(p_emit) + len(l_emit):]
    uptime_ms = (uptime_us0 // 1000 + np.arange(1, len(s_emit) + 1) * 1000) % 2**32
    timeouts = np.zeros(len(s_emit), np.int64)
    for t_lift, t_close, k in scene.open_spans:
        if k < 7 and n_load:
            timeouts += (np.clip(np.arange(1, len(s_emit) + 1), t_lift, t_close) - t_lift).astype(
                np.int64) * tower.load_rate_hello * (7 - k)
    s_rows = np.concatenate([
        np.full((len(s_emit), 1), 4, np.uint8), _le(s_seq, 2), _le(uptime_ms, 4),
        _le(np.zeros(len(s_emit)), 2), _le(np.zeros(len(s_emit)), 2), _le(timeouts, 2),
        _le(rng.integers(35, 60, len(s_emit)), 1), np.zeros((len(s_emit), 1), np.uint8)], axis=1)
    encoded[2].append((np.arange(len(s_emit)), s_rows))
    base = {0: 0, 1: len(p_emit), 2: len(p_emit) + len(l_emit)}
    length = np.zeros(len(order), np.int64)
    enc_rows: list[tuple[np.ndarray, np.ndarray]] = []
    for kind, groups in encoded.items():
        for sel, rows in groups:
            crc = crc16_rows(rows)
            full = np.concatenate([rows, _le(crc, 2)], axis=1)
            enc_g = cobs_encode_rows(full)
            gidx = base[kind] + sel
            length[gidx] = enc_g.shape[1]
            enc_rows.append((gidx, enc_g))
    pos = np.empty(len(order), np.int64)
    pos[order] = np.concatenate([[0], np.cumsum(length[order])[:-1]])
    lead = len(prefix) + len(head_bytes)
    out = np.zeros(int(length.sum()), np.uint8)
    for gidx, enc_g in enc_rows:
        out[pos[gidx][:, None] + np.arange(enc_g.shape[1])[None, :]] = enc_g
    data = prefix + head_bytes + out.tobytes()
    times = np.concatenate([p_t, l_t, s_emit])
    return Stream(
        data=data, start=pos[order] + lead, length=length[order], t=times[order],
        mtype=np.concatenate([np.full(len(p_t), 2), np.full(len(l_t), 3),
                              np.full(len(s_emit), 4)])[order],
        device={"fresh_boot": fresh_boot, "t_us_at_zero": t_us0,
                "clock_wraps": bool(t_us0 + duration * 1e6 >= 2**32),
                "seq_first": seq0, "starts_mid_frame": midframe, "n_load": n_load,
                "sets_per_frame": nominal, "head": [h[0] for h in head]})


def damage_stream(st: Stream, duration: float, rng: np.random.Generator
                  ) -> tuple[bytes, list[dict[str, Any]]]:
    """Bit errors, lost chunks, garbage, a mid-frame start and end; the spans they hit."""
    data = bytearray(st.data)
    spans: list[dict[str, Any]] = []
    edits: list[tuple[int, int, bytes]] = []  # (byte from, byte to, replacement)
    slots = np.arange(8.0, duration - 6.0, 6.0)
    slots = rng.permutation(slots)[:7]
    kinds = ["bitflip", "bitflip", "lost", "garbage", "bitflip", "lost", "garbage"]
    n_msg = len(st.start)

    def span(i0: int, i1: int, kind: str) -> None:
        lo, hi = max(0, i0 - 1), min(n_msg - 1, i1 + 1)
        spans.append({"t_start": round(float(st.t[lo:hi + 1].min()) - 0.02, 4),
                      "t_end": round(float(st.t[lo:hi + 1].max()) + 0.02, 4), "kind": kind})

    for slot, kind in zip(sorted(slots), kinds, strict=False):
        i = int(np.searchsorted(st.t, slot + rng.uniform(0, 3)))
        if i >= n_msg - 2:
            continue
        b0 = int(st.start[i])
        if kind == "bitflip":
            b = b0 + int(rng.integers(0, st.length[i]))
            flipped = bytes([data[b] ^ (1 << int(rng.integers(8)))])
            edits.append((b, b + 1, flipped))
            span(i, i, kind)
        elif kind == "lost":
            nb = int(rng.integers(50, 6000))
            b = b0 + int(rng.integers(0, st.length[i]))
            j = int(np.searchsorted(st.start, b + nb, side="right")) - 1
            edits.append((b, b + nb, b""))
            span(i, j, kind)
        else:
            g = rng.integers(0, 256, int(rng.integers(20, 400))).astype(np.uint8)
            b = b0 + int(rng.integers(0, st.length[i]))
            edits.append((b, b, g.tobytes()))
            span(i, i, kind)
    for b0, b1, rep in sorted(edits, reverse=True):
        data[b0:b1] = rep
    # the recording ends in the middle of a frame
    i = n_msg - 1 - int(rng.integers(1, 30))
    cut = int(st.start[i]) + int(rng.integers(1, st.length[i] - 1))
    shift = sum(len(rep) - (b1 - b0) for b0, b1, rep in edits)
    del data[cut + shift:]
    spans.append({"t_start": round(float(st.t[i]) - 0.02, 4), "t_end": round(duration, 4),
                  "kind": "truncated"})
    # and begins in the middle of one (the tail of a frame sent before the port opened)
    tail = frame(bytes([2, 7, 7]) + rng.integers(1, 255, 100).astype(np.uint8).tobytes())
    data[0:0] = tail[int(rng.integers(2, 60)):]
    spans.append({"t_start": 0.0, "t_end": 0.01, "kind": "midframe"})
    return bytes(data), sorted(spans, key=lambda s: s["t_start"])


# ----------------------------------------------------------------------------- one recording


def _rng(seed: int, scenario: str, purpose: int) -> np.random.Generator:
    return np.random.default_rng([seed, zlib.crc32(scenario.encode()), purpose])


def _truth(tower: Tower, scene: Scene, scenario: str, seed: int, device: dict[str, Any]
           ) -> dict[str, Any]:
    order = sorted(range(len(scene.landings)), key=lambda i: (scene.landings[i]["t"], i))
    new_index = {old: new for new, old in enumerate(order)}
    landings = [scene.landings[i] for i in order]
    knockdowns = sorted(({**k, "landing": new_index[k["landing"]], "by": new_index[k["by"]]}
                         for k in scene.knockdowns), key=lambda k: k["t"])
    final = {str(k): sorted(c.cube.id for c in scene.resting if c.floor == k) for k in range(8)}
    return {
        "format": FORMAT, "scenario": scenario, "seed": seed, "duration_s": scene.duration,
        "cells": tower.cells, "landings": landings, "knockdowns": knockdowns,
        "removals": sorted(scene.removals, key=lambda r: r["t"]),
        "lifts": scene.lifts, "closes": scene.closes,
        "knocks": sorted(scene.knocks, key=lambda k: k["t"]),
        "open_spans": [[round(a, 4), round(b, 4), k] for a, b, k in scene.open_spans],
        "nudges": scene.nudges, "room": sorted(scene.room, key=lambda r: r["t"]),
        "final_tower": final, "cubes_thrown": sum(not x["knocked"] for x in landings),
        "game": {"games": scene.games}, "device": device,
        "clock_wraps": device["clock_wraps"], "load_cells": device["n_load"] > 0
        and scenario != "acoustic", "tower": tower.as_json(),
    }


def make_recording(seed: int, scenario: str, duration: float, out: Path) -> tuple[Path, Path]:
    """Write ``{scenario}_t{seed}.bin`` and its truth (and the clean twin for ``damaged``)."""
    if scenario not in SCENARIOS:
        raise ValueError(f"unknown scenario {scenario!r}")
    out.mkdir(parents=True, exist_ok=True)
    tower = make_tower(seed)
    scene = build_scene(tower, scenario, duration, seed)
    acoustic = scenario == "acoustic"
    piezo = render_piezo(tower, scene, _rng(seed, scenario, 1))
    load = None
    if not acoustic:
        grams = render_load_grams(tower, scene, _rng(seed, scenario, 2))
        load = hx711_readings(tower, scene, grams, _rng(seed, scenario, 3))
    brng = _rng(seed, scenario, 4)
    midframe = scenario not in ("damaged", "long") and brng.random() < 0.2
    n_load = 0 if acoustic and brng.random() < 0.5 else 8
    st = encode_stream(tower, scene, piezo, load, brng, midframe=midframe, n_load=n_load)
    truth = _truth(tower, scene, scenario, seed, st.device)
    name = f"{scenario}_t{seed}"
    bin_path, truth_path = out / f"{name}.bin", out / f"{name}.truth.json"
    if scenario == "damaged":
        clean = {**truth, "scenario": "damagedclean"}
        (out / f"damagedclean_t{seed}.bin").write_bytes(st.data)
        (out / f"damagedclean_t{seed}.truth.json").write_text(json.dumps(clean, indent=1))
        drng = _rng(seed, scenario, 5)
        clean_msgs = set(decode_own(st.data))
        for _ in range(20):  # a damaged message that still passes its CRC: draw again
            data, spans = damage_stream(st, duration, drng)
            if set(decode_own(data)) <= clean_msgs:
                break
        truth = {**truth, "damage": spans}
        bin_path.write_bytes(data)
    else:
        bin_path.write_bytes(st.data)
    truth_path.write_text(json.dumps(truth, indent=1))
    return bin_path, truth_path


def _job(args: tuple[int, str, float, str]) -> str:
    seed, scenario, duration, out = args
    make_recording(seed, scenario, duration, Path(out))
    return f"{scenario}_t{seed}"


def main(argv: list[str] | None = None) -> int:
    """Command line: recordings of N towers for the chosen scenarios."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--towers", type=int, default=8)
    p.add_argument("--first-seed", type=int, default=1)
    p.add_argument("--duration", type=float, default=120.0)
    p.add_argument("--scenarios", nargs="+", default=list(DEFAULT_SCENARIOS))
    p.add_argument("--long-duration", type=float, default=1800.0)
    p.add_argument("--workers", type=int, default=2)
    args = p.parse_args(argv)
    bad = [s for s in args.scenarios if s not in SCENARIOS]
    if bad:
        print(f"unknown scenario {bad[0]!r} (known: {', '.join(SCENARIOS)})", file=sys.stderr)
        return 2
    if args.duration < 8 or args.long_duration < 8:
        print("durations must be at least 8 s", file=sys.stderr)
        return 2
    jobs = [(seed, s, args.long_duration if s == "long" else args.duration, str(args.out))
            for s in args.scenarios
            for seed in range(args.first_seed, args.first_seed + args.towers)]
    args.out.mkdir(parents=True, exist_ok=True)
    if args.workers <= 1:
        for job in jobs:
            _job(job)
    else:
        with ProcessPoolExecutor(args.workers) as pool:
            for name in pool.map(_job, jobs):
                print(name, file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
