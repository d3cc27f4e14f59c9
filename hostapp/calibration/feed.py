"""Decoded protocol frames -> a calibration session's readings, in stream time.

The terminal flow and the app's wizard both receive :class:`~hostapp.protocol.Frame`
objects from a source; this adapter stamps them with stream time and hands
load readings and piezo blocks to a :class:`~hostapp.calibration.tower_session.TowerCalibration`
(or anything with ``feed_load``/``feed_piezo``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

import numpy as np

from hostapp.protocol import Frame, Hello, Load, Piezo, StreamClock


class ReadingConsumer(Protocol):
    """What the adapter feeds."""

    def feed_load(self, t_s: np.ndarray, counts: np.ndarray, valid: np.ndarray) -> None: ...

    def feed_piezo(self, t0_s: float, samples: np.ndarray) -> None: ...


class FrameFeeder:
    """Stamps frames with stream time and forwards their readings.

    Attributes
    ----------
    hello : Hello or None
        The device's HELLO once seen (its ``device_id`` names the profile).
    latest_valid : ndarray of bool, shape (n_load,)
        Valid bits of the last LOAD message.
    """

    def __init__(self, consumer: ReadingConsumer | None = None) -> None:
        self.consumer = consumer
        self.hello: Hello | None = None
        self.clock = StreamClock()
        self.latest_valid = np.zeros(8, dtype=bool)
        self.latest_counts = np.zeros(8, dtype=np.int64)

    @property
    def device_id(self) -> str | None:
        """The device id as 16 hex digits, once HELLO was seen."""
        return self.hello.device_id.hex() if self.hello is not None else None

    def feed(self, frames: Iterable[Frame]) -> None:
        """Forward every frame's readings to the consumer."""
        self.feed_messages((frame.msg, frame.seq) for frame in frames)

    def feed_messages(self, messages: Iterable[tuple[object, int]]) -> None:
        """Forward a batch of ``(message, seq)``, piezo sets joined into contiguous blocks.

        One block per run of back-to-back PIEZO messages instead of one call
        per 10 sets keeps the per-call cost of the consumer's filters off the
        UI thread. A batch spans a few tens of milliseconds, so handing its
        piezo blocks over before its load readings changes no decision.
        """
        run_t0: float | None = None
        run_next = 0.0
        run: list[np.ndarray] = []
        period = 1.0 / (self.hello.piezo_rate_hz if self.hello else 2000.0)

        def flush() -> None:
            if run and run_t0 is not None and self.consumer is not None:
                self.consumer.feed_piezo(run_t0, np.concatenate(run))
            run.clear()

        loads: list[tuple[object, int]] = []
        for msg, seq in messages:
            if isinstance(msg, Piezo) and self.consumer is not None:
                t = self.clock.stamp(seq, msg)
                if t is None:
                    continue
                if not run or abs(t - run_next) > 0.5 * period:
                    flush()
                    run_t0 = t
                run.append(msg.samples)
                run_next = t + msg.samples.shape[0] * period
            elif isinstance(msg, Load):
                loads.append((msg, seq))
            else:
                self.feed_message(msg, seq)
        flush()
        for msg, seq in loads:
            self.feed_message(msg, seq)

    def feed_message(self, msg: object, seq: int = 1) -> None:
        """Forward one decoded message (``seq`` 0 on a HELLO marks a device reboot)."""
        t = self.clock.stamp(seq, msg)
        if isinstance(msg, Hello):
            self.hello = msg
        elif isinstance(msg, Load) and t is not None:
            valid = np.array([(msg.valid >> k) & 1 for k in range(msg.values.size)], dtype=bool)
            self.latest_valid = valid
            self.latest_counts = msg.values.astype(np.int64)
            if self.consumer is not None:
                self.consumer.feed_load(np.array([t]), msg.values[None, :], valid[None, :])
        elif isinstance(msg, Piezo) and t is not None and self.consumer is not None:
            self.consumer.feed_piezo(t, msg.samples)
