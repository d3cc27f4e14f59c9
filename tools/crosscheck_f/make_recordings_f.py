#!/usr/bin/env python3
"""Cross-check model F: an independent simulated towerear tower, written as wire recordings.

A second opinion on ``towerear detect``: a physical model of a cardboard Mord im
Arosa tower with a contact microphone and a bar load cell per level, written
from the contracts alone (contracts.md sections 1-2, design.md, the rules). It
shares no code with dsp/ or hostapp/: its own CRC, COBS, message layout,
HX711 model and firmware timing.

Usage::

    make_recordings_f.py --out DIR [--towers 4] [--first-seed 1] [--duration 120]
                         [--scenarios single rapid noisy game]

For every tower seed and scenario it writes ``DIR/{scenario}_t{seed}.bin`` (the
device -> host byte stream) and ``DIR/{scenario}_t{seed}.truth.json`` (what
really happened, in stream seconds; the format tools/crosscheck/score.py reads).
See README.md beside this script for the model and every parameter range.
"""

from __future__ import annotations

import argparse
import json
import math
import struct
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy import signal

FloatArray = npt.NDArray[np.float64]
U8Array = npt.NDArray[np.uint8]

SCENARIOS = ("single", "rapid", "noisy", "game")
N_LEVELS = 8
G = 9.81  # m/s^2
T_US_MOD = 1 << 32
S24_MAX = (1 << 23) - 1
HELLO, PIEZO, LOAD, STATUS, ACK = 0x01, 0x02, 0x03, 0x04, 0x05
GET_INFO = 0x81
# Reference impulse for piezo sensitivities: a 0.55 g cube hitting a plate at
# 1.5 m/s with a restitution of 0.4 (N s).
J_REF = 0.55e-3 * 1.5 * 1.4
COLOURS = ("yellow", "blue", "brown", "gray", "black", "white")
# The ATmega ADC needs 13 ADC clocks per conversion; the set's channels are
# converted one after another.
ADC_CLOCKS_PER_CONVERSION = 13
F_CPU = 16e6


# --------------------------------------------------------------------------
# Wire encoder (contracts.md section 1), written from the contract text.
# --------------------------------------------------------------------------

def crc16_ccitt_false_reference(data: bytes) -> int:
    """CRC-16/CCITT-FALSE bit by bit: poly 0x1021, init 0xFFFF, no reflection, no xorout."""
    crc = 0xFFFF
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            if crc & 0x8000:
                crc = ((crc << 1) ^ 0x1021) & 0xFFFF
            else:
                crc = (crc << 1) & 0xFFFF
    return crc


def _crc_table() -> list[int]:
    # Table entry i: the CRC register after shifting byte i through a zero
    # register, computed by polynomial long division (no reuse of the above).
    table = []
    for i in range(256):
        value = i << 16  # byte placed above a 16-bit remainder
        for bit in range(23, 15, -1):
            if value & (1 << bit):
                value ^= 0x11021 << (bit - 16)
        table.append(value & 0xFFFF)
    return table


_CRC_TABLE = _crc_table()
_CRC_TABLE_NP = np.array(_CRC_TABLE, dtype=np.uint32)


def crc16_ccitt_false(data: bytes) -> int:
    """CRC-16/CCITT-FALSE, table driven (one lookup per byte)."""
    crc = 0xFFFF
    table = _CRC_TABLE
    for byte in data:
        crc = ((crc << 8) & 0xFFFF) ^ table[(crc >> 8) ^ byte]
    return crc


def crc16_rows(rows: U8Array) -> npt.NDArray[np.uint32]:
    """The CRC of every row of a 2-D byte array at once (rows of equal length)."""
    crc = np.full(rows.shape[0], 0xFFFF, dtype=np.uint32)
    for col in rows.T:
        crc = ((crc << 8) & 0xFFFF) ^ _CRC_TABLE_NP[((crc >> 8) ^ col) & 0xFF]
    return crc


def cobs_encode(data: bytes) -> bytes:
    """Consistent Overhead Byte Stuffing of one message (no trailing delimiter)."""
    out = bytearray()
    pieces = data.split(b"\x00")
    last = len(pieces) - 1
    for n, piece in enumerate(pieces):
        blocks = 0
        while len(piece) >= 254:
            out.append(0xFF)
            out += piece[:254]
            piece = piece[254:]
            blocks += 1
        if n < last or piece or blocks == 0:
            # A code byte implies a zero after its data, except at the very end.
            out.append(len(piece) + 1)
            out += piece
    return bytes(out)


def cobs_encode_rows(rows: U8Array) -> U8Array:
    """COBS of every row of a 2-D byte array at once (rows shorter than 254 bytes)."""
    n_rows, width = rows.shape
    if width > 253:
        raise ValueError("rows must be shorter than 254 bytes")
    out = np.empty((n_rows, width + 1), dtype=np.uint8)
    # Walk backwards keeping, per row, the position of the next zero (a
    # virtual one after the end); a zero becomes the distance to it.
    next_zero = np.full(n_rows, width, dtype=np.int16)
    for p in range(width - 1, -1, -1):
        col = rows[:, p]
        is_zero = col == 0
        out[:, p + 1] = np.where(is_zero, next_zero - p, col)
        next_zero = np.where(is_zero, np.int16(p), next_zero)
    out[:, 0] = next_zero + 1
    return out


def encode_message(msg_type: int, seq: int, body: bytes) -> bytes:
    """One framed message: COBS(type | seq | body | crc) followed by 0x00."""
    head = struct.pack("<BH", msg_type, seq % 65536) + body
    raw = head + struct.pack("<H", crc16_ccitt_false(head))
    if len(raw) > 254:
        raise ValueError("message longer than 254 bytes")
    return cobs_encode(raw) + b"\x00"


# --------------------------------------------------------------------------
# The tower: everything drawn once per seed.
# --------------------------------------------------------------------------

@dataclass
class Tower:
    """One physical kit: the cardboard, the cubes, the sensors and the firmware build."""

    seed: int
    cells: str
    module_h_m: float
    cube_mass_g: float
    cube_mass_cv: float
    landing_weights: FloatArray
    stop_p: FloatArray
    graze_p: FloatArray
    hitpass_p: FloatArray
    top_graze_p: float
    restitution: tuple[float, float]
    knock_p_max: float
    position_sd: float
    plate_mass_g: FloatArray
    plate_f_hz: FloatArray
    plate_zeta: FloatArray
    creep_frac: FloatArray
    creep_tau_s: FloatArray
    frame_shift_g: FloatArray
    reseat_sd_g: float
    cell_capacity_g: FloatArray
    sens_mv_v: FloatArray
    sign: FloatArray
    efficiency: FloatArray
    counts_per_g: FloatArray
    offset_counts: FloatArray
    noise_g: FloatArray
    drift_g: FloatArray
    drift_tau_s: float
    load_hum_counts: FloatArray
    hx_rate_hz: FloatArray
    glitch_rate: float
    piezo_rate_hz: int
    mux_s: float
    adc_noise_lsb: FloatArray
    bias_lsb: FloatArray
    sens_lsb: FloatArray
    mode_f_hz: FloatArray
    mode_q: FloatArray
    frontend_lp_hz: float
    xt_up: float
    xt_down: float
    xt_pair: FloatArray
    xt_delay_s: float
    xt_lp_hz: float
    struct_f_hz: float
    struct_tau_s: float
    struct_gain: float
    base_att: float
    ac_tau_s: float
    press_lsb_per_g: float
    hum_lsb: FloatArray
    disc_hum_lsb: float
    mains_hz: float
    clock_ppm: float
    rattle_level: int
    rattle_delay_s: float
    rattle_ratio: float
    fw: tuple[int, int, int]
    device_id: bytes
    batch_sets: int
    cpu_pct: float
    busy_p: float

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in self.__dict__.items():
            if isinstance(value, np.ndarray):
                out[key] = np.round(value, 6).tolist()
            elif isinstance(value, bytes):
                out[key] = value.hex()
            elif isinstance(value, float):
                out[key] = round(value, 9)
            else:
                out[key] = value
        return out


