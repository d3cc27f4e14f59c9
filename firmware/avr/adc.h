/* Piezo sampling and the device clock, both driven by one 16 kHz tick.
 *
 * Timer1 (CTC, 1000 cycles = 62.5 us) interrupts 16000 times a second. Each
 * tick stores the conversion started one tick earlier and starts the next
 * channel in single-conversion mode, so set s, channel k is sampled at tick
 * 8s + k: exactly 2000 sets/s, channels 62.5 us apart. (Timer-triggered
 * auto-trigger would need no ISR, but simavr implements only free-running
 * auto-trigger; this scheme runs the same on the chip and in simavr.) */
#ifndef ADC_H
#define ADC_H

#include <stdint.h>

#include "sets.h"

extern sets_ring_t adc_sets;

/* Configure the ADC and Timer1 and start sampling (interrupts must be enabled
 * by the caller). */
void adc_start(void);
/* Device time in microseconds (u32, wraps every 71.6 minutes). */
uint32_t adc_micros(void);
/* Device time of a set's tick (from sets_peek); valid for ticks not older
 * than 2^16 ticks before the last adc_micros() call. */
uint32_t adc_set_micros(uint16_t tick);
/* Piezo sets discarded because the ring was full. */
uint16_t adc_overruns(void);

#endif
