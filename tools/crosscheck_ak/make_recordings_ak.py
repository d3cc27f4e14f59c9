#!/usr/bin/env python3
"""Cross-check model AK: a Mord im Arosa tournament in a convention hall.

A blind generator of test recordings for ``towerear detect`` (contracts.md sections
1-3) with their ground truth (the ``towerear-crosscheck-truth/1`` format that
tools/crosscheck/score.py reads). Its own wire encoder (COBS, CRC-16/CCITT-FALSE,
message layouts); imports numpy, scipy and the standard library only.

The scene: many towers on long shared trestle tables in a big hall. What that does
to the sensors (README.md gives every figure and its reasoning):

- neighbouring towers 0.5-3 m along the same table: their cubes' strikes reach our
  tower through the table top as low, attenuated, common-mode thumps on all eight
  piezos (no load change), in series like real throws; now and then a neighbour
  bumps the table (a disturbance, listed in ``knocks``);
- the hall: PA music with strong bass (kick drum, bass line 41-110 Hz) and
  announcements through the floor and the table, crowd murmur and cheers, a
  forklift or a trolley rolling past (5-15 s of rumble rising and falling);
- fast, experienced players: series 0.3-0.8 s apart, handfuls of 2-4 cubes, hard
  throws, and full games by the rulebook (lifts, removals, closes, throw-backs);
- towers built by different teams: load cells of 100-500 g with different rated
  outputs and excitations (some wired reversed), HX711 at 10 or 80 SPS with their
  own RC oscillators, piezos glued with more or less glue (sensitivity 3.5-4.5x
  between levels), on some towers one disc loose (rattles, double hits); long
  USB cables with ground loops (50 Hz, harmonics and charger spikes on every
  piezo pin); the hall warming up (load offsets creep); a resonator or a crystal
  as the device clock;
- sessions that begin on a running device: mid-frame, any clock value (wrapping
  during the recording on some), any sequence number, HELLO only on GET_INFO.

Usage::

    .venv/bin/python tools/crosscheck_ak/make_recordings_ak.py --out /tmp/ak --towers 8 \
        --first-seed 1 --duration 120 [--scenarios single rapid noisy game]
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
from typing import Any, NoReturn

import numpy as np
from scipy import signal

MODEL = "AK"
SCENARIOS = ("single", "rapid", "noisy", "game")
COLOURS = ("yellow", "blue", "brown", "gray", "black", "white")
G = 9.80665
MODULE_H = 0.031  # m: a 25 cm tower of eight modules
CLEARANCE = 0.021  # m: how far a 9-10 mm cube can rise in a module before it meets the plate above
LOAD_FS = 2000.0  # Hz: the fine grid of the mechanical load model
MN_S_TO_GF_S = 1e-3 / G * 1e3  # 1 mN s of impulse in gram-force seconds
T_HELLO, T_PIEZO, T_LOAD, T_STATUS, T_ACK = 0x01, 0x02, 0x03, 0x04, 0x05
CMD_GET_INFO = 0x81
# Share of an impact's impulse that reaches the load cell under the struck plate.
LOAD_SHARE = {"plate": 1.0, "bounce": 1.0, "tick": 1.0, "edge": 1.0, "rattle": 1.0,
              "wall": 0.3, "ceiling": -1.0, "top": 0.0, "close": 0.15, "lift": 0.1, "grab": 0.0}
# How strongly the plate's bounce on its cell ("thud", 40-400 Hz) shows in the piezo.
THUD_BOOST = {"close": 4.0, "lift": 2.5, "wall": 2.0, "grab": 1.5}
HUM_HARMONICS = (1, 2, 3, 5, 7)  # 50, 100, 150, 250, 350 Hz on the ground loop

# -- wire ---------------------------------------------------------------------------------


def crc16_ccitt_false(data: bytes) -> int:
    """CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, not reflected, xorout 0)."""
    return binascii.crc_hqx(data, 0xFFFF)


def cobs_encode(data: bytes) -> bytes:
    """COBS-encode ``data`` (no trailing delimiter)."""
    out = bytearray()
    blocks = data.split(b"\x00")
    for i, block in enumerate(blocks):
        last = i == len(blocks) - 1
        while len(block) >= 254:
            out.append(0xFF)
            out += block[:254]
            block = block[254:]
            if not block and last:
                return bytes(out)
        out.append(len(block) + 1)
        out += block
    return bytes(out)


def cobs_decode(enc: bytes) -> bytes | None:
    """Decode one COBS frame (without its 0x00); None when it is malformed."""
    out = bytearray()
    i = 0
    while i < len(enc):
        code = enc[i]
        if code == 0 or i + code > len(enc):
            return None
        out += enc[i + 1:i + code]
        i += code
        if code < 0xFF and i < len(enc):
            out.append(0)
    return bytes(out)


def _is_message(enc: bytes) -> bool:
    """Whether ``enc`` (a frame without its delimiter) decodes to a message with a good CRC."""
    msg = cobs_decode(enc)
    return msg is not None and len(msg) >= 5 and \
        crc16_ccitt_false(msg[:-2]) == int.from_bytes(msg[-2:], "little")


def frame(msg_type: int, seq: int, body: bytes) -> bytes:
    """One framed message: COBS(type | seq | body | crc) followed by 0x00."""
    msg = struct.pack("<BH", msg_type, seq & 0xFFFF) + body
    msg += struct.pack("<H", crc16_ccitt_false(msg))
    if len(msg) > 254:
        raise ValueError(f"message of {len(msg)} bytes exceeds the 254-byte limit")
    return cobs_encode(msg) + b"\x00"


def hello_body(tw: Tower) -> bytes:
    """HELLO: proto, firmware version, channel counts, true rates, adc bits, device id."""
    return struct.pack("<BBBBBBHHB", 1, *tw.fw, 8, 8, tw.piezo_rate_hz, tw.load_rate_hz,
                       10) + tw.device_id


def piezo_body(t_us: int, sets: np.ndarray) -> bytes:
    """PIEZO: t_us of the first set, n, then n x 8 u16 samples set-major."""
    return struct.pack("<IB", t_us & 0xFFFFFFFF, len(sets)) + sets.astype("<u2").tobytes()


def load_body(t_us: int, valid: int, values: np.ndarray) -> bytes:
    """LOAD: t_us, valid bits, eight signed 24-bit readings (0 where not valid)."""
    out = bytearray(struct.pack("<IB", t_us & 0xFFFFFFFF, valid))
    for k in range(8):
        v = int(values[k]) if (valid >> k) & 1 else 0
        out += (v & 0xFFFFFF).to_bytes(3, "little")
    return bytes(out)


def status_body(uptime_ms: int, load_timeouts: int, cpu: int) -> bytes:
    """STATUS: uptime, overruns, tx dropped, load timeouts, cpu load, flags."""
    return struct.pack("<IHHHBB", uptime_ms & 0xFFFFFFFF, 0, 0, load_timeouts & 0xFFFF, cpu, 0)


# -- the tower a team built -----------------------------------------------------------------


@dataclass
class Tower:
    """One tournament tower: electronics, card and cubes, all drawn from the seed."""

    seed: int
    device_id: bytes
    fw: tuple[int, int, int]
    piezo_rate_hz: int
    batch: int
    adc_conv_us: float
    clock: str
    clock_err: float
    load_rate_hz: int
    hx_err: np.ndarray
    cells: str
    capacity_g: np.ndarray
    rated_mv_v: np.ndarray
    exc_ratio: float
    reversed: np.ndarray
    cpg: np.ndarray
    zero_g: np.ndarray
    plate_g: np.ndarray
    cell_f_hz: np.ndarray
    cell_zeta: np.ndarray
    load_noise_counts: np.ndarray
    tc_g_per_c: np.ndarray
    cell_lag_s: np.ndarray
    walk_g: np.ndarray
    warm_counts: np.ndarray
    warm_tau_s: float
    bias: np.ndarray
    glue: np.ndarray
    glue_ratio: float
    sens: np.ndarray
    mode_f: np.ndarray
    mode_q: np.ndarray
    mode_a: np.ndarray
    thud_a: float
    xt: float
    xt_cut_hz: float
    xt_delay_ms: float
    top_xt: float
    piezo_noise: np.ndarray
    hp_hz: np.ndarray
    loose: int
    loose_gap_ms: float
    loose_ratio: float
    loose_f_hz: float
    loose_thr: float
    table_lsb: float
    couple: np.ndarray
    gl_lsb: float
    gl_harm: np.ndarray
    gl_spike: float
    gl_chan: np.ndarray
    float_hum: float
    catch_p: np.ndarray
    edge_p: float
    top_clip_p: float
    e_lo: float
    e_hi: float
    hop_p: float
    knock_p: float
    cube_mass_g: float
    hard_share: float
    table_g0: float
    neighbours: list[dict[str, float]] = field(default_factory=list)

    def figures(self) -> dict[str, Any]:
        """The tower's figures as plain JSON values (for the truth file)."""
        def r(a: Any, nd: int = 4) -> Any:
            if isinstance(a, np.ndarray):
                return [r(x, nd) for x in a.tolist()]
            if isinstance(a, list):
                return [r(x, nd) for x in a]
            if isinstance(a, float):
                return round(a, nd)
            return a

        return {
            "device_id": self.device_id.hex(), "fw": list(self.fw),
            "piezo_rate_hz": self.piezo_rate_hz, "batch": self.batch,
            "adc_conv_us": self.adc_conv_us, "clock": self.clock,
            "clock_err_ppm": round(self.clock_err * 1e6, 1),
            "load_rate_hz": self.load_rate_hz, "hx_rate_err": r(self.hx_err),
            "cells": self.cells, "capacity_g": r(self.capacity_g),
            "rated_mv_v": r(self.rated_mv_v), "exc_ratio": self.exc_ratio,
            "reversed": [bool(x) for x in self.reversed], "counts_per_g": r(self.cpg, 1),
            "plate_g": r(self.plate_g), "cell_f_hz": r(self.cell_f_hz, 1),
            "tc_g_per_c": r(self.tc_g_per_c, 5), "bias_lsb": r(self.bias, 2),
            "hx_warmup_counts": r(self.warm_counts, 1),
            "hx_warmup_tau_s": round(self.warm_tau_s, 1),
            "sens_lsb_per_mns": r(self.sens, 1), "glue": r(self.glue),
            "glue_ratio": round(self.glue_ratio, 3),
            "mode_f_hz": r(self.mode_f, 1), "mode_q": r(self.mode_q, 1),
            "crosstalk": round(self.xt, 4), "hp_hz": r(self.hp_hz, 2),
            "loose_level": self.loose, "loose_gap_ms": round(self.loose_gap_ms, 2),
            "table_lsb_per_ms2": round(self.table_lsb, 2), "couple": r(self.couple),
            "ground_loop_lsb": round(self.gl_lsb, 3), "ground_loop_harm": r(self.gl_harm),
            "charger_spike_lsb": round(self.gl_spike, 3),
            "catch_p": r(self.catch_p), "knock_p": round(self.knock_p, 4),
            "cube_mass_g": round(self.cube_mass_g, 4), "hard_share": round(self.hard_share, 3),
            "neighbours": [{k: round(v, 4) for k, v in n.items()} for n in self.neighbours],
        }


