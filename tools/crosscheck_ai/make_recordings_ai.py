#!/usr/bin/env python3
"""Blind cross-check model AI: a school science club's towerear, played in a classroom.

Writes recordings (device -> host bytes, contracts.md sections 1-2, with this
file's own COBS and CRC) and their ground truth (the format
``towerear-crosscheck-truth/1`` that tools/crosscheck/score.py reads)::

    python tools/crosscheck_ai/make_recordings_ai.py --out /tmp/ai --towers 8 \
        --first-seed 1 --duration 120 [--scenarios single rapid noisy game long damaged acoustic]
        [--long-duration 1800] [--workers 2]

Written from the contract, the design notes and the rulebook only: it imports
no project code. The physical model and where its figures come from are in
README.md beside this file. Everything is deterministic in (seed, scenario,
duration); the tower itself (its electronics and cardboard) depends on the
seed alone.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np


class _LazySignal:
    """scipy.signal, imported on first use (a refused command line stays quick)."""

    def __getattr__(self, name: str) -> Any:
        from scipy import signal as module

        return getattr(module, name)


signal = _LazySignal()

MODEL = "AI"
TRUTH_FORMAT = "towerear-crosscheck-truth/1"
SCENARIOS = ("single", "rapid", "noisy", "game", "long", "damaged", "acoustic")
DEFAULT_SCENARIOS = ("single", "rapid", "noisy", "game")
LEVELS = 8
G = 9.81
COLOURS = ("yellow", "blue", "brown", "gray", "black", "white")
U32 = 1 << 32
JITTER_M = 0.0015  # lateral scatter per floor fallen (spin, air, brushing a wall)
V_LAT_ENTRY = 0.06  # m/s: sideways speed a dropped cube keeps (rms, each axis)
V_LAT_EDGE = 0.12  # m/s: sideways speed after clipping a hole's edge
P_EDGE_IN = 0.75  # a cube clipping an edge with its centre over the hole drops through
P_EDGE_OUT = 0.2  # ... with its centre over the plate

# =====================================================================================
# Wire: CRC-16/CCITT-FALSE and COBS, written from contracts.md section 1
# =====================================================================================


def _crc_table() -> np.ndarray:
    table = np.zeros(256, np.uint16)
    for byte in range(256):
        crc = byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
        table[byte] = crc & 0xFFFF
    return table


CRC_TABLE = _crc_table()
_CRC_LIST = [int(v) for v in CRC_TABLE]


def crc16_ccitt_false(data: bytes) -> int:
    """CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, not reflected, xorout 0), table driven."""
    crc = 0xFFFF
    for byte in data:
        crc = ((crc << 8) & 0xFFFF) ^ _CRC_LIST[((crc >> 8) ^ byte) & 0xFF]
    return crc


def crc16_ccitt_false_reference(data: bytes) -> int:
    """The same CRC straight from its definition, bit by bit (a second implementation)."""
    crc = 0xFFFF
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) & 0xFFFF if crc & 0x8000 else (crc << 1) & 0xFFFF
    return crc


def crc16_rows(rows: np.ndarray) -> np.ndarray:
    """The CRC of every row of a (R, L) uint8 array at once (one column at a time)."""
    rows = np.asarray(rows, np.uint8)
    crc = np.full(rows.shape[0], 0xFFFF, np.uint32)
    table = CRC_TABLE.astype(np.uint32)
    for col in range(rows.shape[1]):
        crc = ((crc << 8) & 0xFFFF) ^ table[((crc >> 8) ^ rows[:, col]) & 0xFF]
    return crc.astype(np.uint16)


def cobs_encode(data: bytes) -> bytes:
    """Consistent-overhead byte stuffing, without the trailing 0x00 delimiter.

    A final full block of 254 non-zero bytes ends the encoding (no redundant 0x01).
    """
    out = bytearray()
    block = bytearray()
    last = len(data) - 1
    for i, byte in enumerate(data):
        if byte == 0:
            out.append(len(block) + 1)
            out += block
            block = bytearray()
            continue
        block.append(byte)
        if len(block) == 254:
            out.append(255)
            out += block
            block = bytearray()
            if i == last:
                return bytes(out)
    out.append(len(block) + 1)
    out += block
    return bytes(out)


def cobs_decode_own(data: bytes) -> bytes:
    """Inverse of :func:`cobs_encode` (given without the 0x00 delimiter); ValueError if
    the chunk is not valid COBS."""
    out = bytearray()
    i, n = 0, len(data)
    while i < n:
        code = data[i]
        if code == 0 or i + code > n:
            raise ValueError("malformed COBS block")
        out += data[i + 1:i + code]
        i += code
        if code < 255 and i < n:
            out.append(0)
    return bytes(out)


def cobs_encode_rows(rows: np.ndarray) -> np.ndarray:
    """COBS-encode every row of a (R, L) uint8 array (L <= 253) and append the 0x00 delimiter.

    Returns a (R, L + 2) uint8 array, row by row what :func:`cobs_encode` gives plus 0x00.
    """
    rows = np.asarray(rows, np.uint8)
    n_rows, length = rows.shape
    if length > 253:
        raise ValueError("rows longer than 253 bytes need the block-splitting encoder")
    out = np.zeros((n_rows, length + 2), np.uint8)
    pos = np.arange(length + 1, dtype=np.int16)
    for r0 in range(0, n_rows, 32768):  # in slices: a long session has millions of rows
        part = rows[r0:r0 + 32768]
        n = len(part)
        is_zero = part == 0
        zero_at = np.where(np.concatenate([is_zero, np.ones((n, 1), bool)], axis=1),
                           pos[None, :], np.int16(length + 1))
        # next zero at or after each position (the appended virtual zero at ``length``)
        next_zero = np.minimum.accumulate(zero_at[:, ::-1], axis=1)[:, ::-1]
        out[r0:r0 + n, 0] = next_zero[:, 0] + 1
        code = next_zero[:, 1:] - pos[None, :length]
        body = part.copy()
        body[is_zero] = code[is_zero].astype(np.uint8)
        out[r0:r0 + n, 1:length + 1] = body
    return out


def frame(msg_type: int, seq: int, payload: bytes) -> bytes:
    """One framed message: COBS(type | seq | payload | crc) + 0x00."""
    msg = bytes([msg_type]) + (seq & 0xFFFF).to_bytes(2, "little") + payload
    return cobs_encode(msg + crc16_ccitt_false(msg).to_bytes(2, "little")) + b"\x00"


# =====================================================================================
# The tower: electronics and cardboard, per seed
# =====================================================================================

ADC_VARIANTS = ("avr10", "mcp3208")
LOAD_CHIPS = {  # name: (nominal SPS, datasheet/assumed input noise nV rms, excitation V)
    "hx711-10": (10, 50.0, 4.3),   # HX711 datasheet: 50 nV at 10 SPS, gain 128
    "hx711-80": (80, 90.0, 4.3),   # 90 nV at 80 SPS
    "cs1237-40": (40, 70.0, 3.0),  # assumed between the two (no English datasheet)
    "hx717-320": (320, 180.0, 4.3),  # assumed: white noise scaled by sqrt(320/80)
}
CELL_RO_MV_V = {100: 0.8, 200: 0.85, 300: 0.9, 500: 1.0, 780: 0.6}  # assumed micro bar cells


@dataclass
class Clock:
    """Device clock: stream seconds from real seconds (real 0 = the first sample set)."""

    ppm: float
    drift_ppm_per_h: float
    t_us_first: int

    @property
    def e(self) -> float:
        return self.ppm * 1e-6

    @property
    def a(self) -> float:
        return self.drift_ppm_per_h * 1e-6 / 3600.0

    def stream(self, tau: Any) -> Any:
        return np.asarray(tau) * (1.0 + self.e) + 0.5 * self.a * np.asarray(tau) ** 2

    def real(self, s: Any) -> Any:
        s = np.asarray(s, float)
        k = 1.0 + self.e
        return 2.0 * s / (k + np.sqrt(k * k + 2.0 * self.a * s))


@dataclass
class Tower:
    """One science-club tower: every figure that differs from seed to seed."""

    seed: int
    device_id: bytes
    fw: tuple[int, int, int]
    adc: str
    adc_bits: int
    piezo_rate_hz: int
    set_period_us: float
    chan_skew_us: float
    sets_per_msg: int
    vref: float
    vcc: float
    opamp: str
    adc_noise_lsb: float
    dnl_sigma: float
    load_chip: str
    load_rate_hz: int
    conv_rate_hz: np.ndarray
    load_noise_counts: np.ndarray
    load_hum_counts: np.ndarray
    clock: Clock
    boot_to_first_set_s: float
    cells: str
    capacity_g: np.ndarray
    rated_mv_v: np.ndarray
    orient: np.ndarray
    shunt: np.ndarray
    cpg: np.ndarray
    offset: np.ndarray
    plate_g: np.ndarray
    creep_frac: np.ndarray
    creep_tau_s: np.ndarray
    fast_creep_frac: np.ndarray
    fast_tau_s: np.ndarray
    zero_tc_g_per_c: np.ndarray
    moisture_g_per_rh: np.ndarray
    cell_f_hz: np.ndarray
    cell_zeta: np.ndarray
    coupling: list[str]
    disc_s: np.ndarray
    foam_f_hz: np.ndarray
    foam_q: np.ndarray
    gain: np.ndarray
    f_hp1: np.ndarray
    f_hp2: np.ndarray
    f_aa: np.ndarray
    bias_v: np.ndarray
    vos_v: np.ndarray
    hum_uv: np.ndarray
    cable_xtalk: float
    mux_eps: np.ndarray
    plate_a_m: np.ndarray
    hole_m: np.ndarray
    hole_c: np.ndarray
    entry_m: float
    entry_c: np.ndarray
    floor_h_m: float
    mode_f: np.ndarray
    mode_q: np.ndarray
    disc_phi: np.ndarray
    wall_psi: np.ndarray
    leak: np.ndarray
    wall_w: float
    base_w: float
    cube_side_m: float
    cube_mass_g: float
    restitution: float
    mains_hz: float

    @property
    def load_period_s(self) -> float:
        return 1.0 / self.load_rate_hz

    def figures(self) -> dict[str, Any]:
        """The tower's figures as plain JSON values (written into every truth file)."""
        out: dict[str, Any] = {}
        for name, value in self.__dict__.items():
            if name == "clock":
                out["clock_ppm"] = round(self.clock.ppm, 3)
                out["clock_drift_ppm_per_h"] = round(self.clock.drift_ppm_per_h, 3)
                out["t_us_first"] = self.clock.t_us_first
            elif isinstance(value, bytes):
                out[name] = value.hex()
            elif isinstance(value, np.ndarray):
                out[name] = np.round(value.astype(float), 6).tolist()
            elif isinstance(value, float):
                out[name] = round(value, 6)
            elif isinstance(value, tuple):
                out[name] = list(value)
            else:
                out[name] = value
        return out


def _mode_shapes(x: float, y: float, a: float) -> np.ndarray:
    """Participation of the four modelled plate modes at (x, y) of a plate of side ``a``
    (centre at 0): (1,1), (2,1), (1,2), and the symmetric (1,3)+(3,1) pair."""
    u, v = math.pi * x / a, math.pi * y / a
    return np.array([
        math.cos(u) * math.cos(v),
        math.sin(2 * u) * math.cos(v),
        math.cos(u) * math.sin(2 * v),
        0.5 * (math.cos(u) * math.cos(3 * v) + math.cos(3 * u) * math.cos(v)),
    ])


