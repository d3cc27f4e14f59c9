#!/usr/bin/env python3
"""Cross-check model AM: a 3D-printed tower on a night train.

A blind generator of test recordings for ``towerear detect`` (contracts.md sections
1-3) with their ground truth (the ``towerear-crosscheck-truth/1`` format that
tools/crosscheck/score.py reads). Its own wire encoder (COBS, CRC-16/CCITT-FALSE,
message layouts, vectorised over messages); imports numpy, scipy and the standard
library only.

The scene: a board-game club plays in the dining car of an overnight train with a
tower one member printed in PETG. What that does to the sensors and the game is the
point (README.md gives every figure and where it came from):

- PETG plates: stiffer and lighter than card, so higher, longer-ringing modes, more
  crosstalk through the shared printed frame, hot-glued discs of differing gain,
  bouncier cubes;
- the moving car: rail rumble on every disc (level with speed and track), wheel-over-
  joint clacks in pairs (the bogie's axles) at speed-dependent intervals, bursts of
  clacks over points, quiet station stops; the load cells feel the car's vertical
  acceleration in proportion to the mass on each plate, the tower rocks a little;
  curves, braking and lurches shift resting cubes and make a cube resting near a
  hole slide off and drop to a lower level with no throw;
- the 16.7 Hz traction current: a hum in the load readings (aliased by the HX711's
  rate) and on the piezo lines, and bursts of spikes on several channels at once when
  the train passes a neutral section;
- people: single throws, quick series, full games by the rules with lifts, removals
  and throw-backs; a waiter brushing the table, glasses clinking, a hand steadying the
  tower when the car lurches.

Usage::

    .venv/bin/python tools/crosscheck_am/make_recordings_am.py --out /tmp/am --towers 8 \
        --first-seed 1 --duration 120 [--scenarios single rapid noisy game]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

import numpy as np
from scipy import signal

MODEL = "AM"
SCENARIOS = ("single", "rapid", "noisy", "game")
COLOURS = ("yellow", "blue", "brown", "gray", "black", "white")
G = 9.80665
MODULE_H = 0.031  # m: a 25 cm tower of eight modules
CLEARANCE = 0.021  # m: how high a 10 mm cube can rise in a module before the plate above
LOAD_GRID_HZ = 1000.0  # Hz: the fine grid of the load-cell model
TRACTION_HZ = 16.7  # Hz: 15 kV 16.7 Hz railway traction supply (DE/AT/CH/SE/NO)
AXLES_M = (0.0, 2.5, 19.0, 21.5)  # m: axle positions of a UIC coach (2.5 m bogies, 19 m apart)
CMD_GET_INFO = 0x81
U32 = 2**32
ADC_CH_US = 52.0  # us: one conversion, 13 ADC clocks at 250 kHz (16 MHz / 64)
# How much of an impact's impulse reaches the struck plate's cell (sign: direction).
LOAD_SHARE = {"plate": 1.0, "bounce": 1.0, "tick": 1.0, "rim": 1.0, "ceiling": -1.0,
              "entry": 0.0, "close": 0.3, "lift": 0.1, "touch": 0.3, "click": 0.5,
              "clink": 0.05, "jolt": 0.0, "slide": 0.3}
# Contact time (ms) by kind; cube strikes use the tower's (wood on PETG).
CONTACT_MS = {"clink": 0.07, "touch": 2.0, "click": 0.5, "close": 1.0, "lift": 1.5,
              "jolt": 1.5}


# -- wire: CRC, COBS, message layouts ------------------------------------------------------

def _crc_table() -> np.ndarray:
    tab = np.zeros(256, np.uint32)
    for i in range(256):
        c = i << 8
        for _ in range(8):
            c = ((c << 1) ^ 0x1021) if c & 0x8000 else (c << 1)
        tab[i] = c & 0xFFFF
    return tab


CRC_TABLE = _crc_table()


def crc16_ccitt_false(data: bytes) -> int:
    """CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, not reflected, xorout 0)."""
    crc = 0xFFFF
    for b in data:
        crc = ((crc << 8) & 0xFFFF) ^ int(CRC_TABLE[((crc >> 8) ^ b) & 0xFF])
    return crc


def crc16_rows(rows: np.ndarray) -> np.ndarray:
    """The CRC of every row of a uint8 array (all rows the same length)."""
    crc = np.full(rows.shape[0], 0xFFFF, np.uint32)
    for j in range(rows.shape[1]):
        crc = ((crc << 8) & 0xFFFF) ^ CRC_TABLE[((crc >> 8) ^ rows[:, j]) & 0xFF]
    return crc


def cobs_encode(data: bytes) -> bytes:
    """Plain COBS (no trailing delimiter)."""
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


def cobs_decode(enc: bytes) -> bytes | None:
    """Plain COBS decoding; None when the bytes are not valid COBS."""
    out = bytearray()
    i = 0
    while i < len(enc):
        code = enc[i]
        if code == 0 or i + code > len(enc):
            return None
        block = enc[i + 1:i + code]
        if 0 in block or len(block) != code - 1:
            return None
        out += block
        i += code
        if code < 255 and i < len(enc):
            out.append(0)
    return bytes(out)


def cobs_rows(rows: np.ndarray) -> np.ndarray:
    """COBS of every row (rows shorter than 254 bytes) plus the 0x00 delimiter."""
    n, length = rows.shape
    assert length < 254
    ext = np.zeros((n, length + 2), np.int64)
    ext[:, 1:length + 1] = rows
    idx = np.arange(length + 2)
    zero_at = np.where(ext == 0, idx, length + 10)
    zero_at[:, 0] = length + 10  # position 0 is the code byte itself, look beyond it
    nxt = np.minimum.accumulate(zero_at[:, ::-1], axis=1)[:, ::-1]
    nxt_after = np.empty_like(nxt)
    nxt_after[:, :-1] = nxt[:, 1:]
    nxt_after[:, -1] = length + 1
    nxt_after = np.minimum(nxt_after, length + 1)
    out = np.where(ext == 0, nxt_after - idx, ext)[:, :length + 1]
    enc = np.zeros((n, length + 2), np.uint8)
    enc[:, :length + 1] = out
    return enc


def message(msg_type: int, seq: int, body: bytes) -> bytes:
    """A message before framing: type, seq, body, CRC."""
    head = bytes([msg_type, seq & 0xFF, (seq >> 8) & 0xFF]) + body
    return head + crc16_ccitt_false(head).to_bytes(2, "little")


def frame(msg_type: int, seq: int, body: bytes) -> bytes:
    """A framed message: COBS plus the 0x00 delimiter."""
    return cobs_encode(message(msg_type, seq, body)) + b"\x00"


def _frames_of(msg_type: int, seqs: np.ndarray, bodies: np.ndarray) -> list[bytes]:
    """Framed messages of one type, one per row of ``bodies``, vectorised."""
    n = bodies.shape[0]
    rows = np.zeros((n, 3 + bodies.shape[1] + 2), np.uint8)
    rows[:, 0] = msg_type
    rows[:, 1] = seqs & 0xFF
    rows[:, 2] = (seqs >> 8) & 0xFF
    rows[:, 3:3 + bodies.shape[1]] = bodies
    crc = crc16_rows(rows[:, :-2])
    rows[:, -2] = crc & 0xFF
    rows[:, -1] = (crc >> 8) & 0xFF
    enc = cobs_rows(rows)
    return [r.tobytes() for r in enc]


def _u32_cols(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, np.int64) % U32
    return np.stack([(x >> (8 * i)) & 0xFF for i in range(4)], axis=1).astype(np.uint8)


# -- the tower -----------------------------------------------------------------------------

@dataclass
class Tower:
    """Every figure of one printed tower and its electronics (all drawn from the seed)."""

    seed: int
    device_id: bytes
    fw: tuple[int, int, int]
    piezo_rate_hz: int
    batch: int
    load_rate_hz: int
    hx_rate_err: float
    clock: str
    clock_ppm: float
    bias: np.ndarray
    adc_noise: np.ndarray
    side_m: np.ndarray
    thick_m: float
    f1: np.ndarray
    ratios: np.ndarray
    mode_amp: np.ndarray
    q: np.ndarray
    glue: np.ndarray
    sens: np.ndarray
    xt: np.ndarray
    xt_delay_us: float
    acc_lsb: np.ndarray
    ac_hz: float
    plate_g: np.ndarray
    cap_g: float
    ro_mv_v: np.ndarray
    cpg: np.ndarray
    zero_counts: np.ndarray
    hx_noise: float
    offaxis: np.ndarray
    rock_hz: float
    rock_frac: float
    hum_load: np.ndarray
    hum_pz: np.ndarray
    hum_float: float
    stop_odds: np.ndarray
    rim_odds: float
    hop_odds: float
    e_mean: float
    cube_g: float
    near_hole_odds: float
    slide_odds: float
    kd_base: float
    kd_near: float
    table_x_m: float
    rail_m: float
    contact_ms: float

    def figures(self) -> dict[str, Any]:
        """The tower's figures as JSON-able values (for the truth)."""
        out: dict[str, Any] = {}
        for k, v in self.__dict__.items():
            if isinstance(v, np.ndarray):
                out[k] = np.round(v, 6).tolist()
            elif isinstance(v, bytes):
                out[k] = v.hex()
            elif isinstance(v, float):
                out[k] = round(v, 6)
            else:
                out[k] = v
        return json.loads(json.dumps(out))


