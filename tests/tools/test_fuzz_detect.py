"""tools/fuzz_detect.py: damaged copies of a recording, each detected without a crash."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from hostapp.eval.sessions import SessionSpec, record_session
from tests.scripts import TOOLS, load_script

fuzz = load_script(TOOLS / "fuzz_detect.py", "fuzz_detect_tool")


@pytest.fixture(scope="module")
def recordings(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    folder = tmp_path_factory.mktemp("fuzz")
    out = []
    for scenario, seed in (("game", 11), ("rapid", 12)):
        path = folder / f"{scenario}.bin"
        record_session(SessionSpec(scenario, 4, seed, 25.0), path)
        out.append(path)
    return out


def test_each_damage_is_drawn_from_the_seed_and_changes_the_bytes(recordings: list[Path]) -> None:
    data = recordings[0].read_bytes()
    kinds = set()
    for seed in range(40):
        first, what = fuzz.damaged(data, recordings, random.Random(seed))
        again, _ = fuzz.damaged(data, recordings, random.Random(seed))
        assert first == again and first != data
        kinds.update(what.split("+"))
    assert kinds == set(fuzz.DAMAGE)


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4, 5])
def test_damaged_copies_are_detected_without_a_crash(
    recordings: list[Path], tmp_path: Path, seed: int
) -> None:
    keep = tmp_path / "kept"
    keep.mkdir()
    assert fuzz.fuzz_one(seed, recordings, keep) is None
    assert list(keep.iterdir()) == []  # a copy that went through is not kept


def test_a_crash_is_reported_with_its_seed_and_its_copy_kept(
    recordings: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import hostapp.cli.detect
    import hostapp.pipeline

    def broken(*_args: object, **_kwargs: object) -> None:
        raise ValueError("zero-size array")

    monkeypatch.setattr(hostapp.cli.detect, "detect_recording", broken)
    monkeypatch.setattr(hostapp.pipeline.DetectionPipeline, "finish", broken)
    keep = tmp_path / "kept"
    keep.mkdir()
    found = fuzz.fuzz_one(7, recordings, keep)
    assert found is not None and found.startswith("seed 7:") and "zero-size array" in found
    kept = list(keep.iterdir())
    assert len(kept) == 1 and str(kept[0]) in found
