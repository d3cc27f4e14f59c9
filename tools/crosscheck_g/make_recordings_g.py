#!/usr/bin/env python3
"""Cross-check model G: an independent simulated Mord im Arosa tower for towerear.

Writes recordings (the device -> host byte stream of contracts.md section 1,
exactly as off the wire) and their ground truth (the format
``towerear-crosscheck-truth/1`` that tools/crosscheck/score.py reads).

Usage::

    .venv/bin/python tools/crosscheck_g/make_recordings_g.py --out DIR \
        [--towers 8] [--first-seed 1] [--duration 120] [--scenarios single rapid noisy game]

A seed is a tower: the same tower (rates, ADC, plates, cells, sensor faults)
in every scenario. The same seed, scenario and duration give the same bytes.
Model G is written from contracts.md, design.md and the rules only; its
modelling choices are in README.md beside this script.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from scipy import signal

SCENARIOS: tuple[str, ...] = ("single", "rapid", "noisy", "game")
TRUTH_FORMAT = "towerear-crosscheck-truth/1"
MODEL = "G"
N_LEVELS = 8
G_ACC = 9.81  # m/s^2
J_REF = 1.0e-3  # N s: a 0.5 g cube striking a plate at about 1.5 m/s (restitution 0.35)
LOAD_FS = 1000.0  # Hz: grid of the analogue force on each load cell
S24_MAX = (1 << 23) - 1
S24_MIN = -(1 << 23)
COLOURS = ("yellow", "blue", "brown", "gray", "black", "white")
T_QUIET_S = 5.0  # nothing happens to the tower before this: the detector tares on it
# Geometry and contact constants, chosen so that cubes spread over the floors with
# few reaching the ground floor (design.md); see README.md for the reasoning.
HOLE_LOW = (0.012, 0.0135)  # m, half width of the hole in plate 1 (the largest)
HOLE_HIGH = (0.0095, 0.0105)  # m, half width of the hole in plate 7
HOLE_SIGMA = 0.005  # m, hand-cut holes: centre offset per axis
SPIN_MAX = 1.41  # a tumbling cube's footprint: up to its face diagonal
EDGE_KICK = (0.1, 0.4)  # sideways speed from striking a hole's edge, per m/s of fall
SLIDE_FROM_FALL = (0.05, 0.35)  # sliding speed after a strike, per m/s of fall
SLIDE_DECEL = 0.8  # friction deceleration (times mu g) of a sliding, rocking cube
DAMAGE_KINDS = ("bit_errors", "overrun", "unplug", "reboot")

T_PIEZO, T_LOAD, T_STATUS, T_HELLO, T_ACK = 0x02, 0x03, 0x04, 0x01, 0x05

# ---------------------------------------------------------------------------
# Wire encoding (contracts.md section 1), written here from the contract.
# ---------------------------------------------------------------------------


def _make_crc_table() -> list[int]:
    table = []
    for i in range(256):
        c = i << 8
        for _ in range(8):
            c = ((c << 1) ^ 0x1021) & 0xFFFF if c & 0x8000 else (c << 1) & 0xFFFF
        table.append(c)
    return table


_CRC_TABLE = _make_crc_table()
_CRC_TABLE_NP = np.array(_CRC_TABLE, dtype=np.int64)


def crc16_ccitt_false(data: bytes) -> int:
    """CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, no reflection, no xorout), table-driven."""
    crc = 0xFFFF
    for byte in data:
        crc = ((crc << 8) & 0xFFFF) ^ _CRC_TABLE[((crc >> 8) ^ byte) & 0xFF]
    return crc


def crc16_ccitt_false_reference(data: bytes) -> int:
    """The same CRC bit by bit, as the contract states it (a check on the table)."""
    crc = 0xFFFF
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
            crc &= 0xFFFF
    return crc


def crc16_rows(rows: np.ndarray) -> np.ndarray:
    """The CRC of every row of an (n, width) uint8 array, vectorised over rows."""
    crc = np.full(rows.shape[0], 0xFFFF, dtype=np.int64)
    for j in range(rows.shape[1]):
        crc = ((crc << 8) & 0xFFFF) ^ _CRC_TABLE_NP[(crc >> 8) ^ rows[:, j]]
    return crc


def cobs_encode(data: bytes) -> bytes:
    """Consistent Overhead Byte Stuffing of one message (no delimiter), any length."""
    out = bytearray([0])
    code_at = 0
    code = 1
    for byte in data:
        if byte == 0:
            out[code_at] = code
            code_at = len(out)
            out.append(0)
            code = 1
            continue
        out.append(byte)
        code += 1
        if code == 0xFF:
            out[code_at] = code
            code_at = len(out)
            out.append(0)
            code = 1
    out[code_at] = code
    return bytes(out)


def cobs_decode_checked(frame: bytes) -> bytes | None:
    """Decode one COBS frame (no delimiter); None if it is not valid COBS."""
    out = bytearray()
    i = 0
    n = len(frame)
    while i < n:
        code = frame[i]
        if code == 0 or i + code > n:
            return None
        block = frame[i + 1:i + code]
        if 0 in block:
            return None
        out += block
        i += code
        if code < 0xFF and i < n:
            out.append(0)
    return bytes(out)


def frame_is_valid(frame: bytes) -> bool:
    """Whether a frame (no delimiter) decodes to a message whose CRC is right."""
    msg = cobs_decode_checked(frame)
    if msg is None or len(msg) < 5:
        return False
    return crc16_ccitt_false(msg[:-2]) == int.from_bytes(msg[-2:], "little")


def cobs_encode_rows(rows: np.ndarray) -> np.ndarray:
    """COBS-encode equal-length messages (at most 253 bytes each) and append the 0x00.

    Returns an (n, width + 2) uint8 array: the code byte, the stuffed message and
    the delimiter. Short messages never hold a run of 254 non-zero bytes, so
    every pointer is simply the distance to the next zero.
    """
    n, width = rows.shape
    if width > 253:
        raise ValueError("cobs_encode_rows: messages longer than 253 bytes")
    out = np.zeros((n, width + 2), dtype=np.uint8)
    out[:, 1:width + 1] = rows
    cols = np.arange(width + 2, dtype=np.int16)
    is_zero = np.zeros((n, width + 2), dtype=bool)
    is_zero[:, 1:width + 1] = rows == 0
    is_zero[:, width + 1] = True
    marks = np.where(is_zero, cols, np.int16(width + 2)).astype(np.int16)
    at_or_after = np.minimum.accumulate(marks[:, ::-1], axis=1)[:, ::-1]
    after = np.empty_like(at_or_after)
    after[:, :-1] = at_or_after[:, 1:]
    after[:, -1] = width + 2
    pointer = is_zero.copy()
    pointer[:, 0] = True
    pointer[:, width + 1] = False
    out[pointer] = (after - cols)[pointer].astype(np.uint8)
    return out


def encode_frame(msg_type: int, seq: int, body: bytes) -> bytes:
    """One message framed for the wire: COBS(type | seq | body | crc) + 0x00."""
    head = bytes([msg_type]) + (seq & 0xFFFF).to_bytes(2, "little") + body
    crc = crc16_ccitt_false(head)
    return cobs_encode(head + crc.to_bytes(2, "little")) + b"\x00"


def _le(values: np.ndarray, nbytes: int) -> np.ndarray:
    """Little-endian bytes of non-negative integers, as an (n, nbytes) uint8 array."""
    v = values.astype(np.int64)
    return np.stack([(v >> (8 * i)) & 0xFF for i in range(nbytes)], axis=1).astype(np.uint8)


def encode_rows(msg_type: int, seqs: np.ndarray, body: np.ndarray) -> np.ndarray:
    """Frames for many messages of one type and body width: (n, width + 7) uint8."""
    n = body.shape[0]
    out = np.empty((n, body.shape[1] + 7), dtype=np.uint8)
    for i in range(0, n, 40000):  # in blocks: a 30-minute recording holds 10^6 frames
        b = body[i:i + 40000]
        head = np.empty((b.shape[0], 3 + b.shape[1]), dtype=np.uint8)
        head[:, 0] = msg_type
        head[:, 1:3] = _le(seqs[i:i + 40000] & 0xFFFF, 2)
        head[:, 3:] = b
        crc = crc16_rows(head)
        out[i:i + 40000] = cobs_encode_rows(np.concatenate([head, _le(crc, 2)], axis=1))
    return out


# ---------------------------------------------------------------------------
# The tower: everything that belongs to one physical kit (one seed).
# ---------------------------------------------------------------------------


@dataclass
class Tower:
    """One physical tower with its sensors and firmware build."""

    seed: int
    piezo_rate_hz: int
    load_rate_hz: int
    adc_bits: int
    sets_per_msg: int
    chip_rate_hz: np.ndarray  # (8,) each HX711's own conversion rate
    fw: tuple[int, int, int]
    device_id: bytes
    module_h_m: float
    plate_half_m: float
    hole_half_m: np.ndarray  # (9,) index L = hole in plate L (1..7), 8 = entrance
    hole_xy_m: np.ndarray  # (9, 2) hole centres
    restitution: np.ndarray  # (8,)
    friction: np.ndarray  # (8,)
    mode_hz: np.ndarray  # (8, 3)
    mode_q: np.ndarray  # (8, 3)
    mode_gain: np.ndarray  # (8, 3)
    ref_peak_codes: np.ndarray  # (8,) peak of a J_REF strike, 10-bit codes
    coupling: np.ndarray  # (10, 8) source (base, 0..7, rim) -> piezo channel
    hp_hz: float
    lp_hz: float
    contact_s: float
    adc_noise_codes: np.ndarray  # (8,), in this ADC's codes
    bias_offset_codes: np.ndarray  # (8,), in this ADC's codes
    hum_hz: float
    hum_codes: np.ndarray  # (8,), 10-bit codes
    acoustic_gain: np.ndarray  # (8,)
    capacity_g: np.ndarray
    rated_mv_v: np.ndarray
    polarity: np.ndarray
    counts_per_g: np.ndarray
    zero_counts: np.ndarray
    plate_f0_hz: np.ndarray
    plate_zeta: np.ndarray
    pos_grad_per_m: np.ndarray  # (8, 2)
    creep_frac: np.ndarray
    creep_s: np.ndarray
    load_noise_counts: np.ndarray
    load_walk_counts: np.ndarray
    load_coupling: float
    load_base_coupling: float
    temp_coef_g_per_c: np.ndarray
    heat_share: np.ndarray
    warm_c: float
    warm_tau_s: float
    room_c_per_h: float
    cells: str
    faults: list[dict[str, Any]]
    cube_size_m: float
    cube_density_g_cm3: float

    def summary(self) -> dict[str, Any]:
        """What the truth file tells about the tower."""
        return {
            "piezo_rate_hz": self.piezo_rate_hz, "load_rate_hz": self.load_rate_hz,
            "adc_bits": self.adc_bits, "sets_per_msg": self.sets_per_msg,
            "hx_rate_hz": [round(float(x), 3) for x in self.chip_rate_hz],
            "fw": list(self.fw), "device_id": self.device_id.hex(),
            "counts_per_g": [round(float(x), 1) for x in self.counts_per_g * self.polarity],
            "capacity_g": [float(x) for x in self.capacity_g],
            "zero_counts": [int(x) for x in self.zero_counts],
            "plate_f0_hz": [round(float(x), 1) for x in self.plate_f0_hz],
            "piezo_mode_hz": [[round(float(f), 1) for f in row] for row in self.mode_hz],
            "hole_half_mm": [round(float(x) * 1e3, 2) for x in self.hole_half_m[1:]],
            "temp_coef_g_per_c": [round(float(x), 4) for x in self.temp_coef_g_per_c],
            "warm_c": round(self.warm_c, 2), "room_c_per_h": round(self.room_c_per_h, 2),
            "hum_hz": self.hum_hz, "cells": self.cells, "faults": self.faults,
            "cube_size_mm": round(self.cube_size_m * 1e3, 2),
            "cube_density_g_cm3": round(self.cube_density_g_cm3, 3),
        }


def make_tower(seed: int) -> Tower:
    """The tower of a seed (the same in every scenario)."""
    rng = np.random.default_rng([seed, 0x6A11])
    u = rng.uniform
    piezo_rate = int(rng.choice([2000, 2000, 2000, 1500, 3000, 2500, 1000]))
    load_rate = int(rng.choice([80, 80, 80, 40, 20, 10]))
    adc_bits = 12 if rng.random() < 0.3 else 10
    chip_base = 10.0 if load_rate == 10 else 80.0
    # Each HX711 runs on its own internal oscillator, a little faster than the
    # firmware's poll (it must be: a poll that finds no new conversion is a timeout).
    chip_rate = chip_base * u(1.005, 1.045, N_LEVELS)
    sets_per_msg = int(rng.choice([8, 10, 12, 14]))
    fw = (1, int(rng.integers(0, 4)), int(rng.integers(0, 10)))
    device_id = bytes(rng.integers(0, 256, 8, dtype=np.int64).astype(np.uint8).tolist())

    module_h = u(0.029, 0.033)
    plate_half = u(0.040, 0.046)
    hole_half = np.zeros(9)
    hole_half[1:8] = np.linspace(u(*HOLE_LOW), u(*HOLE_HIGH), 7)
    hole_half[8] = u(0.0080, 0.0090)
    hole_xy = np.clip(rng.normal(0.0, HOLE_SIGMA, (9, 2)), -0.012, 0.012)
    hole_xy[0] = 0.0
    restitution = u(0.25, 0.45, N_LEVELS)
    friction = u(0.35, 0.55, N_LEVELS)

    f1 = u(140.0, 380.0, N_LEVELS)
    mode_hz = np.stack([f1, f1 * u(2.0, 2.8, N_LEVELS), f1 * u(3.4, 5.0, N_LEVELS)], axis=1)
    mode_q = u(4.0, 12.0, (N_LEVELS, 3))
    mode_gain = np.stack([np.ones(N_LEVELS), u(0.3, 0.8, N_LEVELS), u(0.1, 0.5, N_LEVELS)], 1)
    ref_peak = u(110.0, 260.0, N_LEVELS)
    coupling = np.zeros((10, N_LEVELS))
    c_up, c_down = u(0.12, 0.35), u(0.12, 0.35)
    for src in range(N_LEVELS):
        for k in range(N_LEVELS):
            d = k - src
            if d == 0:
                coupling[src + 1, k] = 1.0
            else:
                c = c_up if d > 0 else c_down
                coupling[src + 1, k] = c ** abs(d) * u(0.7, 1.3) + 0.01
    kappa_t = u(0.6, 0.85)
    coupling[0] = kappa_t ** np.arange(N_LEVELS) * u(0.8, 1.2, N_LEVELS)  # table -> base upwards
    coupling[9] = 0.5 * coupling[8]  # the entrance rim: the top module's roof, no sensor
    hp_hz = u(5.0, 25.0)
    lp_hz = min(u(700.0, 1500.0), 0.45 * piezo_rate)
    scale = 4.0 if adc_bits == 12 else 1.0
    adc_noise = u(0.4, 1.4, N_LEVELS) * (u(3.0, 4.0) if adc_bits == 12 else 1.0)
    bias_offset = np.round(u(-6.0, 6.0, N_LEVELS) * scale)
    hum_hz = 60.0 if rng.random() < 0.2 else 50.0
    hum_codes = u(0.1, 1.2, N_LEVELS)
    acoustic_gain = u(0.6, 1.4, N_LEVELS)

    mixed = rng.random() < 0.25
    capacity = np.full(N_LEVELS, 100.0)
    polarity = np.ones(N_LEVELS)
    if mixed:
        for k in rng.choice(N_LEVELS, int(rng.integers(1, 4)), replace=False):
            capacity[k] = float(rng.choice([200.0, 300.0]))
        if rng.random() < 0.5:
            polarity[int(rng.integers(N_LEVELS))] = -1.0
    rated = u(0.85, 1.15, N_LEVELS)  # mV/V
    # HX711 gain 128 with the bridge on AVDD: full scale +-0.5 AVDD / 128 is +-2^23 counts.
    counts_per_g = rated * 1e-3 * 128 * 2 * 2 ** 23 / capacity
    dead_load_g = u(8.0, 18.0, N_LEVELS)
    zero_counts = u(-150000.0, 150000.0, N_LEVELS) + polarity * counts_per_g * dead_load_g
    plate_f0 = u(40.0, 110.0, N_LEVELS)
    plate_zeta = u(0.06, 0.25, N_LEVELS)
    pos_grad = u(-1.4, 1.4, (N_LEVELS, 2))
    creep_frac = u(0.0, 0.03, N_LEVELS)
    creep_s = u(2.0, 10.0, N_LEVELS)
    load_noise = u(20.0, 70.0, N_LEVELS) if chip_base == 80.0 else u(8.0, 25.0, N_LEVELS)
    load_walk = u(1.0, 6.0, N_LEVELS)
    temp_coef = u(0.003, 0.03, N_LEVELS) * rng.choice([-1.0, 1.0], N_LEVELS)
    warm = rng.random() < 0.3
    if warm:
        temp_coef *= u(1.0, 1.6)
    heat_share = np.linspace(1.3, 0.6, N_LEVELS) * u(0.8, 1.2, N_LEVELS)
    warm_c = u(2.0, 5.0) if warm else u(0.3, 2.0)

    faults: list[dict[str, Any]] = []
    r = rng.random()
    n_fault = 0 if r < 0.62 else (1 if r < 0.9 else 2)
    chans = rng.choice(N_LEVELS, n_fault, replace=False)
    kinds = ["piezo_weak", "piezo_dead", "load_stuck", "load_saturated", "load_dropouts"]
    for ch in chans:
        kind = str(rng.choice(kinds, p=[0.25, 0.15, 0.15, 0.15, 0.30]))
        f: dict[str, Any] = {"kind": kind, "channel": int(ch)}
        if kind == "piezo_weak":
            f["gain"] = round(u(0.03, 0.15), 3)
        elif kind == "load_stuck":
            f["value"] = int(u(-2e6, 2e6))
        elif kind == "load_saturated":
            f["value"] = S24_MAX if rng.random() < 0.5 else S24_MIN
        elif kind == "load_dropouts":
            f["rate"] = round(u(0.01, 0.08), 3)
        faults.append(f)

    return Tower(
        seed=seed, piezo_rate_hz=piezo_rate, load_rate_hz=load_rate, adc_bits=adc_bits,
        sets_per_msg=sets_per_msg, chip_rate_hz=chip_rate, fw=fw, device_id=device_id,
        module_h_m=module_h, plate_half_m=plate_half, hole_half_m=hole_half, hole_xy_m=hole_xy,
        restitution=restitution, friction=friction, mode_hz=mode_hz, mode_q=mode_q,
        mode_gain=mode_gain, ref_peak_codes=ref_peak, coupling=coupling, hp_hz=hp_hz,
        lp_hz=lp_hz, contact_s=u(0.4e-3, 1.2e-3), adc_noise_codes=adc_noise,
        bias_offset_codes=bias_offset, hum_hz=hum_hz, hum_codes=hum_codes,
        acoustic_gain=acoustic_gain, capacity_g=capacity, rated_mv_v=rated, polarity=polarity,
        counts_per_g=counts_per_g, zero_counts=zero_counts, plate_f0_hz=plate_f0,
        plate_zeta=plate_zeta, pos_grad_per_m=pos_grad, creep_frac=creep_frac, creep_s=creep_s,
        load_noise_counts=load_noise, load_walk_counts=load_walk, load_coupling=u(0.03, 0.12),
        load_base_coupling=u(0.05, 0.2), temp_coef_g_per_c=temp_coef, heat_share=heat_share,
        warm_c=warm_c, warm_tau_s=u(180.0, 900.0), room_c_per_h=u(-3.0, 3.0),
        cells="mixed" if mixed else "matched", faults=faults, cube_size_m=u(0.0095, 0.0102),
        cube_density_g_cm3=u(0.5, 0.7),
    )


def tower_fault(tower: Tower, kind: str) -> dict[str, Any] | None:
    """The tower's fault of this kind, if it has one."""
    for f in tower.faults:
        if f["kind"] == kind:
            return f
    return None


