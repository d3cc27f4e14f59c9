/* Host unit tests of the firmware core, built with -fsanitize=address,undefined.
 * Protocol checks use the shared vectors (tests/vectors/protocol_v1.json,
 * turned into build/vectors.h by tools/gen_vectors.py). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "board.h"
#include "check.h"
#include "clock.h"
#include "cmd.h"
#include "cobs.h"
#include "config.h"
#include "cpu.h"
#include "crc.h"
#include "hx711.h"
#include "proto.h"
#include "ring.h"
#include "sets.h"
#include "vectors.h"

/* ---------------------------------------------------------------- crc, cobs */

static void test_crc_vectors(void)
{
    for (int i = 0; i < VEC_N_CRC; i++) {
        CHECK_EQ(crc_block(CRC_INIT, vec_crc[i].data, vec_crc[i].len), vec_crc[i].crc);
    }
    uint16_t crc = CRC_INIT;
    for (const char *p = "123456789"; *p; p++) {
        crc = crc_update(crc, (uint8_t)*p);
    }
    CHECK_EQ(crc, 0x29B1);
}

static void test_cobs_vectors(void)
{
    uint8_t buf[600];
    for (int i = 0; i < VEC_N_COBS; i++) {
        const vec_cobs_t *v = &vec_cobs[i];
        if (v->len <= COBS_MAX_INPLACE) {
            memcpy(buf + 1, v->data, v->len);
            uint16_t n = cobs_encode_inplace(buf, v->len);
            CHECK_EQ(n, v->enc_len);
            CHECK(memcmp(buf, v->enc, n) == 0);
        }
        int16_t d = cobs_decode(v->enc, v->enc_len, buf);
        CHECK_EQ(d, v->len);
        CHECK(d >= 0 && memcmp(buf, v->data, v->len) == 0);
    }
}

static void test_cobs_roundtrip_random(void)
{
    uint8_t raw[255], buf[257], out[257];
    uint32_t x = 12345;
    for (int trial = 0; trial < 2000; trial++) {
        uint16_t len = (uint16_t)(trial % 255);
        for (uint16_t i = 0; i < len; i++) {
            x = x * 1103515245u + 12345u;
            /* many zeros and many runs of non-zeros */
            raw[i] = (x >> 16) % 4 == 0 ? 0 : (uint8_t)(x >> 8);
        }
        memcpy(buf + 1, raw, len);
        uint16_t n = cobs_encode_inplace(buf, len);
        CHECK(memchr(buf, 0, n) == NULL);
        CHECK_EQ(cobs_decode(buf, n, out), len);
        CHECK(memcmp(out, raw, len) == 0);
    }
}

static void test_cobs_rejects_bad_frames(void)
{
    uint8_t out[16];
    const uint8_t past_end[] = {0x05, 0x11, 0x22};
    const uint8_t zero_code[] = {0x00, 0x11};
    const uint8_t zero_inside[] = {0x03, 0x11, 0x00};
    CHECK_EQ(cobs_decode(past_end, sizeof past_end, out), -1);
    CHECK_EQ(cobs_decode(zero_code, sizeof zero_code, out), -1);
    CHECK_EQ(cobs_decode(zero_inside, sizeof zero_inside, out), -1);
}

/* ---------------------------------------------------------------- ring */

static void test_ring_put_get_wrap(void)
{
    uint8_t mem[8];
    ring_t r;
    ring_init(&r, mem, sizeof mem);
    CHECK_EQ(ring_free(&r), 7);
    uint8_t b = 0;
    for (int round = 0; round < 5; round++) {
        for (uint8_t i = 0; i < 7; i++) {
            CHECK(ring_put(&r, (uint8_t)(round * 10 + i)));
        }
        CHECK(!ring_put(&r, 99)); /* full: one slot stays empty */
        CHECK_EQ(ring_count(&r), 7);
        for (uint8_t i = 0; i < 7; i++) {
            CHECK(ring_get(&r, &b));
            CHECK_EQ(b, round * 10 + i);
        }
        CHECK(!ring_get(&r, &b));
    }
}

