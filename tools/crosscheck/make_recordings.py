#!/usr/bin/env python3
"""Independent generator of contract-conformant towerear recordings, with ground truth.

Written only from /work/shared/contracts.md and design.md, on purpose without
reading or importing ``dsp.sim`` or ``dsp.detect``: it makes its own, simpler
modelling choices (see tools/crosscheck/README.md) so that ``towerear detect``
can be checked against recordings whose physics it has never been tuned on, the
way another team's simulator would produce them. It also carries its own wire
encoder (COBS, CRC-16/CCITT-FALSE, message layouts) to test our decoder against
an independent implementation.

Usage::

    .venv/bin/python tools/crosscheck/make_recordings.py --out /tmp/xc \
        --towers 4 --scenarios single rapid noisy game --duration 120

Each recording ``<scenario>_t<seed>.bin`` gets ``<scenario>_t<seed>.truth.json``
beside it, with every time in stream seconds (contracts.md section 2).
"""

from __future__ import annotations

import argparse
import binascii
import json
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

N_LEVELS = 8
PIEZO_RATE_HZ = 2000  # nominal, as HELLO announces it
LOAD_RATE_HZ = 80
ADC_BITS = 10
S24_MIN, S24_MAX = -(1 << 23), (1 << 23) - 1
SCENARIOS = ("single", "rapid", "noisy", "game")

# --------------------------------------------------------------------------
# Wire protocol v1, encoder side (contracts.md section 1), written from scratch.
# --------------------------------------------------------------------------

T_HELLO, T_PIEZO, T_LOAD, T_STATUS = 0x01, 0x02, 0x03, 0x04


def crc16_ccitt_false(data: bytes) -> int:
    """CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF); binascii implements exactly this."""
    return binascii.crc_hqx(data, 0xFFFF)


def cobs_encode(data: bytes) -> bytes:
    """COBS-encode ``data`` (no trailing delimiter).

    Splitting on zeros gives the runs between the implied zeros; a run of 254
    or more non-zero bytes is emitted as 0xFF blocks, which imply no zero.
    """
    out = bytearray()
    for run in data.split(b"\x00"):
        while len(run) >= 254:
            out.append(0xFF)
            out += run[:254]
            run = run[254:]
        out.append(len(run) + 1)
        out += run
    return bytes(out)


class WireWriter:
    """Turns message bodies into framed wire bytes with a running ``seq``."""

    def __init__(self, first_seq: int = 0) -> None:
        self.seq = first_seq & 0xFFFF

    def frame(self, msg_type: int, body: bytes) -> bytes:
        """Return one complete frame: COBS(type|seq|body|crc) + 0x00."""
        raw = struct.pack("<BH", msg_type, self.seq) + body
        raw += struct.pack("<H", crc16_ccitt_false(raw))
        if len(raw) > 254:
            raise ValueError(f"message of {len(raw)} bytes exceeds the 254-byte limit")
        self.seq = (self.seq + 1) & 0xFFFF
        return cobs_encode(raw) + b"\x00"


def hello_body(fw: tuple[int, int, int], device_id: bytes, piezo_rate_hz: int = PIEZO_RATE_HZ,
               load_rate_hz: int = LOAD_RATE_HZ) -> bytes:
    """HELLO body: proto, fw x3, n_piezo, n_load, rates (u16), adc_bits, device_id[8]."""
    return struct.pack(
        "<BBBBBBHHB8s", 1, *fw, N_LEVELS, N_LEVELS, piezo_rate_hz, load_rate_hz, ADC_BITS,
        device_id,
    )


def piezo_body(t_us: int, sets: np.ndarray) -> bytes:
    """PIEZO body: t_us of the first set, n, then n x 8 u16 set-major."""
    n = sets.shape[0]
    if not 1 <= n <= 14:
        raise ValueError("a PIEZO frame carries 1..14 sets")
    return struct.pack("<IB", t_us & 0xFFFFFFFF, n) + sets.astype("<u2").tobytes()


def load_body(t_us: int, valid: int, values: np.ndarray) -> bytes:
    """LOAD body: t_us, valid bitmask, 8 x s24 (0 where not valid)."""
    out = bytearray(struct.pack("<IB", t_us & 0xFFFFFFFF, valid))
    for k, v in enumerate(values):
        word = int(v) if valid >> k & 1 else 0
        out += (word & 0xFFFFFF).to_bytes(3, "little")
    return bytes(out)


def status_body(uptime_ms: int, cpu_pct: int) -> bytes:
    """STATUS body: uptime, three zero counters, cpu load, flags."""
    return struct.pack("<IHHHBB", uptime_ms & 0xFFFFFFFF, 0, 0, 0, cpu_pct, 0)


