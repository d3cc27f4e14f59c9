"""Mains hum on the piezo pins: the harmonics that stand out, and notches that take them out.

A ground loop through a long USB cable, a charger or a dimmer puts the mains
frequency (50 or 60 Hz) and its harmonics on every piezo pin alike. The
high-pass (``conditioning``) takes out the fundamental, but harmonics of
150-350 Hz pass it and hold the noise floor up, and a strike must stand 20
dB over that floor to be heard. A notch a few hertz wide at each harmonic
takes them out and leaves a cube's broadband click as it was.

Which harmonics are there is read once, from the first second of the
stream (contracts.md: a recording begins on a quiet tower): lines that
stand well above the spectrum beside them. A tower with no hum gets no
notch and costs nothing.
"""

from __future__ import annotations

import numpy as np

from dsp.detect import orderstats
from dsp.detect.biquad import linear_filter, notch

# Why one second: 1 Hz bins resolve a harmonic from the spectrum beside it,
# and the quiet start the detector tares on lasts at least that long.
HUM_LEARN_S = 1.0
# Why 15 dB: a hum line stands 16-41 dB above the spectrum beside it on the
# cross-check towers with a ground loop; noise alone, its power summed over
# eight pins, stands 15 dB over its median in a bin far less than once in a
# billion, and a plate's ring (tens of milliseconds long, so tens of hertz
# wide) never stands that narrow.
LINE_DB = 15.0
# A harmonic is looked for within two bins (a device clock 0.3 % off moves
# the 7th harmonic by a hertz), against the median of bins 5-15 away.
_SEARCH_BINS = 2
_BESIDE_BINS = (5, 15)
MAINS_HZ = (50.0, 60.0)
# Why four: a ground loop's hum lies in a few of its first harmonics, and
# each notch costs a filter pass over every sample (eight cost a quarter of
# `towerear detect`'s time on a hummed recording); an audio interface at 48
# kHz would otherwise find lines up to 24 kHz, hundreds of them.
MOST_LINES = 4
# Why 0.6: notched only where the hum holds the noise floor up, the floor of
# the first second (the 20th percentile of frame peaks, as ``noisefloor``
# takes it) falling under 0.6 of what it was. On the cross-check towers the
# notch lowered it by 6 % at the median of the hummed recordings, and the
# faint onsets this let through made more false landings (41 with the load
# cells, 81 without, over 37 models) than the strikes it saved; at 0.6 it
# acts where the hum is most of the floor (model AK's ground loops: 0.4-0.5).
FLOOR_FALLS_TO = 0.6
# The notches' first 0.3 s (three time constants) are left out of that.
_SETTLE_S = 0.3
# Why 3 Hz: wide enough for the mains frequency's wander (0.1 Hz, 0.7 Hz at
# the 7th harmonic) and a line read to a few tenths of a bin, narrow enough to
# take a sixtieth of a 180-Hz band from a click; the notch settles within
# about 1 / (pi * 3 Hz) = 0.1 s.
NOTCH_WIDTH_HZ = 3.0


def mains_lines(
    samples: np.ndarray, sample_rate_hz: float, *, lowest_hz: float = 0.0
) -> tuple[float, ...]:
    """The mains harmonics standing out in ``samples`` (shape ``(n, channels)``), in hertz.

    The spectrum is summed over the channels (hum is common to all pins).
    Of 50 and 60 Hz, the family with more lines wins (ties: the louder);
    each line is the interpolated peak near a harmonic at or above
    ``lowest_hz`` that stands ``LINE_DB`` over the median of the bins beside
    it, the ``MOST_LINES`` loudest, in rising order. Empty when there is no
    hum (or too few samples to tell).
    """
    x = np.asarray(samples, dtype=np.float64)
    x = x.reshape(x.shape[0], -1)
    n = x.shape[0]
    if n < 64:
        return ()
    x = x - x.mean(axis=0)
    window = np.hanning(n)[:, None]
    power = (np.abs(np.fft.rfft(x * window, axis=0)) ** 2).sum(axis=1)
    bin_hz = sample_rate_hz / n
    best: tuple[int, float, tuple[float, ...]] = (0, 0.0, ())
    for mains in MAINS_HZ:
        lines: list[tuple[float, float]] = []  # (power, frequency)
        for k in range(1, int(0.5 * sample_rate_hz / mains) + 1):
            if k * mains < lowest_hz:
                continue
            centre = int(round(k * mains / bin_hz))
            lo, hi = centre - _SEARCH_BINS, centre + _SEARCH_BINS + 1
            if lo - _BESIDE_BINS[1] < 1 or hi + _BESIDE_BINS[1] > power.size:
                continue
            peak = lo + int(np.argmax(power[lo:hi]))
            beside = np.concatenate([
                power[centre - _BESIDE_BINS[1] : centre - _BESIDE_BINS[0] + 1],
                power[centre + _BESIDE_BINS[0] : centre + _BESIDE_BINS[1] + 1],
            ])
            reference = float(np.median(beside))
            if not reference > 0 or 10.0 * np.log10(power[peak] / reference) < LINE_DB:
                continue
            lines.append((float(power[peak]), _interpolated(power, peak) * bin_hz))
        loudest = sorted(lines, reverse=True)[:MOST_LINES]
        found = (len(loudest), sum(p for p, _ in loudest), tuple(sorted(f for _, f in loudest)))
        if found[:2] > best[:2]:
            best = found
    return best[2]


