/* CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, not reflected, xorout 0). */
#ifndef CRC_H
#define CRC_H

#include <stdint.h>

#define CRC_INIT 0xFFFFu

uint16_t crc_update(uint16_t crc, uint8_t byte);
uint16_t crc_block(uint16_t crc, const uint8_t *data, uint16_t len);

#endif
