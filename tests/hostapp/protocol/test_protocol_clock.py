"""Unwrapping the u32 device clock."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from hostapp.protocol import ClockUnwrapper, Piezo, StreamClock, unwrap_t_us


def test_wrap_is_unwrapped_forward() -> None:
    clock = ClockUnwrapper()
    assert clock.unwrap(2**32 - 1000) == 2**32 - 1000
    assert clock.unwrap(500) == 2**32 + 500
    assert clock.unwrap(2**31 + 10) == 2**32 + 2**31 + 10
    assert clock.unwrap(5) == 2**33 + 5


def test_small_steps_back_stay_small() -> None:
    clock = ClockUnwrapper()
    clock.unwrap(200)
    assert clock.unwrap(2**32 - 100) == -100
    assert clock.unwrap(300) == 300


def test_reset_forgets() -> None:
    clock = ClockUnwrapper()
    clock.unwrap(2**32 - 10)
    clock.unwrap(10)
    clock.reset()
    assert clock.unwrap(7) == 7


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 2**32 - 1), st.lists(st.integers(-(2**20), 2**30), max_size=50))
def test_vectorised_equals_streaming_and_truth(start: int, steps: list[int]) -> None:
    truth = np.cumsum([start, *steps], dtype=np.int64)
    raw = truth % 2**32
    clock = ClockUnwrapper()
    streamed = [clock.unwrap(int(t)) for t in raw]
    assert streamed == list(unwrap_t_us(raw))
    assert list(unwrap_t_us(raw)) == list(truth)


# A stream's clock as damage leaves it: steps of a few ms, with now and then
# a gap (bytes lost), a restart near zero (HELLO lost), a lone wild value (a
# damaged frame whose CRC passed) or a small step back (a LOAD stamped before
# the PIEZO sent ahead of it).
_STEP = st.one_of(
    st.integers(0, 20_000).map(lambda d: ("step", d)),
    st.integers(1_000_001, 600_000_000).map(lambda d: ("step", d)),
    st.integers(0, 50_000).map(lambda t: ("restart", t)),
    st.integers(0, 2**32 - 1).map(lambda t: ("wild", t)),
    st.integers(1, 5_000).map(lambda d: ("back", d)),
)


@settings(max_examples=150, deadline=None)
@given(
    st.integers(0, 2**32 - 1),
    st.lists(_STEP, max_size=60),
    st.lists(st.integers(0, 60), max_size=4),
)
def test_stream_clock_array_path_equals_message_path_cut_anywhere(
    start: int, steps: list[tuple[str, int]], cuts: list[int]
) -> None:
    raw, now = [start], start
    for kind, value in steps:
        if kind == "step":
            now += value
        elif kind == "restart":
            now = value
        elif kind == "back":
            now -= value
        raw.append(now % 2**32 if kind != "wild" else value)
    one_by_one = StreamClock()
    samples = np.zeros((1, 8), dtype=np.uint16)
    want = [one_by_one.stamp(1, Piezo(t, samples)) for t in raw]
    arrays = StreamClock()
    edges = sorted({0, len(raw), *(c for c in cuts if c < len(raw))})
    pieces = [np.array(raw[a:b], dtype=np.int64) for a, b in zip(edges, edges[1:], strict=False)]
    got = np.concatenate([arrays.stamp_timed(piece) for piece in pieces])
    assert [None if np.isnan(g) else g for g in got] == want
    assert (arrays.outliers, arrays.restarts_unannounced) == (
        one_by_one.outliers,
        one_by_one.restarts_unannounced,
    )
    # stream time never runs back by a second or more
    times = [t for t in want if t is not None]
    assert all(b > max(times[: i + 1]) - 1.0 for i, b in enumerate(times[1:]))
