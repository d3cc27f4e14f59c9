"""The Crime Hotel board: 27 rooms and the 39 guess spaces on its edge.

A room card's number is its room: the first digit is the floor (the card's
suit, 1-3), the last digit the column (1-9). Detectives guess on the board's
edge: a floor space covers nine rooms, a column space three, a room window one.
The fewer rooms a space covers, the more it pays (floor 2, column 5, room 10).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from hostapp.errors import IllegalMoveError
from hostapp.i18n import tr

FLOORS = (1, 2, 3)
COLUMNS = tuple(range(1, 10))
ROOMS: tuple[int, ...] = tuple(10 * floor + column for floor in FLOORS for column in COLUMNS)

SpaceKind = Literal["floor", "column", "room"]

# Points for a right guess, straight from the rule text:
# "Richtige Etage = 2 SP, Richtige Spalte = 5 SP, Richtiges Zimmer = 10 SP".
POINTS: dict[SpaceKind, int] = {"floor": 2, "column": 5, "room": 10}
_PREFIX: dict[SpaceKind, str] = {"floor": "F", "column": "C", "room": "R"}


class CrimeHotelError(IllegalMoveError):
    """A Crime Hotel entry breaks a rule or names something that does not exist."""


def floor_of(room: int) -> int:
    """The floor (suit) of a room card, 1-3."""
    return room // 10


def column_of(room: int) -> int:
    """The column of a room card, 1-9."""
    return room % 10


def check_room(value: object) -> int:
    """Return ``value`` as a room number or raise :class:`CrimeHotelError`."""
    if isinstance(value, bool) or not isinstance(value, int) or value not in ROOMS:
        raise CrimeHotelError(
            tr("{value!r} is not a room card; rooms are 11-19, 21-29 and 31-39.", value=value)
        )
    return value


@dataclass(frozen=True, order=True)
class Space:
    """One guess space on the hotel's edge.

    Attributes
    ----------
    kind
        ``"floor"`` (value 1-3), ``"column"`` (value 1-9) or ``"room"`` (value 11-39).
    value
        Which floor, column or room.
    """

    kind: SpaceKind
    value: int

    @property
    def code(self) -> str:
        """Short code used in events and typed at the keyboard: ``F2``, ``C5``, ``R23``."""
        return f"{_PREFIX[self.kind]}{self.value}"

    def covers(self, room: int) -> bool:
        """Whether the murderer being in ``room`` makes this guess right."""
        if self.kind == "floor":
            return floor_of(room) == self.value
        if self.kind == "column":
            return column_of(room) == self.value
        return room == self.value

    def points(self, murderer_room: int) -> int:
        """Points this guess earns when the murderer is in ``murderer_room``."""
        return POINTS[self.kind] if self.covers(murderer_room) else 0

    @classmethod
    def parse(cls, code: object) -> Space:
        """Read a space code (``F1``-``F3``, ``C1``-``C9``, ``R11``-``R39``, any case)."""
        text = str(code).strip().upper()
        kinds = {prefix: kind for kind, prefix in _PREFIX.items()}
        kind = kinds.get(text[:1])
        digits = text[1:]
        if kind is None or not digits.isdigit():
            raise CrimeHotelError(
                tr(
                    "{code!r} is not a guess space; write F1-F3 (floor), C1-C9 (column)"
                    " or R11-R39 (room).",
                    code=code,
                )
            )
        value = int(digits)
        valid = {"floor": FLOORS, "column": COLUMNS, "room": ROOMS}[kind]
        if value not in valid:
            raise CrimeHotelError(tr("{code!r} is not on the board.", code=code))
        return cls(kind, value)


ALL_SPACES: tuple[Space, ...] = (
    tuple(Space("floor", f) for f in FLOORS)
    + tuple(Space("column", c) for c in COLUMNS)
    + tuple(Space("room", r) for r in ROOMS)
)
