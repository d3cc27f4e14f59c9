"""Write tests/vectors/protocol_v1.json: language-neutral protocol v1 test vectors.

Run from the repository root: ``.venv/bin/python tools/gen_protocol_vectors.py``.
The file format is documented at the top of docs/protocol.md. Output is
deterministic; tests/hostapp/protocol/test_protocol_vectors.py checks the
codec against the committed file.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np

from hostapp.protocol import (
    Ack,
    FrameDecoder,
    GetInfo,
    Hello,
    Load,
    Message,
    Piezo,
    Ping,
    Pong,
    Reset,
    Start,
    Status,
    Stop,
    cobs_encode,
    crc16,
    encode_frame,
    encode_message,
)
from hostapp.protocol.constants import MESSAGE_NAMES

OUT = Path(__file__).resolve().parent.parent / "tests" / "vectors" / "protocol_v1.json"


def fields_of(msg: Message) -> dict[str, Any]:
    """The message's fields as flat JSON values (ints, int lists, hex strings)."""
    if isinstance(msg, Piezo):
        return {
            "t_us": msg.t_us,
            "n": int(msg.samples.shape[0]),
            "n_piezo": int(msg.samples.shape[1]),
            "samples": [int(v) for v in msg.samples.ravel()],
        }
    if isinstance(msg, Load):
        return {"t_us": msg.t_us, "valid": msg.valid, "values": [int(v) for v in msg.values]}
    out: dict[str, Any] = {}
    for field in dataclasses.fields(msg):
        name = field.name
        value = getattr(msg, name)
        out[name + "_hex" if isinstance(value, bytes) else name] = (
            value.hex() if isinstance(value, bytes) else int(value)
        )
    return out


def message_vector(name: str, msg: Message, seq: int) -> dict[str, Any]:
    direction = "host_to_device" if msg.TYPE & 0x80 else "device_to_host"
    return {
        "name": name,
        "type": msg.TYPE,
        "type_name": MESSAGE_NAMES[msg.TYPE],
        "direction": direction,
        "seq": seq,
        "fields": fields_of(msg),
        "message_hex": encode_message(msg, seq).hex(),
        "wire_hex": encode_frame(msg, seq).hex(),
    }


def raw_frame(msg_type: int, seq: int, body: bytes) -> bytes:
    """A frame with any type and body (for unknown types and bad lengths)."""
    head = bytes([msg_type, seq & 0xFF, seq >> 8]) + body
    return cobs_encode(head + crc16(head).to_bytes(2, "little")) + b"\x00"


def damaged_vector(name: str, description: str, wire: bytes) -> dict[str, Any]:
    decoder = FrameDecoder()
    frames = decoder.feed(wire)
    stats = decoder.stats.as_dict()
    del stats["bytes_in"]
    return {
        "name": name,
        "description": description,
        "wire_hex": wire.hex(),
        "decoded_types": [f.msg.TYPE for f in frames],
        "decoded_seqs": [f.seq for f in frames],
        "expect": stats,
    }