def _loguniform(rng: np.random.Generator, lo: float, hi: float) -> float:
    return float(math.exp(rng.uniform(math.log(lo), math.log(hi))))


def make_tower(seed: int) -> Tower:
    """Draw one team's tower from the seed (the same for every scenario).

    Each group of figures has its own random stream, so that adding a figure to one
    group leaves the others' towers as they were.
    """
    dev, cell, disc, hall, fall = (np.random.default_rng([seed, 0x414B, g]) for g in range(5))
    # the device: Nano clone, its clock, the ADC timer, the batching of the firmware
    piezo_rate = int(dev.choice([2000, 2000, 2000, 1600, 2500]))
    batch = int(dev.choice([6, 8, 10, 12, 14]))
    resonator = dev.random() < 0.4
    clock_err = dev.uniform(-3e-3, 3e-3) if resonator else dev.uniform(-40e-6, 40e-6)
    device_id = dev.bytes(8)
    fw = (1, int(dev.integers(0, 4)), int(dev.integers(0, 10)))
    # the load cells and their HX711s
    load_rate = int(cell.choice([10, 80]))
    hx_err = cell.uniform(-0.03, 0.03, 8)
    if cell.random() < 0.65:
        capacity = np.full(8, float(cell.choice([100, 100, 100, 200, 300, 500])))
    else:
        capacity = cell.choice([100.0, 200.0, 500.0], 8)
    cells = "matched" if len(set(capacity.tolist())) == 1 else "mixed"
    rated = cell.uniform(0.85, 1.15, 8)
    exc = float(cell.choice([1.0, 1.0, 1.16, 0.66]))
    rev = cell.random(8) < 0.08
    cpg = np.where(rev, -1.0, 1.0) * rated * 1e-3 * exc * 128 * 2**24 / capacity
    zero_g = cell.uniform(-0.02, 0.02, 8) * capacity
    plate_g = cell.uniform(5.0, 14.0, 8)
    cell_f = cell.uniform(70.0, 110.0, 8) * np.sqrt(capacity / 100.0) * np.sqrt(10.0 / plate_g)
    cell_f = np.minimum(cell_f, 380.0)
    zeta = cell.uniform(0.03, 0.12, 8)
    noise = cell.uniform(15, 35, 8) if load_rate == 10 else cell.uniform(35, 80, 8)
    tc = cell.choice([-1.0, 1.0], 8) * cell.uniform(0.005, 0.03, 8) * capacity / 100.0
    lag = cell.uniform(60, 400, 8)
    walk = cell.uniform(0.0001, 0.0005, 8) * capacity / 100.0
    warm_counts = cell.choice([-1.0, 1.0], 8) * cell.uniform(100, 600, 8)
    warm_tau = cell.uniform(60, 240)
    # the piezo discs, glued by hand, and the card plates they sit under
    bias = 512 + disc.uniform(-4, 4, 8)
    glue = disc.random(8)
    u = (glue - glue.min()) / max(glue.max() - glue.min(), 1e-9)
    ratio = disc.uniform(3.5, 4.5)
    sens = disc.uniform(150, 350) * ratio ** (-u)
    f1 = disc.uniform(280, 520) * (1 + disc.uniform(0.03, 0.07)) ** np.arange(9)
    ratios = np.stack([np.ones(9), disc.uniform(1.55, 2.1, 9), disc.uniform(2.3, 3.0, 9),
                       disc.uniform(3.4, 4.4, 9)], axis=1)
    mode_f = f1[:, None] * ratios
    q0 = disc.uniform(10, 28, 9) * np.append(1 - 0.35 * u, 1.0)
    mode_q = q0[:, None] * np.array([1.0, 0.85, 0.7, 0.6])
    mode_a = np.stack([np.ones(9), disc.uniform(0.5, 0.9, 9), disc.uniform(0.3, 0.6, 9),
                       disc.uniform(0.2, 0.45, 9)], axis=1)
    loose = int(disc.integers(0, 8)) if disc.random() < 0.35 else -1
    if loose >= 0:
        sens[loose] *= 0.6  # a disc that lost half its glue passes less of the bending
    # where the tower stands: the table, the neighbours, the cable
    couple = np.append(hall.uniform(1.0, 1.4), hall.uniform(0.55, 1.0, 7)
                       * 0.96 ** np.arange(1, 8))
    gl = _loguniform(hall, 0.2, 5.0)
    harm = np.array([1.0, hall.uniform(0.1, 0.5), hall.uniform(0.2, 0.7),
                     hall.uniform(0.05, 0.3), hall.uniform(0.0, 0.2)])
    g0 = _loguniform(hall, 0.05, 0.2)
    neighbours = []
    for _ in range(int(hall.integers(2, 6))):
        r = hall.uniform(0.5, 3.0)
        joint = hall.uniform(0.2, 0.5) if r > 1.3 and hall.random() < 0.4 else 1.0
        neighbours.append({
            "distance_m": r, "joint": joint, "f_hz": hall.uniform(45, 180),
            "q": hall.uniform(2, 6),
            "gain": g0 * math.sqrt(0.5 / r) * math.exp(-(r - 0.5) / 2.5) * joint,
            "pace_s": hall.uniform(4, 15), "delay_ms": r / hall.uniform(100, 300) * 1e3,
        })
    neighbours.sort(key=lambda n: n["distance_m"])
    # how cubes fall in this tower, and the cubes of this team's set
    catch = np.ones(8)
    base, step = fall.uniform(0.3, 0.36), fall.uniform(0.0, 0.02)
    catch[1:] = base + step * np.arange(7) + fall.uniform(-0.02, 0.02, 7)
    e_lo = fall.uniform(0.25, 0.35)
    return Tower(
        seed=seed, device_id=device_id, fw=fw, piezo_rate_hz=piezo_rate, batch=batch,
        adc_conv_us=52.0 if piezo_rate <= 2000 else 26.0,
        clock="resonator" if resonator else "crystal", clock_err=clock_err,
        load_rate_hz=load_rate, hx_err=hx_err, cells=cells, capacity_g=capacity,
        rated_mv_v=rated, exc_ratio=exc, reversed=rev, cpg=cpg, zero_g=zero_g, plate_g=plate_g,
        cell_f_hz=cell_f, cell_zeta=zeta, load_noise_counts=noise, tc_g_per_c=tc,
        cell_lag_s=lag, walk_g=walk, warm_counts=warm_counts, warm_tau_s=warm_tau,
        bias=bias, glue=glue, glue_ratio=ratio, sens=sens, mode_f=mode_f, mode_q=mode_q,
        mode_a=mode_a, thud_a=disc.uniform(0.08, 0.25), xt=disc.uniform(0.10, 0.35),
        xt_cut_hz=disc.uniform(1200, 3000), xt_delay_ms=disc.uniform(0.08, 0.3),
        top_xt=disc.uniform(0.3, 0.6), piezo_noise=disc.uniform(0.4, 1.1, 8),
        hp_hz=disc.uniform(5, 16, 8), loose=loose, loose_gap_ms=disc.uniform(2, 8),
        loose_ratio=disc.uniform(0.3, 0.8), loose_f_hz=disc.uniform(2600, 4500),
        loose_thr=disc.uniform(15, 40),
        table_lsb=_loguniform(hall, 40, 150), couple=couple, gl_lsb=gl, gl_harm=harm,
        gl_spike=hall.uniform(0, 1.5) * gl, gl_chan=1 + hall.normal(0, 0.05, 8),
        float_hum=hall.uniform(4, 20), table_g0=g0, neighbours=neighbours,
        catch_p=catch, edge_p=fall.uniform(0.25, 0.45), top_clip_p=fall.uniform(0.2, 0.4),
        e_lo=e_lo, e_hi=e_lo + fall.uniform(0.1, 0.2), hop_p=fall.uniform(0.04, 0.12),
        knock_p=fall.uniform(0.02, 0.05), cube_mass_g=fall.uniform(0.35, 0.75),
        hard_share=fall.uniform(0.4, 0.85),
    )


# -- cubes falling ----------------------------------------------------------------------------


@dataclass
class Cube:
    """A wooden cube: its colour and mass."""

    fid: int
    colour: str
    mass_g: float


@dataclass(slots=True)
class Impact:
    """A strike on a plate (level 0-7) or on the top roof (8), real seconds, mN s."""

    t: float
    level: int
    j: float
    kind: str
    tau_ms: float
    w: tuple[float, float, float, float]


@dataclass
class FallPath:
    """Where a falling cube went: its impacts, the plate it rests on and when."""

    impacts: list[Impact]
    level: int
    t_on_plate: float
    t_rest: float
    hops: int


def _w(rng: np.random.Generator, kind: str) -> tuple[float, float, float, float]:
    """Modal weights of a strike: where on the plate it fell (mode shapes)."""
    if kind == "edge":  # at the hole's rim the higher modes have their antinodes
        a = rng.uniform([0.1, 0.5, 0.5, 0.5], [0.5, 1.0, 1.0, 1.0])
    elif kind in ("wall", "close", "lift", "grab"):
        a = np.array([0.4, 0.2, 0.1, 0.05]) * rng.uniform(0.7, 1.3)
    else:
        a = rng.uniform(0.3, 1.0, 4)
    return (float(a[0]), float(a[1]), float(a[2]), float(a[3]))


