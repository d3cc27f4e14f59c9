#!/usr/bin/env python3
"""Cross-check model D: recordings whose piezo channels are built from REAL piezo signals.

An independent generator of tower recordings (contracts.md sections 1-2) with
ground truth (the ``towerear-crosscheck-truth/1`` format read by
tools/crosscheck/score.py). Impact waveforms, ADC noise and crosstalk shapes are
cut at run time from the Edrumulus drum-pad recordings in
/work/shared/data/piezo-edrumulus (never copied); cubes, plates, load cells,
hands, lifts and knocks are this file's own physical model. See README.md.

Usage::

    .venv/bin/python tools/crosscheck_d/make_recordings_d.py --out DIR \
        [--towers 8] [--first-seed 1] [--duration 120] \
        [--scenarios single rapid noisy game] [--data-dir PATH]
"""

from __future__ import annotations

import argparse
import binascii
import json
import math
import struct
import sys
import time
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
from scipy.io import wavfile
from scipy.signal import butter, lfilter, resample_poly, sosfilt

DATA_DIR = Path("/work/shared/data/piezo-edrumulus")
FORMAT = "towerear-crosscheck-truth/1"
SCENARIOS = ("single", "rapid", "noisy", "game")
N_LEVELS = 8
ADC_BITS = 10
MID = 1 << (ADC_BITS - 1)
U32 = 1 << 32
G = 9.81  # m/s^2
LEVEL_H = 0.044  # m, height of one module (tower ~35 cm / 8)
SRC_RATE = 8000  # Hz, the Edrumulus files
LOAD_GRID_HZ = 1000  # fine time grid on which the plate forces are integrated
GRID_T0 = -1.0  # s, the grid starts before stream time 0 (first HX711 window)

T_HELLO, T_PIEZO, T_LOAD, T_STATUS, T_ACK = 0x01, 0x02, 0x03, 0x04, 0x05
T_GET_INFO = 0x81


class DataDirError(RuntimeError):
    """The real piezo recordings are missing or unreadable."""


# --------------------------------------------------------------------------- wire

def crc16_ccitt_false(data: bytes) -> int:
    """CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, not reflected, xorout 0)."""
    return binascii.crc_hqx(data, 0xFFFF)


def crc16_ccitt_false_reference(data: bytes) -> int:
    """Bitwise reference implementation of the same CRC (for the tests)."""
    crc = 0xFFFF
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


def cobs_encode(data: bytes) -> bytes:
    """COBS-encode ``data`` (no trailing delimiter)."""
    out = bytearray()
    for chunk in data.split(b"\x00"):
        while len(chunk) >= 254:
            out.append(0xFF)
            out += chunk[:254]
            chunk = chunk[254:]
        out.append(len(chunk) + 1)
        out += chunk
    return bytes(out)


def cobs_decode(enc: bytes) -> bytes:
    """Decode one COBS block (without delimiter); ValueError when malformed."""
    out = bytearray()
    i = 0
    while i < len(enc):
        code = enc[i]
        if code == 0 or i + code > len(enc):
            raise ValueError("bad COBS")
        out += enc[i + 1:i + code]
        i += code
        if code < 0xFF and i < len(enc):
            out.append(0)
    return bytes(out)


def frame(mtype: int, seq: int, body: bytes) -> bytes:
    """One message, CRC appended, COBS-framed and 0x00-terminated."""
    msg = struct.pack("<BH", mtype, seq & 0xFFFF) + body
    msg += struct.pack("<H", crc16_ccitt_false(msg))
    assert len(msg) <= 254
    return cobs_encode(msg) + b"\x00"


def s24_bytes(values: np.ndarray) -> bytes:
    """Little-endian signed 24-bit two's complement of an int array."""
    v = (values.astype(np.int64) & 0xFFFFFF).astype("<u4")
    return v.view(np.uint8).reshape(-1, 4)[:, :3].tobytes()


# --------------------------------------------------------------- real material

@dataclass
class RealBank:
    """Material cut from the real recordings, at 8 kHz, unit peak / unit rms."""

    hits: list[np.ndarray]  # impact waveforms (pre-roll + onset + tail), unit peak
    leaks: list[np.ndarray]  # the second pad's waveform while the first is hit, unit peak
    leak_ratio: float  # median leak peak / primary peak of unclipped real hits
    noise: np.ndarray  # ADC noise floor, zero mean, unit rms


def _read_wav(path: Path) -> np.ndarray:
    if not path.is_file():
        raise DataDirError(f"real piezo recording missing: {path} (model D needs the "
                           f"Edrumulus files in {path.parent})")
    try:
        rate, x = wavfile.read(path)
    except (OSError, ValueError) as exc:
        raise DataDirError(f"cannot read {path}: {exc}") from None
    if rate != SRC_RATE:
        raise DataDirError(f"{path.name}: expected {SRC_RATE} Hz, found {rate}")
    return x.astype(np.float64)


def find_onsets(x: np.ndarray, k_noise: float = 10.0, floor: float = 150.0,
                gap: int = 400) -> list[int]:
    """Onsets: first sample above max(k * robust noise, floor) after ``gap`` quiet samples."""
    noise = 1.4826 * float(np.median(np.abs(x - np.median(x))))
    thr = max(k_noise * noise, floor)
    onsets: list[int] = []
    last = -10 ** 9
    for i in np.flatnonzero(np.abs(x) > thr):
        if i - last > gap:
            onsets.append(int(i))
        last = int(i)
    return onsets


