#!/usr/bin/env python3
"""Cross-check model Y: a worn family tower at children's game night, written blind.

An independent simulator of the towerear kit that writes recordings (the exact
device -> host bytes of contracts.md sections 1-2) and a ground truth
(``towerear-crosscheck-truth/1``) so ``towerear detect`` can be scored on towers
it was not built alongside. It was written from the contracts, the design
notes, the rules and the real piezo recordings only (README.md beside it).

What this tower is (every figure is drawn per seed, a seed is one kit):

- the original cardboard tower after years in a damp cellar: the plates are
  soft and dead, so a cube *thuds* (low plate modes, heavy damping, long
  contact) instead of clicking; the piezos hear little, some discs have come
  loose from the damp board and hear almost nothing;
- sagging plates that rest partly on a wall ledge: the cell carries only a
  share of a cube, which depends on where the cube lies (a cube beside the
  ledge weighs half), and that share creeps away to the ledge over minutes;
- carrying lifted modules makes the cubes on the sagging plates slide to
  other places, so a level weighs differently after it is put back;
- tired spring contacts between the modules: after a close they chatter
  (the reconnected HX711s reset and settle again) and the reconnected
  decoupling capacitors pull the 5 V rail down; kits whose ATmega has its
  brown-out detector at 4.3 V reboot (0x00, HELLO, seq and clock from zero);
- disconnected piezo inputs (modules lifted) pop and pick up mains hum;
- children's game night: hard throws from high up, throw-backs by the
  handful, cubes that strike the rim of the roof and bounce out onto the
  table (a sound, no weight) and are thrown again, cubes that fall out of
  lifted modules (thrown back at the end of the turn, as the rules say),
  fists, cups and drumming fingers on the table, chattering voices.

Usage::

    .venv/bin/python tools/crosscheck_y/make_recordings_y.py --out DIR [--towers 8]
        [--first-seed 1] [--duration 120] [--scenarios single rapid noisy game] [--workers N]
"""

from __future__ import annotations

import argparse
import json
import math
import struct
import sys
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from scipy import signal

SCENARIOS = ("single", "rapid", "noisy", "game")
TRUTH_FORMAT = "towerear-crosscheck-truth/1"
MODEL = "Y"

PIEZO_RATE = 2000  # sample sets a second (timer driven, exact on the device clock)
CONV_PER_SET = 8  # the ADC converts A0..A7 one after another inside a set
FINE_RATE = PIEZO_RATE * CONV_PER_SET  # 16 kHz: channel k is sampled k/16000 s into a set
LOAD_NOMINAL_HZ = 80.0
G = 9.81
LEVELS = 8
LEVEL_PITCH_M = 0.031  # a 25 cm tower of eight modules
TOWER_TOP_M = 0.25
BAUD_BYTES_S = 100_000  # 1 Mbaud 8N1: ten bits a byte
COLOURS = ("yellow", "blue", "brown", "gray", "black", "white")
HX711_LSB_PER_G_1MVV_100G = 1e-3 / 100.0 * 128 * 2**24  # ratiometric: 21474.8 counts/g
HX711_NOISE_NV_80SPS = 90.0  # datasheet, gain 128, 80 SPS (input referred, rms)

T_HELLO, T_PIEZO, T_LOAD, T_STATUS = 0x01, 0x02, 0x03, 0x04


# ---------------------------------------------------------------------------
# Wire encoding (contracts.md section 1), written from the contract.
# ---------------------------------------------------------------------------


def crc16_ccitt_false_reference(data: bytes) -> int:
    """CRC-16/CCITT-FALSE bit by bit: poly 0x1021, init 0xFFFF, not reflected."""
    crc = 0xFFFF
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
            crc &= 0xFFFF
    return crc


def _crc_table() -> np.ndarray:
    table = np.zeros(256, np.uint16)
    for i in range(256):
        crc = i << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
            crc &= 0xFFFF
        table[i] = crc
    return table


CRC_TABLE = _crc_table()
_CRC_LIST = [int(x) for x in CRC_TABLE]


def crc16_ccitt_false(data: bytes) -> int:
    """CRC-16/CCITT-FALSE, table driven (one byte a step)."""
    crc = 0xFFFF
    for byte in data:
        crc = ((crc << 8) & 0xFFFF) ^ _CRC_LIST[((crc >> 8) ^ byte) & 0xFF]
    return crc


def crc16_rows(rows: np.ndarray) -> np.ndarray:
    """The CRC of every row of a (M, L) uint8 array, all rows at once."""
    crc = np.full(rows.shape[0], 0xFFFF, np.uint32)
    for col in range(rows.shape[1]):
        idx = ((crc >> 8) ^ rows[:, col].astype(np.uint32)) & 0xFF
        crc = ((crc << 8) & 0xFFFF) ^ CRC_TABLE[idx].astype(np.uint32)
    return crc.astype(np.uint16)


def cobs_encode(data: bytes) -> bytes:
    """COBS: every zero-free run becomes (length + 1, run); runs of 254 get code 0xFF."""
    out = bytearray()
    for run in data.split(b"\x00"):
        while len(run) >= 254:
            out.append(0xFF)
            out += run[:254]
            run = run[254:]
        out.append(len(run) + 1)
        out += run
    return bytes(out)


def cobs_decode_own(data: bytes) -> bytes:
    """COBS decoding, for this module's own checks (ValueError on damage)."""
    out = bytearray()
    i = 0
    while i < len(data):
        code = data[i]
        if code == 0 or i + code > len(data):
            raise ValueError("damaged COBS block")
        run = data[i + 1:i + code]
        if 0 in run:
            raise ValueError("damaged COBS block")
        out += run
        i += code
        if code < 0xFF and i < len(data):
            out.append(0)
    return bytes(out)


def cobs_encode_rows(rows: np.ndarray) -> list[np.ndarray]:
    """Each row of a (M, L) uint8 array COBS-encoded and followed by the 0x00 delimiter.

    All rows at once: a virtual zero is put before each row, and every zero is
    replaced by the distance to the next zero (or to the row's end). That is
    COBS whenever no zero-free run reaches 254 bytes, so rows of 254 bytes or
    more go through :func:`cobs_encode`.
    """
    m, n = rows.shape
    if n >= 254:
        return [np.frombuffer(cobs_encode(r.tobytes()) + b"\x00", np.uint8) for r in rows]
    ext = np.zeros((m, n + 2), np.int64)
    ext[:, 1:n + 1] = rows
    is_zero = ext == 0
    is_zero[:, n + 1] = True  # the row's end (the delimiter's place)
    idx = np.where(is_zero, np.arange(n + 2)[None, :], n + 1)
    nxt = np.minimum.accumulate(idx[:, ::-1], axis=1)[:, ::-1]  # next zero at or after i
    after = np.empty_like(nxt)
    after[:, :-1] = nxt[:, 1:]
    after[:, -1] = n + 1
    code = after - np.arange(n + 2)[None, :]
    out = np.where(is_zero, code, ext)
    out[:, n + 1] = 0
    return list(out.astype(np.uint8))


def message(mtype: int, seq: int, body: bytes) -> bytes:
    """type | seq | body | crc, before framing."""
    head = bytes([mtype]) + (seq & 0xFFFF).to_bytes(2, "little") + body
    return head + crc16_ccitt_false(head).to_bytes(2, "little")


def frame(mtype: int, seq: int, body: bytes) -> bytes:
    """A message COBS-framed and delimited."""
    return cobs_encode(message(mtype, seq, body)) + b"\x00"


# ---------------------------------------------------------------------------
# The kit (one seed)
# ---------------------------------------------------------------------------


