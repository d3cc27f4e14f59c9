"""The app's simulated tower keeps streaming when hands scheduled for later find it otherwise."""

from __future__ import annotations

import time

from hostapp.ui.sim_tower import SimulatedTower


def test_a_scheduled_lift_that_finds_the_tower_open_is_dropped_and_the_stream_runs_on() -> None:
    # A calibration's simulated user schedules a lift 0.6 s ahead; the player
    # lifts by hand first. When the scheduled lift falls due the tower is
    # already open: that lift is dropped and named, and the physics (the
    # device's stream) goes on.
    tower = SimulatedTower(seed=3, pace=20.0)
    tower.source.start()
    try:
        deadline = time.monotonic() + 10.0
        while tower.time_s < 1.0 and time.monotonic() < deadline:
            time.sleep(0.01)
        tower.act(lambda sim: sim.lift(exposed=4, at_s=sim.time_s + 0.6))
        tower.lift(5)  # the player's hands, now
        start = tower.time_s
        while tower.time_s < start + 2.0 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert tower.time_s >= start + 2.0, "the simulated tower stopped streaming"
        assert tower.refused_actions() == ["the tower is already open at level 5"]
        assert tower.exposed == 5
        frames = tower.source.get_frames(0.5)
        assert frames and tower.source.stats().last_error == ""
    finally:
        tower.source.stop()
