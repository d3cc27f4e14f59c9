#!/usr/bin/env python3
"""Cross-check model AO: game night with music on the table.

A blind generator of test recordings for ``towerear detect`` (contracts.md
section 1 byte for byte, section 2 for the file) and their ground truth in the
format ``towerear-crosscheck-truth/1`` that tools/crosscheck/score.py reads.
The tower stands on a table with a Bluetooth speaker (or laptop speakers, or a
subwoofer under the table, or a speaker on a shelf) playing music: kick drums
and bass lines shake the table, vocals reach the discs through the air, a
phone buzzes the speaker at 217 Hz, a USB ground loop hums, people dance,
set glasses down and drum on the table along with the beat.

Usage::

    .venv/bin/python tools/crosscheck_ao/make_recordings_ao.py --out DIR --towers 8 \
        --first-seed 1 --duration 120 [--scenarios single rapid noisy game]

Deterministic per seed; imports numpy, scipy and the standard library only.
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

MODEL = "AO"
SCENARIOS = ("single", "rapid", "noisy", "game")
FORMAT = "towerear-crosscheck-truth/1"
G = 9.81
LEVELS = 8
MODULE_M = 0.031  # 25 cm of tower over 8 modules
COLOURS = ("yellow", "blue", "brown", "gray", "black", "white")
G_PER_MNS_S = 1.0 / (G * 1e-3)  # grams-force x seconds in one mN s


# -- wire: contracts.md section 1 ---------------------------------------------------------------

def crc16(data: bytes) -> int:
    """CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF)."""
    return binascii.crc_hqx(data, 0xFFFF)


def cobs_encode(data: bytes) -> bytes:
    """Consistent overhead byte stuffing, without the trailing delimiter."""
    out = bytearray()
    for chunk in data.split(b"\x00"):
        while len(chunk) >= 254:
            out += b"\xff" + chunk[:254]
            chunk = chunk[254:]
        out.append(len(chunk) + 1)
        out += chunk
    return bytes(out)


def frame(typ: int, seq: int, body: bytes) -> bytes:
    """One framed message: COBS(type | seq | body | crc) and the 0x00 delimiter."""
    msg = struct.pack("<BH", typ, seq % 65536) + body
    return cobs_encode(msg + struct.pack("<H", crc16(msg))) + b"\x00"


def _decodes(chunk: bytes) -> bool:
    """Whether ``chunk`` (a frame without its delimiter) is a valid message."""
    out = bytearray()
    i = 0
    while i < len(chunk):
        code = chunk[i]
        if code == 0 or i + code > len(chunk):
            return False
        out += chunk[i + 1:i + code]
        i += code
        if code < 255 and i < len(chunk):
            out.append(0)
    if len(out) < 5:
        return False
    return crc16(bytes(out[:-2])) == int.from_bytes(out[-2:], "little")


# -- the tower ----------------------------------------------------------------------------------

@dataclass
class Tower:
    """Every figure of one tower (drawn from its seed)."""

    seed: int
    piezo_rate_hz: int
    load_rate_hz: int
    batch: int
    fw: tuple[int, int, int]
    device_id: bytes
    hx_err: float
    bias: np.ndarray
    pz_noise: np.ndarray
    pz_sens: np.ndarray  # LSB per mN s struck on the level's own plate
    f_modes: np.ndarray  # (8, 3) Hz
    q_modes: np.ndarray  # (8, 3)
    w_modes: np.ndarray  # (8, 3)
    xt_near: float
    xt_far: float
    base_fall: float  # table-borne transients, per level up (piezo)
    table_pz: float  # LSB per m/s^2 of table vibration, level 0
    vib_fall: float  # table vibration on the discs, per level up
    load_fall: float  # table vibration on the cells, per level up
    cpg: np.ndarray
    zero_counts: np.ndarray
    plate_g: np.ndarray
    cell_f0: np.ndarray
    cell_zeta: np.ndarray
    ld_noise: float
    drift_g_per_min: np.ndarray
    cube_g: float
    restitution: float
    p_stop: np.ndarray
    p_rim: float
    p_knock: float

    def figures(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for k, v in self.__dict__.items():
            if isinstance(v, np.ndarray):
                out[k] = np.round(v, 5).tolist()
            elif isinstance(v, bytes):
                out[k] = v.hex()
            elif isinstance(v, float):
                out[k] = round(v, 6)
            else:
                out[k] = v
        return out


def make_tower(seed: int) -> Tower:
    """A tower from its seed."""
    r = np.random.default_rng([seed, 0xA0])
    fs = int(r.choice([2000, 1600, 1000], p=[0.75, 0.15, 0.10]))
    ro = r.uniform(0.8, 1.2) * r.uniform(0.98, 1.02, LEVELS)  # mV/V
    cpg = ro * 1e-3 * 128 * 2**24 / 100.0
    plate_g = r.uniform(6.0, 14.0) * r.uniform(0.85, 1.15, LEVELS)
    zero = r.uniform(-0.02, 0.02, LEVELS) * 100.0 * cpg + plate_g * cpg
    f1 = r.uniform(280, 520) * np.linspace(1.0, r.uniform(1.3, 1.7), LEVELS)  # smaller upward
    f1 *= r.uniform(0.93, 1.07, LEVELS)
    f_modes = np.stack([f1, f1 * r.uniform(1.9, 2.2, LEVELS), f1 * r.uniform(2.9, 3.4, LEVELS)], 1)
    rate = 80 if r.random() < 0.75 else 10
    p = r.uniform(0.22, 0.42, LEVELS)
    p[0] = 1.0
    return Tower(
        seed=seed, piezo_rate_hz=fs, load_rate_hz=rate,
        batch=int(r.choice([6, 8, 10, 12, 14])),
        fw=(1, int(r.integers(0, 4)), int(r.integers(0, 10))),
        device_id=bytes(r.integers(0, 256, 8, dtype=np.uint8)),
        hx_err=float(r.uniform(-0.03, 0.03)),
        bias=512 + r.uniform(-3, 3, LEVELS), pz_noise=r.uniform(0.4, 1.0, LEVELS),
        pz_sens=r.uniform(150, 320) * r.uniform(0.75, 1.3, LEVELS),
        f_modes=f_modes, q_modes=r.uniform(8, 22, (LEVELS, 3)) * np.array([1.0, 0.8, 0.6]),
        w_modes=np.stack([np.ones(LEVELS), r.uniform(0.3, 0.7, LEVELS),
                          r.uniform(0.1, 0.4, LEVELS)], 1),
        xt_near=float(r.uniform(0.1, 0.3)), xt_far=float(r.uniform(0.3, 0.55)),
        base_fall=float(r.uniform(0.5, 0.75)), table_pz=float(r.uniform(40, 150)),
        vib_fall=float(r.uniform(0.6, 0.85)), load_fall=float(r.uniform(0.88, 1.0)),
        cpg=cpg, zero_counts=zero, plate_g=plate_g,
        cell_f0=r.uniform(40, 120, LEVELS), cell_zeta=r.uniform(0.1, 0.3, LEVELS),
        ld_noise=float((39.0 if rate == 80 else 21.0) * r.uniform(0.9, 1.3)),
        drift_g_per_min=r.uniform(-0.003, 0.003, LEVELS),
        cube_g=float(r.uniform(0.35, 0.75)), restitution=float(r.uniform(0.2, 0.45)),
        p_stop=p, p_rim=float(r.uniform(0.15, 0.4)), p_knock=float(r.uniform(0.05, 0.14)),
    )


# -- the music and the room ---------------------------------------------------------------------

@dataclass
class Song:
    """One song of the playlist, in stream seconds (it may start before 0)."""

    t_start: float
    t_end: float
    bpm: float
    pattern: str  # "four", "broken", "halftime", "ambient"
    kick_hz: float
    kick_decay_s: float
    level: float
    bass_root_hz: float
    vocals: bool
    steps: list[int] = field(default_factory=list)  # kick steps of a 16-step bar

    def beat_s(self) -> float:
        return 60.0 / self.bpm

    def kicks(self, t0: float, t1: float) -> np.ndarray:
        """Kick times in [t0, t1) of this song."""
        if self.pattern == "ambient":
            return np.zeros(0)
        step = self.beat_s() / 4
        n0 = max(0, int((max(t0, self.t_start) - self.t_start) / step) - 1)
        n1 = int((min(t1, self.t_end) - self.t_start) / step) + 1
        n = np.arange(n0, max(n0, n1))
        hit = np.isin(n % 16, self.steps)
        t = self.t_start + n[hit] * step
        return t[(t >= max(t0, self.t_start)) & (t < min(t1, self.t_end))]


@dataclass
class Room:
    """Where the music comes from and what the people at the table do."""

    placement: str  # "table", "laptop", "shelf", "sub"
    low_cut_hz: float  # small drivers (a laptop's) play nothing of the kick's fundamental
    kick_ms2: float  # kick peak on the table at volume 1
    bass_ratio: float
    air_lsb: float
    songs: list[Song]
    volume: list[tuple[float, float, float]]  # (t, gain from then on, ramp s)
    gsm: list[tuple[float, float]]
    gsm_lsb: float
    hum_hz: float
    hum_lsb: float
    hum_counts: float
    dances: list[dict[str, Any]] = field(default_factory=list)
    taps: list[tuple[float, float]] = field(default_factory=list)  # (t, J into the base)

    def song_at(self, t: float) -> Song | None:
        for s in self.songs:
            if s.t_start <= t < s.t_end:
                return s
        return None


def _song(r: np.random.Generator, t_start: float) -> Song:
    u = r.random()
    pattern = "four" if u < 0.45 else "broken" if u < 0.72 else "halftime" if u < 0.85 \
        else "ambient"
    bpm = {"four": r.uniform(95, 140), "broken": r.uniform(70, 120),
           "halftime": r.uniform(70, 100), "ambient": r.uniform(70, 95)}[pattern]
    steps = {"four": [0, 4, 8, 12], "halftime": [0, 10], "ambient": []}.get(pattern)
    if steps is None:
        steps = [0] + [s for s in (3, 6, 7, 8, 10, 11, 14) if r.random() < 0.4]
    length = r.uniform(120, 300)
    return Song(t_start=t_start, t_end=t_start + length, bpm=float(bpm), pattern=pattern,
                kick_hz=float(r.uniform(45, 65)), kick_decay_s=float(r.uniform(0.05, 0.14)),
                level=float(r.uniform(0.6, 1.0)), bass_root_hz=float(r.uniform(40, 62)),
                vocals=bool(r.random() < 0.8), steps=sorted(steps))


PLACEMENTS = ("table", "table", "table", "shelf", "shelf", "sub", "laptop")


def placement_of(seed: int) -> str:
    """Where the music plays for tower ``seed``: each block of 8 towers (1-8, 9-16, ...)
    has every placement, the speaker on the table at least three times."""
    block = (seed - 1) // 8
    r = np.random.default_rng([block, 0xA8])
    order = [*PLACEMENTS, str(r.choice(PLACEMENTS))]
    return str(r.permutation(order)[(seed - 1) % 8])


def make_room(seed: int, scenario: str, duration: float) -> Room:
    """The room of tower ``seed`` (placement, hum: per tower) in one scenario (the rest)."""
    rt = np.random.default_rng([seed, 0xA1])
    placement = placement_of(seed)
    kick = {"table": rt.uniform(0.05, 0.2), "laptop": rt.uniform(0.01, 0.04),
            "shelf": rt.uniform(0.003, 0.015), "sub": rt.uniform(0.08, 0.25)}[placement]
    air = {"table": rt.uniform(0.15, 0.8), "laptop": rt.uniform(0.2, 0.8),
           "shelf": rt.uniform(0.1, 0.5), "sub": rt.uniform(0.03, 0.15)}[placement]
    phone_prone = rt.random() < 0.35
    hum = rt.random() < 0.35
    hum_hz = float(rt.choice([50.0, 60.0], p=[0.7, 0.3])) if hum else 0.0
    hum_lsb = float(rt.uniform(0.5, 3.0)) if hum else 0.0
    hum_counts = float(rt.uniform(3, 25)) if hum else 0.0
    gsm_lsb = float(rt.uniform(2, 8))
    bass_ratio = float(rt.uniform(0.3, 0.6)) * {"sub": 1.6, "laptop": 0.3}.get(placement, 1.0)
    r = np.random.default_rng([seed, 0xA2, SCENARIOS.index(scenario)])
    songs: list[Song] = []
    t = -float(r.uniform(0, 200))
    while t < duration:
        s = _song(r, t)
        if s.t_end > 0:
            songs.append(s)
        t = s.t_end + float(r.uniform(2, 6))  # the gap between songs
    loud = scenario == "noisy"
    base = float(r.uniform(1.3, 2.0) if loud else r.uniform(0.6, 1.2))
    volume = [(0.0, base, 0.0)]
    if loud or r.random() < 0.3:  # someone turns it up mid-game
        volume.append((float(r.uniform(0.3, 0.7) * duration), base * float(r.uniform(1.3, 1.8)),
                       float(r.uniform(0.5, 2.0))))
    gsm: list[tuple[float, float]] = []
    n_gsm = int(r.integers(1, 4)) if phone_prone and (loud or r.random() < 0.6) else 0
    for _ in range(n_gsm):
        t0 = float(r.uniform(6, max(7.0, duration - 6)))
        gsm.append((t0, t0 + float(r.uniform(2, 6))))
    return Room(placement=placement, low_cut_hz=150.0 if placement == "laptop" else 0.0,
                kick_ms2=float(kick), bass_ratio=bass_ratio,
                air_lsb=float(air), songs=songs, volume=volume, gsm=sorted(gsm),
                gsm_lsb=gsm_lsb, hum_hz=hum_hz, hum_lsb=hum_lsb, hum_counts=hum_counts)


def gain_at(room: Room, t: np.ndarray) -> np.ndarray:
    """The speaker's volume at times ``t``."""
    g = np.full(t.shape, room.volume[0][1])
    prev = room.volume[0][1]
    for t0, gain, ramp in room.volume[1:]:
        frac = np.clip((t - t0) / max(ramp, 1e-3), 0.0, 1.0)
        g = np.where(t >= t0, prev + (gain - prev) * frac, g)
        prev = gain
    return g