# --------------------------------------------------------------------------
# The tower: per-seed physical parameters.
# --------------------------------------------------------------------------


@dataclass
class Tower:
    """Physical parameters of one simulated tower (one seed)."""

    seed: int
    sens_counts_per_g: np.ndarray  # (8,) signed: negative = cell mounted upside down
    offset_counts: np.ndarray  # (8,)
    load_noise_g: np.ndarray  # (8,) rms after the HX711
    drift_g_per_min: np.ndarray  # (8,)
    wander_g: np.ndarray  # (8,) slow thermal-like wander amplitude
    wander_period_s: np.ndarray  # (8,)
    settle_n: int  # HX711 settling: moving average over this many readings
    ring_hz: np.ndarray  # (8,) plate ringing frequency
    ring_decay_s: np.ndarray  # (8,)
    cube_mass_g: float
    cube_mass_sd_g: float
    piezo_bias: np.ndarray  # (8,) idle code
    piezo_noise: np.ndarray  # (8,) rms codes
    piezo_gain: np.ndarray  # (8,) sensitivity spread between discs
    mode_hz: np.ndarray  # (8,) dominant plate mode seen by each disc
    mode_decay_s: np.ndarray  # (8,)
    xtalk_down_db: float  # attenuation per level towards the base
    xtalk_up_db: float  # attenuation per level upwards
    hum_hz: float
    floating_when_lifted: bool  # disconnected piezo input floats (hum) or rests at bias
    piezo_ppm: float
    load_ppm: float
    sets_per_frame: int
    t_us_start: int
    fw: tuple[int, int, int]
    device_id: bytes
    # Nominal rates as HELLO announces them: the contract's, unless a run
    # varies them (an HX711 with its RATE pin low reads at 10 Hz).
    piezo_rate_hz: int = PIEZO_RATE_HZ
    load_rate_hz: int = LOAD_RATE_HZ

    @classmethod
    def from_seed(cls, seed: int) -> Tower:
        """Draw a tower; every choice here is deliberately broad (see README)."""
        rng = np.random.default_rng(10_000 + seed)
        sign = np.where(rng.random(N_LEVELS) < 0.25, -1.0, 1.0)
        if seed % 2:
            # Mixed cells: every level's cell and amplifier drawn on its own.
            sens = sign * rng.uniform(5_000, 60_000, N_LEVELS)
        else:
            # Matched cells (one model, one batch): +-12 % around the tower's value.
            sens = sign * rng.uniform(5_000, 60_000) * rng.uniform(0.88, 1.12, N_LEVELS)
        # Offsets anywhere in s24, leaving room for ~15 g of load and spikes.
        margin = 15 * np.abs(sens)
        offset = rng.uniform(S24_MIN + margin, S24_MAX - margin)
        if seed % 4 == 1:
            # Close to the u32 wrap so the clock wraps inside the recording.
            t_start = (1 << 32) - int(rng.uniform(10e6, 50e6))
        else:
            t_start = int(rng.integers(0, 1 << 32))
        return cls(
            seed=seed,
            sens_counts_per_g=sens,
            offset_counts=np.round(offset),
            load_noise_g=rng.uniform(0.002, 0.03, N_LEVELS),
            drift_g_per_min=rng.uniform(-0.03, 0.03, N_LEVELS),
            wander_g=rng.uniform(0.0, 0.02, N_LEVELS),
            wander_period_s=rng.uniform(40, 300, N_LEVELS),
            settle_n=int(rng.integers(2, 5)),
            ring_hz=rng.uniform(8, 40, N_LEVELS),
            ring_decay_s=rng.uniform(0.05, 0.4, N_LEVELS),
            cube_mass_g=float(rng.uniform(0.3, 0.8)),
            cube_mass_sd_g=float(rng.uniform(0.005, 0.03)),
            piezo_bias=512 + np.round(rng.uniform(-30, 30, N_LEVELS)),
            piezo_noise=rng.uniform(0.5, 5.0, N_LEVELS),
            piezo_gain=rng.uniform(0.7, 1.4, N_LEVELS),
            mode_hz=rng.uniform(100, 900, N_LEVELS),
            mode_decay_s=rng.uniform(0.005, 0.04, N_LEVELS),
            xtalk_down_db=float(rng.uniform(6, 20)),
            xtalk_up_db=float(rng.uniform(6, 20)),
            hum_hz=float(rng.choice([50.0, 60.0])),
            floating_when_lifted=bool(rng.random() < 0.5),
            piezo_ppm=float(rng.uniform(-400, 400)),
            load_ppm=float(rng.uniform(-600, 600)),
            sets_per_frame=int(rng.choice([4, 8, 10, 12, 14])),
            t_us_start=t_start,
            fw=(int(rng.integers(0, 4)), int(rng.integers(0, 10)), int(rng.integers(0, 10))),
            device_id=rng.bytes(8),
        )

    def summary(self) -> dict[str, Any]:
        """The parameters as plain JSON (recorded beside the truth, for diagnosis)."""
        out: dict[str, Any] = {}
        for key, value in vars(self).items():
            if isinstance(value, np.ndarray):
                out[key] = [round(float(v), 4) for v in value]
            elif isinstance(value, bytes):
                out[key] = value.hex()
            else:
                out[key] = value
        return out


