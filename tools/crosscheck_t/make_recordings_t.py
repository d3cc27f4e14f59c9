#!/usr/bin/env python3
"""Cross-check model T: an independent, physically motivated tower simulator.

Writes towerear recordings (the device -> host bytes of wire protocol v1) plus
ground truth, to judge ``towerear detect``.  Written blind from design.md,
contracts.md sections 1-2 and the Mord im Arosa rules; it imports no project
code.  See README.md next to this file for the model's choices.

Usage::

    make_recordings_t.py --out DIR --towers N --first-seed S --duration SECONDS
                         [--scenarios single rapid noisy game] [--workers 2]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from scipy import signal

TRUTH_FORMAT = "towerear-crosscheck-truth/1"
SCENARIOS = ("single", "rapid", "noisy", "game")
N_CH = 8
G = 9.81  # m/s^2
PIEZO_RATE_HZ = 2000  # nominal and true piezo set rate (device clock)
ADC_BITS = 10
LOAD_FS_LIMIT = (1 << 23) - 1

# --------------------------------------------------------------------------
# Protocol codec (contracts.md section 1), written from the contract text
# --------------------------------------------------------------------------

T_HELLO, T_PIEZO, T_LOAD, T_STATUS, T_ACK, T_PONG = 0x01, 0x02, 0x03, 0x04, 0x05, 0x06


def _make_crc_table() -> list[int]:
    table = []
    for byte in range(256):
        crc = byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
            crc &= 0xFFFF
        table.append(crc)
    return table


CRC_TABLE = _make_crc_table()
CRC_TABLE_NP = np.array(CRC_TABLE, dtype=np.uint16)


def crc16_ccitt_false(data: bytes, crc: int = 0xFFFF) -> int:
    """CRC-16/CCITT-FALSE: poly 0x1021, init 0xFFFF, not reflected, xorout 0."""
    for b in data:
        crc = ((crc << 8) & 0xFFFF) ^ CRC_TABLE[((crc >> 8) ^ b) & 0xFF]
    return crc


def crc16_rows(mat: np.ndarray) -> np.ndarray:
    """The same CRC over every row of a (M, L) uint8 matrix at once."""
    crc = np.full(mat.shape[0], 0xFFFF, dtype=np.uint16)
    for j in range(mat.shape[1]):
        idx = ((crc >> 8) ^ mat[:, j]) & 0xFF
        crc = (crc << 8) ^ CRC_TABLE_NP[idx]
    return crc


def cobs_encode(data: bytes) -> bytes:
    """COBS-encode (no trailing delimiter)."""
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
    """COBS-decode one frame (without its delimiter); ValueError when damaged."""
    out = bytearray()
    i, n = 0, len(enc)
    while i < n:
        code = enc[i]
        if code == 0:
            raise ValueError("zero byte inside a COBS frame")
        j = i + code
        if j > n:
            raise ValueError("truncated COBS block")
        block = enc[i + 1 : j]
        out += block
        i = j
        if code < 0xFF and i < n:
            out.append(0)
    return bytes(out)


def frame_message(mtype: int, seq: int, body: bytes) -> bytes:
    """Message -> COBS frame including the 0x00 delimiter."""
    msg = bytes([mtype]) + (seq & 0xFFFF).to_bytes(2, "little") + body
    msg += crc16_ccitt_false(msg).to_bytes(2, "little")
    if len(msg) > 254:
        raise ValueError("message longer than 254 bytes")
    return cobs_encode(msg) + b"\x00"


class FrameDecoder:
    """Streaming decoder: ``feed(bytes) -> [(type, seq, body)]`` with damage counters."""

    def __init__(self) -> None:
        self._buf = bytearray()
        self.bad_frames = 0

    def feed(self, data: bytes) -> list[tuple[int, int, bytes]]:
        self._buf += data
        out: list[tuple[int, int, bytes]] = []
        while True:
            k = self._buf.find(0)
            if k < 0:
                break
            raw = bytes(self._buf[:k])
            del self._buf[: k + 1]
            if not raw:
                continue
            try:
                msg = cobs_decode(raw)
            except ValueError:
                self.bad_frames += 1
                continue
            if len(msg) < 5 or len(msg) > 254:
                self.bad_frames += 1
                continue
            if crc16_ccitt_false(msg[:-2]) != int.from_bytes(msg[-2:], "little"):
                self.bad_frames += 1
                continue
            out.append((msg[0], int.from_bytes(msg[1:3], "little"), msg[3:-2]))
        return out


def decode_recording(data: bytes) -> dict[str, Any]:
    """Decode a whole recording into arrays (used by the tests and --verify)."""
    dec = FrameDecoder()
    msgs = dec.feed(data)
    hello: dict[str, Any] | None = None
    piezo_t: list[int] = []
    piezo_blocks: list[np.ndarray] = []
    load_t: list[int] = []
    load_valid: list[int] = []
    load_vals: list[list[int]] = []
    status: list[tuple[int, ...]] = []
    other: list[int] = []
    seqs: list[int] = []
    first_data_t: int | None = None
    last_raw: int | None = None
    wraps = 0

    def unwrap(t: int) -> int:
        nonlocal last_raw, wraps
        if last_raw is not None and t < last_raw and last_raw - t > (1 << 31):
            wraps += 1
        last_raw = t
        return t + (wraps << 32)

    for mtype, seq, body in msgs:
        seqs.append(seq)
        if mtype == T_HELLO:
            hello = {
                "proto": body[0],
                "fw": tuple(body[1:4]),
                "n_piezo": body[4],
                "n_load": body[5],
                "piezo_rate_hz": int.from_bytes(body[6:8], "little"),
                "load_rate_hz": int.from_bytes(body[8:10], "little"),
                "adc_bits": body[10],
                "device_id": body[11:19].hex(),
            }
        elif mtype == T_PIEZO and hello is not None:
            t = unwrap(int.from_bytes(body[0:4], "little"))
            n = body[4]
            arr = np.frombuffer(body[5:], dtype="<u2").reshape(n, hello["n_piezo"])
            piezo_t.append(t)
            piezo_blocks.append(arr)
            first_data_t = t if first_data_t is None else first_data_t
        elif mtype == T_LOAD and hello is not None:
            t = unwrap(int.from_bytes(body[0:4], "little"))
            load_t.append(t)
            load_valid.append(body[4])
            vals = []
            for k in range(hello["n_load"]):
                v = int.from_bytes(body[5 + 3 * k : 8 + 3 * k], "little")
                vals.append(v - (1 << 24) if v & 0x800000 else v)
            load_vals.append(vals)
            first_data_t = t if first_data_t is None else first_data_t
        elif mtype == T_STATUS:
            status.append(tuple(np.frombuffer(body[:12], dtype=np.uint8)))
        else:
            other.append(mtype)
    return {
        "hello": hello,
        "piezo_t_us": np.array(piezo_t, dtype=np.int64),
        "piezo": np.concatenate(piezo_blocks) if piezo_blocks else np.zeros((0, N_CH)),
        "piezo_n": np.array([b.shape[0] for b in piezo_blocks], dtype=np.int64),
        "load_t_us": np.array(load_t, dtype=np.int64),
        "load_valid": np.array(load_valid, dtype=np.int64),
        "load": np.array(load_vals, dtype=np.int64).reshape(-1, N_CH),
        "status": status,
        "other_types": other,
        "seqs": seqs,
        "first_data_t_us": first_data_t,
        "bad_frames": dec.bad_frames,
    }


# --------------------------------------------------------------------------
# The tower: per-seed hardware parameters
# --------------------------------------------------------------------------


@dataclass
class Tower:
    seed: int
    cube_mass_g: float
    module_h_m: float
    floor_dist: np.ndarray  # probability a thrown cube ends on floor k (no knocks)
    p_stay: np.ndarray  # P(rest on L | reached plate L)
    p_strike_pass: float
    p_rim: float
    p_wall: float
    restitution: float
    p_knock_per_cube: float
    p_stay_after_knock: float
    plate_fn_hz: np.ndarray
    plate_zeta: np.ndarray
    plate_mass_g: np.ndarray
    piezo_sens: np.ndarray
    piezo_modes: list[np.ndarray]  # per level (3, 3): f_hz, tau_s, weight
    struct_modes: np.ndarray
    xtalk: np.ndarray  # (8 receivers, 8 sources)
    piezo_bias: np.ndarray
    adc_noise: np.ndarray
    hum_gain: np.ndarray
    ac_tau_s: float
    static_lsb_per_g: np.ndarray
    load_rate_nominal: int
    load_rate_true: float
    counts_per_g: np.ndarray
    sign: np.ndarray
    offset_counts: np.ndarray
    load_noise_g: np.ndarray
    drift_g_per_sqrt_s: np.ndarray
    creep_frac: float
    creep_tau_s: float
    reseat_sigma_g: float
    sway_fn_hz: float
    sway_zeta: float
    sway_gain: np.ndarray  # g-force per (m/s^2) of tower sway, per level
    flaky_channel: int  # -1: none
    flaky_rate: float
    chunk_nominal: int
    boot_style: str  # "boot" or "running"
    fw: tuple[int, int, int]
    device_id: bytes
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def cells(self) -> str:
        return "matched" if np.all(self.sign == self.sign[0]) else "mixed"


def make_tower(seed: int) -> Tower:
    rng = np.random.default_rng([seed, 0x7057E7])
    # Floors: few cubes reach the ground floor, the rest spread unevenly.
    q0 = rng.uniform(0.02, 0.07)
    q = np.empty(N_CH)
    q[0] = q0
    q[1:] = rng.dirichlet(np.full(7, 6.0)) * (1 - q0)
    p_stay = np.ones(N_CH)
    for lvl in range(1, N_CH):
        p_stay[lvl] = q[lvl] / q[: lvl + 1].sum()
    plate_fn = rng.uniform(35.0, 110.0, N_CH)
    plate_fn[0] = rng.uniform(80.0, 160.0)  # base plate sits on the stiff base
    modes = []
    for _ in range(N_CH):
        f = np.sort(rng.uniform(140.0, 930.0, 3))
        tau = rng.uniform(0.002, 0.014, 3)
        w = rng.dirichlet(np.ones(3) * 2.0)
        modes.append(np.stack([f, tau, w], axis=1))
    struct = np.stack(
        [rng.uniform(60.0, 340.0, 3), rng.uniform(0.008, 0.04, 3), rng.dirichlet(np.ones(3))],
        axis=1,
    )
    xt_adj = rng.uniform(0.08, 0.35)
    d = np.abs(np.arange(N_CH)[:, None] - np.arange(N_CH)[None, :])
    xtalk = xt_adj**d * np.exp(rng.normal(0.0, 0.25, (N_CH, N_CH)))
    np.fill_diagonal(xtalk, 1.0)
    load_rate_nominal = 80 if rng.random() < 0.9 else 10
    cpg = rng.uniform(15000.0, 30000.0) * rng.uniform(0.9, 1.1, N_CH)
    u = rng.random()
    if u < 0.6:
        sign = np.ones(N_CH)
    elif u < 0.75:
        sign = -np.ones(N_CH)
    else:
        sign = np.ones(N_CH)
        sign[rng.choice(N_CH, size=int(rng.integers(1, 4)), replace=False)] = -1.0
    dead_g = rng.uniform(3.0, 20.0, N_CH) + rng.normal(0.0, 1.5, N_CH)
    offset = sign * cpg * dead_g + rng.normal(0.0, 3000.0, N_CH)
    noise_g = np.exp(rng.uniform(math.log(0.004), math.log(0.035), N_CH))
    if load_rate_nominal == 10:
        noise_g *= 0.55  # HX711 at 10 SPS: about 50 nV instead of 90 nV rms
    plate_mass = rng.uniform(8.0, 25.0, N_CH)
    return Tower(
        seed=seed,
        cube_mass_g=float(rng.uniform(0.3, 0.8)),
        module_h_m=float(rng.uniform(0.028, 0.034)),
        floor_dist=q,
        p_stay=p_stay,
        p_strike_pass=float(rng.uniform(0.5, 0.85)),
        p_rim=float(rng.uniform(0.2, 0.5)),
        p_wall=float(rng.uniform(0.1, 0.35)),
        restitution=float(rng.uniform(0.25, 0.5)),
        p_knock_per_cube=float(rng.uniform(0.005, 0.015)),
        p_stay_after_knock=float(rng.uniform(0.3, 0.65)),
        plate_fn_hz=plate_fn,
        plate_zeta=rng.uniform(0.04, 0.25, N_CH),
        plate_mass_g=plate_mass,
        piezo_sens=rng.uniform(0.7, 1.4) * np.exp(rng.normal(0.0, 0.35, N_CH)),
        piezo_modes=modes,
        struct_modes=struct,
        xtalk=xtalk,
        piezo_bias=np.clip(512 + rng.normal(0.0, 5.0, N_CH), 490, 535),
        adc_noise=rng.uniform(0.3, 1.0, N_CH),
        hum_gain=rng.uniform(0.5, 1.5, N_CH) * (1.0 + np.arange(N_CH) / 10.0),
        ac_tau_s=float(rng.uniform(0.005, 0.03)),
        static_lsb_per_g=rng.uniform(3.0, 10.0, N_CH),
        load_rate_nominal=load_rate_nominal,
        load_rate_true=load_rate_nominal * (1.0 + rng.normal(0.0, 0.008)),
        counts_per_g=cpg,
        sign=sign,
        offset_counts=offset,
        load_noise_g=noise_g,
        drift_g_per_sqrt_s=np.exp(rng.uniform(math.log(0.0005), math.log(0.004), N_CH)),
        creep_frac=float(rng.uniform(0.0, 0.03)),
        creep_tau_s=float(rng.uniform(3.0, 20.0)),
        reseat_sigma_g=float(rng.uniform(0.005, 0.04)),
        sway_fn_hz=float(rng.uniform(4.0, 14.0)),
        sway_zeta=float(rng.uniform(0.04, 0.15)),
        sway_gain=plate_mass * rng.uniform(0.05, 0.3, N_CH) * (0.5 + np.arange(N_CH) / 7.0) / G,
        flaky_channel=int(rng.integers(N_CH)) if rng.random() < 0.15 else -1,
        flaky_rate=float(rng.uniform(2e-4, 2e-3)),
        chunk_nominal=int(rng.choice([8, 10, 12, 14])),
        boot_style="boot" if rng.random() < 0.6 else "running",
        fw=(1, int(rng.integers(0, 4)), int(rng.integers(0, 10))),
        device_id=rng.integers(0, 256, 8, dtype=np.uint8).tobytes(),
    )


# --------------------------------------------------------------------------
# Event model: cubes, hands, rooms
# --------------------------------------------------------------------------


@dataclass
class Cube:
    mass_g: float
    color: str | None
    floor: int
    t_rest: float


def fall_time(v: float, h: float) -> float:
    return (-v + math.sqrt(v * v + 2 * G * h)) / G


class Sim:
    """Collects physical events in sim time (s from the first piezo set)."""

    def __init__(self, tower: Tower, rng: np.random.Generator, n_sets: int) -> None:
        self.tw = tower
        self.rng = rng
        self.n_sets = n_sets
        self.t_end = n_sets / PIEZO_RATE_HZ
        # piezo transients: t, per-channel amplitude (8,), kind, source level
        self.transients: list[tuple[float, np.ndarray, str, int]] = []
        self.impulses: list[tuple[float, int, float]] = []  # t, ch, gf*s
        self.mass_steps: list[tuple[float, int, float]] = []  # t, ch, gf
        self.offset_steps: list[tuple[float, int, float]] = []
        self.sway_kicks: list[tuple[float, float]] = []  # t, dv m/s
        self.rub: list[tuple[float, float, np.ndarray]] = []  # t0, t1, LSB per ch
        self.wander: list[tuple[float, float, np.ndarray]] = []  # t0, t1, gf per ch
        self.press: list[tuple[float, float, int, float]] = []  # t0, t1, ch, peak gf
        self.talk: list[tuple[float, float, float]] = []  # t0, t1, LSB
        self.invalid: list[tuple[int, float, float]] = []
        self.disconnected: list[tuple[int, float, float]] = []
        self.contact: list[tuple[float, int, float]] = []
        self.hum_lsb = 1.0
        self.hum_hz = 50.0
        self.resting: list[list[Cube]] = [[] for _ in range(N_CH)]
        self.landings: list[dict[str, Any]] = []
        self.knockdowns: list[dict[str, Any]] = []
        self.removals: list[dict[str, Any]] = []
        self.lifts: list[dict[str, Any]] = []
        self.closes: list[dict[str, Any]] = []
        self.knocks: list[dict[str, Any]] = []
        self.busy: list[tuple[float, float]] = []

    # -- primitive sounds -------------------------------------------------
    def _plate_strike(self, t: float, lvl: int, m: float, v: float, frac: float) -> None:
        tw, rng = self.tw, self.rng
        base = 300.0 * (m / 0.5) * v * frac * float(np.exp(rng.normal(0.0, 0.25)))
        amps = base * tw.xtalk[:, lvl] * tw.piezo_sens
        self.transients.append((t, amps, "plate", lvl))
        self.impulses.append((t, lvl, m * v * (1 + tw.restitution) * frac / G))

    def _soft_strike(self, t: float, lvl: int, amp: float, kind: str) -> None:
        amps = amp * self.tw.xtalk[:, lvl] * self.tw.piezo_sens
        self.transients.append((t, amps, kind, lvl))

    def _structural(self, t: float, amp: float, centre: int, spread: float, kind: str) -> None:
        d = np.abs(np.arange(N_CH) - centre)
        amps = amp * np.exp(-d / spread) * self.tw.piezo_sens
        amps *= np.exp(self.rng.normal(0.0, 0.2, N_CH))
        self.transients.append((t, amps, kind, centre))

    # -- cubes ---------------------------------------------------------------
    def _descend(
        self, t: float, lvl: int, v: float, m: float, allow_knock: bool, stay_boost: float
    ) -> tuple[int, float, float | None, tuple[float, int, Cube] | None]:
        tw, rng = self.tw, self.rng
        first: float | None = None
        knock: tuple[float, int, Cube] | None = None
        h = tw.module_h_m
        while True:
            dt = fall_time(v, h)
            if rng.random() < tw.p_wall:
                tw_t = t + dt * rng.uniform(0.3, 0.8)
                amp = 300.0 * (m / 0.5) * rng.uniform(0.08, 0.25)
                self._soft_strike(tw_t, lvl, amp, "wall")
                if lvl < N_CH - 1:
                    self._soft_strike(tw_t, lvl + 1, 0.6 * amp, "wall")
                first = tw_t if first is None else first
            t += dt
            v = math.sqrt(v * v + 2 * G * h)
            rest = lvl == 0 or rng.random() < min(0.97, tw.p_stay[lvl] * stay_boost)
            struck = rest or rng.random() < tw.p_strike_pass
            if struck:
                first = t if first is None else first
                self._plate_strike(t, lvl, m, v, 1.0 if rest else float(rng.uniform(0.25, 0.7)))
                if allow_knock and knock is None and lvl > 0:
                    cand = [c for c in self.resting[lvl] if c.t_rest < t - 0.05]
                    p = min(0.1, len(cand) * tw.p_knock_per_cube * (1.3 if rest else 1.0))
                    if cand and rng.random() < p:
                        knock = (t, lvl, cand[int(rng.integers(len(cand)))])
                        rest = rng.random() < tw.p_stay_after_knock
            if rest:
                return lvl, self._settle(t, lvl, m, v), first, knock
            if struck:
                v *= float(rng.uniform(0.2, 0.55))
                t += float(rng.uniform(0.005, 0.04))
            else:
                v *= float(rng.uniform(0.85, 1.0))
            lvl -= 1

    def _settle(self, t: float, lvl: int, m: float, v: float) -> float:
        rng = self.rng
        e = self.tw.restitution * float(np.exp(rng.normal(0.0, 0.1)))
        vb, tb, n = v * e, t, 0
        while vb > 0.1 and n < 4:
            tb += 2 * vb / G
            self._plate_strike(tb, lvl, m, vb, 1.0)
            vb *= e
            n += 1
        self.mass_steps.append((tb + 0.002, lvl, m))
        slide = float(rng.uniform(0.02, 0.2))
        self.rub.append((tb, tb + slide, self.tw.xtalk[:, lvl] * rng.uniform(2.0, 8.0)))
        return tb + slide

    def throw(self, t_entry: float, v_entry: float, color: str | None = None) -> float:
        """A cube enters the shaft at t_entry; returns when everything is at rest."""
        tw, rng = self.tw, self.rng
        m = tw.cube_mass_g * float(np.exp(rng.normal(0.0, 0.04)))
        t, v = t_entry, v_entry
        first: float | None = None
        if rng.random() < tw.p_rim:
            first = t
            self._soft_strike(t, N_CH - 1, 300.0 * (m / 0.5) * v * rng.uniform(0.15, 0.4), "rim")
            v *= float(rng.uniform(0.5, 0.9))
        floor, t_rest, f2, knock = self._descend(t, N_CH - 1, v, m, True, 1.0)
        first = f2 if first is None else first
        assert first is not None
        self.resting[floor].append(Cube(m, color, floor, t_rest))
        rec: dict[str, Any] = {
            "t": t_rest,
            "t_first_impact": first,
            "floor": floor,
            "cubes": 1,
            "knocked": False,
            "caused_knockdown": knock is not None,
        }
        if color is not None:
            rec["color"] = color
        self.landings.append(rec)
        latest = t_rest
        if knock is not None:
            latest = max(latest, self._knocked_fall(*knock))
        self.busy.append((t_entry - 0.3, latest + 0.4))
        return latest

    def _knocked_fall(self, t_k: float, lvl: int, cube: Cube) -> float:
        rng = self.rng
        self.resting[lvl].remove(cube)
        t0 = t_k + float(rng.uniform(0.01, 0.06))
        self.mass_steps.append((t0, lvl, -cube.mass_g))
        self.rub.append((t_k, t0 + 0.03, self.tw.xtalk[:, lvl] * rng.uniform(3.0, 12.0)))
        floor, t_rest, _, _ = self._descend(
            t0, lvl - 1, float(rng.uniform(0.05, 0.3)), cube.mass_g, False, 1.3
        )
        cube.floor, cube.t_rest = floor, t_rest
        self.resting[floor].append(cube)
        rec: dict[str, Any] = {
            "t": t_rest,
            "t_first_impact": t_k,
            "floor": floor,
            "cubes": 1,
            "knocked": True,
            "from_floor": lvl,
            "caused_knockdown": False,
        }
        if cube.color is not None:
            rec["color"] = cube.color
        self.landings.append(rec)
        self.knockdowns.append({"t": t_k, "from_floor": lvl, "to_floor": floor})
        return t_rest

    # -- people and room ------------------------------------------------------
    def table_knock(self, t: float, strength: float) -> None:
        rng = self.rng
        self._structural(t, 220.0 * strength, 0, 6.0, "table")
        dv = 0.03 * strength * float(rng.uniform(0.6, 1.4))
        for ch in range(N_CH):
            self.impulses.append((t + 0.0005 * ch, ch, self.tw.plate_mass_g[ch] * dv / G))
        self.sway_kicks.append((t, dv))
        self.knocks.append({"t": t, "kind": "table"})

    def hand_touch(self, t0: float, dur: float, lvl: int, strength: float, record: bool) -> None:
        rng = self.rng
        d = np.abs(np.arange(N_CH) - lvl)
        self.rub.append((t0, t0 + dur, strength * 25.0 * np.exp(-d / 1.5) * self.tw.piezo_sens))
        self.wander.append((t0, t0 + dur, strength * rng.uniform(0.03, 0.25) * np.exp(-d / 3.0)))
        self._structural(t0, 60.0 * strength, lvl, 1.5, "hand")
        self.sway_kicks.append((t0, 0.004 * strength))
        if record:
            self.knocks.append({"t": t0, "kind": "hand"})

    def lift(self, t_lift: float, k: int, t_close: float) -> None:
        """Modules k..7 lifted at t_lift (contacts break), put back at t_close."""
        rng = self.rng
        self.lifts.append({"t": t_lift, "exposed": k})
        self.closes.append({"t": t_close, "exposed": k})
        self._structural(t_lift, 50.0, k, 1.0, "lift")
        self.sway_kicks.append((t_lift, 0.004))
        settle = float(rng.uniform(0.05, 0.3))
        for ch in range(k + 1, N_CH):
            brk = t_lift + float(rng.uniform(0.0, 0.004))
            self.invalid.append((ch, brk, t_close + settle))
            if rng.random() < 0.2:  # contact chatter just after reconnection
                tc = t_close + settle + float(rng.uniform(0.02, 0.25))
                self.invalid.append((ch, tc, tc + float(rng.uniform(0.01, 0.03))))
            self.disconnected.append((ch, brk, t_close))
            self.contact.append((brk, ch, float(rng.uniform(-250.0, 250.0))))
            self.contact.append((t_close, ch, float(rng.uniform(-250.0, 250.0))))
            self.offset_steps.append((t_close, ch, float(rng.normal(0.0, self.tw.reseat_sigma_g))))
        # modules set back down: a thud through the whole tower, strongest at the joint
        self._structural(t_close, float(rng.uniform(150.0, 400.0)), k, 2.0, "close")
        dv = float(rng.uniform(0.005, 0.02))
        for ch in range(N_CH):
            self.impulses.append((t_close, ch, self.tw.plate_mass_g[ch] * dv / G))
        self.sway_kicks.append((t_close, dv))
        # the hands holding the lower floors while the tower is open
        amp = np.where(np.arange(N_CH) <= k, 1.0, 0.0)
        self.rub.append((t_lift, t_close, 6.0 * amp * np.exp(-np.abs(np.arange(N_CH) - k) / 2.0)))
        self.wander.append((t_lift, t_close + 0.4, rng.uniform(0.02, 0.12) * amp))
        self.busy.append((t_lift - 1.5, t_close + 1.0))

    def grab(self, t_g: float, k: int, cubes: list[Cube]) -> None:
        """Fingers take cubes off plate k; they leave the plate at t_g."""
        rng = self.rng
        t0 = t_g - float(rng.uniform(0.4, 1.2))
        t1 = t_g + float(rng.uniform(0.05, 0.3))
        for c in cubes:
            self.resting[k].remove(c)
            self.mass_steps.append((t_g, k, -c.mass_g))
        self.press.append((t0, t1, k, float(rng.uniform(0.3, 4.0))))
        self.rub.append((t0, t1, rng.uniform(10.0, 50.0) * self.tw.xtalk[:, k]))
        self.removals.append({"t": t_g, "floor": k, "cubes": len(cubes)})

    def inspect(self, t_lift: float, k: int) -> tuple[float, list[Cube]]:
        """Lift modules k..7, look, take every cube off level k, close."""
        rng = self.rng
        grip = float(rng.uniform(0.4, 1.0))
        self.hand_touch(t_lift - grip, grip, k, float(rng.uniform(0.3, 0.8)), record=False)
        t = t_lift + float(rng.uniform(1.5, 4.0))
        cubes = [c for c in self.resting[k] if c.t_rest < t_lift]
        removed: list[Cube] = []
        if cubes:
            n_grabs = 2 if len(cubes) >= 2 and rng.random() < 0.25 else 1
            idx = rng.permutation(len(cubes))
            groups = [list(g) for g in np.array_split(idx, n_grabs)]
            for g in groups:
                t += float(rng.uniform(0.6, 1.5)) if not removed else float(rng.uniform(1.5, 2.5))
                sel = [cubes[i] for i in g]
                self.grab(t, k, sel)
                removed += sel
        t_close = t + float(rng.uniform(0.8, 2.0))
        self.lift(t_lift, k, t_close)
        return t_close, removed


# --------------------------------------------------------------------------
# Scenarios
# --------------------------------------------------------------------------


def _person_speed(rng: np.random.Generator) -> float:
    """Entry speed: released 2-15 cm above the shaft."""
    return math.sqrt(2 * G * float(rng.uniform(0.02, 0.15)))


def scen_single(sim: Sim) -> None:
    rng = sim.rng
    t = 5.0 + float(rng.uniform(1.0, 3.0))
    while t < sim.t_end - 2.5:
        rest = sim.throw(t, _person_speed(rng))
        t = max(t + float(rng.uniform(3.0, 7.0)), rest + 0.5)


def scen_rapid(sim: Sim) -> None:
    rng = sim.rng
    t = 5.0 + float(rng.uniform(1.0, 3.0))
    while True:
        n = int(rng.integers(2, 6))
        if t + n * 0.8 + 2.5 > sim.t_end:
            break
        v = _person_speed(rng)
        for _ in range(n):
            sim.throw(t, v * float(rng.uniform(0.85, 1.15)))
            t += float(rng.uniform(0.3, 0.8))
        t += float(rng.uniform(2.5, 5.0))


def _free(sim: Sim, t0: float, t1: float) -> bool:
    return all(t1 < b0 or t0 > b1 for b0, b1 in sim.busy)


def _room_noise(sim: Sim, knock_every_s: float, hand_every_s: float, talk: float) -> None:
    rng = sim.rng
    t = 5.5
    while True:
        t += float(rng.exponential(knock_every_s))
        if t > sim.t_end - 1.0:
            break
        if _free(sim, t - 0.6, t + 1.0):
            sim.table_knock(t, float(rng.uniform(0.3, 1.5)))
            sim.busy.append((t - 0.2, t + 1.0))
    t = 5.5
    while True:
        t += float(rng.exponential(hand_every_s))
        dur = float(rng.uniform(0.5, 2.5))
        if t + dur > sim.t_end - 1.0:
            break
        if _free(sim, t - 0.6, t + dur + 1.0):
            sim.hand_touch(t, dur, int(rng.integers(0, N_CH)), float(rng.uniform(0.3, 1.2)), True)
            sim.busy.append((t - 0.2, t + dur + 0.5))
    t = 5.5
    while talk > 0:
        t += float(rng.exponential(3.0))
        dur = float(rng.uniform(0.8, 4.0))
        if t + dur > sim.t_end:
            break
        sim.talk.append((t, t + dur, talk * float(rng.uniform(0.3, 1.0))))
        t += dur


def scen_noisy(sim: Sim) -> None:
    rng = sim.rng
    scen_single(sim)
    sim.hum_lsb = float(rng.uniform(3.0, 12.0))
    _room_noise(
        sim,
        float(rng.uniform(6.0, 15.0)),
        float(rng.uniform(20.0, 40.0)),
        float(rng.uniform(2.0, 8.0)),
    )


COLORS = ("yellow", "blue", "brown", "gray", "black", "white")


def scen_game(sim: Sim) -> None:
    """A game of Mord im Arosa by the rules, cut off at the end of the recording."""
    rng = sim.rng
    n = int(rng.integers(3, 6))
    players = [str(c) for c in rng.permutation(COLORS)[:n]]
    speed = {p: _person_speed(rng) for p in players}
    supply = dict.fromkeys(players, 20)
    sheet = {p: [0] * N_CH for p in players}
    limit = sim.t_end - 3.0
    clock = 5.0 + float(rng.uniform(1.5, 3.0))
    over = False

    def do_throw(color: str, by: str) -> bool:
        nonlocal clock, over
        if clock > limit:
            over = True
            return False
        rest = sim.throw(clock, speed[by] * float(rng.uniform(0.85, 1.15)), color)
        clock = max(clock + float(rng.uniform(1.2, 3.0)), rest + float(rng.uniform(0.6, 1.5)))
        return True

    # Prologue: both victims, then two clues per player, one after the other.
    for _ in range(2):
        do_throw("red", players[0])
    for p in players:
        clock += float(rng.uniform(0.5, 2.5))
        for _ in range(2):
            supply[p] -= 1
            do_throw(p, p)
    act, found, turn = 1, 0, 0
    while not over:
        inv = players[turn % n]
        t = clock + float(rng.uniform(2.0, 5.0))
        if t + 14.0 > limit:
            break
        if rng.random() < 0.15 and _free(sim, t - 1.0, t + 2.0):  # someone bumps the table
            sim.table_knock(t, float(rng.uniform(0.2, 0.8)))
            t += float(rng.uniform(2.0, 3.0))
        counts = [[c.color for c in sim.resting[f]] for f in range(N_CH)]
        suspects: list[str] = []
        if act == 1:
            action = "inspect"
            red_floors = [f for f in range(N_CH) if "red" in counts[f]]
            if red_floors and rng.random() < 0.45:
                floor = int(rng.choice(red_floors))
            else:
                floor = int(rng.choice(N_CH, p=np.r_[0.04, np.full(7, 0.96 / 7)]))
        else:
            mine = [f for f in range(N_CH) if sheet[inv][f] > 0]
            if mine and rng.random() < 0.35:
                action = "cover"
                floor = int(rng.choice(mine)) if rng.random() < 0.7 else int(rng.integers(N_CH))
            else:
                action = "suspect"
                others = [p for p in players if p != inv]
                suspects = [
                    str(s)
                    for s in rng.choice(
                        others, size=min(len(others), int(rng.integers(1, 3))), replace=False
                    )
                ]
                good = [f for f in range(N_CH) if any(s in counts[f] for s in suspects)]
                floor = (
                    int(rng.choice(good))
                    if good and rng.random() < 0.6
                    else int(rng.integers(N_CH))
                )
        t_close, removed = sim.inspect(t, floor)
        colors = [c.color for c in removed]
        penalty = 0
        if action == "inspect":
            reds = colors.count("red")
            if reds:
                found += reds
                for p in players:
                    if p != inv:
                        k = min(colors.count(p), supply[p])
                        sheet[p][floor] += k
                        supply[p] -= k
            else:
                penalty = 1
        elif action == "suspect":
            own_here = colors.count(inv)
            if floor == 0 and own_here == 0:
                penalty = len(suspects)
            else:
                for s in suspects:
                    k = min(colors.count(s), supply[s])
                    sheet[s][floor] += k
                    supply[s] -= k
                    if colors.count(s) == 0:
                        penalty += 1
        else:
            own_here = colors.count(inv)
            back = min(own_here, sheet[inv][floor])
            sheet[inv][floor] -= back
            supply[inv] += back
            if own_here == 0:
                penalty = 1
        clock = t_close + float(rng.uniform(1.0, 2.5))
        throwbacks = [str(c) for c in colors if c != "red" and c is not None]
        for i in rng.permutation(len(throwbacks)):
            if not do_throw(throwbacks[int(i)], inv):
                break
        for _ in range(penalty):
            if over or supply[inv] == 0:
                break
            supply[inv] -= 1
            do_throw(inv, inv)
        if act == 1 and found >= 2:
            act = 2
        if any(sum(s) >= 10 for s in sheet.values()) or any(v == 0 for v in supply.values()):
            over = True
        turn += 1
    sim.hum_lsb = float(rng.uniform(0.5, 2.5))
    _room_noise(sim, 1e9, float(rng.uniform(60.0, 120.0)), float(rng.uniform(0.5, 2.5)))


SCENARIO_FUNCS = {
    "single": scen_single,
    "rapid": scen_rapid,
    "noisy": scen_noisy,
    "game": scen_game,
}


# --------------------------------------------------------------------------
# Rendering: piezo at the stream rate, load through plate, HX711 and noise
# --------------------------------------------------------------------------


def resonator(f_hz: float, zeta: float, fs: float) -> tuple[np.ndarray, np.ndarray]:
    wn = 2 * math.pi * f_hz
    b, a = signal.bilinear([wn * wn], [1.0, 2 * zeta * wn, wn * wn], fs)
    return np.asarray(b), np.asarray(a)


def _idx(t: float, fs: float, n: int) -> int:
    return min(max(int(math.ceil(t * fs)), 0), n)


def _envelope(n: int, ramp: int) -> np.ndarray:
    env = np.ones(n)
    r = min(ramp, n // 2)
    if r > 0:
        w = 0.5 - 0.5 * np.cos(np.linspace(0, math.pi, r))
        env[:r] = w
        env[n - r :] = w[::-1]
    return env


def render_piezo(sim: Sim) -> np.ndarray:
    tw, rng = sim.tw, sim.rng
    fs = float(PIEZO_RATE_HZ)
    n = sim.n_sets
    tt = np.arange(n) / fs
    p = np.zeros((n, N_CH))
    hum_amp = sim.hum_lsb * tw.hum_gain
    ph = rng.uniform(0, 2 * math.pi, (3, N_CH))
    f = sim.hum_hz * (1.0 + rng.normal(0.0, 2e-4))
    for h, w in ((1, 1.0), (2, 0.12), (3, 0.35)):
        p += w * hum_amp[None, :] * np.sin(2 * math.pi * h * f * tt[:, None] + ph[h - 1][None, :])
    p += rng.standard_normal((n, N_CH)) * tw.adc_noise[None, :]
    band = signal.butter(4, [80.0, 900.0], btype="bandpass", fs=fs, output="sos")
    for t0, t1, amp in sim.talk:
        i0, i1 = _idx(t0, fs, n), _idx(t1, fs, n)
        if i1 - i0 < 8:
            continue
        seg = signal.sosfilt(band, rng.standard_normal(i1 - i0))
        seg /= seg.std() + 1e-12
        syl = 0.55 + 0.45 * np.sin(
            2 * math.pi * rng.uniform(3.0, 5.0) * tt[i0:i1] + rng.uniform(0, 6.3)
        )
        seg *= syl * _envelope(i1 - i0, int(0.15 * fs)) * amp
        gains = rng.uniform(0.6, 1.2, N_CH)
        p[i0:i1] += seg[:, None] * gains[None, :]
    for t0, t1, amps in sim.rub:
        i0, i1 = _idx(t0, fs, n), _idx(t1, fs, n)
        if i1 - i0 < 8:
            continue
        seg = signal.sosfilt(band, rng.standard_normal((i1 - i0, N_CH)), axis=0) * 1.6
        env = _envelope(i1 - i0, int(0.05 * fs)) * (
            0.5
            + np.abs(
                signal.sosfilt(
                    signal.butter(2, 6.0, fs=fs, output="sos"), rng.standard_normal(i1 - i0)
                )
            )
            * 8.0
        ).clip(0, 2.0)
        p[i0:i1] += seg * env[:, None] * amps[None, :]
    klen = int(0.08 * fs)
    for t, amps, kind, lvl in sim.transients:
        i0 = _idx(t, fs, n)
        i1 = min(i0 + klen, n)
        if i1 <= i0:
            continue
        x = np.arange(i0, i1) / fs - t
        modes = (
            tw.struct_modes if kind in ("table", "close", "lift", "hand") else tw.piezo_modes[lvl]
        )
        ph = rng.uniform(0, 2 * math.pi, len(modes))
        wave = np.zeros(len(x))
        for (fm, tau, w), phi in zip(modes, ph, strict=True):
            wave += w * np.exp(-x / tau) * np.sin(2 * math.pi * fm * x + phi)
        wave *= 1.0 - np.exp(-x / 0.0003)
        wave /= max(np.abs(wave).max(), 1e-9)
        dull = np.convolve(wave, [0.25, 0.5, 0.25], mode="same")
        block = dull[:, None] * amps[None, :]
        if kind in ("plate", "rim"):
            click = rng.standard_normal(len(x)) * np.exp(-x / 0.0008) * 0.6
            block[:, lvl] = (wave + click) * amps[lvl]
        p[i0:i1] += block
    # quasi-static force changes leak through the AC-coupled front end
    for t, ch, dg in sim.mass_steps:
        i0 = _idx(t, fs, n)
        i1 = min(i0 + int(6 * tw.ac_tau_s * fs), n)
        x = np.arange(i0, i1) / fs - t
        p[i0:i1, ch] += dg * tw.static_lsb_per_g[ch] * tw.piezo_sens[ch] * np.exp(-x / tw.ac_tau_s)
    for ch, t0, t1 in sim.disconnected:
        i0, i1 = _idx(t0, fs, n), _idx(t1, fs, n)
        if i1 <= i0:
            continue
        flo = rng.uniform(3.0, 10.0) * max(sim.hum_lsb, 1.0) * tw.hum_gain[ch]
        seg = flo * np.sin(2 * math.pi * f * tt[i0:i1] + rng.uniform(0, 6.3))
        p[i0:i1, ch] = seg + rng.standard_normal(i1 - i0) * 1.5 * tw.adc_noise[ch]
    for t, ch, amp in sim.contact:
        i0 = _idx(t, fs, n)
        i1 = min(i0 + int(6 * tw.ac_tau_s * fs), n)
        x = np.arange(i0, i1) / fs - t
        p[i0:i1, ch] += amp * np.exp(-x / tw.ac_tau_s)
    p += tw.piezo_bias[None, :]
    hi = (1 << ADC_BITS) - 1
    return np.clip(np.rint(p), 0, hi).astype(np.uint16)


def load_reading_times(tw: Tower, rng: np.random.Generator, t_end: float) -> np.ndarray:
    period = 1.0 / tw.load_rate_true
    r0 = float(rng.uniform(0.0005, period))
    k = np.arange(int((t_end - r0) / period) + 1)
    r = r0 + k * period + rng.uniform(0.0, 0.0003, len(k))
    return r[r < t_end]


def render_load(sim: Sim, r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    tw, rng = sim.tw, sim.rng
    fs = float(PIEZO_RATE_HZ)
    n = sim.n_sets
    steps = np.zeros((n + 1, N_CH))
    for t, ch, dg in sim.mass_steps:
        steps[_idx(t, fs, n), ch] += dg
    static = np.cumsum(steps, axis=0)[:n]
    drive = static.copy()
    for t, ch, j in sim.impulses:
        i = _idx(t, fs, n)
        if i < n:
            drive[i, ch] += j * fs
    for t0, t1, ch, peak in sim.press:
        i0, i1 = _idx(t0, fs, n), _idx(t1, fs, n)
        if i1 - i0 < 4:
            continue
        x = np.linspace(0.0, 1.0, i1 - i0)
        bumps = np.zeros(i1 - i0)
        for _ in range(int(rng.integers(2, 5))):
            c, wdt = rng.uniform(0.1, 0.9), rng.uniform(0.08, 0.3)
            bumps += rng.uniform(0.3, 1.0) * np.exp(-0.5 * ((x - c) / wdt) ** 2)
        drive[i0:i1, ch] += peak * bumps / max(bumps.max(), 1e-9) * _envelope(i1 - i0, 40)
    y = np.empty_like(drive)
    for ch in range(N_CH):
        b, a = resonator(float(tw.plate_fn_hz[ch]), float(tw.plate_zeta[ch]), fs)
        y[:, ch] = signal.lfilter(b, a, drive[:, ch])
    if tw.creep_frac > 0:
        alpha = 1.0 / (tw.creep_tau_s * fs)
        y += tw.creep_frac * signal.lfilter([alpha], [1.0, alpha - 1.0], static, axis=0)
    sway_in = np.zeros(n)
    for t, dv in sim.sway_kicks:
        i = _idx(t, fs, n)
        if i < n:
            sway_in[i] += dv * fs
    b, a = resonator(tw.sway_fn_hz, tw.sway_zeta, fs)
    sway = signal.lfilter(b, a, sway_in)
    y += sway[:, None] * tw.sway_gain[None, :]
    lp = signal.butter(2, 3.0, fs=fs, output="sos")
    for t0, t1, amps in sim.wander:
        i0, i1 = _idx(t0, fs, n), _idx(t1, fs, n)
        if i1 - i0 < 8:
            continue
        common = signal.sosfilt(lp, rng.standard_normal(i1 - i0))
        own = signal.sosfilt(lp, rng.standard_normal((i1 - i0, N_CH)), axis=0)
        seg = 0.7 * common[:, None] + 0.7 * own
        seg /= seg.std() + 1e-12
        y[i0:i1] += seg * amps[None, :] * _envelope(i1 - i0, int(0.2 * fs))[:, None]
    off = np.zeros((n + 1, N_CH))
    for t, ch, dg in sim.offset_steps:
        off[_idx(t, fs, n), ch] += dg
    y += np.cumsum(off, axis=0)[:n]
    # HX711: each reading is (about) the mean force over its conversion period
    w = max(int(round(fs / tw.load_rate_true)), 1)
    cs = np.vstack([np.zeros((1, N_CH)), np.cumsum(y, axis=0)])
    i_end = np.clip(np.floor(r * fs).astype(np.int64) + 1, 1, n)
    i_beg = np.maximum(i_end - w, 0)
    grams = (cs[i_end] - cs[i_beg]) / (i_end - i_beg)[:, None]
    m = len(r)
    dt = 1.0 / tw.load_rate_true
    grams += (
        np.cumsum(rng.standard_normal((m, N_CH)), axis=0) * tw.drift_g_per_sqrt_s * math.sqrt(dt)
    )
    grams += rng.standard_normal((m, N_CH)) * tw.load_noise_g
    counts = tw.offset_counts + tw.sign * tw.counts_per_g * grams
    counts = np.clip(np.rint(counts), -(1 << 23), LOAD_FS_LIMIT).astype(np.int64)
    valid = np.ones((m, N_CH), dtype=bool)
    for ch, t0, t1 in sim.invalid:
        valid[(r >= t0) & (r < t1), ch] = False
    if tw.flaky_channel >= 0:
        valid[rng.random(m) < tw.flaky_rate, tw.flaky_channel] = False
    counts[~valid] = 0
    return counts, valid


# --------------------------------------------------------------------------
# Byte stream assembly
# --------------------------------------------------------------------------


def _u8cols(x: np.ndarray, dtype: str) -> np.ndarray:
    a = np.ascontiguousarray(np.asarray(x).astype(dtype))
    return a.view(np.uint8).reshape(len(a), -1)


def _frames_for(mat: np.ndarray) -> list[bytes]:
    crc = crc16_rows(mat)
    full = np.hstack([mat, _u8cols(crc, "<u2")])
    width = full.shape[1]
    buf = full.tobytes()
    return [cobs_encode(buf[i * width : (i + 1) * width]) + b"\x00" for i in range(len(full))]


def assemble(
    sim: Sim,
    rng: np.random.Generator,
    piezo: np.ndarray,
    r: np.ndarray,
    counts: np.ndarray,
    valid: np.ndarray,
) -> tuple[bytes, float, dict[str, Any]]:
    """Build the byte stream; returns (bytes, stream-time origin in sim seconds, meta)."""
    tw = sim.tw
    fs = float(PIEZO_RATE_HZ)
    n = sim.n_sets
    # piezo chunking: mostly the nominal size, sometimes the main loop is late or early
    sizes: list[int] = []
    left = n
    while left > 0:
        s = tw.chunk_nominal
        u = rng.random()
        if u < 0.03:
            s = int(rng.integers(1, 15))
        s = min(s, left, 14)
        sizes.append(s)
        left -= s
    size = np.array(sizes, dtype=np.int64)
    start = np.concatenate([[0], np.cumsum(size)[:-1]])
    p_emit = (start + size - 1) / fs + 0.0002 + rng.uniform(0.0, 0.0004, len(size))
    l_emit = r + 0.00015 + rng.uniform(0.0, 0.0002, len(r))
    st_phase = float(rng.uniform(0.0, 1.0))
    s_emit = np.arange(st_phase, sim.t_end, 1.0)
    # device clock
    if tw.boot_style == "boot":
        t0_us = int(rng.integers(350_000, 1_500_000))
        seq0 = 0
    else:
        if rng.random() < 0.5 and sim.t_end > 20:
            t0_us = (1 << 32) - int(rng.uniform(5.0, sim.t_end - 5.0) * 1e6)
        else:
            t0_us = int(rng.uniform(60.0, 4000.0) * 1e6)
        seq0 = int(rng.integers(0, 65536))
    head_types = [T_HELLO] + ([T_ACK] if tw.boot_style == "running" else [])
    kinds = np.concatenate(
        [
            np.full(len(head_types), -1),
            np.zeros(len(size)),
            np.ones(len(r)),
            np.full(len(s_emit), 2),
        ]
    ).astype(np.int64)
    emit = np.concatenate([-0.01 + 0.001 * np.arange(len(head_types)), p_emit, l_emit, s_emit])
    local = np.concatenate(
        [
            np.arange(len(head_types)),
            np.arange(len(size)),
            np.arange(len(r)),
            np.arange(len(s_emit)),
        ]
    )
    order = np.lexsort((kinds, emit))
    seq = np.empty(len(order), dtype=np.int64)
    seq[order] = (seq0 + np.arange(len(order))) & 0xFFFF
    frames: list[bytes] = [b""] * len(order)
    # head
    for j, ht in enumerate(head_types):
        if ht == T_HELLO:
            body = bytes([1, *tw.fw, N_CH, N_CH]) + PIEZO_RATE_HZ.to_bytes(2, "little")
            body += tw.load_rate_nominal.to_bytes(2, "little") + bytes([ADC_BITS]) + tw.device_id
        else:
            body = bytes([0x81]) + int(rng.integers(0, 65536)).to_bytes(2, "little") + bytes([0])
        frames[j] = frame_message(ht, int(seq[j]), body)
    base = len(head_types)
    # piezo frames, grouped by set count
    pseq = seq[base : base + len(size)]
    p_tus = (t0_us + start * (1_000_000 // PIEZO_RATE_HZ)) & 0xFFFFFFFF
    for s in np.unique(size):
        sel = np.nonzero(size == s)[0]
        rows = piezo[start[sel][:, None] + np.arange(s)[None, :]].reshape(len(sel), -1)
        mat = np.hstack(
            [
                np.full((len(sel), 1), T_PIEZO, dtype=np.uint8),
                _u8cols(pseq[sel], "<u2"),
                _u8cols(p_tus[sel], "<u4"),
                np.full((len(sel), 1), s, dtype=np.uint8),
                _u8cols(rows, "<u2"),
            ]
        )
        for k, fr in zip(sel, _frames_for(mat), strict=True):
            frames[base + int(k)] = fr
    base += len(size)
    l_tus_unwrapped = t0_us + np.rint(r * 1e6).astype(np.int64)
    vbyte = (valid.astype(np.int64) << np.arange(N_CH)[None, :]).sum(axis=1)
    c24 = (counts & 0xFFFFFF).astype("<u4").view(np.uint8).reshape(len(r), N_CH, 4)[:, :, :3]
    mat = np.hstack(
        [
            np.full((len(r), 1), T_LOAD, dtype=np.uint8),
            _u8cols(seq[base : base + len(r)], "<u2"),
            _u8cols(l_tus_unwrapped & 0xFFFFFFFF, "<u4"),
            _u8cols(vbyte, "u1"),
            c24.reshape(len(r), -1),
        ]
    )
    frames[base : base + len(r)] = _frames_for(mat)
    base += len(r)
    timeouts = np.cumsum(~valid[:, tw.flaky_channel]) if tw.flaky_channel >= 0 else np.zeros(len(r))
    for j, te in enumerate(s_emit):
        up_ms = ((t0_us + int(te * 1e6)) // 1000) & 0xFFFFFFFF
        nto = int(timeouts[np.searchsorted(r, te) - 1]) if len(r) and r[0] < te else 0
        body = (
            up_ms.to_bytes(4, "little")
            + (0).to_bytes(2, "little")
            + (0).to_bytes(2, "little")
            + (nto & 0xFFFF).to_bytes(2, "little")
            + bytes([int(rng.integers(30, 60)), 0])
        )
        frames[base + j] = frame_message(T_STATUS, int(seq[base + j]), body)
    prefix = b""
    if tw.boot_style == "boot" and rng.random() < 0.35:
        # bytes still in flight from before the DTR reset that started the capture
        junk = rng.integers(1, 256, 200, dtype=np.uint8).tobytes()
        while True:
            fr = frame_message(
                T_PIEZO, int(rng.integers(0, 65536)), junk[: int(rng.integers(40, 200))]
            )
            prefix = fr[int(rng.integers(2, len(fr) - 3)) :]
            if not FrameDecoder().feed(prefix):
                break
    data = prefix + b"".join(frames[i] for i in order)
    # stream time origin: the first PIEZO or LOAD in wire order
    first_data = next(int(i) for i in order if kinds[i] in (0, 1))
    if kinds[first_data] == 0:
        origin_us = int(start[local[first_data]]) * (1_000_000 // PIEZO_RATE_HZ)
    else:
        origin_us = int(l_tus_unwrapped[local[first_data]] - t0_us)
    meta = {
        "t0_us": t0_us,
        "boot_style": tw.boot_style,
        "prefix_bytes": len(prefix),
        "wraps": bool(t0_us + n * 500 > (1 << 32)),
        "piezo_chunk": tw.chunk_nominal,
    }
    return data, origin_us / 1e6, meta


# --------------------------------------------------------------------------
# One recording
# --------------------------------------------------------------------------


def make_one(seed: int, scenario: str, duration_s: float) -> tuple[bytes, dict[str, Any]]:
    tw = make_tower(seed)
    rng = np.random.default_rng([seed, 0x5CE7, SCENARIOS.index(scenario)])
    n_sets = int(round(duration_s * PIEZO_RATE_HZ))
    sim = Sim(tw, rng, n_sets)
    sim.hum_lsb = float(rng.uniform(0.2, 1.5))
    sim.hum_hz = 60.0 if rng.random() < 0.15 else 50.0
    if duration_s >= 8.0:
        SCENARIO_FUNCS[scenario](sim)
    piezo = render_piezo(sim)
    r = load_reading_times(tw, rng, sim.t_end)
    counts, valid = render_load(sim, r)
    data, origin, meta = assemble(sim, rng, piezo, r, counts, valid)

    def st(t: float) -> float:
        return round(t - origin, 6)

    def shift(items: list[dict[str, Any]], keys: tuple[str, ...]) -> list[dict[str, Any]]:
        out = []
        for it in items:
            d = dict(it)
            for k in keys:
                d[k] = st(d[k])
            out.append(d)
        return sorted(out, key=lambda d: d["t"])

    landings = shift(sim.landings, ("t", "t_first_impact"))
    for d in landings:
        if not d["knocked"]:
            d.pop("from_floor", None)
    truth: dict[str, Any] = {
        "format": TRUTH_FORMAT,
        "model": "T",
        "scenario": scenario,
        "seed": seed,
        "duration_s": round(n_sets / PIEZO_RATE_HZ - origin, 6),
        "cells": tw.cells,
        "landings": landings,
        "knockdowns": shift(sim.knockdowns, ("t",)),
        "removals": shift(sim.removals, ("t",)),
        "lifts": shift(sim.lifts, ("t",)),
        "closes": shift(sim.closes, ("t",)),
        "knocks": shift(sim.knocks, ("t",)),
        "tower": {
            "cube_mass_g": round(tw.cube_mass_g, 4),
            "floor_dist": [round(float(x), 4) for x in tw.floor_dist],
            "load_rate_hz": tw.load_rate_nominal,
            "load_rate_true_hz": round(tw.load_rate_true, 4),
            "counts_per_g": [round(float(x), 1) for x in tw.counts_per_g * tw.sign],
            "load_noise_g": [round(float(x), 5) for x in tw.load_noise_g],
            "piezo_sens": [round(float(x), 3) for x in tw.piezo_sens],
            "mains_hz": sim.hum_hz,
            "hum_lsb": round(sim.hum_lsb, 3),
            **meta,
        },
    }
    return data, truth


def _job(args: tuple[str, int, str, float]) -> tuple[str, int, int, int, float]:
    out, seed, scenario, duration = args
    t0 = time.perf_counter()
    data, truth = make_one(seed, scenario, duration)
    stem = Path(out) / f"{scenario}_t{seed}"
    stem.with_suffix(".bin").write_bytes(data)
    Path(str(stem) + ".truth.json").write_text(json.dumps(truth, indent=1) + "\n")
    return (
        scenario,
        seed,
        len(truth["landings"]),
        len(truth["knockdowns"]),
        (time.perf_counter() - t0),
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--out", required=True)
    ap.add_argument("--towers", type=int, required=True)
    ap.add_argument("--first-seed", type=int, required=True)
    ap.add_argument("--duration", type=float, required=True)
    ap.add_argument("--scenarios", nargs="+", default=list(SCENARIOS))
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args(argv)
    bad = [s for s in args.scenarios if s not in SCENARIOS]
    if bad:
        print(f"unknown scenario {bad[0]!r}; choose from {' '.join(SCENARIOS)}", file=sys.stderr)
        return 2
    if args.towers < 1 or args.duration <= 0:
        print("--towers must be >= 1 and --duration > 0", file=sys.stderr)
        return 2
    os.makedirs(args.out, exist_ok=True)
    jobs = [
        (args.out, seed, sc, args.duration)
        for seed in range(args.first_seed, args.first_seed + args.towers)
        for sc in args.scenarios
    ]
    t0 = time.perf_counter()
    if args.workers > 1 and len(jobs) > 1:
        with ProcessPoolExecutor(max_workers=args.workers) as ex:
            results = list(ex.map(_job, jobs))
    else:
        results = [_job(j) for j in jobs]
    per: dict[str, list[int]] = {}
    for sc, _seed, nl, nk, _dt in results:
        acc = per.setdefault(sc, [0, 0, 0])
        acc[0] += 1
        acc[1] += nl
        acc[2] += nk
    for sc, (nrec, nl, nk) in per.items():
        print(f"{sc}: {nrec} recordings, {nl} landings, {nk} knockdowns", file=sys.stderr)
    print(
        f"wrote {len(jobs)} recordings to {args.out} in {time.perf_counter() - t0:.1f} s",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
