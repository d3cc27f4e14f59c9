"""A load cell that reads nothing: its level's cubes are heard landing."""

import numpy as np
import pytest

from dsp.detect.deadcells import DEAD_AFTER, EXPLAIN_S, HeardDrop, SilentCells
from dsp.detect.detector import Detector
from dsp.detect.events import Landing
from dsp.detect.loadhistory import LoadHistory
from dsp.detect.synthetic import SyntheticTower
from tests.dsp.detect.broken_tower import detect_in_blocks, tower_throwing_onto_level_4


def _drop(
    t: float, level: int = 4, *, loud: bool = True, came_down: bool = True
) -> HeardDrop:
    return HeardDrop(t_first_s=t, t_last_s=t + 0.2, level=level, t_rest_s=t + 0.2,
                     confidence=0.9, cube_loud=loud, came_down=came_down)


def _judged(
    cells: SilentCells, drop: HeardDrop, *, still: bool = True, followed: bool = False
) -> list[float]:
    cells.add_drop(drop)
    assert cells.next_due() == pytest.approx(drop.t_last_s + EXPLAIN_S)
    (due,) = cells.take_due(drop.due_s)
    if cells.explained(due):
        return []
    return [d.t_rest_s for d in cells.judge(due, cell_still=still, followed=followed)]


def test_cubes_heard_on_a_plate_whose_cell_never_moves_are_its_landings() -> None:
    cells = SilentCells(8)
    assert DEAD_AFTER == 2
    assert _judged(cells, _drop(10.0)) == []
    # The second such drop: the cell is dead, and both drops were landings.
    assert _judged(cells, _drop(14.0)) == [10.2, 14.2]
    assert cells.dead == {4}
    assert _judged(cells, _drop(18.0)) == [18.2]
    # A lone click or a faint tap is no cube, dead cell or not.
    assert _judged(cells, _drop(22.0, loud=False)) == []
    # The cable seated again: a step on the level, and its cell reads.
    cells.note_step(4)
    assert cells.dead == set()
    assert _judged(cells, _drop(26.0)) == []
    assert _judged(cells, _drop(30.0)) == []


def test_knocks_heard_only_on_the_ground_floor_are_no_sign_of_a_dead_cell() -> None:
    """A knuckle rap on the table rings the ground floor's disc loudest,
    standing out as a cube's strike would, but nothing was heard coming
    down the tower first (model Z: its ground-floor cells taken for dead,
    and every rap after reported a landing there). Cubes enter at the top:
    one heard only on the top plate came down all the same."""
    cells = SilentCells(8)
    assert _judged(cells, _drop(10.0, 0, came_down=False)) == []
    assert _judged(cells, _drop(14.0, 0, came_down=False)) == []
    assert cells.dead == set()
    assert _judged(cells, _drop(18.0, 0)) == []
    assert _judged(cells, _drop(22.0, 0)) == [18.2, 22.2]
    top = SilentCells(8)
    assert _judged(top, _drop(10.0, 7, came_down=False)) == []
    assert _judged(top, _drop(14.0, 7, came_down=False)) == [10.2, 14.2]


def test_a_drop_is_no_sign_of_a_dead_cell_when_the_load_cells_showed_its_landing() -> None:
    cells = SilentCells(8)
    # The ear said level 4, the cell of level 5 weighed the cube.
    cells.note_landing(5, 10.15, 10.4)
    assert _judged(cells, _drop(10.0)) == []
    # Two levels away, or a throw before in a quick series: another cube's.
    cells.note_landing(2, 14.15, 14.4)
    cells.note_landing(3, 17.6, 17.8)
    assert _judged(cells, _drop(14.0)) == []
    assert _judged(cells, _drop(18.0)) == [14.2, 18.2]


def test_a_cell_that_moved_or_ever_read_a_step_is_not_taken_for_dead() -> None:
    cells = SilentCells(8)
    # The plate swung as the cube struck it: the cell works (the cube went on).
    assert _judged(cells, _drop(10.0), still=False) == []
    assert _judged(cells, _drop(14.0), still=False) == []
    assert cells.dead == set()
    # A cell that read a cube once: cubes sliding on, hands' thuds.
    cells.note_step(4)
    assert _judged(cells, _drop(18.0)) == []
    assert _judged(cells, _drop(22.0)) == []
    assert cells.dead == set()


def test_a_drop_followed_at_once_by_the_next_is_no_sign_of_a_dead_cell() -> None:
    # Fingers resting on the roof rustle on the top disc until they let the
    # cube go, and it strikes a third of a second later: the rustle is no
    # cube, however cube-like it sounded.
    cells = SilentCells(8)
    assert _judged(cells, _drop(10.0, level=7), followed=True) == []
    assert _judged(cells, _drop(14.0, level=7), followed=True) == []
    assert cells.dead == set()
    # Alone, twice: the cell is dead; and then a drop followed at once (the
    # next throw of a quick series) is reported there all the same.
    assert _judged(cells, _drop(18.0, level=7)) == []
    assert _judged(cells, _drop(22.0, level=7)) == [18.2, 22.2]
    assert _judged(cells, _drop(26.0, level=7), followed=True) == [26.2]