# --------------------------------------------------------------------------
# The plan: physical happenings on a timeline (seconds of stream time).
# --------------------------------------------------------------------------


@dataclass
class Plan:
    """Everything that happens, before it is rendered into sensor samples."""

    # (t, level, amplitude codes, load spike g)
    impacts: list[tuple[float, int, float, float]] = field(default_factory=list)
    # (t, level, delta g): cubes arriving (+) or leaving (-)
    steps: list[tuple[float, int, float]] = field(default_factory=list)
    # (t, level, amplitude g)
    rings: list[tuple[float, int, float]] = field(default_factory=list)
    # (t0, t1, level, peak g): a finger or hand pressing on a plate
    presses: list[tuple[float, float, int, float]] = field(default_factory=list)
    # (t0, t1, amplitude codes, levels): hands on the tower, low rumble on piezos
    rumbles: list[tuple[float, float, float, tuple[int, ...]]] = field(default_factory=list)
    # (t0, t1, first invalid level): modules lifted
    lifted: list[tuple[float, float, int]] = field(default_factory=list)
    # (t, amplitude codes): table knocks
    knocks: list[tuple[float, float]] = field(default_factory=list)
    # (t, level, amplitude codes): single-sample electrical pops
    pops: list[tuple[float, int, float]] = field(default_factory=list)
    hum_codes: float = 0.0


@dataclass
class Truth:
    """Ground truth in stream seconds."""

    landings: list[dict[str, Any]] = field(default_factory=list)
    knockdowns: list[dict[str, Any]] = field(default_factory=list)
    removals: list[dict[str, Any]] = field(default_factory=list)
    lifts: list[dict[str, Any]] = field(default_factory=list)
    closes: list[dict[str, Any]] = field(default_factory=list)
    knocks: list[dict[str, Any]] = field(default_factory=list)


# Few cubes reach the ground floor: the holes are not aligned (design.md).
FLOOR_P = np.array([0.03, 0.12, 0.15, 0.15, 0.15, 0.15, 0.13, 0.12])
FLOOR_P = FLOOR_P / FLOOR_P.sum()


