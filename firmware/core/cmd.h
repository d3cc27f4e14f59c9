/* Host -> device commands: frame decoding and checking.
 *
 * Bytes from the UART are fed one at a time. A frame ends at 0x00; it is
 * COBS-decoded in place, its CRC checked, and handed out as a cmd_frame_t.
 * Anything damaged is counted and skipped; decoding resumes at the next
 * 0x00, so garbage can never stall or crash the parser. */
#ifndef CMD_H
#define CMD_H

#include <stdbool.h>
#include <stdint.h>

typedef struct {
    uint8_t type;
    uint16_t seq;
    uint8_t body_len;
    const uint8_t *body; /* points into the decoder's buffer; valid until the next feed */
} cmd_frame_t;

typedef struct {
    uint8_t *buf;
    uint16_t cap;   /* longest encoded frame accepted */
    uint16_t len;   /* bytes of the current frame so far */
    bool overflow;  /* current frame exceeded cap: skip to the next 0x00 */
    uint16_t frames_ok;
    uint16_t crc_errors;
    uint16_t framing_errors; /* not COBS, or shorter than header + CRC */
    uint16_t oversize;
} cmd_decoder_t;

void cmd_init(cmd_decoder_t *d, uint8_t *buf, uint16_t cap);
/* Feed one byte; returns true when it completed a good frame in *out. */
bool cmd_feed(cmd_decoder_t *d, uint8_t byte, cmd_frame_t *out);
/* Damaged frames seen so far (all kinds). */
uint16_t cmd_errors(const cmd_decoder_t *d);

/* The ACK result a command deserves: PROTO_RESULT_OK, _UNKNOWN for a type
 * the device does not implement, _BAD_ARGUMENT for a wrong body. */
uint8_t cmd_check(const cmd_frame_t *f);

/* Little-endian field readers for a checked body. */
uint32_t cmd_body_u32(const cmd_frame_t *f, uint8_t offset);

#endif
