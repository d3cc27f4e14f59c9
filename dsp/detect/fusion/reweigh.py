"""Suspected stops weighed again once their plate is still.

A landing whose thrown cube may have stopped on an occupied plate above,
knocking that plate's cube down, is told as the thrown cube's with the
suspicion (``Landing.maybe_stopped_on``): on most towers a passing cube
swings a plate as far. While the plate rings, only a plate left lighter
tells (``stops.STOP_LIGHTER_*``). Once it is still, a plate that holds
another cube than before reads lighter or heavier by a few hundredths of
a cube (cubes differ in mass, and where a cube rests decides the share the
cell sees); a cube that passed left the plate's own cube where it was.
Such a stop is told then, late, as a landing on the plate that names the
landing below as the knocked cube's (``Landing.knocked_down_to``).
"""

from __future__ import annotations

import numpy as np

from dsp.detect.events import Event, Landing
from dsp.detect.fusion.landings import LandingJudge
from dsp.detect.stops import (
    STOP_REWEIGH_CUBES,
    STOP_REWEIGH_EVERY_S,
    STOP_REWEIGH_MAX_CUBES,
    STOP_REWEIGH_NOISES,
    STOP_REWEIGH_READINGS,
    STOP_REWEIGH_SLOW_CUBES,
    STOP_REWEIGH_TAIL_S,
    SuspectedStop,
)

# Why 0.9: over models A-S, 187 of the 202 suspected stops told this way
# were stops (docs/detection.md, "A suspected stop weighed again").
# In our evaluation all were.
_REWEIGHED_CONFIDENCE = 0.9


class StopReweigher(LandingJudge):
    """Weighs the plates of suspected stops again when due (``SuspectedStop.due_s``)."""

    def reweigh_due(self) -> float | None:
        """When the next suspected stop is weighed (None: none waits)."""
        return min((stop.due_s for stop in self._suspected_stops), default=None)

    def reweigh_suspected_stops(self, now_s: float) -> list[Event]:
        """Weigh the plates of suspected stops due by ``now_s``; tell those holding another cube.

        A stop is told when two weighings in a row (``STOP_REWEIGH_EVERY_S``
        apart) find its plate changed the same way; it is let go after
        ``STOP_REWEIGH_UNTIL_S`` or once something else moved the plate.
        """
        out: list[Event] = []
        kept = []
        for suspected in self._suspected_stops:
            stop: SuspectedStop | None = suspected
            while stop is not None and stop.due_s <= now_s:
                stop, told = self._weigh(stop)
                if told is not None:
                    out.append(told)
            if stop is not None:
                kept.append(stop)
        self._suspected_stops = kept
        return out

    def _weigh(self, stop: SuspectedStop) -> tuple[SuspectedStop | None, Landing | None]:
        """One weighing at ``stop.due_s``: the stop told, let go, or to be weighed again."""
        if self._tower_open or stop.level in self.openings.disconnected or (
            self._plate_moved_since(stop)
        ):
            return None, None
        sign = self._change_sign(stop)
        if sign != 0 and sign == stop.sign:
            return None, self._stop_weighed(stop)
        stop.sign = sign
        stop.due_s = round(stop.due_s + STOP_REWEIGH_EVERY_S, 9)
        return (stop if stop.due_s <= stop.last_s else None), None

    def _change_sign(self, stop: SuspectedStop) -> int:
        """Which way the plate reads measurably other than before the throw (0: it does not).

        Measured over its last ``STOP_REWEIGH_TAIL_S`` up to the due time,
        from before the throw, against the larger of its spread before the
        throw and over those readings (``STOP_REWEIGH_READINGS`` or more of each).
        A plate still ringing as one decaying mode is weighed where its ring
        settles, against how far apart the fits of its last readings put
        that (``LoadHistory.ring_change``) instead of their spread.
        """
        j = stop.level
        unit = self.scale.unit(j)
        if unit is None:
            return 0
        due = stop.due_s
        interval = self.load_history.reading_interval_s(due)
        if not np.isfinite(interval):
            return 0
        # A converter read 10 times a second gives one reading in 0.1 s, and
        # the spread of three is no measure of a plate's noise (docs/crosscheck.md, run 49).
        tail_s = max(STOP_REWEIGH_TAIL_S, STOP_REWEIGH_READINGS * interval)
        least = STOP_REWEIGH_CUBES if tail_s <= STOP_REWEIGH_TAIL_S else STOP_REWEIGH_SLOW_CUBES
        change = self.load_history.change(j, stop.since_s, due, tail_s, stop.base_from_s)
        before = self.load_history.spread(
            j, max(stop.since_s - 2 * tail_s, stop.base_from_s), stop.since_s,
            STOP_REWEIGH_READINGS,
        )
        tail = self.load_history.spread(j, due - tail_s, due, STOP_REWEIGH_READINGS)
        if not (np.isfinite(change) and np.isfinite(before) and np.isfinite(tail)):
            return 0
        if abs(change) < STOP_REWEIGH_NOISES * tail:
            # The readings spread wide while the plate still rings; if they
            # follow one decaying mode, where it settles is known closer than
            # that (docs/crosscheck.md, run 50: our tower's plates ring half
            # a second, and its stops were told 0.5 s after the landing below).
            ringing = self.load_history.ring_change(
                j, stop.since_s, due, before, stop.base_from_s
            )
            if ringing is not None:
                change, tail = ringing
        cubes = self.scale.cubes(j, change)
        if (
            least <= abs(cubes) < STOP_REWEIGH_MAX_CUBES
            and abs(change) >= STOP_REWEIGH_NOISES * max(before, tail)
        ):
            return 1 if cubes > 0 else -1
        return 0

    def _plate_moved_since(self, stop: SuspectedStop) -> bool:
        """Whether a step on the plate began after the thrown cube's last strike there.

        Or a landing there was told at that strike or after it: a stop
        suspected from two landings below on the same strike (rapid throws)
        is told once. Only steps known by the due time count (the decision
        may not depend on how far the stream had been read).
        """
        steps = [s for s, _ in self._recent_steps] + self._pending_steps
        steps += self._levels[stop.level].doubted
        return any(
            s.level == stop.level and stop.t_s < s.t_settled_s and s.t_before_s <= stop.due_s
            and s.t_decided_s <= stop.due_s
            for s in steps
        ) or self._levels[stop.level].landed_t >= stop.t_s

    def _stop_weighed(self, stop: SuspectedStop) -> Landing:
        j = stop.level
        self.stats.stops_reweighed += 1
        memory = self._levels[j]
        memory.landed_t = max(memory.landed_t, stop.t_s)
        self._throws_told.append((stop.t_s, j))
        return Landing(
            t=stop.t_s, t_decided=stop.due_s, floor=j, cubes=1,
            confidence=_REWEIGHED_CONFIDENCE, source="load", knocked_down_to=stop.below,
        )
