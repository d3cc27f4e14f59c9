#!/usr/bin/env python3
"""Independent cross-check recordings ("model B") of a simulated Arosa tower.

Writes ``{scenario}_t{seed}.bin`` (the device -> host byte stream of
contracts.md section 1, exactly as off the wire) and ``{scenario}_t{seed}.truth.json``
(ground truth for tools/crosscheck/score.py) for every tower and scenario.

Written from contracts.md and design.md only: its wire encoder, its physics and
its sensor models share no code and no parameters with the project's detector,
simulator or first cross-check generator. See README.md beside this file for
the model and every parameter range.

Usage::

    .venv/bin/python tools/crosscheck_b/make_recordings_b.py --out /tmp/xb \
        [--towers 4] [--first-seed 1] [--duration 120] [--scenarios single rapid noisy game]
"""

from __future__ import annotations

import argparse
import json
import math
import struct
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import signal

FloatArray = NDArray[np.floating[Any]]
IntArray = NDArray[np.int64]

TRUTH_FORMAT = "towerear-crosscheck-truth/1"
SCENARIOS = ("single", "rapid", "noisy", "game")
N_LEVELS = 8
G = 9.81  # m/s^2
GF_PER_N = 1.0 / 9.81e-3  # grams-force per newton
ADC_BITS = 10
ADC_MAX = (1 << ADC_BITS) - 1
PIEZO_RATE_HZ = 2000
S24_MIN, S24_MAX = -(1 << 23), (1 << 23) - 1
U32 = 1 << 32
LOAD_FINE_HZ = 1000.0  # plate mechanics are simulated on this grid (resonances <= 30 Hz)

MSG_HELLO, MSG_PIEZO, MSG_LOAD, MSG_STATUS, MSG_ACK = 0x01, 0x02, 0x03, 0x04, 0x05
CMD_GET_INFO = 0x81
MAX_SETS = 14  # contracts.md: n is 1..14 sample sets


# --------------------------------------------------------------------------- wire


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
    """CRC-16/CCITT-FALSE: poly 0x1021, init 0xFFFF, not reflected, xorout 0."""
    crc = 0xFFFF
    tab = _CRC_TABLE
    for b in data:
        crc = ((crc << 8) & 0xFFFF) ^ tab[(crc >> 8) ^ b]
    return crc


def crc16_bitwise(data: bytes) -> int:
    """Bit-by-bit reference of :func:`crc16_ccitt_false` (for the tests)."""
    crc = 0xFFFF
    for b in data:
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) & 0xFFFF if crc & 0x8000 else (crc << 1) & 0xFFFF
    return crc


def cobs_encode(data: bytes) -> bytes:
    """Consistent Overhead Byte Stuffing (no trailing 0x00; the caller adds it).

    A run of 254 non-zero bytes is closed with code 0xFF and, as in the
    canonical algorithm, no empty block follows when the data ends right there.
    """
    out = bytearray()
    block = bytearray()
    just_closed = False
    for b in data:
        just_closed = False
        if b == 0:
            out.append(len(block) + 1)
            out += block
            block.clear()
        else:
            block.append(b)
            if len(block) == 254:
                out.append(0xFF)
                out += block
                block.clear()
                just_closed = True
    if not just_closed:
        out.append(len(block) + 1)
        out += block
    return bytes(out)


def _cobs_fast(data: bytes) -> bytes:
    # Messages are <= 254 bytes, so every zero-free run is shorter than 255.
    return b"".join(bytes((len(p) + 1,)) + p for p in data.split(b"\x00"))


class Wire:
    """Device-side sender: numbers messages, adds the CRC, frames with COBS + 0x00."""

    def __init__(self, first_seq: int) -> None:
        self.seq = first_seq & 0xFFFF
        self.chunks: list[bytes] = []
        self.count: dict[int, int] = {}

    def frame(self, mtype: int, body: bytes) -> bytes:
        msg = struct.pack("<BH", mtype, self.seq) + body
        assert len(msg) + 2 <= 254, "contracts.md: at most 254 bytes before encoding"
        msg += struct.pack("<H", crc16_ccitt_false(msg))
        self.seq = (self.seq + 1) & 0xFFFF
        self.count[mtype] = self.count.get(mtype, 0) + 1
        return _cobs_fast(msg) + b"\x00"

    def send(self, mtype: int, body: bytes) -> None:
        self.chunks.append(self.frame(mtype, body))

    def data(self) -> bytes:
        return b"".join(self.chunks)


def hello_body(*, fw: tuple[int, int, int], piezo_rate_hz: int, load_rate_hz: int,
               device_id: bytes) -> bytes:
    """HELLO: proto, fw x3, n_piezo, n_load, piezo_rate_hz u16, load_rate_hz u16, adc_bits, id."""
    assert len(device_id) == 8
    return struct.pack("<BBBBBBHHB", 1, *fw, N_LEVELS, N_LEVELS, piezo_rate_hz, load_rate_hz,
                       ADC_BITS) + device_id


def piezo_body(t_us: int, sets: NDArray[np.uint16]) -> bytes:
    """PIEZO: t_us u32 (first set), n u8, n x 8 samples u16, set-major."""
    n = sets.shape[0]
    assert 1 <= n <= MAX_SETS and sets.shape[1] == N_LEVELS
    return struct.pack("<IB", t_us % U32, n) + sets.astype("<u2").tobytes()


def load_body(t_us: int, valid: int, counts: list[int]) -> bytes:
    """LOAD: t_us u32, valid u8, 8 x s24 (0 where not valid)."""
    out = bytearray(struct.pack("<IB", t_us % U32, valid))
    for k, c in enumerate(counts):
        v = c if valid >> k & 1 else 0
        out += int(v).to_bytes(3, "little", signed=True)
    return bytes(out)


def status_body(*, uptime_ms: int, piezo_overruns: int, tx_dropped: int, load_timeouts: int,
                cpu_load_pct: int, flags: int) -> bytes:
    """STATUS: uptime_ms u32, overruns u16, tx_dropped u16, load_timeouts u16, cpu u8, flags u8."""
    return struct.pack("<IHHHBB", uptime_ms % U32, piezo_overruns & 0xFFFF, tx_dropped & 0xFFFF,
                       load_timeouts & 0xFFFF, cpu_load_pct, flags)


def ack_body(cmd_type: int, cmd_seq: int, result: int = 0) -> bytes:
    """ACK: cmd_type u8, cmd_seq u16, result u8."""
    return struct.pack("<BHB", cmd_type, cmd_seq, result)


# --------------------------------------------------------------------------- tower


def _loguniform(rng: np.random.Generator, lo: float, hi: float, size: Any = None) -> Any:
    return np.exp(rng.uniform(math.log(lo), math.log(hi), size))


@dataclass
class Plate:
    """One level's plate: its vibration modes, its holes and its mechanics on the load cell."""

    modes_hz: FloatArray
    modes_q: FloatArray
    modes_w: FloatArray
    p_direct: float  # a cube arriving from above drops through the hole without touching
    p_edge: float  # ... clips the hole's edge and drops through
    p_thru_after_hit: float  # ... hits the plate, bounces, slides into a hole
    f0_hz: float  # plate + cell resonance
    zeta: float  # its damping ratio