# -- the scene ----------------------------------------------------------------------------------

@dataclass
class Stay:
    """A cube resting on a level from ``t_on`` (its weight on the cell) to ``t_off``."""

    fid: int
    level: int
    mass_g: float
    colour: str
    t_on: float
    t_off: float = math.inf


@dataclass
class Scene:
    """A recording's physical events, before the sensors turn them into bytes."""

    tw: Tower
    room: Room
    scenario: str
    seed: int
    duration: float
    rng: np.random.Generator
    quiet_until: float = 5.0
    impacts: list[tuple[float, int, float, str]] = field(default_factory=list)  # t, lvl, mN s
    weights: list[tuple[float, int, float]] = field(default_factory=list)  # t, level, grams
    presses: list[tuple[float, float, int, float]] = field(default_factory=list)  # t0,t1,lvl,g
    table: list[dict[str, Any]] = field(default_factory=list)  # table-borne transients
    stays: list[Stay] = field(default_factory=list)
    landings: list[dict[str, Any]] = field(default_factory=list)
    knockdowns: list[dict[str, Any]] = field(default_factory=list)
    removals: list[dict[str, Any]] = field(default_factory=list)
    lifts: list[dict[str, Any]] = field(default_factory=list)
    closes: list[dict[str, Any]] = field(default_factory=list)
    knocks: list[dict[str, Any]] = field(default_factory=list)
    game: dict[str, Any] | None = None
    next_fid: int = 0

    def on_level(self, level: int, t: float) -> list[Stay]:
        return [s for s in self.stays if s.level == level and s.t_on <= t < s.t_off]

    def lifted_at(self, t: float) -> int | None:
        """The exposed level if the tower is open at ``t``."""
        for lf, cl in zip(self.lifts, self.closes, strict=False):
            if lf["t"] <= t < cl["t"]:
                return int(lf["exposed"])
        if len(self.lifts) > len(self.closes) and self.lifts[-1]["t"] <= t:
            return int(self.lifts[-1]["exposed"])
        return None