def make_tower(seed: int) -> Tower:
    """The tower of ``seed``: the same whatever the scenario."""
    rng = np.random.default_rng([seed, 0xA1])
    device_id = b"SC" + (seed & 0xFFFF).to_bytes(2, "little") + rng.bytes(4)
    fw = (0, int(rng.integers(3, 5)), int(rng.integers(0, 10)))

    # -- piezo ADC ---------------------------------------------------------------
    adc = ADC_VARIANTS[int(rng.integers(0, 2))]
    vcc = float(rng.uniform(4.85, 5.15))  # USB from a classroom laptop
    if adc == "avr10":
        bits, rate, vref = 10, 2000, vcc  # AVcc reference: ratiometric with the bias divider
        skew = 28.0  # 13 ADC cycles at 500 kHz (prescaler 32) + ISR entry
        noise_lsb, dnl = float(rng.uniform(0.4, 0.6)), 0.2
    else:
        bits = 12
        rate = int(rng.choice([1000, 1250, 2000, 2500, 3000]))
        vref = 4.096  # LM4040-4.1 reference; the bias is Vref / 2, buffered
        skew = 16.0  # 24 SPI clocks at 2 MHz (fosc / 8) + chip-select handling
        noise_lsb, dnl = float(rng.uniform(0.6, 0.9)), 0.3
    period_us = 1e6 / rate if rate != 3000 else 5333 / 16.0  # timer compare at 16 MHz
    # -- load converters -------------------------------------------------------------
    chip = str(rng.choice(list(LOAD_CHIPS), p=[0.3, 0.35, 0.15, 0.2]))
    load_rate, noise_nv, excitation = LOAD_CHIPS[chip]
    # UART budget: 1 Mbaud 8N1 = 100 kB/s; keep the stream below 85 % of it.
    load_bps = load_rate * 36.0
    n_min = 1
    while n_min < 14 and (rate * 16 + rate / n_min * 13 + load_bps + 20) > 85_000:
        n_min += 1
    sets_per_msg = int(rng.integers(n_min, 15))
    # on-chip RC oscillators of the converters: their data rate is off by a few per cent
    conv_rate = load_rate * (1.0 + rng.uniform(-0.03, 0.03, LEVELS))
    lsb_v = 0.5 * excitation / 128 / 2**23
    board = rng.uniform(1.0, 2.5, LEVELS)  # cheap boards on a USB supply are noisier
    load_noise = noise_nv * 1e-9 * board / lsb_v
    load_hum = rng.uniform(80, 400, LEVELS) * 1e-9 / lsb_v  # 50 Hz on the cell wires
    # -- clock: a ceramic resonator; the club's t_us counter survives the DTR reset ------
    ppm = float(rng.uniform(-5000, 5000))
    drift = float(rng.uniform(-40, 40))
    if rng.random() < 0.4:
        t_us_first = U32 - int(rng.uniform(6e6, 110e6))  # wraps within the first two minutes
    else:
        t_us_first = int(rng.integers(0, U32))
    t_us_first -= t_us_first % 4  # micros() on a 16 MHz AVR counts in 4 us steps
    clock = Clock(ppm, drift, t_us_first)

    # -- cells -------------------------------------------------------------------------
    caps = [100, 200, 300, 500, 780]
    if rng.random() < 0.5:
        cap = np.full(LEVELS, float(rng.choice(caps)))
        cells = "matched"
    else:
        two = rng.choice(caps, 2, replace=False)
        cap = rng.choice(two, LEVELS).astype(float)
        if len(set(cap.tolist())) == 1:
            cap[int(rng.integers(0, LEVELS))] = float(two[0] if cap[0] != two[0] else two[1])
        cells = "mixed"
    ro = np.array([CELL_RO_MV_V[int(c)] for c in cap]) * rng.uniform(0.85, 1.15, LEVELS)
    orient = np.where(rng.random(LEVELS) < 0.2, -1.0, 1.0)  # a few cells wired A+/A- swapped
    shunt = rng.uniform(0.95, 1.0, LEVELS)  # the plate leans a little on the card ledge
    fs_counts = ro * 1e-3 * 128 * 2**24
    cpg = orient * shunt * fs_counts / cap
    plate_g = rng.uniform(6.0, 14.0, LEVELS)
    offset = np.round(rng.uniform(-0.08, 0.08, LEVELS) * fs_counts * orient + cpg * plate_g)
    creep = rng.uniform(-0.015, 0.012, LEVELS)
    creep_tau = rng.uniform(120, 900, LEVELS)
    fast = rng.uniform(0.0, 0.005, LEVELS)
    fast_tau = rng.uniform(3.0, 10.0, LEVELS)
    zero_tc = cap * rng.uniform(3e-5, 2e-4, LEVELS) * rng.choice([-1.0, 1.0], LEVELS)
    moisture = plate_g * rng.uniform(0.0008, 0.0015, LEVELS)  # greyboard: ~0.1 %/%RH
    cell_f = rng.uniform(35, 120, LEVELS)
    cell_zeta = rng.uniform(0.04, 0.12, LEVELS)

    # -- piezo discs and front end ---------------------------------------------------
    coupling = ["glue" if rng.random() < 0.5 else "foam" for _ in range(LEVELS)]
    if coupling.count("glue") < 2:
        coupling[0] = coupling[5] = "glue"
    if coupling.count("foam") < 2:
        coupling[2] = coupling[7] = "foam"
    glue = np.array([c == "glue" for c in coupling])
    disc_s = np.where(glue, rng.uniform(60, 140, LEVELS), rng.uniform(25, 60, LEVELS))
    foam_f = rng.uniform(400, 1400, LEVELS)
    foam_q = rng.uniform(1.5, 3.0, LEVELS)
    disc_nf = float(rng.choice([20.0, 30.0]))  # 27 mm or 35 mm brass discs
    f_hp1 = 1.0 / (2 * math.pi * 500e3 * disc_nf * 1e-9 * rng.uniform(0.85, 1.15, LEVELS))
    f_hp2 = 1.0 / (2 * math.pi * 1e3 * rng.choice([10e-6, 22e-6], LEVELS))
    style = rng.choice([0.0, 723.0, 1592.0])  # the club's build: no filter, 2.2k/100n, 1k/100n
    f_aa = np.where(rng.random(LEVELS) < 0.75, style, rng.choice([0.0, 723.0, 1592.0], LEVELS))
    opamp = "lm324" if rng.random() < 0.6 else "mcp6004"
    half = vref / 2.0
    bias = half * (1.0 + rng.uniform(-0.005, 0.005, LEVELS))  # 1 % divider resistors
    vos = rng.uniform(-0.004, 0.004, LEVELS)  # DC gain 1: the offset is not amplified
    hum = rng.uniform(40, 200) * rng.uniform(0.5, 1.5, LEVELS)  # uV of 50 Hz at the 1 MOhm node
    mux_eps = np.where(f_aa > 0, 14e-12 / 100e-9, 2e-4) * rng.uniform(0.5, 1.5, LEVELS)

    # -- cardboard geometry ----------------------------------------------------------
    a0 = rng.uniform(0.085, 0.095)
    taper = rng.uniform(0.0015, 0.003)
    plate_a = a0 - taper * np.arange(LEVELS)
    side = float(rng.uniform(0.008, 0.010))
    density = float(rng.uniform(0.6, 0.8))  # g/cm3: the game's hardwood cubes
    mass = float(np.clip((side * 100) ** 3 * density, 0.3, 0.8))
    entry = side + rng.uniform(0.003, 0.005)
    hole = np.zeros(LEVELS)
    hole[7] = entry + rng.uniform(0.001, 0.003)
    for lv in range(6, 0, -1):
        hole[lv] = hole[lv + 1] + rng.uniform(0.0008, 0.002)
    hole_c = rng.uniform(-0.006, 0.006, (LEVELS, 2))  # cut by hand
    hole_c[0] = 0.0
    entry_c = rng.uniform(-0.002, 0.002, 2)
    thick = rng.uniform(1.2e-3, 2.0e-3)
    e_mod, rho = rng.uniform(2.5e9, 4e9), rng.uniform(650, 800)
    d_flex = e_mod * thick**3 / (12 * (1 - 0.3**2))
    lam2 = rng.uniform(24, 32, LEVELS)
    f1 = lam2 / (2 * math.pi * plate_a**2) * math.sqrt(d_flex / (rho * thick)) * 0.9
    f1 *= rng.uniform(0.92, 1.08, LEVELS)
    ratios = np.stack([np.ones(LEVELS), 2.04 * rng.uniform(0.97, 1.03, LEVELS),
                       2.04 * rng.uniform(1.0, 1.06, LEVELS), 3.66 * rng.uniform(0.96, 1.04,
                                                                                 LEVELS)], 1)
    mode_f = f1[:, None] * ratios
    q1 = rng.uniform(8, 22, LEVELS)
    mode_q = q1[:, None] * np.array([1.0, 0.85, 0.85, 0.7])
    disc_phi = np.zeros((LEVELS, 4))
    for lv in range(LEVELS):
        r = rng.uniform(0.02, 0.03) * plate_a[lv] / 0.09
        ang = rng.uniform(0, 2 * math.pi)
        pol = 1.0 if rng.random() < 0.5 else -1.0
        disc_phi[lv] = pol * _mode_shapes(r * math.cos(ang), r * math.sin(ang), plate_a[lv])
    wall_psi = rng.uniform(0.3, 1.0, (LEVELS, 4)) * rng.choice([-1.0, 1.0], (LEVELS, 4))
    leak = rng.uniform(0.2, 0.5, LEVELS)
    leak[7] = rng.uniform(0.6, 0.9)  # the open entry hole
    # The club set each level's gain by ear: a test drop onto the plate had to give a
    # clear click (0.12-0.4 V) on the serial plotter. E6 resistor ratios, 2.2 to 47.
    e6 = np.array([2.2, 3.3, 4.7, 6.8, 10.0, 15.0, 22.0, 33.0, 47.0])
    gain = np.zeros(LEVELS)
    for lv in range(LEVELS):
        f = mode_f[lv, 0]
        resp = disc_s[lv] * 1e-3 * abs(disc_phi[lv, 0]) * 0.7
        if coupling[lv] == "foam":
            resp /= math.sqrt(1 + foam_q[lv] ** 2 * (f / foam_f[lv] - foam_f[lv] / f) ** 2)
        if f_aa[lv] > 0:
            resp /= math.sqrt(1 + (f / f_aa[lv]) ** 2)
        want = rng.uniform(0.12, 0.4) / max(resp, 1e-6)
        gain[lv] = e6[int(np.argmin(np.abs(np.log(e6) - math.log(want))))]

    return Tower(
        seed=seed, device_id=device_id, fw=fw, adc=adc, adc_bits=bits, piezo_rate_hz=rate,
        set_period_us=float(period_us), chan_skew_us=skew, sets_per_msg=sets_per_msg,
        vref=float(vref), vcc=vcc, opamp=opamp, adc_noise_lsb=noise_lsb, dnl_sigma=dnl,
        load_chip=chip, load_rate_hz=int(load_rate), conv_rate_hz=conv_rate,
        load_noise_counts=load_noise, load_hum_counts=load_hum, clock=clock,
        boot_to_first_set_s=float(rng.uniform(0.05, 0.3)), cells=cells, capacity_g=cap,
        rated_mv_v=ro, orient=orient, shunt=shunt, cpg=cpg, offset=offset, plate_g=plate_g,
        creep_frac=creep, creep_tau_s=creep_tau, fast_creep_frac=fast, fast_tau_s=fast_tau,
        zero_tc_g_per_c=zero_tc, moisture_g_per_rh=moisture, cell_f_hz=cell_f,
        cell_zeta=cell_zeta, coupling=coupling, disc_s=disc_s, foam_f_hz=foam_f,
        foam_q=foam_q, gain=gain.astype(float), f_hp1=f_hp1, f_hp2=f_hp2,
        f_aa=f_aa.astype(float), bias_v=bias, vos_v=vos, hum_uv=hum,
        cable_xtalk=float(rng.uniform(0.002, 0.01)), mux_eps=mux_eps, plate_a_m=plate_a,
        hole_m=hole, hole_c=hole_c, entry_m=float(entry), entry_c=entry_c,
        floor_h_m=0.031, mode_f=mode_f, mode_q=mode_q, disc_phi=disc_phi,
        wall_psi=wall_psi, leak=leak, wall_w=float(rng.uniform(0.18, 0.35)),
        base_w=float(rng.uniform(0.85, 0.95)), cube_side_m=side, cube_mass_g=mass,
        restitution=float(rng.uniform(0.25, 0.45)), mains_hz=50.0,
    )


# =====================================================================================
# The scene: what happens, in real seconds (real 0 = the first sample set)
# =====================================================================================


@dataclass
class Cube:
    """A wooden cube in the game."""

    fid: int
    colour: str
    mass_g: float
    level: int = -1
    x: float = 0.0
    y: float = 0.0
    t_rest: float = 0.0


@dataclass
class Impact:
    """A strike on a plate (or, kind 'rim', on the roof around the entry hole)."""

    t: float
    level: int
    j: float  # N s
    tc: float  # contact time, s
    x: float
    y: float
    kind: str


@dataclass
class Ambient:
    """Something in the room: a noise that lasts (t0..t1)."""

    kind: str  # murmur, voice, bell, chair, touch, handling, scratch
    t0: float
    t1: float
    amp: float  # Pa for sound, N for vibration and hands
    seed: int
    levels: tuple[int, ...] = ()


@dataclass
class CellForce:
    """A force on load cells over t0..t1 (grams-force): hands, fingers, inertia."""

    kind: str  # hand, finger, knock
    t0: float
    t1: float
    levels: tuple[int, ...]
    amp_g: np.ndarray
    seed: int
    extra: float = 0.0