def descend(rng: np.random.Generator, tw: Tower, mass_g: float, t: float, v: float,
            start: int) -> FallPath:
    """A cube going down the shaft from just above plate ``start - 1`` at speed ``v`` (m/s).

    ``start`` 8 is the entry hole in the top roof. Each plate stops the cube with the
    tower's catch odds (the ground floor always); a cube that passes may clip the
    hole's rim. A stopped cube bounces (restitution e_lo-e_hi), may hit the plate above
    when it rises more than the module's clearance, may hop into the hole and fall on,
    and comes to rest after 1-3 tumbling ticks.
    """
    imps: list[Impact] = []
    m = mass_g
    hops = 0
    if start == 8 and rng.random() < tw.top_clip_p:
        imps.append(Impact(t, 8, rng.uniform(0.1, 0.5) * m * v * 1.4, "top",
                           rng.uniform(0.4, 1.0), _w(rng, "edge")))
        v *= rng.uniform(0.7, 0.95)
    level = start - 1
    while True:
        v2 = math.sqrt(v * v + 2 * G * MODULE_H)
        t += (v2 - v) / G
        v = v2
        p = tw.catch_p[level] * min(1.1, max(0.8, 1.15 - 0.1 * v))
        if level > 0 and rng.random() >= p:
            if rng.random() < tw.edge_p:
                imps.append(Impact(t, level, rng.uniform(0.1, 0.4) * m * v * 1.4, "edge",
                                   rng.uniform(0.3, 0.8), _w(rng, "edge")))
                v *= rng.uniform(0.75, 0.95)
            level -= 1
            continue
        t_on = t
        u_in = v
        n = 0
        hopped = False
        while True:
            e = rng.uniform(tw.e_lo, tw.e_hi) * (1.0 if n == 0 else rng.uniform(0.8, 1.0))
            imps.append(Impact(t, level, m * u_in * (1 + e), "plate" if n == 0 else "bounce",
                               rng.uniform(0.4, 1.0), _w(rng, "plate")))
            u = e * u_in
            if n == 0 and level > 0 and u_in > 1.2 and rng.random() < tw.hop_p:
                t += 2 * u / G  # it bounced off the rim into the hole and falls on
                v = u
                hopped = True
                break
            if u < 0.1:
                break
            if u * u / (2 * G) > CLEARANCE and rng.random() < 0.55:
                vc = math.sqrt(u * u - 2 * G * CLEARANCE)
                t += (u - vc) / G
                e2 = rng.uniform(0.2, 0.45)
                imps.append(Impact(t, level + 1, m * vc * (1 + e2), "ceiling",
                                   rng.uniform(0.4, 1.0), _w(rng, "plate")))
                w = e2 * vc
                v_land = math.sqrt(w * w + 2 * G * CLEARANCE)
                t += (v_land - w) / G
                u_in = v_land
            else:
                tf = 2 * u / G
                if rng.random() < 0.35:
                    imps.append(Impact(t + rng.uniform(0.2, 0.8) * tf, level,
                                       rng.uniform(0.15, 0.4) * m * u, "wall",
                                       rng.uniform(0.5, 1.2), _w(rng, "wall")))
                t += tf
                u_in = u * rng.uniform(0.85, 1.0)
            n += 1
        if hopped:
            hops += 1
            level -= 1
            continue
        for _ in range(int(rng.integers(1, 4))):
            t += rng.uniform(0.008, 0.045)
            imps.append(Impact(t, level, m * rng.uniform(0.02, 0.1), "tick",
                               rng.uniform(0.3, 0.8), _w(rng, "tick")))
        t_rest = t + rng.uniform(0.005, 0.03)
        imps.sort(key=lambda i: i.t)
        return FallPath(imps, level, t_on, t_rest, hops)


# -- a session at the tournament ------------------------------------------------------------


