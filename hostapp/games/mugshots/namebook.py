"""The user's name book: a JSON file in the config directory.

The rule text names neither the seven names nor the blot masks, so the shipped
``names.json`` holds stand-ins and the table edits its own copy
(``<config dir>/mugshots-names.json``). A corrupt copy is reported and the
shipped defaults are used, never a crash.
"""

from __future__ import annotations

import json
import os
import tempfile
from importlib import resources
from pathlib import Path

from hostapp.games.mugshots.cards import MugshotsError, NameBook
from hostapp.i18n import tr
from hostapp.paths import config_dir

FILE_NAME = "mugshots-names.json"


def default_name_book() -> NameBook:
    """The name book shipped with the package."""
    text = resources.files("hostapp.games.mugshots").joinpath("names.json").read_text("utf-8")
    return NameBook.from_dict(json.loads(text))


def user_name_book_path() -> Path:
    """Where the table's own name book lives."""
    return config_dir() / FILE_NAME


def load_name_book() -> tuple[NameBook, str | None]:
    """The table's name book, and a one-sentence warning if it had to be ignored."""
    path = user_name_book_path()
    if not path.exists():
        return default_name_book(), None
    try:
        return NameBook.from_dict(json.loads(path.read_text("utf-8"))), None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, MugshotsError) as exc:
        warning = tr(
            "{path} could not be used ({reason}); using the default names.",
            path=str(path),
            reason=str(exc),
        )
        return default_name_book(), warning


def save_name_book(book: NameBook) -> Path:
    """Write ``book`` as the table's name book, atomically; returns the path."""
    path = user_name_book_path()
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".names-", suffix=".json")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(book.to_dict(), handle, ensure_ascii=False, indent=2)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
