"""The calibration report: markdown plus PNG plots, with a grade per level.

Written by ``towerear calibrate --report`` and by the app's wizard. Plots use
matplotlib's Agg backend (no display needed).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from hostapp.calibration.health import MAX_NOISE_G
from hostapp.calibration.profile import CalibrationProfile, LoadCellProfile
from hostapp.errors import CalibrationError
from hostapp.i18n import os_reason, tr

# Why 10: one cube must stand ten noise sigmas above the floor for the
# detector's cube count to be unambiguous (a 5-sigma decision threshold
# halfway between 0 and 1 cube).
MIN_CUBE_SNR = 10.0
# Why 1 %: the lightest and heaviest cubes differ by more than 2x, so 1 %
# nonlinearity over a coin's range cannot turn one cube into two.
MAX_LINEARITY_PCT = 1.0
# Why 2 %: the scale's uncertainty is dominated by the coin's (~1 %); twice
# that means the readings themselves were unsteady.
MAX_SCALE_UNCERTAINTY = 0.02
# Why 0.9: below it acoustic-only play (audio interface, no load cells) would
# misplace one throw in ten on that level.
MIN_ACOUSTIC_RATE = 0.9


@dataclass(frozen=True)
class LevelGrade:
    """A level's verdict with the reasons it failed, if any."""

    level: int
    passed: bool
    reasons: tuple[str, ...]


def grade_level(profile: CalibrationProfile, level: int) -> LevelGrade:
    """Pass or fail one level against the limits above."""
    cell = profile.load[level]
    reasons: list[str] = []
    if cell is None:
        reasons.append(tr("load cell not calibrated"))
    else:
        if cell.counts_per_gram_uncertainty / abs(cell.counts_per_gram) > MAX_SCALE_UNCERTAINTY:
            reasons.append(tr("scale uncertain (readings unsteady)"))
        if cell.noise_g_rms > MAX_NOISE_G:
            reasons.append(
                tr("noise {noise} g above {limit} g",
                   noise=f"{cell.noise_g_rms:.3f}", limit=MAX_NOISE_G)
            )
        snr = _cube_snr(cell, profile.cube_mass_g())
        if snr is not None and snr < MIN_CUBE_SNR:
            reasons.append(tr("one cube only {snr}x the noise", snr=f"{snr:.1f}"))
        lin = cell.linearity_error_pct
        if lin is not None and abs(lin) > MAX_LINEARITY_PCT:
            reasons.append(tr("nonlinear by {error} %", error=f"{lin:+.2f}"))
    if profile.acoustic is not None and sum(profile.acoustic.confusion[level]) > 0:
        rate = profile.acoustic.detection_rate[level]
        if rate < MIN_ACOUSTIC_RATE:
            reasons.append(tr("acoustic detection {rate} %", rate=f"{100 * rate:.0f}"))
    return LevelGrade(level, not reasons, tuple(reasons))


def _cube_snr(cell: LoadCellProfile, fallback_mass: float | None) -> float | None:
    mass = cell.cube_mass_g or fallback_mass
    if mass is None or cell.noise_g_rms <= 0:
        return None
    return mass / cell.noise_g_rms


def write_report(profile: CalibrationProfile, directory: Path) -> Path:
    """Write ``calibration-report.md`` and its plots into ``directory``; return the report path.

    Raises
    ------
    CalibrationError
        With one sentence when the directory cannot be made or written to.
    """
    try:
        return _write_report(profile, directory)
    except OSError as exc:
        raise CalibrationError(
            tr(
                "cannot write the calibration report into {directory}: {reason}",
                directory=directory,
                reason=os_reason(exc),
            )
        ) from exc


