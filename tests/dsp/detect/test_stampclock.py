"""The piezo stamp clock: message stamps in, runs of sets timed on one grid out."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dsp.detect.piezo import DRIFT_ANCHOR_SETS, PiezoChain
from dsp.detect.stampclock import LATE_FOR_S, TOLERANCE_SETS, PiezoStampClock
from tests.dsp.detect.edrumulus import RATE
from tests.dsp.detect.edrumulus import device_codes as _device_codes


def _set_times(runs: list[tuple[float, int, int]], rate: float) -> np.ndarray:
    """The grid time of every set the runs cover, in order."""
    return np.concatenate([t0 + np.arange(b - a) / rate for t0, a, b in runs])


def _split(clock: PiezoStampClock, t: np.ndarray, sets: np.ndarray, cuts: list[int]) -> list:
    """The clock's runs over messages fed in pieces cut before the given messages."""
    edges = [0, *sorted(set(cuts)), t.size]
    first = np.concatenate([[0], np.cumsum(sets)])
    out = []
    for a, b in zip(edges[:-1], edges[1:], strict=True):
        out += [(t0, f + first[a], e + first[a]) for t0, f, e in clock.runs(t[a:b], sets[a:b])]
    return out


def test_the_tolerance_lies_above_the_chains_re_timing() -> None:
    # A grid the clock moves is re-timed by the chain, one it keeps never is.
    assert DRIFT_ANCHOR_SETS < TOLERANCE_SETS < 1.0


def test_stamps_late_by_a_changing_latency_stay_in_one_run_on_the_earliest_stamps() -> None:
    rate, sets, n = 3200.0, 7, 5000  # 11 s of messages, as model H's towers send them
    true_t = np.arange(n) * sets / rate
    late = np.random.default_rng(3).uniform(0.0, 300e-6, n)  # about one set at most
    stamps = np.round((true_t + late) * 1e6) / 1e6
    clock = PiezoStampClock(rate)
    runs = clock.runs(stamps, np.full(n, sets))
    # The grid settles on the least delayed stamps: a few moves at the
    # start, then one run to the end.
    assert clock.moves <= 10
    assert runs[-1][1] < 200 * sets and runs[-1][2] == n * sets
    times = _set_times(runs, rate)
    assert times.size == n * sets
    error = times[200 * sets :] - np.repeat(true_t, sets)[200 * sets :] - np.tile(
        np.arange(sets) / rate, n
    )[200 * sets :]
    assert np.all(error >= -1e-9) and np.all(error <= TOLERANCE_SETS / rate + 2e-6)


@pytest.mark.parametrize("ppm", [400.0, -400.0])
def test_a_sample_clock_drifting_from_the_stamps_is_followed_within_a_quarter_set(
    ppm: float,
) -> None:
    rate, sets, n = 2000.0, 8, 2000  # 8 s of messages of 8 sets
    stamps = np.round(np.arange(n) * sets / rate / (1 + ppm * 1e-6) * 1e6) / 1e6
    clock = PiezoStampClock(rate)
    runs = clock.runs(stamps, np.full(n, sets))
    assert len(runs) > 5 and clock.moves == len(runs) - 1
    times = _set_times(runs, rate)
    assert times.size == n * sets  # every set kept
    # Each message's first set within a quarter set of its stamp, or (late)
    # that and the drift of the time the clock waits to be sure.
    slack = TOLERANCE_SETS / rate + abs(ppm) * 1e-6 * (LATE_FOR_S + sets / rate) + 2e-6
    assert np.max(np.abs(times[::sets] - stamps)) <= slack
    # No drift, no latency: one run.
    assert len(PiezoStampClock(rate).runs(np.arange(n) * sets / rate, np.full(n, sets))) == 1


