"""One evaluation session: a simulated tower, its bytes on disk, its truth in stream time.

The recording is made exactly as ``towerear simulate`` makes one (the
simulated device over a ``dsp.sim`` scenario), so ``towerear detect`` and the
evaluation read the same bytes through the same code path.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hostapp.protocol import constants as c
from hostapp.sources.sim_device import (
    Damage,
    ScenarioPhysics,
    SimulatedDevice,
    clock_offset_for_seed,
    tower_device_info,
)

# Truth keys that hold simulator times, converted to stream time for scoring.
_TIME_KEYS = ("t", "first_impact_t", "rest_t", "reconnected_t")
# Why 1 s: short enough for memory, long enough that per-call overheads vanish.
_GENERATE_STEP_S = 1.0


@dataclass(frozen=True)
class SessionSpec:
    """What to simulate.

    Attributes
    ----------
    scenario : str
        A ``dsp.sim`` scenario name.
    tower_seed : int
        ``dsp.sim.draw_tower`` seed: which tower.
    session_seed : int
        The session's seed: what the players do, the noise.
    duration_s : float
        Length of the recording.
    bit_flip_prob, drop_prob : float
        Line damage per frame.
    clock_offset_us : int, optional
        Device clock at boot (near 2**32 to force a wrap); seed-derived if None.
    sets_per_frame : int
        Piezo sample sets per PIEZO message (1..14; the firmware sends 10).
    """

    scenario: str
    tower_seed: int
    session_seed: int
    duration_s: float
    bit_flip_prob: float = 0.0
    drop_prob: float = 0.0
    clock_offset_us: int | None = None
    sets_per_frame: int = c.PIEZO_SETS_PER_FRAME


def record_session(spec: SessionSpec, path: Path) -> list[dict[str, Any]]:
    """Write the session's recording to ``path``; return its truth events in stream time.

    Returns
    -------
    list of dict
        Ground-truth events (simulator JSON) whose times are stream seconds
        (contracts.md section 2), in time order.
    """
    from dsp.sim import draw_tower
    from dsp.sim.scenarios import Scenario

    tower = draw_tower(spec.tower_seed)
    session = Scenario(spec.scenario, tower, spec.session_seed, spec.duration_s)
    damage = None
    if spec.bit_flip_prob or spec.drop_prob:
        damage = Damage(
            bit_flip_prob=spec.bit_flip_prob, drop_prob=spec.drop_prob, seed=spec.session_seed
        )
    offset = spec.clock_offset_us
    device = SimulatedDevice(
        ScenarioPhysics(session),
        tower_device_info(tower, spec.tower_seed),
        clock_offset_us=clock_offset_for_seed(spec.tower_seed) if offset is None else offset,
        damage=damage,
        clock_scale=tower.piezo_rate_hz / c.NOMINAL_PIEZO_RATE_HZ,
        sets_per_frame=spec.sets_per_frame,
    )
    with path.open("wb") as handle:
        handle.write(device.generate(0.0))
        done = 0.0
        while done < spec.duration_s - 1e-9:
            step = min(_GENERATE_STEP_S, spec.duration_s - done)
            handle.write(device.generate(step))
            done += step
    origin = device.stream_origin_sim_s or 0.0
    scale = device.clock_scale
    events = []
    for event in session.truth.to_json()["events"]:
        converted = dict(event)
        for key in _TIME_KEYS:
            if isinstance(converted.get(key), int | float):
                converted[key] = (float(converted[key]) - origin) * scale
        if isinstance(converted.get("times"), list):
            converted["times"] = [(float(x) - origin) * scale for x in converted["times"]]
        events.append(converted)
    return events