def draw_tower(seed: int) -> Tower:
    """Draw every physical and firmware parameter of tower ``seed`` (see README for why)."""
    rng = np.random.default_rng(np.random.SeedSequence([0xF0F0, seed]))
    u = rng.uniform
    cells = "matched" if seed % 2 else "mixed"
    # Cubes: 8-10 mm wooden cubes, pine to beech.
    side_mm = u(8.0, 10.0)
    density = u(0.5, 0.75)
    cube_mass = float(np.clip(side_mm ** 3 / 1000 * density, 0.3, 0.78))
    # Where cubes come to rest: a per-tower quirk of the misaligned holes.
    weights = np.empty(N_LEVELS)
    weights[0] = u(0.03, 0.08)
    weights[1:] = u(0.5, 1.5, N_LEVELS - 1)
    weights[1:] *= (1 - weights[0]) / weights[1:].sum()
    stop_p = weights / np.cumsum(weights)
    stop_p[0] = 1.0
    e_mid = u(0.28, 0.45)
    # Load cells: 100 g bar cells (0.6 +- 0.15 mV/V) or, mixed, some 200 g ones.
    if cells == "matched":
        capacity = np.full(N_LEVELS, 100.0)
        sens = u(0.5, 0.7) * (1 + 0.015 * rng.standard_normal(N_LEVELS))
        sign = np.full(N_LEVELS, -1.0 if rng.random() < 0.3 else 1.0)
        noise = u(0.003, 0.008) * (1 + 0.1 * rng.standard_normal(N_LEVELS))
    else:
        capacity = np.where(rng.random(N_LEVELS) < 0.6, 100.0, 200.0)
        sens = np.where(capacity == 100.0, u(0.45, 0.75, N_LEVELS), u(0.65, 0.95, N_LEVELS))
        sign = np.where(rng.random(N_LEVELS) < 0.3, -1.0, 1.0)
        noise = u(0.003, 0.02, N_LEVELS)
    efficiency = u(0.82, 1.0, N_LEVELS)
    # HX711 at gain 128: full scale +-0.5 AVDD/128 over 2^24 counts, ratiometric.
    cpg_raw = sens * 1e-3 * 128 * (1 << 24) / capacity
    counts_per_g = sign * cpg_raw * efficiency
    plate_mass = u(5.0, 14.0, N_LEVELS)
    zero_balance = u(-0.1, 0.1, N_LEVELS) * 1e-3 * 128 * (1 << 24)
    offset = zero_balance + counts_per_g * plate_mass
    hx_mean = u(78.0, 92.0)
    # Piezo side.
    piezo_rate = int(rng.choice([2000, 2500, 1600], p=[0.7, 0.15, 0.15]))
    prescaler = int(rng.choice([16, 32]))
    n_modes = 4
    mode_f = np.empty((N_LEVELS, n_modes))
    mode_f[:, 0] = u(120, 300, N_LEVELS)
    mode_f[:, 1:] = np.sort(np.exp(u(math.log(300), math.log(3500), (N_LEVELS, n_modes - 1))),
                            axis=1)
    rattle = int(rng.integers(0, N_LEVELS)) if rng.random() < 0.35 else -1
    return Tower(
        seed=seed,
        cells=cells,
        module_h_m=u(0.027, 0.034),
        cube_mass_g=cube_mass,
        cube_mass_cv=u(0.02, 0.06),
        landing_weights=weights,
        stop_p=stop_p,
        graze_p=u(0.15, 0.45, N_LEVELS),
        hitpass_p=u(0.08, 0.3, N_LEVELS),
        top_graze_p=u(0.15, 0.45),
        restitution=(e_mid - 0.08, e_mid + 0.08),
        knock_p_max=u(0.04, 0.12),
        position_sd=u(0.01, 0.05),
        plate_mass_g=plate_mass,
        plate_f_hz=u(35.0, 110.0, N_LEVELS),
        plate_zeta=u(0.04, 0.15, N_LEVELS),
        creep_frac=u(0.0, 0.04, N_LEVELS),
        creep_tau_s=u(2.0, 12.0, N_LEVELS),
        frame_shift_g=u(-0.15, 0.15, N_LEVELS),
        reseat_sd_g=u(0.005, 0.04),
        cell_capacity_g=capacity,
        sens_mv_v=sens,
        sign=sign,
        efficiency=efficiency,
        counts_per_g=counts_per_g,
        offset_counts=offset,
        noise_g=noise,
        drift_g=u(0.002, 0.015, N_LEVELS),
        drift_tau_s=u(15.0, 60.0),
        load_hum_counts=u(20.0, 400.0, N_LEVELS),
        hx_rate_hz=hx_mean * (1 + 0.01 * rng.standard_normal(N_LEVELS)),
        glitch_rate=0.0 if rng.random() < 0.5 else u(1e-5, 6e-5),
        piezo_rate_hz=piezo_rate,
        mux_s=ADC_CLOCKS_PER_CONVERSION * prescaler / F_CPU,
        adc_noise_lsb=u(0.45, 1.2, N_LEVELS),
        bias_lsb=3.0 * rng.standard_normal(N_LEVELS),
        sens_lsb=np.exp(u(math.log(45), math.log(320), N_LEVELS)),
        mode_f_hz=mode_f,
        mode_q=u(5.0, 25.0, (N_LEVELS, n_modes)),
        frontend_lp_hz=u(1500.0, 5000.0),
        xt_up=u(0.1, 0.4),
        xt_down=u(0.1, 0.4),
        xt_pair=rng.lognormal(0.0, 0.3, (N_LEVELS + 2, N_LEVELS)),
        xt_delay_s=u(0.1e-3, 0.6e-3),
        xt_lp_hz=u(400.0, 1500.0),
        struct_f_hz=u(25.0, 70.0),
        struct_tau_s=u(0.02, 0.06),
        struct_gain=u(0.03, 0.12),
        base_att=u(0.6, 0.9),
        ac_tau_s=u(0.02, 0.08),
        press_lsb_per_g=u(0.1, 0.5),
        hum_lsb=u(0.2, 1.5, N_LEVELS) * (1 + 0.1 * np.arange(N_LEVELS)),
        disc_hum_lsb=u(1.0, 6.0),
        mains_hz=50.0 if rng.random() < 0.8 else 60.0,
        clock_ppm=u(-3000.0, 3000.0),
        rattle_level=rattle,
        rattle_delay_s=u(4e-3, 15e-3),
        rattle_ratio=u(0.2, 0.5),
        fw=(1, int(rng.integers(0, 4)), int(rng.integers(0, 10))),
        device_id=bytes(rng.integers(0, 256, 8).astype(np.uint8).tolist()),
        batch_sets=int(rng.choice([6, 8, 10, 12])),
        cpu_pct=u(30.0, 60.0),
        busy_p=u(0.05, 0.2),
    )


# --------------------------------------------------------------------------
# One session: how the recording was started and what the room is like.
# --------------------------------------------------------------------------

ROOMS: dict[str, dict[str, tuple[float, float]]] = {
    # talk coverage, talk level (LSB), footstep passes, electrical hum factor,
    # mechanical 100/120 Hz hum (LSB), disturbances per 120 s
    "single": {"talk": (0.0, 0.15), "talk_lsb": (0.3, 1.5), "steps": (0, 2), "hum": (1, 1),
               "mech": (0, 0), "knocks": (0, 0)},
    "rapid": {"talk": (0.05, 0.25), "talk_lsb": (0.3, 2.0), "steps": (0, 2), "hum": (1, 1),
              "mech": (0, 0), "knocks": (0, 0)},
    "noisy": {"talk": (0.5, 0.8), "talk_lsb": (2.0, 10.0), "steps": (2, 5), "hum": (2.5, 6.0),
              "mech": (1.0, 5.0), "knocks": (8, 16)},
    "game": {"talk": (0.3, 0.6), "talk_lsb": (1.0, 5.0), "steps": (1, 3), "hum": (1.0, 2.0),
             "mech": (0.0, 1.0), "knocks": (2, 5)},
}


@dataclass
class Session:
    """How one recording was made: start of the capture, device uptime, room."""

    scenario: str
    start_mode: str
    tau_open: float
    u0_us: int
    hello_tau: float
    junk: bytes
    quiet_s: float
    talk_cov: float
    talk_lsb: float
    talk_gain: FloatArray
    step_passes: int
    hum_mult: float
    mech_hum_lsb: float
    knocks_per_120s: float


def draw_session(tw: Tower, scenario: str, duration_s: float,
                 rng: np.random.Generator) -> Session:
    """The capture and the room for one recording of tower ``tw``."""
    u = rng.uniform
    mode = ("boot", "attach", "attach_wrap")[(tw.seed + SCENARIOS.index(scenario)) % 3]
    junk = b""
    if mode == "boot":
        # Opening the port resets the Nano (DTR); micros() restarts, and the
        # firmware measures its HX711s for about half a second before HELLO.
        tau_open = 0.0
        u0 = int(u(0.55e6, 1.3e6))
        hello_tau = -u(0.002, 0.01)
        if tw.seed % 2 == 0:
            # The USB-serial bridge passes a few bytes of line noise at reset
            # (on even seeds, so that a default run has both kinds of boot).
            junk = bytes(rng.integers(1, 256, int(rng.integers(1, 7))).astype(np.uint8).tolist())
    else:
        tau_open = u(0.02, 0.15)
        hello_tau = tau_open + u(0.004, 0.03)
        if mode == "attach_wrap":
            wrap_at = u(min(tau_open + 2.0, duration_s * 0.5), max(duration_s - 2.0, 1.0))
            u0 = int(rng.integers(1, 4)) * T_US_MOD - int(wrap_at * 1e6)
        else:
            u0 = int(u(60e6, 4 * 3600e6))
            if (u0 % T_US_MOD) + (duration_s + 2) * 1e6 >= T_US_MOD:
                u0 -= int((duration_s + 10) * 1e6)
    room = ROOMS[scenario]
    return Session(
        scenario=scenario,
        start_mode=mode,
        tau_open=tau_open,
        u0_us=u0,
        hello_tau=hello_tau,
        junk=junk,
        quiet_s=u(4.3, 7.0),
        talk_cov=u(*room["talk"]),
        talk_lsb=u(*room["talk_lsb"]),
        talk_gain=u(0.5, 1.5, N_LEVELS),
        step_passes=int(rng.integers(int(room["steps"][0]), int(room["steps"][1]) + 1)),
        hum_mult=u(*room["hum"]),
        mech_hum_lsb=u(*room["mech"]),
        knocks_per_120s=u(*room["knocks"]),
    )


# --------------------------------------------------------------------------
# The physical world: cubes, hands, table, contacts. Times are device seconds
# ("tau", 0 at the first piezo set of the simulation).
# --------------------------------------------------------------------------

@dataclass
class Impact:
    """A short contact on a plate (0..7) or on the unsensed top roof (8)."""

    t: float
    plate: int
    j_ns: float
    tc_s: float
    kind: str
    load_frac: float = 1.0


@dataclass
class BaseHit:
    """A shock that enters through the table: knocks, cups, footsteps."""

    t: float
    amp_lsb: float
    f_hz: float
    tau_s: float
    acc_ms2: float
    kind: str


@dataclass
class Placement:
    """A cube lying on one level from ``t_rest`` until ``t_left``."""

    cid: int
    color: str
    mass_g: float
    rho: float
    level: int
    t_rest: float
    t_left: float = math.inf


@dataclass
class Episode:
    """Hands on the tower: load wobble (g) and rubbing noise (LSB) per level."""

    t0: float
    t1: float
    load_g: FloatArray
    rumble_lsb: FloatArray
    band_hz: float
    kind: str


@dataclass
class Press:
    """A finger pressing the exposed plate while picking cubes up."""

    t0: float
    t1: float
    level: int
    force_g: float


def _fall_time(v: float, h: float) -> float:
    return (-v + math.sqrt(v * v + 2 * G * h)) / G


