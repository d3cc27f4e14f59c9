#!/usr/bin/env python3
"""Cross-check model Q: a physically careful tower, played by real people.

An independent simulator of towerear recordings, written from
/work/shared/design.md and contracts.md alone. Every tower is drawn from
plausible spreads (geometry, cubes, cells, piezos, room); cubes fall through a
2-D model of the misaligned holes, bounce, tumble, slide, knock resting cubes
down; the load chain is plate + bar cell (mass-spring-damper) -> HX711 (sinc4
decimation at its own RC-clock rate) -> firmware reading eight HX711s on one
shared SCK; the piezo chain is plate modes -> crosstalk -> AC coupling ->
10-bit ADC. People throw, lift, take cubes out, throw back, knock the table,
talk. See README.md beside this file for the numbers and why.

Usage::

    .venv/bin/python tools/crosscheck_q/make_recordings_q.py --out DIR --towers 8 \
        --first-seed 1 --duration 120 [--scenarios single rapid noisy game long damaged acoustic]
        [--long-duration 1800] [--workers 2]
"""

from __future__ import annotations

import argparse
import json
import sys
import zlib
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

import numpy as np
from scipy.signal import lfilter

G = 9.81  # m/s^2
SCENARIOS = ("single", "rapid", "noisy", "game", "long", "damaged", "acoustic")
DEFAULT_SCENARIOS = ("single", "rapid", "noisy", "game")
TRUTH_FORMAT = "towerear-crosscheck-truth/1"
LOAD_SIM_HZ = 1000.0  # the mechanical load path is simulated on this grid
QUIET_START_S = 5.0  # the tower is empty and quiet this long (the detector tares on it)
COLOURS = ("yellow", "blue", "brown", "gray", "black", "white")
S24_MAX = 2**23 - 1

# Message types (contracts.md section 1).
T_HELLO, T_PIEZO, T_LOAD, T_STATUS, T_ACK = 0x01, 0x02, 0x03, 0x04, 0x05


# --------------------------------------------------------------------------------------------
# Wire encoding, written from contracts.md section 1.
# --------------------------------------------------------------------------------------------

def _crc_table() -> np.ndarray:
    table = np.zeros(256, np.uint32)
    for i in range(256):
        crc = i << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
        table[i] = crc & 0xFFFF
    return table


CRC_TABLE = _crc_table()


def crc16_ccitt_false(data: bytes) -> int:
    """CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, no reflection, xorout 0), table-driven."""
    crc = 0xFFFF
    for b in data:
        crc = ((crc << 8) & 0xFFFF) ^ int(CRC_TABLE[((crc >> 8) ^ b) & 0xFF])
    return crc


def crc16_ccitt_false_reference(data: bytes) -> int:
    """The same CRC bit by bit, as the specification states it (a second implementation)."""
    crc = 0xFFFF
    for b in data:
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) & 0xFFFF if crc & 0x8000 else (crc << 1) & 0xFFFF
    return crc


def crc16_rows(rows: np.ndarray) -> np.ndarray:
    """CRC of every row of a (n, L) uint8 array, one column at a time."""
    crc = np.full(rows.shape[0], 0xFFFF, np.uint32)
    for col in range(rows.shape[1]):
        crc = ((crc << 8) & 0xFFFF) ^ CRC_TABLE[((crc >> 8) ^ rows[:, col]) & 0xFF]
    return crc.astype(np.uint16)


def cobs_encode(data: bytes) -> bytes:
    """COBS-encode ``data`` (no trailing delimiter)."""
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


def cobs_encode_rows(rows: np.ndarray) -> np.ndarray:
    """COBS-encode rows of equal length L < 254, each followed by its 0x00: (n, L + 2)."""
    n, length = rows.shape
    if length >= 254:
        raise ValueError("rows of 254 bytes or more need the one-frame encoder")
    ext = np.concatenate([rows, np.zeros((n, 1), np.uint8)], axis=1)
    idx = np.where(ext == 0, np.arange(length + 1)[None, :], length + 1)
    next_zero = np.minimum.accumulate(idx[:, ::-1], axis=1)[:, ::-1]  # first zero at or after j
    out = np.zeros((n, length + 2), np.uint8)
    out[:, 0] = next_zero[:, 0] + 1
    dist = next_zero[:, 1:length + 1] - np.arange(length)[None, :]
    out[:, 1:length + 1] = np.where(rows == 0, dist, rows)
    return out


def frame(msg: bytes) -> bytes:
    """type|seq|body with its CRC appended, COBS-encoded and delimited."""
    crc = crc16_ccitt_false(msg)
    return cobs_encode(msg + crc.to_bytes(2, "little")) + b"\x00"


# --------------------------------------------------------------------------------------------
# The tower: everything that differs from one built kit and room to the next.
# --------------------------------------------------------------------------------------------

@dataclass
class Tower:
    """One built tower, its sensors and its room. Arrays are per level 0..7."""

    seed: int
    cells: str  # "matched": one batch of cells, same sign; "mixed": spread, some inverted
    piezo_rate_hello: int
    load_rate_hello: int
    load_rates: np.ndarray  # true HX711 output rates (RC oscillator), readings/s
    load_phase: np.ndarray  # s, first conversion of each HX711
    cpg: np.ndarray  # counts per gram (signed: wiring / mounting)
    offset: np.ndarray  # counts of the empty plate at t = 0
    noise_g: np.ndarray  # white noise per reading, g rms
    flicker_g: np.ndarray  # slow (OU, tau 3 s) noise, g rms
    plate_mass_g: np.ndarray
    plate_f_hz: np.ndarray  # plate on bar cell resonance
    plate_zeta: np.ndarray
    sway_f_hz: float  # the stacked tower's rocking mode
    sway_zeta: float
    sway_part: np.ndarray  # vertical participation of each plate in sway
    temp_coef_g: np.ndarray  # zero drift, g per K
    warmup_g: np.ndarray  # zero shift from cold start to warm, g
    warmup_tau_s: float
    creep_frac: np.ndarray  # creep as a fraction of the applied load
    creep_tau_s: float
    # geometry, mm
    module_h_mm: float
    inner_half_mm: float
    hole_side_mm: np.ndarray  # (9,) side of the hole in plate j (j = 1..7; 8 = entrance)
    hole_c_mm: np.ndarray  # (9, 2) hole centres
    cube_mass_g: float
    cube_edge_mm: float
    mu: float  # wood on printed card, sliding friction
    e_lo: float  # restitution range, wood cube on card plate
    e_hi: float
    # piezo chain
    piezo_gain: np.ndarray  # counts per N*s of impulse on the own plate
    piezo_bias: np.ndarray  # idle ADC code
    piezo_noise: np.ndarray  # counts rms
    modes_hz: np.ndarray  # (8, 3)
    modes_tau_s: np.ndarray  # (8, 3)
    modes_amp: np.ndarray  # (8, 3)
    xtalk: np.ndarray  # (10, 8): source (0..7 plates, 8 entrance roof, 9 table) -> channel
    hpf_hz: np.ndarray
    hum_hz: float
    hum_counts: np.ndarray
    sets_per_msg: int
    device_id: bytes
    fw: tuple[int, int, int]
    extra: dict[str, Any] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        """The tower's main numbers, for the truth file."""
        return {
            "seed": self.seed, "cells": self.cells,
            "piezo_rate_hz": self.piezo_rate_hello, "load_rate_hz": self.load_rate_hello,
            "load_rates_true": [round(float(x), 3) for x in self.load_rates],
            "cpg": [round(float(x), 1) for x in self.cpg],
            "offset": [int(x) for x in self.offset],
            "noise_g": [round(float(x), 4) for x in self.noise_g],
            "plate_f_hz": [round(float(x), 1) for x in self.plate_f_hz],
            "cube_mass_g": round(self.cube_mass_g, 3), "cube_edge_mm": round(self.cube_edge_mm, 2),
            "hole_side_mm": [round(float(x), 1) for x in self.hole_side_mm[1:]],
            "hole_c_mm": [[round(float(v), 1) for v in c] for c in self.hole_c_mm[1:]],
            "module_h_mm": round(self.module_h_mm, 1),
            "piezo_gain": [round(float(x)) for x in self.piezo_gain],
            "hum_hz": self.hum_hz, "sets_per_msg": self.sets_per_msg,
        }


def _rng(seed: int, *keys: str | int) -> np.random.Generator:
    """An independent, deterministic random stream for (seed, purpose...)."""
    words = [seed & 0xFFFFFFFF] + [k if isinstance(k, int) else zlib.crc32(k.encode())
                                   for k in keys]
    return np.random.default_rng(words)


