"""What the app believes lies on each level of the tower, per colour, with its uncertainty.

Every cube in the tower is tracked on its own, with a probability for each of
the eight levels. The app tells the model which colour it asked for, and
hands it the detections of that drop:

- the thrown cube's landing gives its distribution: the reported level with
  the detector's confidence, the rest spread over nearby levels (detectors
  err to neighbours); ``floor_probabilities`` replaces that guess when the
  detector supplies it;
- a removal on one level with a landing lower down in the same drop is a
  knocked-down cube: the resting cubes on that level share the chance of
  being the one that fell, each in proportion to how likely it was there;
- a knock-down whose removal or landing was missed leaves a cube believed
  where it no longer is; the first confirmation that does not find it moves
  its belief elsewhere, lower levels first.

When a level is opened, :meth:`TowerModel.propose` gives the most probable
count per colour for the confirmation panel. :meth:`TowerModel.confirm`
takes the players' answer as the truth: the cubes found are the ones most
likely there; cubes of that colour not found cannot be on that level, and
their belief moves to the other levels. The model scores each proposal
against the confirmed truth (:attr:`TowerModel.accuracy`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hostapp.games.arosa.rules import N_FLOORS

# How a detector's error falls off with distance in levels. A cube that
# clips a hole edge usually rests one level off; two off is rare, more is noise.
_ERROR_BY_DISTANCE = np.array([0.0, 1.0, 0.25, 0.05, 0.02, 0.01, 0.01, 0.01])

# Chance that a removal the detector reports did not happen (a hand, a knock).
_SPURIOUS_REMOVAL = 0.1

# Where a cube went that was believed on a level but not found there: a
# missed knock-down sends it lower, a misheard landing one level either way.
_DISPLACED_BELOW = np.array([0.0, 1.0, 0.5, 0.25, 0.12, 0.06, 0.03, 0.02])
_DISPLACED_ABOVE = np.array([0.0, 0.6, 0.15, 0.04, 0.02, 0.01, 0.01, 0.01])

_LEVELS = np.arange(N_FLOORS)


@dataclass(frozen=True)
class Landing:
    """A detected landing (contracts.md section 3 keys).

    Attributes
    ----------
    t
        Stream time of rest, seconds.
    floor
        The level the detector chose, 0..7.
    cubes
        Cubes that came to rest there at once.
    confidence
        The detector's confidence in ``floor``, 0..1.
    floor_probabilities
        Optional probability for each level (length 8), when the detector has them.
    maybe_stopped_on
        A level above where the thrown cube may have stopped instead, knocking
        a resting cube down to ``floor`` (a cube rests on ``floor`` either way).
    stop_chance
        The chance of that: the share of such suspicions that were stops.
    """

    t: float
    floor: int
    cubes: int = 1
    confidence: float = 1.0
    floor_probabilities: Sequence[float] | None = None
    maybe_stopped_on: int | None = None
    stop_chance: float = 0.0


@dataclass(frozen=True)
class Removal:
    """Detected cubes leaving a level (``floor``), e.g. knocked down by a falling one."""

    t: float
    floor: int
    cubes: int = 1
    confidence: float = 1.0


Detection = Landing | Removal


def detection_from_json(data: Mapping[str, Any]) -> Detection | None:
    """A landing or removal from a ``towerear detect`` line; None for other events."""
    kind = data.get("event")
    if kind == "landing":
        return Landing(
            t=float(data["t"]),
            floor=int(data["floor"]),
            cubes=int(data.get("cubes", 1)),
            confidence=float(data.get("confidence", 1.0)),
            floor_probabilities=data.get("floor_probabilities"),
            maybe_stopped_on=(
                None if data.get("maybe_stopped_on") is None else int(data["maybe_stopped_on"])
            ),
            stop_chance=float(data.get("stop_chance", 0.0)),
        )
    if kind == "removal":
        return Removal(
            t=float(data["t"]),
            floor=int(data["floor"]),
            cubes=int(data.get("cubes", 1)),
            confidence=float(data.get("confidence", 1.0)),
        )
    return None


def _at(level: int) -> np.ndarray:
    """All the probability on ``level``; shape (8,)."""
    out = np.zeros(N_FLOORS)
    out[level] = 1.0
    return out


def level_likelihood(floor: int, confidence: float) -> np.ndarray:
    """Probability of each level given a report of ``floor`` with ``confidence``; shape (8,)."""
    q = float(np.clip(confidence, 0.05, 0.999))
    spread = _ERROR_BY_DISTANCE[np.abs(_LEVELS - floor)]
    spread = spread / spread.sum()
    out = (1.0 - q) * spread
    out[floor] = q
    return out


class ConfidenceCalibration:
    """How often the detector was right, by its stated confidence, learnt from confirmations.

    A detector's confidence is a score, not a probability. Each confirmed
    cube whose landing was reported tells whether the report was right;
    per confidence band the model keeps that record, starting from the
    stated confidence as a prior worth a few cubes.
    """

    EDGES = np.array([0.0, 0.4, 0.55, 0.7, 0.85, 1.0001])
    PRIOR_CUBES = 4.0  # a handful of confirmations outweigh the detector's own claim

    def __init__(self) -> None:
        self.right = np.zeros(len(self.EDGES) - 1)
        self.total = np.zeros(len(self.EDGES) - 1)

    def _band(self, confidence: float) -> int:
        return int(np.clip(np.searchsorted(self.EDGES, confidence, side="right") - 1, 0, 4))

    def probability_right(self, confidence: float) -> float:
        """The calibrated probability that a report with this confidence is right."""
        band = self._band(confidence)
        prior = self.PRIOR_CUBES * confidence
        return float((self.right[band] + prior) / (self.total[band] + self.PRIOR_CUBES))

    def record(self, confidence: float, right: bool) -> None:
        """One confirmed report."""
        band = self._band(confidence)
        self.total[band] += 1
        self.right[band] += right


class StopCalibration:
    """How often this tower's suspected stops were stops, learnt from confirmations.

    A landing may come with the suspicion that its thrown cube stopped on a
    level above instead (``Landing.maybe_stopped_on``), at the detector's
    ``stop_chance``: the share measured over many towers. Whether stops can
    be told depends on the tower, so each suspected cube found on one of its
    two levels tells which story held, and the chance moves towards this
    tower's share, from the detector's as a prior worth a few cubes.
    """

    PRIOR_CUBES = 4.0

    def __init__(self) -> None:
        self.stopped = 0
        self.judged = 0

    def chance(self, prior: float) -> float:
        """The chance that a suspected stop was one, given the detector's ``prior``."""
        return (self.stopped + self.PRIOR_CUBES * prior) / (self.judged + self.PRIOR_CUBES)

    def record(self, stopped: bool) -> None:
        """A suspected cube was found on the level it may have stopped on (or on its own)."""
        self.judged += 1
        self.stopped += stopped


