"""Load cells that read nothing: levels whose cubes are heard landing and never weighed.

A cell whose wire broke, or an HX711 whose input floats, still sends valid
readings, but they never move with the plate: a constant, or noise far
wider than a cube. Every cube that comes to rest on that plate is then
heard, and no load changes anywhere in the tower: without a fallback,
each one is a missed landing (model A's towers with one cell read as a
constant or as a floating input: every cube thrown onto it).

:class:`SilentCells` watches the drops heard while the load cells are
there. A drop that no landing shown by the load cells explains (none on
its level or next to it, timed by its strikes and decided by ``EXPLAIN_S``
after its last), which sounded like a cube on one plate, while that plate's cell did
not move beyond its noise, is a sign that the cell is dead: a live cell
whose plate a cube strikes swings by a good part of a cube or more, many
times its noise. After ``DEAD_AFTER`` such drops on one level whose cell
has never shown a step, it is taken for dead; those drops and every later
unexplained cube-loud drop ending there are reported as landings heard
there. A cell that has shown a step reads: cubes that slide on (model B)
or thuds of hands (model E) left plates with working cells unexplained
twice, never one that had not read a step yet.

Pure bookkeeping over times and levels; the fusion measures the drops.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

# Why 1.2 s: a landing's load step is decided 0.1-0.5 s after the cube
# rests at 80 readings a second and up to about a second at 10 (five-reading
# windows); what is not decided by then is no step of this drop's.
EXPLAIN_S = 1.2
# Why 0.1 s and 0.3 s: a landing of this drop's cube is timed by one of its
# strikes (its last bounce), a strike heard a little late or one the onsets
# missed just around them; the cube before or after in a quick series
# rests 0.3 s or more apart.
EXPLAIN_BEFORE_S = 0.1
EXPLAIN_AFTER_S = 0.3
# Why 2: one unexplained drop can be a cube whose step the load view
# missed; two on the same level, with its cell still both times, are a cell
# that does not read.
DEAD_AFTER = 2
# Why 4 sigmas: over the ~30 readings of a drop a still cell's largest
# reading lies 2-3 sigmas from its median; a plate struck by a cube swings
# by a good part of a cube, tens of sigmas on any working cell.
STILL_SIGMAS = 4.0
# Why 0.5 s: a drop followed that soon by the next (the drops' gap is 0.22
# s) may be the hand that threw it: fingers resting on the tower's roof
# rustle on the top disc until they let the cube go, and the cube strikes
# 0.3-0.4 s later (model X: every one of its six false landings, a top
# cell taken for dead and each rustle before it reported there). A cube
# that came to rest on a plate is followed by nothing so soon in single
# throws and games; in a quick series the next throw may come that soon,
# and such a drop is no sign, only reported once the cell is known dead.
FOLLOWED_S = 0.5
# Why 64: landings of the last few seconds are all that is asked about.
_LANDINGS_KEPT = 64


@dataclass(frozen=True)
class HeardDrop:
    """A drop heard while the load cells were there, as the fusion measured it.

    Attributes
    ----------
    t_first_s, t_last_s : float
        Its first and last strikes.
    level : int
        Where its last strikes say the cube rests.
    t_rest_s : float
        The last strike heard on that level (the cube's last bounce).
    confidence : float
        Of the level, from the acoustic model.
    cube_loud : bool
        Whether it sounded like a cube: two strikes or more, the last ones as
        loud as a cube's and standing out on that plate (a lone click is an
        electrical pop or a tap).
    came_down : bool
        Whether a strike of it was heard loudest above ``level``: a cube
        falls through the tower, a knock on the table comes up from below.
    """

    t_first_s: float
    t_last_s: float
    level: int
    t_rest_s: float
    confidence: float
    cube_loud: bool
    came_down: bool = True

    @property
    def due_s(self) -> float:
        """When every load step that could explain it has been decided."""
        return self.t_last_s + EXPLAIN_S


class SilentCells:
    """Which levels' load cells read nothing, from heard drops no load step explained.

    Parameters
    ----------
    n_levels : int
        Load channels of the tower.

    Attributes
    ----------
    dead : set of int
        Levels taken for dead now.
    """

    def __init__(self, n_levels: int) -> None:
        self.n_levels = int(n_levels)
        self.dead: set[int] = set()
        self._read: set[int] = set()
        self._unexplained: list[list[HeardDrop]] = [[] for _ in range(self.n_levels)]
        self._queue: deque[HeardDrop] = deque()
        self._landings: deque[tuple[int, float, float]] = deque(maxlen=_LANDINGS_KEPT)

    def note_step(self, level: int) -> None:
        """A load step of any size and sign on ``level``, fast or settled: its cell reads."""
        if 0 <= level < self.n_levels:
            self._read.add(level)
            self.dead.discard(level)
            self._unexplained[level].clear()

    def mark_dead(self, level: int) -> None:
        """``level``'s cell read nothing through the tare (no reading, or one value): dead."""
        if 0 <= level < self.n_levels:
            self.dead.add(level)

    def note_landing(self, level: int, t_s: float, t_decided_s: float) -> None:
        """A landing the load cells showed, timed by its cube's last strike ``t_s``."""
        self._landings.append((level, t_s, t_decided_s))

    def add_drop(self, drop: HeardDrop) -> None:
        """Queue a drop heard while the load cells were there (in the order they end)."""
        if 0 <= drop.level < self.n_levels:
            self._queue.append(drop)

    def next_due(self) -> float | None:
        """When the first queued drop can be judged (None: none is queued)."""
        return self._queue[0].due_s if self._queue else None

    def take_due(self, now_s: float) -> list[HeardDrop]:
        """The queued drops whose load steps are all known by ``now_s`` (taken off the queue)."""
        out: list[HeardDrop] = []
        while self._queue and self._queue[0].due_s <= now_s:
            out.append(self._queue.popleft())
        return out

    def explained(self, drop: HeardDrop) -> bool:
        """Whether the load cells showed a landing of this drop's cube, next to its level.

        On its level or a neighbour (where the ear took a neighbour's landing
        for this level's), timed by a strike of this drop (from its first
        to just after its last), decided by its due time. Landings of other
        throws in a quick series come before or after.
        """
        start, end = drop.t_first_s - EXPLAIN_BEFORE_S, drop.t_last_s + EXPLAIN_AFTER_S
        return any(
            abs(level - drop.level) <= 1 and start <= t_s <= end and t_decided <= drop.due_s
            for level, t_s, t_decided in self._landings
        )

    def judge(
        self, drop: HeardDrop, *, cell_still: bool, followed: bool = False
    ) -> list[HeardDrop]:
        """The drops to report as landings heard, now that ``drop`` is due.

        ``cell_still``: whether its level's cell stayed within its noise
        while the drop was heard; ``followed``: whether another drop began
        within ``FOLLOWED_S`` of its last strike (no sign, see there). Call
        only for drops :meth:`explained` says no step explains.
        """
        if not drop.cube_loud:
            return []
        if drop.level in self.dead:
            return [drop]
        if not cell_still or followed or drop.level in self._read:
            return []
        if not drop.came_down and drop.level < self.n_levels - 1:
            # Heard only where it rests: a knock felt through the base
            # rings the lowest plate alone, as loud as a cube.
            return []
        waiting = self._unexplained[drop.level]
        waiting.append(drop)
        if len(waiting) < DEAD_AFTER:
            return []
        self.dead.add(drop.level)
        out = list(waiting)
        waiting.clear()
        return out
