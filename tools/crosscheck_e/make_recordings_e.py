#!/usr/bin/env python3
"""Cross-check model E: an independent tower (sinc-filtered HX711, two cube kinds, noisy ADC).

Writes contract-conformant recordings (``{scenario}_t{seed}.bin``, the device -> host byte
stream of /work/shared/contracts.md section 1) with their ground truth beside them
(``{scenario}_t{seed}.truth.json``, format ``towerear-crosscheck-truth/1``, times in stream
seconds of section 2). Written from contracts.md and design.md only; it has its own wire
encoder. One seed is one tower; the same seed and scenario give the same bytes.

Usage::

    .venv/bin/python tools/crosscheck_e/make_recordings_e.py --out /tmp/xc_e \
        --towers 8 --first-seed 1 --duration 120 [--scenarios single rapid noisy game]

What model E assumes (README.md beside this file has every range):

- HX711: a sigma-delta whose digital filter spreads a force step over 4 conversions
  (boxcar over one conversion period, then taps 1/8, 3/8, 3/8, 1/8), on its own on-chip
  oscillator (rate off its HELLO figure by up to 0.5 %); a restarted chip fills its
  filter from zero; one HX711 may lag its neighbours and miss a reading now and then.
- Plates: mass-spring, first mode 15-60 Hz (aliased by 80/s), creep, temperature drift.
- Cubes: two kinds per game (light and heavy), bounces, rolls, edge clips, knock-downs.
- Piezos: multi-mode ringing 300 Hz-3 kHz evaluated at the sample instants (aliasing),
  channels of one set sampled one ADC conversion apart, ADC multiplexer ghosting (the
  previous channel leaks into the next), AC coupling, clipping at the rails.
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
from pathlib import Path
from typing import Any, NoReturn

import numpy as np
from scipy import signal

G = 9.81  # m/s^2
U32 = 1 << 32
N_CH = 8
SCENARIOS = ("single", "rapid", "noisy", "game")
TRUTH_FORMAT = "towerear-crosscheck-truth/1"
COLOURS = ("yellow", "blue", "brown", "gray", "black", "white")
# Plate L's height above the table, m: a 25 cm tower of eight 3.05 cm modules on a 8 mm base.
PLATE_Z = 0.008 + 0.0305 * np.arange(N_CH)
TOP_Z = 0.008 + 0.0305 * N_CH
LOAD_FS = 2000.0  # Hz, the plate-force simulation grid (modes are <= 60 Hz)
HX_TAPS = np.array([1.0, 3.0, 3.0, 1.0]) / 8.0  # sinc-like: a step shows over 4 conversions
HX_PRE_S = 0.6  # force history simulated before stream time 0 (the filter needs 4 periods)
HUM_ORDERS = (1, 2, 3, 5)  # mains harmonics: rectifier loads make the odd ones strong
S24_MIN, S24_MAX = -(1 << 23), (1 << 23) - 1

T_HELLO, T_PIEZO, T_LOAD, T_STATUS, T_ACK = 0x01, 0x02, 0x03, 0x04, 0x05


class ArgumentError(Exception):
    """A command-line argument the generator cannot use."""


# --------------------------------------------------------------------------- wire


def crc16_ccitt_false(data: bytes) -> int:
    """CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, not reflected, xorout 0)."""
    return binascii.crc_hqx(data, 0xFFFF)


def crc16_ccitt_false_reference(data: bytes) -> int:
    """The same CRC computed bit by bit, as a check on the fast one."""
    crc = 0xFFFF
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
            crc &= 0xFFFF
    return crc


def cobs_encode(data: bytes) -> bytes:
    """Consistent Overhead Byte Stuffing (canonical: a full 254-byte block is followed by a
    new block). The result holds no 0x00; the caller appends the frame delimiter."""
    out = bytearray()
    for piece in bytes(data).split(b"\x00"):
        while len(piece) >= 254:
            out.append(0xFF)
            out += piece[:254]
            piece = piece[254:]
        out.append(len(piece) + 1)
        out += piece
    return bytes(out)


def cobs_decode(enc: bytes) -> bytes:
    """Inverse of :func:`cobs_encode` (for this script's own checks)."""
    out = bytearray()
    i = 0
    while i < len(enc):
        code = enc[i]
        if code == 0:
            raise ValueError("zero byte inside a COBS frame")
        block = enc[i + 1:i + code]
        if len(block) != code - 1:
            raise ValueError("COBS block runs past the end")
        out += block
        i += code
        if code < 0xFF and i < len(enc):
            out.append(0)
    return bytes(out)


def s24_bytes(values: np.ndarray) -> bytes:
    """Signed 24-bit little-endian two's complement, 3 bytes per value."""
    v = np.asarray(values, dtype=np.int64).ravel()
    if v.size and (v.min() < S24_MIN or v.max() > S24_MAX):
        raise ValueError("value outside s24")
    b = (v & 0xFFFFFF).astype("<u4").view(np.uint8).reshape(-1, 4)[:, :3]
    return b.tobytes()


def frame(mtype: int, seq: int, body: bytes) -> bytes:
    """One framed message: COBS(type | seq | body | crc) + 0x00."""
    head = struct.pack("<BH", mtype, seq & 0xFFFF) + body
    msg = head + struct.pack("<H", crc16_ccitt_false(head))
    if len(msg) > 254:
        raise ValueError(f"message of {len(msg)} bytes exceeds 254")
    return cobs_encode(msg) + b"\x00"


# --------------------------------------------------------------------------- tower


@dataclass
class Tower:
    """Everything fixed for one seed (one physical tower, its electronics and its room)."""

    seed: int
    piezo_rate: int
    load_rate: int
    load_rate_true: float
    ppm: float
    start: str
    mid_frame: bool
    end_cut: bool
    u32_wrap: bool
    fw: tuple[int, int, int]
    device_id: bytes
    # piezo front end
    bias: np.ndarray
    disc_gain: np.ndarray
    piezo_noise: np.ndarray
    hp_hz: float
    adc_conv_s: float
    ghost: float
    modes_f: list[np.ndarray]
    modes_tau: list[np.ndarray]
    modes_a: list[np.ndarray]
    xt_up_db: float
    xt_down_db: float
    xt_fc_hz: float
    xt_delay_s: float
    strike_ref: float
    table_gain: np.ndarray
    mains_hz: float
    hum_harm: np.ndarray
    float_hum: float
    sets_lo: int
    sets_hi: int
    # plates and load cells
    plate_f0: np.ndarray
    plate_zeta: np.ndarray
    plate_mass_g: np.ndarray
    cells: str
    cpg: np.ndarray
    reversed_level: int | None
    offset: np.ndarray
    hx_noise: np.ndarray
    creep_c: np.ndarray
    creep_tau_s: np.ndarray
    drift_g: np.ndarray
    lag_channel: int | None
    lag_frac: float
    restart_unsettled: bool
    # cubes and the shaft
    pass_prob: np.ndarray
    clip_prob: float
    roof_prob: float
    knock_prob: float
    e_lo: float
    e_hi: float
    mass_light: float
    mass_heavy: float

    def cube_mass(self, kind: str, rng: np.random.Generator) -> float:
        base = self.mass_heavy if kind == "heavy" else self.mass_light
        return float(base * rng.uniform(0.98, 1.02))

    def strike_amp(self, v: float, m: float) -> float:
        """Piezo amplitude (codes at a 0 dB disc) of an impact at speed v (m/s), mass m (g)."""
        return self.strike_ref * (v / 1.5) ** 1.3 * (m / 0.55) ** 0.8


def draw_tower(seed: int) -> Tower:
    """The tower of one seed. Wire and rate features follow the seed so that a set of
    consecutive seeds covers them; the physics is drawn at random."""
    rng = np.random.default_rng([0xE, seed])
    piezo_rate = {3: 1000, 6: 4000}.get(seed % 8, 2000)
    load_rate = 10 if seed % 8 == 5 else 80
    start = "boot" if seed % 4 in (0, 1) else "getinfo"
    mid_frame = seed % 2 == 1
    u32_wrap = seed % 8 in (2, 7)
    end_cut = seed % 3 == 1
    # Piezo modes of each plate: a cardboard plate, first mode 300-700 Hz, 3-5 modes up to 3 kHz.
    modes_f, modes_tau, modes_a = [], [], []
    for _ in range(N_CH):
        n = int(rng.integers(3, 6))
        f = [rng.uniform(300, 700)]
        while len(f) < n and f[-1] < 3000 / 1.5:
            f.append(f[-1] * rng.uniform(1.5, 2.3))
        f = np.minimum(np.array(f), 3000.0)
        tau1 = rng.uniform(0.008, 0.040)
        tau = tau1 * (f[0] / f) ** rng.uniform(0.5, 1.0)
        a = np.concatenate([[1.0], rng.uniform(0.2, 0.8, len(f) - 1)])
        modes_f.append(f)
        modes_tau.append(tau)
        modes_a.append(a / a.sum())
    matched = seed % 3 == 0
    spread = 0.08 if matched else 0.30
    cpg = rng.uniform(12000, 25000) * rng.uniform(1 - spread, 1 + spread, N_CH)
    reversed_level = int(rng.integers(0, N_CH)) if seed % 4 == 1 else None
    if reversed_level is not None:
        cpg[reversed_level] *= -1
    plate_mass = rng.uniform(8, 25, N_CH)
    offset = rng.uniform(-400_000, 400_000, N_CH) + plate_mass * cpg
    ppm = float(rng.choice([-1, 1]) * rng.uniform(50, 400))
    lag_channel = int(rng.integers(0, N_CH)) if seed % 4 == 2 else None
    mass_light = rng.uniform(0.35, 0.55)
    mass_heavy = min(0.8, mass_light * rng.uniform(1.25, 1.6))
    pass_prob = np.concatenate([[0.0], [rng.uniform(0.10, 0.25)], rng.uniform(0.55, 0.8, 6)])
    sets_lo = {1000: 1, 2000: 2, 4000: 6}[piezo_rate]
    return Tower(
        seed=seed, piezo_rate=piezo_rate, load_rate=load_rate,
        load_rate_true=load_rate * (1 + rng.uniform(-0.005, 0.005)), ppm=ppm,
        start=start, mid_frame=mid_frame, end_cut=end_cut, u32_wrap=u32_wrap,
        fw=(1, int(rng.integers(0, 4)), int(rng.integers(0, 10))),
        device_id=rng.integers(0, 256, 8).astype(np.uint8).tobytes(),
        bias=512 + rng.uniform(-6, 6, N_CH), disc_gain=10 ** (rng.uniform(-8, 8, N_CH) / 20),
        piezo_noise=rng.uniform(0.4, 1.3, N_CH), hp_hz=rng.uniform(3, 20),
        # 13 ADC clocks per conversion, the prescaler chosen so 8 conversions fit one set.
        adc_conv_s={1000: 104e-6, 2000: 52e-6, 4000: 26e-6}[piezo_rate],
        ghost=rng.uniform(0.0, 0.06),
        modes_f=modes_f, modes_tau=modes_tau, modes_a=modes_a,
        xt_up_db=rng.uniform(10, 25), xt_down_db=rng.uniform(10, 25),
        xt_fc_hz=rng.uniform(600, 1500), xt_delay_s=rng.uniform(0.1e-3, 0.3e-3),
        strike_ref=rng.uniform(80, 220), table_gain=rng.uniform(0.6, 1.2, N_CH)
        * (1 - 0.05 * np.arange(N_CH)),
        mains_hz=float(rng.choice([50.0, 60.0]) + rng.uniform(-0.03, 0.03)),
        hum_harm=np.array([1.0, rng.uniform(0, 0.15), rng.uniform(0.1, 0.5),
                           rng.uniform(0, 0.3)]),  # harmonics 1, 2, 3, 5 (HUM_ORDERS)
        float_hum=rng.uniform(5, 40), sets_lo=sets_lo, sets_hi=14,
        plate_f0=rng.uniform(15, 60, N_CH), plate_zeta=rng.uniform(0.03, 0.25, N_CH),
        plate_mass_g=plate_mass, cells="matched" if matched else "mixed", cpg=cpg,
        reversed_level=reversed_level, offset=offset, hx_noise=rng.uniform(50, 150, N_CH),
        creep_c=rng.uniform(0.01, 0.04, N_CH), creep_tau_s=rng.uniform(10, 40, N_CH),
        drift_g=rng.choice([-1, 1], N_CH) * rng.uniform(0.005, 0.05, N_CH),
        lag_channel=lag_channel, lag_frac=rng.uniform(0.0005, 0.003),
        restart_unsettled=bool(rng.random() < 0.6),
        pass_prob=pass_prob, clip_prob=rng.uniform(0.3, 0.6), roof_prob=rng.uniform(0.1, 0.3),
        knock_prob=rng.uniform(0.05, 0.12), e_lo=0.2, e_hi=rng.uniform(0.3, 0.5),
        mass_light=float(mass_light), mass_heavy=float(mass_heavy),
    )


# --------------------------------------------------------------------------- scene


@dataclass
class Scene:
    """Physical events in stream seconds (device time), and the truth they make."""

    duration: float
    strikes: list[tuple[float, int, float, str]] = field(default_factory=list)
    impulses: list[tuple[float, int, float]] = field(default_factory=list)  # g_f * s
    masses: list[tuple[float, int, float]] = field(default_factory=list)  # g
    presses: list[tuple[float, float, int, float, float]] = field(default_factory=list)
    rolls: list[tuple[float, float, int, float]] = field(default_factory=list)
    rumbles: list[tuple[float, float, float, float, np.ndarray, bool]] = field(
        default_factory=list)
    thumps: list[tuple[float, float, float, np.ndarray]] = field(default_factory=list)
    lifted: list[tuple[float, float, int]] = field(default_factory=list)
    hum_scale: float = 1.0
    load_hum_counts: float = 0.0
    state: list[list[dict[str, Any]]] = field(default_factory=lambda: [[] for _ in range(N_CH)])
    truth: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: {
        k: [] for k in ("landings", "knockdowns", "removals", "lifts", "closes", "knocks",
                        "hands", "footsteps", "talking", "spills")})


