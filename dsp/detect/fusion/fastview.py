"""The fast view: a plate's step decided as soon as it settles, when it can be trusted.

A step is trusted when the tower is closed and calm, a cube was heard
coming, and the plate swung like a landing; else it is doubted and left to
the settled view (which times what it decides by it), or looked at again
once a strike's jolt or other restless plates have passed, or, where cubes
slide on, once its plate has held the cube a while.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from dsp.detect.events import Event, Landing, Removal
from dsp.detect.fusion.base import FAST_MAX_RESIDUAL, REST_RESUME_S, REST_STRUCK_S
from dsp.detect.fusion.hands import (
    CALM_LOOK_EVERY_S,
    CALM_LOOK_UNTIL_S,
    HANDLING_GUARD_S,
    PASSED_SHARE_SETTLING,
    RING_GUARD_S,
)
from dsp.detect.fusion.reweigh import StopReweigher
from dsp.detect.loadcell import LoadStep
from dsp.detect.memory import Look
from dsp.detect.slides import SLID_WITHIN_S, SlideSigns, may_slide_on
from dsp.detect.trust import REREAD_AFTER_S, REREAD_TAIL_S

# Why 2: a cube shakes its own plate; two or more other plates restless
# while it settles means hands or the table moved the tower.
_BUSY_LEVELS = 2
# Why 0.3 s: a tower-wide impact this shortly before a step means the step
# may be the hand or knock, not a cube.
_DROP_GAP_GUARD_S = 0.3
# Why a fifth of a cube: ring reads of a landing lie above the plate's
# level before it (the cube is on it); a hand lifting or pressing from
# below reads lower by more than noise.
_SANK_CUBES = 0.2
# Why 0.15 cube: a second cube on a still-ringing plate must look whole.
RING_MAX_RESIDUAL = 0.15

# Why 1 s: model N's hands squeeze a plate 0.3-0.7 s before the contacts
# part, and a lift is known 0.25 s after that; holding every unheard rise
# from the start would cost model F's cubes that no disc hears (71 right
# landings) the wait, so only a tower that has shown such a grip waits.
GRIP_BEFORE_LIFT_S = 1.0
# Why 0.12 cube: two readings agreeing within 8 % tell the two kinds' ratio;
# a cube of the other kind reads within a tenth of it.
_KIND_MAX_RESIDUAL = 0.12
# Why 0.3 s: the two halves of one arrival read on a ringing plate come a
# window or two apart; a part older than this was something else.
_PART_JOIN_S = 0.3
# Why 0.5: a plate's first step against the way the other cells are wired
# is taken for a cube (its cell wired the other way) only when it swung
# like one: half a landing's usual swing (most landings swing 0.5-1.7 of
# it), where hands lifting a plate in our noisy rooms swung 0.03-0.27.
_AGAINST_SIGN_SWING = 0.5
# Why 0.1: a step whose plate swung that little is a hand's even when it
# still holds 125 ms on (hands press for up to a second): the lowest swings
# of fast-view landings were 0.15 of the usual on the cross-check towers
# (8,000 landings) and 0.47 in our noisy rooms; the hands taken for
# landings there swung 0.04-0.06. Left to the settled view: 2 false
# landings fewer on 140 fresh noisy-room sessions, no cross-check score
# changed (session 13).
_HARDLY_SWUNG = 0.1
# Why 0.3 s: a plate carried past its load by a cube's blow settles back
# within a few readings of the converter (0.3 s at 10 readings a second).
_SETTLES_BACK_S = 0.3
# Why these: a step read at no whole cube is read again every 50 ms, for up
# to 0.4 s after it settled (the settled view's window is 0.3 s, once every
# plate is still), and taken when two reads in a row are one clean cube
# that agree within a tenth of one (``FastView._reread``).
_REREAD_EVERY_S = 0.05
_REREAD_UNTIL_S = 0.4
_REREAD_AGREE_CUBES = 0.1
# Why these: in a tower whose cubes rest a moment on a plate and slide on
# (``slides.SlideSigns``), a landing waits until its plate has held the cube
# 0.4 s, and 0.25 s since it was last struck (a sliding cube scrapes, heard
# as faint onsets; the next cube of a quick series strikes the plate and
# takes the place of one that leaves: model R, 0.25 s against 60 ms, 20
# false landings fewer over A-R and 7 right fewer; 0.4 s, 30 and 23), nor
# does it still sound (the busy test: a scrape too faint for an onset;
# model B: 3 false landings fewer, one more right), looking every 0.1 s,
# for 0.8 s at most.
_SLIDE_LOOK_S = 0.1
_SLIDE_HOLD_S = 0.4
_RESTRUCK_HOLD_S = 0.25
_SLIDE_WAIT_S = 0.8
# Why these: a plate whose readings stayed within a tenth of a cube for
# 0.2 s (five of its own converter's readings or more) after its last step
# no longer rang from it. The still span may end up to 0.3 s before the
# next step began (the next cube's strikes jolt the plate before its rise
# is read), looked for every 50 ms back from the step.
_RANG_OUT_S = 0.2
_RANG_OUT_READINGS = 5
_RANG_OUT_CUBES = 0.1
_RANG_OUT_LOOKBACK_S = 0.3
_RANG_OUT_EVERY_S = 0.05
# Why 2 s: a step that was no landing within that long of the tower being
# closed is its plate reseated; the next rise soon after may be a cube
# thrown back resting a moment on it (model S's long sessions: 4 false
# landings, each 1.1-1.3 s after a close).
_RESEATED_S = 2.0
# Why 0.3 s: the session's first landings (``SlideSigns.first_landings``)
# wait as well, for a shorter hold: a cube passing a plate bears on it
# for 30-250 ms (models J, R) and is heard striking below within 0.15 s
# of leaving. Against 0.4 s: p95 latency over A-S 0.883 -> 0.877 s, 6
# false landings more of 866.
_FIRST_HOLD_S = 0.3


def count_confidence(residual: float) -> float:
    """How sure a count of whole cubes is, from how far the step lies off whole ones."""
    return float(np.clip(1.0 - 0.9 * max(0.0, residual - 0.1) / 0.4, 0.5, 0.99))


class FastView(StopReweigher):
    """Fast-view decisions of load steps (see the module docstring)."""

    def _resolve_steps(self, ready: list[LoadStep]) -> list[Event]:
        out: list[Event] = []
        for step in sorted(ready, key=lambda s: s.t_settled_s):
            if step not in self._pending_steps:
                continue
            # Decided as soon as the hold after the step's own decision is over.
            now_s = step.t_decided_s + self.hold_s
            self._check_slides(now_s)
            self._note_slide(step)
            # A step already judged and waiting to be looked at again is no
            # part of a group of plates that changed together: it was
            # decided alone when it came.
            group = [
                s
                for s in self._pending_steps
                if abs(s.t_settled_s - step.t_settled_s) <= self.coincidence_s
                and s not in self._looks
            ]
            levels = {s.level for s in group}
            if step not in self._looks and len(levels) >= self.disturbance_levels:
                for s in group:
                    self._pending_steps.remove(s)
                self.stats.steps_in_disturbance += len(group)
                t0 = min(s.t_before_s for s in group)
                out.extend(self._disturbance(t0, now_s, settle_until=step.t_settled_s))
                self._steps_disturbed_until = self._disturbance_until
                continue
            self._pending_steps.remove(step)
            if step.revises:
                # Only a step the fast view doubted for its measure is looked at again.
                first = self._take_revised(step)
                if first is None:
                    self._remeasure_part(step)
                    continue
            self._levels[step.level].fast_settled_t = step.t_settled_s
            look = self._looks.pop(step, None)
            if look is not None:
                if not self._looked_again(step, look):
                    continue
            elif not self._fast_step_trusted(step):
                if self._waits_for_calm(step):
                    # Doubted only for other plates shaken by something else
                    # (a knock on the table, a hand on another level): looked
                    # at again once they are still. Meanwhile the settled
                    # view may count it, timed by it.
                    self._doubt(step)
                    self._look_again(step, Look(step, until_calm=True),
                                     step.t_decided_s + CALM_LOOK_EVERY_S)
                    continue
                if not self._looks_like_cubes(step):
                    # Not like a cube: what follows on this plate soon is suspect (a hand).
                    self._levels[step.level].last_fast = (step.t_decided_s, False)
                self._doubt(step)
                # Left to the settled view, which decides once all is still.
                self.stats.steps_in_disturbance += 1
                continue
            elif self._swung_little(step, _HARDLY_SWUNG):
                # A cube's weight, but the plate hardly swung: a hand pressing
                # it. Left to the settled view, which decides once all is still.
                self._doubt(step)
                self.stats.steps_in_disturbance += 1
                continue
            elif self._looks_like_cubes(step) and (
                self._read_on_a_strike(step) or self._swung_little(step)
            ):
                # Trusted, but read again once the strike's jolt has passed,
                # or, the plate having swung less than a landing swings it,
                # to see whether it still holds the cube (a hand touching
                # the tower presses a plate and lets go).
                self._look_again(step, Look(step, until_calm=False),
                                 step.t_settled_s + REREAD_AFTER_S)
                continue
            if self._slides_on(step, now_s, look):
                continue
            out.extend(self._step_event(step, now_s))
        return out

    def _slides_on(self, step: LoadStep, now_s: float, look: Look | None) -> bool:
        """Whether a landing about to be decided waits to see whether its cube stays.

        Only in a tower whose cubes were seen to rest a moment on a plate and
        slide on into its hole (``SlideSigns.wary``): the landing waits until its plate
        has held the cube a while and nothing more was heard on it lately,
        nor does it still sound (a sliding cube scrapes; another cube
        strikes it and takes the place of one that goes on), then is
        decided if the plate still holds it. Where a cube was seen sliding
        on but the tower is not taken for such a one, a landing whose plate
        alone still sounds (:meth:`_sounds_alone`) waits until it is quiet:
        its cube is still moving (model B's slides scrape; models A-S 13
        false landings fewer, 2 right more, p95 latency the same). Waiting
        wherever any plate sounds kept 3 more off but raised our noisy
        rooms' p95 latency 435 -> 462 ms: talk makes every plate sound.
        Where cubes slide on, a plate that sounded within ``REST_RESUME_S``
        with nothing struck (:meth:`_rolled_lately`) waits too: its cube
        may be rolling on after a quiet moment (models A-S: 15 false
        landings fewer, 5 right fewer). A cube on the ground floor never
        waits (``slides.may_slide_on``).
        """
        if self.scale.cubes(step.level, step.delta_counts) <= 0 or not may_slide_on(step.level):
            return False
        wary = self.slide_signs.wary
        if not wary and not (
            self.slide_signs.slides_seen and self._sounds_alone(step.level, now_s)
        ):
            return False
        first = step if look is None else look.first
        since = [imp for imp in self._impacts if first.t_settled_s < imp.t_s <= now_s]
        struck = [imp.t_s for imp, level in zip(since, self._levels_of(since), strict=True)
                  if level == step.level]
        if not wary:
            hold_s = 0.0
        elif self.slide_signs.first_landings:
            hold_s = _FIRST_HOLD_S
        else:
            hold_s = min(_SLIDE_HOLD_S, self.slide_signs.dwell_hold_s())
        held_until = max(
            [first.t_settled_s + hold_s, *(t + _RESTRUCK_HOLD_S for t in struck)]
        )
        if now_s - first.t_settled_s >= _SLIDE_WAIT_S or (
            now_s >= held_until
            and not self._plate_busy_at(step.level, now_s)
            and not (self.slide_signs.slides and self._rolled_lately(step.level, now_s))
        ):
            self.slide_signs.note_held()
            return False
        # Nothing is decided before the plate has held the cube long enough.
        self._levels[step.level].waiting = first
        at_s = max(now_s + _SLIDE_LOOK_S, held_until)
        self._look_again(step, Look(first, until_calm=False), at_s - self.hold_s)
        return True

    def _rolled_lately(self, level: int, now_s: float) -> bool:
        """Whether ``level``'s plate sounded within ``REST_RESUME_S`` with nothing struck anywhere.

        Any strike, not only one on this plate (as ``_rest_time`` asks): in
        quick series the next cube falling past makes the plate sound, and
        waiting on that had landings timed by a later cube (run 51).
        """
        since = now_s - REST_RESUME_S
        return self._busy_for(level, since, now_s) > 0.0 and not any(
            since - REST_STRUCK_S <= imp.t_s <= now_s for imp in self._impacts
        )

    def _sounds_alone(self, level: int, t_s: float) -> bool:
        """Whether ``level``'s plate still sounds at ``t_s`` and no plate two levels off does."""
        return self._plate_busy_at(level, t_s) and not any(
            self._plate_busy_at(k, t_s) for k in range(self.n_levels) if abs(k - level) > 1
        )

    def _fast_step_trusted(self, step: LoadStep, *, shaken_too: bool = True) -> bool:
        """Whether the fast view may decide this step (calm, closed tower).

        ``shaken_too=False``: whether it may, but for other plates being
        restless or a knock heard on the table.
        """
        disturbed_until = self._disturbance_until if shaken_too else self._steps_disturbed_until
        if self._tower_open or step.t_settled_s <= disturbed_until:
            return False
        if step.t_before_s - self.openings.last_handled_t < HANDLING_GUARD_S:
            closed = self.openings.last_handled_within(
                step.t_before_s - HANDLING_GUARD_S, step.t_settled_s
            )
            if closed is None or not self._thrown_back(step, closed):
                return False
        if self._pressed(step) or self._steadied(step):
            return False
        if not shaken_too:
            return (
                not self._hands_rumbling(step)
                and self._heard_a_drop(step)
                and not self._first_cube_unswung(step)
            )
        if self._unexplained_busy(step) >= _BUSY_LEVELS:
            return False
        start = step.t_before_s - _DROP_GAP_GUARD_S
        if any(start <= t <= step.t_settled_s for t in self._wide_impact_t):
            return False
        if self._hands_rumbling(step):
            return False
        if self._piezo_present(step.t_before_s) and (
            self.scale.unit(step.level) is None or not self.scale.knows_sign(step.level)
        ):
            # The plate's first cube teaches its size, or which way its cell
            # is wired, for the whole session: only a cube heard striking
            # this very plate is taken for it.
            if not self._heard_here(step):
                return False
            if self._no_first_cube(step, step.delta_counts, share=PASSED_SHARE_SETTLING):
                return False
            if self._first_cube_unswung(step):
                return False
            if self._settles_back(step):
                return False
            if self.scale.cubes(step.level, step.delta_counts) < 0 and not self._swung(
                step, _AGAINST_SIGN_SWING
            ):
                # Read against the way the other cells are wired: a cell wired
                # the other way, or a hand lifting the plate, which swings it
                # less than a landing.
                return False
            return self._heard_a_drop(step)
        return (
            self._heard_a_drop(step) or self._felt_a_drop(step) or self._clean_and_unheard(step)
        )

    def _clean_and_unheard(self, step: LoadStep) -> bool:
        """Whether a clean step of one cube, alone and unheard, is trusted: cubes land unheard here.

        Not once hands were shown to squeeze a plate just before lifting
        modules (:meth:`_grips_seen`): such a landing counts towards it
        (``LandingJudge._landings``).
        """
        if not self._lands_unheard() or self._grips_seen() or self._unexplained_busy(step):
            return False
        n, residual = self.scale.count(step.level, step.delta_counts)
        return n == 1 and residual <= FAST_MAX_RESIDUAL

    def _grips_seen(self) -> bool:
        """Whether an unheard rise told as a landing came ``GRIP_BEFORE_LIFT_S`` before a lift."""
        if not self._grips_shown:
            self._grips_shown = any(
                self.openings.handled_within(t, t + GRIP_BEFORE_LIFT_S) for t in self._unheard_rises
            )
        return self._grips_shown

    def _settles_back(self, step: LoadStep) -> bool:
        """Whether a step on a plate with no size undoes part of a rise just doubted there.

        A cube's blow can carry the plate's first readings past its load
        (a converter at 10 readings a second integrates the strike: model
        L read 1.5 cubes for 0.2 s, then the load); the rise is doubted,
        and the fall back from it, against the rise and smaller, within
        ``_SETTLES_BACK_S``, is the plate settling, not a cube on a cell
        wired the other way. Taken for the plate's first cube, it taught a
        size of half a cube: every later cube there read as two.
        """
        for rise in self._levels[step.level].doubted:
            if (
                rise.delta_counts * step.delta_counts < 0
                and abs(step.delta_counts) < abs(rise.delta_counts)
                and 0.0 <= step.t_before_s - rise.t_before_s
                and step.t_before_s - rise.t_settled_s <= _SETTLES_BACK_S
            ):
                return True
        return False

    def _waits_for_calm(self, step: LoadStep) -> bool:
        """Whether a step doubted for restless plates alone may be looked at again.

        One clean cube, heard landing on this level as loud as a cube, with
        nothing but other plates against it.
        """
        n, residual = self.scale.count(step.level, step.delta_counts)
        if n != 1 or residual > FAST_MAX_RESIDUAL:
            return False
        if not self._fast_step_trusted(step, shaken_too=False):
            return False
        return self._heard_near(step)

    def _look_again(self, step: LoadStep, look: Look, at_s: float) -> None:
        """Queue ``step`` to be looked at again at ``at_s`` (see :class:`Look`)."""
        again = replace(step, t_decided_s=at_s)
        self._looks[again] = look
        self._pending_steps.append(again)

    def _drop_waiting_looks(self, step: LoadStep) -> None:
        """Forget fast steps on ``step``'s plate still waiting to be looked at again within it.

        The settled view counts their change now (a cube that had to stay a
        while where cubes slide on, and the plate fell still first): each
        is reported once. Model B, once its towers were known: 29 and 16
        such doubles (towers 1-8, 9-16), and 7 and 1 landings more right.
        """
        waiting = [
            again for again, look in self._looks.items()
            if again.level == step.level and not look.until_calm
            and step.t_before_s <= look.first.t_settled_s <= step.t_settled_s
        ]
        for again in waiting:
            del self._looks[again]
            if again in self._pending_steps:
                self._pending_steps.remove(again)

    def _looked_again(self, step: LoadStep, look: Look) -> bool:
        """Whether a step queued again is decided now, as a trusted fast step."""
        if look.reread:
            self._reread(step, look.first)
            return False
        if look.until_calm:
            return self._calm_look(step, look.first)
        if not self._still_holds(step):
            # The plate went back: it was the jolt of a strike, not a cube.
            self._doubt(step)
            self.stats.steps_in_disturbance += 1
            return False
        return True

    def _reread(self, step: LoadStep, first: LoadStep) -> None:
        """Read again the load of a plate whose step read at no whole number of cubes.

        A cube that bounces as it lands, or a plate that rings from the
        strike, is read by the fast view's short window at 0.5-0.75 or
        1.25-1.5 of a cube; the settled view then waited for every plate
        to be still for 0.3 s (a quick series: half a second and more).
        Once the plate's own load reads one clean cube from before the
        step, twice in a row ``_REREAD_EVERY_S`` apart, that is the step,
        as the converter's own second look would have it (a revision).
        """
        memory = self._levels[first.level]
        if memory.remeasurable is not first or first not in memory.doubted:
            return  # measured again, joined with the next step, or the settled view's
        if any(
            s.level == first.level and s.t_before_s >= first.t_settled_s
            for s in (*self._pending_steps, *self._looks)
        ):
            # The plate rose again since: the cube bounced off it and came
            # back (or another came), and read from before the first rise the
            # load would count it twice. The later step tells it.
            return
        now_s = step.t_decided_s
        held = [
            self.load_history.change(first.level, first.t_before_s, t, REREAD_TAIL_S)
            for t in (now_s - _REREAD_EVERY_S, now_s)
        ]
        counts = [self.scale.count(first.level, h) for h in held if np.isfinite(h)]
        if (
            len(counts) == 2
            and all(n == 1 and residual <= RING_MAX_RESIDUAL for n, residual in counts)
            and abs(self.scale.cubes(first.level, held[1] - held[0])) <= _REREAD_AGREE_CUBES
        ):
            self._pending_steps.append(replace(
                first, t_decided_s=now_s, delta_counts=held[1],
                after_counts=first.before_counts + held[1], revises=True,
            ))
        elif now_s + _REREAD_EVERY_S <= first.t_settled_s + _REREAD_UNTIL_S:
            self._look_again(step, Look(first, until_calm=False, reread=True),
                             now_s + _REREAD_EVERY_S)

    def _calm_look(self, step: LoadStep, first: LoadStep) -> bool:
        """Whether a step waiting for calm is decided now (else left, or looked at later)."""
        now_s = step.t_decided_s
        doubted = self._levels[step.level].doubted
        if (
            first not in doubted
            or not self._fast_step_trusted(first, shaken_too=False)
            or not self._still_holds(step)
        ):
            # The settled view counted it already; or hands, a lift, steps on
            # many plates, or the plate went back: the settled view decides.
            return False
        if self._plates_calm(first, now_s):
            doubted.remove(first)
            return True
        if now_s + CALM_LOOK_EVERY_S <= first.t_settled_s + CALM_LOOK_UNTIL_S:
            self._look_again(step, Look(first, until_calm=True), now_s + CALM_LOOK_EVERY_S)
        return False

    def _note_slide(self, step: LoadStep) -> None:
        """Show a fast step to the slide signs as it is decided (``slides.SlideSigns``)."""
        handled_since = np.inf if self._tower_open else self.openings.last_handled_t
        self.slide_signs.note_step(
            step, self.scale.cubes(step.level, step.delta_counts), FAST_MAX_RESIDUAL,
            handled_since,
        )

    def _check_slides(self, now_s: float) -> None:
        """Count the cubes seen leaving a plate that were heard falling below it by ``now_s``."""
        for fall in self.slide_signs.due(now_s, self.impact_delay_s):
            t0, t1 = SlideSigns.strike_window(fall)
            falling = [imp for imp in self._impacts if t0 <= imp.t_s <= t1]
            # Loudest on the plate itself counts too: before the ear has
            # learnt the tower, the plate below's crosstalk can be louder there.
            if any(top <= fall.level for top in self._levels_of(falling)):
                self.slide_signs.count_slide(fall)
                self.stats.slides_seen += 1

    def _ringing(self, step: LoadStep) -> tuple[bool, bool]:
        """Whether the previous fast step on this level was recent, and a landing.

        Not recent once the plate lay still after it (:meth:`_rang_out`): a
        plate's ring dies in well under a second on most towers, and a quick
        series' next cube on a plate that was still is read as cleanly as
        any. Unless cubes were seen sliding on (a cube resting a moment
        leaves the plate as still), the plate was read lower lately (a
        hand), or the step before was no landing but the plate reseated as
        the tower was closed (``_RESEATED_S``).
        """
        memory = self._levels[step.level]
        last, memory.last_fast = memory.last_fast, (step.t_decided_s, False)
        if self.scale.cubes(step.level, step.delta_counts) < -_SANK_CUBES:
            memory.sank_t = step.t_decided_s
        if last is None or step.t_settled_s - last[0] >= RING_GUARD_S:
            return False, False
        if (
            not self.slide_signs.slides_seen
            and step.t_settled_s - memory.sank_t >= RING_GUARD_S
            and (last[1] or step.t_before_s - self.openings.last_handled_t >= _RESEATED_S)
            and self._rang_out(step, last[0])
        ):
            return False, False
        return True, last[1]

    def _rang_out(self, step: LoadStep, since_s: float) -> bool:
        """Whether the plate lay still a while between ``since_s`` and the step: its ring had died.

        Some ``_RANG_OUT_S`` (at least ``_RANG_OUT_READINGS`` readings) of it,
        ending up to ``_RANG_OUT_LOOKBACK_S`` before the step (the next cube's
        strikes may jolt the plate before its rise), stayed within
        ``_RANG_OUT_CUBES`` of a cube.
        """
        unit = self.scale.unit(step.level)
        if unit is None:
            return False
        history = self.load_history
        end = step.t_before_s
        while end - _RANG_OUT_S >= since_s and end >= step.t_before_s - _RANG_OUT_LOOKBACK_S:
            t0 = end - _RANG_OUT_S
            if history.fresh_readings(step.level, t0, end) >= _RANG_OUT_READINGS:
                lo, hi = history.extent(step.level, t0, end)
                if hi - lo <= _RANG_OUT_CUBES * abs(unit):
                    return True
            end -= _RANG_OUT_EVERY_S
        return False

    def _rang_then_landed(self, step: LoadStep, n: int, residual: float) -> bool:
        """Whether a clean cube came on a plate whose last fast reads were its ring.

        A plate ringing slowly (8-12 Hz, for up to a second) after a landing
        is read in part-cube steps that are not landings; the guard after
        them is for a hand, which also moves the plate down. A clean step of
        one cube, heard landing there, on a plate no fast step read lower
        within the guard, is the next cube.
        """
        memory = self._levels[step.level]
        if n != 1 or residual > RING_MAX_RESIDUAL or step.busy_levels:
            return False
        if step.t_settled_s - memory.sank_t < RING_GUARD_S:
            return False
        return self._heard_here(step) and self._heard_a_drop(step)

    def _step_event(self, step: LoadStep, now_s: float) -> list[Event]:
        out = self._thrown_onto_the_top(step) + self._fast_step_event(step, now_s)
        if any(isinstance(e, Landing) and e.floor == step.level for e in out):
            self._levels[step.level].last_fast = (step.t_decided_s, True)
        return out

    def _left_while_waiting(self, step: LoadStep) -> bool:
        """Whether ``step`` takes away a cube whose landing waits to see it stay.

        Where cubes slide on, a landing waits (:meth:`_slides_on`), so the
        plate does not yet account for the cube when it leaves: its fall
        would vote the cell wired the other way, and be reported as a
        landing (model J: a gentle throw's cube that rested on four plates
        in turn, each fall a landing).
        """
        rise = self._levels[step.level].waiting
        return (
            rise is not None
            and rise.delta_counts * step.delta_counts < 0
            and abs(rise.delta_counts + step.delta_counts)
            <= FAST_MAX_RESIDUAL * abs(rise.delta_counts)
            and step.t_before_s - rise.t_settled_s <= SLID_WITHIN_S
        )

    def _fast_step_event(self, step: LoadStep, now_s: float) -> list[Event]:
        memory = self._levels[step.level]
        step = self._joined_with_part(step)
        previous = memory.last_fast
        recent, after_landing = self._ringing(step)
        if recent and not step.revises:
            n, residual = self.scale.count(step.level, step.delta_counts)
            if not after_landing and self._rang_then_landed(step, n, residual):
                after_landing = True
            if not after_landing or n <= 0 or residual > RING_MAX_RESIDUAL:
                # Window means of a plate ringing after a landing wander by
                # a good part of a cube, and a plate that just moved without
                # a cube is under a hand: left to the settled view.
                self.stats.steps_in_disturbance += 1
                self._doubt(step, remeasure=after_landing and n > 0)
                memory.part = (step, previous)
                return []
        # In a closed tower a lone, clean step is almost always a cube
        # arriving: it votes on the sign of this level's cell. Only a step
        # of whole cubes (either way) votes: a plate jolted by a landing
        # next door moves by part of one, either way. A loss the plate can
        # account for (it holds that many cubes) does not: cubes slide on
        # into the hole, or are knocked down (model B: with its cell's
        # votes even, one that slid on turned the cell around and was
        # reported as a landing, 20 false landings on towers 1-16).
        n, residual = self.scale.count(step.level, step.delta_counts)
        if (
            n != 0 and residual <= FAST_MAX_RESIDUAL
            and not 0 < -n <= self.cubes_on[step.level]
            and not self._left_while_waiting(step)
        ):
            self.scale.learn_sign(step.level, step.delta_counts, cubes_added=True)
            n, residual = self.scale.count(step.level, step.delta_counts)
        if n == 1 and self.scale.unit(step.level) is None:
            # A level's first cubes in a quick series may settle together.
            n = self._cubes_heard_arriving(step, step.delta_counts)
        if n == 0:
            self.stats.steps_below_one_cube += 1
            memory.part = (step, previous)
            return []
        other = self.scale.other_kind_residual(step.level, step.delta_counts)
        other_kind = residual > FAST_MAX_RESIDUAL and abs(n) <= 2 and other <= _KIND_MAX_RESIDUAL
        if other_kind:
            # One cube of the other kind, in a game that mixes two: as clean
            # as one of this level's own (its size is not learnt from it).
            n, residual = (1 if n > 0 else -1), other
        if residual > FAST_MAX_RESIDUAL:
            # Not a clean whole number of cubes: a hand or the table moved
            # the plate, or it was read while still swinging. The settled
            # view (or the fast view's second look) will tell once all is still.
            self.stats.steps_in_disturbance += 1
            self._doubt(step, remeasure=True)
            memory.part = (step, previous)
            if n == 1 and not step.revises and not other_kind:
                self._look_again(step, Look(step, until_calm=False, reread=True),
                                 step.t_decided_s + _REREAD_EVERY_S)
            return []
        parts: list[tuple[LoadStep, int]] = []
        if n >= 2:
            # Two cubes settling together are rare; a window riding one
            # half-wave of a slowly ringing plate looks the same. Unless each
            # cube was heard arriving on its own and the step is clean, the
            # settled view counts them (timed by this step).
            if residual <= RING_MAX_RESIDUAL:
                parts = self._heard_arrivals(step, n)
            if not parts:
                self.stats.steps_in_disturbance += 1
                self._doubt(step, remeasure=True)
                return []
        # Confidence from how well the step matches whole cubes: a clean
        # step is within 0.1 cube; at 0.5 it is a coin toss between n and n+1.
        confidence = count_confidence(residual)
        if not self.scale.known:
            confidence = min(confidence, 0.8)
        self._recent_steps.append((step, n))
        while self._recent_steps and (
            self._recent_steps[0][0].t_settled_s < step.t_settled_s - self.knock_window_s
        ):
            self._recent_steps.popleft()
        if parts:
            return self._arrivals(parts, confidence, now_s)
        if n > 0:
            return self._landings(step, n, confidence, now_s, learn=not other_kind)
        knocked = self.openings.exposed_level != step.level
        if knocked:
            # A cube leaves a closed level only when knocked down, and a
            # finger pressing the plate from below looks the same for a
            # moment: the settled view decides (timed by this step).
            self.stats.steps_in_disturbance += 1
            self._doubt(step)
            return []
        if not other_kind:
            self.scale.learn(step.level, step.delta_counts, n)
        self.cubes_on[step.level] = max(0, self.cubes_on[step.level] + n)
        self._account_fast(step)
        self.openings.note_taken(step.level, self._removal_time(step))
        return [
            Removal(
                t=self._removal_time(step),
                t_decided=now_s,
                floor=step.level,
                cubes=-n,
                confidence=confidence,
                knocked=knocked,
            )
        ]

    def _joined_with_part(self, step: LoadStep) -> LoadStep:
        """The step joined with the part of a cube just before it, when together they are whole.

        A plate ringing from one landing when the next cube arrives can be
        read at a window mean halfway: the fast view then sees the arrival
        as two steps of about half a cube. The first was left for its
        measure; the two together, a whole cube, are the arrival, judged as
        if the first had not been seen.
        """
        memory = self._levels[step.level]
        if memory.part is None or step.revises:
            return step
        part, before_part = memory.part
        alone_n, alone_residual = self.scale.count(step.level, step.delta_counts)
        if (
            step.t_before_s - part.t_settled_s > _PART_JOIN_S
            or (alone_n != 0 and alone_residual <= RING_MAX_RESIDUAL)
        ):
            return step
        delta = part.delta_counts + step.delta_counts
        n, residual = self.scale.count(step.level, delta)
        if n < 1 or residual > RING_MAX_RESIDUAL:
            return step
        if part in memory.doubted:
            memory.doubted.remove(part)
        if memory.remeasurable is part:
            memory.remeasurable = None
        memory.part = None
        memory.last_fast = before_part
        return replace(
            step,
            t_before_s=part.t_before_s,
            delta_counts=delta,
            before_counts=part.before_counts,
            busy_levels=max(part.busy_levels, step.busy_levels),
            busy_mask=part.busy_mask | step.busy_mask,
        )

    def _remeasure_part(self, step: LoadStep) -> None:
        """Take a revision of the part of a cube kept to be joined (``memory.part``) as its measure.

        A cube bouncing as it lands loads its plate in parts: a window
        catches part of it, the window's level is measured again once
        sure, and the rest arrives as the next step. Joined with the
        first measure, the two came to more than a cube (model K's quick
        series: a cube read as 0.42 then 0.78 of one, the part measured
        again 0.26) and the landing was left to the settled view.
        """
        memory = self._levels[step.level]
        if memory.part is None:
            return
        part, before_part = memory.part
        if part.t_before_s != step.t_before_s or part.revises:
            return
        memory.part = (
            replace(part, t_settled_s=step.t_settled_s, delta_counts=step.delta_counts,
                    after_counts=step.after_counts),
            before_part,
        )

    def _take_revised(self, step: LoadStep) -> LoadStep | None:
        """The step a revision measures again, if it was doubted for its measure only."""
        memory = self._levels[step.level]
        first, memory.remeasurable = memory.remeasurable, None
        doubted = memory.doubted
        if first is None or first.t_before_s != step.t_before_s or first not in doubted:
            return None
        doubted.remove(first)
        return first
