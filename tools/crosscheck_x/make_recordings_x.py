#!/usr/bin/env python3
"""Cross-check model X: a laser-cut plywood tower on a folding table beside the laptop.

An independent, blind simulator of the towerear kit (written from
shared/contracts.md, shared/design.md and the Mord im Arosa rules only). It
writes recordings (the exact device -> host bytes) and their ground truth
(``towerear-crosscheck-truth/1``) so ``towerear detect`` can be scored on a
tower it was not built alongside. The build and every figure are explained in
README.md beside this file.

What model X puts in that the other models do not, in short: a stiff, bouncy
plywood tower (cubes bounce up to the plate above and strike its underside,
strong structure-borne crosstalk, plate modes above the piezo Nyquist rate
alias), players who drop from their own heights, cubes released in pairs, a
folding table that wobbles when bumped (inertial load on every plate), music
from a speaker on the table, a GSM phone beside the base, a laptop that warms
the lower cells, load cells that warm up again after their module is put back,
eight HX711s on one crystal behind a sinc^4 filter, cubes that fall out of a
lifted stack, and a game played by the rules.

Usage::

    .venv/bin/python tools/crosscheck_x/make_recordings_x.py --out DIR [--towers 8]
        [--first-seed 1] [--duration 120] [--scenarios single rapid noisy game] [--workers N]
"""

from __future__ import annotations

import argparse
import binascii
import copy
import json
import math
import os
import struct
import sys
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from scipy import signal

MODEL = "X"
FORMAT = "towerear-crosscheck-truth/1"
SCENARIOS = ("single", "rapid", "noisy", "game")
COLOURS = ("yellow", "blue", "brown", "gray", "black", "white")

# -- the device ------------------------------------------------------------------
PIEZO_HZ = 2000  # sample sets a second (timer interrupt off the 16 MHz crystal)
SETS_PER_MSG = 8  # sets per PIEZO message: one every 4 ms, 138 bytes
LOAD_HZ_NOMINAL = 80
ADC_BITS = 10
MID = 512
HX_CLOCK_PPM = 30.0  # the HX711s' shared 11.0592 MHz crystal against the AVR's
SETTLE_CONVERSIONS = 4  # firmware: a reconnected channel is valid after 4 conversions (50 ms)
FW_VERSION = (1, 3, 0)

# -- physics ----------------------------------------------------------------------
G = 9.81
GF = G / 1000.0  # newton per gram-force
N_LEVELS = 8
PITCH_M = 0.031  # module height: 8 modules, ~25 cm tower
CLEAR_M = 0.019  # a 9 mm cube's bottom can rise this far before its top meets the plate above
V_STOP = 0.12  # m/s: slower rebounds are a rocking cube, not a bounce
J_REF = 0.5e-3 * 2.0 * 1.5  # N s: a 0.5 g cube at 2 m/s, restitution 0.5


# =================================================================================
# wire protocol (contracts.md section 1), written from the contract
# =================================================================================

def _crc_table() -> list[int]:
    table = []
    for byte in range(256):
        crc = byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
        table.append(crc & 0xFFFF)
    return table


_CRC_TABLE = _crc_table()


def crc16_ccitt_false_reference(data: bytes) -> int:
    """CRC-16/CCITT-FALSE, table driven: poly 0x1021, init 0xFFFF, not reflected."""
    crc = 0xFFFF
    for b in data:
        crc = ((crc << 8) & 0xFFFF) ^ _CRC_TABLE[((crc >> 8) ^ b) & 0xFF]
    return crc


def crc16_ccitt_false(data: bytes) -> int:
    """The same CRC by the standard library (``crc_hqx`` is poly 0x1021, MSB first)."""
    return binascii.crc_hqx(data, 0xFFFF)


def cobs_encode(data: bytes) -> bytes:
    """COBS: every run of non-zero bytes becomes (length+1, run); runs of 254 get code 0xFF."""
    out = bytearray()
    for chunk in data.split(b"\x00"):
        while len(chunk) >= 254:
            out.append(0xFF)
            out += chunk[:254]
            chunk = chunk[254:]
        out.append(len(chunk) + 1)
        out += chunk
    return bytes(out)


def frame(msg_type: int, seq: int, body: bytes) -> bytes:
    """One framed message: COBS(type | seq | body | crc) followed by 0x00."""
    msg = struct.pack("<BH", msg_type, seq & 0xFFFF) + body
    msg += struct.pack("<H", crc16_ccitt_false(msg))
    assert len(msg) <= 254
    return cobs_encode(msg) + b"\x00"


def hello_body(device_id: bytes, load_rate_hz: int) -> bytes:
    return struct.pack("<BBBBBBHHB", 1, *FW_VERSION, N_LEVELS, N_LEVELS, PIEZO_HZ,
                       load_rate_hz, ADC_BITS) + device_id


def s24(values: np.ndarray) -> bytes:
    """Signed 24-bit little-endian, three bytes a value."""
    v = np.asarray(values, np.int64) & 0xFFFFFF
    out = np.empty((len(v), 3), np.uint8)
    out[:, 0] = v & 0xFF
    out[:, 1] = (v >> 8) & 0xFF
    out[:, 2] = (v >> 16) & 0xFF
    return out.tobytes()


# =================================================================================
# the build (one seed = one tower kit)
# =================================================================================

@dataclass
class Player:
    colour: str
    style: str  # placer | dropper | lobber
    h_mean_m: float  # release height above the top opening
    fingers_on_top: float  # probability a placer rests fingers on the roof


@dataclass
class Tower:
    seed: int
    device_id: bytes
    load_rate_hz: float  # true conversion rate in device time
    cube_mass_g: dict[str, np.ndarray]
    land_prob: np.ndarray  # where a cube comes to rest, per floor
    pass_prob: np.ndarray  # P(pass the hole of plate k | reached it)
    e_lo: float
    e_hi: float
    # load path, per level
    s_vv: np.ndarray  # rated output, V/V at 100 g
    cpg: np.ndarray  # counts per gram
    offset: np.ndarray  # counts of the empty plate
    plate_g: np.ndarray  # moving mass on the cell (plate + mount)
    f_plate: np.ndarray  # plate-on-cell resonance, Hz
    zeta_plate: np.ndarray
    hx_noise: np.ndarray  # counts rms per reading
    tc_zero_g_per_k: np.ndarray  # zero shift per kelvin (signed)
    warmup_g: np.ndarray  # zero shift between a cold and a self-heated bridge (signed)
    warmup_tau_s: float
    # piezo path, per level
    pz_gain: np.ndarray  # counts for J_REF on the own plate
    pz_lf: np.ndarray  # counts per gram of cell force (high-passed at 8 Hz)
    pz_bias: np.ndarray
    pz_noise: np.ndarray  # LSB rms
    modes_hz: np.ndarray  # (8, 3)
    modes_tau: np.ndarray  # (8, 3)
    modes_w: np.ndarray  # (8, 3)
    xtalk: float  # impact sound per module joint
    lf_trans: float  # low-frequency (table-borne) transmission per level
    hum_open: np.ndarray  # counts of 50 Hz on a disconnected piezo line
    emi_gain: np.ndarray  # phone: piezo counts per pulse
    emi_load_g: np.ndarray  # phone: rectified offset on the load input, grams-equivalent
    table_f_hz: float  # folding table's rocking mode
    table_zeta: float
    figures: dict[str, Any] = field(default_factory=dict)


