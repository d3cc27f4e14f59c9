"""A ``QTranslator`` that answers from the :mod:`hostapp.i18n` catalogs.

The UI calls :func:`hostapp.i18n.tr` directly; this translator makes Qt's own
``tr()`` (and any ``QCoreApplication.translate`` call) agree with it, so there
is one source of German text.
"""

from __future__ import annotations

from PyQt6.QtCore import QTranslator

from hostapp import i18n


class CatalogTranslator(QTranslator):
    """Translate by looking the English source text up in the current catalog."""

    # None is how PyQt returns a null QString; its stubs only allow str.
    def translate(  # type: ignore[override]
        self,
        context: str | None,
        source_text: str | None,
        disambiguation: str | None = None,
        n: int = -1,
    ) -> str | None:
        if not source_text:
            return None
        # None becomes a null QString, which tells Qt "no translation here" so
        # it keeps the source text; an empty string would blank the text out.
        return i18n.catalog(i18n.current_language()).get(source_text)

    def isEmpty(self) -> bool:
        return False
