"""Which lines cross which module boundary, and on which board each level's sensors sit.

Boards are numbered like modules (0..7) with :data:`BASE` for the base board.
Level 0's sensors are on the base; level L >= 1 has its plate on the roof of
module L-1, so its sensors are there. Boundary j lies under module j; the
sensors above it (levels j+1..7) need their lines carried across it.
"""

from __future__ import annotations

from hardware.pinout import N_LEVELS

# Board index of the base board; module m (0..7) has index m.
BASE = -1
# Contacts every boundary carries, in pin order, before the per-level lines.
SHARED_CONTACTS = ("+5V", "GND", "VMID", "HX_SCK", "HX_CLK")


def board_of_level(level: int) -> int:
    """The board carrying level's plate and sensors: the base for 0, module level-1 above."""
    return BASE if level == 0 else level - 1


def on_board(board: int, name: str) -> str:
    """The name of net ``name`` on ``board``: plain on the base, ``M3_DOUT5`` on module 3."""
    return name if board == BASE else f"M{board}_{name}"


def contact_signals(boundary: int) -> list[str]:
    """Net names carried by the spring contacts of ``boundary``, in pin order.

    Boundary j sits under module j; the modules from j up carry the sensors
    of levels j+1..7.
    """
    if not 0 <= boundary < N_LEVELS - 1:
        raise ValueError(f"boundary {boundary} out of range 0..{N_LEVELS - 2}")
    signals = list(SHARED_CONTACTS)
    for level in range(boundary + 1, N_LEVELS):
        signals += [f"DOUT{level}", f"PIEZO{level}"]
    return signals
