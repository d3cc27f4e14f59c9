#include "sets.h"

void sets_init(sets_ring_t *r)
{
    r->head = 0;
    r->tail = 0;
    r->overruns = 0;
}

uint8_t sets_count(const sets_ring_t *r)
{
    return (uint8_t)((r->head - r->tail) & SETS_MASK);
}

const uint16_t *sets_peek(const sets_ring_t *r, uint16_t *tick)
{
    uint8_t tail = r->tail;
    *tick = r->tick[tail];
    return r->samples[tail];
}

void sets_drop(sets_ring_t *r)
{
    r->tail = (uint8_t)((r->tail + 1u) & SETS_MASK);
}
