#!/usr/bin/env python3
"""Blind cross-check model AD: a second grading team's tower, from first principles.

Writes recordings of a simulated Mord im Arosa tower (the device's bytes, as
contracts.md defines them) and a ground-truth JSON beside each, for
``tools/crosscheck/score.py``. Written from contracts.md, design.md and the
rules alone; see README.md in this folder for every figure and why.

Usage::

    .venv/bin/python tools/crosscheck_ad/make_recordings_ad.py --out DIR --towers 8 \
        --first-seed 1 --duration 120 [--scenarios single rapid noisy game] [--workers 2]
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

MODEL = "AD"
SCENARIOS = ("single", "rapid", "noisy", "game")
FS = 2000  # piezo sets a second (device clock)
N_CH = 8
ADC_BITS = 10
SETS_PER_MSG = 10  # sample sets in one PIEZO message (5 ms)
QUIET_S = 5.0  # the empty, untouched tower at the start
END_GUARD_S = 3.0  # nothing is thrown later than this before the end
G = 9.81
HOLE_HALF = (0.0120, 0.0110)  # half-width of the plate holes, level 1 and level 7 (m)
MISALIGN = (0.004, 0.008)  # how far each hole sits off the tower axis (m)
TOP_HOLE = (0.008, 0.010)  # half-width of the entry hole in the top roof (m)
COLOURS = ("yellow", "blue", "brown", "gray", "black", "white")

FloatArray = npt.NDArray[np.float64]

# -- wire: CRC-16/CCITT-FALSE and COBS, written from contracts.md -----------------------


def crc16_ccitt_false_reference(data: bytes) -> int:
    """CRC-16/CCITT-FALSE bit by bit (poly 0x1021, init 0xFFFF, not reflected)."""
    crc = 0xFFFF
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) & 0xFFFF if crc & 0x8000 else (crc << 1) & 0xFFFF
    return crc


def _crc_table() -> list[int]:
    table = []
    for i in range(256):
        crc = i << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) & 0xFFFF if crc & 0x8000 else (crc << 1) & 0xFFFF
        table.append(crc)
    return table


CRC_TABLE = _crc_table()
CRC_TABLE_NP = np.array(CRC_TABLE, np.uint32)


def crc16_ccitt_false(data: bytes) -> int:
    """CRC-16/CCITT-FALSE, table-driven."""
    crc = 0xFFFF
    for byte in data:
        crc = ((crc << 8) & 0xFFFF) ^ CRC_TABLE[((crc >> 8) ^ byte) & 0xFF]
    return crc


def crc16_rows(rows: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint32]:
    """The CRC of every row of a (messages, bytes) array, column by column."""
    crc = np.full(rows.shape[0], 0xFFFF, np.uint32)
    for col in range(rows.shape[1]):
        idx = ((crc >> 8) ^ rows[:, col].astype(np.uint32)) & 0xFF
        crc = ((crc << 8) & 0xFFFF) ^ CRC_TABLE_NP[idx]
    return crc


def cobs_encode(data: bytes) -> bytes:
    """COBS-encode ``data`` (no trailing delimiter)."""
    out = bytearray([0])
    code_at, code = 0, 1
    for byte in data:
        if byte == 0:
            out[code_at] = code
            code_at, code = len(out), 1
            out.append(0)
            continue
        out.append(byte)
        code += 1
        if code == 0xFF:
            out[code_at] = code
            code_at, code = len(out), 1
            out.append(0)
    out[code_at] = code
    return bytes(out)


def cobs_decode_own(enc: bytes) -> bytes:
    """Undo :func:`cobs_encode` (one frame, no delimiter)."""
    out = bytearray()
    i = 0
    while i < len(enc):
        code = enc[i]
        if code == 0:
            raise ValueError("zero inside a COBS frame")
        out += enc[i + 1:i + code]
        i += code
        if code < 0xFF and i < len(enc):
            out.append(0)
    return bytes(out)


def cobs_encode_rows(rows: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint8]:
    """COBS of every row (each at most 253 bytes), each followed by its 0x00 delimiter."""
    n, length = rows.shape
    assert length <= 253
    pos = np.broadcast_to(np.arange(length + 1), (n, length + 1))
    is_zero = np.concatenate([rows == 0, np.ones((n, 1), bool)], axis=1)
    marks = np.where(is_zero, pos, length + 1)
    next_zero = np.minimum.accumulate(marks[:, ::-1], axis=1)[:, ::-1]  # first zero at or after
    out = np.zeros((n, length + 2), np.uint8)
    out[:, 0] = next_zero[:, 0] + 1
    dist = next_zero[:, 1:] - np.arange(length)[None, :]  # from a zero at i to the next
    body = np.where(rows == 0, dist, rows)
    out[:, 1:length + 1] = body.astype(np.uint8)
    return out


def message(msg_type: int, seq: int, body: bytes) -> bytes:
    """``type | seq | body | crc`` before framing."""
    head = bytes([msg_type]) + (seq & 0xFFFF).to_bytes(2, "little") + body
    return head + crc16_ccitt_false(head).to_bytes(2, "little")


def frame(msg_type: int, seq: int, body: bytes) -> bytes:
    """One framed message: COBS and the 0x00 delimiter."""
    return cobs_encode(message(msg_type, seq, body)) + b"\x00"


def _rows_framed(types: int, seqs: npt.NDArray[np.int64],
                 bodies: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint8]:
    n = len(seqs)
    head = np.zeros((n, 3), np.uint8)
    head[:, 0] = types
    head[:, 1] = seqs & 0xFF
    head[:, 2] = (seqs >> 8) & 0xFF
    msg = np.concatenate([head, bodies], axis=1)
    crc = crc16_rows(msg)
    tail = np.stack([crc & 0xFF, crc >> 8], axis=1).astype(np.uint8)
    return cobs_encode_rows(np.concatenate([msg, tail], axis=1))


# -- the kit: one tower a seed ----------------------------------------------------------


@dataclass
class Tower:
    """Every figure of one tower (kit, cells, electronics, room)."""

    seed: int
    cells: str  # "matched" or "mixed"
    # geometry (metres)
    module_h: float
    plate_half: float
    hole_half: FloatArray  # plates 1..7 (index = level); index 0 unused
    hole_centre: FloatArray  # (8, 2)
    top_hole_half: float
    top_centre: FloatArray
    cube_side: float
    cube_density: float  # g/cm^3
    restitution: float
    friction: float
    knock_transfer: float
    # load cells and HX711s
    cpg: FloatArray  # counts per gram
    offset: FloatArray  # counts of the empty plate
    plate_g: FloatArray  # plate tare on the cell
    cell_hz: FloatArray
    cell_zeta: FloatArray
    hx_rate: FloatArray  # conversions a second, each chip (device clock)
    hx_phase: FloatArray
    hx_noise_counts: FloatArray
    warm_g: FloatArray  # zero drift of the warm-up
    warm_tau: FloatArray
    # piezos and ADC
    piezo_bias: FloatArray
    piezo_noise: float
    piezo_gain: FloatArray  # counts per mN s on the own plate
    disc_pos: FloatArray  # (8, 2)
    modes_f: FloatArray  # (8, 3)
    modes_tau: FloatArray
    modes_a: FloatArray
    crosstalk: float
    ghost: float
    hum_hz: float
    hum_lsb: FloatArray
    boot_us: int
    device_id: bytes


def make_tower(seed: int) -> Tower:
    """The tower of ``seed``: the same for all four scenarios."""
    r = np.random.default_rng([seed, 0xAD])
    cells = "mixed" if r.random() < 0.35 else "matched"
    if cells == "matched":
        mv_v = r.uniform(0.85, 1.15) * (1 + r.normal(0, 0.012, N_CH))
    else:
        mv_v = r.uniform(0.6, 1.5, N_CH)
    cpg = mv_v * 1e-3 * 2**24 * 128 / 100.0  # 100 g cell, gain 128: ratiometric
    plate_g = r.uniform(5.0, 12.0, N_CH)
    zero_bal_g = r.uniform(-0.1, 0.1, N_CH) / mv_v * 100.0
    offset = np.round(cpg * (plate_g + zero_bal_g) + r.normal(0, 3000, N_CH))
    hole_half = np.zeros(N_CH)
    hole_half[1:] = np.linspace(HOLE_HALF[0], HOLE_HALF[1], 7) + r.normal(0, 0.0005, 7)
    ang = r.uniform(0, 2 * np.pi, N_CH)
    mis = r.uniform(*MISALIGN, N_CH)
    centre = np.stack([mis * np.cos(ang), mis * np.sin(ang)], axis=1)
    f1 = r.uniform(220, 420, N_CH)
    modes_f = np.stack([f1, f1 * r.uniform(1.6, 2.3, N_CH), f1 * r.uniform(2.8, 4.0, N_CH)], 1)
    q = r.uniform(4, 12, (N_CH, 3))
    modes_tau = q / (np.pi * modes_f)
    modes_a = np.stack([np.ones(N_CH), r.uniform(0.5, 0.9, N_CH), r.uniform(0.2, 0.6, N_CH)], 1)
    base_rate = 80.0 * (1 + r.normal(0, 0.02))
    return Tower(
        seed=seed, cells=cells,
        module_h=r.uniform(0.028, 0.032), plate_half=r.uniform(0.030, 0.037),
        hole_half=hole_half, hole_centre=centre,
        top_hole_half=r.uniform(*TOP_HOLE), top_centre=r.normal(0, 0.002, 2),
        cube_side=r.uniform(0.0085, 0.0100), cube_density=r.uniform(0.55, 0.75),
        restitution=r.uniform(0.30, 0.50), friction=r.uniform(0.35, 0.55),
        knock_transfer=r.uniform(0.6, 1.0),
        cpg=cpg, offset=offset, plate_g=plate_g,
        cell_hz=r.uniform(70, 140, N_CH), cell_zeta=r.uniform(0.10, 0.30, N_CH),
        hx_rate=base_rate * (1 + np.concatenate([[0.0], r.normal(0, 0.008, N_CH - 1)])),
        hx_phase=r.uniform(0, 1, N_CH),
        hx_noise_counts=r.uniform(40, 90, N_CH),
        warm_g=r.normal(0, 0.01, N_CH), warm_tau=r.uniform(60, 300, N_CH),
        piezo_bias=np.round(2 ** (ADC_BITS - 1) * (1 + r.normal(0, 0.006, N_CH))),
        piezo_noise=r.uniform(0.4, 1.1),
        piezo_gain=r.uniform(250, 600, N_CH),
        disc_pos=r.uniform(-0.02, 0.02, (N_CH, 2)),
        modes_f=modes_f, modes_tau=modes_tau, modes_a=modes_a,
        crosstalk=r.uniform(0.10, 0.30), ghost=r.uniform(0.0, 0.025),
        hum_hz=60.0 if r.random() < 0.2 else 50.0, hum_lsb=r.uniform(0.2, 1.5, N_CH),
        boot_us=int(r.integers(40_000, 400_000)),
        device_id=bytes(r.integers(0, 256, 8, dtype=np.uint8)),
    )


# -- the scene: cubes, impacts, weights, hands ------------------------------------------


@dataclass
class Cube:
    """One wooden cube."""

    colour: str
    mass_g: float
    level: int = -1
    pos: FloatArray = field(default_factory=lambda: np.zeros(2))


@dataclass
class Scene:
    """A scenario played on a tower: every physical event, and the truth."""

    tw: Tower
    duration: float
    rng: np.random.Generator
    scenario: str
    impacts: list[tuple[float, int, float, float, float]] = field(default_factory=list)
    # (t, level, impulse mN s, contact s, distance to the disc m); level 8 = top rim
    scrapes: list[tuple[float, float, int, float]] = field(default_factory=list)
    weights: list[tuple[float, int, float]] = field(default_factory=list)  # (t, ch, +-g)
    bumps: list[tuple[float, float, int, float]] = field(default_factory=list)  # load pushes
    rumbles: list[tuple[float, float, float, int]] = field(default_factory=list)
    # (t0, t1, counts, centre level or -1 for all) handling noise on the piezos
    knocks_phys: list[tuple[float, float, float]] = field(default_factory=list)
    lifted: list[tuple[float, float, int]] = field(default_factory=list)  # (t_lift, t_back, k)
    seat_shift: list[tuple[float, int, float]] = field(default_factory=list)
    tower: list[list[Cube]] = field(default_factory=lambda: [[] for _ in range(N_CH)])
    landings: list[dict[str, Any]] = field(default_factory=list)
    knockdowns: list[dict[str, Any]] = field(default_factory=list)
    removals: list[dict[str, Any]] = field(default_factory=list)
    lifts: list[dict[str, Any]] = field(default_factory=list)
    closes: list[dict[str, Any]] = field(default_factory=list)
    knocks: list[dict[str, Any]] = field(default_factory=list)
    touches: list[dict[str, Any]] = field(default_factory=list)
    fell_out: list[dict[str, Any]] = field(default_factory=list)
    fallen: list[Cube] = field(default_factory=list)  # in hand, to be thrown back
    game: dict[str, Any] = field(default_factory=dict)
    talk: list[tuple[float, float, float]] = field(default_factory=list)
    hum_gain: float = 1.0


def new_cube(sc: Scene, colour: str) -> Cube:
    """A cube of the kit: side and density of the kit, each cube a little different."""
    side_cm = sc.tw.cube_side * 100 * (1 + sc.rng.normal(0, 0.015))
    mass = side_cm**3 * sc.tw.cube_density * (1 + sc.rng.normal(0, 0.04))
    return Cube(colour, float(np.clip(mass, 0.3, 0.8)))


def _in_hole(tw: Tower, level: int, p: FloatArray, margin: float = 0.0) -> bool:
    if level == 0:
        return False
    d = np.abs(p - tw.hole_centre[level])
    return bool(np.all(d < tw.hole_half[level] - margin))


def _impact(sc: Scene, t: float, level: int, m_g: float, v: float, p: FloatArray) -> None:
    """A cube strikes plate ``level`` at ``v`` m/s (impulse m v (1 + e))."""
    tw = sc.tw
    j_mns = m_g * v * (1 + tw.restitution)  # g m/s = mN s
    tc = 8e-4 * max(v, 0.05) ** -0.2 * sc.rng.uniform(0.8, 1.2)  # Hertz: tc ~ v^-1/5
    dist = float(np.hypot(*(p - tw.disc_pos[min(level, 7)])))
    sc.impacts.append((t, level, j_mns, tc, dist))


def fall_through(sc: Scene, cube: Cube, t0: float, level: int, p: FloatArray,
                 v_lat: FloatArray, vz: float, *, can_knock: bool,
                 throw: dict[str, Any]) -> tuple[int, float, float, float]:
    """Follow a cube from above plate ``level`` until it rests.

    Returns (level, first impact, rest, its last strike on the resting plate).
    """
    tw, rng = sc.tw, sc.rng
    g_m = G
    t, t_first = t0, -1.0
    while True:
        h = tw.module_h - 0.002
        t_fall = (-vz + math.sqrt(vz * vz + 2 * g_m * h)) / g_m
        t += t_fall
        vz = math.sqrt(vz * vz + 2 * g_m * h)
        p = p + v_lat * t_fall
        p = np.clip(p, -tw.plate_half + tw.cube_side / 2, tw.plate_half - tw.cube_side / 2)
        if _in_hole(tw, level, p, tw.cube_side / 2):
            # clean through; a corner may clip the edge
            if not _in_hole(tw, level, p, tw.cube_side):
                _impact(sc, t, level, cube.mass_g * 0.15, vz, p)
                t_first = t if t_first < 0 else t_first
                v_lat = v_lat * 0.6 + rng.normal(0, 0.04, 2)
            level -= 1
            continue
        # strikes the plate
        t_first = t if t_first < 0 else t_first
        _impact(sc, t, level, cube.mass_g, vz, p)
        t_on = t
        if can_knock and not throw.get("caused_knockdown"):
            _maybe_knock(sc, t, level, p, vz, throw)
        # tumbling turns part of the vertical speed into sideways motion
        ang = rng.uniform(0, 2 * np.pi)
        v_lat = 0.3 * v_lat + vz * rng.uniform(0.1, 0.45) * np.array([np.cos(ang), np.sin(ang)])
        vz_b = vz * tw.restitution
        fell = False
        while vz_b > 0.08:
            t_air = 2 * vz_b / g_m
            steps = np.linspace(0, t_air, 6)[1:]
            for s in steps:
                q = p + v_lat * s
                if _in_hole(tw, level, q, 0.0):
                    p, t = q, t + s
                    fell = True
                    break
            if fell:
                break
            p = p + v_lat * t_air
            t += t_air
            p, v_lat = _walls(sc, t, level, p, v_lat, cube.mass_g)
            _impact(sc, t, level, cube.mass_g, vz_b, p)
            t_on = t
            vz_b *= tw.restitution
            v_lat = v_lat * rng.uniform(0.6, 0.9)
        if not fell:
            speed = float(np.hypot(*v_lat))
            t_slide = speed / (tw.friction * g_m)
            if speed > 1e-4:
                sc.scrapes.append((t, t + t_slide, level, cube.mass_g * speed))
            for s in np.linspace(0, t_slide, 8)[1:]:
                q = p + v_lat * s - 0.5 * tw.friction * g_m * s * s * v_lat / max(speed, 1e-9)
                if _in_hole(tw, level, q, 0.0):
                    p, t = q, t + s
                    fell = True
                    break
            if not fell:
                p = p + v_lat * t_slide / 2
                p = np.clip(p, -tw.plate_half + tw.cube_side / 2, tw.plate_half - tw.cube_side / 2)
                t_rest = t + t_slide + rng.uniform(0.01, 0.05)  # rocks to rest on a face
                cube.level, cube.pos = level, p
                sc.tower[level].append(cube)
                return level, t_first, t_rest, t_on
        # tips over the hole edge into the next module
        level -= 1
        vz = rng.uniform(0.02, 0.15)
        v_lat = v_lat * 0.5


def _walls(sc: Scene, t: float, level: int, p: FloatArray, v: FloatArray,
           m_g: float) -> tuple[FloatArray, FloatArray]:
    lim = sc.tw.plate_half - sc.tw.cube_side / 2
    p, v = p.copy(), v.copy()
    for a in range(2):
        if abs(p[a]) > lim:
            p[a] = math.copysign(lim, p[a])
            _impact(sc, t, level, m_g * 0.3, abs(v[a]), p)
            v[a] = -0.3 * v[a]
    return p, v


def _maybe_knock(sc: Scene, t: float, level: int, p: FloatArray, vz: float,
                 throw: dict[str, Any]) -> None:
    """A strike near a resting cube shoves it; into the hole, it is knocked down."""
    tw, rng = sc.tw, sc.rng
    if level == 0:
        return
    for other in list(sc.tower[level]):
        d = other.pos - p
        dist = float(np.hypot(*d))
        if dist > 1.8 * tw.cube_side or dist < 1e-6:
            continue
        v = vz * tw.knock_transfer * rng.uniform(0.5, 1.0)
        direction = d / dist
        slide = v * v / (2 * tw.friction * G)
        for s in np.linspace(0, slide, 8)[1:]:
            q = other.pos + direction * s
            if _in_hole(tw, level, q, 0.0):
                sc.tower[level].remove(other)
                t_off = t + s / max(v, 1e-3) + rng.uniform(0.01, 0.04)
                sc.weights.append((t_off, level, -other.mass_g))
                sc.knockdowns.append({"t": round(t_off, 4), "floor_from": level})
                lv, t_first, t_rest, t_on = fall_through(
                    sc, other, t_off, level - 1, q, direction * v * 0.5, 0.05,
                    can_knock=False, throw={})
                sc.weights.append((t_on, lv, other.mass_g))
                sc.knockdowns[-1]["floor_to"] = lv
                sc.landings.append({
                    "t": round(t_rest, 4), "t_first_impact": round(t_first, 4),
                    "t_release": round(t_off, 4), "floor": lv, "cubes": 1, "knocked": True,
                    "knocked_from": level, "mass_g": round(other.mass_g, 4),
                    "colour": other.colour, "kind": "knocked"})
                throw["caused_knockdown"] = True
                return
        other.pos = np.clip(other.pos + direction * slide, -tw.plate_half, tw.plate_half)
        return


def throw_cube(sc: Scene, t_release: float, cube: Cube, kind: str) -> float:
    """A player drops ``cube`` into the shaft at ``t_release``; returns its resting time."""
    tw, rng = sc.tw, sc.rng
    h0 = rng.uniform(0.02, 0.08)  # fingers above the roof
    p = tw.top_centre + rng.uniform(-1, 1, 2) * (tw.top_hole_half - tw.cube_side / 2) * 0.9
    vz = math.sqrt(2 * G * h0)
    t = t_release + vz / G
    if rng.random() < 0.25:  # grazes the rim of the roof's hole (felt by level 7)
        _impact(sc, t, 8, cube.mass_g * 0.2, vz, p)
    v_lat = rng.normal(0, 0.06, 2)
    throw: dict[str, Any] = {}
    n_knock = len(sc.knockdowns)
    lv, t_first, t_rest, t_on = fall_through(sc, cube, t, 7, p, v_lat, vz, can_knock=True,
                                             throw=throw)
    sc.weights.append((t_on, lv, cube.mass_g))
    entry = {"t": round(t_rest, 4), "t_first_impact": round(t_first, 4),
             "t_release": round(t_release, 4), "floor": lv, "cubes": 1, "knocked": False,
             "mass_g": round(cube.mass_g, 4), "colour": cube.colour, "kind": kind}
    if len(sc.knockdowns) > n_knock:
        entry["caused_knockdown"] = True
    sc.landings.append(entry)
    if rng.random() < 0.12:  # a finger brushes the top module
        sc.rumbles.append((t_release - 0.15, t_release + 0.05, rng.uniform(3, 15), 7))
    return t_rest


# -- what people do ---------------------------------------------------------------------


def table_knock(sc: Scene, t: float) -> float:
    """Someone knocks on the table: every level shakes, nothing is weighed."""
    dur = sc.rng.uniform(0.1, 0.3)
    sc.knocks_phys.append((t, dur, sc.rng.uniform(0.5, 2.5)))  # peak m/s^2 at the base
    sc.knocks.append({"t": round(t, 4), "t_end": round(t + dur, 4)})
    return t + dur


def touch_tower(sc: Scene, t: float, level: int | None = None) -> float:
    """A hand touches the tower's walls: rumble on the piezos, small pushes on the cells."""
    rng = sc.rng
    dur = rng.uniform(0.3, 1.2)
    lv = int(rng.integers(0, 8)) if level is None else level
    sc.rumbles.append((t, t + dur, rng.uniform(4, 25), lv))
    for ch in range(N_CH):
        sc.bumps.append((t, t + dur, ch, rng.normal(0, 0.03) / (1 + abs(ch - lv))))
    sc.touches.append({"t": round(t, 4), "t_end": round(t + dur, 4), "level": lv})
    return t + dur


