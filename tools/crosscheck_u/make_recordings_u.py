#!/usr/bin/env python3
"""Independent simulator "U" of the sensor-equipped Mord im Arosa tower.

Written blind from design.md, contracts.md sections 1-3 and the rule texts:
it imports no project code (numpy and scipy only) and writes recordings
(device->host bytes, contracts.md sections 1-2) plus a truth JSON for each.

Usage:
    make_recordings_u.py --out DIR --towers N --first-seed S --duration SECONDS
                         [--scenarios single rapid noisy game] [--workers 2]

The physical model and every choice in it are documented in README.md next to
this file.
"""

from __future__ import annotations

import argparse
import binascii
import json
import math
import os
import struct
import sys
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import numpy as np
from scipy import signal

SCENARIOS = ("single", "rapid", "noisy", "game")
TRUTH_FORMAT = "towerear-crosscheck-truth/1"
GRAV = 9.81
N_CH = 8
FS_LOAD = 2000.0  # internal grid (device seconds) of the mechanical/load model

# ---------------------------------------------------------------------------
# wire protocol (contracts.md section 1)
# ---------------------------------------------------------------------------


def _crc_table() -> list[int]:
    table = []
    for byte in range(256):
        crc = byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
            crc &= 0xFFFF
        table.append(crc)
    return table


_CRC_TABLE = _crc_table()


def crc16_ccitt_false(data: bytes) -> int:
    """CRC-16/CCITT-FALSE, own table-driven implementation (reference)."""
    crc = 0xFFFF
    for b in data:
        crc = ((crc << 8) & 0xFFFF) ^ _CRC_TABLE[((crc >> 8) ^ b) & 0xFF]
    return crc


def crc16_fast(data: bytes) -> int:
    """Same CRC via the C implementation in the standard library (hot path)."""
    return binascii.crc_hqx(data, 0xFFFF)


def cobs_encode(data: bytes) -> bytes:
    """Consistent-overhead byte stuffing (no trailing delimiter)."""
    out = bytearray()
    chunks = data.split(b"\x00")
    last = len(chunks) - 1
    for i, chunk in enumerate(chunks):
        while len(chunk) >= 254:
            out.append(0xFF)
            out += chunk[:254]
            chunk = chunk[254:]
            if not chunk and i == last:
                return bytes(out)
        out.append(len(chunk) + 1)
        out += chunk
    return bytes(out)


def cobs_decode(enc: bytes) -> bytes:
    """Inverse of cobs_encode; raises ValueError on malformed input."""
    out = bytearray()
    i = 0
    n = len(enc)
    while i < n:
        code = enc[i]
        if code == 0:
            raise ValueError("zero byte inside COBS frame")
        i += 1
        end = i + code - 1
        if end > n:
            raise ValueError("COBS block runs past frame end")
        out += enc[i:end]
        i = end
        if code != 0xFF and i < n:
            out.append(0)
    return bytes(out)


def frame_message(mtype: int, seq: int, body: bytes) -> bytes:
    msg = struct.pack("<BH", mtype, seq & 0xFFFF) + body
    msg += struct.pack("<H", crc16_fast(msg))
    if len(msg) > 254:
        raise ValueError("message longer than 254 bytes")
    return cobs_encode(msg) + b"\x00"


def decode_stream(raw: bytes) -> dict[str, Any]:
    """Own reference decoder: frames, CRC, sequence, message fields.

    Bytes before the first 0x00 are treated as a mid-frame start (not counted
    as damage), as contracts.md allows.
    """
    res: dict[str, Any] = {
        "crc_errors": 0,
        "framing_errors": 0,
        "seq_gaps": 0,
        "unknown_types": 0,
        "pre_sync_bytes": 0,
        "hello": None,
        "first_type": None,
        "piezo_t_us": [],
        "piezo": [],
        "load_t_us": [],
        "load_valid": [],
        "load": [],
        "status": [],
        "n_messages": 0,
    }
    first_zero = raw.find(b"\x00")
    if first_zero < 0:
        res["pre_sync_bytes"] = len(raw)
        return res
    res["pre_sync_bytes"] = first_zero
    frames = raw[first_zero + 1 :].split(b"\x00")
    if frames and frames[-1] == b"":
        frames.pop()
    else:
        # trailing partial frame: recording cut mid-frame, not damage
        frames = frames[:-1]
    last_seq: int | None = None
    n_piezo = N_CH
    n_load = N_CH
    for fr in frames:
        if not fr:
            continue
        try:
            msg = cobs_decode(fr)
        except ValueError:
            res["framing_errors"] += 1
            continue
        if len(msg) < 5:
            res["framing_errors"] += 1
            continue
        if crc16_fast(msg[:-2]) != struct.unpack_from("<H", msg, len(msg) - 2)[0]:
            res["crc_errors"] += 1
            continue
        mtype, seq = struct.unpack_from("<BH", msg, 0)
        if last_seq is not None and seq != ((last_seq + 1) & 0xFFFF):
            res["seq_gaps"] += 1
        last_seq = seq
        res["n_messages"] += 1
        if res["first_type"] is None:
            res["first_type"] = mtype
        body = msg[3:-2]
        if mtype == 0x01:
            f = struct.unpack_from("<BBBBBBHHB", body, 0)
            res["hello"] = {
                "proto": f[0],
                "fw": f[1:4],
                "n_piezo": f[4],
                "n_load": f[5],
                "piezo_rate_hz": f[6],
                "load_rate_hz": f[7],
                "adc_bits": f[8],
                "device_id": body[11:19].hex(),
            }
            n_piezo, n_load = f[4], f[5]
        elif mtype == 0x02:
            t_us, n = struct.unpack_from("<IB", body, 0)
            arr = np.frombuffer(body, dtype="<u2", offset=5, count=n * n_piezo)
            res["piezo_t_us"].append((t_us, n))
            res["piezo"].append(arr.reshape(n, n_piezo))
        elif mtype == 0x03:
            t_us, valid = struct.unpack_from("<IB", body, 0)
            raw24 = np.frombuffer(body, dtype=np.uint8, offset=5, count=3 * n_load)
            raw24 = raw24.reshape(n_load, 3).astype(np.int32)
            val = raw24[:, 0] | (raw24[:, 1] << 8) | (raw24[:, 2] << 16)
            val = np.where(val >= (1 << 23), val - (1 << 24), val)
            res["load_t_us"].append(t_us)
            res["load_valid"].append(valid)
            res["load"].append(val)
        elif mtype == 0x04:
            res["status"].append(struct.unpack_from("<IHHHBB", body, 0))
        elif mtype in (0x05, 0x06):
            pass
        else:
            res["unknown_types"] += 1
    return res


# ---------------------------------------------------------------------------
# the kit (depends on the seed only)
# ---------------------------------------------------------------------------

# Canonical geometry of the cardboard tower (metres). Plate L>=1 is the roof of
# module L-1 with a square hole; index 8 is the roof of module 7 (the entry
# shaft, not sensed). Holes get smaller upwards and are not quite aligned.
HOLE_CENTRE = {
    8: (0.0000, 0.0000),
    7: (0.0053, -0.0023),
    6: (-0.0008, -0.0052),
    5: (-0.0041, 0.0014),
    4: (0.0013, 0.0063),
    3: (0.0077, 0.0022),
    2: (0.0034, -0.0076),
    1: (-0.0079, -0.0034),
}
HOLE_HALF = {8: 0.0085, 7: 0.0080, 6: 0.0085, 5: 0.0090, 4: 0.0095, 3: 0.0100, 2: 0.0105, 1: 0.0085}
WALL_HALF = 0.045  # inner half-width of a module (square, ~9 cm inside)

CELL_TYPES = [
    # name, capacity g, sensitivity mV/V nominal, tolerance, deflection at capacity (m)
    ("bar 100 g, 1.0 mV/V (generic aluminium)", 100.0, 1.0, 0.10, 0.00030),
    ("bar 100 g, 0.6 mV/V (TAL221 class)", 100.0, 0.6, 0.15, 0.00020),
    ("bar 200 g, 1.0 mV/V", 200.0, 1.0, 0.10, 0.00025),
    ("bar 100 g, 0.8 mV/V", 100.0, 0.8, 0.12, 0.00030),
]
CELL_MOUNTS = {
    # position error sd, shunt (fraction to walls), slip prob, creep frac sd, Q range
    "screwed single-point platform": (0.010, (0.00, 0.02), 0.03, 0.006, (6.0, 15.0)),
    "plate on foam pad over cell": (0.025, (0.00, 0.05), 0.10, 0.020, (2.0, 4.0)),
    "plate glued, edges touch walls": (0.060, (0.03, 0.15), 0.40, 0.030, (3.0, 8.0)),
}
PIEZO_DISCS = {
    # diameter mm: (relative sensitivity, capacitance nF, mode frequency factor)
    "20 mm brass": (0.6, 10.0, 1.25),
    "27 mm brass": (1.0, 20.0, 1.0),
    "35 mm brass": (1.5, 32.0, 0.85),
}
PIEZO_MOUNTS = {
    # sensitivity, extra damping factor, high-frequency roll-off (Hz)
    "cyanoacrylate glue": (1.3, 1.0, 6000.0),
    "hot glue": (1.0, 1.4, 2500.0),
    "double-sided foam tape": (0.5, 2.2, 900.0),
    "blu-tack": (0.55, 2.0, 1200.0),
}


def _choice(rng: np.random.Generator, items: list[Any], p: list[float] | None = None) -> Any:
    return items[int(rng.choice(len(items), p=p))]


