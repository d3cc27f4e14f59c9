/* Protocol v1 messages (contracts.md section 1), device -> host.
 *
 * A message is written field by field into one frame buffer (after a
 * room check on the TX ring), then CRC'd, COBS-encoded in place and copied
 * into the TX ring in one piece. A message that does not fit in the ring is
 * dropped whole and counted in tx_dropped; its sequence number is still
 * used up, so the host sees the gap. */
#ifndef PROTO_H
#define PROTO_H

#include <stdbool.h>
#include <stdint.h>

#include "ring.h"

#define PROTO_HELLO 0x01
#define PROTO_PIEZO 0x02
#define PROTO_LOAD 0x03
#define PROTO_STATUS 0x04
#define PROTO_ACK 0x05
#define PROTO_PONG 0x06

#define PROTO_GET_INFO 0x81
#define PROTO_START 0x82
#define PROTO_STOP 0x83
#define PROTO_PING 0x84
#define PROTO_RESET 0x85

#define PROTO_RESULT_OK 0
#define PROTO_RESULT_UNKNOWN 1
#define PROTO_RESULT_BAD_ARGUMENT 2
#define PROTO_RESULT_BUSY 3

#define PROTO_STREAM_PIEZO 0x01
#define PROTO_STREAM_LOAD 0x02
#define PROTO_STREAM_STATUS 0x04
#define PROTO_STREAM_ALL 0x07

#define PROTO_HEADER_BYTES 3
#define PROTO_CRC_BYTES 2
#define PROTO_MAX_MESSAGE 254
#define PROTO_DEVICE_ID_BYTES 8
/* A frame on the wire: code byte + message + 0x00. */
#define PROTO_FRAME_BYTES(body_len) ((uint16_t)((body_len) + PROTO_HEADER_BYTES + PROTO_CRC_BYTES + 2u))

/* STATUS flags (bit k). Bits 0-2 are the streams that are on, as in START
 * (the simulated device reports the same); the rest are the firmware's. */
#define PROTO_FLAG_PIEZO_ON 0x01      /* piezo stream enabled */
#define PROTO_FLAG_LOAD_ON 0x02       /* load stream enabled */
#define PROTO_FLAG_STATUS_ON 0x04     /* status stream enabled (always set in a STATUS sent) */
#define PROTO_FLAG_LOAD_MISSING 0x08  /* a load channel missed a reading since the last STATUS */
#define PROTO_FLAG_RX_ERROR 0x10      /* a damaged host frame or RX overflow since the last STATUS */
#define PROTO_FLAG_WATCHDOG_BOOT 0x20 /* this boot was caused by the watchdog (RESET or a hang) */

/* One direction of the link: where frames go, and its counters. */
typedef struct {
    ring_t *tx;
    uint16_t seq;        /* of the next message */
    uint16_t tx_dropped; /* messages dropped for lack of room (wraps) */
} proto_link_t;

typedef struct {
    proto_link_t *link;
    uint8_t *p;    /* next byte of the frame buffer */
    bool room;
} proto_writer_t;

typedef struct {
    uint8_t fw_major, fw_minor, fw_patch;
    uint8_t n_piezo, n_load;
    uint16_t piezo_rate_hz, load_rate_hz;
    uint8_t adc_bits;
    uint8_t device_id[PROTO_DEVICE_ID_BYTES];
} proto_hello_t;

typedef struct {
    uint32_t uptime_ms;
    uint16_t piezo_overruns, tx_dropped, load_timeouts;
    uint8_t cpu_load_pct, flags;
} proto_status_t;

void proto_link_init(proto_link_t *link, ring_t *tx);
/* True if a message with this body length fits in the TX ring now. */
bool proto_fits(const proto_link_t *link, uint16_t body_len);

/* Generic writer: begin (with the body length), put the body, end.
 * proto_end returns false if the message was dropped for lack of room. */
void proto_begin(proto_writer_t *w, proto_link_t *link, uint8_t type, uint16_t body_len);
bool proto_end(proto_writer_t *w);

static inline void proto_u8(proto_writer_t *w, uint8_t v) { *w->p++ = v; }
static inline void proto_u16(proto_writer_t *w, uint16_t v)
{
    w->p[0] = (uint8_t)v;
    w->p[1] = (uint8_t)(v >> 8);
    w->p += 2;
}
static inline void proto_u32(proto_writer_t *w, uint32_t v)
{
    proto_u16(w, (uint16_t)v);
    proto_u16(w, (uint16_t)(v >> 16));
}
static inline void proto_s24(proto_writer_t *w, int32_t v)
{
    uint32_t u = (uint32_t)v;
    w->p[0] = (uint8_t)u;
    w->p[1] = (uint8_t)(u >> 8);
    w->p[2] = (uint8_t)(u >> 16);
    w->p += 3;
}

bool proto_send_hello(proto_link_t *link, const proto_hello_t *h);
/* PIEZO is built by the caller from its sample ring: begin, then n sets. */
void proto_piezo_begin(proto_writer_t *w, proto_link_t *link, uint32_t t_us, uint8_t n_sets,
                       uint8_t n_ch);
void proto_piezo_set(proto_writer_t *w, const uint16_t *set, uint8_t n_ch);
bool proto_send_load(proto_link_t *link, uint32_t t_us, uint8_t valid, const int32_t *values,
                     uint8_t n_ch);
bool proto_send_status(proto_link_t *link, const proto_status_t *s);
bool proto_send_ack(proto_link_t *link, uint8_t cmd_type, uint16_t cmd_seq, uint8_t result);
bool proto_send_pong(proto_link_t *link, uint32_t token, uint32_t t_us);

#endif
