#!/usr/bin/env python3
"""Independent tower simulator "model V": recordings plus exact ground truth.

Writes, for every tower seed and scenario, ``{scenario}_t{seed}.bin`` (the
device -> host byte stream of contracts.md sections 1-2) and
``{scenario}_t{seed}.truth.json`` (format ``towerear-crosscheck-truth/1``).
numpy + scipy + stdlib only; shares nothing with the project but the contracts.
See README.md beside this file for what is modelled and why.

Usage::

    python tools/crosscheck_v/make_recordings_v.py --out DIR --towers 8 --first-seed 1 \
        --duration 120 [--scenarios single rapid noisy game] [--workers 2]
"""

from __future__ import annotations

import argparse
import binascii
import json
import math
import struct
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from scipy import signal

SCENARIOS = ("single", "rapid", "noisy", "game")
COLOURS = ("yellow", "blue", "brown", "gray", "black", "white")
G = 9.81
FS = 2000  # piezo sets per second; also the physics grid of the load model
DT = 1.0 / FS
PREF = 4.7e-4  # N*s: a 0.5 g cube striking at 0.7 m/s with e = 0.35 (piezo gain reference)
PRE_S = 0.6  # seconds of physics before stream time 0 (HX711 filter history)
N_CH = 8
HWORD = 0xFFFF

# --------------------------------------------------------------------------------------------
# Wire format: CRC, COBS, messages
# --------------------------------------------------------------------------------------------


def crc16_ccitt_false(data: bytes) -> int:
    """Bitwise reference CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF)."""
    crc = 0xFFFF
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) & 0xFFFF if crc & 0x8000 else (crc << 1) & 0xFFFF
    return crc


def crc16_fast(data: bytes) -> int:
    """The same CRC through binascii (CRC-CCITT with init 0xFFFF)."""
    return binascii.crc_hqx(data, 0xFFFF)


def cobs_encode_ref(data: bytes) -> bytes:
    """Byte-by-byte reference COBS encoder (Cheshire & Baker)."""
    out = bytearray([0])
    code_at, code = 0, 1
    for i, byte in enumerate(data):
        if byte == 0:
            out[code_at] = code
            code_at, code = len(out), 1
            out.append(0)
        else:
            out.append(byte)
            code += 1
            if code == 0xFF and i < len(data) - 1:
                out[code_at] = code
                code_at, code = len(out), 1
                out.append(0)
    out[code_at] = code
    return bytes(out)


def cobs_encode(data: bytes) -> bytes:
    """Fast COBS encoder for messages shorter than 254 bytes (falls back otherwise)."""
    if len(data) >= 254:
        return cobs_encode_ref(data)
    parts = data.split(b"\x00")
    return b"".join(bytes((len(p) + 1,)) + p for p in parts)


def cobs_decode(enc: bytes) -> bytes:
    """Decode one COBS frame (without its 0x00); ValueError when malformed."""
    out = bytearray()
    i, n = 0, len(enc)
    while i < n:
        code = enc[i]
        if code == 0:
            raise ValueError("zero byte inside a COBS frame")
        end = i + code
        if end > n:
            raise ValueError("COBS block runs past the frame")
        out += enc[i + 1:end]
        i = end
        if code != 0xFF and i < n:
            out.append(0)
    return bytes(out)


def frame_message(mtype: int, seq: int, body: bytes) -> bytes:
    """type | seq | body | crc, COBS-encoded and terminated by 0x00."""
    msg = struct.pack("<BH", mtype, seq & HWORD) + body
    msg += struct.pack("<H", crc16_fast(msg))
    return cobs_encode(msg) + b"\x00"


def decode_stream(raw: bytes) -> dict[str, Any]:
    """Reference decoder: split at 0x00, COBS-decode, check CRC and seq; collect messages."""
    res: dict[str, Any] = {
        "hello": None, "hellos": 0, "first_type": None, "crc_errors": 0, "framing_errors": 0,
        "seq_gaps": 0, "unknown_types": 0, "piezo": [], "piezo_t_us": [], "load_t_us": [],
        "load_valid": [], "load": [], "status": [], "order": [],
    }
    frames = raw.split(b"\x00")
    last_seq = None
    for k, enc in enumerate(frames):
        if k == len(frames) - 1:
            break  # bytes after the last 0x00: an unfinished frame
        if not enc:
            continue
        try:
            msg = cobs_decode(enc)
        except ValueError:
            res["framing_errors"] += 1
            continue
        if len(msg) < 5 or crc16_fast(msg[:-2]) != int.from_bytes(msg[-2:], "little"):
            res["crc_errors"] += 1
            continue
        mtype, seq = msg[0], int.from_bytes(msg[1:3], "little")
        if last_seq is not None and seq != (last_seq + 1) & HWORD:
            res["seq_gaps"] += 1
        last_seq = seq
        body = msg[3:-2]
        if res["first_type"] is None:
            res["first_type"] = mtype
        res["order"].append(mtype)
        if mtype == 0x01:
            f = struct.unpack("<BBBBBBHHB", body[:11])
            res["hellos"] += 1
            res["hello"] = {
                "proto": f[0], "fw": f[1:4], "n_piezo": f[4], "n_load": f[5],
                "piezo_rate_hz": f[6], "load_rate_hz": f[7], "adc_bits": f[8],
                "device_id": body[11:19].hex()}
        elif mtype == 0x02:
            t_us, n = struct.unpack("<IB", body[:5])
            arr = np.frombuffer(body[5:], dtype="<u2").reshape(n, -1)
            res["piezo"].append(arr)
            res["piezo_t_us"].append((t_us, n))
        elif mtype == 0x03:
            t_us, valid = struct.unpack("<IB", body[:5])
            b = np.frombuffer(body[5:], dtype=np.uint8).reshape(-1, 3).astype(np.int32)
            v = b[:, 0] | (b[:, 1] << 8) | (b[:, 2] << 16)
            v = np.where(v >= 1 << 23, v - (1 << 24), v)
            res["load_t_us"].append(t_us)
            res["load_valid"].append(valid)
            res["load"].append(v)
        elif mtype == 0x04:
            res["status"].append(struct.unpack("<IHHHBB", body))
        else:
            res["unknown_types"] += 1
    return res


def unwrap_us(stamps: list[int] | np.ndarray) -> np.ndarray:
    """Unwrap u32 microsecond stamps by signed steps (file order need not be monotone)."""
    a = np.asarray(stamps, dtype=np.int64)
    if a.size == 0:
        return a
    step = (np.diff(a) + (1 << 31)) % (1 << 32) - (1 << 31)
    return a[0] + np.concatenate(([0], np.cumsum(step)))


# --------------------------------------------------------------------------------------------
# The kit: tower, cubes, sensors, electronics (a function of the seed only)
# --------------------------------------------------------------------------------------------

RAW_COUNTS_PER_G = 21475.0  # 1 mV/V over 100 g at gain 128, ratiometric: 1e-5 * 256 * 2**23


