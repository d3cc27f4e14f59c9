#!/usr/bin/env python3
"""Model W: a datasheet-driven, blind simulator of the towerear tower.

Writes device->host byte streams (contracts.md sections 1-2) and exact
ground truth (the ``towerear-crosscheck-truth/1`` format read by
tools/crosscheck/score.py) for four scenarios: ``single``, ``rapid``,
``noisy`` and ``game``.

Every level, every signal level and every timing is derived from a chain of
component figures (load-cell rated output, HX711 gain/noise/rate/settling,
ATmega328P ADC timing and reference, piezo disc charge constant and
capacitance against its bias network, greyboard plate stiffness and loss,
wooden cube mass, module heights and Newtonian fall times). See README.md.

Usage::

    .venv/bin/python tools/crosscheck_w/make_recordings_w.py --out DIR --towers 8 \
        --first-seed 1 --duration 120 [--scenarios single rapid noisy game] [--workers 2]

numpy + scipy + stdlib only; no project imports.
"""

from __future__ import annotations

import argparse
import binascii
import bisect
import json
import math
import struct
import sys
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from scipy import signal, special

MODEL = "W"
SCENARIOS = ("single", "rapid", "noisy", "game")
SCENARIO_TAG = {"single": 1, "rapid": 2, "noisy": 3, "game": 4}
TRUTH_FORMAT = "towerear-crosscheck-truth/1"
G = 9.81
N_LEVELS = 8

# ---------------------------------------------------------------------------
# Component figures (datasheets) and what follows from them
# ---------------------------------------------------------------------------

# HX711 (Avia Semiconductor datasheet).
HX_GAIN = 128                     # channel A, gain 128
HX_VBG = 1.25                     # V, on-chip bandgap
HX_R1, HX_R2 = 8.2e3, 20e3        # regulator divider of the common module:
#                                   AVDD = VBG (R1+R2)/R1 = 4.30 V
HX_NOISE_10 = 50e-9               # V rms input noise, gain 128, 10 SPS
HX_NOISE_80 = 90e-9               # V rms input noise, gain 128, 80 SPS
HX_SETTLE = 4                     # output settling 50 ms at 80 SPS = 4 periods
HX_RATE_NOM = 80.0
HX_FULL = 1 << 23
# Ratiometric code: D = (Vdiff / (0.5 AVDD / 128)) 2^23 = (Vdiff / AVDD) 256 2^23
COUNTS_PER_VV = 2 * HX_GAIN * HX_FULL          # 2.147e9 counts per V/V
# The two datasheet noise figures split into a part growing with the rate
# (white) and one that does not (low-frequency):
#   s^2(r) = w2 r + lf^2  ->  w2 = 8.0e-17 V^2/SPS, lf = 41 nV.
HX_W2 = (HX_NOISE_80**2 - HX_NOISE_10**2) / (80.0 - 10.0)
HX_LF = math.sqrt(HX_NOISE_10**2 - 10.0 * HX_W2)
# Noise bandwidth of a 4-stage boxcar (sinc^4) decimator: int sinc^8 = 151/315.
HX_ENBW_PER_SPS = 0.5 * 151.0 / 315.0
KB_T = 1.380649e-23 * 295.0

# Straight-bar cells of 100 g: rated output and tolerance (mV/V at capacity).
CELL_CAP_G = 100.0
CELL_TYPES = {
    "1.0mV/V": (1.0e-3, 0.15e-3),   # generic 100 g bar cell (YZC-133 family)
    "0.6mV/V": (0.6e-3, 0.15e-3),   # TAL221-class miniature cell
}
CELL_R_OHM = 1000.0               # bridge input/output resistance
CELL_ZERO_VV = 0.1e-3             # zero balance +-0.1 mV/V
CELL_DEFLECTION_FS = (0.2e-3, 0.35e-3)  # m at 100 g: sets the plate bounce mode

# Piezo disc, Murata 7BB-27-4L0 class: 27 mm brass, 0.30 mm; ceramic 19.7 mm,
# 0.23 mm; 20 nF +-30 % at 1 kHz.
PZ_C_NOM = 20e-9
PZ_C_TOL = 0.30
PZ_EL_R = 19.7e-3 / 2
PZ_AREA = math.pi * PZ_EL_R**2
PZ_E31F = 14.0                    # C/m^2, soft PZT in biaxial plane strain
#                                  (d31 ~ -160 pC/N over s11+s12 ~ 11.5e-12)
PZ_MASS_G = 1.9
BRASS_E, BRASS_T = 100e9, 0.30e-3
PZT_E, PZT_T = 63e9, 0.23e-3
# Front end (builder's choice): piezo from pin to GND, biased at VCC/2 by
# 2 x 1 Mohm 1 % (500 kohm Thevenin), 10 kohm series into the pin.
BIAS_R = 0.5e6
C_STRAY = 60e-12                  # 30 cm of wire + pin + spring contact
C_SH = 14e-12                     # ATmega328P sample-and-hold capacitor
C_PIN_OPEN = 20e-12               # pin + trace when the disc is lifted away

# ATmega328P ADC: 16 MHz / 64 = 250 kHz ADC clock (128 would give only
# 9.6 k conversions/s, too few for 8 x 2000); 13 clocks = 52 us per
# conversion, sample-and-hold 1.5 clocks (6 us) after the trigger. Timer1
# triggers one conversion every 62.5 us (16 kHz), channel 0..7 in turn.
ADC_CONV = 52e-6
ADC_SH = 6e-6
ADC_SLOT = 62.5e-6
PZ_RATE = 2000
DT = 1.0 / PZ_RATE                # one sample set, also the physics grid step

# Greyboard plates (module roofs) and the free square plate eigenvalues
# (Leissa, nu = 0.3): f = lam2 / (2 pi a^2) sqrt(D / rho h).
FREE_PLATE_LAM2 = np.array([13.47, 19.60, 24.27, 34.80, 35.6, 61.09, 63.69, 69.27, 70.1,
                            105.5, 109.0, 116.8, 131.4, 138.0])
F_MODE_MAX = 3600.0

# Serial link.
BAUD_BYTE_S = 10e-6               # 1 Mbaud, 8N1
TX_BUFFER = 64                    # Arduino HardwareSerial TX buffer
PIEZO_MIN_SETS = 8                # firmware sends a PIEZO message once 8 sets wait
PIEZO_MAX_SETS = 14
LOAD_TIMEOUT = 0.040              # s without DOUT low: HX711 declared absent
LOAD_READ_S = 140e-6              # 25 SCK pulses bit-banged + message build

# Geometry of the tower (about 25 cm high, eight boxes).
MODULE_H = (0.0300, 0.0315)       # m
PLATE_SIDE = (0.088, 0.092)       # m
HOLE_ENTRY = (15.5, 17.5)         # mm, entry hole side (module 7's roof)
HOLE_GROW = (0.7, 1.3)            # mm per level downwards ("smaller upwards")
HOLE_MISALIGN = (-4.5, 3.5)       # mm beyond the half side, top .. bottom
KNOCK_P = (0.03, 0.004, 0.015)    # precarious & struck near / far; near the edge & hit
BOUNCE_TRAVEL = 7.0               # mm, Rayleigh scale of a tumbling cube's travel

WOODS = (("beech", 720.0), ("maple", 650.0), ("lime", 500.0), ("pine", 520.0))
PLAYER_COLOURS = ("yellow", "blue", "brown", "gray", "black", "white")


def _rng(seed: int, *tags: int) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence([int(seed), *[int(t) for t in tags]]))


# ---------------------------------------------------------------------------
# Protocol: CRC, COBS, messages
# ---------------------------------------------------------------------------


def crc16_ccitt_false(data: bytes) -> int:
    """CRC-16/CCITT-FALSE, bit by bit (reference)."""
    crc = 0xFFFF
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) & 0xFFFF if crc & 0x8000 else (crc << 1) & 0xFFFF
    return crc


def crc16(data: bytes) -> int:
    """CRC-16/CCITT-FALSE via binascii (same polynomial, init 0xFFFF)."""
    return binascii.crc_hqx(data, 0xFFFF)


def cobs_encode(data: bytes) -> bytes:
    """Consistent Overhead Byte Stuffing (no trailing delimiter)."""
    out = bytearray()
    parts = data.split(b"\x00")
    for k, part in enumerate(parts):
        full = False
        while len(part) >= 254:
            out.append(255)
            out += part[:254]
            part = part[254:]
            full = True
        if full and not part and k == len(parts) - 1:
            break                 # a maximal block ending the data needs no code
        out.append(len(part) + 1)
        out += part
    return bytes(out)


def cobs_decode(enc: bytes) -> bytes:
    """Inverse of :func:`cobs_encode`; ValueError on malformed input."""
    out = bytearray()
    i = 0
    n = len(enc)
    while i < n:
        code = enc[i]
        if code == 0:
            raise ValueError("zero byte inside a COBS frame")
        if i + code > n:
            raise ValueError("COBS block runs past the end of the frame")
        if 0 in enc[i + 1:i + code]:
            raise ValueError("zero byte inside a COBS block")
        out += enc[i + 1:i + code]
        i += code
        if code < 255 and i < n:
            out.append(0)
    return bytes(out)


def frame(mtype: int, seq: int, body: bytes) -> bytes:
    """type | seq | body | crc, COBS-encoded, with the 0x00 delimiter."""
    msg = struct.pack("<BH", mtype, seq & 0xFFFF) + body
    msg += struct.pack("<H", crc16(msg))
    if len(msg) > 254:
        raise ValueError("message longer than 254 bytes")
    return cobs_encode(msg) + b"\x00"


def decode_stream(raw: bytes) -> dict[str, Any]:
    """Reference decoder: every message of a recording, with error counts."""
    out: dict[str, Any] = {
        "hello": None, "piezo_t_us": [], "piezo": [], "load_t_us": [], "load_valid": [],
        "load": [], "status": [], "crc_errors": 0, "framing_errors": 0, "seq_gaps": 0,
        "unknown_types": 0, "types": [], "n_piezo_sets": [],
    }
    last_seq: int | None = None
    n_pz = 8
    for chunk in raw.split(b"\x00")[:-1]:
        if not chunk:
            continue
        try:
            msg = cobs_decode(chunk)
        except ValueError:
            out["framing_errors"] += 1
            continue
        if len(msg) < 5 or crc16(msg[:-2]) != struct.unpack("<H", msg[-2:])[0]:
            out["crc_errors"] += 1
            continue
        mtype, seq = struct.unpack("<BH", msg[:3])
        if last_seq is not None and seq != (last_seq + 1) & 0xFFFF:
            out["seq_gaps"] += 1
        last_seq = seq
        body = msg[3:-2]
        out["types"].append(mtype)
        if mtype == 0x01:
            f = struct.unpack("<BBBBBBHHB", body[:11])
            out["hello"] = {"proto": f[0], "fw": f[1:4], "n_piezo": f[4], "n_load": f[5],
                            "piezo_rate_hz": f[6], "load_rate_hz": f[7], "adc_bits": f[8],
                            "device_id": body[11:19].hex()}
            n_pz = f[4]
        elif mtype == 0x02:
            t_us, n = struct.unpack("<IB", body[:5])
            arr = np.frombuffer(body[5:5 + 2 * n * n_pz], dtype="<u2").reshape(n, n_pz)
            out["piezo_t_us"].append(t_us)
            out["n_piezo_sets"].append(n)
            out["piezo"].append(arr)
        elif mtype == 0x03:
            t_us, valid = struct.unpack("<IB", body[:5])
            vals = []
            for k in range(8):
                b = body[5 + 3 * k:8 + 3 * k]
                v = b[0] | (b[1] << 8) | (b[2] << 16)
                vals.append(v - (1 << 24) if v & 0x800000 else v)
            out["load_t_us"].append(t_us)
            out["load_valid"].append(valid)
            out["load"].append(vals)
        elif mtype == 0x04:
            out["status"].append(struct.unpack("<IHHHBB", body[:12]))
        else:
            out["unknown_types"] += 1
    return out


