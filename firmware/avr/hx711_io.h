/* The HX711 pins: ready lines and the 25-pulse parallel read on the shared
 * SCK. Pins come from the generated board header. */
#ifndef HX711_IO_H
#define HX711_IO_H

#include <stdint.h>

void hx711_io_init(void);
/* Channels whose DOUT is low now (bit k = level k). */
uint8_t hx711_io_ready(void);
/* Clock out one reading from every HX711 at once; returns the channels
 * that were ready when clocking began (the only ones whose values are
 * meaningful), values in `values` (signed counts). */
uint8_t hx711_io_read(int32_t *values);

#endif
