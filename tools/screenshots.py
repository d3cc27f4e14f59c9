"""Write a screenshot of every main screen of the app into docs/screenshots/.

Runs the real app offscreen (as wired by hostapp.ui.app.build_app), streaming
the simulated tower, and plays a scripted game through the widgets:

    .venv/bin/python tools/screenshots.py [--out docs/screenshots]

Landings are entered on the keypad (as in manual mode) so the pictures are
the same on every run; the live view shows the simulated tower with a few
cubes really thrown into it.
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("TOWEREAR_HOME", tempfile.mkdtemp(prefix="towerear-shots-"))

from PyQt6.QtWidgets import QApplication, QWidget

from hostapp import i18n
from hostapp.ui.app import App, build_app
from hostapp.ui.arosa.end_panel import ScorePanel
from hostapp.ui.arosa.page import ArosaPage, StartPanel
from hostapp.ui.arosa.play_panel import PlayPanel
from hostapp.ui.arosa.setup_panel import SetupPanel
from hostapp.ui.streaming import SourceChoice

PLAYERS = ["yellow", "blue", "gray", "white"]
# Where the scripted cubes come to rest, in turn: spread over the tower so the
# sheet shows clues on several floors.
LANDINGS = itertools.cycle([3, 5, 2, 3, 6, 1, 4, 3, 2, 5, 0, 3, 6, 2])


def pump(app: QApplication, seconds: float) -> None:
    """Let the event loop run (streaming, redraws) for a while."""
    until = time.monotonic() + seconds
    while time.monotonic() < until:
        app.processEvents()
        time.sleep(0.01)


def shoot(window: QWidget, qt: QApplication, out: Path, name: str) -> None:
    """Save the window as ``name``.png."""
    pump(qt, 0.3)
    window.grab().save(str(out / f"{name}.png"))
    print(f"wrote {out / name}.png")


def page_of(app: App) -> ArosaPage:
    page = app.window.pages["arosa"]
    assert isinstance(page, ArosaPage)
    return page


def play_panel(app: App) -> PlayPanel:
    panel = page_of(app).panel
    assert isinstance(panel, PlayPanel)
    return panel


def land(app: App) -> None:
    """Enter where the called-out cube landed."""
    panel = play_panel(app)
    if not panel.throw_box.isVisible():
        panel.by_hand_button.click()
    panel.throw_keypad.buttons[next(LANDINGS)].click()


def open_floor(app: App, kind: str, floor: int, suspects: list[str]) -> PlayPanel:
    panel = play_panel(app)
    panel.kind_buttons[kind].click()
    for suspect in suspects:
        panel.suspect_checks[suspect].setChecked(True)
    panel.floor_keypad.buttons[floor].click()
    return panel


def fullest_floor(app: App, colours: list[str]) -> int:
    """The floor holding most cubes of these colours (the players' best guess)."""
    belief = [app.controller.belief(f) for f in range(8)]
    return max(range(8), key=lambda f: sum(belief[f].get(c, 0) for c in colours))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("docs/screenshots"))
    args = parser.parse_args()
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    i18n.set_language("en")
    qt = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(qt, QApplication)
    app = build_app(show_error=print, first_source=SourceChoice("sim"))
    window = app.window
    window.resize(1280, 900)
    window.show()

    # the live view with the simulated tower streaming and cubes falling
    window.show_page("live")
    tower = app.context.stream.source.tower if app.context.stream.source else None
    pump(qt, 4.0)
    if tower is not None:
        for _ in range(3):
            tower.throw("blue")
            pump(qt, 1.5)
    pump(qt, 1.0)
    shoot(window, qt, out, "live-view")

    window.show_page("arosa")
    page = page_of(app)
    start = page.panel
    assert isinstance(start, StartPanel)
    shoot(window, qt, out, "arosa-start")
    start.new_button.click()
    setup = page.panel
    assert isinstance(setup, SetupPanel)
    for colour in PLAYERS:
        setup.colour_buttons[colour].click()
    setup.victim_box.setCurrentIndex(2)
    shoot(window, qt, out, "arosa-setup")
    setup.start_button.click()

    land(app)
    land(app)
    land(app)
    shoot(window, qt, out, "arosa-throw")
    while app.controller.prompt().kind == "throw":  # type: ignore[union-attr]
        land(app)
    shoot(window, qt, out, "arosa-turn")
    window.show_page("live")
    shoot(window, qt, out, "live-locked")
    window.show_page("arosa")

    open_floor(app, "inspect", 3, [])
    shoot(window, qt, out, "arosa-confirm")
    play_panel(app).confirm_button.click()
    shoot(window, qt, out, "arosa-after-inspection")

    shot_act2 = False
    for _ in range(600):
        state = app.controller.state
        assert state is not None
        if state.is_over:
            break
        prompt = app.controller.prompt()
        assert prompt is not None
        if prompt.kind == "throw":
            land(app)
        elif prompt.kind == "act1":
            panel = open_floor(app, "inspect", fullest_floor(app, ["red"]), [])
            panel.confirm_button.click()
        else:
            others = [p for p in state.players if p != prompt.player]
            if not shot_act2 and sum(sum(v) for v in state.sheet.values()) >= 6:
                shoot(window, qt, out, "arosa-act2")
                shot_act2 = True
            panel = open_floor(app, "suspect", fullest_floor(app, others), others)
            panel.confirm_button.click()
    score = page.panel
    assert isinstance(score, ScorePanel)
    shoot(window, qt, out, "arosa-score")
    score.reveal_button.click()
    shoot(window, qt, out, "arosa-reveal")

    window.set_language("de")
    window.show_page("arosa")
    shoot(window, qt, out, "arosa-score-de")
    app.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
