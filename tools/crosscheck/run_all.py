#!/usr/bin/env python3
"""Measure ``towerear detect`` on all the cross-check models (A-Z, AA-AO) with one command.

Makes the recordings of each model once (towers 1-8 and 9-16, the four
scenarios, 120 s each: about 87 h of stream over 41 models; kept in ``--sets`` for the
next run), runs the detection pipeline over every recording in worker
processes (the same code path as ``towerear detect``, without a process
start per recording), keeps each output beside its recording as
``NAME.<tag>.jsonl`` and prints one line per model and tower range: level
right, wrong floor / time off / missed, false landings an hour, latency,
and the lifts, closures and removals of the games.

Usage::

    .venv/bin/python tools/crosscheck/run_all.py --sets /tmp/crosscheck-sets --tag mine
    .venv/bin/python tools/crosscheck/run_all.py --sets DIR --tag mine --models A E --towers 2
    .venv/bin/python tools/crosscheck/run_all.py --sets DIR --tag mine --models P --families

``--families`` also makes and scores the families only some generators
make (models P and Q: half-hour sessions, damaged streams beside their
clean twins, towers without load cells), one line per family, kept in
``<model><first>x``.

``--heard-only`` also scores every model's single throws and quick series
heard without their load cells: copies with the LOAD messages taken out
(``heard_only.py``), kept in ``<model><first>h``, one line per family.

Two runs with different tags (two versions of the code) can be compared
line by line; docs/crosscheck.md, run 22 on, was measured this way.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

TOOLS = Path(__file__).resolve().parents[1]
ROOT = TOOLS.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import score  # noqa: E402  (the scorer beside this script)
from heard_only import make_heard_only_set  # noqa: E402

GENERATORS = {
    "A": TOOLS / "crosscheck" / "make_recordings.py",
    "B": TOOLS / "crosscheck_b" / "make_recordings_b.py",
    "C": TOOLS / "crosscheck_c" / "make_recordings_c.py",
    "D": TOOLS / "crosscheck_d" / "make_recordings_d.py",
    "E": TOOLS / "crosscheck_e" / "make_recordings_e.py",
    "F": TOOLS / "crosscheck_f" / "make_recordings_f.py",
    "G": TOOLS / "crosscheck_g" / "make_recordings_g.py",
    "H": TOOLS / "crosscheck_h" / "make_recordings_h.py",
    "I": TOOLS / "crosscheck_i" / "make_recordings_i.py",
    "J": TOOLS / "crosscheck_j" / "make_recordings_j.py",
    "K": TOOLS / "crosscheck_k" / "make_recordings_k.py",
    "L": TOOLS / "crosscheck_l" / "make_recordings_l.py",
    "M": TOOLS / "crosscheck_m" / "make_recordings_m.py",
    "N": TOOLS / "crosscheck_n" / "make_recordings_n.py",
    "O": TOOLS / "crosscheck_o" / "make_recordings_o.py",
    "P": TOOLS / "crosscheck_p" / "make_recordings_p.py",
    "Q": TOOLS / "crosscheck_q" / "make_recordings_q.py",
    "R": TOOLS / "crosscheck_r" / "make_recordings_r.py",
    "S": TOOLS / "crosscheck_s" / "make_recordings_s.py",
    "T": TOOLS / "crosscheck_t" / "make_recordings_t.py",
    "U": TOOLS / "crosscheck_u" / "make_recordings_u.py",
    "V": TOOLS / "crosscheck_v" / "make_recordings_v.py",
    "W": TOOLS / "crosscheck_w" / "make_recordings_w.py",
    "X": TOOLS / "crosscheck_x" / "make_recordings_x.py",
    "Y": TOOLS / "crosscheck_y" / "make_recordings_y.py",
    "Z": TOOLS / "crosscheck_z" / "make_recordings_z.py",
    "AA": TOOLS / "crosscheck_aa" / "make_recordings_aa.py",
    "AB": TOOLS / "crosscheck_ab" / "make_recordings_ab.py",
    "AC": TOOLS / "crosscheck_ac" / "make_recordings_ac.py",
    "AD": TOOLS / "crosscheck_ad" / "make_recordings_ad.py",
    "AE": TOOLS / "crosscheck_ae" / "make_recordings_ae.py",
    "AF": TOOLS / "crosscheck_af" / "make_recordings_af.py",
    "AG": TOOLS / "crosscheck_ag" / "make_recordings_ag.py",
    "AH": TOOLS / "crosscheck_ah" / "make_recordings_ah.py",
    "AI": TOOLS / "crosscheck_ai" / "make_recordings_ai.py",
    "AJ": TOOLS / "crosscheck_aj" / "make_recordings_aj.py",
    "AK": TOOLS / "crosscheck_ak" / "make_recordings_ak.py",
    "AL": TOOLS / "crosscheck_al" / "make_recordings_al.py",
    "AM": TOOLS / "crosscheck_am" / "make_recordings_am.py",
    "AN": TOOLS / "crosscheck_an" / "make_recordings_an.py",
    "AO": TOOLS / "crosscheck_ao" / "make_recordings_ao.py",
}


# The families beyond the usual four, and the generators that make them.
EXTRA_FAMILIES = ("long", "damaged", "acoustic")
FAMILY_MODELS = frozenset({"P", "Q", "R", "S"})
# The families heard without load cells with ``--heard-only``.
HEARD_ONLY_FAMILIES = ("single", "rapid")


def make_extra_set(model: str, first_seed: int, towers: int, duration_s: float,
                   long_s: float, out: Path) -> None:
    """Make one model's extra families into ``out`` unless they are there already.

    Four truths a tower: long, damaged, its clean twin, acoustic.
    """
    if out.is_dir() and len(list(out.glob("*.truth.json"))) >= 4 * towers:
        return
    out.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [sys.executable, str(GENERATORS[model]), "--out", str(out), "--towers", str(towers),
         "--first-seed", str(first_seed), "--duration", str(duration_s),
         "--scenarios", *EXTRA_FAMILIES, "--long-duration", str(long_s)],
        check=True, capture_output=True,
    )


def make_set(model: str, first_seed: int, towers: int, duration_s: float, out: Path) -> None:
    """Make one model's recordings into ``out`` unless they are there already."""
    if out.is_dir() and len(list(out.glob("*.truth.json"))) >= 4 * towers:
        return
    out.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [sys.executable, str(GENERATORS[model]), "--out", str(out), "--towers", str(towers),
         "--first-seed", str(first_seed), "--duration", str(duration_s)],
        check=True, capture_output=True,
    )