KNOCK_KINDS: dict[str, dict[str, tuple[float, float]]] = {
    # piezo amplitude at level 0 (LSB), ringing frequency, decay, table acceleration
    "table_knock": {"amp": (60, 450), "f": (40, 120), "tau": (0.02, 0.06), "acc": (2, 12)},
    "cup_down": {"amp": (10, 90), "f": (60, 160), "tau": (0.01, 0.04), "acc": (0.5, 3)},
    "elbow_bump": {"amp": (20, 150), "f": (8, 25), "tau": (0.08, 0.2), "acc": (0.5, 3)},
    "door_slam": {"amp": (5, 40), "f": (10, 25), "tau": (0.05, 0.15), "acc": (0.3, 1.5)},
}


@dataclass
class World:
    """The timeline of everything physical that happens in one recording."""

    tw: Tower
    rng: np.random.Generator
    impacts: list[Impact] = field(default_factory=list)
    base_hits: list[BaseHit] = field(default_factory=list)
    placements: list[Placement] = field(default_factory=list)
    steps: list[tuple[float, int, float]] = field(default_factory=list)
    episodes: list[Episode] = field(default_factory=list)
    presses: list[Press] = field(default_factory=list)
    pops: list[tuple[float, int, float]] = field(default_factory=list)
    talks: list[tuple[float, float, float, float]] = field(default_factory=list)
    buzzes: list[tuple[float, float, float, float]] = field(default_factory=list)
    disc: list[list[tuple[float, float]]] = field(
        default_factory=lambda: [[] for _ in range(N_LEVELS)])
    truth: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: {
        k: [] for k in ("landings", "knockdowns", "removals", "lifts", "closes", "knocks",
                        "handling", "background")})
    busy: list[tuple[float, float]] = field(default_factory=list)
    next_cid: int = 0

    # ---- cubes ----------------------------------------------------------
    def resting(self, level: int, t: float) -> list[Placement]:
        return [p for p in self.placements if p.level == level and p.t_rest <= t < p.t_left]

    def last_rest(self) -> float:
        return max((p.t_rest for p in self.placements), default=0.0)

    def _e(self) -> float:
        return float(self.rng.uniform(*self.tw.restitution))

    def _impact(self, t: float, plate: int, j_ns: float, kind: str,
                tc_s: float | None = None, load_frac: float = 1.0) -> None:
        rng = self.rng
        if tc_s is None:
            lo, hi = {"cube": (0.3e-3, 1.0e-3), "bounce": (0.3e-3, 1.0e-3),
                      "graze": (0.15e-3, 0.5e-3), "tick": (0.5e-3, 2e-3)}.get(kind, (1e-3, 3e-3))
            tc_s = float(rng.uniform(lo, hi))
        self.impacts.append(Impact(t, plate, j_ns, tc_s, kind, load_frac))
        if plate == self.tw.rattle_level and kind in ("cube", "bounce"):
            # A loosely seated plate clatters once more against its frame.
            self.impacts.append(Impact(t + self.tw.rattle_delay_s * rng.uniform(0.8, 1.2), plate,
                                       j_ns * self.tw.rattle_ratio, tc_s, "rattle", 0.0))

    def throw(self, t_release: float, color: str, cid: int | None = None,
              mass_g: float | None = None) -> dict[str, Any]:
        """Drop one cube into the shaft; returns its landing truth (in device time)."""
        tw, rng = self.tw, self.rng
        if cid is None:
            cid = self.next_cid
            self.next_cid += 1
        if mass_g is None:
            mass_g = float(np.clip(tw.cube_mass_g * (1 + tw.cube_mass_cv * rng.standard_normal()),
                                   0.25, 0.85))
        m = mass_g * 1e-3
        h0 = rng.uniform(0.02, 0.15)  # release height above the top roof (m)
        v0 = rng.uniform(0.0, 0.4)  # a little push downwards (m/s)
        t = t_release + _fall_time(v0, h0)
        v = math.sqrt(v0 * v0 + 2 * G * h0)
        first: float | None = None
        if rng.random() < tw.top_graze_p:
            self._impact(t, 8, m * v * rng.uniform(0.05, 0.25), "graze")
            first = t
            v *= rng.uniform(0.6, 0.95)
        t += _fall_time(v, tw.module_h_m)
        v = math.sqrt(v * v + 2 * G * tw.module_h_m)
        pl, first, knock = self._descend(cid, color, mass_g, t, v, N_LEVELS - 1, True, first)
        landing = self._landing(pl, first, False, knock is not None)
        landing["t_release"] = t_release
        self.truth["landings"].append(landing)
        if knock is not None:
            t_k, src, kpl, kfirst = knock
            self.truth["knockdowns"].append({"t": t_k, "from": src, "floor": kpl.level})
            self.truth["landings"].append(self._landing(kpl, kfirst, True, False))
        return landing

    def _landing(self, pl: Placement, first: float, knocked: bool,
                 caused: bool) -> dict[str, Any]:
        return {"t": pl.t_rest, "floor": pl.level, "cubes": 1, "t_first_impact": first,
                "knocked": knocked, "caused_knockdown": caused, "color": pl.color,
                "cube": pl.cid, "mass_g": round(pl.mass_g, 4),
                "step_counts": round(float(self.tw.counts_per_g[pl.level] * pl.mass_g * pl.rho))}

    def _descend(self, cid: int, color: str, mass_g: float, t: float, v: float, plate: int,
                 may_knock: bool, first: float | None
                 ) -> tuple[Placement, float, tuple[float, int, Placement, float] | None]:
        """Follow a cube arriving at ``plate`` with speed ``v`` until it rests."""
        tw, rng = self.tw, self.rng
        m = mass_g * 1e-3
        h = tw.module_h_m
        knock = None
        while True:
            if plate == 0 or rng.random() < tw.stop_p[plate]:
                e = self._e()
                self._impact(t, plate, m * v * (1 + e), "cube")
                first = t if first is None else first
                if may_knock and knock is None:
                    knock = self._maybe_knock(plate, t, cid)
                vb, tb = e * v, t
                while vb > 0.05 and tb - t < 0.6:
                    tb += 2 * vb / G
                    e2 = self._e()
                    self._impact(tb, plate, m * vb * (1 + e2), "bounce")
                    vb *= e2
                n_ticks = min(4, int(rng.poisson(1.5)))
                ticks = np.sort(tb + rng.uniform(0.0, rng.uniform(0.04, 0.3), n_ticks))
                for tt in ticks:
                    self._impact(float(tt), plate, m * rng.uniform(0.02, 0.12), "tick")
                t_rest = (float(ticks[-1]) if n_ticks else tb) + rng.uniform(0.01, 0.04)
                rho = 1 + tw.position_sd * rng.standard_normal()
                self.steps.append((tb, plate, mass_g * rho))
                pl = Placement(cid, color, mass_g, rho, plate, t_rest)
                self.placements.append(pl)
                return pl, first, knock
            u = rng.random()
            if u < tw.graze_p[plate]:
                self._impact(t, plate, m * v * rng.uniform(0.05, 0.3), "graze")
                first = t if first is None else first
                v *= rng.uniform(0.75, 0.97)
                t += _fall_time(v, h)
                v = math.sqrt(v * v + 2 * G * h)
            elif u < tw.graze_p[plate] + tw.hitpass_p[plate]:
                # Hits the plate beside the hole, hops and tumbles in.
                e = self._e()
                self._impact(t, plate, m * v * (1 + e), "cube")
                first = t if first is None else first
                if may_knock and knock is None:
                    knock = self._maybe_knock(plate, t, cid)
                vb = e * v
                for _ in range(int(rng.integers(0, 3))):
                    t += 2 * vb / G
                    e2 = self._e()
                    self._impact(t, plate, m * vb * (1 + e2), "bounce")
                    vb *= e2
                t += rng.uniform(0.02, 0.12)
                v0 = rng.uniform(0.05, 0.3)
                t += _fall_time(v0, h)
                v = math.sqrt(v0 * v0 + 2 * G * h)
            else:
                t += _fall_time(v, h)
                v = math.sqrt(v * v + 2 * G * h)
            plate -= 1

    def _maybe_knock(self, plate: int, t: float,
                     cid: int) -> tuple[float, int, Placement, float] | None:
        if plate == 0:
            return None
        cands = [p for p in self.resting(plate, t) if p.cid != cid]
        if not cands:
            return None
        # Only cubes lying near the hole edge can be knocked in; the more cubes,
        # the likelier one lies there, saturating at the tower's p_max.
        p_knock = self.tw.knock_p_max * (1 - math.exp(-len(cands) / 3))
        if self.rng.random() >= p_knock:
            return None
        victim = cands[int(self.rng.integers(len(cands)))]
        t_k = t + self.rng.uniform(0.02, 0.1)
        victim.t_left = t_k
        self.steps.append((t_k, plate, -victim.mass_g * victim.rho))
        v0 = self.rng.uniform(0.1, 0.35)
        h = self.tw.module_h_m
        pl, first, _ = self._descend(victim.cid, victim.color, victim.mass_g,
                                     t_k + _fall_time(v0, h), math.sqrt(v0 * v0 + 2 * G * h),
                                     plate - 1, False, None)
        return t_k, plate, pl, first

    # ---- hands ----------------------------------------------------------
    def _taps(self, t0: float, t1: float, plates: list[int], rate: float,
              load_frac: float = 0.0) -> None:
        rng = self.rng
        for _ in range(int(rng.poisson(rate * max(t1 - t0, 0.0)))):
            self._impact(float(rng.uniform(t0, t1)), int(rng.choice(plates)),
                         float(rng.uniform(3e-5, 3e-4)), "finger",
                         tc_s=float(rng.uniform(2e-3, 8e-3)), load_frac=load_frac)

    def inspect(self, t0: float, k: int) -> tuple[float, list[Placement]]:
        """Lift modules k..7, take every cube off level k, put the modules back."""
        tw, rng = self.tw, self.rng
        u = rng.uniform
        t_lift = t0 + u(0.4, 1.2)
        n_lifted = N_LEVELS - k
        self.episodes.append(Episode(t0, t_lift + 0.1, u(0.05, 0.6, N_LEVELS),
                                     u(4, 25, N_LEVELS), u(1.5, 5.0), "grasp"))
        self._taps(t0, t_lift, list(range(N_LEVELS)), 2.0)
        self._impact(t_lift, k, u(2e-4, 1e-3), "lift", tc_s=u(3e-3, 8e-3), load_frac=0.3)
        shifts = np.zeros(N_LEVELS)
        shifts[k] = tw.frame_shift_g[k] * n_lifted / 4
        shifts[:k] = tw.frame_shift_g[:k] * n_lifted / 4 * 0.4
        for lvl in range(k + 1):
            self.steps.append((t_lift, lvl, float(shifts[lvl])))
        handling: list[dict[str, Any]] = [{"t": t0, "kind": "grasp", "exposed": k}]
        t = t_lift + u(0.8, 2.5)
        if rng.random() < 0.25:
            t_set = t_lift + u(0.5, 1.0)
            self.base_hits.append(BaseHit(t_set, u(20, 120), u(40, 110), u(0.02, 0.05),
                                          u(0.3, 2.0), "stack_set_aside"))
            handling.append({"t": t_set, "kind": "stack_set_aside"})
            t += u(0.5, 1.0)
        cubes = self.resting(k, t_lift)
        removed: list[Placement] = []
        if cubes:
            rest = [cubes[i] for i in rng.permutation(len(cubes))]
            while rest:
                take = int(min(len(rest), rng.choice([1, 2, 3], p=[0.45, 0.35, 0.2])))
                grab, rest = rest[:take], rest[take:]
                t_leave = t + u(0.4, 1.3)
                self.presses.append(Press(t, t_leave, k, u(4, 35)))
                rum = np.zeros(N_LEVELS)
                rum[k] = u(10, 45)
                for nb in (k - 1, k + 1):
                    if 0 <= nb < N_LEVELS:
                        rum[nb] = rum[k] * 0.3
                self.episodes.append(Episode(t, t_leave + 0.1, np.zeros(N_LEVELS), rum, 3.0,
                                             "grab"))
                self._taps(t, t_leave, [k], 2.5, load_frac=1.0)
                for c in grab:
                    c.t_left = t_leave
                    self.steps.append((t_leave, k, -c.mass_g * c.rho))
                removed += grab
                self.truth["removals"].append({"t": t_leave, "floor": k, "cubes": len(grab)})
                t = t_leave + u(0.4, 1.5)
        else:
            t += u(0.5, 1.5)
        t_close = t + u(0.6, 1.8)
        if k < N_LEVELS - 1:
            off = self._contact_breaks(t_lift, t_close)
            for ch in range(k + 1, N_LEVELS):
                self.disc[ch].extend(off)
                for a, b in off:
                    self.pops.append((a, ch, float(rng.normal(0, 60))))
                    self.pops.append((b, ch, float(rng.normal(0, 60))))
                self.steps.append((t_lift + 0.2, ch, float(rng.normal(0, tw.reseat_sd_g))))
        m_stack = n_lifted * u(0.012, 0.020)
        self._impact(t_close, k, m_stack * u(0.02, 0.08), "close", tc_s=u(5e-3, 15e-3),
                     load_frac=0.25)
        for lvl in range(k + 1):
            self.steps.append((t_close, lvl, -float(shifts[lvl]) * (1 - u(0.0, 0.3))))
        t_release = t_close + u(0.3, 1.0)
        hold_load = np.where(np.arange(N_LEVELS) <= k, u(0.05, 0.8, N_LEVELS),
                             u(0.05, 0.4, N_LEVELS))
        self.episodes.append(Episode(t_lift, t_release, hold_load, u(3, 20, N_LEVELS),
                                     u(1.5, 5.0), "hold"))
        self._taps(t_lift, t_release, list(range(N_LEVELS)), 1.5)
        handling.append({"t": t_release, "kind": "release"})
        self.truth["lifts"].append({"t": t_lift, "exposed": k})
        self.truth["closes"].append({"t": t_close, "exposed": k})
        self.truth["handling"] += handling
        self.busy.append((t0, t_release))
        return t_release, removed

    def _contact_breaks(self, t_lift: float, t_close: float) -> list[tuple[float, float]]:
        """Disconnected intervals of the spring contacts: a clean lift or a flicker, bounces."""
        rng = self.rng
        off: list[tuple[float, float]] = []
        cur = t_lift
        if rng.random() < 0.3:
            d1 = rng.uniform(0.005, 0.04)
            off.append((t_lift, t_lift + d1))
            cur = t_lift + d1 + rng.uniform(0.005, 0.04)
        n_b = int(rng.choice([0, 1, 2, 3], p=[0.4, 0.3, 0.2, 0.1]))
        for b_on in np.sort(rng.uniform(t_close - 0.3, t_close - 0.02, n_b)):
            b_on = float(b_on)
            dur = min(float(rng.uniform(0.005, 0.12)), t_close - 0.008 - b_on)
            if b_on > cur + 0.005 and dur > 0.002:
                off.append((cur, b_on))
                cur = b_on + dur
        off.append((cur, t_close))
        return off

    # ---- room -----------------------------------------------------------
    def knock(self, t: float, kind: str) -> None:
        rng = self.rng
        u = rng.uniform
        self.truth["knocks"].append({"t": t, "kind": kind})
        if kind in KNOCK_KINDS:
            p = KNOCK_KINDS[kind]
            self.base_hits.append(BaseHit(t, u(*p["amp"]), u(*p["f"]), u(*p["tau"]),
                                          u(*p["acc"]), kind))
        elif kind == "tower_touch":
            dur = u(0.3, 1.2)
            lo = int(rng.integers(0, N_LEVELS - 3))
            touched = np.zeros(N_LEVELS, dtype=bool)
            touched[lo:lo + 4] = True
            load = np.where(touched, u(0.1, 1.5, N_LEVELS), 0.0)
            rumble = np.where(touched, u(5, 40, N_LEVELS), u(1, 8, N_LEVELS))
            self.episodes.append(Episode(t, t + dur, load, rumble, u(2, 6), "tower_touch"))
            self._impact(t, lo + 2, u(1e-4, 8e-4), "finger", tc_s=u(3e-3, 8e-3), load_frac=0.0)
            self._taps(t, t + dur, list(range(lo, lo + 4)), 3.0)
        elif kind == "phone_buzz":
            self.buzzes.append((t, t + u(1.0, 2.5), u(3, 25), u(150, 230)))
        else:
            raise ValueError(kind)

    def footsteps(self, t0: float) -> None:
        rng = self.rng
        n = int(rng.integers(4, 11))
        amp = rng.uniform(1, 6)
        t = t0
        for _ in range(n):
            self.base_hits.append(BaseHit(t, amp * rng.uniform(0.6, 1.4), rng.uniform(12, 30),
                                          rng.uniform(0.03, 0.08), rng.uniform(0.02, 0.12),
                                          "footstep"))
            t += rng.uniform(0.45, 0.65)
        self.truth["background"].append({"t": t0, "t_end": t, "kind": "footsteps"})

    def talk(self, t0: float, t1: float, cov: float, lsb: float) -> None:
        rng = self.rng
        t = t0
        while t < t1 - 0.3:
            if rng.random() < cov:
                dur = rng.uniform(0.4, 3.0)
                loud = 2.0 if rng.random() < 0.08 else 1.0  # now and then a laugh
                self.talks.append((t, min(t + dur, t1), lsb * loud * rng.uniform(0.5, 1.5),
                                   rng.uniform(90, 240)))
                self.truth["background"].append({"t": t, "t_end": min(t + dur, t1),
                                                 "kind": "talk"})
                t += dur + rng.uniform(0.1, 0.6)
            else:
                t += rng.uniform(0.5, 3.0)


