"""Adaptive noise floor of the piezo envelope.

The floor is a low percentile of the frame envelope over consecutive
windows: impacts fill only a few frames of a window, so a low percentile
sees the background even during play. The floor follows a quieter room at
once and a louder one slowly, so a burst of throws cannot lift it enough to
hide the next cube. Windows are counted from the first frame of the stream,
so the floor of each frame does not depend on how frames arrive in blocks.
Frames that are no sound of the room (a hole in a damaged stream, bridged
by holding the last sample) are not learnt from: a window holding one
leaves the floor as it was.
"""

from __future__ import annotations

import numpy as np

from dsp.detect.orderstats import percentile_along_1

# Why 0.5 s: long enough that the frames of one drop (~0.3 s of impacts and
# ringing) cannot fill a window, short enough to follow hum switching on.
DEFAULT_WINDOW_S = 0.5
# Why the 20th percentile: with impacts in up to half of a window's frames,
# the 20th percentile is still a background frame.
DEFAULT_PERCENTILE = 20.0
# Why 1.25 per window: a louder room is accepted within a few seconds
# (x3 in about 2.5 s), while one window full of impacts lifts the floor by
# only a quarter.
DEFAULT_MAX_RISE_PER_WINDOW = 1.25
# Why a tenth of a code: an ADC's flicker keeps a live channel's floor above
# half a code; a floor that fell to zero (a converter that read one code
# for half a second) could never rise again by a factor a window.
MIN_FLOOR = 0.1


class NoiseFloorTracker:
    """Per-channel adaptive floor of a frame envelope.

    Parameters
    ----------
    n_channels : int
        Number of channels.
    frame_rate_hz : float
        Envelope frames per second.
    initial_floor : ndarray, optional
        Floor to use before the first window completes (from a calibration);
        without it the floor is NaN (no onsets) for the first window.
    window_s, percentile, max_rise_per_window
        See the module constants for the defaults and why.
    """

    def __init__(
        self,
        *,
        n_channels: int,
        frame_rate_hz: float,
        initial_floor: np.ndarray | None = None,
        window_s: float = DEFAULT_WINDOW_S,
        percentile: float = DEFAULT_PERCENTILE,
        max_rise_per_window: float = DEFAULT_MAX_RISE_PER_WINDOW,
    ) -> None:
        self.n_channels = int(n_channels)
        self.window_frames = max(4, round(window_s * frame_rate_hz))
        self.percentile = float(percentile)
        self.max_rise = float(max_rise_per_window)
        self.floor = (
            np.full(self.n_channels, np.nan)
            if initial_floor is None
            else np.asarray(initial_floor, dtype=np.float64).copy()
        )
        self._pending = np.zeros((0, self.n_channels))
        self._pending_bridged = False

    def process(self, envelope: np.ndarray, *, bridged: bool = False) -> np.ndarray:
        """Return the floor that applies to each frame of ``envelope``.

        Parameters
        ----------
        envelope : ndarray, shape (frames, n_channels)
        bridged : bool
            These frames bridge a hole in the stream (no sound of the room):
            the windows they fall in are not learnt from.

        Returns
        -------
        ndarray, shape (frames, n_channels)
            For each frame, the floor learnt from the windows completed
            before it (NaN before the first window).
        """
        env = np.asarray(envelope, dtype=np.float64).reshape(-1, self.n_channels)
        out = np.empty_like(env)
        w = self.window_frames
        held = self._pending.shape[0]
        n_windows = (held + env.shape[0]) // w
        if n_windows == 0:
            out[:] = self.floor
            self._pending = np.concatenate([self._pending, env])
            self._pending_bridged |= bridged and env.shape[0] > 0
            return out
        # Every window this block completes, in one percentile call: a
        # block of a second holds two, a replay's block dozens.
        done = n_windows * w - held
        windows = np.concatenate([self._pending, env[:done]]).reshape(n_windows, w, -1)
        levels = percentile_along_1(windows, self.percentile)
        # Frames until the first window completes keep the floor from before.
        ends = np.arange(1, n_windows + 1) * w - held
        start = 0
        for k, (end, level) in enumerate(zip(ends.tolist(), levels, strict=True)):
            out[start:end] = self.floor
            if not bridged and not (k == 0 and self._pending_bridged):
                self._update(level)
            start = end
        out[start:] = self.floor
        self._pending = env[done:].copy()
        self._pending_bridged = bridged and self._pending.shape[0] > 0
        return out

    def _update(self, level: np.ndarray) -> None:
        unset = ~np.isfinite(self.floor)
        self.floor = np.where(
            unset, level, np.minimum(level, np.maximum(self.floor, MIN_FLOOR) * self.max_rise)
        )

