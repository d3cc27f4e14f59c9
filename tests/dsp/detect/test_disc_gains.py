"""Disc gains read from how neighbouring discs hear the same strikes (dsp.detect.discgains)."""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from dsp.detect.detector import Detector
from dsp.detect.discgains import DEADBAND_DB, FIRST, DiscGains, gains_from_pairs, split_two_clusters
from dsp.detect.grouping import Impact
from dsp.detect.piezo import TimedImpact
from dsp.detect.synthetic import SyntheticTower
from tests.scripts import TOOLS, load_script

LEVELS = np.arange(8)


def _strikes(
    rng: np.random.Generator, gains_db: np.ndarray, n: int, *, up_db: float = 7.0,
    down_db: float = 11.0, sources: np.ndarray | None = None,
) -> list[TimedImpact]:
    """Strikes on random plates, heard through a tower losing ``up_db`` / ``down_db`` a level."""
    src = rng.integers(0, 8, n) if sources is None else sources
    loud_db = rng.uniform(35.0, 60.0, n)
    dist = LEVELS[None, :] - src[:, None]
    loss = np.where(dist > 0, up_db * dist, -down_db * dist)
    level_db = loud_db[:, None] - loss + gains_db[None, :] + rng.normal(0.0, 1.5, (n, 8))
    peaks = 10.0 ** (level_db / 20.0)
    return [
        TimedImpact(0.5 * i, Impact(frame=i, channels=(int(s),), peaks=p, floor=np.ones(8)))
        for i, (s, p) in enumerate(zip(src, peaks, strict=True))
    ]


def _without_line(g: np.ndarray) -> np.ndarray:
    line = np.vstack([np.ones(8), LEVELS.astype(float)]).T
    fit, *_ = np.linalg.lstsq(line, g, rcond=None)
    return np.asarray(g - line @ fit)


def test_two_clusters_are_split_and_too_few_values_are_not() -> None:
    values = np.array(
        [-9.0, -10, -11, -10.5, -9.5, -10, -8.5, -11.5, 4, 5, 6, 5.5, 4.5, 5, 6.5, 3.5]
    )
    lower, upper = split_two_clusters(values, min_each=4) or (np.nan, np.nan)
    assert lower == pytest.approx(-10.0, abs=0.3) and upper == pytest.approx(5.0, abs=0.3)
    assert split_two_clusters(values[:7], min_each=4) is None


def test_a_hot_and_a_quiet_disc_are_read_whatever_the_towers_asymmetry() -> None:
    rng = np.random.default_rng(1)
    true = np.array([0.0, 0.0, -9.0, 0.0, 0.0, 11.0, 0.0, 0.0])
    strikes = _strikes(rng, true, 300)
    heard_db = np.array([20 * np.log10(s.peaks) for s in strikes])
    read = gains_from_pairs(heard_db, np.ones_like(heard_db, dtype=bool))
    assert read is not None
    # Gains come without their constant and straight line (the tower's asymmetry).
    np.testing.assert_allclose(read, _without_line(true), atol=1.5)


def test_equalised_strikes_are_heard_loudest_on_the_plate_struck() -> None:
    rng = np.random.default_rng(2)
    true = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 14.0, 0.0, 0.0])
    gains = DiscGains(8)
    for strike in _strikes(rng, true, 200, up_db=6.0, down_db=6.0):
        gains.equalise(strike)
    # Read without the straight line through all eight gains, less the dead band.
    assert int(np.argmax(gains.gain_db)) == 5
    assert gains.gain_db[5] == pytest.approx(_without_line(true)[5] - DEADBAND_DB, abs=1.0)
    on_top = _strikes(rng, true, 20, up_db=6.0, down_db=6.0, sources=np.full(20, 7))
    raw_loudest = [s.impact.loudest for s in on_top]
    assert raw_loudest.count(5) >= 15  # the hot disc two plates down hears them loudest
    equalised = [gains.equalise(s) for s in on_top]
    assert [s.impact.loudest for s in equalised] == [7] * 20
    for before, after in zip(on_top, equalised, strict=True):
        # How far a strike stands over each disc's floor is unchanged.
        np.testing.assert_allclose(after.impact.snr_db(), before.impact.snr_db(), atol=1e-9)
        assert after.t_s == before.t_s and after.channels == before.channels


def test_discs_alike_are_left_alone() -> None:
    rng = np.random.default_rng(3)
    gains = DiscGains(8)
    strikes = _strikes(rng, np.zeros(8), 300, up_db=5.0, down_db=13.0)
    # The first readings, of a few dozen strikes, may stray past the dead band.
    left_alone = [gains.equalise(s) is s for s in strikes]
    assert sum(left_alone) >= 270 and all(left_alone[100:])
    assert not gains.gain_db.any()


