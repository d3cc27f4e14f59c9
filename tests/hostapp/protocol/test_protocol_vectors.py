"""The codec against the language-neutral vectors in tests/vectors/protocol_v1.json."""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from cobs import cobs as reference_cobs

from hostapp.protocol import (
    MESSAGE_CLASSES,
    Ack,
    FrameDecoder,
    Load,
    Message,
    Piezo,
    cobs_decode,
    cobs_encode,
    crc16,
    encode_frame,
    encode_message,
)
from tests.scripts import TOOLS, load_script

VECTORS = json.loads(
    (Path(__file__).resolve().parents[2] / "vectors" / "protocol_v1.json").read_text()
)


def build(vector: dict[str, Any]) -> Message:
    cls = MESSAGE_CLASSES[vector["type"]]
    fields = dict(vector["fields"])
    if cls is Piezo:
        samples = np.array(fields["samples"], dtype=np.uint16)
        return Piezo(fields["t_us"], samples.reshape(fields["n"], fields["n_piezo"]))
    if cls is Load:
        return Load(fields["t_us"], fields["valid"], np.array(fields["values"], dtype=np.int32))
    kwargs = {
        (k[:-4] if k.endswith("_hex") else k): (bytes.fromhex(v) if k.endswith("_hex") else v)
        for k, v in fields.items()
    }
    return cls(**kwargs)


def test_crc_check_value_is_the_ccitt_false_one() -> None:
    assert crc16(b"123456789") == 0x29B1


@pytest.mark.parametrize("vector", VECTORS["crc"], ids=lambda v: v["data_hex"][:12] or "empty")
def test_crc_vectors(vector: dict[str, Any]) -> None:
    assert crc16(bytes.fromhex(vector["data_hex"])) == vector["crc"]


@pytest.mark.parametrize("vector", VECTORS["cobs"], ids=lambda v: v["data_hex"][:12] or "empty")
def test_cobs_vectors(vector: dict[str, Any]) -> None:
    data = bytes.fromhex(vector["data_hex"])
    encoded = bytes.fromhex(vector["encoded_hex"])
    assert cobs_encode(data) == encoded
    assert cobs_decode(encoded) == data


def test_every_message_type_has_a_vector() -> None:
    assert {v["type"] for v in VECTORS["messages"]} == set(MESSAGE_CLASSES)


@pytest.mark.parametrize("vector", VECTORS["messages"], ids=lambda v: v["name"])
def test_message_encodes_to_the_exact_bytes(vector: dict[str, Any]) -> None:
    msg = build(vector)
    assert encode_message(msg, vector["seq"]).hex() == vector["message_hex"]
    assert encode_frame(msg, vector["seq"]).hex() == vector["wire_hex"]


@pytest.mark.parametrize("vector", VECTORS["messages"], ids=lambda v: v["name"])
def test_message_decodes_to_its_fields(vector: dict[str, Any]) -> None:
    decoder = FrameDecoder()
    frames = decoder.feed(bytes.fromhex(vector["wire_hex"]))
    assert len(frames) == 1
    assert frames[0].seq == vector["seq"]
    assert frames[0].msg == build(vector)
    assert decoder.stats.damaged_frames == 0


@pytest.mark.parametrize("vector", VECTORS["damaged"], ids=lambda v: v["name"])
@pytest.mark.parametrize("chunk", [1, 7, 1 << 20])
def test_damaged_stream_outcome(vector: dict[str, Any], chunk: int) -> None:
    wire = bytes.fromhex(vector["wire_hex"])
    decoder = FrameDecoder()
    frames = []
    for start in range(0, len(wire), chunk):
        frames += decoder.feed(wire[start : start + chunk])
    assert [f.msg.TYPE for f in frames] == vector["decoded_types"]
    assert [f.seq for f in frames] == vector["decoded_seqs"]
    stats = decoder.stats.as_dict()
    assert stats.pop("bytes_in") == len(wire)
    assert stats == vector["expect"]


def test_damaged_vectors_cover_every_counter() -> None:
    counted = {k for v in VECTORS["damaged"] for k, n in v["expect"].items() if n}
    assert counted >= {
        "crc_errors",
        "framing_errors",
        "oversize",
        "bad_length",
        "unknown_types",
        "lost_messages",
        "partial_start",
        "resets",
    }


def test_vector_file_is_what_the_generator_writes() -> None:
    module = load_script(TOOLS / "gen_protocol_vectors.py", "gen_protocol_vectors")
    committed = (Path(__file__).resolve().parents[2] / "vectors" / "protocol_v1.json").read_text()
    assert module.render() == committed


def bitwise_crc16_ccitt_false(data: bytes) -> int:
    """The textbook bit-by-bit CRC, independent of binascii."""
    crc = 0xFFFF
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


@pytest.mark.parametrize("vector", VECTORS["messages"], ids=lambda v: v["name"])
def test_vectors_agree_with_independent_crc_and_cobs(vector: dict[str, Any]) -> None:
    message = bytes.fromhex(vector["message_hex"])
    assert len(message) <= 254
    assert message[0] == vector["type"]
    assert int.from_bytes(message[1:3], "little") == vector["seq"]
    assert int.from_bytes(message[-2:], "little") == bitwise_crc16_ccitt_false(message[:-2])
    assert bytes.fromhex(vector["wire_hex"]) == reference_cobs.encode(message) + b"\x00"


def test_hello_and_load_bodies_laid_out_as_the_contract_says() -> None:
    by_name = {v["name"]: v for v in VECTORS["messages"]}
    hello = by_name["hello"]
    f = hello["fields"]
    body = struct.pack(
        "<BBBBBBHHB", f["proto"], f["fw_major"], f["fw_minor"], f["fw_patch"], f["n_piezo"],
        f["n_load"], f["piezo_rate_hz"], f["load_rate_hz"], f["adc_bits"],
    ) + bytes.fromhex(f["device_id_hex"])
    assert bytes.fromhex(hello["message_hex"])[3:-2] == body
    load = by_name["load_all_valid"]
    f = load["fields"]
    body = struct.pack("<IB", f["t_us"], f["valid"]) + b"".join(
        (v & 0xFFFFFF).to_bytes(3, "little") for v in f["values"]
    )
    assert bytes.fromhex(load["message_hex"])[3:-2] == body
    piezo = by_name["piezo_busy_10_sets"]
    f = piezo["fields"]
    body = struct.pack("<IB", f["t_us"], f["n"]) + struct.pack(f"<{len(f['samples'])}H",
                                                               *f["samples"])
    assert bytes.fromhex(piezo["message_hex"])[3:-2] == body


def test_worked_example_of_the_docs() -> None:
    # docs/protocol.md, "Worked example": ACK of START seq 17, sent as message 9.
    assert encode_frame(Ack(0x82, 17, 0), 9) == bytes.fromhex("03050903821101038884" "00")