def make_kit(seed: int) -> dict[str, Any]:
    """Draw one physical kit: tower, cubes, sensors, electronics, firmware."""
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), 0x5EED, 0x0055]))
    kit: dict[str, Any] = {"seed": int(seed)}
    # cubes: beech/pine with paint, 8-10 mm
    edge = rng.uniform(0.0085, 0.0095)
    dens = rng.uniform(0.45, 0.90)
    mass = float(np.clip(dens * (edge * 100) ** 3, 0.30, 0.80))
    kit["cube_edge_m"] = edge
    kit["cube_mass_g"] = mass
    kit["cube_mass_rel_sd"] = rng.uniform(0.02, 0.07)
    kit["restitution"] = rng.uniform(0.25, 0.45)
    kit["friction"] = rng.uniform(0.30, 0.50)
    kit["gap_m"] = rng.uniform(0.026, 0.030)  # fall height plate to plate
    kit["holes"] = {
        L: (
            HOLE_CENTRE[L][0] + rng.normal(0, 0.0012),
            HOLE_CENTRE[L][1] + rng.normal(0, 0.0012),
            HOLE_HALF[L] + rng.normal(0, 0.0004),
        )
        for L in HOLE_CENTRE
    }
    # clock: Nano clones mostly run from a ceramic resonator
    resonator = bool(rng.random() < 0.6)
    kit["clock"] = "ceramic resonator" if resonator else "crystal"
    kit["clock_ppm"] = float(
        np.clip(rng.normal(0, 1500), -4500, 4500) if resonator else rng.normal(0, 30)
    )
    kit["piezo_rate_hz"] = int(
        _choice(rng, [2000, 1000, 1600, 2500, 3200], [0.6, 0.1, 0.1, 0.1, 0.1])
    )
    kit["batch_sets"] = int(_choice(rng, [4, 5, 8, 10, 12]))
    kit["adc_skew_us"] = float(_choice(rng, [13.0, 26.0, 52.0]))
    kit["fw"] = (1, int(rng.integers(0, 3)), int(rng.integers(0, 10)))
    kit["device_id"] = bytes(rng.integers(0, 256, 8, dtype=np.uint8)).hex()
    kit["boot_junk"] = bool(rng.random() < 0.3)
    # HX711 boards
    load_nominal = 80 if rng.random() < 0.8 else 10
    kit["load_rate_nominal"] = load_nominal
    hx_type = _choice(
        rng, ["green generic module", "SparkFun-style board", "purple module"], [0.6, 0.2, 0.2]
    )
    kit["hx711_board"] = hx_type
    if hx_type == "SparkFun-style board":
        dev, spread, noise = rng.normal(0.0, 0.02), 0.008, rng.uniform(40, 90)
    else:
        dev, spread, noise = rng.normal(0.03, 0.04), 0.015, rng.uniform(60, 250)
    dev = float(np.clip(dev, -0.10, 0.14))
    kit["hx_chip_rate_real"] = [
        load_nominal * (1 + dev + rng.normal(0, spread)) for _ in range(N_CH)
    ]
    noise_scale = 1.0 if load_nominal == 80 else 0.45
    kit["hx_noise_counts"] = [noise * noise_scale * rng.uniform(0.8, 1.25) for _ in range(N_CH)]
    matched = bool(rng.random() < 0.5)
    kit["cells"] = "matched" if matched else "mixed"
    sign_all = 1 if rng.random() < 0.75 else -1
    cell0 = int(rng.integers(len(CELL_TYPES)))
    mount0 = _choice(rng, list(CELL_MOUNTS))
    cells = []
    for L in range(N_CH):
        ct = CELL_TYPES[cell0] if matched else CELL_TYPES[int(rng.integers(len(CELL_TYPES)))]
        mount = mount0 if matched else _choice(rng, list(CELL_MOUNTS))
        name, cap, sens, tol, defl = ct
        s_mvv = sens * (1 + (rng.normal(0, 0.02) if matched else rng.uniform(-tol, tol)))
        sign = sign_all if matched else (1 if rng.random() < 0.9 else -1)
        cpg = sign * (2**31) * 1e-3 * s_mvv / cap * rng.normal(1.0, 0.01)
        pos_sd, shunt_rng, slip_p, creep_sd, q_rng = CELL_MOUNTS[mount]
        plate_g = rng.uniform(22, 32) if L == 0 else rng.uniform(8, 18)
        k_stiff = cap * 1e-3 * GRAV / (defl * rng.uniform(0.8, 1.25))
        f_cell = math.sqrt(k_stiff / (plate_g * 1e-3)) / (2 * math.pi)
        cells.append(
            {
                "type": name,
                "mount": mount,
                "capacity_g": cap,
                "mv_per_v": s_mvv,
                "counts_per_g": cpg,
                "plate_g": plate_g,
                "f_cell_hz": f_cell,
                "q": rng.uniform(*q_rng),
                "pos_coef": [rng.normal(0, pos_sd), rng.normal(0, pos_sd), rng.normal(0, pos_sd)],
                "shunt": rng.uniform(*shunt_rng),
                "slip_p": slip_p,
                "creep_frac_sd": creep_sd,
                "creep_tau_s": rng.uniform(2.0, 25.0),
                "offset_counts": (
                    plate_g * cpg + rng.normal(0, 0.1) * 1e-3 * 2**31 + rng.normal(0, 3000)
                ),
                "warmup_g": rng.normal(0, 0.03),
                "warmup_tau_s": rng.uniform(60, 600),
                "walk_g_per_rts": rng.uniform(0.0003, 0.002),
                "reconnect_offset_g": rng.uniform(0.002, 0.02),
            }
        )
    kit["cell"] = cells
    # piezo front end
    disc = _choice(rng, list(PIEZO_DISCS))
    pmount = _choice(rng, list(PIEZO_MOUNTS))
    kit["piezo_disc"], kit["piezo_mount"] = disc, pmount
    d_sens, c_nf, f_fac = PIEZO_DISCS[disc]
    m_sens, m_damp, m_lp = PIEZO_MOUNTS[pmount]
    r_bias = float(_choice(rng, [470e3, 1e6, 2.2e6]))
    kit["piezo_bias_r_ohm"] = r_bias
    kit["piezo_hp_tau_s"] = r_bias * c_nf * 1e-9
    kit["piezo_frontend_lp_hz"] = float(_choice(rng, [20000.0, 3000.0, 800.0], [0.5, 0.3, 0.2]))
    kit["bias_on_base"] = bool(rng.random() < 0.7)
    kit["adc_noise_lsb"] = rng.uniform(0.35, 0.9)
    kit["mux_alpha"] = rng.uniform(0.0, 0.025)
    base_gain = 80.0 * d_sens * m_sens * math.exp(rng.normal(0, 0.3))  # LSB per mN*s
    kit["piezo_gain_lsb_per_mNs"] = base_gain
    c1 = rng.uniform(0.12, 0.40)
    c2 = c1 * rng.uniform(0.15, 0.45)
    c3 = c2 * rng.uniform(0.10, 0.40)
    kit["xtalk"] = [1.0, c1, c2, c3]
    kit["xtalk_lp_hz"] = rng.uniform(250, 900)
    piezos = []
    for _L in range(N_CH):
        f1 = rng.uniform(140, 320) * f_fac
        ratios = [1.0, 2.1, 3.4, 4.9, 6.8, 9.0][: int(rng.integers(4, 7))]
        modes = []
        for i, r in enumerate(ratios):
            f = f1 * r * rng.uniform(0.9, 1.1)
            zeta = rng.uniform(0.02, 0.06) * m_damp * (1 + 0.15 * i)
            amp = rng.uniform(0.5, 1.0) * (f1 / f) ** 0.5 / math.sqrt(1 + (f / m_lp) ** 2)
            modes.append((f, min(zeta, 0.3), amp))
        ang = rng.uniform(0, 2 * math.pi)
        rad = rng.uniform(0.018, 0.032)
        piezos.append(
            {
                "gain": base_gain * rng.uniform(0.7, 1.4),
                "modes": modes,
                "pos": (rad * math.cos(ang), rad * math.sin(ang)),
                "lf_lsb_per_g": rng.uniform(0.2, 1.2) * m_sens,
                "bias": 512 + rng.normal(0, 3.0),
                "hum_lsb": rng.uniform(0.1, 1.5),
            }
        )
    kit["piezo"] = piezos
    kit["table_mode_hz"] = rng.uniform(25, 80)
    return kit


# ---------------------------------------------------------------------------
# the room and the people (scenario specific)
# ---------------------------------------------------------------------------


def make_room(scenario: str, rng: np.random.Generator) -> dict[str, Any]:
    noisy = scenario == "noisy"
    room: dict[str, Any] = {
        "mains_hz": 50.0 if rng.random() < 0.7 else 60.0,
        "hum_scale": rng.uniform(2.0, 6.0) if noisy else rng.uniform(0.5, 1.5),
        "talk_lsb": (
            rng.uniform(0.4, 2.0)
            if noisy
            else (rng.uniform(0.05, 0.5) if scenario == "game" else rng.uniform(0.0, 0.2))
        ),
        "music": bool(noisy and rng.random() < 0.6),
        "children": bool(scenario in ("noisy", "game") and rng.random() < 0.35),
        "air_g": rng.uniform(0.002, 0.01) * (3.0 if noisy else 1.0),
    }
    if room["music"]:
        room["music_bpm"] = rng.uniform(80, 130)
        room["music_on_table"] = bool(rng.random() < 0.5)
        room["music_lsb"] = rng.uniform(3, 15) if room["music_on_table"] else rng.uniform(0.5, 3)
    n_people = int(rng.integers(3, 6))
    people = []
    for i in range(n_people):
        child = room["children"] and i == n_people - 1
        people.append(
            {
                "child": child,
                "height_m": rng.uniform(0.05, 0.40) if child else rng.uniform(0.01, 0.22),
                "aim_sd_m": rng.uniform(0.005, 0.012) if child else rng.uniform(0.0015, 0.006),
                "toss_ms": rng.uniform(0.1, 0.6) if child else rng.uniform(0.0, 0.25),
                "finger_g": rng.uniform(10, 90) if child else rng.uniform(3, 35),
            }
        )
    room["people"] = people
    return room


# ---------------------------------------------------------------------------
# physics of cubes in the tower
# ---------------------------------------------------------------------------


class Cube:
    __slots__ = ("cid", "m", "color", "level", "x", "y", "t_rest", "wrec", "teeter")

    def __init__(self, cid: int, m: float, color: str | None) -> None:
        self.cid = cid
        self.m = m
        self.color = color
        self.level = -1
        self.x = 0.0
        self.y = 0.0
        self.t_rest = 0.0
        self.wrec: list[Any] | None = None
        self.teeter = False


