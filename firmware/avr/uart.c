#include "uart.h"

#include <avr/interrupt.h>
#include <avr/io.h>

#include "config.h"
#include "port.h"

ring_t uart_tx;
ring_t uart_rx;

static uint8_t s_tx_buf[CONFIG_TX_RING_BYTES];
static uint8_t s_rx_buf[CONFIG_RX_RING_BYTES];
static volatile uint16_t s_rx_overflows;

void uart_init(void)
{
    ring_init(&uart_tx, s_tx_buf, CONFIG_TX_RING_BYTES);
    ring_init(&uart_rx, s_rx_buf, CONFIG_RX_RING_BYTES);
    /* U2X before UBRR: 16 MHz / (8 * (1 + 1)) = 1 Mbaud exactly. (simavr
     * computes the baud rate on the UBRR write.) */
    UCSR0A = (1u << U2X0);
    UBRR0 = 1;
    UCSR0C = (1u << UCSZ01) | (1u << UCSZ00);
    UCSR0B = (1u << RXEN0) | (1u << TXEN0) | (1u << RXCIE0);
}

void uart_kick(void)
{
    UCSR0B |= (1u << UDRIE0);
}

uint8_t uart_tx_idle(void)
{
    return ring_count(&uart_tx) == 0 && (UCSR0A & (1u << UDRE0)) && !(UCSR0B & (1u << UDRIE0));
}

uint16_t uart_rx_overflows(void)
{
    return port_load16(&s_rx_overflows);
}

ISR(USART_RX_vect)
{
    uint8_t b = UDR0;
    if (!ring_put_from_isr(&uart_rx, b)) {
        s_rx_overflows++;
    }
}

/* The busiest ISR (one per byte sent): written against the ring's own
 * buffer and constant mask so it loads nothing it does not need. */
ISR(USART_UDRE_vect)
{
    uint16_t tail = uart_tx.tail;
    if (tail != uart_tx.head) {
        UDR0 = s_tx_buf[tail];
        uart_tx.tail = (uint16_t)((tail + 1u) & (CONFIG_TX_RING_BYTES - 1u));
    } else {
        UCSR0B &= (uint8_t)~(1u << UDRIE0);
    }
}