def new_scene(seed: int, scenario: str, duration: float, **room_over: Any) -> Scene:
    """An empty scene: the tower, its room (``room_over`` replaces room fields), no events."""
    tw = make_tower(seed)
    room = make_room(seed, scenario, duration)
    for k, v in room_over.items():
        setattr(room, k, v)
    rng = np.random.default_rng([seed, 0xA3, SCENARIOS.index(scenario)])
    sc = Scene(tw=tw, room=room, scenario=scenario, seed=seed, duration=duration, rng=rng)
    sc.quiet_until = float(rng.uniform(4.0, 6.0))
    return sc


def _fall(h: float, v0: float) -> tuple[float, float]:
    """Time and speed after falling ``h`` metres from ``v0`` m/s downward."""
    v = math.sqrt(v0 * v0 + 2 * G * h)
    return (v - v0) / G, v


def drop(sc: Scene, *, t0: float, start_level: int, v0: float, mass_g: float, fid: int,
         colour: str, thrown: bool, allow_knock: bool = True) -> dict[str, Any]:
    """A cube falling from above ``start_level`` (the entry when ``thrown``) to its rest.

    Appends impacts, weights and the stay; returns the landing (without its truth
    bookkeeping) and the knock-downs it caused (``"knocked"``).
    """
    tw, r = sc.tw, sc.rng
    m_kg = mass_g * 1e-3
    e = tw.restitution * float(r.uniform(0.85, 1.15))
    t, v = t0, v0
    impacts: list[tuple[float, int, float, str]] = []
    knocked: list[dict[str, Any]] = []
    first: float | None = None
    if thrown:
        dt, v = _fall(float(r.uniform(0.01, 0.08)), v0)  # hand to the entry
        t += dt
        if r.random() < tw.p_rim:  # clips the entry's rim
            impacts.append((t, 7, float(r.uniform(0.1, 0.4)) * m_kg * v * 1e3, "rim"))
            v *= float(r.uniform(0.75, 0.95))
    level = start_level
    while True:
        dt, v = _fall(MODULE_M * float(r.uniform(0.9, 1.0)), v)
        t += dt
        stops = level == 0 or r.random() < tw.p_stop[level]
        if not stops:
            if r.random() < 0.3:  # clips the hole's edge on its way through
                j = float(r.uniform(0.05, 0.3)) * m_kg * v * 1e3
                impacts.append((t, level, j, "edge"))
                if allow_knock:
                    knocked += _maybe_knock(sc, t, level, j, fid)
                v *= float(r.uniform(0.8, 0.95))
            level -= 1
            continue
        # on its plate: strike, bounces while fast enough, tumbling ticks, rest
        hop = False
        n = 0
        while True:
            j = m_kg * v * (1 + e) * 1e3
            impacts.append((t, level, j, "strike" if n == 0 else "bounce"))
            if first is None:
                first = t
            if n == 0 and allow_knock:
                knocked += _maybe_knock(sc, t, level, j, fid)
            t_contact = t
            v_up = e * v * float(r.uniform(0.8, 1.0))
            n += 1
            if v_up > 0.35 and level > 0 and r.random() < 0.06:
                hop = True  # bounces into the hole and falls on
                t += v_up / G
                v = 0.05
                break
            if v_up < 0.12 or n >= 6:
                break
            t += 2 * v_up / G
            v = v_up
        if hop:
            level -= 1
            continue
        for _ in range(int(r.integers(1, 4))):
            t += float(r.uniform(0.01, 0.04))
            impacts.append((t, level, float(r.uniform(0.01, 0.04)), "tick"))
        t_rest = t + float(r.uniform(0.01, 0.06))
        break
    if first is None:  # pragma: no cover - every fall ends on a plate
        first = t_rest
    sc.impacts += impacts
    sc.weights.append((t_contact, level, mass_g))
    sc.stays.append(Stay(fid, level, mass_g, colour, t_contact))
    return {"t": t_rest, "floor": level, "t_first_impact": impacts[0][0], "t_on_plate": first,
            "impacts": [[round(a, 4), b, round(c, 4), d] for a, b, c, d in impacts],
            "knocked_list": knocked}


def _maybe_knock(sc: Scene, t: float, level: int, j: float, by_fid: int) -> list[dict[str, Any]]:
    """A strike of ``j`` mN s on ``level`` may knock one resting cube down a level or more."""
    if level == 0:
        return []
    here = [s for s in sc.on_level(level, t) if s.t_on < t - 0.05]
    crowd = min(1.5, 0.5 + 0.25 * len(here))  # more cubes, more of them near the strike
    if not here or sc.rng.random() >= sc.tw.p_knock * min(1.0, j / 0.5) * crowd:
        return []
    s = here[int(sc.rng.integers(0, len(here)))]
    t_leave = t + float(sc.rng.uniform(0.005, 0.03))
    s.t_off = t_leave
    sc.weights.append((t_leave, level, -s.mass_g))
    land = drop(sc, t0=t_leave, start_level=level - 1, v0=float(sc.rng.uniform(0.1, 0.3)),
                mass_g=s.mass_g, fid=s.fid, colour=s.colour, thrown=False, allow_knock=False)
    return [{"t_leave": t_leave, "from": level, "fid": s.fid, "by_fid": by_fid,
             "mass_g": s.mass_g, "colour": s.colour, "land": land}]