@dataclass
class Tower:
    """Everything fixed about one simulated tower and its electronics (drawn from the seed)."""

    seed: int
    cells: str
    cube_mass_g: float
    cube_mass_spread: float
    restitution: float
    module_h_m: FloatArray  # height of module k (plate k+1 above plate k; module 7: entrance)
    plates: list[Plate]
    p_hit_cube_per_cube: float
    p_knockdown: float
    # piezo chain
    piezo_a0: float  # counts at the source for a 1 m/s hit by a 0.5 g cube
    speed_gamma: float
    click_ratio: float
    scrape_counts: float
    gain: FloatArray  # per disc (linear)
    bias: FloatArray
    noise_rms: FloatArray
    hp_hz: FloatArray  # AC coupling corner per channel
    lp_hz: float  # front-end RC low-pass corner (no anti-alias filter worth the name)
    xt_gain: FloatArray  # [receiver, source]
    xt_lp_hz: FloatArray  # per level distance 1..7 (index d-1)
    xt_delay_s: FloatArray  # per level distance 1..7
    hum_hz: float
    hum_amp: FloatArray  # per channel, fundamental
    hum_harm: FloatArray  # relative amplitudes of harmonics 2..7
    hum_phase: FloatArray
    glitch_per_s: float
    lifted_piezo: str  # "float" or "bias"
    # clocks and framing
    piezo_ppm: float
    load_rate_hello: int
    load_rate_true: float
    load_jitter_us: float
    sets_mode: str  # "fixed" or "variable"
    sets_fixed: int
    # load cells
    sens: FloatArray  # counts per gram (sign: cell orientation)
    offset: FloatArray  # counts
    load_noise_g: FloatArray
    creep_frac: FloatArray
    creep_tau_s: FloatArray
    drift_g: FloatArray
    wall_coupling: float  # fraction of an impact impulse felt by neighbouring plates
    fw: tuple[int, int, int]
    device_id: bytes

    @classmethod
    def from_seed(cls, seed: int) -> Tower:
        """Draw a tower; see README.md for the ranges."""
        rng = np.random.default_rng([seed, 0xB0B])
        plates = []
        for level in range(N_LEVELS):
            n_modes = int(rng.integers(3, 7))
            modes = np.sort(_loguniform(rng, 80.0, 2000.0, n_modes))
            # Holes are smaller upwards: a little more falls straight through low down.
            p_direct = float(rng.uniform(0.05, 0.22) + 0.012 * (7 - level))
            p_edge = float(rng.uniform(0.08, 0.3))
            p_stop = float(rng.uniform(0.13, 0.4))
            p_hit = 1.0 - p_direct - p_edge
            plates.append(Plate(
                modes_hz=modes,
                modes_q=_loguniform(rng, 4.0, 40.0, n_modes),
                modes_w=_loguniform(rng, 0.25, 1.0, n_modes),
                p_direct=p_direct, p_edge=p_edge,
                p_thru_after_hit=float(np.clip(1.0 - p_stop / p_hit, 0.0, 0.95)),
                f0_hz=float(rng.uniform(6.0, 30.0)), zeta=float(_loguniform(rng, 0.02, 0.3)),
            ))
        cells = "matched" if rng.random() < 0.5 else "mixed"
        if cells == "matched":
            base = float(_loguniform(rng, 3000.0, 80000.0))
            sign = -1.0 if rng.random() < 0.3 else 1.0
            sens = sign * base * rng.uniform(0.9, 1.1, N_LEVELS)
        else:
            sens = _loguniform(rng, 3000.0, 80000.0, N_LEVELS)
            sens = sens * np.where(rng.random(N_LEVELS) < 0.3, -1.0, 1.0)
        room = np.abs(sens) * 40.0  # 40 g of headroom either side of the offset
        offset = rng.uniform(S24_MIN + room, S24_MAX - room)
        noise_g = _loguniform(rng, 0.002, 0.05, N_LEVELS)
        if rng.random() < 0.25:
            noise_g[rng.integers(N_LEVELS)] *= rng.uniform(5.0, 20.0)
        # crosstalk: per boundary k|k+1, up and down attenuation in dB
        up_db = rng.uniform(3.0, 25.0, N_LEVELS - 1)
        down_db = np.clip(up_db + rng.uniform(-8.0, 8.0, N_LEVELS - 1), 3.0, 25.0)
        strong = rng.random(N_LEVELS - 1) < 0.15
        up_db[strong] = rng.uniform(0.5, 3.0, int(strong.sum()))
        down_db[strong] = up_db[strong] + rng.uniform(0.0, 1.5, int(strong.sum()))
        xt = np.eye(N_LEVELS)
        for r in range(N_LEVELS):
            for s in range(N_LEVELS):
                if r > s:  # heard above the source
                    xt[r, s] = 10 ** (-up_db[s:r].sum() / 20)
                elif r < s:
                    xt[r, s] = 10 ** (-down_db[r:s].sum() / 20)
        xt_lp1 = float(rng.uniform(150.0, 900.0))
        d = np.arange(1, N_LEVELS)
        load_rate_hello = 80 if rng.random() < 0.7 else int(rng.choice([76, 77, 78, 79, 81, 82, 83,
                                                                         84]))
        sets_mode = "variable" if rng.random() < 0.4 else "fixed"
        return cls(
            seed=seed, cells=cells,
            cube_mass_g=float(rng.uniform(0.25, 1.0)),
            cube_mass_spread=float(rng.uniform(0.005, 0.04)),
            restitution=float(rng.uniform(0.25, 0.55)),
            module_h_m=rng.uniform(0.03, 0.05, N_LEVELS),
            plates=plates,
            p_hit_cube_per_cube=float(rng.uniform(0.03, 0.1)),
            p_knockdown=float(rng.uniform(0.15, 0.4)),
            piezo_a0=float(_loguniform(rng, 90.0, 380.0)),
            speed_gamma=float(rng.uniform(0.9, 1.4)),
            click_ratio=float(rng.uniform(0.15, 0.8)),
            scrape_counts=float(rng.uniform(0.8, 6.0)),
            gain=10 ** (rng.uniform(-8.0, 8.0, N_LEVELS) / 20),
            bias=np.round(rng.uniform(497.0, 528.0, N_LEVELS)),
            noise_rms=rng.uniform(0.4, 2.5, N_LEVELS),
            hp_hz=rng.uniform(3.0, 30.0, N_LEVELS),
            lp_hz=float(rng.uniform(700.0, 4000.0)),
            xt_gain=xt,
            xt_lp_hz=xt_lp1 / d ** rng.uniform(0.3, 0.9),
            xt_delay_s=d * rng.uniform(0.1e-3, 0.6e-3),
            hum_hz=float(rng.choice([50.0, 60.0]) * (1 + rng.uniform(-1e-3, 1e-3))),
            hum_amp=float(_loguniform(rng, 0.2, 6.0)) * rng.uniform(0.5, 1.5, N_LEVELS),
            hum_harm=rng.uniform(0.0, 0.6, 6) / np.arange(2, 8) ** 0.5,
            hum_phase=rng.uniform(0, 2 * np.pi, (N_LEVELS, 7)),
            glitch_per_s=float(rng.choice([0.0, 0.0, 0.005, 0.02, 0.06])),
            lifted_piezo="float" if rng.random() < 0.5 else "bias",
            piezo_ppm=float(rng.uniform(-500, 500)),
            load_rate_hello=load_rate_hello,
            load_rate_true=load_rate_hello * (1 + rng.uniform(-500e-6, 500e-6)),
            load_jitter_us=float(rng.uniform(20.0, 250.0)),
            sets_mode=sets_mode, sets_fixed=int(rng.choice([1, 2, 4, 5, 8, 10, 12, 14])),
            sens=sens, offset=offset, load_noise_g=noise_g,
            creep_frac=rng.uniform(0.001, 0.01, N_LEVELS),
            creep_tau_s=rng.uniform(10.0, 120.0, N_LEVELS),
            drift_g=_loguniform(rng, 0.003, 0.08, N_LEVELS),
            wall_coupling=float(rng.uniform(0.02, 0.15)),
            fw=(1, int(rng.integers(0, 4)), int(rng.integers(0, 10))),
            device_id=bytes(rng.integers(0, 256, 8, dtype=np.uint8).tolist()),
        )

    def summary(self) -> dict[str, Any]:
        """The parameters worth keeping in the truth file (for looking into failures)."""
        return {
            "cube_mass_g": round(self.cube_mass_g, 4), "restitution": round(self.restitution, 3),
            "sens_counts_per_g": [round(float(s)) for s in self.sens],
            "load_noise_g": [round(float(s), 4) for s in self.load_noise_g],
            "piezo_gain_db": [round(float(20 * np.log10(g)), 1) for g in self.gain],
            "crosstalk_adjacent_db_up": [round(float(-20 * np.log10(self.xt_gain[k + 1, k])), 1)
                                         for k in range(N_LEVELS - 1)],
            "crosstalk_adjacent_db_down": [round(float(-20 * np.log10(self.xt_gain[k, k + 1])), 1)
                                           for k in range(N_LEVELS - 1)],
            "plate_f0_hz": [round(p.f0_hz, 1) for p in self.plates],
            "hum_hz": round(self.hum_hz, 2), "piezo_ppm": round(self.piezo_ppm, 1),
            "load_rate_hello": self.load_rate_hello,
            "load_rate_true": round(self.load_rate_true, 4),
            "sets": self.sets_mode if self.sets_mode == "variable" else self.sets_fixed,
            "lifted_piezo": self.lifted_piezo, "glitch_per_s": self.glitch_per_s,
        }


