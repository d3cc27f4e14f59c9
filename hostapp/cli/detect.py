"""``towerear detect RECORDING [--calibration FILE]`` (contracts.md section 3)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from dsp.detect.calibration import DetectorCalibration
from hostapp.pipeline import DetectionPipeline
from hostapp.recording import RecordingReader


def register(subparsers: Any) -> None:
    """Add the ``detect`` subcommand."""
    parser = subparsers.add_parser(
        "detect",
        help="landings and other events of a recording, as JSON Lines",
        description=(
            "Run the live detection pipeline over a recording as fast as possible and print "
            "one JSON event per line on stdout; diagnostics go to stderr."
        ),
    )
    parser.add_argument("recording", type=Path, help="a recording (*.bin)")
    parser.add_argument(
        "--calibration",
        type=Path,
        metavar="FILE",
        help="a calibration profile (JSON) of this tower; without it the detector learns",
    )
    parser.set_defaults(func=run_detect)


@dataclass
class DetectResult:
    """What :func:`detect_recording` found.

    Attributes
    ----------
    events : list of dict
        The events as contract JSON objects, in the order decided.
    diagnostics : dict
        Decoder and detector counters, seconds of stream and of processing.
    learnt : DetectorCalibration or None
        What the detector learnt (to start the next session from).
    """

    events: list[dict[str, Any]]
    diagnostics: dict[str, Any]
    learnt: DetectorCalibration | None


def detect_recording(
    path: Path,
    *,
    calibration: DetectorCalibration | None = None,
    out: TextIO | None = None,
    ignore_load: bool = False,
) -> DetectResult:
    """Detect events in a recording; optionally print each as a JSON line when decided.

    ``ignore_load`` drops the LOAD messages before the pipeline, as if the
    piezos came alone (an audio interface): acoustic-only detection.

    Raises
    ------
    RecordingError
        If the file cannot be used at all.
    """
    started = time.perf_counter()
    reader = RecordingReader(path)
    pipeline = DetectionPipeline(calibration=calibration)
    events: list[dict[str, Any]] = []

    def emit(batch: list[Any]) -> None:
        for event in batch:
            line = event.to_json()
            events.append(line)
            if out is not None:
                out.write(json.dumps(line) + "\n")

    for block in reader.blocks():
        emit(pipeline.feed_block(block, with_load=not ignore_load))
    emit(pipeline.finish())
    if out is not None:
        out.flush()
    diagnostics: dict[str, Any] = {
        "decoder": {**reader.stats.as_dict(), "clock_restarts": reader.clock_restarts,
                    "clock_outliers": reader.clock_outliers},
        "pipeline": {
            k: v for k, v in vars(pipeline.stats).items() if k != "extra"
        },
        "seconds_processing": time.perf_counter() - started,
    }
    if pipeline.detector is not None:
        diag = pipeline.detector.diagnostics()
        diagnostics["detector"] = {
            **vars(diag.fusion),
            "piezo_filled_s": diag.piezo_filled_s,
            "piezo_gaps": diag.piezo_gaps,
            "piezo_dropped_sets": diag.piezo_dropped_sets,
            "load_rows_dropped": diag.load_rows_dropped,
            "rocking_hz": round(diag.rocking_hz, 2),
            "shaken_s": round(diag.shaken_s, 1),
            "swayed_s": round(diag.swayed_s, 1),
            "cube_counts": [round(c, 1) for c in diag.cube_counts],
            "load_noise_counts": [round(s, 2) for s in diag.load_noise_counts],
            "silent_cells": sorted(pipeline.detector.fusion.silent_cells.dead),
            "deaf_discs": sorted(pipeline.detector.fusion.deaf_discs.deaf),
            "flaky_cells": list(pipeline.detector.fusion.openings.flaky),
            "disc_gains_db": [round(g, 1) for g in diag.disc_gains_db],
            "hum_hz": [round(hz, 1) for hz in diag.hum_hz],
        }
        diagnostics["seconds_stream"] = max(
            pipeline.detector.piezo.t_done_s, pipeline.detector.load.level_t.max(initial=0.0)
        )
    learnt = pipeline.detector.learnt_calibration() if pipeline.detector else None
    return DetectResult(events, diagnostics, learnt)


def run_detect(args: argparse.Namespace) -> int:
    """Print the recording's events on stdout, counters on stderr; 0 when read to the end."""
    calibration = None
    if args.calibration is not None:
        from hostapp.calibration.detector_bridge import load_detector_calibration

        calibration = load_detector_calibration(args.calibration)
    result = detect_recording(args.recording, calibration=calibration, out=sys.stdout)
    events, diag = result.events, result.diagnostics
    decoder = diag["decoder"]
    # Extension messages, a first frame cut by the recording's start and
    # device reboots are allowed by the contract: counted, but no damage.
    allowed = ("unknown_types", "partial_start", "resets")
    damage = {k: v for k, v in decoder.items()
              if v and k not in ("bytes_in", "frames_ok", *allowed)}
    skipped = {k: decoder[k] for k in allowed if decoder.get(k)}
    print(
        f"towerear detect: {len(events)} events from {decoder['frames_ok']} frames "
        f"in {diag['seconds_processing']:.2f} s; damage: "
        + (", ".join(f"{k}={v}" for k, v in damage.items()) or "none")
        + "".join(f"; {k}={v}" for k, v in skipped.items()),
        file=sys.stderr,
    )
    if "detector" in diag:
        print(f"towerear detect: detector {json.dumps(diag['detector'])}", file=sys.stderr)
        faults = (
            ("silent_cells", "load cell", "read nothing; landings there were heard only"),
            ("deaf_discs", "disc", "heard none of its plate's landings"),
            ("flaky_cells", "load cell",
             "stopped answering now and then with no module lifted; check its solder joints"),
        )
        for key, sensor, what in faults:
            levels = diag["detector"].get(key)
            if levels:
                named = ", ".join(str(level) for level in levels)
                which = (f"{sensor} of level {named}" if len(levels) == 1
                         else f"{sensor}s of levels {named}")
                print(f"towerear detect: the {which} {what}", file=sys.stderr)
        hum = diag["detector"].get("hum_hz")
        if hum:
            print("towerear detect: mains hum on the contact microphones at "
                  f"{', '.join(f'{hz:.0f}' for hz in hum)} Hz, filtered out (a ground loop?)",
                  file=sys.stderr)
    return 0
