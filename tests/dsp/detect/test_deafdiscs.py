"""A contact microphone that hears nothing of its own plate's landings."""

from dsp.detect.deafdiscs import DEAF_AFTER, DeafDiscs
from dsp.detect.events import Landing
from tests.dsp.detect.broken_tower import detect_in_blocks, tower_throwing_onto_level_4


def test_landings_heard_only_on_other_discs_make_a_disc_deaf() -> None:
    discs = DeafDiscs(8)
    for _ in range(DEAF_AFTER - 1):
        discs.note_landing(4, [3, 5])
    assert discs.deaf == set()
    discs.note_landing(4, [3, 5])
    assert discs.deaf == {4}
    # Any onset on it: it hears.
    discs.note_impact([4, 5])
    assert discs.deaf == set()


def test_a_disc_that_hears_its_neighbours_or_nothing_was_heard_is_not_deaf() -> None:
    discs = DeafDiscs(8)
    for _ in range(DEAF_AFTER + 2):
        discs.note_landing(4, [3, 5])
        discs.note_impact([3, 4])  # a neighbour's landing, heard here too
    assert discs.deaf == set()
    for _ in range(DEAF_AFTER + 2):
        discs.note_landing(2, [])  # nothing heard at all: no piezo stream
    assert discs.deaf == set()
    discs.note_landing(6, [6, 7])
    assert discs.deaf == set()


def test_the_detector_finds_a_disc_that_hears_nothing_and_still_counts_its_landings() -> None:
    tower = tower_throwing_onto_level_4()
    piezo = tower.piezo_codes().copy()
    piezo[:, 4] = piezo[0, 4]  # the disc of level 4 unglued: its channel at the bias
    seconds = [float(s) for s in range(1, 31)]
    det, events = detect_in_blocks(tower, piezo, tower.load_counts(), seconds)
    assert det.fusion.deaf_discs.deaf == {4}
    landings = sorted((e.t, e.floor) for e in events if isinstance(e, Landing))
    assert [floor for _, floor in landings] == [x.level for x in tower.landings]