# --------------------------------------------------------------------------- scene


@dataclass
class Cube:
    """A cube in the tower."""

    mass_g: float
    red: bool
    level: int = -1
    rest_t: float = math.inf


@dataclass
class Scene:
    """Physical happenings on the simulation clock (seconds from the start of the recording)."""

    # piezo sources: (t, level, counts at source, kind) -- heard through crosstalk
    contacts: list[tuple[float, int, float, str]] = field(default_factory=list)
    # (t0, t1, level, rms counts) band-limited rustle at the source (sliding, fingers)
    rustles: list[tuple[float, float, int, float]] = field(default_factory=list)
    # felt on all channels at once (table, floor, door): (t, counts at level 0, kind)
    room: list[tuple[float, float, str]] = field(default_factory=list)
    talk: list[tuple[float, float, float]] = field(default_factory=list)
    # load: impulses (t, level, gram-force seconds), static steps (t, level, grams),
    # hand pulses (t0, t1, level, grams, rise_s)
    impulses: list[tuple[float, int, float]] = field(default_factory=list)
    steps: list[tuple[float, int, float]] = field(default_factory=list)
    hands: list[tuple[float, float, int, float, float]] = field(default_factory=list)
    lifted: list[tuple[float, float, int]] = field(default_factory=list)
    reseat: list[tuple[float, int, float]] = field(default_factory=list)
    # truth
    landings: list[dict[str, Any]] = field(default_factory=list)
    knockdowns: list[dict[str, Any]] = field(default_factory=list)
    removals: list[dict[str, Any]] = field(default_factory=list)
    lifts: list[dict[str, Any]] = field(default_factory=list)
    closes: list[dict[str, Any]] = field(default_factory=list)
    knocks: list[dict[str, Any]] = field(default_factory=list)


def _fall(v0: float, h: float) -> tuple[float, float]:
    """Free fall of ``h`` metres starting at ``v0`` m/s down: (time, end speed)."""
    v1 = math.sqrt(v0 * v0 + 2 * G * h)
    return (v1 - v0) / G, v1


