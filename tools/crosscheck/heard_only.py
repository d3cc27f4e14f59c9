"""Copies of recordings heard without their load cells, to measure acoustic-only detection.

The contact microphones alone (an audio interface, or a kit whose load
cells are not fitted) give the same PIEZO stream with no LOAD messages.
Any model's recording becomes such a one by taking its LOAD messages out:
the others keep their bytes but for ``seq``, renumbered so that no message
seems lost, and the CRC over it. Odd towers' HELLO also says ``n_load`` 0
(a kit with no cells), even towers' keeps 8 (cells that never report), as
model P's acoustic recordings do.
"""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from hostapp.protocol.cobs import cobs_encode
from hostapp.protocol.codec import encode_raw
from hostapp.protocol.constants import FRAME_DELIMITER, HELLO, LOAD
from hostapp.protocol.decoder import FrameDecoder

# HELLO body: proto, fw_major, fw_minor, fw_patch, n_piezo, n_load, ...
_N_LOAD_AT = 5


def without_load(data: bytes, *, say_no_cells: bool) -> bytes:
    """``data`` (a recording's bytes) with its LOAD messages taken out.

    Frames that do not decode (damage, a first frame cut) are left out too:
    the copy is of what a receiver could read.
    """
    out = bytearray()
    seq = 0
    for kind, _, body in FrameDecoder().feed_raw(data):
        if kind == LOAD:
            continue
        if kind == HELLO and say_no_cells:
            body = body[:_N_LOAD_AT] + b"\x00" + body[_N_LOAD_AT + 1 :]
        out += cobs_encode(encode_raw(kind, seq, body)) + FRAME_DELIMITER
        seq += 1
    return bytes(out)


def make_heard_only_set(folder: Path, out: Path, scenarios: tuple[str, ...]) -> None:
    """Heard-only copies of ``folder``'s ``scenarios`` recordings and truths, in ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    for scenario in scenarios:
        for recording in sorted(folder.glob(f"{scenario}_t*.bin")):
            copy = out / recording.name
            truth = recording.with_name(recording.name[: -len(".bin")] + ".truth.json")
            if copy.exists() and (out / truth.name).exists():
                continue
            tower = re.search(r"_t(\d+)", recording.name)
            odd = tower is not None and int(tower.group(1)) % 2 == 1
            copy.write_bytes(without_load(recording.read_bytes(), say_no_cells=odd))
            shutil.copyfile(truth, out / truth.name)