class Sim:
    """Event-level simulation: cubes, hands, knocks; later turned into signals."""

    def __init__(
        self, kit: dict[str, Any], room: dict[str, Any], rng: np.random.Generator, duration: float
    ) -> None:
        self.kit = kit
        self.room = room
        self.rng = rng
        self.duration = duration
        self.a = kit["cube_edge_m"]
        self.strikes: list[tuple[float, int, float, float, float, float]] = []
        self.scrapes: list[tuple[float, float, int, float]] = []
        self.weights: list[list[Any]] = []  # [level, t_on, t_off, grams, slip_t, slip_frac, creep]
        self.hands: list[tuple[float, float, int, float, float]] = []  # t0,t1,level,grams,rumble
        self.table: list[tuple[float, float, float]] = []  # t, dv m/s, contact s
        self.air: list[tuple[float, int, float, float]] = []
        self.buzz: list[tuple[float, float, float, float]] = []
        self.lean: list[tuple[float, float, float]] = []
        self.disc: dict[int, list[list[float]]] = {L: [] for L in range(N_CH)}
        self.plates: list[list[Cube]] = [[] for _ in range(N_CH)]
        self.pending: list[tuple[float, Cube, Cube | None, int]] = []
        self.next_id = 0
        self.landings: list[dict[str, Any]] = []
        self.knockdowns: list[dict[str, Any]] = []
        self.removals: list[dict[str, Any]] = []
        self.lifts: list[dict[str, Any]] = []
        self.closes: list[dict[str, Any]] = []
        self.knocks: list[dict[str, Any]] = []
        self.lifted_from: int | None = None
        self._cur: dict[str, Any] | None = None

    # -- helpers ---------------------------------------------------------
    def new_cube(self, color: str | None) -> Cube:
        m = self.kit["cube_mass_g"] * (1 + self.rng.normal(0, self.kit["cube_mass_rel_sd"]))
        c = Cube(self.next_id, float(m), color)
        self.next_id += 1
        return c

    def sens(self, L: int, x: float, y: float) -> float:
        cell = self.kit["cell"][L]
        px, py, q = cell["pos_coef"]
        u, v = x / WALL_HALF, y / WALL_HALF
        return (1 - cell["shunt"]) * (1 + px * u + py * v + q * (u * u + v * v))

    def strike(self, t: float, plate: int, J: float, tau: float, x: float, y: float) -> None:
        self.strikes.append((t, plate, J, tau, x, y))
        if self._cur is not None and self._cur.get("t_first") is None:
            self._cur["t_first"] = t
        if 0 <= plate < N_CH:
            self.shake(t, plate, J / 4e-4)

    def shake(self, t: float, L: int, severity: float) -> None:
        """Vibration of plate L may tip cubes teetering at its hole edge."""
        for c in self.plates[L]:
            if c.teeter and c.t_rest < t:
                if self.rng.random() < min(0.9, 0.25 * severity):
                    c.teeter = False
                    cause = self._cur["cube"] if self._cur is not None else None
                    self.pending.append((t + self.rng.uniform(0.01, 0.25), c, cause, L))

    def wall_clip(self, x: float, y: float) -> tuple[float, float, bool]:
        lim = WALL_HALF - self.a / 2
        hit = False
        if abs(x) > lim:
            x = math.copysign(2 * lim - abs(x), x)
            hit = True
        if abs(y) > lim:
            y = math.copysign(2 * lim - abs(y), y)
            hit = True
        return float(np.clip(x, -lim, lim)), float(np.clip(y, -lim, lim)), hit

    def hole_rel(self, L: int, x: float, y: float) -> tuple[float, float, float]:
        hx, hy, hh = self.kit["holes"][L]
        return abs(x - hx), abs(y - hy), hh

    def in_hole(self, L: int, x: float, y: float) -> bool:
        if L < 1:
            return False
        dx, dy, hh = self.hole_rel(L, x, y)
        return dx < hh and dy < hh

    def clean_pass(self, L: int, x: float, y: float) -> bool:
        if L < 1:
            return False
        dx, dy, hh = self.hole_rel(L, x, y)
        lim = hh - self.a / 2
        return dx < lim and dy < lim

    def add_weight(self, c: Cube, L: int, t: float) -> None:
        cell = self.kit["cell"][L]
        rng = self.rng
        slip = rng.random() < cell["slip_p"]
        rec = [
            L,
            t,
            math.inf,
            c.m * self.sens(L, c.x, c.y),
            t + rng.exponential(1.5) if slip else math.inf,
            rng.uniform(0.05, 0.3) if slip else 0.0,
            rng.normal(0, cell["creep_frac_sd"]),
        ]
        self.weights.append(rec)
        c.wrec = rec

    def end_weight(self, c: Cube, t: float) -> None:
        if c.wrec is not None and c.wrec[2] == math.inf:
            c.wrec[2] = max(t, c.wrec[1] + 1e-3)
        c.wrec = None

    # -- throws ------------------------------------------------------------
    def throw(self, t_release: float, person: dict[str, Any], color: str | None) -> None:
        rng = self.rng
        cube = self.new_cube(color)
        h = person["height_m"] * rng.uniform(0.6, 1.3)
        vz = math.sqrt(2 * GRAV * h)
        t_top = t_release + vz / GRAV
        ang = rng.uniform(0, 2 * math.pi)
        vh = person["toss_ms"] * rng.uniform(0.2, 1.0)
        vx, vy = vh * math.cos(ang), vh * math.sin(ang)
        x = rng.normal(0, person["aim_sd_m"])
        y = rng.normal(0, person["aim_sd_m"])
        cur: dict[str, Any] = {"cube": cube, "t_first": None, "caused": False}
        self._cur = cur
        hx, hy, hh = self.kit["holes"][8]
        dx, dy = abs(x - hx), abs(y - hy)
        m_kg = cube.m * 1e-3
        if dx >= hh - self.a / 2 or dy >= hh - self.a / 2:
            # strikes the rim / roof of the top module
            n_b = 1 + int(rng.integers(0, 3))
            v = vz
            for _ in range(n_b):
                self.strike(
                    t_top, 8, m_kg * v * rng.uniform(0.8, 1.4), rng.uniform(3e-4, 8e-4), x, y
                )
                v *= self.kit["restitution"] * rng.uniform(0.6, 1.2)
                t_top += 2 * v / GRAV + rng.uniform(0.004, 0.02)
            miss_p = 0.02 + 0.3 * max(0.0, min(1.0, (max(dx, dy) - hh) / 0.01)) * (vh + vz) / 3
            if rng.random() < miss_p:
                # bounced off the top onto the table: no landing in the tower
                t_tab = t_top + rng.uniform(0.1, 0.3)
                self.table.append((t_tab, rng.uniform(0.0005, 0.002), 3e-4))
                self.knocks.append({"t": t_tab, "kind": "missed_throw"})
                self._cur = None
                return
            x = hx + rng.uniform(-1, 1) * (hh - self.a / 2) * 0.8
            y = hy + rng.uniform(-1, 1) * (hh - self.a / 2) * 0.8
            vz = v + 0.2
            vx *= 0.3
            vy *= 0.3
        self.descend(cube, 7, t_top, x, y, vx, vy, vz, self.kit["gap_m"] + 0.002)
        self._cur = None
        self.run_pending()

    def run_pending(self) -> None:
        while self.pending:
            self.pending.sort(key=lambda p: p[0])
            t, c, cause, L0 = self.pending.pop(0)
            if c.level != L0 or c.level < 1 or c.wrec is None or c not in self.plates[L0]:
                continue
            L = c.level
            if self.lifted_from is not None and L > self.lifted_from:
                # teetering cube in a lifted module: drops out of the stack
                continue
            self.tip_into_hole(c, t, cause)

    def tip_into_hole(self, c: Cube, t: float, cause: Cube | None) -> None:
        """Cube at plate c.level tips over the hole edge and falls down."""
        rng = self.rng
        L = c.level
        hx, hy, hh = self.kit["holes"][L]
        self.plates[L].remove(c)
        self.end_weight(c, t)
        saved = self._cur
        self._cur = {"cube": c, "t_first": None, "caused": False}
        self.strike(t, L, c.m * 1e-3 * rng.uniform(0.05, 0.2), rng.uniform(3e-4, 1e-3), c.x, c.y)
        x = hx + rng.uniform(-0.4, 0.4) * hh
        y = hy + rng.uniform(-0.4, 0.4) * hh
        self.knockdowns.append({"t": t, "from_floor": L, "to_floor": None, "_cube": c.cid})
        if cause is not None:
            if saved is not None and saved["cube"] is cause:
                saved["caused"] = True
            else:
                for ld in reversed(self.landings):
                    if ld["_cube"] == cause.cid:
                        ld["caused_knockdown"] = True
                        break
        self.descend(
            c,
            L - 1,
            t + rng.uniform(0.01, 0.05),
            x,
            y,
            rng.normal(0, 0.05),
            rng.normal(0, 0.05),
            0.1,
            self.kit["gap_m"],
            knocked_from=L,
        )
        self._cur = saved

    def descend(
        self,
        c: Cube,
        L: int,
        t: float,
        x: float,
        y: float,
        vx: float,
        vy: float,
        vz: float,
        h: float,
        knocked_from: int | None = None,
    ) -> None:
        """Free fall onto plate L and onwards until the cube rests."""
        rng = self.rng
        kit = self.kit
        m_kg = c.m * 1e-3
        while True:
            tf = (-vz + math.sqrt(vz * vz + 2 * GRAV * h)) / GRAV
            vimp = vz + GRAV * tf
            x, y, hit = self.wall_clip(x + vx * tf, y + vy * tf)
            t += tf
            if hit:
                self.strike(t - tf / 3, min(L + 1, 8), m_kg * math.hypot(vx, vy) * 1.3, 4e-4, x, y)
                vx, vy = -0.5 * vx, -0.5 * vy
            if self.clean_pass(L, x, y):
                if rng.random() < 0.15:
                    self.strike(t, L, m_kg * vimp * rng.uniform(0.03, 0.12), 2e-4, x, y)
                vx, vy = vx * 0.9, vy * 0.9
                vz, h, L = vimp, kit["gap_m"], L - 1
                continue
            if self.in_hole(L, x, y):
                # lands on the hole edge: a hard corner strike, then tips in
                self.strike(
                    t, L, m_kg * vimp * rng.uniform(0.2, 0.7), rng.uniform(2e-4, 5e-4), x, y
                )
                hx, hy, hh = kit["holes"][L]
                t += rng.uniform(0.005, 0.04)
                x = hx + (x - hx) * 0.5
                y = hy + (y - hy) * 0.5
                vx, vy = rng.normal(0, 0.08), rng.normal(0, 0.08)
                vz, h, L = vimp * rng.uniform(0.1, 0.4), kit["gap_m"], L - 1
                continue
            res = self.on_plate(c, L, t, x, y, vx, vy, vimp)
            if res[0] == "rest":
                _, t_rest, x, y = res
                self.rest(c, L, t_rest, x, y, knocked_from)
                return
            _, t, x, y, vx, vy, vz = res
            h, L = kit["gap_m"], L - 1

    def on_plate(
        self, c: Cube, L: int, t: float, x: float, y: float, vx: float, vy: float, vimp: float
    ) -> tuple[Any, ...]:
        rng = self.rng
        kit = self.kit
        m_kg = c.m * 1e-3
        e = kit["restitution"] * rng.uniform(0.8, 1.2)
        a = self.a
        # falling right onto a resting cube: wood-on-wood click, both move
        for r in list(self.plates[L]):
            if r.t_rest < t and math.hypot(r.x - x, r.y - y) < a * 0.9:
                self.strike(
                    t, L, m_kg * vimp * rng.uniform(0.5, 1.0), rng.uniform(5e-5, 1.5e-4), x, y
                )
                ang = math.atan2(r.y - y, r.x - x) + rng.normal(0, 0.4)
                self.push(r, t, vimp * rng.uniform(0.05, 0.3), ang)
                vx += math.cos(ang + math.pi) * vimp * 0.3
                vy += math.sin(ang + math.pi) * vimp * 0.3
                t += 0.01
                vimp *= 0.5
                break
        self.strike(t, L, m_kg * vimp * (1 + e), rng.uniform(4e-4, 1.5e-3), x, y)
        ang = rng.uniform(0, 2 * math.pi)
        kick = vimp * rng.uniform(0.05, 0.45)
        vx = 0.5 * vx + kick * math.cos(ang)
        vy = 0.5 * vy + kick * math.sin(ang)
        v = e * vimp
        n = 0
        while v > 0.06 and n < 6:
            dt = 2 * v / GRAV
            x, y, hit = self.wall_clip(x + vx * dt, y + vy * dt)
            if hit:
                self.strike(t + dt / 2, L, m_kg * math.hypot(vx, vy), 4e-4, x, y)
                vx, vy = -0.5 * vx, -0.5 * vy
            t += dt
            if self.in_hole(L, x, y):
                if not self.clean_pass(L, x, y):
                    self.strike(t, L, m_kg * v * rng.uniform(0.2, 0.6), 3e-4, x, y)
                return ("fall", t, x, y, vx * 0.7, vy * 0.7, v * 0.5)
            self.strike(t, L, m_kg * v * (1 + e), rng.uniform(4e-4, 1.5e-3), x, y)
            v *= e * rng.uniform(0.8, 1.1)
            vx, vy = vx * 0.6, vy * 0.6
            ang = rng.normal(0, 0.6)
            vx, vy = (
                vx * math.cos(ang) - vy * math.sin(ang),
                vx * math.sin(ang) + vy * math.cos(ang),
            )
            n += 1
        # weight now on the plate; slide and tumble
        c.x, c.y, c.level = x, y, L
        self.add_weight(c, L, t)
        res = self.slide(c, L, t, math.hypot(vx, vy), math.atan2(vy, vx), depth=0)
        if res[0] == "fall":
            return res
        t_end = res[1]
        x, y = c.x, c.y
        t_rest = t_end + rng.uniform(0.01, 0.06)
        # tiny rocking taps as the cube settles on a face
        for _ in range(int(rng.integers(0, 3))):
            self.strike(
                t_end + rng.uniform(0.0, t_rest - t_end),
                L,
                m_kg * rng.uniform(0.01, 0.04),
                5e-4,
                x,
                y,
            )
        return ("rest", t_rest, x, y)

    def slide(
        self, c: Cube, L: int, t: float, speed: float, ang: float, depth: int
    ) -> tuple[Any, ...]:
        """Slide/tumble cube c (already weighted on plate L). Returns fall or rest."""
        rng = self.rng
        a = self.a
        m_kg = c.m * 1e-3
        mu = self.kit["friction"]
        n_tumble = int(rng.poisson(min(3.0, speed / 0.15)))
        dist = speed * speed / (2 * mu * GRAV) + n_tumble * a * rng.uniform(0.4, 0.9)
        dur = float(np.clip(2 * dist / max(speed, 0.02), 0.02, 0.8))
        if dist > 1e-4:
            self.scrapes.append((t, t + dur, L, m_kg * max(speed, 0.03)))
        for _ in range(n_tumble):
            self.strike(
                t + rng.uniform(0, dur),
                L,
                m_kg * rng.uniform(0.05, 0.25),
                rng.uniform(4e-4, 1e-3),
                c.x,
                c.y,
            )
        steps = max(1, int(dist / 0.0007))
        x, y = c.x, c.y
        dxs, dys = math.cos(ang), math.sin(ang)
        others = [r for r in self.plates[L] if r is not c and r.t_rest < t]
        for i in range(1, steps + 1):
            f = i / steps
            tt = t + dur * (1 - math.sqrt(max(0.0, 1 - f)))
            x += dxs * dist / steps
            y += dys * dist / steps
            x, y, hit = self.wall_clip(x, y)
            if hit:
                dxs, dys = -dxs * rng.uniform(0.5, 1.0), -dys * rng.uniform(0.5, 1.0)
            if self.in_hole(L, x, y):
                # tips over the edge: the cube's centre is over the hole
                self.strike(tt, L, m_kg * rng.uniform(0.05, 0.2), rng.uniform(3e-4, 1e-3), x, y)
                self.end_weight(c, tt)
                v_now = speed * math.sqrt(max(0.0, 1 - f)) + 0.02
                return (
                    "fall",
                    tt + rng.uniform(0.01, 0.05),
                    x,
                    y,
                    dxs * v_now * 0.5,
                    dys * v_now * 0.5,
                    0.05,
                )
            for r in others:
                if math.hypot(r.x - x, r.y - y) < a and depth < 2:
                    v_now = speed * math.sqrt(max(0.0, 1 - f))
                    self.strike(
                        tt, L, m_kg * v_now * rng.uniform(0.5, 1.0), rng.uniform(5e-5, 1.5e-4), x, y
                    )
                    if v_now > 0.01:
                        pang = math.atan2(r.y - y, r.x - x) + rng.normal(0, 0.3)
                        self.push(r, tt, v_now * rng.uniform(0.3, 0.8), pang, depth + 1)
                    c.x, c.y = x - dxs * 0.001, y - dys * 0.001
                    self.settle(c, L, tt)
                    return ("rest", tt + 0.01)
        c.x, c.y = x, y
        self.settle(c, L, t + dur)
        return ("rest", t + dur)

    def settle(self, c: Cube, L: int, t: float) -> None:
        """Cube stops at (c.x, c.y); update weight for its position; hole-edge check."""
        if c.wrec is not None and abs(c.wrec[3] - c.m * self.sens(L, c.x, c.y)) > 1e-6:
            old = c.wrec
            if t - old[1] < 0.05:
                old[3] = c.m * self.sens(L, c.x, c.y)
            else:
                self.end_weight(c, t)
                self.add_weight(c, L, t)
        c.level = L
        if c not in self.plates[L]:
            self.plates[L].append(c)
        c.teeter = False
        if L >= 1:
            dx, dy, hh = self.hole_rel(L, c.x, c.y)
            near = hh + 0.3 * self.a
            if (dx < near and dy < hh) or (dy < near and dx < hh):
                c.teeter = True

    def push(self, r: Cube, t: float, speed: float, ang: float, depth: int = 1) -> None:
        """A resting cube r is shoved; it may slide into the hole (knockdown)."""
        L = r.level
        if L < 0 or r not in self.plates[L]:
            return
        self.plates[L].remove(r)
        cause = self._cur["cube"] if self._cur is not None else None
        res = self.slide(r, L, t, speed, ang, depth)
        if res[0] == "fall":
            _, tt, x, y, vx, vy, vz = res
            self.knockdowns.append({"t": tt, "from_floor": L, "to_floor": None, "_cube": r.cid})
            if self._cur is not None:
                self._cur["caused"] = True
                if "landing" in self._cur:
                    self._cur["landing"]["caused_knockdown"] = True
            saved = self._cur
            self._cur = {"cube": r, "t_first": None, "caused": False}
            self.descend(r, L - 1, tt, x, y, vx, vy, vz, self.kit["gap_m"], knocked_from=L)
            self._cur = saved
        del cause

    def rest(
        self, c: Cube, L: int, t_rest: float, x: float, y: float, knocked_from: int | None
    ) -> None:
        rng = self.rng
        c.x, c.y, c.level, c.t_rest = x, y, L, t_rest
        if c.wrec is None:
            self.add_weight(c, L, t_rest - 0.05)
        if c not in self.plates[L]:
            self.plates[L].append(c)
        self.settle(c, L, t_rest)
        if c.teeter and rng.random() < 0.3:
            # balanced on the hole edge for a moment, then rolls over it
            c.teeter = False
            t_tip = t_rest + rng.uniform(0.03, 0.35)
            self.plates[L].remove(c)
            self.end_weight(c, t_tip)
            hx, hy, hh = self.kit["holes"][L]
            self.strike(t_tip, L, c.m * 1e-3 * rng.uniform(0.05, 0.15), 6e-4, c.x, c.y)
            self.descend(
                c,
                L - 1,
                t_tip + 0.02,
                hx + rng.uniform(-0.3, 0.3) * hh,
                hy + rng.uniform(-0.3, 0.3) * hh,
                rng.normal(0, 0.04),
                rng.normal(0, 0.04),
                0.08,
                self.kit["gap_m"],
                knocked_from,
            )
            return
        cur = self._cur or {}
        t_first = cur.get("t_first")
        ld = {
            "t": t_rest,
            "t_first_impact": t_first if t_first is not None else t_rest,
            "floor": L,
            "cubes": 1,
            "knocked": knocked_from is not None,
            "caused_knockdown": bool(cur.get("caused", False)),
            "color": c.color,
            "_cube": c.cid,
        }
        cur["landing"] = ld
        if knocked_from is not None:
            ld["from_floor"] = knocked_from
            for kd in reversed(self.knockdowns):
                if kd["_cube"] == c.cid and kd["to_floor"] is None:
                    kd["to_floor"] = L
                    break
        self.landings.append(ld)

    # -- hands, modules, room ---------------------------------------------
    def table_knock(self, t: float, dv: float, contact: float, kind: str | None) -> None:
        self.table.append((t, dv, contact))
        if kind:
            self.knocks.append({"t": t, "kind": kind})
        for L in range(N_CH):
            if self.lifted_from is None or L <= self.lifted_from:
                self.shake(t, L, dv / 0.03 * 0.7**L)

    def hand(self, t0: float, t1: float, L: int, grams: float, rumble: float) -> None:
        self.hands.append((t0, t1, L, grams, rumble))

    def lift(self, t: float, k: int, person: dict[str, Any]) -> None:
        rng = self.rng
        self.lifted_from = k
        self.lifts.append({"t": t, "exposed": k})
        for L in range(k + 1, N_CH):
            self.disc[L].append([t + rng.uniform(0, 0.03), math.inf])
        # scrape of the modules parting, grip on the lower part
        self.scrapes.append((t - 0.3, t + 0.2, min(k + 1, 7), 3e-4 * rng.uniform(0.5, 2.0)))
        self.scrapes.append((t - 0.3, t + 0.2, k, 2e-4 * rng.uniform(0.5, 2.0)))
        if k >= 1:
            self.hand(t - 0.5, t + 2.0, k, rng.normal(0, 1.5), 1.0)
        self.air.append((t, k, -rng.uniform(0.0, 0.15), rng.uniform(0.05, 0.2)))
        # a cube teetering in the lifted stack may drop out onto the exposed plate
        for L in range(k + 1, N_CH):
            for c in list(self.plates[L]):
                if c.teeter and rng.random() < 0.4:
                    t_out = t + rng.uniform(0.05, 0.4)
                    self.plates[L].remove(c)
                    self.end_weight(c, t_out)
                    self.knockdowns.append(
                        {"t": t_out, "from_floor": L, "to_floor": None, "_cube": c.cid}
                    )
                    self._cur = {"cube": c, "t_first": None, "caused": False}
                    hx, hy, _hh = self.kit["holes"][k + 1]
                    self.descend(
                        c, k, t_out, hx, hy, 0.0, 0.0, 0.0, rng.uniform(0.01, 0.04), knocked_from=L
                    )
                    self._cur = None
                    self.knocks.append({"t": t_out, "kind": "cube_fell_out_of_lifted_stack"})
        if rng.random() < 0.4:
            self.table_knock(
                t + rng.uniform(0.8, 2.0), rng.uniform(0.002, 0.008), 3e-3, "stack_set_on_table"
            )

    def close(self, t: float, person: dict[str, Any]) -> None:
        rng = self.rng
        k = self.lifted_from
        if k is None:
            return
        for L in range(k + 1, N_CH):
            if self.disc[L] and self.disc[L][-1][1] == math.inf:
                self.disc[L][-1][1] = t + rng.uniform(0.0, 0.04)
        self.closes.append({"t": t, "exposed": k})
        self.lifted_from = None
        self.scrapes.append((t - 0.4, t + 0.1, min(k + 1, 7), 3e-4 * rng.uniform(0.5, 2.0)))
        self.table_knock(t, rng.uniform(0.003, 0.02), rng.uniform(1e-3, 4e-3), None)
        self.air.append((t, k, rng.uniform(0.0, 0.15), rng.uniform(0.05, 0.2)))
        if k >= 1:
            self.hand(t - 1.0, t + 0.4, k, rng.normal(0, 1.5), 1.0)
        self.run_pending()

    def remove_all(self, t: float, k: int, person: dict[str, Any]) -> tuple[float, list[Cube]]:
        """Fingers take every cube out of exposed plate k, in one to three grabs."""
        rng = self.rng
        cubes = sorted(self.plates[k], key=lambda c: c.t_rest)
        taken: list[Cube] = []
        if not cubes:
            return t, taken
        n_grab = min(len(cubes), int(rng.integers(1, 4)))
        groups = np.array_split(np.arange(len(cubes)), n_grab)
        for g in groups:
            dur = rng.uniform(0.4, 1.6)
            t0, t1 = t, t + dur
            self.hand(t0, t1, k, person["finger_g"] * rng.uniform(0.3, 1.2), 2.0)
            self.scrapes.append((t0, t1, k, 4e-4 * rng.uniform(0.5, 2.0)))
            grabbed = 0
            for idx in g:
                c = cubes[int(idx)]
                if c not in self.plates[k]:
                    continue
                if k >= 1 and c.teeter and rng.random() < 0.3:
                    # the finger pushes it into the hole instead of picking it up
                    self._cur = {"cube": c, "t_first": None, "caused": False}
                    self.tip_into_hole(c, t0 + rng.uniform(0.1, dur * 0.8), None)
                    self._cur = None
                    continue
                self.plates[k].remove(c)
                self.end_weight(c, t1 - rng.uniform(0.0, 0.1))
                c.level = -1
                taken.append(c)
                grabbed += 1
            if grabbed:
                self.removals.append({"t": t1, "floor": k, "cubes": grabbed})
            t = t1 + rng.uniform(0.3, 1.5)
        return t, taken

    # -- room disturbances -------------------------------------------------
    def disturbance(self, t: float, kind: str) -> float:
        rng = self.rng
        if kind == "table_knock":
            self.table_knock(
                t, rng.uniform(0.003, 0.04), _choice(rng, [4e-4, 1e-3, 5e-3]), "table_knock"
            )
            return t + 0.2
        if kind == "object_dropped":
            self.table_knock(t, rng.uniform(0.001, 0.01), 5e-4, "object_dropped")
            return t + 0.3
        if kind == "tower_touch":
            d = rng.uniform(0.4, 3.0)
            L0 = int(rng.integers(0, 8))
            for L in range(max(0, L0 - 1), min(8, L0 + 2)):
                self.hand(t, t + d, L, rng.normal(0, 1.2), 1.5)
            self.knocks.append({"t": t, "kind": "tower_touch"})
            for L in range(N_CH):
                self.shake(t, L, 0.3)
            return t + d
        if kind == "child_grab":
            d = rng.uniform(0.5, 3.0)
            for L in range(N_CH):
                self.hand(t, t + d, L, rng.normal(0, 6.0), 4.0)
            self.table_knock(t, rng.uniform(0.005, 0.03), 2e-3, None)
            self.knocks.append({"t": t, "kind": "child_grab"})
            return t + d
        if kind == "child_poke":
            d = rng.uniform(0.4, 2.0)
            self.hand(t, t + d, 7, rng.uniform(5, 60), 3.0)
            self.knocks.append({"t": t, "kind": "child_finger_in_shaft"})
            return t + d
        if kind == "phone_buzz":
            f = rng.uniform(150, 240)
            amp = rng.uniform(5, 60)
            tt = t
            for _ in range(int(rng.integers(2, 5))):
                on = rng.uniform(0.3, 0.8)
                self.buzz.append((tt, tt + on, f, amp))
                tt += on + rng.uniform(0.3, 0.8)
            self.knocks.append({"t": t, "kind": "phone_buzz"})
            return tt
        if kind == "lean":
            d = rng.uniform(1.0, 6.0)
            self.lean.append((t, t + d, rng.uniform(0.3, 1.0)))
            self.table_knock(t, rng.uniform(0.001, 0.006), 2e-2, None)
            self.knocks.append({"t": t, "kind": "lean_on_table"})
            return t + d
        raise ValueError(kind)


