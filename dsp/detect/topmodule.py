"""The top module lifted: level 7 opened, which no load channel shows.

To look into level k the players lift modules k..7, and the load channels
of levels k+1..7 stop reporting (design.md). Opening the top level lifts
module 7 alone, which carries no load cell: nothing disconnects. Cubes then
leave level 7 by hand, and a closed tower loses a cube from its top plate
only when a throw knocks it down, with the knocked cube heard striking the
plates below. So a removal from the top plate with no strike heard below
it shows the top module off; the hands that lifted it were heard on the
tower just before, and setting it back down thumps the whole tower (or the
next throw shows it closed).

Pure functions over strike times and levels; the fusion keeps the state.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

# Why 0.5 s before and 1 s after: a knocked cube leaves the plate 2-250 ms
# after the strike that knocked it and strikes the plate below a module's
# fall (40-90 ms) later; the removal is timed by the last still reading
# before the plate lost it, up to a conversion or two early.
FELL_BEFORE_S = 0.5
FELL_AFTER_S = 1.0
# Why 3.5 s and 6 s: hands gripping the tower, lifting the module and
# reaching in are heard (rustle, bumps, a finger's tap) in runs with gaps
# of up to three seconds; the first cube is taken 1-3 s after the lift
# (2.5 s and 5 s timed 21 of the cross-check's 40 top lifts within a
# second and missed 3 of our simulator's by 3 s; now 24, and none).
HANDLING_GAP_S = 3.5
HANDLING_LOOKBACK_S = 6.0


def taken_by_hand(
    strikes: Sequence[tuple[float, int]], t_s: float, top: int, *, until_s: float
) -> bool:
    """Whether cubes that left the top plate at ``t_s`` left by hand, not knocked down.

    ``strikes``: ``(time, loudest level)`` of the strikes heard up to
    ``until_s`` (when it is judged). A knocked cube is heard below the top
    plate within ``FELL_AFTER_S``; a hand is not. A strike below later than
    that is the module set back down, or a throw since (the settled view
    may judge the cubes gone only once the hands have let go of the tower).
    """
    end = min(t_s + FELL_AFTER_S, until_s)
    return not any(t_s - FELL_BEFORE_S <= t <= end and level < top for t, level in strikes)


# Why 0.5 s and 10 s: the module comes off with a knock of its own on the
# top plate it sat on (models B, C, F and G), after the last cube thrown has
# come to rest and after the tower was last closed; the first cube is taken
# within seconds of it (within 4-7 s on the cross-check towers).
LIFT_AFTER_S = 0.5
LIFT_LOOKBACK_S = 10.0
# Why 2 s: when neither the module's knock nor the hands were heard (the
# removal itself is then the first sign of the lift), the module came off a
# reach before the first cube left: lifted, set aside, fingers into the
# level. Over the twenty-eight cross-check models' games that took 1.1-4.5 s
# (5th-95th percentile; median 2.5 s) for the top module. Timing such lifts
# 2 s before the cubes left found 35 more of their top lifts within a second
# (1,938 -> 1,973 lifts of 2,083; 1.8-2.6 s all within two of that), our
# evaluation's games 104 -> 106 of 111; timed at the removal, a lift is
# always late.
LIFT_REACH_S = 2.0
# Why 0.5 s and 0.3 s: the hand that took the last cubes off the top plate
# leaves it with a touch or two, and the module is set down after that, with
# a knock of its own on the plate it sits on (model G: 1-3 s after the last
# grab); strikes just before the one that showed the tower closed are the
# same cube's on its way down (top plate, then the next within a tenth of a
# second), not the module's.
SET_DOWN_AFTER_S = 0.5
SET_DOWN_BEFORE_S = 0.3
# Why 4.5 s and 2.5 s: the hands set the top module back 0.9-3.8 s after
# they last took cubes off the top plate (the twenty-eight cross-check
# models' games, 5th-95th percentile). A strike below the top plate that
# shows it back on sooner than 4.5 s after that may be the set-down itself
# (model D's module strikes one plate as it goes back, just before its
# thump): the close is timed by it. A cube's strike later than that is the
# next throw, and the module went back without a sound (models Q and AB):
# a reach after the hands left, 2.8 s at the median where the next throw
# came so late. Closes found within a second over the models' games 1,937
# -> 1,957 of 2,069 (a reach of 1.9 s: 14 more; with no wait before it,
# 27 more but 4 of model D's heard set-downs lost); nothing else changed.
SET_DOWN_HEARD_WITHIN_S = 4.5
SET_DOWN_REACH_S = 2.5


def lifted_at(strike_times: Sequence[float], t_s: float) -> float:
    """When the top module was lifted, for a cube taken by hand at ``t_s``.

    The start of the run of sounds the hands made just before (gaps under
    ``HANDLING_GAP_S``, no further back than ``HANDLING_LOOKBACK_S``); the
    removal's own time when none was heard.
    """
    earlier = sorted(t for t in strike_times if t_s - HANDLING_LOOKBACK_S <= t <= t_s)
    start = t_s
    for t in reversed(earlier):
        if start - t > HANDLING_GAP_S:
            break
        start = t
    return start


def lifted_with_a_knock(
    top_strike_times: Sequence[float], hands_s: float, quiet_since_s: float, t_s: float,
    reach_s: float = LIFT_REACH_S,
) -> float:
    """When the top module came off, for cubes taken at ``t_s``: its knock on the top plate.

    ``top_strike_times``: strikes that stood out on the top plate, in time
    order; ``hands_s``: when the hands were first heard (:func:`lifted_at`);
    ``quiet_since_s``: the last landing or close. The first such strike from
    ``LIFT_AFTER_S`` after that, and no more than ``LIFT_LOOKBACK_S`` before
    the cubes were taken; else ``hands_s``, and when nothing at all was
    heard (``hands_s`` is ``t_s``), a reach (``reach_s``: the players' own,
    as other lifts showed it, else ``LIFT_REACH_S``) before the cubes left,
    though not before the quiet began.
    """
    after = max(quiet_since_s + LIFT_AFTER_S, t_s - LIFT_LOOKBACK_S)
    knock = next((t for t in top_strike_times if after < t <= hands_s), None)
    if knock is not None:
        return knock
    if hands_s < t_s:
        return hands_s
    return min(t_s, max(after, t_s - reach_s))


def set_down_at(
    top_strike_times: Sequence[float], handled_s: float, proof_s: float, *,
    by_a_cube: bool = False,
) -> float:
    """When the top module was set back, shown closed by what came at ``proof_s``.

    ``top_strike_times``: strikes that stood out on the top plate, in time
    order; ``handled_s``: when the hands last took cubes off it (or lifted
    it); ``by_a_cube``: the proof is a cube's strike, not the hands'. The
    first such strike from ``SET_DOWN_AFTER_S`` after that to
    ``SET_DOWN_BEFORE_S`` before ``proof_s``: the module's knock; else
    ``proof_s``, unless a cube showed it closed ``SET_DOWN_HEARD_WITHIN_S``
    or more after the hands left: then it was set down unheard, a reach
    (``SET_DOWN_REACH_S``) after they left.
    """
    since, until = handled_s + SET_DOWN_AFTER_S, proof_s - SET_DOWN_BEFORE_S
    knock = next((t for t in top_strike_times if since < t < until), None)
    if knock is not None:
        return knock
    if by_a_cube and math.isfinite(handled_s) and proof_s - handled_s >= SET_DOWN_HEARD_WITHIN_S:
        return handled_s + SET_DOWN_REACH_S
    return proof_s
