#include "ring.h"

#include <string.h>

#include "port.h"

void ring_init(ring_t *r, uint8_t *buf, uint16_t size_pow2)
{
    r->buf = buf;
    r->mask = (uint16_t)(size_pow2 - 1u);
    r->head = 0;
    r->tail = 0;
}

uint16_t ring_count(const ring_t *r)
{
    return (uint16_t)((port_load16(&r->head) - port_load16(&r->tail)) & r->mask);
}

uint16_t ring_free(const ring_t *r)
{
    return (uint16_t)(r->mask - ring_count(r));
}

bool ring_put(ring_t *r, uint8_t byte)
{
    uint16_t head = port_load16(&r->head);
    uint16_t next = (uint16_t)((head + 1u) & r->mask);
    if (next == port_load16(&r->tail)) {
        return false;
    }
    r->buf[head] = byte;
    port_store16(&r->head, next);
    return true;
}

bool ring_get(ring_t *r, uint8_t *byte)
{
    uint16_t tail = port_load16(&r->tail);
    if (tail == port_load16(&r->head)) {
        return false;
    }
    *byte = r->buf[tail];
    port_store16(&r->tail, (uint16_t)((tail + 1u) & r->mask));
    return true;
}

void ring_write(ring_t *r, const uint8_t *src, uint16_t n)
{
    uint16_t head = r->head; /* only this side writes head */
    uint16_t first = (uint16_t)(r->mask + 1u - head);
    if (first > n) {
        first = n;
    }
    memcpy(r->buf + head, src, first);
    memcpy(r->buf, src + first, n - first);
    port_store16(&r->head, (uint16_t)((head + n) & r->mask));
}
