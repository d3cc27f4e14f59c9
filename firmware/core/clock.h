/* The device clock: 16-bit ticks of 62.5 us (counted by the tick ISR)
 * extended to u32 microseconds by the main loop.
 *
 * The ISR only increments a u16, which is cheap; clock_update() must see
 * the tick count at least every 4 s (2^16 ticks) to extend it, which the
 * main loop does thousands of times a second. Microseconds are exact:
 * tick T is at floor(T * 62.5) us, wrapping at 2^32 like t_us on the wire. */
#ifndef CLOCK_H
#define CLOCK_H

#include <stdint.h>

typedef struct {
    uint16_t last_tick; /* tick count at the last update */
    uint32_t us;        /* floor(T * 62.5) at that tick, mod 2^32 */
    uint8_t odd;        /* (T * 125) & 1: the half microsecond floor() dropped */
} clock_state_t;

void clock_init(clock_state_t *c, uint16_t tick);
/* Advance to the tick count `tick` (at most 2^16 - 1 ticks later). */
void clock_update(clock_state_t *c, uint16_t tick);
/* Microseconds of an earlier tick (at most 2^16 - 1 ticks before the last update). */
uint32_t clock_us_of(const clock_state_t *c, uint16_t tick);

#endif