class Kit:
    """Everything physical about one tower build; depends on the seed only."""

    def __init__(self, seed: int) -> None:
        r = np.random.default_rng([seed, 0x5601])
        self.seed = seed
        # -- geometry (mm). Boxes about 7 cm wide, levels about 3 cm high.
        self.half = float(r.uniform(31.0, 36.0))
        self.level_h = float(r.uniform(28.5, 33.0))
        self.cube_mm = float(r.choice([8.0, 9.0, 10.0], p=[0.35, 0.4, 0.25]))
        # Hole 8 is the entry hole in the roof of module 7; holes 1..7 are in the plates.
        # "Smaller upwards": the top hole is the smallest.
        hole = np.zeros(9)
        hole[8] = self.cube_mm + r.uniform(4.5, 7.0)
        step = r.uniform(0.7, 1.5)
        for L in range(7, 0, -1):
            hole[L] = hole[8] + (8 - L) * step + r.uniform(-0.4, 0.8)
        self.hole = hole
        # Modules sit on each other with some play: hole centres wander as a damped walk.
        off = np.zeros((9, 2))
        # Each module's hole steps a few mm from the one above, more so lower down, and the
        # lowest hole is well off: few cubes reach the ground floor (about 7 %).
        off[8] = r.normal(0, 1.0, 2)
        for L in range(7, 0, -1):
            a = r.uniform(0, 2 * math.pi)
            st = r.uniform(2.5, 6.5) + (7 - L) * 0.9 + (5.0 if L == 1 else 0.0)
            off[L] = 0.4 * off[L + 1] + st * np.array([math.cos(a), math.sin(a)])
        self.hole_off = off
        self.restitution = float(r.uniform(0.28, 0.45))  # wood on card/MDF
        # A cube clipping a hole edge or landing on a corner is thrown sideways (mm/s).
        self.edge_kick = float(r.uniform(150.0, 350.0))
        self.tumble = float(r.uniform(120.0, 320.0))
        self.mu = float(r.uniform(0.35, 0.55))  # sliding friction of a painted cube
        # -- cubes: wood density and size by batch, each cube its own mass (g).
        rho = r.uniform(0.62, 0.80)
        m0 = (self.cube_mm / 10.0) ** 3 * rho * 1.03  # paint adds a few per cent
        self.cube_mass: dict[str, float] = {}
        for col in COLOURS:
            batch = r.uniform(0.96, 1.04)
            for i in range(20):
                self.cube_mass[f"{col}-{i:02d}"] = float(
                    m0 * batch * np.clip(1 + r.normal(0, 0.045), 0.88, 1.12))
        vic = r.uniform(1.0, 1.12)
        for i in range(2):
            self.cube_mass[f"red-{i}"] = float(m0 * vic * (1 + r.normal(0, 0.03)))
        # -- plates on their bar cells. Each plate is bolted to the free end of a 100 g bar
        # cell cantilevered from one wall; the cell end sits off-centre because the hole
        # is in the middle.
        self.plate_g = r.uniform(7.0, 16.0, N_CH)  # plate + spacer + screws
        k_cell = r.uniform(2200.0, 6000.0, N_CH)  # N/m, 100 g cells deflect ~0.2-0.4 mm
        self.f_plate = np.sqrt(k_cell / (self.plate_g * 1e-3)) / (2 * math.pi)
        self.zeta = r.uniform(0.03, 0.09, N_CH)
        ang = r.uniform(0, 2 * math.pi, N_CH)
        rad = r.uniform(12.0, 22.0, N_CH)
        self.cell_xy = np.stack([rad * np.cos(ang), rad * np.sin(ang)], axis=1)
        # Off-centre error of a cheap single-point cell on a DIY plate: ~0.5-3 % over the plate.
        self.offc = r.normal(0.0, 0.00045, (N_CH, 2))  # per mm of offset from the cell end
        # Some card plates warp and touch a wall: that edge carries part of the load.
        self.rub_edge = np.where(r.random(N_CH) < 0.3, r.integers(0, 4, N_CH), -1)
        self.rub_share = r.uniform(0.04, 0.18, N_CH)
        # -- load cells and HX711s
        self.cells = "matched" if r.random() < 0.5 else "mixed"
        if self.cells == "matched":
            ro = 1.0 + r.normal(0, 0.015, N_CH)
        else:
            ro = r.uniform(0.75, 1.25, N_CH)
        sign = np.ones(N_CH)
        if self.cells == "mixed" and r.random() < 0.3:
            sign[r.integers(0, N_CH)] = -1.0  # one cell wired with A+/A- swapped
        self.cpg = sign * ro * RAW_COUNTS_PER_G * (1 + r.normal(0, 0.003, N_CH))
        self.zero_counts = np.abs(self.cpg) * (self.plate_g + r.normal(0, 6.0, N_CH)) * sign
        self.noise_g = r.uniform(0.003, 0.008, N_CH)
        self.drift_g_rts = r.uniform(0.0005, 0.002, N_CH)  # random walk, g per sqrt(s)
        self.hx_rate = 80.0 * r.uniform(0.96, 1.06, N_CH)  # each chip's own RC oscillator
        self.hx_phase = r.uniform(0, 1, N_CH)
        self.warm_g = np.clip(r.normal(0, 0.05, N_CH), -0.12, 0.12)  # self-heating after power-up
        self.warm_tau = r.uniform(15.0, 60.0, N_CH)
        self.repower_g = r.uniform(0.002, 0.015, N_CH)  # offset shift at each power-up
        self.vib_gain = r.uniform(0.9, 1.3, N_CH) * (1 + 0.04 * np.arange(N_CH))
        # -- piezo discs and front end
        self.bias = 511.5 + r.normal(0, 2.5, N_CH)
        self.pz_gain = r.uniform(90.0, 260.0, N_CH)  # LSB for a PREF strike right on the plate
        self.modes_f = np.sort(np.exp(r.uniform(math.log(220), math.log(6000), (N_CH, 5))), 1)
        self.modes_tau = r.uniform(0.6, 1.4, (N_CH, 5)) * 0.014 * (400.0 / self.modes_f) ** 0.45
        self.x_down = float(r.uniform(0.12, 0.35))
        self.x_up = float(r.uniform(0.08, 0.30))
        self.x_delay = float(r.uniform(0.1e-3, 0.3e-3))  # s per level through the card walls
        self.table_coupling = float(r.uniform(0.2, 0.6))
        self.mains_hz = 50.0 if r.random() < 0.85 else 60.0
        self.hum = r.uniform(0.3, 1.5, N_CH) * (1 + 0.12 * np.arange(N_CH))
        self.hum_phase = r.uniform(0, 2 * math.pi, N_CH)
        self.hum_h3 = float(r.uniform(0.3, 0.6))
        self.hum_h5 = float(r.uniform(0.1, 0.3))
        self.hum_open = r.uniform(8.0, 25.0, N_CH)  # pick-up with the disc disconnected
        self.pz_noise = r.uniform(0.35, 0.9, N_CH)
        self.f_hp = float(r.uniform(4.0, 12.0))  # 1 MOhm bias x disc capacitance
        self.vib_lsb = r.uniform(4.0, 15.0, N_CH)  # LSB per m/s^2 of table acceleration
        self.acoustic = r.uniform(0.5, 1.5, N_CH)
        # -- ATmega328P firmware build
        self.read_order = "up" if r.random() < 0.6 else "down"
        adc_step = r.uniform(14.0, 20.0)  # us per channel: 13 ADC clocks at 1 MHz + ISR
        pos = np.arange(N_CH) if self.read_order == "up" else np.arange(N_CH)[::-1]
        self.skew_s = pos * adc_step * 1e-6
        self.set_conv_us = N_CH * adc_step
        self.isr_jitter_us = float(r.uniform(1.0, 8.0))
        self.batch_n = int(r.choice([4, 6, 8, 10, 12, 14]))
        self.tx_buf = int(r.choice([64, 128, 256]))
        # Rounds wait for every present chip; the deadline only matters when one is gone.
        self.hx_deadline_us = float(r.choice([14000.0, 20000.0, 30000.0]))
        self.hx_absent_us = float(r.choice([40000.0, 60000.0]))
        self.hx_discard = int(r.choice([2, 3, 4], p=[0.25, 0.35, 0.4]))
        self.auto_reset = bool(r.random() < 0.75)
        self.lead_break = bool(self.auto_reset and r.random() < 0.5)
        self.boot_s = float(r.uniform(0.4, 1.7))
        self.hello_beacon_s = None if self.auto_reset else 2.0
        self.uptime0_s = float(r.uniform(4200.0, 4285.0))
        patch = int(r.integers(0, 4))
        self.fw = (1, 2, patch) if self.auto_reset else (1, 3, patch % 3)
        self.device_id = bytes(r.integers(0, 256, 8, dtype=np.uint8))

    # ---- what a load cell sees of a cube at (x, y)
    def load_fraction(self, plate: int, xy: np.ndarray) -> float:
        """Fraction of a cube's weight that reaches the cell of ``plate`` when it rests at xy."""
        d = np.asarray(xy) - self.cell_xy[plate]
        f = 1.0 + float(self.offc[plate] @ d)
        e = self.rub_edge[plate]
        if e >= 0:
            axis, sgn = divmod(int(e), 2)
            u = (sgn * 2 - 1) * float(xy[axis]) / self.half  # +1 at the rubbing wall
            f *= 1.0 - self.rub_share[plate] * (0.35 + 0.65 * (u + 1) / 2) ** 1.5
        return f

    def describe(self) -> dict[str, Any]:
        """The kit as the truth file records it."""
        return {
            "cube_mm": self.cube_mm,
            "cube_mass_g": [round(min(self.cube_mass.values()), 4),
                            round(max(self.cube_mass.values()), 4)],
            "holes_mm": [round(float(x), 2) for x in self.hole[1:]],
            "plate_g": [round(float(x), 2) for x in self.plate_g],
            "plate_mode_hz": [round(float(x), 1) for x in self.f_plate],
            "rubbing_plates": [int(i) for i in np.flatnonzero(self.rub_edge >= 0)],
            "counts_per_g": [round(float(x), 2) for x in self.cpg],
            "hx711_rates_hz": [round(float(x), 3) for x in self.hx_rate],
            "hx711_discard": self.hx_discard,
            "hx711_deadline_ms": self.hx_deadline_us / 1000,
            "piezo_batch": self.batch_n,
            "tx_buffer": self.tx_buf,
            "adc_read_order": self.read_order,
            "auto_reset": self.auto_reset,
            "mains_hz": self.mains_hz,
            "firmware": ".".join(str(x) for x in self.fw),
        }


# --------------------------------------------------------------------------------------------
# The physical world: cubes, hands, room. Everything here is in stream seconds.
# --------------------------------------------------------------------------------------------

# Share of a strike's momentum that reaches the plate's cell (the rest goes into the walls).
LOAD_KINDS = {"plate": 1.0, "bounce": 1.0, "edge": 0.6, "rattle": 1.0, "touch": 1.0,
              "click": 1.0}
# Piezo weight of a strike kind and the tilt of its spectrum (exponent on f/600 Hz).
KIND_PIEZO = {"plate": (1.0, -0.2), "bounce": (0.9, -0.2), "edge": (0.7, 0.4),
              "wall": (0.5, -0.5), "top": (0.8, 0.1), "touch": (0.5, -0.6),
              "seat": (0.8, -0.9), "rattle": (0.6, 0.0), "table": (1.0, -1.2),
              "click": (0.6, 0.3)}


@dataclass
class Ctx:
    """One cube's journey: its first strike and whether it knocked another cube down."""

    cube: str
    first: float | None = None
    caused: bool = False


@dataclass
class Rest:
    """A cube lying on a plate."""

    cube: str
    plate: int
    xy: np.ndarray
    t_rest: float
    frac: float
    perched: bool
    t_leave: float = math.inf


