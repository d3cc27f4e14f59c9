"""The fusion's state, and the questions every view asks of it.

Which strikes belong to the drop that ended in a load step, whether a cube
was heard landing there, how far landings swing a plate, which fast steps
were doubted; and the disturbances that reset a drop.
"""

from __future__ import annotations

from collections import deque
from dataclasses import replace

import numpy as np

from dsp.detect import orderstats
from dsp.detect.acoustic import AcousticLevelModel, loudness_profile
from dsp.detect.cubes import CubeScale
from dsp.detect.deadcells import SilentCells
from dsp.detect.deafdiscs import DeafDiscs
from dsp.detect.dropgap import DropGap
from dsp.detect.events import Disturbance, Event, Landing
from dsp.detect.flatdiscs import FlatDiscs
from dsp.detect.heardrops import HeardRest
from dsp.detect.loadcell import LoadStep
from dsp.detect.loadhistory import LoadCoverage, LoadHistory
from dsp.detect.memory import Drop, FusionStats, LevelMemory, Look
from dsp.detect.openings import TowerOpenings
from dsp.detect.piezo import TimedImpact
from dsp.detect.slides import FIRST_HELD, SlideSigns
from dsp.detect.stops import LOAD_LAG_S, PassSwings, SuspectedStop
from dsp.detect.strikes import heard_on, loudest_levels, strikes_on
from dsp.detect.tablebeat import TableBeat
from dsp.detect.topmodule import set_down_at
from dsp.detect.trust import (
    CUBE_STRIKES,
    cube_like,
    drop_loudness_db,
    loud_as_a_cube,
    read_on_a_strike,
)