def _fall(z0: float, v0: float, z1: float) -> tuple[float, float]:
    """Time to fall from z0 (speed v0 downwards) to z1, and the speed there."""
    v1 = math.sqrt(v0 * v0 + 2 * G * (z0 - z1))
    return (v1 - v0) / G, v1


def _settle(tw: Tower, sc: Scene, rng: np.random.Generator, t: float, level: int, v: float,
            m: float, max_rebounds: int) -> tuple[float, int, float]:
    """Impacts and rebounds on a plate from first contact at t with speed v.

    Returns (time of the last impact, number of rebounds, rolling time)."""
    e = rng.uniform(tw.e_lo, tw.e_hi)
    n_reb = int(rng.integers(1, max_rebounds + 1)) if max_rebounds else 0
    rebounds = 0
    while True:
        last = rebounds >= n_reb or v * e < 0.04
        sc.impulses.append((t, level, m * v * (1 + (0.0 if last else e)) / G))
        sc.strikes.append((t, level, tw.strike_amp(v, m) * rng.uniform(0.75, 1.25), "land"))
        if last:
            break
        v *= e
        t += 2 * v / G
        rebounds += 1
    roll = 0.0 if rng.random() < 0.35 else float(rng.uniform(0.02, 0.15))
    if roll:
        sc.rolls.append((t, roll, level, rng.uniform(3, 12) * m / 0.55))
    sc.masses.append((t, level, m))
    return t, rebounds, roll


