"""Unwrapping the u32 device clock."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from hostapp.protocol import ClockUnwrapper, unwrap_t_us


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