def make_tower(seed: int) -> Tower:
    """Draw one tower (kit, sensors, room) from plausible spreads; deterministic in ``seed``."""
    r = _rng(seed, "tower")
    cells = "mixed" if r.random() < 0.4 else "matched"
    # HX711 RATE pin: most builds tie it high (80/s); some leave the default 10/s.
    rate_nom = 80 if r.random() < 0.8 else 10
    # Each HX711 runs on its own on-chip oscillator: +-1.5 % part to part.
    load_rates = rate_nom * (1.0 + r.normal(0.0, 0.006) + r.normal(0.0, 0.004, 8))
    load_rate_hello = int(round(float(load_rates[0])))  # firmware times chip 0 at boot
    piezo_rate = int(r.choice([2000, 2000, 2000, 2000, 2000, 1600, 1000]))
    # Bar cells of 100 g, rated output 0.5-1.0 mV/V, ratiometric to the HX711 at gain 128:
    # counts/g = RO[mV/V] * 1e-5 * 2^24 * 128 = RO * 21475.
    if cells == "matched":
        ro = r.uniform(0.6, 1.0) * (1.0 + r.normal(0.0, 0.03, 8))
        sign = np.full(8, -1.0 if r.random() < 0.3 else 1.0)
    else:
        ro = r.uniform(0.45, 1.05, 8)
        sign = np.where(r.random(8) < 0.35, -1.0, 1.0)
    cpg = sign * ro * 21475.0
    plate_mass = r.uniform(4.0, 9.0, 8)  # floating card panel with its cell mount
    # Zero balance of cheap cells (+-0.3 mV/V), the HX711's own offset and the plate tare:
    # anywhere in s24 but far from the rails.
    offset = (r.uniform(-2.5e6, 2.5e6, 8) + cpg * plate_mass).round().astype(np.int64)
    # HX711 input noise ~50/90 nV rms (10/80 SPS) is 25-45 counts; cheap boards and air
    # currents make it 2-4 times that.
    noise_counts = (r.uniform(60, 160, 8) if rate_nom == 80 else r.uniform(25, 70, 8))
    noise_g = noise_counts / np.abs(cpg)
    flicker_g = r.uniform(0.001, 0.004, 8)
    # 100 g bar cell deflects ~0.3 mm at full scale (k ~ 3000 N/m) under a 4-9 g plate ->
    # 90-140 Hz; the card panel's own compliance brings it down.
    plate_f = r.uniform(45.0, 130.0, 8)
    plate_zeta = r.uniform(0.04, 0.15, 8)  # card is lossy
    module_h = r.uniform(29.0, 33.0)  # 25 cm tower / 8 modules
    inner_half = r.uniform(29.0, 34.0)
    # Cubes: 0.3-0.8 g of wood (density 0.5-0.75 g/cm^3), edge from that.
    cube_mass = r.uniform(0.3, 0.8)
    density = r.uniform(0.5, 0.75)
    edge = 10.0 * (cube_mass / density) ** (1 / 3)
    # Square holes, smaller upwards; the entrance must take a cube thrown in any way.
    entrance = edge + r.uniform(5.0, 8.0)
    step = r.uniform(0.1, 0.45)
    hole_side = np.array([0.0] + [entrance + step * (8 - j) for j in range(1, 9)])
    # Printed and folded by hand, stacked by players: holes off centre by a few mm.
    hole_c = np.zeros((9, 2))
    hole_c[1:] = r.normal(0.0, r.uniform(2.5, 4.0), (8, 2))
    hole_c[8] = r.normal(0.0, 1.0, 2)
    # Piezo discs glued under the plates: gain spread (glue, disc size, the panel).
    spread = 0.25 if cells == "matched" else 0.45
    piezo_gain = 3.8e5 * np.exp(r.normal(0.0, spread, 8))
    modes = np.zeros((8, 3))
    modes[:, 0] = r.uniform(180.0, 450.0, 8)
    modes[:, 1] = modes[:, 0] * r.uniform(1.6, 2.3, 8)
    modes[:, 2] = modes[:, 0] * r.uniform(2.6, 3.6, 8)
    q = r.uniform(6.0, 20.0, (8, 3))  # card plates: Q of 6-20
    modes_tau = q / (np.pi * modes)
    modes_amp = np.stack([np.ones(8), r.uniform(0.3, 0.8, 8), r.uniform(0.1, 0.5, 8)], axis=1)
    xt = np.zeros((10, 8))
    for s in range(8):
        for c in range(8):
            d = abs(s - c)
            xt[s, c] = (1.0 if d == 0 else r.uniform(0.12, 0.35) if d == 1
                        else r.uniform(0.03, 0.10) if d == 2
                        else r.uniform(0.01, 0.03) * 0.6 ** (d - 3))
    xt[8] = [r.uniform(0.002, 0.01) * 0.6 ** (7 - c) for c in range(7)] + [r.uniform(0.25, 0.6)]
    xt[8, 6] = r.uniform(0.06, 0.15)
    xt[9] = [r.uniform(0.4, 1.0) * 0.75 ** c for c in range(8)]
    return Tower(
        seed=seed, cells=cells, piezo_rate_hello=piezo_rate, load_rate_hello=load_rate_hello,
        load_rates=load_rates, load_phase=r.uniform(0.0, 1.0 / rate_nom, 8), cpg=cpg,
        offset=offset, noise_g=noise_g, flicker_g=flicker_g, plate_mass_g=plate_mass,
        plate_f_hz=plate_f, plate_zeta=plate_zeta, sway_f_hz=r.uniform(7.0, 18.0),
        sway_zeta=r.uniform(0.04, 0.10), sway_part=r.uniform(0.05, 0.3, 8),
        temp_coef_g=r.normal(0.0, 0.015, 8), warmup_g=r.normal(0.0, 0.05, 8),
        warmup_tau_s=r.uniform(200.0, 600.0), creep_frac=r.uniform(0.001, 0.004, 8),
        creep_tau_s=r.uniform(120.0, 900.0), module_h_mm=module_h, inner_half_mm=inner_half,
        hole_side_mm=hole_side, hole_c_mm=hole_c, cube_mass_g=cube_mass, cube_edge_mm=edge,
        mu=r.uniform(0.3, 0.5), e_lo=r.uniform(0.25, 0.35), e_hi=r.uniform(0.45, 0.6),
        piezo_gain=piezo_gain, piezo_bias=512 + r.integers(-8, 9, 8),
        piezo_noise=r.uniform(0.5, 1.6, 8), modes_hz=modes, modes_tau_s=modes_tau,
        modes_amp=modes_amp, xtalk=xt,
        hpf_hz=r.uniform(8.0, 25.0, 8),  # 20-30 nF disc into ~0.5-1 Mohm bias
        hum_hz=50.0 if r.random() < 0.8 else 60.0, hum_counts=r.uniform(0.2, 1.5, 8),
        sets_per_msg=int(r.choice([14, 12, 10, 8])),
        device_id=bytes(r.integers(0, 256, 8).astype(np.uint8).tolist()),
        fw=(1, int(r.integers(0, 4)), int(r.integers(0, 10))),
    )


# --------------------------------------------------------------------------------------------
# The scene: what happens, physically, and when. Times are stream seconds.
# --------------------------------------------------------------------------------------------

@dataclass
class Cube:
    """One wooden cube in the tower."""

    cid: int
    color: str
    mass_g: float
    level: int = -1
    pos: np.ndarray = field(default_factory=lambda: np.zeros(2))
    landing: int = -1  # index of its latest landing in the scene


@dataclass
class Scene:
    """Everything that happens in one recording, and the truth it makes."""

    tower: Tower
    scenario: str
    duration: float
    seed: int
    impacts: list[tuple[float, int, float, str]] = field(default_factory=list)  # t, source, J, kind
    mass_steps: list[tuple[float, int, float]] = field(default_factory=list)  # t, level, grams
    presses: list[tuple[float, float, int, float]] = field(default_factory=list)  # t, dur, lv, g
    slides: list[tuple[float, float, int, float]] = field(default_factory=list)  # t, dur, lv, amp
    shakes: list[tuple[float, float, float, float]] = field(default_factory=list)  # t,dur,m/s2,Hz
    disconnects: list[tuple[float, float, int]] = field(default_factory=list)  # lift, close, k
    landings: list[dict[str, Any]] = field(default_factory=list)
    knockdowns: list[dict[str, Any]] = field(default_factory=list)
    removals: list[dict[str, Any]] = field(default_factory=list)
    lifts: list[dict[str, Any]] = field(default_factory=list)
    closes: list[dict[str, Any]] = field(default_factory=list)
    knocks: list[dict[str, Any]] = field(default_factory=list)
    talk: list[tuple[float, float, float]] = field(default_factory=list)  # t, dur, counts
    music: list[tuple[float, float, float, float]] = field(default_factory=list)  # t,dur,cnt,bpm
    hum_scale: float = 1.0
    room_temp_k: float = 0.0  # peak-to-peak of the room's drift over the recording
    warm: bool = True  # electronics already warm at the start
    game: dict[str, Any] = field(default_factory=dict)
    tower_cubes: list[list[Cube]] = field(default_factory=lambda: [[] for _ in range(8)])
    next_cid: int = 0


