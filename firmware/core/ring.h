/* Single-producer single-consumer byte ring shared between an ISR and the
 * main loop. Capacity is a power of two; one slot stays empty so that
 * head == tail means empty. ring_write() publishes a whole block at once,
 * so the consumer never sees half a frame. */
#ifndef RING_H
#define RING_H

#include <stdbool.h>
#include <stdint.h>

typedef struct {
    uint8_t *buf;
    uint16_t mask;
    volatile uint16_t head; /* next byte to write; only the producer writes it */
    volatile uint16_t tail; /* next byte to read; only the consumer writes it */
} ring_t;

void ring_init(ring_t *r, uint8_t *buf, uint16_t size_pow2);
uint16_t ring_count(const ring_t *r);
uint16_t ring_free(const ring_t *r);
bool ring_put(ring_t *r, uint8_t byte);
bool ring_get(ring_t *r, uint8_t *byte);
/* Append `n` bytes at once (the caller checked ring_free); the consumer
 * sees all of them or none. */
void ring_write(ring_t *r, const uint8_t *src, uint16_t n);

/* ISR-side put, inlined so the RX ISR needs no call (and no saving of
 * every call-clobbered register). Only valid with interrupts off: the main
 * loop writes its index with interrupts off, so the ISR never sees half
 * of it. */
static inline bool ring_put_from_isr(ring_t *r, uint8_t byte)
{
    uint16_t head = r->head;
    uint16_t next = (uint16_t)((head + 1u) & r->mask);
    if (next == r->tail) {
        return false;
    }
    r->buf[head] = byte;
    r->head = next;
    return true;
}

#endif
