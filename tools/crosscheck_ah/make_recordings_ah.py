#!/usr/bin/env python3
"""Cross-check model AH: a maker's tower built from off-the-shelf breakout boards.

Written blind, from contracts.md, design.md and the rule texts only (see README.md
beside this file). Each tower is what a hobbyist solders together from the cheapest
common modules: a piezo disc per level wired into a MAX9814 microphone-amplifier
board (automatic gain control, 40/50/60 dB jumper, attack set by its timing
capacitor, attack:release 1:500/1:2000/1:4000), AC-coupled into the Nano clone's ADC
at mid-scale; one module may be an old MAX4466 board without AGC. Each plate rests on
a cheap bar load cell (100, 200 or 500 g) read by a green or purple HX711 breakout
running at 10 or 80 SPS. The Nano clone's ceramic resonator is a little off.

Usage::

    .venv/bin/python tools/crosscheck_ah/make_recordings_ah.py --out DIR \
        [--towers 16] [--first-seed 1] [--duration 120] \
        [--scenarios single rapid noisy game] [--workers N]

Writes ``{scenario}_t{seed}.bin`` (the device's bytes as they came off the wire) and
``{scenario}_t{seed}.truth.json`` (format ``towerear-crosscheck-truth/1``) for each
tower and scenario. The four scenarios of one seed are the same build; the bytes are
a pure function of (seed, scenario, duration).
"""

from __future__ import annotations

import argparse
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

MODEL = "AH"
FORMAT = "towerear-crosscheck-truth/1"
SCENARIOS = ("single", "rapid", "noisy", "game")
COLOURS = ("yellow", "blue", "brown", "gray", "black", "white")

FS_HZ = 2000  # piezo sample sets per second (device time)
N_CH = 8
ADC_BITS = 10
ADC_FULL = 1 << ADC_BITS
G = 9.81
J_REF = 1e-3  # N s: a 0.6 g cube hitting a plate at about 1 m/s
CUBE_EDGE_M = 0.008
QUIET_S = 4.0  # the first seconds of every recording: an empty, untouched tower
WAVE_LEN = 400  # samples of one strike's ring kept (200 ms, > 4 decay times)
TIMEOUT_S = 0.5  # the firmware counts a load timeout after this long without a reading

TYPE_HELLO, TYPE_PIEZO, TYPE_LOAD, TYPE_STATUS = 0x01, 0x02, 0x03, 0x04


# ---------------------------------------------------------------------------------------
# Wire: CRC-16/CCITT-FALSE and COBS, written from contracts.md section 1
# ---------------------------------------------------------------------------------------


def _crc_table() -> np.ndarray:
    table = np.zeros(256, np.int64)
    for byte in range(256):
        crc = byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
            crc &= 0xFFFF
        table[byte] = crc
    return table


CRC_TABLE = _crc_table()
_CRC_LIST = [int(v) for v in CRC_TABLE]


def crc16_ccitt_false(data: bytes) -> int:
    """CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, no reflection, xorout 0), by table."""
    crc = 0xFFFF
    for byte in data:
        crc = ((crc << 8) & 0xFFFF) ^ _CRC_LIST[((crc >> 8) ^ byte) & 0xFF]
    return crc


def crc16_ccitt_false_reference(data: bytes) -> int:
    """The same CRC without a table: the polynomial 0x1021 = x^16 + x^12 + x^5 + 1 applied
    a byte at a time in closed form (the byte's bits fold into x ^= x >> 4)."""
    crc = 0xFFFF
    for byte in data:
        x = ((crc >> 8) ^ byte) & 0xFF
        x ^= x >> 4
        crc = ((crc << 8) ^ (x << 12) ^ (x << 5) ^ x) & 0xFFFF
    return crc


def crc16_bitwise(data: bytes) -> int:
    """The same CRC bit by bit, as the definition reads (slow; for the tests)."""
    crc = 0xFFFF
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
            crc &= 0xFFFF
    return crc


def crc16_rows(rows: np.ndarray) -> np.ndarray:
    """The CRC of every row of a (messages, bytes) uint8 array, column by column."""
    crc = np.full(rows.shape[0], 0xFFFF, np.int64)
    data = rows.astype(np.int64)
    for col in range(rows.shape[1]):
        crc = ((crc << 8) & 0xFFFF) ^ CRC_TABLE[((crc >> 8) ^ data[:, col]) & 0xFF]
    return crc.astype(np.uint16)


def cobs_encode(data: bytes) -> bytes:
    """COBS-encode one message (no trailing delimiter); any length."""
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


def cobs_decode_own(data: bytes) -> bytes:
    """Decode one COBS frame (without its 0x00); ValueError on a malformed one."""
    out = bytearray()
    i = 0
    while i < len(data):
        code = data[i]
        if code == 0 or i + code > len(data) + (0 if code > 1 else 1):
            raise ValueError("malformed COBS frame")
        block = data[i + 1:i + code]
        if 0 in block:
            raise ValueError("zero inside a COBS block")
        out += block
        i += code
        if code < 0xFF and i < len(data):
            out.append(0)
    return bytes(out)


def cobs_encode_rows(rows: np.ndarray) -> np.ndarray:
    """COBS-encode every row (at most 253 bytes) and append the 0x00: shape (m, n + 2).

    A message of at most 254 bytes has no run of 254 non-zero bytes, so its encoding is
    exactly one code byte in front of the data, each zero replaced by the distance to
    the next zero (or to the end).
    """
    m, n = rows.shape
    if n > 253:
        raise ValueError("rows longer than 253 bytes")
    idx = np.arange(n, dtype=np.int16)
    is_zero = rows == 0
    zero_at = np.where(is_zero, idx, np.int16(n))
    next_zero = np.minimum.accumulate(zero_at[:, ::-1], axis=1)[:, ::-1]  # first zero >= i
    out = np.zeros((m, n + 2), np.uint8)
    out[:, 0] = next_zero[:, 0] + 1
    out[:, 1:n + 1] = rows
    r, c = np.nonzero(is_zero)
    after = np.where(c + 1 < n, next_zero[r, np.minimum(c + 1, n - 1)], n)  # first zero > c
    out[r, c + 1] = after - c
    return out


def frame(msg_type: int, seq: int, payload: bytes) -> bytes:
    """One framed message: COBS(type | seq | body | crc) + 0x00."""
    msg = bytes([msg_type]) + (seq & 0xFFFF).to_bytes(2, "little") + payload
    msg += crc16_ccitt_false(msg).to_bytes(2, "little")
    return cobs_encode(msg) + b"\x00"


# ---------------------------------------------------------------------------------------
# The build: one tower per seed
# ---------------------------------------------------------------------------------------