@dataclass
class World:
    """Event lists the scenario writes and the sensor models read."""

    kit: Kit
    rng: np.random.Generator
    duration: float
    hum_gain: float = 1.0
    impacts: list[tuple[float, int, float, str, float]] = field(default_factory=list)
    static: list[tuple[int, float, float, float]] = field(default_factory=list)
    hands: list[tuple[int, float, float, float]] = field(default_factory=list)
    strain: list[tuple[int, float, float, float]] = field(default_factory=list)
    slips: list[tuple[int, float, float]] = field(default_factory=list)
    accel_ev: list[tuple[float, float, float, float, int]] = field(default_factory=list)
    accel_cont: list[tuple[str, float, float, float, float]] = field(default_factory=list)
    rustle: list[tuple[float, float, float, np.ndarray]] = field(default_factory=list)
    talk: list[tuple[float, float, float]] = field(default_factory=list)
    toggles: list[list[tuple[float, bool]]] = field(
        default_factory=lambda: [[] for _ in range(N_CH)])
    rest: list[Rest] = field(default_factory=list)
    landings: list[dict[str, Any]] = field(default_factory=list)
    knockdowns: list[dict[str, Any]] = field(default_factory=list)
    removals: list[dict[str, Any]] = field(default_factory=list)
    lifts: list[dict[str, Any]] = field(default_factory=list)
    closes: list[dict[str, Any]] = field(default_factory=list)
    knocks: list[dict[str, Any]] = field(default_factory=list)
    misses: list[dict[str, Any]] = field(default_factory=list)
    fallouts: list[dict[str, Any]] = field(default_factory=list)

    # ---- small helpers
    def u(self, a: float, b: float) -> float:
        return float(self.rng.uniform(a, b))

    def chance(self, p: float) -> bool:
        return bool(self.rng.random() < p)

    def mass_kg(self, cube: str) -> float:
        return self.kit.cube_mass[cube] * 1e-3

    def impact(self, t: float, src: int, p: float, kind: str, ctx: Ctx | None = None) -> None:
        """A strike of momentum p (N*s) on plate src (0-7), the roof (8) or the table (9)."""
        self.impacts.append((t, src, p, kind, self.u(0.5, 1.4)))
        if ctx is not None and (ctx.first is None or t < ctx.first):
            ctx.first = t

    def resting(self, plate: int, t: float) -> list[Rest]:
        return [r for r in self.rest if r.plate == plate and r.t_rest <= t < r.t_leave]

    def connected(self, ch: int, t: float) -> bool:
        state = True
        for tt, on in self.toggles[ch]:
            if tt > t:
                break
            state = on
        return state

    def _walls(self, xy: np.ndarray) -> np.ndarray:
        lim = self.kit.half - self.kit.cube_mm / 2
        out = xy.copy()
        for a in range(2):
            if out[a] > lim:
                out[a] = 2 * lim - out[a]
            elif out[a] < -lim:
                out[a] = -2 * lim - out[a]
        return np.clip(out, -lim, lim)

    def _in_hole(self, plate: int, xy: np.ndarray) -> bool:
        if plate <= 0:
            return False
        rel = np.abs(xy - self.kit.hole_off[plate])
        return bool(rel.max() < self.kit.hole[plate] / 2)

    def _path(self, plate: int, a: np.ndarray, b: np.ndarray, t: float,
              cubes: bool) -> tuple[str, float, Rest | None] | None:
        """First thing met on the straight path a->b on a plate: hole, wall or a resting cube."""
        lim = self.kit.half - self.kit.cube_mm / 2
        others = [r for r in self.resting(plate, t)] if cubes else []
        for i in range(1, 17):
            w = i / 16
            p = a + (b - a) * w
            if self._in_hole(plate, p):
                return ("hole", w, None)
            if np.abs(p).max() > lim:
                return ("wall", w, None)
            for r in others:
                if np.abs(p - r.xy).max() < self.kit.cube_mm * 0.95:
                    return ("cube", w, r)
        return None

    def _perched(self, plate: int, xy: np.ndarray) -> bool:
        if plate <= 0:
            return False
        rel = np.abs(xy - self.kit.hole_off[plate])
        half = self.kit.hole[plate] / 2
        return bool(rel.max() < half + 1.0 and rel.min() < half)

    def add_rest(self, cube: str, plate: int, xy: np.ndarray, t_on: float, t_rest: float) -> Rest:
        frac = self.kit.load_fraction(plate, xy)
        rec = Rest(cube, plate, xy.copy(), t_rest, frac, self._perched(plate, xy))
        self.rest.append(rec)
        return rec

    # ---- a cube on its way down
    def journey(self, cube: str, ctx: Ctx, root: Ctx, t: float, plate: int, xy: np.ndarray,
                vz: float, vh: np.ndarray, drop_mm: float) -> tuple[int, float, np.ndarray]:
        """Fall from drop_mm above ``plate`` until the cube rests; returns (floor, t_rest, xy)."""
        kit = self.kit
        m = self.mass_kg(cube)
        c2 = kit.cube_mm / 2
        xy = xy.astype(float).copy()
        vh = vh.astype(float).copy()
        while True:
            d = max(drop_mm, 1.0) / 1000
            tf = (-vz + math.sqrt(vz * vz + 2 * G * d)) / G
            t += tf
            vz += G * tf
            xy = self._walls(xy + vh * tf)
            drop_mm = kit.level_h - 2.0
            if plate > 0:
                rel = np.abs(xy - kit.hole_off[plate])
                half = kit.hole[plate] / 2
                mx = float(rel.max())
                if mx <= half - c2:
                    plate -= 1  # clean through this plate's hole
                    continue
                if mx < half + c2:
                    self.impact(t, plate, m * vz * self.u(0.2, 0.5), "edge", ctx)
                    ang = self.rng.uniform(0, 2 * math.pi)
                    kick = kit.edge_kick * self.u(0.3, 1.0)
                    if mx < half:  # clips the hole edge and tips in, thrown sideways
                        vz *= self.u(0.6, 0.85)
                        toward = kit.hole_off[plate] - xy
                        vh = (vh * 0.4 + toward / (np.linalg.norm(toward) + 1e-9) * kick * 0.5
                              + kick * 0.7 * np.array([math.cos(ang), math.sin(ang)]))
                        plate -= 1
                        continue
                    vz *= self.u(0.5, 0.8)
                    vh = vh * 0.4 + kick * np.array([math.cos(ang), math.sin(ang)])
                    away = xy - kit.hole_off[plate]
                    xy = self._walls(xy + away / (np.linalg.norm(away) + 1e-9) * c2 * 0.6)
            out = self._on_plate(cube, ctx, root, t, plate, xy, vz, vh)
            if out[0] == "rest":
                return plate, out[1], out[2]
            _, t, xy, vz, vh = out
            plate -= 1

    def _on_plate(self, cube: str, ctx: Ctx, root: Ctx, t: float, plate: int, xy: np.ndarray,
                  vz: float, vh: np.ndarray) -> tuple:
        kit = self.kit
        m = self.mass_kg(cube)
        mg = kit.cube_mass[cube]
        e = kit.restitution * self.u(0.85, 1.15)
        p = m * vz * (1 + e)
        self.impact(t, plate, p, "plate", ctx)
        self._shake(plate, t, xy, p, root)
        # A tumbling cube leaves its first strike with a fresh horizontal velocity (mm/s).
        ang = self.rng.uniform(0, 2 * math.pi)
        spd = kit.tumble * self.u(0.2, 1.0) * math.sqrt(max(vz, 0.2) / 0.8)
        vh = 0.3 * vh + spd * np.array([math.cos(ang), math.sin(ang)])
        v, tt = e * vz, t
        while v > 0.06:
            fl = 2 * v / G
            new = xy + vh * fl
            lim = kit.half - kit.cube_mm / 2
            if np.abs(new).max() > lim:
                new = self._walls(new)
                vh = -vh * 0.5
                self.impact(tt + fl * 0.7, plate, m * self.u(0.02, 0.08), "wall", None)
            tt += fl
            xy = new
            if self._in_hole(plate, xy):  # comes down over the hole
                self.impact(tt, plate, m * v * self.u(0.2, 0.4), "edge", ctx)
                return ("fall", tt, xy, v * self.u(0.5, 0.9), vh * 0.6)
            self.impact(tt, plate, m * v * (1 + e), "bounce", ctx)
            v *= e
            vh = vh * self.u(0.5, 0.9)
        # Sliding and rocking to a stop.
        t_b = tt
        f_b = kit.load_fraction(plate, xy)
        self.static.append((plate, t_b, t_b + 0.004, mg * f_b))
        spd = float(np.linalg.norm(vh))
        dist = (spd / 1000) ** 2 / (2 * kit.mu * G) * 1000
        tsl = 2 * dist / spd if spd > 1e-6 else 0.0
        end = xy + (vh / spd * dist if spd > 1e-6 else 0.0)
        hit = self._path(plate, xy, end, t_b, cubes=True)
        frac_t = 1.0
        if hit is not None:
            w = hit[1]
            frac_t = 1 - math.sqrt(max(1 - w, 0.0))  # decelerating: distance w at time frac_t
            tc = t_b + tsl * frac_t
            xc = xy + (end - xy) * w
            if hit[0] == "hole":
                f_c = kit.load_fraction(plate, xc)
                self.static.append((plate, t_b, tc, mg * (f_c - f_b)))
                self.static.append((plate, tc, tc + 0.015, -mg * f_c))
                self.impact(tc + 0.008, plate, m * self.u(0.03, 0.12), "edge", ctx)
                return ("fall", tc + 0.01, xc, self.u(0.12, 0.3), vh * 0.3)
            if hit[0] == "cube" and hit[2] is not None:
                other = hit[2]
                self.impact(tc, plate, m * spd / 1000 * self.u(0.5, 1.0), "click", None)
                self._push(other, tc, (end - xy) / (dist + 1e-9), self.u(1.0, 6.0) * spd / 150,
                           root)
            end = self._walls(xc)
        t_end = t_b + tsl * frac_t
        f_e = kit.load_fraction(plate, end)
        self.static.append((plate, t_b, max(t_end, t_b + 0.005), mg * (f_e - f_b)))
        t_rest = t_end + self.u(0.02, 0.18)
        self.add_rest(cube, plate, end, t_b, t_rest)
        if kit.rub_edge[plate] >= 0:
            self.slips.append((plate, t + 0.01, float(self.rng.normal(0, 0.004))))
        return ("rest", t_rest, end)

    def _shake(self, plate: int, t: float, xy: np.ndarray, p: float, root: Ctx) -> None:
        """A strike on a plate pushes cubes it hits and may tip perched ones into the hole."""
        for r in self.resting(plate, t):
            d = float(np.linalg.norm(r.xy - xy))
            if d < 1.15 * self.kit.cube_mm:
                direction = (r.xy - xy) / (d + 1e-9)
                self._push(r, t, direction, self.u(1.0, 8.0) * min(p / PREF, 3.0), root)
            elif r.perched and d < 30 and self.chance(0.35 * min(p / PREF, 2.0)):
                self.knock_down(r, t + self.u(0.01, 0.06), "throw", root)

    def _push(self, r: Rest, t: float, direction: np.ndarray, dist_mm: float, root: Ctx) -> None:
        new = self._walls(r.xy + direction * dist_mm)
        path = self._path(r.plate, r.xy, new, t, cubes=False)
        if path is not None and path[0] == "hole":
            self.knock_down(r, t + self.u(0.02, 0.08), "throw", root)
            return
        if path is not None and path[0] == "wall":
            new = self._walls(new)
        f_new = self.kit.load_fraction(r.plate, new)
        mg = self.kit.cube_mass[r.cube]
        self.static.append((r.plate, t, t + self.u(0.03, 0.1), mg * (f_new - r.frac)))
        r.xy, r.frac = new, f_new
        r.perched = self._perched(r.plate, new)

    def knock_down(self, r: Rest, t_k: float, cause: str, root: Ctx | None) -> None:
        """A resting cube drops through its plate's hole; its fall is a knocked landing."""
        if r.plate == 0 or r.t_leave <= t_k:
            return
        r.t_leave = t_k
        mg = self.kit.cube_mass[r.cube]
        self.static.append((r.plate, t_k - 0.02, t_k, -mg * r.frac))
        off = self.kit.hole_off[r.plate]
        half = self.kit.hole[r.plate] / 2
        xy0 = off + np.clip(r.xy - off, -half * 0.9, half * 0.9)
        ctx = Ctx(r.cube)
        vh = self.rng.normal(0, 40, 2)
        floor, t_rest, xyr = self.journey(r.cube, ctx, root or ctx, t_k, r.plate - 1, xy0,
                                          self.u(0.1, 0.3), vh, self.kit.level_h - 2)
        if root is not None:
            root.caused = True
        self.knockdowns.append({"t": t_k, "from_floor": r.plate, "to_floor": floor,
                                "cube": r.cube, "cause": cause})
        self._landing(r.cube, ctx, floor, t_rest, xyr, knocked_from=r.plate)

    def _landing(self, cube: str, ctx: Ctx, floor: int, t_rest: float, xy: np.ndarray,
                 knocked_from: int | None = None) -> dict[str, Any]:
        rec = next(r for r in reversed(self.rest) if r.cube == cube)
        ld = {"t": t_rest, "t_first_impact": ctx.first if ctx.first is not None else t_rest,
              "floor": floor, "cubes": 1, "knocked": knocked_from is not None,
              "cube": cube, "color": cube.split("-")[0],
              "mass_g": self.kit.cube_mass[cube], "load_g": self.kit.cube_mass[cube] * rec.frac,
              "x_mm": float(xy[0]), "y_mm": float(xy[1]), "perched": rec.perched}
        if knocked_from is not None:
            ld["from_floor"] = knocked_from
        else:
            ld["caused_knockdown"] = False
        self.landings.append(ld)
        return ld

    # ---- people
    def throw(self, cube: str, t_rel: float, aim_sd: float = 2.5, retry: int = 0) -> float:
        """Drop one cube into the entry hole; returns when the thrower is done with it."""
        kit = self.kit
        m = self.mass_kg(cube)
        h = self.u(0.015, 0.08)
        vz = math.sqrt(2 * G * h)
        t = t_rel + math.sqrt(2 * h / G)
        if self.chance(0.2):  # fingertips brush the roof before letting go
            self.impact(t_rel - self.u(0.05, 0.3), 8, PREF * self.u(0.05, 0.3), "touch")
        off = kit.hole_off[8]
        xy = off + self.rng.normal(0, aim_sd, 2)
        rel = float(np.abs(xy - off).max())
        half, c2 = kit.hole[8] / 2, kit.cube_mm / 2
        ctx = Ctx(cube)
        vh = self.rng.normal(0, 60, 2)
        if retry >= 2:
            xy = off + self.rng.normal(0, 1.0, 2)
            rel = float(np.abs(xy - off).max())
        if rel >= half + c2 or (rel >= half and retry == 0 and self.chance(0.4)):
            # Missed the hole: the cube hits the roof and rolls off onto the table.
            self.impact(t, 8, m * vz * (1 + kit.restitution), "top")
            t_tab = t + self.u(0.15, 0.35)
            self.impact(t_tab, 9, m * 2.2 * 1.3, "table")
            self.misses.append({"t": t, "cube": cube, "what": "rolled off the roof"})
            return self.throw(cube, t_tab + self.u(1.2, 3.0), aim_sd * 0.5, retry + 1)
        if rel >= half:
            # Lands across the rim; a finger nudges it in.
            self.impact(t, 8, m * vz * (1 + kit.restitution), "top", ctx)
            t_n = t + self.u(0.4, 1.5)
            self.impact(t_n, 8, PREF * self.u(0.1, 0.4), "touch")
            self.misses.append({"t": t, "cube": cube, "what": "nudged in from the rim"})
            t, vz = t_n + 0.03, 0.12
            xy = off + (xy - off) * 0.3
        elif rel > half - c2:
            self.impact(t, 8, m * vz * self.u(0.2, 0.5), "top", ctx)
            vz *= self.u(0.6, 0.85)
            vh = vh + (off - xy) * self.u(5, 15)
        floor, t_rest, xyr = self.journey(cube, ctx, ctx, t, 7, xy, vz, vh, kit.level_h - 2)
        ld = self._landing(cube, ctx, floor, t_rest, xyr)
        ld["caused_knockdown"] = ctx.caused
        ld["t_release"] = t_rel
        return t + 0.05

    def hand_force(self, plate: int, t0: float, t1: float, peak_gf: float) -> None:
        self.hands.append((plate, t0, t1, peak_gf))

    def disconnect(self, chans: range, t: float, chatter: bool) -> None:
        for c in chans:
            self.toggles[c].append((t, False))
            if chatter:
                for _ in range(int(self.rng.integers(0, 3))):
                    a = t + self.u(0.003, 0.035)
                    self.toggles[c].append((a, True))
                    self.toggles[c].append((a + self.u(0.001, 0.012), False))
            self.toggles[c].sort()

    def connect(self, chans: range, t: float, chatter: bool) -> None:
        drops = []
        if chatter:
            for _ in range(int(self.rng.integers(0, 3))):
                a = t + self.u(0.005, 0.14)
                drops.append((a, a + self.u(0.002, 0.04)))
        for c in chans:
            self.toggles[c].append((t, True))
            for a, b in drops:
                self.toggles[c].append((a + self.u(0, 0.002), False))
                self.toggles[c].append((b, True))
            self.toggles[c].sort()

    def lift(self, t_lift: float, k: int) -> None:
        """Modules k..7 come off together: level k is laid open."""
        t_grab = t_lift - self.u(0.3, 0.9)
        gains = np.zeros(N_CH)
        gains[max(k - 1, 0):] = 1.0
        self.rustle.append((t_grab, t_lift + 0.2, self.u(1.0, 4.0), gains))
        self.strain.append((k, t_grab + 0.1, t_lift + self.u(0.3, 0.8), self.u(-0.15, 0.15)))
        self.accel_ev.append((t_lift, self.u(0.2, 0.8), self.u(18, 40), 0.04, k))
        self.disconnect(range(k + 1, N_CH), t_lift, chatter=True)
        self.lifts.append({"t": t_lift, "exposed": k})

    def close(self, t_close: float, k: int) -> None:
        """The lifted modules are set back on module k-1."""
        self.strain.append((k, t_close - self.u(0.3, 0.6), t_close + self.u(0.2, 0.5),
                            self.u(-0.15, 0.15)))
        gains = np.zeros(N_CH)
        gains[max(k - 1, 0):k + 1] = 1.0
        self.rustle.append((t_close - 0.5, t_close + 0.1, self.u(0.8, 2.5), gains))
        self.impact(t_close, k, PREF * self.u(2.0, 6.0), "seat")
        for j in range(k + 1, N_CH):
            for r in self.resting(j, t_close):
                self.impact(t_close + self.u(0.003, 0.03), j,
                            self.mass_kg(r.cube) * self.u(0.05, 0.2), "rattle")
        self.accel_ev.append((t_close, self.u(0.5, 2.0), self.u(20, 45), 0.05, k))
        self.connect(range(k + 1, N_CH), t_close, chatter=True)
        self.closes.append({"t": t_close, "exposed": k})

    def remove(self, t: float, recs: list[Rest], scoop: bool) -> None:
        """Fingers take cubes off the open plate; ``t`` is when the (last) cube leaves."""
        plate = recs[0].plate
        dur = self.u(0.6, 1.4) if scoop else self.u(0.25, 0.7)
        t0 = t - dur
        self.hand_force(plate, t0, t + 0.03, self.u(3.0, 20.0) * (1.5 if scoop else 1.0))
        gains = np.zeros(N_CH)
        gains[plate] = 1.0
        if plate > 0:
            gains[plate - 1] = 0.3
        self.rustle.append((t0, t + 0.05, self.u(1.5, 5.0), gains))
        leave = np.sort(t - self.rng.uniform(0, 0.35, len(recs))) if scoop else [t]
        leave[-1] = t
        for r, tl in zip(recs, leave, strict=True):
            r.t_leave = float(tl)
            mg = self.kit.cube_mass[r.cube]
            self.static.append((plate, float(tl) - 0.04, float(tl), -mg * r.frac))
            self.impact(float(tl) - self.u(0.05, 0.2), plate, PREF * self.u(0.03, 0.15), "touch")
        self.removals.append({"t": t, "floor": plate, "cubes": len(recs),
                              "cube_ids": [r.cube for r in recs]})

    def fallout(self, t_f: float, r: Rest, k: int, onto_plate: bool) -> str:
        """A cube slides out of the lifted modules while they are tilted."""
        r.t_leave = t_f
        self.static.append((r.plate, t_f - 0.02, t_f, -self.kit.cube_mass[r.cube] * r.frac))
        entry: dict[str, Any] = {"t": t_f, "from_floor": r.plate, "cube": r.cube}
        if onto_plate:
            ctx = Ctx(r.cube)
            xy = self.kit.hole_off[k + 1] + self.rng.normal(0, 3, 2)
            floor, t_rest, xyr = self.journey(r.cube, ctx, ctx, t_f, k, xy, 0.1,
                                              self.rng.normal(0, 60, 2), self.u(15, 50))
            self.knockdowns.append({"t": t_f, "from_floor": r.plate, "to_floor": floor,
                                    "cube": r.cube, "cause": "lift"})
            self._landing(r.cube, ctx, floor, t_rest, xyr, knocked_from=r.plate)
            entry["to"] = f"floor {floor}"
        else:
            self.impact(t_f + self.u(0.1, 0.25), 9, self.mass_kg(r.cube) * 2.0, "table")
            entry["to"] = "table"
        self.fallouts.append(entry)
        return str(entry["to"])

    # ---- the room
    def table_knock(self, t: float, kind: str) -> None:
        """A sharp disturbance through the table: a truth knock."""
        if kind == "dice":
            n = int(self.rng.integers(4, 12))
            tt = t
            amp = self.u(0.1, 0.5)
            for _ in range(n):
                self.impact(tt, 9, PREF * self.u(0.5, 3.0) * amp / 0.3, "click")
                self.accel_ev.append((tt, amp, self.u(60, 140), 0.01, N_CH))
                tt += self.u(0.04, 0.16)
                amp *= self.u(0.55, 0.9)
            peak = 0.5
        else:
            amp, f, tau, pk = {
                "knuckle": (self.u(0.3, 1.5), self.u(25, 60), self.u(0.03, 0.06), (3, 12)),
                "glass": (self.u(0.2, 0.8), self.u(40, 90), 0.03, (2, 6)),
                "door": (self.u(0.3, 1.0), self.u(12, 25), 0.15, (4, 10)),
                "elbow": (self.u(0.4, 2.0), self.u(15, 35), 0.08, (5, 15)),
            }[kind]
            self.impact(t, 9, PREF * self.u(*pk), "table")
            self.accel_ev.append((t, amp, f, tau, N_CH))
            peak = amp
        self.knocks.append({"t": t, "kind": kind})
        if peak > 0.45:
            for r in list(self.rest):
                if r.perched and r.t_rest <= t < r.t_leave and self.chance(0.3):
                    self.knock_down(r, t + self.u(0.02, 0.1), "knock", None)

    def footsteps(self, t0: float, n: int) -> None:
        tt = t0
        amp = self.u(0.02, 0.15)
        f = self.u(10, 25)
        for _ in range(n):
            self.accel_ev.append((tt, amp * self.u(0.7, 1.3), f, self.u(0.04, 0.08), N_CH))
            tt += self.u(0.5, 0.62)


