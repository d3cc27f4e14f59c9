"""Where a thrown cube stopped on a plate and knocked that plate's cube down.

Such a plate's load ends where it was (one cube came, one left), so the
fusion finds it by how the plate swung and was struck while the knocked
cube fell below. These pure functions say which strikes and which stretch
of the plate's readings belong to the thrown cube; in a quick series the
drop window also holds the cubes before and after it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dsp.detect.piezo import TimedImpact
from dsp.detect.strikes import ARRIVALS_APART_S, CEILING_REACH_S

# Why 40 ms: a plate struck only once (its bounces drowned by the knocked
# cube's landing below) may be a hole edge the thrown cube clipped on its
# way down. A knocked cube starts from rest and falls a module (2.8-3.4 cm)
# or more, which takes 40-90 ms from the strike that knocked it; a thrown
# cube passing the edge is already fast and strikes the plate below 20-50 ms
# later. On both simulators this found 13 of 14 and 7 of 7 such throws where
# a swing of 1.2 typical landings had found 1 and 0, for 2 passes taken for
# stops instead of none. The plate below is whichever is struck next, not
# only the one the cube came to rest on: a cube that reached a hole edge
# further down that soon was falling fast (a third fewer false stops).
KNOCKED_FALL_S = 0.04
# Strike times lie on the 4 ms frame grid, and their differences are not
# exact: the fall must be longer than 40 ms, a frame or more (exactly 40 ms
# read as either; as 40 it made 2 false stops in quick series on the
# cross-check towers 13-24).
_TIME_EPS_S = 1e-6
# Why two thirds of a fall from rest over a module (49 ms, 52 on the frame
# grid): a cube that reached the plate just below that late can only have
# left this plate at rest (passing cubes take 20-50 ms on both simulators),
# so the plate a cube stopped on, struck once, needs only to have swung
# under half as far as a landing (STOP_SWING_FELL). Over our sessions, all
# 32 cross-check towers and 16 fresh ones (seeds 33-48) this found 11 stops
# that three quarters (57 ms) and 0.55 of a swing had missed, and no false
# one: plates a cube passed that late swung at most 0.42 of a landing on our
# towers (session 12). A plate struck twice keeps the bounce bar
# (``fusion._STOPPED_SWING_BOUNCED``): a bounce below heard on it makes the
# fall look long.
CLEAR_FALL_S = 0.65 * CEILING_REACH_S
STOP_SWING_FELL = 0.45
# Only for a throw that came alone (no landing anywhere in the second
# before): in quick series a plate may still swing from the cube before.
STOP_ALONE_S = 1.0
# Why 50 ms: a plate is measured from just before the strike that began
# the drop (or the thrown cube's first strike there): the HX711 reading in
# progress at a strike may already show it.
BEFORE_STRIKE_S = 0.05
# Why 50 ms: the HX711's filter settles in four readings, so a load change
# shows in the readings up to that long after the strike that caused it: a
# plate can still read as before (a still window ending) just after the
# thrown cube's last strike there, and the gain is that cube's.
LOAD_LAG_S = 0.05


# Why 45 ms: onsets on one plate closer than that to the first are one
# impact (a tumbling cube's edges and corners, a plate that rings up
# again), not bounces: a cube that stopped there bounces for longer. Model D,
# whose strikes are cut from real drum-pad recordings, shows 2-3 onsets
# 40-50 ms apart from one strike; counted as bounces, they made cubes that
# passed a plate look like cubes that stopped on it.
ONE_HIT_S = 0.045
# Why 0.17 s after one hit, 0.21 s after strikes spread over less than
# 0.12 s: a knocked cube falls as soon as the thrown one strikes it, and is
# heard below 0.05-0.2 s after that first strike (all our models); a cube
# that struck a plate and was heard below only that late was in the air in
# between: it bounced off the plate and fell through the hole. A cube that
# bounced on the plate longer than that may have pushed the cube there off
# at its last bounce (our towers: stops heard below 0.2-0.3 s after the
# first of 3-4 bounces). Over all models this kept 14 of 42 false stops
# away for 9 of 812 found; model D (passing strikes swing a plate like a
# landing at 10 readings a second): 262 -> 131 false stops, 89 -> 88 found.
STRUCK_ONCE_FALL_S = 0.17
STOP_FALL_S = 0.21
STOP_BOUNCES_SPAN_S = 0.12
# Why 0.3 s whatever the bounces: no stop on any model was heard below later
# than 0.29 s after its first strike; model B's cubes that rest a moment
# and slide on were, 0.3-0.5 s later (34 false landings fewer over its 64
# sessions, one landing less; one less on our 32 rapid sessions too).
STOP_FALL_LONGEST_S = 0.3
# Why 50 ms to 0.4 s: after a strike's own blow has passed through the
# converter (four readings at 80 a second) and while a cube that stayed
# there still bounces and settles (``fusion._STOP_HELD_SWING``).
STOP_HELD_FROM_S = 0.05
STOP_HELD_UNTIL_S = 0.4
# Why one reading: a slow converter (10 a second) integrates a strike's blow
# into the reading that covers it, up to a reading after the strike; the
# window begins once that reading is in (0.1 s at 10 a second, 50 ms as
# before at 20 a second and faster). Model D's towers at 10 a second took
# such blows for plates moving on: false landings 36 -> 5 and 13 -> 6
# (towers 1-8, 9-16) for 2 stops fewer there and 3 on model C's; 0.8 of a
# reading left 24 and 8; 1.5 cost 18 of model D's stops and 9 of C's.
STOP_HELD_READINGS = 1.0


def stop_held_window(struck_s: float, reading_interval_s: float) -> tuple[float, float]:
    """When a plate struck at ``struck_s`` still moves if the cube stayed: ``(from, until)``.

    ``STOP_HELD_FROM_S`` to ``STOP_HELD_UNTIL_S`` after the strike, both
    moved later when the converter's readings are so far apart that the
    strike's own blow still shows ``STOP_HELD_FROM_S`` after it.
    """
    later = 0.0
    if np.isfinite(reading_interval_s):
        later = max(0.0, STOP_HELD_READINGS * reading_interval_s - STOP_HELD_FROM_S)
    return struck_s + STOP_HELD_FROM_S + later, struck_s + STOP_HELD_UNTIL_S + later


def one_hit(struck: list[float]) -> list[float]:
    """A plate's strikes as bounces: all within ``ONE_HIT_S`` of the first are one hit."""
    return struck[:1] if struck and struck[-1] - struck[0] < ONE_HIT_S else struck