class Physics:
    """Falls, bounces, slides and knock-downs of cubes in one tower (2-D, mm and m/s)."""

    def __init__(self, scene: Scene, rng: np.random.Generator) -> None:
        self.sc, self.tw, self.r = scene, scene.tower, rng

    # -- helpers ---------------------------------------------------------------------------
    def _impact(self, t: float, source: int, j_ns: float, kind: str) -> None:
        if j_ns > 2e-6:
            self.sc.impacts.append((t, source, j_ns, kind))

    def _in_hole(self, level: int, p: np.ndarray, margin: float) -> bool:
        if level == 0:
            return False
        d = np.abs(p - self.tw.hole_c_mm[level])
        return bool(np.all(d < self.tw.hole_side_mm[level] / 2 - margin))

    def _wall(self, p: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray, bool]:
        lim = self.tw.inner_half_mm - self.tw.cube_edge_mm / 2
        hit = False
        for ax in range(2):
            if abs(p[ax]) > lim:
                p[ax] = np.sign(p[ax]) * (2 * lim - abs(p[ax]))
                p[ax] = float(np.clip(p[ax], -lim, lim))
                v[ax] = -0.4 * v[ax]
                hit = True
        return p, v, hit

    # -- one cube's way down -----------------------------------------------------------------
    def descend(self, cube: Cube, level: int, t: float, p: np.ndarray, vh: np.ndarray,
                vz: float, fall_mm: float, may_knock: bool = True
                ) -> tuple[int, float, float | None]:
        """Let ``cube`` fall from ``fall_mm`` above plate ``level``; returns (level, t_rest,
        t_first_contact). Resting cubes it knocks off go down in turn."""
        tw, r, m = self.tw, self.r, cube.mass_g * 1e-3
        a = tw.cube_edge_mm
        first: float | None = None
        knocked_one = not may_knock
        while True:
            h = fall_mm * 1e-3
            tf = (-vz + np.sqrt(vz * vz + 2 * G * h)) / G
            t += tf
            vz += G * tf
            p = p + vh * tf * 1e3
            p, vh, hit = self._wall(p, vh)
            if hit:
                self._impact(t - 0.3 * tf, level, m * float(np.hypot(*vh)) * 0.8, "wall")
                first = first if first is not None else t - 0.3 * tf
            half_fp = a / 2 * (1.0 + 0.3 * r.random())  # footprint grows as it turns
            if level > 0:
                d = np.abs(p - tw.hole_c_mm[level])
                hs = tw.hole_side_mm[level] / 2
                if np.all(d < hs - half_fp):  # clean through
                    if not knocked_one:
                        knocked_one = self._clip(level, t, p, cube)
                    level -= 1
                    fall_mm = tw.module_h_mm
                    continue
                if np.all(d < hs + 0.4 * half_fp):  # catches the hole's edge
                    first = first if first is not None else t
                    self._impact(t, level, m * vz * r.uniform(0.2, 0.7), "edge")
                    if not knocked_one:
                        knocked_one = self._clip(level, t, p, cube)
                    if np.all(d < hs - 0.15 * half_fp) or r.random() < 0.1:  # over the hole
                        vz *= r.uniform(0.45, 0.85)
                        kick = r.normal(0.0, 0.15 * vz, 2)
                        vh = 0.6 * vh + kick
                        c = tw.hole_c_mm[level]
                        p = c + np.clip(p - c, -(hs - half_fp), hs - half_fp)
                        level -= 1
                        fall_mm = tw.module_h_mm
                        continue
                    vz *= r.uniform(0.5, 0.9)
            first = first if first is not None else t
            out = self._on_plate(cube, level, t, p, vh, vz, knocked_one)
            if out[0] == "rest":
                _, t_rest, p_rest, knocked_one = out
                cube.level, cube.pos = level, p_rest
                return level, t_rest, first
            _, t, p, vh, vz, knocked_one = out  # over the edge into the hole
            level -= 1
            fall_mm = tw.module_h_mm

    def _on_plate(self, cube: Cube, level: int, t: float, p: np.ndarray, vh: np.ndarray,
                  vz: float, knocked_one: bool) -> tuple[Any, ...]:
        """Bounces, then tumbling or sliding, on plate ``level``."""
        tw, r, m = self.tw, self.r, cube.mass_g * 1e-3
        a = tw.cube_edge_mm
        ceiling = (tw.module_h_mm - a) * 1e-3
        t_contact = t
        for _ in range(12):
            e = r.uniform(tw.e_lo, tw.e_hi)
            self._impact(t, level, m * (1.0 + e) * vz, "plate")
            t_contact = t
            up = e * vz
            # Landing on an edge or corner turns fall into spin and sideways speed.
            vh = vh * r.uniform(0.4, 0.8) + r.normal(0.0, 0.3 * (1.0 - e) * vz, 2)
            if up * up / (2 * G) > ceiling and level < 7:
                t_up = (up - np.sqrt(max(up * up - 2 * G * ceiling, 0.0))) / G
                self._impact(t + t_up, level + 1, m * 1.4 * np.sqrt(
                    max(up * up - 2 * G * ceiling, 0.0)), "ceiling")
                up *= 0.5
            if up < 0.06:
                break
            dt = 2 * up / G
            p_new = p + vh * dt * 1e3
            p_new, vh, _ = self._wall(p_new, vh)
            if self._in_hole(level, p_new, 0.5 * a / 2):
                return ("fall", t + dt * 0.6, p_new, vh * 0.7, up * 0.5, knocked_one)
            if not knocked_one:
                hit = self._near_cube(level, p_new, cube, 0.9 * a)
                if hit is not None:
                    # Lands on or against a resting cube: shoves it hard.
                    knocked_one = self._shove(hit, level, t + dt, p_new, up * r.uniform(0.2, 0.5),
                                              m * up, cube)
                    vh = vh * 0.3
            t += dt
            p = p_new
            vz = up
        self.sc.mass_steps.append((t_contact, level, cube.mass_g))
        u = float(np.hypot(*vh))
        t_rest = t + r.uniform(0.02, 0.06)  # rocking on a face dies out
        if u < 0.02:
            return ("rest", t_rest, p, knocked_one)
        direction = vh / u
        if u > 0.22 and r.random() < 0.5:  # tumbles over an edge or two
            n_tumble = 1 + int(u > 0.35)
            for _ in range(n_tumble):
                dt = a * 1e-3 / u
                t += dt
                p = p + direction * a
                p, vh, _ = self._wall(p, vh)
                self._impact(t, level, m * u * r.uniform(0.3, 0.6), "tumble")
                if self._in_hole(level, p, 0.25 * a):
                    self.sc.mass_steps.append((t, level, -cube.mass_g))
                    return ("fall", t, p, direction * 0.05, 0.0, knocked_one)
                u *= r.uniform(0.4, 0.65)
        dist = u * u / (2 * tw.mu * G) * 1e3  # mm
        t_slide = u / (tw.mu * G)
        n_steps = max(2, int(dist / 1.0))
        for k in range(1, n_steps + 1):
            pk = p + direction * dist * k / n_steps
            frac = 1.0 - np.sqrt(max(0.0, 1.0 - k / n_steps))  # decelerating
            tk = t + t_slide * frac
            if self._in_hole(level, pk, 0.15 * a):  # centre of mass over the edge: tips in
                self.sc.mass_steps.append((tk, level, -cube.mass_g))
                self._impact(tk, level, m * 0.15, "edge")
                v_left = u * np.sqrt(max(0.0, 1.0 - k / n_steps))
                return ("fall", tk, pk, direction * max(v_left, 0.03), 0.0, knocked_one)
            if not knocked_one:
                hit = self._near_cube(level, pk, cube, a * 1.02)
                if hit is not None:
                    v_now = u * np.sqrt(max(0.0, 1.0 - k / n_steps))
                    knocked_one = self._shove(hit, level, tk, pk, v_now * 0.75, m * v_now, cube)
                    dist = dist * k / n_steps
                    t_slide *= frac
                    break
        if dist > 0.5:
            self.sc.slides.append((t, t_slide, level, min(1.0, u / 0.3)))
        p = p + direction * dist
        p, _, _ = self._wall(p, vh)
        return ("rest", t + t_slide + r.uniform(0.02, 0.06), p, knocked_one)

    def _clip(self, level: int, t: float, p: np.ndarray, by: Cube) -> bool:
        """A cube going down through the hole of ``level`` brushes a resting cube that
        overhangs the hole's edge and tips it in after itself (returns True if it did)."""
        tw = self.tw
        hs = tw.hole_side_mm[level] / 2
        a = tw.cube_edge_mm
        for c in self.sc.tower_cubes[level]:
            d = np.abs(c.pos - tw.hole_c_mm[level])
            if np.max(d) < hs + 0.3 * a and np.max(np.abs(c.pos - p)) < 1.1 * a \
                    and self.r.random() < 0.3:
                self._impact(t, level, by.mass_g * 1e-3 * 0.3, "clack")
                t_off = t + self.r.uniform(0.01, 0.05)
                self._knock_down(c, level, t, t_off, c.pos.copy(), self.r.normal(0, 0.03, 2),
                                 by)
                return True
        return False

    def _near_cube(self, level: int, p: np.ndarray, me: Cube, dist_mm: float) -> Cube | None:
        best, best_d = None, dist_mm
        for c in self.sc.tower_cubes[level]:
            if c is me:
                continue
            d = float(np.max(np.abs(c.pos - p)))
            if d < best_d:
                best, best_d = c, d
        return best

    def _shove(self, hit: Cube, level: int, t: float, p_from: np.ndarray, v: float,
               j_ns: float, by: Cube) -> bool:
        """A moving cube strikes resting ``hit`` on ``level`` at speed ``v``; returns True if it
        spent its knock (it did hit)."""
        r, tw = self.r, self.tw
        self._impact(t, level, j_ns * 0.6, "clack")
        d = hit.pos - p_from
        n = d / max(float(np.hypot(*d)), 1e-6)
        n = n + r.normal(0.0, 0.25, 2)
        n = n / max(float(np.hypot(*n)), 1e-6)
        dist = v * v / (2 * tw.mu * G) * 1e3
        steps = max(2, int(dist))
        for k in range(1, steps + 1):
            pk = hit.pos + n * dist * k / steps
            if self._in_hole(level, pk, 0.15 * tw.cube_edge_mm):
                t_off = t + (v / (tw.mu * G)) * (1.0 - np.sqrt(1.0 - k / steps))
                self._knock_down(hit, level, t, t_off, pk, n * 0.04, by)
                return True
        hit.pos, _, _ = self._wall(hit.pos + n * dist, np.zeros(2))
        return True

    def _knock_down(self, cube: Cube, level: int, t_knock: float, t_off: float, p: np.ndarray,
                    vh: np.ndarray, by: Cube) -> None:
        sc = self.sc
        sc.tower_cubes[level].remove(cube)
        sc.mass_steps.append((t_off, level, -cube.mass_g))
        new_level, t_rest, _ = self.descend(cube, level - 1, t_off, p, vh, 0.0,
                                            self.tw.module_h_mm, may_knock=True)
        sc.tower_cubes[new_level].append(cube)
        idx = len(sc.landings)
        sc.landings.append({"t": t_rest, "t_first_impact": t_knock, "floor": new_level,
                            "cubes": 1, "knocked": True, "from_floor": level,
                            "mass_g": cube.mass_g, "color": cube.color, "cid": cube.cid})
        cube.landing = idx
        sc.knockdowns.append({"t": t_knock, "landing": idx, "by_cid": by.cid,
                              "from_floor": level, "to_floor": new_level})

    # -- a throw -----------------------------------------------------------------------------
    def throw(self, t_release: float, color: str, style: str, mass_g: float | None = None
              ) -> Cube:
        """A player releases a cube above the entrance at ``t_release``."""
        sc, tw, r = self.sc, self.tw, self.r
        mass = mass_g if mass_g is not None else tw.cube_mass_g * (1.0 + r.normal(0.0, 0.04))
        cube = Cube(sc.next_cid, color, float(np.clip(mass, 0.27, 0.88)))
        sc.next_cid += 1
        # Release height above the entrance and speed by style.
        h, v0, vh_sd, p_rim = {"gentle": (0.02, 0.0, 0.04, 0.04), "normal": (0.10, 0.6, 0.12, 0.12),
                               "hard": (0.15, 2.0, 0.25, 0.22)}[style]
        h = h * r.uniform(0.5, 1.5)
        v0 = v0 * r.uniform(0.6, 1.4)
        vz = float(np.sqrt(v0 * v0 + 2 * G * h))
        t = t_release + (vz - v0) / G
        hs = tw.hole_side_mm[8] / 2 - tw.cube_edge_mm / 2
        p = tw.hole_c_mm[8] + r.uniform(-hs, hs, 2)
        vh = r.normal(0.0, vh_sd, 2)
        first_rim: float | None = None
        if r.random() < p_rim:  # strikes the entrance rim first (top roof, no sensor)
            self._impact(t, 8, cube.mass_g * 1e-3 * vz * r.uniform(0.6, 1.4), "rim")
            first_rim = t
            vz *= r.uniform(0.3, 0.6)
            vh = vh + r.normal(0.0, 0.2, 2)
        level, t_rest, first = self.descend(cube, 7, t, p, vh, vz, tw.module_h_mm - 2.0)
        sc.tower_cubes[level].append(cube)
        t_first = first_rim if first_rim is not None else (first if first is not None else t)
        idx = len(sc.landings)
        sc.landings.append({"t": t_rest, "t_first_impact": t_first, "floor": level, "cubes": 1,
                            "knocked": False, "mass_g": cube.mass_g, "color": color,
                            "style": style, "t_release": t_release, "cid": cube.cid})
        cube.landing = idx
        return cube


