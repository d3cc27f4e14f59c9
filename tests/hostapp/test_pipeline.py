from pathlib import Path

import pytest

from hostapp.cli.detect import detect_recording
from hostapp.eval.sessions import SessionSpec, record_session
from hostapp.pipeline import DetectionPipeline, LivePipeline
from hostapp.protocol import Hello, Load, Piezo
from hostapp.recording import RecordingReader


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("pipeline") / "game.bin"
    record_session(SessionSpec("single", 6, 60, 25.0), path)
    return path


def test_live_pipeline_on_bare_messages_equals_detect(recording: Path) -> None:
    reference = detect_recording(recording).events
    live = LivePipeline()
    events = []
    for chunk in RecordingReader(recording, chunk_size=4096).chunks():
        # What a live source hands over: bare messages, no stream times.
        events += live.feed([frame.msg for frame in chunk])
    events += live.finish()
    assert [e.to_json() for e in events] == reference
    assert any(e["event"] == "landing" for e in reference)


def test_rates_are_measured_when_hello_is_missing(recording: Path) -> None:
    pipeline = DetectionPipeline()
    reader = RecordingReader(recording)
    frames = [f for f in reader if not isinstance(f.msg, Hello)]
    assert reader.hello is not None
    events = pipeline.feed(frames) + pipeline.finish()
    assert pipeline.stats.rates_from == "measured"
    assert pipeline.stats.piezo_rate_hz == pytest.approx(reader.hello.piezo_rate_hz, rel=0.01)
    assert pipeline.stats.load_rate_hz == pytest.approx(reader.hello.load_rate_hz, rel=0.02)
    with_hello = detect_recording(recording).events
    assert [e.floor for e in events if e.to_json()["event"] == "landing"] == [
        e["floor"] for e in with_hello if e["event"] == "landing"
    ]


def test_acoustic_only_when_load_messages_are_absent(recording: Path) -> None:
    result = detect_recording(recording, ignore_load=True)
    landings = [e for e in result.events if e["event"] == "landing"]
    assert landings and all(e["source"] == "acoustic" for e in landings)


def test_load_cells_alone_still_find_the_landings(recording: Path) -> None:
    # No PIEZO at all (piezo cable unplugged): the load stream alone moves
    # the detector on, read in small pieces as from a serial port.
    with_piezo = [e for e in detect_recording(recording).events if e["event"] == "landing"]
    pipeline = DetectionPipeline()
    events = []
    for chunk in RecordingReader(recording, chunk_size=2000).chunks():
        events += pipeline.feed([f for f in chunk if not isinstance(f.msg, Piezo)])
    events += pipeline.finish()
    landings = [e.to_json() for e in events if e.to_json()["event"] == "landing"]
    assert len(landings) >= len(with_piezo) - 1 and len(with_piezo) >= 3
    assert {e["floor"] for e in landings} <= {e["floor"] for e in with_piezo}


def test_odd_messages_are_counted_not_fatal() -> None:
    import numpy as np

    pipeline = DetectionPipeline()
    frames = [
        type("F", (), {"msg": Hello(), "t_s": None})(),
        type("F", (), {"msg": Piezo(0, np.zeros((4, 3), np.uint16)), "t_s": 0.0})(),
        type("F", (), {"msg": Load(0, 0xFF, np.zeros(40, np.int32)), "t_s": 0.0})(),
        type("F", (), {"msg": Piezo(2000, np.zeros((4, 8), np.uint16)), "t_s": None})(),
    ]
    assert pipeline.feed(frames) == []
    assert pipeline.stats.odd_shape_messages == 1  # the 40-channel LOAD
    assert pipeline.stats.untimed_messages == 1
    assert pipeline.finish() == []
