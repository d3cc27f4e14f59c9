/* The few things the core needs from the CPU it runs on.
 *
 * On the AVR a 16-bit variable shared with an ISR must be read and written
 * with interrupts off, or the main loop can see half of an update. On the
 * host (unit tests, fuzzing) there are no interrupts. */
#ifndef PORT_H
#define PORT_H

#include <stdint.h>

#ifdef __AVR__
#include <avr/pgmspace.h>
#include <util/atomic.h>
/* Constant tables live in flash and are read with LPM. */
#define PORT_FLASH PROGMEM
static inline uint16_t port_flash_u16(const uint16_t *p) { return pgm_read_word(p); }
static inline uint16_t port_load16(const volatile uint16_t *p)
{
    uint16_t v;
    ATOMIC_BLOCK(ATOMIC_RESTORESTATE) { v = *p; }
    return v;
}
static inline void port_store16(volatile uint16_t *p, uint16_t v)
{
    ATOMIC_BLOCK(ATOMIC_RESTORESTATE) { *p = v; }
}
#else
#define PORT_FLASH
static inline uint16_t port_flash_u16(const uint16_t *p) { return *p; }
static inline uint16_t port_load16(const volatile uint16_t *p) { return *p; }
static inline void port_store16(volatile uint16_t *p, uint16_t v) { *p = v; }
#endif

#endif
