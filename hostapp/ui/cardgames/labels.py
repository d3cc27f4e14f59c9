"""Translated names for the card games' values (the engines use English keys)."""

from __future__ import annotations

from hostapp.i18n import tr


def help_name(kind: str) -> str:
    """The police-station help ``kind`` in words."""
    names = {
        "move": tr("move a detective"),
        "swap": tr("swap cards blind"),
        "look": tr("look at a hand"),
        "share": tr("share a guess space"),
        "bonus": tr("bonus points"),
        "none": tr("no help"),
    }
    return names.get(kind, kind)


def clue_name(clue: str) -> str:
    """A mugshot clue type in words."""
    names = {
        "animal": tr("Animal"),
        "pattern": tr("Pattern"),
        "colour": tr("Colour"),
        "name": tr("Name"),
    }
    return names.get(clue, clue)


def value_name(value: str) -> str:
    """An animal, background pattern or colour in words (names stay as printed)."""
    names = {
        "elephant": tr("elephant"),
        "owl": tr("owl"),
        "bear": tr("bear"),
        "goat": tr("goat"),
        "pig": tr("pig"),
        "bricks": tr("bricks"),
        "wood": tr("wood"),
        "round tiles": tr("round tiles"),
        "diamond tiles": tr("diamond tiles"),
        "wavy": tr("wavy"),
        "turquoise": tr("turquoise"),
        "yellow": tr("yellow"),
        "orange": tr("orange"),
        "pink": tr("pink"),
        "purple": tr("purple"),
    }
    return names.get(value, value)
