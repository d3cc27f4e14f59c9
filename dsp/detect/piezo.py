"""The piezo chain: timed blocks of ADC codes in, timed impacts out.

Conditioning, noise floor, onsets and grouping run on a continuous sample
grid. The device stamps each PIEZO message with the time of its first
sample set; lost messages (a damaged stream) leave holes in that grid. A
short hole is filled by holding the last sample (silence to the high-pass,
so no onset is invented); a long one starts a new time anchor. Overlapping
sets (duplicates) are dropped.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field

import numpy as np

from dsp.detect.conditioning import PiezoConditioner
from dsp.detect.grouping import Impact, ImpactGrouper
from dsp.detect.motion import PlateMotion
from dsp.detect.noisefloor import NoiseFloorTracker
from dsp.detect.onsets import Onset, OnsetDetector

# Why 2 s: filling costs memory and time proportional to the hole; beyond a
# couple of seconds the floor and filters gain nothing from continuity.
MAX_FILL_S = 2.0
# Why one set and two: a message sent twice (a damaged stream) overlaps the
# one before by all its sets, and a lost one leaves a hole of all of them;
# a sample clock that runs off the time stamps (some hundreds of ppm) moves
# a block's start by a fraction of a set. Dropping or filling a set for
# that made what the onsets saw depend on where blocks began. Overlaps of a
# set or more are dropped, holes of two or more filled (as before, a hole
# under one and a half sets was never filled); anything less re-times.
OVERLAP_SETS = 1.0
HOLE_SETS = 2.0
# Why a fifth of a set: within that the nominal rate times the samples
# well enough; beyond it the block's own stamp times them. Not a quarter:
# the stamp clock moves its grid where the stamps are a quarter of a set
# off it (``dsp.detect.stampclock.TOLERANCE_SETS``), so a run begins that far off, to
# the microsecond of the stamps, and whether it was re-timed depended on
# the rounding of where the blocks before it ended (a strike timed 0.12 ms
# apart in 0.1-s and 2-s slices, and a pass read as a bounce in one).
DRIFT_ANCHOR_SETS = 0.2
# Why 256: impacts are timed within a few blocks of being found; anchors
# are only looked up for recent frames.
_ANCHORS_KEPT = 256


@dataclass(frozen=True)
class PlateBusy:
    """Level ``level``'s plate started (``busy``) or stopped making sound at ``t_s``."""

    t_s: float
    level: int
    busy: bool


@dataclass(frozen=True)
class TimedImpact:
    """An :class:`~dsp.detect.grouping.Impact` with its stream time, seconds."""

    t_s: float
    impact: Impact = field(repr=False)
    #: Heard only over the faint threshold (``onsets.FAINT_THRESHOLD_DB``),
    #: not the onset threshold: its ``peaks`` hold only the channels where it rose.
    faint: bool = False

    @property
    def peaks(self) -> np.ndarray:
        """Peak envelope per channel, ADC codes."""
        return self.impact.peaks

    @property
    def channels(self) -> tuple[int, ...]:
        """Channels with an onset in this impact."""
        return self.impact.channels


