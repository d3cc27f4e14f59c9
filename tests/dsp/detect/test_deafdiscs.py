"""A contact microphone that hears nothing of its own plate's landings."""

import numpy as np

from dsp.detect.deafdiscs import DEAF_AFTER, DeafDiscs
from dsp.detect.detector import Detector
from dsp.detect.events import Landing
from dsp.detect.synthetic import SyntheticTower


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
    tower = SyntheticTower(duration_s=30.0, seed=4)
    rng = np.random.default_rng(4)
    t = 2.5
    while t < 26.0:
        tower.throw(t, int(rng.choice([4, 4, 2, 6])))
        t += float(rng.uniform(1.2, 2.2))
    piezo = tower.piezo_codes().copy()
    piezo[:, 4] = piezo[0, 4]  # the disc of level 4 unglued: its channel at the bias
    det = Detector(piezo_rate_hz=2000.0, load_rate_hz=80.0)
    events = []
    for second in range(31):
        a, b = second * 2000, (second + 1) * 2000
        events += det.feed_piezo(a / 2000.0, piezo[a:b])
        sel = (tower.load_t_s >= second) & (tower.load_t_s < second + 1)
        load = tower.load_counts()
        events += det.feed_load(tower.load_t_s[sel], load[sel], tower.load_valid[sel])
    events += det.finish()
    assert det.fusion.deaf_discs.deaf == {4}
    landings = sorted((e.t, e.floor) for e in events if isinstance(e, Landing))
    assert [floor for _, floor in landings] == [x.level for x in tower.landings]
