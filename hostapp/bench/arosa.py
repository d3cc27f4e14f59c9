"""Mord im Arosa numbers: engine speed, journal latency, tower-model accuracy."""

from __future__ import annotations

import random
import tempfile
import time
from pathlib import Path

import numpy as np

from hostapp.bench import BenchResult
from hostapp.games.arosa import Event, apply, legal_actions, new_game
from hostapp.games.arosa.session import ArosaSession
from hostapp.games.arosa.tower_sim import compare

COLORS = ["yellow", "blue", "brown", "gray", "black", "white"]


def _random_games(n: int, seed: int) -> list[tuple[list[str], list[Event]]]:
    """Whole random legal games: (seating, events)."""
    rng = random.Random(seed)
    games = []
    for _ in range(n):
        players = COLORS[: rng.randint(2, 6)]
        state = new_game(players)
        events: list[Event] = []
        while not state.is_over:
            event = rng.choice(legal_actions(state))
            events.append(event)
            state = apply(state, event)
        games.append((players, events))
    return games


def run(quick: bool) -> list[BenchResult]:
    """Measure the engine, the journal and the tower model."""
    games = _random_games(5 if quick else 30, seed=1)
    started = time.perf_counter()
    for players, events in games:
        state = new_game(players)
        for event in events:
            state = apply(state, event)
    engine_s = time.perf_counter() - started
    n_events = sum(len(events) for _, events in games)

    players, events = games[0]
    with tempfile.TemporaryDirectory() as tmp:
        session = ArosaSession.new(players, Path(tmp))
        latencies = []
        for event in events:
            t0 = time.perf_counter()
            session.act(event)
            latencies.append(time.perf_counter() - t0)
        session.close()
        t0 = time.perf_counter()
        ArosaSession.resume(session.journal.game_id, Path(tmp)).close()
        resume_s = time.perf_counter() - t0
    median_s = float(np.median(latencies))
    p99_s = float(np.percentile(latencies, 99))

    result = compare(2026, sessions=5 if quick else 20, n_openings=30)
    return [
        BenchResult("engine: events applied", n_events / engine_s, "events/s"),
        BenchResult(
            "journal: act (check, append, fsync), median",
            median_s * 1e3,
            "ms",
            target="< 50 ms",
            ok=median_s < 0.05,
        ),
        BenchResult("journal: act, 99th percentile", p99_s * 1e3, "ms"),
        BenchResult(f"journal: resume a {len(events)}-event game", resume_s * 1e3, "ms"),
        BenchResult("tower model: opened levels proposed right", result.model_rate * 100, "%"),
        BenchResult("raw detections: opened levels right", result.raw_rate * 100, "%"),
        BenchResult(
            "tower model: cubes off per opening",
            result.model_cubes_off / result.openings,
            "cubes",
            target=f"< raw {result.raw_cubes_off / result.openings:.2f}",
            ok=result.model_cubes_off < result.raw_cubes_off,
        ),
    ]