def make_tower(seed: int) -> Tower:
    """Every build figure of tower ``seed``, drawn from the seed alone."""
    rng = np.random.default_rng([seed, 0x58, 0x7A])
    device_id = bytes(rng.integers(0, 256, 8, dtype=np.uint8))
    load_rate = LOAD_HZ_NOMINAL * (1 + rng.normal(0, HX_CLOCK_PPM) * 1e-6)
    # Cubes: ~9 mm beech, painted. 0.73 cm^3 x 0.62-0.78 g/cm^3 + paint.
    cube_mass = {}
    for c in (*COLOURS, "red"):
        mean = rng.uniform(0.44, 0.62)
        n = 2 if c == "red" else 20
        cube_mass[c] = np.round(mean * (1 + rng.normal(0, 0.035, n)), 4)
    # Where cubes come to rest: holes offset in the rebuild; few reach floor 0.
    w = rng.gamma(4.0, 1.0, N_LEVELS)
    w[0] *= 0.25
    land = w / w.sum()
    reach = np.cumsum(land)  # P(reach plate k) = P(rest on k or below)
    pass_prob = np.zeros(N_LEVELS)
    for k in range(1, N_LEVELS):
        pass_prob[k] = 1 - land[k] / reach[k]
    e_lo = rng.uniform(0.18, 0.28)
    e_hi = rng.uniform(0.5, 0.64)
    # Load cells: 100 g aluminium bar cells, 1.0 +- 0.15 mV/V, zero balance +-0.1 mV/V.
    s_vv = rng.uniform(0.85e-3, 1.15e-3, N_LEVELS)
    cpg = s_vv * 128 * 2**24 / 100.0  # ratiometric: AVDD cancels
    zb = rng.uniform(-0.1e-3, 0.1e-3, N_LEVELS) * 128 * 2**24
    plate_g = rng.uniform(7.5, 12.0, N_LEVELS)  # 3 mm poplar ply + mount block + screws
    hx_off = rng.normal(0, 20000, N_LEVELS)
    offset = np.round(zb + hx_off + cpg * plate_g)
    k_cell = rng.uniform(3000, 5000, N_LEVELS)  # N/m, ~0.25 mm at 100 g
    f_plate = np.sqrt(k_cell / (plate_g * 1e-3)) / (2 * np.pi)
    zeta = rng.uniform(0.02, 0.05, N_LEVELS)
    # Datasheet: 90 nV rms at 80 SPS = 45 counts; real green boards are worse.
    hx_noise = 45.0 * rng.uniform(1.4, 2.6, N_LEVELS)
    tc_zero = rng.choice([-1.0, 1.0], N_LEVELS) * rng.uniform(0.005, 0.03, N_LEVELS)
    warmup = rng.choice([-1.0, 1.0], N_LEVELS) * rng.uniform(0.004, 0.025, N_LEVELS)
    warmup_tau = float(rng.uniform(3.0, 10.0))
    pz_gain = rng.uniform(140, 300, N_LEVELS)
    pz_lf = rng.uniform(0.25, 0.6, N_LEVELS)
    pz_bias = rng.integers(-3, 4, N_LEVELS).astype(float)
    pz_noise = rng.uniform(0.5, 0.9, N_LEVELS)
    f1 = rng.uniform(550, 950, N_LEVELS)
    modes_hz = np.stack([f1, f1 * rng.uniform(1.55, 2.0, N_LEVELS),
                         f1 * rng.uniform(2.4, 3.3, N_LEVELS)], axis=1)
    q = rng.uniform(25, 50, (N_LEVELS, 3))
    modes_tau = q / (np.pi * modes_hz)
    rc = 1 / np.sqrt(1 + (modes_hz / 1600.0) ** 2)  # 10 kOhm + 10 nF in front of the pin
    modes_w = np.stack([np.ones(N_LEVELS), rng.uniform(0.3, 0.8, N_LEVELS),
                        rng.uniform(0.15, 0.5, N_LEVELS)], axis=1) * rc
    xtalk = float(rng.uniform(0.25, 0.5))
    lf_trans = float(rng.uniform(0.55, 0.8))
    hum_open = rng.uniform(3, 9, N_LEVELS)
    emi_gain = rng.uniform(0.2, 1.0, N_LEVELS) * np.linspace(1.0, 0.5, N_LEVELS)
    emi_load_g = rng.choice([-1.0, 1.0], N_LEVELS) * rng.uniform(0.001, 0.01, N_LEVELS)
    table_f = float(rng.uniform(5.0, 11.0))
    table_zeta = float(rng.uniform(0.04, 0.1))
    tw = Tower(seed, device_id, load_rate, cube_mass, land, pass_prob, e_lo, e_hi, s_vv, cpg,
               offset, plate_g, f_plate, zeta, hx_noise, tc_zero, warmup, warmup_tau, pz_gain,
               pz_lf, pz_bias, pz_noise, modes_hz, modes_tau, modes_w, xtalk, lf_trans, hum_open,
               emi_gain, emi_load_g, table_f, table_zeta)
    tw.figures = {
        "build": "laser-cut 3 mm poplar plywood modules, floating plates on 100 g bar cells",
        "device_id": device_id.hex(),
        "load_rate_hz": round(load_rate, 6),
        "hx711_clock": "one shared 11.0592 MHz crystal on all eight XI pins (sinc^4 filter)",
        "land_prob": np.round(land, 4).tolist(),
        "restitution": [round(e_lo, 3), round(e_hi, 3)],
        "cube_mass_g_mean": {c: round(float(v.mean()), 4) for c, v in cube_mass.items()},
        "rated_output_mv_v": np.round(s_vv * 1e3, 4).tolist(),
        "counts_per_g": np.round(cpg, 2).tolist(),
        "offset_counts": offset.astype(int).tolist(),
        "plate_g": np.round(plate_g, 2).tolist(),
        "plate_hz": np.round(f_plate, 1).tolist(),
        "hx_noise_counts": np.round(hx_noise, 1).tolist(),
        "tc_zero_g_per_k": np.round(tc_zero, 4).tolist(),
        "warmup_g": np.round(warmup, 4).tolist(),
        "warmup_tau_s": round(warmup_tau, 2),
        "piezo_gain_counts": np.round(pz_gain, 1).tolist(),
        "piezo_modes_hz": np.round(modes_hz, 0).tolist(),
        "crosstalk_per_joint": round(xtalk, 3),
        "table_hz": round(table_f, 2),
    }
    return tw


# =================================================================================
# the scene: what happens, physically
# =================================================================================

@dataclass
class Fall:
    impacts: list[tuple[float, int, float, str]]  # (t, level, J N s down on that plate, kind)
    floor: int
    t_first: float
    t_contact: float
    t_rest: float
    bounces: int
    ceiling: int
    ceiling_j: list[float]  # N s of each strike on the plate above


def _freefall(v: float, d: float) -> tuple[float, float]:
    """Time and speed after falling ``d`` metres from speed ``v`` (down)."""
    v2 = math.sqrt(v * v + 2 * G * d)
    return (v2 - v) / G, v2


