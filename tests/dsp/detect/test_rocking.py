import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dsp.detect.detector import Detector
from dsp.detect.loadcell import LoadChannelProcessor, LoadStep
from dsp.detect.playnoise import fresh_differences
from dsp.detect.rocking import RockingComb, RockingPeriod, died_down
from dsp.detect.synthetic import SyntheticTower

TARE = 40.0  # counts of noise on an empty, quiet tower
CUBE = 8000.0
# A throw every 5 s; the rocking it sets going dies down within 3 (a
# tower rocking without a pause is not told from a hand steadying it).
THROWS_APART_S = 5.0


def _tower(
    seconds: float, rate: float, *, rock_hz: float, rocking: float, on: slice = slice(None),
    hum: float = 0.0, seed: int = 3, apart_s: float = THROWS_APART_S,
) -> tuple[np.ndarray, np.ndarray]:
    """A tower read ``rate`` times a second: quiet for 4 s, then rocking.

    Every throw (one each ``apart_s`` from 5 s) sets the tower's one mode going
    (``rock_hz``, decaying over a few seconds, ``rocking`` counts on the
    cells ``on``, each with its own sign and share) and lands a cube on
    a plate (7, 6, 5 in turn). ``hum``: the mains aliased onto every cell
    at 10 Hz, all the time.
    """
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * rate)) / rate
    v = rng.normal(0.0, TARE, (t.size, 8)) + rng.uniform(-1e5, 1e5, 8)
    gains = rng.uniform(0.5, 1.0, 8) * rng.choice([-1.0, 1.0], 8)
    sway = np.zeros(t.size)
    for k, throw in enumerate(np.arange(5.0, seconds - 2.0, apart_s)):
        after = t >= throw
        age = t[after] - throw
        sway[after] += np.exp(-age / 0.8) * np.sin(2 * np.pi * rock_hz * age + k)
        v[t >= throw + 0.3, 7 - k % 3] += CUBE
    rocked = rocking * sway[:, None] * gains[None, :]
    v[:, on] += rocked[:, on]
    v += hum * np.sin(2 * np.pi * 10.0 * t + rng.uniform(0, 6.3, 8)[:, None]).T
    return t, v


def _combs(t: np.ndarray, v: np.ndarray, cuts: list[int], fresh: np.ndarray | None = None
           ) -> list[int]:
    """The comb length the tracker gives at the start of every second, fed in blocks."""
    tracker = RockingPeriod(8)
    tare = np.full(8, TARE)
    fresh = np.ones(v.shape, dtype=bool) if fresh is None else fresh
    out = []
    edges = [0, *sorted(set(cuts)), t.size]
    second = None
    for a, b in zip(edges[:-1], edges[1:], strict=True):
        secs = np.floor(t[a:b]).astype(int)
        for s in np.unique(secs):
            rows = np.flatnonzero(secs == s) + a
            if s != second:
                tracker.begin(int(s))
                out.append(tracker.comb_at(tare)[0])
                second = s
            tracker.add(t[rows], v[rows], fresh[rows])
    return out


@pytest.mark.parametrize(("rate", "rock_hz"), [(80.0, 2.7), (80.0, 6.5), (10.0, 3.3)])
def test_a_rocking_tower_gets_a_comb_one_period_long(rate: float, rock_hz: float) -> None:
    t, v = _tower(60.0, rate, rock_hz=rock_hz, rocking=4000.0)
    combs = _combs(t, v, [])
    assert combs[:8] == [1] * 8  # the quiet start and the first throws: not yet known
    found = [c for c in combs if c > 1]
    assert found, "the rocking was never found"
    assert combs.index(found[0]) <= 25
    assert abs(found[-1] - rate / rock_hz) <= 1.0
    # Once found it stays: a rocking tower rocks again with every throw.
    assert all(c > 1 for c in combs[combs.index(found[0]):])


def test_a_quiet_tower_gets_none() -> None:
    t, v = _tower(60.0, 80.0, rock_hz=2.7, rocking=0.0)
    assert set(_combs(t, v, [])) == {1}


