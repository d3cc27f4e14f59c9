"""What the strikes of one drop tell: pure functions over impacts in time order.

A drop is the list of :class:`~dsp.detect.piezo.TimedImpact` heard while
one or more cubes fell; ``levels`` (or ``loudest``) gives the level each
strike is taken to be on. These answer the questions the fusion asks of a
drop: which strikes were a cube passing a hole, where one cube's run of
bounces ended and the next cube's began, and whether a thrown cube stayed
on a plate above while it knocked the resting cube down.
"""

from __future__ import annotations

import numpy as np

from dsp.detect.piezo import TimedImpact

# Why 0.12 s and 0.15 s: a cube falls one module (3 cm) in 0.02-0.1 s, so a
# strike below that soon after a lone strike is the same cube going on; a
# cube that stops bounces on its plate 0.03-0.1 s apart.
PASS_GAP_S = 0.12
BOUNCE_GAP_S = 0.15
# Why 0.25 s: throws come at least 0.3 s apart; two doubted steps closer
# than that are one arrival seen twice through a ringing plate.
ARRIVALS_APART_S = 0.25
# Why 10 dB: a cube's bounces only fade; a strike on the plate that much
# louder than the one before is the next cube (on the top level, the only
# sign of it when throws come fast).
NEW_CUBE_LOUDER = 10.0 ** (10.0 / 20.0)
# Why these: without load cells a thrown cube that stopped on a plate and
# knocked a resting cube down is told by ear when two cubes were moving at
# once: the plate was struck again after a cube had struck two or more
# levels below (a ceiling hit from below reaches only the plate just above),
# or it was struck twice and the cube below arrived sooner than a cube
# leaving the plate could have fallen there (half the free fall from rest
# over modules of at least 2.8 cm). Strikes counted as the plate's must be
# 9 dB louder on it than on the level below: a strike below heard through the
# plate's piezo is never that much louder there (crosstalk upwards is 5-22 dB
# down, piezo gains differ by a few dB). On 868 drops of both simulators
# this found 16 of 48 and 0 of 17 such throws (most knock the cube one level
# down, which this cannot tell from a ceiling hit) and no other drop. The
# second sign holds for a cube knocked one level down too (a ceiling hit
# comes after the strike below, not before it): 2 more of our acoustic-only
# misses found, nothing else changed on either simulator. The same throw
# is heard the other way round when the thrown cube's bounces come last: a
# plate below struck by its own strike between them, a fall from rest after
# the first (``knocked_below``): 3 more of ours, 1 more of the cross-check
# towers' single throws and 3 of their noisy ones; no new false landing.
MODULE_HEIGHT_M = 0.028
LEAVING_FALL_FRACTION = 0.5
OWN_STRIKE_DB = 9.0
GRAVITY_M_S2 = 9.81
# Why 75 ms: a cube bouncing on a plate that strikes the plate above does
# so before it could have fallen that height from rest (a module, 2.8 cm, in
# 75 ms): rising, it is slower than falling. A strike on the plate just
# above the landing level that soon after a strike on it is that ceiling,
# not a cube stopping there (with onsets retriggered on ringing plates
# these were heard, and made 3 false stops in our noisy sessions).
CEILING_REACH_S = float(np.sqrt(2.0 * MODULE_HEIGHT_M / GRAVITY_M_S2))


def loudest_levels(drop: list[TimedImpact]) -> list[int]:
    """The level each impact of a drop sounds loudest on."""
    return [imp.impact.loudest for imp in drop]


def passed_through(drop: list[TimedImpact], loudest: list[int], k: int) -> bool:
    """Whether strike ``k`` was a lone one on its level that the cube fell on from."""
    level, t = loudest[k], drop[k].t_s
    if k + 1 >= len(drop) or loudest[k + 1] >= level or drop[k + 1].t_s - t > PASS_GAP_S:
        return False
    return not any(
        top == level and 0 < abs(c.t_s - t) <= BOUNCE_GAP_S
        for c, top in zip(drop, loudest, strict=True)
    )


def _own_strikes(drop: list[TimedImpact], loudest: list[int], level: int) -> list[float]:
    """Times of strikes on ``level`` that are its own, not crosstalk from below.

    See ``OWN_STRIKE_DB``; the bottom plate has nothing below it.
    """
    return [
        imp.t_s for imp, top in zip(drop, loudest, strict=True)
        if top == level and (level == 0 or 20.0 * np.log10(
            max(float(imp.peaks[level]), 1e-12) / max(float(imp.peaks[level - 1]), 1e-12)
        ) >= OWN_STRIKE_DB)
    ]


def _fall_s(levels: int) -> float:
    """Seconds a cube takes to fall ``levels`` modules from rest."""
    return float(np.sqrt(2.0 * levels * MODULE_HEIGHT_M / GRAVITY_M_S2))


