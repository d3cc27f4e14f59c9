"""A journalled game of Mord im Arosa: the engine plus the crash-proof journal.

:meth:`ArosaSession.act` checks an event against the rules (the engine is
pure, so nothing changes yet), writes it to the journal (fsynced), and only
then moves the state on. A crash at any point therefore resumes either
before or after the event, never in between.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from hostapp.errors import IllegalMoveError, JournalError, ScriptError
from hostapp.games.arosa.engine import apply
from hostapp.games.arosa.events import Event, event_from_dict, event_to_dict
from hostapp.games.arosa.state import GameState, check_players, new_game
from hostapp.i18n import tr
from hostapp.journal import Journal

KIND = "arosa"


class ArosaSession:
    """One game on disk and in memory.

    Attributes
    ----------
    journal
        The open journal (``journal.game_id`` names the saved game).
    state
        The state after every event in force.
    """

    def __init__(self, journal: Journal, state: GameState) -> None:
        self.journal = journal
        self.state = state

    @classmethod
    def new(
        cls, players: Sequence[str], directory: Path | None = None, title: str = ""
    ) -> ArosaSession:
        """Start and journal a new game with this seating order (clockwise)."""
        seating = check_players(list(players))
        journal = Journal.create(KIND, {"players": list(seating), "title": title}, directory)
        return cls(journal, new_game(seating))

    @classmethod
    def resume(cls, game_id: str, directory: Path | None = None) -> ArosaSession:
        """Reopen a saved game and replay its journal to the identical state.

        Raises
        ------
        JournalError
            When the journal is damaged, belongs to another game, or holds an
            event the rules refuse.
        """
        journal = Journal.open(game_id, directory)
        try:
            if journal.kind != KIND:
                raise JournalError(
                    tr("the game {game_id!r} is {kind!r}, not Mord im Arosa",
                       game_id=game_id, kind=journal.kind)
                )
            state = replay(journal.meta.get("players"), journal.events, journal.path.name)
        except BaseException:
            journal.close()
            raise
        return cls(journal, state)

    def act(self, event: Event) -> GameState:
        """Apply ``event``: checked, journalled durably, then the new state.

        Raises
        ------
        IllegalMoveError
            When the rules refuse it (nothing is journalled, the state stays).
        JournalError
            When it cannot be written (the state stays).
        """
        after = apply(self.state, event)
        self.journal.append(event_to_dict(event))
        self.state = after
        return after

    def undo(self) -> GameState:
        """Take back the last event (journalled as an undo record) and return the state."""
        players = self.state.players
        self.journal.undo()
        self.state = replay(list(players), self.journal.events, self.journal.path.name)
        return self.state

    def close(self) -> None:
        """Close the journal."""
        self.journal.close()


def replay(players: object, events: Sequence[object], name: str) -> GameState:
    """Rebuild the state from journalled events; damage becomes a :class:`JournalError`."""
    try:
        state = new_game(players)
    except ScriptError as exc:
        raise JournalError(
            tr("{name} has no valid seating order: {reason}", name=name, reason=exc)
        ) from exc
    for index, raw in enumerate(events):
        try:
            state = apply(state, event_from_dict(raw, extensions=True))
        except (ScriptError, IllegalMoveError) as exc:
            raise JournalError(
                tr("{name} cannot be replayed at event {index}: {reason}",
                   name=name, index=index, reason=exc)
            ) from exc
    return state