# ---------------------------------------------------------------------------
# scenarios (what the people do)
# ---------------------------------------------------------------------------

COLOURS = ["yellow", "blue", "brown", "gray", "black", "white"]


def script_throws(sim: Sim, scenario: str, t0: float, t_end: float) -> None:
    rng = sim.rng
    people = sim.room["people"]
    t = t0
    dist_kinds = ["table_knock", "tower_touch", "phone_buzz", "lean", "object_dropped"]
    next_dist = t0 + rng.uniform(2, 10) if scenario == "noisy" else math.inf
    who = 0
    while t < t_end:
        if scenario == "rapid":
            n = int(rng.integers(2, 7))
            p = people[who % len(people)]
            tt = t
            for _ in range(n):
                if tt >= t_end:
                    break
                sim.throw(tt, p, None)
                if p["child"] and rng.random() < 0.15 and tt + 0.05 < t_end:
                    sim.throw(tt + rng.uniform(0.02, 0.08), p, None)  # two cubes at once
                tt += rng.uniform(0.3, 0.8)
            t = tt + rng.uniform(3.0, 8.0)
        else:
            p = people[who % len(people)]
            sim.throw(t, p, None)
            gap = rng.uniform(3.0, 8.0) if scenario == "single" else rng.uniform(2.5, 9.0)
            t += gap
        who += 1
        while next_dist < min(t, t_end):
            kinds = dist_kinds + (["child_grab", "child_poke"] if sim.room["children"] else [])
            kind = _choice(rng, kinds)
            end = sim.disturbance(next_dist, kind)
            next_dist = max(end, next_dist) + rng.exponential(7.0) + 1.0
            sim.run_pending()


