"""A card game's engine bound to its crash-proof journal.

The engines (:mod:`hostapp.games.crimehotel`, :mod:`hostapp.games.mugshots`)
are folds over event dicts; this module keeps the fold and the journal in
step. An event is first checked by the engine (which changes nothing when it
refuses), then written to the journal and ``fsync``-ed; only then does
:meth:`CardGameSession.apply` return and the UI show the new state. If the disk
refuses the write, the engine is rebuilt from the journal, so screen and disk
never disagree.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from hostapp.errors import JournalError, TowerearError
from hostapp.i18n import tr
from hostapp.journal import Journal


class CardEngine(Protocol):
    """What a card-game engine offers: an event log, ``apply`` and a summary."""

    events: list[dict[str, Any]]

    def apply(self, event: Mapping[str, Any]) -> None: ...

    def summary(self) -> dict[str, Any]: ...


E = TypeVar("E", bound=CardEngine)


class CardGameSession(Generic[E]):
    """One game in play: its engine, and its journal when one is kept.

    Parameters
    ----------
    kind
        Journal kind (``"crimehotel"``, ``"mugshots"``, ``"mugshots-pad"``).
    factory
        Builds an empty engine; the session replays events into it.
    journal
        The game's journal, or None to keep the game in memory only.
    """

    def __init__(self, kind: str, factory: Callable[[], E], journal: Journal | None) -> None:
        self.kind = kind
        self._factory = factory
        self.journal = journal
        self.engine: E = self._replay(journal.events if journal else [])

    def _replay(self, events: Iterable[Mapping[str, Any]]) -> E:
        engine = self._factory()
        for event in events:
            engine.apply(event)
        return engine

    @classmethod
    def start(
        cls,
        kind: str,
        factory: Callable[[], E],
        first_event: Mapping[str, Any],
        title: str,
        directory: Path | None = None,
        journalled: bool = True,
    ) -> CardGameSession[E]:
        """Check ``first_event`` (the game's set-up), open a journal and record it."""
        factory().apply(first_event)  # refuse a bad set-up before creating a file
        journal = Journal.create(kind, {"title": title}, directory) if journalled else None
        session = cls(kind, factory, journal)
        session.apply(first_event)
        return session

    @classmethod
    def resume(
        cls, kind: str, factory: Callable[[], E], game_id: str, directory: Path | None = None
    ) -> CardGameSession[E]:
        """Reopen a saved game of ``kind`` and replay it."""
        journal = Journal.open(game_id, directory)
        if journal.kind != kind:
            journal.close()
            raise JournalError(
                tr("the saved game {game_id!r} is not a {kind} game", game_id=game_id, kind=kind)
            )
        try:
            return cls(kind, factory, journal)
        except TowerearError as exc:
            journal.close()
            raise JournalError(
                tr("the saved game {game_id!r} cannot be replayed: {reason}",
                   game_id=game_id, reason=exc)
            ) from exc

    @property
    def game_id(self) -> str:
        """The journal's game id, or empty when no journal is kept."""
        return self.journal.game_id if self.journal else ""

    def apply(self, event: Mapping[str, Any]) -> None:
        """Check ``event`` against the rules, journal it, and only then keep it.

        Raises
        ------
        TowerearError
            The engine's rule error (nothing changed) or a :class:`JournalError`
            (the event was not kept).
        """
        self.engine.apply(event)
        if self.journal is None:
            return
        try:
            self.journal.append(event)
        except JournalError:
            self.engine = self._replay(self.journal.events)
            raise

    def can_undo(self) -> bool:
        """Whether an event after the set-up is left to undo."""
        return len(self.engine.events) > 1

    def undo(self) -> None:
        """Take back the last event (never the set-up)."""
        if not self.can_undo():
            return
        if self.journal is not None:
            self.journal.undo()
            self.engine = self._replay(self.journal.events)
        else:
            self.engine = self._replay(self.engine.events[:-1])

    def close(self) -> None:
        """Release the journal file."""
        if self.journal is not None:
            self.journal.close()
