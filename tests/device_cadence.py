"""Recordings as a device polling its load cells on a timer of its own would send them."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from hostapp.protocol.codec import encode_frame
from hostapp.protocol.messages import Load
from hostapp.recording import RecordingReader


def polled_faster(src: Path, dst: Path, factor: float, seed: int = 1) -> Path:
    """Copy recording ``src`` to ``dst`` with LOAD sent on a poll ``factor`` times faster.

    Each channel's converter keeps its conversions (the LOAD messages of
    ``src``) at a phase of its own; a poll carries the newest conversion of
    each channel made since the poll before, the others not fresh (valid 0,
    value 0, contracts.md). Other messages keep their order; sequence
    numbers run on. The device clock must not wrap in ``src``.
    """
    frames = [frame.msg for frame in RecordingReader(src)]
    loads = [m for m in frames if isinstance(m, Load)]
    t_us = np.array([m.t_us for m in loads], dtype=np.int64)
    values = np.array([m.values for m in loads], dtype=np.int64)
    interval = float(np.median(np.diff(t_us)))
    phase = np.asarray(np.random.default_rng(seed).uniform(0.0, interval, values.shape[1]))
    made = t_us[:, None] + phase[None, :]
    polls = np.arange(t_us[0] + interval, t_us[-1], interval / factor).astype(np.int64)
    newest = np.stack([np.searchsorted(made[:, ch], polls, side="right") - 1
                       for ch in range(values.shape[1])], axis=1)
    before = np.vstack([np.full((1, values.shape[1]), -1), newest[:-1]])
    fresh = newest > before
    polled = [
        Load(int(p), int(np.dot(ok, 1 << np.arange(ok.size))),
             np.where(ok, values[row, np.arange(ok.size)], 0).astype(np.int32))
        for p, row, ok in zip(polls, newest, fresh, strict=True)
    ]
    out = bytearray(b"\x00")
    seq, k = 0, 0
    for msg in (m for m in frames if not isinstance(m, Load)):
        t = getattr(msg, "t_us", None)
        while t is not None and k < len(polled) and polled[k].t_us <= t:
            out += encode_frame(polled[k], seq & 0xFFFF)
            seq, k = seq + 1, k + 1
        out += encode_frame(msg, seq & 0xFFFF)
        seq += 1
    for load in polled[k:]:
        out += encode_frame(load, seq & 0xFFFF)
        seq += 1
    dst.write_bytes(bytes(out))
    return dst