def script_game(sim: Sim, t0: float, t_end: float) -> None:
    """A game of Mord im Arosa as the rules describe, at the pace of real people."""
    rng = sim.rng
    people = sim.room["people"]
    n = len(people)
    colours = list(rng.permutation(COLOURS))[:n]
    t = t0
    knife = int(rng.integers(n))

    def ok(tt: float) -> bool:
        return tt + 2.5 < t_end

    def maybe_knock(tt: float) -> None:
        if rng.random() < 0.08:
            sim.disturbance(
                tt + rng.uniform(0.5, 2.0),
                _choice(
                    rng,
                    ["table_knock", "tower_touch", "object_dropped"]
                    + (["child_grab"] if sim.room["children"] else []),
                ),
            )

    # prologue: the two victims, then two clues each
    for _ in range(2):
        if not ok(t):
            return
        sim.throw(t, people[knife], "red")
        t += rng.uniform(1.2, 4.0)
    for i in range(n):
        p = (knife + i) % n
        for _ in range(2):
            if not ok(t):
                return
            sim.throw(t, people[p], colours[p])
            t += rng.uniform(1.0, 3.5)
        t += rng.uniform(1.0, 4.0)
        maybe_knock(t)
    act = 1
    victims_found = 0
    turn = int(rng.integers(n))
    while ok(t + 8):
        p = turn % n
        person = people[p]
        t += rng.uniform(3.0, 15.0)  # talking, thinking
        counts = np.array([len(sim.plates[L]) for L in range(N_CH)], float)
        k = int(rng.choice(N_CH, p=(counts + 0.7) / (counts + 0.7).sum()))
        if not ok(t + 8):
            break
        sim.lift(t, k, person)
        t += rng.uniform(1.5, 5.0)  # look inside
        here = list(sim.plates[k])
        if rng.random() < 0.06:
            # wrong floor lifted: put back at once, lift again
            sim.close(t, person)
            t += rng.uniform(1.0, 3.0)
            k = max(0, k - 1) if rng.random() < 0.5 else min(7, k + 1)
            sim.lift(t, k, person)
            t += rng.uniform(1.5, 4.0)
            here = list(sim.plates[k])
        t, taken = sim.remove_all(t, k, person)
        t += rng.uniform(0.5, 2.0)
        sim.close(t, person)
        t += rng.uniform(1.0, 3.0)
        victims = [c for c in taken if c.color == "red"]
        backs = [c for c in taken if c.color != "red"]
        penalty = 0
        if act == 1:
            victims_found += len(victims)
            if not victims:
                penalty = 1
        else:
            own = [c for c in here if c.color == colours[p]]
            if rng.random() < 0.5:
                sus = rng.choice(
                    [q for q in range(n) if q != p],
                    size=min(n - 1, 1 + int(rng.integers(0, 2))),
                    replace=False,
                )
                if k == 0 and not own:
                    penalty = len(sus)
                else:
                    penalty = sum(
                        1 for q in sus if not any(c.color == colours[int(q)] for c in here)
                    )
            elif not own:
                penalty = 1
        for c in backs:
            if not ok(t):
                return
            sim.throw(t, person, c.color)
            t += rng.uniform(1.0, 3.0)
        for _ in range(penalty):
            if not ok(t):
                return
            sim.throw(t, person, colours[p])
            t += rng.uniform(1.0, 3.0)
        if act == 1 and victims_found >= 2:
            act = 2
        maybe_knock(t)
        turn += 1
    if sim.room["children"] and rng.random() < 0.5 and ok(t):
        sim.disturbance(t + 1.0, "child_poke")


# ---------------------------------------------------------------------------
# signals
# ---------------------------------------------------------------------------


def _pulse_spectrum(f: np.ndarray, tau: float) -> np.ndarray:
    """|F(f)| of a half-sine force pulse of duration tau, normalised to 1 at DC."""
    x = 2 * f * tau
    den = 1 - x * x
    out = np.where(
        np.abs(den) < 1e-6,
        math.pi / 4,
        np.abs(np.cos(np.pi * f * tau)) / np.where(np.abs(den) < 1e-6, 1.0, np.abs(den)),
    )
    return out


