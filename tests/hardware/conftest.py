"""Make the repository's ``hardware`` package importable and give SKiDL a private data dir."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
# hardware/ is design tooling run from the repository root, not part of the
# installed towerear package, so the tests import it from the checkout.
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))


@pytest.fixture(scope="module")
def skidl_data_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """SKiDL caches its symbol libraries under XDG_DATA_HOME: keep them out of ~."""
    home = tmp_path_factory.mktemp("skidl-data")
    patch = pytest.MonkeyPatch()
    patch.setenv("XDG_DATA_HOME", str(home))
    try:
        yield home
    finally:
        patch.undo()


@pytest.fixture(scope="module")
def built_schematic(skidl_data_home: Path) -> Any:
    """The whole kit's circuit, built once per test module."""
    from hardware.schematic import build

    return build(work_dir=skidl_data_home / "work")
