"""The tower's open level, kept from connection changes and top lifts."""

from __future__ import annotations

import pytest

from dsp.detect.events import Closed, Lift
from dsp.detect.loadcell import LoadConnection
from dsp.detect.openings import TowerOpenings


def _off(level: int, t: float) -> LoadConnection:
    return LoadConnection(level=level, connected=False, t_s=t, t_decided_s=t + 0.05)


def _on(level: int, t: float) -> LoadConnection:
    return LoadConnection(level=level, connected=True, t_s=t, t_decided_s=t + 0.05)


def test_modules_lifted_together_are_one_lift_exposing_the_level_below_them() -> None:
    openings = TowerOpenings(n_levels=8, lift_gather_s=0.15)
    for level, t in ((7, 10.00), (5, 10.02), (6, 10.01)):
        assert openings.connection(_off(level, t)) == []
    # The lift is decided once the modules above have come off with the first.
    assert openings.lift_deadline == pytest.approx(10.2)
    assert openings.open and openings.exposed_level is None
    lift = openings.gathered_lift(10.2)
    assert lift == [Lift(t=10.0, t_decided=10.2, exposed=4)]
    assert openings.exposed_level == 4 and openings.lift_deadline is None
    # Set back one by one: closed when the last channel reports again.
    assert openings.connection(_on(5, 20.0)) == []
    assert openings.connection(_on(6, 20.01)) == []
    assert openings.connection(_on(7, 20.02)) == [Closed(t=20.02, t_decided=20.07)]
    assert not openings.open and openings.exposed_level is None
    assert openings.opening_of(4, 15.0, 15.5) == (10.0, 20.02)
    assert openings.opening_of(4, 21.0, 22.0) is None
    assert openings.opening_of(3, 15.0, 15.5) is None
    assert openings.exposed_at(19.9) == 4 and openings.exposed_at(20.5) is None


def test_a_channel_flickering_off_and_on_within_the_gather_opens_nothing() -> None:
    openings = TowerOpenings(n_levels=8, lift_gather_s=0.15)
    openings.connection(_off(3, 5.0))
    assert openings.connection(_on(3, 5.05)) == []
    assert openings.lift_deadline is None and not openings.open
    assert openings.gathered_lift(5.2) == []
    assert openings.exposed_at(5.02) is None
    # Handled all the same: the plates it shook bring no cubes.
    assert openings.handled_within(4.5, 5.5) and not openings.handled_within(6.0, 7.0)
    assert openings.last_handled_t == pytest.approx(5.1)


def test_the_top_module_lifted_and_set_back_by_hand() -> None:
    openings = TowerOpenings(n_levels=8, lift_gather_s=0.15)
    assert openings.lift_top(30.0, 33.0) == [Lift(t=30.0, t_decided=33.0, exposed=7)]
    assert openings.open and openings.exposed_level == 7 and openings.top_off
    assert openings.last_handled_t == 33.0 and openings.handled_within(29.5, 30.5)
    # A cube heard falling past it shows it back on: no handling then.
    assert openings.close_top(40.0, 40.1, handling=False) == [Closed(t=40.0, t_decided=40.1)]
    assert not openings.open and not openings.handled_within(39.0, 41.0)
    assert openings.last is not None and (openings.last.lifted_s, openings.last.closed_s) == (
        30.0, 40.0
    )
    assert openings.exposed_at(35.0) == 7


def test_modules_lifted_while_the_top_one_is_off_close_the_top_opening() -> None:
    openings = TowerOpenings(n_levels=8, lift_gather_s=0.15)
    openings.lift_top(30.0, 31.0)
    openings.connection(_off(6, 32.0))
    assert not openings.top_off
    assert openings.opening_of(7, 30.0, 31.0) == (30.0, 32.0)
    assert openings.gathered_lift(32.2) == [Lift(t=32.0, t_decided=32.2, exposed=5)]
    assert openings.exposed_at(32.5) == 5


def test_every_channel_silent_at_once_is_the_device_not_a_lift() -> None:
    # The ground floor's cell is in the base, which never leaves the tower:
    # all eight silent together is a reboot (its converters powering up).
    openings = TowerOpenings(n_levels=8, lift_gather_s=0.15)
    for level in range(8):
        assert openings.connection(_off(level, 30.0 + 0.001 * level)) == []
    assert openings.gathered_lift(30.2) == []
    assert openings.exposed_level is None
    for level in range(8):
        assert openings.connection(_on(level, 30.4)) == []
    assert not openings.open and openings.last is None


