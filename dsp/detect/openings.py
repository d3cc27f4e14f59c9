"""Which level of the tower lies open, since when: lifts, closures and handling.

To look into level k the players lift modules k..7: their load channels
stop reporting (``loadcell.LoadConnection``), gathered into one lift once
the modules have all come off; the tower is closed again when every
channel is back. The top module carries no load cell, so its lift is told
by the fusion from what it hears and sees (``topmodule``) and handed in
here. Remembers the last few openings, so that a decision made late (the
settled view, after the close) knows whether its level lay open when its
cubes left.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np

from dsp.detect.events import Closed, Event, Lift
from dsp.detect.loadcell import LoadConnection

# Why two, and 0.5-6 s: the players' reach from a lift to the first cube
# they take out is their own (the cross-check models' medians run 1.2-4.6
# s) and the same whichever modules they lifted: over models A-AD the
# median for the lifts channels show and for the top module's agree within
# 0.5 s on all but two (R 2.5 / 3.8 s, O 3.1 / 3.7 s). Two such lifts are
# enough to prefer it over a fixed guess; the bounds keep a hand that
# lingers from making it absurd.
_REACHES_LEAST = 2
# Why twice: one silence of a converter may be a glitch; a cell that stops
# answering again in the same session has a joint or a wire to look at.
FLAKY_DROPOUTS = 2
_REACH_MIN_S = 0.5
_REACH_MAX_S = 6.0


@dataclass
class Opening:
    """One time the tower lay open at ``exposed``, from ``lifted_s`` to ``closed_s`` (inf: open).

    ``first_taken_s``: when the hands first took cubes off the open level
    (inf: not yet).
    """

    lifted_s: float
    closed_s: float
    exposed: int
    first_taken_s: float = np.inf


class TowerOpenings:
    """The tower's open level, kept from load-channel connection changes and top lifts.

    Parameters
    ----------
    n_levels : int
        Levels of the tower.
    lift_gather_s : float
        How long after the first channel drops out the lift is decided: the
        modules above it come off with it, a few readings apart.
    """

    def __init__(self, n_levels: int, lift_gather_s: float) -> None:
        self.n_levels = n_levels
        self.lift_gather_s = lift_gather_s
        #: Levels whose load channels are off (their modules lifted).
        self.disconnected: set[int] = set()
        #: Levels whose channels went silent under one still reporting: a
        #: converter that stopped answering (a loose wire), no module lifted.
        self.dropped_out: set[int] = set()
        #: How many times each level's channel has dropped out so far.
        self.dropouts = [0] * n_levels
        self._disconnect_t: dict[int, float] = {}
        # ``last_handled_t`` before each channel's disconnection.
        self._handled_before: dict[int, float] = {}
        #: When the lift now gathering is decided (None: none is).
        self.lift_deadline: float | None = None
        #: The level lying open (None: the tower is closed).
        self.exposed: int | None = None
        #: The top module is off (level 7 open), which no channel shows.
        self.top_off = False
        #: When the top module was lifted or cubes were last taken off its plate.
        self.top_handled_t = -np.inf
        #: When a module was last lifted off or set back (decision time).
        self.last_handled_t = -np.inf
        # When modules were last lifted off or set back (a few are enough).
        self._handled_times: deque[float] = deque(maxlen=32)
        self._openings: deque[Opening] = deque(maxlen=8)

    @property
    def open(self) -> bool:
        """Whether modules are off the tower (lifted, or the top one alone)."""
        return bool(self.disconnected) or self.top_off

    @property
    def flaky(self) -> tuple[int, ...]:
        """Levels whose channels dropped out ``FLAKY_DROPOUTS`` times or more (no module lifted)."""
        return tuple(level for level, n in enumerate(self.dropouts) if n >= FLAKY_DROPOUTS)

    @property
    def exposed_level(self) -> int | None:
        """The level lying open now (None: the tower is closed)."""
        return self.exposed if self.open else None

    @property
    def last(self) -> Opening | None:
        """The last opening (perhaps still open)."""
        return self._openings[-1] if self._openings else None

    def connection(self, conn: LoadConnection, set_down_s: float | None = None) -> list[Event]:
        """Take a load channel's connection change: the close, when the last comes back.

        ``set_down_s``: when the modules were heard set down, if before the
        channel came back (its converter settling): the close is timed then.
        """
        if conn.connected and conn.level in self.dropped_out:
            # Its converter answers again: nothing was lifted, set back or handled.
            self.dropped_out.discard(conn.level)
            self._disconnect_t.pop(conn.level, None)
            return []
        if not conn.connected:
            # Until the lift is gathered: undone if the channel only dropped out.
            self._handled_before[conn.level] = self.last_handled_t
        self.last_handled_t = max(self.last_handled_t, conn.t_decided_s)
        self._handled_times.append(conn.t_s)
        if not conn.connected:
            if self.top_off:
                self.top_off = False
                self.exposed = None
                self._close(conn.t_s)
            self.disconnected.add(conn.level)
            self._disconnect_t[conn.level] = conn.t_s
            if self.lift_deadline is None:
                self.lift_deadline = conn.t_decided_s + self.lift_gather_s
            return []
        self.disconnected.discard(conn.level)
        self._disconnect_t.pop(conn.level, None)
        if self.disconnected:
            return []
        self.lift_deadline = None
        if self.exposed is None:
            return []
        self.exposed = None
        closed = conn.t_s
        if set_down_s is not None and set_down_s < closed:
            # The channels that came back since were their converters
            # settling, not hands.
            closed = set_down_s
            kept = [t for t in self._handled_times if not closed < t <= conn.t_s]
            self._handled_times.clear()
            self._handled_times.extend([*kept, closed])
        self._close(closed)
        return [Closed(t=closed, t_decided=conn.t_decided_s)]

    def silent_since(self, level: int) -> float:
        """When ``level``'s channel went silent (inf: it reports)."""
        return self._disconnect_t.get(level, np.inf)

    def gathered_lift(self, now_s: float, reporting: frozenset[int] = frozenset()) -> list[Event]:
        """The lift of the modules whose channels dropped out, decided at ``now_s``.

        ``reporting``: levels whose channels still send readings. Lifted
        modules take every channel above the open level with them, so in a
        closed tower a channel silent under one still reporting was not
        lifted: its converter stopped answering (``dropped_out``) and the
        tower stays closed.
        """
        self.lift_deadline = None
        if not self.disconnected or 0 in self.disconnected:
            # The ground floor's cell sits in the base, which is never
            # lifted: with it silent too, the device stopped reading (a
            # reboot, the converters powering up), no hand lifted anything.
            return []
        # While modules are off, channels coming and going are their converters
        # powering up as they are set back, not dropping out.
        highest = max(reporting, default=-1) if self.exposed is None else -1
        came_off = set(self.disconnected)
        silent = self.disconnected | self.dropped_out
        newly = {level for level in came_off if level < highest}
        self.dropped_out = {level for level in silent if level < highest}
        self.disconnected = silent - self.dropped_out
        for level in newly:
            self.dropouts[level] += 1
        if not self.disconnected:
            # No hands: the channels' handling marks are taken back.
            for level in newly:
                if (t := self._disconnect_t[level]) in self._handled_times:
                    self._handled_times.remove(t)
            self.last_handled_t = min(
                (self._handled_before.get(level, self.last_handled_t) for level in newly),
                default=self.last_handled_t,
            )
            return []
        exposed = min(self.disconnected) - 1
        if exposed == self.exposed:
            return []
        self.exposed = exposed
        # A channel that had dropped out before is no clock for this lift
        # (unless no other went silent with it).
        t = min(self._disconnect_t[level] for level in (self.disconnected & came_off)
                or self.disconnected)
        self._close(t)
        self._openings.append(Opening(t, np.inf, exposed))
        return [Lift(t=t, t_decided=now_s, exposed=exposed)]

    def lift_top(self, t_s: float, now_s: float) -> list[Event]:
        """The top module was lifted at ``t_s`` (found at ``now_s``)."""
        top = self.n_levels - 1
        self.top_off = True
        self.exposed = top
        self.top_handled_t = max(self.top_handled_t, t_s)
        self.last_handled_t = max(self.last_handled_t, now_s)
        self._handled_times.append(t_s)
        self._close(t_s)
        self._openings.append(Opening(t_s, np.inf, top))
        return [Lift(t=t_s, t_decided=now_s, exposed=top)]

    def note_taken(self, level: int, t_s: float) -> None:
        """Cubes were taken by hand off ``level`` at ``t_s`` (the top module is set down after)."""
        if level == self.n_levels - 1:
            self.top_handled_t = max(self.top_handled_t, t_s)
        for opening in reversed(self._openings):
            if opening.exposed == level and opening.lifted_s < t_s <= opening.closed_s:
                opening.first_taken_s = min(opening.first_taken_s, t_s)
                break

    def reach_s(self, default_s: float) -> float:
        """How long this tower's players take from a lift to the first cube they take out.

        The median over the kept openings whose lift the load channels
        showed (a top lift no sensor saw is timed from its removal, so it
        says nothing of the reach), once ``_REACHES_LEAST`` are known;
        else ``default_s``.
        """
        reaches = [
            opening.first_taken_s - opening.lifted_s for opening in self._openings
            if opening.exposed < self.n_levels - 1 and np.isfinite(opening.first_taken_s)
        ]
        if len(reaches) < _REACHES_LEAST:
            return default_s
        return float(np.clip(np.median(reaches), _REACH_MIN_S, _REACH_MAX_S))

    def close_top(self, t_s: float, now_s: float, *, handling: bool) -> list[Event]:
        """The top module was set back by ``t_s``; ``handling``: hands did it, heard then."""
        self.top_off = False
        self.exposed = None
        if handling:
            self.last_handled_t = max(self.last_handled_t, now_s)
            self._handled_times.append(t_s)
        self._close(t_s)
        return [Closed(t=t_s, t_decided=now_s)]

    def handled_within(self, t0_s: float, t1_s: float) -> bool:
        """Whether modules were lifted off or set back within ``[t0, t1]``."""
        return self.last_handled_within(t0_s, t1_s) is not None

    def last_handled_within(self, t0_s: float, t1_s: float) -> float | None:
        """When modules were last lifted off or set back within ``[t0, t1]`` (None: never)."""
        return max((t for t in self._handled_times if t0_s <= t <= t1_s), default=None)

    def opening_of(self, level: int, t0_s: float, t1_s: float) -> tuple[float, float] | None:
        """The last time ``level`` lay open within ``[t0, t1]``: ``(from, to)``, or None."""
        for opening in reversed(self._openings):
            if opening.exposed == level and opening.lifted_s <= t1_s and opening.closed_s >= t0_s:
                return float(opening.lifted_s), float(opening.closed_s)
        return None

    def exposed_at(self, t_s: float) -> int | None:
        """The level that lay open at stream time ``t_s`` (None: the tower was closed)."""
        for opening in reversed(self._openings):
            if opening.lifted_s <= t_s <= opening.closed_s:
                return opening.exposed
        return None

    def _close(self, t_s: float) -> None:
        if self._openings and not np.isfinite(self._openings[-1].closed_s):
            self._openings[-1].closed_s = t_s
