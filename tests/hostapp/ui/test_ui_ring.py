"""Ring buffers and peak downsampling of the live view (plain numpy)."""

from __future__ import annotations

import numpy as np
import pytest

from hostapp.ui.live.ring import RingBuffer, clip_to_window, peak_downsample


@pytest.mark.parametrize("chunk", [1, 7, 100, 999])
def test_ring_keeps_the_newest_samples_in_order(chunk: int) -> None:
    ring = RingBuffer(250, 3)
    t = np.arange(1000, dtype=float)
    v = np.stack([t, -t, t * 2], axis=1)
    for start in range(0, 1000, chunk):
        ring.extend(t[start : start + chunk], v[start : start + chunk])
    times, values = ring.snapshot()
    assert len(ring) == 250
    np.testing.assert_array_equal(times, t[-250:])
    np.testing.assert_array_equal(values, v[-250:].astype(np.float32))


def test_ring_before_it_is_full() -> None:
    ring = RingBuffer(10, 1)
    ring.extend([0.0, 1.0, 2.0], [[5], [6], [7]])
    times, values = ring.snapshot()
    np.testing.assert_array_equal(times, [0, 1, 2])
    np.testing.assert_array_equal(values[:, 0], [5, 6, 7])


def test_peak_downsampling_keeps_a_one_sample_spike() -> None:
    t = np.arange(20_000) / 2000.0
    v = np.full(20_000, 512.0)
    v[12_345] = 1023.0
    v[4_321] = 3.0
    dt, dv = peak_downsample(t, v, max_points=500)
    assert dv.size <= 500
    assert dv.max() == 1023.0 and dv.min() == 3.0
    assert np.all(np.diff(dt) >= 0)


def test_short_input_is_returned_as_is() -> None:
    t = np.arange(10.0)
    dt, dv = peak_downsample(t, t * 3, max_points=500)
    np.testing.assert_array_equal(dv, t * 3)


def test_clip_to_window() -> None:
    t = np.arange(10.0)
    ct, cv = clip_to_window(t, t[:, None], t_from_s=6.5)
    np.testing.assert_array_equal(ct, [7, 8, 9])
    assert cv.shape == (3, 1)