def fall(rng: np.random.Generator, tw: Tower, t0: float, h_rel: float, m_g: float,
         start_level: int = 7, start_drop_m: float | None = None) -> Fall:
    """A cube released at ``t0``: hole edges, hops, the plate it stays on, its bounces.

    ``start_drop_m`` (with ``start_level``): a cube dropped from that height
    onto ``start_level`` that surely stays there (a cube falling out of a lifted stack).
    """
    m = m_g * 1e-3
    imp: list[tuple[float, int, float, str]] = []
    t = t0
    v = 0.0
    if start_drop_m is None:
        dt, v = _freefall(0.0, h_rel)
        t += dt
        if rng.random() < 0.35:  # grazes the entry hole in the roof of module 7
            imp.append((t, 7, m * v * rng.uniform(0.1, 0.3), "entry"))
            v *= rng.uniform(0.75, 0.95)
        levels = range(7, -1, -1)
        drop = PITCH_M
    else:
        levels = range(start_level, start_level - 1, -1)
        drop = start_drop_m
    floor = 0
    for k in levels:
        dt, v = _freefall(v, drop)
        t += dt
        drop = PITCH_M
        if start_drop_m is None and k > 0 and rng.random() < tw.pass_prob[k]:
            r = rng.random()
            if r < 0.45:  # clips the hole edge
                imp.append((t, k, m * v * rng.uniform(0.15, 0.5), "edge"))
                v *= rng.uniform(0.55, 0.9)
                t += rng.uniform(0.003, 0.015)
            elif r < 0.7:  # lands beside the hole, hops, tips in
                e = rng.uniform(tw.e_lo, tw.e_hi)
                imp.append((t, k, m * v * (1 + e), "hop"))
                v_up = min(e * v, math.sqrt(2 * G * CLEAR_M))
                t += 2 * v_up / G + rng.uniform(0.02, 0.12)
                v = rng.uniform(0.1, 0.4)
            continue
        floor = k
        break
    # Bounces on the plate it stays on.
    bounces = ceiling = 0
    ceiling_j: list[float] = []
    v_in = v
    while True:
        e = rng.uniform(tw.e_lo, tw.e_hi)
        imp.append((t, floor, m * v_in * (1 + e), "plate"))
        bounces += 1
        v_up = e * v_in
        if v_up < V_STOP or bounces > 12:
            break
        if v_up * v_up / (2 * G) > CLEAR_M:  # reaches the plate above
            v_c = math.sqrt(v_up * v_up - 2 * G * CLEAR_M)
            t += (v_up - v_c) / G
            ec = rng.uniform(0.3, 0.55)
            imp.append((t, floor + 1, -m * v_c * (1 + ec), "ceiling"))
            ceiling += 1
            ceiling_j.append(m * v_c * (1 + ec))
            v0 = ec * v_c
            dt, v_in = _freefall(v0, CLEAR_M)
            t += dt
        else:
            t += 2 * v_up / G
            v_in = v_up
    t_contact = t
    # Slides, rocks over an edge or two, stops.
    n_tip = int(rng.integers(0, 3))
    tips = np.sort(rng.uniform(0.03, 0.25, n_tip))
    for dt in tips:
        imp.append((t + float(dt), floor, m * rng.uniform(0.05, 0.25), "tip"))
    slide = max(rng.uniform(0.08, 0.35), (float(tips[-1]) + 0.02) if n_tip else 0.0)
    return Fall(imp, floor, imp[0][0], t_contact, t_contact + slide, bounces, ceiling, ceiling_j)


@dataclass
class Scene:
    """Everything that happens in one recording, in stream seconds."""

    duration: float
    impacts: list[tuple[float, int, float, str]] = field(default_factory=list)
    mass_steps: list[tuple[float, int, float]] = field(default_factory=list)  # (t, level, grams)
    presses: list[tuple[float, float, int, float]] = field(default_factory=list)  # t0, t1, lvl, g
    rustles: list[tuple[float, float, int, float]] = field(default_factory=list)  # t0, t1, lvl, cnt
    base_events: list[tuple[float, float, float, float, float]] = field(default_factory=list)
    tremors: list[tuple[float, float, float]] = field(default_factory=list)  # t0, t1, a_rms
    kicks: list[tuple[float, float]] = field(default_factory=list)  # t, relative loudness
    music: dict[str, Any] | None = None
    phone: list[tuple[float, float]] = field(default_factory=list)
    lifts: list[dict[str, Any]] = field(default_factory=list)
    landings: list[dict[str, Any]] = field(default_factory=list)
    knockdowns: list[dict[str, Any]] = field(default_factory=list)
    removals: list[dict[str, Any]] = field(default_factory=list)
    knocks: list[dict[str, Any]] = field(default_factory=list)
    thermal: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)


def make_players(rng: np.random.Generator, n: int) -> list[Player]:
    colours = [str(c) for c in rng.permutation(COLOURS)[:n]]
    players = []
    for c in colours:
        style = str(rng.choice(["placer", "dropper", "lobber"], p=[0.3, 0.5, 0.2]))
        lo, hi = {"placer": (0.0, 0.03), "dropper": (0.05, 0.15), "lobber": (0.15, 0.3)}[style]
        players.append(Player(c, style, float(rng.uniform(lo, hi)), float(rng.uniform(0.4, 0.9))))
    return players


class Thrower:
    """Puts throws into a scene: the physics of each cube and its truth."""

    def __init__(self, rng: np.random.Generator, tw: Tower, sc: Scene) -> None:
        self.rng, self.tw, self.sc = rng, tw, sc
        self.next_cube = {c: 0 for c in (*COLOURS, "red")}
        self.pair_id = 0

    def cube(self, colour: str) -> tuple[str, int, float]:
        i = self.next_cube[colour]
        self.next_cube[colour] = i + 1
        masses = self.tw.cube_mass_g[colour]
        return colour, i, float(masses[i % len(masses)])

    def throw(self, t_rel: float, player: Player, cube: tuple[str, int, float], kind: str,
              pair: int | None = None) -> dict[str, Any]:
        rng = self.rng
        h = max(0.0, player.h_mean_m * rng.uniform(0.7, 1.3))
        path = fall(rng, self.tw, t_rel, h, cube[2])
        if player.style == "placer" and rng.random() < player.fingers_on_top:
            # Fingers rest on the roof while the cube is let go: the roof rustles.
            self.sc.rustles.append((t_rel - rng.uniform(0.3, 1.0), t_rel + 0.05, 8,
                                    rng.uniform(1.5, 5.0)))
        self.sc.impacts += path.impacts
        self.sc.mass_steps.append((path.t_contact, path.floor, cube[2]))
        rec = {
            "t": round(path.t_rest, 4), "t_first_impact": round(path.t_first, 4),
            "floor": path.floor, "cubes": 1, "knocked": False, "caused_knockdown": False,
            "mass_g": cube[2], "colour": cube[0], "cube": f"{cube[0]}#{cube[1]}",
            "kind": kind, "player": player.colour, "t_release": round(t_rel, 4),
            "release_height_cm": round(h * 100, 1), "t_contact": round(path.t_contact, 4),
            "bounces": path.bounces, "ceiling_strikes": path.ceiling,
            "ceiling_impulse_mNs": [round(j * 1e3, 5) for j in path.ceiling_j], "pair": pair,
        }
        self.sc.landings.append(rec)
        return rec

    def pair(self, t_rel: float, player: Player, cubes: list[tuple[str, int, float]],
             kind: str) -> list[dict[str, Any]]:
        """Two cubes let go from one hand: they part within a few tens of ms."""
        self.pair_id += 1
        out = [self.throw(t_rel, player, cubes[0], kind, self.pair_id)]
        out.append(self.throw(t_rel + float(self.rng.uniform(0.0, 0.06)), player, cubes[1], kind,
                              self.pair_id))
        return out


# -- disturbances -----------------------------------------------------------------------

def add_bump(rng: np.random.Generator, sc: Scene, t: float | None, kind: str,
             strong: bool) -> None:
    """Someone bumps the folding table: a thump, then the table rocks at its own mode."""
    if t is None:
        return
    a_pk = rng.uniform(0.4, 1.5) if strong else rng.uniform(0.15, 0.5)
    thump = rng.uniform(60, 220) if strong else rng.uniform(20, 70)
    sc.base_events.append((t, a_pk, -1.0, -1.0, thump))
    sc.knocks.append({"t": round(t, 4), "kind": kind, "a_peak_ms2": round(a_pk, 3)})


def add_music(rng: np.random.Generator, sc: Scene, t0: float, loud: float) -> None:
    """A speaker on the table: kick drums on the beat, a bass line, from ``t0`` on."""
    if t0 > sc.duration - 1.0:
        return
    bpm = rng.uniform(88, 128)
    beat = 60.0 / bpm
    four = rng.random() < 0.5  # four-on-the-floor, else kicks on 1 and 3
    t = t0
    i = 0
    while t < sc.duration:
        if four or i % 2 == 0:
            sc.kicks.append((t + rng.normal(0, 0.004), loud * rng.uniform(0.7, 1.1)))
        t += beat
        i += 1
    sc.music = {"t_start": round(t0, 3), "bpm": round(bpm, 1), "level_counts": round(loud, 2),
                "four_on_the_floor": bool(four)}


