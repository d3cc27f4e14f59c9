"""Session scripts: what people do at the tower, for tests and evaluation.

A scenario is a script that waits for simulator times and acts on a
:class:`~dsp.sim.simulator.TowerSimulator` in between. Its decisions come from
its own stream of the session seed, so the same seed on two towers gives the
same actions wherever the script does not react to where cubes landed (the
``game`` and ``calibration`` scripts take out what they find).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from dsp.sim.block import SensorBlock
from dsp.sim.constants import TowerConstants
from dsp.sim.errors import SimulatorError
from dsp.sim.simulator import TowerSimulator
from dsp.sim.truth import GroundTruth

_SCRIPT_STREAM = 0x5C1
PLAYER_COLORS = ("yellow", "blue", "brown", "gray", "black", "white")
# Why 3 s: `towerear detect` tares itself on the first seconds of a quiet tower.
QUIET_START_S = 3.0

Script = Callable[[TowerSimulator, np.random.Generator, float], Iterator[float]]

SCENARIOS: dict[str, str] = {
    "single": "throws one at a time, 4-8 s apart, quiet room",
    "rapid": "bursts of 2-5 throws 0.3-0.8 s apart, 4-8 s between bursts",
    "noisy": "throws 3-7 s apart in a noisy room: strong hum, talking, table knocks, touches",
    "game": "a Mord im Arosa game: prologue throws, then turns of lift, take out, close, "
    "throw the clues back one after another (victims stay out), penalty throws",
    "long": "30+ minutes: a throw every 20-60 s, a lift every few minutes; drift and creep",
    "acoustic": "as single; the consumer uses the piezos only (truth marks load_ignored)",
    "calibration": "level by level from the top: open, coin on, coin off, three cubes "
    "dropped from 3 cm, take them out, close",
    "quiet": "nobody does anything: an empty tower for noise and drift",
}


def _single(sim: TowerSimulator, rng: np.random.Generator, duration_s: float) -> Iterator[float]:
    t = QUIET_START_S
    while t < duration_s - 3.0:
        yield t
        sim.throw(str(rng.choice(PLAYER_COLORS)))
        t += float(rng.uniform(4.0, 8.0))


def _rapid(sim: TowerSimulator, rng: np.random.Generator, duration_s: float) -> Iterator[float]:
    t = QUIET_START_S
    while t < duration_s - 3.0:
        for _ in range(int(rng.integers(2, 6))):
            if t >= duration_s - 3.0:
                break
            yield t
            sim.throw(str(rng.choice(PLAYER_COLORS)))
            t += float(rng.uniform(0.3, 0.8))
        t += float(rng.uniform(4.0, 8.0))


def _noisy(sim: TowerSimulator, rng: np.random.Generator, duration_s: float) -> Iterator[float]:
    # Disturbances are scheduled ahead at their own times; throws interleave.
    # The first comes one interval after the quiet start (contracts.md
    # section 3: the detector tares itself on the first seconds of a quiet
    # tower), not with the first throw.
    t = QUIET_START_S + float(rng.uniform(2.0, 7.0))
    while t < duration_s:
        kind = rng.random()
        if kind < 0.4:
            sim.knock(float(rng.uniform(0.3, 3.0)), at_s=t)
        elif kind < 0.7:
            sim.touch(int(rng.integers(0, 8)), at_s=t)
        else:
            sim.talk(float(rng.uniform(2.0, 8.0)), at_s=t)
        t += float(rng.uniform(2.0, 7.0))
    t = QUIET_START_S
    while t < duration_s - 3.0:
        yield t
        sim.throw(str(rng.choice(PLAYER_COLORS)))
        t += float(rng.uniform(3.0, 7.0))


def _game(sim: TowerSimulator, rng: np.random.Generator, duration_s: float) -> Iterator[float]:
    n_players = int(rng.integers(3, 7))
    players = [str(c) for c in rng.permutation(PLAYER_COLORS)[:n_players]]
    t = QUIET_START_S
    prologue = ["red", "red"] + [p for p in players for _ in range(2)]
    for color in prologue:
        yield t
        sim.throw(color)
        t += float(rng.uniform(1.5, 3.5))
    turn = 0
    while t < duration_s - 10.0:
        investigator = players[turn % n_players]
        turn += 1
        t += float(rng.uniform(2.0, 5.0))
        yield t
        level = int(rng.integers(0, 8))
        sim.lift(level)
        t += float(rng.uniform(1.5, 3.0))
        yield t
        taken = sim.remove_cubes(level)
        t += float(rng.uniform(1.0, 2.5)) + 0.6 * len(taken)
        yield t
        sim.close()
        t += float(rng.uniform(1.5, 3.0))
        # A victim found goes onto the investigation sheet; clues go back in.
        for cube in (c for c in taken if sim.cube_color(c) != "red"):
            yield t
            sim.throw(cube=cube)
            t += float(rng.uniform(1.2, 3.0))
        if rng.random() < 0.6:  # a sloppy investigation costs a clue
            yield t
            sim.throw(investigator)
            t += float(rng.uniform(1.2, 3.0))


def _long(sim: TowerSimulator, rng: np.random.Generator, duration_s: float) -> Iterator[float]:
    t = QUIET_START_S
    next_lift = float(rng.uniform(120.0, 400.0))
    while t < duration_s - 15.0:
        yield t
        if t >= next_lift:
            level = int(rng.integers(0, 8))
            sim.lift(level)
            yield t + 2.0
            taken = sim.remove_cubes(level)
            yield t + 4.0 + 0.6 * len(taken)
            sim.close()
            t += 6.0 + 0.6 * len(taken)
            for cube in taken:
                t += float(rng.uniform(1.5, 3.0))
                yield t
                sim.throw(cube=cube)
            next_lift = t + float(rng.uniform(120.0, 400.0))
        else:
            sim.throw(str(rng.choice(PLAYER_COLORS)))
        t += float(rng.uniform(20.0, 60.0))


def _calibration(
    sim: TowerSimulator, rng: np.random.Generator, duration_s: float
) -> Iterator[float]:
    t = QUIET_START_S
    coin_g = 7.5  # a 1 euro coin
    for level in range(7, -1, -1):
        if t > duration_s - 25.0:
            return
        yield t
        sim.lift(level)
        t += 3.0
        yield t
        sim.place_mass(level, coin_g)
        t += float(rng.uniform(3.0, 5.0))
        yield t
        sim.remove_mass(level)
        t += float(rng.uniform(2.0, 4.0))
        for _ in range(3):
            yield t
            sim.drop_onto(level, height_m=0.03)
            t += float(rng.uniform(2.0, 3.0))
        yield t
        sim.remove_cubes(level)
        t += float(rng.uniform(2.5, 4.0))
        yield t
        sim.close()
        t += float(rng.uniform(3.0, 5.0))


def _quiet(sim: TowerSimulator, rng: np.random.Generator, duration_s: float) -> Iterator[float]:
    return iter(())


_SCRIPTS: dict[str, Script] = {
    "single": _single,
    "rapid": _rapid,
    "noisy": _noisy,
    "game": _game,
    "long": _long,
    "acoustic": _single,
    "calibration": _calibration,
    "quiet": _quiet,
}


@dataclass
class Scenario:
    """One scripted session on one tower, rendered block by block.

    :meth:`advance` hands out exactly the span asked for (the script acts at
    its own times inside it); :meth:`blocks` iterates to the end in constant
    memory; :attr:`truth` is the ground truth so far. :func:`run_scenario`
    renders everything in one call.
    """

    name: str
    tower: TowerConstants
    seed: int
    duration_s: float

    def __post_init__(self) -> None:
        if self.name not in _SCRIPTS:
            raise SimulatorError(
                f"unknown scenario {self.name!r}; known: {', '.join(sorted(SCENARIOS))}"
            )
        if not self.duration_s > 0:
            raise SimulatorError("a scenario needs a positive duration")
        self.sim = TowerSimulator(self.tower, seed=self.seed, noisy_room=self.name == "noisy")
        rng = np.random.default_rng([self.seed, _SCRIPT_STREAM])
        self._script = _SCRIPTS[self.name](self.sim, rng, self.duration_s)
        self._next_action_s = self._resume_script()

    def _resume_script(self) -> float:
        """Let the script act; return when it wants to act next (inf: never)."""
        t_next = next(self._script, math.inf)
        return t_next if t_next <= self.duration_s else math.inf

    def advance(self, duration_s: float) -> SensorBlock:
        """The next ``duration_s`` seconds of the session, the script acting on time.

        Past the scenario's duration the tower carries on with nobody acting.
        """
        if not duration_s >= 0.0 or math.isinf(duration_s):
            raise SimulatorError("advance() needs a finite, non-negative duration")
        sim = self.sim
        t_end = sim.time_s + duration_s
        parts = []
        while self._next_action_s <= t_end:
            parts.append(sim.advance(max(0.0, self._next_action_s - sim.time_s)))
            self._next_action_s = self._resume_script()
        parts.append(sim.advance(max(0.0, t_end - sim.time_s)))
        return SensorBlock.concat(parts)

    def blocks(self, block_s: float = 1.0) -> Iterator[SensorBlock]:
        """Render the rest of the session as blocks of ``block_s`` seconds (the last shorter)."""
        if not block_s > 0:
            raise SimulatorError("blocks need a positive length")
        while self.sim.time_s < self.duration_s - 1e-9:
            yield self.advance(min(block_s, self.duration_s - self.sim.time_s))

    @property
    def truth(self) -> GroundTruth:
        """Ground truth up to where the session has been rendered."""
        truth = self.sim.truth
        truth.extra = {
            "scenario": self.name,
            "duration_s": self.duration_s,
            "load_ignored": self.name == "acoustic",
        }
        return truth


def run_scenario(
    name: str, *, tower: TowerConstants, seed: int, duration_s: float
) -> tuple[SensorBlock, GroundTruth]:
    """Render a whole scenario at once.

    Parameters
    ----------
    name : str
        One of :data:`SCENARIOS`.
    tower : TowerConstants
    seed : int
        Session seed.
    duration_s : float

    Returns
    -------
    (SensorBlock, GroundTruth)
    """
    scenario = Scenario(name, tower, seed, duration_s)
    block = SensorBlock.concat(list(scenario.blocks(block_s=10.0)))
    return block, scenario.truth