def lift_and_look(sc: Scene, t: float, k: int, take: bool = True,
                  keep: tuple[str, ...] = ()) -> tuple[float, list[Cube]]:
    """Lift modules k..7, look, take the cubes of level k out, close. Returns (t_closed, cubes)."""
    rng = sc.rng
    t_grip = t - rng.uniform(0.5, 1.0)
    sc.rumbles.append((t_grip, t + 0.2, rng.uniform(8, 30), -1))
    for ch in range(N_CH):
        sc.bumps.append((t_grip, t + 0.2, ch, rng.normal(0, 0.05)))
    t_lift = t
    sc.lifts.append({"t": round(t_lift, 4), "exposed": k})
    t_look = t_lift + rng.uniform(1.5, 3.5)
    # holding the lower modules while looking
    sc.rumbles.append((t_lift, t_look, rng.uniform(2, 8), k))
    for ch in range(k + 1):
        sc.bumps.append((t_lift, t_look, ch, rng.normal(0, 0.02)))
    # a loose cube may fall out of a lifted module onto the table
    for lv in range(k + 1, N_CH):
        for c in list(sc.tower[lv]):
            if _in_hole(sc.tw, lv, c.pos, -0.003) and rng.random() < 0.25:
                sc.tower[lv].remove(c)
                sc.weights.append((t_lift + 0.3, lv, -c.mass_g))  # unseen: channel is off
                sc.fell_out.append({"t": round(t_lift + 0.3, 4), "floor": lv,
                                    "colour": c.colour})
                c.level = -1
                sc.fallen.append(c)
    taken: list[Cube] = []
    t_cur = t_look
    cubes = [c for c in sc.tower[k]]
    if take and cubes:
        cubes = [cubes[i] for i in rng.permutation(len(cubes))]
        while cubes:
            n = min(len(cubes), int(rng.integers(1, 4)))
            grab, cubes = cubes[:n], cubes[n:]
            t_touch = t_cur
            t_off = t_touch + rng.uniform(0.2, 0.5)
            push = rng.uniform(0.5, 3.0)
            sc.bumps.append((t_touch, t_off, k, push))
            sc.rumbles.append((t_touch, t_off + 0.1, rng.uniform(4, 15), k))
            for c in grab:
                sc.tower[k].remove(c)
                sc.weights.append((t_off, k, -c.mass_g))
                c.level = -1
            sc.removals.append({"t": round(t_off, 4), "floor": k, "cubes": len(grab),
                                "colours": sorted(c.colour for c in grab),
                                "mass_g": round(sum(c.mass_g for c in grab), 4)})
            taken += grab
            t_cur = t_off + rng.uniform(1.2, 2.2)
    t_close = t_cur + rng.uniform(0.3, 1.0)
    sc.lifted.append((t_lift, t_close, k))
    sc.closes.append({"t": round(t_close, 4), "exposed": k})
    # the modules set down: a thump on every plate, the lifted cells re-seat
    sc.impacts.append((t_close, min(k + 1, 7), rng.uniform(1, 3), 3e-3, 0.02))
    for ch in range(N_CH):
        sc.bumps.append((t_close - 0.3, t_close + 0.2, ch, rng.normal(0, 0.05)))
    for ch in range(k + 1, N_CH):
        sc.seat_shift.append((t_close, ch, rng.normal(0, 0.01)))
    sc.rumbles.append((t_close - 0.4, t_close + 0.3, rng.uniform(8, 25), -1))
    return t_close + rng.uniform(0.3, 0.8), taken


