"""How long a silence ends a drop heard without load cells, learnt per tower.

An acoustic-only decision waits for a silence after the cube's last strike:
0.22 s is enough where a cube strikes again within about 0.1 s until it
rests (``fusion.DEFAULT_DROP_GAP_S``). In other towers a cube rolls or
slides silently for up to a few tenths of a second before it falls through
a hole and strikes the plates below (cross-check models B and D). Then the
drop is decided too soon, on the plate the cube left, and what it strikes
next is taken for a throw of its own: a false landing.

Such a drop shows itself: a new drop begins soon after one was decided,
with its first strike on a plate below the one decided (a thrown cube
enters from the top; the one that went on falls from where it was). After
``SPLITS_SEEN`` of them the tower's drops wait ``LONG_GAP_S``. Model B's
cubes slide on (0.02-0.45 s): its false landings 281 -> 161 and 390 -> 247
an hour.

Two signs in the drop itself tell more (``silence_after``, ``ends_drop``):
a cube that comes to rest on a plate bounces there, so a drop whose last
plate was struck once waits ``LONG_GAP_S`` on any tower; and a strike on a
plate above the one struck last, after more than the short silence, is the
next throw entering from the top (a cube that went on strikes its own plate
or one below), so it ends the drop at once however long the tower waits;
three plates up or more, on a top plate, it does so even within the short
silence (``NEXT_THROW_PLATES_UP``): quick series heard without load cells.
With both, over the 31 cross-check models heard without their load cells:
single throws 1,017 -> 750 false landings in 16.5 h (833 without the first
sign), landings right the same, latency median 0.18 -> 0.19 s and p95 0.31
-> 0.38 s; quick series 57.4 -> 62.4 % right, latency 0.24 / 0.54 -> 0.24
/ 0.48 s. On our own acoustic family no drop went on: the same levels, the
p95 latency 238 -> 409 ms (last plates struck once, their bounces inside
the onset's mask).
"""

from __future__ import annotations

# Why 0.5 s: the cube that rolled on strikes below within a fall of a few
# modules from rest after the silence that ended its drop (0.22 s); a new
# throw in a single series comes seconds later. Why below only: in quick
# series the next throw is often first heard on the plate just decided
# (cross-check models heard without load cells: 1,643 such "splits" in
# their quick series, 85 in single throws, where 167 and 7 went on).
SPLIT_WITHIN_S = 0.5
# Why 1: each split is a false landing already, and sessions are short:
# after two, model D's false landings of acoustic-only decisions went 105
# -> 86 and 101 -> 82 an hour (towers 1-8, 9-16), after one 71 and 79 (a
# fixed 0.32 s: 49 and 49, at 0.1 s more latency in every tower). A quick
# next throw that struck no plate above the level decided costs only the
# 0.1 s. No drop of our own acoustic sessions or of model A's split.
SPLITS_SEEN = 1
# Why 0.4 s: cubes that went on after a pause were heard below 0.22-0.36 s
# after their last strike on model AC's towers and 0.3-0.45 s on most
# others' (B, I, J, Q, R, V: up to 1.3 s). Single throws of all 31
# cross-check models heard without their load cells (16.5 h): false
# landings 1,017 -> 789 from this alone against 0.32 s, the same landings
# right; but quick series heard so ran together (right 57.4 -> 50.1 %)
# until the next throw's strike from above ended a drop (62.4 %). 0.5 s:
# 731 false landings, quick series 58.6 %. Model D's cubes roll for up to
# 0.25 s.
LONG_GAP_S = 0.40
# Why three plates up, on one of the top two, 80 ms after the last strike:
# a cube bouncing reaches at most the plate over its own, and a thrown cube
# enters from the top, so such a strike is the next throw even within the
# short silence (quick series heard one into the other before). Over the
# 31 cross-check models heard without load cells: quick series 62.35 ->
# 67.97 % right (+2,073 landings, +345 false), single throws +1 / +4, the
# noisy rooms and games +106 / +549 (hands and knocks heard on the top
# plates). Model AF, written blind meanwhile and not used to choose: +25 /
# +1. Two plates up after 50 ms, on any plate: quick series 73.9 %, but
# +1,682 false there and +63 in single throws; on the top two plates, 72.3
# % and +1,228.
NEXT_THROW_SILENCE_S = 0.08
NEXT_THROW_PLATES_UP = 3
NEXT_THROW_TOP_PLATES = 2


class DropGap:
    """The silence that ends an acoustic drop, longer once cubes were seen to go on.

    Parameters
    ----------
    short_s : float
        The silence to wait for until the tower shows that cubes roll on.
    top_level : int
        The tower's top level, where a thrown cube enters.
    """

    def __init__(self, short_s: float, top_level: int = 7) -> None:
        self.short_s = float(short_s)
        self.top_level = int(top_level)
        self.splits = 0
        self._decided: tuple[float, int] | None = None

    @property
    def seconds(self) -> float:
        """The silence that ends a drop now."""
        return LONG_GAP_S if self.splits >= SPLITS_SEEN else self.short_s

    def silence_after(self, levels: list[int]) -> float:
        """The silence that ends a drop whose strikes sounded loudest on ``levels``, in order.

        ``LONG_GAP_S`` when its last plate was struck only once: a cube that
        came to rest there bounced on it, one that paused on its way did not.
        """
        if len(levels) < 2 or levels[-2] != levels[-1]:
            return max(self.seconds, LONG_GAP_S)
        return self.seconds

    def ends_drop(self, silence_s: float, level: int, levels: list[int]) -> bool:
        """Whether a strike on ``level`` after ``silence_s`` ends the drop struck on ``levels``.

        Also after only the short silence when the strike is on a plate above
        the last one struck, and after ``NEXT_THROW_SILENCE_S`` when it is on
        one of the top plates, ``NEXT_THROW_PLATES_UP`` or more above: the
        next throw, entering from the top.
        """
        if silence_s > self.silence_after(levels):
            return True
        if not levels:
            return False
        if silence_s > self.short_s and level > levels[-1]:
            return True
        return (
            silence_s > NEXT_THROW_SILENCE_S
            and level >= levels[-1] + NEXT_THROW_PLATES_UP
            and level > self.top_level - NEXT_THROW_TOP_PLATES
        )

    def decided(self, t_last_s: float, level: int) -> None:
        """A drop whose last strike was at ``t_last_s`` was decided on ``level``."""
        self._decided = (float(t_last_s), int(level))

    def began(self, t_s: float, level: int) -> None:
        """A new drop began with a strike on ``level`` at ``t_s``."""
        if self._decided is None:
            return
        t_last, decided = self._decided
        self._decided = None
        if t_s - t_last <= SPLIT_WITHIN_S and level < decided:
            self.splits += 1