class Scene:
    """One recording's events, in real seconds (the device clock may run off: see ``st``)."""

    def __init__(self, tw: Tower, scenario: str, duration: float, rng: np.random.Generator,
                 *, murmur: bool = True) -> None:
        self.tw = tw
        self.scenario = scenario
        self.duration = duration  # stream seconds (device clock)
        self.dur = duration / (1 + tw.clock_err)  # real seconds
        self.rng = rng
        self.impacts: list[Impact] = []
        self.weights: list[tuple[float, int, float]] = []  # (t, level, grams)
        self.presses: list[tuple[float, float, int, float]] = []  # (t0, t1, level, grams)
        self.rustles: list[tuple[float, float, int, float]] = []  # (t0, t1, level, LSB)
        self.offline: list[tuple[float, float, int]] = []  # (t_lift, t_close, level)
        self.chatter: list[tuple[float, int]] = []  # spring contacts open / close
        self.table: list[tuple[float, float, float, float]] = []  # (t, m/s^2, f, Q)
        self.on_level: list[list[tuple[Cube, float]]] = [[] for _ in range(8)]
        self.landings: list[dict[str, Any]] = []
        self.knockdowns: list[dict[str, Any]] = []
        self.removals: list[dict[str, Any]] = []
        self.lifts: list[dict[str, Any]] = []
        self.closes: list[dict[str, Any]] = []
        self.knocks: list[dict[str, Any]] = []
        self.fallouts: list[dict[str, Any]] = []
        self.neighbour_throws: list[dict[str, Any]] = []
        self.music: list[dict[str, Any]] = []
        self.pa: list[dict[str, Any]] = []
        self.vehicles: list[dict[str, Any]] = []
        self.cheers: list[dict[str, Any]] = []
        self.murmur_lsb = 0.0
        self._grip = (0.0, 0)
        self._t_lift = 0.0
        self.next_fid = 0
        self.n_series = 0
        self.n_hand = 0
        self.quiet_until = float(rng.uniform(4.0, 6.5))
        self.game: dict[str, Any] | None = None
        self._session()
        self._climate()
        self.murmur_on = murmur

    # -- session: how the port was opened, the clock, the hall's air ----------------------
    def _session(self) -> None:
        rng = self.rng
        u = rng.random()
        self.start = "plugged" if u < 0.25 else "dtr" if u < 0.6 else "running"
        if self.start == "running":
            if rng.random() < 0.5:  # the 32-bit microsecond clock wraps during this recording
                to_wrap = rng.uniform(5.0, max(6.0, 0.9 * self.duration))
                uptime_us = (int(rng.integers(1, 8)) << 32) - int(to_wrap * 1e6)
            else:
                uptime_us = int(rng.uniform(600, 9 * 3600) * 1e6)
            self.seq0 = int(rng.integers(0, 65536))
            self.age_s = uptime_us / 1e6
        else:
            uptime_us = int(rng.uniform(30e3, 300e3))  # setup() done, first set sampled
            self.seq0 = 0
            self.age_s = uptime_us / 1e6 if self.start == "plugged" else rng.uniform(600, 9000)
        self.uptime0_us = uptime_us
        self.t_us0 = uptime_us & 0xFFFFFFFF

    def _climate(self) -> None:
        rng = self.rng
        self.warm_c_per_h = rng.uniform(1.0, 5.0)  # the hall fills up
        self.warmup_c = rng.uniform(1.0, 3.0)  # electronics and cells after power-on
        self.warmup_tau_s = rng.uniform(300, 900)
        self.draughts: list[tuple[float, float, float]] = []
        if rng.random() < (0.9 if self.scenario == "noisy" else 0.3):
            self.draughts.append((rng.uniform(0.2, 0.8) * self.dur, -rng.uniform(0.3, 1.0),
                                  rng.uniform(20, 60)))

    def air_temp(self, t: np.ndarray) -> np.ndarray:
        """Air temperature change at the tower (deg C) at real times ``t``."""
        age = self.age_s + t
        x = self.warm_c_per_h * t / 3600 + self.warmup_c * (1 - np.exp(-age / self.warmup_tau_s))
        for t0, dc, dur in self.draughts:  # the loading door opens: cool air for a while
            x = x + dc * np.clip((t - t0) / 5.0, 0, 1) * np.exp(-np.clip(t - t0 - dur, 0, None)
                                                                / 30.0)
        return x

    def st(self, t: float) -> float:
        """Real seconds to stream seconds (the device clock's view)."""
        return round(t * (1 + self.tw.clock_err), 5)

    # -- cubes ---------------------------------------------------------------------------
    def new_cube(self, colour: str) -> Cube:
        self.next_fid += 1
        m = self.tw.cube_mass_g * self.rng.uniform(0.94, 1.06)
        return Cube(self.next_fid, colour, m)

    def resting(self, level: int, t: float) -> list[tuple[Cube, float]]:
        return [x for x in self.on_level[level] if x[1] < t]

    def throw(self, t_rel: float, cube: Cube, *, style: str, kind: str = "throw",
              who: str | None = None, handful: int | None = None,
              series: int | None = None) -> dict[str, Any] | None:
        """Throw ``cube`` into the top; returns its landing (None if it would rest too late)."""
        rng = self.rng
        if style == "hard":
            h, v0 = rng.uniform(0.04, 0.2), rng.uniform(0.8, 2.4)
        else:
            h, v0 = rng.uniform(0.01, 0.08), rng.uniform(0.0, 0.3)
        v_top = math.sqrt(v0 * v0 + 2 * G * h)
        t_top = t_rel + (v_top - v0) / G
        path = descend(rng, self.tw, cube.mass_g, t_top, v_top, 8)
        if path.t_rest > self.dur - 0.05:
            return None
        rec: dict[str, Any] = {
            "t": self.st(path.t_rest), "floor": path.level, "cubes": 1, "knocked": False,
            "kind": kind, "style": style, "fid": cube.fid, "colour": cube.colour,
            "mass_g": round(cube.mass_g, 4), "t_release": self.st(t_rel),
            "t_first_impact": self.st(path.impacts[0].t), "t_on_plate": self.st(path.t_on_plate),
            "hops": path.hops, "impacts": self._imp_list(path.impacts),
        }
        if who is not None:
            rec["who"] = who
        if handful is not None:
            rec["handful"] = handful
        if series is not None:
            rec["series"] = series
        self.impacts += path.impacts
        knocked = self._knockdown(path, cube)
        if knocked is not None:
            rec["caused_knockdown"] = True
        self.on_level[path.level].append((cube, path.t_rest))
        self.weights.append((path.t_rest, path.level, cube.mass_g))
        self.landings.append(rec)
        if knocked is not None:
            self.landings.append(knocked)
        return rec

    def _imp_list(self, imps: list[Impact]) -> list[list[Any]]:
        return [[self.st(i.t), i.level, round(i.j, 4), i.kind] for i in imps]

    def _knockdown(self, path: FallPath, cube: Cube) -> dict[str, Any] | None:
        """A strike on a plate that holds cubes may push one through the hole."""
        rng = self.rng
        for imp in path.impacts:
            if imp.kind not in ("plate", "bounce") or imp.level < 1 or imp.j < 0.3:
                continue
            here = self.resting(imp.level, imp.t - 0.05)
            if not here:
                continue
            p = self.tw.knock_p * (1 - math.exp(-len(here) / 5)) * min(2.0, imp.j / 1.0)
            if rng.random() >= p:
                continue
            victim, t_was = here[int(rng.integers(0, len(here)))]
            t_leave = imp.t + rng.uniform(0.005, 0.03)
            kp = descend(rng, self.tw, victim.mass_g, t_leave, rng.uniform(0.1, 0.35), imp.level)
            if kp.t_rest > self.dur - 0.05:
                return None
            self.on_level[imp.level].remove((victim, t_was))
            self.weights.append((t_leave, imp.level, -victim.mass_g))
            self.weights.append((kp.t_rest, kp.level, victim.mass_g))
            self.on_level[kp.level].append((victim, kp.t_rest))
            self.impacts += kp.impacts
            self.knockdowns.append({"t": self.st(t_leave), "from": imp.level, "to": kp.level,
                                    "fid": victim.fid, "by_fid": cube.fid})
            return {
                "t": self.st(kp.t_rest), "floor": kp.level, "cubes": 1, "knocked": True,
                "knocked_from": imp.level, "kind": "knocked", "fid": victim.fid,
                "colour": victim.colour, "mass_g": round(victim.mass_g, 4),
                "t_release": self.st(t_leave),
                "t_first_impact": self.st(kp.impacts[0].t), "t_on_plate": self.st(kp.t_on_plate),
                "hops": kp.hops, "impacts": self._imp_list(kp.impacts), "by_fid": cube.fid,
            }
        return None

    # -- hands: lifts, removals, closes ----------------------------------------------------
    def lift(self, t: float, k: int) -> float:
        """Grip the lower floors and lift modules k..7 off: level ``k`` lies open."""
        rng = self.rng
        t_lift = t + rng.uniform(0.3, 0.6)
        self._grip = (t, k)
        self.impacts.append(Impact(t_lift, k, rng.uniform(0.1, 0.4), "lift", 3.0, _w(rng, "lift")))
        self.rustles.append((t_lift - 0.05, t_lift + 0.12, k, rng.uniform(10, 40)))
        for lv in range(k + 1, 8):
            self.chatter.append((t_lift + rng.uniform(0, 0.02), lv))
        self.lifts.append({"t": self.st(t_lift), "exposed": k})
        self._t_lift = t_lift
        return t_lift

    def fall_out(self, t_lift: float, k: int) -> list[Cube]:
        """Now and then a cube slips out of the lifted modules onto the table."""
        out: list[Cube] = []
        for lv in range(k + 1, 8):
            for c, tr in list(self.on_level[lv]):
                if self.rng.random() < 0.015 and not out:
                    t = t_lift + self.rng.uniform(0.2, 0.8)
                    self.on_level[lv].remove((c, tr))
                    self.weights.append((t, lv, -c.mass_g))
                    # it drops 10-20 cm onto the table beside the tower: a near thump
                    j = c.mass_g * math.sqrt(2 * G * self.rng.uniform(0.1, 0.2)) * 1.4
                    self.table.append((t + 0.15, 1.6 * self.tw.table_g0 * j,
                                       self.rng.uniform(80, 200), 3.0))
                    self.fallouts.append({"t": self.st(t), "floor": lv, "fid": c.fid,
                                          "colour": c.colour})
                    out.append(c)
        return out

    def remove(self, t: float, k: int, cubes: list[Cube]) -> float:
        """Fingers press on plate ``k`` and pick ``cubes`` up; returns when they left it."""
        rng = self.rng
        d = rng.uniform(0.2, 0.5)
        self.presses.append((t, t + d, k, rng.uniform(3, 12)))
        self.rustles.append((t, t + d, k, rng.uniform(4, 18)))
        for _ in range(len(cubes)):  # cubes clicking against each other and the plate
            self.impacts.append(Impact(t + rng.uniform(0.05, d), k, rng.uniform(0.02, 0.08),
                                       "grab", 0.5, _w(rng, "tick")))
        t_leave = t + d
        for c in cubes:
            self.on_level[k] = [x for x in self.on_level[k] if x[0].fid != c.fid]
            self.weights.append((t_leave, k, -c.mass_g))
        self.removals.append({"t": self.st(t_leave), "floor": k, "cubes": len(cubes),
                              "mass_g": round(sum(c.mass_g for c in cubes), 4),
                              "fids": [c.fid for c in cubes]})
        return t_leave

    def close(self, t: float, k: int) -> float:
        """Set modules k..7 back on: the walls land, the spring contacts close."""
        rng = self.rng
        t_grip, _ = self._grip
        self.impacts.append(Impact(t, k, rng.uniform(1.5, 5.0), "close", rng.uniform(2, 5),
                                   _w(rng, "close")))
        for lv in range(k + 1, 8):
            self.offline.append((self._t_lift, t, lv))
            self.chatter.append((t + rng.uniform(0, 0.015), lv))
            # the plate re-seats on its cell a little differently (hysteresis of the card)
            self.weights.append((t, lv, rng.uniform(-1, 1) * rng.uniform(0.005, 0.03)))
        t_release = t + rng.uniform(0.1, 0.4)
        for lv in range(max(1, k - 1), k + 1):  # the hand holding the floors below squeezed
            self.presses.append((t_grip, t_release, lv, rng.uniform(0.1, 1.0)))
        self.rustles.append((t_grip, t_release, max(0, k - 1), rng.uniform(2, 10)))
        self.closes.append({"t": self.st(t), "exposed": k})
        return t

    # -- the table and the hall ------------------------------------------------------------
    def bump(self, t: float, who: str = "neighbour") -> None:
        """Someone bumps the trestle table: a disturbance felt by every sensor."""
        rng = self.rng
        sharp, bounce = rng.uniform(0.8, 4.0), rng.uniform(0.4, 2.0)
        self.table.append((t, sharp, rng.uniform(50, 140), 2.5))
        self.table.append((t + 0.004, bounce, rng.uniform(7, 18), rng.uniform(3, 6)))
        for lv in range(8):  # resting cubes rattle, but stay where they are
            n = len(self.resting(lv, t))
            for _ in range(int(rng.integers(1, 4)) if n else 0):
                self.impacts.append(Impact(t + rng.uniform(0.01, 0.15), lv,
                                           rng.uniform(0.005, 0.04) * min(n, 5) ** 0.5,
                                           "rattle", 0.5, _w(rng, "tick")))
        self.knocks.append({"t": self.st(t), "t_end": self.st(t + 0.6), "kind": "bump",
                            "by": who, "peak_ms2": round(sharp + bounce, 3)})

    def neighbour_throw(self, t: float, ni: int, hand: int = 1) -> None:
        """Neighbour ``ni`` throws ``hand`` cubes into their own tower at ``t``.

        Their cubes fall through their tower as ours do; every strike there reaches our
        tower through the table top, delayed, weakened and low-passed (the path's mode).
        """
        rng = self.rng
        nb = self.tw.neighbours[ni]
        for i in range(hand):
            tr = t + (rng.uniform(0, 0.04) if i else 0.0)
            v = rng.uniform(0.8, 2.4) if rng.random() < 0.7 else rng.uniform(0.3, 1.2)
            path = descend(rng, self.tw, self.tw.cube_mass_g, tr, v, 8)
            for imp in path.impacts:
                if imp.t < self.dur:
                    self.table.append((imp.t + nb["delay_ms"] * 1e-3, nb["gain"] * imp.j,
                                       nb["f_hz"] * rng.uniform(0.9, 1.1), nb["q"]))

    def neighbour_activity(self, busy: float) -> None:
        """Players at the neighbouring towers throw their cubes; the table carries it."""
        rng = self.rng
        for ni, nb in enumerate(self.tw.neighbours):
            if rng.random() > busy:
                continue
            pace = nb["pace_s"] / (0.6 + busy)
            t = self.quiet_until + rng.uniform(0, pace)
            while t < self.dur - 0.5:
                n_throws = int(rng.integers(1, 7))
                t_first = t
                cubes = 0
                for _ in range(n_throws):
                    hand = int(rng.integers(2, 4)) if rng.random() < 0.2 else 1
                    self.neighbour_throw(t, ni, hand)
                    cubes += hand
                    t += rng.uniform(0.3, 0.8)
                if rng.random() < 0.15:  # they open their tower: the walls land again
                    tc = t + rng.uniform(2, 5)
                    if tc < self.dur:
                        self.table.append((tc, nb["gain"] * rng.uniform(1.5, 5), nb["f_hz"] * 0.8,
                                           nb["q"]))
                        t = tc
                self.neighbour_throws.append({
                    "t": self.st(t_first), "t_end": self.st(min(t, self.dur)), "neighbour": ni,
                    "distance_m": round(nb["distance_m"], 3), "cubes": cubes})
                t += rng.exponential(pace) + 1.0

    def hall(self, loud: bool) -> None:
        """Music, announcements, traffic, murmur and bumps of a tournament hall."""
        rng = self.rng
        q0 = self.quiet_until
        self.murmur_lsb = rng.uniform(0.8, 2.0) if loud else rng.uniform(0.2, 0.8)
        if loud or rng.random() < 0.4:
            on_at_start = loud or rng.random() < 0.5
            t0 = 0.0 if on_at_start else rng.uniform(q0, self.dur * 0.7)
            t1 = self.dur if (loud or rng.random() < 0.6) else rng.uniform(t0 + 10, self.dur + 20)
            self.music.append({
                "t": t0, "t_end": min(t1, self.dur), "bpm": rng.uniform(100, 130),
                "kick_ms2": rng.uniform(0.06, 0.2) if loud else rng.uniform(0.02, 0.07),
                "bass_ms2": rng.uniform(0.03, 0.1) if loud else rng.uniform(0.01, 0.04),
                "root_hz": rng.uniform(41.2, 55.0), "seed": int(rng.integers(0, 2**31))})
        for _ in range(int(rng.integers(1, 3)) if loud else int(rng.random() < 0.25)):
            t = rng.uniform(q0 + 2, max(q0 + 3, self.dur - 12))
            self.pa.append({"t": t, "t_speech": t + 1.3, "t_end": t + 1.3 + rng.uniform(3, 8),
                            "f0_hz": rng.uniform(95, 180), "level_ms2": rng.uniform(0.01, 0.06),
                            "seed": int(rng.integers(0, 2**31))})
        if loud or rng.random() < 0.2:
            width = rng.uniform(5, 15)
            tc = rng.uniform(q0 + width / 2, max(q0 + width / 2 + 1, self.dur - width / 2))
            self.vehicles.append({"t": tc - width / 2, "t_peak": tc, "t_end": tc + width / 2,
                                  "kind": "forklift" if rng.random() < 0.5 else "trolley",
                                  "peak_ms2": rng.uniform(0.05, 0.25),
                                  "seed": int(rng.integers(0, 2**31))})
        if loud:
            for _ in range(int(rng.integers(1, 3))):
                t = rng.uniform(q0, self.dur - 3)
                self.cheers.append({"t": t, "t_end": t + rng.uniform(1, 3)})
        n_bumps = int(rng.integers(2, 5)) if loud else int(rng.random() < 0.3)
        for _ in range(n_bumps):
            self.bump(rng.uniform(q0 + 1, self.dur - 1.5))
        self.neighbour_activity(1.0 if loud else rng.uniform(0.5, 0.9))


