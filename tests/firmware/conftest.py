"""Fixtures for the firmware tests: one build, and the long simavr run shared by all workers."""

from __future__ import annotations

import fcntl
import pickle
import shutil
from pathlib import Path
from typing import Any

import pytest

from hostapp.sources.simavr import FIRMWARE_DIR, FirmwareBuild, SimavrRun, build_firmware

SESSION_SECONDS = 10.5
SESSION_SEED = 3


def _tools_missing() -> str:
    for tool in ("avr-gcc", "make", "pkg-config"):
        if shutil.which(tool) is None:
            return tool
    return ""


@pytest.fixture(scope="session")
def firmware_build() -> FirmwareBuild:
    missing = _tools_missing()
    if missing:
        pytest.fail(f"{missing} is missing: run tools/setup.sh")
    return build_firmware()


@pytest.fixture(scope="session")
def shared_dir(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Path:
    """A directory all xdist workers of this session share."""
    root = tmp_path_factory.getbasetemp()
    if worker_id != "master":
        root = root.parent
    return root


def _cached(shared: Path, name: str, make: Any) -> Any:
    """Compute once per test session, whatever the number of workers."""
    path = shared / f"{name}.pickle"
    with open(shared / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if path.exists():
            return pickle.loads(path.read_bytes())
        value = make()
        path.write_bytes(pickle.dumps(value))
        return value


@pytest.fixture(scope="session")
def session_run(firmware_build: FirmwareBuild, shared_dir: Path) -> tuple[Any, SimavrRun]:
    """(SensorBlock, SimavrRun): a 10.5 s scripted session with a lift, run in simavr."""
    from hostapp.sources.simavr import run_simavr, scripted_session

    def make() -> tuple[Any, SimavrRun]:
        block, _ = scripted_session(seed=SESSION_SEED, duration_s=SESSION_SECONDS)
        return block, run_simavr(block, build=firmware_build)

    result: tuple[Any, SimavrRun] = _cached(shared_dir, "firmware-session", make)
    return result


@pytest.fixture(scope="session")
def firmware_dir() -> Path:
    return FIRMWARE_DIR