def throw(tw: Tower, sc: Scene, rng: np.random.Generator, t_rel: float, cube: dict[str, Any],
          *, together: bool = False) -> dict[str, Any]:
    """One cube dropped into the shaft at t_rel; appends its truth and returns its landing."""
    m = cube["mass"]
    z = TOP_Z + rng.uniform(0.01, 0.08)
    dt, v = _fall(z, rng.uniform(0.0, 0.4), TOP_Z)
    t = t_rel + dt
    first = None
    edges = []
    if rng.random() < tw.roof_prob:  # the top module's hole edge: heard mostly on level 7
        sc.strikes.append((t, 7, tw.strike_amp(v, m) * rng.uniform(0.1, 0.35), "edge"))
        first = t
        edges.append(8)
        v *= rng.uniform(0.75, 0.95)
    z = TOP_Z
    level = 0
    for level in range(N_CH - 1, -1, -1):
        dt, v = _fall(z, v, PLATE_Z[level])
        t += dt
        z = PLATE_Z[level]
        if level == 0 or rng.random() > tw.pass_prob[level]:
            break
        if rng.random() < tw.clip_prob:  # clips the hole edge: a short strike, plate barely moves
            sc.strikes.append((t, level, tw.strike_amp(v, m) * rng.uniform(0.1, 0.5), "edge"))
            sc.impulses.append((t, level, m * v / G * rng.uniform(0.02, 0.08)))
            first = t if first is None else first
            edges.append(level)
            v *= rng.uniform(0.55, 0.9)
    t_imp = t
    first = t_imp if first is None else first
    knock = None
    occupied = sc.state[level]
    if level >= 1 and occupied and rng.random() < tw.knock_prob:
        knock = occupied.pop(int(rng.integers(0, len(occupied))))
    t_last, rebounds, roll = _settle(tw, sc, rng, t_imp, level, v, m, 4)
    landing = {"t": t_last + roll, "floor": level, "cubes": 1, "t_first_impact": first,
               "knocked": False, "caused_knockdown": knock is not None, "mass_g": m,
               "kind": cube["kind"], "colour": cube.get("colour"), "speed_mps": v,
               "rebounds": rebounds, "roll_s": roll, "edges": edges, "together": together}
    sc.truth["landings"].append(landing)
    sc.state[level].append(cube)
    if knock is not None:
        t_hit = t_imp + rng.uniform(0.002, 0.03)
        sc.masses.append((t_hit, level, -knock["mass"]))
        sc.strikes.append((t_hit, level, tw.strike_amp(0.6, knock["mass"]), "edge"))
        dest = level - 1
        dt, vk = _fall(PLATE_Z[level], rng.uniform(0.1, 0.4), PLATE_Z[dest])
        tk = t_hit + dt
        if dest >= 1 and rng.random() < 0.3:  # carries on through the next hole too
            dt, vk = _fall(PLATE_Z[dest], vk, PLATE_Z[dest - 1])
            tk += dt
            dest -= 1
        t_last_k, reb_k, roll_k = _settle(tw, sc, rng, tk, dest, vk, knock["mass"], 2)
        sc.truth["landings"].append({
            "t": t_last_k + roll_k, "floor": dest, "cubes": 1, "t_first_impact": t_hit,
            "knocked": True, "caused_knockdown": False, "mass_g": knock["mass"],
            "kind": knock["kind"], "colour": knock.get("colour"), "speed_mps": vk,
            "rebounds": reb_k, "roll_s": roll_k, "edges": [], "together": False})
        sc.truth["knockdowns"].append({"t": t_hit, "from": level, "floor": dest,
                                       "t_rest": t_last_k + roll_k})
        sc.state[dest].append(knock)
    return landing


def _busy(sc: Scene) -> list[tuple[float, float]]:
    """Intervals around landings and handling that other disturbances keep clear of."""
    iv = [(x["t_first_impact"] - 0.6, x["t"] + 1.0) for x in sc.truth["landings"]]
    iv += [(x["t"] - 1.5, x["t"] + 1.0) for k in ("lifts", "closes", "removals")
           for x in sc.truth[k]]
    return iv


def _free_time(sc: Scene, rng: np.random.Generator, lo: float, hi: float, margin: float,
               extra: list[tuple[float, float]] | None = None) -> float | None:
    busy = _busy(sc) + (extra or [])
    for _ in range(200):
        t = rng.uniform(lo, hi)
        if all(t < a - margin or t > b + margin for a, b in busy):
            return float(t)
    return None


def add_table_knock(tw: Tower, sc: Scene, rng: np.random.Generator, t: float) -> None:
    """Someone knocks the table: every plate jolts and rings, every disc hears a thump."""
    amp = rng.uniform(40, 250)
    sc.thumps.append((t, rng.uniform(40, 150), rng.uniform(0.02, 0.06), amp * tw.table_gain))
    for j in range(N_CH):
        sc.strikes.append((t + rng.uniform(0, 0.004), j, amp * rng.uniform(0.15, 0.4), "rattle"))
        sc.impulses.append((t, j, tw.plate_mass_g[j] * rng.uniform(0.005, 0.03) / G))
    sc.truth["knocks"].append({"t": t, "kind": "table"})


def add_hand_rest(tw: Tower, sc: Scene, rng: np.random.Generator, t0: float, t1: float) -> None:
    """A hand resting on top of the tower: small forces on the upper cells, tremor, rubbing."""
    top = int(rng.integers(2, 5))
    for j in range(N_CH - top, N_CH):
        amp = rng.choice([-1, 1]) * rng.uniform(0.05, 0.6) * (0.5 if j < N_CH - 1 else 1.0)
        sc.presses.append((t0, t1, j, float(amp), rng.uniform(8, 12)))
    click = rng.uniform(20, 80)
    sc.strikes.append((t0, N_CH - 1, click, "thud"))
    sc.strikes.append((t1, N_CH - 1, click * rng.uniform(0.3, 0.8), "thud"))
    gains = np.zeros(N_CH)
    gains[N_CH - top:] = rng.uniform(1, 4, top)
    sc.rumbles.append((t0, t1, 20.0, 300.0, gains, False))
    sc.truth["hands"].append({"t": t0, "t_end": t1, "levels": list(range(N_CH - top, N_CH))})


