"""Speed of the physical tower simulator: simulated seconds per second of one core.

The time is the process's CPU time, not the wall clock: on a shared machine
the wall clock measures the neighbours, while the issue's target is about what
one core does ("at least 50x real time on one core").
"""

from __future__ import annotations

import time

from dsp.sim import Scenario, draw_tower
from hostapp.bench import BenchResult

# The target: all 8 levels (2000 sets/s x 8 plus loads) at >= 50x real time.
_TARGET_X = 50.0


def _speed(name: str, duration_s: float) -> float:
    scenario = Scenario(name, draw_tower(1), seed=1, duration_s=duration_s)
    start = time.process_time()
    for _ in scenario.blocks(block_s=1.0):
        pass
    return duration_s / (time.process_time() - start)


def run(quick: bool) -> list[BenchResult]:
    """Time a ``game`` session (and, unless quick, a ``long`` one), 1 s blocks."""
    game_s = 20.0 if quick else 60.0
    x = _speed("game", game_s)
    results = [
        BenchResult(
            f"simulator: {game_s:.0f} s of game, 8 levels",
            x,
            "x realtime",
            f">= {_TARGET_X:.0f}x on one core",
            x >= _TARGET_X,
        )
    ]
    if not quick:
        x = _speed("long", 600.0)
        results.append(
            BenchResult(
                "simulator: 600 s of long, 8 levels",
                x,
                "x realtime",
                f">= {_TARGET_X:.0f}x on one core",
                x >= _TARGET_X,
            )
        )
    return results
