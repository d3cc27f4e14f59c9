"""Opening the desktop app from the command line (``towerear`` or ``towerear app``)."""

from __future__ import annotations

import argparse
import os
import sys


def has_display() -> bool:
    """Whether a Qt window can be shown (a desktop, or an explicit QPA platform)."""
    if os.environ.get("QT_QPA_PLATFORM"):
        return True
    if sys.platform.startswith("linux"):
        return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    return True


HEADLESS_HINT = (
    "no display found: run the app on a desktop, or headless with "
    "'towerear monitor --sim' (live numbers in the terminal), "
    "'towerear detect FILE.bin' or 'towerear arosa replay SCRIPT.json'"
)


def run_app(args: argparse.Namespace) -> int:
    """Open the main window; say how to run headless when there is no display."""
    if not has_display():
        print(f"towerear: {HEADLESS_HINT}", file=sys.stderr)
        return 2
    from hostapp.ui.app import run

    return run(args)