@dataclass
class Scene:
    """Everything that happens in one recording."""

    tw: Tower
    duration: float
    rng: np.random.Generator
    scenario: str
    impacts: list[Impact] = field(default_factory=list)
    wall_hits: list[tuple[float, int, float, float]] = field(default_factory=list)
    weights: list[tuple[float, int, float]] = field(default_factory=list)
    cell_forces: list[CellForce] = field(default_factory=list)
    ambient: list[Ambient] = field(default_factory=list)
    disconnects: list[tuple[float, float, int]] = field(default_factory=list)
    landings: list[dict[str, Any]] = field(default_factory=list)
    knockdowns: list[dict[str, Any]] = field(default_factory=list)
    removals: list[dict[str, Any]] = field(default_factory=list)
    lifts: list[dict[str, Any]] = field(default_factory=list)
    closes: list[dict[str, Any]] = field(default_factory=list)
    knocks: list[dict[str, Any]] = field(default_factory=list)
    touches: list[dict[str, Any]] = field(default_factory=list)
    noise: list[dict[str, Any]] = field(default_factory=list)
    fallouts: list[dict[str, Any]] = field(default_factory=list)
    hum_factor: float = 1.0
    room_temp_c: float = 0.0  # temperature rise over the session (long)
    room_rh: float = 0.0  # relative humidity rise, % (long)
    load_stream: bool = True
    game: dict[str, Any] | None = None
    games: list[dict[str, Any]] = field(default_factory=list)
    t_quiet: float = 5.0
    tower: list[list[Cube]] = field(default_factory=lambda: [[] for _ in range(LEVELS)])
    next_fid: int = 1
    next_group: int = 1

    def __post_init__(self) -> None:
        self.t_end = float(self.tw.clock.real(self.duration))

    # -- plumbing ----------------------------------------------------------------
    def new_cube(self, colour: str) -> Cube:
        mass = self.tw.cube_mass_g * float(self.rng.uniform(0.96, 1.04))
        cube = Cube(self.next_fid, colour, mass)
        self.next_fid += 1
        return cube

    def hit(self, t: float, level: int, j: float, kind: str = "plate",
            x: float | None = None, y: float | None = None, tc: float | None = None) -> None:
        """A strike on ``level``'s plate at real time ``t`` with impulse ``j`` (N s)."""
        if x is None or y is None:
            r = 0.6 * self.tw.plate_a_m[level] / 2
            ang = float(self.rng.uniform(0, 2 * math.pi))
            x, y = r * math.cos(ang), r * math.sin(ang)
        if tc is None:
            tc = {"plate": 1.0e-3, "edge": 0.35e-3, "rim": 0.4e-3, "rattle": 0.8e-3}.get(
                kind, 1.0e-3) * float(self.rng.uniform(0.7, 1.4))
        self.impacts.append(Impact(t, level, j, tc, x, y, kind))

    # -- a falling cube -----------------------------------------------------------
    def _over_hole(self, level: int, x: float, y: float) -> float:
        """Chebyshev distance of (x, y) from the centre of ``level``'s hole."""
        cx, cy = self.tw.hole_c[level]
        return max(abs(x - cx), abs(y - cy))

    def _clip_to_plate(self, level: int, x: float, y: float) -> tuple[float, float]:
        lim = self.tw.plate_a_m[level] / 2 - self.tw.cube_side_m / 2
        return float(np.clip(x, -lim, lim)), float(np.clip(y, -lim, lim))

    def _fall(self, cube: Cube, t: float, level: int, v: float, x: float, y: float,
              impacts: list[list[float]], can_knock: bool, first_impact: list[float],
              wedges: list[dict[str, Any]]) -> tuple[float, int, float, int | None]:
        """``cube`` leaves the hole above plate ``level`` (or the entry hole) at ``t`` with
        downward speed ``v``; follow it down until it rests.

        Returns (t_rest, floor, t_on_plate, fid of a cube it knocked down or None).
        """
        tw, rng = self.tw, self.rng
        s, m = tw.cube_side_m, cube.mass_g * 1e-3
        e = tw.restitution
        knocked: int | None = None
        vx, vy = rng.normal(0, V_LAT_ENTRY if can_knock else 0.03, 2)
        while True:
            dt = (-v + math.sqrt(v * v + 2 * G * tw.floor_h_m)) / G
            t += dt
            v = math.sqrt(v * v + 2 * G * tw.floor_h_m)
            x += float(vx * dt + rng.normal(0, JITTER_M))
            y += float(vy * dt + rng.normal(0, JITTER_M))
            x, y = self._clip_to_plate(level, x, y)
            if level > 0:
                hh = tw.hole_m[level] / 2
                d = self._over_hole(level, x, y)
                if d <= hh - s / 2 - 0.0005:
                    level -= 1  # through the hole without touching it
                    continue
                if d < hh + s / 2:  # it catches the hole's edge
                    jx = m * v * (1 + e) * float(rng.uniform(0.15, 0.5))
                    self._strike(t, level, jx, "edge", x, y, impacts, first_impact)
                    if rng.random() < 0.025:  # wedged across the edge for a moment
                        dwell = float(rng.uniform(0.15, 1.6))
                        frac = float(rng.uniform(0.4, 0.8))
                        self.weights.append((t + 0.01, level, frac * cube.mass_g))
                        through = rng.random() < 0.75
                        self.weights.append((t + dwell, level, -frac * cube.mass_g))
                        wedges.append({"t": t, "level": level, "dwell_s": dwell,
                                       "dropped": bool(through)})
                        t += dwell
                        if through:
                            self._strike(t, level, m * 0.2 * float(rng.uniform(0.3, 1.0)),
                                         "edge", x, y, impacts, first_impact)
                            level -= 1
                            v = 0.05
                            continue
                        v = 0.25
                        x, y = self._push_off_hole(level, x, y, hh + s / 2 + 0.001)
                    elif (d < hh and rng.random() < P_EDGE_IN) or \
                            (d >= hh and rng.random() < P_EDGE_OUT):
                        level -= 1
                        v *= 0.55
                        vx, vy = rng.normal(0, V_LAT_EDGE, 2)
                        continue
                    else:
                        v *= 0.7
                        x, y = self._push_off_hole(level, x, y, hh + s / 2 + 0.001)
            # on the plate: bounce until it rests, or tips into the hole
            t_on = t
            j = m * v * (1 + e)
            self._strike(t, level, j, "plate", x, y, impacts, first_impact)
            if can_knock and knocked is None:
                knocked = self._maybe_knock(t, level, x, y, j, cube.fid)
            vb = e * v
            tipped = False
            while vb >= 0.07:
                hop = float(rng.uniform(0.001, 0.012)) * min(1.5, vb / 0.4)
                ang = float(rng.uniform(0, 2 * math.pi))
                x, y = self._clip_to_plate(level, x + hop * math.cos(ang), y + hop * math.sin(ang))
                t += 2 * vb / G
                if level > 0 and self._over_hole(level, x, y) < tw.hole_m[level] / 2 - s / 4:
                    tipped = True
                    break
                j = m * vb * (1 + e)
                self._strike(t, level, j, "plate", x, y, impacts, first_impact)
                if can_knock and knocked is None:
                    knocked = self._maybe_knock(t, level, x, y, j, cube.fid)
                vb *= e
            if tipped:
                level -= 1
                v = 0.2
                vx, vy = rng.normal(0, 0.05, 2)
                continue
            t_settle = t
            for _ in range(int(rng.integers(1, 4))):  # the cube tumbles onto a face
                t += float(rng.uniform(0.01, 0.06))
                self._strike(t, level, m * float(rng.uniform(0.03, 0.08)) * (1 + e), "rattle",
                             x, y, impacts, first_impact)
            t_rest = t + 0.02
            cube.level, cube.x, cube.y, cube.t_rest = level, x, y, t_rest
            self.weights.append((t_settle, level, cube.mass_g))
            self.tower[level].append(cube)
            return t_rest, level, t_on, knocked

    def _push_off_hole(self, level: int, x: float, y: float, dist: float) -> tuple[float, float]:
        cx, cy = self.tw.hole_c[level]
        dx, dy = x - cx, y - cy
        if abs(dx) >= abs(dy):
            x = cx + math.copysign(max(abs(dx), dist), dx if dx else 1.0)
        else:
            y = cy + math.copysign(max(abs(dy), dist), dy if dy else 1.0)
        return self._clip_to_plate(level, x, y)

    def _strike(self, t: float, level: int, j: float, kind: str, x: float, y: float,
                impacts: list[list[float]], first_impact: list[float]) -> None:
        self.hit(t, level, j, kind, x, y)
        impacts.append([t, level, j * 1e3, kind])  # type: ignore[list-item]
        if not first_impact:
            first_impact.append(t)

    def _maybe_knock(self, t: float, level: int, x: float, y: float, j: float,
                     by_fid: int) -> int | None:
        """A strike near a resting cube pushes it; over the hole, it falls."""
        if level == 0:
            return None
        tw, rng = self.tw, self.rng
        s = tw.cube_side_m
        for q in list(self.tower[level]):
            if q.t_rest >= t:
                continue
            dist = math.hypot(q.x - x, q.y - y)
            if dist > 1.3 * s or rng.random() > 0.25:
                continue
            push = float(rng.uniform(0.003, 0.014)) * min(2.0, j / 1e-3)
            ux, uy = ((q.x - x) / dist, (q.y - y) / dist) if dist > 1e-6 else (1.0, 0.0)
            nx, ny = self._clip_to_plate(level, q.x + push * ux, q.y + push * uy)
            if self._over_hole(level, nx, ny) < tw.hole_m[level] / 2 - s / 4:
                self._knock_down(q, t + 0.004, level, by_fid)
                return q.fid
            q.x, q.y = nx, ny
        return None

    def _knock_down(self, q: Cube, t: float, level: int, by_fid: int) -> None:
        self.tower[level].remove(q)
        self.weights.append((t, level, -q.mass_g))
        impacts: list[list[float]] = []
        first: list[float] = [t]
        wedges: list[dict[str, Any]] = []
        cx, cy = self.tw.hole_c[level]
        t_rest, floor, t_on, _ = self._fall(q, t, level - 1, 0.1, cx, cy, impacts, False, first,
                                            wedges)
        self.knockdowns.append({"t": t, "floor_from": level, "floor_to": floor, "fid": q.fid,
                                "by_fid": by_fid})
        self.landings.append({
            "t": t_rest, "floor": floor, "cubes": 1, "knocked": True, "knocked_from": level,
            "t_release": t, "t_first_impact": t, "t_on_plate": t_on, "mass_g": q.mass_g,
            "fid": q.fid, "colour": q.colour, "kind": "knocked", "group": None,
            "thrown_with": 1, "drop_cm": 0.0, "impacts": impacts, "wedged": wedges,
        })

    def throw(self, t_release: float, colours: Sequence[str], kind: str = "throw",
              drop_cm: float | None = None, by: str = "child") -> float:
        """Cubes of ``colours`` (one, or two at once) dropped into the entry hole at
        ``t_release``; returns when the last of them came to rest."""
        tw, rng = self.tw, self.rng
        group = self.next_group
        self.next_group += 1
        t_last = t_release
        if drop_cm is None:
            drop_cm = float(np.clip(rng.lognormal(math.log(8.0), 0.6), 1.0, 35.0)) \
                if by == "child" else float(rng.uniform(1.5, 5.0))
        for i, colour in enumerate(colours):
            cube = self.new_cube(colour)
            t0 = t_release + (float(rng.uniform(0.0, 0.03)) if i else 0.0)
            h = drop_cm / 100 * float(rng.uniform(0.9, 1.1))
            v = math.sqrt(2 * G * h)
            t = t0 + math.sqrt(2 * h / G)
            half = (tw.entry_m - tw.cube_side_m) / 2
            x = tw.entry_c[0] + float(rng.uniform(-half, half))
            y = tw.entry_c[1] + float(rng.uniform(-half, half))
            impacts: list[list[float]] = []
            first: list[float] = []
            wedges: list[dict[str, Any]] = []
            p_rim = 0.25 if by == "child" else 0.05
            if rng.random() < p_rim + 0.005 * drop_cm:
                self._strike(t, 7, cube.mass_g * 1e-3 * v * (1 + tw.restitution) * 0.6, "rim",
                             x, y, impacts, first)
                t += float(rng.uniform(0.02, 0.08))
                v *= 0.35
            t_rest, floor, t_on, knocked = self._fall(cube, t, 7, v, x, y, impacts, True, first,
                                                      wedges)
            self.landings.append({
                "t": t_rest, "floor": floor, "cubes": 1, "knocked": False, "t_release": t0,
                "t_first_impact": first[0], "t_on_plate": t_on, "mass_g": cube.mass_g,
                "fid": cube.fid, "colour": colour, "kind": kind, "group": group,
                "thrown_with": len(colours), "drop_cm": round(drop_cm, 2), "impacts": impacts,
                "wedged": wedges, "caused_knockdown": knocked is not None,
            })
            t_last = max(t_last, t_rest)
            if knocked is not None:
                t_last = max(t_last, next(x["t"] for x in self.landings if x["fid"] == knocked))
        return t_last

    # -- hands, lifts, closes --------------------------------------------------------
    def _hand(self, t0: float, t1: float, levels: Sequence[int], amp_g: float,
              kind: str = "hand") -> None:
        amps = np.array([amp_g * float(self.rng.uniform(0.5, 1.2)) for _ in levels])
        self.cell_forces.append(CellForce(kind, t0, t1, tuple(levels), amps,
                                          int(self.rng.integers(0, 2**31))))

    def lift(self, t: float, exposed: int) -> list[Cube]:
        """Lift modules ``exposed``..7 at ``t`` (their contacts break at ``t``); returns the
        cubes that slipped out of the lifted stack onto the table."""
        rng = self.rng
        self.lifts.append({"t": t, "exposed": exposed})
        self.ambient.append(Ambient("handling", t - 0.7, t + 0.3, float(rng.uniform(0.02, 0.06)),
                                    int(rng.integers(0, 2**31)), tuple(range(LEVELS))))
        self._hand(t - 0.7, t + 0.2, range(exposed + 1), float(rng.uniform(1.0, 4.0)))
        out: list[Cube] = []
        if exposed < 7:
            self.disconnects.append((t, math.inf, exposed))
            for lv in range(exposed + 1, LEVELS):
                for q in list(self.tower[lv]):
                    edge = self.tw.hole_m[lv] / 2 + self.tw.cube_side_m / 2 \
                        - self._over_hole(lv, q.x, q.y)
                    p = 0.35 if edge > -0.003 else 0.01
                    if rng.random() < p:
                        tf = t + float(rng.uniform(0.1, 0.8))
                        self.tower[lv].remove(q)
                        self.weights.append((tf, lv, -q.mass_g))
                        self.fallouts.append({"t": tf, "floor_from": lv, "fid": q.fid,
                                              "colour": q.colour})
                        out.append(q)
        # the stack is set down beside the tower: a thump through the desk
        t_set = t + float(rng.uniform(0.8, 1.4))
        self._desk_thump(t_set, float(rng.uniform(1e-4, 4e-4)))
        return out

    def close(self, t: float, exposed: int) -> None:
        """The lifted stack goes back on at ``t`` (contacts make at ``t``)."""
        rng = self.rng
        self._desk_thump(t - float(rng.uniform(0.6, 1.0)), float(rng.uniform(1e-4, 3e-4)))
        self.ambient.append(Ambient("handling", t - 0.5, t + 0.4, float(rng.uniform(0.02, 0.05)),
                                    int(rng.integers(0, 2**31)), tuple(range(LEVELS))))
        self.wall_hits.append((t, exposed, float(rng.uniform(2e-3, 6e-3)),
                               float(rng.uniform(2e-3, 5e-3))))
        self._hand(t - 0.4, t + 0.5, range(LEVELS), float(rng.uniform(1.0, 4.0)))
        for k, (t0, t1, ex) in enumerate(self.disconnects):
            if t1 == math.inf and ex == exposed:
                self.disconnects[k] = (t0, t + float(rng.uniform(0.005, 0.02)), ex)
        self.closes.append({"t": t, "exposed": exposed})

    def remove(self, t: float, floor: int, cubes: Sequence[Cube]) -> None:
        """Fingers take ``cubes`` off the open ``floor``; they leave the plate at ``t``."""
        rng = self.rng
        mass = 0.0
        for q in cubes:
            self.tower[floor].remove(q)
            self.weights.append((t, floor, -q.mass_g))
            mass += q.mass_g
        press = float(rng.uniform(0.25, 0.5))
        self._hand(t - press, t + 0.12, [floor], float(rng.uniform(5.0, 25.0)), "finger")
        self.ambient.append(Ambient("scratch", t - press, t + 0.1, float(rng.uniform(2e-3, 6e-3)),
                                    int(rng.integers(0, 2**31)), (floor,)))
        for _ in range(len(cubes)):  # cubes click against each other and the plate
            self.hit(t - float(rng.uniform(0.0, press)), floor, float(rng.uniform(3e-5, 1.5e-4)),
                     "rattle")
        self.removals.append({"t": t, "floor": floor, "cubes": len(cubes), "mass_g": mass,
                              "fids": [q.fid for q in cubes],
                              "colours": [q.colour for q in cubes]})

    def touch(self, t0: float, t1: float, levels: Sequence[int], who: str) -> None:
        """A hand steadies the tower on ``levels`` from ``t0`` to ``t1``."""
        rng = self.rng
        self._hand(t0, t1, levels, float(rng.uniform(0.3, 2.5)))
        self.ambient.append(Ambient("touch", t0, t1, float(rng.uniform(0.01, 0.04)),
                                    int(rng.integers(0, 2**31)), tuple(levels)))
        self.touches.append({"t": t0, "t_end": t1, "levels": list(levels), "who": who})

    def _desk_thump(self, t: float, j: float) -> None:
        """The lifted stack is put down on (or picked up from) the desk beside the tower."""
        self.wall_hits.append((t, -1, j, float(self.rng.uniform(1.5e-3, 4e-3))))
        self.noise.append({"t": t, "t_end": t + 0.1, "kind": "stack_on_desk",
                           "level": round(j, 6)})

    def add_noise(self, kind: str, t0: float, t1: float, amp: float,
                  levels: tuple[int, ...] = ()) -> None:
        self.ambient.append(Ambient(kind, t0, t1, amp, int(self.rng.integers(0, 2**31)), levels))
        if kind != "murmur":
            self.noise.append({"t": t0, "t_end": t1, "kind": kind, "level": round(amp, 6)})