class TowerSim:
    """Cubes in the shaft: contacts, bounces, slides, knock-downs; fills a :class:`Scene`."""

    CUBE_SIZE_M = 0.009

    def __init__(self, tower: Tower, rng: np.random.Generator) -> None:
        self.tower = tower
        self.rng = rng
        self.scene = Scene()
        self.cubes: list[Cube] = []

    def new_cube(self, red: bool = False) -> Cube:
        t = self.tower
        spread = t.cube_mass_spread * float(self.rng.standard_normal())
        c = Cube(mass_g=t.cube_mass_g * (1 + spread), red=red)
        self.cubes.append(c)
        return c

    def resting(self, level: int, t: float) -> list[Cube]:
        return [c for c in self.cubes if c.level == level and c.rest_t < t]

    def _contact(self, t: float, level: int, v: float, m_g: float, kind: str) -> None:
        tw, rng = self.tower, self.rng
        geometry = {"plate": 1.0, "edge": rng.uniform(0.5, 1.3), "cube": rng.uniform(0.3, 0.8),
                    "module": 1.0}[kind]
        amp = (tw.piezo_a0 * geometry * (m_g / 0.5) ** 0.6 * max(v, 0.0) ** tw.speed_gamma
               * float(rng.lognormal(0.0, 0.25)))
        self.scene.contacts.append((t, level, amp, kind))
        e = tw.restitution
        j_gfs = m_g * 1e-3 * v * (1 + e) * GF_PER_N  # impulse in gram-force seconds
        self.scene.impulses.append((t, level, j_gfs))
        for nb in (level - 1, level + 1):
            if 0 <= nb < N_LEVELS:
                self.scene.impulses.append((t + 3e-4, nb, tw.wall_coupling * j_gfs))

    def throw(self, t0: float) -> dict[str, Any]:
        """Drop a new cube into the shaft at ``t0``; returns its truth landing."""
        cube = self.new_cube()
        return self.throw_cube(cube, t0)

    def throw_cube(self, cube: Cube, t0: float) -> dict[str, Any]:
        h_release = float(self.rng.uniform(0.0, 0.08))  # hand above the entrance
        dt, v = _fall(0.0, h_release + self.tower.module_h_m[7] - self.CUBE_SIZE_M)
        landing = self._travel(cube, N_LEVELS - 1, t0 + dt, v, knocked=False)
        landing["t_throw"] = round(t0, 4)
        self.scene.landings.append(landing)
        return landing

    def _travel(self, cube: Cube, level: int, t: float, v: float, *, knocked: bool
                ) -> dict[str, Any]:
        """Cube reaches the plate of ``level`` at time ``t`` with ``v`` m/s (down)."""
        tw, rng, sc = self.tower, self.rng, self.scene
        m = cube.mass_g
        first_impact: float | None = None
        caused = False
        while True:
            plate = tw.plates[level]
            h_below = tw.module_h_m[level - 1] - self.CUBE_SIZE_M if level > 0 else 0.0
            # A knocked-down cube arrives slowly and tumbling: it rarely goes further.
            thru_scale = 0.3 if knocked else 1.0
            r = float(rng.random())
            if level > 0 and r < plate.p_direct * thru_scale:
                dt, v = _fall(v, h_below)
                t += dt
                level -= 1
                continue
            if level > 0 and r < (plate.p_direct + plate.p_edge) * thru_scale:
                self._contact(t, level, v * float(rng.uniform(0.2, 0.55)), m, "edge")
                first_impact = t if first_impact is None else first_impact
                dt, v = _fall(v * float(rng.uniform(0.4, 0.85)), h_below)
                sc.rustles.append((t, t + 0.02, level, tw.scrape_counts * 0.5))
                t += dt
                level -= 1
                continue
            # hits the plate (or a cube resting on it)
            first_impact = t if first_impact is None else first_impact
            others = self.resting(level, t)
            p_hit_cube = min(0.4, tw.p_hit_cube_per_cube * len(others))
            if others and rng.random() < p_hit_cube:
                self._contact(t, level, v, m, "cube")
                if rng.random() < tw.p_knockdown:
                    victim = others[int(rng.integers(len(others)))]
                    caused = caused or self._knock_down(victim, level, t) is not None
                v_b = v * float(rng.uniform(0.3, 0.7))
            else:
                self._contact(t, level, v, m, "plate")
                v_b = v * tw.restitution * float(rng.uniform(0.8, 1.15))
            tb = t
            n_b = 0
            while v_b > 0.12 and n_b < 6:
                tb += 2 * v_b / G
                self._contact(tb, level, v_b, m, "plate")
                v_b *= tw.restitution * float(rng.uniform(0.75, 1.15))
                n_b += 1
            slide = float(_loguniform(rng, 0.02, 0.45))
            sc.rustles.append((tb, tb + slide, level, tw.scrape_counts * (m / 0.5) ** 0.5))
            goes_on = level > 0 and rng.random() < plate.p_thru_after_hit * thru_scale
            if goes_on:
                t_leave = tb + slide
                sc.hands.append((tb, t_leave, level, m, 0.005))  # its weight while sliding
                dt, v = _fall(float(rng.uniform(0.05, 0.3)), h_below)
                t = t_leave + dt
                level -= 1
                continue
            t_rest = tb + slide
            if slide > 0.15 and rng.random() < 0.5:  # a last tip-over onto a face
                self._contact(t_rest, level, float(rng.uniform(0.05, 0.15)), m, "plate")
            sc.steps.append((tb, level, m))
            cube.level = level
            cube.rest_t = t_rest
            out: dict[str, Any] = {"t": t_rest, "floor": level, "cubes": 1,
                                   "t_first_impact": first_impact, "knocked": knocked}
            if caused:
                out["caused_knockdown"] = True
            return out

    def _knock_down(self, victim: Cube, level: int, t_hit: float) -> dict[str, Any] | None:
        """A resting cube struck at ``t_hit`` slides into the hole and drops."""
        if level == 0:
            return None  # the ground floor has no hole
        rng, sc, tw = self.rng, self.scene, self.tower
        t_leave = t_hit + float(rng.uniform(0.04, 0.25))
        victim.level = -1
        victim.rest_t = math.inf
        sc.steps.append((t_hit, level, -victim.mass_g))
        sc.hands.append((t_hit, t_leave, level, victim.mass_g, 0.005))
        sc.rustles.append((t_hit, t_leave, level, tw.scrape_counts))
        dt, v = _fall(float(rng.uniform(0.05, 0.3)), tw.module_h_m[level - 1] - self.CUBE_SIZE_M)
        landing = self._travel(victim, level - 1, t_leave + dt, v, knocked=True)
        landing["knocked"] = True
        sc.landings.append(landing)
        kd = {"t": t_hit, "from": level, "floor": landing["floor"]}
        sc.knockdowns.append(kd)
        return kd

    # ----------------------------------------------------------------- people and room

    def table_knock(self, t: float) -> None:
        rng = self.rng
        self.scene.room.append((t, float(_loguniform(rng, 30.0, 450.0)), "knock"))
        peak_g = float(_loguniform(rng, 0.05, 1.5))
        for level in range(N_LEVELS):
            w0 = 2 * math.pi * self.tower.plates[level].f0_hz
            self.scene.impulses.append((t + 1e-4 * level, level,
                                        peak_g / w0 * float(rng.uniform(0.6, 1.4))))
        self.scene.knocks.append({"t": t, "kind": "table knock"})

    def footsteps(self, t: float) -> None:
        rng = self.rng
        n = int(rng.integers(4, 13))
        period = float(rng.uniform(0.45, 0.7))
        amp = float(_loguniform(rng, 3.0, 25.0))
        for i in range(n):
            ti = t + i * period + float(rng.normal(0, 0.03))
            self.scene.room.append((ti, amp * float(rng.uniform(0.6, 1.3)), "thump"))
            for level in range(N_LEVELS):
                w0 = 2 * math.pi * self.tower.plates[level].f0_hz
                self.scene.impulses.append((ti, level, float(_loguniform(rng, 0.003, 0.05)) / w0))
        self.scene.knocks.append({"t": t, "kind": "footsteps", "t_end": t + n * period})

    def door_slam(self, t: float) -> None:
        rng = self.rng
        self.scene.room.append((t, float(_loguniform(rng, 25.0, 150.0)), "slam"))
        for level in range(N_LEVELS):
            w0 = 2 * math.pi * self.tower.plates[level].f0_hz
            self.scene.impulses.append((t, level, float(_loguniform(rng, 0.04, 0.5)) / w0))
        self.scene.knocks.append({"t": t, "kind": "door slam"})

    def finger(self, t: float) -> None:
        """Steadying the tower on top, or pressing a side, for 0.2-3 s."""
        rng, sc = self.rng, self.scene
        dur = float(_loguniform(rng, 0.2, 3.0))
        if rng.random() < 0.5:
            levels = [7] + ([6] if rng.random() < 0.4 else [])
            kind = "finger on top"
        else:
            lo = int(rng.integers(0, N_LEVELS))
            levels = list(range(lo, min(N_LEVELS, lo + int(rng.integers(1, 4)))))
            kind = "side press"
        for i, level in enumerate(levels):
            grams = float(_loguniform(rng, 0.05, 2.5)) * (0.4 if i else 1.0)
            sc.hands.append((t, t + dur, level, grams, float(rng.uniform(0.03, 0.2))))
            sc.rustles.append((t, t + dur, level, float(rng.uniform(0.5, 3.0))))
        sc.contacts.append((t, levels[0], float(rng.uniform(3.0, 25.0)), "module"))
        sc.knocks.append({"t": t, "kind": kind, "t_end": t + dur})

    def brush(self, t: float) -> None:
        """A cube brushing the shaft entrance, caught before it drops in."""
        rng, sc = self.rng, self.scene
        m = self.tower.cube_mass_g
        for i in range(int(rng.integers(1, 4))):
            self._contact(t + 0.05 * i, 7, float(rng.uniform(0.03, 0.25)), m, "edge")
        sc.rustles.append((t, t + float(rng.uniform(0.1, 0.5)), 7, self.tower.scrape_counts))
        sc.knocks.append({"t": t, "kind": "brush in the shaft"})

    def talk(self, t0: float, t1: float) -> None:
        self.scene.talk.append((t0, t1, float(_loguniform(self.rng, 0.4, 3.0))))

    # ----------------------------------------------------------------- inspections

    def inspect(self, t: float, exposed: int) -> tuple[float, list[Cube]]:
        """Lift modules ``exposed``..7, take out every cube on ``exposed``, close.

        Returns (close time, cubes taken out).
        """
        rng, sc = self.rng, self.scene
        grab = float(rng.uniform(0.4, 1.5))
        t_lift = t + grab
        for level in range(N_LEVELS):  # hands on the walls: the whole tower is nudged
            if rng.random() < 0.6:
                sc.hands.append((t, t_lift + 0.2, level, float(_loguniform(rng, 0.02, 0.4)),
                                 float(rng.uniform(0.05, 0.3))))
            sc.rustles.append((t, t_lift + 0.3, level, float(rng.uniform(0.5, 4.0))))
        sc.contacts.append((t_lift, exposed, float(rng.uniform(5.0, 60.0)), "module"))
        if exposed + 1 < N_LEVELS:
            sc.contacts.append((t_lift + 0.002, exposed + 1, float(rng.uniform(5.0, 60.0)),
                                "module"))
        sc.lifts.append({"t": t_lift, "exposed": exposed})
        t_now = t_lift + float(rng.uniform(1.0, 4.0))  # looking
        cubes = self.resting(exposed, t_now)
        taken: list[Cube] = []
        if cubes:
            groups = [cubes]
            if len(cubes) >= 2 and rng.random() < 0.3:
                cut = int(rng.integers(1, len(cubes)))
                groups = [cubes[:cut], cubes[cut:]]
            for group in groups:
                t_in = t_now
                t_rem = t_in + float(rng.uniform(0.4, 1.5))
                for _ in range(int(rng.integers(1, 4))):  # fingertips on the plate
                    a = float(rng.uniform(t_in, t_rem))
                    sc.hands.append((a, a + float(rng.uniform(0.1, 0.6)), exposed,
                                     float(_loguniform(rng, 0.2, 4.0)),
                                     float(rng.uniform(0.02, 0.1))))
                sc.rustles.append((t_in, t_rem + 0.2, exposed, float(rng.uniform(1.0, 6.0))))
                for c in group:
                    sc.steps.append((t_rem + float(rng.uniform(-0.03, 0.03)), exposed, -c.mass_g))
                    c.level = -1
                    c.rest_t = math.inf
                    taken.append(c)
                sc.removals.append({"t": t_rem, "floor": exposed, "cubes": len(group)})
                t_now = t_rem + float(rng.uniform(0.8, 2.5))
        t_close = t_now + float(rng.uniform(0.5, 2.5))
        sc.lifted.append((t_lift, t_close, exposed))
        for level in range(exposed + 1, N_LEVELS):
            sc.reseat.append((t_close, level, float(rng.normal(0.0, 0.015))))
        v_set = float(rng.uniform(0.1, 0.5))
        sc.contacts.append((t_close, exposed, tw_amp(self.tower, v_set), "module"))
        if exposed + 1 < N_LEVELS:
            sc.contacts.append((t_close + 0.001, exposed + 1, tw_amp(self.tower, v_set) * 0.8,
                                "module"))
        for level in range(N_LEVELS):
            w0 = 2 * math.pi * self.tower.plates[level].f0_hz
            sc.impulses.append((t_close, level, float(_loguniform(rng, 0.05, 1.0)) / w0))
            sc.rustles.append((t_close - 0.5, t_close + 0.4, level, float(rng.uniform(0.5, 3.0))))
        sc.closes.append({"t": t_close, "exposed": exposed})
        return t_close, taken


