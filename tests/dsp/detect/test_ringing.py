"""The ringing-window tests: balanced windows, the oscillation fit, fitted windows."""

import numpy as np
import pytest

from dsp.detect.ringing import balanced_windows, fitted_windows, oscillation_fit


def test_the_oscillation_fit_finds_the_load_a_damped_ring_settles_to() -> None:
    i = np.arange(12, dtype=np.float64)
    rings = [
        1000.0 + 500.0 * 0.9**i * np.cos(2.1 * i + 0.3),  # fast ring
        -200.0 + 80.0 * 0.95**i * np.sin(0.7 * i),  # slow ring, negative load
    ]
    level, residual, ok = oscillation_fit(np.array(rings))
    assert ok.all()
    assert level == pytest.approx([1000.0, -200.0], abs=1e-6)
    assert residual.max() < 1e-6
    # A plate sinking without a swing, a straight creep and an impact spike
    # are no oscillation: no settled load is given for them.
    sink = 1000.0 - 400.0 * 0.7**i
    creep = 50.0 * i
    spike = np.zeros(12)
    spike[5] = 900.0
    _, residual, ok = oscillation_fit(np.array([sink, creep, spike]))
    assert not ok[0] and not ok[1]
    assert residual[2] > 0.1



def test_the_oscillation_fit_is_the_least_squares_fit_of_each_window() -> None:
    # The fit solves its normal equations in closed form; a general least
    # squares solver must find the same recurrence on noisy, flat and
    # short windows alike, each row on its own.
    rng = np.random.default_rng(7)
    rows = rng.normal(0.0, 1.0, (40, 10)).cumsum(axis=1) * rng.uniform(1, 1e5, (40, 1))
    rows[0] = 123.0  # flat: no swing
    rows[1, 4] += 1e4  # a spike
    i = np.arange(10)
    swing = rng.uniform(10, 1e4, (18, 1)) * rng.uniform(0.6, 0.99, (18, 1)) ** i
    rows[2:20] = (rng.uniform(-1e5, 1e5, (18, 1)) + rng.normal(0.0, 5.0, (18, 10))
                  + swing * np.cos(rng.uniform(0.3, 2.8, (18, 1)) * i))
    level, residual, ok = oscillation_fit(rows)
    assert ok[2:20].sum() >= 12 and not ok.all()  # both kinds are checked
    for v, lv, res, fits in zip(rows, level, residual, ok, strict=True):
        swing = np.ptp(v)
        if swing == 0:
            assert not fits
            continue
        z = (v - v.mean()) / swing
        x = np.stack([z[1:-1], z[:-2], np.ones(v.size - 2)], axis=1)
        (a1, a2, b), *_ = np.linalg.lstsq(x, z[2:], rcond=None)
        assert res == pytest.approx(np.sqrt(np.mean((x @ [a1, a2, b] - z[2:]) ** 2)), abs=1e-9)
        if abs(1 - a1 - a2) > 1e-3:
            assert lv == pytest.approx(v.mean() + swing * b / (1 - a1 - a2), rel=1e-6, abs=1e-6)
        assert fits == (a1 * a1 + 4 * a2 < 0 and -a2 < 0.98**2 and 1 - a1 - a2 >= 0.1)


def _ring(n: int, f_cycles: float, decay: float, load: float, swing: float) -> np.ndarray:
    i = np.arange(n, dtype=np.float64)
    return load + swing * decay**i * np.cos(2 * np.pi * f_cycles * i + 0.4)


def test_fitted_windows_read_a_slow_ring_that_the_balance_test_cannot() -> None:
    rng = np.random.default_rng(3)
    # 10 Hz read at 80 Hz: eight readings a period, crossing its centre too
    # seldom for a balanced window of ten.
    slow = _ring(12, 10 / 80, 0.93, 6000.0, 9000.0) + rng.normal(0, 20.0, 12)
    holds, level, spread, swing = fitted_windows(slow[None, :], np.array([20.0]))
    assert holds[0] and abs(level[0] - 6000.0) < 300.0 and spread[0] < 600.0
    assert swing[0] > 10000.0
    passes, _, _ = balanced_windows(slow[None, :10], np.array([60.0]))
    assert not passes[0]


def test_balanced_windows_pass_a_fast_ring_and_refuse_a_push_and_a_spike() -> None:
    fast = _ring(10, 27 / 80, 0.8, 6000.0, 3000.0)
    push = 6000.0 + np.linspace(0.0, 3000.0, 10)  # a hand pressing harder
    spike = np.full(10, 6000.0) + _ring(10, 27 / 80, 0.6, 0.0, 300.0)
    spike[3] += 5000.0  # an impact caught by one conversion
    passes, mean, swing = balanced_windows(np.array([fast, push, spike]), np.full(3, 60.0))
    assert passes.tolist() == [True, False, False]
    assert abs(mean[0] - 6000.0) < 0.15 * swing[0]


def test_each_fitted_window_is_judged_alone_and_its_spread_is_its_three_fits() -> None:
    rng = np.random.default_rng(8)
    windows = np.array(
        [_ring(12, f, d, 5000.0, 8000.0) for f, d in ((0.12, 0.93), (0.3, 0.85), (0.2, 0.9))]
        + [np.linspace(0.0, 900.0, 12), rng.normal(0.0, 30.0, 12)]  # a creep, a still plate
    ) + rng.normal(0.0, 15.0, (5, 12))
    noise = np.full(5, 15.0)
    holds, level, spread, swing = fitted_windows(windows, noise)
    assert holds[:3].all() and not holds[3:].any()
    for i in range(5):
        alone = fitted_windows(windows[i : i + 1], noise[i : i + 1])
        assert alone[0][0] == holds[i] and alone[1][0] == level[i] and alone[3][0] == swing[i]
        if holds[i]:
            parts = [oscillation_fit(w[None, :])[0][0]
                     for w in (windows[i], windows[i, :-2], windows[i, 2:])]
            assert spread[i] == np.ptp(parts) == alone[2][0]