def test_the_mains_on_the_cells_is_no_rocking() -> None:
    # Hum that was there from the start is part of the cells' noise.
    t, v = _tower(60.0, 80.0, rock_hz=2.7, rocking=0.0, hum=3 * TARE)
    assert set(_combs(t, v, [])) == {1}


def test_plates_ringing_on_their_own_are_no_rocking() -> None:
    # Three plates swinging, each at its own rate: not one mode of the tower.
    t, v = _tower(60.0, 80.0, rock_hz=2.7, rocking=0.0)
    rng = np.random.default_rng(8)
    for level, hz in ((5, 3.1), (6, 4.4), (7, 6.2)):
        for throw in np.arange(5.0, 58.0, 3.0):
            after = t >= throw
            age = t[after] - throw
            v[after, level] += 3000.0 * np.exp(-age / 1.5) * np.sin(2 * np.pi * hz * age
                                                                    + rng.uniform(0, 6.3))
    assert set(_combs(t, v, [])) == {1}


def test_a_hand_steadying_the_tower_is_no_rocking() -> None:
    # Every cell swinging with a hand's 9 Hz tremor for 12 s, twice: no
    # throw's rocking dies down within a few seconds like that.
    t, v = _tower(70.0, 80.0, rock_hz=2.7, rocking=0.0)
    rng = np.random.default_rng(9)
    for start in (15.0, 45.0):
        on = (t >= start) & (t < start + 12.0)
        v[on] += 600.0 * np.sin(2 * np.pi * 9.0 * t[on])[:, None] * rng.uniform(-1, 1, 8)
    assert set(_combs(t, v, [])) == {1}


@pytest.mark.parametrize("rock_hz", [4.5, 6.5])
def test_a_tower_rocking_on_between_throws_gets_its_comb_while_it_rocks(rock_hz: float) -> None:
    # A throw every 2.5 s for 40 s: the tower never calms between them, so
    # its cells move in one run of seconds as long as a hand steadying it
    # would. But its rocking dies down after every throw, as a hand's
    # tremor does not: the comb comes while the run goes on, and stays.
    t, v = _tower(45.0, 80.0, rock_hz=rock_hz, rocking=4000.0, apart_s=2.5)
    combs = _combs(t, v, [])
    found = [s for s, c in enumerate(combs) if c > 1]
    assert found, "the rocking was never found"
    assert found[0] <= 15  # long before the throws end (at 42 s) and the run with them
    assert all(c > 1 for c in combs[found[0]:])
    assert abs(combs[-1] - 80.0 / rock_hz) <= 1.0


@pytest.mark.parametrize(
    ("motion", "died"),
    [
        ([4.4, 4.5, 4.7, 4.6, 4.3, 4.7], False),  # a hand's tremor, steady
        ([1.9, 5.8, 2.8], True),  # a throw's rocking calming
        ([6.0, 4.0, 3.5], True),  # 3.5 of the 6.0 reached before
        ([3.0, 6.0, 4.0, 7.0], False),
        ([], False),
    ],
)
def test_motion_died_down_when_it_fell_well_below_the_most_it_had_reached(
    motion: list[float], died: bool
) -> None:
    assert died_down(motion) is died


@settings(max_examples=10, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=2799), max_size=8))
def test_block_sizes_do_not_change_the_comb_of_a_tower_rocking_on(cuts: list[int]) -> None:
    t, v = _tower(35.0, 80.0, rock_hz=4.5, rocking=4000.0, apart_s=2.5)
    assert _combs(t, v, []) == _combs(t, v, cuts)


@settings(max_examples=15, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=3199), max_size=8))
def test_block_sizes_do_not_change_the_comb(cuts: list[int]) -> None:
    t, v = _tower(40.0, 80.0, rock_hz=2.7, rocking=4000.0)
    assert _combs(t, v, []) == _combs(t, v, cuts)