def tw_amp(tower: Tower, v: float) -> float:
    """Source amplitude (counts) of a module set down at ``v`` m/s: about a cube's bounce."""
    return tower.piezo_a0 * 3.0 * v ** tower.speed_gamma


# --------------------------------------------------------------------------- scenarios


@dataclass
class Timeline:
    """What the recording covers on the simulation clock."""

    duration_s: float
    quiet_s: float


def plan_scenario(sim: TowerSim, scenario: str, tl: Timeline, rng: np.random.Generator) -> None:
    """Fill ``sim.scene`` with the scenario's throws, room noise and handling."""
    end = tl.duration_s - 4.0  # every cube is at rest well before the end
    t = tl.quiet_s
    if scenario in ("single", "noisy"):
        t += float(rng.uniform(0.0, 1.5))
        while t < end:
            sim.throw(t)
            if rng.random() < 0.07 and t + 0.1 < end:  # two cubes thrown together
                sim.throw(t + float(rng.uniform(0.0, 0.08)))
            t += float(rng.uniform(3.0, 8.0))
    elif scenario == "rapid":
        t += float(rng.uniform(0.0, 1.0))
        while t < end:
            for _ in range(int(rng.integers(2, 7))):
                if t >= end:
                    break
                sim.throw(t)
                if rng.random() < 0.05:
                    sim.throw(t + float(rng.uniform(0.0, 0.06)))
                t += float(rng.uniform(0.3, 0.8))
            t += float(rng.uniform(3.0, 8.0))
    elif scenario == "game":
        _plan_game(sim, tl, rng)
    else:
        raise ValueError(f"unknown scenario {scenario!r}")
    _plan_room(sim, scenario, tl, rng)


def _plan_game(sim: TowerSim, tl: Timeline, rng: np.random.Generator) -> None:
    end = tl.duration_s - 4.0
    t = tl.quiet_s + float(rng.uniform(0.0, 1.0))
    players = int(rng.integers(3, 6))
    prologue = [True, True] + [False] * (2 * players)
    # Short recordings keep room for at least one inspection.
    room_for = max(2, int((end - t - 14.0) / 4.0))
    for red in prologue[:room_for]:
        sim.throw_cube(sim.new_cube(red=red), t)
        t += float(rng.uniform(2.5, 6.0))
    victims_found = 0
    while True:
        think = float(rng.uniform(2.0, 8.0))
        if t + think + 10.0 > end:
            think = 2.0  # hurry: a short recording still gets its inspection
        t_start = t + think
        if t_start + 10.0 > end:
            break
        occupied = sorted({c.level for c in sim.cubes if c.level >= 0})
        if occupied and rng.random() < 0.7:
            exposed = int(rng.choice(occupied))
        else:
            exposed = int(rng.integers(0, N_LEVELS))
        if rng.random() < 0.25:  # a knock or a steadying finger while thinking
            (sim.table_knock if rng.random() < 0.5 else sim.finger)(t + think * 0.5)
        t_close, taken = sim.inspect(t_start, exposed)
        back = [c for c in taken if not (c.red and victims_found < 2)]
        found = len(taken) - len(back)
        victims_found += found
        penalty = 1 if (found == 0 and rng.random() < 0.7) else 0
        t = t_close + float(rng.uniform(1.5, 4.0))
        for c in back:
            if t > end:
                break
            sim.throw_cube(c, t)
            t += float(rng.uniform(2.0, 5.0))
        for _ in range(penalty):
            if t > end:
                break
            sim.throw(t)
            t += float(rng.uniform(2.0, 5.0))


def _plan_room(sim: TowerSim, scenario: str, tl: Timeline, rng: np.random.Generator) -> None:
    lo, hi = tl.quiet_s + 0.5, tl.duration_s - 2.0
    span = max(hi - lo, 1.0)
    minutes = span / 60.0
    if scenario == "noisy":
        for _ in range(rng.poisson(3.0 * minutes) + 1):
            sim.table_knock(float(rng.uniform(lo, hi)))
        for _ in range(rng.poisson(1.5 * minutes)):
            sim.footsteps(float(rng.uniform(lo, hi - 5)))
        if rng.random() < 0.6:
            sim.door_slam(float(rng.uniform(lo, hi)))
        for _ in range(rng.poisson(2.0 * minutes) + 1):
            sim.finger(float(rng.uniform(lo, hi - 3)))
        for _ in range(rng.poisson(0.8 * minutes)):
            sim.brush(float(rng.uniform(lo, hi)))
        t = lo
        while t < hi:
            t += float(rng.exponential(12.0))
            d = float(rng.uniform(2.0, 12.0))
            if t < hi:
                sim.talk(t, min(t + d, tl.duration_s))
            t += d
    else:
        for _ in range(rng.poisson(0.4 * minutes)):
            sim.table_knock(float(rng.uniform(lo, hi)))
        if rng.random() < 0.3:
            t0 = float(rng.uniform(lo, hi))
            sim.talk(t0, min(t0 + float(rng.uniform(3, 15)), tl.duration_s))


# --------------------------------------------------------------------------- rendering


def _rustle_noise(rng: np.random.Generator, n: int, fs: float) -> FloatArray:
    """Unit-rms noise band-limited to the scraping band (roughly 150-700 Hz)."""
    x = rng.standard_normal(n + 64)
    b, a = signal.butter(2, [150.0 / (fs / 2), min(700.0 / (fs / 2), 0.95)], btype="band")
    y = signal.lfilter(b, a, x)[64:]
    return np.asarray(y / max(float(np.std(y)), 1e-9), dtype=np.float64)


