"""Reading a plate's load while it still rings after a landing.

A cube landing on a plate makes it ring on its load cell, and the HX711 reads
the ring as a swing of several cubes that dies away over up to a second.
Two tests tell a plate's new load from a window of its readings before then
(pure functions over windows of consecutive readings; the load-cell
processor, :mod:`dsp.detect.loadcell`, chooses the windows and decides what
a level read this way means):

- a *balanced* window: over a few periods a plate ringing about its load
  balances around it (:func:`balanced_windows`);
- a *fitted* window: the plate rings as one decaying mode, whose readings
  follow a second-order recurrence that gives the load it settles to
  (:func:`oscillation_fit`, :func:`fitted_windows`), long before the swing
  has died and however slowly it rings.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dsp.detect.orderstats import median

# Why 0.15 and 0.7: the two halves of a window over a plate ringing about
# its load differ by a small part of the swing (a period of 3-10 readings
# leaves at most a third of a swing unbalanced in a half, and decaying rings
# far less); a hand's push or a step edge moves one half by most of it. An
# impact spike is one or two readings far out: more than 0.7 of the swing
# from the window's median, where a sine's extremes lie at about 0.5.
RING_BALANCE = 0.15
RING_LONE_READING = 0.7
# Why 4: a ring of 12-40 Hz read at 80 Hz crosses its centre at least four
# times in ten readings; a plate sinking or creeping crosses it once or twice.
RING_CROSSINGS = 4
# Why 12 readings and these bounds: a plate on its cell rings as a damped
# oscillation about its new load, and the HX711 reads it as one, so its
# readings follow x[i] = a1 x[i-1] + a2 x[i-2] + b and the load is
# b / (1 - a1 - a2) long before the swing has died (a ring of 8-12 Hz, too
# slow for RING_CROSSINGS, included). Twelve readings give ten equations for
# three unknowns and two overlapping ten-reading fits that must agree. The
# fit must leave under RING_FIT_RESIDUAL of the swing unexplained (a hand's
# push, a sinking cube or an impact spike leave more), oscillate and decay,
# and not put the load near a pole (1 - a1 - a2 under RING_FIT_MIN_GAIN
# divides noise into the estimate).
RING_FIT_READINGS = 12
RING_FIT_RESIDUAL = 0.035
RING_FIT_MIN_GAIN = 0.1
RING_FIT_MAX_RADIUS = 0.98


def oscillation_fit(v: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Fit each row as a damped oscillation about a constant: x[i] = a1 x[i-1] + a2 x[i-2] + b.

    A second-order resonance read at fixed intervals obeys that recurrence
    exactly, whatever its frequency, phase and decay; the constant it
    settles to is ``b / (1 - a1 - a2)``.

    Parameters
    ----------
    v : ndarray, shape (m, n)
        ``m`` windows of ``n >= 5`` consecutive readings.

    Returns
    -------
    level : ndarray, shape (m,)
        The load each window's oscillation settles to (NaN where undefined).
    residual : ndarray, shape (m,)
        RMS of what the fit leaves, as a fraction of the window's swing.
    ok : ndarray of bool, shape (m,)
        Whether the fit is a decaying oscillation whose settled load is
        well determined (complex poles inside ``RING_FIT_MAX_RADIUS``,
        ``1 - a1 - a2 >= RING_FIT_MIN_GAIN``).
    """
    v = np.asarray(v, dtype=np.float64)
    n = v.shape[1]
    # The reductions as ufunc calls: what ``mean``, ``max``, ``min`` and
    # ``sum`` compute, to the bit (a sum over ``n``), without their Python
    # wrappers, which cost more than these few readings (the fusion asks
    # for one window at a time, thousands of times a replay).
    centre = np.add.reduce(v, axis=1) / n
    swing = np.maximum.reduce(v, axis=1) - np.minimum.reduce(v, axis=1)
    scale = np.where(swing > 0, swing, 1.0)
    z = (v - centre[:, None]) / scale[:, None]  # well conditioned whatever the counts
    u, w, y = z[:, 1:-1], z[:, :-2], z[:, 2:]
    # The normal equations of (a1, a2, b) summed row by row and solved by
    # Cramer's rule: for windows of ten readings a batched LAPACK solve costs
    # more in calls than in arithmetic. The tiny ridge keeps a flat window
    # (all zeros) solvable, as before.
    ridge = 1e-9
    suu = np.einsum("ij,ij->i", u, u) + ridge
    sww = np.einsum("ij,ij->i", w, w) + ridge
    suw = np.einsum("ij,ij->i", u, w)
    su, sw, s1 = np.add.reduce(u, axis=1), np.add.reduce(w, axis=1), (n - 2) + ridge
    ruy, rwy = np.einsum("ij,ij->i", u, y), np.einsum("ij,ij->i", w, y)
    ry = np.add.reduce(y, axis=1)
    if v.shape[0] == 1:
        # One window (most questions the fusion asks): the same arithmetic on
        # numpy scalars, at a fraction of the cost of one-element arrays.
        a1, a2, b = _solve(suu[0], sww[0], suw[0], su[0], sw[0], s1, ruy[0], rwy[0], ry[0])
        left = a1 * u + a2 * w + b - y
    else:
        a1, a2, b = _solve(suu, sww, suw, su, sw, s1, ruy, rwy, ry)
        left = a1[:, None] * u + a2[:, None] * w + b[:, None] - y
    residual = np.sqrt(np.einsum("ij,ij->i", left, left) / (n - 2))
    gain = 1.0 - a1 - a2
    ok = (
        (a1 * a1 + 4.0 * a2 < 0.0)  # complex poles: it oscillates
        & (-a2 < RING_FIT_MAX_RADIUS**2)  # and decays
        & (gain >= RING_FIT_MIN_GAIN)
        & (swing > 0)
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        level = np.where(gain != 0, centre + scale * b / gain, np.nan)
    return level, residual, ok


def _solve(
    suu: Any, sww: Any, suw: Any, su: Any, sw: Any, s1: Any, ruy: Any, rwy: Any, ry: Any,
) -> tuple[Any, Any, Any]:
    """(a1, a2, b) of :func:`oscillation_fit`'s normal equations by Cramer's rule.

    Elementwise: arrays of windows or the scalars of one, to the same bits.
    """
    c00, c01, c02 = sww * s1 - sw * sw, sw * su - suw * s1, suw * sw - sww * su
    c11, c12, c22 = suu * s1 - su * su, suw * su - suu * sw, suu * sww - suw * suw
    det = suu * c00 + suw * c01 + su * c02
    a1 = (c00 * ruy + c01 * rwy + c02 * ry) / det
    a2 = (c01 * ruy + c11 * rwy + c12 * ry) / det
    b = (c02 * ruy + c12 * rwy + c22 * ry) / det
    return a1, a2, b


def fitted_windows(
    v: np.ndarray, noise: np.ndarray,
    whole_fit: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Windows over a plate ringing as one damped oscillation, and the load it settles to.

    Each window is fitted whole and as its first and last ``n - 2``
    readings; it holds when all three fits oscillate and decay, and the
    whole one leaves under ``RING_FIT_RESIDUAL`` of the swing (plus the
    noise) unexplained.

    Parameters
    ----------
    v : ndarray, shape (m, n)
        Readings of ``m`` windows.
    noise : ndarray, shape (m,)
        The noise sigma of each window's channel, counts.
    whole_fit : tuple of ndarray, optional
        ``oscillation_fit(v)`` when the caller has it already (the fit of
        each row depends on that row alone).

    Returns
    -------
    holds : ndarray of bool, shape (m,)
    level : ndarray, shape (m,)
        The settled load of the whole fit (meaningful where it holds).
    spread : ndarray, shape (m,)
        How far the three fits' loads lie apart, counts (meaningful where
        the whole fit holds).
    swing : ndarray, shape (m,)
        Peak-to-peak of each window, counts.
    """
    v = np.asarray(v, dtype=np.float64)
    whole, residual, holds = oscillation_fit(v) if whole_fit is None else whole_fit
    swing = _spread(v)
    relative_noise = noise / np.where(swing > 0, swing, 1.0)
    # The part fits only of windows the whole fit explains: most windows
    # of a plate that is not ringing fail there (each row is fitted alone,
    # so the rows left out change nothing for the others).
    asked = np.flatnonzero(holds & (residual <= RING_FIT_RESIDUAL + relative_noise))
    spread = np.full(v.shape[0], np.nan)
    good = np.zeros(v.shape[0], dtype=bool)
    if asked.size:
        # Heads and tails fitted in one go: a call costs more than its rows.
        parts, _, parts_hold = oscillation_fit(np.concatenate([v[asked, :-2], v[asked, 2:]]))
        head, tail = parts[: asked.size], parts[asked.size :]
        head_holds, tail_holds = parts_hold[: asked.size], parts_hold[asked.size :]
        with np.errstate(invalid="ignore"):
            spread[asked] = _spread(np.stack([whole[asked], head, tail], axis=1))
        good[asked] = head_holds & tail_holds & np.isfinite(spread[asked])
    return good, whole, spread, swing


def balanced_windows(
    v: np.ndarray, noise_bar: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Windows over a plate ringing about a steady level, by their balance.

    A plate that rings after a landing swings about its new load; over a
    few periods its readings balance around it while the swing dies away.
    A window passes when its two halves have the same mean and the same
    midrange (within ``RING_BALANCE`` of the swing, plus ``noise_bar``), the
    swing does not grow, it crosses its centre at least ``RING_CROSSINGS``
    times (a plate still sinking or creeping stays on one side) and no
    single reading stands out (an impact spike does, and a hand's push is
    not balanced).

    Parameters
    ----------
    v : ndarray, shape (m, 2 h)
        Readings of ``m`` windows of two halves.
    noise_bar : ndarray, shape (m,)
        Allowed imbalance from noise alone, counts.

    Returns
    -------
    passes : ndarray of bool, shape (m,)
    mean, swing : ndarray, shape (m,)
    """
    half = v.shape[1] // 2
    first, second = v[:, :half], v[:, half:]
    # (Means as their sums over the count, extremes as ufunc reductions: the
    # same numbers without the methods' Python wrappers, thousands of calls.)
    mean = np.add.reduce(v, axis=1) / v.shape[1]
    swing = _spread(v)
    balance = np.maximum(
        np.abs(np.add.reduce(first, axis=1) / half
               - np.add.reduce(second, axis=1) / (v.shape[1] - half)),
        np.abs(_midrange(first) - _midrange(second)),
    )
    dying = _spread(second) <= _spread(first)
    side = np.signbit(v - mean[:, None])
    crossings = np.add.reduce(side[:, 1:] != side[:, :-1], axis=1, dtype=np.intp)
    passes = dying & (crossings >= RING_CROSSINGS) & (balance <= RING_BALANCE * swing + noise_bar)
    # The lone-reading test (a median per window) only where the rest pass.
    asked = np.flatnonzero(passes)
    if asked.size:
        tested = v[asked]
        lone = np.abs(tested - median(tested, axis=1)[:, None]).max(axis=1)
        passes[asked] = lone <= RING_LONE_READING * swing[asked]
    return passes, mean, swing


def _midrange(v: np.ndarray) -> np.ndarray:
    return 0.5 * (np.maximum.reduce(v, axis=-1) + np.minimum.reduce(v, axis=-1))


def _spread(v: np.ndarray) -> np.ndarray:
    """Peak to peak of each row (``np.ptp(v, axis=1)``: its maximum less its minimum)."""
    return np.maximum.reduce(v, axis=1) - np.minimum.reduce(v, axis=1)