def stayed_above(
    drop: list[TimedImpact], rested: int, levels: list[int] | None = None
) -> int | None:
    """A level above ``rested`` where a second cube stayed (acoustic only).

    The drop's last strikes say where one cube came to rest; this finds the
    plate the thrown cube stopped on when the cube below was knocked down
    from it (see ``OWN_STRIKE_DB``), or None. ``levels``: the level each
    strike was on (default: its loudest channel). On the plate just above
    ``rested`` a strike after the one below may be the resting cube's
    ceiling, so only the second sign counts there: bounced on twice, and
    struck below sooner than a cube leaving it could have got there.
    """
    loudest = loudest_levels(drop) if levels is None else levels
    for level in range(len(drop[0].peaks) - 1, rested, -1):
        heard = [imp.t_s for imp, top in zip(drop, loudest, strict=True) if top == level]
        own = _own_strikes(drop, loudest, level)
        if len(heard) < 2 or not own:
            continue
        adjacent = level == rested + 1
        below = [
            (imp.t_s, top) for imp, top in zip(drop, loudest, strict=True)
            if top <= level - (1 if adjacent else 2) and imp.t_s > own[0]
        ]
        if not below:
            continue
        t_below, reached = below[0]
        if heard[-1] > t_below and not adjacent:
            return level  # struck again after a cube struck further down
        before = [t for t in own if t < t_below]
        fall_s = _fall_s(level - reached)
        if len(before) >= 2 and t_below - before[-1] < LEAVING_FALL_FRACTION * fall_s:
            return level
    return None


def run_ends(a: TimedImpact, b: TimedImpact, above: list[float], signs: int) -> bool:
    """Whether strike ``a`` on a plate ended one cube's run and ``b`` began the next.

    Always at a gap of ``ARRIVALS_APART_S``; with ``signs`` >= 1 also at a
    bounce-length gap in which a level above was struck (times ``above``);
    with ``signs`` >= 2 also where ``b`` is ``NEW_CUBE_LOUDER`` than ``a``.
    """
    gap = b.t_s - a.t_s
    if gap >= ARRIVALS_APART_S:
        return True
    if signs >= 1 and gap >= BOUNCE_GAP_S and any(a.t_s < t < b.t_s for t in above):
        return True
    return signs >= 2 and float(np.max(b.peaks)) >= float(np.max(a.peaks)) * NEW_CUBE_LOUDER


def after_last_silence(drop: list[TimedImpact], silence_s: float) -> list[TimedImpact]:
    """The strikes after the drop's last silence longer than ``silence_s`` (all of it if none).

    In a quick series the drop window also holds the cubes before; the
    strikes after the last silence are the thrown cube's.
    """
    for i in range(len(drop) - 1, 0, -1):
        if drop[i].t_s - drop[i - 1].t_s > silence_s:
            return drop[i:]
    return drop


def bounce_run(times: list[float], before: float | None = None) -> list[float]:
    """The last run of strikes on a plate (gaps under ``ARRIVALS_APART_S``) begun before ``before``.

    A cube's bounces on a plate follow one another closely (after knocking
    the resting cube off, a thrown cube may bounce high: 0.15-0.21 s apart
    on our towers); strikes there as far apart as two throws of a quick
    series were other cubes, each passing the hole edge on its way down.
    """
    runs: list[list[float]] = []
    for t in times:
        if runs and t - runs[-1][-1] < ARRIVALS_APART_S:
            runs[-1].append(t)
        else:
            runs.append([t])
    begun = [run for run in runs if before is None or run[0] < before]
    return begun[-1] if begun else []


def heard_on(drop: list[TimedImpact], loudest: list[int], level: int) -> list[float]:
    """Times of the drop's impacts heard loudest on ``level`` (``loudest``: per impact)."""
    return [imp.t_s for imp, top in zip(drop, loudest, strict=True) if top == level]


def strikes_on(drop: list[TimedImpact], loudest: list[int], level: int) -> list[TimedImpact]:
    """The strikes on ``level`` (``loudest``: per impact), less lone ones a cube fell on from."""
    return [
        imp for k, (imp, top) in enumerate(zip(drop, loudest, strict=True))
        if top == level and not passed_through(drop, loudest, k)
    ]


def knocked_below(
    drop: list[TimedImpact], rested: int, levels: list[int] | None = None
) -> int | None:
    """A level under ``rested`` where a knocked cube came to rest (acoustic only).

    The drop's last strikes are on ``rested``: the thrown cube stopped there.
    If a plate below was struck by a strike of its own (see
    ``OWN_STRIKE_DB``) while that cube still bounced on ``rested``, and no
    sooner after its first strike there than a cube knocked from rest could
    have fallen that far (half the free fall, as in :func:`stayed_above`),
    a second cube went down: the one it knocked off. Returns that level, or
    None. ``levels``: the level each strike was on (default: its loudest).
    """
    loudest = loudest_levels(drop) if levels is None else levels
    on = [imp.t_s for imp, top in zip(drop, loudest, strict=True) if top == rested]
    if len(on) < 2:
        return None
    for level in range(rested - 1, -1, -1):
        own = _own_strikes(drop, loudest, level)
        fall_s = _fall_s(rested - level)
        if any(on[0] + LEAVING_FALL_FRACTION * fall_s <= t < on[-1] for t in own):
            return level
    return None

