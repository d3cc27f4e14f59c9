"""What the fusion remembers between decisions: of each level, and in all.

Plain records; the fusion (``fusion.Fusion``) fills and reads them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from dsp.detect.loadcell import LoadStep
from dsp.detect.piezo import TimedImpact


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
    #: Landings whose thrown cube may have stopped above instead (``Landing.maybe_stopped_on``).
    stops_suspected: int = 0
    #: Suspected stops told later: their plate weighed another cube (``Landing.knocked_down_to``).
    stops_reweighed: int = 0
    acoustic_landings: int = 0
    acoustic_learnt: int = 0
    acoustic_agreed: int = 0
    acoustic_checked: int = 0
    hands_unlearnt: int = 0
    slides_seen: int = 0
    #: Cubes counted landing that slid on before the settled view saw them (removed).
    slid_unseen: int = 0
    bounced_on_empty: int = 0
    stops_not_told: int = 0
    heard_on_silent_cells: int = 0
    #: Cubes told by ear on plates that kept swinging (``swinging``).
    heard_on_swinging_plates: int = 0
    top_lifts: int = 0
    #: Unheard rises taken for the load of the plate's last landing, shown late.
    shown_late: int = 0
    #: Lone strikes heard just after a drop decided by ear, its cube's own.
    late_strikes: int = 0
    #: Drops heard only on the lowest plates in time with music (``tablebeat``).
    table_beats: int = 0
    #: Cubes told by ear as the next throw cut their bounces short (``heardrops.cut_short``).
    bounces_cut_short: int = 0


@dataclass
class LevelMemory:
    """What the fusion remembers of one level between decisions."""

    #: How far its plate swung when its own single cubes landed (the last few).
    landing_swings: list[float] = field(default_factory=list)
    #: When a thrown cube was last inferred to have stopped here, knocking
    #: one down without a change of its load (the strike it was timed by),
    #: and that strike again until a gain of the plate turns out to be that cube.
    stopped_t: float = -np.inf
    #: When the last cube reported here came to rest.
    landed_t: float = -np.inf
    #: When that cube's plate began to take it (-inf: not known).
    landed_from_t: float = -np.inf
    #: When the cubes told here by ear while the plate swung came to rest,
    #: as long as no load step has weighed them (``swinging.weighed_by``).
    heard_unweighed: list[float] = field(default_factory=list)
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
    #: The last rise whose landing waited to see its cube stay (``SlideSigns.wary``).
    waiting: LoadStep | None = None
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
    #: The last change the settled view took for hands: when it settled,
    #: the load accounted for before it, and how far it moved the plate.
    pressed: tuple[float, float, float] | None = None
    #: A share of the plate's size read on a shaken tower, as (cubes the
    #: size would be, the step, when it settled): a second such share
    #: confirms it.
    shaken_share: tuple[int, float, float] | None = None


@dataclass
class Drop:
    """The strikes of one drop, heard so far."""

    impacts: list[TimedImpact] = field(default_factory=list)
    #: Landings already told while the drop went on (``heardrops.cut_short``):
    #: (level, time of the cube's last strike there).
    told: list[tuple[int, float]] = field(default_factory=list)


@dataclass(frozen=True)
class Look:
    """Why a fast step is looked at again later, and the step as first seen.

    ``until_calm`` False: trusted, but read on a strike's jolt; decided if
    its plate still holds it once the jolt has passed. True: doubted only
    for restless plates; looked at until they are back at their loads.
    ``reread``: trusted, but read at no whole number of cubes; the plate's
    load is read again until it is one cube, clean (a revision), or the
    time to look is over.
    """

    first: LoadStep
    until_calm: bool
    reread: bool = False
