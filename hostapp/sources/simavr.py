"""The real firmware running in simavr, fed by the simulated tower.

The harness ``firmware/build/towerear-sim`` (GPL-3.0, a separate program)
loads the firmware ELF into a simulated ATmega328P, feeds its ADC and its
eight emulated HX711s from a *scenario file*, and hands out the UART bytes.
This module is the Python side:

- :func:`build_firmware` runs ``make`` once (under a lock, so parallel test
  workers can all call it);
- :func:`write_scenario` turns a :class:`dsp.sim.SensorBlock` (plus host
  bytes to send at given times) into the scenario file;
- :func:`run_simavr` runs N simulated seconds as fast as the host can and
  returns the captured bytes and the harness's measurements (tests, bench);
- :class:`SimavrSource` is a live source like the serial port: the
  harness paced to the wall clock, its UART on two pipes, for
  ``towerear monitor --simavr`` and the app's source list;
- :func:`scripted_session` renders a short session with throws and one lift
  from the tower simulator, the default scenario.

Scenario file (little-endian; ``firmware/sim/scenario.h`` reads it)::

    char[8] "TWRSCN01"
    u32 piezo_rate_hz, n_sets, n_load, n_cmds, n_piezo (8), n_load_channels (8)
    u16 piezo[n_sets][8]          ADC codes 0..1023
    u32 load_t_us[n_load]         when each HX711 reading is ready (from the first piezo set)
    i32 load[n_load][8]           HX711 counts (signed 24-bit)
    u8  load_valid[n_load]        bit k: channel k connected
    n_cmds x (u32 t_us, u16 len, u8 bytes[len])   host bytes sent at t_us
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import select
import shutil
import struct
import subprocess
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from hostapp.errors import SourceError
from hostapp.i18n import tr
from hostapp.protocol import constants as c
from hostapp.sources.base import ByteSource
from hostapp.sources.sim_device import SensorBlockLike as SensorData

FIRMWARE_DIR = Path(__file__).resolve().parents[2] / "firmware"
SCENARIO_MAGIC = b"TWRSCN01"
N_CHANNELS = c.NOMINAL_N_PIEZO
ADC_MAX = (1 << c.NOMINAL_ADC_BITS) - 1
PIEZO_RATE_HZ = c.NOMINAL_PIEZO_RATE_HZ  # the firmware's rate; scenario rows are one set each
_S24_MIN, _S24_MAX = -(1 << 23), (1 << 23) - 1
# A run of N simulated seconds takes about N/5 wall seconds here; this bounds
# a hung harness without cutting off a slow machine.
_WALL_S_PER_SIM_S = 4.0
_WALL_S_SLACK = 30.0


class SimavrError(SourceError):
    """The firmware or the simavr harness cannot be built or run."""


@dataclass(frozen=True)
class FirmwareBuild:
    """Paths of what :func:`build_firmware` made.

    Attributes
    ----------
    elf : Path
        The firmware image for the ATmega328P.
    harness : Path
        The simavr harness program.
    """

    elf: Path
    harness: Path


@dataclass(frozen=True)
class HostBytes:
    """Bytes the host sends to the device at a given scenario time.

    Attributes
    ----------
    t_s : float
        Scenario time (seconds from the first piezo set).
    data : bytes
        Wire bytes, e.g. ``encode_frame(Ping(7), seq)``.
    """

    t_s: float
    data: bytes


@dataclass(frozen=True)
class SimavrRun:
    """What one harness run produced.

    Attributes
    ----------
    stream : bytes
        Everything the firmware sent on its UART (a valid recording).
    stats : dict
        The harness's measurements (``--stats`` JSON): cycles, per-ISR
        cycle counts, ADC timing, HX711 and SCK figures, UART bytes.
    hx711_reads : ndarray, shape (n, 4), int64
        One row per HX711 reading the firmware clocked out completely:
        ``(t_us, channel, scenario row, value)``.
    """

    stream: bytes
    stats: dict[str, Any]
    hx711_reads: npt.NDArray[np.int64]


def build_lock(path: Path) -> contextlib.AbstractContextManager[None]:
    """An exclusive lock on ``path`` (created if needed) for the ``with`` block.

    Every ``make`` in the firmware directory runs under the same lock file, so
    processes that build at the same time (test workers) take turns.
    """

    @contextlib.contextmanager
    def held() -> Iterator[None]:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "w") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    return held()


def build_firmware(*, firmware_dir: Path = FIRMWARE_DIR) -> FirmwareBuild:
    """Build the firmware ELF and the simavr harness (``make``), if needed.

    Safe to call from several processes at once: builds are serialised by a
    lock file in the build directory, and ``make`` does nothing when
    everything is up to date.

    Raises
    ------
    SimavrError
        If the tools are missing or the build fails.
    """
    for tool in ("make", "avr-gcc", "pkg-config", "gcc"):
        if shutil.which(tool) is None:
            raise SimavrError(
                tr(
                    "building the firmware needs {tool!r}; run tools/setup.sh to install the AVR "
                    "toolchain and simavr",
                    tool=tool,
                )
            )
    if not (firmware_dir / "Makefile").is_file():
        raise SimavrError(tr("no firmware sources in {path}", path=firmware_dir))
    build = firmware_dir / "build"
    with build_lock(build / ".build.lock"):
        result = subprocess.run(
            ["make", "-s", "-C", str(firmware_dir), "firmware", "harness"],
            capture_output=True,
            text=True,
            check=False,
        )
    if result.returncode != 0:
        lines = (result.stderr or result.stdout).strip().splitlines()
        reason = lines[-1] if lines else tr("make exited with {code}", code=result.returncode)
        raise SimavrError(tr("the firmware build failed: {reason}", reason=reason))
    return FirmwareBuild(elf=build / "towerear.elf", harness=build / "towerear-sim")


def write_scenario(
    path: Path,
    block: SensorData,
    *,
    commands: Sequence[HostBytes] = (),
    piezo_rate_hz: int = PIEZO_RATE_HZ,
) -> None:
    """Write a scenario file for the harness.

    Parameters
    ----------
    path : Path
        File to write.
    block : SensorBlock
        ``piezo`` (n, 8) uint16 ADC codes, ``load_t_s`` (m,), ``load`` (m, 8)
        int32 counts, ``load_valid`` (m, 8) bool; times are taken relative to
        ``block.piezo_t0_s``.
    commands : sequence of HostBytes
        Host bytes to clock into the UART at their times.
    piezo_rate_hz : int
        Rate of the piezo rows.

    Raises
    ------
    SimavrError
        If the block does not fit the scenario format.
    """
    piezo = np.asarray(block.piezo)
    load = np.asarray(block.load)
    valid = np.asarray(block.load_valid, dtype=bool)
    load_t_s = np.asarray(block.load_t_s, dtype=np.float64)
    if piezo.ndim != 2 or piezo.shape[1] != N_CHANNELS or piezo.shape[0] == 0:
        raise SimavrError(f"a scenario needs piezo data of shape (n, {N_CHANNELS})")
    if piezo.min() < 0 or piezo.max() > ADC_MAX:
        raise SimavrError("piezo codes must be 10-bit ADC values (0..1023)")
    m = load_t_s.shape[0]
    if load.shape != (m, N_CHANNELS) or valid.shape != (m, N_CHANNELS) or m == 0:
        raise SimavrError(f"a scenario needs load data of shape (m, {N_CHANNELS}) with m > 0")
    if load.min() < _S24_MIN or load.max() > _S24_MAX:
        raise SimavrError("load counts must fit the HX711's signed 24 bits")
    t_us = np.round((load_t_s - float(block.piezo_t0_s)) * 1e6)
    if np.any(np.diff(t_us) <= 0):
        raise SimavrError("load readings must be in strictly increasing time order")
    t_us = np.clip(t_us, 0, None).astype("<u4")
    valid_bits = (valid.astype(np.uint8) << np.arange(N_CHANNELS, dtype=np.uint8)).sum(
        axis=1, dtype=np.uint8
    )
    head = SCENARIO_MAGIC + struct.pack(
        "<6I", piezo_rate_hz, piezo.shape[0], m, len(commands), N_CHANNELS, N_CHANNELS
    )
    parts = [
        head,
        piezo.astype("<u2").tobytes(),
        t_us.tobytes(),
        load.astype("<i4").tobytes(),
        valid_bits.astype(np.uint8).tobytes(),
    ]
    for cmd in sorted(commands, key=lambda c: c.t_s):
        parts.append(struct.pack("<IH", max(0, round(cmd.t_s * 1e6)), len(cmd.data)) + cmd.data)
    path.write_bytes(b"".join(parts))


def run_simavr(
    block: SensorData,
    *,
    seconds: float | None = None,
    commands: Sequence[HostBytes] = (),
    build: FirmwareBuild | None = None,
) -> SimavrRun:
    """Run the firmware in simavr on a scenario, as fast as the host allows.

    Parameters
    ----------
    block : SensorBlock
        The scenario's sensor data (see :func:`write_scenario`).
    seconds : float, optional
        Simulated seconds to run; default the length of the piezo data.
    commands : sequence of HostBytes
        Host bytes to send at given times.
    build : FirmwareBuild, optional
        Use these binaries instead of calling :func:`build_firmware`.

    Returns
    -------
    SimavrRun

    Raises
    ------
    SimavrError
        If the harness fails, stops early or takes far too long.
    """
    build = build or build_firmware()
    duration = seconds if seconds is not None else len(block.piezo) / PIEZO_RATE_HZ
    with tempfile.TemporaryDirectory(prefix="towerear-simavr-") as tmp:
        work = Path(tmp)
        write_scenario(work / "scenario.bin", block, commands=commands)
        args = [
            str(build.harness),
            str(build.elf),
            str(work / "scenario.bin"),
            "--seconds",
            f"{duration:.6f}",
            "--out",
            str(work / "uart.bin"),
            "--stats",
            str(work / "stats.json"),
            "--hx711-log",
            str(work / "hx711.log"),
        ]
        try:
            result = subprocess.run(
                args,
                capture_output=True,
                text=True,
                timeout=_WALL_S_SLACK + _WALL_S_PER_SIM_S * duration,
                check=False,
            )
        except subprocess.TimeoutExpired as exc:
            raise SimavrError(
                tr("the simavr harness did not finish {duration:g} s in time", duration=duration)
            ) from exc
        except OSError as exc:
            raise SimavrError(tr("cannot run the simavr harness: {reason}", reason=exc)) from exc
        if result.returncode != 0:
            lines = result.stderr.strip().splitlines()
            reason = lines[-1] if lines else tr("exit status {code}", code=result.returncode)
            raise SimavrError(tr("the simavr harness failed: {reason}", reason=reason))
        stats = json.loads((work / "stats.json").read_text())
        log = (work / "hx711.log").read_text().split()
        reads = np.array(log, dtype=np.int64).reshape(-1, 4)
        return SimavrRun(stream=(work / "uart.bin").read_bytes(), stats=stats, hx711_reads=reads)


def scripted_session(*, seed: int = 1, duration_s: float = 12.0) -> tuple[SensorData, Any]:
    """A short session from the tower simulator: throws, one lift, closing.

    A real game only gets to its first lift after a prologue of 8-14 throws
    (half a minute and more); this compresses the parts the firmware must
    handle into ``duration_s``: a quiet start, throws, lifting modules
    4..7 (load channels 5..7 disconnect), taking the cubes out, closing
    (they reconnect), and more throws.

    Parameters
    ----------
    seed : int
        Tower and session seed.
    duration_s : float
        Length; at least 8 s.

    Returns
    -------
    (SensorBlock, GroundTruth)
    """
    from dsp.sim import SensorBlock, TowerSimulator, draw_tower

    if duration_s < 8.0:
        raise SimavrError("a scripted session needs at least 8 s")
    sim = TowerSimulator(draw_tower(seed), seed=seed)
    plan: list[tuple[float, Callable[[], object]]] = [
        (1.0, lambda: sim.throw("red")),
        (2.5, lambda: sim.throw("blue")),
        (4.0, lambda: sim.lift(4)),
        (5.5, lambda: sim.remove_cubes(4)),
        (6.5, lambda: sim.close()),
    ]
    t = 8.0
    while t < duration_s - 1.0:
        plan.append((t, lambda: sim.throw("gray")))
        t += 2.0
    blocks = []
    now = 0.0
    for at_s, action in plan:
        blocks.append(sim.advance(at_s - now))
        now = at_s
        action()
    blocks.append(sim.advance(duration_s - now))
    return SensorBlock.concat(blocks), sim.truth


class SimavrSource(ByteSource):
    """The firmware in simavr as a live source, paced to the wall clock.

    The harness runs the scenario in a loop; its UART is connected to this
    process through two pipes (device -> host bytes, host -> device
    commands), so nothing is lost before the reader starts, unlike a
    pseudo-terminal.

    Parameters
    ----------
    block : SensorBlock, optional
        Sensor data to play (looped). Default: :func:`scripted_session`.
    seed : int
        Seed of the default session.
    duration_s : float
        Length of the default session before it repeats.
    realtime : bool
        Pace to the wall clock (False: as fast as possible, for tests).
    tap : callable, optional
        Receives every raw chunk (recordings), as for every source.
    **kwargs
        Passed to :class:`~hostapp.sources.base.ByteSource`.
    """

    def __init__(
        self,
        *,
        block: SensorData | None = None,
        seed: int = 1,
        duration_s: float = 20.0,
        realtime: bool = True,
        tap: Callable[[bytes], None] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__("firmware in simavr", tap=tap, **kwargs)
        self._block = block
        self._seed = seed
        self._duration_s = duration_s
        self._realtime = realtime
        self._proc: subprocess.Popen[bytes] | None = None
        self._stderr: Any = None
        self._out_r = -1
        self._in_w = -1
        self._tmp: tempfile.TemporaryDirectory[str] | None = None

    def _open(self) -> None:
        build = build_firmware()
        if self._block is None:
            self._block, _ = scripted_session(seed=self._seed, duration_s=self._duration_s)
        self._tmp = tempfile.TemporaryDirectory(prefix="towerear-simavr-")
        scenario = Path(self._tmp.name) / "scenario.bin"
        try:
            write_scenario(scenario, self._block)
        except SimavrError:
            self._close()
            raise
        out_r, out_w = os.pipe()
        in_r, in_w = os.pipe()
        args = [str(build.harness), str(build.elf), str(scenario), "--loop"]
        args += ["--out-fd", str(out_w), "--in-fd", str(in_r)]
        if self._realtime:
            args.append("--realtime")
        # the harness's complaints go to a file: a pipe nobody reads could block it
        self._stderr = open(Path(self._tmp.name) / "stderr.txt", "w+b")
        try:
            self._proc = subprocess.Popen(
                args, pass_fds=(out_w, in_r), stdin=subprocess.DEVNULL, stderr=self._stderr
            )
        except OSError as exc:
            for fd in (out_r, out_w, in_r, in_w):
                os.close(fd)
            self._close()
            raise SimavrError(tr("cannot start the simavr harness: {reason}", reason=exc)) from exc
        os.close(out_w)
        os.close(in_r)
        self._out_r, self._in_w = out_r, in_w

    def _read(self) -> bytes:
        if self._out_r < 0:
            raise OSError(tr("the simavr harness is not running"))
        ready, _, _ = select.select([self._out_r], [], [], 0.1)
        if not ready:
            return b""
        data = os.read(self._out_r, 65536)
        if not data:
            raise OSError(
                tr("the simavr harness stopped: {reason}", reason=self._harness_complaint())
            )
        return data

    def _harness_complaint(self) -> str:
        if self._stderr is None:
            return tr("no reason given")
        self._stderr.seek(0)
        lines = self._stderr.read().decode(errors="replace").strip().splitlines()
        return lines[-1] if lines else tr("no reason given")

    def _write(self, data: bytes) -> None:
        if self._in_w < 0:
            raise OSError(tr("the simavr harness is not running"))
        os.write(self._in_w, data)

    def _close(self) -> None:
        if self._proc is not None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=2.0)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
            self._proc = None
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None
        for fd in (self._out_r, self._in_w):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._out_r = self._in_w = -1
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None