@dataclass
class Tower:
    """Every figure of one maker's tower (arrays are per level 0..7)."""

    seed: int
    device_id: bytes
    fw: tuple[int, int, int]
    sets_per_msg: int
    clock_ppm: float
    vcc: float
    adc_prescaler: int
    adc_skew_s: float
    adc_noise_lsb: float
    mux_eps: float
    boot_us: int
    cpu_load_pct: int
    # piezo discs and their amplifier modules
    front: str
    f_front_hz: np.ndarray
    module: list[str]
    gain_db: np.ndarray
    cct_nf: np.ndarray
    ar_ratio: np.ndarray
    t_attack_s: np.ndarray
    t_release_s: np.ndarray
    vth: np.ndarray
    out_bias: np.ndarray
    clip_lo: np.ndarray
    clip_hi: np.ndarray
    noise_in_v: np.ndarray
    noise_out_v: np.ndarray
    t_on_s: np.ndarray
    sens: np.ndarray
    mode_f: np.ndarray
    mode_q: np.ndarray
    mode_w: np.ndarray
    contact_s: float
    couple: np.ndarray
    couple_table: np.ndarray
    thump_f: float
    thump_q: float
    air_gain: np.ndarray
    ac_fc_hz: np.ndarray
    bias_frac: np.ndarray
    mains_hz: float
    hum_in_v: np.ndarray
    hum_out_v: np.ndarray
    # load cells and HX711 boards
    load_mode: str
    load_rate_hz: int
    sps: np.ndarray
    board: list[str]
    osc_dev: np.ndarray
    noise_counts: np.ndarray
    capacity_g: np.ndarray
    rated_mv_v: np.ndarray
    orient: np.ndarray
    cpg: np.ndarray
    tare_g: np.ndarray
    zero_counts: np.ndarray
    wire_m: np.ndarray
    hum_counts_per_m: float
    creep_frac: np.ndarray
    creep_tau_s: np.ndarray
    warm_g: np.ndarray
    warm_tau_s: np.ndarray
    walk_g: np.ndarray
    plate_f_hz: np.ndarray
    plate_zeta: np.ndarray
    couple_load: float
    glitch_rate: float
    cells: str
    # the cardboard and the cubes
    module_h_m: float
    p_stop: np.ndarray
    p_hitfall: np.ndarray
    p_edge: float
    restitution: float
    cube_mass_g: float
    cube_mass_sd: float
    p_knock: float
    variants: list[str] = field(default_factory=list)

    @property
    def offset(self) -> np.ndarray:
        """Counts of each empty plate right after boot (before any warm-up drift)."""
        return self.zero_counts + self.cpg * self.tare_g

    @property
    def load_noise_g(self) -> np.ndarray:
        """Each channel's white reading noise in grams (rms)."""
        return self.noise_counts / np.abs(self.cpg)

    @property
    def agc(self) -> np.ndarray:
        """Which levels' modules have automatic gain control."""
        return np.array([m == "max9814" for m in self.module])

    def front_gain(self, level: int, f_hz: np.ndarray) -> np.ndarray:
        """|H| of the disc's loading high-pass at ``f_hz``."""
        r = np.asarray(f_hz, float) / self.f_front_hz[level]
        return np.asarray(r / np.sqrt(1.0 + r * r))

    def disc_scale(self, f_hz: float) -> np.ndarray:
        """Each level's disc and loading against a nominal one (25 V/(N s), corner 3 kHz)
        at ``f_hz``: how sliding, scraping and speech reach each amplifier input."""
        r = f_hz / 3000.0
        nominal = r / math.sqrt(1.0 + r * r)
        gains = np.array([self.front_gain(k, np.array([f_hz]))[0] for k in range(N_CH)])
        return np.asarray(self.sens / 25.0 * gains / nominal)

    def contact_gain(self, f_hz: np.ndarray, contact_s: float) -> np.ndarray:
        """The low-pass of a finite contact time (a soft impact rings the high modes less)."""
        x = math.pi * np.asarray(f_hz, float) * contact_s
        return np.asarray(1.0 / (1.0 + x * x))

    def input_peak_v(self, level: int, j: float) -> float:
        """Envelope peak at the amplifier input of a plate strike ``j`` on its own level,
        with the plate's nominal mode weights (what a strike with ``shape`` = ones gives)."""
        f = self.mode_f[level]
        amp = (j * self.sens[level] * self.mode_w[level] * self.front_gain(level, f)
               * self.contact_gain(f, self.contact_s))
        return float(np.abs(amp).sum())

    def figures(self) -> dict[str, Any]:
        """The build as JSON (the truth file's ``tower``)."""
        def r(a: Any, nd: int = 5) -> Any:
            if isinstance(a, np.ndarray):
                return np.round(a.astype(float), nd).tolist()
            if isinstance(a, float):
                return round(a, nd)
            return a

        return {
            "device_id": self.device_id.hex(), "fw": list(self.fw),
            "sets_per_msg": self.sets_per_msg, "clock_ppm": r(self.clock_ppm, 1),
            "vcc_v": r(self.vcc, 3), "adc_prescaler": self.adc_prescaler,
            "adc_noise_lsb": r(self.adc_noise_lsb, 3), "mux_crosstalk": r(self.mux_eps),
            "front_end": self.front, "f_front_hz": r(self.f_front_hz, 1),
            "modules": self.module, "gain_db": r(self.gain_db, 2), "cct_nf": r(self.cct_nf, 0),
            "attack_release": r(self.ar_ratio, 0), "t_attack_ms": r(self.t_attack_s * 1e3, 3),
            "t_release_s": r(self.t_release_s, 3), "vth_v": r(self.vth, 3),
            "noise_in_uv": r(self.noise_in_v * 1e6, 2), "sens_v_per_ns": r(self.sens, 2),
            "mode_f_hz": r(self.mode_f, 1), "mode_q": r(self.mode_q, 1),
            "ac_fc_hz": r(self.ac_fc_hz, 2), "bias_code": r(self.bias_frac * ADC_FULL, 1),
            "mains_hz": r(self.mains_hz, 4), "load_mode": self.load_mode,
            "load_rate_hz": self.load_rate_hz, "hx711_sps": r(self.sps, 0),
            "hx711_board": self.board, "hx711_osc_dev": r(self.osc_dev),
            "noise_counts": r(self.noise_counts, 1), "capacity_g": r(self.capacity_g, 0),
            "rated_mv_v": r(self.rated_mv_v, 3), "counts_per_g": r(self.cpg, 1),
            "tare_g": r(self.tare_g, 2), "offset_counts": r(self.offset, 0),
            "wire_m": r(self.wire_m, 2), "creep_frac": r(self.creep_frac),
            "warm_g": r(self.warm_g, 4), "plate_f_hz": r(self.plate_f_hz, 1),
            "glitch_rate": r(self.glitch_rate, 6), "cells": self.cells,
            "module_h_m": r(self.module_h_m, 4), "p_stop": r(self.p_stop, 3),
            "p_hitfall": r(self.p_hitfall, 3), "restitution": r(self.restitution, 3),
            "cube_mass_g": r(self.cube_mass_g, 4), "p_knock": r(self.p_knock, 4),
            "variants": self.variants,
        }


def _pick(rng: np.random.Generator, options: list[Any], weights: list[float]) -> Any:
    w = np.asarray(weights, float)
    return options[int(rng.choice(len(options), p=w / w.sum()))]


