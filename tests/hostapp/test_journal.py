"""The generic crash-proof journal: framing, torn tails, damage, undo, list/export/delete."""

from __future__ import annotations

import logging
import random
import struct
import zlib
from pathlib import Path

import pytest

from hostapp.errors import JournalError
from hostapp.journal import (
    SCHEMA_VERSION,
    Journal,
    NothingToUndoError,
    delete_game,
    export_game,
    list_games,
    read_game,
)


def make_game(directory: Path, n: int = 5, game_id: str = "g1") -> list[dict[str, object]]:
    events: list[dict[str, object]] = [{"do": "throw", "floor": f} for f in range(n)]
    with Journal.create("test", {"players": ["a", "b"]}, directory, game_id=game_id) as journal:
        for event in events:
            journal.append(event)
    return events


def test_reopening_gives_back_every_event(tmp_path: Path) -> None:
    events = make_game(tmp_path)
    with Journal.open("g1", tmp_path) as journal:
        assert journal.events == events
        assert journal.kind == "test" and journal.meta == {"players": ["a", "b"]}
        assert journal.warnings == []
        assert journal.append({"x": 1}) == 6
    with Journal.open("g1", tmp_path) as journal:
        assert journal.events == [*events, {"x": 1}]


def test_default_directory_is_under_the_data_dir(towerear_home: Path) -> None:
    with Journal.create("test") as journal:
        journal.append({"a": 1})
        assert towerear_home in journal.path.parents
    assert [g.game_id for g in list_games()] == [journal.game_id]


def test_undo_is_journalled_not_deleted(tmp_path: Path) -> None:
    events = make_game(tmp_path, n=3)
    with Journal.open("g1", tmp_path) as journal:
        assert journal.undo() == events[2]
        assert journal.undo() == events[1]
        journal.append({"new": True})
    with Journal.open("g1", tmp_path) as journal:
        assert journal.events == [events[0], {"new": True}]
        kinds = [r["type"] for r in journal.records]
        assert kinds == ["event", "event", "event", "undo", "undo", "event"]
        journal.undo()
        journal.undo()
        with pytest.raises(NothingToUndoError):
            journal.undo()
        assert journal.events == []


