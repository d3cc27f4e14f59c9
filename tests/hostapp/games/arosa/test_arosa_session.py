"""Journalled games: resume after SIGKILL, undo, refusals that leave nothing behind."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from hostapp.cli import main
from hostapp.errors import IllegalMoveError, JournalError
from hostapp.games.arosa import GameState, Throw, apply, legal_actions, new_game
from hostapp.games.arosa.session import ArosaSession

ROOT = Path(__file__).resolve().parents[4]
PLAYERS = ["blue", "gray", "white"]

# The writer: plays a seeded random game, undoing now and then, and prints
# "ack" after each event or undo returned (i.e. after it was fsynced).
WRITER = textwrap.dedent(
    """
    import random, sys, time
    from pathlib import Path
    from hostapp.games.arosa import legal_actions
    from hostapp.games.arosa.session import ArosaSession

    directory, seed, pause_s = Path(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
    session = ArosaSession.new({players!r}, directory)
    print(session.journal.game_id, flush=True)
    rng = random.Random(seed)
    while not session.state.is_over:
        if rng.random() < 0.1 and session.journal.events:
            session.undo()
        else:
            session.act(rng.choice(legal_actions(session.state)))
        print("ack", flush=True)
        time.sleep(pause_s)
    print("done", flush=True)
    """
).format(players=PLAYERS)


def expected_states(seed: int) -> list[GameState]:
    """The state after each operation of the writer with this seed (the same choices)."""
    rng = random.Random(seed)
    history = [new_game(PLAYERS)]
    states = [history[-1]]
    while not history[-1].is_over:
        if rng.random() < 0.1 and len(history) > 1:
            history.pop()
        else:
            history.append(apply(history[-1], rng.choice(legal_actions(history[-1]))))
        states.append(history[-1])
    return states


def test_sigkill_at_random_points_resumes_at_the_last_acknowledged_event(tmp_path: Path) -> None:
    rng = random.Random(11)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    killed_mid_game = 0
    for round_ in range(8):
        seed = rng.randrange(1 << 30)
        states = expected_states(seed)
        # kill after a random number of acknowledgements plus a random fraction
        # of a step, so the kill lands anywhere in the writer's loop
        wait_acks = rng.randrange(1, max(2, len(states) - 40))
        proc = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(tmp_path), str(seed), "0.002"],
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        assert proc.stdout is not None
        game_id = proc.stdout.readline().strip()
        seen = 0
        while seen < wait_acks and proc.stdout.readline().startswith("ack"):
            seen += 1
        time.sleep(rng.uniform(0.0, 0.003))
        proc.send_signal(signal.SIGKILL)
        acked = seen + proc.stdout.read().count("ack")
        proc.wait()
        proc.stdout.close()
        session = ArosaSession.resume(game_id, tmp_path)
        written = len(session.journal.records)
        # acked events are on disk; at most one more was fsynced before its ack got out
        assert written in (acked, acked + 1), (round_, acked, written)
        assert session.state == states[written]
        killed_mid_game += 0 < written < len(states) - 1
        session.close()
    assert killed_mid_game >= 6


def test_act_journals_before_the_state_moves_and_refusals_leave_no_trace(tmp_path: Path) -> None:
    session = ArosaSession.new(["yellow", "black"], tmp_path, title="friday")
    session.act(Throw("red", 3))
    before = session.state
    with pytest.raises(IllegalMoveError):
        session.act(Throw("white", 3))
    assert session.state == before
    assert len(session.journal.records) == 1
    session.act(Throw("red", 5))
    session.undo()
    assert session.state == before
    session.close()
    resumed = ArosaSession.resume(session.journal.game_id, tmp_path)
    assert resumed.state == before
    assert [r["type"] for r in resumed.journal.records] == ["event", "event", "undo"]
    resumed.close()


def test_resume_refuses_a_journal_of_another_game_or_with_a_bad_event(tmp_path: Path) -> None:
    from hostapp.journal import Journal

    with Journal.create("crimehotel", {}, tmp_path, game_id="cards"):
        pass
    with pytest.raises(JournalError, match="not Mord im Arosa"):
        ArosaSession.resume("cards", tmp_path)
    with Journal.create("arosa", {"players": ["blue", "gray"]}, tmp_path, game_id="bad") as j:
        j.append({"do": "throw", "color": "red", "floor": 2})
        j.append({"do": "inspect", "by": "blue", "floor": 2})
    with pytest.raises(JournalError, match="at event 1"):
        ArosaSession.resume("bad", tmp_path)


def test_games_command_lists_exports_and_deletes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    session = ArosaSession.new(["yellow", "black"], tmp_path, title="friday")
    session.act(Throw("red", 3))
    session.close()
    game_id = session.journal.game_id
    assert main(["arosa", "games", "--dir", str(tmp_path)]) == 0
    listing = capsys.readouterr().out
    assert game_id in listing and "1 events" in listing and "friday" in listing
    assert main(["arosa", "games", "--dir", str(tmp_path), "--export", game_id]) == 0
    exported = json.loads(capsys.readouterr().out)
    assert exported["events"] == [{"do": "throw", "color": "red", "floor": 3}]
    assert main(["arosa", "games", "--dir", str(tmp_path), "--delete", game_id]) == 0
    capsys.readouterr()
    assert main(["arosa", "games", "--dir", str(tmp_path), "--export", game_id]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no saved game" in err
