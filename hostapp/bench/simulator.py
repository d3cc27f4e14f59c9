"""Speed of the physical tower simulator: simulated seconds per wall-clock second."""

from __future__ import annotations

import time

from dsp.sim import Scenario, draw_tower
from hostapp.bench import BenchResult

# The target: all 8 levels (2000 sets/s x 8 plus loads) at >= 50x real time.
_TARGET_X = 50.0


def _speed(name: str, duration_s: float) -> float:
    scenario = Scenario(name, draw_tower(1), seed=1, duration_s=duration_s)
    start = time.perf_counter()
    for _ in scenario.blocks(block_s=1.0):
        pass
    return duration_s / (time.perf_counter() - start)


def run(quick: bool) -> list[BenchResult]:
    """Time a ``game`` session (and, unless quick, a ``long`` one) on one core."""
    results = []
    game_s = 20.0 if quick else 60.0
    x = _speed("game", game_s)
    results.append(
        BenchResult(
            f"simulator: {game_s:.0f} s of game, 8 levels",
            x,
            "x realtime",
            f">= {_TARGET_X:.0f}x",
            x >= _TARGET_X,
        )
    )
    if not quick:
        x = _speed("long", 600.0)
        results.append(
            BenchResult(
                "simulator: 600 s of long, 8 levels",
                x,
                "x realtime",
                f">= {_TARGET_X:.0f}x",
                x >= _TARGET_X,
            )
        )
    return results