def test_a_hole_is_filled_on_the_grid_and_a_long_one_starts_afresh() -> None:
    rate, sets = 2000.0, 10
    stamps = np.arange(60) * sets / rate + 30e-6  # a fraction of a set late, alike
    kept = np.delete(np.arange(60), [20, 21, 22])  # 30 sets lost
    t = stamps[kept]
    t = np.concatenate([t, t[-1] + 3.0 + np.arange(5) * sets / rate])  # 3 s of silence
    runs = PiezoStampClock(rate).runs(t, np.full(t.size, sets))
    starts = [round(t0 * rate, 6) for t0, _, _ in runs]
    # After the hole: exactly 30 sets on, on the grid of the first stamp;
    # after 3 s (more than MAX_FILL_S): the stamp itself.
    assert starts[:2] == [round(30e-6 * rate, 6), round((230 + 30e-6 * rate), 6)]
    assert runs[-1][0] == pytest.approx(t[-5], abs=1e-12)
    assert runs[-1][1:] == (10 * (t.size - 5), 10 * t.size)


def test_a_message_sent_twice_is_its_own_run_a_whole_message_early() -> None:
    rate, sets = 2000.0, 10
    t = np.arange(30) * sets / rate
    t = np.insert(t, 11, t[10])  # message 10 again
    runs = PiezoStampClock(rate).runs(t, np.full(t.size, sets))
    assert [(round(t0 * rate), a, b) for t0, a, b in runs] == [
        (0, 0, 110), (100, 110, 120), (110, 120, 310)
    ]
    chain = PiezoChain(n_channels=8, sample_rate_hz=rate)
    samples = np.full((t.size * sets, 8), 512, dtype=np.uint16)
    for t0, a, b in runs:
        chain.process(t0, samples[a:b])
    assert chain.dropped_sets == sets and chain.filled_s == 0.0 and chain.gaps == 0


@settings(max_examples=40, deadline=None)
@given(
    cuts=st.lists(st.integers(1, 1499), max_size=12),
    seed=st.integers(0, 1000),
)
def test_runs_are_the_same_however_the_messages_are_cut(cuts: list[int], seed: int) -> None:
    rng = np.random.default_rng(seed)
    rate = 2500.0
    sets = rng.integers(3, 15, 1500)
    true_t = np.concatenate([[0], np.cumsum(sets)[:-1]]) / rate * (1 + 300e-6)
    stamps = true_t + rng.uniform(0.0, rng.uniform(0.0, 400e-6), 1500)
    stamps[700:] += 0.05  # a hole
    stamps = np.round(stamps * 1e6) / 1e6
    whole = PiezoStampClock(rate).runs(stamps, sets)
    pieces = _split(PiezoStampClock(rate), stamps, sets, cuts)
    # The same time for every set (a run may be cut where a piece ends, its
    # continuation summed in another order: to a nanosecond).
    assert np.allclose(_set_times(pieces, rate), _set_times(whole, rate), rtol=0.0, atol=1e-9)


def test_strikes_stamped_with_latency_are_timed_as_with_exact_stamps() -> None:
    codes = _device_codes("pd120_single_hits", stop_s=20.0)
    sets = 7
    n = codes.shape[0] // sets
    exact = np.arange(n) * sets / RATE
    late = np.round((exact + np.random.default_rng(9).uniform(0.0, 250e-6, n)) * 1e6) / 1e6

    def strikes(stamps: np.ndarray) -> tuple[list[float], int]:
        clock = PiezoStampClock(RATE)
        chain = PiezoChain(n_channels=codes.shape[1], sample_rate_hz=RATE)
        out = []
        runs = clock.runs(stamps, np.full(n, sets))
        for t0, a, b in runs:
            out += chain.process(t0, codes[a:b])
        return [x.t_s for x in out + chain.flush()], len(runs)

    reference, one = strikes(exact)
    found, few = strikes(late)
    assert one == 1 and few <= 10 and len(reference) > 5
    # Taken at their word the stamps re-timed nearly every message; on the
    # grid, every strike is where exact stamps put it, within a quarter set.
    assert len(found) == len(reference)
    assert np.max(np.abs(np.array(found) - reference)) <= TOLERANCE_SETS / RATE + 1e-6


def test_stamps_and_counts_must_pair_up() -> None:
    with pytest.raises(ValueError, match="3 stamps for 2 set counts"):
        PiezoStampClock(2000.0).runs(np.zeros(3), np.ones(2, dtype=np.int64))
    with pytest.raises(ValueError, match="piezo rate must be positive"):
        PiezoStampClock(0.0)