# -- what happens in each scenario --------------------------------------------------------


def _style(tw: Tower, rng: np.random.Generator) -> str:
    return "hard" if rng.random() < tw.hard_share else "drop"


def _singles(sc: Scene, t: float, t_end: float, gap: tuple[float, float]) -> float:
    rng = sc.rng
    while t < t_end:
        rec = sc.throw(t, sc.new_cube(str(rng.choice(COLOURS))), style=_style(sc.tw, rng))
        t_rest = t + 0.4 if rec is None else rec["t"] / (1 + sc.tw.clock_err)
        t = t_rest + rng.uniform(*gap)
    return t


def _series(sc: Scene, t: float, t_end: float, pause: tuple[float, float],
            handful_share: float) -> float:
    """Series of 3-7 throws 0.3-0.8 s apart, some of them handfuls of 2-4 cubes."""
    rng = sc.rng
    while t < t_end:
        sc.n_series += 1
        last_rest = t
        colour = str(rng.choice(COLOURS))
        for _ in range(int(rng.integers(3, 7))):
            hand = int(rng.integers(2, 5)) if rng.random() < handful_share else 1
            if hand > 1:
                sc.n_hand += 1
            style = "hard" if rng.random() < max(sc.tw.hard_share, 0.6) else "drop"
            for i in range(hand):
                t_rel = t + (rng.uniform(0.0, 0.04) if i else 0.0)
                rec = sc.throw(t_rel, sc.new_cube(colour), style=style, series=sc.n_series,
                               handful=sc.n_hand if hand > 1 else None)
                if rec is not None:
                    last_rest = max(last_rest, rec["t"] / (1 + sc.tw.clock_err))
            t += rng.uniform(0.3, 0.8)
            if t > sc.dur - 1.5:
                break
        t = max(t, last_rest) + rng.uniform(*pause)
    return t


def simulate(seed: int, scenario: str, duration: float) -> Scene:
    """The events of one recording of tower ``seed``."""
    if scenario not in SCENARIOS:
        raise ValueError(f"unknown scenario {scenario!r} (known: {', '.join(SCENARIOS)})")
    tw = make_tower(seed)
    rng = np.random.default_rng([seed, SCENARIOS.index(scenario), 0x5C])
    sc = Scene(tw, scenario, duration, rng)
    sc.hall(loud=scenario == "noisy")
    t0 = sc.quiet_until + rng.uniform(0.0, 1.0)
    t_end = sc.dur - 3.0
    if scenario == "single":
        _singles(sc, t0, t_end, (1.0, 3.5))
    elif scenario == "rapid":
        _series(sc, t0, t_end, (2.5, 6.0), 0.25)
    elif scenario == "noisy":
        t = t0
        while t < t_end:  # a series first, then singles and series at random
            if sc.n_series and rng.random() < 0.5:
                t = _singles(sc, t, min(t_end, t + rng.uniform(5, 15)), (0.8, 3.0))
            else:
                t = _series(sc, t, min(t_end, t + 0.1), (1.0, 3.0), 0.25)
    else:
        game = Arosa(sc, rng)
        game.play(t0, sc.dur)
        sc.game = game.state()
    sc.landings.sort(key=lambda x: x["t"])
    return sc


# -- Mord im Arosa, by the rulebook ---------------------------------------------------------


