"""CRC-16/CCITT-FALSE, the checksum of every protocol v1 message."""

from __future__ import annotations

import binascii

import numpy as np
import numpy.typing as npt


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


def _table() -> npt.NDArray[np.uint32]:
    # The CRC of each byte value alone from a zero register: one step of
    # the table-driven form, as binascii.crc_hqx computes it.
    return np.array([binascii.crc_hqx(bytes([i]), 0) for i in range(256)], dtype=np.uint32)


_TABLE = _table()


def crc16_rows(rows: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint32]:
    """:func:`crc16` of every row of a 2-D byte array at once.

    For many short messages of one length (a stream's PIEZO and LOAD
    frames) this costs a numpy step per byte column instead of a call per
    message.
    """
    rows = np.asarray(rows, dtype=np.uint8)
    crc = np.full(rows.shape[0], 0xFFFF, dtype=np.uint32)
    for column in rows.T:
        crc = ((crc << 8) & 0xFFFF) ^ _TABLE[(crc >> 8) ^ column]
    return crc