def _bump(t: np.ndarray, t0: float, t1: float, ramp: float) -> np.ndarray:
    """Smooth 0..1..0 envelope with raised-cosine ramps."""
    up = np.clip((t - t0) / ramp, 0, 1)
    dn = np.clip((t1 - t) / ramp, 0, 1)
    return 0.5 - 0.5 * np.cos(np.pi * np.minimum(up, dn))


def synth_piezo(
    sim: Sim,
    kit: dict[str, Any],
    room: dict[str, Any],
    rng: np.random.Generator,
    n_sets: int,
    rate: float,
    dev_scale: float,
) -> np.ndarray:
    """Return uint16 array [n_sets, 8] of ADC readings."""
    skew = kit["adc_skew_us"] * 1e-6
    ts = np.arange(n_sets) / rate
    sig = np.zeros((n_sets, N_CH))
    xt = kit["xtalk"]
    # strikes: plate modes of each channel within 3 levels
    for t, plate, J, tau, x, y in sim.strikes:
        if not (-0.3 < t < ts[-1]):
            continue
        for ch in range(max(0, plate - 3), min(N_CH, plate + 4)):
            d = abs(ch - plate)
            pz = kit["piezo"][ch]
            if plate == 8:
                coup = 0.5 if ch == 7 else xt[d] * 0.5
            else:
                coup = xt[d]
            if ch == plate:
                r = math.hypot(x - pz["pos"][0], y - pz["pos"][1])
                coup *= 1.6 / (1 + r / 0.02)
            if _disconnected_at(sim, ch, t) or _disconnected_at(sim, plate, t) and d > 0:
                coup *= 0.15
            amp0 = pz["gain"] * J * 1e3 * coup
            if abs(amp0) < 0.05:
                continue
            modes = np.array(pz["modes"])
            f, z, a = modes[:, 0], modes[:, 1], modes[:, 2]
            amp = (
                amp0
                * a
                * _pulse_spectrum(f, tau)
                / np.sqrt(1 + (f / kit["piezo_frontend_lp_hz"]) ** 2)
            )
            if d > 0:
                amp = amp / (1 + (f / kit["xtalk_lp_hz"]) ** 2)
            t_start = t + 2e-4 * d
            w = 1.0 / (z * 2 * np.pi * f)
            win = min(0.35, float(np.max(w)) * 6.0)
            i0 = int(max(0, math.ceil((t_start - ch * skew) * rate)))
            i1 = int(min(n_sets, math.ceil((t_start + win) * rate)))
            if i1 <= i0:
                continue
            tr = ts[i0:i1] + ch * skew - t_start
            om = 2 * np.pi * f
            resp = (
                amp[:, None]
                * np.exp(-(z * om)[:, None] * tr[None, :])
                * np.sin(om[:, None] * tr[None, :] + 0.3)
            ).sum(0)
            sig[i0:i1, ch] += resp
    # table impulses reach every plate from below
    for t, dv, contact in sim.table:
        if not (0 < t < ts[-1]):
            continue
        ft = kit["table_mode_hz"]
        for ch in range(N_CH):
            pz = kit["piezo"][ch]
            J = kit["cell"][ch]["plate_g"] * 1e-3 * dv * 1.5 * 0.72**ch
            sim_strike = (t + 1e-4 * ch, ch, J, contact)
            modes = np.array(pz["modes"] + [(ft, 0.15, 2.0)])
            f, z, a = modes[:, 0], modes[:, 1], modes[:, 2]
            amp = pz["gain"] * J * 1e3 * a * _pulse_spectrum(f, contact)
            i0 = int(max(0, math.ceil(sim_strike[0] * rate)))
            i1 = int(min(n_sets, i0 + int(0.3 * rate)))
            tr = ts[i0:i1] + ch * skew - sim_strike[0]
            om = 2 * np.pi * f
            sig[i0:i1, ch] += (
                amp[:, None]
                * np.exp(-(z * om)[:, None] * tr[None, :])
                * np.sin(om[:, None] * tr[None, :])
            ).sum(0)
    # band-limited noise bank for scrapes, hands, handling
    bank_len = int(4 * rate)
    b, a = signal.butter(2, [min(150, 0.3 * rate), min(900, 0.45 * rate)], btype="band", fs=rate)
    bank = signal.lfilter(b, a, rng.normal(0, 1, bank_len))
    bank /= bank.std()

    def add_noise(t0: float, t1: float, level: int, amp: float, ramp: float = 0.05) -> None:
        i0, i1 = max(0, int(t0 * rate)), min(n_sets, int(t1 * rate) + 1)
        if i1 <= i0 + 2:
            return
        n = i1 - i0
        env = _bump(ts[i0:i1], t0, t1, min(ramp, (t1 - t0) / 2))
        for ch in range(max(0, level - 2), min(N_CH, level + 3)):
            off = int(rng.integers(0, bank_len - n)) if n < bank_len else 0
            seg = np.resize(bank[off : off + n], n)
            sig[i0:i1, ch] += seg * env * amp * xt[abs(ch - level)] * kit["piezo"][ch]["gain"] / 60

    for t0, t1, L, mv in sim.scrapes:
        add_noise(t0, t1, L, mv * 1e3 * 8.0 * rng.uniform(0.5, 1.5))
    for t0, t1, L, _grams, rumble in sim.hands:
        add_noise(t0, t1, L, rumble * rng.uniform(1.0, 4.0), 0.15)
    # continuous room sources
    hum_f = room["mains_hz"] * (1 + rng.normal(0, 3e-4)) / dev_scale
    hum_near = np.ones(n_sets)
    for t0, t1, _L, _g, _r in sim.hands:
        i0, i1 = max(0, int(t0 * rate)), min(n_sets, int(t1 * rate))
        if i1 > i0:
            hum_near[i0:i1] += 3.0 * _bump(ts[i0:i1], t0, t1, 0.2)
    talk = np.zeros(n_sets)
    if room["talk_lsb"] > 0:
        b, a = signal.butter(
            2, [min(120, 0.3 * rate), min(2500, 0.45 * rate)], btype="band", fs=rate
        )
        talk = signal.lfilter(b, a, rng.normal(0, 1, n_sets))
        talk /= max(talk.std(), 1e-9)
        env = np.zeros(n_sets)
        t = rng.uniform(0, 2)
        while t < ts[-1]:
            spurt = rng.uniform(0.8, 5.0)
            i0, i1 = int(t * rate), min(n_sets, int((t + spurt) * rate))
            syl = 0.6 + 0.4 * np.sin(2 * np.pi * rng.uniform(3.5, 6.0) * ts[i0:i1]) ** 2
            env[i0:i1] = syl * rng.uniform(0.4, 1.6)
            t += spurt + rng.uniform(0.3, 3.0)
        talk *= env * room["talk_lsb"]
    music = np.zeros(n_sets)
    if room.get("music"):
        beat = 60.0 / room["music_bpm"]
        t = rng.uniform(0, beat)
        while t < ts[-1]:
            i0, i1 = int(t * rate), min(n_sets, int((t + 0.25) * rate))
            tr = ts[i0:i1] - t
            f0 = rng.uniform(45, 70)
            music[i0:i1] += np.exp(-tr / 0.06) * np.sin(2 * np.pi * f0 * tr)
            t += beat
        bass = np.sin(
            2
            * np.pi
            * np.cumsum(
                np.repeat(rng.uniform(40, 110, int(ts[-1] / beat) + 2), int(beat * rate) + 1)[
                    :n_sets
                ]
            )
            / rate
        )
        music = (music + 0.4 * bass) * room["music_lsb"]
    buzz = np.zeros(n_sets)
    for t0, t1, fb, amp in sim.buzz:
        i0, i1 = max(0, int(t0 * rate)), min(n_sets, int(t1 * rate))
        if i1 > i0:
            tr = ts[i0:i1]
            buzz[i0:i1] += (
                amp
                * _bump(tr, t0, t1, 0.03)
                * (np.sin(2 * np.pi * fb * tr) + 0.3 * np.sin(4 * np.pi * fb * tr + 1.0))
            )
    for ch in range(N_CH):
        pz = kit["piezo"][ch]
        tc = ts + ch * skew
        hum = (
            pz["hum_lsb"]
            * room["hum_scale"]
            * hum_near
            * (
                np.sin(2 * np.pi * hum_f * tc + ch * 0.4)
                + 0.35 * np.sin(2 * np.pi * 3 * hum_f * tc + 1.1)
                + 0.15 * np.sin(2 * np.pi * 2 * hum_f * tc + 0.3)
            )
        )
        table_att = 0.72**ch
        sig[:, ch] += (
            hum
            + talk * rng.uniform(0.7, 1.3)
            + music * table_att
            + buzz * table_att * rng.uniform(0.8, 1.2)
        )
    # lean: cardboard creaks while the table is bent
    for t0, t1, mag in sim.lean:
        for _ in range(int(rng.integers(1, 6))):
            tc = rng.uniform(t0, t1)
            i0 = int(tc * rate)
            i1 = min(n_sets, i0 + int(0.05 * rate))
            if i0 < n_sets:
                for ch in range(N_CH):
                    sig[i0:i1, ch] += rng.normal(0, 2.0 * mag, i1 - i0) * np.exp(
                        -np.arange(i1 - i0) / (0.01 * rate)
                    )
    return sig


def _disconnected_at(sim: Sim, ch: int, t: float) -> bool:
    if ch < 0 or ch >= N_CH:
        return False
    return any(a <= t < b for a, b in sim.disc[ch])


def _resonator(f0: float, q: float, fs: float) -> tuple[np.ndarray, np.ndarray]:
    w0 = 2 * np.pi * f0
    b, a = signal.bilinear([w0 * w0], [1.0, w0 / q, w0 * w0], fs=fs)
    return b, a