# ---------------------------------------------------------------------------
# The session: who plays, how they throw, the room, the cable (cheap to plan).
# ---------------------------------------------------------------------------


@dataclass
class Session:
    """Everything about one recording that is not the tower."""

    seed: int
    scenario: str
    duration_s: float
    start_mode: str  # "boot" (host opened the port, device reset) or "attach"
    uptime0_s: float  # device clock at the first sample set, seconds
    seq0: int
    damage: list[dict[str, Any]]
    players: list[str]
    styles: dict[str, str]
    odd_cubes: dict[str, tuple[float, float]]  # colour -> (size m, density g/cm^3)
    talk_codes: float
    laugh_per_min: float
    music: bool
    knock_per_min: float
    bump_per_min: float
    touch_per_min: float


def _session_rng(seed: int, scenario: str, duration_s: float, purpose: int) -> np.random.Generator:
    return np.random.default_rng([seed, SCENARIOS.index(scenario), int(round(duration_s * 1000)),
                                  purpose])


def plan_session(seed: int, scenario: str, duration_s: float) -> Session:
    """The session of a recording: cheap, so tests can look for seeds with a feature."""
    if scenario not in SCENARIOS:
        raise ValueError(f"unknown scenario {scenario!r}; choose from {', '.join(SCENARIOS)}")
    rng = _session_rng(seed, scenario, duration_s, 0)
    u = rng.uniform
    start_mode = "attach" if rng.random() < 0.4 else "boot"
    uptime0 = u(0.0, 4294.967295) if start_mode == "attach" else u(0.01, 0.03)
    seq0 = int(rng.integers(0, 65536)) if start_mode == "attach" else 0

    damage: list[dict[str, Any]] = []
    if duration_s >= 600:
        n_damage = int(rng.poisson(duration_s / 600 * 1.2))
    else:
        n_damage = (1 + int(rng.random() < 0.3)) if rng.random() < 0.45 else 0
    lo, hi = 12.0, duration_s - 10.0
    placed: list[float] = []
    rebooted = False
    for _ in range(n_damage):
        kind = str(rng.choice(DAMAGE_KINDS, p=[0.35, 0.3, 0.2, 0.15]))
        if kind == "reboot" and rebooted:
            kind = "unplug"
        a = u(lo, hi) if hi > lo else lo
        gap = u(1.0, 5.0) if kind in ("unplug", "reboot") else 0.0
        if hi <= lo or a + gap > duration_s - 6.0 or any(abs(a - p) < 12.0 for p in placed):
            continue
        placed.append(a)
        d: dict[str, Any] = {"kind": kind, "a": a, "gap_s": gap}
        if kind == "bit_errors":
            d["burst_s"] = u(0.02, 0.5)
            d["ber"] = float(10 ** u(-3.7, -2.3))
        elif kind == "overrun":
            d["n_bytes"] = int(10 ** u(1.3, 3.6))
        elif kind == "reboot":
            rebooted = True
        damage.append(d)
    damage.sort(key=lambda d: d["a"])

    n_players = int(rng.integers(3, 6)) if scenario == "game" else int(rng.integers(1, 4))
    if scenario == "single":
        n_players = 1
    players = [str(c) for c in rng.choice(COLOURS, n_players, replace=False)]
    styles = {p: str(rng.choice(["gentle", "normal", "hard"], p=[0.3, 0.45, 0.25]))
              for p in players}
    odd_cubes: dict[str, tuple[float, float]] = {}
    if scenario in ("game", "rapid") and rng.random() < 0.3:
        for c in rng.choice(players, min(len(players), int(rng.integers(1, 3))), replace=False):
            odd_cubes[str(c)] = (u(0.0078, 0.0085), u(0.65, 0.8))  # a smaller set, denser wood
    room = {
        "single": (u(0.0, 0.6), 0.0, False, u(0.0, 0.3), 0.04, 0.0),
        "rapid": (u(0.3, 1.5), u(0.0, 0.5), False, u(0.0, 0.6), 0.06, 0.0),
        "noisy": (u(2.0, 8.0), u(0.5, 2.0), rng.random() < 0.4, u(3.0, 9.0), 0.3, u(0.1, 0.5)),
        "game": (u(1.0, 5.0), u(0.2, 1.0), rng.random() < 0.15, u(0.5, 2.5), 0.1, u(0.0, 0.2)),
    }[scenario]
    return Session(
        seed=seed, scenario=scenario, duration_s=duration_s, start_mode=start_mode,
        uptime0_s=uptime0, seq0=seq0, damage=damage, players=players, styles=styles,
        odd_cubes=odd_cubes, talk_codes=float(room[0]), laugh_per_min=float(room[1]),
        music=bool(room[2]), knock_per_min=float(room[3]), bump_per_min=float(room[4]),
        touch_per_min=float(room[5]),
    )


