"""Drops heard without load cells: where the cube rests, and what the drop was.

When no load channel can tell (an acoustic-only source, or a level whose
cell reads nothing), the strikes of one drop decide alone: the cube rests
where its last bounces are, judged by the self-learning acoustic model
(``acoustic.AcousticLevelModel``) over the last few strikes pooled; a
thrown cube that stopped on a plate and knocked the resting cube down is
told by two cubes heard moving at once (``strikes.stayed_above``,
``strikes.knocked_below``).

Pure functions; the fusion keeps the state.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dsp.detect.acoustic import AcousticLevelModel
from dsp.detect.events import Event, Landing
from dsp.detect.piezo import TimedImpact
from dsp.detect.strikes import heard_on, knocked_below, loudest_levels, stayed_above
from dsp.detect.trust import cube_like

# Why 3: a cube at rest has bounced two or three times; earlier strikes are
# hole edges above. Of the last three, only those heard loudest where the
# last one was are pooled: a cube's bounces follow one another within the
# mask time and often make a single onset, and the edges struck just before
# then outvoted it (pooling all three: 86 % on cross-check towers 13-24,
# 96 % on ours; pooling the last level's: 91 % / 97 %, 93 % after learning).
FINAL_STRIKES = 3
# Why 12 dB: a cube bouncing on its plate can hit the plate above from
# below, far more gently than it struck its own (12-40 dB on our towers); as
# the drop's last strike that would name the level above.
CEILING_DB = 12.0
#: Confidence of a level told only as the second of two cubes heard in one drop.
SECOND_CUBE_CONFIDENCE = 0.7
# Why the lowest two levels: a knock on the table comes up through the
# tower's base, heard loudest on the ground floor or the level over it and
# on every plate alike (``trust.cube_like``: its loudest channel 6-11 dB
# over the median one), while a cube's strike stands out on its plate. Over
# models A-Q's acoustic-only sessions, drops heard only there with no
# strike standing out were 8 false landings (6 of them at a table knock)
# and no cube; such drops heard higher up were cubes 30 times in 77
# (cubes on a rocking tower, model I and J), so they are left be.
TABLE_LEVELS = 2
# Why six, and three in four: hands lifting modules, reaching in and
# setting them back rumble on every plate alike, strike after strike; a
# falling cube's strikes each stand out on their plate, and in a noisy room
# the talk and the hum between them do not. Over models A-R's acoustic-only
# sessions (ignoring their load cells), against no such rule: their quiet
# single throws 1 false landing and 2 cubes fewer; their noisy rooms 520
# false landings and 70 cubes fewer; model R's games 51 and 40 false
# landings fewer, no cube lost. Six such strikes whatever the rest took 116
# false landings more off in the noisy rooms, but 54 cubes more.
HANDS_FLAT_IN_A_DROP = 6
HANDS_FLAT_SHARE = 0.75


# Why 12 dB under the drop's loudest strike: a cube heard striking 150-300
# codes high up strikes the plates below about as hard (it falls further);
# heard there 30 dB under, over the faint threshold only, it is ringing,
# crosstalk or the room (models A, D, Z: a faint "strike" two plates down
# was the landing's level 3-14 times a tower). Where even the drop's
# loudest strike was faint (a worn tower's quiet discs, model Y: 10-20
# codes), the next plates' strikes are as faint.
FAINT_UNDER_DROP_DB = 12.0
# Why 6 dB over what its plate heard of the drop: a plate that heard the
# strikes above as crosstalk, or hands rumbling through the tower, sounds
# as loud again when nothing struck it (model O's games: a hand's rumble
# heard 8-16 codes on plate 2 made a faint 9.6 there the second of two
# "cubes"); a cube striking it stands out over that.
FAINT_OVER_HEARD_DB = 6.0


# Why 0.45 s and a third: a cube that came to rest may strike its plate
# once more a little later (it rocks onto a face, tips, slides against the
# wall), after the silence that ended its drop; heard alone, that strike
# was a second cube on the same plate. Over the cross-check models heard
# without their load cells, such lone strikes within 0.45 s, on the plate
# just decided, were a tenth as loud as the drop's loudest strike (median,
# single throws); the next cube of a quick series thrown onto the same
# plate strikes it about as hard as the last one did (0.94).
LATE_STRIKE_WITHIN_S = 0.45
LATE_STRIKE_SHARE = 0.3


# Why two strikes 0.05 s apart, two plates up: a cube that comes to rest
# bounces on its plate (two to four strikes over 0.05-0.3 s), one passing a
# hole edge strikes once; a cube still falling strikes only the plates under
# it, and one bouncing reaches at most the plate over its own. A strike two
# plates up or more right after such bounces is the next throw, entering
# from the top, and the cube that bounced stays (quick series heard without
# load cells, where one drop ran into the next: docs/detection.md, "Bounces
# cut short"). Over the 37 cross-check models heard without their cells,
# quick series: 31,950 -> 33,367 of 45,216 right, false 1,595 -> 1,698.
# Offline, on the drops as heard before: +2,071 right and +784 false at
# 0.05 s; two strikes however close +2,535 / +1,042; one strike +4,166 /
# +2,926 (one strike three plates up, online: +603 / +454).
TRAIN_STRIKES = 2
TRAIN_SPAN_S = 0.05
TRAIN_WITHIN_S = 0.3
TRAIN_CUT_PLATES_UP = 2
# Why 0.5 s: a cube told while its drop went on may be the one the drop
# ends on too (it bounced again after the strike above), heard as one.
TOLD_SAME_S = 0.5
# Why 0.5: the ear must name the plate; in noisy rooms and games heard
# without cells most told landings under it were talk, knocks and hands.
# At 0.6 the quick series lost 125 landings; at 0.4 games had 53 false more.
TOLD_CONFIDENCE = 0.5


def cut_short(drop: list[TimedImpact], strike: TimedImpact) -> list[TimedImpact]:
    """The bounces of a cube at rest that ``strike``, from a plate well above, cut short.

    ``drop``: the drop's strikes heard over the onset threshold so far. The
    strikes at its end on one plate (with none above it between them, those
    below let be), within ``TRAIN_WITHIN_S`` of the last, when there are
    ``TRAIN_STRIKES`` or more spanning ``TRAIN_SPAN_S`` and ``strike`` is
    ``TRAIN_CUT_PLATES_UP`` plates above them or more; else an empty list.
    """
    if not drop:
        return []
    level = drop[-1].impact.loudest
    if strike.impact.loudest < level + TRAIN_CUT_PLATES_UP:
        return []
    train: list[TimedImpact] = []
    for imp in reversed(drop):
        if imp.impact.loudest > level or drop[-1].t_s - imp.t_s > TRAIN_WITHIN_S:
            break
        # A strike under the plate between its bounces: another cube
        # falling past, or the bounce heard loudest below.
        if imp.impact.loudest == level:
            train.append(imp)
    if len(train) < TRAIN_STRIKES or train[0].t_s - train[-1].t_s < TRAIN_SPAN_S:
        return []
    return train[::-1]


def told_already(level: int, t_s: float, told: list[tuple[int, float]]) -> bool:
    """Whether a cube resting on ``level`` at ``t_s`` was told while its drop went on."""
    return any(level == at and abs(t_s - t) < TOLD_SAME_S for at, t in told)


def not_told(landings: list[Event], told: list[tuple[int, float]]) -> list[Event]:
    """``landings`` less those told already while their drop went on (``told``)."""
    return [e for e in landings
            if not (isinstance(e, Landing) and told_already(e.floor, e.t, told))]


@dataclass(frozen=True)
class HeardRest:
    """The last drop decided by ear: its last strike, its level and its loudest strike's peak."""

    t_last_s: float
    level: int
    loudest: float