def _displacement(level: int) -> np.ndarray:
    """Where a cube not found on ``level`` probably is; shape (8,), sums to 1."""
    distance = _LEVELS - level
    weights = np.where(
        distance < 0,
        _DISPLACED_BELOW[np.abs(distance)],
        _DISPLACED_ABOVE[np.abs(distance)],
    )
    return weights / weights.sum()


def count_distribution(probabilities: Iterable[float]) -> np.ndarray:
    """Distribution of how many of independent cubes lie somewhere (Poisson binomial).

    Parameters
    ----------
    probabilities
        Each cube's probability of lying on the level.

    Returns
    -------
    numpy.ndarray
        ``out[n]`` = probability that exactly ``n`` of them lie there.
    """
    dist = np.array([1.0])
    for p in probabilities:
        dist = np.append(dist * (1.0 - p), 0.0) + np.append(0.0, dist * p)
    return dist


@dataclass(frozen=True)
class Proposal:
    """What the model expects on an opened level.

    Attributes
    ----------
    level
        The opened level.
    counts
        ``{colour: cubes}``, the most probable count per colour (zeros left out).
    certainty
        ``{colour: probability}`` that the proposed count of that colour is
        right, for every colour with cubes in the tower.
    expected
        ``{colour: expected cubes}`` on the level.
    """

    level: int
    counts: Mapping[str, int]
    certainty: Mapping[str, float]
    expected: Mapping[str, float]

    @property
    def probability(self) -> float:
        """Probability that the whole proposal is right (colours taken as independent)."""
        return float(np.prod(list(self.certainty.values()))) if self.certainty else 1.0


