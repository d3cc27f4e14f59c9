"""The silence that ends an acoustic drop, learnt from drops that went on."""

from dsp.detect.dropgap import LONG_GAP_S, DropGap


def test_a_drop_that_went_on_below_the_level_decided_makes_drops_wait_longer() -> None:
    gap = DropGap(0.22)
    assert gap.seconds == 0.22
    gap.decided(1.00, level=6)
    gap.began(1.40, level=2)  # the cube rolled off plate 6 and struck plate 2
    assert gap.splits == 1 and gap.seconds == LONG_GAP_S


def test_new_throws_are_no_split() -> None:
    gap = DropGap(0.22)
    # The next throw enters from the top, or comes seconds later, or (in a
    # quick series) is first heard on the plate the last cube rested on.
    for t_next, level in ((1.40, 7), (3.0, 2), (1.40, 6)):
        gap.decided(1.00, level=6)
        gap.began(t_next, level)
    # A drop with nothing decided before it.
    DropGap(0.22).began(0.5, 0)
    assert gap.splits == 0 and gap.seconds == 0.22


def test_a_drop_whose_last_plate_was_struck_once_waits_the_long_silence() -> None:
    gap = DropGap(0.22)
    # Bounced on plate 5: at rest after the short silence.
    assert gap.silence_after([5, 5]) == 0.22
    # Struck plate 5 once, or struck only once at all: it may go on.
    assert gap.silence_after([7, 5]) == LONG_GAP_S
    assert gap.silence_after([7]) == LONG_GAP_S
    assert not gap.ends_drop(0.30, 2, [7, 5])
    assert gap.ends_drop(0.30, 2, [5, 5])


def test_a_strike_above_the_last_plate_after_the_short_silence_is_the_next_throw() -> None:
    gap = DropGap(0.22)
    gap.decided(1.00, level=6)
    gap.began(1.30, level=3)
    assert gap.seconds == LONG_GAP_S
    # The tower waits 0.4 s, but plate 7 struck 0.3 s after the last
    # strike on plate 3 is a cube entering from the top.
    assert gap.ends_drop(0.30, 7, [3, 3])
    # On plate 3 or below it is the same cube going on.
    assert not gap.ends_drop(0.30, 3, [3, 3])
    assert not gap.ends_drop(0.30, 2, [3, 3])
    # Within the short silence even a strike above belongs to the drop
    # (a bounce up against the plate above, heard loudest there).
    assert not gap.ends_drop(0.15, 4, [3, 3])


def test_a_strike_on_a_top_plate_three_or_more_above_the_last_is_the_next_throw_at_once() -> None:
    gap = DropGap(0.22, top_level=7)
    # A cube bouncing on plate 3 reaches plate 4 at most; plate 7 struck
    # 0.1 s after its last strike is a cube entering from the top.
    assert gap.ends_drop(0.10, 7, [3, 3])
    assert gap.ends_drop(0.10, 6, [2, 3])
    # Sooner than that it may be the same strike heard late on another disc.
    assert not gap.ends_drop(0.05, 7, [3, 3])
    # Two plates up, or three up but not on a top plate: not so sure.
    assert not gap.ends_drop(0.10, 6, [4, 4])
    assert not gap.ends_drop(0.10, 5, [2, 2])
    # The top plates are the tower's own: a tower of six levels.
    assert DropGap(0.22, top_level=5).ends_drop(0.10, 5, [2, 2])