def talking(sc: Scene, level: float) -> None:
    """People talk at the table, on and off."""
    t = 0.0
    while t < sc.duration:
        t += sc.rng.uniform(0.5, 6.0)
        d = sc.rng.uniform(0.5, 4.0)
        sc.talk.append((t, min(t + d, sc.duration), level * sc.rng.uniform(0.5, 1.5)))
        t += d


# -- scenarios --------------------------------------------------------------------------


def _throwing(sc: Scene, gap: tuple[float, float], series: tuple[int, int] | None = None,
              pause: tuple[float, float] = (2.0, 5.0), cap: int = 110) -> None:
    rng = sc.rng
    t = QUIET_S + rng.uniform(0.5, 1.5)
    n = 0
    while t < sc.duration - END_GUARD_S and n < cap:
        k = int(rng.integers(series[0], series[1] + 1)) if series else 1
        for _ in range(k):
            if t >= sc.duration - END_GUARD_S or n >= cap:
                break
            throw_cube(sc, t, new_cube(sc, COLOURS[int(rng.integers(0, 6))]), "throw")
            n += 1
            t += rng.uniform(*gap)
        if series:
            t += rng.uniform(*pause)


def scene_single(sc: Scene) -> None:
    """One cube at a time, 3-7 s apart."""
    _throwing(sc, (3.0, 7.0))


