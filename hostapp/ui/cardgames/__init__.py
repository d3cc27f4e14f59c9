"""The card-game pages: Crime Hotel and the animal mugshot game, self-contained."""

from hostapp.ui.cardgames.crimehotel_page import CrimeHotelPage

__all__ = ["CrimeHotelPage"]
