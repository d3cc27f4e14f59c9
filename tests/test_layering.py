"""The layers point one way: dsp and the app core import no Qt, dsp imports no hostapp."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _modules(package: str, exclude: tuple[str, ...] = ()) -> list[str]:
    names = []
    for path in sorted((ROOT / package).rglob("*.py")):
        rel = path.relative_to(ROOT).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        name = ".".join(parts)
        if any(name == e or name.startswith(e + ".") for e in exclude):
            continue
        if parts[-1] == "__main__":
            continue
        names.append(name)
    return names


def _import_with_blocked(
    modules: list[str], blocked: list[str]
) -> subprocess.CompletedProcess[str]:
    code = textwrap.dedent(
        f"""
        import importlib, sys
        class Blocker:
            def find_spec(self, name, path=None, target=None):
                if any(name == b or name.startswith(b + ".") for b in {blocked!r}):
                    raise ImportError("blocked import: " + name)
                return None
        sys.meta_path.insert(0, Blocker())
        for m in {modules!r}:
            importlib.import_module(m)
        """
    )
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)


def test_dsp_imports_only_numpy_and_scipy() -> None:
    result = _import_with_blocked(_modules("dsp"), ["PyQt6", "pyqtgraph", "hostapp", "serial"])
    assert result.returncode == 0, result.stderr


def test_app_core_imports_no_qt() -> None:
    core = _modules("hostapp", exclude=("hostapp.ui", "hostapp.cli._app"))
    result = _import_with_blocked(core, ["PyQt6", "pyqtgraph"])
    assert result.returncode == 0, result.stderr
