"""Recordings with one sensor broken: a stuck or unplugged load channel, a disc at the bias."""

from __future__ import annotations

from pathlib import Path

from hostapp.protocol.codec import encode_frame
from hostapp.protocol.messages import Load, Piezo
from hostapp.recording import RecordingReader

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
    Every frame is decoded and encoded again (same sequence numbers).
    """
    out = bytearray(b"\x00")
    for frame in RecordingReader(src):
        msg = frame.msg
        if isinstance(msg, Load) and load_level is not None:
            values = msg.values.copy()
            values[load_level] = 0 if unplugged else STUCK_COUNTS
            valid = msg.valid & ~(1 << load_level) if unplugged else msg.valid
            msg = Load(msg.t_us, valid, values)
        elif isinstance(msg, Piezo) and piezo_level is not None:
            samples = msg.samples.copy()
            samples[:, piezo_level] = BIAS_CODE
            msg = Piezo(msg.t_us, samples)
        out += encode_frame(msg, frame.seq)
    dst.write_bytes(bytes(out))
    return dst