# Why 0 s: a step is decided as soon as its window completes. Steps of one
# disturbance pending at the same moment are still judged together, and the
# restless-plate check catches the rest: on towers 1-4 a 30 ms hold changed
# no count (single, noisy) and cost 30 ms of latency on every landing.
DEFAULT_HOLD_S = 0.0
# Why 0.35 s: the settling of one disturbance differs by level (ringing);
# steps of different levels closer than this belong together.
DEFAULT_COINCIDENCE_S = 0.35
# Why 3: a knock-down changes two levels (one loses, one gains); three or
# more levels changing together is something outside the tower.
DEFAULT_DISTURBANCE_LEVELS = 3
# Why 1.5 s: a knock-down's removal and landing happen within the fall time
# of a cube through a few levels plus settling, well under 1.5 s.
DEFAULT_KNOCK_WINDOW_S = 1.5
# Why 0.15 s: modules lifted together lose contact within a few readings.
DEFAULT_LIFT_GATHER_S = 0.15
# Why 0.22 s: a falling cube strikes again within ~0.1 s (one level of fall
# or a bounce; 99.9 % of the gaps between one cube's strikes on our towers
# are under 0.17 s), so that much silence means it has come to rest. Only
# acoustic-only decisions wait for it: 0.3 s gave the same levels 80 ms later.
DEFAULT_DROP_GAP_S = 0.22
# Why 6 of 8: a strike inside the tower is heard on its level and a few
# neighbours; a table knock or a hand on the tower reaches (almost) all.
DEFAULT_WIDE_IMPACT_CHANNELS = 6
# Why 6 dB: a wide impact is a disturbance only if it is also flat (no level
# stands out by more than this over the median level).
DEFAULT_WIDE_IMPACT_FLATNESS_DB = 6.0
# Why 4: more untrusted changes than this on one level before the settled
# view has counted them means hands, not cubes; their times do not matter.
DOUBTED_KEPT = 4
# Why 16: two confirmed landings per level on average; from then on a
# strike's level is the signature it sounds like, not its loudest disc
# (cross-check towers 13-24: 97.7 -> 97.9 % right; towers whose discs differ
# by up to +-10 dB: 95.1 -> 95.5 %; ours unchanged).
_EAR_ATTRIBUTION_LANDINGS = 16
# Why 0.25 cube: a cube's step measured by the fast view is within 0.1-0.2
# cube of whole; a step between whole cubes is a hand or the table.
FAST_MAX_RESIDUAL = 0.25
# Why 1.2 s: a cube falls through all eight levels and bounces out within
# about a second; earlier impacts belong to another drop.
DROP_LOOKBACK_S = 1.2
# Why 0.4 s: a cube's load begins to change when it first touches the plate,
# before its last bounce is heard, so the plate was still last at most a
# third of a second after the drop's last strike (-0.8 to +0.34 s over the
# 3,000 load landings of our noisy-room sessions). A plate that began to
# move later than this after the last strike was moved by a hand: on our
# 140 fresh noisy-room sessions 7 false landings fewer, none lost; no event
# of the cross-check towers changed (session 13).
_STRUCK_BEFORE_STEP_S = 0.4
# Why 4 s: impacts older than the longest unstable stretch before a step are
# of no use for timing it.
IMPACT_MEMORY_S = 4.0
# Why 512: strikes the ear has placed are remembered while they are among
# the recent impacts (a few seconds' worth); the rest are let go past this.
_HEARD_AS_KEPT = 512
# Why 1 s: without a load reading for this long the load channels are
# absent and the acoustic model has to decide on its own.
_LOAD_ABSENT_S = 1.0
# Why 3: a plate's typical landing swing needs a few landings of its own.
_SWING_SAMPLES = 3
# Why a quarter: a cube's last bounces on the plate it rests on are within
# a few times of its loudest strike; onsets after them at a tenth of it or
# less were a humming disc (model C tower 16).
_ENDED_LOUDNESS = 0.25
# Why 0.03 s and 0.5 s: a strike makes its plate busy within the 20 ms the
# busy test averages; a cube rocks or slides for at most about half a second
# after its last bounce (0.45 s on the cross-check towers), so a plate busy
# longer, or since long before the strike, is a noisy room. Why 4 s: a
# landing is decided within about 2 s of its last strike, and the plate's
# changes from half a second before that strike on are asked about; a
# flickering channel makes many, so they are kept by age, not by count,
# the age on the deciding clock (``Fusion.advance``).
_REST_ONSET_S = 0.03
_REST_MAX_S = 0.5
# Why 0.15 s: a cube that stops bouncing and then rolls or slides on
# leaves its plate quiet a moment between the ring of its last bounce and
# the scrape (model I: 0.05-0.1 s); a plate quiet longer than that was at
# rest, and what sounds after is another cube or the room.
REST_RESUME_S = 0.15
# A strike on the plate this long before it sounds again is what made it so.
REST_STRUCK_S = 0.03
# Why a quarter: a cube rolling on level 6 of model I kept the plates two
# and three levels off busy a fifth of the time (crosstalk), talk in
# model G's rooms four tenths.
_REST_FAR_BUSY = 0.25
# A strike heard on this many plates is a cube's, wherever it struck; a
# rolling cube's scrape gives onsets on one or two.
_REST_WIDE_STRIKE = 3
# Why the last 20 settled steps, and three before they tell: how many of
# the other plates are restless as one settles is a tower's own (model P
# tower 7: cells noisy enough that six or seven read restless at every
# step), so a count that would mean hands on a quiet tower means nothing
# there; on one it is only unusual above the median of its recent steps.
# Why 20 single landings kept, 5 seen and a quarter unheard: a working disc
# hears the cube land on its plate in all but a few per cent of the landings
# (models A-T); model U's weakest discs (20-27 mm, glued with foam tape or
# blu-tack, 17-50 codes per mN s) in noisy rooms heard a quarter to two
# thirds of them as nothing louder than the room. There the fast view left
# every unheard landing to the settled view, a third of a second later.
_HEARD_KEPT = 20
_HEARD_SEEN = 5
_UNHEARD_SHARE = 0.25
BUSY_SEEN = 20
BUSY_SEEN_LEAST = 3
BUSY_KEPT_S = 4.0


