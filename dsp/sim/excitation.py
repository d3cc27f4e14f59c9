"""Timed inputs to the signal chains, evaluated on any slice of a sample grid.

Every input is a pure function of absolute time, so rendering ``[a, b)`` in
one piece or in many gives the same numbers: force pulses (an impact's
half-sine contact force, keeping its impulse exactly), smooth envelopes of
handling noise, and static load steps (a cube at rest, a coin).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Grid:
    """A uniform sample grid: sample ``k`` is at ``t0_s + k / rate_hz``."""

    t0_s: float
    rate_hz: float

    def time(self, k: int) -> float:
        """Time of sample ``k``."""
        return self.t0_s + k / self.rate_hz

    def times(self, start: int, stop: int) -> FloatArray:
        """Times of samples ``start..stop-1``."""
        return self.t0_s + np.arange(start, stop, dtype=np.float64) / self.rate_hz

    def first_at_or_after(self, t_s: float) -> int:
        """Index of the first sample at or after ``t_s``."""
        return math.ceil((t_s - self.t0_s) * self.rate_hz - 1e-6)


@dataclass(frozen=True)
class Pulse:
    """A contact force on one level with a given area (impulse) and duration."""

    t_s: float
    level: int
    area: float
    duration_s: float
    mode_weights: tuple[float, ...] = ()  # per plate mode; empty: 1 for every mode

    @property
    def end_s(self) -> float:
        """When the contact is over."""
        return self.t_s + self.duration_s


def _pulse_samples(pulse: Pulse, grid: Grid) -> tuple[int, FloatArray]:
    """First sample index and sample values of one pulse (sum / rate = area)."""
    r = grid.rate_hz
    if pulse.duration_s * r < 2.0:
        # Shorter than two samples: split the impulse between the two samples
        # around its centre so sub-sample timing survives.
        x = (pulse.t_s + 0.5 * pulse.duration_s - grid.t0_s) * r
        k = math.floor(x)
        frac = x - k
        return k, np.array([(1.0 - frac) * pulse.area * r, frac * pulse.area * r])
    k0 = grid.first_at_or_after(pulse.t_s)
    k1 = math.floor((pulse.end_s - grid.t0_s) * r)
    t = grid.times(k0, k1 + 1)
    shape = np.sin(np.pi * np.clip((t - pulse.t_s) / pulse.duration_s, 0.0, 1.0))
    return k0, shape * (pulse.area * r / float(np.sum(shape)))


def deposit_pulses(out: FloatArray, pulses: Iterable[Pulse], grid: Grid, start: int) -> None:
    """Add every pulse's samples that fall in ``out`` (rows ``start..``) to column ``level``.

    ``out`` is ``(rows, levels)`` or ``(rows, levels, modes)``; in the latter
    each mode gets the pulse times the pulse's weight for that mode.
    """
    stop = start + out.shape[0]
    for pulse in pulses:
        k0, values = _pulse_samples(pulse, grid)
        lo, hi = max(k0, start), min(k0 + len(values), stop)
        if lo >= hi:
            continue
        part = values[lo - k0 : hi - k0]
        if out.ndim == 2:
            out[lo - start : hi - start, pulse.level] += part
        else:
            weights = np.ones(out.shape[2])
            weights[: len(pulse.mode_weights)] = pulse.mode_weights
            out[lo - start : hi - start, pulse.level, :] += part[:, None] * weights[None, :]


@dataclass(frozen=True)
class Envelope:
    """A smooth on/off window with a weight per level (handling, touches, talk)."""

    t_start_s: float
    t_stop_s: float
    weights: tuple[float, ...]
    ramp_s: float = 0.05

    def values(self, t: FloatArray) -> FloatArray:
        """Envelope at times ``t``: 0 outside, 1 inside, raised-cosine edges."""
        rise = np.clip((t - self.t_start_s) / self.ramp_s, 0.0, 1.0)
        fall = np.clip((self.t_stop_s - t) / self.ramp_s, 0.0, 1.0)
        return 0.25 * (1 - np.cos(np.pi * rise)) * (1 - np.cos(np.pi * fall))


def envelope_sum(envelopes: Iterable[Envelope], t: FloatArray, width: int) -> FloatArray | None:
    """Sum of weighted envelopes at times ``t`` as ``(len(t), width)``; None if all zero."""
    total: FloatArray | None = None
    for env in envelopes:
        if env.t_stop_s <= t[0] or env.t_start_s >= t[-1]:
            continue
        part = env.values(t)[:, None] * np.asarray(env.weights)[None, :width]
        total = part if total is None else total + part
    return total


@dataclass(frozen=True)
class Step:
    """A static load change on one level, ramped linearly over ``ramp_s``."""

    t_s: float
    level: int
    delta_g: float
    ramp_s: float = 0.0

    @property
    def end_s(self) -> float:
        """When the load has fully changed."""
        return self.t_s + self.ramp_s

    def fraction(self, t: FloatArray) -> FloatArray:
        """How much of the step has happened at times ``t`` (0..1)."""
        if self.ramp_s <= 0.0:
            return (t >= self.t_s).astype(np.float64)
        return np.clip((t - self.t_s) / self.ramp_s, 0.0, 1.0)


@dataclass(frozen=True)
class Outage:
    """A load/piezo channel out of contact from ``t_off_s`` to ``t_on_s``."""

    level: int
    t_off_s: float
    t_on_s: float
    reconnect_kick_v: float = 0.0
