"""A complete game through the widgets against the simulated tower.

Cubes really fall in the simulation; the detection pipeline hears them
through the simulated device's byte stream; the app binds each landing to
the cube it asked for. The test plays the players' hands: it throws the
called cube, lifts the tower at the chosen floor, looks at what lies there
(the simulation's truth, as players see it with their eyes), corrects the
confirmation panel to it, takes the cubes out, closes, and throws back.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from pytestqt.exceptions import TimeoutError
from pytestqt.qtbot import QtBot
from ui_game_driver import click, enter_landing_by_hand, play_panel, set_up_game

from hostapp.games import arosa
from hostapp.ui.app import build_app
from hostapp.ui.arosa.end_panel import ScorePanel
from hostapp.ui.arosa.journal_adapter import JournalGameStore
from hostapp.ui.sim_tower import SimulatedTower
from hostapp.ui.sources_adapter import FrameSourceAdapter, open_live_source
from hostapp.ui.streaming import SourceChoice

# Simulated seconds per wall second: a game of ~100 simulated seconds in a few
# wall seconds, well within what the simulator and the pipeline sustain.
PACE = 10.0
PLAYERS = ["gray", "yellow"]
# The pipeline needs the first seconds of a quiet tower to tare itself.
QUIET_START_S = 4.0
LANDING_WAIT_MS = 8000
# Simulated seconds a hand needs to pick every cube out of a level.
HANDS_S = 2.0
# ... and to pick up a cube after closing the tower (longer than the app's
# settling time after a close, as for a real hand).
PICK_UP_S = 0.8


def _open(choice: SourceChoice) -> FrameSourceAdapter:
    return open_live_source(choice, sim_pace=PACE)


class Hands:
    """What the players do with the physical (simulated) tower."""

    def __init__(self, tower: SimulatedTower) -> None:
        self.tower = tower
        self.held: list[int] = []  # cubes taken out, to be thrown back

    def throw(self, request: arosa.ThrowRequest) -> int:
        if request.source == "hand":
            cube = next(c for c in self.held if self.tower.colour_of(c) == request.color)
            self.held.remove(cube)
            self.tower.throw_back(cube)
            return cube
        return self.tower.throw(request.color)

    def pause(self, qtbot: QtBot, seconds: float) -> None:
        """Let ``seconds`` of simulated time pass (what a hand needs)."""
        until = self.tower.time_s + seconds
        qtbot.waitUntil(lambda: self.tower.time_s > until, timeout=LANDING_WAIT_MS)

    def resting_level(self, cube: int) -> int:
        """Where a cube lies now."""
        contents = self.tower.act(lambda sim: sim.contents)
        return next(f for f in range(8) if cube in contents[f])

    def level_with(self, colours: set[str]) -> int:
        """The level holding the most cubes of these colours (the players heard them)."""
        counts = [sum(self.tower.colours_on(f).get(c, 0) for c in colours) for f in range(8)]
        return max(range(8), key=lambda f: counts[f])


@pytest.mark.slow
def test_complete_game_against_the_simulated_tower(qtbot: QtBot, journal_dir: Path) -> None:
    errors: list[str] = []
    app = build_app(
        open_source=_open,
        store=JournalGameStore(journal_dir),
        show_error=errors.append,
        first_source=SourceChoice("sim"),
    )
    qtbot.addWidget(app.window)
    app.window.show()
    source = app.context.stream.source
    assert source is not None and source.tower is not None
    hands = Hands(source.tower)
    qtbot.waitUntil(lambda: hands.tower.time_s > QUIET_START_S, timeout=10_000)

    page = app.window.pages["arosa"]
    set_up_game(qtbot, page, PLAYERS, manual=False)
    controller = app.controller
    landings_detected = 0
    landings_missed = 0
    lifts_by_hand: list[int] = []
    lifts_detected = 0
    wrong_beliefs = 0
    steps = 0
    started = time.monotonic()
    while not controller.state.is_over:  # type: ignore[union-attr]
        steps += 1
        assert steps < 300, "the game does not end"
        prompt = controller.prompt()
        assert prompt is not None
        if prompt.kind == "throw":
            before = len(controller.throw_history())
            cube = hands.throw(prompt.throws[0])
            try:
                qtbot.waitUntil(
                    lambda n=before: len(controller.throw_history()) > n, timeout=LANDING_WAIT_MS
                )
                landings_detected += 1
            except TimeoutError:
                # nobody heard it: the players enter it by hand, as the app offers
                landings_missed += 1
                enter_landing_by_hand(qtbot, page, hands.resting_level(cube))
            # the app says that it landed, never where
            if controller.prompt().kind != "over":  # type: ignore[union-attr]
                assert play_panel(page).status_label.text().startswith("Landed.")
            continue
        panel = play_panel(page)
        others = {p for p in PLAYERS if p != prompt.player}
        if prompt.kind == "act1":
            kind, floor = "inspect", hands.level_with({"red"})
        else:
            kind, floor = "suspect", hands.level_with(others)
        click(qtbot, panel.kind_buttons[kind])
        if kind == "suspect":
            for suspect in others:
                panel.suspect_checks[suspect].setChecked(True)
        hands.tower.lift(floor)
        try:
            qtbot.waitUntil(lambda: controller.open_floor is not None, timeout=LANDING_WAIT_MS)
            assert controller.open_floor is not None
            assert controller.open_floor.detected and controller.open_floor.floor == floor
            lifts_detected += 1
        except TimeoutError:
            # lifting the top module alone disconnects no load cell: no sensor can
            # tell, so the players pick the floor on the keypad
            lifts_by_hand.append(floor)
            click(qtbot, panel.floor_keypad.buttons[floor])
        # the players look in and correct the app's belief to what they see
        seen = hands.tower.colours_on(floor)
        editor = panel.editor
        assert editor is not None
        if any(editor.counts[c] != seen.get(c, 0) for c in editor.counts):
            wrong_beliefs += 1
        for colour in editor.counts:
            while editor.counts[colour] < seen.get(colour, 0):
                click(qtbot, editor.plus[colour])
            while editor.counts[colour] > seen.get(colour, 0):
                click(qtbot, editor.minus[colour])
        click(qtbot, panel.confirm_button)
        assert controller.open_floor is None, errors
        # take everything out (victims go to the sheet, clues into the hand), close
        taken = hands.tower.take_out(floor)
        hands.held += [c for c in taken if hands.tower.colour_of(c) != "red"]
        # hands take a moment to pick the cubes out before the tower is closed
        hands.pause(qtbot, HANDS_S)
        hands.tower.close()
        if floor not in lifts_by_hand and controller.running:
            qtbot.waitUntil(lambda: not controller.tower_open, timeout=LANDING_WAIT_MS)
        # and a moment to pick up the first cube to throw back
        hands.pause(qtbot, PICK_UP_S)

    assert errors == []
    state = controller.state
    assert state is not None and state.is_over
    score_panel = page.panel
    assert isinstance(score_panel, ScorePanel)
    scores = arosa.score(state.players, state.sheet, state.crime_scenes)
    for colour in PLAYERS:
        assert score_panel.point_labels[colour].text() == str(scores.suspicion[colour])
    # the sensors, not the hands, played this game
    assert set(lifts_by_hand) <= {7}
    # The simulated tower knocks cubes down: a throw whose cube stopped on
    # the level it knocked another from, or whose landing is taken for a
    # knocked cube's, is not bound to the throw and is entered by hand, as
    # the app offers. On a filling tower that is a few throws in a hundred
    # (docs/detection.md), more on an unlucky game.
    assert landings_missed <= max(1, landings_detected // 10)
    print(
        f"sensor game: {landings_detected} landings ({landings_missed} missed) and"
        f" {lifts_detected} lifts detected ({len(lifts_by_hand)} by hand),"
        f" {wrong_beliefs} beliefs corrected, {time.monotonic() - started:.1f} s"
    )
    app.close()