def _u(rng: np.random.Generator, lo: float, hi: float) -> float:
    return float(rng.uniform(lo, max(lo, hi)))  # short recordings: an empty range is lo


PETG_E = 2.05e9  # Pa, PETG datasheet (about 2.0-2.1 GPa)
PETG_RHO = 1270.0  # kg/m^3, PETG datasheet
PETG_NU = 0.38  # Poisson's ratio of PETG (about 0.37-0.40)
MODE_RATIOS = (1.0, 2.04, 3.01, 3.66)  # clamped square plate (Leissa)


def make_tower(seed: int) -> Tower:
    """Draw one tower from its seed."""
    rng = np.random.default_rng([seed, 0xA3, 1])
    piezo_rate = int(rng.choice([2000, 1600, 1250], p=[0.6, 0.28, 0.12]))
    load_rate = int(rng.choice([80, 10], p=[0.75, 0.25]))
    clock = "crystal" if rng.random() < 0.4 else "resonator"
    ppm = _u(rng, -50, 50) if clock == "crystal" else _u(rng, -5000, 5000)
    side = 0.070 - 0.001 * np.arange(8) + rng.normal(0, 0.0005, 8)  # printed a bit smaller up
    thick = float(rng.choice([0.0012, 0.0016, 0.0020]))  # 6, 8 or 10 layers of 0.2 mm
    fill = _u(rng, 0.55, 0.75)  # solid skins, sparse infill: the plate's mass fraction
    d_flex = PETG_E * thick**3 / (12 * (1 - PETG_NU**2))  # the skins carry the bending
    lam2 = _u(rng, 28.0, 36.0)  # between simply supported (19.7) and clamped (36.0)
    f1 = lam2 / (2 * np.pi * side**2) * np.sqrt(d_flex / (PETG_RHO * thick * fill))
    f1 = f1 * rng.uniform(0.93, 1.07, 8)  # the hole, the print, the mount
    ratios = np.array(MODE_RATIOS)[None, :] * rng.uniform(0.96, 1.04, (8, 4))
    ratios[:, 0] = 1.0
    mode_amp = np.column_stack([np.ones(8), rng.uniform(0.4, 0.8, 8),
                                rng.uniform(0.25, 0.5, 8), rng.uniform(0.15, 0.35, 8)])
    q1 = rng.uniform(40, 90, 8)  # PETG loss factor ~0.01-0.02, less the mount's losses
    q = np.column_stack([q1, q1 * 0.85, q1 * 0.75, q1 * 0.65])
    glue = rng.uniform(0.6, 1.5, 8)  # hot glue: each disc coupled differently
    sens = _u(rng, 120, 260) * glue  # LSB per mN s
    near = _u(rng, 0.15, 0.32)
    far = _u(rng, 0.25, 0.45)
    dist = np.abs(np.subtract.outer(np.arange(8), np.arange(8)))
    xt = np.where(dist == 0, 1.0, near * far ** (dist - 1.0)) * rng.uniform(0.85, 1.15, (8, 8))
    np.fill_diagonal(xt, 1.0)
    # the printed plate, plus the brass disc (about 1 g) and its hot glue
    plate_g = (side**2 - 0.012**2) * thick * PETG_RHO * fill * 1000 + rng.uniform(1.0, 1.6, 8)
    ro = _u(rng, 0.85, 1.15) * rng.uniform(0.98, 1.02, 8)
    cap = 100.0
    cpg = ro * 1e-3 * 128 * 2**24 / cap
    zero = rng.uniform(-0.015, 0.015, 8) * cap * cpg + plate_g * cpg
    return Tower(
        seed=seed, device_id=bytes(rng.integers(0, 256, 8, dtype=np.uint8)),
        fw=(1, int(rng.integers(0, 4)), int(rng.integers(0, 10))),
        piezo_rate_hz=piezo_rate, batch=int(rng.choice([6, 8, 10, 12, 14])),
        load_rate_hz=load_rate, hx_rate_err=_u(rng, -0.03, 0.03),
        clock=clock, clock_ppm=ppm,
        bias=512 + rng.normal(0, 1.2, 8), adc_noise=rng.uniform(0.35, 0.8, 8),
        side_m=side, thick_m=thick, f1=f1, ratios=ratios, mode_amp=mode_amp, q=q,
        glue=glue, sens=sens, xt=xt, xt_delay_us=_u(rng, 25, 60),
        acc_lsb=_u(rng, 10, 25) * rng.uniform(0.7, 1.3, 8), ac_hz=_u(rng, 5, 15),
        plate_g=plate_g, cap_g=cap, ro_mv_v=ro, cpg=cpg, zero_counts=zero,
        hx_noise=(45.0 if load_rate == 80 else 25.0) * _u(rng, 0.9, 1.2),
        offaxis=rng.uniform(0.02, 0.08, 8) * rng.choice([-1, 1], 8),
        rock_hz=_u(rng, 3, 8), rock_frac=_u(rng, 0.002, 0.01),
        hum_load=_u(rng, 400, 2500) * rng.uniform(0.6, 1.4, 8),
        hum_pz=_u(rng, 0.3, 1.5) * rng.uniform(0.6, 1.4, 8), hum_float=_u(rng, 2, 8),
        stop_odds=np.clip(_u(rng, 0.26, 0.4) + rng.normal(0, 0.05, 8), 0.12, 0.6),
        rim_odds=_u(rng, 0.2, 0.35), hop_odds=_u(rng, 0.04, 0.1),
        e_mean=_u(rng, 0.35, 0.55), cube_g=_u(rng, 0.5, 0.75),
        near_hole_odds=_u(rng, 0.04, 0.08), slide_odds=_u(rng, 0.15, 0.35),
        kd_base=_u(rng, 0.005, 0.02), kd_near=0.03, table_x_m=_u(rng, 2.0, 12.0), rail_m=float(
            rng.choice([18.0, 24.0, 30.0])), contact_ms=_u(rng, 0.1, 0.3),
    )


# -- the scene -----------------------------------------------------------------------------

@dataclass
class Impact:
    """A strike on a plate: time, level (8 = the top roof), impulse (mN s), kind."""

    t: float
    level: int
    j: float
    kind: str


@dataclass
class Train:
    """The train's run during one recording, on a 100 Hz grid."""

    t: np.ndarray
    v: np.ndarray  # m/s
    rough: np.ndarray  # track roughness factor (1 smooth welded, ~1.8 rough)
    current: np.ndarray  # traction current, fraction of cruising
    pos: np.ndarray  # m
    phases: list[dict[str, Any]] = field(default_factory=list)
    clacks: list[tuple[float, float]] = field(default_factory=list)  # (t, m/s^2 peak)
    points: list[dict[str, float]] = field(default_factory=list)
    lurches: list[dict[str, Any]] = field(default_factory=list)
    neutral: list[dict[str, Any]] = field(default_factory=list)
    lat_slow: list[dict[str, float]] = field(default_factory=list)  # curves and braking

    def at(self, x: np.ndarray, t: float | np.ndarray) -> Any:
        return np.interp(t, self.t, x)


