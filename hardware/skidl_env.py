"""Import SKiDL without it leaving log files in the current directory.

On import SKiDL opens ``<script>.log`` and ``<script>.erc`` in the current
directory (``skidl_REPL.*`` under pytest) and deletes them again by relative
name when file output is switched off. Two processes in the same directory
(pytest-xdist workers, or a test run beside a build) then delete each
other's files and crash. Importing it inside a private temporary directory
and switching file output off there keeps the checkout clean.
"""

from __future__ import annotations

import os
import sys
import tempfile
from types import ModuleType


def import_skidl() -> ModuleType:
    """The ``skidl`` module, imported (once per process) with file logging off."""
    if "skidl" in sys.modules:
        return sys.modules["skidl"]
    here = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="towerear-skidl-") as scratch:
        os.chdir(scratch)
        try:
            import skidl
            from skidl.logger import stop_log_file_output

            stop_log_file_output()
        finally:
            os.chdir(here)
    return skidl