def scene_rapid(sc: Scene) -> None:
    """Series of 3-7 cubes thrown 0.3-0.8 s apart."""
    _throwing(sc, (0.3, 0.8), series=(3, 7), pause=(2.5, 6.0))


def scene_noisy(sc: Scene) -> None:
    """Single throws in a noisy room: hum, table knocks, talking, hands on the tower."""
    sc.hum_gain = sc.rng.uniform(3.0, 6.0)
    talking(sc, sc.rng.uniform(1.0, 4.0))
    _throwing(sc, (3.0, 6.0))
    busy = [(x["t_release"] - 0.3, x["t"] + 0.3) for x in sc.landings]
    rng = sc.rng
    t = QUIET_S + 1.0
    while True:
        t += rng.uniform(4.0, 14.0)
        if t > sc.duration - END_GUARD_S:
            break
        if any(a - 1.0 < t < b + 1.0 for a, b in busy):
            continue
        if rng.random() < 0.55:
            end = table_knock(sc, t)
        else:
            end = touch_tower(sc, t)
        busy.append((t, end))


def scene_game(sc: Scene) -> None:
    """A game of Mord im Arosa by the rules, for as long as the recording runs."""
    rng = sc.rng
    sc.hum_gain = rng.uniform(0.8, 1.5)
    talking(sc, rng.uniform(0.5, 2.0))
    n_pl = int(rng.integers(3, 6))
    players = [str(c) for c in rng.permutation(COLOURS)[:n_pl]]
    supply = dict.fromkeys(players, 20)
    sheet = {p: [0] * 8 for p in players}
    log: list[dict[str, Any]] = []
    sc.game = {"players": players, "log": log}
    t = QUIET_S + rng.uniform(0.5, 1.5)
    end = sc.duration - END_GUARD_S

    def throw(colour: str, kind: str, cube: Cube | None = None) -> bool:
        nonlocal t
        if t > end:
            return False
        c = cube if cube is not None else new_cube(sc, colour)
        if cube is None and colour != "red":
            supply[colour] -= 1
        throw_cube(sc, t, c, kind)
        log.append({"do": "throw", "color": colour, "floor": c.level, "t": round(t, 3)})
        t += rng.uniform(1.8, 3.5)
        return True

    # prologue: the victims, then two clues each
    for _ in range(2):
        throw("red", "victim")
    for p in players:
        for _ in range(2):
            throw(p, "prologue")
    victims_found = 0
    crime: list[int] = []
    turn = 0
    act = 1

    def heard(weights_of: list[float]) -> int:
        w = np.array(weights_of) + 0.4
        return int(rng.choice(8, p=w / w.sum()))

    while t < end - 12.0:
        inv = players[turn % n_pl]
        t += rng.uniform(1.0, 4.0)  # thinking, talking
        if t + 7.5 + 2.7 * max(len(lv) for lv in sc.tower) > end:
            break  # the recording ends before this turn could
        if act == 1:
            f = heard([len(sc.tower[lv]) for lv in range(8)])
            on = [c.colour for c in sc.tower[f]]
            t_closed, taken = lift_and_look(sc, t, f)
            t = t_closed
            reds = [c for c in taken if c.colour == "red"]
            clues = [c for c in taken if c.colour != "red"]
            log.append({"do": "inspect", "by": inv, "floor": f, "found": on})
            if reds:
                victims_found += len(reds)
                crime.append(f)
                for p in players:
                    if p != inv:
                        n = min(sum(c.colour == p for c in clues), supply[p])
                        sheet[p][f] += n
                        supply[p] -= n
            for c in clues:
                if not throw(c.colour, "throwback", c):
                    break
            if not reds and supply[inv] > 0:
                throw(inv, "penalty")
            if victims_found >= 2:
                act = 2
        else:
            own_on_sheet = sum(sheet[inv])
            if own_on_sheet and rng.random() < 0.35:
                f = heard([sheet[inv][lv] + 0.5 * len(sc.tower[lv]) for lv in range(8)])
                n_own = sum(c.colour == inv for c in sc.tower[f])
                t_closed, taken = lift_and_look(sc, t, f)
                t = t_closed
                back = min(n_own, sheet[inv][f])
                sheet[inv][f] -= back
                supply[inv] += back
                log.append({"do": "cover", "by": inv, "floor": f, "remove": back})
                for c in taken:
                    if not throw(c.colour, "throwback", c):
                        break
                if n_own == 0 and supply[inv] > 0:
                    throw(inv, "penalty")
            else:
                others = [p for p in players if p != inv]
                k = min(len(others), int(rng.integers(1, 3)))
                suspects = [str(s) for s in rng.choice(others, k, replace=False)]
                f = heard([sum(c.colour in suspects for c in sc.tower[lv]) for lv in range(8)])
                counts = {s: sum(c.colour == s for c in sc.tower[f]) for s in suspects}
                own_ground = sum(c.colour == inv for c in sc.tower[0])
                t_closed, taken = lift_and_look(sc, t, f)
                t = t_closed
                penalties = 0
                if f == 0 and own_ground == 0:
                    penalties = len(suspects)
                else:
                    for s, n in counts.items():
                        if n:
                            n = min(n, supply[s])
                            sheet[s][f] += n
                            supply[s] -= n
                        else:
                            penalties += 1
                log.append({"do": "suspect", "by": inv, "suspects": suspects, "floor": f})
                for c in taken:
                    if not throw(c.colour, "throwback", c):
                        break
                for _ in range(penalties):
                    if supply[inv] > 0:
                        throw(inv, "penalty")
        # cubes that fell out while lifting are thrown back at the end of the turn
        while sc.fallen:
            c = sc.fallen.pop(0)
            throw(c.colour, "fell_out", c)
        if any(sum(s) >= 10 for s in sheet.values()) or min(supply.values()) <= 0:
            log.append({"do": "over"})
            break
        turn += 1
    sc.game.update({"sheet": sheet, "supply": supply, "crime_scenes": sorted(set(crime))})


