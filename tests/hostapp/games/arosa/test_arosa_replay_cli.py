"""`towerear arosa replay SCRIPT.json` exactly as contracts.md section 4."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hostapp.cli import main
from hostapp.games.arosa import (
    Throw,
    apply,
    event_to_dict,
    legal_actions,
    new_game,
)

PROLOGUE = [
    {"do": "throw", "color": "red", "floor": 4},
    {"do": "throw", "color": "red", "floor": 4},
    {"do": "throw", "color": "blue", "floor": 6},
    {"do": "throw", "color": "blue", "floor": 2},
    {"do": "throw", "color": "yellow", "floor": 4},
    {"do": "throw", "color": "yellow", "floor": 1},
    {"do": "throw", "color": "gray", "floor": 4},
    {"do": "throw", "color": "gray", "floor": 4},
]


def run(tmp_path: Path, script: Any, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    path = tmp_path / "script.json"
    path.write_text(script if isinstance(script, str) else json.dumps(script))
    status = main(["arosa", "replay", str(path)])
    out, err = capsys.readouterr()
    return status, out, err


def test_replay_prints_the_final_state(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    events = [
        *PROLOGUE,
        {"do": "inspect", "by": "blue", "floor": 4},  # both victims; 2 gray, 1 yellow caught
        {"do": "throw", "color": "gray", "floor": 3},
        {"do": "throw", "color": "yellow", "floor": 5},
        {"do": "throw", "color": "gray", "floor": 5},
        {"do": "suspect", "by": "yellow", "suspects": ["gray", "blue"], "floor": 5},
    ]
    status, out, err = run(
        tmp_path, {"players": ["blue", "yellow", "gray"], "events": events}, capsys
    )
    assert status == 0, err
    result = json.loads(out)
    assert set(result) == {"phase", "crime_scenes", "sheet", "supply", "tower", "owed"}
    assert result["phase"] == "act2"
    assert result["crime_scenes"] == [4]
    assert result["sheet"] == {
        "blue": [0, 0, 0, 0, 0, 0, 0, 0],
        "yellow": [0, 0, 0, 0, 1, 0, 0, 0],
        "gray": [0, 0, 0, 0, 2, 1, 0, 0],
    }
    assert result["supply"] == {"blue": 18, "yellow": 17, "gray": 15}
    assert result["tower"] == {
        "blue": [0, 0, 1, 0, 0, 0, 1, 0],
        "yellow": [0, 1, 0, 0, 0, 0, 0, 0],
        "gray": [0, 0, 0, 1, 0, 0, 0, 0],
        "red": [0, 0, 0, 0, 0, 0, 0, 0],
    }
    # floor 5: one gray and one yellow taken out; blue wrongly suspected: yellow's penalty
    assert result["owed"] == {"yellow": 2, "gray": 1}


def test_replay_of_a_finished_game_has_the_verdict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rng = random.Random(7)
    state = new_game(["white", "black"])
    events = []
    while not state.is_over:
        event = rng.choice(legal_actions(state))
        events.append(event_to_dict(event))
        state = apply(state, event)
    status, out, _ = run(tmp_path, {"players": ["white", "black"], "events": events}, capsys)
    assert status == 0
    result = json.loads(out)
    assert result["phase"] == "over"
    assert result["owed"] == {}
    assert set(result["suspicion"]) == {"white", "black"}
    top = max(result["suspicion"].values())
    assert result["culprits"] == [p for p, v in result["suspicion"].items() if v == top]


@pytest.mark.parametrize(
    ("events", "index", "rule"),
    [
        ([{"do": "inspect", "by": "blue", "floor": 4}], 0, "prologue"),
        ([*PROLOGUE, {"do": "inspect", "by": "yellow", "floor": 4}], 8, "Turn order"),
        ([*PROLOGUE, {"do": "throw", "color": "red", "floor": 1}], 8, "Throws"),
        ([*PROLOGUE[:3], {"do": "throw", "color": "white", "floor": 1}], 3, "Colours"),
        (
            [*PROLOGUE, {"do": "suspect", "by": "blue", "suspects": ["gray"], "floor": 4}],
            8,
            "Act I",
        ),
        ([*PROLOGUE[:1], {"do": "throw", "color": "red", "floor": 9}], 1, "floors are 0"),
        (
            [
                *PROLOGUE,
                {"do": "inspect", "by": "blue", "floor": 4},
                {"do": "suspect", "by": "yellow", "suspects": ["gray"], "floor": 5},
            ],
            9,
            "Throws first",
        ),
    ],
)
def test_illegal_event_exits_2_naming_index_and_rule(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    events: list[dict[str, Any]],
    index: int,
    rule: str,
) -> None:
    status, out, err = run(
        tmp_path, {"players": ["blue", "yellow", "gray"], "events": events}, capsys
    )
    assert status == 2
    assert out == ""
    assert err.count("\n") == 1
    assert f"event {index} " in err and rule in err


@pytest.mark.parametrize(
    "script",
    [
        "not json",
        "[]",
        {"players": ["blue", "yellow"]},
        {"players": ["blue"], "events": []},
        {"players": ["blue", "blue"], "events": []},
        {"players": ["blue", "red"], "events": []},
        {"players": ["blue", "pink"], "events": []},
        {"players": ["blue", "yellow"], "events": {}},
        {"players": ["blue", "yellow"], "events": [{"do": "dance"}]},
        {"players": ["blue", "yellow"], "events": [{"do": "throw", "color": "red"}]},
        {"players": ["blue", "yellow"], "events": [{"do": "throw", "color": "red", "floor": "4"}]},
        {"players": ["blue", "yellow"], "events": [{"do": "throw", "color": "red", "floor": True}]},
        {"players": ["blue", "yellow"], "events": [{"do": "throw", "color": "red", "floor": 4.0}]},
        {"players": ["blue", "yellow"], "events": [{"do": "throw", "color": 3, "floor": 4}]},
        {
            "players": ["blue", "yellow"],
            "events": [{"do": "suspect", "by": "blue", "suspects": "yellow", "floor": 4}],
        },
        {
            "players": ["blue", "yellow"],
            "events": [{"do": "cover", "by": "blue", "floor": 4, "remove": "all"}],
        },
        {
            "players": ["blue", "yellow"],
            "events": [{"do": "inspect", "by": "blue", "floor": 4, "found": {}}],
        },
    ],
)
def test_invalid_script_exits_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], script: Any
) -> None:
    status, out, err = run(tmp_path, script, capsys)
    assert status == 2
    assert out == ""
    assert err.count("\n") == 1 and "Traceback" not in err


def test_missing_file_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["arosa", "replay", str(tmp_path / "absent.json")]) == 2
    assert capsys.readouterr().err.count("\n") == 1


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(seed=st.integers(0, 2**32 - 1), cut=st.floats(0, 1))
def test_a_random_illegal_event_after_a_legal_prefix_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], seed: int, cut: float
) -> None:
    rng = random.Random(seed)
    players = ["gray", "brown", "blue"]
    state = new_game(players)
    events: list[dict[str, Any]] = []
    history = [state]
    while not state.is_over:
        event = rng.choice(legal_actions(state))
        events.append(event_to_dict(event))
        state = apply(state, event)
        history.append(state)
    prefix = int(cut * (len(events) - 1))
    state = history[prefix]
    # a throw nobody owes, or any action while throws are owed or the game is over
    bad: dict[str, Any]
    if state.owed:
        bad = {"do": "inspect", "by": state.investigator, "floor": 0}
    else:
        bad = event_to_dict(Throw("red", rng.randrange(8)))
    status, out, err = run(
        tmp_path, {"players": players, "events": [*events[:prefix], bad]}, capsys
    )
    assert status == 2, out
    assert err.startswith(f"towerear: event {prefix} ") and err.count("\n") == 1


def test_replay_as_a_real_process(tmp_path: Path) -> None:
    # one end-to-end run of the console entry point; main() covers the rest
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"players": ["blue", "yellow"], "events": PROLOGUE}))
    bad = subprocess.run(
        [sys.executable, "-m", "hostapp.cli", "arosa", "replay", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert bad.returncode == 2
    assert bad.stdout == "" and bad.stderr.count("\n") == 1 and "event 6 " in bad.stderr


def test_the_contracts_example_stops_where_the_prologue_is_unfinished(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # contracts.md section 4 shows the format, not a legal game: its third
    # event inspects while the prologue still owes a victim and six clues
    script = {
        "players": ["blue", "yellow", "gray"],
        "events": [
            {"do": "throw", "color": "red", "floor": 4},
            {"do": "throw", "color": "blue", "floor": 6},
            {"do": "inspect", "by": "blue", "floor": 4},
            {"do": "suspect", "by": "yellow", "suspects": ["gray"], "floor": 2},
            {"do": "cover", "by": "gray", "floor": 5, "remove": 1},
        ],
    }
    status, out, err = run(tmp_path, script, capsys)
    assert status == 2 and out == ""
    assert err.startswith("towerear: event 2 (inspect): The prologue")
    assert "1 red, 1 blue, 2 yellow, 2 gray" in err
