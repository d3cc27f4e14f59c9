#!/usr/bin/env python3
"""Cross-check model Z: contracts.md stretched to its legal edges, written blind.

An independent simulator of the towerear kit. It writes recordings (the exact
device -> host bytes of contracts.md sections 1-2) and their ground truth
(``towerear-crosscheck-truth/1``, as tools/crosscheck/score.py reads it).

What it models (see README.md beside it for the reasons of every figure):

- a sturdy, well-built tower (floating plates on one bar cell each, glued
  modules, rail-to-rail piezo front ends, HX711s on a shared, crystal-exact
  clock) played by a fast adult group: quick series, handfuls, game turns
  with lifts, grabs of several cubes, throw-backs while the last cube still
  rolls, a noisy room;
- firmware that uses everything contracts.md permits: eight firmware/clock
  profiles (piezo 500-5000 sets/s, 8-12 bit codes, HX711 at 10-145 Hz, HELLO
  rates rounded from non-integer true rates), PIEZO batches of 1..14 sets
  chosen by line occupancy, a UART line up to 100 % busy, LOAD messages that
  come before older PIEZO batches, all-invalid LOADs, STATUS at several
  periods and switched off and on, ACKs with every result code, PONGs,
  extension messages (0x10-0x3F) up to the 254-byte limit, TX drops that
  leave seq gaps, piezo ring overruns that leave t_us gaps, STOP/START
  gaps, recordings that start mid-frame on a device up for 71.6 minutes or
  49.7 days (t_us, uptime_ms and seq all wrapping inside the recording) and
  end mid-frame, HELLO only after the first data, and a second HELLO.

Usage::

    .venv/bin/python tools/crosscheck_z/make_recordings_z.py --out /tmp/z \
        [--towers 8] [--first-seed 1] [--duration 120] \
        [--scenarios single rapid noisy game] [--workers N]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import deque
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

SCENARIOS = ("single", "rapid", "noisy", "game")
MODEL = "Z"
G = 9.80665  # m/s^2
U32 = 1 << 32

# --------------------------------------------------------------------------------------
# Wire encoder (contracts.md section 1), written from the contract text.
# --------------------------------------------------------------------------------------

T_HELLO, T_PIEZO, T_LOAD, T_STATUS, T_ACK, T_PONG = 0x01, 0x02, 0x03, 0x04, 0x05, 0x06
T_EXT_LOG = 0x10  # extension (0x10-0x3F reserved for extensions): a firmware log line
T_EXT_DIAG = 0x3F  # extension: a diagnostic memory dump, the largest legal message
C_GET_INFO, C_START, C_STOP, C_PING = 0x81, 0x82, 0x83, 0x84
C_EXT_DIAG = 0xC1  # host extension command (0xC0-0xFF reserved): ask for a dump
C_EXT_UNKNOWN = 0xC7  # an extension command this firmware does not know
MAX_MSG = 254  # bytes before encoding
MAX_SETS = 14


def _crc_table() -> np.ndarray:
    table = np.zeros(256, np.uint16)
    for i in range(256):
        crc = i << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
        table[i] = crc & 0xFFFF
    return table


CRC_TABLE = _crc_table()
_CRC_LIST = [int(x) for x in CRC_TABLE]


def crc16_ccitt_false(data: bytes) -> int:
    """CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, not reflected), table driven."""
    crc = 0xFFFF
    for b in data:
        crc = ((crc << 8) & 0xFFFF) ^ _CRC_LIST[((crc >> 8) ^ b) & 0xFF]
    return crc


def crc16_ccitt_false_reference(data: bytes) -> int:
    """The same CRC bit by bit, straight from its definition (a second implementation)."""
    crc = 0xFFFF
    for b in data:
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) & 0xFFFF if crc & 0x8000 else (crc << 1) & 0xFFFF
    return crc


def cobs_encode(data: bytes) -> bytes:
    """COBS without the trailing delimiter; a final full 254-byte block gets no extra code."""
    out = bytearray([0])
    code_at, code = 0, 1
    n = len(data)
    for i, b in enumerate(data):
        if b == 0:
            out[code_at] = code
            code_at, code = len(out), 1
            out.append(0)
            continue
        out.append(b)
        code += 1
        if code == 0xFF:
            out[code_at] = code
            if i + 1 == n:  # the data ends exactly after a full block: nothing implied
                return bytes(out)
            code_at, code = len(out), 1
            out.append(0)
    out[code_at] = code
    return bytes(out)


def cobs_decode_own(enc: bytes) -> bytes:
    """Decode one COBS frame (without its delimiter); ValueError when it is not one."""
    out = bytearray()
    i, n = 0, len(enc)
    while i < n:
        code = enc[i]
        if code == 0 or i + code > n:
            raise ValueError("bad COBS code")
        out += enc[i + 1:i + code]
        i += code
        if code < 0xFF and i < n:
            out.append(0)
    return bytes(out)


def crc16_rows(rows: np.ndarray) -> np.ndarray:
    """The CRC of every row of a (R, L) uint8 array, as uint16 (R,)."""
    crc = np.full(rows.shape[0], 0xFFFF, np.uint32)
    table = CRC_TABLE.astype(np.uint32)
    for j in range(rows.shape[1]):
        crc = ((crc << 8) & 0xFFFF) ^ table[((crc >> 8) ^ rows[:, j]) & 0xFF]
    return crc.astype(np.uint16)


def cobs_encode_rows(rows: np.ndarray) -> np.ndarray:
    """COBS of every row (length L <= 254) with its 0x00 delimiter: (R, L + 2) uint8."""
    r, n = rows.shape
    if n > MAX_MSG:
        raise ValueError("rows longer than a message")
    out = np.zeros((r, n + 2), np.uint8)
    out[:, 1:n + 1] = rows
    # Code slots: the leading one (0) and every zero byte (j + 1); the virtual end at n + 1.
    slot = np.zeros((r, n + 2), bool)
    slot[:, 0] = True
    slot[:, 1:n + 1] = rows == 0
    slot[:, n + 1] = True
    idx = np.where(slot, np.arange(n + 2), n + 2)
    # Next slot strictly after each position: reverse running minimum, shifted by one.
    nxt = np.minimum.accumulate(idx[:, ::-1], axis=1)[:, ::-1]
    after = np.empty_like(nxt)
    after[:, :-1] = nxt[:, 1:]
    after[:, -1] = n + 2
    codes = after - np.arange(n + 2)
    place = slot.copy()
    place[:, n + 1] = False
    out[place] = codes[place].astype(np.uint8)
    return out


def message(mtype: int, seq: int, body: bytes) -> bytes:
    """type | seq | body | crc, before framing."""
    head = bytes([mtype]) + (seq & 0xFFFF).to_bytes(2, "little") + body
    if len(head) + 2 > MAX_MSG:
        raise ValueError("message longer than 254 bytes")
    return head + crc16_ccitt_false(head).to_bytes(2, "little")


def frame(mtype: int, seq: int, body: bytes) -> bytes:
    """One framed message: COBS(message) + 0x00."""
    return cobs_encode(message(mtype, seq, body)) + b"\x00"


# --------------------------------------------------------------------------------------
# Firmware / clock profiles and the kit (all build figures from the seed alone).
# --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Profile:
    """How one kit's firmware samples, clocks and batches (README: "profiles")."""

    name: str
    piezo_rate: int  # sample sets/s, an exact divisor of the 16 MHz timer
    adc_bits: int  # code width sent: 8 (ADLAR), 10, 11 (4x), 12 (16x oversampling)
    oversample: int  # conversions averaged per sample (AVR121)
    adc_clock_hz: int  # 16 MHz / prescaler
    hx_clock: str  # "internal" (each chip its own RC), "mcu16" (the MCU crystal), "osc20"
    hx_rate_pin: int  # RATE pin: 1 -> f/138240, 0 -> f/1105920
    batching: str  # "idle" (send when the line is free), "fill14", "tick"
    tick_ms: float
    status_ms: int
    ring_sets: int  # piezo ring in the firmware, sample sets
    keepalive_ms: float  # a LOAD (valid 0) at least this often; 0: none


PROFILES = (
    Profile("wire-edge", 5000, 8, 1, 1_000_000, "osc20", 1, "idle", 0.0, 1000, 24, 0.0),
    Profile("slow-deep", 500, 12, 16, 1_000_000, "internal", 0, "idle", 0.0, 250, 32, 20.0),
    Profile("nominal-full", 2000, 10, 1, 250_000, "mcu16", 1, "fill14", 0.0, 1000, 32, 0.0),
    Profile("oversampled", 1000, 11, 4, 500_000, "mcu16", 0, "tick", 7.0, 500, 32, 0.0),
    Profile("fast-full", 5000, 8, 1, 1_000_000, "mcu16", 0, "fill14", 0.0, 2000, 24, 0.0),
    Profile("nominal-idle", 2000, 10, 1, 250_000, "osc20", 1, "idle", 0.0, 1000, 32, 0.0),
    Profile("slow-full", 500, 12, 16, 1_000_000, "osc20", 1, "tick", 28.0, 1000, 32, 0.0),
    Profile("mid-idle", 1000, 11, 4, 500_000, "internal", 0, "idle", 0.0, 1000, 32, 0.0),
)

HX_CLOCK_HZ = {"internal": 11_059_200.0, "mcu16": 16_000_000.0, "osc20": 20_000_000.0}
ADC_NOISE_LSB10 = {250_000: 0.55, 500_000: 0.85, 1_000_000: 1.5}  # ENOB falls with clock
COLOURS = ("yellow", "blue", "brown", "gray", "black", "white")
LEVEL_H_M = 0.031  # 25 cm tower / 8 modules


def hx_period_us(clock_hz: float, rate_pin: int) -> float:
    """HX711 conversion period: f_clk / 138240 (RATE=1) or / 1105920 (RATE=0)."""
    return (138_240.0 if rate_pin else 1_105_920.0) / clock_hz * 1e6


