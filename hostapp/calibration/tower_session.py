"""A whole calibration session over several levels, as a transport-free state machine.

For each level the user opens the tower down to it (lifting the modules
above), the load cell is calibrated (:mod:`hostapp.calibration.load_session`),
and the cubes for the cube-mass step are dropped one by one from a few
centimetres: each drop is also an acoustic sample of that level, so the same
minute teaches the acoustic model the level's signature. Then the tower is
closed and the next level follows.

The session consumes load readings and piezo blocks in stream time and
exposes :attr:`prompt`, :attr:`progress` and :attr:`action` (what the user
should do now, for a simulated user). Nothing is stored until
:meth:`result` is taken after the last level: an aborted session leaves
the previous profile untouched.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

import numpy as np

from dsp.detect.acoustic import DEFAULT_CROSSTALK_DB_PER_LEVEL, AcousticLevelModel
from dsp.detect.piezo import PiezoChain
from hostapp.calibration.coins import ReferenceMass
from hostapp.calibration.load_session import LevelLoadCalibration, LoadCalibrationPlan, Step
from hostapp.calibration.profile import (
    N_LEVELS,
    AcousticProfile,
    CalibrationProfile,
    now_utc,
)
from hostapp.errors import CalibrationError
from hostapp.i18n import tr

# Why 0.4 of the lightest cube (0.3 g): a landed cube must lift the plate's
# reading clearly above its noise (~0.01 g) and below any real cube.
_CUBE_STEP_G = 0.12
# Why 0.3 s: the plate rings for ~0.2 s after a drop from a few centimetres;
# a cube is counted once a 0.3 s window sits steady above the step.
_CUBE_SETTLE_S = 0.3
# Why 1.5 s: lifting the top module disconnects nothing, so opening level 7
# cannot be seen; give the user a moment before listening to the empty plate.
_OPEN_TOP_WAIT_S = 1.5


class Phase(enum.Enum):
    """Where the session is for the current level."""

    OPEN = "open"
    LOAD = "load"
    CLOSE = "close"
    DONE = "done"


class UserAction(enum.Enum):
    """What the user should do now (what a simulated user acts on)."""

    WAIT = "wait"
    OPEN = "open"
    PLACE_REFERENCE = "place_reference"
    REMOVE_REFERENCE = "remove_reference"
    PLACE_SECOND = "place_second"
    REMOVE_SECOND = "remove_second"
    DROP_CUBE = "drop_cube"
    REMOVE_CUBES = "remove_cubes"
    CLOSE = "close"


@dataclass(frozen=True)
class TowerCalibrationPlan:
    """Which levels, which references and how many cubes."""

    levels: tuple[int, ...] = tuple(range(N_LEVELS - 1, -1, -1))
    reference: ReferenceMass | None = None
    second_reference: ReferenceMass | None = None
    n_cubes: int = 5
    load_rate_hz: float = 80.0
    piezo_rate_hz: float = 2000.0


@dataclass
class _Drop:
    level: int
    t_s: float
    peaks: np.ndarray


@dataclass
class TowerCalibration:
    """Calibrates the levels of a :class:`TowerCalibrationPlan` one after another."""

    plan: TowerCalibrationPlan
    device_id: str
    previous: CalibrationProfile | None = None
    phase: Phase = Phase.OPEN
    index: int = 0
    drops: list[_Drop] = field(default_factory=list)
    _level_session: LevelLoadCalibration | None = None
    _phase_since_s: float | None = None
    _last_t_s: float = 0.0
    _drops_this_level: int = 0
    _pending: _Drop | None = None
    _cube_baseline: float | None = None
    _recent_t: list[float] = field(default_factory=list)
    _recent_c: list[float] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.plan.reference is None:
            raise CalibrationError(tr("choose a reference mass (a coin or a typed mass) first"))
        if not self.plan.levels:
            raise CalibrationError(tr("choose at least one level to calibrate"))
        self._piezo = PiezoChain(n_channels=N_LEVELS, sample_rate_hz=self.plan.piezo_rate_hz)
        self._profile = self.previous or CalibrationProfile(device_id=self.device_id,
                                                            created_utc=now_utc())
        if self._profile.device_id != self.device_id:
            raise CalibrationError(
                tr(
                    "the previous profile belongs to device {owner}, not {device_id}",
                    owner=self._profile.device_id,
                    device_id=self.device_id,
                )
            )

    # -- state seen by the user ---------------------------------------------
    @property
    def level(self) -> int:
        """The level being calibrated (the last one once done)."""
        return self.plan.levels[min(self.index, len(self.plan.levels) - 1)]

    @property
    def finished(self) -> bool:
        """True when every planned level is calibrated."""
        return self.phase is Phase.DONE

    @property
    def progress(self) -> float:
        """Share of the whole session done, 0..1."""
        if self.finished:
            return 1.0
        within = {Phase.OPEN: 0.0, Phase.CLOSE: 0.95}.get(self.phase, 0.05)
        if self.phase is Phase.LOAD and self._level_session is not None:
            within = 0.05 + 0.9 * self._level_session.progress
        return (self.index + within) / len(self.plan.levels)

    @property
    def drops_this_level(self) -> int:
        """Cubes that landed on the current level's plate so far (counted by weight)."""
        return self._drops_this_level

    @property
    def prompt(self) -> str:
        """The instruction for the user, in the current language."""
        level = self.level
        if self.phase is Phase.OPEN:
            if level == N_LEVELS - 1:
                return tr("Take the top module off to open level {level}.", level=level)
            return tr("Lift modules {level} to {top} together to open level {level}.",
                      level=level, top=N_LEVELS - 1)
        if self.phase is Phase.CLOSE:
            return tr("Put the modules back on: the tower is closed again.")
        if self.phase is Phase.DONE:
            return tr("Calibration finished.")
        assert self._level_session is not None
        if self._level_session.step is Step.CUBES_ON:
            n = self.plan.n_cubes
            if self._drops_this_level < n:
                return tr("Level {level}: drop cube {i} of {n} onto the plate from about 3 cm.",
                          level=level, i=self._drops_this_level + 1, n=n)
            return tr("Level {level}: leave the cubes on the plate.", level=level)
        return self._level_session.prompt

    @property
    def action(self) -> UserAction:
        """What the user should do now; WAIT while the session listens."""
        if self.phase is Phase.OPEN:
            return UserAction.OPEN
        if self.phase is Phase.CLOSE:
            return UserAction.CLOSE
        if self.phase is Phase.DONE or self._level_session is None:
            return UserAction.WAIT
        session = self._level_session
        if session.step is Step.CUBES_ON and self._drops_this_level < self.plan.n_cubes:
            return UserAction.DROP_CUBE
        if not session.waiting_for_user:
            return UserAction.WAIT
        return {
            Step.REFERENCE_ON: UserAction.PLACE_REFERENCE,
            Step.REFERENCE_OFF: UserAction.REMOVE_REFERENCE,
            Step.SECOND_ON: UserAction.PLACE_SECOND,
            Step.SECOND_OFF: UserAction.REMOVE_SECOND,
            Step.CUBES_OFF: UserAction.REMOVE_CUBES,
        }.get(session.step, UserAction.WAIT)

    # -- data in ------------------------------------------------------------
    def feed_load(self, t_s: np.ndarray, counts: np.ndarray, valid: np.ndarray) -> None:
        """Take load readings of all levels, shapes (m,), (m, 8), (m, 8)."""
        t_s = np.asarray(t_s, dtype=np.float64)
        counts = np.asarray(counts).reshape(-1, N_LEVELS)
        valid = np.asarray(valid, dtype=bool).reshape(-1, N_LEVELS)
        for i in range(t_s.size):
            if self.finished:
                return
            self._last_t_s = float(t_s[i])
            self._on_reading(float(t_s[i]), counts[i], valid[i])

    def feed_piezo(self, t0_s: float, samples: np.ndarray) -> None:
        """Take a block of piezo sample sets, shape (n, 8), first set at ``t0_s``."""
        for impact in self._piezo.process(t0_s, samples):
            self._on_impact(impact.t_s, impact.peaks)

    def _on_impact(self, t_s: float, peaks: np.ndarray) -> None:
        session = self._level_session
        listening = (self.phase is Phase.LOAD and session is not None
                     and session.step is Step.CUBES_ON)
        if not listening:
            self._pending = None
            return
        # The last impact before the cube is counted is it settling: the one
        # the detector uses for a landing's loudness profile.
        self._pending = _Drop(self.level, t_s, np.asarray(peaks, dtype=np.float64))

    def _count_cube(self, t: float, count: float) -> None:
        """Count a landed cube when the plate sits steadily one cube higher."""
        session = self._level_session
        assert session is not None
        self._recent_t.append(t)
        self._recent_c.append(count)
        while self._recent_t and t - self._recent_t[0] > _CUBE_SETTLE_S:
            del self._recent_t[0], self._recent_c[0]
        scale = session.scale_counts_per_gram
        empty = session.segments[Step.EMPTY].stats
        if self._cube_baseline is None:
            self._cube_baseline = session.baseline_mean()
        if scale is None or len(self._recent_c) < 4 or self._drops_this_level >= self.plan.n_cubes:
            return
        window = np.asarray(self._recent_c)
        rise = (float(np.median(window)) - self._cube_baseline) / scale
        steady = float(np.std(window)) <= 4.0 * max(empty.std, 1.0)
        if rise > _CUBE_STEP_G and steady:
            self._cube_baseline = float(np.median(window))
            if self._pending is not None:
                self.drops.append(self._pending)
            self._pending = None
            self._drops_this_level += 1

    def _on_reading(self, t: float, counts: np.ndarray, valid: np.ndarray) -> None:
        level = self.level
        if self._phase_since_s is None:
            self._phase_since_s = t
        if self.phase is Phase.OPEN:
            above = valid[level + 1:]
            opened = (not above.any()) if level < N_LEVELS - 1 else (
                t - self._phase_since_s >= _OPEN_TOP_WAIT_S)
            if opened and valid[level]:
                self._start_level()
            return
        if self.phase is Phase.CLOSE:
            if valid.all() and (level < N_LEVELS - 1 or t - self._phase_since_s >= 1.0):
                self.index += 1
                self._phase_since_s = t
                self.phase = Phase.DONE if self.index >= len(self.plan.levels) else Phase.OPEN
            return
        session = self._level_session
        assert session is not None
        if session.step is Step.CUBES_ON and valid[level]:
            self._count_cube(t, float(counts[level]))
            session.hold = self._drops_this_level < self.plan.n_cubes
        session.feed(np.array([t]), np.array([counts[level]], dtype=np.float64),
                     np.array([bool(valid[level])]))
        if session.finished:
            self._profile = self._profile.with_load(level, session.result())
            self.phase = Phase.CLOSE
            self._phase_since_s = t

    def _start_level(self) -> None:
        assert self.plan.reference is not None
        self._level_session = LevelLoadCalibration(LoadCalibrationPlan(
            level=self.level, reference=self.plan.reference,
            second_reference=self.plan.second_reference, n_cubes=self.plan.n_cubes,
            load_rate_hz=self.plan.load_rate_hz,
        ))
        self._drops_this_level = 0
        self._pending = None
        self._cube_baseline = None
        self._recent_t.clear()
        self._recent_c.clear()
        self.phase = Phase.LOAD

    # -- result -------------------------------------------------------------
    def acoustic_profile(self) -> AcousticProfile | None:
        """Signatures from every drop heard, with a leave-one-out confusion matrix."""
        if not self.drops:
            return None
        profiles = [_with_unheard_channels(d) for d in self.drops]
        full = AcousticLevelModel(n_levels=N_LEVELS)
        for drop, peaks in zip(self.drops, profiles, strict=True):
            full.learn(peaks, drop.level)
        confusion = np.zeros((N_LEVELS, N_LEVELS), dtype=int)
        for i, drop in enumerate(self.drops):
            model = AcousticLevelModel(n_levels=N_LEVELS)
            for j, other in enumerate(self.drops):
                if j != i:
                    model.learn(profiles[j], other.level)
            confusion[drop.level, model.classify(profiles[i]).level] += 1
        totals = confusion.sum(axis=1)
        rate = [float(confusion[k, k] / totals[k]) if totals[k] else 0.0
                for k in range(N_LEVELS)]
        learnt = np.where(full.counts[:, None] > 0,
                          full.sums / np.maximum(full.counts, 1.0)[:, None], full.prior)
        drops_per_level = int(np.max(totals))
        return AcousticProfile(
            signatures=[[float(v) for v in row] for row in learnt],
            detection_rate=rate,
            confusion=confusion.tolist(),
            drops_per_level=drops_per_level,
        )

    def result(self) -> CalibrationProfile:
        """The new profile: the previous one with every calibrated level replaced."""
        if not self.finished:
            raise CalibrationError(
                tr(
                    "the calibration stopped at level {level}; the previous profile is unchanged",
                    level=self.level,
                )
            )
        acoustic = _merge_acoustic(self._profile.acoustic, self.acoustic_profile())
        return CalibrationProfile(self.device_id, now_utc(), list(self._profile.load), acoustic)