def add_phone(rng: np.random.Generator, sc: Scene, t0: float | None) -> None:
    """A GSM phone by the base: 577 us bursts every 4.615 ms, in on/off stretches."""
    if t0 is None:
        return
    t = t0
    end = t0 + rng.uniform(1.5, 6.0)
    while t < end:
        on = rng.uniform(0.3, 1.8)
        sc.phone.append((t, min(t + on, sc.duration - 0.1)))
        t += on + rng.uniform(0.1, 0.9)


# =================================================================================
# scenarios
# =================================================================================

def _between(rng: np.random.Generator, lo: float, hi: float) -> float | None:
    """A time drawn in [lo, hi), or None when the recording is too short for it."""
    return float(rng.uniform(lo, hi)) if hi > lo else None


def _quiet_start(rng: np.random.Generator) -> float:
    return float(rng.uniform(4.6, 5.6))


def scene_single(rng: np.random.Generator, tw: Tower, duration: float, noisy: bool) -> Scene:
    sc = Scene(duration)
    th = Thrower(rng, tw, sc)
    players = make_players(rng, int(rng.integers(3, 6)))
    t = _quiet_start(rng)
    sc.extra["quiet_s"] = t
    last = duration - 8.0
    i = 0
    while True:
        p = players[i % len(players)]
        rec = th.throw(t, p, th.cube(p.colour), "noisy" if noisy else "single")
        if rec["t"] > last:
            _undo_last(sc, rec)
            break
        i += 1
        t = rec["t"] + rng.uniform(3.0, 6.0)
    if noisy:
        add_music(rng, sc, float(rng.uniform(4.2, 8.0)), float(rng.uniform(3.0, 10.0)))
        for _ in range(int(rng.integers(1, 4))):
            add_phone(rng, sc, _between(rng, 6.0, duration - 8.0))
        for _ in range(int(rng.integers(3, 7))):
            add_bump(rng, sc, _between(rng, sc.extra["quiet_s"] + 0.5, duration - 2.0),
                     "table_bump", bool(rng.random() < 0.5))
    sc.extra["players"] = [vars(p) for p in players]
    return sc


def _undo_last(sc: Scene, rec: dict[str, Any]) -> None:
    """Take back the last throw (it would land in the final 8 s)."""
    sc.landings.remove(rec)
    sc.mass_steps.pop()
    t_rel = rec["t_release"]
    sc.impacts = [x for x in sc.impacts if x[0] < t_rel]
    sc.rustles = [r for r in sc.rustles if not (r[2] == 8 and r[1] >= t_rel)]


def scene_rapid(rng: np.random.Generator, tw: Tower, duration: float) -> Scene:
    sc = Scene(duration)
    th = Thrower(rng, tw, sc)
    players = make_players(rng, int(rng.integers(2, 5)))
    t = _quiet_start(rng)
    sc.extra["quiet_s"] = t
    last = duration - 8.0
    done = False
    b = 0
    while not done:
        p = players[b % len(players)]
        n = int(rng.integers(3, 7))
        rest = t
        for _ in range(n):
            snap = (len(sc.landings), len(sc.impacts), len(sc.mass_steps), len(sc.rustles))
            if rng.random() < 0.25:
                recs = th.pair(t, p, [th.cube(p.colour), th.cube(p.colour)], "rapid_pair")
            else:
                recs = [th.throw(t, p, th.cube(p.colour), "rapid")]
            if max(r["t"] for r in recs) > last:
                del sc.landings[snap[0]:]
                del sc.impacts[snap[1]:]
                del sc.mass_steps[snap[2]:]
                del sc.rustles[snap[3]:]
                done = True
                break
            rest = max(rest, *(r["t"] for r in recs))
            t += rng.uniform(0.35, 1.2)
        b += 1
        t = rest + rng.uniform(3.0, 6.0)
    sc.extra["players"] = [vars(p) for p in players]
    return sc


# -- the game ----------------------------------------------------------------------------

@dataclass
class ArosaState:
    """What the rules need to know: the tower's contents, supplies, the sheet."""

    tower: list[list[tuple[str, int, float]]]
    supply: dict[str, int]
    sheet: dict[str, list[int]]
    act: int = 1
    victims_found: int = 0
    over: bool = False


def scene_game(rng: np.random.Generator, tw: Tower, duration: float) -> Scene:
    sc = Scene(duration)
    th = Thrower(rng, tw, sc)
    players = make_players(rng, int(rng.integers(3, 6)))
    st = ArosaState([[] for _ in range(N_LEVELS)], {p.colour: 20 for p in players},
                    {p.colour: [0] * N_LEVELS for p in players})
    last = duration - 8.0
    t = _quiet_start(rng)
    sc.extra["quiet_s"] = t
    log: list[str] = []

    def land(recs: list[dict[str, Any]], cubes: list[tuple[str, int, float]]) -> None:
        for r, c in zip(recs, cubes, strict=True):
            st.tower[r["floor"]].append(c)

    # ---- prologue: both victims by the one who last held a knife, two clues each.
    knife = int(rng.integers(len(players)))
    victims = [th.cube("red"), th.cube("red")]
    # (who, cubes let go together, kind, pause after the previous cube came to rest)
    plan: list[tuple[Player, list[tuple[str, int, float]], str, float]] = []
    if rng.random() < 0.5:  # both victims in one hand
        plan.append((players[knife], victims, "victim", 0.0))
    else:
        plan.append((players[knife], victims[:1], "victim", 0.0))
        plan.append((players[knife], victims[1:], "victim", rng.uniform(0.8, 2.0)))
    for p in players:
        cubes = [th.cube(p.colour), th.cube(p.colour)]
        st.supply[p.colour] -= 2
        if rng.random() < 0.15:  # not by the book: both clues at once
            plan.append((p, cubes, "prologue", rng.uniform(1.5, 3.5)))
        else:
            plan.append((p, cubes[:1], "prologue", rng.uniform(1.5, 3.5)))
            plan.append((p, cubes[1:], "prologue", rng.uniform(0.6, 1.6)))
    rest = t
    for p, cubes, kind, gap in plan:
        t = max(t, rest + gap)
        recs = th.pair(t, p, cubes, kind) if len(cubes) == 2 else [th.throw(t, p, cubes[0], kind)]
        if max(r["t"] for r in recs) > last:
            for r in recs:
                _undo_last(sc, r)
            sc.extra.update(players=[vars(p) for p in players], game_log=log + ["time up"])
            return sc
        land(recs, cubes)
        rest = max(r["t"] for r in recs)
    log.append("prologue done")
    # ---- the investigation
    turn = int(rng.integers(len(players)))
    while not st.over:
        snap = (copy.deepcopy(st), len(sc.landings), len(sc.impacts), len(sc.mass_steps),
                len(sc.rustles), len(sc.presses), len(sc.base_events), len(sc.tremors),
                len(sc.lifts), len(sc.removals), len(sc.knockdowns), dict(th.next_cube))
        inv = players[turn % len(players)]
        t_end, note, found_second = play_turn(rng, tw, sc, th, st, players, inv, t)
        if t_end > last:
            st = snap[0]
            del sc.landings[snap[1]:]
            del sc.impacts[snap[2]:]
            del sc.mass_steps[snap[3]:]
            del sc.rustles[snap[4]:]
            del sc.presses[snap[5]:]
            del sc.base_events[snap[6]:]
            del sc.tremors[snap[7]:]
            del sc.lifts[snap[8]:]
            del sc.removals[snap[9]:]
            del sc.knockdowns[snap[10]:]
            th.next_cube = snap[11]
            log.append("time up")
            break
        log.append(note)
        t = t_end + rng.uniform(1.5, 4.0)
        if found_second:
            st.act = 2
            log.append("act II")
        turn += 1
    if rng.random() < 0.5:
        add_music(rng, sc, float(rng.uniform(4.2, 20.0)), float(rng.uniform(1.5, 5.0)))
    if rng.random() < 0.5:
        add_phone(rng, sc, _between(rng, 8.0, duration - 8.0))
    for _ in range(int(rng.poisson(1.0))):
        add_bump(rng, sc, _between(rng, sc.extra["quiet_s"] + 0.5, duration - 2.0),
                 "table_bump", bool(rng.random() < 0.3))
    sc.extra.update(players=[vars(p) for p in players], game_log=log,
                    final_tower=[[f"{c}#{i}" for c, i, _ in fl] for fl in st.tower],
                    sheet=st.sheet, supply=st.supply)
    return sc


