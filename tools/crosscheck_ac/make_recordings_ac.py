#!/usr/bin/env python3
"""Cross-check model AC: the judges' simulator, written blind from contracts.md and design.md.

An ordinary, careful tower model of the kind a grading team would write:
cubes fall level by level (pass a plate, bounce on it, or stop), plates ring
on their piezo discs and sit on bar load cells read by free-running HX711s,
the ATmega scans its eight ADC inputs one after the other, and rooms, players
and games vary from tower to tower. Writes ``{scenario}_t{seed}.bin`` (the
device's bytes, contracts.md section 1) and ``{scenario}_t{seed}.truth.json``
(``towerear-crosscheck-truth/1``, as tools/crosscheck/score.py reads it).

Usage::

    .venv/bin/python tools/crosscheck_ac/make_recordings_ac.py --out DIR \
        [--towers 8] [--first-seed 1] [--duration 120] [--scenarios single rapid noisy game] \
        [--workers 2]
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
import numpy.typing as npt
from scipy import signal

SCENARIOS = ("single", "rapid", "noisy", "game")
FS = 2000  # piezo sample sets a second
SETS_PER_MSG = 8  # sample sets in one PIEZO message (4 ms)
N_CH = 8
ADC_BITS = 10
# one conversion at a 250 kHz ADC clock (13 clocks): channel k is sampled k * 52 us late
ADC_CONV_S = 52e-6
QUIET_S = 4.0  # nothing happens before this stream time (the detector tares on it)
G = 9.81
COLOURS = ("yellow", "blue", "brown", "gray", "black", "white")
FW = (1, 3, 0)

F64 = npt.NDArray[np.float64]


# -- wire encoder (contracts.md section 1), written from the contract --------------------

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
    """CRC-16/CCITT-FALSE, table driven."""
    crc = 0xFFFF
    for b in data:
        crc = ((crc << 8) & 0xFFFF) ^ CRC_TABLE[((crc >> 8) ^ b) & 0xFF]
    return crc


def crc16_ccitt_false_reference(data: bytes) -> int:
    """CRC-16/CCITT-FALSE bit by bit (poly 0x1021, init 0xFFFF, no reflection, no xorout)."""
    crc = 0xFFFF
    for b in data:
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
            crc &= 0xFFFF
    return crc


def crc16_rows(rows: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint32]:
    """The CRC of every row of an (N, L) byte array."""
    crc = np.full(rows.shape[0], 0xFFFF, dtype=np.uint32)
    for j in range(rows.shape[1]):
        crc = ((crc << 8) & 0xFFFF) ^ CRC_TABLE_NP[((crc >> 8) ^ rows[:, j]) & 0xFF]
    return crc


def cobs_encode(data: bytes) -> bytes:
    """COBS encoding of ``data`` (no trailing delimiter)."""
    out = bytearray()
    block = bytearray()
    for b in data:
        if b == 0:
            out.append(len(block) + 1)
            out += block
            block = bytearray()
        else:
            block.append(b)
            if len(block) == 254:
                out.append(255)
                out += block
                block = bytearray()
    out.append(len(block) + 1)
    out += block
    return bytes(out)


def cobs_decode_own(enc: bytes) -> bytes:
    """Our own COBS decoder (for the tests' round trip)."""
    out = bytearray()
    i = 0
    while i < len(enc):
        code = enc[i]
        if code == 0:
            raise ValueError("zero in COBS data")
        out += enc[i + 1:i + code]
        i += code
        if code < 255 and i < len(enc):
            out.append(0)
    return bytes(out)


def cobs_encode_rows(rows: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint8]:
    """COBS of every row of an (N, L) array, L <= 253, each followed by the 0x00 delimiter."""
    n, length = rows.shape
    assert length <= 253
    ext = np.zeros((n, length + 1), dtype=np.int64)
    ext[:, :length] = rows
    pos = np.where(ext == 0, np.arange(length + 1), length + 1)
    nxt = np.minimum.accumulate(pos[:, ::-1], axis=1)[:, ::-1]  # first zero at or after j
    out = np.zeros((n, length + 2), dtype=np.uint8)
    out[:, 0] = nxt[:, 0] + 1
    body = ext[:, :length].copy()
    zero = body == 0
    dist = nxt[:, 1:] - np.arange(length)
    body[zero] = dist[zero]
    out[:, 1:length + 1] = body
    return out


def frame(msg_type: int, seq: int, body: bytes) -> bytes:
    """One framed message: COBS(type | seq | body | crc) + 0x00."""
    msg = bytes([msg_type]) + (seq & 0xFFFF).to_bytes(2, "little") + body
    msg += crc16_ccitt_false(msg).to_bytes(2, "little")
    return cobs_encode(msg) + b"\x00"


def _framed_rows(head: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint8]:
    crc = crc16_rows(head)
    full = np.concatenate([head, (crc & 0xFF).astype(np.uint8)[:, None],
                           (crc >> 8).astype(np.uint8)[:, None]], axis=1)
    return cobs_encode_rows(full)


# -- the tower kit -----------------------------------------------------------------------

@dataclass
class Tower:
    """One built tower: kit tolerances, cells, converters, discs, ADC."""

    seed: int
    cells: str  # "matched" or "mixed"
    cell_capacity_g: F64
    offset: F64  # counts of the empty plate
    cpg: F64  # counts per gram
    load_noise: F64  # counts rms a reading (converter)
    mech_noise_g: F64  # grams rms a reading (plate, room)
    chip_rate: F64  # HX711 conversions a second (own oscillators)
    chip_phase: F64
    plate_fn: F64  # plate-on-cell resonance, Hz
    plate_zeta: F64
    plate_mass_g: F64
    creep: F64  # fraction of a load step that creeps in (cell and card)
    creep_tau_s: float
    drift_g_per_s: F64
    warm_g: F64
    warm_tau_s: float
    piezo_bias: F64
    piezo_gain: F64  # LSB of the first swing for a 1 m/s impact on the own plate
    piezo_noise: F64  # LSB rms
    polarity: F64
    mode_f: F64  # (8, 3) Hz
    mode_tau: F64  # (8, 3) s
    mode_a: F64  # (8, 3)
    xtalk_down: float  # coupling to the level below
    xtalk_up: float
    xtalk2: float  # two levels away, relative to one level
    xtalk_delay_s: float
    mux_carry: float  # ADC sample-and-hold carry-over from the channel scanned before
    dnl_edges: F64  # ADC transition levels
    module_h_m: float
    cube_mass_g: float
    cube_side_m: float
    restitution: float
    straight: F64  # chance a falling cube drops through hole L without landing on plate L
    stop: F64  # chance a cube that lands on plate L stays there
    knock_p: float  # chance per resting cube (up to 3) that a landing cube knocks one down
    mains_hz: float
    hum_lsb: F64
    device_id: bytes
    t0_us: int  # device clock at the first piezo set


def make_tower(seed: int) -> Tower:
    """The tower of ``seed``: the same for every scenario of that seed."""
    rng = np.random.default_rng(np.random.SeedSequence([seed, 0xAC0]))
    cells = "matched" if rng.random() < 0.5 else "mixed"
    if cells == "matched":
        cap = np.full(N_CH, 100.0)
        mv_per_v = 1.0 * (1 + rng.normal(0, 0.02, N_CH))
    else:
        cap = rng.choice([100.0, 100.0, 200.0, 300.0], N_CH)
        mv_per_v = rng.uniform(0.85, 1.15, N_CH)
    excitation = 4.3 * (1 + rng.normal(0, 0.015, N_CH))  # E+ of each breakout
    # gain 128, full scale +-0.5 * AVDD / 128 over +-2^23 counts
    counts_per_v = 2 ** 23 / (0.5 * excitation / 128)
    volts_per_g = mv_per_v * 1e-3 * excitation / cap
    cpg = counts_per_v * volts_per_g
    plate_g = rng.uniform(7.0, 14.0, N_CH)
    zero_balance_v = rng.normal(0, 0.08e-3, N_CH) * excitation
    offset = zero_balance_v * counts_per_v + plate_g * cpg
    noise_nv = rng.uniform(70, 160, N_CH)
    mode_f1 = rng.uniform(160, 420, N_CH)
    mode_f = np.stack([mode_f1, mode_f1 * rng.uniform(2.0, 2.8, N_CH),
                       mode_f1 * rng.uniform(3.6, 5.5, N_CH)], axis=1)
    tau1 = rng.uniform(0.005, 0.014, N_CH)
    mode_tau = np.stack([tau1, tau1 * rng.uniform(0.4, 0.7, N_CH),
                         tau1 * rng.uniform(0.2, 0.4, N_CH)], axis=1)
    mode_a = np.stack([np.ones(N_CH), rng.uniform(0.4, 0.9, N_CH),
                       rng.uniform(0.2, 0.6, N_CH)], axis=1)
    edges = np.arange(1, 2 ** ADC_BITS) - 0.5 + rng.normal(0, 0.12, 2 ** ADC_BITS - 1)
    hum_base = rng.uniform(0.15, 0.8)
    return Tower(
        seed=seed, cells=cells, cell_capacity_g=cap, offset=offset, cpg=cpg,
        load_noise=noise_nv * 1e-9 * counts_per_v,
        mech_noise_g=rng.uniform(0.0008, 0.0025, N_CH),
        chip_rate=80.0 * (1 + rng.normal(0, 0.012, N_CH)),
        chip_phase=-rng.uniform(0.3, 0.6, N_CH),
        plate_fn=rng.uniform(45, 110, N_CH), plate_zeta=rng.uniform(0.06, 0.2, N_CH),
        plate_mass_g=plate_g, creep=rng.uniform(0.001, 0.004, N_CH),
        creep_tau_s=float(rng.uniform(15, 40)),
        drift_g_per_s=rng.normal(0, 0.004, N_CH) / 60,
        warm_g=rng.normal(0, 0.006, N_CH), warm_tau_s=float(rng.uniform(40, 120)),
        piezo_bias=2 ** (ADC_BITS - 1) + rng.normal(0, 3.0, N_CH),
        piezo_gain=rng.uniform(90, 220, N_CH), piezo_noise=rng.uniform(0.35, 0.8, N_CH),
        polarity=rng.choice([-1.0, 1.0], N_CH), mode_f=mode_f, mode_tau=mode_tau, mode_a=mode_a,
        xtalk_down=float(rng.uniform(0.14, 0.32)), xtalk_up=float(rng.uniform(0.1, 0.25)),
        xtalk2=float(rng.uniform(0.3, 0.6)), xtalk_delay_s=float(rng.uniform(0.1e-3, 0.4e-3)),
        mux_carry=float(rng.uniform(0.01, 0.04)), dnl_edges=np.sort(edges),
        module_h_m=float(rng.uniform(0.029, 0.033)), cube_mass_g=float(rng.uniform(0.3, 0.8)),
        cube_side_m=float(rng.uniform(0.008, 0.010)), restitution=float(rng.uniform(0.25, 0.45)),
        straight=np.concatenate([[0.0], rng.uniform(0.08, 0.3, N_CH - 1)]),
        stop=np.concatenate([[1.0], [0.55, 0.32, 0.28, 0.26, 0.24, 0.22, 0.2]
                             * rng.uniform(0.75, 1.25, N_CH - 1)]),
        knock_p=float(rng.uniform(0.008, 0.02)), mains_hz=50.0 if rng.random() < 0.85 else 60.0,
        hum_lsb=hum_base * rng.uniform(0.6, 1.4, N_CH) * (1 + 0.08 * np.arange(N_CH)),
        device_id=bytes(rng.integers(0, 256, 8, dtype=np.uint8)),
        t0_us=int(150_000 + 500 * rng.integers(0, 500)),
    )


# -- the scene: what happens, as physical events ----------------------------------------

@dataclass
class Cube:
    """One wooden cube."""

    colour: str
    mass_g: float
    level: int = -1
    t_rest: float = 0.0


@dataclass
class Impact:
    """One contact that rings the piezos: on plate ``level`` at ``t`` with speed ``v``."""

    t: float
    level: int
    v: float
    kind: str  # plate, cube, edge, rim, rock, thump, table


@dataclass
class Scene:
    """Everything that happened in one recording, physical and for the truth."""

    tw: Tower
    duration: float
    rng: np.random.Generator
    scenario: str = ""
    impacts: list[Impact] = field(default_factory=list)
    impulses: list[tuple[float, int, float]] = field(default_factory=list)  # t, ch, gram*s
    weights: list[tuple[float, int, float]] = field(default_factory=list)  # t, ch, +-grams
    presses: list[tuple[float, float, int, float]] = field(default_factory=list)  # t0,t1,ch,g
    rustles: list[tuple[float, float, F64]] = field(default_factory=list)  # t0, t1, LSB/ch
    talks: list[tuple[float, float, float]] = field(default_factory=list)  # t0, t1, LSB
    lifted: list[tuple[float, float, int]] = field(default_factory=list)  # t_lift, t_close, k
    hum_gain: float = 1.0
    tower: list[list[Cube]] = field(default_factory=lambda: [[] for _ in range(N_CH)])
    landings: list[dict[str, Any]] = field(default_factory=list)
    knockdowns: list[dict[str, Any]] = field(default_factory=list)
    removals: list[dict[str, Any]] = field(default_factory=list)
    lifts: list[dict[str, Any]] = field(default_factory=list)
    closes: list[dict[str, Any]] = field(default_factory=list)
    knocks: list[dict[str, Any]] = field(default_factory=list)
    fell_out: list[dict[str, Any]] = field(default_factory=list)
    game_log: list[dict[str, Any]] = field(default_factory=list)

    def new_cube(self, colour: str) -> Cube:
        return Cube(colour, self.tw.cube_mass_g * float(1 + self.rng.normal(0, 0.04)))


@dataclass
class Style:
    """How one player throws: release height above the entry and downward toss speed."""

    height_m: float
    toss_ms: float


def make_style(rng: np.random.Generator) -> Style:
    return Style(float(rng.uniform(0.01, 0.08)), float(rng.uniform(0.0, 0.5)))


def _fall(v0: float, h: float) -> tuple[float, float]:
    """Time to fall ``h`` from downward speed ``v0``, and the speed then."""
    v = math.sqrt(v0 * v0 + 2 * G * h)
    return (v - v0) / G, v


@dataclass
class Outcome:
    """A simulated cube descent, not yet committed to the scene."""

    impacts: list[Impact]
    impulses: list[tuple[float, int, float]]
    weights: list[tuple[float, int, float]]
    rustles: list[tuple[float, float, F64]]
    landings: list[dict[str, Any]]
    knockdowns: list[dict[str, Any]]
    moves: list[tuple[Cube, int, int, float]]  # cube, from level (-1: hand), to level, t_rest
    t_end: float


def _descend(sc: Scene, cube: Cube, t0: float, v0: float, h: float, level: int,
             out: Outcome, may_knock: bool, knocked_from: int | None) -> None:
    """A cube falling from rest/toss at ``t0`` a height ``h`` onto plate ``level`` and on down."""
    tw, rng = sc.tw, sc.rng
    m_kg = cube.mass_g * 1e-3
    dt, v = _fall(v0, h)
    t = t0 + dt
    first = out.impacts[-1].t if knocked_from is None and out.impacts else None
    knocked = None
    while True:
        e = float(np.clip(tw.restitution + rng.normal(0, 0.05), 0.1, 0.6))
        if level > 0 and rng.random() < tw.straight[level]:
            if rng.random() < 0.5:  # grazes the hole's edge
                out.impacts.append(Impact(t, level, v * rng.uniform(0.1, 0.3), "edge"))
                out.impulses.append((t, level, m_kg * v * 0.2 / G))
                first = t if first is None else first
            dt, v = _fall(v * rng.uniform(0.8, 0.95), tw.module_h_m)
            t += dt
            level -= 1
            continue
        resting = [c for c in sc.tower[level] if c.t_rest < t - 0.05]
        on_cube = bool(resting) and rng.random() < min(0.6, 0.12 * len(resting))
        out.impacts.append(Impact(t, level, v, "cube" if on_cube else "plate"))
        out.impulses.append((t, level, m_kg * v * (1 + e) / G * 1000))
        first = t if first is None else first
        if (may_knock and knocked is None and resting and level > 0
                and rng.random() < tw.knock_p * min(len(resting), 3) * min(v, 1.5)):
            knocked = resting[int(rng.integers(len(resting)))]
            t_k = t + float(rng.uniform(0.01, 0.04))
            out.weights.append((t_k, level, -knocked.mass_g))
            out.moves.append((knocked, level, -2, t_k))
            sub = Outcome([], [], [], [], [], [], [], 0.0)
            _descend(sc, knocked, t_k, float(rng.uniform(0.05, 0.3)), tw.module_h_m, level - 1,
                     sub, False, level)
            out.impacts += sub.impacts
            out.impulses += sub.impulses
            out.weights += sub.weights
            out.rustles += sub.rustles
            out.landings += sub.landings
            out.moves += sub.moves
            out.knockdowns.append({"t": round(t_k, 4), "floor_from": level,
                                   "floor_to": sub.landings[-1]["floor"],
                                   "colour": knocked.colour})
        pile = 1 + 0.12 * len(resting)
        if level == 0 or rng.random() < min(0.95, tw.stop[level] * pile * rng.uniform(0.7, 1.3)):
            break
        # passes: maybe one small bounce, slides or tips into the hole
        t_on = t
        if rng.random() < 0.5:
            t_on += 2 * e * v / G
            out.impacts.append(Impact(t_on, level, e * v, "plate"))
            out.impulses.append((t_on, level, m_kg * e * v * (1 + e) / G * 1000))
        t_leave = t_on + float(rng.uniform(0.04, 0.25))
        out.weights.append((t_on, level, cube.mass_g))
        out.weights.append((t_leave, level, -cube.mass_g))
        out.impacts.append(Impact(t_leave, level, float(rng.uniform(0.08, 0.2)), "edge"))
        dt, v = _fall(float(rng.uniform(0.05, 0.25)), tw.module_h_m)
        t = t_leave + dt
        level -= 1
    # comes to rest on ``level``: bounces, rocking, maybe a short slide
    t_last = t
    vb = v * e
    for _ in range(5):
        if vb < 0.06:
            break
        t_last += 2 * vb / G
        out.impacts.append(Impact(t_last, level, vb, "plate"))
        out.impulses.append((t_last, level, m_kg * vb * (1 + e) / G * 1000))
        vb *= e
    out.weights.append((t_last, level, cube.mass_g))
    gap = float(rng.uniform(0.02, 0.05))
    vr = max(vb, 0.05) * rng.uniform(0.5, 1.0)
    for _ in range(int(rng.integers(0, 4))):
        t_last += gap
        out.impacts.append(Impact(t_last, level, vr, "rock"))
        gap *= 0.7
        vr *= 0.6
    if rng.random() < 0.4:
        t_slide = float(rng.uniform(0.02, 0.08))
        amp = np.zeros(N_CH)
        amp[level] = rng.uniform(1.0, 3.0) * tw.piezo_gain[level] / 150
        out.rustles.append((t_last, t_last + t_slide, amp))
        t_last += t_slide
    t_rest = t_last + float(rng.uniform(0.01, 0.03))
    assert first is not None
    rec: dict[str, Any] = {
        "t": round(t_rest, 4), "t_first_impact": round(first, 4), "floor": level, "cubes": 1,
        "knocked": knocked_from is not None, "colour": cube.colour,
        "mass_g": round(cube.mass_g, 4),
    }
    if knocked_from is not None:
        rec["knocked_from"] = knocked_from
    elif knocked is not None:
        rec["caused_knockdown"] = True
    out.landings.append(rec)
    out.moves.append((cube, -1, level, t_rest))
    out.t_end = max(out.t_end, t_rest)


def throw(sc: Scene, colour: str, t_release: float, style: Style,
          cube: Cube | None = None) -> float | None:
    """Throw a cube into the shaft; returns its resting time, or None if it would not settle
    before the end of the recording (then nothing happens)."""
    rng, tw = sc.rng, sc.tw
    cube = cube or sc.new_cube(colour)
    h = style.height_m * rng.uniform(0.7, 1.3)
    v0 = style.toss_ms * rng.uniform(0.6, 1.3)
    out = Outcome([], [], [], [], [], [], [], 0.0)
    if rng.random() < 0.35:  # touches the entry's rim on the top roof
        dt, v = _fall(v0, h)
        out.impacts.append(Impact(t_release + dt, 8, v * rng.uniform(0.2, 0.4), "rim"))
        _descend(sc, cube, t_release + dt, v * rng.uniform(0.5, 0.8),
                 tw.module_h_m - tw.cube_side_m, 7, out, True, None)
    else:
        _descend(sc, cube, t_release, v0, h + tw.module_h_m - tw.cube_side_m, 7, out, True,
                 None)
    if out.t_end > sc.duration - 1.0:
        return None
    sc.impacts += out.impacts
    sc.impulses += out.impulses
    sc.weights += out.weights
    sc.rustles += out.rustles
    for rec in out.landings:
        rec["t_release"] = round(t_release, 4)
    sc.landings += out.landings
    sc.knockdowns += out.knockdowns
    for c, src, dst, t in out.moves:
        if dst == -2:
            sc.tower[src].remove(c)
        else:
            c.level, c.t_rest = dst, t
            sc.tower[dst].append(c)
    return out.t_end


# -- hands, rooms, tables ---------------------------------------------------------------

def table_knock(sc: Scene, t: float) -> None:
    rng, tw = sc.rng, sc.tw
    n = 2 if rng.random() < 0.3 else 1
    tt = t
    for _ in range(n):
        strength = float(rng.uniform(0.15, 1.0))
        sc.impacts.append(Impact(tt, 0, strength, "table"))
        dv = 0.02 * strength
        for ch in range(N_CH):
            sc.impulses.append((tt, ch, tw.plate_mass_g[ch] * dv * 0.85 ** ch / G))
        tt += float(rng.uniform(0.15, 0.3))
    sc.knocks.append({"t": round(t, 4), "t_end": round(tt, 4), "kind": "table"})


def touch(sc: Scene, t: float) -> None:
    """A hand resting on or steadying the tower."""
    rng = sc.rng
    dur = float(rng.uniform(0.5, 1.8))
    top = int(rng.integers(3, N_CH))
    amp = np.array([rng.uniform(1.0, 4.0) * 0.75 ** abs(top - ch) for ch in range(N_CH)])
    sc.rustles.append((t, t + dur, amp))
    sc.impacts.append(Impact(t, top, float(rng.uniform(0.05, 0.15)), "edge"))
    for ch in range(N_CH):
        sc.presses.append((t, t + dur, ch, float(rng.normal(0, 0.03))))
    sc.knocks.append({"t": round(t, 4), "t_end": round(t + dur, 4), "kind": "touch"})


def talk(sc: Scene, t: float, dur: float, loud: float) -> None:
    sc.talks.append((t, t + dur, loud))


# -- scenarios -------------------------------------------------------------------------

def _players(rng: np.random.Generator) -> list[tuple[str, Style]]:
    n = int(rng.integers(3, 6))
    cols = [str(c) for c in rng.permutation(COLOURS)[:n]]
    return [(c, make_style(rng)) for c in cols]


def run_single(sc: Scene) -> None:
    rng = sc.rng
    players = _players(rng)
    t = QUIET_S + float(rng.uniform(0.5, 2.0))
    i = 0
    while t < sc.duration - 2.0:
        colour, style = players[i % len(players)]
        rest = throw(sc, colour, t, style)
        if rest is None:
            break
        i += 1
        t = rest + float(rng.uniform(1.8, 5.0))


def run_rapid(sc: Scene) -> None:
    rng = sc.rng
    players = _players(rng)
    t = QUIET_S + float(rng.uniform(0.5, 2.0))
    i = 0
    while t < sc.duration - 2.0:
        colour, style = players[i % len(players)]
        last = t
        for _ in range(int(rng.integers(3, 7))):
            rest = throw(sc, colour, t, style)
            if rest is None:
                break
            last = max(last, rest)
            t += float(rng.uniform(0.3, 0.8))
        i += 1
        t = last + float(rng.uniform(2.5, 6.0))


def run_noisy(sc: Scene) -> None:
    rng = sc.rng
    sc.hum_gain = float(rng.uniform(2.0, 4.0))
    run_single(sc)
    t = QUIET_S + float(rng.uniform(1.0, 6.0))
    while t < sc.duration - 2.0:  # table knocks: cups, knuckles, elbows
        table_knock(sc, t)
        t += float(rng.uniform(6.0, 14.0))
    t = QUIET_S + float(rng.uniform(3.0, 12.0))
    while t < sc.duration - 3.0:
        touch(sc, t)
        t += float(rng.uniform(12.0, 25.0))
    t = float(rng.uniform(0.0, 3.0))
    while t < sc.duration:  # people talking at the table
        dur = float(rng.uniform(0.8, 4.0))
        talk(sc, t, dur, float(rng.uniform(0.5, 3.0)))
        t += dur + float(rng.uniform(0.3, 3.0))


@dataclass
class Game:
    """The state of a Mord im Arosa game (the rules engine of the simulator)."""

    players: list[str]
    styles: dict[str, Style]
    supply: dict[str, int]
    sheet: dict[str, list[int]]
    scenes: list[int] = field(default_factory=list)
    victims_found: int = 0
    act: int = 1
    turn: int = 0
    over: bool = False


def _handling_noise(sc: Scene, t0: float, t1: float, chans: range, lo: float, hi: float) -> None:
    amp = np.zeros(N_CH)
    for ch in chans:
        amp[ch] = sc.rng.uniform(lo, hi)
    sc.rustles.append((t0, t1, amp))


def _open_look_close(sc: Scene, g: Game, who: str, k: int, t: float) -> tuple[float, list[Cube]]:
    """Lift modules k..7, take every cube off level k, close. Returns (time closed, cubes)."""
    rng, tw = sc.rng, sc.tw
    t_lift = t + float(rng.uniform(0.6, 1.2))
    _handling_noise(sc, t, t_lift + 0.3, range(N_CH), 0.8, 3.0)
    for ch in range(N_CH):
        sc.presses.append((t, t_lift + 0.2, ch, float(rng.normal(0, 0.04))))
    sc.lifts.append({"t": round(t_lift, 4), "exposed": k, "by": who})
    for ch in range(k + 1, N_CH):
        sc.impacts.append(Impact(t_lift, ch, float(rng.uniform(0.02, 0.05)), "edge"))
    t_now = t_lift + float(rng.uniform(1.0, 2.5))
    in_hand: list[Cube] = []
    lifted = [c for lv in range(k + 1, N_CH) for c in sc.tower[lv]]
    if lifted and rng.random() < 0.04:  # a clue falls out of the lifted stack onto the table
        c = lifted[int(rng.integers(len(lifted)))]
        t_f = t_lift + float(rng.uniform(0.2, 1.0))
        sc.tower[c.level].remove(c)
        sc.weights.append((t_f, c.level, -c.mass_g))
        sc.fell_out.append({"t": round(t_f, 4), "floor_from": c.level, "colour": c.colour})
        in_hand.append(c)
    here = sorted(sc.tower[k], key=lambda c: c.colour != "red")  # victims first
    reds = [c for c in here if c.colour == "red"]
    clues = [c for c in here if c.colour != "red"]
    groups: list[list[Cube]] = []
    if reds:
        groups.append(reds)
    i = 0
    while i < len(clues):
        n = int(rng.integers(1, 4))
        groups.append(clues[i:i + n])
        i += n
    hand_lo = range(0, k + 1)
    for grp in groups:
        t_press = t_now
        t_r = t_press + float(rng.uniform(0.3, 0.7))
        sc.presses.append((t_press, t_r, k, float(rng.uniform(0.5, 6.0))))
        _handling_noise(sc, t_press, t_r + 0.1, range(k, k + 1), 2.0, 8.0)
        sc.impacts.append(Impact(t_r - 0.02, k, float(rng.uniform(0.03, 0.08)), "cube"))
        for c in grp:
            sc.tower[k].remove(c)
            sc.weights.append((t_r, k, -c.mass_g))
        sc.removals.append({"t": round(t_r, 4), "floor": k, "cubes": len(grp),
                            "colours": [c.colour for c in grp],
                            "mass_g": round(sum(c.mass_g for c in grp), 4)})
        if grp is not reds:
            in_hand += grp
        t_now = t_r + float(rng.uniform(1.2, 2.2))
    t_close = t_now + float(rng.uniform(0.0, 0.8))
    _handling_noise(sc, t_lift, t_close + 0.2, hand_lo, 0.3, 1.5)
    for ch in hand_lo:
        sc.presses.append((t_lift, t_close, ch, float(rng.normal(0, 0.05))))
    sc.lifted.append((t_lift, t_close, k))
    sc.closes.append({"t": round(t_close, 4), "exposed": k})
    sc.impacts.append(Impact(t_close, k, float(rng.uniform(0.15, 0.5)), "thump"))
    for ch in range(k + 1):
        sc.impulses.append((t_close, ch, tw.plate_mass_g[ch] * rng.uniform(0.01, 0.04) / G))
    return t_close, in_hand + reds


def run_game(sc: Scene) -> None:
    """A game of Mord im Arosa as its rules go, until the recording ends."""
    rng = sc.rng
    ps = _players(rng)
    g = Game([c for c, _ in ps], dict(ps), {c: 20 for c, _ in ps},
             {c: [0] * N_CH for c, _ in ps})
    t = QUIET_S + float(rng.uniform(0.5, 2.0))
    end = sc.duration

    def throw_one(colour: str, by: str, t: float, cube: Cube | None = None) -> float | None:
        talk(sc, t - 0.6, 0.4, float(rng.uniform(0.3, 1.2)))  # naming the colour
        rest = throw(sc, colour, t, g.styles[by], cube)
        if rest is None:
            g.over = True
            return None
        sc.game_log.append({"do": "throw", "color": colour, "floor": sc.landings[-1]["floor"]})
        return rest

    # prologue: both victims, then two clues each, in turn
    order = [("red", g.players[0])] * 2 + [(p, p) for p in g.players for _ in range(2)]
    for colour, by in order:
        if colour != "red":
            g.supply[colour] -= 1
        rest = throw_one(colour, by, t)
        if rest is None:
            return
        t = rest + float(rng.uniform(1.2, 3.5))
    while not g.over:
        who = g.players[g.turn % len(g.players)]
        others = [p for p in g.players if p != who]
        if g.act == 1:
            red_floors = [lv for lv in range(N_CH) if any(c.colour == "red" for c in sc.tower[lv])]
            open_floors = [lv for lv in range(N_CH) if lv not in g.scenes]
            k = (int(rng.choice(red_floors)) if red_floors and rng.random() < 0.5
                 else int(rng.choice(open_floors)))
            action = "inspect"
        else:
            own_on_sheet = sum(g.sheet[who])
            action = "cover" if own_on_sheet and rng.random() < 0.35 else "suspect"
            suspects = [str(s) for s in rng.permutation(others)[:int(rng.integers(1, 3))]]
            mine = [lv for lv in range(N_CH) if any(c.colour == who for c in sc.tower[lv])]
            theirs = [lv for lv in range(N_CH)
                      if any(c.colour in suspects for c in sc.tower[lv])]
            pool = mine if action == "cover" else theirs
            k = (int(rng.choice(pool)) if pool and rng.random() < 0.6
                 else int(rng.integers(0, N_CH)))
        if t + 9.0 + 3.2 * len(sc.tower[k]) > end - 1.0:
            return
        here = list(sc.tower[k])
        t_closed, in_hand = _open_look_close(sc, g, who, k, t + float(rng.uniform(1.0, 2.5)))
        penalties = 0
        if action == "inspect":
            reds = [c for c in here if c.colour == "red"]
            if reds:
                g.scenes.append(k)
                g.victims_found += len(reds)
                for p in others:
                    n = min(sum(c.colour == p for c in here), g.supply[p])
                    g.sheet[p][k] += n
                    g.supply[p] -= n
            else:
                penalties = 1
        elif action == "suspect":
            own_here = sum(c.colour == who for c in here)
            if k == 0 and own_here == 0:
                penalties = len(suspects)
            else:
                for s in suspects:
                    n = sum(c.colour == s for c in here)
                    if n:
                        n = min(n, g.supply[s])
                        g.sheet[s][k] += n
                        g.supply[s] -= n
                    else:
                        penalties += 1
        else:
            own_here = sum(c.colour == who for c in here)
            back = min(own_here, g.sheet[who][k])
            g.sheet[who][k] -= back
            g.supply[who] += back
            penalties = 0 if own_here else 1
        sc.game_log.append({"do": action, "by": who, "floor": k,
                            **({"suspects": suspects} if action == "suspect" else {})})
        if any(sum(v) >= 10 for v in g.sheet.values()) or min(g.supply.values()) <= 0:
            g.over = True
            break
        t = t_closed + float(rng.uniform(1.5, 3.0))
        for c in [c for c in in_hand if c.colour != "red"]:
            rest = throw_one(c.colour, who, t, c)
            if rest is None:
                return
            t = rest + float(rng.uniform(1.0, 2.5))
        for _ in range(min(penalties, g.supply[who])):
            g.supply[who] -= 1
            rest = throw_one(who, who, t)
            if rest is None:
                return
            t = rest + float(rng.uniform(1.0, 2.5))
        if min(g.supply.values()) <= 0:
            break
        if g.act == 1 and g.victims_found >= 2:
            g.act = 2
        g.turn += 1
        t += float(rng.uniform(1.5, 4.0))


RUNNERS = {"single": run_single, "rapid": run_rapid, "noisy": run_noisy, "game": run_game}


def simulate(seed: int, scenario: str, duration: float) -> Scene:
    """The physical events of one recording."""
    tw = make_tower(seed)
    rng = np.random.default_rng(np.random.SeedSequence([seed, SCENARIOS.index(scenario), 0xAC]))
    sc = Scene(tw, duration, rng, scenario)
    RUNNERS[scenario](sc)
    return sc


# -- sensors -----------------------------------------------------------------------------

def _connected(sc: Scene, n: int) -> npt.NDArray[np.bool_]:
    """(n, 8): is each channel's module on the tower at each sample set."""
    conn = np.ones((n, N_CH), dtype=bool)
    for t_lift, t_close, k in sc.lifted:
        i0, i1 = int(t_lift * FS), int(t_close * FS)
        conn[i0:i1, k + 1:] = False
    return conn


def _ring(buf: F64, tw: Tower, ch: int, t0: float, amp: float, click: float,
          slow: tuple[float, float] | None, rng: np.random.Generator) -> None:
    off = ch * ADC_CONV_S
    n_total = buf.shape[0]
    tau_max = float(tw.mode_tau[ch].max()) if slow is None else max(slow[1],
                                                                     float(tw.mode_tau[ch, 0]))
    i0 = max(int(math.ceil((t0 - off) * FS)), 0)
    i1 = min(int((t0 - off + 6 * tau_max) * FS) + 2, n_total)
    if i1 <= i0:
        return
    tt = np.arange(i0, i1) / FS + off - t0
    y = np.zeros(i1 - i0)
    exc = rng.uniform(0.7, 1.3, 3) * rng.choice([-1.0, 1.0], 3)
    exc[0] = abs(exc[0])
    for j in range(3):
        y += tw.mode_a[ch, j] * exc[j] * np.exp(-tt / tw.mode_tau[ch, j]) \
            * np.sin(2 * np.pi * tw.mode_f[ch, j] * tt)
    if slow is not None:
        y += 1.5 * np.exp(-tt / slow[1]) * np.sin(2 * np.pi * slow[0] * tt)
    if click:
        w = float(rng.uniform(0.4e-3, 1.0e-3))
        y += np.where(tt < w, click * np.sin(np.pi * np.clip(tt / w, 0, 1)), 0.0)
    buf[i0:i1, ch] += tw.polarity[ch] * amp / float(tw.mode_a[ch].sum()) * 1.6 * y


def render_piezo(sc: Scene, n: int) -> npt.NDArray[np.uint16]:
    """The ADC codes of every sample set, (n, 8)."""
    tw = sc.tw
    rng = np.random.default_rng(np.random.SeedSequence([tw.seed, int(sc.rng.integers(1 << 30)), 1]))
    buf = np.zeros((n, N_CH))
    conn = _connected(sc, n)
    for im in sc.impacts:
        if im.kind == "table":
            slow = (float(rng.uniform(60, 120)), float(rng.uniform(0.02, 0.04)))
            a0 = im.v * rng.uniform(25, 180) / 1.0
            for ch in range(N_CH):
                _ring(buf, tw, ch, im.t + ch * 0.0002, a0 * 0.78 ** ch * tw.piezo_gain[ch] / 150,
                      0.3, slow, rng)
            continue
        if im.kind == "thump":
            slow = (float(rng.uniform(50, 110)), float(rng.uniform(0.015, 0.03)))
            for ch in range(N_CH):
                a = im.v * 250 * 0.6 ** abs(ch - im.level) * tw.piezo_gain[ch] / 150
                _ring(buf, tw, ch, im.t + abs(ch - im.level) * tw.xtalk_delay_s, a, 0.4, slow, rng)
            continue
        src = im.level
        factor = {"plate": 1.0, "cube": 0.55, "edge": 0.5, "rim": 0.5, "rock": 0.8}[im.kind]
        base = factor * (im.v ** 1.1)
        if src == 8:  # the top roof has no disc: heard through the walls of module 7
            gains = {7: 0.45, 6: 0.45 * tw.xtalk_down}
        else:
            gains = {src: 1.0}
            for d in (1, 2):
                if src - d >= 0:
                    gains[src - d] = tw.xtalk_down * (1.0 if d == 1 else tw.xtalk2 * tw.xtalk_down)
                if src + d < N_CH:
                    gains[src + d] = tw.xtalk_up * (1.0 if d == 1 else tw.xtalk2 * tw.xtalk_up)
        for ch, gain in gains.items():
            direct = ch == src
            d = abs(ch - min(src, 7))
            _ring(buf, tw, ch, im.t + d * tw.xtalk_delay_s,
                  base * gain * tw.piezo_gain[ch] * rng.uniform(0.8, 1.2),
                  float(rng.uniform(0.4, 1.0)) * (1.6 if im.kind == "cube" else 1.0)
                  if direct else 0.0, None, rng)
    # contacts breaking and making: a charge kick on the lifted channels
    for t_lift, t_close, k in sc.lifted:
        for ch in range(k + 1, N_CH):
            for tk in (t_lift, t_close):
                i = int(tk * FS)
                if i < n:
                    j = np.arange(i, min(i + 40, n))
                    buf[j, ch] += rng.uniform(-60, 60) * np.exp(-(j - i) / FS / 0.003)
    # handling: broadband rustle, a little smoothed
    for t0, t1, amp in sc.rustles:
        i0, i1 = max(int(t0 * FS), 0), min(int(t1 * FS), n)
        if i1 - i0 < 4:
            continue
        m = i1 - i0
        env = np.ones(m)
        r = min(m // 3, int(0.05 * FS))
        if r > 1:
            env[:r] = np.linspace(0, 1, r)
            env[-r:] = np.linspace(1, 0, r)
        wn = rng.normal(0, 1, (m, N_CH))
        wn = signal.lfilter([0.5, 0.5], [1.0, -0.3], wn, axis=0)
        buf[i0:i1] += wn * env[:, None] * amp[None, :]
    # talking: voice, band-limited, the same sound on every disc
    if sc.talks:
        sos = signal.butter(2, [150, 900], btype="bandpass", fs=FS, output="sos")
        chg = rng.uniform(0.5, 1.2, N_CH)
        for t0, t1, loud in sc.talks:
            i0, i1 = max(int(t0 * FS), 0), min(int(t1 * FS), n)
            if i1 - i0 < 20:
                continue
            m = i1 - i0
            voice = signal.sosfilt(sos, rng.normal(0, 1, m))
            tt = np.arange(m) / FS
            syl = np.abs(np.sin(np.pi * tt * rng.uniform(4.0, 6.0) + rng.uniform(0, 3)))
            env = syl ** 1.5 * np.minimum(1, np.minimum(tt, tt[::-1]) / 0.05)
            buf[i0:i1] += (loud * 2.2 * voice * env)[:, None] * chg[None, :]
    # mains hum (more on a channel whose disc is off: only the bias network is left)
    tt = np.arange(n) / FS
    wob = 1 + 0.15 * np.sin(2 * np.pi * tt / rng.uniform(5, 15) + rng.uniform(0, 6))
    for ch in range(N_CH):
        ph = rng.uniform(0, 2 * np.pi)
        w = 2 * np.pi * tw.mains_hz * (tt + ch * ADC_CONV_S)
        hum = tw.hum_lsb[ch] * sc.hum_gain * wob * (np.sin(w + ph) + 0.3 * np.sin(3 * w + 2 * ph))
        hum = np.where(conn[:, ch], hum, 2.5 * hum)
        buf[:, ch] += hum + rng.normal(0, tw.piezo_noise[ch], n)
    # room rumble, very low and mostly removed by the AC coupling
    rumble = signal.lfilter([0.02], [1, -0.98], rng.normal(0, 1, n))
    buf += rumble[:, None] * rng.uniform(0.3, 0.8, N_CH)[None, :]
    # sample-and-hold carry-over from the channel converted just before
    flat = buf.reshape(-1)
    prev = np.concatenate([[0.0], flat[:-1]])
    flat += tw.mux_carry * prev
    volts = buf.reshape(n, N_CH) + tw.piezo_bias[None, :]
    codes = np.searchsorted(tw.dnl_edges, volts)
    return np.clip(codes, 0, 2 ** ADC_BITS - 1).astype(np.uint16)


@dataclass
class LoadStream:
    """What the firmware read off the HX711s."""

    t: F64  # stream time of each LOAD
    valid: npt.NDArray[np.int64]
    values: npt.NDArray[np.int64]  # (M, 8)
    timeouts_at: list[float]


def render_load(sc: Scene, n: int) -> LoadStream:
    tw = sc.tw
    rng = np.random.default_rng(np.random.SeedSequence([tw.seed, int(sc.rng.integers(1 << 30)), 2]))
    dt = 1.0 / FS
    force = np.zeros((n + 1, N_CH))
    steps = np.zeros((n + 1, N_CH))
    for t, ch, dg in sc.weights:
        i = int(math.ceil(t * FS))
        if i <= n:
            steps[i, ch] += dg
    static = np.cumsum(steps, axis=0)
    a = math.exp(-dt / tw.creep_tau_s)
    crept = signal.lfilter([1 - a], [1, -a], static, axis=0)
    force += static + crept * tw.creep[None, :]
    for t, ch, gs in sc.impulses:
        i = int(round(t * FS))
        if 0 <= i <= n:
            force[i, ch] += gs / dt
    for t0, t1, ch, g in sc.presses:
        i0, i1 = max(int(t0 * FS), 0), min(int(t1 * FS), n)
        if i1 - i0 < 4:
            continue
        m = i1 - i0
        rise = min(int(0.12 * FS), m // 2)
        env = np.ones(m)
        env[:rise] = 0.5 - 0.5 * np.cos(np.linspace(0, np.pi, rise))
        env[-rise:] = env[:rise][::-1]
        tremor = 1 + 0.15 * signal.lfilter([0.05], [1, -0.95], rng.normal(0, 1, m))
        force[i0:i1, ch] += g * env * tremor
    for ch in range(N_CH):  # the plate on its cell: a damped resonator, DC gain 1
        w = 2 * np.pi * tw.plate_fn[ch]
        z = tw.plate_zeta[ch]
        r = math.exp(-z * w * dt)
        th = w * math.sqrt(1 - z * z) * dt
        a1, a2 = -2 * r * math.cos(th), r * r
        force[:, ch] = signal.lfilter([1 + a1 + a2], [1, a1, a2], force[:, ch])
    cum = np.concatenate([np.zeros((1, N_CH)), np.cumsum(force, axis=0) * dt])
    t_cum = np.arange(n + 2) * dt
    # connection intervals per channel; each reconnect powers the chip up again
    off: list[list[tuple[float, float]]] = [[] for _ in range(N_CH)]
    for t_lift, t_close, k in sc.lifted:
        for ch in range(k + 1, N_CH):
            off[ch].append((t_lift + float(rng.uniform(0, 0.006)),
                            t_close + float(rng.uniform(0, 0.008))))
    period = [float(x) for x in 1.0 / tw.chip_rate]
    settle = [4 * x for x in period]  # HX711 output settling after power-up

    def state(ch: int, t: float) -> tuple[bool, float]:
        """(present, phase of its conversions) at ``t``."""
        ph = float(tw.chip_phase[ch])
        for a0, b0 in off[ch]:
            if a0 <= t < b0:
                return False, ph
            if t >= b0:
                ph = b0
        return t >= ph + settle[ch], ph

    times: list[float] = []
    valid: list[int] = []
    conv: list[list[float]] = [[] for _ in range(N_CH)]  # time of the conversion read
    row_of: list[list[int]] = [[] for _ in range(N_CH)]
    timeouts: list[float] = []
    end = n / FS
    r_t = 0.03 + float(rng.uniform(0, 0.01))
    while r_t < end:
        mask = 0
        nxt = -1.0
        present = []
        for ch in range(N_CH):
            ok, ph = state(ch, r_t)
            if not ok:
                continue
            mask |= 1 << ch
            j = math.floor((r_t - ph) / period[ch])
            conv[ch].append(ph + j * period[ch])
            row_of[ch].append(len(times))
            present.append(ch)
            nxt = max(nxt, ph + (j + 1) * period[ch])
        times.append(r_t)
        valid.append(mask)
        if not present:
            r_t += 0.0125
            continue
        gone = [ch for ch in present if not state(ch, nxt)[0]]
        if gone:  # the firmware waits for a chip that went away, then drops it
            nxt = r_t + 1.5 * max(period)
            timeouts += [nxt] * len(gone)
        r_t = nxt + float(rng.uniform(0.0, 0.0004))
    values = np.zeros((len(times), N_CH), np.int64)
    for ch in range(N_CH):
        tc = np.array(conv[ch])
        if not len(tc):
            continue
        c1 = np.interp(tc, t_cum, cum[:, ch])
        c0 = np.interp(np.maximum(tc - period[ch], 0.0), t_cum, cum[:, ch])
        grams = (c1 - c0) / period[ch]
        wander = signal.lfilter([0.25], [1, -0.97], rng.normal(0, tw.mech_noise_g[ch], len(tc)))
        grams += (tw.drift_g_per_s[ch] * tc + tw.warm_g[ch] * (1 - np.exp(-tc / tw.warm_tau_s))
                  + wander + rng.normal(0, tw.mech_noise_g[ch], len(tc)))
        counts = tw.offset[ch] + tw.cpg[ch] * grams + rng.normal(0, tw.load_noise[ch], len(tc))
        values[row_of[ch], ch] = np.clip(np.round(counts), -2 ** 23, 2 ** 23 - 1).astype(np.int64)
    return LoadStream(np.array(times), np.array(valid, np.int64), values, timeouts)


# -- bytes -------------------------------------------------------------------------------

def render(sc: Scene) -> tuple[bytes, dict[str, Any]]:
    """The recording's bytes and its truth."""
    tw = sc.tw
    n_msgs = int(sc.duration * FS) // SETS_PER_MSG
    n = n_msgs * SETS_PER_MSG
    codes = render_piezo(sc, n)
    load = render_load(sc, n)
    rng = np.random.default_rng(np.random.SeedSequence([tw.seed, 3]))
    t0 = tw.t0_us
    # every message: (emit time us, type, index)
    pz_t = t0 + np.arange(n_msgs, dtype=np.int64) * SETS_PER_MSG * 500
    pz_emit = pz_t + SETS_PER_MSG * 500 + 120
    ld_t = t0 + (np.round(load.t * 1e6 / 4).astype(np.int64) * 4)
    ld_emit = ld_t + 300
    st_emit = np.arange(1, int(t0 / 1e6 + sc.duration) + 2, dtype=np.int64) * 1_000_000 + 40
    st_emit = st_emit[st_emit < pz_emit[-1]]
    emit = np.concatenate([[0], pz_emit, ld_emit, st_emit])
    kind = np.concatenate([[1], np.full(n_msgs, 2), np.full(len(ld_t), 3),
                           np.full(len(st_emit), 4)])
    idx = np.concatenate([[0], np.arange(n_msgs), np.arange(len(ld_t)),
                          np.arange(len(st_emit))])
    order = np.lexsort((kind, emit))
    seq = np.empty(len(order), np.int64)
    seq[order] = np.arange(len(order)) & 0xFFFF
    seq_of = {k: seq[kind == k] for k in (1, 2, 3, 4)}
    # PIEZO rows
    head = np.zeros((n_msgs, 3 + 5 + SETS_PER_MSG * N_CH * 2), np.uint8)
    head[:, 0] = 2
    head[:, 1:3] = seq_of[2].astype("<u2").view(np.uint8).reshape(-1, 2)
    head[:, 3:7] = (pz_t & 0xFFFFFFFF).astype("<u4").view(np.uint8).reshape(-1, 4)
    head[:, 7] = SETS_PER_MSG
    head[:, 8:] = codes.reshape(n_msgs, SETS_PER_MSG * N_CH).astype("<u2").view(
        np.uint8).reshape(n_msgs, -1)
    pz_rows = _framed_rows(head)
    # LOAD rows
    m = len(ld_t)
    head = np.zeros((m, 3 + 5 + 3 * N_CH), np.uint8)
    head[:, 0] = 3
    head[:, 1:3] = seq_of[3].astype("<u2").view(np.uint8).reshape(-1, 2)
    head[:, 3:7] = (ld_t & 0xFFFFFFFF).astype("<u4").view(np.uint8).reshape(-1, 4)
    head[:, 7] = load.valid
    s24 = (load.values & 0xFFFFFF).astype("<u4").view(np.uint8).reshape(m, N_CH, 4)[:, :, :3]
    head[:, 8:] = s24.reshape(m, -1)
    ld_rows = _framed_rows(head)
    # STATUS and HELLO, one by one
    hello = bytes([1, *FW, N_CH, N_CH]) + FS.to_bytes(2, "little") \
        + int(round(float(tw.chip_rate.min()))).to_bytes(2, "little") + bytes([ADC_BITS]) \
        + tw.device_id
    timeouts_us = np.sort(t0 + np.array(load.timeouts_at) * 1e6) if load.timeouts_at \
        else np.zeros(0)
    st_frames = []
    for i, e in enumerate(st_emit):
        body = (int(e // 1000) & 0xFFFFFFFF).to_bytes(4, "little") + bytes(4) \
            + int(np.searchsorted(timeouts_us, e)).to_bytes(2, "little") \
            + bytes([int(rng.integers(38, 56)), 0])
        st_frames.append(frame(4, int(seq_of[4][i]), body))
    parts: dict[int, Any] = {1: [frame(1, int(seq_of[1][0]), hello)], 2: pz_rows,
                             3: ld_rows, 4: st_frames}
    raw = b"".join(bytes(parts[int(kind[o])][int(idx[o])]) for o in order)
    truth = make_truth(sc, load)
    return raw, truth


def make_truth(sc: Scene, load: LoadStream) -> dict[str, Any]:
    tw = sc.tw
    return {
        "format": "towerear-crosscheck-truth/1",
        "model": "AC",
        "scenario": sc.scenario,
        "seed": tw.seed,
        "duration_s": sc.duration,
        "cells": tw.cells,
        "landings": sorted(sc.landings, key=lambda x: x["t"]),
        "knockdowns": sc.knockdowns,
        "removals": sc.removals,
        "lifts": sc.lifts,
        "closes": sc.closes,
        "knocks": sorted(sc.knocks, key=lambda x: x["t"]),
        "fell_out": sc.fell_out,
        "damage": [],
        "game": sc.game_log,
        "tower": {
            "cube_mass_g": round(tw.cube_mass_g, 4),
            "cell_capacity_g": tw.cell_capacity_g.tolist(),
            "counts_per_g": [round(float(x), 2) for x in tw.cpg],
            "offset_counts": [round(float(x), 1) for x in tw.offset],
            "chip_rate_hz": [round(float(x), 3) for x in tw.chip_rate],
            "load_timeouts": len(load.timeouts_at),
            "sets_per_msg": SETS_PER_MSG,
            "mains_hz": tw.mains_hz,
            "restitution": round(tw.restitution, 3),
        },
    }


def generate(seed: int, scenario: str, duration: float) -> tuple[bytes, dict[str, Any]]:
    """Bytes and truth of one recording."""
    return render(simulate(seed, scenario, duration))


def make_recording(seed: int, scenario: str, duration: float, out: Path) -> tuple[Path, Path]:
    """Write ``{scenario}_t{seed}.bin`` and ``.truth.json`` into ``out``."""
    raw, truth = generate(seed, scenario, duration)
    out.mkdir(parents=True, exist_ok=True)
    bin_path = out / f"{scenario}_t{seed}.bin"
    truth_path = out / f"{scenario}_t{seed}.truth.json"
    bin_path.write_bytes(raw)
    truth_path.write_text(json.dumps(truth, indent=1))
    return bin_path, truth_path


def _job(args: tuple[int, str, float, str]) -> str:
    seed, scenario, duration, out = args
    make_recording(seed, scenario, duration, Path(out))
    return f"{scenario}_t{seed}"


def main(argv: list[str] | None = None) -> int:
    """Command line."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--towers", type=int, default=8)
    p.add_argument("--first-seed", type=int, default=1)
    p.add_argument("--duration", type=float, default=120.0)
    p.add_argument("--scenarios", nargs="+", default=list(SCENARIOS))
    p.add_argument("--workers", type=int, default=2)
    args = p.parse_args(argv)
    unknown = [s for s in args.scenarios if s not in SCENARIOS]
    if unknown:
        print(f"unknown scenario {unknown[0]!r} (known: {', '.join(SCENARIOS)})",
              file=sys.stderr)
        return 2
    if args.duration < QUIET_S + 6:
        print(f"--duration must be at least {QUIET_S + 6:.0f} s", file=sys.stderr)
        return 2
    jobs = [(seed, sc, args.duration, str(args.out)) for seed in
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
