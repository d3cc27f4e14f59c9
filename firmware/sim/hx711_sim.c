#include "hx711_sim.h"

#include <string.h>

#include "avr_ioport.h"
#include "board.h"
#include "sim_time.h"

static const char s_dout_port[HXS_CHANNELS + 1] = BOARD_HX711_DOUT_PORTS;
static const int s_dout_bit[HXS_CHANNELS] = BOARD_HX711_DOUT_BITS;

static void set_dout(hxs_chip_t *c, int level)
{
    avr_raise_irq(c->dout, level ? 1 : 0);
}

void hxs_convert(hxs_bank_t *b, int32_t row, const int32_t *values, uint8_t connected)
{
    for (int k = 0; k < HXS_CHANNELS; k++) {
        hxs_chip_t *c = &b->chip[k];
        int on = (connected >> k) & 1u;
        if (!on) {
            if (c->connected) { /* lifted: the chip is gone, the pull-up wins */
                c->connected = 0;
                c->ready = 0;
                c->pulses = 0;
                set_dout(c, 1);
            }
            continue;
        }
        c->connected = 1;
        if (c->ready && c->pulses > 0) {
            b->conversions_lost++; /* being shifted out right now */
            continue;
        }
        if (c->ready) {
            b->conversions_unread++;
        }
        c->value = (uint32_t)values[k] & 0xFFFFFFu;
        c->row = row;
        c->ready = 1;
        c->pulses = 0;
        b->conversions++;
        set_dout(c, 0);
    }
}

static void on_sck(struct avr_irq_t *irq, uint32_t value, void *param)
{
    (void)irq;
    hxs_bank_t *b = param;
    int level = value ? 1 : 0;
    if (level == b->sck_level) {
        return;
    }
    b->sck_level = level;
    avr_cycle_count_t now = b->avr->cycle;
    if (!level) {
        avr_cycle_count_t high = now - b->sck_rise;
        if (high > b->sck_high_max) {
            b->sck_high_max = high;
        }
        if (high > avr_usec_to_cycles(b->avr, 60)) {
            b->power_down_violations++;
        }
        return;
    }
    b->sck_rise = now;
    for (int k = 0; k < HXS_CHANNELS; k++) {
        hxs_chip_t *c = &b->chip[k];
        if (!c->connected) {
            continue;
        }
        if (!c->ready) {
            b->pulses_while_busy++;
            continue;
        }
        c->pulses++;
        if (c->pulses <= 24) {
            set_dout(c, (c->value >> (24 - c->pulses)) & 1u);
        } else {
            c->ready = 0;
            c->pulses = 0;
            set_dout(c, 1);
            b->reads_completed++;
            if (b->log) {
                int32_t signed_value = (int32_t)(c->value ^ 0x800000u) - 0x800000;
                fprintf(b->log, "%llu %d %d %d\n",
                        (unsigned long long)avr_cycles_to_usec(b->avr, now), k, c->row,
                        signed_value);
            }
        }
    }
}

void hxs_init(hxs_bank_t *b, avr_t *avr)
{
    memset(b, 0, sizeof *b);
    b->avr = avr;
    for (int k = 0; k < HXS_CHANNELS; k++) {
        hxs_chip_t *c = &b->chip[k];
        c->dout = avr_io_getirq(avr, AVR_IOCTL_IOPORT_GETIRQ(s_dout_port[k]), s_dout_bit[k]);
        set_dout(c, 1);
    }
    avr_irq_register_notify(
        avr_io_getirq(avr, AVR_IOCTL_IOPORT_GETIRQ(BOARD_HX711_SCK_PORT_LETTER), BOARD_HX711_SCK_BIT),
        on_sck, b);
}

void hxs_refresh_pins(hxs_bank_t *b)
{
    /* A reset cleared the PIN registers but not the IRQs' remembered
     * levels, and raising an IRQ to the level it already has does nothing:
     * go through the other level to write the pin again. */
    for (int k = 0; k < HXS_CHANNELS; k++) {
        hxs_chip_t *c = &b->chip[k];
        int level = !(c->connected && c->ready);
        set_dout(c, !level);
        set_dout(c, level);
    }
}
