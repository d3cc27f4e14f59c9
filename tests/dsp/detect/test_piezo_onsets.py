
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.io import wavfile

from dsp.detect.conditioning import PiezoConditioner, condition_batch
from dsp.detect.grouping import ImpactGrouper
from dsp.detect.noisefloor import NoiseFloorTracker
from dsp.detect.onsets import DEFAULT_MASK_OVERRIDE_RATIO, OnsetDetector
from dsp.detect.piezo import PiezoChain
from tests.dsp.detect.edrumulus import DATA, RATE
from tests.dsp.detect.edrumulus import device_codes as _device_codes


def _reference_hits(name: str, fraction: float) -> np.ndarray:
    """Hit times found offline on the raw 8 kHz signal: peaks above a fraction of the max."""
    sr, x = wavfile.read(DATA / f"{name}.wav")
    a = np.abs(x.astype(np.float64).reshape(len(x), -1)[:, 0])
    above = np.flatnonzero(a > fraction * a.max())
    starts = above[np.concatenate([[True], np.diff(above) > 0.1 * sr])]
    return starts / sr


def _chain_impacts(codes: np.ndarray, cuts: list[int] | None = None) -> list[tuple[float, tuple]]:
    chain = PiezoChain(n_channels=codes.shape[1], sample_rate_hz=RATE)
    edges = [0, *sorted(set(cuts or [])), codes.shape[0]]
    out = []
    for a, b in zip(edges[:-1], edges[1:], strict=True):
        out += chain.process(a / RATE, codes[a:b])
    out += chain.flush()
    return [(round(i.t_s, 6), i.channels, tuple(np.round(i.peaks, 6))) for i in out]


def test_every_real_single_hit_is_found_once() -> None:
    codes = _device_codes("pd120_single_hits")
    impacts = _chain_impacts(codes)
    # The first half second teaches the noise floor (a quiet start is part of
    # the contract); hits after it must all be found.
    reference = _reference_hits("pd120_single_hits", 0.25)
    reference = reference[reference > 0.5]
    found = np.array([t for t, _, _ in impacts])
    assert len(reference) >= 10
    # Every strong hit has an onset within 10 ms, and nothing was counted twice.
    assert all(np.min(np.abs(found - r)) < 0.01 for r in reference)
    assert len(found) == len(reference)


def test_real_adc_noise_gives_no_onsets() -> None:
    # The Teensy capture is quiet after its start-up glitch at 2.4-3.8 s.
    codes = _device_codes("teensy4_0_noise_test", start_s=5.0)
    assert _chain_impacts(codes) == []


def test_fast_real_roll_is_not_swallowed_by_the_mask() -> None:
    codes = _device_codes("pd120_roll", stop_s=10.0)
    impacts = _chain_impacts(codes)
    found = np.array([t for t, _, _ in impacts])
    peak = np.array([max(p) for _, _, p in impacts])
    gaps = np.diff(found)
    # Rolls are ~8-20 hits/s: many onsets. One inside the 30 ms mask of the
    # one before is a new, louder stroke (the pad ringing never rises).
    assert len(found) > 60
    inside = np.flatnonzero(gaps < 0.03 - 1e-9)
    assert len(inside) < len(found) // 4
    assert np.all(peak[inside + 1] >= DEFAULT_MASK_OVERRIDE_RATIO * peak[inside])


def test_real_crosstalk_is_grouped_into_the_louder_pad() -> None:
    codes = _device_codes("crosstalk_vh12_pd8", stop_s=5.0)
    impacts = _chain_impacts(codes)
    loud = [i for i in impacts if max(i[2]) > 100]
    assert loud, "the pad hits must be found"
    for _, _channels, peaks in loud:
        assert int(np.argmax(peaks)) == 0  # the hit pad, not its neighbour
    # the leaked hits on pad 1 joined the impact of pad 0 instead of making their own
    assert not any(ch == (1,) and max(p) < 20 for _, ch, p in impacts)


@settings(max_examples=15, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=9999), max_size=10))
def test_piezo_chain_is_block_size_invariant(cuts: list[int]) -> None:
    codes = _device_codes("pd120_single_hits", stop_s=5.0)[:10000]
    assert _chain_impacts(codes, cuts) == _chain_impacts(codes)