def build_vectors() -> dict[str, Any]:
    """The whole vector document."""
    rng = np.random.default_rng(20261130)
    idle = np.full((10, 8), 512, dtype=np.uint16)
    busy = rng.integers(0, 1024, size=(10, 8)).astype(np.uint16)
    messages = [
        message_vector(
            "hello",
            Hello(1, 1, 2, 3, 8, 8, 2000, 80, 10, bytes.fromhex("746f7765720001a2")),
            0,
        ),
        message_vector("piezo_idle_10_sets", Piezo(1_000_000, idle), 1),
        message_vector("piezo_busy_10_sets", Piezo(0xFFFFF000, busy), 2),
        message_vector("piezo_one_set", Piezo(5, np.array([[0, 1, 2, 3, 1020, 1021, 1022, 1023]],
                                                           dtype=np.uint16)), 3),
        message_vector(
            "piezo_14_sets", Piezo(123_456, rng.integers(0, 1024, (14, 8)).astype(np.uint16)), 4
        ),
        message_vector(
            "piezo_4_channels", Piezo(42, rng.integers(0, 1024, (10, 4)).astype(np.uint16)), 5
        ),
        message_vector(
            "load_all_valid",
            Load(2_000_000, 0xFF, np.array([0, 1, -1, 8388607, -8388608, 123456, -123456, 256],
                                           dtype=np.int32)),
            6,
        ),
        message_vector(
            "load_levels_5_to_7_lifted",
            Load(2_012_500, 0x1F, np.array([100, -200, 300, -400, 500, 0, 0, 0], dtype=np.int32)),
            7,
        ),
        message_vector("status", Status(61_000, 1, 2, 3, 37, 0x05), 8),
        message_vector("ack_ok", Ack(0x82, 17, 0), 9),
        message_vector("ack_unknown_command", Ack(0xC3, 18, 1), 10),
        message_vector("ack_bad_argument", Ack(0x82, 19, 2), 11),
        message_vector("pong", Pong(0xDEADBEEF, 4_000_000_000), 12),
        message_vector("piezo_seq_wraps", Piezo(10, idle[:1]), 65535),
        message_vector("get_info", GetInfo(), 0),
        message_vector("start_all", Start(0x07), 1),
        message_vector("start_load_only", Start(0x02), 2),
        message_vector("stop", Stop(), 3),
        message_vector("ping", Ping(0x01020304), 4),
        message_vector("reset", Reset(), 0x1234),
    ]

    status = [encode_frame(Status(1000 * i, 0, 0, 0, 10, 0), i) for i in range(4)]
    bad_crc = bytearray(status[1])
    bad_crc[-2] ^= 0x01  # last CRC byte (still nonzero)
    bad_cobs = bytearray(status[1])
    bad_cobs[0] = 0x30  # code byte pointing past the end of the frame
    hello0 = encode_frame(Hello(device_id=bytes(range(1, 9))), 0)
    damaged = [
        damaged_vector("clean", "three good frames", status[0] + status[1] + status[2]),
        damaged_vector(
            "bad_crc", "one CRC bit flipped in the middle frame", status[0] + bad_crc + status[2]
        ),
        damaged_vector(
            "bad_cobs", "first code byte of the middle frame points past its end",
            status[0] + bytes(bad_cobs) + status[2],
        ),
        damaged_vector(
            "truncated", "the middle frame lost its second half (delimiter kept)",
            status[0] + status[1][:7] + b"\x00" + status[2],
        ),
        damaged_vector(
            "too_short", "a frame of two bytes", status[0] + b"\x03\x01\x01\x00" + status[1],
        ),
        damaged_vector(
            "oversize", "300 non-zero bytes between good frames",
            status[0] + bytes([0x55]) * 300 + b"\x00" + status[1],
        ),
        damaged_vector(
            "unknown_type", "a well-formed frame of reserved type 0x20 (seq 1)",
            status[0] + raw_frame(0x20, 1, b"\x01\x02") + status[2],
        ),
        damaged_vector(
            "bad_length", "STATUS with a 9-byte body and a good CRC",
            status[0] + raw_frame(0x04, 1, bytes(range(1, 10))) + status[2],
        ),
        damaged_vector("seq_gap", "seq 0 then seq 3: two messages lost", status[0] + status[3]),
        damaged_vector(
            "seq_wrap", "seq 65535 then 0 (not HELLO): no loss",
            encode_frame(Status(1), 65535) + encode_frame(Status(2), 0),
        ),
        damaged_vector(
            "reboot", "seq 57 then HELLO with seq 0: a reboot, no loss",
            encode_frame(Status(1, 0, 0, 0, 0, 0), 57) + hello0 + status[1],
        ),
        damaged_vector(
            "mid_frame_start", "the stream begins in the middle of a frame",
            status[0][5:] + status[1] + status[2],
        ),
        damaged_vector(
            "empty_frames", "extra 0x00 bytes before and between frames are ignored",
            b"\x00\x00" + status[0] + b"\x00" + status[1],
        ),
        damaged_vector("garbage_only", "bytes with no frame in them", bytes([0xAA]) * 20),
    ]
    crc_vectors = [
        {"data_hex": b"123456789".hex(), "crc": crc16(b"123456789")},
        {"data_hex": "", "crc": crc16(b"")},
        {"data_hex": "00", "crc": crc16(b"\x00")},
        {"data_hex": "ff" * 4, "crc": crc16(b"\xff" * 4)},
    ]
    cobs_inputs = [
        b"",
        b"\x00",
        b"\x00\x00",
        b"\x11\x22\x00\x33",
        b"\x11\x22\x33\x44",
        b"\x11\x00\x00\x00",
        bytes(range(1, 255)),
        bytes(range(0, 255)),
        bytes(range(1, 255)) + b"\x00",
    ]
    cobs_vectors = [{"data_hex": d.hex(), "encoded_hex": cobs_encode(d).hex()} for d in cobs_inputs]
    return {
        "format": "towerear protocol v1 test vectors; see docs/protocol.md",
        "crc": crc_vectors,
        "cobs": cobs_vectors,
        "messages": messages,
        "damaged": damaged,
    }


def render() -> str:
    """The file's exact text."""
    return json.dumps(build_vectors(), indent=1) + "\n"


def main() -> None:
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(render())
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
