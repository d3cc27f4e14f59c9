#!/usr/bin/env python3
"""Cross-check model AE: a grader in a hurry, literal to the documents.

The simplest tower a grading team would write quickly from contracts.md and
design.md read word for word: nominal rates exactly (piezo 2000 sets/s of
eight 10-bit channels biased at mid-scale, load 80 readings/s of eight
signed 24-bit counts), HELLO first, idealised signals (load steps of one
cube, 0.3-0.8 g, on ~100 g cells, with little or no ringing; piezo strikes
as decaying sinusoids with plain crosstalk to the neighbouring levels),
cubes falling through the centre holes, knock-downs, impact spikes on the
load channels, table knocks, hands, lifted modules reading invalid, and
Mord im Arosa played by the rules. Every figure a document leaves open is
drawn per tower from a seeded generator; on a quarter of the towers both
the load and the piezo channels are exactly noiseless, on two more
quarters one of them is.

Usage::

    .venv/bin/python tools/crosscheck_ae/make_recordings_ae.py --out DIR \
        [--towers 8] [--first-seed 1] [--duration 120] \
        [--scenarios single rapid noisy game] [--jobs N]

Writes ``{scenario}_t{seed}.bin`` (the device -> host bytes) and
``{scenario}_t{seed}.truth.json`` (format ``towerear-crosscheck-truth/1``,
``"model": "AE"``) for every seed and scenario. The same arguments give the
same bytes.
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
import numpy.typing as npt
from scipy import signal

# -- the device, as contracts.md gives it ---------------------------------------------

FS = 2000  # piezo sample sets a second
N_CH = 8  # piezo channels = load channels = levels
ADC_BITS = 10
ADC_MAX = (1 << ADC_BITS) - 1
BIAS = 1 << (ADC_BITS - 1)
LOAD_RATE = 80  # HX711 readings a second
LOAD_PERIOD = FS // LOAD_RATE  # 25 piezo sets per load reading
SETS_PER_MSG = 10  # sample sets in one PIEZO message (5 ms)
US_PER_SET = 1_000_000 // FS
FW_VERSION = (1, 0, 0)

T_HELLO, T_PIEZO, T_LOAD, T_STATUS = 0x01, 0x02, 0x03, 0x04
HELLO = struct.Struct("<BBBBBBHHB8s")
STATUS = struct.Struct("<IHHHBB")

SCENARIOS = ("single", "rapid", "noisy", "game")
SCENARIO_ID = {name: i + 1 for i, name in enumerate(SCENARIOS)}
QUIET_S = 4.0  # the first seconds of every recording: empty, quiet tower
FIRST_EVENT_S = 5.0
COLOURS = ("yellow", "blue", "brown", "gray", "black", "white")
NOISE_KINDS = ("ideal", "ordinary", "ideal load", "ideal piezo")

F64 = npt.NDArray[np.float64]
U8 = npt.NDArray[np.uint8]

# -- CRC-16/CCITT-FALSE and COBS, from the contract -----------------------------------


def _crc_table() -> npt.NDArray[np.uint32]:
    table = np.zeros(256, np.uint32)
    for i in range(256):
        c = i << 8
        for _ in range(8):
            c = ((c << 1) ^ 0x1021) if c & 0x8000 else (c << 1)
            c &= 0xFFFF
        table[i] = c
    return table


CRC_TABLE = _crc_table()
_CRC_LIST = [int(x) for x in CRC_TABLE]


def crc16_ccitt_false(data: bytes) -> int:
    """CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, not reflected), by table."""
    crc = 0xFFFF
    for b in data:
        crc = ((crc << 8) & 0xFFFF) ^ _CRC_LIST[((crc >> 8) ^ b) & 0xFF]
    return crc


def crc16_ccitt_false_reference(data: bytes) -> int:
    """The same CRC bit by bit, as the contract defines it (a second implementation)."""
    crc = 0xFFFF
    for b in data:
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) & 0xFFFF if crc & 0x8000 else (crc << 1) & 0xFFFF
    return crc


def crc16_rows(rows: U8) -> npt.NDArray[np.uint16]:
    """The CRC of every row of ``rows`` (equal-length messages), column by column."""
    crc = np.full(rows.shape[0], 0xFFFF, np.uint32)
    for col in range(rows.shape[1]):
        crc = ((crc << 8) & 0xFFFF) ^ CRC_TABLE[((crc >> 8) ^ rows[:, col]) & 0xFF]
    return crc.astype(np.uint16)


def cobs_encode(data: bytes) -> bytes:
    """COBS-encode ``data`` (no trailing 0x00)."""
    out = bytearray([0])
    code_at, code = 0, 1
    for b in data:
        if b == 0:
            out[code_at] = code
            code_at, code = len(out), 1
            out.append(0)
        else:
            out.append(b)
            code += 1
            if code == 0xFF:
                out[code_at] = code
                code_at, code = len(out), 1
                out.append(0)
    out[code_at] = code
    return bytes(out)


def cobs_decode_own(encoded: bytes) -> bytes:
    """Undo :func:`cobs_encode` (our own decoder, for the tests)."""
    out = bytearray()
    i = 0
    while i < len(encoded):
        code = encoded[i]
        if code == 0:
            raise ValueError("zero byte inside a COBS frame")
        out += encoded[i + 1:i + code]
        i += code
        if code < 0xFF and i < len(encoded):
            out.append(0)
    return bytes(out)


def cobs_encode_rows(rows: U8) -> U8:
    """COBS-encode every row (at most 253 bytes) and end it with the frame's 0x00."""
    n, length = rows.shape
    if length > 253:
        raise ValueError("rows longer than 253 bytes need more than one code byte")
    ext = np.zeros((n, length + 1), np.int64)
    ext[:, 1:] = rows
    pos = np.arange(length + 1)
    zero = ext == 0
    idx = np.where(zero, pos, length + 1)
    from_here = np.minimum.accumulate(idx[:, ::-1], axis=1)[:, ::-1]
    after = np.full_like(idx, length + 1)
    after[:, :-1] = from_here[:, 1:]
    out = np.zeros((n, length + 2), np.uint8)
    out[:, :length + 1] = np.where(zero, after - pos, ext)
    return out


