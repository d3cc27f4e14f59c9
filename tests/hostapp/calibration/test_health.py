"""The pre-game health check on synthetic readings with known faults."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np

from hostapp.calibration.health import health_check
from hostapp.calibration.profile import CalibrationProfile, LoadCellProfile

CPG = 20000.0


def profile(created: datetime) -> CalibrationProfile:
    p = CalibrationProfile(device_id="0011223344556677", created_utc=created.isoformat())
    for level in range(8):
        p = p.with_load(level, LoadCellProfile(offset_counts=1000.0 * level, counts_per_gram=CPG,
                                               counts_per_gram_uncertainty=200.0,
                                               noise_g_rms=0.003, drift_g_per_min=0.0))
    return p.__class__(p.device_id, created.isoformat(), p.load, p.acoustic)


def readings(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    load = 1000.0 * np.arange(8) + rng.normal(0, 0.003 * CPG, (240, 8))
    valid = np.ones((240, 8), dtype=bool)
    piezo = np.clip(np.round(512 + rng.normal(0, 2.0, (6000, 8))), 0, 1023)
    return load, valid, piezo


def test_healthy_tower_passes() -> None:
    now = datetime.now(UTC)
    load, valid, piezo = readings(np.random.default_rng(0))
    findings = health_check(load_counts=load, load_valid=valid, piezo_codes=piezo,
                            profile=profile(now - timedelta(days=2)), now=now)
    assert all(f.ok for f in findings), [f.what for f in findings if not f.ok]


def test_each_fault_is_named_with_a_fix() -> None:
    now = datetime.now(UTC)
    load, valid, piezo = readings(np.random.default_rng(1))
    valid[:, 6] = False                      # level 6 lifted / broken contact
    load[:, 2] += 0.5 * CPG                  # a cube left on level 2
    load[:, 4] += np.random.default_rng(2).normal(0, 0.2 * CPG, 240)  # noisy cell
    piezo[:, 1] = 900                        # broken bias
    findings = health_check(load_counts=load, load_valid=valid, piezo_codes=piezo,
                            profile=profile(now - timedelta(days=90)), now=now)
    failed = {(f.level, f.what.split(":")[0]) for f in findings if not f.ok}
    assert (None, "Calibration is 90 days old.") in failed
    assert any(level == 6 for level, _ in failed)
    assert (2, "Level 2") in failed
    assert (4, "Level 4") in failed
    assert (1, "Level 1") in failed
    assert all(f.fix for f in findings if not f.ok)
    assert not any(level in (0, 3, 5, 7) for level, _ in failed)


def test_uncalibrated_tower_says_so() -> None:
    load, valid, piezo = readings(np.random.default_rng(3))
    findings = health_check(load_counts=load, load_valid=valid, piezo_codes=piezo, profile=None)
    assert not findings[0].ok and "No calibration" in findings[0].what
    assert all(f.ok for f in findings[1:])


def test_a_cell_that_reads_a_constant_is_named_as_weighing_nothing() -> None:
    load, valid, piezo = readings(np.random.default_rng(4))
    load[:, 3] = 81234.0                     # a broken bridge wire: no noise at all
    load[:, 5] = 0x7FFFFF                    # an input driven past its range
    findings = health_check(load_counts=load, load_valid=valid, piezo_codes=piezo, profile=None)
    failed = {f.level: f for f in findings if not f.ok and f.level is not None}
    assert set(failed) == {3, 5}
    assert "constant 81234" in failed[3].what and "heard" in failed[3].fix
    assert "constant 8388607" in failed[5].what