def test_fresh_differences_skip_stale_readings() -> None:
    rows = np.array([[1.0, 5.0], [1.0, 7.0], [4.0, 7.0], [4.0, 6.0]])
    fresh = np.array([[True, True], [False, True], [True, False], [False, True]])
    d = fresh_differences(rows, fresh)
    assert np.isnan(d[0]).all()
    assert np.isnan(d[1, 0]) and d[1, 1] == 2.0
    assert d[2, 0] == 3.0 and np.isnan(d[2, 1])
    assert np.isnan(d[3, 0]) and d[3, 1] == -1.0


def test_the_comb_is_a_mean_over_the_last_fresh_readings() -> None:
    comb = RockingComb(1)
    values = np.arange(1.0, 9.0)[:, None]
    ok = np.ones((8, 1), dtype=bool)
    fresh = ok.copy()
    fresh[4] = False  # a stale reading holds the mean before it
    out = comb.apply(values, ok, fresh, 3)[:, 0]
    assert out.tolist() == pytest.approx([1.0, 1.5, 2.0, 3.0, 3.0, 13 / 3, 17 / 3, 7.0])
    # Off (length 1), the readings pass as they are, and are remembered.
    assert comb.apply(np.array([[20.0]]), ok[:1], ok[:1], 1)[0, 0] == 20.0
    assert comb.apply(np.array([[26.0]]), ok[:1], ok[:1], 3)[0, 0] == pytest.approx(18.0)


def test_an_invalid_reading_passes_and_starts_the_mean_afresh() -> None:
    comb = RockingComb(1)
    values = np.array([[10.0], [20.0], [0.0], [50.0], [70.0]])
    ok = np.array([[True], [True], [False], [True], [True]])
    out = comb.apply(values, ok, ok, 4)[:, 0]
    assert out.tolist() == [10.0, 15.0, 0.0, 50.0, 60.0]


def _naive_comb(values: np.ndarray, ok: np.ndarray, fresh: np.ndarray, length: int
                ) -> np.ndarray:
    """The comb as its docstring says, one reading at a time (length 1: as they are)."""
    out = values.astype(float).copy()
    if length == 1:
        return out
    for k in range(values.shape[1]):
        kept: list[float] = []
        held = np.nan
        for i in range(values.shape[0]):
            if not ok[i, k]:
                kept, held = [], np.nan
                continue
            if fresh[i, k]:
                kept.append(values[i, k])
                held = float(np.mean(kept[-length:]))
            out[i, k] = held if np.isfinite(held) else values[i, k]
    return out


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=399), max_size=8),
       st.integers(min_value=1, max_value=40), st.sampled_from([(0.0, 0.0), (0.02, 0.3)]))
def test_block_sizes_do_not_change_the_combs_output(
    cuts: list[int], length: int, damage: tuple[float, float]
) -> None:
    # Whole blocks of fresh readings take a path of their own: both give the same.
    rng = np.random.default_rng(2)
    values = np.round(rng.normal(0, 1000, (400, 3)))
    ok = rng.random((400, 3)) >= damage[0]
    fresh = ok & (rng.random((400, 3)) >= damage[1])
    whole = RockingComb(3).apply(values, ok, fresh, length)
    comb = RockingComb(3)
    edges = [0, *sorted(set(cuts)), 400]
    parts = [comb.apply(values[a:b], ok[a:b], fresh[a:b], length)
             for a, b in zip(edges[:-1], edges[1:], strict=True)]
    assert np.array_equal(whole, np.concatenate(parts))
    assert np.allclose(whole, _naive_comb(values, ok, fresh, length), rtol=0, atol=1e-9)


def _settled_steps(t: np.ndarray, v: np.ndarray, rate: float, *, comb: bool) -> list[LoadStep]:
    view = LoadChannelProcessor(n_channels=8, sample_rate_hz=rate, stable_window_ms=300.0,
                                step_sigmas=6.0, play_noise=comb)
    ok = np.ones(v.shape, dtype=bool)
    return view.process(t_s=t, values=v, valid=ok).steps