def render_piezo(tower: Tower, scene: Scene, t: FloatArray, rng: np.random.Generator
                 ) -> NDArray[np.uint16]:
    """ADC codes, shape (len(t), 8), at set times ``t`` (simulation seconds)."""
    n = t.size
    fs = PIEZO_RATE_HZ / (1 + tower.piezo_ppm * 1e-6)
    t0, dt = float(t[0]), float(t[1] - t[0])
    src = np.zeros((N_LEVELS, n))  # vibration of each plate (before the discs)
    direct = np.zeros((N_LEVELS, n))  # felt by every level at once (room)

    def add_modes(dst: FloatArray, tc: float, plate: Plate, amp: float, click: float,
                  mode_scale: FloatArray) -> None:
        i0 = max(0, math.ceil((tc - t0) / dt))
        tau = plate.modes_q / (np.pi * plate.modes_hz)
        w = min(n - i0, int(min(6 * float(tau.max()), 1.0) / dt) + 1)
        if w <= 0:
            return
        tt = t[i0:i0 + w] - tc
        lp = 1.0 / np.sqrt(1 + (plate.modes_hz / tower.lp_hz) ** 2)
        a = plate.modes_w * mode_scale * lp
        a = a / max(float(plate.modes_w.sum()), 1e-9)
        y = (a[:, None] * np.exp(-tt[None, :] / tau[:, None])
             * np.sin(2 * np.pi * plate.modes_hz[:, None] * tt[None, :])).sum(axis=0)
        y = y * (amp / max(float(np.abs(y).max()), 1e-9))
        if click > 0:
            wc = min(w, 12)
            y[:wc] += click * amp * rng.standard_normal(wc) * np.exp(
                -tt[:wc] / float(rng.uniform(0.5e-3, 2e-3)))
        dst[i0:i0 + w] += y

    for tc, level, amp, kind in scene.contacts:
        plate = tower.plates[level]
        scale = rng.uniform(0.3, 1.0, plate.modes_hz.size)  # where on the plate it struck
        click = tower.click_ratio * (2.0 if kind == "cube" else 1.0)
        if kind == "cube":
            scale = scale * 0.5
        add_modes(src[level], tc, plate, amp, click, scale)

    for tc, amp, kind in scene.room:
        for level in range(N_LEVELS):
            att = 10 ** (-level * float(rng.uniform(0.3, 1.5)) / 20)  # enters through the base
            i0 = max(0, math.ceil((tc - t0) / dt))
            f_low = float(rng.uniform(8.0, 35.0)) if kind != "knock" else float(
                rng.uniform(25.0, 80.0))
            w = min(n - i0, int(0.5 / dt))
            if w <= 0:
                continue
            tt = t[i0:i0 + w] - tc
            thump = np.sin(2 * np.pi * f_low * tt) * np.exp(-tt * f_low * float(
                rng.uniform(0.5, 1.5)))
            direct[level, i0:i0 + w] += amp * att * thump * (0.5 if kind == "knock" else 1.0)
            if kind in ("knock", "slam"):
                scale = rng.uniform(0.3, 1.0, tower.plates[level].modes_hz.size)
                add_modes(direct[level], tc + 2e-4 * level, tower.plates[level],
                          amp * att * (1.0 if kind == "knock" else 0.3), 0.5, scale)

    for ta, tb, level, rms in scene.rustles:
        i0 = max(0, math.ceil((ta - t0) / dt))
        i1 = min(n, math.ceil((tb - t0) / dt))
        if i1 - i0 < 4:
            continue
        env = np.sin(np.linspace(0, np.pi, i1 - i0)) ** 0.5
        env *= 1 + 0.6 * rng.standard_normal(i1 - i0).cumsum() / np.sqrt(i1 - i0)
        src[level, i0:i1] += rms * env * _rustle_noise(rng, i1 - i0, fs)

    for ta, tb, rms in scene.talk:
        i0 = max(0, math.ceil((ta - t0) / dt))
        i1 = min(n, math.ceil((tb - t0) / dt))
        if i1 - i0 < 64:
            continue
        x = rng.standard_normal(i1 - i0)
        b, a = signal.butter(2, [70.0 / (fs / 2), 350.0 / (fs / 2)], btype="band")
        y = signal.lfilter(b, a, x)
        y /= max(float(np.std(y)), 1e-9)
        syll = 0.5 + 0.5 * np.sin(2 * np.pi * float(rng.uniform(3, 6)) * (t[i0:i1] - ta)
                                  + rng.uniform(0, 6)) ** 2
        for level in range(N_LEVELS):
            direct[level, i0:i1] += rms * float(rng.uniform(0.5, 1.5)) * syll * y

    # crosstalk through the walls: low-passed, delayed, attenuated
    recv = src.copy()
    for s in range(N_LEVELS):
        if not np.any(src[s]):
            continue
        for d in range(1, N_LEVELS):
            targets = [r for r in (s - d, s + d) if 0 <= r < N_LEVELS]
            if not targets:
                continue
            b, a = signal.butter(1, min(float(tower.xt_lp_hz[d - 1]) / (fs / 2), 0.95))
            y = signal.lfilter(b, a, src[s])
            k = int(round(float(tower.xt_delay_s[d - 1]) / dt))
            if k:
                y = np.concatenate([np.zeros(k), y[:-k]])
            for r in targets:
                recv[r] += tower.xt_gain[r, s] * y
    recv += direct

    out = np.empty((n, N_LEVELS))
    harm = np.concatenate([[1.0], tower.hum_harm])
    for ch in range(N_LEVELS):
        b, a = signal.butter(1, float(tower.hp_hz[ch]) / (fs / 2), btype="high")
        x = signal.lfilter(b, a, recv[ch]) * tower.gain[ch]
        hum = np.zeros(n)
        for h in range(harm.size):
            hum += harm[h] * np.sin(2 * np.pi * (h + 1) * tower.hum_hz * t
                                    + tower.hum_phase[ch, h])
        x += tower.hum_amp[ch] * hum
        x += tower.noise_rms[ch] * rng.standard_normal(n)
        out[:, ch] = tower.bias[ch] + x
    # discs of lifted modules lose their connection
    for ta, tb, exposed in scene.lifted:
        sel = (t >= ta) & (t < tb)
        if not sel.any():
            continue
        for ch in range(exposed + 1, N_LEVELS):
            m = int(sel.sum())
            if tower.lifted_piezo == "bias":
                out[sel, ch] = tower.bias[ch] + 0.3 * rng.standard_normal(m)
            else:
                walk = np.cumsum(rng.standard_normal(m)) * 0.8
                amp = float(_loguniform(rng, 20.0, 250.0))
                out[sel, ch] = (tower.bias[ch] + walk
                                + amp * np.sin(2 * np.pi * tower.hum_hz * t[sel] + ch)
                                + 4.0 * rng.standard_normal(m))
    codes = np.clip(np.floor(out + 0.5), 0, ADC_MAX)
    n_glitch = rng.poisson(tower.glitch_per_s * n * dt)
    for _ in range(n_glitch):
        i, ch = int(rng.integers(n)), int(rng.integers(N_LEVELS))
        codes[i, ch] = (float(rng.integers(0, ADC_MAX + 1)) if rng.random() < 0.5
                        else float(int(codes[i, ch]) ^ (1 << int(rng.integers(5, ADC_BITS)))))
    return codes.astype(np.uint16)