class PiezoChain:
    """Streaming piezo processing with a stream-time grid.

    Parameters
    ----------
    n_channels : int
        Piezo channels (levels).
    sample_rate_hz : float
        Piezo set rate from HELLO.
    initial_floor : ndarray, optional
        Initial noise floor per channel, envelope units (from a calibration).
    faint_threshold_db : float, optional
        Also deliver faint impacts (``TimedImpact.faint``): onsets over this
        threshold but under the onset threshold, while nothing in their scan
        reached it and no onset came within a group time before them. None:
        none.
    """

    def __init__(
        self,
        *,
        n_channels: int,
        sample_rate_hz: float,
        initial_floor: np.ndarray | None = None,
        faint_threshold_db: float | None = None,
    ) -> None:
        self.n_channels = int(n_channels)
        self.rate = float(sample_rate_hz)
        self.conditioner = PiezoConditioner(n_channels=n_channels, sample_rate_hz=sample_rate_hz)
        frame_rate = self.conditioner.frame_rate_hz
        self.floor = NoiseFloorTracker(
            n_channels=n_channels, frame_rate_hz=frame_rate, initial_floor=initial_floor
        )
        self.onsets = OnsetDetector(n_channels=n_channels, frame_rate_hz=frame_rate)
        self.grouper = ImpactGrouper(frame_rate_hz=frame_rate)
        self.faint_onsets = (
            None if faint_threshold_db is None
            else OnsetDetector(
                n_channels=n_channels, frame_rate_hz=frame_rate, threshold_db=faint_threshold_db
            )
        )
        self.faint_grouper = ImpactGrouper(frame_rate_hz=frame_rate)
        self._onset_frames: list[int] = []  # recent onsets' frames, for the faint ones
        self.motion = PlateMotion(n_channels=n_channels)
        self._busy_changes: list[PlateBusy] = []
        self._anchor_samples: list[int] = []
        self._anchor_t: list[float] = []
        self._next_t: float | None = None
        self._last_sample: np.ndarray | None = None
        self.filled_s = 0.0  # time bridged by holding the last sample
        self.gaps = 0  # holes too long to fill
        self.dropped_sets = 0  # overlapping (duplicate) sets

    @property
    def decision_delay_s(self) -> float:
        """How long after its onset an impact is known (scan and grouping time)."""
        frames = self.onsets.scan_frames + self.grouper.group_frames + 1
        return frames / self.conditioner.frame_rate_hz

    @property
    def t_done_s(self) -> float:
        """Stream time up to which impacts have been delivered."""
        return self._frame_time(self.onsets.frames_done)

    def _frame_time(self, frame: int) -> float:
        if not self._anchor_samples:
            return 0.0
        sample = frame * self.conditioner.frame_len
        # (bisect on the list: np.searchsorted would copy it into an array each call.)
        i = max(0, bisect_right(self._anchor_samples, sample) - 1)
        return self._anchor_t[i] + (sample - self._anchor_samples[i]) / self.rate

    def process(self, t0_s: float, samples: np.ndarray) -> list[TimedImpact]:
        """Feed sample sets whose first set was taken at ``t0_s``.

        Parameters
        ----------
        t0_s : float
            Stream time of the first set, seconds.
        samples : ndarray, shape (n, n_channels)
            ADC codes.

        Returns
        -------
        list of TimedImpact
            Impacts completed by this block, in time order.
        """
        x = np.asarray(samples).reshape(-1, self.n_channels)
        if x.shape[0] == 0:
            return []
        period = 1.0 / self.rate
        # The time the samples so far give the next set; a block that starts
        # away from it was preceded by a hole, overlaps the last (sent twice),
        # or the sample clock runs off the stamps.
        expected = self._next_t
        if expected is None:
            self._anchor(float(t0_s))
            expected = float(t0_s)
        else:
            # In sets, to a millionth: stamps are whole microseconds, so a
            # block can start exactly a fifth or a whole set off, and the
            # rounding of how the blocks before it were summed must not
            # decide which side of a threshold that is.
            gap_sets = round((t0_s - expected) * self.rate, 6)
            if gap_sets <= -OVERLAP_SETS:
                skip = int(round(-gap_sets))
                self.dropped_sets += min(skip, x.shape[0])
                x = x[skip:]
                if x.shape[0] == 0:
                    return []
            elif gap_sets >= HOLE_SETS:
                missing = int(round(gap_sets))
                if gap_sets * period <= MAX_FILL_S and self._last_sample is not None:
                    fill = np.repeat(self._last_sample[None, :], missing, axis=0)
                    self.filled_s += missing * period
                    self._next_t = expected + (missing + x.shape[0]) * period
                    self._last_sample = np.asarray(x[-1], dtype=np.float64)
                    # The hole is no sound of the room: the floor learns nothing from it.
                    return self._run(fill, bridged=True) + self._run(x)
                else:
                    self.gaps += 1
                    self._anchor(float(t0_s))
                    expected = float(t0_s)
            elif abs(gap_sets) > DRIFT_ANCHOR_SETS:
                # Less than a set early or late: the sample clock runs off
                # the time stamps. Every set is kept; times follow the stamps.
                self._anchor(float(t0_s))
                expected = float(t0_s)
        self._next_t = expected + x.shape[0] * period
        self._last_sample = np.asarray(x[-1], dtype=np.float64)
        return self._run(x)

    def _anchor(self, t_s: float) -> None:
        """Time the samples from here on from ``t_s`` (older anchors beyond use are let go)."""
        self._anchor_samples.append(self.conditioner.n_samples)
        self._anchor_t.append(t_s)
        if len(self._anchor_t) > _ANCHORS_KEPT:
            del self._anchor_samples[:-_ANCHORS_KEPT]
            del self._anchor_t[:-_ANCHORS_KEPT]

    def take_busy_changes(self) -> list[PlateBusy]:
        """The plates' busy/quiet changes found since the last call, in time order."""
        out, self._busy_changes = self._busy_changes, []
        return out

    def flush(self) -> list[TimedImpact]:
        """Deliver the impact still open at the end of the stream."""
        return _in_time_order(
            self._timed(self.grouper.flush()),
            self._timed(self.faint_grouper.flush(), faint=True),
        )

    def _run(self, x: np.ndarray, *, bridged: bool = False) -> list[TimedImpact]:
        env = self.conditioner.process(x)
        if env.shape[0] == 0:
            return []
        floor = self.floor.process(env, bridged=bridged)
        self._busy_changes += [
            PlateBusy(self._frame_time(c.frame + 1), c.channel, c.moving)
            for c in self.motion.process(env, floor)
        ]
        onsets = self.onsets.process(env, floor)
        impacts = self._timed(self.grouper.process(onsets, frames_done=self.onsets.frames_done))
        if self.faint_onsets is None:
            return impacts
        # Both detectors have delivered every onset before the same frame,
        # and a group is closed a group time after its first onset: the
        # two kinds come in time order whatever the blocks.
        self._onset_frames += [o.frame for o in onsets]
        faint = [
            o for o in self.faint_onsets.process(env, floor) if self._only_faint(o)
        ]
        keep_from = self.onsets.frames_done - 2 * self.grouper.group_frames
        self._onset_frames = [f for f in self._onset_frames if f >= keep_from]
        grouped = self.faint_grouper.process(faint, frames_done=self.faint_onsets.frames_done)
        return _in_time_order(impacts, self._timed(grouped, faint=True))

    def _only_faint(self, onset: Onset) -> bool:
        """Whether a faint detector's onset is none of the onset detector's strikes.

        Nothing in its scan reached the onset threshold (a strike's attack
        crosses the lower threshold a frame sooner), and no onset came within
        a group time before it (a strike's crosstalk on the other plates).
        Onsets after it are not looked at: they may come in the next block.
        """
        threshold = np.maximum(onset.floor * self.onsets.ratio, self.onsets.min_threshold)
        if np.any(onset.peaks >= threshold):
            return False
        since = onset.frame - self.grouper.group_frames
        return not any(since <= f <= onset.frame for f in self._onset_frames)

    def _timed(self, impacts: list[Impact], *, faint: bool = False) -> list[TimedImpact]:
        if faint:
            impacts = [_heard_where_it_rose(i) for i in impacts]
        return [TimedImpact(self._frame_time(i.frame), i, faint) for i in impacts]


def _heard_where_it_rose(impact: Impact) -> Impact:
    """A faint impact heard only on the channels whose envelope rose over the faint threshold.

    The other channels' peaks are the room at that level: a channel with a
    louder floor outweighed the one struck (model A: a bounce heard 9.4 codes
    over a floor of 1.8 on plate 7 was loudest on plate 5, 9.7 over 5.3).
    """
    heard = np.zeros(impact.peaks.shape[0], dtype=bool)
    heard[list(impact.channels)] = True
    return Impact(frame=impact.frame, channels=impact.channels,
                  peaks=np.where(heard, impact.peaks, 0.0), floor=impact.floor)


def _in_time_order(impacts: list[TimedImpact], faint: list[TimedImpact]) -> list[TimedImpact]:
    """Both kinds of impacts of one block by their first frame, a faint one after an equal."""
    if not faint:
        return impacts
    return sorted(impacts + faint, key=lambda i: (i.impact.frame, i.faint))
