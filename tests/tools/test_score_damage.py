"""tools/crosscheck/score.py leaves events near a truth file's damaged spans out of the
scoring, and scores truth files without damage exactly as before."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.scripts import TOOLS, load_script

score = load_script(TOOLS / "crosscheck" / "score.py", "crosscheck_score_for_damage")


def _truth(damage: list[dict[str, Any]] | None) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "format": "towerear-crosscheck-truth/1", "scenario": "game", "seed": 1,
        "duration_s": 60.0, "cells": "matched",
        "landings": [
            {"t": t, "floor": f, "cubes": 1, "knocked": False, "caused_knockdown": False}
            for t, f in ((10.0, 3), (18.7, 2), (20.0, 5), (22.4, 6), (22.6, 4), (40.0, 1))],
        "knockdowns": [],
        "removals": [{"t": 21.0, "floor": 5, "cubes": 1}, {"t": 45.0, "floor": 1, "cubes": 1}],
        "lifts": [{"t": 19.0, "exposed": 5}, {"t": 44.0, "exposed": 1}],
        "closes": [{"t": 23.5, "exposed": 5}, {"t": 47.0, "exposed": 1}],
        "knocks": [{"t": 20.3}, {"t": 30.0}],
    }
    if damage is not None:
        doc["damage"] = damage
    return doc


def _landing(t: float, floor: int) -> dict[str, Any]:
    return {"event": "landing", "t": t, "t_decided": t + 0.3, "floor": floor, "cubes": 1,
            "confidence": 0.9}


# What a detector said: right at 10 and 22.6; a false landing and a disturbance in the
# damaged span; the landings at 18.7, 20.0, 22.4 and 40.0 missed; lifts and closes found.
EVENTS = [
    _landing(10.0, 3), _landing(21.2, 0), _landing(22.6, 4),
    {"event": "disturbance", "t": 20.5, "t_decided": 20.6},
    {"event": "lift", "t": 19.1, "t_decided": 19.2, "exposed": 5},
    {"event": "closed", "t": 23.4, "t_decided": 23.6},
    {"event": "lift", "t": 44.1, "t_decided": 44.2, "exposed": 1},
    {"event": "closed", "t": 47.1, "t_decided": 47.2},
]
DAMAGE = [{"t_start": 19.6, "t_end": 20.5, "kind": "unplug"}]  # scored outside 18.6 .. 22.5


def _score(doc: dict[str, Any]) -> dict[str, Any]:
    run = score.DetectRun(copy.deepcopy(EVENTS), 0, 1.0)
    res = score.score_one(doc, run, tolerance_s=0.5)
    res.pop("examples")
    return res


def test_events_in_a_damaged_span_are_not_scored() -> None:
    doc = _truth(DAMAGE)
    before = copy.deepcopy(doc)
    res = _score(doc)
    assert doc == before  # the truth document itself is left alone
    # 18.7 (within 1 s before), 20.0 and 22.4 (within 2 s after) are left out; 22.6 is not.
    assert res["n_truth"] == 3 and res["right"] == 2 and res["missed"] == 1
    assert res["false"] == 0 and res["disturbances_reported"] == 0
    assert (res["lifts"], res["lifts_found"], res["closes"], res["closes_found"]) == (1, 1, 2, 2)
    assert (res["removals"], res["knocks"]) == (1, 1)


def test_without_damage_nothing_changes() -> None:
    plain = _score(_truth(None))
    assert _score(_truth([])) == plain
    assert plain["n_truth"] == 6 and plain["right"] == 2 and plain["false"] == 1
    assert plain["lifts"] == 2 and plain["knocks"] == 2 and plain["disturbances_reported"] == 1
    # A span far from every event changes nothing either.
    far = _score(_truth([{"t_start": 55.0, "t_end": 56.0, "kind": "bit_errors"}]))
    assert far == plain


def test_damage_windows_are_widened_one_second_before_and_two_after() -> None:
    ((lo, hi),) = score.damage_windows(_truth(DAMAGE))
    assert lo == pytest.approx(18.6) and hi == pytest.approx(22.5)
    assert score.damage_windows(_truth(None)) == []
