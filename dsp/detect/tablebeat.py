"""Thumps from the table in time with music: a beat, not cubes.

A speaker or a subwoofer on (or under) the table shakes the tower through
its base with every kick drum, and people dancing or drumming on the
table with their fingers keep the same beat. Heard without load cells,
now and then such a thump stands over the onset threshold on the lowest
plates, loudest there as a cube landing on the ground floor is, and was
told as one (cross-check model AO heard without its cells: in single
throws 74 false landings, most of them on the ground floor every 0.46 s
while a song played, none with the cells, whose steps tell).

Cubes are thrown by hand: the drops a cube makes on the lowest plates
come at no steady beat. A drop heard only on the lowest plates that
falls, with the ``BEAT_DROPS - 1`` such drops before it (within
``BEAT_WINDOW_S``), on one steady beat, each gap a whole number of beats
within ``BEAT_TOLERANCE``, is the table's, and is no landing.
"""

from __future__ import annotations

from collections import deque

# Why four drops: two gaps fall on one beat by chance often enough (a
# quick series' gaps are 0.3-0.8 s); three, seldom.
BEAT_DROPS = 4
# Why 0.25-1.2 s: music's beats, 50-240 a minute; a faster or slower
# "beat" is no music's.
MIN_BEAT_S = 0.25
MAX_BEAT_S = 1.2
# Why 4 beats at most between two drops: most kicks stay under the onset
# threshold, and the drops that pass it skip some.
MAX_BEATS_APART = 4
# Why 4 %: a drum machine's or a song's beat keeps time to a millisecond,
# but a kick at 45-65 Hz is heard begin up to half a period late or early
# (model AO's ground floor: 0.456-0.476 s apart on a 0.464 s beat, 2.6 %
# off at most). Of four drops thrown by hand 0.3-0.8 s apart, 3 % fall on
# a beat to within 4 %, 6 % to within 6 % (``test_tablebeat``).
BEAT_TOLERANCE = 0.04
BEAT_WINDOW_S = MAX_BEATS_APART * MAX_BEAT_S * (BEAT_DROPS - 1)


class TableBeat:
    """The drops heard only on the lowest plates, and whether the newest keeps a beat.

    Once ``BEAT_DROPS`` drops have fallen on one beat, the next ones are
    judged by it, up to ``MAX_BEATS_APART`` beats after the last on it: a
    drop off the beat between them (a cube, a glass set down) breaks no
    chain.
    """

    def __init__(self) -> None:
        self._low_drops: deque[float] = deque(maxlen=BEAT_DROPS)
        self._beat_s = 0.0
        self._last_on_beat_s: float | None = None

    def on_the_beat(self, t_s: float) -> bool:
        """Note a drop heard only on the lowest plates at ``t_s``: whether it keeps a beat.

        Drops are noted in time order; ``t_s`` is the drop's first strike.
        """
        t_s = float(t_s)
        self._low_drops.append(t_s)
        last = self._last_on_beat_s
        if last is not None and t_s - last <= (MAX_BEATS_APART + 0.5) * self._beat_s:
            beats = round((t_s - last) / self._beat_s)
            if beats >= 1 and abs(t_s - last - beats * self._beat_s) <= (
                    BEAT_TOLERANCE * self._beat_s):
                self._last_on_beat_s = t_s
                return True
        beat = steady_beat(list(self._low_drops))
        if beat is None:
            return False
        self._beat_s, self._last_on_beat_s = beat, t_s
        return True


def steady_beat(times_s: list[float]) -> float | None:
    """The beat the last ``BEAT_DROPS`` of ``times_s`` fall on, s; None if no steady one.

    Every gap must be a whole number of beats (counted in the shortest gap),
    at most ``MAX_BEATS_APART``, within ``BEAT_TOLERANCE`` of the beat that
    all the gaps tell together.
    """
    last = times_s[-BEAT_DROPS:]
    if len(last) < BEAT_DROPS or last[-1] - last[0] > BEAT_WINDOW_S:
        return None
    gaps = [b - a for a, b in zip(last[:-1], last[1:], strict=True)]
    shortest = min(gaps)
    if shortest <= 0.0:
        return None
    beats = [round(gap / shortest) for gap in gaps]
    if max(beats) > MAX_BEATS_APART:
        return None
    beat = sum(gaps) / sum(beats)  # the beat all the gaps tell
    if not MIN_BEAT_S <= beat <= MAX_BEAT_S:
        return None
    if all(abs(gap - n * beat) <= BEAT_TOLERANCE * beat
           for gap, n in zip(gaps, beats, strict=True)):
        return beat
    return None
