"""Edition-dependent settings of Crime Hotel.

The rule text fixes the guess points and the game's shape (three
investigations of five tricks); the police-station help spaces, how many of
each there are and the bonus they pay differ between editions, so they are
settings. See docs/rules-crime-hotel.md for every choice made here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from hostapp.games.crimehotel.hotel import CrimeHotelError
from hostapp.i18n import tr

HELP_KINDS = ("move", "swap", "look", "share", "bonus")
"""Police-station help: move a detective already in the hotel; swap cards blind
with another player; look at another player's hand; share a guess space already
taken; bonus points if at least one of your guesses scores."""

CARDS_PER_PLAYER = 6
INVESTIGATIONS = 3
TRICKS_PER_INVESTIGATION = 5
FACE_UP_CARDS = {3: 8, 4: 2}
"""Cards laid face up on their windows: 27 - 6 per player - 1 murderer card."""

# Two spaces of each help kind let the two middle players of a four-player
# trick both take the same help in most rounds, as on the boards we know of;
# editions differ, so the table sets them.
_DEFAULT_HELP_SPACES = {"move": 2, "swap": 2, "look": 2, "share": 2, "bonus": 2}


@dataclass(frozen=True)
class CrimeHotelRules:
    """Settings that differ between editions.

    Attributes
    ----------
    bonus_points
        Paid per bonus help space taken, only if at least one of that player's
        guesses in the investigation scores.
    help_spaces
        Number of police-station spaces of each kind in :data:`HELP_KINDS`;
        a space taken stays taken until the investigation ends.
    middle_may_guess
        Whether a player placed between highest and lowest may guess instead of
        taking help (off by default: the rule text sends them to the station).
    """

    bonus_points: int = 3
    help_spaces: Mapping[str, int] = field(default_factory=lambda: dict(_DEFAULT_HELP_SPACES))
    middle_may_guess: bool = False

    def __post_init__(self) -> None:
        if (
            isinstance(self.bonus_points, bool)
            or not isinstance(self.bonus_points, int)
            or not (0 <= self.bonus_points <= 99)
        ):
            raise CrimeHotelError(tr("The bonus must be a whole number of points from 0 to 99."))
        unknown = set(self.help_spaces) - set(HELP_KINDS)
        if unknown:
            raise CrimeHotelError(
                tr(
                    "Unknown help space {value!r}; known ones are {value2}.",
                    value=sorted(unknown)[0],
                    value2=", ".join(HELP_KINDS),
                )
            )
        for kind, count in self.help_spaces.items():
            if isinstance(count, bool) or not isinstance(count, int) or not 0 <= count <= 9:
                raise CrimeHotelError(
                    tr("The number of {kind!r} spaces must be from 0 to 9.", kind=kind)
                )

    def spaces_for(self, kind: str) -> int:
        """How many police-station spaces of ``kind`` the board has."""
        return int(self.help_spaces.get(kind, 0))

    def to_dict(self) -> dict[str, Any]:
        """The settings as a JSON-ready dict (round-trips through :meth:`from_dict`)."""
        return {
            "bonus_points": self.bonus_points,
            "help_spaces": {kind: self.spaces_for(kind) for kind in HELP_KINDS},
            "middle_may_guess": self.middle_may_guess,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> CrimeHotelRules:
        """Settings from a dict; missing keys take their defaults."""
        if data is None:
            data = {}
        if not isinstance(data, Mapping):
            raise CrimeHotelError(tr("The Crime Hotel settings must be a set of named values."))
        data = dict(data)
        unknown = set(data) - {"bonus_points", "help_spaces", "middle_may_guess"}
        if unknown:
            raise CrimeHotelError(
                tr("Unknown Crime Hotel setting {value!r}.", value=sorted(unknown)[0])
            )
        help_spaces = data.get("help_spaces", _DEFAULT_HELP_SPACES)
        if not isinstance(help_spaces, Mapping):
            raise CrimeHotelError(tr("help_spaces must map each help kind to a number of spaces."))
        return cls(
            bonus_points=data.get("bonus_points", 3),
            help_spaces=dict(help_spaces),
            middle_may_guess=_yes_or_no(data.get("middle_may_guess", False)),
        )


def _yes_or_no(value: Any) -> bool:
    if not isinstance(value, bool):
        raise CrimeHotelError(tr("middle_may_guess must be true or false."))
    return value