@settings(max_examples=15, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=3999), max_size=8))
def test_conditioner_streaming_equals_batch(cuts: list[int]) -> None:
    rng = np.random.default_rng(0)
    x = (512 + rng.normal(0, 3, (4000, 8))).astype(np.uint16)
    cond = PiezoConditioner(n_channels=8, sample_rate_hz=RATE)
    edges = [0, *sorted(set(cuts)), 4000]
    parts = [cond.process(x[a:b]) for a, b in zip(edges[:-1], edges[1:], strict=True)]
    assert np.allclose(np.concatenate(parts), condition_batch(x, sample_rate_hz=RATE))


def test_conditioner_removes_bias_and_keeps_clicks() -> None:
    x = np.full((4000, 1), 700.0)
    x[2000:2010, 0] += 100.0 * np.hanning(10)
    env = condition_batch(x, sample_rate_hz=RATE)
    assert env[:200].max() < 1e-6  # a constant bias never rings through
    assert env[248:253].max() > 30.0  # the click at sample 2000 (frame 250) does


def test_noise_floor_follows_a_quieter_room_at_once_and_a_louder_one_slowly() -> None:
    tracker = NoiseFloorTracker(n_channels=1, frame_rate_hz=250.0)
    loud = np.full((250, 1), 10.0)
    quiet = np.full((250, 1), 1.0)
    floors = tracker.process(np.concatenate([loud, quiet, loud]))
    assert np.isnan(floors[0, 0]) and floors[200, 0] == 10.0
    assert floors[499, 0] == pytest.approx(1.0)
    assert floors[-1, 0] <= 1.25 * 1.25  # two windows of loud: at most 2 rises


def test_noise_floor_is_the_same_however_the_frames_are_cut() -> None:
    rng = np.random.default_rng(3)
    env = rng.gamma(2.0, 1.5, (3000, 3)) * np.linspace(1.0, 4.0, 3000)[:, None]
    env[700:760] += 80.0  # a burst of strikes inside one window
    whole = NoiseFloorTracker(n_channels=3, frame_rate_hz=250.0).process(env)
    # Cuts inside windows, on window edges, blocks of one frame and of many windows.
    for cuts in ((1, 2, 125, 250, 251, 1999), (124, 125, 126), tuple(range(0, 3000, 7)),
                 (2500,)):
        tracker = NoiseFloorTracker(n_channels=3, frame_rate_hz=250.0)
        edges = [0, *cuts, env.shape[0]]
        parts = [tracker.process(env[a:b]) for a, b in zip(edges[:-1], edges[1:], strict=True)]
        assert np.array_equal(np.concatenate(parts), whole, equal_nan=True)


def _onsets(env: np.ndarray, cuts: tuple[int, ...] = ()) -> list[tuple[int, int]]:
    det = OnsetDetector(n_channels=env.shape[1], frame_rate_hz=250.0)
    floor = np.ones_like(env)
    edges = [0, *cuts, env.shape[0]]
    found = []
    for a, b in zip(edges[:-1], edges[1:], strict=True):
        found += [(o.frame, o.channel) for o in det.process(env[a:b], floor[a:b])]
    return found


def _ring(n: int, start: int, peak: float, decay_frames: float) -> np.ndarray:
    x = np.zeros(n)
    x[start:] = peak * np.exp(-np.arange(n - start) / decay_frames)
    return x


def test_a_strike_on_a_plate_still_ringing_over_the_threshold_is_an_onset() -> None:
    # A plate rings 40 dB over its floor and decays slowly: 100 ms later it is
    # still over the 20 dB threshold, so a new strike makes no rising edge.
    env = np.ones((120, 1))
    env[:, 0] += _ring(120, 20, 100.0, 20.0) + _ring(120, 45, 200.0, 5.0)
    assert _onsets(env) == [(20, 0), (45, 0)]
    assert _onsets(env, (30, 45, 46)) == [(20, 0), (45, 0)]
    # The ring alone, however slowly it decays, never retriggers.
    ring = np.ones((120, 1))
    ring[:, 0] += _ring(120, 20, 100.0, 20.0)
    assert _onsets(ring) == [(20, 0)]


