#include "cmd.h"

#include "cobs.h"
#include "crc.h"
#include "proto.h"

void cmd_init(cmd_decoder_t *d, uint8_t *buf, uint16_t cap)
{
    d->buf = buf;
    d->cap = cap;
    d->len = 0;
    d->overflow = false;
    d->frames_ok = 0;
    d->crc_errors = 0;
    d->framing_errors = 0;
    d->oversize = 0;
}

uint16_t cmd_errors(const cmd_decoder_t *d)
{
    return (uint16_t)(d->crc_errors + d->framing_errors + d->oversize);
}

static bool finish_frame(cmd_decoder_t *d, cmd_frame_t *out)
{
    int16_t n = cobs_decode(d->buf, d->len, d->buf);
    if (n < PROTO_HEADER_BYTES + PROTO_CRC_BYTES) {
        d->framing_errors++;
        return false;
    }
    uint16_t len = (uint16_t)n;
    uint16_t crc = (uint16_t)(d->buf[len - 2] | (uint16_t)d->buf[len - 1] << 8);
    if (crc_block(CRC_INIT, d->buf, (uint16_t)(len - 2)) != crc) {
        d->crc_errors++;
        return false;
    }
    out->type = d->buf[0];
    out->seq = (uint16_t)(d->buf[1] | (uint16_t)d->buf[2] << 8);
    out->body = d->buf + PROTO_HEADER_BYTES;
    out->body_len = (uint8_t)(len - PROTO_HEADER_BYTES - PROTO_CRC_BYTES);
    d->frames_ok++;
    return true;
}

bool cmd_feed(cmd_decoder_t *d, uint8_t byte, cmd_frame_t *out)
{
    if (byte != 0) {
        if (d->len < d->cap) {
            d->buf[d->len++] = byte;
        } else if (!d->overflow) {
            d->overflow = true;
            d->oversize++;
        }
        return false;
    }
    bool ok = false;
    if (!d->overflow && d->len > 0) { /* back-to-back 0x00 carry nothing */
        ok = finish_frame(d, out);
    }
    d->len = 0;
    d->overflow = false;
    return ok;
}

uint8_t cmd_check(const cmd_frame_t *f)
{
    switch (f->type) {
    case PROTO_GET_INFO:
    case PROTO_STOP:
    case PROTO_RESET:
        return f->body_len == 0 ? PROTO_RESULT_OK : PROTO_RESULT_BAD_ARGUMENT;
    case PROTO_START:
        if (f->body_len != 1 || (f->body[0] & (uint8_t)~PROTO_STREAM_ALL) != 0) {
            return PROTO_RESULT_BAD_ARGUMENT;
        }
        return PROTO_RESULT_OK;
    case PROTO_PING:
        return f->body_len == 4 ? PROTO_RESULT_OK : PROTO_RESULT_BAD_ARGUMENT;
    default:
        return PROTO_RESULT_UNKNOWN;
    }
}

uint32_t cmd_body_u32(const cmd_frame_t *f, uint8_t offset)
{
    const uint8_t *p = f->body + offset;
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
