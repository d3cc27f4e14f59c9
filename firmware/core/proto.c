#include "proto.h"

#include <string.h>

#include "cobs.h"
#include "crc.h"

/* The one frame being built: [0] COBS code byte, [1..] the message, then
 * room for the 0x00 delimiter. Messages are built one at a time, all from
 * the main loop. When there is no room the body is written to the same
 * buffer and discarded, so writers never need to check. */
static uint8_t s_frame[PROTO_MAX_MESSAGE + 2];

void proto_link_init(proto_link_t *link, ring_t *tx)
{
    link->tx = tx;
    link->seq = 0;
    link->tx_dropped = 0;
}

bool proto_fits(const proto_link_t *link, uint16_t body_len)
{
    return body_len <= PROTO_MAX_MESSAGE - PROTO_HEADER_BYTES - PROTO_CRC_BYTES &&
           ring_free(link->tx) >= PROTO_FRAME_BYTES(body_len);
}

void proto_begin(proto_writer_t *w, proto_link_t *link, uint8_t type, uint16_t body_len)
{
    uint16_t seq = link->seq++;
    w->link = link;
    w->room = proto_fits(link, body_len);
    w->p = s_frame + 1;
    proto_u8(w, type);
    proto_u16(w, seq);
}

bool proto_end(proto_writer_t *w)
{
    if (!w->room) {
        w->link->tx_dropped++;
        return false;
    }
    uint16_t len = (uint16_t)(w->p - (s_frame + 1));
    uint16_t crc = crc_block(CRC_INIT, s_frame + 1, len);
    proto_u16(w, crc);
    len = cobs_encode_inplace(s_frame, (uint16_t)(len + PROTO_CRC_BYTES));
    s_frame[len++] = 0x00;
    ring_write(w->link->tx, s_frame, len);
    return true;
}

bool proto_send_hello(proto_link_t *link, const proto_hello_t *h)
{
    proto_writer_t w;
    proto_begin(&w, link, PROTO_HELLO, 11 + PROTO_DEVICE_ID_BYTES);
    proto_u8(&w, 1); /* protocol version */
    proto_u8(&w, h->fw_major);
    proto_u8(&w, h->fw_minor);
    proto_u8(&w, h->fw_patch);
    proto_u8(&w, h->n_piezo);
    proto_u8(&w, h->n_load);
    proto_u16(&w, h->piezo_rate_hz);
    proto_u16(&w, h->load_rate_hz);
    proto_u8(&w, h->adc_bits);
    memcpy(w.p, h->device_id, PROTO_DEVICE_ID_BYTES);
    w.p += PROTO_DEVICE_ID_BYTES;
    return proto_end(&w);
}

void proto_piezo_begin(proto_writer_t *w, proto_link_t *link, uint32_t t_us, uint8_t n_sets,
                       uint8_t n_ch)
{
    proto_begin(w, link, PROTO_PIEZO, (uint16_t)(5u + 2u * n_sets * n_ch));
    proto_u32(w, t_us);
    proto_u8(w, n_sets);
}

void proto_piezo_set(proto_writer_t *w, const uint16_t *set, uint8_t n_ch)
{
    /* The sample payload is the one part whose size the caller chooses:
     * a message too long for the protocol is dropped, and must not run
     * past the frame buffer while it is written. */
    if (!w->room) {
        return;
    }
    /* Both the AVR and the hosts we test on are little-endian, as the wire is. */
    memcpy(w->p, set, 2u * n_ch);
    w->p += 2u * n_ch;
}

bool proto_send_load(proto_link_t *link, uint32_t t_us, uint8_t valid, const int32_t *values,
                     uint8_t n_ch)
{
    proto_writer_t w;
    proto_begin(&w, link, PROTO_LOAD, (uint8_t)(5u + 3u * n_ch));
    proto_u32(&w, t_us);
    proto_u8(&w, valid);
    for (uint8_t k = 0; k < n_ch; k++) {
        /* contracts.md: 0 where not valid */
        proto_s24(&w, (valid >> k) & 1u ? values[k] : 0);
    }
    return proto_end(&w);
}

bool proto_send_status(proto_link_t *link, const proto_status_t *s)
{
    proto_writer_t w;
    proto_begin(&w, link, PROTO_STATUS, 12);
    proto_u32(&w, s->uptime_ms);
    proto_u16(&w, s->piezo_overruns);
    proto_u16(&w, s->tx_dropped);
    proto_u16(&w, s->load_timeouts);
    proto_u8(&w, s->cpu_load_pct);
    proto_u8(&w, s->flags);
    return proto_end(&w);
}

bool proto_send_ack(proto_link_t *link, uint8_t cmd_type, uint16_t cmd_seq, uint8_t result)
{
    proto_writer_t w;
    proto_begin(&w, link, PROTO_ACK, 4);
    proto_u8(&w, cmd_type);
    proto_u16(&w, cmd_seq);
    proto_u8(&w, result);
    return proto_end(&w);
}

bool proto_send_pong(proto_link_t *link, uint32_t token, uint32_t t_us)
{
    proto_writer_t w;
    proto_begin(&w, link, PROTO_PONG, 8);
    proto_u32(&w, token);
    proto_u32(&w, t_us);
    return proto_end(&w);
}
