"""Where did it land, by ear: the acoustic level model.

The evidence of a drop is the loudness profile of its last impact across
the eight piezo channels: ``profile[k] = 20 log10(peak[k] / max(peak))``
(dB, 0 on the loudest channel), clipped at ``floor_db``. Through the
cardboard a strike on level L is heard on L's neighbours too, quieter with
distance; that is the *crosstalk model* the detector starts from:
``prior[L][k] = -crosstalk_db_per_level * |k - L|``.

Real towers differ (sensitivities, joints, which plate rings), so the model
is *self-learning*: every landing confirmed by a load step adds its profile
to that level's signature (a running mean). A level's signature blends the
prior (weight ``prior_weight``) with what was learnt, so a few odd drops
cannot spoil it, and decisions improve as play goes on. Classification is
the nearest signature (Euclidean in dB); its confidence is a softmax over
the distances with temperature ``temperature_db2``.

A tower may carry strikes further down than up (or the other way round):
with a symmetric prior, strikes are then taken for the level next to
theirs until landings were learnt, and discs of different gains make a
quiet disc's strikes sound like its louder neighbour's level. The model
hears every impact (:meth:`AcousticLevelModel.observe`) and keeps a second
prior with the crosstalk heard between each pair of neighbouring discs;
acoustic-only decisions use that one.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass

import numpy as np

from dsp.detect.orderstats import median

# Why 12 dB per level: a strike is heard clearly on the neighbouring levels
# through one plate/wall joint and barely two levels away; the value only
# shapes the prior, which learning overrides within a few landings.
DEFAULT_CROSSTALK_DB_PER_LEVEL = 12.0
# Why -20 dB: channels further down than that hear the strike through two or
# more joints, and how loud depends on the strike's strength and the joints
# more than on where it was; left in, they dominate the distance. On the
# cross-check towers -20 dB gave 92 % cold, -40 dB 84 % (own towers 86 / 84 %).
DEFAULT_FLOOR_DB = -20.0
# Why 3: the prior counts as three landings, so one landing moves a
# signature a quarter of the way and ten landings dominate it.
DEFAULT_PRIOR_WEIGHT = 3.0
# Why 200 dB^2: a squared distance difference of 200 dB^2 (e.g. 5 dB on each
# of eight channels) between the best and the next level gives odds of
# e:1; profiles of adjacent levels differ by far more than that.
DEFAULT_TEMPERATURE_DB2 = 200.0
# Why 64, 20, -40 dB and 3-20 dB: the crosstalk a tower has up and down is
# the median, over the last 64 impacts, of how far the loudest channel's
# neighbours below and above fall under it (read down to -40 dB, where
# the profile's own floor would cut it off); after 20 impacts it is
# steady to a dB or two (on the cross-check towers the medians came within
# 1-2 dB of the model's 6-13 dB losses; on ours 12.6-14.0 dB both ways,
# against 12 in the prior), and a loss outside 3-20 dB a level is taken as
# those bounds. Most impacts are heard loudest on the plate struck, so the
# few heard loudest next door shift the median little.
_CROSSTALK_KEPT = 64
_CROSSTALK_MIN_HEARD = 20
_CROSSTALK_FLOOR_RATIO = 10.0 ** (-40.0 / 20.0)
_CROSSTALK_RANGE_DB = (3.0, 20.0)
# Why per pair of neighbours, from 8 impacts, within 1-20 dB: discs differ
# in gain (glued harder, another batch: model P's 0.5-1.3, +-4 dB), and a
# tower-wide loss each way takes a strike on a quiet disc next to a loud
# one for the loud one's level (model P's acoustic towers: a cube resting
# on a top plate whose disc heard half as much as the one below was placed
# a level down 12 times in 300 throws). How far the strikes heard loudest
# on a plate fall on each neighbour holds both discs' gains; the chain of
# those losses is the tower's own prior. A pair heard less often keeps the
# tower-wide loss; a disc louder than the plate struck would be heard
# loudest, so a pair's loss is at least 1 dB.
_PAIR_MIN_HEARD = 8
_PAIR_RANGE_DB = (1.0, 20.0)


def loudness_profile(peaks: np.ndarray, *, floor_db: float = DEFAULT_FLOOR_DB) -> np.ndarray:
    """Per-channel loudness relative to the loudest channel, dB.

    Parameters
    ----------
    peaks : ndarray, shape (channels,) or (impacts, channels)
        Peak envelope per channel (any linear unit), of one impact or of
        each row's.
    floor_db : float
        Lower clip.

    Returns
    -------
    ndarray, shape of ``peaks``
        0 dB on the loudest channel, ``floor_db`` at most below; all
        ``floor_db`` for an all-zero input.
    """
    peaks = np.asarray(peaks, dtype=np.float64)
    if peaks.shape[-1] == 0:
        return np.full(peaks.shape, floor_db)
    top = peaks.max(axis=-1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        db = 20.0 * np.log10(np.maximum(peaks, 0.0) / top)
    return np.where(top > 0, np.maximum(db, floor_db), floor_db)


@dataclass(frozen=True)
class AcousticDecision:
    """The acoustic verdict on one drop.

    Attributes
    ----------
    level : int
        Most likely resting level.
    confidence : float
        Its posterior probability under the model (0..1).
    posterior : ndarray, shape (levels,)
        Probability of every level.
    """

    level: int
    confidence: float
    posterior: np.ndarray


class AcousticLevelModel:
    """Nearest-signature level classifier that learns from confirmed landings.

    Parameters
    ----------
    n_levels : int
        Number of levels (and piezo channels).
    signatures : sequence of sequences, optional
        Learnt signatures to start from (a calibration), one per level.
    counts : sequence of float, optional
        How many landings each given signature was averaged over.
    crosstalk_db_per_level, floor_db, prior_weight, temperature_db2
        See the module constants for the defaults and why.
    """

    def __init__(
        self,
        *,
        n_levels: int,
        signatures: tuple[tuple[float, ...], ...] | None = None,
        counts: tuple[float, ...] | None = None,
        crosstalk_db_per_level: float = DEFAULT_CROSSTALK_DB_PER_LEVEL,
        floor_db: float = DEFAULT_FLOOR_DB,
        prior_weight: float = DEFAULT_PRIOR_WEIGHT,
        temperature_db2: float = DEFAULT_TEMPERATURE_DB2,
    ) -> None:
        self.n_levels = int(n_levels)
        self.floor_db = float(floor_db)
        self.prior_weight = float(prior_weight)
        self.temperature = float(temperature_db2)
        self._crosstalk_db = float(crosstalk_db_per_level)
        self.prior = self._crosstalk_prior(crosstalk_db_per_level, crosstalk_db_per_level)
        self._heard_prior: np.ndarray | None = self.prior
        self._heard_below: deque[float] = deque(maxlen=_CROSSTALK_KEPT)
        self._heard_above: deque[float] = deque(maxlen=_CROSSTALK_KEPT)
        # Per plate heard loudest: how far its neighbour below / above fell under it.
        self._pair_below: list[deque[float]] = [
            deque(maxlen=_CROSSTALK_KEPT) for _ in range(self.n_levels)
        ]
        self._pair_above: list[deque[float]] = [
            deque(maxlen=_CROSSTALK_KEPT) for _ in range(self.n_levels)
        ]
        # The median loss of each of those deques (and of the tower's, keyed
        # by None), dropped when it hears more: a strike adds to two pairs,
        # and the prior is asked for after every drop.
        self._loss_medians: dict[tuple[bool, int | None], float] = {}
        self.sums = np.zeros((self.n_levels, self.n_levels))
        self.counts = np.zeros(self.n_levels)
        #: Incremented whenever the signatures change (a landing learnt).
        self.version = 0
        self._n_learnt = (-1, 0)  # (version, n_learnt) as last counted
        self._signatures: dict[bool, tuple[int, np.ndarray, np.ndarray]] = {}
        if signatures is not None:
            given = np.asarray(signatures, dtype=np.float64).reshape(self.n_levels, self.n_levels)
            weight = (
                np.asarray(counts, dtype=np.float64)
                if counts is not None
                else np.full(self.n_levels, self.prior_weight)
            )
            self.sums = given * weight[:, None]
            self.counts = weight.copy()

    def _crosstalk_prior(self, below_db: float, above_db: float) -> np.ndarray:
        """Signatures heard ``below_db`` quieter per level down, ``above_db`` per level up."""
        n = self.n_levels
        return self._chained_prior(np.full(n, below_db), np.full(n, above_db))

    def _chained_prior(self, below_db: np.ndarray, above_db: np.ndarray) -> np.ndarray:
        """Signatures from each plate's losses to the neighbour below and above it.

        ``below_db[j]``: how far the channel under plate ``j`` falls below it
        for a strike on ``j``; ``above_db[j]`` likewise for the channel over
        it. A strike on L is heard on channel k < L through the plates in
        between: the losses of plates k+1 .. L add up (each ratio of
        neighbouring discs is the same whichever plate was struck).
        """
        n = self.n_levels
        down = np.concatenate(([0.0], np.cumsum(below_db[1:])))  # down[L] - down[k]: L to k < L
        up = np.concatenate(([0.0], np.cumsum(above_db[:-1])))  # up[k] - up[L]: L to k > L
        k = np.arange(n)
        under = k[:, None] > k[None, :]  # row L, channel k under it
        prior = np.where(under, -(down[:, None] - down[None, :]), -(up[None, :] - up[:, None]))
        return np.maximum(prior, self.floor_db)

    def observe(self, peaks: np.ndarray) -> None:
        """Hear any impact: the tower's crosstalk up and down, for the prior.

        Through the cardboard a strike may carry further down a tower than
        up it (or the other way round); a symmetric prior then takes
        strikes for the level next to theirs. How far the loudest channel's
        neighbours fall below it, over the impacts heard, tells each
        direction's loss without knowing where anything landed.
        """
        top = int(np.argmax(peaks))
        loudest = float(peaks[top])
        if loudest <= 0:
            return
        inner = 0 < top < self.n_levels - 1
        for above, neighbour, heard, pair in (
            (False, top - 1, self._heard_below, self._pair_below[top]),
            (True, top + 1, self._heard_above, self._pair_above[top]),
        ):
            if not 0 <= neighbour < self.n_levels:
                continue
            ratio = max(float(peaks[neighbour]) / loudest, _CROSSTALK_FLOOR_RATIO)
            loss = -20.0 * math.log10(ratio)
            pair.append(loss)
            self._loss_medians.pop((above, top), None)
            if inner:
                heard.append(loss)
                self._loss_medians.pop((above, None), None)
        self._heard_prior = None  # recomputed when next asked for

    @property
    def heard_prior(self) -> np.ndarray:
        """The prior with the crosstalk heard so far.

        Each pair of neighbouring discs by its own losses once heard
        ``_PAIR_MIN_HEARD`` times, the others by the tower's losses each way
        (after ``_CROSSTALK_MIN_HEARD`` strikes; the symmetric one until then).
        """
        if self._heard_prior is None:
            below = above = self._crosstalk_db
            if len(self._heard_below) >= _CROSSTALK_MIN_HEARD:
                below = self._median_loss(False, None, _CROSSTALK_RANGE_DB)
                above = self._median_loss(True, None, _CROSSTALK_RANGE_DB)
            self._heard_prior = self._chained_prior(
                self._pair_losses(False, below), self._pair_losses(True, above)
            )
        return self._heard_prior

    def _pair_losses(self, above: bool, tower_db: float) -> np.ndarray:
        """Each plate's median loss to one neighbour, or the tower's where too few were heard."""
        pairs = self._pair_above if above else self._pair_below
        return np.array([
            self._median_loss(above, plate, _PAIR_RANGE_DB)
            if len(heard) >= _PAIR_MIN_HEARD else tower_db
            for plate, heard in enumerate(pairs)
        ])

    def _median_loss(self, above: bool, plate: int | None, bounds: tuple[float, float]) -> float:
        """The clipped median of one pair's losses (``plate`` None: the tower's), as last heard."""
        key = (above, plate)
        loss = self._loss_medians.get(key)
        if loss is None:
            if plate is None:
                heard = self._heard_above if above else self._heard_below
            else:
                heard = (self._pair_above if above else self._pair_below)[plate]
            loss = self._loss_medians[key] = float(np.clip(median(heard), *bounds))
        return loss

    @property
    def n_learnt(self) -> int:
        """Landings learnt so far (including any given by a calibration)."""
        # Asked at every strike the fusion reads; the counts change only
        # with the version (:meth:`learn`).
        if self._n_learnt[0] != self.version:
            self._n_learnt = (self.version, int(round(float(self.counts.sum()))))
        return self._n_learnt[1]

    def signatures(self, *, heard_crosstalk: bool = False) -> np.ndarray:
        """Current signature of every level, shape (levels, channels), dB.

        ``heard_crosstalk``: blended with the prior of the crosstalk heard
        so far (:meth:`observe`) instead of the symmetric one.
        """
        prior = self.heard_prior if heard_crosstalk else self.prior
        cached = self._signatures.get(heard_crosstalk)
        if cached is not None and cached[0] == self.version and cached[1] is prior:
            return cached[2]
        w = self.prior_weight
        signatures = (prior * w + self.sums) / (w + self.counts)[:, None]
        signatures.flags.writeable = False
        self._signatures[heard_crosstalk] = (self.version, prior, signatures)
        return signatures

    def classify(self, peaks: np.ndarray, *, heard_crosstalk: bool = False) -> AcousticDecision:
        """Most likely level for an impact with these per-channel peaks."""
        profile = loudness_profile(peaks, floor_db=self.floor_db)
        signatures = self.signatures(heard_crosstalk=heard_crosstalk)
        d2 = ((signatures - profile[None, :]) ** 2).sum(axis=1)
        logits = -(d2 - d2.min()) / self.temperature
        posterior = np.exp(logits)
        posterior /= posterior.sum()
        best = int(np.argmax(posterior))
        return AcousticDecision(level=best, confidence=float(posterior[best]), posterior=posterior)

    def levels(self, peaks: np.ndarray, *, heard_crosstalk: bool = False) -> np.ndarray:
        """The most likely level of each row of ``peaks`` (shape ``(impacts, channels)``).

        What :meth:`classify` gives as ``level`` for each row alone, in one
        go: the nearest signature.
        """
        profiles = loudness_profile(np.asarray(peaks, dtype=np.float64), floor_db=self.floor_db)
        signatures = self.signatures(heard_crosstalk=heard_crosstalk)
        d2 = ((signatures[None, :, :] - profiles[:, None, :]) ** 2).sum(axis=2)
        return np.argmin(d2, axis=1)

    def learn(self, peaks: np.ndarray, level: int) -> None:
        """Teach the model that an impact with these peaks ended on ``level``."""
        if not 0 <= level < self.n_levels:
            return
        self.sums[level] += loudness_profile(peaks, floor_db=self.floor_db)
        self.counts[level] += 1.0
        self.version += 1
