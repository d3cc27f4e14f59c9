"""How a slow load converter spreads an impact's spike: whether short windows are safe.

A cube striking a plate gives its cell a push of a few milliseconds. The
HX711 filters its conversions, so the push shows in the readings as a
spike: in one or two readings of unequal size when the filter weighs its
conversions unequally (a sinc filter, or each reading the average of its own
period), or as a plateau of up to four *equal* readings when the converter
averages its last conversions. At 10 readings a second a stable window of
five readings is half a second, slower than a quick series; three readings
would do, but lie flat on a plateau and read it as a load. So the windows
are shortened only once this converter has shown that its spikes are
sharp: many spikes seen, hardly any of them flat.

:class:`SpikeShapes` watches every channel for spikes (a jump from a quiet
level and back within six readings) and counts them by how many readings
stay within a quarter of their peak. It is a streaming processor: results
do not depend on how the readings are cut into blocks.
"""

from __future__ import annotations

import numpy as np

from dsp.detect.orderstats import median

# Why 30: as for the load channel's own noise (``loadcell._MIN_TARE_READINGS``).
_TARE_READINGS = 30
# Why 10 and 5 sigma: a spike stands far out of the noise and starts from a
# reading at the quiet level (the median of the three before it, itself
# off by up to a sigma); it is over when two readings in a row are back
# there (within six readings: a cube that stays is a step, not a spike).
_SPIKE_SIGMAS = 10.0
_QUIET_SIGMAS = 5.0
_SPIKE_READINGS = 6
# Why three quarters: a plateau reading of an averaging converter equals the
# peak; the next reading of a weighing filter is at most two thirds of it.
_PLATEAU_FRACTION = 0.75
# Why 3 readings: a plateau of three equal readings is what a three-reading
# window would lie flat on.
FLAT_READINGS = 3
# Why 8 sharp and one flat in ten: our towers at 10 readings a second show
# 0-3 % flat spikes (a cube's strike and bounce merging), models C and D
# 0-4 %; model A's towers that average four conversions 74-96 %, those that
# average two none (their plateaus of two no three-reading window lies
# on). Eight sharp spikes come within 11-63 s of play; eight in a row from
# a converter whose spikes are 60 % flat would be a chance of 1 in 1,500.
# 12 proved it 5-10 s later and moved 1-3 landings per set either way.
SHARP_NEEDED = 8
FLAT_PER_SHARP = 0.1
# Why three in ten to go back: a converter judged sharp by chance (eight in
# a row from one that averages) shows its flat spikes soon after; one that
# is sharp stays under one in ten.
FLAT_PER_SHARP_BACK = 0.3


class SpikeShapes:
    """Counts sharp and flat spikes on all load channels; says when short windows are safe.

    Parameters
    ----------
    n_channels : int
        Number of load channels.

    Attributes
    ----------
    sharp, flat : int
        Spikes seen whose plateau was under / at least ``FLAT_READINGS`` readings.
    short_windows_since_s, short_windows_until_s : float
        Stream times of the readings from which short windows are safe, and
        from which they are no longer (both infinite until then; once
        given up, short windows are not taken again).
    """

    def __init__(self, n_channels: int) -> None:
        self.n_channels = int(n_channels)
        self.sharp = 0
        self.flat = 0
        self.short_windows_since_s = np.inf
        self.short_windows_until_s = np.inf
        self._tare: list[list[float]] = [[] for _ in range(self.n_channels)]
        # Per channel: the last three quiet readings, and the spike being read.
        self._recent: list[list[float]] = [[] for _ in range(self.n_channels)]
        self._spike: list[list[float] | None] = [None] * self.n_channels
        self._base = [0.0] * self.n_channels
        self._sigma = [np.inf] * self.n_channels

    def process(self, t_s: np.ndarray, values: np.ndarray, valid: np.ndarray) -> None:
        """Feed readings: times ``(m,)``, counts and valid flags ``(m, n_channels)``."""
        # Plain floats: a reading at a time, 10 a second, costs less so than
        # through numpy scalars.
        rows = np.asarray(values, dtype=np.float64).tolist()
        oks = np.asarray(valid, dtype=bool).tolist()
        times = np.asarray(t_s, dtype=np.float64).tolist()
        for row, ok, t in zip(rows, oks, times, strict=True):
            for ch in range(self.n_channels):
                if not ok[ch]:
                    self._recent[ch].clear()
                    self._spike[ch] = None
                    continue
                self._reading(ch, row[ch])
            if self.short_windows_since_s == np.inf and self._short_safe():
                self.short_windows_since_s = t
            elif (
                self.short_windows_since_s < np.inf
                and self.short_windows_until_s == np.inf
                and self.flat > FLAT_PER_SHARP_BACK * self.sharp
            ):
                self.short_windows_until_s = t

    def _short_safe(self) -> bool:
        return self.sharp >= SHARP_NEEDED and self.flat <= FLAT_PER_SHARP * self.sharp

    def _reading(self, ch: int, x: float) -> None:
        if self._sigma[ch] == np.inf:
            tare = self._tare[ch]
            tare.append(x)
            if len(tare) >= _TARE_READINGS:
                d = np.diff(np.asarray(tare))
                mad = float(median(np.abs(d - median(d))))
                self._sigma[ch] = max(1.4826 * mad / np.sqrt(2.0), 1.0)
                tare.clear()
            return
        quiet = _QUIET_SIGMAS * self._sigma[ch]
        spike = self._spike[ch]
        recent = self._recent[ch]
        if spike is not None:
            spike.append(x - self._base[ch])
            if len(spike) >= 2 and abs(spike[-1]) < quiet and abs(spike[-2]) < quiet:
                self._count(spike[:-2])
                self._spike[ch] = None
                recent[:] = [x]
            elif len(spike) > _SPIKE_READINGS:
                self._spike[ch] = None  # it stayed: a step, not a spike
                recent[:] = [x]
            return
        if len(recent) == 3:
            base = sorted(recent)[1]
            quiet_before = abs(recent[-1] - base) < quiet
            if quiet_before and abs(x - base) > _SPIKE_SIGMAS * self._sigma[ch]:
                self._base[ch] = base
                self._spike[ch] = [x - base]
                return
        recent.append(x)
        del recent[:-3]

    def _count(self, deviations: list[float]) -> None:
        dev = [abs(d) for d in deviations]
        if not dev:
            return
        plateau = sum(d >= _PLATEAU_FRACTION * max(dev) for d in dev)
        if plateau >= FLAT_READINGS:
            self.flat += 1
        else:
            self.sharp += 1
