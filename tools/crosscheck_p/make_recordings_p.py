#!/usr/bin/env python3
"""Cross-check model P: a middle-of-the-road physical tower, written from the spec alone.

Writes recordings (``*.bin``: the device -> host byte stream of contracts.md
section 1) with ground truth beside them (``*.truth.json``, the format
``towerear-crosscheck-truth/1`` that tools/crosscheck/score.py reads), for the
evaluation families of the project: single, rapid, noisy, game, and on request
long (30+ minutes, drift and creep, clock wrap), damaged (plus its clean twin)
and acoustic (no load stream).

Usage::

    .venv/bin/python tools/crosscheck_p/make_recordings_p.py --out DIR --towers 8 \
        --first-seed 1 --duration 120 [--scenarios single rapid noisy game long damaged acoustic] \
        [--long-duration 1800] [--workers 2]

Written from /work/shared/design.md, contracts.md and the rule texts only; its
wire encoder (COBS, CRC-16/CCITT-FALSE, message layouts) is its own.
Choices and numbers: README.md beside this script.
"""

from __future__ import annotations

import argparse
import binascii
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, NoReturn

import numpy as np
from numpy.typing import NDArray
from scipy import signal

FORMAT = "towerear-crosscheck-truth/1"
DEFAULT_SCENARIOS = ("single", "rapid", "noisy", "game")
ALL_SCENARIOS = ("single", "rapid", "noisy", "game", "long", "damaged", "acoustic")
SCENARIO_CODE = {name: i + 1 for i, name in enumerate(ALL_SCENARIOS)}
MIN_DURATION_S = 10.0
G = 9.81  # m/s^2
LEVEL_H = 0.031  # m, one module (25 cm tower / 8)
COLOURS = ("yellow", "blue", "brown", "gray", "black", "white")
U32 = 2**32
S24_MAX = 2**23 - 1
LOAD_DT = 0.001  # s, grid of the force model on the load cells

F64 = NDArray[np.float64]
U8 = NDArray[np.uint8]

# --------------------------------------------------------------------------------------
# Wire encoding (contracts.md section 1), our own
# --------------------------------------------------------------------------------------


def crc16_ccitt_false(data: bytes) -> int:
    """CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, no reflection, xorout 0)."""
    return binascii.crc_hqx(data, 0xFFFF)


def crc16_ccitt_false_reference(data: bytes) -> int:
    """The same CRC bit by bit, as a second implementation."""
    crc = 0xFFFF
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
            crc &= 0xFFFF
    return crc


def _crc_table() -> NDArray[np.uint32]:
    table = np.zeros(256, np.uint32)
    for i in range(256):
        c = i << 8
        for _ in range(8):
            c = ((c << 1) ^ 0x1021) if c & 0x8000 else (c << 1)
            c &= 0xFFFF
        table[i] = c
    return table


CRC_TABLE = _crc_table()


def crc16_rows(rows: U8) -> NDArray[np.uint16]:
    """CRC-16/CCITT-FALSE of every row of a (n, length) uint8 array."""
    crc = np.full(rows.shape[0], 0xFFFF, np.uint32)
    for j in range(rows.shape[1]):
        crc = ((crc << 8) & 0xFFFF) ^ CRC_TABLE[((crc >> 8) ^ rows[:, j]) & 0xFF]
    return crc.astype(np.uint16)


def cobs_encode(data: bytes) -> bytes:
    """COBS-encode ``data`` (no trailing delimiter)."""
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


def cobs_encode_rows(rows: U8) -> U8:
    """COBS-encode every row (length <= 253) and append the 0x00 delimiter: (n, length + 2)."""
    n, length = rows.shape
    if length > 253:
        raise ValueError("rows longer than 253 bytes need the one-frame encoder")
    out = np.empty((n, length + 2), np.uint8)
    step = 8192
    pos = np.arange(length, dtype=np.int16)
    for a in range(0, n, step):
        r = rows[a:a + step]
        z = r == 0
        idx = np.where(z, pos, np.int16(length))
        nz = np.minimum.accumulate(idx[:, ::-1], axis=1)[:, ::-1]  # next zero at/after j
        nxt = np.empty_like(nz)
        nxt[:, :-1] = nz[:, 1:]
        nxt[:, -1] = length
        out[a:a + step, 0] = (nz[:, 0] + 1).astype(np.uint8)
        out[a:a + step, 1:length + 1] = np.where(z, (nxt - pos).astype(np.uint8), r)
        out[a:a + step, length + 1] = 0
    return out


def frame(msg_wo_crc: bytes) -> bytes:
    """One message (type|seq|body) with its CRC, COBS-encoded and delimited."""
    crc = crc16_ccitt_false(msg_wo_crc)
    return cobs_encode(msg_wo_crc + crc.to_bytes(2, "little")) + b"\x00"


def _le(values: NDArray[Any], dtype: str, width: int) -> U8:
    return np.ascontiguousarray(values.astype(dtype)).view(np.uint8).reshape(len(values), width)


def _finish_rows(raw: U8) -> U8:
    crc = crc16_rows(raw)
    full = np.concatenate([raw, _le(crc, "<u2", 2)], axis=1)
    return cobs_encode_rows(full)


# --------------------------------------------------------------------------------------
# The tower
# --------------------------------------------------------------------------------------


@dataclass
class Tower:
    """One physical kit: cells, discs, plates, converters, clock. Drawn from the seed only."""

    seed: int
    cells: str  # "matched" (one batch) or "mixed"
    cpg: list[float]  # counts per gram, signed (negative: mounted or wired reversed)
    offset: list[int]  # counts at an empty plate, anywhere in s24
    load_noise_counts: list[float]
    wander_g: list[float]  # slow wander of the zero, g rms
    zero_tc_g_per_c: list[float]
    warmup_g: list[float]
    warmup_tau_s: float
    creep_frac: list[float]
    creep_tau_s: float
    plate_f_hz: list[float]  # plate-on-cell resonance seen by the load cell
    plate_tau_s: list[float]
    plate_mass_g: list[float]
    hx_stages: int  # sinc^k settling of the HX711 (k conversions)
    load_rate_true: float  # readings/s in device time
    load_rate_hello: int
    load_rate_tc: float  # relative change per deg C
    piezo_rate_hello: int
    piezo_rate_true: float
    sets_per_frame: int
    bias: list[float]
    piezo_noise: list[float]
    disc_gain: list[float]
    mode_f1: list[float]
    mode_tau1: list[float]
    mode_ratio: list[float]
    mode_tau2: list[float]
    mode_a2: list[float]
    xt_up: float  # crosstalk factor per level upwards
    xt_down: float
    xt_delay_s: float
    land_amp: float  # codes for a landing at 1 m/s of a 0.55 g cube on a gain-1 disc
    mains_hz: float
    hum: list[float]
    lifted_piezo: str  # "bias" or "float"
    stop_p: list[float]  # chance a cube arriving on plate L stays there (L >= 1)
    cube_g: float  # nominal cube mass
    cube_spread: float
    restitution: float
    device_id: str