SCENES = {"single": scene_single, "rapid": scene_rapid, "noisy": scene_noisy,
          "game": scene_game}


def simulate(seed: int, scenario: str, duration: float) -> Scene:
    """Play ``scenario`` on tower ``seed`` (physics and truth, no signals yet)."""
    tw = make_tower(seed)
    sc = Scene(tw, duration, np.random.default_rng([seed, SCENARIOS.index(scenario), 0xAD]),
               scenario)
    SCENES[scenario](sc)
    sc.landings.sort(key=lambda x: x["t"])
    return sc


# -- signals ----------------------------------------------------------------------------


def _half_sine_gain(f: FloatArray, tc: float) -> FloatArray:
    x = 2 * f * tc
    out = np.abs(np.cos(np.pi * f * tc)) / np.maximum(np.abs(1 - x * x), 1e-3)
    return np.where(np.abs(1 - x * x) < 1e-3, np.pi / 4, out)


def render_piezo(sc: Scene) -> npt.NDArray[np.uint16]:
    """The eight ADC channels, (sets, 8) codes."""
    tw, n = sc.tw, int(round(sc.duration * FS))
    rng = np.random.default_rng([tw.seed, SCENARIOS.index(sc.scenario), 0xAD, 1])
    t = np.arange(n) / FS
    skew = np.arange(N_CH) * 52e-6  # one conversion of the multiplexed ADC each
    x = rng.normal(0, tw.piezo_noise, (n, N_CH))
    for ch in range(N_CH):
        tc = t + skew[ch]
        ph = rng.uniform(0, 2 * np.pi)
        x[:, ch] += tw.hum_lsb[ch] * sc.hum_gain * (np.sin(2 * np.pi * tw.hum_hz * tc + ph)
                                                    + 0.3 * np.sin(6 * np.pi * tw.hum_hz * tc))
    # impacts: the struck plate rings; neighbours through the cardboard
    for (ti, lv, j, tc_s, dist) in sc.impacts:
        own = min(lv, 7)
        for ch in range(N_CH):
            hops = abs(ch - own) + (1 if lv == 8 else 0)
            if hops > 4:
                continue
            c = tw.crosstalk**hops * tw.piezo_gain[ch] * j
            if hops == 0:
                c /= 1 + dist / 0.06
            i0 = int(np.ceil((ti - skew[ch]) * FS))
            i1 = min(n, i0 + int(6 * tw.modes_tau[ch].max() * FS) + 2)
            if i0 >= n or i1 <= max(i0, 0):
                continue
            i0 = max(i0, 0)
            dt = t[i0:i1] + skew[ch] - ti - 2e-4 * hops
            dt = np.maximum(dt, 0)
            amp = tw.modes_a[ch] * _half_sine_gain(tw.modes_f[ch], tc_s)
            wave = np.zeros(i1 - i0)
            for m in range(3):
                wave += amp[m] * np.exp(-dt / tw.modes_tau[ch, m]) * np.sin(
                    2 * np.pi * tw.modes_f[ch, m] * dt)
            x[i0:i1, ch] += c * wave / 1.6
    # sliding cubes scrape their plate
    for t0, t1, lv, strength in sc.scrapes:
        i0, i1 = int(t0 * FS), min(n, int(t1 * FS) + 1)
        if i1 > i0:
            x[i0:i1, lv] += rng.normal(0, 1, i1 - i0) * min(8.0, 60 * strength)
    # hands: low rumble and taps
    b_low, a_low = signal.butter(2, [15, 120], btype="band", fs=FS)
    for t0, t1, counts, lv in sc.rumbles:
        i0, i1 = max(0, int(t0 * FS)), min(n, int(t1 * FS))
        if i1 - i0 < 8:
            continue
        env = np.hanning(i1 - i0)
        base = signal.lfilter(b_low, a_low, rng.normal(0, 1, i1 - i0)) * env
        base *= counts / max(1e-9, float(np.abs(base).max()))
        for ch in range(N_CH):
            gain = 1.0 if lv < 0 else 0.5 ** abs(ch - lv)
            x[i0:i1, ch] += gain * base * rng.uniform(0.7, 1.3)
    # table knocks come up from the base: strongest at level 0
    for t0, dur, acc in sc.knocks_phys:
        i0, i1 = int(t0 * FS), min(n, int((t0 + dur + 0.1) * FS))
        dt = t[i0:i1] - t0
        f0 = rng.uniform(25, 70)
        thump = np.exp(-dt / (dur / 3)) * np.sin(2 * np.pi * f0 * dt)
        for ch in range(N_CH):
            ring = sum(tw.modes_a[ch, m] * np.exp(-dt / tw.modes_tau[ch, m])
                       * np.sin(2 * np.pi * tw.modes_f[ch, m] * dt) for m in range(3))
            x[i0:i1, ch] += acc * (0.8 ** ch) * (60 * thump + 40 * ring)
    # talking: speech-band noise, syllables at 4-6 Hz
    b_sp, a_sp = signal.butter(2, [150, 900], btype="band", fs=FS)
    for t0, t1, lev in sc.talk:
        i0, i1 = int(t0 * FS), min(n, int(t1 * FS))
        if i1 - i0 < 8:
            continue
        sp = signal.lfilter(b_sp, a_sp, rng.normal(0, 1, i1 - i0))
        syl = 0.5 + 0.5 * np.sin(2 * np.pi * rng.uniform(4, 6) * t[i0:i1]) ** 2
        sp *= lev * syl / max(1e-9, float(sp.std()))
        for ch in range(N_CH):
            x[i0:i1, ch] += sp * rng.uniform(0.5, 1.0)
    # the AC coupling (about 5 Hz) takes out what slow drift the events leave
    b_hp, a_hp = signal.butter(1, 5.0, btype="high", fs=FS)
    x = signal.lfilter(b_hp, a_hp, x, axis=0)
    # the sample-and-hold keeps a little of the channel converted before
    ghost = x.copy()
    for ch in range(1, N_CH):
        ghost[:, ch] += tw.ghost * ghost[:, ch - 1]
    codes = np.clip(np.round(ghost + tw.piezo_bias), 0, 2**ADC_BITS - 1)
    return codes.astype(np.uint16)