def test_a_neighbours_crosstalk_does_not_mask_the_plates_own_strike() -> None:
    # Plate 1 is struck; plate 0 hears it 12 dB down and starts its mask.
    # 24 ms later plate 0 is struck itself, louder than that crosstalk.
    env = np.ones((80, 2))
    env[:, 1] += _ring(80, 20, 400.0, 3.0)
    env[:, 0] += _ring(80, 20, 100.0, 3.0) + _ring(80, 26, 300.0, 3.0)
    assert _onsets(env) == [(20, 0), (20, 1), (26, 0)]
    # Its own ringing, or a fainter strike in the mask, still does not retrigger.
    env[:, 0] = 1.0 + _ring(80, 20, 400.0, 3.0) + _ring(80, 26, 300.0, 3.0)
    assert _onsets(env) == [(20, 0), (20, 1)]


def test_degenerate_inputs_give_empty_results() -> None:
    cond = PiezoConditioner(n_channels=8, sample_rate_hz=RATE)
    assert cond.process(np.zeros((0, 8))).shape == (0, 8)
    det = OnsetDetector(n_channels=8, frame_rate_hz=250.0)
    assert det.process(np.zeros((0, 8)), np.zeros((0, 8))) == []
    assert ImpactGrouper(frame_rate_hz=250.0).process([], frames_done=0) == []
    assert PiezoChain(n_channels=8, sample_rate_hz=RATE).process(0.0, np.zeros((0, 8))) == []


def _drifting_impacts(codes: np.ndarray, cuts: list[int], ppm: float) -> tuple[list, PiezoChain]:
    """Impacts when each block is stamped by a clock the sample clock runs ``ppm`` fast against."""
    chain = PiezoChain(n_channels=codes.shape[1], sample_rate_hz=RATE)
    edges = [0, *sorted(set(cuts)), codes.shape[0]]
    out = []
    for a, b in zip(edges[:-1], edges[1:], strict=True):
        out += chain.process(a / RATE / (1 + ppm * 1e-6), codes[a:b])
    out += chain.flush()
    return out, chain


def test_a_sample_clock_running_off_the_stamps_keeps_every_set_and_follows_the_stamps() -> None:
    codes = _device_codes("pd120_single_hits", stop_s=20.0)
    ppm = 400.0
    stamp = 1 / (1 + ppm * 1e-6)  # stamp time of sample time 1 s
    # Blocks of up to a second: the drift over one stays under a set (longer
    # runs are cut by the pipeline, hostapp/pipeline.py).
    for cuts in (list(range(200, codes.shape[0], 200)), list(range(2000, codes.shape[0], 2000))):
        impacts, chain = _drifting_impacts(codes, cuts, ppm)
        assert chain.dropped_sets == 0 and chain.filled_s == 0.0
        nominal, _ = _drifting_impacts(codes, [], 0.0)
        assert [i.channels for i in impacts] == [i.channels for i in nominal]
        # Off the stamps by no more than the drift over a block and a quarter of a set.
        bound = 0.25 / RATE + ppm * 1e-6 * cuts[0] / RATE + 1e-9
        for found, ref in zip(impacts, nominal, strict=True):
            assert abs(found.t_s - ref.t_s * stamp) <= bound
    small, _ = _drifting_impacts(codes, list(range(200, codes.shape[0], 200)), ppm)
    large, _ = _drifting_impacts(codes, list(range(2000, codes.shape[0], 2000)), ppm)
    assert [x.impact.frame for x in small] == [x.impact.frame for x in large]


