"""Does this tower's cubes rest a moment on a plate and slide on? The signs, counted.

In some towers a cube that strikes a plate bounces, slides for a moment
with its whole weight on the plate, and then either stays or slides into
the hole (cross-check model B, docs/crosscheck.md: slides of 0.02-0.45 s).
There the fast view takes those moments for landings, and the plates they
left for knock-downs. These signs tell such a tower:

- a cube seen settling on a plate (a fast step of about one cube) and
  leaving it (as much back) at least ``RESTED_S`` (or, having come and
  gone like a cube, ``BRIEFLY_RESTED_S``) and at most ``SLID_WITHIN_S``
  after it settled, in a closed tower not handled for
  ``HANDLING_GUARD_S``, as a strike is heard below it (the fusion judges
  that once the impacts up to ``STRIKE_S`` after are known: :meth:`due`);
- a cube that bounced on a plate with no cube on it, swung it like a
  landing and went on: nothing to knock down. It counts half, as a
  neighbour's jolt can look like it (model C showed two in a session, none
  of the first kind).
- a cube the fast view counted that the settled view then found gone,
  with a strike heard below (``SettledView._came_and_went``): the same
  sign, seen once the plate was still again (model B: 18 and 4 false
  landings fewer on towers 9-16 and 1-8);
- a cube the fast view read on a plate whose second look at that rise
  (``LoadStep.revises``) finds the plate back where it was, with a strike
  heard below: the cube left before the plate was still, so no fall of
  its own was read (:meth:`_came_back`; model I, whose cubes dwell on the
  plates they pass: 25 and 20 false landings fewer on towers 1-8 and 9-16).

After ``WARY_AFTER`` slides seen, and for the session's first
``FIRST_HELD`` landings, the fusion lets landings wait until their
plate has held the cube a while; after ``SEEN`` (full) signs, also no
knock-down stop is inferred from a plate whose load came back. Signs count
while they are among the last ``SIGN_MEMORY`` cubes seen arriving on a
plate, and once that many came, only at ``SIGN_SHARE`` of them: a tower
whose cubes slide on shows one every few arrivals, while any tower shows
one now and then over an evening, from jolts and hands.
"""

from __future__ import annotations

from collections import deque
from dataclasses import replace

import numpy as np

from dsp.detect.loadcell import LoadStep

# Why 2: no session of ours (118) or of model A (64) reached it, one of model
# C's 64 did; 28 of model B's 32 did. One sign alone would have cost our
# noisy rooms 0.4 % of their landings for a quarter of model B's false ones.
SEEN = 2
# Why 1: waiting to see a landing's cube stay costs only time, where taking
# a tower for one whose cubes slide on costs the knock-down stops too. One
# sign came in 31 of model B's 32 sessions (at 20 s, two at 34 s), in 2 of
# 152 of the other models' and in none of 30 of ours.
WARY_AFTER = 1
# Why 3: in a tower whose cubes slide on, most plates a cube reaches it
# leaves again (model B: 60-87 %), so a slide comes within a few landings;
# three landings in a row that stayed after one sign say it was something
# else (a cube knocked off by the next throw of a quick series, a hand).
# Our evaluation's quick series show such signs: six cost them 15 ms of
# p95 latency (470 -> 485 ms), three 10 ms; model B kept 31 and 19 of its
# false landings off with six, 19 and 12 with three.
WARY_HOLDS = 3
# Why 3: a session's first landings come before any sign could, and in a
# tower whose cubes rest a moment on the plates they pass, the first cube
# thrown rested on a plate above its own and was told there (models B, I,
# J, R, S: 101 of 1,216 sessions' first landings, 67 of the second). The
# first three landings wait to see their cube stay, for less than a known
# sliding tower's (``FastView``/``SettledView`` ``_FIRST_*HOLD_S``): over
# models A-S false landings 1,001 -> 866, 16 right fewer, p95 latency
# 0.874 -> 0.877 s, median 0.11 -> 0.14 s; five: 843 (0.883 s, median
# 0.18 s). With the known tower's holds: two 878 (0.876 s), three 860
# (0.883 s), four 844 (0.887 s).
FIRST_HELD = 3
# Why 60 arrivals and 5 %: a tower whose cubes slide on shows a sign at
# 8-50 % of the cubes seen arriving on a plate (models B, I, J: 20-27 %,
# 8-13 %, 22-50 %; a cube that rests a moment on several plates arrives
# on each), so sixty hold five or more; towers whose cubes stay showed one
# at 1-2 % (model P's half-hour sessions: 18 slides and 25 bounces, about
# 2,400 arrivals), which over a whole evening added up to SEEN and made
# every landing after wait (latency median 0.1 -> 0.4 s). Until forty
# cubes arrived, SEEN signs are enough, as in a short session before.
SIGN_MEMORY = 60
SIGN_SHARE = 0.05
# Why 0.8 s: a sliding cube leaves its plate within half a second of settling.
SLID_WITHIN_S = 0.8
# Why the ground floor never waits to see its cube stay: its plate lies in
# the tower's base with no hole under it, so a cube resting there has
# nowhere to slide on to. Over models A-Y (session 54): 9 landings more
# right, 2 false fewer; latency over A-S median 0.141 -> 0.131 s, p95
# 0.874 -> 0.862 s; our evaluation unchanged.
GROUND_FLOOR = 0


