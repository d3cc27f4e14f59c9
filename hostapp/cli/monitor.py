"""``towerear monitor``: live numbers from a device, in the terminal, once a second."""

from __future__ import annotations

import argparse
import contextlib
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO, TextIO

import numpy as np

from hostapp.errors import RecordingError, SourceError
from hostapp.protocol import Frame, Hello, Load, Piezo, Status
from hostapp.sources.base import ByteSource, SourceState, SourceStats

REFRESH_S = 1.0
DEFAULT_SIM_SEED = 1


def register(subparsers: Any) -> None:
    """Add the ``monitor`` subcommand."""
    parser = subparsers.add_parser(
        "monitor",
        help="live numbers from a device in the terminal",
        description="Print the device's HELLO, then once a second the load and piezo level "
        "of every tower level, the device's STATUS counters and the link's error counts.",
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--port", help="serial port (default: find the board by USB id)")
    where.add_argument("--sim", action="store_true", help="simulated tower on a pseudo-terminal")
    where.add_argument("--simavr", action="store_true", help="the firmware running in simavr")
    parser.add_argument("--record", type=Path, metavar="FILE.bin", help="also write the raw stream")
    parser.add_argument("--duration", type=float, metavar="S", help="stop after S seconds")
    parser.add_argument("--seed", type=int, default=DEFAULT_SIM_SEED, help="tower seed for --sim")
    parser.add_argument(
        "--scenario", default="game", help="what happens on the simulated tower (--sim)"
    )
    parser.set_defaults(func=run_monitor)


class MonitorView:
    """Keeps what the table shows; fed with frames, rendered once a second.

    Pure bookkeeping: no I/O, no threads, so it can be tested with made-up frames.
    """

    def __init__(self) -> None:
        self.hello: Hello | None = None
        self.status: Status | None = None
        self.load_values: np.ndarray | None = None
        self.load_valid: np.ndarray | None = None
        self.load_readings = 0
        self._piezo: list[np.ndarray] = []
        self._new_hello = False

    def add(self, frames: list[Frame]) -> None:
        """Take the frames that arrived since the last call."""
        for frame in frames:
            msg = frame.msg
            if isinstance(msg, Piezo):
                self._piezo.append(msg.samples)
            elif isinstance(msg, Load):
                self.load_values = msg.values
                self.load_valid = (msg.valid >> np.arange(msg.values.size)) & 1 == 1
                self.load_readings += 1
            elif isinstance(msg, Status):
                self.status = msg
            elif isinstance(msg, Hello):
                # The boot HELLO and the answer to GET_INFO often both arrive.
                self._new_hello = self._new_hello or msg != self.hello
                self.hello = msg

    def forget_hello(self) -> None:
        """After a reconnection the next HELLO is news even if unchanged."""
        self.hello = None

    def take_hello(self) -> Hello | None:
        """The HELLO if a new one arrived since the last call (to print it once)."""
        if not self._new_hello:
            return None
        self._new_hello = False
        return self.hello

    def render(self, elapsed_s: float, stats: SourceStats) -> str:
        """The table for the last interval; resets the piezo window."""
        d = stats.decoder
        lines = [
            f"t={elapsed_s:6.1f} s  {stats.state.value:<12} {stats.bytes_per_s / 1000:6.1f} kB/s"
            f"  frames {d.frames_ok}  lost {d.lost_messages}  crc {d.crc_errors}"
            f"  framing {d.framing_errors + d.oversize + d.bad_length}"
            f"  unknown {d.unknown_types}"
        ]
        n = self._channel_count()
        lines.append("level     " + "".join(f"{k:>9}" for k in range(n)))
        lines.append("load      " + "".join(self._load_cells(n)))
        p2p, rms = self._piezo_levels(n)
        lines.append("piezo p2p " + "".join(p2p))
        lines.append("piezo rms " + "".join(rms))
        if self.status is not None:
            s = self.status
            lines.append(
                f"status    uptime {s.uptime_ms / 1000:.0f} s  overruns {s.piezo_overruns}"
                f"  tx_dropped {s.tx_dropped}  load_timeouts {s.load_timeouts}"
                f"  cpu {s.cpu_load_pct} %  flags 0x{s.flags:02x}"
            )
        self._piezo = []
        return "\n".join(lines)

    def _channel_count(self) -> int:
        if self.hello is not None:
            return max(self.hello.n_piezo, self.hello.n_load)
        if self.load_values is not None:
            return int(self.load_values.size)
        return 8

    def _load_cells(self, n: int) -> Iterator[str]:
        for k in range(n):
            if self.load_values is None or self.load_valid is None or k >= self.load_values.size:
                yield f"{'':>9}"
            elif self.load_valid[k]:
                yield f"{int(self.load_values[k]):>9}"
            else:
                yield f"{'lifted':>9}"

    def _piezo_levels(self, n: int) -> tuple[list[str], list[str]]:
        if not self._piezo:
            return [f"{'':>9}"] * n, [f"{'':>9}"] * n
        window = np.concatenate(self._piezo).astype(np.float64)
        p2p = window.max(axis=0) - window.min(axis=0)
        rms = window.std(axis=0)  # AC rms about the mid-scale bias
        cells = range(min(n, window.shape[1]))
        return [f"{p2p[k]:>9.0f}" for k in cells], [f"{rms[k]:>9.1f}" for k in cells]


def describe_hello(hello: Hello) -> str:
    """One line about the device."""
    return (
        f"device {hello.device_id.hex()}: protocol {hello.proto},"
        f" firmware {hello.firmware_version},"
        f" {hello.n_piezo} piezo @ {hello.piezo_rate_hz} Hz ({hello.adc_bits}-bit),"
        f" {hello.n_load} load @ {hello.load_rate_hz} Hz"
    )


def watch(
    source: ByteSource,
    out: TextIO,
    *,
    duration_s: float | None,
    refresh_s: float = REFRESH_S,
    clock: Callable[[], float] = time.monotonic,
) -> None:
    """Print the monitor's output for a started ``source`` until ``duration_s`` passes."""
    view = MonitorView()
    started = clock()
    next_print = started + refresh_s
    last_state = source.state
    while duration_s is None or clock() - started < duration_s:
        state = source.state  # before the frames: a reconnection's HELLO follows it
        if state is not last_state:
            stats = source.stats()
            if state is SourceState.DISCONNECTED:
                what = "port lost" if stats.connects else "cannot open the port"
                print(f"{what} ({stats.last_error}); waiting for it to come back", file=out,
                      flush=True)
            elif state is SourceState.CONNECTED and stats.connects > 1:
                print("port back; reconnected", file=out, flush=True)
                view.forget_hello()
            last_state = state
        view.add(source.get_frames(0.05))
        hello = view.take_hello()
        if hello is not None:
            print(describe_hello(hello), file=out, flush=True)
        if clock() >= next_print:
            print(view.render(clock() - started, source.stats()), file=out, flush=True)
            next_print += refresh_s
        if source.finished:
            break


@contextlib.contextmanager
def _recording_file(path: Path | None) -> Iterator[BinaryIO | None]:
    if path is None:
        yield None
        return
    try:
        handle = path.open("wb")
    except OSError as exc:
        raise RecordingError(f"cannot write the recording {path}: {exc.strerror}") from exc
    with handle:
        yield handle


@contextlib.contextmanager
def _open_source(
    args: argparse.Namespace, tap: Callable[[bytes], None] | None
) -> Iterator[ByteSource]:
    from hostapp.sources.serial_port import SerialSource, describe_ports, find_device_port

    if args.sim:
        from hostapp.sources.pty_server import PtyDeviceServer
        from hostapp.sources.sim_device import tower_device

        device = tower_device(seed=args.seed, scenario=args.scenario)
        with tempfile.TemporaryDirectory(prefix="towerear-sim-") as folder:
            with PtyDeviceServer(device, link_path=Path(folder) / "tty") as server:
                print(f"simulated tower (seed {args.seed}, scenario {args.scenario})"
                      f" on {server.path}", file=sys.stderr, flush=True)
                with SerialSource(server.path, tap=tap) as source:
                    yield source
        return
    if args.simavr:
        try:
            from hostapp.sources.simavr import SimavrSource
        except ImportError as exc:
            raise SourceError(f"the simavr source is not available here ({exc})") from exc
        with SimavrSource(seed=args.seed, tap=tap) as simavr_source:
            yield simavr_source
        return
    if args.port and not Path(args.port).exists():
        # Once open, a vanishing port is waited for; a mistyped one is an error.
        raise SourceError(f"serial port {args.port} does not exist; {describe_ports(None)}")
    port = args.port or find_device_port()
    with SerialSource(port, tap=tap) as source:
        yield source


def _writer(handle: BinaryIO) -> Callable[[bytes], None]:
    def write(data: bytes) -> None:
        handle.write(data)

    return write


def run_monitor(args: argparse.Namespace) -> int:
    """Run the monitor until ``--duration`` passes or Ctrl-C; exit status 0."""
    if args.duration is not None and args.duration <= 0:
        raise SourceError("--duration must be a positive number of seconds")
    with _recording_file(args.record) as record:
        tap = None if record is None else _writer(record)
        try:
            with _open_source(args, tap) as source:
                watch(source, sys.stdout, duration_s=args.duration)
                tap_error = source.stats().tap_error
        except KeyboardInterrupt:
            print("", file=sys.stderr)
            tap_error = ""
    if tap_error:
        raise RecordingError(f"writing the recording {args.record} stopped early: {tap_error}")
    if args.record is not None:
        print(f"recording written to {args.record}", file=sys.stderr)
    return 0
