"""A tower bumped on the table: every cell's zero shifts at once, and no cube moved."""

import numpy as np

from dsp.detect.events import Landing
from dsp.detect.synthetic import SyntheticTower
from tests.dsp.detect.broken_tower import detect_in_blocks


def _bumped_tower(shift_cubes: dict[int, float], t_bump: float = 14.0) -> SyntheticTower:
    """Throws onto levels 6 and 7, a bump at ``t_bump``, throws onto 2 and 4 after it."""
    tower = SyntheticTower(duration_s=24.0, seed=7)
    for t, level in ((2.5, 7), (5.0, 6), (7.5, 7), (10.0, 6)):
        tower.throw(t, level)
    # The thump comes in at the base, loudest there; the tower scrapes on the
    # table, heard alike on every disc.
    tower._click(t_bump, 0, 900.0)
    rng = np.random.default_rng(3)
    scrape = slice(int((t_bump + 0.02) * 2000), int((t_bump + 0.15) * 2000))
    tower.piezo[scrape] += rng.normal(0.0, 12.0, (scrape.stop - scrape.start, 1))
    after = tower.load_t_s >= t_bump + 0.03
    x = tower.load_t_s[after] - (t_bump + 0.03)
    for k in range(8):
        shift = shift_cubes.get(k, 0.01) * tower.cube_counts * tower.gain[k]
        ring = 0.6 * np.exp(-x / 0.15) * np.cos(2 * np.pi * rng.uniform(9.0, 14.0) * x)
        tower.load[after, k] += shift + 0.15 * tower.cube_counts * ring
    for t, level in ((18.0, 2), (21.0, 4)):
        tower.throw(t, level)
    return tower


def test_a_bump_that_shifts_the_empty_plates_by_a_cube_is_no_landing() -> None:
    # Plates 1, 3 and 5 have never held a cube (no size known) and their
    # zeros move by about a cube with the bump; 6 and 7 by a tenth of one.
    tower = _bumped_tower({1: 1.0, 3: 0.9, 5: 1.1})
    for cuts in ([float(s) for s in range(1, 24)],
                 sorted(np.random.default_rng(4).uniform(0.0, 24.0, 40).tolist())):
        _, events = detect_in_blocks(tower, tower.piezo_codes(), tower.load_counts(), cuts)
        landings = sorted((round(e.t, 1), e.floor) for e in events if isinstance(e, Landing))
        truth = sorted((x.t_rest_s, x.level) for x in tower.landings)
        assert [floor for _, floor in landings] == [level for _, level in truth]
        assert all(abs(t - tt) < 0.2 for (t, _), (tt, _) in zip(landings, truth, strict=True))