def render_load(sc: Scene) -> tuple[FloatArray, npt.NDArray[np.int64], npt.NDArray[np.int64],
                                    npt.NDArray[np.int64]]:
    """LOAD messages: (t in stream s, valid bits, (M, 8) counts, load timeouts so far)."""
    tw = sc.tw
    rng = np.random.default_rng([tw.seed, SCENARIOS.index(sc.scenario), 0xAD, 2])
    n = int(round(sc.duration * FS)) + 1
    t = np.arange(n) / FS
    force = np.zeros((n, N_CH))
    for tw_t, ch, g in sc.weights:
        force[min(n - 1, max(0, int(round(tw_t * FS)))):, ch] += g
    for ts, ch, g in sc.seat_shift:
        force[min(n - 1, int(ts * FS)):, ch] += g
    # impacts: impulse over one sample, a little into the neighbours
    for ti, lv, j, _tc, _d in sc.impacts:
        i = int(round(ti * FS))
        if i >= n:
            continue
        jg = j / G  # mN s -> g s
        for ch in range(N_CH):
            hops = abs(ch - min(lv, 7)) + (1 if lv == 8 else 0)
            frac = 1.0 if hops == 0 else 0.3 * tw.crosstalk**hops
            force[i, ch] += jg * frac * FS
    for t0, t1, ch, g in sc.bumps:
        i0, i1 = max(0, int(t0 * FS)), min(n, int(t1 * FS))
        if i1 - i0 > 4:
            force[i0:i1, ch] += g * np.hanning(i1 - i0)
    for t0, dur, acc in sc.knocks_phys:
        i0, i1 = int(t0 * FS), min(n, int((t0 + dur + 0.2) * FS))
        dt = t[i0:i1] - t0
        a = acc * np.exp(-dt / (dur / 3)) * np.sin(2 * np.pi * rng.uniform(25, 70) * dt)
        for ch in range(N_CH):
            force[i0:i1, ch] -= (tw.plate_g[ch] + 2.0) * a / G * 0.9**ch
    # plate on the bar cell: a damped spring
    defl = np.empty_like(force)
    for ch in range(N_CH):
        w = 2 * np.pi * tw.cell_hz[ch]
        b, a = signal.bilinear([w * w], [1, 2 * tw.cell_zeta[ch] * w, w * w], fs=FS)
        zi = signal.lfilter_zi(b, a) * force[0, ch]
        defl[:, ch] = signal.lfilter(b, a, force[:, ch], zi=zi)[0]
    # warm-up drift and a slow random walk of the zero
    walk = np.cumsum(rng.normal(0, 0.0004 / np.sqrt(FS), (n, N_CH)), axis=0)
    defl += tw.warm_g * (1 - np.exp(-t[:, None] / tw.warm_tau)) + walk
    csum = np.concatenate([np.zeros((1, N_CH)), np.cumsum(defl, axis=0)])
    # each HX711 converts on its own clock; the firmware reads when chip 0 is ready
    ends = []
    outs = []
    weights = np.array([0.15, 0.35, 0.35, 0.15])  # four conversions to settle (50 ms)
    for ch in range(N_CH):
        period = 1 / tw.hx_rate[ch]
        te = np.arange(tw.hx_phase[ch] * period + period, sc.duration, period)
        i1 = np.clip(np.round(te * FS).astype(int), 1, n)
        i0 = np.clip(np.round((te - period) * FS).astype(int), 0, n - 1)
        avg = (csum[i1, ch] - csum[i0, ch]) / np.maximum(i1 - i0, 1)
        sett = np.convolve(avg, weights)[: len(avg)]
        sett[:3] = avg[:3]
        counts = tw.offset[ch] + tw.cpg[ch] * sett + rng.normal(0, tw.hx_noise_counts[ch],
                                                                  len(avg))
        ends.append(te)
        outs.append(np.round(counts).astype(np.int64))
    t_read = ends[0] + 100e-6
    keep = t_read > 0.006  # the first PIEZO message goes out first
    t_read = t_read[keep]
    m = len(t_read)
    vals = np.zeros((m, N_CH), np.int64)
    valid = np.zeros(m, np.int64)
    missed = np.zeros(m, np.int64)
    for ch in range(N_CH):
        idx = np.searchsorted(ends[ch], t_read, side="right") - 1
        prev = np.concatenate([[-1], idx[:-1]])
        fresh = (idx >= 0) & (idx != prev)
        connected = np.ones(m, bool)
        for t_l, t_b, k in sc.lifted:
            if ch > k:
                back = t_b + 0.05 + rng.uniform(0.04, 0.1)  # contacts debounced, filter settled
                connected &= ~((t_read >= t_l) & (t_read < back))
        missed += connected & ~fresh
        ok = fresh & connected
        vals[ok, ch] = outs[ch][idx[ok]]
        valid |= ok.astype(np.int64) << ch
    return t_read, valid, vals, np.cumsum(missed)