def test_the_settled_view_reads_cubes_on_a_rocking_tower_through_the_comb() -> None:
    t, v = _tower(60.0, 80.0, rock_hz=2.7, rocking=4000.0)
    landings = np.arange(5.0, 58.0, THROWS_APART_S) + 0.3
    expected = [(7 - k % 3, at) for k, at in enumerate(landings)]
    found = [s for s in _settled_steps(t, v, 80.0, comb=True) if s.t_before_s > 10.0]
    # Once the rocking is known (a few throws in), every cube, once, on its plate ...
    assert [(s.level, round(s.delta_counts / CUBE, 1)) for s in found] == [
        (level, 1.0) for level, at in expected if at > 10.5]
    # ... timed within the comb's span of its landing, settled within 1.5 s.
    for step, (_, at) in zip(found, [e for e in expected if e[1] > 10.5], strict=True):
        assert at - 0.6 <= step.t_before_s <= at
        assert at <= step.t_settled_s <= at + 1.5
    # Judged by the tare's noise alone, each plate is still only once the
    # rocking has died down: seconds later.
    late = [s for s in _settled_steps(t, v, 80.0, comb=False) if s.t_before_s > 10.0]
    assert len(late) == len(found)
    assert all(s.t_settled_s - at > 2.0 for s, (_, at) in zip(
        late, [e for e in expected if e[1] > 10.5], strict=True))


def _rocking_session(load_rate_hz: float) -> tuple[SyntheticTower, np.ndarray]:
    """60 s of throws 5 s apart on a tower that rocks at 3.3 Hz after each; its load counts."""
    tower = SyntheticTower(duration_s=60.0, seed=7, load_rate_hz=load_rate_hz)
    rng = np.random.default_rng(7)
    throws = np.arange(5.0, 56.0, THROWS_APART_S)
    for t in throws:
        tower.throw(float(t), int(rng.choice([5, 6, 7])))
    load = tower.load_counts().astype(np.float64)
    gains = rng.uniform(0.3, 0.6, 8) * rng.choice([-1.0, 1.0], 8) * np.linspace(0.5, 1.0, 8)
    sway = np.zeros(tower.load_t_s.size)
    for k, throw in enumerate(throws):
        age = tower.load_t_s - throw
        on = age >= 0
        sway[on] += np.exp(-age[on] / 0.8) * np.sin(2 * np.pi * 3.3 * age[on] + k)
    cube = float(np.abs(np.diff(load, axis=0)).max())
    return tower, np.round(load + cube * sway[:, None] * gains[None, :])


def _detect_rocking(tower: SyntheticTower, load: np.ndarray, cuts: list[int]
                    ) -> tuple[Detector, list]:
    det = Detector(piezo_rate_hz=2000.0, load_rate_hz=tower.load_rate_hz)
    piezo = tower.piezo_codes()
    per_s = int(tower.load_rate_hz)
    edges = [0, *sorted(set(cuts) | set(range(0, load.shape[0], per_s))), load.shape[0]]
    out: list = []
    for a, b in zip(edges[:-1], edges[1:], strict=True):
        if b <= a:
            continue
        # Piezo up to the last reading of the chunk, stamped with its own
        # first sample's time (a reading's time is no sample's).
        i0 = 0 if a == 0 else int(tower.load_t_s[a - 1] * 2000)
        i1 = int(tower.load_t_s[b - 1] * 2000)
        out += det.feed_piezo(i0 / 2000, piezo[i0:i1])
        out += det.feed_load(tower.load_t_s[a:b], load[a:b], tower.load_valid[a:b])
    return det, out + det.finish()


@settings(max_examples=3, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=599), min_size=5, max_size=30))
def test_the_detector_on_a_rocking_tower_gives_one_answer_however_the_stream_is_cut(
    cuts: list[int],
) -> None:
    # At 10 readings a second both settled views (long and short windows)
    # share one tracker of the rocking.
    tower, load = _rocking_session(10.0)
    det, whole = _detect_rocking(tower, load, [])
    assert abs(det.diagnostics().rocking_hz - 3.3) < 0.3
    assert _detect_rocking(tower, load, cuts)[1] == whole