def may_slide_on(level: int) -> bool:
    """Whether a cube resting on ``level`` has a hole under it to slide on into."""
    return level != GROUND_FLOOR


# Why 0.1 s: a plate that read a cube for less than that after its rise
# settled was jolted by a strike (a load cell reads an impact's spike as a
# rise and a fall 50-80 ms apart); a sliding cube rests longer (model B:
# 0.05-0.5 s, mostly over 0.1).
RESTED_S = 0.1
# Why 0.15 s: a cube sliding off a plate strikes the one below within a
# module's fall (0.09 s for 4 cm from rest, 0.14 s for two) of leaving it.
STRIKE_S = 0.15
# Why 0.1 s: a fall step is read from its first reading that moved, which
# can lag the cube leaving (and its strike below) by one conversion or so.
LOOKBACK_S = 0.1
# Why 2 s: hands lifting modules or setting them back press plates and let
# go, heard as they do.
HANDLING_GUARD_S = 2.0
# Why 64 and 16: the steps of the last few seconds are all that is ever paired.
_STEPS_KEPT = 64
_CHECKS_KEPT = 16
# Why these: a cube that rolls 30-250 ms on a plate before it drops into
# the hole (model J) rests there less than ``RESTED_S`` as often as not.
# Such a rest of ``BRIEFLY_RESTED_S`` or more is a sign when the cube came
# like one (its rise took more than one reading of 80 a second: it
# bounced) and left at once (within ``LEFT_WITHIN_S``: it dropped). A
# strike's jolt rises and falls within a reading; a hand lets go of a plate
# over several (model A's false signs of 50-100 ms all did one or the
# other; model J: 19 and 21 false landings fewer on towers 1-8 and 9-16).
BRIEFLY_RESTED_S = 0.05
ROSE_OVER_S = 0.025
LEFT_WITHIN_S = 0.05
# Why 0.6-1.6 cubes: where a cube rests decides how much of its weight its
# cell sees (the plate also rests on the rims of its opening: model J,
# 45-100 %), so a cube that rests a moment at the rim reads off the plate's
# size; the fall that matches its rise is what tells the slide. A hand's
# press (a third of a cube) or two cubes stay out.
ABOUT_ONE = (0.6, 1.6)
# Why these (session 68): how long a cube rests before it slides on is the
# tower's own (model B: up to 0.45 s; model AC's cubes tip into the hole
# 0.04-0.25 s after they lie down). Once ``DWELLS_KNOWN`` slides were
# timed, a landing waits the longest of the last ``DWELLS_KEPT`` and
# ``DWELL_MARGIN_S`` more (a fall is read a reading or two after the cube
# left), not less than ``DWELL_LEAST_S``: model AC's latency median 0.361
# -> 0.296 s; all models +9 right, +1 false. Timed from three slides,
# model B's first short ones made it tell cubes that then slid on (+6
# false; all models +3 right, +7 false).
DWELLS_KNOWN = 6
DWELLS_KEPT = 20
DWELL_MARGIN_S = 0.1
DWELL_LEAST_S = 0.15


def _left_at_once(rise: LoadStep, fall: LoadStep) -> bool:
    """Whether a cube that rested less than ``RESTED_S`` left like a cube, not a jolt.

    A jolt's spike rises within one reading; a hand lets go of a plate over
    several. A cube bounces a while before it rests, and leaves at once.
    """
    return (
        rise.t_settled_s - rise.t_before_s >= ROSE_OVER_S
        and fall.t_settled_s - fall.t_before_s <= LEFT_WITHIN_S
    )


