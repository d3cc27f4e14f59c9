#!/usr/bin/env python3
"""Cross-check model AL: a years-old family kit in a damp holiday cabin.

A blind generator of test recordings for ``towerear detect`` (contracts.md sections
1-3) with their ground truth (the ``towerear-crosscheck-truth/1`` format that
tools/crosscheck/score.py reads). Its own wire encoder (COBS, CRC-16/CCITT-FALSE,
message layouts, vectorised over messages); imports numpy, scipy and the standard
library only.

The scene: a kit built two years ago and played every holiday by a family with
children in a damp mountain cabin. What that does to the sensors and the game is
the point (README.md gives every figure and where it came from):

- cardboard softened by humidity: plates lower in resonance and more damped, longer
  contacts (duller strikes, lower peaks), plates that sag so a cube may rest at a
  hole's edge and tip in seconds later without any throw (a knocked-down landing in
  the truth), creaking card (faint broadband ticks after a plate's load changes);
- worn electronics: a half-detached disc (rattles on strong strikes, its sensitivity
  jumping between two values), a load cell with a cracked solder joint (spikes, or
  "not ready" bursts shown as valid bit 0), replacement cells of another batch on one
  or two levels (other counts per gram, possibly the opposite sign);
- cubes of two editions in one game (different mass and bounce);
- children throwing softly or very hard, two cubes at once, hands steadying the
  tower, adults lifting and removing per the rules, a cat or a dog bumping the heavy
  farmhouse table, a wood stove crackling, rain on the roof, footsteps on the wooden
  floor;
- a laptop on battery with a cheap USB-serial adapter: sessions that start inside a
  frame on a running device, a stream that stalls and loses bytes, the device's
  clock anywhere in its 32-bit range.

Usage::

    .venv/bin/python tools/crosscheck_al/make_recordings_al.py --out /tmp/al --towers 8 \
        --first-seed 1 --duration 120 [--scenarios single rapid noisy game]
"""

from __future__ import annotations

import argparse
import heapq
import json
import math
import struct
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

import numpy as np
from scipy import signal

MODEL = "AL"
SCENARIOS = ("single", "rapid", "noisy", "game")
COLOURS = ("yellow", "blue", "brown", "gray", "black", "white")
G = 9.80665
MODULE_H = 0.031  # m: a 25 cm tower of eight modules
CLEARANCE = 0.021  # m: how high a cube can rise in a module before it meets the plate above
GRID_HZ = 2000.0  # Hz: the fine grid of the load-cell model
CMD_GET_INFO = 0x81
U32 = 2**32
# How much of an impact's impulse the struck plate's cell feels (sign: direction).
LOAD_SHARE = {"plate": 1.0, "bounce": 1.0, "tick": 1.0, "rim": 1.0, "ceiling": -1.0,
              "wall": 0.2, "close": 0.15, "lift": 0.1, "touch": 0.3, "grab": 0.5,
              "slide": 0.5, "rattle": 1.0, "creak": 0.0, "pop": 0.0, "entry": 0.0}
# The plate's bounce on its cell (a low thud) relative to the strike, by kind.
THUD_BOOST = {"close": 4.0, "lift": 2.5, "wall": 2.0, "touch": 2.0, "grab": 1.5}


# -- wire: CRC, COBS, message layouts ------------------------------------------------------

def _crc_table() -> np.ndarray:
    tab = np.zeros(256, np.uint32)
    for i in range(256):
        c = i << 8
        for _ in range(8):
            c = ((c << 1) ^ 0x1021) if c & 0x8000 else (c << 1)
        tab[i] = c & 0xFFFF
    return tab


CRC_TABLE = _crc_table()


def crc16_ccitt_false(data: bytes) -> int:
    """CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, not reflected, xorout 0)."""
    crc = 0xFFFF
    for b in data:
        crc = ((crc << 8) & 0xFFFF) ^ int(CRC_TABLE[((crc >> 8) ^ b) & 0xFF])
    return crc


def crc16_rows(rows: np.ndarray) -> np.ndarray:
    """The CRC of every row of a uint8 matrix (one message a row)."""
    crc = np.full(rows.shape[0], 0xFFFF, np.uint32)
    for j in range(rows.shape[1]):
        crc = ((crc << 8) & 0xFFFF) ^ CRC_TABLE[((crc >> 8) ^ rows[:, j]) & 0xFF]
    return crc


def cobs_encode(data: bytes) -> bytes:
    """COBS without the trailing delimiter (any length)."""
    out = bytearray()
    block = bytearray()
    for b in data:
        if b == 0:
            out.append(len(block) + 1)
            out += block
            block.clear()
        else:
            block.append(b)
            if len(block) == 254:
                out.append(255)
                out += block
                block.clear()
    out.append(len(block) + 1)
    out += block
    return bytes(out)


def cobs_decode(enc: bytes) -> bytes | None:
    """Inverse of :func:`cobs_encode`; None when ``enc`` is not valid COBS."""
    out = bytearray()
    i = 0
    while i < len(enc):
        code = enc[i]
        if code == 0:
            return None
        block = enc[i + 1:i + code]
        if len(block) != code - 1 or 0 in block:
            return None
        out += block
        i += code
        if code < 255 and i < len(enc):
            out.append(0)
    return bytes(out)


def cobs_rows(rows: np.ndarray) -> np.ndarray:
    """COBS-encode every row (messages under 254 bytes) and append the 0x00 delimiter."""
    n, width = rows.shape
    assert width < 254
    pos = np.arange(width)
    zero_at = np.where(rows == 0, pos, width)
    nxt = np.minimum.accumulate(zero_at[:, ::-1], axis=1)[:, ::-1]  # next zero at or after
    after = np.concatenate([nxt[:, 1:], np.full((n, 1), width)], axis=1)
    out = np.zeros((n, width + 2), np.uint8)
    out[:, 0] = nxt[:, 0] + 1
    out[:, 1:width + 1] = np.where(rows == 0, after - pos, rows)
    return out


def message(msg_type: int, seq: int, body: bytes) -> bytes:
    """type | seq | body | crc, before framing."""
    head = struct.pack("<BH", msg_type, seq & 0xFFFF) + body
    return head + struct.pack("<H", crc16_ccitt_false(head))


def frame(msg_type: int, seq: int, body: bytes) -> bytes:
    """One message, COBS-framed, with its delimiter."""
    return cobs_encode(message(msg_type, seq, body)) + b"\x00"


def is_message(enc: bytes) -> bool:
    """Whether a frame's bytes (without delimiter) decode to a message with a good CRC."""
    msg = cobs_decode(enc)
    return msg is not None and len(msg) >= 5 and \
        int.from_bytes(msg[-2:], "little") == crc16_ccitt_false(msg[:-2])


def hello_body(tw: Tower) -> bytes:
    return struct.pack("<BBBBBBHHB", 1, *tw.fw, 8, 8, tw.piezo_rate_hz, tw.load_rate_hz,
                       10) + tw.device_id


def _rows(msg_type: int, seqs: np.ndarray, bodies: np.ndarray) -> np.ndarray:
    """Framed messages of one layout, a row each (type, seq, body, crc, COBS, 0x00)."""
    n = bodies.shape[0]
    rows = np.zeros((n, 3 + bodies.shape[1] + 2), np.uint8)
    rows[:, 0] = msg_type
    rows[:, 1] = seqs & 0xFF
    rows[:, 2] = (seqs >> 8) & 0xFF
    rows[:, 3:-2] = bodies
    crc = crc16_rows(rows[:, :-2])
    rows[:, -2] = crc & 0xFF
    rows[:, -1] = crc >> 8
    return cobs_rows(rows)


def _u32_bytes(x: np.ndarray) -> np.ndarray:
    return x.astype("<u4").view(np.uint8).reshape(-1, 4)


# -- the tower ------------------------------------------------------------------------------

@dataclass
class Tower:
    """Everything fixed about one family's kit (seed-determined)."""

    seed: int
    device_id: bytes
    fw: tuple[int, int, int]
    piezo_rate_hz: int
    batch: int
    clock: str
    clock_err: float
    cpu_pct: int
    load_rate_hz: int
    osc_err: np.ndarray
    damp: float
    f1_dry: np.ndarray
    f1: np.ndarray
    ratios: np.ndarray
    q: np.ndarray
    amp: np.ndarray
    contact_ms: float
    sens: np.ndarray
    xt: float
    xt_fx_hz: float
    xt_delay_ms: float
    top_gain: float
    acc_lsb: np.ndarray
    thud_hz: np.ndarray
    thud_zeta: np.ndarray
    thud_share: float
    bias: np.ndarray
    noise_lsb: np.ndarray
    hp_hz: np.ndarray
    hum_lsb: float
    hum_open_lsb: float
    loose: int
    loose_gain: tuple[float, float]
    loose_thr_lsb: float
    loose_hz: float
    loose_toggle_s: float
    loose_toggle_hit: float
    cells: str
    capacity_g: np.ndarray
    rated_mv_v: np.ndarray
    cpg: np.ndarray
    replaced: list[int]
    plate_g: np.ndarray
    zero_counts: np.ndarray
    noise_counts: np.ndarray
    walk_g: np.ndarray
    tc_g_per_c: np.ndarray
    cracked: int
    cracked_mode: str
    spike_every_s: float
    burst_every_s: float
    burst_s: tuple[float, float]
    crack_shake: float
    stop_odds: np.ndarray
    rim_odds: float
    hop_odds: float
    knock_odds: float
    orig_mass_g: float
    e_orig: float
    repl_kind: str
    repl_mass_g: float
    e_repl: float
    repl_share: float
    edge_odds: float
    edge_max: float
    tip_odds: float
    creep_s: float
    creak_j: float
    table: dict[str, float] = field(default_factory=dict)

    def figures(self) -> dict[str, Any]:
        """Every figure of the tower, JSON-ready."""
        out: dict[str, Any] = {}
        for k, v in self.__dict__.items():
            if isinstance(v, np.ndarray):
                out[k] = np.round(v, 6).tolist()
            elif isinstance(v, bytes):
                out[k] = v.hex()
            elif isinstance(v, float):
                out[k] = round(v, 6)
            else:
                out[k] = v
        return json.loads(json.dumps(out))


def _lu(rng: np.random.Generator, lo: float, hi: float) -> float:
    return float(math.exp(rng.uniform(math.log(lo), math.log(hi))))


