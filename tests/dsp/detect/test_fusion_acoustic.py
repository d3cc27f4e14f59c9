"""Decisions by ear: when a drop is over, a knock-down heard, the level a strike was on."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dsp.detect.acoustic import AcousticLevelModel
from dsp.detect.cubes import CubeScale
from dsp.detect.events import Disturbance, Event, Landing
from dsp.detect.fusion import Fusion
from dsp.detect.grouping import Impact
from dsp.detect.heardrops import cut_short
from dsp.detect.piezo import PlateBusy, TimedImpact
from dsp.detect.strikes import after_last_silence, bounce_run, knocked_below, stayed_above


def _strike(
    t_s: float, level: int, amplitude: float = 300.0, below_db: float = 20.0
) -> TimedImpact:
    """Loudest on ``level``; the level under it ``below_db`` quieter, the rest 20 dB."""
    peaks = np.full(8, amplitude / 10)
    peaks[level] = amplitude
    if level > 0:
        peaks[level - 1] = amplitude * 10 ** (-below_db / 20)
    return TimedImpact(t_s, Impact(frame=0, channels=(level,), peaks=peaks, floor=np.ones(8)))


def _faint(t_s: float, level: int, amplitude: float) -> TimedImpact:
    """A strike heard only over the faint threshold, on ``level`` alone."""
    peaks = np.zeros(8)
    peaks[level] = amplitude
    return TimedImpact(t_s, Impact(frame=0, channels=(level,), peaks=peaks, floor=np.ones(8)),
                       faint=True)


def _fusion(impact_delay_s: float = 0.0) -> Fusion:
    return Fusion(n_levels=8, scale=CubeScale(n_levels=8), acoustic=AcousticLevelModel(n_levels=8),
                  impact_delay_s=impact_delay_s)


def _decided(drop: list[TimedImpact], now_s: float = 2.0) -> list[Event]:
    """The events a fresh acoustic-only fusion decides from ``drop`` by ``now_s``."""
    fusion = _fusion()
    fusion.add_impacts(drop)
    return fusion.advance(now_s)


def test_a_drop_is_over_only_once_a_strike_in_its_silence_would_have_arrived() -> None:
    # The piezo chain hands each impact over 24 ms after it happened; a
    # bounce 200 ms after the cube's last strike (within the 220 ms gap)
    # arrives when 224 ms have passed.
    first = [_strike(0.950, 5), _strike(1.000, 5, 200.0)]
    bounce = _strike(1.200, 5, 150.0)
    fusion = _fusion(impact_delay_s=0.024)
    fusion.add_impacts(first, known_s=1.024)
    assert fusion.advance(1.2205) == []
    fusion.add_impacts([bounce], known_s=1.224)
    events = fusion.advance(2.0)
    assert [(e.floor, round(e.t, 3)) for e in events if isinstance(e, Landing)] == [(5, 1.2)]
    assert round(events[0].t_decided, 3) == 1.444
    # Not waiting for it splits the drop: the first strike became a landing.
    hasty = _fusion()
    hasty.add_impacts(first, known_s=1.024)
    assert [e.floor for e in hasty.advance(1.2205) if isinstance(e, Landing)] == [5]


def test_a_cube_that_strikes_its_plate_once_more_after_its_drop_was_decided_is_no_second() -> None:
    """A cube that came to rest on plate 5 rocks onto a face 0.24 s after its
    last bounce, after the silence that ended its drop: one lone strike
    there, a tenth as loud. Not a second cube; the next cube thrown onto
    that plate strikes it as hard, and a strike that late is another throw."""
    def landings(late: TimedImpact) -> list[tuple[int, float]]:
        fusion = _fusion()
        fusion.add_impacts([_strike(0.90, 7, 200.0), _strike(0.95, 5), _strike(1.00, 5, 200.0)])
        events = fusion.advance(1.23)
        events += fusion.add_impacts([late])
        events += fusion.advance(3.0)
        return [(e.floor, round(e.t, 3)) for e in events if isinstance(e, Landing)]

    assert landings(_strike(1.24, 5, 30.0)) == [(5, 1.0)]
    assert landings(_strike(1.24, 5, 280.0)) == [(5, 1.0), (5, 1.24)]
    assert landings(_strike(1.50, 5, 30.0)) == [(5, 1.0), (5, 1.5)]
    assert landings(_strike(1.24, 3, 30.0)) == [(5, 1.0), (3, 1.24)]


def test_once_a_cube_rolled_on_silently_after_its_drop_was_decided_drops_wait_longer() -> None:
    fusion = _fusion()
    # Bounced on 6 and decided there after 0.22 s of silence; 0.3 s after its
    # last strike the cube that rolled off plate 6 strikes plate 2: a second
    # "drop".
    def landings(*drops: list[TimedImpact], until_s: float) -> list[int]:
        events = [e for drop in drops for e in fusion.add_impacts(drop)]
        return [e.floor for e in events + fusion.advance(until_s) if isinstance(e, Landing)]

    assert landings([_strike(1.00, 7), _strike(1.05, 6), _strike(1.10, 6, 150.0)],
                    [_strike(1.40, 2), _strike(1.45, 2, 150.0)], until_s=2.0) == [6, 2]
    # From then on, 0.35 s of silence is not yet the end of a drop.
    assert landings([_strike(5.00, 7), _strike(5.05, 5), _strike(5.10, 5, 150.0)],
                    [_strike(5.45, 1), _strike(5.50, 1, 150.0)], until_s=6.0) == [1]
    # But the next throw, struck on the top plate 0.3 s after the last
    # strike, ends the drop there at once.
    events = [e for s in (_strike(8.00, 7), _strike(8.05, 5), _strike(8.10, 5, 150.0))
              for e in fusion.add_impacts([s])]
    assert events == []
    decided = fusion.add_impacts([_strike(8.40, 7)], known_s=8.40)
    assert [(e.floor, e.t_decided) for e in decided if isinstance(e, Landing)] == [(5, 8.40)]


def test_in_a_quick_series_the_next_throw_struck_on_the_top_plate_ends_the_drop_before() -> None:
    # The first cube falls to plate 3 and bounces; 0.15 s after its last
    # bounce (within the short silence) the next cube strikes plate 7 and
    # comes to rest on 6.
    first = [_strike(1.00, 7), _strike(1.05, 5), _strike(1.10, 3), _strike(1.15, 3, 150.0)]
    second = [_strike(1.30, 7), _strike(1.35, 6), _strike(1.40, 6, 150.0)]
    fusion = _fusion()
    events = fusion.add_impacts(first + second) + fusion.advance(2.0)
    assert [(e.floor, round(e.t, 2)) for e in events if isinstance(e, Landing)] == [
        (3, 1.15), (6, 1.4)]


def test_a_cubes_bounces_cut_short_by_the_next_throw_are_told_as_it_is_struck() -> None:
    # The first cube bounces on plate 3 for 0.1 s; 0.05 s after its last
    # bounce, sooner than any silence ends a drop, the next cube strikes
    # plate 6 on its way to plate 5. Heard as one drop, only plate 5 was told.
    first = [_strike(1.00, 7), _strike(1.05, 5), _strike(1.10, 3), _strike(1.15, 3, 150.0),
             _strike(1.20, 3, 60.0)]
    second = [_strike(1.25, 6), _strike(1.30, 5), _strike(1.35, 5, 150.0)]
    fusion = _fusion()
    assert fusion.add_impacts(first, known_s=1.20) == []
    told = fusion.add_impacts(second, known_s=1.35)
    assert [(e.floor, e.t, e.t_decided) for e in told if isinstance(e, Landing)] == [
        (3, 1.20, 1.35)]
    # The drop's end tells the second cube only: the first is not told twice.
    assert [(e.floor, e.t) for e in fusion.advance(2.0) if isinstance(e, Landing)] == [(5, 1.35)]
    # Timed, as every landing is, when its plate fell quiet after the bounce.
    quiet = _fusion()
    quiet.add_busy(PlateBusy(1.20, 3, True))
    quiet.add_busy(PlateBusy(1.28, 3, False))
    quiet.add_impacts(first, known_s=1.20)
    assert [(e.floor, e.t) for e in quiet.add_impacts(second, known_s=1.35)
            if isinstance(e, Landing)] == [(3, 1.28)]
    # Hands rumbling on plate 3, heard on every plate alike, are no cube.
    def flat(imp: TimedImpact) -> TimedImpact:
        peaks = np.full(8, 0.35 * float(np.max(imp.peaks)))
        peaks[imp.impact.loudest] = float(np.max(imp.peaks))
        return TimedImpact(imp.t_s, Impact(frame=0, channels=(imp.impact.loudest,), peaks=peaks,
                                           floor=np.ones(8)))

    hands = _fusion()
    hands.add_impacts([first[0], first[1], *(flat(imp) for imp in first[2:])], known_s=1.20)
    assert hands.add_impacts(second, known_s=1.35) == []


def test_bounces_are_cut_short_only_by_a_strike_from_well_above() -> None:
    bounced = [_strike(1.00, 7), _strike(1.10, 3), _strike(1.16, 3, 150.0)]
    assert [imp.t_s for imp in cut_short(bounced, _strike(1.20, 6))] == [1.10, 1.16]
    # The plate just above: the cube bouncing up against it.
    assert cut_short(bounced, _strike(1.20, 4)) == []
    # One strike on the plate, or two within a strike's own ringing: a cube
    # passing a hole edge on its way down.
    assert cut_short(bounced[:2], _strike(1.20, 6)) == []
    assert cut_short([_strike(1.10, 3), _strike(1.13, 3, 150.0)], _strike(1.20, 6)) == []
    # A strike heard loudest below, between the bounces, lets them be; one
    # above ends them (the cube struck there came from the top).
    between = [bounced[1], _strike(1.13, 1, 80.0), bounced[2]]
    assert [imp.t_s for imp in cut_short(between, _strike(1.20, 6))] == [1.10, 1.16]
    between[1] = _strike(1.13, 5, 80.0)
    assert cut_short(between, _strike(1.20, 6)) == []
    # Strikes on the plate long before the last are not its bounces.
    on_3 = [_strike(0.80, 3), *bounced[1:]]
    assert [imp.t_s for imp in cut_short(on_3, _strike(1.20, 6))] == [1.10, 1.16]


def test_a_cube_that_struck_its_last_plate_once_may_go_on_and_is_waited_for() -> None:
    # Plate 6 struck once, then nothing for 0.3 s: a cube pausing on its
    # way (or passing a hole edge slowly) more often than one at rest,
    # which bounces. The drop goes on to plate 2: one landing, there.
    drop = [_strike(1.00, 7), _strike(1.05, 6), _strike(1.35, 2), _strike(1.40, 2, 150.0)]
    assert [e.floor for e in _decided(drop) if isinstance(e, Landing)] == [2]
    # Bounced on plate 6: at rest after the short silence, the strike on 2
    # is something else's.
    fusion = _fusion()
    fusion.add_impacts([_strike(1.00, 7), _strike(1.05, 6), _strike(1.10, 6, 150.0)])
    assert [e.floor for e in fusion.advance(1.35) if isinstance(e, Landing)] == [6]


def test_a_plate_struck_again_after_a_cube_struck_two_levels_below_kept_the_thrown_cube() -> None:
    # The thrown cube lands on 5 and knocks the resting one down; the knocked
    # cube strikes 3 while the thrown one still bounces on 5.
    drop = [_strike(1.00, 7), _strike(1.05, 5), _strike(1.12, 3), _strike(1.15, 5, 100.0),
            _strike(1.20, 3, 150.0)]
    assert stayed_above(drop, 3) == 5
    # By ear this is also two cubes thrown one after the other: two plain
    # landings, neither labelled knocked down (the game takes both).
    events = _decided(drop)
    assert [(type(e).__name__, e.floor, round(e.t, 2)) for e in events] == [
        ("Landing", 5, 1.15), ("Landing", 3, 1.2)]
    assert [e.knocked_from for e in events if isinstance(e, Landing)] == [None, None]


def test_a_strike_on_the_plate_just_above_may_be_a_ceiling_hit_and_tells_nothing() -> None:
    # The cube rests on 4 and touches plate 5 from below: one cube only.
    drop = [_strike(1.00, 7), _strike(1.05, 5), _strike(1.10, 4), _strike(1.14, 5, 60.0),
            _strike(1.18, 4, 100.0)]
    assert stayed_above(drop, 4) is None
    assert [e.floor for e in _decided(drop)] == [4]


def test_a_cube_below_sooner_than_one_leaving_the_plate_could_fall_there_is_another_cube() -> None:
    # Two strikes on 7 (a landing and its bounce), then level 3 struck 30 ms
    # later: four modules take a cube leaving plate 7 over 75 ms.
    knocked = [_strike(1.00, 7), _strike(1.10, 7, 150.0), _strike(1.13, 3), _strike(1.20, 3, 100.0)]
    assert stayed_above(knocked, 3) == 7
    # 150 ms later: the thrown cube itself, bounced off 7 and fell through.
    fell = [_strike(1.00, 7), _strike(1.10, 7, 150.0), _strike(1.25, 3), _strike(1.30, 3, 100.0)]
    assert stayed_above(fell, 3) is None
    # A "strike on 7" barely louder there than on 6 may be 6's, heard through 7.
    blurred = [_strike(1.00, 7), _strike(1.10, 7, 150.0, below_db=3.0), _strike(1.13, 3),
               _strike(1.20, 3, 100.0)]
    assert stayed_above(blurred, 3) is None
    # Struck once: a hole edge the cube passed, however fast it went on.
    once = [_strike(1.00, 7), _strike(1.03, 3), _strike(1.10, 3, 100.0)]
    assert stayed_above(once, 3) is None


def test_a_cube_knocked_one_level_down_is_heard_by_its_early_arrival() -> None:
    # Plate 5 struck and bounced on, plate 4 struck 20 ms after the bounce:
    # a cube leaving 5 needs over 37 ms to get there, so it was another one.
    knocked = [_strike(1.00, 7), _strike(1.04, 5), _strike(1.10, 5, 150.0), _strike(1.12, 4),
               _strike(1.20, 4, 100.0)]
    assert stayed_above(knocked, 4) == 5
    events = _decided(knocked)
    assert [(type(e).__name__, e.floor) for e in events] == [("Landing", 5), ("Landing", 4)]
    # Bounced twice on 5, then fell through to 4: one cube.
    fell = [_strike(1.00, 5), _strike(1.08, 5, 150.0), _strike(1.20, 4), _strike(1.26, 4, 100.0)]
    assert stayed_above(fell, 4) is None


def test_once_the_ear_has_learnt_a_hot_disc_no_longer_claims_its_neighbours_strikes() -> None:
    # Disc 6 is 14 dB hotter than disc 5: a strike on plate 5 peaks on 6.
    def on_five(t_s: float) -> TimedImpact:
        peaks = np.full(8, 20.0)
        peaks[5], peaks[6], peaks[4] = 300.0, 600.0, 40.0
        return TimedImpact(t_s, Impact(frame=0, channels=(6,), peaks=peaks, floor=np.ones(8)))

    def on_six(t_s: float) -> TimedImpact:
        peaks = np.full(8, 20.0)
        peaks[6], peaks[5], peaks[7] = 3000.0, 60.0, 300.0
        return TimedImpact(t_s, Impact(frame=0, channels=(6,), peaks=peaks, floor=np.ones(8)))

    fusion = _fusion()
    drop = [on_six(1.0), on_five(1.2), on_five(1.25)]
    assert fusion._levels_of(drop) == [6, 6, 6]  # nothing learnt: the loudest disc
    heard = {5: on_five(0.0).peaks, 6: on_six(0.0).peaks}
    for k in range(8):  # landings the load cells confirmed, two a level
        peaks = heard.get(k, np.where(np.arange(8) == k, 300.0, 20.0))
        fusion.acoustic.learn(peaks, k)
        fusion.acoustic.learn(peaks, k)
    assert fusion._levels_of(drop) == [6, 5, 5]
    assert fusion._last_impact_near(drop, 5) is drop[-1]


def test_one_strike_heard_through_the_whole_tower_is_a_knock_not_a_cube() -> None:
    # A knock on the table: loudest on the bottom plate, heard with onsets on
    # all eight channels, and nothing after it (not flat enough to be a
    # disturbance at once).
    peaks = np.array([320.0, 200, 120, 180, 250, 100, 60, 30])
    knock = TimedImpact(3.0, Impact(frame=0, channels=tuple(range(8)), peaks=peaks,
                                    floor=np.ones(8)))
    fusion = _fusion()
    assert fusion.add_impacts([knock]) == []
    events = fusion.advance(4.0)
    assert [type(e) for e in events] == [Disturbance]
    # A cube's strikes are heard on their plate and its neighbours.
    landings = _decided([_strike(3.0, 4), _strike(3.06, 4, 100.0)], 4.0)
    assert [e.floor for e in landings if isinstance(e, Landing)] == [4]


def test_strikes_heard_only_at_the_bottom_and_on_every_plate_alike_are_a_knock() -> None:
    # A knock on the table, heard twice (a bounce of the table top): loudest
    # on the ground floor, but only 6-9 dB over the median plate.
    def knock(t_s: float, peaks: list[float]) -> TimedImpact:
        return TimedImpact(t_s, Impact(frame=0, channels=(0,), peaks=np.array(peaks),
                                       floor=np.ones(8)))

    heard = [knock(3.0, [90.0, 70, 45, 40, 40, 35, 40, 38]),
             knock(3.08, [60.0, 50, 30, 28, 30, 25, 26, 27])]
    events = _decided(heard, 4.0)
    assert [type(e) for e in events] == [Disturbance]
    # A cube resting on the ground floor, which passed the holes above
    # unheard, stands out on its plate: a landing.
    landings = _decided([_strike(3.0, 0), _strike(3.08, 0, 120.0)], 4.0)
    assert [e.floor for e in landings if isinstance(e, Landing)] == [0]
    # Flat strikes higher up may be a cube on a rocking tower: heard as one.
    flat_up_high = [knock(3.0, [30.0, 35, 40, 45, 60, 90, 50, 40])]
    assert [type(e) for e in _decided(flat_up_high, 4.0)] == [Landing]


def test_hands_rumbling_on_the_tower_without_load_cells_are_no_landing() -> None:
    # Hands lift the top modules and reach in: a strike every 50-90 ms, heard
    # on every plate about alike (the loudest 4-8 dB over the median one).
    rng = np.random.default_rng(3)
    rumble = []
    for k in range(7):
        peaks = 40.0 * rng.uniform(0.6, 1.0, 8)
        peaks[5 + k % 3] = 100.0
        rumble.append(TimedImpact(3.0 + 0.07 * k, Impact(
            frame=0, channels=(5 + k % 3,), peaks=peaks, floor=np.ones(8))))
    assert [type(e) for e in _decided(rumble, 5.0)] == [Disturbance]
    # A cube clipping five hole edges faintly before its bounces is a landing.
    drop = rumble[:5] + [_strike(3.5, 2), _strike(3.58, 2, 150.0)]
    assert [e.floor for e in _decided(drop, 5.0) if isinstance(e, Landing)] == [2]
    # So is a cube heard through six onsets of a noisy room's talk.
    talk = [TimedImpact(3.0 + 0.05 * k, Impact(
        frame=0, channels=(2,), peaks=np.where(np.arange(8) == 2, 60.0, 40.0),
        floor=np.ones(8))) for k in range(6)]
    drop = [*talk, _strike(3.35, 3), _strike(3.4, 2), _strike(3.48, 2, 150.0)]
    assert [e.floor for e in _decided(drop, 5.0) if isinstance(e, Landing)] == [2]


def test_a_plate_below_struck_while_the_thrown_cube_still_bounced_got_the_knocked_cube() -> None:
    # The cube stopped on 4 (its bounces come last) and knocked the resting
    # one off: plate 3 was struck 90 ms after the first strike on 4, more
    # than half a fall from rest, while the thrown cube still bounced.
    knocked = [_strike(1.00, 7), _strike(1.07, 4), _strike(1.16, 3), _strike(1.20, 4, 150.0),
               _strike(1.26, 4, 60.0)]
    assert knocked_below(knocked, 4) == 3
    events = _decided(knocked)
    assert [(type(e).__name__, e.floor) for e in events] == [("Landing", 4), ("Landing", 3)]
    assert [e.knocked_from for e in events if isinstance(e, Landing)] == [None, None]
    # One cube landing on 4: nothing below.
    assert knocked_below([_strike(1.00, 6), _strike(1.04, 5), _strike(1.09, 4),
                          _strike(1.16, 4, 100.0)], 4) is None
    # Below struck only 10 ms after the first strike on 4: nothing fell that fast.
    assert knocked_below([_strike(1.00, 4), _strike(1.01, 3), _strike(1.12, 4, 100.0)], 4) is None
    # Below struck after the cube's last bounce: not while it stayed on 4.
    assert knocked_below([_strike(1.00, 4), _strike(1.08, 4, 100.0), _strike(1.20, 3)], 4) is None


def test_a_plates_bounce_run_is_its_last_strikes_closer_than_two_throws() -> None:
    # Bounces, even one high after knocking the resting cube off (0.2 s), are one run.
    assert bounce_run([5.00, 5.05, 5.25]) == [5.00, 5.05, 5.25]
    # Two throws of a quick series a third of a second apart each clipped it.
    assert bounce_run([4.70, 5.00, 5.05]) == [5.00, 5.05]
    # The run that began before the cube below came to rest, not a later cube's.
    assert bounce_run([4.70, 5.00, 5.05, 5.60], before=5.30) == [5.00, 5.05]
    assert bounce_run([5.60], before=5.30) == []


def test_the_thrown_cubes_strikes_are_those_after_the_drops_last_silence() -> None:
    drop = [_strike(t, 5) for t in (4.50, 4.55, 4.90, 5.00, 5.05)]
    assert [imp.t_s for imp in after_last_silence(drop, 0.22)] == [4.90, 5.00, 5.05]
    assert after_last_silence(drop, 0.5) == drop


def _carrying(level: int, below_db: float, above_db: float, far_db: float = 30.0) -> np.ndarray:
    """Peaks of a strike on ``level``: ``below_db`` quieter a level down, ``above_db`` up."""
    peaks = np.full(8, 10 ** (-far_db / 20))
    peaks[level] = 1.0
    peaks[level - 1] = 10 ** (-below_db / 20)
    peaks[level + 1] = 10 ** (-above_db / 20)
    return peaks


def test_the_ear_hears_a_tower_carry_strikes_further_down_than_up() -> None:
    model = AcousticLevelModel(n_levels=8)
    # This tower loses 3 dB a level downwards and 15 dB upwards.
    strike = _carrying(5, below_db=2.5, above_db=15.0, far_db=12.0)
    strike[3] = 10 ** (-11 / 20)
    assert model.classify(strike).level == 4  # the symmetric prior takes it for the one below
    for i in range(19):
        model.observe(_carrying(1 + i % 6, below_db=3.0, above_db=15.0))
    assert np.array_equal(model.heard_prior, model.prior)  # too few impacts heard yet
    model.observe(_carrying(3, below_db=3.0, above_db=15.0))
    assert model.classify(strike, heard_crosstalk=True).level == 5
    # Decisions beside the load cells keep the symmetric prior.
    assert model.classify(strike).level == 4


def test_the_ear_hears_each_pair_of_discs_apart() -> None:
    # Model P acoustic tower 2: the top plate's disc hears half as much as
    # the one below it (gains 1.19, 1.10, 0.55 on plates 5-7), strikes lose
    # 8 dB a level down. A cube resting on the top plate, heard 5 and 7 dB
    # quieter on plates 6 and 5, sounds to a tower-wide prior like plate 6's.
    gains = np.array([1.18, 1.30, 0.52, 0.81, 0.76, 1.19, 1.10, 0.55])

    def strike_on(level: int) -> np.ndarray:
        distance = np.arange(8) - level
        loss_db = np.where(distance < 0, 8.0, 10.5) * np.abs(distance)
        return gains * 10 ** (-loss_db / 20)

    resting_on_top = 10 ** (np.array([7.0, 12, 12, 7, 17, 32, 34, 39]) / 20)
    model = AcousticLevelModel(n_levels=8)
    assert model.classify(resting_on_top, heard_crosstalk=True).level == 6
    # Every throw strikes the top plate first: eight strikes heard there,
    # and a few elsewhere, are enough to hear its disc is the quiet one.
    for i in range(8):
        model.observe(strike_on(7))
        model.observe(strike_on(1 + i % 6))
    assert model.classify(resting_on_top, heard_crosstalk=True).level == 7
    # Decisions beside the load cells keep the symmetric prior.
    assert model.classify(resting_on_top).level == 6


def test_without_load_cells_a_strike_is_placed_by_the_crosstalk_heard() -> None:
    fusion = _fusion()
    for i in range(24):
        fusion.add_impacts([TimedImpact(0.5 * i, Impact(
            frame=0, channels=(1 + i % 6,), peaks=_carrying(1 + i % 6, 3.0, 15.0) * 300,
            floor=np.ones(8)))])
    fusion.advance(20.0)
    strike = _carrying(5, below_db=2.5, above_db=15.0, far_db=12.0) * 300
    strike[3] = 300 * 10 ** (-11 / 20)
    fusion.add_impacts([TimedImpact(30.0, Impact(frame=0, channels=(5,), peaks=strike,
                                                 floor=np.ones(8)))])
    assert [e.floor for e in fusion.advance(32.0) if isinstance(e, Landing)] == [5]


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 12), st.integers(0, 30), st.booleans())
def test_levels_of_many_impacts_are_each_ones_classification(
    seed: int, impacts: int, landings: int, heard_crosstalk: bool
) -> None:
    rng = np.random.default_rng(seed)
    ear = AcousticLevelModel(n_levels=8)
    for _ in range(landings):
        ear.learn(rng.lognormal(0.0, 2.0, 8), int(rng.integers(8)))
        ear.observe(rng.lognormal(0.0, 2.0, 8))
    rows = rng.lognormal(0.0, 2.0, (impacts, 8))
    rows[rng.random(rows.shape) < 0.1] = 0.0  # channels that heard nothing
    expected = [ear.classify(row, heard_crosstalk=heard_crosstalk).level for row in rows]
    assert ear.levels(rows, heard_crosstalk=heard_crosstalk).tolist() == expected


def _landed(drop: list[TimedImpact]) -> list[int]:
    return [e.floor for e in _decided(drop) if isinstance(e, Landing)]


def test_a_cube_going_on_under_the_onset_threshold_is_heard_by_its_faint_strikes() -> None:
    # A worn tower's quiet discs: the cube is heard loud on plate 7 only
    # (20 codes), then strikes plates 6 and 5 under the onset threshold.
    heard = [_strike(1.00, 7, 20.0), _strike(1.06, 7, 15.0)]
    assert _landed(heard) == [7]
    assert _landed([*heard, _faint(1.15, 6, 14.0), _faint(1.30, 5, 9.0)]) == [5]


def test_faint_strikes_that_are_no_cube_going_on_leave_the_landing_where_it_was() -> None:
    # Far under a loud drop's strikes: ringing or the room.
    assert _landed([_strike(1.00, 7, 300.0), _faint(1.10, 5, 8.0)]) == [7]
    # On a plate that heard the drop about as loud already: its crosstalk.
    loud_on_5 = _strike(1.00, 7, 20.0)
    loud_on_5.peaks[5] = 9.0
    assert _landed([loud_on_5, _faint(1.10, 5, 12.0)]) == [7]
    assert _landed([loud_on_5, _faint(1.10, 5, 20.0)]) == [5]
    # On the plate the cube is heard on, or above it: not a cube going on.
    assert _landed([_strike(1.00, 6, 20.0), _faint(1.10, 6, 15.0), _faint(1.2, 7, 15.0)]) == [6]
    # After the drop's silence: nothing to go on from.
    assert _landed([_strike(1.00, 7, 20.0), _faint(1.60, 6, 15.0)]) == [7]


def test_faint_strikes_before_a_loud_one_are_no_second_cube() -> None:
    # Hands on the tower: rumble heard loud on plate 6, faint on plate 4 in
    # between. Taken in, plate 6 struck again after a strike two plates
    # below read as a cube that stayed above and one that went on.
    drop = [_strike(1.00, 6, 20.0), _faint(1.12, 4, 15.0), _strike(1.15, 6, 18.0),
            _strike(1.25, 6, 15.0)]
    assert _landed(drop) == [6]
    assert _landed([imp if not imp.faint else _strike(1.12, 4, 15.0) for imp in drop]) == [6, 4]