def add_footsteps(tw: Tower, sc: Scene, rng: np.random.Generator, t0: float,
                  duration: float) -> None:
    """Someone walks past: 15-35 Hz thumps on every disc, tiny jolts on every plate."""
    n = int(rng.integers(4, 13))
    t = t0
    steps = []
    amp = rng.uniform(1, 6)
    for _ in range(n):
        if t >= duration - 0.5:
            break
        a = amp * rng.uniform(0.6, 1.2)
        sc.thumps.append((t, rng.uniform(15, 35), rng.uniform(0.04, 0.08),
                          a * tw.table_gain * rng.uniform(0.7, 1.3, N_CH)))
        for j in range(N_CH):
            sc.impulses.append((t, j, tw.plate_mass_g[j] * rng.uniform(0.0005, 0.003) / G))
        steps.append(t)
        t += rng.uniform(0.5, 0.65)
    if steps:
        sc.truth["footsteps"].append({"t": steps[0], "t_end": steps[-1], "steps": len(steps)})


def add_talking(sc: Scene, rng: np.random.Generator, t0: float, t1: float) -> None:
    """People talking: broadband syllabic bursts coupled through the table into every disc."""
    gains = rng.uniform(0.5, 5.0, N_CH) * (3.0 if rng.random() < 0.2 else 1.0)  # now and then
    sc.rumbles.append((t0, t1, 150.0, 3000.0, gains, True))
    sc.truth["talking"].append({"t": t0, "t_end": t1})


# --------------------------------------------------------------------------- scenarios


def _light_or_heavy(rng: np.random.Generator) -> str:
    return "heavy" if rng.random() < 0.5 else "light"


def scenario_throws(tw: Tower, sc: Scene, rng: np.random.Generator, scenario: str,
                    t_start: float) -> None:
    """single, rapid, noisy: throws only (rapid in bursts)."""
    end = sc.duration - 2.5
    t = t_start
    together_p = {"single": 0.04, "rapid": 0.08, "noisy": 0.04}[scenario]
    while t < end:
        burst = int(rng.integers(2, 7)) if scenario == "rapid" else 1
        for i in range(burst):
            if t >= end:
                break
            kind = _light_or_heavy(rng)
            first = throw(tw, sc, rng, t, {"mass": tw.cube_mass(kind, rng), "kind": kind})
            if rng.random() < together_p:  # two cubes out of one hand
                kind2 = _light_or_heavy(rng)
                throw(tw, sc, rng, t + rng.uniform(0.01, 0.12),
                      {"mass": tw.cube_mass(kind2, rng), "kind": kind2}, together=True)
                first["together"] = True
            if i < burst - 1:
                t += rng.uniform(0.3, 0.8)
        t += rng.uniform(3.0, 7.0) if scenario == "rapid" else rng.uniform(3.0, 8.0)
    if scenario == "noisy":
        sc.hum_scale = rng.uniform(2, 8)
        sc.load_hum_counts = rng.uniform(10, 60)
        lo, hi = 4.5, sc.duration - 1.0
        for _ in range(max(1, int(sc.duration / rng.uniform(10, 25)))):
            tk = _free_time(sc, rng, lo, hi, 0.3)
            if tk is not None:
                add_table_knock(tw, sc, rng, tk)
        for _ in range(int(rng.integers(1, 4))):
            d = rng.uniform(2.0, 8.0)
            ta = _free_time(sc, rng, lo, max(lo + 0.1, hi - d), 0.8)
            if ta is None:
                continue
            tb = min(ta + d, sc.duration - 0.5)
            if _free_time(sc, rng, tb, tb, 0.8) is not None:
                add_hand_rest(tw, sc, rng, ta, tb)
        for _ in range(int(rng.integers(1, 4))):
            ta = rng.uniform(lo, hi)
            add_talking(sc, rng, ta, min(ta + rng.uniform(1.5, 6.0), sc.duration - 0.1))
        for _ in range(int(rng.integers(1, 4))):
            add_footsteps(tw, sc, rng, rng.uniform(lo, hi), sc.duration)


def scenario_game(tw: Tower, sc: Scene, rng: np.random.Generator, t_start: float) -> None:
    """Mord im Arosa: prologue, then turns that open a floor, empty it, close and throw back."""
    players = [str(c) for c in rng.choice(COLOURS, size=int(rng.integers(3, 6)), replace=False)]
    kinds = {c: _light_or_heavy(rng) for c in (*players, "red")}
    if len(set(kinds.values())) == 1:  # each game mixes both kinds
        kinds[players[0]] = "heavy" if kinds["red"] == "light" else "light"
    end = sc.duration - 2.5

    def cube(colour: str) -> dict[str, Any]:
        return {"mass": tw.cube_mass(kinds[colour], rng), "kind": kinds[colour],
                "colour": colour}

    def throw_all(colours: list[str], t: float) -> float:
        for c in colours:
            if t >= end:
                break
            throw(tw, sc, rng, t, cube(c))
            t += rng.uniform(2.5, 5.0)
        return t

    t = throw_all(["red", "red"] + [p for p in players for _ in range(2)], t_start)
    found = 0
    turn = 0
    while t < sc.duration - 22.0:
        inv = players[turn % len(players)]
        occupancy = np.array([len(x) for x in sc.state], dtype=float)
        reds = [k for k in range(N_CH) if any(c.get("colour") == "red" for c in sc.state[k])]
        if found < 2 and reds and rng.random() < 0.35:
            k = int(rng.choice(reds))
        else:
            k = int(rng.choice(N_CH, p=(occupancy + 1) / (occupancy + 1).sum()))
        t_grab = t
        t_lift = t_grab + rng.uniform(0.5, 1.5)
        sc.truth["lifts"].append({"t": t_lift, "exposed": k})
        # Hands hold the lower floors: small varying presses on the plates still connected.
        holders = [j for j in range(k + 1) if rng.random() < 0.6]
        here = sc.state[k]
        sc.state[k] = []
        act1 = found < 2
        victims = [c for c in here if c.get("colour") == "red"] if act1 else []
        clues = [c for c in here if all(c is not v for v in victims)]
        groups: list[list[dict[str, Any]]] = [victims] if victims else []
        mode = rng.random()
        if clues and mode < 0.35:
            groups.append(clues)
        elif clues and (mode < 0.6 or len(clues) > 5) and len(clues) >= 2:
            cut = int(rng.integers(1, len(clues)))
            groups += [clues[:cut], clues[cut:]]
        else:
            groups += [[c] for c in clues]
        tr = t_lift + rng.uniform(0.8, 2.5)
        for grp in groups:
            if not grp:
                continue
            press = rng.uniform(0.15, 0.5)
            sc.presses.append((tr - press, tr, k, float(rng.uniform(0.3, 3.0)), 0.0))
            sc.rumbles.append((tr - press, tr + 0.1, 150.0, 900.0,
                               np.where(np.arange(N_CH) == k, rng.uniform(3, 15), 0.0), False))
            for c in grp:
                sc.masses.append((tr, k, -c["mass"]))
            sc.truth["removals"].append({"t": tr, "floor": k, "cubes": len(grp),
                                         "colours": [c["colour"] for c in grp]})
            tr += rng.uniform(0.6, 2.0)
        throwback = [c["colour"] for c in clues]
        if k + 1 < N_CH and sc.state[k + 1] and rng.random() < 0.06:
            c = sc.state[k + 1].pop(int(rng.integers(0, len(sc.state[k + 1]))))
            ts = t_lift + rng.uniform(0.2, 1.0)
            sc.masses.append((ts, k + 1, -c["mass"]))
            sc.truth["spills"].append({"t": ts, "from": k + 1, "colour": c["colour"]})
            throwback.append(c["colour"])
        t_close = max(tr, t_lift + rng.uniform(2.0, 4.0)) + rng.uniform(0.3, 1.5)
        for j in holders:
            sc.presses.append((t_grab, t_close + rng.uniform(0.2, 0.8), j,
                               float(rng.choice([-1, 1]) * rng.uniform(0.02, 0.3)),
                               float(rng.uniform(8, 12))))
        sc.rumbles.append((t_grab, t_lift + 0.4, 20.0, 400.0, rng.uniform(2, 8, N_CH), False))
        sc.rumbles.append((t_close - 0.4, t_close + 0.5, 20.0, 400.0, rng.uniform(2, 8, N_CH),
                           False))
        t_pu = t_close + rng.uniform(0.005, 0.04)  # spring contacts settle, HX711s power up
        sc.lifted.append((t_lift, t_pu, k))
        sc.strikes.append((t_close, k, rng.uniform(60, 250), "thud"))
        for j in range(k + 1):
            sc.impulses.append((t_close, j, rng.uniform(0.01, 0.05) * (0.5 + 0.5 * j / 8)))
        sc.truth["closes"].append({"t": t_close, "exposed": k})
        # penalty throws in the investigator's colour: a sloppy search in act I; in act II a
        # false suspicion (per suspect without clues there) or a cover that found none
        own = sum(c.get("colour") == inv for c in clues)
        if act1:
            penalties = 0 if victims else 1
        elif rng.random() < 0.6:
            others = [p for p in players if p != inv]
            suspects = [str(p) for p in rng.choice(others, size=min(len(others), int(
                rng.integers(1, 3))), replace=False)]
            penalties = sum(not any(c.get("colour") == s for c in clues) for s in suspects)
        else:
            penalties = 0 if own else 1
        found += len(victims)
        throwback += [inv] * penalties
        order = [throwback[i] for i in rng.permutation(len(throwback))]
        t = throw_all(order, t_close + rng.uniform(1.5, 3.5))
        t += rng.uniform(0.5, 2.0)
        turn += 1
    for _ in range(int(rng.integers(0, 3))):
        tk = _free_time(sc, rng, 4.5, sc.duration - 1.0, 0.5,
                        extra=[(a - 1, b + 1) for a, b, _k in sc.lifted])
        if tk is not None:
            add_table_knock(tw, sc, rng, tk)