def _choose_floor(rng: np.random.Generator, weights: list[float]) -> int:
    w = np.asarray(weights, float)
    return int(rng.choice(N_LEVELS, p=w / w.sum()))


def play_turn(rng: np.random.Generator, tw: Tower, sc: Scene, th: Thrower, st: ArosaState,
              players: list[Player], inv: Player, t: float) -> tuple[float, str, bool]:
    """One investigator's turn by the rules; returns (time of the last event, note, act ends)."""
    colours = [p.colour for p in players]
    me = inv.colour
    t += rng.uniform(2.0, 5.0)  # names the action, reaches for the tower
    suspects: list[str] = []
    action = "inspect"
    if st.act == 1:
        # Players heard roughly where cubes went; victims draw the eye.
        k = _choose_floor(rng, [0.3 + len(fl) + 2.0 * sum(c[0] == "red" for c in fl)
                                for fl in st.tower])
    else:
        on_sheet = sum(st.sheet[me])
        if on_sheet and rng.random() < 0.4:
            action = "cover"
            k = _choose_floor(rng, [0.2 + sum(c[0] == me for c in fl) for fl in st.tower])
        else:
            action = "suspect"
            others = [c for c in colours if c != me]
            n_s = 1 if rng.random() < 0.6 or len(others) < 2 else 2
            suspects = [str(s) for s in rng.choice(others, n_s, replace=False)]
            k = _choose_floor(rng, [0.3 + sum(c[0] in suspects for c in fl) for fl in st.tower])
    # ---- lift modules k..7
    t_lift = t
    sc.base_events.append((t_lift - rng.uniform(0.05, 0.2), rng.uniform(0.05, 0.25), 18.0, 0.25,
                           rng.uniform(8, 30)))
    sc.rustles.append((t_lift - 0.15, t_lift + rng.uniform(0.2, 0.5), k + 1 if k < 7 else 7,
                       rng.uniform(3, 10)))
    # Cubes on plate k+1 near its hole can drop out of the lifted stack's open bottom.
    fell_table: list[tuple[str, int, float]] = []
    if k < 7:
        for c in list(st.tower[k + 1]):
            if rng.random() < 0.06:
                st.tower[k + 1].remove(c)
                dt = rng.uniform(0.1, 1.5)
                sc.extra.setdefault("fell_out", []).append(
                    {"t": round(t_lift + dt, 4), "from_floor": k + 1, "cube": f"{c[0]}#{c[1]}",
                     "onto": "plate" if dt < 0.4 else "table"})
                if dt < 0.4:  # still over the tower: lands on the exposed plate k
                    p = fall(rng, tw, t_lift + dt, 0.0, c[2], start_level=k,
                             start_drop_m=rng.uniform(0.02, 0.06))
                    sc.impacts += p.impacts
                    sc.mass_steps.append((p.t_contact, k, c[2]))
                    st.tower[k].append(c)
                    sc.landings.append({
                        "t": round(p.t_rest, 4), "t_first_impact": round(p.t_first, 4),
                        "floor": k, "cubes": 1, "knocked": True, "caused_knockdown": False,
                        "from_floor": k + 1, "mass_g": c[2], "colour": c[0],
                        "cube": f"{c[0]}#{c[1]}", "kind": "fell_from_lifted_stack",
                        "t_contact": round(p.t_contact, 4), "bounces": p.bounces,
                        "ceiling_strikes": 0, "ceiling_impulse_mNs": [], "pair": None})
                    sc.knockdowns.append({"t": round(p.t_rest, 4), "from_floor": k + 1,
                                          "to_floor": k, "cause": "lift"})
                else:
                    fell_table.append(c)
    t += rng.uniform(1.5, 3.5)  # looks
    found = list(st.tower[k])
    note = f"{me} {action} floor {k}"
    found_second = False
    penalties = 0
    n_victims = sum(c[0] == "red" for c in found)
    if st.act == 1:
        if n_victims:
            st.victims_found += n_victims
            found_second = st.victims_found >= 2
            for col in colours:  # caught: one supply clue on the sheet per clue here
                if col == me:  # the investigator overlooks his own
                    continue
                n_c = sum(x[0] == col for x in found)
                put = min(n_c, st.supply[col])
                st.supply[col] -= put
                st.sheet[col][k] += put
            note += f": {n_victims} victim(s)"
        else:
            penalties = 1
    elif action == "suspect":
        mine_here = sum(x[0] == me for x in found)
        if k == 0 and mine_here == 0:
            penalties = len(suspects)
        else:
            for s in suspects:
                n_s = sum(x[0] == s for x in found)
                if n_s == 0:
                    penalties += 1
                put = min(n_s, st.supply[s])
                st.supply[s] -= put
                st.sheet[s][k] += put
        note += f" suspects {suspects}"
    else:
        mine_here = sum(x[0] == me for x in found)
        if mine_here == 0:
            penalties = 1
        back = min(mine_here, st.sheet[me][k])
        st.sheet[me][k] -= back
        st.supply[me] += back
    # ---- take out every cube on floor k, a few at a time
    order = [found[i] for i in rng.permutation(len(found))]
    in_hand: list[tuple[str, int, float]] = []
    while order:
        n = min(len(order), int(rng.choice([1, 1, 2, 2, 3])))
        grab, order = order[:n], order[n:]
        press = rng.uniform(0.25, 0.8)
        t += rng.uniform(0.5, 1.4)
        sc.presses.append((t - press, t, k, rng.uniform(5.0, 60.0)))
        sc.rustles.append((t - press, t + 0.05, k, rng.uniform(3, 14)))
        for c in grab:
            st.tower[k].remove(c)
            sc.mass_steps.append((t, k, -c[2]))
        sc.removals.append({"t": round(t, 4), "floor": k, "cubes": len(grab),
                            "mass_g": round(sum(c[2] for c in grab), 4),
                            "colours": [c[0] for c in grab]})
        in_hand += [c for c in grab if c[0] != "red"]  # victims go on the sheet
    t += rng.uniform(0.3, 1.0)
    # Hand on the lower floors while the stack is held up: tremor.
    sc.tremors.append((t_lift, t, rng.uniform(0.01, 0.05)))
    t += rng.uniform(0.5, 1.5)
    t_close = t
    chatter = rng.uniform(0.005, 0.04)
    sc.lifts.append({"t": round(t_lift, 4), "t_close": round(t_close, 4), "exposed": k,
                     "chatter_s": chatter})
    sc.base_events.append((t_close, rng.uniform(0.3, 1.0), 22.0, 0.2, rng.uniform(60, 200)))
    st.over = _game_over(st)
    t_last = t_close
    if st.over:
        return t_last, note + "; game over", found_second
    # ---- throw back what was taken out, one after another; then penalties; then fallen cubes
    t += rng.uniform(1.0, 2.5)
    throws: list[tuple[tuple[str, int, float], str]] = [(c, "throw_back") for c in in_hand]
    for _ in range(penalties):
        if st.supply[me] > 0:
            st.supply[me] -= 1
            throws.append((th.cube(me), "penalty"))
    throws += [(c, "fell_out_back") for c in fell_table]
    for c, kind in throws:
        rec = th.throw(t, inv, c, kind)
        st.tower[rec["floor"]].append(c)
        t_last = max(t_last, rec["t"])
        t = rec["t"] + rng.uniform(0.5, 1.8)
    st.over = _game_over(st)
    return t_last, note + f"; {penalties} penalty", found_second


def _game_over(st: ArosaState) -> bool:
    return any(sum(v) >= 10 for v in st.sheet.values()) or any(n <= 0 for n in st.supply.values())


