#!/usr/bin/env python3
"""Why a run's landings went wrong: false landings and misses, by kind, per folder.

Reads a run's outputs (``NAME.<tag>.jsonl`` beside each recording, as
``run_all.py`` writes them) and the truth, matches them as ``score.py``
does, and sorts every failure:

- a false landing is *near a knock* (a table knock, a hand on the tower:
  within 1.5 s), *near handling* (a lift, close or removal), *a second
  report* (the truth has a landing on that floor within 3 s), *a cube
  passing* (the truth has a cube landing below that floor within 2 s: it
  rested a moment, or the plate rang), or *other*; a *stop* is a knock-down
  stop the fusion inferred (a landing and a knocked removal on one floor,
  decided together), whatever its kind;
- a missed throw is *a knock-down throw* (the thrown cube stopped where it
  knocked a resting one down: no load change there) or *plain*.

Usage::

    .venv/bin/python tools/crosscheck/failures.py --sets /tmp/crosscheck-sets --tag mine
    .venv/bin/python tools/crosscheck/failures.py --sets DIR --tag mine --folders b1 b9 -v

``-v`` lists every failure with the truth and the detections around it.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import score  # the scorer beside this script

KNOCK_NEAR_S = 1.5
SAME_FLOOR_S = 3.0
PASSED_WITHIN_S = 2.0
# A thrown cube that stopped above rests there before the knocked one rests
# below; a second either way allows for the knocked cube's fall and bounces.
SUSPECTED_WITHIN_S = 1.0
FALSE_KINDS = ("near a knock", "near handling", "second report", "cube passing", "other")
MISS_KINDS = ("knock-down throw", "plain")


def is_stop(landing: dict[str, Any], events: list[dict[str, Any]]) -> bool:
    """Whether a detected landing is an inferred knock-down stop (with its knocked removal)."""
    return any(
        e["event"] == "removal" and e.get("knocked") and e["floor"] == landing["floor"]
        and e["t_decided"] == landing["t_decided"]
        for e in events
    )


def suspicion_kind(landing: dict[str, Any], doc: dict[str, Any]) -> str | None:
    """For a landing whose thrown cube may have stopped above: ``"stop"`` if the truth says so.

    ``"pass"`` when no thrown cube came to rest on that level within
    ``SUSPECTED_WITHIN_S``; None for a landing with no suspicion.
    """
    above = landing.get("maybe_stopped_on")
    if above is None:
        return None
    t = float(landing["t"])
    stopped = any(
        not x.get("knocked") and x["floor"] == above and abs(x["t"] - t) <= SUSPECTED_WITHIN_S
        for x in doc["landings"]
    )
    return "stop" if stopped else "pass"


def false_kind(landing: dict[str, Any], doc: dict[str, Any]) -> str:
    """The kind of a false landing (see the module docstring), the first that fits."""
    t, floor = float(landing["t"]), int(landing["floor"])
    if any(abs(k["t"] - t) < KNOCK_NEAR_S for k in doc["knocks"]):
        return "near a knock"
    handling = doc["lifts"] + doc["closes"] + doc["removals"]
    if any(abs(x["t"] - t) < KNOCK_NEAR_S for x in handling):
        return "near handling"
    if any(x["floor"] == floor and abs(x["t"] - t) <= SAME_FLOOR_S for x in doc["landings"]):
        return "second report"
    if any(x["floor"] < floor and 0.0 <= x["t"] - t <= PASSED_WITHIN_S for x in doc["landings"]):
        return "cube passing"
    return "other"


def failures(doc: dict[str, Any], events: list[dict[str, Any]]) -> dict[str, Any]:
    """The failures of one recording: false landings and misses by kind, and the stops."""
    landings = [e for e in events if e["event"] == "landing"]
    throws = [x for x in doc["landings"] if not x.get("knocked")]
    knocked = [x for x in doc["landings"] if x.get("knocked")]
    match = score.match_landings(
        throws + knocked, landings, tolerance_s=0.5,
        same_floor_only=[False] * len(throws) + [True] * len(knocked),
    )
    false: Counter[str] = Counter()
    missed: Counter[str] = Counter()
    stops = Counter(right=0, false=0)
    suspected = Counter(stop=0, passed=0)
    listed: list[str] = []
    for j, landing in enumerate(landings):
        taken = match["taken"][j]
        suspicion = suspicion_kind(landing, doc)
        if suspicion is not None:
            suspected["stop" if suspicion == "stop" else "passed"] += 1
        if is_stop(landing, events):
            stops["false" if not taken else "right"] += 1
        if taken:
            continue
        kind = false_kind(landing, doc)
        false[kind] += 1
        listed.append(f"false ({kind}{', a stop' if is_stop(landing, events) else ''}): "
                      f"t={float(landing['t']):.2f} floor={landing['floor']} "
                      f"confidence={landing.get('confidence')} "
                      f"decided {float(landing['t_decided']):.2f}"
                      f" | truth: {_truth_near(doc, float(landing['t']))}")
    for i, throw in enumerate(throws):
        if match["status"][i] != "missed":
            continue
        kind = MISS_KINDS[0] if throw.get("caused_knockdown") else MISS_KINDS[1]
        missed[kind] += 1
        listed.append(f"missed ({kind}): t={throw['t']:.2f} floor={throw['floor']}"
                      f" | detected: {_detected_near(events, throw['t'])}")
    return {"false": false, "missed": missed, "stops": stops, "suspected": suspected,
            "listed": listed}


def _truth_near(doc: dict[str, Any], t: float) -> str:
    near = [x for x in doc["landings"] if abs(x["t"] - t) <= PASSED_WITHIN_S]
    return "; ".join(
        f"{x['t']:.2f}@{x['floor']}{' knocked' if x.get('knocked') else ''}" for x in near
    ) or "no landing within 2 s"


def _detected_near(events: list[dict[str, Any]], t: float) -> str:
    near = [e for e in events if abs(float(e["t"]) - t) <= KNOCK_NEAR_S]
    return "; ".join(
        f"{e['event']} {float(e['t']):.2f}" + (f"@{e['floor']}" if "floor" in e else "")
        for e in near
    ) or "nothing within 1.5 s"


def folder_failures(folder: Path, tag: str) -> dict[str, Any]:
    """:func:`failures` summed over a folder's recordings, with each one's list."""
    total: dict[str, Any] = {"false": Counter(), "missed": Counter(), "stops": Counter(),
                             "suspected": Counter(), "listed": []}
    for truth_path in sorted(folder.glob("*.truth.json")):
        out = truth_path.with_name(truth_path.name.replace(".truth.json", f".{tag}.jsonl"))
        if not out.exists():
            raise ValueError(f"{out.name}: no output of run {tag!r} beside the recording")
        events, _ = score.parse_jsonl(out.read_text())
        # As the scorer does: nothing in a damaged span (model G) is judged.
        doc, run = score.without_damage(score.read_truth(truth_path),
                                        score.DetectRun(events, 0, 0.0))
        one = failures(doc, run.events)
        for key in ("false", "missed", "stops", "suspected"):
            total[key].update(one[key])
        name = truth_path.name.removesuffix(".truth.json")
        total["listed"] += [f"{name}: {line}" for line in one["listed"]]
    return total


def summary_line(name: str, found: dict[str, Any]) -> str:
    """One line per folder: false landings and misses by kind, the stops right and false.

    And the landings whose thrown cube was suspected of stopping above: how
    many truly stopped there, and how many passed.
    """
    false = ", ".join(f"{kind} {found['false'][kind]}" for kind in FALSE_KINDS)
    missed = ", ".join(f"{kind} {found['missed'][kind]}" for kind in MISS_KINDS)
    return (f"{name:6s} false {sum(found['false'].values())} ({false})  "
            f"missed {sum(found['missed'].values())} ({missed})  "
            f"stops right {found['stops']['right']} false {found['stops']['false']}  "
            f"suspected stops {found['suspected']['stop']} passes {found['suspected']['passed']}")


def main(argv: list[str] | None = None) -> int:
    """Command line: one line per folder (and every failure with ``-v``)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sets", type=Path, required=True, help="where run_all.py kept the sets")
    p.add_argument("--tag", required=True, help="the run (NAME.<tag>.jsonl)")
    p.add_argument("--folders", nargs="+", help="only these sets (default: every one)")
    p.add_argument("-v", "--verbose", action="store_true", help="list every failure")
    args = p.parse_args(argv)
    names = args.folders or sorted(d.name for d in args.sets.iterdir() if d.is_dir())
    try:
        for name in names:
            found = folder_failures(args.sets / name, args.tag)
            print(summary_line(name, found))
            if args.verbose:
                for line in found["listed"]:
                    print("  " + line)
    except (OSError, ValueError) as exc:
        print(f"failures.py: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