class Scene:
    """Everything that happens in one recording, in stream seconds (device clock)."""

    def __init__(self, tw: Tower, scenario: str, duration: float,
                 rng: np.random.Generator) -> None:
        self.tw = tw
        self.scenario = scenario
        self.duration = duration
        self.rng = rng
        self.quiet_until = 0.0
        self.train: Train = still_train(duration)
        self.impacts: list[Impact] = []
        self.steps: list[tuple[float, int, float]] = []  # (t, level, grams)
        self.presses: list[dict[str, Any]] = []  # t0, t1, level, grams, tremor
        self.scrapes: list[tuple[float, float, int, float]] = []  # t, dur, level, lsb
        self.resting: list[list[dict[str, Any]]] = [[] for _ in range(8)]
        self.landings: list[dict[str, Any]] = []
        self.knockdowns: list[dict[str, Any]] = []
        self.removals: list[dict[str, Any]] = []
        self.lifts: list[dict[str, Any]] = []
        self.closes: list[dict[str, Any]] = []
        self.knocks: list[dict[str, Any]] = []
        self.shifts: list[dict[str, Any]] = []
        self.waiters: list[tuple[float, float]] = []  # (t, m/s^2)
        self.clinks: list[tuple[float, float]] = []  # (t, mN s at level 0)
        self.open_spans: list[tuple[float, float, int]] = []  # lift, close, exposed
        self.lurch_next = 0
        self.next_fid = 0
        self.game: dict[str, Any] | None = None
        self.session: dict[str, Any] = {}
        self.rumble_scale = 1.0
        self.floor_hz = _u(rng, 30, 80)  # the car floor and table under a wheel's jolt
        self.table_hz = _u(rng, 12, 30)  # the dining table's rocking when brushed
        self.hum_phase = _u(rng, 0, 2 * math.pi)

    # cubes -----------------------------------------------------------------------------
    def new_cube(self, colour: str) -> dict[str, Any]:
        cube = {"fid": self.next_fid, "colour": colour,
                "mass_g": round(self.tw.cube_g * float(self.rng.uniform(0.96, 1.04)), 5),
                "e": float(np.clip(self.tw.e_mean * self.rng.uniform(0.9, 1.1), 0.2, 0.7))}
        self.next_fid += 1
        return cube

    def is_open(self, t: float, margin: float = 0.0) -> bool:
        return any(a - margin <= t <= b + margin for a, b, _ in self.open_spans)

    def throw(self, t_release: float, cube: dict[str, Any], style: str = "normal",
              **label: Any) -> dict[str, Any]:
        """Release a cube above the entry; returns its landing (the truth's entry)."""
        self.advance(t_release)
        rng = self.rng
        h0, v0 = {"soft": (_u(rng, 0.0, 0.03), _u(rng, 0.0, 0.2)),
                  "normal": (_u(rng, 0.03, 0.10), _u(rng, 0.2, 0.8)),
                  "hard": (_u(rng, 0.05, 0.15), _u(rng, 1.2, 2.5))}[style]
        land = {"kind": label.pop("kind", "throw"), "style": style, "knocked": False,
                "t_release": t_release, **label}
        impacts: list[list[Any]] = []
        t_entry = t_release + fall_time(v0, h0)
        v = math.sqrt(v0**2 + 2 * G * h0)
        if rng.random() < 0.2:  # the cube clips the entry's rim (the top roof, no sensor)
            j = cube["mass_g"] * 1e-3 * v * 1e3 * _u(rng, 0.1, 0.4)
            self._impact(t_entry, 8, j, "entry", impacts)
            v *= _u(rng, 0.7, 0.9)
        self._fall(cube, 7, t_entry, v, land, impacts, by_fid=None)
        return land

    def _impact(self, t: float, level: int, j: float, kind: str,
                impacts: list[list[Any]] | None) -> None:
        self.impacts.append(Impact(t, level, j, kind))
        if impacts is not None:
            impacts.append([round(t, 6), level, round(j, 5), kind])

    def _fall(self, cube: dict[str, Any], level: int, t: float, v: float,
              land: dict[str, Any], impacts: list[list[Any]], by_fid: int | None) -> None:
        """A cube passing the top of module ``level`` at speed ``v`` falls on to its rest."""
        rng = self.rng
        tw = self.tw
        m = cube["mass_g"] * 1e-3
        lv = level
        t_now = t
        while True:
            t_now += fall_time(v, MODULE_H)
            v = math.sqrt(v**2 + 2 * G * MODULE_H)
            if lv == 0 or rng.random() < tw.stop_odds[lv]:
                break
            if rng.random() < tw.rim_odds:  # clips the hole's rim on its way through
                self._impact(t_now, lv, m * v * 1e3 * _u(rng, 0.1, 0.4), "rim", impacts)
                v *= _u(rng, 0.75, 0.95)
            lv -= 1
        # on the plate of level lv at t_now with speed v: bounces
        land.setdefault("t_first_impact", impacts[0][0] if impacts else t_now)
        t_on = t_now
        e = cube["e"]
        knocked_one = False
        n_strike = 0
        while True:
            j = m * v * (1 + e) * 1e3
            self._impact(t_now, lv, j, "plate" if n_strike == 0 else "bounce", impacts)
            n_strike += 1
            if by_fid is None and n_strike == 1 and not self.is_open(t_now):
                knocked_one = self._maybe_knock(lv, t_now, j, cube["fid"])
            vb = e * v
            if vb < 0.12:
                break
            if lv > 0 and vb > 0.3 and rng.random() < tw.hop_odds:  # hops into the hole
                t_now += vb / G
                self._fall(cube, lv - 1, t_now, 0.05, land, impacts, by_fid)
                if knocked_one:
                    land["caused_knockdown"] = True
                return
            flight = 2 * vb / G
            if vb**2 / (2 * G) > CLEARANCE and rng.random() < 0.5:
                vc = math.sqrt(vb**2 - 2 * G * CLEARANCE)
                t_c = t_now + (vb - vc) / G
                self._impact(t_c, min(lv + 1, 8), m * vc * (1 + e) * 1e3, "ceiling", impacts)
                flight = (vb - vc) / G + (math.sqrt(2 * G * CLEARANCE) / G)
                vb = math.sqrt(2 * G * CLEARANCE)
            t_now += flight
            v = vb
        t_last = t_now
        for _ in range(int(rng.integers(1, 4))):  # tumbling ticks
            t_now += _u(rng, 0.008, 0.04)
            self._impact(t_now, lv, _u(rng, 0.01, 0.05), "tick", impacts)
        t_rest = t_now + _u(rng, 0.005, 0.03)
        near = lv > 0 and rng.random() < tw.near_hole_odds
        self.steps.append((t_last, lv, cube["mass_g"]))
        self.resting[lv].append({**cube, "near_hole": near, "t": t_rest})
        land.update({"t": t_rest, "floor": lv, "cubes": 1, "fid": cube["fid"],
                     "colour": cube["colour"], "mass_g": cube["mass_g"],
                     "restitution": round(e, 4), "t_on_plate": t_on, "near_hole": near,
                     "impacts": impacts})
        if knocked_one:
            land["caused_knockdown"] = True
        self.landings.append(land)

    def _maybe_knock(self, lv: int, t: float, j: float, fid: int) -> bool:
        rng = self.rng
        others = [c for c in self.resting[lv] if c["fid"] != fid]
        if not others or j < 0.3 or lv == 0:
            return False
        n_near = sum(c["near_hole"] for c in others)
        p = min(0.15, self.tw.kd_base * (1 - math.exp(-len(others) / 4)) * min(2.0, j)
                + self.tw.kd_near * n_near * min(1.0, j / 0.5))
        if rng.random() >= p:
            return False
        weights = np.array([4.0 if c["near_hole"] else 1.0 for c in others])
        victim = others[int(rng.choice(len(others), p=weights / weights.sum()))]
        self._drop_off(victim, lv, t + _u(rng, 0.005, 0.03), _u(rng, 0.1, 0.35),
                       "strike", fid)
        return True

    def _drop_off(self, cube: dict[str, Any], lv: int, t: float, v: float, cause: str,
                  by_fid: int | None) -> None:
        """A resting cube leaves level ``lv`` through its hole and falls on."""
        self.resting[lv] = [c for c in self.resting[lv] if c["fid"] != cube["fid"]]
        self.steps.append((t, lv, -cube["mass_g"]))
        land: dict[str, Any] = {"kind": "slid" if cause == "slide" else "knocked",
                                "knocked": True, "knocked_from": lv, "t_release": t,
                                "t_first_impact": t}
        impacts: list[list[Any]] = []
        self._fall({k: cube[k] for k in ("fid", "colour", "mass_g", "e")}, lv - 1, t, v,
                   land, impacts, by_fid=cube["fid"])
        land["t_first_impact"] = impacts[0][0] if impacts else land["t"]
        self.knockdowns.append({"t": t, "from": lv, "to": land["floor"], "fid": cube["fid"],
                                "by_fid": by_fid, "cause": cause})

    # the train's lurches: shifts, slide-offs, steadying hands ------------------------------
    def advance(self, t: float) -> None:
        """Apply the lurches up to ``t`` to the cubes at rest."""
        lurches = self.train.lurches
        while self.lurch_next < len(lurches) and lurches[self.lurch_next]["t"] <= t:
            self._lurch(lurches[self.lurch_next])
            self.lurch_next += 1

    def _lurch(self, lu: dict[str, Any]) -> None:
        rng = self.rng
        t, a = lu["t"], lu["peak_ms2"]
        if self.is_open(t, 1.0):
            return
        for lv in range(8):
            for c in list(self.resting[lv]):
                if c["t"] > t:
                    continue
                if lv > 0 and c["near_hole"] and rng.random() < self.tw.slide_odds * min(
                        1.0, max(0.0, (a - 0.3) / 0.8)):
                    ts = t + _u(rng, 0.05, 0.3)
                    self.scrapes.append((ts - 0.08, 0.08, lv, _u(rng, 1.0, 3.0)))
                    self._drop_off(c, lv, ts, _u(rng, 0.05, 0.15), "slide", None)
                    continue
                if rng.random() < min(0.5, 0.25 * a):  # shifts on the plate
                    dm = c["mass_g"] * _u(rng, 0.005, 0.025) * float(rng.choice([-1, 1]))
                    ts = t + _u(rng, 0.02, 0.2)
                    self.steps.append((ts, lv, dm))
                    self.scrapes.append((ts, _u(rng, 0.05, 0.2), lv, _u(rng, 0.5, 2.5)))
                    self.shifts.append({"t": round(ts, 6), "level": lv, "fid": c["fid"],
                                        "grams": round(dm, 5)})
                    if rng.random() < 0.1 and lv > 0:
                        c["near_hole"] = True  # it may now rest by the hole
        if lu.get("hand"):
            self.hand(t + _u(rng, 0.1, 0.3), _u(rng, 1.0, 2.5), lu["hand"])

    # people ------------------------------------------------------------------------------
    def hand(self, t0: float, dur: float, levels: list[int]) -> None:
        """A hand steadies the tower: it presses on ``levels`` for ``dur`` seconds."""
        rng = self.rng
        for lv in levels:
            self.presses.append({"t0": t0, "t1": t0 + dur, "level": lv,
                                 "grams": _u(rng, 1.0, 6.0), "tremor": _u(rng, 0.05, 0.15)})
            self._impact(t0 + _u(rng, 0, 0.02), lv, _u(rng, 0.03, 0.15), "touch", None)
            self._impact(t0 + dur - _u(rng, 0, 0.02), lv, _u(rng, 0.02, 0.1), "touch", None)
            self.scrapes.append((t0, dur, lv, _u(rng, 0.5, 2.0)))
        self.knocks.append({"t": t0, "t_end": t0 + dur, "kind": "hand", "levels": levels})

    def waiter(self, t: float) -> None:
        a = _u(self.rng, 0.5, 2.0)
        self.waiters.append((t, a))
        self.knocks.append({"t": t, "t_end": t + 0.4, "kind": "waiter", "peak_ms2": a})

    def clink(self, t: float) -> None:
        j0 = _u(self.rng, 0.1, 0.5)
        self.clinks.append((t, j0))
        att = _u(self.rng, 0.45, 0.7)
        for lv in range(8):
            self._impact(t + lv * 4e-5, lv, j0 * att**lv, "clink", None)
        self.knocks.append({"t": t, "t_end": t + 0.05, "kind": "glass", "j0": round(j0, 4)})

    def lift(self, t: float, exposed: int) -> None:
        rng = self.rng
        self.lifts.append({"t": t, "exposed": exposed})
        self._impact(t, exposed, _u(rng, 0.1, 0.3), "lift", None)

    def close(self, t: float, exposed: int, t_lift: float) -> None:
        rng = self.rng
        self.closes.append({"t": t, "exposed": exposed})
        self._impact(t, exposed, _u(rng, 1.0, 4.0), "close", None)
        self.open_spans.append((t_lift, t, exposed))
        for lv in {max(0, exposed - 1), exposed}:  # the hand holding the lower floors
            self.presses.append({"t0": t_lift - _u(rng, 0.3, 0.6), "t1": t + _u(rng, 0.1, 0.3),
                                 "level": lv, "grams": _u(rng, 0.1, 0.8), "tremor": 0.05})

    def remove(self, t: float, level: int, cubes: list[dict[str, Any]]) -> None:
        """Fingers press the open plate, then leave with ``cubes`` at ``t``."""
        rng = self.rng
        t0 = t - _u(rng, 0.2, 0.5)
        self.presses.append({"t0": t0, "t1": t, "level": level, "grams": _u(rng, 3, 10),
                             "tremor": 0.1})
        self._impact(t0, level, _u(rng, 0.02, 0.08), "click", None)
        fids = {c["fid"] for c in cubes}
        self.resting[level] = [c for c in self.resting[level] if c["fid"] not in fids]
        mass = sum(c["mass_g"] for c in cubes)
        self.steps.append((t, level, -mass))
        self.removals.append({"t": t, "floor": level, "cubes": len(cubes),
                              "mass_g": round(mass, 5), "fids": sorted(fids)})