# ---------------------------------------------------------------------------
# The kit: tower, cubes, sensors, electronics (depends on the seed only)
# ---------------------------------------------------------------------------


@dataclass
class Plate:
    """One level: plate (module roof), bar cell, HX711, piezo disc and front end."""

    level: int
    tare_g: float
    side: float                   # m
    hole_c: tuple[float, float]   # mm, hole centre (plate coordinates)
    hole_s: float                 # mm, hole side (0: ground floor, no hole)
    cell_xy: tuple[float, float]  # mm, load point of the bar cell
    f: np.ndarray                 # Hz, bending modes
    alpha: np.ndarray             # 1/s, modal decay rates
    mmass: np.ndarray             # kg, modal masses
    kx: np.ndarray                # rad/mm, mode-shape proxies
    ky: np.ndarray
    phx: np.ndarray
    phy: np.ndarray
    psi_v: np.ndarray             # V at the disc per m of modal displacement
    gamma: np.ndarray             # participation in base excitation
    f_bounce: float               # Hz, plate on the cell
    zeta_bounce: float
    cell_type: str
    s_vv: float                   # rated output V/V at 100 g
    zero_vv: float
    ecc: tuple[float, float]      # relative sensitivity change per mm off the load point
    creep: float
    creep_tau: float
    warm_fast_g: float
    warm_slow_g: float
    avdd: float
    rate: float                   # Hz, this HX711's own oscillator
    phase: float                  # s, conversion phase
    noise_white: float            # counts rms per reading
    noise_lf: float               # counts rms, slow part
    c_p: float                    # F, disc capacitance
    v_per_strain: float           # V per unit strain in the ceramic
    f_hp: float                   # Hz, high-pass of the disc against the bias network
    bias_lsb: float               # idle code offset from 512 (divider mismatch)

    @property
    def counts_per_g(self) -> float:
        return self.s_vv * COUNTS_PER_VV / CELL_CAP_G


@dataclass
class Kit:
    """Everything that depends on the tower's seed only."""

    seed: int
    plates: list[Plate]
    cube_a_mm: float
    wood: str
    rho: float
    cube_mass: dict[str, list[float]]
    h_mod: float
    entry_c: tuple[float, float]
    entry_s: float
    joint: np.ndarray             # piezo crosstalk per wall joint (levels L, L+1)
    cells: str
    vcc: float
    r_src: float
    adc_trans: np.ndarray         # code transition levels (LSB), DNL/INL of this chip
    adc_noise: float              # LSB rms, transition noise + USB supply noise
    sof_amp_v: float
    sof_hz: float
    mains_hz: float
    mains_v: float
    hum_cs: float                 # F, stray capacitance to mains wiring
    device_id: bytes
    fw: tuple[int, int, int]
    load_rate_hello: int
    t0_us: int                    # device time of sample set 0's trigger
    t_hello_us: int
    soft: float                   # contact-time factor of the board surface
    restitution: tuple[float, float]


def _plate_modes(rng: np.random.Generator, side: float, thick: float, e_mod: float,
                 rho: float, eta: float) -> tuple[np.ndarray, np.ndarray, float]:
    d_flex = e_mod * thick**3 / (12 * (1 - 0.3**2))
    c = math.sqrt(d_flex / (rho * thick))           # m^2/s
    f = FREE_PLATE_LAM2 * c / (2 * math.pi * side**2)
    f = f * rng.normal(1.0, 0.06, f.size)           # hole, disc, point support
    # Above the tabulated modes: the asymptotic modal density n = A/2 sqrt(rho h / D)
    spacing = 1.0 / (0.5 * side**2 / c)
    extra = []
    fx = float(f.max())
    while True:
        fx += spacing * rng.uniform(0.5, 1.5)
        if fx > F_MODE_MAX:
            break
        extra.append(fx)
    f = np.sort(np.concatenate([f, np.array(extra)]))
    f = f[f < F_MODE_MAX]
    # Board loss rises with frequency (paper fibre friction, glue lines).
    eta_f = eta * (1.0 + f / 2500.0)
    alpha = math.pi * f * eta_f                      # 1/s  (zeta = eta/2)
    return f, alpha, c


def make_kit(seed: int) -> Kit:
    """Draw one tower with its electronics from the seed."""
    rng = _rng(seed, 0)
    h_mod = float(rng.uniform(*MODULE_H))
    side = float(rng.uniform(*PLATE_SIDE))
    board_e = float(rng.uniform(2.0e9, 3.2e9))
    board_t = float(rng.uniform(1.4e-3, 1.8e-3))
    board_rho = float(rng.uniform(700.0, 850.0))
    board_eta = float(rng.uniform(0.025, 0.05))
    # Composite beam under the disc: neutral axis and local stiffening give the
    # fraction of the bare board's surface strain that reaches the ceramic.
    layers = [(board_e, board_t), (BRASS_E, BRASS_T), (PZT_E, PZT_T)]
    z = 0.0
    ea = []
    for e_l, t_l in layers:
        ea.append((e_l * t_l, z + t_l / 2, e_l, t_l))
        z += t_l
    z_n = sum(a * zc for a, zc, _, _ in ea) / sum(a for a, _, _, _ in ea)
    ei = sum(e_l * (t_l**3 / 12 + t_l * (zc - z_n) ** 2) for _, zc, e_l, t_l in ea)
    ei_board = board_e * board_t**3 / 12
    z_pzt = board_t + BRASS_T + PZT_T / 2 - z_n
    eta_bond = (ei_board / ei) * z_pzt / (board_t / 2)

    # Holes: smaller upwards, centres not aligned.
    entry_s = float(rng.uniform(*HOLE_ENTRY))
    grow = float(rng.uniform(*HOLE_GROW))
    centres = _hole_centres(rng, entry_s, grow)
    entry_c = centres[N_LEVELS]

    cells_mixed = rng.random() < 0.25
    main_type = "1.0mV/V" if rng.random() < 0.6 else "0.6mV/V"
    other = "0.6mV/V" if main_type == "1.0mV/V" else "1.0mV/V"
    types = [main_type] * N_LEVELS
    if cells_mixed:
        for k in rng.choice(N_LEVELS, size=int(rng.integers(1, 4)), replace=False):
            types[int(k)] = other
    batch = {t: float(rng.uniform(-0.6, 0.6)) for t in CELL_TYPES}   # batch centre in tolerances

    vbg = float(rng.normal(HX_VBG, 0.008))
    plates: list[Plate] = []
    for lv in range(N_LEVELS):
        f, alpha, c_flex = _plate_modes(rng, side, board_t, board_e, board_rho, board_eta)
        m_board = board_rho * board_t * side**2
        hole_s = 0.0 if lv == 0 else entry_s + grow * (N_LEVELS - lv)
        m_board -= board_rho * board_t * (hole_s * 1e-3) ** 2
        tare_g = m_board * 1e3 + PZ_MASS_G + float(rng.uniform(0.8, 1.6))   # + screws, spacer
        m_plate = tare_g * 1e-3
        mmass = m_plate * rng.uniform(0.2, 0.32, f.size)
        k_wave = np.sqrt(2 * np.pi * f / c_flex)                          # 1/m
        kr = k_wave * PZ_EL_R
        aperture = np.abs(2 * special.j1(kr) / kr)
        curv_loc = rng.uniform(-1.0, 1.0, f.size)                         # disc off the hole
        c_p = PZ_C_NOM * float(np.clip(rng.normal(1.0, 0.1), 1 - PZ_C_TOL, 1 + PZ_C_TOL))
        glue = float(rng.uniform(0.75, 1.1))                               # epoxy/CA bond line
        v_per_strain = PZ_E31F * PZ_AREA / (c_p + C_STRAY)
        psi_v = k_wave**2 * (board_t / 2) * eta_bond * glue * curv_loc * aperture * v_per_strain
        gamma = rng.uniform(0.2, 0.8, f.size) * np.where(np.arange(f.size) < 4, 1.0, 0.35)
        gamma *= rng.choice([-1.0, 1.0], f.size)
        kx = rng.uniform(0.5, 1.0, f.size) * k_wave * 1e-3
        ky = rng.uniform(0.5, 1.0, f.size) * k_wave * 1e-3
        phx = rng.uniform(0, 2 * np.pi, f.size)
        phy = rng.uniform(0, 2 * np.pi, f.size)
        k_cell = 0.981 / float(rng.uniform(*CELL_DEFLECTION_FS))
        f_bounce = math.sqrt(k_cell / m_plate) / (2 * math.pi)
        ctype = types[lv]
        nom, tol = CELL_TYPES[ctype]
        s_vv = nom + tol * float(np.clip(batch[ctype] + rng.normal(0, 0.25), -1, 1))
        avdd = vbg * (HX_R1 + HX_R2) / HX_R1 * float(rng.normal(1.0, 0.004))
        lsb_v = (avdd / HX_GAIN) / (1 << 24)
        rate = HX_RATE_NOM * float(np.clip(rng.normal(1.012, 0.012), 0.975, 1.05))
        board_factor = float(rng.uniform(1.1, 1.6))      # green module, no shield
        johnson = math.sqrt(4 * KB_T * CELL_R_OHM * HX_ENBW_PER_SPS * rate)
        white_v = math.sqrt(HX_W2 * rate) * board_factor
        noise_white = math.sqrt(white_v**2 + johnson**2) / lsb_v
        noise_lf = HX_LF * board_factor / lsb_v
        hole_c = (0.0, 0.0) if lv == 0 else centres[lv]
        cang = float(rng.uniform(0, 2 * math.pi))
        cr = float(rng.uniform(18, 28))
        plates.append(Plate(
            level=lv, tare_g=tare_g, side=side, hole_c=hole_c, hole_s=hole_s,
            cell_xy=(cr * math.cos(cang), cr * math.sin(cang)),
            f=f, alpha=alpha, mmass=mmass, kx=kx, ky=ky, phx=phx, phy=phy, psi_v=psi_v,
            gamma=gamma, f_bounce=f_bounce, zeta_bounce=float(rng.uniform(0.04, 0.1)),
            cell_type=ctype, s_vv=s_vv,
            zero_vv=float(rng.uniform(-CELL_ZERO_VV, CELL_ZERO_VV)),
            ecc=(float(rng.normal(0, 8e-4)), float(rng.normal(0, 8e-4))),
            creep=float(rng.uniform(2e-4, 8e-4)), creep_tau=float(rng.uniform(60, 200)),
            warm_fast_g=float(rng.normal(0, 0.012)), warm_slow_g=float(rng.normal(0, 0.008)),
            avdd=avdd, rate=rate, phase=float(rng.uniform(0, 1 / rate)),
            noise_white=noise_white, noise_lf=noise_lf,
            c_p=c_p, v_per_strain=v_per_strain,
            f_hp=1.0 / (2 * math.pi * BIAS_R * (c_p + C_STRAY)),
            bias_lsb=float(rng.normal(0, 1.8)),
        ))

    a_mm, (wood, rho) = _choose_cubes(rng)
    cube_mass: dict[str, list[float]] = {}
    for colour in (*PLAYER_COLOURS, "red"):
        n = 2 if colour == "red" else 20
        size = a_mm * (1 + rng.normal(0, 0.01, n))
        dens = rho * (1 + rng.normal(0, 0.05, n))
        paint = rng.uniform(1.01, 1.03, n)
        cube_mass[colour] = [float(v) for v in (size * 1e-1) ** 3 * dens * 1e-3 * paint]
    # Supply: USB VBUS (4.75..5.25 V) minus the Nano's Schottky, minus the
    # cable drop of ~75 mA (MCU, CH340, eight HX711 modules with their bridges).
    vbus = float(rng.uniform(4.85, 5.15))
    r_cable = float(rng.uniform(0.2, 0.6))
    r_diode = float(rng.uniform(0.2, 0.4))
    i_total = 0.015 + 0.010 + 0.002 + 8 * (1.5e-3 + 4.3 / CELL_R_OHM)
    vcc = vbus - 0.33 - i_total * (r_cable + r_diode)
    # ADC transition levels: code k starts at k LSB, displaced by a bounded INL
    # bow (+-0.5 LSB), an offset (datasheet: 2 LSB absolute accuracy) and
    # independent transition errors of 0.12 LSB (DNL ~0.17 LSB rms).
    kk = np.arange(1, 1024, dtype=float)
    inl = 0.5 * float(rng.uniform(-1, 1)) * np.sin(np.pi * kk / 1023)
    adc_trans = np.maximum.accumulate(kk + inl + float(rng.normal(0, 0.7))
                                      + rng.normal(0, 0.12, kk.size))
    usb_noise_v = float(rng.uniform(1.5e-3, 4e-3))
    adc_noise = math.hypot(0.35, 512 * usb_noise_v / vcc)
    mains_hz, mains_v = (50.0, 230.0) if rng.random() < 0.8 else (60.0, 120.0)
    slowest = min(p.rate for p in plates)
    t_hello_us = int(rng.integers(180_000, 260_000))
    return Kit(
        seed=seed, plates=plates, cube_a_mm=a_mm, wood=wood, rho=rho, cube_mass=cube_mass,
        h_mod=h_mod, entry_c=entry_c, entry_s=entry_s,
        joint=rng.uniform(0.03, 0.12, N_LEVELS - 1), cells="mixed" if cells_mixed else "matched",
        vcc=vcc, r_src=r_cable + r_diode, adc_trans=adc_trans, adc_noise=adc_noise,
        sof_amp_v=float(rng.uniform(1e-3, 4e-3)), sof_hz=1000.0 * (1 + float(rng.normal(0, 3e-4))),
        mains_hz=mains_hz, mains_v=mains_v, hum_cs=float(rng.uniform(0.05e-12, 0.3e-12)),
        device_id=bytes(int(v) for v in rng.integers(0, 256, 8)), fw=(1, 2, 0),
        load_rate_hello=int(round(slowest)), t0_us=t_hello_us + int(rng.integers(1500, 4000)),
        t_hello_us=t_hello_us, soft=float(rng.uniform(0.8, 1.3)),
        restitution=(float(rng.uniform(0.22, 0.3)), float(rng.uniform(0.42, 0.55))),
    )