def table_knock(sc: Scene, t: float, *, bump: bool = False) -> None:
    """Somebody knocks on (or, ``bump``, bumps into) the desk at real time ``t``."""
    rng = sc.rng
    # a knuckle on a wooden desk top: the plates see a sharp jolt of their own inertia,
    # a few grams times a few cm/s; a knee or a bag bumping the desk: slower and bigger
    j = float(rng.uniform(6e-4, 2e-3)) * (2.0 if bump else 1.0)
    tc = float(rng.uniform(0.4e-3, 1.2e-3)) * (3.0 if bump else 1.0)
    sc.wall_hits.append((t, -1, j, tc))
    n = 1 if not bump else int(rng.integers(2, 4))
    accel = float(rng.uniform(2.0, 10.0)) * (1.5 if bump else 1.0)
    for i in range(1, n):
        sc.wall_hits.append((t + 0.03 * i * float(rng.uniform(0.8, 1.5)), -1, j * 0.4 ** i, tc))
    t_end = t + (0.25 if not bump else 0.5)
    sc.cell_forces.append(CellForce("knock", t, t_end, tuple(range(LEVELS)),
                                    np.full(LEVELS, accel), int(rng.integers(0, 2**31)),
                                    extra=tc * 3))
    sc.knocks.append({"t": t, "t_end": t_end, "kind": "desk_bump" if bump else "table_knock",
                      "accel_ms2": round(accel, 3)})


# =====================================================================================
# Scenarios
# =====================================================================================


def _background(sc: Scene, murmur_db: tuple[float, float], *, voices_per_min: float,
                chairs_per_min: float, bells: int, knocks_per_min: float,
                touches_per_min: float, t_from: float | None = None,
                knocks_min: int = 0) -> None:
    """The classroom around the tower (nothing before ``sc.t_quiet``).

    Nobody steadies the tower while it is open (both hands are busy with it), and
    the desk is not bumped just while fingers take cubes off a plate.
    """
    rng = sc.rng
    opened = [(lf["t"] - 1.5, cl["t"] + 1.5) for lf, cl in zip(sc.lifts, sc.closes,
                                                               strict=False)]
    picking = [(x["t"] - 1.5, x["t"] + 1.2) for x in sc.removals]

    def clear(t0: float, t1: float, spans: list[tuple[float, float]]) -> bool:
        return not any(a < t1 and t0 < b for a, b in spans)

    t0 = sc.t_quiet if t_from is None else t_from
    t1 = sc.t_end - 0.3
    t = t0
    while t < t1:  # background murmur in 10 s pieces
        db = float(rng.uniform(*murmur_db))
        sc.add_noise("murmur", t, min(t + 10.0, t1), 20e-6 * 10 ** (db / 20))
        t += 10.0
    span = max(0.0, t1 - t0)
    for _ in range(int(rng.poisson(voices_per_min * span / 60))):
        ts = float(rng.uniform(t0, t1 - 0.5))
        db = float(rng.uniform(68, 82))  # a child calling out next to the tower
        sc.add_noise("voice", ts, min(t1, ts + float(rng.uniform(0.4, 2.5))),
                     20e-6 * 10 ** (db / 20))
    for _ in range(int(rng.poisson(chairs_per_min * span / 60))):
        ts = float(rng.uniform(t0, t1 - 0.5))
        sc.add_noise("chair", ts, min(t1, ts + float(rng.uniform(0.4, 2.0))),
                     float(rng.uniform(5e-4, 3e-3)))
    for _ in range(bells):
        ts = float(rng.uniform(t0, max(t0 + 1, t1 - 6)))
        sc.add_noise("bell", ts, min(t1, ts + float(rng.uniform(3.0, 6.0))),
                     20e-6 * 10 ** (float(rng.uniform(78, 90)) / 20))
    for _ in range(max(knocks_min, int(rng.poisson(knocks_per_min * span / 60)))):
        tk = float(rng.uniform(t0, t1 - 1.0))
        if clear(tk - 0.1, tk + 0.6, picking):
            table_knock(sc, tk, bump=bool(rng.random() < 0.4))
    for _ in range(int(rng.poisson(touches_per_min * span / 60))):
        ts = float(rng.uniform(t0, t1 - 3.0))
        te = ts + float(rng.uniform(0.8, 3.0))
        top = int(rng.integers(3, LEVELS))
        if clear(ts, te, opened):
            sc.touch(ts, te, list(range(top - 2, top + 1)),
                     "teacher" if rng.random() < 0.4 else "child")


def _singles(sc: Scene, t: float, t_stop: float, *, doubles: float = 0.0) -> float:
    rng = sc.rng
    while t < t_stop:
        n = 2 if rng.random() < doubles else 1
        colours = [str(rng.choice(COLOURS)) for _ in range(n)]
        rest = sc.throw(t, colours, by="teacher" if rng.random() < 0.1 else "child")
        t = rest + float(rng.uniform(1.5, 5.0))
    return t


def _series(sc: Scene, t: float, t_stop: float) -> float:
    rng = sc.rng
    while t < t_stop:
        n = int(rng.integers(3, 9))
        who = "teacher" if rng.random() < 0.15 else "child"
        if rng.random() < 0.3:  # the teacher steadies the tower during the series
            sc.touch(t - 0.5, t + 0.8 * n + 1.0, [5, 6, 7], "teacher")
        last = t
        for _ in range(n):
            if t > t_stop:
                break
            last = max(last, sc.throw(t, [str(rng.choice(COLOURS))], by=who))
            t += float(rng.uniform(0.3, 0.8))
        t = max(t, last) + float(rng.uniform(2.5, 6.0))
    return t


def _plan_single(sc: Scene) -> None:
    _background(sc, (42, 52), voices_per_min=0.5, chairs_per_min=0.5, bells=0,
                knocks_per_min=0.0, touches_per_min=0.0)
    _singles(sc, sc.t_quiet, sc.t_end - 4.0)


def _plan_rapid(sc: Scene) -> None:
    _background(sc, (45, 55), voices_per_min=1.0, chairs_per_min=0.5, bells=0,
                knocks_per_min=0.0, touches_per_min=0.0)
    _series(sc, sc.t_quiet, sc.t_end - 6.0)


def _plan_noisy(sc: Scene) -> None:
    rng = sc.rng
    sc.hum_factor = float(rng.uniform(2.0, 4.0))  # fluorescent tubes and the projector
    _background(sc, (58, 70), voices_per_min=6.0, chairs_per_min=4.0,
                bells=int(rng.random() < 0.6), knocks_per_min=2.0, touches_per_min=1.5,
                knocks_min=1)
    t = sc.t_quiet
    while t < sc.t_end - 6.0:
        if rng.random() < 0.25:
            t = _series(sc, t, min(sc.t_end - 6.0, t + 4.0))
        else:
            t = _singles(sc, t, min(sc.t_end - 4.0, t + 0.1), doubles=0.15)


def _plan_acoustic(sc: Scene) -> None:
    rng = sc.rng
    sc.load_stream = False
    sc.hum_factor = float(rng.uniform(1.0, 2.0))
    _background(sc, (48, 60), voices_per_min=2.0, chairs_per_min=1.0, bells=0,
                knocks_per_min=0.5, touches_per_min=0.3)
    t = sc.t_quiet
    while t < sc.t_end - 6.0:
        if rng.random() < 0.3:
            t = _series(sc, t, min(sc.t_end - 6.0, t + 3.0))
        else:
            t = _singles(sc, t, min(sc.t_end - 4.0, t + 0.1), doubles=0.2)


def _plan_game(sc: Scene) -> None:
    game = Game(sc, sc.t_quiet, sc.t_end - 1.5, quick=sc.duration < 400)
    game.play()
    sc.game = game.result()
    _background(sc, (50, 62), voices_per_min=3.0, chairs_per_min=1.0, bells=0,
                knocks_per_min=0.3, touches_per_min=0.3)


def _plan_long(sc: Scene) -> None:
    rng = sc.rng
    sc.room_temp_c = float(rng.uniform(1.0, 3.0)) * sc.duration / 1800
    sc.room_rh = float(rng.uniform(4.0, 12.0)) * sc.duration / 1800
    sc.hum_factor = float(rng.uniform(1.0, 3.0))
    games = []
    t = sc.t_quiet
    while True:
        game = Game(sc, t, sc.t_end - 2.0, quick=False)
        game.play()
        games.append(game.result())
        t = game.t + float(rng.uniform(20.0, 60.0))  # scores read out, a new game agreed
        if not game.over or t > sc.t_end - 180.0:
            break
        t = _empty_tower(sc, t)
    sc.game = games[0]
    sc.games = games
    _background(sc, (50, 64), voices_per_min=3.0, chairs_per_min=1.5,
                bells=1 + int(rng.random() < 0.4), knocks_per_min=0.4, touches_per_min=0.3)


def _empty_tower(sc: Scene, t: float) -> float:
    """Between two games the teacher empties the tower floor by floor from the top."""
    rng = sc.rng
    for floor in range(LEVELS - 1, -1, -1):
        if not sc.tower[floor]:
            continue
        sc.lift(t, floor)
        cubes = list(sc.tower[floor])
        tr = t + float(rng.uniform(1.8, 2.6))
        parts = np.array_split(np.arange(len(cubes)), min(len(cubes), int(rng.integers(1, 4))))
        last = tr
        for part in parts:
            sc.remove(tr, floor, [cubes[int(i)] for i in part])
            last = tr
            tr += float(rng.uniform(1.6, 2.2))
        t_close = last + float(rng.uniform(1.5, 2.2))
        sc.close(t_close, floor)
        t = t_close + float(rng.uniform(2.0, 4.0))
    return t


PLANS: dict[str, Callable[[Scene], None]] = {
    "single": _plan_single, "rapid": _plan_rapid, "noisy": _plan_noisy, "game": _plan_game,
    "long": _plan_long, "damaged": _plan_game, "acoustic": _plan_acoustic,
}