static void test_ring_write_block_wraps(void)
{
    uint8_t mem[16];
    ring_t r;
    ring_init(&r, mem, sizeof mem);
    uint8_t b;
    for (int i = 0; i < 11; i++) { /* move head and tail to 11 */
        ring_put(&r, 0);
        ring_get(&r, &b);
    }
    const uint8_t block[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    ring_write(&r, block, sizeof block);
    CHECK_EQ(ring_count(&r), 10);
    for (int i = 0; i < 10; i++) {
        CHECK(ring_get(&r, &b));
        CHECK_EQ(b, i + 1);
    }
}

static void test_ring_put_from_isr_matches(void)
{
    uint8_t mem[4];
    ring_t r;
    ring_init(&r, mem, sizeof mem);
    CHECK(ring_put_from_isr(&r, 1));
    CHECK(ring_put_from_isr(&r, 2));
    CHECK(ring_put_from_isr(&r, 3));
    CHECK(!ring_put_from_isr(&r, 4));
    uint8_t b;
    CHECK(ring_get(&r, &b) && b == 1);
}

/* ---------------------------------------------------------------- proto */

static uint16_t drain(ring_t *r, uint8_t *out, uint16_t cap)
{
    uint16_t n = 0;
    while (n < cap && ring_get(r, &out[n])) {
        n++;
    }
    return n;
}

static void build_vector_message(proto_link_t *link, const vec_msg_t *v)
{
    const int64_t *f = v->fields;
    link->seq = v->seq;
    switch (v->type) {
    case PROTO_HELLO: {
        proto_hello_t h = {(uint8_t)f[1], (uint8_t)f[2], (uint8_t)f[3], (uint8_t)f[4],
                           (uint8_t)f[5], (uint16_t)f[6], (uint16_t)f[7], (uint8_t)f[8], {0}};
        for (int i = 0; i < 8; i++) {
            h.device_id[i] = (uint8_t)f[9 + i];
        }
        CHECK_EQ(f[0], 1);
        proto_send_hello(link, &h);
        break;
    }
    case PROTO_PIEZO: {
        uint8_t n = (uint8_t)f[1], ch = (uint8_t)f[2];
        proto_writer_t w;
        proto_piezo_begin(&w, link, (uint32_t)f[0], n, ch);
        for (uint8_t s = 0; s < n; s++) {
            uint16_t set[16];
            for (uint8_t k = 0; k < ch; k++) {
                set[k] = (uint16_t)f[3 + s * ch + k];
            }
            proto_piezo_set(&w, set, ch);
        }
        CHECK(proto_end(&w));
        break;
    }
    case PROTO_LOAD: {
        int32_t values[8];
        uint8_t n = (uint8_t)(v->n_fields - 2);
        for (uint8_t k = 0; k < n; k++) {
            values[k] = (int32_t)f[2 + k];
        }
        proto_send_load(link, (uint32_t)f[0], (uint8_t)f[1], values, n);
        break;
    }
    case PROTO_STATUS: {
        proto_status_t s = {(uint32_t)f[0], (uint16_t)f[1], (uint16_t)f[2], (uint16_t)f[3],
                            (uint8_t)f[4], (uint8_t)f[5]};
        proto_send_status(link, &s);
        break;
    }
    case PROTO_ACK:
        proto_send_ack(link, (uint8_t)f[0], (uint16_t)f[1], (uint8_t)f[2]);
        break;
    case PROTO_PONG:
        proto_send_pong(link, (uint32_t)f[0], (uint32_t)f[1]);
        break;
    default:
        CHECK(!"unexpected device message type in vectors");
    }
}

static void test_device_messages_match_vectors(void)
{
    static uint8_t mem[1024];
    static uint8_t out[1024];
    ring_t tx;
    proto_link_t link;
    int built = 0;
    for (int i = 0; i < VEC_N_MSG; i++) {
        const vec_msg_t *v = &vec_msg[i];
        if (v->host_to_device) {
            continue;
        }
        ring_init(&tx, mem, sizeof mem);
        proto_link_init(&link, &tx);
        build_vector_message(&link, v);
        uint16_t n = drain(&tx, out, sizeof out);
        CHECK_EQ(n, v->wire_len);
        if (n != v->wire_len || memcmp(out, v->wire, n) != 0) {
            fprintf(stderr, "  vector %s differs\n", v->name);
            check_failures++;
        }
        CHECK_EQ(link.seq, (uint16_t)(v->seq + 1)); /* seq counts and wraps */
        built++;
    }
    CHECK(built >= 10);
}

static void test_full_ring_drops_whole_frames(void)
{
    uint8_t mem[32];
    ring_t tx;
    proto_link_t link;
    ring_init(&tx, mem, sizeof mem);
    proto_link_init(&link, &tx);
    CHECK(proto_send_pong(&link, 1, 2));  /* 13 + 2 bytes */
    CHECK(proto_send_pong(&link, 3, 4));  /* 30 of 31 */
    CHECK(!proto_send_pong(&link, 5, 6)); /* no room: dropped whole */
    CHECK_EQ(link.tx_dropped, 1);
    CHECK_EQ(link.seq, 3); /* the dropped message used up its seq */
    uint8_t out[32];
    uint16_t n = drain(&tx, out, sizeof out);
    CHECK_EQ(n, 30);
    CHECK_EQ(out[14], 0); /* two complete frames, each ends in 0x00 */
    CHECK_EQ(out[29], 0);
    /* too long a message is dropped, never truncated */
    uint8_t big[1024];
    ring_init(&tx, big, sizeof big);
    proto_writer_t w;
    proto_piezo_begin(&w, &link, 0, 15, CONFIG_N_PIEZO); /* 245-byte body */
    for (int s = 0; s < 15; s++) {
        uint16_t set[8] = {0};
        proto_piezo_set(&w, set, CONFIG_N_PIEZO);
    }
    CHECK(proto_end(&w)); /* 3 + 245 + 2 = 250 bytes: the largest that fits */
    proto_piezo_begin(&w, &link, 0, 16, CONFIG_N_PIEZO); /* 261 bytes: over the limit */
    for (int s = 0; s < 16; s++) {
        uint16_t set[8] = {0};
        proto_piezo_set(&w, set, CONFIG_N_PIEZO);
    }
    uint16_t before = ring_count(&tx);
    CHECK(!proto_end(&w));
    CHECK_EQ(ring_count(&tx), before);
}

/* ---------------------------------------------------------------- cmd */

static int feed_all(cmd_decoder_t *d, const uint8_t *wire, uint16_t len, cmd_frame_t *frames,
                    int cap, uint8_t (*copies)[260])
{
    int n = 0;
    cmd_frame_t f;
    for (uint16_t i = 0; i < len; i++) {
        if (cmd_feed(d, wire[i], &f) && n < cap) {
            /* the body points into the decoder's buffer: copy it out */
            memcpy(copies[n], f.body, f.body_len);
            f.body = copies[n];
            frames[n++] = f;
        }
    }
    return n;
}

static void test_host_commands_from_vectors(void)
{
    uint8_t buf[CONFIG_CMD_FRAME_BYTES];
    cmd_decoder_t d;
    cmd_init(&d, buf, sizeof buf);
    static uint8_t copies[4][260];
    int seen = 0;
    for (int i = 0; i < VEC_N_MSG; i++) {
        const vec_msg_t *v = &vec_msg[i];
        if (!v->host_to_device) {
            continue;
        }
        cmd_frame_t f[4];
        int n = feed_all(&d, v->wire, v->wire_len, f, 4, copies);
        CHECK_EQ(n, 1);
        CHECK_EQ(f[0].type, v->type);
        CHECK_EQ(f[0].seq, v->seq);
        CHECK_EQ(f[0].body_len, v->message_len - 5);
        CHECK_EQ(cmd_check(&f[0]), PROTO_RESULT_OK);
        if (v->type == PROTO_START) {
            CHECK_EQ(f[0].body[0], v->fields[0]);
        }
        if (v->type == PROTO_PING) {
            CHECK_EQ(cmd_body_u32(&f[0], 0), v->fields[0]);
        }
        seen++;
    }
    CHECK_EQ(seen, 6);
    CHECK_EQ(cmd_errors(&d), 0);
}

static void test_damaged_streams_from_vectors(void)
{
    /* The vectors' streams are device -> host, but framing, COBS and CRC are
     * the same both ways: the device's decoder must resynchronise on them
     * exactly as the host's does. Its buffer is sized like the host's. */
    static uint8_t buf[255];
    static uint8_t copies[32][260];
    for (int i = 0; i < VEC_N_DAMAGED; i++) {
        const vec_damaged_t *v = &vec_damaged[i];
        cmd_decoder_t d;
        cmd_init(&d, buf, sizeof buf);
        cmd_frame_t f[32];
        int n = feed_all(&d, v->wire, v->wire_len, f, 32, copies);
        /* The device returns every well-formed frame (it answers unknown
         * types itself); the host drops unknown types and bad lengths. */
        CHECK_EQ(n, v->n_frames + v->unknown_types + v->bad_length);
        int j = 0;
        for (int k = 0; k < n && j < v->n_frames; k++) {
            if (f[k].type == v->types[j] && f[k].seq == v->seqs[j]) {
                j++;
            }
        }
        CHECK_EQ(j, v->n_frames);
        if (!v->partial_start) {
            CHECK_EQ(d.crc_errors, v->crc_errors);
            CHECK_EQ(d.framing_errors, v->framing_errors);
        }
        CHECK_EQ(d.oversize, v->oversize);
        if (j != v->n_frames || n != v->n_frames + v->unknown_types + v->bad_length) {
            fprintf(stderr, "  damaged vector %s\n", v->name);
        }
    }
}

static uint16_t make_command(uint8_t *wire, uint8_t type, uint16_t seq, const uint8_t *body,
                             uint8_t body_len)
{
    uint8_t raw[64];
    raw[1] = type;
    raw[2] = (uint8_t)seq;
    raw[3] = (uint8_t)(seq >> 8);
    if (body_len) {
        memcpy(raw + 4, body, body_len);
    }
    uint16_t len = (uint16_t)(3 + body_len);
    uint16_t crc = crc_block(CRC_INIT, raw + 1, len);
    raw[1 + len] = (uint8_t)crc;
    raw[2 + len] = (uint8_t)(crc >> 8);
    uint16_t n = cobs_encode_inplace(raw, (uint16_t)(len + 2));
    memcpy(wire, raw, n);
    wire[n] = 0;
    return (uint16_t)(n + 1);
}

static uint8_t check_of(uint8_t type, const uint8_t *body, uint8_t body_len)
{
    uint8_t buf[CONFIG_CMD_FRAME_BYTES], wire[64];
    static uint8_t copies[2][260];
    cmd_decoder_t d;
    cmd_init(&d, buf, sizeof buf);
    uint16_t n = make_command(wire, type, 7, body, body_len);
    cmd_frame_t f[2];
    if (feed_all(&d, wire, n, f, 2, copies) != 1) {
        return 0xFF;
    }
    return cmd_check(&f[0]);
}

static void test_command_results(void)
{
    const uint8_t seven = 7, eight = 8, token[4] = {1, 2, 3, 4};
    CHECK_EQ(check_of(PROTO_START, &seven, 1), PROTO_RESULT_OK);
    CHECK_EQ(check_of(PROTO_START, &eight, 1), PROTO_RESULT_BAD_ARGUMENT); /* unknown stream bit */
    CHECK_EQ(check_of(PROTO_START, NULL, 0), PROTO_RESULT_BAD_ARGUMENT);
    CHECK_EQ(check_of(PROTO_PING, token, 4), PROTO_RESULT_OK);
    CHECK_EQ(check_of(PROTO_PING, token, 3), PROTO_RESULT_BAD_ARGUMENT);
    CHECK_EQ(check_of(PROTO_GET_INFO, token, 1), PROTO_RESULT_BAD_ARGUMENT);
    CHECK_EQ(check_of(PROTO_STOP, NULL, 0), PROTO_RESULT_OK);
    CHECK_EQ(check_of(PROTO_RESET, NULL, 0), PROTO_RESULT_OK);
    CHECK_EQ(check_of(0xC3, NULL, 0), PROTO_RESULT_UNKNOWN); /* reserved extension */
    CHECK_EQ(check_of(0x01, NULL, 0), PROTO_RESULT_UNKNOWN); /* a device message sent to us */
}

static void test_decoder_recovers_after_oversize_and_garbage(void)
{
    uint8_t buf[CONFIG_CMD_FRAME_BYTES], wire[64];
    static uint8_t copies[4][260];
    cmd_decoder_t d;
    cmd_init(&d, buf, sizeof buf);
    uint8_t junk[100];
    memset(junk, 0x55, sizeof junk);
    cmd_frame_t f[4];
    CHECK_EQ(feed_all(&d, junk, sizeof junk, f, 4, copies), 0);
    uint16_t n = make_command(wire, PROTO_STOP, 9, NULL, 0);
    /* the first 0x00 closes the oversize frame; the STOP after it is whole */
    CHECK_EQ(feed_all(&d, wire, n, f, 4, copies), 0);
    CHECK_EQ(d.oversize, 1);
    CHECK_EQ(feed_all(&d, wire, n, f, 4, copies), 1);
    CHECK_EQ(f[0].type, PROTO_STOP);
    const uint8_t zeros[3] = {0, 0, 0};
    CHECK_EQ(feed_all(&d, zeros, 3, f, 4, copies), 0);
    CHECK_EQ(cmd_errors(&d), 1); /* empty frames are not errors */
    const uint8_t tiny[3] = {0x02, 0x81, 0x00};
    CHECK_EQ(feed_all(&d, tiny, 3, f, 4, copies), 0);
    CHECK_EQ(d.framing_errors, 1);
}

/* ---------------------------------------------------------------- sets */

static void test_sets_ring_overrun_and_order(void)
{
    static sets_ring_t r;
    sets_init(&r);
    for (uint32_t s = 0; s < CONFIG_PIEZO_RING_SETS + 3; s++) {
        r.samples[r.head][0] = (uint16_t)s;
        r.tick[r.head] = (uint16_t)(s * 8u);
        sets_publish(&r);
    }
    CHECK_EQ(sets_count(&r), CONFIG_PIEZO_RING_SETS - 1);
    CHECK_EQ(r.overruns, 4);
    uint16_t t;
    for (uint32_t s = 0; s < CONFIG_PIEZO_RING_SETS - 1; s++) {
        const uint16_t *set = sets_peek(&r, &t);
        CHECK_EQ(set[0], s);
        CHECK_EQ(t, s * 8u);
        sets_drop(&r);
    }
    CHECK_EQ(sets_count(&r), 0);
}

/* ---------------------------------------------------------------- hx711 */

static const uint8_t chan_port[8] = BOARD_HX711_CHAN_PORT;
static const uint8_t chan_mask[8] = BOARD_HX711_CHAN_MASK;

static void test_hx711_unpack_parallel_bits(void)
{
    const int32_t want[8] = {0, 1, -1, 8388607, -8388608, 123456, -123456, 0x55AA55};
    uint8_t samples[24][BOARD_HX711_NPORTS];
    memset(samples, 0, sizeof samples);
    for (int i = 0; i < 24; i++) {
        for (int k = 0; k < 8; k++) {
            if (((uint32_t)want[k] >> (23 - i)) & 1u) {
                samples[i][chan_port[k]] |= chan_mask[k];
            }
        }
        samples[i][0] |= 0x03; /* the UART pins on port D must not leak in */
    }
    int32_t got[8];
    hx711_unpack(&samples[0][0], BOARD_HX711_NPORTS, chan_port, chan_mask, 8, got);
    for (int k = 0; k < 8; k++) {
        CHECK_EQ(got[k], want[k]);
    }
    uint8_t ports[BOARD_HX711_NPORTS] = {0};
    for (int k = 0; k < 8; k++) {
        if (k != 3 && k != 6) { /* 3 and 6 low = ready */
            ports[chan_port[k]] |= chan_mask[k];
        }
    }
    CHECK_EQ(hx711_ready_mask(ports, chan_port, chan_mask, 8), (1 << 3) | (1 << 6));
}

/* A model of eight HX711s in time, driving the scheduler like the main
 * loop does: poll every 100 us, read = consume the ready channels. */
typedef struct {
    uint32_t phase_us[8];
    int connected[8];
    int ready[8];
    uint32_t next_conv[8];
    int conversions[8];
    int lost[8]; /* overwritten before a round read them */
} hx_model_t;

static uint8_t model_step(hx_model_t *m, uint32_t now)
{
    uint8_t mask = 0;
    for (int k = 0; k < 8; k++) {
        if (!m->connected[k]) {
            continue;
        }
        while (m->next_conv[k] <= now) {
            m->lost[k] += m->ready[k];
            m->conversions[k]++;
            m->ready[k] = 1;
            m->next_conv[k] += CONFIG_HX711_PERIOD_US;
        }
        if (m->ready[k]) {
            mask |= (uint8_t)(1u << k);
        }
    }
    return mask;
}

static void model_connect(hx_model_t *m, int k, int on, uint32_t now, uint32_t phase)
{
    m->connected[k] = on;
    m->ready[k] = 0;
    m->next_conv[k] = now + phase;
}

typedef struct {
    uint32_t t;
    uint8_t valid;
} round_t;

static int run_model(hx_model_t *m, hx711_sched_t *s, uint32_t from, uint32_t to, round_t *rounds,
                     int cap, void (*event)(hx_model_t *, uint32_t))
{
    int n = 0;
    for (uint32_t now = from; now < to; now += 100) {
        if (event) {
            event(m, now);
        }
        uint8_t ready = model_step(m, now);
        hx711_action_t a = hx711_poll(s, now, ready);
        if (a == HX711_WAIT) {
            continue;
        }
        uint8_t valid = a == HX711_READ ? ready : 0;
        for (int k = 0; k < 8; k++) {
            if ((valid >> k) & 1u) {
                m->ready[k] = 0;
            }
        }
        hx711_round_done(s, now, valid, 8);
        if (n < cap) {
            rounds[n].t = now;
            rounds[n].valid = valid;
            n++;
        }
    }
    return n;
}

static void lift_5_to_7_at_1s_back_at_2s(hx_model_t *m, uint32_t now)
{
    if (now == 1000000) {
        for (int k = 5; k < 8; k++) {
            model_connect(m, k, 0, now, 0);
        }
    }
    if (now == 2000000) { /* back, each at its own phase */
        model_connect(m, 5, 1, now, 3000);
        model_connect(m, 6, 1, now, 7100);
        model_connect(m, 7, 1, now, 9900);
    }
}

static void test_hx711_rounds_follow_lift_and_return(void)
{
    static round_t r[400];
    hx_model_t m;
    memset(&m, 0, sizeof m);
    for (int k = 0; k < 8; k++) {
        model_connect(&m, k, 1, 0, 3000);
    }
    hx711_sched_t s;
    hx711_init(&s, 0);
    int n = run_model(&m, &s, 0, 3000000, r, 400, lift_5_to_7_at_1s_back_at_2s);
    /* one round per period: 3 s at 80/s, give or take the edges */
    CHECK(n >= 238 && n <= 241);
    uint32_t dropped_at = 0, back_at = 0;
    for (int i = 0; i < n; i++) {
        if (i > 0) {
            uint32_t gap = r[i].t - r[i - 1].t;
            /* (+100: the loop polls every 100 us) */
            CHECK(gap >= CONFIG_HX711_MIN_SPACING_US && gap <= CONFIG_HX711_TIMEOUT_US + 100);
        }
        if (r[i].t < 1000000) {
            CHECK_EQ(r[i].valid, 0xFF);
        }
        if (!dropped_at && r[i].t >= 1000000 && r[i].valid == 0x1F) {
            dropped_at = r[i].t;
        }
        if (r[i].t >= 1000000 && r[i].t < 2000000) {
            CHECK_EQ(r[i].valid & 0xE0, 0); /* never valid while lifted */
        }
        if (!back_at && r[i].t >= 2000000 && r[i].valid == 0xFF) {
            back_at = r[i].t;
        }
    }
    CHECK(dropped_at > 0 && dropped_at - 1000000 <= 2 * CONFIG_HX711_PERIOD_US);
    CHECK(back_at > 0 && back_at - 2000000 <= 2 * CONFIG_HX711_PERIOD_US);
    /* after the return every round has all eight (no alternating halves) */
    for (int i = 0; i < n; i++) {
        if (r[i].t > back_at) {
            CHECK_EQ(r[i].valid, 0xFF);
        }
    }
    CHECK(s.timeouts > 0);
    /* channels that stayed put lost no reading while the others came and went */
    for (int k = 0; k < 5; k++) {
        CHECK_EQ(m.lost[k], 0);
    }
}

static void lift_everything_at_1s(hx_model_t *m, uint32_t now)
{
    if (now == 1000000) {
        for (int k = 0; k < 8; k++) {
            model_connect(m, k, 0, now, 0);
        }
    }
    if (now == 1500000) {
        for (int k = 0; k < 8; k++) {
            model_connect(m, k, 1, now, 4000);
        }
    }
}

static void test_hx711_whole_tower_lifted_keeps_reporting(void)
{
    static round_t r[400];
    hx_model_t m;
    memset(&m, 0, sizeof m);
    for (int k = 0; k < 8; k++) {
        model_connect(&m, k, 1, 0, 3000);
    }
    hx711_sched_t s;
    hx711_init(&s, 0);
    int n = run_model(&m, &s, 0, 2000000, r, 400, lift_everything_at_1s);
    int empty = 0;
    uint32_t first_empty = 0;
    for (int i = 1; i < n; i++) {
        if (r[i].valid == 0) {
            if (!empty) {
                first_empty = r[i].t;
            }
            empty++;
            CHECK(r[i].t - r[i - 1].t <= CONFIG_HX711_TIMEOUT_US + 100);
        }
    }
    CHECK(first_empty > 1000000 && first_empty - 1000000 <= 2 * CONFIG_HX711_PERIOD_US);
    CHECK(empty >= 38 && empty <= 41); /* 0.5 s of all-invalid rounds at the load rate */
    CHECK_EQ(r[n - 1].valid, 0xFF);
}

/* ---------------------------------------------------------------- clock */

static void test_clock_extends_ticks_exactly(void)
{
    clock_state_t c;
    clock_init(&c, 0);
    uint64_t ticks = 0;
    uint32_t x = 99;
    for (int i = 0; i < 200000; i++) {
        x = x * 1664525u + 1013904223u;
        uint16_t step = (uint16_t)(x >> 20); /* 0..4095 ticks between updates */
        ticks += step;
        clock_update(&c, (uint16_t)ticks);
        uint64_t half = ticks * 125u;
        CHECK_EQ(c.us, (uint32_t)(half / 2u)); /* wraps at 2^32 us like t_us */
        uint16_t back = (uint16_t)(x >> 24);
        if (back <= ticks) {
            CHECK_EQ(clock_us_of(&c, (uint16_t)(ticks - back)), (uint32_t)((ticks - back) * 125u / 2u));
        }
    }
    CHECK(ticks * 125u / 2u > ((uint64_t)1 << 32)); /* the test went past a wrap */
    /* sets 8 ticks apart are exactly 500 us apart */
    CHECK_EQ(clock_us_of(&c, (uint16_t)(ticks - 8)) - clock_us_of(&c, (uint16_t)(ticks - 16)), 500);
}

/* ---------------------------------------------------------------- cpu */

static void test_cpu_load_arithmetic(void)
{
    /* 64 idle iterations take 6400 cycles: 100 cycles each, so a 1 s period
     * of 16 M cycles has room for 160000. */
    CHECK_EQ(cpu_load_pct(160000, 6400, 16000000), 0);
    CHECK_EQ(cpu_load_pct(80000, 6400, 16000000), 50);
    CHECK_EQ(cpu_load_pct(0, 6400, 16000000), 100);
    CHECK_EQ(cpu_load_pct(64000, 6400, 16000000), 60);
    CHECK_EQ(cpu_load_pct(500000, 6400, 16000000), 0); /* more idle than possible: clamp */
    CHECK_EQ(cpu_load_pct(10, 6400, 0), 0);
}

int main(void)
{
    RUN(test_crc_vectors);
    RUN(test_cobs_vectors);
    RUN(test_cobs_roundtrip_random);
    RUN(test_cobs_rejects_bad_frames);
    RUN(test_ring_put_get_wrap);
    RUN(test_ring_write_block_wraps);
    RUN(test_ring_put_from_isr_matches);
    RUN(test_device_messages_match_vectors);
    RUN(test_full_ring_drops_whole_frames);
    RUN(test_host_commands_from_vectors);
    RUN(test_damaged_streams_from_vectors);
    RUN(test_command_results);
    RUN(test_decoder_recovers_after_oversize_and_garbage);
    RUN(test_sets_ring_overrun_and_order);
    RUN(test_hx711_unpack_parallel_bits);
    RUN(test_hx711_rounds_follow_lift_and_return);
    RUN(test_hx711_whole_tower_lifted_keeps_reporting);
    RUN(test_clock_extends_ticks_exactly);
    RUN(test_cpu_load_arithmetic);
    printf("%d checks, %d failed\n", check_count, check_failures);
    return check_failures ? 1 : 0;
}