def detect_one(recording: Path, tag: str) -> tuple[str, float, float]:
    """Detect one recording in this process; ``(name, stream s, cpu s)``."""
    from hostapp.cli.detect import detect_recording

    started = time.process_time()
    result = detect_recording(recording)
    with recording.with_suffix(f".{tag}.jsonl").open("w") as out:
        for event in result.events:
            out.write(json.dumps(event) + "\n")
    stream = float(result.diagnostics.get("seconds_stream", 0.0))
    return recording.name, stream, time.process_time() - started


def score_set(folder: Path, tag: str) -> dict[str, Any]:
    """The scorer's totals over a folder's recordings, from their ``.<tag>.jsonl``."""
    return score.aggregate(list(_scored(folder, tag).values()))


def score_families(folder: Path, tag: str) -> dict[str, dict[str, Any]]:
    """The scorer's totals per family (the name before ``_t``) over a folder's recordings."""
    by_family: dict[str, list[dict[str, Any]]] = {}
    for name, result in _scored(folder, tag).items():
        by_family.setdefault(name.split("_t")[0], []).append(result)
    return {family: score.aggregate(results) for family, results in sorted(by_family.items())}


def _scored(folder: Path, tag: str) -> dict[str, dict[str, Any]]:
    """Each recording's score (by its name), from its ``.<tag>.jsonl``."""
    results = {}
    for truth_path in sorted(folder.glob("*.truth.json")):
        out = truth_path.with_name(truth_path.name.replace(".truth.json", f".{tag}.jsonl"))
        events, malformed = score.parse_jsonl(out.read_text())
        run = score.DetectRun(events, 0, 0.0, malformed)
        results[truth_path.name] = score.score_one(
            score.read_truth(truth_path), run, tolerance_s=0.5)
    return results


