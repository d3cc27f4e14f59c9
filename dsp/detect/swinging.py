"""Plates that keep swinging: cubes heard landing there are told by ear, weighed later.

A plate on a stiff bar cell can ring near the converter's reading rate
(read as a slow swing, aliased) or be shaken on by every strike of a quick
series, and swing by more than a cube for seconds. Its cell then shows no
cube until the plate stills: the settled view finds no still window, and
when it finally does, it weighs several cubes at once, late, and splits
them by the drops heard only when their count matches (cross-check model
AI: 111 cubes missed on plates whose readings spread by a cube or more
the second before, a further 46 told over half a second off).

A drop heard ending on such a plate that no load step explained by its due
time (``deadcells.HeardDrop.due_s``) is told as a landing heard there,
when the plate

- swung before the cube came: the middle 80 % of its readings over
  ``BEFORE_S`` spread over ``SWUNG_CUBES`` of a cube or more (a strike's
  spike of a reading or two, and a step, leave that spread at the noise:
  the swing is the plate's own, not one blow);
- still swings when the load had its chance: over the last ``AT_DUE_S``
  before the due time, ``STILL_SWINGING_CUBES`` or more;
- swings about a load heavier than before by ``RISE_CUBES`` or more (the
  median of its readings over the last ``RISE_TAIL_S`` against the one
  before the drop): the cube is there, not passing by.

When the plate stills, the load step that weighs those cubes tells only
the cubes beyond them (:func:`weighed_by`); the rest were told already.

Pure functions; the fusion measures the plates and keeps the cubes told.
"""

from __future__ import annotations

# Why a cube, half a cube and half a cube (measured over the cross-check
# towers, docs/crosscheck.md, run 66): the spread before, taken as the whole
# range of the readings, took a strike's spike of a reading or two for a
# swing (models X and Y: 67 and 71 false landings); the spread still there
# at the due time kept out plates that had stilled by then (X and Y: 13
# each), the middle 80 % the rest. The rise kept out cubes of a quick series
# that only passed a swinging plate (AC, J, X: 6 false landings fewer; AI 9
# right and 1 false fewer): a cube is told only on a plate that holds it.
# Model AI: 2,784 -> 2,894 right, 129 -> 112 false; the 33 other models +24
# right, +16 false.
BEFORE_S = 1.0
SWUNG_CUBES = 1.0
AT_DUE_S = 0.3
STILL_SWINGING_CUBES = 0.5
RISE_TAIL_S = 0.6
RISE_CUBES = 0.5
# Why 0.3 s: a cube told by ear is timed by its last strike, and the load
# step that weighs it began when the plate was last still before it and
# settled when it stilled; a strike that close outside that span is the
# same cube's.
WEIGHED_MARGIN_S = 0.3
# Why 16: a plate swings for seconds, not for a quick series of sixteen.
UNWEIGHED_KEPT = 16


def keeps_swinging(
    swung_counts: float, still_swinging_counts: float, rise_cubes: float, unit_counts: float
) -> bool:
    """Whether a plate's cell can show no cube soon, and one came (the measures as above).

    Parameters
    ----------
    swung_counts : float
        The middle 80 % of the plate's readings over ``BEFORE_S`` before the drop.
    still_swinging_counts : float
        The same over the last ``AT_DUE_S`` before the drop's due time.
    rise_cubes : float
        How much heavier, in cubes, the plate swings about than before the drop.
    unit_counts : float
        Counts per cube on that plate (unsigned).
    """
    return bool(
        unit_counts > 0
        and swung_counts >= SWUNG_CUBES * unit_counts
        and still_swinging_counts >= STILL_SWINGING_CUBES * unit_counts
        and rise_cubes >= RISE_CUBES
    )


def weighed_by(
    unweighed: list[float], t_before_s: float, t_settled_s: float, cubes: int
) -> list[float]:
    """Of the cubes told by ear at times ``unweighed``, those a step of ``cubes`` weighs.

    The step began ``t_before_s`` (its plate last still) and settled
    ``t_settled_s``; at most ``cubes`` of the cubes told within that span
    (``WEIGHED_MARGIN_S`` either side), the earliest first.
    """
    within = [
        t for t in unweighed
        if t_before_s - WEIGHED_MARGIN_S <= t <= t_settled_s + WEIGHED_MARGIN_S
    ]
    return within[: max(0, cubes)]
