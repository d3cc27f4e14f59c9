"""The physical tower simulator: towers, rooms, sessions, scenarios, ground truth.

Typical use::

    from dsp.sim import draw_tower, TowerSimulator

    sim = TowerSimulator(draw_tower(3), seed=11)
    cube = sim.throw("blue")
    block = sim.advance(2.0)          # SensorBlock: piezo codes, load counts
    sim.truth.of_kind("landing")      # where and when it came to rest

See docs/simulator.md for the physics, every parameter and the truth format.
"""

from dsp.sim.block import SensorBlock
from dsp.sim.constants import (
    N_LEVELS,
    NOMINAL_LOAD_RATE_HZ,
    NOMINAL_PIEZO_RATE_HZ,
    LevelConstants,
    RoomConstants,
    TowerConstants,
    cube_mass_g,
    draw_room,
    draw_tower,
)
from dsp.sim.errors import SimulatorError
from dsp.sim.scenarios import SCENARIOS, Scenario, run_scenario
from dsp.sim.simulator import TowerSimulator
from dsp.sim.truth import GroundTruth, TruthEvent

__all__ = [
    "N_LEVELS",
    "NOMINAL_LOAD_RATE_HZ",
    "NOMINAL_PIEZO_RATE_HZ",
    "GroundTruth",
    "LevelConstants",
    "RoomConstants",
    "SCENARIOS",
    "Scenario",
    "SensorBlock",
    "SimulatorError",
    "TowerConstants",
    "TowerSimulator",
    "TruthEvent",
    "cube_mass_g",
    "draw_room",
    "draw_tower",
    "run_scenario",
]