# ---------------------------------------------------------------------------
# The physical world: cubes falling through holes, plates, hands, the table.
# ---------------------------------------------------------------------------


@dataclass(eq=False)
class Cube:
    """One wooden cube."""

    cid: int
    colour: str
    mass_g: float
    size_m: float
    level: int = -1
    x: float = 0.0
    y: float = 0.0
    seg_start: float = 0.0
    seg_grams: float = 0.0


@dataclass
class Contact:
    """A short force on the structure: ``src`` -1 table, 0..7 a plate, 8 the entrance rim."""

    a: float
    src: int
    j: float  # N s
    dur_s: float
    kind: str


@dataclass
class FallResult:
    """Where and when a falling cube came to rest."""

    level: int
    a_rest: float
    a_first: float
    knocked: bool


class World:
    """Physics of one session on one tower, in seconds of physical time ``a``."""

    def __init__(self, tower: Tower, session: Session) -> None:
        self.tw = tower
        self.ss = session
        self.rng = _session_rng(session.seed, session.scenario, session.duration_s, 1)
        self.plates: list[list[Cube]] = [[] for _ in range(N_LEVELS)]
        self.contacts: list[Contact] = []
        self.scrapes: list[tuple[float, float, int, float]] = []  # a0, a1, src, 10-bit codes
        self.weights: list[tuple[float, float, int, float]] = []  # a_on, a_off, level, grams
        self.presses: list[tuple[float, float, int, float]] = []  # a0, a1, level, grams
        self.offsets: list[tuple[float, int, float, float, float]] = []  # a, level, g, tau, keep
        self.opened: list[tuple[float, float, int]] = []  # a_lift, a_close, exposed
        self.landings: list[dict[str, Any]] = []
        self.knockdowns: list[dict[str, Any]] = []
        self.removals: list[dict[str, Any]] = []
        self.lifts: list[dict[str, Any]] = []
        self.closes: list[dict[str, Any]] = []
        self.knocks: list[dict[str, Any]] = []
        self.fallouts: list[dict[str, Any]] = []
        self.talk: list[tuple[float, float, float]] = []  # a0, a1, 10-bit codes
        self.game_log: list[str] = []
        self.next_cid = 0
        self.cubes_by_colour: dict[str, list[Cube]] = {}
        self.open_until = -1.0

    # -- cubes ------------------------------------------------------------

    def new_cube(self, colour: str) -> Cube:
        size, density = self.ss.odd_cubes.get(
            colour, (self.tw.cube_size_m, self.tw.cube_density_g_cm3))
        if colour == "red":
            size, density = self.tw.cube_size_m, self.tw.cube_density_g_cm3
        mass = density * (size * 100) ** 3 * self.rng.uniform(0.97, 1.03)
        cube = Cube(self.next_cid, colour, mass, size * self.rng.uniform(0.99, 1.01))
        self.next_cid += 1
        return cube

    def _factor(self, level: int, x: float, y: float) -> float:
        gx, gy = self.tw.pos_grad_per_m[level]
        return 1.0 + gx * x + gy * y

    def _put_weight(self, cube: Cube, level: int, a: float) -> None:
        cube.level = level
        cube.seg_start = a
        cube.seg_grams = cube.mass_g * self._factor(level, cube.x, cube.y)
        self.plates[level].append(cube)

    def _end_weight(self, cube: Cube, a: float) -> None:
        if cube.level >= 0:
            self.weights.append((cube.seg_start, a, cube.level, cube.seg_grams))
            self.plates[cube.level].remove(cube)
        cube.level = -1

    def _contact(self, a: float, src: int, j: float, dur_s: float, kind: str) -> None:
        if j > 0:
            self.contacts.append(Contact(a, src, j, dur_s, kind))

    def _clamp_wall(self, p: float, v: float, s: float) -> tuple[float, float, bool]:
        lim = self.tw.plate_half_m - s / 2
        if p > lim:
            return lim - (p - lim) * 0.3, -0.4 * v, True
        if p < -lim:
            return -lim + (-lim - p) * 0.3, -0.4 * v, True
        return p, v, False

    def _cube_at(self, level: int, x: float, y: float, s: float, skip: Cube) -> Cube | None:
        best, best_d = None, 1e9
        for r in self.plates[level]:
            if r is skip:
                continue
            d = math.hypot(r.x - x, r.y - y)
            if d < (s + r.size_m) / 2 and d < best_d:
                best, best_d = r, d
        return best

    def _path(self, level: int, x: float, y: float, ux: float, uy: float, length: float,
              s: float, skip: tuple[Cube, ...], cubes: bool) -> tuple[float, str, Cube | None]:
        """The first thing met sliding from (x, y) along (ux, uy): wall, hole or cube."""
        best, kind, other = length, "stop", None
        lim = self.tw.plate_half_m - s / 2
        for p, w in ((x, ux), (y, uy)):
            if abs(w) > 1e-9:
                d = ((lim if w > 0 else -lim) - p) / w
                if 0 <= d < best:
                    best, kind = max(d, 0.0), "wall"
        if level >= 1:
            cx, cy = self.tw.hole_xy_m[level]
            half = self.tw.hole_half_m[level]
            lo, hi = 0.0, best
            for p, c, w in ((x, cx, ux), (y, cy, uy)):
                if abs(w) < 1e-9:
                    if abs(p - c) >= half:
                        lo, hi = 1.0, 0.0
                else:
                    t1, t2 = sorted(((c - half - p) / w, (c + half - p) / w))
                    lo, hi = max(lo, t1), min(hi, t2)
            if lo < hi and lo < best:
                best, kind = lo, "hole"
        if cubes:
            for r in self.plates[level]:
                if r in skip:
                    continue
                wx, wy = r.x - x, r.y - y
                along = wx * ux + wy * uy
                if along <= 0:
                    continue
                perp2 = wx * wx + wy * wy - along * along
                dmin = (s + r.size_m) / 2
                if perp2 < dmin * dmin:
                    d = along - math.sqrt(dmin * dmin - perp2)
                    if 0 <= d < best:
                        best, kind, other = d, "cube", r
        return best, kind, other

    def throw(self, cube: Cube, a0: float, style: str, kind: str) -> FallResult:
        """A player lets a cube go into the entrance at ``a0``; records its landing(s)."""
        rng, tw = self.rng, self.tw
        u = rng.uniform
        s, m = cube.size_m, cube.mass_g * 1e-3
        if style == "gentle":  # dropped from just above the entrance
            vz, vh, spread = math.sqrt(2 * G_ACC * u(0.005, 0.03)), u(0.0, 0.05), 0.6
        elif style == "hard":  # thrown in, fast and at an angle
            vz, vh, spread = u(1.8, 3.4), u(0.1, 0.45), 1.15
        else:
            vz, vh, spread = u(0.7, 1.6), u(0.03, 0.2), 0.85
        cx, cy = tw.hole_xy_m[8]
        lim = max(tw.hole_half_m[8] - s / 2, 0.0005)
        x, y = cx + u(-lim, lim) * spread, cy + u(-lim, lim) * spread
        first = None
        if max(abs(x - cx), abs(y - cy)) > lim:  # clips the entrance rim on the way in
            self._contact(a0, 8, m * vz * u(0.1, 0.4), 0.4e-3, "rim")
            first = a0
            x, y = cx + np.clip(x - cx, -lim, lim), cy + np.clip(y - cy, -lim, lim)
            vz *= u(0.7, 0.95)
        ang = u(0, 2 * math.pi)
        res = self._fall(cube, 7, a0, float(x), float(y), vz, vh * math.cos(ang),
                         vh * math.sin(ang), True)
        a_first = res.a_first if first is None else first
        self.landings.append({
            "a": res.a_rest, "floor": res.level, "a_first_impact": a_first, "a_throw": a0,
            "knocked": False, "caused_knockdown": res.knocked, "colour": cube.colour,
            "style": style, "kind": kind, "mass_g": cube.mass_g, "cid": cube.cid,
            "grams": cube.seg_grams,
        })
        return res

    def _fall(self, cube: Cube, level: int, a: float, x: float, y: float, vz: float,
              vx: float, vy: float, can_knock: bool) -> FallResult:
        rng, tw = self.rng, self.tw
        u = rng.uniform
        s, m = cube.size_m, cube.mass_g * 1e-3
        first: float | None = None
        knocked = False
        lev = level
        while True:
            h = tw.module_h_m
            dt = (-vz + math.sqrt(vz * vz + 2 * G_ACC * h)) / G_ACC
            x, y, a, vz = x + vx * dt, y + vy * dt, a + dt, vz + G_ACC * dt
            x, vx, hx = self._clamp_wall(x, vx, s)
            y, vy, hy = self._clamp_wall(y, vy, s)
            if hx or hy:  # brushes the module's wall on the way down
                self._contact(a - dt / 2, lev, m * math.hypot(vx, vy) * 3.0, 0.5e-3, "wall")
            if lev >= 1:
                cx, cy = tw.hole_xy_m[lev]
                half = tw.hole_half_m[lev]
                qx, qy = x - cx, y - cy
                d = max(abs(qx), abs(qy), 1e-6)
                # A tumbling cube's footprint: its side up to its face diagonal.
                s_eff = s * u(1.0, SPIN_MAX)
                if d <= half - s_eff / 2:
                    if d > half - s_eff / 2 - 0.0015:
                        self._contact(a, lev, m * vz * u(0.01, 0.04), 0.3e-3, "brush")
                        first = a if first is None else first
                    if can_knock and self._sweep(cube, lev, a, x, y, s_eff, vz):
                        knocked, can_knock = True, False
                        first = a if first is None else first
                    lev -= 1
                    continue
                if d < half + s_eff / 2:  # strikes the hole's edge
                    self._contact(a, lev, m * vz * u(0.1, 0.45), 0.4e-3, "graze")
                    first = a if first is None else first
                    if rng.random() < (half + s_eff / 2 - d) / s_eff:  # tips in
                        k = (half - s / 2) * 0.9 / d
                        x, y = cx + qx * k, cy + qy * k
                        # The edge throws it sideways as it tips over: towards the
                        # hole's middle, give or take a wide angle.
                        kick = vz * u(*EDGE_KICK)
                        turn = math.atan2(-qy, -qx) + rng.normal(0.0, 0.8)
                        vx = 0.5 * vx + kick * math.cos(turn)
                        vy = 0.5 * vy + kick * math.sin(turn)
                        vz *= u(0.5, 0.85)
                        if can_knock and self._sweep(cube, lev, a, x, y, s_eff, vz):
                            knocked, can_knock = True, False
                        lev -= 1
                        continue
                    k = (half + s / 2 + 0.0005) / d  # lands beside the hole
                    x, y = cx + qx * k, cy + qy * k
                    x, vx, _ = self._clamp_wall(x, vx, s)
                    y, vy, _ = self._clamp_wall(y, vy, s)
                    vz *= 0.8
            first = a if first is None else first
            out = self._on_plate(cube, lev, a, x, y, vz, vx, vy, can_knock)
            knocked = knocked or out[0]
            can_knock = can_knock and not out[0]
            if out[1] is None:
                return FallResult(lev, out[2], first, knocked)
            a, x, y, vz, vx, vy = out[1]
            lev -= 1

    def _sweep(self, cube: Cube, lev: int, a: float, x: float, y: float, s_eff: float,
               vz: float) -> bool:
        """A cube falling through a hole clips one resting at its edge; True if it goes down."""
        for r in list(self.plates[lev]):
            if math.hypot(r.x - x, r.y - y) < (s_eff + r.size_m) / 2:
                cx, cy = self.tw.hole_xy_m[lev]
                ang = math.atan2(cy - r.y, cx - r.x) + self.rng.normal(0.0, 0.4)
                self._contact(a, lev, cube.mass_g * 1e-3 * vz * 0.3, 0.4e-3, "clip")
                return self._push(r, lev, a, ang, vz * self.rng.uniform(0.1, 0.4), True)
        return False

    def _on_plate(self, cube: Cube, lev: int, a: float, x: float, y: float, vz: float,
                  vx: float, vy: float, can_knock: bool
                  ) -> tuple[bool, tuple[float, float, float, float, float, float] | None, float]:
        """Strike, bounce, slide or tumble on plate ``lev``; returns (knocked, fall state, rest)."""
        rng, tw = self.rng, self.tw
        u = rng.uniform
        s, m = cube.size_m, cube.mass_g * 1e-3
        e, mu = tw.restitution[lev], tw.friction[lev]
        dur = tw.contact_s * (1.5 / max(vz, 0.2)) ** 0.2
        self._contact(a, lev, m * (1 + e) * vz, dur, "impact")
        knocked = False
        vh = math.hypot(vx, vy)
        u0 = 0.4 * vh + vz * u(*SLIDE_FROM_FALL)
        ang = math.atan2(vy, vx) + rng.normal(0, 0.9) if vh > 0.02 else u(0, 2 * math.pi)
        hit = self._cube_at(lev, x, y, s, cube)
        if hit is not None:  # lands on a resting cube: glances off it, shoves it
            ang = math.atan2(y - hit.y, x - hit.x) + rng.normal(0, 0.5)
            u0 += u(0.03, 0.15)
            if self._push(hit, lev, a, ang + math.pi, vz * u(0.08, 0.3), can_knock):
                knocked, can_knock = True, False
        v, tb, nb = e * vz, a, 0
        while v > 0.06 and nb < 6:
            tb += 2 * v / G_ACC
            nb += 1
            self._contact(tb, lev, m * (1 + e) * v, dur * 1.2, "bounce")
            v *= e
        settle = tb + u(0.01, 0.05)
        dec = SLIDE_DECEL * mu * G_ACC
        ux, uy = math.cos(ang), math.sin(ang)
        length = u0 * u0 / (2 * dec)
        dist, what, other = self._path(lev, x, y, ux, uy, length, s, (cube,) if hit is None
                                       else (cube, hit), True)

        def at(d: float) -> tuple[float, float]:
            rem = max(u0 * u0 - 2 * dec * d, 0.0)
            return (u0 - math.sqrt(rem)) / dec, math.sqrt(rem)

        t_end, u_end = at(dist)
        if u0 > 0.05 and t_end > 0.02:
            self.scrapes.append((a + 0.005, a + t_end, lev, min(12.0, 18.0 * u0)))
        if u0 > 0.25:  # tumbles over its edges while it slides
            for i in range(min(3, int(u0 / 0.2))):
                tt = t_end * (i + 1) / (min(3, int(u0 / 0.2)) + 1)
                self._contact(a + tt, lev, m * u0 * u(0.3, 0.6), dur, "tumble")
        x2, y2 = x + ux * dist, y + uy * dist
        cube.x, cube.y = x2, y2
        if what == "hole":
            a_fall = a + t_end
            on = min(tb, a_fall)
            if a_fall - on > 0.005:
                self.weights.append((on, a_fall, lev, cube.mass_g * self._factor(lev, x2, y2)))
            vz2 = u(0.1, 0.25)
            return knocked, (a_fall, x2, y2, vz2, ux * u_end * 0.7, uy * u_end * 0.7), a_fall
        if what == "cube" and other is not None:
            self._contact(a + t_end, lev, m * u_end * 1.5, dur, "click")
            if self._push(other, lev, a + t_end, ang, u_end * u(0.5, 0.9), can_knock):
                knocked = True
        elif what == "wall":
            self._contact(a + t_end, lev, m * u_end * 1.3, dur, "wall")
        a_rest = max(a + t_end + (u(0.02, 0.08) if what != "stop" else 0.0), settle)
        self._put_weight(cube, lev, min(tb, a_rest))
        return knocked, None, a_rest

    def _push(self, target: Cube, lev: int, a: float, ang: float, speed: float,
              can_knock: bool) -> bool:
        """A resting cube shoved along ``ang``; True if it went down the hole (a knock-down)."""
        if speed < 0.02:
            return False
        u = self.rng.uniform
        s = target.size_m
        dec = SLIDE_DECEL * self.tw.friction[lev] * G_ACC
        ux, uy = math.cos(ang), math.sin(ang)
        length = speed * speed / (2 * dec)
        dist, what, _ = self._path(lev, target.x, target.y, ux, uy, length, s, (target,), False)
        rem = max(speed * speed - 2 * dec * dist, 0.0)
        t_end = (speed - math.sqrt(rem)) / dec
        if what == "hole" and can_knock:
            a_fall = a + t_end
            target.x, target.y = target.x + ux * dist, target.y + uy * dist
            self._end_weight(target, a_fall)
            res = self._fall(target, lev - 1, a_fall, target.x, target.y, u(0.1, 0.25),
                             ux * math.sqrt(rem) * 0.7, uy * math.sqrt(rem) * 0.7, False)
            self.knockdowns.append({"a": a_fall, "from_floor": lev, "to_floor": res.level,
                                    "cubes": 1, "colour": target.colour, "cid": target.cid})
            self.landings.append({
                "a": res.a_rest, "floor": res.level, "a_first_impact": res.a_first,
                "a_throw": a, "knocked": True, "caused_knockdown": False,
                "colour": target.colour, "style": "knocked", "kind": "knocked",
                "mass_g": target.mass_g, "cid": target.cid, "grams": target.seg_grams,
            })
            return True
        if what == "hole":
            dist = max(0.0, dist - 0.002)  # stops teetering on the edge
        self._end_weight(target, a + t_end)
        target.x, target.y = target.x + ux * dist, target.y + uy * dist
        self._put_weight(target, lev, a + t_end)
        if speed > 0.05:
            self.scrapes.append((a, a + max(t_end, 0.02), lev, min(8.0, 15.0 * speed)))
        return False

    # -- hands and the table ------------------------------------------------

    def table_knock(self, a: float, kind: str = "table") -> None:
        """A knock on the table (or a glass set down hard, a fist): through the base."""
        u = self.rng.uniform
        strength = u(0.2, 2.5)
        self._contact(a, -1, J_REF * strength, u(2e-3, 5e-3), "table")
        self.knocks.append({"a": a, "kind": kind, "strength": round(strength, 2)})

    def bump(self, a: float) -> None:
        """Someone bumps the tower: it shifts on the table, every cell's zero jumps and relaxes."""
        u = self.rng.uniform
        strength = u(1.5, 5.0)
        self._contact(a, -1, J_REF * strength, u(10e-3, 30e-3), "bump")
        self._contact(a + u(0.01, 0.04), -1, J_REF * strength * 0.4, 8e-3, "bump")
        self.scrapes.append((a, a + u(0.05, 0.2), -1, u(4.0, 15.0)))
        jump = u(0.02, 0.15) * self.rng.choice([-1.0, 1.0])
        tau, keep = u(1.0, 5.0), u(0.0, 0.3)
        for k in range(N_LEVELS):
            self.offsets.append((a, k, jump * u(0.5, 1.5), tau, keep))
        self.knocks.append({"a": a, "kind": "bump", "strength": round(strength, 2)})

    def touch(self, a: float) -> None:
        """A hand steadies the tower from the top for a moment (no cube moves)."""
        u = self.rng.uniform
        dur = u(0.5, 2.0)
        self._contact(a, 8, J_REF * u(0.2, 0.8), 3e-3, "hand")
        self.scrapes.append((a, a + dur, 7, u(2.0, 6.0)))
        self.scrapes.append((a, a + dur, 6, u(1.0, 4.0)))
        g = u(0.005, 0.03)
        for k in range(N_LEVELS):
            self.presses.append((a, a + dur, k, g * u(0.5, 1.5)))
        self.knocks.append({"a": a, "kind": "touch", "strength": 0.0})

    def lift_and_empty(self, a: float, exposed: int, take: bool = True
                       ) -> tuple[float, list[Cube], list[Cube]]:
        """Lift modules ``exposed``..7, take the cubes off level ``exposed``, close.

        Returns (time closed, cubes taken out, cubes that fell out on the table).
        """
        rng = self.rng
        u = rng.uniform
        a_touch = a
        a_lift = a_touch + u(0.4, 1.2)
        for lev in range(exposed, N_LEVELS):
            self.scrapes.append((a_touch, a_lift, lev, u(1.0, 5.0)))
        self._contact(a_lift, exposed, J_REF * u(0.2, 0.6), 3e-3, "unstick")
        self.lifts.append({"a": a_lift, "exposed": exposed})
        shift = u(-0.04, 0.04)
        hand = u(0.0, 0.08)
        a_now = a_lift + u(1.5, 5.0)
        fell: list[Cube] = []
        above = [c for lev in range(exposed + 1, N_LEVELS) for c in self.plates[lev]]
        if above and rng.random() < 0.05:
            c = above[int(rng.integers(len(above)))]
            a_out = a_lift + u(0.2, 1.0)
            self.fallouts.append({"a": a_out, "from_floor": c.level, "colour": c.colour,
                                  "cid": c.cid})
            self._end_weight(c, a_out)
            self._contact(a_out + 0.12, -1, c.mass_g * 1e-3 * 2.0, 1e-3, "fallout")
            fell.append(c)
        taken: list[Cube] = []
        cubes = list(self.plates[exposed]) if take else []
        rng.shuffle(cubes)
        while cubes:
            n = min(len(cubes), int(rng.choice([1, 1, 2, 2, 3])))
            grab, cubes = cubes[:n], cubes[n:]
            press = u(0.15, 0.5)
            a_rem = a_now + press
            self.presses.append((a_now, a_rem, exposed, u(3.0, 25.0)))
            self.scrapes.append((a_now, a_rem + 0.1, exposed, u(3.0, 15.0)))
            self._contact(a_now, exposed, J_REF * u(0.05, 0.3), 4e-3, "finger")
            for c in grab:
                self._end_weight(c, a_rem)
            self.removals.append({"a": a_rem, "floor": exposed, "cubes": n,
                                  "colours": sorted(c.colour for c in grab)})
            taken += grab
            a_now = a_rem + u(0.8, 2.5)
        a_close = a_now + u(1.0, 3.0)
        self._contact(a_close, exposed, J_REF * u(1.0, 4.0), u(5e-3, 15e-3), "set_down")
        for k in range(exposed + 1):
            self.offsets.append((a_lift, k, shift, 0.0, 1.0))
            self.offsets.append((a_close, k, -0.9 * shift, 0.0, 1.0))
            self.presses.append((a_lift + 0.2, a_close - 0.1, k, hand * u(0.3, 1.0)))
        for k in range(exposed + 1, N_LEVELS):
            self.offsets.append((a_close, k, u(-0.03, 0.03), 0.0, 1.0))  # re-seated plate
        self.opened.append((a_lift, a_close, exposed))
        self.closes.append({"a": a_close, "exposed": exposed})
        self.open_until = a_close
        return a_close, taken, fell

    # -- scenarios ----------------------------------------------------------

    def run(self) -> None:
        """Play the session's scenario and its room."""
        d = self.ss.duration_s
        script = {"single": self._single, "rapid": self._rapid, "noisy": self._single,
                  "game": self._game}[self.ss.scenario]
        script()
        self._room(d)
        for c in [c for plate in self.plates for c in plate]:
            self.weights.append((c.seg_start, math.inf, c.level, c.seg_grams))

    def _supply(self, colour: str) -> Cube:
        pile = self.cubes_by_colour.setdefault(colour, [])
        if not pile:
            return self.new_cube(colour)
        return pile.pop()

    def _single(self) -> None:
        u = self.rng.uniform
        d = self.ss.duration_s
        player = self.ss.players[0] if self.ss.scenario == "single" else None
        a = T_QUIET_S + u(0.0, 2.0)
        thrown = 0
        while a < d - 6.0 and thrown < 70:
            p = player or self.ss.players[int(self.rng.integers(len(self.ss.players)))]
            res = self.throw(self._supply(p), a, self.ss.styles[p], "throw")
            thrown += 1
            gap = u(3.5, 9.0) if self.ss.scenario == "single" else u(3.0, 7.0)
            a = max(a + gap, res.a_rest + u(0.5, 1.5))

    def _rapid(self) -> None:
        u = self.rng.uniform
        d = self.ss.duration_s
        a = T_QUIET_S + u(0.0, 1.5)
        thrown = 0
        while a < d - 6.0 and thrown < 70:
            p = self.ss.players[int(self.rng.integers(len(self.ss.players)))]
            for _ in range(int(self.rng.integers(3, 9))):
                if a >= d - 6.0:
                    break
                res = self.throw(self._supply(p), a, self.ss.styles[p], "throw")
                thrown += 1
                a = max(a + u(0.8, 1.8), res.a_rest + u(0.15, 0.4))
            a += u(3.0, 8.0)

    def _room(self, d: float) -> None:
        """Table knocks, bumps, hands on the tower, talk and laughter."""
        rng = self.rng
        u = rng.uniform
        for rate, fn in ((self.ss.knock_per_min, self.table_knock),
                         (self.ss.bump_per_min, self.bump),
                         (self.ss.touch_per_min, self.touch)):
            if d <= T_QUIET_S + 3.0:
                continue
            n = int(rng.poisson(rate * (d - T_QUIET_S - 3.0) / 60))
            for a in np.sort(u(T_QUIET_S, d - 3.0, n)):
                if fn is not self.table_knock and any(x["a"] < a < y["a"] + 1.0 for x, y
                                                      in zip(self.lifts, self.closes,
                                                             strict=True)):
                    continue
                fn(float(a))
        a = u(0.0, 3.0)
        while a < d:
            dur = u(0.8, 6.0)
            self.talk.append((a, min(a + dur, d), self.ss.talk_codes * u(0.5, 1.3)))
            a += dur + u(0.5, 8.0)
        n_laugh = int(rng.poisson(self.ss.laugh_per_min * d / 60))
        for a in u(0.0, d, n_laugh):
            self.talk.append((float(a), min(float(a) + u(0.3, 1.5), d),
                              self.ss.talk_codes * u(2.5, 5.0) + 3.0))

    # The game: Mord im Arosa as the rules have it (rules/004_*.txt), with
    # players' choices drawn at random and their hands and throws as above.

    def _game(self) -> None:
        rng = self.rng
        u = rng.uniform
        d = self.ss.duration_s
        end = d - 8.0
        players = self.ss.players
        styles = self.ss.styles
        supply = {p: 20 for p in players}
        sheet = {p: [0] * N_LEVELS for p in players}
        self.cubes_by_colour = {p: [self.new_cube(p) for _ in range(20)] for p in players}
        self.cubes_by_colour["red"] = [self.new_cube("red") for _ in range(2)]
        a = T_QUIET_S + u(0.5, 3.0)

        def throw_seq(cubes: list[Cube], who: str, kind: str, a: float) -> float:
            for c in cubes:
                if a >= end:
                    return a
                res = self.throw(c, a, styles[who], kind)
                a = max(a + u(1.0, 3.0), res.a_rest + u(0.3, 1.0))
            return a

        def from_supply(p: str, n: int) -> list[Cube]:
            n = min(n, supply[p])
            supply[p] -= n
            return [self.cubes_by_colour[p].pop() for _ in range(n)]

        knife = players[int(rng.integers(len(players)))]
        self.game_log.append(f"prologue: {knife} throws the victims")
        a = throw_seq(self.cubes_by_colour["red"][:], knife, "prologue", a)
        self.cubes_by_colour["red"] = []
        for p in players:
            a = throw_seq(from_supply(p, 2), p, "prologue", a + u(0.5, 2.0))
        act = 1
        turn = int(rng.integers(len(players)))
        found = 0
        over = False
        while not over and a < end - 20.0:
            inv = players[turn]
            a += u(3.0, 8.0)
            on_floor = [[c.colour for c in self.plates[lev]] for lev in range(N_LEVELS)]
            penalty = 0
            action = "inspect"
            suspects: list[str] = []
            if act == 1:
                w = np.array([(1 + 3 * f.count("red")) * (1.5 if f else 0.3) for f in on_floor])
            else:
                action = "cover" if sum(sheet[inv]) and rng.random() < 0.35 else "suspect"
                others = [p for p in players if p != inv]
                suspects = [str(x) for x in rng.choice(others, min(len(others), int(
                    rng.integers(1, 3))), replace=False)]
                w = np.array([1.0 + sum(f.count(s) for s in suspects + [inv]) for f in on_floor])
            floor = int(rng.choice(N_LEVELS, p=w / w.sum()))
            here = on_floor[floor]
            a_close, taken, fell = self.lift_and_empty(a, floor)
            back = [c for c in taken if c.colour != "red"]
            if act == 1:
                if "red" in here:
                    found += here.count("red")
                    self.game_log.append(f"{inv} finds {here.count('red')} victim(s) on {floor}")
                    for p in players:
                        if p != inv and here.count(p):
                            n = min(here.count(p), supply[p])
                            sheet[p][floor] += n
                            supply[p] -= n
                    if found >= 2:
                        act = 2
                else:
                    penalty = 1
                    self.game_log.append(f"{inv} inspects {floor}: no victim")
            elif action == "suspect":
                if floor == 0 and not here.count(inv):
                    penalty = len(suspects)
                else:
                    for s in suspects:
                        if here.count(s):
                            n = min(here.count(s), supply[s])
                            sheet[s][floor] += n
                            supply[s] -= n
                        else:
                            penalty += 1
                self.game_log.append(f"{inv} suspects {suspects} on {floor}")
            else:
                own = here.count(inv)
                back_n = min(own, sheet[inv][floor])
                sheet[inv][floor] -= back_n
                supply[inv] += back_n
                penalty = 0 if own else 1
                self.game_log.append(f"{inv} covers tracks on {floor}")
            a = a_close + u(1.5, 4.0)
            a = throw_seq(back + fell, inv, "throw_back", a)
            if any(sum(v) >= 10 for v in sheet.values()) or any(
                    supply[p] == 0 for p in players):
                over = True
                break
            a = throw_seq(from_supply(inv, penalty), inv, "penalty", a)
            if any(supply[p] == 0 for p in players):
                over = True
            if act == 2 and found >= 2 and action == "inspect":
                turn = players.index(inv)
            turn = (turn + 1) % len(players)
        self.game_log.append("game over" if over else "time up")


