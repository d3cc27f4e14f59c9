"""The cross-check generator writes recordings our codec reads; the scorer matches right.

tools/crosscheck/ is a folder of scripts, not a package: load them by path.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hostapp.protocol import FrameDecoder, Hello, Load, Piezo, Status, cobs_decode
from tests.scripts import TOOLS, load_script

gen = load_script(TOOLS / "crosscheck" / "make_recordings.py", "crosscheck_make_recordings")
score = load_script(TOOLS / "crosscheck" / "score.py", "crosscheck_score")


def test_independent_crc_and_cobs_agree_with_the_contract_and_our_decoder() -> None:
    assert gen.crc16_ccitt_false(b"123456789") == 0x29B1
    rng = np.random.default_rng(3)
    samples = [b"", b"\x00", b"\x00\x00", bytes(range(1, 255)), bytes(range(1, 256)) * 2]
    samples += [rng.integers(0, 4, n).astype(np.uint8).tobytes() for n in (1, 7, 100, 254)]
    for data in samples:
        encoded = gen.cobs_encode(data)
        assert b"\x00" not in encoded
        assert cobs_decode(encoded) == data


@pytest.mark.parametrize(("seed", "scenario", "wrap"),
                         [(1, "single", True), (2, "game", False), (3, "noisy", False)])
def test_generated_recording_decodes_cleanly(
    tmp_path: Path, seed: int, scenario: str, wrap: bool
) -> None:
    # With ``wrap`` the u32 device clock wraps 3 s into the recording.
    start = (1 << 32) - 3_000_000 if wrap else None
    rec, truth_path = gen.make_recording(seed, scenario, 11.5, tmp_path, t_us_start=start)
    truth = json.loads(truth_path.read_text())
    decoder = FrameDecoder()
    data = rec.read_bytes()
    frames = []
    for i in range(0, len(data), 4093):  # odd chunk size: frames cut anywhere
        frames += decoder.feed(data[i:i + 4093])
    stats = decoder.stats
    assert stats.crc_errors == stats.framing_errors == stats.bad_length == 0
    assert stats.lost_messages == stats.unknown_types == stats.partial_start == 0
    assert isinstance(frames[0].msg, Hello)
    hello = frames[0].msg
    assert (hello.n_piezo, hello.n_load, hello.piezo_rate_hz, hello.load_rate_hz) == (
        8, 8, 2000, 80)
    kinds = [type(f.msg) for f in frames]
    counts = truth["counts"]
    assert kinds.count(Hello) == 1
    assert kinds.count(Piezo) == counts["piezo_frames"]
    assert kinds.count(Load) == counts["load"]
    assert kinds.count(Status) == counts["status"]
    assert [f.seq for f in frames] == list(range(len(frames)))
    spf = truth["tower"]["sets_per_frame"]
    piezo = [f.msg for f in frames if isinstance(f.msg, Piezo)]
    assert all(p.samples.shape == (spf, 8) for p in piezo[:-1])
    # The first data message is a PIEZO: stream time 0 is its t_us.
    first_data = next(f.msg for f in frames if isinstance(f.msg, Piezo | Load))
    assert isinstance(first_data, Piezo)
    t_us = np.array([p.t_us for p in piezo], dtype=np.int64)
    steps = np.diff(t_us) % (1 << 32)
    assert np.all(np.abs(steps - spf * 500) < spf * 500 * 1e-3)  # nominal rate, ppm error
    assert int(np.sum(np.diff(t_us) < 0)) == (1 if wrap else 0)
    assert abs(steps.sum() / 1e6 - truth["duration_s"]) < 0.01
    idle = np.concatenate([p.samples for p in piezo[:2000 // spf]])  # first, quiet second
    assert np.all(np.abs(np.median(idle, axis=0) - 512) <= 35)
    loads = [f.msg for f in frames if isinstance(f.msg, Load)]
    assert all(ld.valid == 0xFF for ld in loads)  # no lifts this early
    assert truth["landings"] and all(0 <= x["floor"] <= 7 for x in truth["landings"])


def test_lift_clears_the_valid_bits_of_the_lifted_levels() -> None:
    tower = gen.Tower.from_seed(5)
    plan = gen.Plan(lifted=[(1.0, 2.0, 4)])  # modules 3..7 lifted: levels 4..7 invalid
    t = np.arange(240) / 80.0
    counts, valid = gen.render_load(tower, plan, t, np.random.default_rng(0))
    during = (t > 1.05) & (t < 1.95)
    assert valid[during][:, :4].all() and not valid[during][:, 4:].any()
    assert (counts[~valid] == 0).all()
    assert valid[t > 2.2].all()


def _truth_doc() -> dict[str, Any]:
    return {
        "duration_s": 60.0,
        "landings": [
            {"t": 10.0, "floor": 3, "cubes": 1},
            {"t": 20.0, "floor": 5, "cubes": 1},
            {"t": 30.0, "floor": 1, "cubes": 1},
            {"t": 40.0, "floor": 2, "cubes": 1, "caused_knockdown": True},
            {"t": 40.08, "floor": 1, "cubes": 1, "knocked": True},
            {"t": 45.0, "floor": 6, "cubes": 1},
            {"t": 45.4, "floor": 6, "cubes": 1},
        ],
        "removals": [{"t": 52.0, "floor": 3, "cubes": 1}],
        "lifts": [{"t": 50.0, "exposed": 3}],
        "closes": [{"t": 55.0}],
        "knocks": [{"t": 57.0}],
    }


def _detect_output() -> str:
    events = [
        {"event": "landing", "t": 10.2, "t_decided": 10.6, "floor": 3, "cubes": 1,
         "confidence": 0.9},  # right, latency 0.6
        {"event": "landing", "t": 20.1, "t_decided": 20.5, "floor": 4, "cubes": 1,
         "confidence": 0.5},  # wrong floor
        {"event": "landing", "t": 31.2, "t_decided": 31.7, "floor": 1, "cubes": 1,
         "confidence": 0.8},  # right level, t 1.2 s off
        {"event": "landing", "t": 40.1, "t_decided": 40.5, "floor": 1, "cubes": 1,
         "confidence": 0.8},  # the knocked cube; the throw onto 2 is missed
        {"event": "landing", "t": 45.3, "t_decided": 45.9, "floor": 6, "cubes": 2,
         "confidence": 0.8},  # two cubes at once: takes both truths
        {"event": "lift", "t": 50.1, "t_decided": 50.2, "exposed": 3},
        {"event": "removal", "t": 52.3, "t_decided": 52.6, "floor": 3, "cubes": 1,
         "confidence": 0.9},
        {"event": "closed", "t": 55.2, "t_decided": 55.3},
        {"event": "landing", "t": 57.1, "t_decided": 57.4, "floor": 0, "cubes": 1,
         "confidence": 0.3},  # false, near the knock
    ]
    return "\n".join(json.dumps(e) for e in events) + "\nnot json\n{\"event\": \"landing\"}\n"


def test_scorer_matches_a_hand_made_example() -> None:
    events, malformed = score.parse_jsonl(_detect_output())
    assert len(events) == 9 and len(malformed) == 2
    run = score.DetectRun(events, 0, 6.0, malformed)
    res = score.score_one(_truth_doc(), run, tolerance_s=0.5)
    assert res["n_truth"] == 6
    assert (res["right"], res["wrong_floor"], res["time_off"], res["missed"]) == (3, 1, 1, 1)
    assert res["cubes_right"] == 3
    assert (res["n_knocked"], res["knocked_found"]) == (1, 1)
    assert res["missed_knockdown_throw"] == 1
    assert res["false"] == 1 and res["false_near_knock"] == 1 and res["false_duplicate"] == 0
    assert res["latency"] == pytest.approx([0.6, 0.9, 0.5])
    assert (res["lifts_found"], res["lifts_exposed_right"], res["closes_found"]) == (1, 1, 1)
    assert (res["removals_found"], res["removals_right"]) == (1, 1)
    assert res["knocks_flagged"] == 0 and res["malformed"] == 2
    agg = score.aggregate([res])
    assert agg["level_right_pct"] == pytest.approx(50.0)
    assert agg["false_per_hour"] == pytest.approx(60.0)
    assert agg["speed_x"] == pytest.approx(10.0)


def test_cubes_count_wrong_when_one_detection_claims_two_for_one_truth() -> None:
    truth = [{"t": 5.0, "floor": 2, "cubes": 1}]
    det = [{"t": 5.1, "floor": 2, "cubes": 2}]
    m = score.match_landings(truth, det, tolerance_s=0.5)
    assert m["status"] == ["right"] and m["taken"] == [[0]]
    doc = {"duration_s": 10.0, "landings": truth, "removals": [], "lifts": [],
           "closes": [], "knocks": []}
    ev = [{"event": "landing", "t_decided": 5.5, "confidence": 1.0, **det[0]}]
    res = score.score_one(doc, score.DetectRun(ev, 0, 1.0), tolerance_s=0.5)
    assert res["right"] == 1 and res["cubes_right"] == 0


def test_after_a_reboot_truth_times_are_scored_as_the_bytes_tell_them() -> None:
    # The device was away 1.5 s and its new clock read 0.4 s at its first
    # message: stream time can only go on 0.4 s after the last stamp, so a
    # landing at physical 20.0 s is at 18.9 s in the stream.
    doc = {"duration_s": 30.0, "removals": [], "lifts": [], "closes": [], "knocks": [],
           "knockdowns": [],
           "landings": [{"t": 5.0, "floor": 2, "cubes": 1}, {"t": 20.0, "floor": 4, "cubes": 1}],
           "damage": [{"t_start": 10.0, "t_end": 11.5, "kind": "reboot", "gap_s": 1.5,
                       "t_us_after": 400_000}]}
    ev = [{"event": "landing", "t": t, "t_decided": t + 0.1, "floor": f, "cubes": 1,
           "confidence": 1.0} for t, f in ((5.0, 2), (18.9, 4))]
    res = score.score_one(doc, score.DetectRun(ev, 0, 1.0), tolerance_s=0.2)
    assert (res["right"], res["false"]) == (2, 0)
    assert score.as_the_bytes_tell(doc)["landings"][1]["t"] == pytest.approx(18.9)
    assert doc["landings"][1]["t"] == 20.0  # the truth given is left as it was
    plain = {**doc, "damage": [{"t_start": 10.0, "t_end": 11.5, "kind": "lost"}]}
    assert score.as_the_bytes_tell(plain) is plain


def test_a_broken_truth_file_is_named_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "single_t1.truth.json").write_text('{"format": "towerear-crosscheck-truth/1"}')
    with pytest.raises(ValueError, match="single_t1.truth.json: truth file lacks cells, "):
        score.read_truth(tmp_path / "single_t1.truth.json")
    assert score.main([str(tmp_path)]) == 2
    (tmp_path / "single_t1.truth.json").write_text("{not json")
    with pytest.raises(ValueError, match="not a readable truth file"):
        score.read_truth(tmp_path / "single_t1.truth.json")


failures_tool = load_script(TOOLS / "crosscheck" / "failures.py", "crosscheck_failures")


def test_failures_are_sorted_by_kind_and_stops_are_told_apart(tmp_path: Path) -> None:
    events, _ = score.parse_jsonl(_detect_output())
    extra = [
        # A cube resting a moment on 4 before it fell to 1 (truth 30.0 @ 1).
        {"event": "landing", "t": 28.8, "t_decided": 28.9, "floor": 4, "cubes": 1,
         "confidence": 0.99},
        # An inferred knock-down stop on 5, decided with its knocked removal.
        {"event": "landing", "t": 70.0, "t_decided": 70.5, "floor": 5, "cubes": 1,
         "confidence": 0.7},
        {"event": "removal", "t": 69.9, "t_decided": 70.5, "floor": 5, "cubes": 1,
         "confidence": 0.7, "knocked": True},
    ]
    # Suspected stops: the throw at 40.0 did stop on 2; the cube at 10.2 on 3
    # came alone, nothing rested on 5.
    events[3] = {**events[3], "maybe_stopped_on": 2}
    events[0] = {**events[0], "maybe_stopped_on": 5}
    found = failures_tool.failures(_truth_doc(), events + extra)
    assert found["suspected"] == {"stop": 1, "passed": 1}
    assert found["false"] == {"near a knock": 1, "cube passing": 1, "other": 1}
    assert found["missed"] == {"knock-down throw": 1}
    assert found["stops"] == {"right": 0, "false": 1}
    assert any("missed (knock-down throw): t=40.00 floor=2" in line for line in found["listed"])
    # Over a folder, from the run's outputs beside the truth; a run that is
    # not there is named.
    doc = {**_truth_doc(), "format": "towerear-crosscheck-truth/1", "cells": "matched",
           "scenario": "single", "seed": 1, "knockdowns": []}
    (tmp_path / "single_t1.truth.json").write_text(json.dumps(doc))
    assert failures_tool.main(["--sets", str(tmp_path.parent), "--tag", "mine",
                               "--folders", tmp_path.name]) == 2
    (tmp_path / "single_t1.mine.jsonl").write_text(
        "\n".join(json.dumps(e) for e in events + extra) + "\n"
    )
    line = failures_tool.summary_line("b1", failures_tool.folder_failures(tmp_path, "mine"))
    assert line.startswith("b1     false 3 (near a knock 1, near handling 0, second report 0, ")
    assert line.endswith("missed 1 (knock-down throw 1, plain 0)  stops right 0 false 1  "
                         "suspected stops 1 passes 1")


def test_failures_leave_a_damaged_span_out_as_the_scorer_does(tmp_path: Path) -> None:
    events, _ = score.parse_jsonl(_detect_output())
    extra = [{"event": "landing", "t": 70.0, "t_decided": 70.5, "floor": 5, "cubes": 1,
              "confidence": 0.7},
             {"event": "removal", "t": 69.9, "t_decided": 70.5, "floor": 5, "cubes": 1,
              "confidence": 0.7, "knocked": True}]
    doc = {**_truth_doc(), "format": "towerear-crosscheck-truth/1", "cells": "matched",
           "scenario": "single", "seed": 1, "knockdowns": [],
           "damage": [{"t_start": 69.5, "t_end": 70.2, "kind": "unplug"}]}
    (tmp_path / "single_t1.truth.json").write_text(json.dumps(doc))
    (tmp_path / "single_t1.mine.jsonl").write_text(
        "\n".join(json.dumps(e) for e in events + extra) + "\n"
    )
    found = failures_tool.folder_failures(tmp_path, "mine")
    assert found["stops"] == {"right": 0, "false": 0}


def test_the_game_takes_unlabelled_landings_in_the_order_decided_as_the_oldest_throw_owed() -> None:
    throws = [
        {"t": 2.0, "t_first_impact": 1.8, "floor": 3},
        {"t": 10.0, "t_first_impact": 9.8, "floor": 5},
        {"t": 12.0, "t_first_impact": 11.8, "floor": 1},
        {"t": 40.0, "t_first_impact": 39.8, "floor": 2},
    ]

    def landing(t: float, floor: int, decided: float, **more: Any) -> dict[str, Any]:
        return {"event": "landing", "t": t, "t_decided": decided, "floor": floor, "cubes": 1,
                **more}

    detected = [
        landing(0.5, 6, 0.7),                    # before any throw: the game asked for none
        landing(2.0, 3, 2.3),                    # the first throw
        landing(10.0, 4, 10.2, knocked_from=5),  # labelled knocked down: no throw's
        landing(9.9, 5, 10.9, knocked_down_to=4),  # a stop weighed late: no throw's
        landing(12.0, 1, 12.3),                  # the third throw's, taken for the second
        landing(40.0, 2, 40.3),                  # the third was over 5 s old: by hand
    ]
    assert score.as_the_game_takes(throws, detected) == {
        "game_right": 2, "game_wrong": 1, "game_by_hand": 1}
    # A landing of two cubes takes two throws; a throw nothing took is by hand.
    two = [landing(12.1, 5, 12.4, cubes=2)]
    assert score.as_the_game_takes(throws, two) == {
        "game_right": 1, "game_wrong": 1, "game_by_hand": 2}
