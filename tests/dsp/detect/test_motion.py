"""When a plate starts and stops making sound: busy/quiet changes of the piezo envelope."""

import numpy as np

from dsp.detect.motion import MotionChange, PlateMotion


def _scraped(frames: int = 400) -> tuple[np.ndarray, np.ndarray]:
    """Channel 3 struck at frame 100, ringing down, then scraped until frame 180."""
    rng = np.random.default_rng(5)
    env = rng.uniform(0.8, 1.6, (frames, 8))
    env[100:110, 3] += 60.0 * np.exp(-np.arange(10) / 3.0)
    env[110:180, 3] += 4.0  # a cube sliding: a few codes of scrape
    return env, np.ones((frames, 8))


def test_a_plate_is_busy_from_its_strike_until_the_scrape_ends() -> None:
    env, floor = _scraped()
    changes = PlateMotion(n_channels=8).process(env, floor)
    # Quiet once the 20-ms average has left the scrape's last frames (179)
    # behind far enough: two of five still hold it over 2.5 times the floor.
    assert changes == [MotionChange(100, 3, True), MotionChange(183, 3, False)]


def test_the_changes_do_not_depend_on_the_blocks() -> None:
    env, floor = _scraped()
    whole = PlateMotion(n_channels=8).process(env, floor)
    motion = PlateMotion(n_channels=8)
    parts = []
    for rows in np.split(np.arange(env.shape[0]), [1, 2, 101, 103, 179, 182, 399]):
        parts += motion.process(env[rows], floor[rows])
    assert parts == whole and motion.frames_done == env.shape[0]


def test_nothing_is_busy_before_the_floor_is_known() -> None:
    env, floor = _scraped()
    assert PlateMotion(n_channels=8).process(env, np.full_like(floor, np.nan)) == []