# --------------------------------------------------------------------------
# Scenarios
# --------------------------------------------------------------------------

def _room(world: World, sess: Session, start: float, end: float) -> None:
    rng = world.rng
    world.talk(start, end, sess.talk_cov, sess.talk_lsb)
    for _ in range(sess.step_passes):
        world.footsteps(float(rng.uniform(start, max(start, end - 6))))


def _disturbances(world: World, kinds: dict[str, float], n: int, start: float, end: float,
                  near_p: float) -> None:
    rng = world.rng
    names = list(kinds)
    probs = np.array([kinds[k] for k in names])
    probs /= probs.sum()
    rests = [x["t"] for x in world.truth["landings"]]
    placed: list[float] = []
    for _ in range(n):
        for _try in range(20):
            if rests and rng.random() < near_p:
                t = float(rests[int(rng.integers(len(rests)))] + rng.uniform(-0.5, 1.5))
            else:
                t = float(rng.uniform(start, end))
            ok = start <= t <= end and all(abs(t - p) > 0.8 for p in placed)
            ok = ok and all(not (a - 0.5 <= t <= b + 0.5) for a, b in world.busy)
            if ok:
                placed.append(t)
                world.knock(t, str(rng.choice(names, p=probs)))
                break


def plan(world: World, sess: Session, duration_s: float, tau_shift: float) -> None:
    """Fill the world's timeline for one scenario (device time = stream time + tau_shift)."""
    rng = world.rng
    start = tau_shift + sess.quiet_s
    end = tau_shift + duration_s
    last_throw = end - 3.0
    u = rng.uniform
    scen = sess.scenario
    _room(world, sess, start, end - 0.5)
    if scen in ("single", "noisy"):
        t = start + u(0.0, 1.5)
        while t <= last_throw or not world.truth["landings"]:
            world.throw(t, "any")
            t += u(3.0, 8.0)
    elif scen == "rapid":
        t = start + u(0.0, 1.0)
        while t <= last_throw or not world.truth["landings"]:
            for _ in range(int(rng.choice([2, 3, 4, 5], p=[0.3, 0.35, 0.2, 0.15]))):
                if t > last_throw and world.truth["landings"]:
                    break
                world.throw(t, "any")
                t += u(0.3, 0.8)
            t += u(3.0, 8.0)
    elif scen == "game":
        _plan_game(world, start, end, last_throw)
    else:
        raise ValueError(scen)
    n_knocks = int(round(sess.knocks_per_120s * duration_s / 120.0))
    if scen == "noisy":
        _disturbances(world, {"table_knock": 0.35, "cup_down": 0.2, "elbow_bump": 0.15,
                              "door_slam": 0.1, "phone_buzz": 0.1, "tower_touch": 0.1},
                      n_knocks, start, end - 1.0, 0.4)
    elif scen == "game":
        _disturbances(world, {"table_knock": 0.35, "cup_down": 0.35, "tower_touch": 0.2,
                              "elbow_bump": 0.1}, n_knocks, start, end - 1.0, 0.2)