def bounced_past(struck: list[float], below_s: float) -> bool:
    """Whether a cube that struck a plate at ``struck`` went on past it, heard below at ``below_s``.

    Rather than stopping there and knocking that plate's cube down: the
    plate below was struck too long after for a cube knocked off at once.
    """
    span = struck[-1] - struck[0]
    gap = below_s - struck[0]
    if gap >= STOP_FALL_LONGEST_S:
        return True
    if span < ONE_HIT_S:
        return gap >= STRUCK_ONCE_FALL_S
    return span < STOP_BOUNCES_SPAN_S and gap >= STOP_FALL_S


def fell_from_rest(struck_s: float, below_s: float) -> bool:
    """Whether a cube struck below at ``below_s`` can have fallen from rest on ``struck_s``."""
    return below_s - struck_s > KNOCKED_FALL_S + _TIME_EPS_S


def fell_clearly(struck_s: float, below_s: float) -> bool:
    """Whether the cube struck below at ``below_s`` came too late to have passed at ``struck_s``."""
    return below_s - struck_s >= CLEAR_FALL_S


def fast_arrivals(drop: list[TimedImpact], levels: list[int], level: int) -> list[float]:
    """Times of the strikes on ``level`` by a cube that came down fast.

    A strike there more than a fall from rest after one on the plate just
    above is the knocked cube, which fell from rest: it does not bounce back
    up to that plate, so a strike there soon after is no ceiling hit.
    """
    return [
        imp.t_s for i, (imp, top) in enumerate(zip(drop, levels, strict=True))
        if top == level
        and not (i > 0 and levels[i - 1] == level + 1
                 and fell_from_rest(drop[i - 1].t_s, imp.t_s))
    ]


