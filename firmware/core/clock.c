#include "clock.h"

void clock_init(clock_state_t *c, uint16_t tick)
{
    c->last_tick = tick;
    c->us = 0;
    c->odd = 0;
}

void clock_update(clock_state_t *c, uint16_t tick)
{
    uint16_t d = (uint16_t)(tick - c->last_tick);
    /* half-microseconds elapsed, plus the half left over last time */
    uint32_t half = (uint32_t)d * 125u + c->odd;
    c->us += half >> 1;
    c->odd = (uint8_t)(half & 1u);
    c->last_tick = tick;
}

uint32_t clock_us_of(const clock_state_t *c, uint16_t tick)
{
    uint16_t d = (uint16_t)(c->last_tick - tick);
    /* floor((2 us + odd - 125 d) / 2) = us - ceil((125 d - odd) / 2) */
    uint32_t back = (uint32_t)d * 125u - c->odd;
    return c->us - ((back + 1u) >> 1);
}