def _plan_game(world: World, start: float, end: float, last_throw: float) -> None:
    """Mord im Arosa: prologue throws, then inspections with removals and throw-backs."""
    rng = world.rng
    u = rng.uniform
    players = [str(c) for c in rng.choice(COLOURS, size=int(rng.integers(3, 6)), replace=False)]
    t = start + u(0.0, 1.5)

    def throw_all(colours: list[tuple[str, int | None, float | None]], t: float,
                  gap: tuple[float, float]) -> float:
        for colour, cid, mass in colours:
            if t > last_throw:
                break
            land = world.throw(t, colour, cid, mass)
            t = max(t + u(*gap), land["t"] + u(0.8, 1.5))
        return t

    prologue: list[tuple[str, int | None, float | None]] = [("red", None, None)] * 2
    for p in players:
        prologue += [(p, None, None)] * 2
    t = throw_all(prologue, t, (2.5, 6.0))
    victims = 0
    turn = 0
    while True:
        who = players[turn % len(players)]
        t0 = max(t, world.last_rest() + 1.0) + u(1.5, 4.0)
        counts = np.array([len(world.resting(k, t0)) for k in range(N_LEVELS)])
        k = int(rng.choice(N_LEVELS, p=(counts + 0.7) / (counts + 0.7).sum()))
        worst = 1.2 + 2.5 + 1.0 + counts[k] * 2.8 + 1.5 + 1.8 + 1.0
        if t0 + worst > end - 0.5:
            break
        t_end, removed = world.inspect(t0, k)
        back = [(p.color, p.cid, p.mass_g) for p in removed if p.color != "red"]
        found = sum(p.color == "red" for p in removed)
        if victims < 2:
            victims += found
            penalty = 0 if found else 1
        else:
            suspects = [p for p in players if p != who][: int(rng.integers(1, 3))]
            if rng.random() < 0.6:
                penalty = sum(1 for s in suspects if not any(p.color == s for p in removed))
            else:
                penalty = 0 if any(p.color == who for p in removed) else 1
        throws: list[tuple[str, int | None, float | None]] = list(back)
        throws += [(who, None, None)] * penalty
        t = throw_all(throws, t_end + u(1.0, 3.0), (1.5, 4.0))
        turn += 1


# --------------------------------------------------------------------------
# Rendering the sensors
# --------------------------------------------------------------------------

def _interp_noise(rng: np.random.Generator, n: int, rate_hz: float, knot_hz: float,
                  cols: int) -> FloatArray:
    """Smooth random signal: Gaussian knots every 1/knot_hz seconds, linearly joined."""
    n_knots = int(n / rate_hz * knot_hz) + 3
    knots = rng.standard_normal((n_knots, cols))
    x = np.arange(n) / rate_hz * knot_hz
    out = np.empty((n, cols))
    for c in range(cols):
        out[:, c] = np.interp(x, np.arange(n_knots), knots[:, c])
    return out


def _envelope(n: int, rate_hz: float, attack_s: float, release_s: float) -> FloatArray:
    tt = np.arange(n) / rate_hz
    dur = n / rate_hz
    return np.clip(tt / attack_s, 0, 1) * np.clip((dur - tt) / release_s, 0, 1)


def _disconnected_mask(world: World, n: int, rate: float) -> npt.NDArray[np.bool_]:
    mask = np.zeros((n, N_LEVELS), dtype=bool)
    for ch in range(N_LEVELS):
        for a, b in world.disc[ch]:
            mask[max(0, math.ceil(a * rate)):max(0, math.ceil(b * rate)), ch] = True
    return mask


def render_piezo(world: World, sess: Session, n: int, rng: np.random.Generator,
                 hum_wave: FloatArray) -> npt.NDArray[np.uint16]:
    """ADC codes (n sets x 8 channels) of the eight contact microphones."""
    tw = world.tw
    rate = float(tw.piezo_rate_hz)
    t = np.arange(n) / rate
    pz = hum_wave[:, None] * (tw.hum_lsb * sess.hum_mult)[None, :]
    levels = np.arange(N_LEVELS)
    if sess.mech_hum_lsb > 0:
        f2 = 2 * tw.mains_hz * (1 - tw.clock_ppm * 1e-6)
        pz += np.sin(2 * np.pi * f2 * t + rng.uniform(0, 2 * np.pi))[:, None] * (
            sess.mech_hum_lsb * tw.base_att ** levels)[None, :]
    _render_talk(world, sess, pz, rate, rng)
    for t0, t1, amp, f in world.buzzes:
        i0, i1 = int(t0 * rate), min(n, int(t1 * rate))
        if i1 <= i0:
            continue
        tt = np.arange(i1 - i0) / rate
        gate = (np.mod(tt, 0.6) < 0.4).astype(float)
        wave = (np.sin(2 * np.pi * f * tt) + 0.3 * np.sin(4 * np.pi * f * tt)) * gate
        pz[i0:i1] += wave[:, None] * (amp * tw.base_att ** levels)[None, :]
    slow = np.zeros((n, N_LEVELS))
    _render_episodes(world, pz, slow, rate, rng, n)
    for imp in world.impacts:
        _add_impact(tw, pz, imp, rate, rng)
    for hit in world.base_hits:
        _add_base_hit(tw, pz, hit, rate, rng)
    for pr in world.presses:
        i0, i1 = int(pr.t0 * rate), min(n, int((pr.t1 + 0.1) * rate))
        if i1 > i0:
            slow[i0:i1, pr.level] += _press_shape(pr, i1 - i0, rate, rng)
    a = tw.ac_tau_s / (tw.ac_tau_s + 1 / rate)
    active = np.flatnonzero(np.any(slow != 0, axis=0))
    if active.size:
        pz[:, active] += tw.press_lsb_per_g * signal.lfilter([a, -a], [1, -a], slow[:, active],
                                                             axis=0)
    mask = _disconnected_mask(world, n, rate)
    if mask.any():
        pz = np.where(mask, hum_wave[:, None] * tw.disc_hum_lsb, pz)
    for tp, ch, amp in world.pops:
        i0 = math.ceil(tp * rate)
        i1 = min(n, i0 + int(6 * tw.ac_tau_s * rate))
        if 0 <= i0 < i1:
            pz[i0:i1, ch] += amp * np.exp(-(np.arange(i1 - i0) / rate) / tw.ac_tau_s)
    pz += 512.0 + tw.bias_lsb[None, :]
    pz += rng.standard_normal((n, N_LEVELS)) * tw.adc_noise_lsb[None, :]
    return np.clip(np.rint(pz), 0, 1023).astype(np.uint16)


def _render_talk(world: World, sess: Session, pz: FloatArray, rate: float,
                 rng: np.random.Generator) -> None:
    tw = world.tw
    n = pz.shape[0]
    for t0, t1, amp, f0 in world.talks:
        i0, i1 = int(t0 * rate), min(n, int(t1 * rate))
        if i1 - i0 < 10:
            continue
        m = i1 - i0
        tt = np.arange(m) / rate
        f = f0 * (1 + 0.08 * np.sin(2 * np.pi * rng.uniform(0.3, 1.0) * tt + rng.uniform(0, 6))
                  + 0.04 * _interp_noise(rng, m, rate, 3.0, 1)[:, 0])
        phase = 2 * np.pi * np.cumsum(f) / rate
        formant1, formant2 = rng.uniform(400, 900), rng.uniform(1100, 2500)
        voice = np.zeros(m)
        for h in range(1, 13):
            fh = h * f0
            gain = (1 / h) * (1 + 2 * math.exp(-((fh - formant1) / 200) ** 2)
                              + 1.5 * math.exp(-((fh - formant2) / 300) ** 2))
            gain /= math.sqrt(1 + (fh / tw.frontend_lp_hz) ** 2)
            voice += gain * np.sin(h * phase + rng.uniform(0, 2 * np.pi))
        voice /= max(np.max(np.abs(voice)), 1e-9)
        syll = np.abs(np.sin(np.pi * rng.uniform(3, 6) * tt + rng.uniform(0, np.pi))) ** 0.6
        syll *= np.clip(0.6 + 0.4 * _interp_noise(rng, m, rate, 5.0, 1)[:, 0], 0, None)
        env = syll * _envelope(m, rate, 0.05, 0.1)
        sig = env * (voice + 0.2 * rng.standard_normal(m))
        pz[i0:i1] += sig[:, None] * (amp * sess.talk_gain)[None, :]


def _render_episodes(world: World, pz: FloatArray, slow: FloatArray, rate: float,
                     rng: np.random.Generator, n: int) -> None:
    hi = min(700.0, 0.45 * rate)
    b, a = signal.butter(2, [40.0, hi], btype="bandpass", fs=rate)
    for ep in world.episodes:
        i0, i1 = int(ep.t0 * rate), min(n, int(ep.t1 * rate))
        m = i1 - i0
        if m < 10:
            continue
        env = _envelope(m, rate, 0.15, 0.2)
        mod = np.abs(_interp_noise(rng, m, rate, 4.0, 1)[:, 0])
        common = signal.lfilter(b, a, rng.standard_normal(m))
        indep = signal.lfilter(b, a, rng.standard_normal((m, N_LEVELS)), axis=0)
        scale = 1.0 / max(float(np.std(common)), 1e-9)
        noise = (0.8 * common[:, None] + 0.5 * indep) * scale
        pz[i0:i1] += (env * mod)[:, None] * noise * ep.rumble_lsb[None, :]
        if np.any(ep.load_g > 0):
            wob = _interp_noise(rng, m, rate, ep.band_hz, N_LEVELS)
            wob += 0.5 * rng.standard_normal(N_LEVELS)[None, :]
            slow[i0:i1] += 0.3 * env[:, None] * wob * ep.load_g[None, :]