def test_rustles_on_the_roof_before_each_throw_do_not_make_the_top_cell_dead() -> None:
    # Every cube is let go from fingers resting on the roof, rustling on
    # disc 7 until 0.35 s before the cube strikes; none lands on level 7,
    # whose cell works. No landing is heard there.
    tower = SyntheticTower(duration_s=30.0, seed=7)
    rng = np.random.default_rng(7)
    t = 2.5
    while t < 26.0:
        for k, lead in enumerate((0.5, 0.45, 0.4)):
            tower._click(t - lead, 7, 250.0 * 0.8**k)
        tower.throw(t, int(rng.choice([2, 4, 6])))
        t += float(rng.uniform(1.5, 2.5))
    _, events = detect_in_blocks(tower, tower.piezo_codes(), tower.load_counts(),
                                 [float(s) for s in range(1, 31)])
    landings = sorted((e.t, e.floor) for e in events if isinstance(e, Landing))
    assert [floor for _, floor in landings] == [x.level for x in tower.landings]


def test_load_history_reads_a_channels_noise_from_its_differences() -> None:
    history = LoadHistory(keep_s=5.0)
    t = np.arange(0, 3.0, 1 / 80)
    rng = np.random.default_rng(1)
    values = np.stack([rng.normal(0.0, 50.0, t.size), np.full(t.size, 1234.0)], axis=1)
    values[t >= 1.5, 0] += 5000.0  # a step moves a difference-based spread little
    history.add(t, values, np.ones((t.size, 2), bool))
    assert history.noise(0, 0.5, 2.5) == pytest.approx(50.0, rel=0.3)
    assert history.noise(1, 0.5, 2.5) == 0.0
    assert np.isnan(history.noise(0, 5.0, 6.0))


def _detect_with_cell(
    tower: SyntheticTower, cell: np.ndarray, cuts: list[float], *, unplugged: bool = False
) -> list:
    load = tower.load_counts().copy()
    load[:, 4] = cell
    det, events = _detect_with(tower, load, cuts, unplugged=unplugged)
    return events


def _detect_with(
    tower: SyntheticTower, load: np.ndarray, cuts: list[float], *, unplugged: bool = False
) -> tuple[Detector, list]:
    valid = tower.load_valid.copy()
    if unplugged:
        valid[:, 4] = False
    saved = tower.load_valid
    tower.load_valid = valid
    try:
        return detect_in_blocks(tower, tower.piezo_codes(), load, cuts)
    finally:
        tower.load_valid = saved


@pytest.mark.parametrize("broken", ["constant", "floating", "unplugged"])
def test_a_level_whose_cell_reads_nothing_still_gets_its_landings_by_ear(broken: str) -> None:
    tower = tower_throwing_onto_level_4()
    n = tower.load_counts().shape[0]
    cell = (np.random.default_rng(2).integers(-800000, 800000, n) if broken == "floating"
            else np.full(n, 0 if broken == "unplugged" else 81234))
    unplugged = broken == "unplugged"
    events = _detect_with_cell(tower, cell, [float(s) for s in range(1, 31)],
                               unplugged=unplugged)
    # A cell that never reported is absent, not a lifted module.
    assert not [e for e in events if not isinstance(e, Landing)]
    landings = sorted((e.t, e.floor, e.source) for e in events if isinstance(e, Landing))
    assert [floor for _, floor, _ in landings] == [x.level for x in tower.landings]
    assert {source for _, floor, source in landings if floor == 4} == {"acoustic"}
    for (t, _, _), truth in zip(landings, tower.landings, strict=True):
        assert abs(t - truth.t_rest_s) < 0.2
    # Blocks of other sizes: the same events.
    cuts = sorted(np.random.default_rng(3).uniform(0.0, 31.0, 70).tolist())
    assert _detect_with_cell(tower, cell, cuts, unplugged=unplugged) == events


@pytest.mark.parametrize("broken", ["constant", "unplugged"])
def test_a_cell_that_read_nothing_through_the_tare_is_dead_from_its_first_cube(
    broken: str,
) -> None:
    # A cell that sent no reading, or one value exactly, all through the
    # first second cannot weigh: the first cube heard on its level is a
    # landing when it is heard, without waiting for a second one.
    tower = tower_throwing_onto_level_4()
    load = tower.load_counts().copy()
    load[:, 4] = 0 if broken == "unplugged" else 81234
    det, events = _detect_with(tower, load, [float(s) for s in range(1, 31)],
                               unplugged=broken == "unplugged")
    first = next(x for x in tower.landings if x.level == 4)
    heard = [e for e in events if isinstance(e, Landing) and e.floor == 4]
    assert abs(heard[0].t - first.t_rest_s) < 0.2
    assert heard[0].t_decided - first.t_rest_s < 2.0
    assert det.fusion.silent_cells.dead == {4}