def fall_time(v: float, d: float) -> float:
    """Time to fall ``d`` metres starting at ``v`` m/s downwards."""
    return (-v + math.sqrt(v * v + 2 * G * d)) / G


# -- the train -----------------------------------------------------------------------------

def still_train(duration: float) -> Train:
    t = np.arange(0, duration + 1.0, 0.01)
    z = np.zeros_like(t)
    return Train(t, z, np.ones_like(t), z + 0.35, z)


def plan_train(rng: np.random.Generator, scenario: str, duration: float, tw: Tower,
               quiet_until: float) -> Train:
    """Speed, track and electricity over the recording, and their events."""
    t = np.arange(0, duration + 1.0, 0.01)
    v = np.zeros_like(t)
    rough = np.ones_like(t)
    cur = np.full_like(t, 0.35)  # hotel load while standing
    phases: list[dict[str, Any]] = []
    v_cruise = _u(rng, 25, 44)  # 90-160 km/h
    acc, dec = _u(rng, 0.3, 0.5), _u(rng, 0.5, 0.9)
    # the timetable: single and game start at a station; rapid and noisy under way
    stand0 = _u(rng, 15, 30) if scenario in ("single", "game") else 0.0
    t_stop = duration * _u(rng, 0.55, 0.75) if scenario in ("single", "game") else None
    if scenario == "noisy" and rng.random() < 0.5:
        t_stop = duration * _u(rng, 0.5, 0.7)
    v0 = 0.0 if stand0 > 0 else v_cruise * _u(rng, 0.7, 1.0)
    vel = v0
    stand_until = stand0
    dwell = _u(rng, 8, 20)
    braking_from = None if t_stop is None else t_stop - v_cruise / dec
    for i, ti in enumerate(t):
        dt = 0.01
        if ti < stand_until:
            vel = 0.0
            cur[i] = 0.35
        elif braking_from is not None and braking_from <= ti < (t_stop or 0):
            vel = max(0.0, vel - dec * dt)
            cur[i] = 0.6  # regenerative braking
            if vel == 0.0:
                stand_until = ti + dwell
                braking_from = None
        elif vel < v_cruise:
            vel = min(v_cruise, vel + acc * dt)
            cur[i] = 1.5
        else:
            cur[i] = 1.0
        v[i] = vel
    # track: welded or jointed stretches, rough in noisy
    base_rough = {"single": 1.0, "rapid": 1.1, "noisy": 1.8, "game": 1.2}[scenario]
    rough[:] = base_rough * (1 + 0.15 * np.sin(2 * np.pi * t / _u(rng, 20, 60)))
    jointed = np.zeros_like(t, bool)
    edges = np.sort(rng.uniform(0, duration, int(rng.integers(1, 4))))
    state = rng.random() < (0.8 if scenario == "noisy" else 0.5)
    last = 0.0
    for e_t in [*edges, duration + 1.0]:
        jointed[(t >= last) & (t < e_t)] = state
        phases.append({"t": round(last, 3), "t_end": round(min(e_t, duration), 3),
                       "track": "jointed" if state else "welded"})
        state = not state
        last = e_t
    pos = np.concatenate([[0.0], np.cumsum(v[:-1] * 0.01)])
    tr = Train(t, v, rough, cur, pos, phases)
    clacks = joint_clacks(tr, jointed, tw, rng)
    # points: a burst of clacks over the switch and its frog
    n_points = {"single": 1, "rapid": 1, "noisy": 3, "game": 2}[scenario]
    moving = t[v > 3.0]
    for _ in range(n_points):
        if moving.size == 0:
            break
        tp = float(rng.choice(moving[moving > quiet_until])) if np.any(
            moving > quiet_until) else float(moving[-1])
        span = _u(rng, 1.0, 2.5)
        n = int(rng.integers(6, 15))
        for tk in np.sort(rng.uniform(tp, tp + span, n)):
            clacks.append((float(tk), _u(rng, 1.0, 2.5)))
        tr.points.append({"t": round(tp, 4), "t_end": round(tp + span, 4), "clacks": n})
        tr.lurches.append({"t": tp + span * 0.5, "peak_ms2": _u(rng, 0.6, 1.5),
                           "kind": "points"})
    tr.clacks = sorted(c for c in clacks if c[0] < duration)
    # curves and braking: slow lateral accelerations, with a jerk at their start
    n_curves = {"single": 1, "rapid": 2, "noisy": 3, "game": 2}[scenario]
    for _ in range(n_curves):
        tc = _u(rng, quiet_until, duration)
        if tr.at(v, tc) < 5:
            continue
        a = _u(rng, 0.3, 1.0) * float(rng.choice([-1, 1]))
        tr.lat_slow.append({"t": tc, "t_end": tc + _u(rng, 5, 20), "ms2": a})
        tr.lurches.append({"t": tc, "peak_ms2": abs(a) * _u(rng, 0.8, 1.4), "kind": "curve"})
    if t_stop is not None and t_stop < duration:
        tb = t_stop - v_cruise / dec
        if tb > quiet_until:
            tr.lat_slow.append({"t": tb, "t_end": t_stop, "ms2": -dec, "longitudinal": True})
            tr.lurches.append({"t": t_stop, "peak_ms2": _u(rng, 0.4, 1.0), "kind": "stop"})
    extra = {"single": 0, "rapid": 1, "noisy": 3, "game": 1}[scenario]
    for _ in range(extra):
        tl = _u(rng, quiet_until, duration)
        if tr.at(v, tl) > 5:
            tr.lurches.append({"t": tl, "peak_ms2": _u(rng, 0.5, 1.8), "kind": "lurch"})
    tr.lurches = sorted((lu for lu in tr.lurches if quiet_until < lu["t"] < duration - 1),
                        key=lambda lu: lu["t"])
    for lu in tr.lurches:  # someone steadies the tower
        if rng.random() < min(0.8, 0.35 * lu["peak_ms2"]):
            lo = int(rng.integers(2, 8))
            n = int(rng.integers(1, 4))
            lu["hand"] = list(range(max(0, lo - n + 1), lo + 1))
    # neutral sections: the breaker opens, the hum stops, the change sparks
    n_neutral = {"single": 0, "rapid": 1, "noisy": 1, "game": 1}[scenario]
    if scenario == "single" and rng.random() < 0.5:
        n_neutral = 1
    for _ in range(n_neutral):
        tn = _u(rng, quiet_until + 2, duration - 8)
        if tr.at(v, tn) < 5:
            continue
        gap = _u(rng, 2.0, 6.0)
        sel = (t >= tn) & (t < tn + gap)
        cur[sel] = 0.0
        tr.neutral.append({"t": round(tn, 4), "t_end": round(tn + gap, 4),
                           "bursts": [[round(tn, 4), round(tn + _u(rng, 0.15, 0.5), 4)],
                                      [round(tn + gap, 4),
                                       round(tn + gap + _u(rng, 0.15, 0.5), 4)]]})
    return tr