def make_tower(seed: int) -> Tower:
    """Draw one maker's build from ``seed`` (every figure and its range: README.md)."""
    rng = np.random.default_rng([seed, 0xA4])
    variants: list[str] = []
    levels = np.arange(N_CH)

    # -- the Nano clone and its firmware ------------------------------------------------
    device_id = bytes(rng.integers(0, 256, 8, dtype=np.uint8).tolist())
    sets_per_msg = int(_pick(rng, [4, 8, 10, 14], [1, 2, 3, 2]))
    fw = (1, {4: 0, 8: 1, 10: 2, 14: 3}[sets_per_msg], int(rng.integers(0, 4)))
    clock_ppm = float(np.clip(rng.normal(0.0, 1800.0), -5000.0, 5000.0))
    vcc = float(rng.uniform(4.55, 4.95))  # USB 5 V through the clone's Schottky diode
    prescaler = int(_pick(rng, [16, 32, 64], [1, 2, 1]))
    adc_skew_s = 13.0 * prescaler / 16e6
    adc_noise = float(rng.uniform(0.35, 0.7) + (0.3 if prescaler == 16 else 0.0))
    mux_eps = float(rng.uniform(0.002, 0.012))
    boot_us = 4 * int(rng.integers(20_000, 100_000))
    cpu_load = int(rng.integers(38, 66))

    # -- piezo discs, the maker's wiring, the amplifier modules -------------------------
    front = _pick(rng, ["stock", "bias_removed"], [0.7, 0.3])
    c_disc = rng.uniform(15e-9, 32e-9, N_CH)
    if front == "stock":  # the board's 2.2 kOhm MICBIAS resistor loads the disc
        f_front = 1.0 / (2 * math.pi * 2.2e3 * c_disc)
    else:  # the maker lifted the bias resistor: the disc sees the 100 kOhm input
        f_front = 1.0 / (2 * math.pi * 100e3 * c_disc)
        variants.append("bias_removed")
    default_gain = float(_pick(rng, [40.0, 50.0, 60.0],
                               [0.25, 0.35, 0.4] if front == "stock" else [0.8, 0.2, 0.0]))
    gain_db = np.full(N_CH, default_gain)
    for lv in range(N_CH):
        if rng.random() < 0.15:  # a swapped module with its jumper set otherwise
            gain_db[lv] = float(rng.choice([g for g in (40.0, 50.0, 60.0) if g != default_gain]))
            variants.append(f"gain_{int(gain_db[lv])}db_L{lv}")
    batch = _pick(rng, ["adafruit", "clone"], [0.4, 0.6])
    cct = np.full(N_CH, 100.0 if batch == "adafruit" else 470.0)
    ar = float(_pick(rng, [500.0, 2000.0, 4000.0], [0.25, 0.25, 0.5]))
    ar_ratio = np.full(N_CH, ar)
    vth_batch = rng.uniform(0.6, 1.0)
    vth = vth_batch * rng.uniform(0.92, 1.08, N_CH)
    module = ["max9814"] * N_CH
    if rng.random() < 0.25:
        lv = int(rng.integers(0, N_CH))
        cct[lv] = 570.0 - cct[lv]  # one board from the other batch
        vth[lv] *= rng.choice([0.6, 1.3])
        variants.append(f"other_batch_L{lv}")
    if rng.random() < 0.35:
        lv = int(rng.integers(0, N_CH))
        module[lv] = "max4466"  # an old board without AGC, its trimmer turned by hand
        gain_db[lv] = 20 * math.log10(rng.uniform(25.0, 125.0))
        variants = [v for v in variants if not (v.startswith("gain_") and v.endswith(f"_L{lv}"))]
        variants.append(f"no_agc_L{lv}")
    t_attack = 2400.0 * cct * 1e-9
    t_release = ar_ratio * t_attack
    out_bias = rng.uniform(1.22, 1.28, N_CH)
    rail = vcc - 0.02  # the modules run from the Nano's 5 V pin
    clip_lo = 0.04 - out_bias
    clip_hi = rail - 0.15 - out_bias
    noise_in = 30e-9 * math.sqrt(20e3) * rng.uniform(0.9, 1.6, N_CH)
    noise_out = rng.uniform(0.1e-3, 0.4e-3, N_CH)
    for lv in range(N_CH):
        if module[lv] == "max4466":
            out_bias[lv] = vcc / 2
            clip_lo[lv] = 0.03 - vcc / 2
            clip_hi[lv] = vcc / 2 - 0.03
            noise_in[lv] *= 1.4
    t_on = rng.uniform(0.005, 0.03, N_CH)
    sens = 25.0 * np.exp(rng.normal(0.0, 0.3, N_CH))  # V per N s, glue and disc

    f1 = rng.uniform(170.0, 420.0, N_CH)
    ratios = np.stack([np.ones(N_CH), rng.uniform(1.8, 2.5, N_CH), rng.uniform(3.4, 4.6, N_CH),
                       rng.uniform(5.8, 8.5, N_CH)], axis=1)
    mode_f = f1[:, None] * ratios
    mode_q = rng.uniform(8.0, 25.0, (N_CH, 4))
    mode_w = np.array([1.0, 0.7, 0.5, 0.35])[None, :] * rng.uniform(0.6, 1.4, (N_CH, 4))
    mode_w /= mode_w.sum(axis=1, keepdims=True)
    contact_s = float(rng.uniform(0.25e-3, 0.5e-3))
    near = rng.uniform(0.12, 0.35)
    decay = rng.uniform(0.2, 0.4)
    dist = np.abs(levels[:, None] - levels[None, :])
    couple = np.where(dist == 0, 1.0, near * decay ** np.maximum(dist - 1, 0))
    couple *= np.where(dist == 0, 1.0, rng.uniform(0.7, 1.3, (N_CH, N_CH)))
    couple_table = rng.uniform(0.7, 1.0) * rng.uniform(0.72, 0.85) ** levels
    thump_f = float(rng.uniform(45.0, 120.0))
    thump_q = float(rng.uniform(3.0, 6.0))
    air_gain = rng.uniform(0.5, 1.5, N_CH)

    # the maker's AC coupling into the ADC: a capacitor and a divider from the 5 V rail
    r_div, c_ac = _pick(rng, [(100e3, 1e-6), (10e3, 10e-6), (47e3, 0.47e-6), (100e3, 10e-6)],
                        [0.4, 0.25, 0.2, 0.15])
    ac_fc = 1.0 / (2 * math.pi * (r_div / 2) * c_ac) * rng.uniform(0.9, 1.1, N_CH)
    tol = 0.05 if rng.random() < 0.6 else 0.01
    r1 = r_div * (1 + rng.uniform(-tol, tol, N_CH))
    r2 = r_div * (1 + rng.uniform(-tol, tol, N_CH))
    bias_frac = r2 / (r1 + r2)
    mains = float(_pick(rng, [50.0, 60.0], [0.85, 0.15])) * (1 + rng.uniform(-4e-4, 4e-4))
    mains_hz = mains / (1 + clock_ppm * 1e-6)  # as the device's clock counts it
    hum_in = rng.uniform(0.3e-6, 1.5e-6, N_CH)
    hum_out = rng.uniform(0.1e-3, 0.6e-3, N_CH)

    # -- HX711 boards and bar load cells -------------------------------------------------
    load_mode = _pick(rng, ["all80", "all10", "mixed"], [0.45, 0.3, 0.25])
    sps = np.full(N_CH, 10.0 if load_mode == "all10" else 80.0)
    if load_mode == "mixed":
        for lv in rng.choice(N_CH, int(rng.integers(1, 4)), replace=False):
            sps[int(lv)] = 10.0
    load_rate = 10 if load_mode == "all10" else 80
    board = [("green" if rng.random() < 0.6 else "purple") for _ in range(N_CH)]
    osc_dev = np.clip(rng.normal(0.0, 0.03, N_CH), -0.07, 0.07)
    datasheet_nv = np.where(sps == 10.0, 50.0, 90.0)
    noise_factor = np.array([rng.uniform(1.2, 2.5) if b == "green" else rng.uniform(1.0, 1.6)
                             for b in board])
    avdd = np.array([4.3 if b == "green" else 4.9 for b in board])
    nv_per_count = avdd / 2**31 * 1e9
    noise_counts = datasheet_nv * noise_factor / nv_per_count
    kind = _pick(rng, [100.0, 200.0, 500.0], [0.55, 0.25, 0.2])
    capacity = np.full(N_CH, kind)
    cells = "matched"
    if rng.random() < 0.35:
        other = float(rng.choice([c for c in (100.0, 200.0, 500.0) if c != kind]))
        for lv in rng.choice(N_CH, int(rng.integers(1, 4)), replace=False):
            capacity[int(lv)] = other
        cells = "mixed"
    rated = np.where(capacity == 100.0, rng.uniform(0.5, 0.8, N_CH), rng.uniform(0.85, 1.15, N_CH))
    orient = np.where(rng.random() < 0.5, 1.0, -1.0) * np.ones(N_CH)
    for lv in range(N_CH):
        if rng.random() < 0.12:
            orient[lv] = -orient[lv]
            variants.append(f"cell_flipped_L{lv}")
    cpg = orient * rated * 1e-3 * 2**31 / capacity
    tare = rng.uniform(6.0, 20.0, N_CH)
    zero = rng.uniform(-0.02, 0.02, N_CH) * capacity * np.abs(cpg)
    wire = rng.uniform(0.05, 0.6, N_CH)
    hum_per_m = float(rng.uniform(200.0, 1500.0))
    creep_frac = rng.uniform(0.002, 0.008, N_CH)
    creep_tau = rng.uniform(20.0, 150.0, N_CH)
    warm = rng.uniform(-1.0, 1.0, N_CH) * rng.uniform(0.01, 0.06, N_CH) * capacity / 100.0
    warm_tau = rng.uniform(300.0, 1200.0, N_CH)
    walk = rng.uniform(0.3e-3, 1.2e-3, N_CH) * capacity / 100.0
    plate_f = rng.uniform(35.0, 90.0, N_CH)
    plate_zeta = rng.uniform(0.04, 0.2, N_CH)
    couple_load = float(rng.uniform(0.02, 0.08))
    glitch = float(rng.uniform(1e-5, 5e-5)) if rng.random() < 0.5 else 0.0
    if glitch:
        variants.append("hx711_glitches")
    if load_mode != "all80":
        variants.append(load_mode)
    if cells == "mixed":
        variants.append("mixed_cells")

    # -- cardboard and cubes ---------------------------------------------------------------
    module_h = float(rng.uniform(0.028, 0.033))
    p_stop = np.concatenate([[1.0], rng.uniform(0.28, 0.45, 7)])
    p_hitfall = np.concatenate([[0.0], rng.uniform(0.1, 0.25, 7)])
    p_edge = float(rng.uniform(0.35, 0.65))
    restitution = float(rng.uniform(0.25, 0.45))
    cube_mass = float(rng.uniform(0.35, 0.75))
    cube_sd = float(rng.uniform(0.02, 0.05))
    p_knock = float(rng.uniform(0.012, 0.03))

    return Tower(
        seed=seed, device_id=device_id, fw=fw, sets_per_msg=sets_per_msg, clock_ppm=clock_ppm,
        vcc=vcc, adc_prescaler=prescaler, adc_skew_s=adc_skew_s, adc_noise_lsb=adc_noise,
        mux_eps=mux_eps, boot_us=boot_us, cpu_load_pct=cpu_load, front=front,
        f_front_hz=f_front, module=module, gain_db=gain_db, cct_nf=cct, ar_ratio=ar_ratio,
        t_attack_s=t_attack, t_release_s=t_release, vth=vth, out_bias=out_bias,
        clip_lo=clip_lo, clip_hi=clip_hi, noise_in_v=noise_in, noise_out_v=noise_out,
        t_on_s=t_on, sens=sens, mode_f=mode_f, mode_q=mode_q, mode_w=mode_w,
        contact_s=contact_s, couple=couple, couple_table=couple_table, thump_f=thump_f,
        thump_q=thump_q, air_gain=air_gain, ac_fc_hz=ac_fc, bias_frac=bias_frac,
        mains_hz=mains_hz, hum_in_v=hum_in, hum_out_v=hum_out, load_mode=load_mode,
        load_rate_hz=load_rate, sps=sps, board=board, osc_dev=osc_dev,
        noise_counts=noise_counts, capacity_g=capacity, rated_mv_v=rated, orient=orient,
        cpg=cpg, tare_g=tare, zero_counts=zero, wire_m=wire, hum_counts_per_m=hum_per_m,
        creep_frac=creep_frac, creep_tau_s=creep_tau, warm_g=warm, warm_tau_s=warm_tau,
        walk_g=walk, plate_f_hz=plate_f, plate_zeta=plate_zeta, couple_load=couple_load,
        glitch_rate=glitch, cells=cells, module_h_m=module_h, p_stop=p_stop,
        p_hitfall=p_hitfall, p_edge=p_edge, restitution=restitution, cube_mass_g=cube_mass,
        cube_mass_sd=cube_sd, p_knock=p_knock, variants=variants,
    )


# ---------------------------------------------------------------------------------------
# The scene: what happens to the tower, in stream seconds
# ---------------------------------------------------------------------------------------


@dataclass
class Strike:
    """An impact on a plate (``level`` 0..7) or on the table (-1); ``j`` in N s."""

    t: float
    level: int
    j: float
    kind: str
    shape: np.ndarray | None = None


@dataclass
class Cube:
    """One wooden cube."""

    fid: int
    colour: str
    mass_g: float


def _fall(t: float, v: float, h: float) -> tuple[float, float]:
    """Time and speed after falling ``h`` metres from speed ``v`` (down)."""
    v1 = math.sqrt(v * v + 2 * G * h)
    return t + (v1 - v) / G, v1


CONTACT_BY_KIND = {"plate": 1.0, "bounce": 1.0, "edge": 0.45, "touch": 4.0, "pluck": 2.0,
                   "clack": 2.5, "thump": 7.0, "table": 8.0}


