"""Fusion: impacts and load changes in, landings and the other events out.

Load evidence decides where cubes are (a lasting step of whole cubes on
exactly one level is a landing, a lasting drop is a removal); piezo
impacts time the landing and teach the acoustic model; when no load
channel can tell (acoustic-only sources) the acoustic model decides.
Disconnected load channels are lifted modules; steps on many levels at
once and tower-wide impacts are disturbances, never landings.

All decisions are taken against the stream clock ``now`` that the caller
advances (:meth:`Fusion.advance`): an event is decided once the data up to
its deadline has been seen, so results do not depend on block sizes.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field, replace
from statistics import median

import numpy as np

from dsp.detect.acoustic import AcousticLevelModel, loudness_profile
from dsp.detect.cubes import CubeScale
from dsp.detect.deadcells import STILL_SIGMAS, HeardDrop, SilentCells
from dsp.detect.deafdiscs import DeafDiscs
from dsp.detect.dropgap import DropGap
from dsp.detect.events import Closed, Disturbance, Event, Landing, Lift, Removal
from dsp.detect.loadcell import LoadConnection, LoadStep
from dsp.detect.loadhistory import SWING_BASE_S, LoadCoverage, LoadHistory, Press
from dsp.detect.piezo import PlateBusy, TimedImpact
from dsp.detect.slides import SlideSigns
from dsp.detect.stops import (
    BEFORE_STRIKE_S,
    LOAD_LAG_S,
    STOP_ALONE_S,
    STOP_SWING_FELL,
    PlateWindow,
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
    knocked_below,
    loudest_levels,
    passed_through,
    run_ends,
    stayed_above,
    strikes_on,
)
from dsp.detect.topmodule import FELL_AFTER_S, lifted_at, taken_by_hand
from dsp.detect.trust import (
    REREAD_AFTER_S,
    REREAD_TAIL_S,
    cube_like,
    drop_loudness_db,
    hands_rumbling,
    loud_as_a_cube,
    pressed_not_struck,
    read_on_a_strike,
    swung_at_least,
    swung_less_than,
    swung_like_a_landing,
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
_DOUBTED_KEPT = 4
# Why 3: a cube at rest has bounced two or three times; earlier strikes are
# hole edges above. Of the last three, only those heard loudest where the
# last one was are pooled: a cube's bounces follow one another within the
# mask time and often make a single onset, and the edges struck just before
# then outvoted it (pooling all three: 86 % on cross-check towers 13-24,
# 96 % on ours; pooling the last level's: 91 % / 97 %, 93 % after learning).
_FINAL_STRIKES = 3
# Why 12 dB: a cube bouncing on its plate can hit the plate above from
# below, far more gently than it struck its own (12-40 dB on our towers); as
# the drop's last strike that would name the level above.
_CEILING_DB = 12.0
# Why 16: two confirmed landings per level on average; from then on a
# strike's level is the signature it sounds like, not its loudest disc
# (cross-check towers 13-24: 97.7 -> 97.9 % right; towers whose discs differ
# by up to +-10 dB: 95.1 -> 95.5 %; ours unchanged).
_EAR_ATTRIBUTION_LANDINGS = 16
# Why 1 s: hands that lift or set down modules shake every plate around
# the moment contacts open or close; after that, plates still shaken count
# as restless (``_BUSY_LEVELS``). 1.5 s held back the cube thrown back right
# after a closure (p95 latency of full games 0.80 s; 0.50 s at 0.75 s, with
# the same lifts, closures, removals and no false landing on both
# simulators). Model E's hands press a plate up to 0.75 s after a closure
# (3 false landings in 64 sessions at 0.75 s; at 1 s none, and our games'
# latency unchanged).
_HANDLING_GUARD_S = 1.0
# Why 6: a share of a plate's size tells that it was learnt from several
# cubes only while the tower is not shaken as a whole; a hand steadying it
# (model C's noisy rooms) makes six or all seven other plates restless, and
# moved one by a third of its size with its touch heard there: 6 false
# landings over 64 sessions, and no landing lost (quick series had fewer
# plates restless).
_SEVERAL_BUSY_LEVELS = 6
# Why 2: a cube shakes its own plate; two or more other plates restless
# while it settles means hands or the table moved the tower.
_BUSY_LEVELS = 2
# Why 0.25 cube: a cube's step measured by the fast view is within 0.1-0.2
# cube of whole; a step between whole cubes is a hand or the table.
_FAST_MAX_RESIDUAL = 0.25
# Why 0.3 s: a tower-wide impact this shortly before a step means the step
# may be the hand or knock, not a cube.
_DROP_GAP_GUARD_S = 0.3
# Why 1 s: a plate ringing at 1-4 times a cube's weight with a decay time
# of up to 0.4 s needs about 0.9 s to ring below the fast view's tolerance;
# until then window means swing, and a step after a step is suspect.
_RING_GUARD_S = 1.0
# Why a fifth of a cube: ring reads of a landing lie above the plate's
# level before it (the cube is on it); a hand lifting or pressing from
# below reads lower by more than noise.
_SANK_CUBES = 0.2
# Why 0.15 cube: a second cube on a still-ringing plate must look whole.
_RING_MAX_RESIDUAL = 0.15
# Why 0.12 cube: two readings agreeing within 8 % tell the two kinds' ratio;
# a cube of the other kind reads within a tenth of it.
_KIND_MAX_RESIDUAL = 0.12
# Why 50 ms, 0.6 s, two levels, 0.1 s and a quarter cube: a fast step
# doubted only because other plates were restless (a knock on the table
# rings every plate for up to 0.8 s; a hand on another level shakes the
# plates near it) is looked at again every 50 ms until 0.6 s after it
# settled (the settled view decides 0.6-0.9 s after). It is decided once
# every plate within two levels that no cube struck is back within a
# quarter cube of its load before the step (the mean of its last 0.1 s,
# about one period of a plate's ring, or its ring fit): a hand pressing or
# lifting a plate holds it off its load. A hand further away does not move
# this plate, which must still hold its cube.
_CALM_LOOK_EVERY_S = 0.05
_CALM_LOOK_UNTIL_S = 0.6
_CALM_REACH = 2
_CALM_TAIL_S = 0.1
_CALM_BACK_CUBES = 0.25
# Why 0.3 s: the two halves of one arrival read on a ringing plate come a
# window or two apart; a part older than this was something else.
_PART_JOIN_S = 0.3
# Why 0.35 s: a cube bounces on the plate it stops on for up to about a
# third of a second after the strike it was first heard by; a strike there
# later than that is the next cube's.
_STOP_BOUNCES_S = 0.35
# Why 0.3 cube: slower changes than this between two settled views are drift
# or creep (followed, like a scale's zero tracking); faster ones are cubes.
_DRIFT_FOLLOW_CUBES = 0.3
# Why 1.2 s: a cube falls through all eight levels and bounces out within
# about a second; earlier impacts belong to another drop.
_DROP_LOOKBACK_S = 1.2
# Why 0.4 s: a cube's load begins to change when it first touches the plate,
# before its last bounce is heard, so the plate was still last at most a
# third of a second after the drop's last strike (-0.8 to +0.34 s over the
# 3,000 load landings of our noisy-room sessions). A plate that began to
# move later than this after the last strike was moved by a hand: on our
# 140 fresh noisy-room sessions 7 false landings fewer, none lost; no event
# of the cross-check towers changed (session 13).
_STRUCK_BEFORE_STEP_S = 0.4
# Why 2 s: impacts older than the longest unstable stretch before a step are
# of no use for timing it.
_IMPACT_MEMORY_S = 4.0
# Why 512: strikes the ear has placed are remembered while they are among
# the recent impacts (a few seconds' worth); the rest are let go past this.
_HEARD_AS_KEPT = 512
# Why 1 s: without a load reading for this long the load channels are
# absent and the acoustic model has to decide on its own.
_LOAD_ABSENT_S = 1.0
# Why 2: a touch on the tower sounds as one or two soft strikes; the cubes
# whose plates swung least (knocked one level down from rest, 0.05-0.08 of
# a landing's swing on the cross-check model) came with a throw's strikes.
_PRESS_STRIKES = 2
# Why 0.5: a plate's first step against the way the other cells are wired
# is taken for a cube (its cell wired the other way) only when it swung
# like one: half a landing's usual swing (most landings swing 0.5-1.7 of
# it), where hands lifting a plate in our noisy rooms swung 0.03-0.27.
_AGAINST_SIGN_SWING = 0.5
# Why 0.7: a cube landing on a plate swings it about as far as the plate's
# own landings do (0.5-1.7 of their median on the cross-check towers); a
# cube striking the hole edge on its way past swings it 0.03-0.4 of that
# (99.7 % of passes under 0.7 when no other cube landed there).
_STOPPED_SWING = 0.7
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
# Why 0.3: a landing swings its plate at least half as far as its landings
# usually do (the lowest 0.5 % of 2,900 fast-view landings in our fresh noisy
# rooms: 0.47; of 5,900 on the cross-check towers: 0.27); hands touching the
# tower in our noisy rooms, taken for landings, swung their plates 0.04-0.28.
# Such a step is read again 125 ms on, like one read on a strike's jolt: a
# hand has often let go by then, a cube is still there.
_LITTLE_SWING = 0.3
# Why 0.1: a step whose plate swung that little is a hand's even when it
# still holds 125 ms on (hands press for up to a second): the lowest swings
# of fast-view landings were 0.15 of the usual on the cross-check towers
# (8,000 landings) and 0.47 in our noisy rooms; the hands taken for
# landings there swung 0.04-0.06. Left to the settled view: 2 false
# landings fewer on 140 fresh noisy-room sessions, no cross-check score
# changed (session 13).
_HARDLY_SWUNG = 0.1
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
# Why 0.5 s: a plate's first step that took longer than that to settle may
# hold cubes that came to rest from its first strike on, not only at its
# last; the cubes it is later shown to have held are timed by that first
# strike (model E's quick series: 3 landings more right, model B one less).
_SIZED_LONG_S = 0.5
# Why these: a cell that reads nothing (``deadcells``) is judged by its
# noise over the second before the drop and its largest swing from just
# before the first strike to 0.3 s after the last (a struck plate's push
# and ring); a perfectly constant channel has noise 0, taken as one count.
# Its landings are heard only, so they are reported less sure (0.7 of the
# level's own confidence).
_NOISE_BEFORE_S = 1.0
_SILENT_SWING_AFTER_S = 0.3
_MIN_NOISE_COUNTS = 1.0
_SILENT_CELL_CONFIDENCE = 0.7
# Why 2: a thrown cube strikes a hole edge or bounces on its way to rest; a
# lone click on one disc was an electrical pop (model A's noisy rooms).
_CUBE_STRIKES = 2
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
# Why 2 s, 4 plates and 1 s: see ``_unheard_under_hands``; a second before
# the change began, for the strike that started it.
_HANDS_LONG_S = 2.0
_HANDS_BUSY_LEVELS = 4
_HANDS_HEARD_BEFORE_S = 1.0
# Why 0.3 s: cubes lifted off a plate stay off; a plate jolted past
# half-way (a module set back, a hand) swings back within a period or two.
_LEFT_FOR_S = 0.3
# Why 2 cubes: a finger pushes on the cubes it takes, and they leave as it
# lets go; where hands wander on the plate by half a cube or more while the
# level lies open (model C: 0.05-1.5 g on every cell), half-way is crossed
# and crossed back for seconds, and the cubes were timed when the hands let
# go at the close. A push of two cubes' weight is no hand resting there.
_GRAB_PRESS = 2.0
# Why 1 s: hands that take cubes one grab at a time come back for the
# next 0.6-4 s later (cross-check models C-E: each grab is a removal); one
# hand picking several cubes in one reach lifts them 0.25-0.7 s apart (our
# simulator: one removal), and under the hand the load passes each cube's
# half-way up to 0.4 s off. 0.5 s took 18 more of the models' 320 removals
# right but split 4 of our 82 reaches; 1 s takes 5 and splits one.
_GRABS_APART_S = 1.0
# Why one cube: hands that pulled a plate a cube past where it settled
# shook it (our simulator's: 1-4 g rms while they pick cubes up), and its
# load then passes each cube's half-way at random times.
_SHAKEN_CUBES = 1.0
# Why 1 s and 0.1 s: a plate's load before a finger pushes (since the last
# push let go) and after it let go, clear of the push's own edges, tells
# how many cubes the grab took; hands resting on the level make it waver,
# and a second of it is steadier than a few tenths (model C's 30-minute
# games: 138 -> 151 of 242 removals right).
_PRESS_LEVEL_S = 1.0
_PRESS_EDGE_S = 0.1
_PRESS_READ_S = 3 * _PRESS_EDGE_S
# Why 5 s and 40 s: the settled view decides the cubes taken out of an
# open level once the hands have left after the close (up to a few seconds),
# and a level lies open for 5-20 s on the cross-check towers.
_OPEN_HISTORY_AFTER_S = 5.0
_OPEN_HISTORY_S = 40.0
# Why 0.5 s: the modules set back strike the plates before their cells
# report again (model C: up to 0.45 s).
_SET_BACK_S = 0.5
# Why 3: a plate's typical landing swing needs a few landings of its own.
_SWING_SAMPLES = 3
# Why these: in a tower whose cubes rest a moment on a plate and slide on
# (``slides.SlideSigns``), a landing waits until its plate has held the cube
# 0.4 s and nothing was heard on it for 60 ms (a sliding cube scrapes, heard
# as faint onsets), looking every 0.1 s, for 0.8 s at most.
_SLIDE_LOOK_S = 0.1
_MOVING_S = 0.06
_SLIDE_HOLD_S = 0.4
_SLIDE_WAIT_S = 0.8
# Why 0.1 s: a still window that ends this long after a cube came to rest
# began after it (a window across the step is never still).
_SETTLED_AFTER_S = 0.1
# Why 0.3 s and 3: a neighbour's cell jolted by a landing moves with it (within
# the settling of the two steps) by 3-15 % of a cube in model C; a cell of
# another batch reads a whole cube as a third of its neighbour's at the least
# in most kits, and a first cube landing together with its neighbour's is rare.
_JOLT_NEAR_S = 0.3
_JOLT_FRACTION = 3.0
_JOLT_CUBE = 0.75
# Why these: a hand steadying the tower (model C's noisy rooms) moves every
# plate by 0.03-0.6 g; a settled step heard by one strike or none while
# three other plates, that no cube landed on in the last 1.5 s, moved by a
# quarter cube or more is the hand's. Model C: 16 false landings fewer over
# its 64 sessions and 2 landings more; model B 3 false fewer; ours and model
# A unchanged. Two plates were too few: model B lost 7 landings (cubes
# sliding by on other plates).
_STEADIED_STRIKES = 1
_STEADIED_PLATES = 3
_STEADIED_CUBES = 0.25
# Why half its own step: a plate whose cube size is not known yet cannot
# say how many quarter cubes the others moved; a hand moves them about as
# far as it moved this plate (model C tower 2: a first "cube" of 0.22 of
# plate 7's while five plates moved 0.15-0.26 of one), a cube landing moves
# its neighbours by a few percent. Model C: 6 false landings fewer and one
# landing more over towers 1-8, model B 2 false fewer, nothing else changed.
_STEADIED_OWN_STEP = 0.5
_STEADIED_LANDED_S = 1.5
# Why a quarter: a cube's last bounces on the plate it rests on are within
# a few times of its loudest strike; onsets after them at a tenth of it or
# less were a humming disc (model C tower 16).
_ENDED_LOUDNESS = 0.25
# Why 10: a plate's first change that no strike came with and that is
# under ten times the noise of one reading is drift, not its first cube
# (model C tower 16: 25 counts, six times the noise, taken for a cube
# before anything was thrown, and every cube after it read as 35). A cube
# steps by 50-1,000 times the noise on our towers and by 5 at the very
# least on the cross-check ones (0.25 g against 0.05 g of noise), and a
# cube that small is heard.
_FIRST_CUBE_NOISES = 10.0
# Why 0.15 s: the neighbour's load is read over a period of the slowest
# converters (10 readings a second in model C); a shorter tail held no
# reading there, and its plate was never asked.
_JOLT_TAIL_S = 0.15
# Why 0.03 s and 0.5 s: a strike makes its plate busy within the 20 ms the
# busy test averages; a cube rocks or slides for at most about half a second
# after its last bounce (0.45 s on the cross-check towers), so a plate busy
# longer, or since long before the strike, is a noisy room. Why 4 s: a
# landing is decided within about 2 s of its last strike, and the plate's
# changes from half a second before that strike on are asked about; a
# flickering channel makes many, so they are kept by age, not by count.
_REST_ONSET_S = 0.03
_REST_MAX_S = 0.5
_BUSY_KEPT_S = 4.0
# Why 15: the median of the last 15 landings follows a slowly changing plate.
_HISTORY_SWINGS = 15


def _count_confidence(residual: float) -> float:
    """How sure a count of whole cubes is, from how far the step lies off whole ones."""
    return float(np.clip(1.0 - 0.9 * max(0.0, residual - 0.1) / 0.4, 0.5, 0.99))


@dataclass
class FusionStats:
    """Counters for diagnostics (stderr of ``towerear detect``)."""

    impacts: int = 0
    load_steps: int = 0
    steps_below_one_cube: int = 0
    #: Plates whose size was found to be several cubes' and learnt again.
    sizes_relearnt: int = 0
    steps_in_disturbance: int = 0
    settled_landings: int = 0
    settled_removals: int = 0
    knockdowns_seen: int = 0
    acoustic_landings: int = 0
    acoustic_learnt: int = 0
    acoustic_agreed: int = 0
    acoustic_checked: int = 0
    hands_unlearnt: int = 0
    slides_seen: int = 0
    bounced_on_empty: int = 0
    heard_on_silent_cells: int = 0
    top_lifts: int = 0


@dataclass
class _Drop:
    impacts: list[TimedImpact] = field(default_factory=list)


@dataclass
class _LevelMemory:
    """What the fusion remembers of one level between decisions."""

    #: How far its plate swung when its own single cubes landed (the last few).
    landing_swings: list[float] = field(default_factory=list)
    #: When a thrown cube was last inferred to have stopped here, knocking
    #: one down without a change of its load (the strike it was timed by),
    #: and that strike again until a gain of the plate turns out to be that cube.
    stopped_t: float = -np.inf
    stopped_guess: float | None = None
    #: When the last cube reported here came to rest.
    landed_t: float = -np.inf
    #: When the last step the fast view accounted for here settled.
    fast_accounted_t: float = -np.inf
    #: The last fast step's decision time and whether it was a landing.
    last_fast: tuple[float, bool] | None = None
    #: When a fast step last read the plate lower (by a fifth of a cube or
    #: more): a hand lifting or pressing from below, never a ring read.
    sank_t: float = -np.inf
    #: When the fast view last saw the level settle after a change, trusted
    #: or not: the latest a cube there can have come to rest.
    fast_settled_t: float | None = None
    #: Fast steps not trusted: when the settled view later counts a cube
    #: here, the earliest tells when it came to rest.
    doubted: list[LoadStep] = field(default_factory=list)
    #: The last doubted step that only its measure made suspect.
    remeasurable: LoadStep | None = None
    #: The last fast step of part of a cube, with the fast step before it
    #: (``last_fast`` then): the next may be the rest of the same arrival.
    part: tuple[LoadStep, tuple[float, bool] | None] | None = None
    #: Cubes reported landing here, in all.
    landings: int = 0
    #: When the step that alone taught the level its size brought its cubes
    #: (its last strike there; its first, if it settled slowly): that step
    #: may prove to have been several cubes.
    sized_at: float | None = None
    #: Settled steps of two cubes that arrived together, since the last single cube.
    doubles: int = 0
    #: Settled steps of many cubes at once, since the last single cube.
    many: int = 0
    #: Fast-view landings (settle time, cubes), to re-measure a cube's size
    #: once the settled view sees the plate still.
    fast_landed: list[tuple[float, int]] = field(default_factory=list)


@dataclass(frozen=True)
class _Look:
    """Why a fast step is looked at again later, and the step as first seen.

    ``until_calm`` False: trusted, but read on a strike's jolt; decided if
    its plate still holds it once the jolt has passed. True: doubted only
    for restless plates; looked at until they are back at their loads.
    """

    first: LoadStep
    until_calm: bool


class Fusion:
    """Decision stage of the detector (see the module docstring).

    Parameters
    ----------
    n_levels : int
        Levels of the tower (load and piezo channels).
    scale : CubeScale
        Cube size per level (learnt or calibrated).
    acoustic : AcousticLevelModel
        The self-learning acoustic model.
    hold_s, coincidence_s, disturbance_levels, knock_window_s, lift_gather_s, drop_gap_s
        See the module constants for the defaults and why.
    impact_delay_s : float
        How long after an impact the piezo chain hands it over (its onset
        decision delay): a drop is over only once its silence has lasted
        ``drop_gap_s`` *and* any strike within it would have arrived.
    """

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
        self.acoustic_gap = DropGap(drop_gap_s)
        self.impact_delay_s = impact_delay_s
        self.stats = FusionStats()
        #: Signs that cubes here rest a moment on a plate and slide on.
        self.slide_signs = SlideSigns()
        self._impacts: deque[TimedImpact] = deque()
        self._pending_steps: list[LoadStep] = []
        # Fast steps queued to be looked at again later (``_look_again``).
        self._looks: dict[LoadStep, _Look] = {}
        self._recent_steps: deque[tuple[LoadStep, int]] = deque()  # (step, signed cubes)
        self._disturbance_until = -np.inf
        # The same, for steps on many levels at once (not knocks heard).
        self._steps_disturbed_until = -np.inf
        self._last_disturbance_t = -np.inf
        self.disconnected: set[int] = set()
        self._disconnect_t: dict[int, float] = {}
        self._pending_lift_deadline: float | None = None
        self.exposed: int | None = None
        # The top module is off (level 7 open), which no channel shows (``topmodule``).
        self._top_off = False
        #: Stream times that had load readings (filled by the detector as readings arrive).
        self.load_coverage = LoadCoverage(_LOAD_ABSENT_S)
        #: Recent load readings (filled by the detector as readings arrive).
        self.load_history = LoadHistory(_IMPACT_MEMORY_S + 1.0)
        self._levels = [_LevelMemory() for _ in range(self.n_levels)]
        self._drop = _Drop()
        # The drop being heard while the load cells are there, and the
        # cells that never move with their plates (``deadcells``).
        self._heard = _Drop()
        self.silent_cells = SilentCells(self.n_levels)
        #: Discs that hear nothing of their own plate's landings (``deafdiscs``).
        self.deaf_discs = DeafDiscs(self.n_levels)
        #: Cubes believed to lie on each level (from the events decided so far).
        self.cubes_on = [0] * self.n_levels
        #: Load of each level (counts) that the events so far account for;
        #: NaN until the settled view has seen the level (or after a lift).
        self.accounted = np.full(self.n_levels, np.nan)
        self._reconnected = np.zeros(self.n_levels, dtype=bool)
        self._last_connection_t = -np.inf
        # When modules were last lifted off or set back (a few are enough).
        self._connection_times: deque[float] = deque(maxlen=32)
        # When the tower was open, and at which level: [lift, close (inf: open), exposed].
        self._openings: deque[list[float]] = deque(maxlen=8)
        self._wide_impact_t: deque[float] = deque(maxlen=64)
        self._heard_db: deque[float] = deque(maxlen=50)
        self._piezo_seen = False
        #: When the piezo stream began (set by the caller; inf: no piezo stream yet).
        self.piezo_since_s = np.inf
        self._heard_as: dict[int, tuple[TimedImpact, int, int]] = {}
        # When each plate started and stopped making sound, (time, busy).
        self._busy: list[deque[tuple[float, bool]]] = [
            deque() for _ in range(self.n_levels)
        ]

    # -- inputs ------------------------------------------------------------
    @property
    def slides(self) -> bool:
        """Whether cubes here rest a moment on plates and slide on (``slides.SlideSigns``)."""
        return self.slide_signs.slides

    def add_impacts(
        self, impacts: list[TimedImpact], *, known_s: float | None = None
    ) -> list[Event]:
        """Take new impacts (time order), known at ``known_s``; returns disturbances."""
        out: list[Event] = []
        for imp in impacts:
            self._piezo_seen = True
            self.stats.impacts += 1
            self._impacts.append(imp)
            self.acoustic.observe(imp.peaks)
            self.deaf_discs.note_impact(imp.channels)
            known = imp.t_s if known_s is None else known_s
            thump = len(imp.channels) >= DEFAULT_WIDE_IMPACT_CHANNELS
            if self._top_off and (thump or self._levels_of([imp])[0] < self.n_levels - 1):
                # Set back with a thump heard through the tower, or something
                # struck below the top plate: the top module is on again. A
                # strike that stands out on one plate is a cube falling past;
                # one heard alike on several is the hands setting it down.
                out.extend(self._close_top(imp.t_s, known, handling=thump or not cube_like(imp)))
                if self._is_wide(imp):
                    self._wide_impact_t.append(imp.t_s)
                    continue
            if self._is_wide(imp):
                self._wide_impact_t.append(imp.t_s)
                out.extend(self._disturbance(imp.t_s, known))
            elif not self._load_present(imp.t_s):
                if (
                    self._drop.impacts
                    and imp.t_s - self._drop.impacts[-1].t_s > self.acoustic_gap.seconds
                ):
                    out.extend(self._decide_drop(self._drop_over_s()))
                if not self._drop.impacts:
                    self.acoustic_gap.began(imp.t_s, loudest_levels([imp])[0])
                self._drop.impacts.append(imp)
            else:
                if self._heard.impacts and imp.t_s - self._heard.impacts[-1].t_s > self.drop_gap_s:
                    self._hand_over_heard()
                self._heard.impacts.append(imp)
        while self._impacts and self._impacts[0].t_s < self._impacts[-1].t_s - _IMPACT_MEMORY_S:
            self._impacts.popleft()
        return out

    def add_busy(self, change: PlateBusy) -> None:
        """Take a plate's busy/quiet change (in time order, at its time)."""
        if 0 <= change.level < self.n_levels:
            changes = self._busy[change.level]
            changes.append((change.t_s, change.busy))
            while changes[0][0] < change.t_s - _BUSY_KEPT_S:
                changes.popleft()

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
        on) if it was still busy then.
        """
        busy, since = False, -np.inf
        quiet_at = None
        for when, now_busy in self._busy[level]:
            if when > known_s:
                break
            if when <= t + _REST_ONSET_S:
                busy, since = now_busy, when
            elif busy and not now_busy:
                quiet_at = when
                break
        if not busy or t - since > _REST_MAX_S:
            return t
        return min(quiet_at if quiet_at is not None else known_s, t + _REST_MAX_S)

    def add_load(
        self, steps: list[LoadStep], connections: list[LoadConnection], t_last_s: float
    ) -> list[Event]:
        """Take load steps and connection changes up to reading time ``t_last_s``."""
        out: list[Event] = []
        for conn in connections:
            out.extend(self._connection(conn))
        for step in steps:
            self.stats.load_steps += 1
            self.silent_cells.note_step(step.level)
            if step.level in self.disconnected:
                continue
            self._pending_steps.append(step)
        return out

    def advance(self, now_s: float) -> list[Event]:
        """Decide everything whose deadline is at or before ``now_s``."""
        out: list[Event] = []
        self.load_history.forget_before(self._history_horizon(now_s))
        if self._pending_lift_deadline is not None and now_s >= self._pending_lift_deadline:
            out.extend(self._emit_lift(self._pending_lift_deadline))
        # Steps queued to be looked at again (``_looks``) may be due too.
        while ready := [s for s in self._pending_steps if now_s >= s.t_decided_s + self.hold_s]:
            out.extend(self._resolve_steps(ready))
        self._check_slides(now_s)
        if self._looks:
            # Those dropped with a disturbance or a lift are not looked at again.
            pending = set(self._pending_steps)
            self._looks = {s: look for s, look in self._looks.items() if s in pending}
        if (
            self._drop.impacts
            and not self._load_present(now_s)
            and now_s >= self._drop_over_s()
        ):
            out.extend(self._decide_drop(self._drop_over_s()))
        if self._heard.impacts and now_s >= self._heard_over_s():
            self._hand_over_heard()
        out.extend(self._heard_on_silent_cells(now_s))
        # Steps are judged in the order their plates settled, but a plate that
        # settled first may have been sure later: events go out in the order
        # decided (contracts.md section 3), ties as judged.
        out.sort(key=lambda e: e.t_decided)
        return self._at_rest(out)

    def next_due(self) -> float | None:
        """The earliest time at which something pending is decided (None: nothing is)."""
        times = [s.t_decided_s + self.hold_s for s in self._pending_steps]
        if self._pending_lift_deadline is not None:
            times.append(self._pending_lift_deadline)
        if self._drop.impacts:
            times.append(self._drop_over_s())
        check = self.slide_signs.next_due(self.impact_delay_s)
        if check is not None:
            times.append(check)
        if self._heard.impacts:
            times.append(self._heard_over_s())
        heard = self.silent_cells.next_due()
        if heard is not None:
            times.append(heard)
        return min(times) if times else None

    def _drop_over_s(self) -> float:
        """When the acoustic drop in progress is known to be over, if no strike comes."""
        return self._drop.impacts[-1].t_s + self.acoustic_gap.seconds + self.impact_delay_s

    def _heard_over_s(self) -> float:
        """When the drop heard with the load cells there is over, if no strike comes."""
        return self._heard.impacts[-1].t_s + self.drop_gap_s + self.impact_delay_s

    def _hand_over_heard(self) -> None:
        """Give the drop just heard to the watch over silent cells (``deadcells``)."""
        impacts, self._heard = self._heard.impacts, _Drop()
        if self._tower_open:
            return  # hands at work in an open tower
        level, confidence, final = self._resting_level(impacts)
        loud = (
            len(impacts) >= _CUBE_STRIKES
            and loud_as_a_cube(drop_loudness_db(final, level), self._heard_db)
            and any(cube_like(imp) for imp in final)
        )
        self.silent_cells.add_drop(HeardDrop(
            t_first_s=impacts[0].t_s, t_last_s=impacts[-1].t_s, level=level,
            t_rest_s=final[-1].t_s, confidence=confidence, cube_loud=loud,
        ))

    def _heard_on_silent_cells(self, now_s: float) -> list[Event]:
        """Landings heard on levels whose load cells read nothing, due by ``now_s``."""
        out: list[Event] = []
        for drop in self.silent_cells.take_due(now_s):
            if self._tower_open or self.silent_cells.explained(drop):
                continue
            for heard in self.silent_cells.judge(drop, cell_still=self._cell_still(drop)):
                self.stats.heard_on_silent_cells += 1
                self.cubes_on[heard.level] += 1
                memory = self._levels[heard.level]
                memory.landings += 1
                memory.landed_t = max(memory.landed_t, heard.t_rest_s)
                out.append(Landing(
                    t=heard.t_rest_s, t_decided=drop.due_s, floor=heard.level, cubes=1,
                    confidence=round(_SILENT_CELL_CONFIDENCE * heard.confidence, 3),
                    source="acoustic",
                ))
        return out

    def _cell_still(self, drop: HeardDrop) -> bool:
        """Whether the drop's level's cell stayed within its noise while the drop was heard."""
        level = drop.level
        noise = self.load_history.noise(level, drop.t_first_s - _NOISE_BEFORE_S, drop.t_first_s)
        swing = self.load_history.swing(
            level, drop.t_first_s - BEFORE_STRIKE_S, drop.t_last_s + _SILENT_SWING_AFTER_S
        )
        return bool(
            np.isfinite(noise) and np.isfinite(swing)
            and swing < STILL_SIGMAS * max(noise, _MIN_NOISE_COUNTS)
        )

    def flush(self, now_s: float) -> list[Event]:
        """Decide whatever is still pending at the end of the stream."""
        out = self.advance(
            now_s
            + max(self.hold_s, self.acoustic_gap.seconds + self.impact_delay_s, self.lift_gather_s)
        )
        return out

    # -- load ----------------------------------------------------------------
    def _load_present(self, t_s: float) -> bool:
        return self.load_coverage.present(t_s)

    def _resolve_steps(self, ready: list[LoadStep]) -> list[Event]:
        out: list[Event] = []
        for step in sorted(ready, key=lambda s: s.t_settled_s):
            if step not in self._pending_steps:
                continue
            # Decided as soon as the hold after the step's own decision is over.
            now_s = step.t_decided_s + self.hold_s
            self._check_slides(now_s)
            self._note_slide(step)
            group = [
                s
                for s in self._pending_steps
                if abs(s.t_settled_s - step.t_settled_s) <= self.coincidence_s
            ]
            levels = {s.level for s in group}
            if len(levels) >= self.disturbance_levels:
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
                    self._look_again(step, _Look(step, until_calm=True),
                                     step.t_decided_s + _CALM_LOOK_EVERY_S)
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
                self._look_again(step, _Look(step, until_calm=False),
                                 step.t_settled_s + REREAD_AFTER_S)
                continue
            if self._slides_on(step, now_s, look):
                continue
            out.extend(self._step_event(step, now_s))
        return out

    def _slides_on(self, step: LoadStep, now_s: float, look: _Look | None) -> bool:
        """Whether a landing about to be decided waits to see whether its cube stays.

        Only in a tower whose cubes were seen to rest a moment on a plate and
        slide on into its hole (``SlideSigns.wary``): the landing waits until its plate
        has held the cube a while and nothing more is heard on it (a sliding
        cube scrapes), then is decided if the plate still holds it.
        """
        if not self.slide_signs.wary or self.scale.cubes(step.level, step.delta_counts) <= 0:
            return False
        first = step if look is None else look.first
        recent = [imp for imp in self._impacts if now_s - _MOVING_S < imp.t_s <= now_s]
        if now_s - first.t_settled_s >= _SLIDE_WAIT_S or (
            now_s >= first.t_settled_s + _SLIDE_HOLD_S
            and step.level not in self._levels_of(recent)
        ):
            self.slide_signs.note_held()
            return False
        # Nothing is decided before the plate has held the cube long enough.
        at_s = max(now_s + _SLIDE_LOOK_S, first.t_settled_s + _SLIDE_HOLD_S)
        self._look_again(step, _Look(first, until_calm=False), at_s - self.hold_s)
        return True

    def _fast_step_trusted(self, step: LoadStep, *, shaken_too: bool = True) -> bool:
        """Whether the fast view may decide this step (calm, closed tower).

        ``shaken_too=False``: whether it may, but for other plates being
        restless or a knock heard on the table.
        """
        disturbed_until = self._disturbance_until if shaken_too else self._steps_disturbed_until
        if self._tower_open or step.t_settled_s <= disturbed_until:
            return False
        if step.t_before_s - self._last_connection_t < _HANDLING_GUARD_S:
            return False
        if self._pressed(step) or self._steadied(step):
            return False
        if not shaken_too:
            return (
                not hands_rumbling(self._impacts, step)
                and self._heard_a_drop(step)
                and not self._first_cube_unswung(step)
            )
        if self._unexplained_busy(step) >= _BUSY_LEVELS:
            return False
        start = step.t_before_s - _DROP_GAP_GUARD_S
        if any(start <= t <= step.t_settled_s for t in self._wide_impact_t):
            return False
        if hands_rumbling(self._impacts, step):
            return False
        if self._piezo_present(step.t_before_s) and (
            self.scale.unit(step.level) is None or not self.scale.knows_sign(step.level)
        ):
            # The plate's first cube teaches its size, or which way its cell
            # is wired, for the whole session: only a cube heard striking
            # this very plate is taken for it.
            if not self._heard_here(step):
                return False
            if self._first_cube_unswung(step):
                return False
            if self.scale.cubes(step.level, step.delta_counts) < 0 and not self._swung(
                step, _AGAINST_SIGN_SWING
            ):
                # Read against the way the other cells are wired: a cell wired
                # the other way, or a hand lifting the plate, which swings it
                # less than a landing.
                return False
            return self._heard_a_drop(step)
        return self._heard_a_drop(step) or self._felt_a_drop(step)

    def _waits_for_calm(self, step: LoadStep) -> bool:
        """Whether a step doubted for restless plates alone may be looked at again.

        One clean cube, heard landing on this level as loud as a cube, with
        nothing but other plates against it.
        """
        n, residual = self.scale.count(step.level, step.delta_counts)
        if n != 1 or residual > _FAST_MAX_RESIDUAL:
            return False
        if not self._fast_step_trusted(step, shaken_too=False):
            return False
        drop = self._drop_impacts(step)
        return any(abs(top - step.level) <= 1 for top in self._levels_of(drop))

    def _look_again(self, step: LoadStep, look: _Look, at_s: float) -> None:
        """Queue ``step`` to be looked at again at ``at_s`` (see :class:`_Look`)."""
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

    def _looked_again(self, step: LoadStep, look: _Look) -> bool:
        """Whether a step queued again is decided now, as a trusted fast step."""
        if look.until_calm:
            return self._calm_look(step, look.first)
        if not self._still_holds(step):
            # The plate went back: it was the jolt of a strike, not a cube.
            self._doubt(step)
            self.stats.steps_in_disturbance += 1
            return False
        return True

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
        if now_s + _CALM_LOOK_EVERY_S <= first.t_settled_s + _CALM_LOOK_UNTIL_S:
            self._look_again(step, _Look(first, until_calm=True), now_s + _CALM_LOOK_EVERY_S)
        return False

    def _plates_calm(self, step: LoadStep, now_s: float) -> bool:
        """Whether every plate within reach that no cube struck is back at its load at ``now_s``."""
        explained = self._explained_plates(step)
        own = self.scale.unit(step.level)
        for k in range(self.n_levels):
            if k == step.level or explained >> k & 1 or abs(k - step.level) > _CALM_REACH:
                continue
            unit = self.scale.unit(k) or own
            back = self.load_history.change(k, step.t_before_s, now_s, _CALM_TAIL_S)
            if unit is None or not abs(back) <= _CALM_BACK_CUBES * abs(unit):
                return False
        return True

    def _still_holds(self, step: LoadStep) -> bool:
        """Whether the plate still holds the step's cubes at its (later) decision time."""
        n, _ = self.scale.count(step.level, step.delta_counts)
        held = self.load_history.change(
            step.level, step.t_before_s, step.t_decided_s, REREAD_TAIL_S
        )
        if not np.isfinite(held):
            return False
        held_n, residual = self.scale.count(step.level, held)
        return held_n == n and residual <= _FAST_MAX_RESIDUAL

    def _heard_here(self, step: LoadStep) -> bool:
        """Whether a strike of the step's drop was heard on its own level (by ear)."""
        drop = self._drop_impacts(step)
        return bool(heard_on(drop, self._levels_of(drop), step.level))

    def _read_on_a_strike(self, step: LoadStep) -> bool:
        """Whether the step may lie on a strike's jolt (see ``trust.read_on_a_strike``)."""
        drop = self._drop_impacts(step)
        return read_on_a_strike(step, heard_on(drop, self._levels_of(drop), step.level))

    def _felt_a_drop(self, step: LoadStep) -> bool:
        """Whether the plate swung like a landing under a clean step of one cube."""
        unit = self.scale.unit(step.level)
        if unit is None:
            return False
        n, residual = self.scale.count(step.level, step.delta_counts)
        swing, usual = self._swing_and_usual(step, unit)
        return swung_like_a_landing(n, residual, swing, usual, _STOPPED_SWING)

    def _pressed(self, step: LoadStep) -> bool:
        """Whether a hand pressed the plate: it gained without swinging, struck once or twice.

        A thrown cube strikes hole edges and bounces; a knocked cube falling
        one level may swing its plate as little as a hand, but it comes with
        the strikes of the throw that knocked it.
        """
        unit = self.scale.unit(step.level)
        cubes = self.scale.cubes(step.level, step.delta_counts)
        if not self.scale.knows_sign(step.level):
            # Its first step decides which way its cell is wired: either way
            # may be a gain.
            cubes = abs(cubes)
        if unit is None or not cubes > 0:
            return False
        if len(self._unclaimed_drop(step)) > _PRESS_STRIKES:
            return False
        return pressed_not_struck(*self._swing_and_usual(step, unit))

    def _swung(self, step: LoadStep, bar: float) -> bool:
        """Whether the plate swung at least ``bar`` of its landings' usual swing."""
        unit = self.scale.unit(step.level)
        if unit is None:
            return False
        return swung_at_least(*self._swing_and_usual(step, unit), bar)

    def _swung_little(self, step: LoadStep, bar: float = _LITTLE_SWING) -> bool:
        """Whether the plate swung under ``bar`` of a landing's swing (known), as under a hand."""
        unit = self.scale.unit(step.level)
        if unit is None:
            return False
        return swung_less_than(*self._swing_and_usual(step, unit), bar)

    def _first_cube_unswung(self, step: LoadStep) -> bool:
        """Whether a plate with no size of its own swung less than a cube of this step would.

        The step is taken for the cube (as it would be): a landing swings a
        plate by some multiple of the cube's weight whatever the cell, so the
        tower's other landings tell how far (in cubes; one is enough, for a
        touch in a session's first minute). A hand pressing a plate as it
        touches the tower, heard as a soft strike there, swung it 0.09-0.14
        of that; had it taught the plate its size, its release left every
        later cube there reading as a fraction of one.
        """
        if self.scale.own_unit(step.level) or step.delta_counts == 0:
            return False
        size = abs(step.delta_counts)
        return swung_less_than(
            *self._swing_and_usual(step, size, pooled_only=True), _LITTLE_SWING
        )

    def _swing_and_usual(
        self, step: LoadStep, unit: float, *, pooled_only: bool = False
    ) -> tuple[float, float]:
        """How far the plate swung as the step came, and how far its landings swing it."""
        swing = self.load_history.swing(
            step.level, step.t_before_s - LOAD_LAG_S, step.t_settled_s
        )
        return swing, self._usual_swing(step.level, unit, pooled_only=pooled_only)

    def _unexplained_busy(self, step: LoadStep) -> int:
        """How many other plates were restless, unexplained (:meth:`_explained_plates`)."""
        explained = self._explained_plates(step)
        return step.busy_levels - (step.busy_mask & explained).bit_count()

    def _explained_plates(self, step: LoadStep) -> int:
        """Plates whose restlessness cubes explain (a mask of levels).

        A falling cube strikes the hole edges of the levels above the one it
        stops on, and each strike jolts that plate's load for a moment; a
        plate struck in this drop and above this level was not shaken by
        hands. Its landing jolts the plates next to this one (they share the
        tower's walls), which the fast view, deciding within a tenth of a
        second, still sees restless. From its first strike here until the
        decision, any plate a cube is heard striking is jolted by it: the
        next cube of a quick series on its way down, a knocked cube falling
        past. And a plate that had a cube of its own in the second before
        rings on from it.
        """
        drop = self._drop_impacts(step)
        loudest = self._levels_of(drop)
        here = heard_on(drop, loudest, step.level)
        if not here:
            return 0
        # Struck on the way down: before the cube first struck this level;
        # and the plates next to this one, which its landing jolts.
        struck = {top for imp, top in zip(drop, loudest, strict=True)
                  if top > step.level and imp.t_s < here[0]}
        # Struck since, in any order: the strikes heard by the time of the
        # decision, less hands' (which shake every plate alike).
        since = [imp for imp in self._impacts if imp.t_s >= here[0] and cube_like(imp)]
        struck |= set(self._levels_of(since))
        struck |= {k for k in (step.level - 1, step.level + 1) if 0 <= k < self.n_levels}
        # And plates still ringing from a cube of their own (rapid throws).
        struck |= {k for k, memory in enumerate(self._levels)
                   if memory.landed_t >= step.t_before_s - _RING_GUARD_S}
        return sum(1 << k for k in struck)

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

    def _unclaimed_drop(self, step: LoadStep) -> list[TimedImpact]:
        """The drop's strikes after the last landing on this level or next to it.

        Strikes up to such a landing were that cube's (its last bounce timed
        it), not this one's.
        """
        claimed = max(
            self._levels[k].landed_t
            for k in range(max(0, step.level - 1), min(self.n_levels, step.level + 2))
        )
        return [imp for imp in self._drop_impacts(step) if imp.t_s > claimed]

    def add_settled_step(self, step: LoadStep) -> list[Event]:
        """A change seen by the settled view: absorbed if already accounted for."""
        level = step.level
        self.silent_cells.note_step(level)
        if level in self.disconnected:
            return []
        if not np.isfinite(self.accounted[level]):
            if self._reconnected[level] or not np.isfinite(step.before_counts):
                # Back on the tower: its load is learnt anew, not counted.
                self.accounted[level] = step.after_counts
                return []
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
        # a sign that the level's first cube was two.
        still = not self._fast_counted_one(step)
        if (
            self.scale.unit(level) is None
            and abs(delta) < _FIRST_CUBE_NOISES * step.noise_counts
            and not self._heard_a_drop(step)
        ):
            # A plate's first cube teaches its size for the session: a small
            # change that no strike came with (a drifting cell) is not one.
            self.accounted[level] = step.after_counts
            return []
        if self._jolted_by_a_neighbour(step, delta):
            # The plate moved with a cube landing next to it, by a small part
            # of that cube: the tower's walls, not a cube of its own.
            self.accounted[level] = step.after_counts
            self.stats.steps_in_disturbance += 1
            return []
        learnt_late: list[Event] = []
        if still and not self._tower_open and not self._under_hands(step):
            learnt_late = self._learnt_from_several(step, delta)
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
        if n == 0 and self._unmatched_first_cube(step, delta):
            self.scale.refuse_pool(level)
            n, residual = self.scale.count(level, delta)
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
        confidence = _count_confidence(residual)
        if n > 0 and self._under_hands(step):
            # Nobody throws while the tower is open or being opened or closed:
            # hands gripping it, the modules set back with a thump; nor is a
            # plate that moved with others, unheard, a cube's.
            self.stats.steps_in_disturbance += 1
            return self._at_rest(learnt_late)
        if n > 0:
            self.stats.settled_landings += 1
            self._drop_waiting_looks(step)
            whole = replace(step, delta_counts=delta, before_counts=before)
            parts = []
            if n == 1 and residual > _FAST_MAX_RESIDUAL and self._heard_a_drop(step):
                # Neither half a cube nor one, nor one and a half: perhaps one
                # of another kind (``CubeScale.kind_ratio``).
                self.scale.note_step(level, delta)
            if n >= 2:
                parts = self._doubted_arrivals(whole, n) or self._heard_arrivals(whole, n)
                if not parts and self._unmatched_first_cube(step, delta):
                    # One cube heard, read as several of the borrowed size.
                    self.scale.refuse_pool(level)
                    n, residual = self.scale.count(level, delta)
                    confidence = _count_confidence(residual)
                elif not parts and self._size_from_a_touch(step, n):
                    self.scale.forget(level)
                    n, residual = self.scale.count(level, delta)
                    confidence = _count_confidence(residual)
                if not parts and n == 2 and self._heard_a_drop(step):
                    self.scale.note_step(level, delta)
                if not parts and n == 2 and self.scale.one_of_the_heavier(level, delta):
                    # One cube of the heavier kind on a plate that learnt
                    # the lighter: heard as one cube's drop, nothing says two.
                    n, residual = 1, 0.0
                    confidence = _count_confidence(0.25)
                if not parts:
                    self._levels[level].doubles += int(n == 2)
                    self._levels[level].many += int(n >= _MANY_CUBES)
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
            return self._at_rest(
                learnt_late + self._landings(whole, n, confidence * 0.9, now_s, settled=True)
            )
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
        knocked = level not in (self._exposed_level(), self._exposed_at(t))
        lifted: list[Event] = []
        if knocked and self._top_taken_by_hand(level, t, -n, held, now_s):
            lifted, knocked = self._lift_top(t, now_s), False
            lifted += self._closed_since_top_lift(t, now_s)
            presses = self._presses(step)  # the level lay open after all
        grabs = [(t, -n)] if knocked or n > -2 else self._grabs(step, -n, began, t, presses)
        return [
            *lifted,
            *(Removal(t=at, t_decided=now_s, floor=level, cubes=k,
                      confidence=confidence * (0.9 if knocked else 1.0), knocked=knocked)
              for at, k in grabs),
        ]

    def _grabs(
        self, step: LoadStep, cubes: int, since_s: float, at_once_s: float, presses: list[Press]
    ) -> list[tuple[float, int]]:
        """The cubes a hand took off a plate in one settled fall, grab by grab: ``(t, cubes)``.

        Cubes taken one or two at a time, a second or two apart, are one
        fall to the settled view while fingers stay on the plate. Where a
        finger pushed before each grab (``presses``: ``_presses``), each
        push that let go is a grab (``_taken_per_press``). Otherwise each
        cube is timed when the load passed half-way past it, to stay
        (``_LEFT_FOR_S``), unless hands shook the plate; cubes that left
        within ``_GRABS_APART_S`` of each other went in one grab. One grab
        keeps the time found already (``at_once_s``).
        """
        if len(presses) >= 2:
            # Each grab pushed on the cubes and let go as they left.
            by_press = self._taken_per_press(step, cubes, presses)
            if len(by_press) > 1:
                return by_press
            if by_press:
                return [(at_once_s, cubes)]
        share = (step.after_counts - step.before_counts) / cubes
        low, high = self.load_history.extent(step.level, since_s, step.t_settled_s)
        beyond = ((low if share < 0 else high) - step.after_counts) / share
        if not beyond < _SHAKEN_CUBES:
            # Hands shook the plate past where it settled: when it passed
            # each cube's half-way says nothing of when that cube left.
            return [(at_once_s, cubes)]
        left: list[float] = []
        for k in range(cubes):
            at = self.load_history.crossed_at(
                step.level, since_s, step.t_settled_s, step.before_counts + k * share,
                step.before_counts + (k + 1) * share, stay_s=_LEFT_FOR_S,
            )
            if at is None:
                return [(at_once_s, cubes)]
            left.append(max(at, left[-1] if left else since_s))
        grabs: list[list[float]] = [[left[0]]]
        for at in left[1:]:
            if at - grabs[-1][-1] < _GRABS_APART_S:
                grabs[-1].append(at)
            else:
                grabs.append([at])
        if len(grabs) == 1:
            return [(at_once_s, cubes)]
        return [(grab[0], len(grab)) for grab in grabs]

    def _note_slide(self, step: LoadStep) -> None:
        """Show a fast step to the slide signs as it is decided (``slides.SlideSigns``)."""
        handled_since = np.inf if self._tower_open else self._last_connection_t
        self.slide_signs.note_step(
            step, self.scale.cubes(step.level, step.delta_counts), _FAST_MAX_RESIDUAL,
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
                self.slide_signs.count_slide()
                self.stats.slides_seen += 1

    def _jolted_by_a_neighbour(self, step: LoadStep, delta: float) -> bool:
        """Whether a plate with no cube size moved a third as far as a landing next door or a hand.

        The modules stack: a cube landing on one plate can shift its
        neighbours' cells by a few percent of a cube for seconds (cross-check
        model C), and such a plate's first step would teach it its cube.
        """
        if self.scale.unit(step.level) is not None:
            return False
        if any(
            m > 0
            and abs(other.level - step.level) == 1
            and step.t_before_s - _JOLT_NEAR_S
            <= other.t_settled_s
            <= step.t_settled_s + _JOLT_NEAR_S
            and abs(delta) * _JOLT_FRACTION < abs(other.delta_counts)
            for other, m in self._recent_steps
        ):
            return True
        # The neighbour's own step may not be decided yet (the settled view
        # decides each plate once it is still): its readings tell.
        # Unheard here, a plate further away that moved three times as far
        # tells the same: a hand pressing the tower moves every plate, most
        # the one it touches (our towers at 10 readings a second, where the
        # long conversions smooth a press into a still-looking change).
        heard = self._heard_here(step)
        for other in range(self.n_levels):
            near = abs(other - step.level) == 1
            if other == step.level or other in self.disconnected or not (near or not heard):
                continue
            moved = self.load_history.change(
                other, step.t_before_s, step.t_settled_s + _JOLT_NEAR_S, _JOLT_TAIL_S
            )
            unit = self.scale.unit(other)
            if not (np.isfinite(moved) and abs(delta) * _JOLT_FRACTION < abs(moved)):
                continue
            if not near:
                return True
            if unit is not None and abs(moved) >= _JOLT_CUBE * unit:
                return True
            if unit is None and (not heard or self._drop_ended_on(other, step)):
                # Neither plate knows its cube yet (the tower's first): the
                # one that moved three times as far took it, unless the
                # drop was heard on this plate and its cell reads small;
                # not when the drop ended on the neighbour, the cube having
                # only struck this plate on its way (model C tower 6, at 10
                # readings a second: 10 false landings fewer over towers
                # 1-8, 4 over 9-16, 2 landings more; nothing else changed).
                return True
        return False

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

    def _steadied(self, step: LoadStep) -> bool:
        """Whether a hand on the tower moved this plate: others moved with it, no cube heard.

        A hand steadying the tower presses or pulls on every plate a little
        (model C: 0.03-0.6 g each, for seconds); one of them may move by
        about a cube and hold there. A thrown cube strikes its way down
        (two strikes or more on the way and on its plate) and moves its
        plate alone, but for plates that other cubes landed on just before.
        """
        if len(self._unclaimed_drop(step)) > _STEADIED_STRIKES:
            return False
        units = self.scale.units()
        known = units[np.isfinite(units)]
        # A plate with no cube size yet is judged by its own step: others
        # that moved half as far with it moved with the hand.
        own = (
            _STEADIED_OWN_STEP * abs(step.delta_counts)
            if self.scale.unit(step.level) is None
            else np.inf
        )
        if known.size == 0 and not np.isfinite(own):
            return False
        usual = float(np.median(known)) if known.size else np.inf
        moved = 0
        for k in range(self.n_levels):
            if (
                k == step.level
                or k in self.disconnected
                or self._levels[k].landed_t >= step.t_before_s - _STEADIED_LANDED_S
            ):
                continue
            unit = float(units[k]) if np.isfinite(units[k]) else usual
            bar = min(_STEADIED_CUBES * abs(unit), own)
            change = self.load_history.change(
                k, step.t_before_s - BEFORE_STRIKE_S, step.t_decided_s, _JOLT_TAIL_S
            )
            moved += int(np.isfinite(change) and abs(change) >= bar)
        return moved >= _STEADIED_PLATES

    def _shaken_by_hands(self, step: LoadStep) -> bool:
        """Whether hands shook the tower as this plate moved: heard, but no strike a cube's.

        A cube's strikes stand out on the plate they hit (``trust.cube_like``);
        hands gripping the tower before a lift, or steadying it, rumble on
        every disc alike and move several plates at once. Model E's hands,
        gripping the lower plates 0.5-1.5 s before a lift, made 29 of its 37
        false landings (towers 1-16) through the settled view; this left 23
        (14 fewer) for 3 of its landings and 2 of model B's; nothing else
        changed on any model or in our evaluation. One other restless plate
        is enough (session 19: the hands hold each lower plate by chance):
        model E 3 false landings fewer on towers 1-16 and 2 in its 30-minute
        games, model B 2 landings fewer (tower 13, whose strikes sound flat).
        """
        drop = self._unclaimed_drop(step)
        return (
            bool(drop)
            and step.busy_levels >= 1
            and not any(cube_like(imp) for imp in drop)
        )

    def _unheard_under_hands(self, step: LoadStep) -> bool:
        """Whether a plate restless for long, with many others, gained unheard: a hand's doing.

        A hand steadying the tower keeps every plate restless for seconds
        (model C: 3-12 s), and one plate may end a cube's weight off. The
        settled view then sees a change seconds long; a cube that landed in
        it was heard striking that plate (loudest there or next to it, a
        weak disc heard through the wall) at some moment of it.
        """
        if (
            step.t_settled_s - step.t_before_s <= _HANDS_LONG_S
            or step.busy_levels < _HANDS_BUSY_LEVELS
            or not self._piezo_present(step.t_before_s)
        ):
            return False
        during = [imp for imp in self._impacts
                  if step.t_before_s - _HANDS_HEARD_BEFORE_S <= imp.t_s <= step.t_settled_s]
        return not any(
            cube_like(imp) and abs(top - step.level) <= 1
            for imp, top in zip(during, self._levels_of(during), strict=True)
        )

    def _handled_during(self, step: LoadStep) -> bool:
        """Whether the tower was open, or opened or closed, while the step's plate changed."""
        if self._tower_open:
            return True
        start, end = step.t_before_s - _HANDLING_GUARD_S, step.t_settled_s + _HANDLING_GUARD_S
        return any(start <= t <= end for t in self._connection_times)

    def _size_from_a_touch(self, step: LoadStep, n: int) -> bool:
        """Whether a still step of ``n`` cubes, not heard arriving apart, shows a touch's size.

        Many cubes at once, or two again and again: the plate's size was
        learnt from a hand's touch (or a jolt half a cube deep), when it
        rests on fewer than three landings; many at once twice with no
        single cube between tells it even of a size learnt from several
        such touches. Over a long settling (a quick series keeping the
        plate moving) only of a size not yet agreed on.
        """
        memory = self._levels[step.level]
        if step.t_settled_s - step.t_before_s > _AT_ONCE_S and not self.scale.size_unsure(
            step.level
        ):
            return False
        if n >= _MANY_CUBES and memory.many >= 1:
            return True
        return self.scale.learnt_from_few(step.level) and (
            n >= _MANY_CUBES or (n == 2 and memory.doubles >= 1)
        )

    def _under_hands(self, step: LoadStep) -> bool:
        """Whether hands had the tower while the settled view's step came (no cube's doing)."""
        return (
            self._handled_during(step) or self._steadied(step) or self._shaken_by_hands(step)
            or self._unheard_under_hands(step)
        )

    def _one_cube_measured(self, level: int, delta_counts: float) -> bool:
        """Whether a step measures one clean whole cube (within 0.15 of one)."""
        n, residual = self.scale.count(level, delta_counts)
        return n == 1 and residual <= _RING_MAX_RESIDUAL

    def _learnt_from_several(self, step: LoadStep, delta: float) -> list[Event]:
        """The cubes the plate's size was learnt from, but one, if several.

        See ``CubeScale.learnt_from_several``. Only a step heard as a cube's
        drop on its plate, with fewer than six other plates restless, tells; the
        size is then learnt again (from this step) and the cubes the first
        step held are counted on the plate, reported late (a landing of the
        others, timed by the first): where cubes are, told late, is better
        than not at all.
        """
        level = step.level
        m = self.scale.learnt_from_several(level, delta)
        if m < 2 or step.busy_levels >= _SEVERAL_BUSY_LEVELS:
            return []
        if not self._heard_landing_here(step):
            return []
        self.scale.forget(level)
        self.cubes_on[level] += m - 1
        self._levels[level].landings += m - 1
        self.stats.sizes_relearnt += 1
        at, self._levels[level].sized_at = self._levels[level].sized_at, None
        if at is None:
            return []
        return [Landing(t=at, t_decided=step.t_decided_s, floor=level, cubes=m - 1,
                        confidence=0.7, source="load")]

    def _fast_counted_one(self, step: LoadStep) -> bool:
        """Whether the fast view counted exactly one cube, and nothing else, during ``step``."""
        landed = self._levels[step.level].fast_landed
        singles = [t for t, m in landed if step.t_before_s <= t]
        return len(singles) == 1 and landed[-1][1] == 1

    def _unmatched_first_cube(self, step: LoadStep, delta: float) -> bool:
        """Whether a plate's first gain, no size of the cube it borrows, is its own first cube.

        Mixed cells can look matched after a few landings by chance; a cell
        reading a cube as a third of theirs then sees its cubes as steps too
        small to count, one reading it as twice theirs sees two cubes in
        each. Heard striking this very plate, as loud as a cube, such a gain
        is the plate's first cube, as on a plate with no size at all
        (``_fast_step_trusted``); a plate's first cube learnt from two that
        came together is corrected by the next (``CubeScale.count``).
        """
        if not self.scale.borrowed(step.level) or self._tower_open:
            return False
        x = self.scale.cubes(step.level, delta)
        if not (_UNMATCHED_FLOOR <= x < _UNMATCHED_CUBES or x > 1.0 / _UNMATCHED_CUBES):
            return False
        return self._heard_landing_here(step)

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

    def _heard_landing_here(self, step: LoadStep) -> bool:
        """Whether a cube's drop was heard on the step's own plate (always, with no piezos)."""
        if not self._piezo_present(step.t_before_s):
            return True
        return self._heard_here(step) and self._heard_a_drop(step)

    def track_settled_levels(self, levels: np.ndarray, times: np.ndarray, now_s: float) -> None:
        """Follow slow drift of levels whose load is accounted for (zero tracking).

        ``times``: when each level was last seen still (the end of its last
        still window), NaN where never; ``now_s``: the stream time the
        fusion has reached (a level seen still later than that may hold a
        change whose step the fusion has not been given yet).
        """
        units = self.scale.units()
        for level in range(self.n_levels):
            value = float(levels[level])
            if not np.isfinite(value) or level in self.disconnected:
                continue
            if not np.isfinite(self.accounted[level]):
                self.accounted[level] = value
            elif times[level] < self._levels[level].fast_accounted_t:
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
        return abs(x + 1.0) <= _FAST_MAX_RESIDUAL

    def _ringing(self, step: LoadStep) -> tuple[bool, bool]:
        """Whether the previous fast step on this level was recent, and a landing."""
        memory = self._levels[step.level]
        last, memory.last_fast = memory.last_fast, (step.t_decided_s, False)
        if self.scale.cubes(step.level, step.delta_counts) < -_SANK_CUBES:
            memory.sank_t = step.t_decided_s
        if last is None or step.t_settled_s - last[0] >= _RING_GUARD_S:
            return False, False
        return True, last[1]

    def _rang_then_landed(self, step: LoadStep, n: int, residual: float) -> bool:
        """Whether a clean cube came on a plate whose last fast reads were its ring.

        A plate ringing slowly (8-12 Hz, for up to a second) after a landing
        is read in part-cube steps that are not landings; the guard after
        them is for a hand, which also moves the plate down. A clean step of
        one cube, heard landing there, on a plate no fast step read lower
        within the guard, is the next cube.
        """
        memory = self._levels[step.level]
        if n != 1 or residual > _RING_MAX_RESIDUAL or step.busy_levels:
            return False
        if step.t_settled_s - memory.sank_t < _RING_GUARD_S:
            return False
        return self._heard_here(step) and self._heard_a_drop(step)

    def _step_event(self, step: LoadStep, now_s: float) -> list[Event]:
        out = self._fast_step_event(step, now_s)
        if any(isinstance(e, Landing) and e.floor == step.level for e in out):
            self._levels[step.level].last_fast = (step.t_decided_s, True)
        return out

    def _fast_step_event(self, step: LoadStep, now_s: float) -> list[Event]:
        memory = self._levels[step.level]
        step = self._joined_with_part(step)
        previous = memory.last_fast
        recent, after_landing = self._ringing(step)
        if recent and not step.revises:
            n, residual = self.scale.count(step.level, step.delta_counts)
            if not after_landing and self._rang_then_landed(step, n, residual):
                after_landing = True
            if not after_landing or n <= 0 or residual > _RING_MAX_RESIDUAL:
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
        # next door moves by part of one, either way.
        n, residual = self.scale.count(step.level, step.delta_counts)
        if n != 0 and residual <= _FAST_MAX_RESIDUAL:
            self.scale.learn_sign(step.level, step.delta_counts, cubes_added=True)
            n, residual = self.scale.count(step.level, step.delta_counts)
        if n == 0:
            self.stats.steps_below_one_cube += 1
            memory.part = (step, previous)
            return []
        other = self.scale.other_kind_residual(step.level, step.delta_counts)
        other_kind = residual > _FAST_MAX_RESIDUAL and abs(n) <= 2 and other <= _KIND_MAX_RESIDUAL
        if other_kind:
            # One cube of the other kind, in a game that mixes two: as clean
            # as one of this level's own (its size is not learnt from it).
            n, residual = (1 if n > 0 else -1), other
        if residual > _FAST_MAX_RESIDUAL:
            # Not a clean whole number of cubes: a hand or the table moved
            # the plate, or it was read while still swinging. The settled
            # view (or the fast view's second look) will tell once all is still.
            self.stats.steps_in_disturbance += 1
            self._doubt(step, remeasure=True)
            memory.part = (step, previous)
            return []
        parts: list[tuple[LoadStep, int]] = []
        if n >= 2:
            # Two cubes settling together are rare; a window riding one
            # half-wave of a slowly ringing plate looks the same. Unless each
            # cube was heard arriving on its own and the step is clean, the
            # settled view counts them (timed by this step).
            if residual <= _RING_MAX_RESIDUAL:
                parts = self._heard_arrivals(step, n)
            if not parts:
                self.stats.steps_in_disturbance += 1
                self._doubt(step, remeasure=True)
                return []
        # Confidence from how well the step matches whole cubes: a clean
        # step is within 0.1 cube; at 0.5 it is a coin toss between n and n+1.
        confidence = _count_confidence(residual)
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
        knocked = self._exposed_level() != step.level
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

    @property
    def _tower_open(self) -> bool:
        """Whether modules are off the tower (lifted, or the top one alone)."""
        return bool(self.disconnected) or self._top_off

    def _exposed_level(self) -> int | None:
        return self.exposed if self._tower_open else None

    def _doubt(self, step: LoadStep, *, remeasure: bool = False) -> None:
        """Keep a fast step left to the settled view, to time what it decides.

        ``remeasure``: doubted only for how it was measured (not for a busy
        tower or a hand), so the fast view's second look may decide it.
        """
        memory = self._levels[step.level]
        memory.doubted.append(step)
        del memory.doubted[:-_DOUBTED_KEPT]
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
            or (alone_n != 0 and alone_residual <= _RING_MAX_RESIDUAL)
        ):
            return step
        delta = part.delta_counts + step.delta_counts
        n, residual = self.scale.count(step.level, delta)
        if n < 1 or residual > _RING_MAX_RESIDUAL:
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

    def _take_revised(self, step: LoadStep) -> LoadStep | None:
        """The step a revision measures again, if it was doubted for its measure only."""
        memory = self._levels[step.level]
        first, memory.remeasurable = memory.remeasurable, None
        doubted = memory.doubted
        if first is None or first.t_before_s != step.t_before_s or first not in doubted:
            return None
        doubted.remove(first)
        return first

    def _doubted_arrivals(self, step: LoadStep, n: int) -> list[tuple[LoadStep, int]]:
        """Split a settled change of ``n`` cubes into the arrivals the fast view doubted.

        Only when the doubted steps in the change each look like whole cubes,
        add up to exactly ``n`` and came to rest apart (a plate ringing after
        one landing makes window means wander, but never by whole cubes that
        add up). They are taken off the doubted list.
        """
        level = step.level
        doubted = [
            s for s in self._levels[level].doubted
            if step.t_before_s <= s.t_settled_s <= step.t_settled_s
        ]
        counts = [self.scale.count(level, s.delta_counts) for s in doubted]
        if len(doubted) < 2 or any(m <= 0 or r > _FAST_MAX_RESIDUAL for m, r in counts):
            return []
        if sum(m for m, _ in counts) != n:
            return []
        times = [s.t_settled_s for s in doubted]
        if min(np.diff(times)) < ARRIVALS_APART_S:
            return []
        for s in doubted:
            self._levels[level].doubted.remove(s)
        share = step.delta_counts / n
        return [
            (replace(s, delta_counts=share * m, after_counts=s.before_counts + share * m), m)
            for s, (m, _) in zip(doubted, counts, strict=True)
        ]

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
        level = step.level
        since = max(step.t_before_s, self._levels[level].landed_t)
        drop = [imp for imp in self._drop_impacts(step) if since < imp.t_s <= step.t_settled_s]
        heard = self._levels_of(drop)
        strikes = strikes_on(drop, heard, level)
        if not strikes:
            return []
        above = [imp.t_s for imp, top in zip(drop, heard, strict=True) if top > level]
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

    def _looks_like_cubes(self, step: LoadStep) -> bool:
        n, residual = self.scale.count(step.level, step.delta_counts)
        return n > 0 and residual <= _FAST_MAX_RESIDUAL

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

    def _landings(
        self, step: LoadStep, n: int, confidence: float, now_s: float, *, settled: bool = False,
        learn: bool = True,
    ) -> list[Event]:
        """A cube arrived on ``step.level``: its landing (perhaps the end of a knock-down).

        ``learn=False``: a cube of the other kind, whose size the level does not learn.
        """
        level = step.level
        rested_by = step.t_settled_s
        start = None
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
        if seen is not None and not self._struck_after(level, seen.t_settled_s, rested_by):
            # The fast view saw this change settle but did not trust it: the
            # cube came to rest then, not when the settled view was sure.
            rested_by, start = seen.t_settled_s, seen.t_before_s
        elif (
            fast is not None and step.t_before_s <= fast < rested_by
            and not self._struck_after(level, fast, rested_by)
        ):
            rested_by = fast  # the settled view decides later than the cube came to rest
        drop = [
            imp
            for imp in self._drop_impacts(step)
            if imp.t_s <= rested_by and (start is None or imp.t_s >= start - _DROP_LOOKBACK_S)
        ]
        # This cube's strikes come after the level's previous landing (in
        # rapid throws the drop window holds that cube's strikes too): its
        # last bounce there, and a plate above it clipped in turn by two
        # cubes is not one struck twice by this one.
        own_drop = [imp for imp in drop if imp.t_s > self._levels[level].landed_t]
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
            stopped = (
                self._stopped_above(level, thrown, thrown[0].t_s - BEFORE_STRIKE_S, judged_until)
                if n == 1 and thrown and not self.slides else None
            )
            if stopped is not None and self._recent_removal_above(
                step, since_s=thrown[0].t_s - BEFORE_STRIKE_S
            ) in (None, stopped):
                # The thrown cube stopped on an occupied plate above (it swung
                # like a landing) and knocked a cube down to this level; that
                # plate's load did not change: one came, one left.
                knocked_from = stopped
                at = self._last_strike_on_level(drop, stopped)
                # A later look at this drop must not find the stop again; the
                # next throw's may (two cubes in turn can stop on one plate).
                self._levels[stopped].stopped_t = at
                self._levels[stopped].stopped_guess = at
                self._levels[stopped].landed_t = max(at, self._levels[stopped].landed_t)
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
        self.cubes_on[level] += n
        self._levels[level].landings += n
        if n == 1:
            self._levels[level].doubles = 0
            self._levels[level].many = 0
        if settled:
            self.accounted[level] = step.after_counts
        else:
            self._account_fast(step)
            landed = self._levels[level].fast_landed
            landed.append((step.t_settled_s, n))
            del landed[:-_DOUBTED_KEPT]
        memory = self._levels[level]
        memory.landed_t = max(t, memory.landed_t)
        self.silent_cells.note_landing(level, t, now_s)
        guessed = memory.stopped_guess
        if (
            guessed is not None
            and step.t_before_s - LOAD_LAG_S <= guessed <= step.t_settled_s
            and (last is None or last.t_s <= guessed + _STOP_BOUNCES_S)
        ):
            # A thrown cube was inferred to have stopped here, knocking one
            # down; the plate gained it after all (the cube below was another
            # throw's): that landing is reported already. A plate ringing on
            # from then may show the gain of the next cube as spanning the
            # stop too: that one was heard striking here later.
            memory.stopped_guess = None
            n -= 1
            if n == 0:
                return out
        out.append(
            Landing(
                t=t,
                t_decided=now_s,
                floor=level,
                cubes=n,
                confidence=confidence,
                source="load",
                knocked_from=knocked_from,
            )
        )
        return out

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
        levels = []
        for imp in drop:
            known = heard.get(id(imp))
            if known is None or known[0] is not imp or known[1] != version:
                known = (imp, version, self.acoustic.classify(imp.peaks).level)
                heard[id(imp)] = known
            levels.append(known[2])
        if len(heard) > _HEARD_AS_KEPT:
            recent = {id(imp) for imp in self._impacts}
            kept = {k: v for k, v in heard.items() if k in recent}
            self._heard_as = kept if len(kept) <= _HEARD_AS_KEPT // 2 else {}
        return levels

    def _drop_impacts(self, step: LoadStep) -> list[TimedImpact]:
        """Impacts of the drop that ended in this step (from shortly before it began)."""
        start = min(step.t_before_s, step.t_settled_s - _DROP_LOOKBACK_S)
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

    def _stopped_above(
        self, level: int, drop: list[TimedImpact], t0_s: float, t1_s: float
    ) -> int | None:
        """An occupied level above where the thrown cube stopped, knocking one down.

        Its plate swung like a landing and was struck again (a bounce, not
        the single strike of a cube passing its hole edge) or, struck once,
        long enough before this level for a cube to fall from rest; and its
        load is where it was: one cube came, one left. Strikes on the plate
        just above this level soon after one on it are this cube's ceiling,
        not the plate's own; a plate bounced on before the cube below fell
        from rest needs less swing.
        """
        loudest = self._levels_of(drop)
        on_level = heard_on(drop, loudest, level)
        after = [imp for imp in self._impacts if drop[-1].t_s < imp.t_s <= t1_s]
        heard_after = list(zip((imp.t_s for imp in after), self._levels_of(after), strict=True))
        fast_on_level = fast_arrivals(drop, loudest, level)
        alone = t0_s - max(memory.landed_t for memory in self._levels) > STOP_ALONE_S
        best, best_ratio = None, 0.0
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
                or j in self.disconnected
                or any(s.level == j for s in self._pending_steps)
            ):
                continue
            unit = self.scale.unit(j)
            change = self.load_history.change(
                j, window.since_s, window.until_s, _STOPPED_TAIL_S, window.base_from_s
            )
            if unit is None or not abs(change) < _STOPPED_NET_CUBES * unit:
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
            if below and bounced_past(struck, below[0]):
                continue  # struck and left in the air, then through the hole
            struck = one_hit(struck)
            if len(struck) < 2 and not fell:
                continue  # struck once, just before a level below: a clipped edge
            bounced = len(struck) >= 2 and bool(below) and fell
            needed = _STOPPED_SWING_BOUNCED if bounced else _STOPPED_SWING
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
        if passed_empty:
            # Bounced on a plate with no cube to knock down, swung it like a
            # landing and went on: cubes here do not stop where they bounce.
            self.stats.bounced_on_empty += 1
            self.slide_signs.count_bounce_on_empty()
        return best

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
            if k in (j, level) or k in self.disconnected or unit is None:
                continue
            usual = self._usual_swing(k, unit)
            swing = self.load_history.swing(k, window.since_s, until_s, window.base_from_s)
            if usual > 0 and np.isfinite(swing):
                others.append(swing / usual)
        return len(others) < _SWUNG_ALONE_OTHERS or median(others) < _SWUNG_ALONE_SHARE * ratio

    def _usual_swing(self, level: int, unit: float, *, pooled_only: bool = False) -> float:
        """How far a landing swings this plate: its own median, else the tower's in cubes."""
        own = self._levels[level].landing_swings
        if len(own) >= _SWING_SAMPLES and not pooled_only:
            return float(median(own))
        pooled = [
            swing / abs(u)
            for k, memory in enumerate(self._levels)
            if (u := self.scale.unit(k)) is not None and u != 0
            for swing in memory.landing_swings
        ]
        if len(pooled) < (1 if pooled_only else _SWING_SAMPLES):
            return float("nan")
        return float(median(pooled)) * abs(unit)

    def _last_strike_on_level(self, drop: list[TimedImpact], level: int) -> float:
        on = heard_on(drop, self._levels_of(drop), level)
        return on[-1] if on else drop[0].t_s

    def _recent_removal_above(self, step: LoadStep, since_s: float = -np.inf) -> int | None:
        """The level above that lost a cube in this drop: where this one was knocked from.

        ``since_s``: only a loss that began after then (the thrown cube's
        first strike): in quick series an earlier throw's knock-down is
        still recent.
        """
        for other, m in reversed(self._recent_steps):
            if (
                m < 0
                and other.level > step.level
                and other is not step
                and other.t_settled_s >= since_s
            ):
                return other.level
        return None

    def _removal_time(
        self, step: LoadStep, since_s: float | None = None, presses: list[Press] | None = None
    ) -> float:
        """When the cubes left the plate: its load passed half-way to where it settled, to stay.

        A hand presses the plate before it lifts the cubes off (0.15-1 s on
        the cross-check towers), so the step begins well before they leave.
        When it pushed hard, they left as it let go (``_presses``, looked
        for over the whole fall: the fast view may see the fall only after
        the push; ``presses``, if already found). ``since_s``: where to look
        for the crossing from (the step's start by default).
        """
        start = step.t_before_s if since_s is None else since_s
        if presses is None:
            presses = self._presses(step)
        if presses:
            return presses[-1].let_go_s
        left = self.load_history.crossed_at(
            step.level, start, step.t_settled_s, step.before_counts, step.after_counts,
            stay_s=_LEFT_FOR_S,
        )
        return start if left is None else max(start, left)

    # -- connections -------------------------------------------------------
    def _connection(self, conn: LoadConnection) -> list[Event]:
        self._last_connection_t = max(self._last_connection_t, conn.t_decided_s)
        self._connection_times.append(conn.t_s)
        self.accounted[conn.level] = np.nan
        self._reconnected[conn.level] = True
        if not conn.connected:
            if self._top_off:
                self._top_off = False
                self.exposed = None
                self._close_opening(conn.t_s)
            self.disconnected.add(conn.level)
            self._disconnect_t[conn.level] = conn.t_s
            if self._pending_lift_deadline is None:
                self._pending_lift_deadline = conn.t_decided_s + self.lift_gather_s
            # Steps of a lifted level (hands gripping the module) are moot.
            self._pending_steps = [s for s in self._pending_steps if s.level != conn.level]
            return []
        self.disconnected.discard(conn.level)
        self._disconnect_t.pop(conn.level, None)
        if self.disconnected:
            return []
        self._pending_lift_deadline = None
        if self.exposed is None:
            return []
        self.exposed = None
        self._close_opening(conn.t_s)
        return [Closed(t=conn.t_s, t_decided=conn.t_decided_s)]

    def _emit_lift(self, now_s: float) -> list[Event]:
        self._pending_lift_deadline = None
        if not self.disconnected:
            return []
        exposed = max(0, min(self.disconnected) - 1)
        if exposed == self.exposed:
            return []
        self.exposed = exposed
        t = min(self._disconnect_t.values())
        self._close_opening(t)
        self._openings.append([t, np.inf, exposed])
        return [Lift(t=t, t_decided=now_s, exposed=exposed)]

    def _top_taken_by_hand(
        self, level: int, t_s: float, cubes: int, held: int, now_s: float
    ) -> bool:
        """Whether ``cubes`` that left a closed tower's top plate at ``t_s`` left by hand.

        The plate held them (within a cube or a quarter of a pile: a scoop
        is counted less well than landings), no throw landed just before,
        and nothing was heard falling below it (``topmodule.taken_by_hand``):
        the top module is off.
        """
        if level != self.n_levels - 1 or self.disconnected or held < 1:
            return False
        if cubes - held > max(1, held // _TOP_COUNT_SLACK):
            return False  # more than the plate held: no cubes' leaving
        if max(memory.landed_t for memory in self._levels) >= t_s - _TOP_THROWN_S:
            return False
        impacts = list(self._impacts)
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
        return self._close_top(below[0].t_s, now_s, handling=not cube_like(below[0]))

    def _lift_top(self, t_s: float, now_s: float) -> list[Event]:
        """The top module was lifted before cubes left the top plate at ``t_s``."""
        top = self.n_levels - 1
        since = max(memory.landed_t for memory in self._levels)
        t_lift = lifted_at([imp.t_s for imp in self._impacts if since < imp.t_s <= t_s], t_s)
        self._top_off = True
        self.exposed = top
        self.stats.top_lifts += 1
        self._last_connection_t = max(self._last_connection_t, now_s)
        self._connection_times.append(t_lift)
        self._close_opening(t_lift)
        self._openings.append([t_lift, np.inf, top])
        return [Lift(t=t_lift, t_decided=now_s, exposed=top)]

    def _close_top(self, t_s: float, now_s: float, *, handling: bool) -> list[Event]:
        """The top module was set back by ``t_s``: a thump or hands then, or a cube falling past it.

        Only the thump (or the hands' sound) is handling: the plates it
        jolts, and the hands letting go of the tower, bring no cubes; a
        cube heard falling is a throw whose landing counts.
        """
        self._top_off = False
        self.exposed = None
        if handling:
            self._last_connection_t = max(self._last_connection_t, now_s)
            self._connection_times.append(t_s)
        self._close_opening(t_s)
        return [Closed(t=t_s, t_decided=now_s)]

    def _close_opening(self, t_s: float) -> None:
        if self._openings and not np.isfinite(self._openings[-1][1]):
            self._openings[-1][1] = t_s

    def _history_horizon(self, now_s: float) -> float:
        """The clock by which the load history forgets (``LoadHistory.forget_before``).

        While a level lies open, and for ``_OPEN_HISTORY_AFTER_S`` after the
        close, the readings from just before the lift are kept (at most
        ``_OPEN_HISTORY_S``): the settled view decides the cubes taken out
        only when the hands have left, and the grabs are read back from them.
        """
        if not self._openings:
            return now_s
        start, end, _ = self._openings[-1]
        if now_s - end > _OPEN_HISTORY_AFTER_S:
            return now_s
        keep_from = start - _PRESS_LEVEL_S - _PRESS_EDGE_S
        return max(now_s - _OPEN_HISTORY_S, min(now_s, keep_from + self.load_history.keep_s))

    def _presses(self, step: LoadStep) -> list[Press]:
        """A finger's hard pushes on a falling plate while its level lay open, over the fall."""
        since_s = step.t_before_s
        opened = self._opening_of(step.level, since_s, step.t_settled_s)
        if opened is None:
            return []
        # Only while the level lay open: the modules set back jolt every
        # plate as hard as a finger does, just before the close.
        measured = abs(self.scale.cubes(step.level, step.delta_counts))
        cubes = max(1, round(measured)) if np.isfinite(measured) else 1
        return self.load_history.presses(
            step.level, max(since_s, opened[0]), min(step.t_settled_s, opened[1] - _SET_BACK_S),
            step.before_counts, step.after_counts, _GRAB_PRESS / cubes,
        )

    def _taken_per_press(
        self, step: LoadStep, cubes: int, presses: list[Press]
    ) -> list[tuple[float, int]]:
        """How many of ``cubes`` each press took: the load before it against the load after it.

        Rounded to whole cubes that add up to ``cubes``; presses that took
        none are left out. Empty when a press leaves no readings to tell by.
        """
        share = (step.after_counts - step.before_counts) / cubes
        # Pushes closer than a grab's return are one reach's, and so is a
        # push begun before the plate's load after the last could be read.
        reaches = [presses[0]]
        for press in presses[1:]:
            if (
                press.let_go_s - reaches[-1].let_go_s < _GRABS_APART_S
                or press.began_s - reaches[-1].let_go_s < _PRESS_READ_S
            ):
                reaches[-1] = Press(reaches[-1].began_s, press.let_go_s)
            else:
                reaches.append(press)
        presses = reaches
        taken = []
        for i, press in enumerate(presses):
            until = presses[i + 1].began_s if i + 1 < len(presses) else step.t_settled_s
            since = presses[i - 1].let_go_s + _PRESS_EDGE_S if i else -np.inf
            pre = self.load_history.level_near(
                step.level, max(since, press.began_s - _PRESS_LEVEL_S),
                press.began_s - _PRESS_EDGE_S,
            )
            post = self.load_history.level_near(
                step.level, press.let_go_s + _PRESS_EDGE_S,
                min(until - _PRESS_EDGE_S, press.let_go_s + _PRESS_LEVEL_S),
            )
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
        return [(p.let_go_s, c) for p, c in zip(presses, counts, strict=True) if c > 0]

    def _opening_of(self, level: int, t0_s: float, t1_s: float) -> tuple[float, float] | None:
        """The last time ``level`` lay open within ``[t0, t1]``: ``(from, to)``, or None."""
        for start, end, exposed in reversed(self._openings):
            if int(exposed) == level and start <= t1_s and end >= t0_s:
                return float(start), float(end)
        return None

    def _exposed_at(self, t_s: float) -> int | None:
        """The level that lay open at stream time ``t_s`` (None: the tower was closed)."""
        for start, end, exposed in reversed(self._openings):
            if start <= t_s <= end:
                return int(exposed)
        return None

    # -- disturbances and acoustic-only ----------------------------------------
    def _is_wide(self, imp: TimedImpact) -> bool:
        if len(imp.channels) < DEFAULT_WIDE_IMPACT_CHANNELS:
            return False
        profile = loudness_profile(imp.peaks)
        return bool(-float(np.median(profile)) <= DEFAULT_WIDE_IMPACT_FLATNESS_DB)

    def _disturbance(
        self, t_s: float, now_s: float, settle_until: float | None = None
    ) -> list[Event]:
        until = max(t_s, settle_until or t_s) + self.coincidence_s
        self._disturbance_until = max(self._disturbance_until, until)
        self._drop = _Drop()
        if t_s - self._last_disturbance_t < self.coincidence_s:
            return []
        self._last_disturbance_t = t_s
        return [Disturbance(t=t_s, t_decided=max(now_s, t_s))]

    def _resting_level(
        self, impacts: list[TimedImpact]
    ) -> tuple[int, float, list[TimedImpact]]:
        """Where a drop's last strikes say its cube rests: level, confidence, strikes pooled."""
        # The cube rests where its last bounces are: strikes before them are
        # hole edges on the way down. The evidence of the last few strikes
        # heard loudest on the same level is pooled, so that the level's
        # signature, not one noisy profile, decides.
        final = impacts[-_FINAL_STRIKES:]
        loudest = loudest_levels(final)
        peak_db = [20.0 * np.log10(max(float(np.max(imp.peaks)), 1e-9)) for imp in final]
        while len(final) > 1 and any(
            loudest[i] == loudest[-1] - 1 and peak_db[i] - peak_db[-1] >= _CEILING_DB
            for i in range(len(final) - 1)
        ):
            # A faint last strike just above a loud one: the cube bouncing
            # up against the plate over it, not where it rests.
            final, loudest, peak_db = final[:-1], loudest[:-1], peak_db[:-1]
        final = [imp for imp, top in zip(final, loudest, strict=True) if top == loudest[-1]]
        posterior = np.sum(
            [self.acoustic.classify(imp.peaks, heard_crosstalk=True).posterior for imp in final],
            axis=0,
        )
        level = int(np.argmax(posterior))
        return level, float(posterior[level] / posterior.sum()), final

    def _decide_drop(self, now_s: float) -> list[Event]:
        impacts, self._drop = self._drop.impacts, _Drop()
        if not impacts:
            return []
        last = impacts[-1]
        if len(impacts) == 1 and len(last.channels) >= DEFAULT_WIDE_IMPACT_CHANNELS:
            # One strike heard through the whole tower and nothing after it:
            # a knock on the table or the tower (a falling cube strikes hole
            # edges and bounces; our noisy sessions: 44 such drops, all knocks).
            return self._disturbance(last.t_s, now_s)
        level, confidence, _ = self._resting_level(impacts)
        self.acoustic_gap.decided(last.t_s, level)
        self.stats.acoustic_landings += 1
        heard = loudest_levels(impacts)
        stayed = stayed_above(impacts, level, heard)
        if stayed is not None:
            # The thrown cube stopped up there and knocked the one heard last down.
            at = heard_on(impacts, heard, stayed)[-1]
            return self._heard_knock_down(stayed, at, level, last.t_s, confidence, now_s)
        below = knocked_below(impacts, level, heard)
        if below is not None:
            # The cube heard last stopped here and knocked one further down.
            at = heard_on(impacts, heard, below)[-1]
            return self._heard_knock_down(level, last.t_s, below, at, 0.7, now_s)
        return [Landing(t=last.t_s, t_decided=now_s, floor=level, cubes=1,
                        confidence=confidence, source="acoustic")]

    def _heard_knock_down(
        self, stopped: int, t_stopped: float, knocked_to: int, t_knocked: float,
        confidence: float, now_s: float,
    ) -> list[Event]:
        """Events of a knock-down heard without load cells: a stop, a removal, a landing."""
        self.stats.knockdowns_seen += 1
        return [
            Landing(t=t_stopped, t_decided=now_s, floor=stopped, cubes=1,
                    confidence=0.7, source="acoustic"),
            Removal(t=t_stopped, t_decided=now_s, floor=stopped, cubes=1,
                    confidence=0.7, knocked=True),
            Landing(t=t_knocked, t_decided=now_s, floor=knocked_to, cubes=1,
                    confidence=confidence, source="acoustic", knocked_from=stopped),
        ]
