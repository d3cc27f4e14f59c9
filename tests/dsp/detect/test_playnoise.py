import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dsp.detect.loadcell import LoadChannelProcessor, LoadStep
from dsp.detect.playnoise import BUCKETS, DISCOUNT, PlayNoise

RATE = 10.0
TARE = 20.0  # counts of noise on an empty, quiet tower
CUBE = 6000.0


def _tower(seconds: float, *, rocking: float, on: slice = slice(None), seed: int = 3
           ) -> tuple[np.ndarray, np.ndarray]:
    """Readings at 10 a second: quiet for 3 s, then ``rocking`` counts of sway on the
    cells ``on`` (a 3.3 Hz mode, seen at 10 a second as noise), and a cube
    landing on level 7 at 25 s."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * RATE)) / RATE
    v = rng.normal(0.0, TARE, (t.size, 8)) + rng.uniform(-1e5, 1e5, 8)
    sway = rocking * np.sin(2 * np.pi * 3.3 * t + rng.uniform(0, 6.3, 8)[:, None]).T
    sway *= rng.uniform(0.6, 1.0, 8)[None, :]
    sway[t < 3.0] = 0.0
    v[:, on] += sway[:, on]
    v[t >= 25.0, 7] += CUBE
    return t, v


def _play_sigmas(t: np.ndarray, v: np.ndarray, cuts: list[int],
                 shaken: np.ndarray | None = None) -> list[np.ndarray]:
    """The noise the tracker allows at the start of every second, fed in blocks cut at
    ``cuts``, with ``shaken`` telling the rows common shaking was taken out of."""
    play = PlayNoise(8)
    tare = np.full(8, TARE)
    out = []
    edges = [0, *sorted(set(cuts)), t.size]
    second = None
    for a, b in zip(edges[:-1], edges[1:], strict=True):
        secs = PlayNoise.second_of(t[a:b])
        for s in np.unique(secs):
            rows = np.flatnonzero(secs == s) + a
            if s != second:
                play.begin(int(s))
                out.append(play.sigma(tare))
                second = s
            play.add(v[rows], np.ones((rows.size, 8), dtype=bool),
                     None if shaken is None else shaken[rows])
    return out


def test_a_quiet_tower_keeps_the_tares_noise() -> None:
    t, v = _tower(60.0, rocking=0.0)
    assert all(np.array_equal(s, np.full(8, TARE)) for s in _play_sigmas(t, v, []))


def test_a_tower_rocking_as_a_whole_raises_the_bar_once_it_has_rocked_for_most_of_it() -> None:
    t, v = _tower(60.0, rocking=600.0)
    sigmas = _play_sigmas(t, v, [])
    # Not before half the memory is filled (seconds 0-10 measured) ...
    assert np.array_equal(sigmas[BUCKETS // 2], np.full(8, TARE))
    assert np.all(sigmas[BUCKETS // 2 + 1] > TARE)
    # ... then to the rocking's noise, less the discount, on every cell.
    late = sigmas[40]
    assert np.all(late > 5 * TARE)
    assert np.all(late < 2.0 * 600.0 / DISCOUNT)


def test_cells_moving_on_their_own_do_not_raise_it() -> None:
    # Three plates ringing through a quick series: not the tower rocking.
    t, v = _tower(60.0, rocking=600.0, on=slice(5, 8))
    assert all(np.array_equal(s, np.full(8, TARE)) for s in _play_sigmas(t, v, []))


def test_what_cleaning_left_on_a_few_cells_raises_their_bar_alone() -> None:
    # The shaking every cell felt was taken out; three plates kept some of it.
    t, v = _tower(60.0, rocking=600.0, on=slice(5, 8))
    sigmas = _play_sigmas(t, v, [], shaken=t >= 3.0)
    late = sigmas[40]
    assert np.array_equal(late[:5], np.full(5, TARE))
    assert np.all(late[5:] > 5 * TARE)
    # Cleaned for a third of each second only: not the tower shaking.
    part = (t >= 3.0) & ((t % 1.0) < 0.3)
    assert all(np.array_equal(s, np.full(8, TARE)) for s in _play_sigmas(t, v, [], shaken=part))


@settings(max_examples=20, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=599), max_size=10))
def test_block_sizes_do_not_change_the_noise_of_cleaned_seconds(cuts: list[int]) -> None:
    t, v = _tower(60.0, rocking=600.0, on=slice(5, 8))
    shaken = (t >= 3.0) & (t < 45.0)
    whole = _play_sigmas(t, v, [], shaken)
    split = _play_sigmas(t, v, cuts, shaken)
    assert any(np.any(s > TARE) for s in whole)
    assert all(np.array_equal(a, b) for a, b in zip(whole, split, strict=True))


def test_a_few_seconds_of_shaking_do_not_raise_it() -> None:
    t, v = _tower(60.0, rocking=0.0)
    rng = np.random.default_rng(5)
    shaken = (t >= 20.0) & (t < 27.0)
    v[shaken] += rng.normal(0.0, 400.0, (int(shaken.sum()), 8))
    assert all(np.array_equal(s, np.full(8, TARE)) for s in _play_sigmas(t, v, []))


@settings(max_examples=20, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=599), max_size=10))
def test_block_sizes_do_not_change_the_noise(cuts: list[int]) -> None:
    t, v = _tower(60.0, rocking=600.0)
    whole = _play_sigmas(t, v, [])
    split = _play_sigmas(t, v, cuts)
    assert len(whole) == len(split)
    assert all(np.array_equal(a, b) for a, b in zip(whole, split, strict=True))


def _settled_view(play_noise: bool) -> LoadChannelProcessor:
    return LoadChannelProcessor(n_channels=8, sample_rate_hz=RATE, stable_window_ms=300.0,
                                step_sigmas=6.0, play_noise=play_noise)


def _steps(view: LoadChannelProcessor, t: np.ndarray, v: np.ndarray, cuts: list[int]
           ) -> list[LoadStep]:
    ok = np.ones(v.shape, dtype=bool)
    steps: list[LoadStep] = []
    edges = [0, *sorted(set(cuts)), t.size]
    for a, b in zip(edges[:-1], edges[1:], strict=True):
        steps += view.process(t_s=t[a:b], values=v[a:b], valid=ok[a:b]).steps
    return steps


def test_the_settled_view_sees_a_cube_land_on_a_rocking_tower_only_with_play_noise() -> None:
    t, v = _tower(40.0, rocking=600.0)
    assert [s.level for s in _steps(_settled_view(False), t, v, [])] == []
    found = _steps(_settled_view(True), t, v, [])
    assert [(s.level, round(s.delta_counts / CUBE)) for s in found] == [(7, 1)]
    assert 25.0 <= found[0].t_settled_s < 26.0


def test_on_a_quiet_tower_play_noise_changes_nothing() -> None:
    t, v = _tower(40.0, rocking=0.0)
    with_play = _steps(_settled_view(True), t, v, [])
    assert with_play == _steps(_settled_view(False), t, v, [])
    assert [s.level for s in with_play] == [7]


@settings(max_examples=20, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=399), max_size=10))
def test_block_sizes_do_not_change_the_settled_views_steps(cuts: list[int]) -> None:
    t, v = _tower(40.0, rocking=600.0)
    assert _steps(_settled_view(True), t, v, []) == _steps(_settled_view(True), t, v, cuts)
