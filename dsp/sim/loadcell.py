"""Plate on a bar load cell, read by an HX711 at about 80 readings a second.

Signal path per level, on an internal grid of 16 points per HX711 conversion:

    force on the plate [g] (static load + impulses + hands)
    -> plate-on-cell spring-mass (resonance 12-40 Hz, Q 3-10): ringing
    -> + creep (a share of the static load, first-order lag of minutes)
    -> bridge -> counts (offset + counts_per_gram * grams)
    -> HX711 digital filter (sinc^4 over four conversion periods: a step
       settles in four readings, as the datasheet's 50 ms at 80 SPS)
    -> one reading per conversion + drift (random walk) + white noise
    -> rounded, clipped to signed 24 bits.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from scipy import signal

from dsp.sim.constants import TowerConstants
from dsp.sim.excitation import Grid
from dsp.sim.noise import IndexedNoise

FloatArray = npt.NDArray[np.float64]

SUBSAMPLES = 16  # internal points per HX711 conversion
_S24_MIN, _S24_MAX = -(2**23), 2**23 - 1

_STREAM_READ_NOISE = 21
_STREAM_DRIFT = 22


def hx711_kernel() -> FloatArray:
    """The HX711 filter on the internal grid: four cascaded one-period boxcars, unit gain."""
    box = np.ones(SUBSAMPLES) / SUBSAMPLES
    kernel = box
    for _ in range(3):
        kernel = np.convolve(kernel, box)
    return kernel


class LoadChain:
    """Stateful load path of the eight plates of one tower.

    Parameters
    ----------
    tower : TowerConstants
    seed : int
        Session seed for the noise streams.
    """

    def __init__(self, tower: TowerConstants, seed: int) -> None:
        self.tower = tower
        n = tower.n_levels
        self.n = n
        self.fast_hz = tower.load_rate_hz * SUBSAMPLES
        # Internal point q is at load_phase + (q - 15) / fast: reading j is the
        # filter output at q = 16 j + 15, at time load_phase + j / load_rate.
        self.grid = Grid(tower.load_phase_s - (SUBSAMPLES - 1) / self.fast_hz, self.fast_hz)
        self._cell: list[tuple[FloatArray, FloatArray]] = []
        for lv in tower.levels:
            w = 2.0 * self.fast_hz * np.tan(np.pi * lv.cell_freq_hz / self.fast_hz)
            b, a = signal.bilinear([w * w], [1.0, w / lv.cell_q, w * w], fs=self.fast_hz)
            self._cell.append((np.asarray(b), np.asarray(a)))
        self._cell_zi = [np.zeros(2) for _ in range(n)]
        self._creep_a = np.array(
            [np.exp(-1.0 / (lv.creep_tau_s * self.fast_hz)) for lv in tower.levels]
        )
        self._creep_zi = [np.zeros(1) for _ in range(n)]
        self._creep_frac = np.array([lv.creep_fraction for lv in tower.levels])
        self._cpg = np.array(tower.counts_per_gram)
        self._offset = np.array(tower.offset_counts)
        self._kernel = hx711_kernel()
        # The last len(kernel) - 1 filter inputs; start as if the empty plate
        # had been powered for a long time.
        self._history = np.repeat(self._offset[None, :], len(self._kernel) - 1, axis=0)
        self._noise_rms = np.array([lv.noise_counts_rms for lv in tower.levels])
        step_g = np.array([lv.drift_g_per_sqrt_min for lv in tower.levels]) * np.sqrt(
            1.0 / tower.load_rate_hz / 60.0
        )
        self._drift_step_counts = step_g * self._cpg
        self._drift_zi = np.zeros((1, n))
        self._read_noise = IndexedNoise(seed, _STREAM_READ_NOISE, n)
        self._drift_noise = IndexedNoise(seed, _STREAM_DRIFT, n)

    def reading_time(self, j: int) -> float:
        """Simulator time of reading ``j``."""
        return self.tower.load_phase_s + j / self.tower.load_rate_hz

    def power_up(self, level: int) -> None:
        """The level's HX711 was just reconnected: its filter starts from nothing."""
        self._history[:, level] = 0.0

    def render(
        self, start: int, stop: int, *, static_g: FloatArray, dynamic_g: FloatArray | None
    ) -> tuple[npt.NDArray[np.int64], FloatArray]:
        """Readings completed on internal points ``start..stop-1``.

        Parameters
        ----------
        start, stop : int
            Internal grid indices.
        static_g : ndarray (stop - start, 8)
            Mass resting on each plate, in grams.
        dynamic_g : ndarray (stop - start, 8) or None
            Dynamic force on each plate in gram-force (impulses, hands, knocks).

        Returns
        -------
        reading_index : ndarray (m,) int
            Index ``j`` of each reading completed in the range.
        counts : ndarray (m, 8) float
            Readings in counts (rounded and clipped).
        """
        force = static_g if dynamic_g is None else static_g + dynamic_g
        grams = np.empty_like(force)
        for level in range(self.n):
            b, a = self._cell[level]
            grams[:, level], self._cell_zi[level] = signal.lfilter(
                b, a, force[:, level], zi=self._cell_zi[level]
            )
            a_c = self._creep_a[level]
            creep, self._creep_zi[level] = signal.lfilter(
                [1.0 - a_c], [1.0, -a_c], static_g[:, level], zi=self._creep_zi[level]
            )
            grams[:, level] += self._creep_frac[level] * creep
        counts_in = self._offset[None, :] + grams * self._cpg[None, :]
        # Only every 16th filter output is a reading: evaluate the FIR there
        # alone, on windows of past inputs.
        extended = np.concatenate([self._history, counts_in])
        self._history = extended[len(extended) - len(self._history) :].copy()
        first = (-(start + 1)) % SUBSAMPLES  # offset of the first q = 16 j + 15
        picked = np.arange(first, stop - start, SUBSAMPLES)
        j = (start + picked) // SUBSAMPLES
        taps = len(self._kernel)
        if len(picked):
            windows = extended[picked[:, None] + np.arange(taps)[None, :]]  # (m, taps, 8)
            # A plain sum over the taps axis adds in the same order whatever m is.
            out = (windows * self._kernel[::-1][None, :, None]).sum(axis=1)
        else:
            out = np.zeros((0, self.n))
        if len(j):
            j0, j1 = int(j[0]), int(j[-1]) + 1
            steps = self._drift_noise.rows(j0, j1) * self._drift_step_counts[None, :]
            drift, self._drift_zi = signal.lfilter([1.0], [1.0, -1.0], steps, axis=0,
                                                   zi=self._drift_zi)
            out = out + drift + self._read_noise.rows(j0, j1) * self._noise_rms[None, :]
        out = np.clip(np.round(out), _S24_MIN, _S24_MAX)
        return j.astype(np.int64), out
