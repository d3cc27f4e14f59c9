#!/usr/bin/env python3
"""Cross-check model AN: a family's kit played at sea, on a ferry or in a yacht's saloon.

A blind generator of test recordings for ``towerear detect`` (contracts.md sections 1-3)
and their ground truth (``towerear-crosscheck-truth/1``, as tools/crosscheck/score.py
reads it), with its own wire encoder; numpy, scipy and the standard library only.
README.md gives every figure: heave from an irregular sea on every cell in proportion to
its load; roll, pitch, heel and tacks (the tilt's cosine, off-axis loading, creeping
cubes, cubes by a hole that topple in with no throw); the diesel, hull slams, footsteps,
a child's bump, a door's cold air, announcements; throws on a moving floor; steadying
hands; the ship's 50/60 Hz or a power bank; devices already running.

Usage::

    .venv/bin/python tools/crosscheck_an/make_recordings_an.py --out /tmp/an --towers 8 \
        --first-seed 1 --duration 120 [--scenarios single rapid noisy game]
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
from typing import Any, NoReturn

import numpy as np
from scipy import signal

SCENARIOS = ("single", "rapid", "noisy", "game")
G = 9.81  # m/s^2
MODULE_H = 0.031  # m: a 25 cm tower of eight modules
CUBE_SIDE = 0.0095  # m: a 0.6 g beech cube is about 9.5 mm
CLEARANCE = MODULE_H - CUBE_SIDE  # how high a cube can bounce before it meets the plate above
MOTION_HZ = 50.0  # the ship's motion grid
LOAD_GRID_HZ = 1000.0  # the force on the cells, before the converters
GRAMS_PER_MNS_MS = 1000.0 / G  # an impulse of 1 mN s spread over 1 ms, in grams-force
COLOURS = ("yellow", "blue", "brown", "gray", "black", "white")
MS_SS = np.array([1.0, 2.5, 4.0, 5.0])  # simply supported square plate: (1,1) (1,2) (2,2) (1,3)
MS_CL = np.array([1.0, 2.04, 3.01, 3.66])  # clamped square plate (Leissa's tables)


# -- the wire: COBS, CRC-16/CCITT-FALSE, messages ------------------------------------------

def crc16(data: bytes) -> int:
    """CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, not reflected): binascii's crc_hqx."""
    return binascii.crc_hqx(data, 0xFFFF)


def cobs_encode(data: bytes) -> bytes:
    """Consistent-overhead byte stuffing, without the trailing delimiter."""
    out = bytearray()
    for chunk in data.split(b"\x00"):
        while len(chunk) >= 254:
            out += b"\xff" + chunk[:254]
            chunk = chunk[254:]
        out.append(len(chunk) + 1)
        out += chunk
    return bytes(out)


def frame(msg_type: int, seq: int, body: bytes) -> bytes:
    """One message, CRC appended, COBS-encoded and delimited by 0x00."""
    msg = struct.pack("<BH", msg_type, seq % 65536) + body
    return cobs_encode(msg + struct.pack("<H", crc16(msg))) + b"\x00"


def hello_body(tw: Tower) -> bytes:
    return struct.pack("<BBBBBBHHB", 1, *tw.fw, 8, 8, tw.piezo_rate_hz, tw.load_rate_hz,
                       10) + tw.device_id


# -- the tower ---------------------------------------------------------------------------------

def _u(rng: np.random.Generator, lo: float, hi: float,
       n: int | tuple[int, int] | None = None) -> Any:
    return rng.uniform(lo, hi) if n is None else rng.uniform(lo, hi, n)