def joint_clacks(tr: Train, jointed: np.ndarray, tw: Tower,
                 rng: np.random.Generator) -> list[tuple[float, float]]:
    """Wheel-over-joint clacks: every rail length, passed by each of the car's four axles.

    ``jointed`` marks the grid times (``tr.t``) on jointed track. Returns (t, peak m/s^2).
    """
    offset = _u(rng, 0, tw.rail_m)
    joints = np.arange(offset, tr.pos[-1] + AXLES_M[-1], tw.rail_m)
    clacks: list[tuple[float, float]] = []
    for ax in AXLES_M:
        prox = 1.0 / (1.0 + abs(ax - tw.table_x_m) / 5.0)  # the axles nearest the table
        x = joints - ax
        x = x[(x > 0) & (x < tr.pos[-1])]
        tj = np.interp(x, tr.pos, tr.t)
        ok = jointed[np.clip((tj / 0.01).astype(int), 0, len(tr.t) - 1)]
        for tk in tj[ok]:
            vk = float(tr.at(tr.v, tk))
            if vk > 2.0:
                clacks.append((float(tk), prox * _u(rng, 0.6, 1.4) * 1.2 * (vk / 30) ** 0.7))
    return clacks


# -- the scenarios -------------------------------------------------------------------------

def _style(rng: np.random.Generator) -> str:
    return str(rng.choice(["soft", "normal", "hard"], p=[0.2, 0.7, 0.1]))


def _place_people(sc: Scene, waiters: tuple[int, int], clinks: tuple[int, int]) -> None:
    rng = sc.rng
    for _ in range(int(rng.integers(*waiters))):
        sc.waiter(_u(rng, sc.quiet_until + 1, sc.duration - 2))
    for _ in range(int(rng.integers(*clinks))):
        sc.clink(_u(rng, sc.quiet_until + 1, sc.duration - 1))


def simulate(seed: int, scenario: str, duration: float) -> Scene:
    """Plan and play one recording's scene."""
    tw = make_tower(seed)
    rng = np.random.default_rng([seed, SCENARIOS.index(scenario), 0xA3, 2])
    sc = Scene(tw, scenario, duration, rng)
    sc.quiet_until = _u(rng, 4.0, 6.5)
    sc.train = plan_train(rng, scenario, duration, tw, sc.quiet_until)
    end = duration - 2.5
    t = sc.quiet_until
    colours = list(rng.permutation(COLOURS))
    if scenario == "single":
        _place_people(sc, (0, 2), (0, 3))
        while True:
            t += _u(rng, 1.5, 4.5)
            if t > end:
                break
            land = sc.throw(t, sc.new_cube(colours[int(rng.integers(0, 6))]), _style(rng))
            t = land["t"]
    elif scenario in ("rapid", "noisy"):
        if scenario == "noisy":
            _place_people(sc, (2, 5), (3, 8))
        sid = 0
        while t < end:
            series = scenario == "rapid" or rng.random() < 0.5
            n = int(rng.integers(3, 7)) if series else 1
            t += _u(rng, 2.5, 6.0) if scenario == "rapid" else _u(rng, 0.8, 3.5)
            last = t
            for _ in range(n):
                if t > end:
                    break
                land = sc.throw(t, sc.new_cube(colours[sid % 6]), _style(rng), series=sid)
                last = max(last, land["t"])
                t += _u(rng, 0.3, 0.8)
            t = last
            sid += 1
    else:
        _place_people(sc, (0, 3), (1, 4))
        play_game(sc)
    sc.advance(duration + 10)
    # the events the train brings that reach past the end are dropped from the truth
    return sc


class Arosa:
    """Mord im Arosa as the rulebook (and contracts.md section 4) reads: state only."""

    def __init__(self, players: list[str]) -> None:
        self.players = players
        self.supply = {p: 20 for p in players}
        self.sheet = {p: [0] * 8 for p in players}
        self.crime_scenes: list[int] = []
        self.phase = "prologue"
        self.victims_found = 0

    def over(self) -> bool:
        return any(sum(v) >= 10 for v in self.sheet.values()) or any(
            n <= 0 for n in self.supply.values())

    def to_sheet(self, who: str, floor: int, n: int) -> None:
        k = min(n, self.supply[who])
        self.supply[who] -= k
        self.sheet[who][floor] += k

    def result(self) -> dict[str, Any]:
        points = {}
        for p in self.players:
            pts = 0
            for f, n in enumerate(self.sheet[p]):
                if f in self.crime_scenes:
                    pts += 3 * n
                elif f - 1 in self.crime_scenes or f + 1 in self.crime_scenes:
                    pts += 2 * n
                else:
                    pts += n
            points[p] = pts
        hi, lo = max(points.values()), min(points.values())
        return {"suspicion": points, "culprits": [p for p in self.players if points[p] == hi],
                "winners": [p for p in self.players if points[p] == lo]}


def play_game(sc: Scene) -> None:
    """A game by the rules until the recording ends (or the game does)."""
    rng = sc.rng
    n = int(rng.integers(3, 6))
    players = [str(c) for c in rng.permutation(COLOURS)[:n]]
    game = Arosa(players)
    turns: list[dict[str, Any]] = []
    t = sc.quiet_until + _u(rng, 0.5, 2.0)
    end = sc.duration - 3.0
    cut = False

    def throw(who: str, colour: str, kind: str) -> bool:
        nonlocal t
        if t > end:
            return False
        land = sc.throw(t, sc.new_cube(colour) if kind != "throwback" else pending.pop(0),
                        _style(rng), kind=kind, who=who)
        t = land["t"] + _u(rng, 0.8, 2.5)
        return True

    pending: list[dict[str, Any]] = []
    knife = players[int(rng.integers(0, n))]
    for _ in range(2):
        if not throw(knife, "red", "victim"):
            cut = True
    for p in players:
        for _ in range(2):
            if cut or not throw(p, p, "prologue"):
                cut = True
                break
            game.supply[p] -= 1
    game.phase = "act1"
    turn_i = int(rng.integers(0, n))
    while not cut and not game.over():
        who = players[turn_i % n]
        t += _u(rng, 0.5, 2.0)
        if t + 8 > end:
            break
        sc.advance(t)
        contents = [[c for c in sc.resting[lv]] for lv in range(8)]
        action = "inspect" if game.phase == "act1" else (
            "cover" if sum(game.sheet[who]) and rng.random() < 0.4 else "suspect")
        suspects: list[str] = []
        if action == "inspect":
            vic = [lv for lv in range(8) if any(c["colour"] == "red" for c in contents[lv])]
            weights = np.array([1, 1, 1.5, 2, 2.5, 3, 3.5, 4.0])
            floor = int(rng.choice(vic)) if vic and rng.random() < 0.5 else int(
                rng.choice(8, p=weights / weights.sum()))
        elif action == "suspect":
            others = [p for p in players if p != who]
            suspects = [str(s) for s in rng.choice(others, size=1 if rng.random() < 0.7 else 2,
                                                   replace=False)]
            counts = [sum(c["colour"] in suspects for c in contents[lv]) for lv in range(8)]
            floor = int(np.argmax(counts)) if rng.random() < 0.55 else int(rng.integers(0, 8))
        else:
            own = [lv for lv in range(8) if any(c["colour"] == who for c in contents[lv])]
            floor = int(rng.choice(own)) if own and rng.random() < 0.5 else int(
                rng.integers(0, 8))
        turn: dict[str, Any] = {"who": who, "phase": game.phase, "action": action,
                                "floor": floor, "suspects": suspects}
        t_lift = t + _u(rng, 0.3, 0.7)
        sc.lift(t_lift, floor)
        turn["t_lift"] = round(t_lift, 6)
        here = list(sc.resting[floor])
        tt = t_lift + _u(rng, 1.0, 3.0)
        penalties = 0
        victims = [c for c in here if c["colour"] == "red"]
        if action == "inspect":
            if victims:
                if floor not in game.crime_scenes:
                    game.crime_scenes.append(floor)
                game.victims_found += len(victims)
                for p in players:
                    if p != who:
                        game.to_sheet(p, floor, sum(c["colour"] == p for c in here))
            else:
                penalties = 1
        elif action == "suspect":
            if floor == 0 and not any(c["colour"] == who for c in here):
                penalties = len(suspects)
                turn["ground_floor_case"] = True
            else:
                for s in suspects:
                    k = sum(c["colour"] == s for c in here)
                    game.to_sheet(s, floor, k)
                    penalties += k == 0
        else:
            k = sum(c["colour"] == who for c in here)
            back = min(k, game.sheet[who][floor])
            game.sheet[who][floor] -= back
            game.supply[who] += back
            penalties = 1 if k == 0 else 0
        taken = list(here)
        t_last = tt
        while taken:  # four cubes a grab
            sc.remove(tt, floor, taken[:4])
            taken = taken[4:]
            t_last = tt
            tt += _u(rng, 0.8, 1.5)
        t_close = t_last + _u(rng, 0.3, 1.0)
        sc.close(t_close, floor, t_lift)
        turn["t_close"] = round(t_close, 6)
        turn["removed"] = len(here)
        turn["victims"] = len(victims)
        turn["penalties"] = penalties
        pending = [c for c in here if c["colour"] != "red"]
        t = t_close + _u(rng, 0.8, 2.0)
        turns.append(turn)
        thrown = 0
        if not game.over():
            while pending:
                if not throw(who, pending[0]["colour"], "throwback"):
                    cut = True
                    break
                thrown += 1
            for _ in range(penalties):
                if cut or game.over() or not throw(who, who, "penalty"):
                    cut = cut or not game.over()
                    break
                game.supply[who] -= 1
        turn["thrown_back"] = thrown
        if cut:
            turn["cut_by_end"] = True
        if game.phase == "act1" and game.victims_found >= 2:
            game.phase = "act2"
        turn_i += 1
    sc.game = {"players": players, "knife": knife, "turns": turns,
               "phase": "over" if game.over() else game.phase,
               "crime_scenes": sorted(game.crime_scenes), "sheet": game.sheet,
               "supply": game.supply}
    if game.over():
        sc.game.update(game.result())


