"""Removals by hand: when cubes left a plate, and how many each grab took.

A hand presses a plate before it lifts cubes off (0.15-1 s on the
cross-check towers), so the load step of a removal begins well before the
cubes leave; and a hand that takes cubes one or two at a time, a second or
two apart, is one fall to the settled view while fingers stay on the plate.
The plate's readings over the fall (``loadhistory.LoadHistory``) tell both:
a finger's hard pushes, each let go as its cubes left, or else the moments
the load passed each cube's half-way to stay.

Pure functions over the load history and a settled step; the fusion keeps
the state (which level lay open, when).
"""

from __future__ import annotations

import numpy as np

from dsp.detect.loadcell import LoadStep
from dsp.detect.loadhistory import LoadHistory, Press

# Why 0.3 s: cubes lifted off a plate stay off; a plate jolted past
# half-way (a module set back, a hand) swings back within a period or two.
LEFT_FOR_S = 0.3
# Why 2 cubes: a finger pushes on the cubes it takes, and they leave as it
# lets go; where hands wander on the plate by half a cube or more while the
# level lies open (model C: 0.05-1.5 g on every cell), half-way is crossed
# and crossed back for seconds, and the cubes were timed when the hands let
# go at the close. A push of two cubes' weight is no hand resting there.
GRAB_PRESS = 2.0
# Why 0.5 s: hands that take cubes one grab at a time come back for the
# next 0.5-4 s later. Over the twenty-eight cross-check models' games 290
# of 1,100 grabs followed the one before on the same level within 0.5-1 s
# (models X and Z mostly 0.6-0.9 s), and none sooner than 0.45 s: each grab
# is a removal in every model's truth. Our simulator's hand picks several
# cubes in one reach 0.25-0.7 s apart (one removal there), and under the
# hand the load passes each cube's half-way up to 0.4 s off. At 1 s (session
# 21, five models) removals with floor and count right were 2,354 of 2,747
# over the twenty-eight models' games; at 0.5 s 2,424 (X +20, Z +18, J +8),
# at 0.4 s 2,426. Our evaluation's reaches stay one removal each at 0.5 s
# (games 73 of 74, long sessions 8 of 8, as at 1 s).
GRABS_APART_S = 0.5
# Why one cube: hands that pulled a plate a cube past where it settled
# shook it (our simulator's: 1-4 g rms while they pick cubes up), and its
# load then passes each cube's half-way at random times.
SHAKEN_CUBES = 1.0
# Why 1 s and 0.1 s: a plate's load before a finger pushes (since the last
# push let go) and after it let go, clear of the push's own edges, tells
# how many cubes the grab took; hands resting on the level make it waver,
# and a second of it is steadier than a few tenths (model C's 30-minute
# games: 138 -> 151 of 242 removals right).
PRESS_LEVEL_S = 1.0
PRESS_EDGE_S = 0.1
PRESS_READ_S = 3 * PRESS_EDGE_S
#: How long before a push its plate's load is read: the history to keep.
PRESS_LOOKBACK_S = PRESS_LEVEL_S + PRESS_EDGE_S
# Why 0.5 s: the modules set back strike the plates before their cells
# report again (model C: up to 0.45 s).
SET_BACK_S = 0.5


def presses_while_open(
    history: LoadHistory, step: LoadStep, opened: tuple[float, float] | None, cubes: float
) -> list[Press]:
    """A finger's hard pushes on a falling plate while its level lay open, over the fall.

    ``opened``: when the step's level lay open during the fall (None: it
    did not); ``cubes``: how many the fall measures (of the plate's size).
    Only while the level lay open: the modules set back jolt every plate
    as hard as a finger does, just before the close.
    """
    if opened is None:
        return []
    taken = max(1, round(abs(cubes))) if np.isfinite(cubes) else 1
    return history.presses(
        step.level, max(step.t_before_s, opened[0]),
        min(step.t_settled_s, opened[1] - SET_BACK_S),
        step.before_counts, step.after_counts, GRAB_PRESS / taken,
    )


def removal_time(
    history: LoadHistory, step: LoadStep, since_s: float, presses: list[Press]
) -> float:
    """When the cubes left the plate: its load passed half-way to where it settled, to stay.

    When a finger pushed hard, they left as it let go (``presses``, looked
    for over the whole fall: the fast view may see the fall only after the
    push). ``since_s``: where to look for the crossing from.
    """
    if presses:
        return presses[-1].let_go_s
    left = history.crossed_at(
        step.level, since_s, step.t_settled_s, step.before_counts, step.after_counts,
        stay_s=LEFT_FOR_S,
    )
    return since_s if left is None else max(since_s, left)