def build_scene(tw: Tower, scenario: str, duration: float) -> Scene:
    rng = np.random.default_rng([0xE, tw.seed, SCENARIOS.index(scenario) + 1])
    sc = Scene(duration=duration)
    t_start = float(rng.uniform(4.3, min(6.5, duration - 3.5)))
    if scenario == "game":
        scenario_game(tw, sc, rng, t_start)
    else:
        scenario_throws(tw, sc, rng, scenario, t_start)
    # nothing may touch the tower before the quiet first 4 s are over
    assert all(x["t_first_impact"] >= 4.0 for x in sc.truth["landings"])
    return sc


# --------------------------------------------------------------------------- rendering


_SOS_CACHE: dict[tuple[float, float, int], np.ndarray] = {}


def _band_sos(lo: float, hi: float, rate: int) -> np.ndarray:
    key = (lo, hi, rate)
    if key not in _SOS_CACHE:
        hi_ok = min(hi, 0.45 * rate)
        lo_ok = min(lo, 0.5 * hi_ok)
        _SOS_CACHE[key] = signal.butter(2, [lo_ok, hi_ok], "bandpass", fs=rate, output="sos")
    return _SOS_CACHE[key]


def _xt_gain(tw: Tower, d: int) -> float:
    if d == 0:
        return 1.0
    return 10 ** (-(tw.xt_up_db if d > 0 else tw.xt_down_db) * abs(d) / 20)