def make_tower(seed: int) -> Tower:
    """The tower of a seed (the same for every scenario of that seed)."""
    r = np.random.default_rng([seed, 0, 1947])
    mixed = seed % 2 == 1
    if mixed:
        mag = r.uniform(11000, 27000, 8)
        sign = np.where(r.random(8) < 0.25, -1.0, 1.0)
    else:
        mag = r.uniform(13000, 24000) * r.uniform(0.96, 1.04, 8)
        sign = np.full(8, -1.0 if r.random() < 0.25 else 1.0)
    cpg = mag * sign
    margin = 60.0 * np.abs(cpg) + 200_000
    offset = np.array([r.uniform(-S24_MAX + m, S24_MAX - m) for m in margin])
    piezo_rate = int(r.choice([2000, 2000, 2000, 2000, 2000, 2000, 2000, 1000, 1600, 2400]))
    load_rate_true = 80.0 * r.uniform(0.93, 1.08)
    f1 = r.uniform(150, 650, 8)
    f1 = np.minimum(f1, 0.32 * piezo_rate)
    # Chance that a cube arriving on plate L stays there: about 1/(L + 0.6), so that
    # throws spread over the levels with few reaching the ground floor, +-40 % per tower.
    stop = np.clip(r.uniform(0.6, 1.4, 8) / (np.arange(8) + 0.6), 0.08, 0.75)
    stop[0] = 1.0
    return Tower(
        seed=seed,
        cells="mixed" if mixed else "matched",
        cpg=[round(float(x), 1) for x in cpg],
        offset=[int(x) for x in offset],
        load_noise_counts=[float(x) for x in r.uniform(40, 180, 8)],
        wander_g=[float(x) for x in r.uniform(0.002, 0.008, 8)],
        zero_tc_g_per_c=[float(x) for x in np.clip(r.normal(0, 0.012, 8), -0.03, 0.03)],
        warmup_g=[float(x) for x in np.clip(r.normal(0, 0.06, 8), -0.2, 0.2)],
        warmup_tau_s=float(r.uniform(90, 400)),
        creep_frac=[float(x) for x in r.uniform(0.003, 0.015, 8)],
        creep_tau_s=float(r.uniform(120, 600)),
        plate_f_hz=[float(x) for x in r.uniform(15, 45, 8)],
        plate_tau_s=[float(x) for x in r.uniform(0.03, 0.15, 8)],
        plate_mass_g=[float(x) for x in r.uniform(6, 15, 8)],
        hx_stages=4,
        load_rate_true=float(load_rate_true),
        load_rate_hello=int(round(load_rate_true)),
        load_rate_tc=float(r.uniform(-0.002, 0.002)),
        piezo_rate_hello=piezo_rate,
        piezo_rate_true=float(piezo_rate * (1 + r.uniform(-150e-6, 150e-6))),
        sets_per_frame=int(r.choice([8, 10, 12, 14])),
        bias=[float(x) for x in 512 + r.uniform(-7, 7, 8)],
        piezo_noise=[float(x) for x in r.uniform(0.4, 2.5, 8)],
        disc_gain=[float(x) for x in np.exp(r.uniform(np.log(0.5), np.log(1.6), 8))],
        mode_f1=[float(x) for x in f1],
        mode_tau1=[float(x) for x in r.uniform(0.006, 0.035, 8)],
        mode_ratio=[float(x) for x in r.uniform(1.6, 2.8, 8)],
        mode_tau2=[float(x) for x in r.uniform(0.3, 0.6, 8)],
        mode_a2=[float(x) for x in r.uniform(0.3, 0.8, 8)],
        xt_up=float(r.uniform(0.2, 0.5)),
        xt_down=float(r.uniform(0.2, 0.5)),
        xt_delay_s=float(r.uniform(0.0002, 0.0006)),
        land_amp=float(r.uniform(130, 330)),
        mains_hz=50.0 if r.random() < 0.7 else 60.0,
        hum=[float(x) for x in r.uniform(0.3, 2.5, 8)],
        lifted_piezo="float" if r.random() < 0.5 else "bias",
        stop_p=[float(x) for x in stop],
        cube_g=float(r.uniform(0.3, 0.8)),
        cube_spread=float(r.uniform(0.01, 0.04)),
        restitution=float(r.uniform(0.3, 0.5)),
        device_id=bytes(r.integers(0, 256, 8).astype(np.uint8)).hex(),
    )


# --------------------------------------------------------------------------------------
# The scene: what happens when, physically
# --------------------------------------------------------------------------------------


@dataclass
class Cube:
    """A cube in the tower."""

    mass: float
    colour: str


@dataclass
class Scene:
    """Everything that happens in one recording, in device seconds from stream zero."""

    tower: Tower
    duration: float
    impacts: list[tuple[float, int, float, float, str]] = field(default_factory=list)
    # (t, level, impulse g*s, piezo amplitude codes at gain 1, kind)
    mass_steps: list[tuple[float, int, float]] = field(default_factory=list)  # (t, level, +-g)
    presses: list[tuple[float, float, int, float]] = field(default_factory=list)
    # (t0, length s, level, peak g): a hand or finger pressing on a plate
    rumbles: list[tuple[float, float, int, float]] = field(default_factory=list)
    # (t0, length s, centre level, amplitude codes): hands on the tower
    table_knocks: list[tuple[float, float]] = field(default_factory=list)  # (t, strength)
    talk: list[tuple[float, float, float]] = field(default_factory=list)  # (t0, length, codes)
    lifts: list[dict[str, Any]] = field(default_factory=list)
    landings: list[dict[str, Any]] = field(default_factory=list)
    knockdowns: list[dict[str, Any]] = field(default_factory=list)
    removals: list[dict[str, Any]] = field(default_factory=list)
    knocks: list[dict[str, Any]] = field(default_factory=list)
    game: dict[str, Any] | None = None
    hum_scale: float = 1.0
    warm: bool = False  # cells start cold (HX711s just powered up)
    room_dT: float = 0.0  # deg C over the recording
    room_tau_s: float = 1800.0
    tower_state: list[list[Cube]] = field(default_factory=lambda: [[] for _ in range(8)])


def _fall_time(v0: float, h: float = LEVEL_H) -> tuple[float, float]:
    v1 = float(np.sqrt(v0 * v0 + 2 * G * h))
    return (v1 - v0) / G, v1


def _stop_chance(tower: Tower, level: int, n_there: int) -> float:
    if level == 0:
        return 1.0
    return 1.0 - (1.0 - tower.stop_p[level]) * 0.98 ** n_there


def drop_cube(scene: Scene, r: np.random.Generator, t0: float, cube: Cube, start_level: int,
              v0: float, *, knocked_from: int | None = None, by: int | None = None) -> int:
    """A cube arriving on plate ``start_level`` at ``t0`` with speed ``v0``; returns its landing.

    Adds its impacts, its mass step, a knock-down of a resting cube (which
    falls in turn), and its truth landing.
    """
    tw = scene.tower
    st = scene.tower_state
    m = cube.mass
    t, v, level = t0, v0, start_level
    path: list[list[Any]] = []
    knock_of: tuple[float, int] | None = None
    while True:
        here = st[level]
        if r.random() < _stop_chance(tw, level, len(here)):
            break
        # Passes through the hole of plate ``level``: strikes the plate or the hole edge
        # on its way with 70 %, then falls one module.
        if r.random() < 0.7:
            share = r.uniform(0.2, 0.8)
            scene.impacts.append((t, level, m * v * share * 1.3 / G, _amp(tw, r, v, m) * share,
                                  "strike"))
            path.append([round(t, 4), level, "plate"])
            if here and knocked_from is None and knock_of is None \
                    and r.random() < min(0.08, 0.01 + 0.006 * len(here)):
                knock_of = (t, level)
            v = v * r.uniform(0.25, 0.6)
            t += r.uniform(0.005, 0.06)  # slides to the hole
        else:
            path.append([round(t, 4), level, "pass"])
        dt, v = _fall_time(v)
        t += dt
        level -= 1
    # Lands on ``level``: first impact, bounces, slide.
    e = tw.restitution * r.uniform(0.85, 1.15)
    t_first_land = t
    scene.impacts.append((t, level, m * v * (1 + e) / G, _amp(tw, r, v, m), "land"))
    path.append([round(t, 4), level, "land"])
    if st[level] and knocked_from is None and knock_of is None \
            and r.random() < min(0.05, 0.008 + 0.005 * len(st[level])) and level > 0:
        knock_of = (t, level)
    vb = v * e
    for _ in range(int(r.integers(1, 5))):
        air = 2 * vb / G
        if air < 0.004:
            break
        t += air
        scene.impacts.append((t, level, m * vb * (1 + e) / G, _amp(tw, r, vb, m), "bounce"))
        vb *= e
    scene.mass_steps.append((t, level, m))
    t_rest = t + r.uniform(0.02, 0.12)
    st[level].append(cube)
    first = min([p[0] for p in path] + [t_first_land])
    idx = len(scene.landings)
    scene.landings.append({
        "t": round(t_rest, 4), "t_first_impact": round(first, 4), "floor": level, "cubes": 1,
        "knocked": knocked_from is not None, "caused_knockdown": False,
        "mass_g": round(m, 4), "colour": cube.colour, "path": path,
        **({"from_floor": knocked_from} if knocked_from is not None else {}),
    })
    if knock_of is not None:
        tk, lk = knock_of
        candidates = [c for c in st[lk] if c is not cube]
        if candidates:
            victim = candidates[int(r.integers(len(candidates)))]
            st[lk].remove(victim)
            t_leave = tk + r.uniform(0.01, 0.06)
            scene.mass_steps.append((t_leave, lk, -victim.mass))
            scene.impacts.append((t_leave, lk, victim.mass * 0.3 / G,
                                  _amp(tw, r, 0.3, victim.mass) * 0.3, "leave"))
            _, vfall = _fall_time(r.uniform(0.05, 0.3), LEVEL_H * 0.8)
            t_arr = t_leave + r.uniform(0.05, 0.1)
            k_idx = drop_cube(scene, r, t_arr, victim, lk - 1, vfall, knocked_from=lk, by=idx)
            scene.landings[idx]["caused_knockdown"] = True
            scene.knockdowns.append({"t": round(tk, 4), "landing": k_idx, "by": idx,
                                     "from_floor": lk, "floor": lk - 1})
    return idx


