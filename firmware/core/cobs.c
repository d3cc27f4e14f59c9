#include "cobs.h"

uint16_t cobs_encode_inplace(uint8_t *buf, uint16_t len)
{
    /* Walk backwards: each zero becomes the distance to the next zero (or
     * to the end), and buf[0] the distance to the first. With len <= 254
     * the distance never exceeds 0xFF, so there is never a split block. */
    uint8_t dist = 1;
    for (uint8_t *p = buf + len; p > buf; p--) {
        if (*p == 0) {
            *p = dist;
            dist = 1;
        } else {
            dist++;
        }
    }
    buf[0] = dist;
    return (uint16_t)(len + 1u);
}

int16_t cobs_decode(const uint8_t *in, uint16_t len, uint8_t *out)
{
    uint16_t r = 0;
    uint16_t w = 0;
    while (r < len) {
        uint8_t code = in[r++];
        if (code == 0 || (uint16_t)(r + code - 1u) > len) {
            return -1;
        }
        for (uint8_t i = 1; i < code; i++) {
            uint8_t b = in[r++];
            if (b == 0) {
                return -1;
            }
            out[w++] = b;
        }
        /* A full block (0xFF) and the final block add no zero. */
        if (code != 0xFF && r < len) {
            out[w++] = 0;
        }
    }
    return (int16_t)w;
}