# --------------------------------------------------------------------------------------------
# Scenarios
# --------------------------------------------------------------------------------------------


def _supplies(w: World, colours: list[str] | tuple[str, ...]) -> dict[str, list[str]]:
    return {c: [f"{c}-{i:02d}" for i in w.rng.permutation(20)] for c in colours}


def _talk(w: World, t0: float, t1: float, level: float) -> None:
    """Stretches of conversation (phrases with pauses) between t0 and t1."""
    t = t0
    while t < t1:
        d = w.u(0.8, 4.0)
        w.talk.append((t, min(t + d, t1), level * w.u(0.5, 1.5)))
        t += d + w.u(0.3, 4.0)


def _spaced(w: World, n: int, start: float, end: float) -> np.ndarray:
    gaps = w.rng.uniform(0.7, 1.3, n)
    return start + (end - start) * np.concatenate(([0.0], np.cumsum(gaps[:-1]))) / gaps.sum()


def build_single(w: World, q: float) -> None:
    """Single throws a few seconds apart (18-22 in 120 s)."""
    n = max(1, round(int(w.rng.integers(18, 23)) * max(w.duration - q - 3.0, 1.0) / 111.5))
    sup = _supplies(w, COLOURS)
    for t in _spaced(w, n, q + w.u(0.3, 1.5), w.duration - 3.0):
        col = COLOURS[int(w.rng.integers(0, 6))]
        w.throw(sup[col].pop(), float(t), aim_sd=w.u(1.5, 3.0))


