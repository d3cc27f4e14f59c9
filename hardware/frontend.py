"""The piezo front end: component values and the arithmetic behind them.

One channel, from the disc to the ADC pin (the disc and its bleed resistor sit
in the level's module, everything else on the base board)::

    piezo (C_p) ──┬── spring contact ── R_s ──┬── R_bias ── VMID (2.5 V)
    cold side     R_bleed                     ├── BAT54S clamp to 5 V / GND
    to VMID       to VMID                     └── follower ── Sallen-Key LP ── R_out ── ADC

The disc's cold side and both bias resistors go to VMID, a quiet 2.5 V made
by a divider and a large capacitor, so no coupling capacitor is needed and an
idle or unplugged channel reads mid-scale. The follower keeps the 1 MOhm bias
from loading the disc; the unity-gain Sallen-Key stage is the anti-alias
filter and drives the ADC pin from a low impedance.

Every number the design note quotes is computed here from the values in
:data:`FRONT_END`, and :mod:`hardware.spice` simulates the same values.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray


@dataclass(frozen=True)
class SchottkyModel:
    """A diode's Shockley parameters, fitted to a datasheet's forward curve.

    The defaults fit the BAT54 datasheet's typical points (240 mV at 0.1 mA,
    320 mV at 1 mA, 500 mV at 30 mA): 80 mV per decade gives the emission
    coefficient, the 1 mA point the saturation current, the 30 mA point the
    series resistance.
    """

    saturation_current_a: float = 1.0e-7
    emission_coefficient: float = 1.34
    series_resistance_ohm: float = 2.0
    junction_capacitance_f: float = 10e-12

    def forward_voltage_v(self, current_a: float, temperature_k: float = 300.15) -> float:
        """Forward voltage at ``current_a`` (> 0) in volts."""
        thermal_v = 1.380649e-23 * temperature_k / 1.602176634e-19
        junction = self.emission_coefficient * thermal_v
        return junction * math.log(current_a / self.saturation_current_a + 1.0) + (
            current_a * self.series_resistance_ohm
        )


@dataclass(frozen=True)
class FrontEnd:
    """Component values of one piezo channel and the ADC it feeds.

    Resistances in ohms, capacitances in farads, voltages in volts.
    """

    supply_v: float = 5.0
    # Murata 7BB-20-6: 10 nF +-30 %; the tolerance moves only the high-pass corner.
    piezo_capacitance_f: float = 10e-9
    # 1 MOhm across the disc drains pyroelectric and static charge in ~10 ms and
    # keeps an unplugged disc from charging up; with R_bias it sets the high-pass.
    bleed_ohm: float = 1e6
    bias_ohm: float = 1e6
    # Limits the clamp current; large against the disc's impedance only above ~1.6 kHz.
    series_ohm: float = 10e3
    # VMID divider: two equal resistors and a reservoir capacitor (tau 50 ms) so
    # USB supply ripple above a few hertz does not reach the bias.
    vmid_divider_ohm: float = 10e3
    vmid_capacitance_f: float = 10e-6
    # Unity-gain Sallen-Key, equal resistors, C1 ~ 2 C2 for Q ~ 0.7 (Butterworth-like).
    filter_r_ohm: float = 15e3
    filter_c_feedback_f: float = 47e-9
    filter_c_ground_f: float = 22e-9
    # Isolates the op amp's output from the pin and trace capacitance.
    output_ohm: float = 100.0
    op_amp_gbw_hz: float = 1e6
    op_amp_rail_margin_v: float = 0.025
    clamp: SchottkyModel = SchottkyModel()
    adc_bits: int = 10
    adc_sample_hold_f: float = 14e-12
    adc_recommended_source_ohm: float = 10e3
    sets_per_second: float = 2000.0
    # 8 channels x 2000 sets/s = 16 k conversions/s needs an ADC clock >= 208 kHz;
    # 16 MHz / 32 = 500 kHz is the nearest prescaler that leaves margin.
    adc_clock_hz: float = 500e3
    # 0805 thick-film resistors are rated for 150 V working voltage.
    series_resistor_max_v: float = 150.0
    clamp_max_current_a: float = 0.2


FRONT_END = FrontEnd()


@dataclass(frozen=True)
class FrontEndFigures:
    """The numbers the design note quotes, all derived from a :class:`FrontEnd`."""

    bias_v: float
    lsb_v: float
    linear_peak_v: float
    highpass_hz: float
    lowpass_f0_hz: float
    lowpass_q: float
    corner_hz: float
    nyquist_hz: float
    attenuation_at_nyquist_db: float
    attenuation_at_first_alias_db: float
    source_impedance_ohm: float
    sample_hold_time_s: float
    settling_time_constants: float
    unbuffered_settling_time_constants: float
    clamp_current_at_20v_a: float
    clamp_voltage_at_20v_v: float
    max_piezo_peak_v: float


def lowpass_f0_q(fe: FrontEnd) -> tuple[float, float]:
    """Natural frequency (Hz) and Q of the unity-gain equal-R Sallen-Key stage."""
    r = fe.filter_r_ohm
    c1, c2 = fe.filter_c_feedback_f, fe.filter_c_ground_f
    f0 = 1.0 / (2.0 * math.pi * r * math.sqrt(c1 * c2))
    q = math.sqrt(c1 * c2) / (2.0 * c2)
    return f0, q


def highpass_hz(fe: FrontEnd) -> float:
    """Corner of the high-pass the disc's capacitance forms with bleed || bias."""
    load = fe.bleed_ohm * fe.bias_ohm / (fe.bleed_ohm + fe.bias_ohm)
    return 1.0 / (2.0 * math.pi * fe.piezo_capacitance_f * load)