def test_runs_cut_a_quarter_set_apart_are_timed_alike_however_they_are_sliced() -> None:
    # The stamp clock cuts runs of messages where their microsecond stamps
    # have drifted a quarter of a set from its grid, so each run starts that
    # far, to the microsecond, from where the samples before it end. How
    # those samples were sliced must not decide whether the run is re-timed.
    from dsp.detect.stampclock import PiezoStampClock

    codes = _device_codes("pd120_single_hits", stop_s=20.0)
    sets = 10
    n = codes.shape[0] // sets
    # 250 ppm slow: the stamps (whole microseconds) lose a quarter set (125 us) in 0.5 s.
    t = np.round(np.arange(n) * sets / RATE * (1 + 250e-6) * 1e6) / 1e6
    runs = [
        (t0, codes[a:b]) for t0, a, b in PiezoStampClock(RATE).runs(t, np.full(n, sets))
    ]
    assert len(runs) > 5

    def impact_times(slice_s: float) -> list[float]:
        chain = PiezoChain(n_channels=codes.shape[1], sample_rate_hz=RATE)
        out = []
        for t0, part in runs:
            for pos in range(0, part.shape[0], int(slice_s * RATE)):
                out += chain.process(t0 + pos / RATE, part[pos : pos + int(slice_s * RATE)])
        return [x.t_s for x in out + chain.flush()]

    reference = impact_times(2.0)
    assert len(reference) > 5
    for slice_s in (0.1, 0.35, 0.5):
        assert impact_times(slice_s) == reference


def test_a_block_exactly_a_fifth_of_a_set_late_is_timed_alike_however_the_ones_before_were_cut(
) -> None:
    # Stamps are whole microseconds: a block can begin exactly 100 us (a
    # fifth of a set at 2000 sets/s) after the samples before it end. How
    # those were summed (one block or ten) must not decide whether it is
    # re-timed.
    codes = _device_codes("pd120_single_hits", stop_s=6.0)
    first = int(RATE)

    def impact_times(cuts: list[int]) -> list[float]:
        chain = PiezoChain(n_channels=codes.shape[1], sample_rate_hz=RATE)
        out = []
        edges = [0, *cuts, first]
        for a, b in zip(edges[:-1], edges[1:], strict=True):
            out += chain.process(a / RATE, codes[a:b])
        out += chain.process(1.0001, codes[first:])
        return [x.t_s for x in out + chain.flush()]

    whole = impact_times([])
    assert len([t for t in whole if t > 1.0]) > 2
    assert impact_times(list(range(200, first, 200))) == whole
    assert impact_times([7, 333, 1999]) == whole


def test_a_message_sent_twice_is_dropped_and_a_lost_one_filled() -> None:
    codes = _device_codes("pd120_single_hits", stop_s=2.0)
    chain = PiezoChain(n_channels=codes.shape[1], sample_rate_hz=RATE)
    chain.process(0.0, codes[:800])
    chain.process(0.396, codes[792:1600])  # its first 8 sets again
    assert chain.dropped_sets == 8
    chain.process(0.9, codes[1800:2400])  # 200 sets lost
    assert chain.filled_s == pytest.approx(0.1)


def test_a_filled_hole_in_the_stream_teaches_the_floor_nothing() -> None:
    # Room noise of a couple of ADC codes, 1.2 s of it lost (a damaged
    # stream) and bridged by holding the last sample: silence, which a
    # floor learnt from would fall to nothing and let every flicker after
    # it through as a strike.
    rng = np.random.default_rng(5)
    codes = np.round(512.0 + rng.normal(0.0, 2.0, (int(12 * RATE), 8))).astype(np.int64)
    lost_from, lost_to = int(5 * RATE), int(6.2 * RATE)
    for cuts in ([], [7001, 9000, 9003, 15000]):
        chain = PiezoChain(n_channels=8, sample_rate_hz=RATE)
        edges = [0, *cuts, codes.shape[0]]
        impacts = []
        for a, b in zip(edges[:-1], edges[1:], strict=True):
            for lo, hi in ((a, min(b, lost_from)), (max(a, lost_to), b)):
                if lo < hi:
                    impacts += chain.process(lo / RATE, codes[lo:hi])
        assert chain.filled_s == pytest.approx(1.2)
        assert impacts == []
        assert np.all(chain.floor.floor > 1.0)


def test_a_floor_that_fell_to_nothing_rises_again() -> None:
    # A converter read one code for a second, then the room came back.
    tracker = NoiseFloorTracker(n_channels=1, frame_rate_hz=250.0)
    floors = tracker.process(np.concatenate([np.zeros((250, 1)), np.full((5000, 1), 3.0)]))
    assert floors[300, 0] < 0.2
    assert floors[-1, 0] == pytest.approx(3.0)


