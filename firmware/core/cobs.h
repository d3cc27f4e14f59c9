/* Consistent Overhead Byte Stuffing, for messages of at most 254 bytes.
 *
 * The encoder works in place: the caller writes the raw message at
 * buf[1..len] and gets the encoded frame at buf[0..len] back, because for
 * len <= 254 COBS never needs more than the one leading code byte. That
 * saves a second buffer and a copy on the AVR. The decoder takes any
 * length and may also work in place. */
#ifndef COBS_H
#define COBS_H

#include <stdint.h>

#define COBS_MAX_INPLACE 254

/* Encode buf[1..len] (len <= 254) in place; returns len + 1, the encoded
 * length at buf[0..len] (no delimiter). */
uint16_t cobs_encode_inplace(uint8_t *buf, uint16_t len);

/* Decode `len` encoded bytes (no delimiter) into `out` (may equal `in`).
 * Returns the decoded length, or -1 if the frame is not valid COBS. */
int16_t cobs_decode(const uint8_t *in, uint16_t len, uint8_t *out);

#endif