def transfer(fe: FrontEnd, *, frequency_hz: NDArray[np.float64]) -> NDArray[np.complex128]:
    """Small-signal gain from the disc's open-circuit voltage to the ADC pin.

    The disc is a voltage source behind ``C_p`` loaded by bleed || bias (a
    first-order high-pass; ``R_s`` sees only the follower's input and drops
    out), followed by the Sallen-Key low-pass. Op-amp bandwidth is ignored
    (1 MHz against a 340 Hz filter).
    """
    s = 2j * np.pi * np.asarray(frequency_hz, dtype=np.float64)
    load = fe.bleed_ohm * fe.bias_ohm / (fe.bleed_ohm + fe.bias_ohm)
    tau_hp = load * fe.piezo_capacitance_f
    highpass = s * tau_hp / (1.0 + s * tau_hp)
    r = fe.filter_r_ohm
    c1, c2 = fe.filter_c_feedback_f, fe.filter_c_ground_f
    lowpass = 1.0 / (1.0 + s * 2.0 * r * c2 + s * s * r * r * c1 * c2)
    return np.asarray(highpass * lowpass, dtype=np.complex128)


def upper_corner_hz(fe: FrontEnd) -> float:
    """The frequency above the passband where the gain falls to -3 dB (of unity)."""
    f0, _ = lowpass_f0_q(fe)
    freqs = np.geomspace(f0 / 4.0, f0 * 4.0, 20001)
    gain = np.abs(transfer(fe, frequency_hz=freqs))
    below = np.nonzero(gain < 1.0 / math.sqrt(2.0))[0]
    first = int(below[0])
    # Interpolate on the log-frequency axis between the bracketing samples.
    g0, g1 = gain[first - 1], gain[first]
    frac = (g0 - 1.0 / math.sqrt(2.0)) / (g0 - g1)
    return float(freqs[first - 1] * (freqs[first] / freqs[first - 1]) ** frac)


def clamp_current_a(fe: FrontEnd, *, piezo_peak_v: float) -> float:
    """Current through the upper clamp diode when the disc's open-circuit voltage peaks.

    The disc's cold side sits at VMID, so the hot side reaches VMID + V; the
    clamp holds the node at supply + V_f, and R_s takes the difference. Solved
    for the diode's own V_f by fixed-point iteration.
    """
    bias = fe.supply_v / 2.0
    current = 0.0
    for _ in range(50):
        v_f = fe.clamp.forward_voltage_v(max(current, 1e-9))
        current = max(0.0, (bias + piezo_peak_v - fe.supply_v - v_f) / fe.series_ohm)
    return current


def figures(fe: FrontEnd = FRONT_END) -> FrontEndFigures:
    """Compute every number of the design note from ``fe``."""
    f0, q = lowpass_f0_q(fe)
    nyquist = fe.sets_per_second / 2.0
    gain_nyq = float(np.abs(transfer(fe, frequency_hz=np.array([nyquist]))[0]))
    # A component at fs - f_c folds onto the passband edge.
    alias_f = fe.sets_per_second - upper_corner_hz(fe)
    gain_alias = float(np.abs(transfer(fe, frequency_hz=np.array([alias_f]))[0]))
    # The ADC samples for 1.5 ADC clocks; settling to 1/2 LSB of 10 bits needs
    # ln(2^11) ~ 7.6 time constants.
    t_sh = 1.5 / fe.adc_clock_hz
    source = fe.output_ohm
    unbuffered = fe.bleed_ohm * fe.bias_ohm / (fe.bleed_ohm + fe.bias_ohm)
    i20 = clamp_current_a(fe, piezo_peak_v=20.0)
    return FrontEndFigures(
        bias_v=fe.supply_v / 2.0,
        lsb_v=fe.supply_v / 2**fe.adc_bits,
        linear_peak_v=fe.supply_v / 2.0 - fe.op_amp_rail_margin_v,
        highpass_hz=highpass_hz(fe),
        lowpass_f0_hz=f0,
        lowpass_q=q,
        corner_hz=upper_corner_hz(fe),
        nyquist_hz=nyquist,
        attenuation_at_nyquist_db=-20.0 * math.log10(gain_nyq),
        attenuation_at_first_alias_db=-20.0 * math.log10(gain_alias),
        source_impedance_ohm=source,
        sample_hold_time_s=t_sh,
        settling_time_constants=t_sh / (source * fe.adc_sample_hold_f),
        unbuffered_settling_time_constants=t_sh / (unbuffered * fe.adc_sample_hold_f),
        clamp_current_at_20v_a=i20,
        clamp_voltage_at_20v_v=fe.supply_v + fe.clamp.forward_voltage_v(i20),
        max_piezo_peak_v=min(fe.series_resistor_max_v, fe.clamp_max_current_a * fe.series_ohm),
    )