# --------------------------------------------------------------------------------------------
# People: throwing, lifting, taking out, knocking, talking.
# --------------------------------------------------------------------------------------------

class Players:
    """Sequences people's actions in time, driving :class:`Physics`."""

    def __init__(self, scene: Scene, rng: np.random.Generator) -> None:
        self.sc, self.r = scene, rng
        self.ph = Physics(scene, rng)
        self.style_p = np.array([0.35, 0.5, 0.15]) * rng.uniform(0.6, 1.4, 3)
        self.style_p /= self.style_p.sum()

    def style(self) -> str:
        return str(self.r.choice(["gentle", "normal", "hard"], p=self.style_p))

    def throw(self, t: float, color: str, style: str | None = None,
              mass_g: float | None = None) -> float:
        """Throw one cube; returns when it (and anything it knocked) rests."""
        self.hand_near_top(t)
        n_land = len(self.sc.landings)
        self.ph.throw(t, color, style or self.style(), mass_g)
        return max(x["t"] for x in self.sc.landings[n_land:])

    def hand_near_top(self, t: float) -> None:
        """Sometimes the thrower steadies the tower with the other hand."""
        if self.r.random() < 0.15:
            self.sc.shakes.append((t - self.r.uniform(0.3, 1.0), self.r.uniform(0.8, 2.0),
                                   self.r.uniform(0.02, 0.08), self.r.uniform(1.0, 4.0)))

    def table_knock(self, t: float, kind: str | None = None) -> None:
        """A knuckle, a mug or an elbow on the table: felt everywhere, no step."""
        r = self.r
        kind = kind or str(r.choice(["knuckle", "mug", "elbow"]))
        j = {"knuckle": 2e-3, "mug": 4e-3, "elbow": 8e-3}[kind] * r.uniform(0.5, 1.5)
        self.sc.impacts.append((t, 9, j, "table"))
        if kind == "knuckle" and r.random() < 0.5:  # knock-knock
            self.sc.impacts.append((t + r.uniform(0.12, 0.25), 9, j * r.uniform(0.6, 1.1),
                                    "table"))
        self.sc.knocks.append({"t": t, "kind": kind})

    def lean(self, t: float) -> None:
        """Someone leans on the table: slow, small shaking for a few seconds."""
        self.sc.shakes.append((t, self.r.uniform(1.5, 4.0), self.r.uniform(0.03, 0.12),
                               self.r.uniform(0.8, 3.0)))

    def open_level(self, t: float, k: int, take: list[list[Cube]] | None = None
                   ) -> tuple[float, list[Cube], list[Cube]]:
        """Lift modules k..7, look, take cubes out of level k in grabs, set them back.

        ``take``: the grabs (lists of cubes); default all cubes of level k in one to three
        grabs. Returns (t_closed, cubes taken, cubes that fell out of the lifted stack).
        """
        sc, r = self.sc, self.r
        if take is None:
            cubes = list(sc.tower_cubes[k])
            r.shuffle(cubes)
            take = []
            while cubes:
                n = int(min(len(cubes), r.choice([1, 2, 2, 3, 4])))
                take.append(cubes[:n])
                cubes = cubes[n:]
        t_lift = t + r.uniform(0.6, 1.5)  # hands on the tower first
        sc.shakes.append((t, t_lift - t + 0.3, r.uniform(0.05, 0.25), r.uniform(1.0, 5.0)))
        sc.lifts.append({"t": t_lift, "exposed": k})
        sc.impacts.append((t_lift, min(k + 1, 8), r.uniform(5e-4, 2e-3), "lift"))
        fell: list[Cube] = []
        if r.random() < 0.05:  # a cube near a hole falls out of the tilted stack onto the table
            lifted = [c for lv in range(k + 1, 8) for c in sc.tower_cubes[lv]]
            if lifted:
                c = lifted[int(r.integers(len(lifted)))]
                t_fall = t_lift + r.uniform(0.3, 1.5)
                sc.tower_cubes[c.level].remove(c)
                sc.mass_steps.append((t_fall, c.level, -c.mass_g))
                sc.removals.append({"t": t_fall, "floor": c.level, "cubes": 1,
                                    "mass_g": c.mass_g, "fell_out": True, "t_touch": t_fall,
                                    "t_untouch": t_fall})
                sc.impacts.append((t_fall + 0.1, 9, c.mass_g * 1e-3 * 1.5, "table"))
                fell.append(c)
        t_now = t_lift + r.uniform(1.5, 4.0)  # look in, name what is there
        taken: list[Cube] = []
        for grab in take:
            if not grab:
                continue
            dur = r.uniform(0.5, 1.2)
            t_leave = t_now + dur * r.uniform(0.45, 0.75)
            sc.presses.append((t_now, dur, k, r.uniform(3.0, 40.0)))
            sc.impacts.append((t_now, k, r.uniform(5e-5, 3e-4), "finger"))
            sc.impacts.append((t_leave - 0.05, k, r.uniform(3e-5, 2e-4), "scrape"))
            mass = 0.0
            for c in grab:
                sc.tower_cubes[k].remove(c)
                mass += c.mass_g
            sc.mass_steps.append((t_leave, k, -mass))
            sc.removals.append({"t": t_leave, "floor": k, "cubes": len(grab),
                                "mass_g": mass, "t_touch": t_now, "t_untouch": t_now + dur})
            taken += grab
            t_now += dur + r.uniform(0.8, 2.5)
        t_close = t_now + r.uniform(0.5, 1.5)
        sc.disconnects.append((t_lift, t_close, k))
        sc.closes.append({"t": t_close})
        sc.shakes.append((t_lift, t_close - t_lift + 0.6, r.uniform(0.05, 0.2),
                          r.uniform(1.0, 4.0)))
        j = (8 - k) * 0.02 * r.uniform(0.03, 0.15)  # stack of 20 g modules set down
        sc.impacts.append((t_close, max(k, 0), j * 0.08, "setdown"))
        if r.random() < 0.4:
            sc.impacts.append((t_close + r.uniform(0.03, 0.1), max(k, 0), j * 0.03, "setdown"))
        sc.shakes.append((t_close, 0.6, r.uniform(0.1, 0.4), sc.tower.sway_f_hz))
        return t_close, taken, fell

    def gap(self, lo: float, hi: float) -> float:
        return float(self.r.uniform(lo, hi))


def _room(sc: Scene, r: np.random.Generator, noisy: bool) -> None:
    """Talking, music, hum for the whole recording."""
    d = sc.duration
    t = QUIET_START_S + r.uniform(0.0, 10.0)
    talk_level = (2.0, 8.0) if noisy else (0.5, 2.5)
    while t < d:
        dur = r.uniform(1.0, 8.0)
        sc.talk.append((t, min(dur, d - t), r.uniform(*talk_level)))
        t += dur + r.uniform(2.0, 25.0 if noisy else 60.0)
    if noisy or r.random() < 0.15:
        t0 = r.uniform(QUIET_START_S, max(QUIET_START_S + 1, d * 0.3))
        sc.music.append((t0, d - t0, r.uniform(2.0, 10.0) if noisy else r.uniform(0.5, 2.0),
                         r.uniform(80.0, 130.0)))
    sc.hum_scale = r.uniform(4.0, 10.0) if noisy else r.uniform(0.5, 1.5)


def _next_clear(sc: Scene, t: float) -> float:
    return max([t] + [x["t"] for x in sc.landings])