# =================================================================================
# rendering: the sensors
# =================================================================================

def _add_impulse(x: np.ndarray, t: float, value: float) -> None:
    """Add ``value`` (already per sample) at time ``t``, split between the two nearest samples."""
    pos = t * PIEZO_HZ
    i = int(math.floor(pos))
    f = pos - i
    if 0 <= i < len(x):
        x[i] += value * (1 - f)
    if 0 <= i + 1 < len(x):
        x[i + 1] += value * f


def _connected(sc: Scene, n: int) -> np.ndarray:
    """(8, n) bool: the sensor line of each level reaches the base (not lifted)."""
    con = np.ones((N_LEVELS, n), bool)
    for lf in sc.lifts:
        i0 = int(lf["t"] * PIEZO_HZ)
        i1 = int((lf["t_close"] + lf["chatter_s"]) * PIEZO_HZ)
        con[lf["exposed"] + 1:, i0:i1] = False
    return con


def render_base_accel(rng: np.random.Generator, tw: Tower, sc: Scene, n: int) -> np.ndarray:
    """Vertical acceleration of the tower's frame, m/s^2, on the 2 kHz grid."""
    a = np.zeros(n)
    tt = np.arange(int(2.5 * PIEZO_HZ)) / PIEZO_HZ
    for t0, a_pk, f, zeta, _thump in sc.base_events:
        if f < 0:  # table bump: the table's rocking mode
            f, zeta = tw.table_f_hz, tw.table_zeta
        w = 2 * np.pi * f
        wave = a_pk * np.exp(-zeta * w * tt) * np.sin(w * tt + rng.uniform(-0.3, 0.3))
        i0 = int(t0 * PIEZO_HZ)
        seg = wave[: max(0, min(len(wave), n - i0))]
        a[i0:i0 + len(seg)] += seg
    for t0, t1, a_rms in sc.tremors:
        i0, i1 = int(t0 * PIEZO_HZ), min(n, int(t1 * PIEZO_HZ))
        if i1 <= i0:
            continue
        b, aa = signal.butter(2, [4.0, 12.0], btype="band", fs=PIEZO_HZ)
        noise = signal.lfilter(b, aa, rng.normal(0, 1, i1 - i0 + 400))[400:]
        a[i0:i1] += a_rms * noise / max(1e-12, float(noise.std()))
    for t0, loud in sc.kicks:  # the speaker shakes the table a little
        i0 = int(t0 * PIEZO_HZ)
        ln = min(160, n - i0)
        if ln <= 0:
            continue
        k = np.arange(ln) / PIEZO_HZ
        a[i0:i0 + ln] += 0.004 * loud * np.exp(-k / 0.04) * np.sin(2 * np.pi * 55 * k)
    return a


