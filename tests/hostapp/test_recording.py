"""Reading recordings into frames and arrays, with stream time per contract."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from hostapp.errors import RecordingError
from hostapp.protocol import Hello, Load, Message, Piezo, Status, StreamClock, encode_frame
from hostapp.recording import RecordingReader, read_recording

RATE = 2500  # deliberately not the nominal 2000 so the test sees HELLO is used


def synthetic_stream(
    t0_us: int, n_frames: int, *, hello: bool = True, rate: int = RATE
) -> tuple[bytes, np.ndarray, list[Load]]:
    rng = np.random.default_rng(t0_us % 1000)
    msgs: list[Message] = []
    if hello:
        msgs.append(Hello(piezo_rate_hz=rate, device_id=b"synthtwr"))
    sets = rng.integers(0, 1024, (n_frames * 10, 8)).astype(np.uint16)
    loads = []
    period_us = 10 * 1_000_000 // rate
    for i in range(n_frames):
        t_us = (t0_us + i * period_us) % 2**32
        msgs.append(Piezo(t_us, sets[10 * i : 10 * i + 10]))
        if i % 3 == 1:
            load = Load((t_us + 123) % 2**32, 0b1011_0111,
                        rng.integers(-(2**23), 2**23, 8).astype(np.int32))
            loads.append(load)
            msgs.append(load)
        if i % 50 == 0:
            msgs.append(Status(i))
    wire = b"".join(encode_frame(m, seq) for seq, m in enumerate(msgs))
    return wire, sets, loads


@pytest.mark.parametrize("t0_us", [0, 2**32 - 30_000])
def test_arrays_and_stream_time(tmp_path: Path, t0_us: int) -> None:
    wire, sets, loads = synthetic_stream(t0_us, 40)
    path = tmp_path / "rec.bin"
    path.write_bytes(wire)
    rec = read_recording(path, chunk_size=97)
    assert rec.hello is not None and rec.piezo_rate_hz == RATE
    np.testing.assert_array_equal(rec.piezo, sets)
    np.testing.assert_allclose(rec.piezo_t_s, np.arange(len(sets)) / RATE, atol=1e-9)
    np.testing.assert_array_equal(rec.load, np.stack([m.values for m in loads]))
    first_load_us = (loads[0].t_us - t0_us) % 2**32
    np.testing.assert_allclose(
        rec.load_t_s, first_load_us / 1e6 + np.arange(len(loads)) * 3 * 10 / RATE, atol=1e-9
    )
    assert rec.load_valid[0].tolist() == [True, True, True, False, True, True, False, True]
    assert len(rec.status) == 1
    assert rec.stats.frames_ok == len(rec.frames)
    assert rec.stats.damaged_frames == 0 and rec.stats.lost_messages == 0


def test_nominal_rate_without_hello_and_mid_frame_start(tmp_path: Path) -> None:
    wire, sets, _ = synthetic_stream(1000, 20, hello=False, rate=2000)
    path = tmp_path / "rec.bin"
    path.write_bytes(wire[60:])  # cut inside the first PIEZO frame
    rec = read_recording(path)
    assert rec.hello is None and rec.piezo_rate_hz == 2000
    assert rec.stats.partial_start == 1 and rec.stats.damaged_frames == 0
    np.testing.assert_array_equal(rec.piezo, sets[10:])
    assert rec.piezo_t_s[0] == 0.0


def test_incremental_reader_equals_whole_read(tmp_path: Path) -> None:
    wire, _, _ = synthetic_stream(77, 30)
    path = tmp_path / "rec.bin"
    path.write_bytes(wire)
    whole = read_recording(path).frames
    reader = RecordingReader(path, chunk_size=13)
    chunks = list(reader.chunks())
    assert len(chunks) == -(-len(wire) // 13)
    assert [f for c in chunks for f in c] == whole
    assert reader.stats.bytes_in == len(wire)


def test_stream_clock_carries_on_after_a_reboot() -> None:
    clock = StreamClock()
    samples = np.zeros((1, 8), dtype=np.uint16)
    assert clock.stamp(0, Hello()) is None
    assert clock.stamp(1, Status(5)) is None
    assert clock.stamp(2, Piezo(2**32 - 500, samples)) == 0.0
    assert clock.stamp(3, Piezo(1500, samples)) == pytest.approx(0.002)
    # Reboot: the device clock starts again, at its time since boot, which
    # had at least passed since the last stamp before (the device ran then).
    assert clock.stamp(0, Hello()) is None
    assert clock.stamp(1, Piezo(400_000, samples)) == pytest.approx(0.402)
    assert clock.stamp(2, Piezo(401_000, samples)) == pytest.approx(0.403)
    assert clock.origin_us == 2**32 - 500


def test_stream_clock_takes_a_clock_running_on_after_a_hello_for_no_reboot() -> None:
    # A HELLO with seq 0 whose device clock runs on (no restart: the sequence
    # number came round), or one reading long after boot (bytes of another
    # session): stream time carries on from the last time seen.
    samples = np.zeros((1, 8), dtype=np.uint16)
    for first_after in (5_002_000, 90_000_000):
        clock = StreamClock()
        assert clock.stamp(1, Piezo(5_000_000, samples)) == 0.0
        assert clock.stamp(2, Piezo(5_001_000, samples)) == pytest.approx(0.001)
        assert clock.stamp(0, Hello()) is None
        assert clock.stamp(1, Piezo(first_after, samples)) == pytest.approx(0.001)
        assert clock.stamp(2, Piezo(first_after + 1000, samples)) == pytest.approx(0.002)


def _clock_both_ways(raw: list[int]) -> tuple[list[float | None], StreamClock]:
    """Stream times one message at a time, checked against the array path cut anywhere."""
    one_by_one = StreamClock()
    samples = np.zeros((1, 8), dtype=np.uint16)
    times = [one_by_one.stamp(seq + 1, Piezo(t, samples)) for seq, t in enumerate(raw)]
    want = np.array([np.nan if t is None else t for t in times])
    for cut in range(len(raw) + 1):
        arrays = StreamClock()
        got = np.concatenate(
            [arrays.stamp_timed(np.array(raw[:cut])), arrays.stamp_timed(np.array(raw[cut:]))]
        )
        np.testing.assert_array_equal(got, want)
        assert (arrays.restarts_unannounced, arrays.outliers) == (
            one_by_one.restarts_unannounced,
            one_by_one.outliers,
        )
    return times, one_by_one


def test_stream_clock_takes_a_clock_gone_back_for_a_restart_whose_hello_was_lost() -> None:
    # 0.3 s of messages, then the device clock starts again near zero with no
    # HELLO seen (lost in damage), then a LOAD stamped a little before the
    # PIEZO sent ahead of it (which stays a small step back). The first
    # message of the new clock stays untimed: alone, it could be damage.
    # The new clock is the time since boot, which passed since 0.3 s at least.
    raw = [5_000_000, 5_100_000, 5_300_000, 40_000, 140_000, 139_000, 240_000]
    times, clock = _clock_both_ways(raw)
    assert times == [0.0, 0.1, 0.3, None, pytest.approx(0.44), pytest.approx(0.439),
                     pytest.approx(0.54)]
    assert (clock.restarts_unannounced, clock.outliers) == (1, 0)


@pytest.mark.parametrize("flip", [1 << 31, 1 << 26, 1 << 22])
def test_stream_clock_drops_a_lone_message_whose_clock_left_the_stream(flip: int) -> None:
    # A damaged frame whose CRC still passed, its t_us with one bit flipped
    # (ahead or back by 4 s to 36 min): it is dropped, and moves no later time.
    raw = [5_000_000 + 10_000 * k for k in range(10)]
    raw[5] ^= flip
    times, clock = _clock_both_ways(raw)
    assert times[5] is None
    assert times[:5] + times[6:] == pytest.approx([0.01 * k for k in (0, 1, 2, 3, 4, 6, 7, 8, 9)])
    assert (clock.restarts_unannounced, clock.outliers) == (0, 1)


def test_stream_clock_follows_a_jump_ahead_over_lost_bytes() -> None:
    # Five seconds of bytes lost: the message after the gap is held, then the
    # next one shows the clock did jump, and time goes on from there.
    raw = [5_000_000, 5_010_000, 10_000_000, 10_010_000, 10_020_000, 9_990_000]
    times, clock = _clock_both_ways(raw)
    assert times == [0.0, 0.01, None, pytest.approx(5.01), pytest.approx(5.02), 4.99]
    assert (clock.restarts_unannounced, clock.outliers) == (0, 0)


def test_stream_clock_two_damaged_frames_in_a_row_and_one_at_the_end() -> None:
    raw = [1_000_000, 1_010_000, 900_000_000, 3_000_000_000, 1_020_000, 1_030_000, 4_000_000_000]
    times, clock = _clock_both_ways(raw)
    assert times == [0.0, 0.01, None, None, pytest.approx(0.02), pytest.approx(0.03), None]
    assert clock.outliers == 2  # the one held at the end is not judged


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda p: p, "does not exist"),
        (lambda p: (p.write_bytes(b""), p)[1], "is empty"),
        (lambda p: (p.mkdir(), p)[1], "is a directory"),
        (lambda p: (p.write_bytes(bytes(range(1, 200)) * 50), p)[1], "no decodable"),
    ],
)
def test_unusable_files_give_one_clear_error(tmp_path: Path, make: object, words: str) -> None:
    path = make(tmp_path / "rec.bin")  # type: ignore[operator]
    with pytest.raises(RecordingError, match=words) as info:
        read_recording(path)
    assert "\n" not in str(info.value)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_unreadable_file(tmp_path: Path) -> None:
    path = tmp_path / "rec.bin"
    path.write_bytes(b"\x01\x02\x00")
    path.chmod(0)
    with pytest.raises(RecordingError, match="cannot be read"):
        read_recording(path)


def test_byte_ranges_are_gathered_in_the_order_given_whatever_their_place_in_the_buffer() -> None:
    from hostapp.recording import _gather

    data = np.arange(40, dtype=np.uint8)
    start = np.array([2, 10, 11, 30], dtype=np.int64)
    length = np.array([3, 1, 4, 2], dtype=np.int64)  # the 2nd and 3rd ranges touch
    assert _gather(data, start, length).tolist() == [2, 3, 4, 10, 11, 12, 13, 14, 30, 31]
    # Out of buffer order (a frame decoded on its own, joined after the others).
    start = np.array([30, 2, 10], dtype=np.int64)
    length = np.array([2, 3, 1], dtype=np.int64)
    assert _gather(data, start, length).tolist() == [30, 31, 2, 3, 4, 10]
    assert _gather(data, start[:1], length[:1]).tolist() == [30, 31]
