/* CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, not reflected, xorout 0). */
#ifndef CRC_H
#define CRC_H

#include <stdint.h>

#define CRC_INIT 0xFFFFu

/* Byte-at-a-time form without a table: no 512-byte table in flash, and
 * inline so the per-byte loop makes no call. Same result as the bitwise
 * definition (checked against the protocol vectors). */
static inline uint16_t crc_update(uint16_t crc, uint8_t byte)
{
    uint8_t x = (uint8_t)((crc >> 8) ^ byte);
    x ^= (uint8_t)(x >> 4);
    return (uint16_t)((crc << 8) ^ ((uint16_t)x << 12) ^ ((uint16_t)x << 5) ^ x);
}

uint16_t crc_block(uint16_t crc, const uint8_t *data, uint16_t len);

#endif
