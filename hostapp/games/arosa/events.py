"""The events of a Mord im Arosa game and their JSON form (contracts.md section 4).

An event is a cube thrown into the shaft (:class:`Throw`) or an investigator's
action (:class:`Inspect` in Act I, :class:`Suspect` or :class:`Cover` in
Act II). :func:`event_from_dict` reads the script form and checks only the
shape (keys and types); whether an event is legal is the engine's business.

An action may carry ``found``: what the players saw on the exposed floor,
``{colour: cubes}``. The app adds it when the players confirm or correct a
level; it is an extension of the script form, accepted only with
``extensions=True`` (journals), never in ``towerear arosa replay`` scripts.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hostapp.errors import ScriptError
from hostapp.i18n import tr


@dataclass(frozen=True)
class Throw:
    """One cube of ``color`` came to rest on ``floor``."""

    color: str
    floor: int


@dataclass(frozen=True)
class Inspect:
    """Act I: the investigator ``by`` lifts and inspects ``floor``."""

    by: str
    floor: int
    found: Mapping[str, int] | None = None


@dataclass(frozen=True)
class Suspect:
    """Act II: ``by`` suspects the players ``suspects`` and exposes ``floor``."""

    by: str
    suspects: tuple[str, ...]
    floor: int
    found: Mapping[str, int] | None = None


@dataclass(frozen=True)
class Cover:
    """Act II: ``by`` covers tracks on ``floor``, removing ``remove`` clues (None: maximum)."""

    by: str
    floor: int
    remove: int | None = None
    found: Mapping[str, int] | None = None


Action = Inspect | Suspect | Cover
Event = Throw | Action

_KEYS: dict[str, tuple[set[str], set[str]]] = {
    # kind: (required keys, optional keys), "do" included in required
    "throw": ({"do", "color", "floor"}, set()),
    "inspect": ({"do", "by", "floor"}, set()),
    "suspect": ({"do", "by", "suspects", "floor"}, set()),
    "cover": ({"do", "by", "floor"}, {"remove"}),
}


def _int(value: Any, key: str) -> int:
    # bool is an int subclass in Python; true/false is never a floor or a count
    if isinstance(value, bool) or not isinstance(value, int):
        raise ScriptError(
            tr("'{key}' must be a whole number, not {value}", key=key, value=json_repr(value))
        )
    return value


def _str(value: Any, key: str) -> str:
    if not isinstance(value, str):
        raise ScriptError(
            tr("'{key}' must be a colour name, not {value}", key=key, value=json_repr(value))
        )
    return value


def json_repr(value: Any) -> str:
    """A short printable form of a JSON value for error messages."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _found(value: Any) -> dict[str, int]:
    if not isinstance(value, dict):
        raise ScriptError(tr("'found' must map colours to cube counts"))
    counts = {_str(k, "found"): _int(v, "found") for k, v in value.items()}
    if any(n < 0 for n in counts.values()):
        raise ScriptError(tr("'found' counts cannot be negative"))
    return counts


def event_from_dict(data: Any, *, extensions: bool = False) -> Event:
    """Read one event from its script form.

    Parameters
    ----------
    data
        A decoded JSON value, e.g. ``{"do": "throw", "color": "red", "floor": 4}``.
    extensions
        Also accept the app's ``found`` key on actions (journals do; scripts don't).

    Raises
    ------
    ScriptError
        When the shape is wrong: not an object, unknown ``do``, missing or
        unknown keys, wrong types.
    """
    if not isinstance(data, dict):
        raise ScriptError(
            tr("an event must be a JSON object, not {value}", value=json_repr(data))
        )
    kind = data.get("do")
    if not isinstance(kind, str) or kind not in _KEYS:
        raise ScriptError(
            tr("'do' must be one of {known}, not {value}", known=", ".join(_KEYS),
               value=json_repr(kind))
        )
    required, optional = _KEYS[kind]
    if extensions and kind != "throw":
        optional = optional | {"found"}
    missing = sorted(required - data.keys())
    if missing:
        raise ScriptError(
            tr("a {kind} event needs the key(s) {keys}", kind=kind, keys=", ".join(missing))
        )
    unknown = sorted(data.keys() - required - optional)
    if unknown:
        raise ScriptError(
            tr("a {kind} event has unknown key(s) {keys}", kind=kind, keys=", ".join(unknown))
        )
    found = _found(data["found"]) if "found" in data and data["found"] is not None else None
    if kind == "throw":
        return Throw(color=_str(data["color"], "color"), floor=_int(data["floor"], "floor"))
    by = _str(data["by"], "by")
    floor = _int(data["floor"], "floor")
    if kind == "inspect":
        return Inspect(by=by, floor=floor, found=found)
    if kind == "suspect":
        suspects = data["suspects"]
        if not isinstance(suspects, list):
            raise ScriptError(tr("'suspects' must be a list of colours"))
        return Suspect(
            by=by,
            suspects=tuple(_str(s, "suspects") for s in suspects),
            floor=floor,
            found=found,
        )
    remove = data.get("remove")
    return Cover(
        by=by, floor=floor, remove=None if remove is None else _int(remove, "remove"), found=found
    )


def event_to_dict(event: Event) -> dict[str, Any]:
    """The script form of ``event`` (with ``found`` when the event carries it)."""
    out: dict[str, Any]
    if isinstance(event, Throw):
        return {"do": "throw", "color": event.color, "floor": event.floor}
    if isinstance(event, Inspect):
        out = {"do": "inspect", "by": event.by, "floor": event.floor}
    elif isinstance(event, Suspect):
        out = {"do": "suspect", "by": event.by, "suspects": list(event.suspects)}
        out["floor"] = event.floor
    else:
        out = {"do": "cover", "by": event.by, "floor": event.floor}
        if event.remove is not None:
            out["remove"] = event.remove
    if event.found is not None:
        out["found"] = dict(event.found)
    return out


def event_kind(event: Event) -> str:
    """The script name of the event's kind: throw, inspect, suspect or cover."""
    return {Throw: "throw", Inspect: "inspect", Suspect: "suspect", Cover: "cover"}[type(event)]
