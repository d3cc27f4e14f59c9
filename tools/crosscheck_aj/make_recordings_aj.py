#!/usr/bin/env python3
"""Cross-check model AJ: a board-game café's tower, played all evening by one group
after another.

A blind generator of test recordings for ``towerear detect`` (contracts.md sections
1-3) with their ground truth (the ``towerear-crosscheck-truth/1`` format that
tools/crosscheck/score.py reads). Its own wire encoder (COBS, CRC-16/CCITT-FALSE,
message layouts); imports numpy, scipy and the standard library only.

What is new in this model (README.md argues each):

- the evening wears the tower: the café's air grows humid and every strike crushes
  card, so plates ring lower and duller and sag onto their ledges as the hours pass;
- mobile phones on the table: GSM TDMA bursts (217 Hz, the 26-frame idle gap)
  rectified on the high-impedance piezo pins and as an offset in the bridge inputs;
- the bar: a vibratory espresso pump (mains 50 Hz and harmonics) in 20-30 s shots,
  the grinder, knock-box thumps, a fridge compressor that cycles; a triac dimmer
  whose firing spikes start when the lights are dimmed;
- the café's mixed cube sets: replacement cubes of beech, pine or ABS, of other
  sizes: a wide spread of mass, restitution and contact time;
- a firmware that bit-bangs the eight HX711s in its main loop, so PIEZO batches
  after a LOAD read carry the sets that piled up meanwhile (variable batch size).

Usage::

    .venv/bin/python tools/crosscheck_aj/make_recordings_aj.py --out /tmp/aj --towers 8 \
        --first-seed 1 --duration 120 [--scenarios single rapid noisy game] \
        [--long-duration 1800] [--workers 2]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from scipy import signal

MODEL = "AJ"
SCENARIOS = ("single", "rapid", "noisy", "game", "long", "damaged", "acoustic")
DEFAULT_SCENARIOS = ("single", "rapid", "noisy", "game")
COLOURS = ("yellow", "blue", "brown", "gray", "black", "white")
G = 9.80665
H_MOD = 0.031  # m: 25 cm tower / 8 modules
GSM_FRAME_S = 120e-3 / 26  # 4.615 ms TDMA frame: the 216.7 Hz buzz
GSM_SLOT_S = 576.9e-6
LOAD_FS = 1000.0  # fine grid of the mechanical load model, Hz
TYPE_HELLO, TYPE_PIEZO, TYPE_LOAD, TYPE_STATUS = 1, 2, 3, 4

# -- wire ---------------------------------------------------------------------------------


def _crc_table() -> np.ndarray:
    table = np.zeros(256, np.int64)
    for i in range(256):
        c = i << 8
        for _ in range(8):
            c = ((c << 1) ^ 0x1021) if c & 0x8000 else (c << 1)
        table[i] = c & 0xFFFF
    return table


CRC_TABLE = _crc_table()
_CRC_LIST = [int(x) for x in CRC_TABLE]


def crc16_ccitt_false(data: bytes) -> int:
    """CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF), table driven."""
    crc = 0xFFFF
    for b in data:
        crc = ((crc << 8) & 0xFFFF) ^ _CRC_LIST[((crc >> 8) ^ b) & 0xFF]
    return crc


def crc16_ccitt_false_reference(data: bytes) -> int:
    """The same CRC bit by bit, as the contract states it (a second implementation)."""
    crc = 0xFFFF
    for b in data:
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) & 0xFFFF if crc & 0x8000 else (crc << 1) & 0xFFFF
    return crc


def crc16_rows(rows: np.ndarray) -> np.ndarray:
    """The CRC of every row of a (n, L) uint8 array at once."""
    crc = np.full(rows.shape[0], 0xFFFF, np.int64)
    for col in range(rows.shape[1]):
        crc = ((crc << 8) & 0xFFFF) ^ CRC_TABLE[((crc >> 8) ^ rows[:, col]) & 0xFF]
    return crc


def cobs_encode(data: bytes) -> bytes:
    """COBS without the trailing delimiter; a final full 254-byte block gets no extra code."""
    out = bytearray()
    segs = data.split(b"\x00")
    for i, seg in enumerate(segs):
        last = i == len(segs) - 1
        while len(seg) >= 254:
            out += b"\xff" + seg[:254]
            seg = seg[254:]
            if not seg and last:
                return bytes(out)
        out.append(len(seg) + 1)
        out += seg
    return bytes(out)


def cobs_decode_own(enc: bytes) -> bytes:
    """Decode one COBS frame (no delimiter)."""
    out = bytearray()
    i = 0
    while i < len(enc):
        code = enc[i]
        if code == 0 or i + code > len(enc) + (0 if code > 1 else 1):
            raise ValueError("bad COBS frame")
        out += enc[i + 1:i + code]
        i += code
        if code < 0xFF and i < len(enc):
            out.append(0)
    return bytes(out)


def cobs_encode_rows(rows: np.ndarray) -> np.ndarray:
    """COBS-encode rows of equal length (at most 254) at once; each gets its 0x00 delimiter."""
    n, length = rows.shape
    aug = np.zeros((n, length + 2), np.int64)
    aug[:, 1:length + 1] = rows
    pos = np.arange(length + 2)
    marker = aug == 0
    marker[:, 0] = True
    marker[:, -1] = True
    idx = np.where(marker, pos[None, :], length + 2)
    nxt = np.minimum.accumulate(idx[:, ::-1], axis=1)[:, ::-1]  # next marker at or after
    nxt_after = np.empty_like(nxt)
    nxt_after[:, :-1] = nxt[:, 1:]
    nxt_after[:, -1] = length + 2
    out = np.where(marker, nxt_after - pos[None, :], aug)
    out[:, -1] = 0
    return out.astype(np.uint8)


def frame(msg_type: int, seq: int, payload: bytes) -> bytes:
    """One message, CRC appended, COBS framed, 0x00 delimited."""
    msg = bytes([msg_type]) + (seq & 0xFFFF).to_bytes(2, "little") + payload
    msg += crc16_ccitt_false(msg).to_bytes(2, "little")
    return cobs_encode(msg) + b"\x00"


def _frame_rows(head: np.ndarray) -> np.ndarray:
    """Rows of type|seq|body (uint8) -> encoded frames with CRC and delimiter."""
    crc = crc16_rows(head)
    rows = np.empty((head.shape[0], head.shape[1] + 2), np.uint8)
    rows[:, :-2] = head
    rows[:, -2] = crc & 0xFF
    rows[:, -1] = crc >> 8
    return cobs_encode_rows(rows)


def _le(values: np.ndarray, nbytes: int) -> np.ndarray:
    v = values.astype(np.int64)
    return np.stack([(v >> (8 * k)) & 0xFF for k in range(nbytes)], axis=-1).astype(np.uint8)


# -- the tower ------------------------------------------------------------------------------


@dataclass
class Cube:
    """One cube of the café's box."""

    fid: int
    colour: str
    material: str
    mass_g: float
    restitution: float
    contact_ms: float


# material: (side mm range, density g/cm3, restitution on card, contact ms on card)
MATERIALS = {
    "original": ((8.6, 9.0), (0.58, 0.66), (0.30, 0.40), (0.8, 1.1)),
    "beech": ((9.5, 10.0), (0.68, 0.75), (0.35, 0.45), (0.7, 0.9)),
    "pine": ((9.8, 10.2), (0.40, 0.48), (0.25, 0.33), (0.9, 1.3)),
    "abs": ((8.0, 9.0), (1.03, 1.06), (0.50, 0.62), (0.45, 0.65)),
    "maple": ((7.8, 8.2), (0.66, 0.72), (0.33, 0.42), (0.7, 0.9)),
}


@dataclass
class Tower:
    """A café tower: one seed, one build; its state over the evening is the scene's."""

    seed: int
    device_id: bytes
    fw: tuple[int, int, int]
    piezo_rate_hz: int
    load_rate_hz: int
    load_period_us: int  # Timer2 /1024, OCR2A 194: 80.128 Hz (8 of them for 10 SPS)
    adc_bits: int
    batch: int  # PIEZO sets a message when the loop is free
    read_ms: float  # bit-banged HX711 read: the loop is busy this long
    skew_us: float  # between channels of one set
    t0_us: int  # first set's micros() after boot
    load_phase_s: float  # first LOAD tick, stream time
    cells: str
    capacity_g: list[float]
    cpg: np.ndarray  # counts per gram on the cell (fresh plate)
    zero: np.ndarray  # counts of the unloaded cell
    plate_g: np.ndarray
    offset: np.ndarray  # counts of the empty plate at the start of the evening
    ledge_k: np.ndarray  # share of load lost to the ledge per unit of wear
    load_noise_counts: np.ndarray
    conv_rate_hz: np.ndarray
    conv_phase_s: np.ndarray
    cell_f_hz: np.ndarray
    cell_zeta: np.ndarray
    mode_f0: np.ndarray  # (8, 4) fresh plate modes
    mode_q0: np.ndarray
    mode_gain: np.ndarray
    sens: np.ndarray  # LSB per mN s at 500 Hz
    xtalk: float
    noise_lsb: np.ndarray
    bias_lsb: np.ndarray
    hum_lsb: np.ndarray
    hum_phase: np.ndarray
    mains_hz: float
    wear18: np.ndarray  # wear of each plate at 18:00
    wear_per_h: np.ndarray
    wear_per_strike: float
    catch: np.ndarray  # chance a plate stops a cube that reaches it
    clip: np.ndarray
    rf_gain: np.ndarray
    rf_load_g: np.ndarray
    vib_gain: np.ndarray  # LSB per m/s2
    dim_hour: float
    dimmer_lsb: np.ndarray
    dimmer_alpha: float
    fridge_hz: float
    fridge_on_s: float
    fridge_off_s: float
    cubes: list[Cube]

    def figures(self) -> dict[str, Any]:
        """The build, as the truth file lists it."""
        def r(a: Any, nd: int = 4) -> Any:
            return np.round(np.asarray(a, float), nd).tolist()

        mats: dict[str, int] = {}
        for c in self.cubes:
            mats[c.material] = mats.get(c.material, 0) + 1
        return {
            "device_id": self.device_id.hex(), "fw": list(self.fw),
            "piezo_rate_hz": self.piezo_rate_hz, "load_rate_hz": self.load_rate_hz,
            "load_period_us": self.load_period_us, "batch": self.batch,
            "read_ms": round(self.read_ms, 3), "cells": self.cells,
            "capacity_g": self.capacity_g, "counts_per_g": r(self.cpg, 2),
            "plate_g": r(self.plate_g, 3), "ledge_k": r(self.ledge_k),
            "conv_rate_hz": r(self.conv_rate_hz, 3), "cell_f_hz": r(self.cell_f_hz, 1),
            "mode_f0_hz": r(self.mode_f0, 1), "mode_q0": r(self.mode_q0, 2),
            "sens_lsb_per_mNs": r(self.sens, 1), "xtalk": round(self.xtalk, 3),
            "wear18": r(self.wear18), "wear_per_h": r(self.wear_per_h),
            "catch": r(self.catch, 3), "dim_hour": round(self.dim_hour, 3),
            "fridge_hz": round(self.fridge_hz, 3), "materials": dict(sorted(mats.items())),
            "cube_mass_g": [round(min(c.mass_g for c in self.cubes), 4),
                            round(max(c.mass_g for c in self.cubes), 4)],
        }


