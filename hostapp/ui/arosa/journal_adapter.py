"""Games on disk for the controller: :class:`hostapp.games.arosa.session.ArosaSession` behind
the :class:`~hostapp.ui.arosa.controller.GameStore` protocol.

The app's own setup (sensor or manual mode, who throws the victims) goes into
the journal header's ``meta`` beside the seating order, so a resumed game
carries on exactly as set up. Unlocks of the live view during a game are
journal notes in the game's own journal (:meth:`hostapp.journal.Journal.note`):
kept, exported and shown in the reveal, but never replayed, so a note cannot
change how a game resumes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from hostapp.errors import JournalError
from hostapp.games import arosa
from hostapp.games.arosa.session import KIND, ArosaSession, replay
from hostapp.games.arosa.state import check_players, new_game
from hostapp.i18n import tr
from hostapp.journal import Journal, export_game, list_games
from hostapp.ui.markers import colour_name


class SessionRecord:
    """One journalled game (an :class:`ArosaSession`) as the controller uses it."""

    def __init__(self, session: ArosaSession, directory: Path | None) -> None:
        self._session = session
        self._directory = directory

    @property
    def game_id(self) -> str:
        """The saved game's id."""
        return self._session.journal.game_id

    @property
    def state(self) -> arosa.GameState:
        """The state after every event in force."""
        return self._session.state

    @property
    def meta(self) -> Mapping[str, Any]:
        """The journal header's facts (players, mode, victim thrower)."""
        return self._session.journal.meta

    def events(self) -> list[arosa.Event]:
        """The events in force, in order."""
        return [arosa.event_from_dict(e, extensions=True) for e in self._session.journal.events]

    def apply(self, event: arosa.Event) -> arosa.GameState:
        """Check, journal (fsynced) and apply ``event``."""
        return self._session.act(event)

    def undo(self) -> arosa.GameState:
        """Take back the last event."""
        return self._session.undo()

    def note(self, text: str, data: Mapping[str, Any]) -> None:
        """Journal a note (fsynced) in the game's journal; replaying skips it."""
        self._session.journal.note(text, data)

    def notes(self) -> list[dict[str, Any]]:
        """The game's notes, oldest first (``text``, ``at``, ``after_events``...)."""
        return self._session.journal.notes

    def close(self) -> None:
        """Close the journal file."""
        self._session.close()


class JournalGameStore:
    """Games kept in :mod:`hostapp.journal` files.

    Parameters
    ----------
    directory
        Where journals live (default: the journal directory under ``data_dir()``).
    """

    def __init__(self, directory: Path | None = None) -> None:
        self._directory = directory

    def create(self, players: Sequence[str], meta: Mapping[str, Any]) -> SessionRecord:
        """Start a journalled game with the app's setup in its header."""
        seating = check_players(list(players))
        header = {"players": list(seating), "title": "", **dict(meta)}
        journal = Journal.create(KIND, header, self._directory)
        return SessionRecord(ArosaSession(journal, new_game(seating)), self._directory)

    def open(self, game_id: str) -> SessionRecord:
        """Reopen a game and replay it to the identical state."""
        return SessionRecord(ArosaSession.resume(game_id, self._directory), self._directory)

    def resumable(self) -> list[tuple[str, str]]:
        """Games not yet over, newest first, with a one-line description each."""
        out: list[tuple[str, str]] = []
        for info in list_games(self._directory):
            if info.kind != KIND or info.problem is not None:
                continue
            try:
                saved = export_game(info.game_id, self._directory)
                state = replay(saved["meta"].get("players"), saved["events"], info.path.name)
            except JournalError:
                continue
            if state.is_over:
                continue
            names = ", ".join(colour_name(c) for c in state.players)
            when = info.created.replace("T", " ").rstrip("Z")
            out.append(
                (
                    info.game_id,
                    tr(
                        "{when} UTC \u2022 {names} \u2022 {n} steps",
                        when=when,
                        names=names,
                        n=info.n_events,
                    ),
                )
            )
        return out