# -- rendering: piezo --------------------------------------------------------------------

def _contact(f: float, tau_ms: np.ndarray) -> np.ndarray:
    """Spectrum of a half-sine contact of ``tau_ms`` (relative to DC)."""
    x = 2 * f * tau_ms * 1e-3
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.abs(np.cos(np.pi * f * tau_ms * 1e-3) / (1 - x**2))
    return np.where(np.abs(1 - x**2) < 1e-6, np.pi / 4, out)


def _band(rng: np.random.Generator, n: int, cols: int, lo: float, hi: float,
          fs: float) -> np.ndarray:
    """Unit-rms band noise, ``(n, cols)``."""
    sos = signal.butter(2, [lo, min(hi, 0.45 * fs)], "bandpass", fs=fs, output="sos")
    x = signal.sosfilt(sos, rng.standard_normal((n + 2000, cols)), axis=0)[2000:]
    return np.asarray(x / max(1e-12, float(np.std(x))))


def _impulses(times: np.ndarray, amps: np.ndarray, n: int, fs: float,
              res_hz: float, q: float) -> np.ndarray:
    """A sum of damped sines of ``res_hz`` starting at ``times`` (sub-sample exact)."""
    s = complex(-np.pi * res_hz / q, 2 * np.pi * res_hz)
    x = np.zeros(n, complex)
    idx = np.ceil(times * fs).astype(int)
    ok = (idx >= 0) & (idx < n)
    np.add.at(x, idx[ok], amps[ok] * np.exp(s * (idx[ok] / fs - times[ok])))
    y = signal.lfilter([1.0], [1.0, -np.exp(s / fs)], x)
    return np.asarray(y.imag)


def table_accel_piezo(sc: Scene, t: np.ndarray, fs: float, rng: np.random.Generator
                      ) -> np.ndarray:
    """The table's vertical acceleration as the discs feel it (m/s^2, above ~10 Hz)."""
    tr = sc.train
    n = len(t)
    v = tr.at(tr.v, t)
    env = tr.at(tr.rough, t) * np.clip(v / 30.0, 0, 1.6) * 0.15 + 0.005
    a = _band(rng, n, 1, 15, 400, fs)[:, 0] * env * sc.rumble_scale
    if tr.clacks:
        ct = np.array([c[0] for c in tr.clacks])
        ca = np.array([c[1] for c in tr.clacks])
        a += _impulses(ct, ca, n, fs, sc.floor_hz, 4.0)
    for tw_t, peak in sc.waiters:
        a += _impulses(np.array([tw_t]), np.array([peak]), n, fs, sc.table_hz, 3.0)
    return a


def render_piezo(sc: Scene) -> np.ndarray:
    """The eight piezo channels (ADC counts, float) at the device's sample times."""
    tw = sc.tw
    fs = float(tw.piezo_rate_hz)
    n = int(round(sc.duration * fs))
    t = np.arange(n) / fs
    rng = np.random.default_rng([tw.seed, SCENARIOS.index(sc.scenario), 0xA3, 3])
    out = tw.bias[None, :] + rng.standard_normal((n, 8)) * tw.adc_noise[None, :]
    skew = np.arange(8) * ADC_CH_US * 1e-6
    # the table: rumble, clacks, a waiter's brush, behind the disc's AC coupling
    a = table_accel_piezo(sc, t, fs, rng)
    hp = signal.butter(1, tw.ac_hz, "highpass", fs=fs, output="sos")
    out += signal.sosfilt(hp, a)[:, None] * tw.acc_lsb[None, :]
    # each printed plate rattles a little on its own in the rumble
    tr = sc.train
    env = tr.at(tr.rough, t) * np.clip(tr.at(tr.v, t) / 30.0, 0, 1.6) * sc.rumble_scale
    out += _band(rng, n, 8, 200, 900, fs) * (0.3 * env)[:, None]
    # plate strikes: every impact rings its plate's modes; the frame carries them on
    imps = list(sc.impacts)
    jolt_t: list[float] = []
    jolt_j: list[float] = []
    for ct, ca in tr.clacks:  # a clack jolts every plate: m_plate * delta v
        jolt_t.append(ct)
        jolt_j.append(ca * 0.004)  # delta v of a ~4 ms jolt, m/s
    if imps or jolt_t:
        it = np.array([i.t for i in imps] + jolt_t * 8)
        il = np.array([i.level for i in imps] + [lv for lv in range(8) for _ in jolt_t])
        jolt_lv = np.repeat(tw.plate_g * 1e-3 * 1e3, len(jolt_t))  # mN s per (m/s)
        ij = np.array([i.j for i in imps] + list(np.tile(jolt_j, 8) * jolt_lv))
        icon = np.array([CONTACT_MS.get(i.kind, tw.contact_ms) for i in imps]
                        + [CONTACT_MS["jolt"]] * (8 * len(jolt_t)))
        for src in range(9):
            sel = il == src
            if not np.any(sel):
                continue
            lv = min(src, 7)
            gain = tw.xt[lv] * (0.45 if src == 8 else 1.0)
            dist = np.abs(np.arange(8) - lv) + (1 if src == 8 else 0)
            for m in range(4):
                f = tw.f1[lv] * tw.ratios[lv, m]
                amp = tw.sens[lv] * ij[sel] * tw.mode_amp[lv, m] * _contact(f, icon[sel])
                s = complex(-np.pi * f / tw.q[lv, m], 2 * np.pi * f)
                x = np.zeros(n, complex)
                tt = it[sel]
                idx = np.ceil(tt * fs).astype(int)
                ok = (idx >= 0) & (idx < n)
                np.add.at(x, idx[ok], amp[ok] * np.exp(s * (idx[ok] / fs - tt[ok])))
                y = signal.lfilter([1.0], [1.0, -np.exp(s / fs)], x)
                ph = np.exp(s * (skew - dist * tw.xt_delay_us * 1e-6))
                w = gain * tw.glue / tw.glue[lv] * ph
                out += (y[:, None] * w[None, :]).imag
    # faint scrapes and rustles (sliding cubes, hands)
    for t0, dur, lv, lsb in sc.scrapes:
        i0, i1 = max(0, int(t0 * fs)), min(n, int((t0 + dur) * fs))
        if i1 - i0 > 8:
            out[i0:i1, lv] += _band(rng, i1 - i0, 1, 300, 1500, fs)[:, 0] * lsb \
                * np.hanning(i1 - i0)
    # 16.7 Hz traction current on the lines (and its odd harmonics)
    cur = np.abs(tr.at(tr.current, t))
    f_dev = TRACTION_HZ * (1 - tw.clock_ppm * 1e-6)
    hum = np.zeros(n)
    for h, rel in ((1, 1.0), (3, 0.3), (5, 0.1)):
        hum += rel * np.sin(2 * np.pi * h * f_dev * t + sc.hum_phase * h)
    out += (hum * cur)[:, None] * tw.hum_pz[None, :]
    # neutral sections: a few hundred ms of spikes on several channels at once
    for ns in tr.neutral:
        for b0, b1 in ns["bursts"]:
            k = int(rng.integers(8, 30))
            idx = rng.integers(int(b0 * fs), max(int(b0 * fs) + 1, int(b1 * fs)), k)
            for i in idx[idx < n]:
                chans = rng.choice(8, int(rng.integers(3, 9)), replace=False)
                out[i, chans] += rng.choice([-1, 1]) * rng.uniform(10, 150)
    # lifted modules: their discs hang off the bias divider, hum pickup only
    for t_lift, t_close, k in sc.open_spans:
        if k >= 7:
            continue
        i0, i1 = int(t_lift * fs), min(n, int(t_close * fs))
        seg = np.arange(i0, i1)
        fl = tw.bias[None, k + 1:] + rng.standard_normal((len(seg), 7 - k)) * 1.5
        fl += (hum[seg] * (0.2 + cur[seg]) * tw.hum_float)[:, None]
        out[i0:i1, k + 1:] = fl
        for tc in (t_lift, t_close):  # the spring contacts chatter
            for ch in range(k + 1, 8):
                i = int(tc * fs)
                m = min(n - i, int(0.02 * fs))
                if m > 0:
                    out[i:i + m, ch] += rng.uniform(-120, 120) * np.exp(
                        -np.arange(m) / (0.004 * fs))
    return np.clip(np.round(out), 0, 1023)


