/* Ring of complete piezo sample sets, filled by the ADC tick ISR and
 * drained by the main loop into PIEZO frames. One slot stays empty. The
 * ISR writes the set in progress straight into the slot at head and
 * publishes it (head + 1) when its last channel is in; if the ring is full
 * the set is discarded and counted as an overrun. Each set carries the
 * 16-bit tick count at which its first channel was sampled (the main loop
 * turns it into microseconds: cheaper in the ISR than a 32-bit clock). */
#ifndef SETS_H
#define SETS_H

#include <stdint.h>

#include "config.h"

#define SETS_MASK (CONFIG_PIEZO_RING_SETS - 1u)

typedef struct {
    uint16_t samples[CONFIG_PIEZO_RING_SETS][CONFIG_N_PIEZO];
    uint16_t tick[CONFIG_PIEZO_RING_SETS];
    volatile uint8_t head;
    volatile uint8_t tail;
    volatile uint16_t overruns; /* sets discarded (wraps) */
} sets_ring_t;

void sets_init(sets_ring_t *r);
uint8_t sets_count(const sets_ring_t *r);
/* Producer side (ISR): publish the set at head, or count an overrun.
 * Inline: it runs in the tick ISR. */
static inline void sets_publish(sets_ring_t *r)
{
    uint8_t next = (uint8_t)((r->head + 1u) & SETS_MASK);
    if (next == r->tail) {
        r->overruns++;
        return;
    }
    r->head = next;
}
/* Consumer side: the oldest set and its tick; then drop it. */
const uint16_t *sets_peek(const sets_ring_t *r, uint16_t *tick);
void sets_drop(sets_ring_t *r);

#endif
