"""The piezo high-pass without scipy.signal: the same filter, the same output."""

import subprocess
import sys

import numpy as np
import pytest
from scipy.signal import butter, lfilter, lfilter_zi

from dsp.detect import biquad


@pytest.mark.parametrize(("corner", "rate"), [(150.0, 2000.0), (150.0, 4000.0), (80.0, 500.0)])
def test_the_coefficients_and_start_are_scipys(corner: float, rate: float) -> None:
    b, a = biquad.butter_highpass(corner, rate)
    want_b, want_a = butter(2, corner / (rate / 2), btype="highpass")
    assert np.allclose(b, want_b, rtol=1e-12) and np.allclose(a, want_a, rtol=1e-12)
    assert np.allclose(biquad.steady_state(b, a), lfilter_zi(want_b, want_a), rtol=1e-12)


def test_the_filter_is_lfilter_block_by_block() -> None:
    rng = np.random.default_rng(3)
    x = 512.0 + rng.normal(0.0, 20.0, (3000, 8))
    b, a = biquad.butter_highpass(150.0, 2000.0)
    zi = biquad.steady_state(b, a)[:, None] * x[0][None, :]
    want, _ = lfilter(b, a, x, axis=0, zi=zi)
    parts, state = [], zi
    for block in np.split(x, [1, 17, 1000, 2999]):
        y, state = biquad.linear_filter(b, a, block, 0, state)
        parts.append(y)
    assert np.array_equal(np.concatenate(parts), want)


def test_a_filter_that_does_not_compute_the_recursion_is_not_used() -> None:
    def wrong(b, a, x, axis, zi):  # type: ignore[no-untyped-def]
        return x, zi

    assert not biquad._agrees(wrong)
    assert biquad._agrees(biquad._scipy_filter())


def test_a_corner_outside_the_band_is_refused() -> None:
    with pytest.raises(ValueError, match="corner"):
        biquad.butter_highpass(1200.0, 2000.0)


def test_detect_starts_without_importing_scipy_signal_or_numpy_random() -> None:
    # The compiled filter loads here, so ``towerear detect`` starts in a
    # third of the time ``import scipy.signal`` alone would take; the test
    # of that filter draws no random numbers, so numpy.random stays out too.
    assert biquad._compiled_filter() is not None
    code = ("import sys, hostapp.cli.detect; "
            "print('scipy.signal' in sys.modules, 'numpy.random' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "False False"
