"""Scoring detected events against ground truth.

Both sides are plain JSON objects: detections as ``towerear detect`` prints
them (contracts.md section 3), truth as the simulator writes it
(docs/simulator.md: ``landing`` with ``level``, ``t`` = at rest and
``first_impact_t``; ``knockdown`` with ``from_level``, ``to_level`` and
``rest_t``; ``lift``, ``removal``, ``closed``). Nothing here depends on how
either side was produced, so recordings of any simulator can be scored.

Matching is one-to-one and greedy in time order: a truth landing is matched
to a detected landing (a detection of ``n`` cubes can match ``n`` truth
landings) whose ``t`` lies in ``[first_impact - early_s, t + late_s]``;
same-floor candidates first, then any floor (a wrong level).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

N_LEVELS = 8
# Why 0.3 s early: a detector may time a landing by the cube's last bounce,
# which is up to a few hundred ms before it rests.
DEFAULT_EARLY_S = 0.3
# Why 1 s late: far beyond any useful timing error, short enough that two
# throws 0.3-0.8 s apart still pair with the right detections (the same-floor
# pass runs first).
DEFAULT_LATE_S = 1.0


@dataclass(frozen=True)
class ExpectedLanding:
    """A cube that came to rest, from the truth."""

    t: float
    window_start: float
    level: int
    knocked: bool
    knocked_another: bool = False
    """A thrown cube that knocked a resting one down in its drop."""


@dataclass
class LandingScore:
    """Landing statistics of one recording (or several, added up).

    Attributes
    ----------
    expected, level_right, level_wrong, missed, false : int
        Counts of truth landings, matched on the right or a wrong floor,
        unmatched truth landings, unmatched detected cubes.
    cubes_checked, cubes_right : int
        Detections that matched truth, and those whose ``cubes`` equals the
        number of truth landings matched to them.
    thrown_expected, thrown_right : int
        The same for thrown cubes only (not knocked-down ones).
    plain_expected, plain_right : int
        The same for thrown cubes that knocked none down: where a cube stops
        on the level it knocks another from, that level's load does not
        change, and only the acoustics could tell.
    latencies_s : list of float
        ``t_decided - t_truth`` of every right-floor match.
    confusion : ndarray, shape (8, 9)
        Row: true floor; columns 0..7 detected floor, column 8 missed.
    false_by_floor : ndarray, shape (8,)
        False landings by detected floor.
    duration_s : float
        Length of the recordings scored.
    """

    expected: int = 0
    level_right: int = 0
    level_wrong: int = 0
    missed: int = 0
    false: int = 0
    cubes_checked: int = 0
    cubes_right: int = 0
    thrown_expected: int = 0
    thrown_right: int = 0
    plain_expected: int = 0
    plain_right: int = 0
    latencies_s: list[float] = field(default_factory=list)
    confusion: np.ndarray = field(default_factory=lambda: np.zeros((N_LEVELS, N_LEVELS + 1), int))
    false_by_floor: np.ndarray = field(default_factory=lambda: np.zeros(N_LEVELS, int))
    duration_s: float = 0.0

    def add(self, other: LandingScore) -> None:
        """Accumulate another score into this one."""
        for name in (
            "expected", "level_right", "level_wrong", "missed", "false",
            "cubes_checked", "cubes_right", "thrown_expected", "thrown_right",
            "plain_expected", "plain_right",
        ):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.latencies_s.extend(other.latencies_s)
        self.confusion = self.confusion + other.confusion
        self.false_by_floor = self.false_by_floor + other.false_by_floor
        self.duration_s += other.duration_s

    def summary(self) -> dict[str, float]:
        """The headline numbers (fractions 0..1, latencies in seconds, rates per hour)."""
        lat = np.asarray(self.latencies_s)
        hours = self.duration_s / 3600.0
        return {
            "landings": float(self.expected),
            "level_right": _ratio(self.level_right, self.expected),
            "thrown_level_right": _ratio(self.thrown_right, self.thrown_expected),
            "plain_level_right": _ratio(self.plain_right, self.plain_expected),
            "missed": _ratio(self.missed, self.expected),
            "false_per_hour": self.false / hours if hours > 0 else float("nan"),
            "false": float(self.false),
            "cubes_right": _ratio(self.cubes_right, self.cubes_checked),
            "latency_median_s": float(np.median(lat)) if lat.size else float("nan"),
            "latency_p95_s": float(np.percentile(lat, 95)) if lat.size else float("nan"),
            "hours": hours,
        }


def _ratio(a: int, b: int) -> float:
    return a / b if b else float("nan")


def expected_landings(truth_events: Sequence[Mapping[str, Any]]) -> list[ExpectedLanding]:
    """Every cube coming to rest in the truth: thrown (``landing``) and knocked down."""
    out: list[ExpectedLanding] = []
    knockers = [
        (e.get("by_cube"), float(e["t"])) for e in truth_events if e.get("event") == "knockdown"
    ]
    for e in truth_events:
        if e.get("event") == "landing":
            first = float(e.get("first_impact_t", e["t"]))
            knocked_another = any(
                cube is not None and cube == e.get("cube") and first - 0.5 <= t <= float(e["t"])
                for cube, t in knockers
            )
            out.append(
                ExpectedLanding(float(e["t"]), first, int(e["level"]), False, knocked_another)
            )
        elif e.get("event") == "knockdown":
            out.append(
                ExpectedLanding(float(e["rest_t"]), float(e["t"]), int(e["to_level"]), True)
            )
    out.sort(key=lambda x: x.t)
    return out


def score_landings(
    truth_events: Sequence[Mapping[str, Any]],
    detected: Sequence[Mapping[str, Any]],
    *,
    duration_s: float,
    early_s: float = DEFAULT_EARLY_S,
    late_s: float = DEFAULT_LATE_S,
    ignore_spans: Sequence[tuple[float, float]] = (),
) -> LandingScore:
    """Match detected landings to the truth and count.

    Parameters
    ----------
    truth_events : sequence of dict
        Ground-truth events (simulator JSON).
    detected : sequence of dict
        Detected events (``towerear detect`` JSON); only landings are used.
    duration_s : float
        Length of the recording (for false landings per hour).
    early_s, late_s : float
        Matching window around each truth landing.
    ignore_spans : sequence of (start, end)
        Stream-time spans (damaged stretches) whose truth and detections are
        left out of the score.

    Returns
    -------
    LandingScore
    """

    def ignored(t: float) -> bool:
        return any(a <= t <= b for a, b in ignore_spans)

    expected = [x for x in expected_landings(truth_events) if not ignored(x.t)]
    landings = [
        d for d in detected if d.get("event") == "landing" and not ignored(float(d["t"]))
    ]
    units: list[tuple[int, float, int, float]] = []  # (detection index, t, floor, t_decided)
    for i, d in enumerate(landings):
        for _ in range(max(1, int(d.get("cubes", 1)))):
            units.append((i, float(d["t"]), int(d["floor"]), float(d["t_decided"])))
    taken = [False] * len(units)
    matched_to: dict[int, list[ExpectedLanding]] = {}
    score = LandingScore(duration_s=duration_s)
    assignment: list[int | None] = [None] * len(expected)
    # Closest pairs first, on the same floor before any floor: taken in
    # truth order instead, a cube that stopped where the next one landed
    # 0.6 s later took that landing, and the next cube lost its own.
    for same_floor in (True, False):
        pairs = sorted(
            (abs(t - x.t), k, u)
            for k, x in enumerate(expected)
            if assignment[k] is None
            for u, (_, t, floor, _) in enumerate(units)
            if not taken[u]
            and x.window_start - early_s <= t <= x.t + late_s
            and (floor == x.level or not same_floor)
        )
        for _, k, u in pairs:
            if assignment[k] is None and not taken[u]:
                taken[u] = True
                assignment[k] = u
    for k, x in enumerate(expected):
        score.expected += 1
        score.thrown_expected += 0 if x.knocked else 1
        plain = not x.knocked and not x.knocked_another
        score.plain_expected += int(plain)
        chosen = assignment[k]
        if chosen is None:
            score.missed += 1
            score.confusion[x.level, N_LEVELS] += 1
            continue
        det_index, _, floor, t_decided = units[chosen]
        matched_to.setdefault(det_index, []).append(x)
        score.confusion[x.level, floor] += 1
        if floor == x.level:
            score.level_right += 1
            score.thrown_right += 0 if x.knocked else 1
            score.plain_right += int(plain)
            score.latencies_s.append(t_decided - x.t)
        else:
            score.level_wrong += 1
    for u, (_, _, floor, _) in enumerate(units):
        if not taken[u]:
            score.false += 1
            score.false_by_floor[floor] += 1
    for det_index, xs in matched_to.items():
        score.cubes_checked += 1
        if int(landings[det_index].get("cubes", 1)) == len(xs):
            score.cubes_right += 1
    return score


@dataclass
class OtherScore:
    """Lifts, closures and removals: found with the right floor / count, missed, false."""

    lifts: int = 0
    lifts_right: int = 0
    closed: int = 0
    closed_found: int = 0
    removals: int = 0
    removals_right: int = 0
    false_lifts: int = 0
    false_removals: int = 0
    disturbances_reported: int = 0

    def add(self, other: OtherScore) -> None:
        """Accumulate another score into this one."""
        for name in vars(self):
            setattr(self, name, getattr(self, name) + getattr(other, name))


def score_other_events(
    truth_events: Sequence[Mapping[str, Any]],
    detected: Sequence[Mapping[str, Any]],
    *,
    tolerance_s: float = 1.5,
) -> OtherScore:
    """Score lifts (``exposed``), closures and hand removals (floor and cubes)."""
    score = OtherScore()
    lifts = [d for d in detected if d.get("event") == "lift"]
    closes = [d for d in detected if d.get("event") == "closed"]
    removals = [d for d in detected if d.get("event") == "removal" and not d.get("knocked")]
    used_l: set[int] = set()
    used_c: set[int] = set()
    used_r: set[int] = set()
    for e in truth_events:
        kind = e.get("event")
        t = float(e.get("t", 0.0))
        if kind == "lift":
            score.lifts += 1
            i = _nearest(lifts, t, tolerance_s, used_l)
            if i is not None and int(lifts[i]["exposed"]) == int(e["exposed"]):
                score.lifts_right += 1
        elif kind == "closed":
            score.closed += 1
            t_on = float(e.get("reconnected_t", t))
            i = _nearest(closes, t_on, tolerance_s, used_c)
            if i is not None:
                score.closed_found += 1
        elif kind == "removal":
            score.removals += 1
            i = _nearest(removals, t, tolerance_s + 1.0, used_r)
            n = len(e.get("cubes", ())) or 1
            if i is not None and int(removals[i]["floor"]) == int(e["level"]):
                if int(removals[i]["cubes"]) == n:
                    score.removals_right += 1
    score.false_lifts = len(lifts) - len(used_l)
    score.false_removals = len(removals) - len(used_r)
    score.disturbances_reported = sum(1 for d in detected if d.get("event") == "disturbance")
    return score


def _nearest(
    events: Sequence[Mapping[str, Any]], t: float, tolerance_s: float, used: set[int]
) -> int | None:
    best, best_dt = None, tolerance_s
    for i, d in enumerate(events):
        if i in used:
            continue
        dt = abs(float(d["t"]) - t)
        if dt <= best_dt:
            best, best_dt = i, dt
    if best is not None:
        used.add(best)
    return best
