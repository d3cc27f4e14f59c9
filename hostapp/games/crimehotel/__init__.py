"""Crime Hotel (Happy Baobab, 2018): a scoring aid for the table, no Qt."""

from hostapp.games.crimehotel.engine import CrimeHotelGame
from hostapp.games.crimehotel.hotel import ALL_SPACES, ROOMS, CrimeHotelError, Space
from hostapp.games.crimehotel.rules import HELP_KINDS, CrimeHotelRules
from hostapp.games.crimehotel.scoring import placement_order

__all__ = [
    "ALL_SPACES",
    "HELP_KINDS",
    "ROOMS",
    "CrimeHotelError",
    "CrimeHotelGame",
    "CrimeHotelRules",
    "Space",
    "placement_order",
]
