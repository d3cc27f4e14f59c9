"""Who places when after a trick, and what an investigation scores."""

from __future__ import annotations

from collections.abc import Mapping

from hostapp.games.crimehotel.rules import CrimeHotelRules
from hostapp.games.crimehotel.state import Investigation, InvestigationScore, Placement


def placement_order(order: tuple[str, ...], cards: Mapping[str, int]) -> list[Placement]:
    """Who places when after a trick, and whether they guess or get help.

    "Wer die höchste Karte gespielt hat, nimmt sich das Polizeiauto [...] Als
    nächstes folgt der Spieler mit der niedrigsten Karte [...] Alle weiteren
    Spieler folgen in ihrer Stichposition." Cards rank by number across floors.
    """
    highest = max(order, key=lambda p: cards[p])
    lowest = min(order, key=lambda p: cards[p])
    result = [
        Placement(highest, cards[highest], "guess", "highest"),
        Placement(lowest, cards[lowest], "guess", "lowest"),
    ]
    result += [
        Placement(p, cards[p], "help", "middle") for p in order if p not in (highest, lowest)
    ]
    return result


def score_investigation(
    inv: Investigation, players: tuple[str, ...], rules: CrimeHotelRules, murderer_room: int
) -> dict[str, InvestigationScore]:
    """Score every player's final guesses and bonus spaces for one investigation."""
    scores: dict[str, InvestigationScore] = {}
    for player in players:
        guesses = tuple(
            (d.space.code, d.space.points(murderer_room))
            for d in inv.detectives
            if d.player == player
        )
        guessed = sum(points for _, points in guesses)
        bonus_spaces = sum(1 for h in inv.helps if h.player == player and h.kind == "bonus")
        # "Es gibt Sonderpunkte bei mindestens einem korrekten Tipp."
        bonus = bonus_spaces * rules.bonus_points if guessed > 0 else 0
        scores[player] = InvestigationScore(guesses, bonus, guessed + bonus)
    return scores