def test_nothing_is_equalised_before_the_first_strikes_and_faint_ones_teach_nothing() -> None:
    rng = np.random.default_rng(4)
    true = np.array([0.0, 0.0, 0.0, 12.0, 0.0, 0.0, 0.0, 0.0])
    strikes = _strikes(rng, true, 200)
    gains = DiscGains(8)
    assert all(gains.equalise(s) is s for s in strikes[: FIRST - 1])
    # Faint strikes hold only the channels where they rose: never learnt from.
    other = DiscGains(8)
    for s in _strikes(rng, np.array([15.0, 0, 0, 0, 0, 0, 0, -15.0]), 300):
        assert other.equalise(TimedImpact(s.t_s, s.impact, faint=True)) is not None
    assert not other.gain_db.any()
    for s in strikes[FIRST - 1:]:
        gains.equalise(s)
    assert int(np.argmax(gains.gain_db)) == 3


def test_a_noiseless_towers_rounding_residue_is_not_heard() -> None:
    # An exactly noiseless tower's floor reads 0 (cross-check model AE): the
    # filters' residue on discs the strike never reached must not count.
    rng = np.random.default_rng(5)
    gains = DiscGains(8)
    for i in range(200):
        peaks = 10.0 ** rng.uniform(-9.0, -3.0, 8)
        struck = int(rng.integers(0, 8))
        peaks[struck] = rng.uniform(50.0, 400.0)
        impact = Impact(frame=i, channels=(struck,), peaks=peaks, floor=np.zeros(8))
        gains.equalise(TimedImpact(0.5 * i, impact))
    assert not gains.gain_db.any()


def test_a_hot_disc_on_a_makers_tower_heard_without_its_load_cells(tmp_path: Path) -> None:
    # Cross-check model AH, tower 11 (tools/crosscheck_ah, written blind):
    # microphone amplifier boards of different gains; the one of level 6
    # hears its neighbours' strikes louder than their own discs do. Heard
    # without the load cells, a minute of quick series: 6 of 29 landings
    # right before the discs were equalised.
    from hostapp.cli.detect import detect_recording

    gen = load_script(TOOLS / "crosscheck_ah" / "make_recordings_ah.py", "ah_for_disc_gains")
    score = load_script(TOOLS / "crosscheck" / "score.py", "score_for_disc_gains")
    heard = load_script(TOOLS / "crosscheck" / "heard_only.py", "heard_only_for_disc_gains")
    recording, truth = gen.make_recording(11, "rapid", 60.0, tmp_path)
    alone = tmp_path / "heard.bin"
    alone.write_bytes(heard.without_load(recording.read_bytes(), say_no_cells=False))
    result = detect_recording(alone)
    gains = result.diagnostics["detector"]["disc_gains_db"]
    assert int(np.argmax(gains)) == 6 and gains[6] > 5.0
    found = score.score_one(
        score.read_truth(truth), score.DetectRun(result.events, 0, 1.0), tolerance_s=0.5
    )
    assert found["n_truth"] == 29
    assert found["right"] >= 15
    # With the load cells, the landings they confirm teach the ear the discs:
    # strikes are not equalised there.
    weighed = detect_recording(recording)
    assert not any(weighed.diagnostics["detector"]["disc_gains_db"])


def _heard_tower() -> SyntheticTower:
    """A minute and a half of throws heard by discs alike but level 5's, 10 dB hot."""
    tower = SyntheticTower(duration_s=90.0, seed=11)
    rng = np.random.default_rng(11)
    for k in range(40):
        tower.throw(1.0 + 2.1 * k, int(rng.integers(0, 8)))
    tower.piezo[:, 5] = 512.0 + (tower.piezo[:, 5] - 512.0) * 10.0 ** (10.0 / 20.0)
    return tower


def _heard(tower: SyntheticTower, cuts: list[int]) -> tuple[list, np.ndarray]:
    det = Detector(piezo_rate_hz=2000.0, load_rate_hz=80.0)
    codes = tower.piezo_codes()
    edges = [0, *sorted(set(cuts)), len(codes)]
    out = []
    for a, b in zip(edges[:-1], edges[1:], strict=True):
        out += det.feed_piezo(a / 2000.0, codes[a:b])
    out += det.finish()
    return out, det.disc_gains.gain_db


@functools.cache
def _heard_in_seconds() -> tuple[list, np.ndarray]:
    return _heard(_heard_tower(), list(range(0, 180000, 2000)))


@settings(max_examples=4, deadline=None, phases=[Phase.explicit, Phase.reuse, Phase.generate])
@given(st.lists(st.integers(min_value=1, max_value=179999), min_size=20, max_size=80))
def test_block_sizes_do_not_change_what_is_heard_with_equalised_discs(cuts: list[int]) -> None:
    events, gains = _heard(_heard_tower(), cuts + list(range(0, 180000, 2000)))
    reference, reference_gains = _heard_in_seconds()
    assert int(np.argmax(reference_gains)) == 5 and reference_gains[5] > 3.0
    assert events == reference
    np.testing.assert_array_equal(gains, reference_gains)
