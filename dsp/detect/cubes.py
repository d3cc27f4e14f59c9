"""Counting cubes in a load step: the size of one cube per level, learnt or given.

Load cells differ in sensitivity, by some percent when they come from one
batch and by ten times when a kit mixes cells, so the size of one cube in
counts is kept per level. A level that has not seen its own landings
borrows the median of the levels that have only while those agree with
each other (a matched set of cells); otherwise its first lasting step in a
closed tower is taken as one cube (contracts.md section 3: the detector
learns the load step of one cube from the first landings).
The sign is kept per level too: a cell mounted or wired the other way reads
landings as negative counts. A level's sign is given by the calibration or
learnt from its first step, which the fusion stage interprets (a lone step
in a closed tower can only be a cube arriving).
"""

from __future__ import annotations

import math
from collections import deque

import numpy as np

from dsp.detect.orderstats import median_of

# Why 15: a running median over the last 15 single-cube steps follows a
# slow change in sensitivity (temperature) and ignores a few odd ones.
_HISTORY = 15
_TRUST_SAMPLES = 3
# Why up to four, within 0.2 of a whole share: in a quick series two, three
# or four cubes may settle on a plate together before it has seen a cube of
# its own, and that step is taken for one. A later step of a half, a third
# or a quarter of it (0.2-0.6 of the size learnt) shows it (model E's
# quick series: plates that learnt 2.0-2.7 cubes and missed every cube
# after, 12-15 landings a session). Within 0.3 a half reached 0.65, where
# the lighter of two kinds of cube reads on a plate that learnt the heavier
# (0.62-0.8); drift and a neighbour's lasting jolt stay under 0.2 of a cube.
_SEVERAL_MOST = 4
_SEVERAL_SHARE = 0.2
# Why 0.08 and twice running: a size trusted on three steps can still be two
# or three cubes' when every one of those steps held several (a quick
# series onto one plate read 10 times a second: model H's top plates
# learnt 2-3 cubes from steps of 3, 2 and 2, and missed every other cube
# after). Single cubes then read a clean half or third of it, one after
# the other; a hand or a neighbour's jolt reads so once, and the lighter
# of two kinds of cube 0.62-0.8.
_TRUSTED_SEVERAL_SHARE = 0.08
_TRUSTED_SEVERAL_MOST = 3
# Why half: a size that may be several cubes' (``CubeScale.size_unsure``)
# must let steps down to a fifth of it show (STEP_CUBES of the size halved).
_FEW_SHOWN = 0.5
# Why 10 %: one kind of cube on a still plate reads within a few percent;
# model E's two kinds differ by 25-60 %, two cubes by 100 %.
_SAMPLES_AGREE = 1.1
# Why 0.3, 2 and 8 %: a game that mixes two kinds of cube (model E:
# the heavier 1.25-1.6 times the lighter) reads the heavier as 1.25-1.6
# cubes on levels that learnt the lighter, and the lighter as its inverse
# on levels that learnt the heavier, again and again at the same size;
# cubes of one kind read within a few percent of a whole cube. Counted as
# two, model E's single cubes were wrong in 62 and 108 landings (towers
# 1-8, 9-16); then 22 and 26. Only the settled view's steps are noted: the
# fast view's odd reads of one kind (a plate read while it swings) agreed
# within 8 % in 8 of model A's 64 sessions.
_KINDS_ODD = 0.3
_KINDS_READINGS = 2
_KINDS_SAME = 1.08
# Why a tenth of the last 40: where two kinds mix, one cube in three or four
# lands on a level that learnt the other kind (model E: about 7 odd steps in
# 30 landings); one kind's odd steps are rare (model A's 30-minute games: 6
# in 550) but, over a long game, two agree by chance, and a hand's press
# before a lift was then read as a cube of the lighter kind (9 false
# landings in 4 games).
_KINDS_WINDOW = 40
_KINDS_SHARE = 0.1
# Why 1.35: cells of one batch agree within about +-12 %; levels whose
# learnt cubes differ by more than this are a mixed set, and one level's
# cube says nothing about another's.
_MATCHED_SPREAD = 1.35
# Why 3: two cells of a mixed set agree within 1.35 by chance about one time
# in four; three rarely do.
_MATCHED_LEVELS = 3
# Why four levels, 15 % and steps 1.5 times apart (session 34): a plate
# that is still only between cubes (a quick series onto the top plate of a
# rocking tower, model I) learns its size from steps of two to four cubes,
# each taken for one, and none of them ever a single cube to show it
# (``learnt_from_several``). Where four or more levels agree on a cube (a
# matched set) and the plate's own size is two to four of theirs, its size
# is that share: only if its own steps disagree by half or more, since one
# cell twice as sensitive as its set, reading cubes of two kinds (model E:
# cells +-30 %, the heavier cube 1.25-1.6 times the lighter), reads each
# within that. Model I towers 1-8 / 9-16: sizes of several cubes on 19 ->
# 11 plates, right 66.08 -> 67.42 % and 64.33 -> 64.72 %; model E, with
# every step counted however far apart: 9 landings fewer right.
_MULTIPLE_LEVELS = 4
_MULTIPLE_SHARE = 0.15
_MULTIPLE_SPREAD = 1.5