def _hole_centres(rng: np.random.Generator, entry_s: float,
                  grow: float) -> list[tuple[float, float]]:
    """Hole centres, top (entry, index 8) downwards: each hole is set off the one
    above by a bit more than its own half side, so a cube falling straight
    lands beside it and has to bounce or tumble in."""
    c = [(0.0, 0.0)] * (N_LEVELS + 1)
    ang = float(rng.uniform(0, 2 * math.pi))
    c[N_LEVELS] = (float(rng.normal(0, 1.5)), float(rng.normal(0, 1.5)))
    for lv in range(N_LEVELS - 1, 0, -1):
        half = (entry_s + grow * (N_LEVELS - lv)) / 2
        depth = (N_LEVELS - 1 - lv) / (N_LEVELS - 2)          # 0 at the top, 1 at level 1
        d = half + HOLE_MISALIGN[0] + (HOLE_MISALIGN[1] - HOLE_MISALIGN[0]) * depth \
            + float(rng.normal(0, 1.0))
        ang += float(rng.uniform(0.6, 1.4)) * math.pi          # zig-zag around the axis
        # d is measured in the max-norm: the holes are square.
        norm = max(abs(math.cos(ang)), abs(math.sin(ang)))
        x = c[lv + 1][0] + d * math.cos(ang) / norm
        y = c[lv + 1][1] + d * math.sin(ang) / norm
        lim = 22.0
        c[lv] = (float(np.clip(x, -lim, lim)), float(np.clip(y, -lim, lim)))
    return c


def _choose_cubes(rng: np.random.Generator) -> tuple[float, tuple[str, float]]:
    while True:
        a_mm = float(rng.choice([8.5, 9.0, 10.0]))
        wood = WOODS[int(rng.integers(0, len(WOODS)))]
        m = (a_mm * 0.1) ** 3 * wood[1] * 1e-3
        if 0.32 <= m <= 0.78:
            return a_mm, wood


def kit_summary(kit: Kit) -> dict[str, Any]:
    """Derived numbers of the kit, for the truth file and the report."""
    masses = [m for col in kit.cube_mass.values() for m in col]
    return {
        "cube_mm": kit.cube_a_mm, "wood": kit.wood,
        "cube_mass_g": [round(min(masses), 4), round(float(np.mean(masses)), 4),
                        round(max(masses), 4)],
        "module_h_mm": round(kit.h_mod * 1e3, 2),
        "hole_mm": [round(p.hole_s, 2) for p in kit.plates] + [round(kit.entry_s, 2)],
        "cell_types": [p.cell_type for p in kit.plates],
        "counts_per_g": [round(p.counts_per_g, 1) for p in kit.plates],
        "noise_counts_rms": [round(math.hypot(p.noise_white, p.noise_lf), 1)
                             for p in kit.plates],
        "tare_g": [round(p.tare_g, 2) for p in kit.plates],
        "hx711_rate_hz": [round(p.rate, 3) for p in kit.plates],
        "avdd_v": [round(p.avdd, 3) for p in kit.plates],
        "plate_f1_hz": [round(float(p.f[0]), 1) for p in kit.plates],
        "bounce_hz": [round(p.f_bounce, 1) for p in kit.plates],
        "piezo_nf": [round(p.c_p * 1e9, 2) for p in kit.plates],
        "piezo_hp_hz": [round(p.f_hp, 2) for p in kit.plates],
        "vcc": round(kit.vcc, 3), "codes_per_v": round(1024 / kit.vcc, 1),
        "load_rate_hz": kit.load_rate_hello, "mains_hz": kit.mains_hz,
        "counts_per_g_mean": round(float(np.mean([p.counts_per_g for p in kit.plates])), 1),
    }


# ---------------------------------------------------------------------------
# The scene: what happens physically, on a grid of DT
# ---------------------------------------------------------------------------


@dataclass
class Impact:
    """A short force pulse: a cube, a finger or a stack on a plate or a wall."""

    t: float
    level: int
    j: float          # N s
    tau: float        # s, contact time (half sine)
    x: float          # mm
    y: float
    kind: str         # plate | edge | wall


@dataclass
class Cube:
    cid: str
    colour: str
    mass_g: float
    level: int = -1
    x: float = 0.0
    y: float = 0.0
    t_rest: float = 0.0
    precarious: bool = False


@dataclass
class Scene:
    """Physical happenings of one recording (plan time: set 0 trigger = 0 s)."""

    duration: float
    n_pre: int
    n: int
    impacts: list[Impact] = field(default_factory=list)
    steps: list[tuple[float, int, float]] = field(default_factory=list)     # t, level, grams
    fingers: list[tuple[float, float, int, float]] = field(default_factory=list)
    rubs: list[tuple[float, float, int, float]] = field(default_factory=list)  # t0,t1,level,V
    breaks: list[tuple[float, int]] = field(default_factory=list)  # t, first level lifted
    makes: list[tuple[float, int, bool]] = field(default_factory=list)  # t, first level, final
    a_vert: np.ndarray = field(default_factory=lambda: np.zeros(0))
    p_air: np.ndarray = field(default_factory=lambda: np.zeros(0))
    hum_cs: float = 0.0
    truth: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def idx(self, t: float) -> int:
        return int(round(t / DT)) + self.n_pre

    def grid_t(self) -> np.ndarray:
        return (np.arange(self.n) - self.n_pre) * DT


def _burst(arr: np.ndarray, sc: Scene, t0: float, f: float, peak: float, tau: float,
           phase: float = 0.0) -> None:
    """Add a damped sinusoid starting at t0 to a grid array."""
    i0 = max(sc.idx(t0), 0)
    n = int(min(6 * tau / DT, sc.n - i0))
    if n <= 0:
        return
    tt = (np.arange(n) + i0 - sc.n_pre) * DT - t0
    tt = np.maximum(tt, 0.0)
    arr[i0:i0 + n] += peak * np.exp(-tt / tau) * np.sin(2 * np.pi * f * tt + phase)


def _band_noise(rng: np.random.Generator, n: int, lo: float, hi: float) -> np.ndarray:
    sos = signal.butter(2, [lo, hi], btype="bandpass", fs=PZ_RATE, output="sos")
    x = signal.sosfilt(sos, rng.normal(0, 1, n + 400))[400:]
    s = float(np.std(x))
    return np.asarray(x / s if s > 0 else x)


