"""``towerear simulate``: a recording of the simulated tower, with its ground truth beside it."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from pathlib import Path
from typing import Any

from hostapp.errors import RecordingError, SourceError
from hostapp.sources.sim_device import Damage, SimulatedDevice, scenario_names, tower_device

TRUTH_FORMAT = "towerear-simulate/1"
STEP_S = 1.0  # simulated seconds per step: bounded memory, frequent progress
PROGRESS_MIN_S = 120.0  # runs shorter than this print no progress


def register(subparsers: Any) -> None:
    """Add the ``simulate`` subcommand."""
    parser = subparsers.add_parser(
        "simulate",
        help="write a recording of the simulated tower and its ground truth",
        description="Run a scripted session on a simulated tower and write the device's byte "
        "stream (FILE.bin, contracts.md section 2) and FILE.truth.json beside it "
        "(docs/protocol.md, 'Simulated recordings').",
    )
    parser.add_argument("--seed", type=int, required=True, help="tower and session seed (>= 0)")
    parser.add_argument("--duration", type=float, required=True, metavar="S",
                        help="simulated seconds")
    parser.add_argument("--scenario", default="game",
                        help="what happens (default: game); an unknown name lists the known ones")
    parser.add_argument("--out", type=Path, required=True, metavar="FILE.bin")
    parser.add_argument("--clock-offset-us", type=int, metavar="US",
                        help="device clock at boot (default: derived from the seed)")
    parser.add_argument("--bit-flips", type=float, default=0.0, metavar="P",
                        help="probability per frame of one flipped bit")
    parser.add_argument("--drops", type=float, default=0.0, metavar="P",
                        help="probability per frame of losing a run of its bytes")
    parser.add_argument("--damage-seed", type=int, default=0, metavar="N")
    parser.set_defaults(func=run_simulate)


def truth_path(out: Path) -> Path:
    """Where the ground truth of recording ``out`` goes: ``FILE.truth.json`` beside it."""
    return out.with_name((out.stem if out.suffix == ".bin" else out.name) + ".truth.json")


def _check(args: argparse.Namespace) -> Damage | None:
    if args.seed < 0:
        raise SourceError("--seed must be a non-negative integer")
    if not args.duration > 0:
        raise SourceError("--duration must be a positive number of seconds")
    if args.scenario not in scenario_names():
        known = ", ".join(sorted(scenario_names()))
        raise SourceError(f"unknown scenario {args.scenario!r}; known scenarios: {known}")
    for name in ("bit_flips", "drops"):
        if not 0.0 <= getattr(args, name) <= 1.0:
            raise SourceError(f"--{name.replace('_', '-')} must be a probability in 0..1")
    if args.bit_flips + args.drops > 1.0:
        raise SourceError("--bit-flips and --drops together must not exceed 1")
    if args.bit_flips or args.drops:
        return Damage(bit_flip_prob=args.bit_flips, drop_prob=args.drops, seed=args.damage_seed)
    return None


def write_recording(device: SimulatedDevice, duration_s: float, out: Path) -> int:
    """Run ``device`` for ``duration_s`` into ``out`` (atomically); returns bytes written."""
    partial = out.with_name(out.name + ".part")
    written = 0
    show_progress = duration_s >= PROGRESS_MIN_S
    next_report = 0.1
    try:
        with partial.open("wb") as handle:
            hello = device.generate(0.0)  # the boot HELLO
            handle.write(hello)
            written += len(hello)
            done_s = 0.0
            while done_s < duration_s - 1e-9:
                step = min(STEP_S, duration_s - done_s)
                data = device.generate(step)
                handle.write(data)
                written += len(data)
                done_s += step
                if show_progress and done_s / duration_s >= next_report:
                    print(f"  {done_s / duration_s:4.0%} of {duration_s:g} s", file=sys.stderr,
                          flush=True)
                    next_report += 0.1
        os.replace(partial, out)
    except OSError as exc:
        with contextlib.suppress(OSError):
            partial.unlink()
        raise RecordingError(f"cannot write the recording {out}: {exc.strerror}") from exc
    return written


def truth_document(
    device: SimulatedDevice, args: argparse.Namespace, out: Path
) -> dict[str, Any]:
    """The ground truth with the device's clock and the stream-time mapping added."""
    physics: Any = device.physics
    truth: dict[str, Any] = physics.truth.to_json()
    origin = device.stream_origin_sim_s or 0.0
    scale = device.clock_scale
    for event in truth.get("events", []):
        if isinstance(event.get("t"), int | float):
            event["t_stream"] = (event["t"] - origin) * scale
    damage = device.damage
    truth["simulate"] = {
        "format": TRUTH_FORMAT,
        "recording": out.name,
        "seed": args.seed,
        "scenario": args.scenario,
        "duration_s": args.duration,
        "device_id_hex": device.info.device_id.hex(),
        "clock_offset_us": args.clock_offset_us
        if args.clock_offset_us is not None
        else device.initial_clock_offset_us,
        "clock_scale": scale,
        "stream_origin_sim_s": origin,
        "frames_sent": device.frames_sent,
        "damage": None
        if damage is None
        else {
            "bit_flip_prob": damage.bit_flip_prob,
            "drop_prob": damage.drop_prob,
            "seed": damage.seed,
            "frames_damaged": len(damage.damaged_seqs),
            "damaged_seqs": damage.damaged_seqs,
        },
    }
    return truth


def run_simulate(args: argparse.Namespace) -> int:
    """Write FILE.bin and FILE.truth.json; exit status 0."""
    damage = _check(args)
    out: Path = args.out
    if out.is_dir():
        raise RecordingError(f"--out {out} is a directory; give a file name like run.bin")
    device = tower_device(
        seed=args.seed,
        scenario=args.scenario,
        duration_s=args.duration,
        clock_offset_us=args.clock_offset_us,
        damage=damage,
    )
    size = write_recording(device, args.duration, out)
    truth_file = truth_path(out)
    document = truth_document(device, args, out)
    partial = truth_file.with_name(truth_file.name + ".part")
    try:
        partial.write_text(json.dumps(document, indent=1) + "\n")
        os.replace(partial, truth_file)
    except OSError as exc:
        raise RecordingError(f"cannot write the ground truth {truth_file}: {exc.strerror}") from exc
    print(f"wrote {out} ({size} bytes, {device.frames_sent} frames, {args.duration:g} s) "
          f"and {truth_file}", file=sys.stderr)
    return 0
