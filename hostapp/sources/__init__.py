"""Transports that deliver protocol v1 frames: serial port, simulated device, replay.

The interface every source shares (:class:`~hostapp.sources.base.ByteSource`)
---------------------------------------------------------------------------

A source owns one reader thread. That thread only reads bytes, feeds them to
a :class:`~hostapp.protocol.FrameDecoder` and puts each decoded
:class:`~hostapp.protocol.Frame` (``seq``, ``msg``) into ``source.frames``, a
``queue.Queue``. Everything else happens on the consumer's side:

- ``start()`` / ``stop()`` (or ``with source:``) run and end the thread. The
  thread connects by itself; when the transport goes away (USB unplugged,
  pseudo-terminal closed) the state becomes ``SourceState.DISCONNECTED`` -
  never an exception - and it retries every ``retry_interval_s`` until the
  port is back. After each (re)connection it sends GET_INFO, so a HELLO
  arrives even from a device that booted long ago, and asks again while
  none has come (``HELLO_WAIT_S`` apart, ``HELLO_ASKS`` times at most).
- ``get_frames(timeout_s)`` drains the queue (the UI calls it from a timer).
- ``send(command) -> seq | None`` writes a host command (GET_INFO, START,
  STOP, PING, RESET); None when not connected.
- ``stats()`` returns a :class:`~hostapp.sources.base.SourceStats` snapshot:
  state, decoder counters (CRC errors, lost messages, ...), bytes/s,
  number of connects, frames dropped because the queue was full.
- ``tap=callable`` (constructor) receives every raw chunk from the reader
  thread: that is how ``monitor --record`` writes a recording.

A new transport subclasses ``ByteSource`` and implements ``_open``, ``_read``
(block at most ~0.1 s; return b"" when idle; raise ``OSError`` when the
device is gone), ``_write`` and ``_close``; replays also override
``_end_of_stream``. Sources that are not byte streams (an audio interface)
can instead fill a ``queue.Queue`` of ``Frame`` with the same semantics and
offer the same methods.

Modules:

- :mod:`~hostapp.sources.serial_port`: pyserial at 1,000,000 baud, and
  finding the device by USB vendor/product id.
- :mod:`~hostapp.sources.sim_device`: the simulated device (physics from
  :mod:`dsp.sim` -> protocol bytes) with damage injection, and
  ``SimulatedDeviceSource``, the same device as an in-process source.
- :mod:`~hostapp.sources.pty_server`: the simulated device on a
  pseudo-terminal, paced to the wall clock, answering host commands.
- :mod:`~hostapp.sources.recording_replay`: ``ReplaySource``, a recording
  replayed at 1x-100x or as fast as possible.
- ``hostapp.sources.simavr`` (the firmware in simavr) and
  ``hostapp.sources.audio`` (contact microphones on a sound card) are written
  against this interface by their own areas.
"""

from hostapp.sources.base import ByteSource, SourceState, SourceStats

__all__ = ["ByteSource", "SourceState", "SourceStats"]
