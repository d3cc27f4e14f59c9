"""The animal mugshot game: cards, turn helper, goal cards, score pad; no Qt."""

from hostapp.games.mugshots.cards import (
    ANIMALS,
    CLUE_TYPES,
    COLOURS,
    PATTERNS,
    Card,
    MugshotsError,
    NameBook,
    matching_clues,
)
from hostapp.games.mugshots.engine import MugshotsGame, MugshotsRules
from hostapp.games.mugshots.goals import GOAL_KINDS, Goal
from hostapp.games.mugshots.namebook import default_name_book, load_name_book
from hostapp.games.mugshots.scorepad import ScorePad

__all__ = [
    "ANIMALS",
    "CLUE_TYPES",
    "COLOURS",
    "GOAL_KINDS",
    "PATTERNS",
    "Card",
    "Goal",
    "MugshotsError",
    "MugshotsGame",
    "MugshotsRules",
    "NameBook",
    "ScorePad",
    "default_name_book",
    "load_name_book",
    "matching_clues",
]