def grabs(
    history: LoadHistory, step: LoadStep, cubes: int, since_s: float, at_once_s: float,
    presses: list[Press],
) -> list[tuple[float, int]]:
    """The cubes a hand took off a plate in one settled fall, grab by grab: ``(t, cubes)``.

    Where a finger pushed before each grab (``presses``), each push that
    let go is a grab (:func:`taken_per_press`). Otherwise each cube is
    timed when the load passed half-way past it, to stay (``LEFT_FOR_S``),
    unless hands shook the plate; cubes that left within ``GRABS_APART_S``
    of each other went in one grab. One grab keeps the time found already
    (``at_once_s``).
    """
    if len(presses) >= 2:
        # Each grab pushed on the cubes and let go as they left.
        by_press = taken_per_press(history, step, cubes, presses)
        if len(by_press) > 1:
            return by_press
        if by_press:
            return [(at_once_s, cubes)]
    share = (step.after_counts - step.before_counts) / cubes
    low, high = history.extent(step.level, since_s, step.t_settled_s)
    beyond = ((low if share < 0 else high) - step.after_counts) / share
    if not beyond < SHAKEN_CUBES:
        # Hands shook the plate past where it settled: when it passed
        # each cube's half-way says nothing of when that cube left.
        return [(at_once_s, cubes)]
    left: list[float] = []
    for k in range(cubes):
        at = history.crossed_at(
            step.level, since_s, step.t_settled_s, step.before_counts + k * share,
            step.before_counts + (k + 1) * share, stay_s=LEFT_FOR_S,
        )
        if at is None:
            return [(at_once_s, cubes)]
        left.append(max(at, left[-1] if left else since_s))
    together: list[list[float]] = [[left[0]]]
    for at in left[1:]:
        if at - together[-1][-1] < GRABS_APART_S:
            together[-1].append(at)
        else:
            together.append([at])
    if len(together) == 1:
        return [(at_once_s, cubes)]
    return [(grab[0], len(grab)) for grab in together]


def taken_per_press(
    history: LoadHistory, step: LoadStep, cubes: int, presses: list[Press]
) -> list[tuple[float, int]]:
    """How many of ``cubes`` each press took: the load before it against the load after it.

    Rounded to whole cubes that add up to ``cubes``; presses that took
    none are left out. Empty when a press leaves no readings to tell by
    (the last one is read against the load the step settled to).
    """
    share = (step.after_counts - step.before_counts) / cubes
    # Pushes closer than a grab's return are one reach's, and so is a
    # push begun before the plate's load after the last could be read.
    reaches = [presses[0]]
    for press in presses[1:]:
        if (
            press.let_go_s - reaches[-1].let_go_s < GRABS_APART_S
            or press.began_s - reaches[-1].let_go_s < PRESS_READ_S
        ):
            reaches[-1] = Press(reaches[-1].began_s, press.let_go_s)
        else:
            reaches.append(press)
    taken = []
    for i, press in enumerate(reaches):
        until = reaches[i + 1].began_s if i + 1 < len(reaches) else step.t_settled_s
        since = reaches[i - 1].let_go_s + PRESS_EDGE_S if i else -np.inf
        pre = history.level_near(
            step.level, max(since, press.began_s - PRESS_LEVEL_S), press.began_s - PRESS_EDGE_S,
        )
        post = history.level_near(
            step.level, press.let_go_s + PRESS_EDGE_S,
            min(until - PRESS_EDGE_S, press.let_go_s + PRESS_LEVEL_S),
        )
        if not np.isfinite(post) and i + 1 == len(reaches):
            # The fall settled as the last push let go (the settled view
            # found the plate still from then on): it settled where the
            # step says. Over the cross-check models' games this split 25
            # more falls into their grabs right (Z 8, V 5; our games the same).
            post = step.after_counts
        taken.append((post - pre) / share)
    if not np.all(np.isfinite(taken)):
        return []
    counts = [max(0, round(x)) for x in taken]
    while sum(counts) != cubes:
        if sum(counts) < cubes:
            i = int(np.argmax([x - c for x, c in zip(taken, counts, strict=True)]))
            counts[i] += 1
        else:
            i = int(np.argmax([c - x if c > 0 else -np.inf
                               for x, c in zip(taken, counts, strict=True)]))
            counts[i] -= 1
    return [(p.let_go_s, c) for p, c in zip(reaches, counts, strict=True) if c > 0]