class Scene:
    """Everything that happens to one tower in one recording.

    ``strikes`` (impacts heard by the discs and felt by the cells), ``weights``
    (time, level, grams: what each plate carries from then on), ``rubs`` (sliding and
    scraping noise), ``presses`` (a finger on a plate), ``wobbles`` (hands on the
    walls), ``shakes`` (the whole tower jolted), ``open_spans`` (modules lifted), and
    the truth lists.
    """

    def __init__(self, tw: Tower, duration: float, rng: np.random.Generator,
                 scenario: str) -> None:
        self.tw, self.duration, self.rng, self.scenario = tw, float(duration), rng, scenario
        self.seed = tw.seed
        self.strikes: list[Strike] = []
        self.weights: list[tuple[float, int, float]] = []
        self.rubs: list[tuple[float, float, int, float]] = []
        self.presses: list[tuple[float, float, int, float]] = []
        self.wobbles: list[tuple[float, float, float]] = []
        self.shakes: list[tuple[float, float, float, float]] = []
        self.open_spans: list[tuple[float, float, int]] = []
        self.tower: list[list[Cube]] = [[] for _ in range(N_CH)]
        self.landings: list[dict[str, Any]] = []
        self.knockdowns: list[dict[str, Any]] = []
        self.removals: list[dict[str, Any]] = []
        self.lifts: list[dict[str, Any]] = []
        self.closes: list[dict[str, Any]] = []
        self.knocks: list[dict[str, Any]] = []
        self.talk: list[dict[str, Any]] = []
        self.fallouts: list[dict[str, Any]] = []
        self.game: dict[str, Any] | None = None
        self.hum_factor = 1.0
        self.noise_seed = int(rng.integers(0, 2**62))
        self._fid = 0
        self._open: tuple[float, int] | None = None

    # -- primitives ---------------------------------------------------------------------

    def hit(self, t: float, level: int, j: float, kind: str = "plate",
            shape: np.ndarray | None = None) -> None:
        """An impact of ``j`` N s on ``level`` (-1: the table) at ``t``."""
        self.strikes.append(Strike(float(t), int(level), float(j), kind, shape))

    def rub(self, t0: float, t1: float, level: int, amp_v: float) -> None:
        """Sliding or scraping noise on ``level`` (-1: hands on every level), input volts rms."""
        self.rubs.append((float(t0), float(t1), int(level), float(amp_v)))

    def new_cube(self, colour: str) -> Cube:
        self._fid += 1
        mass = self.tw.cube_mass_g * (1 + self.tw.cube_mass_sd * float(self.rng.normal()))
        return Cube(self._fid, colour, float(mass))

    # -- a cube through the tower ---------------------------------------------------------

    def throw(self, t_release: float, colour: str, kind: str = "throw",
              cube: Cube | None = None) -> dict[str, Any]:
        """A cube let go above the top at ``t_release``; returns its landing."""
        cube = cube if cube is not None else self.new_cube(colour)
        h = self.tw.module_h_m + float(self.rng.uniform(0.01, 0.08))
        t, v = _fall(t_release, 0.0, h)
        return self._descend(cube, t, v, N_CH - 1, t_release, kind, None)

    def _descend(self, cube: Cube, t: float, v: float, level: int, t_release: float,
                 kind: str, knocked_from: int | None) -> dict[str, Any]:
        tw, rng = self.tw, self.rng
        m = cube.mass_g * 1e-3
        drop = tw.module_h_m - CUBE_EDGE_M
        impacts: list[list[Any]] = []
        knock: tuple[Cube, int, float] | None = None
        t_on = t
        while True:
            u = float(rng.random())
            ps, ph = float(tw.p_stop[level]), float(tw.p_hitfall[level])
            if level == 0 or u < ps:
                outcome = "stay"
            elif u < ps + ph:
                outcome = "fall_on"
            elif u < ps + ph + (1 - ps - ph) * tw.p_edge:
                outcome = "edge"
            else:
                outcome = "clean"
            if outcome == "clean":
                t, v = _fall(t, v, drop)
                level -= 1
                continue
            if outcome == "edge":
                j = m * v * float(rng.uniform(0.1, 0.4))
                impacts.append([t, level, j, "edge"])
                self.hit(t, level, j, "edge")
                v *= float(rng.uniform(0.55, 0.9))
                t, v = _fall(t, v, drop)
                level -= 1
                continue
            e = tw.restitution * float(rng.uniform(0.8, 1.2))
            j = m * v * (1 + e)
            impacts.append([t, level, j, "plate"])
            self.hit(t, level, j, "plate")
            if knocked_from is None and knock is None and level > 0 and self.tower[level]:
                crowd = math.sqrt(min(len(self.tower[level]), 4))
                p = tw.p_knock * crowd * min(max(j / J_REF, 0.3), 1.5)
                if rng.random() < p:
                    resting = self.tower[level]
                    struck = resting.pop(int(rng.integers(len(resting))))
                    t_kd = t + float(rng.uniform(0.005, 0.03))
                    self.weights.append((t_kd, level, -struck.mass_g))
                    knock = (struck, level, t_kd)
                    if outcome == "stay" and rng.random() < 0.45:
                        outcome = "fall_on"  # both fall on
            vb, tb = e * v, t
            for _ in range(3):
                if vb < 0.06:
                    break
                tb += 2 * vb / G
                eb = tw.restitution * float(rng.uniform(0.8, 1.2))
                jb = m * vb * (1 + eb)
                impacts.append([tb, level, jb, "bounce"])
                self.hit(tb, level, jb, "bounce")
                if outcome == "fall_on" and rng.random() < 0.5:
                    break  # bounced into the hole
                vb *= eb
            if outcome == "fall_on":
                slide = float(rng.uniform(0.02, 0.15))
                self.rub(tb, tb + slide, level, float(rng.uniform(0.01e-3, 0.06e-3)))
                t, v = _fall(tb + slide, float(rng.uniform(0.05, 0.3)), drop)
                level -= 1
                continue
            slide = float(rng.uniform(0.03, 0.25))
            self.rub(tb, tb + slide, level, float(rng.uniform(0.01e-3, 0.06e-3)))
            t_on, t = tb, tb + slide
            self.weights.append((t_on, level, cube.mass_g))
            self.tower[level].append(cube)
            break
        landing: dict[str, Any] = {
            "t": t, "floor": level, "cubes": 1, "knocked": knocked_from is not None,
            "t_release": t_release,
            "t_first_impact": impacts[0][0] if knocked_from is None else t_release,
            "t_on_plate": t_on, "mass_g": cube.mass_g, "colour": cube.colour, "kind": kind,
            "fid": cube.fid, "impacts": impacts,
        }
        if knocked_from is not None:
            landing["knocked_from"] = knocked_from
        self.landings.append(landing)
        if knock is not None:
            struck, lv, t_kd = knock
            t1, v1 = _fall(t_kd, float(rng.uniform(0.1, 0.35)), drop)
            fallen = self._descend(struck, t1, v1, lv - 1, t_kd, "knocked", lv)
            landing["caused_knockdown"] = True
            self.knockdowns.append({"t": t_kd, "floor_from": lv, "floor_to": fallen["floor"],
                                    "fid": struck.fid, "by_fid": cube.fid})
        return landing

    # -- hands ------------------------------------------------------------------------------

    def remove(self, t_touch: float, t: float, level: int, cubes: list[Cube]) -> None:
        """Fingers on the open ``level`` from ``t_touch``; the cubes leave it at ``t``."""
        rng = self.rng
        for c in cubes:
            self.tower[level].remove(c)
        mass = sum(c.mass_g for c in cubes)
        self.weights.append((t, level, -mass))
        self.presses.append((t_touch, t, level, float(rng.uniform(2.0, 12.0))))
        self.hit(t_touch, level, float(rng.uniform(0.05, 0.2)) * J_REF, "touch")
        self.hit(t, level, float(rng.uniform(0.03, 0.1)) * J_REF, "pluck")
        self.rub(t_touch, t + 0.05, level, float(rng.uniform(0.1e-3, 0.5e-3)))
        self.removals.append({"t": t, "floor": level, "cubes": len(cubes), "mass_g": mass,
                              "t_touch": t_touch, "colours": [c.colour for c in cubes]})

    def lift(self, t: float, exposed: int) -> None:
        """Modules ``exposed``..7 lifted together at ``t``."""
        rng = self.rng
        grab = float(rng.uniform(0.4, 1.0))
        self.lifts.append({"t": t, "exposed": exposed})
        self.rub(t - grab, t + 0.3, -1, float(rng.uniform(0.2e-3, 1.2e-3)))
        self.wobbles.append((t - grab, t + 0.4, float(rng.uniform(0.02, 0.12))))
        self.hit(t, min(exposed + 1, N_CH - 1), float(rng.uniform(0.3, 1.5)) * J_REF, "clack")
        self._open = (t, exposed)

    def close(self, t: float) -> None:
        """The lifted modules set back down at ``t``."""
        if self._open is None:
            raise RuntimeError("close without a lift")
        rng = self.rng
        t_lift, exposed = self._open
        self._open = None
        self.open_spans.append((t_lift, t, exposed))
        self.closes.append({"t": t})
        self.hit(t, exposed, float(rng.uniform(2.0, 6.0)) * J_REF, "thump")
        self.shakes.append((t, float(rng.uniform(0.5, 2.0)), float(rng.uniform(15.0, 40.0)),
                            float(rng.uniform(0.02, 0.06))))
        self.rub(t - 0.5, t + float(rng.uniform(0.2, 0.5)), -1, float(rng.uniform(0.2e-3, 1e-3)))
        self.wobbles.append((t - 0.5, t + 0.4, float(rng.uniform(0.02, 0.12))))


