"""``towerear calibrate``: the guided calibration in the terminal.

With a device (``--port``, or found by USB id) the user follows the prompts
at the tower; with ``--sim`` a simulated user calibrates the simulated tower
unattended, as a demonstration. ``--report``, ``--health``, ``--export``
and ``--import`` work on the stored profile of a device.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hostapp.calibration.coins import COINS, ReferenceMass, coin, typed_mass
from hostapp.calibration.profile import ProfileStore
from hostapp.errors import CalibrationError, TowerearError
from hostapp.paths import data_dir

if TYPE_CHECKING:  # the session pulls in scipy.signal: only when calibrating
    from hostapp.calibration.feed import FrameFeeder
    from hostapp.calibration.health import ReadingCollector
    from hostapp.calibration.tower_session import TowerCalibration, TowerCalibrationPlan


def register(subparsers: Any) -> None:
    """Add the ``calibrate`` subcommand."""
    coins = ", ".join(c.key for c in COINS)
    parser = subparsers.add_parser(
        "calibrate", help="calibrate the sensors level by level (guided)",
        description="Guided calibration of each level's load cell and acoustics. "
                    f"Coins: {coins}.",
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--port", help="serial port of the device (default: found by USB id)")
    where.add_argument("--sim", action="store_true",
                       help="calibrate the simulated tower with a simulated user")
    parser.add_argument("--seed", type=int, default=1, help="simulated tower (with --sim)")
    parser.add_argument("--levels", default="7,6,5,4,3,2,1,0",
                        help="levels to calibrate, in order (default: all, top down)")
    parser.add_argument("--coin", default="eur-1", help="reference coin (default eur-1)")
    parser.add_argument("--mass", type=float, help="reference mass in grams (instead of a coin)")
    parser.add_argument("--second-coin", help="second reference coin, to check linearity")
    parser.add_argument("--second-mass", type=float, help="second reference mass in grams")
    parser.add_argument("--cubes", type=int, default=5, help="cubes to weigh per level")
    parser.add_argument("--report", nargs="?", const="", metavar="DIR",
                        help="write the calibration report (default: the data directory)")
    parser.add_argument("--health", action="store_true",
                        help="only check the tower's health before a game")
    parser.add_argument("--device-id", help="device for --report/--export without a device")
    parser.add_argument("--export", metavar="FILE", help="export the device's profile")
    parser.add_argument("--import", dest="import_file", metavar="FILE",
                        help="import a profile for the connected device")
    parser.set_defaults(func=run_calibrate)


def _reference(coin_key: str | None, grams: float | None) -> ReferenceMass | None:
    try:
        if grams is not None:
            return typed_mass(grams)
        return coin(coin_key) if coin_key else None
    except (KeyError, ValueError) as exc:
        raise CalibrationError(str(exc.args[0])) from exc


def _levels(text: str) -> tuple[int, ...]:
    try:
        levels = tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError as exc:
        raise CalibrationError(
            f"--levels takes level numbers 0-7 separated by commas: {text!r}"
        ) from exc
    if not levels or any(not 0 <= lv <= 7 for lv in levels) or len(set(levels)) != len(levels):
        raise CalibrationError(f"--levels takes distinct level numbers 0-7: {text!r}")
    return levels


class _Progress:
    """Prints each new prompt on its own line and a progress bar on stderr."""

    def __init__(self) -> None:
        self.last = ""
        self.tty = sys.stderr.isatty()

    def __call__(self, session: TowerCalibration) -> None:
        if session.prompt != self.last:
            self.last = session.prompt
            print(f"[{100 * session.progress:3.0f} %] {session.prompt}", flush=True)
        elif self.tty:
            bar = "#" * int(30 * session.progress)
            print(f"\r  {bar:<30} {100 * session.progress:3.0f} %", end="", file=sys.stderr)


def run_calibrate(args: argparse.Namespace) -> int:
    """Run the terminal calibration or one of the profile operations."""
    store = ProfileStore()
    if args.export or args.report is not None and not (args.sim or args.port):
        device = args.device_id or _only_device(store)
        if args.export:
            path = store.export(device, Path(args.export))
            print(f"exported the profile of device {device} to {path}")
        if args.report is not None:
            _write_report(store, device, args.report)
        return 0
    from hostapp.calibration.tower_session import TowerCalibrationPlan

    reference = _reference(args.coin, args.mass)
    second = _reference(args.second_coin, args.second_mass)
    plan = TowerCalibrationPlan(levels=_levels(args.levels), reference=reference,
                                second_reference=second, n_cubes=args.cubes)
    if args.sim and args.health:
        return _health_simulated(args, store)
    if args.sim:
        return _calibrate_simulated(args, store, plan, reference, second)
    return _calibrate_device(args, store, plan)


def _only_device(store: ProfileStore) -> str:
    devices = store.device_ids()
    if len(devices) == 1:
        return devices[0]
    if not devices:
        raise CalibrationError("no calibration profile is stored yet: calibrate first")
    raise CalibrationError(f"several devices have profiles ({', '.join(devices)}): "
                           "name one with --device-id")


def _write_report(store: ProfileStore, device: str, directory: str) -> None:
    from hostapp.calibration.report import grade_level, write_report

    profile = store.load(device)
    target = Path(directory) if directory else data_dir() / "reports" / device
    path = write_report(profile, target)
    grades = [grade_level(profile, level) for level in range(len(profile.load))]
    print(f"report written to {path}")
    for grade in grades:
        verdict = "pass" if grade.passed else "FAIL (" + "; ".join(grade.reasons) + ")"
        print(f"  level {grade.level}: {verdict}")


def _finish(args: argparse.Namespace, store: ProfileStore, session: TowerCalibration) -> int:
    profile = session.result()
    path = store.save(profile)
    print(f"\nsaved the profile of device {profile.device_id} to {path}")
    for level in session.plan.levels:
        cell = profile.load[level]
        if cell is not None:
            cube = f", cube {cell.cube_mass_g:.3f} ± {cell.cube_mass_uncertainty_g:.3f} g" \
                if cell.cube_mass_g is not None and cell.cube_mass_uncertainty_g is not None else ""
            print(f"  level {level}: {cell.counts_per_gram:.1f} ± "
                  f"{cell.counts_per_gram_uncertainty:.1f} counts/g, noise "
                  f"{cell.noise_g_rms:.4f} g rms, drift {cell.drift_g_per_min:+.4f} g/min{cube}")
    if args.report is not None:
        _write_report(store, profile.device_id, args.report)
    return 0


def _calibrate_simulated(args: argparse.Namespace, store: ProfileStore,
                         plan: TowerCalibrationPlan, reference: ReferenceMass | None,
                         second: ReferenceMass | None) -> int:
    from hostapp.calibration.simulated import calibrate_simulated
    from hostapp.calibration.tower_session import TowerCalibration

    assert reference is not None
    progress = _Progress()

    def factory(device: str) -> TowerCalibration:
        previous, _why = store.load_for_device(device)
        return TowerCalibration(plan, device, previous=previous)

    print(f"calibrating simulated tower {args.seed} with a simulated user")
    session, _rig = calibrate_simulated(factory, seed=args.seed, reference=reference,
                                        second_reference=second, on_tick=progress)
    if not session.finished:
        raise CalibrationError("the simulated calibration did not finish; nothing was saved")
    return _finish(args, store, session)


def _calibrate_device(args: argparse.Namespace, store: ProfileStore,
                      plan: TowerCalibrationPlan) -> int:
    from hostapp.calibration.feed import FrameFeeder
    from hostapp.calibration.tower_session import TowerCalibration
    from hostapp.sources.base import SourceState
    from hostapp.sources.serial_port import SerialSource, find_device_port

    port = args.port or find_device_port()
    source = SerialSource(port)
    feeder = FrameFeeder()
    progress = _Progress()
    source.start()
    try:
        deadline = time.monotonic() + 5.0
        while feeder.device_id is None:
            if time.monotonic() > deadline:
                raise TowerearError(f"no HELLO from the device on {port} within 5 s")
            feeder.feed(source.get_frames(timeout_s=0.2))
        device = feeder.device_id
        assert device is not None
        if args.import_file:
            store.import_file(Path(args.import_file), device_id=device)
            print(f"imported {args.import_file} for device {device}")
            return 0
        previous, why = store.load_for_device(device)
        if args.health:
            return _health(source, feeder, previous, why)
        session = TowerCalibration(plan, device, previous=previous)
        feeder.consumer = session
        print(f"calibrating device {device} on {port}; Ctrl-C aborts without saving")
        while not session.finished:
            feeder.feed(source.get_frames(timeout_s=0.1))
            if source.stats().state is SourceState.DISCONNECTED:
                print("the device is disconnected: waiting for it to come back", file=sys.stderr)
            progress(session)
        return _finish(args, store, session)
    except KeyboardInterrupt:
        print("\ncalibration aborted; the previous profile is unchanged", file=sys.stderr)
        return 130
    finally:
        source.stop()


def _health_simulated(args: argparse.Namespace, store: ProfileStore) -> int:
    from hostapp.calibration.feed import FrameFeeder
    from hostapp.calibration.health import ReadingCollector
    from hostapp.calibration.simulated import SimulatedRig

    rig = SimulatedRig(args.seed)
    feeder = FrameFeeder()
    rig.step(feeder, 0.1)
    assert feeder.device_id is not None
    profile, why = store.load_for_device(feeder.device_id)
    collected = ReadingCollector()
    feeder.consumer = collected
    rig.step(feeder, 3.0)
    return _report_health(collected, profile, why)


def _report_health(collected: ReadingCollector, profile: Any, why: str | None) -> int:
    findings = collected.check(profile)
    if not findings:
        raise TowerearError("no load readings arrived: is the device streaming?")
    if why:
        print(why)
    for f in findings:
        print(f"  {'ok  ' if f.ok else 'FAIL'} {f.what}" + (f"  -> {f.fix}" if f.fix else ""))
    return 0 if all(f.ok for f in findings) else 1


def _health(source: Any, feeder: FrameFeeder, profile: Any, why: str | None) -> int:
    from hostapp.calibration.health import ReadingCollector

    collected = ReadingCollector()
    feeder.consumer = collected
    print("listening to the quiet tower for 3 s ...")
    end = time.monotonic() + 3.0
    while time.monotonic() < end:
        feeder.feed(source.get_frames(timeout_s=0.1))
    return _report_health(collected, profile, why)