@dataclass
class Kit:
    """One tower kit: mechanics, sensors, front ends, firmware profile."""

    seed: int
    profile: Profile
    cube_mass_g: float  # mean cube mass
    colour_factor: dict[str, float]
    catch: np.ndarray  # (8,) P(cube stops on plate L | it reaches it)
    rim_p: np.ndarray  # (8,) P(a passing cube clips the hole edge)
    restitution: np.ndarray  # (8,)
    mode_f: np.ndarray  # (8, 3) flexural plate modes, Hz
    mode_q: np.ndarray  # (8, 3)
    mode_w: np.ndarray  # (8, 3) relative strength at the disc
    rigid_f: np.ndarray  # (8,) plate-on-cell mode, Hz
    rigid_zeta: np.ndarray  # (8,)
    piezo_gain: np.ndarray  # (8,) LSB10 per N s of impulse
    piezo_bias: np.ndarray  # (8,) LSB10
    coupling: np.ndarray  # (8, 8) crosstalk amplitude, impact level -> channel
    analog_noise: float  # LSB10 rms
    hum_open: np.ndarray  # (8,) LSB10 of 50 Hz on a disconnected input
    cpg: np.ndarray  # (8,) counts per gram
    offset: np.ndarray  # (8,) counts of the empty plate
    load_noise: np.ndarray  # (8,) counts rms
    plate_g: np.ndarray  # (8,) plate mass
    hx_period_us: np.ndarray  # (8,) true conversion periods
    device_id: bytes
    fw: tuple[int, int, int]

    @property
    def load_rate_true(self) -> float:
        return float(1e6 / np.mean(self.hx_period_us))

    @property
    def load_rate_hello(self) -> int:
        """HELLO carries integers: the true rate rounded (README: contract readings)."""
        if self.profile.hx_clock == "internal":
            return 10 if self.profile.hx_rate_pin == 0 else 80  # nominal: no crystal to know
        return int(round(1e6 / float(self.hx_period_us[0])))

    @property
    def conv_us(self) -> float:
        return 13.0 / self.profile.adc_clock_hz * 1e6

    @property
    def adc_noise(self) -> float:
        return ADC_NOISE_LSB10[self.profile.adc_clock_hz]


def make_kit(seed: int) -> Kit:
    """The kit of tower ``seed``: every build figure drawn from the seed alone."""
    rng = np.random.default_rng([0x5A, seed])
    prof = PROFILES[(seed - 1) % len(PROFILES)]
    edge_mm = rng.uniform(8.0, 10.0)  # painted beech cubes
    cube_mass = 0.72 * (edge_mm / 10.0) ** 3 * rng.uniform(0.95, 1.05)
    colour_factor = {c: float(rng.uniform(0.97, 1.03)) for c in (*COLOURS, "red")}
    # Aim: about even over floors 1-7, few on the ground floor (design.md).
    target = np.array([0.04] + [0.96 / 7] * 7)
    reach, catch = 1.0, np.zeros(8)
    for lv in range(7, 0, -1):
        catch[lv] = min(0.9, target[lv] / reach * rng.uniform(0.85, 1.15))
        reach *= 1 - catch[lv]
    catch[0] = 1.0
    rim_p = rng.uniform(0.25, 0.45, 8)
    restitution = rng.uniform(0.28, 0.42, 8)
    f1 = rng.uniform(380.0, 700.0, 8)
    mode_f = np.stack([f1, f1 * rng.uniform(2.2, 2.8, 8), f1 * rng.uniform(3.8, 5.0, 8)], 1)
    mode_q = rng.uniform(12.0, 28.0, (8, 3))
    mode_w = np.array([0.55, 0.3, 0.15]) * rng.uniform(0.8, 1.25, (8, 3))
    plate_g = rng.uniform(4.0, 9.0, 8)
    # Plate on a ~4 kN/m bar cell: f = sqrt(k/m)/2pi.
    k_cell = rng.uniform(3200.0, 4800.0, 8)
    rigid_f = np.sqrt(k_cell / (plate_g * 1e-3)) / (2 * np.pi)
    rigid_zeta = rng.uniform(0.04, 0.09, 8)
    piezo_gain = 2.2e5 * np.exp(rng.normal(0.0, 0.12, 8))
    piezo_bias = 512.0 + rng.normal(0.0, 2.0, 8)
    c0 = rng.uniform(0.12, 0.22)
    dist = np.abs(np.arange(8)[:, None] - np.arange(8)[None, :])
    coupling = c0 ** dist * rng.uniform(0.8, 1.25, (8, 8))
    np.fill_diagonal(coupling, 1.0)
    rated = rng.uniform(0.9, 1.1, 8)  # mV/V
    cpg = rated * 1e-3 / 100.0 * 128 * 2 * 2**23  # ratiometric: excitation = reference
    zero_balance_g = rng.uniform(-10.0, 10.0, 8)  # +-0.1 mV/V of a 1 mV/V 100 g cell
    offset = np.round(cpg * (zero_balance_g + plate_g))
    hx = HX_CLOCK_HZ[prof.hx_clock]
    period = np.full(8, hx_period_us(hx, prof.hx_rate_pin))
    if prof.hx_clock == "internal":
        period = period * (1 + rng.normal(0.0, 0.02, 8))  # each chip its own RC oscillator
    rate = 1e6 / period
    noise_nv = 1.5 * 50.0 * (rate / 10.0) ** 0.283  # datasheet 50 nV at 10, 90 nV at 80 SPS
    load_noise = noise_nv * 1e-9 / (0.5 * 4.3 / 128) * 2**23
    dev = bytearray(rng.integers(1, 256, 8, dtype=np.uint8).tobytes())
    dev[1] = 0  # a device id with zero bytes in it (COBS)
    dev[6] = 0
    return Kit(
        seed=seed, profile=prof, cube_mass_g=float(cube_mass), colour_factor=colour_factor,
        catch=catch, rim_p=rim_p, restitution=restitution, mode_f=mode_f, mode_q=mode_q,
        mode_w=mode_w, rigid_f=rigid_f, rigid_zeta=rigid_zeta, piezo_gain=piezo_gain,
        piezo_bias=piezo_bias, coupling=coupling, analog_noise=float(rng.uniform(0.3, 0.5)),
        hum_open=rng.uniform(1.0, 4.0, 8), cpg=cpg, offset=offset, load_noise=load_noise,
        plate_g=plate_g, hx_period_us=period, device_id=bytes(dev),
        fw=(1, 2 + PROFILES.index(prof), int(rng.integers(0, 10))),
    )


make_tower = make_kit  # the name the shared test helpers know


# --------------------------------------------------------------------------------------
# The scene: what happens to the tower, in physical seconds (p).
# --------------------------------------------------------------------------------------


@dataclass
class Impact:
    """A force impulse: on a plate (``plate``) or on the structure next to a level."""

    t: float
    level: int
    j_ns: float  # impulse, N s
    tau_s: float  # contact time
    plate: bool = True  # True: on the plate (the cell feels the impulse itself)
    coupling: np.ndarray | None = None  # (8,) piezo amplitude per channel; None: kit's
    shake_g: np.ndarray | None = None  # (8,) zero-mean load shake amplitude, grams


@dataclass
class Burst:
    """Band-limited noise on the piezos (sliding, scraping, talk, hum), sums of tones."""

    t0: float
    t1: float
    amp: np.ndarray  # (8,) LSB10 rms
    f_lo: float
    f_hi: float
    shape: str = "hann"  # hann | flat | decay


@dataclass
class Cube:
    """One wooden cube."""

    cid: int
    colour: str
    mass_g: float
    floor: int = -1
    t_rest: float = math.inf


@dataclass
class Scene:
    """Everything physical over one recording, plus the truth lists."""

    duration: float
    impacts: list[Impact] = field(default_factory=list)
    bursts: list[Burst] = field(default_factory=list)
    steps: list[tuple[float, int, float]] = field(default_factory=list)  # t, ch, grams
    bumps: list[tuple[float, float, int, float]] = field(default_factory=list)
    shakes: list[tuple[float, float, np.ndarray, float, float]] = field(default_factory=list)
    open_ch: list[tuple[int, float, float]] = field(default_factory=list)  # ch, off, on
    landings: list[dict[str, Any]] = field(default_factory=list)
    knockdowns: list[dict[str, Any]] = field(default_factory=list)
    removals: list[dict[str, Any]] = field(default_factory=list)
    lifts: list[dict[str, Any]] = field(default_factory=list)
    closes: list[dict[str, Any]] = field(default_factory=list)
    knocks: list[dict[str, Any]] = field(default_factory=list)
    busy: list[tuple[float, float]] = field(default_factory=list)  # spans with something on
    floors: list[list[Cube]] = field(default_factory=lambda: [[] for _ in range(8)])
    next_cid: int = 0
    last_event: float = 0.0

    def new_cube(self, kit: Kit, colour: str, rng: np.random.Generator) -> Cube:
        self.next_cid += 1
        m = kit.cube_mass_g * kit.colour_factor[colour] * rng.uniform(0.96, 1.04)
        return Cube(self.next_cid, colour, float(m))


def fall(v: float, d: float) -> tuple[float, float]:
    """Time and speed after falling ``d`` metres starting at ``v`` m/s downwards."""
    t = (-v + math.sqrt(v * v + 2 * G * d)) / G
    return t, v + G * t


def _contact_tau(rng: np.random.Generator) -> float:
    return float(rng.uniform(0.4e-3, 1.0e-3))  # wood on greyboard: a soft contact


def drop_cube(kit: Kit, sc: Scene, rng: np.random.Generator, cube: Cube, t: float, z_m: float,
              v: float, start_level: int, *, may_knock: bool, entry: bool) -> dict[str, Any]:
    """A cube falling from height ``z_m`` (above plate ``start_level``) until it rests.

    Returns its landing (truth) record; appends impacts, bursts, steps to ``sc``.
    """
    m = cube.mass_g * 1e-3
    first_impact = math.inf
    caused: dict[str, Any] | None = None
    if entry and rng.random() < 0.25:  # clips the roof hole of the top module
        dt, v = fall(v, max(z_m - 8 * LEVEL_H_M, 0.0))
        t += dt
        z_m = 8 * LEVEL_H_M
        cpl = np.zeros(8)
        cpl[7], cpl[6] = 0.35, 0.08
        sc.impacts.append(Impact(t, 7, m * v * rng.uniform(0.15, 0.35), _contact_tau(rng),
                                 plate=False, coupling=cpl, shake_g=np.zeros(8)))
        first_impact = t
        v *= rng.uniform(0.8, 0.95)
    lv = start_level
    while True:
        dt, v = fall(v, max(z_m - lv * LEVEL_H_M, 0.0))
        t += dt
        z_m = lv * LEVEL_H_M
        stays = lv == 0 or rng.random() < kit.catch[lv]
        if not stays:
            if rng.random() < kit.rim_p[lv]:
                j = m * v * rng.uniform(0.1, 0.35)
                sc.impacts.append(Impact(t, lv, j, _contact_tau(rng)))
                first_impact = min(first_impact, t)
                if may_knock and caused is None:
                    caused = knock_down(kit, sc, rng, lv, t, graze=True)
                v *= rng.uniform(0.75, 0.95)
            lv -= 1
            continue
        # Lands on plate lv: bounces, maybe tumbles, slides, rests.
        first_impact = min(first_impact, t)
        t_on = t
        if may_knock and caused is None:
            caused = knock_down(kit, sc, rng, lv, t)
        e = kit.restitution[lv]
        vb = v
        through = lv > 0 and rng.random() < 0.06  # bounces over the hole edge and drops
        n_b = 0
        while True:
            e_k = e * rng.uniform(0.7, 1.2)
            sc.impacts.append(Impact(t, lv, m * vb * (1 + e_k), _contact_tau(rng)))
            vb *= e_k
            n_b += 1
            if through and n_b >= 1 + int(rng.integers(0, 2)):
                break
            if vb < 0.1 or n_b >= 6:
                break
            t += 2 * vb / G
        if through:
            t += rng.uniform(0.02, 0.08)
            v = rng.uniform(0.1, 0.35)
            lv -= 1
            z_m = (lv + 1) * LEVEL_H_M
            continue
        t_contact = t
        if rng.random() < 0.5:  # tumbles over an edge once or twice
            for _ in range(int(rng.integers(1, 3))):
                t += rng.uniform(0.02, 0.06)
                sc.impacts.append(Impact(t, lv, m * rng.uniform(0.08, 0.25), _contact_tau(rng)))
        slide = rng.uniform(0.03, 0.2)
        amp = np.where(np.arange(8) == lv, 1.0, 0.0) * rng.uniform(2.0, 5.0) * cube.mass_g / 0.5
        amp = amp + kit.coupling[lv] * amp[lv] * (np.arange(8) != lv)
        sc.bursts.append(Burst(t, t + slide, amp, 300.0, 2000.0, "decay"))
        t_rest = t + slide
        sc.steps.append((t_contact, lv, cube.mass_g))
        cube.floor, cube.t_rest = lv, t_rest
        sc.floors[lv].append(cube)
        rec = {"t": t_rest, "t_first_impact": first_impact, "t_on_floor": t_on,
               "t_contact": t_contact, "floor": lv, "cubes": 1, "knocked": False,
               "caused_knockdown": caused is not None, "colour": cube.colour,
               "mass_g": round(cube.mass_g, 4), "cube": cube.cid}
        if caused is not None:
            caused["by_cube"] = cube.cid
        sc.last_event = max(sc.last_event, t_rest)
        return rec


