"""``towerear bench``: print every benchmark's numbers."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from hostapp.bench import discover


def register(subparsers: Any) -> None:
    """Add the ``bench`` subcommand."""
    parser = subparsers.add_parser("bench", help="measure speed and accuracy, print the numbers")
    parser.add_argument("--quick", action="store_true", help="smaller inputs, rougher numbers")
    parser.add_argument("--only", metavar="AREA", action="append", help="run only this area")
    parser.set_defaults(func=run_bench)


def run_bench(args: argparse.Namespace) -> int:
    """Run the selected benchmarks and print one line per number."""
    for area, run in discover():
        if args.only and area not in args.only:
            continue
        print(f"== {area}", flush=True)
        started = time.perf_counter()
        for result in run(bool(args.quick)):
            print(result.line(), flush=True)
        print(f"   ({time.perf_counter() - started:.1f} s)", file=sys.stderr)
    return 0