def make_tower(seed: int) -> Tower:
    """The kit of family ``seed``: build quality, wear and flaws."""
    rng = np.random.default_rng([seed, 0xA1])
    lv = np.arange(8)
    damp = float(rng.uniform(0.3, 1.0))
    piezo_rate = 2000 if rng.random() < 0.85 else 1600
    batch = int(rng.choice([8, 10, 12, 14]))
    resonator = rng.random() < 0.7
    clock_err = float(rng.uniform(-5e-3, 5e-3) if resonator else rng.uniform(-5e-5, 5e-5))
    load_rate = 80 if rng.random() < 0.8 else 10
    f1_dry = rng.uniform(300, 480) * (1 + rng.uniform(0.03, 0.07)) ** lv \
        * rng.uniform(0.95, 1.05, 8)
    # Moist board: stiffness down ~30 % at the dampest, mass up ~8 %.
    f1 = f1_dry * (1 - 0.3 * damp) / math.sqrt(1 + 0.08 * damp)
    ratios = np.column_stack([np.ones(8), rng.uniform(1.95, 2.15, 8), rng.uniform(2.85, 3.15, 8),
                              rng.uniform(3.5, 3.9, 8)])
    q = (rng.uniform(12, 22, 8) * (1 - 0.55 * damp))[:, None] * np.array([1.0, 0.8, 0.65, 0.55])
    amp = np.column_stack([np.ones(8), rng.uniform(0.4, 0.8, 8), rng.uniform(0.25, 0.5, 8),
                           rng.uniform(0.15, 0.35, 8)])
    sens = rng.uniform(100, 220) * (1 - 0.3 * damp) * np.exp(rng.uniform(math.log(0.65),
                                                                         math.log(1.5), 8))
    # Cells: the original batch of 100 g bars, maybe a replacement batch on one or two levels.
    capacity = np.full(8, 100.0)
    ro_batch = rng.uniform(0.9, 1.1)
    rated = ro_batch * rng.uniform(0.98, 1.02, 8)
    sign = np.ones(8)
    replaced: list[int] = []
    if rng.random() < 0.4:
        replaced = sorted(int(x) for x in rng.choice(8, 1 if rng.random() < 0.7 else 2,
                                                     replace=False))
        cap = float(rng.choice([100.0, 200.0, 300.0], p=[0.4, 0.4, 0.2]))
        ro = rng.uniform(0.6, 1.5)
        flip = -1.0 if rng.random() < 0.5 else 1.0
        for k in replaced:
            capacity[k] = cap
            rated[k] = ro * rng.uniform(0.98, 1.02)
            sign[k] = flip
    cpg = sign * rated * 1e-3 * 128 * 2**24 / capacity
    plate_g = rng.uniform(7, 13, 8) * (1 + 0.08 * damp)
    thud = np.minimum(rng.uniform(75, 110, 8) * np.sqrt(capacity / 100) * np.sqrt(10 / plate_g),
                      400.0)
    zero = rng.uniform(-0.015, 0.015, 8) * capacity * np.abs(cpg) + plate_g * cpg
    noise_counts = (45.0 if load_rate == 80 else 25.0) * rng.uniform(0.9, 1.25, 8)
    cracked = int(rng.integers(8)) if rng.random() < 0.3 else -1
    loose = int(rng.integers(8)) if rng.random() < 0.35 else -1
    repl_kind = "plastic8" if rng.random() < 0.6 else "beech8"
    e_orig = float(rng.uniform(0.2, 0.32) - 0.08 * damp)
    return Tower(
        seed=seed, device_id=bytes(rng.integers(0, 256, 8, dtype=np.uint8)),
        fw=(1, int(rng.integers(0, 3)), int(rng.integers(0, 10))),
        piezo_rate_hz=piezo_rate, batch=batch,
        clock="resonator" if resonator else "crystal", clock_err=clock_err,
        cpu_pct=int(rng.integers(40, 70)), load_rate_hz=load_rate,
        osc_err=rng.uniform(-0.03, 0.03, 8), damp=damp, f1_dry=f1_dry, f1=f1, ratios=ratios,
        q=q, amp=amp, contact_ms=float(rng.uniform(0.3, 0.6) * (1 + 2.5 * damp)), sens=sens,
        xt=float(rng.uniform(0.08, 0.25) * (1 - 0.3 * damp)),
        xt_fx_hz=float(rng.uniform(1000, 2500)), xt_delay_ms=float(rng.uniform(0.1, 0.3)),
        top_gain=float(rng.uniform(0.3, 0.6)),
        acc_lsb=rng.uniform(25, 80) * rng.uniform(0.6, 1.2, 8) * sens / sens.mean(),
        thud_hz=thud, thud_zeta=rng.uniform(0.06, 0.12, 8) * (1 + damp),
        thud_share=float(rng.uniform(0.08, 0.25)),
        bias=512 + rng.uniform(-3, 3, 8), noise_lsb=rng.uniform(0.35, 0.8, 8),
        hp_hz=rng.uniform(5, 16, 8), hum_lsb=float(rng.uniform(0.05, 0.6)),
        hum_open_lsb=float(rng.uniform(3, 12)),
        loose=loose, loose_gain=(float(rng.uniform(0.85, 1.0)), float(rng.uniform(0.15, 0.45))),
        loose_thr_lsb=float(rng.uniform(40, 120)), loose_hz=float(rng.uniform(2200, 5000)),
        loose_toggle_s=float(rng.uniform(15, 60)), loose_toggle_hit=float(rng.uniform(0.2, 0.5)),
        cells="mixed" if replaced else "matched", capacity_g=capacity, rated_mv_v=rated,
        cpg=cpg, replaced=replaced, plate_g=plate_g, zero_counts=zero, noise_counts=noise_counts,
        walk_g=rng.uniform(0.2e-3, 1.0e-3, 8) * (1 + damp) * capacity / 100,
        tc_g_per_c=rng.uniform(0.003, 0.015, 8) * rng.choice([-1.0, 1.0], 8) * capacity / 100,
        cracked=cracked,
        cracked_mode=str(rng.choice(["spikes", "dropouts", "both"])) if cracked >= 0 else "",
        spike_every_s=float(rng.uniform(15, 60)), burst_every_s=float(rng.uniform(20, 80)),
        burst_s=(0.1, float(rng.uniform(0.6, 1.5))), crack_shake=float(rng.uniform(0.2, 0.6)),
        stop_odds=np.concatenate([[1.0], rng.uniform(0.22, 0.36) + rng.uniform(-0.06, 0.06, 7)]),
        rim_odds=float(rng.uniform(0.2, 0.4)), hop_odds=float(rng.uniform(0.03, 0.1)),
        knock_odds=float(rng.uniform(0.015, 0.04)),
        orig_mass_g=float(0.62 * (1 + 0.07 * damp) * rng.uniform(0.97, 1.03)), e_orig=e_orig,
        repl_kind=repl_kind,
        repl_mass_g=float(rng.uniform(0.52, 0.56) if repl_kind == "plastic8"
                          else 0.36 * (1 + 0.07 * damp) * rng.uniform(0.95, 1.05)),
        e_repl=float(e_orig + (rng.uniform(0.1, 0.18) if repl_kind == "plastic8"
                               else rng.uniform(-0.02, 0.04))),
        repl_share=float(rng.uniform(0.15, 0.45)),
        edge_odds=float(rng.uniform(0.015, 0.04) * (0.5 + damp)), edge_max=0.12,
        tip_odds=float(rng.uniform(0.35, 0.7)), creep_s=float(rng.uniform(3, 15)),
        creak_j=float(rng.uniform(0.004, 0.02) * (0.5 + damp)),
        table={"rack_hz": float(rng.uniform(6, 14)), "rack_q": float(rng.uniform(4, 8)),
               "top_hz": float(rng.uniform(25, 55)), "top_q": float(rng.uniform(6, 14))},
    )


# -- cubes, impacts, the scene -----------------------------------------------------------------

@dataclass
class Cube:
    fid: int
    colour: str
    edition: str
    mass_g: float
    e: float


@dataclass
class Impact:
    t: float
    level: int  # 0..7 the plates, 8 the top roof (the entry, no sensor)
    j: float  # mN s
    kind: str
    w: tuple[float, float, float, float]  # modal weights (where on the plate it fell)
    tau_ms: float  # contact time
    load: float  # share of the impulse the level's cell feels


def fall_time(v: float, d: float) -> float:
    """Seconds to fall ``d`` metres starting at ``v`` m/s downwards."""
    return (-v + math.sqrt(v * v + 2 * G * d)) / G


STYLE = {  # release height above the entry (m), speed downwards (m/s), odds of clipping the entry
    "soft": ((0.0, 0.03), (0.0, 0.2), 0.15),
    "normal": ((0.03, 0.10), (0.2, 0.8), 0.25),
    "hard": ((0.05, 0.20), (1.5, 3.5), 0.4),
}