def _amp(tw: Tower, r: np.random.Generator, v: float, m: float) -> float:
    return float(tw.land_amp * v * np.sqrt(m / 0.55) * r.uniform(0.7, 1.3))


def throw(scene: Scene, r: np.random.Generator, t_throw: float, colour: str,
          mass: float | None = None) -> int:
    """A cube thrown into the top at ``t_throw``; returns the index of its landing."""
    tw = scene.tower
    m = mass if mass is not None else new_cube_mass(tw, r)
    # From the hand into the top hole, then onto plate 7 (one module below).
    v_in = r.uniform(0.3, 0.9)
    dt, v = _fall_time(v_in)
    return drop_cube(scene, r, t_throw + dt, Cube(m, colour), 7, v)


def new_cube_mass(tw: Tower, r: np.random.Generator) -> float:
    return float(tw.cube_g * (1 + tw.cube_spread * r.standard_normal()))


def busy_until(scene: Scene) -> float:
    """Time after which nothing that was thrown is still moving."""
    return max([x["t"] for x in scene.landings] + [0.0])


def table_knock(scene: Scene, r: np.random.Generator, t: float, strong: float = 1.0) -> None:
    scene.table_knocks.append((t, float(r.uniform(0.4, 1.0) * strong)))
    scene.knocks.append({"t": round(t, 4)})


def talk_burst(scene: Scene, r: np.random.Generator, t0: float, length: float,
               loud: float) -> None:
    scene.talk.append((t0, length, loud))


def lift_and_empty(scene: Scene, r: np.random.Generator, t: float, k: int,
                   *, take: str = "all", scoop: bool | None = None) -> tuple[float, list[Cube]]:
    """Lift modules k..7, take the cubes of level k out, put the tower back.

    Returns (time the tower is closed, cubes taken out + cubes that fell out).
    """
    st = scene.tower_state
    # Hands on the tower, the one holding the lower floors presses a little.
    scene.rumbles.append((t - r.uniform(0.2, 0.5), r.uniform(0.5, 1.0), k, r.uniform(10, 50)))
    for lv in range(k + 1):
        if r.random() < 0.6:
            scene.presses.append((t - r.uniform(0.1, 0.4), r.uniform(0.3, 0.9), lv,
                                  r.uniform(-0.5, 1.5)))
    t_lift = t
    fell: list[Cube] = []
    if k < 7 and r.random() < 0.06:
        upper = [lv for lv in range(k + 1, 8) if st[lv]]
        if upper:
            lv = upper[int(r.integers(len(upper)))]
            fell.append(st[lv].pop())  # falls onto the table, unseen (channel disconnected)
            scene.rumbles.append((t_lift + r.uniform(0.2, 0.8), 0.15, k, r.uniform(5, 20)))
    t = t_lift + r.uniform(1.2, 3.0)  # look
    taken: list[Cube] = []
    cubes = list(st[k])
    if cubes:
        # One grab; a few cubes sometimes one by one, many cubes sometimes in two grabs.
        groups = [cubes]
        if scoop is None and 1 < len(cubes) <= 3 and r.random() < 0.4:
            groups = [[c] for c in cubes]
        elif scoop is None and len(cubes) > 3 and r.random() < 0.5:
            half = int(r.integers(1, len(cubes)))
            groups = [cubes[:half], cubes[half:]]
        for grp in groups:
            t_touch = t
            press = r.uniform(1.0, 12.0)
            hold = r.uniform(0.3, 1.0)
            scene.presses.append((t_touch, hold + 0.15, k, press))
            scene.rumbles.append((t_touch, hold + 0.2, k, r.uniform(8, 35)))
            t_out = t_touch + hold
            mass = 0.0
            for c in grp:
                st[k].remove(c)
                mass += c.mass
            scene.mass_steps.append((t_out, k, -mass))
            scene.removals.append({"t": round(t_out, 4), "t_touch": round(t_touch, 4),
                                   "floor": k, "cubes": len(grp), "mass_g": round(mass, 4)})
            taken += grp
            t = t_out + r.uniform(0.8, 2.0)
    t_close = t + r.uniform(0.5, 2.0)
    scene.rumbles.append((t_close - r.uniform(0.2, 0.5), r.uniform(0.5, 1.0), k,
                          r.uniform(10, 50)))
    for lv in range(k + 1):
        if r.random() < 0.6:
            scene.presses.append((t_close - r.uniform(0.1, 0.4), r.uniform(0.3, 0.9), lv,
                                  r.uniform(-0.5, 2.0)))
    scene.lifts.append({"t": round(t_lift, 4), "exposed": k, "t_close": round(t_close, 4),
                        "flicker_lift": bool(r.random() < 0.3),
                        "flicker_close": bool(r.random() < 0.3),
                        "restart_readings": int(r.integers(2, 5))})
    return t_close, taken + fell


# --------------------------------------------------------------------------------------
# Scenarios
# --------------------------------------------------------------------------------------


def _scenario_rng(seed: int, scenario: str) -> np.random.Generator:
    return np.random.default_rng([seed, SCENARIO_CODE[scenario], 31])


def build_scene(tower: Tower, scenario: str, duration: float, seed: int) -> Scene:
    """What happens in one recording."""
    r = _scenario_rng(seed, scenario)
    sc = Scene(tower, duration)
    end = duration - 3.0
    t = float(r.uniform(4.3, 6.0))  # an empty, quiet tower first
    sc.warm = bool(r.random() < 0.75)
    sc.room_dT = float(r.uniform(-0.1, 0.3)) * duration / 600
    if scenario in ("single", "acoustic"):
        t += r.uniform(0.2, 1.0)
        while t < end:
            throw(sc, r, t, COLOURS[int(r.integers(6))])
            t += r.uniform(3.0, 9.0)
    elif scenario == "rapid":
        t += r.uniform(0.2, 1.0)
        while t < end:
            n = int(r.choice([2, 2, 3, 3, 4, 5]))
            for _ in range(n):
                if t >= end:
                    break
                throw(sc, r, t, COLOURS[int(r.integers(6))])
                t += r.uniform(0.3, 0.8)
            t += r.uniform(4.0, 10.0)
    elif scenario == "noisy":
        sc.hum_scale = float(r.uniform(3.0, 8.0))
        t += r.uniform(0.2, 1.0)
        throws: list[float] = []
        while t < end:
            throw(sc, r, t, COLOURS[int(r.integers(6))])
            throws.append(t)
            t += r.uniform(3.5, 9.0)
        tk = float(r.uniform(6.0, 12.0))
        while tk < duration - 1.0:
            if all(abs(tk - x) > 0.6 for x in throws):
                table_knock(sc, r, tk, strong=float(r.uniform(0.5, 1.6)))
            tk += r.uniform(8.0, 25.0)
        tt = float(r.uniform(4.5, 10.0))
        while tt < duration - 1.0:
            length = float(r.uniform(1.0, 6.0))
            talk_burst(sc, r, tt, min(length, duration - tt), float(r.uniform(2.0, 10.0)))
            tt += length + r.uniform(1.0, 8.0)
        for _ in range(int(duration / 40)):
            t0 = float(r.uniform(5.0, duration - 2.0))
            sc.rumbles.append((t0, float(r.uniform(0.3, 1.0)), int(r.integers(4, 8)),
                               float(r.uniform(5, 25))))
    elif scenario in ("game", "damaged"):
        play_game(sc, r, t, end, talk_level=2.0)
    elif scenario == "long":
        sc.warm = False
        sc.room_dT = float(r.uniform(1.0, 4.0))
        sc.room_tau_s = float(r.uniform(1200, 3600))
        while True:  # games back to back, the tower opened and emptied between them
            t = play_game(sc, r, t, end, talk_level=2.5)
            if t > end - 90:
                break
            t = reveal_and_empty(sc, r, t + r.uniform(5, 15), end)
            t += r.uniform(20, 60)
            if t > end - 60:
                break
    else:
        raise ValueError(f"unknown scenario {scenario!r}")
    if scenario != "noisy" and scenario not in ("single", "rapid", "acoustic"):
        # A table knock now and then, away from throws.
        for _ in range(max(1, int(duration / 90))):
            tk = float(r.uniform(6.0, duration - 1.5))
            if all(abs(tk - x["t_first_impact"]) > 1.0 and abs(tk - x["t"]) > 1.0
                   for x in sc.landings) \
                    and all(not (lf["t"] - 1.5 < tk < lf["t_close"] + 1.5) for lf in sc.lifts):
                table_knock(sc, r, tk)
    sc.landings, sc.knockdowns = _sorted_truth(sc.landings, sc.knockdowns)
    return sc


