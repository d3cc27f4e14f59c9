"""Grouping onsets on several channels into one impact.

One strike of a cube is heard on its own level and, through the cardboard,
on its neighbours: their onsets fall within a few milliseconds. They are
one :class:`Impact` whose ``peaks`` vector (per channel) is the acoustic
evidence of where it happened.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from dsp.detect.onsets import Onset
from dsp.detect.orderstats import median_of

# Why 12 ms: three 4 ms frames absorb the different attack of loud and
# faint channels of one strike; two strikes of one cube (a bounce) are
# further apart than the 30 ms onset mask anyway.
DEFAULT_GROUP_TIME_MS = 12.0


@dataclass(frozen=True)
class Impact:
    """One strike heard on one or more channels.

    Attributes
    ----------
    frame : int
        Envelope frame of the first onset.
    channels : tuple of int
        Channels with an onset in the group.
    peaks : ndarray, shape (channels,)
        Peak envelope per channel over the group, ADC codes.
    floor : ndarray, shape (channels,)
        Noise floor per channel at the first onset, ADC codes.
    """

    frame: int
    channels: tuple[int, ...]
    peaks: np.ndarray = field(repr=False)
    floor: np.ndarray = field(repr=False)

    def snr_db(self) -> np.ndarray:
        """Peak over floor per channel, dB (0 where the floor is unknown); read-only."""
        return self._snr_db

    @cached_property
    def snr_db_list(self) -> list[float]:
        """:meth:`snr_db` as a list of floats (for asking about a few channels at a time)."""
        return self._snr_db.tolist()

    @cached_property
    def stands_out_db(self) -> float:
        """How far its loudest channel stands over the median one, dB over their floors."""
        # statistics.median: the same value as numpy's, far cheaper for eight.
        snr = self.snr_db_list
        return float(max(snr) - median_of(snr))

    @cached_property
    def loudest(self) -> int:
        """The channel it sounds loudest on (the first of equals, as ``np.argmax``)."""
        # Asked of every recent strike at each decision.
        return int(np.argmax(self.peaks))

    @cached_property
    def _snr_db(self) -> np.ndarray:
        # The fusion asks about each strike many times while it is recent.
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = self.peaks / np.maximum(self.floor, 1e-9)
        snr = np.where(np.isfinite(ratio), 20.0 * np.log10(np.maximum(ratio, 1e-9)), 0.0)
        snr.flags.writeable = False
        return snr


class ImpactGrouper:
    """Streaming grouping of onsets (in frame order) into impacts.

    Parameters
    ----------
    frame_rate_hz : float
        Envelope frames per second.
    group_time_ms : float
        Onsets within this time of a group's first onset join the group.
    """

    def __init__(self, *, frame_rate_hz: float, group_time_ms: float = DEFAULT_GROUP_TIME_MS):
        self.group_frames = max(1, round(group_time_ms * 1e-3 * frame_rate_hz))
        self._open: list[Onset] = []

    def process(self, onsets: list[Onset], *, frames_done: int) -> list[Impact]:
        """Add onsets; return the impacts that can no longer grow.

        Parameters
        ----------
        onsets : list of Onset
            New onsets, in frame order.
        frames_done : int
            Every onset before this frame has been delivered.
        """
        impacts: list[Impact] = []
        for onset in onsets:
            if self._open and onset.frame - self._open[0].frame > self.group_frames:
                impacts.append(self._close())
            self._open.append(onset)
        if self._open and frames_done - self._open[0].frame > self.group_frames:
            impacts.append(self._close())
        return impacts

    def flush(self) -> list[Impact]:
        """Close the open group at the end of the stream."""
        return [self._close()] if self._open else []

    def _close(self) -> Impact:
        group, self._open = self._open, []
        peaks = np.max([o.peaks for o in group], axis=0)
        channels = tuple(sorted({o.channel for o in group}))
        return Impact(frame=group[0].frame, channels=channels, peaks=peaks, floor=group[0].floor)