@dataclass(frozen=True)
class StopSeen:
    """A plate above where the thrown cube seems to have stopped, knocking one down.

    Attributes
    ----------
    level : int
        The plate.
    lighter : bool
        It holds measurably less than before the throw
        (``STOP_LIGHTER_CUBES``): another cube sits there now.
    since_s, base_from_s : float
        Its load before the throw is read before ``since_s``, from no
        earlier than ``base_from_s`` (``PlateWindow``).
    told : bool
        False on a tower whose passing cubes swing plates like landings
        (``PassSwings.stops_told``): the stop is not suspected, only weighed
        again once its plate is still.
    """

    level: int
    lighter: bool = False
    since_s: float = -np.inf
    base_from_s: float = -np.inf
    told: bool = True


@dataclass
class SuspectedStop:
    """A stop only suspected when the landing below was told, weighed again as its plate stills.

    Attributes
    ----------
    level : int
        The plate the thrown cube may have stopped on.
    below : int
        The level of the landing told as the thrown cube's (``maybe_stopped_on``).
    t_s : float
        The thrown cube's last strike on the plate: when it came to rest there.
    since_s, base_from_s : float
        The plate's load before the throw is read before ``since_s``, from no
        earlier than ``base_from_s`` (``PlateWindow``).
    due_s, last_s : float
        When the plate is next weighed, and when for the last time
        (``STOP_REWEIGH_FROM_S``, ``STOP_REWEIGH_UNTIL_S`` after the landing below).
    sign : int
        Which way the last weighing found the plate changed (0: not measurably).
    """

    level: int
    below: int
    t_s: float
    since_s: float
    base_from_s: float
    due_s: float
    last_s: float
    sign: int = 0


@dataclass(frozen=True)
class PlateWindow:
    """The stretch of a plate's readings that tells whether the thrown cube stayed there.

    Attributes
    ----------
    since_s, until_s : float
        The swing and the net change are measured over this stretch.
    base_from_s : float
        The plate's level before ``since_s`` is read from no earlier than this.
    gained : bool
        A cube arrived there with the thrown one: not one in, one out.
    """

    since_s: float
    until_s: float
    base_from_s: float
    gained: bool


def plate_window(
    struck: list[float],
    gains: list[tuple[float, float]],
    later_strikes: list[float],
    t0_s: float,
    t1_s: float,
) -> PlateWindow:
    """Where to judge a plate the thrown cube struck at ``struck`` (its run of bounces there).

    Parameters
    ----------
    struck : list of float
        The thrown cube's strikes on the plate, in order (not empty).
    gains : list of (float, float)
        Gains the fast view saw on the plate: (last still before, settled).
    later_strikes : list of float
        Strikes heard on the plate, in the drop and after it.
    t0_s, t1_s : float
        The drop's start and the end of the time it is judged up to.

    A gain begun after the thrown cube's bounces there, or a strike there a
    throw's interval later, is the next cube's: the plate is judged up to
    it (a knocked cube that fell far rests late). A gain settled before the
    thrown cube first struck was the cube before, landed there: the plate is
    read from after it, and from the thrown cube's first strike. A gain
    begun before the bounces ended is a cube that arrived with the thrown
    one, unless it settled only after ``t1_s`` (the plate rang on from the
    stop until the next cube settled it).
    """
    bounced_until = struck[-1] + LOAD_LAG_S
    later = [t for t in later_strikes if t >= struck[-1] + ARRIVALS_APART_S]
    until = min([t1_s, *(a for a, _ in gains if a > bounced_until), *later])
    settled = [b for _, b in gains if b < struck[0]]
    since = t0_s
    if any(b >= t0_s for b in settled):
        since = max(t0_s, struck[0] - BEFORE_STRIKE_S)
    gained = any(a <= bounced_until and struck[0] <= b <= t1_s for a, b in gains)
    return PlateWindow(since, until, max(settled, default=-np.inf), gained)


