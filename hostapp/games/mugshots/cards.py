"""Mugshot cards, their four clue types and the ink-blot rule for names.

"Auf jedem Fahndungsfoto gibt es vier unterschiedliche Hinweisarten": the
animal, the background's pattern, the background's colour (five values each)
and a name (one of seven). A card's name may be partly covered by an ink blot:
"Hier genügt es dann, wenn der sichtbare Teil eine Übereinstimmung darstellt."
A name as shown on a card is written with ``*`` for the blotted part
(``"Ro*"``). Two shown names match when some name of the name book fits what
is visible on both cards; see docs/rules-mugshots.md.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal

from hostapp.errors import IllegalMoveError
from hostapp.i18n import tr

ClueType = Literal["animal", "pattern", "colour", "name"]
CLUE_TYPES: tuple[ClueType, ...] = ("animal", "pattern", "colour", "name")
ANIMALS = ("elephant", "owl", "bear", "goat", "pig")
PATTERNS = ("bricks", "wood", "round tiles", "diamond tiles", "wavy")
COLOURS = ("turquoise", "yellow", "orange", "pink", "purple")
BLOT = "*"


class MugshotsError(IllegalMoveError):
    """A mugshot-game entry breaks a rule or names something that does not exist."""


@dataclass(frozen=True)
class NameEntry:
    """One of the names printed on the cards, how blots show it, and its power."""

    name: str
    blotted: tuple[str, ...] = ()
    power: str = ""


def _pattern(shown: str) -> re.Pattern[str]:
    parts = (re.escape(part) for part in shown.split(BLOT))
    return re.compile(".*".join(parts), re.IGNORECASE)


@dataclass(frozen=True)
class NameBook:
    """The names on the cards and their blotted forms (user-editable data)."""

    entries: tuple[NameEntry, ...]
    _cache: dict[str, frozenset[str]] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        names = [e.name for e in self.entries]
        if not names:
            raise MugshotsError(tr("The name book lists no names."))
        if len({n.casefold() for n in names}) != len(names):
            raise MugshotsError(tr("The name book lists a name twice."))
        for entry in self.entries:
            if not entry.name.strip() or BLOT in entry.name:
                raise MugshotsError(tr("{name!r} is not a usable name.", name=entry.name))
            for shown in entry.blotted:
                if BLOT not in shown or not _pattern(shown).fullmatch(entry.name):
                    raise MugshotsError(
                        tr(
                            "The blotted form {shown!r} does not show part of {name!r}.",
                            shown=shown,
                            name=entry.name,
                        )
                    )

    @property
    def names(self) -> tuple[str, ...]:
        """The full names, in book order."""
        return tuple(e.name for e in self.entries)

    @cached_property
    def shown_forms(self) -> tuple[str, ...]:
        """Every way a name can appear on a card: full names, then blotted forms."""
        forms = list(self.names)
        for entry in self.entries:
            forms += [f for f in entry.blotted if f not in forms]
        return tuple(forms)

    def fitting(self, shown: str) -> frozenset[str]:
        """The full names that fit what is visible of ``shown``."""
        if shown not in self._cache:
            regex = _pattern(shown)
            self._cache[shown] = frozenset(n for n in self.names if regex.fullmatch(n))
        return self._cache[shown]

    def names_match(self, first: str, second: str) -> bool:
        """Whether two shown names match under the ink-blot rule."""
        return bool(self.fitting(first) & self.fitting(second))

    def to_dict(self) -> dict[str, Any]:
        """The book as JSON-ready data (the name-book file's shape)."""
        return {
            "names": [
                {"name": e.name, "blotted": list(e.blotted), "power": e.power} for e in self.entries
            ]
        }

    @classmethod
    def from_dict(cls, data: object) -> NameBook:
        """A book from the name-book file's shape."""
        if not isinstance(data, Mapping) or not isinstance(data.get("names"), list):
            raise MugshotsError(tr("A name book is an object with a list of names."))
        entries = []
        for item in data["names"]:
            if not isinstance(item, Mapping) or not isinstance(item.get("name"), str):
                raise MugshotsError(tr("Each name in the name book needs a 'name' text."))
            blotted = item.get("blotted", [])
            power = item.get("power", "")
            if not isinstance(blotted, list) or not all(isinstance(b, str) for b in blotted):
                raise MugshotsError(
                    tr("The blotted forms of {value!r} must be texts.", value=item["name"])
                )
            if not isinstance(power, str):
                raise MugshotsError(
                    tr("The power of {value!r} must be a text.", value=item["name"])
                )
            entries.append(NameEntry(item["name"].strip(), tuple(blotted), power.strip()))
        return cls(tuple(entries))


@dataclass(frozen=True)
class Card:
    """A mugshot: one value of each clue type (``name`` as shown, maybe blotted)."""

    animal: str
    pattern: str
    colour: str
    name: str

    def value(self, clue: ClueType) -> str:
        """The card's value for ``clue``."""
        return str(getattr(self, clue))

    def to_dict(self) -> dict[str, str]:
        """The card as it appears in events."""
        return {clue: self.value(clue) for clue in CLUE_TYPES}

    @classmethod
    def from_dict(cls, data: object, book: NameBook) -> Card:
        """Read and check a card from an event."""
        if not isinstance(data, Mapping):
            raise MugshotsError(tr("A card must give its animal, pattern, colour and name."))
        allowed = {"animal": ANIMALS, "pattern": PATTERNS, "colour": COLOURS}
        for clue, values in allowed.items():
            if data.get(clue) not in values:
                raise MugshotsError(
                    tr(
                        "{value!r} is not a card {clue}; choose one of {value2}.",
                        value=data.get(clue),
                        clue=clue,
                        value2=", ".join(values),
                    )
                )
        name = data.get("name")
        if not isinstance(name, str) or name not in book.shown_forms:
            raise MugshotsError(tr("{name!r} is not a name in the name book.", name=name))
        return cls(str(data["animal"]), str(data["pattern"]), str(data["colour"]), name)


def clue_matches(first: Card, second: Card, clue: ClueType, book: NameBook) -> bool:
    """Whether two cards agree in one clue type (names by the ink-blot rule)."""
    if clue == "name":
        return book.names_match(first.name, second.name)
    return first.value(clue) == second.value(clue)


def matching_clues(first: Card, second: Card, book: NameBook) -> tuple[ClueType, ...]:
    """Every clue type in which two cards agree."""
    return tuple(c for c in CLUE_TYPES if clue_matches(first, second, c, book))