def table_knock(sc: Scene, t: float, *, double: bool | None = None) -> None:
    """A knuckle on the table beside the tower at ``t`` (sometimes knock-knock)."""
    rng = sc.rng
    times = [t]
    if double if double is not None else rng.random() < 0.35:
        times.append(t + float(rng.uniform(0.15, 0.3)))
    for tk in times:
        j = float(rng.uniform(5.0, 20.0)) * J_REF
        sc.hit(tk, -1, j, "table")
        sc.shakes.append((tk, float(rng.uniform(2.0, 8.0)) * j / 1e-2,
                          float(rng.uniform(15.0, 40.0)), float(rng.uniform(0.02, 0.06))))
    sc.knocks.append({"t": t, "t_end": times[-1] + 0.12, "kind": "table"})


def add_talk(sc: Scene, t0: float, t1: float, level_v: float) -> None:
    """People talking at the table: airborne speech on every disc, input volts rms."""
    sc.talk.append({"t": t0, "t_end": t1, "level_v": level_v})


# ---------------------------------------------------------------------------------------
# Scenarios
# ---------------------------------------------------------------------------------------


def _colours(sc: Scene) -> list[str]:
    rng = sc.rng
    return [str(c) for c in rng.choice(COLOURS, int(rng.integers(3, 6)), replace=False)]


def _script_single(sc: Scene) -> None:
    rng, players = sc.rng, _colours(sc)
    t = float(rng.uniform(4.5, 6.5))
    while t < sc.duration - 3.0:
        sc.throw(t, players[int(rng.integers(len(players)))])
        t += float(rng.uniform(4.5, 9.0))


def _script_rapid(sc: Scene) -> None:
    rng, players = sc.rng, _colours(sc)
    t = float(rng.uniform(4.5, 5.5))
    while t < sc.duration - 3.0:
        for _ in range(int(rng.integers(3, 9))):
            if t >= sc.duration - 3.0:
                break
            sc.throw(t, players[int(rng.integers(len(players)))])
            t += float(rng.uniform(0.45, 1.6))
        t += float(rng.uniform(2.0, 5.0))


def _script_noisy(sc: Scene) -> None:
    rng, players = sc.rng, _colours(sc)
    sc.hum_factor = float(rng.uniform(3.0, 10.0))
    t = float(rng.uniform(4.5, 6.0))
    while t < sc.duration - 3.0:
        sc.throw(t, players[int(rng.integers(len(players)))])
        t += float(rng.uniform(3.5, 8.0))
    tk = float(rng.uniform(5.0, 9.0))
    while tk < sc.duration - 1.5:
        table_knock(sc, tk)
        tk += float(rng.uniform(6.0, 14.0))
    tt = float(rng.uniform(0.5, 3.0))
    while tt < sc.duration:
        t_end = min(tt + float(rng.uniform(0.8, 4.0)), sc.duration)
        add_talk(sc, tt, t_end, float(np.exp(rng.uniform(math.log(2e-6), math.log(30e-6)))))
        tt = t_end + float(rng.uniform(0.5, 5.0))