def build_rapid(w: World, q: float) -> None:
    """Series of cubes dropped one after another from one hand, 0.3-0.8 s apart."""
    sup = _supplies(w, COLOURS)
    t = q + w.u(0.3, 1.2)
    while t < w.duration - 4.0:
        col = COLOURS[int(w.rng.integers(0, 6))]
        if len(sup[col]) < 8:
            sup[col] = [f"{col}-{i:02d}" for i in w.rng.permutation(20)]
        for _ in range(int(w.rng.integers(3, 8))):
            if t > w.duration - 2.0:
                break
            done = w.throw(sup[col].pop(), t, aim_sd=w.u(2.0, 3.5))
            if w.chance(0.08) and sup[col]:  # two slip out of the hand together
                w.throw(sup[col].pop(), t + w.u(0.01, 0.06), aim_sd=3.5)
            t = max(t + w.u(0.3, 0.8), done + 0.25)
        t += w.u(2.5, 5.0)


def build_noisy(w: World, q: float) -> None:
    """Single throws in a lively room: talk, footsteps, machines, knocks on the table."""
    n = max(1, round(int(w.rng.integers(16, 21)) * max(w.duration - q - 3.0, 1.0) / 111.5))
    sup = _supplies(w, COLOURS)
    todo: list[tuple[float, str, str]] = []
    for t in _spaced(w, n, q + w.u(0.3, 1.5), w.duration - 3.0):
        col = COLOURS[int(w.rng.integers(0, 6))]
        todo.append((float(t), "throw", sup[col].pop()))
    span = w.duration - q - 1.0
    if span > 1.0:
        kinds = ["knuckle", "glass", "dice", "elbow", "door"]
        for _ in range(max(1, round(int(w.rng.integers(6, 13)) * span / 114))):
            kind = str(w.rng.choice(kinds, p=[0.3, 0.25, 0.25, 0.12, 0.08]))
            todo.append((q + 0.5 + w.u(0, span - 0.5), "knock", kind))
    # In time order, so a knock only topples what lies there by then.
    for t, what, arg in sorted(todo):
        if what == "throw":
            w.throw(arg, t, aim_sd=w.u(1.5, 3.0))
        else:
            w.table_knock(t, arg)
    if span <= 1.0:
        return
    _talk(w, q + w.u(0.2, 2.0), w.duration, w.u(1.0, 3.0))
    for _ in range(int(w.rng.integers(2, 5))):
        w.footsteps(q + w.u(0, span), int(w.rng.integers(4, 13)))
    if w.chance(0.5):
        w.accel_cont.append(("wash", q + w.u(0, span / 2), w.duration + 1, w.u(0.005, 0.03),
                             w.u(10, 18)))
    if w.chance(0.4):
        t0 = q + w.u(0, span)
        w.accel_cont.append(("truck", t0, t0 + w.u(4, 9), w.u(0.01, 0.05), 0.0))
    for _ in range(int(w.rng.integers(1, 4))):
        t0 = q + w.u(0, span)
        w.accel_cont.append(("scrape", t0, t0 + w.u(0.5, 2.0), w.u(0.02, 0.1), 0.0))


def build_game(w: World, q: float) -> dict[str, Any]:
    """A game of Mord im Arosa from the prologue, as far as the recording lasts."""
    rng, D = w.rng, w.duration
    n_pl = int(rng.integers(3, 6))
    players = [str(c) for c in rng.permutation(COLOURS)[:n_pl]]
    supply = _supplies(w, players)
    sheet = {c: [0] * 8 for c in players}
    on_sheet: dict[str, list[list[str]]] = {c: [[] for _ in range(8)] for c in players}

    def to_sheet(col: str, floor: int) -> None:
        if supply[col]:
            on_sheet[col][floor].append(supply[col].pop())
            sheet[col][floor] += 1

    scenes: list[int] = []
    log: list[dict[str, Any]] = []
    _talk(w, q + w.u(0.5, 2.0), D, w.u(0.5, 1.5))
    t = q + w.u(0.5, 2.0)
    # Prologue: both victims, thrown by one player - often both from one hand at once.
    if w.chance(0.45):
        w.throw("red-0", t)
        w.throw("red-1", t + w.u(0.02, 0.15))
        log.append({"t": t, "do": "victims", "together": True})
        t += 0.3
    else:
        done = w.throw("red-0", t)
        t = max(t + w.u(0.6, 1.6), done + 0.3)
        w.throw("red-1", t)
        log.append({"t": t, "do": "victims", "together": False})
    t += w.u(1.5, 3.5)
    for pl in players:
        for _ in range(2):
            done = w.throw(supply[pl].pop(), t)
            t = max(t + w.u(0.7, 1.8), done + 0.4)
        t += w.u(1.0, 3.0)
    act, turn = 1, 0
    found_victims = 0
    while True:
        inv = players[turn % n_pl]
        t += w.u(2.0, 5.0)  # talk, point, decide
        if t > D - 12.0:
            break
        content = {L: w.resting(L, t) for L in range(8)}
        full = [L for L in range(8) if content[L]]
        action = "inspect" if act == 1 else ("suspect" if w.chance(0.65) else "cover")
        suspects: list[str] = []
        if act == 1:
            vic = [L for L in full if any(r.cube.startswith("red") for r in content[L])]
            k = int(rng.choice(vic)) if vic and w.chance(0.45) else (
                int(rng.choice(full)) if full and w.chance(0.6) else int(rng.integers(0, 8)))
        else:
            others = [p for p in players if p != inv]
            picked = [str(x) for x in rng.choice(others, size=int(rng.integers(1, 3)),
                                                 replace=False)]
            suspects = picked if action == "suspect" else []
            k = int(rng.choice(full)) if full and w.chance(0.6) else int(rng.integers(0, 8))
        w.lift(t, k)
        t_lift = t
        if w.chance(0.7):  # the lifted part is put down beside the tower
            w.impact(t_lift + w.u(0.5, 1.2), 9, PREF * w.u(2.0, 6.0), "table")
        hand_back: list[str] = []
        if w.chance(0.12):
            lifted = [r for j in range(k + 1, 8) for r in w.resting(j, t_lift)]
            if lifted:
                r = lifted[int(rng.integers(0, len(lifted)))]
                if w.fallout(t_lift + w.u(0.1, 0.5), r, k, onto_plate=w.chance(0.5)) == "table":
                    hand_back.append(r.cube)
        t = t_lift + w.u(1.2, 3.0)
        recs = sorted(w.resting(k, t), key=lambda r: r.cube)
        victims = [r for r in recs if r.cube.startswith("red")]
        clues = [r for r in recs if not r.cube.startswith("red")]
        own = sum(r.cube.startswith(inv) for r in clues)
        penalty = 0
        if act == 1:
            if victims:
                scenes = sorted(set(scenes) | {k})
                found_victims += len(victims)
                for r in clues:
                    col = r.cube.split("-")[0]
                    if col != inv and col in supply:
                        to_sheet(col, k)
            else:
                penalty = 1
        elif action == "suspect":
            if k == 0 and own == 0:
                penalty = len(suspects)
            else:
                for s in suspects:
                    mine = sum(r.cube.startswith(s) for r in clues)
                    if mine == 0:
                        penalty += 1
                    for _ in range(mine):
                        to_sheet(s, k)
        else:
            for _ in range(min(own, sheet[inv][k])):
                supply[inv].insert(0, on_sheet[inv][k].pop())
                sheet[inv][k] -= 1
            penalty = 0 if own else 1
        log.append({"t": t_lift, "do": action, "by": inv, "floor": k, "suspects": suspects,
                    "found": [r.cube for r in recs], "penalty": penalty})
        # Everything on the open floor comes out by hand.
        style = rng.random()
        left = list(recs)
        while left:
            if style < 0.35:
                take = left[:4]
            elif style < 0.5:
                take = left[:2]
            else:
                take = left[:1]
            left = left[len(take):]
            t += w.u(0.6, 1.5)
            w.remove(t, take, scoop=len(take) > 1)
        t += w.u(0.5, 1.5)
        w.close(t, k)
        t += w.u(0.8, 2.0)
        again = [r.cube for r in clues] + hand_back
        for _ in range(penalty):
            if supply[inv]:
                again.append(supply[inv].pop())
        for cube in again:
            done = w.throw(cube, t)
            t = max(t + w.u(0.8, 2.0), done + 0.4)
        if act == 1 and found_victims >= 2:
            act = 2
            turn = players.index(inv) + 1
        else:
            turn += 1
        if any(sum(v) >= 10 for v in sheet.values()) or any(not v for v in supply.values()):
            break
    return {"players": players, "crime_scenes": scenes, "sheet": sheet, "log": log,
            "act": act}


# --------------------------------------------------------------------------------------------
# Sensors: table vibration, plates on their cells, HX711s, piezo front ends
# --------------------------------------------------------------------------------------------


def _idx(t: float, n: int) -> int:
    return min(max(int(round((t + PRE_S) * FS)), 0), n - 1)