def test_bridged_frames_leave_the_floor_the_same_however_the_frames_are_cut() -> None:
    rng = np.random.default_rng(6)
    env = rng.gamma(2.0, 1.5, (2000, 2))
    env[600:900] = 0.0
    bridged = np.zeros(2000, dtype=bool)
    bridged[600:900] = True

    def run(cuts: tuple[int, ...]) -> np.ndarray:
        tracker = NoiseFloorTracker(n_channels=2, frame_rate_hz=250.0)
        edges = sorted({0, 600, 900, *cuts, 2000})
        return np.concatenate([
            tracker.process(env[a:b], bridged=bool(bridged[a]))
            for a, b in zip(edges[:-1], edges[1:], strict=True)
        ])

    whole = run(())
    assert np.nanmin(whole[900:]) > 1.0
    for cuts in ((1, 2, 125, 250, 251, 1999), (124, 125, 126, 620, 899), tuple(range(0, 2000, 7))):
        assert np.array_equal(run(cuts), whole, equal_nan=True)


def _clicks(clicks: list[tuple[float, int, float]], seconds: float = 4.0) -> np.ndarray:
    """Eight channels of ADC noise (1 code rms) with 300 Hz clicks (time, channel, amplitude)."""
    rng = np.random.default_rng(0)
    x = 512.0 + rng.normal(0.0, 1.0, (int(seconds * RATE), 8))
    t = np.arange(80) / RATE
    for t_s, channel, amplitude in clicks:
        i = int(t_s * RATE)
        x[i : i + 80, channel] += amplitude * np.sin(2 * np.pi * 300.0 * t) * np.exp(-t / 0.01)
    return np.clip(np.round(x), 0, 1023)


def _faint_chain_impacts(
    codes: np.ndarray, cuts: list[int] | None = None, faint_db: float | None = 14.0
) -> list[tuple[float, bool, tuple[int, ...], tuple[float, ...]]]:
    chain = PiezoChain(n_channels=8, sample_rate_hz=RATE, faint_threshold_db=faint_db)
    edges = [0, *sorted(set(cuts or [])), codes.shape[0]]
    out = []
    for a, b in zip(edges[:-1], edges[1:], strict=True):
        out += chain.process(a / RATE, codes[a:b])
    out += chain.flush()
    return [(round(i.t_s, 6), i.faint, i.channels, tuple(np.round(i.peaks, 6))) for i in out]


def test_a_strike_under_the_onset_threshold_is_delivered_faint_and_heard_where_it_rose() -> None:
    codes = _clicks([(1.0, 7, 200.0), (2.0, 3, 10.0), (3.0, 3, 30.0)])
    impacts = _faint_chain_impacts(codes)
    assert [(round(t, 2), faint, channels) for t, faint, channels, _ in impacts] == [
        (1.0, False, (7,)), (2.0, True, (3,)), (3.0, False, (3,))]
    # Only the channel it rose on is heard: the others' peaks are the room.
    peaks = impacts[1][3]
    assert peaks[3] > 0 and all(p == 0 for k, p in enumerate(peaks) if k != 3)
    # Without a faint threshold the chain is what it always was.
    plain = _faint_chain_impacts(codes, faint_db=None)
    assert plain == [i for i in impacts if not i[1]]


def test_a_loud_strikes_crosstalk_and_attack_are_no_faint_impacts() -> None:
    # Plate 6 hears plate 7's strike faintly, at the same moment.
    codes = _clicks([(1.0, 7, 200.0), (1.0, 6, 10.0), (2.0, 5, 60.0)])
    impacts = _faint_chain_impacts(codes)
    assert [(round(t, 2), faint) for t, faint, _, _ in impacts] == [(1.0, False), (2.0, False)]


@settings(max_examples=15, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=7999), max_size=10))
def test_piezo_chain_with_faint_impacts_is_block_size_invariant(cuts: list[int]) -> None:
    codes = _clicks([(1.0, 7, 200.0), (1.02, 5, 9.0), (1.5, 6, 12.0), (1.506, 6, 40.0),
                     (2.0, 3, 10.0), (2.004, 2, 8.0), (3.0, 1, 25.0), (3.03, 0, 11.0)])
    whole = _faint_chain_impacts(codes)
    assert any(faint for _, faint, _, _ in whole)
    assert _faint_chain_impacts(codes, cuts) == whole
