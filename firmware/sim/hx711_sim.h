/* Eight emulated HX711s on the firmware's GPIO pins.
 *
 * Each converts every 12.5 ms (80 SPS) and then pulls DOUT low. Rising SCK
 * edges shift its 24 bits out MSB first; the 25th rising edge ends the
 * reading (channel A, gain 128) and DOUT goes high until the next
 * conversion. A disconnected one (module lifted) is absent: DOUT reads high
 * through the base board's pull-up and SCK does nothing. All connected ones
 * convert in lockstep (one shared clock); one that is put back starts at
 * its own phase, as a real HX711 powering up does. SCK held high for more
 * than 60 us powers a real HX711 down: that is counted as a violation. */
#ifndef HX711_SIM_H
#define HX711_SIM_H

#include <stdint.h>
#include <stdio.h>

#include "sim_avr.h"

#define HXS_CHANNELS 8

typedef struct hxs_chip_s {
    struct hxs_bank_s *bank;
    int index;
    int connected;
    int ready;
    int pulses;              /* rising edges since the conversion was ready */
    uint32_t value;          /* 24-bit two's complement being shifted out */
    int32_t row;             /* scenario load row it was taken from */
    avr_cycle_count_t phase; /* conversion times are phase + n * period */
    avr_irq_t *dout;
} hxs_chip_t;

typedef struct hxs_bank_s {
    avr_t *avr;
    hxs_chip_t chip[HXS_CHANNELS];
    avr_cycle_count_t period;
    int sck_level;
    avr_cycle_count_t sck_rise;
    /* statistics */
    avr_cycle_count_t sck_high_max;
    uint32_t power_down_violations;
    uint32_t reads_completed;
    uint32_t conversions;
    uint32_t conversions_unread; /* overwritten before the firmware read them */
    uint32_t pulses_while_busy;  /* SCK edges on a connected chip with no data ready */
    /* where the current scenario values come from */
    const int32_t *(*values_now)(void *ctx, int32_t *row);
    void *ctx;
    FILE *log; /* one line per completed reading: t_us channel row value */
    uint32_t seed;
} hxs_bank_t;

void hxs_init(hxs_bank_t *b, avr_t *avr, uint8_t initially_connected, uint32_t seed);
/* (Re)register the conversion timers, e.g. after a reset cleared them. */
void hxs_start_timers(hxs_bank_t *b);
void hxs_set_connected(hxs_bank_t *b, int ch, int connected);

#endif
