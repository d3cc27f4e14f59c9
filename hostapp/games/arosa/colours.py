"""The cube colours as words in the UI's language (a player is named by colour too)."""

from __future__ import annotations

from hostapp.i18n import current_language, tr


def colour_word(colour: str) -> str:
    """``colour`` as a word inside a sentence: "blue" in English, "Blau" in German.

    Anything that is not a cube colour (a name typed into a script) comes back as it is.
    """
    words = {
        "yellow": tr("yellow"),
        "blue": tr("blue"),
        "brown": tr("brown"),
        "gray": tr("gray"),
        "black": tr("black"),
        "white": tr("white"),
        "red": tr("red"),
    }
    if colour not in words:
        return colour
    word = words[colour]
    # German writes a colour used as a noun with a capital ("in Blau", "2 Rot");
    # the catalog has the adjective ("gelb"), which the card games use as it is.
    return word[:1].upper() + word[1:] if current_language() == "de" else word