def knock_down(kit: Kit, sc: Scene, rng: np.random.Generator, lv: int, t: float, *,
               graze: bool = False) -> dict[str, Any] | None:
    """Maybe knock a resting cube on plate ``lv`` into its hole; returns the knock-down.

    A cube resting near the hole edge is hit now and then: 1.2 % per cube resting
    there (at most 5 %), half that for a cube that only grazes the hole's edge.
    """
    if lv == 0:
        return None
    resting = [c for c in sc.floors[lv] if c.t_rest < t - 0.05]
    p = min(0.05, 0.012 * len(resting)) * (0.5 if graze else 1.0)
    if not resting or rng.random() > p:
        return None
    victim = resting[int(rng.integers(0, len(resting)))]
    sc.floors[lv].remove(victim)
    t_k = t + float(rng.uniform(0.01, 0.05))
    sc.steps.append((t_k, lv, -victim.mass_g))
    rec = drop_cube(kit, sc, rng, victim, t_k, lv * LEVEL_H_M, float(rng.uniform(0.1, 0.3)),
                    lv - 1, may_knock=False, entry=False)
    rec.update(knocked=True, knocked_from=lv, t_first_impact=t_k, kind="knocked")
    kd = {"t": t_k, "from_floor": lv, "to_floor": rec["floor"], "cube": victim.cid}
    sc.landings.append(rec)
    sc.knockdowns.append(kd)
    return kd


def throw(kit: Kit, sc: Scene, rng: np.random.Generator, t_release: float, colour: str,
          kind: str, *, handful: int | None = None) -> dict[str, Any]:
    """A player drops one cube into the roof hole; its landing record (truth)."""
    cube = sc.new_cube(kit, colour, rng)
    h0 = rng.uniform(0.03, 0.12)  # hand above the roof
    v0 = rng.uniform(0.0, 0.6) if rng.random() < 0.5 else 0.0  # fast adults flick it down
    rec = drop_cube(kit, sc, rng, cube, t_release, 8 * LEVEL_H_M + h0, v0, 7,
                    may_knock=True, entry=True)
    rec.update(t_release=t_release, kind=kind, handful=handful)
    sc.landings.append(rec)
    sc.busy.append((t_release, rec["t"]))
    return rec


# -- room and hands -----------------------------------------------------------------


def table_knock(sc: Scene, rng: np.random.Generator, t: float, kind: str) -> float:
    """Someone knocks the table / sets a glass down / slaps cards: felt through the base."""
    n = {"knuckle": int(rng.integers(1, 4)), "glass": 1, "cards": 1, "bump": 1}[kind]
    base = {"knuckle": 420.0, "glass": 320.0, "cards": 150.0, "bump": 110.0}[kind]
    up = rng.uniform(0.45, 0.65)
    tt = t
    for _ in range(n):
        peak = base * rng.uniform(0.5, 1.6)
        cpl = peak / 220.0 * up ** np.arange(8)
        shake = (0.6 if kind == "bump" else 0.25) * rng.uniform(0.5, 1.5) * up ** (
            np.arange(8) * 0.5) * (4.0 if kind == "bump" else 1.0)
        sc.impacts.append(Impact(tt, 0, 1e-3, float(rng.uniform(0.3e-3, 1.5e-3)), plate=False,
                                 coupling=cpl, shake_g=shake))
        if kind == "bump":
            sc.shakes.append((tt, tt + rng.uniform(0.3, 0.6), up ** (np.arange(8) * 0.5),
                              float(rng.uniform(0.1, 0.3)), 8.0))
        tt += rng.uniform(0.09, 0.16)
    t_end = tt
    sc.knocks.append({"t": t, "t_end": t_end, "kind": kind})
    sc.busy.append((t, t_end))
    return t_end


def talk(sc: Scene, rng: np.random.Generator, t0: float, t1: float, level: float) -> None:
    """Voices and laughter: airborne, so the contact discs hear little (all about alike)."""
    t = t0
    while t < t1:
        d = rng.uniform(0.6, 3.0)
        loud = level * (rng.uniform(2.0, 3.5) if rng.random() < 0.15 else rng.uniform(0.6, 1.3))
        amp = loud * rng.uniform(0.8, 1.2, 8)
        sc.bursts.append(Burst(t, min(t + d, t1), amp, 150.0, 3000.0, "hann"))
        t += d + rng.uniform(0.1, 1.5)


# -- scenarios --------------------------------------------------------------------------

QUIET_S = 4.6  # nothing happens before (the detector tares itself on the first seconds)
END_FREE_S = 1.6  # nothing is released after duration - this


def players(rng: np.random.Generator, n: int) -> list[str]:
    return [COLOURS[i] for i in rng.permutation(len(COLOURS))[:n]]


def scene_single(kit: Kit, rng: np.random.Generator, duration: float, *,
                 noisy: bool) -> Scene:
    sc = Scene(duration)
    who = players(rng, 4)
    t = QUIET_S + rng.uniform(0.0, 1.0)
    i = 0
    while t < duration - END_FREE_S - 0.8:
        throw(kit, sc, rng, t, who[i % len(who)], "throw")
        i += 1
        t += rng.uniform(2.0, 5.0) if noisy else rng.uniform(2.2, 4.5)
    if noisy:
        talk(sc, rng, 0.5, duration, 2.5)
        t = QUIET_S + rng.uniform(0.5, 3.0)
        while t < duration - 1.0:
            table_knock(sc, rng, t, str(rng.choice(["knuckle", "glass", "cards", "bump"])))
            t += rng.uniform(5.0, 14.0)
    return sc


def scene_rapid(kit: Kit, rng: np.random.Generator, duration: float) -> Scene:
    sc = Scene(duration)
    who = players(rng, 4)
    t = QUIET_S + rng.uniform(0.0, 0.5)
    i = 0
    hand = 0
    while t < duration - END_FREE_S - 0.8:
        colour = who[i % len(who)]
        if rng.random() < 0.2:  # a handful: two or three let go together
            hand += 1
            for _ in range(int(rng.integers(2, 4))):
                throw(kit, sc, rng, t + rng.uniform(0.0, 0.06), colour, "throw", handful=hand)
        else:
            throw(kit, sc, rng, t, colour, "throw")
        i += 1
        t += rng.uniform(0.3, 0.8)
        if rng.random() < 0.08:  # a breath between series
            t += rng.uniform(1.5, 3.0)
    return sc


