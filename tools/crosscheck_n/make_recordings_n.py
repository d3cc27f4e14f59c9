#!/usr/bin/env python3
"""Cross-check model N: the tower as a mechanical structure of cardboard, over an evening.

Writes recordings (the device -> host byte stream of contracts.md) and their ground
truth for towers simulated from mechanics: each level's plate is a greyboard beam bolted
to a bar load cell and taped to its roof rim; modules sit on each other's rims; the air
in the shaft couples the plates; the piezo disc under each plate feeds a charge-mode
front end (bias resistors, shunt capacitor, clamp diodes). Written from contracts.md,
design.md, the rules and physics only. See README.md beside this file.

Usage::

    .venv/bin/python tools/crosscheck_n/make_recordings_n.py --out DIR --towers 8 \
        --first-seed 1 --duration 120 [--scenarios single rapid noisy game]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
from scipy import linalg, signal

FORMAT = "towerear-crosscheck-truth/1"
SCENARIOS = ("single", "rapid", "noisy", "game")
G = 9.80665
GRAM_N = G * 1e-3  # newton per gram-force
RHO_C2 = 1.2 * 343.0**2  # bulk modulus of air, Pa
LEVELS = 8
PIEZO_RATE = 2000  # sets per second, device clock
POLL_S = 0.0125  # firmware polls the HX711s at 80 Hz
QUIET_S = 4.0
COARSE_HZ = 200  # grid of the slow (static) parts
ADC_STEP_S = 52e-6  # one conversion of the AVR ADC at 250 kHz (13 clocks): channel scan offset
CHUNK = 40000  # piezo sets per rendering block


# --------------------------------------------------------------------------- wire


def _crc_table() -> np.ndarray:
    table = np.zeros(256, np.uint16)
    for i in range(256):
        crc = i << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
        table[i] = crc & 0xFFFF
    return table


CRC_TABLE = _crc_table()


def crc16_ccitt_false(data: bytes) -> int:
    """CRC-16/CCITT-FALSE, table driven (poly 0x1021, init 0xFFFF)."""
    crc = 0xFFFF
    for b in data:
        crc = ((crc << 8) & 0xFFFF) ^ int(CRC_TABLE[(crc >> 8) ^ b])
    return crc


def crc16_ccitt_false_reference(data: bytes) -> int:
    """The same CRC bit by bit, straight from its definition."""
    crc = 0xFFFF
    for b in data:
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) & 0xFFFF if crc & 0x8000 else (crc << 1) & 0xFFFF
    return crc


def crc16_rows(rows: np.ndarray) -> np.ndarray:
    """CRC of every row of a (n, L) uint8 array, all rows at once."""
    crc = np.full(len(rows), 0xFFFF, np.uint32)
    for col in range(rows.shape[1]):
        idx = ((crc >> 8) ^ rows[:, col]) & 0xFF
        crc = ((crc << 8) & 0xFFFF) ^ CRC_TABLE[idx].astype(np.uint32)
    return crc.astype(np.uint16)


def cobs_encode(data: bytes) -> bytes:
    """Consistent overhead byte stuffing (no trailing delimiter)."""
    out = bytearray()
    start = 0
    final_zero = True
    for i, b in enumerate(data):
        if b == 0:
            final_zero = True
            out.append(i - start + 1)
            out += data[start:i]
            start = i + 1
        elif i - start == 0xFD:  # a full block of 254 non-zero bytes
            final_zero = False
            out.append(0xFF)
            out += data[start:i + 1]
            start = i + 1
    if len(data) != start or final_zero:
        out.append(len(data) - start + 1)
        out += data[start:]
    return bytes(out)


def cobs_encode_rows(rows: np.ndarray) -> np.ndarray:
    """COBS of every row of a (n, L) uint8 array (L <= 254) plus the 0x00 delimiter."""
    n, length = rows.shape
    assert length <= 254
    idx = np.arange(length + 1, dtype=np.int16)
    is_zero = np.concatenate([rows == 0, np.ones((n, 1), bool)], axis=1)
    zero_at = np.where(is_zero, idx, np.int16(length))
    next_zero = np.minimum.accumulate(zero_at[:, ::-1], axis=1)[:, ::-1]  # (n, L+1)
    out = np.zeros((n, length + 2), np.uint8)
    out[:, 0] = next_zero[:, 0] + 1
    code_after = next_zero[:, 1:] - idx[:-1]  # block length after a zero at i
    out[:, 1:length + 1] = np.where(rows == 0, code_after, rows).astype(np.uint8)
    return out


def frame_rows(msg_type: int, seqs: np.ndarray, bodies: np.ndarray) -> np.ndarray:
    """Encoded frames (n, L) of messages ``type | seq | body | crc`` (COBS and 0x00)."""
    out = np.empty((len(seqs), bodies.shape[1] + 7), np.uint8)
    for a in range(0, len(seqs), 20000):  # in slices: long recordings stay small in memory
        sq, body = seqs[a:a + 20000], bodies[a:a + 20000]
        raw = np.zeros((len(sq), 3 + body.shape[1] + 2), np.uint8)
        raw[:, 0] = msg_type
        raw[:, 1] = sq & 0xFF
        raw[:, 2] = (sq >> 8) & 0xFF
        raw[:, 3:3 + body.shape[1]] = body
        crc = crc16_rows(raw[:, :-2])
        raw[:, -2] = crc & 0xFF
        raw[:, -1] = crc >> 8
        out[a:a + len(sq)] = cobs_encode_rows(raw)
    return out


def _le(values: np.ndarray, nbytes: int) -> np.ndarray:
    """(n,) integers -> (n, nbytes) little-endian bytes (two's complement)."""
    v = np.asarray(values, np.int64) & ((1 << (8 * nbytes)) - 1)
    return ((v[:, None] >> (8 * np.arange(nbytes))) & 0xFF).astype(np.uint8)


# --------------------------------------------------------------------------- the plate as a beam

_BETA = (1.8751040687, 4.6940911330)  # clamped-free beam, first two bending modes
_SIGMA = (0.7340955137, 1.0184664818)


def _beam_raw(m: int, xi: Any) -> tuple[np.ndarray, np.ndarray]:
    b, s = _BETA[m], _SIGMA[m]
    x = b * np.clip(np.asarray(xi, float), 0.0, 1.0)
    v = np.cosh(x) - np.cos(x) - s * (np.sinh(x) - np.sin(x))
    d = b * (np.sinh(x) + np.sin(x) - s * (np.cosh(x) - np.cos(x)))
    return v, d


_TIP = (float(_beam_raw(0, 1.0)[0]), float(_beam_raw(1, 1.0)[0]))


def beam_shape(m: int, xi: Any) -> np.ndarray:
    """Bending mode ``m`` of the plate at ``xi`` (0 at the bolt, 1 at the far edge; tip = 1)."""
    return _beam_raw(m, xi)[0] / _TIP[m]


def beam_slope(m: int, xi: Any) -> np.ndarray:
    """d(shape)/d(xi) of mode ``m``."""
    return _beam_raw(m, xi)[1] / _TIP[m]


_GRID = (np.arange(4000) + 0.5) / 4000
SHARE_XI = np.linspace(-0.2, 1.0, 13)
PSI_MEAN = tuple(float(beam_shape(m, _GRID).mean()) for m in (0, 1))
PSI_SQ = tuple(float((beam_shape(m, _GRID) ** 2).mean()) for m in (0, 1))


# --------------------------------------------------------------------------- the tower


class Tower:
    """One physical tower, built from ``seed``: geometry, mechanics, air, electronics."""

    def __init__(self, seed: int) -> None:
        rng = np.random.default_rng([seed, 0x70E2])
        u = rng.uniform
        self.seed = seed
        # Geometry (metres). Level L's plate is the centre of module L-1's roof, cut free
        # along a 1.2 mm slot; the roof rim around it carries the modules above.
        self.pitch = 0.031
        self.half_in = u(0.038, 0.041)
        self.plate_half = self.half_in - 0.0012
        hole = 0.0098 + 0.0002 * (7 - np.arange(LEVELS)) + u(-0.0006, 0.0006, LEVELS)
        hole[0] = 0.0  # the base plate has no hole
        self.hole = hole
        self.entry = u(0.0090, 0.0100)
        self.hole_xy = np.clip(rng.normal(0, 0.007, (LEVELS, 2)), -0.013, 0.013)
        self.hole_xy[0] = 0.0
        self.entry_xy = rng.normal(0, 0.0015, 2)
        ang = rng.integers(0, 4, LEVELS) * (np.pi / 2)
        self.axis = np.stack([np.cos(ang), np.sin(ang)], axis=1)  # bolt side -> far edge
        self.bolt_u = -self.plate_half + 0.012
        self.beam_len = self.plate_half - self.bolt_u
        # The cube set: wood and size.
        self.cube_mass_g = u(0.3, 0.8)
        self.cube_size = (self.cube_mass_g / u(0.6, 0.75)) ** (1 / 3) * 0.01
        self.restitution = u(0.3, 0.5)
        self.friction = u(0.3, 0.5)
        # Structure: base on feet, modules on each other's rims, plates on cells.
        self.m_base = u(0.25, 0.45)
        self.m_module = u(0.035, 0.055, LEVELS)
        self.feet = str(rng.choice(["felt", "rubber", "bare"], p=[0.5, 0.35, 0.15]))
        feet = {"felt": (2e4, 6e4, 0.3, 0.5), "rubber": (8e4, 2.5e5, 0.12, 0.2),
                "bare": (3e5, 1e6, 0.06, 0.1)}[self.feet]
        self.k_feet, self.eta_feet = u(feet[0], feet[1]), u(feet[2], feet[3])
        self.k_rim = u(2e4, 5e4)  # N/m per newton of stack weight ** 0.7 (rough contact)
        self.eta_rim = u(0.15, 0.3)
        self.m_root = u(0.003, 0.0045, LEVELS)
        self.m_beam = u(0.006, 0.009, LEVELS)
        e_mod, self.plate_t = u(2.2e9, 3.8e9, LEVELS), u(0.0018, 0.0022, LEVELS)
        ei = e_mod * u(0.045, 0.055, LEVELS) * self.plate_t**3 / 12
        lin_mass = self.m_beam / self.beam_len
        self.f_flex = np.stack([b**2 / (2 * np.pi) * np.sqrt(ei / (lin_mass * self.beam_len**4))
                                for b in _BETA], axis=1)  # (8, 2) Hz, bare plate, root held
        self.k_cell = 100 * GRAM_N / u(0.15e-3, 0.3e-3, LEVELS)  # 100 g bar cell
        self.eta_cell = u(0.01, 0.02, LEVELS)
        self.eta_flex = u(0.035, 0.07, LEVELS)
        # Tape over the slot: a shunt that carries part of the plate's load into the rim.
        # Its stiffness as a fraction of the cell's, at the bolt side and at the far edge.
        self.s_base = u(0.002, 0.015, LEVELS)
        self.s_far = u(0.002, 0.012, LEVELS)
        self.stiff_tape = -1
        if rng.random() < 0.25:  # one plate taped down with a stiff strip
            self.stiff_tape = int(rng.integers(1, LEVELS))
            self.s_far[self.stiff_tape] = u(0.03, 0.06)
            self.s_base[self.stiff_tape] = u(0.015, 0.03)
        self.relax_frac = u(0.3, 0.6, LEVELS)
        self.relax_tau = np.array([u(3, 6), u(30, 60), u(300, 600)])
        self.relax_w = np.array([0.3, 0.35, 0.35])
        self.cell_creep = u(0.0005, 0.0025, LEVELS)
        self.cell_creep_tau = u(300, 900, LEVELS)
        # Air in the shaft.
        self.air = 1.0
        self.hole_zeta = u(0.04, 0.1)
        self.v_base_cavity = u(2.5e-4, 4e-4)
        # Slow effects: self-heating, room temperature, moisture in the cardboard.
        self.warm_g = rng.normal(0, 0.1, LEVELS)
        self.warm_tau = u(200, 600)
        self.tc_g_per_k = rng.normal(0, 0.004, LEVELS)
        self.hygro_um = u(0.4, 1.2, LEVELS) * rng.choice([-1, 1], LEVELS)  # per %RH
        self.mc_tau = u(900, 2400) * (1 + 0.08 * (7 - np.arange(LEVELS)))
        # Load cells and HX711s.
        self.cells = "matched" if rng.random() < 0.6 else "mixed"
        if self.cells == "matched":
            rated = u(0.6, 1.1) * (1 + rng.normal(0, 0.015, LEVELS))
        else:
            rated = rng.choice([0.6, 1.0], LEVELS) * (1 + rng.normal(0, 0.05, LEVELS))
        self.rated_mv_v = rated
        self.counts_per_g = 2**24 * 128 * rated * 1e-3 / 100 * (1 + rng.normal(0, 0.01, LEVELS))
        plate_g = (self.m_root + self.m_beam) * 1000
        self.zero_counts = (rng.normal(0, 0.05e-3, LEVELS) * 2**24 * 128
                            + rng.normal(0, 2000, LEVELS) + plate_g * self.counts_per_g)
        self.hx_noise = u(40, 120, LEVELS)
        self.hx_osc = 1 + rng.normal(0, 0.012, LEVELS)
        # Piezo discs (27 mm brass, glued under the plate near the bolt) and front ends.
        self.c_disc = u(16e-9, 24e-9, LEVELS)
        self.r_bias = 500e3 * (1 + rng.normal(0, 0.01, LEVELS))
        self.r_series = 4.7e3
        self.glue = u(0.35, 0.8, LEVELS)
        self.poor_disc = -1
        if rng.random() < 0.15:
            self.poor_disc = int(rng.integers(0, LEVELS))
            self.glue[self.poor_disc] = u(0.08, 0.15)
        self.disc_xi = u(0.12, 0.3, LEVELS)
        self.s_q = 2.2e-3 * u(0.8, 1.2, LEVELS)  # coulomb per unit strain (d31 * E * area)
        self.vref = u(4.75, 5.1)  # AVcc from USB
        self.bias_code = 511.5 + rng.normal(0, 1.5, LEVELS)
        self.clock_ppm = u(-250, 250)
        self.batch = int(rng.choice([8, 10, 12]))
        self.mains_hz = 50.0 if rng.random() < 0.8 else 60.0
        self.hum_counts = u(0.6, 2.0) * (0.7 + 0.08 * np.arange(LEVELS))
        self.device_id = rng.integers(0, 256, 8).astype(np.uint8).tobytes()
        self.fw = (0, 7, int(rng.integers(0, 4)))
        self.c_shunt = 100e-9
        closed = build_modal(self, None, np.zeros((LEVELS, 6)))
        self.cell_share = np.array([[closed.static_cell_share(j, x) for x in SHARE_XI]
                                    for j in range(LEVELS)])
        self.c_shunt = self._choose_c_shunt(closed)

    # ----------------------------------------------------------------- derived numbers

    def xi_of(self, level: int, xy: np.ndarray) -> np.ndarray:
        """Beam coordinate of points ``xy`` (m) on ``level``'s plate: 0 at the bolt, 1 far edge."""
        along = np.asarray(xy, float) @ self.axis[level]
        return (along - self.bolt_u) / self.beam_len

    def shunt_share(self, level: int, xi: Any) -> np.ndarray:
        """Fraction of a load at ``xi`` that the tape carries past the cell at first
        (from the tower's stiffness: tape at the bolt and at the far edge, plate bending)."""
        return 1.0 - np.interp(xi, SHARE_XI, self.cell_share[level])

    def k_shunts(self, level: int) -> tuple[float, float]:
        kc = float(self.k_cell[level])
        sb, sf = float(self.s_base[level]), float(self.s_far[level])
        return kc * sb, kc * sf

    def tau_hp(self) -> np.ndarray:
        """Time constant of each piezo input: bias resistance times disc plus shunt capacitor."""
        return self.r_bias * (self.c_disc + self.c_shunt)

    def counts_per_strain(self) -> np.ndarray:
        """ADC counts per unit strain under the disc, mid band."""
        return self.s_q * self.glue / (self.c_disc + self.c_shunt) * 1024 / self.vref

    def front_end(self, s: np.ndarray) -> np.ndarray:
        """(8, R) complex gain of bias high-pass and series-R low-pass at poles ``s``."""
        tau = self.tau_hp()[:, None]
        c_par = (self.c_disc * self.c_shunt / (self.c_disc + self.c_shunt))[:, None]
        tau_lp = self.r_series * c_par
        return (s * tau / (1 + s * tau)) / (1 + s * tau_lp)

    def disc_curvature(self, level: int, m: int) -> float:
        """Strain under the disc per unit of bending mode ``m`` (averaged over the disc)."""
        span = 0.027 / self.beam_len
        a, b = self.disc_xi[level] - span / 2, self.disc_xi[level] + span / 2
        mean_curv = (beam_slope(m, b) - beam_slope(m, max(a, 0.0))) / (b - max(a, 0.0))
        return float(self.plate_t[level] / 2 * mean_curv / self.beam_len**2)

    def _choose_c_shunt(self, modal: Modal) -> float:
        """The builder's pick: the E6 shunt capacitor that makes a reference drop (a 0.5 g
        cube from 10 cm onto level 3, mid plate) peak nearest 300 counts."""
        imp = 0.5e-3 * math.sqrt(2 * G * 0.10) * 1.4
        g = modal.plate_vector(3, 0.6) * imp
        w = (modal.phi.T @ g) * (-1j / modal.wd)
        t = np.arange(600) / 20000
        strain = np.real(np.exp(np.outer(t, modal.s)) @ (w * modal.piezo_out[3]))
        peak = np.abs(strain).max() * self.s_q[3] * 0.6 * 1024 / self.vref
        choices = np.array([22, 33, 47, 68, 100, 150, 220, 330, 470]) * 1e-9
        counts = peak / (self.c_disc[3] + choices)
        return float(choices[np.argmin(np.abs(np.log(counts / 300)))])

    def describe(self) -> dict[str, Any]:
        """What the truth file records of this tower."""
        closed = build_modal(self, None, np.zeros((LEVELS, 6)))
        return {
            "cube_mass_g": round(self.cube_mass_g, 4), "cube_mm": round(self.cube_size * 1e3, 2),
            "feet": self.feet, "cells": self.cells,
            "counts_per_g": [round(float(x), 1) for x in self.counts_per_g],
            "k_cell_n_per_mm": [round(float(x) / 1e3, 2) for x in self.k_cell],
            "tape_share_bolt_far": [[round(float(a), 4), round(float(b), 4)]
                                    for a, b in zip(self.s_base, self.s_far, strict=True)],
            "stiff_tape_level": self.stiff_tape, "poor_disc_level": self.poor_disc,
            "plate_modes_hz": [[round(float(a), 1), round(float(b), 1)] for a, b in self.f_flex],
            "tower_modes_hz": [round(float(f), 1) for f in np.abs(closed.s.imag) / 2 / np.pi],
            "c_shunt_nf": round(self.c_shunt * 1e9), "tau_hp_ms":
                [round(float(x) * 1e3, 1) for x in self.tau_hp()],
            "clock_ppm": round(self.clock_ppm, 1), "piezo_batch": self.batch,
            "mains_hz": self.mains_hz,
        }


# --------------------------------------------------------------------------- modal model


@dataclass
class Modal:
    """Vertical modes of the tower (closed, or opened at ``exposed``) with resting cubes."""

    exposed: int | None
    dof: dict[str, int]
    mass: np.ndarray  # (n, n)
    phi: np.ndarray  # (n, R) mass-normalised mode shapes
    s: np.ndarray  # (R,) poles, rad/s
    cell_out: np.ndarray  # (8, R) newton through each cell per modal coordinate
    piezo_out: np.ndarray  # (8, R) strain under each disc per modal coordinate
    room: np.ndarray  # (R,) modal force per pascal of room sound
    stiffness: np.ndarray  # (n, n)
    k_cell: np.ndarray  # (8,)

    @property
    def wd(self) -> np.ndarray:
        return self.s.imag

    def static_cell_share(self, level: int, xi: float) -> float:
        """Fraction of a force held still on ``level``'s plate at ``xi`` that its cell
        carries (the rest goes through the tape; the air is vented)."""
        x = np.linalg.solve(self.stiffness, self.plate_vector(level, xi))
        below = "B" if level == 0 else f"M{level - 1}"
        return float(self.k_cell[level] * (x[self.dof[f"P{level}"]] - x[self.dof[below]]))

    def plate_vector(self, level: int, xi: float) -> np.ndarray:
        """Generalised force of a unit vertical force on ``level``'s plate at ``xi``."""
        g = np.zeros(len(self.dof))
        g[self.dof[f"P{level}"]] = 1.0
        for m in (0, 1):
            g[self.dof[f"F{level}{m}"]] = float(beam_shape(m, xi))
        return g

    def point_vector(self, name: str) -> np.ndarray:
        g = np.zeros(len(self.dof))
        g[self.dof[name]] = 1.0
        return g

    def modal_impulse(self, g: np.ndarray, tau: float) -> np.ndarray:
        """Complex amplitude per mode of an impulse ``g`` (N s) delivered as a half-sine
        of duration ``tau`` (contact time); tau = 0 for an ideal impulse."""
        w = (self.phi.T @ g) * (-1j / self.wd)
        if tau > 0:
            a = np.pi / tau
            w = w * (a * a / 2) * (1 + np.exp(-self.s * tau)) / (self.s**2 + a * a)
        return w

    def state_to_physical(self, z: np.ndarray) -> tuple[dict[str, float], dict[str, float]]:
        """Displacements and velocities by DOF name from complex modal states ``z``."""
        eta = z.real
        deta = (self.s * z).real
        x, v = self.phi @ eta, self.phi @ deta
        return ({k: float(x[i]) for k, i in self.dof.items()},
                {k: float(v[i]) for k, i in self.dof.items()})

    def physical_to_state(self, x: dict[str, float], v: dict[str, float]) -> np.ndarray:
        xs = np.array([x.get(k, 0.0) for k in self.dof])
        vs = np.array([v.get(k, 0.0) for k in self.dof])
        eta = self.phi.T @ (self.mass @ xs)
        deta = self.phi.T @ (self.mass @ vs)
        y = (self.s.real * eta - deta) / self.wd
        return eta + 1j * y


def build_modal(tw: Tower, exposed: int | None, loads: np.ndarray) -> Modal:
    """Assemble mass, stiffness and losses and solve for the modes.

    ``loads`` (8, 6) per plate: resting mass (kg), sum m*psi0, sum m*psi1, sum m*psi0^2,
    sum m*psi1^2, sum m*psi0*psi1 (the cubes as point masses on the beam).
    """
    top = LEVELS if exposed is None else exposed  # modules 0..top-1 stand
    plates = list(range(LEVELS if exposed is None else exposed + 1))
    names: list[str] = ["B"] + [f"M{i}" for i in range(top)]
    for j in plates:
        names += [f"P{j}", f"F{j}0", f"F{j}1"]
    names += [f"H{j}" for j in plates if j >= 1] + ["V"]
    if top == LEVELS:
        names.append("E")
    dof = {nm: i for i, nm in enumerate(names)}
    n = len(names)
    mass = np.zeros((n, n))
    stiff = np.zeros((n, n))
    lossy = np.zeros((n, n))
    visc = np.zeros((n, n))

    def spring(k: float, eta: float, coeffs: dict[str, float]) -> None:
        b = np.zeros(n)
        for nm, c in coeffs.items():
            b[dof[nm]] += c
        bb = np.outer(b, b)
        stiff[...] += k * bb
        lossy[...] += eta * k * bb

    area = (2 * tw.half_in) ** 2
    a_hole = (2 * tw.hole) ** 2
    a_plate = (2 * tw.plate_half) ** 2 - a_hole
    a_entry = (2 * tw.entry) ** 2

    mass[0, 0] = tw.m_base
    spring(tw.k_feet, tw.eta_feet, {"B": 1.0})
    for i in range(top):
        mass[dof[f"M{i}"], dof[f"M{i}"]] = tw.m_module[i]
        weight = (tw.m_module[i:top].sum() + tw.m_root[i + 1:top + 1].sum()
                  + tw.m_beam[i + 1:top + 1].sum()) * G  # newton standing on this rim
        below = "B" if i == 0 else f"M{i - 1}"
        spring(tw.k_rim * weight**0.7, tw.eta_rim, {f"M{i}": 1.0, below: -1.0})

    def support(j: int) -> str:
        return "B" if j == 0 else f"M{j - 1}"

    for j in plates:
        p, f0, f1 = dof[f"P{j}"], dof[f"F{j}0"], dof[f"F{j}1"]
        m_c, g0, g1, q0, q1, q01 = loads[j]
        mb = tw.m_beam[j]
        mass[p, p] = tw.m_root[j] + mb + m_c
        mass[p, f0] = mass[f0, p] = mb * PSI_MEAN[0] + g0
        mass[p, f1] = mass[f1, p] = mb * PSI_MEAN[1] + g1
        mass[f0, f0] = mb * PSI_SQ[0] + q0
        mass[f1, f1] = mb * PSI_SQ[1] + q1
        mass[f0, f1] = mass[f1, f0] = q01
        spring(tw.k_cell[j], tw.eta_cell[j], {f"P{j}": 1.0, support(j): -1.0})
        k_sb, k_sf = tw.k_shunts(j)
        spring(k_sb, 0.3, {f"P{j}": 1.0, support(j): -1.0})
        spring(k_sf, 0.3, {f"P{j}": 1.0, f"F{j}0": 1.0, f"F{j}1": 1.0, support(j): -1.0})
        eta_f = tw.eta_flex[j] + 4.0 * m_c  # resting cubes rub: +0.004 per gram
        for m in (0, 1):
            k_m = mb * PSI_SQ[m] * (2 * np.pi * tw.f_flex[j, m]) ** 2
            spring(k_m, eta_f, {f"F{j}{m}": 1.0})
        if j >= 1:
            h = dof[f"H{j}"]
            l_eff = tw.plate_t[j] + 1.7 * math.sqrt(a_hole[j] / math.pi)
            mass[h, h] = 1.2 * a_hole[j] * l_eff
            visc[h, h] = 2 * mass[h, h] * tw.hole_zeta * 2 * np.pi * 800
    if top == LEVELS:
        e = dof["E"]
        mass[e, e] = 1.2 * a_entry * (0.002 + 1.7 * math.sqrt(a_entry / math.pi))
        visc[e, e] = 2 * mass[e, e] * tw.hole_zeta * 2 * np.pi * 800

    def plate_face(j: int, sign: float) -> dict[str, float]:
        a = sign * a_plate[j]
        return {f"P{j}": a, f"F{j}0": a * PSI_MEAN[0], f"F{j}1": a * PSI_MEAN[1]}

    # Cavity i: inside module i, floor = plate i and its rim, ceiling = plate i+1 or the lid.
    vol = area * (tw.pitch - 0.002) * 0.92
    for i in range(top):
        c: dict[str, float] = {}
        for nm, a in plate_face(i, 1.0).items():
            c[nm] = c.get(nm, 0.0) + a
        c[support(i)] = c.get(support(i), 0.0) + area - a_plate[i] - a_hole[i]
        if i >= 1:
            c[f"H{i}"] = a_hole[i]
        if i + 1 < LEVELS and i + 1 in plates:
            for nm, a in plate_face(i + 1, -1.0).items():
                c[nm] = c.get(nm, 0.0) + a
            c[f"M{i}"] = c.get(f"M{i}", 0.0) - (area - a_plate[i + 1] - a_hole[i + 1])
            c[f"H{i + 1}"] = -a_hole[i + 1]
        else:  # the lid with the entry hole
            c[f"M{i}"] = c.get(f"M{i}", 0.0) - (area - a_entry)
            c["E"] = -a_entry
        spring(tw.air * RHO_C2 / vol, 0.02, c)
    base_cav = {"B": a_plate[0], "V": -1e-4}  # vented by the USB socket (1 cm2)
    for nm, a in plate_face(0, -1.0).items():
        base_cav[nm] = a
    mass[dof["V"], dof["V"]] = 1.2 * 1e-4 * 0.008
    visc[dof["V"], dof["V"]] = 2 * mass[dof["V"], dof["V"]] * 0.3 * 2 * np.pi * 450
    spring(tw.air * RHO_C2 / tw.v_base_cavity, 0.02, base_cav)

    room = np.zeros(n)
    if top == LEVELS:
        room[dof["E"]] = -a_entry
        room[dof["M7"]] = -(area - a_entry)
    else:
        k = top
        for nm, a in plate_face(k, -1.0).items():
            room[dof[nm]] += a
        room[dof[support(k)]] -= area - a_plate[k] - a_hole[k]
        if k >= 1:
            room[dof[f"H{k}"]] -= a_hole[k]

    w2, phi = linalg.eigh(stiff, mass)
    keep = (w2 > (2 * np.pi * 2) ** 2) & (w2 < (2 * np.pi * 6000) ** 2)
    w2, phi = w2[keep], phi[:, keep]
    omega = np.sqrt(w2)
    eta_r = np.einsum("ir,ij,jr->r", phi, lossy, phi) / w2
    zeta = eta_r / 2 + np.einsum("ir,ij,jr->r", phi, visc, phi) / (2 * omega) + 0.002
    zeta = np.minimum(zeta, 0.7)
    s = -zeta * omega + 1j * omega * np.sqrt(1 - zeta**2)

    cell_out = np.zeros((LEVELS, len(s)))
    piezo_out = np.zeros((LEVELS, len(s)))
    for j in plates:
        cell_out[j] = tw.k_cell[j] * (phi[dof[f"P{j}"]] - phi[dof[support(j)]])
        piezo_out[j] = sum(tw.disc_curvature(j, m) * phi[dof[f"F{j}{m}"]] for m in (0, 1))
    return Modal(exposed, dof, mass, phi, s, cell_out, piezo_out, phi.T @ room, stiff,
                 tw.k_cell.copy())


# --------------------------------------------------------------------------- scene


@dataclass
class Strike:
    """An impact: on a plate ("P3" at ``xi``), a module ("M2"), the base ("B"), or the
    modules k..7 set back on the tower ("R4"; ``impulse`` is then their speed, m/s)."""

    t: float
    target: str
    impulse: float
    tau: float = 0.0
    xi: float = 0.5


@dataclass
class Step:
    """A weight (grams, +/-) put on or taken off a plate at ``xi``."""

    t: float
    level: int
    grams: float
    xi: float


@dataclass
class Press:
    """A finger on a plate: rises and falls over ~0.1 s, with the hand's tremor."""

    t0: float
    t1: float
    level: int
    grams: float
    xi: float
    tremor_hz: float


@dataclass
class Grip:
    """A hand squeezing the module that carries ``level``'s cell and rim: the tape over
    the slot pulls the plate by ``grams``; cardboard creeps while held and recovers."""

    t0: float
    t1: float
    level: int
    grams: float
    recover_s: float


@dataclass
class Lift:
    t_lift: float
    t_close: float
    exposed: int


@dataclass
class Cube:
    ident: int
    mass_g: float
    colour: str
    level: int = -1
    xy: np.ndarray = field(default_factory=lambda: np.zeros(2))
    t_rest: float = 0.0


@dataclass
class Room:
    hum_gain: float
    talk_pa: float
    music_pa: float
    talk_spans: list[tuple[float, float]]
    rh0: float  # %RH at the start
    rh_rate: float  # %RH per hour (people breathing)
    rh_store: float  # %RH the cardboard was last in equilibrium with (the cupboard)
    temp_rate: float  # K per hour
    powered_s: float  # seconds the board was powered before the recording


@dataclass
class Scene:
    tower: Tower
    scenario: str
    seed: int
    duration: float
    room: Room
    strikes: list[Strike] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    presses: list[Press] = field(default_factory=list)
    grips: list[Grip] = field(default_factory=list)
    lifts: list[Lift] = field(default_factory=list)
    landings: list[dict[str, Any]] = field(default_factory=list)
    knockdowns: list[dict[str, Any]] = field(default_factory=list)
    removals: list[dict[str, Any]] = field(default_factory=list)
    knocks: list[dict[str, Any]] = field(default_factory=list)
    resting: list[list[Cube]] = field(default_factory=lambda: [[] for _ in range(LEVELS)])
    next_cube: int = 0
    next_landing: int = 0

    def new_cube(self, colour: str, rng: np.random.Generator) -> Cube:
        self.next_cube += 1
        mass = self.tower.cube_mass_g * (1 + rng.normal(0, 0.04))
        return Cube(self.next_cube, float(mass), colour)


# --------------------------------------------------------------------------- a cube's fall


@dataclass
class Flight:
    """What one thrown cube (and a cube it knocks down) does, before it is committed."""

    strikes: list[Strike] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    landings: list[dict[str, Any]] = field(default_factory=list)
    knockdowns: list[dict[str, Any]] = field(default_factory=list)
    rest: list[Cube] = field(default_factory=list)
    unrest: list[Cube] = field(default_factory=list)


def _contact_tau(rng: np.random.Generator, mass_kg: float) -> float:
    """Half-sine contact time of wood on greyboard: edges and corners are soft, faces stiff."""
    k = math.exp(rng.uniform(math.log(3e4), math.log(1e6)))
    return math.pi * math.sqrt(mass_kg / k)


def _in_walls(tw: Tower, xy: np.ndarray, vh: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    lim = tw.plate_half - tw.cube_size / 2
    xy, vh = xy.copy(), vh.copy()
    for a in (0, 1):
        if abs(xy[a]) > lim:
            xy[a] = math.copysign(2 * lim - abs(xy[a]), xy[a])
            xy[a] = float(np.clip(xy[a], -lim, lim))
            vh[a] = -0.5 * vh[a]
    return xy, vh


def _hole_gap(tw: Tower, level: int, xy: np.ndarray) -> float:
    """How far the cube's centre is from the hole's centre (square holes: max norm)."""
    if level == 0:
        return float("inf")
    return float(np.abs(xy - tw.hole_xy[level]).max())


def drop_cube(sc: Scene, rng: np.random.Generator, cube: Cube, t: float, xy: np.ndarray,
              vz: float, vh: np.ndarray, from_level: int, fl: Flight,
              knock_ok: bool = True) -> dict[str, Any]:
    """Let ``cube`` fall from the hole of ``from_level`` (8: the entry in the lid) at
    time ``t`` with downward speed ``vz``; record strikes, its rest and any knock-down."""
    tw = sc.tower
    c, m = tw.cube_size, cube.mass_g * 1e-3
    level = from_level - 1
    fall_h = 0.027 if from_level == LEVELS else tw.pitch - 0.002
    strikes: list[float] = []
    path: list[int] = []
    bounces: list[float] = []
    knock: tuple[Cube, float] | None = None
    t_load = t
    while True:
        tf = (-vz + math.sqrt(vz * vz + 2 * G * fall_h)) / G
        vz += G * tf
        xy, vh = _in_walls(tw, xy + vh * tf, vh)
        t += tf
        fall_h = tw.pitch - 0.002
        gap = _hole_gap(tw, level, xy)
        hole = tw.hole[level]
        if gap < hole - c / 2:  # through the hole without touching
            level -= 1
            continue
        if gap < hole + c / 2:  # catches the hole's edge
            frac = rng.uniform(0.2, 0.7)
            if rng.random() < (hole + c / 2 - gap) / c:  # glances off it and falls on
                fl.strikes.append(Strike(t, f"P{level}", frac * m * vz * 1.5,
                                         _contact_tau(rng, m), float(tw.xi_of(level, xy))))
                strikes.append(t)
                path.append(level)
                vz *= 1 - 0.4 * frac
                vh = vh + rng.normal(0, 0.08, 2) + 2.0 * (tw.hole_xy[level] - xy)
                level -= 1
                continue
            off = xy - tw.hole_xy[level]  # tips onto the plate beside the hole
            k = int(np.argmax(np.abs(off)))
            xy = xy.copy()
            xy[k] = tw.hole_xy[level][k] + math.copysign(hole + c / 2 + 1e-4, off[k])
        # On the plate: bounce, maybe into the hole, then slide and rock to rest.
        path.append(level)
        fell = False
        while True:
            e = float(np.clip(rng.normal(tw.restitution, 0.06), 0.15, 0.65))
            xi = float(tw.xi_of(level, xy))
            fl.strikes.append(Strike(t, f"P{level}", m * vz * (1 + e), _contact_tau(rng, m), xi))
            strikes.append(t)
            bounces.append(t)
            if knock_ok and knock is None and level > 0:
                for other in sc.resting[level]:
                    if other.t_rest < t and np.abs(other.xy - xy).max() < c:
                        vh = vh + rng.normal(0, 0.15 * vz, 2)
                        edge = _hole_gap(tw, level, other.xy) - (tw.hole[level] + c / 2)
                        if edge < 0.5 * c and rng.random() < 0.4:
                            knock = (other, t)
                        break
            v_in = vz
            vz = e * vz
            vh = 0.5 * vh + rng.normal(0, 0.3 * v_in, 2)
            if vz < 0.12:
                break
            tf = 2 * vz / G
            xy, vh = _in_walls(tw, xy + vh * tf, vh)
            t += tf
            if _hole_gap(tw, level, xy) < tw.hole[level] - c / 4:
                level -= 1
                fell = True
                break
        if fell:
            continue
        t_load = t
        speed = float(np.hypot(*vh))
        decel = tw.friction * G
        if speed > 1e-4:
            dist = speed * speed / (2 * decel)
            dirn = vh / speed
            for k in range(1, 21):
                p = xy + dirn * dist * k / 20
                if _hole_gap(tw, level, p) < tw.hole[level] - c / 4:
                    s = dist * k / 20
                    t += (speed - math.sqrt(max(speed * speed - 2 * decel * s, 0.0))) / decel
                    xy, vz, vh = p, 0.05, dirn * 0.05
                    level -= 1
                    fell = True
                    break
            if fell:
                continue
            xy, _ = _in_walls(tw, xy + dirn * dist, vh)
            t += speed / decel
        rock = rng.uniform(0.02, 0.12)
        fl.strikes.append(Strike(t + 0.6 * rock, f"P{level}", 0.03 * m * 0.3, 4e-4,
                                 float(tw.xi_of(level, xy))))
        t += rock
        break
    if level > 0 and _hole_gap(tw, level, xy) < tw.hole[level] + c / 2:
        off = xy - tw.hole_xy[level]
        k = int(np.argmax(np.abs(off)))
        xy = xy.copy()
        xy[k] = tw.hole_xy[level][k] + math.copysign(tw.hole[level] + c / 2 + 1e-4, off[k])
    cube.level, cube.xy, cube.t_rest = level, xy, t
    xi = float(tw.xi_of(level, xy))
    fl.steps.append(Step(t_load, level, cube.mass_g, xi))
    fl.rest.append(cube)
    landing: dict[str, Any] = {
        "t": round(t, 6), "t_first_impact": round(strikes[0], 6), "floor": level, "cubes": 1,
        "knocked": not knock_ok, "caused_knockdown": False, "mass_g": round(cube.mass_g, 4),
        "colour": cube.colour, "strike_times": [round(x, 6) for x in strikes],
        "bounce_times": [round(x, 6) for x in bounces], "path": path,
        "xi": round(xi, 3), "tape_share": round(float(tw.shunt_share(level, xi)), 4),
        "cube": cube.ident, "id": sc.next_landing,
    }
    sc.next_landing += 1
    fl.landings.append(landing)
    if knock is not None:
        other, t_k = knock
        from_level = other.level
        fl.unrest.append(other)
        other = replace(other)  # the copy falls; the original rests until this is committed
        fl.steps.append(Step(t_k, from_level, -other.mass_g, float(tw.xi_of(from_level, other.xy))))
        landing["caused_knockdown"] = True
        off = other.xy - tw.hole_xy[from_level]
        start = tw.hole_xy[from_level] + off * (0.6 * tw.hole[from_level]
                                                / max(float(np.abs(off).max()), 1e-6))
        knocked = drop_cube(sc, rng, other, t_k + rng.uniform(0.03, 0.1), start, 0.1,
                            rng.normal(0, 0.05, 2), from_level, fl, knock_ok=False)
        knocked["from_floor"] = from_level
        knocked["t_knocked"] = round(t_k, 6)
        fl.knockdowns.append({"t": round(t_k, 6), "from_floor": from_level,
                              "floor": knocked["floor"], "cube": other.ident,
                              "by_id": landing["id"], "knocked_id": knocked["id"]})
    return landing


# --------------------------------------------------------------------------- people

COLOURS = ("yellow", "blue", "brown", "gray", "black", "white")


class People:
    """The players' hands: throws, opening a level, knocking the table."""

    def __init__(self, sc: Scene, rng: np.random.Generator) -> None:
        self.sc, self.rng, self.tw = sc, rng, sc.tower

    def count(self) -> int:
        return sum(len(r) for r in self.sc.resting)

    def throw(self, t: float, cubes: list[Cube]) -> float | None:
        """Drop ``cubes`` into the entry (together if several); the time the last one
        rests, or None (nothing thrown) if that would be after the end."""
        sc, rng, tw = self.sc, self.rng, self.tw
        fl = Flight()
        lim = tw.entry - tw.cube_size / 2
        for i, cube in enumerate(cubes):
            vz = math.sqrt(2 * G * rng.uniform(0.01, 0.08))
            xy = tw.entry_xy + rng.uniform(-lim, lim, 2)
            drop_cube(sc, rng, cube, t + (rng.uniform(0, 0.06) if i else 0.0), xy, vz,
                      rng.normal(0, 0.06, 2), LEVELS, fl)
        if max(x["t"] for x in fl.landings) > sc.duration - 0.3:
            return None
        sc.strikes += fl.strikes
        sc.steps += fl.steps
        sc.landings += fl.landings
        sc.knockdowns += fl.knockdowns
        for gone in fl.unrest:
            sc.resting[gone.level] = [c for c in sc.resting[gone.level] if c.ident != gone.ident]
        for cube in fl.rest:
            sc.resting[cube.level].append(cube)
        return float(max(x["t"] for x in fl.landings))

    def _grip(self, t0: float, t1: float, level: int) -> None:
        k_sb, k_sf = self.tw.k_shunts(level)
        squeeze = self.rng.uniform(5e-6, 40e-6) * self.rng.choice([-1.0, 1.0])
        self.sc.grips.append(Grip(t0, t1, level, (k_sb + k_sf) * squeeze / GRAM_N,
                                  self.rng.uniform(5, 30)))

    def open_level(self, t: float, k: int) -> tuple[float, list[Cube]] | None:
        """Lift modules k..7 (one hand holds the module below), take out what lies on
        level k in grabs of up to three cubes, set the modules back."""
        sc, rng, tw = self.sc, self.rng, self.tw
        u = rng.uniform
        t_lift = t + u(0.4, 0.9)
        cubes = [c for c in sc.resting[k] if c.t_rest < t]
        order = list(rng.permutation(len(cubes)))
        grabs: list[list[Cube]] = []
        while order:
            n = min(len(order), int(rng.integers(2, 4)))
            grabs.append([cubes[i] for i in order[:n]])
            order = order[n:]
        times = []
        tc = t_lift + u(0.8, 2.0)
        for _ in grabs:
            t_rm = tc + u(0.3, 0.9)
            times.append((tc, t_rm))
            tc = t_rm + u(0.6, 1.4)
        t_close = times[-1][1] + u(0.8, 1.8) if grabs else t_lift + u(1.5, 3.0)
        if t_close + 1.5 > sc.duration:
            return None
        self._grip(t, t_close + u(0.3, 1.0), k)
        upper = min(k + int(rng.integers(0, 2)), LEVELS - 1)
        if upper + 1 < LEVELS:
            self._grip(t + u(0.0, 0.2), t_close + u(0.05, 0.3), upper + 1)
        below = "B" if k == 0 else f"M{k - 1}"
        sc.strikes.append(Strike(t_lift, below, u(2e-4, 1e-3), u(2e-3, 5e-3)))
        sc.lifts.append(Lift(t_lift, t_close, k))
        for grab, (t_touch, t_rm) in zip(grabs, times, strict=True):
            xi = float(np.mean([tw.xi_of(k, c.xy) for c in grab]))
            sc.presses.append(Press(t_touch, t_rm + 0.05, k, u(5, 30), xi, u(7, 12)))
            for tt in np.sort(u(t_touch, t_rm, int(rng.integers(1, 4)))):
                sc.strikes.append(Strike(float(tt), f"P{k}", u(2e-5, 1.5e-4), 1e-3, xi))
            for c in grab:
                sc.steps.append(Step(t_rm, k, -c.mass_g, float(tw.xi_of(k, c.xy))))
            sc.removals.append({"t": round(t_rm, 6), "t_touch": round(t_touch, 6), "floor": k,
                                "cubes": len(grab), "colours": [c.colour for c in grab]})
        sc.strikes.append(Strike(t_close, f"R{k}", u(0.005, 0.03)))
        sc.resting[k] = [c for c in sc.resting[k] if c not in cubes]
        return t_close + u(0.4, 1.0), cubes

    def empty_tower(self, t: float) -> float | None:
        """Take every cube out, level by level from the top."""
        for k in range(LEVELS - 1, -1, -1):
            if self.sc.resting[k]:
                res = self.open_level(t, k)
                if res is None:
                    return None
                t = res[0] + self.rng.uniform(1.0, 3.0)
        return t

    def knocks_in_gaps(self, every: tuple[float, float], impulse: tuple[float, float]) -> None:
        """Knuckles on the table, away from landings and handling (so the truth is fair)."""
        sc, rng = self.sc, self.rng
        busy = [(x["t_first_impact"] - 0.8, x["t"] + 0.8) for x in sc.landings]
        busy += [(lf.t_lift - 1.5, lf.t_close + 1.5) for lf in sc.lifts]
        t = QUIET_S + rng.uniform(0.8, every[1])
        while t < sc.duration - 1.0:
            if not any(a <= t <= b for a, b in busy):
                sc.strikes.append(Strike(t, "B", rng.uniform(*impulse), rng.uniform(2e-3, 6e-3)))
                sc.knocks.append({"t": round(t, 6)})
                t += rng.uniform(*every)
            else:
                t += 0.37


def _throwing(sc: Scene, rng: np.random.Generator, ppl: People, series: tuple[int, int],
              gap: tuple[float, float], pause: tuple[float, float], cap: int) -> None:
    t = rng.uniform(4.5, 5.5)
    while t < sc.duration - 1.5:
        if ppl.count() >= cap:
            after = ppl.empty_tower(t)
            if after is None:
                return
            t = after
            continue
        for _ in range(int(rng.integers(series[0], series[1] + 1))):
            if ppl.throw(t, [sc.new_cube("test", rng)]) is None:
                return
            t += rng.uniform(*gap)
        t += rng.uniform(*pause)


def _game(sc: Scene, rng: np.random.Generator, ppl: People) -> None:
    """Games of Mord im Arosa by the rules, one after another: after a game ends the
    players empty the tower level by level and start again."""
    t: float | None = rng.uniform(4.5, 5.5)
    while t is not None and t < sc.duration - 2:
        t = _one_game(sc, rng, ppl, t)
        if t is not None:
            t = ppl.empty_tower(t + rng.uniform(10, 30))
            t = None if t is None else t + rng.uniform(5, 15)


def _one_game(sc: Scene, rng: np.random.Generator, ppl: People, t0: float) -> float | None:
    """Prologue, Act I (victims), Act II (suspect / cover); the end time, or None when
    the recording ends first."""
    u = rng.uniform
    players = [str(c) for c in rng.choice(COLOURS, int(rng.integers(3, 7)), replace=False)]
    supply = {p: 20 for p in players}
    sheet = {p: [0] * LEVELS for p in players}

    def throw_all(t: float, cubes: list[Cube]) -> float | None:
        for cube in cubes:
            if ppl.throw(t, [cube]) is None:
                return None
            t += u(0.8, 2.2)
        return t

    def own(p: str) -> Cube:
        supply[p] -= 1
        return sc.new_cube(p, rng)

    t: float | None = t0
    victims = [sc.new_cube("red", rng), sc.new_cube("red", rng)]
    if rng.random() < 0.4:  # both victims at once
        t = None if ppl.throw(t0, victims) is None else t0 + u(1.5, 3.0)
    else:
        t = throw_all(t0, victims)
    for p in players:
        if t is None:
            return None
        t = throw_all(t, [own(p), own(p)])
    act, found, turn = 1, 0, int(rng.integers(len(players)))
    while t is not None:
        if t > sc.duration - 12:
            return None
        inv = players[turn % len(players)]
        owed = 0
        if act == 1:
            reds = [k for k in range(LEVELS) if any(c.colour == "red" for c in sc.resting[k])]
            k = int(rng.choice(reds)) if reds and rng.random() < 0.4 else int(rng.integers(8))
            res = ppl.open_level(t, k)
            if res is None:
                return None
            t, taken = res
            clues = [c for c in taken if c.colour != "red"]
            if len(clues) < len(taken):  # a crime scene: the caught players pay
                found += len(taken) - len(clues)
                for p in players:
                    n = min(sum(c.colour == p for c in clues), supply[p]) if p != inv else 0
                    supply[p] -= n
                    sheet[p][k] += n
            else:
                owed = 1
            if found >= 2:
                act = 2
        else:
            k = int(rng.integers(8))
            res = ppl.open_level(t, k)
            if res is None:
                return None
            t, clues = res
            mine = sum(c.colour == inv for c in clues)
            if rng.random() < 0.65:  # suspect one or two others
                others = [p for p in players if p != inv]
                suspects = rng.choice(others, int(rng.integers(1, 3)), replace=False)
                if k == 0 and mine == 0:
                    owed = len(suspects)
                else:
                    for p in suspects:
                        n = sum(c.colour == p for c in clues)
                        owed += n == 0
                        n = min(n, supply[p])
                        supply[p] -= n
                        sheet[p][k] += n
            else:  # cover one's tracks
                back = min(mine, sheet[inv][k])
                sheet[inv][k] -= back
                supply[inv] += back
                owed = int(mine == 0)
        t = throw_all(t + u(0.5, 1.5), clues)
        for _ in range(owed):
            if t is None or supply[inv] == 0:
                break
            t = throw_all(t, [own(inv)])
        if any(sum(v) >= 10 for v in sheet.values()) or min(supply.values()) <= 0:
            return t  # the game is over
        turn += 1
        t = None if t is None else t + u(4, 12)
    return None


def still_room() -> Room:
    """No people: no sound, no hum, constant air, the board long powered (for hand-made scenes)."""
    return Room(0.0, 0.0, 0.0, [], 45.0, 0.0, 45.0, 0.0, 1e6)


def make_room(rng: np.random.Generator, scenario: str, duration: float) -> Room:
    u = rng.uniform
    if scenario == "noisy":
        hum, talk, frac = u(2.5, 6.0), u(0.02, 0.06), 0.7
        music = u(0.05, 0.2) if rng.random() < 0.5 else 0.0
        rh_rate, temp_rate = u(1, 6), u(0.3, 1.5)
    elif scenario == "game":
        hum, talk, frac = u(0.8, 2.0), u(0.01, 0.04), 0.5
        music = u(0.02, 0.08) if rng.random() < 0.25 else 0.0
        rh_rate, temp_rate = u(2, 8), u(0.5, 2.0)
    else:
        hum, talk, frac, music = u(0.7, 1.3), u(0.003, 0.01), 0.15, 0.0
        rh_rate, temp_rate = u(-1, 2), u(-0.3, 0.6)
    spans = []
    t = QUIET_S + u(0.2, 3.0)
    while t < duration:
        length = u(1.0, 5.0)
        spans.append((t, min(t + length, duration)))
        t += length + u(0.5, 4.0) * (1 - frac) / max(frac, 0.05) * 0.5
    rh0 = u(30, 65)
    rh_store = float(np.clip(rh0 + rng.normal(0, 8), 20, 80))
    return Room(hum, talk, music, spans, rh0, rh_rate, rh_store, temp_rate,
                u(0, 300) if scenario == "game" else u(0, 3600))


def make_scene(seed: int, scenario: str, duration: float) -> Scene:
    """The people's evening at tower ``seed``: what happens, when, and the truth."""
    rng = np.random.default_rng([seed, SCENARIOS.index(scenario), 0x5CE])
    tw = Tower(seed)
    sc = Scene(tw, scenario, seed, duration, make_room(rng, scenario, duration))
    ppl = People(sc, rng)
    if scenario == "rapid":
        _throwing(sc, rng, ppl, (3, 8), (0.3, 0.8), (2.0, 5.0), 50)
    elif scenario == "game":
        _game(sc, rng, ppl)
        ppl.knocks_in_gaps((60.0, 150.0), (0.003, 0.015))
    else:
        _throwing(sc, rng, ppl, (1, 1), (0.0, 0.0), (3.0, 8.0), 40)
        if scenario == "noisy":
            ppl.knocks_in_gaps((5.0, 20.0), (0.005, 0.04))
    sc.landings.sort(key=lambda x: (x["t"], x["id"]))
    index = {x["id"]: i for i, x in enumerate(sc.landings)}
    for kd in sc.knockdowns:
        kd["by"] = index[kd["by_id"]]
        kd["landing"] = index[kd["knocked_id"]]
        sc.landings[kd["landing"]]["by"] = kd["by"]
    return sc


# --------------------------------------------------------------------------- rendering


def _smooth(x: np.ndarray) -> np.ndarray:
    """0 -> 1 over x in [0, 1] (raised cosine)."""
    return 0.5 - 0.5 * np.cos(np.pi * np.clip(x, 0.0, 1.0))


def _mass_row(xi: float, grams: float) -> np.ndarray:
    p0, p1 = float(beam_shape(0, xi)), float(beam_shape(1, xi))
    return grams * 1e-3 * np.array([1.0, p0, p1, p0 * p0, p1 * p1, p0 * p1])


def _schedule(sc: Scene) -> list[tuple[float, int | None, np.ndarray]]:
    """When the modal model changes: lifts, closes, and every gram of cubes on a plate."""
    events: list[tuple[float, int, Any]] = [(s.t, 1, s) for s in sc.steps]
    events += [(lf.t_lift, 0, lf.exposed) for lf in sc.lifts]
    events += [(lf.t_close, 2, None) for lf in sc.lifts]
    loads = np.zeros((LEVELS, 6))
    used = loads.copy()
    exposed: int | None = None
    sched = [(0.0, exposed, loads.copy())]
    for t, kind, data in sorted(events, key=lambda e: (e[0], e[1])):
        if kind == 1:
            loads[data.level] += _mass_row(data.xi, data.grams)
            if np.abs(loads[:, 0] - used[:, 0]).max() < 1e-3:
                continue
        else:
            exposed = data if kind == 0 else None
        used = loads.copy()
        sched.append((t, exposed, used))
    return sched


def _acoustic(sc: Scene, rng: np.random.Generator, n: int) -> np.ndarray:
    """Room sound pressure (Pa) at the piezo rate: talking and music."""
    room, fs = sc.room, PIEZO_RATE
    p = np.zeros(n)
    t = np.arange(n) / fs
    if room.talk_pa > 0 and room.talk_spans:
        env_c = np.zeros(int(n / fs * COARSE_HZ) + 2)
        for a, b in room.talk_spans:
            s = a
            while s < b:
                length = rng.uniform(0.08, 0.25)
                i0, i1 = int(s * COARSE_HZ), int((s + length) * COARSE_HZ) + 1
                if i1 > i0 + 1 and i1 < len(env_c):
                    env_c[i0:i1] += rng.uniform(0.5, 1.0) * np.hanning(i1 - i0)
                s += rng.uniform(0.12, 0.3)
        env = np.interp(t, np.arange(len(env_c)) / COARSE_HZ, env_c)
        carrier = signal.sosfilt(signal.butter(2, [120, 800], "bandpass", fs=fs, output="sos"),
                                 rng.standard_normal(n))
        p += room.talk_pa * math.sqrt(2) * env * carrier / max(float(np.std(carrier)), 1e-12)
    if room.music_pa > 0:
        on = t > QUIET_S + 0.2
        beat = np.floor(t / 0.5)
        roots = 45 * 2 ** (rng.integers(0, 16, int(beat[-1]) + 2) / 12)
        f = roots[beat.astype(int)]
        phase = 2 * np.pi * np.cumsum(f) / fs
        tone = np.sin(phase) + 0.5 * np.sin(1.5 * phase) + 0.3 * np.sin(2 * phase)
        kick = np.exp(-(t % 0.5) / 0.08) * np.sin(2 * np.pi * 55 * (t % 0.5))
        p += room.music_pa * on * (0.6 * tone + 1.5 * kick)
    return p


@dataclass
class Rendered:
    """Everything the encoder needs, in stream time (device seconds)."""

    piezo: np.ndarray  # (N, 8) uint16 codes
    poll_t: np.ndarray  # (P,) seconds
    valid: np.ndarray  # (P,) uint8
    values: np.ndarray  # (P, 8) int64 counts (0 where not valid)
    timeouts: np.ndarray  # (P,) cumulative load timeouts


def render_signals(sc: Scene) -> Rendered:
    """Simulate the tower over the scene and sample it as the device does."""
    tw, room = sc.tower, sc.room
    rng = np.random.default_rng([sc.seed, SCENARIOS.index(sc.scenario), 0xAD])
    fs, period = PIEZO_RATE, 1.0 / PIEZO_RATE
    n_total = int(round(sc.duration * fs))
    drift = tw.clock_ppm * 1e-6
    nc = int(math.ceil(sc.duration * COARSE_HZ)) + 2
    tc = np.arange(nc) / COARSE_HZ

    # ---- modal models along the evening
    sched = _schedule(sc)
    cache: dict[Any, Modal] = {}
    models: list[Modal] = []
    for _, exposed, loads in sched:
        key = (exposed, tuple(np.round(loads.ravel(), 7)))
        if key not in cache:
            cache[key] = build_modal(tw, exposed, loads)
        models.append(cache[key])
    seg_t = np.array([s[0] for s in sched])
    seg_n = np.ceil(seg_t * fs - 1e-9).astype(int)

    # ---- strikes as modal impulses at the sample after they happen
    closed = build_modal(tw, None, np.zeros((LEVELS, 6)))
    kicks: dict[int, list[tuple[int, np.ndarray]]] = {}
    for st in sc.strikes:
        seg = int(np.searchsorted(seg_t, st.t, side="right") - 1)
        md = models[seg]
        if st.target.startswith("R"):
            k = int(st.target[1:])
            v0 = np.zeros(len(closed.dof))
            for nm, i in closed.dof.items():
                moved = (nm[0] == "M" and int(nm[1]) >= k) or (nm[0] in "PH" and int(nm[1]) > k)
                if moved or nm == "E":
                    v0[i] = -st.impulse
            gv = closed.mass @ v0
            g = np.array([gv[closed.dof[nm]] if nm in closed.dof else 0.0 for nm in md.dof])
        elif st.target.startswith("P"):
            if st.target not in md.dof:
                continue
            g = md.plate_vector(int(st.target[1:]), st.xi) * st.impulse
        else:
            if st.target not in md.dof:
                continue
            g = md.point_vector(st.target) * st.impulse
        n0 = int(math.ceil(st.t * fs - 1e-9))
        if n0 >= n_total:
            continue
        w = md.modal_impulse(g, st.tau) * np.exp(md.s * (n0 * period - st.t))
        kicks.setdefault(seg, []).append((n0, w))

    pressure = _acoustic(sc, rng, n_total)

    # ---- slow parts on the coarse grid
    cell_slow = np.zeros((nc, LEVELS))
    piezo_slow = np.zeros((nc, LEVELS))
    step_t: list[np.ndarray] = []
    step_cum: list[np.ndarray] = []
    k_flex = tw.m_beam[:, None] * np.array(PSI_SQ)[None, :] * (2 * np.pi * tw.f_flex) ** 2
    cps = tw.counts_per_strain()
    curv = np.array([[tw.disc_curvature(j, m) for m in (0, 1)] for j in range(LEVELS)])

    def bend_counts(level: int, xi: float) -> float:
        """Piezo counts (before the high-pass) per newton held still on the plate at xi."""
        return float(cps[level] * sum(curv[level, m] * beam_shape(m, xi) / k_flex[level, m]
                                      for m in (0, 1)))

    for j in range(LEVELS):
        steps = sorted((s for s in sc.steps if s.level == j), key=lambda s: s.t)
        ts = np.array([s.t for s in steps])
        share = np.array([float(tw.shunt_share(j, s.xi)) for s in steps])
        dw = np.array([s.grams for s in steps])
        step_t.append(ts)
        step_cum.append(np.cumsum(dw * (1 - share)))
        terms = [(dw * share * tw.relax_frac[j] * w, tau)
                 for w, tau in zip(tw.relax_w, tw.relax_tau, strict=True)]
        terms.append((dw * (1 - share) * tw.cell_creep[j], tw.cell_creep_tau[j]))
        for amp, tau in terms:
            if not len(ts):
                break
            n0 = np.minimum(np.ceil(ts * COARSE_HZ).astype(int), nc - 1)
            train = np.zeros(nc)
            np.add.at(train, n0, amp * np.exp(-(n0 / COARSE_HZ - ts) / tau))
            total = np.zeros(nc)
            np.add.at(total, n0, amp)
            decay = signal.lfilter([1.0], [1.0, -math.exp(-1 / (COARSE_HZ * tau))], train)
            cell_slow[:, j] += np.cumsum(total) - decay
    def local(t0: float, t1: float) -> slice:
        return slice(max(0, int(t0 * COARSE_HZ)), min(nc, int(t1 * COARSE_HZ) + 2))

    for pr in sc.presses:
        win = local(pr.t0, pr.t1)
        tl = tc[win]
        f = pr.grams * _smooth((tl - pr.t0) / 0.12) * (1 - _smooth((tl - pr.t1 + 0.1) / 0.1))
        f *= 1 + 0.08 * np.sin(2 * np.pi * pr.tremor_hz * (tl - pr.t0))
        cell_slow[win, pr.level] += f * (1 - float(tw.shunt_share(pr.level, pr.xi)))
        piezo_slow[win, pr.level] += f * GRAM_N * bend_counts(pr.level, pr.xi)
    for gr in sc.grips:
        win = local(gr.t0, gr.t1 + 8 * gr.recover_s)
        tl = tc[win]
        hold = gr.t1 - gr.t0
        creep = 0.3 * (1 - np.exp(-np.clip(tl - gr.t0, 0, hold) / 4.0))
        on = _smooth((tl - gr.t0) / 0.15) * (1 - _smooth((tl - gr.t1) / 0.15))
        after = tl > gr.t1
        creep = np.where(after, 0.3 * (1 - math.exp(-hold / 4.0))
                         * np.exp(-np.clip(tl - gr.t1, 0, None) / gr.recover_s), creep * on)
        g = gr.grams * (on + creep * (tl > gr.t0))
        cell_slow[win, gr.level] += g
        piezo_slow[win, gr.level] += g * GRAM_N * bend_counts(gr.level, 1.0)
    # drift: self-heating (cells unpowered while lifted), room temperature, moisture
    powered = np.ones((nc, LEVELS))
    for lf in sc.lifts:
        powered[(tc >= lf.t_lift) & (tc < lf.t_close), lf.exposed + 1:] = 0.0
    a = math.exp(-1 / (COARSE_HZ * tw.warm_tau))
    theta0 = 1 - math.exp(-room.powered_s / tw.warm_tau)
    rh = room.rh0 + room.rh_rate * tc / 3600
    for j in range(LEVELS):
        theta = signal.lfilter([1 - a], [1, -a], powered[:, j], zi=[a * theta0])[0]
        am = math.exp(-1 / (COARSE_HZ * tw.mc_tau[j]))
        mc = signal.lfilter([1 - am], [1, -am], rh, zi=[am * room.rh_store])[0]
        k_tape = sum(tw.k_shunts(j))
        cell_slow[:, j] += (tw.warm_g[j] * theta + tw.tc_g_per_k[j] * room.temp_rate * tc / 3600
                            + tw.hygro_um[j] * 1e-6 * k_tape / GRAM_N * (mc - mc[0]))
    tau_hp = tw.tau_hp()
    for j in range(LEVELS):
        ah = tau_hp[j] / (tau_hp[j] + 1 / COARSE_HZ)
        piezo_slow[:, j] = signal.lfilter([ah, -ah], [1, -ah], piezo_slow[:, j])
    for lf in sc.lifts:  # discs reconnect holding a little charge of their own
        late = tc >= lf.t_close
        for j in range(lf.exposed + 1, LEVELS):
            piezo_slow[late, j] += rng.normal(0, 12) * np.exp(-(tc[late] - lf.t_close) / tau_hp[j])

    # ---- HX711 conversion grid (each chip on its own oscillator), device time
    conv_period = POLL_S * tw.hx_osc * (1 + drift)
    conv_c = [rng.uniform(0, p) + np.arange(int(sc.duration / p) + 2) * p for p in conv_period]
    integ_at = [np.zeros(len(c)) for c in conv_c]
    running = np.zeros(LEVELS)

    # ---- the blocks: modal filter, outputs, sampling
    piezo = np.empty((n_total, LEVELS), np.float32)
    delta = np.arange(LEVELS) * ADC_STEP_S
    bounds = sorted(set([0, n_total] + [int(x) for x in seg_n if 0 < x < n_total]
                        + list(range(0, n_total, CHUNK))))
    z = np.zeros(0, complex)
    current = -1
    hum_f = tw.mains_hz * (1 + rng.normal(0, 0.0008)) / (1 + drift)
    hum_phase = rng.uniform(0, 2 * np.pi, (3, LEVELS))
    wobble = rng.uniform(0, 2 * np.pi, LEVELS)
    for a_n, b_n in zip(bounds[:-1], bounds[1:], strict=True):
        seg = int(np.searchsorted(seg_n, a_n, side="right") - 1)
        md = models[seg]
        if seg != current:
            if current >= 0 and len(z):
                x, v = models[current].state_to_physical(z)
                z = md.physical_to_state(x, v)
            else:
                z = np.zeros(len(md.s), complex)
            current = seg
        nb = b_n - a_n
        tb = np.arange(a_n, b_n) * period
        u = np.outer(pressure[a_n:b_n] * period, md.room * (-1j / md.wd))  # (nb, R)
        for n0, w in kicks.get(seg, []):
            if a_n <= n0 < b_n:
                u[n0 - a_n] += w
        pole = np.exp(md.s * period)
        zz = np.empty((len(md.s), nb), complex)
        for r in range(len(md.s)):
            zz[r] = signal.lfilter([1.0], [1.0, -pole[r]], u[:, r], zi=[pole[r] * z[r]])[0]
        z = zz[:, -1].copy()
        wp = (md.piezo_out * tw.front_end(md.s[None, :]) * np.exp(np.outer(delta, md.s))
              * cps[:, None])
        zr, zi = np.ascontiguousarray(zz.real), np.ascontiguousarray(zz.imag)
        dyn_p = (np.ascontiguousarray(wp.real) @ zr - np.ascontiguousarray(wp.imag) @ zi).T
        dyn_c = (np.ascontiguousarray(md.cell_out / GRAM_N) @ zr).T
        # piezo: dynamic + slow bending + hum + ADC noise, around the bias
        pos = tb * COARSE_HZ
        at = np.minimum(pos.astype(int), nc - 2)
        frac = (pos - at)[:, None]
        slow_p = piezo_slow[at] * (1 - frac) + piezo_slow[at + 1] * frac
        connected = np.ones((nb, LEVELS), bool)
        for lf in sc.lifts:
            inside = (tb >= lf.t_lift) & (tb < lf.t_close)
            connected[inside, lf.exposed + 1:] = False
        wt = 2 * np.pi * hum_f * tb
        hum = np.zeros((nb, LEVELS))
        for i, (k, h) in enumerate(((1, 1.0), (3, 0.3), (5, 0.12))):
            hum += h * (np.outer(np.sin(k * wt), np.cos(hum_phase[i]))
                        + np.outer(np.cos(k * wt), np.sin(hum_phase[i])))
        slow_wt = 2 * np.pi * 0.05 * tb  # people moving about change the pickup a little
        hum *= tw.hum_counts * room.hum_gain * (
            1 + 0.1 * (np.outer(np.sin(slow_wt), np.cos(wobble))
                       + np.outer(np.cos(slow_wt), np.sin(wobble))))
        hum = np.where(connected, hum, 0.1 * hum)
        noise = rng.standard_normal((nb, LEVELS), dtype=np.float32) * 0.35
        piezo[a_n:b_n] = tw.bias_code + np.where(connected, dyn_p + slow_p, 0.0) + hum + noise
        # cells: grams through each cell, integrated for the HX711's conversions
        grams = cell_slow[at] * (1 - frac) + cell_slow[at + 1] * frac + dyn_c
        for j in range(LEVELS):
            if len(step_t[j]):
                last = np.searchsorted(step_t[j], tb, side="right") - 1
                grams[:, j] += np.where(last >= 0, step_cum[j][np.maximum(last, 0)], 0.0)
        cum = np.vstack([running[None, :], running[None, :] + np.cumsum(grams, 0) * period])
        tg = np.arange(a_n, b_n + 1) * period
        for j in range(LEVELS):
            sel = slice(*np.searchsorted(conv_c[j], [tg[0], tg[-1]]))
            integ_at[j][sel] = np.interp(conv_c[j][sel], tg, cum[:, j])
        running = cum[-1]
    _clamp_diodes(piezo, tw)
    codes = np.clip(np.rint(piezo), 0, 1023).astype(np.uint16)

    # ---- HX711 outputs and the firmware's polls
    poll_t = rng.uniform(tw.batch * period + 2e-4, POLL_S) + np.arange(
        int(sc.duration / POLL_S) + 1) * POLL_S
    poll_t = poll_t[poll_t < sc.duration]
    valid = np.zeros(len(poll_t), np.uint8)
    values = np.zeros((len(poll_t), LEVELS), np.int64)
    stale_count = np.zeros(len(poll_t), np.int64)
    for j in range(LEVELS):
        c = conv_c[j]
        mean = np.diff(integ_at[j]) / np.diff(c)  # window (c[k-1], c[k]] for k >= 1
        y = np.full(len(c), np.nan)
        y[4:] = (mean[:-3] + 11 * mean[1:-2] + 11 * mean[2:-1] + mean[3:]) / 24
        avail = np.zeros(len(c), bool)
        avail[4:] = c[4:] < sc.duration
        for lf in sc.lifts:
            if j > lf.exposed:
                start = np.concatenate([np.full(4, -1.0), c[:-4]])
                avail &= ~((start < lf.t_close + 4e-4) & (c > lf.t_lift))
        counts = np.rint(tw.zero_counts[j] + tw.counts_per_g[j] * np.nan_to_num(y)
                         + rng.normal(0, tw.hx_noise[j], len(c)))
        counts = np.clip(counts, -(2**23), 2**23 - 1).astype(np.int64)
        last = np.searchsorted(c, poll_t, side="right") - 1
        prev = np.concatenate([[-1], last[:-1]])
        fresh = (last > prev) & (last >= 0) & avail[np.maximum(last, 0)]
        for lf in sc.lifts:  # a chip in a lifted module cannot be read at all
            if j > lf.exposed:
                fresh &= ~((poll_t >= lf.t_lift) & (poll_t < lf.t_close))
        valid |= (fresh.astype(np.uint8) << j)
        values[fresh, j] = counts[last[fresh]]
        idx = np.where(fresh, np.arange(len(poll_t)), -1)
        since = np.arange(len(poll_t)) - np.maximum.accumulate(idx)
        stale_count += since > 4
    return Rendered(codes, poll_t, valid, values, np.cumsum(stale_count))


def _clamp_diodes(piezo: np.ndarray, tw: Tower) -> None:
    """The pin's protection diodes conduct beyond the rails (+-0.45 V): the charge they
    drain leaves the input off its bias, recovering with the input's time constant."""
    hi = 1024 * (tw.vref + 0.45) / tw.vref
    lo = -1024 * 0.45 / tw.vref
    for j in range(LEVELS):
        x = piezo[:, j]
        bad = np.flatnonzero((x > hi) | (x < lo))
        if not len(bad):
            continue
        span = int(8 * tw.tau_hp()[j] * PIEZO_RATE) + 1
        decay = math.exp(-1 / (PIEZO_RATE * tw.tau_hp()[j]))
        cut = np.flatnonzero(np.diff(bad) > span)
        for first, last in zip(np.r_[bad[0], bad[cut + 1]], np.r_[bad[cut], bad[-1]],
                               strict=True):
            end = min(len(x), int(last) + span)
            seg = x[first:end].astype(float).tolist()
            off = 0.0
            for k, v0 in enumerate(seg):
                v = v0 + off
                if v > hi:
                    off -= v - hi
                    v = hi
                elif v < lo:
                    off += lo - v
                    v = lo
                seg[k] = v
                off *= decay
            x[first:end] = seg


# --------------------------------------------------------------------------- the byte stream


def encode_stream(tw: Tower, rd: Rendered, duration: float, seed: int) -> bytes:
    """HELLO, then PIEZO, LOAD and STATUS messages in the order the firmware sends them."""
    rng = np.random.default_rng([seed, 0xB007])
    t0_us = int(rng.uniform(0.3, 0.9) * 1e6) // 4 * 4  # boot after the DTR reset
    n_sets = len(rd.piezo)
    starts = np.arange(0, n_sets, tw.batch)
    sizes = np.minimum(tw.batch, n_sets - starts)
    piezo_emit = (starts + sizes) / PIEZO_RATE + 8e-5
    load_emit = rd.poll_t + 2.5e-4
    status_t = np.arange(1, int(duration + t0_us / 1e6) + 1) - t0_us / 1e6
    status_t = status_t[(status_t > 0) & (status_t < duration)]
    emit = np.concatenate([piezo_emit, load_emit, status_t])
    kind = np.concatenate([np.zeros(len(starts), int), np.ones(len(load_emit), int),
                           np.full(len(status_t), 2)])
    which = np.concatenate([np.arange(len(starts)), np.arange(len(load_emit)),
                            np.arange(len(status_t))])
    order = np.argsort(emit, kind="stable")
    seq_of = np.empty(len(order), np.int64)
    seq_of[order] = (np.arange(len(order)) + 1) & 0xFFFF

    def us(t: np.ndarray) -> np.ndarray:
        return (t0_us + (np.floor(t * 1e6).astype(np.int64) // 4) * 4) & 0xFFFFFFFF

    frames: list[tuple[np.ndarray, np.ndarray]] = []  # (message indices in ``emit``, rows)
    body = np.concatenate([[1, *tw.fw, LEVELS, LEVELS], _le(np.array([PIEZO_RATE]), 2)[0],
                           _le(np.array([80]), 2)[0], [10], list(tw.device_id)]).astype(np.uint8)
    hello = frame_rows(0x01, np.array([0]), body[None, :])
    sel_p = np.flatnonzero(kind == 0)
    for size in np.unique(sizes):
        pick = sel_p[sizes[which[sel_p]] == size]
        first = starts[which[pick]]
        sets = rd.piezo[first[:, None] + np.arange(size)[None, :]].reshape(len(pick), -1)
        samples = sets.astype("<u2").view(np.uint8).reshape(len(pick), -1)
        bodies = np.hstack([_le(us(first / PIEZO_RATE), 4),
                            np.full((len(pick), 1), size, np.uint8), samples])
        frames.append((pick, frame_rows(0x02, seq_of[pick], bodies)))
    sel_l = np.flatnonzero(kind == 1)
    vals = rd.values[which[sel_l]]
    bodies = np.hstack([_le(us(rd.poll_t[which[sel_l]]), 4), rd.valid[which[sel_l], None]]
                       + [_le(vals[:, j], 3) for j in range(LEVELS)])
    frames.append((sel_l, frame_rows(0x03, seq_of[sel_l], bodies)))
    sel_s = np.flatnonzero(kind == 2)
    if len(sel_s):
        ts = status_t[which[sel_s]]
        polls = np.searchsorted(rd.poll_t, ts) - 1
        timeouts = np.where(polls >= 0, rd.timeouts[np.maximum(polls, 0)], 0)
        bodies = np.hstack([_le(np.rint((t0_us / 1e6 + ts) * 1000).astype(np.int64), 4),
                            _le(np.zeros(len(ts)), 2), _le(np.zeros(len(ts)), 2),
                            _le(np.minimum(timeouts, 0xFFFF), 2),
                            rng.integers(34, 46, (len(ts), 1)).astype(np.uint8),
                            np.zeros((len(ts), 1), np.uint8)])
        frames.append((sel_s, frame_rows(0x04, seq_of[sel_s], bodies)))
    length = np.zeros(len(emit), np.int64)
    for idx, rows in frames:
        length[idx] = rows.shape[1]
    pos = np.zeros(len(emit), np.int64)
    pos[order] = np.cumsum(length[order]) - length[order] + hello.shape[1]
    out = np.empty(hello.shape[1] + int(length.sum()), np.uint8)
    out[:hello.shape[1]] = hello[0]
    for idx, rows in frames:
        for a in range(0, len(idx), 20000):
            out[pos[idx[a:a + 20000]][:, None] + np.arange(rows.shape[1])] = rows[a:a + 20000]
    return out.tobytes()


# --------------------------------------------------------------------------- files


def truth_of(sc: Scene) -> dict[str, Any]:
    """The ground truth in the format tools/crosscheck/score.py reads, plus the model's own."""
    lifts = sorted(sc.lifts, key=lambda lf: lf.t_lift)
    firsts = [x["t_first_impact"] for x in sc.landings] + [k["t"] for k in sc.knocks] + [
        lf.t_lift for lf in lifts] + [g.t0 for g in sc.grips]
    room = sc.room
    return {
        "format": FORMAT, "model": "crosscheck_n", "scenario": sc.scenario, "seed": sc.seed,
        "duration_s": sc.duration, "cells": sc.tower.cells,
        "landings": sc.landings, "knockdowns": sorted(sc.knockdowns, key=lambda k: k["t"]),
        "removals": sorted(sc.removals, key=lambda r: r["t"]),
        "lifts": [{"t": round(lf.t_lift, 6), "exposed": lf.exposed} for lf in lifts],
        "closes": [{"t": round(lf.t_close, 6), "exposed": lf.exposed} for lf in lifts],
        "knocks": sc.knocks,
        "grips": [{"t0": round(g.t0, 4), "t1": round(g.t1, 4), "level": g.level,
                   "grams": round(g.grams, 4), "recover_s": round(g.recover_s, 2)}
                  for g in sc.grips],
        "quiet_s": round(min(firsts, default=sc.duration), 6),
        "room": {"hum_gain": round(room.hum_gain, 3), "talk_pa": round(room.talk_pa, 4),
                 "music_pa": round(room.music_pa, 4), "rh0": round(room.rh0, 1),
                 "rh_rate_per_h": round(room.rh_rate, 2), "rh_store": round(room.rh_store, 1),
                 "temp_rate_k_per_h": round(room.temp_rate, 2),
                 "powered_s": round(room.powered_s, 1)},
        "tower": sc.tower.describe(),
    }


def render(sc: Scene) -> tuple[bytes, dict[str, Any]]:
    """Bytes and truth of a scene."""
    rd = render_signals(sc)
    return encode_stream(sc.tower, rd, sc.duration, sc.seed), truth_of(sc)


def make_recording(seed: int, scenario: str, duration_s: float, out: Path) -> tuple[Path, Path]:
    """Write ``out/{scenario}_t{seed}.bin`` and its ``.truth.json``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    data, truth = render(make_scene(seed, scenario, float(duration_s)))
    bin_path = out / f"{scenario}_t{seed}.bin"
    truth_path = out / f"{scenario}_t{seed}.truth.json"
    bin_path.write_bytes(data)
    truth_path.write_text(json.dumps(truth, indent=1))
    return bin_path, truth_path


def _job(args: tuple[int, str, float, str]) -> str:
    seed, scenario, duration, out = args
    b, _ = make_recording(seed, scenario, duration, Path(out))
    return b.name


def main(argv: list[str] | None = None) -> int:
    """Command line: write recordings and truth for a range of towers."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--towers", type=int, default=8)
    p.add_argument("--first-seed", type=int, default=1)
    p.add_argument("--duration", type=float, default=120.0)
    p.add_argument("--scenarios", nargs="+", choices=SCENARIOS, default=list(SCENARIOS))
    p.add_argument("--workers", type=int, default=2)
    args = p.parse_args(argv)
    if not 10.0 <= args.duration <= 3600.0:
        print("--duration must be between 10 and 3600 s", file=sys.stderr)
        return 2
    jobs = [(s, sc, args.duration, str(args.out))
            for s in range(args.first_seed, args.first_seed + args.towers) for sc in args.scenarios]
    args.out.mkdir(parents=True, exist_ok=True)
    if args.workers <= 1:
        names = [_job(j) for j in jobs]
    else:
        with ProcessPoolExecutor(max_workers=args.workers) as pool:
            names = list(pool.map(_job, jobs))
    print(f"wrote {len(names)} recordings to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