def render_piezo(tw: Tower, sc: Scene, n_sets: int, rng: np.random.Generator) -> np.ndarray:
    """ADC codes (n_sets, 8) uint16 at the piezo rate."""
    rate = tw.piezo_rate
    tset = np.arange(n_sets) / rate
    skew = np.arange(N_CH) * tw.adc_conv_s  # channel k converts k conversions after the set
    x = np.zeros((n_sets, N_CH))
    f_scale = 1.0 / (1.0 + tw.ppm * 1e-6)  # physical frequencies seen on the device clock

    for t0, level, amp, kind in sc.strikes:
        f_src = tw.modes_f[level] * f_scale
        tau_src = tw.modes_tau[level].copy()
        a_src = tw.modes_a[level].copy()
        if kind == "edge":  # a glancing hit: short, bright
            tau_src *= 0.35
            a_src = a_src * (f_src / f_src[0]) ** 0.7
            a_src /= a_src.sum()
        chans = [level] if kind == "rattle" else range(N_CH)
        for j in chans:
            d = j - level
            g = amp * _xt_gain(tw, d) * tw.disc_gain[j]
            if g < 0.2:
                continue
            ts = t0 + abs(d) * tw.xt_delay_s
            win = 0.3 if kind == "thud" else min(0.3, 5 * float(tau_src.max()))
            i0 = int(np.searchsorted(tset, ts - skew[j]))
            i1 = min(n_sets, i0 + int(win * rate) + 1)
            if i0 >= n_sets:
                continue
            tt = tset[i0:i1] + skew[j] - ts
            a = a_src * (1 + (f_src / tw.xt_fc_hz) ** 2) ** (-abs(d) / 2) if d else a_src
            sig = (a[:, None] * np.exp(-tt / tau_src[:, None])
                   * np.sin(2 * np.pi * f_src[:, None] * tt)).sum(0)
            if d:  # the cardboard also sets the receiving plate ringing in its own modes
                fr, tr_, ar = (tw.modes_f[j][:2] * f_scale, tw.modes_tau[j][:2],
                               tw.modes_a[j][:2])
                sig += 0.35 * (ar[:, None] * np.exp(-tt / tr_[:, None])
                               * np.sin(2 * np.pi * fr[:, None] * tt)).sum(0)
            else:
                # contact click (0.2-0.6 ms half sine: often missed between samples) and the
                # plate's own low mode moving the disc
                w = 0.0004
                sig += 0.5 * np.where(tt < w, np.sin(np.pi * np.minimum(tt, w) / w), 0.0)
                f0 = tw.plate_f0[level] * f_scale
                sig += 0.06 * np.exp(-tt * tw.plate_zeta[level] * 2 * np.pi * f0) * np.sin(
                    2 * np.pi * f0 * tt)
            if kind == "thud":  # a module set down / a hand: a dull 80-250 Hz thump
                ft = rng.uniform(80, 250)
                sig = 0.3 * sig + np.exp(-tt / 0.03) * np.sin(2 * np.pi * ft * tt)
            x[i0:i1, j] += g * sig

    for t0, f, tau, amps in sc.thumps:
        i0 = int(np.searchsorted(tset, t0))
        i1 = min(n_sets, i0 + int(min(0.4, 6 * tau) * rate) + 1)
        if i0 >= n_sets:
            continue
        tt = tset[i0:i1] - t0
        x[i0:i1] += np.outer(np.exp(-tt / tau) * np.sin(2 * np.pi * f * f_scale * tt), amps)

    for t0, dur, level, amp in sc.rolls:
        i0 = int(np.searchsorted(tset, t0))
        i1 = min(n_sets, int(np.searchsorted(tset, t0 + dur)) + 1)
        if i1 - i0 < 4:
            continue
        nz = signal.sosfilt(_band_sos(150.0, 900.0, rate), rng.normal(size=i1 - i0))
        nz *= np.hanning(i1 - i0) / max(1e-9, nz.std())
        for j in range(N_CH):
            g = amp * _xt_gain(tw, j - level) * tw.disc_gain[j]
            if g >= 0.2:
                x[i0:i1, j] += g * nz

    for t0, t1, lo, hi, gains, syllabic in sc.rumbles:
        i0 = int(np.searchsorted(tset, t0))
        i1 = min(n_sets, int(np.searchsorted(tset, t1)))
        n = i1 - i0
        if n < 8:
            continue
        sos = _band_sos(lo, hi, rate)
        common = signal.sosfilt(sos, rng.normal(size=n))
        common /= max(1e-9, common.std())
        if syllabic:
            env = np.zeros(n)
            tt = np.arange(n) / rate
            for _ in range(int(n / rate * rng.uniform(3, 5)) + 1):
                c, w = rng.uniform(0, n / rate), rng.uniform(0.08, 0.3)
                env += rng.uniform(0.3, 1.0) * np.where(
                    np.abs(tt - c) < w / 2, np.cos(np.pi * (tt - c) / w) ** 2, 0.0)
        else:
            ramp = min(n // 2, int(0.15 * rate))
            env = np.ones(n)
            if ramp > 0:
                env[:ramp] = np.linspace(0, 1, ramp)
                env[n - ramp:] = np.linspace(1, 0, ramp)
        own = signal.sosfilt(sos, rng.normal(size=(n, N_CH)), axis=0)
        own /= np.maximum(1e-9, own.std(axis=0))
        x[i0:i1] += (env[:, None] * (0.8 * common[:, None] + 0.4 * own)) * gains

    # AC coupling of the disc signal (first order); hum and noise come in after the coupling
    b, a = signal.butter(1, tw.hp_hz, "highpass", fs=rate)
    x = signal.lfilter(b, a, x, axis=0)

    hum_amp = rng.uniform(0.2, 2.0, N_CH) * sc.hum_scale
    ph = rng.uniform(0, 2 * np.pi, len(tw.hum_harm))
    fm = tw.mains_hz * f_scale
    hum = sum(h * np.sin(2 * np.pi * HUM_ORDERS[i] * fm * tset + ph[i])
              for i, h in enumerate(tw.hum_harm) if h > 0)
    x += np.outer(hum, hum_amp)
    x += rng.normal(size=x.shape) * tw.piezo_noise

    # Discs of lifted modules are disconnected: the ADC pin keeps its bias and picks up mains;
    # the spring contacts crackle when they break and make.
    for t_lift, t_pu, k in sc.lifted:
        if k + 1 >= N_CH:
            continue
        i0 = int(np.searchsorted(tset, t_lift))
        i1 = int(np.searchsorted(tset, t_pu))
        fl = tw.float_hum * np.sin(2 * np.pi * fm * tset[i0:i1] + ph[0])
        for j in range(k + 1, N_CH):
            x[i0:i1, j] = fl * rng.uniform(0.7, 1.3) + rng.normal(0, 1.5, i1 - i0)
            for ic in (i0, i1):
                n_sp = int(rng.integers(2, 7))
                idx = ic + rng.integers(0, max(1, int(0.02 * rate)), n_sp)
                idx = idx[idx < n_sets]
                x[idx, j] += rng.choice([-1, 1], len(idx)) * rng.uniform(60, 300, len(idx))

    # ADC multiplexer ghosting: the sample-and-hold keeps part of the previous channel's charge
    # (high-impedance piezo front end); channel 0 follows channel 7 of the previous set.
    prev = np.empty_like(x)
    prev[:, 1:] = x[:, :-1]
    prev[1:, 0] = x[:-1, -1]
    prev[0, 0] = 0.0
    x += tw.ghost * prev
    return np.clip(np.rint(x + tw.bias), 0, 1023).astype(np.uint16)


@dataclass
class LoadOut:
    tau: np.ndarray  # reading times, s
    raw: np.ndarray  # (M, 8) int64 counts, 0 where not valid
    valid: np.ndarray  # (M, 8) bool
    dropouts: np.ndarray  # (M,) cumulative stale readings of the lagging HX711
    glitches: list[dict[str, Any]]


def render_load(tw: Tower, sc: Scene, rng: np.random.Generator, phase_s: float,
                end_s: float) -> LoadOut:
    """HX711 readings: plate force -> resonator -> creep -> boxcar + 4-tap filter -> counts."""
    fs = LOAD_FS
    n = int((end_s + HX_PRE_S) * fs) + 2
    tg = -HX_PRE_S + np.arange(n) / fs

    def idx(t: float) -> int:
        return min(n - 1, max(0, int(round((t + HX_PRE_S) * fs))))

    delta = np.zeros((n + 1, N_CH))
    for t, level, dm in sc.masses:
        delta[idx(t), level] += dm
    static = np.cumsum(delta, axis=0)[:n]
    press = np.zeros((n, N_CH))
    for t0, t1, level, amp, trem in sc.presses:
        i0, i1 = idx(t0), idx(t1)
        if i1 - i0 < 4:
            continue
        m = i1 - i0
        ramp = min(m // 2, int(rng.uniform(0.05, 0.3) * fs))
        env = np.ones(m)
        if ramp > 0:
            env[:ramp] = 0.5 - 0.5 * np.cos(np.linspace(0, np.pi, ramp))
            env[m - ramp:] = env[:ramp][::-1]
        wob = 1 + 0.15 * np.sin(2 * np.pi * rng.uniform(0.3, 1.0) * np.arange(m) / fs)
        if trem:
            wob += rng.uniform(0.05, 0.15) * np.sin(2 * np.pi * trem * np.arange(m) / fs)
        press[i0:i1, level] += amp * env * wob
    force = static + press
    for t, level, j in sc.impulses:
        force[idx(t), level] += j * fs
    x = np.empty_like(force)
    for ch in range(N_CH):
        w0 = 2 * np.pi * tw.plate_f0[ch] / (1 + tw.ppm * 1e-6)
        b, a = signal.bilinear([w0 * w0], [1, 2 * tw.plate_zeta[ch] * w0, w0 * w0], fs)
        x[:, ch] = signal.lfilter(b, a, force[:, ch])
        # creep: the cell gives a few % more over tens of seconds after a load step
        al = 1 / (tw.creep_tau_s[ch] * fs)
        x[:, ch] += tw.creep_c[ch] * signal.lfilter([al], [1, al - 1], static[:, ch] + press[:, ch])
    if sc.load_hum_counts:
        fm = tw.mains_hz / (1 + tw.ppm * 1e-6)
        x += np.outer(np.sin(2 * np.pi * fm * tg + rng.uniform(0, 2 * np.pi)),
                      sc.load_hum_counts * rng.uniform(0.3, 1.0, N_CH) / np.abs(tw.cpg))
    c = np.vstack([np.zeros((1, N_CH)), np.cumsum(x, axis=0) / fs])
    tc = np.concatenate([[tg[0] - 1 / fs], tg])

    period = 1 / tw.load_rate_true
    m_count = int(np.floor((end_s - phase_s) / period)) + 1
    tau = phase_s + np.arange(m_count) * period

    def box(t: np.ndarray) -> np.ndarray:
        out = np.empty((len(t), N_CH))
        for ch in range(N_CH):
            out[:, ch] = (np.interp(t, tc, c[:, ch]) - np.interp(t - period, tc, c[:, ch]))
        return out / period

    taps = [tw.offset + tw.cpg * box(tau - j * period) for j in range(len(HX_TAPS))]
    mask = np.ones((len(HX_TAPS), m_count, N_CH))
    valid = np.ones((m_count, N_CH), dtype=bool)
    glitches: list[dict[str, Any]] = []
    for t_lift, t_pu, k in sc.lifted:
        if k + 1 >= N_CH:
            continue
        chans = slice(k + 1, N_CH)
        need = 2 if tw.restart_unsettled else len(HX_TAPS)
        off = (tau >= t_lift) & (tau < t_pu + need * period)
        valid[off, chans] = False
        after = (tau >= t_pu) & (tau < t_pu + (len(HX_TAPS) + 1) * period)
        for j in range(len(HX_TAPS)):
            mask[j][after, chans] = (tau[after] - (j + 1) * period >= t_pu)[:, None]
        if rng.random() < 0.25:  # the contacts break during a shift-out: a torn 24-bit word
            m_break = int(np.searchsorted(tau, t_lift)) - 1
            if m_break >= 0:
                glitches.append({"m": m_break, "t": float(tau[m_break]),
                                 "channel": int(rng.integers(k + 1, N_CH)),
                                 "bits": int(rng.integers(6, 16))})
    raw = sum(HX_TAPS[j] * mask[j] * taps[j] for j in range(len(HX_TAPS)))
    # temperature: one room curve, each cell its own coefficient; plus a tiny random walk
    tn = tau / max(60.0, sc.duration)
    per = rng.uniform(200, 900)
    theta = 0.5 * tn * rng.choice([-1, 1]) + 0.5 * np.sin(
        2 * np.pi * tau / per + rng.uniform(0, 2 * np.pi))
    raw = raw + np.outer(theta, tw.drift_g * tw.cpg)
    scale = 1.0 if tw.load_rate == 80 else 0.45  # 10 SPS is quieter
    raw += rng.normal(size=raw.shape) * tw.hx_noise * scale
    raw += np.cumsum(rng.normal(size=raw.shape) * tw.hx_noise * 0.03, axis=0)
    raw = np.clip(np.rint(raw), S24_MIN, S24_MAX).astype(np.int64)
    for gl in glitches:
        ch, bits = gl["channel"], gl["bits"]
        if valid[gl["m"], ch]:
            raw[gl["m"], ch] = ((int(raw[gl["m"], ch]) | ((1 << bits) - 1)) + (1 << 23)) % (
                1 << 24) - (1 << 23)
    dropouts = np.zeros(m_count, dtype=np.int64)
    if tw.lag_channel is not None:  # its oscillator is slower: now and then no fresh data
        done = np.floor(np.arange(m_count) * (1 - tw.lag_frac))
        stale = np.concatenate([[False], np.diff(done) == 0])
        valid[stale, tw.lag_channel] = False
        dropouts = np.cumsum(stale)
    raw[~valid] = 0
    return LoadOut(tau, raw, valid, dropouts, glitches)


# --------------------------------------------------------------------------- assembly


def _us(t_dev0: int, s: float | np.ndarray) -> np.ndarray:
    """Device micros() at stream time s (4 us granularity of a 16 MHz AVR), unwrapped."""
    return (t_dev0 + np.floor(np.asarray(s) * 1e6).astype(np.int64)) // 4 * 4


def make_recording(seed: int, scenario: str, duration_s: float,
                   out_dir: Path | str) -> tuple[Path, Path]:
    """Write ``{scenario}_t{seed}.bin`` and its truth into out_dir; return both paths."""
    if scenario not in SCENARIOS:
        raise ArgumentError(f"unknown scenario {scenario!r}")
    if not 8.0 <= duration_s <= 7200.0:
        raise ArgumentError(f"duration {duration_s} s outside 8..7200")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    tw = draw_tower(seed)
    sc = build_scene(tw, scenario, float(duration_s))
    rng = np.random.default_rng([0xE, seed, SCENARIOS.index(scenario) + 1, 7])
    rate = tw.piezo_rate
    end_s = duration_s + 0.015
    n_sets = int(np.ceil(end_s * rate))
    piezo = render_piezo(tw, sc, n_sets, rng)

    # PIEZO frames: whatever the ring buffer holds when the UART is free
    sizes = rng.integers(tw.sets_lo, tw.sets_hi + 1, size=n_sets // tw.sets_lo + 2)
    starts = np.concatenate([[0], np.cumsum(sizes)])
    starts = starts[starts < n_sets]
    ends = np.minimum(np.append(starts[1:], n_sets), n_sets)
    first_send = (ends[0] - 1) / rate + 150e-6
    # The HX711s' phase: their first reading comes after the first PIEZO frame went out,
    # so stream time 0 is the first set.
    phase = first_send + rng.uniform(0.5e-3, 1 / tw.load_rate_true)
    load = render_load(tw, sc, rng, phase, end_s)

    if tw.start == "boot":
        t_dev0 = int(rng.uniform(0.3e6, 1.6e6)) // 4 * 4
    elif tw.u32_wrap:
        t_dev0 = (U32 * int(rng.integers(1, 3)) - int(rng.uniform(0.2, 0.8) * duration_s * 1e6))
        t_dev0 = t_dev0 // 4 * 4
    else:
        t_dev0 = int(rng.uniform(60e6, 4000e6)) // 4 * 4

    msgs: list[tuple[float, int, int, bytes]] = []  # (send time, tie-break, type, body)
    jit = rng.uniform(0, 8e-6, len(starts))
    jit[0] = 0.0
    p_us = _us(t_dev0, starts / rate + jit)
    p_us[0] = t_dev0
    sends = (ends - 1) / rate + rng.uniform(30e-6, 300e-6, len(starts))
    sends[0] = first_send
    le = piezo.astype("<u2")
    for i, (a, b) in enumerate(zip(starts, ends, strict=True)):
        body = struct.pack("<IB", int(p_us[i]) % U32, int(b - a)) + le[a:b].tobytes()
        msgs.append((float(sends[i]), 0, T_PIEZO, body))
    lat = rng.uniform(0.05e-3, 0.3e-3, len(load.tau))
    l_us = _us(t_dev0, load.tau + lat)
    s24 = np.frombuffer(s24_bytes(load.raw), dtype=np.uint8).reshape(len(load.tau), 24)
    vbits = (load.valid.astype(np.int64) << np.arange(N_CH)).sum(axis=1)
    for m in range(len(load.tau)):
        body = struct.pack("<IB", int(l_us[m]) % U32, int(vbits[m])) + s24[m].tobytes()
        msgs.append((float(load.tau[m] + lat[m] + 0.2e-3), 1, T_LOAD, body))
    # STATUS when uptime crosses a whole second
    first_s = (t_dev0 // 1_000_000 + 1) * 1_000_000
    n_status = 0
    for up_us in range(first_s, t_dev0 + int(duration_s * 1e6), 1_000_000):
        s = (up_us - t_dev0) / 1e6
        m = int(np.searchsorted(load.tau, s))
        timeouts = int(load.dropouts[m - 1]) if m > 0 else 0
        body = struct.pack("<IHHHBB", (up_us // 1000) % U32, 0, 0, timeouts & 0xFFFF,
                           int(rng.integers(38, 62)), 0)
        msgs.append((s + 1e-4, 2, T_STATUS, body))
        n_status += 1
    msgs.sort(key=lambda r: (r[0], r[1]))

    out = bytearray()
    cut_bytes = 0
    if tw.mid_frame:  # the port was opened while an earlier frame was on the wire
        old = struct.pack("<IB", int(rng.integers(0, U32)), 8) + np.clip(
            rng.normal(512, 3, 64), 0, 1023).astype("<u2").tobytes()
        enc = frame(T_PIEZO, int(rng.integers(0, 65536)), old)
        cut_bytes = int(rng.integers(3, len(enc) - 2))
        out += enc[cut_bytes:]
    seq = 0 if tw.start == "boot" else int(rng.integers(0, 65536))
    hello = struct.pack("<BBBBBBHHB", 1, *tw.fw, N_CH, N_CH, tw.piezo_rate, tw.load_rate, 10)
    hello += tw.device_id
    out += frame(T_HELLO, seq, hello)
    seq += 1
    n_ack = 0
    if tw.start == "getinfo":  # host: GET_INFO (HELLO, ACK), then START all streams (ACK)
        host_seq = int(rng.integers(0, 65535))
        for cmd, hs in ((0x81, host_seq), (0x82, host_seq + 1)):
            out += frame(T_ACK, seq, struct.pack("<BHB", cmd, hs & 0xFFFF, 0))
            seq += 1
            n_ack += 1
    for _, _, mtype, body in msgs:
        out += frame(mtype, seq, body)
        seq += 1
    end_cut = 0
    if tw.end_cut:  # `cat` stopped in the middle of the last frame
        last = out.rfind(b"\x00", 0, len(out) - 1)
        end_cut = int(rng.integers(1, len(out) - last - 1))
        del out[len(out) - end_cut:]
    counts = {"piezo_frames": len(starts), "piezo_sets": n_sets, "load": len(load.tau),
              "status": n_status, "acks": n_ack}
    if end_cut:  # the torn last frame is not a message
        counts[{T_PIEZO: "piezo_frames", T_LOAD: "load", T_STATUS: "status"}[msgs[-1][2]]] -= 1
    name = f"{scenario}_t{seed}"
    bin_path = out_dir / f"{name}.bin"
    bin_path.write_bytes(bytes(out))
    truth = make_truth(tw, sc, scenario, seed, duration_s, load)
    truth["start"] = {"boot": tw.start == "boot", "mid_frame": tw.mid_frame,
                      "cut_bytes": cut_bytes, "u32_wrap": tw.u32_wrap, "t_us_start": t_dev0 % U32,
                      "end_cut_bytes": end_cut}
    truth["counts"] = counts
    truth["wire_bytes_per_s"] = len(out) / duration_s
    truth_path = out_dir / f"{name}.truth.json"
    truth_path.write_text(json.dumps(truth, indent=1, default=_json_default) + "\n")
    return bin_path, truth_path


def _json_default(o: Any) -> Any:
    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, np.floating):
        return float(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    raise TypeError(type(o))


def _r(x: Any) -> Any:
    """Round floats in truth records to microseconds / 6 digits, recursively."""
    if isinstance(x, dict):
        return {k: _r(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_r(v) for v in x]
    if isinstance(x, float | np.floating):
        return round(float(x), 6)
    return x


def make_truth(tw: Tower, sc: Scene, scenario: str, seed: int, duration_s: float,
               load: LoadOut) -> dict[str, Any]:
    tr = {k: sorted(v, key=lambda r: r["t"]) for k, v in sc.truth.items()}
    return _r({
        "format": TRUTH_FORMAT, "model": "E", "scenario": scenario, "seed": seed,
        "duration_s": duration_s, "cells": tw.cells,
        **tr,
        "tower": {
            "piezo_rate_hz": tw.piezo_rate, "load_rate_hz": tw.load_rate,
            "load_rate_true_hz": tw.load_rate_true, "clock_ppm": tw.ppm,
            "counts_per_g": tw.cpg.tolist(), "reversed_level": tw.reversed_level,
            "disc_gain_db": (20 * np.log10(tw.disc_gain)).tolist(),
            "plate_f0_hz": tw.plate_f0.tolist(), "plate_zeta": tw.plate_zeta.tolist(),
            "piezo_modes_hz": [f.tolist() for f in tw.modes_f],
            "crosstalk_db_per_level": {"up": tw.xt_up_db, "down": tw.xt_down_db},
            "adc_ghost": tw.ghost, "adc_channel_skew_us": tw.adc_conv_s * 1e6,
            "hx711_noise_counts": tw.hx_noise.tolist(), "creep_frac": tw.creep_c.tolist(),
            "drift_g": tw.drift_g.tolist(), "lag_channel": tw.lag_channel,
            "lag_dropouts": int(load.dropouts[-1]) if len(load.dropouts) else 0,
            "restart_unsettled": tw.restart_unsettled, "torn_reads": load.glitches,
            "mains_hz": tw.mains_hz, "cube_mass_g": {"light": tw.mass_light,
                                                     "heavy": tw.mass_heavy},
            "knock_prob": tw.knock_prob, "sets_per_frame": [tw.sets_lo, tw.sets_hi],
        },
    })


# --------------------------------------------------------------------------- CLI


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, exit 2
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(2)


def main(argv: list[str] | None = None) -> int:
    p = _Parser(prog="make_recordings_e.py", description=__doc__.split("\n")[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--towers", type=int, default=8)
    p.add_argument("--first-seed", type=int, default=1)
    p.add_argument("--duration", type=float, default=120.0, help="seconds per recording")
    p.add_argument("--scenarios", nargs="+", choices=SCENARIOS, default=list(SCENARIOS))
    args = p.parse_args(argv)
    if args.towers < 1:
        p.error("--towers must be at least 1")
    if args.first_seed < 0:
        p.error("--first-seed must be >= 0")
    if not 8.0 <= args.duration <= 7200.0:
        p.error("--duration must be between 8 and 7200 seconds")
    if args.out.exists() and not args.out.is_dir():
        p.error(f"--out {args.out} exists and is not a directory")
    started = time.perf_counter()
    n = 0
    for seed in range(args.first_seed, args.first_seed + args.towers):
        for scenario in args.scenarios:
            try:
                rec, truth_path = make_recording(seed, scenario, args.duration, args.out)
            except OSError as exc:
                print(f"make_recordings_e.py: cannot write {args.out}: {exc}", file=sys.stderr)
                return 2
            doc = json.loads(truth_path.read_text())
            print(f"{rec.name}: {len(doc['landings'])} landings "
                  f"({sum(x['knocked'] for x in doc['landings'])} knocked), "
                  f"{len(doc['lifts'])} lifts, {len(doc['knocks'])} knocks", file=sys.stderr)
            n += 1
    print(f"{n} recordings in {time.perf_counter() - started:.1f} s -> {args.out}",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