def _envelope(n: int, ramp: int) -> np.ndarray:
    env = np.ones(n)
    r = min(ramp, n // 2)
    if r > 0:
        w = 0.5 - 0.5 * np.cos(np.linspace(0, np.pi, r))
        env[:r] = w
        env[n - r:] = w[::-1]
    return env


def _add_noise_span(arr: np.ndarray, sc: Scene, rng: np.random.Generator, t0: float,
                    t1: float, rms: float, lo: float, hi: float) -> None:
    i0, i1 = max(sc.idx(t0), 0), min(sc.idx(t1), sc.n)
    if i1 - i0 < 8:
        return
    arr[i0:i1] += rms * _band_noise(rng, i1 - i0, lo, hi) * _envelope(i1 - i0, (i1 - i0) // 6)


# ---------------------------------------------------------------------------
# Cube physics in the tower
# ---------------------------------------------------------------------------


class Tower:
    """Cubes falling, striking, bouncing, teetering and resting, level by level."""

    def __init__(self, kit: Kit, sc: Scene, rng: np.random.Generator) -> None:
        self.kit = kit
        self.sc = sc
        self.rng = rng
        self.rest: list[list[Cube]] = [[] for _ in range(N_LEVELS)]
        self.landings: list[dict[str, Any]] = []
        self.knockdowns: list[dict[str, Any]] = []

    # -- helpers ---------------------------------------------------------
    def _tau(self, m_kg: float, v: float) -> float:
        # Hertz-like contact of a wood corner on the board's paper surface.
        return 0.55e-3 * self.kit.soft * (m_kg / 5e-4) ** 0.4 * max(v, 0.05) ** -0.2

    def _weight(self, cube: Cube, level: int, t: float, sign: float) -> None:
        p = self.kit.plates[level]
        ex, ey = p.ecc
        eff = 1.0 + ex * (cube.x - p.cell_xy[0]) + ey * (cube.y - p.cell_xy[1])
        self.sc.steps.append((t, level, sign * cube.mass_g * eff))

    def _fall_time(self, v0: float, d: float) -> tuple[float, float]:
        v1 = math.sqrt(v0 * v0 + 2 * G * d)
        return (v1 - v0) / G, v1

    def _bounce(self, cube: Cube, level: int, t_hit: float, v_hit: float,
                x: float, y: float) -> tuple[float, float, float, float]:
        """Bounce sequence on a plate: impacts; returns t_contact, t_rest, x, y."""
        rng = self.rng
        m = cube.mass_g * 1e-3
        e_lo, e_hi = self.kit.restitution
        t, v = t_hit, v_hit
        n_b = 0
        while True:
            e = float(rng.uniform(e_lo, e_hi))
            self.sc.impacts.append(Impact(t, level, m * (1 + e) * v, self._tau(m, v), x, y,
                                          "plate"))
            n_b += 1
            v_next = e * v
            t += 2 * v_next / G
            if v_next < 0.07 or n_b >= 7:
                self.sc.impacts.append(Impact(t, level, m * v_next, self._tau(m, v_next), x, y,
                                              "plate"))
                break
            v = v_next
        t_contact = t
        # Rocking on an edge: a few small taps while the cube settles flat.
        t_last = t
        for i in range(int(rng.integers(0, 4))):
            t_last += float(rng.uniform(0.008, 0.03))
            self.sc.impacts.append(Impact(t_last, level, m * float(rng.uniform(0.01, 0.04))
                                          * 0.5**i, 1.5e-3, x, y, "plate"))
        # Tumbling carries it a few mm; then it slides to a stop (mu ~ 0.35).
        d = float(rng.rayleigh(BOUNCE_TRAVEL))
        ang = float(rng.uniform(0, 2 * math.pi))
        x, y = x + d * math.cos(ang), y + d * math.sin(ang)
        v_h = float(rng.uniform(0.0, 0.15))
        t_slide = v_h / (0.35 * G)
        half = self.kit.plates[level].side * 500 - cube_half(self.kit)
        if abs(x) > half or abs(y) > half:
            # Struck the wall of the box on the way.
            self.sc.impacts.append(Impact(t_hit + float(rng.uniform(0.01, 0.05)), level,
                                          m * float(rng.uniform(0.05, 0.2)) * 1.4, 0.5e-3,
                                          x, y, "wall"))
            x, y = float(np.clip(x, -half, half)), float(np.clip(y, -half, half))
        t_rest = max(t_last, t_contact + t_slide) + float(rng.uniform(0.002, 0.01))
        return t_contact, t_rest, x, y

    def resting_at(self, level: int, t: float) -> list[Cube]:
        return [c for c in self.rest[level] if c.t_rest <= t]

    # -- the path of one cube ---------------------------------------------
    def fall(self, cube: Cube, level: int, t: float, v: float, x: float, y: float,
             drop: float, depth: int = 0) -> tuple[int, float, float | None, bool]:
        """Fall inside ``level`` from height ``drop`` above its plate.

        Returns (floor, t_rest, t_first_impact, caused_knockdown).
        """
        rng = self.rng
        kit = self.kit
        m = cube.mass_g * 1e-3
        first: float | None = None
        caused = False
        b = cube_half(kit)
        while True:
            dt, v_hit = self._fall_time(v, drop)
            t_hit = t + dt
            x += float(rng.normal(0, 1.2))
            y += float(rng.normal(0, 1.2))
            p = kit.plates[level]
            if level > 0:
                hs = p.hole_s / 2
                ux, uy = x - p.hole_c[0], y - p.hole_c[1]
                u = max(abs(ux), abs(uy))
                foot = b * float(rng.uniform(1.0, 1.25))      # tumbling: corners stick out
                if u + foot < hs:                              # clean through the hole
                    t, v, drop, level = t_hit, v_hit, kit.h_mod, level - 1
                    continue
                if u < hs:                                     # corner catches the edge
                    frac = float(rng.uniform(0.12, 0.45))
                    e = float(rng.uniform(*kit.restitution))
                    self.sc.impacts.append(Impact(t_hit, level, m * (1 + e) * v_hit * frac,
                                                  self._tau(m, v_hit), x, y, "edge"))
                    first = t_hit if first is None else first
                    caused |= self._knock_check(level, t_hit, x, y, hard=False, depth=depth)
                    over = min(1.0, (hs - u) / foot)       # share of the cube over the hole
                    if rng.random() < 0.3 + 0.65 * over:
                        k = float(rng.uniform(0.2, 0.6))
                        x -= k * ux
                        y -= k * uy
                        t, v, drop, level = t_hit, v_hit * float(rng.uniform(0.5, 0.85)), \
                            kit.h_mod, level - 1
                        continue
                    # Thrown back onto the plate, beside the hole.
                    scale = (hs + b * float(rng.uniform(0.3, 1.0))) / max(u, 1e-6)
                    x, y = p.hole_c[0] + ux * scale, p.hole_c[1] + uy * scale
                    t_hit += float(rng.uniform(0.01, 0.03))
                    v_hit *= 0.4
            # Lands on the plate.
            first = t_hit if first is None else first
            caused |= self._knock_check(level, t_hit, x, y, hard=True, depth=depth)
            t_contact, t_rest, x, y = self._bounce(cube, level, t_hit, v_hit, x, y)
            cube.x, cube.y = x, y
            if level > 0:
                hs = p.hole_s / 2
                ux, uy = x - p.hole_c[0], y - p.hole_c[1]
                u = max(abs(ux), abs(uy))
                if u < hs:
                    # Centre over the hole: it tips over the edge and drops.
                    self._weight(cube, level, t_contact, +1)
                    t_tip = t_contact + float(rng.uniform(0.03, 0.25))
                    self._weight(cube, level, t_tip, -1)
                    x -= 0.3 * ux
                    y -= 0.3 * uy
                    t, v, drop, level = t_tip, 0.05, kit.h_mod, level - 1
                    continue
                cube.precarious = u < hs + 0.2 * self.kit.cube_a_mm   # overhangs > 30 %
            else:
                cube.precarious = False
            self._weight(cube, level, t_contact, +1)
            cube.level, cube.t_rest = level, t_rest
            self.rest[level].append(cube)
            return level, t_rest, first, caused

    def _knock_check(self, level: int, t: float, x: float, y: float, *, hard: bool,
                     depth: int) -> bool:
        """A strike on ``level`` may push a resting cube into the hole."""
        if level == 0 or depth >= 2:
            return False
        rng = self.rng
        p = self.kit.plates[level]
        knocked = False
        for r in list(self.resting_at(level, t)):
            dist = math.hypot(r.x - x, r.y - y)
            near_edge = max(abs(r.x - p.hole_c[0]), abs(r.y - p.hole_c[1])) \
                < p.hole_s / 2 + cube_half(self.kit) + 4.0
            if r.precarious:            # overhanging the edge already
                prob = KNOCK_P[0] if dist < 2.0 * self.kit.cube_a_mm else KNOCK_P[1]
            elif near_edge and dist < 1.3 * self.kit.cube_a_mm:
                prob = KNOCK_P[2]       # struck directly, close to the edge
            else:
                prob = 0.0
            if not hard:
                prob *= 0.5
            if prob and rng.random() < prob:
                self.knock_down(r, level, t + float(rng.uniform(0.01, 0.06)), depth + 1)
                return True         # one strike pushes one cube at most
        return knocked

    def knock_down(self, r: Cube, level: int, t: float, depth: int,
                   how: str = "pushed by a strike") -> int:
        """Resting cube ``r`` is pushed into the hole of ``level`` at ``t``."""
        p = self.kit.plates[level]
        self.rest[level].remove(r)
        self._weight(r, level, t, -1)
        x = p.hole_c[0] + 0.6 * (r.x - p.hole_c[0])
        y = p.hole_c[1] + 0.6 * (r.y - p.hole_c[1])
        floor, t_rest, first, _ = self.fall(r, level - 1, t, 0.08, x, y, self.kit.h_mod,
                                            depth=depth)
        self.record_knock(r, t, level, floor, t_rest, first, how)
        return floor

    def record_knock(self, r: Cube, t: float, level: int, floor: int, t_rest: float,
                     first: float | None, how: str) -> None:
        """Truth of a cube that left ``level`` without being thrown."""
        kid = len(self.knockdowns)
        self.knockdowns.append({"t": round(t, 6), "from_floor": level, "to_floor": floor,
                                "cube": r.cid, "how": how, "id": kid})
        self.landings.append({
            "t": round(t_rest, 6), "t_first_impact": round(first if first is not None else t_rest,
                                                           6),
            "floor": floor, "cubes": 1, "knocked": True, "from_floor": level,
            "caused_knockdown": False, "colour": r.colour, "cube": r.cid,
            "mass_g": round(r.mass_g, 4), "knockdown": kid})

    def throw(self, cube: Cube, t_release: float, kind: str) -> dict[str, Any]:
        """A player drops ``cube`` into the top of the shaft at ``t_release``."""
        rng = self.rng
        kit = self.kit
        h_rel = float(rng.uniform(0.01, 0.07))                # above the entry hole
        v_flick = float(rng.uniform(0.0, 0.4))                # a small downward throw
        t_in, v_in = self._fall_time(v_flick, h_rel)
        hs = kit.entry_s / 2 - cube_half(kit)
        x = kit.entry_c[0] + float(np.clip(rng.normal(0, 2.5), -hs, hs))
        y = kit.entry_c[1] + float(np.clip(rng.normal(0, 2.5), -hs, hs))
        rim_t: float | None = None
        if rng.random() < 0.15:                               # clips the entry rim
            rim_t = t_release + t_in
            self.sc.impacts.append(Impact(rim_t, 7, cube.mass_g * 1e-3 * v_in
                                          * float(rng.uniform(0.1, 0.4)), 0.5e-3, x, y, "wall"))
            v_in *= 0.8
        floor, t_rest, first, caused = self.fall(cube, N_LEVELS - 1, t_release + t_in, v_in, x,
                                                 y, kit.h_mod - 0.0015)
        if rim_t is not None:
            first = rim_t
        rec = {"t": round(t_rest, 6),
               "t_first_impact": round(first if first is not None else t_rest, 6),
               "floor": floor, "cubes": 1, "knocked": False, "caused_knockdown": caused,
               "colour": cube.colour, "cube": cube.cid, "mass_g": round(cube.mass_g, 4),
               "t_release": round(t_release, 6), "kind": kind}
        self.landings.append(rec)
        return rec


def cube_half(kit: Kit) -> float:
    return kit.cube_a_mm / 2


# ---------------------------------------------------------------------------
# Room, hands and table: accelerations and disturbances
# ---------------------------------------------------------------------------


def add_table_knock(sc: Scene, rng: np.random.Generator, t: float, kind: str) -> float:
    """A fist, a mug or an elbow on the table: the table's modes ring."""
    peak = {"fist": rng.uniform(2.0, 6.0), "mug": rng.uniform(0.6, 1.8),
            "elbow": rng.uniform(1.0, 3.0)}[kind]
    modes: list[tuple[float, float, float]] = [
        (float(rng.uniform(25, 40)), 1.0, 0.08), (float(rng.uniform(60, 90)), 0.7, 0.05),
        (float(rng.uniform(120, 200)), 0.45, 0.03), (float(rng.uniform(280, 450)), 0.3, 0.012),
        (float(rng.uniform(500, 800)), 0.2, 0.006)]
    if kind == "elbow":
        modes = modes[:3]
    for f, rel, tau in modes:
        _burst(sc.a_vert, sc, t, float(f), float(peak * rel), float(tau),
               float(rng.uniform(0, 2 * np.pi)))
    # The bang itself: 90-100 dB peak at the tower (0.6-2 Pa), 0.3-2 kHz.
    pa = float(rng.uniform(0.6, 2.0)) * (1.0 if kind == "fist" else 0.4)
    for f in rng.uniform(300, 2000, 4):
        _burst(sc.p_air, sc, t + 0.0015, float(f), pa / 2, 0.004, float(rng.uniform(0, 6)))
    return float(peak)


def add_handling(sc: Scene, rng: np.random.Generator, t0: float, t1: float, rms: float,
                 levels: list[int], rub_v: float) -> None:
    """Hands on the tower: low-frequency jostling and scratching of fingers."""
    _add_noise_span(sc.a_vert, sc, rng, t0, t1, rms, 1.5, 25.0)
    for lv in levels:
        if 0 <= lv < N_LEVELS:
            sc.rubs.append((t0, t1, lv, rub_v * float(rng.uniform(0.5, 1.0))))


def add_room(sc: Scene, rng: np.random.Generator, duration: float, quiet: float) -> list[str]:
    """A noisy room, quantified as table acceleration and sound pressure."""
    what = []
    n = sc.n
    # Footsteps on a suspended timber floor (the floor's fundamental at 8-16 Hz;
    # footfall responses of 0.03-0.25 m/s^2 are usual for lively floors) reach
    # the table top unchanged through its rigid legs.
    f_floor = float(rng.uniform(8, 16))
    t = quiet + float(rng.uniform(0, 10))
    while t < duration - 3:
        walk = float(rng.uniform(4, 10))
        step_dt = float(rng.uniform(0.5, 0.6))
        amp = float(np.exp(rng.uniform(np.log(0.03), np.log(0.25))))
        ts = t
        while ts < min(t + walk, duration - 1):
            _burst(sc.a_vert, sc, ts, f_floor, amp * float(rng.uniform(0.6, 1)),
                   float(rng.uniform(0.08, 0.2)), float(rng.uniform(0, 6)))
            ts += step_dt * float(rng.uniform(0.92, 1.08))
        what.append("footsteps")
        t += walk + float(rng.uniform(8, 30))
    # Washing machine spinning next door: 12-18 Hz, 0.004-0.015 m/s^2.
    if rng.random() < 0.5:
        tt = sc.grid_t()
        f = float(rng.uniform(12, 18))
        amp_w = float(rng.uniform(0.004, 0.015)) * (0.6 + 0.4 * np.sin(2 * np.pi * tt / 37.0))
        sc.a_vert += amp_w * np.sin(2 * np.pi * f * tt * (1 + 0.01 * np.sin(tt / 9)))
        what.append("washing machine")
    # A phone buzzing on the table: motor at 150-200 Hz, 0.1-0.4 m/s^2.
    for _ in range(int(rng.integers(1, 3))):
        if duration - 6 <= quiet + 2:
            break
        t = float(rng.uniform(quiet + 2, duration - 6))
        f = float(rng.uniform(150, 200))
        amp = float(rng.uniform(0.1, 0.4))
        for _k in range(int(rng.integers(3, 7))):
            on = float(rng.uniform(0.4, 0.8))
            i0, i1 = max(sc.idx(t), 0), min(sc.idx(t + on), n)
            if i1 > i0:
                tt = (np.arange(i0, i1) - sc.n_pre) * DT
                sc.a_vert[i0:i1] += amp * np.sin(2 * np.pi * f * tt) * _envelope(i1 - i0, 20)
            t += on + float(rng.uniform(0.3, 1.0))
        what.append("phone buzz")
    # A chair scraping / the table nudged: broadband 30-300 Hz.
    for _ in range(int(rng.integers(1, 4))):
        if duration - 3 <= quiet + 1:
            break
        t = float(rng.uniform(quiet + 1, duration - 3))
        _add_noise_span(sc.a_vert, sc, rng, t, t + float(rng.uniform(0.5, 1.5)),
                        float(rng.uniform(0.05, 0.2)), 30.0, 300.0)
        what.append("chair")
    # Someone leaning on the table: 0.5-3 Hz.
    for _ in range(int(rng.integers(1, 3))):
        if duration - 8 <= quiet + 1:
            break
        t = float(rng.uniform(quiet + 1, duration - 8))
        _add_noise_span(sc.a_vert, sc, rng, t, t + float(rng.uniform(3, 8)),
                        float(rng.uniform(0.01, 0.03)), 0.5, 3.0)
        what.append("leaning")
    # Music from a speaker: 74-83 dB SPL.
    if rng.random() < 0.6:
        i0 = max(sc.idx(float(rng.uniform(0, min(20.0, duration)))), 0)
        sc.p_air[i0:] += float(rng.uniform(0.1, 0.3)) * _band_noise(rng, n - i0, 50.0, 900.0)
        what.append("music")
    # A phone charger on the same extension lead beside the tower.
    sc.hum_cs *= float(rng.uniform(3, 8))
    return what


def add_talk(sc: Scene, rng: np.random.Generator, duration: float, quiet: float,
             density: float) -> None:
    """Players talking at the table: 60-72 dB SPL bursts."""
    t = quiet + float(rng.uniform(0, 3))
    while t < duration - 1:
        d = float(rng.uniform(0.8, 3.0))
        _add_noise_span(sc.p_air, sc, rng, t, min(t + d, duration), float(rng.uniform(0.02, 0.08)),
                        120.0, 900.0)
        t += d + float(rng.exponential(1.0 / density))


# ---------------------------------------------------------------------------
# Scenarios: how people play
# ---------------------------------------------------------------------------


@dataclass
class Player:
    colour: str
    supply: list[Cube]


class Planner:
    """Drives the tower through one scenario and keeps the truth."""

    def __init__(self, kit: Kit, sc: Scene, rng: np.random.Generator, duration: float) -> None:
        self.kit = kit
        self.sc = sc
        self.rng = rng
        self.duration = duration
        self.tower = Tower(kit, sc, rng)
        self.removals: list[dict[str, Any]] = []
        self.lifts: list[dict[str, Any]] = []
        self.closes: list[dict[str, Any]] = []
        self.knocks: list[dict[str, Any]] = []
        self.next_id: dict[str, int] = {}

    def cube(self, colour: str) -> Cube:
        i = self.next_id.get(colour, 0)
        self.next_id[colour] = i + 1
        return Cube(f"{colour}{i}", colour, self.kit.cube_mass[colour][i % 20])

    def brush(self, t: float) -> None:
        """A throwing hand touches the top module."""
        add_handling(self.sc, self.rng, t - 0.15, t + 0.15, float(self.rng.uniform(0.05, 0.2)),
                     [7], 0.01)

    # -- scenarios ---------------------------------------------------------
    def run_single(self, quiet: float, noisy: bool) -> None:
        rng = self.rng
        span = self.duration - quiet - 2.5
        n = max(1, int(round(float(rng.uniform(18, 22)) * span / (120 - 5.5 - 2.5))))
        if span < 1.0:
            return
        gap = span / n
        colours = list(rng.choice(PLAYER_COLOURS, size=int(rng.integers(3, 6)), replace=False))
        for i in range(n):
            t = quiet + (i + float(rng.uniform(0.1, 0.8))) * gap
            col = str(colours[i % len(colours)])
            if rng.random() < 0.05:
                self.brush(t)
            self.tower.throw(self.cube(col), t, "clue")
        if noisy:
            for _ in range(int(rng.integers(2, 5))):
                if self.duration - 2 <= quiet + 2:
                    break
                t = float(rng.uniform(quiet + 2, self.duration - 2))
                kind = str(rng.choice(["fist", "mug", "elbow"]))
                peak = add_table_knock(self.sc, rng, t, kind)
                self.knocks.append({"t": round(t, 6), "kind": kind, "peak_ms2": round(peak, 2)})

    def run_rapid(self, quiet: float) -> None:
        rng = self.rng
        t = quiet + float(rng.uniform(0.2, 1.0))
        colours = list(rng.choice(PLAYER_COLOURS, size=4, replace=False))
        who = 0
        while t < self.duration - 3.0:
            k = int(rng.integers(2, 5))
            col = str(colours[who % len(colours)])
            who += 1
            for _ in range(k):
                if t > self.duration - 2.0:
                    break
                self.tower.throw(self.cube(col), t, "series")
                t += float(rng.uniform(0.3, 0.8))
            t += float(rng.uniform(3.0, 6.0))

    # -- the game ------------------------------------------------------------
    def run_game(self, quiet: float) -> None:
        rng = self.rng
        n_pl = int(rng.integers(3, 6))
        cols = [str(c) for c in rng.choice(PLAYER_COLOURS, size=n_pl, replace=False)]
        players = [Player(c, [self.cube(c) for _ in range(20)]) for c in cols]
        victims = [self.cube("red"), self.cube("red")]
        end = self.duration - 1.5
        t = quiet + float(rng.uniform(0.3, 1.5))
        add_talk(self.sc, rng, self.duration, quiet, 0.5)
        thrower = int(rng.integers(0, n_pl))
        # Prologue: both victims, then two clues per player, in turn.
        for v in victims:
            if t > end:
                return
            self.tower.throw(v, t, "victim")
            t += float(rng.uniform(1.5, 3.0))
        for i in range(n_pl):
            pl = players[(thrower + i) % n_pl]
            for _ in range(2):
                if t > end:
                    return
                self.tower.throw(pl.supply.pop(), t, "prologue")
                t += float(rng.uniform(1.2, 2.5))
            t += float(rng.uniform(1.3, 2.5))
        # Act I / Act II turns.
        turn = int(rng.integers(0, n_pl))
        reds_found = 0
        sheet: dict[str, int] = {c: 0 for c in cols}
        while True:
            inv = players[turn % n_pl]
            t += float(rng.uniform(3.0, 9.0))          # deciding, talking
            if t + 22 > end:
                break
            act2 = reds_found >= 2
            victim_floors = [c.level for lv in range(N_LEVELS) for c in self.tower.rest[lv]
                             if c.colour == "red"]
            if not act2 and victim_floors and rng.random() < 0.45:
                k = int(rng.choice(victim_floors))
            else:
                k = int(rng.choice(np.arange(N_LEVELS), p=_floor_choice()))
            t, taken = self.inspect(k, t)
            back = [c for c in taken if c.colour != "red"]
            reds = [c for c in taken if c.colour == "red"]
            sloppy = 0
            if not act2:
                if reds:
                    reds_found += len(reds)
                    for c in back:
                        if c.colour != inv.colour:
                            sheet[c.colour] += 1
                else:
                    sloppy = 1
            else:
                own = sum(c.colour == inv.colour for c in back)
                if rng.random() < 0.7 or own == 0:
                    suspects = [p.colour for p in players if p is not inv]
                    suspects = [str(s) for s in rng.choice(suspects, size=min(len(suspects),
                                                           int(rng.integers(1, 3))),
                                                           replace=False)]
                    for s in suspects:
                        n_s = sum(c.colour == s for c in back)
                        if n_s:
                            sheet[s] += n_s
                        else:
                            sloppy += 1
                else:
                    sloppy = 0 if own else 1
            # Throw the clues back one after another, then the sloppy clue(s).
            t += float(rng.uniform(1.0, 2.5))
            for c in list(back) + [inv.supply.pop() for _ in range(sloppy) if inv.supply]:
                if t > end:
                    break
                self.tower.throw(c, t, "throw_back" if c in back else "penalty")
                t += float(rng.uniform(1.0, 2.2))
            turn += 1

    def game_knocks(self, quiet: float) -> None:
        """Someone sets a mug down or bumps the table, hands off the tower."""
        rng = self.rng
        if self.duration - 3 < quiet + 5:
            return
        for _ in range(int(rng.integers(0, 3))):
            for _try in range(20):
                tk = float(rng.uniform(quiet + 5, self.duration - 3))
                if not self._busy(tk):
                    kind = str(rng.choice(["mug", "elbow"]))
                    peak = add_table_knock(self.sc, rng, tk, kind)
                    self.knocks.append({"t": round(tk, 6), "kind": kind,
                                        "peak_ms2": round(peak, 2)})
                    break

    def _busy(self, t: float) -> bool:
        for li, cl in zip(self.lifts, self.closes, strict=False):
            if li["t"] - 2 <= t <= cl["t"] + 2:
                return True
        return any(ld["t_first_impact"] - 1.0 < t < ld["t"] + 0.5
                   for ld in self.tower.landings)

    def inspect(self, k: int, t: float) -> tuple[float, list[Cube]]:
        """Lift modules k..7, take every cube off level k, close again."""
        rng = self.rng
        sc = self.sc
        tower = self.tower
        # Both hands on the tower: one holds the lower floors.
        t_grip = t
        t_lift = t_grip + float(rng.uniform(0.4, 1.0))
        add_handling(sc, rng, t_grip, t_lift + 0.3, float(rng.uniform(0.08, 0.25)),
                     [k - 1, k], 0.02)
        _burst(sc.a_vert, sc, t_lift, float(rng.uniform(20, 35)),
               float(rng.uniform(0.3, 1.0)), 0.03, 0.0)
        # Contacts may chatter once while the stack rocks free.
        if k < N_LEVELS - 1:
            if rng.random() < 0.4:
                tb = t_lift + float(rng.uniform(0.005, 0.03))
                sc.breaks.append((t_lift, k + 1))
                sc.makes.append((tb, k + 1, False))
                sc.breaks.append((tb + float(rng.uniform(0.005, 0.02)), k + 1))
            else:
                sc.breaks.append((t_lift, k + 1))
        self.lifts.append({"t": round(t_lift, 6), "exposed": k})
        # Held up: the cubes of levels above travel with the stack; now and then
        # one slips through plate k+1's hole and drops onto the exposed level.
        if k < N_LEVELS - 1 and tower.rest[k + 1] and rng.random() < 0.05:
            spill = tower.rest[k + 1][int(rng.integers(0, len(tower.rest[k + 1])))]
            ts = t_lift + float(rng.uniform(0.1, 0.35))
            tower.rest[k + 1].remove(spill)
            hc = self.kit.plates[k + 1].hole_c
            floor, t_rest, first, _ = tower.fall(
                spill, k, ts, 0.1, hc[0] + float(rng.normal(0, 3)), hc[1] + float(rng.normal(0, 3)),
                self.kit.h_mod + float(rng.uniform(0.02, 0.05)), depth=2)
            tower.record_knock(spill, ts, k + 1, floor, t_rest, first, "spilled while lifted")
        # The stack is set aside on the table.
        t_aside = t_lift + float(rng.uniform(0.6, 1.2))
        _burst(sc.a_vert, sc, t_aside, float(rng.uniform(25, 45)),
               float(rng.uniform(0.1, 0.4)), 0.04, 0.0)
        t = t_aside + float(rng.uniform(1.5, 4.0))      # looking, naming what is there
        taken: list[Cube] = []
        while tower.rest[k]:
            pool = sorted(tower.rest[k], key=lambda c: c.t_rest)
            n_pick = min(len(pool), int(rng.choice([1, 1, 1, 2, 2, 3])))
            picked = pool[:n_pick]
            t_touch = t + float(rng.uniform(0.5, 1.1))          # reach in
            t_off = t_touch + float(rng.uniform(0.3, 0.9))      # pinch, lift off
            force = float(np.exp(rng.uniform(np.log(0.05), np.log(0.4))))
            sc.fingers.append((t_touch, t_off, k, force))
            sc.impacts.append(Impact(t_touch, k, float(rng.uniform(5e-4, 2e-3)),
                                     float(rng.uniform(0.006, 0.012)), picked[0].x, picked[0].y,
                                     "plate"))
            sc.rubs.append((t_touch, t_off, k, float(rng.uniform(0.01, 0.05))))
            add_handling(sc, rng, t_touch - 0.3, t_off + 0.2, float(rng.uniform(0.02, 0.06)), [],
                         0.0)
            for c in picked:
                tower.rest[k].remove(c)
                tower._weight(c, k, t_off, -1)
            self.removals.append({"t": round(t_off, 6), "floor": k, "cubes": len(picked),
                                  "colours": [c.colour for c in picked],
                                  "mass_g": round(sum(c.mass_g for c in picked), 4)})
            taken += picked
            # A finger may push another cube over the hole edge.
            others = [c for c in tower.rest[k] if c.precarious]
            if k > 0 and others and rng.random() < 0.15:
                tower.knock_down(others[0], k, t_off - float(rng.uniform(0.05, 0.2)), 1,
                                 "pushed by a finger")
            t = t_off + float(rng.uniform(0.3, 1.0))
        # Close: fetch the stack, set it down; contacts chatter, then make.
        t_fetch = t + float(rng.uniform(0.5, 1.2))
        t_close = t_fetch + float(rng.uniform(0.6, 1.2))
        add_handling(sc, rng, t_fetch, t_close + float(rng.uniform(0.3, 0.7)),
                     float(rng.uniform(0.1, 0.3)), [k - 1, k], 0.03)
        if k < N_LEVELS - 1:
            chatter = int(rng.integers(0, 4))
            tc = t_close - float(rng.uniform(0.02, 0.15)) if chatter else t_close
            for i in range(chatter):
                # Every bounce of the contacts comes before their final make.
                sc.makes.append((min(tc, t_close - 2e-3), k + 1, False))
                tc += float(rng.uniform(0.003, 0.02))
                sc.breaks.append((min(tc, t_close - 1e-3), k + 1))
                tc = tc + (t_close - tc) * float(rng.uniform(0.3, 0.7)) if i < chatter - 1 \
                    else t_close
            sc.makes.append((t_close, k + 1, True))
        # The stack's weight lands on the walls of module k-1: a soft thump.
        sc.impacts.append(Impact(t_close, k - 1, float(rng.uniform(2e-3, 1.2e-2)),
                                 float(rng.uniform(0.01, 0.03)), 40.0, 0.0, "wall"))
        _burst(sc.a_vert, sc, t_close, float(rng.uniform(30, 60)), float(rng.uniform(0.5, 1.5)),
               0.03, 0.0)
        self.closes.append({"t": round(t_close, 6), "exposed": k})
        return t_close + float(rng.uniform(0.3, 0.8)), taken


def _floor_choice() -> np.ndarray:
    w = np.array([0.04, 0.12, 0.14, 0.15, 0.15, 0.14, 0.13, 0.13])
    return np.asarray(w / w.sum())


# ---------------------------------------------------------------------------
# Signals: load cells through HX711s, piezos through the ATmega ADC
# ---------------------------------------------------------------------------


def _resonator(f: float, zeta: float) -> tuple[np.ndarray, np.ndarray]:
    """Impulse-invariant 2-pole low-pass with unity DC gain."""
    w = 2 * np.pi * f
    wd = w * math.sqrt(1 - zeta**2)
    r = math.exp(-zeta * w * DT)
    a = np.array([1.0, -2 * r * math.cos(wd * DT), r * r])
    b = np.array([0.0, r * math.sin(wd * DT)])
    b = b * (a.sum() / b.sum())
    return b, a


def _boxcar(x: np.ndarray, length: float) -> np.ndarray:
    """Causal moving average over the last ``length`` grid steps (fractional)."""
    c = np.concatenate([[0.0], np.cumsum(x)])
    n = np.arange(1, x.size + 1, dtype=float)
    lo = np.maximum(n - length, 0.0)
    c_lo = np.interp(lo, np.arange(c.size, dtype=float), c)
    return np.asarray((c[1:] - c_lo) / length)


def power_intervals(sc: Scene, duration: float) -> list[list[tuple[float, float]]]:
    """Per level: intervals (t_on, t_off) when its module has contact to the base."""
    ev: list[tuple[float, int, int]] = []
    for t, first in sc.breaks:
        ev.append((t, first, 0))
    for t, first, _ in sc.makes:
        ev.append((t, first, 1))
    ev.sort()
    out: list[list[tuple[float, float]]] = []
    for lv in range(N_LEVELS):
        on = True
        t_on = -1e3
        iv = []
        for t, first, mk in ev:
            if lv < first:
                continue
            if mk and not on:
                on, t_on = True, t
            elif not mk and on:
                iv.append((t_on, t))
                on = False
        if on:
            iv.append((t_on, duration + 10))
        out.append(iv)
    return out


def synth_load(kit: Kit, sc: Scene, rng: np.random.Generator,
               power: list[list[tuple[float, float]]]) -> list[tuple[np.ndarray, np.ndarray]]:
    """Each HX711's conversions: (completion times, counts), while powered."""
    n = sc.n
    tg = sc.grid_t()
    out = []
    for lv, p in enumerate(kit.plates):
        static = np.zeros(n)
        for t, level, grams in sc.steps:
            if level == lv:
                static[max(sc.idx(t), 0):] += grams
        imp = np.zeros(n)
        for im in sc.impacts:
            if im.level == lv and im.kind != "wall":
                pos = (im.t + im.tau / 2) / DT + sc.n_pre
                i = int(math.floor(pos))
                fr = pos - i
                area = im.j / G * 1e3 / DT          # grams over one step: same impulse
                if 0 <= i < n - 1:
                    imp[i] += area * (1 - fr)
                    imp[i + 1] += area * fr
        for t0, t1, level, force in sc.fingers:
            if level != lv:
                continue
            i0, i1 = max(sc.idx(t0), 0), min(sc.idx(t1), n)
            if i1 > i0:
                env = _envelope(i1 - i0, max(4, int(0.08 / DT)))
                tremor = 1 + 0.1 * np.sin(2 * np.pi * rng.uniform(8, 12) * tg[i0:i1])
                imp[i0:i1] += force / G * 1e3 * env * tremor
        total_mass = p.tare_g + static
        dyn = imp + total_mass * sc.a_vert / G
        b, a = _resonator(p.f_bounce, p.zeta_bounce)
        dyn = signal.lfilter(b, a, dyn)
        # Creep of the cell under a changed load.
        r = math.exp(-DT / p.creep_tau)
        creep = p.creep * signal.lfilter([1 - r], [1, -r], static)
        # Self-heating of the bridge: cools while unpowered, warms again.
        unpowered = np.ones(n)
        for t_on, t_off in power[lv]:
            unpowered[max(sc.idx(t_on), 0):max(min(sc.idx(t_off), n), 0)] = 0.0
        drift = np.zeros(n)
        if unpowered.any():
            for amp, tau in ((p.warm_fast_g, 8.0), (p.warm_slow_g, 135.0)):
                r = math.exp(-DT / tau)
                drift -= amp * signal.lfilter([1 - r], [1, -r], unpowered)
        grams = p.tare_g + static + dyn + creep + drift
        g0 = float(grams[0])
        length = PZ_RATE / p.rate
        y = grams - g0
        for _ in range(HX_SETTLE):
            y = _boxcar(y, length)
        y = y + g0
        # Conversion completions while powered.
        times = []
        for t_on, t_off in power[lv]:
            if t_on < -100:
                start = p.phase - 0.5
            else:
                start = t_on + HX_SETTLE / p.rate * float(rng.uniform(1.0, 1.05))
            tt = start + np.arange(int(max(0.0, (min(t_off, sc.duration + 0.1) - start)) * p.rate)
                                   + 1) / p.rate
            tt = tt[(tt < t_off) & (tt < sc.duration + 0.1)]
            times.append(tt)
        tc = np.concatenate(times) if times else np.zeros(0)
        g_at = np.interp(tc, tg, y)
        nw = rng.normal(0, p.noise_white, tc.size)
        lf = signal.lfilter([math.sqrt(1 - 0.99**2)], [1, -0.99], rng.normal(0, p.noise_lf,
                                                                                tc.size))
        counts = p.zero_vv * COUNTS_PER_VV + g_at * p.counts_per_g + nw + lf
        counts = np.clip(np.round(counts), -HX_FULL, HX_FULL - 1)
        out.append((tc, counts.astype(np.int64)))
    return out


def synth_piezo(kit: Kit, sc: Scene, rng: np.random.Generator, n_sets: int,
                power: list[list[tuple[float, float]]]) -> np.ndarray:
    """ADC codes (n_sets, 8) of the eight piezo channels."""
    codes_per_v = 1024.0 / kit.vcc
    v_sets = np.zeros((N_LEVELS, n_sets))
    skew = np.arange(N_LEVELS) * ADC_SLOT + ADC_SH
    i0g = sc.n_pre
    # 1. Modal ringing of the plates after every impact (analytic, at the exact
    #    sample instants, so modes above 1 kHz alias as they do in the ADC).
    for im in sc.impacts:
        _impact_response(kit, sc, im, v_sets, skew)
    # 2. Base excitation: table and hands shake every plate; sound pushes them.
    a_eff = sc.a_vert.copy()
    for lv, p in enumerate(kit.plates):
        area = p.side**2
        # Net acoustic force on a plate open on both sides through its hole:
        # p A (omega L / c) with L ~ 3 cm  ->  F = A L / c dp/dt.
        f_air = area * 0.03 / 343.0 * np.gradient(sc.p_air, DT)
        # The plate hangs on its cell: its own acceleration is the tower's
        # through the bounce resonance (amplified near f_b, isolated above).
        b_b, a_b = _resonator(p.f_bounce, p.zeta_bounce)
        drive = signal.lfilter(b_b, a_b, a_eff) + f_air / (p.tare_g * 1e-3)
        if not np.any(drive):
            continue
        v = np.zeros(sc.n)
        for k in range(p.f.size):
            if p.f[k] > 900:
                break
            w = 2 * np.pi * p.f[k]
            zeta = p.alpha[k] / w
            wd = w * math.sqrt(1 - zeta**2)
            r = math.exp(-p.alpha[k] * DT)
            b = [0.0, DT * r * math.sin(wd * DT) / wd]
            a = [1.0, -2 * r * math.cos(wd * DT), r * r]
            q = signal.lfilter(b, a, -p.gamma[k] * drive)
            v += p.psi_v[k] * q
        # The disc and its bias network: high-pass at f_hp.
        wc = 2 * np.pi * p.f_hp
        k_bl = 2 / DT
        v = signal.lfilter([k_bl, -k_bl], [k_bl + wc, wc - k_bl], v)
        seg = v[i0g:i0g + n_sets]
        frac = skew[lv] / DT
        nxt = np.append(seg[1:], seg[-1])
        v_sets[lv] += seg + frac * (nxt - seg)
    # 3. Fingers scratching the board.
    for t0, t1, lv, vr in sc.rubs:
        i0, i1 = max(sc.idx(t0) - i0g, 0), min(sc.idx(t1) - i0g, n_sets)
        if i1 - i0 > 8:
            v_sets[lv, i0:i1] += vr * _band_noise(rng, i1 - i0, 150.0, 900.0) \
                * _envelope(i1 - i0, (i1 - i0) // 5)
    # 4. Connection state: disconnected inputs, pyroelectric charge at reconnect.
    connected = np.zeros((N_LEVELS, n_sets), dtype=bool)
    t_sets = np.arange(n_sets) * DT
    for lv in range(N_LEVELS):
        for t_on, t_off in power[lv]:
            connected[lv, (t_sets >= t_on) & (t_sets < t_off)] = True
        t_prev_off = -1e3
        for t_on, t_off in power[lv]:
            if t_on > 0:
                # The floating disc gathered pyroelectric and handling charge
                # (20 nF over ~1 Gohm leakage) while it was off the tower.
                j0 = int(math.ceil(t_on / DT))
                tau = BIAS_R * (kit.plates[lv].c_p + C_STRAY)
                nn = min(int(8 * tau / DT), n_sets - j0)
                sd = 0.3 if t_on - t_prev_off > 0.5 else 0.03
                if nn > 0:
                    v_sets[lv, j0:j0 + nn] += float(rng.normal(0, sd)) * np.exp(
                        -np.arange(nn) * DT / tau)
            t_prev_off = t_off
    # 5. Supply: VCC rises when modules are unplugged, dips at each inrush.
    dv = np.zeros(n_sets)
    i_mod = 1.5e-3 + 4.3 / CELL_R_OHM
    for t, first in sc.breaks:
        j0 = int(math.ceil(t / DT))
        if 0 <= j0 < n_sets:
            step = i_mod * (N_LEVELS - first) * kit.r_src
            # The node follows VCC/2 through 500 k * C: only the fast part shows.
            tau = BIAS_R * (kit.plates[0].c_p + C_STRAY)
            dv[j0:] += step * np.exp(-np.arange(n_sets - j0) * DT / tau)
    for t, first, _ in sc.makes:
        j0 = int(math.ceil(t / DT))
        if 0 <= j0 < n_sets:
            n_mod = N_LEVELS - first
            # 10 uF per module through 100 ohm soft-start, 470 uF bulk, USB source.
            dip = min(0.3, n_mod * 4.3 / 100.0 * kit.r_src)
            tau_in = 1.0e-3
            nn = min(int(10 * tau_in / DT) + 1, n_sets - j0)
            tt = np.arange(nn) * DT + (j0 * DT - t)
            dv[j0:j0 + nn] -= dip * np.exp(-tt / tau_in)
            step = i_mod * n_mod * kit.r_src
            tau = BIAS_R * (kit.plates[0].c_p + C_STRAY)
            dv[j0:] -= step * np.exp(-np.arange(n_sets - j0) * DT / tau)
    # 6. Everything into the ADC, channel by channel in multiplexer order.
    codes = np.zeros((n_sets, N_LEVELS), dtype=np.uint16)
    x_prev = np.full(n_sets, 512.0)
    x_prev_ch7 = np.full(n_sets, 512.0)
    beta_open = C_SH / (C_SH + C_PIN_OPEN) * math.exp(
        -ADC_SH / (BIAS_R * (C_SH + C_PIN_OPEN)))
    for lv, p in enumerate(kit.plates):
        ts = t_sets + skew[lv]
        hum_conn = kit.mains_v * sc.hum_cs / (p.c_p + C_STRAY)
        w_m = 2 * np.pi * kit.mains_hz
        hum_open = kit.mains_v * w_m * sc.hum_cs * BIAS_R
        hum_w = np.sin(w_m * ts) + 0.3 * np.sin(3 * w_m * ts + 0.7)
        sof = kit.sof_amp_v * np.sin(2 * np.pi * kit.sof_hz * ts)
        x_node = 512.0 + p.bias_lsb
        x = x_node + v_sets[lv] * codes_per_v + hum_conn * codes_per_v * hum_w
        x -= 512.0 * (dv + sof) / kit.vcc
        con = connected[lv]
        prev = x_prev if lv > 0 else np.concatenate([[512.0], x_prev_ch7[:-1]])
        x_open = x_node + hum_open * codes_per_v * hum_w + beta_open * (prev - x_node)
        x = np.where(con, x + 7e-4 * (prev - x), x_open)
        xn = x + rng.normal(0, kit.adc_noise, n_sets)
        c = np.searchsorted(kit.adc_trans, xn, side="right")
        codes[:, lv] = np.clip(c, 0, 1023).astype(np.uint16)
        x_prev = x
        if lv == N_LEVELS - 1:
            x_prev_ch7 = x
    return codes


def _impact_response(kit: Kit, sc: Scene, im: Impact, v_sets: np.ndarray,
                     skew: np.ndarray) -> None:
    """Add the piezo voltages of one impact (direct and through the walls)."""
    n_sets = v_sets.shape[1]
    thr_v = 0.01 / (1024.0 / kit.vcc)                  # 0.01 LSB
    if im.kind == "wall":
        # A strike on the walls of level L (module L) shakes the cell mount of
        # plate L+1 directly and that of plate L through one cardboard joint.
        targets = [(im.level + 1, 0.3, im.level + 1), (im.level, 0.15, im.level)]
    else:
        targets = [(im.level, 1.0, im.level)]
        for c in range(N_LEVELS):
            if c != im.level:
                targets.append((c, _xt(kit, im.level, c), im.level))
    for ch, gain, src in targets:
        if not 0 <= ch < N_LEVELS or not 0 <= src < N_LEVELS:
            continue
        p = kit.plates[src]
        w = 2 * np.pi * p.f
        wd = w * np.sqrt(np.maximum(1 - (p.alpha / w) ** 2, 1e-6))
        ftau = p.f * im.tau
        spec = np.cos(np.pi * ftau) / np.where(np.abs(1 - 4 * ftau**2) < 1e-6, 1e-6,
                                               1 - 4 * ftau**2)
        if im.kind == "wall" and ch == src:
            phi = np.full(p.f.size, 0.3)
        else:
            phi = np.cos(p.kx * im.x + p.phx) * np.cos(p.ky * im.y + p.phy)
        q = im.j * spec * phi / (p.mmass * wd)              # m, modal displacement
        amp = q * p.psi_v * gain
        if ch != src:
            amp = amp / np.sqrt(1 + (p.f / 600.0) ** 2) ** abs(ch - src)
        # Rigid bounce of the struck plate on its cell bends it through inertia.
        wb = 2 * np.pi * p.f_bounce
        amp_b = gain * p.psi_v[0] * p.gamma[0] * im.j * wb / (p.tare_g * 1e-3 * w[0] ** 2) \
            if im.kind != "wall" else 0.0
        # High-pass of the disc against the bias network (complex gain).
        tc = BIAS_R * (kit.plates[ch].c_p + C_STRAY)
        hp = 1j * w * tc / (1 + 1j * w * tc)
        keep = np.abs(amp) > thr_v
        if not keep.any() and abs(amp_b) <= thr_v:
            continue
        a_k = np.abs(amp[keep] * hp[keep])
        ph_k = np.angle(amp[keep] * hp[keep])
        al_k = p.alpha[keep]
        wd_k = wd[keep]
        if abs(amp_b) > thr_v:
            hb = 1j * wb * tc / (1 + 1j * wb * tc)
            a_k = np.append(a_k, abs(amp_b * hb))
            ph_k = np.append(ph_k, np.angle(amp_b * hb))
            al_k = np.append(al_k, p.zeta_bounce * wb)
            wd_k = np.append(wd_k, wb)
        t_on = im.t + im.tau / 2 + (0.3e-3 * abs(ch - src) if ch != src else 0.0)
        dur = float(np.max(np.log(np.maximum(a_k / thr_v, 1.0001)) / al_k))
        dur = min(dur, 0.6)
        j0 = max(int(math.ceil((t_on - skew[ch]) / DT)), 0)
        j1 = min(int(math.ceil((t_on + dur - skew[ch]) / DT)) + 1, n_sets)
        if j1 <= j0:
            continue
        tt = np.arange(j0, j1) * DT + skew[ch] - t_on
        resp = (a_k[:, None] * np.exp(-al_k[:, None] * tt[None, :])
                * np.sin(wd_k[:, None] * tt[None, :] + ph_k[:, None])).sum(axis=0)
        v_sets[ch, j0:j1] += resp


def _xt(kit: Kit, a: int, b: int) -> float:
    """Wall-borne crosstalk between plates a and b: product of joint factors."""
    lo, hi = min(a, b), max(a, b)
    g = 1.0
    for j in range(lo, hi):
        if 0 <= j < kit.joint.size:
            g *= float(kit.joint[j])
        else:
            g *= 0.05
    return g


# ---------------------------------------------------------------------------
# Firmware: main loop, serial link, message stamps
# ---------------------------------------------------------------------------


def build_stream(kit: Kit, codes: np.ndarray, load: list[tuple[np.ndarray, np.ndarray]],
                 power: list[list[tuple[float, float]]], rng: np.random.Generator,
                 duration: float) -> tuple[bytes, int, dict[str, Any]]:
    """Run the firmware's loop over the recording; returns bytes, first stamp (us), stats."""
    n_sets = codes.shape[0]
    t0 = kit.t0_us * 1e-6
    out: list[bytes] = []
    seq = 0

    def stamp(t: float) -> int:
        return (int(math.floor((t0 + t) * 1e6)) // 4) * 4 & 0xFFFFFFFF

    hello = struct.pack("<BBBBBBHHB", 1, *kit.fw, N_LEVELS, N_LEVELS, PZ_RATE,
                        kit.load_rate_hello, 10) + kit.device_id
    out.append(frame(0x01, seq, hello))
    seq += 1
    line_free = -1.0
    t = 0.0
    next_set = 0
    first_stamp: int | None = None
    comp = [[float(v) for v in c[0]] for c in load]
    vals = [[int(v) for v in c[1]] for c in load]
    always_on = [len(pw) == 1 and pw[0][0] < -100 for pw in power]
    present = [True] * N_LEVELS
    prev_round = 0.0
    load_timeouts = 0
    next_status = 1.0 - (t0 % 1.0) + 1e-4
    busy = 0.0
    n_load_msgs = 0
    set_ready = ADC_SLOT * 7 + ADC_CONV
    pz_sizes = []
    round_key: tuple[float, tuple[bool, ...]] | None = None
    pres: list[int] = []
    ready_t: list[float] = []
    t_round = t_tmo = t_load = math.inf

    def send(fr: bytes, t_now: float) -> float:
        nonlocal line_free, busy
        start = max(line_free, t_now)
        line_free = start + len(fr) * BAUD_BYTE_S
        t_ret = max(t_now, line_free - TX_BUFFER * BAUD_BYTE_S)
        busy += t_ret - t_now + 12e-6 + len(fr) * 1.5e-6
        return t_ret + len(fr) * 1.5e-6               # CRC + COBS in the loop

    def next_comp(i: int, after: float) -> float:
        arr = comp[i]
        j = bisect.bisect_right(arr, after)
        return arr[j] if j < len(arr) else math.inf

    def on_since(i: int, t_now: float) -> float | None:
        """Start of the power interval holding t_now, None when unpowered."""
        for t_on, t_off in power[i]:
            if t_on <= t_now < t_off:
                return t_on
        return None

    def ready_at(i: int, after: float, t_now: float) -> float:
        """When chip i pulls DOUT low with a conversion newer than ``after``
        and still holds it at t_now (a chip that lost power lost its data)."""
        c = next_comp(i, after)
        if always_on[i]:
            return c
        while c <= t_now and on_since(i, t_now) is None:
            c = next_comp(i, max(c, t_now))
        if c <= t_now:
            since = on_since(i, t_now)
            if since is not None and c < since:
                c = next_comp(i, since)
        return c

    while True:
        # Load round: all present HX711s have a fresh conversion, or a timeout.
        key = (prev_round, tuple(present))
        if key != round_key:
            round_key = key
            pres = [i for i in range(N_LEVELS) if present[i]]
            ready_t = [next_comp(i, prev_round) for i in range(N_LEVELS)]
            for _ in range(4):
                t_round = max((ready_t[i] for i in pres), default=math.inf)
                if t_round == math.inf or all(always_on):
                    break
                again = [ready_at(i, prev_round, t_round) for i in range(N_LEVELS)]
                if again == ready_t:
                    break
                ready_t = again
            t_round = max((ready_t[i] for i in pres), default=math.inf)
            t_tmo = prev_round + LOAD_TIMEOUT
            t_load = min(t_round, t_tmo) if pres else min(ready_t)
        t_pz = (next_set + PIEZO_MIN_SETS - 1) * DT + set_ready if next_set < n_sets else math.inf
        if next_set < n_sets and next_set + PIEZO_MIN_SETS > n_sets:
            t_pz = (n_sets - 1) * DT + set_ready
        t_next = min(t_load, t_pz, next_status)
        if t_next >= duration and next_set >= n_sets:
            break
        if t_next == math.inf:
            break
        t = max(t, t_next)
        if t >= t_load and t_load < duration:
            if pres and t_round > t_tmo and t >= t_tmo:
                for i in pres:
                    if ready_t[i] > t_tmo:
                        present[i] = False
                        load_timeouts += 1
                continue
            valid = 0
            body_vals = []
            for i in range(N_LEVELS):
                arr = comp[i]
                j = bisect.bisect_right(arr, t) - 1
                since = -1e9 if always_on[i] else on_since(i, t)
                fresh = j >= 0 and arr[j] > prev_round and since is not None and arr[j] >= since
                if fresh:       # a returning HX711 joins the round it is ready for
                    present[i] = True
                    valid |= 1 << i
                    body_vals.append(vals[i][j])
                else:
                    body_vals.append(0)
            t_read = t
            t += LOAD_READ_S
            body = struct.pack("<IB", stamp(t_read), valid) + b"".join(
                (v & 0xFFFFFF).to_bytes(3, "little") for v in body_vals)
            if first_stamp is None:
                first_stamp = stamp(t_read)
            out.append(frame(0x03, seq, body))
            seq += 1
            n_load_msgs += 1
            t = send(out[-1], t)
            prev_round = t_read
            continue
        if t >= t_pz:
            avail = min(n_sets, int(math.floor((t - set_ready) / DT)) + 1) - next_set
            nn = max(1, min(PIEZO_MAX_SETS, avail))
            jitter = float(rng.choice([0, 0, 0, 4e-6, 8e-6]))
            st = stamp(next_set * DT + ADC_CONV + jitter)
            if first_stamp is None:
                first_stamp = st
            body = struct.pack("<IB", st, nn) \
                + codes[next_set:next_set + nn].astype("<u2").tobytes()
            out.append(frame(0x02, seq, body))
            seq += 1
            pz_sizes.append(nn)
            next_set += nn
            t = send(out[-1], t)
            continue
        if t >= next_status:
            up = int(math.floor((t0 + t) * 1000))
            cpu = min(99, int(round(100 * (busy + 16000 * 7e-6) / 1.0 + rng.normal(0, 1))))
            busy = 0.0
            body = struct.pack("<IHHHBB", up & 0xFFFFFFFF, 0, 0, load_timeouts & 0xFFFF,
                               max(cpu, 1), 0)
            out.append(frame(0x04, seq, body))
            seq += 1
            t = send(out[-1], t)
            next_status += 1.0
            if next_status > duration:
                next_status = math.inf
            continue
    stats = {"load_messages": n_load_msgs, "load_timeouts": load_timeouts,
             "piezo_sets_per_message": [int(min(pz_sizes)), int(max(pz_sizes))]
             if pz_sizes else [0, 0]}
    assert first_stamp is not None
    return b"".join(out), first_stamp, stats


# ---------------------------------------------------------------------------
# One recording
# ---------------------------------------------------------------------------


def generate(seed: int, scenario: str, duration: float) -> tuple[bytes, dict[str, Any]]:
    """The byte stream and the truth of one tower and scenario."""
    if scenario not in SCENARIOS:
        raise ValueError(f"unknown scenario {scenario!r}")
    kit = make_kit(seed)
    rng = _rng(seed, SCENARIO_TAG[scenario], 1)
    rng_sig = _rng(seed, SCENARIO_TAG[scenario], 2)
    n_pre = int(0.4 / DT)
    n_sets = int(round(duration * PZ_RATE))
    n = n_pre + n_sets + int(0.3 / DT)
    sc = Scene(duration=duration, n_pre=n_pre, n=n, a_vert=np.zeros(n), p_air=np.zeros(n),
               hum_cs=kit.hum_cs)
    quiet = float(rng.uniform(4.3, 6.8))
    plan = Planner(kit, sc, rng, duration)
    room: list[str] = []
    if scenario == "single":
        plan.run_single(quiet, noisy=False)
    elif scenario == "noisy":
        room = add_room(sc, rng, duration, quiet)
        add_talk(sc, rng, duration, quiet, 0.3)
        plan.run_single(quiet, noisy=True)
    elif scenario == "rapid":
        plan.run_rapid(quiet)
    else:
        plan.run_game(quiet)
        plan.game_knocks(quiet)
    # Nothing touches the tower in the quiet opening seconds.
    sc.a_vert[: sc.idx(quiet - 0.3)] = 0.0
    sc.p_air[: sc.idx(quiet - 0.3)] = 0.0
    power = power_intervals(sc, duration)
    load = synth_load(kit, sc, rng_sig, power)
    codes = synth_piezo(kit, sc, rng_sig, n_sets, power)
    raw, first_stamp, stats = build_stream(kit, codes, load, power, rng_sig, duration)
    shift = (first_stamp - kit.t0_us) * 1e-6        # plan time -> stream time

    def st(x: float) -> float:
        return round(x - shift, 6)

    tower = plan.tower
    landings = []
    for ld in sorted(tower.landings, key=lambda d: d["t"]):
        if ld["t"] >= duration - 0.2:
            continue
        d = dict(ld)
        for key in ("t", "t_first_impact", "t_release"):
            if key in d:
                d[key] = st(d[key])
        landings.append(d)
    kept = {d["knockdown"] for d in landings if d["knocked"]}

    def shifted(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{**x, "t": st(x["t"])} for x in sorted(items, key=lambda d: d["t"])
                if x["t"] < duration - 0.2]

    knockdowns = [k for k in shifted(tower.knockdowns) if k["id"] in kept]
    truth: dict[str, Any] = {
        "format": TRUTH_FORMAT, "model": MODEL, "scenario": scenario, "seed": seed,
        "duration_s": duration, "cells": kit.cells, "quiet_s": round(quiet - shift, 6),
        "landings": landings, "knockdowns": knockdowns,
        "removals": shifted(plan.removals), "lifts": shifted(plan.lifts),
        "closes": shifted(plan.closes), "knocks": shifted(plan.knocks), "damage": [],
        "room": sorted(set(room)), "kit": kit_summary(kit), "stream": stats,
    }
    return raw, truth


def _job(args: tuple[str, int, str, float]) -> str:
    out, seed, scenario, duration = args
    raw, truth = generate(seed, scenario, duration)
    base = Path(out) / f"{scenario}_t{seed}"
    base.with_suffix(".bin").write_bytes(raw)
    Path(str(base) + ".truth.json").write_text(json.dumps(truth, indent=1) + "\n")
    return base.name


def main(argv: list[str] | None = None) -> int:
    """Command line."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
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
    if args.towers < 1 or args.duration < 8:
        print("need --towers >= 1 and --duration >= 8", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    jobs = [(str(args.out), seed, sc, float(args.duration))
            for seed in range(args.first_seed, args.first_seed + args.towers)
            for sc in args.scenarios]
    if args.workers <= 1:
        for j in jobs:
            _job(j)
    else:
        with ProcessPoolExecutor(max_workers=args.workers) as ex:
            list(ex.map(_job, jobs))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