def _press_shape(pr: Press, m: int, rate: float, rng: np.random.Generator) -> FloatArray:
    tt = np.arange(m) / rate
    rise = rng.uniform(0.08, 0.3)
    fall = rng.uniform(0.03, 0.1)
    dur = pr.t1 - pr.t0
    up = 0.5 - 0.5 * np.cos(np.pi * np.clip(tt / rise, 0, 1))
    down = 0.5 + 0.5 * np.cos(np.pi * np.clip((tt - (dur - fall / 2)) / fall, 0, 1))
    wob = 1 + 0.25 * _interp_noise(rng, m, rate, 3.0, 1)[:, 0]
    return pr.force_g * up * down * wob


def _add_impact(tw: Tower, pz: FloatArray, imp: Impact, rate: float,
                rng: np.random.Generator) -> None:
    src = imp.plate
    d = np.arange(N_LEVELS) - src
    gain = np.where(d > 0, tw.xt_up ** np.abs(d), tw.xt_down ** np.abs(d))
    gain = np.where(d == 0, 1.0, gain * tw.xt_pair[src + 1])
    amps = tw.sens_lsb * (imp.j_ns / J_REF) * gain * rng.lognormal(0, 0.15, N_LEVELS)
    f = tw.mode_f_hz * (1 + 0.02 * rng.standard_normal(tw.mode_f_hz.shape))
    w = rng.dirichlet(np.ones(f.shape[1]), N_LEVELS)
    w = w / (1 + (f * imp.tc_s) ** 2)
    w = np.where((d != 0)[:, None], w / np.sqrt(1 + (f / tw.xt_lp_hz) ** 2), w)
    tau = tw.mode_q / (np.pi * f)
    # The tower body rings too, a little, at its own low mode.
    fs = np.full((N_LEVELS, 1), tw.struct_f_hz)
    ws = np.full((N_LEVELS, 1), tw.struct_gain / (1 + (tw.struct_f_hz * imp.tc_s) ** 2))
    taus = np.full((N_LEVELS, 1), tw.struct_tau_s)
    _ring(tw, pz, imp.t, amps, np.abs(d) * tw.xt_delay_s, np.hstack([f, fs]),
          np.hstack([tau, taus]), np.hstack([w, ws]), rate)


def _add_base_hit(tw: Tower, pz: FloatArray, hit: BaseHit, rate: float,
                  rng: np.random.Generator) -> None:
    levels = np.arange(N_LEVELS)
    amps = hit.amp_lsb * tw.base_att ** levels * tw.sens_lsb / 150 * rng.lognormal(0, 0.15,
                                                                                      N_LEVELS)
    f = tw.mode_f_hz * (1 + 0.02 * rng.standard_normal(tw.mode_f_hz.shape))
    w = 0.1 * rng.dirichlet(np.ones(f.shape[1]), N_LEVELS) / np.sqrt(1 + (f / tw.xt_lp_hz) ** 2)
    tau = tw.mode_q / (np.pi * f)
    f_all = np.hstack([f, np.full((N_LEVELS, 1), hit.f_hz), np.full((N_LEVELS, 1),
                                                                     tw.struct_f_hz)])
    tau_all = np.hstack([tau, np.full((N_LEVELS, 1), hit.tau_s),
                         np.full((N_LEVELS, 1), tw.struct_tau_s)])
    w_all = np.hstack([w, np.full((N_LEVELS, 1), 0.6), np.full((N_LEVELS, 1), 0.3)])
    delays = levels.astype(np.float64) * tw.xt_delay_s
    _ring(tw, pz, hit.t, amps, delays, f_all, tau_all, w_all, rate)


def _ring(tw: Tower, pz: FloatArray, t: float, amps: FloatArray, delays: FloatArray,
          f: FloatArray, tau: FloatArray, w: FloatArray, rate: float) -> None:
    """Add decaying modes (channels x modes) sampled at each channel's own mux instant."""
    n = pz.shape[0]
    lp = np.sqrt(1 + (f / tw.frontend_lp_hz) ** 2)
    ph = -np.arctan(f / tw.frontend_lp_hz)
    peak = np.abs(amps)[:, None] * w / lp  # LSB per channel and mode
    # Render each mode until it has decayed below a tenth of an LSB.
    life = tau * np.log(np.maximum(peak, 0.1) / 0.1)
    chans = np.flatnonzero(life.max(axis=1) > 0)
    if chans.size == 0:
        return
    i0 = max(0, math.ceil((t - tw.mux_s * N_LEVELS) * rate))
    i1 = min(n, i0 + int(min(float(life.max()), 0.4) * rate) + 3)
    if i1 <= i0:
        return
    ts = np.arange(i0, i1) / rate
    chan_t = ts[:, None] + (chans * tw.mux_s - t - delays[chans])[None, :]
    tt = np.maximum(chan_t, 0.0)[:, :, None]
    y = (np.exp(-tt / tau[chans][None]) * np.sin(2 * np.pi * f[chans][None] * tt + ph[chans][None])
         * (w[chans] / lp[chans])[None]).sum(axis=2)
    y *= chan_t >= 0
    pz[i0:i1, chans] += y * amps[chans][None, :]


def render_load_fine(world: World, sess: Session, n: int, rng: np.random.Generator,
                     hum_wave: FloatArray) -> FloatArray:
    """What each HX711's sigma-delta filter outputs at every piezo-grid instant (counts).

    Offsets and per-conversion noise are added later, at the conversions read.
    """
    tw = world.tw
    rate = float(tw.piezo_rate_hz)
    dstat = np.zeros((n + 1, N_LEVELS))
    for t, lvl, grams in world.steps:
        dstat[min(n, max(0, math.ceil(t * rate))), lvl] += grams
    static = np.cumsum(dstat[:n], axis=0)
    force = static.copy()
    to_grams = rate / (G * 1e-3)
    for imp in world.impacts:
        if 0 <= imp.plate < N_LEVELS and imp.load_frac > 0:
            i = int(round(imp.t * rate))
            if 0 <= i < n:
                force[i, imp.plate] += imp.j_ns * imp.load_frac * to_grams
    for ep in world.episodes:
        if not np.any(ep.load_g > 0):
            continue
        i0, i1 = int(ep.t0 * rate), min(n, int(ep.t1 * rate))
        m = i1 - i0
        if m < 10:
            continue
        wob = _interp_noise(rng, m, rate, ep.band_hz, N_LEVELS)
        wob += 0.5 * rng.standard_normal(N_LEVELS)[None, :]
        force[i0:i1] += _envelope(m, rate, 0.15, 0.2)[:, None] * wob * ep.load_g[None, :]
    for pr in world.presses:
        i0, i1 = int(pr.t0 * rate), min(n, int((pr.t1 + 0.1) * rate))
        if i1 > i0:
            force[i0:i1, pr.level] += _press_shape(pr, i1 - i0, rate, rng)
    for hit in world.base_hits:
        i0 = max(0, int(hit.t * rate))
        i1 = min(n, i0 + int(6 * hit.tau_s * rate) + 1)
        if i1 <= i0:
            continue
        tt = np.arange(i1 - i0) / rate
        acc = hit.acc_ms2 * np.exp(-tt / hit.tau_s) * np.sin(2 * np.pi * hit.f_hz * tt)
        force[i0:i1] += (tw.plate_mass_g[None, :] + static[i0:i1]) * acc[:, None] / G
    out = np.empty((n, N_LEVELS))
    drift = _interp_noise(rng, n, rate, 1.0 / tw.drift_tau_s, N_LEVELS) * tw.drift_g[None, :]
    for ch in range(N_LEVELS):
        w = 2 * np.pi * tw.plate_f_hz[ch]
        b, a = signal.bilinear([w * w], [1.0, 2 * tw.plate_zeta[ch] * w, w * w], fs=rate)
        y = signal.lfilter(b, a, force[:, ch])
        alpha = 1 / (tw.creep_tau_s[ch] * rate)
        lagged = signal.lfilter([alpha], [1.0, alpha - 1.0], y)
        y = y - tw.creep_frac[ch] * (y - lagged)
        counts = tw.counts_per_g[ch] * (y + drift[:, ch]) + tw.load_hum_counts[ch] * hum_wave
        out[:, ch] = _sinc4(counts, max(1, int(round(rate / tw.hx_rate_hz[ch]))))
    return out


def _sinc4(x: FloatArray, length: int) -> FloatArray:
    """Four cascaded moving averages of one conversion period (the HX711's 4-period settling)."""
    pad = 4 * length
    y = np.concatenate([np.full(pad, x[0]), x])
    for _ in range(4):
        c = np.concatenate([[0.0], np.cumsum(y)])
        y = np.concatenate([np.full(length - 1, (c[length] - c[0]) / length),
                            (c[length:] - c[:-length]) / length])
    return y[pad:]


# --------------------------------------------------------------------------
# Firmware: HX711 reads on a shared clock, piezo batching, messages.
# --------------------------------------------------------------------------

class _Chip:
    """One HX711: free-running conversions while powered through the spring contacts."""

    def __init__(self, period: float, disc: list[tuple[float, float]],
                 rng: np.random.Generator) -> None:
        self.period = period
        self.ivals: list[tuple[float, float, float]] = []
        on, anchor = -1e9, -float(rng.uniform(0, period))
        for off_t, on_t in sorted(disc):
            self.ivals.append((on, off_t, anchor))
            on = on_t
            # After power-up DOUT first falls when the filter has settled (4 conversions).
            anchor = on_t + float(rng.uniform(0.002, 0.006)) + 4 * period
        self.ivals.append((on, 1e18, anchor))
        self.ptr = 0

    def next_completion(self, after: float) -> tuple[float, float, float]:
        """The first conversion completed after ``after`` (inf if never powered again),
        with the end and the conversion grid of the powered interval it falls in."""
        while self.ptr < len(self.ivals) - 1 and self.ivals[self.ptr][1] <= after:
            self.ptr += 1
        for _on, off, anc in self.ivals[self.ptr:]:
            if off <= after:
                continue
            if after < anc:
                c = anc
            else:
                c = anc + (math.floor((after - anc) / self.period) + 1) * self.period
            if c < off:
                return c, off, anc
        return math.inf, math.inf, 0.0