@dataclass
class Tower:
    """Every build figure of one kit, drawn from its seed."""

    seed: int
    device_id: bytes
    load_rate_hz: float  # true HX711 output rate (one oscillator for all eight)
    cpg: np.ndarray  # counts per gram at each cell
    offset: np.ndarray  # counts of each empty plate
    load_noise: np.ndarray  # counts rms per reading
    cell_rating_g: list[int]
    cells: str
    plate_mass_g: np.ndarray
    plate_f_hz: np.ndarray  # plate on its cell (mass-spring)
    plate_zeta: np.ndarray
    share_near: np.ndarray  # cell's share of a cube at the ledge side (1: no ledge)
    creep_frac: np.ndarray  # share that creeps to the ledge over minutes
    creep_tau_s: np.ndarray
    p_stop: np.ndarray  # chance a falling cube stays on a plate (1 for the base plate)
    restitution: np.ndarray  # damp cardboard: dead
    contact_ms: np.ndarray  # contact time of a cube at 1 m/s
    mode_f: np.ndarray  # (8, 2) plate modes heard by the disc
    mode_zeta: np.ndarray
    mode_amp: np.ndarray
    piezo_gain: np.ndarray  # LSB per N s of impulse (peak)
    deaf: list[int]  # discs come loose from the damp board
    crosstalk: np.ndarray  # (8, 8) vibration reaching plate j from a strike on plate i
    piezo_bias: np.ndarray
    piezo_noise: np.ndarray
    hum_connected: np.ndarray
    hum_open: np.ndarray
    pop_lsb: np.ndarray
    cube_mass_g: float
    cube_mass_sd: float
    p_rim: float
    bod_v: float
    rail_v: float
    bulk_uf: float
    module_uf: float
    dip_eta: float
    chatter_mean: float
    boot_us: int
    fw: tuple[int, int, int] = (1, 3, 0)
    figures: dict[str, Any] = field(default_factory=dict)

    def share(self, level: int, u: float) -> float:
        """The cell's share of a cube lying at u (-1: the ledge side, +1: the far side)."""
        return float(1.0 - (1.0 - self.share_near[level]) * (1.0 - u) / 2.0)


def make_tower(seed: int) -> Tower:
    """Build kit ``seed``: every figure is drawn from the seed alone."""
    rng = np.random.default_rng([seed, 0x59, 1])
    device_id = bytes(rng.integers(0, 256, 8, dtype=np.uint8))
    # One HX711 oscillator for all eight (shared clock so they can be read in
    # parallel); the internal oscillator is good to a few percent.
    load_rate = LOAD_NOMINAL_HZ * (1.0 + rng.uniform(-0.02, 0.02))
    # 100 g bar cells, rated output 1.0 +- 0.15 mV/V (one batch: +-3 % cell to cell).
    batch = rng.uniform(0.85, 1.15)
    s_mvv = batch * (1.0 + rng.uniform(-0.03, 0.03, LEVELS))
    rating = [100] * LEVELS
    mixed = rng.random() < 0.35
    if mixed:  # a broken cell was replaced by whatever the shop had: 200 g, 1 mV/V
        for lv in rng.choice(np.arange(LEVELS), int(rng.integers(1, 3)), replace=False):
            rating[int(lv)] = 200
            s_mvv[int(lv)] = rng.uniform(0.9, 1.1)
    cpg = HX711_LSB_PER_G_1MVV_100G * s_mvv * 100.0 / np.array(rating, float)
    avdd = rng.uniform(4.2, 4.4, LEVELS)  # HX711 board regulators (excitation = AVDD)
    lsb_nv = 0.5 * avdd / 128 / 2**23 * 1e9
    noise_nv = HX711_NOISE_NV_80SPS * rng.uniform(1.0, 1.5, LEVELS)  # plus cell and wiring
    load_noise = noise_nv / lsb_nv
    plate_mass = rng.uniform(6.0, 14.0, LEVELS)  # greyboard plates, 10 x 10 cm
    zero_g = rng.uniform(-10.0, 10.0, LEVELS)  # zero balance +-0.1 mV/V of a 100 g cell
    offset = np.round(cpg * (plate_mass + zero_g) + rng.uniform(-3000, 3000, LEVELS))
    plate_f = rng.uniform(45.0, 95.0, LEVELS)  # soft plate + 100 g cell (k ~ 3 kN/m)
    plate_zeta = rng.uniform(0.15, 0.35, LEVELS)
    # Sagging plates resting partly on a wall ledge (two to four of them).
    share_near = np.ones(LEVELS)
    creep_frac = np.zeros(LEVELS)
    creep_tau = np.full(LEVELS, 90.0)
    n_ledge = int(rng.integers(2, 5))
    ledge = sorted(int(x) for x in rng.choice(np.arange(LEVELS), n_ledge, replace=False))
    for lv in ledge:
        share_near[lv] = rng.uniform(0.40, 0.72)
        creep_frac[lv] = rng.uniform(0.04, 0.15)
        creep_tau[lv] = rng.uniform(40.0, 150.0)
    # Holes smaller upwards: upper plates catch a cube less often than lower ones.
    p_stop = np.clip(np.array([1.0, 0.50, 0.36, 0.30, 0.26, 0.24, 0.22, 0.22])
                     + np.r_[0.0, rng.uniform(-0.05, 0.05, LEVELS - 1)], 0.1, 1.0)
    restitution = rng.uniform(0.15, 0.32, LEVELS)
    contact_ms = rng.uniform(0.8, 1.6, LEVELS)
    mode_f = np.stack([rng.uniform(140, 320, LEVELS), rng.uniform(520, 1100, LEVELS)], axis=1)
    mode_zeta = np.stack([rng.uniform(0.08, 0.18, LEVELS), rng.uniform(0.15, 0.30, LEVELS)],
                         axis=1)
    mode_zeta[ledge, 0] += 0.04  # the ledge contact damps the plate further
    mode_amp = np.stack([np.ones(LEVELS), rng.uniform(0.15, 0.4, LEVELS)], axis=1)
    gain = 5.0e4 * rng.uniform(0.7, 1.3, LEVELS)
    deaf = sorted(int(x) for x in rng.choice(np.arange(LEVELS), int(rng.integers(1, 3)),
                                             replace=False))
    for lv in deaf:
        gain[lv] *= rng.uniform(0.12, 0.30)
    xt = np.zeros((LEVELS, LEVELS))
    for i in range(LEVELS):
        for j in range(LEVELS):
            d = abs(i - j)
            xt[i, j] = 1.0 if d == 0 else (rng.uniform(0.04, 0.09) if d == 1 else
                                           rng.uniform(0.01, 0.025) if d == 2 else 0.004)
    bod_high = rng.random() < 0.35  # BODLEVEL fuse at 4.3 V (else 2.7 V)
    figures = {
        "ledge_levels": ledge, "deaf_discs": deaf, "bod_fuse_v": 4.3 if bod_high else 2.7,
    }
    return Tower(
        seed=seed, device_id=device_id, load_rate_hz=float(load_rate), cpg=cpg, offset=offset,
        load_noise=load_noise, cell_rating_g=rating, cells="mixed" if mixed else "matched",
        plate_mass_g=plate_mass, plate_f_hz=plate_f, plate_zeta=plate_zeta,
        share_near=share_near, creep_frac=creep_frac, creep_tau_s=creep_tau, p_stop=p_stop,
        restitution=restitution, contact_ms=contact_ms, mode_f=mode_f, mode_zeta=mode_zeta,
        mode_amp=mode_amp, piezo_gain=gain, deaf=deaf, crosstalk=xt,
        piezo_bias=512.0 + rng.normal(0.0, 2.0, LEVELS),
        piezo_noise=rng.uniform(0.45, 0.8, LEVELS),
        hum_connected=rng.uniform(0.05, 0.3, LEVELS),
        hum_open=rng.uniform(3.0, 12.0, LEVELS), pop_lsb=rng.uniform(10.0, 40.0, LEVELS),
        cube_mass_g=float(rng.uniform(0.32, 0.75)), cube_mass_sd=float(rng.uniform(0.02, 0.05)),
        p_rim=float(rng.uniform(0.15, 0.3)), bod_v=4.3 if bod_high else 2.7,
        rail_v=float(rng.uniform(4.55, 4.75)), bulk_uf=float(rng.uniform(47.0, 150.0)),
        module_uf=10.1, dip_eta=float(rng.uniform(0.15, 0.35)),
        chatter_mean=float(rng.uniform(0.5, 2.5)),
        boot_us=4 * int(rng.integers(12_000, 30_000)),
        figures=figures,
    )