class Game:
    """Mord im Arosa as 5-6 children play it (rules: rules/004_*.txt)."""

    def __init__(self, sc: Scene, t0: float, t_stop: float, *, quick: bool) -> None:
        rng = sc.rng
        self.sc, self.t, self.t_stop, self.quick = sc, t0, t_stop, quick
        n = 5 if rng.random() < 0.5 else 6
        self.players = [str(c) for c in rng.permutation(COLOURS)[:n]]
        self.supply = {p: 20 for p in self.players}
        self.sheet = {p: [0] * LEVELS for p in self.players}
        self.crime_scenes: set[int] = set()
        self.victims_found = 0
        self.phase = "prologue"
        self.turns: list[dict[str, Any]] = []
        self.tried: set[int] = set()
        self.hear = float(rng.uniform(0.55, 0.8))  # how well the children hear a floor
        self.guess: dict[tuple[str, int], int] = {}
        self.victim_fids: list[int] = []
        self.victim_thrower = ""
        self.over = False

    def _gap(self, lo: float, hi: float) -> float:
        f = 0.6 if self.quick else 1.0
        return float(self.sc.rng.uniform(lo, hi)) * f

    def _throw(self, colours: list[str], kind: str) -> bool:
        """Throw ``colours`` now if the session lasts long enough to see them rest."""
        if self.t + 2.5 > self.t_stop:
            return False
        rest = self.sc.throw(self.t, colours, kind=kind)
        self.t = rest + self._gap(1.0, 2.6)
        return True

    def _check_end(self) -> bool:
        if any(sum(v) >= 10 for v in self.sheet.values()) or \
                any(v <= 0 for v in self.supply.values()):
            self.over = True
            self.phase = "over"
        return self.over

    def play(self) -> None:
        sc, rng = self.sc, self.sc.rng
        self.victim_thrower = str(rng.choice(self.players))
        first = len(sc.landings)
        together = rng.random() < 0.35
        if not (self._throw(["red", "red"], "victim") if together else
                (self._throw(["red"], "victim") and self._throw(["red"], "victim"))):
            return
        self.victim_fids = [x["fid"] for x in sc.landings[first:] if x["kind"] == "victim"]
        for p in self.players:
            for _ in range(2):
                if not self._throw([p], "prologue"):
                    return
                self.supply[p] -= 1
        self.phase = "act1"
        for p in self.players:
            for fid in self.victim_fids:
                floor = self._where(fid)
                if rng.random() > self.hear:
                    floor = int(np.clip(floor + rng.choice([-2, -1, 1, 1, 2]), 0, 7))
                self.guess[(p, fid)] = floor
        turn = 0
        while not self.over:
            who = self.players[turn % len(self.players)]
            needed = 30.0 if not self.quick else 18.0
            if self.t + needed > self.t_stop:
                break
            if not self._turn(who):
                break
            turn += 1

    def _where(self, fid: int) -> int:
        for lv in range(LEVELS):
            if any(q.fid == fid for q in self.sc.tower[lv]):
                return lv
        return -1

    def _choose_act1(self, who: str) -> int:
        rng = self.sc.rng
        left = [fid for fid in self.victim_fids if self._where(fid) >= 0]
        opts = [self.guess.get((who, fid), 7) for fid in left]
        opts = [f for f in opts if f not in self.tried]
        if opts:
            return int(rng.choice(opts))
        untried = [f for f in range(LEVELS) if f not in self.tried]
        if not untried:
            self.tried.clear()
            untried = list(range(LEVELS))
        return int(rng.choice(untried))

    def _turn(self, who: str) -> bool:
        sc, rng = self.sc, self.sc.rng
        t_lift = self.t + self._gap(1.5, 4.0)
        action = "inspect"
        suspects: list[str] = []
        if self.phase == "act1":
            floor = self._choose_act1(who)
        else:
            own_on_sheet = sum(self.sheet[who])
            counts = np.array([sum(q.colour == who for q in sc.tower[lv]) for lv in range(LEVELS)])
            if own_on_sheet and rng.random() < 0.4:
                action = "cover"
                w = counts + 0.3 + 0.5 * (np.array(self.sheet[who]) > 0)
            else:
                action = "suspect"
                others = [p for p in self.players if p != who]
                k = 1 if rng.random() < 0.7 else 2
                suspects = [str(p) for p in rng.choice(others, k, replace=False)]
                w = np.array([sum(q.colour in suspects for q in sc.tower[lv])
                              for lv in range(LEVELS)]) * self.hear * 3 + 0.4
            floor = int(rng.choice(LEVELS, p=w / w.sum()))
        fell = sc.lift(t_lift, floor)
        found = list(sc.tower[floor])
        record: dict[str, Any] = {"by": who, "floor": floor, "action": action, "victims": 0,
                                  "t_lift": t_lift, "found": {}, "fell_out": len(fell)}
        for q in found:
            record["found"][q.colour] = record["found"].get(q.colour, 0) + 1
        to_sheet: list[Cube] = []
        penalties = 0
        victims = [q for q in found if q.colour == "red"]
        clues = [q for q in found if q.colour != "red"]
        if action == "inspect":
            if victims:
                record["victims"] = len(victims)
                self.crime_scenes.add(floor)
                self.victims_found += len(victims)
                to_sheet += victims
                for p in self.players:
                    if p == who:
                        continue
                    own = [q for q in clues if q.colour == p]
                    to_sheet += self._to_sheet(p, floor, own)
                    if self.over:
                        break
            else:
                self.tried.add(floor)
                penalties = 1
        elif action == "suspect":
            record["suspects"] = suspects
            if floor == 0 and not any(q.colour == who for q in clues):
                penalties = len(suspects)
            else:
                for p in suspects:
                    own = [q for q in clues if q.colour == p]
                    if own:
                        to_sheet += self._to_sheet(p, floor, own)
                        if self.over:
                            break
                    else:
                        penalties += 1
        else:
            n_own = sum(q.colour == who for q in clues)
            back_n = min(n_own, self.sheet[who][floor])
            self.sheet[who][floor] -= back_n
            self.supply[who] += back_n
            record["covered"] = back_n
            if n_own == 0:
                penalties = 1
        self._check_end()
        # take everything out of the open floor, in one to three handfuls
        # (the stack is put aside first; fingers go in once both hands are free)
        t = t_lift + max(1.8, self._gap(1.8, 3.0))
        last = t_lift
        if found:
            n_grabs = min(len(found), int(rng.integers(1, 4)))
            order = list(rng.permutation(len(found)))
            parts = np.array_split(np.array(order), n_grabs)
            for part in parts:
                sc.remove(t, floor, [found[int(i)] for i in part])
                last = t
                t += max(1.6, self._gap(1.6, 2.4))
        t_close = last + max(1.5, self._gap(1.5, 2.4)) if found \
            else t_lift + max(2.5, self._gap(2.5, 4.0))
        sc.close(t_close, floor)
        record["t_close"] = t_close
        self.turns.append(record)
        self.t = t_close + self._gap(1.2, 2.5)
        if self.over:
            return False
        back = [q for q in found if q not in to_sheet]
        i = 0
        while i < len(back):
            n = 2 if (len(back) - i >= 2 and rng.random() < 0.1) else 1
            if not self._throw([q.colour for q in back[i:i + n]], "throwback"):
                return False
            i += n
        for _ in range(penalties):
            if self.over or not self._throw([who], "penalty"):
                return False
            self.supply[who] -= 1
            if self._check_end():
                return False
        i = 0
        while i < len(fell):
            n = 2 if (len(fell) - i >= 2 and rng.random() < 0.5) else 1
            if not self._throw([q.colour for q in fell[i:i + n]], "throwback"):
                return False
            i += n
        if self.phase == "act1" and self.victims_found >= 2:
            self.phase = "act2"
        return True

    def _to_sheet(self, p: str, floor: int, own: list[Cube]) -> list[Cube]:
        """``p`` puts one clue per own clue found onto the sheet: from the supply, and when
        that runs short, from the open floor (those cubes leave the tower for the sheet)."""
        n = len(own)
        from_supply = min(n, self.supply[p])
        self.supply[p] -= from_supply
        self.sheet[p][floor] += n
        taken = own[:n - from_supply]
        self._check_end()
        return taken

    def result(self) -> dict[str, Any]:
        sc = self.sc
        tower = {c: [sum(q.colour == c for q in sc.tower[lv]) for lv in range(LEVELS)]
                 for c in [*self.players, "red"]}
        out: dict[str, Any] = {
            "players": self.players, "victim_thrower": self.victim_thrower,
            "phase": self.phase, "crime_scenes": sorted(self.crime_scenes),
            "sheet": self.sheet, "supply": self.supply, "tower": tower,
            "turns": [{k: (round(v, 6) if isinstance(v, float) else v) for k, v in t.items()}
                      for t in self.turns],
        }
        if self.over:
            pts = {}
            for p in self.players:
                total = 0
                for lv, n in enumerate(self.sheet[p]):
                    if lv in self.crime_scenes:
                        total += 3 * n
                    elif any(abs(lv - c) == 1 for c in self.crime_scenes):
                        total += 2 * n
                    else:
                        total += n
                pts[p] = total
            hi, lo = max(pts.values()), min(pts.values())
            out.update(suspicion=pts, culprits=[p for p in pts if pts[p] == hi],
                       winners=[p for p in pts if pts[p] == lo])
        return out


def simulate(seed: int, scenario: str, duration: float) -> Scene:
    """The scene of (seed, scenario, duration): what happens, not yet what is sensed."""
    if scenario not in SCENARIOS:
        raise ValueError(f"unknown scenario {scenario!r} (known: {', '.join(SCENARIOS)})")
    tw = make_tower(seed)
    code = SCENARIOS.index(scenario)
    rng = np.random.default_rng([seed, code, int(round(duration * 1000))])
    sc = Scene(tw, float(duration), rng, scenario)
    sc.t_quiet = float(rng.uniform(4.3, 7.0))
    PLANS[scenario](sc)
    sc.impacts.sort(key=lambda i: i.t)
    sc.weights.sort(key=lambda w: w[0])
    return sc


# =====================================================================================
# Sensing: piezo chain
# =====================================================================================


def _pulse(t: float, tc: float, area: float, fs: float) -> tuple[int, np.ndarray]:
    """A half-sine force pulse starting at ``t`` lasting ``tc`` with area ``area``, sampled
    at ``fs``: (first index, values in force units); the samples sum to area * fs."""
    i0 = int(math.ceil(t * fs))
    i1 = int(math.floor((t + tc) * fs))
    if i1 < i0:
        return int(round(t * fs)), np.array([area * fs])
    idx = np.arange(i0, i1 + 1)
    val = np.sin(math.pi * (idx / fs - t) / tc)
    s = val.sum()
    if s <= 0:
        return int(round(t * fs)), np.array([area * fs])
    return i0, val * (area * fs / s)


class _Filt:
    """A stateful IIR filter (b, a) applied block after block."""

    def __init__(self, b: np.ndarray, a: np.ndarray, x0: float = 0.0) -> None:
        self.b, self.a = np.asarray(b, float), np.asarray(a, float)
        self.zi = signal.lfilter_zi(self.b, self.a) * x0

    def __call__(self, x: np.ndarray) -> np.ndarray:
        y, self.zi = signal.lfilter(self.b, self.a, x, zi=self.zi)
        return np.asarray(y)


def _resonator(f: float, q: float, amp: float, fs: float) -> tuple[np.ndarray, np.ndarray]:
    """Impulse-invariant mode: impulse J gives J * amp * exp(-sigma t) sin(omega_d t)."""
    sigma = math.pi * f / q
    wd = 2 * math.pi * f * math.sqrt(max(1e-6, 1 - 1 / (4 * q * q)))
    r = math.exp(-sigma / fs)
    th = wd / fs
    return np.array([0.0, amp / fs * r * math.sin(th)]), np.array([1.0, -2 * r * math.cos(th),
                                                                    r * r])


def _bandpass(f: float, q: float, fs: float) -> tuple[np.ndarray, np.ndarray]:
    w0 = 2 * math.pi * f / fs
    alpha = math.sin(w0) / (2 * q)
    b = np.array([alpha, 0.0, -alpha])
    a = np.array([1 + alpha, -2 * math.cos(w0), 1 - alpha])
    return b / a[0], a / a[0]


def _event_signal(ev: Ambient, fs: float) -> np.ndarray:
    """The waveform of an ambient event over its whole span (Pa or N)."""
    rng = np.random.default_rng(ev.seed)
    n = max(1, int(math.ceil((ev.t1 - ev.t0) * fs)))
    t = np.arange(n) / fs
    fade = np.minimum(1.0, np.minimum(t, t[-1] - t) / 0.05 + 1e-3)
    if ev.kind in ("murmur", "voice"):
        sos = signal.butter(2, [250, min(3000, 0.45 * fs)], "bandpass", fs=fs, output="sos")
        x = signal.sosfilt(sos, rng.standard_normal(n))
        rate = 4.5 if ev.kind == "voice" else 3.0
        env = 0.55 + 0.45 * np.sin(2 * np.pi * rate * t + rng.uniform(0, 6.3)) \
            * np.sin(2 * np.pi * 0.7 * t + rng.uniform(0, 6.3))
        x = x / (x.std() + 1e-12) * env
    elif ev.kind == "bell":
        f0 = rng.uniform(800, 1300)
        x = np.zeros(n)
        strike = 1.0 / rng.uniform(18, 25)
        for p, amp in ((1.0, 1.0), (2.76, 0.5), (5.40, 0.25)):
            tt = np.mod(t, strike)
            x += amp * np.exp(-tt / 0.05) * np.sin(2 * np.pi * f0 * p * t)
            x += 0.5 * amp * np.sin(2 * np.pi * f0 * p * t)
        x /= x.std() + 1e-12
    elif ev.kind == "chair":
        sos = signal.butter(2, [60, 900], "bandpass", fs=fs, output="sos")
        x = signal.sosfilt(sos, rng.standard_normal(n))
        stick = np.abs(np.sin(2 * np.pi * rng.uniform(15, 40) * t)) ** 4
        x = x / (x.std() + 1e-12) * (0.3 + stick)
    elif ev.kind == "scratch":
        sos = signal.butter(2, [200, min(4000, 0.45 * fs)], "bandpass", fs=fs, output="sos")
        x = signal.sosfilt(sos, rng.standard_normal(n))
        x /= x.std() + 1e-12
    else:  # touch, handling: a hand's low-frequency push and the rub of skin on card
        sos = signal.butter(2, 40 if ev.kind == "touch" else 120, fs=fs, output="sos")
        x = signal.sosfilt(sos, rng.standard_normal(n))
        x /= x.std() + 1e-12
    return np.asarray(x * fade * ev.amp)


@dataclass
class PiezoOut:
    """The sampled piezo codes."""

    codes: np.ndarray  # (n_sets, 8) uint16


