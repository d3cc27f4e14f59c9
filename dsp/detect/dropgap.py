"""How long a silence ends a drop heard without load cells, learnt per tower.

An acoustic-only decision waits for a silence after the cube's last strike:
0.22 s is enough where a cube strikes again within about 0.1 s until it
rests (``fusion.DEFAULT_DROP_GAP_S``). In other towers a cube rolls or
slides silently for up to a few tenths of a second before it falls through
a hole and strikes the plates below (cross-check models B and D). Then the
drop is decided too soon, on the plate the cube left, and what it strikes
next is taken for a throw of its own: a false landing.

Such a drop shows itself: a new drop begins soon after one was decided,
with its first strike on the level decided or below it (a thrown cube
enters from the top; the one that went on strikes its plate again or falls
from where it was). After ``SPLITS_SEEN`` of them the tower's drops wait
``LONG_GAP_S``. Model B's cubes slide on (0.02-0.45 s): its false landings
281 -> 161 and 390 -> 247 an hour.
"""

from __future__ import annotations

# Why 0.5 s: the cube that rolled on strikes below within a fall of a few
# modules from rest after the silence that ended its drop (0.22 s); a new
# throw in a single series comes seconds later.
SPLIT_WITHIN_S = 0.5
# Why 1: each split is a false landing already, and sessions are short:
# after two, model D's false landings of acoustic-only decisions went 105
# -> 86 and 101 -> 82 an hour (towers 1-8, 9-16), after one 71 and 79 (a
# fixed 0.32 s: 49 and 49, at 0.1 s more latency in every tower). A quick
# next throw that struck no plate above the level decided costs only the
# 0.1 s. No drop of our own acoustic sessions or of model A's split.
SPLITS_SEEN = 1
# Why 0.32 s: model D's cubes roll for up to 0.25 s; for every tower from
# the start, it halved model D's false landings of acoustic-only decisions
# (105 -> 49 an hour) with the same levels; each decision comes 0.1 s later.
LONG_GAP_S = 0.32


class DropGap:
    """The silence that ends an acoustic drop, longer once cubes were seen to go on.

    Parameters
    ----------
    short_s : float
        The silence to wait for until the tower shows that cubes roll on.
    """

    def __init__(self, short_s: float) -> None:
        self.short_s = float(short_s)
        self.splits = 0
        self._decided: tuple[float, int] | None = None

    @property
    def seconds(self) -> float:
        """The silence that ends a drop now."""
        return LONG_GAP_S if self.splits >= SPLITS_SEEN else self.short_s

    def decided(self, t_last_s: float, level: int) -> None:
        """A drop whose last strike was at ``t_last_s`` was decided on ``level``."""
        self._decided = (float(t_last_s), int(level))

    def began(self, t_s: float, level: int) -> None:
        """A new drop began with a strike on ``level`` at ``t_s``."""
        if self._decided is None:
            return
        t_last, decided = self._decided
        self._decided = None
        if t_s - t_last <= SPLIT_WITHIN_S and level <= decided:
            self.splits += 1