class Builder:
    """Builds a plan and its truth, keeping track of the cubes in the tower."""

    def __init__(self, tower: Tower, rng: np.random.Generator) -> None:
        self.tower = tower
        self.rng = rng
        self.plan = Plan()
        self.truth = Truth()
        self.resting: list[list[float]] = [[] for _ in range(N_LEVELS)]  # masses per level
        self.p_knockdown = 0.06

    def cube_mass(self) -> float:
        t = self.tower
        return float(max(0.1, self.rng.normal(t.cube_mass_g, t.cube_mass_sd_g)))

    def throw(self, t0: float, floor: int | None = None) -> float:
        """A cube enters the top at ``t0``; return the time it came to rest."""
        rng, plan = self.rng, self.plan
        if floor is None:
            floor = int(rng.choice(N_LEVELS, p=FLOOR_P))
        mass = self.cube_mass()
        land_amp = rng.uniform(80, 400)
        t = t0
        # On the way down: glancing strikes on hole edges of the levels above.
        for level in range(N_LEVELS - 1, floor, -1):
            t += rng.uniform(0.02, 0.05)
            if rng.random() < 0.55:
                amp = land_amp * rng.uniform(0.1, 0.6)
                plan.impacts.append((t, level, amp, rng.uniform(0.2, 2.0) * amp / 200))
        t += rng.uniform(0.02, 0.05)
        t_first = t
        plan.impacts.append((t, floor, land_amp, rng.uniform(1.0, 6.0) * land_amp / 200))
        plan.steps.append((t, floor, mass))
        plan.rings.append((t, floor, mass * rng.uniform(1.0, 4.0)))
        # Bounces on the resting level: shrinking gaps and amplitudes.
        gap, amp = rng.uniform(0.03, 0.09), land_amp
        for _ in range(int(rng.integers(1, 5))):
            t += gap
            amp *= rng.uniform(0.3, 0.6)
            gap *= rng.uniform(0.55, 0.8)
            plan.impacts.append((t, floor, amp, rng.uniform(0.3, 2.0) * amp / 200))
        t_rest = t
        landing = {"t": round(t_rest, 4), "floor": floor, "cubes": 1,
                   "t_first_impact": round(t_first, 4), "knocked": False}
        self.truth.landings.append(landing)
        # Rarely the falling cube knocks a resting one down one level.
        if self.resting[floor] and floor >= 1 and rng.random() < self.p_knockdown:
            k_mass = self.resting[floor].pop(int(rng.integers(len(self.resting[floor]))))
            t_leave = t_first + rng.uniform(0.01, 0.03)
            plan.steps.append((t_leave, floor, -k_mass))
            t_k = t_leave + rng.uniform(0.03, 0.06)
            k_amp = rng.uniform(60, 250)
            plan.impacts.append((t_k, floor - 1, k_amp, rng.uniform(1.0, 5.0) * k_amp / 200))
            plan.steps.append((t_k, floor - 1, k_mass))
            plan.rings.append((t_k, floor - 1, k_mass * rng.uniform(1.0, 3.0)))
            for _ in range(int(rng.integers(1, 3))):
                t_k += rng.uniform(0.02, 0.06)
                k_amp *= rng.uniform(0.3, 0.5)
                plan.impacts.append((t_k, floor - 1, k_amp, 0.3 * k_amp / 200))
            self.resting[floor - 1].append(k_mass)
            landing["caused_knockdown"] = True  # net load change on `floor` is zero
            self.truth.knockdowns.append({"t": round(t_k, 4), "from": floor, "floor": floor - 1})
            self.truth.landings.append({"t": round(t_k, 4), "floor": floor - 1, "cubes": 1,
                                        "t_first_impact": round(t_leave, 4), "knocked": True})
        self.resting[floor].append(mass)
        return t_rest

    def knock(self, t: float) -> None:
        """A table knock: everything at once, no lasting change."""
        rng = self.rng
        amp = rng.uniform(40, 300)
        self.plan.knocks.append((t, amp))
        for level in range(N_LEVELS):
            self.plan.impacts.append((t + rng.uniform(0, 0.002), level, 0.0,
                                      rng.uniform(0.3, 3.0) * amp / 150))
            self.plan.rings.append((t, level, rng.uniform(0.1, 1.5) * amp / 150))
        self.truth.knocks.append({"t": round(t, 4)})

    def inspection(self, t: float, exposed: int, take: int) -> tuple[float, int]:
        """Lift modules exposed..7, take ``take`` cubes from the exposed level, close.

        Returns (close time, number of cubes taken).
        """
        rng, plan = self.rng, self.plan
        duration = rng.uniform(4.0, 10.0)
        t_close = t + duration
        plan.lifted.append((t, t_close, exposed + 1))
        # Hands grip the tower around lifting and putting back.
        for ta in (t, t_close):
            plan.rumbles.append((ta - rng.uniform(0.3, 0.7), ta + rng.uniform(0.2, 0.5),
                                 rng.uniform(10, 60), tuple(range(N_LEVELS))))
            for level in range(exposed + 1):
                if rng.random() < 0.5:
                    t0 = ta - rng.uniform(0.2, 0.6)
                    plan.presses.append((t0, t0 + rng.uniform(0.2, 0.8), level,
                                         rng.uniform(0.2, 3.0)))
        # Putting the modules back: a thump on every level, the rejoined plates ring.
        for level in range(N_LEVELS):
            amp = rng.uniform(20, 150) if level > exposed else rng.uniform(10, 60)
            plan.impacts.append((t_close, level, amp, rng.uniform(0.2, 2.0)))
            plan.rings.append((t_close, level, rng.uniform(0.2, 1.5)))
        self.truth.lifts.append({"t": round(t, 4), "exposed": exposed})
        self.truth.closes.append({"t": round(t_close, 4)})
        taken = 0
        take = min(take, len(self.resting[exposed]))
        if take:
            # One scoop, or one cube at a time.
            one_by_one = take > 1 and rng.random() < 0.5
            batches = [1] * take if one_by_one else [take]
            tr = t + rng.uniform(1.0, 2.0)
            for n in batches:
                if tr > t_close - 0.8:
                    break
                masses = [self.resting[exposed].pop() for _ in range(n)]
                t_press = tr - rng.uniform(0.3, 0.8)
                plan.presses.append((t_press, tr + 0.1, exposed, rng.uniform(0.5, 4.0)))
                plan.rumbles.append((t_press, tr + 0.2, rng.uniform(5, 30), (exposed,)))
                plan.steps.append((tr, exposed, -sum(masses)))
                self.truth.removals.append({"t": round(tr, 4), "floor": exposed, "cubes": n})
                taken += n
                tr += rng.uniform(0.8, 1.6)
        return t_close, taken


