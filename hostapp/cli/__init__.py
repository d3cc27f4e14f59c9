"""The ``towerear`` command line.

Each subcommand lives in its own module of this package and exposes
``register(subparsers) -> None``, which adds its parser and sets
``func=callable(args) -> int`` as the parser's default. Modules are
discovered, so adding a subcommand touches no shared file.

With no subcommand, ``towerear`` opens the desktop app.
"""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import sys
from collections.abc import Sequence

from hostapp import __version__
from hostapp.errors import TowerearError

# One core is the budget (issue #4 measures throughput on one core), and the
# matrices here are tiny: numpy's OpenBLAS would otherwise start a thread per
# core that spins after each call, a quarter more CPU for `towerear detect`
# and nothing gained. It must be set before numpy loads, which nothing above
# does; a user's own setting wins.
for _threads in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_threads, "1")


def subcommand_names() -> list[str]:
    """The discovered subcommands: one module each, named as the command."""
    return sorted(
        info.name for info in pkgutil.iter_modules(__path__) if not info.name.startswith("_")
    )


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser: every discovered subcommand, or only ``command``'s.

    Only one subcommand's module is imported when the command line names
    it: ``towerear detect`` then starts without loading the game, the
    eval or the app (a tenth of a second on a two-minute recording).
    """
    names = subcommand_names()
    if command in names:
        names = [command]
    parser = argparse.ArgumentParser(
        prog="towerear",
        description="Hear where the cubes land in the Mord im Arosa tower.",
    )
    parser.add_argument("--version", action="version", version=f"towerear {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in names:
        module = importlib.import_module(f"{__name__}.{name}")
        register = getattr(module, "register", None)
        if register is not None:
            register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``towerear`` console script; returns the exit status."""
    words = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(words[0] if words else None)
    args = parser.parse_args(words)
    func = getattr(args, "func", None)
    if func is None:
        from hostapp.cli._app import run_app

        func = run_app
    try:
        return int(func(args) or 0)
    except TowerearError as exc:
        print(f"towerear: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("towerear: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