def render_load(tower: Tower, scene: Scene, t_conv: FloatArray, rng: np.random.Generator
                ) -> tuple[NDArray[np.int64], NDArray[np.bool_]]:
    """Counts (len(t_conv), 8) and valid flags for conversions reported at ``t_conv``.

    The value reported at ``t_conv[k]`` is the average of the plate's force over
    the conversion before the previous one ends (a conversion period long), as an
    HX711 whose result is clocked out one conversion late.
    """
    period = 1.0 / tower.load_rate_true
    t_end = float(t_conv[-1]) + 1.0
    fs = LOAD_FINE_HZ
    nf = int(t_end * fs) + 2
    tf = np.arange(nf) / fs
    static = np.zeros((N_LEVELS, nf))
    kick = np.zeros((N_LEVELS, nf))
    for ts, level, grams in scene.steps:
        i = int(np.clip(math.ceil(ts * fs), 0, nf - 1))
        static[level, i] += grams
    static = np.cumsum(static, axis=1)
    for ta, tb, level, grams, rise in scene.hands:
        i0 = max(0, int(ta * fs))
        i1 = min(nf, int((tb + 3 * rise) * fs) + 1)
        if i1 <= i0:
            continue
        x = tf[i0:i1]
        on = 0.5 * (1 + np.tanh((x - ta - rise) / max(rise / 2, 1e-3)))
        off = 0.5 * (1 - np.tanh((x - tb) / max(rise / 2, 1e-3)))
        tremor = 1 + 0.05 * np.sin(2 * np.pi * float(rng.uniform(7, 12)) * x) * (rise > 0.01)
        static[level, i0:i1] += grams * on * off * tremor
    for ti, level, j in scene.impulses:
        pos = ti * fs
        i = int(math.floor(pos))
        if 0 <= i < nf - 1:
            frac = pos - i
            kick[level, i] += j * fs * (1 - frac)
            kick[level, i + 1] += j * fs * frac
    grams_out = np.zeros((N_LEVELS, nf))
    dtf = 1.0 / fs
    for level in range(N_LEVELS):
        p = tower.plates[level]
        w0 = 2 * math.pi * p.f0_hz
        wd = w0 * math.sqrt(1 - p.zeta ** 2)
        r = math.exp(-p.zeta * w0 * dtf)
        a = np.array([1.0, -2 * r * math.cos(wd * dtf), r * r])
        b = np.array([0.0, float(a.sum())])  # unit DC gain: a static gram reads one gram
        # impulse response of the plate: w0^2/wd e^-zw0 t sin(wd t), integral 1
        bk = np.array([0.0, dtf * w0 ** 2 / wd * r * math.sin(wd * dtf)])
        y = signal.lfilter(b, a, static[level]) + signal.lfilter(bk, a, kick[level])
        # creep: a slow fraction of each load change, following it
        tau = float(tower.creep_tau_s[level])
        bc, ac = [1 - math.exp(-dtf / tau)], [1.0, -math.exp(-dtf / tau)]
        y += float(tower.creep_frac[level]) * signal.lfilter(bc, ac, static[level])
        grams_out[level] = y
    # conversion = mean over one period, reported one conversion late
    csum = np.concatenate([np.zeros((N_LEVELS, 1)), np.cumsum(grams_out, axis=1) * dtf], axis=1)
    te = np.arange(nf + 1) / fs
    hi_t = np.clip(t_conv - period, 0, t_end)
    lo_t = np.clip(t_conv - 2 * period, 0, t_end)
    avg = np.empty((t_conv.size, N_LEVELS))
    for level in range(N_LEVELS):
        c = csum[level]
        avg[:, level] = (np.interp(hi_t, te, c) - np.interp(lo_t, te, c)) / period
    # temperature drift: a shared slow wander plus each cell's own
    common = rng.uniform(-1, 1) * np.sin(2 * np.pi * t_conv / rng.uniform(200, 1500)
                                         + rng.uniform(0, 6))
    for level in range(N_LEVELS):
        own = sum(np.sin(2 * np.pi * t_conv / rng.uniform(60, 900) + rng.uniform(0, 6))
                  * rng.uniform(0.2, 1.0) for _ in range(3))
        avg[:, level] += tower.drift_g[level] * (0.5 * common + 0.5 * own)
        avg[:, level] += tower.load_noise_g[level] * rng.standard_normal(t_conv.size)
    # re-seated modules rest a little differently
    for tr, level, dg in scene.reseat:
        avg[t_conv >= tr, level] += dg
    counts = np.clip(np.round(tower.offset[None, :] + tower.sens[None, :] * avg), S24_MIN, S24_MAX)
    valid = np.ones((t_conv.size, N_LEVELS), dtype=bool)
    for ta, tb, exposed in scene.lifted:
        # invalid from the disconnect until the first full conversion after power returns
        settle = tb + 0.05 + 2 * period
        sel = (t_conv >= ta) & (t_conv < settle)
        valid[np.ix_(sel, np.arange(exposed + 1, N_LEVELS))] = False
    counts[~valid] = 0
    return counts.astype(np.int64), valid


# --------------------------------------------------------------------------- recording


