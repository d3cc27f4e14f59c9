"""What the live view keeps of the stream: ring buffers per sensor and level states.

No Qt here: the page feeds messages in and reads snapshots out on its own
refresh timer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from hostapp.calibration.profile import CalibrationProfile
from hostapp.protocol.clock import ClockUnwrapper
from hostapp.protocol.messages import Hello, Load, Piezo
from hostapp.ui.live.ring import RingBuffer

N_LEVELS = 8
# A channel whose last valid reading is older than this counts as disconnected:
# at 80 readings/s, a quarter of a second is 20 missed readings.
STALE_AFTER_S = 0.25


class LiveData:
    """Ring buffers of piezo samples and load readings, with per-level state.

    Parameters
    ----------
    piezo_history_s, load_history_s
        Seconds of history kept (the widest window the plots show).
    """

    def __init__(self, piezo_history_s: float = 4.0, load_history_s: float = 30.0) -> None:
        self._piezo_history_s = piezo_history_s
        self._load_history_s = load_history_s
        self.hello: Hello | None = None
        self.profile: CalibrationProfile | None = None
        self._reset_buffers(2000, 80)

    def _reset_buffers(self, piezo_rate_hz: int, load_rate_hz: int) -> None:
        self._piezo_rate_hz = max(1, piezo_rate_hz)
        self.piezo = RingBuffer(int(self._piezo_history_s * self._piezo_rate_hz), N_LEVELS)
        self.load = RingBuffer(int(self._load_history_s * max(1, load_rate_hz)), N_LEVELS)
        self._clock = ClockUnwrapper()
        self._t0_us: int | None = None
        self.last_valid_s = np.full(N_LEVELS, -np.inf)
        self.latest_s = 0.0

    def add(self, messages: Sequence[Any]) -> None:
        """Take decoded messages in arrival order."""
        for message in messages:
            if isinstance(message, Piezo):
                self._add_piezo(message)
            elif isinstance(message, Load):
                self._add_load(message)
            elif isinstance(message, Hello):
                if message != self.hello:
                    self.hello = message
                    self._reset_buffers(message.piezo_rate_hz, message.load_rate_hz)

    def _stream_s(self, t_us: int) -> float:
        unwrapped = self._clock.unwrap(t_us)
        if self._t0_us is None:
            self._t0_us = unwrapped
        return (unwrapped - self._t0_us) / 1e6

    def _add_piezo(self, message: Piezo) -> None:
        t0 = self._stream_s(message.t_us)
        samples = message.samples[:, :N_LEVELS]
        n = samples.shape[0]
        times = t0 + np.arange(n) / self._piezo_rate_hz
        self.piezo.extend(times, samples)
        self.latest_s = max(self.latest_s, float(times[-1]))

    def _add_load(self, message: Load) -> None:
        t = self._stream_s(message.t_us)
        values = message.values[:N_LEVELS].astype(np.float32)
        valid = np.array([message.is_valid(k) for k in range(values.size)])
        # Disconnected channels are drawn as gaps, not as zeros.
        values[~valid] = np.nan
        self.load.extend([t], values[None, :])
        self.last_valid_s[: valid.size][valid] = t
        self.latest_s = max(self.latest_s, t)

    def connected_levels(self) -> npt.NDArray[np.bool_]:
        """``(8,)`` True where the level's load cell reported recently."""
        return bool_array(self.latest_s - self.last_valid_s <= STALE_AFTER_S)

    def counts_per_gram(self, level: int) -> float:
        """The level's calibrated counts per gram, 0 when not calibrated."""
        cell = self.profile.load[level] if self.profile is not None else None
        return float(cell.counts_per_gram) if cell is not None else 0.0

    def load_in_grams(
        self, counts: npt.NDArray[np.generic], level: int
    ) -> tuple[npt.NDArray[np.float32], bool]:
        """Convert one level's counts to grams when a calibration is known.

        Returns
        -------
        values, calibrated
            Grams and True with a profile for that level, else the counts and False.
        """
        cell = self.profile.load[level] if self.profile is not None else None
        values = np.asarray(counts, dtype=np.float32)
        if cell is None or cell.counts_per_gram == 0:
            return values, False
        grams = (values - cell.offset_counts) / cell.counts_per_gram
        return grams.astype(np.float32), True


def bool_array(values: npt.ArrayLike) -> npt.NDArray[np.bool_]:
    """``values`` as a numpy bool array."""
    return np.asarray(values, dtype=bool)
