/* A flat C interface to the core's command decoder for Python (ctypes), so
 * the Python tests can run it against the Python codec on generated streams
 * (tests/firmware/test_firmware_differential.py). Built without sanitizers
 * as build/host/libtowerear_core.so. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "cmd.h"

/* Decode a whole stream with a decoder of capacity `cap` (<= 255). Each good
 * frame is appended to `out` as: type, seq (2 bytes LE), body_len, body,
 * result of cmd_check. Returns the bytes written, or -1 if `out` is too small.
 * counters[4] receives frames_ok, crc_errors, framing_errors, oversize. */
int core_decode_stream(const uint8_t *in, size_t n, uint16_t cap, uint8_t *out, size_t out_cap,
                       uint16_t *counters);
int core_decode_stream(const uint8_t *in, size_t n, uint16_t cap, uint8_t *out, size_t out_cap,
                       uint16_t *counters)
{
    uint8_t buf[255];
    cmd_decoder_t d;
    cmd_init(&d, buf, cap > sizeof buf ? sizeof buf : cap);
    size_t w = 0;
    cmd_frame_t f;
    for (size_t i = 0; i < n; i++) {
        if (!cmd_feed(&d, in[i], &f)) {
            continue;
        }
        if (w + 5u + f.body_len > out_cap) {
            return -1;
        }
        out[w++] = f.type;
        out[w++] = (uint8_t)f.seq;
        out[w++] = (uint8_t)(f.seq >> 8);
        out[w++] = f.body_len;
        memcpy(out + w, f.body, f.body_len);
        w += f.body_len;
        out[w++] = cmd_check(&f);
    }
    counters[0] = d.frames_ok;
    counters[1] = d.crc_errors;
    counters[2] = d.framing_errors;
    counters[3] = d.oversize;
    return (int)w;
}