# Why a stop is suspected, never reported, and why 0.4: a cube passing an
# occupied plate on its way down strikes and swings it, and on most towers
# just as a cube that stopped there and knocked that plate's cube down: over
# the fourteen cross-check models (docs/crosscheck.md, run 42) the stops
# these rules found were right 822 times and passes 947 times; on nine of
# the thirteen models written blind to this detector 3 in 4 were passes,
# and no plate swing, fall timing or tower-wide rate told those towers from
# the four where they were right (model O, written after this: 69 right,
# 276 passes). Reported as landings they made 30-140
# false landings an hour there. So the landing below stays the thrown
# cube's, carrying the suspicion (``Landing.maybe_stopped_on``) and the
# share of suspicions that were stops as its chance: 761 of 1,892 over the
# fifteen models, once the stops weighed by a dip (below) are reported.
# The app's tower model keeps both stories until a level is opened. A cube
# rests on that landing's floor either way, so its confidence stands.
STOP_SUSPECTED_SHARE = 0.4


# Why half a cube either way, held 0.1 s: a cube knocked off a plate
# before the thrown one's weight is on it leaves the plate a cube lighter
# for a moment, longer than a strike's spike lasts; a cube passing that
# strikes the plate hard swings it as far up as down, and a median over
# 0.1 s spans a whole swing of a plate ringing at 10 Hz or faster. Over the
# fifteen models' suspected stops, a plate held half a cube lighter and
# never half a cube heavier was a stop 204 times and a pass 6 times (C
# 61 / 0, K 54 / 0, L 22 / 0, N 22 / 0, G 17 / 4, E 15 / 0, F 7 / 0, O
# 4 / 1, M 2 / 0, H 0 / 1); held 60 ms, 104 / 6; 0.15 s, 153 / 4. Such a
# stop is weighed, as one the fast view saw leaving.
STOP_DIP_HELD_S = 0.1
STOP_DIP_CUBES = 0.5
STOP_DIP_ABOVE = 0.5

# Why a twentieth of a cube lighter, by three times the plate's noise
# (session 45): a cube that stopped and knocked another down left the
# plate holding a different cube, resting elsewhere on it: cubes differ in
# mass by wood and colour, and where a cube rests decides the share of it
# the cell sees. A cube that passed left the plate's cube where it was.
# Over the suspected stops of models A-S (net change measured as the stop
# is judged), lighter by a tenth of a cube or more, by three times the
# plate's noise over the 1.5 s before the throw, was a stop 92 times and a
# pass 21 (I 3 / 7, H 5 / 5: towers read 10 times a second, noisy cells);
# heavier by as much, 163 and 78 (G 4 / 17, H 8 / 21, O 7 / 7): a passing
# cube's blow leaves a plate reading high more often than low. The noise
# is the larger of the plate's over the last 0.5 s before the throw and
# over the readings the change ends on: a plate still ringing then reads
# its change from the fit of its ringing, off by a twentieth of a cube
# and more (model P's half-hour sessions: 11 false landings for 2 right
# without it; models A-S 25 right and 13 false, our evaluation's single
# throws 3.1 points, whose stop plates all still ring then). And only
# where the converter reads three times or more in the 0.1 s the change
# is the mean of (read 10 times a second, it is one reading of a plate
# that may still swing: 19 stops, 9 passes). Such a stop is weighed:
# models A-S 36,168 -> 36,197 landings right, 1,005 -> 1,008 false; at a
# tenth of a cube fewer.
STOP_LIGHTER_CUBES = 0.05
STOP_LIGHTER_NOISES = 3.0
STOP_LIGHTER_NOISE_S = 0.5
STOP_LIGHTER_READINGS = 3