@dataclass
class Tower:
    """Every figure of one tower, its sensors and its device (from the seed alone)."""

    seed: int
    device_id: bytes
    fw: tuple[int, int, int]
    piezo_rate_hz: int
    batch: int  # sets per PIEZO message
    adc_skew_s: float  # one conversion: channel k is sampled k x this after the set's stamp
    clock: str
    clock_err: float  # device clock: fast by this fraction
    bias: np.ndarray  # (8,) LSB
    pz_noise: np.ndarray  # (8,) LSB rms
    sens: np.ndarray  # (8,) LSB per mN s struck on the disc's own plate
    sens_base: np.ndarray  # (8,) LSB per m/s^2 of table acceleration
    hp_hz: np.ndarray  # (8,) the AC coupling's corner
    f_modes: np.ndarray  # (9, 4) Hz, plates 0..7 and the roof (8)
    q_modes: np.ndarray  # (9, 4)
    a_modes: np.ndarray  # (9, 4)
    xt: np.ndarray  # (9, 8): struck level -> channel
    xt_delay_s: float  # per level of distance
    load_rate_hz: int
    hx_err: float  # the HX711's own oscillator
    cpg: np.ndarray  # (8,) counts per gram
    zero_counts: np.ndarray  # (8,)
    ld_noise: np.ndarray  # (8,) counts rms
    plate_g: np.ndarray  # (8,) plate, disc and mount on each cell
    cell_fn: np.ndarray  # (8,) Hz, plate on its cell
    cell_zeta: np.ndarray  # (8,)
    off_axis: np.ndarray  # (8, 2): part of the lateral force (u, v) read as weight
    temp_coef: np.ndarray  # (8,) g per degree C of zero drift
    temp_tau_s: np.ndarray  # (8,) s: a cell's lag behind the air
    cube_g: float  # mean cube mass of this set
    restitution: float  # cube on card
    p_stop: np.ndarray  # (8,) odds a falling cube is stopped by plate L (1 on level 0)
    p_near: float  # odds a resting cube lies by the hole (levels >= 1)
    mu_eff: float  # lateral force / normal at which resting cubes creep
    hum_pz: np.ndarray  # (8,) LSB at the mains frequency
    hum_ld: np.ndarray  # (8,) counts at the mains frequency, before the converter

    def figures(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for k, v in self.__dict__.items():
            if isinstance(v, np.ndarray):
                out[k] = np.round(v, 6).tolist()
            elif isinstance(v, bytes):
                out[k] = v.hex()
            else:
                out[k] = v
        return out


def make_tower(seed: int) -> Tower:
    """The tower of ``seed``: card plates, discs, cells, converters, the device."""
    rng = np.random.default_rng([seed, 4141])
    piezo_rate = int(rng.choice([2000, 1600, 1000], p=[0.65, 0.2, 0.15]))
    # Greyboard plates 88-94 mm square, 1.5-2.0 mm thick, E 2.0-3.5 GPa, 700-900 kg/m^3;
    # between simply supported (lambda^2 19.7) and clamped (36.0); the hole and the disc
    # move each plate by +-12 %. The roof (8) is a plate like the others, without a sensor.
    a = _u(rng, 0.088, 0.094, 9)
    h = _u(rng, 0.0015, 0.002, 9)
    e_mod = _u(rng, 2.0e9, 3.5e9)
    rho = _u(rng, 700.0, 900.0)
    d_flex = e_mod * h**3 / (12 * (1 - 0.3**2))
    mix = _u(rng, 0.2, 0.9, 9)
    lam2 = 19.7 + (36.0 - 19.7) * mix
    f1 = lam2 / (2 * np.pi * a**2) * np.sqrt(d_flex / (rho * h)) * _u(rng, 0.88, 1.12, 9)
    ratios = mix[:, None] * MS_CL + (1 - mix[:, None]) * MS_SS
    f_modes = f1[:, None] * ratios * _u(rng, 0.97, 1.03, (9, 4))
    q1 = _u(rng, 9.0, 22.0, 9)  # card's loss factor 0.045-0.11
    q_modes = q1[:, None] * np.array([1.0, 0.85, 0.72, 0.62])
    a_modes = np.array([1.0, 0.5, 0.3, 0.2]) * _u(rng, 0.7, 1.3, (9, 4))
    near, far = _u(rng, 0.12, 0.3), _u(rng, 0.3, 0.5)
    dist = np.abs(np.arange(9)[:, None] - np.arange(8)[None, :])
    xt = np.where(dist == 0, 1.0, near * far ** np.maximum(dist - 1, 0))
    xt = xt * _u(rng, 0.85, 1.15, (9, 8))
    xt[np.arange(8), np.arange(8)] = 1.0
    xt[8] *= 0.5  # the roof is heard through level 7's walls
    ro = _u(rng, 0.8, 1.2) * _u(rng, 0.98, 1.02, 8)  # mV/V, one batch of 100 g cells
    cpg = ro * 1e-3 * 128 * 2**24 / 100.0
    load_rate = 80 if rng.random() < 0.7 else 10
    ld_noise = (39.0 if load_rate == 80 else 21.0) * _u(rng, 0.9, 1.3, 8)
    clock = "crystal" if rng.random() < 0.5 else "resonator"
    clock_err = _u(rng, -30e-6, 30e-6) if clock == "crystal" else _u(rng, -3e-3, 3e-3)
    p_stop = _u(rng, 0.2, 0.42, 8)
    p_stop[0] = 1.0
    return Tower(
        seed=seed, device_id=bytes(rng.integers(0, 256, 8, dtype=np.uint8)),
        fw=(1, int(rng.integers(0, 4)), int(rng.integers(0, 10))),
        piezo_rate_hz=piezo_rate, batch=int(rng.choice([5, 8, 10, 14])),
        adc_skew_s=(26e-6 if rng.random() < 0.4 else 52e-6), clock=clock,
        clock_err=float(clock_err), bias=512 + _u(rng, -2.0, 2.0, 8),
        pz_noise=_u(rng, 0.4, 0.9, 8), sens=_u(rng, 80.0, 200.0, 8),
        sens_base=_u(rng, 3.0, 8.0, 8), hp_hz=_u(rng, 1.0, 5.0, 8),
        f_modes=f_modes, q_modes=q_modes, a_modes=a_modes, xt=xt,
        xt_delay_s=_u(rng, 0.08e-3, 0.2e-3), load_rate_hz=load_rate,
        hx_err=_u(rng, -0.02, 0.02), cpg=cpg,
        zero_counts=rng.uniform(-0.02, 0.02, 8) * 100.0 * cpg, ld_noise=ld_noise,
        plate_g=_u(rng, 7.0, 16.0, 8), cell_fn=_u(rng, 40.0, 120.0, 8),
        cell_zeta=_u(rng, 0.1, 0.25, 8),
        off_axis=rng.uniform(0.01, 0.04, (8, 2)) * rng.choice([-1.0, 1.0], (8, 2)),
        temp_coef=rng.uniform(0.005, 0.03, 8) * rng.choice([-1.0, 1.0], 8),
        temp_tau_s=_u(rng, 20.0, 90.0, 8), cube_g=_u(rng, 0.35, 0.75),
        restitution=_u(rng, 0.2, 0.4), p_stop=p_stop, p_near=_u(rng, 0.04, 0.1),
        mu_eff=_u(rng, 0.25, 0.35), hum_pz=_u(rng, 0.3, 1.5, 8),
        hum_ld=_u(rng, 100.0, 800.0, 8),
    )


# -- the ship: sea, motions, engine, supply ----------------------------------------------------

# Vertical acceleration at the table (rms, in g) and roll (rms, degrees) by sea state.
SEA_STATES = {"calm": ((0.004, 0.01), (0.4, 1.2)), "moderate": ((0.012, 0.025), (1.2, 3.0)),
              "rough": ((0.03, 0.045), (3.0, 5.0))}


@dataclass
class Jolt:
    """A short shake of the table: a damped sine of vertical acceleration (m/s^2)."""

    t: float
    kind: str  # slam, whip, bump, step, door
    amp: float  # m/s^2
    f: float  # Hz
    zeta: float
    lateral_g: float = 0.0  # a sideways half-sine push of 0.2 s (a bump), in g
    psi: float = 0.0  # its direction in the tower's axes

    def span(self) -> float:
        return min(6.0, 4.6 / (2 * np.pi * self.f * self.zeta))


def jolt_wave(jolts: list[Jolt], t: np.ndarray, f_max: float = 1e9) -> np.ndarray:
    """The vertical acceleration of ``jolts`` (those below ``f_max`` Hz) at times ``t``."""
    out = np.zeros(len(t))
    for j in jolts:
        if j.f > f_max:
            continue
        i0, i1 = np.searchsorted(t, [j.t, j.t + j.span()])
        dt = t[i0:i1] - j.t
        out[i0:i1] += j.amp * np.exp(-2 * np.pi * j.f * j.zeta * dt) * np.sin(2 * np.pi * j.f * dt)
    return out


@dataclass
class Ship:
    """The vessel, its sea and supply, and its motion on a 50 Hz grid (device time)."""

    vessel: str  # ferry or yacht
    sea: str
    mode: str  # ferry: under way; yacht: sailing, motoring or motor-sailing
    tp_s: float
    gamma: float
    table_m: tuple[float, float, float]  # x fore-aft from the pitch centre, y, z above roll axis
    psi: float  # the tower's axes against the ship's
    engine_hz: float  # firing tone; 0 with the engine off
    engine_ms2: float  # rms vertical acceleration of the table from the engine
    rpm_hunt: float
    power: str  # ship50, ship60 or powerbank
    mains_hz: float
    t: np.ndarray = field(default_factory=lambda: np.zeros(0))
    heave: np.ndarray = field(default_factory=lambda: np.zeros(0))  # m/s^2 at the table
    roll: np.ndarray = field(default_factory=lambda: np.zeros(0))  # rad, with the heel
    pitch: np.ndarray = field(default_factory=lambda: np.zeros(0))  # rad
    n: np.ndarray = field(default_factory=lambda: np.zeros(0))  # normal specific force, g
    fu: np.ndarray = field(default_factory=lambda: np.zeros(0))  # lateral, tower axes, g
    fv: np.ndarray = field(default_factory=lambda: np.zeros(0))
    roll_dd: np.ndarray = field(default_factory=lambda: np.zeros(0))  # rad/s^2
    pitch_dd: np.ndarray = field(default_factory=lambda: np.zeros(0))
    n0: np.ndarray = field(default_factory=lambda: np.zeros(0))  # n without the jolts
    jolts: list[Jolt] = field(default_factory=list)
    tacks: list[float] = field(default_factory=list)
    heel_deg: float = 0.0
    figures: dict[str, Any] = field(default_factory=dict)

    def at(self, t: float) -> tuple[float, float, float]:
        """(normal, lateral u, lateral v) in g at time ``t``."""
        i = min(max(int(round(t * MOTION_HZ)), 0), len(self.t) - 1)
        return float(self.n[i]), float(self.fu[i]), float(self.fv[i])

    def lateral(self, t: float) -> float:
        return math.hypot(*self.at(t)[1:])


def _response(w: np.ndarray, wn: float, zeta: float) -> np.ndarray:
    """A second-order response (1 at low frequency) of a vessel's motion to the waves."""
    r = w / wn
    return 1.0 / (1 - r**2 + 2j * zeta * r)


def _spectral(rng: np.random.Generator, t: np.ndarray, w: np.ndarray, amp: np.ndarray,
              h: np.ndarray, rms: float, span: int) -> tuple[np.ndarray, np.ndarray]:
    """A motion of rms ``rms`` over the recording (its first ``span`` samples: wave groups
    would make a short one calmer or rougher than its sea) and its 2nd derivative."""
    a = amp * np.abs(h)
    ph = rng.uniform(0, 2 * np.pi, len(w)) + np.angle(h)
    c = np.cos(np.outer(t, w) + ph)
    x = c @ a
    a = a * rms / max(1e-12, float(np.std(x[:span])))
    return x * rms / max(1e-12, float(np.std(x[:span]))), -(c @ (a * w**2))


def plan_ship(rng: np.random.Generator, scenario: str, duration: float, quiet_until: float,
              tw: Tower, **over: Any) -> Ship:
    """The vessel, the sea and the motion over ``duration`` s (``over`` fixes choices)."""
    vessel = over.get("vessel") or ("ferry" if rng.random() < 0.6 else "yacht")
    sea = over.get("sea") or {"single": "calm" if rng.random() < 0.4 else "moderate",
                              "rapid": "calm" if rng.random() < 0.5 else "moderate",
                              "noisy": "rough",
                              "game": "calm" if rng.random() < 0.3 else "moderate"}[scenario]
    ferry = vessel == "ferry"
    if ferry:
        mode = "under way"
    elif scenario == "noisy":
        mode = "motor-sailing"
    else:
        mode = "sailing" if rng.random() < 0.6 else "motoring"
    tp = _u(rng, 5.0, 11.0) if ferry else _u(rng, 4.5, 8.0)
    gamma = float(rng.choice([1.0, 3.3]))  # Pierson-Moskowitz or JONSWAP peakedness
    (v_lo, v_hi), (r_lo, r_hi) = SEA_STATES[sea]
    vert_g, roll_deg = _u(rng, v_lo, v_hi), _u(rng, r_lo, r_hi)
    pitch_deg = roll_deg * (_u(rng, 0.25, 0.45) if ferry else _u(rng, 0.4, 0.7))
    table = ((_u(rng, -30.0, 30.0), _u(rng, 0.0, 8.0), _u(rng, 2.0, 10.0)) if ferry else
             (_u(rng, -2.5, 2.5), _u(rng, 0.0, 1.0), _u(rng, -0.5, 1.0)))
    engine = ferry or mode != "sailing"
    engine_hz = (_u(rng, 15.0, 25.0) if ferry else _u(rng, 25.0, 35.0)) if engine else 0.0
    engine_ms2 = 0.0
    if engine:
        engine_ms2 = _u(rng, 0.2, 0.5) if scenario == "noisy" else _u(rng, 0.05, 0.2)
    power = str(rng.choice(["ship50", "ship60", "powerbank"], p=[0.45, 0.3, 0.25]))
    sh = Ship(vessel, sea, mode, tp, gamma, table, _u(rng, 0.0, 2 * np.pi), engine_hz,
              engine_ms2, _u(rng, 0.003, 0.012), power,
              {"ship50": 50.0, "ship60": 60.0, "powerbank": 0.0}[power])
    for k, v in over.items():
        if hasattr(sh, k) and k not in ("vessel", "sea"):
            setattr(sh, k, v)
    # The sea: JONSWAP (gamma 3.3) or Pierson-Moskowitz (1) at peak period tp, 110
    # components at random frequencies (no repetition within a recording).
    f = np.sort(rng.uniform(0.03, 0.7, 110))
    w, wp = 2 * np.pi * f, 2 * np.pi / sh.tp_s
    sigma = np.where(w <= wp, 0.07, 0.09)
    s = w**-5.0 * np.exp(-1.25 * (wp / w) ** 4) * sh.gamma ** np.exp(
        -((w - wp) ** 2) / (2 * sigma**2 * wp**2))
    amp = np.sqrt(2 * s * (0.67 * 2 * np.pi / len(w)))
    t = np.arange(0.0, duration + 2.0, 1 / MOTION_HZ)
    # Waves shorter than the hull average out over it: a low-pass in wavenumber k = w^2/g
    # over the beam (roll) or half the length (heave, pitch). Ferry 20-30 x 120-200 m,
    # yacht 3.5-4.5 x 10-14 m.
    beam, length = (_u(rng, 20.0, 30.0), _u(rng, 120.0, 200.0)) if ferry else (
        _u(rng, 3.5, 4.5), _u(rng, 10.0, 14.0))
    k_w = w**2 / G
    by_beam = 1 / (1 + (k_w * beam / np.pi) ** 2)
    by_length = 1 / (1 + (k_w * length / (2 * np.pi)) ** 2)
    slope = amp * w**2 / G  # roll and pitch are driven by the wave slope
    if ferry:
        heave_n, roll_n, pitch_n = (_u(rng, 6.0, 9.0), _u(rng, 12.0, 20.0), _u(rng, 6.0, 9.0))
    else:
        heave_n, roll_n, pitch_n = (_u(rng, 2.5, 4.0), _u(rng, 5.0, 8.0), _u(rng, 3.0, 5.0))
    roll_z, pitch_z = (_u(rng, 0.06, 0.15), _u(rng, 0.25, 0.4)) if ferry else (
        _u(rng, 0.1, 0.2), _u(rng, 0.2, 0.35))
    span = int(duration * MOTION_HZ)
    roll, roll_dd = _spectral(rng, t, w, slope * by_beam, _response(
        w, 2 * np.pi / roll_n, roll_z), math.radians(roll_deg), span)
    pitch, pitch_dd = _spectral(rng, t, w, slope * by_length, _response(
        w, 2 * np.pi / pitch_n, pitch_z), math.radians(pitch_deg), span)
    # The family sits where the angles' share of the vertical motion stays within 70 %
    # of the sea state's figure; the heave makes up the rest.
    x, y, z = sh.table_m
    lim = 0.7 * vert_g * G
    x = math.copysign(min(abs(x), lim / max(1e-9, float(np.std(pitch_dd)))), x)
    y = min(y, 0.5 * lim / max(1e-9, float(np.std(roll_dd))))
    sh.table_m = (x, y, z)
    by_angles = x * pitch_dd + y * roll_dd
    heave_resp = _response(w, 2 * np.pi / heave_n, _u(rng, 0.3, 0.5))
    heave, _ = _spectral(rng, t, w, amp * by_length, heave_resp * w**2, 1.0, span)
    # scale the heave so that heave + the angles' share has the sea state's rms
    cov = np.cov(heave[:span], by_angles[:span])
    target = (vert_g * G) ** 2
    heave_rms = (-cov[0, 1] + math.sqrt(max(0.0, cov[0, 1] ** 2 - cov[0, 0] * (
        cov[1, 1] - target)))) / cov[0, 0]
    heave = heave * heave_rms
    rms_angles = math.sqrt(float(cov[1, 1]))
    # A yacht under sail heels to leeward and tacks now and then: the heel changes side
    # in 6-12 s. A ferry keeps a small list.
    heel = np.zeros_like(t)
    if mode in ("sailing", "motor-sailing"):
        sh.heel_deg = _u(rng, 5.0, 12.0) if mode == "sailing" else _u(rng, 4.0, 10.0)
        n_tacks = int(rng.integers(1, 3)) if scenario == "noisy" else int(rng.integers(0, 2))
        sh.tacks = sorted(float(x) for x in rng.uniform(quiet_until + 5, duration - 10, n_tacks)
                          ) if duration > quiet_until + 20 else []
        side = np.ones_like(t)
        for tk in sh.tacks:
            dur = _u(rng, 6.0, 12.0)
            s_t = np.clip((t - tk) / dur, 0.0, 1.0)
            side = side * (1 - 2 * (3 * s_t**2 - 2 * s_t**3))
        heel = math.radians(sh.heel_deg) * side
    elif ferry:
        sh.heel_deg = _u(rng, -2.0, 2.0)
        heel[:] = math.radians(sh.heel_deg)
    sh.t, sh.heave, sh.roll, sh.pitch = t, heave, roll + heel, pitch
    sh.figures = {"vert_rms_g": vert_g, "roll_rms_deg": roll_deg, "pitch_rms_deg": pitch_deg,
                  "heave_natural_s": heave_n, "roll_natural_s": roll_n,
                  "pitch_natural_s": pitch_n, "beam_m": beam, "length_m": length,
                  "heave_only_rms_ms2": heave_rms, "by_angles_rms_ms2": rms_angles}
    sh.roll_dd, sh.pitch_dd = roll_dd, pitch_dd
    return sh


def finish_motion(sh: Ship) -> None:
    """The specific forces at the table from the motions and the low jolts (after planning)."""
    x, y, z = sh.table_m
    roll_dd, pitch_dd = sh.roll_dd, sh.pitch_dd
    sh.n0 = np.cos(sh.roll) * np.cos(sh.pitch) + (sh.heave + x * pitch_dd + y * roll_dd) / G
    sh.n = sh.n0 + jolt_wave(sh.jolts, sh.t, f_max=15.0) / G
    f_y = np.sin(sh.roll) - z * roll_dd / G
    f_x = np.sin(sh.pitch) - z * pitch_dd / G
    for j in sh.jolts:  # a bump pushes the table sideways for 0.2 s
        if j.lateral_g:
            sel = (sh.t >= j.t) & (sh.t < j.t + 0.2)
            push = j.lateral_g * np.sin(np.pi * (sh.t[sel] - j.t) / 0.2)
            f_x[sel] += push * math.cos(j.psi - sh.psi)
            f_y[sel] += push * math.sin(j.psi - sh.psi)
    c, s = math.cos(sh.psi), math.sin(sh.psi)
    sh.fu, sh.fv = c * f_x + s * f_y, -s * f_x + c * f_y


def engine_wave(sh: Ship, t: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The table's vertical acceleration from the diesel (m/s^2) at times ``t``.

    Firing tone f with the 4-stroke's half orders and harmonics (0.5, 1, 1.5, 2, 3 f),
    rpm hunting with the heave (the propeller's load), and combustion noise 60-400 Hz (10 %).
    """
    if sh.engine_hz <= 0 or sh.engine_ms2 <= 0:
        return np.zeros(len(t))
    heave = np.interp(t, sh.t, sh.heave) / max(1e-9, float(np.std(sh.heave)) or 1.0)
    dt = np.diff(t, prepend=t[0] - (t[1] - t[0] if len(t) > 1 else 1e-3))
    phase = 2 * np.pi * np.cumsum(sh.engine_hz * (1 + sh.rpm_hunt * np.tanh(heave)) * dt)
    orders = np.array([0.5, 1.0, 1.5, 2.0, 3.0])
    rel = np.array([0.3, 1.0, 0.25, 0.45, 0.2])
    ph = np.random.default_rng(int(sh.engine_hz * 1000)).uniform(0, 2 * np.pi, 5)
    x = sum(r * np.sin(o * phase + p) for o, r, p in zip(orders, rel, ph, strict=True))
    x = np.asarray(x) / math.sqrt(float(np.sum(rel**2)) / 2)
    fs = 1 / float(np.median(dt))
    if fs > 900:
        x = x + 0.1 * _band_noise(rng, len(t), 60.0, 400.0, fs)
    return sh.engine_ms2 * x


def mains_phase(sh: Ship, t: np.ndarray, clock_err: float) -> np.ndarray:
    """The supply's phase at device times ``t``: a ferry's generators wander +-0.2-0.5 Hz,
    a yacht's inverter keeps its frequency."""
    if sh.mains_hz <= 0:
        return np.zeros(len(t))
    rng = np.random.default_rng(int(sh.mains_hz + 1000 * sh.tp_s))
    wander = 1.0 if sh.vessel == "ferry" else 0.0
    dev = sum(wander * _u(rng, 0.07, 0.17) * np.sin(
        2 * np.pi * t / _u(rng, 20.0, 80.0) + _u(rng, 0, 6.3)) for _ in range(3))
    f = (sh.mains_hz + np.asarray(dev)) / (1 + clock_err)
    dt = np.diff(t, prepend=t[0])
    return 2 * np.pi * (np.cumsum(f * dt) + f[0] * t[0])


# -- cubes and how they fall ---------------------------------------------------------------------

@dataclass
class Cube:
    """One wooden cube: where it rests and how it lies there."""

    fid: int
    colour: str
    mass_g: float
    e: float
    level: int | None = None
    t_rest: float = 0.0
    margin: float | None = None  # lateral / normal force that tips it into the hole
    toward: float = 0.0  # the hole's direction from it, tower axes
    offset_g: float = 0.0  # what creeping off-centre changed in its cell's reading
    landing: dict[str, Any] | None = None


@dataclass
class Impact:
    """A contact on a plate (level 0..7, 8 the roof): impulse in mN s, contact time in ms."""

    t: float
    level: int
    j: float
    kind: str
    tau_ms: float = 0.25


class Scene:
    """Everything that happens in one recording, on the device's clock."""

    def __init__(self, tw: Tower, scenario: str, duration: float, rng: np.random.Generator,
                 ship: Ship, quiet_until: float) -> None:
        self.tw, self.scenario, self.duration, self.rng = tw, scenario, duration, rng
        self.ship, self.quiet_until = ship, quiet_until
        self.cubes: list[Cube] = []
        self.impacts: list[Impact] = []
        self.steps: list[tuple[float, int, float]] = []  # (t, level, grams) on the cell
        self.presses: list[dict[str, Any]] = []
        self.scrapes: list[tuple[float, float, int, float]] = []  # t, s, level, LSB
        self.landings: list[dict[str, Any]] = []
        self.knockdowns: list[dict[str, Any]] = []
        self.removals: list[dict[str, Any]] = []
        self.lifts: list[dict[str, Any]] = []
        self.closes: list[dict[str, Any]] = []
        self.knocks: list[dict[str, Any]] = []
        self.shifts: list[dict[str, Any]] = []
        self.people: dict[str, list[Any]] = {"footsteps": [], "announcements": [], "doors": []}
        self.closed_since = 0.0  # slides and creep only in a closed tower
        self.open_levels = 8  # levels >= this are lifted off
        self.creep_done = 0.0
        self.game: dict[str, Any] = {}

    # cubes ----------------------------------------------------------------------------------
    def new_cube(self, colour: str) -> Cube:
        c = Cube(len(self.cubes), colour, self.tw.cube_g * _u(self.rng, 0.95, 1.05),
                 self.tw.restitution * _u(self.rng, 0.9, 1.1))
        self.cubes.append(c)
        return c

    def resting(self, level: int | None = None) -> list[Cube]:
        return [c for c in self.cubes if c.level is not None
                and (level is None or c.level == level)]

    def _hit(self, t: float, level: int, j: float, kind: str, rec: dict[str, Any],
             tau_ms: float = 0.25) -> None:
        self.impacts.append(Impact(t, level, j, kind, tau_ms))
        rec["impacts"].append([round(t, 5), level, round(j, 4), kind])
        rec.setdefault("t_first_impact", t)

    def throw(self, t: float, cube: Cube, style: str, **extra: Any) -> dict[str, Any] | None:
        """Release ``cube`` above the entry at ``t``; its landing, or None if it missed."""
        rng = self.rng
        h, v = {"drop": (_u(rng, 0.005, 0.02), 0.0), "toss": (_u(rng, 0.03, 0.12),
                _u(rng, 0.3, 1.0)), "flick": (_u(rng, 0.08, 0.2), _u(rng, 1.0, 2.5))}[style]
        rec: dict[str, Any] = {"kind": "throw", "style": style, "fid": cube.fid,
                               "colour": cube.colour, "mass_g": round(cube.mass_g, 4),
                               "restitution": round(cube.e, 4), "t_release": t,
                               "knocked": False, "impacts": [], **extra}
        n_g = G * self.ship.at(t)[0]
        dt = (-v + math.sqrt(v * v + 2 * n_g * h)) / n_g
        t, v = t + dt, v + n_g * dt
        lat = self.ship.lateral(t)  # the floor moves: the hand is less sure
        if rng.random() < min(0.06, 0.4 * max(0.0, lat - 0.04)):
            self._hit(t, 8, cube.mass_g * v * _u(rng, 0.3, 0.8), "roof", rec)
            t_table = t + _u(rng, 0.2, 0.4)
            self._hit(t_table, 0, cube.mass_g * 2.5 * 0.3, "table", rec, 1.0)
            self.knocks.append({"t": t, "t_end": t_table + 0.1, "kind": "miss",
                                "fid": cube.fid})
            return None
        if rng.random() < min(0.5, 0.12 + 1.2 * lat):
            self._hit(t, 8, cube.mass_g * v * _u(rng, 0.1, 0.4), "entry", rec)
            v *= _u(rng, 0.7, 0.9)
        return self._fall(cube, t, 8 * MODULE_H, v, 7, rec)

    def _fall(self, cube: Cube, t: float, z: float, v: float, below: int,
              rec: dict[str, Any]) -> dict[str, Any]:
        """The cube at height ``z`` moving down at ``v`` at ``t``: its fall, bounces and rest."""
        rng, tw, m = self.rng, self.tw, cube.mass_g
        n_g = G * max(0.5, self.ship.at(t)[0])
        lv = below
        while True:
            d = max(z - lv * MODULE_H, 1e-4)
            dt = (-v + math.sqrt(v * v + 2 * n_g * d)) / n_g
            t, v, z = t + dt, v + n_g * dt, lv * MODULE_H
            p_stop = 1.0 if lv == 0 else min(0.9, tw.p_stop[lv] + 0.8 * self.ship.lateral(t))
            if rng.random() >= p_stop:  # through the hole, perhaps clipping its rim
                if rng.random() < 0.25:
                    self._hit(t, lv, m * v * _u(rng, 0.1, 0.4), "rim", rec)
                    v *= _u(rng, 0.75, 0.95)
                lv -= 1
                continue
            j = m * v * (1 + cube.e)
            self._hit(t, lv, j, "strike", rec)
            self._knock(t, lv, j, cube, rec)
            vb, hopped, t_on = cube.e * v, False, t
            while vb > 0.12:
                if lv >= 1 and vb > 0.3 and rng.random() < 0.06:  # the bounce lands in the hole
                    t, v, hopped = t + vb / n_g, 0.3 * vb, True
                    break
                if vb**2 / (2 * n_g) > CLEARANCE and lv < 8 and rng.random() < 0.5:
                    v_top = math.sqrt(vb**2 - 2 * n_g * CLEARANCE)
                    self._hit(t + (vb - v_top) / n_g, lv + 1, m * v_top * (1 + cube.e),
                              "underside", rec)
                    back = cube.e * v_top
                    v_land = math.sqrt(back**2 + 2 * n_g * CLEARANCE)
                    t += (vb - v_top) / n_g + (v_land - back) / n_g
                else:
                    v_land, t = vb, t + 2 * vb / n_g
                self._hit(t, lv, m * v_land * (1 + cube.e), "bounce", rec)
                t_on, vb = t, cube.e * v_land
            if hopped:
                lv -= 1
                continue
            for _ in range(int(rng.integers(1, 4))):  # the cube tumbles flat
                t += _u(rng, 0.01, 0.04)
                self._hit(t, lv, _u(rng, 0.01, 0.04), "tick", rec)
            t += _u(rng, 0.01, 0.06)
            self.steps.append((t_on, lv, m))
            lat = self.ship.lateral(t)
            cube.margin = None
            if lv >= 1 and rng.random() < tw.p_near * (1 + 2 * lat):
                cube.margin, cube.toward = _u(rng, 0.03, 0.2), _u(rng, 0.0, 2 * np.pi)
                t_tip = self._tips(cube, t, t + 0.5)
                if t_tip is not None:  # it rolls into the hole at once: part of this fall
                    self._hit(t_tip, lv, _u(rng, 0.02, 0.05), "rim", rec)
                    self.steps.append((t_tip, lv, -m))
                    t, v, z, lv = t_tip, 0.1, lv * MODULE_H, lv - 1
                    continue
            cube.level, cube.t_rest, cube.offset_g, cube.landing = lv, t, 0.0, rec
            rec.update({"t": t, "floor": lv, "t_on_plate": t_on,
                        "near_hole": cube.margin is not None})
            self.landings.append(rec)
            return rec

    def _tips(self, cube: Cube, t0: float, t1: float) -> float | None:
        """When the lateral force first tips ``cube`` into its hole in [t0, t1), if it does."""
        sh = self.ship
        i0, i1 = int(math.ceil(t0 * MOTION_HZ)), min(int(t1 * MOTION_HZ), len(sh.t))
        if cube.margin is None or i1 <= i0:
            return None
        push = (sh.fu[i0:i1] * math.cos(cube.toward) + sh.fv[i0:i1] * math.sin(cube.toward))
        hit = np.flatnonzero(push / sh.n[i0:i1] > cube.margin)
        return float(sh.t[i0 + hit[0]]) if hit.size else None

    def _leave(self, cube: Cube, t: float) -> None:
        assert cube.level is not None
        self.steps.append((t, cube.level, -(cube.mass_g + cube.offset_g)))
        cube.level, cube.margin = None, None

    def _knock(self, t: float, lv: int, j: float, by: Cube, rec: dict[str, Any]) -> None:
        """A strike on a plate may knock a resting cube down its hole (one at most)."""
        rng = self.rng
        if lv == 0 or lv >= self.open_levels:
            return
        for c in rng.permutation(np.array(self.resting(lv), dtype=object)):
            odds = 0.15 * min(1.0, j) if c.margin is not None else 0.0012 * min(1.5, j)
            if rng.random() < odds:
                t_off = t + _u(rng, 0.005, 0.03)
                rec["caused_knockdown"] = True
                self._drop_from(c, t_off, "knocked", by.fid, _u(rng, 0.1, 0.3))
                return

    def _drop_from(self, c: Cube, t: float, kind: str, by_fid: int | None, v: float) -> None:
        """A resting cube leaves its plate through the hole (knocked or slid) and falls on."""
        lv = c.level
        assert lv is not None
        self._leave(c, t)
        rec: dict[str, Any] = {"kind": kind, "fid": c.fid, "colour": c.colour,
                               "mass_g": round(c.mass_g, 4), "restitution": round(c.e, 4),
                               "t_release": t, "knocked": True, "knocked_from": lv,
                               "impacts": []}
        self._fall(c, t, lv * MODULE_H, v, lv - 1, rec)
        self.knockdowns.append({"t": t, "from": lv, "to": rec["floor"], "fid": c.fid,
                                "by_fid": by_fid, "cause": "strike" if by_fid is not None
                                else "slide"})

    def advance(self, until: float) -> None:
        """Slides and creep in the closed tower up to ``until`` (none in the last 2.5 s)."""
        sh, rng = self.ship, self.rng
        until = min(until, self.duration - 2.5)
        while True:
            start = max(self.closed_since, self.creep_done)
            slide: tuple[float, Cube] | None = None
            for c in self.resting():
                if c.margin is None:
                    continue
                t_tip = self._tips(c, max(c.t_rest + 0.5, self.closed_since), until)
                if t_tip is not None and (slide is None or t_tip < slide[0]):
                    slide = (t_tip, c)
            i0, i1 = int(math.ceil(start * MOTION_HZ)), min(int(until * MOTION_HZ), len(sh.t))
            creep = None
            if i1 > i0:  # the lateral force rises through the friction the cubes have
                ratio = np.hypot(sh.fu, sh.fv)[max(i0 - 1, 0):i1] / sh.n[max(i0 - 1, 0):i1]
                up = np.flatnonzero((ratio[1:] > self.tw.mu_eff) & (ratio[:-1] <= self.tw.mu_eff))
                creep = float(sh.t[max(i0 - 1, 0) + up[0] + 1]) if up.size else None
            if slide is None and creep is None:
                self.creep_done = max(self.creep_done, until)
                return
            if slide is not None and (creep is None or slide[0] <= creep):
                t, c = slide
                assert c.level is not None
                self.scrapes.append((t - 0.08, 0.08, c.level, _u(rng, 1.0, 3.0)))
                self._drop_from(c, t, "slid", None, _u(rng, 0.05, 0.15))
                continue
            assert creep is not None
            self.creep_done = creep + 1e-6
            _, u, v = sh.at(creep)
            for c in self.resting():
                if c.t_rest > creep - 0.5 or rng.random() > 0.4:
                    continue
                assert c.level is not None
                dg = c.mass_g * _u(rng, 0.003, 0.015) * float(rng.choice([-1.0, 1.0]))
                c.offset_g += dg
                self.steps.append((creep, c.level, dg))
                self.scrapes.append((creep, _u(rng, 0.05, 0.2), c.level, _u(rng, 0.5, 2.0)))
                self.shifts.append({"t": creep, "level": c.level, "fid": c.fid, "grams": dg})
                if c.margin is None and c.level >= 1 and rng.random() < 0.08:
                    c.margin, c.toward = _u(rng, 0.03, 0.15), math.atan2(v, u)

    # hands and the tower's handling -------------------------------------------------------------
    def press(self, level: int, t0: float, t1: float, grams: float, tremor: float = 0.05) -> None:
        self.presses.append({"level": level, "t0": t0, "t1": t1, "grams": grams,
                             "tremor": tremor, "tremor_hz": _u(self.rng, 8.0, 12.0)})

    def lift(self, t: float, k: int) -> None:
        self.advance(t)
        self.lifts.append({"t": t, "exposed": k})
        self.open_levels = k + 1
        self.impacts.append(Impact(t, k, _u(self.rng, 0.05, 0.2), "lift", 5.0))

    def close(self, t: float, k: int) -> None:
        self.closes.append({"t": t, "exposed": k})
        self.impacts.append(Impact(t, k, _u(self.rng, 1.0, 4.0), "close", 1.5))
        self.open_levels, self.closed_since = 8, t + 0.3

    def remove(self, t: float, k: int, cubes: list[Cube]) -> None:
        """Fingers press the open plate, then ``cubes`` leave it at ``t``."""
        rng = self.rng
        t0 = t - _u(rng, 0.2, 0.6)
        self.press(k, t0, t, _u(rng, 1.0, 5.0), 0.1)
        self.impacts.append(Impact(t0, k, _u(rng, 0.03, 0.1), "finger", 3.0))
        self.scrapes.append((t0, t - t0, k, _u(rng, 0.5, 2.0)))
        for c in cubes:
            self._leave(c, t)
        self.removals.append({"t": t, "floor": k, "cubes": len(cubes),
                              "mass_g": round(sum(c.mass_g for c in cubes), 4),
                              "fids": [c.fid for c in cubes]})

    def hand(self, t: float, dur: float, levels: list[int]) -> None:
        """A player steadies the tower: the grip leaks 0.5-4 g into each held level."""
        rng = self.rng
        for lv in levels:
            self.press(lv, t, t + dur, _u(rng, 0.5, 4.0), _u(rng, 0.03, 0.1))
            self.impacts.append(Impact(t, lv, _u(rng, 0.03, 0.12), "hand", 3.0))
            self.scrapes.append((t, 0.15, lv, _u(rng, 0.5, 2.0)))
        self.knocks.append({"t": t, "t_end": t + dur, "kind": "hand", "levels": levels})


# -- the scene: people, throws, the game ------------------------------------------------------

def slam(rng: np.random.Generator, sh: Ship, tw: Tower, t: float
         ) -> tuple[dict[str, Any], list[Impact]]:
    """A wave slams on the hull at ``t``: a thud, then the hull whips (its knock, jolts)."""
    whip = (Jolt(t, "whip", _u(rng, 0.4, 1.2), _u(rng, 0.8, 2.5), _u(rng, 0.02, 0.05))
            if sh.vessel == "ferry" else Jolt(t, "whip", _u(rng, 1.0, 3.0), _u(rng, 4.0, 10.0),
                                              _u(rng, 0.08, 0.15)))
    thud = Jolt(t, "slam", _u(rng, 0.5, 2.0), _u(rng, 30.0, 80.0), 0.15)
    sh.jolts += [whip, thud]
    # each plate is jolted by its mass times the thud's velocity
    impacts = [Impact(t, lv, tw.plate_g[lv] * thud.amp / (2 * np.pi * thud.f), "jolt", 3.0)
               for lv in range(8)]
    return ({"t": t, "t_end": t + min(4.0, whip.span()), "kind": "slam",
             "peak_ms2": round(thud.amp + whip.amp, 3), "whip_hz": round(whip.f, 3)}, impacts)


def plan_jolts(rng: np.random.Generator, scenario: str, duration: float, quiet: float,
               sh: Ship, tw: Tower) -> tuple[list[dict[str, Any]], dict[str, list[Any]],
                                             list[Impact]]:
    """Slams, bumps, footsteps, doors, announcements: knocks, the rest, plate jolts."""
    knocks: list[dict[str, Any]] = []
    people: dict[str, list[Any]] = {"footsteps": [], "announcements": [], "doors": []}
    impacts: list[Impact] = []
    ferry = sh.vessel == "ferry"

    def when(n: int) -> list[float]:
        return sorted(float(x) for x in rng.uniform(quiet + 1.0, duration - 3.0, n))

    n_slam = {"calm": 0, "moderate": int(rng.random() < 0.4),
              "rough": int(rng.poisson(duration / 25.0))}[sh.sea]
    for t in when(n_slam):
        knock, jolted = slam(rng, sh, tw, t)
        knocks.append(knock)
        impacts += jolted
    n_bump = int(rng.integers(1, 4)) if scenario == "noisy" else int(rng.random() < 0.3)
    for t in when(n_bump):  # a child bumps the table
        j = Jolt(t, "bump", _u(rng, 0.5, 2.0), _u(rng, 20.0, 40.0), 0.2,
                 _u(rng, 0.05, 0.25), _u(rng, 0.0, 2 * np.pi))
        sh.jolts.append(j)
        j0 = _u(rng, 0.1, 0.4)
        impacts += [Impact(t, lv, j0 * 0.6**lv, "bump", 2.0) for lv in range(8)]
        knocks.append({"t": t, "t_end": t + 0.5, "kind": "bump", "peak_ms2": round(j.amp, 3),
                       "lateral_g": round(j.lateral_g, 3)})
    lo, hi = {"single": (0, 2), "rapid": (1, 2), "noisy": (3, 6), "game": (1, 3)}[scenario]
    for t in when(int(rng.integers(lo, hi + 1))):  # someone walks past
        child = scenario == "noisy" and rng.random() < 0.3
        rate = _u(rng, 2.5, 3.5) if child else _u(rng, 1.6, 2.2)
        peak = _u(rng, 0.1, 0.3) if child else _u(rng, 0.03, 0.12)
        dur = _u(rng, 3.0, 7.0)
        steps = np.arange(t, min(t + dur, duration - 0.5), 1 / rate)
        env = np.sin(np.pi * (steps - t) / dur) ** 2
        sh.jolts += [Jolt(float(s), "step", float(peak * e), _u(rng, 15.0, 30.0), 0.3)
                     for s, e in zip(steps, env, strict=True)]
        people["footsteps"].append({"t": t, "t_end": t + dur, "steps": len(steps),
                                    "peak_ms2": round(peak, 3), "child": child})
    n_door = int(rng.integers(1, 3)) if scenario == "noisy" else int(rng.random() < 0.4)
    for t in when(n_door):  # the door to the deck: cold air, and perhaps a bang
        dur = _u(rng, 10.0, 40.0)
        bang = bool(rng.random() < 0.5) and t + dur < duration - 3.0
        people["doors"].append({"t": t, "t_end": t + dur, "delta_c": _u(rng, -8.0, -2.0),
                                "bang": bang})
        if bang:
            sh.jolts.append(Jolt(t + dur, "door", _u(rng, 0.3, 1.0), _u(rng, 30.0, 60.0), 0.2))
            knocks.append({"t": t + dur, "t_end": t + dur + 0.3, "kind": "door"})
    n_ann = (int(rng.integers(1, 3)) if scenario == "noisy" else int(rng.random() < 0.3)) \
        if ferry else 0
    for t in when(n_ann):
        people["announcements"].append({"t": t, "t_end": t + _u(rng, 6.0, 15.0),
                                        "lsb": _u(rng, 0.3, 1.2)})
    return knocks, people, impacts


def _throw_until_in(sc: Scene, t: float, cube: Cube, **extra: Any) -> dict[str, Any] | None:
    """Throw ``cube`` at ``t``; a cube that misses the tower is picked up and thrown again."""
    while t < sc.duration - 4.0:
        sc.advance(t)
        style = str(sc.rng.choice(["drop", "toss", "flick"], p=[0.3, 0.55, 0.15]))
        rec = sc.throw(t, cube, style, **extra)
        if rec is not None:
            return rec
        t += _u(sc.rng, 1.5, 3.0)
    return None


def play_throws(sc: Scene) -> None:
    """single, rapid and noisy: throws one at a time or in quick series."""
    rng, t, series = sc.rng, sc.quiet_until, 0
    while t < sc.duration - 4.0:
        n = 1
        if sc.scenario == "rapid" or (sc.scenario == "noisy" and rng.random() < 0.5):
            n = int(rng.integers(3, 7)) if sc.scenario == "rapid" else int(rng.integers(2, 5))
        last = t
        for i in range(n):
            extra = {"series": series} if n > 1 else {}
            rec = _throw_until_in(sc, t, sc.new_cube(str(rng.choice(COLOURS))), **extra)
            if rec is None:
                return
            last = max(last, rec["t"])
            t = rec["t_release"] + _u(rng, 0.3, 0.8) if i < n - 1 else last
        series += n > 1
        gap = {"single": (1.5, 4.5), "rapid": (2.5, 6.0), "noisy": (0.8, 3.5)}[sc.scenario]
        t = last + _u(rng, *gap)


def plan_hands(sc: Scene) -> None:
    """In rough moments (lateral force over 0.1 g) a player may steady the tower."""
    sh, rng = sc.ship, sc.rng
    odds = {"single": 0.3, "rapid": 0.2, "noisy": 0.45, "game": 0.4}[sc.scenario]
    ratio = np.hypot(sh.fu, sh.fv) / sh.n
    ups = sh.t[1:][(ratio[1:] > 0.1) & (ratio[:-1] <= 0.1)]
    busy = [(x["t"] - 1.5, y["t"] + 1.0) for x, y in zip(sc.lifts, sc.closes, strict=False)]
    last = -1e9
    for t in ups:
        start = float(t) + _u(rng, 0.3, 1.0)
        dur = _u(rng, 1.5, 5.0)
        if start < sc.quiet_until or start + dur > sc.duration - 1.0 or start - last < 10.0:
            continue
        if any(a < start + dur and start < b for a, b in busy) or rng.random() > odds:
            continue
        top, span = int(rng.integers(3, 8)), int(rng.integers(1, 4))
        sc.hand(start, dur, list(range(top - span + 1, top + 1)))
        last = start


FLOOR_WEIGHTS = np.array([1.0, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0])  # cubes stop high more often


class Arosa:
    """Mord im Arosa by the rulebook, over the cubes physically in the tower."""

    def __init__(self, sc: Scene) -> None:
        rng = sc.rng
        self.sc = sc
        self.players = [str(x) for x in rng.permutation(COLOURS)[: int(rng.integers(3, 6))]]
        self.supply = {p: 20 for p in self.players}
        self.sheet = {p: [0] * 8 for p in self.players}
        self.crime: set[int] = set()
        self.phase = "prologue"
        self.turns: list[dict[str, Any]] = []
        self.t = sc.quiet_until
        self.victims_found = 0
        self.victims_by = ""

    def over(self) -> bool:
        if self.phase != "over" and any(
                sum(self.sheet[p]) >= 10 or self.supply[p] == 0 for p in self.players):
            self.phase = "over"
        return self.phase == "over"

    def throw(self, cube: Cube, who: str, kind: str) -> bool:
        """One throw as the rules demand; False when the recording has no time left for it."""
        rec = _throw_until_in(self.sc, self.t, cube, who=who, kind=kind)
        if rec is None:
            return False
        self.t = rec["t"] + _u(self.sc.rng, 0.8, 2.5)
        return True

    def from_supply(self, p: str, kind: str) -> bool:
        self.supply[p] -= 1
        ok = self.throw(self.sc.new_cube(p), p, kind)
        self.over()
        return ok

    def here(self, f: int, colour: str) -> int:
        return sum(c.colour == colour for c in self.sc.resting(f))

    def pick_floor(self, want: str | None) -> int:
        rng = self.sc.rng
        if want is not None and rng.random() < 0.55:  # the players listened
            counts = [self.here(f, want) for f in range(8)]
            if max(counts) > 0:
                return int(np.argmax(counts))
        return int(rng.choice(8, p=FLOOR_WEIGHTS / FLOOR_WEIGHTS.sum()))

    def play(self) -> None:
        sc, rng = self.sc, self.sc.rng
        n = len(self.players)
        killer = int(rng.integers(n))
        self.victims_by = self.players[killer]
        for _ in range(2):
            if not self.throw(sc.new_cube("red"), self.victims_by, "victim"):
                return
        for i in range(n):  # two clues each, in turn from the victims' thrower
            p = self.players[(killer + i) % n]
            for _ in range(2):
                if not self.from_supply(p, "prologue"):
                    return
        self.phase = "act1"
        turn_i = int(rng.integers(n))
        while not self.over() and self.t + 14.0 < sc.duration - 3.0:
            self.turn(self.players[turn_i % n])
            turn_i += 1

    def turn(self, inv: str) -> None:
        sc, rng = self.sc, self.sc.rng
        turn: dict[str, Any] = {"who": inv, "phase": self.phase}
        suspects: list[str] = []
        if self.phase == "act1":
            turn["action"] = "inspect"
            f = self.pick_floor("red" if rng.random() < 0.8 else None)
        elif sum(self.sheet[inv]) > 0 and rng.random() < 0.4:
            turn["action"] = "cover"
            f = self.pick_floor(inv)
        else:
            turn["action"] = "suspect"
            others = [p for p in self.players if p != inv]
            suspects = [str(x) for x in rng.permutation(others)[: 1 if rng.random() < 0.65 else 2]]
            f = self.pick_floor(suspects[0])
            turn["suspects"] = suspects
        turn["floor"] = f
        t_reach = self.t + _u(rng, 0.5, 2.0)
        t_lift = t_reach + _u(rng, 0.4, 0.8)
        sc.lift(t_lift, f)  # (slides up to here happen first)
        here = sc.resting(f)
        victims = [c for c in here if c.colour == "red"]
        clues = [c for c in here if c.colour != "red"]
        turn["found"] = {c: sum(x.colour == c for x in here) for c in {x.colour for x in here}}
        t = t_lift + _u(rng, 1.0, 3.0)
        penalties = 0
        if self.phase == "act1":
            if victims:
                self.crime.add(f)
                for p in self.players:  # the investigator overlooks his own clues
                    if p != inv:
                        put = min(self.here(f, p), self.supply[p])
                        self.sheet[p][f] += put
                        self.supply[p] -= put
            else:
                penalties = 1
        elif turn["action"] == "cover":
            own = self.here(f, inv)
            back = min(own, self.sheet[inv][f])
            self.sheet[inv][f] -= back
            self.supply[inv] += back
            penalties = int(own == 0)
        elif f == 0 and self.here(0, inv) == 0:  # the ground-floor case
            penalties = len(suspects)
        else:
            for p in suspects:
                put = min(self.here(f, p), self.supply[p])
                self.sheet[p][f] += put
                self.supply[p] -= put
                penalties += int(self.here(f, p) == 0)
        grabs = [victims] if victims else []
        grabs += [clues[i:i + 3] for i in range(0, len(clues), 3)]  # three cubes a grab
        for g in grabs:
            sc.remove(t, f, g)
            t += _u(rng, 0.8, 1.5)
        t_close = t - (0.8 if grabs else 0.0) + _u(rng, 0.3, 1.0)
        sc.press(f, t_reach, t_close + 0.2, _u(rng, 0.3, 2.0))  # the hand on the lower floors
        if f >= 1:
            sc.press(f - 1, t_reach, t_close + 0.2, _u(rng, 0.1, 1.0))
        sc.close(t_close, f)
        self.t = t_close + _u(rng, 0.8, 2.0)
        turn.update({"victims": len(victims), "removed": len(here), "penalties": penalties,
                     "thrown_back": 0})
        self.turns.append(turn)
        self.victims_found += len(victims)
        if self.phase == "act1" and self.victims_found >= 2:
            self.phase = "act2"  # from the player after the one who found the second
        if self.over():
            return
        for c in rng.permutation(np.array(clues, dtype=object)):  # thrown back one by one
            if not self.throw(c, inv, "throwback"):
                turn["cut_by_end"] = True
                return
            turn["thrown_back"] += 1
        for _ in range(penalties):
            if self.supply[inv] == 0 or not self.from_supply(inv, "penalty"):
                turn["cut_by_end"] = not self.over()
                return
            if self.over():
                return

    def summary(self) -> dict[str, Any]:
        out: dict[str, Any] = {"players": self.players, "victims_by": self.victims_by,
                               "phase": self.phase, "turns": self.turns, "sheet": self.sheet,
                               "supply": self.supply, "crime_scenes": sorted(self.crime)}
        if self.phase == "over":
            pts = {p: sum(v * (3 if f in self.crime else 2 if {f - 1, f + 1} & self.crime
                               else 1) for f, v in enumerate(self.sheet[p]))
                   for p in self.players}
            out.update({"suspicion": pts,
                        "culprits": [p for p in self.players if pts[p] == max(pts.values())],
                        "winners": [p for p in self.players if pts[p] == min(pts.values())]})
        return out


def new_scene(seed: int, scenario: str, duration: float, people: bool = True,
              **over: Any) -> Scene:
    """The tower of ``seed`` at sea, with the ship's own events (``over`` fixes choices)."""
    tw = make_tower(seed)
    rng = np.random.default_rng([seed, SCENARIOS.index(scenario) + 1, 17])
    quiet = _u(rng, 4.0, 6.5)
    sh = plan_ship(rng, scenario, duration, quiet, tw, **over)
    knocks: list[dict[str, Any]] = []
    impacts: list[Impact] = []
    plist: dict[str, list[Any]] = {"footsteps": [], "announcements": [], "doors": []}
    if people:
        knocks, plist, impacts = plan_jolts(rng, scenario, duration, quiet, sh, tw)
    finish_motion(sh)
    sc = Scene(tw, scenario, duration, rng, sh, quiet)
    sc.knocks, sc.people, sc.impacts = knocks, plist, impacts
    return sc


def simulate(seed: int, scenario: str, duration: float) -> Scene:
    """One recording's scene: the sea, the people and the throws (or a game)."""
    sc = new_scene(seed, scenario, duration)
    if scenario == "game":
        game = Arosa(sc)
        game.play()
        sc.game = game.summary()
    else:
        play_throws(sc)
    sc.advance(duration)
    plan_hands(sc)
    return sc


# -- the sensors ----------------------------------------------------------------------------

def _contact(f: np.ndarray, tau_s: float) -> np.ndarray:
    """The spectrum of a half-sine contact of ``tau_s`` (textbook), 1 at low frequency."""
    x = 2 * f * tau_s
    near = np.abs(1 - x) < 1e-6
    return np.where(near, np.pi / 4,
                    np.abs(np.cos(np.pi * f * tau_s) / np.where(near, 1, 1 - x**2)))


def lifted_spans(sc: Scene) -> list[tuple[float, float, int]]:
    """(lift, close, exposed) of every opening of the tower."""
    return [(a["t"], b["t"], a["exposed"]) for a, b in zip(sc.lifts, sc.closes, strict=False)]


def _band_noise(rng: np.random.Generator, n: int, lo: float, hi: float, fs: float) -> np.ndarray:
    hi = min(hi, 0.45 * fs)
    b, a = signal.butter(2, [lo, hi], btype="band", fs=fs)
    x = signal.lfilter(b, a, rng.normal(0, 1, n + 200))[200:]
    return x / max(1e-9, float(np.std(x)))


def render_piezo(sc: Scene) -> np.ndarray:
    """The eight discs' ADC sets, (n_sets, 8) in LSB, on the device's sampling grid."""
    tw, sh = sc.tw, sc.ship
    rng = np.random.default_rng([tw.seed, SCENARIOS.index(sc.scenario) + 1, 29])
    fs = float(tw.piezo_rate_hz)
    n = int(round(sc.duration * fs)) + 1
    t = np.arange(n) / fs
    x = np.zeros((n, 8))
    # The table's acceleration (engine, thuds, the hull's whipping, footsteps) behind each
    # disc's AC coupling; the slow heave and roll are far below it.
    base = engine_wave(sh, t, rng) + jolt_wave(sh.jolts, t)
    for k in range(8):
        b, a = signal.butter(1, tw.hp_hz[k], btype="high", fs=fs)
        x[:, k] = tw.sens_base[k] * signal.lfilter(b, a, base)
    spans = lifted_spans(sc)
    skew = np.arange(8) * tw.adc_skew_s
    ring_n = int(5 * float(np.max(tw.q_modes[:, 0] / (np.pi * tw.f_modes[:, 0]))) * fs) + 4
    chan = np.arange(8)
    for imp in sc.impacts:
        off = skew - np.abs(imp.level - chan) * tw.xt_delay_s  # each channel's delay
        i0 = int(math.ceil((imp.t - off.min()) * fs))
        w = min(ring_n, n - i0)
        if i0 < 0 or w <= 0:
            continue
        tau = t[i0:i0 + w][None, :] + off[:, None] - imp.t  # (8, w)
        tt = np.maximum(tau, 0)[:, :, None]
        heard = np.ones(8)
        for t0, t1, k in spans:  # a lifted disc hears nothing of the tower
            if t0 <= imp.t <= t1:
                heard[chan > k] = 0.0
        amp = tw.sens * imp.j * tw.xt[imp.level] * heard
        struck = chan == imp.level
        # The struck plate's modes, and through the walls each other disc's own plate.
        for rows, mix in ((np.full(8, imp.level), np.where(struck, 1.0, 0.6)),
                          (chan, np.where(struck, 0.0, 0.4))):
            fm, qm = tw.f_modes[rows], tw.q_modes[rows]  # (8, 4)
            g = tw.a_modes[rows] * _contact(fm, imp.tau_ms * 1e-3)
            ring = np.exp(-np.pi * fm[:, None, :] * tt / qm[:, None, :]) * np.sin(
                2 * np.pi * fm[:, None, :] * tt)
            y = np.einsum("kwm,km->kw", ring, g) * (tau >= 0)
            x[i0:i0 + w] += (y * (amp * mix)[:, None]).T
    for t0, dur, lv, lsb in sc.scrapes:  # a cube or a finger rubbing the card
        i0, m = int(t0 * fs), max(4, int(dur * fs))
        if i0 < 0 or i0 + m > n:
            continue
        y = _band_noise(rng, m, 300.0, 1500.0, fs) * np.hanning(m) * lsb
        x[i0:i0 + m] += y[:, None] * tw.xt[lv][None, :]
    for an in sc.people["announcements"]:  # the loudspeakers, faintly through the card
        i0, i1 = int(an["t"] * fs), min(n, int(an["t_end"] * fs))
        y = _band_noise(rng, i1 - i0, 200.0, 2500.0, fs)
        words = (rng.random(int((i1 - i0) / fs / 0.4) + 2) < 0.75).repeat(int(0.4 * fs))
        env = np.abs(np.sin(2 * np.pi * _u(rng, 3.0, 5.0) * t[i0:i1])) * words[: i1 - i0]
        x[i0:i1] += (y * env * an["lsb"])[:, None] * _u(rng, 0.7, 1.3, 8)[None, :]
    ph = mains_phase(sh, t, tw.clock_err)
    hum = np.sin(ph) + 0.4 * np.sin(3 * ph + 1.0) + 0.15 * np.sin(5 * ph + 2.0)
    if sh.mains_hz > 0:
        x += hum[:, None] * tw.hum_pz[None, :]
    x += tw.bias[None, :] + rng.normal(0, 1, (n, 8)) * tw.pz_noise[None, :]
    for t0, t1, k in spans:  # lifted discs hang off the base's bias divider
        i0, i1 = int(t0 * fs) + 1, int(t1 * fs)
        for c in range(k + 1, 8):
            x[i0:i1, c] = (512.0 + rng.normal(0, 1.2, i1 - i0)
                           + 3 * tw.hum_pz[c] * hum[i0:i1] * (sh.mains_hz > 0))
            for te in (t0, t1):  # the spring contacts chatter
                for _ in range(int(rng.integers(2, 6))):
                    j = int((te + _u(rng, 0.0, 0.02)) * fs)
                    m = min(int(0.012 * fs) + 1, n - j)
                    x[j:j + m, c] += _u(rng, -120, 120) * np.exp(-np.arange(m) / (0.003 * fs))
    return np.clip(np.round(x), 0, 1023).astype(np.uint16)


@dataclass
class LoadStream:
    """The converters' readings: read times (device s), valid bits, counts (s24)."""

    t: np.ndarray
    valid: np.ndarray
    counts: np.ndarray
    timeouts: np.ndarray  # cumulative channel readings missed, at each reading


LOAD_SHARE = {"strike": 1.0, "bounce": 1.0, "rim": 0.6, "tick": 1.0, "underside": -1.0,
              "table": 0.2, "lift": 0.3, "close": 0.5, "finger": 0.5, "hand": 0.5}


def render_load(sc: Scene, first_read: float) -> LoadStream:
    """The eight cells through their HX711s; the first reading at ``first_read`` s."""
    tw, sh = sc.tw, sc.ship
    rng = np.random.default_rng([tw.seed, SCENARIOS.index(sc.scenario) + 1, 31])
    fg = LOAD_GRID_HZ
    tg = np.arange(0.0, sc.duration + 0.5, 1 / fg)
    ng = len(tg)
    # Specific force at the table: the ship's motion, its jolts and the engine.
    n_sp = np.interp(tg, sh.t, sh.n0) + (jolt_wave(sh.jolts, tg) + engine_wave(sh, tg, rng)) / G
    fu, fv = np.interp(tg, sh.t, sh.fu), np.interp(tg, sh.t, sh.fv)
    mass = np.zeros((ng, 8))
    mass[0] = tw.plate_g
    for t, lv, grams in sc.steps:
        i = int(np.searchsorted(tg, t))
        if i < ng:
            mass[i, lv] += grams
    mass = np.cumsum(mass, axis=0)
    force = mass * (n_sp[:, None] + fu[:, None] * tw.off_axis[None, :, 0]
                    + fv[:, None] * tw.off_axis[None, :, 1])
    for imp in sc.impacts:
        share = LOAD_SHARE.get(imp.kind, 0.0)
        i = int(imp.t * fg)
        if share and imp.level < 8 and 0 <= i < ng:
            force[i, imp.level] += share * imp.j * GRAMS_PER_MNS_MS
    for p in sc.presses:
        i0, i1 = int(p["t0"] * fg), min(ng, int(p["t1"] * fg) + 1)
        tt = tg[i0:i1]
        box = np.clip(np.minimum(tt - p["t0"], p["t1"] - tt) / 0.1, 0, 1)  # 0.1 s edges
        force[i0:i1, p["level"]] += p["grams"] * box * (
            1 + p["tremor"] * np.sin(2 * np.pi * p["tremor_hz"] * tt))
    for k in range(8):  # the plate on its cell: a lightly damped second-order system
        wn = 2 * np.pi * tw.cell_fn[k]
        b, a = signal.bilinear([wn**2], [1, 2 * tw.cell_zeta[k] * wn, wn**2], fs=fg)
        zi = signal.lfilter_zi(b, a) * force[0, k]
        force[:, k] = signal.lfilter(b, a, force[:, k], zi=zi)[0]
    # A door to the deck lets cold air in; each cell's zero follows it with its lag.
    tc = np.arange(0.0, sc.duration + 0.5, 0.1)
    air = np.zeros(len(tc))
    for d in sc.people["doors"]:
        air += d["delta_c"] * np.clip((tc - d["t"]) / 3.0, 0, 1) * np.where(
            tc > d["t_end"], np.exp(-(tc - d["t_end"]) / 30.0), 1.0)
    for k in range(8):
        a1 = math.exp(-0.1 / tw.temp_tau_s[k])
        cell_t = signal.lfilter([1 - a1], [1, -a1], air)
        force[:, k] += tw.temp_coef[k] * np.interp(tg, tc, cell_t)
    counts = tw.zero_counts[None, :] + tw.cpg[None, :] * force
    if sh.mains_hz > 0:  # the supply's hum in the bridge wiring, before the converter
        ph = mains_phase(sh, tg, tw.clock_err)
        counts += np.sin(ph[:, None] + np.arange(8)[None, :] * 0.7) * tw.hum_ld[None, :]
    period = 1.0 / (tw.load_rate_hz * (1 + tw.hx_err))
    t_read = np.arange(first_read, sc.duration, period)
    cum = np.vstack([np.zeros((1, 8)), np.cumsum(counts, axis=0)])
    i1 = np.minimum((t_read * fg).astype(int), ng)
    i0 = np.maximum(i1 - max(1, int(round(period * fg))), 0)
    vals = (cum[i1] - cum[i0]) / (i1 - i0)[:, None]  # each conversion averages its period
    vals += rng.normal(0, 1, vals.shape) * tw.ld_noise[None, :]
    vals = np.clip(np.round(vals), -(2**23), 2**23 - 1).astype(np.int64)
    valid = np.full((len(t_read), 8), True)
    for t0, t1, k in lifted_spans(sc):  # cut off until the close and 4 conversions more
        back = t1 + 4 * period + _u(rng, 0.01, 0.05)
        valid[(t_read > t0) & (t_read < back), k + 1:] = False
    vals[~valid] = 0
    bits = (valid * (1 << np.arange(8))[None, :]).sum(axis=1)
    return LoadStream(t_read, bits, vals, np.cumsum((~valid).sum(axis=1)))


# -- the byte stream ------------------------------------------------------------------------------

def _decodes(enc: bytes) -> bool:
    """Whether ``enc`` (one frame without its delimiter) is a whole message with a good CRC."""
    out, i = bytearray(), 0
    while i < len(enc):
        code = enc[i]
        if code == 0 or i + code > len(enc):
            return False
        out += enc[i + 1:i + code]
        i += code
        if code < 0xFF and i < len(enc):
            out.append(0)
    return len(out) >= 5 and crc16(bytes(out[:-2])) == int.from_bytes(out[-2:], "little")


def plan_session(seed: int, scenario: str, duration: float) -> dict[str, Any]:
    """A device powered up with the laptop, or one already running (late HELLO, cut frame)."""
    rng = np.random.default_rng([seed, SCENARIOS.index(scenario) + 1, 37])
    if rng.random() < 0.55:
        boot_us = int(rng.integers(20_000, 40_000))
        return {"start": "boot", "t_us0": boot_us, "uptime_us0": boot_us, "seq_first": 0,
                "messages_before_hello": 0, "mid_frame_bytes": 0, "clock_wraps_at_s": None,
                "cpu": int(rng.integers(35, 55))}
    if rng.random() < 0.5:  # the 32-bit microsecond clock wraps inside the recording
        t_us0 = 2**32 - int(_u(rng, 5.0, 0.9 * duration) * 1e6)
        uptime = int(rng.integers(0, 4)) * 2**32 + t_us0
    else:
        uptime = int(_u(rng, 120.0, 5 * 3600.0) * 1e6)
        t_us0 = uptime % 2**32
    wrap = (2**32 - t_us0) / 1e6
    return {"start": "running", "t_us0": t_us0, "uptime_us0": uptime,
            "seq_first": int(rng.integers(0, 65536)),
            "messages_before_hello": int(rng.integers(1, 4)), "mid_frame_bytes": 0,
            "clock_wraps_at_s": wrap if wrap < duration else None,
            "cut": float(rng.random()), "cpu": int(rng.integers(35, 55))}


def first_read(sc: Scene, session: dict[str, Any]) -> float:
    """The first load reading: after the first PIEZO message, after the HX711's settling."""
    tw = sc.tw
    period = 1.0 / (tw.load_rate_hz * (1 + tw.hx_err))
    rng = np.random.default_rng([tw.seed, SCENARIOS.index(sc.scenario) + 1, 41])
    t = tw.batch / tw.piezo_rate_hz + 0.001 + _u(rng, 0, period)
    if session["start"] == "boot":
        t += max(0.0, 4 * period - session["uptime_us0"] / 1e6)
    return t


def build_stream(sc: Scene, sets: np.ndarray, load: LoadStream,
                 session: dict[str, Any]) -> bytes:
    """The device -> host bytes of the recording, in the order the device sends them."""
    tw = sc.tw
    fs = tw.piezo_rate_hz
    period_us = 1_000_000 // fs
    t_us0 = session["t_us0"]
    msgs: list[tuple[float, int, bytes]] = []
    raw = sets.astype("<u2").tobytes()
    n = len(sets)
    for i0 in range(0, n, tw.batch):
        k = min(tw.batch, n - i0)
        head = struct.pack("<IB", (t_us0 + i0 * period_us) % 2**32, k)
        msgs.append(((i0 + k) / fs + 1e-4, 0x02, head + raw[i0 * 16:(i0 + k) * 16]))
    s24 = (load.counts & 0xFFFFFF).astype("<u4").view(np.uint8).reshape(-1, 8, 4)[:, :, :3]
    s24 = np.ascontiguousarray(s24).reshape(-1, 24)
    for tr, bits, row in zip(load.t, load.valid, s24, strict=True):
        # A reading goes out after the PIEZO frame being filled: stamps never go back.
        sent = (math.floor(tr * fs / tw.batch) + 1) * tw.batch / fs + 2e-4
        head = struct.pack("<IB", (t_us0 + int(round(tr * 1e6))) % 2**32, int(bits))
        msgs.append((sent, 0x03, head + row.tobytes()))
    up0 = session["uptime_us0"]
    for s in range(up0 // 1_000_000 + 1, (up0 + int(sc.duration * 1e6)) // 1_000_000 + 1):
        t = (s * 1_000_000 - up0) / 1e6
        i = int(np.searchsorted(load.t, t, side="right")) - 1
        timeouts = int(load.timeouts[i]) % 65536 if i >= 0 else 0
        msgs.append((t, 0x04, struct.pack("<IHHHBB", (s * 1000) % 2**32, 0, 0, timeouts,
                                          session["cpu"] + s % 7, 0)))
    msgs.sort(key=lambda m: m[0])
    typed = [(typ, body) for _, typ, body in msgs]
    m_before = session["messages_before_hello"]
    hello = [(0x01, hello_body(tw))]
    if session["start"] == "running":  # the laptop's GET_INFO (host seq 0) is answered
        hello.append((0x05, struct.pack("<BHB", 0x81, 0, 0)))
    typed = typed[:m_before] + hello + typed[m_before:]
    seq0 = session["seq_first"]
    out = [frame(typ, seq0 + i, body) for i, (typ, body) in enumerate(typed)]
    if session["start"] == "running":  # the recording begins inside the previous PIEZO
        prev = struct.pack("<IB", (t_us0 - tw.batch * period_us) % 2**32, tw.batch) + bytes(
            np.full((tw.batch, 8), 512, "<u2").tobytes())
        whole = frame(0x02, seq0 - 1, prev)
        cut = 3 + int(session["cut"] * (len(whole) - 4))
        while _decodes(whole[-cut:-1]):
            cut -= 1
        session["mid_frame_bytes"] = cut
        out.insert(0, whole[-cut:])
    return b"".join(out)


# -- the truth ------------------------------------------------------------------------------

def _clean(x: Any) -> Any:
    if isinstance(x, dict):
        return {str(k): _clean(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_clean(v) for v in x]
    if isinstance(x, np.ndarray):
        return _clean(x.tolist())
    if isinstance(x, bool | np.bool_):
        return bool(x)
    if isinstance(x, int | np.integer):
        return int(x)
    if isinstance(x, float | np.floating):
        return round(float(x), 6)
    return x


def truth_of(sc: Scene, session: dict[str, Any]) -> dict[str, Any]:
    """The ``towerear-crosscheck-truth/1`` document of a rendered scene."""
    sh = sc.ship
    vert = sh.n0 - np.cos(sh.roll) * np.cos(sh.pitch)
    landings = [{**x, "cubes": 1} for x in sorted(sc.landings, key=lambda x: x["t"])]
    for x in landings:
        x["t"] = float(x["t"])
    ship = {
        "vessel": sh.vessel, "sea": sh.sea, "mode": sh.mode, "tp_s": sh.tp_s,
        "gamma": sh.gamma, "table_m": sh.table_m, "tower_angle_rad": sh.psi,
        "engine_hz": sh.engine_hz, "engine_ms2": sh.engine_ms2, "rpm_hunt": sh.rpm_hunt,
        "power": sh.power, "mains_hz": sh.mains_hz, "heel_deg": sh.heel_deg,
        "tacks": sh.tacks, "figures": sh.figures,
        "measured": {"vert_rms_g": float(np.std(vert)),
                     "roll_rms_deg": math.degrees(float(np.std(sh.roll))),
                     "lateral_max_g": float(np.max(np.hypot(sh.fu, sh.fv)))},
        "slams": [k for k in sc.knocks if k["kind"] == "slam"],
        "slides": [k for k in sc.knockdowns if k["cause"] == "slide"],
        "shifts": sc.shifts, **sc.people,
    }
    doc = {
        "format": "towerear-crosscheck-truth/1", "model": "AN", "scenario": sc.scenario,
        "seed": sc.tw.seed, "duration_s": float(sc.duration), "cells": "matched",
        "quiet_until": sc.quiet_until, "damage": [], "landings": landings,
        "knockdowns": sorted(sc.knockdowns, key=lambda k: k["t"]),
        "removals": sc.removals, "lifts": sc.lifts, "closes": sc.closes,
        "knocks": sorted(sc.knocks, key=lambda k: k["t"]), "ship": ship,
        "presses": sc.presses, "session": session, "tower": sc.tw.figures(),
    }
    if sc.game:
        doc["game"] = sc.game
    out: dict[str, Any] = _clean(doc)
    return out


def render(sc: Scene) -> tuple[bytes, dict[str, Any]]:
    """Bytes and truth of a scene."""
    session = plan_session(sc.tw.seed, sc.scenario, sc.duration)
    sets = render_piezo(sc)
    load = render_load(sc, first_read(sc, session))
    raw = build_stream(sc, sets, load, session)
    return raw, truth_of(sc, session)


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
    p = _Parser(prog="make_recordings_an.py", description=__doc__.split("\n")[0])
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
    elif not math.isfinite(args.duration) or args.duration < 15.0:
        problem = f"--duration must be at least 15 seconds, not {args.duration:g}"
    if problem:
        print(f"make_recordings_an.py: error: {problem}", file=sys.stderr)
        return 2
    try:
        args.out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        print(f"make_recordings_an.py: error: cannot create {args.out}: {exc.strerror}",
              file=sys.stderr)
        return 2
    for seed in range(args.first_seed, args.first_seed + args.towers):
        for scenario in args.scenarios:
            try:
                make_recording(seed, scenario, args.duration, args.out)
            except OSError as exc:
                print(f"make_recordings_an.py: error: cannot write into {args.out}: "
                      f"{exc.strerror}", file=sys.stderr)
                return 2
            print(f"{scenario}_t{seed}", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