def make_cube(fid: int, colour: str, material: str, rng: np.random.Generator) -> Cube:
    """A cube of ``material``: its side, density, bounce and contact time drawn."""
    side, dens, e, ms = MATERIALS[material]
    mass = (rng.uniform(*side) / 10) ** 3 * rng.uniform(*dens)
    return Cube(fid, colour, material, float(mass), float(rng.uniform(*e)),
                float(rng.uniform(*ms)))


def make_tower(seed: int) -> Tower:
    """The tower of ``seed``: electronics, card and the café's box of cubes."""
    rng = np.random.default_rng([seed, 0xA1])
    piezo_rate = int(rng.choice([2000, 2000, 2000, 2500]))
    load_rate = int(rng.choice([10, 80, 80]))  # cheap boards tie RATE low: 10 SPS
    read_ms = float(rng.uniform(0.9, 1.4))  # 24 clocks x (2 digitalWrite + 8 digitalRead)
    batch = int(rng.choice([4, 6, 8, 10]))
    cells = "matched" if rng.random() < 0.6 else "mixed"
    kinds = [(100.0, 1.0), (200.0, 1.0), (120.0, 0.9)]
    if cells == "matched":
        cap = [kinds[0]] * 8
    else:
        other = kinds[int(rng.integers(1, 3))]
        cap = [kinds[0] if rng.random() < 0.5 else other for _ in range(8)]
    capacity = [c for c, _ in cap]
    ro = np.array([r for _, r in cap]) * rng.uniform(0.9, 1.1, 8) * 1e-3
    sign = np.where(rng.random(8) < 0.12, -1.0, 1.0)
    cpg = sign * ro / np.array(capacity) * 128 * 2**24
    plate_g = rng.uniform(6.0, 12.0, 8)
    zero = rng.uniform(-0.03, 0.03, 8) * 2**23
    wear18 = rng.uniform(0.0, 0.06, 8)
    ledge_k = rng.uniform(0.02, 0.08, 8)
    offset = zero + cpg * plate_g * (1 - ledge_k * wear18)
    noise = rng.uniform(1.0, 2.0, 8) * (45.0 if load_rate == 80 else 18.0)
    conv_rate = load_rate * (1 + np.clip(rng.normal(0, 0.015, 8), -0.04, 0.04))
    conv_phase = rng.uniform(0, 1, 8) / conv_rate
    # plates: Kirchhoff first mode of a 8-9 cm greyboard square with a hole, 380-800 Hz,
    # smaller (stiffer, higher) upwards
    f1 = rng.uniform(380, 560) * (1 + 0.045 * np.arange(8)) * rng.uniform(0.94, 1.06, 8)
    ratios = np.stack([np.ones(8), rng.uniform(1.95, 2.1, 8), rng.uniform(2.05, 2.25, 8),
                       rng.uniform(3.5, 3.8, 8)], axis=1)
    mode_f0 = f1[:, None] * ratios
    mode_q0 = rng.uniform(12, 24, (8, 4)) * np.array([1.0, 0.9, 0.85, 0.75])
    mode_gain = np.stack([np.ones(8), rng.uniform(0.4, 0.9, 8), rng.uniform(0.3, 0.8, 8),
                          rng.uniform(0.2, 0.5, 8)], axis=1)
    level_use = np.array([0.3, 0.3, 0.4, 0.5, 0.7, 0.9, 1.2, 1.4])  # upper plates catch most
    catch = np.clip(np.array([1.0, 0.35, 0.35, 0.33, 0.35, 0.38, 0.38, 0.32])
                    + rng.uniform(-0.05, 0.05, 8), 0.2, 1.0)
    catch[0] = 1.0
    n_repl = int(rng.integers(8, 31))  # lost cubes replaced over the years
    cubes: list[Cube] = []
    owner = list(COLOURS) * 20 + ["red", "red"]
    repl_idx = set(rng.choice(len(owner), n_repl, replace=False).tolist())
    for fid, colour in enumerate(owner):
        material = "original"
        if fid in repl_idx:
            material = str(rng.choice(["beech", "pine", "abs", "maple"], p=[0.3, 0.25, 0.3,
                                                                             0.15]))
        cubes.append(make_cube(fid, colour, material, rng))
    return Tower(
        seed=seed, device_id=bytes(rng.integers(0, 256, 8).astype(np.uint8).tolist()),
        fw=(1, int(rng.integers(0, 4)), int(rng.integers(0, 10))),
        piezo_rate_hz=piezo_rate, load_rate_hz=load_rate,
        load_period_us=12_480 if load_rate == 80 else 99_840, adc_bits=10, batch=batch,
        read_ms=read_ms, skew_us=30.0,
        t0_us=int(rng.integers(8_000, 60_000)) * 4,
        load_phase_s=round(float(rng.uniform(0.03, 0.09)) * 250_000) / 250_000,
        cells=cells, capacity_g=capacity, cpg=cpg, zero=zero, plate_g=plate_g, offset=offset,
        ledge_k=ledge_k, load_noise_counts=noise, conv_rate_hz=conv_rate,
        conv_phase_s=conv_phase, cell_f_hz=rng.uniform(40, 110, 8),
        cell_zeta=rng.uniform(0.04, 0.1, 8), mode_f0=mode_f0, mode_q0=mode_q0,
        mode_gain=mode_gain, sens=rng.uniform(200, 420, 8), xtalk=float(rng.uniform(0.12, 0.3)),
        noise_lsb=rng.uniform(0.45, 0.8, 8), bias_lsb=rng.uniform(-4, 4, 8),
        hum_lsb=rng.uniform(0.3, 1.2, 8), hum_phase=rng.uniform(0, 2 * np.pi, 8),
        mains_hz=50.0 + float(rng.uniform(-0.03, 0.03)), wear18=wear18,
        wear_per_h=rng.uniform(0.02, 0.045, 8) * level_use,
        wear_per_strike=float(rng.uniform(2e-4, 5e-4)), catch=catch,
        clip=rng.uniform(0.25, 0.45, 8), rf_gain=rng.uniform(0.4, 1.0, 8),
        rf_load_g=rng.uniform(0.005, 0.03, 8), vib_gain=rng.uniform(25, 60, 8),
        dim_hour=float(rng.uniform(19.5, 21.0)), dimmer_lsb=rng.uniform(0.8, 3.0, 8),
        dimmer_alpha=float(rng.uniform(1.1, 2.2)),
        fridge_hz=float(rng.uniform(48.2, 49.3)), fridge_on_s=float(rng.uniform(300, 720)),
        fridge_off_s=float(rng.uniform(500, 1200)), cubes=cubes,
    )


# -- the scene ------------------------------------------------------------------------------

HOURS = {"single": (18.0, 19.0), "rapid": (19.0, 21.0), "noisy": (21.0, 23.0),
         "game": (18.5, 22.5), "long": (18.0, 19.5), "damaged": (18.5, 22.5),
         "acoustic": (18.0, 23.0)}
PHONES_PER_MIN = {"single": 0.25, "rapid": 0.4, "noisy": 1.2, "game": 0.5, "long": 0.5,
                  "damaged": 0.5, "acoustic": 0.4}
SHOTS_PER_MIN = {"single": 0.25, "rapid": 0.35, "noisy": 0.8, "game": 0.4, "long": 0.4,
                 "damaged": 0.4, "acoustic": 0.3}


@dataclass
class Impact:
    """A strike: ``spread`` strikes reach the other plates through the walls."""

    t: float
    level: int
    j_mns: float
    contact_ms: float
    kind: str
    spread: bool = True


