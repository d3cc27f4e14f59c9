"""Consistent Overhead Byte Stuffing (COBS), byte-compatible with the ``cobs`` package.

The encoded form has no 0x00 byte, so 0x00 can delimit frames on the wire.
Both directions work on whole code blocks with ``bytes`` methods instead of a
per-byte Python loop, because the decoder must keep up with replays running
hundreds of times faster than a live tower.
"""

from __future__ import annotations

_MAX_BLOCK = 254  # data bytes in a block with code 0xFF (no implied zero after it)


class CobsError(ValueError):
    """The bytes are not a valid COBS encoding."""


def cobs_encode(data: bytes) -> bytes:
    """COBS-encode ``data`` (without the trailing 0x00 frame delimiter).

    Parameters
    ----------
    data : bytes
        Any bytes.

    Returns
    -------
    bytes
        The encoding, ``len(data) + 1`` bytes for short inputs, free of 0x00.
    """
    out = bytearray()
    pieces = data.split(b"\x00")
    if len(data) < _MAX_BLOCK:
        # Every protocol message takes this path: no piece can need a 0xFF block.
        for piece in pieces:
            out.append(len(piece) + 1)
            out += piece
        return bytes(out)
    last = len(pieces) - 1
    for index, piece in enumerate(pieces):
        # A block of 254 data bytes carries no implied zero, so a zero-terminated
        # piece of exactly 254 bytes needs an extra empty block (code 1) to say so;
        # the final piece does not.
        while len(piece) > _MAX_BLOCK or (len(piece) == _MAX_BLOCK and index != last):
            out.append(0xFF)
            out += piece[:_MAX_BLOCK]
            piece = piece[_MAX_BLOCK:]
        out.append(len(piece) + 1)
        out += piece
    return bytes(out)


def cobs_decode(encoded: bytes) -> bytes:
    """Decode one COBS frame (without its 0x00 delimiter).

    Parameters
    ----------
    encoded : bytes
        The encoded frame.

    Returns
    -------
    bytes
        The original data.

    Raises
    ------
    CobsError
        If ``encoded`` is empty, contains 0x00, or a code byte points past the end.
    """
    size = len(encoded)
    if size == 0:
        raise CobsError("empty COBS frame")
    if 0 in encoded:
        raise CobsError("0x00 inside a COBS frame")
    # The code bytes form a chain: each says where the next one is. In the
    # common case (no 0xFF block) decoding is "replace every code byte by 0 and
    # drop the first", so only the chain is walked in Python.
    positions = []
    position = 0
    long_block = False
    while position < size:
        code = encoded[position]
        positions.append(position)
        if code == 0xFF:
            long_block = True
        position += code
    if position != size:
        raise CobsError("COBS code byte points past the end of the frame")
    if not long_block:
        out = bytearray(encoded)
        for position in positions:
            out[position] = 0
        del out[0]
        return bytes(out)
    decoded = bytearray()
    for index, position in enumerate(positions):
        code = encoded[position]
        decoded += encoded[position + 1 : position + code]
        is_last = index == len(positions) - 1
        if code != 0xFF and not is_last:
            decoded.append(0)
    return bytes(decoded)
