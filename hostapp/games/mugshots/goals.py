"""Goal cards of the module variant: extra points at the end of the game.

"In der Modul-Variante erhält jede Person am Anfang des Spiels eine Zielkarte,
die ihr am Spielende Extrapunkte gibt, zum Beispiel für Fahndungsfotos mit einem
bestimmten Hintergrund oder Namen oder für Sets aus unterschiedlichen Tieren
oder Farben." The text gives examples, not the cards, so a goal is configured:
points per archived card showing a pattern, colour or name, or points per
complete set of different animals or colours.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from hostapp.games.mugshots.cards import (
    COLOURS,
    PATTERNS,
    Card,
    MugshotsError,
    NameBook,
)
from hostapp.i18n import tr

GoalKind = Literal["pattern", "colour", "name", "animal_set", "colour_set"]
GOAL_KINDS: tuple[GoalKind, ...] = ("pattern", "colour", "name", "animal_set", "colour_set")


@dataclass(frozen=True)
class Goal:
    """One goal card.

    Attributes
    ----------
    kind
        ``pattern``/``colour``/``name``: ``points`` for each archived card showing
        ``value``; ``animal_set``/``colour_set``: ``points`` for each set of
        ``set_size`` cards with different animals (colours), no card in two sets.
    value
        The pattern, colour or name for per-card goals; empty for sets.
    points
        Points per card or per set.
    set_size
        Cards in a set, 2-5 (sets only).
    """

    kind: GoalKind
    value: str = ""
    points: int = 1
    set_size: int = 5

    def check(self, book: NameBook) -> None:
        """Raise :class:`MugshotsError` if the goal cannot exist."""
        choices: dict[str, Iterable[str]] = {
            "pattern": PATTERNS,
            "colour": COLOURS,
            "name": book.names,
        }
        if self.kind not in GOAL_KINDS:
            known = ", ".join(GOAL_KINDS)
            raise MugshotsError(
                tr("Unknown goal {kind!r}; choose one of {known}.", kind=self.kind, known=known)
            )
        if self.kind in choices and self.value not in choices[self.kind]:
            raise MugshotsError(
                tr(
                    "{value!r} is not a {kind} a goal can ask for.",
                    value=self.value,
                    kind=self.kind,
                )
            )
        if not 0 <= self.points <= 20:
            raise MugshotsError(tr("Goal points must be from 0 to 20."))
        if self.kind.endswith("_set") and not 2 <= self.set_size <= 5:
            raise MugshotsError(tr("A set has 2 to 5 different cards."))

    def score(self, archive: Iterable[Card], book: NameBook) -> int:
        """Extra points this goal gives for ``archive``."""
        cards = list(archive)
        if self.kind == "pattern":
            return self.points * sum(c.pattern == self.value for c in cards)
        if self.kind == "colour":
            return self.points * sum(c.colour == self.value for c in cards)
        if self.kind == "name":
            # A blotted name counts when the goal's name fits what is visible.
            return self.points * sum(self.value in book.fitting(c.name) for c in cards)
        values = [c.animal if self.kind == "animal_set" else c.colour for c in cards]
        return self.points * complete_sets(Counter(values), self.set_size)

    def to_dict(self) -> dict[str, Any]:
        """The goal as it appears in events."""
        return {
            "kind": self.kind,
            "value": self.value,
            "points": self.points,
            "set_size": self.set_size,
        }

    @classmethod
    def from_dict(cls, data: object, book: NameBook) -> Goal:
        """Read and check a goal from an event."""
        if not isinstance(data, Mapping):
            raise MugshotsError(tr("A goal must be an object with a kind."))
        try:
            goal = cls(
                kind=data["kind"],
                value=str(data.get("value", "")),
                points=int(data.get("points", 1)),
                set_size=int(data.get("set_size", 5)),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise MugshotsError(tr("A goal needs a kind and whole-number points.")) from exc
        goal.check(book)
        return goal


def complete_sets(counts: Mapping[str, int], set_size: int) -> int:
    """Most disjoint sets of ``set_size`` different values from ``counts``.

    ``t`` sets are possible exactly when ``sum(min(count, t)) >= set_size * t``:
    each value can give at most one card to each set.
    """
    best, t = 0, 1
    while sum(min(c, t) for c in counts.values()) >= set_size * t:
        best, t = t, t + 1
    return best