def synth_force(
    sim: Sim, kit: dict[str, Any], room: dict[str, Any], rng: np.random.Generator, n: int
) -> tuple[np.ndarray, np.ndarray]:
    """Force on each plate, grams-force, on the FS_LOAD grid.

    Returns (static, dynamic): the static part (weights, hands, air) is what the
    piezo's low-frequency path also sees; dynamic holds impulses and table motion.
    """
    fs = FS_LOAD
    tg = np.arange(n) / fs
    stat = np.zeros((n, N_CH))
    dyn = np.zeros((n, N_CH))
    creep = np.zeros((n, N_CH))

    def step(arr: np.ndarray, t: float, L: int, v: float) -> None:
        if t == math.inf:
            return
        i = int(math.ceil(t * fs))
        if 0 <= i < n:
            arr[i, L] += v
        elif i < 0:
            arr[0, L] += v

    for L, t_on, t_off, grams, t_slip, slip, cr in sim.weights:
        first = grams * (1 - slip)
        step(stat, t_on, L, first)
        step(creep, t_on, L, grams * cr)
        if t_slip < t_off:
            step(stat, t_slip, L, grams * slip)
            step(stat, t_off, L, -grams)
        else:
            step(stat, t_off, L, -first)
        step(creep, t_off, L, -grams * cr)
    stat = np.cumsum(stat, axis=0)
    creep = np.cumsum(creep, axis=0)
    for L in range(N_CH):
        a = math.exp(-1 / (fs * kit["cell"][L]["creep_tau_s"]))
        creep[:, L] = signal.lfilter([1 - a], [1, -a], creep[:, L])
    stat += creep
    for t0, t1, L, grams, _r in sim.hands:
        i0, i1 = max(0, int(t0 * fs)), min(n, int(t1 * fs) + 1)
        if i1 <= i0:
            continue
        tt = tg[i0:i1]
        tremor = 1 + 0.04 * np.sin(2 * np.pi * rng.uniform(8, 12) * tt + rng.uniform(0, 6))
        wob = np.cumsum(rng.normal(0, 1, i1 - i0)) / math.sqrt(fs) * 0.3
        stat[i0:i1, L] += grams * _bump(tt, t0, t1, min(0.2, (t1 - t0) / 3)) * (tremor + wob * 0.05)
    for t, L, grams, tau in sim.air:
        i0, i1 = max(0, int((t - 3 * tau) * fs)), min(n, int((t + 3 * tau) * fs))
        if i1 > i0:
            stat[i0:i1, L] += grams * np.exp(-0.5 * ((tg[i0:i1] - t) / tau) ** 2)
    for t0, t1, mag in sim.lean:
        for L in range(N_CH):
            stat[:, L] += 0.03 * mag * rng.normal(0, 1) * _bump(tg, t0, t1, 0.5)
    # slow air currents / thermal wander of each plate
    b, a = signal.butter(1, 1.5, fs=fs)
    for L in range(N_CH):
        w = signal.lfilter(b, a, rng.normal(0, 1, n))
        stat[:, L] += w / max(w.std(), 1e-9) * room["air_g"]
    # impulses of strikes (N*s -> grams-force over one grid step)
    for t, plate, J, _tau, _x, _y in sim.strikes:
        if 0 <= plate < N_CH:
            i = int(t * fs)
            if 0 <= i < n - 1:
                fr = t * fs - i
                g_amp = J / GRAV * 1e3 * fs
                dyn[i, plate] += g_amp * (1 - fr)
                dyn[i + 1, plate] += g_amp * fr
    # table motion: every plate's inertia on its spring
    ft = kit["table_mode_hz"]
    for t, dv, _contact in sim.table:
        i0 = max(0, int(t * fs))
        i1 = min(n, i0 + int(0.4 * fs))
        if i1 <= i0:
            continue
        tr = tg[i0:i1] - t
        w = 2 * np.pi * ft
        acc = dv * w * np.exp(-0.15 * w * tr) * np.cos(w * tr)
        for L in range(N_CH):
            dyn[i0:i1, L] -= kit["cell"][L]["plate_g"] * acc / GRAV
    for t0, t1, f, amp in sim.buzz:
        i0, i1 = max(0, int(t0 * fs)), min(n, int(t1 * fs))
        if i1 > i0:
            acc = amp * 0.01 * np.sin(2 * np.pi * f * tg[i0:i1]) * _bump(tg[i0:i1], t0, t1, 0.03)
            for L in range(N_CH):
                dyn[i0:i1, L] += kit["cell"][L]["plate_g"] * acc / GRAV * 0.72**L
    return stat, dyn


def _sinc4(x: np.ndarray, length: int) -> np.ndarray:
    """Four cascaded moving averages (the HX711 sinc^4 decimation filter)."""
    y = x
    for _ in range(4):
        c = np.cumsum(np.concatenate([[0.0], y]))
        out = np.empty_like(y)
        out[length:] = (c[length + 1 :] - c[1:-length]) / length
        out[:length] = c[1 : length + 1] / np.arange(1, length + 1)
        y = out
    return y


