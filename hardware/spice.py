"""Simulate one piezo channel with ngspice, from the same values as :mod:`hardware.frontend`.

The netlist is generated from a :class:`~hardware.frontend.FrontEnd`, run in
batch mode (``ngspice -b``) and its ``wrdata`` tables read back, so a test can
hold the simulated bias point, -3 dB corner and clamp against the arithmetic
in the design note.
"""

from __future__ import annotations

import math
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from hardware.errors import HardwareError
from hardware.frontend import FrontEnd

# Open-circuit step of the disc used for the clamp check; an impact on the
# plate can give tens of volts open circuit before the clamp.
CLAMP_STEP_V = 20.0
STEP_AT_S = 100e-6
STEP_RISE_S = 1e-6
STEP_LENGTH_S = 500e-6
TRAN_STOP_S = 1.2e-3
TIMEOUT_S = 60.0


@dataclass(frozen=True)
class SpiceResult:
    """What ngspice computed for one channel.

    Attributes
    ----------
    bias_v : float
        DC voltage at the ADC pin.
    frequency_hz : ndarray, shape (n,)
        AC analysis frequencies.
    gain : ndarray, shape (n,)
        |V(adc) / V(disc)| at those frequencies.
    time_s : ndarray, shape (m,)
        Transient time points.
    clamp_node_v : ndarray, shape (m,)
        Voltage at the clamped node (behind R_s) during the +-20 V disc step.
    clamp_current_a : ndarray, shape (m,)
        Current into the upper clamp diode (towards the 5 V rail).
    adc_v : ndarray, shape (m,)
        Voltage at the ADC pin during the step.
    """

    bias_v: float
    frequency_hz: NDArray[np.float64]
    gain: NDArray[np.float64]
    time_s: NDArray[np.float64]
    clamp_node_v: NDArray[np.float64]
    clamp_current_a: NDArray[np.float64]
    adc_v: NDArray[np.float64]


def netlist(fe: FrontEnd) -> str:
    """The ngspice deck of one channel with op, AC and transient analyses.

    The op amp is a single-pole macro model (DC gain 1e5, gain-bandwidth
    ``fe.op_amp_gbw_hz``) whose output is limited to the rails minus the
    MCP6004's output margin. The clamp diodes use ``fe.clamp``'s parameters.
    """
    d = fe.clamp
    pole_hz = fe.op_amp_gbw_hz / 1e5
    pole_c = 1.0 / (2.0 * math.pi * 100e6 * pole_hz)
    top = fe.supply_v - fe.op_amp_rail_margin_v
    bottom = fe.op_amp_rail_margin_v
    end_step = STEP_AT_S + STEP_LENGTH_S
    return f"""* towerear piezo front end, one channel
.subckt opamp inp inn out vdd vss
G1 0 n1 inp inn 1m
R1 n1 0 100Meg
C1 n1 0 {pole_c:.6g}
B1 out 0 V = max(min(V(n1), {top:.6g}), {bottom:.6g})
.ends
.model BAT54 D(IS={d.saturation_current_a:.6g} N={d.emission_coefficient:.6g} \
RS={d.series_resistance_ohm:.6g} CJO={d.junction_capacitance_f:.6g} BV=30)
VDD vdd 0 DC {fe.supply_v:.6g}
RM1 vdd vmid {fe.vmid_divider_ohm:.6g}
RM2 vmid 0 {fe.vmid_divider_ohm:.6g}
CM vmid 0 {fe.vmid_capacitance_f:.6g}
* the disc: open-circuit voltage behind its capacitance, cold side at VMID
VP src vmid DC 0 AC 1 PWL(0 0 {STEP_AT_S:.6g} 0 {STEP_AT_S + STEP_RISE_S:.6g} \
{CLAMP_STEP_V:.6g} {end_step:.6g} {CLAMP_STEP_V:.6g} {end_step + STEP_RISE_S:.6g} 0)
CP src hot {fe.piezo_capacitance_f:.6g}
RBLEED hot vmid {fe.bleed_ohm:.6g}
RS hot clampnode {fe.series_ohm:.6g}
RBIAS clampnode vmid {fe.bias_ohm:.6g}
DLOW 0 clampnode BAT54
VSENSE clampnode dtop DC 0
DHIGH dtop vdd BAT54
XBUF clampnode buf buf vdd 0 opamp
RF1 buf n1 {fe.filter_r_ohm:.6g}
RF2 n1 n2 {fe.filter_r_ohm:.6g}
CF1 n1 filt {fe.filter_c_feedback_f:.6g}
CF2 n2 0 {fe.filter_c_ground_f:.6g}
XLP n2 filt filt vdd 0 opamp
ROUT filt adc {fe.output_ohm:.6g}
CSH adc 0 {fe.adc_sample_hold_f:.6g}
.control
set wr_singlescale
set wr_vecnames
op
wrdata op.txt v(adc)
ac dec 100 1 100k
let gain = mag(v(adc))
wrdata ac.txt gain
tran 0.5u {TRAN_STOP_S:.6g} 0 0.5u
wrdata tran.txt v(clampnode) i(vsense) v(adc)
quit
.endc
.end
"""


def _table(path: Path) -> NDArray[np.float64]:
    try:
        data = np.loadtxt(path, skiprows=1, ndmin=2)
    except (OSError, ValueError) as exc:
        raise HardwareError(f"ngspice wrote no readable {path.name}") from exc
    return np.asarray(data, dtype=np.float64)


def simulate(fe: FrontEnd, *, workdir: Path) -> SpiceResult:
    """Run ngspice on :func:`netlist` in ``workdir`` and read its results.

    Raises
    ------
    HardwareError
        When ngspice is not installed, fails, or writes no results.
    """
    exe = shutil.which("ngspice")
    if exe is None:
        raise HardwareError("ngspice is not installed (apt-get install ngspice)")
    workdir.mkdir(parents=True, exist_ok=True)
    deck = workdir / "frontend.cir"
    deck.write_text(netlist(fe), encoding="ascii")
    try:
        proc = subprocess.run(
            [exe, "-b", deck.name],
            cwd=workdir,
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise HardwareError(f"ngspice took longer than {TIMEOUT_S:.0f} s") from exc
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise HardwareError(f"ngspice failed: {last}")
    op = _table(workdir / "op.txt")
    ac = _table(workdir / "ac.txt")
    tran = _table(workdir / "tran.txt")
    return SpiceResult(
        bias_v=float(op[0, 1]),
        frequency_hz=ac[:, 0],
        gain=ac[:, 1],
        time_s=tran[:, 0],
        clamp_node_v=tran[:, 1],
        # ngspice's source current flows from + through the source to -: into the diode.
        clamp_current_a=tran[:, 2],
        adc_v=tran[:, 3],
    )