def frame(msg_type: int, seq: int, payload: bytes) -> bytes:
    """One framed message: COBS(type | seq | body | crc) + 0x00."""
    msg = bytes([msg_type]) + (seq & 0xFFFF).to_bytes(2, "little") + payload
    return cobs_encode(msg + crc16_ccitt_false(msg).to_bytes(2, "little")) + b"\x00"


# -- the tower -------------------------------------------------------------------------


@dataclass
class Tower:
    """One build of the kit: every figure the documents leave open, drawn from the seed."""

    seed: int
    noise_kind: str
    cells: str  # "matched" (one gain within 1 %) or "mixed" (gains within 25 %)
    cube_g: float  # a cube's mean mass
    cube_spread: float  # relative spread of the cubes' masses
    cpg: F64  # counts per gram, per level
    offset: F64  # counts of the empty plate, per level
    load_noise: float  # counts rms
    piezo_bias: F64  # ADC codes of an idle channel
    piezo_noise: float  # LSB rms
    piezo_amp: float  # LSB of a full-energy strike on its own plate
    xtalk: float  # ratio per level of distance
    freq: F64  # Hz: each plate's ring
    tau: float  # s: strike decay
    spike_k: float  # an impact's spike in one reading, in cube masses per unit energy
    ring_rel: float  # load ringing after a landing, in cube masses (0: none)
    ring_f: float
    ring_tau: float
    p_stop: F64  # per level: chance a falling cube comes to rest there
    p_edge: float  # chance a passing cube strikes the hole's edge
    p_knock: float  # chance a strike knocks a resting cube down the hole
    t0_us: int  # device clock at the first piezo set
    load_phase: int  # piezo sets from the first set to the end of the first load reading
    device_id: bytes

    @property
    def mean_cpg(self) -> float:
        return float(np.mean(self.cpg))