def render_piezo(sc: Scene) -> PiezoOut:
    """Strikes -> plate modes -> disc coupling -> front end -> ADC, at the ADC's own instants."""
    tw = sc.tw
    rate = tw.piezo_rate_hz
    fs = float(max(16000, 8 * rate))
    n_sets = int(math.ceil(sc.duration * 1e6 / tw.set_period_us))
    codes = np.zeros((n_sets, LEVELS), np.uint16)
    full = (1 << tw.adc_bits) - 1
    lsb = tw.vref / (1 << tw.adc_bits)
    # code transition levels: independent DNL per step, a gentle INL bow of half an LSB
    rng_dnl = np.random.default_rng([tw.seed, 0xD1])
    code_k = np.arange(full)
    thresholds = code_k + 0.5 + np.clip(rng_dnl.normal(0, tw.dnl_sigma, full), -0.45, 0.45) \
        + 0.5 * np.sin(np.pi * code_k / full) * rng_dnl.choice([-1.0, 1.0])
    noise_rng = np.random.default_rng([tw.seed, SCENARIOS.index(sc.scenario),
                                       int(round(sc.duration * 1000)), 0x4E])
    # filters per level
    modes: list[list[_Filt]] = []
    gains = np.zeros((LEVELS, 4))
    for lv in range(LEVELS):
        row = []
        for m in range(4):
            b, a = _resonator(tw.mode_f[lv, m], tw.mode_q[lv, m], 1.0, fs)
            row.append(_Filt(b, a))
            gains[lv, m] = tw.disc_s[lv] * tw.disc_phi[lv, m]
        modes.append(row)
    foam = [_Filt(*_bandpass(tw.foam_f_hz[lv], tw.foam_q[lv], fs))
            if tw.coupling[lv] == "foam" else None for lv in range(LEVELS)]
    hp1 = [_Filt(*signal.butter(1, tw.f_hp1[lv], "highpass", fs=fs)) for lv in range(LEVELS)]
    hp2 = [_Filt(*signal.butter(1, tw.f_hp2[lv], "highpass", fs=fs)) for lv in range(LEVELS)]
    base = tw.bias_v + tw.vos_v
    aa: list[_Filt | None] = []
    for lv in range(LEVELS):
        if tw.f_aa[lv] > 0:
            b_aa, a_aa = signal.butter(1, tw.f_aa[lv], fs=fs)
            aa.append(_Filt(b_aa, a_aa, x0=float(base[lv])))
        else:
            aa.append(None)
    v_hi = tw.vcc - 1.5 if tw.opamp == "lm324" else tw.vcc - 0.03
    v_lo = 0.02 if tw.opamp == "lm324" else 0.03
    press_w = np.array([1.0, 0.08, 0.08, -0.3])  # a real plate is not quite symmetric
    # forcing slots per level: 0..3 the modes struck directly (weights: where it was hit),
    # 4 through the walls (weights ``wall_psi``), 5 a uniform load on the whole plate
    # (sound pressure, or the plate's own inertia when the desk jolts: ``press_w``)
    pulses: list[tuple[int, np.ndarray, int, int, np.ndarray | None]] = []
    for imp in sc.impacts:
        src = 7 if imp.kind == "rim" else imp.level
        i0, val = _pulse(imp.t, imp.tc, imp.j, fs)
        if imp.kind != "rim":
            phi = _mode_shapes(imp.x, imp.y, tw.plate_a_m[imp.level])
            pulses.append((i0, val, imp.level, -1, phi))
        else:  # the roof round the entry hole: heard through the top module's walls
            pulses.append((i0, val, 7, 4, None))
        for lv in range(LEVELS):
            dist = abs(lv - src)
            if dist == 0:
                continue
            i0, val = _pulse(imp.t + 1.5e-4 * dist, imp.tc + 4e-4 * dist,
                             imp.j * tw.wall_w ** dist, fs)
            pulses.append((i0, val, lv, 4, None))
    for t, lv0, j, tc in sc.wall_hits:
        # lv0 = -1: the desk jolts the whole tower; each plate's own inertia drives it
        # (``j`` is then the impulse on the ground plate), a little less every floor up
        for lv in range(LEVELS):
            dist = abs(lv - lv0) if lv0 >= 0 else lv
            ww = tw.base_w if lv0 < 0 else 0.6
            widen = 1e-4 if lv0 < 0 else 3e-4
            i0, val = _pulse(t + 1.5e-4 * dist, tc + widen * dist, j * ww ** dist, fs)
            pulses.append((i0, val, lv, 5 if lv0 < 0 else 4, None))
    pulses.sort(key=lambda p: p[0])
    pulse_starts = np.array([p[0] for p in pulses], np.int64) if pulses else np.zeros(0, np.int64)
    ambient = sorted(sc.ambient, key=lambda a: a.t0)
    cache: dict[int, np.ndarray] = {}
    plate_area = tw.plate_a_m**2
    # disconnections: level -> list of (t0, t1)
    cut: dict[int, list[tuple[float, float]]] = {lv: [] for lv in range(LEVELS)}
    for t0, t1, ex in sc.disconnects:
        for lv in range(ex + 1, LEVELS):
            cut[lv].append((t0, t1))
    hum_amp = tw.hum_uv * 1e-6 * sc.hum_factor
    mains = 2 * np.pi * tw.mains_hz
    hum_phase = np.random.default_rng([tw.seed, 0x48]).uniform(0, 2 * np.pi, (LEVELS, 4))

    block = 1 << 15
    buf_t0 = 0  # fine index of buf[:, 0]
    buf = np.zeros((LEVELS, 0))
    done = 0  # fine samples rendered
    p_next = 0
    chunk = 4096
    last_v = base.copy()
    for n0 in range(0, n_sets, chunk):
        n1 = min(n_sets, n0 + chunk)
        s_inst = (np.arange(n0, n1)[:, None] * tw.set_period_us + 4.0
                  + np.arange(LEVELS)[None, :] * tw.chan_skew_us) / 1e6
        tau = np.asarray(tw.clock.real(s_inst))
        need = int(math.ceil(tau.max() * fs)) + 2
        while done < need:
            i0, i1 = done, done + block
            nb = block
            forc = np.zeros((LEVELS, 6, nb))
            # pulses that reach into this block
            while p_next < len(pulses) and pulses[p_next][0] + 4000 < i0:
                p_next += 1
            hi = int(np.searchsorted(pulse_starts, i1))
            for k in range(p_next, hi):
                p_i0, p_val, p_lv, p_slot, p_phi = pulses[k]
                a0, a1 = max(p_i0, i0), min(p_i0 + len(p_val), i1)
                if a1 <= a0:
                    continue
                seg = p_val[a0 - p_i0:a1 - p_i0]
                if p_phi is None:
                    forc[p_lv, p_slot, a0 - i0:a1 - i0] += seg
                else:
                    forc[p_lv, :4, a0 - i0:a1 - i0] += p_phi[:, None] * seg[None, :]
            # ambient sources
            t_lo, t_hi = i0 / fs, i1 / fs
            for ev in ambient:
                if ev.t0 > t_hi:
                    break
                if ev.t1 < t_lo:
                    cache.pop(id(ev), None)
                    continue
                if id(ev) not in cache:
                    cache[id(ev)] = _event_signal(ev, fs)
                x = cache[id(ev)]
                e0 = int(round(ev.t0 * fs))
                a0, a1 = max(e0, i0), min(e0 + len(x), i1)
                if a1 <= a0:
                    continue
                seg = x[a0 - e0:a1 - e0]
                sl = slice(a0 - i0, a1 - i0)
                if ev.kind in ("murmur", "voice", "bell"):
                    for lv in range(LEVELS):
                        forc[lv, 5, sl] += seg * plate_area[lv] * tw.leak[lv] * 3.0
                elif ev.kind == "chair":
                    for lv in range(LEVELS):
                        forc[lv, 5, sl] += seg * tw.base_w ** lv
                else:
                    for lv in ev.levels:
                        forc[lv, 4, sl] += seg
            u = np.arange(i0, i1) / fs
            out = np.zeros((LEVELS, nb))
            vib = np.zeros((LEVELS, nb))
            for lv in range(LEVELS):
                acc = np.zeros(nb)
                for m in range(4):
                    x = forc[lv, m] + tw.wall_psi[lv, m] * forc[lv, 4] \
                        + press_w[m] * forc[lv, 5]
                    acc += gains[lv, m] * modes[lv][m](x)
                ff = foam[lv]
                vib[lv] = ff(acc) if ff is not None else acc
            harm = [(np.sin(mains * mult * u), np.cos(mains * mult * u))
                    for mult in (1, 2, 3, 5)]
            disc = vib.copy()
            disc[1:] += tw.cable_xtalk * vib[:-1]
            disc[:-1] += tw.cable_xtalk * vib[1:]
            for lv in range(LEVELS):
                conn = np.ones(nb)
                for c0, c1 in cut[lv]:
                    conn[(u >= c0) & (u < c1)] = 0.0
                d = hp1[lv](disc[lv] * conn)
                hum = np.zeros(nb)
                for h, amp in enumerate((1.0, 0.1, 0.3, 0.15)):
                    sn, cs = harm[h]
                    ph = hum_phase[lv, h]
                    hum += amp * (sn * math.cos(ph) + cs * math.sin(ph))
                node = d + hum * hum_amp[lv] * (1.0 + 3.0 * (1.0 - conn))
                amp_out = node + (tw.gain[lv] - 1.0) * hp2[lv](node)
                v = np.clip(base[lv] + amp_out, v_lo, v_hi)
                aaf = aa[lv]
                out[lv] = aaf(v) if aaf is not None else v
            buf = np.concatenate([buf, out], axis=1)
            done = i1
        # interpolate at every channel's sampling instant
        lo = int(math.floor(tau.min() * fs)) - 1
        if lo > buf_t0:
            buf = buf[:, lo - buf_t0:]
            buf_t0 = lo
        pos = tau * fs - buf_t0
        ip = np.floor(pos).astype(np.int64)
        fr = pos - ip
        volts = np.empty_like(tau)
        for lv in range(LEVELS):
            row = buf[lv]
            volts[:, lv] = row[ip[:, lv]] * (1 - fr[:, lv]) + row[ip[:, lv] + 1] * fr[:, lv]
        # sample-and-hold residue of the channel converted just before
        prev = np.roll(volts, 1, axis=1)
        prev[0, 0] = last_v[7]
        prev[1:, 0] = volts[:-1, 7]
        volts = volts + tw.mux_eps[None, :] * (prev - volts)
        last_v = volts[-1].copy()
        x = volts / lsb + noise_rng.normal(0, tw.adc_noise_lsb, volts.shape)
        q = np.searchsorted(thresholds, x)
        codes[n0:n1] = np.clip(q, 0, full).astype(np.uint16)
    return PiezoOut(codes)


# =====================================================================================
# Sensing: load cells and their converters
# =====================================================================================


@dataclass
class LoadOut:
    """What the firmware read at each of its load ticks."""

    tick_s: np.ndarray  # stream time of each tick
    valid: np.ndarray  # (M,) uint8
    values: np.ndarray  # (M, 8) int32
    timeouts_at: list[float]  # stream times at which a timeout was counted


def _bspline_box(x: np.ndarray, width: int, order: int) -> np.ndarray:
    """``order`` causal moving averages of ``width`` samples (a sinc^order decimator)."""
    y = x
    for _ in range(order):
        c = np.cumsum(np.concatenate([np.zeros(width), y]))
        y = (c[width:] - c[:-width]) / width
    return y


