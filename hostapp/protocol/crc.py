"""CRC-16/CCITT-FALSE, the checksum of every protocol v1 message."""

from __future__ import annotations

import binascii
import functools

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


@functools.cache
def _table16() -> npt.NDArray[np.uint32]:
    # The CRC of each 16-bit word alone from a zero register (two steps of
    # the byte table): the register is 16 bits wide, so a word xored into it
    # replaces it whole, and one lookup per two bytes does. Built on first
    # use (a millisecond), not at import.
    word = np.arange(1 << 16, dtype=np.uint32)
    high = _TABLE[word >> 8]
    return ((high << 8) & 0xFFFF) ^ _TABLE[(high >> 8) ^ (word & 0xFF)]


def crc16_rows(rows: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint32]:
    """:func:`crc16` of every row of a 2-D byte array at once.

    For many short messages of one length (a stream's PIEZO and LOAD
    frames) this costs a numpy step per two byte columns instead of a call
    per message.
    """
    rows = np.asarray(rows, dtype=np.uint8)
    crc = np.full(rows.shape[0], 0xFFFF, dtype=np.uint32)
    pairs = rows.shape[1] // 2
    if pairs:
        table = _table16()
        # Big-endian words, one contiguous column each: the first byte of a
        # pair is the one the register meets first.
        words = np.ascontiguousarray(rows[:, : 2 * pairs]).view(">u2").astype(np.uint32).T
        for column in np.ascontiguousarray(words):
            crc = table[crc ^ column]
    if rows.shape[1] % 2:
        crc = ((crc << 8) & 0xFFFF) ^ _TABLE[(crc >> 8) ^ rows[:, -1]]
    return crc
