/* Eight emulated HX711s on the firmware's GPIO pins.
 *
 * A conversion completes at each load row of the scenario (its load_t_s,
 * the end of the HX711's conversion in the tower simulator, which models
 * the shared clock): every connected HX711 then latches that row's value
 * and pulls DOUT low. Rising SCK edges shift its 24 bits out MSB first; the
 * 25th rising edge ends the reading (channel A, gain 128) and DOUT goes
 * high until the next conversion. A result not read before the next one is
 * overwritten, as on the chip. A disconnected HX711 (module lifted) is
 * absent: DOUT reads high through the base board's pull-up and SCK does
 * nothing. SCK held high for more than 60 us powers a real HX711 down: that
 * is counted as a violation. */
#ifndef HX711_SIM_H
#define HX711_SIM_H

#include <stdint.h>
#include <stdio.h>

#include "sim_avr.h"

#define HXS_CHANNELS 8

typedef struct {
    int connected;
    int ready;
    int pulses;     /* rising edges since the conversion was ready */
    uint32_t value; /* 24-bit two's complement being shifted out */
    int32_t row;    /* scenario load row it was taken from */
    avr_irq_t *dout;
} hxs_chip_t;

typedef struct {
    avr_t *avr;
    hxs_chip_t chip[HXS_CHANNELS];
    int sck_level;
    avr_cycle_count_t sck_rise;
    /* statistics */
    avr_cycle_count_t sck_high_max;
    uint32_t power_down_violations;
    uint32_t reads_completed;
    uint32_t conversions;
    uint32_t conversions_unread; /* overwritten before the firmware read them */
    uint32_t conversions_lost;   /* arrived while the previous one was being shifted out */
    uint32_t pulses_while_busy;  /* SCK edges on a connected chip with no data ready */
    FILE *log; /* one line per completed reading: t_us channel row value */
} hxs_bank_t;

void hxs_init(hxs_bank_t *b, avr_t *avr);
/* A conversion completes now: `values` (8 signed counts) of scenario row
 * `row`; `connected` bit k: channel k's module is on the tower. */
void hxs_convert(hxs_bank_t *b, int32_t row, const int32_t *values, uint8_t connected);
/* Drive every DOUT again (after a reset cleared the pin states). */
void hxs_refresh_pins(hxs_bank_t *b);

#endif
