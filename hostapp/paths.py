"""Where towerear keeps its files.

``TOWEREAR_HOME`` overrides everything (tests point it at a temporary
directory); otherwise the XDG base directories are followed.
"""

from __future__ import annotations

import os
from pathlib import Path


def _base(xdg_var: str, fallback: str) -> Path:
    home = os.environ.get("TOWEREAR_HOME")
    if home:
        return Path(home)
    root = os.environ.get(xdg_var) or str(Path.home() / fallback)
    return Path(root) / "towerear"


def config_dir() -> Path:
    """Directory for settings and calibration profiles (created on demand)."""
    path = _base("XDG_CONFIG_HOME", ".config") / "config"
    path.mkdir(parents=True, exist_ok=True)
    return path


def data_dir() -> Path:
    """Directory for game journals, recordings and reports (created on demand)."""
    path = _base("XDG_DATA_HOME", ".local/share") / "data"
    path.mkdir(parents=True, exist_ok=True)
    return path
