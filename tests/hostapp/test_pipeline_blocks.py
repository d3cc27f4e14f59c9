"""Replaying recordings through arrays (``RecordingReader.blocks`` + ``feed_block``)
gives exactly what message objects (``chunks`` + ``feed``) give, on every kind of stream."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hostapp.eval.sessions import SessionSpec, record_session
from hostapp.pipeline import DetectionPipeline
from hostapp.protocol import Hello, Load, Piezo, Status, encode_frame
from hostapp.recording import RecordingReader


def _by_messages(path: Path, *, with_load: bool, chunk_size: int) -> tuple[Any, ...]:
    reader = RecordingReader(path, chunk_size=chunk_size)
    pipeline = DetectionPipeline()
    events = []
    for chunk in reader.chunks():
        if not with_load:
            chunk = [f for f in chunk if not isinstance(f.msg, Load)]
        events += pipeline.feed(chunk)
    events += pipeline.finish()
    return [e.to_json() for e in events], reader.stats.as_dict(), vars(pipeline.stats)


def _by_blocks(path: Path, *, with_load: bool, chunk_size: int) -> tuple[Any, ...]:
    reader = RecordingReader(path, chunk_size=chunk_size)
    pipeline = DetectionPipeline()
    events = []
    for block in reader.blocks():
        events += pipeline.feed_block(block, with_load=with_load)
    events += pipeline.finish()
    return [e.to_json() for e in events], reader.stats.as_dict(), vars(pipeline.stats)


@pytest.fixture(scope="module")
def recordings(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("blocks")
    paths = {}
    specs = {
        "single": SessionSpec("single", 7, 71, 30.0),
        "damaged": SessionSpec("single", 8, 81, 30.0, bit_flip_prob=0.01, drop_prob=0.01),
        # The device clock wraps 10 s in.
        "wrap": SessionSpec("single", 9, 91, 30.0, clock_offset_us=2**32 - 10_000_000),
        "rapid": SessionSpec("rapid", 10, 101, 40.0),
        # A thrown cube stops on a plate and knocks its cube down; the stop
        # is told once the plate is weighed still (``Landing.knocked_down_to``).
        "stop": SessionSpec("rapid", 12, 121, 40.0),
    }
    for name, spec in specs.items():
        paths[name] = folder / f"{name}.bin"
        record_session(spec, paths[name])
    # Begins mid-frame, long after the HELLO: rates are measured, not read.
    data = paths["single"].read_bytes()
    paths["mid-frame"] = folder / "mid.bin"
    paths["mid-frame"].write_bytes(data[len(data) // 3 + 7 :])
    return paths


@pytest.mark.parametrize("name", ["single", "damaged", "wrap", "mid-frame"])
@pytest.mark.parametrize("with_load", [True, False])
def test_blocks_give_what_messages_give(
    recordings: dict[str, Path], name: str, with_load: bool
) -> None:
    # A small chunk size puts many block boundaries mid-frame and mid-drop.
    reference = _by_messages(recordings[name], with_load=with_load, chunk_size=5000)
    got = _by_blocks(recordings[name], with_load=with_load, chunk_size=5000)
    assert got == reference
    assert any(e["event"] == "landing" for e in reference[0]) or name == "mid-frame"


@pytest.mark.parametrize("name", ["rapid", "damaged", "stop"])
def test_byte_chunk_sizes_do_not_change_the_events(recordings: dict[str, Path], name: str) -> None:
    # Read a few hundred bytes at a time, as from a serial port, or in one
    # go: the same events, times and confidences. The cube size the fusion
    # learns reaches the load processors at fixed stream times, not when a
    # read happens to end.
    reference = _by_blocks(recordings[name], with_load=True, chunk_size=1 << 20)
    for chunk_size in (333, 4096, 50_000):
        got = _by_blocks(recordings[name], with_load=True, chunk_size=chunk_size)
        assert got[0] == reference[0], chunk_size
    assert sum(e["event"] == "landing" for e in reference[0]) >= 5
    if name == "stop":
        assert any("knocked_down_to" in e for e in reference[0])


def test_byte_chunk_sizes_do_not_change_what_is_heard_without_load_cells(
    recordings: dict[str, Path],
) -> None:
    # A quick series heard by ear alone: landings are told as the next
    # throw's strikes arrive, cutting a cube's bounces short, and the drops
    # end where their silence does, however the bytes were read.
    reference = _by_blocks(recordings["stop"], with_load=False, chunk_size=1 << 20)
    for chunk_size in (333, 4096):
        got = _by_blocks(recordings["stop"], with_load=False, chunk_size=chunk_size)
        assert got[0] == reference[0], chunk_size
    assert sum(e["event"] == "landing" for e in reference[0]) >= 5
    pipeline = DetectionPipeline()
    for block in RecordingReader(recordings["stop"]).blocks():
        pipeline.feed_block(block, with_load=False)
    pipeline.finish()
    assert pipeline.detector is not None
    assert pipeline.detector.diagnostics().fusion.bounces_cut_short >= 1


def test_messages_of_several_shapes_take_the_slow_road(tmp_path: Path) -> None:
    # PIEZO with 8 and with 4 channels, LOAD with 8 and 40 (odd) channels,
    # a STATUS between them: every shape is counted as the message path counts it.
    frames = [encode_frame(Hello(piezo_rate_hz=2000, load_rate_hz=80), 0)]
    seq = 1
    for k in range(400):
        t_us = k * 5000
        channels = 4 if k % 7 == 3 else 8
        samples = np.full((10, channels), 512 + k % 5, dtype=np.uint16)
        frames.append(encode_frame(Piezo(t_us, samples), seq))
        seq += 1
        if k % 2 == 0:
            values = np.arange(40 if k % 50 == 10 else 8, dtype=np.int32) * 1000
            frames.append(encode_frame(Load(t_us, 0xFF, values), seq))
            seq += 1
        if k % 100 == 0:
            frames.append(encode_frame(Status(k, 0, 0, 0, 10, 0), seq))
            seq += 1
    path = tmp_path / "shapes.bin"
    path.write_bytes(b"".join(frames))
    reference = _by_messages(path, with_load=True, chunk_size=3000)
    got = _by_blocks(path, with_load=True, chunk_size=3000)
    assert got == reference
    assert reference[2]["odd_shape_messages"] == 8  # the 40-channel LOADs (k = 10, 60, ...)
    assert reference[1]["frames_ok"] == len(frames)


def test_piezo_messages_of_any_number_of_sets_go_as_arrays(tmp_path: Path) -> None:
    # A firmware that sends whatever sets it has: 1 to 14 a message.
    rng = np.random.default_rng(5)
    frames = [encode_frame(Hello(piezo_rate_hz=2000, load_rate_hz=80), 0)]
    seq, t_us = 1, 0
    for k in range(600):
        sets = int(rng.integers(1, 15))
        samples = (512 + rng.integers(-3, 4, size=(sets, 8))).astype(np.uint16)
        samples[:, k % 8] += np.uint16(k % 50)
        frames.append(encode_frame(Piezo(t_us, samples), seq))
        seq += 1
        t_us += sets * 500
        if k % 6 == 0:
            frames.append(encode_frame(Load(t_us, 0xFF, np.arange(8, dtype=np.int32)), seq))
            seq += 1
    path = tmp_path / "sets.bin"
    path.write_bytes(b"".join(frames))
    blocks = list(RecordingReader(path, chunk_size=4000).blocks())
    arrays = [b.piezo_arrays() for b in blocks if b.piezo]
    assert arrays and all(a is not None for a in arrays)
    t, sets, samples = arrays[0]
    by_message = [f.msg for f in blocks[0].as_frames() if isinstance(f.msg, Piezo)]
    assert sets.tolist() == [m.samples.shape[0] for m in by_message]
    assert np.array_equal(samples, np.concatenate([m.samples for m in by_message]))
    reference = _by_messages(path, with_load=True, chunk_size=4000)
    assert _by_blocks(path, with_load=True, chunk_size=4000) == reference
    assert reference[2]["odd_shape_messages"] == 0
