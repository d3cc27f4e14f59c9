#include "crc.h"

uint16_t crc_block(uint16_t crc, const uint8_t *data, uint16_t len)
{
    while (len--) {
        crc = crc_update(crc, *data++);
    }
    return crc;
}
