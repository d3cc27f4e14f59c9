"""Is a plate still making sound? When each piezo channel starts and stops being busy.

A cube's last strike is not the moment it comes to rest: after its last
bounce it may rock, tumble or slide for a while (0.03-0.45 s on the
cross-check towers), ticking and scraping faintly, and the plate rings
down. A channel is *moving* while its frame envelope, averaged over
``frames`` frames, stays above ``over_floor`` times its noise floor; the
cube on a plate is at rest once that plate has fallen quiet.

The processor works on the frame grid of :mod:`~dsp.detect.conditioning`
and :mod:`~dsp.detect.noisefloor`; it keeps the last frames of the average
and each channel's state, so its changes do not depend on block sizes.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

# Why 5 frames (20 ms): a tumbling cube ticks every few milliseconds and a
# scrape is noise; a frame peak flickers over the floor in quiet too, and
# the average of five no longer does.
DEFAULT_FRAMES = 5
# Why 2.5: the envelope is a frame peak and the floor a low percentile of
# frame peaks, so the average of a quiet channel lies about 1.3 times over
# its floor; a scrape of a few ADC codes lifts it two to five times. On
# the cross-check towers the end of the busy stretch after a landing's
# last strike times its rest better at 2.5 than at 1.8 or 3 (docs/detection.md).
DEFAULT_OVER_FLOOR = 2.5


class MotionChange(NamedTuple):
    """A channel started (``moving``) or stopped being busy at frame ``frame``."""

    frame: int
    channel: int
    moving: bool


class PlateMotion:
    """Per-channel busy/quiet state of the piezo envelope, as a stream of changes.

    Parameters
    ----------
    n_channels : int
        Piezo channels.
    frames : int
        Frames averaged.
    over_floor : float
        A channel is busy while its average exceeds this many times its floor.
    """

    def __init__(
        self,
        *,
        n_channels: int,
        frames: int = DEFAULT_FRAMES,
        over_floor: float = DEFAULT_OVER_FLOOR,
    ) -> None:
        self.n_channels = int(n_channels)
        self.frames = max(1, int(frames))
        self.over_floor = float(over_floor)
        # The stream starts from silence: the first averages count zeros.
        self._tail = np.zeros((self.frames - 1, self.n_channels))
        self._moving = np.zeros(self.n_channels, dtype=bool)
        self.frames_done = 0

    def process(self, envelope: np.ndarray, floor: np.ndarray) -> list[MotionChange]:
        """Take the next frames' envelope and floor; return the changes among them, in order.

        Parameters
        ----------
        envelope, floor : ndarray, shape (frames, n_channels)
            As from the conditioner and the noise floor (NaN floor: not yet known, quiet).
        """
        env = np.asarray(envelope, dtype=np.float64).reshape(-1, self.n_channels)
        n = env.shape[0]
        if n == 0:
            return []
        joined = np.concatenate([self._tail, env])
        # The average over the last ``frames`` frames of each new frame, summed
        # in the same order whatever the blocks (a running sum would round
        # differently from block to block).
        total = joined[: n].copy()
        for k in range(1, self.frames):
            total += joined[k : k + n]
        mean = total / self.frames
        with np.errstate(invalid="ignore"):
            busy = mean > self.over_floor * np.asarray(floor, dtype=np.float64).reshape(n, -1)
        before = np.concatenate([self._moving[None, :], busy[:-1]])
        rows, channels = np.nonzero(busy != before)
        changes = [
            MotionChange(self.frames_done + int(r), int(c), bool(busy[r, c]))
            for r, c in zip(rows.tolist(), channels.tolist(), strict=True)
        ]
        self._moving = busy[-1].copy()
        self._tail = joined[joined.shape[0] - (self.frames - 1):]
        self.frames_done += n
        return changes
