"""A small synthetic tower physics for the device tests (known answers, fast)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pytest


@dataclass(frozen=True)
class Block:
    piezo_t0_s: float
    piezo: npt.NDArray[np.uint16]
    load_t_s: npt.NDArray[np.float64]
    load: npt.NDArray[np.int32]
    load_valid: npt.NDArray[np.bool_]


class SyntheticPhysics:
    """Sample-exact, seeded sensor data: set k and load reading j are pure functions
    of (seed, k) and (seed, j), so any slicing of time gives the same data."""

    def __init__(self, seed: int, piezo_rate_hz: float = 2000.0, load_rate_hz: float = 80.0):
        self.seed = seed
        self.piezo_rate_hz = piezo_rate_hz
        self.load_rate_hz = load_rate_hz
        self.t_s = 0.0
        self.sets = 0
        self.loads = 0

    def piezo_sets(self, first: int, count: int) -> npt.NDArray[np.uint16]:
        k = np.arange(first, first + count, dtype=np.int64)[:, None]
        ch = np.arange(8)[None, :]
        return (512 + (k * 7919 + ch * 104729 + self.seed * 31) % 401 - 200).astype(np.uint16)

    def load_readings(self, first: int, count: int) -> tuple[np.ndarray, np.ndarray]:
        j = np.arange(first, first + count, dtype=np.int64)[:, None]
        ch = np.arange(8)[None, :]
        values = ((j * 2654435761 + ch * 97 + self.seed) % (1 << 24) - (1 << 23)).astype(np.int32)
        valid = ((j // 40 + ch) % 5) != 0
        return np.where(valid, values, 0).astype(np.int32), valid

    def advance(self, duration_s: float) -> Block:
        end = self.t_s + duration_s
        n_sets = int(np.floor(end * self.piezo_rate_hz + 1e-9)) - self.sets
        first_load = self.loads
        n_loads = int(np.floor(end * self.load_rate_hz + 1e-9)) - self.loads
        block = Block(
            piezo_t0_s=self.sets / self.piezo_rate_hz,
            piezo=self.piezo_sets(self.sets, n_sets),
            load_t_s=(first_load + np.arange(n_loads)) / self.load_rate_hz,
            load=self.load_readings(first_load, n_loads)[0],
            load_valid=self.load_readings(first_load, n_loads)[1],
        )
        self.sets += n_sets
        self.loads += n_loads
        self.t_s = end
        return block


@pytest.fixture
def synthetic_physics() -> type[SyntheticPhysics]:
    return SyntheticPhysics