def _band_noise(rng: np.random.Generator, n: int, lo: float, hi: float) -> np.ndarray:
    if n <= 0:
        return np.zeros(0)
    sos = signal.butter(2, [lo, hi], btype="bandpass", fs=FS, output="sos")
    x = signal.sosfilt(sos, rng.normal(0, 1, n + 200))[200:]
    return x / (np.std(x) + 1e-12)


def synth_accel(w: World, tg: np.ndarray, rng: np.random.Generator
                ) -> tuple[np.ndarray, list[tuple[int, int, np.ndarray]]]:
    """Vertical table acceleration (m/s^2) on the physics grid, and jolts of the lower tower."""
    n = len(tg)
    sos = signal.butter(2, 40.0, fs=FS, output="sos")
    amb = signal.sosfilt(sos, rng.normal(0, 1, n))
    acc = amb * (0.002 / (np.std(amb) + 1e-12))
    jolts: list[tuple[int, int, np.ndarray]] = []
    for t, amp, f, tau, kmax in w.accel_ev:
        i0 = _idx(t, n)
        if t < tg[0] or t > tg[-1]:
            continue
        m = min(int(6 * tau * FS) + 1, n - i0)
        tt = tg[i0:i0 + m] - t
        tt = np.maximum(tt, 0.0)
        wave = amp * np.exp(-tt / tau) * np.sin(2 * math.pi * f * tt)
        if kmax >= N_CH:
            acc[i0:i0 + m] += wave
        else:
            jolts.append((kmax, i0, wave))
    for kind, t0, t1, amp, f in w.accel_cont:
        i0, i1 = _idx(t0, n), _idx(t1, n)
        if i1 <= i0:
            continue
        tt = tg[i0:i1] - t0
        if kind == "wash":  # a spin cycle running up
            ramp = np.minimum(1.0, tt / 15.0)
            freq = f * (0.3 + 0.7 * ramp)
            ph = 2 * math.pi * np.cumsum(freq) * DT
            acc[i0:i1] += amp * ramp * (1 + 0.3 * np.sin(2 * math.pi * 0.05 * tt)) * np.sin(ph)
        else:
            lo, hi = (5.0, 14.0) if kind == "truck" else (20.0, 90.0)
            acc[i0:i1] += amp * np.hanning(i1 - i0) * _band_noise(rng, i1 - i0, lo, hi)
    return acc, jolts


def _resonator(f_hz: float, zeta: float) -> tuple[np.ndarray, np.ndarray]:
    """Plate on its cell: cell force / external force, a 1-DOF mass-spring (prewarped)."""
    wa = 2 * FS * math.tan(2 * math.pi * f_hz / (2 * FS))
    b, a = signal.bilinear([wa * wa], [1.0, 2 * zeta * wa, wa * wa], fs=FS)
    return b, a


def synth_cell_force(w: World, tg: np.ndarray, accel_c: list[np.ndarray],
                     rng: np.random.Generator) -> np.ndarray:
    """Force on each cell in gram-force, relative to the empty plate, on the physics grid."""
    kit = w.kit
    n = len(tg)
    d2 = np.zeros((N_CH, n + 1))
    for plate, t0, t1, dg in w.static:
        i0 = _idx(t0, n)
        i1 = max(_idx(t1, n), i0 + 1)
        slope = dg / (i1 - i0)
        d2[plate, i0] += slope
        d2[plate, i1] -= slope
    F = np.cumsum(np.cumsum(d2[:, :n], axis=1), axis=1)
    for t, src, p, kind, _ in w.impacts:
        if 0 <= src < N_CH and kind in LOAD_KINDS and tg[0] <= t <= tg[-1]:
            F[src, _idx(t, n)] += p * LOAD_KINDS[kind] / DT / (G * 1e-3)
    sos_trem = signal.butter(2, 4.0, fs=FS, output="sos")
    for plate, t0, t1, peak in w.hands:
        i0, i1 = _idx(t0, n), _idx(t1, n)
        m = i1 - i0
        if m < 4:
            continue
        tt = np.arange(m) * DT
        env = np.minimum(1.0, tt / 0.12) * np.minimum(1.0, (m * DT - tt) / 0.05)
        trem = signal.sosfilt(sos_trem, rng.normal(0, 1, m + 400))[400:]
        trem /= np.std(trem) + 1e-12
        F[plate, i0:i1] += peak * np.clip(env, 0, 1) * (1 + 0.25 * trem)
    for c in range(N_CH):
        F[c] += kit.plate_g[c] * accel_c[c] / G
        b, a = _resonator(float(kit.f_plate[c]), float(kit.zeta[c]))
        F[c] = signal.lfilter(b, a, F[c])
        F[c] += np.cumsum(rng.normal(0, kit.drift_g_rts[c] * math.sqrt(DT), n))
    for plate, t0, t1, gf in w.strain:
        i0, i1 = _idx(t0, n), _idx(t1, n)
        if i1 - i0 < 2:
            continue
        tt = np.arange(i1 - i0) * DT
        env = np.clip(np.minimum(tt / 0.15, (tt[-1] - tt) / 0.15), 0, 1)
        F[plate, i0:i1] += gf * env
    for plate, t, gf in w.slips:
        F[plate, _idx(t, n):] += gf
    return F


def power_intervals(toggles: list[tuple[float, bool]]) -> list[tuple[float, float]]:
    """Intervals (on, off) a module's electronics are powered; on = -inf: since before."""
    out, state, t_on = [], True, -math.inf
    for t, on in toggles:
        if on and not state:
            t_on, state = t, True
        elif not on and state:
            out.append((t_on, t))
            state = False
    if state:
        out.append((t_on, math.inf))
    return out


def sinc_kernel(period_s: float, order: int = 4) -> np.ndarray:
    """HX711 decimation filter: ``order`` boxcars of one conversion period, fractional ends."""
    m = period_s * FS
    k = int(math.floor(m))
    box = np.ones(k + 1)
    box[-1] = m - k
    box /= box.sum()
    out = box
    for _ in range(order - 1):
        out = np.convolve(out, box)
    return out


@dataclass
class Chip:
    """One HX711's conversions: completion times (stream s), counts, power-off time after each."""

    t: np.ndarray
    counts: np.ndarray
    off: np.ndarray


def hx711_conversions(w: World, F: np.ndarray, tg: np.ndarray, rng: np.random.Generator,
                      t_first: float) -> list[Chip]:
    """Every conversion each chip completes from ``t_first`` on, with its reading in counts."""
    kit = w.kit
    n = len(tg)
    chips = []
    for c in range(N_CH):
        P = 1.0 / kit.hx_rate[c]
        ker = sinc_kernel(P)
        kl = len(ker)
        kc = np.cumsum(ker)
        y = signal.oaconvolve(F[c], ker)[:n]
        times, offs, cnts = [], [], []
        theta_off, last_off = 1.0, -math.inf  # thermal state (1 = warm) when power went
        tau = float(kit.warm_tau[c])
        for j, (on, off) in enumerate(power_intervals(w.toggles[c])):
            if on == -math.inf:
                start, theta_on = t_first + kit.hx_phase[c] * P, 1.0
            else:
                start = on + float(rng.uniform(0.2, 1.0)) * P
                theta_on = theta_off * math.exp(-(on - last_off) / tau)

            def theta(t: np.ndarray | float, on: float = on, theta_on: float = theta_on,
                      tau: float = tau) -> np.ndarray | float:
                if on == -math.inf:
                    return np.ones_like(t) if isinstance(t, np.ndarray) else 1.0
                return 1 - (1 - theta_on) * np.exp(-(np.asarray(t) - on) / tau)

            if off < math.inf:
                theta_off, last_off = float(theta(off)), off
            ts = np.arange(start, min(off, tg[-1]), P)
            if ts.size == 0:
                continue
            val = np.interp(ts, tg, y)
            weight = np.ones(ts.size)
            if on != -math.inf:
                for i in np.flatnonzero(ts - on < kl * DT):
                    ii = int(round((ts[i] - tg[0]) * FS))
                    jmax = min(int((ts[i] - on) * FS), kl - 1, ii)
                    seg = F[c, ii - jmax:ii + 1][::-1]
                    val[i] = float(ker[:jmax + 1] @ seg)
                    weight[i] = kc[jmax]
            val[ts < tg[0] + kl * DT] = np.nan
            rep = 0.0 if j == 0 else float(rng.normal(0, kit.repower_g[c]))
            off_g = kit.warm_g[c] * (1 - theta(ts)) + rep
            cpg = kit.cpg[c]
            cnt = cpg * val + (kit.zero_counts[c] + cpg * off_g) * weight \
                + rng.normal(0, kit.noise_g[c] * abs(cpg), ts.size)
            times.append(ts)
            cnts.append(cnt)
            offs.append(np.full(ts.size, off))
        t_all = np.concatenate(times) if times else np.zeros(0)
        c_all = np.concatenate(cnts) if cnts else np.zeros(0)
        c_all = np.where(np.isnan(c_all), 0, np.clip(np.rint(c_all), -(1 << 23), (1 << 23) - 1))
        chips.append(Chip(t_all, c_all.astype(np.int64),
                          np.concatenate(offs) if offs else np.zeros(0)))
    return chips


def _chan_amps(kit: Kit, src: int, kind: str, p: float, posf: float) -> np.ndarray:
    s = (p / PREF) ** 0.9 * KIND_PIEZO[kind][0]
    A = np.zeros(N_CH)
    lv = np.arange(N_CH)
    if 0 <= src < N_CH:
        d = lv - src
        x = np.where(d > 0, kit.x_up ** np.abs(d), kit.x_down ** np.abs(d))
        A = s * kit.pz_gain * x
        A[src] *= posf
    elif src == 8:  # roof of module 7: into plate 7 through module 7's walls
        A = s * kit.pz_gain * 0.4 * kit.x_down ** (7 - lv)
    else:  # the table, through the base
        A = s * kit.pz_gain * kit.table_coupling * 0.75 ** lv
    return A


