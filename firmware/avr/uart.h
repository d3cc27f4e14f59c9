/* UART at 1,000,000 baud, 8N1: RX into a ring by the RX-complete ISR, TX
 * from a ring by the data-register-empty ISR. */
#ifndef UART_H
#define UART_H

#include <stdint.h>

#include "ring.h"

extern ring_t uart_tx;
extern ring_t uart_rx;

void uart_init(void);
/* Start (or keep) the TX ISR running after frames were committed. */
void uart_kick(void);
/* True when every queued byte has left the shift register. */
uint8_t uart_tx_idle(void);
/* Bytes lost because the RX ring was full (wraps). */
uint16_t uart_rx_overflows(void);

#endif
