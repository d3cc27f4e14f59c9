#include "cpu.h"

uint8_t cpu_load_pct(uint32_t idle_iters, uint16_t calib_cycles, uint32_t period_cycles)
{
    if (period_cycles == 0) {
        return 0;
    }
    /* How many idle iterations would fit in the period if the CPU did
     * nothing else. Dividing the period (rather than multiplying the
     * count) keeps it in 32 bits; the truncation is < 1/4000 here. */
    uint32_t max_iters = period_cycles / calib_cycles * CPU_CALIB_ITERS;
    if (max_iters == 0 || idle_iters >= max_iters) {
        return 0;
    }
    return (uint8_t)(100u - (uint32_t)((idle_iters * 100u + max_iters / 2u) / max_iters));
}
