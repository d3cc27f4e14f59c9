"""Translations for the UI and for user-facing messages (German and English).

Messages are written in English in the code and looked up with :func:`tr`.
German catalogs live in :mod:`hostapp.locale` as modules named ``de_*.py``,
each exporting a dict ``MESSAGES = {"English text": "Deutscher Text"}``; one
module per area (``de_arosa.py``, ``de_cardgames.py``, ...) so that areas do
not share a file. Placeholders use ``str.format`` names: ``tr("{name} throws",
name=...)``. The UI installs a ``QTranslator`` that answers from the same
catalogs, so Qt's own ``tr()`` works too.

Errors raised outside :mod:`hostapp` (``dsp.sim`` must not import it) arrive
as finished English sentences; :func:`tr_sentence` translates those at the UI
boundary by matching them against the catalog's templates.
"""

from __future__ import annotations

import importlib
import locale
import os
import pkgutil
import re
import string
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


# A template takes part in sentence matching only with this much literal text:
# short ones ("L{level}", "{n} cards") would match unrelated sentences.
_MIN_TEMPLATE_LITERAL = 10
_FIELD_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _pieces(template: str) -> list[tuple[str, str | None]]:
    """``template`` as (literal text, field name or None) pairs; [] if it is not a template."""
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError:
        return []
    pieces = [(literal, field) for literal, field, _, _ in parsed]
    if any(field is not None and not _FIELD_NAME.fullmatch(field) for _, field in pieces):
        return []  # positional or attribute fields: not a sentence template
    return pieces


def _compile(english: str) -> re.Pattern[str] | None:
    """A regex matching every sentence ``english`` formats to, one group per field."""
    pieces = _pieces(english)
    fields = [field for _, field in pieces if field]
    if not fields or sum(len(lit) for lit, _ in pieces) < _MIN_TEMPLATE_LITERAL:
        return None
    pattern, seen = [], set()
    for literal, field in pieces:
        pattern.append(re.escape(literal))
        if field:
            pattern.append(f"(?P={field})" if field in seen else f"(?P<{field}>.+?)")
            seen.add(field)
    return re.compile("".join(pattern), re.DOTALL)


@cache
def _templates(language: str) -> tuple[tuple[re.Pattern[str], list[tuple[str, str | None]]], ...]:
    """The catalog's templates as (English regex, translated pieces), most specific first."""
    found = []
    for english, translated in catalog(language).items():
        regex = _compile(english)
        pieces = _pieces(translated)
        if regex is not None and pieces:
            literal = sum(len(lit) for lit, _ in _pieces(english))
            found.append((literal, regex, pieces))
    found.sort(key=lambda item: -item[0])
    return tuple((regex, pieces) for _, regex, pieces in found)


def tr_sentence(text: str) -> str:
    """Translate an already formatted English sentence into the current language.

    For messages made outside :mod:`hostapp` (``str(exc)`` of a ``dsp.sim``
    error, say) that never went through :func:`tr`. An exact catalog key is
    used first; otherwise ``text`` is matched whole against the catalog's
    templates (keys with ``{name}`` fields, compiled to regexes once, the one
    with the most literal text winning) and the captured values, themselves
    passed through this function so that a nested English reason is
    translated too, are put into the translation. Format specs are ignored:
    the values are already formatted. Text that matches nothing (or is
    already translated) comes back unchanged, as does everything in English.
    """
    if _language == "en" or not text:
        return text
    exact = catalog(_language).get(text)
    if exact is not None:
        return exact
    for regex, pieces in _templates(_language):
        match = regex.fullmatch(text)
        if match is None:
            continue
        values = {name: tr_sentence(value) for name, value in match.groupdict().items()}
        return "".join(literal + (values.get(field, "") if field else "")
                       for literal, field in pieces)
    return text


def os_reason(exc: OSError) -> str:
    """Why the operating system refused, in the current language ("Zugriff verweigert")."""
    return tr_sentence(exc.strerror or str(exc))
