"""Suspicion points, culprits and winners from the investigation sheet."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from hostapp.games.arosa.rules import (
    N_FLOORS,
    POINTS_AT_CRIME_SCENE,
    POINTS_ELSEWHERE,
    POINTS_NEXT_TO_CRIME_SCENE,
)


@dataclass(frozen=True)
class Scores:
    """The final reckoning.

    Attributes
    ----------
    suspicion
        ``{colour: points}`` for every player.
    culprits
        The players with the most points, in seating order.
    winners
        The players with the fewest points, in seating order.
    """

    suspicion: Mapping[str, int]
    culprits: tuple[str, ...]
    winners: tuple[str, ...]


def floor_points(crime_scenes: Iterable[int]) -> tuple[int, ...]:
    """Points one clue is worth on each floor 0..7.

    A crime scene is worth 3, a floor directly above or below one 2 (floor 0
    has only floor 1 as a neighbour, floor 7 only floor 6), any other floor 1.
    With no crime scene found every floor is worth 1.
    """
    scenes = set(crime_scenes)
    points = []
    for floor in range(N_FLOORS):
        if floor in scenes:
            points.append(POINTS_AT_CRIME_SCENE)
        elif floor - 1 in scenes or floor + 1 in scenes:
            points.append(POINTS_NEXT_TO_CRIME_SCENE)
        else:
            points.append(POINTS_ELSEWHERE)
    return tuple(points)


def score(
    players: Sequence[str], sheet: Mapping[str, Sequence[int]], crime_scenes: Iterable[int]
) -> Scores:
    """Score the sheet: culprits have the most suspicion points, winners the fewest.

    Parameters
    ----------
    players
        Colours in seating order (the order of ``culprits`` and ``winners``).
    sheet
        ``{colour: clues on floors 0..7}``.
    crime_scenes
        Floors where victims were found.
    """
    worth = floor_points(crime_scenes)
    suspicion = {p: sum(n * w for n, w in zip(sheet[p], worth, strict=True)) for p in players}
    most = max(suspicion.values())
    fewest = min(suspicion.values())
    return Scores(
        suspicion=suspicion,
        culprits=tuple(p for p in players if suspicion[p] == most),
        winners=tuple(p for p in players if suspicion[p] == fewest),
    )