def tower_figures(tw: Tower) -> dict[str, Any]:
    """The build figures written into the truth's ``tower`` object."""
    def r(a: np.ndarray, n: int = 4) -> list[float]:
        return [round(float(x), n) for x in a]

    return {
        **tw.figures,
        "device_id": tw.device_id.hex(),
        "load_rate_hz": round(tw.load_rate_hz, 4),
        "counts_per_g": r(tw.cpg, 2), "offset_counts": [int(x) for x in tw.offset],
        "load_noise_counts_rms": r(tw.load_noise, 2), "cell_rating_g": tw.cell_rating_g,
        "plate_mass_g": r(tw.plate_mass_g, 2), "plate_on_cell_hz": r(tw.plate_f_hz, 1),
        "share_at_ledge": r(tw.share_near, 3), "ledge_creep_frac": r(tw.creep_frac, 3),
        "ledge_creep_tau_s": r(tw.creep_tau_s, 1), "p_stop": r(tw.p_stop, 3),
        "restitution": r(tw.restitution, 3), "contact_ms_at_1mps": r(tw.contact_ms, 2),
        "plate_modes_hz": [r(m, 1) for m in tw.mode_f],
        "plate_modes_zeta": [r(m, 3) for m in tw.mode_zeta],
        "piezo_lsb_per_mNs": r(tw.piezo_gain / 1000.0, 2),
        "piezo_noise_lsb": r(tw.piezo_noise, 2), "hum_open_lsb": r(tw.hum_open, 1),
        "cube_mass_g": round(tw.cube_mass_g, 4), "cube_mass_sd": round(tw.cube_mass_sd, 4),
        "p_rim": round(tw.p_rim, 3), "rail_v": round(tw.rail_v, 3),
        "bulk_uf": round(tw.bulk_uf, 1), "module_uf": tw.module_uf,
        "dip_eta": round(tw.dip_eta, 3), "contact_chatter_mean": round(tw.chatter_mean, 2),
        "boot_us": tw.boot_us,
    }


# ---------------------------------------------------------------------------
# The world: cubes, impacts, hands, table, contacts
# ---------------------------------------------------------------------------


@dataclass
class Impact:
    """A strike: ``target`` a plate (0-7), "rim" (the roof) or "table"."""

    t: float
    target: int | str
    impulse: float  # N s
    share: float = 1.0  # of the force that reaches the plate's cell
    contact_s: float = 0.0012


@dataclass
class Stint:
    """A cube lying on a plate from ``t_on`` to ``t_off``."""

    floor: int
    mass_g: float
    share: float
    creep: float
    tau: float
    t_on: float
    t_off: float = math.inf

    def load_g(self, t: float) -> float:
        """What the cell carries of this cube at ``t``."""
        dt = max(0.0, t - self.t_on)
        return self.mass_g * self.share * (1.0 - self.creep * (1.0 - math.exp(-dt / self.tau)))


@dataclass
class Cube:
    """One wooden cube."""

    cid: int
    colour: str
    mass_g: float
    stint: Stint | None = None
    t_rest: float = math.inf


def fall_time(d: float, v0: float) -> float:
    """Time to fall ``d`` metres starting at ``v0`` m/s downwards."""
    return (-v0 + math.sqrt(v0 * v0 + 2 * G * d)) / G


