"""The settled view: a plate's change counted once all is still.

Each settled change is compared with the load the events so far account
for: what the fast view counted is absorbed, the rest is landings (split
by their arrivals), removals (by hand, grab by grab, or knocked down), a
top module found lifted, or hands at work. Slow drift of accounted levels
is followed (zero tracking).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from dsp.detect.events import Event, Landing, Removal
from dsp.detect.fusion.base import BUSY_SEEN_LEAST, DEFAULT_WIDE_IMPACT_CHANNELS, FAST_MAX_RESIDUAL
from dsp.detect.fusion.fastview import (
    GRIP_BEFORE_LIFT_S,
    RING_MAX_RESIDUAL,
    FastView,
    count_confidence,
)
from dsp.detect.fusion.hands import THUMP_S
from dsp.detect.fusion.landings import GONE_SHARE
from dsp.detect.loadcell import LoadStep
from dsp.detect.removals import grabs
from dsp.detect.slides import STRIKE_S, may_slide_on
from dsp.detect.stops import LOAD_LAG_S
from dsp.detect.topmodule import (
    FELL_AFTER_S,
    LIFT_REACH_S,
    lifted_at,
    lifted_with_a_knock,
    taken_by_hand,
)
from dsp.detect.trust import (
    CUBE_STRIKES,
    cube_like,
    drop_loudness_db,
    loud_as_a_cube,
    swung_less_than,
)

# Why 6: a share of a plate's size tells that it was learnt from several
# cubes only while the tower is not shaken as a whole; a hand steadying it
# (model C's noisy rooms) makes six or all seven other plates restless, and
# moved one by a third of its size with its touch heard there: 6 false
# landings over 64 sessions, and no landing lost (quick series had fewer
# plates restless).
_SEVERAL_BUSY_LEVELS = 6
# Why 1 s: on a tower whose plates are always restless, a share of a size
# tells only from a plate that went from still to still as a cube's does
# (0.3-0.6 s); model C's knocks nudged plates that had crept for seconds.
_CRISP_STEP_S = 1.0
# Why two: there, the other plates' restlessness must be the falling cube's
# (struck on its way down, ``HandsJudge._unexplained_busy``); model J's top
# plate, holding a quarter or half of a cube that slid on, saw four to six
# restless plates no strike explained.
_SEVERAL_UNEXPLAINED = 2
# Why a sixth: two cubes of one kind read within a few percent on a still
# plate; a cube sliding on leaves a different share each time.
_SHARE_AGAIN = 1 / 6
# Why 1.25: one cube measured twice (the fast view's step while the plate
# rang, then once it was still) agrees within a few percent; a quarter
# leaves room for a step read early in a quick series.
_LEFT_OVER_AGREE = 1.25
# Why 0.3 cube: slower changes than this between two settled views are drift
# or creep (followed, like a scale's zero tracking); faster ones are cubes.
_DRIFT_FOLLOW_CUBES = 0.3
# Why 0.6: cells taken for a matched set agree within ``cubes._MATCHED_SPREAD``
# (1.35), so one of them reads its cube as 0.74-1.35 of the borrowed size; a
# first gain under 0.6 of it, or over 1 / 0.6, is a cell of another kind.
_UNMATCHED_CUBES = 0.6
# Why a quarter: bar cells of one kind differ by tens of percent, not by a
# factor of four; under a quarter of the borrowed size, a plate's first gain
# was a neighbour's cube jolting the stacked modules or a hand (all 13 such
# first "cubes" on the cross-check towers were false landings: 12 of model
# C's, 1 of model E's; of the 6 between a quarter and 0.45, 3 were cubes).
_UNMATCHED_FLOOR = 0.25
# Why 1.5 s before and 0.5 s after: a knocked cube leaves its plate 20-250
# ms after the strike that knocked it, and the settled view's step begins
# at its last still window before that, up to a second earlier on a plate
# still ringing from the cube before.
_KNOCK_HEARD_BEFORE_S = 1.5
_KNOCK_HEARD_AFTER_S = 0.5
# Why 3: three or more cubes arriving on one plate at once, and neither seen
# nor heard arriving one by one, do not happen in play (cubes are thrown one
# at a time; a knock-down adds one more); a level whose first cube was
# learnt from a hand's touch reads every later cube as several.
_MANY_CUBES = 3
# Why 1.5 s: cubes that came "at once" came within one settling; a plate
# kept moving for seconds by a quick series (model B: 3-5 s) may gain three
# cubes in one settled step, and forgetting a size two landings agreed on
# then taught it three (model B towers 9-16: 3 landings; a size from one
# landing, or two that disagree, is still forgotten: model E's cube counts).
_AT_ONCE_S = 1.5
# Why 1.5 s: nobody opens the tower while a throw is under way; a cube lost
# from the top plate as a cube was heard landing (model B's cubes landing on
# the top plate, read for a moment as one leaving) is no hand's.
_TOP_THROWN_S = 1.5
# Why a quarter (at least one): a long game piles 10-20 cubes on the top
# plate, and a scoop of them is read a cube or two off the count of
# landings (two kinds of cube, model E's 30-minute games: 17 read as 18).
_TOP_COUNT_SLACK = 4
# Why 4: a plate's count of landings can be a cube short (a missed one);
# on a pile that is a quarter of a cube per cube at most, on one or two
# cubes a removal measured over the count is as likely a landing missed
# (model C's 30-minute games: capped from one cube on, 5 removals came
# out wrong; from four on, one. Model E's: 136 -> 145 of 210 right).
_PILE_CUBES = 4
# Why 0.1 s: a still window that ends this long after a cube came to rest
# began after it (a window across the step is never still).
_SETTLED_AFTER_S = 0.1
# Why 10: a plate's first change that no strike came with and that is
# under ten times the noise of one reading is drift, not its first cube
# (model C tower 16: 25 counts, six times the noise, taken for a cube
# before anything was thrown, and every cube after it read as 35). A cube
# steps by 50-1,000 times the noise on our towers and by 5 at the very
# least on the cross-check ones (0.25 g against 0.05 g of noise), and a
# cube that small is heard.
_FIRST_CUBE_NOISES = 10.0
# Why 0.6 s, and back within 0.3 of the gain (session 34): in a tower whose
# cubes were seen to rest a moment on a plate and go on (``SlideSigns.wary``),
# the fast view waits for its landings' cubes to stay (``_SLIDE_HOLD_S``);
# the settled view did not, and a plate still for 0.3 s under a cube that
# rolled on to the hole then had it reported (model J: cubes roll 0.03-0.25
# s on a plate, some teeter 0.6 s more; 121 and 123 landings followed by a
# knock-down removal from the same plate within 1.5 s). Its rises now wait
# until the plate has held the cube 0.6 s from falling still, and are
# dropped if the plate went back meanwhile (a fall of its own seen, or the
# readings back). Model J towers 1-8 / 9-16: false landings 191 -> 181 and
# 197 -> 172 (with ``LandingJudge._gone_again``); 0.9 s took 20 more and
# doubled the latency (p95 0.66 -> 1.35 s).
_SETTLED_HOLD_S = 0.6
# Why 0.45 s: the session's first landings wait less (as ``_FIRST_HOLD_S``
# of the fast view).
_FIRST_SETTLED_HOLD_S = 0.45
# Why 0.3 cube: a squeeze is no whole number of cubes, a cube resting is;
# a rise that far from whole, with no strike at all, waits even before the
# tower showed a grip. Model N: 4 false landings fewer of 24, one right
# landing fewer; on the other thirteen models a few unheard cubes waited
# (model C's p95 latency on towers 1-8 0.43 -> 0.46 s), none was lost.
_GRIP_UNCLEAN = 0.3
# Why 0.3 of a landing's swing (session 46): a change no strike came with,
# on a plate that hardly swung, is a hand's squeeze more than a cube, and
# waits as well before the tower showed a grip. Unheard rises that were
# cubes (model F's, the top plate's gentle drops) swung 0.55 of their
# plate's usual landing swing or more (5th percentile of 60); the grips
# of models N and L 0.04-0.1 (medians), 0.55 at their 95th percentile.
_GRIP_SWING = 0.3
# Why a twentieth of a landing's swing: over the unheard rises of models
# A-AJ that reached the settled view (2,691), 4 of 585 cubes rang their
# plate past its new load by less than that (the 5th percentile is a
# quarter of a cube), 119 of 271 that were no cube did not (model AJ's
# hands steadying the tower, 60; N's grips, 21; U, B, S, J, L).
_PRESS_OVERSHOOT = 0.05
# Why 1.5 s: a plate that rubs the wall holds part of a landing's load by
# friction and lets go of it 0.3-1.5 s after the cube came to rest (model
# AG's "rubbing plate", 30-60 % held): a clean rise no strike came with and
# under which the plate hardly swung (``_GRIP_SWING``; a cube arriving,
# heard or not, swings it). Told as a cube, it was a false landing after
# every landing there (AG: 24 of its 32 false landings).
_SHOWN_LATE_S = 1.5
# Why 3 s, and back within a quarter of the press (half a cube at most):
# a hand that pressed a plate lets go within a second or two, and the
# plate comes back to where it stood; one a cube heavier or lighter than
# that gained or lost a cube meanwhile. Only a press on a plate with a
# size, or of two cubes or more: a plate with none may have its sign from
# a hand, and its "press" of one cube be a cube leaving. Over A-U (session
# 52): 7 landings more, 6 false fewer, none lost; 10 s the same. Or one
# going the way cubes weigh on every other plate that knows its sign
# (session 68, model AJ: a hand on two plates with no cube yet; 37 models
# +20 right, -3 false).
_LET_GO_WITHIN_S = 3.0
_LET_GO_SHARE = 0.25
_LET_GO_UNSIZED_CUBES = 2
_LET_GO_CUBE_SHARE = 0.5
# Why a second after the close, and 0.3 cube off whole ones: the hands that
# held the tower while its modules were off (gripping the floors below the
# lift) let go 0.1-0.4 s after setting them back (model AK), and their
# press leaves the plate by what it pressed, no whole cube. Of the
# cross-check models' knocked-down removals within 1.5 s after a close,
# read 0.3 cube or more off whole ones, 44 were hands and none a cube.
_CLOSE_LET_GO_S = 1.0
_CLOSE_LET_GO_RESIDUAL = 0.3


# Why 0.1 s: a cell whose converter stops answering when its plate is
# struck (a cracked joint) shows it from the next reading on, a few
# readings after the strike even at 10 a second.
_SILENT_AFTER_STRIKE_S = 0.1
# Why 0.3 s: a cube passing a hole edge strikes the plates below within a
# module's fall or two (0.09-0.14 s from rest, less when falling).
_PASSED_ON_S = 0.3


class SettledView(FastView):
    """Settled-view decisions (see the module docstring)."""

    def add_settled_step(self, step: LoadStep) -> list[Event]:
        """A change seen by the settled view: absorbed if already accounted for."""
        out = self._thrown_onto_the_top(step)
        waiting = [w for w in self._settled_waiting if w.level == step.level]
        for w in waiting:
            self._settled_waiting.remove(w)
            if self._went_again(w, step):
                # The cube rested a moment and slid on, or a hand let go:
                # neither is a cube's.
                self.accounted[step.level] = step.after_counts
                if not self._pressed_unheard(w):
                    self.slide_signs.count_slide()
                return out
            out += self._settled_step(replace(w, t_decided_s=step.t_decided_s))
        due = -np.inf
        if self._waits_to_stay(step):
            due = step.t_settled_s + self._stay_hold_s()
        if (wait := self._hands_wait_s(step)) is not None:
            due = max(due, step.t_settled_s + wait)
        if np.isfinite(due):
            self._settled_waiting.append(replace(step, t_decided_s=due))
            return out
        return out + self._settled_step(step)

    def _waits_to_stay(self, step: LoadStep) -> bool:
        """Whether a settled rise waits until its plate has held the cube a while.

        Not on the ground floor, whose cube has no hole to slide into.
        """
        return (
            self.slide_signs.wary
            and may_slide_on(step.level)
            and not self._tower_open
            and np.isfinite(self.accounted[step.level])
            and self.scale.cubes(step.level, step.after_counts - self.accounted[step.level]) >= 0.5
            and step.t_decided_s < step.t_settled_s + self._stay_hold_s()
        )

    def _stay_hold_s(self) -> float:
        """How long a settled rise that waits to see its cube stay waits, from its settling."""
        return _FIRST_SETTLED_HOLD_S if self.slide_signs.first_landings else _SETTLED_HOLD_S

    def _hands_wait_s(self, step: LoadStep) -> float | None:
        """How long after it settled a change with no strike at all waits to be a hand's.

        ``None`` when it does not wait. Once the tower has shown it: an
        unheard rise reported as a landing, then modules lifted within
        ``GRIP_BEFORE_LIFT_S`` (hands gripping the tower squeeze its plates
        just before they lift it). Before that, only a change far from whole
        cubes (``_GRIP_UNCLEAN``) or one a hand's press would make
        (:meth:`_pressed_unheard`). A press, a gain of a plate whose cell's
        sign is known, waits ``_LET_GO_WITHIN_S``: the hand may let go any
        time within it, and the plate is back where it was (a loss, or a
        change on a plate whose sign a hand may have taught, waiting that
        long would meet the next cubes' strikes).
        """
        if (
            self._tower_open
            or not self._piezo_present(step.t_before_s)
            or self._drop_impacts(step)
        ):
            return None
        # Any change, not only a cube's worth: a squeeze read as half a cube
        # is counted as one (its confidence low), and waits as well.
        pressed = self._pressed_unheard(step)
        if not (pressed or self._grips_seen() or self._unclean_rise(step)):
            return None
        wait = (
            _LET_GO_WITHIN_S
            if pressed
            and self.scale.knows_sign(step.level)
            and self.scale.cubes(step.level, step.delta_counts) > 0
            else GRIP_BEFORE_LIFT_S
        )
        return wait if step.t_decided_s < step.t_settled_s + wait else None

    def _pressed_unheard(self, step: LoadStep) -> bool:
        """Whether a change came with no strike at all, its plate hardly swinging: a hand's.

        Hardly swinging: under ``_GRIP_SWING`` of its landings' swing, or
        never past the loads it moved between by ``_PRESS_OVERSHOOT`` of
        that swing (a press of several cubes moves the plate that far, but
        smoothly; a cube's blow rings it past its new load).
        """
        if not self._piezo_present(step.t_before_s) or self._drop_impacts(step):
            return False
        return self._swung_little(step, _GRIP_SWING) or self._rose_smoothly(step)

    def _rose_smoothly(self, step: LoadStep) -> bool:
        """Whether the plate moved from its old load to its new one without ringing past either."""
        unit = self.scale.unit(step.level)
        if unit is None:
            return False
        _, usual = self._swing_and_usual(step, unit)
        beyond = self.load_history.overshoot(
            step.level, step.t_before_s - LOAD_LAG_S, step.t_settled_s,
            step.before_counts, step.after_counts,
        )
        return bool(
            np.isfinite(usual) and np.isfinite(beyond) and beyond < _PRESS_OVERSHOOT * usual
        )

    def _shown_late(self, step: LoadStep, delta: float) -> bool:
        """Whether a rise is the plate's last landing's load, shown late (``_SHOWN_LATE_S``).

        It began within ``_SHOWN_LATE_S`` after a cube came to rest on the
        plate, no strike standing out on the plate (``cube_like``: not the
        talk of a noisy room, heard alike on every disc) since, and the plate
        hardly swung under it, by its own landings' swing or, before it has
        any, the tower's.
        """
        level = step.level
        landed = self._levels[level].landed_t
        unit = self.scale.unit(level)
        if (
            unit is None
            or self._tower_open
            or not 0.0 < step.t_before_s - landed <= _SHOWN_LATE_S
            or not self.scale.cubes(level, delta) > 0
            or not self._piezo_present(step.t_before_s)
            or any(landed < imp.t_s <= step.t_settled_s and imp.impact.loudest == level
                   and cube_like(imp) for imp in self._impacts)
        ):
            return False
        swing, usual = self._swing_and_usual(step, unit)
        if not np.isfinite(usual):
            usual = self._usual_swing(level, unit, pooled_only=True)
        return swung_less_than(swing, usual, _GRIP_SWING)

    def _unclean_rise(self, step: LoadStep) -> bool:
        """Whether a settled change is far from a whole number of cubes (``_GRIP_UNCLEAN``)."""
        before = self.accounted[step.level]
        if not np.isfinite(before) or self.scale.unit(step.level) is None:
            return False
        _, residual = self.scale.count(step.level, step.after_counts - before)
        return residual >= _GRIP_UNCLEAN

    def _went_again(self, rise: LoadStep, step: LoadStep) -> bool:
        """Whether ``step`` brought the plate back to where it was before ``rise``."""
        before = self.accounted[rise.level]
        gained = rise.after_counts - before
        return bool(abs(step.after_counts - before) <= GONE_SHARE * abs(gained))

    def settled_waiting_due(self) -> float | None:
        """When the first settled rise waiting to see its cube stay is decided."""
        return min((w.t_decided_s for w in self._settled_waiting), default=None)

    def decide_settled_waiting(self, now_s: float) -> list[Event]:
        """Decide the settled rises whose wait is over by ``now_s``."""
        out: list[Event] = []
        for w in [w for w in self._settled_waiting if w.t_decided_s <= now_s]:
            self._settled_waiting.remove(w)
            if self._gone_again(w, w.t_decided_s):
                # Gone before it was decided: it slid on, or a hand let go
                # (accounted stays).
                if not self._pressed_unheard(w):
                    self.slide_signs.count_slide()
            else:
                out += self._settled_step(w)
        return out

    def _settled_step(self, step: LoadStep) -> list[Event]:
        level = step.level
        self._busy_seen.append(step.busy_levels)
        self.silent_cells.note_step(level)
        if level in self.openings.disconnected:
            return []
        if (
            not np.isfinite(self.accounted[level]) and self._reconnected[level]
            and np.isfinite(step.before_counts)
            and self._thrown_back(step, float(self._reconnected_t[level]))
        ):
            # Back on the tower, and a cube was heard thrown onto it after
            # the thump: the load before this change is the module's own.
            self.accounted[level] = step.before_counts
            self._before_lift[level] = np.nan
        if not np.isfinite(self.accounted[level]):
            if self._reconnected[level] or not np.isfinite(step.before_counts):
                # Back on the tower: its load is learnt anew, not counted
                # (but for cubes heard thrown back onto it since the set-down).
                told = self._thrown_back_unseen(level, step.after_counts, step.t_settled_s,
                                                step.t_decided_s)
                self.accounted[level] = step.after_counts
                return told
            # The stream's first change on this plate: from the empty tower
            # it began with (a cube that landed in its first second).
            self.accounted[level] = step.before_counts
        before = float(self.accounted[level])
        delta = step.after_counts - before
        if self.scale.unit(level) is None and abs(delta) < 0.5 * abs(step.delta_counts):
            # A plate with no size yet learns it from this step: the load
            # accounted for is stale (a hand moved the plate meanwhile, seen
            # by no step), and the step's own measure is the cube.
            before, delta = step.before_counts, step.delta_counts
        if not self._tower_open and not self.scale.knows_sign(level):
            # As in the fast view: in a closed tower a change can only be cubes arriving.
            self.scale.learn_sign(level, delta, cubes_added=True)
        # A change the fast view counted as one cube, measured again: what is
        # left over is that cube's, read short on a plate still moving, not
        # a sign that the level's first cube was two; unless it is a cube the
        # fast view saw earlier in the change and doubted.
        left_over = self._doubted_cube_left_over(step, delta)
        still = not self._fast_counted_one(step) or left_over
        # A plate's first cube is judged by the step itself where the plate
        # drifted since its load was last accounted for (model I's creeping
        # cells; model J: a step of eight times the noise, ten with the drift
        # before it, taught plate 1 a cube a twentieth of the others').
        first_change = min(abs(delta), abs(step.delta_counts))
        if (
            self.scale.unit(level) is None
            and first_change < _FIRST_CUBE_NOISES * step.noise_counts
            and not self._heard_a_drop(step)
        ):
            # A plate's first cube teaches its size for the session: a small
            # change that no strike came with (a drifting cell) is not one.
            self.accounted[level] = step.after_counts
            return []
        if self._no_first_cube(step, first_change):
            self.accounted[level] = step.after_counts
            self.stats.steps_in_disturbance += 1
            return []
        if self._jolted_by_a_neighbour(step, delta) or self._hand_let_go(step, delta):
            # The plate moved with a cube landing next to it, by a small part
            # of that cube (the tower's walls, not a cube of its own), or
            # came back as a hand that pressed it let go.
            self.accounted[level] = step.after_counts
            self.stats.steps_in_disturbance += 1
            return []
        if self._shown_late(step, delta):
            # The last landing's load, let go of by a plate held by friction.
            self.accounted[level] = step.after_counts
            self.stats.shown_late += 1
            return []
        learnt_late: list[Event] = []
        if still and not self._tower_open and not self._under_hands(step):
            learnt_late = self._learnt_from_several(step, delta, heard=left_over)
        n, residual = self.scale.count(level, delta)
        if (
            n < 0
            and not self._tower_open
            and self.cubes_on[level] == 0
            and self._levels[level].landings <= 1
        ):
            # Nothing on the plate to take away in a closed tower: the one
            # "cube" its sign was learnt from was a hand, and this is a cube.
            self.scale.relearn_sign(level, delta, cubes_added=True)
            n, residual = self.scale.count(level, delta)
        if self._size_from_a_drift(step, n):
            self.scale.forget(level)
            self.scale.relearn_sign(level, delta, cubes_added=True)
            n, residual = self.scale.count(level, delta)
        if n == 0 and self._unmatched_first_cube(step):
            self.scale.refuse_pool(level)
            n, residual = self.scale.count(level, delta)
        if n == 1 and self.scale.unit(level) is None:
            n = self._cubes_heard_arriving(step, delta)
        if n == 1 and not still and self._one_cube_measured(level, step.delta_counts):
            # The step itself is the one cube the fast view counted; the rest
            # of the change since the load last accounted for is the plate's
            # drift or a hand's press outstanding from before (model C's
            # noisy rooms: 0.56 of a cube, and the cube counted twice).
            n = 0
        self.accounted[level] = step.after_counts
        if n == 0:
            if not still:
                # Exactly the one cube the fast view counted: measured again, still.
                self.scale.revise_last(level, step.delta_counts)
            return self._at_rest(learnt_late)
        now_s = step.t_decided_s
        confidence = count_confidence(residual)
        if n == 1 and not self._tower_open and (drop := self._unclaimed_drop(step)):
            self.flat_discs.note(stood_out=any(cube_like(imp) for imp in drop))
        if n > 0 and self._under_hands(step):
            # Nobody throws while the tower is open or being opened or closed:
            # hands gripping it, the modules set back with a thump; nor is a
            # plate that moved with others, unheard, a cube's.
            self.stats.steps_in_disturbance += 1
            if not self._handled_during(step) and (
                n >= _LET_GO_UNSIZED_CUBES or self.scale.unit(level) is not None
                or self.scale.gains_like_the_others(level, step.delta_counts)
            ):
                self._levels[level].pressed = (step.t_settled_s, before, delta)
            return self._at_rest(learnt_late)
        if n > 0:
            self.stats.settled_landings += 1
            self._drop_waiting_looks(step)
            whole = replace(step, delta_counts=delta, before_counts=before)
            parts = []
            if n == 1 and residual > FAST_MAX_RESIDUAL and self._heard_a_drop(step):
                # Neither half a cube nor one, nor one and a half: perhaps one
                # of another kind (``CubeScale.kind_ratio``).
                self.scale.note_step(level, delta)
            if n >= 2:
                parts = self._doubted_arrivals(whole, n) or self._heard_arrivals(whole, n)
                if not parts and self._unmatched_first_cube(step):
                    # One cube heard, read as several of the borrowed size.
                    self.scale.refuse_pool(level)
                    n, residual = self.scale.count(level, delta)
                    confidence = count_confidence(residual)
                elif not parts and self._size_from_a_touch(step, n):
                    self.scale.forget(level)
                    n, residual = self.scale.count(level, delta)
                    confidence = count_confidence(residual)
                if not parts and n == 2 and self._heard_a_drop(step):
                    self.scale.note_step(level, delta)
                if not parts and n == 2 and self.scale.one_of_the_heavier(level, delta):
                    # One cube of the heavier kind on a plate that learnt
                    # the lighter: heard as one cube's drop, nothing says two.
                    n, residual = 1, 0.0
                    confidence = count_confidence(0.25)
                if not parts:
                    self._levels[level].doubles += int(n == 2)
                    self._levels[level].many += int(n >= _MANY_CUBES)
                if n < 1:
                    # Counted again once the level's own size was forgotten
                    # or refused (it borrows the matched cells' now), the
                    # change is no cube: a landing of none would be reported
                    # (model G, a bump on the table, session 26).
                    return self._at_rest(learnt_late)
            if parts:
                # The cubes were seen (by the doubted fast view) or heard
                # arriving one by one: separate landings, each timed by its
                # own arrival, sharing the settled view's measure.
                out = self._arrivals(parts, confidence * 0.9, now_s, settled=True)
                self.accounted[level] = step.after_counts
                return self._at_rest(learnt_late + out)
            # Timed, counted and learnt from like a fast-view landing: by the
            # cube's last bounce (reported once its plate fell quiet after
            # it), not by when the plate's load stopped ringing.
            if self._piezo_present(step.t_before_s) and not self._drop_impacts(step):
                self._unheard_rises.append(step.t_settled_s)
            return self._at_rest(
                learnt_late + self._landings(whole, n, confidence * 0.9, now_s, settled=True)
            )
        if (
            self._pressed_below_the_open_level(step) or self._left_unstruck(step)
            or self._let_go_after_close(step, residual)
        ):
            # Only the open level's cubes can be reached; nobody throws while
            # the tower is open, so none is knocked down either: a hand on
            # the open plate pressed the stacked modules under it. And a
            # closed level's cube is knocked down only by a cube heard
            # striking there or above.
            self.stats.steps_in_disturbance += 1
            return self._at_rest(learnt_late)
        held = self.cubes_on[level]
        if _PILE_CUBES <= held < -n <= held + held // _TOP_COUNT_SLACK:
            # No more cubes can leave a plate than lie there: a scoop of a
            # pile reads a cube or two over the landings counted on it
            # (two kinds of cube, the hand's last press).
            n = -held
        self.cubes_on[level] = max(0, self.cubes_on[level] + n)
        self.stats.settled_removals += 1
        t = step.t_before_s
        # The fast view saw the cubes leave; the settled view only confirms it.
        seen = self._take_doubted(level, step.t_before_s, np.inf, landing=False)
        if seen is not None:
            t = seen.t_before_s
        began = t
        presses = self._presses(step)
        t = self._removal_time(step, since_s=began, presses=presses)
        # Taken by hand if the level lay open when they left: the settled
        # view may decide only after the tower was closed again.
        knocked = level not in (self.openings.exposed_level, self.openings.exposed_at(t))
        lifted: list[Event] = []
        if knocked and self._top_taken_by_hand(level, t, -n, held, now_s):
            lifted, knocked = self._lift_top(t, now_s), False
            # The hands took the last of them by the time the plate was still.
            self.openings.note_taken(level, step.t_settled_s)
            lifted += self._closed_since_top_lift(t, now_s)
            presses = self._presses(step)  # the level lay open after all
        taken = (
            [(t, -n)] if knocked or n > -2
            else grabs(self.load_history, step, -n, began, t, presses)
        )
        if not knocked:
            self.openings.note_taken(level, max(at for at, _ in taken))
        return [
            *lifted,
            *(Removal(t=at, t_decided=now_s, floor=level, cubes=k,
                      confidence=confidence * (0.9 if knocked else 1.0), knocked=knocked)
              for at, k in taken),
        ]

    def _let_go_after_close(self, step: LoadStep, residual: float) -> bool:
        """Whether a closed plate's loss, no whole cubes, came as the hands let go after a close.

        ``residual``: how far the loss lies off whole cubes (over
        ``_CLOSE_LET_GO_RESIDUAL``); it began within ``_CLOSE_LET_GO_S``
        after the tower was last closed (or as the modules' thump shook it).
        """
        last = self.openings.last
        return (
            residual > _CLOSE_LET_GO_RESIDUAL
            and last is not None
            and np.isfinite(last.closed_s)
            and last.closed_s - THUMP_S <= step.t_before_s <= last.closed_s + _CLOSE_LET_GO_S
            and self.openings.exposed_at(step.t_settled_s) is None
        )

    def _pressed_below_the_open_level(self, step: LoadStep) -> bool:
        """Whether a plate lost load while the tower lay open at another level.

        Across all six cross-check models, every such loss reported as a
        knocked-down cube was false (74 on towers 1-16, 44 of them model F's,
        whose hands on the open plate shift the cells under it).
        """
        for t in (step.t_before_s, step.t_settled_s):
            exposed = self.openings.exposed_at(t)
            if exposed is not None and exposed != step.level:
                return True
        return False

    def _left_unstruck(self, step: LoadStep) -> bool:
        """Whether a closed level below the top lost load with no cube heard striking near it.

        A cube leaves a closed level only when a thrown cube knocks it down,
        and that cube is heard striking this plate or one above it (standing
        out on one plate, ``cube_like``). The top plate is left to the top
        module's test (``_top_taken_by_hand``); with no piezo stream nothing
        could be heard.
        """
        level = step.level
        if level == self.n_levels - 1 or not self._piezo_present(step.t_before_s):
            return False
        if self.openings.opening_of(
            level, step.t_before_s, step.t_settled_s
        ) is not None or self.openings.handled_within(step.t_before_s, step.t_settled_s):
            return False  # it lay open, or hands had the tower: the cubes may be taken
        near = [
            imp for imp in self._impacts
            if step.t_before_s - _KNOCK_HEARD_BEFORE_S <= imp.t_s
            <= step.t_settled_s + _KNOCK_HEARD_AFTER_S and cube_like(imp)
        ]
        return not any(top >= level for top in self._levels_of(near))

    def _hand_let_go(self, step: LoadStep, delta: float) -> bool:
        """Whether the step undoes the plate's last change taken for hands: they let go.

        Back the other way, to within ``_LET_GO_SHARE`` of that change of
        the load the plate held before it, within ``_LET_GO_WITHIN_S``. A
        hand's press read as hands, its release read alone looked like
        cubes taken (model U: a touch pressing a plate by four cubes for a
        second; its release, heard with the room's noise, re-taught the
        plate's size with the sign reversed, and every cube after it read
        as a removal).
        """
        memory = self._levels[step.level]
        if memory.pressed is None:
            return False
        pressed_s, was, by = memory.pressed
        if step.t_before_s - pressed_s > _LET_GO_WITHIN_S:
            memory.pressed = None
            return False
        off = _LET_GO_SHARE * abs(by)
        if (unit := self.scale.unit(step.level)) is not None:
            off = min(off, _LET_GO_CUBE_SHARE * abs(unit))
        if delta * by >= 0 or abs(delta) < _LET_GO_SHARE * abs(by) or (
            abs(step.after_counts - was) > off
        ):
            return False
        memory.pressed = None
        return True

    def _size_from_a_drift(self, step: LoadStep, n: int) -> bool:
        """Whether ``n`` cubes taken away show a size and sign learnt from a drift: this is a cube.

        Many more cubes than the plate holds, taken from a closed tower as
        a drop was heard, on a plate whose size rests on fewer than three
        landings: the step it learnt from was a jolt or drift a few times
        its noise (model C tower 16: a plate drifting by a tenth of a cube
        read every cube after as a removal of 9-21). Not while hands open
        or close the tower: a plate pressed while its module was off is
        let go as it is set back (model J).
        """
        return (
            n <= -_MANY_CUBES
            and -n > self.cubes_on[step.level] + 1
            and not self._handled_during(step)
            and self.scale.learnt_from_few(step.level)
            and self._heard_a_drop(step)
        )

    def _size_from_a_touch(self, step: LoadStep, n: int) -> bool:
        """Whether a still step of ``n`` cubes, not heard arriving apart, shows a touch's size.

        Many cubes at once, or two again and again: the plate's size was
        learnt from a hand's touch (or a jolt half a cube deep), when it
        rests on fewer than three landings; many at once twice with no
        single cube between tells it even of a size learnt from several
        such touches. Over a long settling (a quick series keeping the
        plate moving) only of a size not yet agreed on. Never of a size the
        other plates agree on (:meth:`CubeScale.agrees_elsewhere`): no hand
        weighs what their cubes do, and those are handfuls thrown together.
        """
        memory = self._levels[step.level]
        if self.scale.agrees_elsewhere(step.level):
            return False
        if step.t_settled_s - step.t_before_s > _AT_ONCE_S and not self.scale.size_unsure(
            step.level
        ):
            return False
        if n >= _MANY_CUBES and memory.many >= 1:
            return True
        return self.scale.learnt_from_few(step.level) and (
            n >= _MANY_CUBES or (n == 2 and memory.doubles >= 1)
        )

    def _one_cube_measured(self, level: int, delta_counts: float) -> bool:
        """Whether a step measures one clean whole cube (within 0.15 of one)."""
        n, residual = self.scale.count(level, delta_counts)
        return n == 1 and residual <= RING_MAX_RESIDUAL

    def _learnt_from_several(
        self, step: LoadStep, delta: float, *, heard: bool = False
    ) -> list[Event]:
        """The cubes the plate's size was learnt from, but one, if several.

        See ``CubeScale.learnt_from_several``. Only a step heard as a cube's
        drop on its plate (``heard``: known so already, from a fast step the
        change holds), with fewer than six other plates restless, tells; the
        size is then learnt again (from this step) and the cubes the first
        step held are counted on the plate, reported late (a landing of the
        others, timed by the first): where cubes are, told late, is better
        than not at all.
        """
        level = step.level
        m = self.scale.learnt_from_several(level, delta)
        if m < 2 or not (heard or self._heard_landing_here(step)):
            return []
        earlier: list[Event] = []
        if self._shaken_as_a_whole(step, m):
            shown = self._shown_again(step, m, delta)
            if shown is None:
                return []
            # The share read first was a cube landing too, told late.
            self.cubes_on[level] += 1
            self._levels[level].landings += 1
            earlier = [Landing(t=shown, t_decided=step.t_decided_s, floor=level, cubes=1,
                               confidence=0.7, source="load")]
        self._levels[level].shaken_share = None
        self.scale.forget(level)
        self.cubes_on[level] += m - 1
        self._levels[level].landings += m - 1
        self.stats.sizes_relearnt += 1
        at, self._levels[level].sized_at = self._levels[level].sized_at, None
        if at is None:
            return earlier
        return [Landing(t=at, t_decided=step.t_decided_s, floor=level, cubes=m - 1,
                        confidence=0.7, source="load"), *earlier]

    def _shown_again(self, step: LoadStep, several: int, delta: float) -> float | None:
        """When a share of ``several`` read on a shaken tower was read so before; None: never.

        Two cubes heard landing, each read as the same share of the plate's
        size within ``_SHARE_AGAIN``: the size was several cubes', however
        the tower shook (model N, whose plates all move with every strike:
        a cube and the one it knocked down settled together as the plate's
        first, and every cube after read as half of one). The first is
        remembered until then, with when it settled.
        """
        memory = self._levels[step.level]
        before, memory.shaken_share = memory.shaken_share, (several, delta, step.t_settled_s)
        if (
            before is not None
            and before[0] == several
            and before[1] * delta > 0
            and abs(before[1] - delta) <= _SHARE_AGAIN * abs(delta)
        ):
            return before[2]
        return None

    def _shaken_as_a_whole(self, step: LoadStep, several: int) -> bool:
        """Whether ``step``, read as a share of ``several`` cubes, came as the tower was shaken.

        Many plates restless, more than this tower's steps usually see; on a
        tower that always is, a step that was no cube's (not crisp), or a
        share of three or four (a cube that rested a moment and slid on
        leaves a quarter of a cube on a swinging plate, model J).
        """
        if step.busy_levels < _SEVERAL_BUSY_LEVELS:
            return False
        seen = sorted(self._busy_seen)
        if (
            len(seen) < BUSY_SEEN_LEAST
            or several > 2
            or self._unexplained_busy(step) > _SEVERAL_UNEXPLAINED
            or step.t_settled_s - step.t_before_s > _CRISP_STEP_S
        ):
            return True
        return step.busy_levels > seen[len(seen) // 2]

    def _fast_counted_one(self, step: LoadStep) -> bool:
        """Whether the fast view counted exactly one cube, and nothing else, during ``step``."""
        landed = self._levels[step.level].fast_landed
        singles = [t for t, m in landed if step.t_before_s <= t]
        return len(singles) == 1 and landed[-1][1] == 1

    def _doubted_cube_left_over(self, step: LoadStep, delta: float) -> bool:
        """Whether what the fast view left of ``step`` is a cube it saw earlier and doubted.

        Only on a plate whose size the fast view's one cube taught: a fast
        step of this plate within ``step``, doubted (other plates restless
        in a quick series), that measured what is left over, within
        ``_LEFT_OVER_AGREE``. Then the cube the fast view counted was the
        next drop's, perhaps several cubes, and not this one read short
        (model B's top plate: one cube doubted, then two that settled
        together taken for the plate's first, and every cube after read as
        half of one).
        """
        level = step.level
        if not self.scale.size_unsure(level) or not self.scale.cubes(level, delta) > 0:
            return False
        return any(
            step.t_before_s <= s.t_settled_s < step.t_settled_s
            and s.delta_counts * delta > 0
            and abs(s.delta_counts) <= _LEFT_OVER_AGREE * abs(delta)
            and abs(delta) <= _LEFT_OVER_AGREE * abs(s.delta_counts)
            and self._heard_near(s)
            for s in self._levels[level].doubted
        )

    def _unmatched_first_cube(self, step: LoadStep) -> bool:
        """Whether a plate's first gain, no size of the cube it borrows, is its own first cube.

        Mixed cells can look matched after a few landings by chance; a cell
        reading a cube as a third of theirs then sees its cubes as steps too
        small to count, one reading it as twice theirs sees two cubes in
        each. Heard striking this very plate, as loud as a cube, such a gain
        is the plate's first cube, as on a plate with no size at all
        (``_fast_step_trusted``); a plate's first cube learnt from two that
        came together is corrected by the next (``CubeScale.count``).

        Judged by the step's own measure: the change since the load was
        last accounted for may hold cubes that landed unseen before (a cell
        too noisy to show one until the other cells lent it their size).
        """
        if not self.scale.borrowed(step.level) or self._tower_open:
            return False
        x = self.scale.cubes(step.level, step.delta_counts)
        if not (_UNMATCHED_FLOOR <= x < _UNMATCHED_CUBES or x > 1.0 / _UNMATCHED_CUBES):
            return False
        return self._heard_landing_here(step)

    def track_settled_levels(
        self, levels: np.ndarray, times: np.ndarray, now_s: float
    ) -> list[Event]:
        """Follow slow drift of levels whose load is accounted for (zero tracking).

        ``times``: when each level was last seen still (the end of its last
        still window), NaN where never; ``now_s``: the stream time the
        fusion has reached (a level seen still later than that may hold a
        change whose step the fusion has not been given yet). Returns the
        removals of cubes that came and went unseen by the settled view
        (:meth:`_came_and_went`).
        """
        units = self.scale.units()
        out: list[Event] = []
        for level in range(self.n_levels):
            value = float(levels[level])
            if not np.isfinite(value) or level in self.openings.disconnected:
                continue
            if not np.isfinite(self.accounted[level]):
                if self._reconnected[level] and times[level] <= self._reconnected_t[level]:
                    # Still last before it was lifted: the module came back
                    # as it went, so that load stands until the plate is
                    # first still again, and cubes thrown onto it before
                    # then are looked for once it is (below).
                    self.accounted[level] = value
                    continue
                out.extend(self._thrown_back_unseen(level, value, float(times[level]), now_s))
                self.accounted[level] = value
                continue
            if np.isfinite(self._before_lift[level]) and times[level] > self._reconnected_t[level]:
                # First still since it came back, its load taken from before
                # the lift meanwhile: whole cubes over what was accounted
                # since were thrown back before it was still.
                self._before_lift[level] = self.accounted[level]
                told = self._thrown_back_unseen(level, value, float(times[level]), now_s)
                if told:
                    self.accounted[level] = value
                    out.extend(told)
                    continue
            if times[level] < self._levels[level].fast_accounted_t:
                # Still last before a cube the fast view has counted: that
                # level is not where the plate is now (followed, it would
                # take back most of a cube read a little short, and the
                # settled view would count the cube again).
                continue
            elif np.isfinite(units[level]) and abs(value - self.accounted[level]) < (
                _DRIFT_FOLLOW_CUBES * units[level]
            ):
                self.accounted[level] = value
            elif times[level] <= now_s and self._first_cube_left(level, value, float(times[level])):
                # The one cube this plate's size was learnt from is gone, and
                # the settled view never saw it come or go (nothing was still
                # meanwhile): a hand pressed the plate and let go, heard as
                # it touched. Its size is no cube's: every cube after it had
                # read as a fraction of one, too small to count.
                self.stats.hands_unlearnt += 1
                self.scale.forget(level)
                self.cubes_on[level] = 0
                self._levels[level].landings -= 1
                self._levels[level].fast_landed.clear()
                self.accounted[level] = value
            elif times[level] <= now_s and (
                left := self._came_and_went(level, value, float(times[level]), now_s)
            ) is not None:
                # A cube that came, stayed a moment and fell on below: the
                # tower's cubes slide on (``slides.SlideSigns``).
                self.stats.slid_unseen += 1
                self.slide_signs.count_slide()
                out.extend(self._settled_step(left))
        return out

    def _thrown_back_unseen(
        self, level: int, value: float, still_t: float, now_s: float
    ) -> list[Event]:
        """Cubes thrown back onto a plate set back before its channel first read it still.

        A module set back brings its plate's cubes back as they were (only
        the open level's are taken out), but its converter powers up and
        settles for up to 0.7 s (``_SET_DOWN_LOOKBACK_READINGS``): a cube
        thrown back at once lands before the plate's first still window,
        which would be its level, learnt anew. Whole cubes over the load
        accounted for before the lift, with a cube heard striking this very
        plate after the set-down's thump, came that way (model Z, whose
        cubes are thrown back 0.5-1 s after the close: over A-AB 7 landings
        more right, none false more; with no check of strikes below, 8 and
        one false, a cube missed on the plate before the lift).
        ``value``: the plate's load as first read still since it came back,
        by ``still_t`` (strikes after that are not this change's).
        """
        before = float(self._before_lift[level])
        self._before_lift[level] = np.nan
        set_down = float(self._reconnected_t[level])
        if (
            not self._reconnected[level] or not np.isfinite(before) or not np.isfinite(set_down)
            or self._tower_open or self.scale.unit(level) is None
            or not self.scale.knows_sign(level)
        ):
            return []
        n, residual = self.scale.count(level, value - before)
        if n < 1 or residual > FAST_MAX_RESIDUAL:
            return []
        # A module set back thumps; a converter that stopped answering was
        # often jolted by the very strike of the cube that came.
        struck_from = (
            set_down - _SILENT_AFTER_STRIKE_S if self._dropped_out[level] else set_down + THUMP_S
        )
        after = [imp for imp in self._impacts
                 if struck_from < imp.t_s <= still_t and cube_like(imp)]
        tops = self._levels_of(after)
        here = [imp.t_s for imp, top in zip(after, tops, strict=True) if top == level]
        if not here or not loud_as_a_cube(drop_loudness_db(after, level), self._heard_db):
            return []
        if len(here) < CUBE_STRIKES and any(
            here[-1] < imp.t_s <= here[-1] + _PASSED_ON_S and top < level
            for imp, top in zip(after, tops, strict=True)
        ):
            # Struck once, and below at once: a cube passed this plate's
            # hole edge on its way down (a cube missed here before the lift
            # is no cube thrown back); one that stays bounces here.
            return []
        step = LoadStep(
            level=level, t_before_s=struck_from, t_settled_s=still_t, t_decided_s=now_s,
            delta_counts=value - before, before_counts=before, after_counts=value,
        )
        self.stats.settled_landings += 1
        # Measured across a lift: the plate's cube is not learnt from it.
        return self._landings(step, n, count_confidence(residual) * 0.9, now_s, settled=True,
                              learn=False)

    def _came_and_went(
        self, level: int, value: float, value_t: float, now_s: float
    ) -> LoadStep | None:
        """The settled step of cubes the fast view counted landing that have left again.

        In towers whose cubes rest a moment and slide on (model B), a cube
        may settle, be counted by the fast view, and slide into the hole
        before the settled view saw its plate still: it sees no change, the
        fast view's loss was doubted (a closed level loses a cube only when
        knocked down), and the cube would stay counted. Once the plate is
        seen still, whole cubes under the load accounted for, after a
        doubted loss of as many that settled after the last landing there,
        with a cube's strike heard below the plate since
        (:meth:`_heard_falling_below`), the loss is that doubted step,
        judged as the settled view judges a knock-down. (A hand's press let
        go, or a knock, sounds on every disc alike and drops no cube: the
        fusion's guesses about them stay as they were.)
        """
        if self._tower_open or self.scale.unit(level) is None:
            return None
        memory = self._levels[level]
        if not value_t > memory.landed_t + _SETTLED_AFTER_S:
            return None
        n, residual = self.scale.count(level, value - float(self.accounted[level]))
        if n >= 0 or residual > FAST_MAX_RESIDUAL or -n > self.cubes_on[level]:
            return None

        def as_many(step: LoadStep) -> bool:
            k, r = self.scale.count(level, step.delta_counts)
            return k == n and r <= FAST_MAX_RESIDUAL

        lost = [
            s for s in memory.doubted
            if memory.landed_t < s.t_settled_s < value_t - _SETTLED_AFTER_S and as_many(s)
            and self._heard_falling_below(level, memory.landed_t, s.t_settled_s + STRIKE_S)
        ]
        if not lost:
            return None
        first = lost[0]
        before = float(self.accounted[level])
        return replace(
            first, t_decided_s=now_s, delta_counts=value - before, before_counts=before,
            after_counts=value,
        )

    def _heard_falling_below(self, level: int, since_s: float, until_s: float) -> bool:
        """Whether a cube's strike (one that stands out on its plate) was heard below ``level``."""
        struck = [imp for imp in self._impacts if since_s < imp.t_s <= until_s and cube_like(imp)]
        return any(top < level for top in self._levels_of(struck))

    def _first_cube_left(self, level: int, value: float, value_t: float) -> bool:
        """Whether the single cube counted on ``level`` left a closed tower unseen.

        ``value`` is the level's settled load, seen still until ``value_t``
        (the settled view is slower than the fast one: a value from before
        the cube came to rest says nothing of it); a cube leaves a closed
        tower's plate only when knocked down, which the settled view sees
        as a removal unless the cube came and went while the plate never
        stood still.
        """
        if self._tower_open or self.cubes_on[level] != 1 or self._levels[level].landings != 1:
            return False
        if not value_t > self._levels[level].landed_t + _SETTLED_AFTER_S:
            return False
        if not self.scale.learnt_from_few(level):
            return False
        x = self.scale.cubes(level, value - float(self.accounted[level]))
        return abs(x + 1.0) <= FAST_MAX_RESIDUAL

    def _top_taken_by_hand(
        self, level: int, t_s: float, cubes: int, held: int, now_s: float
    ) -> bool:
        """Whether ``cubes`` that left a closed tower's top plate at ``t_s`` left by hand.

        The plate held them (within a cube or a quarter of a pile: a scoop
        is counted less well than landings), no throw landed just before,
        and nothing was heard falling below it (``topmodule.taken_by_hand``):
        the top module is off.
        """
        if level != self.n_levels - 1 or self.openings.disconnected or held < 1:
            return False
        if cubes - held > max(1, held // _TOP_COUNT_SLACK):
            return False  # more than the plate held: no cubes' leaving
        if max(memory.landed_t for memory in self._levels) >= t_s - _TOP_THROWN_S:
            return False
        # Only strikes that stand out on one plate can be a knocked cube's:
        # hands reaching in and talk rumble on every disc alike.
        impacts = [imp for imp in self._impacts if cube_like(imp)]
        heard = list(zip((imp.t_s for imp in impacts), self._levels_of(impacts), strict=True))
        return taken_by_hand(heard, t_s, level, until_s=now_s)

    def _closed_since_top_lift(self, t_s: float, now_s: float) -> list[Event]:
        """The top module, found off only now for cubes taken at ``t_s``, set back since.

        The settled view may decide the cubes taken off the top plate after
        the module was set back: the first strike heard below the top plate
        after ``topmodule.FELL_AFTER_S`` (the thump, or a cube thrown since)
        closed it then.
        """
        later = [imp for imp in self._impacts if t_s + FELL_AFTER_S < imp.t_s <= now_s]
        below = [
            imp for imp, top in zip(later, self._levels_of(later), strict=True)
            if top < self.n_levels - 1 or len(imp.channels) >= DEFAULT_WIDE_IMPACT_CHANNELS
        ]
        if not below:
            return []
        by_a_cube = cube_like(below[0]) and len(below[0].channels) < DEFAULT_WIDE_IMPACT_CHANNELS
        return self.openings.close_top(
            self._set_down_at(below[0].t_s, by_a_cube=by_a_cube), now_s,
            handling=not cube_like(below[0]),
        )

    def _lift_top(self, t_s: float, now_s: float) -> list[Event]:
        """The top module was lifted before cubes left the top plate at ``t_s``."""
        since = max(memory.landed_t for memory in self._levels)
        hands = lifted_at([imp.t_s for imp in self._impacts if since < imp.t_s <= t_s], t_s)
        last = self.openings.last
        quiet = max(since, last.closed_s if last is not None else -np.inf)
        t_lift = lifted_with_a_knock(self._top_strike_t, hands, quiet, t_s,
                                     reach_s=self.openings.reach_s(LIFT_REACH_S))
        self.stats.top_lifts += 1
        return self.openings.lift_top(t_lift, now_s)