def late_strike_of(rest: HeardRest | None, loud: list[TimedImpact]) -> bool:
    """Whether a drop of one strike is the cube last decided, striking its plate again.

    ``loud``: the drop's strikes over the onset threshold. One strike,
    loudest on ``rest.level``, within ``LATE_STRIKE_WITHIN_S`` of that
    drop's last strike and under ``LATE_STRIKE_SHARE`` of its loudest.
    """
    if rest is None or len(loud) != 1:
        return False
    strike = loud[0]
    return (
        strike.t_s - rest.t_last_s <= LATE_STRIKE_WITHIN_S
        and strike.impact.loudest == rest.level
        and float(np.max(strike.peaks)) < LATE_STRIKE_SHARE * rest.loudest
    )


def continues_drop(drop: list[TimedImpact], faint: TimedImpact) -> bool:
    """Whether a faint strike is the drop's cube striking a plate further down.

    A cube falls: a faint strike on a plate below every plate the drop was
    heard on, as loud as the drop's strikes give reason to expect
    (``FAINT_UNDER_DROP_DB``) and standing out over what that plate heard
    of them (``FAINT_OVER_HEARD_DB``), is the cube going on, its strikes on
    the lower plates under the onset threshold. Anything else faint is not
    a cube's. ``drop`` holds the drop's strikes so far, the first one
    heard over the onset threshold.
    """
    level = faint.impact.loudest
    if level >= min(loudest_levels(drop)):
        return False
    peak = float(faint.peaks[level])
    loudest = max(float(np.max(imp.peaks)) for imp in drop)
    if peak < loudest * 10.0 ** (-FAINT_UNDER_DROP_DB / 20.0):
        return False
    heard = max(float(imp.peaks[level]) for imp in drop if not imp.faint)
    return peak >= heard * 10.0 ** (FAINT_OVER_HEARD_DB / 20.0)


