"""The crash-proof game journal: every event on disk before the game acts on it.

One append-only file per game, ``<game id>.tej`` in ``data_dir()/journals``.
Each record is framed as::

    b"TJ" | length:u32 LE | crc32(payload):u32 LE | payload (UTF-8 JSON)

The first record is the header: ``{"type": "header", "schema": 1, "kind":
..., "game_id": ..., "created": ..., "meta": {...}}``. Then ``{"type":
"event", "seq": n, "event": {...}}`` and ``{"type": "undo", "seq": n,
"undoes": m}`` records, and ``{"type": "note", "seq": n, "note": {"text":
..., "at": ...}}`` records: things that happened around the game (a player
unlocked the debug views) that are kept and exported but never replayed and
never undone. :meth:`Journal.append` returns only after the record
was written with a single ``write`` and ``fsync``-ed, so an event the caller
acts on survives a crash or power loss.

A power loss can leave a torn last record. It is detected (bad frame, length
past the end, CRC mismatch), dropped with a warning, and the file is cut back
to the last good record. Damage followed by intact records cannot come from a
torn write; such a file is refused with a :class:`JournalError`.

The journal knows nothing about any game: events are JSON objects, and
replaying them is the game engine's business (see
``hostapp.games.arosa.session``).
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import re
import secrets
import struct
import time
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hostapp.errors import JournalError
from hostapp.i18n import os_reason, tr
from hostapp.paths import data_dir

SCHEMA_VERSION = 1
"""Version of the record layout and the header; readers refuse newer ones."""

SUFFIX = ".tej"
_MAGIC = b"TJ"
_FRAME = struct.Struct("<2sII")
_MAX_RECORD = 1 << 20  # a game event is a few hundred bytes; larger means garbage
_GAME_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")

log = logging.getLogger(__name__)


class NothingToUndoError(JournalError):
    """Undo was asked for but no event is left to undo."""


@dataclass(frozen=True)
class GameInfo:
    """One saved game as :func:`list_games` sees it.

    Attributes
    ----------
    game_id, kind, created
        Identity from the header; ``created`` is ISO 8601 UTC.
    title
        ``meta["title"]`` if the game set one, else empty.
    n_events
        Events in force (undone ones not counted).
    problem
        None when the game can be resumed; else why it cannot.
    path
        The journal file.
    torn_tail
        The last record is torn (a crash while writing); opening the game
        drops it and resumes from the record before.
    """

    game_id: str
    kind: str
    created: str
    title: str
    n_events: int
    problem: str | None
    path: Path
    torn_tail: bool = False


def journal_dir(directory: Path | None = None) -> Path:
    """The directory journals live in (``data_dir()/journals`` unless given); created."""
    try:
        path = directory if directory is not None else data_dir() / "journals"
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise JournalError(
            tr("cannot use the journal directory: {reason}", reason=os_reason(exc))
        ) from exc
    return path


def _path_for(game_id: str, directory: Path | None) -> Path:
    if not _GAME_ID.match(game_id):
        raise JournalError(
            tr("{game_id!r} is not a game id (letters, digits, '-' and '_')", game_id=game_id)
        )
    return journal_dir(directory) / f"{game_id}{SUFFIX}"


def _frame(record: Mapping[str, Any]) -> bytes:
    try:
        text = json.dumps(record, separators=(",", ":"), sort_keys=True, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise JournalError(
            tr("an event must be plain JSON to be journalled ({reason})", reason=exc)
        ) from exc
    payload = text.encode("utf-8")
    return _FRAME.pack(_MAGIC, len(payload), zlib.crc32(payload)) + payload


def _record_at(data: bytes, offset: int) -> tuple[dict[str, Any], int] | None:
    """Decode the record starting at ``offset``: (record, next offset), or None if damaged."""
    if offset + _FRAME.size > len(data):
        return None
    magic, length, crc = _FRAME.unpack_from(data, offset)
    start = offset + _FRAME.size
    if magic != _MAGIC or length > _MAX_RECORD or start + length > len(data):
        return None
    payload = data[start : start + length]
    if zlib.crc32(payload) != crc:
        return None
    try:
        record = json.loads(payload.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(record, dict):
        return None
    return record, start + length


def _intact_record_after(data: bytes, offset: int) -> bool:
    """Whether any intact record starts after ``offset`` (then damage is not a torn tail)."""
    position = data.find(_MAGIC, offset + 1)
    while position != -1:
        if _record_at(data, position) is not None:
            return True
        position = data.find(_MAGIC, position + 1)
    return False


@dataclass(frozen=True)
class _Parsed:
    header: dict[str, Any]
    records: list[dict[str, Any]]
    good_length: int
    torn: bool


def _parse(path: Path, data: bytes) -> _Parsed:
    name = path.name
    first = _record_at(data, 0)
    if first is None or first[0].get("type") != "header":
        raise JournalError(
            tr("{name} is not a towerear journal or its header is damaged", name=name)
        )
    header, offset = first
    schema = header.get("schema")
    if not isinstance(schema, int) or schema > SCHEMA_VERSION:
        raise JournalError(
            tr(
                "{name} was written by a newer towerear (journal schema {schema}, "
                "this one reads up to {supported})",
                name=name,
                schema=schema,
                supported=SCHEMA_VERSION,
            )
        )
    records: list[dict[str, Any]] = []
    while offset < len(data):
        decoded = _record_at(data, offset)
        if decoded is None:
            if _intact_record_after(data, offset):
                raise JournalError(
                    tr(
                        "{name} is damaged at byte {offset} with intact records after it; "
                        "it was not a torn write, so it is not repaired automatically",
                        name=name,
                        offset=offset,
                    )
                )
            return _Parsed(header, records, offset, torn=True)
        record, offset = decoded
        records.append(record)
    return _Parsed(header, records, offset, torn=False)


def _effective_events(name: str, records: list[dict[str, Any]]) -> list[tuple[int, dict[str, Any]]]:
    """Apply the undo records: the (seq, event) pairs in force, in order (notes left out)."""
    stack: list[tuple[int, dict[str, Any]]] = []
    expected_seq = 1
    for record in records:
        seq = record.get("seq")
        if not isinstance(seq, int) or seq != expected_seq:
            raise JournalError(
                tr(
                    "{name} has record {seq!r} where {expected} was expected",
                    name=name,
                    seq=seq,
                    expected=expected_seq,
                )
            )
        expected_seq += 1
        kind = record.get("type")
        if kind == "event" and isinstance(record.get("event"), dict):
            stack.append((seq, record["event"]))
        elif kind == "undo" and stack and record.get("undoes") == stack[-1][0]:
            stack.pop()
        elif kind == "note" and isinstance(record.get("note"), dict):
            pass  # kept in the records, never part of the game's state
        else:
            raise JournalError(
                tr(
                    "{name} has a record {seq} that makes no sense here ({kind!r})",
                    name=name,
                    seq=seq,
                    kind=kind,
                )
            )
    return stack


def _fsync_dir(directory: Path) -> None:
    # a new file's directory entry must reach the disk too, or the file may vanish
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class Journal:
    """One game's journal, open for appending (one writer at a time, enforced by a lock).

    Use :meth:`create` for a new game and :meth:`open` to resume one.

    Attributes
    ----------
    game_id, kind, created, meta
        From the header.
    path
        The journal file.
    warnings
        What was repaired on opening (a dropped torn record), one sentence each.
    """

    def __init__(
        self,
        path: Path,
        fd: int,
        header: dict[str, Any],
        records: list[dict[str, Any]],
        warnings: list[str],
    ) -> None:
        self.path = path
        self._fd = fd
        self.game_id: str = str(header.get("game_id", path.stem))
        self.kind: str = str(header.get("kind", ""))
        self.created: str = str(header.get("created", ""))
        self.meta: dict[str, Any] = dict(header.get("meta") or {})
        self.warnings = warnings
        self._records = records
        self._events = _effective_events(path.name, records)

    @classmethod
    def create(
        cls,
        kind: str,
        meta: Mapping[str, Any] | None = None,
        directory: Path | None = None,
        game_id: str | None = None,
    ) -> Journal:
        """Start a new journal; the header is on disk when this returns.

        Parameters
        ----------
        kind
            Which game (``"arosa"``, ``"crimehotel"``, ...).
        meta
            JSON-ready facts the game needs to replay (players, options, title).
        directory
            Where to keep it (default ``data_dir()/journals``).
        game_id
            A chosen id (default: creation time plus a random suffix).
        """
        created = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        if game_id is None:
            game_id = time.strftime("%Y%m%d-%H%M%S", time.gmtime()) + "-" + secrets.token_hex(3)
        path = _path_for(game_id, directory)
        header = {
            "type": "header",
            "schema": SCHEMA_VERSION,
            "kind": kind,
            "game_id": game_id,
            "created": created,
            "meta": dict(meta or {}),
        }
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o644)
        except FileExistsError as exc:
            raise JournalError(tr("a game {game_id!r} already exists", game_id=game_id)) from exc
        except OSError as exc:
            raise JournalError(
                tr("cannot create the journal {path}: {reason}", path=path, reason=os_reason(exc))
            ) from exc
        try:
            _lock(fd, path)
            _write_all(fd, _frame(header), path)
            _fsync_dir(path.parent)
        except BaseException:
            os.close(fd)
            raise
        return cls(path, fd, header, [], [])

    @classmethod
    def open(cls, game_id: str, directory: Path | None = None) -> Journal:
        """Open a saved game for resuming; a torn last record is cut off with a warning.

        Raises
        ------
        JournalError
            When the game does not exist, is open elsewhere, or is damaged
            beyond a torn last record.
        """
        path = _path_for(game_id, directory)
        try:
            fd = os.open(path, os.O_RDWR | os.O_APPEND)
        except FileNotFoundError as exc:
            raise JournalError(tr("there is no saved game {game_id!r}", game_id=game_id)) from exc
        except OSError as exc:
            raise JournalError(
                tr("cannot open the journal {path}: {reason}", path=path, reason=os_reason(exc))
            ) from exc
        try:
            _lock(fd, path)
            data = _read_all(fd, path)
            parsed = _parse(path, data)
            warnings = []
            if parsed.torn:
                dropped = len(data) - parsed.good_length
                message = tr(
                    "{name}: dropped a damaged last record ({dropped} bytes, "
                    "probably cut off by a crash or power loss); everything before it is kept",
                    name=path.name,
                    dropped=dropped,
                )
                log.warning(message)
                warnings.append(message)
                os.ftruncate(fd, parsed.good_length)
                os.fsync(fd)
            return cls(path, fd, parsed.header, parsed.records, warnings)
        except BaseException:
            os.close(fd)
            raise

    @property
    def events(self) -> list[dict[str, Any]]:
        """The events in force, oldest first (undone events left out)."""
        return [event for _, event in self._events]

    @property
    def records(self) -> list[dict[str, Any]]:
        """Every record after the header, undo records included."""
        return list(self._records)

    def append(self, event: Mapping[str, Any]) -> int:
        """Write ``event`` durably (write + fsync) and return its sequence number.

        Raises
        ------
        JournalError
            When the disk refuses the write; the event must then not be acted on.
        """
        seq = len(self._records) + 1
        record: dict[str, Any] = {"type": "event", "seq": seq, "event": dict(event)}
        self._write(record)
        self._events.append((seq, record["event"]))
        return seq

    @property
    def notes(self) -> list[dict[str, Any]]:
        """The notes, oldest first (see :meth:`note`)."""
        return _notes(self._records)

    def note(self, text: str, data: Mapping[str, Any] | None = None) -> int:
        """Write a note durably (write + fsync) and return its sequence number.

        A note records something that happened during the game without being
        part of it: replaying and undoing skip it, exports and the reveal
        show it. It carries ``text``, the UTC time ``at`` (ISO 8601),
        ``after_events`` (events in force when it was written) and ``data``.

        Raises
        ------
        JournalError
            When the disk refuses the write.
        """
        seq = len(self._records) + 1
        note: dict[str, Any] = {
            **dict(data or {}),
            "text": text,
            "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "after_events": len(self._events),
        }
        self._write({"type": "note", "seq": seq, "note": note})
        return seq

    def undo(self) -> dict[str, Any]:
        """Undo the last event in force by journalling an undo record; returns that event.

        Raises
        ------
        NothingToUndoError
            When no event is left to undo.
        """
        if not self._events:
            raise NothingToUndoError(tr("there is nothing to undo"))
        seq, event = self._events[-1]
        self._write({"type": "undo", "seq": len(self._records) + 1, "undoes": seq})
        self._events.pop()
        return event

    def _write(self, record: dict[str, Any]) -> None:
        if self._fd < 0:
            raise JournalError(tr("the journal {name} is closed", name=self.path.name))
        _write_all(self._fd, _frame(record), self.path)
        self._records.append(record)

    def close(self) -> None:
        """Release the file (and its lock)."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _notes(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [dict(r["note"]) for r in records if r.get("type") == "note"]


