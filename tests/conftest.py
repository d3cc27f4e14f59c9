"""Suite-wide test setup: Qt offscreen, a private TOWEREAR_HOME per test."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("TOWEREAR_LANG", "en")


@pytest.fixture(autouse=True)
def towerear_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Every test gets its own config and data directories."""
    home = tmp_path / "towerear-home"
    home.mkdir()
    monkeypatch.setenv("TOWEREAR_HOME", str(home))
    yield home


@pytest.fixture
def german() -> Iterator[None]:
    """The UI language German for one test; English again afterwards."""
    from hostapp import i18n

    i18n.set_language("de")
    try:
        yield
    finally:
        i18n.set_language("en")