def synth_piezo(w: World, n_sets: int, accel_c: list[np.ndarray],
                rng: np.random.Generator) -> np.ndarray:
    """ADC codes (n_sets, 8): each channel sampled at its own instant within a set."""
    kit = w.kit
    ts = np.arange(n_sets) * DT
    n_pre = int(round(PRE_S * FS))
    ev = np.zeros((N_CH, n_sets))
    # hands on card and conversation in the room
    for t0, t1, amp, gains in w.rustle:
        i0, i1 = max(int(t0 * FS), 0), min(int(t1 * FS), n_sets)
        if i1 - i0 < 8:
            continue
        x = _band_noise(rng, i1 - i0, 200.0, 950.0) * np.hanning(i1 - i0) * amp
        ev[:, i0:i1] += gains[:, None] * x[None, :]
    ac = np.zeros(n_sets)
    for t0, t1, lvl in w.talk:
        i0, i1 = max(int(t0 * FS), 0), min(int(t1 * FS), n_sets)
        if i1 - i0 < 16:
            continue
        tt = np.arange(i1 - i0) * DT
        syl = np.abs(np.sin(2 * math.pi * float(rng.uniform(2.0, 3.0)) * tt)) ** 2
        ac[i0:i1] += lvl * np.hanning(i1 - i0) * syl * _band_noise(rng, i1 - i0, 150.0, 900.0)
    # strikes: modes of each receiving plate, evaluated at that channel's own sample instants
    pivot = 600.0
    for t, src, p, kind, posf in w.impacts:
        if t < -0.2 or t > w.duration:
            continue
        A = _chan_amps(kit, src, kind, p, posf)
        tilt = KIND_PIEZO[kind][1]
        for c in (int(x) for x in np.flatnonzero(A > 0.25)):
            direct = src == c
            f = kit.modes_f[c]
            tau = kit.modes_tau[c]
            wts = rng.rayleigh(1.0, 5) * (f / pivot) ** (tilt if direct else tilt - 0.6)
            wts *= np.where(rng.random(5) < 0.5, -1.0, 1.0)
            wts /= math.sqrt(float(wts @ wts)) + 1e-12
            delay = 0.0 if (direct or src > 7) else kit.x_delay * abs(int(c) - src)
            t_s = t + delay
            i0 = max(int(math.ceil((t_s - kit.skew_s[c]) * FS)), 0)
            m = int(float(tau.max()) * math.log(max(A[c], 0.3) / 0.2) * FS) + 4
            m = min(m, 600, n_sets - i0)
            if m <= 0:
                continue
            tt = (i0 + np.arange(m)) * DT + kit.skew_s[c] - t_s
            onset = 1 - np.exp(-tt / (5e-5 if direct else 6e-4))
            wave = (wts[None, :] * np.exp(-tt[:, None] / tau[None, :])
                    * np.sin(2 * math.pi * f[None, :] * tt[:, None])).sum(axis=1)
            ev[c, i0:i0 + m] += A[c] * onset * wave
    b_hp, a_hp = signal.butter(1, kit.f_hp, btype="highpass", fs=FS)
    out = np.empty((n_sets, N_CH), dtype=np.uint16)
    fm = kit.mains_hz * (1 + 2e-4 * np.sin(2 * math.pi * ts / 97.0))
    for c in range(N_CH):
        tc = ts + kit.skew_s[c]
        conn = np.ones(n_sets, dtype=bool)
        pops = np.zeros(n_sets)
        for tt_, on in w.toggles[c]:
            i = min(max(int(math.ceil((tt_ - kit.skew_s[c]) * FS)), 0), n_sets)
            conn[i:] = on
            if i < n_sets:
                m = min(200, n_sets - i)
                pops[i:i + m] += float(rng.uniform(40, 250)) * float(rng.choice([-1.0, 1.0])) \
                    * np.exp(-(tc[i:i + m] - tt_) / 0.01)
        ph = 2 * math.pi * np.cumsum(fm) * DT + kit.hum_phase[c]
        ph = ph + 2 * math.pi * fm * kit.skew_s[c]
        hum = kit.hum[c] * w.hum_gain * (np.sin(ph) + kit.hum_h3 * np.sin(3 * ph + 0.7)
                                         + kit.hum_h5 * np.sin(5 * ph + 1.9))
        vib = signal.lfilter(b_hp, a_hp, accel_c[c])[n_pre:n_pre + n_sets] * kit.vib_lsb[c]
        sig = vib + ac * kit.acoustic[c] + ev[c]
        v = (kit.bias[c] + rng.normal(0, kit.pz_noise[c], n_sets) * np.where(conn, 1.0, 1.5)
             + np.where(conn, sig, 0.0) + hum * np.where(conn, 1.0, kit.hum_open[c]) + pops)
        out[:, c] = np.clip(np.rint(v), 0, 1023).astype(np.uint16)
    return out


# --------------------------------------------------------------------------------------------
# Firmware: the ATmega328P main loop as an event simulation, then the bytes
# --------------------------------------------------------------------------------------------

BYTE_S = 10e-6  # 8N1 at 1 Mbaud
CPU_PER_BYTE_S = 1.5e-6  # COBS + CRC + copy into the TX ring on a 16 MHz AVR
ROUND_S = 150e-6  # 25 SCK pulses, eight DOUT bits demultiplexed per pulse, ISRs in between
RING_SETS = 40  # ADC ring buffer: 40 sets x 16 bytes of the 2 KB SRAM
ISR_SHARE = 0.088  # 16 kHz ADC interrupts at ~5.5 us each
FLAG_ABSENT, FLAG_CLIP, FLAG_BEACON, FLAG_DEADLINE = 1, 2, 4, 8


@dataclass
class Msg:
    """One message as the main loop wrote it."""

    kind: str
    t: float  # stream seconds (physics axis) when written
    stamp: int = 0  # absolute device microseconds (t_us before wrapping)
    i0: int = 0
    n: int = 0
    valid: int = 0
    vals: list[int] | None = None
    status: tuple[int, ...] | None = None
    load_rate: int = 0