def test_a_close_is_timed_by_the_set_down_heard_before_the_channels_came_back() -> None:
    """The converters of modules set back settle a few readings before their
    channels report again: the close is when the set-down was heard, and
    the channels' returns since are no hands handling the tower."""
    openings = TowerOpenings(n_levels=8, lift_gather_s=0.15)
    openings.connection(_off(6, 10.0))
    openings.connection(_off(7, 10.0))
    openings.gathered_lift(10.2)
    assert openings.connection(_on(6, 20.5), set_down_s=19.9) == []
    assert openings.connection(_on(7, 20.6), set_down_s=19.9) == [
        Closed(t=19.9, t_decided=pytest.approx(20.65))
    ]
    assert openings.opening_of(5, 15.0, 15.5) == (10.0, 19.9)
    assert openings.last_handled_within(19.0, 21.0) == 19.9
    # A set-down heard after the channel came back times nothing.
    openings.connection(_off(7, 30.0))
    openings.gathered_lift(30.2)
    assert openings.connection(_on(7, 40.0), set_down_s=40.3) == [
        Closed(t=40.0, t_decided=pytest.approx(40.05))
    ]


def test_the_players_reach_is_learnt_from_the_lifts_the_channels_showed() -> None:
    openings = TowerOpenings(n_levels=8, lift_gather_s=0.15)
    assert openings.reach_s(2.0) == 2.0  # nothing known yet: the default

    def lift_and_take(level: int, t_lift: float, taken: tuple[float, ...]) -> None:
        for k in range(level + 1, 8):
            openings.connection(_off(k, t_lift))
        openings.gathered_lift(t_lift + 0.2)
        for t in taken:
            openings.note_taken(level, t)
        for k in range(level + 1, 8):
            openings.connection(_on(k, t_lift + 8.0))

    # Level 3 opened at 10 s, its first cube out 3.5 s later (then another).
    lift_and_take(3, 10.0, (14.0, 13.5))
    assert openings.reach_s(2.0) == 2.0  # one lift is not enough
    # A cube taken off another level, or after the close, says nothing.
    lift_and_take(5, 30.0, (33.0,))
    openings.note_taken(4, 31.0)
    openings.note_taken(5, 40.0)
    assert openings.reach_s(2.0) == pytest.approx(3.25)
    # A top lift (no channel shows it) is timed from its removal: not counted.
    openings.lift_top(50.0, 52.0)
    openings.note_taken(7, 50.5)
    assert openings.reach_s(2.0) == pytest.approx(3.25)
    # A hand that lingered for ever is kept within bounds.
    lift_and_take(2, 60.0, (80.0,))
    lift_and_take(1, 90.0, (110.0,))
    assert openings.reach_s(2.0) == 6.0


def test_a_channel_silent_under_one_still_reporting_is_no_lift() -> None:
    """Lifted modules take every channel above the open level with them: a
    channel silent while one above it reports stopped answering (its
    converter), and its silence and return are no handling."""
    openings = TowerOpenings(n_levels=8, lift_gather_s=0.15)
    assert openings.connection(_off(3, 5.0)) == []
    assert openings.gathered_lift(5.2, reporting=frozenset({0, 1, 2, 4, 5, 6, 7})) == []
    assert openings.dropped_out == {3} and not openings.open
    assert not openings.handled_within(4.5, 5.5) and openings.last_handled_t == -float("inf")
    assert openings.connection(_on(3, 6.0)) == []
    assert not openings.dropped_out and not openings.handled_within(5.5, 6.5)
    # Silent with the channels above it: the modules over plate 2 came off.
    for level in (3, 4, 5, 6, 7):
        openings.connection(_off(level, 8.0))
    assert openings.gathered_lift(8.2, reporting=frozenset({0, 1, 2})) == [
        Lift(t=8.0, t_decided=8.2, exposed=2)
    ]


def test_a_channel_that_dropped_out_times_a_lift_only_when_it_alone_is_lifted() -> None:
    """Channel 6 dropped out at 5 s; at 9 s channel 3 goes silent while 4
    and 5 still report, and channel 7 has gone quiet unannounced: only 6 is
    over every channel reporting, and its own silence is all that times it."""
    openings = TowerOpenings(n_levels=8, lift_gather_s=0.15)
    openings.connection(_off(6, 5.0))
    assert openings.gathered_lift(5.2, reporting=frozenset({0, 1, 2, 3, 4, 5, 7})) == []
    openings.connection(_off(3, 9.0))
    assert openings.gathered_lift(9.2, reporting=frozenset({0, 1, 2, 4, 5})) == [
        Lift(t=5.0, t_decided=9.2, exposed=5)
    ]
    assert openings.dropped_out == {3}
