"""Piezo onsets: where a channel's envelope rises clearly out of its noise.

An onset is the first frame of a channel's envelope above ``threshold_db``
over its noise floor, or a frame where the envelope, already above it,
jumps (a strike on a plate still ringing), outside the mask time of the
previous onset of that channel (bounces and ringing of one hit must not
retrigger) unless clearly louder than it (that onset was a neighbour's
crosstalk, and this is the plate's own strike). Its peak is
taken over a short scan time, on *every* channel: that vector is the
acoustic evidence of the impact, crosstalk included.

Candidates are found vectorised; only the (few) candidate frames are
walked in Python. Frames are held back for one scan time so that a scan
never straddles a block boundary: results do not depend on block sizes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# Why 20 dB: the envelope is a frame *peak* and the floor a low percentile
# of frame peaks, so background frames exceed the floor by a few dB only;
# 20 dB (x10) keeps false onsets from hum and talking rare while a cube's
# click is tens of dB above the floor on its own level.
DEFAULT_THRESHOLD_DB = 20.0
# Why 8 ms: the attack of a click is one or two frames; the peak is there.
DEFAULT_SCAN_TIME_MS = 8.0
# Why 14 dB: some towers' discs hear a cube's strikes on the lower plates
# only 13-19 dB over their floor (a worn tower's quiet discs, cubes that
# have lost their speed). Heard everywhere, onsets that faint made talk,
# hum and ringing into drops (acoustic-only: 537 false landings more over
# 31 models' single throws at 17 dB, +43 right); they are only taken as
# the continuation of a drop already heard (``heardrops.continues_drop``).
FAINT_THRESHOLD_DB = 14.0
# Why 30 ms: the ringing of a cardboard plate after a click decays within
# a few tens of ms; a cube's bounces are further apart than that.
DEFAULT_MASK_TIME_MS = 30.0
# Why 0.2 dB/ms after -6 dB: after a hit, a channel's threshold starts 6 dB
# under the hit's peak and decays (Edrumulus's retrigger curve): the plate's
# ringing (about -17 dB 50 ms later on real pads) stays under it, a second
# strike of similar strength is well above it.
DEFAULT_RETRIGGER_START_DB = -6.0
DEFAULT_RETRIGGER_DECAY_DB_PER_MS = 0.2
# Why 4 codes: a 10-bit ADC flickers by one code; after the high-pass a
# one-code step overshoots to under 2 codes. Nothing below 4 is a hit.
DEFAULT_MIN_THRESHOLD_CODES = 4.0
# Why x2 in one frame: a plate still ringing (or ringing with a
# neighbour's crosstalk) stays over the threshold for up to 0.1 s, so a new
# strike there makes no rising edge; its attack doubles the envelope within
# a 4 ms frame. A real pad's ringing can do that too in its first 30 ms
# (the mask covers it), not after it under the retrigger curve: on the real
# pad recordings every single hit is still found once.
DEFAULT_JUMP_RATIO = 2.0
# Why x1.26 (2 dB) over the last onset: the mask keeps a plate's own
# ringing and fainter bounces from retriggering, and neither ever rises
# above the hit that started it. An onset that was only a neighbour's
# crosstalk (12 dB or more under that strike) must not mask the plate's
# own strike 20-30 ms later, which is louder than it; 2 dB covers the
# frame-peak jitter of one hit. Our simulated sessions: 37 of 91 strong
# strikes within 30 ms of another were lost before, 14 now, and fewer
# onsets that match no strike (6 -> 3 of 1,300).
DEFAULT_MASK_OVERRIDE_RATIO = 1.26


@dataclass(frozen=True)
class Onset:
    """One channel's onset.

    Attributes
    ----------
    frame : int
        Envelope frame index from stream start.
    channel : int
        Channel whose envelope crossed its threshold.
    peaks : ndarray, shape (channels,)
        Peak envelope of every channel over the scan time, ADC codes.
    floor : ndarray, shape (channels,)
        Noise floor of every channel at the onset, ADC codes.
    """

    frame: int
    channel: int
    peaks: np.ndarray
    floor: np.ndarray


class OnsetDetector:
    """Streaming per-channel onset detector on a frame envelope.

    Parameters
    ----------
    n_channels : int
        Number of channels.
    frame_rate_hz : float
        Envelope frames per second.
    threshold_db, scan_time_ms, mask_time_ms, min_threshold_codes,
    retrigger_start_db, retrigger_decay_db_per_ms, jump_ratio, mask_override_ratio
        See the module constants for the defaults and why.
    """

    def __init__(
        self,
        *,
        n_channels: int,
        frame_rate_hz: float,
        threshold_db: float = DEFAULT_THRESHOLD_DB,
        scan_time_ms: float = DEFAULT_SCAN_TIME_MS,
        mask_time_ms: float = DEFAULT_MASK_TIME_MS,
        min_threshold_codes: float = DEFAULT_MIN_THRESHOLD_CODES,
        retrigger_start_db: float = DEFAULT_RETRIGGER_START_DB,
        retrigger_decay_db_per_ms: float = DEFAULT_RETRIGGER_DECAY_DB_PER_MS,
        jump_ratio: float = DEFAULT_JUMP_RATIO,
        mask_override_ratio: float = DEFAULT_MASK_OVERRIDE_RATIO,
    ) -> None:
        self.n_channels = int(n_channels)
        self.ratio = 10.0 ** (threshold_db / 20.0)
        self.scan_frames = max(1, round(scan_time_ms * 1e-3 * frame_rate_hz))
        self.mask_frames = max(1, round(mask_time_ms * 1e-3 * frame_rate_hz))
        self.min_threshold = float(min_threshold_codes)
        self.retrigger_start_db = float(retrigger_start_db)
        self.retrigger_decay_db_per_frame = float(retrigger_decay_db_per_ms) * 1e3 / frame_rate_hz
        self.jump_ratio = float(jump_ratio)
        self.mask_override_ratio = float(mask_override_ratio)
        self._last_peak = np.zeros(self.n_channels)
        self._last_onset = np.full(self.n_channels, -(10**9), dtype=np.int64)
        self._env = np.zeros((0, self.n_channels))
        self._floor = np.zeros((0, self.n_channels))
        self._first_frame = 0  # global index of self._env[0]
        self._was_above = np.zeros(self.n_channels, dtype=bool)
        self._mask_until = np.full(self.n_channels, -1, dtype=np.int64)
        self._last_env = np.zeros(self.n_channels)

    @property
    def frames_done(self) -> int:
        """Every onset before this frame index has been delivered."""
        return self._first_frame

    def process(self, envelope: np.ndarray, floor: np.ndarray) -> list[Onset]:
        """Feed envelope frames and the floor that applies to each.

        Parameters
        ----------
        envelope, floor : ndarray, shape (frames, n_channels)

        Returns
        -------
        list of Onset
            Onsets whose scan time is complete, by frame then channel.
        """
        env = np.concatenate([self._env, np.asarray(envelope, dtype=np.float64)])
        flo = np.concatenate([self._floor, np.asarray(floor, dtype=np.float64)])
        n_ready = env.shape[0] - self.scan_frames + 1
        if n_ready <= 0:
            self._env, self._floor = env, flo
            return []
        threshold = np.maximum(flo[:n_ready] * self.ratio, self.min_threshold)
        # NaN floor (still learning) compares False: no onsets then.
        above = env[:n_ready] > threshold
        previous = np.concatenate([self._was_above[None, :], above[:-1]])
        before = np.concatenate([self._last_env[None, :], env[: n_ready - 1]])
        jumped = env[:n_ready] >= self.jump_ratio * before
        frames, channels = np.nonzero(above & (~previous | jumped))
        # Each candidate's peaks over its scan, all at once (the same maxima).
        scanned = env[frames[:, None] + np.arange(self.scan_frames)].max(axis=1)
        onsets: list[Onset] = []
        for i, (f, ch) in enumerate(zip(frames.tolist(), channels.tolist(), strict=True)):
            g = self._first_frame + f
            peaks = scanned[i]
            masked = g < self._mask_until[ch]
            if masked and peaks[ch] < self.mask_override_ratio * self._last_peak[ch]:
                continue
            since = g - self._last_onset[ch]
            decay_db = self.retrigger_start_db - self.retrigger_decay_db_per_frame * since
            if peaks[ch] < self._last_peak[ch] * 10.0 ** (decay_db / 20.0):
                continue
            self._mask_until[ch] = g + self.mask_frames
            self._last_peak[ch] = peaks[ch]
            self._last_onset[ch] = g
            onsets.append(Onset(frame=g, channel=ch, peaks=peaks, floor=flo[f].copy()))
        self._was_above = above[-1].copy()
        self._last_env = env[n_ready - 1].copy()
        self._env, self._floor = env[n_ready:], flo[n_ready:]
        self._first_frame += n_ready
        return onsets