class World:
    """Everything that happens in one recording, in device-clock seconds."""

    def __init__(self, tw: Tower, rng: np.random.Generator, duration: float, kids: bool) -> None:
        self.tw, self.rng, self.duration, self.kids = tw, rng, duration, kids
        self.impacts: list[Impact] = []
        self.stints: list[Stint] = []
        self.cubes: list[Cube] = []
        self.landings: list[dict[str, Any]] = []
        self.knockdowns: list[dict[str, Any]] = []
        self.removals: list[dict[str, Any]] = []
        self.lifts: list[dict[str, Any]] = []
        self.closes: list[dict[str, Any]] = []
        self.knocks: list[dict[str, Any]] = []
        self.bounce_outs: list[dict[str, Any]] = []
        self.fall_outs: list[dict[str, Any]] = []
        self.shifts: list[dict[str, Any]] = []
        self.touches: list[tuple[float, float, int, float]] = []  # (t0, t1, floor, grams)
        self.voices: list[tuple[float, float, float]] = []  # (t0, t1, lsb)
        self.jolts: list[tuple[float, float, float]] = []  # (t, m/s^2, Hz) of the whole tower
        self.open: list[tuple[float, float, int]] = []  # (t0, t1, level): contacts open
        self.reboots: list[dict[str, Any]] = []

    # -- cubes ---------------------------------------------------------------

    def new_cube(self, colour: str) -> Cube:
        m = self.tw.cube_mass_g * (1.0 + self.tw.cube_mass_sd * float(self.rng.standard_normal()))
        cube = Cube(len(self.cubes), colour, float(np.clip(m, 0.25, 0.85)))
        self.cubes.append(cube)
        return cube

    def resting(self, floor: int, t: float) -> list[Cube]:
        """The cubes lying on ``floor`` at ``t``."""
        return [c for c in self.cubes if c.stint is not None and c.stint.floor == floor
                and c.t_rest <= t and c.stint.t_off > t]

    def _put(self, cube: Cube, floor: int, u: float, t_on: float, t_rest: float) -> Stint:
        tw = self.tw
        st = Stint(floor, cube.mass_g, tw.share(floor, u), float(tw.creep_frac[floor]),
                   float(tw.creep_tau_s[floor]), t_on)
        self.stints.append(st)
        cube.stint, cube.t_rest = st, t_rest
        return st

    def expected_g(self, floor: int, t: float) -> float:
        """What the cell of ``floor`` carries of the cubes at ``t`` (the model, no noise)."""
        return sum(st.load_g(t) for st in self.stints
                   if st.floor == floor and st.t_on <= t < st.t_off)

    def _take(self, cube: Cube, t: float) -> float:
        """End the cube's stint at ``t``; returns what its cell carried of it."""
        assert cube.stint is not None
        load = cube.stint.load_g(t)
        cube.stint.t_off = t
        cube.stint = None
        cube.t_rest = math.inf
        return load

    # -- a throw -----------------------------------------------------------------

    def throw(self, t_release: float, cube: Cube, kind: str) -> dict[str, Any] | None:
        """Throw ``cube`` into the roof; its landing, or None when it bounced out."""
        rng = self.rng
        h = rng.uniform(0.12, 0.45) if self.kids else rng.uniform(0.05, 0.15)
        v0 = rng.uniform(0.3, 1.8) if self.kids and rng.random() < 0.4 else 0.0
        t_top = t_release + fall_time(h, v0)
        v = math.sqrt(v0 * v0 + 2 * G * h)
        m = cube.mass_g * 1e-3
        first = None
        if rng.random() < self.tw.p_rim:
            first = t_top
            self.impacts.append(Impact(t_top, "rim", m * v * 1.4 * rng.uniform(0.3, 0.7),
                                       contact_s=0.0008))
            if rng.random() < float(np.clip((v - 2.2) / 2.5, 0.0, 0.5)):
                # Out over the roof's edge and onto the table, two or three bounces.
                t_tab = t_top + rng.uniform(0.18, 0.45)
                vt = math.sqrt(2 * G * (TOWER_TOP_M + 0.05))
                tt = t_tab
                for _ in range(int(rng.integers(2, 4))):
                    self.impacts.append(Impact(tt, "table", m * vt * 1.5, contact_s=0.002))
                    vt *= 0.45
                    tt += 2 * vt / G
                self.bounce_outs.append({"t_release": r6(t_release), "t_rim": r6(t_top),
                                         "t_table": r6(t_tab), "colour": cube.colour,
                                         "kind": kind})
                return None
            v *= rng.uniform(0.3, 0.6)
        t_enter = t_top + fall_time(LEVEL_PITCH_M, v)
        v = math.sqrt(v * v + 2 * G * LEVEL_PITCH_M)
        landing = self._fall(cube, t_enter, v, LEVELS - 1, first, allow_knock=True)
        landing.update({"t_release": r6(t_release), "kind": kind, "colour": cube.colour,
                        "drop_height_m": round(h, 3), "thrown_mps": round(v0, 3)})
        return landing

    def _fall(self, cube: Cube, t: float, v: float, level: int, first: float | None,
              *, allow_knock: bool, knocked_from: int | None = None) -> dict[str, Any]:
        tw, rng = self.tw, self.rng
        m = cube.mass_g * 1e-3
        first = t if first is None else first
        while True:
            e = float(tw.restitution[level])
            contact = float(tw.contact_ms[level]) * 1e-3 * max(v, 0.2) ** -0.2
            stop = level == 0 or rng.random() < tw.p_stop[level]
            if not stop:
                share = tw.share(level, rng.uniform(-0.3, 0.3))
                self.impacts.append(Impact(t, level, m * v * (1 + e) * rng.uniform(0.25, 0.6),
                                           share, contact))
                v_exit = rng.uniform(0.1, 0.45)
                t += rng.uniform(0.005, 0.06) + fall_time(LEVEL_PITCH_M, v_exit)
                v = math.sqrt(v_exit**2 + 2 * G * LEVEL_PITCH_M)
                level -= 1
                continue
            u = rng.uniform(-1.0, 1.0)
            share = tw.share(level, u)
            t_floor = t
            knock_victim = None
            if allow_knock and level > 0:
                lying = self.resting(level, t)
                if lying and rng.random() < min(0.2, 0.06 * len(lying)):
                    knock_victim = lying[int(rng.integers(len(lying)))]
            tc, vi = t, v
            while True:
                self.impacts.append(Impact(tc, level, m * vi * (1 + e), share, contact))
                vi *= e
                if vi < 0.12:
                    break
                tc += 2 * vi / G
            slide = rng.uniform(0.04, 0.22)
            for _ in range(int(rng.integers(0, 3))):  # tips over an edge or two
                self.impacts.append(Impact(tc + rng.uniform(0.2, 1.0) * slide, level,
                                           m * rng.uniform(0.08, 0.25) * (1 + e), share,
                                           contact * 1.5))
            t_rest = tc + slide
            st = self._put(cube, level, u, tc, t_rest)
            landing: dict[str, Any] = {
                "t": r6(t_rest), "t_first_impact": r6(first), "t_on_floor": r6(t_floor),
                "floor": level, "cubes": 1, "knocked": knocked_from is not None,
                "caused_knockdown": False, "mass_g": round(cube.mass_g, 4),
                "share": round(st.share, 4), "load_g": round(st.mass_g * st.share, 4),
                "impact_mps": round(v, 3),
            }
            if knocked_from is not None:
                landing["from_floor"] = knocked_from
            self.landings.append(landing)
            if knock_victim is not None:
                t_k = t + rng.uniform(0.01, 0.06)
                self._take(knock_victim, t_k)
                v_k = math.sqrt(2 * G * LEVEL_PITCH_M) * rng.uniform(0.8, 1.1)
                t_next = t_k + fall_time(LEVEL_PITCH_M, 0.1)
                down = self._fall(knock_victim, t_next, v_k, level - 1, None,
                                  allow_knock=False, knocked_from=level)
                down["colour"] = knock_victim.colour
                landing["caused_knockdown"] = True
                self.knockdowns.append({"t": r6(t_k), "from_floor": level,
                                        "to_floor": down["floor"], "t_rest": down["t"],
                                        "colour": knock_victim.colour})
            return landing

    def throw_in(self, t: float, cube: Cube, kind: str, last: float) -> float:
        """Throw until the cube is in (a child picks a bounced-out cube up and throws it
        again); returns when the thrower is done."""
        while t <= last:
            landing = self.throw(t, cube, kind)
            if landing is not None:
                return t
            t = self.bounce_outs[-1]["t_table"] + self.rng.uniform(1.5, 3.5)
            kind = kind if kind.endswith("again") else kind + "_again"
        return t

    # -- hands, table, contacts -----------------------------------------------

    def knock(self, t: float, kind: str) -> float:
        """A disturbance at the table; returns its end."""
        rng = self.rng
        if kind == "drum":
            n = int(rng.integers(4, 9))
            times = t + np.cumsum(np.r_[0.0, rng.uniform(0.08, 0.2, n - 1)])
            for tk in times:
                self.jolts.append((float(tk), rng.uniform(0.3, 0.9), rng.uniform(25, 60)))
            end = float(times[-1])
        elif kind == "chair":
            self.jolts.append((t, rng.uniform(0.8, 2.0), rng.uniform(4.0, 9.0)))
            end = t + 0.6
        else:  # fist or cup put down
            a = rng.uniform(1.5, 5.0) if kind == "fist" else rng.uniform(0.6, 1.8)
            self.jolts.append((t, a, rng.uniform(20, 60)))
            end = t + 0.3
        self.knocks.append({"t": r6(t), "t_end": r6(end), "kind": kind})
        return end

    def voice(self, t0: float, t1: float, lsb: float) -> None:
        self.voices.append((t0, t1, lsb))

    def lift(self, t: float, k: int) -> list[Cube]:
        """Lift modules k..7 (exposes level k); returns cubes that fell out onto the table."""
        rng = self.rng
        self.lifts.append({"t": r6(t), "exposed": k})
        self.jolts.append((t, rng.uniform(0.3, 1.0), rng.uniform(8, 20)))
        self.voices.append((t, t + 0.4, rng.uniform(1.0, 3.0)))  # hands rub the walls
        fallen: list[Cube] = []
        if k < LEVELS - 1 and self.kids and rng.random() < 0.15:
            above = self.resting(k + 1, t)
            if above:
                cube = above[int(rng.integers(len(above)))]
                t_f = t + rng.uniform(0.2, 0.8)
                load = self._take(cube, t_f)
                self.impacts.append(Impact(t_f + 0.12, "table", cube.mass_g * 1e-3 * 1.5 * 1.5,
                                           contact_s=0.002))
                self.fall_outs.append({"t": r6(t_f), "from_floor": k + 1, "to": "table",
                                       "load_g": round(load, 4), "colour": cube.colour})
                fallen.append(cube)
        return fallen

    def close(self, t: float, k: int, lifted_at: float) -> None:
        """Put modules k..7 back: the cubes on sagging plates have moved, contacts chatter,
        the reconnected capacitors pull the rail down (maybe a brown-out)."""
        tw, rng = self.tw, self.rng
        # Carried and tilted, cubes on the lifted sagging plates slide to other places.
        for lv in range(k + 1, LEVELS):
            if tw.share_near[lv] >= 1.0:
                continue
            for cube in self.resting(lv, lifted_at):
                if rng.random() < 0.35 and cube.stint is not None:
                    old = cube.stint.load_g(t)
                    u = float(np.clip(rng.uniform(-1, 1), -1, 1))
                    self._take(cube, t)
                    st = self._put(cube, lv, u, t, t)
                    st.creep = 0.0  # the plate shape is already crept under the others
                    self.shifts.append({"t": r6(t), "floor": lv,
                                        "delta_g": round(st.load_g(t) - old, 4)})
        chatter: list[list[float]] = []
        tc = t
        for _ in range(int(rng.poisson(tw.chatter_mean))):
            tc += rng.uniform(0.03, 0.15)
            dur = rng.uniform(0.005, 0.04)
            chatter.append([r6(tc), r6(tc + dur)])
            tc += dur
        self.open.append((self._open_since(k), t, k))
        for a, b in chatter:
            self.open.append((a, b, k))
        # Hot-plugged module capacitors: a dip on the 5 V rail (charge sharing,
        # slowed by the contact resistance so the USB source makes up part).
        n_cells = LEVELS - 1 - k
        c_mod = n_cells * tw.module_uf
        dip = tw.rail_v * c_mod / (tw.bulk_uf + c_mod) * tw.dip_eta * rng.uniform(0.7, 1.1)
        brownout = tw.rail_v - dip < tw.bod_v
        self.closes.append({"t": r6(t), "exposed": k, "chatter": chatter,
                            "rail_dip_v": round(dip, 3), "brownout": bool(brownout)})
        self.jolts.append((t, rng.uniform(0.8, 2.5), rng.uniform(10, 30)))
        self.impacts.append(Impact(t, k, rng.uniform(6e-4, 2e-3), 0.0, 0.004))
        if brownout:
            self.reboots.append({"t": t})

    def _open_since(self, k: int) -> float:
        return next(x["t"] for x in reversed(self.lifts) if x["exposed"] == k)

    def remove(self, cubes: list[Cube], floor: int, t0: float, t1: float) -> None:
        """Fingers on plate ``floor`` from t0; the cubes leave it at t1."""
        rng = self.rng
        grams = rng.uniform(4.0, 25.0)
        self.touches.append((t0, t1, floor, grams))
        for _ in range(int(rng.integers(1, 4))):  # cubes clink against each other
            self.impacts.append(Impact(rng.uniform(t0, t1), floor, rng.uniform(5e-5, 2e-4),
                                       0.0, 0.001))
        load = sum(self._take(c, t1) for c in cubes)
        self.removals.append({"t": r6(t1), "t_touch": r6(t0), "floor": floor,
                              "cubes": len(cubes), "mass_g": round(sum(c.mass_g for c in cubes),
                                                                   4),
                              "load_g": round(load, 4),
                              "colours": sorted(c.colour for c in cubes)})