# ---------------------------------------------------------------------------
# Sensors: contact microphones and load cells.
# ---------------------------------------------------------------------------


def _pulse(n: int) -> np.ndarray:
    p = np.sin(np.pi * (np.arange(n) + 0.5) / n)
    return p / p.sum()


def _band_sos(fs: float, lo: float, hi: float) -> np.ndarray:
    hi = min(hi, 0.45 * fs)
    return signal.butter(2, [lo, hi], btype="bandpass", fs=fs, output="sos")


def _band_noise_gain(fs: float, lo: float, hi: float) -> float:
    """Scale that gives white noise through ``_band_sos`` about unit RMS."""
    return math.sqrt((fs / 2) / max(min(hi, 0.45 * fs) - lo, 50.0))


def _modes(tw: Tower, k: int, fs: float) -> list[tuple[np.ndarray, np.ndarray]]:
    out = []
    for f, q, g in zip(tw.mode_hz[k], tw.mode_q[k], tw.mode_gain[k], strict=True):
        if f >= 0.45 * fs:
            continue
        w = 2 * np.pi * f / fs
        r = math.exp(-np.pi * f / (q * fs))
        out.append((np.array([0.0, g * math.sin(w)]), np.array([1.0, -2 * r * math.cos(w), r * r])))
    return out