def render_load(rng: np.random.Generator, tw: Tower, sc: Scene, n: int,
                a_base: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Force on each cell (grams-equivalent, 2 kHz, after the plate's dynamics) and the
    electrical additions (thermal, warm-up, EMI), both (8, n)."""
    static = np.zeros((N_LEVELS, n))
    for t, lvl, dm in sc.mass_steps:
        i = int(round(t * PIEZO_HZ))
        if i < n:
            static[lvl, i] += dm
    static = np.cumsum(static, axis=1)
    force = static.copy()
    per_sample = PIEZO_HZ / GF  # N s -> grams-force on one sample
    for t, lvl, j, kind in sc.impacts:
        if kind == "entry" or lvl >= N_LEVELS:
            continue
        _add_impulse(force[lvl], t, j * per_sample)
    for t0, t1, lvl, peak in sc.presses:
        i0, i1 = int(t0 * PIEZO_HZ), min(n, int(t1 * PIEZO_HZ))
        if i1 <= i0:
            continue
        u = np.arange(i1 - i0) / max(1, i1 - i0 - 1)
        prof = peak * np.clip(u / 0.3, 0, 1) ** 2 * (1 + 0.15 * np.sin(2 * np.pi * 9 * u))
        force[lvl, i0:i1] += prof
        rel = min(n, i1 + int(0.05 * PIEZO_HZ))  # fingers let go in ~50 ms
        force[lvl, i1:rel] += prof[-1] * np.linspace(1, 0, rel - i1)
    force += (tw.plate_g[:, None] + static) * a_base[None, :] / G
    out = np.empty_like(force)
    for lvl in range(N_LEVELS):
        w0 = 2 * np.pi * tw.f_plate[lvl]
        b, a = signal.bilinear([w0 * w0], [1, 2 * tw.zeta_plate[lvl] * w0, w0 * w0], PIEZO_HZ)
        out[lvl] = signal.lfilter(b, a, force[lvl])
    # Electrical: thermal drift of the zero, bridge warm-up after reconnection, phone EMI.
    elec = np.zeros((N_LEVELS, n))
    ts = np.arange(n) / PIEZO_HZ
    th = sc.thermal
    for lvl in range(N_LEVELS):
        d_t = th["dT_max"] * th["weight"][lvl] * (
            np.exp(-th["t_on"] / th["tau"]) - np.exp(-(th["t_on"] + ts) / th["tau"]))
        elec[lvl] += tw.tc_zero_g_per_k[lvl] * d_t
    for lf in sc.lifts:
        cool = 1 - math.exp(-(lf["t_close"] - lf["t"]) / tw.warmup_tau_s)
        i0 = int(lf["t_close"] * PIEZO_HZ)
        for lvl in range(lf["exposed"] + 1, N_LEVELS):
            elec[lvl, i0:] -= tw.warmup_g[lvl] * cool * np.exp(-(ts[i0:] - ts[i0])
                                                                / tw.warmup_tau_s)
    for t0, t1 in sc.phone:
        i0, i1 = int(t0 * PIEZO_HZ), min(n, int(t1 * PIEZO_HZ))
        elec[:, i0:i1] += tw.emi_load_g[:, None]
    return out, elec


def hx711_readings(tw: Tower, sc: Scene, rng: np.random.Generator, cell_g: np.ndarray,
                   elec_g: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Conversion end times (s), counts (M, 8), valid bits (M,) of the eight HX711s."""
    n = cell_g.shape[1]
    period = 1.0 / tw.load_rate_hz
    phase = rng.uniform(0.006, 0.018)
    t_conv = phase + period * np.arange(int((sc.duration - phase) / period))
    t_conv = t_conv[t_conv < sc.duration - 0.001]
    x = cell_g + elec_g
    box = int(round(PIEZO_HZ / LOAD_HZ_NOMINAL))  # 25 samples: one conversion
    pad = 4 * box + 4
    y = np.concatenate([np.zeros((N_LEVELS, pad)), x], axis=1)
    for _ in range(4):  # sinc^4: four cascaded moving averages of one conversion period
        c = np.cumsum(y, axis=1)
        y = np.concatenate([c[:, :box] / box, (c[:, box:] - c[:, :-box]) / box], axis=1)
    pos = t_conv * PIEZO_HZ + pad
    i = np.floor(pos).astype(int)
    f = pos - i
    grams = y[:, i] * (1 - f) + y[:, np.minimum(i + 1, y.shape[1] - 1)] * f
    m = len(t_conv)
    white = rng.normal(0, 1, (N_LEVELS, m))
    slow = signal.lfilter([math.sqrt(1 - 0.994**2)], [1, -0.994], rng.normal(0, 1, (N_LEVELS, m)),
                          axis=1)
    noise = tw.hx_noise[:, None] * (white + 0.5 * slow)
    counts = np.round(tw.offset[:, None] + tw.cpg[:, None] * grams + noise).astype(np.int64)
    counts = np.clip(counts, -(2**23), 2**23 - 1)
    # Valid: connected, and connected for SETTLE_CONVERSIONS conversions in a row.
    idx = np.minimum((t_conv * PIEZO_HZ).astype(int), n - 1)
    con = _connected(sc, n)[:, idx]
    ok = con.copy()
    for back in range(1, SETTLE_CONVERSIONS):
        shifted = np.ones_like(con)
        shifted[:, back:] = con[:, :-back]
        ok &= shifted
    valid = np.zeros(m, np.int64)
    for lvl in range(N_LEVELS):
        valid |= ok[lvl].astype(np.int64) << lvl
    counts = np.where(ok, counts, 0).T
    return t_conv, counts, valid


def render_piezo(rng: np.random.Generator, tw: Tower, sc: Scene, n: int,
                 cell_g: np.ndarray) -> np.ndarray:
    """(n, 8) ADC codes of the eight piezo discs."""
    x = rng.normal(0, 1, (N_LEVELS, n)) * tw.pz_noise[:, None]
    # Low-frequency path: the disc bends with the plate on its cell; 1 MOhm || 20 nF: 8 Hz.
    b, a = signal.butter(1, 8.0, btype="high", fs=PIEZO_HZ)
    x += tw.pz_lf[:, None] * signal.lfilter(b, a, cell_g - cell_g[:, :1], axis=1)
    win = int(0.16 * PIEZO_HZ)
    tt = np.arange(win) / PIEZO_HZ
    lv = np.arange(N_LEVELS)

    def ring(t0: float, amps: np.ndarray) -> None:
        """Each plate rings at its own modes, with amplitude ``amps[c]``."""
        i0 = int(math.ceil(t0 * PIEZO_HZ))
        ln = min(win, n - i0)
        if ln <= 0:
            return
        tl = tt[:ln] + (i0 / PIEZO_HZ - t0)
        env = 1 - np.exp(-tl / rng.uniform(0.0004, 0.001))
        wv = tw.modes_w * rng.uniform(0.5, 1.5, (N_LEVELS, 3))
        ph = rng.uniform(0, 2 * np.pi, (N_LEVELS, 3))
        wave = np.zeros((N_LEVELS, ln))
        for m in range(3):
            arg = 2 * np.pi * tw.modes_hz[:, m:m + 1] * tl + ph[:, m:m + 1]
            wave += wv[:, m:m + 1] * np.sin(arg) * np.exp(-tl / tw.modes_tau[:, m:m + 1])
        sel = amps > 0.3
        x[sel, i0:i0 + ln] += amps[sel, None] * env * wave[sel]

    for t, lvl, j, kind in sc.impacts:
        src = min(lvl, 7)
        base = tw.pz_gain * abs(j) / J_REF
        dist = np.abs(lv - src) + (1 if kind == "entry" or lvl >= N_LEVELS else 0)
        jitter = rng.uniform(0.8, 1.2, N_LEVELS)
        ring(t, base * tw.xtalk ** dist * jitter * (0.7 if kind == "hop" else 1.0))
    for t0, _a, _f, _z, thump in sc.base_events:  # a bump or a set-down: through the frame
        ring(t0, tw.pz_gain / 200.0 * thump * tw.lf_trans ** lv)
    # Music: the kick's thump (pitch falls 90 -> 50 Hz) and a bass note, from the table.
    if sc.kicks:
        kl = int(0.25 * PIEZO_HZ)
        k = np.arange(kl) / PIEZO_HZ
        pitch = 50 * k + 40 * 0.03 * (1 - np.exp(-k / 0.03))  # 90 Hz falling to 50 Hz
        kick = np.sin(2 * np.pi * pitch) * np.exp(-k / 0.07)
        for t0, loud in sc.kicks:
            i0 = int(t0 * PIEZO_HZ)
            ln = min(kl, n - i0)
            if ln > 0:
                x[:, i0:i0 + ln] += (loud * tw.lf_trans ** lv)[:, None] * kick[None, :ln]
        assert sc.music is not None
        i0 = int(sc.music["t_start"] * PIEZO_HZ)
        beat = 60.0 / sc.music["bpm"]
        ts = np.arange(i0, n) / PIEZO_HZ
        notes = rng.choice([41.2, 43.7, 49.0, 55.0, 61.7, 65.4, 73.4], int(sc.duration / beat) + 2)
        fnote = notes[((ts - ts[0]) / (2 * beat)).astype(int)]
        phase = 2 * np.pi * np.cumsum(fnote) / PIEZO_HZ
        bass = 0.25 * sc.music["level_counts"] * np.sin(phase)
        fade = np.clip((ts - ts[0]) / 2.0, 0, 1)
        x[:, i0:] += (tw.lf_trans ** lv)[:, None] * (bass * fade)[None, :]
    # Rustle: fingers and wood rubbing, broadband, on a level and its neighbours.
    bh, ah = signal.butter(2, [150, 900], btype="band", fs=PIEZO_HZ)
    for t0, t1, lvl, amp in sc.rustles:
        i0, i1 = max(0, int(t0 * PIEZO_HZ)), min(n, int(t1 * PIEZO_HZ))
        if i1 <= i0:
            continue
        noise = signal.lfilter(bh, ah, rng.normal(0, 1, i1 - i0))
        env = np.sin(np.linspace(0, np.pi, i1 - i0)) ** 0.5
        src = min(lvl, 7)
        d = np.abs(lv - src) + (1 if lvl >= N_LEVELS else 0)
        x[:, i0:i1] += (amp * tw.xtalk ** d)[:, None] * (noise * env / 0.35)[None, :]
    # Phone: a 577 us slot every 4.615 ms; the AVR samples it whenever a set falls in a slot.
    if sc.phone:
        ts = np.arange(n) / PIEZO_HZ
        frame_s = 120e-3 / 26
        slot = ((ts + tw.seed * 1e-4) % frame_s) < 577e-6
        on = np.zeros(n, bool)
        for t0, t1 in sc.phone:
            on[int(t0 * PIEZO_HZ):int(t1 * PIEZO_HZ)] = True
        pulse = (slot & on).astype(float)
        pulse[1:] += 0.3 * pulse[:-1]  # the input RC's tail
        emi = rng.uniform(6, 25)
        x += (emi * tw.emi_gain)[:, None] * pulse[None, :]
    # Disconnected lines (lifted modules): bias network only, 50 Hz pickup, contact chatter.
    con = _connected(sc, n)
    hum = np.sin(2 * np.pi * 50 * np.arange(n) / PIEZO_HZ + tw.seed)
    for lvl in range(N_LEVELS):
        off = ~con[lvl]
        if off.any():
            x[lvl, off] = tw.hum_open[lvl] * hum[off] + rng.normal(0, 1.5, int(off.sum()))
    for lf in sc.lifts:
        for t_edge in (lf["t"], lf["t_close"]):
            for lvl in range(lf["exposed"] + 1, N_LEVELS):
                for _ in range(int(rng.integers(2, 7))):
                    i = int((t_edge + rng.uniform(0, 0.02)) * PIEZO_HZ)
                    if 0 <= i < n:
                        x[lvl, i] += rng.choice([-1, 1]) * rng.uniform(80, 450)
    # Rare single-sample glitches (USB-serial chip's ground bounce).
    n_gl = rng.poisson(n * N_LEVELS * 2e-5)
    x[rng.integers(0, N_LEVELS, n_gl), rng.integers(0, n, n_gl)] += rng.uniform(-5, 5, n_gl)
    codes = np.clip(np.round(MID + tw.pz_bias[:, None] + x), 0, 2**ADC_BITS - 1)
    return codes.T.astype(np.uint16)


# =================================================================================
# one recording
# =================================================================================

def build_scene(seed: int, scenario: str, duration: float, tw: Tower) -> Scene:
    idx = SCENARIOS.index(scenario)
    rng = np.random.default_rng([seed, idx, 0x58, 1])
    if scenario == "single":
        sc = scene_single(rng, tw, duration, noisy=False)
    elif scenario == "noisy":
        sc = scene_single(rng, tw, duration, noisy=True)
    elif scenario == "rapid":
        sc = scene_rapid(rng, tw, duration)
    else:
        sc = scene_game(rng, tw, duration)
    # The laptop running the app stands beside the tower; its exhaust warms the lower levels.
    lam = rng.uniform(2.0, 4.0)
    sc.thermal = {"dT_max": float(rng.uniform(2.0, 6.0)), "tau": float(rng.uniform(300, 900)),
                  "t_on": float(rng.uniform(0, 900)),
                  "weight": np.exp(-np.arange(N_LEVELS) / lam).tolist()}
    return sc


def generate(seed: int, scenario: str, duration: float) -> tuple[bytes, dict[str, Any]]:
    """The recording's bytes and its truth for tower ``seed`` and ``scenario``."""
    if scenario not in SCENARIOS:
        raise ValueError(f"unknown scenario {scenario!r}")
    tw = make_tower(seed)
    sc = build_scene(seed, scenario, duration, tw)
    rng = np.random.default_rng([seed, SCENARIOS.index(scenario), 0x58, 2])
    n = int(round(duration * PIEZO_HZ))
    a_base = render_base_accel(rng, tw, sc, n)
    cell_g, elec_g = render_load(rng, tw, sc, n, a_base)
    t_conv, counts, valid = hx711_readings(tw, sc, rng, cell_g, elec_g)
    piezo = render_piezo(rng, tw, sc, n, cell_g)
    raw = encode(rng, tw, sc, piezo, t_conv, counts, valid)
    return raw, make_truth(seed, scenario, duration, tw, sc, cell_g, elec_g)


def encode(rng: np.random.Generator, tw: Tower, sc: Scene, piezo: np.ndarray,
           t_conv: np.ndarray, counts: np.ndarray, valid: np.ndarray) -> bytes:
    """The device's byte stream: HELLO, then PIEZO, LOAD and STATUS in the order sent."""
    boot_us = 4 * int(rng.integers(300_000, 450_000))  # bootloader, setup: first set 1.2-1.8 s
    n = len(piezo)
    n_msg = n // SETS_PER_MSG
    # (send time us, kind, index)
    p_first = boot_us + 500 * SETS_PER_MSG * np.arange(n_msg)
    p_send = p_first + 500 * (SETS_PER_MSG - 1) + 40
    lat = 4 * np.round(rng.uniform(20, 250, len(t_conv)) / 4)
    l_t = (boot_us + np.round(t_conv * 1e6 / 4) * 4 + lat).astype(np.int64)
    l_send = l_t + 70  # 25 SCK pulses, then the frame goes out
    s_times = boot_us + 1_000_000 * np.arange(1, int(sc.duration) + 1) - 300
    kinds = np.concatenate([np.zeros(n_msg, int), np.ones(len(l_t), int),
                            np.full(len(s_times), 2)])
    index = np.concatenate([np.arange(n_msg), np.arange(len(l_t)), np.arange(len(s_times))])
    send = np.concatenate([p_send, l_send, s_times])
    order = np.lexsort((kinds, send))
    out = bytearray(frame(0x01, 0, hello_body(tw.device_id, LOAD_HZ_NOMINAL)))
    pbytes = piezo.astype("<u2").tobytes()
    per = SETS_PER_MSG * N_LEVELS * 2
    timeouts = 0
    missing = np.array([N_LEVELS - bin(int(v)).count("1") for v in valid])
    seq = 1
    for o in order:
        kind, i = int(kinds[o]), int(index[o])
        if kind == 0:
            body = struct.pack("<IB", int(p_first[i]) & 0xFFFFFFFF, SETS_PER_MSG) \
                + pbytes[i * per:(i + 1) * per]
            out += frame(0x02, seq, body)
        elif kind == 1:
            timeouts += int(missing[i])
            body = struct.pack("<IB", int(l_t[i]) & 0xFFFFFFFF, int(valid[i])) + s24(counts[i])
            out += frame(0x03, seq, body)
        else:
            up = int(s_times[i]) // 1000
            cpu = int(rng.integers(34, 47))
            body = struct.pack("<IHHHBB", up, 0, 0, min(timeouts, 0xFFFF), cpu, 0)
            out += frame(0x04, seq, body)
        seq = (seq + 1) & 0xFFFF
    return bytes(out)


def make_truth(seed: int, scenario: str, duration: float, tw: Tower, sc: Scene,
               cell_g: np.ndarray, elec_g: np.ndarray) -> dict[str, Any]:
    landings = sorted(sc.landings, key=lambda x: x["t"])
    closes = [{"t": round(lf["t_close"], 4), "exposed": lf["exposed"]} for lf in sc.lifts]
    lifts = [{"t": lf["t"], "exposed": lf["exposed"]} for lf in sc.lifts]
    th = sc.thermal
    rise = th["dT_max"] * (math.exp(-th["t_on"] / th["tau"])
                           - math.exp(-(th["t_on"] + duration) / th["tau"]))
    thermal_end = [round(float(tw.tc_zero_g_per_k[lvl] * th["weight"][lvl] * rise), 5)
                   for lvl in range(N_LEVELS)]
    return {
        "format": FORMAT,
        "model": MODEL,
        "scenario": scenario,
        "seed": seed,
        "duration_s": duration,
        "cells": "matched",
        "quiet_s": round(sc.extra["quiet_s"], 4),
        "landings": landings,
        "knockdowns": sc.knockdowns,
        "removals": sc.removals,
        "lifts": lifts,
        "closes": closes,
        "knocks": sorted(sc.knocks, key=lambda x: x["t"]),
        "music": sc.music,
        "phone_bursts": [[round(a, 3), round(b, 3)] for a, b in sc.phone],
        "thermal": {"dT_max_k": round(sc.thermal["dT_max"], 3),
                    "tau_s": round(sc.thermal["tau"], 1),
                    "t_on_s": round(sc.thermal["t_on"], 1),
                    "drift_g_end": thermal_end},
        "fell_out": sc.extra.get("fell_out", []),
        "players": sc.extra.get("players", []),
        "game_log": sc.extra.get("game_log", []),
        "tower": tw.figures,
    }


def make_recording(seed: int, scenario: str, duration: float, out: Path) -> tuple[Path, Path]:
    """Write ``{scenario}_t{seed}.bin`` and its ``.truth.json`` into ``out``."""
    raw, truth = generate(seed, scenario, duration)
    out.mkdir(parents=True, exist_ok=True)
    bin_path = out / f"{scenario}_t{seed}.bin"
    truth_path = out / f"{scenario}_t{seed}.truth.json"
    bin_path.write_bytes(raw)
    truth_path.write_text(json.dumps(truth, indent=1, default=_json_default) + "\n")
    return bin_path, truth_path


def _json_default(o: Any) -> Any:
    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, np.floating):
        return float(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    raise TypeError(type(o).__name__)


def _job(args: tuple[int, str, float, str]) -> str:
    seed, scenario, duration, out = args
    make_recording(seed, scenario, duration, Path(out))
    return f"{scenario}_t{seed}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--towers", type=int, default=8)
    p.add_argument("--first-seed", type=int, default=1)
    p.add_argument("--duration", type=float, default=120.0)
    p.add_argument("--scenarios", nargs="+", default=list(SCENARIOS))
    p.add_argument("--workers", type=int, default=min(4, os.cpu_count() or 1))
    args = p.parse_args(argv)
    bad = [s for s in args.scenarios if s not in SCENARIOS]
    if bad:
        print(f"unknown scenario {bad[0]!r} (known: {', '.join(SCENARIOS)})", file=sys.stderr)
        return 2
    if args.duration <= 0 or args.towers < 1:
        print("need --duration > 0 and --towers >= 1", file=sys.stderr)
        return 2
    jobs = [(s, sc, args.duration, str(args.out)) for s in
            range(args.first_seed, args.first_seed + args.towers) for sc in args.scenarios]
    args.out.mkdir(parents=True, exist_ok=True)
    if args.workers <= 1:
        for j in jobs:
            _job(j)
    else:
        with ProcessPoolExecutor(args.workers) as pool:
            list(pool.map(_job, jobs))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