@dataclass
class Accuracy:
    """The model's record against confirmed levels.

    Attributes
    ----------
    levels_checked
        Levels confirmed by the players.
    levels_right
        Of those, levels whose proposal matched in every colour.
    cubes_off
        Sum over confirmations of |proposed - found| per colour.
    """

    levels_checked: int = 0
    levels_right: int = 0
    cubes_off: int = 0

    @property
    def rate(self) -> float:
        """Share of proposals that were exactly right (0 before any confirmation)."""
        return self.levels_right / self.levels_checked if self.levels_checked else 0.0


@dataclass
class _Cube:
    color: str
    p: np.ndarray = field(repr=False)
    report: Landing | None = None  # the landing it was thrown with, to learn calibration
    # The chance given to the story that it stopped on ``report.maybe_stopped_on``,
    # and how far that story moved each cube resting there towards the landing.
    stop_share: float = 0.0
    stop_moves: list[tuple[_Cube, float]] = field(default_factory=list, repr=False)


class TowerModel:
    """The app's belief about the tower: one probability vector per cube.

    Feed it each drop with :meth:`throw`, the opened level's truth with
    :meth:`confirm`; ask :meth:`propose` and :meth:`expected_counts`.

    Parameters
    ----------
    calibration
        The detector's confidence record to start from (and keep adding to);
        the app keeps one per sensor setup. A fresh one when None.
    """

    def __init__(self, calibration: ConfidenceCalibration | None = None) -> None:
        self._cubes: list[_Cube] = []
        self.accuracy = Accuracy()
        # shared between games when given: the detector's habits outlive a game
        self.calibration = calibration if calibration is not None else ConfidenceCalibration()
        self.stop_calibration = StopCalibration()
        self.open_level: int | None = None
        self.unexplained_cubes = 0
        """Cubes confirmed that the model never saw thrown (manual play, missed prompts)."""

    # -- drops -----------------------------------------------------------

    def throw(self, color: str, detections: Sequence[Detection]) -> np.ndarray:
        """Take in one drop of a ``color`` cube and what the detectors saw meanwhile.

        Parameters
        ----------
        color
            The colour the app asked for (from the engine's throw queue).
        detections
            Landings and removals decided between the prompt and the next one.

        Returns
        -------
        numpy.ndarray
            The thrown cube's probability per level, shape (8,).
        """
        slots: list[tuple[np.ndarray, Landing]] = []
        for landing in (d for d in detections if isinstance(d, Landing)):
            slots += [(self._landing_distribution(landing), landing)] * max(1, landing.cubes)
        removals = [d for d in detections if isinstance(d, Removal)]
        # A knocked cube ends lower than the cube that hit it, so the highest
        # landing is taken as the thrown cube, the rest as knocked ones.
        slots.sort(key=lambda slot: -float(slot[0] @ _LEVELS))
        thrown = slots[0][0] if slots else np.full(N_FLOORS, 1.0 / N_FLOORS)
        knocked_landings = [p for p, _ in slots[1:]]
        sources = [
            level_likelihood(r.floor, self.calibration.probability_right(r.confidence))
            for r in removals
            for _ in range(max(1, r.cubes))
        ]
        sources.sort(key=lambda s: -float(s @ _LEVELS))
        for i in range(max(len(sources), len(knocked_landings))):
            source = sources[i] if i < len(sources) else None
            target = knocked_landings[i] if i < len(knocked_landings) else None
            self._knock_down(source, target)
        cube = _Cube(color, thrown, slots[0][1] if slots else None)
        if slots and self._stop_suspected(slots[0][1]):
            cube.stop_share = self.stop_calibration.chance(slots[0][1].stop_chance)
            cube.p, cube.stop_moves = self._suspected_stop(slots[0][1], thrown, cube.stop_share)
        self._cubes.append(cube)
        return cube.p.copy()

    def stop_weighed(self, floor: int, below: int, confidence: float) -> bool:
        """The detector weighed a suspected stop: the thrown cube stayed on ``floor``.

        The latest cube whose landing on ``below`` carried the suspicion that
        it stopped on ``floor`` is believed there (with ``confidence``), and
        one of the cubes resting on ``floor`` to have fallen to ``below``:
        the story that had only the suspicion's chance now has all of it.

        Returns
        -------
        bool
            False when no such cube is in the tower (it was opened since).
        """
        cube = next((
            c for c in reversed(self._cubes)
            if c.report is not None and c.report.maybe_stopped_on == floor
            and c.report.floor == below and self._stop_suspected(c.report)
        ), None)
        if cube is None or cube.report is None:
            return False
        report = cube.report
        # Each cube resting there was moved towards ``below`` by the
        # suspicion's share of the move a knock-down makes: now by all of it.
        landing = _at(below)
        for other, moved in cube.stop_moves:
            whole = min(1.0, moved / cube.stop_share) if cube.stop_share > 0 else 0.0
            if any(other is c for c in self._cubes) and moved < 1.0:
                more = 1.0 - (1.0 - whole) / (1.0 - moved)
                other.p = (1.0 - more) * other.p + more * landing
        told = Landing(report.t, floor, 1, confidence)
        cube.p = self._landing_distribution(told)
        cube.report, cube.stop_share, cube.stop_moves = told, 0.0, []
        return True

    @staticmethod
    def _stop_suspected(landing: Landing) -> bool:
        above = landing.maybe_stopped_on
        return (
            above is not None and landing.floor < above < N_FLOORS and landing.cubes == 1
            and 0.0 < landing.stop_chance <= 1.0
        )

    def _suspected_stop(
        self, landing: Landing, thrown: np.ndarray, chance: float
    ) -> tuple[np.ndarray, list[tuple[_Cube, float]]]:
        """Both stories of a landing whose thrown cube may have stopped above.

        Either the thrown cube rests where it was reported, or (with the
        landing's ``stop_chance``, as this tower's confirmations bear it out:
        :class:`StopCalibration`: ``chance``) it stopped on ``maybe_stopped_on``
        and one of the cubes resting there fell to the reported level.

        Returns the thrown cube's distribution and how far each resting cube
        was moved (:meth:`_knock_down`).
        """
        assert landing.maybe_stopped_on is not None
        moves = self._knock_down(_at(landing.maybe_stopped_on), _at(landing.floor), share=chance)
        return (1.0 - chance) * thrown + chance * _at(landing.maybe_stopped_on), moves

    def _landing_distribution(self, landing: Landing) -> np.ndarray:
        if landing.floor_probabilities is not None:
            probs = np.clip(np.asarray(landing.floor_probabilities, dtype=float), 0.0, None)
            if probs.shape == (N_FLOORS,) and probs.sum() > 0:
                return probs / probs.sum()
        return level_likelihood(
            landing.floor, self.calibration.probability_right(landing.confidence)
        )

    def _knock_down(
        self, source: np.ndarray | None, landing: np.ndarray | None, *, share: float = 1.0
    ) -> list[tuple[_Cube, float]]:
        """Move one resting cube from ``source`` (a distribution) to ``landing``.

        ``share``: the chance that it happened at all. Returns each cube with
        the share of its belief moved to ``landing``.
        """
        if source is None:
            # landing seen, removal missed: the cube came from somewhere above it
            assert landing is not None
            mean = float(landing @ _LEVELS)
            source = np.where(_LEVELS > mean, 1.0, 0.0)
            if source.sum() == 0:
                return []
            source = source / source.sum()
        if landing is None:
            # removal seen, landing missed: it fell to some lower level
            gap = int(round(float(source @ _LEVELS))) - _LEVELS
            below = np.where(gap > 0, _DISPLACED_BELOW[np.clip(gap, 0, N_FLOORS - 1)], 0.0)
            if below.sum() == 0:
                return []
            landing = below / below.sum()
        weights = np.array([float(c.p @ source) for c in self._cubes])
        total = weights.sum() + _SPURIOUS_REMOVAL
        moves = []
        for cube, weight in zip(self._cubes, weights, strict=True):
            w = share * weight / total
            cube.p = (1.0 - w) * cube.p + w * landing
            moves.append((cube, w))
        return moves

    # -- opening a level -------------------------------------------------

    def lift(self, exposed: int) -> Proposal:
        """The tower was opened at ``exposed``; returns the proposal for that level."""
        self.open_level = exposed
        return self.propose(exposed)

    def closed(self) -> None:
        """The tower is closed again."""
        self.open_level = None

    def colors(self) -> list[str]:
        """Colours with cubes in the tower, in first-seen order."""
        return list(dict.fromkeys(c.color for c in self._cubes))

    def expected_counts(self) -> dict[str, np.ndarray]:
        """``{colour: expected cubes per level}`` (each an array of shape (8,))."""
        out: dict[str, np.ndarray] = {}
        for cube in self._cubes:
            out[cube.color] = out.get(cube.color, np.zeros(N_FLOORS)) + cube.p
        return out

    def propose(self, level: int) -> Proposal:
        """The most probable contents of ``level``, per colour, with their certainty."""
        counts: dict[str, int] = {}
        certainty: dict[str, float] = {}
        expected: dict[str, float] = {}
        for color in self.colors():
            probs = [float(c.p[level]) for c in self._cubes if c.color == color]
            dist = count_distribution(probs)
            n = int(np.argmax(dist))
            if n:
                counts[color] = n
            certainty[color] = float(dist[n])
            expected[color] = float(sum(probs))
        return Proposal(level, counts, certainty, expected)

    def confirm(self, level: int, found: Mapping[str, int], *, take_out: bool = True) -> Proposal:
        """The players' count of ``level`` is the truth; learn from it.

        Parameters
        ----------
        level
            The opened level.
        found
            ``{colour: cubes}`` actually there (colours left out: none).
        take_out
            The cubes are taken out (to be thrown back or put on the sheet);
            the model forgets them. False keeps them, known to lie on ``level``.

        Returns
        -------
        Proposal
            What the model had proposed, scored into :attr:`accuracy`.
        """
        proposal = self.propose(level)
        colors = set(self.colors()) | {c for c, n in found.items() if n}
        off = sum(abs(proposal.counts.get(c, 0) - found.get(c, 0)) for c in colors)
        self.accuracy.levels_checked += 1
        self.accuracy.levels_right += off == 0
        self.accuracy.cubes_off += off
        for color in colors:
            self._settle(level, color, found.get(color, 0), take_out)
        return proposal

    def _settle(self, level: int, color: str, n: int, take_out: bool) -> None:
        mine = [c for c in self._cubes if c.color == color]
        mine.sort(key=lambda c: -float(c.p[level]))
        here, elsewhere = mine[:n], mine[n:]
        self.unexplained_cubes += max(0, n - len(mine))
        # each report is judged once: by where its cube was found, or by its
        # cube missing from the level it named
        for cube in here:
            if cube.report is not None:
                self.calibration.record(cube.report.confidence, cube.report.floor == level)
                if self._stop_suspected(cube.report) and level in (
                    cube.report.floor, cube.report.maybe_stopped_on
                ):
                    self.stop_calibration.record(level == cube.report.maybe_stopped_on)
                cube.report = None
        for cube in elsewhere:
            if cube.report is not None and cube.report.floor == level:
                self.calibration.record(cube.report.confidence, False)
                cube.report = None
            # Not found here, so it lies elsewhere. The belief it had here moves
            # the way a misheard or knocked-down cube goes: near, and lower first.
            moved = cube.p[level]
            cube.p = cube.p.copy()
            cube.p[level] = 0.0
            cube.p += moved * _displacement(level)
            cube.p /= cube.p.sum()
        if take_out:
            self._cubes = [c for c in self._cubes if not any(c is h for h in here)]
        else:
            for cube in here:
                cube.p = _at(level)
            for _ in range(max(0, n - len(mine))):
                self._cubes.append(_Cube(color, _at(level)))


def most_likely_level(probabilities: np.ndarray) -> int:
    """The level to report to the engine (a ``Throw``) for a cube with this distribution."""
    return int(np.argmax(probabilities))
