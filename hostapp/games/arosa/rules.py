"""The fixed numbers of Mord im Arosa: colours, floors, cubes, limits."""

from __future__ import annotations

PLAYER_COLORS: tuple[str, ...] = ("yellow", "blue", "brown", "gray", "black", "white")
"""The six player colours, in the order the rulebook's box lists them."""

VICTIM = "red"
"""The colour of the two victim cubes."""

N_FLOORS = 8
"""Floors 0 (ground floor) to 7."""

N_VICTIMS = 2
CLUES_PER_PLAYER = 20
PROLOGUE_CLUES = 2
"""Clues each player throws in the prologue."""

SHEET_LIMIT = 10
"""The game ends as soon as one colour has this many clues on the sheet."""

MIN_PLAYERS = 2
MAX_PLAYERS = 6

POINTS_AT_CRIME_SCENE = 3
POINTS_NEXT_TO_CRIME_SCENE = 2
POINTS_ELSEWHERE = 1

FLOORS: tuple[int, ...] = tuple(range(N_FLOORS))