def _with_unheard_channels(drop: _Drop) -> np.ndarray:
    """Peaks with the channels above the opened level filled from the crosstalk prior.

    While level k is open, the piezos of the lifted modules are disconnected,
    so a drop's profile says nothing about them; in play they hear the cube
    through the cardboard. Their values are taken from the prior's fall-off.
    """
    peaks = np.array(drop.peaks, dtype=np.float64)
    top = float(np.max(peaks[: drop.level + 1])) if drop.level >= 0 else float(np.max(peaks))
    for channel in range(drop.level + 1, peaks.size):
        peaks[channel] = top * 10 ** (-DEFAULT_CROSSTALK_DB_PER_LEVEL * (channel - drop.level) / 20)
    return peaks


def _merge_acoustic(old: AcousticProfile | None,
                    new: AcousticProfile | None) -> AcousticProfile | None:
    """Levels heard in this session replace theirs; the others keep what they had."""
    if old is None or new is None:
        return new or old
    fresh = [sum(row) > 0 for row in new.confusion]
    pick = [new if fresh[k] else old for k in range(N_LEVELS)]
    return AcousticProfile(
        signatures=[pick[k].signatures[k] for k in range(N_LEVELS)],
        detection_rate=[pick[k].detection_rate[k] for k in range(N_LEVELS)],
        confusion=[pick[k].confusion[k] for k in range(N_LEVELS)],
        drops_per_level=max(old.drops_per_level, new.drops_per_level),
    )
