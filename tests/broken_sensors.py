"""Recordings with a sensor broken (a stuck or unplugged cell, a disc at the bias) or hummed."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from hostapp.protocol.codec import encode_frame
from hostapp.protocol.messages import Load, Piezo
from hostapp.recording import RecordingReader


def _rewritten(src: Path, dst: Path, change: Callable[[object], object]) -> Path:
    """Copy recording ``src`` to ``dst``, every message passed through ``change``.

    Every frame is decoded and encoded again (same sequence numbers).
    """
    out = bytearray(b"\x00")
    for frame in RecordingReader(src):
        out += encode_frame(change(frame.msg), frame.seq)
    dst.write_bytes(bytes(out))
    return dst

# A bridge wire broken: the HX711 reads one value for good.
STUCK_COUNTS = 123456
# A disc unglued or its wire broken: the channel sits at the bias.
BIAS_CODE = 512


def with_broken_sensor(
    src: Path, dst: Path, *, load_level: int | None = None, piezo_level: int | None = None,
    unplugged: bool = False,
) -> Path:
    """Copy recording ``src`` to ``dst`` with that level's load or piezo channel broken.

    The load channel reads ``STUCK_COUNTS``, or with ``unplugged`` its valid
    bit is 0 from the first reading on (a cell whose plug was never seated).
    """

    def broken(msg: object) -> object:
        if isinstance(msg, Load) and load_level is not None:
            values = msg.values.copy()
            values[load_level] = 0 if unplugged else STUCK_COUNTS
            valid = msg.valid & ~(1 << load_level) if unplugged else msg.valid
            return Load(msg.t_us, valid, values)
        if isinstance(msg, Piezo) and piezo_level is not None:
            samples = msg.samples.copy()
            samples[:, piezo_level] = BIAS_CODE
            return Piezo(msg.t_us, samples)
        return msg

    return _rewritten(src, dst, broken)


def with_hum(src: Path, dst: Path, *, amplitudes: dict[int, float], mains_hz: float = 50.0,
             rate_hz: float = 2000.0) -> Path:
    """Copy recording ``src`` to ``dst`` with a ground loop's hum on every piezo pin alike.

    ``amplitudes``: codes per harmonic number (3: 150 Hz at 50 Hz mains).
    The hum's phase runs on with the sample sets, at ``rate_hz`` (HELLO's rate).
    """
    n_sets = 0

    def hummed(msg: object) -> object:
        nonlocal n_sets
        if not isinstance(msg, Piezo):
            return msg
        t = (n_sets + np.arange(msg.samples.shape[0])) / rate_hz
        n_sets += t.size
        hum = np.zeros(t.size)
        for k, amplitude in amplitudes.items():
            hum += amplitude * np.sin(2 * np.pi * k * mains_hz * t + k)
        samples = np.clip(np.round(msg.samples + hum[:, None]), 0, 1023)
        return Piezo(msg.t_us, samples.astype(msg.samples.dtype))

    return _rewritten(src, dst, hummed)