class SlideSigns:
    """The signs seen so far that cubes here rest a moment on a plate and slide on.

    Parameters
    ----------
    first_held : int
        How many of the session's first landings wait to see their cube stay
        before any sign was seen (0: none).
    """

    def __init__(self, first_held: int = FIRST_HELD) -> None:
        self.first_held = int(first_held)
        self.slides_seen = 0
        self.bounced_on_empty = 0
        self._held_since_slide = 0
        self._landed = 0
        # Cubes seen arriving so far, and each sign still counted, with how
        # many had arrived when it came (True: a slide, False: a bounce on an
        # empty plate).
        self._arrivals = 0
        self._signs: deque[tuple[int, bool]] = deque()
        self._risen: dict[int, LoadStep] = {}
        self._seen: deque[tuple[int, float]] = deque(maxlen=_STEPS_KEPT)
        # Falls queued to be judged, each with how long its cube had rested;
        # those :meth:`due` gave last, by (level, settled time), for :meth:`count_slide`.
        self._checks: deque[tuple[LoadStep, float]] = deque(maxlen=_CHECKS_KEPT)
        self._rested_due: dict[tuple[int, float], float] = {}
        self._dwells: deque[float] = deque(maxlen=DWELLS_KEPT)

    @property
    def slides(self) -> bool:
        """Whether enough signs were seen (see the module's description).

        ``SEEN`` of them, and over a whole ``SIGN_MEMORY`` of arrivals at
        least ``SIGN_SHARE`` of those.
        """
        needed = max(SEEN, SIGN_SHARE * min(self._arrivals, SIGN_MEMORY))
        return 2 * self.slides_seen + self.bounced_on_empty >= 2 * needed

    @property
    def wary(self) -> bool:
        """Whether landings wait to see their cube stay: a cube was seen to slide on lately.

        Until the tower is known (:attr:`slides`), only for the next
        ``WARY_HOLDS`` landings that stayed after a cube was seen to slide
        on; and for the session's first landings (:attr:`first_landings`).
        """
        return self.first_landings or self._seen_sliding

    @property
    def first_landings(self) -> bool:
        """Whether landings wait only as the session's first (no sign seen lately)."""
        return self._landed < self.first_held and not self._seen_sliding

    @property
    def _seen_sliding(self) -> bool:
        return self.slides or (
            self.slides_seen >= WARY_AFTER and self._held_since_slide < WARY_HOLDS
        )

    def note_held(self) -> None:
        """A landing that waited to see its cube stay: it stayed."""
        self._held_since_slide += 1

    def note_landed(self) -> None:
        """A landing was told (waited or not)."""
        self._landed += 1

    def note_step(
        self, step: LoadStep, cubes: float, whole_within: float, handled_since_s: float
    ) -> None:
        """Take a fast step of ``cubes`` (signed) as it is decided.

        ``whole_within``: how far (a share of the fall) a fall may read off
        the rise it undoes;
        ``handled_since_s``: when the tower was last opened or closed (inf
        while it stands open). A rise of about a cube is remembered; a fall
        as large on the same plate soon after it is a cube that may
        have slid on, queued to be judged once the strikes after it are
        known (:meth:`due`).
        """
        key = (step.level, step.t_settled_s)
        if step.revises:
            self._came_back(step, cubes, whole_within, handled_since_s)
            return
        if key in self._seen:
            return
        self._seen.append(key)
        if np.isnan(cubes) or ABOUT_ONE[0] <= cubes <= ABOUT_ONE[1]:
            self._arrived()
        if np.isnan(cubes):
            # A plate's first cube, whose size is not known yet: the fall
            # that follows tells whether it was one (its size is learnt
            # from this very rise). Taking these as signs too found model
            # B's towers sooner: 204 -> 182 and 181 -> 160 false landings
            # on its towers 1-8 and 9-16 (model C's 9-16: 31 -> 28). Of
            # either sign: a cell wired the other way reads its first cube
            # as a fall in counts (model B: 132 -> 119 and 132 -> 127).
            # Where landings wait to see their cube stay (:attr:`wary`), a
            # plate's first cube that slid on was never counted, so its size
            # is still unknown when it leaves: the step back the other way
            # is its fall.
            rise = self._risen.get(step.level)
            if rise is None or (rise.delta_counts > 0) == (step.delta_counts > 0):
                self._risen[step.level] = step
                return
        elif not ABOUT_ONE[0] <= abs(cubes) <= ABOUT_ONE[1]:
            return
        elif cubes > 0:
            self._risen[step.level] = step
            return
        rise = self._risen.pop(step.level, None)
        if (
            rise is None
            or not abs(rise.delta_counts + step.delta_counts)
            <= whole_within * abs(step.delta_counts)
            or step.t_before_s - handled_since_s < HANDLING_GUARD_S
            or not rise.t_settled_s + BRIEFLY_RESTED_S <= step.t_before_s
            <= rise.t_settled_s + SLID_WITHIN_S
            or not (rise.t_settled_s + RESTED_S <= step.t_before_s or _left_at_once(rise, step))
        ):
            return
        self._checks.append((step, step.t_before_s - rise.t_settled_s))

    def dwell_hold_s(self) -> float:
        """How long a landing waits to see its cube stay, from the slides timed (inf: unknown)."""
        if len(self._dwells) < DWELLS_KNOWN:
            return float("inf")
        return max(DWELL_LEAST_S, max(self._dwells) + DWELL_MARGIN_S)

    def _came_back(
        self, revision: LoadStep, cubes: float, whole_within: float, handled_since_s: float
    ) -> None:
        """A second look at a rise of one cube that finds the plate back where it was.

        The cube rested there while its rise was read, then left before the
        plate was still: it never shows as a fall of its own, only as this
        revision measuring no change from the load before it came (model I,
        whose cubes dwell 30-250 ms on each plate they pass). Judged like a
        fall, from the end of the rise's still window on: a strike heard
        below by then is the cube that slid on.
        """
        rise = self._risen.get(revision.level)
        if rise is None or rise.t_before_s != revision.t_before_s:
            return
        if np.isnan(cubes):
            back = abs(revision.delta_counts) <= whole_within * abs(rise.delta_counts)
        else:
            back = abs(cubes) <= whole_within
        if (
            not back
            or revision.t_before_s - handled_since_s < HANDLING_GUARD_S
            or revision.t_settled_s > rise.t_settled_s + SLID_WITHIN_S
        ):
            return
        del self._risen[revision.level]
        # The cube was on the plate through the rise's still window: its
        # bounces there are over, and what is struck after is below.
        fall = replace(
            revision, t_before_s=rise.t_decided_s + LOOKBACK_S,
            delta_counts=-rise.delta_counts, revises=False,
        )
        self._checks.append((fall, revision.t_settled_s - rise.t_settled_s))

    def count_slide(self, fall: LoadStep | None = None) -> None:
        """A fall (from :meth:`due`, when given) was heard striking below its plate."""
        rested = None if fall is None else self._rested_due.get((fall.level, fall.t_settled_s))
        if rested is not None:
            self._dwells.append(rested)
        self.slides_seen += 1
        self._held_since_slide = 0
        self._signs.append((self._arrivals, True))

    def count_bounce_on_empty(self) -> None:
        """A cube bounced on an empty plate, swung it like a landing and went on."""
        self.bounced_on_empty += 1
        self._signs.append((self._arrivals, False))

    def _arrived(self) -> None:
        """A cube seen arriving on a plate: signs older than ``SIGN_MEMORY`` arrivals are let go."""
        self._arrivals += 1
        while self._signs and self._signs[0][0] <= self._arrivals - SIGN_MEMORY:
            _, slide = self._signs.popleft()
            if slide:
                self.slides_seen = max(0, self.slides_seen - 1)
            else:
                self.bounced_on_empty = max(0, self.bounced_on_empty - 1)

    def next_due(self, impact_delay_s: float) -> float | None:
        """When the first queued fall can be judged (None: none is queued)."""
        if not self._checks:
            return None
        return self._checks[0][0].t_settled_s + STRIKE_S + impact_delay_s

    def due(self, now_s: float, impact_delay_s: float) -> list[LoadStep]:
        """The falls whose strikes below are all known by ``now_s`` (taken off the queue)."""
        taken: list[tuple[LoadStep, float]] = []
        while (due := self.next_due(impact_delay_s)) is not None and due <= now_s:
            taken.append(self._checks.popleft())
        self._rested_due = {(fall.level, fall.t_settled_s): rested for fall, rested in taken}
        return [fall for fall, _ in taken]

    @staticmethod
    def strike_window(fall: LoadStep) -> tuple[float, float]:
        """When a strike of the cube that left with ``fall`` is heard below its plate."""
        return fall.t_before_s - LOOKBACK_S, fall.t_settled_s + STRIKE_S
