"""Recordings with one sensor broken: a stuck load channel, a disc at the bias."""

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
    src: Path, dst: Path, *, load_level: int | None = None, piezo_level: int | None = None
) -> Path:
    """Copy recording ``src`` to ``dst`` with that level's load or piezo channel broken.

    Every frame is decoded and encoded again (same sequence numbers).
    """
    out = bytearray(b"\x00")
    for frame in RecordingReader(src):
        msg = frame.msg
        if isinstance(msg, Load) and load_level is not None:
            values = msg.values.copy()
            values[load_level] = STUCK_COUNTS
            msg = Load(msg.t_us, msg.valid, values)
        elif isinstance(msg, Piezo) and piezo_level is not None:
            samples = msg.samples.copy()
            samples[:, piezo_level] = BIAS_CODE
            msg = Piezo(msg.t_us, samples)
        out += encode_frame(msg, frame.seq)
    dst.write_bytes(bytes(out))
    return dst
