"""Thumps from the table in time with music are no cubes (``tablebeat``)."""

from __future__ import annotations

import numpy as np

from dsp.detect.acoustic import AcousticLevelModel
from dsp.detect.cubes import CubeScale
from dsp.detect.events import Landing
from dsp.detect.fusion import Fusion
from dsp.detect.grouping import Impact
from dsp.detect.piezo import TimedImpact
from dsp.detect.tablebeat import TableBeat, steady_beat

BEAT_S = 60.0 / 130.0  # a four-on-the-floor song at 130 beats a minute


def _kicks(n: int, *, seed: int = 1, skip: float = 0.4) -> list[float]:
    """When a kick stood out, heard up to 10 ms early or late; some beats stay under."""
    rng = np.random.default_rng(seed)
    beats = np.arange(n * 8)
    heard = beats[rng.random(beats.size) > skip][:n]
    return list(10.0 + heard * BEAT_S + rng.uniform(-0.010, 0.010, n))


def test_a_songs_kicks_fall_on_its_beat_even_with_beats_skipped() -> None:
    found = tried = 0
    for seed in range(200):
        kicks = _kicks(4, seed=seed)
        if max(np.diff(kicks)) / BEAT_S > 4.5:  # a gap over four beats: no chain
            continue
        tried += 1
        beat = steady_beat(kicks)
        if beat is not None:
            found += 1
            # The beat, or every other one where each gap skipped one.
            assert abs(beat / BEAT_S - round(beat / BEAT_S)) < 0.02, (seed, beat)
    assert found > 0.85 * tried, (found, tried)


def test_hand_thrown_cubes_keep_no_beat() -> None:
    # A quick series: throws 0.3-0.8 s apart, by hand.
    rng = np.random.default_rng(7)
    found = 0
    trials = 2000
    for _ in range(trials):
        times = list(np.cumsum(rng.uniform(0.3, 0.8, 4)))
        found += steady_beat(times) is not None
    assert found < 0.04 * trials, found  # 3 %
    # Too few drops, too slow a "beat", too many beats apart: none.
    assert steady_beat([1.0, 1.46, 1.92]) is None
    assert steady_beat([1.0, 2.5, 4.0, 5.5]) is None
    assert steady_beat([1.0, 1.3, 3.1, 3.4]) is None


def test_once_found_the_beat_goes_on_through_a_drop_off_it() -> None:
    beat = TableBeat()
    kicks = [10.0 + k * BEAT_S for k in range(12)]
    on = [beat.on_the_beat(t) for t in kicks[:4]]
    assert on == [False, False, False, True]  # three drops before are needed
    assert not beat.on_the_beat(kicks[4] + 0.2)  # a cube between two kicks
    assert beat.on_the_beat(kicks[5])  # and the beat goes on
    assert beat.on_the_beat(kicks[8])  # two kicks unheard
    # The music stops; a cube on the ground floor long after is a cube.
    assert not beat.on_the_beat(kicks[8] + 7.3)


def _low_drop(t_s: float) -> list[TimedImpact]:
    """A thump from the table: loudest on the ground floor, fading fast up the tower."""
    peaks = 120.0 * 0.5 ** np.arange(8)
    return [TimedImpact(t_s, Impact(frame=0, channels=(0, 1), peaks=peaks, floor=np.ones(8))),
            TimedImpact(t_s + 0.03, Impact(frame=0, channels=(0,), peaks=0.6 * peaks,
                                           floor=np.ones(8)))]


def test_heard_without_cells_a_songs_thumps_are_no_landings() -> None:
    fusion = Fusion(n_levels=8, scale=CubeScale(n_levels=8),
                    acoustic=AcousticLevelModel(n_levels=8))
    landings: list[int] = []
    for k in range(16):
        t = 10.0 + k * BEAT_S
        fusion.add_impacts(_low_drop(t))
        landings += [e.floor for e in fusion.advance(t + 0.4) if isinstance(e, Landing)]
    # The first three thumps are told as cubes on the ground floor (nothing
    # yet says they are music); from the fourth on, none is.
    assert landings == [0, 0, 0]
    assert fusion.stats.table_beats == 13
