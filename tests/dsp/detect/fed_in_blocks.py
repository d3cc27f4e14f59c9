"""The whole detector, or one load canceller, fed its streams in blocks of other sizes."""

from __future__ import annotations

import dataclasses
from typing import Protocol

import numpy as np

from dsp.detect.detector import Detector
from dsp.detect.events import Event
from dsp.detect.synthetic import SyntheticTower


def detected(tower: SyntheticTower, piezo_block: int, load_block: int
             ) -> tuple[Detector, list[Event]]:
    """The detector's events, the streams fed in blocks of these sizes in time order."""
    detector = Detector(piezo_rate_hz=tower.piezo_rate_hz, load_rate_hz=tower.load_rate_hz)
    piezo, load = tower.piezo_codes(), tower.load_counts()
    blocks = [(a / tower.piezo_rate_hz, "p", a) for a in range(0, len(piezo), piezo_block)]
    blocks += [(float(tower.load_t_s[a]), "l", a) for a in range(0, len(load), load_block)]
    events: list[Event] = []
    for _, kind, a in sorted(blocks):
        if kind == "p":
            events += detector.feed_piezo(a / tower.piezo_rate_hz, piezo[a:a + piezo_block])
        else:
            b = a + load_block
            events += detector.feed_load(tower.load_t_s[a:b], load[a:b], tower.load_valid[a:b])
    return detector, events + detector.finish()


def rounded(events: list[Event]) -> list[tuple[object, ...]]:
    """The events as tuples, their times to the nanosecond (sums taken in another order)."""
    return [tuple(round(v, 9) if isinstance(v, float) else v for v in dataclasses.astuple(e))
            for e in events]


class RowCanceller(Protocol):
    """What the common-shaking cancellers (``commonshake``, ``slowshake``) share."""

    block_rows: int
    cleaned: np.ndarray

    def process(self, values: np.ndarray, valid: np.ndarray, fresh: np.ndarray
                ) -> np.ndarray: ...


def cleaned_in_random_blocks(canceller: RowCanceller, rows: np.ndarray, valid: np.ndarray,
                             seed: int = 7) -> tuple[np.ndarray, np.ndarray]:
    """The rows ``canceller`` gives, and which it cleaned, fed 1 to 3 of its blocks at a time."""
    rng = np.random.default_rng(seed)
    parts, cleaned, i = [], [], 0
    while i < len(rows):
        k = int(rng.integers(1, 3 * canceller.block_rows))
        parts.append(canceller.process(rows[i:i + k], valid[i:i + k], valid[i:i + k]))
        cleaned.append(canceller.cleaned)
        i += k
    return np.vstack(parts), np.concatenate(cleaned)