def synth_load(
    sim: Sim,
    kit: dict[str, Any],
    rng: np.random.Generator,
    stat: np.ndarray,
    dyn: np.ndarray,
    duration: float,
    dev_scale: float,
    t0_dev: float,
) -> tuple[list[tuple[float, int, np.ndarray]], list[float]]:
    """HX711 conversions and the firmware's parallel read loop.

    Returns a list of (read time s, valid mask, counts[8]) and the number of
    load timeouts.
    """
    n = stat.shape[0]
    fs = FS_LOAD
    tg = np.arange(n) / fs
    nominal = kit["load_rate_nominal"]
    rates = [r / dev_scale for r in kit["hx_chip_rate_real"]]
    filt = np.zeros((n, N_CH))
    for L in range(N_CH):
        cell = kit["cell"][L]
        b, a = _resonator(cell["f_cell_hz"], cell["q"], fs)
        mech = signal.lfilter(b, a, stat[:, L] + dyn[:, L])
        length = max(2, int(round(fs / rates[L])))
        filt[:, L] = _sinc4(mech, length)
    # drift: warm-up and random walk (grams)
    for L in range(N_CH):
        cell = kit["cell"][L]
        walk = np.cumsum(rng.normal(0, cell["walk_g_per_rts"] * math.sqrt(100 / fs), n // 100 + 2))
        walk = np.interp(tg, np.arange(walk.size) * 100 / fs, walk)
        warm = cell["warmup_g"] * (1 - np.exp(-(tg + t0_dev + 0.5) / cell["warmup_tau_s"]))
        filt[:, L] += walk + warm
    # conversion completion times per chip, restarted after each reconnection
    settle = 4.0
    comp: list[np.ndarray] = []
    offs: list[list[tuple[float, float]]] = []
    for L in range(N_CH):
        T = 1.0 / rates[L]
        segs = []
        start = -t0_dev + settle * T + rng.uniform(0, T)
        off_list = [(-1e9, 0.0)]
        for tb, tm in sim.disc[L]:
            segs.append(np.arange(start, min(tb, duration + 1), T))
            if tm == math.inf:
                start = math.inf
                break
            start = tm + settle * T * rng.uniform(1.0, 1.3)
            off_list.append((tm, rng.normal(0, kit["cell"][L]["reconnect_offset_g"])))
        if start != math.inf:
            segs.append(np.arange(start, duration + 1, T))
        c = np.concatenate(segs) if segs else np.zeros(0)
        c = c + rng.normal(0, 20e-6, c.size)
        comp.append(np.sort(c))
        offs.append(off_list)

    # value each chip would report for each of its conversions
    conv_val: list[list[int]] = []
    for L in range(N_CH):
        cell = kit["cell"][L]
        c = comp[L]
        g = np.interp(c, tg, filt[:, L])
        for tm, og in offs[L]:
            g = g + np.where(c >= tm, og, 0.0)
        cnt = (
            cell["offset_counts"]
            + cell["counts_per_g"] * g
            + rng.normal(0, kit["hx_noise_counts"][L], c.size)
        )
        conv_val.append(np.clip(np.round(cnt), -(1 << 23), (1 << 23) - 1).astype(int).tolist())
    comp_l = [c.tolist() + [math.inf] for c in comp]
    disc = [[(a, b) for a, b in sim.disc[L]] for L in range(N_CH)]

    reads: list[tuple[float, int, np.ndarray]] = []
    ptr = [0] * N_CH  # index of the first conversion not yet read
    present = [True] * N_CH
    t_prev = -t0_dev
    period = 1.0 / nominal
    timeouts: list[float] = []
    jit = rng.uniform(5e-6, 80e-6, int(duration * nominal * 3) + 100).tolist()
    ji = 0
    while True:
        t_ready = max((comp_l[L][ptr[L]] for L in range(N_CH) if present[L]), default=math.inf)
        t_limit = t_prev + 1.6 * period
        t_read = (t_limit if t_ready > t_limit else t_ready) + jit[ji % len(jit)]
        ji += 1
        if t_read >= duration:
            break
        mask = 0
        vals = np.zeros(N_CH, np.int64)
        for L in range(N_CH):
            cl = comp_l[L]
            p = ptr[L]
            if cl[p] <= t_read and not any(a <= t_read < b for a, b in disc[L]):
                while cl[p + 1] <= t_read:
                    p += 1
                present[L] = True
                vals[L] = conv_val[L][p]
                ptr[L] = p + 1
                mask |= 1 << L
            elif present[L]:
                present[L] = False
                timeouts.append(t_read)
        if mask:
            reads.append((t_read, mask, vals))
        t_prev = t_read
    return reads, timeouts


# ---------------------------------------------------------------------------
# one recording
# ---------------------------------------------------------------------------


def generate(seed: int, scenario: str, duration: float) -> tuple[bytes, dict[str, Any]]:
    if scenario not in SCENARIOS:
        raise ValueError(scenario)
    kit = make_kit(seed)
    rng = np.random.default_rng(
        np.random.SeedSequence([int(seed), SCENARIOS.index(scenario) + 1, 0x0B0B])
    )
    room = make_room(scenario, rng)
    sim = Sim(kit, room, rng, duration)
    quiet = rng.uniform(4.0, 7.0)
    if scenario == "game":
        script_game(sim, quiet, duration)
    else:
        script_throws(sim, scenario, quiet, duration - 2.5)
    sim.run_pending()
    dev_scale = 1 + kit["clock_ppm"] * 1e-6  # device seconds per real second

    rate = kit["piezo_rate_hz"]
    n_sets = int(round(duration * rate))
    sig = synth_piezo(sim, kit, room, rng, n_sets, float(rate), dev_scale)
    n_load = int(duration * FS_LOAD) + 1
    stat, dyn = synth_force(sim, kit, room, rng, n_load)
    # quasi-static piezo path (AC-coupled, high-passed by the bias network)
    a_hp = math.exp(-1 / (FS_LOAD * kit["piezo_hp_tau_s"]))
    tg = np.arange(n_load) / FS_LOAD
    ts = np.arange(n_sets) / rate
    for ch in range(N_CH):
        hp = signal.lfilter([(1 + a_hp) / 2, -(1 + a_hp) / 2], [1, -a_hp], stat[:, ch])
        sig[:, ch] += kit["piezo"][ch]["lf_lsb_per_g"] * np.interp(ts, tg, hp)
    # ADC: bias, noise, disconnected inputs, mux memory, quantisation
    v = sig + np.array([pz["bias"] for pz in kit["piezo"]])[None, :]
    v += rng.normal(0, kit["adc_noise_lsb"], v.shape)
    alpha = np.full((n_sets, N_CH), kit["mux_alpha"])
    for ch in range(N_CH):
        for tb, tm in sim.disc[ch]:
            i0 = int(max(0, tb * rate))
            i1 = int(min(n_sets, (tm if tm != math.inf else duration) * rate))
            if i1 <= i0:
                continue
            tt = ts[i0:i1]
            hum = 25 * room["hum_scale"] * np.sin(2 * np.pi * room["mains_hz"] / dev_scale * tt)
            if kit["bias_on_base"]:
                v[i0:i1, ch] = kit["piezo"][ch]["bias"] + hum + rng.normal(0, 2, i1 - i0)
                alpha[i0:i1, ch] = 0.35
            else:
                wander = np.cumsum(rng.normal(0, 0.3, i1 - i0))
                v[i0:i1, ch] = kit["piezo"][ch]["bias"] + wander + hum
                alpha[i0:i1, ch] = 0.85
            for te in (tb, tm):
                if te != math.inf:
                    j0 = int(te * rate)
                    j1 = min(n_sets, j0 + int(0.02 * rate))
                    if 0 <= j0 < n_sets:
                        v[j0:j1, ch] += rng.normal(0, 150) * np.exp(
                            -np.arange(j1 - j0) / (0.003 * rate)
                        )
    vv = np.empty_like(v)
    prev7 = np.concatenate([[v[0, 7]], v[:-1, 7]])
    for ch in range(N_CH):
        prev = prev7 if ch == 0 else vv[:, ch - 1]
        vv[:, ch] = (1 - alpha[:, ch]) * v[:, ch] + alpha[:, ch] * prev
    piezo = np.clip(np.round(vv), 0, 1023).astype("<u2")

    # timing of the device
    t0_us = int(rng.integers(2_000, 60_000)) // 4 * 4  # first piezo set after boot
    t0_dev = t0_us * 1e-6
    reads, timeouts = synth_load(sim, kit, rng, stat, dyn, duration, dev_scale, t0_dev)

    # assemble the stream
    msgs: list[tuple[float, int, int, bytes]] = []  # emit time, order, type, body
    hello = struct.pack(
        "<BBBBBBHHB", 1, *kit["fw"], N_CH, N_CH, rate, kit["load_rate_nominal"], 10
    ) + bytes.fromhex(kit["device_id"])
    msgs.append((-t0_dev + 0.0015, 0, 0x01, hello))
    per_us = 1e6 / rate
    batch = kit["batch_sets"]
    read_times = np.array([r[0] for r in reads]) if reads else np.zeros(0)
    k = 0
    while k < n_sets:
        nb = batch
        t_emit = (k + nb - 1) / rate + 3e-5
        j = int(np.searchsorted(read_times, t_emit - 3.5e-4))
        if j < read_times.size and read_times[j] <= t_emit and nb < 14 and rng.random() < 0.5:
            nb += 1  # the main loop was busy clocking the HX711s
        nb = min(nb, n_sets - k)
        t_emit = (k + nb - 1) / rate + 3e-5
        jit = 0 if k == 0 else int(rng.integers(0, 9))
        t_us = (t0_us + int(round(k * per_us)) + jit) // 4 * 4
        body = struct.pack("<IB", t_us & 0xFFFFFFFF, nb) + piezo[k : k + nb].tobytes()
        msgs.append((t_emit, 1, 0x02, body))
        k += nb
    for t_read, mask, vals in reads:
        t_us = (t0_us + int(round(t_read * 1e6))) // 4 * 4
        b24 = bytearray()
        for L in range(N_CH):
            x = int(vals[L]) & 0xFFFFFF if mask >> L & 1 else 0
            b24 += x.to_bytes(3, "little")
        msgs.append(
            (t_read + 2.5e-4, 2, 0x03, struct.pack("<IB", t_us & 0xFFFFFFFF, mask) + bytes(b24))
        )
    t = 1.0 - t0_dev
    to_arr = np.array(timeouts)
    while t < duration:
        n_to = int(np.sum(to_arr <= t))
        msgs.append(
            (
                t,
                3,
                0x04,
                struct.pack(
                    "<IHHHBB",
                    int((t + t0_dev) * 1000),
                    0,
                    0,
                    n_to & 0xFFFF,
                    int(rng.integers(30, 55)),
                    0,
                ),
            )
        )
        t += 1.0
    msgs.sort(key=lambda m: (m[0], m[1]))
    out = bytearray()
    if kit["boot_junk"]:
        out += bytes([0xF0, 0xFE, 0x80][: int(rng.integers(1, 4))])
    out += b"\x00"
    first_us = None
    for seq, (_te, _o, mtype, body) in enumerate(msgs):
        out += frame_message(mtype, seq, body)
        if first_us is None and mtype in (0x02, 0x03):
            first_us = struct.unpack_from("<I", body, 0)[0]
    shift = (t0_us - (first_us if first_us is not None else t0_us)) * 1e-6

    truth = build_truth(sim, kit, room, scenario, seed, duration, shift, rate, reads, dev_scale)
    return bytes(out), truth


def build_truth(
    sim: Sim,
    kit: dict[str, Any],
    room: dict[str, Any],
    scenario: str,
    seed: int,
    duration: float,
    shift: float,
    rate: int,
    reads: list[tuple[float, int, np.ndarray]],
    dev_scale: float,
) -> dict[str, Any]:
    def ts(t: float) -> float:
        return round(t + shift, 4)

    def inside(t: float) -> bool:
        return 0 <= t + shift < duration

    landings = []
    for ld in sorted(sim.landings, key=lambda d: d["t"]):
        if not inside(ld["t"]):
            continue
        out = {
            "t": ts(ld["t"]),
            "t_first_impact": ts(ld["t_first_impact"]),
            "floor": int(ld["floor"]),
            "cubes": 1,
            "knocked": bool(ld["knocked"]),
        }
        if ld["knocked"]:
            out["from_floor"] = int(ld["from_floor"])
        out["caused_knockdown"] = bool(ld["caused_knockdown"])
        if ld.get("color"):
            out["color"] = ld["color"]
        landings.append(out)
    knockdowns = [
        {"t": ts(k["t"]), "from_floor": int(k["from_floor"]), "to_floor": int(k["to_floor"])}
        for k in sorted(sim.knockdowns, key=lambda d: d["t"])
        if inside(k["t"]) and k["to_floor"] is not None
    ]
    if len(read_t := [r[0] for r in reads]) > 1:
        true_rate = (len(read_t) - 1) / (read_t[-1] - read_t[0])
    else:
        true_rate = 0.0
    tower = {
        "cube_mass_g": round(kit["cube_mass_g"], 4),
        "cube_mass_rel_sd": round(kit["cube_mass_rel_sd"], 4),
        "cube_edge_mm": round(kit["cube_edge_m"] * 1e3, 2),
        "load_rate_hz": kit["load_rate_nominal"],
        "load_rate_true_hz": round(true_rate, 3),
        "hx711_chip_rates_hz": [round(r / dev_scale, 3) for r in kit["hx_chip_rate_real"]],
        "hx711_board": kit["hx711_board"],
        "hx711_noise_counts_rms": [round(x, 1) for x in kit["hx_noise_counts"]],
        "counts_per_g": [round(c["counts_per_g"], 1) for c in kit["cell"]],
        "cell_types": [c["type"] for c in kit["cell"]],
        "cell_mounts": [c["mount"] for c in kit["cell"]],
        "plate_g": [round(c["plate_g"], 2) for c in kit["cell"]],
        "cell_resonance_hz": [round(c["f_cell_hz"], 1) for c in kit["cell"]],
        "piezo_rate_hz": rate,
        "piezo_disc": kit["piezo_disc"],
        "piezo_mount": kit["piezo_mount"],
        "piezo_gain_lsb_per_mNs": round(kit["piezo_gain_lsb_per_mNs"], 2),
        "piezo_frontend_lp_hz": kit["piezo_frontend_lp_hz"],
        "piezo_hp_tau_ms": round(kit["piezo_hp_tau_s"] * 1e3, 2),
        "bias_network": "base board" if kit["bias_on_base"] else "in module",
        "adc_noise_lsb": round(kit["adc_noise_lsb"], 3),
        "mux_crosstalk": round(kit["mux_alpha"], 4),
        "adc_skew_us": kit["adc_skew_us"],
        "xtalk": [round(x, 3) for x in kit["xtalk"]],
        "clock": kit["clock"],
        "clock_ppm": round(kit["clock_ppm"], 1),
        "batch_sets": kit["batch_sets"],
        "boot_junk": kit["boot_junk"],
        "room": {
            "mains_hz": room["mains_hz"],
            "hum_scale": round(room["hum_scale"], 2),
            "talk_lsb": round(room["talk_lsb"], 2),
            "music": room.get("music", False),
            "children": room["children"],
            "people": len(room["people"]),
        },
    }
    return {
        "format": TRUTH_FORMAT,
        "model": "U",
        "scenario": scenario,
        "seed": int(seed),
        "duration_s": float(duration),
        "cells": kit["cells"],
        "landings": landings,
        "knockdowns": knockdowns,
        "removals": [
            {"t": ts(r["t"]), "floor": r["floor"], "cubes": r["cubes"]}
            for r in sorted(sim.removals, key=lambda d: d["t"])
            if inside(r["t"])
        ],
        "lifts": [{"t": ts(x["t"]), "exposed": x["exposed"]} for x in sim.lifts if inside(x["t"])],
        "closes": [
            {"t": ts(x["t"]), "exposed": x["exposed"]} for x in sim.closes if inside(x["t"])
        ],
        "knocks": [
            {"t": ts(x["t"]), "kind": x["kind"]}
            for x in sorted(sim.knocks, key=lambda d: d["t"])
            if inside(x["t"])
        ],
        "tower": tower,
    }


# ---------------------------------------------------------------------------
# CLI
# ---------------------------------------------------------------------------


def _job(args: tuple[str, int, str, float]) -> str:
    out, seed, scenario, duration = args
    data, truth = generate(seed, scenario, duration)
    base = os.path.join(out, f"{scenario}_t{seed}")
    with open(base + ".bin", "wb") as f:
        f.write(data)
    with open(base + ".truth.json", "w") as f:
        json.dump(truth, f, indent=1)
    return base


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--towers", type=int, default=8)
    ap.add_argument("--first-seed", type=int, default=1)
    ap.add_argument("--duration", type=float, default=120.0)
    ap.add_argument("--scenarios", nargs="+", default=list(SCENARIOS))
    ap.add_argument("--workers", type=int, default=2)
    a = ap.parse_args(argv)
    bad = [s for s in a.scenarios if s not in SCENARIOS]
    if bad:
        print(f"unknown scenario {bad[0]!r} (known: {', '.join(SCENARIOS)})", file=sys.stderr)
        return 2
    if a.duration < 10 or a.towers < 1:
        print("duration must be >= 10 s and towers >= 1", file=sys.stderr)
        return 2
    os.makedirs(a.out, exist_ok=True)
    jobs = [
        (a.out, s, sc, a.duration)
        for s in range(a.first_seed, a.first_seed + a.towers)
        for sc in a.scenarios
    ]
    if a.workers > 1:
        with ProcessPoolExecutor(max_workers=a.workers) as ex:
            for base in ex.map(_job, jobs):
                print(base)
    else:
        for j in jobs:
            print(_job(j))
    return 0


if __name__ == "__main__":
    sys.exit(main())