# -- rendering: load cells -----------------------------------------------------------------

@dataclass
class LoadStream:
    """The load readings: times (s), valid bits, counts (n, 8), timeouts before each."""

    t: np.ndarray
    valid: np.ndarray
    counts: np.ndarray
    timeouts: list[tuple[float, int]]


def render_load(sc: Scene) -> LoadStream:
    """The HX711 readings of the eight cells."""
    tw = sc.tw
    tr = sc.train
    fg = LOAD_GRID_HZ
    n = int(round((sc.duration + 0.5) * fg))
    t = np.arange(n) / fg
    rng = np.random.default_rng([tw.seed, SCENARIOS.index(sc.scenario), 0xA3, 4])
    # the mass on each plate
    mass = np.zeros((n, 8))
    for ts, lv, g in sc.steps:
        i = int(np.ceil(ts * fg))
        if i < n:
            mass[i, lv] += g
    mass = np.cumsum(mass, axis=0) + tw.plate_g[None, :]
    # vertical acceleration of the car (body modes, wheel and rail), felt by every plate
    v = tr.at(tr.v, t)
    env = tr.at(tr.rough, t) * np.clip(v / 30.0, 0, 1.6)
    av = _band(rng, n, 1, 0.7, 20, fg)[:, 0] * (0.25 * env + 0.004) * sc.rumble_scale
    if tr.clacks:
        ct = np.array([c[0] for c in tr.clacks])
        ca = np.array([c[1] for c in tr.clacks])
        av += _impulses(ct, ca, n, fg, sc.floor_hz, 4.0)
    for tw_t, peak in sc.waiters:
        av += 0.3 * _impulses(np.array([tw_t]), np.array([peak]), n, fg, sc.table_hz, 3.0)
    rock = _band(rng, n, 1, tw.rock_hz * 0.8, tw.rock_hz * 1.25, fg)[:, 0] * (env + 0.05)
    lat = np.zeros(n)
    for ls in tr.lat_slow:
        lat += ls["ms2"] * _smooth_box(t, ls["t"], ls["t_end"], 1.5)
    for lu in tr.lurches:
        lat += lu["peak_ms2"] * _smooth_box(t, lu["t"], lu["t"] + 0.6, 0.15)
    height = (np.arange(8) + 1) / 8
    force = mass * (1 + av[:, None] / G + rock[:, None] * tw.rock_frac * height[None, :]
                    + lat[:, None] / G * tw.offaxis[None, :])
    # impulses of strikes on the cells (J over one grid step), in grams
    for imp in sc.impacts:
        share = LOAD_SHARE.get(imp.kind, 0.0)
        if share and imp.level < 8:
            i = int(np.ceil(imp.t * fg))
            if i < n:
                force[i, imp.level] += share * imp.j * fg / G
    for p in sc.presses:
        sel = (t >= p["t0"]) & (t < p["t1"])
        tr_ = 1 + p["tremor"] * np.sin(2 * np.pi * 10 * t[sel])
        force[sel, p["level"]] += p["grams"] * _smooth_box(t[sel], p["t0"], p["t1"], 0.08) * tr_
    counts = tw.zero_counts[None, :] + (force - tw.plate_g[None, :]) * tw.cpg[None, :]
    # 16.7 Hz traction hum picked up by the cell wiring, with the train's current
    cur = np.abs(tr.at(tr.current, t))
    f_dev = TRACTION_HZ * (1 - tw.clock_ppm * 1e-6)
    counts += (np.sin(2 * np.pi * f_dev * t + sc.hum_phase) * cur)[:, None] \
        * tw.hum_load[None, :]
    # the HX711's digital filter: two boxcars of one conversion period (settles in two)
    period = 1.0 / (tw.load_rate_hz * (1 + tw.hx_rate_err))
    w = max(1, int(round(period * fg)))
    filt = _boxcar(_boxcar(counts, w), w)
    t_read = np.arange(_u(rng, 0.02, 0.05), sc.duration - 0.005, period)
    idx = np.clip(np.round(t_read * fg).astype(int), 0, n - 1)
    vals = filt[idx] + rng.standard_normal((len(idx), 8)) * tw.hx_noise
    # neutral-section sparks reach the cell wiring too
    for ns in tr.neutral:
        for b0, b1 in ns["bursts"]:
            sel = np.nonzero((t_read >= b0) & (t_read < b1))[0]
            for i in sel[: int(rng.integers(1, 4))]:
                chans = rng.choice(8, int(rng.integers(3, 9)), replace=False)
                vals[i, chans] += rng.choice([-1, 1]) * rng.uniform(500, 10000)
    valid = np.full(len(t_read), 0xFF, np.int64)
    timeouts: list[tuple[float, int]] = []
    for t_lift, t_close, k in sc.open_spans:
        if k >= 7:
            continue
        off = (t_read >= t_lift) & (t_read < t_close + 4 * period)
        mask = (0xFF << (k + 1)) & 0xFF
        valid[off] &= ~mask & 0xFF
        timeouts.append((t_lift + 1.5 * period, 7 - k))
    vals = np.clip(np.round(vals), -(2**23), 2**23 - 1).astype(np.int64)
    for k in range(8):
        vals[(valid >> k) & 1 == 0, k] = 0
    return LoadStream(t_read, valid, vals, timeouts)


def _boxcar(x: np.ndarray, w: int) -> np.ndarray:
    """Causal moving average over ``w`` samples (the start held at the first value)."""
    c = np.cumsum(np.concatenate([np.repeat(x[:1], w, axis=0), x], axis=0), axis=0)
    return np.asarray((c[w:] - c[:-w]) / w)


def _smooth_box(t: np.ndarray, t0: float, t1: float, rise: float) -> np.ndarray:
    up = np.clip((t - t0) / rise, 0, 1)
    down = np.clip((t1 - t) / rise, 0, 1)
    return np.asarray(np.minimum(up, down) ** 2 * (3 - 2 * np.minimum(up, down)))


# -- the byte stream -----------------------------------------------------------------------

def hello_body(tw: Tower) -> bytes:
    return bytes([1, *tw.fw, 8, 8]) + tw.piezo_rate_hz.to_bytes(2, "little") \
        + tw.load_rate_hz.to_bytes(2, "little") + bytes([10]) + tw.device_id