def _front_end(tw: Tower, fs: float) -> tuple[np.ndarray, np.ndarray]:
    """AC coupling (the piezo's leak through its bias resistor) and an RC anti-alias pole."""
    b1, a1 = signal.butter(1, tw.hp_hz, btype="highpass", fs=fs)
    b2, a2 = signal.butter(1, tw.lp_hz, btype="lowpass", fs=fs)
    return np.convolve(b1, b2), np.convolve(a1, a2)


def synth_piezo(tw: Tower, world: World, duration_s: float, boots: list[float],
                rng: np.random.Generator) -> np.ndarray:
    """ADC codes of all eight contact mics on the physical time grid, shape (n, 8) uint16."""
    fs = float(tw.piezo_rate_hz)
    n = int(math.ceil(duration_s * fs)) + 1
    full = (1 << tw.adc_bits) - 1
    scale = 4.0 if tw.adc_bits == 12 else 1.0
    bias = float(1 << (tw.adc_bits - 1))
    t = np.arange(n) / fs
    fe_b, fe_a = _front_end(tw, fs)
    band = _band_sos(fs, 150.0, 900.0)
    band_gain = _band_noise_gain(fs, 150.0, 900.0)
    # The room: talk, laughter and music reach every plate as sound.
    acoustic = np.zeros(n)
    env = np.zeros(n)
    for a0, a1, codes in world.talk:
        i0, i1 = int(a0 * fs), min(int(a1 * fs), n)
        if i1 > i0:
            m = i1 - i0
            syll = 0.55 + 0.45 * np.sin(2 * np.pi * rng.uniform(3.0, 6.0) * np.arange(m) / fs
                                        + rng.uniform(0, 6.3))
            env[i0:i1] += codes * syll * np.hanning(m) ** 0.3
    if env.any():
        acoustic = signal.sosfilt(_band_sos(fs, 120.0, 1100.0), rng.standard_normal(n)) * env
        acoustic *= _band_noise_gain(fs, 120.0, 1100.0)
    if world.ss.music:
        beat = rng.uniform(1.6, 2.4)
        ph = (t * beat) % 1.0
        acoustic += rng.uniform(1.0, 4.0) * np.exp(-ph / 0.12) * np.sin(2 * np.pi * 55.0 * t)
    contacts = sorted(world.contacts, key=lambda c: c.a)
    out = np.empty((n, N_LEVELS), dtype=np.uint16)
    ref_len = int(0.3 * fs)
    for k in range(N_LEVELS):
        modes = _modes(tw, k, fs)
        # Scale so that a J_REF strike on this plate peaks at ref_peak_codes.
        probe = np.zeros(ref_len)
        npulse = max(1, round(tw.contact_s * fs))
        probe[5:5 + npulse] = _pulse(npulse)
        resp = np.zeros(ref_len)
        for b, a in modes:
            resp += signal.lfilter(b, a, probe)
        resp = signal.lfilter(fe_b, fe_a, resp)
        gain = tw.ref_peak_codes[k] / max(float(np.max(np.abs(resp))), 1e-12)
        x = np.zeros(n)
        for c in contacts:
            amp = c.j / J_REF * tw.coupling[c.src + 1, k]
            if amp < 1e-4:
                continue
            i0 = int(round(c.a * fs))
            m = max(1, round(c.dur_s * fs))
            if i0 < 0 or i0 >= n:
                continue
            p = _pulse(m)[: n - i0]
            x[i0:i0 + len(p)] += amp * p
        y = np.zeros(n)
        for b, a in modes:
            y += signal.lfilter(b, a, x)
        y *= gain
        for a0, a1, src, codes in world.scrapes:
            amp = codes * tw.coupling[src + 1, k]
            i0, i1 = int(a0 * fs), min(int(a1 * fs), n)
            if amp < 0.05 or i1 - i0 < 3:
                continue
            seg = signal.sosfilt(band, rng.standard_normal(i1 - i0)) * band_gain
            y[i0:i1] += amp * seg * np.hanning(i1 - i0)
        y = y + acoustic * tw.acoustic_gain[k]
        y = signal.lfilter(fe_b, fe_a, y)
        fault = next((f for f in tw.faults if f["channel"] == k
                      and f["kind"].startswith("piezo")), None)
        if fault is not None:
            y *= fault["gain"] if fault["kind"] == "piezo_weak" else 0.0
        y *= scale
        hum_ph = rng.uniform(0, 2 * np.pi)
        hum = tw.hum_codes[k] * scale * (np.sin(2 * np.pi * tw.hum_hz * t + hum_ph)
                                         + 0.3 * np.sin(4 * np.pi * tw.hum_hz * t)
                                         + 0.4 * np.sin(6 * np.pi * tw.hum_hz * t + hum_ph))
        y += hum + rng.standard_normal(n) * tw.adc_noise_codes[k]
        y += bias + tw.bias_offset_codes[k]
        for a_lift, a_close, exposed in world.opened:
            if k <= exposed:
                continue
            # Disconnected: the bias network on the base holds the input, the open
            # line picks up more hum; the spring contacts chatter as they part and meet.
            i0, i1 = int(a_lift * fs), min(int((a_close + 0.003) * fs), n)
            if i1 <= i0:
                continue
            y[i0:i1] = (bias + tw.bias_offset_codes[k] + hum[i0:i1] * rng.uniform(3.0, 8.0)
                        + rng.standard_normal(i1 - i0) * tw.adc_noise_codes[k])
            for i in (i0, i1):
                m = min(int(rng.uniform(0.002, 0.008) * fs) + 1, n - i)
                if m > 0:
                    y[i:i + m] += rng.uniform(-1, 1, m) * rng.uniform(20, 150) * scale
        for a_boot in boots:
            # Power-up: the coupling capacitor charges to the bias in a few milliseconds.
            i0 = max(int(a_boot * fs), 0)
            m = min(int(0.1 * fs), n - i0)
            if m > 0:
                tau = 0.008
                ramp = 1 - np.exp(-np.arange(m) / fs / tau)
                y[i0:i0 + m] = (y[i0:i0 + m] - bias) + bias * ramp
        out[:, k] = np.clip(np.rint(y), 0, full).astype(np.uint16)
    return out


