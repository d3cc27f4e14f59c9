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
# Why a twentieth of the step, from the second reading on, or from the
# third after an overshoot: a converter that averages its last N readings
# (N of 3 or more: those whose spikes a three-reading window lies flat on)
# reads a new load h, pushed by p more in the impact's conversion, as the
# ramp ((i + 1) h + p) / N. Its readings rise by h / N (a quarter or more)
# from one to the next until the N-th, so no two of them lie that close to
# the new load: it never reads a cube's step settled from its second
# reading on. From its third only with N = 3 and p under 0.15 h, and then
# its second reading is under the new load, not over it. A weighing filter
# reads the push in one or two readings and the new load after. Steps count
# as sharp spikes do; a plate that rings, or a cube that bounces, is slower
# and gives no sign either way. At a tenth, model E's converter that
# settles over four readings showed 5 such steps in one quick series (a
# strike's spike and a cube's fall overlapping) and took short windows
# there: 4 landings lost; at a twentieth, 2 steps, and it did not. Why 40
# sigma: a twentieth of the step stays twice the noise. What it gains: on
# towers where strikes in passing are rare (single throws onto plates
# mostly empty), spikes alone proved the converter only after 20-80 s, and
# every landing until then waited a fifth of a second longer.
STEP_BAND = 0.05
_STEP_SIGMAS = 40.0
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
        self.sharp_steps = 0
        self.short_windows_since_s = np.inf
        self.short_windows_until_s = np.inf
        self._tare: list[list[float]] = [[] for _ in range(self.n_channels)]
        # Per channel: the last three quiet readings, and the spike being read.
        self._recent: list[list[float]] = [[] for _ in range(self.n_channels)]
        self._spike: list[list[float] | None] = [None] * self.n_channels
        self._base = [0.0] * self.n_channels
        self._sigma = [np.inf] * self.n_channels

    def process(
        self,
        t_s: np.ndarray,
        values: np.ndarray,
        valid: np.ndarray,
        fresh: np.ndarray | None = None,
    ) -> None:
        """Feed readings: times ``(m,)``, counts and valid flags ``(m, n_channels)``.

        ``fresh`` (default: ``valid``) marks the readings the converter made
        then; a valid one that is not is a fresh reading held over a moment
        it was missing (``dsp.detect.stale``) and is passed over: a spike's
        shape is in the converter's own readings, and a reading held in it
        would make it look flat. A reading not valid is a gap: the spike or
        quiet stretch being read is forgotten.
        """
        # Plain floats: a reading at a time, 10 a second, costs less so than
        # through numpy scalars.
        rows = np.asarray(values, dtype=np.float64).tolist()
        oks = np.asarray(valid, dtype=bool).tolist()
        news = oks if fresh is None else np.asarray(fresh, dtype=bool).tolist()
        times = np.asarray(t_s, dtype=np.float64).tolist()
        for row, ok, new, t in zip(rows, oks, news, times, strict=True):
            for ch in range(self.n_channels):
                if not ok[ch]:
                    self._recent[ch].clear()
                    self._spike[ch] = None
                    continue
                if new[ch]:
                    self._reading(ch, row[ch])
            if self.short_windows_since_s == np.inf and self._short_safe():
                self.short_windows_since_s = t
            elif (
                self.short_windows_since_s < np.inf
                and self.short_windows_until_s == np.inf
                and self.flat > FLAT_PER_SHARP_BACK * (self.sharp + self.sharp_steps)
            ):
                self.short_windows_until_s = t

    def _short_safe(self) -> bool:
        sharp = self.sharp + self.sharp_steps
        return sharp >= SHARP_NEEDED and self.flat <= FLAT_PER_SHARP * sharp

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
                self._count_step(spike, self._sigma[ch])
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

    def _count_step(self, deviations: list[float], sigma: float) -> None:
        # A plate that took a cube: sharp when it read the new load from the
        # second reading on (``STEP_SETTLED_BY``). What came before is not
        # judged: a plate that rang or a cube that bounced reads later.
        final = median(deviations[-3:])
        if abs(final) < _STEP_SIGMAS * sigma:
            return
        band = STEP_BAND * abs(final)
        off = [abs(d - final) > band for d in deviations]
        overshot = (deviations[1] - final) * np.sign(final) > band
        if not any(off[1:]) or (overshot and not any(off[2:])):
            self.sharp_steps += 1

    def _count(self, deviations: list[float]) -> None:
        dev = [abs(d) for d in deviations]
        if not dev:
            return
        plateau = sum(d >= _PLATEAU_FRACTION * max(dev) for d in dev)
        if plateau >= FLAT_READINGS:
            self.flat += 1
        else:
            self.sharp += 1