def test_a_torn_last_record_is_dropped_with_a_warning_at_every_cut(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    events = make_game(tmp_path, n=4)
    path = tmp_path / "g1.tej"
    whole = path.read_bytes()
    last_start = whole.rindex(b"TJ")
    for cut in range(last_start + 1, len(whole)):
        path.write_bytes(whole[:cut])
        with caplog.at_level(logging.WARNING, logger="hostapp.journal"):
            with Journal.open("g1", tmp_path) as journal:
                assert journal.events == events[:3]
                assert len(journal.warnings) == 1 and "\n" not in journal.warnings[0]
        # the file was cut back, so new records follow intact data
        assert path.read_bytes() == whole[:last_start]
    assert "dropped a damaged last record" in caplog.text


def test_garbage_after_the_last_record_counts_as_torn(tmp_path: Path) -> None:
    events = make_game(tmp_path, n=2)
    path = tmp_path / "g1.tej"
    with path.open("ab") as f:
        f.write(b"\x00" * 37)
    with Journal.open("g1", tmp_path) as journal:
        assert journal.events == events and journal.warnings


def test_damage_in_the_middle_is_refused_with_one_line(tmp_path: Path) -> None:
    make_game(tmp_path, n=6)
    path = tmp_path / "g1.tej"
    whole = bytearray(path.read_bytes())
    third = [i for i in range(len(whole)) if whole[i : i + 2] == b"TJ"][3]
    whole[third + 12] ^= 0xFF
    path.write_bytes(bytes(whole))
    with pytest.raises(JournalError) as err:
        Journal.open("g1", tmp_path)
    assert "damaged at byte" in str(err.value) and "\n" not in str(err.value)
    # the damaged file is left as it was for a human to look at
    assert path.read_bytes() == bytes(whole)


def test_random_damage_never_escapes_as_anything_but_a_journal_error(tmp_path: Path) -> None:
    events = make_game(tmp_path, n=8)
    path = tmp_path / "g1.tej"
    whole = path.read_bytes()
    rng = random.Random(5)
    outcomes = {"error": 0, "warning": 0, "clean": 0}
    for _ in range(150):
        data = bytearray(whole)
        if rng.random() < 0.5:
            data = data[: rng.randrange(len(data))]
        else:
            for _ in range(rng.randrange(1, 4)):
                data[rng.randrange(len(data))] = rng.randrange(256)
        path.write_bytes(bytes(data))
        try:
            with Journal.open("g1", tmp_path) as journal:
                # whatever survives is a prefix of what was written
                assert journal.events == events[: len(journal.events)]
                outcomes["warning" if journal.warnings else "clean"] += 1
        except JournalError as exc:
            assert "\n" not in str(exc)
            outcomes["error"] += 1
    assert outcomes["error"] > 0 and outcomes["warning"] > 0


def test_a_newer_schema_is_refused(tmp_path: Path) -> None:
    payload = b'{"type":"header","schema":%d,"kind":"x","game_id":"g9","meta":{}}' % (
        SCHEMA_VERSION + 1
    )
    (tmp_path / "g9.tej").write_bytes(
        struct.pack("<2sII", b"TJ", len(payload), zlib.crc32(payload)) + payload
    )
    with pytest.raises(JournalError, match="newer towerear"):
        Journal.open("g9", tmp_path)


def test_not_a_journal(tmp_path: Path) -> None:
    (tmp_path / "junk.tej").write_bytes(b"hello world")
    with pytest.raises(JournalError, match="not a towerear journal"):
        Journal.open("junk", tmp_path)
    (tmp_path / "empty.tej").write_bytes(b"")
    with pytest.raises(JournalError, match="not a towerear journal"):
        Journal.open("empty", tmp_path)
    with pytest.raises(JournalError, match="no saved game"):
        Journal.open("absent", tmp_path)
    with pytest.raises(JournalError, match="not a game id"):
        Journal.open("../etc/passwd", tmp_path)


def test_one_writer_at_a_time(tmp_path: Path) -> None:
    make_game(tmp_path, n=1)
    with Journal.open("g1", tmp_path):
        with pytest.raises(JournalError, match="open in another window"):
            Journal.open("g1", tmp_path)
        with pytest.raises(JournalError, match="open in another window"):
            delete_game("g1", tmp_path)
    with pytest.raises(JournalError, match="already exists"):
        Journal.create("test", {}, tmp_path, game_id="g1")


def test_list_export_delete(tmp_path: Path) -> None:
    events = make_game(tmp_path, n=3, game_id="first")
    make_game(tmp_path, n=1, game_id="second")
    (tmp_path / "broken.tej").write_bytes(b"TJ\x05\x00")
    games = {g.game_id: g for g in list_games(tmp_path)}
    assert games["first"].n_events == 3 and games["first"].problem is None
    assert games["broken"].problem is not None
    exported = export_game("first", tmp_path)
    assert exported["events"] == events and exported["schema"] == SCHEMA_VERSION
    assert exported["kind"] == "test"
    info, read = read_game("second", tmp_path)
    assert info.n_events == 1 and len(read) == 1 and not info.torn_tail
    with (tmp_path / "second.tej").open("ab") as f:
        f.write(b"TJ\x40")  # a crash in the middle of the next record
    torn = {g.game_id: g for g in list_games(tmp_path)}["second"]
    assert torn.torn_tail and torn.problem is None and torn.n_events == 1
    delete_game("second", tmp_path)
    assert {g.game_id for g in list_games(tmp_path)} == {"first", "broken"}
    with pytest.raises(JournalError, match="no saved game"):
        delete_game("second", tmp_path)


def test_an_event_that_is_not_json_is_refused_and_not_written(tmp_path: Path) -> None:
    make_game(tmp_path, n=1)
    with Journal.open("g1", tmp_path) as journal:
        with pytest.raises(JournalError, match="plain JSON"):
            journal.append({"when": object()})
        with pytest.raises(JournalError, match="plain JSON"):
            journal.append({"x": float("nan")})
        assert len(journal.events) == 1
    with Journal.open("g1", tmp_path) as journal:
        assert len(journal.events) == 1 and journal.warnings == []


def test_an_unusable_directory_is_a_journal_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(JournalError, match="journal directory"):
        Journal.create("test", {}, blocker / "journals")


def test_notes_are_kept_but_never_replayed_or_undone(tmp_path: Path) -> None:
    events = make_game(tmp_path, n=2)
    with Journal.open("g1", tmp_path) as journal:
        assert journal.note("debug views unlocked", {"do": "debug_unlock"}) == 3
        journal.append({"do": "throw", "floor": 7})
        assert journal.undo() == {"do": "throw", "floor": 7}  # the note is skipped
        assert journal.undo() == events[-1]
    with Journal.open("g1", tmp_path) as journal:
        assert journal.events == events[:1]
        (note,) = journal.notes
        assert note["text"] == "debug views unlocked" and note["do"] == "debug_unlock"
        assert note["after_events"] == 2 and note["at"].endswith("Z")
    info, in_force = read_game("g1", tmp_path)
    assert in_force == events[:1] and info.n_events == 1
    saved = export_game("g1", tmp_path)
    assert [n["text"] for n in saved["notes"]] == ["debug views unlocked"]
    assert [r["type"] for r in saved["records"]] == ["event"] * 2 + ["note", "event"] + ["undo"] * 2
