"""With the German UI, journal errors reach the user as German sentences."""

from __future__ import annotations

from pathlib import Path

import pytest

from hostapp.errors import JournalError
from hostapp.journal import Journal


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
