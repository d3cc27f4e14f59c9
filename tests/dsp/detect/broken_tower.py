"""Synthetic sessions for the detector's tests: throws and a lift; level 4 often (sensor faults)."""

from __future__ import annotations

import numpy as np

from dsp.detect.detector import Detector
from dsp.detect.synthetic import SyntheticTower


def tower_throwing_onto_level_4() -> SyntheticTower:
    """30 s, throws 1.2-2.2 s apart onto levels 4 (half of them), 2 and 6."""
    tower = SyntheticTower(duration_s=30.0, seed=4)
    rng = np.random.default_rng(4)
    t = 2.5
    while t < 26.0:
        tower.throw(t, int(rng.choice([4, 4, 2, 6])))
        t += float(rng.uniform(1.2, 2.2))
    return tower


def detect_in_blocks(
    tower: SyntheticTower, piezo: np.ndarray, load: np.ndarray, cuts: list[float]
) -> tuple[Detector, list]:
    """Feed both streams in the blocks between ``cuts`` (seconds); the detector and its events."""
    det = Detector(piezo_rate_hz=2000.0, load_rate_hz=80.0)
    out: list = []
    edges = [0.0, *sorted(cuts), tower.duration_s + 1.0]
    for a, b in zip(edges[:-1], edges[1:], strict=True):
        first, last = int(a * 2000), int(b * 2000)
        out += det.feed_piezo(first / 2000.0, piezo[first:last])
        sel = (tower.load_t_s >= a) & (tower.load_t_s < b)
        out += det.feed_load(tower.load_t_s[sel], load[sel], tower.load_valid[sel])
    return det, out + det.finish()


def tower_with_a_lift(seed: int) -> SyntheticTower:
    """30 s: throws 1.2-2.2 s apart onto random levels until 22 s; levels 3-7 lifted 24-27 s."""
    tower = SyntheticTower(duration_s=30.0, seed=seed)
    rng = np.random.default_rng(seed)
    t = 2.5
    while t < 22.0:
        tower.throw(t, int(rng.integers(0, 8)))
        t += float(rng.uniform(1.2, 2.2))
    tower.lift(24.0, 27.0, 2)
    return tower