class Game:
    """Mord im Arosa by the rules (rules/004_*), played fast; drives the scene."""

    def __init__(self, kit: Kit, rng: np.random.Generator, duration: float) -> None:
        self.kit, self.rng, self.duration = kit, rng, duration
        self.sc = Scene(duration)
        self.who = players(rng, int(rng.integers(3, 6)))
        self.supply = {c: 20 for c in self.who}
        self.sheet = {c: [0] * 8 for c in self.who}
        self.crime: list[int] = []
        self.act = 1
        self.turn = 0
        self.t = QUIET_S + rng.uniform(0.0, 0.8)
        self.hand = 0
        self.over = False
        self.found_victims = 0

    def free_until(self) -> float:
        return self.duration - END_FREE_S

    def throw_one(self, colour: str, kind: str, gap: tuple[float, float]) -> None:
        if self.t > self.free_until() - 0.6:
            return
        throw(self.kit, self.sc, self.rng, self.t, colour, kind)
        self.t += self.rng.uniform(*gap)

    def throw_series(self, colours: list[str], kind: str) -> None:
        """Throw-backs by a fast adult: one after another, sometimes two at once."""
        i = 0
        while i < len(colours):
            if self.t > self.free_until() - 0.6:
                return
            if i + 1 < len(colours) and self.rng.random() < 0.3:
                self.hand += 1
                for c in colours[i:i + 2]:
                    throw(self.kit, self.sc, self.rng, self.t + self.rng.uniform(0, 0.05), c,
                          kind, handful=self.hand)
                i += 2
            else:
                throw(self.kit, self.sc, self.rng, self.t, colours[i], kind)
                i += 1
            self.t += self.rng.uniform(0.3, 0.8)

    def prologue(self) -> None:
        for _ in range(2):  # the two victims, then two clues each, in turn
            self.throw_one("red", "victim", (0.6, 1.4))
        for _ in range(2):
            for c in self.who:
                self.supply[c] -= 1
                self.throw_one(c, "prologue", (0.5, 1.4))

    def choose_floor(self) -> int:
        occupied = [lv for lv in range(8) if self.sc.floors[lv]]
        if occupied and self.rng.random() < 0.75:
            return int(self.rng.choice(occupied))
        return int(self.rng.integers(0, 8))

    def open_floor(self, k: int) -> tuple[float, list[Cube]]:
        """Lift modules k..7; returns the close time and the cubes taken out."""
        rng, sc = self.rng, self.sc
        t_lift = self.t
        sc.lifts.append({"t": t_lift, "exposed": k})
        # Contacts of levels above k open (modules k..7 carry their plates).
        # The hand on the lower floors steadies them: shakes, scrapes.
        below = (np.arange(8) <= k).astype(float)
        sc.shakes.append((t_lift - 0.25, t_lift + 0.5, below, float(rng.uniform(0.05, 0.2)),
                          6.0))
        scrape = below * rng.uniform(2.0, 8.0) * (0.4 + 0.6 * (np.arange(8) == k))
        sc.bursts.append(Burst(t_lift - 0.2, t_lift + 0.3, scrape, 200.0, 1500.0, "hann"))
        sep = np.zeros(8)
        sep[k] = 0.3
        if k > 0:
            sep[k - 1] = 0.1
        sc.impacts.append(Impact(t_lift, k, rng.uniform(1e-3, 3e-3), 2e-3, plate=False,
                                 coupling=sep, shake_g=below * rng.uniform(0.1, 0.4)))
        t = t_lift + rng.uniform(0.6, 1.3)  # look
        taken: list[Cube] = []
        cubes = [sc.floors[k][i] for i in rng.permutation(len(sc.floors[k]))]
        while cubes:
            n = min(len(cubes), int(rng.integers(1, 4)))  # grabs of one to three cubes
            grab = [cubes.pop() for _ in range(n)]
            t_touch = t
            press = float(rng.uniform(5.0, 60.0))
            dur = float(rng.uniform(0.12, 0.35))
            sc.bumps.append((t_touch, dur, k, press))
            amp = np.zeros(8)
            amp[k] = rng.uniform(6.0, 25.0)
            if k > 0:
                amp[k - 1] = amp[k] * 0.15
            sc.bursts.append(Burst(t_touch, t_touch + dur + 0.1, amp, 250.0, 2500.0, "hann"))
            t_off = t_touch + dur
            for c in grab:
                sc.floors[k].remove(c)
                sc.steps.append((t_off, k, -c.mass_g))
                taken.append(c)
            sc.removals.append({"t": t_off, "t_touch": t_touch, "floor": k, "cubes": n,
                                "colours": [c.colour for c in grab],
                                "load_g": round(sum(c.mass_g for c in grab), 4)})
            t = t_off + rng.uniform(0.3, 0.8)
        t_close = t + rng.uniform(0.3, 0.9)
        for ch in range(k + 1, 8):
            sc.open_ch.append((ch, t_lift + rng.uniform(0.0, 0.004),
                               t_close + rng.uniform(0.0, 0.004)))
        sc.closes.append({"t": t_close, "exposed": k})
        thud = np.zeros(8)
        thud[k] = 0.6
        if k + 1 < 8:
            thud[k + 1] = 0.4
        if k > 0:
            thud[k - 1] = 0.2
        sc.impacts.append(Impact(t_close, k, rng.uniform(3e-3, 8e-3), 3e-3, plate=False,
                                 coupling=thud, shake_g=rng.uniform(0.3, 1.2) * (
                                     0.5 ** np.abs(np.arange(8) - k))))
        sc.shakes.append((t_close - 0.2, t_close + 0.3, np.ones(8),
                          float(rng.uniform(0.05, 0.15)), 6.0))
        sc.busy.append((t_lift - 0.3, t_close + 0.5))
        self.t = t_close + rng.uniform(0.3, 0.9)
        return t_close, taken

    def turn_time_needed(self, k: int) -> float:
        n = len(self.sc.floors[k])
        return 1.5 + 1.1 * n + 0.6 * (n + 2) + 1.5

    def play(self) -> Scene:
        self.prologue()
        while not self.over:
            self.t += self.rng.uniform(0.8, 2.5)  # decide
            k = self.choose_floor()
            if self.t + self.turn_time_needed(k) > self.free_until():
                break
            inv = self.who[self.turn % len(self.who)]
            self.turn += 1
            if self.act == 1:
                self.act_one(inv, k)
            else:
                self.act_two(inv, k)
        return self.sc

    def penalty(self, inv: str, n: int) -> list[str]:
        out = []
        for _ in range(n):
            if self.supply[inv] > 0:
                self.supply[inv] -= 1
                out.append(inv)
        if self.supply[inv] == 0:
            self.over = True
        return out

    def put_on_sheet(self, colour: str, k: int, n: int) -> None:
        m = min(n, self.supply[colour])
        self.supply[colour] -= m
        self.sheet[colour][k] += m
        if sum(self.sheet[colour]) >= 10 or self.supply[colour] == 0:
            self.over = True

    def act_one(self, inv: str, k: int) -> None:
        here = [c.colour for c in self.sc.floors[k]]
        _, taken = self.open_floor(k)
        victims = [c for c in taken if c.colour == "red"]
        back = [c.colour for c in taken if c.colour != "red"]
        if victims:
            self.crime.append(k)
            for colour in set(here) - {"red", inv}:
                self.put_on_sheet(colour, k, here.count(colour))
            extra: list[str] = []
        else:
            extra = self.penalty(inv, 1)  # sloppy investigation
        self.found_victims += len(victims)
        if self.found_victims >= 2:
            self.act = 2
        self.throw_series(back, "throw_back")
        self.throw_series(extra, "penalty")

    def act_two(self, inv: str, k: int) -> None:
        here = [c.colour for c in self.sc.floors[k]]
        others = [c for c in self.who if c != inv]
        extra: list[str] = []
        if self.rng.random() < 0.7:  # suspect one or two players
            sus = [str(x) for x in self.rng.choice(others, size=min(len(others), int(
                self.rng.integers(1, 3))), replace=False)]
            if k == 0 and inv not in here:  # the ground-floor case
                extra = self.penalty(inv, len(sus))
            else:
                for s in sus:
                    if s in here:
                        self.put_on_sheet(s, k, here.count(s))
                    else:
                        extra += self.penalty(inv, 1)
        else:  # cover own tracks
            own = here.count(inv)
            if own:
                give = min(own, self.sheet[inv][k])
                self.sheet[inv][k] -= give
                self.supply[inv] += give
            else:
                extra = self.penalty(inv, 1)
        _, taken = self.open_floor(k)
        self.throw_series([c.colour for c in taken], "throw_back")
        self.throw_series(extra, "penalty")


def scene_game(kit: Kit, rng: np.random.Generator, duration: float) -> Scene:
    g = Game(kit, rng, duration)
    sc = g.play()
    talk(sc, rng, 0.5, duration, 1.0)
    t = QUIET_S + rng.uniform(5.0, 20.0)
    while t < duration - 2.0:
        table_knock(sc, rng, t, str(rng.choice(["knuckle", "glass", "cards"])))
        t += rng.uniform(20.0, 45.0)
    return sc


def make_scene(kit: Kit, scenario: str, duration: float, rng: np.random.Generator) -> Scene:
    if scenario == "single":
        return scene_single(kit, rng, duration, noisy=False)
    if scenario == "noisy":
        return scene_single(kit, rng, duration, noisy=True)
    if scenario == "rapid":
        return scene_rapid(kit, rng, duration)
    return scene_game(kit, rng, duration)


# --------------------------------------------------------------------------------------
# The host side of the session and the firmware's message schedule (device time, µs).
# --------------------------------------------------------------------------------------

EDGES = ("redundant_start", "status_off", "stop_gap", "unknown_cmd", "bad_arg", "diag",
         "get_info_again")


@dataclass
class Session:
    """How the recording was made: boot or attach, the host's commands, the clock."""

    mode: str  # "boot" (cat from power-up) or "attach" (opened on a running device)
    host: bool
    edges: list[str]
    commands: list[tuple[float, int, int, bytes]]  # p_us, host seq, cmd type, body
    uptime_wraps: int  # attach: how many times t_us wrapped before (1000: 49.7 days)
    wrap_target_s: float
    get_info_s: float
    seq_at_cut: int
    counters0: tuple[int, int, int]  # piezo_overruns, tx_dropped, load_timeouts at p=0
    stop_span: tuple[float, float] | None
    status_off_span: tuple[float, float] | None
    leading_zero: bool
    cut_before_backstep: bool
    end_mid_frame: bool


def quiet_windows(sc: Scene, lo: float, hi: float, need: float) -> list[tuple[float, float]]:
    spans = sorted(
        [(a - 0.7, b + 1.2) for a, b in sc.busy]
        + [(x["t_first_impact"] - 0.7, x["t"] + 1.2) for x in sc.landings]
        + [(r["t_touch"] - 0.5, r["t"] + 1.0) for r in sc.removals])
    out, t = [], lo
    for a, b in spans:
        if a - t >= need and t < hi:
            out.append((t, min(a, hi)))
        t = max(t, b)
    if hi - t >= need:
        out.append((t, hi))
    return [(a, b) for a, b in out if b - a >= need]


def plan_session(seed: int, scenario: str, duration: float, sc: Scene) -> Session:
    """The host's side: boot or attach, which commands, the device's age and counters."""
    si = SCENARIOS.index(scenario)
    rng = np.random.default_rng([0x5A, seed, si, 7])
    mode = "attach" if (seed + si) % 2 else "boot"
    host = mode == "attach" or (seed + si) % 4 != 0  # else: a bare `cat` from power-up
    edges = [e for i, e in enumerate(EDGES) if host and (seed + 2 * si + i) % 3 != 0]
    plan: list[tuple[float, int, bytes]] = []
    get_info_s = float(rng.uniform(0.005, 0.04))
    if mode == "attach":
        plan.append((get_info_s, C_GET_INFO, b""))
    if host:  # the host's clock check: a PING a second
        token = int(rng.integers(0, U32))
        t = float(rng.uniform(0.3, 0.9))
        while t < duration + 0.2:
            plan.append((t, C_PING, token.to_bytes(4, "little")))
            token = (token + 1) % U32
            t += float(rng.uniform(0.9, 1.1))
    stop_span = status_off = None
    taken: list[tuple[float, float]] = []
    if "stop_gap" in edges:
        wins = quiet_windows(sc, QUIET_S + 0.5, duration - 1.5, 2.6)
        if wins:
            a0, b0 = wins[int(rng.integers(0, len(wins)))]
            a = a0 + 0.9
            stop_span = (a, a + min(float(rng.uniform(0.4, 1.0)), b0 - a0 - 2.0))
            plan += [(stop_span[0], C_STOP, b""), (stop_span[1], C_START, bytes([0x07]))]
            taken.append((stop_span[0] - 0.3, stop_span[1] + 0.3))
        else:
            edges.remove("stop_gap")
    if "status_off" in edges:
        for _ in range(50):
            a = float(rng.uniform(0.1, 0.5) * duration)
            b = a + float(rng.uniform(2.0, max(2.1, 0.3 * duration)))
            if b < duration - 0.5 and not any(a - 0.3 < y and b + 0.3 > x for x, y in taken):
                status_off = (a, b)
                plan += [(a, C_START, bytes([0x03])), (b, C_START, bytes([0x07]))]
                taken.append((a - 0.3, b + 0.3))
                break
        else:
            edges.remove("status_off")

    def free_time() -> float:
        for _ in range(100):
            t = float(rng.uniform(0.1, 0.9) * duration)
            if not any(x < t < y for x, y in taken):
                return t
        return float(0.95 * duration)

    if "redundant_start" in edges:
        plan.append((free_time(), C_START, bytes([0x07])))
    if "unknown_cmd" in edges:
        plan.append((free_time(), C_EXT_UNKNOWN, bytes([1, 2, 3])))
    if "bad_arg" in edges:
        plan.append((free_time(), C_START, bytes([0x88])))
    if "get_info_again" in edges:
        plan.append((free_time(), C_GET_INFO, b""))
    if "diag" in edges:
        a = free_time()
        plan += [(a, C_EXT_DIAG, b"\x00"), (a + 0.003, C_EXT_DIAG, b"\x00")]  # 2nd: busy
    cmds: list[tuple[float, int, int, bytes]] = []
    hseq = int(rng.integers(0, 65536))
    for t, ctype, body in sorted(plan, key=lambda x: x[0]):
        cmds.append((t * 1e6, hseq, ctype, body))
        hseq = (hseq + 1) % 65536
    wraps = 1000 if mode == "attach" and (seed + si) % 4 == 1 else int(rng.integers(1, 26))
    return Session(
        mode=mode, host=host, edges=edges, commands=cmds, uptime_wraps=wraps,
        wrap_target_s=float(rng.uniform(0.25, 0.75) * duration), get_info_s=get_info_s,
        seq_at_cut=int(65536 - rng.integers(30, 600)),
        counters0=(int(rng.integers(0, 300)), int(rng.integers(0, 40)),
                   int(65536 - rng.integers(1, 6))),  # load_timeouts about to wrap
        stop_span=stop_span, status_off_span=status_off,
        leading_zero=bool(rng.random() < 0.5), cut_before_backstep=bool(rng.random() < 0.7),
        end_mid_frame=mode == "attach" or bool(rng.random() < 0.3),
    )


