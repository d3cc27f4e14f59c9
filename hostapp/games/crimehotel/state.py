"""What a Crime Hotel investigation holds: placements, detectives, help, scores."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from hostapp.games.crimehotel.hotel import Space

Role = Literal["guess", "help"]


@dataclass(frozen=True)
class Placement:
    """One player's turn to place after a trick: their card, rank and duty."""

    player: str
    card: int
    role: Role
    reason: Literal["highest", "lowest", "middle"]


@dataclass
class Detective:
    """A detective on a guess space; ``space`` changes when moved by help."""

    player: str
    space: Space


@dataclass(frozen=True)
class HelpUse:
    """A detective sent to the police station, with what it did."""

    player: str
    kind: str
    detail: str = ""


@dataclass(frozen=True)
class FollowSuitViolation:
    """A provable breach of "Ab dann muss die gezeigte Etage weiter ausgespielt werden".

    ``player`` did not follow floor ``floor`` earlier in this investigation
    (so had no card of it) and later played ``card`` of that floor with no
    card swap in between.
    """

    player: str
    floor: int
    card: int
    trick: int


@dataclass(frozen=True)
class InvestigationScore:
    """One player's result in one investigation."""

    guesses: tuple[tuple[str, int], ...]
    """Each final guess space code with the points it earned."""
    bonus: int
    total: int


@dataclass
class Investigation:
    """Everything recorded in one investigation (Durchgang)."""

    number: int
    face_up: tuple[int, ...]
    leader: str
    tricks: list[dict[str, int]] = field(default_factory=list)
    placed: dict[int, str] = field(default_factory=dict)
    """Room -> who put the card there (``""`` for the face-up cards)."""
    detectives: list[Detective] = field(default_factory=list)
    helps: list[HelpUse] = field(default_factory=list)
    share_tokens: dict[str, int] = field(default_factory=dict)
    renounced: dict[str, set[int]] = field(default_factory=dict)
    violations: list[FollowSuitViolation] = field(default_factory=list)
    dark_room: int | None = None
    hidden_card: int | None = None
    scores: dict[str, InvestigationScore] | None = None

    def occupants(self, space: Space) -> list[str]:
        """Players with a detective on ``space``."""
        return [d.player for d in self.detectives if d.space == space]

    def help_taken(self, kind: str) -> int:
        """How many police-station spaces of ``kind`` are taken."""
        return sum(1 for use in self.helps if use.kind == kind)