class Scene:
    """One recording's events: what people, cubes and the café did, on the stream clock."""

    def __init__(self, tw: Tower, duration: float, rng: np.random.Generator, scenario: str,
                 hour: float | None = None) -> None:
        self.tw, self.duration, self.rng, self.scenario = tw, float(duration), rng, scenario
        lo, hi = HOURS.get(scenario, (18.0, 23.0))
        self.hour0 = float(rng.uniform(lo, hi)) if hour is None else float(hour)
        self.quiet_until = float(rng.uniform(4.3, 6.9))
        self.impacts: list[Impact] = []
        self.weights: list[tuple[float, int, float]] = []
        self.presses: list[tuple[float, float, int, float]] = []  # t0, t1, level, grams
        self.jolts: list[tuple[float, float]] = []  # t, velocity change m/s
        self.vib: list[dict[str, Any]] = []  # pump, grinder, fridge spells
        self.phones: list[dict[str, Any]] = []
        self.disconnects: list[tuple[float, float, int]] = []
        self.tower: list[list[Cube]] = [[] for _ in range(8)]
        self.landings: list[dict[str, Any]] = []
        self.knockdowns: list[dict[str, Any]] = []
        self.removals: list[dict[str, Any]] = []
        self.lifts: list[dict[str, Any]] = []
        self.closes: list[dict[str, Any]] = []
        self.knocks: list[dict[str, Any]] = []
        self.touches: list[dict[str, Any]] = []
        self.noise: list[dict[str, Any]] = []
        self.fallouts: list[dict[str, Any]] = []
        self.game: dict[str, Any] | None = None
        self.games: list[dict[str, Any]] = []
        self.load_stream = scenario != "acoustic"
        self.box = list(tw.cubes)
        rng.shuffle(self.box)
        self.groups: list[dict[str, Any]] = []

    # the evening ---------------------------------------------------------------------------

    def hour(self, t: float) -> float:
        return self.hour0 + t / 3600.0

    def lights_dimmed_at(self) -> float | None:
        """Stream time the lights are dimmed (None: not in this recording)."""
        t = (self.tw.dim_hour - self.hour0) * 3600.0
        if t >= self.duration:
            return None
        return max(t, -1.0)

    def strike_times(self) -> list[np.ndarray]:
        """Per level, the times of the strikes that crush its card."""
        out = []
        for lv in range(8):
            ts = [i.t for i in self.impacts if i.level == lv and i.kind in ("plate", "edge")
                  and i.j_mns > 0.2]
            out.append(np.sort(np.array(ts, float)))
        return out

    def wear(self, level: int, t: np.ndarray | float, strikes: np.ndarray) -> np.ndarray:
        """Wear of plate ``level`` at stream time(s) ``t`` (0 fresh; stiffness x (1 - w))."""
        tw = self.tw
        tt = np.asarray(t, float)
        w = tw.wear18[level] + tw.wear_per_h[level] * (self.hour0 + tt / 3600.0 - 18.0)
        w = w + tw.wear_per_strike * np.searchsorted(strikes, tt, side="right")
        return np.clip(w, 0.0, 0.45)

    # throws ---------------------------------------------------------------------------------

    def take_cube(self, colour: str | None = None) -> Cube:
        if colour is None:
            return self.box.pop()
        for i in range(len(self.box) - 1, -1, -1):
            if self.box[i].colour == colour:
                return self.box.pop(i)
        raise ValueError(f"no {colour} cube left in the box")

    def throw(self, t_rel: float, cube: Cube, *, kind: str = "throw", style: str = "gentle",
              colour: str | None = None) -> dict[str, Any]:
        """Drop ``cube`` into the top at ``t_rel``; returns its landing (truth)."""
        rng = self.rng
        m = cube.mass_g * 1e-3
        if style == "hurl":
            h, v0 = rng.uniform(0.10, 0.40), rng.uniform(0.2, 1.4)
            rim = rng.random() < 0.35
        else:
            h, v0 = rng.uniform(0.01, 0.06), 0.0
            rim = rng.random() < 0.06
        t = t_rel + (-v0 + math.sqrt(v0 * v0 + 2 * G * h)) / G
        v = math.sqrt(v0 * v0 + 2 * G * h)
        impacts: list[list[Any]] = []
        first: float | None = None
        if rim:
            j = m * v * (1 + cube.restitution) * rng.uniform(0.15, 0.4) * 1e3
            self.impacts.append(Impact(t, 7, j, cube.contact_ms * 0.6, "rim"))
            impacts.append([round(t, 5), 7, round(j, 4), "rim"])
            first = t
            v *= 0.6
        landing = self._fall(cube, t, v, 7, H_MOD * 0.8, style, impacts, knock_ok=True)
        landing.update({
            "t_release": round(t_rel, 5), "kind": kind, "colour": colour or cube.colour,
            "style": style, "knocked": False,
        })
        if first is not None:
            landing["t_first_impact"] = round(first, 5)
        self.landings.append(landing)
        return landing

    def _fall(self, cube: Cube, t: float, v: float, level: int, dist: float, style: str,
              impacts: list[list[Any]], *, knock_ok: bool) -> dict[str, Any]:
        rng = self.rng
        tw = self.tw
        m = cube.mass_g * 1e-3
        e = cube.restitution
        knock: tuple[Cube, int, float] | None = None
        while True:
            dt = (-v + math.sqrt(v * v + 2 * G * dist)) / G
            t += dt
            v = math.sqrt(v * v + 2 * G * dist)
            p = tw.catch[level] * (0.85 if style == "hurl" and level >= 5 else 1.0)
            if level == 0 or rng.random() < p:
                j = m * v * (1 + e) * 1e3
                self.impacts.append(Impact(t, level, j, cube.contact_ms, "plate"))
                impacts.append([round(t, 5), level, round(j, 4), "plate"])
                t_on = t
                if knock_ok and level > 0 and self.tower[level] and rng.random() < 0.012 * min(
                        4, len(self.tower[level])) * (1.8 if style == "hurl" else 1.0):
                    victim = self.tower[level][int(rng.integers(len(self.tower[level])))]
                    knock = (victim, level, t + float(rng.uniform(0.02, 0.12)))
                vb = e * v * rng.uniform(0.6, 0.95)
                hop = level > 0 and v > 1.2 and rng.random() < 0.05
                while vb > 0.1:
                    t += 2 * vb / G
                    j = m * vb * (1 + e) * 1e3
                    self.impacts.append(Impact(t, level, j, cube.contact_ms, "plate"))
                    impacts.append([round(t, 5), level, round(j, 4), "bounce"])
                    if hop:
                        break
                    vb *= e * rng.uniform(0.6, 0.95)
                if hop:  # the bounce carried it over the hole
                    level -= 1
                    dist = H_MOD * rng.uniform(0.6, 0.9)
                    v = 0.3
                    continue
                for _ in range(int(rng.integers(1, 4))):  # it tumbles flat
                    t += rng.uniform(0.015, 0.07)
                    j = m * rng.uniform(0.03, 0.1) * 1.3 * 1e3
                    self.impacts.append(Impact(t, level, j, cube.contact_ms, "tumble"))
                    impacts.append([round(t, 5), level, round(j, 4), "tumble"])
                t_rest = t + rng.uniform(0.01, 0.05)
                break
            if rng.random() < tw.clip[level]:
                j = m * v * (1 + e) * rng.uniform(0.1, 0.4) * 1e3
                self.impacts.append(Impact(t, level, j, cube.contact_ms * 0.5, "edge"))
                impacts.append([round(t, 5), level, round(j, 4), "edge"])
                v *= 0.8
            level -= 1
            dist = H_MOD
        self.tower[level].append(cube)
        self.weights.append((t_on, level, cube.mass_g))
        landing: dict[str, Any] = {
            "t": round(t_rest, 5), "floor": level, "cubes": 1, "t_first_impact": impacts[0][0],
            "t_on_plate": round(t_on, 5), "mass_g": round(cube.mass_g, 5), "fid": cube.fid,
            "material": cube.material, "impacts": impacts,
        }
        if knock_ok:
            landing["caused_knockdown"] = False
        if knock is not None:
            victim, lv, tk = knock
            self.tower[lv].remove(victim)
            self.weights.append((tk, lv, -victim.mass_g))
            sub: list[list[Any]] = []
            kl = self._fall(victim, tk, 0.25, lv - 1, H_MOD * 0.9, "gentle", sub, knock_ok=False)
            kl.update({"t_release": round(tk, 5), "t_first_impact": round(tk, 5),
                       "kind": "knocked", "colour": victim.colour, "style": style,
                       "knocked": True, "knocked_from": lv})
            self.landings.append(kl)
            self.knockdowns.append({"t": round(tk, 5), "fid": victim.fid, "floor_from": lv,
                                    "floor_to": kl["floor"], "by_fid": cube.fid})
            landing["caused_knockdown"] = True
        return landing

    # hands ----------------------------------------------------------------------------------

    def rumble(self, t0: float, t1: float, levels: list[int], j: tuple[float, float],
               n: int) -> None:
        for _ in range(n):
            self.impacts.append(Impact(float(self.rng.uniform(t0, t1)),
                                       int(self.rng.choice(levels)),
                                       float(self.rng.uniform(*j)), 2.5, "hand"))

    def touch(self, t: float) -> float:
        """A hand steadies the tower: presses on one or two upper floors."""
        rng = self.rng
        dur = float(rng.uniform(0.8, 3.0))
        levels = sorted(rng.choice(np.arange(4, 8), int(rng.integers(1, 3)), replace=False)
                        .tolist())
        grams = float(rng.uniform(0.5, 3.0))
        for lv in levels:
            self.presses.append((t, t + dur, lv, grams * rng.uniform(0.6, 1.0)))
        self.rumble(t, t + 0.2, levels, (0.005, 0.03), 3)
        self.touches.append({"t": round(t, 4), "t_end": round(t + dur, 4), "levels": levels,
                             "grams": round(grams, 3)})
        return t + dur

    def lift(self, t: float, k: int) -> float:
        """Lift modules k..7 at about ``t`` (grip first); returns the lift time."""
        rng = self.rng
        grip = float(rng.uniform(0.5, 0.9))
        for lv in range(max(0, k - 1), k + 1):
            self.presses.append((t, t + grip + 0.2, lv, float(rng.uniform(1.0, 4.0))))
        t_lift = t + grip
        self.rumble(t, t_lift + 0.3, list(range(k + 1)), (0.01, 0.06), 6)
        self.lifts.append({"t": round(t_lift, 4), "exposed": k})
        return t_lift

    def fall_out(self, t_lift: float, k: int) -> list[Cube]:
        """Cubes near a lifted plate's hole slip out onto the table."""
        out = []
        for lv in range(k + 1, 8):
            for c in list(self.tower[lv]):
                if self.rng.random() < 0.03:
                    self.tower[lv].remove(c)
                    tt = t_lift + float(self.rng.uniform(0.1, 0.6))
                    self.weights.append((tt, lv, -c.mass_g))
                    self.fallouts.append({"t": round(tt, 4), "floor": lv, "fid": c.fid})
                    out.append(c)
        return out

    def remove(self, t: float, k: int, cubes: list[Cube]) -> float:
        """Fingers take ``cubes`` off the open plate k in one or two handfuls."""
        rng = self.rng
        hands = [cubes] if len(cubes) < 3 or rng.random() < 0.5 else \
            [cubes[:len(cubes) // 2], cubes[len(cubes) // 2:]]
        for part in hands:
            if not part:
                continue
            press = float(rng.uniform(0.25, 0.5))
            self.presses.append((t, t + press, k, float(rng.uniform(4.0, 15.0))))
            t_r = t + press
            for c in part:
                self.tower[k].remove(c)
            mass = sum(c.mass_g for c in part)
            self.weights.append((t_r, k, -mass))
            self.rumble(t, t_r + 0.1, [k], (0.01, 0.05), 3)
            self.removals.append({"t": round(t_r, 4), "floor": k, "cubes": len(part),
                                  "mass_g": round(mass, 5)})
            t = t_r + float(rng.uniform(0.8, 1.8))
        return t

    def close(self, t: float, k: int, t_lift: float) -> float:
        """Set modules k..7 back on: the walls land on plate k's module."""
        rng = self.rng
        j = float(rng.uniform(1.5, 4.5))
        self.impacts.append(Impact(t, k, j, 3.0, "close"))
        if k < 7:
            self.impacts.append(Impact(t + 0.002, k + 1, j * 0.6, 3.0, "close"))
            self.disconnects.append((t_lift, t, k))
        self.rumble(t, t + 0.5, list(range(8)), (0.005, 0.03), 5)
        self.closes.append({"t": round(t, 4), "exposed": k})
        return t + 0.5

    # the café --------------------------------------------------------------------------------

    def table_knock(self, t: float, kind: str = "knock") -> float:
        """A glass set down hard, an elbow, a chair pushed into the table leg."""
        rng = self.rng
        n = 1 if kind == "knock" else int(rng.integers(2, 4))
        tt = t
        for _ in range(n):
            dv = float(rng.uniform(0.004, 0.015)) * (1.6 if kind == "bump" else 1.0)
            self._jolt(tt, dv, float(rng.uniform(0.3, 1.0)))
            tt += float(rng.uniform(0.05, 0.15))
        t_end = tt + 0.15
        self.knocks.append({"t": round(t, 4), "t_end": round(t_end, 4), "kind": kind})
        return t_end

    def _jolt(self, t: float, dv: float, j_mns: float) -> None:
        self.jolts.append((t, dv))
        for lv in range(8):
            self.impacts.append(Impact(t + 0.0002 * lv, lv, j_mns * 0.88**lv, 1.5, "jolt",
                                       spread=False))

    def phone(self, t: float, kind: str) -> float:
        rng = self.rng
        dur = {"call": rng.uniform(15, 60), "data": rng.uniform(0.5, 4.0),
               "handshake": rng.uniform(0.8, 2.5)}[kind]
        dur = float(min(dur, self.duration - 0.5 - t))
        if dur <= 0.2:
            return t
        dist_cm = float(rng.uniform(15, 60))
        strength = float((20.0 / dist_cm) ** 2 * rng.uniform(0.6, 1.4))
        slots = 1 if kind == "call" else int(rng.integers(2, 5))
        self.phones.append({"t": round(t, 4), "t_end": round(t + dur, 4), "kind": kind,
                            "slots": slots, "distance_cm": round(dist_cm, 1),
                            "amp_lsb": round(12.0 * strength, 3),
                            "phase_s": float(rng.uniform(0, GSM_FRAME_S))})
        return t + dur

    def espresso(self, t: float) -> float:
        """Grind, pull a shot (vibratory pump), knock the puck out."""
        rng = self.rng
        g_dur = float(rng.uniform(4, 9))
        self.vib.append({"t": round(t, 4), "t_end": round(t + g_dur, 4), "kind": "grinder",
                         "accel": round(float(rng.uniform(0.005, 0.02)), 5),
                         "f_hz": round(float(rng.uniform(23, 28)), 3)})
        ts = t + g_dur + float(rng.uniform(8, 20))
        s_dur = float(rng.uniform(20, 30))
        self.vib.append({"t": round(ts, 4), "t_end": round(ts + s_dur, 4), "kind": "pump",
                         "accel": round(float(rng.uniform(0.02, 0.08)), 5),
                         "f_hz": round(self.tw.mains_hz, 4)})
        tk = ts + s_dur + float(rng.uniform(1.0, 5.0))
        for i in range(int(rng.integers(2, 4))):
            self._jolt(tk, float(rng.uniform(0.001, 0.003)), float(rng.uniform(0.05, 0.15)))
            self.noise.append({"t": round(tk, 4), "t_end": round(tk + 0.1, 4),
                               "kind": "knockbox", "n": i})
            tk += float(rng.uniform(0.25, 0.6))
        return tk

    def fridge(self) -> None:
        """The drinks fridge's compressor cycles all evening (phase from the hour)."""
        tw = self.tw
        cycle = tw.fridge_on_s + tw.fridge_off_s
        start = (self.hour0 - 17.0) * 3600.0 % cycle
        t = -start
        while t < self.duration:
            on0, on1 = t, t + tw.fridge_on_s
            if on1 > 0:
                self.vib.append({"t": round(max(on0, 0.0), 4),
                                 "t_end": round(min(on1, self.duration + 1), 4),
                                 "kind": "fridge",
                                 "accel": round(0.004 * (1 + 0.3 * math.sin(tw.fridge_hz)), 5),
                                 "f_hz": round(tw.fridge_hz, 4)})
                for tt, kind in ((on0, "fridge_start"), (on1, "fridge_stop")):
                    if self.quiet_until + 0.5 < tt < self.duration - 1:
                        self._jolt(tt, 0.0015, 0.08)
                        self.noise.append({"t": round(tt, 4), "t_end": round(tt + 0.3, 4),
                                           "kind": kind})
            t += cycle

    def cafe_background(self, *, guaranteed: bool = False) -> None:
        """Phones and the bar over the whole recording (after the quiet start)."""
        rng = self.rng
        t0 = self.quiet_until + 0.5
        rate = PHONES_PER_MIN[self.scenario] / 60.0
        t = t0 + float(rng.exponential(1 / rate)) if not guaranteed else t0 + rng.uniform(2, 8)
        while t < self.duration - 2:
            kind = str(rng.choice(["call", "data", "handshake"], p=[0.35, 0.4, 0.25]))
            if guaranteed and not self.phones:
                kind = "call"
            t = self.phone(float(t), kind) + float(rng.exponential(1 / rate))
        rate = SHOTS_PER_MIN[self.scenario] / 60.0
        t = t0 + float(rng.exponential(1 / rate)) if not guaranteed else t0 + rng.uniform(1, 6)
        while t < self.duration - 5:
            t = self.espresso(float(t)) + float(rng.exponential(1 / rate))
        self.fridge()


def table_knock(sc: Scene, t: float) -> float:
    """A hard knock on the table at ``t`` (in the truth's ``knocks``); returns its end."""
    return sc.table_knock(t, "knock")


# -- scenarios ----------------------------------------------------------------------------


def _group(rng: np.random.Generator, n_players: int | None = None) -> dict[str, Any]:
    n = int(rng.integers(3, 7)) if n_players is None else n_players
    players = [str(c) for c in rng.permutation(COLOURS)[:n]]
    style = str(rng.choice(["gentle", "hurl", "mixed"], p=[0.45, 0.25, 0.3]))
    hurlers = [p for p in players if style == "hurl" or (style == "mixed" and rng.random() < 0.4)]
    return {"players": players, "style": style, "hurlers": hurlers,
            "pace": float(rng.uniform(0.8, 1.3))}


def _style(group: dict[str, Any], who: str | None, rng: np.random.Generator) -> str:
    if who is not None:
        return "hurl" if who in group["hurlers"] else "gentle"
    return "hurl" if group["style"] == "hurl" or (group["style"] == "mixed"
                                                  and rng.random() < 0.4) else "gentle"


def _singles_and_series(sc: Scene, *, series_share: float, gap: tuple[float, float],
                        group: dict[str, Any], knocks: bool = False) -> None:
    rng = sc.rng
    t = sc.quiet_until + float(rng.uniform(0.0, 0.8))
    end = sc.duration - 2.5
    while t < end and sc.box:
        if rng.random() < series_share:
            n = int(rng.integers(3, 9))
            last = t
            for _ in range(n):
                if t >= end or not sc.box:
                    break
                x = sc.throw(t, sc.take_cube(), style=_style(group, None, rng))
                last = max(last, x["t"])
                t += float(rng.uniform(0.3, 0.9))
            t = last + float(rng.uniform(2.5, 6.0))
        else:
            x = sc.throw(t, sc.take_cube(), style=_style(group, None, rng))
            t = x["t"] + float(rng.uniform(*gap))
        if knocks and rng.random() < 0.25 and t + 3 < end:
            t = (sc.table_knock(t, str(rng.choice(["knock", "bump"]))) if rng.random() < 0.6
                 else sc.touch(t)) + float(rng.uniform(1.0, 2.5))


def _prologue_throw(sc: Scene, t: float, cube: Cube, kind: str, colour: str,
                    style: str) -> float:
    x = sc.throw(t, cube, kind=kind, style=style, colour=colour)
    return float(x["t"])


class Game:
    """Mord im Arosa as the rulebook has it, thrown through the scene's tower."""

    def __init__(self, sc: Scene, group: dict[str, Any]) -> None:
        self.sc, self.group = sc, group
        self.players: list[str] = group["players"]
        self.supply = {p: 20 for p in self.players}
        self.sheet = {p: [0] * 8 for p in self.players}
        self.crime_scenes: list[int] = []
        self.victims_found = 0
        self.phase = "prologue"
        self.turns: list[dict[str, Any]] = []
        self.hand: list[Cube] = []  # cubes out of the tower, to be thrown back
        self.pile = {p: [c for c in sc.box if c.colour == p] for p in self.players}
        self.reds = [c for c in sc.box if c.colour == "red"]
        self.victim_thrower = str(sc.rng.choice(self.players))
        self.t_end = sc.duration

    def over(self) -> bool:
        return any(sum(v) >= 10 for v in self.sheet.values()) or \
            any(n <= 0 for n in self.supply.values())

    def can_throw(self, t: float) -> bool:
        return t < self.t_end - 4.0

    def throw(self, t: float, cube: Cube, kind: str, who: str) -> float:
        rng = self.sc.rng
        x = self.sc.throw(t, cube, kind=kind, style=_style(self.group, who, rng),
                          colour=cube.colour)
        return float(x["t"]) + float(rng.uniform(1.2, 3.5)) * self.group["pace"]

    def from_supply(self, p: str) -> Cube:
        self.supply[p] -= 1
        return self.pile[p].pop()

    def play(self, t: float, t_end: float) -> float:
        rng = self.sc.rng
        self.t_end = t_end
        for _ in range(2):
            if not self.can_throw(t):
                return t
            t = self.throw(t, self.reds.pop(), "victim", self.victim_thrower)
        for p in self.players:
            for _ in range(2):
                if not self.can_throw(t):
                    return t
                t = self.throw(t, self.from_supply(p), "prologue", p)
        self.phase = "act1"
        turn = 0
        while not self.over() and t < t_end - 25.0:
            who = self.players[turn % len(self.players)]
            t = self.turn(t + float(rng.uniform(2.0, 8.0)) * self.group["pace"], who)
            turn += 1
        if self.over():
            self.finish()
        return t

    def choose_floor(self, who: str, suspects: list[str]) -> int:
        rng = self.sc.rng
        tower = self.sc.tower
        if self.phase == "act1":
            vic = [lv for lv in range(8) if any(c.colour == "red" for c in tower[lv])]
            if vic and rng.random() < 0.6:  # they listened well
                return int(rng.choice(vic))
        elif suspects and rng.random() < 0.55:
            counts = [sum(c.colour in suspects for c in tower[lv]) for lv in range(8)]
            if max(counts) > 0:
                return int(np.argmax(counts))
        return int(rng.choice(8, p=np.array([1, 1, 1, 2, 2, 3, 4, 4]) / 18))

    def turn(self, t: float, who: str) -> float:
        sc, rng = self.sc, self.sc.rng
        action = "inspect"
        suspects: list[str] = []
        if self.phase == "act2":
            own_on_sheet = [lv for lv in range(8) if self.sheet[who][lv] > 0]
            if own_on_sheet and rng.random() < 0.35:
                action = "cover"
            else:
                action = "suspect"
                others = [p for p in self.players if p != who]
                suspects = [str(s) for s in rng.choice(others, int(rng.integers(
                    1, min(2, len(others)) + 1)), replace=False)]
            k = int(rng.choice(own_on_sheet)) if action == "cover" else \
                self.choose_floor(who, suspects)
        else:
            k = self.choose_floor(who, [])
        t_lift = sc.lift(t, k)
        self.hand += sc.fall_out(t_lift, k)
        t = t_lift + float(rng.uniform(1.5, 4.0))
        on = list(sc.tower[k])
        entry: dict[str, Any] = {"by": who, "floor": k, "action": action, "victims": 0}
        penalties = 0
        if action == "inspect":
            vic = [c for c in on if c.colour == "red"]
            if vic:
                entry["victims"] = len(vic)
                self.victims_found += len(vic)
                if k not in self.crime_scenes:
                    self.crime_scenes.append(k)
                for p in self.players:
                    n = sum(c.colour == p for c in on)
                    if p != who and n:
                        put = min(n, self.supply[p])
                        self.sheet[p][k] += put
                        self.supply[p] -= put
            else:
                penalties = 1
        elif action == "suspect":
            own0 = sum(c.colour == who for c in on)
            if k == 0 and own0 == 0:
                penalties = len(suspects)
            else:
                for s in suspects:
                    n = sum(c.colour == s for c in on)
                    put = min(n, self.supply[s])
                    self.sheet[s][k] += put
                    self.supply[s] -= put
                    penalties += n == 0
            entry["suspects"] = suspects
        else:
            n = sum(c.colour == who for c in on)
            back = min(n, self.sheet[who][k])
            self.sheet[who][k] -= back
            self.supply[who] += back
            entry["covered"] = back
            penalties = 1 if n == 0 else 0
        if on:
            t = sc.remove(t, k, on)
        self.hand += [c for c in on if c.colour != "red"]
        t = sc.close(t + float(rng.uniform(1.0, 2.5)), k, t_lift)
        self.turns.append(entry)
        if self.phase == "act1" and self.victims_found >= 2:
            self.phase = "act2"
        t += float(rng.uniform(1.5, 3.0))
        if self.over():
            return t
        while self.hand and self.can_throw(t):
            t = self.throw(t, self.hand.pop(0), "throwback", who)
        for _ in range(penalties):
            if self.over() or not self.can_throw(t):
                break
            t = self.throw(t, self.from_supply(who), "penalty", who)
        return t

    def finish(self) -> None:
        self.phase = "over"

    def state(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "players": self.players, "victim_thrower": self.victim_thrower,
            "style": self.group["style"], "hurlers": self.group["hurlers"],
            "phase": self.phase, "turns": self.turns, "crime_scenes": sorted(self.crime_scenes),
            "sheet": self.sheet, "supply": self.supply,
        }
        if self.phase == "over":
            pts = {}
            for p in self.players:
                s = 0
                for lv, n in enumerate(self.sheet[p]):
                    w = 3 if lv in self.crime_scenes else 2 if any(
                        abs(lv - c) == 1 for c in self.crime_scenes) else 1
                    s += w * n
                pts[p] = s
            hi, lo = max(pts.values()), min(pts.values())
            out["suspicion"] = pts
            out["culprits"] = [p for p in self.players if pts[p] == hi]
            out["winners"] = [p for p in self.players if pts[p] == lo]
        return out


def _empty_tower(sc: Scene, t: float) -> float:
    """Between groups the staff open every floor from the top and take the cubes out."""
    rng = sc.rng
    for k in range(7, -1, -1):
        if not sc.tower[k] or t > sc.duration - 15:
            continue
        t_lift = sc.lift(t, k)
        t = sc.remove(t_lift + float(rng.uniform(0.8, 2.0)), k, list(sc.tower[k]))
        t = sc.close(t + float(rng.uniform(0.5, 1.5)), k, t_lift) + float(rng.uniform(1, 3))
    return t


def simulate(seed: int, scenario: str, duration: float) -> Scene:
    """The events of one recording (no signals yet)."""
    if scenario not in SCENARIOS:
        raise ValueError(f"unknown scenario {scenario!r}")
    tw = make_tower(seed)
    base = "game" if scenario == "damaged" else scenario
    rng = np.random.default_rng([seed, SCENARIOS.index(base) + 1, int(round(duration * 1000))])
    sc = Scene(tw, duration, rng, scenario)
    sc.cafe_background(guaranteed=scenario == "noisy")
    if base in ("single", "acoustic"):
        group = _group(rng)
        sc.groups.append(group)
        _singles_and_series(sc, series_share=0.0 if base == "single" else 0.25,
                            gap=(1.5, 5.0), group=group)
    elif base == "rapid":
        group = _group(rng)
        sc.groups.append(group)
        _singles_and_series(sc, series_share=1.0, gap=(2.5, 6.0), group=group)
    elif base == "noisy":
        group = _group(rng)
        sc.groups.append(group)
        t = sc.quiet_until + float(rng.uniform(3.0, 8.0))
        sc.table_knock(t, "knock")  # at least one knock
        _singles_and_series(sc, series_share=0.15, gap=(1.5, 4.5), group=group, knocks=True)
    else:  # game, damaged, long
        t = sc.quiet_until + float(rng.uniform(0.0, 1.5))
        while t < sc.duration - 60 or (not sc.games and sc.game is None):
            group = _group(rng)
            sc.groups.append(group)
            game = Game(sc, group)
            t = game.play(t, sc.duration)
            sc.games.append(game.state())
            sc.game = sc.games[-1]
            if base != "long" or t > sc.duration - 60:
                break
            t = _empty_tower(sc, t + float(rng.uniform(10, 40)))
            sc.box = [c for c in tw.cubes if all(c not in lv for lv in sc.tower)]
            rng.shuffle(sc.box)
            t += float(rng.uniform(20, 90))  # the next group sits down
    sc.landings.sort(key=lambda x: x["t_release"])
    sc.impacts.sort(key=lambda i: i.t)
    return sc


# -- signals ------------------------------------------------------------------------------


def _contact_spectrum(f: np.ndarray, tau_s: np.ndarray) -> np.ndarray:
    """|F(f)| / J of a half-sine force pulse lasting ``tau_s``."""
    x = 2 * f * tau_s
    near = np.abs(1 - x * x) < 1e-6
    val = np.abs(np.cos(np.pi * f * tau_s) / np.where(near, 1.0, 1 - x * x))
    return np.where(near, np.pi / 4, val)


def _modes_at(sc: Scene, level: int, t: float, strikes: list[np.ndarray]) -> tuple[
        np.ndarray, np.ndarray, float]:
    """Plate ``level``'s mode frequencies and Q at ``t``, and its amplitude factor."""
    w = float(sc.wear(level, t, strikes[level]))
    f = sc.tw.mode_f0[level] * math.sqrt(1 - w)
    q = sc.tw.mode_q0[level] / (1 + 3.0 * w)  # the crushed card's loss factor rises
    return f, q, 1 / math.sqrt(1 - w)


def _piezo_background(sc: Scene, tc: np.ndarray, rng: np.random.Generator) -> tuple[
        np.ndarray, np.ndarray]:
    """Electrical and café background on every pin at times ``tc`` (n, 8): (signal, hum)."""
    tw = sc.tw
    n = tc.shape[0]
    hum = tw.hum_lsb * (np.sin(2 * np.pi * tw.mains_hz * tc + tw.hum_phase)
                        + 0.3 * np.sin(6 * np.pi * tw.mains_hz * tc + 2 * tw.hum_phase))
    x = rng.normal(0.0, 1.0, (n, 8)) * tw.noise_lsb + hum
    t_dim = sc.lights_dimmed_at()
    if t_dim is not None and tc[-1, 0] >= t_dim:
        # a leading-edge triac fires at angle alpha every half cycle: the lamp wire's
        # voltage steps, a stray pF couples the step into the disc's 20 nF, which lets it
        # go through the 1 MOhm bias (20 ms); alternate half cycles step the other way
        half = 0.5 / tw.mains_hz
        fire = tw.dimmer_alpha / (2 * np.pi * tw.mains_hz)
        rel = tc - fire
        k = np.floor(rel / half)
        since = rel - k * half
        sign = np.where(k % 2 == 0, 1.0, -1.0)
        tau = 0.02
        spike = sign * np.exp(-since / tau) / (1 + math.exp(-half / tau)) \
            * math.sin(tw.dimmer_alpha)
        x += np.where(tc >= t_dim, spike * tw.dimmer_lsb, 0.0)
    for ph in sc.phones:
        t0, t1 = ph["t"], ph["t_end"]
        if tc[-1, 0] < t0 or tc[0, 0] > t1:
            continue
        rel = tc - t0 + ph["phase_s"]
        fr = np.floor(rel / GSM_FRAME_S)
        p = rel - fr * GSM_FRAME_S
        width = ph["slots"] * GSM_SLOT_S
        tau = 6e-5
        wave = np.where(p < width, 1 - np.exp(-p / tau),
                        (1 - math.exp(-width / tau)) * np.exp(-(p - width) / tau))
        wave = np.where(fr % 26 == 25, 0.0, wave)  # the idle frame of the 26-multiframe
        duty = width / GSM_FRAME_S * 25 / 26
        inside = (tc >= t0) & (tc < t1)
        x += np.where(inside, (wave - duty) * ph["amp_lsb"] * tw.rf_gain, 0.0)
    for v in sc.vib:
        t0, t1 = v["t"], v["t_end"]
        if tc[-1, 0] < t0 or tc[0, 0] > t1:
            continue
        a = _vib_accel(v, tc)
        x += a * tw.vib_gain * (1 + 0.04 * np.arange(8))
    return x, hum


def _vib_accel(v: dict[str, Any], t: np.ndarray) -> np.ndarray:
    """Floor-borne acceleration (m/s2) of a pump, grinder or fridge spell at times ``t``."""
    t0, t1, f = v["t"], v["t_end"], v["f_hz"]
    ramp = 1.0 if v["kind"] == "grinder" else 1.5
    env = np.clip((t - t0) / ramp, 0, 1) * np.clip((t1 - t) / 0.3, 0, 1)
    w = 2 * np.pi * f * t
    if v["kind"] == "pump":  # a half-wave driven piston: 50 Hz and its harmonics
        s = np.sin(w) + 0.5 * np.sin(2 * w + 0.7) + 0.25 * np.sin(3 * w + 1.9)
    elif v["kind"] == "grinder":  # burr rotation and its harmonics, motor hum at 100 Hz
        s = sum(np.sin(h * w + h) / h for h in range(2, 9)) + 0.6 * np.sin(4 * np.pi * 50 * t)
    else:  # compressor at its slip speed, second harmonic
        s = np.sin(w) + 0.4 * np.sin(2 * w + 0.3)
    return np.asarray(v["accel"] * env * s)


def render_piezo(sc: Scene) -> np.ndarray:
    """The ADC codes of every sample set, (N, 8) uint16."""
    tw = sc.tw
    fs = tw.piezo_rate_hz
    n_sets = int(math.floor(sc.duration * fs))
    out = np.empty((n_sets, 8), np.uint16)
    skew = tw.skew_us * 1e-6 * np.arange(8)
    strikes = sc.strike_times()
    imp_t = np.array([i.t for i in sc.impacts])
    mid = 2 ** (tw.adc_bits - 1)
    chunk = int(20 * fs)
    irng = np.random.default_rng([tw.seed, 77, len(sc.impacts)])
    excite = irng.uniform(0.5, 1.0, (len(sc.impacts), 4))
    for c0 in range(0, n_sets, chunk):
        c1 = min(n_sets, c0 + chunk)
        rng = np.random.default_rng([tw.seed, SCENARIOS.index(sc.scenario), c0,
                                     int(sc.duration * 1000)])
        tc = (np.arange(c0, c1) / fs)[:, None] + skew[None, :]
        x, hum = _piezo_background(sc, tc, rng)
        t_a, t_b = c0 / fs, c1 / fs
        lo = int(np.searchsorted(imp_t, t_a - 0.6))
        hi = int(np.searchsorted(imp_t, t_b))
        for ii in range(lo, hi):
            imp = sc.impacts[ii]
            chans = range(8) if imp.spread else [imp.level]
            for c in chans:
                d = abs(c - imp.level)
                amp = imp.j_mns * tw.sens[c] * tw.xtalk**d
                if amp < 0.05:
                    continue
                f, q, gain = _modes_at(sc, c, imp.t, strikes)
                a = amp * gain * tw.mode_gain[c] * excite[ii] * (500.0 / f) * \
                    _contact_spectrum(f, np.full(4, imp.contact_ms * 1e-3)) * np.exp(-d * f / 2500)
                delay = imp.t + 1.5e-4 * d
                span = float(np.max(q / (np.pi * f)) * 7.0)
                j0 = max(c0, int(math.ceil((delay - skew[c]) * fs)))
                j1 = min(c1, int(math.ceil((delay + span) * fs)))
                if j1 <= j0:
                    continue
                dt = np.arange(j0, j1) / fs + skew[c] - delay
                y = (a[None, :] * np.exp(-np.pi * f[None, :] * dt[:, None] / q[None, :])
                     * np.sin(2 * np.pi * f[None, :] * dt[:, None])).sum(axis=1)
                x[j0 - c0:j1 - c0, c] += y
        for t_lift, t_close, k in sc.disconnects:
            if t_close < t_a or t_lift > t_b or k >= 7:
                continue
            rows = (tc[:, 0] >= t_lift) & (tc[:, 0] < t_close)
            # the disc went with its module: the pin floats at the bias, humming louder
            x[rows, k + 1:] = (rng.normal(0, 1, (int(rows.sum()), 7 - k)) * tw.noise_lsb[k + 1:]
                               + 5 * hum[rows, k + 1:])
        codes = np.rint(mid + tw.bias_lsb + x)
        out[c0:c1] = np.clip(codes, 0, 2**tw.adc_bits - 1).astype(np.uint16)
    return out


@dataclass
class LoadStream:
    """The firmware's LOAD rows: tick stream times, valid bits, counts (0 where not valid)."""

    tick_s: np.ndarray
    t_us: np.ndarray
    valid: np.ndarray
    values: np.ndarray
    timeouts_at: list[float] = field(default_factory=list)


def _boxcar(y: np.ndarray, t: np.ndarray, period: float) -> np.ndarray:
    """Mean of ``y`` (on grid ``t``) over the last ``period`` seconds, at every grid point."""
    dt = t[1] - t[0]
    cum = np.concatenate([[0.0], np.cumsum(y) * dt])
    tc = np.concatenate([[t[0] - dt], t])
    back = np.interp(t - period, tc, cum)
    return (cum[1:] - back) / period


def render_load(sc: Scene) -> LoadStream:
    """Load cells on their plates, the HX711s' sinc filters, the firmware's ticks."""
    tw = sc.tw
    period_us = tw.load_period_us
    phase_us = int(round(tw.load_phase_s * 1e6 / 4)) * 4
    n_ticks = int(math.floor((sc.duration * 1e6 - phase_us) / period_us)) + 1
    t_us_rel = phase_us + period_us * np.arange(n_ticks, dtype=np.int64)
    t_us_rel = t_us_rel[t_us_rel < sc.duration * 1e6]
    ticks = t_us_rel / 1e6
    dt = 1 / LOAD_FS
    tf = np.arange(-1.5, sc.duration + 0.2, dt)
    strikes = sc.strike_times()
    rng = np.random.default_rng([tw.seed, SCENARIOS.index(sc.scenario), 5,
                                 int(sc.duration * 1000)])
    valid = np.zeros(len(ticks), np.int64)
    values = np.zeros((len(ticks), 8), np.int64)
    timeouts: list[float] = []
    for c in range(8):
        delta = np.zeros(tf.shape)
        for t, lv, g in sc.weights:
            if lv == c:
                delta[min(len(tf) - 1, int(np.searchsorted(tf, t)))] += g
        cubes_g = np.cumsum(delta)
        static = tw.plate_g[c] + cubes_g
        for t0, t1, lv, g in sc.presses:
            if lv == c:
                i0, i1 = np.searchsorted(tf, [t0, t1])
                seg = tf[i0:i1]
                ramp = np.clip((seg - t0) / 0.08, 0, 1) * np.clip((t1 - seg) / 0.08, 0, 1)
                static[i0:i1] += g * 0.5 * (1 - np.cos(np.pi * ramp))
        share = 1 - tw.ledge_k[c] * sc.wear(c, tf, strikes[c])
        u = share * static
        for imp in sc.impacts:
            if imp.level == c and imp.kind != "jolt":
                i = int(round((imp.t - tf[0]) * LOAD_FS))
                if 0 <= i < len(u):
                    u[i] += share[i] * imp.j_mns / G * LOAD_FS
        for t, dv in sc.jolts:
            i = int(round((t - tf[0]) * LOAD_FS))
            if 0 <= i < len(u):
                u[i] += (tw.plate_g[c] + cubes_g[i]) * dv / G * LOAD_FS
        for v in sc.vib:
            sel = (tf >= v["t"]) & (tf < v["t_end"])
            u[sel] += (tw.plate_g[c] + cubes_g[sel]) * _vib_accel(v, tf[sel]) / G
        w0 = 2 * np.pi * tw.cell_f_hz[c]
        z = tw.cell_zeta[c]
        b, a = signal.bilinear([w0 * w0], [1, 2 * z * w0, w0 * w0], fs=LOAD_FS)
        zi = signal.lfilter_zi(b, a) * u[0]
        y, _ = signal.lfilter(b, a, u, zi=zi)
        for ph in sc.phones:  # RF rectified in the bridge inputs: an offset while it sends
            sel = (tf >= ph["t"]) & (tf < ph["t_end"])
            duty = ph["slots"] * GSM_SLOT_S / GSM_FRAME_S * 25 / 26
            y[sel] += tw.rf_load_g[c] * ph["amp_lsb"] / 12.0 * duty * 4
        y += 0.002 * np.sin(2 * np.pi * tw.mains_hz * tf + c)
        period = 1 / tw.conv_rate_hz[c]
        for _ in range(4):  # sinc^4: settles in four conversion periods
            y = _boxcar(y, tf, period)
        comp = tw.conv_phase_s[c] + period * np.arange(int((sc.duration + 1) / period) + 2)
        comp = comp[comp < sc.duration]
        counts = np.rint(tw.zero[c] + tw.cpg[c] * np.interp(comp, tf, y)
                         + rng.normal(0, tw.load_noise_counts[c], len(comp)))
        k = np.searchsorted(comp, ticks, side="right") - 1
        fresh = (k >= 0) & (np.diff(np.concatenate([[-1], k])) > 0)
        for t_lift, t_close, lv in sc.disconnects:
            if c > lv:
                gone = (ticks >= t_lift) & (comp[np.maximum(k, 0)] < t_close + 4 * period)
                fresh &= ~gone
                timeouts.append(t_lift)
        valid |= fresh.astype(np.int64) << c
        values[:, c] = np.where(fresh, counts[np.maximum(k, 0)], 0)
    values = np.clip(values, -2**23, 2**23 - 1)
    return LoadStream(ticks, t_us_rel + tw.t0_us, valid, values, sorted(timeouts))


# -- the byte stream ----------------------------------------------------------------------


@dataclass
class Messages:
    """Every message of a recording in send order: encoded frames, type, stamp (or -1)."""

    frames: list[bytes]
    types: list[int]
    t_us: list[int]
    hello: bytes


def _hello_body(tw: Tower) -> bytes:
    return bytes([1, *tw.fw, 8, 8]) + tw.piezo_rate_hz.to_bytes(2, "little") + \
        tw.load_rate_hz.to_bytes(2, "little") + bytes([tw.adc_bits]) + tw.device_id


def build_messages(sc: Scene, piezo: np.ndarray, load: LoadStream | None) -> Messages:
    """Schedule and encode: PIEZO batches grow when a LOAD read held up the loop."""
    tw = sc.tw
    fs = tw.piezo_rate_hz
    n_sets = piezo.shape[0]
    set_us = 1_000_000 // fs
    read_s = tw.read_ms * 1e-3
    ticks = load.tick_s if load is not None else np.zeros(0)
    starts, sizes, sends = [], [], []
    i = 0
    ti = 0
    while i < n_sets:
        e = i + tw.batch - 1
        if e >= n_sets:
            break
        t_ready = e / fs + 2e-5
        t_send = t_ready
        while ti < len(ticks) and ticks[ti] + read_s < t_ready:
            ti += 1
        if ti < len(ticks) and ticks[ti] <= t_ready:  # the loop is reading the HX711s
            t_send = ticks[ti] + read_s + 2e-5
            e = min(i + 13, n_sets - 1, int(math.floor((t_send - 2e-5) * fs)))
        starts.append(i)
        sizes.append(e - i + 1)
        sends.append(t_send)
        i = e + 1
    keys: list[tuple[float, int, int]] = [(s, 1, j) for j, s in enumerate(sends)]
    if load is not None:
        keys += [(float(t) + read_s, 0, j) for j, t in enumerate(load.tick_s)]
    n_status = int((tw.t0_us / 1e6 + sc.duration) // 1.0)
    status_t = [(k * 1e6 - tw.t0_us) / 1e6 for k in range(1, n_status + 1)]
    keys += [(t, 2, k) for k, t in enumerate(status_t) if 0 < t < sc.duration]
    keys.sort()
    n_msg = len(keys)
    seq_of = {}
    for seq, (_, kind, j) in enumerate(keys, start=1):
        seq_of[(kind, j)] = seq & 0xFFFF
    frames: list[bytes] = [b""] * n_msg
    types = [0] * n_msg
    stamps = [-1] * n_msg
    pos = {(kind, j): p for p, (_, kind, j) in enumerate(keys)}
    # PIEZO, grouped by batch size
    starts_a, sizes_a = np.array(starts), np.array(sizes)
    for n in sorted(set(sizes)):
        idx = np.nonzero(sizes_a == n)[0]
        st = starts_a[idx]
        t_us = (tw.t0_us + st.astype(np.int64) * set_us) % 2**32
        seqs = np.array([seq_of[(1, int(j))] for j in idx])
        samples = piezo[st[:, None] + np.arange(n)[None, :]].reshape(len(idx), n * 8)
        head = np.concatenate([
            np.full((len(idx), 1), TYPE_PIEZO, np.uint8), _le(seqs, 2), _le(t_us, 4),
            np.full((len(idx), 1), n, np.uint8), _le(samples, 2).reshape(len(idx), n * 16),
        ], axis=1)
        enc = _frame_rows(head)
        for r, j in enumerate(idx.tolist()):
            p = pos[(1, j)]
            frames[p], types[p], stamps[p] = enc[r].tobytes(), TYPE_PIEZO, int(t_us[r])
    if load is not None and len(load.tick_s):
        m = len(load.tick_s)
        seqs = np.array([seq_of[(0, j)] for j in range(m)])
        vals = load.values & 0xFFFFFF
        head = np.concatenate([
            np.full((m, 1), TYPE_LOAD, np.uint8), _le(seqs, 2), _le(load.t_us % 2**32, 4),
            load.valid.astype(np.uint8)[:, None], _le(vals, 3).reshape(m, 24)], axis=1)
        enc = _frame_rows(head)
        for j in range(m):
            p = pos[(0, j)]
            frames[p], types[p], stamps[p] = enc[j].tobytes(), TYPE_LOAD, int(load.t_us[j])
    timeouts = np.array(load.timeouts_at if load is not None else [])
    per_s = (fs * 16 + len(sends) / max(sc.duration, 1) * 12
             + (tw.load_rate_hz * 36 if load is not None else 0))
    for k, t in enumerate(status_t):
        if (2, k) not in pos:
            continue
        n_to = int(np.sum(timeouts <= t))
        cpu = int(min(95, 22 + per_s / 2500 + 6 * (tw.load_rate_hz == 80)))
        body = ((k + 1) * 1000).to_bytes(4, "little") + bytes(4) + \
            n_to.to_bytes(2, "little") + bytes([cpu, 0])
        p = pos[(2, k)]
        frames[p], types[p] = frame(TYPE_STATUS, seq_of[(2, k)], body), TYPE_STATUS
    hello = frame(TYPE_HELLO, 0, _hello_body(tw))
    return Messages([hello, *frames], [TYPE_HELLO, *types], [-1, *stamps], hello)


def render(sc: Scene) -> tuple[bytes, dict[str, Any]]:
    """The recording's bytes and its truth."""
    piezo = render_piezo(sc)
    load = render_load(sc) if sc.load_stream else None
    msgs = build_messages(sc, piezo, load)
    return b"".join(msgs.frames), truth_of(sc)


def _r(x: float) -> float:
    return round(float(x), 5)


def truth_of(sc: Scene) -> dict[str, Any]:
    """The ground truth of a scene, as score.py reads it (stream seconds)."""
    strikes = sc.strike_times()
    wear0 = [round(float(sc.wear(lv, 0.0, strikes[lv])), 4) for lv in range(8)]
    wear1 = [round(float(sc.wear(lv, sc.duration, strikes[lv])), 4) for lv in range(8)]
    t_dim = sc.lights_dimmed_at()
    truth: dict[str, Any] = {
        "format": "towerear-crosscheck-truth/1", "model": MODEL, "scenario": sc.scenario,
        "seed": sc.tw.seed, "duration_s": sc.duration, "cells": sc.tw.cells,
        "quiet_until": round(sc.quiet_until, 4),
        "landings": sorted(sc.landings, key=lambda x: x["t"]),
        "knockdowns": sc.knockdowns, "removals": sc.removals, "lifts": sc.lifts,
        "closes": sc.closes, "knocks": sc.knocks, "touches": sc.touches, "noise": sc.noise,
        "fallouts": sc.fallouts, "phones": [{k: v for k, v in p.items() if k != "phase_s"}
                                            for p in sc.phones],
        "cafe": sc.vib,
        "lights": {"dimmed_at": None if t_dim is None else round(max(t_dim, 0.0), 3),
                   "dim_hour": round(sc.tw.dim_hour, 3)},
        "evening": {"start_h": round(sc.hour0, 4), "end_h": round(sc.hour(sc.duration), 4)},
        "wear": {"start": wear0, "end": wear1},
        "groups": [{k: v for k, v in g.items()} for g in sc.groups],
        "load_stream": sc.load_stream,
        "tower": sc.tw.figures(),
    }
    if sc.game is not None:
        truth["game"] = sc.game
        if len(sc.games) > 1:
            truth["games"] = sc.games
    return json.loads(json.dumps(truth))


# -- damage -------------------------------------------------------------------------------


def damage(sc: Scene, msgs: Messages, seed: int) -> tuple[bytes, list[dict[str, Any]]]:
    """A flaky café USB hub: bit-error bursts, lost chunks, half the time a brown-out reboot."""
    rng = np.random.default_rng([seed, 0xDA])
    tw = sc.tw
    frames = list(msgs.frames)
    n = len(frames)
    stamps = np.array(msgs.t_us, np.int64)
    t_s = np.where(stamps >= 0, (stamps - tw.t0_us) / 1e6, np.nan)
    reboot = rng.random() < 0.5
    spans: list[dict[str, Any]] = []
    # slots of the message list for each damage, apart from each other
    n_bits, n_lost = int(rng.integers(2, 5)), int(rng.integers(1, 4))
    n_slots = n_bits + n_lost + (1 if reboot else 0)
    n_ok = int(np.searchsorted(np.nan_to_num(t_s, nan=0.0), sc.duration - 6.0))
    bounds = np.linspace(int(n * 0.15), n_ok, n_slots + 1).astype(int)
    kinds = ["bits"] * n_bits + ["lost"] * n_lost
    rng.shuffle(kinds)
    if reboot:
        kinds.append("reboot")  # the last slot: nothing after it is compared
    hit_msgs: list[tuple[str, int, int]] = []
    cut_msg = 0
    data = bytearray(b"".join(frames))
    offs = np.cumsum([0] + [len(f) for f in frames])
    edits: list[tuple[int, int, str]] = []
    for s, kind in enumerate(kinds):
        a_msg = int(rng.integers(bounds[s] + 2, max(bounds[s] + 3, bounds[s + 1] - 40)))
        if kind == "bits":
            length = int(rng.integers(40, 400))
            b_msg = min(a_msg + length, bounds[s + 1] - 5)
            a, b = int(offs[a_msg]) + int(rng.integers(0, len(frames[a_msg]))), int(offs[b_msg])
            ber = float(rng.uniform(1e-4, 2e-3))
            nflip = max(1, int(rng.binomial((b - a) * 8, ber)))
            pos = np.unique(rng.integers(a * 8, b * 8, nflip))
            for p in pos:
                data[p // 8] ^= 1 << (p % 8)
            bytes_hit = np.unique(pos // 8)
            mi = np.searchsorted(offs, bytes_hit, side="right") - 1
            hit = set(mi.tolist())
            hit |= {int(m) + 1 for m, bh in zip(mi, bytes_hit, strict=True)
                    if bh == offs[m + 1] - 1}
            hit_msgs += [("bits", m, s) for m in sorted(hit)]
        elif kind == "lost":
            length = int(rng.integers(100, 20000))
            a = int(offs[a_msg]) + int(rng.integers(1, len(frames[a_msg])))
            b = min(a + length, int(offs[bounds[s + 1] - 5]))
            edits.append((a, b, "lost"))
            m0 = int(np.searchsorted(offs, a, side="right") - 1)
            m1 = int(np.searchsorted(offs, b, side="right") - 1)
            hit_msgs += [("lost", m, s) for m in range(m0, m1 + 2)]
        else:
            edits.append((int(offs[a_msg]) + int(rng.integers(1, len(frames[a_msg]))), -1,
                          "reboot"))
            cut_msg = a_msg
    for a, b, kind in sorted(edits, reverse=True):
        if kind == "lost":
            del data[a:b]
    # spans from the messages each damage destroyed
    by_slot: dict[int, list[int]] = {}
    kind_of: dict[int, str] = {}
    for kind, m, s in hit_msgs:
        by_slot.setdefault(s, []).append(m)
        kind_of[s] = kind
    for s, ms in sorted(by_slot.items()):
        ts = [t_s[m] for m in ms if m < n and not np.isnan(t_s[m])]
        if ts:
            spans.append({"t_start": round(float(min(ts)) - 0.002, 4),
                          "t_end": round(float(max(ts)) + 0.002, 4), "kind": kind_of[s]})
    if not reboot:
        return bytes(data), spans
    # reboot: the stream stops inside message cut_msg; nothing for 0.6-2.5 s, then the
    # firmware boots again: one 0x00 ends the cut frame, HELLO seq 0, the clock from zero
    cut_at = next(a for a, _b, k in edits if k == "reboot")
    removed_before = sum(b - a for a, b, k in edits if k == "lost" and a < cut_at)
    out = bytearray(data[:cut_at - removed_before])
    before = [m for m in range(cut_msg) if not np.isnan(t_s[m])]
    t_last = float(max(t_s[m] for m in before))
    t_first_target = t_last + float(rng.uniform(0.6, 2.5))
    first = next(m for m in range(cut_msg, n)
                 if msgs.types[m] == TYPE_PIEZO and t_s[m] >= t_first_target)
    t_us_after = int(rng.integers(12_500, 75_000)) * 4
    shift = int(stamps[first]) - t_us_after
    out += b"\x00" + msgs.hello
    seq = 1
    decoded_span = [t_s[m] for m in range(cut_msg, first) if not np.isnan(t_s[m])]
    for m in range(first, n):
        raw = cobs_decode_own(frames[m][:-1])[:-2]
        mtype = raw[0]
        body = bytearray(raw[3:])
        if mtype in (TYPE_PIEZO, TYPE_LOAD):
            body[0:4] = ((int(stamps[m]) - shift) % 2**32).to_bytes(4, "little")
            if mtype == TYPE_LOAD and int(stamps[m]) - shift < t_us_after + 450_000:
                body[4] = 0  # the converters are still settling after power-up
                body[5:] = bytes(24)
        elif mtype == TYPE_STATUS:
            up = int.from_bytes(body[0:4], "little") - shift // 1000
            if up <= 0:
                continue
            body[0:4] = up.to_bytes(4, "little")
            body[4:10] = bytes(6)
        out += frame(mtype, seq, bytes(body))
        seq += 1
    t_first = float(t_s[first])
    spans.append({"t_start": round(min([t_last, *decoded_span]) - 0.002, 4),
                  "t_end": round(t_first, 6), "kind": "reboot",
                  "gap_s": round(t_first - t_last, 6), "t_us_after": t_us_after})
    return bytes(out), spans


# -- files and command line ---------------------------------------------------------------


def make_recording(seed: int, scenario: str, duration: float, out: Path) -> tuple[Path, Path]:
    """Write ``{scenario}_t{seed}.bin`` and ``.truth.json`` (and the damaged twin) to ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    sc = simulate(seed, scenario, duration)
    piezo = render_piezo(sc)
    load = render_load(sc) if sc.load_stream else None
    msgs = build_messages(sc, piezo, load)
    truth = truth_of(sc)
    bin_path = out / f"{scenario}_t{seed}.bin"
    truth_path = out / f"{scenario}_t{seed}.truth.json"
    if scenario == "damaged":
        clean = out / f"damagedclean_t{seed}.bin"
        clean.write_bytes(b"".join(msgs.frames))
        twin = dict(truth, scenario="damagedclean")
        clean.with_suffix(".truth.json").write_text(json.dumps(twin, indent=1))
        raw, spans = damage(sc, msgs, seed)
        truth["damage"] = spans
        bin_path.write_bytes(raw)
    else:
        bin_path.write_bytes(b"".join(msgs.frames))
    truth_path.write_text(json.dumps(truth, indent=1))
    return bin_path, truth_path


def _job(args: tuple[int, str, float, str]) -> str:
    seed, scenario, duration, out = args
    make_recording(seed, scenario, duration, Path(out))
    return f"{scenario}_t{seed}"


def main(argv: list[str] | None = None) -> int:
    """Command line: write the recordings of ``--towers`` towers."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--towers", type=int, default=8)
    p.add_argument("--first-seed", type=int, default=1)
    p.add_argument("--duration", type=float, default=120.0)
    p.add_argument("--scenarios", nargs="+", default=list(DEFAULT_SCENARIOS))
    p.add_argument("--long-duration", type=float, default=1800.0)
    p.add_argument("--workers", type=int, default=1)
    args = p.parse_args(argv)
    bad = [s for s in args.scenarios if s not in SCENARIOS]
    if bad:
        print(f"unknown scenario {bad[0]!r} (known: {', '.join(SCENARIOS)})", file=sys.stderr)
        return 2
    jobs = [(seed, sc, args.long_duration if sc == "long" else args.duration, str(args.out))
            for seed in range(args.first_seed, args.first_seed + args.towers)
            for sc in args.scenarios]
    args.out.mkdir(parents=True, exist_ok=True)
    if args.workers > 1:
        with ProcessPoolExecutor(max_workers=args.workers) as pool:
            for name in pool.map(_job, jobs):
                print(name, file=sys.stderr)
    else:
        for job in jobs:
            print(_job(job), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