@dataclass
class Read:
    """One HX711 read cycle of the firmware."""

    p: float  # µs: DOUT low seen (the LOAD's t_us)
    valid: int
    conv_p: np.ndarray  # (8,) µs: completion of the conversion read (nan where not valid)
    timeouts: int
    back: list[int]  # channels taken back in this cycle (a LOG line)


def connected(sc: Scene, ch: int, p_us: float) -> bool:
    t = p_us / 1e6
    return not any(c == ch and a <= t < b for c, a, b in sc.open_ch)


def hx711_reads(kit: Kit, sc: Scene, sess: Session, p0: float, p1: float,
                rng: np.random.Generator) -> list[Read]:
    """The firmware's read cycles: wait for every expected chip's DOUT, with a timeout."""
    per = kit.hx_period_us
    # Power epochs per channel: (on, off) in µs; the first conversion after power-up ends
    # one period (plus the chip's reset time) later.
    epochs: list[list[tuple[float, float, float]]] = []
    for ch in range(8):
        ons = [p0 - 6e5]
        offs = []
        for c, a, b in sorted(sc.open_ch, key=lambda x: x[1]):
            if c == ch:
                offs.append(a * 1e6)
                ons.append(b * 1e6)
        offs.append(math.inf)
        epochs.append([(on, off, on + per[ch] * (1.0 + rng.uniform(0.02, 0.2)))
                       for on, off in zip(ons, offs, strict=True)])

    def next_conv(ch: int, after: float) -> float:
        for _on, off, first in epochs[ch]:
            if off <= after:
                continue
            c = first if after < first else first + math.ceil((after - first) / per[ch]
                                                               + 1e-9) * per[ch]
            if c == after:
                c += per[ch]
            if c < off:
                return c
        return math.inf

    def last_conv(ch: int, upto: float) -> float:
        for on, off, first in epochs[ch]:
            if on <= upto < off and upto >= first:
                return first + math.floor((upto - first) / per[ch] + 1e-9) * per[ch]
        return math.nan

    timeout = 1.5 * float(per.max())
    included = set(range(8))
    settle = [4] * 8 if sess.mode == "boot" else [0] * 8
    reads: list[Read] = []
    r = p0
    while r < p1:
        nxt = {k: next_conv(k, r) for k in included}
        if not nxt:
            waits = [next_conv(k, r) for k in range(8)]
            r = min(waits) + 50.0
            woke = [k for k in range(8) if waits[k] <= r]
            for k in woke:
                included.add(k)
                settle[k] = 4
            continue
        first = min(nxt.values())
        if math.isinf(first):
            break
        deadline = first + timeout
        late = [k for k, v in nxt.items() if v > deadline]
        t_read = deadline if late else max(nxt.values())
        t_read += rng.uniform(10.0, 200.0)  # main-loop poll latency
        valid = 0
        conv = np.full(8, np.nan)
        for k in late:
            included.discard(k)
        back: list[int] = []
        for k in range(8):
            if k in included:
                continue
            if k in late:
                continue
            c_next = next_conv(k, r - 1.0)
            if c_next <= t_read and connected(sc, k, t_read):
                included.add(k)
                settle[k] = 4
                back.append(k)
        for k in sorted(included):
            if settle[k] > 0:
                settle[k] -= 1
                continue
            lc = last_conv(k, t_read)
            if math.isnan(lc):
                continue
            valid |= 1 << k
            conv[k] = lc
        reads.append(Read(t_read, valid, conv, len(late), back))
        r = t_read
    return reads


@dataclass
class Msg:
    """One message the firmware builds, in wire order."""

    kind: str  # hello piezo load status ack pong log diag drop
    p: float  # µs: when its transmission starts
    a: int = 0  # piezo: first set index; load: read index; ack: cmd type; pong: token
    b: int = 0  # piezo: n; ack: cmd seq; pong: -
    c: int = 0  # ack: result
    status: tuple[int, ...] = ()
    body: bytes = b""
    stamp_p: float = 0.0  # µs: the instant its t_us stamps (before quantisation)


def encoded_len(body_len: int) -> int:
    """Bytes on the wire of a message with this body: COBS adds 1 (<= 254), plus 0x00."""
    return 1 + 2 + body_len + 2 + 1 + 1


def schedule(kit: Kit, sc: Scene, sess: Session, reads: list[Read], p0: float, p1: float,
             rng: np.random.Generator) -> tuple[list[Msg], dict[str, Any]]:
    """The UART line, message by message: what the firmware sends and when (µs)."""
    prof = kit.profile
    P = 1e6 / prof.piezo_rate
    phase = float(rng.uniform(0.0, P))
    conv_total = (8 * prof.oversample) * kit.conv_us + 2.0 / prof.adc_clock_hz * 1e6
    set_lat = rng.uniform(3.0, 9.0, 1 << 12)  # ISR latency before micros() per set (cycled)
    us_per_byte = 10.0  # 8N1 at 1 Mbaud
    out: list[Msg] = []
    lost_sets: list[tuple[int, int]] = []
    ovr, txd, lto = sess.counters0 if sess.mode == "attach" else (0, 0, 0)
    streams = [True, True, True]  # piezo, load, status

    # Everything but PIEZO, as (ready, priority, order, kind, payload), sorted by ready.
    timed: list[tuple[float, int, int, str, Any]] = []

    def add(ready: float, prio: int, kind: str, payload: Any = None) -> None:
        timed.append((ready, prio, len(timed), kind, payload))

    p_start = p0
    if sess.mode == "boot":
        # After reset: HELLO, a STATUS, a log line, an all-invalid LOAD (no conversion
        # settled yet), then the streams.
        add(p0 + 200.0, 0, "hello")
        add(p0 + 210.0, 1, "status")
        add(p0 + 220.0, 1, "log", b"\x00boot: power-on reset, 8 x hx711, adc ok")
        add(p0 + 230.0, 1, "load0")
        p_start = p0 + 240.0
    load_ready = [(rd.p + 110.0, i) for i, rd in enumerate(reads) if rd.p >= p_start]
    for ready, i in load_ready:
        add(ready, 1, "load", i)
        if reads[i].back:
            chans = ",".join(str(k) for k in reads[i].back)
            add(ready + 300.0, 3, "log", bytes([1]) + f"hx711 ch{chans}: back, settling".encode())
    if prof.keepalive_ms > 0:  # LOADs with valid 0 between the slow converters' readings
        ka = prof.keepalive_ms * 1000.0
        last = p_start
        for ready, _ in load_ready:
            t = last + ka
            while t < ready - 1000.0:
                add(t, 2, "keepalive")
                t += ka
            last = ready
    t = p_start + float(rng.uniform(0.0, prof.status_ms * 1000.0))
    while t < p1:
        add(t, 2, "status")
        t += prof.status_ms * 1000.0
    busy_until = -math.inf
    for cp, hseq, ctype, body in sorted(sess.commands):
        ans = cp + float(rng.uniform(40.0, 400.0))
        if ctype == C_GET_INFO:
            add(ans, 0, "hello_ack", hseq)
        elif ctype == C_PING:
            add(ans, 0, "pong", int.from_bytes(body, "little"))
        elif ctype == C_START:
            if body[0] & ~0x07 & 0xFF:
                add(ans, 0, "ack", (ctype, hseq, 2))  # bits beyond 2: bad argument
            else:
                add(ans, 0, "ack_start", (hseq, body[0]))
        elif ctype == C_STOP:
            add(ans, 0, "ack_stop", hseq)
        elif ctype == C_EXT_DIAG:
            if ans < busy_until:
                add(ans, 0, "ack", (ctype, hseq, 3))  # still dumping: busy
            else:
                add(ans, 0, "diag", hseq)
                busy_until = ans + 15_000.0
        else:
            add(ans, 0, "ack", (ctype, hseq, 1))  # unknown command
    timed.sort(key=lambda x: (x[0], x[2]))

    first_set = math.ceil((p_start - phase) / P)
    acct = first_set  # sets below acct are accounted for (stored, lost or skipped)
    runs: deque[list[int]] = deque()  # contiguous stored sets [start, end)
    stored = 0
    tick_us = prof.tick_ms * 1000.0
    tick_next = p_start + float(rng.uniform(0.0, tick_us)) if tick_us else math.inf
    released = first_set  # tick policy: sets below this index may go

    def completion(j: int) -> float:
        return phase + j * P + conv_total

    def account(upto: float) -> None:
        nonlocal acct, stored, ovr
        k = math.floor((upto - phase - conv_total) / P) + 1  # sets completed by upto
        if k <= acct:
            return
        if not streams[0]:
            acct = k
            return
        take = max(0, min(prof.ring_sets - stored, k - acct))
        if take:
            if runs and runs[-1][1] == acct:
                runs[-1][1] += take
            else:
                runs.append([acct, acct + take])
            stored += take
        if k - acct > take:  # the ADC ISR found the ring full
            ovr += k - acct - take
            lost_sets.append((acct + take, k))
        acct = k

    def piezo_ready() -> int:
        if not runs:
            return 0
        s, e = runs[0]
        n = min(MAX_SETS, e - s)
        if prof.batching == "idle":
            return n
        if prof.batching == "fill14":
            return n if (n == MAX_SETS or len(runs) > 1) else 0
        return max(0, min(MAX_SETS, min(e, released) - s))

    def next_piezo_time() -> float:
        if prof.batching == "idle":
            return completion(acct)
        if prof.batching == "fill14":
            base = runs[0][0] if runs else acct
            return completion(max(base + MAX_SETS - 1, acct))
        return tick_next

    def snapshot(now: float) -> tuple[int, ...]:
        cpu = (prof.piezo_rate * 8 * prof.oversample * 6e-6 + 90_000 * 5.5e-6
               + kit.load_rate_true * 150e-6) * 100 + float(rng.normal(0, 1.5))
        return (ovr % 65536, txd % 65536, lto % 65536, int(np.clip(round(cpu), 0, 100)))

    pending: list[tuple[float, int, int, str, Any]] = []
    ti = 0
    now = p0
    tx_ring = 768  # bytes in the firmware's TX ring
    while now < p1:
        account(now)
        while tick_next <= now:
            released = math.floor((tick_next - phase - conv_total) / P) + 1
            tick_next += tick_us
        while ti < len(timed) and timed[ti][0] <= now:
            pending.append(timed[ti])
            ti += 1
        if pending:
            item = min(pending, key=lambda h: (h[1], h[0], h[2]))
            pending.remove(item)
            _, _, _, kind, payload = item
            sent = 0
            if kind == "hello":
                out.append(Msg("hello", now))
                sent = encoded_len(19)
            elif kind == "hello_ack":
                out.append(Msg("hello", now))
                out.append(Msg("ack", now + encoded_len(19) * us_per_byte, C_GET_INFO,
                               payload, 0))
                sent = encoded_len(19) + encoded_len(4)
            elif kind == "status":
                if streams[2]:
                    out.append(Msg("status", now, status=snapshot(now)))
                    sent = encoded_len(12)
            elif kind == "log":
                out.append(Msg("log", now, body=payload))
                sent = encoded_len(len(payload))
            elif kind == "load":
                lto += reads[payload].timeouts
                if streams[1]:
                    out.append(Msg("load", now, a=payload, stamp_p=reads[payload].p))
                    sent = encoded_len(29)
            elif kind in ("load0", "keepalive"):
                if streams[1]:
                    out.append(Msg("load", now, a=-1, stamp_p=now - 60.0))
                    sent = encoded_len(29)
            elif kind == "pong":
                out.append(Msg("pong", now, a=payload, stamp_p=now - 20.0))
                sent = encoded_len(8)
            elif kind == "ack":
                ctype, hseq, res = payload
                out.append(Msg("ack", now, ctype, hseq, res))
                sent = encoded_len(4)
            elif kind == "ack_start":
                hseq, bits = payload
                out.append(Msg("ack", now, C_START, hseq, 0))
                sent = encoded_len(4)
                streams[:] = [bool(bits & 1), bool(bits & 2), bool(bits & 4)]
            elif kind == "ack_stop":
                out.append(Msg("ack", now, C_STOP, payload, 0))
                sent = encoded_len(4)
                streams[:] = [False, False, False]
                runs.clear()
                stored = 0
            elif kind == "diag":
                # ACK, then five dumps built at once into the TX ring: those that do not
                # fit are dropped, their seq spent (a gap the host counts; STATUS too).
                out.append(Msg("ack", now, C_EXT_DIAG, payload, 0))
                fit = (tx_ring - encoded_len(4)) // encoded_len(MAX_MSG - 5)
                tt = now + encoded_len(4) * us_per_byte
                for i in range(5):
                    if i < fit:
                        out.append(Msg("diag", tt, a=i))
                        tt += encoded_len(MAX_MSG - 5) * us_per_byte
                    else:
                        out.append(Msg("drop", tt, a=i))
                        txd += 1
                sent = int(round((tt - now) / us_per_byte))
            now += sent * us_per_byte
            continue
        n = piezo_ready() if streams[0] else 0
        if n:
            s = runs[0][0]
            out.append(Msg("piezo", now, a=s, b=n,
                           stamp_p=phase + s * P + float(set_lat[s % set_lat.size])))
            runs[0][0] += n
            if runs[0][0] == runs[0][1]:
                runs.popleft()
            stored -= n
            now += encoded_len(5 + 16 * n) * us_per_byte
            continue
        cands = [p1]
        if ti < len(timed):
            cands.append(timed[ti][0])
        cands.append(next_piezo_time() if streams[0] else now + 1000.0)
        now = max(min(cands), now + 1.0)
    info = {"phase_us": phase, "set_period_us": P, "conv_total_us": conv_total,
            "first_set": first_set, "lost_sets": lost_sets}
    return out, info


