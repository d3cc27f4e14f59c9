"""Slow swaying every load cell feels at once (a boat's heave), taken out (``slowshake``)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.signal import butter, sosfilt

from dsp.detect.events import Landing
from dsp.detect.slowshake import SlowShakeCanceller, weighted_median
from dsp.detect.synthetic import SyntheticLanding, SyntheticTower
from tests.dsp.detect.fed_in_blocks import cleaned_in_random_blocks, detected, rounded

RATE_HZ = 80.0
CUBE = 9000.0
PLATE = 16 * CUBE  # a plate weighs some sixteen cubes


def _heave(n: int, seed: int, share: float = 0.05) -> np.ndarray:
    """A boat's vertical acceleration over ``g``: a swell of 4-12 s waves, ``share`` std."""
    rng = np.random.default_rng(seed)
    sos = butter(2, [0.08, 0.25], btype="bandpass", fs=RATE_HZ, output="sos")
    warm = int(120 * RATE_HZ)
    a = sosfilt(sos, rng.normal(size=n + warm))[warm:]
    return share * a / a.std()


def _swayed_rows(seed: int = 1, seconds: float = 60.0
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows of eight cells on a heaving floor, cubes landing now and then.

    Returns the readings, the readings as a still floor would give them, and
    the true load of each plate in cubes.
    """
    rng = np.random.default_rng(seed)
    n = int(seconds * RATE_HZ)
    sensitivity = rng.uniform(0.8, 1.2, 8) * np.where(np.arange(8) == 3, -1.0, 1.0)
    cubes = np.zeros((n, 8))
    for t_s, level in [(6.0, 2), (19.0, 6), (19.4, 6), (24.0, 0), (30.0, 5), (30.2, 3),
                       (41.0, 1), (47.5, 7)]:
        cubes[int(t_s * RATE_HZ):, level] += 1
    mass = PLATE + CUBE * cubes
    still = 1e5 + sensitivity * mass + rng.normal(0.0, 40.0, (n, 8))
    swayed = still + sensitivity * mass * _heave(n, seed)[:, None]
    return swayed, still, cubes


def _whole(n: int) -> np.ndarray:
    return np.ones((n, 8), dtype=bool)


def _cleaned(rows: np.ndarray, valid: np.ndarray | None = None
             ) -> tuple[np.ndarray, SlowShakeCanceller]:
    canceller = SlowShakeCanceller(n_channels=8, rate_hz=RATE_HZ)
    valid = _whole(len(rows)) if valid is None else valid
    return canceller.process(rows, valid, valid), canceller


def test_a_boats_heave_is_taken_out() -> None:
    swayed, still, _ = _swayed_rows()
    out, canceller = _cleaned(swayed)
    after = slice(int(15.0 * RATE_HZ), len(swayed))
    raw = (swayed[after] - still[after]).std(axis=0)
    left = out[after] - still[after]
    assert np.all(raw > 0.5 * CUBE)  # slower than a step, as large as one
    assert np.all((left - left.mean(axis=0)).std(axis=0) < 0.05 * CUBE), left.std(axis=0)
    # What is left of where the swaying had the plates when it was found
    # stays put: no step, no drift.
    early, late = slice(int(15 * RATE_HZ), int(25 * RATE_HZ)), slice(int(50 * RATE_HZ), None)
    drift = (out[late] - still[late]).mean(axis=0) - (out[early] - still[early]).mean(axis=0)
    assert np.all(np.abs(drift) < 0.1 * CUBE), drift
    assert canceller.engaged
    assert canceller.cleaned[after].all()


def test_a_cubes_step_stays_on_its_own_plate() -> None:
    swayed, still, cubes = _swayed_rows()
    out, _ = _cleaned(swayed)
    for t_s, level in [(24.0, 0), (30.0, 5), (41.0, 1), (47.5, 7)]:
        i = int(t_s * RATE_HZ)
        assert cubes[i + 10, level] - cubes[i - 10, level] == 1

        def change(rows: np.ndarray, i: int = i) -> np.ndarray:
            return rows[i + 5:i + 40].mean(axis=0) - rows[i - 40:i - 5].mean(axis=0)

        seen, true = change(out), change(still)
        assert abs(true[level]) > 0.7 * CUBE
        # Read as a still floor gives it, on its plate and on no other.
        np.testing.assert_array_less(np.abs(seen - true), 0.05 * CUBE)


def test_a_still_tower_passes_unchanged() -> None:
    _, still, _ = _swayed_rows()
    out, canceller = _cleaned(still)
    assert out is still
    assert canceller.engaged_rows == 0


def test_blocks_of_any_size_give_the_same_rows() -> None:
    swayed, _, _ = _swayed_rows(seed=4, seconds=40.0)
    valid = _whole(len(swayed))
    valid[1800:1900, 6:] = False  # modules 6-7 lifted for a moment
    whole, one = _cleaned(swayed, valid)
    parts, cleaned = cleaned_in_random_blocks(
        SlowShakeCanceller(n_channels=8, rate_hz=RATE_HZ), swayed, valid)
    np.testing.assert_allclose(parts, whole, rtol=0, atol=1e-6)
    assert one.cleaned.any()
    assert np.array_equal(cleaned, one.cleaned)


def test_while_modules_are_lifted_the_cells_in_place_are_read_cleaned() -> None:
    swayed, still, _ = _swayed_rows(seed=2, seconds=40.0)
    lift = slice(int(30.0 * RATE_HZ), int(34.0 * RATE_HZ))
    valid = _whole(len(swayed))
    valid[lift, 5:] = False  # modules 5-7 off: their cells send nothing
    swayed[lift, 4] -= 2 * CUBE  # a hand takes two cubes from level 4 meanwhile
    still[lift, 4] -= 2 * CUBE
    out, canceller = _cleaned(swayed, valid)
    assert np.array_equal(out[lift, 5:], swayed[lift, 5:])
    left = out[lift, :5] - still[lift, :5]
    assert np.all((left - left.mean(axis=0)).std(axis=0) < 0.05 * CUBE)
    assert canceller.cleaned[lift].all()


def test_a_hand_leaning_on_the_table_for_a_few_seconds_is_no_swaying() -> None:
    # Every cell sinks and rises together over 4 s, twice: a hand leaning on
    # the table, someone sitting down on the bench. The rows pass untouched.
    _, still, _ = _swayed_rows(seed=6, seconds=60.0)
    leant = still.copy()
    t = np.arange(len(still)) / RATE_HZ
    for t0 in (20.0, 40.0):
        bump = np.where((t >= t0) & (t < t0 + 4.0), np.sin(np.pi * (t - t0) / 4.0) ** 2, 0.0)
        leant += 0.05 * PLATE * bump[:, None]
    out, canceller = _cleaned(leant)
    assert out is leant
    assert canceller.engaged_rows == 0


def test_a_boat_leaving_harbour_sways_once_it_has_gone_on_a_while() -> None:
    swayed, still, _ = _swayed_rows(seed=9, seconds=60.0)
    moving = still.copy()
    start = int(20.0 * RATE_HZ)
    moving[start:] = swayed[start:]  # moored for 20 s, then out in the swell
    out, canceller = _cleaned(moving)
    assert np.array_equal(out[:start], moving[:start])
    assert not canceller.cleaned[:start].any()
    later = slice(int(45.0 * RATE_HZ), len(moving))
    left = out[later] - still[later]
    assert np.all((left - left.mean(axis=0)).std(axis=0) < 0.05 * CUBE)
    assert canceller.cleaned[later].all()


def test_a_faster_shaking_is_no_swaying() -> None:
    # A train's floor (2-20 Hz) moves every cell together too, and its
    # quarter seconds' means with it, but they jitter from one to the next
    # where a swell's go on the way they went: left to ``commonshake``.
    _, still, _ = _swayed_rows(seed=3, seconds=60.0)
    rng = np.random.default_rng(3)
    sos = butter(4, [2.0, 20.0], btype="bandpass", fs=RATE_HZ, output="sos")
    a = sosfilt(sos, rng.normal(size=len(still) + 400))[400:]
    shaken = still + PLATE * 0.03 * (a / a.std())[:, None]
    out, canceller = _cleaned(shaken)
    assert canceller.together > 0.8  # the cells move as one ...
    assert canceller.persistence < 0.0  # ... but not slowly
    assert out is shaken
    assert canceller.engaged_rows == 0


def test_too_few_channels_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="3 load channels"):
        SlowShakeCanceller(n_channels=2, rate_hz=RATE_HZ)


def test_the_weighted_median_weighs_each_value() -> None:
    x = np.array([[1.0, 2.0, 3.0, 10.0], [5.0, -1.0, 0.0, 2.0]])
    w = np.array([1.0, 1.0, 1.0, 0.0])  # the last takes no part
    assert list(weighted_median(x, w)) == [2.0, 0.0]
    assert list(weighted_median(x[:1], np.array([1.0, 1.0, 5.0, 1.0]))) == [3.0]


def _heaving_tower(share: float, seed: int = 5
                   ) -> tuple[SyntheticTower, list[SyntheticLanding], np.ndarray]:
    """Seven cubes thrown on a floor heaving with ``share`` of ``g`` from the first second.

    Returns the tower (its rows swayed), the truth and the rows as a still
    floor would give them.
    """
    tower = SyntheticTower(duration_s=60.0, seed=3, cube_counts=CUBE)
    truth = [tower.throw(t, level) for t, level in [(6.0, 2), (14.0, 5), (22.0, 0), (30.0, 7),
                                                     (38.0, 3), (46.0, 6), (54.0, 1)]]
    still = tower.load.copy()
    above_tare = tower.load - np.median(tower.load[: int(RATE_HZ)], axis=0)
    swaying = (PLATE + above_tare) * _heave(len(tower.load), seed=seed, share=share)[:, None]
    tower.load = tower.load + swaying
    return tower, truth, still


@pytest.mark.parametrize("seed", [5, 6, 7])
def test_a_step_split_between_two_blocks_leaves_its_plates_share_alone(seed: int) -> None:
    # A cube's step takes a few readings: where they fall across two
    # blocks, each block's move holds a part of it, within what a rough
    # sea moves a block. Weighed as swaying, it set the plate's share
    # wrong, and the plate's rows swayed on by up to a sixth of a cube.
    tower, truth, still = _heaving_tower(share=0.05, seed=seed)
    out, _ = _cleaned(tower.load.astype(np.float64))
    for landing in truth:
        after = slice(int((landing.t_rest_s + 1.0) * RATE_HZ),
                      int((landing.t_rest_s + 8.0) * RATE_HZ))
        left = out[after, landing.level] - still[after, landing.level]
        assert left.std() < 0.06 * CUBE, (landing, left.std() / CUBE)


def test_the_detector_weighs_cubes_on_a_heaving_floor() -> None:
    # A rough sea, 4 % of g, from the stream's first second. Without the
    # canceller the detector told 16 landings for these 7 at 2 %, 4 of them
    # right.
    tower, truth, _ = _heaving_tower(share=0.04)
    detector, events = detected(tower, 2000, 80)
    landings = [e for e in events if isinstance(e, Landing)]
    assert [(e.floor, e.cubes) for e in landings] == [(x.level, 1) for x in truth]
    for event, landing in zip(landings, truth, strict=True):
        assert abs(event.t - landing.t_rest_s) < 0.3
    assert detector.shaking()
    assert detector.diagnostics().swayed_s > 50.0
    # Fed one LOAD row at a time, as a device sends them, it tells the same.
    _, again = detected(tower, 613, 1)
    assert rounded(again) == rounded(events)
