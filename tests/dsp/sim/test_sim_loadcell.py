"""The HX711 model: its filter settles in four readings; a reconnect restarts it."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from dsp.sim import TowerConstants, TowerSimulator, draw_tower
from dsp.sim.loadcell import CELL_GRID, SUBSAMPLES, LoadChain, hx711_kernel


def test_a_step_settles_in_four_readings() -> None:
    kernel = hx711_kernel()
    assert abs(np.sum(kernel) - 1.0) < 1e-12
    step = np.convolve(np.ones(8 * SUBSAMPLES), kernel)[: 8 * SUBSAMPLES]
    readings = step[SUBSAMPLES - 1 :: SUBSAMPLES]  # one per conversion
    assert readings[0] < 0.1 and 0.3 < readings[1] < 0.7
    assert readings[2] < 0.999 and abs(readings[3] - 1.0) < 1e-12


def test_readings_ramp_up_after_a_reconnect() -> None:
    tower = draw_tower(2)
    sim = TowerSimulator(tower, seed=2)
    sim.lift(5, at_s=0.5)
    sim.close(at_s=2.0)
    block = sim.advance(4.0)
    channel = 6
    valid = block.load_valid[:, channel]
    back = int(np.flatnonzero(~valid)[-1]) + 1  # first reading after the last break
    settled = block.load[back + 6 :, channel].astype(float)
    first = float(block.load[back, channel])
    offset = tower.offset_counts[channel]
    assert abs(settled.mean() - offset) < abs(0.05 * tower.counts_per_gram[channel]) + 500
    # The HX711 powers up with the contacts: its first reading holds little of the value.
    assert abs(first) < 0.6 * abs(offset)


def _quiet_cells(seed: int, **changes: float) -> tuple[LoadChain, TowerConstants]:
    tower = draw_tower(seed)
    levels = tuple(replace(lv, noise_counts_rms=0.0, **changes) for lv in tower.levels)
    tower = replace(tower, levels=levels)
    return LoadChain(tower, seed=1), tower


def _readings(chain: LoadChain, static_g: float, seconds: float) -> np.ndarray:
    out = []
    points = int(seconds * chain.fast_hz)
    for start in range(0, points, CELL_GRID):
        stop = min(points, start + CELL_GRID)
        static = np.full((stop - start, 8), static_g)
        out.append(chain.render(start, stop, static_g=static, dynamic_g=None)[1])
    return np.concatenate(out)


def test_creep_follows_its_first_order_lag() -> None:
    chain, tower = _quiet_cells(3, drift_g_per_sqrt_min=0.0)
    counts = _readings(chain, 10.0, 300.0)
    grams = (counts - np.array(tower.offset_counts)) / np.array(tower.counts_per_gram)
    for level, lv in enumerate(tower.levels):
        expected = 10.0 * (1.0 + lv.creep_fraction * (1.0 - np.exp(-300.0 / lv.creep_tau_s)))
        assert grams[-1, level] == pytest.approx(expected, abs=0.002)
        assert grams[int(2.0 * tower.load_rate_hz), level] == pytest.approx(10.0, abs=0.01)


def test_drift_is_a_random_walk_of_the_drawn_size() -> None:
    chain, tower = _quiet_cells(5, creep_fraction=0.0)
    minutes = 5.0
    counts = _readings(chain, 0.0, minutes * 60.0)
    grams = (counts - np.array(tower.offset_counts)) / np.array(tower.counts_per_gram)
    sigma = np.array([lv.drift_g_per_sqrt_min for lv in tower.levels]) * np.sqrt(minutes)
    z = grams[-1] / sigma
    # Eight independent walks: their normalised end points scatter like N(0, 1).
    assert 0.05 < float(np.mean(z**2)) < 4.0
    steps = np.diff(grams, axis=0)
    per_step = sigma / np.sqrt(len(steps))
    np.testing.assert_allclose(steps.std(axis=0), per_step, rtol=0.1)
