"""Property tests of the codec: COBS against the reference package, round trips,
chunking, and damage that must never raise and must cost only the damaged frames."""

from __future__ import annotations

import numpy as np
import pytest
from cobs import cobs as reference_cobs
from hypothesis import given, settings
from hypothesis import strategies as st

from hostapp.protocol import (
    Ack,
    CobsError,
    FrameDecoder,
    Hello,
    Load,
    Message,
    Piezo,
    Ping,
    Pong,
    Start,
    Status,
    cobs_decode,
    cobs_encode,
    encode_frame,
)
from hostapp.protocol.crc import crc16, crc16_rows
from hostapp.protocol.decoder import _cobs_decode_piece, byte_rows
from hostapp.protocol.messages import BodyError

FAST = settings(max_examples=40, deadline=None)

u16 = st.integers(0, 0xFFFF)
u32 = st.integers(0, 0xFFFFFFFF)
u8 = st.integers(0, 0xFF)


@st.composite
def piezo_messages(draw: st.DrawFn) -> Piezo:
    n = draw(st.integers(1, 14))
    channels = draw(st.integers(1, 8))
    seed = draw(st.integers(0, 2**32 - 1))
    samples = np.random.default_rng(seed).integers(0, 1024, (n, channels)).astype(np.uint16)
    return Piezo(draw(u32), samples)


@st.composite
def load_messages(draw: st.DrawFn) -> Load:
    values = draw(st.lists(st.integers(-(2**23), 2**23 - 1), min_size=1, max_size=8))
    return Load(draw(u32), draw(u8), np.array(values, dtype=np.int32))


messages: st.SearchStrategy[Message] = st.one_of(
    piezo_messages(),
    load_messages(),
    st.builds(Status, u32, u16, u16, u16, u8, u8),
    st.builds(Ack, u8, u16, u8),
    st.builds(Pong, u32, u32),
    st.builds(Ping, u32),
    st.builds(Start, u8),
    st.builds(Hello, u8, u8, u8, u8, u8, u8, u16, u16, u8, st.binary(min_size=8, max_size=8)),
)


@pytest.mark.parametrize("size", [0, 1, 2, 100, 253, 254, 255, 300, 600])
def test_cobs_matches_reference_package_on_random_data(size: int) -> None:
    rng = np.random.default_rng(size)
    for zero_fraction in (0.0, 0.05, 0.5, 1.0):
        data = rng.integers(1, 256, size).astype(np.uint8)
        data[rng.random(size) < zero_fraction] = 0
        raw = data.tobytes()
        assert cobs_encode(raw) == reference_cobs.encode(raw)
        assert cobs_decode(reference_cobs.encode(raw)) == raw


@FAST
@given(st.binary(max_size=700))
def test_cobs_round_trip_and_reference(data: bytes) -> None:
    encoded = cobs_encode(data)
    assert 0 not in encoded
    assert encoded == reference_cobs.encode(data)
    assert cobs_decode(encoded) == data


@FAST
@given(st.binary(min_size=1, max_size=300))
def test_cobs_decode_accepts_exactly_what_the_reference_accepts(data: bytes) -> None:
    try:
        expected: bytes | None = reference_cobs.decode(data)
    except reference_cobs.DecodeError:
        expected = None
    try:
        got: bytes | None = cobs_decode(data)
    except CobsError:
        got = None
    assert got == expected


@FAST
@given(st.lists(messages, min_size=1, max_size=20), st.integers(0, 0xFFFF))
def test_round_trip(msgs: list[Message], first_seq: int) -> None:
    wire = b"".join(encode_frame(m, first_seq + i) for i, m in enumerate(msgs))
    decoder = FrameDecoder()
    frames = decoder.feed(wire)
    assert [f.msg for f in frames] == msgs
    assert [f.seq for f in frames] == [(first_seq + i) % 65536 for i in range(len(msgs))]
    assert decoder.stats.lost_messages == 0
    assert decoder.stats.damaged_frames == 0


@FAST
@given(st.lists(messages, min_size=1, max_size=12), st.lists(st.integers(1, 400), max_size=30))
def test_any_chunking_gives_the_same_messages(msgs: list[Message], cuts: list[int]) -> None:
    wire = b"".join(encode_frame(m, i) for i, m in enumerate(msgs))
    decoder = FrameDecoder()
    frames = []
    position = 0
    for size in cuts:
        frames += decoder.feed(wire[position : position + size])
        position += size
    frames += decoder.feed(wire[position:])
    assert [f.msg for f in frames] == msgs
    assert decoder.stats.bytes_in == len(wire)


Damage = list[tuple[str, int, int]]


def damage_list(max_size: int) -> st.SearchStrategy[Damage]:
    kinds = st.sampled_from(["flip", "insert", "delete"])
    return st.lists(st.tuples(kinds, st.integers(0, 10**6), u8), max_size=max_size)


def _apply(wire: bytearray, kind: str, where: int, value: int) -> int:
    """Damage ``wire`` in place; returns the position hit."""
    position = where % len(wire)
    if kind == "flip":
        wire[position] ^= value or 1
    elif kind == "insert":
        wire.insert(position, value)
    else:
        del wire[position]
    return position