def _scripted(sc: Scene, pl: Players, kind: str) -> None:
    """single / rapid / noisy / acoustic: throws with pauses (and noise)."""
    r, d = pl.r, sc.duration
    colours = list(r.choice(COLOURS, size=3, replace=False)) + ["red"]
    t = QUIET_START_S + r.uniform(0.0, 2.0)
    while t < d - 4.0:
        if kind == "rapid" or (kind == "acoustic" and r.random() < 0.25):
            n = int(r.integers(3, 7))
            t_end = t
            style = pl.style() if r.random() < 0.5 else None  # one person, one way of throwing
            for i in range(n):
                ti = t + i * r.uniform(0.3, 0.8) if i else t
                t = ti
                if ti > d - 3.0:
                    break
                t_end = max(t_end, pl.throw(ti, str(r.choice(colours)), style))
                if r.random() < 0.06:  # two cubes let go together
                    t_end = max(t_end, pl.throw(ti + r.uniform(0.0, 0.06),
                                                str(r.choice(colours)), style))
            t = t_end + pl.gap(3.0, 8.0)
        else:
            t_rest = pl.throw(t, str(r.choice(colours)))
            t = t_rest + pl.gap(2.5, 7.0)
        if kind in ("noisy", "acoustic") and r.random() < (0.5 if kind == "noisy" else 0.2):
            tk = t - pl.gap(0.8, 2.0) * r.random()
            if QUIET_START_S < tk < d - 1.0:
                pl.table_knock(tk)
        if kind == "noisy" and r.random() < 0.15:
            pl.lean(t - 1.0)
        # Cubes pile up; someone occasionally empties a level (not in acoustic: no loads).
        if kind != "acoustic" and r.random() < 0.05 and t < d - 15:
            full = [k for k in range(8) if sc.tower_cubes[k]]
            if full:
                t_close, taken, fell = pl.open_level(t, int(r.choice(full)))
                t = t_close + pl.gap(1.5, 3.0)
                for c in taken + fell:
                    if t > d - 4.0:
                        break
                    t = pl.throw(t, c.color, None, c.mass_g) + pl.gap(0.2, 1.5) \
                        if r.random() < 0.3 else t + pl.gap(0.6, 1.8)
                t = _next_clear(sc, t) + pl.gap(2.0, 4.0)


def _game(sc: Scene, pl: Players) -> None:
    """Mord im Arosa by the rules, as long as the recording lasts (new games follow)."""
    r, d = pl.r, sc.duration
    t = QUIET_START_S + r.uniform(0.0, 3.0)
    log: list[dict[str, Any]] = []
    games = 0
    while t < d - 10.0:
        games += 1
        n_players = int(r.integers(3, 6))
        players = [str(c) for c in r.choice(COLOURS, size=n_players, replace=False)]
        supply = dict.fromkeys(players, 20)
        sheet = {p: [0] * 8 for p in players}
        in_hand: dict[str, int] = dict.fromkeys(players, 0)
        crime: set[int] = set()
        victims_found = 0
        if games == 1:
            sc.game = {"players": players, "log": log}
        stop = False

        def throw(color: str, t0: float, quick: bool = False) -> float:
            nonlocal stop
            if t0 > d - 4.0:
                stop = True
                return t0
            t_rest = pl.throw(t0, color)
            log.append({"do": "throw", "color": color, "t": t0,
                        "floor": sc.landings[-1]["floor"] if not sc.landings[-1]["knocked"]
                        else next(x["floor"] for x in reversed(sc.landings)
                                  if not x["knocked"])})
            return t0 + (r.uniform(0.4, 1.2) if quick else 0.0) if quick else t_rest

        # Prologue: the last to hold a knife throws both victims, then two clues each.
        for _ in range(2):
            t = throw("red", t) + pl.gap(1.0, 3.0)
        for p in players:
            for _ in range(2):
                supply[p] -= 1
                t = throw(p, t) + pl.gap(1.0, 4.0)
        turn = int(r.integers(n_players))
        act = 1
        while not stop and t < d - 10.0:
            me = players[turn]
            t = _next_clear(sc, t) + pl.gap(2.0, 6.0)  # talk, decide
            on_floor = [[c for c in sc.tower_cubes[k]] for k in range(8)]
            owed: list[str] = []
            if act == 1:
                reds = [k for k in range(8) if any(c.color == "red" for c in on_floor[k])]
                k = int(r.choice(reds)) if reds and r.random() < 0.45 else int(r.integers(8))
                log.append({"do": "inspect", "by": me, "floor": k, "t": t})
                found = [c for c in on_floor[k] if c.color == "red"]
                if found:
                    crime.add(k)
                    victims_found += len(found)
                    for p in players:
                        if p != me:
                            n = sum(c.color == p for c in on_floor[k])
                            n = min(n, supply[p])
                            supply[p] -= n
                            sheet[p][k] += n
                else:
                    owed.append(me)
            else:
                mine = [k for k in range(8) if sheet[me][k] > 0]
                if mine and r.random() < 0.4:
                    k = int(r.choice(mine))
                    log.append({"do": "cover", "by": me, "floor": k, "t": t})
                    n = min(sum(c.color == me for c in on_floor[k]), sheet[me][k])
                    sheet[me][k] -= n
                    supply[me] += n
                    if not any(c.color == me for c in on_floor[k]):
                        owed.append(me)
                else:
                    others = [p for p in players if p != me]
                    sus = list(r.choice(others, size=int(r.integers(1, min(3, len(others)) + 1)),
                                        replace=False))
                    k = int(r.integers(8))
                    log.append({"do": "suspect", "by": me, "suspects": sus, "floor": k, "t": t})
                    if k == 0 and not any(c.color == me for c in on_floor[0]):
                        owed += [me] * len(sus)
                    else:
                        for s in sus:
                            n = sum(c.color == s for c in on_floor[k])
                            if n == 0:
                                owed.append(me)
                            n = min(n, supply[s])
                            supply[s] -= n
                            sheet[s][k] += n
            take = [c for c in on_floor[k]]
            grabs: list[list[Cube]] = []
            r.shuffle(take)
            while take:
                n = int(min(len(take), r.choice([1, 2, 3, 4])))
                grabs.append(take[:n])
                take = take[n:]
            t_close, taken, fell = pl.open_level(t, k, grabs)
            t = t_close + pl.gap(1.0, 3.0)
            back = [c for c in taken + fell if c.color != "red"]
            rr = [c for c in taken if c.color == "red"]
            if rr and act == 2:
                back += rr  # victims already on the sheet are not in the tower in act 2
            for c in back:
                in_hand[c.color] = in_hand.get(c.color, 0) + 1
            # Throw back one after another, quickly (the rapid part of a real game).
            for c in back:
                t = throw(c.color, t, quick=True)
                in_hand[c.color] -= 1
                if stop:
                    break
            for p in owed:
                if supply[p] <= 0:
                    break
                supply[p] -= 1
                t = _next_clear(sc, t) + pl.gap(0.8, 2.5)
                t = throw(p, t)
            t = _next_clear(sc, t)
            if act == 1 and victims_found >= 2:
                act = 2
            if any(v <= 0 for v in supply.values()) or any(sum(s) >= 10 for s in sheet.values()):
                break
            if r.random() < 0.1:
                pl.table_knock(t + pl.gap(0.5, 3.0), "mug")
            if r.random() < 0.05:
                t += pl.gap(15.0, 60.0)  # someone fetches a drink
            turn = (turn + 1) % n_players
        if stop or t >= d - 10.0:
            break
        # Game over: reveal and empty the tower from the top down, then a new game.
        for k in range(7, -1, -1):
            if t > d - 12.0:
                break
            if sc.tower_cubes[k]:
                t, _, _ = pl.open_level(t + pl.gap(1.0, 3.0), k)
        t += pl.gap(10.0, 40.0)
    sc.game.setdefault("players", [])
    sc.game.setdefault("log", log)
    sc.game["games"] = games


def build_scene(tower: Tower, scenario: str, duration: float, seed: int) -> Scene:
    """What happens in one recording (physics and people), deterministic in its arguments."""
    key = "damaged" if scenario == "damagedclean" else scenario
    r = _rng(seed, "scene", key, int(duration * 1000))
    sc = Scene(tower, key, duration, seed)
    pl = Players(sc, r)
    _room(sc, r, noisy=key == "noisy")
    if key in ("game", "long", "damaged"):
        _game(sc, pl)
    else:
        _scripted(sc, pl, key)
    if key == "long":
        sc.warm = bool(seed % 2 == 0)  # odd seeds: the kit was just switched on
        sc.room_temp_k = float(r.uniform(0.5, 2.0))
        for _ in range(int(duration / 240)):
            pl.table_knock(float(r.uniform(QUIET_START_S + 5, duration - 2)))
    else:
        sc.room_temp_k = float(r.uniform(0.0, 0.2)) * duration / 120.0
    return sc


# --------------------------------------------------------------------------------------------
# The load chain: plate + cell, HX711 sinc4 at its own rate, firmware on a shared SCK.
# --------------------------------------------------------------------------------------------

def _resonator(x: np.ndarray, f_hz: float, zeta: float, fs: float) -> np.ndarray:
    """Unity-DC-gain second-order low-pass (mass-spring-damper), impulse-invariant poles."""
    w = 2 * np.pi * f_hz
    rad = np.exp(-zeta * w / fs)
    theta = w * np.sqrt(1 - zeta * zeta) / fs
    a1, a2 = -2 * rad * np.cos(theta), rad * rad
    return np.asarray(lfilter([0.0, 1 + a1 + a2], [1.0, a1, a2], x))


def _boxcar(x: np.ndarray, width_s: float, fs: float) -> np.ndarray:
    """Moving average over the last ``width_s`` (fractional width), on a uniform grid."""
    c = np.concatenate([[0.0], np.cumsum(x)]) / fs
    tt = np.arange(len(x) + 1) / fs
    back = np.interp(tt[1:] - width_s, tt, c, left=0.0)
    return (c[1:] - back) / width_s


def _ou(rng: np.random.Generator, n: int, fs: float, tau_s: float, sd: float) -> np.ndarray:
    """Ornstein-Uhlenbeck noise (sd, correlation time tau) on n samples."""
    a = np.exp(-1.0 / (fs * tau_s))
    w = rng.normal(0.0, sd * np.sqrt(1 - a * a), n)
    return np.asarray(lfilter([1.0], [1.0, -a], w))


