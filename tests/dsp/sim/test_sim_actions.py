"""Actions, their errors, scenarios and the ground-truth format."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dsp.sim import (
    SCENARIOS,
    Scenario,
    SensorBlock,
    SimulatorError,
    TowerSimulator,
    draw_tower,
    run_scenario,
)
from dsp.sim.scenarios import QUIET_START_S


@pytest.fixture
def sim() -> TowerSimulator:
    return TowerSimulator(draw_tower(10), seed=4)


def test_impossible_requests_raise_one_sentence(sim: TowerSimulator) -> None:
    sim.lift(5)
    with pytest.raises(SimulatorError, match="open at level 5"):
        sim.throw("blue")
    with pytest.raises(SimulatorError, match="open at level 5"):
        sim.remove_cubes(3)
    with pytest.raises(SimulatorError, match="already open"):
        sim.lift(2)
    with pytest.raises(SimulatorError, match="overloaded"):
        sim.place_mass(5, 60.0)
        sim.place_mass(5, 60.0)
    with pytest.raises(SimulatorError, match="does not exist"):
        sim.touch(8)
    with pytest.raises(SimulatorError, match="strength"):
        sim.knock(0.0)
    sim.advance(1.0)
    with pytest.raises(SimulatorError, match="already at"):
        sim.throw(at_s=0.5)
    with pytest.raises(SimulatorError, match="non-negative"):
        sim.advance(-1.0)
    sim.close()
    with pytest.raises(SimulatorError, match="not open"):
        sim.close()
    with pytest.raises(SimulatorError, match="no reference mass"):
        sim.lift(1)
        sim.remove_mass(1)


def test_scheduled_action_fails_when_its_time_comes(sim: TowerSimulator) -> None:
    sim.lift(2, at_s=1.0)
    sim.throw("red", at_s=2.0)
    with pytest.raises(SimulatorError, match="while the tower is open"):
        sim.advance(3.0)


def test_cubes_taken_out_and_thrown_back_keep_their_mass(sim: TowerSimulator) -> None:
    cubes = [sim.throw("blue", at_s=0.2 + 0.8 * i) for i in range(12)]
    sim.advance(12.0)
    level = next(lv for lv in range(8) if sim.contents[lv])
    present = list(sim.contents[level])
    sim.lift(level)
    sim.advance(1.0)
    taken = sim.remove_cubes(level)
    assert sorted(taken) == present
    sim.advance(4.0)
    assert sim.contents[level] == ()
    assert set(sim.in_hand) == set(taken)
    sim.close()
    sim.advance(1.0)
    mass = sim.cube_mass_g(taken[0])
    assert sim.throw(cube=taken[0]) == taken[0]
    sim.advance(3.0)
    assert taken[0] not in sim.in_hand
    landing = sim.truth.of_kind("landing")[-1].to_json()
    assert landing["cube"] == taken[0] and landing["mass_g"] == mass
    assert sum(len(c) for c in sim.contents) + len(sim.in_hand) == len(cubes)
    with pytest.raises(SimulatorError, match="still in the tower"):
        sim.throw(cube=taken[0])
        sim.advance(0.1)


def test_drop_onto_an_opened_plate_lands_there(sim: TowerSimulator) -> None:
    sim.lift(4)
    cube = sim.drop_onto(4, height_m=0.03)
    sim.advance(2.0)
    assert sim.contents[4] == (cube,)
    landing = sim.truth.of_kind("landing")[0].to_json()
    assert landing["via"] == "drop" and landing["level"] == 4
    with pytest.raises(SimulatorError, match="level 3"):
        sim.drop_onto(3)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_every_scenario_renders_with_plausible_truth(name: str) -> None:
    duration = 45.0 if name in ("game", "calibration") else 12.0
    block, truth = run_scenario(name, tower=draw_tower(3), seed=2, duration_s=duration)
    tower = draw_tower(3)
    assert block.piezo.shape[0] == int(np.ceil(duration * tower.piezo_rate_hz - 1e-6))
    assert block.piezo.max() <= 1023
    kinds = {e.kind for e in truth.events}
    expected = {
        "single": {"throw", "landing"},
        "acoustic": {"throw", "landing"},
        "rapid": {"throw", "landing"},
        "noisy": {"throw", "landing"},
        "game": {"throw", "landing", "lift", "closed"},
        "long": set(),
        "calibration": {"lift", "mass_placed", "mass_removed", "landing", "closed"},
        "quiet": set(),
    }[name]
    assert expected <= kinds
    times = [e.t for e in truth.events]
    assert times == sorted(times) and all(0 <= t <= duration for t in times)
    # The first seconds stay quiet so a detector can tare itself.
    assert min(times, default=duration) >= QUIET_START_S
    data = json.loads(json.dumps(truth.to_json()))
    assert data["scenario"] == name and data["load_ignored"] == (name == "acoustic")


def test_rapid_throws_come_0_3_to_0_8_s_apart() -> None:
    _, truth = run_scenario("rapid", tower=draw_tower(1), seed=5, duration_s=40.0)
    gaps = np.diff([e.t for e in truth.of_kind("throw")])
    short = gaps[gaps < 1.0]
    assert len(short) >= 5
    assert short.min() >= 0.3 - 1e-3 and short.max() <= 0.8 + 1e-3


def test_scenario_blocks_join_to_the_whole_run() -> None:
    tower = draw_tower(6)
    whole, _ = run_scenario("noisy", tower=tower, seed=3, duration_s=10.0)
    parts = SensorBlock.concat(list(Scenario("noisy", tower, 3, 10.0).blocks(block_s=0.37)))
    np.testing.assert_array_equal(whole.piezo, parts.piezo)
    np.testing.assert_array_equal(whole.load, parts.load)


def test_scenario_advance_hands_out_exactly_the_span_asked_for() -> None:
    tower = draw_tower(6)
    whole, truth = run_scenario("game", tower=tower, seed=3, duration_s=30.0)
    scenario = Scenario("game", tower, 3, 30.0)
    blocks = []
    for step in _cuts(30.0, seed=2):
        block = scenario.advance(step)
        assert len(block.piezo) == pytest.approx(step * tower.piezo_rate_hz, abs=1.0)
        blocks.append(block)
    parts = SensorBlock.concat(blocks)
    np.testing.assert_array_equal(whole.piezo, parts.piezo)
    np.testing.assert_array_equal(whole.load_valid, parts.load_valid)
    assert scenario.truth.to_json() == truth.to_json()
    after = scenario.advance(2.0)  # past the end: nobody acts, time goes on
    assert len(after.piezo) > 0 and scenario.truth.events == truth.events


def _cuts(total: float, seed: int) -> list[float]:
    rng = np.random.default_rng(seed)
    cuts: list[float] = []
    while sum(cuts) < total - 1e-9:
        cuts.append(min(float(rng.uniform(0.001, 1.3)), total - sum(cuts)))
    return cuts


def test_unknown_scenario_names_the_known_ones() -> None:
    with pytest.raises(SimulatorError, match="known: acoustic, calibration"):
        run_scenario("party", tower=draw_tower(0), seed=0, duration_s=5.0)


def test_truth_json_has_the_documented_keys() -> None:
    sim = TowerSimulator(draw_tower(2), seed=1)
    sim.throw("gray", at_s=0.5)
    sim.advance(3.0)
    data = sim.truth.to_json()
    assert data["format"] == "towerear-truth/1"
    assert len(data["tower"]["levels"]) == 8
    assert all(abs(lv["counts_per_gram"]) > 1000 for lv in data["tower"]["levels"])
    assert data["cubes"][0]["color"] == "gray"
    landing = next(e for e in data["events"] if e["event"] == "landing")
    assert set(landing) == {
        "event",
        "t",
        "cube",
        "color",
        "level",
        "mass_g",
        "first_impact_t",
        "via",
    }
    assert landing["first_impact_t"] < landing["t"]
    throw = data["events"][0]
    assert throw["event"] == "throw" and throw["t"] == pytest.approx(0.5, abs=1e-3)
