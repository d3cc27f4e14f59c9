"""Draw the piezo front end's ngspice results for docs/img/hardware-frontend.png.

``python -m hardware.plots`` runs :func:`hardware.spice.simulate` on the
design values and plots the simulated gain beside the computed one, and the
clamp at work on a +-20 V step of the disc.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from hardware.errors import HardwareError
from hardware.frontend import FRONT_END, figures, transfer
from hardware.spice import CLAMP_STEP_V, simulate

IMG_DIR = Path(__file__).resolve().parent.parent / "docs" / "img"


def plot_frontend(out: Path) -> None:
    """Simulate the front end and write the two-panel figure to ``out`` (PNG)."""
    with tempfile.TemporaryDirectory() as tmp:
        sim = simulate(FRONT_END, workdir=Path(tmp))
    f = figures()
    computed = np.abs(transfer(FRONT_END, frequency_hz=sim.frequency_hz))
    # A bare Figure renders with Agg and needs no pyplot or GUI backend.
    fig = Figure(figsize=(10, 3.8))
    ax_f, ax_t = fig.subplots(1, 2)
    ax_f.semilogx(sim.frequency_hz, 20 * np.log10(sim.gain), lw=2.5, label="ngspice")
    ax_f.semilogx(sim.frequency_hz, 20 * np.log10(computed), "--", label="computed")
    ax_f.axvline(f.corner_hz, color="gray", lw=0.8)
    ax_f.axvline(f.nyquist_hz, color="red", lw=0.8)
    ax_f.axhline(-3, color="gray", lw=0.8, ls=":")
    ax_f.annotate(
        f"-3 dB at {f.corner_hz:.0f} Hz",
        (f.corner_hz, -3),
        (8, -40),
        textcoords="offset points",
        fontsize=8,
    )
    ax_f.annotate(
        f"Nyquist: -{f.attenuation_at_nyquist_db:.1f} dB",
        (f.nyquist_hz, -20),
        (6, 30),
        textcoords="offset points",
        fontsize=8,
        color="red",
    )
    # Limits hold all data: some SVG renderers ignore clip paths.
    ax_f.set(
        xlim=(1, 1e5),
        ylim=(-110, 5),
        xlabel="frequency (Hz)",
        ylabel="disc to ADC pin (dB)",
        title="small-signal response",
    )
    ax_f.grid(True, which="both", alpha=0.3)
    ax_f.legend(fontsize=8, loc="lower left")
    t_ms = sim.time_s * 1e3
    ax_t.plot(t_ms, sim.clamp_node_v, label="clamped node (behind R_s)")
    ax_t.plot(t_ms, sim.adc_v, label="ADC pin")
    ax_t.axhline(FRONT_END.supply_v, color="gray", lw=0.8, ls=":")
    ax_t.axhline(0, color="gray", lw=0.8, ls=":")
    ax_t.set(
        xlabel="time (ms)", ylabel="volts", title=f"disc steps +{CLAMP_STEP_V:.0f} V, then back"
    )
    ax_t.grid(True, alpha=0.3)
    ax_t.legend(fontsize=8, loc="upper right")
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=100)


def main() -> int:
    """Write docs/img/hardware-frontend.png."""
    out = IMG_DIR / "hardware-frontend.png"
    try:
        plot_frontend(out)
    except HardwareError as exc:
        print(f"plots: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