def _env_slow(sc: Scene, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Room temperature rise (deg C) and humidity rise (%RH, as the card has taken it up)."""
    if sc.room_temp_c == 0 and sc.room_rh == 0:
        return np.zeros_like(t), np.zeros_like(t)
    rng = np.random.default_rng([sc.tw.seed, 0x7E, int(sc.duration)])
    frac = np.clip(t / max(sc.t_end, 1.0), 0, 1)
    wig = 0.1 * np.sin(2 * np.pi * t / rng.uniform(300, 600) + rng.uniform(0, 6))
    temp = sc.room_temp_c * (1 - np.exp(-3 * frac)) / (1 - math.exp(-3)) + wig
    rh_air = sc.room_rh * frac
    tau = 1200.0  # greyboard takes up moisture over tens of minutes
    dt = np.diff(t, prepend=t[0])
    rh = np.zeros_like(t)
    acc = 0.0
    for i in range(len(t)):
        acc += (rh_air[i] - acc) * (1 - math.exp(-dt[i] / tau))
        rh[i] = acc
    return temp, rh


def render_load(sc: Scene) -> LoadOut:
    """Forces on each plate -> cell (with its resonance, creep) -> converter -> ticks."""
    tw = sc.tw
    clk = tw.clock
    period = 1.0 / tw.load_rate_hz
    rng = np.random.default_rng([tw.seed, 0x10AD])
    phase = sc.tw.sets_per_msg * tw.set_period_us / 1e6 + float(rng.uniform(0.2, 1.0)) * period
    n_ticks = int(math.floor((sc.duration - phase) / period)) + 1
    tick_s = phase + np.arange(n_ticks) * period
    tick_s = tick_s[tick_s < sc.duration]
    tick_t = np.asarray(clk.real(tick_s))
    valid = np.zeros(len(tick_s), np.uint8)
    values = np.zeros((len(tick_s), LEVELS), np.int32)
    noise_rng = np.random.default_rng([tw.seed, SCENARIOS.index(sc.scenario),
                                       int(round(sc.duration * 1000)), 0x4C])
    fs = 8000.0 if tw.load_rate_hz > 100 else 4000.0
    t_end = sc.t_end + 0.5
    # slow environment on a coarse grid
    tg = np.arange(0, t_end + 1.0, 0.1)
    temp, rh = _env_slow(sc, tg)
    timeouts: list[float] = []
    w_by_level: dict[int, list[tuple[float, float]]] = {lv: [] for lv in range(LEVELS)}
    for t, lv, gr in sc.weights:
        w_by_level[lv].append((t, gr))
    conn_spans: dict[int, list[tuple[float, float]]] = {lv: [] for lv in range(LEVELS)}
    for t0, t1, ex in sc.disconnects:
        for lv in range(ex + 1, LEVELS):
            conn_spans[lv].append((t0, t1))
    for lv in range(LEVELS):
        rate = tw.conv_rate_hz[lv]
        tconv = 1.0 / rate
        width = max(1, int(round(fs * tconv)))
        # conversion completion instants, restarted after each reconnection (power-up)
        starts = [float(rng.uniform(0, tconv))]
        stops: list[float] = []
        for t0, t1 in sorted(conn_spans[lv]):
            stops.append(t0)
            starts.append(t1 + 4 * tconv)  # datasheet: output settles 4 periods after power-up
        stops.append(t_end)
        conv: list[np.ndarray] = []
        for a, b in zip(starts, stops, strict=True):
            if b > a:
                conv.append(a + np.arange(int((b - a) / tconv) + 1) * tconv)
        tc = np.concatenate(conv) if conv else np.zeros(0)
        tc = tc[tc < t_end]
        # static load: steps of weight on this plate
        steps = sorted(w_by_level[lv])
        st_t = np.array([s[0] for s in steps]) if steps else np.zeros(0)
        st_g = np.array([s[1] for s in steps]) if steps else np.zeros(0)
        # creep (slow) and environment at the conversion instants
        creep = np.zeros_like(tc)
        for t0, g in zip(st_t, st_g, strict=True):
            after = tc > t0
            dtc = tc[after] - t0
            creep[after] += g * (tw.creep_frac[lv] * (1 - np.exp(-dtc / tw.creep_tau_s[lv]))
                                 + tw.fast_creep_frac[lv] * (1 - np.exp(-dtc / tw.fast_tau_s[lv])))
        env_g = np.interp(tc, tg, temp) * tw.zero_tc_g_per_c[lv] \
            + np.interp(tc, tg, rh) * tw.moisture_g_per_rh[lv]
        # dynamic force on the fine grid, in chunks
        reading = np.zeros_like(tc)
        chunk_s = 60.0
        lead = 1.5
        b_res, a_res = signal.bilinear(
            [(2 * math.pi * tw.cell_f_hz[lv]) ** 2],
            [1, 2 * tw.cell_zeta[lv] * 2 * math.pi * tw.cell_f_hz[lv],
             (2 * math.pi * tw.cell_f_hz[lv]) ** 2], fs)
        hum_rng_phase = float(rng.uniform(0, 2 * math.pi))
        c0 = 0.0
        while c0 < t_end:
            c1 = min(t_end, c0 + chunk_s)
            g0 = max(0.0, c0 - lead)
            i0 = int(math.floor(g0 * fs))
            i1 = int(math.ceil(c1 * fs)) + 1
            u = np.arange(i0, i1) / fs
            n = len(u)
            static = np.zeros(n)
            if len(st_t):
                idx = np.searchsorted(u, st_t)
                add = np.zeros(n + 1)
                np.add.at(add, np.clip(idx, 0, n), st_g)
                static = np.cumsum(add)[:n]
            dyn = np.zeros(n)
            for it in sc.impacts:
                if it.t < g0 - 0.1 or it.t > c1:
                    continue
                k = int(round(it.t * fs)) - i0
                if not 0 <= k < n - 8:
                    continue
                jg = it.j / (G * 1e-3)  # N s -> gram-force seconds
                src = 7 if it.kind == "rim" else it.level
                if src == lv and it.kind != "rim":
                    dyn[k] += jg * fs  # the strike itself, on this plate's cell
                else:
                    # through the walls: the module jolts, the plate's inertia pushes and
                    # pulls on its cell (no net impulse)
                    share = 0.3 * tw.wall_w ** abs(src - lv)
                    m = max(1, int(0.003 * fs))
                    dyn[k] += jg * share * fs
                    dyn[min(n - 1, k + m)] -= jg * share * fs
            for cf in sc.cell_forces:
                if lv not in cf.levels or cf.t1 < g0 or cf.t0 > c1:
                    continue
                amp = float(cf.amp_g[list(cf.levels).index(lv)])
                a0 = int(math.floor(cf.t0 * fs)) - i0
                a1 = int(math.ceil(cf.t1 * fs)) - i0
                full_n = a1 - a0
                if full_n <= 2:
                    continue
                frng = np.random.default_rng([cf.seed, lv])
                tt = np.arange(full_n) / fs
                if cf.kind == "knock":
                    # the desk top jumps and comes back: a velocity bump of the base whose
                    # acceleration peaks at ``amp`` m/s2; the plate and its cubes lean on
                    # the cell with their inertia (upper floors rock more)
                    mass = tw.plate_g[lv] + sum(gr for t_, gr in w_by_level[lv] if t_ < cf.t0)
                    wk = cf.extra
                    dv = amp * wk / 0.6065
                    acc = -dv * (tt - 2 * wk) / wk**2 * np.exp(-0.5 * ((tt - 2 * wk) / wk) ** 2)
                    wave = -mass * acc / G * (1 + 0.15 * lv)
                elif cf.kind == "finger":
                    ramp = np.clip(tt / 0.08, 0, 1) * np.clip((tt[-1] - tt) / 0.05, 0, 1)
                    wob = signal.sosfilt(signal.butter(2, 8, fs=fs, output="sos"),
                                         frng.standard_normal(full_n))
                    wave = amp * ramp * (1 + 0.15 * wob / (wob.std() + 1e-12))
                else:  # hands: a grip that comes and goes, tremor 1-10 Hz
                    wob = signal.sosfilt(signal.butter(2, 10, fs=fs, output="sos"),
                                         frng.standard_normal(full_n))
                    wob /= wob.std() + 1e-12
                    ramp = np.clip(tt / 0.15, 0, 1) * np.clip((tt[-1] - tt) / 0.15, 0, 1)
                    wave = amp * ramp * (0.5 + 0.5 * wob)
                s0, s1 = max(0, a0), min(n, a1)
                if s1 > s0:
                    dyn[s0:s1] += wave[s0 - a0:s1 - a0]
            x_in = static + dyn
            zi = signal.lfilter_zi(b_res, a_res) * x_in[0]
            cell, _ = signal.lfilter(b_res, a_res, x_in, zi=zi)
            hum = tw.load_hum_counts[lv] * sc.hum_factor * np.sin(
                2 * np.pi * tw.mains_hz * u + hum_rng_phase)
            counts = tw.cpg[lv] * cell + hum
            y = _bspline_box(counts, width, 4)
            sel = (tc >= c0) & (tc < c1)
            if sel.any():
                reading[sel] = np.interp(tc[sel], u, y)
            c0 = c1
        raw = tw.offset[lv] + reading + tw.cpg[lv] * (creep + env_g)
        raw = raw + noise_rng.normal(0, tw.load_noise_counts[lv], len(raw))
        raw_i = np.clip(np.round(raw), -(1 << 23), (1 << 23) - 1).astype(np.int64)
        # the firmware's ticks: the newest conversion not read before
        j = np.searchsorted(tc, tick_t - 30e-6, side="right") - 1
        connected = np.ones(len(tick_t), bool)
        for t0, t1 in conn_spans[lv]:
            connected &= ~((tick_t >= t0) & (tick_t < t1))
        fresh = (j >= 0) & connected
        prev = np.concatenate([[-1], j[:-1]])
        fresh &= j != prev
        # a conversion from before a disconnection is stale once the module is back
        for _t0, t1 in conn_spans[lv]:
            fresh &= ~((tc[np.clip(j, 0, None)] < t1) & (tick_t >= t1) & (j >= 0))
        valid |= (fresh.astype(np.uint8) << lv).astype(np.uint8)
        values[fresh, lv] = raw_i[j[fresh]]
        # load timeouts: no fresh reading for more than three conversion periods
        ft = tick_s[fresh]
        if len(ft) > 1:
            gaps = np.diff(ft)
            limit = max(3 * tconv, 3 * period)
            for i in np.nonzero(gaps > limit)[0]:
                timeouts.append(float(ft[i] + limit))
    return LoadOut(tick_s, valid, values, sorted(timeouts))


# =====================================================================================
# The device's byte stream
# =====================================================================================


@dataclass
class Stream:
    """The messages of one boot of the device, as arrays ready to frame."""

    hello: bytes
    kinds: np.ndarray  # per message in order: 1 HELLO, 2 PIEZO, 3 LOAD, 4 STATUS
    stamp_s: np.ndarray  # stream time of the message's t_us (PIEZO/LOAD), else nan
    emit_s: np.ndarray  # stream time at which the device sent it
    rows: dict[int, np.ndarray]  # per type: (R, body length) bodies without t_us
    t_us: dict[int, np.ndarray]  # per type (2, 3): the u32 stamps
    index: dict[int, np.ndarray]  # per type: position of each row in the message order


def _hello_body(tw: Tower, n_load: int = LEVELS) -> bytes:
    return bytes([1, *tw.fw, LEVELS, n_load]) + tw.piezo_rate_hz.to_bytes(2, "little") \
        + tw.load_rate_hz.to_bytes(2, "little") + bytes([tw.adc_bits]) + tw.device_id


def _status_rows(tw: Tower, emit_s: np.ndarray, uptime0_s: float, timeouts: list[float],
                 seed: int) -> np.ndarray:
    rng = np.random.default_rng([seed, 0x57])
    n = len(emit_s)
    rows = np.zeros((n, 12), np.uint8)
    up = np.round((emit_s + uptime0_s) * 1000).astype(np.int64) % U32
    rows[:, 0:4] = up[:, None].astype("<u4").view(np.uint8).reshape(n, 4) if n else 0
    to = np.searchsorted(np.array(timeouts, float), emit_s, side="right").astype(np.int64)
    rows[:, 8] = (to & 0xFF).astype(np.uint8)
    rows[:, 9] = ((to >> 8) & 0xFF).astype(np.uint8)
    rate = tw.piezo_rate_hz
    per_set = 28e-6 if tw.adc == "avr10" else 8 * 16e-6
    cpu = rate * per_set + tw.load_rate_hz * 160e-6 + (rate * 16 + rate / tw.sets_per_msg * 13
                                                       + tw.load_rate_hz * 36) * 1.6e-6
    rows[:, 10] = np.clip(np.round(100 * cpu + rng.normal(0, 1.5, n)), 1, 99).astype(np.uint8)
    return rows


def build_stream(sc: Scene, pz: PiezoOut, ld: LoadOut | None) -> tuple[Stream, dict[str, Any]]:
    """Order and lay out every message the device sends after its (DTR) boot."""
    tw = sc.tw
    n = tw.sets_per_msg
    n_msgs = pz.codes.shape[0] // n
    first_set = np.arange(n_msgs) * n
    pz_dev_us = first_set * tw.set_period_us  # device us after the first set
    pz_stamp = (tw.clock.t_us_first + np.floor(pz_dev_us / 4) * 4).astype(np.int64)
    pz_emit = (pz_dev_us + (n - 1) * tw.set_period_us + 8 * tw.chan_skew_us + 20) / 1e6
    pz_rows = np.zeros((n_msgs, 1 + 16 * n), np.uint8)
    pz_rows[:, 0] = n
    samples = pz.codes[:n_msgs * n].astype("<u2").reshape(n_msgs, n * LEVELS)
    pz_rows[:, 1:] = samples.view(np.uint8).reshape(n_msgs, 16 * n)
    kinds = [np.full(n_msgs, 2)]
    emit = [pz_emit]
    stamps_s = [(pz_stamp - tw.clock.t_us_first) / 1e6]
    rows: dict[int, np.ndarray] = {2: pz_rows}
    t_us: dict[int, np.ndarray] = {2: pz_stamp % U32}
    if ld is not None:
        ld_dev = np.round(ld.tick_s * 1e6)
        ld_stamp = (tw.clock.t_us_first + np.floor(ld_dev / 4) * 4).astype(np.int64)
        m = len(ld.tick_s)
        lrows = np.zeros((m, 1 + 3 * LEVELS), np.uint8)
        lrows[:, 0] = ld.valid
        v24 = (ld.values.astype(np.int64) & 0xFFFFFF).astype("<u4").view(np.uint8)
        v24 = v24.reshape(m, LEVELS, 4)[:, :, :3].reshape(m, 3 * LEVELS)
        lrows[:, 1:] = v24
        kinds.append(np.full(m, 3))
        emit.append(ld.tick_s + 180e-6)
        stamps_s.append((ld_stamp - tw.clock.t_us_first) / 1e6)
        rows[3] = lrows
        t_us[3] = ld_stamp % U32
    uptime0 = tw.boot_to_first_set_s
    st_emit = np.arange(1.0, sc.duration + uptime0, 1.0) - uptime0 + 50e-6
    st_emit = st_emit[(st_emit > 0) & (st_emit < sc.duration)]
    rows[4] = _status_rows(tw, st_emit, uptime0, ld.timeouts_at if ld is not None else [],
                           tw.seed)
    kinds.append(np.full(len(st_emit), 4))
    emit.append(st_emit)
    stamps_s.append(np.full(len(st_emit), np.nan))
    all_kind = np.concatenate(kinds)
    all_emit = np.concatenate(emit)
    all_stamp = np.concatenate(stamps_s)
    order = np.argsort(all_emit, kind="stable")
    all_kind = all_kind[order]
    all_stamp = all_stamp[order]
    all_emit = all_emit[order]
    index: dict[int, np.ndarray] = {}
    for k in (2, 3, 4):
        pos = np.nonzero(all_kind == k)[0] + 1  # HELLO is message 0
        index[k] = pos
    kinds_out = np.concatenate([[1], all_kind])
    stamp_out = np.concatenate([[np.nan], all_stamp])
    emit_out = np.concatenate([[-1e-3], all_emit])
    info = {"status_emit_s": st_emit}
    return Stream(_hello_body(tw), kinds_out, stamp_out, emit_out, rows, t_us, index), info


def encode_stream(st: Stream, *, seq0: int = 0) -> tuple[bytes, np.ndarray, np.ndarray]:
    """Frame every message; returns (bytes, start offset per message, end offset per message
    (exclusive, after its 0x00))."""
    n_total = len(st.kinds)
    seqs = (seq0 + np.arange(n_total)) & 0xFFFF
    encoded: dict[int, np.ndarray] = {}
    for k, body in st.rows.items():
        pos = st.index[k]
        r = len(pos)
        stamp_len = 4 if k in (2, 3) else 0
        msg = np.zeros((r, 3 + stamp_len + body.shape[1]), np.uint8)
        msg[:, 0] = k
        msg[:, 1] = seqs[pos] & 0xFF
        msg[:, 2] = seqs[pos] >> 8
        if stamp_len:
            msg[:, 3:7] = st.t_us[k].astype("<u4").view(np.uint8).reshape(r, 4)
        msg[:, 3 + stamp_len:] = body
        crc = crc16_rows(msg) if r else np.zeros(0, np.uint16)
        full = np.concatenate([msg, np.stack([crc & 0xFF, crc >> 8], 1).astype(np.uint8)], 1) \
            if r else np.zeros((0, msg.shape[1] + 2), np.uint8)
        encoded[k] = cobs_encode_rows(full) if r else np.zeros((0, full.shape[1] + 2), np.uint8)
    hello = frame(1, seq0, st.hello)
    lengths = np.zeros(n_total, np.int64)
    lengths[0] = len(hello)
    for k, enc in encoded.items():
        lengths[st.index[k]] = enc.shape[1]
    ends = np.cumsum(lengths)
    starts = ends - lengths
    out = np.zeros(int(ends[-1]), np.uint8)
    out[:len(hello)] = np.frombuffer(hello, np.uint8)
    for k, enc in encoded.items():
        width = np.arange(enc.shape[1])
        for r0 in range(0, len(enc), 32768):
            idx = starts[st.index[k][r0:r0 + 32768]][:, None] + width[None, :]
            out[idx] = enc[r0:r0 + 32768]
    return out.tobytes(), starts, ends


# =====================================================================================
# Truth
# =====================================================================================


def _r(x: float) -> float:
    return round(float(x), 6)


def truth_of(sc: Scene) -> dict[str, Any]:
    """The truth file: every time in stream seconds."""
    clk = sc.tw.clock

    def s(t: float) -> float:
        return _r(float(clk.stream(t)))

    landings = []
    for x in sorted(sc.landings, key=lambda x: x["t"]):
        y = dict(x)
        # a multi-cube landing: cubes of one throw at rest on one floor within 0.5 s
        y["landed_with"] = 1 if x["group"] is None else sum(
            1 for z in sc.landings if z["group"] == x["group"] and z["floor"] == x["floor"]
            and abs(z["t"] - x["t"]) <= 0.5)
        for k in ("t", "t_release", "t_first_impact", "t_on_plate"):
            y[k] = s(x[k])
        y["mass_g"] = _r(x["mass_g"])
        y["impacts"] = [[s(i[0]), int(i[1]), _r(i[2]), i[3]] for i in x["impacts"]]
        y["wedged"] = [{**w, "t": s(w["t"]), "dwell_s": _r(w["dwell_s"])} for w in x["wedged"]]
        landings.append(y)
    doc: dict[str, Any] = {
        "format": TRUTH_FORMAT, "model": MODEL, "scenario": sc.scenario, "seed": sc.tw.seed,
        "duration_s": sc.duration, "cells": sc.tw.cells, "quiet_until": s(sc.t_quiet),
        "landings": landings,
        "knockdowns": [{**k, "t": s(k["t"])} for k in sc.knockdowns],
        "removals": [{**k, "t": s(k["t"]), "mass_g": _r(k["mass_g"])} for k in sc.removals],
        "lifts": [{**k, "t": s(k["t"])} for k in sc.lifts],
        "closes": [{**k, "t": s(k["t"])} for k in sc.closes],
        "knocks": [{**k, "t": s(k["t"]), "t_end": s(k["t_end"])} for k in sc.knocks],
        "touches": [{**k, "t": s(k["t"]), "t_end": s(k["t_end"])} for k in sc.touches],
        "noise": [{**k, "t": s(k["t"]), "t_end": s(k["t_end"])} for k in sc.noise],
        "fallouts": [{**k, "t": s(k["t"])} for k in sc.fallouts],
        "hum_factor": _r(sc.hum_factor),
        "load_stream": sc.load_stream,
        "tower": sc.tw.figures(),
    }
    if sc.game is not None:
        g = dict(sc.game)
        g["turns"] = [{**t, "t_lift": s(t["t_lift"]), "t_close": s(t["t_close"])}
                      for t in g["turns"]]
        doc["game"] = g
        if len(sc.games) > 1:
            doc["games"] = [{**gg, "turns": [{**t, "t_lift": s(t["t_lift"]),
                                              "t_close": s(t["t_close"])} for t in gg["turns"]]}
                            for gg in sc.games]
    if sc.room_temp_c or sc.room_rh:
        doc["room"] = {"temp_rise_c": _r(sc.room_temp_c), "rh_rise_pct": _r(sc.room_rh)}
    for k in ("knockdowns", "removals", "lifts", "closes", "knocks", "touches", "noise",
              "fallouts"):
        doc[k].sort(key=lambda x: x["t"])
    return doc


# =====================================================================================
# Rendering, damage, files
# =====================================================================================


@dataclass
class Rendered:
    """A rendered recording and what damage needs to know of it."""

    raw: bytes
    truth: dict[str, Any]
    stream: Stream
    starts: np.ndarray
    ends: np.ndarray
    load: LoadOut | None


def _render(sc: Scene) -> Rendered:
    pz = render_piezo(sc)
    ld = render_load(sc) if sc.load_stream else None
    st, _ = build_stream(sc, pz, ld)
    raw, starts, ends = encode_stream(st)
    return Rendered(raw, truth_of(sc), st, starts, ends, ld)


def render(sc: Scene) -> tuple[bytes, dict[str, Any]]:
    """The recording's bytes and its truth."""
    r = _render(sc)
    return r.raw, r.truth


def _msg_times(r: Rendered) -> np.ndarray:
    """A stream time for every message (STATUS/HELLO take their neighbour's)."""
    t = r.stream.stamp_s.copy()
    ok = ~np.isnan(t)
    idx = np.arange(len(t))
    t[~ok] = np.interp(idx[~ok], idx[ok], t[ok])
    return t


def damage(r: Rendered, sc: Scene) -> tuple[bytes, list[dict[str, Any]]]:
    """The clean stream ``r`` as a flaky classroom USB link delivered it."""
    rng = np.random.default_rng([sc.tw.seed, 0xDA, int(round(sc.duration * 1000))])
    raw = bytearray(r.raw)
    times = _msg_times(r)
    starts, ends = r.starts, r.ends
    n_msgs = len(starts)
    lo_t = min(9.0, 0.5 * sc.duration)  # HELLO and the first seconds come through
    hi_t = sc.duration - min(3.0, 0.15 * sc.duration)
    spans: list[dict[str, Any]] = []
    reboot_at: float | None = None
    if rng.random() < 0.5 and hi_t - lo_t > 20:
        reboot_at = float(rng.uniform(lo_t + 0.4 * (hi_t - lo_t), hi_t - 8.0))
    n_events = int(rng.integers(2, 5))
    drop = np.zeros(len(raw), bool)
    hit_msgs: list[tuple[int, int, str]] = []
    busy: list[tuple[float, float]] = []
    if reboot_at is not None:
        hi_t = reboot_at - 3.0  # the stream after a reboot is sent afresh
    for _ in range(n_events):
        if hi_t - lo_t < 2.0:
            break
        for _try in range(20):
            t0 = float(rng.uniform(lo_t, hi_t))
            if not any(a < t0 + 1.0 and t0 - 1.0 < b for a, b in busy):
                break
        else:
            continue
        kind = "bits" if rng.random() < 0.5 else "lost"
        i_msg = int(np.searchsorted(times, t0))
        if i_msg >= n_msgs - 2:
            continue
        b0 = int(starts[i_msg] + rng.integers(0, max(1, ends[i_msg] - starts[i_msg])))
        if kind == "bits":
            length = int(rng.uniform(0.02, 0.3) * 60_000)
            b1 = min(len(raw) - 1, b0 + length)
            n_flip = max(1, int((b1 - b0) * 8 * rng.uniform(1e-4, 2e-3)))
            pos = rng.integers(b0, b1, n_flip)
            bits = rng.integers(0, 8, n_flip)
            for p, bit in zip(pos, bits, strict=True):
                raw[int(p)] ^= 1 << int(bit)
            lo_b, hi_b = int(pos.min()), int(pos.max())
        else:
            length = int(rng.uniform(100, 20_000))
            b1 = min(len(raw) - 1, b0 + length)
            drop[b0:b1] = True
            lo_b, hi_b = b0, b1 - 1
        m0 = int(np.searchsorted(ends, lo_b, side="right"))
        m1 = int(np.searchsorted(ends, hi_b, side="right"))
        m1 = min(n_msgs - 1, m1 + 1)  # a hit delimiter takes the next message with it
        hit_msgs.append((m0, m1, kind))
        busy.append((float(times[m0]) - 0.5, float(times[m1]) + 0.5))
    # make sure no corrupted frame passes its CRC by chance
    chunks_ok = _crc_check_ranges(raw, drop, starts, ends, hit_msgs, r)
    del chunks_ok
    for m0, m1, kind in hit_msgs:
        t_a = float(times[m0])
        t_b = float(times[m1]) + sc.tw.sets_per_msg * sc.tw.set_period_us / 1e6
        spans.append({"t_start": _r(t_a - 0.002), "t_end": _r(t_b + 0.002), "kind": kind})
    out = np.frombuffer(bytes(raw), np.uint8)[~drop].tobytes()
    if reboot_at is not None:
        out, span = _reboot(r, sc, out, drop, reboot_at, rng)
        spans.append(span)
    spans.sort(key=lambda s: s["t_start"])
    return out, spans


def _crc_check_ranges(raw: bytearray, drop: np.ndarray, starts: np.ndarray, ends: np.ndarray,
                      hits: list[tuple[int, int, str]], r: Rendered) -> int:
    """Flip one more bit in any damaged frame whose CRC still checks (1 in 65,536)."""
    fixed = 0
    for m0, m1, kind in hits:
        if kind != "bits":
            continue
        for m in range(m0, m1 + 1):
            a, b = int(starts[m]), int(ends[m])
            chunk = bytes(raw[a:b - 1])
            if raw[b - 1] != 0 or b"\x00" in chunk:
                continue
            try:
                msg = cobs_decode_own(chunk)
            except ValueError:
                continue
            if len(msg) >= 5 and crc16_ccitt_false(msg[:-2]) == int.from_bytes(msg[-2:],
                                                                                 "little"):
                if bytes(raw[a:b]) != r.raw[a:b]:
                    raw[a + 1] ^= 0x01
                    fixed += 1
    return fixed


def _reboot(r: Rendered, sc: Scene, damaged: bytes, drop: np.ndarray, t_cut: float,
            rng: np.random.Generator) -> tuple[bytes, dict[str, Any]]:
    """The USB cable is knocked: power drops at ``t_cut``, the device boots again."""
    tw = sc.tw
    times = _msg_times(r)
    st = r.stream
    i_cut = int(np.searchsorted(times, t_cut))
    # bytes up to (and partly into) the message being sent when power went
    cut_byte = int(r.starts[i_cut] + rng.integers(1, max(2, r.ends[i_cut] - r.starts[i_cut])))
    kept = int((~drop[:cut_byte]).sum())
    pre = damaged[:kept]
    gap = float(rng.uniform(0.6, 2.5))  # brown-out, bootloader, setup
    data_idx = np.nonzero(~np.isnan(st.stamp_s))[0]
    last_before = data_idx[data_idx < i_cut][-1]
    t_last = float(st.stamp_s[last_before])
    first_after = data_idx[(data_idx > i_cut) & (st.kinds[data_idx] == 2)
                           & (st.stamp_s[data_idx] >= t_last + gap)][0]
    t_first = float(st.stamp_s[first_after])
    t_us_after = int(rng.uniform(0.05, 0.3) * 1e6) // 4 * 4
    keep = np.arange(first_after, len(st.kinds))
    keep = keep[st.kinds[keep] != 4]
    shift_us = t_us_after - int(round(t_first * 1e6))
    rows: dict[int, np.ndarray] = {}
    t_us: dict[int, np.ndarray] = {}
    index: dict[int, np.ndarray] = {}
    new_order = list(keep)
    # STATUS again every second of the new uptime
    boot_s = t_first - t_us_after / 1e6 - 0.02
    st_emit = np.arange(boot_s + 1.0, sc.duration, 1.0)
    kinds_new = np.concatenate([st.kinds[keep], np.full(len(st_emit), 4)])
    emit_new = np.concatenate([st.emit_s[keep], st_emit])
    order = np.argsort(emit_new, kind="stable")
    kinds_new = kinds_new[order]
    src = np.concatenate([keep, -np.ones(len(st_emit), np.int64)])[order]
    del new_order
    for k in (2, 3):
        pos_all = st.index[k]
        src_k = src[kinds_new == k]
        rowsel = np.searchsorted(pos_all, src_k)
        body = st.rows[k][rowsel].copy()
        stamps = (st.t_us[k][rowsel].astype(np.int64) - tw.clock.t_us_first) % U32
        new_stamps = (stamps + shift_us) % U32
        if k == 3:  # the converters lost power too: nothing fresh until they settle
            settle = 4.0 / tw.conv_rate_hz.min() + 0.01
            t_k = (new_stamps - t_us_after) / 1e6
            early = t_k < settle
            body[early] = 0
        rows[k] = body
        t_us[k] = new_stamps
        index[k] = np.nonzero(kinds_new == k)[0] + 1
    # counters start again from zero at boot (the power-up of the converters is expected)
    rows[4] = _status_rows(tw, st_emit - boot_s, 0.0, [], tw.seed + 1)
    index[4] = np.nonzero(kinds_new == 4)[0] + 1
    stream2 = Stream(st.hello, np.concatenate([[1], kinds_new]), np.zeros(len(kinds_new) + 1),
                     np.zeros(len(kinds_new) + 1), rows, t_us, index)
    post, _, _ = encode_stream(stream2)
    # after an unclean reset the firmware sends one 0x00 first, ending any cut frame
    out = pre + b"\x00" + post
    span = {"t_start": _r(t_last), "t_end": _r(t_first), "kind": "reboot",
            "gap_s": _r(t_first - t_last), "t_us_after": t_us_after}
    return out, span


def make_recording(seed: int, scenario: str, duration: float,
                   out: Path) -> tuple[Path, Path]:
    """Write ``{scenario}_t{seed}.bin`` and ``.truth.json`` into ``out`` (for ``damaged``
    also the clean twin ``damagedclean_t{seed}``); returns the two paths."""
    out.mkdir(parents=True, exist_ok=True)
    sc = simulate(seed, scenario, duration)
    r = _render(sc)
    bin_path = out / f"{scenario}_t{seed}.bin"
    truth_path = out / f"{scenario}_t{seed}.truth.json"
    truth = r.truth
    raw = r.raw
    if scenario == "damaged":
        clean = dict(truth)
        clean["scenario"] = "damagedclean"
        (out / f"damagedclean_t{seed}.bin").write_bytes(r.raw)
        (out / f"damagedclean_t{seed}.truth.json").write_text(json.dumps(clean, indent=1))
        raw, spans = damage(r, sc)
        truth = dict(truth)
        truth["damage"] = spans
    bin_path.write_bytes(raw)
    truth_path.write_text(json.dumps(truth, indent=1))
    return bin_path, truth_path


def _job(args: tuple[int, str, float, str]) -> str:
    seed, scenario, duration, out = args
    b, _ = make_recording(seed, scenario, duration, Path(out))
    return b.name


def main(argv: list[str] | None = None) -> int:
    """Command line (see the module docstring)."""
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
        print(f"make_recordings_ai: unknown scenario {bad[0]!r} (known: {', '.join(SCENARIOS)})",
              file=sys.stderr)
        return 2
    if args.towers < 1 or args.duration <= 0 or args.long_duration <= 0:
        print("make_recordings_ai: need --towers >= 1 and positive durations", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    jobs = [(seed, sc, args.long_duration if sc == "long" else args.duration, str(args.out))
            for sc in dict.fromkeys(args.scenarios)
            for seed in range(args.first_seed, args.first_seed + args.towers)]
    if args.workers > 1:
        with ProcessPoolExecutor(max_workers=args.workers) as pool:
            list(pool.map(_job, jobs))
    else:
        for job in jobs:
            _job(job)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