def build_scenario(tower: Tower, scenario: str, duration_s: float,
                   rng: np.random.Generator) -> tuple[Plan, Truth]:
    """Lay out one scenario; it starts with a few seconds of an empty, quiet tower."""
    b = Builder(tower, rng)
    t = rng.uniform(4.0, 7.0)
    end = duration_s - 4.0  # leave the detector a few seconds after the last landing
    if scenario == "single":
        while t < end:
            t = b.throw(t) + rng.uniform(3.0, 8.0)
    elif scenario == "rapid":
        while t < end:
            for _ in range(int(rng.integers(2, 7))):
                if t >= end:
                    break
                b.throw(t)
                t += rng.uniform(0.3, 0.8)
            t += rng.uniform(3.0, 6.0)
    elif scenario == "noisy":
        b.plan.hum_codes = rng.uniform(3.0, 15.0)
        next_knock = t + rng.uniform(5.0, 15.0)
        while t < end:
            if next_knock < t:
                b.knock(next_knock)
                t = max(t, next_knock + rng.uniform(1.0, 3.0))
                next_knock = t + rng.uniform(8.0, 25.0)
            t = b.throw(t) + rng.uniform(2.0, 6.0)
        for _ in range(int(duration_s / 30)):
            b.plan.pops.append((rng.uniform(3, duration_s), int(rng.integers(N_LEVELS)),
                                rng.uniform(50, 300)))
    elif scenario == "game":
        b.plan.hum_codes = rng.uniform(0.0, 4.0)
        for _ in range(8):  # prologue: two victims and clues
            if t >= end:
                break
            t = b.throw(t) + rng.uniform(2.5, 6.0)
        while t < end:
            r = rng.random()
            stocked = [k for k in range(N_LEVELS - 1) if b.resting[k]]
            if r < 0.35 and stocked and t < end - 12:
                exposed = int(rng.choice(stocked))
                t_close, taken = b.inspection(t, exposed, int(rng.integers(1, 3)))
                t = t_close + rng.uniform(1.5, 3.5)
                for _ in range(taken):  # clues thrown back
                    if t >= end:
                        break
                    t = b.throw(t) + rng.uniform(2.5, 5.0)
            elif r < 0.42:
                b.knock(t)
                t += rng.uniform(2.0, 4.0)
            else:
                t = b.throw(t) + rng.uniform(2.5, 6.0)
    else:
        raise ValueError(f"unknown scenario {scenario!r}")
    return b.plan, b.truth


# --------------------------------------------------------------------------
# Rendering: plan -> sensor samples.
# --------------------------------------------------------------------------


def _add_burst(x: np.ndarray, t_s: np.ndarray, t0: float, amp: float, f_hz: float,
               decay_s: float, rate_hz: float, phase: float) -> None:
    """Add a damped sinusoid with a 0.4 ms attack, starting at ``t0``, into ``x``."""
    i0 = int(np.searchsorted(t_s, t0))
    i1 = min(len(t_s), i0 + int(6 * decay_s * rate_hz) + 2)
    if i0 >= i1:
        return
    tau = t_s[i0:i1] - t0
    x[i0:i1] += (amp * (1 - np.exp(-tau / 4e-4)) * np.exp(-tau / decay_s)
                 * np.sin(2 * np.pi * f_hz * tau + phase))


