"""Ground truth: every event the simulated tower went through, with its time.

Each event is a small frozen dataclass; ``to_json()`` gives a dict whose
``"event"`` key names the kind and ``"t"`` is its time in simulator seconds
(docs/simulator.md, "Ground truth"). For a landing, ``t`` is when the cube
came to rest: the time a detector must report.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, ClassVar


@dataclass(frozen=True)
class TruthEvent:
    """Base of all ground-truth events; ``t`` in simulator seconds."""

    kind: ClassVar[str] = "event"
    t: float

    def to_json(self) -> dict[str, Any]:
        """The event as plain JSON types, ``{"event": kind, "t": ..., ...}``."""
        data: dict[str, Any] = {"event": self.kind}
        for f in fields(self):
            value = getattr(self, f.name)
            data[f.name] = list(value) if isinstance(value, tuple) else value
        return data


@dataclass(frozen=True)
class Throw(TruthEvent):
    """A cube entered the shaft at the top of the tower."""

    kind: ClassVar[str] = "throw"
    cube: int
    color: str
    mass_g: float


@dataclass(frozen=True)
class Strike(TruthEvent):
    """A cube hit a plate: a hole edge on its way down, or a bounce."""

    kind: ClassVar[str] = "strike"
    level: int
    cube: int
    energy_j: float
    where: str  # "edge" (hole edge, falls on), "bounce" (its resting plate), "ceiling"


@dataclass(frozen=True)
class Landing(TruthEvent):
    """A cube came to rest on a level (``t`` = at rest)."""

    kind: ClassVar[str] = "landing"
    cube: int
    color: str
    level: int
    mass_g: float
    first_impact_t: float
    via: str = "throw"  # "throw" (down the shaft) or "drop" (onto an opened plate)


@dataclass(frozen=True)
class KnockDown(TruthEvent):
    """A falling cube pushed a resting one down the hole (``t`` = it left)."""

    kind: ClassVar[str] = "knockdown"
    cube: int
    by_cube: int
    from_level: int
    to_level: int
    rest_t: float
    mass_g: float


@dataclass(frozen=True)
class Lift(TruthEvent):
    """Modules ``exposed``..7 were lifted: level ``exposed`` is open."""

    kind: ClassVar[str] = "lift"
    exposed: int


@dataclass(frozen=True)
class Removal(TruthEvent):
    """Cubes were taken out of a level by hand (``t`` = the last one left)."""

    kind: ClassVar[str] = "removal"
    level: int
    cubes: tuple[int, ...]
    times: tuple[float, ...]
    mass_g: float


@dataclass(frozen=True)
class Closed(TruthEvent):
    """The lifted modules were put back (``t`` = set down)."""

    kind: ClassVar[str] = "closed"
    exposed: int
    reconnected_t: float


@dataclass(frozen=True)
class Knock(TruthEvent):
    """Someone knocked on the table."""

    kind: ClassVar[str] = "knock"
    strength: float


@dataclass(frozen=True)
class Touch(TruthEvent):
    """A hand touched the tower near a level."""

    kind: ClassVar[str] = "touch"
    level: int
    duration_s: float


@dataclass(frozen=True)
class Talk(TruthEvent):
    """People talked next to the tower."""

    kind: ClassVar[str] = "talk"
    duration_s: float


@dataclass(frozen=True)
class MassPlaced(TruthEvent):
    """A reference mass (a coin) was put on an opened level's plate."""

    kind: ClassVar[str] = "mass_placed"
    level: int
    grams: float


@dataclass(frozen=True)
class MassRemoved(TruthEvent):
    """A reference mass was taken off a plate."""

    kind: ClassVar[str] = "mass_removed"
    level: int
    grams: float


@dataclass(frozen=True)
class CubeRecord:
    """One physical cube of the session."""

    cube: int
    color: str
    mass_g: float


@dataclass
class GroundTruth:
    """Everything that happened, plus the true constants.

    Attributes
    ----------
    events : list of TruthEvent
        In time order.
    cubes : dict
        Cube id -> :class:`CubeRecord` (true mass of every cube).
    tower, room : dict
        The true constants, as JSON (``TowerConstants.to_json()``).
    session_seed : int
    """

    events: list[TruthEvent]
    cubes: dict[int, CubeRecord]
    tower: dict[str, Any]
    room: dict[str, Any]
    session_seed: int
    extra: dict[str, Any] = field(default_factory=dict)

    def of_kind(self, kind: str) -> list[TruthEvent]:
        """The events of one kind (``"landing"``, ``"lift"``, ...)."""
        return [e for e in self.events if e.kind == kind]

    def to_json(self) -> dict[str, Any]:
        """The whole ground truth as plain JSON types (docs/simulator.md)."""
        return {
            "format": "towerear-truth/1",
            "session_seed": self.session_seed,
            "tower": self.tower,
            "room": self.room,
            "cubes": [
                {"cube": c.cube, "color": c.color, "mass_g": c.mass_g}
                for c in sorted(self.cubes.values(), key=lambda c: c.cube)
            ],
            "events": [e.to_json() for e in self.events],
            **self.extra,
        }
