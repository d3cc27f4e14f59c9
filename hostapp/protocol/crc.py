"""CRC-16/CCITT-FALSE, the checksum of every protocol v1 message."""

from __future__ import annotations

import binascii


def crc16(data: bytes | bytearray | memoryview) -> int:
    """CRC-16/CCITT-FALSE of ``data``.

    Poly 0x1021, init 0xFFFF, not reflected, xorout 0; ``crc16(b"123456789")``
    is 0x29B1. ``binascii.crc_hqx`` computes exactly this CRC in C.

    Parameters
    ----------
    data : bytes-like
        The bytes to check (``type | seq | body`` for a message).

    Returns
    -------
    int
        The CRC, 0..0xFFFF.
    """
    return binascii.crc_hqx(data, 0xFFFF)
