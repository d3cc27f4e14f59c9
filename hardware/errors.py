"""The hardware tools' exception family."""

from hostapp.errors import TowerearError


class HardwareError(TowerearError):
    """A hardware source file (pinout, BOM) is invalid or a design tool failed."""
