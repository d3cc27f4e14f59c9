"""Simulated drops and openings with realistic detector errors, to measure the tower model.

A small stand-in for a table of players: cubes are thrown, sometimes knock
a resting cube down, levels are opened and counted, and the cubes found are
thrown back. The detector is imperfect in the ways the real one is: it
names a neighbouring level now and then (with lower confidence), and it
notices a knock-down only sometimes. :class:`RawDetectionTower` is the
baseline: each cube where its landing was reported, nothing more.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from hostapp.games.arosa.rules import N_FLOORS
from hostapp.games.arosa.tower_model import (
    ConfidenceCalibration,
    Detection,
    Landing,
    Removal,
    TowerModel,
)


@dataclass(frozen=True)
class DetectorErrors:
    """How often the simulated detector is wrong, and how.

    Attributes
    ----------
    p_exact
        The reported level is the true one.
    p_neighbour
        One level off (otherwise, two off).
    p_knock
        A throw knocks one resting cube (on its landing level or above) down.
    p_knock_on_landing
        The knocked cube rests on the level where the thrown one stops (else
        on a level it passed).
    p_knock_seen
        The detector reports the knocked cube's removal, and (independently)
        its new landing.
    landing_weights
        Relative chance of a thrown cube resting on each level 0..7: the holes
        are not aligned, so few reach the ground floor.
    """

    p_exact: float = 0.78
    p_neighbour: float = 0.18
    p_knock: float = 0.15
    p_knock_seen: float = 0.6
    p_knock_on_landing: float = 0.75
    landing_weights: tuple[float, ...] = (0.04, 0.10, 0.14, 0.16, 0.16, 0.15, 0.13, 0.12)


@dataclass(frozen=True)
class Drop:
    """A cube of ``color`` thrown, with what the detector reported."""

    color: str
    detections: tuple[Detection, ...]


@dataclass(frozen=True)
class Opening:
    """A level opened and counted: ``truth`` is ``{colour: cubes}`` lying there."""

    level: int
    truth: Mapping[str, int]


Step = Drop | Opening


def _report(rng: np.random.Generator, level: int, errors: DetectorErrors) -> tuple[int, float]:
    """A detector's (level, confidence) for a cube really resting on ``level``."""
    u = rng.random()
    if u < errors.p_exact:
        return level, float(rng.uniform(0.55, 0.98))
    off = 1 if u < errors.p_exact + errors.p_neighbour else 2
    candidates = [x for x in (level - off, level + off) if 0 <= x < N_FLOORS]
    return int(rng.choice(candidates)), float(rng.uniform(0.3, 0.75))


def simulate_session(
    rng: np.random.Generator,
    colors: Sequence[str],
    *,
    n_openings: int,
    errors: DetectorErrors | None = None,
    clues_each: int = 3,
) -> list[Step]:
    """A sequence of drops and openings like a game's, with ground truth in the openings.

    Parameters
    ----------
    rng
        Random source (seeded by the caller).
    colors
        Colours of the cubes thrown.
    n_openings
        Levels opened; after each, the cubes found and one penalty cube are thrown.
    errors
        The detector's error model.
    clues_each
        Cubes per colour thrown before the first opening.
    """
    errors = errors or DetectorErrors()
    weights = np.asarray(errors.landing_weights) / sum(errors.landing_weights)
    tower: list[list[str]] = [[] for _ in range(N_FLOORS)]
    steps: list[Step] = []
    t = 0.0

    def drop(color: str) -> None:
        nonlocal t
        t += 5.0
        level = int(rng.choice(N_FLOORS, p=weights))
        detections: list[Detection] = []
        above = [lv for lv in range(level + 1, N_FLOORS) if tower[lv]]
        if (tower[level] or above) and rng.random() < errors.p_knock:
            # mostly the cube it lands next to; now and then one it clips on the way down
            hits_here = tower[level] and (not above or rng.random() < errors.p_knock_on_landing)
            source = level if hits_here else int(rng.choice(above))
            knocked = tower[source].pop(int(rng.integers(len(tower[source]))))
            fall = int(rng.choice([1, 2, 3], p=[0.6, 0.3, 0.1]))
            target = max(0, source - fall) if source > 0 else 0
            if target == source:
                tower[source].append(knocked)
            else:
                tower[target].append(knocked)
                if rng.random() < errors.p_knock_seen:
                    reported, confidence = _report(rng, source, errors)
                    detections.append(Removal(t, reported, 1, confidence))
                if rng.random() < errors.p_knock_seen:
                    reported, confidence = _report(rng, target, errors)
                    detections.append(Landing(t + 0.2, reported, 1, confidence))
        tower[level].append(color)
        reported, confidence = _report(rng, level, errors)
        detections.insert(0, Landing(t, reported, 1, confidence))
        steps.append(Drop(color, tuple(detections)))

    for color in colors:
        for _ in range(clues_each):
            drop(color)
    for _ in range(n_openings):
        level = int(rng.integers(N_FLOORS))
        found = tower[level]
        truth = {c: found.count(c) for c in dict.fromkeys(found)}
        steps.append(Opening(level, truth))
        tower[level] = []
        for color in found:
            drop(color)
        drop(str(rng.choice(list(colors))))
    return steps