def _s24(v: npt.NDArray[np.int64]) -> npt.NDArray[np.uint8]:
    u = (v & 0xFFFFFF).astype(np.uint32)
    return np.stack([u & 0xFF, (u >> 8) & 0xFF, (u >> 16) & 0xFF], axis=-1).astype(np.uint8)


def render(sc: Scene) -> tuple[bytes, dict[str, Any]]:
    """The recording's bytes and its truth."""
    tw = sc.tw
    codes = render_piezo(sc)
    t_load, valid, vals, missed = render_load(sc)
    n_msg = len(codes) // SETS_PER_MSG
    t0_us = tw.boot_us
    pz_t = np.arange(n_msg) * SETS_PER_MSG / FS  # stream time of each message's first set
    pz_send = pz_t + SETS_PER_MSG / FS
    st_send = np.arange(1.0, sc.duration + 1e-9, 1.0)
    st_send = st_send[st_send <= pz_send[-1]]
    t_load_keep = t_load <= pz_send[-1]
    t_load, valid, vals = t_load[t_load_keep], valid[t_load_keep], vals[t_load_keep]
    missed = missed[t_load_keep]
    send = np.concatenate([pz_send, t_load, st_send])
    kind = np.concatenate([np.zeros(n_msg, int), np.ones(len(t_load), int),
                           np.full(len(st_send), 2)])
    order = np.lexsort((kind, send))
    seq = np.empty(len(send), np.int64)
    seq[order] = np.arange(1, len(send) + 1)
    # PIEZO
    us = (t0_us + np.round(pz_t * 1e6)).astype(np.int64) & 0xFFFFFFFF
    body = np.zeros((n_msg, 5 + SETS_PER_MSG * N_CH * 2), np.uint8)
    body[:, 0:4] = us.astype("<u4").view(np.uint8).reshape(n_msg, 4)
    body[:, 4] = SETS_PER_MSG
    samp = codes[: n_msg * SETS_PER_MSG].astype("<u2").reshape(n_msg, SETS_PER_MSG * N_CH)
    body[:, 5:] = samp.view(np.uint8).reshape(n_msg, -1)
    pz_rows = _rows_framed(0x02, seq[:n_msg], body)
    # LOAD
    nl = len(t_load)
    lus = (t0_us + np.round(t_load * 1e6)).astype(np.int64) & 0xFFFFFFFF
    lbody = np.zeros((nl, 5 + 3 * N_CH), np.uint8)
    lbody[:, 0:4] = lus.astype("<u4").view(np.uint8).reshape(nl, 4)
    lbody[:, 4] = valid
    lbody[:, 5:] = _s24(vals).reshape(nl, -1)
    ld_rows = _rows_framed(0x03, seq[n_msg:n_msg + nl], lbody)
    # STATUS: load reads in which a connected chip was not ready, so far
    st_rows = []
    timeouts = 0
    for i, ts in enumerate(st_send):
        k = int(np.searchsorted(t_load, ts, side="right"))
        done = min(0xFFFF, int(missed[k - 1]) if k else 0)
        timeouts = done
        b = (int(tw.boot_us / 1000 + ts * 1000)).to_bytes(4, "little") + bytes(4) \
            + done.to_bytes(2, "little") + bytes([45 + (i % 7), 0])
        st_rows.append(frame(0x04, int(seq[n_msg + nl + i]), b))
    hello = frame(0x01, 0, bytes([1, 1, 0, 0, N_CH, N_CH]) + FS.to_bytes(2, "little")
                  + int(round(tw.hx_rate[0])).to_bytes(2, "little") + bytes([ADC_BITS])
                  + tw.device_id)
    pieces: list[bytes] = [hello]
    for i in order:
        if kind[i] == 0:
            pieces.append(pz_rows[i].tobytes())
        elif kind[i] == 1:
            pieces.append(ld_rows[i - n_msg].tobytes())
        else:
            pieces.append(st_rows[i - n_msg - nl])
    truth = {
        "format": "towerear-crosscheck-truth/1", "model": MODEL,
        "scenario": sc.scenario, "seed": tw.seed, "duration_s": sc.duration, "cells": tw.cells,
        "landings": sc.landings, "knockdowns": sc.knockdowns, "removals": sc.removals,
        "lifts": sc.lifts, "closes": sc.closes, "knocks": sc.knocks, "damage": [],
        "touches": sc.touches, "fell_out": sc.fell_out, "game": sc.game,
        "tower": {"load_timeouts": timeouts, "cpg": np.round(tw.cpg, 2).tolist(),
                  "offset": tw.offset.tolist(), "load_rate_hz": np.round(tw.hx_rate, 3).tolist(),
                  "hum_hz": tw.hum_hz, "crosstalk": round(tw.crosstalk, 3)},
    }
    return b"".join(pieces), truth


def make_recording(seed: int, scenario: str, duration: float, out: Path) -> tuple[Path, Path]:
    """Make ``{scenario}_t{seed}.bin`` and ``.truth.json`` in ``out``."""
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
    """Command line."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--towers", type=int, default=8)
    p.add_argument("--first-seed", type=int, default=1)
    p.add_argument("--duration", type=float, default=120.0)
    p.add_argument("--scenarios", nargs="+", default=list(SCENARIOS))
    p.add_argument("--workers", type=int, default=2)
    args = p.parse_args(argv)
    bad = [s for s in args.scenarios if s not in SCENARIOS]
    if bad:
        print(f"unknown scenario {bad[0]!r} (known: {', '.join(SCENARIOS)})", file=sys.stderr)
        return 2
    if args.duration < QUIET_S + 5:
        print(f"--duration must be at least {QUIET_S + 5:.0f} s", file=sys.stderr)
        return 2
    jobs = [(seed, sc, args.duration, str(args.out)) for seed in
            range(args.first_seed, args.first_seed + args.towers) for sc in args.scenarios]
    if args.workers > 1:
        with ProcessPoolExecutor(args.workers) as pool:
            list(pool.map(_job, jobs))
    else:
        for job in jobs:
            _job(job)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
