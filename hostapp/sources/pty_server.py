"""The simulated device on a pseudo-terminal, paced to the wall clock.

Any serial program (pyserial, ``cat``, a terminal) can open :attr:`PtyDeviceServer.path`
and talks to it as to the real board: it streams as if booted, and commands
the host writes are answered. ``unplug()`` / ``replug()`` imitate pulling the
USB cable: readers see the port fail, and with a ``link_path`` the port comes
back under the same name (a symlink to the new pseudo-terminal).
"""

from __future__ import annotations

import contextlib
import os
import select
import threading
import time
import tty
from pathlib import Path

from hostapp.errors import SourceError
from hostapp.i18n import os_reason, tr
from hostapp.sources.sim_device import SimulatedDevice

# Bytes kept for a reader that is not reading (times the pace); beyond this the
# backlog is dropped, as a USB-serial chip drops what the host does not collect.
# 256 kB is about 7 s of a live stream.
MAX_BACKLOG_BYTES = 256 * 1024
DEFAULT_TICK_S = 0.005  # one PIEZO frame's worth of time at 2 kHz


class PtyDeviceServer:
    """Run a :class:`SimulatedDevice` behind a pseudo-terminal.

    Parameters
    ----------
    device : SimulatedDevice
        The device; only this server's thread touches it once started.
    pace : float
        Simulated seconds per wall second (1 = real time; tests use more).
    link_path : Path, optional
        A symlink kept pointing at the current pseudo-terminal, so the port
        keeps its name across :meth:`unplug` / :meth:`replug`.
    tick_s : float
        Wall-clock step of the pacing loop.
    """

    def __init__(
        self,
        device: SimulatedDevice,
        *,
        pace: float = 1.0,
        link_path: Path | None = None,
        tick_s: float = DEFAULT_TICK_S,
    ) -> None:
        if pace <= 0:
            raise ValueError("pace must be positive")
        self.device = device
        self.pace = pace
        self.link_path = link_path
        self.tick_s = tick_s
        self.bytes_sent = 0
        self.bytes_dropped = 0
        self._master: int | None = None
        self._slave: int | None = None
        self._slave_name = ""
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._backlog = bytearray()
        self._error: BaseException | None = None

    @property
    def path(self) -> str:
        """The port to open: the link if there is one, else the slave device."""
        return str(self.link_path) if self.link_path is not None else self._slave_name

    @property
    def plugged(self) -> bool:
        """Whether the pseudo-terminal currently exists."""
        return self._master is not None

    def start(self) -> None:
        """Create the pseudo-terminal and start streaming."""
        if self._thread is not None:
            return
        self._open_pty()
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="sim device pty", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop streaming and remove the pseudo-terminal (and the link)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(2.0)
            self._thread = None
        self._close_pty()
        if self.link_path is not None:
            with contextlib.suppress(FileNotFoundError):
                self.link_path.unlink()

    def unplug(self) -> None:
        """Close the pseudo-terminal as if the USB cable were pulled.

        The link goes too, as /dev/ttyUSB0 does: left behind, it would point at
        a pseudo-terminal number that another program may be given next, and a
        reconnecting reader would open that stranger's port.
        """
        with self._lock:
            self._close_pty()
            if self.link_path is not None:
                with contextlib.suppress(FileNotFoundError):
                    self.link_path.unlink()

    def replug(self) -> None:
        """Bring the port back (same ``link_path``); the device reboots."""
        with self._lock:
            if self._master is None:
                self.device.power_cycle()
                self._open_pty()

    def __enter__(self) -> PtyDeviceServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _open_pty(self) -> None:
        try:
            master, slave = os.openpty()
        except OSError as exc:
            raise SourceError(
                tr("cannot create a pseudo-terminal: {reason}", reason=os_reason(exc))
            ) from exc
        tty.setraw(slave)  # no echo, no newline translation: a byte pipe
        os.set_blocking(master, False)
        self._master, self._slave = master, slave
        self._slave_name = os.ttyname(slave)
        self._backlog.clear()
        if self.link_path is not None:
            temporary = self.link_path.with_name(self.link_path.name + ".new")
            with contextlib.suppress(FileNotFoundError):
                temporary.unlink()
            temporary.symlink_to(self._slave_name)
            temporary.replace(self.link_path)

    def _close_pty(self) -> None:
        for fd in (self._master, self._slave):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._master = self._slave = None

    def _run(self) -> None:
        started = time.monotonic()
        produced_s = 0.0
        while not self._stop.is_set():
            with self._lock:
                master = self._master
                target_s = (time.monotonic() - started) * self.pace
                if master is None:
                    # Unplugged: the tower's physics keeps running, nothing is sent.
                    produced_s = target_s
                else:
                    self._take_commands(master)
                    self._backlog += self.device.generate(target_s - produced_s)
                    produced_s = target_s
                    self._flush(master)
            self._wait(master)

    def _take_commands(self, master: int) -> None:
        while True:
            try:
                data = os.read(master, 4096)
            except (BlockingIOError, OSError):
                return  # nothing written, or no reader has the slave open yet
            if not data:
                return
            self.device.receive(data)

    def _flush(self, master: int) -> None:
        while self._backlog:
            try:
                written = os.write(master, self._backlog)
            except BlockingIOError:
                break
            except OSError:
                self._backlog.clear()
                return
            self.bytes_sent += written
            del self._backlog[:written]
        if len(self._backlog) > MAX_BACKLOG_BYTES * max(1.0, self.pace):
            # Drop whole frames only: the first one may already be partly in the
            # terminal's buffer, and cutting it would leave the reader garbage.
            keep = self._backlog.find(0) + 1
            self.bytes_dropped += len(self._backlog) - keep
            del self._backlog[keep:]

    def _wait(self, master: int | None) -> None:
        if master is None:
            self._stop.wait(self.tick_s)
            return
        try:
            select.select([master], [], [], self.tick_s)
        except (OSError, ValueError):
            self._stop.wait(self.tick_s)
