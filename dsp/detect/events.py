"""Detection events: what the pipeline tells the world (contracts.md section 3).

Each event is a small frozen dataclass; :meth:`to_json` gives exactly the
contract's keys (plus, where noted, extra keys that the contract allows).
Times are stream seconds: ``t`` is when the thing happened (the cube came to
rest, the cubes left the floor, the tower opened or closed), ``t_decided``
when the pipeline had seen enough data to say so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: Times are printed to the microsecond the device clock resolves; more
#: digits would only be float noise.
_TIME_DECIMALS = 6


def _time(value: float) -> float:
    return round(float(value), _TIME_DECIMALS)


@dataclass(frozen=True)
class Landing:
    """Cubes came to rest on ``floor`` (0 = ground floor .. 7).

    ``source`` says which evidence decided the floor: ``"load"`` (a lasting
    load step) or ``"acoustic"`` (piezo only, when no load channel can tell).
    ``knocked_from`` is the floor a resting cube was knocked down from when
    this landing is the end of a knock-down, else ``None``.
    ``maybe_stopped_on`` is an occupied floor above whose plate swung as if
    the thrown cube stopped there and knocked this cube down, with that
    floor's load unchanged (one came, one left). It is a suspicion, not a
    landing: on most towers a cube passing a plate swings it the same way
    (docs/detection.md, "Stops are suspected, not reported"). A cube came to
    rest on ``floor`` either way, so ``confidence`` is not lowered; the
    chance that it was the knocked one goes out as ``stop_chance``.
    ``knocked_down_to`` is set on a landing told later than a suspected one
    below (the one with ``maybe_stopped_on`` this floor): its plate, once
    still, weighed another cube than before, so the thrown cube stopped
    here and the cube told on ``knocked_down_to`` was the one it knocked
    down. The load here did not change (one came, one left); no removal
    goes with it.
    """

    t: float
    t_decided: float
    floor: int
    cubes: int
    confidence: float
    source: str = "load"
    knocked_from: int | None = None
    maybe_stopped_on: int | None = None
    stop_chance: float = 0.0
    knocked_down_to: int | None = None

    def to_json(self) -> dict[str, Any]:
        """The contract's keys (``event, t, t_decided, floor, cubes, confidence``) plus extras."""
        out: dict[str, Any] = {
            "event": "landing",
            "t": _time(self.t),
            "t_decided": _time(self.t_decided),
            "floor": int(self.floor),
            "cubes": int(self.cubes),
            "confidence": round(float(self.confidence), 3),
            "source": self.source,
        }
        if self.knocked_from is not None:
            out["knocked_from"] = int(self.knocked_from)
        if self.maybe_stopped_on is not None:
            out["maybe_stopped_on"] = int(self.maybe_stopped_on)
            out["stop_chance"] = round(float(self.stop_chance), 3)
        if self.knocked_down_to is not None:
            out["knocked_down_to"] = int(self.knocked_down_to)
        return out


@dataclass(frozen=True)
class Removal:
    """Cubes left ``floor``: taken by hand while it was open, or knocked down."""

    t: float
    t_decided: float
    floor: int
    cubes: int
    confidence: float
    knocked: bool = False

    def to_json(self) -> dict[str, Any]:
        """The contract's keys plus ``knocked`` (true when a falling cube knocked them down)."""
        return {
            "event": "removal",
            "t": _time(self.t),
            "t_decided": _time(self.t_decided),
            "floor": int(self.floor),
            "cubes": int(self.cubes),
            "confidence": round(float(self.confidence), 3),
            "knocked": bool(self.knocked),
        }


@dataclass(frozen=True)
class Lift:
    """Modules above ``exposed`` were lifted off: level ``exposed`` lies open."""

    t: float
    t_decided: float
    exposed: int

    def to_json(self) -> dict[str, Any]:
        """The contract's keys: ``event, t, t_decided, exposed``."""
        return {
            "event": "lift",
            "t": _time(self.t),
            "t_decided": _time(self.t_decided),
            "exposed": int(self.exposed),
        }


@dataclass(frozen=True)
class Closed:
    """Every lifted module is back on the tower."""

    t: float
    t_decided: float

    def to_json(self) -> dict[str, Any]:
        """The contract's keys: ``event, t, t_decided``."""
        return {"event": "closed", "t": _time(self.t), "t_decided": _time(self.t_decided)}


@dataclass(frozen=True)
class Disturbance:
    """Something shook the whole tower (a table knock, a hand): never a landing."""

    t: float
    t_decided: float

    def to_json(self) -> dict[str, Any]:
        """The contract's keys: ``event, t, t_decided``."""
        return {"event": "disturbance", "t": _time(self.t), "t_decided": _time(self.t_decided)}


Event = Landing | Removal | Lift | Closed | Disturbance