def r6(x: float) -> float:
    """Times and figures in the truth, rounded (the bytes are exact anyway)."""
    return round(float(x), 6)


# ---------------------------------------------------------------------------
# Scenarios
# ---------------------------------------------------------------------------


def end_free_s(duration: float) -> float:
    """No throw within the last 8 s (less in short test recordings)."""
    return min(8.0, max(2.0, 0.35 * (duration - 4.0)))


def plan_single(w: World, quiet: float, last: float, spacing: tuple[float, float]) -> None:
    t = quiet + w.rng.uniform(0.5, 1.5)
    colours = list(COLOURS)
    while t <= last:
        done = w.throw_in(t, w.new_cube(colours[int(w.rng.integers(6))]), "single", last)
        t = max(done, t) + w.rng.uniform(*spacing)


def plan_rapid(w: World, quiet: float, last: float) -> None:
    rng = w.rng
    t = quiet + rng.uniform(0.5, 1.5)
    while t <= last:
        colour = COLOURS[int(rng.integers(6))]
        for _ in range(int(rng.integers(3, 7))):
            if t > last:
                break
            landing = w.throw(t, w.new_cube(colour), "rapid")
            if landing is None:  # bounced out: picked up and thrown with the next ones
                t = w.bounce_outs[-1]["t_table"] + rng.uniform(0.8, 1.5)
                continue
            t += rng.uniform(0.3, 0.8)
        t += rng.uniform(3.0, 6.0)


def plan_noisy(w: World, quiet: float, last: float, duration: float) -> None:
    rng = w.rng
    plan_single(w, quiet, last, (3.5, 6.5))
    t = quiet + rng.uniform(1.0, 4.0)
    while t < duration - 1.5:
        kind = str(rng.choice(["fist", "cup", "drum", "chair"], p=[0.35, 0.3, 0.2, 0.15]))
        end = w.knock(t, kind)
        t = end + rng.uniform(5.0, 11.0)
    kids_talk(w, quiet, duration, busy=0.45)


def kids_talk(w: World, quiet: float, duration: float, busy: float) -> None:
    """Voices around the table: bursts of talk, now and then a shout."""
    rng = w.rng
    t = quiet + rng.uniform(0.0, 2.0)
    while t < duration - 0.5:
        d = rng.uniform(0.4, 2.5)
        w.voice(t, min(t + d, duration), rng.uniform(0.3, 1.2) * (4.0 if rng.random() < 0.1
                                                                   else 1.0))
        t += d / busy * rng.uniform(0.6, 1.4)


def plan_game(w: World, quiet: float, last: float, duration: float) -> None:
    """Mord im Arosa by the rules, as children play it."""
    rng = w.rng
    n = int(rng.integers(3, 6))
    players = [str(c) for c in rng.permutation(np.array(COLOURS))[:n]]
    kids_talk(w, quiet, duration, busy=0.3)
    t = quiet + rng.uniform(0.6, 1.5)
    prologue = [("red", "victim")] * 2 + [(p, "prologue") for p in players for _ in range(2)]
    for colour, kind in prologue:
        if t > last:
            return
        t = w.throw_in(t, w.new_cube(colour), kind, last) + rng.uniform(1.2, 3.0)
    act, found, turn = 1, 0, 0
    while True:
        inv = players[turn % n]
        t_lift = t + rng.uniform(1.0, 2.5)
        red_floors = sorted({c.stint.floor for c in w.cubes if c.colour == "red"
                             and c.stint is not None and c.t_rest <= t_lift})
        action = "inspect" if act == 1 else ("suspect" if rng.random() < 0.7 else "cover")
        if act == 1 and red_floors and rng.random() < 0.45:
            k = int(rng.choice(red_floors))
        elif act == 2 and rng.random() < 0.5:
            k = int(np.argmax([len(w.resting(f, t_lift)) for f in range(LEVELS)]))
        else:
            k = int(rng.integers(0, LEVELS))
        on_floor = w.resting(k, t_lift)
        clues = [c for c in on_floor if c.colour != "red"]
        n_groups = 1 if rng.random() < 0.5 else max(1, min(len(on_floor), int(rng.integers(1,
                                                                                          4))))
        t_close_est = t_lift + 2.5 + 1.6 * n_groups * bool(on_floor) + 1.4
        if t_close_est + 2.0 > duration - 2.0 or (clues and t_close_est + 1.0 > last):
            return
        fallen = w.lift(t_lift, k)
        tc = t_lift + rng.uniform(1.0, 2.5)  # look, say what is there
        if on_floor:
            order = list(rng.permutation(len(on_floor)))
            groups = np.array_split(np.array(order), n_groups)
            for g in groups:
                t0 = tc + rng.uniform(0.2, 0.6)
                t1 = t0 + rng.uniform(0.4, 1.0)
                w.remove([on_floor[int(i)] for i in g], k, t0, t1)
                tc = t1
        t_close = tc + rng.uniform(0.6, 1.4)
        w.close(t_close, k, t_lift)
        reds = [c for c in on_floor if c.colour == "red"]
        penalties = 0
        if act == 1:
            found += len(reds)
            penalties = 0 if reds else 1
        elif action == "suspect":
            others = [p for p in players if p != inv]
            suspects = [str(s) for s in rng.choice(np.array(others), int(rng.integers(1, 3)),
                                                   replace=False)]
            if k == 0 and not any(c.colour == inv for c in on_floor):
                penalties = len(suspects)  # the ground-floor case
            else:
                penalties = sum(1 for s in suspects if not any(c.colour == s for c in clues))
        else:
            penalties = 0 if any(c.colour == inv for c in clues) else 1
        back = clues + fallen + [c for c in reds if act == 2]
        t = t_close + rng.uniform(0.8, 2.0)
        i = 0
        order = list(rng.permutation(len(back)))
        while i < len(order):
            if t > last:
                return
            cube = back[int(order[i])]
            if i + 1 < len(order) and rng.random() < 0.2:  # a handful: two at once
                w.throw_in(t + rng.uniform(0.0, 0.06), back[int(order[i + 1])], "throw_back",
                           last)
                i += 1
            t = w.throw_in(t, cube, "throw_back", last) + rng.uniform(0.4, 1.6)
            i += 1
        for _ in range(penalties):
            t += rng.uniform(0.3, 1.0)
            if t > last:
                return
            t = w.throw_in(t, w.new_cube(inv), "penalty", last) + rng.uniform(0.4, 1.2)
        if act == 1 and found >= 2:
            act = 2
        turn += 1
        t += rng.uniform(0.5, 2.0)


# ---------------------------------------------------------------------------
# Signals
# ---------------------------------------------------------------------------