# Why weighed again as the plate stills, either way by 0.03 cube and three
# times its spread, under half a cube (session 47): once the plate is still
# the reading high that a passing cube's blow leaves is gone, and a plate
# holding another cube than before reads lighter or heavier alike (where a
# cube rests decides the share the cell sees). Over the suspected stops of
# models A-S whose plate nothing else reached, measured from before the
# throw to 0.4-0.7 s after the landing below, such a change was a stop 117
# times and a pass 15; our own evaluation's single throws, 61 of its 90
# stops (every suspicion there a stop). Weighed in the landing's 0.3 s
# (``STOP_LIGHTER_*``) the plate still rings, and only the lighter side
# told. Why every 50 ms from 0.2 s to 1.0 s after the landing below, two
# weighings in a row the same way, each over the last 0.1 s or five
# readings (whichever is longer): models A-S 36,208 -> 36,394 landings
# right, 987 -> 999 false; one weighing at 0.7 s over 0.3 s, +119 / +12
# and our single throws' p95 latency 694 ms (496 now); weighing until
# 1.2 s told 12 stops and 11 passes after 1.0 s; a tail of three readings
# (0.3 s at 10 a second) made most of the false ones (docs/crosscheck.md,
# run 49). Since a plate still ringing as one mode is weighed where its ring
# settles (session 48, ``LoadHistory.ring_change``), from 0.1 s: models A-S
# +4 landings right, +1 false; our quick series' p95 latency 465 -> 452 ms
# (0.05 s: the same, but single throws' 374 -> 369 ms). And by 0.02 cube
# where the converter reads five times or more in the 0.1 s weighed (0.03
# where its tail is five slow readings: at 0.02 there models G and H made
# 7 false landings more): models A-S +23 landings right, +2 false; our
# single throws 96.49 -> 97.27 %, damaged 98.41 -> 100 % (session 48).
STOP_REWEIGH_FROM_S = 0.1
STOP_REWEIGH_UNTIL_S = 1.0
STOP_REWEIGH_EVERY_S = 0.05
STOP_REWEIGH_TAIL_S = 0.1
STOP_REWEIGH_READINGS = 5
STOP_REWEIGH_CUBES = 0.02
STOP_REWEIGH_SLOW_CUBES = 0.03
STOP_REWEIGH_NOISES = 3.0
STOP_REWEIGH_MAX_CUBES = 0.5


# Why three times, and a fifth of at least five: a cube passing an occupied
# plate that the drop's strikes show it passed (heard below too late for a
# cube knocked off it, or a single strike just before one below: a hole
# edge) swings that plate well under a landing on towers whose stops can be
# told (models A, C, D, E, G: 0-4 % of such passes swing it as far as a
# stop must, ``fusion.hands.STOPPED_SWING``; ours none), while on others it
# swings like a landing (F 75 %, B 56 %, H 9 % of them), and there a stop's
# swing says nothing: 150-230 stops an hour were passes. Passes whose plate
# was still at once after the blow do not count (``STOP_HELD_FROM_S``: at
# 10 readings a second the blow fills the window). Over the cross-check
# towers 1-16 (docs/crosscheck.md, run 31): 123 false stops fewer (H 110,
# F 10, B 3) for 9 right ones (F 3, H 6). Twice in three passes took C's
# towers too, early on before their passes showed calm: 7 stops lost.
# Why a tenth, not a fifth (session 31): a stop is 2-11 % of throws on
# every model, and a throw passes an occupied plate about once, so a pass
# share of a tenth already makes most stops found passes. Model H's towers
# 1-8 / 9-16: 140 -> 121 and 163 -> 141 false landings, 3 and 1 right stops
# lost; C one stop lost; no other model and none of our sessions changed.
PASSES_LIKE_LANDINGS = 3
PASSES_SEEN = 5
PASSES_LIKE_SHARE = 0.1


class PassSwings:
    """How far cubes seen passing occupied plates swung them: whether stops can be told here.

    A stop is found by the plate the thrown cube stayed on swinging like a
    landing while its load ends where it was (one cube came, one left). On
    a tower whose passing cubes swing plates as far, that swing tells
    nothing, and stops are not inferred once that is shown.
    """

    def __init__(self) -> None:
        self._seen: set[tuple[int, float]] = set()
        self.passes = 0
        self.like_landings = 0

    def note(self, level: int, struck_s: float, *, like_landing: bool) -> None:
        """A cube passed ``level``'s occupied plate, struck at ``struck_s``.

        ``like_landing``: it swung the plate as far as a stop must. A pass
        looked at again (for another decision on the same drop) counts once.
        """
        key = (level, round(struck_s, 4))
        if key in self._seen:
            return
        self._seen.add(key)
        self.passes += 1
        self.like_landings += int(like_landing)

    @property
    def stops_told(self) -> bool:
        """False once passes are shown to swing plates like landings."""
        return not (
            self.passes >= PASSES_SEEN
            and self.like_landings >= PASSES_LIKE_LANDINGS
            and self.like_landings >= PASSES_LIKE_SHARE * self.passes
        )

