"""The command line loads only the subcommand it runs, and still lists them all."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from hostapp.cli import build_parser, subcommand_names


def test_every_subcommand_is_discovered() -> None:
    names = subcommand_names()
    assert {"arosa", "bench", "calibrate", "detect", "eval", "monitor", "simulate"} <= set(names)
    choices = build_parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    assert set(choices) == set(names)


def test_a_named_subcommand_gets_only_its_own_parser() -> None:
    choices = build_parser("detect")._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    assert set(choices) == {"detect"}
    # Anything else (an option, a typo) gets the full parser and its choices.
    assert set(build_parser("--help")._subparsers._group_actions[0].choices) == set(  # type: ignore[union-attr]
        subcommand_names()
    )


def test_detect_starts_without_the_game_the_eval_or_the_app() -> None:
    code = (
        "import sys\n"
        "from hostapp.cli import main\n"
        "try:\n"
        "    main(['detect', '--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "loaded = [m for m in ('hostapp.cli.eval', 'hostapp.cli.arosa', 'hostapp.journal',\n"
        "          'hostapp.eval.runner', 'PyQt6') if m in sys.modules]\n"
        "print('loaded:' + ','.join(loaded))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    assert out[-1] == "loaded:"


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="one core: OpenBLAS starts no threads")
def test_the_command_line_runs_numpy_on_one_thread() -> None:
    # OpenBLAS starts a spinning thread per core unless told before numpy
    # loads: the command sets it, a user's own setting still wins.
    code = (
        "import os, sys\n"
        "from hostapp.cli import main\n"
        "import numpy\n"
        "print(len(os.listdir('/proc/self/task')), os.environ['OPENBLAS_NUM_THREADS'])\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.endswith("_NUM_THREADS")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env=env).stdout.split()
    assert out == ["1", "1"]
    env["OPENBLAS_NUM_THREADS"] = "2"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env=env).stdout.split()
    assert out == ["2", "2"]


def test_an_unknown_command_names_the_choices() -> None:
    done = subprocess.run([sys.executable, "-m", "hostapp.cli", "nosuch"], capture_output=True,
                          text=True)
    assert done.returncode == 2
    assert "invalid choice: 'nosuch'" in done.stderr
    assert "detect" in done.stderr
