"""Every refusal of the simulated tower a user can meet reads in German.

dsp.sim raises English sentences (it cannot import hostapp); the UI turns
them into German with :func:`hostapp.i18n.tr_sentence`. This runs the real
simulator into each refusal, so a reworded message in dsp.sim that no
catalog template matches any more fails here instead of reaching a German
user in English.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from dsp.sim import SimulatorError, TowerSimulator, draw_tower
from hostapp import i18n


def _open_at_3(sim: TowerSimulator) -> None:
    sim.lift(3)
    sim.advance(2.0)


REFUSALS: dict[str, Callable[[TowerSimulator], object]] = {
    "lift twice": lambda sim: (_open_at_3(sim), sim.lift(3)),
    "close a closed tower": lambda sim: sim.close(),
    "throw into an open tower": lambda sim: (_open_at_3(sim), sim.throw("blue")),
    "take cubes out of a closed tower": lambda sim: sim.remove_cubes(2),
    "take more cubes than lie there": lambda sim: (
        _open_at_3(sim), sim.remove_cubes(3, count=5)),
    "a level that does not exist": lambda sim: sim.lift(9),
    "a mass on a closed tower": lambda sim: sim.place_mass(2, 20.0),
    "a mass off a level without one": lambda sim: (_open_at_3(sim), sim.remove_mass(3)),
    "an action in the past": lambda sim: (sim.advance(1.0), sim.knock(1.0, at_s=0.5)),
}


@pytest.mark.parametrize("name", list(REFUSALS))
def test_each_refusal_has_a_german_sentence(name: str, german: None) -> None:
    sim = TowerSimulator(draw_tower(3), seed=2)
    with pytest.raises(SimulatorError) as refused:
        REFUSALS[name](sim)
    english = str(refused.value)
    translated = i18n.tr_sentence(english)
    assert translated != english, f"no German for {english!r}"
    assert not any(word in translated.split() for word in ("the", "cannot", "level", "tower"))