def summary_line(name: str, agg: dict[str, Any]) -> str:
    """One line of the numbers docs/crosscheck.md reports."""
    return (
        f"{name:14s} {agg['n_truth']:5d} landings  right {agg['level_right_pct']:6.2f} %  "
        f"wrong/off/missed {agg['wrong_floor']}/{agg['time_off']}/{agg['missed']}  "
        f"false {agg['false']} ({agg['false_per_hour']:.1f}/h)  "
        f"latency {agg['latency_median_s']:.2f}/{agg['latency_p95_s']:.2f} s  "
        f"lifts {agg['lifts_found']}/{agg['lifts']} closes {agg['closes_found']}/{agg['closes']} "
        f"removals {agg['removals_right']}/{agg['removals']}  "
        f"knocked_from {agg['knock_labels_right']}/{agg['knock_labels']}  "
        f"game right/wrong/by hand {agg['game_right']}/{agg['game_wrong']}/{agg['game_by_hand']}"
    )


def main(argv: list[str] | None = None) -> int:
    """Command line: make what is missing, detect everything, print the table."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sets", type=Path, required=True, help="where the recordings are kept")
    p.add_argument("--tag", required=True, help="names this run's outputs (NAME.<tag>.jsonl)")
    p.add_argument("--models", nargs="+", default=list(GENERATORS), choices=list(GENERATORS))
    p.add_argument("--towers", type=int, default=8, help="towers per range (1.. and 9..)")
    p.add_argument("--ranges", type=int, default=2, choices=(1, 2),
                   help="1: towers 1..N only; 2: also towers 9..8+N")
    p.add_argument("--duration", type=float, default=120.0, help="seconds per recording")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--families", action="store_true",
                   help=f"also the families {', '.join(EXTRA_FAMILIES)} of the models that "
                        f"make them ({', '.join(sorted(FAMILY_MODELS))})")
    p.add_argument("--long-duration", type=float, default=1800.0,
                   help="seconds per long session (with --families)")
    p.add_argument("--heard-only", action="store_true",
                   help=f"also the {' and '.join(HEARD_ONLY_FAMILIES)} recordings of every "
                        "model with their LOAD messages taken out (acoustic-only)")
    args = p.parse_args(argv)
    folders: list[tuple[str, Path]] = []
    extra: list[tuple[str, Path]] = []
    for model in args.models:
        for first in (1, 9)[: args.ranges]:
            name = f"{model} {first}-{first + args.towers - 1}"
            folder = args.sets / f"{model.lower()}{first}"
            print(f"{name}: making recordings if missing", file=sys.stderr, flush=True)
            make_set(model, first, args.towers, args.duration, folder)
            folders.append((name, folder))
            if args.families and model in FAMILY_MODELS:
                more = args.sets / f"{model.lower()}{first}x"
                make_extra_set(model, first, args.towers, args.duration, args.long_duration, more)
                extra.append((name, more))
            if args.heard_only:
                heard = args.sets / f"{model.lower()}{first}h"
                make_heard_only_set(folder, heard, HEARD_ONLY_FAMILIES)
                extra.append((f"{name} heard", heard))
    recordings = [r for _, folder in folders + extra for r in sorted(folder.glob("*.bin"))]
    stream = cpu = 0.0
    with ProcessPoolExecutor(args.jobs) as pool:
        futures = [pool.submit(detect_one, r, args.tag) for r in recordings]
        for done, future in enumerate(futures, 1):
            _, s, c = future.result()
            stream, cpu = stream + s, cpu + c
            if done % 20 == 0 or done == len(futures):
                print(f"detected {done}/{len(futures)}", file=sys.stderr, flush=True)
    for name, folder in folders:
        print(summary_line(name, score_set(folder, args.tag)))
    for name, folder in extra:
        for family, agg in score_families(folder, args.tag).items():
            print(summary_line(f"{name} {family}", agg))
    print(f"{stream / 3600:.1f} h of stream at {stream / max(cpu, 1e-9):.0f}x real time per core")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
