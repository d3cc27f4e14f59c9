#include "scenario.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int scenario_load(scenario_t *s, const char *path, char *err, int errlen)
{
    memset(s, 0, sizeof *s);
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "cannot open scenario %s", path);
        return -1;
    }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    if (size < 32) {
        fclose(f);
        snprintf(err, errlen, "scenario %s is too short", path);
        return -1;
    }
    uint8_t *b = malloc((size_t)size);
    if (!b || fread(b, 1, (size_t)size, f) != (size_t)size) {
        fclose(f);
        free(b);
        snprintf(err, errlen, "cannot read scenario %s", path);
        return -1;
    }
    fclose(f);
    if (memcmp(b, "TWRSCN01", 8) != 0 || rd32(b + 28) != SCN_CHANNELS || rd32(b + 24) != SCN_CHANNELS) {
        free(b);
        snprintf(err, errlen, "%s is not a towerear scenario (v1, 8 channels)", path);
        return -1;
    }
    s->piezo_rate_hz = rd32(b + 8);
    s->n_sets = rd32(b + 12);
    s->n_load = rd32(b + 16);
    s->n_cmds = rd32(b + 20);
    uint64_t need = 32 + (uint64_t)s->n_sets * 16 + (uint64_t)s->n_load * (4 + 32 + 1);
    if (s->piezo_rate_hz == 0 || s->n_sets == 0 || need > (uint64_t)size) {
        free(b);
        snprintf(err, errlen, "scenario %s is truncated or empty", path);
        return -1;
    }
    /* The header is 32 bytes and every section a multiple of its element
     * size from there, so the arrays are aligned for direct use. */
    uint8_t *p = b + 32;
    s->piezo = (const uint16_t *)p;
    p += (size_t)s->n_sets * 16;
    s->load_t_us = (const uint32_t *)p;
    p += (size_t)s->n_load * 4;
    s->load = (const int32_t *)p;
    p += (size_t)s->n_load * 32;
    s->load_valid = p;
    p += s->n_load;
    s->cmds = calloc(s->n_cmds ? s->n_cmds : 1, sizeof *s->cmds);
    for (uint32_t i = 0; i < s->n_cmds; i++) {
        if (p + 6 > b + size) {
            free(b);
            free(s->cmds);
            snprintf(err, errlen, "scenario %s: command list truncated", path);
            return -1;
        }
        s->cmds[i].t_us = rd32(p);
        s->cmds[i].len = (uint16_t)(p[4] | p[5] << 8);
        s->cmds[i].bytes = p + 6;
        p += 6 + s->cmds[i].len;
        if (p > b + size) {
            free(b);
            free(s->cmds);
            snprintf(err, errlen, "scenario %s: command %u truncated", path, i);
            return -1;
        }
    }
    s->blob = b;
    return 0;
}

uint64_t scenario_duration_us(const scenario_t *s)
{
    return (uint64_t)s->n_sets * 1000000u / s->piezo_rate_hz;
}
