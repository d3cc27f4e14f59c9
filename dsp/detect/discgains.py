"""How sensitive is each disc? Read from how neighbouring discs hear the same strikes.

Discs differ: one is glued harder, one comes from another batch, one sits
behind an amplifier stage with more gain. On a hobbyist's build one disc
can hear 10 dB more than its neighbours, and then it is heard loudest for
strikes on the plates next to it: by ear alone a cube resting on the top
plate is placed on the hot disc's level (cross-check model I: 17 of a
tower's 70 single throws).

Through the cardboard a strike is heard on each disc about so many dB
quieter per level between them. For two neighbouring discs ``k`` (below)
and ``k + 1``, a strike on ``k + 1`` or above is heard louder on ``k + 1``
by the loss of one level downwards, and a strike on ``k`` or below is heard
louder on ``k`` by the loss upwards. So over many strikes the difference
``dB[k] - dB[k + 1]`` falls in two clusters, at ``g[k] - g[k + 1] - down``
and ``g[k] - g[k + 1] + up`` (``g``: the discs' gains, dB); their midpoint
is the pair's gain difference, plus half the tower's asymmetry
``(up - down) / 2``. Chained over the seven pairs that gives the gains up
to a constant and a straight line; the line is the asymmetry, which the
acoustic model learns for itself (``acoustic``, the tower's own crosstalk
prior), so the best-fitting line is taken out and what is left is each
disc's own sensitivity. No strike needs to be placed for this, and every
strike counts, whoever made it.

:class:`DiscGains` keeps the last strikes, reads the gains again every few,
and equalises each strike before the fusion hears it: its peaks and its
noise floor divided by its disc's gain, so how far a strike stands over a
disc's floor is unchanged and only the comparison between discs changes.
Gains within a few dB of the rest are left alone (``DEADBAND_DB``).
"""

from __future__ import annotations

from collections import deque
from dataclasses import replace

import numpy as np

from dsp.detect.piezo import TimedImpact

# Why the last 400 strikes: two to five minutes of play, enough that each
# pair of neighbours hears 30 and more strikes over both of its discs'
# floors, and a disc whose glue gives way in a long evening is followed.
KEPT = 400
# Why from 24 strikes, again every 8: a tower's first throws are its
# first tell; on the cross-check towers (31 models, heard without load
# cells) starting at 48 and reading every 16 strikes found 20 landings
# fewer, starting at 16 and reading every 4 one fewer.
FIRST = 24
EVERY = 8
# Why 12 dB over the floor on both discs of a pair: nearer the floor a
# disc hears its own noise as much as the strike; at 10 dB the cross-check
# towers lost 5 landings, at 16 dB 19 (fewer strikes per pair).
HEARD_OVER_FLOOR = 10.0 ** (12.0 / 20.0)
# Why half a code: the converter tells nothing finer, and on an exactly
# noiseless tower (model AE's) the floor reads 0 and a filter's rounding
# residue would count as heard (gains of 30-80 dB, quick series lost 137
# landings).
FLOOR_AT_LEAST = 0.5
# Why 20 dB: discs and their amplifier stages differ by 10-15 dB at worst
# (model I's builds); a gain read beyond that is a reading gone wrong.
GAIN_AT_MOST_DB = 20.0
# Why 8 strikes in each cluster: a pair heard less often keeps the
# midpoint of the pairs that were (the tower's asymmetry, a gain
# difference of 0). At 12 / 16 the cross-check towers found 11 / 18
# single throws fewer and model AH's 21 / 41 fewer; 16 kept a landing our
# own evaluation lost on a tower of alike discs, read 5 dB off from its
# first hundred strikes (docs/detection.md, "Evaluation").
MIN_EACH = 8
# Why 3 dB: a gain read from a few dozen strikes is off by a dB or two, and
# discs that close are told apart by the acoustic model's own crosstalk
# prior anyway; equalised by the full reading, clean towers lost up to 5
# landings each (cross-check models T, X, Z) where shrinking every gain by
# 3 dB lost at most 2 (models A-AE heard only: +49 single throws right,
# +92 in quick series, 14 false landings fewer; 2 dB: +44; 5 dB: +28).
DEADBAND_DB = 3.0


