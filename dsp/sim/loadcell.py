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
# Why 1024 points (~0.8 s): a settled cell is recognised only at multiples of
# this, so the skip cannot depend on how callers cut the time axis.
CELL_GRID = 1024
# Creep (time constants of minutes) is stepped every 128 points (~0.1 s).
CREEP_TICK = 128
_SETTLED_G = 1e-6  # a cell filter this close to rest is at rest
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
        # Per unit of constant input, the state a settled cell filter holds.
        self._cell_zi_unit = [signal.lfilter_zi(b, a) for b, a in self._cell]
        # A quiet cell sits at ``ref`` grams with its filter settled: the
        # filter runs on deviations from ``ref`` and is skipped while there are none.
        self._cell_ref = np.zeros(n)
        self._cell_quiet = np.ones(n, dtype=bool)
        self._creep_a = np.array(
            [np.exp(-CREEP_TICK / (lv.creep_tau_s * self.fast_hz)) for lv in tower.levels]
        )
        self._creep_state = np.zeros(n)
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

    def _cell_response(self, level: int, force: FloatArray) -> FloatArray:
        """The plate-on-cell spring-mass: force in, gram reading out, for one level."""
        b, a = self._cell[level]
        ref = float(self._cell_ref[level])
        if not self._cell_quiet[level]:
            y, self._cell_zi[level] = signal.lfilter(b, a, force - ref, zi=self._cell_zi[level])
            return ref + y
        moved = np.flatnonzero(force != ref)
        out = np.full(len(force), ref)
        if len(moved):
            i = int(moved[0])
            y, self._cell_zi[level] = signal.lfilter(b, a, force[i:] - ref, zi=np.zeros(2))
            out[i:] = ref + y
            self._cell_quiet[level] = False
        return out

    def _settle_cells(self, force_now: FloatArray) -> None:
        """Declare cells at rest whose filter holds the steady state of the present force."""
        for level in np.flatnonzero(~self._cell_quiet):
            deviation = float(force_now[level] - self._cell_ref[level])
            steady = self._cell_zi_unit[level] * deviation
            if float(np.max(np.abs(self._cell_zi[level] - steady))) < _SETTLED_G:
                self._cell_ref[level] = force_now[level]
                self._cell_zi[level] = np.zeros(2)
                self._cell_quiet[level] = True

    def _creep(self, start: int, stop: int, static_g: FloatArray) -> FloatArray:
        """First-order lag of the static load, stepped every :data:`CREEP_TICK` points."""
        out = np.empty_like(static_g)
        done = start
        for q in range(-(-start // CREEP_TICK) * CREEP_TICK, stop, CREEP_TICK):
            out[done - start : q - start] = self._creep_state
            a = self._creep_a
            self._creep_state = a * self._creep_state + (1.0 - a) * static_g[q - start]
            done = q
        out[done - start :] = self._creep_state
        return out

    def render(
        self, start: int, stop: int, *, static_g: FloatArray, dynamic_g: FloatArray | None
    ) -> tuple[npt.NDArray[np.int64], FloatArray]:
        """Readings completed on internal points ``start..stop-1``.

        Parameters
        ----------
        start, stop : int
            Internal grid indices; the range must not cross a multiple of
            :data:`CELL_GRID` except at ``stop``.
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
            grams[:, level] = self._cell_response(level, force[:, level])
        grams += self._creep(start, stop, static_g) * self._creep_frac[None, :]
        if stop % CELL_GRID == 0:
            self._settle_cells(force[-1])
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
            drift, self._drift_zi = signal.lfilter(
                [1.0], [1.0, -1.0], steps, axis=0, zi=self._drift_zi
            )
            out = out + drift + self._read_noise.rows(j0, j1) * self._noise_rms[None, :]
        out = np.clip(np.round(out), _S24_MIN, _S24_MAX)
        return j.astype(np.int64), out
