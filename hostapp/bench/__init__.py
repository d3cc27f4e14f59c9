"""Benchmarks printed by ``towerear bench``.

Each module of this package exposes ``run(quick: bool) -> list[BenchResult]``;
modules are discovered so areas add benchmarks without touching a shared file.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass


@dataclass(frozen=True)
class BenchResult:
    """One measured number with its unit and, where the issue sets one, its target."""

    name: str
    value: float
    unit: str
    target: str = ""
    ok: bool | None = None

    def line(self) -> str:
        verdict = "" if self.ok is None else ("  ok" if self.ok else "  MISSED")
        target = f"  (target {self.target})" if self.target else ""
        return f"{self.name:<48} {self.value:>12.4g} {self.unit:<10}{target}{verdict}"


def discover() -> Iterator[tuple[str, Callable[[bool], list[BenchResult]]]]:
    """Yield ``(area, run)`` for every benchmark module."""
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        run = getattr(module, "run", None)
        if run is not None:
            yield info.name, run