class CubeScale:
    """Per-level size of one cube in HX711 counts.

    Parameters
    ----------
    n_levels : int
        Number of load channels.
    cube_counts : sequence of float, optional
        Known signed counts per cube on each level (from a calibration).
    """

    def __init__(self, *, n_levels: int, cube_counts: tuple[float, ...] | None = None) -> None:
        self.n_levels = int(n_levels)
        self._history: list[list[float]] = [[] for _ in range(self.n_levels)]
        # Clean shares of a trusted size read in a row, per level.
        self._shares: list[list[int]] = [[] for _ in range(self.n_levels)]
        # Steps heard as one drop that read neither one cube nor two (``note_step``).
        self._odd: list[float] = []
        # Whether each of the last single-cube steps read odd (True) or whole.
        self._odd_share: deque[bool] = deque(maxlen=_KINDS_WINDOW)
        self._given: np.ndarray | None = None
        self.sign = np.zeros(self.n_levels)  # +1 or -1 per level once known
        self._votes = np.zeros(self.n_levels)
        self._units: np.ndarray | None = None  # cache, cleared on every change
        self._unit_list: list[float | None] = []  # the same, as unit() gives them
        # Levels whose plate showed that the matched cells' cube is not theirs.
        self._unmatched = np.zeros(self.n_levels, dtype=bool)
        #: Incremented on every change, so users can tell when to re-read units.
        self.version = 0
        if cube_counts is not None:
            given = np.asarray(cube_counts, dtype=np.float64)
            self._given = np.abs(given)
            self.sign = np.where(given < 0, -1.0, 1.0)

    @property
    def known(self) -> bool:
        """True once a cube's size is given or learnt on some level."""
        return self._given is not None or any(self._history)

    def unit(self, level: int) -> float | None:
        """Unsigned counts per cube on ``level``; None while nothing can tell.

        A calibrated level trusts its own landings once there are a few; an
        uncalibrated one from its first. Otherwise the median of the levels
        learnt so far, if they agree (:data:`_MATCHED_SPREAD`).
        """
        self._cached_units()
        return self._unit_list[level]

    def _unit(self, level: int) -> float | None:
        own = self._history[level]
        if len(own) >= (_TRUST_SAMPLES if self._given is not None else 1):
            size = float(median_of(own))
            if self._given is None:
                size /= self._several_of_the_matched(level, size)
            return size
        if self._given is not None:
            return float(self._given[level])
        if self._unmatched[level]:
            return None
        return self._matched_pool()

    def _several_of_the_matched(self, level: int, size: float) -> int:
        """How many cubes ``size`` holds, where most levels agree on a cube a whole share of it."""
        own = self._history[level]
        if len(own) < 2 or max(own) < _MULTIPLE_SPREAD * min(own):
            return 1
        pool = self._largest_agreeing(without=level)
        if pool is None:
            return 1
        m = int(round(size / pool))
        if 2 <= m <= _SEVERAL_MOST and abs(size / (m * pool) - 1.0) <= _MULTIPLE_SHARE:
            return m
        return 1

    def _largest_agreeing(self, without: int) -> float | None:
        """Median size of the largest group of levels (but ``without``) that agree.

        Within :data:`_MATCHED_SPREAD`; None unless ``_MULTIPLE_LEVELS`` do.
        """
        learnt = sorted(
            float(median_of(h)) for k, h in enumerate(self._history) if h and k != without
        )
        best: list[float] = []
        for i, low in enumerate(learnt):
            group = [x for x in learnt[i:] if x <= _MATCHED_SPREAD * low]
            if len(group) > len(best):
                best = group
        if len(best) < _MULTIPLE_LEVELS:
            return None
        return float(median_of(best))

    def _matched_pool(self) -> float | None:
        return self._agreed_size(_MATCHED_LEVELS)

    def learnt_elsewhere(self, level: int) -> float | None:
        """Median cube size the other levels learnt from their own landings, if they agree.

        None until two levels have learnt one, or when theirs differ by
        more than :data:`_MATCHED_SPREAD` (a mixed set of cells).
        """
        return self._agreed_size(2, without=level)

    def agrees_elsewhere(self, level: int) -> bool:
        """True if ``level``'s own learnt size is the one the other levels agree on.

        Within :data:`_MATCHED_SPREAD` of :meth:`learnt_elsewhere`: a hand's
        touch or a neighbour's jolt does not weigh what the other plates'
        cubes do on a matched set of cells.
        """
        own = self._history[level]
        pool = self.learnt_elsewhere(level)
        if not own or pool is None:
            return False
        size = float(median_of(own))
        return max(size, pool) <= _MATCHED_SPREAD * min(size, pool)

    def _agreed_size(self, least: int, without: int | None = None) -> float | None:
        """Median of the levels' own learnt sizes (but ``without``'s), if ``least`` agree."""
        learnt = [float(median_of(h)) for k, h in enumerate(self._history) if h and k != without]
        if len(learnt) < least or max(learnt) > _MATCHED_SPREAD * min(learnt):
            return None  # too few to tell, or a mixed set of cells
        return float(median_of(learnt))

    def trusted_units(self) -> np.ndarray:
        """Cube sizes known well enough to judge a ringing plate by (NaN elsewhere).

        Given by a calibration, learnt from a few landings on the level
        itself, or borrowed from a matched set of cells; a size learnt from
        one landing may be off by a good part of a cube.
        """
        out = np.full(self.n_levels, np.nan)
        pool = self._matched_pool() if self._given is None else None
        for level in range(self.n_levels):
            own = self._history[level]
            if len(own) >= _TRUST_SAMPLES:
                out[level] = self._cached_units()[level]  # its own, as :meth:`unit` reads it
            elif self._given is not None:
                out[level] = float(self._given[level])
            elif pool is not None and not self._unmatched[level]:
                out[level] = pool
        return out

    def cap_units(self) -> np.ndarray:
        """Cube sizes to cap a noisy cell's settled threshold by (``loadcell.NOISY_CAP_CUBES``).

        Each level's size (:meth:`units`), and where none is known yet, the
        size two or more levels learnt from their own landings agree on
        (within :data:`_MATCHED_SPREAD`): lending it for the count wants
        three (:data:`_MATCHED_LEVELS`), but a cap only lowers the threshold
        towards its noise floor, so two do. Model B tower 2: its level 5, a
        cube 4.8 sigma, missed the two cubes that came while only levels 1
        and 7 had learnt theirs.
        """
        out = self.units()
        missing = np.isnan(out) & ~self._unmatched
        if self._given is None and missing.any():
            agreed = self._agreed_size(2)
            if agreed is not None:
                out[missing] = agreed
        return out

    def borrowed(self, level: int) -> bool:
        """True if ``level``'s cube size is the matched cells' (none of its own yet)."""
        return not self.own_unit(level) and self.unit(level) is not None

    def settled_units(self) -> np.ndarray:
        """Cube sizes the settled view may ignore smaller steps by (NaN where borrowed).

        A kit of mixed cells can look matched after a few landings by
        chance; a plate whose cell reads a cube as a third of theirs must
        still show its first cube, so only its own size, or a calibrated
        one, hides a step. A size that may be several cubes' that settled
        together (``learnt_from_several``) is halved, so that a single cube
        still shows.
        """
        out = self.units()
        for level in range(self.n_levels):
            if self.borrowed(level):
                out[level] = np.nan
            elif self.size_unsure(level):
                out[level] *= _FEW_SHOWN
        return out

    def refuse_pool(self, level: int) -> None:
        """Stop lending ``level`` the matched cells' size: its first step did not fit it."""
        if self.borrowed(level):
            self._unmatched[level] = True
            self._changed()

    def smallest_weighed(self) -> float | None:
        """The smallest cube size any level learnt from its own landings (None: none has)."""
        learnt = [float(median_of(own)) for own in self._history if own]
        return min(learnt) if learnt else None

    def learnt_from_few(self, level: int) -> bool:
        """True if ``level``'s size is its own but rests on fewer landings than are trusted."""
        return self._given is None and 0 < len(self._history[level]) < _TRUST_SAMPLES

    def forget(self, level: int) -> None:
        """Forget the cube size learnt on ``level``: it was learnt from something else."""
        if self._history[level]:
            self._history[level].clear()
            self._changed()

    def size_unsure(self, level: int) -> bool:
        """True while ``level``'s own size rests on one step, or on two that disagree.

        One kind of cube reads within a few percent on a still plate; a
        size so taught may yet be several cubes' (``learnt_from_several``).
        """
        own = self._history[level]
        if self._given is not None or not own or len(own) >= _TRUST_SAMPLES:
            return False
        return len(own) == 1 or max(own) > _SAMPLES_AGREE * min(own)

    def learnt_from_several(self, level: int, delta_counts: float) -> int:
        """How many cubes the step ``level`` learnt its size from held, as this step tells.

        A plate's first lasting step is taken for one cube. While its size
        rests on that step alone, or on two that disagree (a second that
        agreed would be the same chance again), a step of about a half, a
        third or a quarter of it shows that it was two, three or four cubes
        that settled together (the caller decides whether the step was a
        cube's drop). 1 when the step tells nothing of the kind.
        """
        x = self.cubes(level, delta_counts)
        if not x > 0:
            return 1  # a loss (or nothing known) tells nothing of the cubes that came
        m = int(np.round(1.0 / x))
        if not self.size_unsure(level):
            # A trusted size: only two clean shares in a row tell (see
            # ``_TRUSTED_SEVERAL_SHARE``).
            shares = self._shares[level]
            if 2 <= m <= _TRUSTED_SEVERAL_MOST and abs(m * x - 1.0) <= _TRUSTED_SEVERAL_SHARE:
                shares.append(m)
                if len(shares) >= 2 and shares[-2] == m:
                    shares.clear()
                    return m
            else:
                shares.clear()
            return 1
        if 2 <= m <= _SEVERAL_MOST and abs(m * x - 1.0) <= _SEVERAL_SHARE:
            return m
        return 1

    def own_unit(self, level: int) -> bool:
        """True if ``level``'s cube size is its own (calibrated or learnt there)."""
        return self._given is not None or bool(self._history[level])

    def units(self) -> np.ndarray:
        """Unsigned counts per cube of every level (NaN where unknown)."""
        return self._cached_units().copy()

    def _cached_units(self) -> np.ndarray:
        # Asked for on every step and strike; changed only by learning.
        if self._units is None:
            values = [self._unit(k) for k in range(self.n_levels)]
            self._units = np.array([np.nan if v is None else v for v in values])
            # As :meth:`unit` gives them (asked 85k times a replay).
            self._unit_list = [None if math.isnan(u) else u for u in self._units.tolist()]
        return self._units

    def _changed(self) -> None:
        self._units = None
        self.version += 1

    def _usual_sign(self) -> float:
        """The sign most levels have (cells are usually all wired alike); +1 if none known."""
        known = self.sign[self.sign != 0.0]
        return -1.0 if known.size and known.sum() < 0 else 1.0

    def gains_like_the_others(self, level: int, delta_counts: float) -> bool:
        """Whether ``delta_counts`` goes the way cubes added go on the other levels.

        Only when other levels know their sign and all agree (cells are
        usually wired alike; one reversed among them makes this say no).
        """
        others = np.delete(self.sign, level)
        known = others[others != 0.0]
        if known.size < 1 or abs(known.sum()) != known.size or delta_counts == 0:
            return False
        return bool(np.sign(delta_counts) == known[0])

    def knows_sign(self, level: int) -> bool:
        """True once the sign of ``level``'s cell is given or learnt."""
        return bool(self.sign[level] != 0.0)

    def learn_sign(self, level: int, delta_counts: float, *, cubes_added: bool) -> None:
        """Vote on ``level``'s sign with a step believed to add (or remove) cubes.

        Votes add up, so one early step misread (a hand, a knock-down) is
        outvoted by the landings that follow. A calibrated sign is fixed.
        """
        if delta_counts == 0 or self._given is not None:
            return
        direction = 1.0 if cubes_added else -1.0
        self._votes[level] += direction * (1.0 if delta_counts > 0 else -1.0)
        if self._votes[level] != 0:
            self.sign[level] = 1.0 if self._votes[level] > 0 else -1.0

    def relearn_sign(self, level: int, delta_counts: float, *, cubes_added: bool) -> None:
        """Take ``level``'s sign from this step alone: the step it was learnt from was no cube."""
        if delta_counts == 0 or self._given is not None:
            return
        self._votes[level] = 0.0
        self.learn_sign(level, delta_counts, cubes_added=cubes_added)

    def cubes(self, level: int, delta_counts: float) -> float:
        """A step in cubes, signed (+ added), not rounded; NaN while no size is known."""
        sign = self.sign[level] if self.knows_sign(level) else self._usual_sign()
        unit = self.unit(level)
        if unit is None or unit <= 0:
            return float("nan")
        return float(sign * delta_counts / unit)

    def count(self, level: int, delta_counts: float) -> tuple[int, float]:
        """Cubes in a step and how far the step is from a whole number of cubes.

        Parameters
        ----------
        level : int
            The load channel.
        delta_counts : float
            The step, counts.

        Returns
        -------
        (int, float)
            Signed number of cubes (+ added, - taken away) and the residual
            ``|delta/unit - n|`` (0.5 at worst). Before anything is known the
            step counts as one cube added, residual 0.
        """
        x = self.cubes(level, delta_counts)
        if np.isnan(x):
            sign = self.sign[level] if self.knows_sign(level) else self._usual_sign()
            return (1 if delta_counts * sign > 0 else -1), 0.0
        n = int(np.round(x))
        return n, float(abs(x - n))

    def kind_ratio(self) -> float | None:
        """How much heavier the heavier of two kinds of cube is, if this game mixes two.

        Two readings that agree (within ``_KINDS_SAME``) tell it: steps heard
        as one drop that read neither one cube nor two (the heavier kind on
        a level that learnt the lighter, :meth:`note_step`). None for cubes
        of one kind. (The spread of a level's own single cubes was tried as
        well: misread steps in quick series made it look like two kinds on
        every model.)
        """
        if sum(self._odd_share) < _KINDS_SHARE * len(self._odd_share):
            return None
        # The most readings that agree, not the first pair: two odd steps
        # of another cause agreeing by chance (a cube read on a ringing
        # plate) must not stand for a dozen of the heavier kind.
        seen = sorted(self._odd)
        groups = [[x for x in seen[k:] if x <= _KINDS_SAME * seen[k]] for k in range(len(seen))]
        group = max(groups, key=len, default=[])
        if len(group) < _KINDS_READINGS:
            return None
        return float(median_of(group))

    def one_of_the_heavier(self, level: int, delta_counts: float) -> bool:
        """Whether a step read as two cubes is better one cube of the heavier kind.

        Only in a game that mixes two kinds (:meth:`kind_ratio`): on a level
        that learnt the lighter kind, one heavier cube reads the ratio; two
        cubes read 2, or twice the lighter over the heavier on a level that
        learnt the heavier.
        """
        ratio = self.kind_ratio()
        x = self.cubes(level, delta_counts)
        if ratio is None or not np.isfinite(x):
            return False
        return abs(x - ratio) < min(abs(x - 2.0), abs(x - 2.0 / ratio))

    def other_kind_residual(self, level: int, delta_counts: float) -> float:
        """How far (in cubes) a step lies from one cube of the other kind; inf in a one-kind game.

        On a level that learnt the lighter kind one heavier cube reads the
        ratio (:meth:`kind_ratio`); on one that learnt the heavier, one lighter
        reads its inverse.
        """
        ratio = self.kind_ratio()
        x = abs(self.cubes(level, delta_counts))
        if ratio is None or not np.isfinite(x):
            return float("inf")
        return float(min(abs(x - ratio), abs(x - 1.0 / ratio)))

    def note_step(self, level: int, delta_counts: float) -> None:
        """Remember a step heard as one drop that reads neither one cube nor two.

        Or, as its inverse, neither half a cube nor one: the lighter kind on
        a level that learnt the heavier.
        """
        x = self.cubes(level, delta_counts)
        if np.isfinite(x) and 1.0 / (2.0 - _KINDS_ODD) <= x < 1.0 / (1.0 + _KINDS_ODD):
            x = 1.0 / x
        if np.isfinite(x) and 1.0 + _KINDS_ODD < x <= 2.0 - _KINDS_ODD:
            self._odd.append(x)
            del self._odd[:-_HISTORY]
            self._odd_share.append(True)

    def revise_last(self, level: int, delta_counts: float) -> None:
        """Replace ``level``'s latest learnt cube with a better measure of the same step.

        The fast view measures a step while the plate may still ring; the
        settled view measures it again once all is still.
        """
        own = self._history[level]
        if own and delta_counts != 0:
            own[-1] = abs(delta_counts)
            self._changed()

    def learn(self, level: int, delta_counts: float, n: int) -> None:
        """Remember a confirmed step of ``n`` cubes (only single cubes teach)."""
        if abs(n) != 1:
            return
        self._odd_share.append(False)
        own = self._history[level]
        own.append(abs(delta_counts))
        del own[:-_HISTORY]
        self._changed()