def render_piezo(tower: Tower, plan: Plan, t_s: np.ndarray,
                 rng: np.random.Generator) -> np.ndarray:
    """Piezo ADC codes, (n, 8) uint16, at the device's set times ``t_s``."""
    n = len(t_s)
    rate = tower.piezo_rate_hz
    x = tower.piezo_bias + rng.normal(0, 1, (n, N_LEVELS)) * tower.piezo_noise
    if plan.hum_codes > 0:
        for ch in range(N_LEVELS):
            a = plan.hum_codes * rng.uniform(0.5, 1.5)
            ph = rng.uniform(0, 2 * np.pi)
            x[:, ch] += a * np.sin(2 * np.pi * tower.hum_hz * t_s + ph)
            x[:, ch] += 0.3 * a * np.sin(2 * np.pi * 3 * tower.hum_hz * t_s + 2 * ph)
    col = [x[:, ch].copy() for ch in range(N_LEVELS)]
    for t0, level, amp, _ in plan.impacts:
        if amp <= 0:
            continue
        for ch in range(N_LEVELS):
            d = ch - level
            # Crosstalk: the receiving disc rings in its own plate's mode, fainter
            # per level away, with a different fall-off up and down the tower.
            att_db = (tower.xtalk_up_db if d > 0 else tower.xtalk_down_db) * abs(d)
            a = amp * tower.piezo_gain[ch] * 10 ** (-att_db / 20)
            if a < 0.3:
                continue
            f = tower.mode_hz[level] if d == 0 else tower.mode_hz[ch]
            decay = tower.mode_decay_s[level] * (1.0 if d == 0 else 1.5)
            delay = abs(d) * 3e-4
            _add_burst(col[ch], t_s, t0 + delay, a, f, decay, rate, rng.uniform(0, 2 * np.pi))
            # A second, higher mode gives the transient some texture.
            _add_burst(col[ch], t_s, t0 + delay, 0.35 * a, f * rng.uniform(1.5, 2.7),
                       decay * 0.5, rate, rng.uniform(0, 2 * np.pi))
    for t0, amp in plan.knocks:
        f = rng.uniform(40, 150)
        decay = rng.uniform(0.02, 0.06)
        for ch in range(N_LEVELS):
            a = amp * rng.uniform(0.7, 1.3) * (1.3 if ch == 0 else 1.0)
            _add_burst(col[ch], t_s, t0 + rng.uniform(0, 5e-4), a, f, decay, rate, 0.0)
            _add_burst(col[ch], t_s, t0, 0.3 * a, tower.mode_hz[ch], tower.mode_decay_s[ch],
                       rate, rng.uniform(0, 2 * np.pi))
    for t0, t1, amp, levels in plan.rumbles:
        i0, i1 = np.searchsorted(t_s, [t0, t1])
        if i1 <= i0:
            continue
        m = i1 - i0
        env = np.hanning(m)
        for ch in levels:
            # Low-passed noise: hands and cardboard, 20-100 Hz.
            w = rng.normal(0, 1, m + 40)
            w = np.convolve(w, np.ones(20) / np.sqrt(20), mode="same")[20:20 + m]
            col[ch][i0:i1] += amp * env * w
    for t0, level, amp in plan.pops:
        i = int(np.searchsorted(t_s, t0))
        if i < n:
            col[level][i] += amp
    for t0, t1, first in plan.lifted:
        i0, i1 = np.searchsorted(t_s, [t0, t1])
        for ch in range(first, N_LEVELS):
            seg = np.full(i1 - i0, tower.piezo_bias[ch])
            if tower.floating_when_lifted:
                # A floating input picks up mains and wanders.
                seg += 40 * np.sin(2 * np.pi * tower.hum_hz * t_s[i0:i1] + ch)
                seg += np.cumsum(rng.normal(0, 0.3, i1 - i0))
            seg += rng.normal(0, 0.5, i1 - i0)
            col[ch][i0:i1] = seg
    out = np.stack(col, axis=1)
    return np.clip(np.round(out), 0, (1 << ADC_BITS) - 1).astype(np.uint16)