def temperature_c(tw: Tower, session: Session, a: np.ndarray) -> np.ndarray:
    """The electronics and cells warming up after power-on, plus the room's slow drift."""
    up0 = session.uptime0_s
    warm = tw.warm_c * ((1 - np.exp(-(up0 + a) / tw.warm_tau_s)) - (1 - math.exp(-up0
                                                                              / tw.warm_tau_s)))
    return warm + tw.room_c_per_h * a / 3600.0


def synth_load_force(tw: Tower, world: World, duration_s: float, session: Session,
                     rng: np.random.Generator) -> list[np.ndarray]:
    """The force each cell feels, in grams, on the LOAD_FS grid (plus slow zero changes)."""
    n = int(math.ceil(duration_s * LOAD_FS)) + 2
    t = np.arange(n) / LOAD_FS
    temp = temperature_c(tw, session, t)
    forces = []
    for k in range(N_LEVELS):
        steps = np.zeros(n + 1)
        for a_on, a_off, lev, grams in world.weights:
            if lev != k:
                continue
            i0 = int(np.clip(math.ceil(a_on * LOAD_FS), 0, n))
            steps[i0] += grams
            if math.isfinite(a_off):
                steps[int(np.clip(math.ceil(a_off * LOAD_FS), 0, n))] -= grams
        static = np.cumsum(steps)[:n]
        # Part of the load path runs through cardboard that gives way for seconds.
        c, tau = tw.creep_frac[k], tw.creep_s[k]
        b, a = signal.butter(1, 1 / (2 * np.pi * tau), fs=LOAD_FS)
        zi = signal.lfilter_zi(b, a) * static[0]
        static = (1 - c) * static + c * signal.lfilter(b, a, static, zi=zi)[0]
        f = static
        for a0, a1, lev, grams in world.presses:
            if lev != k:
                continue
            i0, i1 = int(a0 * LOAD_FS), min(int(a1 * LOAD_FS), n)
            if i1 - i0 > 2:
                f[i0:i1] += grams * np.hanning(i1 - i0) ** 0.5
        imp = np.zeros(n)
        for ct in world.contacts:
            i = int(ct.a * LOAD_FS)
            if i < 0 or i + 6 >= n:
                continue
            grams_s = ct.j / G_ACC * 1000.0  # impulse in gram-force seconds
            if ct.src == k:
                imp[i] += grams_s * LOAD_FS
                continue
            if ct.src == -1:
                coup = tw.load_base_coupling
            elif ct.src == 8:
                coup = tw.load_coupling * 0.5 * tw.load_coupling ** (N_LEVELS - 1 - k)
            else:
                coup = tw.load_coupling ** abs(ct.src - k)
            # Shaking the tower is no net force on another plate: an inertial doublet.
            imp[i] += coup * grams_s * LOAD_FS
            imp[i + 5] -= coup * grams_s * LOAD_FS
        w0 = 2 * np.pi * tw.plate_f0_hz[k]
        b2, a2 = signal.bilinear([w0 * w0], [1.0, 2 * tw.plate_zeta[k] * w0, w0 * w0], LOAD_FS)
        zi = signal.lfilter_zi(b2, a2) * f[0]
        dyn = signal.lfilter(b2, a2, f + imp, zi=zi)[0]
        zero = tw.temp_coef_g_per_c[k] * tw.heat_share[k] * temp
        for a0, lev, grams, tau_s, keep in world.offsets:
            if lev != k:
                continue
            i0 = int(np.clip(a0 * LOAD_FS, 0, n))
            if tau_s <= 0:
                zero[i0:] += grams
            else:
                dt = t[i0:] - t[i0]
                zero[i0:] += grams * (keep + (1 - keep) * np.exp(-dt / tau_s))
        forces.append(dyn + zero)
    return forces


