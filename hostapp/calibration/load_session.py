"""The guided load-cell calibration of one level, as a transport-free state machine.

The user is asked, in turn, to leave the plate empty, put the reference mass
on, take it off, optionally do the same with a second mass, and weigh a
handful of cubes. The session watches the readings itself: it notices when
the user has acted (the mean moves well beyond the noise), waits until the
plate is steady, collects a few seconds, and moves on. Both the terminal flow
and the app's wizard feed it readings and show :attr:`prompt` and
:attr:`progress`; nothing is saved until :meth:`result` is taken, so an
aborted session changes nothing.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field

import numpy as np

from hostapp.calibration.coins import ReferenceMass
from hostapp.calibration.load_math import (
    Measured,
    ReadingStats,
    bracketed_baseline,
    counts_per_gram,
    cube_mass,
    drift_rate,
    linearity_error,
    noise_grams,
    summarize_readings,
)
from hostapp.calibration.profile import LoadCellProfile
from hostapp.errors import CalibrationError
from hostapp.i18n import tr


class Step(enum.Enum):
    """What the user is asked to do."""

    EMPTY = "empty"
    REFERENCE_ON = "reference_on"
    REFERENCE_OFF = "reference_off"
    SECOND_ON = "second_on"
    SECOND_OFF = "second_off"
    CUBES_ON = "cubes_on"
    CUBES_OFF = "cubes_off"
    DONE = "done"


@dataclass(frozen=True)
class LoadCalibrationPlan:
    """What to calibrate on one level and how long to listen."""

    level: int
    reference: ReferenceMass
    second_reference: ReferenceMass | None = None
    n_cubes: int = 5
    load_rate_hz: float = 80.0
    # Why 4 s: 320 readings at 80 SPS put the tare's standard error at ~6 % of
    # the noise, and it is short enough that drift inside it is negligible.
    empty_s: float = 4.0
    # Why 1 s: the plate's ringing and the HX711 filter settle within ~0.3 s.
    settle_s: float = 1.0
    collect_s: float = 3.0


@dataclass
class _Segment:
    """A span of steady readings collected for one step."""

    step: Step
    t_start_s: float
    stats: ReadingStats


@dataclass
class LevelLoadCalibration:
    """Runs the steps of a :class:`LoadCalibrationPlan` over incoming readings."""

    plan: LoadCalibrationPlan
    step: Step = Step.EMPTY
    segments: dict[Step, _Segment] = field(default_factory=dict)
    disconnected: bool = False
    _buffer_t: list[float] = field(default_factory=list)
    _buffer_c: list[float] = field(default_factory=list)
    _changed: bool = False
    _steady_since: float | None = None
    _scale: Measured | None = None
    # Set by the orchestrator while it still expects cubes to be dropped:
    # a steady span then is a pause between drops, not the end of the step.
    hold: bool = False

    def __post_init__(self) -> None:
        self._steps = [Step.EMPTY, Step.REFERENCE_ON, Step.REFERENCE_OFF]
        if self.plan.second_reference is not None:
            self._steps += [Step.SECOND_ON, Step.SECOND_OFF]
        if self.plan.n_cubes > 0:
            self._steps += [Step.CUBES_ON, Step.CUBES_OFF]
        self._steps.append(Step.DONE)

    # -- what the user sees -------------------------------------------------
    @property
    def prompt(self) -> str:
        """The instruction for the user, in the current language."""
        level = self.plan.level
        if self.disconnected:
            return tr(
                "Level {level}'s load cell is not connected: "
                "put the modules below it back on the tower.",
                level=level,
            )
        texts = {
            Step.EMPTY: tr("Level {level}: leave the plate empty and do not touch the tower.",
                           level=level),
            Step.REFERENCE_ON: tr("Level {level}: put the {mass} in the middle of the plate.",
                                  level=level, mass=self.plan.reference.label),
            Step.REFERENCE_OFF: tr("Level {level}: take the {mass} off the plate.",
                                   level=level, mass=self.plan.reference.label),
            Step.SECOND_ON: tr("Level {level}: put the {mass} in the middle of the plate.",
                               level=level,
                               mass=self.plan.second_reference.label
                               if self.plan.second_reference else ""),
            Step.SECOND_OFF: tr("Level {level}: take the {mass} off the plate.", level=level,
                                mass=self.plan.second_reference.label
                                if self.plan.second_reference else ""),
            Step.CUBES_ON: tr("Level {level}: put {n} cubes on the plate.", level=level,
                              n=self.plan.n_cubes),
            Step.CUBES_OFF: tr("Level {level}: take the cubes off the plate.", level=level),
            Step.DONE: tr("Level {level} is calibrated.", level=level),
        }
        return texts[self.step]

    @property
    def waiting_for_user(self) -> bool:
        """True while the session waits for the user to act (not yet for steadiness)."""
        return self.step not in (Step.EMPTY, Step.DONE) and not self._changed

    @property
    def progress(self) -> float:
        """Share of the session done, 0..1."""
        index = self._steps.index(self.step)
        return index / (len(self._steps) - 1)

    @property
    def finished(self) -> bool:
        """True once every step is done."""
        return self.step is Step.DONE

    @property
    def scale_counts_per_gram(self) -> float | None:
        """The scale once the reference mass was weighed, else None."""
        return self._scale.value if self._scale is not None else None

    def baseline_mean(self) -> float:
        """Mean reading of the empty plate the current step starts from."""
        return self._baseline().mean

    # -- readings in --------------------------------------------------------
    def feed(self, t_s: np.ndarray, counts: np.ndarray, valid: np.ndarray) -> None:
        """Take a block of this level's readings (any block size)."""
        for t, c, ok in zip(np.asarray(t_s, dtype=float), np.asarray(counts, dtype=float),
                            np.asarray(valid, dtype=bool), strict=True):
            if self.step is Step.DONE:
                return
            if not ok:
                self.disconnected = True
                self._restart_collection()
                continue
            self.disconnected = False
            self._take(float(t), float(c))

    def _restart_collection(self) -> None:
        self._buffer_t.clear()
        self._buffer_c.clear()
        self._steady_since = None

    def _baseline(self) -> ReadingStats:
        if self.step in (Step.REFERENCE_OFF, Step.SECOND_OFF, Step.CUBES_OFF):
            return self._previous_on_segment().stats
        # The latest empty plate: after the coins came off, drift is smallest.
        for step in (Step.SECOND_OFF, Step.REFERENCE_OFF, Step.EMPTY):
            if step in self.segments:
                return self.segments[step].stats
        raise CalibrationError(tr("no empty-plate reading yet"))

    def _previous_on_segment(self) -> _Segment:
        on = {Step.REFERENCE_OFF: Step.REFERENCE_ON, Step.SECOND_OFF: Step.SECOND_ON,
              Step.CUBES_OFF: Step.CUBES_ON}[self.step]
        return self.segments[on]

    def _change_threshold(self) -> float:
        empty = self.segments[Step.EMPTY].stats
        # Why 10 sigma (at least 0.1 g once the scale is known): well clear of
        # noise and drift within a step, yet far below a coin (4-13 g) or a
        # handful of cubes (>= 1 g).
        threshold = 10.0 * max(empty.std, 1.0)
        if self._scale is not None:
            threshold = min(threshold, 0.1 * abs(self._scale.value))
            threshold = max(threshold, 6.0 * empty.std)
        return threshold

    def _take(self, t: float, c: float) -> None:
        plan = self.plan
        if self.step is not Step.EMPTY and not self._changed:
            # Wait for the user: a short window whose mean left the baseline.
            self._buffer_t.append(t)
            self._buffer_c.append(c)
            window = max(int(0.25 * plan.load_rate_hz), 3)
            if len(self._buffer_c) > window:
                del self._buffer_t[:-window], self._buffer_c[:-window]
            if len(self._buffer_c) == window:
                moved = abs(float(np.median(self._buffer_c)) - self._baseline().mean)
                if moved > self._change_threshold():
                    self._changed = True
                    self._restart_collection()
            return
        self._buffer_t.append(t)
        self._buffer_c.append(c)
        needed = plan.empty_s if self.step is Step.EMPTY else plan.settle_s + plan.collect_s
        if self._buffer_t[-1] - self._buffer_t[0] < needed:
            return
        samples = np.asarray(self._buffer_c)
        if self.step is not Step.EMPTY:
            samples = samples[int(plan.settle_s * plan.load_rate_hz):]
        stats = summarize_readings(samples)
        if self.hold or not self._steady(samples, stats):
            # Still moving (ringing, a hand near the plate): drop the oldest second.
            cut = int(plan.load_rate_hz)
            del self._buffer_t[:cut], self._buffer_c[:cut]
            return
        self.segments[self.step] = _Segment(self.step, self._buffer_t[0], stats)
        self._advance()

    def _steady(self, samples: np.ndarray, stats: ReadingStats) -> bool:
        if self.step is Step.EMPTY:
            # The first step has no noise reference; accept a span with no
            # trend larger than its own scatter.
            return self._trend(samples) <= 3.0 * max(stats.std, 1.0)
        empty = self.segments[Step.EMPTY].stats
        # Why 3x and 4 sigma: loading a cell raises its noise a little
        # (vibration pickup); a trend above 4 sigma means it is still settling.
        return stats.std <= 3.0 * max(empty.std, 1.0) and self._trend(samples) <= 4.0 * max(
            empty.std, 1.0
        )

    @staticmethod
    def _trend(samples: np.ndarray) -> float:
        half = samples.size // 2
        if half < 2:
            return math.inf
        return abs(float(np.median(samples[half:]) - np.median(samples[:half])))

    def _advance(self) -> None:
        if self.step is Step.REFERENCE_ON:
            self._scale = counts_per_gram(
                self.segments[Step.EMPTY].stats, self.segments[Step.REFERENCE_ON].stats,
                self.plan.reference,
            )
        self.step = self._steps[self._steps.index(self.step) + 1]
        self._changed = False
        self._restart_collection()

    # -- result -------------------------------------------------------------
    def result(self) -> LoadCellProfile:
        """The level's calibration; only once :attr:`finished`."""
        if not self.finished or self._scale is None:
            raise CalibrationError(
                tr(
                    "the calibration of level {level} is not finished; nothing was saved",
                    level=self.plan.level,
                )
            )
        seg = self.segments
        empty = seg[Step.EMPTY].stats
        empties = [s for k, s in seg.items() if k in (Step.EMPTY, Step.REFERENCE_OFF,
                                                      Step.SECOND_OFF, Step.CUBES_OFF)]
        drift = drift_rate(
            np.array([s.t_start_s for s in empties]), np.array([s.stats.mean for s in empties]),
            self._scale,
        )
        linearity = None
        if self.plan.second_reference is not None:
            linearity = linearity_error(
                seg[Step.REFERENCE_OFF].stats, seg[Step.SECOND_ON].stats,
                self.plan.second_reference, self._scale,
            ).value
        cube: Measured | None = None
        if self.plan.n_cubes > 0:
            # The empty plate before and after the cubes, at the cubes' time:
            # the drift while they were dropped one by one stays out of their mass.
            before = seg.get(Step.SECOND_OFF, seg[Step.REFERENCE_OFF])
            on, after = seg[Step.CUBES_ON], seg[Step.CUBES_OFF]
            baseline = bracketed_baseline(before.stats, before.t_start_s, after.stats,
                                          after.t_start_s, on.t_start_s)
            cube = cube_mass(baseline, on.stats, self.plan.n_cubes, self._scale)
        last_empty = empties[-1].stats
        return LoadCellProfile(
            offset_counts=last_empty.mean,
            counts_per_gram=self._scale.value,
            counts_per_gram_uncertainty=self._scale.uncertainty,
            noise_g_rms=noise_grams(empty, self._scale).value,
            drift_g_per_min=drift.value if math.isfinite(drift.value) else 0.0,
            linearity_error_pct=linearity,
            cube_mass_g=cube.value if cube else None,
            cube_mass_uncertainty_g=cube.uncertainty if cube else None,
        )
