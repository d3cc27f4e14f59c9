"""Cubes arriving and leaving: landings timed, split and learnt from, and removals timed.

A landing is timed by its cube's last bounce, split into its arrivals when
several cubes came in one step (seen apart by the fast view, or heard
apart), and teaches the acoustic model and the plate's size; it may end a
knock-down, a thrown cube that stopped on an occupied plate above. Cubes
taken by hand are timed by the plate's readings (``removals``).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from dsp.detect.events import Event, Landing, Removal
from dsp.detect.fusion.base import DOUBTED_KEPT, DROP_LOOKBACK_S, FAST_MAX_RESIDUAL
from dsp.detect.fusion.hands import STOPPED_SWING, THUMP_S, HandsJudge
from dsp.detect.loadcell import LoadStep
from dsp.detect.loadhistory import SWING_BASE_S, Press
from dsp.detect.orderstats import median_of
from dsp.detect.piezo import TimedImpact
from dsp.detect.removals import presses_while_open, removal_time
from dsp.detect.stops import (
    BEFORE_STRIKE_S,
    LOAD_LAG_S,
    STOP_ALONE_S,
    STOP_DIP_ABOVE,
    STOP_DIP_CUBES,
    STOP_DIP_HELD_S,
    STOP_LIGHTER_CUBES,
    STOP_LIGHTER_NOISE_S,
    STOP_LIGHTER_NOISES,
    STOP_LIGHTER_READINGS,
    STOP_REWEIGH_FROM_S,
    STOP_REWEIGH_UNTIL_S,
    STOP_SUSPECTED_SHARE,
    STOP_SWING_FELL,
    PlateWindow,
    StopSeen,
    SuspectedStop,
    bounced_past,
    fast_arrivals,
    fell_clearly,
    fell_from_rest,
    one_hit,
    plate_window,
    stop_held_window,
)
from dsp.detect.strikes import (
    ARRIVALS_APART_S,
    CEILING_REACH_S,
    PASS_GAP_S,
    after_last_silence,
    bounce_run,
    heard_on,
    passed_through,
    run_ends,
    strikes_on,
)
from dsp.detect.swinging import weighed_by
from dsp.detect.trust import REREAD_TAIL_S, drop_loudness_db

# Why 0.5: a plate the thrown cube bounced on (struck twice or more) that
# the cube below was heard to reach only after a fall from rest (see
# ``stops.KNOCKED_FALL_S``) needs less swing: a cube passing its hole edge
# strikes it once and is already falling fast. Single throws on both
# simulators, at 0.5-0.7: 15 such stops found, one cube that bounced twice
# on a plate before it fell through taken for one. In a quick series two
# cubes may strike the plate in turn, which is no bounce (strikes there as
# far apart as two throws are not one run, ``bounce_run``): with that, and
# the plates judged from the thrown cube's own strikes, quick series
# gained 3 stops on our towers and 3 on the cross-check towers, none false
# (before, 8 stops for 11 false ones).
_STOPPED_SWING_BOUNCED = 0.5
# Why 0.1: a thrown cube that stays on a plate bounces and settles there,
# and knocks the resting cube off, so the plate moves on after its first
# blow (``stops.STOP_HELD_FROM_S``): by at least 0.1 of a landing's usual
# swing in all but 2 of model A's 68 stops and 1 of model C's 75. A cube
# that strikes a damped plate once in passing leaves it still at once
# (model D: 0.0-0.02). Model D's false landings 58 -> 36 and 55 -> 13
# (towers 1-8, 9-16), for 2 landings of model A, 2 of model C's and 1 of
# our games.
_STOP_HELD_SWING = 0.1
# Why three quarters, of at least 3 others: a stop's plate swings like a
# landing while the plates no cube reached stay calmer; a knock on the table
# just before a throw swung every plate 0.6-0.8 of a landing, as far as the
# plate the thrown cube clipped (our eval's noisy rooms: their one false
# landing). Over all models 7 false landings fewer for 3 stops (half: 20
# fewer for 13).
_SWUNG_ALONE_SHARE = 0.75
_SWUNG_ALONE_OTHERS = 3
# Why 0.1 s and 0.5 cube: a plate where one cube came and one left sits, on
# average over its last readings, within half a cube of where it was; one
# that another cube landed on in a quick series has gained a whole one.
_STOPPED_TAIL_S = 0.1
_STOPPED_NET_CUBES = 0.5
# Why 0.3 s: the plates above are judged up to this long after the cube
# below came to rest, as a prompt decision would judge them (the fast view
# decides within 0.1-0.2 s); a decision the settled view made a second
# later would otherwise see the next cube of a quick series land on the
# plate the thrown one stopped on, and the stop would be lost.
_STOP_JUDGED_S = 0.3
# Why 0.5 s: a plate's first step that took longer than that to settle may
# hold cubes that came to rest from its first strike on, not only at its
# last; the cubes it is later shown to have held are timed by that first
# strike (model E's quick series: 3 landings more right, model B one less).
_SIZED_LONG_S = 0.5
# Why 15: the median of the last 15 landings follows a slowly changing plate.
_HISTORY_SWINGS = 15
# Why 1.5: a level's first change, heard as several cubes arriving, is
# taken for that many only when each then weighs what the other levels'
# cubes weigh, give or take the spread of cells of one kind (model H's
# levels: 4890-8283 counts a cube); a kit of mixed cells (ten times apart)
# rarely meets it by chance, and then only with separate drops heard.
_FIRST_SEVERAL_SPREAD = 1.5
# Why half a cube seen come and under a third left (session 34): a landing
# decided once its plate is back where it was before the cube came (the
# readings at the decision time, within a third of the step) was a cube
# that rested a moment and went on, wherever the decision came from (a
# second look, a knock-down's landing, the settled view); the readings must
# have shown the cube arrive, half of it or more, by the step's settling.
_CAME_SHARE = 0.5
GONE_SHARE = 0.3
# A loss on a plate above is a passing cube's, not a knock-down, when the
# plate held the load it fell to for _PASS_HELD_S within this long before:
# cubes rest a moment on the plates they pass, or up to 1.4 s on a rim.
_PASS_HELD_WITHIN_S = 1.5
_PASS_HELD_S = 0.1
# The thrown cube struck the plate it knocked a cube from as that plate's
# loss began; its landing is timed by its strikes, which the load lags.
_THROWN_TOLD_BEFORE_S = 0.3


class LandingJudge(HandsJudge):
    """Landings and removals, once a step is decided (see the module docstring)."""

    def _sized_at(
        self, step: LoadStep, t: float, drop: list[TimedImpact], since_s: float
    ) -> float:
        """When the cubes of a plate's size-teaching step came: ``t`` (its last strike there).

        Its first strike there from ``since_s`` on, if the step took long to
        settle (``_SIZED_LONG_S``).
        """
        if step.t_settled_s - step.t_before_s <= _SIZED_LONG_S:
            return t
        begun = [
            at for at in heard_on(drop, self._levels_of(drop), step.level) if at >= since_s
        ]
        return begun[0] if begun else t

    def _doubted_arrivals(self, step: LoadStep, n: int) -> list[tuple[LoadStep, int]]:
        """Split a settled change of ``n`` cubes into the arrivals the fast view doubted.

        Only when the doubted steps in the change each look like whole cubes,
        add up to exactly ``n`` and came to rest apart (a plate ringing after
        one landing makes window means wander, but never by whole cubes that
        add up). A doubted fall undoes the latest doubted rise of as many
        cubes before it: a cube that rested a moment and went on. They are
        taken off the doubted list.
        """
        level = step.level
        within = sorted(
            (s for s in self._levels[level].doubted
             if step.t_before_s <= s.t_settled_s <= step.t_settled_s),
            key=lambda s: s.t_settled_s,
        )
        doubted: list[LoadStep] = []
        counts: list[tuple[int, float]] = []
        for s in within:
            m, r = self.scale.count(level, s.delta_counts)
            if m == 0 or r > FAST_MAX_RESIDUAL:
                return []
            if m > 0:
                doubted.append(s)
                counts.append((m, r))
                continue
            came = [k for k, (rose, _) in enumerate(counts) if rose == -m]
            if not came:
                return []
            del doubted[came[-1]], counts[came[-1]]
        if len(doubted) < 2:
            return []
        if sum(m for m, _ in counts) != n:
            return []
        times = [s.t_settled_s for s in doubted]
        if min(np.diff(times)) < ARRIVALS_APART_S:
            return []
        for s in within:
            self._levels[level].doubted.remove(s)
        share = step.delta_counts / n
        return [
            (replace(s, delta_counts=share * m, after_counts=s.before_counts + share * m), m)
            for s, (m, _) in zip(doubted, counts, strict=True)
        ]

    def _cubes_heard_arriving(self, step: LoadStep, delta_counts: float) -> int:
        """Cubes in a change of ``delta_counts`` on a level that has no cube size yet.

        One (the level learns its size from it), unless separate drops were
        heard arriving on the level during the change (runs of strikes
        ``ARRIVALS_APART_S`` apart) and the change reads as that many cubes
        of the size two or more other levels learnt and agree on
        (:meth:`CubeScale.learnt_elsewhere`), within
        ``_FIRST_SEVERAL_SPREAD``, nearer than as one.
        """
        pool = self.scale.learnt_elsewhere(step.level)
        if pool is None or pool <= 0 or delta_counts == 0:
            return 1
        strikes, above = self._strikes_heard_on(step)
        runs = 1 + sum(
            run_ends(a, b, above, 0) for a, b in zip(strikes, strikes[1:], strict=False)
        )
        if len(strikes) < 2 or runs < 2:
            return 1
        as_one = abs(np.log(abs(delta_counts) / pool))
        as_several = abs(np.log(abs(delta_counts) / runs / pool))
        if as_several < as_one and as_several <= np.log(_FIRST_SEVERAL_SPREAD):
            return runs
        return 1

    def _strikes_heard_on(self, step: LoadStep) -> tuple[list[TimedImpact], list[float]]:
        """The strikes on the step's level since its last landing, and the times of those above."""
        level = step.level
        since = max(step.t_before_s, self._levels[level].landed_t)
        drop = [imp for imp in self._drop_impacts(step) if since < imp.t_s <= step.t_settled_s]
        heard = self._levels_of(drop)
        above = [imp.t_s for imp, top in zip(drop, heard, strict=True) if top > level]
        return strikes_on(drop, heard, level), above

    def _heard_arrivals(self, step: LoadStep, n: int) -> list[tuple[LoadStep, int]]:
        """Split a change of ``n`` cubes (either view's) by the drops heard on its level.

        Only when exactly ``n`` separate runs of strikes on the level came
        after its last landing: each run is one cube's bounces. A run ends
        at a gap of ``ARRIVALS_APART_S``; when that does not give ``n``
        runs, also at a gap of a bounce's length in which a level above
        was struck (the next cube on its way down: in rapid throws the next
        cube can arrive within a quarter second of the last one's bounces),
        and then also where a strike is ``NEW_CUBE_LOUDER`` than the last.
        """
        strikes, above = self._strikes_heard_on(step)
        if not strikes:
            return []
        pairs = list(zip(strikes, strikes[1:], strict=False))
        for signs in range(3):
            ends = [a.t_s for a, b in pairs if run_ends(a, b, above, signs)]
            if len(ends) + 1 == n:
                break
        else:
            return []
        ends.append(strikes[-1].t_s)
        share = step.delta_counts / n
        starts = [step.t_before_s, *ends[:-1]]
        return [
            (replace(step, t_before_s=a, t_settled_s=b + 1e-3, delta_counts=share,
                     after_counts=step.before_counts + share * (k + 1)), 1)
            for k, (a, b) in enumerate(zip(starts, ends, strict=True))
        ]

    def _arrivals(
        self, parts: list[tuple[LoadStep, int]], confidence: float, now_s: float, *,
        settled: bool = False,
    ) -> list[Event]:
        """The landings of a change split into its arrivals, in order."""
        out: list[Event] = []
        for part, m in parts:
            out += self._landings(part, m, confidence, now_s, settled=settled)
        return out

    def _gone_again(self, step: LoadStep, now_s: float) -> bool:
        """Whether the plate is back where it was before ``step`` by ``now_s``: the cube went on."""
        history = self.load_history
        size = abs(step.delta_counts)
        # The load now first: a plate that still holds its cube (nearly
        # every one) needs no second reading of when it came.
        held = history.change(step.level, step.t_before_s, now_s, REREAD_TAIL_S)
        if not (np.isfinite(held) and abs(held) <= GONE_SHARE * size):
            return False
        came = history.change(
            step.level, step.t_before_s, step.t_settled_s + REREAD_TAIL_S, REREAD_TAIL_S
        )
        return bool(np.isfinite(came) and abs(came) >= _CAME_SHARE * size)

    def _landings(
        self, step: LoadStep, n: int, confidence: float, now_s: float, *, settled: bool = False,
        learn: bool = True,
    ) -> list[Event]:
        """A cube arrived on ``step.level``: its landing (perhaps the end of a knock-down).

        ``learn=False``: the level does not learn its size from it (a cube of
        the other kind, or one measured across a lift).
        """
        level = step.level
        if self._gone_again(step, now_s):
            return []
        if n == 1 and self._piezo_present(step.t_before_s):
            drop_heard = self._heard_a_drop(step)
            self._landed_heard.append(drop_heard)
            if not settled and not drop_heard and not self._felt_a_drop(step):
                # Told unheard (``FastView._clean_and_unheard``), as hands
                # squeezing a plate before a lift would be: it may show them.
                self._unheard_rises.append(step.t_settled_s)
        rested_by = step.t_settled_s
        start = None
        # A change that spans the tower's close came after it: a cube thrown
        # back (hands had the tower before; their strikes are not its own).
        opening = self.openings.last
        closed = -np.inf if opening is None else opening.closed_s
        after = closed + THUMP_S if step.t_before_s <= closed <= step.t_settled_s else -np.inf
        seen = (
            self._take_doubted(level, step.t_before_s, rested_by, landing=True)
            if settled
            else None
        )
        # Unless a cube struck the plate well after that, alone: then a hand
        # had moved the plate before the throw came, and the cube came to
        # rest with its own strikes (noisy rooms: 2 landings had been timed
        # before their throws, each a false landing and a miss).
        fast = self._levels[level].fast_settled_t
        if (
            seen is not None and seen.t_settled_s >= after
            and not self._struck_after(level, seen.t_settled_s, rested_by)
        ):
            # The fast view saw this change settle but did not trust it: the
            # cube came to rest then, not when the settled view was sure.
            rested_by, start = seen.t_settled_s, seen.t_before_s
        elif (
            fast is not None and max(step.t_before_s, after) <= fast < rested_by
            and not self._struck_after(level, fast, rested_by)
        ):
            rested_by = fast  # the settled view decides later than the cube came to rest
        drop = [
            imp
            for imp in self._drop_impacts(step)
            if imp.t_s <= rested_by and (start is None or imp.t_s >= start - DROP_LOOKBACK_S)
        ]
        # This cube's strikes come after the level's previous landing (in
        # rapid throws the drop window holds that cube's strikes too): its
        # last bounce there, and a plate above it clipped in turn by two
        # cubes is not one struck twice by this one.
        own_drop = [imp for imp in drop if imp.t_s > max(self._levels[level].landed_t, after)]
        # Nor did it come to rest before its plate was last seen still
        # (less the converter's lag): an earlier onset there was something else.
        settled_from = (step.t_before_s if start is None else start) - LOAD_LAG_S
        last = self._last_impact_near(
            [imp for imp in own_drop if imp.t_s >= settled_from], level
        )
        t = rested_by if last is None else last.t_s
        out: list[Event] = []
        # A cube that left a level above in this drop was knocked down to this
        # one. When the thrown cube itself stays on the level it knocked a cube
        # from, that level's load does not change; hearing it was tried (strikes
        # above after the cube below arrived) and dropped: on the cross-check
        # towers it found none and made 83 false landings an hour (docs/detection.md).
        knocked_from = self._recent_removal_above(step)
        if knocked_from is not None and (
            self._passed_by(knocked_from) or not self._thrown_told(level, knocked_from)
        ):
            knocked_from = None
        maybe_stopped_on: int | None = None
        if n == 1:
            self.deaf_discs.note_landing(level, (ch for imp in own_drop for ch in imp.channels))
        if drop:
            swing_from = drop[0].t_s - BEFORE_STRIKE_S
            own = self.load_history.swing(level, swing_from, now_s)
            if n == 1 and np.isfinite(own):
                history = self._levels[level].landing_swings
                history.append(own)
                del history[:-_HISTORY_SWINGS]
            # A decision the settled view made late would otherwise see the
            # plates above gain the next cubes of a quick series.
            judged_until = min(now_s, rested_by + _STOP_JUDGED_S)
            # The thrown cube's strikes are those after the drop's last
            # silence: measured from an earlier cube's, a plate that cube
            # landed on would seem to have gained one in this drop.
            thrown = after_last_silence(own_drop, self.drop_gap_s)
            seen_stop = (
                self._stopped_above(level, thrown, thrown[0].t_s - BEFORE_STRIKE_S, judged_until)
                if n == 1 and thrown and not self.slides else None
            )
            if seen_stop is not None and not seen_stop.told:
                # Stops are not told by the swing here (cubes passing plates
                # swing them as far): only weighed, once the plate is still.
                self._weigh_later(
                    seen_stop, level, self._last_strike_on_level(drop, seen_stop.level), t
                )
                seen_stop = None
            stopped = None if seen_stop is None else seen_stop.level
            seen_leaving = None if stopped is None else self._recent_removal_above(
                step, since_s=thrown[0].t_s - BEFORE_STRIKE_S
            )
            if stopped is not None and seen_leaving in (None, stopped):
                at = self._last_strike_on_level(drop, stopped)
                # A later look at this drop must not find the stop again; the
                # next throw's may (two cubes in turn can stop on one plate).
                self._levels[stopped].stopped_t = at
                weighed = seen_stop is not None and seen_stop.lighter
                if seen_leaving is None and not weighed and not self._dipped(
                    stopped, thrown[0].t_s - BEFORE_STRIKE_S, judged_until
                ):
                    # The plate above swung like a landing and its load is
                    # where it was: the thrown cube may have stopped there and
                    # knocked a cube down to this level (one came, one left).
                    # A cube passing the plate swings it as far on most
                    # towers, so this landing stays the thrown cube's and
                    # carries the suspicion (docs/detection.md, "Stops are
                    # suspected, not reported").
                    maybe_stopped_on = stopped
                    self.stats.stops_suspected += 1
                    assert seen_stop is not None
                    self._weigh_later(seen_stop, level, at, t)
                else:
                    # Its load was read a cube lighter before the thrown
                    # cube settled there (a step, or a dip held a while):
                    # the knocked cube was weighed leaving, and the thrown
                    # one staying.
                    knocked_from = stopped
                    self._levels[stopped].landed_t = max(at, self._levels[stopped].landed_t)
                    self._throws_told.append((at, stopped))
                    self.silent_cells.note_landing(stopped, at, now_s)
                    out.append(
                        Landing(t=at, t_decided=now_s, floor=stopped, cubes=1,
                                confidence=0.7, source="load")
                    )
                    out.append(
                        Removal(t=at, t_decided=now_s, floor=stopped, cubes=1,
                                confidence=0.7, knocked=True)
                    )
                    self.stats.knockdowns_seen += 1
        heard = drop_loudness_db(drop, level)
        if heard is not None and n == 1:
            self._heard_db.append(heard)
        if drop and n == 1:
            # The model learns from what it will judge alone: the cube's last
            # bounce on the level (acoustic-only decisions pool the last
            # strikes heard there), not a strike of the next cube after it.
            final = drop[-1] if last is None else last
            decision = self.acoustic.classify(final.peaks)
            self.stats.acoustic_checked += 1
            if decision.level == level:
                self.stats.acoustic_agreed += 1
                confidence = 1.0 - 0.5 * (1.0 - confidence)
            self.acoustic.learn(final.peaks, level)
            self.stats.acoustic_learnt += 1
        if learn:
            if n == 1:
                self._levels[level].sized_at = (
                    None if self.scale.own_unit(level)
                    else self._sized_at(step, t, own_drop, settled_from)
                )
            self.scale.learn(level, step.delta_counts, n)
        # Cubes this change weighs that were told by ear while the plate
        # swung (``swinging``): counted, learnt from, not told again.
        memory = self._levels[level]
        by_ear = weighed_by(memory.heard_unweighed, step.t_before_s, step.t_settled_s, n)
        memory.heard_unweighed = [h for h in memory.heard_unweighed if h not in by_ear]
        told = n - len(by_ear)
        self.cubes_on[level] += told
        memory.landings += told
        self.slide_signs.note_landed()
        if n == 1:
            self._levels[level].doubles = 0
            self._levels[level].many = 0
        if settled:
            self.accounted[level] = step.after_counts
        else:
            self._account_fast(step)
            landed = self._levels[level].fast_landed
            landed.append((step.t_settled_s, n))
            del landed[:-DOUBTED_KEPT]
        if t > memory.landed_t:
            memory.landed_from_t = step.t_before_s
        memory.landed_t = max(t, memory.landed_t)
        self.silent_cells.note_landing(level, t, now_s)
        if told == 0:
            return out
        if knocked_from is None:
            self._throws_told.append((t, level))
        out.append(
            Landing(
                t=t,
                t_decided=now_s,
                floor=level,
                cubes=told,
                confidence=confidence,
                source="load",
                knocked_from=knocked_from,
                maybe_stopped_on=maybe_stopped_on,
                stop_chance=0.0 if maybe_stopped_on is None else STOP_SUSPECTED_SHARE,
            )
        )
        return out

    def _weigh_later(self, seen: StopSeen, below: int, at_s: float, rested_s: float) -> None:
        """Remember a stop the load could not show, to weigh its plate once still.

        ``at_s``: the thrown cube's last strike on the plate; ``rested_s``:
        when the cube told on ``below`` came to rest (``StopReweigher``).
        """
        self._suspected_stops.append(SuspectedStop(
            level=seen.level, below=below, t_s=at_s, since_s=seen.since_s,
            base_from_s=seen.base_from_s, due_s=rested_s + STOP_REWEIGH_FROM_S,
            last_s=rested_s + STOP_REWEIGH_UNTIL_S,
        ))

    def _struck_after(self, level: int, settled_s: float, until_s: float) -> bool:
        """Whether a cube stopped on ``level`` a throw's interval after ``settled_s``.

        That is, struck there by ``until_s``, not as a cube passing the hole.
        Asked only when no other cube landed anywhere from a second before:
        in a quick series a later strike there is often the next throw's
        cube, passing the hole or landing beside this one.
        """
        if max(memory.landed_t for memory in self._levels) > settled_s - STOP_ALONE_S:
            return False
        later = [
            imp for imp in self._impacts
            if settled_s + ARRIVALS_APART_S <= imp.t_s <= until_s + PASS_GAP_S
        ]
        levels = self._levels_of(later)
        return any(
            top == level and imp.t_s <= until_s and not passed_through(later, levels, k)
            for k, (imp, top) in enumerate(zip(later, levels, strict=True))
        )

    def _stopped_above(
        self, level: int, drop: list[TimedImpact], t0_s: float, t1_s: float
    ) -> StopSeen | None:
        """An occupied level above where the thrown cube stopped, knocking one down.

        Its plate swung like a landing and was struck again (a bounce, not
        the single strike of a cube passing its hole edge) or, struck once,
        long enough before this level for a cube to fall from rest; and its
        load is where it was: one cube came, one left. Strikes on the plate
        just above this level soon after one on it are this cube's ceiling,
        not the plate's own; a plate bounced on before the cube below fell
        from rest needs less swing.

        On a tower whose passing cubes swing plates like landings the swing
        tells nothing: such a stop comes with ``told`` false, only to be
        weighed once its plate is still (``StopReweigher``).
        """
        loudest = self._levels_of(drop)
        on_level = heard_on(drop, loudest, level)
        after = [imp for imp in self._impacts if drop[-1].t_s < imp.t_s <= t1_s]
        heard_after = list(zip((imp.t_s for imp in after), self._levels_of(after), strict=True))
        fast_on_level = fast_arrivals(drop, loudest, level)
        alone = t0_s - max(memory.landed_t for memory in self._levels) > STOP_ALONE_S
        best, best_ratio = None, 0.0
        best_change, best_window = 0.0, None
        passed_empty = False
        for j in range(level + 1, self.n_levels):
            # The thrown cube's own run of bounces there, begun before the
            # cube below came to rest: in a quick series each cube may clip
            # the plate in turn, which is no bounce.
            own = [
                t for t in heard_on(drop, loudest, j)
                if not (j == level + 1
                        and any(t - CEILING_REACH_S <= tk < t for tk in fast_on_level))
            ]
            struck = bounce_run(own, on_level[-1] if on_level else None)
            if not struck:
                continue
            gains = [
                (s.t_before_s, s.t_settled_s) for s, m in self._recent_steps
                if s.level == j and s.t_settled_s >= t0_s - SWING_BASE_S and s.t_before_s < t1_s
                and m > 0
            ]
            heard_later = own + [t for t, top in heard_after if top == j]
            window = plate_window(struck, gains, heard_later, t0_s, t1_s)
            empty = self.cubes_on[j] < 1
            if (
                window.gained
                or self._levels[j].stopped_t >= t0_s
                or j in self.openings.disconnected
                or any(s.level == j for s in self._pending_steps)
            ):
                continue
            unit = self.scale.unit(j)
            if unit is None:
                continue
            change = self.load_history.change(
                j, window.since_s, window.until_s, _STOPPED_TAIL_S, window.base_from_s
            )
            if not abs(change) < _STOPPED_NET_CUBES * unit:
                continue  # the plate gained (or lost) a cube: not one-in, one-out
            usual = self._usual_swing(j, unit)
            swing = self.load_history.swing(j, window.since_s, window.until_s, window.base_from_s)
            if not usual > 0 or not np.isfinite(swing):
                continue
            ratio = swing / usual
            held_from, held_until = stop_held_window(
                struck[0], self.load_history.reading_interval_s(struck[0])
            )
            held_until = min(window.until_s, held_until)
            held = self.load_history.swing(
                j, window.since_s, held_until, window.base_from_s, from_s=held_from
            )
            if np.isfinite(held) and held < _STOP_HELD_SWING * usual:
                continue  # still at once after one blow: struck in passing
            below = [imp.t_s for imp, top in zip(drop, loudest, strict=True)
                     if top < j and imp.t_s > struck[0]]
            fell = not below or fell_from_rest(struck[0], below[0])
            hits = one_hit(struck)
            if (below and bounced_past(struck, below[0])) or (len(hits) < 2 and not fell):
                # Struck and left in the air, then through the hole, or struck
                # once just before a level below (a clipped edge): a pass, and
                # how far it swung the plate tells whether stops can be told here.
                if not empty:
                    self.pass_swings.note(j, struck[0], like_landing=ratio >= STOPPED_SWING)
                continue
            struck = hits
            bounced = len(struck) >= 2 and bool(below) and fell
            needed = _STOPPED_SWING_BOUNCED if bounced else STOPPED_SWING
            if alone and j == level + 1 and below and not bounced and fell_clearly(
                struck[0], below[0]
            ):
                needed = STOP_SWING_FELL
            if ratio >= needed and not self._swung_alone(j, level, window, held_until, ratio):
                continue  # the whole tower swung (a knock on the table): no cube's doing
            if ratio >= needed and empty:
                passed_empty = True
            elif ratio >= needed and ratio >= best_ratio:
                best, best_ratio = j, ratio
                best_change, best_window = change, window
        if passed_empty:
            # Bounced on a plate with no cube to knock down, swung it like a
            # landing and went on: cubes here do not stop where they bounce.
            self.stats.bounced_on_empty += 1
            self.slide_signs.count_bounce_on_empty()
        if best is None or best_window is None:
            return None
        told = self.pass_swings.stops_told
        if not told:
            self.stats.stops_not_told += 1
        return StopSeen(
            best,
            lighter=self._left_lighter(best, best_change, t0_s, best_window.until_s),
            since_s=best_window.since_s,
            base_from_s=best_window.base_from_s,
            told=told,
        )

    def _left_lighter(self, level: int, change: float, t0_s: float, t1_s: float) -> bool:
        """Whether a plate a cube seems to have stopped on holds measurably less than before.

        ``change`` is its net change from before the throw's strikes began
        (``t0_s``) to ``t1_s`` (counts). Then the cube there now is another
        than the one knocked down (``stops.STOP_LIGHTER_CUBES``). Measured
        against the plate's noise before the throw and over the readings
        the change ends on, whichever is larger: a plate still ringing
        then reads its change from the fit of its ringing, off by a
        twentieth of a cube and more.
        """
        before = self.load_history.noise(level, t0_s - STOP_LIGHTER_NOISE_S, t0_s)
        tail = self.load_history.noise(level, t1_s - _STOPPED_TAIL_S, t1_s)
        interval = self.load_history.reading_interval_s(t0_s)
        return bool(
            self.scale.cubes(level, change) <= -STOP_LIGHTER_CUBES
            and np.isfinite(before) and np.isfinite(tail)
            and abs(change) >= STOP_LIGHTER_NOISES * max(before, tail)
            and interval * STOP_LIGHTER_READINGS <= _STOPPED_TAIL_S
        )

    def _dipped(self, level: int, t0_s: float, t1_s: float) -> bool:
        """Whether ``level``'s plate held a cube lighter a while in ``[t0, t1]``, and never heavier.

        (``stops.STOP_DIP_CUBES``, ``STOP_DIP_ABOVE``, ``STOP_DIP_HELD_S``.)
        """
        held = self.load_history.held_extent(level, t0_s, t1_s, STOP_DIP_HELD_S)
        # In cubes, signed: a cell wired the other way reads a loss upwards.
        lightest, heaviest = sorted(self.scale.cubes(level, counts) for counts in held)
        return bool(lightest <= -STOP_DIP_CUBES and heaviest <= STOP_DIP_ABOVE)

    def _swung_alone(
        self, j: int, level: int, window: PlateWindow, until_s: float, ratio: float
    ) -> bool:
        """Whether plate ``j`` swung ``ratio`` of a landing while most other plates stayed calm.

        The other plates (not ``level``, where the cube below landed) are
        measured over the window up to ``until_s``: a knock on the table or
        a hand on the tower swings them all about as far. (A knock after
        the stop is no sign against it: hence not the whole window.)
        """
        others = []
        for k in range(self.n_levels):
            unit = self.scale.unit(k)
            if k in (j, level) or k in self.openings.disconnected or unit is None:
                continue
            usual = self._usual_swing(k, unit)
            swing = self.load_history.swing(k, window.since_s, until_s, window.base_from_s)
            if usual > 0 and np.isfinite(swing):
                others.append(swing / usual)
        return len(others) < _SWUNG_ALONE_OTHERS or median_of(others) < _SWUNG_ALONE_SHARE * ratio

    def _recent_removal_above(self, step: LoadStep, since_s: float = -np.inf) -> int | None:
        """The level above that lost a cube in this drop: where this one was knocked from.

        ``since_s``: only a loss that began after then (the thrown cube's
        first strike): in quick series an earlier throw's knock-down is
        still recent.
        """
        # The deque is trimmed only as fast steps come: after a long quiet
        # spell (an open tower, doubted steps) it still holds old ones.
        since_s = max(since_s, step.t_settled_s - self.knock_window_s)
        for other, m in reversed(self._recent_steps):
            if (
                m < 0
                and other.level > step.level
                and other is not step
                and other.t_settled_s >= since_s
            ):
                return other.level
        return None

    def _last_fall_on(self, level: int) -> LoadStep | None:
        """The latest recent step that took cubes off ``level`` (None: none)."""
        falls = [other for other, m in self._recent_steps if m < 0 and other.level == level]
        return falls[-1] if falls else None

    def _thrown_told(self, level: int, above: int) -> bool:
        """Whether a throw's landing was told elsewhere since plate ``above`` began to lose a cube.

        That one is the thrown cube's, and this one's may be the knocked
        cube's. With none, this landing is told as the throw's: the game
        takes a knocked cube's landing for no throw, and the thrown one
        would stay owed (when it stopped on ``above`` unweighed, or was
        never heard at all). Over models A-S, 680 of 1,801 labels had no
        other landing beside them, 394 of them on the thrown cube. Only
        landings told as throws' count (in a burst of cubes thrown back,
        each labelled one let the next be labelled too), and a loss as the
        plate's module was set back (``_handled_during``) took no cube off it.
        """
        fall = self._last_fall_on(above)
        if fall is None:
            return True
        if self._handled_during(fall):
            # Hands had the tower as the plate changed: no cube left it.
            return False
        since = fall.t_before_s - _THROWN_TOLD_BEFORE_S
        return any(t >= since and k != level for t, k in self._throws_told)

    def _passed_by(self, above: int) -> bool:
        """Whether plate ``above`` only bore a passing cube: its last loss took no cube of its own.

        On towers whose cubes rest a moment on each plate they pass, the
        plate is read gaining a cube and losing it again; the loss is no
        knock-down when the plate held its load from after it a short while
        before (``_PASS_HELD_WITHIN_S``) and no landing was told there since.
        Labelled a knock-down, the thrown cube's landing is not the throw's
        in the game (model J: 435 of 491 such labels on towers 1-8).
        """
        fall = self._last_fall_on(above)
        unit = self.scale.unit(above)
        if fall is None or unit is None:
            return False
        held_t = self.load_history.last_held_near(
            above, fall.t_before_s - _PASS_HELD_WITHIN_S, fall.t_before_s, fall.after_counts,
            GONE_SHARE * abs(unit), _PASS_HELD_S,
        )
        # The landing told there is timed by its strikes, which the load lags.
        return bool(np.isfinite(held_t) and self._levels[above].landed_t < held_t - LOAD_LAG_S)

    def _removal_time(
        self, step: LoadStep, since_s: float | None = None, presses: list[Press] | None = None
    ) -> float:
        """When the cubes left the plate (``removals.removal_time``), looked for from ``since_s``.

        The pushes are looked for over the whole fall unless given
        (``presses``): the fast view may see the fall only after the push.
        """
        if presses is None:
            presses = self._presses(step)
        start = step.t_before_s if since_s is None else since_s
        return removal_time(self.load_history, step, start, presses)

    def _presses(self, step: LoadStep) -> list[Press]:
        """A finger's hard pushes on a falling plate while its level lay open, over the fall."""
        opened = self.openings.opening_of(step.level, step.t_before_s, step.t_settled_s)
        cubes = self.scale.cubes(step.level, step.delta_counts)
        return presses_while_open(self.load_history, step, opened, cubes)