@dataclass
class Reads:
    t: FloatArray          # read start (device s)
    valid: npt.NDArray[np.bool_]
    conv_t: FloatArray     # conversion time of each value read (nan if not valid)
    timeouts: list[float]


READ_S = 110e-6  # 25 SCK pulses with interrupts off, plus bookkeeping


def simulate_reads(world: World, t_end: float, rng: np.random.Generator) -> Reads:
    """The firmware's HX711 loop: wait for every present chip, read all on one clock."""
    tw = world.tw
    chips = [_Chip(1.0 / tw.hx_rate_hz[c], world.disc[c], rng) for c in range(N_LEVELS)]
    timeout = 1.6 / float(np.min(tw.hx_rate_hz))
    present = set(range(N_LEVELS))
    last = [0.0] * N_LEVELS
    r = 0.0
    out_t: list[float] = []
    out_valid: list[list[bool]] = []
    out_conv: list[list[float]] = []
    timeouts: list[float] = []
    while True:
        info = [chips[c].next_completion(last[c]) for c in range(N_LEVELS)]
        t_all = max(info[c][0] for c in present)
        lat = rng.uniform(15e-6, 90e-6)
        if rng.random() < tw.busy_p:
            lat += rng.uniform(50e-6, 400e-6)
        if t_all <= r + timeout:
            t_read = t_all + lat
        else:
            t_read = r + timeout + lat
            timeouts.append(t_read)
        if t_read > t_end:
            break
        valid = [False] * N_LEVELS
        conv = [math.nan] * N_LEVELS
        for c in range(N_LEVELS):
            ct, off, anc = info[c]
            # DOUT is low (data waiting) and the chip is still powered: read it.
            if ct <= t_read < off:
                valid[c] = True
                period = chips[c].period
                conv[c] = anc + math.floor((t_read - anc) / period) * period
                last[c] = t_read
            elif ct <= t_read:
                last[c] = off  # it had data, then lost power: look for it after that
        present = {c for c in range(N_LEVELS) if valid[c]}
        out_t.append(t_read)
        out_valid.append(valid)
        out_conv.append(conv)
        r = t_read + READ_S
    return Reads(np.array(out_t), np.array(out_valid, dtype=bool), np.array(out_conv), timeouts)