# --------------------------------------------------------------------------------------
# Signals: piezo codes at every conversion, load counts at every read.
# --------------------------------------------------------------------------------------


def _half_sine_gain(f: np.ndarray, tau: float) -> np.ndarray:
    """|spectrum| of a half-sine force pulse of length tau, 1 at DC."""
    x = 2 * f * tau
    near = np.abs(1 - x * x) < 1e-6
    safe = np.where(near, 0.5, x)
    val = np.cos(np.pi * f * tau) / (1 - safe * safe)
    return np.abs(np.where(near, np.pi / 4, val))


def _tones(rng: np.random.Generator, f_lo: float, f_hi: float, n: int
           ) -> tuple[np.ndarray, np.ndarray]:
    f = np.exp(rng.uniform(np.log(f_lo), np.log(f_hi), n))
    ph = rng.uniform(0, 2 * np.pi, n)
    return f, ph


def piezo_codes(kit: Kit, sc: Scene, info: dict[str, Any], j0: int, j1: int,
                rng: np.random.Generator) -> tuple[np.ndarray, set[float]]:
    """Sample codes (j1 - j0, 8) for sets j0..j1-1, and the times any channel clipped."""
    prof = kit.profile
    os_ = prof.oversample
    P, phase = info["set_period_us"], info["phase_us"]
    n_sets = j1 - j0
    set_t = (phase + np.arange(j0, j1) * P) * 1e-6  # seconds
    trig = 2.0 / prof.adc_clock_hz
    conv = kit.conv_us * 1e-6
    rounds = np.arange(os_) * 8
    codes = np.zeros((n_sets, 8), np.int64)
    clipped: set[float] = set()
    noise_rms = math.hypot(kit.analog_noise, kit.adc_noise)
    for ch in range(8):
        inst = (set_t[:, None] + trig + (rounds[None, :] + ch) * conv).ravel()
        x = np.full(inst.size, kit.piezo_bias[ch])
        x += rng.normal(0.0, noise_rms, inst.size)
        for imp in sc.impacts:
            amp = (kit.coupling[imp.level, ch] if imp.coupling is None else imp.coupling[ch])
            if amp <= 1e-4:
                continue
            delay = 0.08e-3 * abs(imp.level - ch)
            t0 = imp.t + delay
            f = kit.mode_f[ch]
            q = kit.mode_q[ch]
            tdec = float(np.max(q / (np.pi * f)))
            tdec = max(tdec, 1.0 / (2 * np.pi * kit.rigid_f[ch] * kit.rigid_zeta[ch]))
            t1 = t0 + 5.0 * tdec
            a, b = np.searchsorted(inst, [t0, t1])
            if a == b:
                continue
            tt = inst[a:b] - t0
            irng = np.random.default_rng([kit.seed, int(imp.t * 1e6) & 0xFFFFFFF, ch])
            w = kit.mode_w[ch] * np.exp(irng.normal(0.0, 0.35, 3)) * _half_sine_gain(
                f, imp.tau_s)
            big = kit.piezo_gain[ch] * imp.j_ns * amp
            y = np.zeros(tt.size)
            for m in range(3):
                y += w[m] * np.exp(-np.pi * f[m] * tt / q[m]) * np.sin(2 * np.pi * f[m] * tt)
            fr, zr = kit.rigid_f[ch], kit.rigid_zeta[ch]
            y += 0.12 * np.exp(-2 * np.pi * fr * zr * tt) * np.sin(2 * np.pi * fr * tt)
            x[a:b] += big * y
        for bu in sc.bursts:
            amp_b = float(bu.amp[ch])
            if amp_b < 0.05:
                continue
            a, b = np.searchsorted(inst, [bu.t0, bu.t1])
            if a == b:
                continue
            tt = inst[a:b]
            brng = np.random.default_rng([kit.seed, int(bu.t0 * 1e6) & 0xFFFFFFF, ch, 3])
            fr_, ph = _tones(brng, bu.f_lo, bu.f_hi, 10)
            y = np.zeros(tt.size)
            for fk, pk in zip(fr_, ph, strict=True):
                y += np.sin(2 * np.pi * fk * tt + pk)
            y *= math.sqrt(2.0 / 10)
            u = (tt - bu.t0) / max(bu.t1 - bu.t0, 1e-6)
            if bu.shape == "hann":
                env = np.sin(np.pi * u) ** 2
            elif bu.shape == "decay":
                env = np.exp(-3.0 * u)
            else:
                env = np.ones(tt.size)
            x[a:b] += amp_b * env * y
        # A disconnected input floats: the base board's bias holds it, mains hum creeps in.
        for c, t_off, t_on in sc.open_ch:
            if c != ch:
                continue
            a, b = np.searchsorted(inst, [t_off, t_on])
            tt = inst[a:b]
            x[a:b] += kit.hum_open[ch] * (np.sin(2 * np.pi * 50 * tt)
                                          + 0.3 * np.sin(2 * np.pi * 150 * tt + 1.0))
            x[a:b] += rng.normal(0.0, 0.6, b - a)
            # Contact break and make: a charge step decaying with the bias RC (30 ms).
            for t_edge, sgn in ((t_off, 1.0), (t_on, -1.0)):
                a2, b2 = np.searchsorted(inst, [t_edge, t_edge + 0.2])
                step = sgn * float(np.random.default_rng([kit.seed, ch, int(t_edge * 1e6)
                                                          & 0xFFFFFFF]).uniform(8.0, 30.0))
                x[a2:b2] += step * np.exp(-(inst[a2:b2] - t_edge) / 0.03)
        code10 = np.clip(np.round(x), 0, 1023).astype(np.int64)
        rail = (code10 == 0) | (code10 == 1023)
        if rail.any():
            clipped.update(np.round(inst[rail][:: max(1, rail.sum() // 20)], 2).tolist())
        c2 = code10.reshape(n_sets, os_)
        if prof.adc_bits == 8:
            codes[:, ch] = c2[:, 0] >> 2  # ADLAR: ADCH only
        elif os_ == 1:
            codes[:, ch] = c2[:, 0]
        else:
            extra = prof.adc_bits - 10  # AVR121: sum 4^n conversions, shift right by n
            codes[:, ch] = c2.sum(axis=1) >> extra
    return codes, clipped


LOAD_DT = 250e-6  # s: the load force grid (4 kHz), fine for a ~100 Hz plate mode


def load_force(kit: Kit, sc: Scene, t0: float, t1: float) -> tuple[np.ndarray, np.ndarray]:
    """Force on each cell, grams (grid, (N, 8)), from t0 to t1 seconds."""
    n = int(math.ceil((t1 - t0) / LOAD_DT)) + 1
    tg = t0 + np.arange(n) * LOAD_DT
    f = np.zeros((n, 8))
    for t, ch, g in sc.steps:
        i = int(np.searchsorted(tg, t))
        if i < n:
            f[i:, ch] += g
    for imp in sc.impacts:
        i0 = int(np.searchsorted(tg, imp.t))
        if i0 >= n:
            continue
        for ch in range(8):
            w = 2 * np.pi * kit.rigid_f[ch]
            z = kit.rigid_zeta[ch]
            span = int(min(n - i0, 6.0 / (z * w) / LOAD_DT))
            tt = tg[i0:i0 + span] - imp.t
            env = np.exp(-z * w * tt)
            if imp.plate and ch == imp.level:
                # The cell carries the impulse: integral of the ringing = J.
                jg = imp.j_ns / G * 1e3  # gram-seconds
                f[i0:i0 + span, ch] += jg * w * env * np.sin(w * tt)
            else:
                if imp.shake_g is not None:
                    amp = float(imp.shake_g[ch])
                else:
                    amp = 0.05 * kit.coupling[imp.level, ch] * imp.j_ns / 1e-3
                if amp <= 0:
                    continue
                phi = math.atan2(z, math.sqrt(1 - z * z))  # zero-mean: no net impulse
                f[i0:i0 + span, ch] += amp * env * np.cos(w * tt + phi)
    for t, dur, ch, g in sc.bumps:
        a, b = np.searchsorted(tg, [t, t + dur])
        u = (tg[a:b] - t) / dur
        f[a:b, ch] += g * np.sin(np.pi * u) ** 2
    for k, (a_t, b_t, wts, rms, fc) in enumerate(sc.shakes):
        a, b = np.searchsorted(tg, [a_t, b_t])
        if b <= a:
            continue
        srng = np.random.default_rng([kit.seed, int(a_t * 1e6) & 0xFFFFFFF, k, 5])
        fr_, ph = _tones(srng, 0.3 * fc, 3 * fc, 6)
        tt = tg[a:b]
        y = np.zeros(tt.size)
        for fk, pk in zip(fr_, ph, strict=True):
            y += np.sin(2 * np.pi * fk * tt + pk)
        env = np.sin(np.pi * (tt - a_t) / (b_t - a_t)) ** 2
        f[a:b] += (rms * math.sqrt(2.0 / 6) * env * y)[:, None] * wts[None, :]
    return tg, f


def hx711_filter(tg: np.ndarray, x: np.ndarray, period_s: float) -> np.ndarray:
    """Four cascaded moving averages of one conversion period (settles in 4 periods)."""
    y = x
    for _ in range(4):
        c = np.concatenate([[0.0], np.cumsum(y) * LOAD_DT])
        te = np.concatenate([[tg[0] - LOAD_DT], tg])
        back = np.interp(tg - period_s, te, c)
        y = (c[1:] - back) / period_s
    return y


def load_counts(kit: Kit, sc: Scene, reads: list[Read], t0: float, t1: float,
                rng: np.random.Generator) -> np.ndarray:
    """(len(reads), 8) s24 counts (0 where not valid)."""
    tg, f = load_force(kit, sc, t0, t1)
    drift = np.cumsum(rng.normal(0.0, 0.002 / math.sqrt(60 / 0.5), (int((t1 - t0) / 0.5) + 2,
                                                                      8)), axis=0)
    out = np.zeros((len(reads), 8), np.int64)
    conv = np.array([rd.conv_p for rd in reads]) * 1e-6 if reads else np.zeros((0, 8))
    for ch in range(8):
        y = hx711_filter(tg, f[:, ch], kit.hx_period_us[ch] * 1e-6)
        ok = ~np.isnan(conv[:, ch])
        tc = conv[ok, ch]
        g = np.interp(tc, tg, y) + np.interp(tc, t0 + np.arange(drift.shape[0]) * 0.5,
                                             drift[:, ch])
        counts = kit.offset[ch] + kit.cpg[ch] * g + rng.normal(0.0, kit.load_noise[ch], tc.size)
        out[ok, ch] = np.clip(np.round(counts), -(1 << 23), (1 << 23) - 1).astype(np.int64)
    return out


# --------------------------------------------------------------------------------------
# Assembling the bytes and the truth.
# --------------------------------------------------------------------------------------


def hello_body(kit: Kit) -> bytes:
    prof = kit.profile
    return (bytes([1, *kit.fw, 8, 8]) + prof.piezo_rate.to_bytes(2, "little")
            + kit.load_rate_hello.to_bytes(2, "little") + bytes([prof.adc_bits])
            + kit.device_id)


def diag_body(seed: int, i: int, seq: int) -> bytes:
    """249 bytes of 'RAM dump', all non-zero; tweaked until the CRC has no zero byte."""
    r = np.random.default_rng([seed, i, 0xD1A6])
    core = bytearray(r.integers(1, 256, MAX_MSG - 5 - 1, dtype=np.uint8).tobytes())
    for tweak in range(1, 256):
        body = bytes(core) + bytes([tweak])
        crc = crc16_ccitt_false(bytes([T_EXT_DIAG]) + (seq & 0xFFFF).to_bytes(2, "little")
                                + body)
        if crc & 0xFF and crc >> 8:
            return body
    return bytes(core) + b"\x01"


def _find_backstep(msgs: list[Msg], lo: float, hi: float, *, last: bool = False) -> int | None:
    """Index of a LOAD in [lo, hi) followed by a PIEZO whose first set is older than it."""
    found = None
    for i in range(len(msgs) - 1):
        m = msgs[i]
        if m.p < lo:
            continue
        if m.p >= hi:
            break
        if m.kind == "load" and m.a >= 0:
            nxt = next((x for x in msgs[i + 1:i + 6] if x.kind in ("piezo", "load")), None)
            if nxt is not None and nxt.kind == "piezo" and nxt.stamp_p < m.stamp_p - 12.0:
                found = i
                if not last:
                    return i
    return found


def _partial_is_garbage(chunk: bytes) -> bool:
    """The opening fragment must not read as a valid message by chance."""
    body = chunk[:-1]
    try:
        msg = cobs_decode_own(body)
    except ValueError:
        return True
    return len(msg) < 5 or crc16_ccitt_false(msg[:-2]) != int.from_bytes(msg[-2:], "little")


def _encode_rows(rows: np.ndarray) -> list[bytes]:
    crc = crc16_rows(rows)
    full = np.concatenate([rows, (crc & 0xFF).astype(np.uint8)[:, None],
                           (crc >> 8).astype(np.uint8)[:, None]], axis=1)
    enc = cobs_encode_rows(full)
    return [enc[r].tobytes() for r in range(enc.shape[0])]


def _head_rows(mtype: int, seqs: np.ndarray, stamps: np.ndarray, width: int) -> np.ndarray:
    rows = np.zeros((seqs.size, width), np.uint8)
    rows[:, 0] = mtype
    rows[:, 1] = seqs & 0xFF
    rows[:, 2] = seqs >> 8
    for b in range(4):
        rows[:, 3 + b] = (stamps >> (8 * b)) & 0xFF
    return rows


def simulate(seed: int, scenario: str, duration_s: float) -> tuple[bytes, dict[str, Any]]:
    """Make one recording: its bytes and its truth."""
    if scenario not in SCENARIOS:
        raise ValueError(f"unknown scenario {scenario!r}")
    kit = make_kit(seed)
    si = SCENARIOS.index(scenario)
    rng = np.random.default_rng([0x5A, seed, si, 1])
    sc = make_scene(kit, scenario, duration_s, rng)
    sess = plan_session(seed, scenario, duration_s, sc)
    p0 = -0.3e6 if sess.mode == "attach" else 0.0
    p1 = (duration_s + 0.35) * 1e6
    drng = np.random.default_rng([0x5A, seed, si, 2])
    reads = hx711_reads(kit, sc, sess, p0, p1, drng)
    msgs, info = schedule(kit, sc, sess, reads, p0, p1, drng)
    n_msgs = len(msgs)

    # --- the device clock (total µs since its firmware started, at p = 0) ---
    i_bs = None
    p_wrap = math.nan
    d0 = 0.0
    if sess.mode == "attach":
        target = sess.wrap_target_s * 1e6
        i_bs = _find_backstep(msgs, target, target + 3e6)
        if i_bs is not None:  # wrap between a LOAD and the older PIEZO sent after it
            pm = next(x for x in msgs[i_bs + 1:] if x.kind == "piezo")
            p_wrap = 0.5 * (msgs[i_bs].stamp_p + pm.stamp_p)
        else:
            p_wrap = target
        d0 = sess.uptime_wraps * U32 - p_wrap

    def stamp(p_us: float) -> int:
        """micros(): total µs at 4-µs resolution (the wire carries it mod 2^32)."""
        return int(math.floor((d0 + p_us) / 4.0)) * 4

    # --- where the recording opens ---
    if sess.mode == "attach":
        # The port opened inside a frame: just before a LOAD whose next PIEZO is older
        # (so stream time 0 is a LOAD and the first sets are negative), or wherever.
        cut_i = None
        hello_p = sess.get_info_s * 1e6
        if sess.cut_before_backstep:
            bs = _find_backstep(msgs, -0.25e6, hello_p - 500.0, last=True)
            if bs is not None and bs > 0:
                cut_i = bs - 1
        if cut_i is None:
            cut_i = next(i for i, m in enumerate(msgs) if m.p >= 0.0) - 1
        while msgs[cut_i].kind == "drop":
            cut_i -= 1
        seq0 = (sess.seq_at_cut - cut_i) % 65536
    else:
        cut_i, seq0 = 0, 0
    seqs = np.array([(seq0 + i) % 65536 for i in range(n_msgs)], np.int64)

    # --- signals ---
    piezo_i = [i for i, m in enumerate(msgs) if m.kind == "piezo"]
    j_lo = min(msgs[i].a for i in piezo_i)
    j_hi = max(msgs[i].a + msgs[i].b for i in piezo_i)
    codes, clipped = piezo_codes(kit, sc, info, j_lo, j_hi,
                                 np.random.default_rng([0x5A, seed, si, 3]))
    counts = load_counts(kit, sc, reads, p0 / 1e6 - 0.7, p1 / 1e6 + 0.1,
                         np.random.default_rng([0x5A, seed, si, 4]))

    # --- encode (frames of one length many at once) ---
    frames: list[bytes] = [b""] * n_msgs
    hello = hello_body(kit)
    clip_s = np.array(sorted(clipped))
    prev_counts = (-1, -1)
    for i, m in enumerate(msgs):
        sq = int(seqs[i])
        if m.kind == "hello":
            frames[i] = frame(T_HELLO, sq, hello)
        elif m.kind == "status":
            up_ms = (int(d0 + m.p) // 1000) % U32
            ovr, txd, lto, cpu = m.status
            flags = 0  # this firmware's flags (README): bit0 clipped, bit1 a cell missing,
            #          bit2 TX dropped, bit3 piezo overrun, since the last STATUS
            t_s = m.p / 1e6
            if clip_s.size and np.any((clip_s > t_s - kit.profile.status_ms / 1e3)
                                      & (clip_s <= t_s)):
                flags |= 1
            if any(not connected(sc, k, m.p) for k in range(8)):
                flags |= 2
            if prev_counts[1] >= 0 and txd != prev_counts[1]:
                flags |= 4
            if prev_counts[0] >= 0 and ovr != prev_counts[0]:
                flags |= 8
            prev_counts = (ovr, txd)
            body = (up_ms.to_bytes(4, "little") + ovr.to_bytes(2, "little")
                    + txd.to_bytes(2, "little") + lto.to_bytes(2, "little")
                    + bytes([cpu, flags]))
            frames[i] = frame(T_STATUS, sq, body)
        elif m.kind == "ack":
            frames[i] = frame(T_ACK, sq, bytes([m.a]) + m.b.to_bytes(2, "little")
                              + bytes([m.c]))
        elif m.kind == "pong":
            frames[i] = frame(T_PONG, sq, m.a.to_bytes(4, "little")
                              + (stamp(m.stamp_p) % U32).to_bytes(4, "little"))
        elif m.kind == "log":
            frames[i] = frame(T_EXT_LOG, sq, m.body)
        elif m.kind == "diag":
            frames[i] = frame(T_EXT_DIAG, sq, diag_body(seed, m.a, sq))
    by_n: dict[int, list[int]] = {}
    for i in piezo_i:
        by_n.setdefault(msgs[i].b, []).append(i)
    for n, idxs in by_n.items():
        ix = np.array(idxs)
        st = np.array([stamp(msgs[i].stamp_p) % U32 for i in idxs], np.int64)
        rows = _head_rows(T_PIEZO, seqs[ix], st, 8 + 16 * n)
        rows[:, 7] = n
        first = np.array([msgs[i].a for i in idxs], np.int64) - j_lo
        smp = codes[first[:, None] + np.arange(n)[None, :]].reshape(len(idxs), n * 8)
        rows[:, 8:] = smp.astype("<u2").view(np.uint8).reshape(len(idxs), n * 16)
        for i, fr in zip(idxs, _encode_rows(rows), strict=True):
            frames[i] = fr
    load_i = [i for i, m in enumerate(msgs) if m.kind == "load"]
    if load_i:
        ix = np.array(load_i)
        st = np.array([stamp(msgs[i].stamp_p) % U32 for i in load_i], np.int64)
        rows = _head_rows(T_LOAD, seqs[ix], st, 3 + 29)
        ri = np.array([msgs[i].a for i in load_i], np.int64)
        real = ri >= 0
        valid = np.zeros(ri.size, np.int64)
        valid[real] = [reads[a].valid for a in ri[real]]
        rows[:, 7] = valid
        vals = np.zeros((ri.size, 8), np.int64)
        vals[real] = counts[ri[real]]
        bits = (valid[:, None] >> np.arange(8)[None, :]) & 1
        vals = np.where(bits == 1, vals, 0) & 0xFFFFFF
        for k in range(8):
            for b in range(3):
                rows[:, 8 + 3 * k + b] = (vals[:, k] >> (8 * b)) & 0xFF
        for i, fr in zip(load_i, _encode_rows(rows), strict=True):
            frames[i] = fr

    # --- stream time zero: the first PIEZO or LOAD decoded after the opening ---
    first_data = next(i for i in range(cut_i + 1, n_msgs) if msgs[i].kind in ("piezo", "load"))
    zero_total = stamp(msgs[first_data].stamp_p)
    zero_p = zero_total - d0  # p (µs) of stream time 0

    def to_stream(t_s: float) -> float:
        return round(float((t_s * 1e6 - zero_p) / 1e6), 6)

    # --- the bytes ---
    end_p = zero_p + duration_s * 1e6
    last = next((i for i in range(first_data, n_msgs) if msgs[i].p > end_p), n_msgs - 1)
    while not frames[last] and last > first_data:
        last -= 1
    cut_rng = np.random.default_rng([0x5A, seed, si, 6])
    parts: list[bytes] = []
    if sess.mode == "attach":
        head_frame = frames[cut_i]
        for _ in range(64):
            k = int(cut_rng.integers(1, max(2, len(head_frame) - 1)))
            if _partial_is_garbage(head_frame[k:]):
                break
        parts.append(head_frame[k:])
    else:
        if sess.leading_zero:
            parts.append(b"\x00")  # setup() clears the host's decoder with a delimiter
        parts.append(frames[0])
    parts += frames[cut_i + 1:last]
    tail = frames[last]
    ends_mid = bool(sess.end_mid_frame and len(tail) > 3)
    parts.append(tail[: int(cut_rng.integers(1, len(tail) - 1))] if ends_mid else tail)
    data = b"".join(parts)

    # --- truth ---
    shown = msgs[cut_i + (1 if sess.mode == "attach" else 0):last + (0 if ends_mid else 1)]
    truth = build_truth(kit, sc, scenario, seed, duration_s, to_stream)
    first_msg = msgs[first_data]
    backstep_first = bool(first_msg.kind == "load" and first_msg.a >= 0 and any(
        x.kind == "piezo" and x.stamp_p < first_msg.stamp_p
        for x in msgs[first_data + 1:first_data + 6]))
    lost = [(a, b) for a, b in info["lost_sets"]
            if msgs[cut_i].p <= info["phase_us"] + a * info["set_period_us"] <= end_p]
    truth["session"] = {
        "mode": sess.mode, "host": sess.host, "edges": list(sess.edges),
        "uptime_wraps": sess.uptime_wraps if sess.mode == "attach" else 0,
        "t_us_wrap_t": None if math.isnan(p_wrap) else to_stream(p_wrap / 1e6),
        "wrap_between_load_and_older_piezo": i_bs is not None,
        "first_data_is_backstep_load": backstep_first,
        "first_seq": int(seqs[cut_i + 1]),
        "starts_mid_frame": sess.mode == "attach",
        "ends_mid_frame": ends_mid,
        "leading_zero": bool(sess.mode == "boot" and sess.leading_zero),
        "stop_span": None if sess.stop_span is None else [to_stream(x) for x in sess.stop_span],
        "status_off_span": None if sess.status_off_span is None else [
            to_stream(x) for x in sess.status_off_span],
        "piezo_sets_lost": int(sum(b - a for a, b in lost)),
        "piezo_gaps_t": [to_stream((info["phase_us"] + a * info["set_period_us"]) / 1e6)
                         for a, _ in lost],
        "tx_dropped": sum(1 for m in shown if m.kind == "drop"),
        "counters0": list(sess.counters0) if sess.mode == "attach" else [0, 0, 0],
        "kinds": {k: sum(1 for m in shown if m.kind == k)
                  for k in ("hello", "piezo", "load", "status", "ack", "pong", "log", "diag",
                            "drop")},
    }
    truth["clipped_s"] = sorted({round(to_stream(t), 2) for t in clipped})[:50]
    return data, truth


def build_truth(kit: Kit, sc: Scene, scenario: str, seed: int, duration_s: float,
                to_stream: Any) -> dict[str, Any]:
    """The truth file (``towerear-crosscheck-truth/1``) in stream seconds."""
    def conv(x: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
        y = dict(x)
        for k in keys:
            if k in y and y[k] is not None:
                y[k] = to_stream(y[k])
        return y

    land_keys = ("t", "t_first_impact", "t_on_floor", "t_contact", "t_release")
    landings = sorted((conv(x, land_keys) for x in sc.landings), key=lambda x: x["t"])
    prof = kit.profile
    return {
        "format": "towerear-crosscheck-truth/1",
        "model": MODEL,
        "scenario": scenario,
        "seed": seed,
        "duration_s": duration_s,
        "cells": "matched",
        "landings": landings,
        "knockdowns": sorted((conv(x, ("t",)) for x in sc.knockdowns), key=lambda x: x["t"]),
        "removals": [conv(x, ("t", "t_touch")) for x in sc.removals],
        "lifts": [conv(x, ("t",)) for x in sc.lifts],
        "closes": [conv(x, ("t",)) for x in sc.closes],
        "knocks": [conv(x, ("t", "t_end")) for x in sc.knocks],
        "damage": [],
        "tower": {
            "profile": prof.name, "piezo_rate_hz": prof.piezo_rate, "adc_bits": prof.adc_bits,
            "oversample": prof.oversample, "adc_clock_hz": prof.adc_clock_hz,
            "hx711_clock": prof.hx_clock, "hx711_rate_pin": prof.hx_rate_pin,
            "load_rate_hz": kit.load_rate_true, "load_rate_hello": kit.load_rate_hello,
            "batching": prof.batching, "status_ms": prof.status_ms,
            "keepalive_ms": prof.keepalive_ms, "cube_mass_g": kit.cube_mass_g,
            "cpg": kit.cpg.tolist(), "offset": kit.offset.tolist(),
        },
    }


def generate(seed: int, scenario: str, duration_s: float) -> tuple[bytes, dict[str, Any]]:
    """The recording (exact device -> host bytes) and its truth for one tower and scenario."""
    return simulate(seed, scenario, float(duration_s))


def make_recording(seed: int, scenario: str, duration_s: float, out: Path) -> tuple[Path, Path]:
    """Write ``{scenario}_t{seed}.bin`` and ``.truth.json`` into ``out``."""
    data, truth = generate(seed, scenario, duration_s)
    out.mkdir(parents=True, exist_ok=True)
    b = out / f"{scenario}_t{seed}.bin"
    t = out / f"{scenario}_t{seed}.truth.json"
    b.write_bytes(data)
    t.write_text(json.dumps(truth, indent=1, sort_keys=True) + "\n")
    return b, t


def _job(args: tuple[int, str, float, str]) -> str:
    seed, scenario, duration, out = args
    make_recording(seed, scenario, duration, Path(out))
    return f"{scenario}_t{seed}"


def main(argv: list[str] | None = None) -> int:
    """Command line: write the recordings of several towers and scenarios."""
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
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
    if args.duration < 8.0 or args.towers < 1:
        print("need --duration >= 8 and --towers >= 1", file=sys.stderr)
        return 2
    jobs = [(s, sc, args.duration, str(args.out)) for s in range(
        args.first_seed, args.first_seed + args.towers) for sc in args.scenarios]
    args.out.mkdir(parents=True, exist_ok=True)
    if args.workers <= 1:
        for j in jobs:
            _job(j)
    else:
        with ProcessPoolExecutor(args.workers) as pool:
            list(pool.map(_job, jobs))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