def hx711_readings(tw: Tower, k: int, force_g: np.ndarray, polls_a: np.ndarray,
                   epochs_a: list[tuple[float, float, bool]], dead: list[tuple[float, float]],
                   rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """One HX711 polled at ``polls_a``: (counts, valid).

    The chip integrates the bridge over each conversion (about 1/rate) and
    converts continuously on its own clock; the firmware reports the mean of
    the conversions finished since its last poll. A chip without power (its
    module lifted, or the device just booted) needs four conversions to settle.
    """
    period = 1.0 / tw.chip_rate_hz[k]
    csum = np.concatenate([[0.0], np.cumsum(force_g)]) / LOAD_FS
    grid = np.arange(len(csum))
    ends_l: list[np.ndarray] = []
    for a_on, a_off, powered_up in epochs_a:
        first = a_on + rng.uniform(0, period) + (4 * period if powered_up else 0.0)
        if first < a_off:
            ends_l.append(np.arange(first, a_off, period))
    if not ends_l:
        return np.zeros(len(polls_a), dtype=np.int64), np.zeros(len(polls_a), dtype=bool)
    ends = np.concatenate(ends_l)
    for a0, a1 in dead:  # no power while lifted, then four conversions to settle
        ends = ends[(ends <= a0) | (ends > a1 + 4 * period)]
    ends.sort()
    integ = np.interp(ends * LOAD_FS, grid, csum) - np.interp((ends - period) * LOAD_FS,
                                                               grid, csum)
    grams = integ / period
    walk = np.cumsum(rng.standard_normal(len(ends))) * tw.load_walk_counts[k] * math.sqrt(period)
    conv = (tw.zero_counts[k] + tw.polarity[k] * tw.counts_per_g[k] * grams + walk
            + rng.standard_normal(len(ends)) * tw.load_noise_counts[k])
    idx = np.searchsorted(ends, polls_a, side="right")
    prev = np.concatenate([[0], idx[:-1]])
    # A poll reports only conversions finished since the last poll, and never one
    # from before a power-up (handled by the dead spans above).
    ccum = np.concatenate([[0.0], np.cumsum(conv)])
    count = idx - prev
    valid = count > 0
    mean = np.where(valid, (ccum[idx] - ccum[prev]) / np.maximum(count, 1), 0.0)
    counts = np.clip(np.rint(mean), S24_MIN, S24_MAX).astype(np.int64)
    return np.where(valid, counts, 0), valid


# ---------------------------------------------------------------------------
# The device stream: epochs of the device clock, messages, framing, damage.
# ---------------------------------------------------------------------------


@dataclass
class Epoch:
    """One run of the firmware between power-ups (device clock t = a - a_zero)."""

    a_zero: float
    a_first_set: float
    a_end: float
    boot: bool
    seq0: int
    attach_hello_a: float | None = None


@dataclass
class Frames:
    """Encoded frames in send order with where each sits in the byte stream."""

    data: np.ndarray  # uint8
    start: np.ndarray  # byte offset of every frame
    length: np.ndarray
    a_send: np.ndarray
    a_t: np.ndarray  # physical time of t_us (nan for untimed messages)
    a_last: np.ndarray  # physical time of the last sample the message holds
    mtype: np.ndarray  # 0 for a lone delimiter
    epoch: np.ndarray


def _t_us(tau_s: np.ndarray) -> np.ndarray:
    """micros(): 4 us steps on a 16 MHz AVR, wrapping at 2^32."""
    return ((np.floor(tau_s * 1e6 / 4.0).astype(np.int64) * 4) & 0xFFFFFFFF).astype(np.int64)


def build_epoch_frames(tw: Tower, ep: Epoch, ep_index: int, piezo: np.ndarray,
                       load_counts: np.ndarray, load_valid: np.ndarray, polls_a: np.ndarray,
                       rng: np.random.Generator, host_cmd_seq: int) -> list[tuple[Any, ...]]:
    """The messages of one epoch as groups (type, a_send, a_t, a_last, encoded rows)."""
    fs = tw.piezo_rate_hz
    nset = tw.sets_per_msg
    i_first = int(round(ep.a_first_set * fs))
    i_end = min(int(ep.a_end * fs), piezo.shape[0])
    n_msg = max(0, (i_end - i_first) // nset)
    groups: list[tuple[Any, ...]] = []
    tau_first = ep.a_first_set - ep.a_zero
    # PIEZO
    j = np.arange(n_msg) * nset
    p_tau = tau_first + j / fs
    p_a_t = ep.a_first_set + j / fs
    p_a_last = p_a_t + (nset - 1) / fs
    p_send = p_a_last + 60e-6
    samples = piezo[i_first:i_first + n_msg * nset].reshape(n_msg, nset * N_LEVELS)
    p_body = np.concatenate([_le(_t_us(p_tau), 4), np.full((n_msg, 1), nset, np.uint8),
                             samples.astype("<u2").view(np.uint8).reshape(n_msg, -1)], axis=1)
    groups.append((T_PIEZO, p_send, p_a_t, p_a_last, p_body))
    # LOAD
    sel = (polls_a >= ep.a_first_set) & (polls_a < ep.a_end)
    l_a = polls_a[sel]
    vals = load_counts[sel] & 0xFFFFFF
    valid = load_valid[sel]
    vbits = (valid.astype(np.int64) << np.arange(N_LEVELS)).sum(axis=1)
    l_body = np.concatenate([_le(_t_us(l_a - ep.a_zero), 4), _le(vbits, 1)]
                            + [_le(vals[:, k], 3) for k in range(N_LEVELS)], axis=1)
    groups.append((T_LOAD, l_a + 4e-4, l_a, l_a, l_body))
    # STATUS, once a second of device time
    tau0 = ep.a_first_set - ep.a_zero
    secs = np.arange(math.ceil(tau0), ep.a_end - ep.a_zero)
    s_a = secs + ep.a_zero
    s_a = s_a[(s_a >= ep.a_first_set) & (s_a < ep.a_end)]
    in_ep = (polls_a >= ep.a_first_set) & (polls_a < ep.a_end)
    missing = np.concatenate([[0], np.cumsum((~load_valid[in_ep]).sum(axis=1))])
    timeouts = missing[np.searchsorted(polls_a[in_ep], s_a)].astype(np.int64)
    cpu = np.clip(np.rint(20 + fs / 100 + rng.normal(0, 2, len(s_a))), 0, 100).astype(np.int64)
    s_body = np.concatenate([_le(np.rint((s_a - ep.a_zero) * 1000).astype(np.int64)
                                 & 0xFFFFFFFF, 4),
                             _le(np.zeros(len(s_a), np.int64), 2),
                             _le(np.zeros(len(s_a), np.int64), 2),
                             _le(timeouts & 0xFFFF, 2), _le(cpu, 1),
                             _le(np.zeros(len(s_a), np.int64), 1)], axis=1)
    groups.append((T_STATUS, s_a + 2e-4, np.full(len(s_a), np.nan), s_a, s_body))
    # HELLO (and the ACK of the host's GET_INFO when it attached to a running device)
    hello = bytes([1, *tw.fw, N_LEVELS, N_LEVELS]) + tw.piezo_rate_hz.to_bytes(2, "little") \
        + tw.load_rate_hz.to_bytes(2, "little") + bytes([tw.adc_bits]) + tw.device_id
    h_a = ep.a_zero + 0.002 if ep.boot else float(ep.attach_hello_a or 0.0)
    groups.append((T_HELLO, np.array([h_a]), np.array([np.nan]), np.array([h_a]),
                   np.frombuffer(hello, np.uint8)[None, :]))
    if not ep.boot:
        ack = bytes([0x81]) + (host_cmd_seq & 0xFFFF).to_bytes(2, "little") + b"\x00"
        groups.append((T_ACK, np.array([h_a + 1e-4]), np.array([np.nan]), np.array([h_a]),
                       np.frombuffer(ack, np.uint8)[None, :]))
    # Sequence numbers in send order.
    send = np.concatenate([g[1] for g in groups])
    order = np.argsort(send, kind="stable")
    rank = np.empty(len(send), dtype=np.int64)
    rank[order] = np.arange(len(send))
    out = []
    pos = 0
    for mtype, a_send, a_t, a_last, body in groups:
        n = len(a_send)
        seqs = (ep.seq0 + rank[pos:pos + n]) & 0xFFFF
        pos += n
        rows = encode_rows(mtype, seqs, body) if n else np.zeros((0, body.shape[1] + 7),
                                                                 np.uint8)
        out.append((mtype, a_send, a_t, a_last, rows, ep_index))
    return out


def assemble(groups: list[tuple[Any, ...]], lone_zeros: list[tuple[float, int]]) -> Frames:
    """All frames in send order (per epoch), scattered into one byte array.

    ``lone_zeros`` are (time, epoch) of single 0x00 bytes a booting firmware sends.
    """
    nz = len(lone_zeros)
    z_a = np.array([a for a, _ in lone_zeros], dtype=float)
    mtype = np.concatenate([np.full(len(g[1]), g[0]) for g in groups]
                           + [np.zeros(nz, np.int64)])
    a_send = np.concatenate([g[1] for g in groups] + [z_a - 1e-6])
    a_t = np.concatenate([g[2] for g in groups] + [np.full(nz, np.nan)])
    a_last = np.concatenate([g[3] for g in groups] + [z_a])
    epoch = np.concatenate([np.full(len(g[1]), g[5]) for g in groups]
                           + [np.array([e for _, e in lone_zeros], dtype=np.int64)])
    length = np.concatenate([np.full(len(g[1]), g[4].shape[1]) for g in groups]
                            + [np.ones(nz, np.int64)])
    order = np.lexsort((a_send, epoch))
    starts_sorted = np.concatenate([[0], np.cumsum(length[order])[:-1]]).astype(np.int64)
    start = np.empty_like(starts_sorted)
    start[order] = starts_sorted
    data = np.zeros(int(length.sum()), dtype=np.uint8)
    pos = 0
    for g in groups:
        rows = g[4]
        n, w = rows.shape
        for i in range(0, n, 20000):
            st = start[pos + i:pos + min(n, i + 20000)]
            data[(st[:, None] + np.arange(w)[None, :]).ravel()] = rows[i:i + 20000].ravel()
        pos += n
    # Lone delimiters stay 0.
    return Frames(data=data, start=start[order], length=length[order], a_send=a_send[order],
                  a_t=a_t[order], a_last=a_last[order], mtype=mtype[order], epoch=epoch[order])


def make_recording(seed: int, scenario: str, duration_s: float, out_dir: Path
                   ) -> tuple[Path, Path]:
    """Write ``{scenario}_t{seed}.bin`` and ``.truth.json`` into ``out_dir``."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    tw = make_tower(seed)
    ss = plan_session(seed, scenario, duration_s)
    world = World(tw, ss)
    world.run()
    rng_sig = _session_rng(seed, scenario, duration_s, 2)
    rng_wire = _session_rng(seed, scenario, duration_s, 3)
    u = rng_wire.uniform
    d = duration_s

    # -- epochs of the device clock ------------------------------------------------
    reboot = next((x for x in ss.damage if x["kind"] == "reboot"), None)
    a_zero1 = -ss.uptime0_s
    epochs = [Epoch(a_zero=a_zero1, a_first_set=0.0, a_end=d, boot=ss.start_mode == "boot",
                    seq0=ss.seq0, attach_hello_a=u(0.05, 0.3))]
    boots = [0.0] if ss.start_mode == "boot" else []
    a_boot2 = math.nan
    if reboot is not None:
        epochs[0].a_end = reboot["a"]
        a_boot2 = reboot["a"] + reboot["gap_s"]
        first_set2 = a_boot2 + u(0.005, 0.03)
        epochs.append(Epoch(a_zero=a_boot2, a_first_set=first_set2, a_end=d, boot=True, seq0=0))
        boots.append(first_set2)

    piezo = synth_piezo(tw, world, d, boots, rng_sig)
    forces = synth_load_force(tw, world, d, ss, rng_sig)
    polls = []
    for ep in epochs:
        tau0 = ep.a_first_set - ep.a_zero + u(0.0, 1.0 / tw.load_rate_hz)
        taus = tau0 + np.arange(0, (ep.a_end - ep.a_first_set) * tw.load_rate_hz) / \
            tw.load_rate_hz
        polls.append(taus + ep.a_zero)
    polls_a = np.concatenate(polls)
    polls_a = polls_a[polls_a < d]
    epochs_a = [(ep.a_zero, ep.a_end, True) if ep.boot else (-0.5, ep.a_end, False)
                for ep in epochs]
    load_counts = np.zeros((len(polls_a), N_LEVELS), dtype=np.int64)
    load_valid = np.zeros((len(polls_a), N_LEVELS), dtype=bool)
    for k in range(N_LEVELS):
        dead = [(a_l, a_c + rng_sig.uniform(0.0, 0.15)) for a_l, a_c, f in world.opened
                if k > f]
        c, v = hx711_readings(tw, k, forces[k], polls_a, epochs_a, dead, rng_sig)
        for fault in tw.faults:
            if fault["channel"] != k:
                continue
            if fault["kind"] in ("load_stuck", "load_saturated"):
                c = np.where(v, fault["value"], 0)
            elif fault["kind"] == "load_dropouts":
                v = v & (rng_sig.random(len(v)) >= fault["rate"])
                c = np.where(v, c, 0)
        load_counts[:, k], load_valid[:, k] = c, v

    groups: list[tuple[Any, ...]] = []
    host_cmd_seq = int(u(0, 65536))
    for i, ep in enumerate(epochs):
        groups += build_epoch_frames(tw, ep, i, piezo, load_counts, load_valid, polls_a,
                                     rng_wire, host_cmd_seq)
    # A booting firmware sends a lone 0x00 first, so a receiver drops whatever
    # half frame it held (the tail of a frame cut by the power going).
    fr = assemble(groups, [(ep.a_zero, i) for i, ep in enumerate(epochs) if ep.boot])
    # Frames of epoch 0 sent after its power went are not sent at all.
    keep = ~((fr.epoch == 0) & (fr.a_send > epochs[0].a_end) & (fr.mtype != 0))
    stream, spans = _cut_and_damage(fr, keep, ss, epochs, rng_wire)
    zero_a, t_last_a = spans["zero_a"], spans["t_last_a"]

    def st(a: float) -> float:
        """Stream time of physical time ``a`` (contracts.md section 2, joined after a reboot)."""
        if reboot is None:
            return a - zero_a
        if a < a_boot2:
            return min(a - zero_a, t_last_a - zero_a)
        return (t_last_a - zero_a) + (a - a_boot2)

    # -- truth ------------------------------------------------------------------
    def r4(x: float) -> float:
        return round(float(x), 4)

    sign_cpg = tw.polarity * tw.counts_per_g
    landings = []
    for x in sorted(world.landings, key=lambda x: x["a"]):
        landings.append({
            "t": r4(st(x["a"])), "floor": int(x["floor"]), "cubes": 1,
            "knocked": bool(x["knocked"]), "caused_knockdown": bool(x["caused_knockdown"]),
            "t_throw": r4(st(x["a_throw"])), "t_first_impact": r4(st(x["a_first_impact"])),
            "colour": x["colour"], "style": x["style"], "kind": x["kind"],
            "mass_g": round(x["mass_g"], 4),
            "step_g": round(x["grams"], 4),
            "step_counts": round(float(x["grams"] * sign_cpg[int(x["floor"])]), 1),
        })
    damage = spans["damage"]
    for dmg in damage:
        dmg["t_start"], dmg["t_end"] = r4(st(dmg.pop("a_start"))), r4(st(dmg.pop("a_end")))
    truth: dict[str, Any] = {
        "format": TRUTH_FORMAT, "model": MODEL, "scenario": scenario, "seed": seed,
        "duration_s": duration_s, "cells": tw.cells,
        "landings": landings,
        "knockdowns": [{"t": r4(st(x["a"])), "from_floor": x["from_floor"],
                        "to_floor": x["to_floor"], "cubes": 1, "colour": x["colour"]}
                       for x in sorted(world.knockdowns, key=lambda x: x["a"])],
        "removals": [{"t": r4(st(x["a"])), "floor": x["floor"], "cubes": x["cubes"],
                      "colours": x["colours"]} for x in world.removals],
        "lifts": [{"t": r4(st(x["a"])), "exposed": x["exposed"]} for x in world.lifts],
        "closes": [{"t": r4(st(x["a"])), "exposed": x["exposed"]} for x in world.closes],
        "knocks": [{"t": r4(st(x["a"])), "kind": x["kind"], "strength": x["strength"]}
                   for x in sorted(world.knocks, key=lambda x: x["a"])],
        "damage": damage,
        "fallouts": [{"t": r4(st(x["a"])), "from_floor": x["from_floor"],
                      "colour": x["colour"]} for x in world.fallouts],
        "tower": tw.summary(),
        "session": {
            "start_mode": ss.start_mode, "uptime0_s": round(ss.uptime0_s, 6),
            "players": ss.players, "styles": ss.styles,
            "odd_cubes": {c: [round(s * 1e3, 2), round(dn, 3)] for c, (s, dn)
                          in ss.odd_cubes.items()},
            "talk_codes": round(ss.talk_codes, 2), "music": ss.music,
            "zero_t_us": int(_t_us(np.array([zero_a - a_zero1]))[0]),
            "reboot_joined_at_t": r4(t_last_a - zero_a) if reboot is not None else None,
            "game_log": world.game_log,
        },
    }
    stem = f"{scenario}_t{seed}"
    bin_path = out_dir / f"{stem}.bin"
    truth_path = out_dir / f"{stem}.truth.json"
    bin_path.write_bytes(stream)
    truth_path.write_text(json.dumps(truth, indent=1))
    return bin_path, truth_path


def _cut_and_damage(fr: Frames, keep: np.ndarray, ss: Session, epochs: list[Epoch],
                    rng: np.random.Generator) -> tuple[bytes, dict[str, Any]]:
    """Apply the capture's start, the reboot's cut and the planned damage to the bytes."""
    n_frames = len(fr.start)
    kept = np.nonzero(keep)[0]
    # Byte ranges to drop, bits to flip: (start, stop) in the assembled array.
    drops: list[tuple[int, int]] = []
    spans: list[dict[str, Any]] = []
    timed = (fr.mtype == T_PIEZO) | (fr.mtype == T_LOAD)

    def frame_at(a: float) -> int:
        epoch = 1 if len(epochs) > 1 and a >= epochs[1].a_zero else 0
        cand = np.nonzero((fr.epoch == epoch) & (fr.a_send >= a) & keep)[0]
        return int(cand[0]) if len(cand) else int(kept[-1])

    def a_from(i: int) -> float:
        return float(fr.a_t[i] if np.isfinite(fr.a_t[i]) else fr.a_send[i]) - 0.005

    def byte_in(i: int) -> int:
        return int(fr.start[i] + rng.integers(1, max(2, fr.length[i] - 1)))

    # The epoch-0 frames after a power loss are gone; the last one sent is cut short.
    reboot = next((x for x in ss.damage if x["kind"] == "reboot"), None)
    t_last_a = math.nan
    if reboot is not None:
        ep0 = np.nonzero((fr.epoch == 0) & keep & (fr.mtype != 0))[0]
        last = int(ep0[-1])
        if rng.random() < 0.8:
            drops.append((byte_in(last), int(fr.start[last] + fr.length[last])))
            complete = ep0[:-1]
        else:
            complete = ep0
        t_last_a = float(np.max(fr.a_last[complete[timed[complete]]]))
        boot_frames = np.nonzero(fr.epoch == 1)[0]
        settle = epochs[1].a_first_set + 0.5
        hello2 = int(boot_frames[np.nonzero(fr.mtype[boot_frames] == T_HELLO)[0][0]])
        spans.append({"kind": "reboot", "a_start": t_last_a, "a_end": settle,
                      "gap_s": round(reboot["gap_s"], 3),
                      "_bytes": (int(fr.start[last]), int(fr.start[hello2] + fr.length[hello2]))})
    first_byte = 0
    if ss.start_mode == "attach":  # the capture begins inside a frame
        first_byte = byte_in(0)
    zero_i = next(i for i in range(n_frames) if keep[i] and timed[i]
                  and (fr.start[i] >= first_byte or ss.start_mode == "boot")
                  and not (ss.start_mode == "attach" and i == 0))
    zero_a = float(fr.a_t[zero_i])
    flips: list[int] = []
    for dm in ss.damage:
        kind = dm["kind"]
        if kind == "reboot":
            continue
        i = frame_at(dm["a"])
        if kind == "overrun":
            b0 = byte_in(i)
            b1 = b0 + dm["n_bytes"]
            j = int(np.searchsorted(fr.start, b1, side="right") - 1)
            drops.append((b0, b1))
            spans.append({"kind": kind, "a_start": a_from(i), "a_end": float(fr.a_last[j]),
                          "bytes_lost": int(b1 - b0),
                          "_bytes": (int(fr.start[i]), int(fr.start[j] + fr.length[j]))})
        elif kind == "unplug":
            j = frame_at(dm["a"] + dm["gap_s"])
            b0, b1 = byte_in(i), byte_in(j)
            drops.append((b0, b1))
            spans.append({"kind": kind, "a_start": a_from(i), "a_end": float(fr.a_last[j]),
                          "gap_s": round(dm["gap_s"], 3), "bytes_lost": int(b1 - b0),
                          "_bytes": (int(fr.start[i]), int(fr.start[j] + fr.length[j]))})
        else:
            j = frame_at(dm["a"] + dm["burst_s"])
            b0, b1 = int(fr.start[i]), int(fr.start[j] + fr.length[j])
            nbits = (b1 - b0) * 8
            k = max(1, int(rng.binomial(nbits, dm["ber"])))
            flips += [b0 * 8 + int(x) for x in rng.choice(nbits, k, replace=False)]
            spans.append({"kind": kind, "a_start": a_from(i), "a_end": float(fr.a_last[j]),
                          "bits_flipped": k, "_range": (b0, b1), "_bytes": (b0, b1)})
    data = fr.data.copy()
    original = fr.data
    for bit in flips:
        data[bit // 8] ^= np.uint8(1 << (bit % 8))
    # No corrupted frame may pass its CRC by chance: it would put a wrong time
    # into the stream that no truth could describe.
    for sp in spans:
        if "_range" not in sp:
            continue
        b0, b1 = sp.pop("_range")
        while True:
            fixed = False
            seg_start = b0
            for pos in range(b0, b1 + 1):
                if pos == b1 or data[pos] == 0:
                    seg = data[seg_start:pos].tobytes()
                    same = original[seg_start:pos].tobytes() == seg and (
                        pos == b1 or original[pos] == 0) and (seg_start == 0
                                                              or original[seg_start - 1] == 0)
                    if seg and not same and frame_is_valid(seg):
                        data[seg_start + int(rng.integers(len(seg)))] ^= np.uint8(
                            1 << int(rng.integers(1, 8)))
                        fixed = True
                    seg_start = pos + 1
            if not fixed:
                break
    mask = np.ones(len(data), dtype=bool)
    mask[:first_byte] = False
    for gone in np.nonzero(~keep)[0]:
        mask[fr.start[gone]:fr.start[gone] + fr.length[gone]] = False
    for b0, b1 in drops:
        mask[b0:b1] = False
    # Where each damage sits in the bytes written (for tests: outside them all is clean).
    for sp in spans:
        b0, b1 = sp.pop("_bytes")
        sp["bytes"] = [int(np.count_nonzero(mask[:b0])),
                       int(np.count_nonzero(mask[:min(b1, len(data))]))]
    spans.sort(key=lambda sp: sp["a_start"])
    return data[mask].tobytes(), {"zero_a": zero_a, "t_last_a": t_last_a, "damage": spans}


def main(argv: list[str] | None = None) -> int:
    """Command line: write recordings and truth for a range of towers."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--towers", type=int, default=8)
    p.add_argument("--first-seed", type=int, default=1)
    p.add_argument("--duration", type=float, default=120.0)
    p.add_argument("--scenarios", nargs="+", default=list(SCENARIOS), choices=SCENARIOS)
    args = p.parse_args(argv)
    started = time.process_time()
    for seed in range(args.first_seed, args.first_seed + args.towers):
        for scenario in args.scenarios:
            bin_path, _ = make_recording(seed, scenario, args.duration, args.out)
            print(f"{bin_path.name}: {bin_path.stat().st_size / 1e6:.1f} MB", file=sys.stderr)
    print(f"{args.towers * len(args.scenarios)} recordings, "
          f"{time.process_time() - started:.1f} s CPU", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