def _lock(fd: int, path: Path) -> None:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError as exc:
        raise JournalError(
            tr("the game {game_id!r} is open in another window", game_id=path.stem)
        ) from exc


def _write_all(fd: int, data: bytes, path: Path) -> None:
    try:
        written = os.write(fd, data)
        while written < len(data):
            written += os.write(fd, data[written:])
        os.fsync(fd)
    except OSError as exc:
        raise JournalError(
            tr("cannot write the journal {name}: {reason}", name=path.name, reason=os_reason(exc))
        ) from exc


def _read_all(fd: int, path: Path) -> bytes:
    try:
        size = os.fstat(fd).st_size
        return os.pread(fd, size, 0)
    except OSError as exc:
        raise JournalError(
            tr("cannot read the journal {name}: {reason}", name=path.name, reason=os_reason(exc))
        ) from exc


def _read_file(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise JournalError(
            tr("cannot read the journal {name}: {reason}", name=path.name, reason=os_reason(exc))
        ) from exc


def read_game(game_id: str, directory: Path | None = None) -> tuple[GameInfo, list[dict[str, Any]]]:
    """Read a saved game without opening it for writing (nothing is repaired).

    Returns
    -------
    (GameInfo, events)
        Its summary and the events in force; a torn last record is left out
        and reported in ``GameInfo.torn_tail``.
    """
    path = _path_for(game_id, directory)
    if not path.exists():
        raise JournalError(tr("there is no saved game {game_id!r}", game_id=game_id))
    parsed = _parse(path, _read_file(path))
    events = [e for _, e in _effective_events(path.name, parsed.records)]
    meta = parsed.header.get("meta") or {}
    info = GameInfo(
        game_id=str(parsed.header.get("game_id", path.stem)),
        kind=str(parsed.header.get("kind", "")),
        created=str(parsed.header.get("created", "")),
        title=str(meta.get("title", "")) if isinstance(meta, dict) else "",
        n_events=len(events),
        problem=None,
        path=path,
        torn_tail=parsed.torn,
    )
    return info, events


def list_games(directory: Path | None = None) -> list[GameInfo]:
    """Every saved game, newest first; damaged ones are listed with their problem."""
    games = []
    for path in journal_dir(directory).glob(f"*{SUFFIX}"):
        try:
            info, _ = read_game(path.stem, directory)
        except JournalError as exc:
            info = GameInfo(path.stem, "", "", "", 0, str(exc), path)
        games.append(info)
    return sorted(games, key=lambda g: (g.created, g.game_id), reverse=True)


def export_game(game_id: str, directory: Path | None = None) -> dict[str, Any]:
    """A saved game as one JSON-ready object: header facts, every record, events in force, notes."""
    path = _path_for(game_id, directory)
    if not path.exists():
        raise JournalError(tr("there is no saved game {game_id!r}", game_id=game_id))
    parsed = _parse(path, _read_file(path))
    return {
        "schema": parsed.header["schema"],
        "game_id": parsed.header.get("game_id", game_id),
        "kind": parsed.header.get("kind"),
        "created": parsed.header.get("created"),
        "meta": parsed.header.get("meta", {}),
        "records": parsed.records,
        "events": [e for _, e in _effective_events(path.name, parsed.records)],
        "notes": _notes(parsed.records),
        "torn_last_record_dropped": parsed.torn,
    }


def delete_game(game_id: str, directory: Path | None = None) -> None:
    """Delete a saved game for good.

    Raises
    ------
    JournalError
        When there is no such game or it is open for writing.
    """
    path = _path_for(game_id, directory)
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError as exc:
        raise JournalError(tr("there is no saved game {game_id!r}", game_id=game_id)) from exc
    except OSError as exc:
        raise JournalError(
            tr("cannot delete {name}: {reason}", name=path.name, reason=os_reason(exc))
        ) from exc
    try:
        _lock(fd, path)
        path.unlink()
        _fsync_dir(path.parent)
    except OSError as exc:
        raise JournalError(
            tr("cannot delete {name}: {reason}", name=path.name, reason=os_reason(exc))
        ) from exc
    finally:
        os.close(fd)
