"""A load channel that goes silent under one still reporting: a converter that
stopped answering (a cracked joint, a loose wire), no module lifted."""

from __future__ import annotations

import numpy as np

from dsp.detect.acoustic import AcousticLevelModel
from dsp.detect.cubes import CubeScale
from dsp.detect.events import Closed, Landing, Lift
from dsp.detect.fusion import Fusion
from dsp.detect.grouping import Impact
from dsp.detect.loadcell import LoadConnection, LoadStep
from dsp.detect.piezo import TimedImpact

UNIT = 1000.0
# Load reading times: 80 Hz over the first 4 s.
_T = np.arange(0.0, 4.0, 1 / 80)


def _fusion(silent: dict[int, float], values: np.ndarray | None = None) -> Fusion:
    """A fusion knowing every level's cube; channels ``silent`` send nothing from those times."""
    fusion = Fusion(n_levels=8, first_landings_held=0, scale=CubeScale(n_levels=8),
                    acoustic=AcousticLevelModel(n_levels=8))
    for level in range(8):
        fusion.scale.learn(level, UNIT, 1)
        fusion.scale.learn_sign(level, UNIT, cubes_added=True)
    valid = np.ones((_T.size, 8), bool)
    for level, t in silent.items():
        valid[_T >= t, level] = False
    fusion.load_coverage.add(_T)
    fusion.load_history.add(_T, np.zeros((_T.size, 8)) if values is None else values, valid)
    fusion.accounted[:] = 0.0
    return fusion


def _strike(t_s: float, level: int) -> TimedImpact:
    peaks = np.where(np.arange(8) == level, 300.0, 30.0)
    return TimedImpact(t_s, Impact(frame=0, channels=(level,), peaks=peaks, floor=np.ones(8)))


def _kinds(events: list) -> list[str]:
    return [type(e).__name__ for e in events]


def test_a_channel_silent_under_one_still_reporting_lifts_nothing() -> None:
    """Lifted modules take every channel above the open level with them: one
    channel silent while those above it report is its converter, not a lift,
    and neither its silence nor its return is the hands handling the tower."""
    fusion = _fusion({3: 1.0})
    out = fusion.add_load([], [LoadConnection(3, False, 1.0, 1.1)], 1.1)
    out += fusion.advance(1.4)
    assert not any(isinstance(e, Lift) for e in out)
    assert fusion.openings.dropped_out == {3} and not fusion.openings.open
    assert not fusion.openings.handled_within(0.5, 1.5)
    out = fusion.add_load([], [LoadConnection(3, True, 1.8, 1.8)], 1.8) + fusion.advance(1.9)
    assert not any(isinstance(e, Closed) for e in out)
    assert not fusion.openings.dropped_out and not fusion.openings.handled_within(1.5, 2.0)


def test_a_cube_landing_next_to_a_silent_channel_is_told_at_once() -> None:
    """The strike of a cube on plate 2 jolts plate 3's cracked joint: its
    channel goes silent as plate 2 takes the cube, which the fast view tells
    as it would on a tower with every channel reporting."""
    values = np.zeros((_T.size, 8))
    values[_T >= 1.05, 2] = UNIT
    fusion = _fusion({3: 1.0}, values)
    fusion.add_impacts([_strike(0.98, 2), _strike(1.04, 2)])
    fusion.add_load([], [LoadConnection(3, False, 1.0, 1.1)], 1.1)
    fusion.advance(1.3)
    step = LoadStep(level=2, t_before_s=0.97, t_settled_s=1.2, t_decided_s=1.3,
                    delta_counts=UNIT, before_counts=0.0, after_counts=UNIT)
    out = fusion.add_load([step], [], 1.3) + fusion.advance(2.0)
    assert [(e.floor, e.cubes) for e in out if isinstance(e, Landing)] == [(2, 1)]


def test_a_cube_that_came_while_its_channel_was_silent_is_weighed_when_it_is_back() -> None:
    """Plate 3 gains a cube while its converter does not answer: once it reads
    still again, the load over what it held before the silence, with the
    cube heard striking it meanwhile, is that cube, timed by its strikes."""
    fusion = _fusion({3: 1.0})
    fusion.add_impacts([_strike(0.97, 3), _strike(1.02, 3), _strike(1.06, 3)])
    fusion.add_load([], [LoadConnection(3, False, 1.0, 1.1)], 1.1)
    fusion.advance(1.4)
    fusion.add_load([], [LoadConnection(3, True, 1.8, 1.8)], 1.8)
    levels, times = np.full(8, np.nan), np.full(8, np.nan)
    levels[3], times[3] = UNIT, 2.3
    landed = [e for e in fusion.track_settled_levels(levels, times, 2.4) if isinstance(e, Landing)]
    assert [(e.floor, e.cubes, round(e.t, 2)) for e in landed] == [(3, 1, 1.06)]


def test_modules_lifted_over_a_silent_channel_are_timed_by_their_own_channels() -> None:
    """Plate 5's converter went silent at 1.0 s; at 2.0 s the modules over
    plate 4 come off and channels 6 and 7 go too: the lift exposes 4, and
    it happened at 2.0 s, not when channel 5 stopped answering."""
    fusion = _fusion({5: 1.0, 6: 2.0, 7: 2.0})
    out = fusion.add_load([], [LoadConnection(5, False, 1.0, 1.1)], 1.1) + fusion.advance(1.4)
    assert _kinds(out) == [] and fusion.openings.dropped_out == {5}
    conns = [LoadConnection(6, False, 2.0, 2.1), LoadConnection(7, False, 2.0, 2.1)]
    out = fusion.add_load([], conns, 2.1) + fusion.advance(2.4)
    assert [(e.t, e.exposed) for e in out if isinstance(e, Lift)] == [(2.0, 4)]
    assert fusion.openings.exposed_level == 4


def test_a_channel_that_dropped_out_twice_is_named_flaky() -> None:
    """Once may be a glitch; a converter that stops answering again has a
    joint or a wire to look at (the app and ``towerear detect`` say which)."""
    fusion = _fusion({})
    for t in (1.0, 2.5):
        fusion.add_load([], [LoadConnection(3, False, t, t + 0.1)], t + 0.1)
        fusion.advance(t + 0.4)
        assert fusion.openings.flaky == (() if t < 2.0 else (3,))
        fusion.add_load([], [LoadConnection(3, True, t + 0.8, t + 0.8)], t + 0.8)
    assert fusion.openings.dropouts[3] == 2 and not fusion.openings.open
