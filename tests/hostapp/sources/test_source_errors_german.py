"""With the German UI, source errors reach the user as German sentences."""

from __future__ import annotations

from pathlib import Path

import pytest

from hostapp.errors import RecordingError, SourceError
from hostapp.sources.recording_replay import ReplaySource
from hostapp.sources.serial_port import find_device_port
from hostapp.sources.sim_device import tower_device


def test_no_board_is_named_in_german(german: None) -> None:
    with pytest.raises(SourceError) as info:
        find_device_port(ports=[])
    text = str(info.value)
    assert text.startswith("kein towerear-Gerät gefunden (USB-IDs ")
    assert text.endswith("); keine seriellen Schnittstellen gefunden")


def test_a_missing_or_empty_recording_is_named_in_german(tmp_path: Path, german: None) -> None:
    missing = tmp_path / "gone.bin"
    with pytest.raises(RecordingError) as info:
        ReplaySource(missing)
    assert str(info.value).startswith(f"die Aufnahme {missing} kann nicht geöffnet werden: ")
    empty = tmp_path / "empty.bin"
    empty.write_bytes(b"")
    with pytest.raises(RecordingError) as info:
        ReplaySource(empty)
    assert str(info.value) == f"die Aufnahme {empty} ist leer"
    with pytest.raises(SourceError) as info:
        ReplaySource(empty, speed=1000.0)
    assert str(info.value) == (
        "die Wiedergabegeschwindigkeit muss 1..100 sein (oder so schnell wie möglich)"
    )


def test_an_unknown_scenario_from_the_simulator_is_translated_at_the_boundary(
    german: None,
) -> None:
    # dsp.sim raises in English; the source turns it into a German sentence
    with pytest.raises(SourceError) as info:
        tower_device(seed=1, scenario="no-such-scenario")
    assert str(info.value).startswith("unbekanntes Szenario 'no-such-scenario'; bekannt: ")