def _cut(x: np.ndarray, i0: int, pre: int, n: int, fade: int) -> np.ndarray:
    seg = x[max(0, i0 - pre):i0 + n].copy()
    seg -= np.median(x[max(0, i0 - 200):max(1, i0 - pre)]) if i0 > pre else 0.0
    f = min(fade, len(seg) // 2)
    seg[-f:] *= np.cos(np.linspace(0, np.pi / 2, f)) ** 2
    return seg


@cache
def load_bank(data_dir: Path = DATA_DIR) -> RealBank:
    """Cut hits, leaks and noise out of the real recordings (cached per process)."""
    if not data_dir.is_dir():
        raise DataDirError(f"real piezo data directory not found: {data_dir}")
    pre, full, fade = 16, 1200, 80  # 2 ms pre-roll, up to 150 ms, 10 ms fade-out
    hits: list[np.ndarray] = []
    for name in ("pd120_single_hits.wav", "pd120_roll.wav"):
        x = _read_wav(data_dir / name)
        x = x[:, 0] if x.ndim > 1 else x
        on = find_onsets(x, floor=200.0)
        for j, i0 in enumerate(on):
            nxt = on[j + 1] if j + 1 < len(on) else len(x)
            n = min(full, nxt - i0 - pre)
            if n < 160:  # shorter than 20 ms: a retrigger, not usable on its own
                continue
            seg = _cut(x, i0, pre, n, fade)
            peak = float(np.max(np.abs(seg)))
            if peak < 200 or peak >= 32000:  # too weak against the pad's noise, or clipped
                continue
            hits.append(seg / peak)
    xt = _read_wav(data_dir / "crosstalk_vh12_pd8.wav")
    leaks: list[np.ndarray] = []
    ratios: list[float] = []
    for c in (0, 1):
        prim, sec = xt[:, c], xt[:, 1 - c]
        for i0 in find_onsets(prim, floor=300.0, gap=800):
            p = float(np.max(np.abs(prim[i0:i0 + full])))
            s = _cut(sec, i0, pre, full, fade)
            sp = float(np.max(np.abs(s)))
            if p < 32000 and p > 3000:
                ratios.append(sp / p)
            if sp >= 60:  # leak well above the second pad's noise (~5)
                leaks.append(s / sp)
    noise_raw = _read_wav(data_dir / "teensy4_0_noise_test.wav")
    noise_raw = noise_raw[:, 0] if noise_raw.ndim > 1 else noise_raw
    # keep the stationary part (the file holds a few seconds of handling around 2-4 s):
    # 1 s blocks whose rms is near the typical rms, then clip single glitches
    blocks = noise_raw[:len(noise_raw) // SRC_RATE * SRC_RATE].reshape(-1, SRC_RATE)
    blocks = blocks - np.median(blocks, axis=1, keepdims=True)
    rms = blocks.std(axis=1)
    noise_raw = blocks[rms < 1.5 * np.median(rms)].ravel()
    sigma = 1.4826 * float(np.median(np.abs(noise_raw)))
    noise_raw = np.clip(noise_raw, -6 * sigma, 6 * sigma)
    noise_raw -= noise_raw.mean()
    if len(hits) < 10 or len(leaks) < 4 or not ratios:
        raise DataDirError(f"{data_dir}: too few usable hits ({len(hits)}) or leaks "
                           f"({len(leaks)}) in the real recordings")
    return RealBank(hits, leaks, float(np.median(ratios)), noise_raw / noise_raw.std())


def _resample(x: np.ndarray, rate: int) -> np.ndarray:
    g = math.gcd(rate, SRC_RATE)
    return resample_poly(x, rate // g, SRC_RATE // g)


@dataclass
class RateBank:
    """The real material resampled to one tower's piezo rate."""

    rate: int
    hits: list[np.ndarray]
    leaks: list[np.ndarray]
    noise: np.ndarray
    pre: int  # pre-roll samples at this rate
    leak_ratio: float


@cache
def bank_at(rate: int, data_dir: Path = DATA_DIR) -> RateBank:
    """Resampled, renormalised copies of :func:`load_bank` for ``rate`` sets/s."""
    b = load_bank(data_dir)

    def unit(w: np.ndarray) -> np.ndarray:
        r = _resample(w, rate)
        return r / max(float(np.max(np.abs(r))), 1e-9)

    noise = _resample(b.noise, rate)
    noise /= noise.std()
    noise = np.clip(noise, -5.0, 5.0)  # the decimated file keeps rare glitch clusters
    return RateBank(rate, [unit(w) for w in b.hits], [unit(w) for w in b.leaks],
                    noise / noise.std(), round(16 * rate / SRC_RATE), b.leak_ratio)


# ---------------------------------------------------------------------- tower

@dataclass
class Tower:
    """Everything fixed for one physical kit (one seed)."""

    seed: int
    piezo_rate: int
    load_rate_nominal: int
    hx_rate_err: float  # HX711 on-chip oscillator off nominal (fraction)
    clock_ppm: float  # device crystal vs wall clock (truth is in device time)
    frames_fixed: int  # sets per PIEZO frame, 0 = varying
    frames_lo: int
    frames_hi: int
    cells: str  # "matched" or "mixed"
    counts_per_g: np.ndarray
    cell_sign: np.ndarray
    cell_offset: np.ndarray
    cell_noise_g: np.ndarray  # rms per reading, grams
    creep_frac: np.ndarray
    creep_tau: np.ndarray
    drift_g: np.ndarray  # drift amplitude over the recording, grams
    drift_period: np.ndarray
    read_latency_us: float
    piezo_sens: np.ndarray  # per level
    piezo_tau: np.ndarray  # s, cardboard decay time constant per level
    noise_rms: np.ndarray  # ADC codes
    noise_offset: np.ndarray  # start index into the real noise per channel
    bias: np.ndarray  # codes off mid-scale
    hp_hz: float  # AC coupling corner
    leak_gain: float  # neighbour coupling (peak ratio at distance 1)
    leak_falloff: float  # extra factor per further level
    mux_carry: float  # ADC sample-and-hold carry-over from channel k-1 into k
    p_pass: np.ndarray  # probability a cube falls through level L's hole
    cube_mass_g: float  # the set's mean cube mass
    p_knock: float  # per resting cube hit, probability it is knocked down
    restitution: tuple[float, float]
    hum_hz: float
    device_id: bytes
    fw: tuple[int, int, int]

    @classmethod
    def from_seed(cls, seed: int) -> Tower:
        r = np.random.default_rng([seed, 0xD])
        piezo_rate = int(r.choice([1000, 2000, 3000, 4000], p=[0.15, 0.55, 0.15, 0.15]))
        load_rate = 10 if r.random() < 0.4 else 80
        # Frames: a fixed size, or whatever the ring buffer holds when the UART is free.
        # At 1 Mbaud the link carries ~100 kB/s: small frames only at low rates.
        min_n = {1000: 1, 2000: 2, 3000: 3, 4000: 4}[piezo_rate]
        if r.random() < 0.5:
            fixed, lo, hi = int(r.integers(min_n, 15)), 0, 0
        else:
            fixed, lo = 0, int(r.integers(1, min_n + 1))
            hi = int(r.integers(max(lo + 4, 8), 15))
        matched = r.random() < 0.5
        if matched:
            cpg = np.full(N_LEVELS, r.uniform(9000, 22000)) * r.normal(1, 0.03, N_LEVELS)
            sign = np.full(N_LEVELS, -1.0 if r.random() < 0.25 else 1.0)
        else:
            cpg = r.uniform(6000, 28000, N_LEVELS)
            sign = np.where(r.random(N_LEVELS) < 0.3, -1.0, 1.0)
        noise_g = r.uniform(0.002, 0.012, N_LEVELS) * (1.0 if load_rate == 10 else 2.0)
        sens = r.uniform(0.75, 1.25) * r.uniform(0.7, 1.3, N_LEVELS)
        p_pass = np.concatenate([[0.0], [r.uniform(0.2, 0.45)],
                                 r.uniform(0.5, 0.75, N_LEVELS - 3), [r.uniform(0.6, 0.85)]])
        return cls(
            seed=seed, piezo_rate=piezo_rate, load_rate_nominal=load_rate,
            hx_rate_err=float(r.uniform(-0.025, 0.025)), clock_ppm=float(r.uniform(-400, 400)),
            frames_fixed=fixed, frames_lo=lo, frames_hi=hi,
            cells="matched" if matched else "mixed",
            counts_per_g=cpg, cell_sign=sign,
            cell_offset=r.uniform(2e5, 3e6, N_LEVELS) * np.where(r.random(N_LEVELS) < 0.5, -1, 1),
            cell_noise_g=noise_g, creep_frac=r.uniform(0.002, 0.012, N_LEVELS),
            creep_tau=r.uniform(20, 90, N_LEVELS), drift_g=r.uniform(0.005, 0.05, N_LEVELS),
            drift_period=r.uniform(200, 900, N_LEVELS),
            read_latency_us=float(r.uniform(60, 250)),
            piezo_sens=sens, piezo_tau=r.uniform(0.015, 0.05, N_LEVELS),
            noise_rms=r.uniform(0.6, 2.0, N_LEVELS),
            noise_offset=r.integers(0, 10 ** 6, N_LEVELS),
            bias=r.uniform(-5, 5, N_LEVELS), hp_hz=float(r.uniform(3, 15)),
            leak_gain=float(r.uniform(0.08, 0.3)), leak_falloff=float(r.uniform(0.25, 0.5)),
            mux_carry=float(r.uniform(0.0, 0.015)), p_pass=p_pass,
            cube_mass_g=float(r.uniform(0.3, 0.8)), p_knock=float(r.uniform(0.05, 0.12)),
            restitution=(float(r.uniform(0.2, 0.3)), float(r.uniform(0.35, 0.5))),
            hum_hz=50.0 if r.random() < 0.7 else 60.0,
            device_id=r.integers(0, 256, 8).astype(np.uint8).tobytes(),
            fw=(1, int(r.integers(0, 4)), int(r.integers(0, 10))),
        )

    @property
    def load_rate_true(self) -> float:
        return self.load_rate_nominal * (1 + self.hx_rate_err)


# ---------------------------------------------------------------------- world

@dataclass
class Impact:
    t: float
    level: int
    amp: float  # peak, ADC codes, on the struck level
    kind: str  # land, bounce, graze, strike, knock, handling
    leak: bool = True  # crosstalk into the other levels


@dataclass
class Burst:
    """Band-limited noise (rolling cube, fingers, talking, rustle)."""

    t: float
    dur: float
    level: int  # -1: all levels
    rms: float
    band: tuple[float, float]


@dataclass
class Cube:
    cid: int
    mass: float


@dataclass
class World:
    """The events of one recording, in stream (device) seconds, and its truth."""

    tower: Tower
    rng: np.random.Generator
    impacts: list[Impact] = field(default_factory=list)
    bursts: list[Burst] = field(default_factory=list)
    steps: list[tuple[float, int, float]] = field(default_factory=list)  # t, level, grams
    impulses: list[tuple[float, int, float]] = field(default_factory=list)  # gram-seconds
    presses: list[tuple[float, float, int, float]] = field(default_factory=list)  # t0,dur,lv,g
    shakes: list[tuple[float, int, float, float]] = field(default_factory=list)  # t,lv,g,Hz
    glitches: list[tuple[float, int, float]] = field(default_factory=list)  # contact bounce
    disconnected: list[tuple[int, float, float]] = field(default_factory=list)
    hum: float = 0.0
    resting: list[list[Cube]] = field(default_factory=lambda: [[] for _ in range(N_LEVELS)])
    next_cid: int = 0
    n_throws: int = 0
    landings: list[dict[str, Any]] = field(default_factory=list)
    knockdowns: list[dict[str, Any]] = field(default_factory=list)
    removals: list[dict[str, Any]] = field(default_factory=list)
    lifts: list[dict[str, Any]] = field(default_factory=list)
    closes: list[dict[str, Any]] = field(default_factory=list)
    knocks: list[dict[str, Any]] = field(default_factory=list)
    press_truth: list[dict[str, Any]] = field(default_factory=list)
    busy_until: float = 0.0  # the last cube of the last throw is at rest

    def new_cube(self) -> Cube:
        self.next_cid += 1
        m = self.tower.cube_mass_g * float(self.rng.normal(1.0, 0.06))
        return Cube(self.next_cid, float(np.clip(m, 0.25, 0.9)))

    # -- a throw -------------------------------------------------------------
    def throw(self, t0: float, n_cubes: int = 1, cubes: list[Cube] | None = None) -> float:
        """Drop ``n_cubes`` (or the given cubes) into the top; returns when all rest."""
        r = self.rng
        self.n_throws += 1
        group = cubes if cubes is not None else [self.new_cube() for _ in range(n_cubes)]
        t_end = t0
        for i, cube in enumerate(group):
            t_in = t0 + (0.0 if i == 0 else float(r.uniform(0.005, 0.12)))
            v_in = float(r.uniform(0.6, 1.2))  # released a few cm above the top
            t_end = max(t_end, self._fall(cube, 7, t_in, v_in, thrown=True,
                                          throw_id=self.n_throws, group=len(group)))
        self.busy_until = max(self.busy_until, t_end)
        return t_end

    def _fall(self, cube: Cube, level: int, t: float, v_in: float, *, thrown: bool,
              throw_id: int, group: int, target: int | None = None) -> float:
        """Cube falls onto ``level`` from the hole above at speed ``v_in``; returns t at rest.

        A thrown cube passes each level's hole with the tower's probability; a
        knocked-down cube (``target`` set) falls through to ``target``.
        """
        r, tw = self.rng, self.tower
        t_first: float | None = None
        caused = False
        while True:
            # fall one module: h = v t + g t^2 / 2
            dt = (-v_in + math.sqrt(v_in ** 2 + 2 * G * LEVEL_H)) / G
            t += dt
            v = v_in + G * dt
            amp0 = 230.0 * tw.piezo_sens[level] * (v / 1.1) * math.sqrt(cube.mass / 0.55)
            amp0 *= float(r.lognormal(0.0, 0.25))
            if t_first is None:
                t_first = t
            passes = level > target if target is not None else (
                level > 0 and r.random() < tw.p_pass[level])
            u = float(r.random())
            hits_plate = not passes or u >= 0.8  # lands here, or strikes the plate
            # a resting cube struck here may be knocked down a level or two
            if thrown and hits_plate and not caused and level >= 1 and self.resting[level] \
                    and r.random() < tw.p_knock:
                caused = True
                victim = self.resting[level].pop(int(r.integers(len(self.resting[level]))))
                self.steps.append((t + 0.01, level, -victim.mass))
                drop = 2 if (level >= 2 and r.random() < 0.3) else 1
                t_k = self._fall(victim, level - 1, t + float(r.uniform(0.02, 0.08)),
                                 float(r.uniform(0.1, 0.4)), thrown=False, throw_id=0,
                                 group=1, target=level - drop)
                self.knockdowns.append({"t": round(t_k, 4), "t_hit": round(t, 4),
                                        "from_floor": level, "to_floor": level - drop,
                                        "by_throw": throw_id})
            if passes:
                if u < 0.35:  # clean pass through the hole
                    v_in = v * float(r.uniform(0.85, 0.98))
                elif u < 0.8:  # grazes the hole's edge
                    a = amp0 * float(r.uniform(0.08, 0.35))
                    self.impacts.append(Impact(t, level, a, "graze"))
                    self.impulses.append((t, level, cube.mass * v * 0.3 / G))
                    v_in = v * float(r.uniform(0.5, 0.85))
                else:  # strikes the plate, tumbles into the hole
                    a = amp0 * float(r.uniform(0.45, 0.9))
                    self.impacts.append(Impact(t, level, a, "strike"))
                    self.impulses.append((t, level, cube.mass * v * 1.3 / G))
                    t += float(r.uniform(0.04, 0.18))
                    v_in = float(r.uniform(0.05, 0.3))
                level -= 1
                continue
            # lands here: first impact, 1-4 bounces with decreasing intervals, a short roll
            e = float(r.uniform(*tw.restitution))
            self.impacts.append(Impact(t, level, amp0, "land"))
            self.impulses.append((t, level, cube.mass * v * (1 + e) / G))
            self.steps.append((t, level, cube.mass))
            n_b = int(r.choice([1, 2, 3, 4], p=[0.3, 0.35, 0.2, 0.15]))
            vb, ab, t_last = v * e, amp0, t
            for _ in range(n_b):
                t_last += 2 * vb / G
                ab *= e * float(r.uniform(1.2, 1.8))  # amplitude falls a bit slower than v
                self.impacts.append(Impact(t_last, level, ab, "bounce"))
                self.impulses.append((t_last, level, cube.mass * vb * (1 + e) / G))
                vb *= e
            roll = float(r.uniform(0.03, 0.25)) if r.random() < 0.5 else float(r.uniform(0, 0.03))
            if roll > 0.02:
                self.bursts.append(Burst(t_last, roll, level, ab * 0.08 + 0.5, (60.0, 600.0)))
            t_rest = t_last + roll
            self.resting[level].append(cube)
            self.landings.append({
                "t": round(t_rest, 4), "floor": level, "cubes": 1, "knocked": not thrown,
                "t_first_impact": round(t_first, 4), "caused_knockdown": caused,
                "throw": throw_id, "group_size": group, "mass_g": round(cube.mass, 3),
                "bounces": n_b,
            })
            return t_rest

    # -- hands, lifts, knocks ---------------------------------------------------
    def knock(self, t: float) -> None:
        """A thump on the table: every piezo, a spike on every cell, no lasting step."""
        r = self.rng
        a = float(r.uniform(60, 260))
        for lv in range(N_LEVELS):
            fac = 1.0 - 0.05 * lv  # transmitted through the base: lower levels a bit more
            self.impacts.append(Impact(t + lv * 0.0004, lv, a * fac * float(r.uniform(0.8, 1.2)),
                                       "knock", leak=False))
            self.shakes.append((t, lv, float(r.uniform(2, 15)), float(r.uniform(15, 45))))
        self.knocks.append({"t": round(t, 4)})

    def press(self, t: float, dur: float, grams: float) -> None:
        """A hand resting on / pressing the tower: slow force on every plate, rustle."""
        for lv in range(N_LEVELS):
            self.presses.append((t, dur, lv, grams * (0.3 + 0.1 * lv) / 1.0))
        self.bursts.append(Burst(t, dur, -1, float(self.rng.uniform(1.0, 4.0)), (20.0, 300.0)))
        self.press_truth.append({"t": round(t, 4), "dur": round(dur, 3)})

    def handling(self, t: float, dur: float) -> None:
        """Hands on the modules: rustle everywhere, a few soft bumps, some force."""
        r = self.rng
        self.bursts.append(Burst(t, dur, -1, float(r.uniform(1.5, 5.0)), (20.0, 400.0)))
        for _ in range(int(r.integers(1, 4))):
            tb = t + float(r.uniform(0, dur))
            lv = int(r.integers(0, N_LEVELS))
            self.impacts.append(Impact(tb, lv, float(r.uniform(15, 60)), "handling"))
        for lv in range(N_LEVELS):
            self.presses.append((t, dur, lv, float(r.uniform(0.5, 6.0))))

    def lift(self, t_lift: float, k: int, look_s: float) -> tuple[float, list[Cube]]:
        """Lift modules k..7, remove cubes from level k by hand, close.

        Returns the close time and the cubes taken out (in hand, to be thrown back).
        """
        r = self.rng
        pre = float(r.uniform(0.3, 0.9))
        self.handling(t_lift - pre, pre + 0.3)
        self.lifts.append({"t": round(t_lift, 4), "exposed": k})
        for lv in range(k + 1, N_LEVELS):
            self.glitches.append((t_lift + float(r.uniform(0, 0.01)), lv,
                                  float(r.uniform(20, 120))))
        t = t_lift + float(r.uniform(1.0, 2.5))
        cubes = self.resting[k]
        taken: list[Cube] = []
        if cubes:
            n_grabs = 1 if (len(cubes) == 1 or r.random() < 0.7) else 2
            split = [len(cubes)] if n_grabs == 1 else [1, len(cubes) - 1]
            for n in split:
                dur = float(r.uniform(0.4, 1.1))
                self.presses.append((t, dur, k, float(r.uniform(3, 25))))
                self.impacts.append(Impact(t + 0.02, k, float(r.uniform(15, 60)), "handling"))
                self.bursts.append(Burst(t, dur, k, float(r.uniform(2, 8)), (40.0, 600.0)))
                t_rm = t + dur * float(r.uniform(0.55, 0.85))
                grab = [cubes.pop() for _ in range(n)]
                for c in grab:
                    self.steps.append((t_rm, k, -c.mass))
                taken += grab
                self.removals.append({"t": round(t_rm, 4), "floor": k, "cubes": n})
                t += dur + float(r.uniform(2.5, 4.0))
        t_close = max(t, t_lift + look_s)
        self.handling(t_close - 0.5, 0.9)
        for lv in range(k + 1, N_LEVELS):
            self.disconnected.append((lv, t_lift, t_close))
            self.glitches.append((t_close + float(r.uniform(0, 0.01)), lv,
                                  float(r.uniform(20, 120))))
            self.steps.append((t_close, lv, float(r.normal(0, 0.01))))  # plate re-seats
        for lv in range(0, k + 1):
            self.impacts.append(Impact(t_close, lv, float(r.uniform(20, 90)), "handling",
                                       leak=False))
        self.closes.append({"t": round(t_close, 4)})
        return t_close, taken

    def connected(self, level: int, t: float) -> bool:
        return not any(lv == level and a <= t < b for lv, a, b in self.disconnected)


# ------------------------------------------------------------------- scenarios

def _throw_group_size(r: np.random.Generator) -> int:
    u = r.random()
    return 1 if u < 0.86 else (2 if u < 0.97 else 3)


def build_world(tower: Tower, scenario: str, duration: float, seed: int) -> World:
    """Script one recording's events."""
    r = np.random.default_rng([seed, 0xD, SCENARIOS.index(scenario)])
    w = World(tower, r)
    quiet = float(r.uniform(4.0, 7.0))
    end = duration - 2.0
    t = quiet + float(r.uniform(0.2, 1.5))
    if scenario in ("single", "noisy"):
        while True:
            if t + 1.5 > end:
                break
            t_rest = w.throw(t, _throw_group_size(r))
            if t_rest > end:
                _drop_after(w, end)
                break
            t = max(t + float(r.uniform(3.0, 8.0)), t_rest + 1.0)
    elif scenario == "rapid":
        while t + 6 < end:
            for _ in range(int(r.integers(2, 7))):
                if t + 1.5 > end:
                    break
                w.throw(t, _throw_group_size(r) if r.random() < 0.5 else 1)
                t += float(r.uniform(0.3, 0.8))
            t = max(t, w.busy_until) + float(r.uniform(3.0, 8.0))
        _drop_after(w, end)
    elif scenario == "game":
        _game(w, t, end)
        _drop_after(w, end)
    if scenario == "noisy":
        w.hum = float(r.uniform(0.8, 3.5))
        tk = quiet + float(r.uniform(3, 10))
        while tk < end:
            if all(abs(tk - x["t"]) > 1.0 and abs(tk - x["t_first_impact"]) > 1.0
                   for x in w.landings):
                if r.random() < 0.75:
                    w.knock(tk)
                else:
                    w.press(tk, float(r.uniform(0.4, 1.5)), float(r.uniform(2, 15)))
                tk += float(r.uniform(8, 20))
            else:
                tk += 0.5
        tt = quiet + float(r.uniform(0, 5))
        while tt < end:  # people talking at the table
            dur = float(r.uniform(1.5, 6.0))
            for s in np.arange(tt, min(tt + dur, end), 0.22):  # syllables
                w.bursts.append(Burst(float(s + r.uniform(0, 0.05)), float(r.uniform(0.08, 0.2)),
                                      -1, float(r.uniform(0.5, 3.0)), (120.0, 900.0)))
            tt += dur + float(r.uniform(2, 12))
    return w


def _drop_after(w: World, end: float) -> None:
    """Forget throws that would not come to rest before the recording ends."""
    late = {x["throw"] for x in w.landings if x["t"] > end}
    late |= {k["by_throw"] for k in w.knockdowns if k["t"] > end}
    if not late:
        return
    t_cut = min(x["t_first_impact"] for x in w.landings if x["throw"] in late) - 0.3
    w.landings = [x for x in w.landings if x["t_first_impact"] < t_cut]
    w.knockdowns = [k for k in w.knockdowns if k["t_hit"] < t_cut]
    w.impacts = [i for i in w.impacts if i.t < t_cut]
    w.bursts = [b for b in w.bursts if b.t < t_cut]
    w.steps = [s for s in w.steps if s[0] < t_cut]
    w.impulses = [s for s in w.impulses if s[0] < t_cut]


def _game(w: World, t: float, end: float) -> None:
    """Prologue throws, then inspections: lift, look, remove by hand, close, throw back."""
    r = w.rng
    n_players = int(r.integers(3, 6))
    for _ in range(2 + 2 * n_players):
        if t + 3 > end:
            return
        t = max(w.throw(t) + 1.0, t + float(r.uniform(2.5, 6.0)))
    while t + 20 < end:  # a whole inspection fits before the end
        occupied = [k for k in range(N_LEVELS) if w.resting[k]]
        if occupied and r.random() < 0.85:
            k = int(r.choice(occupied))
        else:
            k = int(r.integers(0, N_LEVELS))
        t_close, back = w.lift(t + float(r.uniform(0.8, 2.0)), k, float(r.uniform(3.0, 7.0)))
        t = t_close + float(r.uniform(2.0, 4.0))
        back = [back[int(i)] for i in r.permutation(len(back))]
        n_back = len(back) if r.random() < 0.6 else max(0, len(back) - int(r.integers(1, 3)))
        extra = 1 if r.random() < 0.25 else 0  # a penalty clue from the supply
        for c in back[:n_back] + [w.new_cube() for _ in range(extra)]:
            if t + 3 > end:
                return
            t = max(w.throw(t, cubes=[c]) + 1.0, t + float(r.uniform(2.5, 5.0)))
        if r.random() < 0.3 and t + 5 < end:
            w.knock(t + float(r.uniform(0.5, 1.5)))
            t += 3.0
        t += float(r.uniform(1.0, 4.0))


# -------------------------------------------------------------------- rendering

def _fill(dst: np.ndarray, i0: int, src: np.ndarray) -> None:
    n = len(dst)
    a, b = max(i0, 0), min(i0 + len(src), n)
    if a < b:
        dst[a:b] += src[a - i0:b - i0]


def render_piezo(w: World, n_sets: int, bank: RateBank,
                 r: np.random.Generator) -> np.ndarray:
    """(n_sets, 8) uint16 ADC codes."""
    tw = w.tower
    rate = bank.rate
    mech = np.zeros((N_LEVELS, n_sets))
    tt = np.arange(max(len(h) for h in bank.hits + bank.leaks)) / rate
    decay = [np.exp(-np.maximum(tt - bank.pre / rate, 0) / tw.piezo_tau[lv])
             for lv in range(N_LEVELS)]
    for imp in w.impacts:
        i0 = round(imp.t * rate) - bank.pre
        h = bank.hits[int(r.integers(len(bank.hits)))]
        sign = 1.0 if r.random() < 0.5 else -1.0  # polarity of the disc's mounting/impact
        _fill(mech[imp.level], i0, sign * imp.amp * h * decay[imp.level][:len(h)])
        if not imp.leak:
            continue
        for lv in range(N_LEVELS):
            d = abs(lv - imp.level)
            if d == 0:
                continue
            a = imp.amp * tw.leak_gain * tw.leak_falloff ** (d - 1)
            if a < 0.3:
                continue
            lk = bank.leaks[int(r.integers(len(bank.leaks)))]
            _fill(mech[lv], i0 + d * int(r.integers(0, 2)),
                  sign * a * lk * decay[lv][:len(lk)])
    for b in w.bursts:
        n = max(4, round(b.dur * rate))
        lo, hi = b.band[0], min(b.band[1], 0.45 * rate)
        sos = butter(2, [lo, hi], btype="bandpass", fs=rate, output="sos")
        env = np.sin(np.linspace(0, np.pi, n)) ** 2
        levels = range(N_LEVELS) if b.level < 0 else [b.level]
        for lv in levels:
            x = sosfilt(sos, r.standard_normal(n + 64))[64:]
            x *= b.rms / max(float(x.std()), 1e-9) * env
            _fill(mech[lv], round(b.t * rate), x)
    for t0, dur, lv, g in w.presses:  # slow force seen through the AC coupling
        n = max(4, round(dur * rate))
        f = np.sin(np.linspace(0, np.pi, n)) ** 2 * g * 0.8  # ~0.8 code per gram-force
        _fill(mech[lv], round(t0 * rate), f)
    if w.hum > 0:
        t = np.arange(n_sets) / rate
        for lv in range(N_LEVELS):
            ph = float(r.uniform(0, 2 * np.pi))
            a = w.hum * float(r.uniform(0.6, 1.2))
            mech[lv] += a * np.sin(2 * np.pi * tw.hum_hz * t + ph)
            if 3 * tw.hum_hz < 0.45 * rate:
                mech[lv] += 0.3 * a * np.sin(2 * np.pi * 3 * tw.hum_hz * t + 2 * ph)
    bb, aa = butter(1, tw.hp_hz, btype="highpass", fs=rate)
    mech = lfilter(bb, aa, mech, axis=1)
    # A disconnected channel (module lifted) reads the base's bias network: noise only.
    for lv, a, b2 in w.disconnected:
        mech[lv, max(0, round(a * rate)):round(b2 * rate)] = 0.0
    for t0, lv, amp in w.glitches:  # spring contacts breaking / making
        n = max(3, round(0.005 * rate))
        _fill(mech[lv], round(t0 * rate), amp * np.exp(-np.arange(n) / (n / 3))
              * (1 if r.random() < 0.5 else -1))
    noise = bank.noise
    out = np.empty((N_LEVELS, n_sets))
    for lv in range(N_LEVELS):
        idx = (int(tw.noise_offset[lv]) + np.arange(n_sets)) % len(noise)
        out[lv] = mech[lv] + tw.noise_rms[lv] * noise[idx] + tw.bias[lv]
    out[1:] += tw.mux_carry * out[:-1]
    return np.clip(np.rint(out + MID), 0, (1 << ADC_BITS) - 1).astype("<u2").T.copy()


def reading_times(tower: Tower, duration: float, rng: np.random.Generator) -> np.ndarray:
    """Stream times at which the HX711s' readings are fetched."""
    period = 1.0 / tower.load_rate_true
    t0 = float(rng.uniform(0.005, period))
    n = int((duration - t0) / period) + 1
    t = t0 + period * np.arange(n) + rng.normal(0, 20e-6, n)
    return t[t <= duration]


def render_load(w: World, t_read: np.ndarray, duration: float,
                rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Counts (n, 8) int and valid (n, 8) bool at the reading times."""
    tw = w.tower
    n_grid = int((duration - GRID_T0 + 1) * LOAD_GRID_HZ)
    grams = np.zeros((N_LEVELS, n_grid))

    def gi(t: float) -> int:
        return min(n_grid - 1, max(0, round((t - GRID_T0) * LOAD_GRID_HZ)))

    steps = np.zeros((N_LEVELS, n_grid))
    for t, lv, g in w.steps:
        steps[lv, gi(t)] += g
    grams += np.cumsum(steps, axis=1)
    for t, lv, gs in w.impulses:
        grams[lv, gi(t)] += gs * LOAD_GRID_HZ
    for t0, dur, lv, g in w.presses:
        n = max(2, round(dur * LOAD_GRID_HZ))
        i = gi(t0)
        seg = np.sin(np.linspace(0, np.pi, n)) ** 2 * g
        m = min(n, n_grid - i)
        grams[lv, i:i + m] += seg[:m]
    for t0, lv, g, hz in w.shakes:  # the plate rings after a table knock
        n = round(0.15 * LOAD_GRID_HZ)
        k = np.arange(n) / LOAD_GRID_HZ
        seg = g * np.sin(2 * np.pi * hz * k) * np.exp(-k / 0.04)
        i = gi(t0)
        m = min(n, n_grid - i)
        grams[lv, i:i + m] += seg[:m]
    csum = np.concatenate([np.zeros((N_LEVELS, 1)), np.cumsum(grams, axis=1)], axis=1)
    period = 1.0 / tw.load_rate_true
    i1 = np.clip(np.rint((t_read - GRID_T0) * LOAD_GRID_HZ).astype(int), 1, n_grid)
    i0 = np.clip(np.rint((t_read - period - GRID_T0) * LOAD_GRID_HZ).astype(int), 0, n_grid - 1)
    avg = (csum[:, i1] - csum[:, i0]) / np.maximum(i1 - i0, 1)
    # creep after each lasting load change, slow temperature drift
    creep = np.zeros_like(avg)
    for t, lv, g in w.steps:
        after = t_read > t
        creep[lv, after] += g * tw.creep_frac[lv] * (
            1 - np.exp(-(t_read[after] - t) / tw.creep_tau[lv]))
    drift = tw.drift_g[:, None] * np.sin(
        2 * np.pi * t_read[None, :] / tw.drift_period[:, None]
        + rng.uniform(0, 2 * np.pi, (N_LEVELS, 1)))
    g_tot = avg + creep + drift + tw.cell_noise_g[:, None] * rng.standard_normal(avg.shape)
    counts = tw.cell_offset[:, None] + tw.cell_sign[:, None] * tw.counts_per_g[:, None] * g_tot
    counts = np.clip(np.rint(counts), -(1 << 23), (1 << 23) - 1).astype(np.int64).T
    valid = np.ones_like(counts, dtype=bool)
    for lv, a, b in w.disconnected:
        # invalid from the first fetch after the contacts break until a whole
        # conversion has run after they are made again
        bad = (t_read >= a) & (t_read - period < b + 0.05)
        valid[bad, lv] = False
    counts[~valid] = 0
    return counts, valid


# ------------------------------------------------------------------- assembling

def _t_us(start: int, t: float, jitter: int) -> int:
    return (start + (int(t * 1e6) // 4) * 4 + jitter) % U32


def _decodes(enc: bytes) -> bool:
    try:
        msg = cobs_decode(enc)
    except ValueError:
        return False
    return len(msg) >= 5 and crc16_ccitt_false(msg[:-2]) == int.from_bytes(msg[-2:], "little")


def make_recording(seed: int, scenario: str, duration: float, out: Path, *,
                   data_dir: Path = DATA_DIR) -> tuple[Path, Path]:
    """Write ``{scenario}_t{seed}.bin`` and its ``.truth.json``; returns both paths."""
    if scenario not in SCENARIOS:
        raise ValueError(f"unknown scenario {scenario!r}")
    tower = Tower.from_seed(seed)
    bank = bank_at(tower.piezo_rate, data_dir)
    w = build_world(tower, scenario, duration, seed)
    r = np.random.default_rng([seed, 0xD, 50 + SCENARIOS.index(scenario)])
    rate = tower.piezo_rate
    n_sets = int(round(duration * rate)) + 1
    piezo = render_piezo(w, n_sets, bank, r)
    t_read = reading_times(tower, duration, r)
    counts, valid = render_load(w, t_read, duration, r)

    # How the recording starts: a fresh boot (seq 0, t_us small) or a running
    # device asked with GET_INFO (HELLO + ACK); some with a u32 wrap inside,
    # some beginning with the tail of a frame (recorder opened mid-frame).
    wrap = seed % 4 == 2
    boot = not wrap and seed % 2 == 1
    cut = seed % 3 == 1
    if wrap:
        t_us_start = U32 - int(r.uniform(5.0, max(6.0, duration - 5.0)) * 1e6)
    elif boot:
        t_us_start = int(r.uniform(0.3, 0.9) * 1e6)
    else:
        t_us_start = int(r.uniform(0.0, U32 - (duration + 60) * 1e6))
    t_us_start -= t_us_start % 4
    seq = 0 if boot else int(r.integers(0, 65536))
    parts: list[bytes] = []
    if cut:
        prev = frame(T_PIEZO, seq - 1, struct.pack("<IB", (t_us_start - 7000) % U32, 14)
                     + piezo[:14].tobytes())
        m = int(r.integers(3, len(prev) - 2))
        while _decodes(prev[-m:-1]):  # the tail must not pass for a whole message
            m -= 1
        parts.append(prev[-m:])
    hello = struct.pack("<BBBBBBHHB", 1, *tower.fw, N_LEVELS, N_LEVELS, rate,
                        tower.load_rate_nominal, ADC_BITS) + tower.device_id
    parts.append(frame(T_HELLO, seq, hello))
    seq += 1
    if not boot:
        parts.append(frame(T_ACK, seq, struct.pack("<BHB", T_GET_INFO, int(r.integers(0, 65536)),
                                                   0)))
        seq += 1

    # message schedule: (emit time, order, kind, index)
    sched: list[tuple[float, int, int, int, int]] = []
    i, order = 0, 0
    while i < n_sets:
        n = tower.frames_fixed or int(r.integers(tower.frames_lo, tower.frames_hi + 1))
        n = min(n, n_sets - i)
        sched.append(((i + n - 1) / rate + 30e-6, order, T_PIEZO, i, n))
        i += n
        order += 1
    # the main loop notices DOUT low 0..0.4 ms late, then clocks 24 bits out
    t_fetch = t_read + tower.read_latency_us * 1e-6 + r.uniform(0, 400e-6, len(t_read))
    for j, tf in enumerate(t_fetch):
        sched.append((float(tf), order, T_LOAD, j, 0))
        order += 1
    uptime0 = (t_us_start if boot else int(r.uniform(3600, 86400) * 1e6) + t_us_start) / 1e3
    for s in range(1, int(duration) + 1):
        sched.append((float(s) + 0.0005, order, T_STATUS, s, 0))
        order += 1
    sched.sort()
    raw = piezo.tobytes()
    n_frames = n_load = n_status = 0
    for t_emit, _, kind, j, n in sched:
        if kind == T_PIEZO:
            jit = 0 if j == 0 else 4 * int(r.integers(0, 3))
            body = struct.pack("<IB", _t_us(t_us_start, j / rate, jit), n) \
                + raw[j * 16:(j + n) * 16]
            n_frames += 1
        elif kind == T_LOAD:
            bits = int(np.sum(valid[j].astype(int) << np.arange(N_LEVELS)))
            body = struct.pack("<IB", _t_us(t_us_start, float(t_fetch[j]), 0),
                               bits) + s24_bytes(counts[j])
            n_load += 1
        else:
            body = struct.pack("<IHHHBB", int(uptime0 + t_emit * 1e3) % U32, 0, 0, 0,
                               int(r.integers(25, 60)), 0)
            n_status += 1
        parts.append(frame(kind, seq, body))
        seq += 1
    out.mkdir(parents=True, exist_ok=True)
    rec = out / f"{scenario}_t{seed}.bin"
    rec.write_bytes(b"".join(parts))

    truth = {
        "format": FORMAT, "generator": "crosscheck_d", "scenario": scenario, "seed": seed,
        "duration_s": duration, "cells": tower.cells,
        "landings": sorted(w.landings, key=lambda x: x["t"]),
        "knockdowns": sorted(w.knockdowns, key=lambda x: x["t"]),
        "removals": w.removals, "lifts": w.lifts, "closes": w.closes,
        "knocks": sorted(w.knocks, key=lambda x: x["t"]), "presses": w.press_truth,
        "t_quiet_s": 4.0,
        "tower": {
            "piezo_rate_hz": rate, "load_rate_hz": tower.load_rate_nominal,
            "load_rate_true_hz": round(tower.load_rate_true, 4),
            "clock_ppm": round(tower.clock_ppm, 1),
            "frames": tower.frames_fixed or f"{tower.frames_lo}..{tower.frames_hi}",
            "counts_per_g": [round(float(x), 1) for x in tower.counts_per_g * tower.cell_sign],
            "cube_mass_g": round(tower.cube_mass_g, 3),
            "piezo_noise_rms": [round(float(x), 2) for x in tower.noise_rms],
            "leak_gain": round(tower.leak_gain, 3), "hum": round(w.hum, 2),
        },
        "start": {"boot": boot, "cut_bytes": len(parts[0]) if cut else 0,
                  "t_us_start": t_us_start, "u32_wrap": wrap},
        "counts": {"piezo_frames": n_frames, "load": n_load, "status": n_status},
    }
    truth_path = out / f"{scenario}_t{seed}.truth.json"
    truth_path.write_text(json.dumps(truth, indent=1))
    return rec, truth_path


def main(argv: list[str] | None = None) -> int:
    """Command line."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--towers", type=int, default=8)
    p.add_argument("--first-seed", type=int, default=1)
    p.add_argument("--duration", type=float, default=120.0)
    p.add_argument("--scenarios", nargs="+", default=list(SCENARIOS), choices=SCENARIOS)
    p.add_argument("--data-dir", type=Path, default=DATA_DIR)
    args = p.parse_args(argv)
    started = time.perf_counter()
    try:
        load_bank(args.data_dir)
        for seed in range(args.first_seed, args.first_seed + args.towers):
            for sc in args.scenarios:
                rec, _ = make_recording(seed, sc, args.duration, args.out,
                                        data_dir=args.data_dir)
                print(f"{rec.name}", file=sys.stderr)
    except DataDirError as exc:
        print(f"make_recordings_d: {exc}", file=sys.stderr)
        return 2
    print(f"{args.towers * len(args.scenarios)} recordings in "
          f"{time.perf_counter() - started:.1f} s -> {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
