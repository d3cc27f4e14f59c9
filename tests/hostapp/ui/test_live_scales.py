"""How the live view scales traces into their bands (plain numpy, no Qt)."""

from __future__ import annotations

import numpy as np

from hostapp.ui.live.scales import LoadScale, ScopeScale, noise_sigma

RNG = np.random.default_rng(5)


def test_noise_sigma_reads_gaussian_noise_and_skips_gaps() -> None:
    values = RNG.normal(0.0, 80.0, size=(4000, 2))
    values[100:200, 1] = np.nan
    sigma = noise_sigma(values)
    assert np.allclose(sigma, 80.0, rtol=0.08)
    assert noise_sigma(np.zeros((1, 3))).tolist() == [0.0, 0.0, 0.0]


def test_idle_scopes_are_flat_lines_and_a_ring_fills_its_band() -> None:
    scale = ScopeScale(full_scale=1023.0)
    idle = 512 + RNG.normal(0.0, 1.0, size=(2000, 8))
    bands = scale.bands(idle)
    # the floor of the scale keeps a few codes of noise near each band's middle
    assert np.all(np.abs(bands - (np.arange(8) + 0.5)) < 0.15)
    ring = idle.copy()
    ring[1000:1100, 3] += 300 * np.sin(np.arange(100)) * np.exp(-np.arange(100) / 30)
    ring[1000:1100, 4] += 60 * np.sin(np.arange(100)) * np.exp(-np.arange(100) / 30)
    bands = scale.bands(ring)
    heights = bands.max(axis=0) - bands.min(axis=0)
    assert heights[3] > 0.6  # the loudest level fills its band
    assert 0.1 < heights[4] < heights[3] / 3  # a quieter neighbour, in proportion
    assert np.all((bands >= np.arange(8)) & (bands <= np.arange(8) + 1))
    assert abs(scale.half_span - 1.25 * np.abs(ring[:, 3] - 512).max()) < 5
    # once the ring has scrolled out of view, the scale comes back down
    scale.bands(idle)
    assert scale.half_span == scale.min_half_span == 1023 / 64


def test_a_cubes_step_fills_the_load_band_and_the_impacts_spike_does_not_set_the_scale() -> None:
    times = np.arange(1600) / 80.0  # 20 s at 80 readings/s
    sigma = 100.0
    trace = RNG.normal(0.0, sigma, size=(1600, 2))
    trace[800:, 0] += 10_000  # one cube
    # the impact: a spike ten times the step, ringing for a quarter of a second
    ring = np.arange(20)
    trace[798:818, 0] += 100_000 * np.exp(-ring / 5.0) * np.cos(ring * 2.0)
    bands = LoadScale(2).bands(times, trace, noise_sigma(trace))
    step = np.median(bands[900:, 0]) - np.median(bands[:700, 0])
    assert step > 0.5
    assert np.all((bands[:, 0] > 0.0) & (bands[:, 0] < 1.0))  # the spike cut inside the band
    # a cell that only shows noise is a thin line, not a magnified scribble
    quiet = bands[:, 1] - 1.0
    assert quiet.max() - quiet.min() < 0.3


def test_a_disconnected_cell_stays_a_gap_and_the_range_holds_until_the_trace_leaves_it() -> None:
    times = np.arange(400) / 80.0
    trace = RNG.normal(0.0, 50.0, size=(400, 1))
    trace[100:150, 0] = np.nan
    scale = LoadScale(1)
    bands = scale.bands(times, trace, noise_sigma(trace))
    assert np.all(np.isnan(bands[100:150, 0])) and np.all(np.isfinite(bands[:100, 0]))
    first = scale.ranges[0]
    scale.bands(times, trace + 10.0, noise_sigma(trace))  # a drift inside the range
    assert scale.ranges[0] == first
    scale.bands(times, trace + 5_000.0, noise_sigma(trace))
    assert scale.ranges[0] != first and scale.ranges[0][0] > first[1]  # type: ignore[index]
