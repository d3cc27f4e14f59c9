"""The piezo front end: the design note's arithmetic, and ngspice holding it to account."""

import dataclasses
import math
import shutil
from pathlib import Path

import numpy as np
import pytest

from hardware.frontend import FRONT_END, FrontEnd, clamp_current_a, figures, lowpass_f0_q
from hardware.spice import CLAMP_STEP_V, STEP_AT_S, SpiceResult, simulate

needs_ngspice = pytest.mark.skipif(shutil.which("ngspice") is None, reason="ngspice not installed")


@pytest.fixture(scope="module")
def sim(tmp_path_factory: pytest.TempPathFactory) -> SpiceResult:
    return simulate(FRONT_END, workdir=tmp_path_factory.mktemp("ngspice"))


def _upper_corner(freq: np.ndarray, gain: np.ndarray) -> float:
    """Frequency above the gain peak where the gain crosses 1/sqrt(2), log-interpolated."""
    peak = int(np.argmax(gain))
    target = 1.0 / math.sqrt(2.0)
    above = peak + int(np.nonzero(gain[peak:] < target)[0][0])
    g0, g1 = gain[above - 1], gain[above]
    frac = (g0 - target) / (g0 - g1)
    return float(freq[above - 1] * (freq[above] / freq[above - 1]) ** frac)


def test_sallen_key_formulas_for_a_textbook_butterworth() -> None:
    # Equal R, C1 = 2 C2 is the unity-gain Butterworth: Q = 1/sqrt(2), f0 = 1/(2 pi R C2 sqrt 2).
    fe = dataclasses.replace(
        FRONT_END, filter_r_ohm=10e3, filter_c_feedback_f=20e-9, filter_c_ground_f=10e-9
    )
    f0, q = lowpass_f0_q(fe)
    assert q == pytest.approx(1 / math.sqrt(2))
    assert f0 == pytest.approx(1 / (2 * math.pi * 10e3 * 10e-9 * math.sqrt(2)))


@pytest.mark.parametrize("scale", [0.25, 0.5, 2.0])
def test_corner_scales_inversely_with_filter_resistance(scale: float) -> None:
    base = figures(FRONT_END)
    fe = dataclasses.replace(FRONT_END, filter_r_ohm=FRONT_END.filter_r_ohm * scale)
    # The 32 Hz high-pass pulls the corner slightly, so only approximately 1/scale.
    assert figures(fe).corner_hz == pytest.approx(base.corner_hz / scale, rel=0.03)


def test_design_targets() -> None:
    f = figures()
    assert 250 <= f.corner_hz <= 450, "corner well below the 1 kHz Nyquist frequency"
    assert f.attenuation_at_nyquist_db >= 15
    assert f.source_impedance_ohm <= FRONT_END.adc_recommended_source_ohm
    # 10 bits to 1/2 LSB needs ln(2**11) ~ 7.6 time constants of sample-and-hold settling.
    assert f.settling_time_constants > math.log(2**11)
    assert f.unbuffered_settling_time_constants < math.log(2**11)
    assert f.highpass_hz < 50


def test_no_clamp_current_inside_the_linear_range() -> None:
    assert clamp_current_a(FRONT_END, piezo_peak_v=2.0) == 0.0
    assert clamp_current_a(FRONT_END, piezo_peak_v=20.0) > 1e-3


@needs_ngspice
def test_bias_point_is_mid_scale(sim: SpiceResult) -> None:
    assert sim.bias_v == pytest.approx(figures().bias_v, abs=0.005)


@needs_ngspice
def test_simulated_corner_matches_the_computed_one(sim: SpiceResult) -> None:
    corner = _upper_corner(sim.frequency_hz, sim.gain)
    assert corner == pytest.approx(figures().corner_hz, rel=0.02)


@needs_ngspice
def test_simulated_attenuation_at_nyquist_matches(sim: SpiceResult) -> None:
    nyquist = FRONT_END.sets_per_second / 2
    gain = float(np.interp(np.log(nyquist), np.log(sim.frequency_hz), sim.gain))
    assert -20 * math.log10(gain) == pytest.approx(figures().attenuation_at_nyquist_db, abs=0.3)


@needs_ngspice
def test_clamp_holds_the_node_near_the_rails(sim: SpiceResult) -> None:
    f = figures()
    assert sim.clamp_node_v.max() == pytest.approx(f.clamp_voltage_at_20v_v, abs=0.03)
    assert -0.45 < sim.clamp_node_v.min() < -0.2, "the lower diode clamps the falling step"


@needs_ngspice
def test_clamp_current_matches_the_computed_one(sim: SpiceResult) -> None:
    assert CLAMP_STEP_V == 20.0
    assert sim.clamp_current_a.max() == pytest.approx(figures().clamp_current_at_20v_a, rel=0.03)
    before = sim.time_s < STEP_AT_S
    assert np.abs(sim.clamp_current_a[before]).max() < 1e-6, "no clamp current at rest"


@needs_ngspice
def test_adc_pin_stays_inside_the_rails(sim: SpiceResult) -> None:
    assert sim.adc_v.min() >= 0.0
    assert sim.adc_v.max() <= FRONT_END.supply_v


@needs_ngspice
def test_a_different_design_simulates_differently(tmp_path: Path) -> None:
    # Guards against the test reading stale files: halving R doubles the corner.
    fe = dataclasses.replace(FRONT_END, filter_r_ohm=FRONT_END.filter_r_ohm / 2)
    result = simulate(fe, workdir=tmp_path)
    corner = _upper_corner(result.frequency_hz, result.gain)
    assert corner == pytest.approx(figures(fe).corner_hz, rel=0.02)
    assert isinstance(fe, FrontEnd)
