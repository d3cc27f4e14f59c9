"""``towerear eval``: detection accuracy on simulated towers, report into docs/eval/."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from hostapp.errors import TowerearError

_DEFAULT_OUT = Path(__file__).resolve().parents[2] / "docs" / "eval"


def register(subparsers: Any) -> None:
    """Add the ``eval`` subcommand."""
    from hostapp.eval.runner import FAMILIES

    parser = subparsers.add_parser(
        "eval",
        help="detection accuracy on simulated towers, report in docs/eval/",
        description=(
            "Simulate sessions on towers not used for tuning, run them through the detect "
            "pipeline, score against the ground truth, print every target number per family "
            "and write a markdown report with plots."
        ),
    )
    parser.add_argument("--quick", action="store_true", help="one short session per family")
    parser.add_argument(
        "--family", action="append", choices=FAMILIES, help="only this family (repeatable)"
    )
    parser.add_argument("--jobs", type=int, default=2, help="processes (default 2)")
    parser.add_argument(
        "--out", type=Path, default=_DEFAULT_OUT, help="report directory (default docs/eval)"
    )
    parser.add_argument("--no-report", action="store_true", help="print the numbers only")
    parser.set_defaults(func=run_eval_command)


class EvalError(TowerearError):
    """The evaluation cannot run as asked."""


def run_eval_command(args: argparse.Namespace) -> int:
    """Run the evaluation; numbers on stdout, progress on stderr."""
    from hostapp.eval.report import summary_lines, write_report
    from hostapp.eval.runner import FAMILIES, run_eval

    if args.jobs < 1:
        raise EvalError("--jobs must be at least 1")
    families = tuple(args.family) if args.family else FAMILIES
    results = run_eval(quick=args.quick, families=families, jobs=args.jobs)
    for line in summary_lines(results):
        print(line, flush=True)
    if not args.no_report:
        try:
            path = write_report(results, args.out, quick=args.quick)
        except OSError as exc:
            raise EvalError(f"cannot write the report into {args.out}: {exc.strerror}") from exc
        print(f"towerear eval: report written to {path}", file=sys.stderr)
    return 0
