"""The silence that ends an acoustic drop, learnt from drops that went on."""

from dsp.detect.dropgap import LONG_GAP_S, DropGap


def test_a_drop_that_went_on_below_the_level_decided_makes_drops_wait_longer() -> None:
    gap = DropGap(0.22)
    assert gap.seconds == 0.22
    gap.decided(1.00, level=6)
    gap.began(1.40, level=2)  # the cube rolled off plate 6 and struck plate 2
    assert gap.splits == 1 and gap.seconds == LONG_GAP_S
    # Or it struck plate 6 again after a silent roll.
    again = DropGap(0.22)
    again.decided(1.00, level=6)
    again.began(1.40, level=6)
    assert again.splits == 1


def test_new_throws_are_no_split() -> None:
    gap = DropGap(0.22)
    # The next throw enters from the top, or comes seconds later.
    for t_next, level in ((1.40, 7), (3.0, 2)):
        gap.decided(1.00, level=6)
        gap.began(t_next, level)
    # A drop with nothing decided before it.
    DropGap(0.22).began(0.5, 0)
    assert gap.splits == 0 and gap.seconds == 0.22