@settings(max_examples=80, deadline=None)
@given(
    st.lists(messages, min_size=3, max_size=12),
    damage_list(6),
)
def test_damage_never_raises_and_loses_only_damaged_frames(
    msgs: list[Message], damage: Damage
) -> None:
    frames = [encode_frame(m, i) for i, m in enumerate(msgs)]
    wire = bytearray(b"".join(frames))
    starts = np.cumsum([0] + [len(f) for f in frames])
    touched: set[int] = set()
    for kind, where, value in damage:
        position = _apply(wire, kind, where, value)
        touched.add(int(np.searchsorted(starts, position, side="right")) - 1)
        # Later offsets refer to the damaged wire; keep frame starts roughly right.
        delta = {"flip": 0, "insert": 1, "delete": -1}[kind]
        starts[starts > position] += delta
    # Damage at a frame boundary can also spoil the neighbour: allow one each side.
    suspect = {i + d for i in touched for d in (-1, 0, 1)}
    decoder = FrameDecoder()
    decoded = decoder.feed(bytes(wire))
    got = {f.seq for f in decoded}
    for index in range(len(msgs)):
        if index not in suspect:
            assert index in got
    for frame in decoded:
        assert frame.msg == msgs[frame.seq] or frame.seq in suspect


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=2000), st.integers(1, 64))
def test_decoder_never_raises_on_garbage(data: bytes, chunk: int) -> None:
    decoder = FrameDecoder()
    for start in range(0, len(data), chunk):
        decoder.feed(data[start : start + chunk])
    assert decoder.stats.bytes_in == len(data)


def test_oversize_run_without_delimiter_is_dropped_in_pieces() -> None:
    decoder = FrameDecoder()
    good = encode_frame(Status(1), 0)
    decoder.feed(good)
    for _ in range(10):
        assert decoder.feed(b"\x55" * 100) == []
    frames = decoder.feed(b"\x00" + encode_frame(Status(2), 1))
    assert [f.msg for f in frames] == [Status(2)]
    assert decoder.stats.oversize == 1


def test_encoding_rejects_out_of_range_fields() -> None:
    with pytest.raises(BodyError):
        encode_frame(Load(0, 0xFF, np.array([2**23], dtype=np.int32)), 0)
    with pytest.raises(BodyError):
        encode_frame(Piezo(0, np.zeros((15, 8), dtype=np.uint16)), 0)
    with pytest.raises(BodyError):
        encode_frame(Status(-1), 0)
    with pytest.raises(BodyError):
        encode_frame(Hello(device_id=b"short"), 0)


@given(st.binary(max_size=300).filter(lambda b: 0 not in b))
@settings(max_examples=500, deadline=None)
def test_decoder_fast_cobs_agrees_with_the_reference_on_any_piece(piece: bytes) -> None:
    # The decoder uses the cobs package's C decoder; the reference is ours.
    try:
        expected = cobs_decode(piece)
    except CobsError:
        expected = b""
    assert _cobs_decode_piece(piece) == expected


@settings(max_examples=150, deadline=None)
@given(
    st.lists(messages, min_size=1, max_size=30),
    damage_list(12),
    st.integers(0, 40),
)
def test_frames_decoded_together_are_those_decoded_one_by_one(
    msgs: list[Message], damage: Damage, skip: int
) -> None:
    # The decoder checks the PIEZO and LOAD frames of a chunk together with
    # numpy; each frame alone through the per-frame path must give the same
    # frames and counters, damaged or not, from a stream begun mid-frame.
    wire = bytearray(b"".join(encode_frame(m, i) for i, m in enumerate(msgs)))
    for kind, where, value in damage:
        _apply(wire, kind, where, value)
    data = bytes(wire[skip:]) + b"\x00"  # every piece ends within the data
    together = FrameDecoder()
    got = together.feed_raw(data)
    one_by_one = FrameDecoder()
    expected = []
    for i, piece in enumerate(data.split(b"\x00")[:-1]):
        frame = one_by_one._decode_piece(piece, i == 0) if piece else None
        if frame is not None:
            expected.append(frame)
    assert got == expected
    counters = together.stats.as_dict()
    del counters["bytes_in"]
    reference = one_by_one.stats.as_dict()
    del reference["bytes_in"]
    assert counters == reference


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 80), st.integers(1, 30), st.integers(0, 2**32 - 1))
def test_crc_of_many_rows_at_once_is_the_crc_of_each(length: int, rows: int, seed: int) -> None:
    data = np.random.default_rng(seed).integers(0, 256, (rows, length), dtype=np.uint8)
    assert crc16_rows(data).tolist() == [crc16(row.tobytes()) for row in data]


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 300), st.integers(0, 50), st.integers(0, 2**32 - 1))
def test_byte_rows_are_the_bytes_from_each_start(length: int, rows: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    data = rng.integers(0, 256, length + 400, dtype=np.uint8)
    start = rng.integers(0, data.size - length + 1, rows).astype(np.int64)
    got = byte_rows(data, start, length)
    assert got.shape == (rows, length)
    assert [row.tobytes() for row in got] == [data[a : a + length].tobytes() for a in start]