class PiezoSynth:
    """Plate responses at 16 kHz, added to the 2 kHz channels at their conversion instants."""

    IR_S = 0.25

    def __init__(self, tw: Tower) -> None:
        self.tw = tw
        n = int(self.IR_S * FINE_RATE)
        t = np.arange(n) / FINE_RATE
        self.ir = []
        for ch in range(LEVELS):
            h = np.zeros(n)
            for f, z, a in zip(tw.mode_f[ch], tw.mode_zeta[ch], tw.mode_amp[ch], strict=True):
                wn = 2 * np.pi * f
                h += a * np.exp(-z * wn * t) * np.sin(wn * math.sqrt(1 - z * z) * t)
            self.ir.append(h)
        self.cache: dict[tuple[int, int], np.ndarray] = {}

    def response(self, ch: int, contact_s: float) -> np.ndarray:
        """Unit-peak response of disc ``ch`` to a half-sine force of ``contact_s``."""
        nc = max(4, int(round(contact_s * FINE_RATE)))
        key = (ch, nc)
        if key not in self.cache:
            pulse = np.sin(np.pi * (np.arange(nc) + 0.5) / nc)
            y = np.convolve(pulse / pulse.sum(), self.ir[ch])[: len(self.ir[ch])]
            ref = np.sin(np.pi * (np.arange(19) + 0.5) / 19)  # 1.2 ms: the unit
            peak = np.abs(np.convolve(ref / ref.sum(), self.ir[ch])).max()
            self.cache[key] = y / peak
        return self.cache[key]


def add_fine(pz: np.ndarray, ch: int, t: float, wave: np.ndarray) -> None:
    """Add a 16 kHz waveform starting at ``t`` to channel ``ch`` (sampled k/16000 into a set)."""
    i0 = int(round(t * FINE_RATE))
    j0 = (ch - i0) % CONV_PER_SET
    n0 = (i0 + j0 - ch) // CONV_PER_SET
    part = wave[j0::CONV_PER_SET]
    if n0 < 0:
        part, n0 = part[-n0:], 0
    n1 = min(pz.shape[0], n0 + len(part))
    if n1 > n0:
        pz[n0:n1, ch] += part[: n1 - n0]


def synth_piezo(w: World, n_sets: int, rng: np.random.Generator) -> np.ndarray:
    """The eight piezo channels, ADC codes (n_sets, 8)."""
    tw = w.tw
    syn = PiezoSynth(tw)
    ts = np.arange(n_sets) / PIEZO_RATE
    tch = ts[:, None] + np.arange(LEVELS)[None, :] / FINE_RATE
    pz = rng.normal(0.0, 1.0, (n_sets, LEVELS)) * tw.piezo_noise
    phase = rng.uniform(0, 2 * np.pi, LEVELS)
    pz += tw.hum_connected * np.sin(2 * np.pi * 50.0 * tch + phase)
    for imp in w.impacts:
        if isinstance(imp.target, int):
            gains = tw.crosstalk[imp.target] * tw.piezo_gain
            src = imp.target
        elif imp.target == "rim":  # the roof of module 7: heard through its walls
            gains = np.array([0, 0, 0, 0, 0, 0.01, 0.08, 0.3]) * tw.piezo_gain
            src = LEVELS - 1
        else:  # the table, through the base
            gains = np.array([0.12, 0.05, 0.02, 0.01, 0.01, 0.01, 0.01, 0.01]) * tw.piezo_gain
            src = 0
        for ch in range(LEVELS):
            amp = imp.impulse * gains[ch]
            if amp < 0.05:
                continue
            contact = imp.contact_s * (1.0 if ch == src else 1.5)
            add_fine(pz, ch, imp.t, amp * syn.response(ch, contact))
    # The table shakes the whole tower: the plates' modes plus the table mode.
    for t, acc, f in w.jolts:
        i0 = int(t * PIEZO_RATE)
        n = min(int(0.5 * PIEZO_RATE), n_sets - i0)
        if n <= 0:
            continue
        tt = np.arange(n) / PIEZO_RATE
        table = np.exp(-2 * np.pi * f * 0.06 * tt) * np.sin(2 * np.pi * f * tt)
        for ch in range(LEVELS):
            k = (1.0, 0.7, 0.5, 0.4, 0.3, 0.25, 0.2, 0.2)[ch] * tw.piezo_gain[ch] / 5e4
            pz[i0:i0 + n, ch] += 4.0 * acc * k * table
            add_fine(pz, ch, t, 8.0 * acc * k * syn.response(ch, 0.004))
    # Voices: airborne sound, heard weakly and alike by every disc.
    if w.voices:
        b, a = signal.butter(2, [250 / 1000, 900 / 1000], btype="band")
        for t0, t1, lsb in w.voices:
            i0, i1 = int(t0 * PIEZO_RATE), min(int(t1 * PIEZO_RATE), n_sets)
            if i1 <= i0 + 4:
                continue
            src_noise = signal.lfilter(b, a, rng.normal(0, 1, i1 - i0))
            env = np.sin(np.pi * np.arange(i1 - i0) / (i1 - i0)) ** 0.5
            src_noise *= lsb * env / max(src_noise.std(), 1e-9)
            pz[i0:i1] += src_noise[:, None] * rng.uniform(0.6, 1.2, LEVELS)[None, :]
    # Contacts open (modules lifted, chatter): the inputs float, pop and hum.
    for t0, t1, k in w.open:
        i0, i1 = int(t0 * PIEZO_RATE), min(int(math.ceil(t1 * PIEZO_RATE)), n_sets)
        for ch in range(k + 1, LEVELS):
            tt = tch[i0:i1, ch]
            ph = 2 * np.pi * 50.0 * tt + phase[ch]
            pz[i0:i1, ch] += tw.hum_open[ch] * (np.sin(ph) + 0.3 * np.sin(3 * ph + 1.0))
            pz[i0:i1, ch] += rng.normal(0, 1.5, i1 - i0)
            for tp in (t0, t1):
                j0 = int(tp * PIEZO_RATE)
                j1 = min(j0 + int(0.3 * PIEZO_RATE), n_sets)
                sign = 1.0 if rng.random() < 0.5 else -1.0
                pz[j0:j1, ch] += sign * tw.pop_lsb[ch] * np.exp(
                    -(np.arange(j1 - j0) / PIEZO_RATE) / 0.047)
    # After a brown-out the bias dividers recharge (their rail dipped).
    for rb in w.reboots:
        j0 = int(rb["t_first"] * PIEZO_RATE)
        j1 = min(j0 + int(0.4 * PIEZO_RATE), n_sets)
        decay = np.exp(-(np.arange(j1 - j0) / PIEZO_RATE) / 0.05)
        pz[j0:j1] -= rb["bias_dip_lsb"] * decay[:, None]
    codes = np.clip(np.round(pz + tw.piezo_bias), 0, 1023)
    return codes.astype(np.uint16)


def _boxcar(x: np.ndarray, n: int) -> np.ndarray:
    c = np.cumsum(x, axis=0)
    y = c.copy()
    y[n:] -= c[:-n]
    y[:n] += x[0] * (n - np.arange(1, n + 1))[:, None]  # as if the past were like the start
    return y / n


