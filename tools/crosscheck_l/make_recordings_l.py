#!/usr/bin/env python3
"""Cross-check model L: towers, people and rooms simulated from physics, written as the
device -> host byte stream of towerear (contracts.md section 2) with ground truth beside it.

Usage::

    python make_recordings_l.py --out DIR --towers N --first-seed S --duration SECONDS \
        [--scenarios single rapid noisy game]

For every tower seed and scenario it writes ``DIR/{scenario}_t{seed}.bin`` and
``DIR/{scenario}_t{seed}.truth.json``. What is modelled, and why, is in README.md beside
this script. Written from contracts.md, design.md, the rules and physics only.
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import multiprocessing
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy import signal

FArr = npt.NDArray[np.float64]
IArr = npt.NDArray[np.int64]
U8Arr = npt.NDArray[np.uint8]

# ----------------------------------------------------------------------------- constants

N_LEVELS = 8  # contracts.md: channel k is level k, 0 = ground floor .. 7 = top
G_ACCEL = 9.80665  # m/s^2
SCENARIOS = ("single", "rapid", "noisy", "game")
TRUTH_FORMAT = "towerear-crosscheck-truth/1"  # what tools/crosscheck/score.py reads

# Wire protocol v1 (contracts.md section 1).
MSG_HELLO, MSG_PIEZO, MSG_LOAD, MSG_STATUS = 0x01, 0x02, 0x03, 0x04
PROTO_VERSION = 1
FW_VERSION = (1, 2, 0)  # model L's imaginary firmware; any version is legal
ADC_BITS = 10  # ATmega328P ADC
ADC_MAX = (1 << ADC_BITS) - 1
PIEZO_MAX_SETS = 14  # contract: 1..14 sets per PIEZO message
S24_MAX = (1 << 23) - 1  # HX711 output saturates at 0x7FFFFF / 0x800000
SEQ_MOD = 1 << 16
MICROS_STEP_US = 4  # Arduino micros() advances in 4 us steps on a 16 MHz AVR
LOAD_POLL_HZ = 80  # the firmware polls the eight DOUT lines at the contract's nominal rate
STATUS_PERIOD_S = 1.0  # contract: STATUS once a second
LOAD_TIMEOUT_S = 0.5  # firmware counts one timeout per 0.5 s a channel gives no fresh reading
PIEZO_TX_LAG_S = 60e-6  # a full buffer is queued right after its last conversion
LOAD_TX_LAG_S = 250e-6  # 25 SCK pulses on the shared clock plus packing, then queued

# AVR ADC front end (ATmega328P datasheet, "Analog Input Circuitry").
C_SAMPLE_HOLD_F = 14e-12  # the ADC's sample-and-hold capacitor
ADC_SAMPLE_CYCLES = 1.5  # the S/H closes 1.5 ADC clocks after a conversion starts
ADC_CONV_CYCLES = 13  # one normal conversion
R_BIAS_THEVENIN = 500e3  # 1 MOhm / 1 MOhm mid-scale divider, seen from a disconnected pin
C_TRACE_F = 10e-12  # base-board trace and spring pad left on a disconnected input
PIN_CLAMP_LSB = 120  # ESD diodes clamp a pin ~0.6 V outside the rails (~120 LSB of 4.9 mV)

# HX711 (Avia datasheet): gain 128 on channel A, 24-bit two's complement, RATE pin picks
# 10 or 80 SPS from the on-chip oscillator, settling 400 ms / 50 ms = four conversions.
HX_FILTER_ORDER = 4  # sinc^4: a step settles in exactly four conversion periods
HX_COUNTS_PER_G_PER_MV_V = 21475.0  # 1 mV/V bridge, 100 g cell: 2^23 * 128 / 0.5 / 1e5
LOAD_GRID_HZ = 2000.0  # fine time grid of the bridge force (plate rings at 30-120 Hz)
LOAD_PAD_S = 1.0  # grid starts this long before stream time 0 (filters fill at boot)

# Tower geometry (rules README: about 25 cm high, eight boxes, square holes smaller upwards).
MODULE_H_M = 0.031  # 25 cm / 8 modules: the drop from one plate to the next
PLATE_HALF_M = 0.036  # half the inner width of a module
ENTRANCE_HALF_M = 0.0100  # the hole in the roof of module 7 where cubes go in
HOLE_HALF_TOP_M = 0.0120  # hole of plate 7 (half side)
HOLE_HALF_BOTTOM_M = 0.0140  # hole of plate 1 (half side): holes grow downwards
V_STOP = 0.06  # m/s: below this a bounce is a rock on an edge, the cube settles
MAX_BOUNCES = 12  # safety net; restitution < 0.75 ends bouncing far earlier

# Acoustic rendering.
STRIKE_WINDOW_S = 0.25  # a cardboard plate mode (Q <= 12, f >= 120 Hz) is gone by then
CUBE_CONTACT_CARD_S = (4e-4, 1.2e-3)  # wood on cardboard: soft, a thump
CUBE_CONTACT_WOOD_S = (6e-5, 2e-4)  # wood on wood: hard, a click
# Counts per mN s of impulse at the struck plate's disc: a typical first strike (1 mN s)
# peaks at about half of the ADC's headroom, the hardest ones clip.
DISC_SENS_MEDIAN = 700.0
J_REF_NS = 1.0e-3  # N s: momentum change of a typical first strike (0.55 g at 1.4 m/s)

# People.
PLAYER_COLOURS = ("yellow", "blue", "brown", "gray", "black", "white")  # rules README
CLUES_PER_PLAYER = 20
GRAB_MAX_CUBES = 3  # fingers take at most three small cubes at once
END_MARGIN_S = 0.8  # every truth event ends this long before the recording does


# ----------------------------------------------------------------------------- wire format

def _crc_table() -> npt.NDArray[np.uint16]:
    """The 256-entry table of CRC-16/CCITT-FALSE (poly 0x1021, not reflected)."""
    table = np.zeros(256, np.uint16)
    for i in range(256):
        crc = i << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
        table[i] = crc & 0xFFFF
    return table


CRC_TABLE = _crc_table()


def crc16_ccitt_false(data: bytes) -> int:
    """CRC-16/CCITT-FALSE of ``data`` (init 0xFFFF, xorout 0), table driven."""
    crc = 0xFFFF
    for b in data:
        crc = ((crc << 8) & 0xFFFF) ^ int(CRC_TABLE[((crc >> 8) ^ b) & 0xFF])
    return crc


def crc16_ccitt_false_reference(data: bytes) -> int:
    """The same CRC bit by bit, as the definition reads (a second implementation)."""
    crc = 0xFFFF
    for b in data:
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) & 0xFFFF if crc & 0x8000 else (crc << 1) & 0xFFFF
    return crc


def crc16_rows(rows: U8Arr) -> npt.NDArray[np.uint16]:
    """CRC-16/CCITT-FALSE of every row of an (R, L) byte array at once."""
    crc = np.full(rows.shape[0], 0xFFFF, np.uint16)
    for col in range(rows.shape[1]):
        idx = ((crc >> 8) ^ rows[:, col]) & 0xFF
        crc = ((crc << 8) & 0xFFFF).astype(np.uint16) ^ CRC_TABLE[idx]
    return crc


def cobs_encode(data: bytes) -> bytes:
    """COBS-encode ``data`` (no delimiter), any length."""
    out = bytearray([0])
    code_at, code = 0, 1
    for b in data:
        if b == 0:
            out[code_at] = code
            code_at, code = len(out), 1
            out.append(0)
            continue
        out.append(b)
        code += 1
        if code == 0xFF:
            out[code_at] = code
            code_at, code = len(out), 1
            out.append(0)
    out[code_at] = code
    return bytes(out)


def cobs_encode_rows(rows: U8Arr) -> U8Arr:
    """COBS-encode every row of an (R, L) byte array (L < 254) and append the 0x00 delimiter.

    Every zero byte is replaced by the distance to the next zero (or to the end) and a
    leading code byte is the distance to the first; rows shorter than 254 bytes never need
    COBS's 0xFF blocks, so every row encodes to L + 2 bytes.
    """
    n_rows, length = rows.shape
    assert length < 254
    pos = np.arange(length + 1)
    zero = np.concatenate([rows == 0, np.ones((n_rows, 1), bool)], axis=1)
    marks = np.where(zero, pos[None, :], length + 1)
    next_zero = np.minimum.accumulate(marks[:, ::-1], axis=1)[:, ::-1]  # first zero at/after i
    out = np.zeros((n_rows, length + 2), np.uint8)
    out[:, 0] = next_zero[:, 0] + 1
    body = rows.copy()
    code = next_zero[:, 1:] - pos[None, :-1]  # for a zero at i: distance to the next zero
    body[rows == 0] = code[rows == 0].astype(np.uint8)
    out[:, 1:length + 1] = body
    return out


def frame_one(msg_type: int, seq: int, body: bytes) -> bytes:
    """One complete frame: COBS(type | seq | body | crc) + 0x00."""
    raw = bytes([msg_type]) + (seq % SEQ_MOD).to_bytes(2, "little") + body
    raw += crc16_ccitt_false(raw).to_bytes(2, "little")
    return cobs_encode(raw) + b"\x00"


def frame_rows(msg_type: int, seqs: IArr, bodies: U8Arr) -> U8Arr:
    """Frames for many messages of one type and body length, one row each."""
    n = len(seqs)
    raw = np.zeros((n, 3 + bodies.shape[1] + 2), np.uint8)
    raw[:, 0] = msg_type
    raw[:, 1] = seqs & 0xFF
    raw[:, 2] = (seqs >> 8) & 0xFF
    raw[:, 3:3 + bodies.shape[1]] = bodies
    crc = crc16_rows(raw[:, :-2])
    raw[:, -2] = crc & 0xFF
    raw[:, -1] = crc >> 8
    return cobs_encode_rows(raw)


def le_bytes(values: IArr, width: int) -> U8Arr:
    """Little-endian ``width``-byte columns of integer ``values`` (two's complement)."""
    v = values.astype(np.int64)
    return np.stack([(v >> (8 * i)) & 0xFF for i in range(width)], axis=1).astype(np.uint8)


# ----------------------------------------------------------------------------- the tower

class Tower:
    """One physical build, drawn from its seed: electronics, plates, cells, holes, cubes.

    Every scenario of a seed plays on the same tower. Attributes are plain numbers and
    arrays so a test may change one (e.g. switch the thermal drift off) before rendering.
    """

    def __init__(self, seed: int) -> None:
        rng = np.random.default_rng([seed, 1729])
        self.seed = seed
        self._draw_adc(rng)
        self._draw_discs(rng)
        self._draw_plates(rng)
        self._draw_cells(rng)
        self._draw_geometry(rng)
        self._draw_device(rng)

    # -- piezo front end and ADC
    def _draw_adc(self, rng: np.random.Generator) -> None:
        """Scan rate, per-channel sample instants, ghosting, bias, noise and mains hum."""
        kind = int(rng.choice(3, p=[0.65, 0.15, 0.20]))
        # 2000 sets/s needs 8 x 52 us conversions at a 250 kHz ADC clock (prescaler 64);
        # 2500 sets/s only fits with prescaler 32 (500 kHz: 26 us, fewer effective bits).
        self.piezo_rate = (2000, 1600, 2500)[kind]
        self.adc_clock_hz = 500_000.0 if self.piezo_rate == 2500 else 250_000.0
        conv_s = ADC_CONV_CYCLES / self.adc_clock_hz
        self.sample_offset_s = np.arange(N_LEVELS) * conv_s + ADC_SAMPLE_CYCLES / self.adc_clock_hz
        # Ghost: the S/H capacitor still holds the previous channel's voltage. It shares
        # its charge with the pin node (C_pin) and then recovers through the series
        # protection resistor for the 1.5-clock sampling window. Channel 0 is selected
        # during the idle gap after channel 7 (tracking it for 80-210 us): no ghost.
        r_series = float(rng.choice((39e3, 47e3, 56e3, 68e3) if kind == 2
                                    else (82e3, 100e3, 120e3, 150e3)))
        c_pin = rng.uniform(8e-12, 14e-12, N_LEVELS)
        share = C_SAMPLE_HOLD_F / (C_SAMPLE_HOLD_F + c_pin)
        window = np.full(N_LEVELS, ADC_SAMPLE_CYCLES / self.adc_clock_hz)
        window[0] += 1.0 / self.piezo_rate - N_LEVELS * conv_s
        self.r_series = r_series
        self.ghost = share * np.exp(-window / (r_series * (C_SAMPLE_HOLD_F + c_pin)))
        c_float = C_SAMPLE_HOLD_F + c_pin + C_TRACE_F
        self.ghost_float = share * np.exp(-window / ((r_series + R_BIAS_THEVENIN) * c_float))
        # Mid-scale bias from a 1 % divider, plus the ADC's own offset.
        self.bias = 512.0 + np.clip(rng.normal(0.0, 6.0, N_LEVELS), -18, 18)
        self.adc_noise = rng.uniform(0.35, 0.8) * (1.8 if kind == 2 else 1.0)
        # Mains hum on a high-impedance input, as the device's resonator clock sees it.
        self.mains_hz = 50.0 if rng.random() < 0.8 else 60.0
        self.clock_error = rng.uniform(-0.003, 0.003)  # ceramic resonator of a Nano
        self.hum_counts = rng.uniform(0.4, 3.0) * rng.uniform(0.6, 1.4, N_LEVELS) \
            * (1.0 + 0.07 * np.arange(N_LEVELS))  # longer leads to the upper levels
        self.hum_harmonics = np.array([1.0, rng.uniform(0.03, 0.12), rng.uniform(0.2, 0.6),
                                       rng.uniform(0.05, 0.3), rng.uniform(0.02, 0.1)])
        self.hum_orders = np.array([1, 2, 3, 5, 7])
        self.hum_phase = rng.uniform(0, 2 * np.pi, 5)[None, :] + rng.normal(0, 0.3, (N_LEVELS, 5))
        self.float_hum_gain = rng.uniform(5.0, 15.0)  # no disc capacitance to shunt the pickup

    def _draw_discs(self, rng: np.random.Generator) -> None:
        """Disc sensitivity, polarity, AC coupling and faults (weak, cracked, open lead)."""
        self.disc_sens = DISC_SENS_MEDIAN * np.exp(rng.normal(0.0, 0.35, N_LEVELS))
        self.disc_polarity = rng.choice((-1.0, 1.0), N_LEVELS)
        self.hp_tau_s = rng.uniform(5e-3, 20e-3, N_LEVELS)  # 15-30 nF disc on 0.5-1 MOhm bias
        self.faults = ["ok"] * N_LEVELS
        free = list(rng.permutation(N_LEVELS))
        for fault, p in (("weak", 0.25), ("cracked", 0.15), ("open", 0.08)):
            if rng.random() < p:
                ch = int(free.pop())
                self.faults[ch] = fault
                # a weak disc is badly bonded; a cracked one keeps a trace of its output
                self.disc_sens[ch] *= rng.uniform(0.08, 0.3) if fault == "weak" else 0.005

    def _draw_plates(self, rng: np.random.Generator) -> None:
        """Cardboard plate modes, their damping, crosstalk through the walls."""
        f1 = rng.uniform(150.0, 380.0, N_LEVELS)
        self.mode_hz = np.stack([f1, f1 * rng.uniform(1.8, 2.6, N_LEVELS),
                                 f1 * rng.uniform(3.2, 4.5, N_LEVELS),
                                 rng.uniform(1300.0, 3000.0, N_LEVELS)], axis=1)
        self.mode_q = np.stack([rng.uniform(4, 10, N_LEVELS), rng.uniform(4, 9, N_LEVELS),
                                rng.uniform(3, 8, N_LEVELS), rng.uniform(6, 14, N_LEVELS)], axis=1)
        w = np.stack([np.ones(N_LEVELS), rng.uniform(0.3, 0.8, N_LEVELS),
                      rng.uniform(0.15, 0.5, N_LEVELS), rng.uniform(0.3, 0.7, N_LEVELS)], axis=1)
        self.mode_weight = w / w[:, :3].sum(axis=1, keepdims=True)
        self.plate_eff_mass_g = rng.uniform(4.0, 10.0, N_LEVELS)  # moving mass of mode 1
        self.cube_damping = rng.uniform(0.004, 0.010, N_LEVELS)  # 1/Q added per resting cube
        lam = rng.uniform(0.7, 1.5)  # crosstalk length in levels
        dist = np.abs(np.subtract.outer(np.arange(N_LEVELS), np.arange(N_LEVELS)))
        self.crosstalk = np.exp(-dist / lam) * np.exp(rng.normal(0.0, 0.45, (N_LEVELS, N_LEVELS)))
        np.fill_diagonal(self.crosstalk, 1.0)
        self.crosstalk_lambda = lam
        self.own_mode_share = rng.uniform(0.3, 0.8, (N_LEVELS, N_LEVELS))
        self.wall_delay_s = rng.uniform(20e-6, 70e-6)  # ~3 cm of cardboard wall and a joint

    def _draw_cells(self, rng: np.random.Generator) -> None:
        """HX711 boards and load cells: rates, oscillators, scale, sign, offset, noise, creep."""
        layout = int(rng.choice(3, p=[0.55, 0.15, 0.30]))
        rates = np.full(N_LEVELS, 80.0) if layout != 1 else np.full(N_LEVELS, 10.0)
        if layout == 2:  # some green boards still have RATE tied low
            rates[rng.choice(N_LEVELS, int(rng.integers(1, 4)), replace=False)] = 10.0
        self.hx_rate_nominal = rates
        self.hx_osc = np.clip(rng.normal(1.0, 0.06, N_LEVELS), 0.85, 1.15)
        self.hx_period_s = 1.0 / (rates * self.hx_osc)
        self.hx_start_delay_s = rng.uniform(0.0, 5e-3, N_LEVELS)
        same_batch = rng.random() < 0.6
        mv_v = (rng.uniform(0.7, 1.1) * rng.normal(1.0, 0.03, N_LEVELS) if same_batch
                else rng.uniform(0.5, 1.5, N_LEVELS))
        self.cell_sign = np.where(rng.random(N_LEVELS) < 0.25, -1.0, 1.0)
        self.counts_per_g = mv_v * HX_COUNTS_PER_G_PER_MV_V * self.cell_sign
        self.cells = "matched" if same_batch and layout != 2 else "mixed"
        self.plate_g = rng.uniform(8.0, 25.0, N_LEVELS)  # dead weight of plate on its cell
        zero_g = rng.normal(0.0, 8.0, N_LEVELS)  # bridge zero balance, in grams
        self.offset_counts = self.counts_per_g * (self.plate_g + zero_g) \
            + rng.normal(0.0, 2e4, N_LEVELS)
        noise80 = rng.uniform(50.0, 200.0, N_LEVELS)
        self.noise_counts = np.where(rates == 80.0, noise80, noise80 * rng.uniform(0.45, 0.65))
        self.ring_hz = rng.uniform(35.0, 110.0, N_LEVELS)  # plate mass on the cell's spring
        self.ring_zeta = rng.uniform(0.12, 0.35, N_LEVELS)  # cardboard: a few cycles
        self.creep_frac = rng.uniform(0.002, 0.008, N_LEVELS)
        self.creep_tau_s = rng.uniform(8.0, 40.0, N_LEVELS)
        self.hyst_g = rng.uniform(0.005, 0.03, N_LEVELS)
        self.drift_g_per_s = rng.normal(0.0, 0.02 / 60.0, N_LEVELS)
        self.drift_wander_g = rng.uniform(0.003, 0.015, N_LEVELS)
        self.share0 = rng.uniform(0.93, 1.0, N_LEVELS)  # part of a cube's weight on the cell
        self.share_slope = rng.uniform(0.0, 0.06, N_LEVELS)  # less near the walls
        self.ripple_g = rng.uniform(0.0, 0.05, N_LEVELS)  # mains on the bridge wiring
        self.lift_shift_g = rng.uniform(-0.15, 0.15, N_LEVELS)
        self.warmup_g = rng.uniform(-0.06, 0.06, N_LEVELS)
        self.warmup_tau_s = rng.uniform(5.0, 20.0, N_LEVELS)

    def _draw_geometry(self, rng: np.random.Generator) -> None:
        """Hole positions and sizes, cube wood, restitution and friction."""
        self.hole_half = np.zeros(N_LEVELS + 1)
        self.hole_half[1:N_LEVELS] = np.linspace(HOLE_HALF_BOTTOM_M, HOLE_HALF_TOP_M, N_LEVELS - 1)
        self.hole_half[N_LEVELS] = ENTRANCE_HALF_M
        ang = rng.uniform(0, 2 * np.pi, N_LEVELS + 1)
        off = rng.uniform(0.005, 0.011, N_LEVELS + 1)  # holes are not quite aligned
        off[N_LEVELS] = rng.uniform(0.0, 0.004)  # the entrance is the mouth of the shaft
        self.hole_centre = np.stack([off * np.cos(ang), off * np.sin(ang)], axis=1)
        self.hole_centre[0] = 0.0  # the base plate has no hole
        self.cube_mass_g = rng.uniform(0.35, 0.75)  # design.md: 0.3-0.8 g by wood and size
        self.wood_density = rng.uniform(0.55, 0.75)  # g/cm^3
        self.e_card = rng.uniform(0.25, 0.45)  # wood on cardboard
        self.e_wood = rng.uniform(0.5, 0.65)  # wood on wood
        self.mu = rng.uniform(0.3, 0.5)  # sliding friction, wood on cardboard
        self.kick = rng.uniform(0.15, 0.45)  # sideways speed from landing on an edge
        self.knock_gain = rng.uniform(0.15, 0.6)  # share of an impact's speed given to a cube hit

    def _draw_device(self, rng: np.random.Generator) -> None:
        """Firmware details: buffer size, clock phases, boot delay, identity."""
        self.piezo_batch = int(rng.choice((6, 8, 10, 12, PIEZO_MAX_SETS)))
        self.boot_s = MICROS_STEP_US * 1e-6 * int(rng.integers(20_000, 110_000))  # 80-440 ms
        self.load_phase_s = rng.uniform(0.0, 1.0 / LOAD_POLL_HZ)
        self.device_id = bytes(rng.integers(0, 256, 8).astype(np.uint8).tolist())
        self.cpu_load = int(rng.integers(35, 60))

    def cube_side_m(self, mass_g: float) -> float:
        """Side of a wooden cube of ``mass_g``."""
        return float((mass_g / self.wood_density) ** (1 / 3)) * 0.01

    def share(self, level: int, pos: FArr) -> float:
        """Fraction of a cube's weight at ``pos`` that goes through the cell of ``level``."""
        r = min(1.0, float(np.hypot(*pos)) / PLATE_HALF_M)
        return float(self.share0[level] - self.share_slope[level] * r)

    def describe(self) -> dict[str, Any]:
        """The build as plain JSON (written into the truth file)."""
        def r(x: Any, n: int = 4) -> Any:
            return np.round(np.asarray(x, float), n).tolist()
        return {
            "piezo_rate_hz": self.piezo_rate, "adc_clock_hz": self.adc_clock_hz,
            "ghost": r(self.ghost), "ghost_float": r(self.ghost_float),
            "r_series_ohm": self.r_series, "bias": r(self.bias, 2),
            "mains_hz": self.mains_hz, "clock_error": round(self.clock_error, 6),
            "hum_counts": r(self.hum_counts, 2), "disc_faults": self.faults,
            "disc_sens_counts_per_mNs": r(self.disc_sens, 1),
            "mode_hz": r(self.mode_hz, 1), "crosstalk_lambda": round(self.crosstalk_lambda, 3),
            "hx711_rate_sps": r(self.hx_rate_nominal, 1), "hx711_osc": r(self.hx_osc),
            "counts_per_g": r(self.counts_per_g, 1), "noise_counts": r(self.noise_counts, 1),
            "creep_frac": r(self.creep_frac), "creep_tau_s": r(self.creep_tau_s, 2),
            "ring_hz": r(self.ring_hz, 1), "cube_mass_g": round(self.cube_mass_g, 4),
            "e_card": round(self.e_card, 3), "hole_centre_mm": r(self.hole_centre * 1e3, 2),
            "piezo_batch": self.piezo_batch, "cells": self.cells,
        }


def cheb(p: FArr, c: FArr) -> float:
    """Chebyshev distance (square holes)."""
    return float(np.max(np.abs(p - c)))


# ----------------------------------------------------------------------------- scene events

@dataclass
class Cube:
    """One wooden cube: its mass never changes, its colour is whose clue it is."""

    ident: int
    mass_g: float
    colour: str


@dataclass(eq=False)
class Resting:
    """A cube lying on a plate."""

    cube: Cube
    pos: FArr
    t_on: float  # its weight is on the plate from here (last bounce)
    t_rest: float  # it stopped moving


@dataclass
class Strike:
    """A short force on the tower's structure, heard by every disc."""

    t: float
    origin: float  # level where the wave starts (delays); -1 = the table under the base
    drive: FArr  # (8,) how hard each level is driven; one-hot for a cube on a plate
    impulse_mns: float  # momentum change, mN s
    contact_s: float  # contact time: short = click, long = thump
    masses_g: FArr  # cube mass resting on each plate at the time (modes shift)
    tone: tuple[float, float, float] | None = None  # (Hz, Q, counts): a table/floor mode


@dataclass
class Hiss:
    """Band-limited noise heard by the discs: sliding, scraping, handling, chairs, rumble."""

    t0: float
    t1: float
    lo_hz: float
    hi_hz: float
    gains: FArr  # (8,) rms counts per channel
    swell: bool = False  # rises and falls (a scrape) instead of starting at once


@dataclass
class Voice:
    """Speech reaching the discs through the air: a harmonic buzz, syllable by syllable."""

    t0: float
    t1: float
    f0_hz: float
    gains: FArr


@dataclass
class Press:
    """A smooth force on load cells: fingers on a plate, a hand on the tower."""

    t0: float
    t1: float
    grams: FArr  # (8,) apparent load per level at full press
    rise_s: float
    tremor: float  # relative 8-12 Hz physiological tremor


@dataclass
class Shake:
    """Vertical acceleration of the whole tower (table, door, chair): inertial load."""

    t: float
    accel: float  # m/s^2 peak
    hz: float
    zeta: float


@dataclass
class Scene:
    """Everything that happens in one recording, and the truth about it."""

    tower: Tower
    scenario: str
    duration: float
    seed: int
    plates: list[list[Resting]] = field(default_factory=lambda: [[] for _ in range(N_LEVELS)])
    strikes: list[Strike] = field(default_factory=list)
    hisses: list[Hiss] = field(default_factory=list)
    voices: list[Voice] = field(default_factory=list)
    pops: list[tuple[float, int, float]] = field(default_factory=list)  # (t, level, counts)
    weights: list[tuple[float, int, float]] = field(default_factory=list)  # (t, level, g)
    impulses: list[tuple[float, int, float]] = field(default_factory=list)  # (t, level, gf s)
    presses: list[Press] = field(default_factory=list)
    shakes: list[Shake] = field(default_factory=list)
    shifts: list[tuple[float, int, float]] = field(default_factory=list)  # zero shifts, g
    lifted: list[tuple[float, float, int]] = field(default_factory=list)  # (t_off, t_on, k)
    hum_gain: float = 1.0  # a noisy room's dimmers and power supplies
    landings: list[dict[str, Any]] = field(default_factory=list)
    knockdowns: list[dict[str, Any]] = field(default_factory=list)
    removals: list[dict[str, Any]] = field(default_factory=list)
    lifts: list[dict[str, Any]] = field(default_factory=list)
    closes: list[dict[str, Any]] = field(default_factory=list)
    knocks: list[dict[str, Any]] = field(default_factory=list)
    spills: list[dict[str, Any]] = field(default_factory=list)
    quiet_s: float = 5.0
    players: list[str] = field(default_factory=list)

    def masses_at(self, t: float) -> FArr:
        """Cube mass resting on every plate at ``t``."""
        return np.array([sum(r.cube.mass_g for r in p if r.t_on <= t) for p in self.plates])


# ----------------------------------------------------------------------------- a cube's fall

@dataclass
class Fall:
    """What one cube did from entering the tower (or being knocked off) to resting."""

    cube: Cube
    t_start: float
    t_first: float | None = None
    path: list[int] = field(default_factory=list)  # level of every strike, in order
    hits: list[float] = field(default_factory=list)  # time of every strike
    bounce_times: list[float] = field(default_factory=list)  # strikes on the resting plate
    on_cube: bool = False
    floor: int = -1
    t_rest: float = 0.0
    knocked_fall: Fall | None = None
    knocked_from: int = -1
    t_knocked: float = 0.0


class Physics:
    """Follows cubes through the tower of a scene, writing strikes, slides and loads."""

    def __init__(self, scene: Scene, rng: np.random.Generator) -> None:
        self.sc = scene
        self.tw = scene.tower
        self.rng = rng

    def strike(self, fall: Fall, t: float, level: int, impulse_ns: float, contact_s: float,
               on_plate: bool, scale: float = 1.0) -> None:
        """A cube hits something at ``level``: sound for all, a force pulse on the cell."""
        drive = np.zeros(N_LEVELS)
        drive[level] = scale
        self.sc.strikes.append(Strike(t, float(level), drive, impulse_ns * 1e3, contact_s,
                                      self.sc.masses_at(t)))
        if on_plate:
            self.sc.impulses.append((t, level, impulse_ns / G_ACCEL * 1e3))
        if fall.t_first is None:
            fall.t_first = t
        fall.path.append(level)
        fall.hits.append(t)

    def travel(self, fall: Fall, t: float, level: int, pos: FArr, vh: FArr,
               dt: float) -> tuple[FArr, FArr]:
        """Move sideways for ``dt``; bounce off the module walls (a wall tick each time)."""
        lim = PLATE_HALF_M - self.tw.cube_side_m(fall.cube.mass_g) / 2
        pos = pos + vh * dt
        vh = vh.copy()
        for ax in range(2):
            if abs(pos[ax]) > lim:
                over = abs(pos[ax]) - lim
                frac = max(0.0, 1.0 - over / max(abs(vh[ax]) * dt, 1e-9))
                pos[ax] = math.copysign(max(0.0, lim - over), pos[ax])
                speed = abs(vh[ax])
                vh[ax] *= -0.4  # cardboard wall: most of the speed is lost
                if speed > 0.05:  # wood on the cardboard wall: a tick at that level
                    m = fall.cube.mass_g * 1e-3
                    self.strike(fall, t + frac * dt, level, m * 1.4 * speed, 3e-4,
                                on_plate=False, scale=0.5)
        return pos, vh

    def drop(self, cube: Cube, t: float, level: int, pos: FArr, v: float, vh: FArr,
             knock: bool) -> Fall:
        """Follow ``cube`` falling onto plate ``level`` from one module height above.

        ``v`` is its downward speed then. A thrown cube (``knock``) may push one resting
        cube off a plate; a knocked cube may not (it falls from rest, a quarter of the
        energy), so a throw changes at most three levels, as design.md says.
        """
        tw, rng = self.tw, self.rng
        fall = Fall(cube, t)
        m = cube.mass_g * 1e-3
        side = tw.cube_side_m(cube.mass_g)
        height = MODULE_H_M
        while True:
            v_new = math.sqrt(v * v + 2 * G_ACCEL * height)
            dt = (v_new - v) / G_ACCEL
            pos, vh = self.travel(fall, t, level, pos, vh, dt)
            t, v = t + dt, v_new
            if level >= 1:
                d, a = cheb(pos, tw.hole_centre[level]), tw.hole_half[level]
                if d < a - side / 2:  # straight through without touching
                    level, height = level - 1, MODULE_H_M
                    continue
                if d < a:  # the centre is over the hole: the edge clips the cube
                    self.strike(fall, t, level, m * v * rng.uniform(0.15, 0.45),
                                rng.uniform(1e-4, 3e-4), on_plate=True)
                    v *= rng.uniform(0.6, 0.9)
                    vh = vh + self.random_dir() * tw.kick * v * 0.5
                    level, height = level - 1, MODULE_H_M
                    continue
            result = self.bounce(fall, t, level, pos, v, vh, knock)
            if result is None:
                return fall
            t, level, pos, v, vh = result
            height = MODULE_H_M

    def bounce(self, fall: Fall, t: float, level: int, pos: FArr, v: float, vh: FArr,
               knock: bool) -> tuple[float, int, FArr, float, FArr] | None:
        """Bounces, slide and rest on plate ``level``; or the state falling into its hole."""
        tw, rng, sc = self.tw, self.rng, self.sc
        m = fall.cube.mass_g * 1e-3
        side = tw.cube_side_m(fall.cube.mass_g)
        hole_c, hole_a = tw.hole_centre[level], tw.hole_half[level]
        fall.bounce_times = []
        for _ in range(MAX_BOUNCES):
            under = [r for r in sc.plates[level]
                     if r.t_rest <= t and np.hypot(*(r.pos - pos)) < side]
            if under:
                e = tw.e_wood * rng.uniform(0.85, 1.1)
                contact = rng.uniform(*CUBE_CONTACT_WOOD_S)
                fall.on_cube = True
            else:
                e = tw.e_card * rng.uniform(0.75, 1.2)
                contact = rng.uniform(*CUBE_CONTACT_CARD_S)
            self.strike(fall, t, level, m * (1 + e) * v, contact, on_plate=True)
            fall.bounce_times.append(t)
            if knock and fall.knocked_fall is None:
                self.try_knock(fall, t, level, pos, v, under)
            speed = float(np.hypot(*vh))
            slow = tw.mu * (1 + e) * v
            vh = vh * max(0.0, speed - slow) / speed if speed > 0 else vh
            vh = vh + self.random_dir() * tw.kick * v * rng.uniform(0.3, 1.0)
            v = e * v
            if v < V_STOP:
                break
            flight = 2 * v / G_ACCEL
            pos, vh = self.travel(fall, t, level, pos, vh, flight)
            t += flight
            if level >= 1 and cheb(pos, hole_c) < hole_a:  # came down over the hole
                return t, level - 1, pos, v, vh
        t_on = t + rng.uniform(0.005, 0.03)  # rocks on an edge, then lies flat
        speed = float(np.hypot(*vh))
        t_slide = speed / (tw.mu * G_ACCEL)
        steps = np.linspace(0.0, 1.0, 12)[1:]
        for s in steps:  # distance covered x(t) = v t - mu g t^2 / 2, t = s * t_slide
            tt = s * t_slide
            p = pos + vh / max(speed, 1e-9) * (speed * tt - 0.5 * tw.mu * G_ACCEL * tt * tt)
            if level >= 1 and cheb(p, hole_c) < hole_a:  # slides over the edge and tips in
                self.slide_sound(fall, t_on, t_on + tt, level, speed)
                return t_on + tt, level - 1, p, 0.1, vh * 0.3
        end = pos + vh / max(speed, 1e-9) * (speed * t_slide / 2)
        lim = PLATE_HALF_M - side / 2
        end = np.clip(end, -lim, lim)
        self.slide_sound(fall, t_on, t_on + t_slide, level, speed)
        fall.floor, fall.t_rest = level, t_on + t_slide
        sc.plates[level].append(Resting(fall.cube, end, t_on, fall.t_rest))
        sc.weights.append((t_on, level, fall.cube.mass_g * tw.share(level, end)))
        return None

    def slide_sound(self, fall: Fall, t0: float, t1: float, level: int, speed: float) -> None:
        """Rubbing noise of a sliding cube, loudest on its own plate."""
        if t1 - t0 < 0.01:
            return
        counts = 4.0 * (fall.cube.mass_g / 0.55) * min(1.0, speed / 0.2)  # at a median disc
        gains = counts * np.abs(self.tw.crosstalk[level]) * self.tw.disc_sens / DISC_SENS_MEDIAN
        self.sc.hisses.append(Hiss(t0, t1, 150.0, 700.0, gains))

    def try_knock(self, fall: Fall, t: float, level: int, pos: FArr, v: float,
                  under: list[Resting]) -> None:
        """Does this strike push a resting cube into the hole of ``level``?

        A cube hit directly slides off with part of the impact's speed and falls if its
        slide reaches the hole. A cube lying over the hole's edge may be jolted in, the
        likelier the harder the strike and the further it overhangs.
        """
        tw, rng, sc = self.tw, self.rng, self.sc
        if level == 0:
            return
        hole_c, hole_a = tw.hole_centre[level], tw.hole_half[level]
        m = fall.cube.mass_g * 1e-3
        impulse = m * (1 + tw.e_card) * v
        for r in [x for x in sc.plates[level] if x.t_rest <= t]:
            side = tw.cube_side_m(r.cube.mass_g)
            if r in under:
                u = v * tw.knock_gain * rng.uniform(0.2, 1.0) * fall.cube.mass_g / r.cube.mass_g
                d = r.pos - pos
                n = d / max(float(np.hypot(*d)), 1e-6) if np.hypot(*d) > 1e-6 else self.random_dir()
                t_stop = u / (tw.mu * G_ACCEL)
                for s in np.linspace(0.0, 1.0, 10)[1:]:
                    tt = s * t_stop
                    p = r.pos + n * (u * tt - 0.5 * tw.mu * G_ACCEL * tt * tt)
                    if cheb(p, hole_c) < hole_a:
                        self.knock_off(fall, r, t + tt, level, p)
                        return
                r.pos = np.clip(r.pos + n * u * t_stop / 2, -PLATE_HALF_M, PLATE_HALF_M)
                continue
            overhang = side / 2 - (cheb(r.pos, hole_c) - hole_a)
            if overhang > 0:
                p_fall = 0.35 * min(1.0, impulse / J_REF_NS) * overhang / (side / 2)
                if rng.random() < p_fall:
                    self.knock_off(fall, r, t + rng.uniform(0.02, 0.08), level, r.pos)
                    return

    def knock_off(self, fall: Fall, r: Resting, t: float, level: int, edge: FArr) -> None:
        """Resting cube ``r`` leaves plate ``level`` at ``t`` and falls on."""
        sc, tw = self.sc, self.tw
        sc.plates[level].remove(r)
        sc.weights.append((t, level, -r.cube.mass_g * tw.share(level, r.pos)))
        fall.knocked_from, fall.t_knocked = level, t
        fall.knocked_fall = self.drop(r.cube, t, level - 1, edge.copy(), 0.1,
                                      self.random_dir() * 0.05, knock=False)

    def random_dir(self) -> FArr:
        """A unit vector in a random horizontal direction."""
        a = self.rng.uniform(0, 2 * np.pi)
        return np.array([math.cos(a), math.sin(a)])

    def throw(self, cube: Cube, t_throw: float) -> Fall:
        """A player drops ``cube`` into the entrance at ``t_throw``; follow it to rest."""
        tw, rng = self.tw, self.rng
        side = tw.cube_side_m(cube.mass_g)
        h_drop = rng.uniform(0.03, 0.12)  # fingers a few cm above the roof
        t = t_throw + math.sqrt(2 * h_drop / G_ACCEL)
        v = math.sqrt(2 * G_ACCEL * h_drop)
        vh = rng.normal(0.0, 0.1, 2)
        pos = tw.hole_centre[N_LEVELS] + rng.uniform(-1, 1, 2) * (ENTRANCE_HALF_M - side / 2)
        fall = Fall(cube, t_throw)
        if rng.random() < 0.12:  # grazes the entrance rim, part of module 7's roof
            m = cube.mass_g * 1e-3
            self.strike(fall, t, N_LEVELS - 1, m * v * rng.uniform(0.2, 0.5), 2e-4,
                        on_plate=False, scale=0.4)
            v *= rng.uniform(0.6, 0.9)
            vh = vh + self.random_dir() * 0.1
        inner = self.drop(cube, t, N_LEVELS - 1, pos, v, vh, knock=True)
        inner.t_start = t_throw
        if fall.t_first is not None:
            inner.t_first = fall.t_first
            inner.path = fall.path + inner.path
            inner.hits = fall.hits + inner.hits
        return inner


# ----------------------------------------------------------------------------- scenarios

class Director:
    """Schedules what people do in a scene and keeps the truth."""

    def __init__(self, scene: Scene, rng: np.random.Generator) -> None:
        self.sc = scene
        self.rng = rng
        self.next_ident = 0
        self.mass_rng = np.random.default_rng([scene.seed, 4242])  # the set of cubes

    def new_cube(self, colour: str) -> Cube:
        """A cube from a supply (mass varies with the wood, +-4 %)."""
        self.next_ident += 1
        m = self.sc.tower.cube_mass_g * float(np.clip(self.mass_rng.normal(1.0, 0.04), 0.9, 1.1))
        return Cube(self.next_ident, m, colour)

    def throw(self, cube: Cube, t_throw: float, cause: str) -> bool:
        """Throw ``cube`` if everything it causes ends before the recording; return that."""
        sc = self.sc
        trial = Scene(sc.tower, sc.scenario, sc.duration, sc.seed, copy.deepcopy(sc.plates))
        fall = Physics(trial, self.rng).throw(cube, t_throw)
        ends = [fall.t_rest] + ([fall.knocked_fall.t_rest] if fall.knocked_fall else [])
        if fall.floor < 0 or max(ends) >= sc.duration - END_MARGIN_S:
            return False
        sc.plates = trial.plates
        for name in ("strikes", "hisses", "weights", "impulses"):
            getattr(sc, name).extend(getattr(trial, name))
        throw_landing = self.landing(fall, cause, knocked=False)
        if fall.knocked_fall is not None:
            throw_landing["caused_knockdown"] = True
            kf = fall.knocked_fall
            kl = self.landing(kf, "knocked", knocked=True)
            kl["from_floor"] = fall.knocked_from
            kl["t_knocked"] = round(fall.t_knocked, 4)
            self.sc.knockdowns.append({"t": round(fall.t_knocked, 4), "floor": kf.floor,
                                       "from_floor": fall.knocked_from,
                                       "throw_landing": throw_landing, "knocked_landing": kl})
        return True

    def landing(self, fall: Fall, cause: str, knocked: bool) -> dict[str, Any]:
        """The truth landing of ``fall`` (indices are filled in at the end)."""
        assert fall.t_first is not None
        doc = {"t": round(fall.t_rest, 4), "t_first_impact": round(fall.t_first, 4),
               "floor": fall.floor, "cubes": 1, "knocked": knocked, "caused_knockdown": False,
               "cause": cause, "colour": fall.cube.colour, "cube": fall.cube.ident,
               "mass_g": round(fall.cube.mass_g, 4), "path": fall.path,
               "strike_times": [round(t, 4) for t in fall.hits],
               "bounce_times": [round(t, 4) for t in fall.bounce_times],
               "bounces": len(fall.bounce_times), "on_cube": fall.on_cube}
        if not knocked:
            doc["t_throw"] = round(fall.t_start, 4)
        self.sc.landings.append(doc)
        return doc

    # -- disturbances
    def knock_event(self, t: float, kind: str) -> float:
        """A non-cube disturbance at ``t``; returns when it is over (nothing happens if the
        recording ends before)."""
        rng, sc, tw = self.rng, self.sc, self.sc.tower
        if t >= sc.duration - END_MARGIN_S:
            return t
        sens = tw.disc_sens / DISC_SENS_MEDIAN
        end = t
        if kind == "table":  # a fist, a cup or an elbow on the table
            j = math.exp(rng.uniform(math.log(0.3), math.log(5.0)))  # mostly mild, some hard
            sc.strikes.append(Strike(t, -1.0, rng.uniform(0.5, 1.2, N_LEVELS), j,
                                     rng.uniform(2e-3, 6e-3), sc.masses_at(t),
                                     (rng.uniform(30, 120), rng.uniform(3, 6),
                                      rng.uniform(10, 80))))
            sc.shakes.append(Shake(t, rng.uniform(0.5, 8.0), rng.uniform(15, 60),
                                   rng.uniform(0.05, 0.2)))
            end = t + 0.2
        elif kind == "hand":  # fingers touch and steady the tower
            end = t + rng.uniform(0.6, 3.0)
            module = int(rng.integers(0, N_LEVELS))
            self.handle(t, end, module, rng.uniform(5.0, 30.0))
        elif kind == "talk":
            end = t + rng.uniform(1.0, 4.0)
            sc.voices.append(Voice(t, end, rng.uniform(90, 230),
                                   rng.uniform(1.0, 6.0) * rng.uniform(0.5, 1.5, N_LEVELS)))
        elif kind == "door":  # a door slams: a pressure pulse and the floor thuds
            sc.strikes.append(Strike(t, -1.0, rng.uniform(0.3, 1.0, N_LEVELS),
                                     rng.uniform(0.2, 1.0), rng.uniform(6e-3, 1.2e-2),
                                     sc.masses_at(t), (rng.uniform(12, 25), 2.5,
                                                       rng.uniform(10, 60))))
            sc.shakes.append(Shake(t, rng.uniform(0.1, 0.8), rng.uniform(8, 20), 0.15))
            end = t + 0.4
        elif kind == "chair":  # a chair scraped over the floor
            end = t + rng.uniform(0.5, 1.8)
            sc.hisses.append(Hiss(t, end, 30.0, 250.0,
                                  rng.uniform(3, 20) * rng.uniform(0.6, 1.4, N_LEVELS) * sens,
                                  swell=True))
            sc.shakes.append(Shake(t + 0.1, rng.uniform(0.05, 0.3), rng.uniform(20, 60), 0.3))
        sc.knocks.append({"t": round(t, 4), "t_end": round(end, 4), "kind": kind})
        return end

    def handle(self, t0: float, t1: float, module: int, counts: float) -> None:
        """Hands on the walls of ``module``: rumble and rub on the discs near it, and the
        frames it compresses lean on the cells of that module and those below."""
        rng, sc, tw = self.rng, self.sc, self.sc.tower
        near = np.exp(-np.abs(np.arange(N_LEVELS) - module) / 1.5)
        sens = tw.disc_sens / DISC_SENS_MEDIAN
        sc.hisses.append(Hiss(t0, t1, 2.0, 40.0, counts * near * sens, swell=True))
        sc.hisses.append(Hiss(t0, t1, 150.0, 700.0, 0.25 * counts * near * sens, swell=True))
        grams = np.where(np.arange(N_LEVELS) <= module,
                         rng.uniform(-0.1, 0.3, N_LEVELS) * near, 0.0)
        sc.presses.append(Press(t0, t1, grams, rng.uniform(0.15, 0.4), rng.uniform(0.05, 0.15)))

    # -- lifting the upper modules
    def lift(self, t_grip: float, t_lift: float, t_close: float, k: int) -> None:
        """Lift modules k..7 at ``t_lift`` and set them back at ``t_close``.

        Channels k+1..7 lose their spring contacts: their HX711s lose power, their discs
        leave the ADC pins floating. The frame of module k-1 is relieved, shifting the
        zero of cell k a little; closing shifts it back, not quite exactly.
        """
        rng, sc, tw = self.rng, self.sc, self.sc.tower
        self.handle(t_grip, t_close + rng.uniform(0.3, 0.6), max(k - 1, 0), rng.uniform(8, 25))
        drive = np.zeros(N_LEVELS)
        drive[k] = 0.6
        if k + 1 < N_LEVELS:
            drive[k + 1] = 1.0
        sc.strikes.append(Strike(t_lift, float(k), drive, rng.uniform(0.3, 1.5),
                                 rng.uniform(4e-3, 1e-2), sc.masses_at(t_lift)))
        sc.strikes.append(Strike(t_close, float(k), drive, rng.uniform(2.0, 8.0),
                                 rng.uniform(6e-3, 1.5e-2), sc.masses_at(t_close)))
        sc.impulses.append((t_close, k, rng.uniform(0.02, 0.1)))  # the frame flexes, set down
        shift = tw.lift_shift_g[k]
        sc.shifts.append((t_lift, k, shift))
        sc.shifts.append((t_close, k, -shift + rng.normal(0.0, 0.03)))
        if k >= 1:
            sc.shifts.append((t_lift, k - 1, 0.3 * shift))
            sc.shifts.append((t_close, k - 1, -0.3 * shift + rng.normal(0.0, 0.01)))
        if k + 1 < N_LEVELS:
            sc.lifted.append((t_lift, t_close, k))
            for ch in range(k + 1, N_LEVELS):  # the disc's handling charge meets the input
                sc.pops.append((t_close + rng.uniform(0, 0.02), ch,
                                rng.choice((-1, 1)) * rng.uniform(20, 200)))
        sc.lifts.append({"t": round(t_lift, 4), "exposed": k, "t_grip": round(t_grip, 4),
                         "lifted_levels": list(range(k + 1, N_LEVELS))})
        sc.closes.append({"t": round(t_close, 4), "exposed": k})

    def remove(self, t_touch: float, t_off: float, k: int, cubes: list[Resting]) -> None:
        """Fingers press plate k, gather ``cubes`` (clacking) and lift them out at ``t_off``."""
        rng, sc, tw = self.rng, self.sc, self.sc.tower
        drive = np.zeros(N_LEVELS)
        drive[k] = 1.0
        sc.strikes.append(Strike(t_touch, float(k), drive, rng.uniform(0.2, 0.8),
                                 rng.uniform(5e-3, 1.2e-2), sc.masses_at(t_touch)))
        for tc in np.sort(rng.uniform(t_touch + 0.1, t_off - 0.05, len(cubes))):
            sc.strikes.append(Strike(float(tc), float(k), drive.copy(), rng.uniform(0.05, 0.2),
                                     rng.uniform(*CUBE_CONTACT_WOOD_S), sc.masses_at(float(tc))))
        gains = rng.uniform(8, 30) * np.abs(tw.crosstalk[k]) * tw.disc_sens / DISC_SENS_MEDIAN
        sc.hisses.append(Hiss(t_touch, t_off, 150.0, 800.0, gains, swell=True))
        grams = np.zeros(N_LEVELS)
        grams[k] = rng.uniform(2.0, 20.0)
        sc.presses.append(Press(t_touch, t_off, grams, rng.uniform(0.1, 0.3), 0.1))
        for r in cubes:
            sc.plates[k].remove(r)
            sc.weights.append((t_off, k, -r.cube.mass_g * tw.share(k, r.pos)))
        sc.removals.append({"t": round(t_off, 4), "floor": k, "cubes": len(cubes),
                            "t_touch": round(t_touch, 4),
                            "colours": [r.cube.colour for r in cubes]})


def throws_single(d: Director, spacing: tuple[float, float]) -> None:
    """Single throws ``spacing`` seconds apart onto a tower filling up."""
    sc, rng = d.sc, d.rng
    t = sc.quiet_s + rng.uniform(0.2, 0.8)
    while t < sc.duration - END_MARGIN_S - 0.5:
        d.throw(d.new_cube(str(rng.choice(sc.players))), t, "throw")
        t += rng.uniform(*spacing)


def scenario_single(d: Director) -> None:
    """Single throws several seconds apart."""
    throws_single(d, (2.5, 6.0))


def scenario_rapid(d: Director) -> None:
    """Bursts of throws 0.3-0.8 s apart (a player throwing clue after clue), short pauses."""
    sc, rng = d.sc, d.rng
    t = sc.quiet_s + rng.uniform(0.2, 0.8)
    while t < sc.duration - END_MARGIN_S - 0.5:
        colour = str(rng.choice(sc.players))
        for _ in range(int(rng.integers(3, 9))):
            if t >= sc.duration - END_MARGIN_S - 0.5:
                break
            d.throw(d.new_cube(colour), t, "throw")
            t += rng.uniform(0.3, 0.8)
        t += rng.uniform(1.5, 3.5)


def scenario_noisy(d: Director) -> None:
    """Single throws in a noisy room: stronger hum, a rumbling fan, and disturbances."""
    sc, rng = d.sc, d.rng
    sc.hum_gain = rng.uniform(2.0, 4.0)
    sens = sc.tower.disc_sens / DISC_SENS_MEDIAN
    sc.hisses.append(Hiss(0.0, sc.duration, 20.0, 150.0, rng.uniform(0.4, 1.5) * sens))
    throws_single(d, (3.0, 6.0))
    t = sc.quiet_s + rng.uniform(0.5, 3.0)
    kinds = ("table", "hand", "talk", "door", "chair")
    while t < sc.duration - END_MARGIN_S - 1.0:
        kind = str(rng.choice(kinds, p=[0.3, 0.25, 0.2, 0.1, 0.15]))
        end = d.knock_event(t, kind)
        t = max(t + rng.exponential(4.0) + 1.5, end + 0.5)


@dataclass
class Game:
    """The state of a game of Mord im Arosa that the director needs (rules text)."""

    players: list[str]
    supply: dict[str, int]
    sheet: dict[str, int]
    act: int = 1
    victims_found: int = 0
    turn: int = 0
    in_hand: list[Cube] = field(default_factory=list)


def scenario_game(d: Director) -> None:
    """A game per the rules: prologue, then turns of inspection in Act I and Act II."""
    sc, rng = d.sc, d.rng
    game = Game(list(sc.players), {c: CLUES_PER_PLAYER for c in sc.players},
                {c: 0 for c in sc.players})
    t = sc.quiet_s + rng.uniform(0.2, 0.8)
    prologue = [d.new_cube("red"), d.new_cube("red")]
    for colour in game.players:
        for _ in range(2):
            game.supply[colour] -= 1
            prologue.append(d.new_cube(colour))
    for cube in prologue:  # the victims, then two clues per player one after another
        if not d.throw(cube, t, "prologue"):
            return
        t += rng.uniform(2.0, 4.0)
    if rng.random() < 0.5:
        d.knock_event(t - rng.uniform(0.8, 1.5), "talk")
    while t < sc.duration:
        t_next = game_turn(d, game, t)
        if t_next is None:
            return
        t = t_next


def game_turn(d: Director, game: Game, t: float) -> float | None:
    """One investigator's turn; returns when the next may start, None when out of time."""
    sc, rng = d.sc, d.rng
    me = game.players[game.turn % len(game.players)]
    if rng.random() < 0.4:  # the table discusses what it heard
        d.knock_event(t + rng.uniform(0.0, 0.8), "talk")
    floor = choose_floor(d)
    on_floor = list(sc.plates[floor])
    n_grabs = math.ceil(len(on_floor) / GRAB_MAX_CUBES) + 1
    t_grip = t + rng.uniform(1.5, 3.0)
    t_lift = t_grip + rng.uniform(0.4, 0.8)
    t_close_latest = t_lift + 3.0 + 2.2 * n_grabs + 2.0  # look, grabs, close (see below)
    if t_close_latest >= sc.duration - END_MARGIN_S:
        return None
    t_now = t_lift + rng.uniform(1.5, 3.0)  # looks in
    # Cubes can fall out of the lifted modules (rules note); thrown back at turn end.
    spilled: list[Cube] = []
    upper = [(lv, r) for lv in range(floor + 1, N_LEVELS) for r in sc.plates[lv]]
    if upper and rng.random() < 0.1:
        lv, r = upper[int(rng.integers(len(upper)))]
        t_spill = t_lift + rng.uniform(0.3, 1.2)
        sc.plates[lv].remove(r)
        sc.weights.append((t_spill, lv, -r.cube.mass_g * sc.tower.share(lv, r.pos)))
        sc.spills.append({"t": round(t_spill, 4), "from_floor": lv, "colour": r.cube.colour})
        spilled.append(r.cube)
    victims = [r for r in on_floor if r.cube.colour == "red"]
    clues = [r for r in on_floor if r.cube.colour != "red"]
    penalties = 0
    if game.act == 1:
        if victims:
            t_now = grab(d, t_now, floor, victims)
            game.victims_found += len(victims)
            for r in clues:  # caught players' clues go on the sheet from their supply
                if r.cube.colour != me and game.supply[r.cube.colour] > 0:
                    game.supply[r.cube.colour] -= 1
                    game.sheet[r.cube.colour] += 1
        else:
            penalties = 1
    elif rng.random() < 0.7 or game.sheet[me] == 0:  # suspect one or two players
        others = [c for c in game.players if c != me]
        suspects = list(rng.choice(others, min(len(others), int(rng.integers(1, 3))),
                                   replace=False))
        own0 = floor == 0 and not any(r.cube.colour == me for r in clues)
        for s in suspects:
            n = sum(r.cube.colour == s for r in clues)
            if own0 or n == 0:
                penalties += 1
            else:
                moved = min(n, game.supply[s])
                game.supply[s] -= moved
                game.sheet[s] += moved
    else:  # cover own tracks
        mine = sum(r.cube.colour == me for r in clues)
        game.sheet[me] -= min(mine, game.sheet[me])
        penalties = 0 if mine else 1
    for i in range(0, len(clues), GRAB_MAX_CUBES):
        t_now = grab(d, t_now, floor, clues[i:i + GRAB_MAX_CUBES])
    game.in_hand = [r.cube for r in clues]
    t_close = t_now + rng.uniform(1.0, 2.0)
    d.lift(t_grip, t_lift, t_close, floor)
    if game.act == 1 and game.victims_found >= 2:
        game.act = 2
    t = t_close + rng.uniform(1.5, 3.0)
    throws = game.in_hand + [d.new_cube(me) for _ in range(min(penalties, game.supply[me]))]
    game.supply[me] -= min(penalties, game.supply[me])
    for cube in throws + spilled:  # clues back one after another, then penalties
        if not d.throw(cube, t, "throw_back" if cube in game.in_hand or cube in spilled
                       else "penalty"):
            return None
        t += rng.uniform(1.8, 3.5)
    game.turn += 1
    if max(game.sheet.values()) >= 10 or min(game.supply.values()) <= 0:
        return None
    return t


def grab(d: Director, t: float, floor: int, cubes: list[Resting]) -> float:
    """One grab of up to three cubes from the exposed floor; returns when the hand is out."""
    rng = d.rng
    t_touch = t + rng.uniform(0.5, 1.0)
    t_off = t_touch + rng.uniform(0.6, 1.2)
    d.remove(t_touch, t_off, floor, cubes)
    return t_off


def choose_floor(d: Director) -> int:
    """The floor an investigator opens: mostly where they heard cubes land."""
    sc, rng = d.sc, d.rng
    heard = np.array([len(p) > 0 for p in sc.plates], float)
    if heard.sum() > 0 and rng.random() < 0.6:
        return int(rng.choice(N_LEVELS, p=heard / heard.sum()))
    return int(rng.integers(0, N_LEVELS))


SCENARIO_FUNCS: dict[str, Callable[[Director], None]] = {
    "single": scenario_single, "rapid": scenario_rapid, "noisy": scenario_noisy,
    "game": scenario_game,
}


def make_scene(seed: int, scenario: str, duration: float) -> Scene:
    """The events and truth of one recording (no signals yet)."""
    tower = Tower(seed)
    rng = np.random.default_rng([seed, SCENARIOS.index(scenario), 2])
    sc = Scene(tower, scenario, float(duration), seed)
    sc.quiet_s = rng.uniform(4.6, 5.8)  # the host tares on an empty, quiet tower
    n_players = int(rng.integers(3, 6))
    sc.players = [str(c) for c in rng.choice(PLAYER_COLOURS, n_players, replace=False)]
    SCENARIO_FUNCS[scenario](Director(sc, rng))
    return sc


# ----------------------------------------------------------------------------- piezo signals

def mode_set(tw: Tower, level: int, mass_g: float) -> tuple[FArr, FArr, FArr]:
    """Frequencies, Qs and weights of plate ``level``'s modes with ``mass_g`` of cubes on it:
    the cubes add mass (lower modes) and friction (lower Q)."""
    f = tw.mode_hz[level] / np.sqrt(1.0 + mass_g / tw.plate_eff_mass_g[level])
    n_cubes = mass_g / tw.cube_mass_g
    q = 1.0 / (1.0 / tw.mode_q[level] + tw.cube_damping[level] * n_cubes)
    return f, q, tw.mode_weight[level]


def contact_spectrum(f: FArr, contact_s: float) -> FArr:
    """|F(f)| of a half-sine force pulse of ``contact_s``, 1 at DC: a short contact
    (wood on wood) reaches the high modes, a long one (cardboard, a hand) does not."""
    x = 2.0 * f * contact_s
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.abs(np.cos(np.pi * x / 2.0) / (1.0 - x * x))
    return np.where(np.abs(1.0 - x * x) < 1e-6, np.pi / 4.0, s)


def ring(tt: FArr, f: FArr, q: FArr, w: FArr, contact_s: float) -> FArr:
    """Sum of damped modes (last axis) at times ``tt`` (<0: silent), softened at onset."""
    t = np.maximum(tt, 0.0)[..., None]
    amp = w * contact_spectrum(f, contact_s)
    rise = 1.0 - np.exp(-t / max(contact_s / 2.0, 5e-5))
    out = (amp * np.exp(-np.pi * f * t / q) * np.sin(2 * np.pi * f * t) * rise).sum(axis=-1)
    return np.where(tt >= 0, out, 0.0)


def render_strike(tw: Tower, s: Strike, rate: float, acoustic: FArr) -> None:
    """Add one strike's sound at every disc, sampled at each channel's own instant."""
    n_total = acoustic.shape[0]
    n0 = max(0, int(math.floor(s.t * rate)))
    n1 = min(n_total, n0 + int(STRIKE_WINDOW_S * rate) + 2)
    if n0 >= n_total:
        return
    n = np.arange(n0, n1)
    delay = np.abs(np.arange(N_LEVELS) - s.origin) * tw.wall_delay_s
    tt = n[:, None] / rate + tw.sample_offset_s[None, :] - s.t - delay[None, :]
    received = s.drive @ tw.crosstalk  # (8,) what reaches each level through the walls
    amp = tw.disc_sens * tw.disc_polarity * s.impulse_mns * received
    wave = np.zeros_like(tt)
    one_hot = np.count_nonzero(s.drive) == 1
    src = int(np.argmax(s.drive))
    for j in range(N_LEVELS):
        f, q, w = mode_set(tw, j, float(s.masses_g[j]))
        own = ring(tt[:, j], f, q, w, s.contact_s)
        if one_hot and j != src:  # a neighbour rings partly with the struck plate's modes
            fs, qs, ws = mode_set(tw, src, float(s.masses_g[src]))
            share = tw.own_mode_share[src, j]
            own = share * own + (1 - share) * ring(tt[:, j], fs, qs, ws, s.contact_s)
        wave[:, j] = own
    acoustic[n0:n1] += wave * amp[None, :]
    if s.tone is not None:
        f_t, q_t, counts = s.tone
        tone = ring(tt, np.array([f_t]), np.array([q_t]), np.array([1.0]), 1e-3)
        acoustic[n0:n1] += tone * counts * np.clip(s.drive, 0, None)[None, :] \
            * tw.disc_sens / DISC_SENS_MEDIAN


def render_hiss(h: Hiss, rate: float, acoustic: FArr, rng: np.random.Generator) -> None:
    """Add band-limited noise with a soft envelope."""
    n0, n1 = max(0, int(h.t0 * rate)), min(acoustic.shape[0], int(h.t1 * rate))
    if n1 - n0 < 4:
        return
    hi = min(h.hi_hz, 0.45 * rate)
    b, a = signal.butter(2, [h.lo_hz, hi], btype="bandpass", fs=rate)
    x = signal.lfilter(b, a, rng.standard_normal(n1 - n0 + 200))[200:]
    x /= max(float(np.std(x)), 1e-9)
    u = np.linspace(0.0, 1.0, n1 - n0)
    if h.swell:  # grows and fades, with the irregular bursts of rubbing
        env = np.sin(np.pi * u) ** 0.7 * (0.5 + np.abs(np.sin(2 * np.pi * rng.uniform(2, 6)
                                                                * u * (h.t1 - h.t0))))
    else:
        edge = max(2, int(0.005 * rate))
        env = np.minimum(1.0, np.minimum(np.arange(n1 - n0), np.arange(n1 - n0)[::-1]) / edge)
    acoustic[n0:n1] += (x * env)[:, None] * h.gains[None, :]


def render_voice(v: Voice, rate: float, acoustic: FArr, rng: np.random.Generator) -> None:
    """Add speech: a glottal buzz (harmonics of a wandering f0) in syllables of 3-6 Hz."""
    n0, n1 = max(0, int(v.t0 * rate)), min(acoustic.shape[0], int(v.t1 * rate))
    if n1 - n0 < 4:
        return
    t = np.arange(n1 - n0) / rate
    f0 = v.f0_hz * (1.0 + 0.08 * np.sin(2 * np.pi * rng.uniform(0.3, 1.0) * t)
                    + 0.02 * rng.standard_normal(len(t)).cumsum() / np.sqrt(len(t)))
    phase = 2 * np.pi * np.cumsum(f0) / rate
    buzz = sum((1.0 / h) * np.sin(h * phase + rng.uniform(0, 2 * np.pi)) for h in range(1, 9))
    syl = np.maximum(0.0, np.sin(2 * np.pi * rng.uniform(3.0, 6.0) * t
                                 + rng.uniform(0, 2 * np.pi))) ** 2
    acoustic[n0:n1] += (np.asarray(buzz) * syl)[:, None] * v.gains[None, :]


def floating_mask(sc: Scene, times: FArr) -> npt.NDArray[np.bool_]:
    """(N, 8): where a channel's ADC pin has no disc on it (module lifted, or open lead)."""
    mask = np.zeros((len(times), N_LEVELS), bool)
    for t_off, t_on, k in sc.lifted:
        inside = (times >= t_off) & (times < t_on)
        mask[inside, k + 1:] = True
    for ch, fault in enumerate(sc.tower.faults):
        if fault == "open":
            mask[:, ch] = True
    return mask


def hum(tw: Tower, sc: Scene, t: FArr, rng: np.random.Generator) -> FArr:
    """Mains hum and harmonics at the (N, 8) sample instants ``t``; the grid frequency
    wanders by a few hundredths of a hertz."""
    f = tw.mains_hz / (1.0 + tw.clock_error)
    knots = np.arange(0.0, sc.duration + 2.0, 1.0)
    dev = np.cumsum(rng.normal(0.0, 0.004, len(knots)))  # Hz, a slow random walk
    dev -= dev.mean()
    wander = 2 * np.pi * np.cumsum(dev)  # phase integral at 1 s knots
    base = 2 * np.pi * f * t + np.interp(t, knots, wander)
    out = np.zeros_like(t)
    amp = tw.hum_counts * sc.hum_gain
    for i, order in enumerate(tw.hum_orders):
        out += amp[None, :] * tw.hum_harmonics[i] * np.sin(order * base + tw.hum_phase[None, :, i])
    return out


def apply_ghost(analog: FArr, ghost: FArr) -> FArr:
    """Sample-and-hold ghosting: s_k = (1-g) v_k + g s_(k-1), in scan order, channel 0
    taking from channel 7 of the set before. Two passes make the wrap exact to g^16."""
    held = analog.copy()
    for _ in range(2):
        prev = np.concatenate([held[:1, N_LEVELS - 1], held[:-1, N_LEVELS - 1]])
        for k in range(N_LEVELS):
            g = ghost[:, k]
            held[:, k] = (1 - g) * analog[:, k] + g * prev
            prev = held[:, k]
    return held


def render_piezo(sc: Scene, rng: np.random.Generator) -> npt.NDArray[np.uint16]:
    """ADC codes (N, 8) of every piezo channel for the whole scene."""
    tw = sc.tower
    rate = float(tw.piezo_rate)
    n = int(round(sc.duration * rate))
    t = np.arange(n)[:, None] / rate + tw.sample_offset_s[None, :]
    acoustic = np.zeros((n, N_LEVELS))
    for s in sc.strikes:
        render_strike(tw, s, rate, acoustic)
    for hiss in sc.hisses:
        render_hiss(hiss, rate, acoustic, rng)
    for v in sc.voices:
        render_voice(v, rate, acoustic, rng)
    floating = floating_mask(sc, t[:, 0])
    acoustic[floating] = 0.0  # a disc off its pin is not heard
    for t_pop, ch, counts in sc.pops:
        i0 = int(t_pop * rate)
        if i0 < n:
            seg = t[i0:, ch] - t_pop
            acoustic[i0:, ch] += counts * np.exp(-np.maximum(seg, 0.0) / tw.hp_tau_s[ch])
    mains = hum(tw, sc, t, rng) * np.where(floating, tw.float_hum_gain, 1.0)
    noise = rng.standard_normal((n, N_LEVELS)) * np.where(floating, 1.5, 0.3)
    analog = tw.bias[None, :] + mains + acoustic + noise
    analog = np.clip(analog, -PIN_CLAMP_LSB, ADC_MAX + PIN_CLAMP_LSB)
    ghost = np.where(floating, tw.ghost_float[None, :], tw.ghost[None, :])
    held = apply_ghost(analog, ghost)
    codes = np.rint(held + rng.standard_normal(held.shape) * tw.adc_noise)
    return np.clip(codes, 0, ADC_MAX).astype(np.uint16)


# ----------------------------------------------------------------------------- load signals

def oscillator_impulse(t: FArr, hz: float, zeta: float) -> FArr:
    """Force through the cell per unit impulse on a plate ringing at ``hz``."""
    w = 2 * np.pi * hz
    wd = w * math.sqrt(1 - zeta * zeta)
    return np.where(t >= 0, w * w / wd * np.exp(-zeta * w * t) * np.sin(wd * t), 0.0)


def oscillator_step(t: FArr, hz: float, zeta: float) -> FArr:
    """Force through the cell for a unit weight set on the plate at t=0 (it overshoots)."""
    w = 2 * np.pi * hz
    wd = w * math.sqrt(1 - zeta * zeta)
    resp = 1 - np.exp(-zeta * w * t) * (np.cos(wd * t) + zeta * w / wd * np.sin(wd * t))
    return np.where(t >= 0, resp, 0.0)


def ring_params(tw: Tower, level: int, mass_g: float) -> tuple[float, float]:
    """Plate-on-cell ring frequency and damping with ``mass_g`` of cubes on the plate."""
    hz = tw.ring_hz[level] / math.sqrt(1.0 + mass_g / tw.plate_g[level])
    return hz, min(0.6, tw.ring_zeta[level] * (1.0 + 0.02 * mass_g / tw.cube_mass_g))


def play_operator(values: FArr, width: float) -> FArr:
    """Hysteresis: a reading that lags by up to ``width`` behind the load's last turn."""
    out = np.empty_like(values)
    p = 0.0
    for i, v in enumerate(values):
        p = min(max(p, v - width), v + width)
        out[i] = p - v
    return out


def bridge_force(sc: Scene, grid: FArr, rng: np.random.Generator) -> FArr:
    """Apparent load (grams) at each cell on the fine grid: cubes, rings, creep,
    hysteresis, hands, shakes, zero shifts, drift, warm-up and mains ripple."""
    tw = sc.tower
    dt = grid[1] - grid[0]
    n = len(grid)
    static = np.zeros((n, N_LEVELS))
    events = sorted(sc.weights)
    for level in range(N_LEVELS):
        mine = [(t, g) for t, lv, g in events if lv == level]
        if not mine:
            continue
        times = np.array([t for t, _ in mine])
        deltas = np.array([g for _, g in mine])
        idx = np.searchsorted(grid, times)
        step = np.zeros(n)
        np.add.at(step, np.minimum(idx, n - 1), deltas)
        load = np.cumsum(step)
        # creep: a first-order lag of the load, a fraction of it, recovering on unload
        a = math.exp(-dt / tw.creep_tau_s[level])
        creep = signal.lfilter([1 - a], [1, -a], load) * tw.creep_frac[level]
        levels_after = np.cumsum(deltas)
        hyst = play_operator(levels_after, tw.hyst_g[level])
        hstep = np.zeros(n)
        np.add.at(hstep, np.minimum(idx, n - 1), np.diff(np.concatenate([[0.0], hyst])))
        static[:, level] = load + creep + np.cumsum(hstep)
        for t0, g, total in zip(times, deltas, levels_after, strict=True):
            hz, zeta = ring_params(tw, level, total)
            i0, i1 = int(np.searchsorted(grid, t0)), int(np.searchsorted(grid, t0 + 0.5))
            static[i0:i1, level] += g * (oscillator_step(grid[i0:i1] - t0, hz, zeta) - 1.0)
    force = static
    for t0, level, gfs in sc.impulses:
        hz, zeta = ring_params(tw, level, float(sc.masses_at(t0)[level]))
        i0, i1 = int(np.searchsorted(grid, t0)), int(np.searchsorted(grid, t0 + 0.5))
        force[i0:i1, level] += gfs * oscillator_impulse(grid[i0:i1] - t0, hz, zeta)
    for p in sc.presses:
        i0, i1 = int(np.searchsorted(grid, p.t0)), int(np.searchsorted(grid, p.t1 + p.rise_s))
        tt = grid[i0:i1]
        up = np.clip((tt - p.t0) / p.rise_s, 0, 1)
        down = np.clip((p.t1 + p.rise_s - tt) / p.rise_s, 0, 1)
        env = (0.5 - 0.5 * np.cos(np.pi * np.minimum(up, down)))
        wobble = 1 + p.tremor * np.sin(2 * np.pi * rng.uniform(8, 12) * tt) \
            + 0.2 * np.sin(2 * np.pi * rng.uniform(0.5, 2.0) * tt + rng.uniform(0, 6))
        force[i0:i1] += (env * wobble)[:, None] * p.grams[None, :]
    for s in sc.shakes:
        i0, i1 = int(np.searchsorted(grid, s.t)), int(np.searchsorted(grid, s.t + 0.6))
        tt = grid[i0:i1] - s.t
        acc = s.accel * np.exp(-s.zeta * 2 * np.pi * s.hz * tt) * np.sin(2 * np.pi * s.hz * tt)
        force[i0:i1] += acc[:, None] / G_ACCEL * (tw.plate_g + sc.masses_at(s.t))[None, :]
    for t0, level, g in sc.shifts:
        force[int(np.searchsorted(grid, t0)):, level] += g
    for _t_off, t_on, k in sc.lifted:  # reconnected chips warm up again
        i0 = int(np.searchsorted(grid, t_on))
        tt = grid[i0:] - t_on
        force[i0:, k + 1:] += tw.warmup_g[None, k + 1:] \
            * np.exp(-tt[:, None] / tw.warmup_tau_s[None, k + 1:])
    knots = np.arange(grid[0], grid[-1] + 5.0, 2.0)
    wander = np.cumsum(rng.normal(0, 1, (len(knots), N_LEVELS)), axis=0)
    wander = signal.lfilter([0.05], [1, -0.95], wander, axis=0)  # smooth: minutes, not seconds
    wander *= tw.drift_wander_g / max(float(np.std(wander)), 1e-9)
    for level in range(N_LEVELS):
        force[:, level] += np.interp(grid, knots, wander[:, level]) \
            + tw.drift_g_per_s[level] * grid
    force += tw.ripple_g[None, :] * np.sin(2 * np.pi * tw.mains_hz / (1 + tw.clock_error)
                                           * grid[:, None] + rng.uniform(0, 6, N_LEVELS))
    return force


def sinc_filter(grid: FArr, x: FArr, period: float) -> FArr:
    """The HX711's decimation filter: four cascaded moving averages of one conversion
    period (sinc^4), evaluated on the grid; a step settles in exactly four periods."""
    dt = grid[1] - grid[0]
    y = x
    for _ in range(HX_FILTER_ORDER):
        c = np.concatenate([[0.0], np.cumsum(y) * dt])
        tc = np.concatenate([[grid[0] - dt], grid])
        y = (c[1:] - np.interp(grid - period, tc, c)) / period
    return y


@dataclass
class LoadStream:
    """What the firmware read from the eight HX711s at each poll."""

    t: FArr  # poll times, stream seconds
    valid: IArr  # bitmask per poll
    counts: IArr  # (M, 8) signed 24-bit, 0 where not valid
    timeouts: IArr  # cumulative load_timeouts at each poll


def conversion_times(tw: Tower, sc: Scene, ch: int) -> FArr:
    """When chip ``ch`` finishes conversions: from power-on (boot, or the module set back)
    first after its settling (four periods), then once a period, while it has power."""
    period = float(tw.hx_period_s[ch])
    spans: list[tuple[float, float]] = []
    start = -tw.boot_s
    for t_off, t_on, k in sorted(sc.lifted):
        if ch > k:
            spans.append((start, t_off))
            start = t_on
    spans.append((start, sc.duration + 1.0))
    out = []
    for on, off in spans:
        first = on + tw.hx_start_delay_s[ch] + HX_FILTER_ORDER * period
        out.append(np.arange(first, off, period))
    return np.concatenate(out)


def render_load(sc: Scene, rng: np.random.Generator) -> LoadStream:
    """Poll the eight HX711s at 80 Hz for the whole scene."""
    tw = sc.tower
    grid = np.arange(-LOAD_PAD_S, sc.duration + 0.05, 1.0 / LOAD_GRID_HZ)
    force = bridge_force(sc, grid, rng)
    polls = np.arange(tw.load_phase_s, sc.duration, 1.0 / LOAD_POLL_HZ)
    valid = np.zeros(len(polls), np.int64)
    counts = np.zeros((len(polls), N_LEVELS), np.int64)
    timeouts = np.zeros(len(polls), np.int64)
    for ch in range(N_LEVELS):
        conv = conversion_times(tw, sc, ch)
        filtered = sinc_filter(grid, force[:, ch], float(tw.hx_period_s[ch]))
        value = np.interp(conv, grid, filtered)
        raw = tw.offset_counts[ch] + tw.counts_per_g[ch] * value \
            + rng.standard_normal(len(conv)) * tw.noise_counts[ch]
        raw = np.clip(np.rint(raw), -S24_MAX - 1, S24_MAX).astype(np.int64)
        latest = np.searchsorted(conv, polls, side="right") - 1
        fresh = (latest >= 0) & (np.diff(np.concatenate([[-1], latest])) > 0)
        for t_off, t_on, k in sc.lifted:  # DOUT is off the board: nothing to read
            if ch > k:
                fresh &= (polls < t_off) | (polls >= t_on)
        valid |= fresh.astype(np.int64) << ch
        counts[fresh, ch] = raw[latest[fresh]]
        last, n_to = polls[0], 0
        for i in range(len(polls)):  # the firmware's per-channel silence counter
            if fresh[i]:
                last = polls[i]
            elif polls[i] - last > LOAD_TIMEOUT_S:
                n_to += 1
                last = polls[i]
            timeouts[i] += n_to
    return LoadStream(polls, valid, counts, timeouts)


# ----------------------------------------------------------------------------- the byte stream

def build_stream(sc: Scene, codes: npt.NDArray[np.uint16],
                 loads: LoadStream) -> tuple[bytes, float]:
    """The device -> host bytes: HELLO at boot, then PIEZO, LOAD and STATUS in the order the
    firmware sends them. Returns the bytes and the stream-time origin (seconds after set 0)."""
    tw = sc.tower
    rate = tw.piezo_rate
    n_sets = codes.shape[0]
    batch = tw.piezo_batch
    starts = np.arange(0, n_sets, batch)
    sizes = np.minimum(batch, n_sets - starts)
    boot_us = round(tw.boot_s * 1e6)

    def device_us(t: FArr) -> IArr:
        us = np.floor((boot_us + t * 1e6) / MICROS_STEP_US).astype(np.int64) * MICROS_STEP_US
        return us & 0xFFFFFFFF

    p_send = (starts + sizes - 1) / rate + tw.sample_offset_s[-1] + PIEZO_TX_LAG_S
    l_send = loads.t + LOAD_TX_LAG_S
    s_times = np.arange(STATUS_PERIOD_S - tw.boot_s, sc.duration, STATUS_PERIOD_S)
    s_times = s_times[s_times > 0]
    kinds = np.concatenate([np.zeros(len(starts), np.int64), np.ones(len(loads.t), np.int64),
                            np.full(len(s_times), 2, np.int64)])
    index = np.concatenate([np.arange(len(starts)), np.arange(len(loads.t)),
                            np.arange(len(s_times))])
    when = np.concatenate([p_send, l_send, s_times])
    order = np.lexsort((index, kinds, when))
    seq_of = np.empty(len(order), np.int64)
    seq_of[order] = (np.arange(len(order)) + 1) % SEQ_MOD  # HELLO is seq 0
    p_seq, l_seq, s_seq = np.split(seq_of, [len(starts), len(starts) + len(loads.t)])
    first_data = order[0]
    origin = float(starts[first_data] / rate) if kinds[first_data] == 0 \
        else float(loads.t[index[first_data]])

    frames: dict[tuple[int, int], U8Arr] = {}
    p_us = device_us(starts / rate)
    for size in np.unique(sizes):
        sel = np.flatnonzero(sizes == size)
        sets = codes[(starts[sel, None] + np.arange(size)[None, :])]  # (R, size, 8)
        body = np.concatenate([le_bytes(p_us[sel], 4), np.full((len(sel), 1), size, np.uint8),
                               sets.astype("<u2").reshape(len(sel), -1).view(np.uint8)], axis=1)
        rows = frame_rows(MSG_PIEZO, p_seq[sel], body)
        for r, i in enumerate(sel):
            frames[(0, int(i))] = rows[r]
    vals = (loads.counts & 0xFFFFFF).astype(np.int64)
    l_body = np.concatenate([le_bytes(device_us(loads.t), 4), loads.valid[:, None].astype(np.uint8)]
                            + [le_bytes(vals[:, c], 3) for c in range(N_LEVELS)], axis=1)
    for r, row in enumerate(frame_rows(MSG_LOAD, l_seq, l_body)):
        frames[(1, r)] = row
    if len(s_times):
        poll_idx = np.clip(np.searchsorted(loads.t, s_times) - 1, 0, len(loads.t) - 1)
        timeouts = np.minimum(loads.timeouts[poll_idx], 0xFFFF)
        uptime = np.round((s_times + tw.boot_s) * 1000).astype(np.int64)
        s_body = np.concatenate([le_bytes(uptime, 4), np.zeros((len(s_times), 4), np.uint8),
                                 le_bytes(timeouts, 2),
                                 np.full((len(s_times), 1), tw.cpu_load, np.uint8),
                                 np.zeros((len(s_times), 1), np.uint8)], axis=1)
        for r, row in enumerate(frame_rows(MSG_STATUS, s_seq, s_body)):
            frames[(2, r)] = row
    hello = bytes([PROTO_VERSION, *FW_VERSION, N_LEVELS, N_LEVELS]) \
        + int(rate).to_bytes(2, "little") + LOAD_POLL_HZ.to_bytes(2, "little") \
        + bytes([ADC_BITS]) + tw.device_id
    parts = [np.frombuffer(frame_one(MSG_HELLO, 0, hello), np.uint8)]
    parts += [frames[(int(kinds[i]), int(index[i]))] for i in order]
    return np.concatenate(parts).tobytes(), origin


# ----------------------------------------------------------------------------- truth and files

def shift_times(doc: dict[str, Any], keys: tuple[str, ...], offset: float) -> None:
    """Move the time fields ``keys`` of one truth entry by ``-offset`` seconds."""
    for k in keys:
        if k in doc:
            doc[k] = round(doc[k] - offset, 4)


def truth_document(sc: Scene, origin: float) -> dict[str, Any]:
    """The truth file: what score.py reads, plus what model L knows besides.

    Times are stream seconds: scene time minus ``origin``, the scene time of the first
    PIEZO or LOAD message in the bytes (contracts.md section 2).
    """
    landings = sorted(sc.landings, key=lambda x: x["t"])
    index = {id(x): i for i, x in enumerate(landings)}
    knockdowns = []
    for k in sc.knockdowns:
        by, landing = index[id(k["throw_landing"])], index[id(k["knocked_landing"])]
        landings[landing]["by"] = by
        knockdowns.append({"t": k["t"], "floor": k["floor"], "from_floor": k["from_floor"],
                           "by": by, "landing": landing})
    time_keys = ("t", "t_first_impact", "t_throw", "t_knocked", "t_end", "t_touch", "t_grip")
    for x in landings:
        for key in ("strike_times", "bounce_times"):
            x[key] = [round(t - origin, 4) for t in x[key]]
    groups = {"landings": landings, "knockdowns": knockdowns, "removals": sc.removals,
              "lifts": sc.lifts, "closes": sc.closes, "knocks": sc.knocks, "spills": sc.spills}
    for items in groups.values():
        for x in items:
            shift_times(x, time_keys, origin)
    return {
        "format": TRUTH_FORMAT, "generator": "crosscheck_l", "scenario": sc.scenario,
        "seed": sc.seed, "duration_s": sc.duration, "cells": sc.tower.cells,
        "quiet_s": round(sc.quiet_s - origin, 4), "players": sc.players,
        "room": {"hum_gain": round(sc.hum_gain, 4)},
        **{k: sorted(v, key=lambda x: x["t"]) if k != "landings" else v
           for k, v in groups.items()},
        "tower": sc.tower.describe(),
    }


def render(sc: Scene) -> tuple[bytes, dict[str, Any]]:
    """Bytes and truth document of a scene."""
    idx = SCENARIOS.index(sc.scenario)
    codes = render_piezo(sc, np.random.default_rng([sc.seed, idx, 3]))
    loads = render_load(sc, np.random.default_rng([sc.seed, idx, 4]))
    data, origin = build_stream(sc, codes, loads)
    return data, truth_document(sc, origin)


def make_recording(seed: int, scenario: str, duration: float, out: Path) -> tuple[Path, Path]:
    """Write ``{scenario}_t{seed}.bin`` and its ``.truth.json`` into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    data, truth = render(make_scene(seed, scenario, duration))
    bin_path = out / f"{scenario}_t{seed}.bin"
    truth_path = out / f"{scenario}_t{seed}.truth.json"
    bin_path.write_bytes(data)
    truth_path.write_text(json.dumps(truth, indent=1) + "\n")
    return bin_path, truth_path


def _job(args: tuple[int, str, float, str]) -> str:
    seed, scenario, duration, out = args
    bin_path, _ = make_recording(seed, scenario, duration, Path(out))
    return bin_path.name


def main(argv: list[str] | None = None) -> int:
    """Command line: every (tower seed, scenario) pair, two worker processes."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--towers", type=int, required=True)
    p.add_argument("--first-seed", type=int, required=True)
    p.add_argument("--duration", type=float, required=True)
    p.add_argument("--scenarios", nargs="+", choices=SCENARIOS, default=list(SCENARIOS))
    args = p.parse_args(argv)
    if args.duration < 10.0:
        p.error("--duration must leave room after the quiet start (at least 10 s)")
    jobs = [(s, sc, args.duration, str(args.out))
            for s in range(args.first_seed, args.first_seed + args.towers)
            for sc in args.scenarios]
    args.out.mkdir(parents=True, exist_ok=True)
    if len(jobs) == 1:
        names = [_job(jobs[0])]
    else:
        with multiprocessing.Pool(2) as pool:
            names = pool.map(_job, jobs, chunksize=1)
    for name in names:
        print(name, file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