def _write_report(profile: CalibrationProfile, directory: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    directory.mkdir(parents=True, exist_ok=True)
    levels = list(range(len(profile.load)))
    cells = profile.load
    cube = profile.cube_mass_g()

    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
    noise = [c.noise_g_rms if c else math.nan for c in cells]
    axes[0].bar(levels, noise, color="#4477aa")
    axes[0].axhline(MAX_NOISE_G, color="#cc6677", ls="--", label="limit")
    axes[0].set(title="Load noise per level", xlabel="level", ylabel="g rms")
    axes[0].legend()
    lin = [c.linearity_error_pct if c and c.linearity_error_pct is not None else math.nan
           for c in cells]
    unc = [100 * c.counts_per_gram_uncertainty / abs(c.counts_per_gram) if c else math.nan
           for c in cells]
    axes[1].errorbar(levels, lin, yerr=unc, fmt="o", color="#228833", capsize=3)
    axes[1].axhline(0, color="black", lw=0.5)
    axes[1].set(title="Scale residual at the second mass", xlabel="level", ylabel="%")
    snr = [_cube_snr(c, cube) if c else None for c in cells]
    axes[2].bar(levels, [s if s is not None else math.nan for s in snr], color="#ccbb44")
    axes[2].axhline(MIN_CUBE_SNR, color="#cc6677", ls="--")
    axes[2].set(title="One cube / noise", xlabel="level", ylabel="ratio", yscale="log")
    fig.tight_layout()
    fig.savefig(directory / "calibration-load.png", dpi=90)
    plt.close(fig)

    lines = [
        "# towerear calibration report",
        "",
        f"Device `{profile.device_id}`, calibrated {profile.created_utc}.",
        "",
        f"Cube mass: {cube:.3f} g" if cube else "Cube mass: not measured",
        "",
        "| level | counts/g | ± | noise g rms | drift g/min | linearity % | cube g | grade |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for level, cell in enumerate(cells):
        grade = grade_level(profile, level)
        verdict = "PASS" if grade.passed else "FAIL: " + "; ".join(grade.reasons)
        if cell is None:
            lines.append(f"| {level} | - | - | - | - | - | - | {verdict} |")
            continue
        lin_pct = cell.linearity_error_pct
        lin_text = f"{lin_pct:+.2f}" if lin_pct is not None else "-"
        cube_text = (f"{cell.cube_mass_g:.3f} ± {cell.cube_mass_uncertainty_g:.3f}"
                     if cell.cube_mass_g is not None and cell.cube_mass_uncertainty_g is not None
                     else "-")
        lines.append(
            f"| {level} | {cell.counts_per_gram:.1f} | {cell.counts_per_gram_uncertainty:.1f} | "
            f"{cell.noise_g_rms:.4f} | {cell.drift_g_per_min:+.4f} | {lin_text} | {cube_text} | "
            f"{verdict} |"
        )
    lines += ["", "![load-cell plots](calibration-load.png)", ""]
    if profile.acoustic is not None:
        _confusion_plot(profile, directory / "calibration-acoustic.png")
        rates = ", ".join(f"{level}: {100 * r:.0f} %"
                          for level, r in enumerate(profile.acoustic.detection_rate)
                          if sum(profile.acoustic.confusion[level]) > 0)
        lines += [
            "## Acoustics",
            "",
            f"{profile.acoustic.drops_per_level} test drops per level. Detection rate per level: "
            f"{rates}.",
            "",
            "![acoustic confusion matrix](calibration-acoustic.png)",
            "",
        ]
    path = directory / "calibration-report.md"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def _confusion_plot(profile: CalibrationProfile, path: Path) -> None:
    import matplotlib.pyplot as plt
    import numpy as np

    assert profile.acoustic is not None
    matrix = np.asarray(profile.acoustic.confusion, dtype=float)
    fig, ax = plt.subplots(figsize=(4.6, 4))
    ax.imshow(matrix, cmap="Blues")
    for (i, j), value in np.ndenumerate(matrix):
        if value:
            ax.text(j, i, f"{int(value)}", ha="center", va="center", fontsize=8)
    ax.set(title="Acoustic level: true vs decided", xlabel="decided level", ylabel="true level")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