def load_readings(tw: Tower, sc: Scene, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The firmware's LOAD messages: read times (s), valid bits, (M, 8) int counts."""
    fs = LOAD_SIM_HZ
    d = sc.duration
    n = int(d * fs) + 1
    tt = np.arange(n) / fs
    r = _rng(seed, "load", sc.scenario, int(d * 1000))
    static = np.zeros((8, n))
    for t, lv, g in sc.mass_steps:
        i = int(np.ceil(t * fs))
        if 0 <= lv < 8 and i < n:
            static[lv, i:] += g
    force = static.copy()
    # Impulses (N*s) as gram-force over one sample; the plate rings on its cell.
    sway_in = np.zeros(n)
    for t, src, j, kind in sc.impacts:
        i = int(round(t * fs))
        if not 0 <= i < n:
            continue
        grams = j / 9.81e-3 * fs
        if src < 8 and kind not in ("setdown", "lift", "table"):
            force[src, i] += grams
        elif src < 8:
            force[src, i] += 0.02 * grams
        sway_in[i] += j * (3.0 if kind in ("table", "setdown") else 1.0)
    for t, dur, lv, g in sc.presses:  # a finger on the plate while picking cubes up
        i0, i1 = int(t * fs), min(n, int((t + dur) * fs))
        if i1 > i0:
            ph = np.linspace(0, 1, i1 - i0)
            force[lv, i0:i1] += g * np.sin(np.pi * ph) ** 2 * (1 + 0.2 * np.sin(
                2 * np.pi * r.uniform(3, 8) * ph * dur))
    # The stack rocks: impulses (N*s) into ~150 g of tower -> velocity; acceleration rings.
    dv = sway_in / 0.15
    acc = np.gradient(_resonator(dv * fs, tw.sway_f_hz, tw.sway_zeta, fs)) * fs / (
        2 * np.pi * tw.sway_f_hz) * 0.3
    for t, dur, amp, f in sc.shakes:  # hands and leaning: slow accelerations of the stack
        i0, i1 = int(max(t, 0) * fs), min(n, int((t + dur) * fs))
        if i1 > i0:
            m = i1 - i0
            env = np.sin(np.pi * np.linspace(0, 1, m)) ** 2
            acc[i0:i1] += amp * env * _ou(r, m, fs, 1.0 / (2 * np.pi * f), 1.0)
    # Room temperature (slow), drives zero drift; warm-up after a cold start.
    temp = np.interp(tt, np.linspace(0, d, 6), r.normal(0.0, 0.5, 6)) * sc.room_temp_k
    read_t, valid_bits, values = _hx711_and_firmware(tw, sc, r, tt, force, static, acc, temp)
    return read_t, valid_bits, values


def _hx711_and_firmware(tw: Tower, sc: Scene, r: np.random.Generator, tt: np.ndarray,
                        force: np.ndarray, static: np.ndarray, acc: np.ndarray,
                        temp: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    fs, d = LOAD_SIM_HZ, sc.duration
    conv_t: list[np.ndarray] = []
    conv_v: list[np.ndarray] = []
    lp_a = np.exp(-1.0 / (fs * tw.creep_tau_s))
    for c in range(8):
        x = _resonator(force[c], float(tw.plate_f_hz[c]), float(tw.plate_zeta[c]), fs)
        x += (tw.plate_mass_g[c] + static[c]) * tw.sway_part[c] * acc / G
        x += tw.creep_frac[c] * np.asarray(lfilter([1 - lp_a], [1.0, -lp_a], static[c]))
        x += tw.temp_coef_g[c] * temp
        if not sc.warm:
            x += tw.warmup_g[c] * (1.0 - np.exp(-tt / tw.warmup_tau_s))
        period = 1.0 / tw.load_rates[c]
        y = x
        for _ in range(4):  # sinc^4 decimation filter: settles in 4 output periods
            y = _boxcar(y, float(period), fs)
        tc = tw.load_phase[c] + np.arange(int(d * tw.load_rates[c]) + 2) * period
        tc = tc[tc < d]
        v = np.interp(tc, tt, y)
        v += r.normal(0.0, float(tw.noise_g[c]), len(tc))
        v += _ou(r, len(tc), float(tw.load_rates[c]), 3.0, float(tw.flicker_g[c]))
        conv_t.append(tc)
        conv_v.append(v)
    # Firmware: waits for HX711 0 (level 0, in the base, always there), then clocks all
    # eight in parallel on the shared SCK (25 pulses, ~0.3 ms); a chip not ready is not read.
    read_t = conv_t[0] + 3e-4
    read_t = read_t[read_t > 0.004]
    m = len(read_t)
    values = np.zeros((m, 8), np.int64)
    valid = np.zeros((m, 8), bool)
    for c in range(8):
        idx = np.searchsorted(conv_t[c], read_t - 3e-4, side="right") - 1
        prev = np.concatenate([[-1], idx[:-1]])
        fresh = (idx >= 0) & (idx > prev)
        ok = fresh.copy()
        for t_lift, t_close, k in sc.disconnects:
            if c > k:
                # Spring contacts part on lifting; on setting down they bounce for ~10-60 ms,
                # then the HX711 powers up and needs 4 conversions to give settled data.
                t_on = t_close + r.uniform(0.01, 0.06) + 4.0 / tw.load_rates[c]
                ok &= ~((read_t >= t_lift - 0.005 * r.random()) & (read_t < t_on))
                # Re-excited bridge warms again: a few mg of zero shift that dies away.
                after = conv_t[c] > t_close
                conv_v[c][after] += r.normal(0.0, 0.008) * np.exp(
                    -(conv_t[c][after] - t_close) / r.uniform(20.0, 60.0))
        counts = np.round(tw.offset[c] + tw.cpg[c] * conv_v[c]).astype(np.int64)
        counts = np.clip(counts, -S24_MAX - 1, S24_MAX)
        sel = np.clip(idx, 0, None)
        values[:, c] = np.where(ok, counts[sel], 0)
        valid[:, c] = ok
    bits = (valid * (1 << np.arange(8))[None, :]).sum(axis=1).astype(np.uint8)
    return read_t, bits, values


# --------------------------------------------------------------------------------------------
# The piezo chain: plate modes, crosstalk, AC coupling, 10-bit ADC.
# --------------------------------------------------------------------------------------------

def piezo_sets(tw: Tower, sc: Scene, seed: int) -> np.ndarray:
    """(N, 8) ADC codes, N = duration * rate sample sets."""
    rate = float(tw.piezo_rate_hello)
    n = int(sc.duration * rate)
    r = _rng(seed, "piezo", sc.scenario, int(sc.duration * 1000))
    sig = np.zeros((n, 8), np.float64)
    skew = np.arange(8) / (8 * rate)  # channels are converted one after another
    burst_s = 0.12
    nb = int(burst_s * rate)
    tb = np.arange(nb) / rate
    for t, src, j, kind in sc.impacts:
        i0 = int(np.ceil((t - 0.0) * rate))
        if i0 >= n or i0 + nb <= 0:
            continue
        gain = tw.xtalk[src] * tw.piezo_gain * j
        if kind in ("lift", "setdown", "finger", "scrape", "table"):
            gain = gain * {"lift": 0.3, "setdown": 0.06, "finger": 0.5, "scrape": 0.6,
                           "table": 0.2}[kind]
        if kind == "setdown":
            gain = gain + tw.xtalk[9] * tw.piezo_gain * j * 0.03
        contact = r.uniform(3e-4, 1.2e-3)
        lo, hi = max(0, -i0), min(nb, n - i0)
        for c in range(8):
            if gain[c] < 0.3:
                continue
            delay = skew[c] + (0.0 if src == c else r.uniform(1e-4, 5e-4))
            tc = tb + (i0 / rate - t) - delay
            w = np.zeros(nb)
            for mo in range(3):
                f = tw.modes_hz[c, mo]
                shape = 1.0 / (1.0 + (f * contact) ** 2)
                if src != c:
                    shape *= 0.6 ** mo  # walls pass the lower modes better
                w += tw.modes_amp[c, mo] * shape * np.exp(-np.clip(tc, 0, None)
                                                          / tw.modes_tau_s[c, mo]) \
                    * np.sin(2 * np.pi * f * tc + r.uniform(-0.3, 0.3))
            w[tc < 0] = 0.0
            sig[i0 + lo:i0 + hi, c] += gain[c] * w[lo:hi]
    for t, dur, lv, amp in sc.slides:  # wood sliding on card: a faint rasp
        i0, i1 = int(t * rate), min(n, int((t + dur) * rate))
        if i1 > i0:
            noise = r.normal(0.0, 1.0, i1 - i0)
            noise = np.asarray(lfilter([1.0, -0.9], [1.0], noise))
            env = np.linspace(1, 0.2, i1 - i0)
            for c in range(8):
                sig[i0:i1, c] += 4.0 * amp * tw.xtalk[lv, c] * tw.piezo_gain[c] / 3.8e5 \
                    * env * noise
    tt = np.arange(n) / rate
    # Mains hum (50/60 Hz and the third harmonic), picked up by the high-impedance leads.
    hum_env = 1.0 + 0.3 * np.sin(2 * np.pi * tt / r.uniform(20, 60))
    for c in range(8):
        a = tw.hum_counts[c] * sc.hum_scale
        sig[:, c] += a * hum_env * (np.sin(2 * np.pi * tw.hum_hz * tt + r.uniform(0, 6.3))
                                    + 0.3 * np.sin(2 * np.pi * 3 * tw.hum_hz * tt))
    couple = np.exp(r.normal(0.0, 0.3, 8))  # air to plate coupling per level
    for t0, dur, lvl in sc.talk:  # speech: syllables at 4-6/s, 150-3000 Hz
        i0, i1 = int(t0 * rate), min(n, int((t0 + dur) * rate))
        if i1 <= i0:
            continue
        m = i1 - i0
        voice = np.asarray(lfilter([1.0, 0.0, -1.0], [1.0, -1.6, 0.8], r.normal(0, 1, m)))
        voice /= max(voice.std(), 1e-9)
        syll = np.clip(np.sin(2 * np.pi * r.uniform(4, 6) * tt[:m] + r.uniform(0, 6)), 0, None)
        sig[i0:i1] += (lvl * voice * syll)[:, None] * couple[None, :]
    for t0, dur, lvl, bpm in sc.music:  # music: tones and a kick drum through the table
        i0, i1 = int(t0 * rate), min(n, int((t0 + dur) * rate))
        if i1 <= i0:
            continue
        ts = tt[i0:i1] - t0
        tone = sum(np.sin(2 * np.pi * f * ts) for f in r.uniform(110, 880, 3)) / 3
        beat = (ts * bpm / 60) % 1.0
        kick = np.exp(-beat * 60 / bpm / 0.04) * np.sin(2 * np.pi * 55 * beat * 60 / bpm)
        sig[i0:i1] += (lvl * (0.6 * tone + 1.5 * kick))[:, None] * (couple * tw.xtalk[9]
                                                                     / tw.xtalk[9].max())[None, :]
    for c in range(8):  # AC coupling (piezo capacitance into the bias resistors)
        a = np.exp(-2 * np.pi * tw.hpf_hz[c] / rate)
        sig[:, c] = lfilter([(1 + a) / 2, -(1 + a) / 2], [1.0, -a], sig[:, c])
    sig += r.normal(0.0, 1.0, (n, 8)) * tw.piezo_noise[None, :]
    codes = np.clip(np.round(sig + tw.piezo_bias[None, :]), 0, 1023)
    return codes.astype(np.uint16)


# --------------------------------------------------------------------------------------------
# Messages, bytes, damage.
# --------------------------------------------------------------------------------------------

@dataclass
class Stream:
    """Encoded frames of one recording, in send order, with their stream times."""

    frames: list[bytes]
    times: np.ndarray  # stream s (data time; STATUS/HELLO: send time)
    kinds: np.ndarray  # message type
    t_us0: int


def _rows_with_header(mtype: int, seq: np.ndarray, body: np.ndarray) -> list[bytes]:
    n = len(seq)
    if n == 0:
        return []
    rows = np.zeros((n, 3 + body.shape[1] + 2), np.uint8)
    rows[:, 0] = mtype
    rows[:, 1] = seq & 0xFF
    rows[:, 2] = (seq >> 8) & 0xFF
    rows[:, 3:3 + body.shape[1]] = body
    crc = crc16_rows(rows[:, :-2])
    rows[:, -2] = crc & 0xFF
    rows[:, -1] = crc >> 8
    enc = cobs_encode_rows(rows)
    return [row.tobytes() for row in enc]


def _u32(x: np.ndarray) -> np.ndarray:
    return (x.astype(np.uint64)[:, None] >> (8 * np.arange(4, dtype=np.uint64))[None, :]
            & np.uint64(0xFF)).astype(np.uint8)


@dataclass
class Signals:
    """What the device measured: piezo codes and the firmware's LOAD readings."""

    codes: np.ndarray  # (N, 8) uint16
    load_t: np.ndarray  # stream s
    load_valid: np.ndarray  # uint8
    load_values: np.ndarray  # (M, 8) counts


def measure(tw: Tower, sc: Scene, seed: int, *, with_load: bool) -> Signals:
    """Run both sensor chains over the scene."""
    codes = piezo_sets(tw, sc, seed)
    if with_load:
        l_t, l_valid, l_val = load_readings(tw, sc, seed)
    else:
        l_t, l_valid, l_val = np.zeros(0), np.zeros(0, np.uint8), np.zeros((0, 8), np.int64)
    return Signals(codes, l_t, l_valid, l_val)


def build_stream(tw: Tower, sc: Scene, sig: Signals, *, n_load_hello: int, t_us0: int,
                 ack_first: bool, t_from: float = 0.0) -> Stream:
    """All messages of the recording, encoded, in the order the device sends them.

    ``t_from``: only data from this stream time on (a device that booted then); the clock
    reads ``t_us0`` at stream time 0 (negative: it started later).
    """
    rate = tw.piezo_rate_hello
    k = tw.sets_per_msg
    n_msg = len(sig.codes) // k
    p_t = np.arange(n_msg) * k / rate  # stream time of each message's first set
    keep_p = p_t >= t_from
    codes = sig.codes[:n_msg * k].reshape(n_msg, k, 8)[keep_p]
    p_t = p_t[keep_p]
    n_msg = len(p_t)
    p_send = p_t + (k - 1) / rate + 1e-4
    keep_l = sig.load_t >= t_from
    l_t, l_valid, l_val = sig.load_t[keep_l], sig.load_valid[keep_l], sig.load_values[keep_l]
    l_send = l_t + 2e-4
    s_send = np.arange(1.0, sc.duration, 1.0) + 0.0007
    s_send = s_send[s_send >= t_from + 0.5]
    # Send order: HELLO (and ACK) first, then by send time.
    kinds = np.concatenate([np.full(n_msg, T_PIEZO), np.full(len(l_t), T_LOAD),
                            np.full(len(s_send), T_STATUS)])
    send = np.concatenate([p_send, l_send, s_send])
    data_t = np.concatenate([p_t, l_t, s_send])
    order = np.argsort(send, kind="stable")
    n_head = 2 if ack_first else 1
    seq_all = (n_head + np.arange(len(order))) % 65536
    seq_of = np.empty(len(order), np.int64)
    seq_of[order] = seq_all
    nP, nL = n_msg, len(l_t)
    # PIEZO bodies
    tus = (t_us0 + np.round(p_t * 1e6).astype(np.int64)) % 2**32
    body = np.zeros((nP, 5 + k * 16), np.uint8)
    body[:, :4] = _u32(tus)
    body[:, 4] = k
    body[:, 5:] = codes.reshape(nP, k * 8).astype("<u2").view(np.uint8).reshape(nP, k * 16)
    enc_p = _rows_with_header(T_PIEZO, seq_of[:nP], body)
    # LOAD bodies
    if nL:
        tus = (t_us0 + np.round(l_t * 1e6).astype(np.int64)) % 2**32
        body = np.zeros((nL, 5 + 24), np.uint8)
        body[:, :4] = _u32(tus)
        body[:, 4] = l_valid
        v = (l_val & 0xFFFFFF).astype(np.uint32)
        for c in range(8):
            for b in range(3):
                body[:, 5 + 3 * c + b] = (v[:, c] >> (8 * b)) & 0xFF
        enc_l = _rows_with_header(T_LOAD, seq_of[nP:nP + nL], body)
    else:
        enc_l = []
    # STATUS: uptime, overruns, tx dropped, load timeouts, cpu %, flags
    ns = len(s_send)
    up_ms = ((t_us0 + np.round(s_send * 1e6).astype(np.int64)) // 1000) % 2**32
    timeouts = np.zeros(ns, np.int64)
    if nL:
        missing = 8 - np.array([bin(x).count("1") for x in range(256)])[l_valid]
        cum = np.cumsum(missing)
        idx = np.searchsorted(l_t, s_send, side="right") - 1
        timeouts = np.where(idx >= 0, cum[np.clip(idx, 0, None)], 0) % 65536
    body = np.zeros((ns, 12), np.uint8)
    body[:, :4] = _u32(up_ms)
    body[:, 8] = timeouts & 0xFF
    body[:, 9] = timeouts >> 8
    body[:, 10] = 38 + (np.arange(ns) % 7)
    enc_s = _rows_with_header(T_STATUS, seq_of[nP + nL:], body)
    all_enc = enc_p + enc_l + enc_s
    frames = [all_enc[i] for i in order]
    hello_body = bytes([1, *tw.fw, 8, n_load_hello]) + tw.piezo_rate_hello.to_bytes(2, "little") \
        + tw.load_rate_hello.to_bytes(2, "little") + bytes([10]) + tw.device_id
    head = [frame(bytes([T_HELLO]) + (0).to_bytes(2, "little") + hello_body)]
    if ack_first:  # the host asked GET_INFO of a device that had been running for a while
        head.append(frame(bytes([T_ACK]) + (1).to_bytes(2, "little")
                          + bytes([0x81, 0, 0, 0])))
    times = np.concatenate([np.full(len(head), t_from), data_t[order]])
    kinds_out = np.concatenate([np.array([T_HELLO, T_ACK][:len(head)]), kinds[order]])
    return Stream(head + frames, times, kinds_out, t_us0)


def damage_stream(clean: Stream, tw: Tower, sc: Scene, sig: Signals, seed: int
                  ) -> tuple[bytes, list[dict[str, Any]]]:
    """The clean twin's bytes with a few kinds of real damage; returns (bytes, spans)."""
    r = _rng(seed, "damage")
    d = sc.duration
    frames: list[bytes] = list(clean.frames)
    times = clean.times
    spans: list[dict[str, Any]] = []
    n = len(frames)
    drop = np.zeros(n, bool)
    extra_after: dict[int, bytes] = {}
    replace: dict[int, bytes] = {}
    kinds = ["bitflip", "lost", "garbage", "duplicate", "stall", "bitflip", "lost"]
    r.shuffle(kinds)
    n_spans = max(3, min(len(kinds), int(d / 15)))
    slots = np.sort(r.uniform(6.0, max(d - 4.0, 7.0), n_spans))
    for kind, t0 in zip(kinds[:n_spans], slots, strict=False):
        i0 = int(np.searchsorted(times, t0))
        if i0 >= n - 2:
            continue
        if kind == "bitflip":  # EMI on the USB cable's far side: a few bits of one frame
            fr = bytearray(frames[i0])
            for _ in range(int(r.integers(1, 4))):
                pos = int(r.integers(0, len(fr) - 1))
                fr[pos] ^= 1 << int(r.integers(8))
            replace[i0] = bytes(fr)
            spans.append({"t_start": float(times[i0]), "t_end": float(times[i0]), "kind": kind})
        elif kind in ("lost", "stall"):  # host buffer overrun / laptop busy: bytes gone
            dur = r.uniform(0.02, 0.3) if kind == "lost" else r.uniform(1.0, 4.0)
            i1 = int(np.searchsorted(times, t0 + dur))
            i1 = max(i1, i0 + 1)
            fr_a, fr_b = frames[i0], frames[min(i1, n - 1)]
            cut_a = int(r.integers(1, len(fr_a) - 1))
            cut_b = int(r.integers(1, len(fr_b) - 1))
            replace[i0] = fr_a[:cut_a]
            drop[i0 + 1:i1] = True
            if i1 < n:
                replace[i1] = fr_b[cut_b:]
            t_last = float(times[min(i1, n - 1)])
            spans.append({"t_start": float(times[i0]), "t_end": t_last, "kind": kind})
        elif kind == "garbage":  # noise bytes while a cable is wiggled
            junk = r.integers(0, 256, int(r.integers(5, 200))).astype(np.uint8).tobytes()
            extra_after[i0] = junk
            spans.append({"t_start": float(times[i0]), "t_end": float(times[i0 + 1]),
                          "kind": kind})
        elif kind == "duplicate":  # a USB driver resends a block
            i1 = min(n - 1, i0 + int(r.integers(2, 20)))
            extra_after[i1] = b"".join(frames[i0:i1 + 1])
            spans.append({"t_start": float(times[i0]), "t_end": float(times[i1]),
                          "kind": kind})
    out = bytearray()
    # The file begins mid-frame: the tail of a frame still in the USB chip from before.
    pre = frames[int(r.integers(2, 40))]
    out += pre[int(r.integers(1, len(pre) - 1)):]
    spans.append({"t_start": 0.0, "t_end": 0.0, "kind": "midframe"})
    # A reboot (brown-out when someone plugs a lamp in) in the last third, if long enough.
    reboot_i = n
    if d >= 40.0:
        t_rb = float(r.uniform(d * 0.65, d * 0.8))
        reboot_i = int(np.searchsorted(times, t_rb))
    for i in range(min(n, reboot_i)):
        if drop[i]:
            continue
        out += replace.get(i, frames[i])
        if i in extra_after:
            out += extra_after[i]
    if reboot_i < n:
        t_last = float(times[reboot_i - 1])
        boot_s = float(r.uniform(1.2, 2.5))  # bootloader wait, setup, HX711 power-up
        t_first = t_last + boot_s
        t_us_after = int(r.integers(250_000, 600_000))
        t_boot = t_first - t_us_after / 1e6
        # Same physics, a new clock (zero at boot), seq from 0 with a new HELLO.
        after = build_stream(tw, sc, sig, n_load_hello=8, t_us0=-int(round(t_boot * 1e6)),
                             ack_first=False, t_from=t_first)
        out += b"".join(after.frames)
        t_data = float(after.times[1])
        spans.append({"t_start": t_last, "t_end": t_data, "kind": "reboot",
                      "gap_s": t_data - t_last,
                      "t_us_after": int(round(t_data * 1e6)) - int(round(t_boot * 1e6))})
    return bytes(out), spans


# --------------------------------------------------------------------------------------------
# Truth, recordings, command line.
# --------------------------------------------------------------------------------------------

def _r6(x: float) -> float:
    return round(float(x), 6)


def truth_of(sc: Scene, *, scenario: str, n_load: int, clock_wraps: bool) -> dict[str, Any]:
    """The truth file (towerear-crosscheck-truth/1) for a scene."""
    d = sc.duration
    lands = [dict(x) for x in sc.landings if x["t"] < d and x["t_first_impact"] >= 4.0]
    lands.sort(key=lambda x: (x["t"], x["cid"]))
    kds = []
    for k in sc.knockdowns:
        knocked = next((i for i, x in enumerate(lands) if x["knocked"] and x["cid"] ==
                        next(y["cid"] for y in sc.landings if y is sc.landings[k["landing"]])
                        and abs(x["t_first_impact"] - k["t"]) < 1e-9), None)
        by = next((i for i, x in enumerate(lands) if x["cid"] == k["by_cid"]
                   and x["t_first_impact"] - 1e-9 <= k["t"] <= x["t"] + 1e-9), None)
        if knocked is None or by is None:
            if knocked is not None:  # its cause fell outside the recording: not a knock-down
                lands[knocked]["knocked"] = False
            continue
        kds.append({"t": _r6(k["t"]), "landing": knocked, "by": by,
                    "from_floor": k["from_floor"], "to_floor": k["to_floor"]})
    # A knocked landing whose knock-down was kept is only counted once.
    keep_knocked = {k["landing"] for k in kds}
    for i, x in enumerate(lands):
        if x["knocked"] and i not in keep_knocked:
            x["knocked"] = False
        x["caused_knockdown"] = any(k["by"] == i for k in kds)
    for x in lands:
        for key in ("t", "t_first_impact", "t_release", "mass_g"):
            if key in x:
                x[key] = _r6(x[key])
    inside = [(lo, hi, k) for lo, hi, k in sc.disconnects if lo < d]
    lifts = [{"t": _r6(x["t"]), "exposed": x["exposed"]} for x in sc.lifts if x["t"] < d]
    closes = [{"t": _r6(x["t"])} for x in sc.closes if x["t"] < d]
    removals = [{**x, "t": _r6(x["t"]), "t_touch": _r6(x["t_touch"]),
                 "t_untouch": _r6(x["t_untouch"]), "mass_g": _r6(x["mass_g"])}
                for x in sc.removals if x["t"] < d]
    knocks = [{"t": _r6(x["t"]), "kind": x["kind"]} for x in sc.knocks if 4.0 <= x["t"] < d]
    tw = sc.tower
    return {
        "format": TRUTH_FORMAT, "model": "Q", "scenario": scenario, "seed": sc.seed,
        "duration_s": d, "cells": tw.cells, "n_load": n_load,
        "landings": lands, "knockdowns": kds, "removals": removals, "lifts": lifts,
        "closes": closes, "knocks": knocks,
        "open_spans": [[_r6(lo), _r6(min(hi, d)), k] for lo, hi, k in inside],
        "talk": [[_r6(a), _r6(b), _r6(c)] for a, b, c in sc.talk],
        "music": [[_r6(a), _r6(b), _r6(c), _r6(e)] for a, b, c, e in sc.music],
        "clock_wraps": clock_wraps, "warm_start": sc.warm, "tower": tw.summary(),
        "game": {k: v for k, v in sc.game.items()},
    }


def make_recording(seed: int, scenario: str, duration: float, out: Path | str
                   ) -> tuple[Path, Path]:
    """Write ``{scenario}_t{seed}.bin`` and its truth into ``out``; for ``damaged`` also the
    clean twin ``damagedclean_t{seed}``. Returns the recording's and its truth's paths."""
    if scenario not in SCENARIOS:
        raise ValueError(f"unknown scenario {scenario!r}")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    tw = make_tower(seed)
    sc = build_scene(tw, scenario, duration, seed)
    acoustic = scenario == "acoustic"
    n_load = (8 if seed % 2 else 0) if acoustic else 8  # odd: cells unplugged; even: none built
    r = _rng(seed, "clock", scenario)
    wraps = scenario == "long" and seed % 3 != 0
    if wraps:  # the device has been up ~71 min: the host asked GET_INFO on opening the port
        t_us0 = 2**32 - int(r.uniform(0.1, 0.9) * duration * 1e6)
    else:  # opened at power-up: HELLO after the boot loader and setup
        t_us0 = int(r.uniform(250_000, 600_000))
    sig = measure(tw, sc, seed, with_load=not acoustic)
    st = build_stream(tw, sc, sig, n_load_hello=n_load, t_us0=t_us0, ack_first=wraps)
    truth = truth_of(sc, scenario=scenario, n_load=n_load, clock_wraps=wraps)
    bin_path = out / f"{scenario}_t{seed}.bin"
    truth_path = out / f"{scenario}_t{seed}.truth.json"
    if scenario == "damaged":
        clean_bin = out / f"damagedclean_t{seed}.bin"
        clean_bin.write_bytes(b"".join(st.frames))
        (out / f"damagedclean_t{seed}.truth.json").write_text(
            json.dumps({**truth, "scenario": "damagedclean"}, indent=1))
        data, spans = damage_stream(st, tw, sc, sig, seed)
        bin_path.write_bytes(data)
        truth_path.write_text(json.dumps({**truth, "damage": spans}, indent=1))
    else:
        bin_path.write_bytes(b"".join(st.frames))
        truth_path.write_text(json.dumps(truth, indent=1))
    return bin_path, truth_path


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


def _job(args: tuple[int, str, float, str]) -> tuple[str, int, int]:
    seed, scenario, duration, out = args
    _, truth_path = make_recording(seed, scenario, duration, out)
    doc = json.loads(truth_path.read_text())
    return scenario, seed, len(doc["landings"])


def main(argv: list[str] | None = None) -> int:
    """Command line: write every (scenario, tower) recording with its truth."""
    p = _Parser(description="Cross-check model Q: towerear recordings from a physical tower.")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--towers", type=int, default=8)
    p.add_argument("--first-seed", type=int, default=1)
    p.add_argument("--duration", type=float, default=120.0, help="seconds per recording")
    p.add_argument("--long-duration", type=float, default=1800.0, help="seconds (long)")
    p.add_argument("--scenarios", nargs="+", default=list(DEFAULT_SCENARIOS))
    p.add_argument("--workers", type=int, default=2)
    a = p.parse_args(argv)
    bad = [s for s in a.scenarios if s not in SCENARIOS]
    if bad:
        p.error(f"unknown scenario {bad[0]!r} (choose from {', '.join(SCENARIOS)})")
    if a.towers < 1 or a.workers < 1:
        p.error("--towers and --workers must be at least 1")
    if a.duration < 10.0 or a.long_duration < 10.0:
        p.error("durations must be at least 10 s (the first 5 s are a quiet, empty tower)")
    a.out.mkdir(parents=True, exist_ok=True)
    jobs = [(seed, s, a.long_duration if s == "long" else a.duration, str(a.out))
            for s in a.scenarios for seed in range(a.first_seed, a.first_seed + a.towers)]
    jobs.sort(key=lambda j: -j[2])  # long ones first
    if a.workers == 1 or len(jobs) == 1:
        results = [_job(j) for j in jobs]
    else:
        with ProcessPoolExecutor(max_workers=a.workers) as ex:
            results = list(ex.map(_job, jobs))
    for scenario, seed, n in sorted(results):
        print(f"{scenario}_t{seed}: {n} landings", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
