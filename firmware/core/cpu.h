/* CPU load from idle-loop counting.
 *
 * At boot, with interrupts off, the main loop's idle path is timed over
 * CPU_CALIB_ITERS iterations. While running, the main loop counts the
 * iterations that found nothing to do; whatever time those iterations did
 * not take (ISRs and real work) is load. */
#ifndef CPU_H
#define CPU_H

#include <stdint.h>

#define CPU_CALIB_ITERS 64u

/* Load in percent (0..100) over a period of `period_cycles` CPU cycles in
 * which `idle_iters` idle iterations ran, each CPU_CALIB_ITERS of which
 * take `calib_cycles`. */
uint8_t cpu_load_pct(uint32_t idle_iters, uint16_t calib_cycles, uint32_t period_cycles);

#endif
