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

static avr_cycle_count_t next_conversion(hxs_chip_t *c, avr_cycle_count_t now)
{
    avr_cycle_count_t p = c->bank->period;
    if (now < c->phase) {
        return c->phase;
    }
    return c->phase + ((now - c->phase) / p + 1) * p;
}

static avr_cycle_count_t on_conversion(avr_t *avr, avr_cycle_count_t when, void *param)
{
    (void)avr;
    hxs_chip_t *c = param;
    hxs_bank_t *b = c->bank;
    if (!c->connected) {
        return 0;
    }
    if (c->ready && c->pulses > 0) {
        /* being read right now: this conversion result is lost, as on the chip */
        b->conversions_unread++;
        return when + b->period;
    }
    if (c->ready) {
        b->conversions_unread++;
    }
    int32_t row = -1;
    const int32_t *v = b->values_now(b->ctx, &row);
    c->value = (uint32_t)v[c->index] & 0xFFFFFFu;
    c->row = row;
    c->ready = 1;
    c->pulses = 0;
    b->conversions++;
    set_dout(c, 0);
    return when + b->period;
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

static uint32_t lcg(uint32_t *state)
{
    *state = *state * 1664525u + 1013904223u;
    return *state >> 8;
}

void hxs_init(hxs_bank_t *b, avr_t *avr, uint8_t initially_connected, uint32_t seed)
{
    memset(b, 0, sizeof *b);
    b->avr = avr;
    b->period = avr_usec_to_cycles(avr, 12500);
    b->seed = seed ? seed : 1;
    /* powered up together at boot: the first conversions come in lockstep */
    avr_cycle_count_t phase = avr_usec_to_cycles(avr, 3000);
    for (int k = 0; k < HXS_CHANNELS; k++) {
        hxs_chip_t *c = &b->chip[k];
        c->bank = b;
        c->index = k;
        c->connected = (initially_connected >> k) & 1u;
        c->phase = phase;
        c->dout = avr_io_getirq(avr, AVR_IOCTL_IOPORT_GETIRQ(s_dout_port[k]), s_dout_bit[k]);
        set_dout(c, 1);
    }
    avr_irq_register_notify(
        avr_io_getirq(avr, AVR_IOCTL_IOPORT_GETIRQ(BOARD_HX711_SCK_PORT_LETTER), BOARD_HX711_SCK_BIT),
        on_sck, b);
}

void hxs_start_timers(hxs_bank_t *b)
{
    for (int k = 0; k < HXS_CHANNELS; k++) {
        hxs_chip_t *c = &b->chip[k];
        avr_cycle_timer_cancel(b->avr, on_conversion, c);
        if (c->connected) {
            set_dout(c, c->ready ? 0 : 1);
            avr_cycle_timer_register(b->avr, next_conversion(c, b->avr->cycle) - b->avr->cycle,
                                     on_conversion, c);
        } else {
            set_dout(c, 1);
        }
    }
}

void hxs_set_connected(hxs_bank_t *b, int ch, int connected)
{
    hxs_chip_t *c = &b->chip[ch];
    if (c->connected == connected) {
        return;
    }
    c->connected = connected;
    c->ready = 0;
    c->pulses = 0;
    avr_cycle_timer_cancel(b->avr, on_conversion, c);
    set_dout(c, 1);
    if (connected) {
        /* Powered up again at its own phase: first data 20..80 % of a
         * period later, then every period. */
        avr_cycle_count_t offset = b->period / 5 + (avr_cycle_count_t)(lcg(&b->seed) % (b->period * 3 / 5));
        c->phase = b->avr->cycle + offset;
        avr_cycle_timer_register(b->avr, offset, on_conversion, c);
    }
}