def _sorted_truth(landings: list[dict[str, Any]], knockdowns: list[dict[str, Any]]
                  ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    order = sorted(range(len(landings)), key=lambda i: (landings[i]["t"], i))
    new_of = {old: new for new, old in enumerate(order)}
    kd = [dict(k, landing=new_of[k["landing"]], by=new_of[k["by"]]) for k in knockdowns]
    return [landings[i] for i in order], sorted(kd, key=lambda k: k["t"])


def reveal_and_empty(sc: Scene, r: np.random.Generator, t: float, end: float) -> float:
    """After a game: open every level from the top down and take everything out."""
    for k in range(7, -1, -1):
        if t > end - 8:
            break
        if not sc.tower_state[k] and r.random() < 0.5:
            continue
        t_close, _ = lift_and_empty(sc, r, t, k, scoop=True)
        t = t_close + r.uniform(2.0, 5.0)
    return t


def play_game(sc: Scene, r: np.random.Generator, t: float, end: float, *,
              talk_level: float) -> float:
    """A game of Mord im Arosa by the rules (rules/004_*.txt) from ``t``; returns its end."""
    n_players = int(r.integers(3, 6))
    players = [COLOURS[i] for i in r.permutation(6)[:n_players]]
    supply = dict.fromkeys(players, 20)
    sheet = {p: [0] * 8 for p in players}
    crime: list[int] = []
    victims_found = 0
    log: list[dict[str, Any]] = []
    state = sc.tower_state

    def chat(t0: float, t1: float) -> None:
        if t1 - t0 > 1.0:
            talk_burst(sc, r, t0 + 0.2, t1 - t0 - 0.4, float(r.uniform(0.5, 1.5) * talk_level))

    def do_throw(tt: float, colour: str, cube: Cube | None = None) -> float:
        if cube is None:
            if colour != "red":
                supply[colour] -= 1
            cube = Cube(new_cube_mass(sc.tower, r), colour)
        idx = throw(sc, r, tt, colour, cube.mass)
        log.append({"do": "throw", "color": colour, "floor": sc.landings[idx]["floor"],
                    "t": round(tt, 3)})
        return tt

    def over() -> bool:
        return any(sum(sheet[p]) >= 10 for p in players) or any(supply[p] <= 0 for p in players)

    # Prologue: both victims, then two clues each, one after another.
    t += r.uniform(0.2, 1.0)
    for i in range(2):
        if i and t > end:
            break
        do_throw(t, "red")
        t += r.uniform(1.5, 3.5)
    for p in players:
        for _ in range(2):
            if t > end:
                break
            do_throw(t, p)
            t += r.uniform(1.2, 3.0)
        t += r.uniform(1.0, 3.0)
    act = 1
    turn = 0
    inspected: set[int] = set()
    while t < end - 15 and not over():
        inv = players[turn % n_players]
        think = float(r.uniform(5.0, 18.0))
        chat(t, t + think)
        t += think
        t = max(t, busy_until(sc) + 1.0)
        occupied = [lv for lv in range(8) if state[lv]]
        penalties = 0
        entry: dict[str, Any]
        if act == 1:
            options = [lv for lv in range(8) if lv not in inspected] or list(range(8))
            k = int(r.choice(options))
            inspected.add(k)
            found = [c for c in state[k] if c.colour == "red"]
            entry = {"do": "inspect", "by": inv, "floor": k}
            if found:
                crime.append(k)
                victims_found += len(found)
                for p in players:
                    if p != inv:
                        n_own = sum(c.colour == p for c in state[k])
                        put = min(n_own, supply[p])
                        sheet[p][k] += put
                        supply[p] -= put
            else:
                penalties = 1
        else:
            own_on_sheet = [lv for lv in range(8) if sheet[inv][lv] > 0]
            if own_on_sheet and r.random() < 0.4:
                k = int(r.choice(own_on_sheet)) if r.random() < 0.7 else int(r.integers(8))
                n_own = sum(c.colour == inv for c in state[k])
                off_sheet = min(n_own, sheet[inv][k])
                sheet[inv][k] -= off_sheet
                supply[inv] += off_sheet
                penalties = 0 if n_own else 1
                entry = {"do": "cover", "by": inv, "floor": k}
            else:
                others = [p for p in players if p != inv]
                n_sus = 1 if r.random() < 0.65 or len(others) < 2 else 2
                sus = [others[i] for i in r.permutation(len(others))[:n_sus]]
                k = int(r.choice(occupied)) if occupied and r.random() < 0.8 \
                    else int(r.integers(8))
                entry = {"do": "suspect", "by": inv, "suspects": sus, "floor": k}
                if k == 0 and not any(c.colour == inv for c in state[0]):
                    penalties = len(sus)
                else:
                    for p in sus:
                        n_own = sum(c.colour == p for c in state[k])
                        if n_own:
                            put = min(n_own, supply[p])
                            sheet[p][k] += put
                            supply[p] -= put
                        else:
                            penalties += 1
        log.append(entry)
        t_close, taken = lift_and_empty(sc, r, t, k, scoop=True if t > end - 30 else None)
        back = [c for c in taken if c.colour != "red"]
        t = t_close + r.uniform(1.5, 3.5)
        if over():
            break
        for c in back:
            if t > end:
                break
            do_throw(t, c.colour, c)
            t += r.uniform(0.6, 2.0)
        for _ in range(penalties):
            if t > end or over():
                break
            do_throw(t, inv)
            t += r.uniform(0.8, 2.0)
        if act == 1 and victims_found >= 2:
            act = 2
            turn = players.index(inv)  # Act II starts with the player after the finder
        turn += 1
    summary = {"players": players, "log": log, "supply": supply, "sheet": sheet,
               "crime_scenes": sorted(set(crime)),
               "phase": "over" if over() else ("act2" if act == 2 else "act1")}
    if sc.game is None:
        sc.game = dict(summary, games=[summary])
    else:
        sc.game["games"].append(summary)
    return max(t, busy_until(sc) + 1.0)


# --------------------------------------------------------------------------------------
# Sensors
# --------------------------------------------------------------------------------------


@dataclass
class Timing:
    """The device's clock and the times of everything it sends."""

    piezo_t: F64  # every sample set, device seconds from stream zero
    frame_start: NDArray[np.int64]  # first set of each PIEZO frame
    frame_n: int
    load_t: F64  # every reading


def make_timing(tower: Tower, scene: Scene, r: np.random.Generator, n_load: int) -> Timing:
    dur = scene.duration
    n_sets = int(dur * tower.piezo_rate_true)
    n_sets -= n_sets % tower.sets_per_frame
    piezo_t = np.arange(n_sets) / tower.piezo_rate_true
    frame_start = np.arange(0, n_sets, tower.sets_per_frame)
    if n_load:
        temp = room_temperature(scene, np.linspace(0, dur, 200))
        rate = tower.load_rate_true * (1 + tower.load_rate_tc * temp)
        approx = int(dur * rate.max()) + 10
        tt = np.linspace(0, dur, 200)
        periods = 1.0 / np.interp(np.arange(approx) / rate.mean(), tt, rate)
        load_t = r.uniform(0.001, 0.012) + np.cumsum(periods) - periods[0]
        load_t = load_t + r.uniform(0, 0.0003, len(load_t))  # firmware polling of DOUT
        load_t = load_t[load_t < dur - 0.002]
    else:
        load_t = np.zeros(0)
    return Timing(piezo_t, frame_start, tower.sets_per_frame, load_t)


def room_temperature(scene: Scene, t: F64) -> F64:
    """The room's temperature change since stream zero, deg C."""
    return np.asarray(scene.room_dT * (1 - np.exp(-t / scene.room_tau_s)) / \
        max(1e-9, 1 - np.exp(-scene.duration / scene.room_tau_s)) \
        + 0.15 * np.sign(scene.room_dT) * np.sin(2 * np.pi * t / 900.0) * \
        min(1.0, scene.duration / 900), np.float64)


def load_counts(tower: Tower, scene: Scene, timing: Timing, r: np.random.Generator
                ) -> tuple[NDArray[np.int64], NDArray[np.uint8]]:
    """The eight load channels at the reading times: (counts, valid bits)."""
    dur = scene.duration
    n_grid = int(np.ceil((dur + 0.2) / LOAD_DT)) + 1
    t0g = -0.1
    tg = t0g + np.arange(n_grid) * LOAD_DT
    lt = timing.load_t
    idx = np.clip(((lt - t0g) / LOAD_DT).astype(np.int64), 0, n_grid - 1)
    box = max(2, int(round(1.0 / tower.load_rate_true / LOAD_DT)))
    counts = np.zeros((len(lt), 8), np.int64)
    temp = room_temperature(scene, lt)
    coarse_t = np.arange(0, dur + 1.0, 0.1)
    knock_sway = [(float(r.uniform(4, 12)), float(r.uniform(0.15, 0.4)),
                   float(strength * r.uniform(0.05, 0.4))) for _, strength in scene.table_knocks]
    for c in range(8):
        f = np.zeros(n_grid)
        # Resting cubes.
        steps = np.zeros(n_grid)
        for (ts, lv, dm) in scene.mass_steps:
            if lv == c:
                steps[min(n_grid - 1, int((ts - t0g) / LOAD_DT))] += dm
        mass = np.cumsum(steps)
        f += mass
        # Impacts: the plate on its cell rings (the ringing carries the impulse).
        w = 2 * np.pi * tower.plate_f_hz[c]
        tau = tower.plate_tau_s[c]
        n_ring = int(5 * tau / LOAD_DT)
        tr = np.arange(n_ring) * LOAD_DT
        ring = w * np.exp(-tr / tau) * np.sin(w * tr)
        for (ti, lv, imp, _, _kind) in scene.impacts:
            if abs(lv - c) > 1:
                continue
            scale = imp if lv == c else imp * 0.1
            _add(f, int((ti - t0g) / LOAD_DT), scale * ring)
        # Mass steps also ring a little (the plate settles).
        settle = -np.exp(-tr / tau) * np.cos(w * tr)
        for (ts, lv, dm) in scene.mass_steps:
            if lv == c:
                _add(f, int((ts - t0g) / LOAD_DT), dm * 0.5 * settle)
        # Hands and fingers pressing.
        for (tp, length, lv, peak) in scene.presses:
            if lv != c:
                continue
            n = max(2, int(length / LOAD_DT))
            x = np.arange(n) / n
            trem = 1 + 0.25 * np.sin(2 * np.pi * r.uniform(4, 9) * x * length + r.uniform(0, 6))
            _add(f, int((tp - t0g) / LOAD_DT), peak * np.sin(np.pi * x) ** 2 * trem)
        # Table knocks: the tower sways, each plate's mass is shaken.
        for (tk, strength), (fs, tau_s, acc) in zip(scene.table_knocks, knock_sway, strict=True):
            xs = np.arange(int(1.2 / LOAD_DT)) * LOAD_DT
            here = tower.plate_mass_g[c] + float(mass[min(n_grid - 1, int((tk - t0g) / LOAD_DT))])
            lean = 0.5 + c / 8  # upper levels sway more
            sway = here * acc * lean * np.exp(-xs / tau_s) * np.sin(2 * np.pi * fs * xs)
            _add(f, int((tk - t0g) / LOAD_DT), sway)
            _add(f, int((tk - t0g) / LOAD_DT), strength * r.uniform(0.01, 0.04) * ring)
        # The HX711's sinc^k filter: k box cascades of one conversion period.
        for _ in range(tower.hx_stages):
            cs = np.concatenate([[0.0], np.cumsum(f)])
            f = np.concatenate([np.full(box - 1, 0.0), (cs[box:] - cs[:-box]) / box])
        grams = f[idx]
        # Creep of the cell under the resting load (first order), on a coarse grid.
        mass_c = np.interp(coarse_t, tg, mass)
        a = np.exp(-0.1 / tower.creep_tau_s)
        creep = signal.lfilter([1 - a], [1, -a], mass_c) * tower.creep_frac[c]
        grams += np.interp(lt, coarse_t, creep)
        # Zero drift: warm-up, the room's temperature, a slow wander.
        if not scene.warm:
            grams += tower.warmup_g[c] * (1 - np.exp(-lt / tower.warmup_tau_s))
        grams += tower.zero_tc_g_per_c[c] * temp
        wander = np.cumsum(r.standard_normal(len(coarse_t)))
        wander = signal.lfilter([1 - 0.995], [1, -0.995], wander - wander.mean())
        wander *= tower.wander_g[c] / max(1e-9, float(np.std(wander)))
        grams += np.interp(lt, coarse_t, wander)
        noise = r.standard_normal(len(lt)) * tower.load_noise_counts[c]
        counts[:, c] = np.rint(tower.offset[c] + tower.cpg[c] * grams + noise).astype(np.int64)
    valid = np.full(len(lt), 0xFF, np.uint8)
    # Lifted modules: channels above the exposed level disconnected.
    for lf in scene.lifts:
        k, ta, tb = lf["exposed"], lf["t"], lf["t_close"]
        mask_bits = np.uint8(sum(1 << ch for ch in range(k + 1, 8)))
        if not mask_bits:
            continue
        off = (lt >= ta) & (lt < tb)
        i_close = int(np.searchsorted(lt, tb))
        restart = lf["restart_readings"]
        off[i_close:i_close + restart] = True
        if lf["flicker_lift"]:
            i = int(np.searchsorted(lt, ta))
            off[i + 2:i + 3] = False  # one reading through a bouncing contact
        if lf["flicker_close"]:
            i = int(np.searchsorted(lt, tb - 0.08))
            off[i:i + 1] = False
        valid[off] &= ~mask_bits
        # First readings after the HX711s restart are still settling.
        j = i_close + restart
        for ch in range(k + 1, 8):
            err = r.uniform(-1.5, 1.5)
            for q in range(2):
                if j + q < len(lt):
                    counts[j + q, ch] += int(tower.cpg[ch] * err * 0.3 ** q)
    # Rare conversion timeouts (the firmware did not see DOUT low in time).
    miss = r.random((len(lt), 8)) < 2e-4
    valid &= ~np.packbits(miss[:, ::-1], axis=1, bitorder="big")[:, 0]
    counts = np.clip(counts, -S24_MAX - 1, S24_MAX)
    bits = (valid[:, None] >> np.arange(8)) & 1
    counts[bits == 0] = 0
    return counts, valid


def _add(f: NDArray[Any], i0: int, block: NDArray[Any]) -> None:
    """Add ``block`` to ``f`` from index ``i0``, clipped to ``f``."""
    n = len(f)
    if i0 >= n or i0 + len(block) <= 0:
        return
    a = max(0, -i0)
    b = min(len(block), n - i0)
    f[i0 + a:i0 + b] += block[a:b]


def piezo_codes(tower: Tower, scene: Scene, timing: Timing, r: np.random.Generator
                ) -> NDArray[np.uint16]:
    """The eight piezo channels at every sample set, ADC codes."""
    rate = tower.piezo_rate_true
    n = len(timing.piezo_t)
    t = timing.piezo_t
    bias = np.array(tower.bias)
    gain = np.array(tower.disc_gain)
    x = np.empty((n, 8), np.float32)
    x[:] = r.standard_normal((n, 8), dtype=np.float32) * np.array(tower.piezo_noise,
                                                                   np.float32)
    hum_amp = np.array(tower.hum) * scene.hum_scale
    ph = r.uniform(0, 2 * np.pi, 8)
    wt = (2 * np.pi * tower.mains_hz * t).astype(np.float64)
    for c in range(8):
        x[:, c] += (hum_amp[c] * np.sin(wt + ph[c])
                    + 0.3 * hum_amp[c] * np.sin(3 * wt + 2 * ph[c])).astype(np.float32)
    f1 = np.array(tower.mode_f1)
    f2 = np.minimum(f1 * np.array(tower.mode_ratio), 0.45 * rate)
    tau1 = np.array(tower.mode_tau1)
    tau2 = tau1 * np.array(tower.mode_tau2)
    a2 = np.array(tower.mode_a2)
    lv = np.arange(8)
    n_win = int(min(0.3, 5 * tau1.max()) * rate)
    tw_ = np.arange(n_win) / rate
    for (ti, level, _imp, amp, kind) in scene.impacts:
        d = lv - level
        att = np.where(d > 0, tower.xt_up ** np.abs(d), tower.xt_down ** np.abs(d))
        delay = np.abs(d) * tower.xt_delay_s
        i0 = int(np.ceil(ti * rate))
        frac = i0 / rate - ti
        tt = tw_[:, None] + frac - delay[None, :]
        on = tt >= 0
        tt = np.maximum(tt, 0)
        rise = 1 - np.exp(-tt / np.where(d == 0, 0.0002, 0.001))
        wave = (np.sin(2 * np.pi * f1 * tt) * np.exp(-tt / tau1)
                + a2 * np.sin(2 * np.pi * f2 * tt + 0.5) * np.exp(-tt / tau2)) * rise
        click = np.where(d == 0, 1.0, 0.0) * np.exp(-tt / 0.0007) * 0.5
        block = (amp * att * gain) * (wave + click) * on
        if kind == "leave":
            block *= 0.5
        _add(x, i0, block.astype(np.float32))
    # Hands on the tower: a low rumble, strongest at the levels held.
    sos_r = signal.butter(2, [5, min(80, 0.4 * rate)], "bandpass", fs=rate, output="sos")
    for (t0, length, centre, amp) in scene.rumbles:
        m = int(length * rate)
        if m < 8:
            continue
        noise = signal.sosfilt(sos_r, r.standard_normal((m, 8)), axis=0)
        noise /= max(1e-9, float(noise.std()))
        env = np.sin(np.pi * np.arange(m) / m)[:, None] ** 2
        spread = 0.6 ** np.abs(lv - centre)
        spikes = np.zeros((m, 8))
        for _ in range(int(r.integers(0, 4))):  # fingers and nails on the cardboard
            spikes[int(r.integers(m)), :] += r.uniform(-3, 3) * amp * spread
        _add(x, int(t0 * rate), ((amp * noise * env + spikes) * spread * gain).astype(np.float32))
    # Table knocks: a thump through the base, every level.
    for (tk, strength) in scene.table_knocks:
        m = int(0.35 * rate)
        tt = np.arange(m) / rate
        fk = r.uniform(25, 90)
        per = r.uniform(0.6, 1.2, 8)
        thump = np.sin(2 * np.pi * fk * tt) * np.exp(-tt / r.uniform(0.03, 0.08))
        click = r.standard_normal(m) * np.exp(-tt / 0.004)
        amp = strength * r.uniform(40, 220)
        block = amp * (thump[:, None] * per + 0.5 * click[:, None] * 0.7 ** lv) * gain
        _add(x, int(tk * rate), block.astype(np.float32))
    # Talking: voiced sound through the air into the plates, the same on every level.
    for (t0, length, loud) in scene.talk:
        m = int(length * rate)
        if m < 8:
            continue
        tt = np.arange(m) / rate
        f0 = r.uniform(95, 230) * (1 + 0.08 * np.sin(2 * np.pi * r.uniform(0.3, 1.0) * tt))
        phase = 2 * np.pi * np.cumsum(f0) / rate
        voice = sum(np.sin(k * phase) / k for k in range(1, 6)
                    if k * f0.max() < 0.45 * rate)
        syl = np.clip(np.sin(2 * np.pi * r.uniform(3.5, 5.5) * tt + r.uniform(0, 6)), 0, None)
        env = syl * np.clip(np.sin(np.pi * tt / length) * 3, 0, 1)
        per = r.uniform(0.5, 1.5, 8)
        _add(x, int(t0 * rate), (loud * (voice * env)[:, None] * per).astype(np.float32))
    # Lifted modules: their discs are cut off; their inputs rest at the bias or float.
    for lf in scene.lifts:
        k = lf["exposed"]
        if k == 7:
            continue
        a, b = int(lf["t"] * rate), min(n, int(lf["t_close"] * rate))
        if b <= a:
            continue
        m = b - a
        tt = t[a:b]
        for ch in range(k + 1, 8):
            if tower.lifted_piezo == "float":
                walk = np.cumsum(r.standard_normal(m)) * 0.05
                x[a:b, ch] = (r.uniform(10, 60) * np.sin(2 * np.pi * tower.mains_hz * tt
                                                         + r.uniform(0, 6))
                              + np.clip(walk, -60, 60) + r.standard_normal(m)).astype(np.float32)
            else:
                x[a:b, ch] = (r.uniform(1, 5) * np.sin(2 * np.pi * tower.mains_hz * tt)
                              + r.standard_normal(m) * 0.7).astype(np.float32)
            for edge in (a, b - 1):  # contact crackle
                s = max(0, min(n - 8, edge))
                x[s:s + 8, ch] += (r.uniform(-250, 250) * np.exp(-np.arange(8) / 2.0)
                                   ).astype(np.float32)
    x += bias.astype(np.float32)
    return np.clip(np.rint(x), 0, 1023).astype(np.uint16)


# --------------------------------------------------------------------------------------
# Messages and the byte stream
# --------------------------------------------------------------------------------------


@dataclass
class Stream:
    """The device's messages in the order sent, with their bytes."""

    data: bytes
    starts: NDArray[np.int64]  # byte offset of each frame
    ends: NDArray[np.int64]  # one past its delimiter
    kinds: NDArray[np.int8]  # 1 HELLO, 2 PIEZO, 3 LOAD, 4 STATUS, 5 ACK
    t0: F64  # stream time each frame covers
    t1: F64


def hello_body(tower: Tower, n_load: int) -> bytes:
    return bytes([1, 1, 4, 2, 8, n_load]) + tower.piezo_rate_hello.to_bytes(2, "little") \
        + tower.load_rate_hello.to_bytes(2, "little") + bytes([10]) \
        + bytes.fromhex(tower.device_id)


def build_stream(tower: Tower, timing: Timing, piezo: NDArray[np.uint16],
                 load: tuple[NDArray[np.int64], NDArray[np.uint8]] | None, n_load: int,
                 t_us0: int, seq0: int, uptime0_ms: int, with_ack: bool) -> Stream:
    """Order the messages as the firmware sends them and frame them."""
    nf = timing.frame_n
    fs = timing.frame_start
    n_frames = len(fs)
    rate = tower.piezo_rate_true
    p_emit = (fs + nf - 1) / rate + 0.0004
    l_emit = timing.load_t + 0.0006 if load is not None else np.zeros(0)
    dur = float(timing.piezo_t[-1]) if len(timing.piezo_t) else 0.0
    s_t = np.arange(1.0, dur, 1.0) + 0.0002
    head = 2 if with_ack else 1
    emit = np.concatenate([np.full(head, -1.0) + np.arange(head) * 1e-4, p_emit, l_emit, s_t])
    kind = np.concatenate([np.array([1, 5][:head], np.int8), np.full(n_frames, 2, np.int8),
                           np.full(len(l_emit), 3, np.int8), np.full(len(s_t), 4, np.int8)])
    local = np.concatenate([np.arange(head), np.arange(n_frames), np.arange(len(l_emit)),
                            np.arange(len(s_t))])
    order = np.lexsort((kind, emit))
    seq = np.empty(len(order), np.int64)
    seq[order] = (seq0 + np.arange(len(order))) % 65536
    rows: dict[int, U8] = {}
    # PIEZO
    sel = kind == 2
    pseq = seq[sel][np.argsort(local[sel])]
    t_us = (t_us0 + np.rint(fs / rate * 1e6).astype(np.int64)) % U32
    samples = piezo[: n_frames * nf].reshape(n_frames, nf * 8)
    raw = np.concatenate([np.full((n_frames, 1), 2, np.uint8), _le(pseq, "<u2", 2),
                          _le(t_us, "<u4", 4), np.full((n_frames, 1), nf, np.uint8),
                          _le(samples.reshape(-1), "<u2", 2).reshape(n_frames, nf * 16)], axis=1)
    rows[2] = _finish_rows(raw)
    if load is not None and len(l_emit):
        counts, valid = load
        m = len(l_emit)
        sel = kind == 3
        lseq = seq[sel][np.argsort(local[sel])]
        lt_us = (t_us0 + np.rint(timing.load_t * 1e6).astype(np.int64)) % U32
        s24 = (counts & 0xFFFFFF).astype(np.uint32)
        b = _le(s24.reshape(-1), "<u4", 4).reshape(m, 8, 4)[:, :, :3].reshape(m, 24)
        raw = np.concatenate([np.full((m, 1), 3, np.uint8), _le(lseq, "<u2", 2),
                              _le(lt_us, "<u4", 4), valid[:, None], b], axis=1)
        rows[3] = _finish_rows(raw)
    if len(s_t):
        m = len(s_t)
        sel = kind == 4
        sseq = seq[sel][np.argsort(local[sel])]
        up = uptime0_ms + np.rint(s_t * 1000).astype(np.int64)
        zeros2 = np.zeros((m, 2), np.uint8)
        timeouts = np.zeros(m, np.int64)
        cpu = np.full((m, 1), 38 + tower.seed % 20, np.uint8)
        raw = np.concatenate([np.full((m, 1), 4, np.uint8), _le(sseq, "<u2", 2),
                              _le(up % U32, "<u4", 4), zeros2, zeros2,
                              _le(timeouts, "<u2", 2), cpu, np.zeros((m, 1), np.uint8)], axis=1)
        rows[4] = _finish_rows(raw)
    head_frames = [frame(bytes([1]) + int(seq[0]).to_bytes(2, "little")
                         + hello_body(tower, n_load))]
    if with_ack:
        head_frames.append(frame(bytes([5]) + int(seq[1]).to_bytes(2, "little")
                                 + bytes([0x81]) + (tower.seed * 7919 % 65536).to_bytes(2, "little")
                                 + bytes([0])))
    blobs = {k: v.tobytes() for k, v in rows.items()}
    widths = {k: v.shape[1] for k, v in rows.items()}
    parts: list[bytes] = []
    lengths = np.empty(len(order), np.int64)
    t0 = np.empty(len(order))
    t1 = np.empty(len(order))
    set_dt = 1 / rate
    for pos, i in enumerate(order.tolist()):
        k = int(kind[i])
        j = int(local[i])
        if k in (1, 5):
            part = head_frames[j]
            t0[pos] = t1[pos] = 0.0
        else:
            w = widths[k]
            part = blobs[k][j * w:(j + 1) * w]
            if k == 2:
                t0[pos] = fs[j] / rate
                t1[pos] = t0[pos] + (nf - 1) * set_dt
            elif k == 3:
                t0[pos] = t1[pos] = timing.load_t[j]
            else:
                t0[pos] = t1[pos] = s_t[j]
        parts.append(part)
        lengths[pos] = len(part)
    ends = np.cumsum(lengths)
    return Stream(b"".join(parts), ends - lengths, ends, kind[order], t0, t1)


# --------------------------------------------------------------------------------------
# Damage
# --------------------------------------------------------------------------------------


def decode_frames(data: bytes) -> list[bytes]:
    """Our own receiver: the CRC-valid messages (type|seq|body) in ``data``."""
    out: list[bytes] = []
    for chunk in data.split(b"\x00"):
        if not chunk:
            continue
        msg = _cobs_decode(chunk)
        if msg is None or len(msg) < 5:
            continue
        if crc16_ccitt_false(msg[:-2]) == int.from_bytes(msg[-2:], "little"):
            out.append(msg[:-2])
    return out


def _cobs_decode(chunk: bytes) -> bytes | None:
    out = bytearray()
    i = 0
    n = len(chunk)
    while i < n:
        code = chunk[i]
        if code == 0 or i + code > n:
            return None
        out += chunk[i + 1:i + code]
        i += code
        if code < 255 and i < n:
            out.append(0)
    return bytes(out)


def apply_damage(clean: Stream, r: np.random.Generator, duration: float,
                 pull: tuple[str, float, float] | None) -> tuple[bytes, list[dict[str, Any]],
                                                                  int | None]:
    """The clean stream with damage, up to a cable pull if there is one.

    Returns the damaged bytes, the damaged spans (stream seconds of the clean
    twin) and, with a pull, the index of the first frame the device sends again.
    """
    data = clean.data
    spans: list[dict[str, Any]] = []
    edits: list[tuple[int, int, bytes]] = []  # replace data[a:b] by bytes
    starts, ends = clean.starts, clean.ends
    n_fr = len(starts)

    def frame_at(byte: int) -> int:
        return min(n_fr - 1, int(np.searchsorted(ends, byte, side="right")))

    def span(fa: int, fb: int, kind: str, **extra: Any) -> None:
        fa, fb = max(0, fa), min(n_fr - 1, fb)
        spans.append({"t_start": round(float(clean.t0[fa:fb + 1].min()) - 0.002, 4),
                      "t_end": round(float(clean.t1[fa:fb + 1].max()) + 0.002, 4),
                      "kind": kind, **extra})

    t_mid = (clean.t0 + clean.t1) / 2
    # A cable pull: nothing for 1-2 s, then the device continues or boots again.
    cut_at, i_back = len(data), None
    last_t = duration - 3.0
    if pull is not None:
        kind, tp, gap = pull
        i_cut = int(np.argmax(t_mid >= tp))
        i_back = int(np.argmax(t_mid >= tp + gap))
        at = int(starts[i_cut]) + int(r.integers(0, int(ends[i_cut] - starts[i_cut])))
        span(i_cut, i_back, kind, gap_s=round(gap, 3))
        if kind == "unplug":  # the USB link comes back mid-frame; the device never stopped
            edits.append((at, int(starts[i_back]) + int(r.integers(0, 20)), b""))
        else:  # the rest is sent by a rebooted device (rebooted_tail)
            cut_at = at
            last_t = tp - 5.0
    # Other damage, spaced out, after the quiet start and not in the last 3 s.
    basic = ["bitflip", "lost", "garbage", "duplicate"]
    kinds = [basic[i] for i in r.permutation(4)] + ["lost", "bitflip"]
    n_dmg = max(3, int(duration / 20))
    slots = np.sort(r.uniform(6.0, max(6.5, last_t), n_dmg))
    used: list[float] = [pull[1] + pull[2] / 2] if pull is not None else []
    for i, ts in enumerate(slots.tolist()):
        if any(abs(ts - u) < 5.0 for u in used) or ts > last_t:
            continue
        used.append(ts)
        kind = kinds[i] if i < len(kinds) else kinds[int(r.integers(len(kinds)))]
        f = min(max(int(np.argmax(t_mid >= ts)), 1), n_fr - 2)
        b = int(starts[f]) + int(r.integers(0, int(ends[f] - starts[f])))
        if kind == "bitflip":
            n_flip = int(r.integers(1, 20))
            pos = np.unique(b + r.integers(0, int(r.integers(50, 6000)), n_flip))
            pos = pos[pos < cut_at - 1]
            for q in pos.tolist():
                edits.append((q, q + 1, bytes([data[q] ^ (1 << int(r.integers(8)))])))
            span(frame_at(int(pos.min())), frame_at(int(pos.max())) + 1, kind,
                 flips=len(pos))
        elif kind == "lost":
            size = int(np.exp(r.uniform(np.log(20), np.log(6000))))
            edits.append((b, min(cut_at, b + size), b""))
            span(frame_at(b), frame_at(b + size), kind, bytes=size)
        elif kind == "garbage":
            size = int(r.integers(2, 40))
            edits.append((b, b, r.integers(0, 256, size).astype(np.uint8).tobytes()))
            span(frame_at(b), frame_at(b) + 1, kind, bytes=size)
        else:  # a chunk delivered twice
            size = int(np.exp(r.uniform(np.log(50), np.log(4000))))
            e = min(cut_at, b + size)
            edits.append((e, e, data[b:e]))
            span(frame_at(b), frame_at(e) + 1, kind, bytes=e - b)
    # The recording begins mid-frame: the tail of a frame sent before the port was read.
    prefix = b""
    if r.random() < 0.6:
        lf = int(np.argmax(clean.kinds == 2))
        fr = data[int(starts[lf]):int(ends[lf])]
        prefix = bytes(fr[int(r.integers(1, len(fr) - 2)):])
        while decode_frames(prefix):
            prefix = prefix[1:]
        spans.append({"t_start": 0.0, "t_end": 0.0, "kind": "midframe",
                      "bytes": len(prefix)})
    edits.sort(key=lambda x: (x[0], x[1]))
    out = bytearray(prefix)
    pos_ = 0
    for a, b_, rep in edits:
        if a < pos_ or a >= cut_at:
            continue
        out += data[pos_:a]
        out += rep
        pos_ = max(pos_, b_)
    out += data[pos_:cut_at]
    return bytes(out), spans, i_back


def reboot_plan(r: np.random.Generator, duration: float) -> tuple[str, float, float] | None:
    """A cable pull: ("unplug": keeps running, "reboot": starts again), its start and gap."""
    if r.random() < 0.25 or duration < 30:
        return None
    kind = "reboot" if r.random() < 0.35 else "unplug"
    return kind, float(r.uniform(0.35 * duration, 0.8 * duration)), float(r.uniform(1.0, 2.2))


# --------------------------------------------------------------------------------------
# One recording
# --------------------------------------------------------------------------------------


def _truth(tower: Tower, scene: Scene, scenario: str, seed: int, n_load: int,
           t_us0: int) -> dict[str, Any]:
    dur = scene.duration
    lifts = [{"t": x["t"], "exposed": x["exposed"]} for x in scene.lifts]
    closes = [{"t": x["t_close"], "exposed": x["exposed"]} for x in scene.lifts]
    doc: dict[str, Any] = {
        "format": FORMAT, "scenario": scenario, "seed": seed, "duration_s": dur,
        "cells": tower.cells,
        "landings": scene.landings, "knockdowns": scene.knockdowns,
        "removals": scene.removals, "lifts": lifts, "closes": closes,
        "knocks": scene.knocks,
        "model": "P", "n_load": n_load, "load_stream": bool(n_load) and scenario != "acoustic",
        "t_us_first": t_us0,
        "clock_wraps": bool(t_us0 + dur * 1e6 >= U32),
        "tower": asdict(tower),
    }
    if scene.game is not None:
        doc["game"] = scene.game
    return doc


def _clock(seed: int, scenario: str, duration: float, r: np.random.Generator
           ) -> tuple[int, int, bool]:
    """(t_us of stream zero, device uptime ms at stream zero, host asked with GET_INFO)."""
    if scenario == "long" and seed % 3 != 0:
        t_us0 = U32 - int(r.uniform(0.15, 0.75) * duration * 1e6)
        return t_us0, t_us0 // 1000, True
    if seed % 4 == 0:
        t_us0 = U32 - int(r.uniform(10, 50) * 1e6)
        return t_us0, t_us0 // 1000, True
    if r.random() < 0.5:  # a fresh boot: the host opened the port and reset the board
        t_us0 = int(r.uniform(0.25, 1.5) * 1e6)
        return t_us0, t_us0 // 1000, False
    t_us0 = int(r.integers(0, U32 - int(duration * 1e6) - 1))
    return t_us0, t_us0 // 1000, True


def make_recording(seed: int, scenario: str, duration: float, out: Path
                   ) -> tuple[Path, Path]:
    """Write ``{scenario}_t{seed}.bin`` and its truth into ``out``; return both paths.

    ``damaged`` also writes ``damagedclean_t{seed}.*``, the same session undamaged.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    tower = make_tower(seed)
    scene = build_scene(tower, scenario, duration, seed)
    r = np.random.default_rng([seed, SCENARIO_CODE[scenario], 77])
    acoustic = scenario == "acoustic"
    n_load = 0 if acoustic and seed % 2 == 1 else 8
    timing = make_timing(tower, scene, r, 0 if acoustic else n_load)
    load = None if acoustic else load_counts(tower, scene, timing, r)
    piezo = piezo_codes(tower, scene, timing, r)
    t_us0, up0, with_ack = _clock(seed, scenario, duration, r)
    seq0 = int(r.integers(0, 65536)) if with_ack else 0
    stream = build_stream(tower, timing, piezo, load, n_load, t_us0, seq0, up0, with_ack)
    truth = _truth(tower, scene, scenario, seed, n_load, t_us0)
    bin_path = out / f"{scenario}_t{seed}.bin"
    truth_path = out / f"{scenario}_t{seed}.truth.json"
    if scenario != "damaged":
        bin_path.write_bytes(stream.data)
        truth_path.write_text(json.dumps(truth, indent=1))
        return bin_path, truth_path
    # The damaged twin.
    clean_bin = out / f"damagedclean_t{seed}.bin"
    clean_bin.write_bytes(stream.data)
    (out / f"damagedclean_t{seed}.truth.json").write_text(json.dumps(
        dict(truth, scenario="damagedclean"), indent=1))
    known = set(decode_frames(stream.data))
    for attempt in range(20):
        rd = np.random.default_rng([seed, SCENARIO_CODE[scenario], 99, attempt])
        plan = reboot_plan(rd, duration)
        data, spans, i_back = apply_damage(stream, rd, duration, plan)
        if plan is not None and plan[0] == "reboot" and i_back is not None:
            # The board lost power: it boots again (clock and seq from zero, HELLO
            # first) and sends what the clean twin sends from then on, re-stamped.
            boot = float(rd.uniform(0.2, 0.6))
            tail = rebooted_tail(stream, i_back, tower, n_load, t_us0, boot)
            known |= set(decode_frames(tail))
            data += tail
            next(x for x in spans if x["kind"] == "reboot")["t_us_after"] = int(boot * 1e6)
        if set(decode_frames(data)) <= known:  # no damaged frame passes its CRC by chance
            break
    spans.sort(key=lambda x: x["t_start"])
    truth["damage"] = spans
    bin_path.write_bytes(data)
    truth_path.write_text(json.dumps(truth, indent=1))
    return bin_path, truth_path


def rebooted_tail(stream: Stream, i_back: int, tower: Tower, n_load: int, t_us0: int,
                  boot: float) -> bytes:
    """The clean frames from ``i_back`` on, sent by a freshly booted device."""
    # A booting firmware sends one 0x00 first, so a receiver holding a frame cut by the
    # pull resynchronises before HELLO.
    parts = [b"\x00" + frame(bytes([1, 0, 0]) + hello_body(tower, n_load))]
    seq = 1
    t_new0 = float(stream.t0[i_back])
    shift = int(boot * 1e6) - int(round(t_new0 * 1e6)) - t_us0
    for i in range(i_back, len(stream.starts)):
        msg = _cobs_decode(stream.data[int(stream.starts[i]):int(stream.ends[i]) - 1])
        if msg is None or msg[0] in (1, 5):
            continue
        body = bytearray(msg[:-2])
        body[1:3] = (seq % 65536).to_bytes(2, "little")
        if body[0] in (2, 3):
            t = int.from_bytes(body[3:7], "little")
            body[3:7] = ((t + shift) % U32).to_bytes(4, "little")
        elif body[0] == 4:
            up = int(round((float(stream.t0[i]) - t_new0 + boot) * 1000))
            body[3:7] = up.to_bytes(4, "little")
        parts.append(frame(bytes(body)))
        seq += 1
    return b"".join(parts)


# --------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------


def _one(job: tuple[int, str, float, str]) -> tuple[str, int, int, float]:
    seed, scenario, duration, out = job
    started = time.perf_counter()
    _, truth_path = make_recording(seed, scenario, duration, Path(out))
    doc = json.loads(truth_path.read_text())
    return scenario, seed, len(doc["landings"]), time.perf_counter() - started


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, exit 2
        sys.stderr.write(f"make_recordings_p.py: error: {message}\n")
        raise SystemExit(2)


def main(argv: list[str] | None = None) -> int:
    """Command line: write the recordings of a range of towers."""
    p = _Parser(description=(__doc__ or "").split("\n")[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--towers", type=int, default=8)
    p.add_argument("--first-seed", type=int, default=1)
    p.add_argument("--duration", type=float, default=120.0)
    p.add_argument("--long-duration", type=float, default=1800.0)
    p.add_argument("--scenarios", nargs="+", default=list(DEFAULT_SCENARIOS))
    p.add_argument("--workers", type=int, default=2)
    args = p.parse_args(argv)
    if args.towers < 1:
        p.error("--towers must be at least 1")
    if args.first_seed < 0:
        p.error("--first-seed must be >= 0")
    if not args.duration >= MIN_DURATION_S or not args.long_duration >= MIN_DURATION_S:
        p.error(f"durations must be at least {MIN_DURATION_S:g} s")
    if args.workers < 1:
        p.error("--workers must be at least 1")
    bad = [s for s in args.scenarios if s not in ALL_SCENARIOS]
    if bad:
        p.error(f"unknown scenario {bad[0]!r} (choose from {', '.join(ALL_SCENARIOS)})")
    args.out.mkdir(parents=True, exist_ok=True)
    jobs = [(seed, s, args.long_duration if s == "long" else args.duration, str(args.out))
            for seed in range(args.first_seed, args.first_seed + args.towers)
            for s in args.scenarios]
    jobs.sort(key=lambda j: -j[2])
    started = time.perf_counter()
    if args.workers == 1 or len(jobs) == 1:
        results = [_one(j) for j in jobs]
    else:
        with ProcessPoolExecutor(max_workers=args.workers) as ex:
            results = list(ex.map(_one, jobs))
    counts: dict[str, int] = {}
    for scenario, _seed, n, _wall in results:
        counts[scenario] = counts.get(scenario, 0) + n
    print(f"{len(results)} recordings in {time.perf_counter() - started:.1f} s; landings: "
          + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