def split_two_clusters(values: np.ndarray, min_each: int = MIN_EACH) -> tuple[float, float] | None:
    """The medians of the lower and upper of two clusters in ``values`` (None: too few).

    The split is where the two parts' means lie furthest apart for their
    sizes (Otsu's criterion), with at least ``min_each`` values in each.
    """
    x = np.sort(np.asarray(values, dtype=float))
    n = len(x)
    if n < 2 * min_each:
        return None
    total = np.cumsum(x)
    i = np.arange(min_each, n - min_each + 1)
    below = total[i - 1] / i
    above = (total[-1] - total[i - 1]) / (n - i)
    k = int(i[int(np.argmax(i * (n - i) * (below - above) ** 2))])
    return _sorted_median(x[:k]), _sorted_median(x[k:])


def _sorted_median(x: np.ndarray) -> float:
    n = len(x)
    return float(0.5 * (x[(n - 1) // 2] + x[n // 2]))


def gains_from_pairs(level_db: np.ndarray, heard: np.ndarray) -> np.ndarray | None:
    """Each disc's gain, dB, from strikes' levels ``level_db`` (strikes x discs).

    ``heard``: where a disc heard the strike well over its floor. The gains
    have no constant and no straight line across the discs in them (see the
    module's docstring); None until two pairs of neighbours were heard
    enough to read.
    """
    n = level_db.shape[1]
    mids: list[float | None] = []
    for k in range(n - 1):
        both = heard[:, k] & heard[:, k + 1]
        clusters = split_two_clusters(level_db[both, k] - level_db[both, k + 1])
        mids.append(None if clusters is None else 0.5 * (clusters[0] + clusters[1]))
    read = [m for m in mids if m is not None]
    if len(read) < 2:
        return None
    asymmetry = float(np.median(read))
    steps = np.array([asymmetry if m is None else m for m in mids])
    gains = np.concatenate([[0.0], -np.cumsum(steps)])
    line = np.vstack([np.ones(n), np.arange(n, dtype=float)]).T
    fit, *_ = np.linalg.lstsq(line, gains, rcond=None)
    return np.asarray(gains - line @ fit, dtype=float)


class DiscGains:
    """Learns the discs' gains from the strikes heard, and equalises each strike.

    Feed every strike in time order (:meth:`equalise`); strikes heard only
    over the faint threshold are equalised but not learnt from (they hold
    only the channels where they rose).
    """

    def __init__(self, n_channels: int) -> None:
        self.n_channels = int(n_channels)
        self._level_db: deque[np.ndarray] = deque(maxlen=KEPT)
        self._heard: deque[np.ndarray] = deque(maxlen=KEPT)
        self._seen = 0
        self._gain_db = np.zeros(self.n_channels)
        self._scale: np.ndarray | None = None

    @property
    def gain_db(self) -> np.ndarray:
        """Each disc's gain as equalised, dB (0: left alone); a copy."""
        return self._gain_db.copy()

    def equalise(self, strike: TimedImpact) -> TimedImpact:
        """Learn from ``strike`` (unless faint), then return it equalised."""
        impact = strike.impact
        if not strike.faint:
            self._learn(impact.peaks, impact.floor)
        if self._scale is None:
            return strike
        scale = self._scale
        return replace(
            strike, impact=replace(impact, peaks=impact.peaks * scale, floor=impact.floor * scale)
        )

    def _learn(self, peaks: np.ndarray, floor: np.ndarray) -> None:
        self._level_db.append(20.0 * np.log10(np.maximum(peaks, 1e-9)))
        self._heard.append(peaks > HEARD_OVER_FLOOR * np.maximum(floor, FLOOR_AT_LEAST))
        self._seen += 1
        if self._seen < FIRST or self._seen % EVERY:
            return
        gains = gains_from_pairs(np.array(self._level_db), np.array(self._heard))
        if gains is None:
            return
        gains = np.clip(gains, -GAIN_AT_MOST_DB, GAIN_AT_MOST_DB)
        self._gain_db = np.sign(gains) * np.maximum(np.abs(gains) - DEADBAND_DB, 0.0)
        self._scale = (
            None if not self._gain_db.any() else 10.0 ** (-self._gain_db / 20.0)
        )
