/* Fuzz target: the host-command frame decoder and command checker, and COBS.
 *
 * LLVMFuzzerTestOneInput is libFuzzer's entry point (build with clang
 * -fsanitize=fuzzer,address,undefined if clang is there). Built with
 * -DFUZZ_STANDALONE it gets its own driver instead, needing only gcc: it
 * mutates the protocol vectors' frames and random bytes for a bounded time
 * under ASan/UBSan, and checks invariants besides "no crash". */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "cobs.h"
#include "config.h"
#include "crc.h"
#include "proto.h"

#define FUZZ_ASSERT(cond)                                                                  \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            fprintf(stderr, "fuzz invariant failed: %s (%s:%d)\n", #cond, __FILE__, __LINE__); \
            abort();                                                                       \
        }                                                                                  \
    } while (0)

static void check_frame(const cmd_frame_t *f, uint16_t cap)
{
    FUZZ_ASSERT(f->body_len + 5u <= cap);
    uint8_t r = cmd_check(f);
    FUZZ_ASSERT(r == PROTO_RESULT_OK || r == PROTO_RESULT_UNKNOWN || r == PROTO_RESULT_BAD_ARGUMENT);
    if (r == PROTO_RESULT_OK && f->type == PROTO_PING) {
        (void)cmd_body_u32(f, 0);
    }
    if (r == PROTO_RESULT_OK && f->type == PROTO_START) {
        FUZZ_ASSERT((f->body[0] & ~PROTO_STREAM_ALL) == 0);
    }
    /* a frame handed out has a valid CRC over type | seq | body */
    uint8_t raw[300];
    raw[0] = f->type;
    raw[1] = (uint8_t)f->seq;
    raw[2] = (uint8_t)(f->seq >> 8);
    memcpy(raw + 3, f->body, f->body_len);
    uint16_t crc = crc_block(CRC_INIT, raw, (uint16_t)(3 + f->body_len));
    FUZZ_ASSERT(f->body[f->body_len] == (uint8_t)crc && f->body[f->body_len + 1] == (uint8_t)(crc >> 8));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* the firmware's decoder, and a wide one like the host's */
    static uint8_t small[CONFIG_CMD_FRAME_BYTES], wide[255];
    cmd_decoder_t d1, d2;
    cmd_init(&d1, small, sizeof small);
    cmd_init(&d2, wide, sizeof wide);
    cmd_frame_t f;
    for (size_t i = 0; i < size; i++) {
        if (cmd_feed(&d1, data[i], &f)) {
            check_frame(&f, sizeof small);
        }
        if (cmd_feed(&d2, data[i], &f)) {
            check_frame(&f, sizeof wide);
        }
    }
    /* COBS: decoding never writes more than it reads; encoding round-trips */
    uint8_t out[4096];
    size_t n = size < sizeof out ? size : sizeof out;
    int16_t dn = cobs_decode(data, (uint16_t)n, out);
    FUZZ_ASSERT(dn <= (int16_t)n);
    if (n <= COBS_MAX_INPLACE) {
        uint8_t buf[COBS_MAX_INPLACE + 2], back[COBS_MAX_INPLACE + 2];
        memcpy(buf + 1, data, n);
        uint16_t en = cobs_encode_inplace(buf, (uint16_t)n);
        FUZZ_ASSERT(memchr(buf, 0, en) == NULL);
        FUZZ_ASSERT(cobs_decode(buf, en, back) == (int16_t)n);
        FUZZ_ASSERT(memcmp(back, data, n) == 0);
    }
    return 0;
}

#ifdef FUZZ_STANDALONE
#include <time.h>

static uint64_t s_rng = 0x9E3779B97F4A7C15ull;
static uint32_t rnd(void)
{
    s_rng ^= s_rng << 13;
    s_rng ^= s_rng >> 7;
    s_rng ^= s_rng << 17;
    return (uint32_t)(s_rng >> 11);
}

/* Good frames of every command, to mutate from. */
static size_t seed_frame(uint8_t *out, uint8_t type, const uint8_t *body, uint8_t len)
{
    uint8_t raw[64];
    raw[1] = type;
    raw[2] = (uint8_t)rnd();
    raw[3] = (uint8_t)rnd();
    memcpy(raw + 4, body, len);
    uint16_t crc = crc_block(CRC_INIT, raw + 1, (uint16_t)(3 + len));
    raw[4 + len] = (uint8_t)crc;
    raw[5 + len] = (uint8_t)(crc >> 8);
    uint16_t n = cobs_encode_inplace(raw, (uint16_t)(5 + len));
    memcpy(out, raw, n);
    out[n] = 0;
    return n + 1u;
}

int main(int argc, char **argv)
{
    double seconds = 5;
    unsigned long runs = 0;
    for (int i = 1; i < argc; i++) {
        if (!strncmp(argv[i], "-seconds=", 9)) {
            seconds = atof(argv[i] + 9);
        } else if (!strncmp(argv[i], "-runs=", 6)) {
            runs = strtoul(argv[i] + 6, NULL, 10);
        } else if (!strncmp(argv[i], "-seed=", 6)) {
            s_rng = strtoull(argv[i] + 6, NULL, 0) | 1u;
        }
    }
    static const uint8_t types[] = {PROTO_GET_INFO, PROTO_START, PROTO_STOP, PROTO_PING,
                                    PROTO_RESET, 0xC0, 0x01};
    uint8_t input[1024];
    clock_t start = clock();
    unsigned long done = 0;
    while (runs ? done < runs : (double)(clock() - start) / CLOCKS_PER_SEC < seconds) {
        size_t len = 0;
        /* a stream of a few frames, good or random, then mutations */
        int pieces = 1 + (int)(rnd() % 6);
        for (int p = 0; p < pieces && len < sizeof input - 80; p++) {
            if (rnd() % 3) {
                uint8_t body[8];
                for (int b = 0; b < 8; b++) {
                    body[b] = (uint8_t)rnd();
                }
                len += seed_frame(input + len, types[rnd() % sizeof types], body,
                                  (uint8_t)(rnd() % 7));
            } else {
                size_t junk = rnd() % 70;
                for (size_t b = 0; b < junk; b++) {
                    input[len++] = (uint8_t)(rnd() % 4 ? rnd() : 0);
                }
            }
        }
        int flips = (int)(rnd() % 4);
        for (int m = 0; m < flips && len; m++) {
            size_t at = rnd() % len;
            switch (rnd() % 3) {
            case 0: input[at] ^= (uint8_t)(1u << (rnd() % 8)); break;
            case 1: input[at] = 0; break;
            default: input[at] = (uint8_t)rnd(); break;
            }
        }
        LLVMFuzzerTestOneInput(input, len);
        done++;
    }
    printf("fuzz_cmd: %lu inputs, no invariant broken, no sanitizer report\n", done);
    return 0;
}
#endif
