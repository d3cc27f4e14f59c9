"""Reference masses a builder has at hand: coins with their official masses.

The masses are the issuing authorities' nominal values (European Central Bank,
US Mint, Royal Mint, Swissmint). A circulating coin is worn and dirty, so its
real mass scatters around the nominal one; the relative tolerance below is what
the calibration carries as the reference's uncertainty (about 1 %, the order of
the mints' legal tolerances plus wear).
"""

from __future__ import annotations

from dataclasses import dataclass

from hostapp.i18n import tr


@dataclass(frozen=True)
class ReferenceMass:
    """A known mass to calibrate a load cell with."""

    key: str
    label: str
    grams: float
    relative_uncertainty: float

    @property
    def uncertainty_g(self) -> float:
        """Standard uncertainty of the mass in grams."""
        return self.grams * self.relative_uncertainty


# Why 0.01: mints allow roughly +-1.5 % to +-3 % for the heavier coins as an
# extreme tolerance; one standard uncertainty of about 1 % covers wear.
_COIN_UNCERTAINTY = 0.01

COINS: tuple[ReferenceMass, ...] = (
    ReferenceMass("eur-2", "2 euro", 8.50, _COIN_UNCERTAINTY),
    ReferenceMass("eur-1", "1 euro", 7.50, _COIN_UNCERTAINTY),
    ReferenceMass("eur-0.50", "50 euro cent", 7.80, _COIN_UNCERTAINTY),
    ReferenceMass("eur-0.20", "20 euro cent", 5.74, _COIN_UNCERTAINTY),
    ReferenceMass("eur-0.10", "10 euro cent", 4.10, _COIN_UNCERTAINTY),
    ReferenceMass("usd-0.25", "US quarter", 5.670, _COIN_UNCERTAINTY),
    ReferenceMass("usd-0.05", "US nickel", 5.000, _COIN_UNCERTAINTY),
    ReferenceMass("usd-0.01", "US cent", 2.500, _COIN_UNCERTAINTY),
    ReferenceMass("gbp-1", "1 pound (12-sided)", 8.75, _COIN_UNCERTAINTY),
    ReferenceMass("gbp-2", "2 pounds", 12.00, _COIN_UNCERTAINTY),
    ReferenceMass("chf-1", "1 Swiss franc", 4.40, _COIN_UNCERTAINTY),
    ReferenceMass("chf-5", "5 Swiss francs", 13.20, _COIN_UNCERTAINTY),
)

# A mass typed by the user is taken as weighed on a kitchen scale to 0.01 g.
TYPED_MASS_UNCERTAINTY_G = 0.01


def coin(key: str) -> ReferenceMass:
    """Look up a coin by key (``"eur-1"``); raise ``KeyError`` listing the known keys."""
    for item in COINS:
        if item.key == key:
            return item
    known = ", ".join(c.key for c in COINS)
    raise KeyError(f"unknown coin {key!r}; known coins: {known}")


def typed_mass(grams: float) -> ReferenceMass:
    """A reference mass the user typed in grams."""
    if not 0.5 <= grams <= 90.0:
        raise ValueError(
            tr(
                "a reference mass of {grams} g is outside 0.5-90 g (the cell holds ~100 g)",
                grams=grams,
            )
        )
    return ReferenceMass("typed", f"{grams:g} g", grams, TYPED_MASS_UNCERTAINTY_G / grams)