def render_load(tower: Tower, plan: Plan, t_s: np.ndarray,
                rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """HX711 counts (m, 8) int32 and validity (m, 8) bool at reading times ``t_s``."""
    m = len(t_s)
    g = np.zeros((m, N_LEVELS))
    for t0, level, dg in plan.steps:
        g[np.searchsorted(t_s, t0):, level] += dg
    g += tower.drift_g_per_min * t_s[:, None] / 60
    g += tower.wander_g * np.sin(2 * np.pi * t_s[:, None] / tower.wander_period_s
                                 + np.arange(N_LEVELS))
    for t0, level, amp in plan.rings:
        i0 = int(np.searchsorted(t_s, t0))
        i1 = min(m, i0 + int(6 * tower.ring_decay_s[level] * tower.load_rate_hz) + 2)
        tau = t_s[i0:i1] - t0
        g[i0:i1, level] += (amp * np.exp(-tau / tower.ring_decay_s[level])
                            * np.sin(2 * np.pi * tower.ring_hz[level] * tau))
    for t0, level, _, spike in plan.impacts:
        # The conversion in progress at the impact catches a short spike.
        i = int(np.searchsorted(t_s, t0))
        if i < m:
            # The struck plate is pushed down; neighbours flex either way.
            g[i, level] += spike
            for nb in (level - 1, level + 1):
                if 0 <= nb < N_LEVELS:
                    g[i, nb] += 0.2 * spike * rng.uniform(-1, 1)
    for t0, t1, level, peak in plan.presses:
        i0, i1 = np.searchsorted(t_s, [t0, t1])
        if i1 > i0:
            g[i0:i1, level] += peak * np.hanning(i1 - i0) * rng.uniform(0.7, 1.0)
    # HX711 settling: each reading averages the last few conversions.
    k = tower.settle_n
    kernel = np.ones(k) / k
    settled = np.empty_like(g)
    for ch in range(N_LEVELS):
        padded = np.concatenate([np.full(k - 1, g[0, ch]), g[:, ch]])
        settled[:, ch] = np.convolve(padded, kernel, mode="valid")
    settled += rng.normal(0, 1, (m, N_LEVELS)) * tower.load_noise_g
    valid = np.ones((m, N_LEVELS), dtype=bool)
    for t0, t1, first in plan.lifted:
        i0 = int(np.searchsorted(t_s, t0))
        # Reconnected HX711s need a few conversions before the first reading.
        i1 = int(np.searchsorted(t_s, t1)) + int(rng.integers(2, 5))
        valid[i0:i1, first:] = False
        # ...and the first readings back are off while the cell warms up.
        for j in range(3):
            if i1 + j < m:
                settled[i1 + j, first:] += rng.uniform(-2, 2, N_LEVELS - first) * 0.5 ** j
    counts = tower.offset_counts + tower.sens_counts_per_g * settled
    counts = np.clip(np.round(counts), S24_MIN, S24_MAX).astype(np.int32)
    counts[~valid] = 0
    return counts, valid


# --------------------------------------------------------------------------
# Writing a recording.
# --------------------------------------------------------------------------


def make_recording(seed: int, scenario: str, duration_s: float, out_dir: Path, *,
                   t_us_start: int | None = None, short_ring: bool = False,
                   matched_cells: bool = False, piezo_rate_hz: int | None = None,
                   load_rate_hz: int | None = None,
                   disc_spread_db: float | None = None) -> tuple[Path, Path]:
    """Generate one recording and its truth; return both paths.

    ``t_us_start`` overrides the tower's first device clock value (tests use it
    to put the u32 wrap inside a short recording). ``short_ring`` and
    ``matched_cells`` are ablations: plates that stop ringing within 0.1 s,
    and every level's cell within +-12 % of level 0's (signs kept).
    ``piezo_rate_hz`` and ``load_rate_hz`` replace the contract's nominal
    rates (announced in HELLO as the contract says). ``disc_spread_db``
    draws the piezo discs' sensitivities within +-that many dB (glued
    differently, cracked) instead of the usual +-3 dB.
    """
    tower = Tower.from_seed(seed)
    if t_us_start is not None:
        tower.t_us_start = t_us_start & 0xFFFFFFFF
    if piezo_rate_hz is not None:
        tower.piezo_rate_hz = int(piezo_rate_hz)
    if load_rate_hz is not None:
        tower.load_rate_hz = int(load_rate_hz)
    if disc_spread_db is not None:
        spread = np.random.default_rng(seed + 77).uniform(-1, 1, N_LEVELS) * disc_spread_db
        tower.piezo_gain = 10.0 ** (spread / 20.0)
    if short_ring:
        tower.ring_decay_s = np.minimum(tower.ring_decay_s, 0.1 / 6)
    if matched_cells:
        mag = abs(tower.sens_counts_per_g[0]) * np.random.default_rng(seed).uniform(
            0.88, 1.12, N_LEVELS)
        tower.sens_counts_per_g = np.sign(tower.sens_counts_per_g) * mag
    rng = np.random.default_rng(seed * 1009 + SCENARIOS.index(scenario) + 7)
    plan, truth = build_scenario(tower, scenario, duration_s, rng)
    # Stream time 0 is the first PIEZO set; the crystal error makes the true
    # spacing of sets and readings differ from the nominal rates in HELLO.
    dt_p = 1.0 / (tower.piezo_rate_hz * (1 + tower.piezo_ppm * 1e-6))
    dt_l = 1.0 / (tower.load_rate_hz * (1 + tower.load_ppm * 1e-6))
    t_p = np.arange(int(duration_s / dt_p)) * dt_p
    t_l = rng.uniform(0.01, 0.02) + np.arange(int((duration_s - 0.03) / dt_l)) * dt_l
    t_l += rng.uniform(-60e-6, 60e-6, len(t_l))  # polling jitter of the reading time
    piezo = render_piezo(tower, plan, t_p, rng)
    counts, valid = render_load(tower, plan, t_l, rng)

    writer = WireWriter(0)
    start = tower.t_us_start

    def us(t: float) -> int:
        return (start + int(round(t * 1e6))) & 0xFFFFFFFF

    # (send time, tiebreak, type, body); framing happens in send order so seq is monotone.
    outbox: list[tuple[float, int, int, bytes]] = []
    spf = tower.sets_per_frame
    for i in range(0, len(t_p), spf):
        sets = piezo[i:i + spf]
        outbox.append((t_p[i + len(sets) - 1] + 1e-4, 0, T_PIEZO, piezo_body(us(t_p[i]), sets)))
    for j, tl in enumerate(t_l):
        mask = int(np.packbits(valid[j][::-1])[0])  # bit k = channel k
        outbox.append((tl + 5e-5, 1, T_LOAD, load_body(us(tl), mask, counts[j])))
    boot_ms = int(rng.uniform(500, 5000))
    for s in range(1, int(duration_s) + 1):
        outbox.append((float(s), 2, T_STATUS,
                       status_body(boot_ms + s * 1000, int(rng.integers(25, 70)))))
    outbox.sort(key=lambda e: (e[0], e[1]))
    chunks = [writer.frame(T_HELLO, hello_body(tower.fw, tower.device_id,
                                                  tower.piezo_rate_hz, tower.load_rate_hz))]
    chunks += [writer.frame(mtype, body) for _, _, mtype, body in outbox]

    out_dir.mkdir(parents=True, exist_ok=True)
    stem = f"{scenario}_t{seed}"
    rec = out_dir / f"{stem}.bin"
    rec.write_bytes(b"".join(chunks))
    truth_path = out_dir / f"{stem}.truth.json"
    doc = {
        "format": "towerear-crosscheck-truth/1",
        "scenario": scenario,
        "seed": seed,
        "duration_s": round(float(t_p[-1]), 4),
        "time_base": "stream seconds: (unwrapped t_us - t_us of first PIEZO) / 1e6",
        "landing_t": "time of the last bounce (the cube is at rest)",
        "counts": {"piezo_frames": -(-len(t_p) // spf), "load": len(t_l),
                   "status": int(duration_s), "hello": 1},
        "landings": truth.landings,
        "knockdowns": truth.knockdowns,
        "removals": truth.removals,
        "lifts": truth.lifts,
        "closes": truth.closes,
        "knocks": truth.knocks,
        "hum_codes": round(plan.hum_codes, 2),
        "cells": "matched" if matched_cells or seed % 2 == 0 else "mixed",
        "ablation": [name for name, on in (("short_ring", short_ring),
                                           ("matched_cells", matched_cells)) if on]
        + [f"{name}_{rate}_hz" for name, rate in (("piezo_rate", piezo_rate_hz),
                                                  ("load_rate", load_rate_hz)) if rate]
        + ([f"disc_spread_{disc_spread_db:g}_db"] if disc_spread_db is not None else []),
        "tower": tower.summary(),
    }
    truth_path.write_text(json.dumps(doc, indent=1))
    return rec, truth_path


def main(argv: list[str] | None = None) -> int:
    """Command line: generate towers x scenarios."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", type=Path, default=Path("/tmp/towerear-crosscheck"))
    p.add_argument("--towers", type=int, default=4, help="seeds 1..N")
    p.add_argument("--first-seed", type=int, default=1)
    p.add_argument("--scenarios", nargs="+", default=list(SCENARIOS), choices=SCENARIOS)
    p.add_argument("--duration", type=float, default=120.0, help="seconds per recording")
    p.add_argument("--short-ring", action="store_true",
                   help="ablation: plates stop ringing within 0.1 s")
    p.add_argument("--matched-cells", action="store_true",
                   help="ablation: all cells within +-12 %% of level 0's sensitivity")
    p.add_argument("--piezo-rate", type=int, default=None,
                   help=f"piezo sets/s announced and used (default {PIEZO_RATE_HZ})")
    p.add_argument("--load-rate", type=int, default=None,
                   help=f"load readings/s announced and used (default {LOAD_RATE_HZ})")
    p.add_argument("--disc-spread-db", type=float, default=None,
                   help="piezo disc sensitivities within +- this many dB (default +-3)")
    args = p.parse_args(argv)
    for seed in range(args.first_seed, args.first_seed + args.towers):
        for scenario in args.scenarios:
            rec, _ = make_recording(seed, scenario, args.duration, args.out,
                                    short_ring=args.short_ring,
                                    matched_cells=args.matched_cells,
                                    piezo_rate_hz=args.piezo_rate,
                                    load_rate_hz=args.load_rate,
                                    disc_spread_db=args.disc_spread_db)
            print(f"{rec} ({rec.stat().st_size / 1e6:.1f} MB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
