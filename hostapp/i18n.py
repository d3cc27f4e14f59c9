"""Translations for the UI and for user-facing messages (German and English).

Messages are written in English in the code and looked up with :func:`tr`.
German catalogs live in :mod:`hostapp.locale` as modules named ``de_*.py``,
each exporting a dict ``MESSAGES = {"English text": "Deutscher Text"}``; one
module per area (``de_arosa.py``, ``de_cardgames.py``, ...) so that areas do
not share a file. Placeholders use ``str.format`` names: ``tr("{name} throws",
name=...)``. The UI installs a ``QTranslator`` that answers from the same
catalogs, so Qt's own ``tr()`` works too.
"""

from __future__ import annotations

import importlib
import locale
import os
import pkgutil
from functools import cache
from typing import Any

SUPPORTED_LANGUAGES = ("en", "de")
_language = "en"


def system_language() -> str:
    """The system's UI language if supported, else English."""
    for var in ("TOWEREAR_LANG", "LC_ALL", "LC_MESSAGES", "LANG", "LANGUAGE"):
        value = os.environ.get(var)
        if value:
            code = value.split(":")[0].split("_")[0].split(".")[0].lower()
            return code if code in SUPPORTED_LANGUAGES else "en"
    code = (locale.getlocale()[0] or "en").split("_")[0].lower()
    return code if code in SUPPORTED_LANGUAGES else "en"


def set_language(language: str) -> None:
    """Switch the language used by :func:`tr` (``"en"`` or ``"de"``)."""
    global _language
    if language not in SUPPORTED_LANGUAGES:
        raise ValueError(f"unsupported language {language!r}; choose one of {SUPPORTED_LANGUAGES}")
    _language = language


def current_language() -> str:
    """The language :func:`tr` translates into."""
    return _language


@cache
def catalog(language: str) -> dict[str, str]:
    """All messages of one language, merged from its catalog modules."""
    merged: dict[str, str] = {}
    if language == "en":
        return merged
    import hostapp.locale as pkg

    for info in pkgutil.iter_modules(pkg.__path__):
        if info.name.startswith(f"{language}_"):
            module = importlib.import_module(f"hostapp.locale.{info.name}")
            merged.update(getattr(module, "MESSAGES", {}))
    return merged


def tr(message: str, /, **fields: Any) -> str:
    """Translate ``message`` into the current language and fill its fields."""
    text = catalog(_language).get(message, message)
    return text.format(**fields) if fields else text
