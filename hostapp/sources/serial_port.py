"""The real device (or anything speaking protocol v1) on a serial port, through pyserial."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import serial
from serial.tools import list_ports

from hostapp.errors import SourceError
from hostapp.i18n import tr
from hostapp.protocol.constants import BAUD_RATE
from hostapp.sources.base import ByteSource

# USB-serial bridges found on Arduino Nano class boards, as (vendor id, product id).
USB_IDS: dict[tuple[int, int], str] = {
    (0x1A86, 0x7523): "CH340 (Nano clones)",
    (0x0403, 0x6001): "FTDI FT232R (Nano v3)",
    (0x2341, 0x0043): "ATmega16U2 (Arduino Uno R3)",
    (0x10C4, 0xEA60): "Silicon Labs CP210x",
}
_READ_TIMEOUT_S = 0.05  # the reader thread's longest block, so stop() is quick
_MAX_READ = 65536


def _usb_id(vid: int, pid: int) -> str:
    return f"{vid:04X}:{pid:04X}"


def describe_ports(ports: list[Any] | None) -> str:
    """One line naming each port seen (the system's if None) and its USB id if it has one."""
    if ports is None:
        ports = list(list_ports.comports())
    if not ports:
        return tr("no serial ports seen")
    names = [
        f"{p.device} ({_usb_id(p.vid, p.pid)})" if p.vid is not None else p.device for p in ports
    ]
    return tr("ports seen: {ports}", ports=", ".join(names))


def find_device_port(ports: list[Any] | None = None) -> str:
    """The serial port of the first connected board with a known USB id.

    Parameters
    ----------
    ports : list, optional
        Port descriptions as from ``serial.tools.list_ports.comports()``
        (given in tests); by default the system is asked.

    Returns
    -------
    str
        The port's device path.

    Raises
    ------
    SourceError
        If no port has a known USB id; the message lists the ports seen.
    """
    seen = list(list_ports.comports()) if ports is None else ports
    for port in sorted(seen, key=lambda p: p.device):
        if (port.vid, port.pid) in USB_IDS:
            return str(port.device)
    wanted = ", ".join(_usb_id(*ids) for ids in USB_IDS)
    raise SourceError(
        tr("no towerear device found (USB ids {wanted}); {seen}",
           wanted=wanted, seen=describe_ports(seen))
    )


class SerialSource(ByteSource):
    """Read a serial port at 1,000,000 baud; reconnect when it comes back.

    Parameters
    ----------
    port : str, optional
        Device path; None finds the board by USB id on every connection
        attempt (so a board plugged in later is picked up).
    baud : int
        Line rate (the protocol's 1,000,000).
    tap : callable, optional
        Gets every raw chunk (see :class:`~hostapp.sources.base.ByteSource`).
    **kwargs
        Passed to :class:`~hostapp.sources.base.ByteSource`.
    """

    def __init__(
        self,
        port: str | None = None,
        *,
        baud: int = BAUD_RATE,
        tap: Callable[[bytes], None] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(port or "USB device", tap=tap, **kwargs)
        self.port = port
        self.baud = baud
        self._serial: serial.Serial | None = None

    def _open(self) -> None:
        port = self.port or find_device_port()
        self.name = port
        handle = serial.Serial(port, self.baud, timeout=_READ_TIMEOUT_S, write_timeout=0.5)
        try:
            # Linux delivers USB-serial bytes every 16 ms unless asked for low latency.
            handle.set_low_latency_mode(True)
        except (OSError, ValueError, AttributeError):
            pass  # pseudo-terminals and other platforms have no such setting
        # Whatever sat in the buffers is old and probably cut mid-frame.
        handle.reset_input_buffer()
        self._serial = handle

    def _read(self) -> bytes:
        handle = self._serial
        if handle is None:
            raise OSError("port not open")
        waiting = handle.in_waiting
        return bytes(handle.read(min(max(waiting, 1), _MAX_READ)))

    def _write(self, data: bytes) -> None:
        handle = self._serial
        if handle is None:
            raise OSError("port not open")
        handle.write(data)

    def _close(self) -> None:
        handle, self._serial = self._serial, None
        if handle is not None:
            try:
                handle.close()
            except OSError:
                pass  # already gone with the device
