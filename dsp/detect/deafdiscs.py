"""Contact microphones that hear nothing: discs whose plate's landings are never heard on them.

A piezo disc whose wire broke, or that came unglued, leaves its channel at
the bias: the cubes landing on its plate are weighed by the load cell but
heard only by the neighbouring discs, through the walls. Detection goes on
(the load decides; docs/detection.md: a dead disc changed no landing of
model A's), but the player building the kit should know.

:class:`DeafDiscs` counts, per level, the load-confirmed single landings
whose strikes were heard on other discs and never on the level's own, with
no onset at all on that disc since (a working disc also hears its
neighbours' landings and knocks on the table); after ``DEAF_AFTER`` such
landings the disc is taken for deaf, and any onset on it brings it back.
Pure bookkeeping; the fusion feeds it.
"""

from __future__ import annotations

from collections.abc import Iterable

# Why 3: a cube landing on a plate strikes it once or more, loud on that
# plate's disc and heard there in every landing of every model; a neighbour's
# crosstalk can mask the plate's own onset once (the mask time), not three
# landings running.
DEAF_AFTER = 3


class DeafDiscs:
    """Which levels' discs hear nothing of their own plate's landings.

    Parameters
    ----------
    n_levels : int
        Piezo channels of the tower.

    Attributes
    ----------
    deaf : set of int
        Levels whose disc is taken for deaf now.
    """

    def __init__(self, n_levels: int) -> None:
        self.n_levels = int(n_levels)
        self.deaf: set[int] = set()
        self._unheard = [0] * self.n_levels

    def note_impact(self, channels: Iterable[int]) -> None:
        """A strike heard with onsets on ``channels``: those discs hear."""
        for level in channels:
            if 0 <= level < self.n_levels:
                self._unheard[level] = 0
                self.deaf.discard(level)

    def note_landing(self, level: int, heard_on: Iterable[int]) -> None:
        """A cube the load cell saw land on ``level``; ``heard_on``: channels its strikes reached.

        A landing heard on no disc at all says nothing (no piezo stream, or
        a cube too soft to hear).
        """
        channels = set(heard_on)
        if not 0 <= level < self.n_levels or not channels:
            return
        if level in channels:
            self._unheard[level] = 0
            self.deaf.discard(level)
            return
        self._unheard[level] += 1
        if self._unheard[level] >= DEAF_AFTER:
            self.deaf.add(level)