def piezo_batches(tw: Tower, n: int, reads: Reads,
                  rng: np.random.Generator) -> tuple[npt.NDArray[np.int64],
                                                     npt.NDArray[np.int64], FloatArray]:
    """First set, number of sets and send time of every PIEZO message."""
    rate = float(tw.piezo_rate_hz)
    n_min = tw.batch_sets
    set_done = N_LEVELS * tw.mux_s + 8e-6
    lat = rng.uniform(5e-6, 40e-6, n // n_min + 2)
    firsts, counts, sends = [], [], []
    i, rp, k = 0, 0, 0
    rt = reads.t
    n_reads = len(rt)
    while i + n_min <= n:
        ts = (i + n_min - 1) / rate + set_done + lat[k]
        k += 1
        while rp < n_reads and rt[rp] + READ_S <= ts:
            rp += 1
        if rp < n_reads and rt[rp] <= ts:
            ts = rt[rp] + READ_S + 15e-6
        cnt = min(14, int(math.floor((ts - set_done) * rate)) - i + 1, n - i)
        cnt = max(cnt, n_min)
        firsts.append(i)
        counts.append(cnt)
        sends.append(ts)
        i += cnt
    return np.array(firsts, dtype=np.int64), np.array(counts, dtype=np.int64), np.array(sends)


def _t_us_total(u0: int, tau: FloatArray) -> npt.NDArray[np.int64]:
    """Device micros() since boot at device time tau: 4 us resolution (16 MHz, /64 timer)."""
    total = u0 + np.floor(np.asarray(tau) * 1e6).astype(np.int64)
    return (total // 4) * 4


def _le(values: npt.NDArray[np.int64], width: int) -> U8Array:
    v = np.asarray(values, dtype=np.int64)
    return np.stack([(v >> (8 * b)) & 0xFF for b in range(width)], axis=1).astype(np.uint8)


# --------------------------------------------------------------------------
# One recording
# --------------------------------------------------------------------------

def make_recording(seed: int, scenario: str, duration_s: float,
                   out_dir: Path) -> tuple[Path, Path]:
    """Simulate one recording; write ``{scenario}_t{seed}.bin`` and its truth file."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    tw = draw_tower(seed)
    ss = np.random.SeedSequence([0xF0F0, seed, SCENARIOS.index(scenario) + 1])
    plan_rng, render_rng, fw_rng, sess_rng = (np.random.default_rng(s) for s in ss.spawn(4))
    sess = draw_session(tw, scenario, duration_s, sess_rng)
    world = World(tw, plan_rng)
    tau_shift = sess.tau_open + 0.05
    plan(world, sess, duration_s, tau_shift)

    rate = float(tw.piezo_rate_hz)
    tau_end = tau_shift + duration_s + 0.5
    n = int(math.ceil(tau_end * rate))
    t_grid = np.arange(n) / rate
    f_mains = tw.mains_hz * (1 - tw.clock_ppm * 1e-6)
    ph = 2 * np.pi * f_mains * t_grid + render_rng.uniform(0, 2 * np.pi)
    hum_wave = np.sin(ph) + 0.3 * np.sin(3 * ph + 1.1) + 0.12 * np.sin(5 * ph + 2.3)
    codes = render_piezo(world, sess, n, render_rng, hum_wave)
    fine = render_load_fine(world, sess, n, render_rng, hum_wave)
    reads = simulate_reads(world, tau_end - 0.05, fw_rng)
    values, glitches = _read_values(tw, fine, reads, rate, fw_rng)
    firsts, counts, sends = piezo_batches(tw, n, reads, fw_rng)

    # Effective load rate (what the firmware measured and reports in HELLO).
    full = np.all(reads.valid, axis=1)
    periods = np.diff(reads.t)[full[1:] & full[:-1]]
    load_rate = float(1.0 / np.median(periods))

    stream, info = _assemble(tw, sess, duration_s, codes, firsts, counts, sends, reads, values,
                             load_rate, fw_rng)
    t0_us = info["t0_total_us"]

    def st(tau: float) -> float:
        return round((sess.u0_us + tau * 1e6 - t0_us) / 1e6, 6)

    truth = _truth(world, tw, sess, scenario, seed, duration_s, st, load_rate, reads, glitches,
                   info)
    name = f"{scenario}_t{seed}"
    bin_path = out_dir / f"{name}.bin"
    truth_path = out_dir / f"{name}.truth.json"
    bin_path.write_bytes(stream)
    truth_path.write_text(json.dumps(truth, indent=1) + "\n")
    return bin_path, truth_path


def _read_values(tw: Tower, fine: FloatArray, reads: Reads, rate: float,
                 rng: np.random.Generator) -> tuple[npt.NDArray[np.int64], list[dict[str, Any]]]:
    n = fine.shape[0]
    idx = np.clip(np.rint(np.nan_to_num(reads.conv_t, nan=0.0) * rate), 0, n - 1).astype(np.int64)
    vals = fine[idx, np.arange(N_LEVELS)[None, :]]
    vals = vals + tw.offset_counts[None, :]
    vals += rng.standard_normal(vals.shape) * (tw.noise_g * np.abs(tw.counts_per_g))[None, :]
    out = np.clip(np.rint(vals), -S24_MAX - 1, S24_MAX).astype(np.int64)
    glitches: list[dict[str, Any]] = []
    if tw.glitch_rate > 0:
        hit = (rng.random(out.shape) < tw.glitch_rate) & reads.valid
        for r, c in zip(*np.nonzero(hit), strict=True):
            if rng.random() < 0.7:
                bit = int(rng.integers(14, 23))
                v = (int(out[r, c]) & 0xFFFFFF) ^ (1 << bit)
                out[r, c] = v - (1 << 24) if v & 0x800000 else v
                kind = f"bit{bit}"
            else:
                # SCK held high > 60 us by an interrupt: the chip powers down mid-read
                # and the remaining bits read as ones.
                tail = int(rng.integers(4, 17))
                v = (int(out[r, c]) & 0xFFFFFF) | ((1 << tail) - 1)
                out[r, c] = v - (1 << 24) if v & 0x800000 else v
                kind = f"tail_ones{tail}"
            glitches.append({"tau": float(reads.t[r]), "channel": int(c), "kind": kind})
    out[~reads.valid] = 0
    return out, glitches


def _assemble(tw: Tower, sess: Session, duration_s: float, codes: npt.NDArray[np.uint16],
              firsts: npt.NDArray[np.int64], counts: npt.NDArray[np.int64], sends: FloatArray,
              reads: Reads, values: npt.NDArray[np.int64], load_rate: float,
              rng: np.random.Generator) -> tuple[bytes, dict[str, Any]]:
    """Order every message by send time, number them, frame them, cut the capture."""
    rate = float(tw.piezo_rate_hz)
    u0 = sess.u0_us
    # STATUS once per second of uptime.
    first_b = (u0 // 1_000_000 + 1) * 1_000_000
    st_tau = (first_b - u0) / 1e6 + np.arange(0, int(reads.t[-1]) + 2)
    st_tau = st_tau + rng.uniform(0, 0.002, st_tau.size)
    st_tau = st_tau[st_tau < reads.t[-1]]
    has_ack = sess.start_mode != "boot"
    kinds = [np.array([HELLO]), np.array([ACK] if has_ack else [], dtype=np.int64),
             np.full(len(firsts), PIEZO), np.full(len(reads.t), LOAD),
             np.full(len(st_tau), STATUS)]
    send = [np.array([sess.hello_tau]), np.array([sess.hello_tau + 2e-4] if has_ack else []),
            sends, reads.t + READ_S + 20e-6, st_tau]
    local = [np.arange(len(k)) for k in kinds]
    kind = np.concatenate(kinds).astype(np.int64)
    send_t = np.concatenate(send)
    loc = np.concatenate(local)
    stamp = np.full(len(kind), np.nan)
    stamp[kind == PIEZO] = firsts / rate
    stamp[kind == LOAD] = reads.t
    order = np.lexsort((kind, send_t))
    kind, send_t, loc, stamp = kind[order], send_t[order], loc[order], stamp[order]
    seq0 = 0 if sess.start_mode == "boot" else int(rng.integers(0, 65536))
    seq = (seq0 + np.arange(len(kind))) % 65536
    # The capture starts while frame j is on the wire (attach) or at boot.
    if sess.start_mode == "boot":
        j = 0
        first_timed = int(np.flatnonzero((kind == PIEZO) | (kind == LOAD))[0])
    else:
        j = int(np.flatnonzero(send_t <= sess.tau_open)[-1])
        first_timed = j + 1 + int(np.flatnonzero((kind[j + 1:] == PIEZO)
                                                 | (kind[j + 1:] == LOAD))[0])
    tau0 = float(stamp[first_timed])
    t0_total = int(_t_us_total(u0, np.array([tau0]))[0])
    tau_stop = tau0 + duration_s + 0.002
    beyond = np.flatnonzero(send_t > tau_stop)
    j_end = int(beyond[0]) if beyond.size else len(kind)
    sl = slice(j, j_end)
    kind, send_t, loc, stamp, seq = kind[sl], send_t[sl], loc[sl], stamp[sl], seq[sl]

    raw_len = np.select([kind == PIEZO, kind == LOAD, kind == STATUS, kind == HELLO],
                        [10 + 16 * counts[np.where(kind == PIEZO, loc, 0)], 34, 17, 24], 9)
    frame_len = raw_len + 2
    offsets = np.concatenate([[0], np.cumsum(frame_len)[:-1]])
    out = np.zeros(int(frame_len.sum()), dtype=np.uint8)
    t_us = _t_us_total(u0, np.nan_to_num(stamp)) % T_US_MOD

    def put(sel: npt.NDArray[np.int64], head: U8Array) -> None:
        crc = crc16_rows(head)
        rows = np.hstack([head, _le(crc.astype(np.int64), 2)])
        enc = cobs_encode_rows(rows)
        out[offsets[sel][:, None] + np.arange(enc.shape[1])[None, :]] = enc

    is_p = np.flatnonzero(kind == PIEZO)
    pcount = counts[loc[is_p]]
    for c in np.unique(pcount):
        sel = is_p[pcount == c]
        f0 = firsts[loc[sel]]
        samples = codes[f0[:, None] + np.arange(c)[None, :]].astype("<u2")
        head = np.hstack([np.full((len(sel), 1), PIEZO, dtype=np.uint8), _le(seq[sel], 2),
                          _le(t_us[sel], 4), np.full((len(sel), 1), c, dtype=np.uint8),
                          samples.reshape(len(sel), -1).view(np.uint8)])
        put(sel, head)
    is_l = np.flatnonzero(kind == LOAD)
    if is_l.size:
        li = loc[is_l]
        mask = (reads.valid[li] * (1 << np.arange(N_LEVELS))[None, :]).sum(axis=1)
        v24 = values[li] & 0xFFFFFF
        vb = np.stack([(v24 >> (8 * b)) & 0xFF for b in range(3)], axis=2).reshape(len(li), -1)
        head = np.hstack([np.full((len(li), 1), LOAD, dtype=np.uint8), _le(seq[is_l], 2),
                          _le(t_us[is_l], 4), mask[:, None].astype(np.uint8),
                          vb.astype(np.uint8)])
        put(is_l, head)
    timeouts = np.array(reads.timeouts)
    hello_rate = int(round(load_rate))
    for i in np.flatnonzero((kind == HELLO) | (kind == ACK) | (kind == STATUS)):
        if kind[i] == HELLO:
            body = struct.pack("<BBBBBBHHB", 1, *tw.fw, N_LEVELS, N_LEVELS, tw.piezo_rate_hz,
                               hello_rate, 10) + tw.device_id
        elif kind[i] == ACK:
            body = struct.pack("<BHB", GET_INFO, 0, 0)
        else:
            ts = float(send_t[i])
            uptime_ms = ((u0 + int(ts * 1e6)) // 1000) % T_US_MOD
            n_to = int(np.sum(timeouts <= ts)) + (0 if sess.start_mode == "boot" else 7)
            cpu = int(round(tw.cpu_pct + rng.normal(0, 2)))
            body = struct.pack("<IHHHBB", uptime_ms, 0, 0, n_to % 65536, cpu, 0)
        frame = encode_message(int(kind[i]), int(seq[i]), body)
        assert len(frame) == frame_len[i]
        out[offsets[i]:offsets[i] + len(frame)] = np.frombuffer(frame, dtype=np.uint8)
    data = out.tobytes()
    info: dict[str, Any] = {"start_mode": sess.start_mode, "u0_us": u0, "t0_total_us": t0_total,
                            "tau0": tau0, "hello_load_rate_hz": hello_rate}
    if sess.start_mode == "boot":
        data = sess.junk + b"\x00" + data
        info["junk_bytes"] = len(sess.junk)
    else:
        cut = int(rng.integers(1, int(frame_len[0]) - 1))
        data = data[cut:]
        info["cut_bytes_into_first_frame"] = cut
        info["first_frame_type"] = int(kind[0])
    wraps = [int(b) for b in range((t0_total // T_US_MOD) + 1,
                                   (int(_t_us_total(u0, np.array([tau_stop]))[0]) // T_US_MOD)
                                   + 1)]
    info["t_us_wraps_at_s"] = [round((b * T_US_MOD - t0_total) / 1e6, 6) for b in wraps]
    info["messages"] = {"total": int(len(kind)), "piezo": int(is_p.size), "load": int(is_l.size)}
    return data, info


def _truth(world: World, tw: Tower, sess: Session, scenario: str, seed: int,
           duration_s: float, st: Any, load_rate: float, reads: Reads,
           glitches: list[dict[str, Any]], info: dict[str, Any]) -> dict[str, Any]:
    tr = world.truth

    def conv(items: list[dict[str, Any]], keys: tuple[str, ...]) -> list[dict[str, Any]]:
        out = []
        for x in items:
            y = dict(x)
            for k in keys:
                if k in y and y[k] is not None:
                    y[k] = st(y[k])
            out.append(y)
        return sorted(out, key=lambda d: d["t"])

    landings = conv(tr["landings"], ("t", "t_first_impact", "t_release"))
    for x in landings:
        assert 4.0 <= x["t_first_impact"] <= x["t"] < duration_s, x
    doc: dict[str, Any] = {
        "format": "towerear-crosscheck-truth/1",
        "model": "F",
        "scenario": scenario,
        "seed": seed,
        "duration_s": duration_s,
        "cells": tw.cells,
        "landings": landings,
        "knockdowns": conv(tr["knockdowns"], ("t",)),
        "removals": conv(tr["removals"], ("t",)),
        "lifts": conv(tr["lifts"], ("t",)),
        "closes": conv(tr["closes"], ("t",)),
        "knocks": conv(tr["knocks"], ("t",)),
        "handling": conv(tr["handling"], ("t",)),
        "background": conv(tr["background"], ("t", "t_end")),
        "load_timeouts": [st(t) for t in reads.timeouts],
        "load_glitches": [{"t": st(g["tau"]), "channel": g["channel"], "kind": g["kind"]}
                          for g in glitches],
        "tower": {
            "load_rate_hz": round(load_rate, 4),
            "hello_load_rate_hz": info["hello_load_rate_hz"],
            "piezo_rate_hz": tw.piezo_rate_hz,
            "counts_per_g": np.round(tw.counts_per_g, 2).tolist(),
            **{k: v for k, v in tw.to_json().items() if k not in ("counts_per_g",)},
        },
        "session": {
            **{k: v for k, v in info.items() if k not in ("tau0",)},
            "quiet_s": round(sess.quiet_s, 3),
            "room": {"talk_coverage": round(sess.talk_cov, 3),
                     "talk_lsb": round(sess.talk_lsb, 3),
                     "footstep_passes": sess.step_passes,
                     "hum_factor": round(sess.hum_mult, 3),
                     "mech_hum_lsb": round(sess.mech_hum_lsb, 3)},
        },
    }
    for kind in ("knockdowns", "removals", "lifts", "closes", "knocks"):
        for x in doc[kind]:
            assert 4.0 <= x["t"] < duration_s, (kind, x)
    return doc


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--towers", type=int, default=4)
    p.add_argument("--first-seed", type=int, default=1)
    p.add_argument("--duration", type=float, default=120.0)
    p.add_argument("--scenarios", nargs="+", default=list(SCENARIOS), choices=SCENARIOS)
    args = p.parse_args(argv)
    if args.duration < 10:
        p.error("--duration must be at least 10 s (4-7 s of quiet tower come first)")
    started = time.perf_counter()
    for seed in range(args.first_seed, args.first_seed + args.towers):
        for scenario in args.scenarios:
            t0 = time.perf_counter()
            bin_path, truth_path = make_recording(seed, scenario, args.duration, args.out)
            truth = json.loads(truth_path.read_text())
            print(f"{bin_path.name}: {len(truth['landings'])} landings, "
                  f"{len(truth['knockdowns'])} knock-downs, {len(truth['lifts'])} lifts, "
                  f"{len(truth['knocks'])} knocks, {bin_path.stat().st_size} bytes, "
                  f"{time.perf_counter() - t0:.2f} s", file=sys.stderr)
    print(f"done in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