def run_firmware(kit: Kit, chips: list[Chip], pz: np.ndarray, duration: float,
                 rng: np.random.Generator) -> tuple[list[Msg], dict[str, Any]]:
    """Simulate the firmware's main loop; returns the messages in wire order."""
    n_sets = len(pz)
    if kit.auto_reset:
        hello_at = -float(rng.uniform(0.0003, 0.0008))
        s_hello: float | None = hello_at
        s_start = hello_at - 1.0  # setup measures the HX711 round rate for one second
        t0_us = (kit.boot_s - s_start) * 1e6
        stream_from = hello_at
        meas = (s_start, hello_at)
    else:
        s_hello = None
        s_start = -1.2
        t0_us = kit.uptime0_s * 1e6
        stream_from = 0.0
        meas = (-1.2, -0.2)
    per_s = 1e6
    codes = pz.reshape(n_sets, N_CH)
    clip_sec = [bool(np.any((blk == 0) | (blk == 1023)))
                for blk in np.array_split(codes, max(1, int(math.ceil(n_sets / FS))))]
    ct = [ch.t.tolist() for ch in chips]
    cv = [ch.counts.tolist() for ch in chips]
    coff = [ch.off.tolist() for ch in chips]
    ptr = [0] * N_CH
    last_read = [-math.inf] * N_CH
    last_ok = [s_start] * N_CH
    present = [True] * N_CH
    rejoin = [0] * N_CH
    W = kit.hx_deadline_us * 1e-6
    ABS = kit.hx_absent_us * 1e-6
    conv = kit.set_conv_us * 1e-6
    msgs: list[Msg] = []
    pending: float | None = None
    sent = 0
    tx_free = s_start
    overruns = timeouts = 0
    meas_rounds: list[float] = []

    def measured_rate() -> int:
        # setup skips the first rounds (the chips start in step) and times the rest
        r = meas_rounds[8:]
        return int(round((len(r) - 1) / (r[-1] - r[0]))) if len(r) > 2 else 80

    busy = 0.0
    deadline_hit = False
    load_rate = 80
    rate_known = False
    up0_ms = t0_us / 1000.0
    next_status = ((math.floor((up0_ms + stream_from * 1000) / 1000) + 1) * 1000 - up0_ms) / 1000
    next_beacon = float(rng.uniform(0.05, 2.0)) if s_hello is None else math.inf
    hello_done = s_hello is None
    t = s_start

    n_jit = 4099
    jit = rng.random(n_jit).tolist()  # loop-timing and ISR-latency jitter, drawn once
    ji = 0

    def stamp(ts: float) -> int:
        nonlocal ji
        ji += 1
        return int((t0_us + ts * per_s + 2.0 + kit.isr_jitter_us * jit[ji % n_jit]) // 4) * 4

    def write(ts: float, nbytes: int) -> float:
        nonlocal tx_free, busy
        start = max(tx_free, ts)
        tx_free = start + nbytes * BYTE_S
        back = tx_free - kit.tx_buf * BYTE_S  # Serial.write blocks while the ring is full
        after = max(ts + nbytes * CPU_PER_BYTE_S, back)
        busy += after - ts
        return after

    hx_wake = -math.inf  # readiness changes only at a conversion or a deadline
    ready: list[int] = []
    need = list(range(N_CH))
    while t < duration:
        did = False
        streaming = hello_done and t >= stream_from
        if t >= hx_wake:
            ready = []
            nxt = math.inf
            for c in range(N_CH):
                tc = ct[c]
                p = ptr[c]
                while p < len(tc) and tc[p] <= t:
                    p += 1
                ptr[c] = p
                if p > 0 and tc[p - 1] > last_read[c] and coff[c][p - 1] > t:
                    ready.append(c)
            need = [c for c in range(N_CH) if present[c]]
            if ready:
                if pending is None:
                    pending = t
                if all(c in ready for c in need) or t - pending >= W:
                    valid, vals = 0, [0] * N_CH
                    for c in ready:
                        last_read[c] = last_ok[c] = t
                        if not present[c]:
                            rejoin[c] += 1
                            if rejoin[c] <= kit.hx_discard:
                                continue  # a chip just powered up: first readings dropped
                            present[c], rejoin[c] = True, 0
                        valid |= 1 << c
                        vals[c] = cv[c][ptr[c] - 1]
                    missed = [c for c in need if c not in ready]
                    if missed:
                        timeouts += len(missed)
                        deadline_hit = True
                        for c in missed:
                            if t - last_ok[c] > ABS:
                                present[c], rejoin[c] = False, 0
                    pending = None
                    ready = []
                    t_round = t
                    t += ROUND_S
                    busy += ROUND_S
                    if meas[0] <= t_round < meas[1]:
                        meas_rounds.append(t_round)
                    if streaming:
                        msgs.append(Msg("load", t_round, stamp(t_round), valid=valid, vals=vals))
                        t = write(t, 36)
                    did = True
            if pending is None:  # the first chip to turn ready starts a round
                for c in range(N_CH):
                    if ptr[c] < len(ct[c]) and ct[c][ptr[c]] < nxt:
                        nxt = ct[c][ptr[c]]
                hx_wake = nxt
            else:  # the round waits for the last present chip, or the deadline
                last = -math.inf
                for c in need:
                    if c not in ready:
                        last = max(last, ct[c][ptr[c]] if ptr[c] < len(ct[c]) else math.inf)
                hx_wake = min(last, pending + W)
        if not hello_done and s_hello is not None and t >= s_hello:
            load_rate = measured_rate()
            msgs.append(Msg("hello", t, load_rate=load_rate))
            t = write(t, 24)
            hello_done, did = True, True
        elif s_hello is None and t >= meas[1] and not rate_known:
            load_rate, rate_known = measured_rate(), True
        streaming = hello_done and t >= stream_from
        if streaming and t >= next_beacon:
            if t >= 0:
                msgs.append(Msg("hello", t, load_rate=load_rate))
                t = write(t, 24)
                did = True
            next_beacon += kit.hello_beacon_s or math.inf
        if streaming and t >= 0:
            avail = min(max(int(math.floor((t - conv) * FS)) + 1, 0), n_sets)
            if avail - sent > RING_SETS:
                overruns += avail - sent - RING_SETS
                sent = avail - RING_SETS
            if avail - sent >= kit.batch_n:
                n = min(avail - sent, 14)
                st = stamp(sent * DT)
                msgs.append(Msg("piezo", t, st, i0=sent, n=n))
                sent += n
                t = write(t, 12 + 16 * n)
                did = True
        if streaming and t >= next_status:
            sec = min(max(int(t) - 1, 0), len(clip_sec) - 1)
            flags = ((FLAG_ABSENT if not all(present) else 0)
                     | (FLAG_CLIP if clip_sec[sec] else 0)
                     | (FLAG_BEACON if kit.hello_beacon_s else 0)
                     | (FLAG_DEADLINE if deadline_hit else 0))
            cpu = min(99, int(round(100 * (ISR_SHARE + busy))))
            up_ms = int((t0_us + t * per_s) // 1000)
            msgs.append(Msg("status", t, status=(up_ms & 0xFFFFFFFF, overruns & HWORD, 0,
                                                 timeouts & HWORD, cpu, flags)))
            busy, deadline_hit = 0.0, False
            next_status += 1.0
            t = write(t, 19)
            did = True
        if did:
            t += 3e-6 + 7e-6 * float(jit[ji % n_jit])
            ji += 1
            continue
        cands = [duration, next_status, next_beacon, hx_wake]
        if s_hello is not None and not hello_done:
            cands.append(s_hello)
        if hello_done:
            cands.append(max(sent + kit.batch_n - 1, 0) * DT + conv)
        t = max(min(cands), t) + 2e-6 + 10e-6 * float(jit[ji % n_jit])
        ji += 1
    info = {"load_rate_hz": load_rate, "t0_us": t0_us, "piezo_overruns": overruns,
            "load_timeouts": timeouts, "sets_sent": sent}
    return msgs, info


def _body(kit: Kit, m: Msg, pz: np.ndarray) -> tuple[int, bytes]:
    if m.kind == "hello":
        return 0x01, struct.pack("<BBBBBBHHB", 1, *kit.fw, N_CH, N_CH, FS, m.load_rate, 10) \
            + kit.device_id
    if m.kind == "piezo":
        return 0x02, struct.pack("<IB", m.stamp & 0xFFFFFFFF, m.n) \
            + pz[m.i0:m.i0 + m.n].astype("<u2").tobytes()
    if m.kind == "load":
        v = np.asarray(m.vals, dtype="<i4").view(np.uint8).reshape(N_CH, 4)[:, :3]
        return 0x03, struct.pack("<IB", m.stamp & 0xFFFFFFFF, m.valid) + v.tobytes()
    assert m.status is not None
    return 0x04, struct.pack("<IHHHBB", *m.status)


def serialize(kit: Kit, msgs: list[Msg], pz: np.ndarray, rng: np.random.Generator
              ) -> tuple[bytes, int]:
    """The wire bytes, and the absolute stamp of the first PIEZO or LOAD message."""
    seq0 = 0 if kit.auto_reset else int(rng.integers(0, 65536))
    parts: list[bytes] = []
    if kit.lead_break:
        parts.append(b"\x00")  # the USB bridge sees a break while DTR resets the MCU
    if not kit.auto_reset:
        # The port was opened on a running tower: the recording starts inside a frame.
        quiet = np.clip(np.rint(kit.bias + rng.normal(0, 1, (kit.batch_n, N_CH))), 0, 1023)
        body = struct.pack("<IB", int(kit.uptime0_s * 1e6 - kit.batch_n * 500) & 0xFFFFFFFF,
                           kit.batch_n) + quiet.astype("<u2").tobytes()
        fr = frame_message(0x02, seq0 - 1, body)
        cut = int(rng.integers(2, len(fr) - 1))
        tail = fr[cut:]
        while len(tail) > 1 and decode_stream(tail)["order"]:
            tail = tail[1:]  # make sure the torn frame cannot pass for a message
        parts.append(tail)
    first = None
    for i, m in enumerate(msgs):
        mtype, body = _body(kit, m, pz)
        parts.append(frame_message(mtype, seq0 + i, body))
        if first is None and m.kind in ("piezo", "load"):
            first = m.stamp
    return b"".join(parts), int(first if first is not None else 0)


# --------------------------------------------------------------------------------------------
# One recording
# --------------------------------------------------------------------------------------------

BUILDERS = {"single": build_single, "rapid": build_rapid, "noisy": build_noisy,
            "game": build_game}


def _r(x: float) -> float:
    return round(float(x), 6)


def generate(seed: int, scenario: str, duration: float) -> tuple[bytes, dict[str, Any]]:
    """Bytes and truth of one recording (deterministic in seed, scenario, duration)."""
    if scenario not in SCENARIOS:
        raise ValueError(f"unknown scenario {scenario!r}")
    kit = Kit(seed)
    sci = SCENARIOS.index(scenario)
    w = World(kit, np.random.default_rng([seed, sci, 0x5602]), float(duration))
    q = w.u(4.0, 6.99)
    if scenario == "noisy":
        w.hum_gain = w.u(1.5, 3.0)  # a dimmer and a laptop charger near the table
    info = BUILDERS[scenario](w, q) or {}
    nrng = np.random.default_rng([seed, sci, 0x5603])
    n_grid = int(round((PRE_S + duration + 0.1) * FS))
    tg = -PRE_S + np.arange(n_grid) * DT
    acc, jolts = synth_accel(w, tg, nrng)
    accel_c = []
    for c in range(N_CH):
        a = acc.copy()
        for kmax, i0, wave in jolts:
            if c <= kmax:
                a[i0:i0 + len(wave)] += wave
        accel_c.append(a * kit.vib_gain[c])
    F = synth_cell_force(w, tg, accel_c, nrng)
    chips = hx711_conversions(w, F, tg, nrng, t_first=-1.3)
    n_sets = int(round(duration * FS))
    pz = synth_piezo(w, n_sets, accel_c, nrng)
    msgs, fw = run_firmware(kit, chips, pz, float(duration), nrng)
    raw, first_stamp = serialize(kit, msgs, pz, nrng)
    off = (fw["t0_us"] - first_stamp) / 1e6  # physics seconds -> stream seconds
    truth = _truth(w, scenario, seed, float(duration), off, fw, q, info)
    return raw, truth


def _truth(w: World, scenario: str, seed: int, duration: float, off: float,
           fw: dict[str, Any], q: float, info: dict[str, Any]) -> dict[str, Any]:
    def keep(t: float) -> bool:
        return 0.0 <= t + off < duration

    def shift(ev: dict[str, Any], keys: tuple[str, ...] = ("t",)) -> dict[str, Any]:
        out = {}
        for k, v in ev.items():
            if k in keys or k == "t_first_impact" or k == "t_release":
                out[k] = _r(v + off)
            elif isinstance(v, float):
                out[k] = round(v, 4)
            else:
                out[k] = v
        return out

    landings = sorted((shift(x) for x in w.landings if keep(x["t"])), key=lambda x: x["t"])
    kit = w.kit
    tower = kit.describe()
    tower.update({"load_rate_hz": fw["load_rate_hz"], "piezo_rate_hz": FS,
                  "stream_offset_s": _r(off), "quiet_until_s": _r(q + off),
                  "load_timeouts": fw["load_timeouts"], "piezo_overruns": fw["piezo_overruns"]})
    doc: dict[str, Any] = {
        "format": "towerear-crosscheck-truth/1",
        "model": "V",
        "scenario": scenario,
        "seed": seed,
        "duration_s": duration,
        "cells": kit.cells,
        "landings": landings,
        "knockdowns": sorted((shift(x) for x in w.knockdowns if keep(x["t"])),
                             key=lambda x: x["t"]),
        "removals": sorted((shift(x) for x in w.removals if keep(x["t"])), key=lambda x: x["t"]),
        "lifts": sorted((shift(x) for x in w.lifts if keep(x["t"])), key=lambda x: x["t"]),
        "closes": sorted((shift(x) for x in w.closes if keep(x["t"])), key=lambda x: x["t"]),
        "knocks": sorted((shift(x) for x in w.knocks if keep(x["t"])), key=lambda x: x["t"]),
        "misses": sorted((shift(x) for x in w.misses if keep(x["t"])), key=lambda x: x["t"]),
        "fallouts": sorted((shift(x) for x in w.fallouts if keep(x["t"])), key=lambda x: x["t"]),
        "tower": tower,
    }
    if scenario == "game":
        doc["game"] = {"players": info["players"], "crime_scenes": info["crime_scenes"],
                       "act": info["act"],
                       "turns": [shift(x) for x in info["log"] if keep(x["t"])]}
    return doc


# --------------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------------


def _job(args: tuple[str, int, str, float]) -> str:
    out, seed, scenario, duration = args
    raw, truth = generate(seed, scenario, duration)
    base = Path(out) / f"{scenario}_t{seed}"
    base.with_suffix(".bin").write_bytes(raw)
    Path(str(base) + ".truth.json").write_text(json.dumps(truth, indent=1) + "\n")
    return base.name


def main(argv: list[str] | None = None) -> int:
    """Command line entry point."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
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
    if args.towers < 1 or args.duration < 8.0:
        print("need --towers >= 1 and --duration >= 8 s", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    jobs = [(str(args.out), seed, sc, args.duration)
            for seed in range(args.first_seed, args.first_seed + args.towers)
            for sc in args.scenarios]
    if args.workers > 1 and len(jobs) > 1:
        from multiprocessing import Pool

        with Pool(args.workers) as pool:
            for name in pool.imap_unordered(_job, jobs):
                print(name, file=sys.stderr)
    else:
        for job in jobs:
            print(_job(job), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
