"""Synthetic tower signals with known answers, for tests and benchmarks.

Deliberately simple and independent of :mod:`dsp.sim`: a cube falling to
level L clicks on the hole edges of the levels above (a damped burst, heard
on neighbours through a crosstalk factor), bounces on L, and after a short
ringing adds one cube to L's load. Used to check the detector's mechanics
(chunking invariance, timing, lifts) on signals whose truth is exact.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class SyntheticLanding:
    """A cube that came to rest on ``level`` at ``t_rest_s``."""

    t_rest_s: float
    level: int


@dataclass
class SyntheticTower:
    """A synthetic session: piezo and load arrays over ``duration_s``.

    Parameters
    ----------
    duration_s : float
        Length of the session.
    seed : int
        Random seed for noise and sensor constants.
    piezo_rate_hz, load_rate_hz : float
        Sample rates.
    cube_counts : float
        Load step of one cube, counts (before per-level sensitivity spread).
    load_noise_counts : float
        Reading noise sigma, counts.
    crosstalk_db_per_level : float
        Attenuation of a click per level of distance.
    """

    duration_s: float
    seed: int = 0
    piezo_rate_hz: float = 2000.0
    load_rate_hz: float = 80.0
    cube_counts: float = 9000.0
    load_noise_counts: float = 40.0
    crosstalk_db_per_level: float = 14.0
    landings: list[SyntheticLanding] = field(default_factory=list)
    lifts: list[tuple[float, float, int]] = field(default_factory=list)

    def __post_init__(self) -> None:
        rng = np.random.default_rng(self.seed)
        n_p = int(self.duration_s * self.piezo_rate_hz)
        n_l = int(self.duration_s * self.load_rate_hz)
        self.piezo = 512.0 + rng.normal(0.0, 1.2, (n_p, 8))
        self.load_t_s = (np.arange(n_l) + 1) / self.load_rate_hz
        tare = rng.uniform(-2e5, 2e5, 8)
        self.gain = rng.uniform(0.9, 1.1, 8)
        self.load = tare[None, :] + rng.normal(0.0, self.load_noise_counts, (n_l, 8))
        self.load_valid = np.ones((n_l, 8), dtype=bool)
        self._rng = rng

    def _click(self, t_s: float, level: int, amplitude: float) -> None:
        n = int(0.03 * self.piezo_rate_hz)
        start = int(t_s * self.piezo_rate_hz)
        if start + n >= self.piezo.shape[0]:
            return
        k = np.arange(n) / self.piezo_rate_hz
        burst = np.sin(2 * np.pi * 450.0 * k) * np.exp(-k / 0.006)
        levels = np.arange(8)
        gains = 10.0 ** (-self.crosstalk_db_per_level * np.abs(levels - level) / 20.0)
        self.piezo[start : start + n] += amplitude * burst[:, None] * gains[None, :]

    def throw(self, t_s: float, level: int) -> SyntheticLanding:
        """Drop a cube at ``t_s`` that comes to rest on ``level``; returns the truth."""
        t = t_s
        for edge in range(7, level, -1):
            self._click(t, edge, 150.0 * self._rng.uniform(0.6, 1.0))
            t += 0.05
        for bounce in range(3):
            self._click(t, level, 250.0 * 0.45**bounce)
            t += 0.04 * 0.6**bounce
        rest = t
        after = self.load_t_s >= rest
        ring = np.exp(-np.clip(self.load_t_s - rest, 0, None) / 0.03) * np.cos(
            2 * np.pi * 12.0 * (self.load_t_s - rest)
        )
        step = self.cube_counts * self.gain[level]
        self.load[after, level] += step * (1.0 + 0.8 * ring[after])
        landing = SyntheticLanding(rest, level)
        self.landings.append(landing)
        return landing

    def lift(self, t_s: float, until_s: float, exposed: int) -> None:
        """Lift modules above ``exposed`` between ``t_s`` and ``until_s``."""
        span = (self.load_t_s >= t_s) & (self.load_t_s < until_s)
        self.load_valid[span, exposed + 1 :] = False
        self.lifts.append((t_s, until_s, exposed))

    def piezo_codes(self) -> np.ndarray:
        """Piezo ADC codes, shape (n, 8), uint16 (10-bit range)."""
        return np.clip(np.round(self.piezo), 0, 1023).astype(np.uint16)

    def load_counts(self) -> np.ndarray:
        """HX711 counts, shape (m, 8), int32; 0 where not valid."""
        return np.where(self.load_valid, np.round(self.load), 0).astype(np.int32)
