"""The simulator's output: one span of sensor data in device units."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt


@dataclass(frozen=True)
class SensorBlock:
    """Sensor data of one span of simulated time.

    Attributes
    ----------
    piezo_t0_s : float
        Simulator time of the first piezo sample set (row 0 of ``piezo``).
        Row ``i`` is at ``piezo_t0_s + i / piezo_rate_hz``.
    piezo : ndarray, shape (n, 8), uint16
        ADC codes at the piezo rate, channel k = level k; idle about 512.
    load_t_s : ndarray, shape (m,), float64
        Simulator time of each HX711 reading (end of its conversion).
    load : ndarray, shape (m, 8), int32
        Raw HX711 counts (signed 24-bit range); 0 where not valid.
    load_valid : ndarray, shape (m, 8), bool
        False where a channel's module is lifted off (disconnected).
    """

    piezo_t0_s: float
    piezo: npt.NDArray[np.uint16]
    load_t_s: npt.NDArray[np.float64]
    load: npt.NDArray[np.int32]
    load_valid: npt.NDArray[np.bool_]

    @staticmethod
    def concat(blocks: Sequence[SensorBlock]) -> SensorBlock:
        """Join consecutive blocks into one (the first block's ``piezo_t0_s``)."""
        if not blocks:
            return SensorBlock.empty(0.0)
        return SensorBlock(
            piezo_t0_s=blocks[0].piezo_t0_s,
            piezo=np.concatenate([b.piezo for b in blocks]),
            load_t_s=np.concatenate([b.load_t_s for b in blocks]),
            load=np.concatenate([b.load for b in blocks]),
            load_valid=np.concatenate([b.load_valid for b in blocks]),
        )

    @staticmethod
    def empty(t0_s: float, n_channels: int = 8) -> SensorBlock:
        """A block with no samples starting at ``t0_s``."""
        return SensorBlock(
            piezo_t0_s=t0_s,
            piezo=np.zeros((0, n_channels), dtype=np.uint16),
            load_t_s=np.zeros(0),
            load=np.zeros((0, n_channels), dtype=np.int32),
            load_valid=np.zeros((0, n_channels), dtype=bool),
        )