class Arosa:
    """A fast tournament table playing Mord im Arosa on our tower (rules/004_*.txt)."""

    def __init__(self, sc: Scene, rng: np.random.Generator) -> None:
        self.sc = sc
        self.rng = rng
        n = int(rng.integers(3, 7))
        self.players = [str(c) for c in rng.permutation(COLOURS)[:n]]
        self.supply = {p: 20 for p in self.players}
        self.sheet = {p: [0] * 8 for p in self.players}
        self.crime_scenes: set[int] = set()
        self.phase = "prologue"
        self.found = 0
        self.turns: list[dict[str, Any]] = []
        self.hard = {p: rng.random() < max(0.3, sc.tw.hard_share) for p in self.players}
        self.in_hand: list[Cube] = []

    # the state and its end
    def check_over(self) -> bool:
        if self.phase != "over" and (any(sum(v) >= 10 for v in self.sheet.values())
                                     or any(v <= 0 for v in self.supply.values())):
            self.phase = "over"
        return self.phase == "over"

    def on_floor(self, k: int) -> list[Cube]:
        return [c for c, _ in self.sc.on_level[k]]

    def _throw(self, t: float, cube: Cube, who: str, kind: str) -> float:
        """One throw at ``t``; returns when the cube rests (or ``t`` if it came too late)."""
        style = "hard" if self.hard[who] else "drop"
        rec = self.sc.throw(t, cube, style=style, kind=kind, who=who)
        return t if rec is None else rec["t"] / (1 + self.sc.tw.clock_err)

    def _from_supply(self, t: float, who: str, kind: str) -> float:
        t_rest = self._throw(t, self.sc.new_cube(who), who, kind)
        self.supply[who] -= 1
        self.check_over()
        return t_rest

    def play(self, t: float, t_end: float) -> None:
        rng = self.rng
        knife = self.players[int(rng.integers(0, len(self.players)))]
        for _ in range(2):  # both victims, by the last one to hold a knife
            t = self._throw(t, self.sc.new_cube("red"), knife, "victim") + rng.uniform(0.3, 0.8)
        for p in self.players:  # two own clues each, one after the other
            t += rng.uniform(0.3, 1.5)
            for _ in range(2):
                if t > t_end - 2.0:
                    return
                t = self._from_supply(t, p, "prologue") + rng.uniform(0.2, 0.6)
        self.phase = "act1"
        who = int(rng.integers(0, len(self.players)))
        while self.phase != "over" and t < t_end - 9.0:
            t, nxt = self.turn(t + rng.uniform(0.8, 2.0), self.players[who], t_end)
            who = (who + 1) % len(self.players) if nxt is None else nxt

    def _pick_floor(self, want: list[int]) -> int:
        """A good listener goes for a floor they heard; else a likely one."""
        if want and self.rng.random() < 0.55:
            return int(self.rng.choice(want))
        weights = np.array([0.08, 0.05, 0.06, 0.08, 0.11, 0.15, 0.21, 0.26])
        return int(self.rng.choice(8, p=weights / weights.sum()))

    def turn(self, t: float, who: str, t_end: float) -> tuple[float, int | None]:
        """One investigator's turn; returns the time it ended and the next player (or None)."""
        rng, sc = self.rng, self.sc
        rec: dict[str, Any] = {"who": who, "phase": self.phase}
        nxt: int | None = None
        if self.phase == "act1":
            rec["action"] = "inspect"
            k = self._pick_floor([f for f in range(8)
                                  if any(c.colour == "red" for c in self.on_floor(f))])
        else:
            own_on_sheet = sum(self.sheet[who])
            if own_on_sheet and rng.random() < 0.4:
                rec["action"] = "cover"
                k = self._pick_floor([f for f in range(8) if self.sheet[who][f]
                                      and any(c.colour == who for c in self.on_floor(f))])
            else:
                rec["action"] = "suspect"
                others = [p for p in self.players if p != who]
                n_s = 1 if rng.random() < 0.7 or len(others) < 2 else 2
                suspects = [str(x) for x in rng.choice(others, n_s, replace=False)]
                rec["suspects"] = suspects
                counts = [sum(c.colour in suspects for c in self.on_floor(f)) for f in range(8)]
                best = int(np.argmax(counts))
                k = self._pick_floor([best] if counts[best] else [])
        rec["floor"] = k
        t_lift = sc.lift(t, k)
        rec["t_lift"] = sc.st(t_lift)
        fell = sc.fall_out(t_lift, k)
        here = self.on_floor(k)
        t_now = t_lift + rng.uniform(0.6, 1.6)
        to_sheet: list[Cube] = []  # cubes that leave the tower for the sheet
        penalties = 0
        if self.phase == "act1":
            victims = [c for c in here if c.colour == "red"]
            rec["victims"] = len(victims)
            if victims:
                self.crime_scenes.add(k)
                self.found += len(victims)
                to_sheet += victims
                for p in self.players:
                    if p != who:
                        n = sum(c.colour == p for c in here)
                        put = min(n, self.supply[p])
                        self.sheet[p][k] += put
                        self.supply[p] -= put
                        self.check_over()
                if self.found >= 2 and self.phase != "over":
                    self.phase = "act2"
                    nxt = (self.players.index(who) + 1) % len(self.players)
            else:
                penalties = 1
        elif rec["action"] == "suspect":
            suspects = rec["suspects"]
            if k == 0 and not any(c.colour == who for c in here):
                penalties = len(suspects)  # the ground-floor case
                rec["ground_floor_case"] = True
            else:
                placed = {}
                for s in suspects:
                    n = sum(c.colour == s for c in here)
                    put = min(n, self.supply[s])
                    self.sheet[s][k] += put
                    self.supply[s] -= put
                    placed[s] = put
                    if n == 0:
                        penalties += 1
                    self.check_over()
                rec["placed"] = placed
        else:
            n_own = sum(c.colour == who for c in here)
            back = min(n_own, self.sheet[who][k])
            self.sheet[who][k] -= back
            self.supply[who] += back
            rec["taken_back"] = back
            penalties = 0 if n_own else 1
        rec["penalties"] = penalties
        if self.phase == "over":  # the game ends at once: they just close the tower
            sc.close(t_now, k)
            self.turns.append(rec)
            return t_now, None
        if here:  # all clues (and victims) come out, in one or two grabs
            grabs = [here] if len(here) <= 4 else [here[: len(here) // 2], here[len(here) // 2:]]
            for g in grabs:
                t_now = sc.remove(t_now, k, g) + rng.uniform(0.8, 1.4)
        rec["removed"] = len(here)
        t_close = sc.close(t_now + rng.uniform(0.0, 0.5), k)
        rec["t_close"] = sc.st(t_close)
        back_in = [c for c in here if c not in to_sheet] + fell
        t = t_close + rng.uniform(0.4, 1.0)
        for c in back_in:  # one after another
            if t > t_end - 1.5:
                break
            t = self._throw(t, c, who, "throwback") + rng.uniform(0.3, 0.8)
        for _ in range(penalties):
            if t > t_end - 1.5 or self.phase == "over":
                break
            t = self._from_supply(t, who, "penalty") + rng.uniform(0.3, 0.8)
        self.turns.append(rec)
        return t, nxt

    def state(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "players": self.players, "phase": self.phase,
            "crime_scenes": sorted(self.crime_scenes), "sheet": self.sheet,
            "supply": self.supply, "turns": self.turns,
        }
        if self.phase == "over":
            points = {}
            for p in self.players:
                s = 0
                for f, n in enumerate(self.sheet[p]):
                    if f in self.crime_scenes:
                        s += 3 * n
                    elif f - 1 in self.crime_scenes or f + 1 in self.crime_scenes:
                        s += 2 * n
                    else:
                        s += n
                points[p] = s
            out["suspicion"] = points
            out["culprits"] = [p for p in self.players if points[p] == max(points.values())]
            out["winners"] = [p for p in self.players if points[p] == min(points.values())]
        return out


# -- rendering: the table and the hall ---------------------------------------------------------


def _damped(tau: np.ndarray, f: float, q: float) -> np.ndarray:
    return np.exp(-np.pi * f * tau / q) * np.sin(2 * np.pi * f * tau)


def table_accel(sc: Scene, t: np.ndarray) -> np.ndarray:
    """Vertical acceleration of the table top under our tower (m/s^2) at real times ``t``."""
    dt = float(t[1] - t[0])
    a = np.zeros_like(t)
    for t0, amp, f, q in sc.table:
        n = int(min(2.5 * q / f + 0.01, 0.6) / dt)
        i0 = int(math.ceil((t0 - t[0]) / dt))
        if i0 >= len(t) or i0 + n <= 0:
            continue
        lo, hi = max(i0, 0), min(i0 + n, len(t))
        tau = t[lo:hi] - t0
        a[lo:hi] += amp * _damped(tau, f, q) * (1 - np.exp(-tau / 0.0015))
    for mu in sc.music:
        a += _music(mu, t, sc.pa)
    for pa in sc.pa:
        a += _announcement(pa, t)
    for ve in sc.vehicles:
        a += _vehicle(ve, t)
    return a


def _music(mu: dict[str, Any], t: np.ndarray, pa: list[dict[str, Any]]) -> np.ndarray:
    """Four-on-the-floor kick drum (sweeping 120 -> 45 Hz) and a bass line 41-110 Hz."""
    rng = np.random.default_rng(mu["seed"])
    beat = 60.0 / mu["bpm"]
    out = np.zeros_like(t)
    dt = float(t[1] - t[0])
    sel = (t >= mu["t"]) & (t < mu["t_end"])
    if not sel.any():
        return out
    kicks = np.arange(mu["t"] + rng.uniform(0, beat), mu["t_end"], beat)
    n = int(0.3 / dt)
    for tk in kicks:
        i0 = int(math.ceil((tk - t[0]) / dt))
        lo, hi = max(i0, 0), min(i0 + n, len(t))
        if lo >= hi:
            continue
        tau = t[lo:hi] - tk
        phase = 2 * np.pi * (45 * tau + 75 * 0.03 * (1 - np.exp(-tau / 0.03)))
        out[lo:hi] += mu["kick_ms2"] * np.exp(-tau / 0.09) * np.sin(phase)
    steps = np.array([0, 3, 5, 7, 10, 12, 15])  # minor pentatonic over two octaves
    n_notes = int((mu["t_end"] - mu["t"]) / (beat / 2)) + 2
    freqs = mu["root_hz"] * 2 ** (rng.choice(steps, n_notes) / 12)
    freqs = np.minimum(freqs, 110.0)
    ts = t[sel] - mu["t"]
    idx = np.clip((ts / (beat / 2)).astype(int), 0, n_notes - 1)
    tau = ts - idx * (beat / 2)
    ph = 2 * np.pi * freqs[idx] * tau
    env = (1 - np.exp(-tau / 0.01)) * np.exp(-tau / 0.25)
    out[sel] += mu["bass_ms2"] * env * (np.sin(ph) + 0.4 * np.sin(2 * ph) + 0.2 * np.sin(3 * ph))
    duck = np.ones_like(t)  # the DJ turns the music down while the PA speaks
    for p in pa:
        duck -= 0.65 * np.clip(np.minimum(t - p["t"], p["t_end"] - t) / 0.5 + 1, 0, 1)
    return np.where(sel, out * np.clip(duck, 0.35, 1.0), 0.0)


def _announcement(pa: dict[str, Any], t: np.ndarray) -> np.ndarray:
    """A PA chime then speech: voiced pulses at F0 with syllables at 4-5 Hz (the bass part)."""
    rng = np.random.default_rng(pa["seed"])
    out = np.zeros_like(t)
    for k, f in enumerate((587.0, 466.0)):
        tau = t - pa["t"] - 0.55 * k
        on = tau >= 0
        out += np.where(on, 0.3 * pa["level_ms2"] * np.exp(-np.clip(tau, 0, None) / 0.35)
                        * np.sin(2 * np.pi * f * tau), 0.0)
    sp = (t >= pa["t_speech"]) & (t < pa["t_end"])
    if sp.any():
        ts = t[sp] - pa["t_speech"]
        f0 = pa["f0_hz"] * (1 + 0.12 * np.sin(2 * np.pi * 0.4 * ts + rng.uniform(0, 6)))
        ph = 2 * np.pi * np.cumsum(f0) * float(t[1] - t[0])
        voice = sum(np.sin(h * ph) / h ** 1.5 for h in range(1, 5))
        syl_rate = rng.uniform(4, 5.5)
        gates = rng.random(int(ts[-1] * syl_rate) + 2) < 0.8
        syl = np.sin(np.pi * (ts * syl_rate % 1.0)) ** 2 * gates[(ts * syl_rate).astype(int)]
        out[sp] += pa["level_ms2"] * voice * syl
    return out


def _vehicle(ve: dict[str, Any], t: np.ndarray) -> np.ndarray:
    """A forklift or a trolley rolling past: rumble rising and falling over 5-15 s."""
    rng = np.random.default_rng(ve["seed"])
    fs = 1.0 / float(t[1] - t[0])
    span = ve["t_end"] - ve["t"]
    w = span / 4
    inside = np.clip((t - ve["t"]) / span, 0.0, 1.0)
    env = np.sqrt(np.sin(np.pi * inside)) / (1 + ((t - ve["t_peak"]) / w) ** 2)
    sos = signal.butter(2, [15, 70], btype="band", fs=fs, output="sos")
    rumble = signal.sosfilt(sos, rng.normal(0, 1, len(t)))
    rumble /= max(float(np.std(rumble)), 1e-9)
    out = 0.4 * ve["peak_ms2"] * rumble * env
    if ve["kind"] == "forklift":  # the traction motor's whine, rising with speed
        fw = rng.uniform(150, 300) * (0.9 + 0.2 * env)
        out += 0.12 * ve["peak_ms2"] * env * np.sin(2 * np.pi * np.cumsum(fw) / fs)
    else:  # hard wheels over the hall's floor joints and cable ramps
        ts = np.arange(ve["t"], ve["t_end"], rng.uniform(0.35, 0.7))
        f = rng.uniform(30, 60)
        for tk in ts:
            i0 = int(math.ceil((tk - t[0]) * fs))
            lo, hi = max(i0, 0), min(i0 + int(0.15 * fs), len(t))
            if lo < hi:
                tau = t[lo:hi] - tk
                out[lo:hi] += ve["peak_ms2"] * float(env[lo]) * _damped(tau, f, 3.0)
    return out


def _contact(f: np.ndarray, tau_s: float) -> np.ndarray:
    """Spectrum of a half-sine contact pulse of ``tau_s`` (1 at 0 Hz)."""
    x = 2 * f * tau_s
    den = 1 - x * x
    safe = np.where(np.abs(den) < 1e-6, 1e-6, den)
    return np.abs(np.where(np.abs(den) < 1e-6, np.pi / 4, np.cos(np.pi * f * tau_s) / safe))


def render_piezo(sc: Scene) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The eight piezo channels as 10-bit ADC readings, shape (n_sets, 8).

    Also returns the real time of each set and the table's acceleration there (for the
    load cells).
    """
    tw = sc.tw
    rng = np.random.default_rng([tw.seed, SCENARIOS.index(sc.scenario), 0x9E])
    fs = tw.piezo_rate_hz
    n = int(round(sc.duration * fs))
    dt = 1.0 / (fs * (1 + tw.clock_err))  # real seconds between sets
    t = np.arange(n) * dt
    skew = np.arange(8) * tw.adc_conv_us * 1e-6
    mech = np.zeros((8, n))
    rel = tw.sens / float(np.median(tw.sens))
    for imp in sc.impacts:
        _add_impact(mech, imp, tw, dt, skew)
    accel = table_accel(sc, t)
    mech += (tw.table_lsb * tw.couple * rel)[:, None] * accel[None, :]
    if tw.loose >= 0:
        _loose_rattle(mech, sc, accel, dt)
    if sc.murmur_on:
        _murmur(mech, sc, t, rng, rel)
    for t0, t1, lv, amp in sc.rustles:  # fingers on card
        lo, hi = int(max(t0, 0) / dt), min(int(t1 / dt) + 1, n)
        if lo < hi:
            x = rng.normal(0, 1, hi - lo) * np.hanning(hi - lo)
            for c in range(8):
                g = amp * rel[c] * 0.35 ** abs(c - lv)
                if g > 0.2:
                    mech[c, lo:hi] += g * x
    offline = np.zeros((8, n), bool)
    for t0, t1, lv in sc.offline:
        offline[lv, int(t0 / dt):int(t1 / dt) + 1] = True
    mech[offline] = 0.0
    out = np.empty((8, n))
    for c in range(8):  # the disc's capacitance against the 1 MOhm bias: AC coupling
        b, a = signal.butter(1, tw.hp_hz[c], btype="high", fs=1.0 / dt)
        out[c] = signal.lfilter(b, a, mech[c])
    out += tw.bias[:, None]
    out += rng.normal(0, 1, (8, n)) * tw.piezo_noise[:, None]
    # the ground loop of a long USB cable: the ADC's ground moves against the discs'
    wander = np.cumsum(rng.normal(0, 1, n // 2000 + 2)) * 0.004
    f_mains = 50.0 + np.interp(t, np.arange(len(wander)) * 2000 * dt, wander)
    phase = 2 * np.pi * np.cumsum(f_mains) * dt + rng.uniform(0, 2 * np.pi)
    for c in range(8):
        ph = phase + 2 * np.pi * 50.0 * skew[c]
        hum = np.zeros(n)
        for mult, h in zip(HUM_HARMONICS, tw.gl_harm, strict=True):
            hum += float(h) * np.sin(mult * ph + mult * 0.9)
        # a laptop charger's rectifier draws its current at the mains peaks: sharp pulses
        hum = tw.gl_lsb * hum + tw.gl_spike * np.sin(ph) ** 15
        out[c] += tw.gl_chan[c] * hum
        off = offline[c]
        if off.any():  # the pin has only the bias divider left: it picks the mains up
            out[c, off] += tw.float_hum * np.sin(ph[off] + 0.7) + rng.normal(0, 2.0, off.sum())
    for tc, lv in sc.chatter:  # spring contacts bouncing: charge steps that decay
        tau_s = 1 / (2 * np.pi * tw.hp_hz[lv])
        for _ in range(int(rng.integers(2, 6))):
            t0 = tc + rng.uniform(0, 0.02)
            i0 = int(math.ceil(t0 / dt))
            hi = min(i0 + int(5 * tau_s / dt), n)
            if i0 < hi:
                out[lv, i0:hi] += rng.choice([-1, 1]) * rng.uniform(30, 200) * np.exp(
                    -(t[i0:hi] - t0) / tau_s)
    sets = np.clip(np.rint(out), 0, 1023).astype(np.uint16).T
    return sets, t, accel


def _add_impact(mech: np.ndarray, imp: Impact, tw: Tower, dt: float, skew: np.ndarray) -> None:
    """Add one strike's ringing to all eight channels (crosstalk through the card)."""
    src = imp.level
    chans = np.arange(8)
    d = np.abs(chans - src)
    gain = tw.sens * imp.j * tw.xt ** d
    if src == 8:
        gain = tw.sens * imp.j * tw.top_xt * tw.xt ** (7 - chans)
        d = 8 - chans
    f = tw.mode_f[src]
    q = tw.mode_q[src]
    amp = tw.mode_a[src] * np.array(imp.w) * _contact(f, imp.tau_ms * 1e-3)
    a = gain[:, None] * amp[None, :] * np.exp(-d[:, None] * f[None, :] / tw.xt_cut_hz)
    f_th = tw.cell_f_hz[min(src, 7)]
    a_th = gain * tw.thud_a * THUD_BOOST.get(imp.kind, 1.0)
    dur = min(0.3, 2.3 * max(float(np.max(q / f)), 6.0 / f_th))
    k = int(dur / dt)
    i0 = int(math.ceil(imp.t / dt))
    lo, hi = max(i0, 0), min(i0 + k, mech.shape[1])
    if lo >= hi:
        return
    tau = (np.arange(lo, hi) * dt)[None, :] + skew[:, None] - imp.t \
        - d[:, None] * tw.xt_delay_ms * 1e-3
    tau = np.maximum(tau, 0.0)
    onset = 1 - np.exp(-tau / max(imp.tau_ms * 1e-3, 2e-4))
    y = np.zeros_like(tau)
    for m in range(4):
        y += a[:, m:m + 1] * _damped(tau, float(f[m]), float(q[m]))
    y += a_th[:, None] * _damped(tau, f_th, 6.0)
    y *= onset
    mech[:, lo:hi] += y
    if tw.loose >= 0:
        peak = float(np.max(np.abs(y[tw.loose])))
        if peak > tw.loose_thr:  # the loose disc lifts off and slaps back: a second hit
            _slap(mech, tw, imp.t + tw.loose_gap_ms * 1e-3 * (peak / tw.loose_thr) ** 0.25,
                  tw.loose_ratio * peak, dt)
            if peak > 4 * tw.loose_thr:
                _slap(mech, tw, imp.t + 2.3 * tw.loose_gap_ms * 1e-3 * (peak / tw.loose_thr)
                      ** 0.25, 0.4 * tw.loose_ratio * peak, dt)


def _slap(mech: np.ndarray, tw: Tower, t0: float, amp: float, dt: float) -> None:
    """The loose disc striking its plate: its own ring (aliased, no anti-alias filter)."""
    i0 = int(math.ceil(t0 / dt))
    lo, hi = max(i0, 0), min(i0 + int(0.08 / dt), mech.shape[1])
    if lo >= hi:
        return
    tau = np.arange(lo, hi) * dt + tw.loose * tw.adc_conv_us * 1e-6 - t0
    tau = np.maximum(tau, 0.0)
    lv = tw.loose
    # its own flexural ring (short, folded down by the sampling) and the plate struck anew
    y = 0.5 * _damped(tau, tw.loose_f_hz, 15.0)
    for m, share in ((0, 0.8), (1, 0.5)):
        y += share * _damped(tau, float(tw.mode_f[lv, m]), float(tw.mode_q[lv, m]))
    mech[lv, lo:hi] += amp * y * (1 - np.exp(-tau / 2e-4))


def _loose_rattle(mech: np.ndarray, sc: Scene, accel: np.ndarray, dt: float) -> None:
    """Strong table motion (bumps, kicks) makes the loose disc chatter: clicks on its channel."""
    tw = sc.tw
    lv = tw.loose
    level = np.abs(accel) * tw.table_lsb * tw.couple[lv] * 3.0
    over = np.flatnonzero(level > tw.loose_thr)
    if over.size == 0:
        return
    last = -1e9
    for i in over:
        t0 = i * dt
        if t0 - last < 0.02:
            continue
        last = t0
        _slap(mech, tw, t0 + 0.002, 0.5 * float(level[i]), dt)


def _murmur(mech: np.ndarray, sc: Scene, t: np.ndarray, rng: np.random.Generator,
            rel: np.ndarray) -> None:
    """Crowd babble on the plates: 120-700 Hz, partly common, slowly swelling; cheers."""
    fs = 1.0 / float(t[1] - t[0])
    sos = signal.butter(2, [120, 700], btype="band", fs=fs, output="sos")
    n = len(t)
    common = signal.sosfilt(sos, rng.normal(0, 1, n))
    common /= max(float(np.std(common)), 1e-9)
    slow = signal.sosfilt(signal.butter(1, 0.3, fs=fs, output="sos"), rng.normal(0, 1, n))
    swell = 1 + 0.3 * slow / max(float(np.std(slow)), 1e-9)
    for ch in sc.cheers:
        swell += 2.0 * np.clip(np.minimum(t - ch["t"], ch["t_end"] - t) / 0.4, 0, 1)
    for c in range(8):
        own = signal.sosfilt(sos, rng.normal(0, 1, n))
        own /= max(float(np.std(own)), 1e-9)
        mech[c] += sc.murmur_lsb * rel[c] * swell * (0.75 * common + 0.66 * own)


# -- rendering: the load cells ------------------------------------------------------------------


@dataclass
class LoadStream:
    """What the firmware read from the HX711s: read times (real s), valid bits, counts."""

    t: np.ndarray
    valid: np.ndarray
    values: np.ndarray


def _boxcar(x: np.ndarray, n: int) -> np.ndarray:
    """Causal moving average over ``n`` samples (the start padded with the first value)."""
    xp = np.concatenate([np.full(n, x[0]), x])
    c = np.concatenate([[0.0], np.cumsum(xp)])
    return (c[n + 1:] - c[1:-n]) / n


def render_load(sc: Scene, t_acc: np.ndarray, accel: np.ndarray) -> LoadStream:
    """Plate, cubes, hands and table motion on the cells, through each HX711, read in parallel."""
    tw = sc.tw
    rng = np.random.default_rng([tw.seed, SCENARIOS.index(sc.scenario), 0x10AD])
    pre = 0.8  # s of history before the recording (the converters' filters are full)
    n = int((sc.dur + pre + 0.1) * LOAD_FS)
    t = np.arange(n) / LOAD_FS - pre
    drive = np.zeros((8, n))  # grams-force into the plate-on-cell resonator
    steps = np.zeros((8, n))
    for tw_, lv, g in sc.weights:
        i = int(math.ceil((tw_ + pre) * LOAD_FS))
        if i < n:
            steps[lv, i] += g
    drive += np.cumsum(steps, axis=1) + tw.plate_g[:, None]
    for imp in sc.impacts:
        share = LOAD_SHARE.get(imp.kind, 0.0)
        if share == 0.0 or imp.level > 7:
            continue
        i = int(round((imp.t + pre) * LOAD_FS))
        if 0 <= i < n:
            drive[imp.level, i] += share * imp.j * MN_S_TO_GF_S * LOAD_FS
    for t0, t1, lv, g in sc.presses:
        i0, i1 = int((t0 + pre) * LOAD_FS), min(int((t1 + pre) * LOAD_FS), n)
        if i0 < i1:
            ramp = min(0.08, (t1 - t0) / 3)
            x = np.arange(i1 - i0) / LOAD_FS
            shape = np.clip(np.minimum(x, (t1 - t0) - x) / ramp, 0, 1)
            wob = 1 + 0.15 * np.sin(2 * np.pi * rng.uniform(3, 8) * x)
            drive[lv, i0:i1] += g * shape * wob
    a = np.interp(t, t_acc, accel, left=0.0, right=0.0)
    mass = np.cumsum(steps, axis=1) + tw.plate_g[:, None]
    drive -= mass * a[None, :] / G  # the table moves the cell; the plate lags behind
    temp = sc.air_temp(np.maximum(t, 0.0))
    out = np.empty((8, n))
    for c in range(8):
        w = 2 * np.pi * tw.cell_f_hz[c]
        b, aa = signal.bilinear([w * w], [1, 2 * tw.cell_zeta[c] * w, w * w], LOAD_FS)
        zi = signal.lfilter_zi(b, aa) * drive[c, 0]
        y, _ = signal.lfilter(b, aa, drive[c], zi=zi)
        # the cell follows the air with its own lag (inside the card box)
        alpha = 1.0 / (tw.cell_lag_s[c] * LOAD_FS)
        tc, _ = signal.lfilter([alpha], [1, alpha - 1], temp, zi=[temp[0] * (1 - alpha)])
        walk = np.cumsum(rng.normal(0, 1, n // 2000 + 2)) * tw.walk_g[c]
        y = y + tw.tc_g_per_c[c] * (tc - tc[0]) + np.interp(t, np.arange(len(walk)) - pre, walk)
        out[c] = y
    # each HX711 converts on its own RC clock; a reading settles over four periods (sinc^4)
    period = 1.0 / (tw.load_rate_hz * (1 + tw.hx_err))
    phase0 = rng.uniform(0, 1, 8) * period
    conv_t: list[np.ndarray] = []
    conv_v: list[np.ndarray] = []
    for c in range(8):
        L = max(1, int(round(period[c] * LOAD_FS)))
        y4 = out[c]
        for _ in range(4):
            y4 = _boxcar(y4, L)
        ct = np.arange(phase0[c], sc.dur + period[c], period[c])
        g = np.interp(ct, t, y4)
        # after power-on the converter and its regulator warm up: the offset settles
        settle = tw.warm_counts[c] * (1 - np.exp(-(sc.age_s + ct) / tw.warm_tau_s))
        counts = tw.cpg[c] * (tw.zero_g[c] + g) + settle \
            + rng.normal(0, tw.load_noise_counts[c], len(ct))
        conv_t.append(ct)
        conv_v.append(np.clip(np.rint(counts), -(2**23) + 1, 2**23 - 1))
    # when may each chip be read: not while its module is off, nor until it settled again
    boot = -sc.uptime0_us / 1e6 if sc.start != "running" else -1e9
    down: list[list[tuple[float, float]]] = [[(-1e9, boot + 4 * period[c])] for c in range(8)]
    for t0, t1, lv in sc.offline:
        down[lv].append((t0, t1 + 4 * period[lv] + rng.uniform(0, period[lv])))

    def up(c: int, when: float) -> bool:
        return not any(a0 <= when < a1 for a0, a1 in down[c])

    reads_t: list[float] = []
    reads_v: list[int] = []
    reads_x: list[list[int]] = []
    t_prev = 0.0
    while True:
        ready = [phase0[c] + (math.floor((t_prev - phase0[c]) / period[c]) + 1) * period[c]
                 for c in range(8) if up(c, t_prev)]
        t_ready = max(ready) if ready else t_prev + float(period.min())
        t_read = t_ready + rng.uniform(10e-6, 60e-6)
        if t_read >= sc.dur:
            break
        valid = 0
        vals = [0] * 8
        for c in range(8):
            if up(c, t_read):
                i = int(math.floor((t_read - phase0[c]) / period[c]))
                if 0 <= i < len(conv_v[c]):
                    valid |= 1 << c
                    vals[c] = int(conv_v[c][i])
        if valid:
            reads_t.append(t_read)
            reads_v.append(valid)
            reads_x.append(vals)
        t_prev = t_read
    return LoadStream(np.array(reads_t), np.array(reads_v, np.int64),
                      np.array(reads_x, np.int64).reshape(-1, 8))


# -- bytes on the wire -----------------------------------------------------------------------


def build_stream(sc: Scene, sets: np.ndarray, load: LoadStream) -> tuple[bytes, dict[str, Any]]:
    """The device's byte stream: PIEZO, LOAD, STATUS (and HELLO, ACK) in the order sent."""
    tw = sc.tw
    rng = np.random.default_rng([tw.seed, SCENARIOS.index(sc.scenario), 0xB17E])
    fs = tw.piezo_rate_hz
    per_set_us = 1e6 / fs
    items: list[tuple[float, int, int, bytes]] = []  # (emit time dev s, order, type, body)
    n = len(sets)
    for i in range(0, n, tw.batch):
        chunk = sets[i:i + tw.batch]
        t_us = sc.t_us0 + int(round(i * per_set_us))
        emit = (i + len(chunk) - 1) / fs + 8 * tw.adc_conv_us * 1e-6 + 30e-6
        items.append((emit, 1, T_PIEZO, piezo_body(t_us, chunk)))
    first_piezo = items[0][0]
    for t_r, valid, vals in zip(load.t, load.valid, load.values, strict=True):
        t_dev = float(t_r) * (1 + tw.clock_err)
        if t_dev + 300e-6 <= first_piezo:
            continue  # the recording starts with the first PIEZO (stream time 0)
        t_us = sc.t_us0 + int(round(t_dev * 1e6))
        items.append((t_dev + 300e-6, 2, T_LOAD, load_body(t_us, int(valid), vals)))
    up0_ms = sc.uptime0_us / 1000.0
    first_status = math.floor(up0_ms / 1000.0) + 1
    timeouts = 0
    cpu = int(rng.integers(35, 60))
    lift_times = sorted((x["t"], 7 - x["exposed"]) for x in sc.lifts)
    for kk in range(first_status, int((up0_ms + sc.duration * 1000) // 1000) + 1):
        t_dev = (kk * 1000 - up0_ms) / 1000.0
        timeouts = sum(cnt for tl, cnt in lift_times if tl <= t_dev)
        cpu = int(np.clip(cpu + rng.integers(-3, 4), 25, 80))
        items.append((t_dev, 3, T_STATUS, status_body(kk * 1000, timeouts, cpu)))
    items.sort(key=lambda x: (x[0], x[1]))
    info: dict[str, Any] = {"start": sc.start, "t_us_first": sc.t_us0, "seq_first": sc.seq0}
    out = bytearray()
    seq = sc.seq0
    if sc.start == "running":
        # the port opened on a running device: the stream starts inside a frame; the host's
        # GET_INFO is answered a few messages later with HELLO and ACK
        prev = frame(T_LOAD, (seq - 1) & 0xFFFF, load_body(sc.t_us0 - 4000, 0xFF,
                                                           load.values[0] if len(load.values)
                                                           else np.zeros(8, np.int64)))
        cut = int(rng.integers(2, len(prev) - 2))
        while _is_message(prev[cut:-1]):  # a fragment, not by chance a valid message
            cut += 1
        out += prev[cut:]
        info["mid_frame_bytes"] = len(prev) - cut
        hello_after = int(rng.integers(1, 4))
    else:
        hello_after = 0
    for idx, (_, _, mtype, body) in enumerate(items):
        if idx == hello_after:
            if sc.start == "running":
                out += frame(T_HELLO, seq, hello_body(tw))
                out += frame(T_ACK, seq + 1, struct.pack("<BHB", CMD_GET_INFO, 0, 0))
                seq += 2
                info["hello_after_messages"] = hello_after
            else:
                out += frame(T_HELLO, seq, hello_body(tw))
                seq += 1
        out += frame(mtype, seq, body)
        seq += 1
    info["seq_wraps"] = (seq - 1) // 65536 - sc.seq0 // 65536
    to_wrap = ((1 << 32) - sc.t_us0) / 1e6
    info["clock_wraps_at_s"] = round(to_wrap, 6) if to_wrap < sc.duration else None
    return bytes(out), info


# -- truth, files, command line --------------------------------------------------------------------


def truth_of(sc: Scene, wire: dict[str, Any]) -> dict[str, Any]:
    """The ground truth as score.py reads it (all times in stream seconds)."""
    st = sc.st
    truth: dict[str, Any] = {
        "format": "towerear-crosscheck-truth/1", "model": MODEL, "scenario": sc.scenario,
        "seed": sc.tw.seed, "duration_s": sc.duration, "cells": sc.tw.cells,
        "quiet_until": st(sc.quiet_until),
        "landings": sorted(sc.landings, key=lambda x: x["t"]),
        "knockdowns": sc.knockdowns, "removals": sc.removals, "lifts": sc.lifts,
        "closes": sc.closes, "knocks": sorted(sc.knocks, key=lambda x: x["t"]),
        "fallouts": sc.fallouts,
        "neighbours": sorted(sc.neighbour_throws, key=lambda x: x["t"]),
        "hall": {
            "murmur_lsb": round(sc.murmur_lsb, 3),
            "music": [{"t": st(m["t"]), "t_end": st(m["t_end"]), "bpm": round(m["bpm"], 2),
                       "kick_ms2": round(m["kick_ms2"], 4), "bass_ms2": round(m["bass_ms2"], 4)}
                      for m in sc.music],
            "announcements": [{"t": st(p["t"]), "t_end": st(p["t_end"]),
                               "level_ms2": round(p["level_ms2"], 4)} for p in sc.pa],
            "vehicles": [{"t": st(v["t"]), "t_peak": st(v["t_peak"]), "t_end": st(v["t_end"]),
                          "kind": v["kind"], "peak_ms2": round(v["peak_ms2"], 4)}
                         for v in sc.vehicles],
            "cheers": [{"t": st(c["t"]), "t_end": st(c["t_end"])} for c in sc.cheers],
            "draughts": [{"t": st(d[0]), "delta_c": round(d[1], 3), "t_end": st(d[0] + d[2])}
                         for d in sc.draughts],
            "warming_c_per_h": round(sc.warm_c_per_h, 3),
        },
        "session": wire,
        "tower": sc.tw.figures(),
    }
    if sc.game is not None:
        truth["game"] = sc.game
    return json.loads(json.dumps(truth))


def render(sc: Scene) -> tuple[bytes, dict[str, Any]]:
    """Bytes and truth of a scene."""
    sets, t, accel = render_piezo(sc)
    load = render_load(sc, t, accel)
    raw, wire = build_stream(sc, sets, load)
    return raw, truth_of(sc, wire)


def make_recording(seed: int, scenario: str, duration: float, out: Path) -> tuple[Path, Path]:
    """Write ``{scenario}_t{seed}.bin`` and ``.truth.json`` into ``out``."""
    raw, truth = render(simulate(seed, scenario, duration))
    bin_path = out / f"{scenario}_t{seed}.bin"
    truth_path = out / f"{scenario}_t{seed}.truth.json"
    bin_path.write_bytes(raw)
    truth_path.write_text(json.dumps(truth, indent=1))
    return bin_path, truth_path


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, exit 2
        self.exit(2, f"{self.prog}: error: {message}\n")


def main(argv: list[str] | None = None) -> int:
    """Command line: write the recordings of ``--towers`` towers."""
    p = _Parser(prog="make_recordings_ak.py", description=__doc__.split("\n")[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--towers", type=int, default=8)
    p.add_argument("--first-seed", type=int, default=1)
    p.add_argument("--duration", type=float, default=120.0)
    p.add_argument("--scenarios", nargs="+", default=list(SCENARIOS))
    args = p.parse_args(argv)
    bad = [s for s in args.scenarios if s not in SCENARIOS]
    problem = None
    if bad:
        problem = f"unknown scenario {bad[0]!r} (known: {', '.join(SCENARIOS)})"
    elif args.towers < 1:
        problem = f"--towers must be at least 1, not {args.towers}"
    elif args.first_seed < 0:
        problem = f"--first-seed must not be negative, not {args.first_seed}"
    elif not math.isfinite(args.duration) or args.duration < 12.0:
        problem = f"--duration must be at least 12 seconds, not {args.duration:g}"
    if problem:
        print(f"make_recordings_ak.py: error: {problem}", file=sys.stderr)
        return 2
    try:
        args.out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        print(f"make_recordings_ak.py: error: cannot create {args.out}: {exc.strerror}",
              file=sys.stderr)
        return 2
    for seed in range(args.first_seed, args.first_seed + args.towers):
        for scenario in args.scenarios:
            make_recording(seed, scenario, args.duration, args.out)
            print(f"{scenario}_t{seed}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