class FusionBase:
    """State and shared queries of the fusion (see :class:`~dsp.detect.fusion.Fusion`)."""

    def __init__(
        self,
        *,
        n_levels: int,
        scale: CubeScale,
        acoustic: AcousticLevelModel,
        hold_s: float = DEFAULT_HOLD_S,
        coincidence_s: float = DEFAULT_COINCIDENCE_S,
        disturbance_levels: int = DEFAULT_DISTURBANCE_LEVELS,
        knock_window_s: float = DEFAULT_KNOCK_WINDOW_S,
        lift_gather_s: float = DEFAULT_LIFT_GATHER_S,
        drop_gap_s: float = DEFAULT_DROP_GAP_S,
        impact_delay_s: float = 0.0,
        first_landings_held: int = FIRST_HELD,
    ) -> None:
        self.n_levels = int(n_levels)
        self.scale = scale
        self.acoustic = acoustic
        self.hold_s = hold_s
        self.coincidence_s = coincidence_s
        self.disturbance_levels = disturbance_levels
        self.knock_window_s = knock_window_s
        self.lift_gather_s = lift_gather_s
        self.drop_gap_s = drop_gap_s
        #: The silence that ends a drop heard without load cells.
        self.acoustic_gap = DropGap(drop_gap_s, top_level=n_levels - 1)
        #: Drops heard only on the lowest plates, in time with music on the table.
        self.table_beat = TableBeat()
        self.impact_delay_s = impact_delay_s
        self.stats = FusionStats()
        #: Signs that cubes here rest a moment on a plate and slide on.
        self.slide_signs = SlideSigns(first_held=first_landings_held)
        #: How far cubes seen passing occupied plates swung them (``stops.PassSwings``).
        self.pass_swings = PassSwings()
        self.flat_discs = FlatDiscs()
        self._impacts: deque[TimedImpact] = deque()
        self._pending_steps: list[LoadStep] = []
        # Settled rises waiting to see their cube stay (``SettledView``).
        self._settled_waiting: list[LoadStep] = []
        # When rises that no strike came with were reported (settled), and
        # whether one was followed by a lift: hands squeeze plates as they grip.
        self._unheard_rises: deque[float] = deque(maxlen=16)
        self._grips_shown = False
        # Whether each of the last single landings was heard (``_lands_unheard``).
        self._landed_heard: deque[bool] = deque(maxlen=_HEARD_KEPT)
        # How many other plates were restless at the settled view's last steps.
        self._busy_seen: deque[int] = deque(maxlen=BUSY_SEEN)
        # Fast steps queued to be looked at again later (``_look_again``).
        self._looks: dict[LoadStep, Look] = {}
        self._recent_steps: deque[tuple[LoadStep, int]] = deque()  # (step, signed cubes)
        # Stops only suspected, to be weighed once their plate is still (``StopReweigher``).
        self._suspected_stops: list[SuspectedStop] = []
        self._disturbance_until = -np.inf
        # The same, for steps on many levels at once (not knocks heard).
        self._steps_disturbed_until = -np.inf
        self._last_disturbance_t = -np.inf
        #: Which level lies open, since when (lifts, closures).
        self.openings = TowerOpenings(self.n_levels, lift_gather_s)
        #: Stream times that had load readings (filled by the detector as readings arrive).
        self.load_coverage = LoadCoverage(_LOAD_ABSENT_S)
        #: Recent load readings (filled by the detector as readings arrive).
        self.load_history = LoadHistory(IMPACT_MEMORY_S + 1.0)
        self._levels = [LevelMemory() for _ in range(self.n_levels)]
        self._drop = Drop()
        #: The last drop decided by ear (``heardrops.late_strike_of``).
        self._heard_rest: HeardRest | None = None
        # The drop being heard while the load cells are there, and the
        # cells that never move with their plates (``deadcells``).
        self._heard = Drop()
        self.silent_cells = SilentCells(self.n_levels)
        #: Discs that hear nothing of their own plate's landings (``deafdiscs``).
        self.deaf_discs = DeafDiscs(self.n_levels)
        #: Cubes believed to lie on each level (from the events decided so far).
        self.cubes_on = [0] * self.n_levels
        #: Load of each level (counts) that the events so far account for;
        #: NaN until the settled view has seen the level (or after a lift).
        self.accounted = np.full(self.n_levels, np.nan)
        self._reconnected = np.zeros(self.n_levels, dtype=bool)
        #: Load each lifted level's events accounted for when its module came
        #: off (NaN: none known, or already compared once it was back).
        self._before_lift = np.full(self.n_levels, np.nan)
        #: When each level's module was last set back on the tower (inf: lifted).
        self._reconnected_t = np.full(self.n_levels, np.inf)
        #: Whether each level's channel came back from silence with no module
        #: lifted (``TowerOpenings.dropped_out``); ``_reconnected_t`` is then
        #: when it went silent.
        self._dropped_out = np.zeros(self.n_levels, dtype=bool)
        #: The latest landings told as throws' (not knocked down): (time, level).
        self._throws_told: deque[tuple[float, int]] = deque(maxlen=16)
        self._wide_impact_t: deque[float] = deque(maxlen=64)
        # Strikes standing out on the top plate, longer than the impacts are
        # kept: the top module's lift and set-down are looked for among them
        # once cubes are found taken off it, or it shows closed.
        self._top_strike_t: deque[float] = deque(maxlen=64)
        self._heard_db: deque[float] = deque(maxlen=50)
        self._piezo_seen = False
        #: When the piezo stream began (set by the caller; inf: no piezo stream yet).
        self.piezo_since_s = np.inf
        self._heard_as: dict[int, tuple[TimedImpact, int, int]] = {}
        # When each plate started and stopped making sound, (time, busy).
        self._busy: list[deque[tuple[float, bool]]] = [
            deque() for _ in range(self.n_levels)
        ]

    @property
    def slides(self) -> bool:
        """Whether cubes here rest a moment on plates and slide on (``slides.SlideSigns``)."""
        return self.slide_signs.slides

    def _at_rest(self, events: list[Event]) -> list[Event]:
        """Landings timed when their plate fell quiet after the cube's last strike.

        The cube's last strike is its last bounce; it may rock, tumble or
        slide on for a while after it, ticking and scraping, before it is
        at rest. Internally landings stay timed by the strike (the rules
        that claim strikes for a landing need it).
        """
        return [
            replace(e, t=self._rest_time(e.floor, e.t, e.t_decided))
            if isinstance(e, Landing) else e
            for e in events
        ]

    def _rest_time(self, level: int, t: float, known_s: float) -> float:
        """When ``level``'s plate fell quiet after a strike at ``t``, as known by ``known_s``.

        ``t`` itself if the plate was not busy just after it (a strike too
        faint to keep it so, or no piezo), or was busy long before it (a
        noisy room, not this cube); ``known_s`` (at most ``_REST_MAX_S``
        on) if it was still busy then. A plate that sounds again within
        ``REST_RESUME_S`` of falling quiet, unstruck and alone, is the cube
        rolling on: its rest is when the plate falls quiet after that.
        """
        busy, since = False, -np.inf
        quiet_at: float | None = None
        resumed: float | None = None
        for when, now_busy in self._busy[level]:
            if when > known_s:
                break
            if when <= t + _REST_ONSET_S:
                busy, since = now_busy, when
            elif quiet_at is None:
                if busy and not now_busy:
                    quiet_at = when
            elif resumed is None:
                if not now_busy:
                    continue
                if when - quiet_at > REST_RESUME_S or not self._unstruck(level, when, known_s):
                    break
                resumed = when
            elif not now_busy:
                if not self._far_plates_quiet(level, resumed, when):
                    resumed = None
                    break
                # the cube rolled or slid on, unstruck, and fell quiet again
                quiet_at, resumed = when, None
        if not busy or t - since > _REST_MAX_S:
            return t
        if resumed is not None and self._far_plates_quiet(level, resumed, known_s):
            quiet_at = known_s
        return min(quiet_at if quiet_at is not None else known_s, t + _REST_MAX_S)

    def _unstruck(self, level: int, busy_s: float, known_s: float) -> bool:
        """Whether no strike made ``level``'s quiet plate sound again at ``busy_s``.

        A strike counts if heard on that plate or on ``_REST_WIDE_STRIKE``
        plates or more. Its onset comes at most the busy test's average
        (20 ms) before the plate reads busy; a rolling cube's scrape gives
        the neighbours onsets of their own, later. False when a strike there
        could not be known by ``known_s``.
        """
        if busy_s + self.impact_delay_s > known_s:
            return False
        return not any(
            busy_s - REST_STRUCK_S <= imp.t_s <= busy_s
            and (level in imp.channels or len(imp.channels) >= _REST_WIDE_STRIKE)
            for imp in self._impacts
        )

    def _far_plates_quiet(self, level: int, t0_s: float, t1_s: float) -> bool:
        """Whether the plates two levels or more from ``level`` were mostly quiet in ``[t0, t1]``.

        A cube rolling on a plate is heard there and next to it; talk and
        hum in the room flicker on every plate. Unlike
        ``FastView._sounds_alone`` (at one moment), over a span: busy less
        than ``_REST_FAR_BUSY`` of it on average.
        """
        span = t1_s - t0_s
        far = [k for k in range(self.n_levels) if abs(k - level) >= 2]
        if span <= 0 or not far:
            return False
        shares = [self._busy_for(k, t0_s, t1_s) / span for k in far]
        return float(np.mean(shares)) < _REST_FAR_BUSY

    def _busy_for(self, level: int, t0_s: float, t1_s: float) -> float:
        """How long ``level``'s plate was busy within ``[t0, t1]``, seconds."""
        total, busy, since = 0.0, False, t0_s
        for when, now_busy in self._busy[level]:
            if when >= t1_s:
                break
            if when > t0_s and busy:
                total += when - max(since, t0_s)
            busy, since = now_busy, when
        if busy:
            total += t1_s - max(since, t0_s)
        return total

    def _plate_busy_at(self, level: int, t_s: float) -> bool:
        """Whether ``level``'s plate was making sound at ``t_s`` (its last change by then)."""
        busy = False
        for when, now_busy in self._busy[level]:
            if when > t_s:
                break
            busy = now_busy
        return busy

    def _load_present(self, t_s: float) -> bool:
        return self.load_coverage.present(t_s)

    def _heard_here(self, step: LoadStep) -> bool:
        """Whether a strike of the step's drop was heard on its own level (by ear)."""
        drop = self._drop_impacts(step)
        return bool(heard_on(drop, self._levels_of(drop), step.level))

    def _heard_near(self, step: LoadStep) -> bool:
        """Whether a strike of the step's drop was heard on its own level or next to it."""
        return any(abs(top - step.level) <= 1 for top in self._levels_of(self._drop_impacts(step)))

    def _read_on_a_strike(self, step: LoadStep) -> bool:
        """Whether the step may lie on a strike's jolt (see ``trust.read_on_a_strike``)."""
        drop = self._drop_impacts(step)
        return read_on_a_strike(step, heard_on(drop, self._levels_of(drop), step.level))

    def _swing_and_usual(
        self, step: LoadStep, unit: float, *, pooled_only: bool = False
    ) -> tuple[float, float]:
        """How far the plate swung as the step came, and how far its landings swing it."""
        swing = self.load_history.swing(
            step.level, step.t_before_s - LOAD_LAG_S, step.t_settled_s
        )
        return swing, self._usual_swing(step.level, unit, pooled_only=pooled_only)

    def _piezo_present(self, t_s: float) -> bool:
        """Whether the piezos were listening at ``t_s`` (a load-only recording hears nothing).

        Known from the first impact, or from when the caller says the piezo
        stream began: before any impact, a plate that moved unheard was not
        struck.
        """
        return self._piezo_seen or t_s >= self.piezo_since_s

    def _heard_a_drop(self, step: LoadStep) -> bool:
        """Whether the piezos heard a cube strike near this level before it settled.

        As loud as a cube (``trust.loud_as_a_cube``); with no piezo stream
        at all (a load-only recording), nothing can be heard.
        """
        if not self._impacts:
            return not self._piezo_present(step.t_before_s)
        drop = self._unclaimed_drop(step)
        if drop and step.t_before_s - drop[-1].t_s > _STRUCK_BEFORE_STEP_S:
            return False  # all was quiet well before the plate moved: a hand
        return loud_as_a_cube(drop_loudness_db(drop, step.level), self._heard_db)

    def _lands_unheard(self) -> bool:
        """Whether this tower's discs missed a good share of its last single landings."""
        heard = self._landed_heard
        return len(heard) >= _HEARD_SEEN and heard.count(False) >= _UNHEARD_SHARE * len(heard)

    def _unclaimed_drop(
        self, step: LoadStep, *, claim_lead_s: float | None = None
    ) -> list[TimedImpact]:
        """The drop's strikes after the last landing on this level or next to it.

        Strikes up to such a landing were that cube's (its last bounce timed
        it), not this one's. ``claim_lead_s``: only those from that long
        before its plate began to take its cube (where it is known).
        """
        near = self._levels[max(0, step.level - 1):step.level + 2]
        return [
            imp for imp in self._drop_impacts(step)
            if all(
                imp.t_s > m.landed_t
                or (claim_lead_s is not None and imp.t_s < m.landed_from_t - claim_lead_s)
                for m in near
            )
        ]

    def _drop_ended_on(self, level: int, step: LoadStep) -> bool:
        """Whether the drop around ``step`` ended with a strike on ``level`` (rested there)."""
        drop = self._drop_impacts(step)
        if not drop:
            return False
        # Its last strike of some weight: faint onsets after it (a humming
        # disc, a cube ticking) are not where the drop ended.
        loudness = [float(np.max(imp.peaks)) for imp in drop]
        last = max(k for k, x in enumerate(loudness) if x >= _ENDED_LOUDNESS * max(loudness))
        return self._levels_of(drop)[last] == level

    def _heard_landing_here(self, step: LoadStep) -> bool:
        """Whether a cube's drop was heard on the step's own plate (always, with no piezos)."""
        if not self._piezo_present(step.t_before_s):
            return True
        return self._heard_here(step) and self._heard_a_drop(step)

    @property
    def _tower_open(self) -> bool:
        """Whether modules are off the tower (lifted, or the top one alone)."""
        return self.openings.open

    def _doubt(self, step: LoadStep, *, remeasure: bool = False) -> None:
        """Keep a fast step left to the settled view, to time what it decides.

        ``remeasure``: doubted only for how it was measured (not for a busy
        tower or a hand), so the fast view's second look may decide it.
        """
        memory = self._levels[step.level]
        memory.doubted.append(step)
        del memory.doubted[:-DOUBTED_KEPT]
        if remeasure:
            memory.remeasurable = step

    def _take_doubted(
        self, level: int, since_s: float, until_s: float, *, landing: bool
    ) -> LoadStep | None:
        """The doubted fast step that a settled change on ``level`` was first seen as.

        The earliest; for a landing, of several (a hand was near), the last
        that looked like whole cubes, else the last that gained (a cube
        landing as a hand lets go of the plate). It is taken off the list.
        """
        doubted = [s for s in self._levels[level].doubted if since_s <= s.t_settled_s < until_s]
        if not doubted:
            return None
        cube_like = [s for s in doubted if landing and self._looks_like_cubes(s)]
        gained = [s for s in doubted if landing and self.scale.cubes(level, s.delta_counts) > 0]
        chosen = cube_like[-1] if cube_like else gained[-1] if gained else doubted[0]
        self._levels[level].doubted.remove(chosen)
        return chosen

    def _looks_like_cubes(self, step: LoadStep) -> bool:
        n, residual = self.scale.count(step.level, step.delta_counts)
        return n > 0 and residual <= FAST_MAX_RESIDUAL

    def _account_fast(self, step: LoadStep) -> None:
        """Account for a fast-view step by its own size, not its end level.

        The fast view compares with its previous window, which may already
        hold a change it did not trust (a cube that landed while the tower
        shook); that change stays outstanding for the settled view to count.
        """
        if np.isfinite(self.accounted[step.level]):
            self.accounted[step.level] += step.delta_counts
        else:
            self.accounted[step.level] = step.after_counts
        memory = self._levels[step.level]
        memory.fast_accounted_t = max(memory.fast_accounted_t, step.t_settled_s)

    def _levels_of(self, drop: list[TimedImpact]) -> list[int]:
        """The level each strike was on, by ear, for reading a drop beside the load steps.

        Its loudest channel at first; once the ear has learnt from confirmed
        landings, the level whose signature it sounds most like, which knows
        this tower's disc sensitivities (a hot disc over a quiet one hears
        the quiet one's strikes loudest). Acoustic-only decisions keep the
        loudest channel for picking the final strikes: there the signatures
        judge those strikes' profiles, and picking by them as well cost 2
        points on the cross-check towers.
        """
        if self.acoustic.n_learnt < _EAR_ATTRIBUTION_LANDINGS:
            return loudest_levels(drop)
        # Each strike is asked about many times while it is recent; the
        # answer changes only when the ear learns.
        version = self.acoustic.version
        heard = self._heard_as
        asked = [
            imp for imp in drop
            if (known := heard.get(id(imp))) is None or known[0] is not imp or known[1] != version
        ]
        if asked:
            # All at once: the ear learns after most landings, and a quick
            # series then asks again about every recent strike.
            found = self.acoustic.levels(np.stack([imp.peaks for imp in asked]))
            for imp, level in zip(asked, found.tolist(), strict=True):
                heard[id(imp)] = (imp, version, level)
        levels = [heard[id(imp)][2] for imp in drop]
        if len(heard) > _HEARD_AS_KEPT:
            recent = {id(imp) for imp in self._impacts}
            kept = {k: v for k, v in heard.items() if k in recent}
            self._heard_as = kept if len(kept) <= _HEARD_AS_KEPT // 2 else {}
        return levels

    def _set_down_at(self, proof_s: float, *, by_a_cube: bool = False) -> float:
        """When the top module was set back, shown closed at ``proof_s`` (``topmodule``).

        ``by_a_cube``: the proof is a cube's strike, not the hands setting it down.
        """
        return set_down_at(
            self._top_strike_t, self.openings.top_handled_t, proof_s, by_a_cube=by_a_cube
        )

    def _thrown_onto_the_top(self, step: LoadStep) -> list[Event]:
        """The top module set back before a cube came to rest on its plate: closed then.

        Nobody throws while the top module is off, and cubes are taken out,
        not put in: a cube heard striking the top plate that adds to its
        load came through the entrance. The module was set down before it,
        with its knock (:meth:`_set_down_at`); none heard, by the cube's
        first strike, if it bounced there (one tap is a finger's).
        """
        top = self.n_levels - 1
        if not self.openings.top_off or step.level != top or step.revises:
            return []
        if not self.scale.cubes(top, step.delta_counts) >= 0.5:
            return []
        drop = self._drop_impacts(step)
        struck = [imp.t_s for imp, level in zip(drop, self._levels_of(drop), strict=True)
                  if level == top and cube_like(imp)]
        if not struck:
            return []
        if (t_set := self._set_down_at(struck[0])) < struck[0]:
            return self.openings.close_top(t_set, step.t_decided_s, handling=True)
        if len(struck) >= CUBE_STRIKES:
            # Set down without a sound, then a cube bounced on the top plate
            # (a finger taking cubes taps it once): the module was on by the
            # cube's first strike (model Q, whose hands set it down
            # silently: 18 and 7 landings more in its half-hour sessions,
            # G, J, L 1 more each; no false landing more on models A-Q),
            # or a reach after the hands left, when the cube came long after.
            t_set = self._set_down_at(struck[0], by_a_cube=True)
            return self.openings.close_top(t_set, step.t_decided_s, handling=False)
        return []

    def _drop_impacts(self, step: LoadStep) -> list[TimedImpact]:
        """Impacts of the drop that ended in this step (from shortly before it began)."""
        start = min(step.t_before_s, step.t_settled_s - DROP_LOOKBACK_S)
        return [imp for imp in self._impacts if start <= imp.t_s <= step.t_settled_s]

    def _last_impact_near(self, drop: list[TimedImpact], level: int) -> TimedImpact | None:
        """The last impact that sounds loudest on ``level`` (else next to it): the final bounce.

        A lone strike on ``level`` followed at once by one below is a cube
        clipping the hole on its way past (in rapid throws, often the next
        cube's): not where this one came to rest.
        """
        loudest = self._levels_of(drop)
        on = strikes_on(drop, loudest, level)
        near = [c for c, top in zip(drop, loudest, strict=True) if abs(top - level) <= 1]
        pick = on or near or drop
        return pick[-1] if pick else None

    def _usual_swing(self, level: int, unit: float, *, pooled_only: bool = False) -> float:
        """How far a landing swings this plate: its own median, else the tower's in cubes."""
        own = self._levels[level].landing_swings
        if len(own) >= _SWING_SAMPLES and not pooled_only:
            return float(orderstats.median_of(own))
        pooled = [
            swing / abs(u)
            for k, memory in enumerate(self._levels)
            if (u := self.scale.unit(k)) is not None and u != 0
            for swing in memory.landing_swings
        ]
        if len(pooled) < (1 if pooled_only else _SWING_SAMPLES):
            return float("nan")
        return float(orderstats.median_of(pooled)) * abs(unit)

    def _last_strike_on_level(self, drop: list[TimedImpact], level: int) -> float:
        on = heard_on(drop, self._levels_of(drop), level)
        return on[-1] if on else drop[0].t_s

    def _is_wide(self, imp: TimedImpact) -> bool:
        if len(imp.channels) < DEFAULT_WIDE_IMPACT_CHANNELS:
            return False
        profile = loudness_profile(imp.peaks)
        return bool(-float(orderstats.median(profile)) <= DEFAULT_WIDE_IMPACT_FLATNESS_DB)

    def _disturbance(
        self, t_s: float, now_s: float, settle_until: float | None = None
    ) -> list[Event]:
        until = max(t_s, settle_until or t_s) + self.coincidence_s
        self._disturbance_until = max(self._disturbance_until, until)
        self._drop = Drop()
        if t_s - self._last_disturbance_t < self.coincidence_s:
            return []
        self._last_disturbance_t = t_s
        return [Disturbance(t=t_s, t_decided=max(now_s, t_s))]
