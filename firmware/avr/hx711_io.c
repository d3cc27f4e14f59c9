#include "hx711_io.h"

#include <avr/io.h>

#include "board.h"
#include "config.h"
#include "hx711.h"

static const uint8_t s_chan_port[CONFIG_N_LOAD] = BOARD_HX711_CHAN_PORT;
static const uint8_t s_chan_mask[CONFIG_N_LOAD] = BOARD_HX711_CHAN_MASK;

void hx711_io_init(void)
{
    BOARD_HX711_INIT();
}

uint8_t hx711_io_ready(void)
{
    uint8_t ports[BOARD_HX711_NPORTS];
    BOARD_HX711_READ_PORTS(ports);
    return hx711_ready_mask(ports, s_chan_port, s_chan_mask, CONFIG_N_LOAD);
}

uint8_t hx711_io_read(int32_t *values)
{
    static uint8_t samples[24][BOARD_HX711_NPORTS];
    uint8_t ready = hx711_io_ready();
    /* Interrupts stay on: an ISR landing while SCK is high stretches the
     * pulse by at most the longest ISR (a few us), far from the 60 us after
     * which an HX711 powers down. DOUT changes only on SCK's rising edge,
     * so it is stable whenever we sample it while SCK is high. */
    for (uint8_t i = 0; i < CONFIG_HX711_PULSES; i++) {
        BOARD_HX711_SCK_HIGH();
        __asm__ __volatile__("nop\n\tnop\n\tnop\n\tnop" ::); /* DOUT settles 0.1 us after the edge */
        if (i < 24) {
            BOARD_HX711_READ_PORTS(samples[i]);
        }
        BOARD_HX711_SCK_LOW();
        __asm__ __volatile__("nop\n\tnop\n\tnop\n\tnop" ::); /* SCK low >= 0.2 us */
    }
    hx711_unpack(&samples[0][0], BOARD_HX711_NPORTS, s_chan_port, s_chan_mask, CONFIG_N_LOAD,
                 values);
    return ready;
}