class RawDetectionTower:
    """The baseline: every thrown cube on the level its landing was reported at.

    Knock-downs are ignored (the detector cannot tell whose cube fell). A
    confirmation is reconciled the simple way: cubes found but believed
    elsewhere are taken from the nearest level, cubes believed there but not
    found are forgotten.
    """

    def __init__(self) -> None:
        self.counts: dict[str, np.ndarray] = {}

    def throw(self, color: str, detections: Sequence[Detection]) -> None:
        """Place the cube at the most confident reported landing."""
        landings = [d for d in detections if isinstance(d, Landing)]
        column = self.counts.setdefault(color, np.zeros(N_FLOORS, dtype=int))
        if landings:
            column[max(landings, key=lambda d: d.confidence).floor] += 1

    def propose(self, level: int) -> dict[str, int]:
        """Counts believed on ``level`` (zeros left out)."""
        return {c: int(v[level]) for c, v in self.counts.items() if v[level]}

    def confirm(self, level: int, found: Mapping[str, int]) -> None:
        """Take the truth: the found cubes leave the tower."""
        for color, n in found.items():
            column = self.counts.setdefault(color, np.zeros(N_FLOORS, dtype=int))
            others = sorted(range(N_FLOORS), key=lambda f: abs(f - level))[1:]
            while column[level] < n:
                source = next((f for f in others if column[f] > 0), None)
                if source is None:
                    break
                column[source] -= 1
                column[level] += 1
        for column in self.counts.values():
            column[level] = 0


@dataclass(frozen=True)
class Comparison:
    """How often each tracker proposed an opened level's contents exactly right.

    ``*_cubes_off`` add up, over all openings, |proposed - found| per colour.
    """

    openings: int
    model_right: int
    raw_right: int
    model_cubes_off: int
    raw_cubes_off: int

    @property
    def model_rate(self) -> float:
        """Share of openings the tower model got right."""
        return self.model_right / self.openings if self.openings else 0.0

    @property
    def raw_rate(self) -> float:
        """Share of openings the raw detections got right."""
        return self.raw_right / self.openings if self.openings else 0.0


def compare(
    seed: int,
    *,
    sessions: int,
    n_openings: int,
    colors: Sequence[str] = ("yellow", "blue", "gray", "white"),
    errors: DetectorErrors | None = None,
) -> Comparison:
    """Run the tower model and the raw baseline side by side over simulated sessions."""
    rng = np.random.default_rng(seed)
    openings = model_right = raw_right = model_off = raw_off = 0
    calibration = ConfidenceCalibration()
    for _ in range(sessions):
        model = TowerModel(calibration)
        raw = RawDetectionTower()
        for step in simulate_session(rng, colors, n_openings=n_openings, errors=errors):
            if isinstance(step, Drop):
                model.throw(step.color, step.detections)
                raw.throw(step.color, step.detections)
                continue
            truth = {c: n for c, n in step.truth.items() if n}
            openings += 1
            guess = raw.propose(step.level)
            raw_right += guess == truth
            raw_off += _cubes_off(guess, truth)
            raw.confirm(step.level, truth)
            proposal = model.confirm(step.level, truth)
            model_right += dict(proposal.counts) == truth
            model_off += _cubes_off(proposal.counts, truth)
    return Comparison(openings, model_right, raw_right, model_off, raw_off)


def _cubes_off(guess: Mapping[str, int], truth: Mapping[str, int]) -> int:
    return sum(abs(guess.get(c, 0) - truth.get(c, 0)) for c in {*guess, *truth})
