"""Same seed, same data; any split of the time axis, same data; towers apart from sessions."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from dsp.sim import SensorBlock, TowerSimulator, draw_tower, run_scenario


def _scheduled_session(sim: TowerSimulator) -> None:
    sim.throw("blue", at_s=0.7)
    sim.throw("red", at_s=1.31)
    sim.knock(1.5, at_s=1.9)
    sim.touch(3, at_s=2.2, duration_s=0.4)
    sim.talk(1.0, at_s=2.0)
    sim.lift(4, at_s=2.9)
    sim.close(at_s=4.3)
    sim.throw("gray", at_s=4.8)


def _render(sim: TowerSimulator, cuts: list[float]) -> SensorBlock:
    blocks = [sim.advance(d) for d in cuts]
    return SensorBlock.concat(blocks)


def _assert_same(a: SensorBlock, b: SensorBlock) -> None:
    assert a.piezo_t0_s == b.piezo_t0_s
    np.testing.assert_array_equal(a.piezo, b.piezo)
    np.testing.assert_array_equal(a.load_t_s, b.load_t_s)
    np.testing.assert_array_equal(a.load, b.load)
    np.testing.assert_array_equal(a.load_valid, b.load_valid)


def _cuts_even(size: float, total: float) -> list[float]:
    n = int(total // size)
    return [size] * n + [total - n * size]


def _cuts_random(total: float, seed: int) -> list[float]:
    rng = np.random.default_rng(seed)
    cuts: list[float] = []
    while sum(cuts) < total - 1e-9:
        cuts.append(min(float(rng.uniform(0.0003, 0.4)), total - sum(cuts)))
    return cuts


@pytest.mark.parametrize(
    "cuts",
    [
        lambda: _cuts_even(0.05, 6.0),
        lambda: _cuts_even(0.0133, 6.0),
        lambda: _cuts_random(6.0, 1),
        lambda: [0.0, 2.5, 0.0, 3.5],
    ],
    ids=["50ms", "13.3ms", "random", "uneven"],
)
def test_output_does_not_depend_on_how_time_is_split(cuts: Callable[[], list[float]]) -> None:
    tower = draw_tower(2)
    whole = TowerSimulator(tower, seed=5)
    _scheduled_session(whole)
    reference = whole.advance(6.0)

    pieces = TowerSimulator(tower, seed=5)
    _scheduled_session(pieces)
    _assert_same(reference, _render(pieces, cuts()))
    assert [e.to_json() for e in whole.truth.events] == [e.to_json() for e in pieces.truth.events]


def test_interactive_actions_equal_scheduled_ones() -> None:
    tower = draw_tower(4)
    scheduled = TowerSimulator(tower, seed=9)
    scheduled.throw("blue", at_s=1.0)
    scheduled.lift(2, at_s=3.0)
    reference = scheduled.advance(5.0)

    live = TowerSimulator(tower, seed=9)
    blocks = [live.advance(0.25) for _ in range(4)]
    live.throw("blue")
    blocks += [live.advance(0.5) for _ in range(4)]
    live.lift(2)
    blocks += [live.advance(0.1) for _ in range(20)]
    _assert_same(reference, SensorBlock.concat(blocks))


def test_same_seed_same_arrays_and_other_seed_other_arrays() -> None:
    tower = draw_tower(0)
    a, truth_a = run_scenario("single", tower=tower, seed=3, duration_s=12.0)
    b, truth_b = run_scenario("single", tower=tower, seed=3, duration_s=12.0)
    c, _ = run_scenario("single", tower=tower, seed=4, duration_s=12.0)
    _assert_same(a, b)
    assert truth_a.to_json() == truth_b.to_json()
    assert not np.array_equal(a.piezo, c.piezo)
    assert not np.array_equal(a.load, c.load)


def test_tower_is_drawn_apart_from_the_session() -> None:
    """The same session on two towers: the same throws, different signals."""
    block_1, truth_1 = run_scenario("single", tower=draw_tower(1), seed=8, duration_s=15.0)
    block_2, truth_2 = run_scenario("single", tower=draw_tower(2), seed=8, duration_s=15.0)
    throws_1 = [(e.t, e.to_json()["color"]) for e in truth_1.of_kind("throw")]
    throws_2 = [(e.t, e.to_json()["color"]) for e in truth_2.of_kind("throw")]
    # Throws are snapped to each tower's own piezo clock: equal within a sample.
    assert [c for _, c in throws_1] == [c for _, c in throws_2]
    np.testing.assert_allclose([t for t, _ in throws_1], [t for t, _ in throws_2], atol=1e-3)
    assert draw_tower(1) != draw_tower(2)
    assert draw_tower(1) == draw_tower(1)
    assert not np.array_equal(block_1.load[:100], block_2.load[:100])


def test_sample_counts_follow_the_true_rates() -> None:
    tower = draw_tower(7)
    sim = TowerSimulator(tower, seed=1)
    block = _render(sim, _cuts_random(10.0, 3))
    assert block.piezo.shape == (int(np.ceil(10.0 * tower.piezo_rate_hz - 1e-6)), 8)
    assert block.piezo.dtype == np.uint16 and block.load.dtype == np.int32
    expected_loads = int(np.floor((10.0 - tower.load_phase_s) * tower.load_rate_hz)) + 1
    assert abs(len(block.load_t_s) - expected_loads) <= 1
    np.testing.assert_allclose(np.diff(block.load_t_s), 1.0 / tower.load_rate_hz)
