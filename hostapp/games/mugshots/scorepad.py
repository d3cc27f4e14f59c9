"""The mugshot game as a bare score pad: players and archive counts only.

For tables that play with the cards alone and want the tally kept: each event
adds (or, to correct a slip, removes) archived cards for one player. The game
ends when someone reaches the target, as in the full turn helper.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from hostapp.games.mugshots.cards import MugshotsError
from hostapp.i18n import tr

Event = Mapping[str, Any]


class ScorePad:
    """Archive counts per player as a fold over events.

    Events: ``{"type": "new_pad", "players": [...], "archive_to_win": 10}``
    first, then ``{"type": "archive", "player": name, "cards": n}`` with ``n``
    a non-zero whole number (negative to correct an earlier entry).
    """

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.players: tuple[str, ...] = ()
        self.counts: dict[str, int] = {}
        self.archive_to_win = 10

    @classmethod
    def replay(cls, events: Iterable[Event]) -> ScorePad:
        """The pad after applying ``events`` in order."""
        pad = cls()
        for event in events:
            pad.apply(event)
        return pad

    @property
    def over(self) -> bool:
        """Whether someone has reached the target."""
        return any(c >= self.archive_to_win for c in self.counts.values())

    def winners(self) -> tuple[str, ...]:
        """The player(s) with the most cards; several on a tie."""
        if not self.counts:
            return ()
        best = max(self.counts.values())
        return tuple(p for p in self.players if self.counts[p] == best)

    def summary(self) -> dict[str, Any]:
        """A JSON-ready account for export and score sheets."""
        return {
            "game": "mugshots-pad",
            "players": list(self.players),
            "archive_to_win": self.archive_to_win,
            "scores": dict(self.counts),
            "over": self.over,
            "winners": list(self.winners()) if self.over else [],
        }

    def apply(self, event: Event) -> None:
        """Validate ``event`` and record it; raises :class:`MugshotsError` if invalid."""
        kind = event.get("type") if isinstance(event, Mapping) else None
        if kind == "new_pad":
            self._new_pad(event)
        elif kind == "archive" and self.events:
            self._archive(event)
        else:
            raise MugshotsError(tr("Unexpected score-pad event {kind!r}.", kind=kind))
        self.events.append(dict(event))

    def _new_pad(self, event: Event) -> None:
        if self.events:
            raise MugshotsError(tr("This score pad has already started."))
        players = event.get("players")
        if not isinstance(players, list) or not all(isinstance(p, str) for p in players):
            raise MugshotsError(tr("Players must be a list of names."))
        names = tuple(p.strip() for p in players)
        if not 2 <= len(names) <= 8 or any(not n for n in names) or len(set(names)) != len(names):
            raise MugshotsError(tr("A score pad needs 2 to 8 players with names of their own."))
        target = event.get("archive_to_win", 10)
        if isinstance(target, bool) or not isinstance(target, int) or not 1 <= target <= 50:
            raise MugshotsError(tr("The target must be a whole number of cards from 1 to 50."))
        self.players, self.archive_to_win = names, target
        self.counts = dict.fromkeys(names, 0)

    def _archive(self, event: Event) -> None:
        player = event.get("player")
        if player not in self.counts:
            raise MugshotsError(tr("{player!r} is not on this score pad.", player=player))
        cards = event.get("cards")
        if isinstance(cards, bool) or not isinstance(cards, int) or cards == 0:
            raise MugshotsError(tr("Enter a whole, non-zero number of cards."))
        if self.counts[str(player)] + cards < 0:
            raise MugshotsError(tr("{player} cannot have fewer than 0 cards.", player=player))
        if self.over and cards > 0:
            raise MugshotsError(tr("The game is over: someone has reached the target."))
        self.counts[str(player)] += cards
