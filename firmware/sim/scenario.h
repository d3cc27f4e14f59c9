/* A scenario file: what the sensors see, written by hostapp/sources/simavr.py.
 *
 * Little-endian binary:
 *   char[8]  magic "TWRSCN01"
 *   u32      piezo_rate_hz, n_sets, n_load, n_cmds, n_piezo (8), n_loadch (8)
 *   u16      piezo[n_sets][n_piezo]      ADC codes 0..1023
 *   u32      load_t_us[n_load]           when each HX711 reading is ready, from the first piezo set
 *   i32      load[n_load][n_loadch]      HX711 counts (signed 24-bit)
 *   u8       load_valid[n_load]          bit k: channel k connected
 *   n_cmds x { u32 t_us; u16 len; u8 bytes[len] }   host bytes to send at t_us
 */
#ifndef SCENARIO_H
#define SCENARIO_H

#include <stdint.h>

#define SCN_CHANNELS 8

typedef struct {
    uint32_t t_us;
    uint16_t len;
    const uint8_t *bytes;
} scn_cmd_t;

typedef struct {
    uint32_t piezo_rate_hz;
    uint32_t n_sets;
    uint32_t n_load;
    uint32_t n_cmds;
    const uint16_t *piezo;   /* n_sets x 8 */
    const uint32_t *load_t_us;
    const int32_t *load;     /* n_load x 8 */
    const uint8_t *load_valid;
    scn_cmd_t *cmds;
    uint8_t *blob;
} scenario_t;

/* Returns 0, or -1 with a message in err. */
int scenario_load(scenario_t *s, const char *path, char *err, int errlen);
/* Scenario length in microseconds (from the piezo data). */
uint64_t scenario_duration_us(const scenario_t *s);

#endif
