#!/usr/bin/env python3
"""Fuzz ``towerear detect`` with damaged copies of real recordings: it must never crash.

Each run takes one of the given recordings, damages a copy of its bytes in
one to three ways (bit flips; chunks cut, zeroed, duplicated, or spliced in
from a recording of another time; random garbage inserted; the end cut
off) and detects it in one of three ways: as arrays (``towerear detect``),
message by message (the live app's path) or acoustic-only. A run that
raises is a crash: its damaged copy is kept and the traceback printed. The
damage is drawn from the run's seed, so a crash is made again by its seed.

Usage::

    .venv/bin/python tools/fuzz_detect.py --runs 800 --seed 5000 /tmp/sets/*/game_t*.bin
    .venv/bin/python tools/fuzz_detect.py --runs 1 --seed 1581 --keep /tmp/fz RECORDINGS...

Exit status 1 when any run crashed.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import traceback
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

DAMAGE = ("flips", "cut", "garbage", "duplicate", "truncate", "zeros", "splice")
READS = ("arrays", "arrays", "messages", "acoustic")


def damaged(data: bytes, sources: list[Path], rng: random.Random) -> tuple[bytes, str]:
    """A damaged copy of ``data`` and what was done to it."""
    b = bytearray(data)
    kinds = rng.sample([k for k in DAMAGE if k != "truncate"], rng.randint(1, 3))
    if rng.random() < 0.1:
        kinds = ["truncate"]
    for kind in kinds:
        if not b:
            break
        if kind == "flips":
            for _ in range(rng.randint(1, 2000)):
                i = rng.randrange(len(b))
                b[i] ^= 1 << rng.randrange(8)
        elif kind == "cut":
            for _ in range(rng.randint(1, 30)):
                i = rng.randrange(len(b))
                del b[i : i + rng.randint(1, 20_000)]
        elif kind == "garbage":
            for _ in range(rng.randint(1, 30)):
                i = rng.randrange(len(b))
                b[i:i] = rng.randbytes(rng.randint(1, 5000))
        elif kind == "duplicate":
            for _ in range(rng.randint(1, 10)):
                i = rng.randrange(len(b))
                j = min(len(b), i + rng.randint(1, 50_000))
                b[j:j] = b[i:j]
        elif kind == "truncate":
            b = b[: rng.randrange(len(b))]
        elif kind == "zeros":
            for _ in range(rng.randint(1, 10)):
                i = rng.randrange(len(b))
                n = min(rng.randint(1, 30_000), len(b) - i)
                b[i : i + n] = bytes(n)
        elif kind == "splice":
            other = rng.choice(sources).read_bytes()
            i, j = rng.randrange(len(b)), rng.randrange(len(other))
            b[i:i] = other[j : j + rng.randint(1000, 400_000)]
    return bytes(b), "+".join(kinds)


def fuzz_one(seed: int, sources: list[Path], keep: Path) -> str | None:
    """One run; None when it went through, else what crashed (its copy kept in ``keep``)."""
    from hostapp.cli.detect import detect_recording
    from hostapp.errors import RecordingError
    from hostapp.pipeline import DetectionPipeline
    from hostapp.recording import RecordingReader

    rng = random.Random(seed)
    source = rng.choice(sources)
    data, damage = damaged(source.read_bytes(), sources, rng)
    read = rng.choice(READS)
    with tempfile.NamedTemporaryFile(suffix=".bin", dir=keep, delete=False) as handle:
        handle.write(data)
        path = Path(handle.name)
    try:
        if read == "messages":
            pipeline = DetectionPipeline()
            for timed in RecordingReader(path).chunks():
                pipeline.feed(timed)
            pipeline.finish()
        else:
            detect_recording(path, ignore_load=read == "acoustic")
    except RecordingError:
        pass  # nothing decodable left: `towerear detect` exits 2 with one line
    except Exception:  # any other exception is the crash looked for
        return (f"seed {seed}: {source.name}, {damage}, read as {read}; kept as {path}\n"
                f"{traceback.format_exc()}")
    path.unlink()
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("recordings", nargs="+", type=Path, help="recordings to damage")
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0, help="seed of the first run")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--keep", type=Path, default=Path(tempfile.gettempdir()),
                        help="where a crashing copy is kept")
    args = parser.parse_args(argv)
    missing = [str(p) for p in args.recordings if not p.is_file()]
    if missing:
        parser.error(f"no such recording: {missing[0]}")
    args.keep.mkdir(parents=True, exist_ok=True)
    seeds = range(args.seed, args.seed + args.runs)
    crashes = 0
    with ProcessPoolExecutor(args.jobs) as pool:
        jobs = pool.map(fuzz_one, seeds, [args.recordings] * args.runs, [args.keep] * args.runs)
        for done, found in enumerate(jobs, 1):
            if found:
                crashes += 1
                print(found, flush=True)
            if done % 50 == 0 or done == args.runs:
                print(f"fuzz_detect: {done}/{args.runs} runs, {crashes} crashed",
                      file=sys.stderr, flush=True)
    return 1 if crashes else 0


if __name__ == "__main__":
    sys.exit(main())