def throw(sc: Scene, t: float, *, colour: str = "any", kind: str = "throw",
          extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """A cube thrown in at the top at ``t``; records its landing and any knock-downs."""
    r = sc.rng
    fid = sc.next_fid
    sc.next_fid += 1
    mass = sc.tw.cube_g * float(r.uniform(0.96, 1.04))
    style = str(r.choice(["drop", "toss", "flick"], p=[0.35, 0.5, 0.15]))
    v0 = {"drop": 0.0, "toss": float(r.uniform(0.2, 0.8)), "flick": float(r.uniform(0.8, 1.8))}
    land = drop(sc, t0=t, start_level=7, v0=v0[style], mass_g=mass, fid=fid, colour=colour,
                thrown=True)
    rec = {"t": land["t"], "floor": land["floor"], "cubes": 1, "knocked": False, "kind": kind,
           "style": style, "fid": fid, "colour": colour, "mass_g": mass, "t_release": t,
           "t_first_impact": land["t_first_impact"], "t_on_plate": land["t_on_plate"],
           "impacts": land["impacts"], "caused_knockdown": bool(land["knocked_list"]),
           **(extra or {})}
    sc.landings.append(rec)
    for k in land["knocked_list"]:
        kl = k["land"]
        sc.knockdowns.append({"t": k["t_leave"], "from": k["from"], "to": kl["floor"],
                              "fid": k["fid"], "by_fid": fid})
        sc.landings.append({"t": kl["t"], "floor": kl["floor"], "cubes": 1, "knocked": True,
                            "knocked_from": k["from"], "kind": "knocked", "fid": k["fid"],
                            "colour": k["colour"], "mass_g": k["mass_g"],
                            "t_release": k["t_leave"], "t_first_impact": kl["t_first_impact"],
                            "t_on_plate": kl["t_on_plate"], "impacts": kl["impacts"]})
    return rec


def settle_time(sc: Scene, rec: dict[str, Any]) -> float:
    """When everything a throw set moving is at rest."""
    knocked = [x["t"] for x in sc.landings if x["knocked"] and x["t_release"] >= rec["t_release"]]
    return max([rec["t"], *knocked])


# -- table-borne events -------------------------------------------------------------------------

def table_event(sc: Scene, t: float, kind: str, *, knock: bool = True) -> dict[str, Any]:
    """A glass set down, a fist on the table: every disc hears it, the base's loudest."""
    r = sc.rng
    spec = {"glass": ((0.1, 0.5), (0.5, 2.0), (80, 150), 0.15),
            "table": ((0.5, 2.0), (2.0, 6.0), (50, 110), 0.35),
            "tap": ((0.02, 0.08), (0.05, 0.3), (150, 300), 0.05)}[kind]
    (j0, j1), (a0, a1), (f0, f1), span = spec
    ev: dict[str, Any] = {"t": t, "kind": kind, "j_base": float(r.uniform(j0, j1)),
          "peak_ms2": float(r.uniform(a0, a1)), "thud_hz": float(r.uniform(f0, f1)),
          "clink_hz": float(r.uniform(2000, 4500)) if kind == "glass" else 0.0}
    sc.table.append(ev)
    if knock:
        sc.knocks.append({"t": t, "t_end": t + span, "kind": kind,
                          "peak_ms2": round(ev["peak_ms2"], 3)})
    return ev


def drumming(sc: Scene, t0: float, t1: float) -> None:
    """Fingers drumming on the table along with the song: taps on its 8th or 16th notes."""
    r = sc.rng
    song = sc.room.song_at(t0)
    bpm = song.bpm if song is not None else float(r.uniform(80, 120))
    grid0 = song.t_start if song is not None else t0
    div = int(r.choice([2, 4], p=[0.6, 0.4]))
    step = 60.0 / bpm / div
    pattern = [True] + [bool(r.random() < 0.55) for _ in range(2 * div - 1)]
    n0 = math.ceil((t0 - grid0) / step)
    taps = []
    n = n0
    while grid0 + n * step < t1:
        if pattern[(n - n0) % len(pattern)]:
            t = grid0 + n * step + float(r.normal(0, 0.006))
            table_event(sc, t, "tap", knock=False)
            taps.append(round(t, 4))
        n += 1
    if taps:
        sc.knocks.append({"t": taps[0], "t_end": taps[-1] + 0.05, "kind": "drumming",
                          "bpm": round(bpm, 3), "step_s": round(step, 5), "taps": taps})


def dancing(sc: Scene, t0: float, t1: float) -> None:
    """Someone dances near the table: floor thumps on the beat (not a knock: nobody
    touches the table)."""
    r = sc.rng
    song = sc.room.song_at(t0)
    period = song.beat_s() if song is not None and song.pattern != "ambient" else \
        float(r.uniform(0.45, 0.6))
    grid0 = song.t_start if song is not None else t0
    n = math.ceil((t0 - grid0) / period)
    steps = []
    while grid0 + n * period < t1:
        steps.append(grid0 + n * period + float(r.normal(0, 0.015)))
        n += 1
    sc.room.dances.append({"t": t0, "t_end": t1, "peak_ms2": float(r.uniform(0.01, 0.05)),
                           "hz": float(r.uniform(12, 25)), "steps": steps})


# -- lifts, removals, closes --------------------------------------------------------------------

def lift(sc: Scene, t: float, exposed: int) -> None:
    """Modules exposed..7 lifted: a scrape through the card, cells above lose contact."""
    r = sc.rng
    sc.lifts.append({"t": t, "exposed": exposed})
    for lv in range(exposed + 1):
        sc.impacts.append((t + float(r.uniform(0, 0.05)), lv, float(r.uniform(0.03, 0.15)),
                           "lift"))


def remove(sc: Scene, t: float, level: int, stays: list[Stay]) -> None:
    """Fingers press on the open plate, then take ``stays`` out together at ``t``."""
    r = sc.rng
    t_press = t - float(r.uniform(0.2, 0.5))
    sc.presses.append((t_press, t, level, float(r.uniform(0.5, 3.0))))
    sc.impacts.append((t_press, level, float(r.uniform(0.01, 0.05)), "finger"))
    for s in stays:
        s.t_off = t
        sc.weights.append((t, level, -s.mass_g))
    sc.removals.append({"t": t, "floor": level, "cubes": len(stays),
                        "mass_g": sum(s.mass_g for s in stays), "fids": [s.fid for s in stays],
                        "colours": [s.colour for s in stays]})


def close(sc: Scene, t: float, exposed: int) -> None:
    """The modules set back: the walls land on the open level."""
    sc.closes.append({"t": t, "exposed": exposed})
    sc.impacts.append((t, exposed, float(sc.rng.uniform(0.5, 2.0)), "close"))


def open_and_empty(sc: Scene, t: float, level: int, *, first: list[Stay] | None = None
                   ) -> tuple[float, list[Stay]]:
    """Lift, take every cube out of ``level`` (``first`` in a grab of their own), close.

    Returns the close's time and the cubes taken out.
    """
    r = sc.rng
    lift(sc, t, level)
    t += float(r.uniform(1.0, 3.0))  # a look
    cubes = list(sc.on_level(level, t))
    first = [s for s in (first or []) if s in cubes]
    rest = [s for s in cubes if s not in first]
    grabs = ([first] if first else []) + [rest[i:i + 3] for i in range(0, len(rest), 3)]
    for grab in grabs:
        remove(sc, t, level, grab)
        t += float(r.uniform(0.8, 1.5))
    t_close = t - (float(r.uniform(0.3, 0.6)) if grabs else 0.0) + float(r.uniform(0.3, 1.0))
    close(sc, t_close, level)
    return t_close, cubes


# -- scenarios ----------------------------------------------------------------------------------

def _room_noise(sc: Scene, n_glass: tuple[int, int], n_table: tuple[int, int],
                n_drum: tuple[int, int], n_dance: tuple[int, int]) -> None:
    r = sc.rng
    d = sc.duration
    lo = sc.quiet_until + 1.0
    if d - 1.0 <= lo:
        return
    for _ in range(int(r.integers(*n_glass))):
        table_event(sc, float(r.uniform(lo, d - 1.0)), "glass")
    for _ in range(int(r.integers(*n_table))):
        table_event(sc, float(r.uniform(lo, d - 1.0)), "table")
    for _ in range(int(r.integers(*n_drum))):
        t0 = float(r.uniform(lo, d - 2.0))
        drumming(sc, t0, min(d - 0.5, t0 + float(r.uniform(4, 15))))
    for _ in range(int(r.integers(*n_dance))):
        t0 = float(r.uniform(lo, d - 2.0))
        dancing(sc, t0, min(d, t0 + float(r.uniform(5, 20))))


def scenario_single(sc: Scene) -> None:
    r = sc.rng
    t = sc.quiet_until + float(r.uniform(0.5, 2.0))
    while t < sc.duration - 3.0:
        rec = throw(sc, t)
        t = settle_time(sc, rec) + float(r.uniform(2.5, 6.0))
    _room_noise(sc, (0, 3), (0, 1), (0, 2), (0, 2))


def scenario_rapid(sc: Scene, loud: bool = False) -> None:
    r = sc.rng
    t = sc.quiet_until + float(r.uniform(0.5, 2.0))
    series = 0
    while t < sc.duration - 4.0:
        n = int(r.integers(2, 6))
        last = None
        for i in range(n):
            if t > sc.duration - 3.0:
                break
            last = throw(sc, t, extra={"series": series, "in_series": i})
            t += float(r.uniform(0.3, 0.8))
        series += 1
        end = max(settle_time(sc, x) for x in sc.landings) if last else t
        t = max(t, end) + float(r.uniform(3.0, 8.0))
    if not loud:
        _room_noise(sc, (0, 3), (0, 1), (0, 2), (0, 2))


def scenario_noisy(sc: Scene) -> None:
    r = sc.rng
    t = sc.quiet_until + float(r.uniform(0.5, 2.0))
    series = 0
    while t < sc.duration - 3.0:
        n = 1 if r.random() < 0.6 else int(r.integers(2, 4))
        for i in range(n):
            if t > sc.duration - 3.0:
                break
            rec = throw(sc, t, extra={"series": series, "in_series": i})
            t += float(r.uniform(0.3, 0.8))
        series += 1
        t = max(t, settle_time(sc, rec)) + float(r.uniform(2.0, 5.0))
    _room_noise(sc, (3, 7), (1, 3), (2, 5), (1, 3))


def scenario_game(sc: Scene) -> None:
    """A game of Mord im Arosa as its rules go (rules/004), played at the tower's pace."""
    r = sc.rng
    n_players = int(r.integers(3, 6))
    players = [str(c) for c in r.permutation(COLOURS)[:n_players]]
    supply = {p: 20 for p in players}
    sheet = {p: [0] * LEVELS for p in players}
    game: dict[str, Any] = {"players": players, "turns": [], "crime_scenes": [],
                            "phase": "prologue"}
    sc.game = game
    over = False
    t = sc.quiet_until + float(r.uniform(0.5, 2.0))
    end = sc.duration - 4.0

    def one_throw(colour: str, kind: str, who: str) -> bool:
        nonlocal t
        if t > end:
            return False
        rec = throw(sc, t, colour=colour, kind=kind, extra={"who": who})
        t = settle_time(sc, rec) + float(r.uniform(0.8, 2.5))
        return True

    def check_end() -> bool:
        return any(sum(sheet[p]) >= 10 or supply[p] <= 0 for p in players)

    victims_by = players[int(r.integers(0, n_players))]
    game["victims_by"] = victims_by
    for _ in range(2):
        one_throw("red", "victim", victims_by)
    first = players.index(victims_by)
    for i in range(n_players):
        p = players[(first + i) % n_players]
        for _ in range(2):
            if one_throw(p, "prologue", p):
                supply[p] -= 1
    game["phase"] = "act1"
    who = int(r.integers(0, n_players))
    victims_found = 0
    while not over and t < sc.duration - 18.0:
        p = players[who]
        cubes_now = {lv: sc.on_level(lv, t) for lv in range(LEVELS)}
        weights = np.array([1, 1, 1.5, 2, 2.5, 3, 3.5, 4])
        turn: dict[str, Any] = {"who": p, "phase": game["phase"]}
        if game["phase"] == "act1":
            reds = [lv for lv in range(LEVELS) if any(s.colour == "red" for s in cubes_now[lv])]
            if reds and r.random() < 0.6:
                floor = int(r.choice(reds))
            else:
                floor = int(r.choice(LEVELS, p=weights / weights.sum()))
            turn.update(action="inspect", floor=floor)
        else:
            mine = sum(sheet[p])
            if mine and r.random() < 0.4:
                own = [lv for lv in range(LEVELS) if any(s.colour == p for s in cubes_now[lv])]
                floor = int(r.choice(own)) if own and r.random() < 0.6 else \
                    int(r.choice(LEVELS, p=weights / weights.sum()))
                turn.update(action="cover", floor=floor)
            else:
                others = [q for q in players if q != p]
                k = 1 if r.random() < 0.65 else 2
                sus = [str(x) for x in r.choice(others, size=min(k, len(others)),
                                                replace=False)]
                counts = [sum(s.colour in sus for s in cubes_now[lv]) for lv in range(LEVELS)]
                floor = int(np.argmax(counts)) if max(counts) and r.random() < 0.55 else \
                    int(r.choice(LEVELS, p=weights / weights.sum()))
                turn.update(action="suspect", floor=floor, suspects=sus)
        t_lift = t + float(r.uniform(0.9, 2.5))
        here = sc.on_level(floor, t_lift + 1.0)
        reds_here = [s for s in here if s.colour == "red"]
        t_close, taken = open_and_empty(sc, t_lift, floor, first=reds_here)
        found: dict[str, int] = {}
        for s in taken:
            found[s.colour] = found.get(s.colour, 0) + 1
        turn.update(found=found, removed=len(taken), victims=len(reds_here),
                    t_lift=t_lift, t_close=t_close)
        t = t_close + float(r.uniform(0.8, 2.0))
        penalties = 0
        if turn["action"] == "inspect":
            if reds_here:
                victims_found += len(reds_here)
                game["crime_scenes"] = sorted({*game["crime_scenes"], floor})
                for q in players:
                    if q != p:
                        n = min(found.get(q, 0), supply[q])
                        sheet[q][floor] += n
                        supply[q] -= n
            else:
                penalties = 1
        elif turn["action"] == "suspect":
            ground = floor == 0 and found.get(p, 0) == 0
            for q in turn["suspects"]:
                if ground:
                    penalties += 1
                    continue
                n = min(found.get(q, 0), supply[q])
                sheet[q][floor] += n
                supply[q] -= n
                penalties += int(found.get(q, 0) == 0)
        else:
            n = min(found.get(p, 0), sheet[p][floor])
            sheet[p][floor] -= n
            supply[p] += n
            penalties = int(found.get(p, 0) == 0)
        over = check_end()
        back = [s for s in taken if s.colour != "red"]
        thrown_back = 0
        for s in back:
            if over or not one_throw(s.colour, "throwback", p):
                break
            thrown_back += 1
        pen_done = 0
        for _ in range(penalties):
            if over or supply[p] <= 0 or t > end:
                break
            if not one_throw(p, "penalty", p):
                break
            supply[p] -= 1
            pen_done += 1
            over = check_end()
        turn.update(penalties=penalties, penalties_thrown=pen_done, thrown_back=thrown_back)
        game["turns"].append(turn)
        if game["phase"] == "act1" and victims_found >= 2:
            game["phase"] = "act2"
        who = (who + 1) % n_players
    if over:
        game["phase"] = "over"
    game.update(sheet=sheet, supply=supply)
    _room_noise(sc, (0, 3), (0, 1), (0, 2), (0, 1))


def simulate(seed: int, scenario: str, duration: float) -> Scene:
    """The scene of one recording."""
    sc = new_scene(seed, scenario, duration)
    {"single": scenario_single, "rapid": scenario_rapid, "noisy": scenario_noisy,
     "game": scenario_game}[scenario](sc)
    return sc


# -- sensors ------------------------------------------------------------------------------------

def _kick_wave(song: Song, fs: float) -> np.ndarray:
    n = int(5 * song.kick_decay_s * fs)
    t = np.arange(n) / fs
    f = song.kick_hz + (2.2 * song.kick_hz - song.kick_hz) * np.exp(-t / 0.012)
    phase = 2 * np.pi * np.cumsum(f) / fs
    return np.sin(phase) * np.exp(-t / song.kick_decay_s)


def table_vibration(sc: Scene, t: np.ndarray, fs: float) -> tuple[np.ndarray, np.ndarray]:
    """Vertical acceleration of the tabletop under the tower (m/s^2): the music's kick and
    bass, the dancers' thumps, glasses and taps; and the airborne music (unit level)."""
    room, r = sc.room, np.random.default_rng([sc.seed, 0xA4, SCENARIOS.index(sc.scenario)])
    n = len(t)
    a = np.zeros(n)
    air = np.zeros(n)
    for song in room.songs:
        i0, i1 = max(0, int(song.t_start * fs)), min(n, int(song.t_end * fs))
        if i1 <= i0:
            continue
        wave = _kick_wave(song, fs) * song.level
        for tk in song.kicks(0.0, t[-1] + 1 / fs):
            i = int(round(tk * fs))
            seg = wave[:max(0, min(len(wave), n - i))]
            a[i:i + len(seg)] += seg
        # the bass line: a note per beat (per bar when ambient), from a minor scale
        beat = song.beat_s() * (4 if song.pattern == "ambient" else 1)
        tt = t[i0:i1] - song.t_start
        idx = (tt // beat).astype(int)
        ratios = np.array([1.0, 1.189, 1.335, 1.498, 1.782, 2.0])
        n_notes = int(idx.max()) + 1
        seq = ratios[np.random.default_rng([sc.seed, int(song.t_start * 1000) % 2**31]
                                           ).integers(0, 6, min(n_notes, 64))]
        notes = song.bass_root_hz * seq[idx % len(seq)]
        notes = np.minimum(notes, 120.0)
        ph = 2 * np.pi * np.cumsum(notes) / fs
        env = np.exp(-(tt % beat) / (0.6 * beat)) * 0.7 + 0.3  # plucked
        if song.pattern == "ambient":  # a sustained pad, gliding from note to note
            env = np.ones_like(tt)
        a[i0:i1] += room.bass_ratio * song.level * np.sin(ph) * env
        if song.vocals:
            words = (np.sin(2 * np.pi * 4.3 * tt + 1.3 * np.sin(2 * np.pi * 0.7 * tt)) > -0.2)
            phrases = (np.sin(2 * np.pi * tt / (8 * song.beat_s())) > -0.5)
            air[i0:i1] += song.level * (0.4 + 0.6 * words * phrases)
    if room.low_cut_hz:
        sos = signal.butter(4, room.low_cut_hz, "highpass", fs=fs, output="sos")
        a = signal.sosfilt(sos, a)
    g = gain_at(room, t)
    a *= room.kick_ms2 * g
    noise = r.standard_normal(n)  # vocals and guitars, 100 Hz - 2 kHz (below Nyquist)
    sos = signal.butter(2, [100, min(2000, 0.45 * fs)], "bandpass", fs=fs, output="sos")
    air = signal.sosfilt(sos, noise) * air * g / max(g.max(), 1e-9) * (g.max() / 2.0)
    for d in room.dances:
        wave = np.sin(2 * np.pi * d["hz"] * np.arange(int(0.2 * fs)) / fs) * \
            np.exp(-np.arange(int(0.2 * fs)) / (0.04 * fs))
        for k, ts in enumerate(d["steps"]):
            i = int(round(ts * fs))
            if 0 <= i < n:
                swell = math.sin(math.pi * (k + 0.5) / len(d["steps"]))
                seg = wave[:n - i] * d["peak_ms2"] * swell
                a[i:i + len(seg)] += seg
    for ev in sc.table:
        i = int(round(ev["t"] * fs))
        if not 0 <= i < n:
            continue
        m = int(0.25 * fs)
        tt = np.arange(m) / fs
        tau = 0.008 if ev["kind"] == "tap" else 0.03
        seg = ev["peak_ms2"] * np.sin(2 * np.pi * ev["thud_hz"] * tt) * np.exp(-tt / tau)
        seg = seg[:n - i]
        a[i:i + len(seg)] += seg
    return a, air


def _resonator(x: np.ndarray, f: float, q: float, fs: float) -> np.ndarray:
    """A damped mode at ``f`` Hz, impulse response r^n cos(n w): an impulse of 1 peaks at 1.

    Modes above fs/2 fold down as sampled (the ADC has no anti-alias filter).
    """
    w = 2 * np.pi * f / fs
    rr = math.exp(-math.pi * f / (q * fs))
    return signal.lfilter([1.0, -rr * math.cos(w)], [1.0, -2 * rr * math.cos(w), rr * rr], x)


def render_piezo(sc: Scene, a_table: np.ndarray, air: np.ndarray, lifted: np.ndarray
                 ) -> np.ndarray:
    """The eight discs, ADC counts (n_sets, 8)."""
    tw, room = sc.tw, sc.room
    fs = tw.piezo_rate_hz
    n = len(a_table)
    r = np.random.default_rng([sc.seed, 0xA5, SCENARIOS.index(sc.scenario)])
    t = np.arange(n) / fs
    exc = np.zeros((LEVELS, n))
    for ti, lv, j, kind in sc.impacts:
        i = int(round(ti * fs))
        if not 0 <= i < n:
            continue
        gain = 0.6 if kind == "rim" else 1.0
        sign = 1.0 if r.random() < 0.5 else -1.0
        for k in range(LEVELS):
            d = abs(k - lv)
            share = 1.0 if d == 0 else tw.xt_near * tw.xt_far ** (d - 1)
            exc[k, i] += sign * gain * j * share * tw.pz_sens[k]
    clinks = np.zeros(n)
    for ev in sc.table:
        i = int(round(ev["t"] * fs))
        if 0 <= i < n:
            for k in range(LEVELS):
                exc[k, i] += ev["j_base"] * tw.base_fall ** k * tw.pz_sens[k]
            if ev["clink_hz"]:
                clinks[i] += ev["j_base"] * 150.0
    out = np.empty((n, LEVELS))
    hp = signal.butter(1, 2.0, "highpass", fs=fs, output="sos")  # AC coupling
    vib = signal.sosfilt(hp, a_table)
    clink = _resonator(clinks, 3000.0, 60.0, fs) if clinks.any() else np.zeros(n)
    hum = np.zeros(n)
    if room.hum_hz:
        ph = 2 * np.pi * room.hum_hz * t
        hum = room.hum_lsb * (np.sin(ph) + 0.3 * np.sin(2 * ph + 1.0) + 0.5 * np.sin(3 * ph))
    buzz = np.zeros(n)
    for t0, t1 in room.gsm:
        on = (t >= t0) & (t < t1) & (np.sin(2 * np.pi * 1.1 * (t - t0)) > -0.3)
        pulses = ((t * 216.7) % 1.0) < 0.125
        buzz += on * (pulses - 0.125)
    buzz = signal.sosfilt(hp, buzz) * room.gsm_lsb * 2
    for k in range(LEVELS):
        x = np.zeros(n)
        for f, q, w in zip(tw.f_modes[k], tw.q_modes[k], tw.w_modes[k], strict=True):
            x += w * _resonator(exc[k], f, q, fs)
        x += tw.table_pz * tw.vib_fall ** k * vib
        x += clink * tw.base_fall ** k
        x += room.air_lsb * (0.7 + 0.06 * k) * air
        x += hum + buzz * (1.0 - 0.05 * k)
        x += r.normal(0, tw.pz_noise[k], n)
        up = lifted <= k  # this disc is up in the lifted modules: its contact is open
        if up.any():
            x = np.where(up, r.normal(0, 2 * tw.pz_noise[k], n) + hum * 1.5, x)
        out[:, k] = x
    return np.clip(np.round(out + tw.bias), 0, 1023).astype("<u2")


def lifted_levels(sc: Scene, n: int, fs: float) -> np.ndarray:
    """Per set: the lowest level up in the lifted modules (exposed + 1), 8 when closed."""
    out = np.full(n, LEVELS, dtype=int)
    for lf, cl in zip(sc.lifts, sc.closes, strict=False):
        i0, i1 = int(lf["t"] * fs), int(cl["t"] * fs)
        out[i0:i1] = lf["exposed"] + 1
    if len(sc.lifts) > len(sc.closes):
        out[int(sc.lifts[-1]["t"] * fs):] = sc.lifts[-1]["exposed"] + 1
    return out


def render_load(sc: Scene, a_table: np.ndarray, first_read: float
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """The HX711 readings: (times s, valid bits, counts (n, 8), channel readings missed)."""
    tw, room = sc.tw, sc.room
    fs = tw.piezo_rate_hz
    n = len(a_table)
    t = np.arange(n) / fs
    r = np.random.default_rng([sc.seed, 0xA6, SCENARIOS.index(sc.scenario)])
    mass = np.zeros((LEVELS, n))
    for ti, lv, grams in sc.weights:
        i = int(math.ceil(ti * fs))
        if i < n:
            mass[lv, max(i, 0)] += grams
    mass = np.cumsum(mass, axis=1) + tw.plate_g[:, None]
    force = mass * (1.0 + a_table[None, :] * tw.load_fall ** np.arange(LEVELS)[:, None] / G)
    for ti, lv, j, kind in sc.impacts:
        i = int(round(ti * fs))
        if 0 <= i < n:
            share = {"rim": 0.5, "lift": 0.3, "close": 0.5}.get(kind, 1.0)
            force[lv, i] += share * j * G_PER_MNS_S * fs * 1e-3
    for t0, t1, lv, grams in sc.presses:
        sel = (t >= t0) & (t < t1)
        force[lv, sel] += grams * np.sin(np.pi * (t[sel] - t0) / (t1 - t0)) ** 2
    cell = np.empty_like(force)
    for k in range(LEVELS):
        # the plate on its cell: a second-order low pass at the resonance, DC gain 1
        w0 = 2 * np.pi * tw.cell_f0[k]
        bz, az = signal.bilinear([w0 * w0], [1, 2 * tw.cell_zeta[k] * w0, w0 * w0], fs=fs)
        zi = signal.lfilter_zi(bz, az) * force[k, 0]
        cell[k] = signal.lfilter(bz, az, force[k], zi=zi)[0]
    if room.hum_hz:  # the ground loop at the converter's input, in grams of each cell
        cell += (room.hum_counts * np.sin(2 * np.pi * room.hum_hz * t))[None, :] / tw.cpg[:, None]
    # a reading averages its cell over the conversion period that ends at its time
    period = 1.0 / (tw.load_rate_hz * (1 + tw.hx_err))
    times = np.arange(first_read, sc.duration, period)
    csum = np.concatenate([np.zeros((LEVELS, 1)), np.cumsum(cell, axis=1) / fs], axis=1)
    tg = np.arange(n + 1) / fs
    start = np.maximum(times - period, 0.0)
    avg = np.empty((len(times), LEVELS))
    for k in range(LEVELS):
        avg[:, k] = (np.interp(times, tg, csum[k]) - np.interp(start, tg, csum[k])) / \
            np.maximum(times - start, 1e-9)
    drift = times[:, None] / 60.0 * tw.drift_g_per_min[None, :]
    counts = tw.zero_counts[None, :] + tw.cpg[None, :] * (avg - tw.plate_g[None, :] + drift)
    counts += r.normal(0, tw.ld_noise, counts.shape)
    counts = np.clip(np.round(counts), -(2**23), 2**23 - 1).astype(np.int64)
    valid = np.full(len(times), 0xFF, dtype=np.int64)
    missed = 0
    for lf, cl in zip(sc.lifts, [*sc.closes, None], strict=False):
        back = (cl["t"] + period * float(r.uniform(2, 4))) if cl is not None else math.inf
        sel = (times >= lf["t"]) & (times < back)
        mask = 0
        for k in range(lf["exposed"] + 1, LEVELS):
            mask |= 1 << k
        valid[sel] &= ~mask & 0xFF
        missed += int(sel.sum()) * (LEVELS - 1 - lf["exposed"])
    for k in range(LEVELS):
        counts[(valid >> k) & 1 == 0, k] = 0
    return times, valid, counts, missed


# -- the byte stream ----------------------------------------------------------------------------

def _s24(v: np.ndarray) -> bytes:
    u = (v.astype(np.int64) & 0xFFFFFF).astype("<u4").view(np.uint8).reshape(-1, 4)[:, :3]
    return u.tobytes()


def render(sc: Scene) -> tuple[bytes, dict[str, Any]]:
    """The scene as the device's byte stream, and its truth."""
    tw = sc.tw
    fs = tw.piezo_rate_hz
    n = int(round(sc.duration * fs))
    t = np.arange(n) / fs
    rs = np.random.default_rng([sc.seed, 0xA7, SCENARIOS.index(sc.scenario)])
    a_table, air = table_vibration(sc, t, fs)
    lifted = lifted_levels(sc, n, fs)
    pz = render_piezo(sc, a_table, air, lifted)
    boot = rs.random() < 0.6
    period_us = 1_000_000 // fs
    if boot:
        t_us0 = int(rs.integers(20_000, 60_000))
    else:
        t_us0 = int(rs.integers(0, 2**32))
    # the first reading after 1-4 conversions, never before the first PIEZO message is out
    first_read = max(float(rs.uniform(1.0, 4.0)) / (tw.load_rate_hz * (1 + tw.hx_err)),
                     (tw.batch + 2) / fs)
    ld_t, ld_valid, ld_counts, _missed = render_load(sc, a_table, first_read)

    events: list[tuple[float, int, int, bytes]] = []  # (emit s, order, type, body)
    for k, i in enumerate(range(0, n, tw.batch)):
        m = min(tw.batch, n - i)
        body = struct.pack("<IB", (t_us0 + i * period_us) % 2**32, m) + pz[i:i + m].tobytes()
        events.append(((i + m) / fs, 0, 0x02, body))
        del k
    cum_missed = np.zeros(len(ld_t), dtype=np.int64)
    for j in range(len(ld_t)):
        stamp = (t_us0 + int(round(ld_t[j] * 1e6))) % 2**32
        body = struct.pack("<IB", stamp, int(ld_valid[j])) + _s24(ld_counts[j])
        events.append((ld_t[j] + 0.0002, 1, 0x03, body))
        cum_missed[j] = 8 - bin(int(ld_valid[j])).count("1")
    cum_missed = np.cumsum(cum_missed)
    uptime0_ms = t_us0 // 1000 if boot else int(rs.integers(120_000, 18_000_000))
    cpu = int(rs.integers(35, 60))
    next_ms = (uptime0_ms // 1000 + 1) * 1000
    while (next_ms - uptime0_ms) / 1000 < sc.duration:
        ts = (next_ms - uptime0_ms) / 1000
        timeouts = int(cum_missed[np.searchsorted(ld_t, ts) - 1]) if len(ld_t) and \
            ld_t[0] <= ts else 0
        body = struct.pack("<IHHHBB", next_ms % 2**32, 0, 0, timeouts % 65536, cpu, 0)
        events.append((ts, 2, 0x04, body))
        next_ms += 1000
    events.sort(key=lambda e: (e[0], e[1]))
    hello = struct.pack("<BBBBBBHHB", 1, *tw.fw, 8, 8, fs, tw.load_rate_hz, 10) + tw.device_id
    out = bytearray()
    seq = 0 if boot else int(rs.integers(0, 65536))
    session: dict[str, Any] = {"start": "boot" if boot else "running", "t_us0": t_us0,
                               "seq_first": seq, "uptime_ms0": uptime0_ms}
    if boot:
        out += frame(0x01, seq, hello)
        seq += 1
        before = 0
    else:
        # the port opens inside a frame of the running stream: its tail, no message
        tail = frame(0x02, seq - 1, next(e[3] for e in events if e[2] == 0x02))
        cut = int(rs.integers(3, min(40, len(tail) - 1)))
        while cut > 1 and _decodes(tail[-cut:-1]):
            cut -= 1
        out += tail[-cut:]
        session["mid_frame_bytes"] = cut
        before = int(rs.integers(1, 4))
    for idx, (_, _, typ, body) in enumerate(events):
        if not boot and idx == before:
            out += frame(0x01, seq, hello)
            out += frame(0x05, seq + 1, struct.pack("<BHB", 0x81, 0, 0))
            seq += 2
        out += frame(typ, seq, body)
        seq += 1
    session["messages_before_hello"] = 0 if boot else before
    return bytes(out), truth_of(sc, session)


def _f(x: Any) -> Any:
    """Floats rounded for the truth file (times to 0.1 ms), recursively."""
    if isinstance(x, float | np.floating):
        return round(float(x), 5)
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, dict):
        return {k: _f(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_f(v) for v in x]
    return x


def truth_of(sc: Scene, session: dict[str, Any]) -> dict[str, Any]:
    """The truth file of a scene (the scorer's keys, and what the music did)."""
    room = sc.room
    lands = sorted(sc.landings, key=lambda x: x["t"])
    music = {
        "placement": room.placement, "low_cut_hz": room.low_cut_hz,
        "kick_ms2_at_volume_1": room.kick_ms2,
        "bass_ratio": room.bass_ratio, "air_lsb": room.air_lsb,
        "songs": [{"t_start": s.t_start, "t_end": s.t_end, "bpm": s.bpm, "pattern": s.pattern,
                   "kick_steps": s.steps, "kick_hz": s.kick_hz, "kick_decay_s": s.kick_decay_s,
                   "level": s.level, "bass_root_hz": s.bass_root_hz, "vocals": s.vocals}
                  for s in room.songs],
        "gaps": [[a.t_end, b.t_start] for a, b in zip(room.songs, room.songs[1:],
                                                       strict=False)],
        "volume": [list(v) for v in room.volume],
        "gsm_bursts": [list(g) for g in room.gsm], "gsm_lsb": room.gsm_lsb,
        "usb_hum_hz": room.hum_hz, "usb_hum_lsb": room.hum_lsb,
        "usb_hum_counts": room.hum_counts,
        "dancing": [{k: v for k, v in d.items() if k != "steps"} | {"n_steps": len(d["steps"])}
                    for d in room.dances],
        "table": [dict(ev) for ev in sc.table if ev["kind"] != "tap"],
    }
    doc: dict[str, Any] = {
        "format": FORMAT, "model": MODEL, "scenario": sc.scenario, "seed": sc.seed,
        "duration_s": float(sc.duration), "cells": "matched", "quiet_until": sc.quiet_until,
        "damage": [],
        "landings": lands, "knockdowns": sorted(sc.knockdowns, key=lambda x: x["t"]),
        "removals": sc.removals, "lifts": sc.lifts, "closes": sc.closes,
        "knocks": sorted(sc.knocks, key=lambda x: x["t"]),
        "music": music, "session": session, "tower": sc.tw.figures(),
    }
    if sc.game is not None:
        doc["game"] = sc.game
    doc = _f(doc)
    for kind in ("landings", "knockdowns", "removals", "lifts", "closes", "knocks"):
        for x in doc[kind]:
            x["t"] = float(x["t"])
    doc["duration_s"] = float(sc.duration)
    return doc


# -- command line -------------------------------------------------------------------------------

def make_recording(seed: int, scenario: str, duration: float, out: Path) -> tuple[Path, Path]:
    """Write ``{scenario}_t{seed}.bin`` and its truth into ``out``."""
    raw, truth = render(simulate(seed, scenario, duration))
    bin_path = out / f"{scenario}_t{seed}.bin"
    truth_path = out / f"{scenario}_t{seed}.truth.json"
    bin_path.write_bytes(raw)
    truth_path.write_text(json.dumps(truth, indent=None, separators=(",", ":")))
    return bin_path, truth_path


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, exit 2
        self.exit(2, f"{self.prog}: error: {message}\n")


def main(argv: list[str] | None = None) -> int:
    """Command line: make the recordings of ``--towers`` towers."""
    p = _Parser(prog="make_recordings_ao.py", description=__doc__.split("\n")[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--towers", type=int, default=8)
    p.add_argument("--first-seed", type=int, default=1)
    p.add_argument("--duration", type=float, default=120.0)
    p.add_argument("--scenarios", nargs="+", default=list(SCENARIOS))
    args = p.parse_args(argv)
    for s in args.scenarios:
        if s not in SCENARIOS:
            p.error(f"unknown scenario {s!r} (known: {', '.join(SCENARIOS)})")
    if args.towers < 1:
        p.error("--towers must be at least 1")
    if not (math.isfinite(args.duration) and args.duration >= 15.0):
        p.error("--duration must be at least 15 seconds")
    if args.first_seed < 0:
        p.error("--first-seed must not be negative")
    try:
        args.out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        print(f"make_recordings_ao.py: cannot create {args.out}: {exc}", file=sys.stderr)
        return 2
    for seed in range(args.first_seed, args.first_seed + args.towers):
        for s in args.scenarios:
            try:
                make_recording(seed, s, args.duration, args.out)
            except OSError as exc:
                print(f"make_recordings_ao.py: cannot write {s}_t{seed} in {args.out}: {exc}",
                      file=sys.stderr)
                return 2
            print(f"{s}_t{seed}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
