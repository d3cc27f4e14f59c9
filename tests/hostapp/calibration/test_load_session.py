"""The load-cell calibration session on synthetic HX711 readings with known constants."""

from __future__ import annotations

import numpy as np
import pytest

from hostapp.calibration.coins import coin, typed_mass
from hostapp.calibration.load_math import ReadingStats, counts_per_gram, summarize_readings
from hostapp.calibration.load_session import LevelLoadCalibration, LoadCalibrationPlan, Step
from hostapp.errors import CalibrationError

RATE = 80.0


class SyntheticCell:
    """A cell with offset, scale, noise, a little drift and a ringing step response."""

    def __init__(self, *, offset: float, cpg: float, noise: float, drift_g_per_s: float,
                 seed: int) -> None:
        self.offset, self.cpg, self.noise, self.drift = offset, cpg, noise, drift_g_per_s
        self.rng = np.random.default_rng(seed)
        self.t = 0.0
        self.grams = 0.0
        self.step_t = -10.0
        self.step_from = 0.0

    def set_mass(self, grams: float) -> None:
        self.step_from, self.grams, self.step_t = self.grams, grams, self.t

    def read(self, seconds: float) -> tuple[np.ndarray, np.ndarray]:
        n = int(round(seconds * RATE))
        t = self.t + np.arange(n) / RATE
        self.t += n / RATE
        age = t - self.step_t
        ring = np.exp(-age / 0.08) * np.cos(2 * np.pi * 11.0 * age)
        grams = self.grams + (self.step_from - self.grams) * np.where(age >= 0, ring, 1.0)
        counts = self.offset + self.cpg * (grams + self.drift * t)
        counts += self.rng.normal(0, self.noise, n)
        return t, np.round(counts)


def run_session(session: LevelLoadCalibration, cell: SyntheticCell, masses: dict[Step, float],
                max_s: float = 120.0) -> None:
    acted: set[Step] = set()
    while not session.finished and cell.t < max_s:
        if session.waiting_for_user and session.step not in acted:
            acted.add(session.step)
            cell.read(0.7)  # the user takes a moment
            cell.set_mass(masses[session.step])
        t, c = cell.read(0.1)
        session.feed(t, c, np.ones(t.size, dtype=bool))


@pytest.mark.parametrize("cpg,noise", [(21500.0, 40.0), (-9000.0, 120.0), (48000.0, 15.0)])
def test_session_recovers_scale_and_cube_mass(cpg: float, noise: float) -> None:
    cell = SyntheticCell(offset=-180000.0, cpg=cpg, noise=noise, drift_g_per_s=0.0, seed=4)
    plan = LoadCalibrationPlan(level=3, reference=coin("eur-1"), second_reference=coin("eur-2"),
                               n_cubes=6, load_rate_hz=RATE)
    session = LevelLoadCalibration(plan)
    cube = 0.52
    run_session(session, cell, {
        Step.REFERENCE_ON: 7.5, Step.REFERENCE_OFF: 0.0, Step.SECOND_ON: 8.5,
        Step.SECOND_OFF: 0.0, Step.CUBES_ON: 6 * cube, Step.CUBES_OFF: 0.0,
    })
    assert session.finished, session.prompt
    result = session.result()
    assert result.counts_per_gram == pytest.approx(cpg, rel=0.005)
    assert result.cube_mass_g == pytest.approx(cube, rel=0.02)
    assert result.noise_g_rms == pytest.approx(noise / abs(cpg), rel=0.25)
    assert abs(result.linearity_error_pct or 99) < 0.5
    # The reported uncertainty is dominated by the coin's 1 %.
    assert 0.008 < result.counts_per_gram_uncertainty / abs(cpg) < 0.02


def test_drift_is_measured_in_grams_per_minute() -> None:
    cell = SyntheticCell(offset=5000.0, cpg=20000.0, noise=30.0, drift_g_per_s=0.002, seed=9)
    plan = LoadCalibrationPlan(level=0, reference=typed_mass(10.0), n_cubes=0, load_rate_hz=RATE)
    session = LevelLoadCalibration(plan)
    run_session(session, cell, {Step.REFERENCE_ON: 10.0, Step.REFERENCE_OFF: 0.0})
    result = session.result()
    assert result.drift_g_per_min == pytest.approx(0.12, abs=0.03)


def test_unfinished_session_refuses_a_result() -> None:
    session = LevelLoadCalibration(LoadCalibrationPlan(level=2, reference=coin("usd-0.05")))
    t = np.arange(40) / RATE
    session.feed(t, np.full(40, 1000.0), np.ones(40, dtype=bool))
    with pytest.raises(CalibrationError, match="not finished"):
        session.result()


def test_disconnected_channel_pauses_with_a_prompt() -> None:
    session = LevelLoadCalibration(LoadCalibrationPlan(level=5, reference=coin("gbp-1")))
    t = np.arange(10) / RATE
    session.feed(t, np.zeros(10), np.zeros(10, dtype=bool))
    assert session.disconnected
    assert "not connected" in session.prompt
    assert session.step is Step.EMPTY


def test_spikes_do_not_bias_the_mean() -> None:
    rng = np.random.default_rng(1)
    values = rng.normal(1000.0, 10.0, 400)
    values[[50, 51, 200]] += 50000.0
    stats = summarize_readings(values)
    assert stats.mean == pytest.approx(1000.0, abs=2.0)
    assert stats.n == 397


def test_scale_uncertainty_combines_noise_and_reference() -> None:
    empty = ReadingStats(mean=0.0, std=100.0, n=100)
    loaded = ReadingStats(mean=75000.0, std=100.0, n=100)
    scale = counts_per_gram(empty, loaded, coin("eur-1"))
    assert scale.value == pytest.approx(10000.0)
    assert scale.relative() == pytest.approx(np.hypot(np.hypot(10, 10) / 75000, 0.01))


def test_typed_mass_outside_the_cell_range_is_refused() -> None:
    with pytest.raises(ValueError, match="outside"):
        typed_mass(250.0)
    with pytest.raises(KeyError, match="known coins"):
        coin("eur-3")