def synth_load_grams(w: World, n: int) -> np.ndarray:
    """What each cell carries above its empty plate, grams, on the 2 kHz grid (n, 8),
    after the plate's mass-spring and the HX711's sinc^4 filter."""
    tw = w.tw
    dt = 1.0 / PIEZO_RATE
    t = np.arange(n) * dt
    grams = np.zeros((n, LEVELS))
    for st in w.stints:
        i0 = int(math.ceil(st.t_on / dt))
        i1 = n if st.t_off == math.inf else min(n, int(math.ceil(st.t_off / dt)))
        if i1 <= i0:
            continue
        tt = t[i0:i1] - st.t_on
        grams[i0:i1, st.floor] += st.mass_g * st.share * (
            1.0 - st.creep * (1.0 - np.exp(-tt / st.tau)))
    static = grams.copy()
    for imp in w.impacts:
        if isinstance(imp.target, int) and imp.share > 0:
            i = int(round(imp.t / dt))
            if 0 <= i < n:
                grams[i, imp.target] += imp.impulse * imp.share / dt / G * 1000.0
    for t0, t1, floor, g in w.touches:  # a finger on the plate, with tremor
        i0, i1 = int(t0 / dt), min(int(t1 / dt), n)
        if i1 <= i0:
            continue
        x = np.arange(i1 - i0) * dt
        ramp = np.clip(np.minimum(x, x[-1] - x) / 0.12, 0, 1)
        grams[i0:i1, floor] += g * ramp * (1 + 0.15 * np.sin(2 * np.pi * 9.0 * x))
    for tj, acc, f in w.jolts:  # inertia of plate and cubes in the shaken tower
        i0 = int(tj / dt)
        m = min(int(1.0 / dt), n - i0)
        if m <= 0:
            continue
        x = np.arange(m) * dt
        a = acc * np.exp(-2 * np.pi * f * 0.08 * x) * np.sin(2 * np.pi * f * x)
        mass = tw.plate_mass_g[None, :] + static[i0:i0 + m]
        grams[i0:i0 + m] += mass * a[:, None] / G
    out = np.empty_like(grams)
    for ch in range(LEVELS):
        wn = 2 * np.pi * tw.plate_f_hz[ch]
        b, a = signal.bilinear([wn * wn], [1, 2 * tw.plate_zeta[ch] * wn, wn * wn],
                               fs=PIEZO_RATE)
        zi = signal.lfilter_zi(b, a) * grams[0, ch]
        out[:, ch] = signal.lfilter(b, a, grams[:, ch], zi=zi)[0]
    period = max(2, int(round(PIEZO_RATE / tw.load_rate_hz)))
    for _ in range(4):  # HX711: settles in four conversions (datasheet: 50 ms at 80 SPS)
        out = _boxcar(out, period)
    return out


# ---------------------------------------------------------------------------
# Device: messages, timing, brown-outs
# ---------------------------------------------------------------------------


@dataclass
class Outgoing:
    """A message handed to the UART at ``t`` (world seconds)."""

    t: float
    boot: int
    mtype: int
    body: bytes
    stamp: float | None = None  # world time of its t_us (PIEZO, LOAD)


def hello_body(tw: Tower) -> bytes:
    return struct.pack("<BBBBBBHHB", 1, *tw.fw, LEVELS, LEVELS, PIEZO_RATE,
                       int(round(tw.load_rate_hz)), 10) + tw.device_id


def plan_boots(w: World, rng: np.random.Generator) -> list[dict[str, Any]]:
    """The device's boots: the first before world time 0, one after each brown-out."""
    boots: list[dict[str, Any]] = [{"t_boot": -w.tw.boot_us / 1e6, "t_first": 0.0,
                                    "t_down": math.inf}]
    for rb in w.reboots:
        t_down = rb["t"] + float(rng.uniform(0.0, 0.002))
        # BOD reset until the rail is back, 65 ms start-up delay (SUT fuses), and
        # setup() before the first sample: the boot loader starts the sketch at
        # once after a brown-out reset (it waits only after an external reset).
        t_boot = t_down + 0.065 + float(rng.uniform(0.001, 0.008))
        t_us_first = 4 * int(rng.integers(3000, 15000))
        t_first = math.ceil((t_boot + t_us_first / 1e6) * PIEZO_RATE) / PIEZO_RATE
        t_boot = t_first - t_us_first / 1e6
        boots[-1]["t_down"] = t_down
        boots.append({"t_boot": t_boot, "t_first": t_first, "t_down": math.inf})
        rb.update({"t_down": t_down, "t_boot": t_boot, "t_first": t_first,
                   "bias_dip_lsb": float(rng.uniform(5.0, 25.0))})
    return boots


