"""The shaking every load cell feels at once, taken out of the rows (``commonshake``)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.signal import butter, sosfilt

from dsp.detect.commonshake import CommonShakeCanceller
from dsp.detect.events import Landing
from dsp.detect.synthetic import SyntheticLanding, SyntheticTower
from tests.dsp.detect.fed_in_blocks import cleaned_in_random_blocks, detected, rounded

RATE_HZ = 80.0
CUBE = 9000.0
PLATE = 16 * CUBE  # a plate weighs some sixteen cubes


def _acceleration(n: int, seed: int, share: float = 0.025) -> np.ndarray:
    """A car's vertical acceleration over ``g``: band-limited, ``share`` standard deviation."""
    rng = np.random.default_rng(seed)
    sos = butter(4, [2.0, 20.0], btype="bandpass", fs=RATE_HZ, output="sos")
    a = sosfilt(sos, rng.normal(size=n + 400))[400:]
    return share * a / a.std()


def _shaken_rows(seed: int = 1, seconds: float = 30.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows of eight cells on a shaking floor, cubes landing now and then.

    Returns the readings, the readings as a still floor would give them, and
    the true load of each plate in cubes.
    """
    rng = np.random.default_rng(seed)
    n = int(seconds * RATE_HZ)
    sensitivity = rng.uniform(0.8, 1.2, 8) * np.where(np.arange(8) == 3, -1.0, 1.0)
    cubes = np.zeros((n, 8))
    for t_s, level in [(5.0, 2), (9.0, 6), (9.4, 6), (14.0, 0), (20.0, 5), (20.2, 3)]:
        cubes[int(t_s * RATE_HZ):, level] += 1
    mass = PLATE + CUBE * cubes
    still = 1e5 + sensitivity * mass + rng.normal(0.0, 40.0, (n, 8))
    shaken = still + sensitivity * mass * _acceleration(n, seed)[:, None]
    return shaken, still, cubes


def _whole(n: int) -> np.ndarray:
    return np.ones((n, 8), dtype=bool)


def test_shaking_common_to_every_cell_is_taken_out() -> None:
    shaken, still, _ = _shaken_rows()
    canceller = CommonShakeCanceller(n_channels=8, rate_hz=RATE_HZ)
    out = canceller.process(shaken, _whole(len(shaken)), _whole(len(shaken)))
    quiet = slice(int(1.0 * RATE_HZ), int(4.5 * RATE_HZ))
    raw_spread = (shaken[quiet] - still[quiet]).std(axis=0)
    left = (out[quiet] - still[quiet]).std(axis=0)
    assert np.all(raw_spread > 0.3 * CUBE)  # no cube's step stands out of that
    assert np.all(left < 0.05 * CUBE)
    assert canceller.engaged
    assert canceller.engaged_rows > 0.9 * len(shaken)


def test_a_cubes_step_stays_on_its_own_plate() -> None:
    shaken, still, cubes = _shaken_rows()
    out = CommonShakeCanceller(n_channels=8, rate_hz=RATE_HZ).process(
        shaken, _whole(len(shaken)), _whole(len(shaken)))
    for t_s, level in [(5.0, 2), (14.0, 0), (20.0, 5)]:
        i = int(t_s * RATE_HZ)
        assert cubes[i + 10, level] - cubes[i - 10, level] == 1

        def change(rows: np.ndarray, i: int = i) -> np.ndarray:
            return rows[i + 5:i + 40].mean(axis=0) - rows[i - 40:i - 5].mean(axis=0)

        seen, true = change(out), change(still)
        assert abs(true[level]) > 0.7 * CUBE
        # The cube's step is read as a still floor gives it, on its plate
        # and on no other.
        np.testing.assert_array_less(np.abs(seen - true), 0.05 * CUBE)


def test_a_still_tower_passes_unchanged() -> None:
    _, still, _ = _shaken_rows()
    canceller = CommonShakeCanceller(n_channels=8, rate_hz=RATE_HZ)
    out = canceller.process(still, _whole(len(still)), _whole(len(still)))
    assert np.array_equal(out, still)
    assert canceller.engaged_rows == 0


def test_blocks_of_any_size_give_the_same_rows() -> None:
    shaken, _, _ = _shaken_rows(seed=4, seconds=12.0)
    valid = _whole(len(shaken))
    valid[500:530, 6:] = False  # modules 6-7 lifted for a moment
    one = CommonShakeCanceller(n_channels=8, rate_hz=RATE_HZ)
    whole = one.process(shaken, valid, valid)
    parts, cleaned = cleaned_in_random_blocks(
        CommonShakeCanceller(n_channels=8, rate_hz=RATE_HZ), shaken, valid)
    np.testing.assert_allclose(parts, whole, rtol=0, atol=1e-6)
    assert one.cleaned.any()
    assert np.array_equal(cleaned, one.cleaned)


def test_while_modules_are_lifted_the_cells_in_place_are_read_cleaned() -> None:
    shaken, still, _ = _shaken_rows(seed=2, seconds=12.0)
    lift = slice(int(6.0 * RATE_HZ), int(8.0 * RATE_HZ))
    valid = _whole(len(shaken))
    valid[lift, 5:] = False  # modules 5-7 off: their cells send nothing
    shaken[lift, 4] -= 2 * CUBE  # a hand takes two cubes from level 4 meanwhile
    still[lift, 4] -= 2 * CUBE
    canceller = CommonShakeCanceller(n_channels=8, rate_hz=RATE_HZ)
    out = canceller.process(shaken, valid, valid)
    assert np.array_equal(out[lift, 5:], shaken[lift, 5:])
    left = (out[lift, :5] - still[lift, :5]).std(axis=0)
    assert np.all(left < 0.05 * CUBE), left
    assert canceller.cleaned[lift].all()
    assert canceller.engaged


def test_with_too_few_cells_in_place_the_cancelling_stops_until_whole_rows_come_again() -> None:
    shaken, still, _ = _shaken_rows(seed=2, seconds=12.0)
    lift = slice(400, 480)
    valid = _whole(len(shaken))
    valid[lift, 2:] = False  # modules 2-7 off: two cells cannot tell the shaking
    canceller = CommonShakeCanceller(n_channels=8, rate_hz=RATE_HZ)
    out = canceller.process(shaken, valid, valid)
    assert np.array_equal(out[lift], shaken[lift])
    assert not canceller.cleaned[lift].any()
    back = slice(600, len(shaken))
    assert np.all((out[back] - still[back]).std(axis=0) < 0.05 * CUBE)
    assert canceller.engaged


def test_too_few_channels_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="3 load channels"):
        CommonShakeCanceller(n_channels=2, rate_hz=RATE_HZ)


def _shaken_tower() -> tuple[SyntheticTower, list[SyntheticLanding]]:
    tower = SyntheticTower(duration_s=24.0, seed=3, cube_counts=CUBE)
    truth = [tower.throw(t, level) for t, level in [(4.0, 2), (7.5, 5), (11.0, 0), (15.0, 7),
                                                     (18.5, 3)]]
    above_tare = tower.load - np.median(tower.load[: int(RATE_HZ)], axis=0)
    shaking = (PLATE + above_tare) * _acceleration(len(tower.load), seed=5)[:, None]
    tower.load = tower.load + shaking
    return tower, truth


def test_the_detector_weighs_cubes_on_a_shaking_floor() -> None:
    tower, truth = _shaken_tower()
    detector, events = detected(tower, 2000, 80)
    landings = [e for e in events if isinstance(e, Landing)]
    assert [(e.floor, e.cubes) for e in landings] == [(x.level, 1) for x in truth]
    for event, landing in zip(landings, truth, strict=True):
        assert abs(event.t - landing.t_rest_s) < 0.3
    assert detector.common_shake is not None and detector.common_shake.engaged
    assert detector.diagnostics().shaken_s > 20.0
    # Fed in other blocks (one LOAD row at a time, as a device sends them),
    # the detector tells the same, with the shaking taken out the same way
    # (to rounding: the covariance sums its rows in another order).
    _, again = detected(tower, 613, 1)
    assert rounded(again) == rounded(events)


def test_a_knock_or_footsteps_for_a_moment_are_no_shaking() -> None:
    # Every cell moves together for a second, three times: knocks on the
    # table, someone walking past. The rows pass untouched.
    _, still, _ = _shaken_rows(seed=6, seconds=30.0)
    moved = still.copy()
    n = len(still)
    bump = _acceleration(n, seed=8, share=0.05)
    for t_s in (8.0, 15.0, 22.0):
        span = slice(int(t_s * RATE_HZ), int((t_s + 1.0) * RATE_HZ))
        moved[span] += PLATE * bump[span, None]
    canceller = CommonShakeCanceller(n_channels=8, rate_hz=RATE_HZ)
    out = canceller.process(moved, _whole(n), _whole(n))
    assert np.array_equal(out, moved)
    assert canceller.engaged_rows == 0


def test_a_train_setting_off_is_shaking_once_it_has_gone_on_a_while() -> None:
    shaken, still, _ = _shaken_rows(seed=9, seconds=30.0)
    moving = still.copy()
    start = int(10.0 * RATE_HZ)
    moving[start:] = shaken[start:]  # standing at a station for 10 s, then moving
    canceller = CommonShakeCanceller(n_channels=8, rate_hz=RATE_HZ)
    out = canceller.process(moving, _whole(len(moving)), _whole(len(moving)))
    assert np.array_equal(out[:start], moving[:start])
    cleaned = slice(int(17.0 * RATE_HZ), int(19.0 * RATE_HZ))
    assert np.all((out[cleaned] - still[cleaned]).std(axis=0) < 0.05 * CUBE)
    # Which rows were cleaned is told: none while standing, these once moving.
    assert not canceller.cleaned[:start].any()
    assert canceller.cleaned[cleaned].all()
    assert canceller.engaged