def make_tower(seed: int) -> Tower:
    """The tower of ``seed`` (every scenario of a seed is played on it)."""
    rng = np.random.default_rng([seed, 0xAE, 1])
    kind = NOISE_KINDS[(seed - 1) % 4]
    cells = ("matched", "mixed")[((seed - 1) // 4) % 2]
    base = rng.uniform(12_000.0, 30_000.0)
    spread = 0.01 if cells == "matched" else 0.25
    cpg = base * (1.0 + rng.uniform(-spread, spread, N_CH))
    offset = np.round(rng.uniform(-400_000.0, 600_000.0, N_CH))
    ordinary_load = rng.uniform(0.003, 0.015) * base
    tiny_load = rng.uniform(0.5, 2.0)
    load_noise = {"ideal": 0.0, "ordinary": ordinary_load, "ideal load": 0.0,
                  "ideal piezo": tiny_load}[kind]
    bias = BIAS + rng.integers(-6, 7, N_CH).astype(float)
    piezo_noise = rng.uniform(0.7, 2.5)
    if kind in ("ideal", "ideal piezo"):
        bias[:] = BIAS
        piezo_noise = 0.0
    ringing = rng.random() < 0.5
    p_stop = np.ones(N_CH)
    p_stop[1:] = rng.uniform(0.22, 0.4, N_CH - 1)
    return Tower(
        seed=seed, noise_kind=kind, cells=cells,
        cube_g=float(rng.uniform(0.3, 0.8)), cube_spread=float(rng.uniform(0.01, 0.04)),
        cpg=cpg, offset=offset, load_noise=float(load_noise),
        piezo_bias=bias, piezo_noise=float(piezo_noise),
        piezo_amp=float(rng.uniform(150.0, 420.0)), xtalk=float(rng.uniform(0.15, 0.45)),
        freq=rng.uniform(180.0, 850.0, N_CH), tau=float(rng.uniform(0.004, 0.012)),
        spike_k=float(rng.uniform(1.0, 4.0)),
        ring_rel=float(rng.uniform(0.05, 0.25)) if ringing else 0.0,
        ring_f=float(rng.uniform(10.0, 18.0)), ring_tau=float(rng.uniform(0.04, 0.08)),
        p_stop=p_stop, p_edge=float(rng.uniform(0.3, 0.7)),
        p_knock=float(rng.uniform(0.01, 0.03)),
        t0_us=int(rng.integers(100_000, 900_000)) // US_PER_SET * US_PER_SET,
        load_phase=int(rng.integers(11, LOAD_PERIOD + 1)),
        device_id=b"AE" + (seed & 0xFFFFFFFFFFFF).to_bytes(6, "little"),
    )


# -- the scene: what happens, in stream seconds --------------------------------------


@dataclass
class Cube:
    """One wooden cube."""

    colour: str
    mass_g: float
    t_rest: float = 0.0


@dataclass
class Scene:
    """Everything that happens to one tower in one recording, and its truth."""

    tw: Tower
    duration: float
    rng: np.random.Generator
    scenario: str
    tower: list[list[Cube]] = field(default_factory=lambda: [[] for _ in range(N_CH)])
    strikes: list[tuple[float, int, float]] = field(default_factory=list)  # t, level, energy
    spikes: list[tuple[float, int, float]] = field(default_factory=list)  # t, level, grams
    weights: list[tuple[float, int, float]] = field(default_factory=list)  # t, level, grams
    rings: list[tuple[float, int, float]] = field(default_factory=list)  # t, level, grams
    shakes: list[tuple[float, float, float]] = field(default_factory=list)  # t, piezo, load g
    thumps: list[tuple[float, int, float]] = field(default_factory=list)  # t, level, LSB
    hands: list[dict[str, Any]] = field(default_factory=list)  # hands on the tower
    presses: list[tuple[float, float, int, float]] = field(default_factory=list)
    scrapes: list[tuple[float, float, int, float]] = field(default_factory=list)
    open_spans: list[tuple[float, float, int]] = field(default_factory=list)
    talk: list[tuple[float, float, float]] = field(default_factory=list)
    hum_lsb: float = 0.0
    landings: list[dict[str, Any]] = field(default_factory=list)
    knockdowns: list[dict[str, Any]] = field(default_factory=list)
    removals: list[dict[str, Any]] = field(default_factory=list)
    lifts: list[dict[str, Any]] = field(default_factory=list)
    closes: list[dict[str, Any]] = field(default_factory=list)
    knocks: list[dict[str, Any]] = field(default_factory=list)
    game: dict[str, Any] | None = None

    def new_cube(self, colour: str) -> Cube:
        m = self.tw.cube_g * (1.0 + self.tw.cube_spread * self.rng.standard_normal())
        return Cube(colour, float(m))


def _fall(sc: Scene, cube: Cube, t_arrive: float, level: int, may_knock: bool
          ) -> tuple[float, float, int, dict[str, Any] | None]:
    """A cube reaching plate ``level`` at ``t_arrive`` falls on down to rest.

    Returns (first impact, rest time, floor, the knock-down it caused or None).
    """
    tw, rng = sc.tw, sc.rng
    t = t_arrive
    first: float | None = None
    knock: dict[str, Any] | None = None
    for lv in range(level, -1, -1):
        stops = lv == 0 or rng.random() < tw.p_stop[lv]
        if stops or rng.random() < tw.p_edge:
            energy = float(rng.uniform(0.6, 1.0) if stops else rng.uniform(0.15, 0.5))
            sc.strikes.append((t, lv, energy))
            sc.spikes.append((t, lv, tw.spike_k * cube.mass_g * energy))
            first = t if first is None else first
            if may_knock and knock is None:
                knock = _maybe_knock(sc, t, lv)
        if stops:
            tb, gap, e = t, rng.uniform(0.03, 0.06), energy
            for _ in range(int(rng.integers(1, 4))):
                e *= rng.uniform(0.15, 0.35)
                gap *= rng.uniform(0.5, 0.8)
                tb += gap
                sc.strikes.append((tb, lv, e))
                sc.spikes.append((tb, lv, tw.spike_k * cube.mass_g * e))
            sc.weights.append((tb, lv, cube.mass_g))
            if tw.ring_rel > 0:
                sc.rings.append((tb, lv, tw.ring_rel * cube.mass_g))
            cube.t_rest = float(tb + rng.uniform(0.03, 0.2))
            sc.tower[lv].append(cube)
            assert first is not None
            return first, cube.t_rest, lv, knock
        t += rng.uniform(0.025, 0.045)
    raise AssertionError("the ground floor stops every cube")


def _maybe_knock(sc: Scene, t: float, level: int) -> dict[str, Any] | None:
    """A strike on ``level`` may knock a resting cube down the hole to a lower level."""
    if level == 0:
        return None
    resting = [c for c in sc.tower[level] if c.t_rest < t]
    if not resting or sc.rng.random() >= sc.tw.p_knock:
        return None
    cube = resting[int(sc.rng.integers(len(resting)))]
    sc.tower[level].remove(cube)
    t_off = t + 0.005
    sc.weights.append((t_off, level, -cube.mass_g))
    _, t_rest, floor, _ = _fall(sc, cube, t_off + sc.rng.uniform(0.03, 0.05), level - 1, False)
    sc.landings.append({
        "t": t_rest, "t_release": t, "t_first_impact": t, "floor": floor, "cubes": 1,
        "knocked": True, "knocked_from": level, "mass_g": cube.mass_g,
        "colour": cube.colour, "kind": "knocked",
    })
    kd = {"t": t, "floor_from": level, "floor_to": floor, "mass_g": cube.mass_g}
    sc.knockdowns.append(kd)
    return kd


def throw(sc: Scene, t_release: float, cube: Cube, kind: str = "throw",
          by: str | None = None) -> float:
    """Drop ``cube`` into the top of the shaft at ``t_release``; returns its rest time."""
    t_top = t_release + sc.rng.uniform(0.09, 0.13)
    first, t_rest, floor, knock = _fall(sc, cube, t_top, N_CH - 1, True)
    landing: dict[str, Any] = {
        "t": t_rest, "t_release": t_release, "t_first_impact": first, "floor": floor,
        "cubes": 1, "knocked": False, "caused_knockdown": knock is not None,
        "mass_g": cube.mass_g, "colour": cube.colour, "kind": kind,
    }
    if by is not None:
        landing["by"] = by
    sc.landings.append(landing)
    return t_rest


def table_knock(sc: Scene, t: float) -> None:
    """Someone knocks on the table: every level rings and shakes, nothing lands."""
    rng = sc.rng
    sc.shakes.append((t, float(rng.uniform(80.0, 300.0)), float(rng.uniform(0.2, 1.5))))
    sc.knocks.append({"t": t, "t_end": t + 0.25})


def hand_touch(sc: Scene, t0: float, t1: float, why: str,
               levels: tuple[int, int] = (0, N_CH - 1), load_g: float = 0.0,
               piezo_lsb: float = 0.0) -> None:
    """A hand on the tower from ``t0`` to ``t1``: rumble on the piezos, wobble on the cells."""
    rng = sc.rng
    sc.hands.append({
        "t": t0, "t_end": t1, "why": why, "levels": list(levels),
        "load_g": load_g or float(rng.uniform(0.02, 0.3)),
        "piezo_lsb": piezo_lsb or float(rng.uniform(3.0, 15.0)),
        "rustle_lsb": float(rng.uniform(1.0, 5.0)),
    })


def lift_and_look(sc: Scene, t_lift: float, exposed: int, grabs: list[list[Cube]]) -> float:
    """Lift modules ``exposed``..7, take the cubes out in ``grabs``, set them back.

    The load channels of levels above ``exposed`` read invalid from ``t_lift``
    until the modules are back. Returns the time the tower is closed.
    """
    rng = sc.rng
    hand_touch(sc, t_lift - rng.uniform(0.4, 0.8), t_lift, "lift",
               load_g=float(rng.uniform(0.005, 0.03)))
    sc.thumps.append((t_lift, exposed, float(rng.uniform(15.0, 60.0))))
    sc.lifts.append({"t": t_lift, "exposed": exposed})
    t = t_lift + rng.uniform(0.8, 2.0)
    for grab in grabs:
        t_r = t + rng.uniform(0.5, 1.0)
        t_press = t_r - rng.uniform(0.25, 0.5)
        sc.presses.append((t_press, t_r, exposed, float(rng.uniform(0.5, 2.0))))
        sc.scrapes.append((t_press, t_r + 0.1, exposed, float(rng.uniform(4.0, 15.0))))
        mass = 0.0
        for cube in grab:
            sc.tower[exposed].remove(cube)
            mass += cube.mass_g
        sc.weights.append((t_r, exposed, -mass))
        sc.removals.append({"t": t_r, "floor": exposed, "cubes": len(grab), "mass_g": mass,
                            "colours": [c.colour for c in grab]})
        t = t_r + rng.uniform(0.8, 1.6)
    t_close = t + rng.uniform(0.3, 1.0)
    hand_touch(sc, t_lift, t_close + rng.uniform(0.2, 0.5), "holding",
               levels=(0, exposed), load_g=float(rng.uniform(0.005, 0.03)))
    sc.thumps.append((t_close, exposed, float(rng.uniform(40.0, 150.0))))
    sc.open_spans.append((t_lift, t_close, exposed))
    sc.closes.append({"t": t_close, "exposed": exposed})
    return float(t_close)


def lift_time_needed(n_grabs: int) -> float:
    """The longest a lift with ``n_grabs`` grabs can take, lift to close."""
    return 2.0 + 2.6 * n_grabs + 1.0


def grabs_of(cubes: list[Cube]) -> list[list[Cube]]:
    """Cubes taken out by hand, at most four in one grab; victims first."""
    ordered = [c for c in cubes if c.colour == "red"] + [c for c in cubes if c.colour != "red"]
    return [ordered[i:i + 4] for i in range(0, len(ordered), 4)]


# -- scenarios ------------------------------------------------------------------------


def _single(sc: Scene, gap: tuple[float, float]) -> None:
    t = FIRST_EVENT_S + sc.rng.uniform(0.0, 1.0)
    while t < sc.duration - 3.0:
        rest = throw(sc, t, sc.new_cube("white"))
        t = rest + sc.rng.uniform(*gap)


def _rapid(sc: Scene) -> None:
    rng = sc.rng
    t = FIRST_EVENT_S + rng.uniform(0.0, 1.0)
    rest = t
    while t < sc.duration - 3.0:
        for _ in range(int(rng.integers(3, 10))):
            if t >= sc.duration - 3.0:
                break
            rest = throw(sc, t, sc.new_cube("white"))
            t += rng.uniform(0.3, 0.8)
        t = max(t, rest) + rng.uniform(2.5, 5.0)


def _free(busy: list[tuple[float, float]], a: float, b: float) -> bool:
    return all(b <= x or a >= y for x, y in busy)


def _noisy(sc: Scene) -> None:
    rng = sc.rng
    _single(sc, (3.5, 7.0))
    sc.hum_lsb = float(rng.uniform(0.5, 4.0))
    busy = [(x["t_release"] - 0.5, x["t"] + 1.0) for x in sc.landings]
    d = sc.duration
    for _ in range(max(1, round(d / 15))):
        for _attempt in range(200):
            t = float(rng.uniform(QUIET_S + 0.6, d - 1.0))
            if _free(busy, t - 0.3, t + 1.0):
                table_knock(sc, t)
                busy.append((t - 0.3, t + 1.0))
                break
    for _ in range(max(1, round(d / 25))):
        length = float(rng.uniform(0.4, 1.5))
        for _attempt in range(200):
            t = float(rng.uniform(QUIET_S + 0.6, d - 1.0 - length))
            if _free(busy, t - 0.3, t + length + 0.5):
                hand_touch(sc, t, t + length, "touch")
                busy.append((t - 0.3, t + length + 0.5))
                break
    t = QUIET_S + rng.uniform(0.5, 6.0)
    while t < d - 1.0:  # talk may come at any time after the quiet start
        length = float(rng.uniform(1.0, 4.0))
        sc.talk.append((t, min(t + length, d), float(rng.uniform(2.0, 8.0))))
        t += length + rng.uniform(3.0, 15.0)


# -- Mord im Arosa, by the rules -----------------------------------------------------


class Game:
    """Mord im Arosa, played by the rules on the simulated tower (its physical truth)."""

    def __init__(self, sc: Scene) -> None:
        self.sc = sc
        rng = sc.rng
        n = int(rng.integers(3, 6))
        order = rng.permutation(len(COLOURS))[:n]
        self.players = [COLOURS[i] for i in order]
        self.supply = {p: 20 for p in self.players}
        self.sheet = {p: [0] * N_CH for p in self.players}
        self.crime_scenes: list[int] = []
        self.victims_found = 0
        self.phase = "prologue"
        self.log: list[dict[str, Any]] = []
        self.t = FIRST_EVENT_S + rng.uniform(0.0, 1.0)

    # the end conditions, checked after every event
    def over(self) -> bool:
        if self.phase == "over":
            return True
        if any(sum(s) >= 10 for s in self.sheet.values()) or min(self.supply.values()) <= 0:
            self.phase = "over"
            return True
        return False

    def _throw(self, cube: Cube, kind: str, by: str) -> bool:
        """Throw one cube if there is time; False when the recording is over first."""
        if self.t >= self.sc.duration - 3.0:
            return False
        rest = throw(self.sc, self.t, cube, kind, by)
        self.t = rest + self.sc.rng.uniform(1.2, 2.8)
        return True

    def _from_supply(self, colour: str) -> Cube:
        self.supply[colour] -= 1
        return self.sc.new_cube(colour)

    def play(self) -> None:
        sc, rng = self.sc, self.sc.rng
        first = self.players[0]
        for _ in range(2):
            if not self._throw(sc.new_cube("red"), "victim", first):
                return
        for p in self.players:
            for _ in range(2):
                if not self._throw(self._from_supply(p), "prologue", p):
                    return
        self.phase = "act1"
        turn = 0
        while not self.over():
            who = self.players[turn % len(self.players)]
            if not self._turn(who, rng):
                return
            turn += 1

    def _choose_floor(self, who: str, rng: np.random.Generator, action: str,
                      suspects: list[str]) -> int:
        """Players listen: half the time they open the floor they heard the cube go to."""
        tower = self.sc.tower
        if action == "inspect":
            heard = [lv for lv in range(N_CH) for c in tower[lv] if c.colour == "red"]
        elif action == "suspect":
            heard = [lv for lv in range(N_CH) for c in tower[lv] if c.colour in suspects]
        else:
            heard = [lv for lv in range(N_CH) for c in tower[lv] if c.colour == who]
        if heard and rng.random() < 0.5:
            return heard[int(rng.integers(len(heard)))]
        return int(rng.integers(0, N_CH))

    def _turn(self, who: str, rng: np.random.Generator) -> bool:
        """One investigator's turn; False when the recording ends before it."""
        sc = self.sc
        suspects: list[str] = []
        if self.phase == "act1":
            action = "inspect"
        elif any(self.sheet[who]) and rng.random() < 0.35:
            action = "cover"
        else:
            action = "suspect"
            others = [p for p in self.players if p != who]
            k = min(len(others), int(rng.integers(1, 3)))
            suspects = [others[i] for i in sorted(rng.permutation(len(others))[:k])]
        floor = self._choose_floor(who, rng, action, suspects)
        found = list(sc.tower[floor])
        grabs = grabs_of(found)
        t_lift = self.t + rng.uniform(0.8, 2.5)
        if t_lift + lift_time_needed(len(grabs)) + 4.0 > sc.duration:
            return False
        t_close = lift_and_look(sc, t_lift, floor, grabs)
        self.t = t_close + rng.uniform(1.5, 3.0)
        colours = [c.colour for c in found]
        entry: dict[str, Any] = {"by": who, "do": action, "floor": floor,
                                 "found": colours, "t_lift": t_lift}
        if suspects:
            entry["suspects"] = suspects
        self.log.append(entry)
        in_hand = [c for c in found if c.colour != "red"]
        penalties = 0
        if action == "inspect":
            victims = colours.count("red")
            if victims:
                self.victims_found += victims
                if floor not in self.crime_scenes:
                    self.crime_scenes.append(floor)
                for p in self.players:
                    if p != who:
                        self._to_sheet(p, floor, colours.count(p), in_hand)
                if self.victims_found >= 2:
                    self.phase = "act2"
            else:
                penalties = 1
        elif action == "suspect":
            if floor == 0 and who not in colours:
                penalties = len(suspects)  # the ground-floor case
            else:
                for p in suspects:
                    n = colours.count(p)
                    if n:
                        self._to_sheet(p, floor, n, in_hand)
                    else:
                        penalties += 1
        else:  # cover
            n = min(colours.count(who), self.sheet[who][floor])
            self.sheet[who][floor] -= n
            self.supply[who] += n
            entry["covered"] = n
            if who not in colours:
                penalties = 1
        if self.over():
            return True
        for cube in in_hand:
            if not self._throw(cube, "throwback", who):
                return False
        for _ in range(penalties):
            if not self._throw(self._from_supply(who), "penalty", who):
                return False
            if self.over():
                return True
        return True

    def _to_sheet(self, p: str, floor: int, n: int, in_hand: list[Cube]) -> None:
        """``p`` puts ``n`` clues on the sheet: from the supply, then from the open floor."""
        from_supply = min(n, self.supply[p])
        self.supply[p] -= from_supply
        for _ in range(n - from_supply):
            cube = next(c for c in in_hand if c.colour == p)
            in_hand.remove(cube)
        self.sheet[p][floor] += n

    def summary(self) -> dict[str, Any]:
        return {"players": self.players, "phase": self.phase, "turns": self.log,
                "crime_scenes": sorted(self.crime_scenes), "sheet": self.sheet,
                "supply": self.supply}


def simulate(seed: int, scenario: str, duration: float) -> Scene:
    """The scene of one recording: what happens to tower ``seed``."""
    if scenario not in SCENARIOS:
        raise ValueError(f"unknown scenario {scenario!r}")
    sc = Scene(make_tower(seed), float(duration),
               np.random.default_rng([seed, SCENARIO_ID[scenario], 0xAE]), scenario)
    if scenario == "single":
        _single(sc, (2.5, 5.5))
    elif scenario == "rapid":
        _rapid(sc)
    elif scenario == "noisy":
        _noisy(sc)
    else:
        game = Game(sc)
        game.play()
        sc.game = game.summary()
    return sc


# -- signals ---------------------------------------------------------------------------

_LP_HAND = signal.butter(2, 6.0, "lowpass", fs=FS, output="sos")
_LP_RUMBLE = signal.butter(2, 40.0, "lowpass", fs=FS, output="sos")
_BP_RUSTLE = signal.butter(2, (200.0, 800.0), "bandpass", fs=FS, output="sos")
_BP_TALK = signal.butter(2, (150.0, 900.0), "bandpass", fs=FS, output="sos")


def _add(arr: F64, row: int, i0: int, seg: F64) -> None:
    """Add ``seg`` to ``arr[row]`` from index ``i0``, cut at the array's ends."""
    n = arr.shape[1]
    a, b = max(i0, 0), min(i0 + seg.shape[-1], n)
    if a < b:
        arr[row, a:b] += seg[a - i0:b - i0]


def _add_all(arr: F64, i0: int, seg: F64) -> None:
    """Add ``seg`` (channels x samples) from index ``i0``."""
    n = arr.shape[1]
    a, b = max(i0, 0), min(i0 + seg.shape[1], n)
    if a < b:
        arr[:, a:b] += seg[:, a - i0:b - i0]


def _envelope(n: int, fade: int) -> F64:
    env = np.ones(n)
    fade = min(fade, n // 2)
    if fade > 0:
        ramp = np.sin(np.linspace(0.0, np.pi / 2, fade)) ** 2
        env[:fade] = ramp
        env[n - fade:] = ramp[::-1]
    return env


def _unit_noise(rng: np.random.Generator, sos: npt.NDArray[np.float64], shape: tuple[int, int]
                ) -> F64:
    x = signal.sosfilt(sos, rng.standard_normal(shape), axis=-1)
    sd = x.std(axis=-1, keepdims=True)
    return np.asarray(x / np.where(sd > 0, sd, 1.0), dtype=np.float64)


def piezo_signal(sc: Scene, n: int, rng: np.random.Generator) -> F64:
    """The eight piezo channels (channels x sets), as ADC codes before rounding."""
    tw = sc.tw
    out = np.zeros((N_CH, n))
    out += tw.piezo_bias[:, None]
    if tw.piezo_noise > 0:
        out += tw.piezo_noise * rng.standard_normal((N_CH, n))
    seg_n = int(6 * tw.tau * FS) + 2
    dist = np.abs(np.arange(N_CH)[:, None] - np.arange(N_CH)[None, :])
    gain = tw.xtalk ** dist  # [receiving channel, struck level]
    for t, lv, energy in sc.strikes:
        i0 = math.ceil(t * FS)
        dt = (i0 + np.arange(seg_n)) / FS - t
        wave = np.exp(-dt / tw.tau) * np.sin(2 * np.pi * tw.freq[:, None] * dt)
        _add_all(out, i0, tw.piezo_amp * energy * gain[:, lv:lv + 1] * wave)
    for t, amp, _ in sc.shakes:  # table knocks: loudest at the ground floor
        i0 = math.ceil(t * FS)
        dt = (i0 + np.arange(int(0.25 * FS))) / FS - t
        f_low = rng.uniform(60.0, 180.0)
        tau_low = rng.uniform(0.015, 0.04)
        wave = np.exp(-dt / tau_low) * np.sin(2 * np.pi * f_low * dt) \
            + 0.5 * np.exp(-dt / 0.003) * np.sin(2 * np.pi * 700.0 * dt)
        levels = amp * 0.85 ** np.arange(N_CH)
        _add_all(out, i0, levels[:, None] * wave[None, :])
    for t, lv, amp in sc.thumps:  # modules lifted off or set down
        i0 = math.ceil(t * FS)
        dt = (i0 + np.arange(int(0.15 * FS))) / FS - t
        wave = np.exp(-dt / 0.02) * np.sin(2 * np.pi * 90.0 * dt)
        levels = amp * 0.7 ** np.abs(np.arange(N_CH) - lv)
        _add_all(out, i0, levels[:, None] * wave[None, :])
    for h in sc.hands:
        i0, i1 = math.ceil(h["t"] * FS), math.ceil(h["t_end"] * FS)
        m = i1 - i0
        if m < 4:
            continue
        env = _envelope(m, int(0.1 * FS))
        scale = rng.uniform(0.6, 1.0, N_CH)[:, None]
        noise = h["piezo_lsb"] * _unit_noise(rng, _LP_RUMBLE, (N_CH, m)) \
            + h["rustle_lsb"] * _unit_noise(rng, _BP_RUSTLE, (N_CH, m))
        _add_all(out, i0, scale * noise * env)
    for t0, t1, lv, amp in sc.scrapes:  # fingers on the open plate
        i0, m = math.ceil(t0 * FS), math.ceil((t1 - t0) * FS)
        env = _envelope(m, int(0.05 * FS))
        levels = amp * 0.4 ** np.abs(np.arange(N_CH) - lv)
        _add_all(out, i0, levels[:, None] * _unit_noise(rng, _BP_RUSTLE, (N_CH, m)) * env)
    for t0, t1, amp in sc.talk:
        i0, m = math.ceil(t0 * FS), math.ceil((t1 - t0) * FS)
        tt = np.arange(m) / FS
        syll = 0.5 * (1 + np.sin(2 * np.pi * rng.uniform(3.0, 5.0) * tt + rng.uniform(0, 6.3)))
        env = _envelope(m, int(0.2 * FS)) * syll
        voice = _unit_noise(rng, _BP_TALK, (1, m))[0]
        scale = rng.uniform(0.5, 1.0, N_CH)[:, None]
        _add_all(out, i0, amp * scale * (voice * env)[None, :])
    if sc.hum_lsb > 0:
        tt = np.arange(n) / FS
        ph = rng.uniform(0, 2 * np.pi)
        hum = np.sin(2 * np.pi * 50.0 * tt + ph) + 0.3 * np.sin(2 * np.pi * 150.0 * tt + 3 * ph)
        out += sc.hum_lsb * rng.uniform(0.7, 1.3, N_CH)[:, None] * hum[None, :]
    return out


def load_grams(sc: Scene, n: int, rng: np.random.Generator) -> F64:
    """Grams on each plate above its empty tare (channels x sets), continuous."""
    g = np.zeros((N_CH, n + 1))
    for t, lv, grams in sc.weights:
        g[lv, min(math.ceil(t * FS), n)] += grams
    g = np.cumsum(g, axis=1)[:, :n]
    width = 10  # 5 ms half-sine impact
    pulse = np.sin(np.pi * (np.arange(width) + 0.5) / width)
    pulse *= LOAD_PERIOD / pulse.sum()  # one reading's mean sees the spike's full height
    for t, lv, grams in sc.spikes:
        _add(g, lv, math.ceil(t * FS), grams * pulse)
    tw = sc.tw
    ring_t = np.arange(int(0.4 * FS)) / FS
    ring = np.exp(-ring_t / tw.ring_tau) * np.sin(2 * np.pi * tw.ring_f * ring_t)
    for t, lv, grams in sc.rings:
        _add(g, lv, math.ceil(t * FS), grams * ring)
    shake_t = np.arange(int(0.5 * FS)) / FS
    for t, _, grams in sc.shakes:
        f = rng.uniform(12.0, 25.0, N_CH)[:, None]
        tau = rng.uniform(0.06, 0.12)
        amp = grams * rng.uniform(0.5, 1.0, N_CH)[:, None]
        _add_all(g, math.ceil(t * FS),
                 amp * np.exp(-shake_t / tau) * np.sin(2 * np.pi * f * shake_t))
    for t, lv, lsb in sc.thumps:
        amp = 0.002 * lsb * rng.uniform(0.5, 1.0, N_CH)[:, None]
        amp[lv + 1:] = 0.0
        _add_all(g, math.ceil(t * FS),
                 amp * np.exp(-shake_t / 0.06) * np.sin(2 * np.pi * 15.0 * shake_t))
    for h in sc.hands:
        i0, i1 = math.ceil(h["t"] * FS), math.ceil(h["t_end"] * FS)
        m = i1 - i0
        if m < 4:
            continue
        lo, hi = h["levels"]
        amp = np.zeros((N_CH, 1))
        amp[lo:hi + 1, 0] = h["load_g"] * rng.uniform(0.3, 1.0, hi + 1 - lo)
        _add_all(g, i0, amp * _unit_noise(rng, _LP_HAND, (N_CH, m)) * _envelope(m, m // 3))
    for t0, t1, lv, grams in sc.presses:  # fingers press, then leave with the cubes
        i0, i1 = math.ceil(t0 * FS), math.ceil(t1 * FS)
        press = np.concatenate([np.linspace(0.0, grams, i1 - i0, endpoint=False),
                                np.linspace(grams, 0.0, int(0.08 * FS))])
        _add(g, lv, i0, press)
    return g


def render(sc: Scene) -> tuple[bytes, dict[str, Any]]:
    """The recording's bytes and its truth."""
    tw = sc.tw
    rng = np.random.default_rng([tw.seed, SCENARIO_ID[sc.scenario], 0xAE, 2])
    n = int(round(sc.duration * FS))
    codes = np.clip(np.rint(piezo_signal(sc, n, rng)), 0, ADC_MAX).astype(np.uint16)

    # HX711: each reading is the mean over its conversion period, ending at its stamp.
    grams = load_grams(sc, n, rng)
    first_end = tw.load_phase - 1  # set index at which the first reading ends
    n_read = (n - 1 - first_end) // LOAD_PERIOD + 1
    start = first_end + 1 - LOAD_PERIOD
    head = np.zeros((N_CH, -start)) if start < 0 else np.zeros((N_CH, 0))
    padded = np.concatenate([head, grams[:, max(start, 0):]], axis=1)
    block = padded[:, :n_read * LOAD_PERIOD].reshape(N_CH, n_read, LOAD_PERIOD).mean(axis=2)
    counts = tw.offset[:, None] + tw.cpg[:, None] * block
    if tw.load_noise > 0:
        counts += tw.load_noise * rng.standard_normal(counts.shape)
    counts = np.clip(np.rint(counts), -(1 << 23), (1 << 23) - 1).astype(np.int64)
    read_end = first_end + LOAD_PERIOD * np.arange(n_read)  # set index of each reading
    read_t = read_end / FS
    valid = np.ones((N_CH, n_read), bool)
    for t_lift, t_close, exposed in sc.open_spans:
        gone = (read_t > t_lift) & (read_t < t_close + 0.05)
        valid[exposed + 1:, gone] = False
    counts[~valid] = 0
    valid_bits = (valid.astype(np.int64) << np.arange(N_CH)[:, None]).sum(axis=0)
    raw = _wire(tw, codes, counts, valid_bits, read_end, n)
    return raw, truth_of(sc)


def _wire(tw: Tower, codes: npt.NDArray[np.uint16], counts: npt.NDArray[np.int64],
          valid_bits: npt.NDArray[np.int64], read_end: npt.NDArray[np.int64], n: int) -> bytes:
    """Frame everything in the order the device sends it: HELLO, then data and status."""
    n_pz = -(-n // SETS_PER_MSG)
    pz_first = np.arange(n_pz) * SETS_PER_MSG
    pz_sets = np.minimum(SETS_PER_MSG, n - pz_first)
    pz_tus = tw.t0_us + pz_first * US_PER_SET
    ld_tus = tw.t0_us + read_end * US_PER_SET
    st_tus = tw.t0_us + np.arange(1, int((n - 1) // FS) + 1) * 1_000_000
    keys = np.concatenate([pz_tus + pz_sets * US_PER_SET, ld_tus + 200, st_tus + 300])
    kind = np.concatenate([np.zeros(n_pz, int), np.ones(len(ld_tus), int),
                           np.full(len(st_tus), 2)])
    order = np.argsort(keys, kind="stable")
    seq = np.empty(len(order), np.int64)
    seq[order] = (np.arange(len(order)) + 1) % 65536
    pz_seq, ld_seq, st_seq = seq[kind == 0], seq[kind == 1], seq[kind == 2]

    chunks: list[Any] = [None] * len(order)
    full = pz_sets == SETS_PER_MSG
    samples = np.ascontiguousarray(codes.T, dtype="<u2")  # sets x channels
    # PIEZO messages of a full ten sets, all at once
    idx = np.flatnonzero(full)
    rows = np.zeros((len(idx), 8 + SETS_PER_MSG * N_CH * 2), np.uint8)
    rows[:, 0] = T_PIEZO
    rows[:, 1:3] = _le(pz_seq[idx], 2)
    rows[:, 3:7] = _le(pz_tus[idx] & 0xFFFFFFFF, 4)
    rows[:, 7] = SETS_PER_MSG
    body = samples[:len(idx) * SETS_PER_MSG].reshape(len(idx), -1).view(np.uint8)
    rows[:, 8:] = body.reshape(len(idx), -1)
    pz_framed = _frame_rows(rows)
    pz_pos = np.flatnonzero(kind[order] == 0)  # where each PIEZO goes in send order
    for j, i in enumerate(idx):
        chunks[pz_pos[i]] = pz_framed[j]
    for i in np.flatnonzero(~full):
        body_b = bytes([*_le_int(int(pz_tus[i]) & 0xFFFFFFFF, 4), int(pz_sets[i])]) \
            + samples[pz_first[i]:pz_first[i] + pz_sets[i]].tobytes()
        chunks[pz_pos[i]] = np.frombuffer(frame(T_PIEZO, int(pz_seq[i]), body_b), np.uint8)
    # LOAD messages
    m = len(ld_tus)
    rows = np.zeros((m, 8 + 3 * N_CH), np.uint8)
    rows[:, 0] = T_LOAD
    rows[:, 1:3] = _le(ld_seq, 2)
    rows[:, 3:7] = _le(ld_tus & 0xFFFFFFFF, 4)
    rows[:, 7] = valid_bits
    s24 = counts.T & 0xFFFFFF  # readings x channels
    rows[:, 8:] = np.stack([s24 & 0xFF, (s24 >> 8) & 0xFF, (s24 >> 16) & 0xFF],
                           axis=2).reshape(m, -1)
    ld_framed = _frame_rows(rows)
    ld_pos = np.flatnonzero(kind[order] == 1)
    for j in range(m):
        chunks[ld_pos[j]] = ld_framed[j]
    # STATUS once a second; load_timeouts counts the readings lifted modules never gave
    missing = np.cumsum(N_CH - np.bitwise_count(valid_bits.astype(np.uint8)).astype(np.int64))
    st_pos = np.flatnonzero(kind[order] == 2)
    for j, t_us in enumerate(st_tus):
        done = int(np.searchsorted(ld_tus, t_us, side="right"))
        timeouts = int(missing[done - 1]) if done else 0
        body_b = STATUS.pack(int(t_us // 1000) & 0xFFFFFFFF, 0, 0, min(timeouts, 0xFFFF),
                             35, 0)
        chunks[st_pos[j]] = np.frombuffer(frame(T_STATUS, int(st_seq[j]), body_b), np.uint8)
    hello = HELLO.pack(1, *FW_VERSION, N_CH, N_CH, FS, LOAD_RATE, ADC_BITS, tw.device_id)
    return frame(T_HELLO, 0, hello) + np.concatenate(chunks).tobytes()


def _le(values: npt.NDArray[np.int64], width: int) -> U8:
    v = np.asarray(values, np.int64)
    return np.stack([(v >> (8 * k)) & 0xFF for k in range(width)], axis=1).astype(np.uint8)


def _le_int(value: int, width: int) -> bytes:
    return value.to_bytes(width, "little")


def _frame_rows(rows: U8) -> U8:
    crc = crc16_rows(rows)
    full = np.concatenate([rows, _le(crc.astype(np.int64), 2)], axis=1)
    return cobs_encode_rows(full)


# -- truth -------------------------------------------------------------------------------


def _rounded(x: Any) -> Any:
    if isinstance(x, float | np.floating):
        return round(float(x), 6)
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, dict):
        return {k: _rounded(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_rounded(v) for v in x]
    if isinstance(x, np.ndarray):
        return [_rounded(v) for v in x.tolist()]
    return x


def truth_of(sc: Scene) -> dict[str, Any]:
    """The truth file's content (``towerear-crosscheck-truth/1``)."""
    tw = sc.tw

    def by_t(xs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return sorted(xs, key=lambda x: x["t"])

    doc: dict[str, Any] = {
        "format": "towerear-crosscheck-truth/1",
        "model": "AE",
        "scenario": sc.scenario,
        "seed": tw.seed,
        "duration_s": sc.duration,
        "cells": tw.cells,
        "landings": by_t(sc.landings),
        "knockdowns": by_t(sc.knockdowns),
        "removals": by_t(sc.removals),
        "lifts": by_t(sc.lifts),
        "closes": by_t(sc.closes),
        "knocks": by_t(sc.knocks),
        "touches": [{"t": h["t"], "t_end": h["t_end"], "why": h["why"]}
                    for h in sorted(sc.hands, key=lambda h: h["t"])],
        "talk": [{"t": a, "t_end": b} for a, b, _ in sc.talk],
        "hum_lsb": sc.hum_lsb,
        "damage": [],
        "tower": {
            "noise_kind": tw.noise_kind, "cube_g": tw.cube_g, "cube_spread": tw.cube_spread,
            "cpg": tw.cpg, "offset": tw.offset, "load_noise_counts": tw.load_noise,
            "piezo_bias": tw.piezo_bias, "piezo_noise_lsb": tw.piezo_noise,
            "piezo_amp_lsb": tw.piezo_amp, "xtalk": tw.xtalk, "freq_hz": tw.freq,
            "tau_s": tw.tau, "spike_k": tw.spike_k, "ring_rel": tw.ring_rel,
            "p_stop": tw.p_stop, "p_edge": tw.p_edge, "p_knock": tw.p_knock,
            "t0_us": tw.t0_us, "load_phase_sets": tw.load_phase,
        },
    }
    if sc.game is not None:
        doc["game"] = sc.game
    return dict(_rounded(doc))


# -- files and command line ------------------------------------------------------------


def make_recording(seed: int, scenario: str, duration: float, out: Path) -> tuple[Path, Path]:
    """Write ``{scenario}_t{seed}.bin`` and its truth into ``out``; returns both paths."""
    out.mkdir(parents=True, exist_ok=True)
    raw, truth = render(simulate(seed, scenario, duration))
    bin_path = out / f"{scenario}_t{seed}.bin"
    truth_path = out / f"{scenario}_t{seed}.truth.json"
    bin_path.write_bytes(raw)
    truth_path.write_text(json.dumps(truth, indent=1) + "\n")
    return bin_path, truth_path


def _job(args: tuple[int, str, float, str]) -> str:
    seed, scenario, duration, out = args
    bin_path, _ = make_recording(seed, scenario, duration, Path(out))
    return bin_path.name


def main(argv: list[str] | None = None) -> int:
    """Command line: make every (tower, scenario) recording asked for."""
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--towers", type=int, default=8)
    p.add_argument("--first-seed", type=int, default=1)
    p.add_argument("--duration", type=float, default=120.0)
    p.add_argument("--scenarios", nargs="+", default=list(SCENARIOS))
    p.add_argument("--jobs", "--workers", dest="jobs", type=int, default=1,
                   help="worker processes (the bytes do not depend on it)")
    args = p.parse_args(argv)
    unknown = [s for s in args.scenarios if s not in SCENARIOS]
    if unknown:
        print(f"make_recordings_ae: unknown scenario {unknown[0]!r} "
              f"(known: {' '.join(SCENARIOS)})", file=sys.stderr)
        return 2
    if args.duration < 8.0:
        print("make_recordings_ae: --duration must be at least 8 s", file=sys.stderr)
        return 2
    tasks = [(seed, sc, float(args.duration), str(args.out))
             for seed in range(args.first_seed, args.first_seed + args.towers)
             for sc in args.scenarios]
    args.out.mkdir(parents=True, exist_ok=True)
    if args.jobs > 1:
        with ProcessPoolExecutor(max_workers=args.jobs) as pool:
            for _ in pool.map(_job, tasks):
                pass
    else:
        for task in tasks:
            _job(task)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