def load_readings(w: World, boot: dict[str, Any], duration: float, grid_t: np.ndarray,
                  grams: np.ndarray, rng: np.random.Generator
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One boot's HX711 readings: stamp times, valid bits and counts (M, 8)."""
    tw = w.tw
    period = 1.0 / tw.load_rate_hz
    # The chips are reset when streaming starts and answer once settled (four
    # conversions), so the first message of a boot is a PIEZO.
    first = boot["t_first"] + 4 * period + float(rng.uniform(0, period))
    t_read = np.arange(first, min(boot["t_down"], duration), period)
    ok = np.ones((len(t_read), LEVELS), bool)
    for t0, t1, k in w.open:  # powered without a break over the last four conversions
        gone = (t_read > t0) & (t_read < t1 + 4 * period)
        ok[gone, k + 1:] = False
    values = np.zeros((len(t_read), LEVELS), np.int64)
    for ch in range(LEVELS):
        g = np.interp(t_read, grid_t, grams[:, ch])
        raw = tw.offset[ch] + tw.cpg[ch] * g + rng.normal(0, tw.load_noise[ch], len(t_read))
        values[:, ch] = np.clip(np.round(raw), -(2**23), 2**23 - 1).astype(np.int64)
    values[~ok] = 0
    valid = (ok * (1 << np.arange(LEVELS))[None, :]).sum(axis=1)
    stamps = t_read + rng.uniform(0.00005, 0.0003, len(t_read))  # the poll loop's latency
    return stamps, valid, values


def device_messages(w: World, boots: list[dict[str, Any]], duration: float,
                    piezo: np.ndarray, grams: np.ndarray, rng: np.random.Generator
                    ) -> list[Outgoing]:
    """Everything the firmware hands to the UART, in the order it does."""
    tw = w.tw
    n_sets = piezo.shape[0]
    grid_t = np.arange(n_sets) / PIEZO_RATE
    out: list[Outgoing] = []
    for bi, b in enumerate(boots):
        t_boot, t_first, t_down = b["t_boot"], b["t_first"], b["t_down"]
        out.append(Outgoing(t_first - 0.001, bi, T_HELLO, hello_body(tw)))
        # PIEZO: the main loop sends when 8 or more sets wait (more after a LOAD read).
        n0 = int(round(t_first * PIEZO_RATE))
        n_end = min(n_sets, int(math.floor(min(t_down, duration) * PIEZO_RATE)))
        sizes = rng.choice(np.array([8, 8, 8, 8, 9, 10]), max(1, (n_end - n0) // 8 + 2))
        n, i = n0, 0
        while n < n_end:
            k = min(int(sizes[i]), n_end - n)
            i += 1
            t_us = _t_us(grid_t[n], t_boot)
            body = struct.pack("<IB", t_us, k) + piezo[n:n + k].astype("<u2").tobytes()
            out.append(Outgoing((n + k) / PIEZO_RATE + 0.0002, bi, T_PIEZO, body,
                                stamp=float(grid_t[n])))
            n += k
        stamps, valid, values = load_readings(w, b, duration, grid_t, grams, rng)
        m = len(stamps)
        rows = np.zeros((m, 29), np.uint8)
        t_us_arr = (4 * np.round((stamps - t_boot) * 1e6 / 4).astype(np.int64)) & 0xFFFFFFFF
        rows[:, 0:4] = t_us_arr.astype("<u4").view(np.uint8).reshape(m, 4)
        rows[:, 4] = valid
        rows[:, 5:] = (values & 0xFFFFFF).astype("<u4").view(np.uint8).reshape(m, 8, 4)[
            :, :, :3].reshape(m, 24)
        for j in range(m):
            out.append(Outgoing(float(stamps[j]) + 0.0001, bi, T_LOAD, rows[j].tobytes(),
                                stamp=float(stamps[j])))
        # STATUS once a second of uptime; load_timeouts counts the chips that did not answer.
        missing = np.cumsum(LEVELS - np.array([bin(int(v)).count("1") for v in valid], int))
        t_status = t_boot + 1.0
        while t_status < min(t_down, duration):
            done = int(np.searchsorted(stamps, t_status))
            timeouts = int(missing[done - 1]) if done > 0 else 0
            body = struct.pack("<IHHHBB", int(round((t_status - t_boot) * 1000)), 0, 0,
                               timeouts & 0xFFFF, int(rng.integers(38, 47)), 0)
            out.append(Outgoing(t_status, bi, T_STATUS, body))
            t_status += 1.0
    out.sort(key=lambda x: (x.boot, x.t))
    return out


def build_stream(w: World, duration: float, rng: np.random.Generator
                 ) -> tuple[bytes, list[dict[str, Any]]]:
    """The recording's bytes and its damage spans (reboots)."""
    boots = plan_boots(w, rng)
    n_sets = int(round(duration * PIEZO_RATE))
    piezo = synth_piezo(w, n_sets, rng)
    grams = synth_load_grams(w, n_sets)
    out = device_messages(w, boots, duration, piezo, grams, rng)
    # The UART: frames leave one after another at 100 kB/s (a frame is its message
    # plus two bytes); a brown-out cuts the frame on the wire and loses the queue.
    plan: list[tuple[Outgoing, int, int]] = []  # (message, seq, bytes sent; -1: all)
    seq, busy, bi = 0, -math.inf, -1
    last_stamp = [-math.inf] * len(boots)
    for m in out:
        if m.boot != bi:
            bi, seq, busy = m.boot, 0, m.t
        down = boots[bi]["t_down"]
        if m.t >= down or busy >= down:
            continue
        n_bytes = len(m.body) + 5 + 2
        start = max(m.t, busy)
        end = start + n_bytes / BAUD_BYTES_S
        if end > down:
            if start < down:
                n_sent = int((down - start) * BAUD_BYTES_S)
                plan.append((m, seq, n_sent))
                w.reboots[bi]["cut_bytes"] = n_sent
            busy = math.inf
            continue
        plan.append((m, seq, -1))
        seq = (seq + 1) & 0xFFFF
        busy = end
        if m.stamp is not None:
            last_stamp[bi] = max(last_stamp[bi], m.stamp)
    # Encode: messages of one length together (CRC and COBS row by row).
    encoded: list[bytes] = [b""] * len(plan)
    by_len: dict[int, list[int]] = {}
    for i, (m, _, _) in enumerate(plan):
        by_len.setdefault(len(m.body), []).append(i)
    for length, idx in by_len.items():
        rows = np.zeros((len(idx), length + 5), np.uint8)
        for r, i in enumerate(idx):
            m, sq, _ = plan[i]
            rows[r, :3] = (m.mtype, sq & 0xFF, sq >> 8)
            rows[r, 3:3 + length] = np.frombuffer(m.body, np.uint8)
        crc = crc16_rows(rows[:, :3 + length])
        rows[:, -2] = crc & 0xFF
        rows[:, -1] = crc >> 8
        for r, enc in zip(idx, cobs_encode_rows(rows), strict=True):
            encoded[r] = enc.tobytes()
    parts: list[bytes] = []
    for i, (m, _, n_sent) in enumerate(plan):
        if m.mtype == T_HELLO:
            parts.append(b"\x00")  # setup() opens with a delimiter: the receiver resyncs
        parts.append(encoded[i] if n_sent < 0 else encoded[i][:n_sent])
    damage: list[dict[str, Any]] = []
    for i, rb in enumerate(w.reboots):
        damage.append({
            "t_start": r6(rb["t_down"]), "t_end": r6(rb["t_first"]), "kind": "reboot",
            "gap_s": r6(rb["t_first"] - last_stamp[i]),
            "t_us_after": _t_us(rb["t_first"], rb["t_boot"]),
            "cause": "brown-out when modules were put back",
            "cut_frame": bool(rb.get("cut_bytes", 0) > 0),
            "cut_bytes": int(rb.get("cut_bytes", 0)),
        })
    return b"".join(parts), damage


def _t_us(t: float, t_boot: float) -> int:
    """micros() at world time ``t``: 4 us steps, u32."""
    return (4 * int(round((t - t_boot) * 1e6 / 4))) & 0xFFFFFFFF


# ---------------------------------------------------------------------------
# One recording
# ---------------------------------------------------------------------------


def generate(seed: int, scenario: str, duration: float) -> tuple[bytes, dict[str, Any]]:
    """The bytes and the truth of one recording."""
    _w, raw, truth = simulate(seed, scenario, duration)
    return raw, truth


def simulate(seed: int, scenario: str, duration: float
             ) -> tuple[World, bytes, dict[str, Any]]:
    """The world, the bytes and the truth of one recording."""
    if scenario not in SCENARIOS:
        raise ValueError(f"unknown scenario {scenario!r}")
    tw = make_tower(seed)
    rng = np.random.default_rng([seed, 0x59, 2, SCENARIOS.index(scenario)])
    kids = scenario in ("noisy", "game") or rng.random() < 0.5
    w = World(tw, rng, duration, kids)
    quiet = 4.0 + float(rng.uniform(0.0, 0.6))
    last = duration - end_free_s(duration)
    if scenario == "single":
        plan_single(w, quiet, last, (3.5, 6.5))
    elif scenario == "rapid":
        plan_rapid(w, quiet, last)
    elif scenario == "noisy":
        plan_noisy(w, quiet, last, duration)
    else:
        plan_game(w, quiet, last, duration)
    raw, damage = build_stream(w, duration, np.random.default_rng([seed, 0x59, 3,
                                                                  SCENARIOS.index(scenario)]))
    landings = sorted((x for x in w.landings if x["t"] < duration), key=lambda x: x["t"])
    truth: dict[str, Any] = {
        "format": TRUTH_FORMAT, "model": MODEL, "scenario": scenario, "seed": seed,
        "duration_s": duration, "cells": tw.cells, "quiet_s": r6(quiet), "kids": kids,
        "landings": landings,
        "knockdowns": sorted(w.knockdowns, key=lambda x: x["t"]),
        "removals": w.removals, "lifts": w.lifts,
        "closes": [{k: v for k, v in c.items()} for c in w.closes],
        "knocks": w.knocks, "damage": damage, "bounce_outs": w.bounce_outs,
        "fall_outs": w.fall_outs, "shifts": w.shifts,
        "tower": tower_figures(tw),
    }
    return w, raw, truth


def make_recording(seed: int, scenario: str, duration: float, out: Path) -> tuple[Path, Path]:
    """Write ``{scenario}_t{seed}.bin`` and its ``.truth.json`` into ``out``."""
    raw, truth = generate(seed, scenario, duration)
    out.mkdir(parents=True, exist_ok=True)
    bin_path = out / f"{scenario}_t{seed}.bin"
    truth_path = out / f"{scenario}_t{seed}.truth.json"
    bin_path.write_bytes(raw)
    truth_path.write_text(json.dumps(truth, indent=1, sort_keys=True) + "\n")
    return bin_path, truth_path


def _job(args: tuple[int, str, float, str]) -> str:
    seed, scenario, duration, out = args
    make_recording(seed, scenario, duration, Path(out))
    return f"{scenario}_t{seed}"


def main(argv: list[str] | None = None) -> int:
    """Command line: write every (scenario, tower) recording and truth."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--towers", type=int, default=8)
    p.add_argument("--first-seed", type=int, default=1)
    p.add_argument("--duration", type=float, default=120.0)
    p.add_argument("--scenarios", nargs="+", default=list(SCENARIOS))
    p.add_argument("--workers", type=int, default=2)
    args = p.parse_args(argv)
    unknown = [s for s in args.scenarios if s not in SCENARIOS]
    if unknown:
        print(f"unknown scenario {unknown[0]!r} (known: {', '.join(SCENARIOS)})",
              file=sys.stderr)
        return 2
    if args.duration < 8.0 or args.towers < 1:
        print("need --duration >= 8 and --towers >= 1", file=sys.stderr)
        return 2
    jobs = [(s, sc, float(args.duration), str(args.out))
            for s in range(args.first_seed, args.first_seed + args.towers)
            for sc in args.scenarios]
    args.out.mkdir(parents=True, exist_ok=True)
    if args.workers <= 1:
        for job in jobs:
            _job(job)
    else:
        with ProcessPoolExecutor(args.workers) as pool:
            list(pool.map(_job, jobs))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
