"""With the German UI, journal errors reach the user as German sentences."""

from __future__ import annotations

from pathlib import Path

import pytest

from hostapp.errors import JournalError
from hostapp.i18n import os_reason
from hostapp.journal import Journal, journal_dir


def test_journal_errors_are_german(tmp_path: Path, german: None) -> None:
    with pytest.raises(JournalError) as info:
        Journal.open("absent", tmp_path)
    assert str(info.value) == "es gibt kein gespeichertes Spiel 'absent'"
    (tmp_path / "junk.tej").write_bytes(b"hello world")
    with pytest.raises(JournalError) as info:
        Journal.open("junk", tmp_path)
    assert str(info.value) == (
        "junk.tej ist kein towerear-Spielprotokoll, oder sein Kopf ist beschädigt"
    )
    with Journal.create("arosa", {}, tmp_path, game_id="g1") as journal:
        with pytest.raises(JournalError) as info:
            journal.undo()
        assert str(info.value) == "es gibt nichts rückgängig zu machen"


def test_the_operating_systems_reason_is_german_too(tmp_path: Path, german: None) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    with pytest.raises(JournalError) as info:
        journal_dir(blocker / "journals")
    assert str(info.value).endswith(": ist kein Verzeichnis")


def test_an_unknown_reason_is_left_as_the_system_gave_it(german: None) -> None:
    assert os_reason(OSError(5, "Something odd")) == "Something odd"
    assert os_reason(OSError("no errno at all")) == "no errno at all"