def resting_level(
    acoustic: AcousticLevelModel, impacts: list[TimedImpact]
) -> tuple[int, float, list[TimedImpact]]:
    """Where a drop's last strikes say its cube rests: level, confidence, strikes pooled."""
    # The cube rests where its last bounces are: strikes before them are
    # hole edges on the way down. The evidence of the last few strikes
    # heard loudest on the same level is pooled, so that the level's
    # signature, not one noisy profile, decides.
    final = impacts[-FINAL_STRIKES:]
    loudest = loudest_levels(final)
    peak_db = [20.0 * np.log10(max(float(np.max(imp.peaks)), 1e-9)) for imp in final]
    while len(final) > 1 and any(
        loudest[i] == loudest[-1] - 1 and peak_db[i] - peak_db[-1] >= CEILING_DB
        for i in range(len(final) - 1)
    ):
        # A faint last strike just above a loud one: the cube bouncing
        # up against the plate over it, not where it rests.
        final, loudest, peak_db = final[:-1], loudest[:-1], peak_db[:-1]
    final = [imp for imp, top in zip(final, loudest, strict=True) if top == loudest[-1]]
    posterior = np.sum(
        [acoustic.classify(imp.peaks, heard_crosstalk=True).posterior for imp in final],
        axis=0,
    )
    level = int(np.argmax(posterior))
    return level, float(posterior[level] / posterior.sum()), final


def knock_on_the_table(impacts: list[TimedImpact]) -> bool:
    """Whether a drop heard only on the lowest levels, none of it standing out, was a knock."""
    return all(top < TABLE_LEVELS for top in loudest_levels(impacts)) and not any(
        cube_like(imp) for imp in impacts
    )


def hands_at_the_tower(impacts: list[TimedImpact]) -> bool:
    """Whether a drop was hands at the tower: many strikes, nearly all heard on all plates alike."""
    flat = sum(1 for imp in impacts if not cube_like(imp))
    return flat >= HANDS_FLAT_IN_A_DROP and flat >= HANDS_FLAT_SHARE * len(impacts)


def heard_landing(
    impacts: list[TimedImpact], level: int, confidence: float, now_s: float,
    *, second_cube: bool = True,
) -> list[Event]:
    """The landings of a drop heard resting on ``level``: one, or two where two cubes came to rest.

    Two cubes came to rest where a plate above was struck again after a cube
    struck further down, or a plate below while the cube heard last still
    bounced. A knock-down sounds so (the thrown cube stopped, the resting
    one knocked off), and so do two cubes thrown one just after the other;
    by ear the two cannot be told apart. Both are told as plain landings:
    labelled a knock-down, the game would take the second for no throw,
    and over models P-S's acoustic games 66 of 68 such labels were wrong
    (the game took 478 throws of 763 right with the labels, 533 without;
    docs/detection.md, "Two cubes by ear"). ``second_cube`` False: one
    was told while the drop went on (``cut_short``), and the drop tells
    its last cube only.
    """
    last = impacts[-1]
    alone: list[Event] = [Landing(t=last.t_s, t_decided=now_s, floor=level, cubes=1,
                                  confidence=confidence, source="acoustic")]
    if not second_cube:
        return alone
    heard = loudest_levels(impacts)
    stayed = stayed_above(impacts, level, heard)
    if stayed is not None:
        at = heard_on(impacts, heard, stayed)[-1]
        return two_cubes_heard(stayed, at, level, last.t_s, confidence, now_s)
    below = knocked_below(impacts, level, heard)
    if below is not None:
        at = heard_on(impacts, heard, below)[-1]
        return two_cubes_heard(level, last.t_s, below, at, SECOND_CUBE_CONFIDENCE, now_s)
    return alone


def two_cubes_heard(
    upper: int, t_upper: float, lower: int, t_lower: float, confidence: float, now_s: float
) -> list[Event]:
    """The landings of two cubes heard coming to rest in one drop, on ``upper`` and ``lower``."""
    return [
        Landing(t=t_upper, t_decided=now_s, floor=upper, cubes=1,
                confidence=SECOND_CUBE_CONFIDENCE, source="acoustic"),
        Landing(t=t_lower, t_decided=now_s, floor=lower, cubes=1,
                confidence=confidence, source="acoustic"),
    ]