def build_stream(sc: Scene, sets: np.ndarray, load: LoadStream) -> tuple[bytes, dict[str, Any]]:
    """Frame everything the device sends, in the order it sends it."""
    tw = sc.tw
    rng = np.random.default_rng([tw.seed, SCENARIOS.index(sc.scenario), 0xA3, 5])
    period_us = 1_000_000 // tw.piezo_rate_hz
    n_sets = sets.shape[0]
    b = tw.batch
    running = rng.random() < 0.4
    if running:
        up0_us = int(rng.integers(300_000_000, 20_000_000_000))
        if rng.random() < 0.5:  # put the clock's wrap inside the recording
            wrap_at = _u(rng, 5.0, 0.9 * sc.duration)
            up0_us = int((int(up0_us // U32) + 1) * U32 - wrap_at * 1e6)
        seq0 = int(rng.integers(0, 65536))
    else:
        up0_us = int(rng.integers(50_000, 250_000))
        seq0 = 0
    # messages: (emit time s, order, kind, payload index)
    starts = np.arange(0, n_sets, b)
    pz_emit = (np.minimum(starts + b, n_sets) * period_us + 150) / 1e6
    ld_emit = load.t + 0.0003
    st_ms = np.arange((up0_us // 1_000_000 + 1) * 1000, (up0_us + sc.duration * 1e6) / 1000,
                      1000, dtype=np.int64)
    st_emit = (st_ms * 1000 - up0_us) / 1e6 + 0.0005
    kinds = np.concatenate([np.full(len(starts), 2), np.full(len(ld_emit), 3),
                            np.full(len(st_emit), 4)])
    emit = np.concatenate([pz_emit, ld_emit, st_emit])
    which = np.concatenate([np.arange(len(starts)), np.arange(len(ld_emit)),
                            np.arange(len(st_emit))])
    order = np.lexsort((kinds, emit))
    kinds, emit, which = kinds[order], emit[order], which[order]
    n_before = int(rng.integers(1, 4)) if running else 0
    # HELLO (and ACK of the laptop's GET_INFO on a running device) get their seq in order
    pre = 0 if not running else n_before
    seq = np.zeros(len(kinds), np.int64)
    extra = 1 if not running else 2
    seq[:pre] = seq0 + np.arange(pre)
    seq[pre:] = seq0 + pre + extra + np.arange(len(kinds) - pre)
    seq %= 65536
    hello_seq = (seq0 + pre) % 65536
    frames: dict[tuple[int, int], bytes] = {}
    # PIEZO
    u16 = sets.astype(np.uint16)
    for size in sorted({min(b, n_sets - s) for s in starts}):
        rows = [i for i, s in enumerate(starts) if min(b, n_sets - s) == size]
        ri = np.array(rows)
        body = np.zeros((len(ri), 5 + 16 * size), np.uint8)
        body[:, 0:4] = _u32_cols(up0_us + starts[ri] * period_us)
        body[:, 4] = size
        block = np.concatenate([u16, np.zeros((b, 8), np.uint16)])[
            starts[ri][:, None] + np.arange(size)[None, :]].reshape(len(ri), -1)
        body[:, 5:] = block.astype("<u2").view(np.uint8).reshape(len(ri), -1)
        pos = np.nonzero(kinds == 2)[0]
        sq = np.empty(len(starts), np.int64)
        sq[which[pos]] = seq[pos]
        for i, fr in zip(ri, _frames_of(0x02, sq[ri], body), strict=True):
            frames[(2, int(i))] = fr
    # LOAD
    if len(load.t):
        body = np.zeros((len(load.t), 29), np.uint8)
        body[:, 0:4] = _u32_cols(up0_us + np.round(load.t * 1e6).astype(np.int64))
        body[:, 4] = load.valid
        c = load.counts % (1 << 24)
        for k in range(8):
            for j in range(3):
                body[:, 5 + 3 * k + j] = (c[:, k] >> (8 * j)) & 0xFF
        pos = np.nonzero(kinds == 3)[0]
        sq = np.empty(len(load.t), np.int64)
        sq[which[pos]] = seq[pos]
        for i, fr in enumerate(_frames_of(0x03, sq, body)):
            frames[(3, i)] = fr
    # STATUS
    if len(st_ms):
        body = np.zeros((len(st_ms), 12), np.uint8)
        body[:, 0:4] = _u32_cols(st_ms)
        to_t = np.array([x[0] for x in load.timeouts])
        to_n = np.array([x[1] for x in load.timeouts])
        for i, e in enumerate(st_emit):
            lt = int(to_n[to_t < e].sum()) if len(to_t) else 0
            body[i, 8:10] = [lt & 0xFF, (lt >> 8) & 0xFF]
        body[:, 10] = rng.integers(35, 60, len(st_ms))
        pos = np.nonzero(kinds == 4)[0]
        sq = np.empty(len(st_ms), np.int64)
        sq[which[pos]] = seq[pos]
        for i, fr in enumerate(_frames_of(0x04, sq, body)):
            frames[(4, i)] = fr
    parts: list[bytes] = []
    prefix = b""
    if running:  # the port opened in the middle of a PIEZO frame sent before stream time 0
        old = frame(0x02, (seq0 - 1) % 65536, ((up0_us - b * period_us) % U32).to_bytes(
            4, "little") + bytes([b]) + np.full(8 * b, 512, "<u2").tobytes())
        cut = int(rng.integers(3, len(old) - 2))
        prefix = old[cut:]
        parts.append(prefix)
    for i, (k, w) in enumerate(zip(kinds, which, strict=True)):
        if i == pre:
            parts.append(frame(0x01, hello_seq, hello_body(tw)))
            if running:
                parts.append(frame(0x05, (hello_seq + 1) % 65536,
                                   bytes([CMD_GET_INFO, 0, 0, 0])))
        parts.append(frames[(int(k), int(w))])
    raw = b"".join(parts)
    wraps = (up0_us + sc.duration * 1e6) >= (up0_us // U32 + 1) * U32
    wire = {"start": "running" if running else "boot", "seq_first": seq0,
        "t_us_first": int(up0_us % U32),
        "uptime_s": round(up0_us / 1e6, 6), "mid_frame_bytes": len(prefix),
        "messages_before_hello": pre,
        "clock_wraps_at_s": round(((up0_us // U32 + 1) * U32 - up0_us) / 1e6, 6)
        if wraps else None}
    return raw, wire


# -- truth, files, command line ------------------------------------------------------------

def _r(x: float) -> float:
    return round(float(x), 6)


def truth_of(sc: Scene, wire: dict[str, Any]) -> dict[str, Any]:
    """The ground truth as score.py reads it (all times in stream seconds)."""
    tw = sc.tw
    tr = sc.train
    end = sc.duration - 0.05
    landings = []
    for x in sorted(sc.landings, key=lambda x: x["t"]):
        if x["t"] >= end:
            continue
        y = dict(x)
        for k in ("t", "t_release", "t_first_impact", "t_on_plate"):
            y[k] = _r(y[k])
        landings.append(y)
    kept = {x["fid"] for x in landings if x["knocked"]}
    truth: dict[str, Any] = {
        "format": "towerear-crosscheck-truth/1", "model": MODEL, "scenario": sc.scenario,
        "seed": tw.seed, "duration_s": sc.duration, "cells": "matched",
        "quiet_until": _r(sc.quiet_until),
        "landings": landings,
        "knockdowns": [{**k, "t": _r(k["t"])} for k in sorted(sc.knockdowns,
                                                                key=lambda k: k["t"])
                       if k["fid"] in kept and k["t"] < end],
        "removals": [{**r, "t": _r(r["t"])} for r in sc.removals if r["t"] < end],
        "lifts": [{"t": _r(x["t"]), "exposed": x["exposed"]} for x in sc.lifts if x["t"] < end],
        "closes": [{"t": _r(x["t"]), "exposed": x["exposed"]} for x in sc.closes
                   if x["t"] < end],
        "knocks": [{**k, "t": _r(k["t"]), "t_end": _r(k["t_end"])}
                   for k in sorted(sc.knocks, key=lambda k: k["t"]) if k["t"] < end],
        "damage": [],
        "train": {
            "phases": tr.phases,
            "speed_kmh": [[_r(ti), round(float(vi) * 3.6, 2)]
                          for ti, vi in zip(tr.t[::100], tr.v[::100], strict=True)
                          if ti <= sc.duration],
            "stations": _stations(tr, sc.duration),
            "clacks": [[_r(c[0]), round(c[1], 4)] for c in tr.clacks],
            "points": tr.points,
            "lurches": [{**lu, "t": _r(lu["t"]), "peak_ms2": round(lu["peak_ms2"], 4)}
                        for lu in tr.lurches],
            "curves_and_braking": [{k: (round(v, 4) if isinstance(v, float) else v)
                                    for k, v in x.items()} for x in tr.lat_slow],
            "neutral_sections": tr.neutral,
            "shifts": sc.shifts,
            "slides": [{**k, "t": _r(k["t"])} for k in sc.knockdowns if k["cause"] == "slide"],
        },
        "session": wire,
        "tower": tw.figures(),
    }
    if sc.game is not None:
        truth["game"] = sc.game
    return json.loads(json.dumps(truth))


def _stations(tr: Train, duration: float) -> list[list[float]]:
    still = tr.v < 0.05
    out: list[list[float]] = []
    i = 0
    while i < len(still) and tr.t[i] <= duration:
        if still[i]:
            j = i
            while j < len(still) and still[j] and tr.t[j] <= duration:
                j += 1
            out.append([_r(tr.t[i]), _r(min(tr.t[j - 1], duration))])
            i = j
        else:
            i += 1
    return out


def render(sc: Scene) -> tuple[bytes, dict[str, Any]]:
    """Bytes and truth of a scene."""
    sets = render_piezo(sc)
    load = render_load(sc)
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
    p = _Parser(prog="make_recordings_am.py", description=__doc__.split("\n")[0])
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
    elif not math.isfinite(args.duration) or args.duration < 15.0:
        problem = f"--duration must be at least 15 seconds, not {args.duration:g}"
    if problem:
        print(f"make_recordings_am.py: error: {problem}", file=sys.stderr)
        return 2
    try:
        args.out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        print(f"make_recordings_am.py: error: cannot create {args.out}: {exc.strerror}",
              file=sys.stderr)
        return 2
    for seed in range(args.first_seed, args.first_seed + args.towers):
        for scenario in args.scenarios:
            try:
                make_recording(seed, scenario, args.duration, args.out)
            except OSError as exc:
                print(f"make_recordings_am.py: error: cannot write into {args.out}: "
                      f"{exc.strerror}", file=sys.stderr)
                return 2
            print(f"{scenario}_t{seed}", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