class Scene:
    """One recording's events: cubes, hands, pets, the room, the session."""

    def __init__(self, tw: Tower, scenario: str, duration: float, rng: np.random.Generator,
                 room: bool = True) -> None:
        self.tw, self.scenario, self.duration, self.rng = tw, scenario, duration, rng
        self.noise_seed = int(rng.integers(2**31))
        self.quiet_until = float(rng.uniform(4.0, 6.5))
        self.room = room
        self.impacts: list[Impact] = []
        self.cubes: dict[int, Cube] = {}
        self.stays: dict[int, list[list[float]]] = {}  # fid -> [[level, t_from, t_to]]
        self.edge_of: dict[int, bool] = {}
        self.last_landing: dict[int, dict[str, Any]] = {}
        self.landings: list[dict[str, Any]] = []
        self.knockdowns: list[dict[str, Any]] = []
        self.removals: list[dict[str, Any]] = []
        self.lifts: list[dict[str, Any]] = []
        self.closes: list[dict[str, Any]] = []
        self.knocks: list[dict[str, Any]] = []
        self.fallouts: list[dict[str, Any]] = []
        self.presses: list[dict[str, Any]] = []  # hand forces on the cells
        self.rustles: list[dict[str, Any]] = []  # hands rubbing the card (piezo)
        self.table_events: list[dict[str, Any]] = []
        self.creaks: list[list[float]] = []
        self.spans: list[list[float]] = []  # [t_lift, t_close, exposed]
        self.pops: list[float] = []
        self.walks: list[dict[str, Any]] = []
        self.rain: dict[str, Any] = {"kind": "none", "lsb": 0.0, "gust_hz": 0.1}
        self.stove: dict[str, Any] = {"lit": False, "pops_per_s": 0.0, "logs": []}
        self.stalls: list[dict[str, float]] = []
        self.tips: list[tuple[float, int, int, int, str, int]] = []
        self.tip_token: dict[int, int] = {}
        self.agenda: list[tuple[float, int, str, dict[str, Any]]] = []
        self._n = 0
        self.next_fid = 0
        self.game: dict[str, Any] | None = None
        self.loose_states: list[list[Any]] = []
        self.loose_rattles: list[list[Any]] = []
        self.crack_spikes: list[dict[str, Any]] = []
        self.crack_bursts: list[list[float]] = []
        self.finished = False
        # the session: how the laptop met the device
        r = rng.random()
        self.start = "plugged" if r < 0.25 else "dtr" if r < 0.6 else "running"
        self.glitch = self.start == "dtr" and rng.random() < 0.5
        self.pre_msgs = int(rng.integers(1, 4))
        self.wrap_at: float | None = None
        if self.start == "running":
            self.seq0 = int(rng.integers(0, 65536))
            if rng.random() < 0.5:
                self.wrap_at = float(rng.uniform(5.0, 0.9 * duration))
                self.up0 = int(rng.integers(1, 5)) * U32 / 1e6 - self.wrap_at
            else:
                self.up0 = float(rng.uniform(300, 21600))
                while (self.up0 * 1e6) % U32 + (duration + 2) * 1e6 >= U32:
                    self.up0 += 600.0
            self.timeouts0 = int(rng.integers(0, 300))
        else:
            self.seq0 = 0
            self.up0 = float(rng.uniform(0.02, 0.2))
            self.timeouts0 = 0
        self.up0_us = int(round(self.up0 * 1e6))

    # -- bookkeeping ----------------------------------------------------------------------
    def _seq(self) -> int:
        self._n += 1
        return self._n

    def new_cube(self, colour: str) -> Cube:
        tw, rng = self.tw, self.rng
        if rng.random() < tw.repl_share:
            spread = 0.015 if tw.repl_kind == "plastic8" else 0.04
            cube = Cube(self.next_fid, colour, tw.repl_kind, tw.repl_mass_g * (1 + rng.uniform(
                -spread, spread)), tw.e_repl * rng.uniform(0.9, 1.1))
        else:
            cube = Cube(self.next_fid, colour, "original10",
                        tw.orig_mass_g * rng.uniform(0.96, 1.04), tw.e_orig * rng.uniform(0.9, 1.1))
        self.cubes[cube.fid] = cube
        self.next_fid += 1
        return cube

    def on_floor(self, level: int, t: float) -> list[int]:
        return [fid for fid, sts in self.stays.items()
                if any(s[0] == level and s[1] <= t < s[2] for s in sts)]

    def resting(self, fid: int) -> list[float] | None:
        sts = self.stays.get(fid)
        return sts[-1] if sts and sts[-1][2] == math.inf else None

    def _open_at(self, t: float, level: int) -> bool:
        return any(s[0] <= t < s[1] and level >= s[2] for s in self.spans)

    def _impact(self, t: float, level: int, j: float, kind: str,
                w: tuple[float, float, float, float] | None = None,
                tau_ms: float | None = None) -> Impact:
        rng = self.rng
        if w is None:
            if kind in ("rim", "entry"):
                w = (0.6, 1.0, 0.9, 0.7)
            elif kind in ("creak", "pop", "slide"):
                w = (1.0, 1.0, 1.0, 1.0)
            else:
                w = (1.0, float(rng.uniform(0.5, 0.9)), float(rng.uniform(0.3, 0.6)),
                     float(rng.uniform(0.2, 0.4)))
        if tau_ms is None:
            c = self.tw.contact_ms
            tau_ms = {"creak": 0.05, "pop": 0.1, "tick": 0.4 * c, "rim": 0.6 * c,
                      "entry": 0.6 * c}.get(kind, float(rng.uniform(c, 1.6 * c)))
        imp = Impact(t, level, j, kind, w, tau_ms, LOAD_SHARE.get(kind, 0.0))
        self.impacts.append(imp)
        return imp

    def _creak(self, t: float, level: int) -> None:
        """The damp card creaks after its load changed: 0-3 faint broadband ticks."""
        rng = self.rng
        for dt in np.sort(rng.uniform(0.05, 1.5, int(rng.integers(0, 4)))):
            j = self.tw.creak_j * float(rng.uniform(0.3, 1.5))
            self._impact(t + float(dt), level, j, "creak")
            self.creaks.append([round(t + float(dt), 6), level, round(j, 6)])

    # -- a cube falling ---------------------------------------------------------------------
    def _fall(self, cube: Cube, level: int, t: float, v: float, drop_m: float
              ) -> tuple[int, float, float, list[Impact], int]:
        """The cube falls ``drop_m`` onto plate ``level`` and on down through holes.

        Returns (level it rests on, rest time, time it first struck that plate, its
        impacts, hops into a hole)."""
        tw, rng = self.tw, self.rng
        imps: list[Impact] = []
        hops = 0
        lv, d = level, drop_m
        m, e = cube.mass_g, cube.e
        while True:
            t += fall_time(v, d)
            v = math.sqrt(v * v + 2 * G * d)
            stop = lv == 0 or rng.random() < tw.stop_odds[lv] * min(1.1, max(0.7, 1.2 - 0.12 * v))
            if not stop:
                if rng.random() < tw.rim_odds:
                    imps.append(self._impact(t, lv, m * v * float(rng.uniform(0.1, 0.4)), "rim"))
                    v *= float(rng.uniform(0.75, 0.95))
                lv, d = lv - 1, MODULE_H
                continue
            imps.append(self._impact(t, lv, m * v * (1 + e), "plate"))
            t_on = t
            vb = e * v * float(rng.uniform(0.85, 1.05))
            hopped = False
            while vb > 0.1:
                if vb * vb / (2 * G) > CLEARANCE and rng.random() < 0.55:
                    v_top = math.sqrt(max(vb * vb - 2 * G * CLEARANCE, 0.0))
                    tc = t + (vb - v_top) / G
                    imps.append(self._impact(tc, lv + 1, m * v_top * (1 + e), "ceiling"))
                    down = e * v_top
                    t = tc + fall_time(down, CLEARANCE)
                    v_land = math.sqrt(down * down + 2 * G * CLEARANCE)
                else:
                    if rng.random() < 0.3:
                        imps.append(self._impact(t + vb / G, lv, m * vb * float(rng.uniform(
                            0.1, 0.3)), "wall"))
                    t += 2 * vb / G
                    v_land = vb
                if lv > 0 and v_land > 0.3 and rng.random() < tw.hop_odds:
                    hops += 1
                    hopped = True
                    v, lv, d = v_land * float(rng.uniform(0.3, 0.6)), lv - 1, MODULE_H
                    break
                imps.append(self._impact(t, lv, m * v_land * (1 + e), "bounce"))
                vb = e * v_land * float(rng.uniform(0.85, 1.05))
            if hopped:
                continue
            for _ in range(int(rng.integers(1, 4))):
                t += float(rng.uniform(0.008, 0.045))
                imps.append(self._impact(t, lv, m * float(rng.uniform(0.02, 0.08)), "tick"))
            return lv, t + float(rng.uniform(0.005, 0.03)), t_on, imps, hops

    def _land(self, cube: Cube, level: int, t_rest: float, t_on: float, imps: list[Impact],
              hops: int, info: dict[str, Any]) -> dict[str, Any]:
        """A cube came to rest: its truth landing, its stay, maybe an edge and a later tip."""
        tw, rng = self.tw, self.rng
        n_here = len(self.on_floor(level, t_rest))
        # a loaded plate sags more: more of its rim slopes towards the hole
        edge = level >= 1 and rng.random() < min(tw.edge_max, tw.edge_odds * (1 + n_here / 10))
        rec: dict[str, Any] = {
            "t": t_rest, "floor": level, "cubes": 1, "knocked": False, **info,
            "fid": cube.fid, "colour": cube.colour, "edition": cube.edition,
            "mass_g": round(cube.mass_g, 5), "restitution": round(cube.e, 4),
            "t_on_plate": t_on, "hops": hops, "edge": edge,
            "impacts": [[i.t, i.level, round(i.j, 5), i.kind] for i in imps],
        }
        self.landings.append(rec)
        self.last_landing[cube.fid] = rec
        self.stays.setdefault(cube.fid, []).append([level, t_rest, math.inf])
        self.edge_of[cube.fid] = edge
        self._creak(t_rest, level)
        token = self.tip_token.get(cube.fid, 0) + 1
        self.tip_token[cube.fid] = token
        if edge and rng.random() < tw.tip_odds:
            t_tip = t_rest + 0.8 + float(rng.exponential(tw.creep_s))
            heapq.heappush(self.tips, (t_tip, self._seq(), cube.fid, level, "sag", token))
        return rec

    def _leave(self, fid: int, t: float) -> int:
        """A resting cube leaves its plate at ``t``; returns the level."""
        stay = self.resting(fid)
        assert stay is not None
        stay[2] = t
        self.tip_token[fid] = self.tip_token.get(fid, 0) + 1  # cancels a pending tip
        return int(stay[0])

    def throw(self, t: float, cube: Cube, style: str, **info: Any) -> float:
        """A hand releases ``cube`` over the entry at ``t``; returns when all it moved rests."""
        tw, rng = self.tw, self.rng
        self.advance(t)
        (h_lo, h_hi), (v_lo, v_hi), clip = STYLE[style]
        h, v = float(rng.uniform(h_lo, h_hi)), float(rng.uniform(v_lo, v_hi))
        t_entry = t + fall_time(v, h) if h > 0 else t + 0.002
        v = math.sqrt(v * v + 2 * G * h)
        imps: list[Impact] = []
        if rng.random() < clip:
            imps.append(self._impact(t_entry, 8, cube.mass_g * v * float(rng.uniform(0.1, 0.5)),
                                     "entry"))
            v *= float(rng.uniform(0.6, 0.9))
        lv, t_rest, t_on, more, hops = self._fall(cube, 7, t_entry, v, MODULE_H)
        imps += more
        last = t_rest
        caused = False
        for imp in imps:  # may a strike knock a resting cube down? (one per throw)
            if imp.kind not in ("plate", "bounce", "rim") or not 1 <= imp.level <= 7 \
                    or imp.j < 0.3:
                continue
            here = [f for f in self.on_floor(imp.level, imp.t) if f != cube.fid]
            if not here:
                continue
            edge = [f for f in here if self.edge_of.get(f)]
            p = tw.knock_odds * (1 - math.exp(-len(here) / 5)) * min(2.0, imp.j) \
                + 0.06 * len(edge) * min(1.0, imp.j / 0.5)
            if rng.random() >= min(p, 0.6):
                continue
            wts = np.array([4.0 if f in edge else 1.0 for f in here])
            victim = here[int(rng.choice(len(here), p=wts / wts.sum()))]
            t_leave = imp.t + float(rng.uniform(0.005, 0.03))
            frm = self._leave(victim, t_leave)
            self._creak(t_leave, frm)
            last = max(last, self._move_down(victim, frm, t_leave, float(rng.uniform(0.1, 0.35)),
                                             "strike", cube.fid))
            caused = True
            break
        rec = self._land(cube, lv, t_rest, t_on, imps, hops, {
            "style": style, "t_release": t,
            "t_first_impact": imps[0].t if imps else t_on, **info})
        if caused:
            rec["caused_knockdown"] = True
        return last

    def _move_down(self, fid: int, frm: int, t_leave: float, v: float, cause: str,
                   by_fid: int | None) -> float:
        """A cube that left plate ``frm`` falls through its hole and lands lower."""
        cube = self.cubes[fid]
        lv, t_rest, t_on, imps, hops = self._fall(cube, frm - 1, t_leave, v,
                                                  MODULE_H * float(self.rng.uniform(0.6, 1.0)))
        self._land(cube, lv, t_rest, t_on, imps, hops, {
            "kind": "knocked" if cause == "strike" else "tipped", "knocked": True,
            "knocked_from": frm, "cause": cause, "t_release": t_leave,
            "t_first_impact": imps[0].t if imps else t_on})
        self.knockdowns.append({"t": t_leave, "from": frm, "to": lv, "fid": fid,
                                "by_fid": by_fid, "cause": cause})
        return t_rest

    # -- time: tips and room events in order --------------------------------------------------
    def advance(self, t: float) -> None:
        """Let everything scheduled up to ``t`` happen, in time order."""
        while True:
            nt = self.tips[0][0] if self.tips else math.inf
            na = self.agenda[0][0] if self.agenda else math.inf
            if min(nt, na) > t:
                return
            if nt <= na:
                t_tip, _, fid, level, cause, token = heapq.heappop(self.tips)
                self._tip(t_tip, fid, level, cause, token)
            else:
                ta, _, kind, params = heapq.heappop(self.agenda)
                if kind == "touch":
                    self.touch(ta, **params)
                else:
                    self.table_knock(ta, kind, **params)

    def _tip(self, t: float, fid: int, level: int, cause: str, token: int) -> None:
        """A cube at a hole's edge of a sagging plate tips in."""
        if self.tip_token.get(fid) != token:
            return
        stay = self.resting(fid)
        if stay is None or stay[0] != level or stay[1] > t:
            return
        if self._open_at(t, level):
            heapq.heappush(self.tips, (t + float(self.rng.uniform(1.0, 3.0)), self._seq(), fid,
                                       level, cause, token))
            return
        if t > self.duration - 2.5:
            return
        # it slides for a moment, then leaves the plate over the rim
        self._impact(t, level, self.cubes[fid].mass_g * float(self.rng.uniform(0.01, 0.04)),
                     "slide")
        t_go = t + float(self.rng.uniform(0.02, 0.1))
        self._leave(fid, t_go)
        self._creak(t_go, level)
        self.last_landing[fid]["tipped_at"] = t_go
        self._move_down(fid, level, t_go, float(self.rng.uniform(0.05, 0.2)), cause, None)

    def _shake_edges(self, t: float, levels: range | list[int], odds: float, cause: str) -> None:
        for lv in levels:
            if lv < 1 or self._open_at(t, lv):
                continue
            for fid in self.on_floor(lv, t):
                if self.edge_of.get(fid) and self.rng.random() < odds:
                    token = self.tip_token.get(fid, 0) + 1
                    self.tip_token[fid] = token
                    heapq.heappush(self.tips, (t + float(self.rng.uniform(0.03, 0.3)),
                                               self._seq(), fid, lv, cause, token))

    def schedule(self, t: float, kind: str, **params: Any) -> None:
        heapq.heappush(self.agenda, (t, self._seq(), kind, params))

    def table_knock(self, t: float, kind: str, peak: float | None = None) -> None:
        """A pet bumps the table, or a child slaps it: a disturbance (``knocks``)."""
        rng = self.rng
        if kind == "dog":  # a dog's flank or tail against a leg: a push, rocking
            pk = peak or float(rng.uniform(0.3, 1.5))
            ev = {"t": t, "kind": kind, "peak": pk, "rack": 0.6, "top": 0.4, "hi": 0.0,
                  "hi_hz": 80.0, "on_s": float(rng.uniform(0.03, 0.06))}
        elif kind == "cat":  # a cat jumping onto the far end of the table
            pk = peak or float(rng.uniform(0.8, 3.0))
            ev = {"t": t, "kind": kind, "peak": pk, "rack": 0.3, "top": 0.6, "hi": 0.1,
                  "hi_hz": float(rng.uniform(60, 120)), "on_s": 0.005}
            for k in range(int(rng.integers(3, 9))):  # then it walks off: paw steps
                self.table_events.append({"t": t + 0.6 + 0.45 * k, "kind": "paw",
                                          "peak": float(rng.uniform(0.02, 0.08)), "rack": 0.5,
                                          "top": 0.5, "hi": 0.0, "hi_hz": 80.0, "on_s": 0.02})
        else:  # a child's hand slapping the table top
            pk = peak or float(rng.uniform(1.0, 4.0))
            ev = {"t": t, "kind": kind, "peak": pk, "rack": 0.2, "top": 0.5, "hi": 0.3,
                  "hi_hz": float(rng.uniform(80, 200)), "on_s": 0.001}
        self.table_events.append(ev)
        self.knocks.append({"t": t, "t_end": t + 1.0, "kind": kind, "peak_ms2": round(pk, 4)})
        for lv in range(8):  # resting cubes rattle without moving
            n = len(self.on_floor(lv, t))
            if n and not self._open_at(t, lv):
                for _ in range(int(rng.integers(1, 3))):
                    self._impact(t + float(rng.uniform(0.005, 0.08)), lv,
                                 float(rng.uniform(0.005, 0.03)) * math.sqrt(n) * min(2.0, pk),
                                 "rattle")
        self._shake_edges(t, range(1, 8), 0.35 * min(1.0, pk), kind)

    def touch(self, t: float, t_end: float, levels: list[int]) -> None:
        """A child steadies the tower with a hand on the card of ``levels``."""
        rng, tw = self.rng, self.tw
        amp = float(rng.uniform(0.8, 4.0))
        for lv in levels:
            self.presses.append({"level": lv, "t0": t, "t1": t_end,
                                 "g": float(rng.uniform(0.1, 1.2) * (0.6 + 0.6 * tw.damp)),
                                 "rise_s": float(rng.uniform(0.05, 0.2)),
                                 "tremor_hz": float(rng.uniform(8, 12)),
                                 "tremor": float(rng.uniform(0.05, 0.15)),
                                 "phase": float(rng.uniform(0, 2 * np.pi))})
            self.rustles.append({"level": lv, "t0": t, "t1": t_end, "lsb": amp})
        mid = levels[len(levels) // 2]
        self._impact(t, mid, float(rng.uniform(0.03, 0.2)), "touch")
        self._impact(t_end, mid, float(rng.uniform(0.02, 0.1)), "touch")
        self.knocks.append({"t": t, "t_end": t_end, "kind": "hand", "levels": list(levels)})
        self._shake_edges(t, levels, 0.25, "hand")

    # -- hands opening the tower ----------------------------------------------------------------
    def lift(self, t_grip: float, k: int, child: bool) -> float:
        """Lift modules k..7 to lay level k open; returns the lift's time."""
        rng, tw = self.rng, self.tw
        self.advance(t_grip)
        t_lift = t_grip + float(rng.uniform(0.3, 0.7))
        for lv in sorted({max(k - 1, 0), k}):
            self.presses.append({"level": lv, "t0": t_grip, "t1": math.inf,
                                 "g": float(rng.uniform(0.1, 1.0) * (0.6 + 0.6 * tw.damp)),
                                 "rise_s": 0.1, "tremor_hz": float(rng.uniform(8, 12)),
                                 "tremor": float(rng.uniform(0.03, 0.1)), "grip": True})
            self.rustles.append({"level": lv, "t0": t_grip, "t1": t_lift + 0.3,
                                 "lsb": float(rng.uniform(1, 6))})
        self.advance(t_lift)
        self._impact(t_lift, k, float(rng.uniform(0.1, 0.4)), "lift")
        self.spans.append([t_lift, math.inf, k])
        self.lifts.append({"t": t_lift, "exposed": k})
        odds = 0.03 if child else 0.015
        for lv in range(k + 1, 8):  # a cube may slip out of the lifted modules
            for fid in self.on_floor(lv, t_lift):
                if rng.random() < odds and not any(f["t"] >= t_lift for f in self.fallouts):
                    t_out = t_lift + float(rng.uniform(0.1, 0.8))
                    self._leave(fid, t_out)
                    self.fallouts.append({"t": t_out, "fid": fid, "from": lv})
                    self.table_events.append({"t": t_out + 0.05, "kind": "fallout",
                                              "peak": float(rng.uniform(0.01, 0.05)), "rack": 0.0,
                                              "top": 0.3, "hi": 0.7,
                                              "hi_hz": float(rng.uniform(150, 400)),
                                              "on_s": 0.001})
        return t_lift

    def remove(self, t: float, k: int, fids: list[int], per_grab: int) -> float:
        """Fingers take ``fids`` off the open level k, a grab at a time; returns the last."""
        rng = self.rng
        for i in range(0, len(fids), per_grab):
            grab = fids[i:i + per_grab]
            t_off = t + float(rng.uniform(0.2, 0.5))
            self.advance(t_off)
            self.presses.append({"level": k, "t0": t, "t1": t_off,
                                 "g": float(rng.uniform(3, 10)), "rise_s": 0.06,
                                 "tremor_hz": float(rng.uniform(8, 12)), "tremor": 0.08})
            for tc in np.sort(rng.uniform(t, t_off, len(grab) + 1)):
                self._impact(float(tc), k, float(rng.uniform(0.02, 0.08)), "grab")
            for fid in grab:
                self._leave(fid, t_off)
            self.removals.append({"t": t_off, "floor": k, "cubes": len(grab),
                                  "mass_g": round(sum(self.cubes[f].mass_g for f in grab), 5),
                                  "fids": grab})
            self._creak(t_off, k)
            t = t_off + float(rng.uniform(0.8, 1.5))
        return t

    def close(self, t: float) -> None:
        """The lifted modules come down again: the walls land on level k's rim."""
        rng, tw = self.rng, self.tw
        span = self.spans[-1]
        k = int(span[2])
        span[1] = t
        self._impact(t, k, float(rng.uniform(1.5, 5.0)), "close")
        self.table_events.append({"t": t, "kind": "close", "peak": float(rng.uniform(0.02, 0.1)),
                                  "rack": 0.4, "top": 0.6, "hi": 0.0, "hi_hz": 80.0,
                                  "on_s": 0.003})
        self.closes.append({"t": t, "exposed": k})
        for p in self.presses:
            if p.get("grip") and p["t1"] == math.inf:
                p["t1"] = t + float(rng.uniform(0.1, 0.4))
        for lv in range(k + 1, 8):  # the plates re-seat a little differently
            self.presses.append({"level": lv, "t0": t, "t1": math.inf,
                                 "g": float(rng.uniform(-1, 1) * 0.02 * (1 + tw.damp)),
                                 "rise_s": 0.01, "tremor_hz": 10.0, "tremor": 0.0})
        for lv in range(k, 8):
            self._creak(t, lv)

    # -- the end -----------------------------------------------------------------------------
    def finish(self) -> None:
        """Run what is left, then plan the worn electronics' moods."""
        if self.finished:
            return
        self.finished = True
        self.advance(self.duration - 2.5)
        self.tips.clear()
        self.agenda.clear()
        self._plan_loose()
        self._plan_crack()

    def _est_peak(self, imp: Impact, ch: int) -> float:
        tw = self.tw
        d = 8 - ch if imp.level == 8 else abs(ch - imp.level)
        g = (tw.top_gain * tw.xt ** (7 - ch)) if imp.level == 8 else tw.xt ** d
        return imp.j * tw.sens[ch] * g * _contact(np.array([tw.f1[ch]]), imp.tau_ms)[0]

    def _plan_loose(self) -> None:
        tw = self.tw
        if tw.loose < 0:
            return
        rng = np.random.default_rng([self.noise_seed, 11])
        ch = tw.loose
        state = "good" if rng.random() < 0.6 else "poor"
        self.loose_states = [[0.0, state]]
        spont = list(np.cumsum(rng.exponential(tw.loose_toggle_s, 50)))
        shocks = [(imp.t, self._est_peak(imp, ch)) for imp in self.impacts]
        shocks += [(ev["t"], ev["peak"] * tw.acc_lsb[ch]) for ev in self.table_events]
        for t, pk in sorted(shocks):
            while spont and spont[0] < t:
                ts = spont.pop(0)
                if ts < self.duration:
                    state = "poor" if state == "good" else "good"
                    self.loose_states.append([round(ts, 6), state])
            if pk > tw.loose_thr_lsb and 0 <= t < self.duration:
                flip = bool(rng.random() < tw.loose_toggle_hit)
                self.loose_rattles.append([t, round(pk, 3), flip])
                if flip:
                    state = "poor" if state == "good" else "good"
                    self.loose_states.append([round(t + 0.01, 6), state])
        for ts in spont:
            if ts < self.duration:
                state = "poor" if state == "good" else "good"
                self.loose_states.append([round(ts, 6), state])

    def _plan_crack(self) -> None:
        tw = self.tw
        if tw.cracked < 0:
            return
        rng = np.random.default_rng([self.noise_seed, 12])
        ch = tw.cracked
        spikes: list[float] = []
        bursts: list[list[float]] = []
        lo, hi = tw.burst_s

        def add_burst(t: float) -> None:
            bursts.append([t, t + float(rng.uniform(lo, hi))])

        if tw.cracked_mode in ("spikes", "both"):
            spikes += [float(x) for x in np.cumsum(rng.exponential(tw.spike_every_s, 40))
                       + 1.0 if x < self.duration - 0.5]
        if tw.cracked_mode in ("dropouts", "both"):
            for x in np.cumsum(rng.exponential(tw.burst_every_s, 40)) + 1.0:
                if x < self.duration - 2.0:
                    add_burst(float(x))
        shakes = [ev["t"] for ev in self.table_events if ev["kind"] in ("dog", "cat", "slap")]
        shakes += [k["t"] for k in self.knocks if k["kind"] == "hand"]
        shakes += [x["t"] for x in self.lifts + self.closes]
        shakes += [i.t for i in self.impacts if abs(i.level - ch) <= 1 and i.j >= 0.8]
        for t in sorted(shakes):  # the cracked joint is mechanical: shaking opens it
            if t < 1.0 or t > self.duration - 2.0 or rng.random() >= tw.crack_shake:
                continue
            if tw.cracked_mode == "spikes" or (tw.cracked_mode == "both" and rng.random() < 0.5):
                spikes.append(t + float(rng.uniform(0.0, 0.1)))
            else:
                add_burst(t + float(rng.uniform(0.0, 0.2)))
        bursts.sort()
        merged: list[list[float]] = []
        for b in bursts:
            if merged and b[0] <= merged[-1][1] + 0.1:
                merged[-1][1] = max(merged[-1][1], b[1])
            else:
                merged.append(b)
        self.crack_bursts = merged
        # an open bridge wire reads a rail; a half-open one reads far off the true value
        self.crack_spikes = [
            {"t_plan": t, "rail": int(rng.choice([2**23 - 1, -(2**23)])) if rng.random() < 0.5
             else None, "offset": int(rng.choice([-1, 1])) * int(rng.integers(20_000, 2_000_000))}
            for t in sorted(spikes) if not any(b[0] - 0.05 <= t <= b[1] + 0.05 for b in merged)]


# -- scenarios -------------------------------------------------------------------------------

def _style(rng: np.random.Generator, child: bool) -> str:
    if child:
        return str(rng.choice(["soft", "normal", "hard"], p=[0.4, 0.2, 0.4]))
    return str(rng.choice(["soft", "normal", "hard"], p=[0.15, 0.8, 0.05]))


def _touch_levels(rng: np.random.Generator) -> list[int]:
    lo = int(rng.integers(1, 6))
    return list(range(lo, min(8, lo + int(rng.integers(2, 5)))))


def _when(rng: np.random.Generator, lo: float, hi: float) -> float | None:
    """A time in [lo, hi), or None when the recording is too short for it (one draw)."""
    u = float(rng.random())
    return lo + u * (hi - lo) if hi > lo else None


def _plan_room(sc: Scene) -> None:
    """The cabin around the tower: stove, rain, pets, footsteps, the laptop's stalls."""
    rng, dur, q = sc.rng, sc.duration, sc.quiet_until
    noisy = sc.scenario == "noisy"
    lit = noisy or rng.random() < {"single": 0.6, "rapid": 0.6, "game": 0.8}.get(sc.scenario, 0.6)
    if lit:
        rate = float(rng.uniform(0.2, 0.8) if noisy else rng.uniform(0.05, 0.4))
        sc.stove = {"lit": True, "pops_per_s": round(rate, 4), "logs": []}
        t = float(rng.exponential(1 / rate))
        while t < dur - 0.5:
            for k in range(int(rng.integers(1, 4))):
                sc.pops.append(t + 0.1 * k * float(rng.uniform(0.3, 1.0)))
            t += float(rng.exponential(1 / rate))
        if rng.random() < 0.4:
            sc.stove["logs"].append(float(rng.uniform(1.0, dur - 1)))
    r = rng.random()
    kind = "heavy" if noisy or r < 0.2 else "light" if r < 0.5 else "none"
    if kind != "none":
        sc.rain = {"kind": kind, "gust_hz": float(rng.uniform(0.05, 0.3)),
                   "lsb": float(rng.uniform(0.5, 1.5) if kind == "heavy"
                                else rng.uniform(0.15, 0.5))}
    n_walks = int(rng.integers(2, 5)) if noisy else int(rng.integers(0, 3)) \
        if sc.scenario == "game" else int(rng.random() < 0.3)
    for _ in range(n_walks):
        t0 = float(rng.uniform(0.5, dur - 6))
        sc.walks.append({"t": t0, "t_end": t0 + float(rng.uniform(3, 8)),
                         "steps_hz": float(rng.uniform(1.6, 3.0)),
                         "peak": float(rng.uniform(0.005, 0.04))})
    n_pets = int(rng.integers(2, 5)) if noisy else int(rng.integers(0, 3)) \
        if sc.scenario == "game" else int(rng.random() < 0.3)
    for _ in range(n_pets):
        when, pet = _when(rng, q + 1, dur - 4), str(rng.choice(["dog", "cat"]))
        if when is not None:
            sc.schedule(when, pet)
    n_slaps = int(rng.integers(1, 3)) if noisy else int(rng.random() < 0.3) \
        if sc.scenario == "game" else 0
    for _ in range(n_slaps):
        when = _when(rng, q + 1, dur - 4)
        if when is not None:
            sc.schedule(when, "slap")
    n_leans = int(rng.integers(1, 4)) if noisy else int(rng.random() < 0.2)
    for _ in range(n_leans):
        when, hold, levels = _when(rng, q + 1, dur - 6), float(rng.uniform(0.8, 4.0)), \
            _touch_levels(rng)
        if when is not None:
            sc.schedule(when, "touch", t_end=when + hold, levels=levels)
    n_stalls = int(rng.choice([0, 1, 2], p=[0.6, 0.3, 0.1]))
    last = q + 1.0
    for _ in range(n_stalls):
        when, lost = _when(rng, last + 1.0, dur - 3), float(rng.uniform(0.04, 0.5))
        if when is not None:
            sc.stalls.append({"t": when, "lost_s": lost})
            last = when + 1.5


def _throw_with_hand(sc: Scene, t: float, cube: Cube, style: str, touch_odds: float,
                     **info: Any) -> float:
    rng = sc.rng
    if rng.random() < touch_odds:  # someone steadies the tower while the cube goes in
        t0 = max(t - float(rng.uniform(0.2, 1.0)), sc.quiet_until)
        sc.advance(t0)
        sc.touch(t0, t + float(rng.uniform(0.3, 2.5)), _touch_levels(rng))
    return sc.throw(t, cube, style, **info)


def _singles(sc: Scene, t: float, t_end: float, gap: tuple[float, float],
             touch_odds: float) -> float:
    rng = sc.rng
    while t < t_end:
        child = rng.random() < 0.7
        rest = _throw_with_hand(sc, t, sc.new_cube(str(rng.choice(COLOURS))), _style(rng, child),
                                touch_odds, by="child" if child else "adult")
        t = rest + float(rng.uniform(*gap))
    return t


def _series(sc: Scene, t: float, t_end: float, touch_odds: float, sid: int) -> tuple[float, int]:
    """3-6 throws 0.3-0.8 s apart, a quarter of them two cubes at once."""
    rng = sc.rng
    last = t
    pid = sid * 10
    for _ in range(int(rng.integers(3, 7))):
        if t >= t_end:
            break
        child = rng.random() < 0.8
        style = _style(rng, child)
        by = "child" if child else "adult"
        if rng.random() < 0.25:
            pid += 1
            for dt in (0.0, float(rng.uniform(0.0, 0.06))):
                last = max(last, _throw_with_hand(
                    sc, t + dt, sc.new_cube(str(rng.choice(COLOURS))), style,
                    touch_odds if dt == 0 else 0.0, by=by, series=sid, pair=pid))
        else:
            last = max(last, _throw_with_hand(sc, t, sc.new_cube(str(rng.choice(COLOURS))), style,
                                              touch_odds, by=by, series=sid))
        t += float(rng.uniform(0.3, 0.8))
    return last, sid + 1


def simulate(seed: int, scenario: str, duration: float) -> Scene:
    """The scene of tower ``seed`` in ``scenario`` for ``duration`` seconds."""
    tw = make_tower(seed)
    rng = np.random.default_rng([seed, 1 + SCENARIOS.index(scenario), 0xA1])
    sc = Scene(tw, scenario, duration, rng)
    _plan_room(sc)
    t = sc.quiet_until + float(rng.uniform(0.2, 1.0))
    end = duration - 5.0
    if scenario == "single":
        _singles(sc, t, end, (1.5, 4.5), 0.08)
    elif scenario == "rapid":
        sid = 1
        while t < end:
            last, sid = _series(sc, t, end, 0.06, sid)
            t = last + float(rng.uniform(2.5, 6.0))
    elif scenario == "noisy":
        sid = 1
        last, sid = _series(sc, t, end, 0.12, sid)
        t = last + float(rng.uniform(1.5, 4.0))
        while t < end:
            if rng.random() < 0.5:
                t = _singles(sc, t, min(end, t + float(rng.uniform(6, 15))), (0.8, 3.0), 0.15)
            else:
                last, sid = _series(sc, t, end, 0.12, sid)
                t = last + float(rng.uniform(1.5, 4.0))
    else:
        Arosa(sc).play(t)
    sc.finish()
    return sc


# -- the game ---------------------------------------------------------------------------------

class Arosa:
    """Mord im Arosa by the rulebook, played by a family (3-5 players, children among them)."""

    def __init__(self, sc: Scene) -> None:
        rng = sc.rng
        self.sc = sc
        n = int(rng.integers(3, 6))
        self.players = [str(c) for c in rng.permutation(np.array(COLOURS))[:n]]
        n_kids = int(rng.integers(1, n))  # at least one adult, at least one child
        kids = set(int(i) for i in rng.choice(n, n_kids, replace=False))
        self.child = {p: i in kids for i, p in enumerate(self.players)}
        self.supply = {p: [sc.new_cube(p) for _ in range(20)] for p in self.players}
        self.sheet = {p: [0] * 8 for p in self.players}
        self.victims = [sc.new_cube("red") for _ in range(2)]
        self.crime: list[int] = []
        self.found = 0
        self.phase = "prologue"
        self.over = False
        self.turns: list[dict[str, Any]] = []

    def _end_check(self) -> None:
        if any(sum(v) >= 10 for v in self.sheet.values()) or \
                any(not s for s in self.supply.values()):
            self.over = True

    def _gap(self, child: bool) -> float:
        return float(self.sc.rng.uniform(1.0, 3.0) if child else self.sc.rng.uniform(0.8, 2.0))

    def _throw(self, t: float, who: str, cube: Cube, kind: str) -> float:
        sc = self.sc
        touch = 0.08 if self.child[who] else 0.03
        return _throw_with_hand(sc, t, cube, _style(sc.rng, self.child[who]), touch,
                                kind=kind, who=who, by="child" if self.child[who] else "adult") \
            + self._gap(self.child[who])

    def _own(self, p: str, k: int, t: float) -> int:
        return sum(self.sc.cubes[f].colour == p for f in self.sc.on_floor(k, t))

    def _floor_choice(self, t: float, prefer: list[int]) -> int:
        rng = self.sc.rng
        if prefer and rng.random() < 0.5:
            return int(rng.choice(prefer))
        w = np.array([1.0, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0])
        return int(rng.choice(8, p=w / w.sum()))

    def play(self, t: float) -> None:
        sc, rng = self.sc, self.sc.rng
        first = str(rng.choice(self.players))
        for v in self.victims:
            t = self._throw(t, first, v, "victim")
        for p in self.players:
            for _ in range(2):
                t = self._throw(t, p, self.supply[p].pop(), "prologue")
                self._end_check()
        self.phase = "act1"
        i = int(rng.integers(len(self.players)))
        while not self.over and t < sc.duration - 14.0:
            t = self._turn(t, self.players[i])
            i = (i + 1) % len(self.players)
        sc.game = self.summary()

    def _turn(self, t: float, inv: str) -> float:
        sc, rng = self.sc, self.sc.rng
        child = self.child[inv]
        sc.advance(t)
        turn: dict[str, Any] = {"who": inv, "phase": self.phase, "victims": 0, "placed": {},
                                "penalties": 0, "removed": 0}
        if self.phase == "act1":
            turn["action"] = "inspect"
            where = [sc.resting(v.fid) for v in self.victims]
            k = self._floor_choice(t, [int(s[0]) for s in where if s is not None])
        else:
            on_sheet = sum(self.sheet[inv])
            if on_sheet and rng.random() < 0.4:
                turn["action"] = "cover"
                k = self._floor_choice(t, [f for f in range(8) if self._own(inv, f, t)])
            else:
                turn["action"] = "suspect"
                others = [p for p in self.players if p != inv]
                sus = [str(x) for x in rng.choice(others, 1 if rng.random() < 0.7 else 2,
                                                  replace=False)]
                turn["suspects"] = sus
                best = max(range(8), key=lambda f: sum(self._own(s, f, t) for s in sus))
                k = best if rng.random() < 0.55 else self._floor_choice(t, [])
        turn["floor"] = k
        t_lift = sc.lift(t, k, child)
        turn["t_lift"] = t_lift
        t_look = t_lift + float(rng.uniform(1.0, 3.0))
        sc.advance(t_look)
        here = sorted(sc.on_floor(k, t_look))
        penalties = 0
        if turn["action"] == "inspect":
            vics = [f for f in here if sc.cubes[f].colour == "red"]
            if vics:
                turn["victims"] = len(vics)
                self.found += len(vics)
                if k not in self.crime:
                    self.crime.append(k)
                    self.crime.sort()
                for p in self.players:
                    if p != inv:
                        turn["placed"][p] = self._place(p, k, self._own(p, k, t_look))
            else:
                penalties = 1
        elif turn["action"] == "suspect":
            if k == 0 and self._own(inv, 0, t_look) == 0:
                turn["ground_floor_case"] = True
                penalties = len(turn["suspects"])
            else:
                for s in turn["suspects"]:
                    n = self._own(s, k, t_look)
                    turn["placed"][s] = self._place(s, k, n)
                    penalties += n == 0
        else:
            own = self._own(inv, k, t_look)
            back = min(own, self.sheet[inv][k])
            self.sheet[inv][k] -= back
            self.supply[inv] += [sc.new_cube(inv) for _ in range(back)]
            turn["covered"] = back
            penalties = int(own == 0)
        turn["penalties"] = penalties
        t_done = t_look
        hand: list[int] = []
        if not self.over:
            hand = here
            turn["removed"] = len(here)
            t_done = sc.remove(t_look, k, here, 3 if child else 4) if here else t_look
        t_close = t_done + float(rng.uniform(0.3, 1.0))
        sc.advance(t_close)
        sc.close(t_close)
        self.turns.append(turn)
        if self.over:
            return sc.duration
        t = t_close + float(rng.uniform(0.8, 2.0))
        back_in = [f for f in hand if sc.cubes[f].colour != "red"]
        back_in += [f["fid"] for f in sc.fallouts if f["t"] >= t_lift and f["t"] <= t_close]
        turn["thrown_back"] = 0
        while back_in:
            if t > sc.duration - 4.0:  # the recording ends before the turn does
                turn["cut_by_end"] = True
                return t
            if child and len(back_in) >= 2 and rng.random() < 0.15:
                # a child throws two back at once (the rules say one after another)
                pair = [sc.cubes[back_in.pop(0)], sc.cubes[back_in.pop(0)]]
                style = _style(rng, True)
                by = {"kind": "throwback", "who": inv, "by": "child",
                      "pair": 1000 * len(self.turns) + turn["thrown_back"]}
                rest = max(sc.throw(t, pair[0], style, **by),
                           sc.throw(t + float(rng.uniform(0.0, 0.06)), pair[1], style, **by))
                t = rest + self._gap(True)
                turn["thrown_back"] += 2
                continue
            t = self._throw(t, inv, sc.cubes[back_in.pop(0)], "throwback")
            turn["thrown_back"] += 1
        for _ in range(penalties):
            if self.over:
                break
            if t > sc.duration - 4.0:
                turn["cut_by_end"] = True
                return t
            t = self._throw(t, inv, self.supply[inv].pop(), "penalty")
            turn["penalties_thrown"] = turn.get("penalties_thrown", 0) + 1
            self._end_check()
        if self.phase == "act1" and self.found >= 2:
            self.phase = "act2"
        return t + float(rng.uniform(0.5, 2.0))

    def _place(self, p: str, k: int, n: int) -> int:
        placed = 0
        for _ in range(n):
            if self.over:
                break
            self.supply[p].pop()
            self.sheet[p][k] += 1
            placed += 1
            self._end_check()
        return placed

    def summary(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "players": self.players, "children": [p for p in self.players if self.child[p]],
            "phase": "over" if self.over else self.phase, "crime_scenes": self.crime,
            "sheet": self.sheet, "supply": {p: len(s) for p, s in self.supply.items()},
            "turns": self.turns}
        if self.over:
            pts = {p: sum(n * (3 if f in self.crime else 2 if any(abs(f - c) == 1
                                                                   for c in self.crime) else 1)
                          for f, n in enumerate(self.sheet[p])) for p in self.players}
            out["suspicion"] = pts
            out["culprits"] = [p for p in self.players if pts[p] == max(pts.values())]
            out["winners"] = [p for p in self.players if pts[p] == min(pts.values())]
        return out


# -- rendering the sensors -----------------------------------------------------------------------

def _contact(f: np.ndarray, tau_ms: float) -> np.ndarray:
    """Spectrum of a half-sine contact of ``tau_ms`` (1 at DC)."""
    x = 2 * f * tau_ms * 1e-3
    with np.errstate(divide="ignore", invalid="ignore"):
        val = np.cos(np.pi * f * tau_ms * 1e-3) / (1 - x * x)
    return np.abs(np.where(np.abs(1 - x * x) < 1e-6, np.pi / 4, val))


def _damped(tau: np.ndarray, f: float, q: float) -> np.ndarray:
    return np.sin(2 * np.pi * f * tau) * np.exp(-np.pi * f * tau / q)


def table_accel(sc: Scene, t: np.ndarray) -> np.ndarray:
    """Vertical acceleration of the table top under the tower (m/s^2)."""
    tab = sc.tw.table
    fs = 1.0 / (t[1] - t[0])
    a = np.zeros(len(t))
    events = list(sc.table_events)
    for w in sc.walks:  # footsteps on the wooden floor reach the table through its legs
        n = int((w["t_end"] - w["t"]) * w["steps_hz"])
        events += [{"t": w["t"] + k / w["steps_hz"], "peak": w["peak"], "rack": 0.5, "top": 0.5,
                    "hi": 0.0, "hi_hz": 80.0, "on_s": 0.015} for k in range(n)]
    events += [{"t": p, "peak": 0.01, "rack": 0.0, "top": 0.2, "hi": 0.8, "hi_hz": 300.0,
                "on_s": 0.0005} for p in sc.pops]
    events += [{"t": lg, "peak": 0.06, "rack": 0.5, "top": 0.5, "hi": 0.0, "hi_hz": 80.0,
                "on_s": 0.02} for lg in sc.stove["logs"]]
    span = min(len(t), int(3.0 * fs))
    for ev in events:
        i0 = int(math.ceil((ev["t"] - t[0]) * fs))
        if i0 >= len(t) or i0 < 0:
            continue
        tau = t[i0:i0 + span] - ev["t"]
        y = ev["rack"] * _damped(tau, tab["rack_hz"], tab["rack_q"]) \
            + ev["top"] * _damped(tau, tab["top_hz"], tab["top_q"])
        if ev["hi"]:
            y = y + ev["hi"] * _damped(tau, ev["hi_hz"], 3.0)
        a[i0:i0 + len(tau)] += ev["peak"] * y * (1 - np.exp(-tau / ev["on_s"]))
    return a


def _add_impact(mech: np.ndarray, imp: Impact, tw: Tower, fs: float, skew: np.ndarray) -> None:
    n = mech.shape[0]
    boost = THUD_BOOST.get(imp.kind, 1.0)
    for c in range(8):
        if imp.level == 8:
            d, g = 8 - c, tw.top_gain * tw.xt ** (7 - c)
        else:
            d = abs(c - imp.level)
            g = tw.xt ** d
        amp = imp.j * tw.sens[c] * g
        if amp < 0.05:
            continue
        t_arr = imp.t + d * tw.xt_delay_ms * 1e-3
        i0 = max(0, int(math.ceil((t_arr - skew[c]) * fs)))
        if i0 >= n:
            continue
        f = tw.f1[c] * tw.ratios[c]
        q = tw.q[c]
        w = np.array(imp.w) if d == 0 else np.array([1.0, 0.7, 0.5, 0.4])
        a = tw.amp[c] * w * _contact(f, imp.tau_ms) * (np.exp(-d * f / tw.xt_fx_hz) if d else 1.0)
        fp, z = tw.thud_hz[c], tw.thud_zeta[c]
        decay = max(float(np.max(q / (np.pi * f))), 1 / (z * 2 * np.pi * fp))
        width = min(int(6 * decay * fs) + 2, n - i0)
        tau = (i0 + np.arange(width)) / fs + skew[c] - t_arr
        y = (a[:, None] * np.sin(2 * np.pi * f[:, None] * tau)
             * np.exp(-np.pi * f[:, None] * tau / q[:, None])).sum(axis=0)
        y += tw.thud_share * boost * np.sin(2 * np.pi * fp * tau) \
            * np.exp(-z * 2 * np.pi * fp * tau)
        mech[i0:i0 + width, c] += amp * y


def _band_noise(rng: np.random.Generator, n: int, cols: int, lo: float, hi: float,
                fs: float) -> np.ndarray:
    sos = signal.butter(2, [lo, min(hi, 0.45 * fs)], btype="band", fs=fs, output="sos")
    x = signal.sosfilt(sos, rng.standard_normal((n, cols)), axis=0)
    return np.asarray(x / max(float(np.std(x)), 1e-12))


def _envelope(t: np.ndarray, t0: float, t1: float, rise: float) -> np.ndarray:
    up = np.clip((t - t0) / rise, 0.0, 1.0)
    down = np.clip((t1 - t) / rise, 0.0, 1.0) if t1 != math.inf else np.ones(len(t))
    return np.asarray(np.minimum(up, down))


def loose_gain(sc: Scene, t: np.ndarray) -> np.ndarray:
    """The half-detached disc's sensitivity over time (its two contact states)."""
    g_good, g_poor = sc.tw.loose_gain
    out = np.full(len(t), g_good if sc.loose_states[0][1] == "good" else g_poor)
    for ts, state in sc.loose_states[1:]:
        out[t >= ts] = g_good if state == "good" else g_poor
    return out


def render_piezo(sc: Scene) -> np.ndarray:
    """The eight piezo channels as the ADC reads them: (sets, 8) uint16."""
    sc.finish()
    tw = sc.tw
    fs = float(tw.piezo_rate_hz)
    n = int(round(sc.duration * fs))
    t = np.arange(n) / fs
    rng = np.random.default_rng([sc.noise_seed, 1])
    skew = np.arange(8) * 52e-6  # one conversion (13 ADC clocks at 250 kHz) per channel
    mech = np.zeros((n, 8))
    for imp in sc.impacts:
        _add_impact(mech, imp, tw, fs, skew)
    # Each optional source has its own random stream: a scene without it renders the
    # same noise (the tests compare the two).
    pop_rng = np.random.default_rng([sc.noise_seed, 14])
    for p in sc.pops:  # the stove's pops reach the plates through the air
        j = float(pop_rng.uniform(0.002, 0.012))
        for lv in range(8):
            _add_impact(mech, Impact(p, lv, j * float(pop_rng.uniform(0.7, 1.3)), "pop",
                                     (1.0, 1.0, 1.0, 1.0), 0.1, 0.0), tw, fs, skew)
    mech += table_accel(sc, t)[:, None] * tw.acc_lsb[None, :]
    if sc.rain["lsb"] > 0:  # rain on the roof: broadband, partly common to all plates
        rain_rng = np.random.default_rng([sc.noise_seed, 15])
        common = _band_noise(rain_rng, n, 1, 150, 1500, fs)
        own = _band_noise(rain_rng, n, 8, 150, 1500, fs)
        gust = 1 + 0.4 * np.sin(2 * np.pi * sc.rain["gust_hz"] * t + float(rng.uniform(0, 6.3)))
        rel = tw.sens / np.median(tw.sens)
        mech += sc.rain["lsb"] * gust[:, None] * rel[None, :] * (0.7 * common + 0.7 * own)
    hand_rng = np.random.default_rng([sc.noise_seed, 16])
    for r in sc.rustles:  # fingers on the card
        i0, i1 = int(r["t0"] * fs), min(n, int(r["t1"] * fs) + 1)
        if i1 - i0 < 8:
            continue
        x = _band_noise(hand_rng, i1 - i0, 1, 200, 1200, fs)[:, 0]
        mech[i0:i1, r["level"]] += r["lsb"] * x * _envelope(t[i0:i1], r["t0"], r["t1"], 0.05)
    if tw.loose >= 0:
        _loose_disc(mech, sc, t, fs, np.random.default_rng([sc.noise_seed, 13]))
    for c in range(8):  # AC coupling: the disc's capacitance on the bias divider
        b, a = signal.butter(1, tw.hp_hz[c], btype="highpass", fs=fs)
        mech[:, c] = signal.lfilter(b, a, mech[:, c])
    phase = float(rng.uniform(0, 2 * np.pi))
    f_mains = 50.0 / (1 + tw.clock_err)  # real 50 Hz seen on the device's clock
    hum = np.sin(2 * np.pi * f_mains * t + phase) \
        + 0.3 * np.sin(6 * np.pi * f_mains * t + 2 * phase)
    x = tw.bias[None, :] + mech + tw.hum_lsb * hum[:, None] \
        + rng.standard_normal((n, 8)) * tw.noise_lsb[None, :]
    for t_lift, t_close, k in sc.spans:  # lifted modules: the pins keep only the bias divider
        i0 = int(math.ceil(t_lift * fs))
        i1 = min(n, int(math.ceil(min(t_close, sc.duration) * fs)))
        if i1 <= i0 or k >= 7:
            continue
        chans = slice(int(k) + 1, 8)
        x[i0:i1, chans] = tw.bias[None, chans] + tw.hum_open_lsb * hum[i0:i1, None] \
            + 1.5 * rng.standard_normal((i1 - i0, 7 - int(k)))
        for t_c in (t_lift, t_close):  # the spring contacts chatter
            for _ in range(int(rng.integers(2, 6))):
                ts = t_c + float(rng.uniform(0, 0.02))
                j0 = int(math.ceil(ts * fs))
                if j0 >= n:
                    continue
                tau = t[j0:j0 + int(0.1 * fs)] - ts
                step = float(rng.uniform(20, 150)) * float(rng.choice([-1, 1]))
                x[j0:j0 + len(tau), chans] += step * np.exp(-tau / float(rng.uniform(0.005, 0.02)))[
                    :, None]
    return np.clip(np.round(x), 0, 1023).astype(np.uint16)


def _loose_disc(mech: np.ndarray, sc: Scene, t: np.ndarray, fs: float,
                rng: np.random.Generator) -> None:
    """The half-detached disc: two sensitivities, and it rattles on strong strikes."""
    tw = sc.tw
    ch = tw.loose
    mech[:, ch] *= loose_gain(sc, t)
    n = len(t)
    for t_hit, pk, _flip in sc.loose_rattles:
        tr = t_hit + float(rng.uniform(0.002, 0.006))
        a = 0.4 * float(pk) * float(rng.uniform(0.5, 1.0))
        for _ in range(int(rng.integers(2, 7))):  # the disc slaps back, again and again
            i0 = int(math.ceil(tr * fs))
            if i0 >= n:
                break
            tau = t[i0:i0 + int(0.03 * fs)] - tr
            y = a * (_damped(tau, tw.loose_hz, 8.0)
                     + 0.5 * _damped(tau, tw.f1[ch], tw.q[ch, 0]))
            mech[i0:i0 + len(tau), ch] += y
            tr += float(rng.uniform(0.0015, 0.005))
            a *= float(rng.uniform(0.4, 0.75))


@dataclass
class LoadStream:
    t: np.ndarray  # read times (device s)
    valid: np.ndarray  # uint8 per read
    counts: np.ndarray  # (reads, 8) int64, 0 where not valid
    timeouts: list[tuple[float, int]]  # (t, +n) increments of STATUS load_timeouts


def _boxcar(x: np.ndarray, n: int) -> np.ndarray:
    c = np.cumsum(np.concatenate([np.repeat(x[:1], n), x]))
    return np.asarray((c[n:] - c[:-n]) / n)


def render_load(sc: Scene) -> LoadStream:
    """The HX711s' readings as the firmware sends them."""
    sc.finish()
    tw = sc.tw
    rng = np.random.default_rng([sc.noise_seed, 2])
    dur = sc.duration
    n = int((dur + 0.5) * GRID_HZ)
    tg = np.arange(n) / GRID_HZ
    static = np.zeros((n + 1, 8))
    for fid, sts in sc.stays.items():
        m = sc.cubes[fid].mass_g
        for lv, t0, t1 in sts:
            i0 = min(n, int(math.ceil(t0 * GRID_HZ)))
            i1 = min(n, int(math.ceil(t1 * GRID_HZ))) if t1 != math.inf else n
            static[i0, int(lv)] += m
            static[i1, int(lv)] -= m
    grams = np.cumsum(static, axis=0)[:n]
    force = grams.copy()
    for imp in sc.impacts:  # the plate bounces on its cell
        if imp.level > 7 or imp.load == 0:
            continue
        lv = imp.level
        w = 2 * np.pi * tw.thud_hz[lv]
        z = tw.thud_zeta[lv]
        i0 = int(math.ceil(imp.t * GRID_HZ))
        if i0 >= n or i0 < 0:
            continue
        tau = tg[i0:i0 + int(min(6 / (z * w), 0.5) * GRID_HZ)] - imp.t
        force[i0:i0 + len(tau), lv] += imp.j * imp.load * w * np.exp(-z * w * tau) \
            * np.sin(w * math.sqrt(1 - z * z) * tau) / G
    for p in sc.presses:
        i0 = max(0, int(p["t0"] * GRID_HZ))
        if i0 >= n:
            continue
        seg = tg[i0:]
        env = _envelope(seg, p["t0"], p["t1"], p["rise_s"])
        wob = 1 + p["tremor"] * np.sin(2 * np.pi * p["tremor_hz"] * seg + p.get("phase", 0.0))
        force[i0:, p["level"]] += p["g"] * env * wob
    force -= (tw.plate_g[None, :] + grams) * table_accel(sc, tg)[:, None] / G
    # Zero drift: a random walk (moisture in the gauges) and the stove warming the room.
    coarse = np.arange(0, dur + 1.0, 0.1)
    walk = np.cumsum(rng.standard_normal((len(coarse), 8)) * math.sqrt(0.1), axis=0) * tw.walk_g
    warm = (float(rng.uniform(2, 6)) if sc.stove["lit"] else float(rng.uniform(-1, 1))) / 3600
    drift = np.stack([np.interp(tg, coarse, walk[:, c]) for c in range(8)], axis=1) \
        + (warm * tg)[:, None] * tw.tc_g_per_c[None, :]
    force += drift
    # The HX711's digital filter: settled in four conversion periods (sinc^4).
    periods = 1.0 / (tw.load_rate_hz * (1 + tw.osc_err))
    filt = np.empty_like(force)
    for c in range(8):
        y = force[:, c]
        nb = max(1, int(round(periods[c] * GRID_HZ)))
        for _ in range(4):
            y = _boxcar(y, nb)
        filt[:, c] = y
    # Which conversions each converter makes (powered spans, settled, not in a crack burst).
    conv: list[np.ndarray] = []
    for c in range(8):
        spans_on: list[tuple[float, float]] = []
        on = -sc.up0 if sc.start != "running" else -1e4
        for t_lift, t_close, k in sorted(sc.spans):
            if c > k:
                spans_on.append((on, t_lift))
                on = t_close
        spans_on.append((on, math.inf))
        times: list[np.ndarray] = []
        for a, b in spans_on:
            phase = float(rng.uniform(0, periods[c]))
            first = a + phase + 4 * periods[c]  # settling after power-up (datasheet: 4 periods)
            if first < -1.0:
                first = first + math.ceil((-1.0 - first) / periods[c]) * periods[c]
            stop = min(b, dur + 0.1)
            if stop > first:
                times.append(np.arange(first, stop, periods[c]))
        ct = np.concatenate(times) if times else np.zeros(0)
        if c == tw.cracked:
            for b0, b1 in sc.crack_bursts:  # DOUT never goes low: "not ready"
                ct = ct[(ct < b0) | (ct > b1)]
        conv.append(ct)
    # The firmware reads all eight on one SCK once every converter that answers is ready.
    nominal = 1.0 / tw.load_rate_hz
    ptr = [int(np.searchsorted(conv[c], -0.5)) for c in range(8)]
    t_start = (min(tw.batch, int(round(dur * tw.piezo_rate_hz))) - 1) / tw.piezo_rate_hz + 2e-4
    reads: list[float] = []
    valids: list[int] = []
    picks: list[list[int]] = []
    while True:
        nxt = [float(conv[c][ptr[c]]) if ptr[c] < len(conv[c]) else math.inf for c in range(8)]
        first = min(nxt)
        if first > dur:
            break
        ready = [c for c in range(8) if nxt[c] <= first + 1.5 * nominal]
        t_read = max(nxt[c] for c in ready) + float(rng.uniform(10e-6, 60e-6))
        row = [-1] * 8
        for c in range(8):
            while ptr[c] + 1 < len(conv[c]) and conv[c][ptr[c] + 1] <= t_read:
                ptr[c] += 1
            if c in ready:
                row[c] = int(conv[c][ptr[c]] * GRID_HZ)
                ptr[c] += 1
        if t_read < t_start or t_read > dur:
            continue
        reads.append(t_read)
        valids.append(sum(1 << c for c in ready))
        picks.append(row)
    t_reads = np.array(reads)
    idx = np.array(picks, dtype=np.int64).reshape(-1, 8)
    valid = np.array(valids, dtype=np.uint8)
    grams_read = np.where(idx >= 0, filt[np.clip(idx, 0, n - 1), np.arange(8)[None, :]], 0.0)
    counts = np.round(grams_read * tw.cpg[None, :] + tw.zero_counts[None, :]
                      + rng.standard_normal(idx.shape) * tw.noise_counts[None, :]).astype(np.int64)
    for sp in sc.crack_spikes:  # the cracked joint opens for one reading
        ch = tw.cracked
        cand = np.nonzero((t_reads >= sp["t_plan"]) & ((valid >> ch) & 1 == 1))[0]
        if len(cand) and t_reads[cand[0]] - sp["t_plan"] < 0.5:
            i = int(cand[0])
            value = sp["rail"] if sp["rail"] is not None else int(counts[i, ch]) + sp["offset"]
            counts[i, ch] = min(max(value, -(2**23)), 2**23 - 1)
            sp["counts"] = int(counts[i, ch])
            sp["t"] = float(round(t_reads[i] * 1e6) / 1e6)
    sc.crack_spikes = [sp for sp in sc.crack_spikes if "t" in sp]
    counts = np.clip(counts, -(2**23), 2**23 - 1)
    counts[(valid[:, None] >> np.arange(8)[None, :]) & 1 == 0] = 0
    timeouts = [(x["t"], 7 - x["exposed"]) for x in sc.lifts]
    timeouts += [(b[0], 1) for b in sc.crack_bursts]
    return LoadStream(t_reads, valid, counts, sorted(timeouts))


# -- the byte stream ----------------------------------------------------------------------

def build_stream(sc: Scene, sets: np.ndarray, load: LoadStream) -> tuple[bytes, dict[str, Any]]:
    """Messages in the order the device sends them, framed, as the laptop received them."""
    tw = sc.tw
    rng = np.random.default_rng([sc.noise_seed, 3])
    fs = tw.piezo_rate_hz
    period_us = 1_000_000 // fs
    n_sets = len(sets)
    bsz = tw.batch
    starts = np.arange(0, n_sets, bsz)
    counts = np.minimum(bsz, n_sets - starts)
    pz_send = (starts + counts - 1) / fs + 60e-6
    pz_tus = (sc.up0_us + starts.astype(np.int64) * period_us) % U32
    ld_send = load.t + 3e-4
    ld_tus = (sc.up0_us + np.round(load.t * 1e6).astype(np.int64)) % U32
    ks = np.arange(math.floor(sc.up0) + 1, math.floor(sc.up0 + sc.duration) + 1)
    st_t = ks - sc.up0
    keep = st_t > pz_send[0]
    ks, st_t = ks[keep], st_t[keep]
    to_t = np.array([x[0] for x in load.timeouts] + [math.inf])
    to_n = np.array([x[1] for x in load.timeouts] + [0])
    timeouts = sc.timeouts0 + np.array([int(to_n[to_t <= s].sum()) for s in st_t], dtype=np.int64)
    # send order (a message is sent when complete)
    send = np.concatenate([pz_send, ld_send, st_t + 5e-5])
    kind = np.concatenate([np.zeros(len(pz_send), int), np.ones(len(ld_send), int),
                           np.full(len(st_t), 2)])
    index = np.concatenate([np.arange(len(pz_send)), np.arange(len(ld_send)),
                            np.arange(len(st_t))])
    order = np.lexsort((kind, send))
    seq_list: list[tuple[int, int]] = [(int(kind[o]), int(index[o])) for o in order]
    t_list = [float(send[o]) for o in order]
    if sc.start == "running":  # GET_INFO is answered after the message(s) under way
        p = sc.pre_msgs
        seq_list[p:p] = [(3, 0), (4, 0)]
        t_list[p:p] = [t_list[p - 1], t_list[p - 1]]
    else:
        seq_list.insert(0, (3, 0))
        t_list.insert(0, -0.01)
    seqs = (sc.seq0 + np.arange(len(seq_list))) % 65536
    seq_of = {key: int(s) for key, s in zip(seq_list, seqs, strict=True)}

    def seq_arr(k: int, n: int) -> np.ndarray:
        return np.array([seq_of[(k, i)] for i in range(n)], dtype=np.int64)

    frames: dict[int, list[bytes]] = {}
    full = counts == bsz
    pz_frames: list[bytes] = [b""] * len(starts)
    nf = int(full.sum())
    if nf:
        body = np.zeros((nf, 5 + 16 * bsz), np.uint8)
        body[:, :4] = _u32_bytes(pz_tus[full])
        body[:, 4] = bsz
        body[:, 5:] = sets[: nf * bsz].astype("<u2").view(np.uint8).reshape(nf, -1)
        enc = _rows(0x02, seq_arr(0, len(starts))[full], body)
        for i, row in zip(np.nonzero(full)[0], enc, strict=True):
            pz_frames[int(i)] = row.tobytes()
    for i in np.nonzero(~full)[0]:
        s0, c0 = int(starts[i]), int(counts[i])
        b = struct.pack("<IB", int(pz_tus[i]), c0) + sets[s0:s0 + c0].astype("<u2").tobytes()
        pz_frames[int(i)] = frame(0x02, seq_of[(0, int(i))], b)
    frames[0] = pz_frames
    nl = len(load.t)
    body = np.zeros((nl, 5 + 24), np.uint8)
    body[:, :4] = _u32_bytes(ld_tus)
    body[:, 4] = load.valid
    body[:, 5:] = (load.counts & 0xFFFFFF).astype("<u4").view(np.uint8).reshape(nl, 8, 4)[
        :, :, :3].reshape(nl, 24)
    frames[1] = [r.tobytes() for r in _rows(0x03, seq_arr(1, nl), body)] if nl else []
    ns = len(st_t)
    body = np.zeros((ns, 12), np.uint8)
    body[:, :4] = _u32_bytes(ks * 1000 % U32)
    body[:, 8:10] = (timeouts % 65536).astype("<u2").view(np.uint8).reshape(ns, 2)
    body[:, 10] = np.clip(tw.cpu_pct + rng.integers(-3, 4, ns), 0, 100)
    frames[2] = [r.tobytes() for r in _rows(0x04, seq_arr(2, ns), body)] if ns else []
    frames[3] = [frame(0x01, seq_of[(3, 0)], hello_body(tw))]
    if sc.start == "running":
        frames[4] = [frame(0x05, seq_of[(4, 0)], struct.pack("<BHB", CMD_GET_INFO, 0, 0))]
    out = [frames[k][i] for k, i in seq_list]
    # the laptop's adapter stalls: a span of bytes never arrives
    offsets = np.cumsum([0] + [len(f) for f in out])
    cuts: list[tuple[int, int]] = []
    damage: list[dict[str, Any]] = []
    t_arr = np.array(t_list)
    for st in sc.stalls:
        j = int(np.searchsorted(t_arr, st["t"]))
        j2 = int(np.searchsorted(t_arr, st["t"] + st["lost_s"]))
        if j2 <= j or j2 >= len(out):
            continue
        lo = int(offsets[j]) + int(rng.integers(1, len(out[j]) - 1))
        hi = int(offsets[j2]) + int(rng.integers(1, len(out[j2]) - 1))
        cuts.append((lo, hi))
        damage.append({"t_start": round(t_list[j], 6), "t_end": round(t_list[j2], 6),
                       "kind": "usb_stall", "bytes_lost": hi - lo})
    raw = b"".join(out)
    for lo, hi in reversed(cuts):
        raw = raw[:lo] + raw[hi:]
    prefix = b""
    cut_bytes = 0
    if sc.start == "running":  # the port opened inside a frame: the tail of a LOAD
        t_prev = float(load.t[0]) - 1.0 / tw.load_rate_hz if len(load.t) else -0.0125
        tus = (sc.up0_us + int(round(t_prev * 1e6))) % U32
        vals = load.counts[0] if len(load.t) else np.zeros(8, np.int64)
        body_b = struct.pack("<IB", tus, 0xFF) + b"".join(
            int(v & 0xFFFFFF).to_bytes(3, "little") for v in vals)
        whole = frame(0x03, (sc.seq0 - 1) % 65536, body_b)
        cut = int(rng.integers(1, len(whole) - 3))
        while is_message(whole[cut:-1]):
            cut += 1
        prefix = whole[cut:]
        cut_bytes = len(prefix)
    elif sc.glitch:  # the line held low through the reset reads as one 0x00
        prefix = b"\x00"
    wrap_at = None
    last_us = sc.up0_us + int(round(sc.duration * 1e6))
    if last_us >= U32 * (sc.up0_us // U32 + 1):
        wrap_at = round((U32 * (sc.up0_us // U32 + 1) - sc.up0_us) / 1e6, 6)
    wire = {"start": sc.start, "seq_first": int(seqs[0]), "t_us_first": int(pz_tus[0]),
            "uptime_s": round(sc.up0, 6), "mid_frame_bytes": cut_bytes,
            "glitch_byte": sc.glitch,
            "messages_before_hello": sc.pre_msgs if sc.start == "running" else 0,
            "clock_wraps_at_s": wrap_at, "damage": damage}
    return prefix + raw, wire


# -- truth, files, command line ------------------------------------------------------------

def _r(x: float) -> float:
    return round(float(x), 6)


def truth_of(sc: Scene, wire: dict[str, Any]) -> dict[str, Any]:
    """The ground truth as score.py reads it (all times in stream seconds)."""
    tw = sc.tw
    landings = []
    for x in sorted(sc.landings, key=lambda x: x["t"]):
        y = dict(x)
        for k in ("t", "t_release", "t_first_impact", "t_on_plate", "tipped_at"):
            if k in y:
                y[k] = _r(y[k])
        y["impacts"] = [[_r(i[0]), i[1], i[2], i[3]] for i in y["impacts"]]
        landings.append(y)
    truth: dict[str, Any] = {
        "format": "towerear-crosscheck-truth/1", "model": MODEL, "scenario": sc.scenario,
        "seed": tw.seed, "duration_s": sc.duration, "cells": tw.cells,
        "quiet_until": _r(sc.quiet_until),
        "landings": landings,
        "knockdowns": [{**k, "t": _r(k["t"])} for k in sorted(sc.knockdowns,
                                                                key=lambda k: k["t"])],
        "removals": [{**r, "t": _r(r["t"])} for r in sc.removals],
        "lifts": [{"t": _r(x["t"]), "exposed": x["exposed"]} for x in sc.lifts],
        "closes": [{"t": _r(x["t"]), "exposed": x["exposed"]} for x in sc.closes],
        "knocks": [{**k, "t": _r(k["t"]), "t_end": _r(k["t_end"])}
                   for k in sorted(sc.knocks, key=lambda k: k["t"])],
        "damage": wire["damage"],
        "fallouts": [{**f, "t": _r(f["t"])} for f in sc.fallouts],
        "flaws": {
            "loose_disc": None if tw.loose < 0 else {
                "level": tw.loose, "gain_good": round(tw.loose_gain[0], 4),
                "gain_poor": round(tw.loose_gain[1], 4), "threshold_lsb": round(
                    tw.loose_thr_lsb, 3), "states": sc.loose_states,
                "rattles": [[_r(r[0]), r[1], r[2]] for r in sc.loose_rattles]},
            "cracked_joint": None if tw.cracked < 0 else {
                "channel": tw.cracked, "mode": tw.cracked_mode,
                "spikes": [{"t": sp["t"], "counts": sp["counts"]} for sp in sc.crack_spikes],
                "bursts": [{"t": _r(b[0]), "t_end": _r(b[1])} for b in sc.crack_bursts]},
            "replacement_cells": [{"level": k, "capacity_g": float(tw.capacity_g[k]),
                                   "counts_per_g": round(float(tw.cpg[k]), 3)}
                                  for k in tw.replaced],
            "edge_rests": sum(bool(x.get("edge")) for x in sc.landings),
            "tips": [{**k, "t": _r(k["t"])} for k in sc.knockdowns if k["cause"] != "strike"],
            "creaks": sorted(sc.creaks),
        },
        "cubes": {"original10": {"mass_g": round(tw.orig_mass_g, 5),
                                 "restitution": round(tw.e_orig, 4)},
                  tw.repl_kind: {"mass_g": round(tw.repl_mass_g, 5),
                                 "restitution": round(tw.e_repl, 4),
                                 "share": round(tw.repl_share, 4)}},
        "room": {
            "stove": {**sc.stove, "pops": [_r(p) for p in sc.pops]},
            "rain": {k: (round(v, 4) if isinstance(v, float) else v) for k, v in sc.rain.items()},
            "walks": [{k: _r(v) for k, v in w.items()} for w in sc.walks],
            "paws": [_r(e["t"]) for e in sc.table_events if e["kind"] == "paw"],
        },
        "session": {k: v for k, v in wire.items() if k != "damage"},
        "tower": tw.figures(),
    }
    if sc.game is not None:
        truth["game"] = sc.game
    return json.loads(json.dumps(truth))


def render(sc: Scene) -> tuple[bytes, dict[str, Any]]:
    """Bytes and truth of a scene."""
    sets = render_piezo(sc)
    load = render_load(sc)
    raw, wire = build_stream(sc, sets, load)
    return raw, truth_of(sc, wire)


def make_recording(seed: int, scenario: str, duration: float, out: Path) -> tuple[Path, Path]:
    """Write ``{scenario}_t{seed}.bin`` and ``.truth.json`` into ``out``."""
    raw, truth = render(simulate(seed, scenario, duration))
    bin_path = out / f"{scenario}_t{seed}.bin"
    truth_path = out / f"{scenario}_t{seed}.truth.json"
    bin_path.write_bytes(raw)
    truth_path.write_text(json.dumps(truth, indent=1))
    return bin_path, truth_path


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, exit 2
        self.exit(2, f"{self.prog}: error: {message}\n")


def main(argv: list[str] | None = None) -> int:
    """Command line: write the recordings of ``--towers`` towers."""
    p = _Parser(prog="make_recordings_al.py", description=__doc__.split("\n")[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--towers", type=int, default=8)
    p.add_argument("--first-seed", type=int, default=1)
    p.add_argument("--duration", type=float, default=120.0)
    p.add_argument("--scenarios", nargs="+", default=list(SCENARIOS))
    args = p.parse_args(argv)
    bad = [s for s in args.scenarios if s not in SCENARIOS]
    problem = None
    if bad:
        problem = f"unknown scenario {bad[0]!r} (known: {', '.join(SCENARIOS)})"
    elif args.towers < 1:
        problem = f"--towers must be at least 1, not {args.towers}"
    elif args.first_seed < 0:
        problem = f"--first-seed must not be negative, not {args.first_seed}"
    elif not math.isfinite(args.duration) or args.duration < 12.0:
        problem = f"--duration must be at least 12 seconds, not {args.duration:g}"
    if problem:
        print(f"make_recordings_al.py: error: {problem}", file=sys.stderr)
        return 2
    try:
        args.out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        print(f"make_recordings_al.py: error: cannot create {args.out}: {exc.strerror}",
              file=sys.stderr)
        return 2
    for seed in range(args.first_seed, args.first_seed + args.towers):
        for scenario in args.scenarios:
            make_recording(seed, scenario, args.duration, args.out)
            print(f"{scenario}_t{seed}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