def _script_game(sc: Scene) -> None:
    """Mord im Arosa as the rulebook has it: prologue, Act I, Act II."""
    rng = sc.rng
    players = _colours(sc)
    supply = {p: 20 for p in players}
    sheet = {p: [0] * N_CH for p in players}
    crime_scenes: list[int] = []
    turns: list[dict[str, Any]] = []
    end = sc.duration - 3.0
    t = float(rng.uniform(4.5, 6.0))
    phase = "prologue"

    def over() -> bool:
        return any(sum(v) >= 10 for v in sheet.values()) or any(n <= 0 for n in supply.values())

    for _ in range(2):
        if t < end:
            sc.throw(t, "red", "victim")
        t += float(rng.uniform(2.2, 4.0))
    for p in players:
        for _ in range(2):
            if t < end:
                supply[p] -= 1
                sc.throw(t, p, "prologue")
            t += float(rng.uniform(2.2, 4.0))
    phase = "act1"
    turn = 0
    victims_found = 0
    while not over():
        inv = players[turn]
        t += float(rng.uniform(2.0, 4.0))
        if t + 7.0 > end:
            break
        counts = np.array([len(c) for c in sc.tower], float)
        victim_floors = [lv for lv in range(N_CH) if any(c.colour == "red" for c in sc.tower[lv])]
        action, suspects = "inspect", []
        if phase == "act1" and victim_floors and rng.random() < 0.45:
            floor = int(rng.choice(victim_floors))
        elif phase == "act2" and any(sheet[inv]) and rng.random() < 0.35:
            action = "cover"
            own = np.array([sum(c.colour == inv for c in sc.tower[lv]) for lv in range(N_CH)],
                           float)
            floor = int(rng.choice(N_CH, p=(own + 0.3) / (own + 0.3).sum()))
        else:
            if phase == "act2":
                action = "suspect"
                others = [p for p in players if p != inv]
                suspects = [str(s) for s in rng.choice(others, int(rng.integers(1, 3)),
                                                       replace=False)]
            floor = int(rng.choice(N_CH, p=(counts + 0.5) / (counts + 0.5).sum()))
        t_lift = t
        sc.lift(t_lift, floor)
        in_hand: list[Cube] = []
        for lv in range(floor + 1, N_CH):
            for c in list(sc.tower[lv]):
                if rng.random() < 0.015:  # it slips out of the lifted modules onto the table
                    t_fo = t_lift + float(rng.uniform(0.1, 0.6))
                    sc.tower[lv].remove(c)
                    sc.weights.append((t_fo, lv, -c.mass_g))
                    sc.hit(t_fo, -1, c.mass_g * 1e-3 * 1.8, "table")
                    sc.fallouts.append({"t": t_fo, "floor_from": lv, "fid": c.fid,
                                        "colour": c.colour})
                    in_hand.append(c)
        t += float(rng.uniform(1.5, 3.0))  # looking in, naming colours
        on_floor = list(sc.tower[floor])
        victims = [c for c in on_floor if c.colour == "red"]
        clues = [c for c in on_floor if c.colour != "red"]
        mine = {p: sum(c.colour == p for c in clues) for p in players}
        penalties = 0
        if action == "inspect":
            if victims:
                if floor not in crime_scenes:
                    crime_scenes.append(floor)
                victims_found += len(victims)
                for p in players:
                    if p != inv and mine[p]:
                        k = min(mine[p], supply[p])
                        supply[p] -= k
                        sheet[p][floor] += k
            else:
                penalties = 1
        elif action == "suspect":
            if floor == 0 and mine[inv] == 0:
                penalties = len(suspects)
            else:
                for s in suspects:
                    if mine[s]:
                        k = min(mine[s], supply[s])
                        supply[s] -= k
                        sheet[s][floor] += k
                    else:
                        penalties += 1
        else:
            k = min(mine[inv], sheet[inv][floor])
            sheet[inv][floor] -= k
            supply[inv] += k
            if mine[inv] == 0:
                penalties = 1
        if on_floor:
            groups = [on_floor] if len(on_floor) <= 3 or rng.random() < 0.4 else \
                [on_floor[:len(on_floor) // 2], on_floor[len(on_floor) // 2:]]
            for group in groups:
                t_touch = t
                t_rem = t + float(rng.uniform(0.25, 0.5))
                sc.remove(t_touch, t_rem, floor, group)
                t = t_rem + float(rng.uniform(1.2, 2.0))
        in_hand = clues + in_hand
        t += float(rng.uniform(0.5, 1.5))
        sc.close(t)
        turns.append({"by": inv, "action": action, "floor": floor, "suspects": suspects,
                      "victims": len(victims), "t_lift": t_lift, "t_close": t})
        if phase == "act1" and victims_found >= 2:
            phase = "act2"
        if over():
            break
        t += float(rng.uniform(1.0, 2.0))
        for c in in_hand:
            t += float(rng.uniform(1.5, 3.5))
            if t < end:
                sc.throw(t, c.colour, "throwback", cube=c)
        for _ in range(penalties):
            if over():
                break
            t += float(rng.uniform(1.5, 3.5))
            if t < end:
                supply[inv] -= 1
                sc.throw(t, inv, "penalty")
        turn = (turn + 1) % len(players)
    sc.game = {"players": players, "turns": turns, "phase": "over" if over() else phase,
               "crime_scenes": sorted(crime_scenes), "sheet": sheet, "supply": supply}
    if rng.random() < 0.3:
        sc_t = float(rng.uniform(QUIET_S + 2, sc.duration - 2))
        table_knock(sc, sc_t)
    tt = float(rng.uniform(0.5, 3.0))
    while tt < sc.duration:
        t_end = min(tt + float(rng.uniform(0.8, 3.0)), sc.duration)
        add_talk(sc, tt, t_end, float(np.exp(rng.uniform(math.log(1e-6), math.log(10e-6)))))
        tt = t_end + float(rng.uniform(1.0, 6.0))


SCRIPTS = {"single": _script_single, "rapid": _script_rapid, "noisy": _script_noisy,
           "game": _script_game}


def simulate(seed: int, scenario: str, duration: float) -> Scene:
    """The scene of tower ``seed`` in ``scenario`` (no signals yet: see :func:`render`)."""
    if scenario not in SCRIPTS:
        raise ValueError(f"unknown scenario {scenario!r} (known: {', '.join(SCENARIOS)})")
    tw = make_tower(seed)
    rng = np.random.default_rng([seed, SCENARIOS.index(scenario), 0xA11])
    sc = Scene(tw, duration, rng, scenario)
    SCRIPTS[scenario](sc)
    return sc


# ---------------------------------------------------------------------------------------
# Piezo channels: disc, module, AGC, AC coupling, the Nano's ADC
# ---------------------------------------------------------------------------------------


def _strike_waves(sc: Scene, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Every strike's ringing at the amplifier inputs, and its envelope: (8, n) each."""
    tw = sc.tw
    starts: list[float] = []
    chans: list[int] = []
    amps: list[np.ndarray] = []
    freqs: list[np.ndarray] = []
    qs: list[np.ndarray] = []
    for st in sc.strikes:
        contact = tw.contact_s * CONTACT_BY_KIND.get(st.kind, 1.0)
        low = st.kind in ("table", "thump", "clack", "touch")
        for k in range(N_CH):
            c = tw.couple_table[k] if st.level < 0 else tw.couple[st.level, k]
            if low and st.level >= 0:
                c = max(c, 0.5 * tw.couple_table[abs(k - st.level)])
            if c < 0.01:
                continue
            w = tw.mode_w[k] * rng.uniform(0.25, 1.0, 4)
            if st.level == k and st.shape is not None:
                w = tw.mode_w[k] * st.shape
            if st.kind == "edge":
                w = w * np.array([0.4, 0.7, 1.1, 1.5])
            f = np.append(tw.mode_f[k], tw.thump_f)
            w = np.append(w * (0.5 if low else 1.0), 1.0 if low else 0.0)
            q = np.append(tw.mode_q[k], tw.thump_q)
            a = st.j * tw.sens[k] * c * w * tw.front_gain(k, f) * tw.contact_gain(f, contact)
            delay = 0.15e-3 * abs(k - max(st.level, 0))
            starts.append(st.t + delay)
            chans.append(k)
            amps.append(a)
            freqs.append(f)
            qs.append(q)
    x = np.zeros(N_CH * n)
    env = np.zeros(N_CH * n)
    if not starts:
        return x.reshape(N_CH, n), env.reshape(N_CH, n)
    t0 = np.array(starts)
    ch = np.array(chans)
    amp = np.array(amps)
    f = np.array(freqs)
    tau = np.array(qs) / (math.pi * f)
    phase = np.pi / 2 - np.arctan(f / tw.f_front_hz[ch][:, None])  # the high-pass's lead
    skew = ch * tw.adc_skew_s
    n0 = np.ceil((t0 - skew) * FS_HZ - 1e-9).astype(np.int64)
    span = np.arange(WAVE_LEN)
    for lo in range(0, len(t0), 800):
        sl = slice(lo, lo + 800)
        idx = n0[sl, None] + span[None, :]
        tt = idx / FS_HZ + skew[sl, None] - t0[sl, None]
        dec = np.exp(-tt[:, None, :] / tau[sl, :, None])
        osc = np.sin(2 * np.pi * f[sl, :, None] * tt[:, None, :] + phase[sl, :, None])
        wave = (amp[sl, :, None] * dec * osc).sum(axis=1)
        en = (np.abs(amp[sl, :, None]) * dec).sum(axis=1)
        ok = (idx >= 0) & (idx < n)
        flat = (ch[sl, None] * n + idx)[ok]
        x += np.bincount(flat, weights=wave[ok], minlength=N_CH * n)
        env += np.bincount(flat, weights=en[ok], minlength=N_CH * n)
    return x.reshape(N_CH, n), env.reshape(N_CH, n)


def _speech(n: int, rng: np.random.Generator) -> np.ndarray:
    """A talker's voice as the cardboard passes it: 200-900 Hz, syllables at 3-6 Hz."""
    from scipy.signal import butter, lfilter

    b, a = butter(2, [200.0, 900.0], btype="bandpass", fs=FS_HZ)
    carrier = lfilter(b, a, rng.normal(0.0, 1.0, n))
    carrier /= max(float(np.std(carrier)), 1e-12)
    t = np.arange(n) / FS_HZ
    syl = np.maximum(np.sin(2 * np.pi * rng.uniform(3.0, 6.0) * t + rng.uniform(0, 6.3)), 0)
    loud = np.repeat(rng.uniform(0.3, 1.5, n // 300 + 1), 300)[:n]
    return np.asarray(carrier * syl**1.5 * loud * 1.6)


def _other_input(sc: Scene, n: int, rng: np.random.Generator) -> np.ndarray:
    """Rubs, hands, talk and hum at the amplifier inputs (8, n), volts."""
    tw = sc.tw
    x = np.zeros((N_CH, n))
    rub_scale = tw.disc_scale(1000.0)
    for t0, t1, level, amp in sc.rubs:
        i0, i1 = max(int(t0 * FS_HZ), 0), min(int(t1 * FS_HZ), n)
        if i1 - i0 < 2:
            continue
        win = np.sin(np.linspace(0, np.pi, i1 - i0)) ** 0.5
        for k in range(N_CH):
            c = 1.0 if level < 0 else float(tw.couple[level, k])
            if level < 0:
                c = float(rng.uniform(0.5, 1.0))
            if c < 0.01:
                continue
            x[k, i0:i1] += amp * c * rub_scale[k] * win * rng.normal(0.0, 1.0, i1 - i0)
    for talk in sc.talk:
        i0, i1 = max(int(talk["t"] * FS_HZ), 0), min(int(talk["t_end"] * FS_HZ), n)
        if i1 - i0 < 10:
            continue
        voice = _speech(i1 - i0, rng) * talk["level_v"]
        x[:, i0:i1] += (tw.air_gain * tw.disc_scale(500.0))[:, None] * voice[None, :]
    t = np.arange(n) / FS_HZ
    ph = rng.uniform(0, 2 * np.pi, 3)
    w = 2 * np.pi * tw.mains_hz * t
    hum = np.sin(w + ph[0]) + 0.3 * np.sin(2 * w + ph[1]) + 0.5 * np.sin(3 * w + ph[2])
    x += (tw.hum_in_v * sc.hum_factor)[:, None] * hum[None, :]
    return x


def agc_compression_db(env_in: np.ndarray, *, gain_db: float, vth_v: float, t_attack_s: float,
                       t_release_s: float, segment: np.ndarray | None = None,
                       hold_s: float = 0.030, max_db: float = 20.0) -> np.ndarray:
    """The MAX9814's gain reduction (dB, 0..``max_db``) for an input envelope (volts).

    What the output would need to stay at the threshold, held 30 ms, released
    linearly in dB at ``max_db`` per ``t_release_s``, attacked with the one-pole
    time constant ``t_attack_s``. ``segment`` numbers the spans between power-ups
    (the AGC starts from full gain in each). Vectorised: a release at a constant rate
    is a running maximum of ``need + rate * t``.
    """
    from scipy.ndimage import maximum_filter1d
    from scipy.signal import lfilter

    n = len(env_in)
    g = 10 ** (gain_db / 20)
    need = np.clip(20 * np.log10(np.maximum(env_in * g, 1e-12) / vth_v), 0.0, max_db)
    rate = max_db / t_release_s  # dB per second
    hold = max(int(round(hold_s * FS_HZ)), 1)
    lin = rate * np.arange(n) / FS_HZ
    seg_off = np.zeros(n) if segment is None else segment.astype(float) * 1e9
    held = maximum_filter1d(need, size=hold + 1, origin=hold // 2, mode="nearest")
    acc = np.maximum.accumulate(need + lin + seg_off)
    late = np.full(n, -np.inf)
    late[hold:] = acc[:-hold] - seg_off[hold:] - lin[hold:] + rate * hold / FS_HZ
    inst = np.maximum(held, late)
    a = math.exp(-1.0 / (FS_HZ * t_attack_s))
    out = lfilter([1 - a], [1, -a], inst)
    return np.asarray(np.clip(out, 0.0, max_db))


def _hp(x: np.ndarray, fc_hz: float) -> np.ndarray:
    """A first-order RC high-pass at ``fc_hz`` (the coupling capacitor into the ADC)."""
    from scipy.signal import lfilter

    rc = 1.0 / (2 * math.pi * fc_hz)
    a = rc / (rc + 1.0 / FS_HZ)
    return np.asarray(lfilter([a, -a], [1, -a], x))


def render_piezo(sc: Scene, n: int, rng: np.random.Generator) -> np.ndarray:
    """The ADC codes of ``n`` sample sets: (n, 8) uint16."""
    from scipy.ndimage import maximum_filter1d

    tw = sc.tw
    strikes, env_strikes = _strike_waves(sc, n, rng)
    other = _other_input(sc, n, rng)
    noise = tw.noise_in_v[:, None] * rng.normal(0.0, 1.0, (N_CH, n))
    x = strikes + other + noise
    t = np.arange(n) / FS_HZ
    node = np.zeros((N_CH, n))
    for k in range(N_CH):
        tk = t + k * tw.adc_skew_s
        conn = np.ones(n, bool)
        segment = np.zeros(n, np.int64)
        powerup = np.zeros(n)
        chatter = np.zeros(n, bool)
        for t_lift, t_close, exposed in sc.open_spans:
            if k <= exposed:
                continue
            off = (tk >= t_lift) & (tk < t_close)
            conn &= ~off
            segment += tk >= t_close
            after = tk >= t_close
            powerup[after] += -tw.out_bias[k] * np.exp(-(tk[after] - t_close) / tw.t_on_s[k])
            for te in (t_lift, t_close):  # the spring contacts bounce for a few ms
                i0, i1 = np.searchsorted(tk, [te, te + float(rng.uniform(0.003, 0.015))])
                chatter[i0:i1] |= rng.random(i1 - i0) < 0.5
        xk = np.where(conn, x[k], 0.0)
        if tw.module[k] == "max9814":
            env = np.where(conn, env_strikes[k], 0.0) + maximum_filter1d(
                np.abs(xk - strikes[k] * conn), size=3)
            comp = agc_compression_db(env, gain_db=float(tw.gain_db[k]), vth_v=float(tw.vth[k]),
                                      t_attack_s=float(tw.t_attack_s[k]),
                                      t_release_s=float(tw.t_release_s[k]), segment=segment)
        else:
            comp = np.zeros(n)
        out = xk * 10 ** ((tw.gain_db[k] - comp) / 20)
        out += tw.noise_out_v[k] * rng.normal(0.0, 1.0, n) * conn
        out = np.clip(out, tw.clip_lo[k], tw.clip_hi[k])
        out = np.where(conn, out, 0.0) + powerup * conn
        dev = _hp(out, float(tw.ac_fc_hz[k]))
        # power-on: the coupling capacitor starts empty, the node at the module's 0 V, and
        # relaxes to the divider's bias with the coupling's time constant
        tau_ac = 1.0 / (2 * math.pi * tw.ac_fc_hz[k])
        v_gap = tw.vcc * tw.bias_frac[k] - tw.out_bias[k]
        dev -= v_gap * np.exp(-(tk + tw.boot_us * 1e-6) / tau_ac)
        dev = np.where(conn & ~chatter, dev, 0.0)
        node[k] = tw.vcc * tw.bias_frac[k] + dev
    w = 2 * np.pi * tw.mains_hz * t
    ground_hum = np.sin(w + rng.uniform(0, 6.3)) + 0.4 * np.sin(3 * w + rng.uniform(0, 6.3))
    node += (tw.hum_out_v * sc.hum_factor)[:, None] * ground_hum[None, :]
    prev = np.concatenate([np.roll(node[N_CH - 1], 1)[None, :], node[:-1]], axis=0)
    node = node + tw.mux_eps * (prev - node)
    codes = np.floor(node / tw.vcc * ADC_FULL + tw.adc_noise_lsb * rng.normal(0.0, 1.0, node.shape))
    return np.clip(codes, 0, ADC_FULL - 1).astype(np.uint16).T


# ---------------------------------------------------------------------------------------
# Load channels: bar cells, HX711 sinc filters, the firmware's reading ticks
# ---------------------------------------------------------------------------------------


def _weights_at(sc: Scene, level: int, t: np.ndarray) -> np.ndarray:
    """Grams of cubes on ``level`` at times ``t`` (tare not included)."""
    changes = sorted((tw, g) for tw, lv, g in sc.weights if lv == level)
    if not changes:
        return np.zeros_like(t)
    times = np.array([c[0] for c in changes])
    cum = np.concatenate([[0.0], np.cumsum([c[1] for c in changes])])
    return np.asarray(cum[np.searchsorted(times, t, side="right")])


def _load_grams(sc: Scene, k: int, tg: np.ndarray, walk: np.ndarray,
                rng: np.random.Generator) -> np.ndarray:
    """What plate ``k``'s cell feels at grid times ``tg``, in grams (tare included)."""
    tw = sc.tw
    cubes = _weights_at(sc, k, tg)
    g = tw.tare_g[k] + cubes
    for t0, lv, dg in sc.weights:
        if lv == k:
            after = tg >= t0
            g[after] += tw.creep_frac[k] * dg * (1 - np.exp(-(tg[after] - t0) / tw.creep_tau_s[k]))
    g += tw.warm_g[k] * (1 - np.exp(-(tg + tw.boot_us * 1e-6) / tw.warm_tau_s[k]))
    g += np.interp(tg, np.arange(len(walk)) * 0.5 - 1.0, walk)
    om = 2 * math.pi * tw.plate_f_hz[k]
    zeta = tw.plate_zeta[k]
    od = om * math.sqrt(1 - zeta * zeta)
    for st in sc.strikes:
        if st.level < 0 or abs(st.level - k) > 1:
            continue
        scale = 1.0 if st.level == k else tw.couple_load
        i0, i1 = np.searchsorted(tg, [st.t, st.t + 6.0 / (zeta * om)])
        if i1 <= i0:
            continue
        tau = tg[i0:i1] - st.t
        g[i0:i1] += scale * st.j / G * 1e3 * om * np.exp(-zeta * om * tau) * np.sin(od * tau)
    for t0, accel, f, tdec in sc.shakes:
        i0, i1 = np.searchsorted(tg, [t0, t0 + 6 * tdec])
        tau = tg[i0:i1] - t0
        a = accel * (1 + 0.08 * k) * np.exp(-tau / tdec) * np.sin(2 * math.pi * f * tau)
        g[i0:i1] += (tw.tare_g[k] + cubes[i0:i1]) * a / G
    for t0, t1, lv, press in sc.presses:
        if lv != k:
            continue
        i0, i1 = np.searchsorted(tg, [t0, t1 + 0.1])
        tau = tg[i0:i1]
        up = np.clip((tau - t0) / 0.08, 0, 1)
        down = np.clip(1 - (tau - t1) / 0.06, 0, 1)
        tremor = 1 + 0.15 * np.sin(2 * math.pi * 4.0 * (tau - t0))
        g[i0:i1] += press * np.minimum(up, down) * tremor
    for t0, t1, amp in sc.wobbles:
        i0, i1 = np.searchsorted(tg, [t0, t1])
        if i1 - i0 < 2:
            continue
        tau = tg[i0:i1] - t0
        win = np.sin(np.pi * tau / (t1 - t0))
        f1, f2 = rng.uniform(1.5, 6.0, 2)
        g[i0:i1] += amp * rng.uniform(0.3, 1.0) * win * (
            np.sin(2 * math.pi * f1 * tau) + 0.5 * np.sin(2 * math.pi * f2 * tau + 1.0))
    return g


def _connected_segments(sc: Scene, k: int, t_end: float) -> list[tuple[float, float]]:
    """Spans in which level ``k``'s HX711 is powered and wired (stream seconds)."""
    segs: list[tuple[float, float]] = []
    start = -sc.tw.boot_us * 1e-6
    for t_lift, t_close, exposed in sorted(sc.open_spans):
        if k > exposed:
            segs.append((start, t_lift))
            start = t_close
    segs.append((start, t_end))
    return segs


def render_loads(sc: Scene, ticks: np.ndarray, rng: np.random.Generator
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What the firmware reads at each tick: (valid (T,) bits, values (T, 8), timeouts (T,))."""
    tw = sc.tw
    n_t = len(ticks)
    valid = np.zeros(n_t, np.int64)
    values = np.zeros((n_t, N_CH), np.int64)
    timeout_at: list[float] = []
    t_end = float(ticks[-1]) + 0.01 if n_t else sc.duration
    n_walk = int(sc.duration * 2) + 6
    for k in range(N_CH):
        period = (1 + tw.clock_ppm * 1e-6) / (tw.sps[k] * (1 + tw.osc_dev[k]))
        K = max(16, int(math.ceil(640.0 * period)))
        kernel = np.ones(K)
        for _ in range(3):
            kernel = np.convolve(kernel, np.ones(K))
        kernel /= kernel.sum()
        walk = np.cumsum(rng.normal(0.0, tw.walk_g[k] * math.sqrt(0.5), n_walk))
        conv_t: list[np.ndarray] = []
        conv_v: list[np.ndarray] = []
        for s0, s1 in _connected_segments(sc, k, t_end):
            first = s0 + float(rng.uniform(0.5e-3, 3e-3)) + 4 * period
            n_conv = int(math.floor((s1 - first) / period)) + 1
            if n_conv <= 0:
                continue
            n_grid = (n_conv + 3) * K
            tg = first - 4 * period + (np.arange(n_grid) + 1) * (period / K)
            grams = _load_grams(sc, k, tg, walk, rng)
            hum = tw.wire_m[k] * tw.hum_counts_per_m * sc.hum_factor * np.sin(
                2 * math.pi * tw.mains_hz * tg + float(rng.uniform(0, 6.3)))
            analog = tw.cpg[k] * grams + hum
            filt = np.convolve(analog, kernel, mode="valid")
            reading = filt[np.arange(n_conv) * K + 3]
            conv_t.append(first + np.arange(n_conv) * period)
            conv_v.append(reading)
        t_conv = np.concatenate(conv_t)
        v_conv = tw.zero_counts[k] + np.concatenate(conv_v)
        v_conv += tw.noise_counts[k] * rng.normal(0.0, 1.0, len(v_conv))
        v_int = np.clip(np.round(v_conv), -(2**23), 2**23 - 1).astype(np.int64)
        if tw.glitch_rate:
            bad = np.nonzero(rng.random(len(v_int)) < tw.glitch_rate)[0]
            for i in bad:
                flipped = (int(v_int[i]) & 0xFFFFFF) ^ (1 << int(rng.integers(12, 22)))
                v_int[i] = flipped - (1 << 24) if flipped & 0x800000 else flipped
        latest = np.searchsorted(t_conv, ticks, side="right") - 1
        connected = np.ones(n_t, bool)
        for t_lift, t_close, exposed in sc.open_spans:
            if k > exposed:
                connected &= ~((ticks >= t_lift) & (ticks < t_close))
        prev = np.concatenate([[-1], latest[:-1]])
        fresh = connected & (latest >= 0) & (latest != prev)
        # a board gone from the tower: its reading missed since the last fresh one
        seen = np.maximum.accumulate(np.where(fresh, latest, -1))
        fresh &= latest > np.concatenate([[-1], seen[:-1]])
        valid |= fresh.astype(np.int64) << k
        values[fresh, k] = v_int[latest[fresh]]
        fresh_t = ticks[fresh]
        gaps = np.append(fresh_t[1:], t_end) - fresh_t
        timeout_at += (fresh_t[gaps > TIMEOUT_S] + TIMEOUT_S).tolist()
    timeouts = np.searchsorted(np.sort(np.array(timeout_at)), ticks, side="right")
    return valid, values, timeouts


# ---------------------------------------------------------------------------------------
# The firmware's byte stream
# ---------------------------------------------------------------------------------------


def _s24(values: np.ndarray) -> np.ndarray:
    """(m, 8) int64 counts as (m, 24) little-endian 24-bit two's complement bytes."""
    u = (values & 0xFFFFFF).astype(np.uint32)
    b = np.stack([u & 0xFF, (u >> 8) & 0xFF, (u >> 16) & 0xFF], axis=-1).astype(np.uint8)
    return b.reshape(values.shape[0], -1)


def _u32(x: np.ndarray) -> np.ndarray:
    wrapped = (np.asarray(x, np.int64) & 0xFFFFFFFF).astype("<u4")  # t_us wraps at 2**32
    return wrapped.view(np.uint8).reshape(-1, 4)


def _rows(msg_type: int, seq: np.ndarray, body: np.ndarray) -> np.ndarray:
    m = body.shape[0]
    head = np.empty((m, 3), np.uint8)
    head[:, 0] = msg_type
    head[:, 1] = seq & 0xFF
    head[:, 2] = (seq >> 8) & 0xFF
    rows = np.concatenate([head, body], axis=1)
    crc = crc16_rows(rows)
    crc_b = np.stack([crc & 0xFF, crc >> 8], axis=1).astype(np.uint8)
    return cobs_encode_rows(np.concatenate([rows, crc_b], axis=1))


def encode_stream(sc: Scene, codes: np.ndarray, ticks: np.ndarray, valid: np.ndarray,
                  values: np.ndarray, timeouts: np.ndarray) -> bytes:
    """The device -> host bytes: HELLO, then PIEZO, LOAD and STATUS as the firmware sends them."""
    tw = sc.tw
    n = tw.sets_per_msg
    m_p = codes.shape[0] // n
    first_us = tw.boot_us
    t_p = (np.arange(m_p) * n + n - 1) / FS_HZ + 8 * tw.adc_skew_s + 40e-6
    t_l = ticks + 70e-6
    t_s = np.arange(1.0, sc.duration, 1.0) - 0.0123
    times = np.concatenate([[-1.0], t_p, t_l, t_s])
    kinds = np.concatenate([[0], np.full(m_p, 1), np.full(len(t_l), 2), np.full(len(t_s), 3)])
    order = np.argsort(times, kind="stable")
    seq = np.empty(len(times), np.int64)
    seq[order] = np.arange(len(times)) & 0xFFFF
    parts: list[tuple[np.ndarray, np.ndarray]] = []  # (positions in order, encoded rows)
    pos = np.empty(len(times), np.int64)
    pos[order] = np.arange(len(times))

    hello = struct.pack("<BBBBBBHHB8s", 1, *tw.fw, N_CH, N_CH, FS_HZ, tw.load_rate_hz, ADC_BITS,
                        tw.device_id)
    hello_row = np.frombuffer(frame(TYPE_HELLO, 0, hello), np.uint8)[None, :]
    parts.append((pos[:1], hello_row))

    sel = kinds == 1
    t_us = first_us + np.arange(m_p) * n * 500
    samples = codes[:m_p * n].reshape(m_p, n * N_CH).astype("<u2").view(np.uint8)
    body = np.concatenate([_u32(t_us), np.full((m_p, 1), n, np.uint8),
                           samples.reshape(m_p, -1)], axis=1)
    parts.append((pos[sel], _rows(TYPE_PIEZO, seq[sel], body)))

    sel = kinds == 2
    if sel.any():
        lt_us = first_us + 4 * np.round(ticks * 1e6 / 4).astype(np.int64)
        body = np.concatenate([_u32(lt_us), valid.astype(np.uint8)[:, None], _s24(values)], axis=1)
        parts.append((pos[sel], _rows(TYPE_LOAD, seq[sel], body)))

    sel = kinds == 3
    if sel.any():
        up_ms = (first_us + np.round(t_s * 1e6).astype(np.int64)) // 1000
        tick_i = np.clip(np.searchsorted(ticks, t_s) - 1, 0, max(len(ticks) - 1, 0))
        t_out = (timeouts[tick_i] if len(timeouts) else np.zeros(len(t_s), np.int64)) & 0xFFFF
        rng = np.random.default_rng([tw.seed, 0x57A7])
        cpu = np.clip(tw.cpu_load_pct + rng.integers(-2, 3, len(t_s)), 0, 100)
        body = np.zeros((len(t_s), 12), np.uint8)
        body[:, 0:4] = _u32(up_ms)
        body[:, 8] = t_out & 0xFF
        body[:, 9] = t_out >> 8
        body[:, 10] = cpu
        parts.append((pos[sel], _rows(TYPE_STATUS, seq[sel], body)))

    lengths = np.empty(len(times), np.int64)
    for p, rows in parts:
        lengths[p] = rows.shape[1]
    offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    out = np.empty(int(lengths.sum()), np.uint8)
    for p, rows in parts:
        out[offsets[p][:, None] + np.arange(rows.shape[1])[None, :]] = rows
    return out.tobytes()


def _ticks(sc: Scene) -> np.ndarray:
    tw = sc.tw
    first = (tw.sets_per_msg + 2) / FS_HZ + (tw.seed % 7) * 1e-3
    return first + np.arange(int((sc.duration - first) * tw.load_rate_hz) + 1) / tw.load_rate_hz


def _jsonable(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: _jsonable(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_jsonable(v) for v in x]
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, float | np.floating):
        return round(float(x), 6)
    return x


def truth_of(sc: Scene) -> dict[str, Any]:
    """The scene's truth file (``towerear-crosscheck-truth/1`` plus model AH's extras)."""
    return _jsonable({
        "format": FORMAT, "model": MODEL, "scenario": sc.scenario, "seed": sc.seed,
        "duration_s": sc.duration, "cells": sc.tw.cells,
        "landings": sorted(sc.landings, key=lambda x: x["t"]),
        "knockdowns": sorted(sc.knockdowns, key=lambda x: x["t"]),
        "removals": sc.removals, "lifts": sc.lifts, "closes": sc.closes, "knocks": sc.knocks,
        "talk": sc.talk, "hum_factor": sc.hum_factor, "fallouts": sc.fallouts,
        "game": sc.game, "tower": sc.tw.figures(),
    })


def render(sc: Scene) -> tuple[bytes, dict[str, Any]]:
    """The recording's bytes and its truth."""
    rng = np.random.default_rng([sc.noise_seed, 0xB0B])
    n_sets = int(round(sc.duration * FS_HZ))
    n_sets -= n_sets % sc.tw.sets_per_msg
    codes = render_piezo(sc, n_sets, rng)
    ticks = _ticks(sc)
    valid, values, timeouts = render_loads(sc, ticks, rng)
    raw = encode_stream(sc, codes, ticks, valid, values, timeouts)
    return raw, truth_of(sc)


def make_recording(seed: int, scenario: str, duration: float, out: Path) -> tuple[Path, Path]:
    """Write ``{scenario}_t{seed}.bin`` and ``.truth.json`` into ``out``; return their paths."""
    sc = simulate(seed, scenario, duration)
    raw, truth = render(sc)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    bin_path = out / f"{scenario}_t{seed}.bin"
    truth_path = out / f"{scenario}_t{seed}.truth.json"
    bin_path.write_bytes(raw)
    truth_path.write_text(json.dumps(truth, indent=1) + "\n")
    return bin_path, truth_path


def _job(args: tuple[int, str, float, str]) -> str:
    seed, scenario, duration, out = args
    bin_path, _ = make_recording(seed, scenario, duration, Path(out))
    return bin_path.name


def main(argv: list[str] | None = None) -> int:
    """Command line (see the module docstring)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--towers", type=int, default=16)
    p.add_argument("--first-seed", type=int, default=1)
    p.add_argument("--duration", type=float, default=120.0)
    p.add_argument("--scenarios", nargs="+", default=list(SCENARIOS))
    p.add_argument("--workers", type=int, default=min(4, os.cpu_count() or 1))
    args = p.parse_args(argv)
    unknown = [s for s in args.scenarios if s not in SCENARIOS]
    if unknown:
        print(f"make_recordings_ah: unknown scenario {', '.join(unknown)} "
              f"(known: {', '.join(SCENARIOS)})", file=sys.stderr)
        return 2
    if args.duration < QUIET_S + 6.0:
        print(f"make_recordings_ah: --duration must be at least {QUIET_S + 6.0:g} s",
              file=sys.stderr)
        return 2
    # imported once here, so that the forked workers need not each import it again
    import scipy.ndimage
    import scipy.signal  # noqa: F401

    args.out.mkdir(parents=True, exist_ok=True)
    jobs = [(seed, sc, float(args.duration), str(args.out))
            for seed in range(args.first_seed, args.first_seed + args.towers)
            for sc in args.scenarios]
    if args.workers <= 1 or len(jobs) == 1:
        for job in jobs:
            _job(job)
    else:
        with ProcessPoolExecutor(max_workers=args.workers) as pool:
            list(pool.map(_job, jobs))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