def _interpolated(power: np.ndarray, peak: int) -> float:
    """The peak's position in bins, from a parabola through the log power either side."""
    a, b, c = np.log(power[peak - 1 : peak + 2] + 1e-300)
    curve = a - 2.0 * b + c
    return float(peak) if curve >= 0 else peak + 0.5 * float(a - c) / float(curve)


class MainsHumNotch:
    """Streaming: passes the first ``HUM_LEARN_S`` through, then notches the hum found in it.

    Only where the hum holds the noise floor up (``FLOOR_FALLS_TO``).

    Parameters
    ----------
    n_channels : int
        Channels of each block (columns).
    sample_rate_hz : float
        Samples per second.
    lowest_hz : float
        Harmonics below this are left alone (a high-pass before took them out).
    frame_len : int
        Samples per envelope frame, for the noise floor it judges by.

    The decision is made at a fixed sample count and the notches start in
    the state they would have after filtering the first second, so the
    output is the same however the stream is cut into blocks.
    """

    def __init__(self, *, n_channels: int, sample_rate_hz: float, lowest_hz: float = 0.0,
                 frame_len: int = 8) -> None:
        self.n_channels = int(n_channels)
        self.sample_rate_hz = float(sample_rate_hz)
        self.lowest_hz = float(lowest_hz)
        self.frame_len = max(1, int(frame_len))
        self._learn_n = max(1, int(round(HUM_LEARN_S * self.sample_rate_hz)))
        self._learnt: list[np.ndarray] = []
        self._seen = 0
        self.lines: tuple[float, ...] | None = None  # None while learning; notched
        self.found: tuple[float, ...] = ()  # hum lines found, notched or not
        self._notches: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []

    def process(self, y: np.ndarray) -> np.ndarray:
        """Notch a block (shape ``(n, n_channels)``); the first second comes back as it was."""
        if self.lines is not None:
            return self._notched(y)
        take = min(y.shape[0], self._learn_n - self._seen)
        self._learnt.append(y[:take].copy())
        self._seen += take
        if self._seen < self._learn_n:
            return y
        self._decide(np.concatenate(self._learnt))
        self._learnt = []
        if take == y.shape[0]:
            return y
        return np.concatenate([y[:take], self._notched(y[take:])])

    def _decide(self, first: np.ndarray) -> None:
        self.found = mains_lines(first, self.sample_rate_hz, lowest_hz=self.lowest_hz)
        zeros = np.zeros((2, self.n_channels))
        notched = first
        for freq in self.found:
            b, a = notch(freq, self.sample_rate_hz, NOTCH_WIDTH_HZ)
            # Started in the state after the first second, as if it had run from the start.
            notched, state = linear_filter(b, a, notched, 0, zeros)
            self._notches.append((b, a, state))
        if self.found and self._floor_ratio(first, notched) < FLOOR_FALLS_TO:
            self.lines = self.found
        else:
            self.lines, self._notches = (), []

    def _floor_ratio(self, before: np.ndarray, after: np.ndarray) -> float:
        """How far the notches lower the noise floor of the first second (median over channels)."""
        settled = int(round(_SETTLE_S * self.sample_rate_hz))
        frames = (before.shape[0] - settled) // self.frame_len
        if frames < 5:
            return 1.0

        def floor(x: np.ndarray) -> np.ndarray:
            peaks = np.abs(x[settled : settled + frames * self.frame_len])
            peaks = peaks.reshape(frames, self.frame_len, -1).max(axis=1)
            return orderstats.percentile_along_1(peaks.T, 20.0)

        low, high = floor(after), floor(before)
        return float(np.median(low / np.maximum(high, 1e-12)))

    def _notched(self, y: np.ndarray) -> np.ndarray:
        for k, (b, a, state) in enumerate(self._notches):
            y, state = linear_filter(b, a, y, 0, state)
            self._notches[k] = (b, a, state)
        return y