def _frame_sizes(tower: Tower, n_sets: int, rng: np.random.Generator) -> IntArray:
    if tower.sets_mode == "fixed":
        k = tower.sets_fixed
        sizes = np.full(n_sets // k, k, dtype=np.int64)
        rest = n_sets - int(sizes.sum())
        return np.concatenate([sizes, [rest]]).astype(np.int64) if rest else sizes
    # The firmware sends what its ring buffer holds when the UART is free.
    mean = float(rng.uniform(3.0, 10.0))
    sizes = np.clip(rng.poisson(mean, n_sets // 2 + 8), 1, MAX_SETS).astype(np.int64)
    cut = int(np.searchsorted(np.cumsum(sizes), n_sets))
    sizes = sizes[: cut + 1]
    sizes[-1] -= int(sizes.sum()) - n_sets
    return sizes[sizes > 0]


def make_recording(seed: int, scenario: str, duration_s: float, out_dir: Path
                   ) -> tuple[Path, Path]:
    """Simulate one tower ``seed`` in ``scenario``; write ``.bin`` and ``.truth.json``."""
    tower = Tower.from_seed(seed)
    rng = np.random.default_rng([seed, SCENARIOS.index(scenario) + 1, 0xA205A])
    mid_stream = seed % 4 == 0 or rng.random() < 0.3
    if seed % 4 == 0:
        # 10-50 s before the u32 clock wraps (sooner in short recordings, so it does wrap)
        before_s = float(rng.uniform(10.0, 50.0)) if duration_s > 55 else float(
            rng.uniform(0.2, 0.8) * duration_s)
        uptime0_us = U32 * int(rng.integers(0, 2)) + U32 - int(before_s * 1e6)
    elif mid_stream:
        uptime0_us = int(rng.uniform(5e6, 3600e6))
    else:
        uptime0_us = int(rng.uniform(0.3e6, 2.0e6))  # just booted

    # --- device timing (simulation clock: seconds since the first byte of the recording)
    s_data0 = float(rng.uniform(0.002, 0.02))
    dt_p = 1.0 / PIEZO_RATE_HZ * (1 + tower.piezo_ppm * 1e-6)
    total_s = duration_s + 0.05
    n_sets = int(total_s / dt_p)
    t_sets = s_data0 + np.arange(n_sets) * dt_p
    period_l = 1.0 / tower.load_rate_true
    n_load = int((total_s - 0.01) / period_l)
    t_load = (s_data0 + float(rng.uniform(0.0, period_l)) + np.arange(n_load) * period_l
              + np.clip(rng.normal(0, tower.load_jitter_us * 1e-6, n_load),
                        -3 * tower.load_jitter_us * 1e-6, 3 * tower.load_jitter_us * 1e-6))

    def us(s: float | FloatArray) -> Any:
        return np.round(uptime0_us + np.asarray(s) * 1e6).astype(np.int64)

    sizes = _frame_sizes(tower, n_sets, rng)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    send_piezo = t_sets[starts + sizes - 1] + 60e-6
    send_load = t_load + float(rng.uniform(80e-6, 300e-6))
    # Stream time 0 is the t_us of the first PIEZO or LOAD *decoded*, i.e. sent first.
    if send_load[0] < send_piezo[0]:
        stream0_us = int(us(t_load[0]))
    else:
        stream0_us = int(us(t_sets[0]))
    origin_s = (stream0_us - uptime0_us) / 1e6  # simulation time of stream time 0

    # --- physics, on the simulation clock; stream time 0 is origin_s
    tl = Timeline(duration_s=origin_s + duration_s,
                  quiet_s=origin_s + float(rng.uniform(4.0, 7.0)))
    sim = TowerSim(tower, rng)
    plan_scenario(sim, scenario, tl, rng)

    codes = render_piezo(tower, sim.scene, t_sets, rng)
    counts, valid = render_load(tower, sim.scene, t_load, rng)

    # --- bytes
    first_seq = 0 if not mid_stream else int(rng.integers(0, 65536))
    wire = Wire(first_seq)
    if mid_stream:
        # The capture starts in the middle of a frame (the end of a PIEZO frame).
        junk = Wire((first_seq - 1) & 0xFFFF).frame(
            MSG_PIEZO, piezo_body(int(us(-0.01)) % U32, codes[:MAX_SETS]))
        cut = int(rng.integers(len(junk) // 3, len(junk) - 2))
        head = junk[cut:]
    else:
        head = b""
    hello = hello_body(fw=tower.fw, piezo_rate_hz=PIEZO_RATE_HZ,
                       load_rate_hz=tower.load_rate_hello, device_id=tower.device_id)
    wire.send(MSG_HELLO, hello)
    if mid_stream:  # HELLO answered a GET_INFO from the host
        wire.send(MSG_ACK, ack_body(CMD_GET_INFO, int(rng.integers(0, 65536))))

    # STATUS once a second of uptime
    t_status = (1e6 - uptime0_us % 1_000_000) / 1e6 + np.arange(int(total_s) + 1, dtype=float)
    t_status = t_status[(t_status > s_data0) & (t_status < total_s)]
    lifted_count = np.zeros(t_load.size, dtype=np.int64)
    for ta, tb, exposed in sim.scene.lifted:
        lifted_count += ((t_load >= ta) & (t_load < tb)) * (N_LEVELS - 1 - exposed)
    timeouts_cum = np.cumsum(lifted_count > 0)
    cpu = int(rng.integers(18, 45))

    kinds = np.concatenate([np.zeros(sizes.size, np.int64), np.ones(n_load, np.int64),
                            np.full(t_status.size, 2, np.int64)])
    idx = np.concatenate([np.arange(sizes.size), np.arange(n_load), np.arange(t_status.size)])
    when = np.concatenate([send_piezo, send_load, t_status])
    order = np.argsort(when, kind="stable")
    t_us_sets = us(t_sets)
    t_us_load = us(t_load)
    weights = (1 << np.arange(N_LEVELS))
    valid_bits = (valid * weights[None, :]).sum(axis=1)
    counts_l = counts.tolist()
    for o in order:
        kind, i = int(kinds[o]), int(idx[o])
        if kind == 0:
            a = int(starts[i])
            wire.send(MSG_PIEZO, piezo_body(int(t_us_sets[a]), codes[a:a + int(sizes[i])]))
        elif kind == 1:
            wire.send(MSG_LOAD, load_body(int(t_us_load[i]), int(valid_bits[i]), counts_l[i]))
        else:
            up_us = int(us(float(t_status[i])))
            k_load = int(np.searchsorted(t_load, t_status[i]))
            wire.send(MSG_STATUS, status_body(
                uptime_ms=up_us // 1000, piezo_overruns=0, tx_dropped=0,
                load_timeouts=int(timeouts_cum[k_load - 1]) if k_load else 0,
                cpu_load_pct=cpu + int(rng.integers(-3, 4)), flags=0))

    out_dir.mkdir(parents=True, exist_ok=True)
    stem = f"{scenario}_t{seed}"
    rec = out_dir / f"{stem}.bin"
    rec.write_bytes(head + wire.data())
    last_us = max(int(t_us_sets[starts[-1]]), int(t_us_load[-1]))
    truth = _truth_doc(tower, sim.scene, scenario=scenario, seed=seed,
                       duration_s=(last_us - stream0_us) / 1e6, origin_s=origin_s)
    truth["recording"] = {
        "t_us_first_data": stream0_us % U32, "wraps": (last_us // U32) != (stream0_us // U32),
        "starts_mid_frame": mid_stream, "first_seq": first_seq,
        "quiet_s": round(tl.quiet_s - origin_s, 3),
        "counts": {"piezo_frames": int(sizes.size), "load": n_load,
                   "status": int(t_status.size), "hello": 1, "ack": int(mid_stream)},
    }
    truth["tower"] = tower.summary()
    path = out_dir / f"{stem}.truth.json"
    path.write_text(json.dumps(truth, indent=1))
    return rec, path


def _truth_doc(tower: Tower, sc: Scene, *, scenario: str, seed: int, duration_s: float,
               origin_s: float) -> dict[str, Any]:
    def r(x: float) -> float:
        return round(float(x) - origin_s, 4)

    landings = []
    for x in sorted(sc.landings, key=lambda d: d["t"]):
        y = {"t": r(x["t"]), "floor": int(x["floor"]), "cubes": 1,
             "t_first_impact": r(x["t_first_impact"]), "knocked": bool(x["knocked"])}
        if x.get("caused_knockdown"):
            y["caused_knockdown"] = True
        if "t_throw" in x:
            y["t_throw"] = r(x["t_throw"])
        landings.append(y)

    def times(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{k: (r(v) if k.startswith("t") else v) for k, v in x.items()}
                for x in sorted(items, key=lambda d: d["t"])]

    r_dur = round(duration_s, 4)
    return {
        "format": TRUTH_FORMAT, "generator": "tools/crosscheck_b/make_recordings_b.py",
        "scenario": scenario, "seed": seed, "duration_s": r_dur,
        "cells": tower.cells, "landings": landings, "knockdowns": times(sc.knockdowns),
        "removals": times(sc.removals), "lifts": times(sc.lifts), "closes": times(sc.closes),
        "knocks": times(sc.knocks),
    }


def main(argv: list[str] | None = None) -> int:
    """Command line."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--towers", type=int, default=4)
    p.add_argument("--first-seed", type=int, default=1)
    p.add_argument("--duration", type=float, default=120.0, help="seconds per recording")
    p.add_argument("--scenarios", nargs="+", choices=SCENARIOS, default=list(SCENARIOS))
    args = p.parse_args(argv)
    if args.duration < 15.0:
        p.error("--duration must be at least 15 s (4-7 s of quiet tower come first)")
    for seed in range(args.first_seed, args.first_seed + args.towers):
        for scenario in args.scenarios:
            started = time.perf_counter()
            rec, truth = make_recording(seed, scenario, args.duration, args.out)
            doc = json.loads(truth.read_text())
            print(f"{rec.name}: {len(doc['landings'])} landings "
                  f"({sum(x['knocked'] for x in doc['landings'])} knocked), "
                  f"{len(doc['lifts'])} lifts, {len(doc['knocks'])} knocks, "
                  f"{rec.stat().st_size / 1e6:.1f} MB, {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
