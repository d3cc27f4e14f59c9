"""Do this tower's discs tell its plates apart? Strikes that came with cubes, counted.

A cube's strike stands out on the disc under the plate it hit
(``trust.cube_like``), and hands or a knock on the table sound alike on
every disc: the fusion takes a plate's change heard only as such flat
strikes for a hand's, and a strike heard alike through the whole tower for
a knock. On a tower whose discs hear every strike alike (discs glued to
the module walls, or a tower that carries sound so well that the
neighbours hear a strike nearly as loud as its own plate), every throw
sounds like that, and every landing would be taken for hands. Such a tower
shows it in its own landings: steps of one cube, alone on their plate or
not, whose drop held no strike standing out on one disc, again and again.
"""

from __future__ import annotations

from collections import deque

# Why 8 of the last 20, most of them flat: a cube's drop holds a strike
# standing out 11 dB or more on one disc in all but a few per cent of the
# landings on models A-I (their single throws: 0-16 % of all strikes flat,
# hands and talk included), while on model J's towers with discs on the
# walls 47-93 % of all strikes were, and none of a drop's.
SEEN = 8
KEPT = 20
FLAT_SHARE = 0.6
# Why four, every one flat: a tower that takes every drop for a knock on
# the table (each heard alike through the tower) drops the landings that
# would show it, and model J's towers with discs on the walls had shown
# only four to seven by the minute (one tower: five single throws lost to
# such "knocks" in two minutes). On towers whose discs tell their plates
# apart a drop lacks a standing-out strike a few times in a hundred, so
# four such in a row, with none that stood out, do not come by chance.
# Models A-AD: 14 landings more right, 2 false more (all model J, towers
# 9-16); every other output the same.
FLAT_AT_ONCE = 4


class FlatDiscs:
    """The tower's one-cube steps, and whether their drops stood out on a disc."""

    def __init__(self) -> None:
        self._flat: deque[bool] = deque(maxlen=KEPT)

    def note(self, *, stood_out: bool) -> None:
        """A step of one cube whose drop had (or had no) strike standing out on one disc."""
        self._flat.append(not stood_out)

    @property
    def flat(self) -> bool:
        """Whether the discs are shown not to tell plates apart (flat strikes say nothing).

        ``SEEN`` steps with ``FLAT_SHARE`` of them flat, or the first
        ``FLAT_AT_ONCE`` all flat.
        """
        if len(self._flat) >= FLAT_AT_ONCE and all(self._flat):
            return True
        return len(self._flat) >= SEEN and sum(self._flat) >= FLAT_SHARE * len(self._flat)
