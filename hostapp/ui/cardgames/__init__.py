"""The card-game pages: Crime Hotel and the animal mugshot game, self-contained."""

from hostapp.ui.cardgames.crimehotel_page import CrimeHotelPage
from hostapp.ui.cardgames.mugshots_page import MugshotsPage

__all__ = ["CrimeHotelPage", "MugshotsPage"]
