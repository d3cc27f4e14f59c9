/* towerear firmware for the ATmega328P: the main loop and its services.
 *
 * ISRs only move data (adc.c: samples into the set ring; uart.c: bytes in
 * and out of rings). Everything else runs here, in a loop of services that
 * each do a bounded piece of work and return whether they did any. An
 * iteration in which none did is counted as idle; that count, against the
 * idle iteration's cost measured at boot, is the CPU load in STATUS. */
#include <avr/eeprom.h>
#include <avr/interrupt.h>
#include <avr/io.h>
#include <avr/wdt.h>
#include <stdbool.h>

#include "adc.h"
#include "board.h"
#include "cmd.h"
#include "config.h"
#include "cpu.h"
#include "hx711.h"
#include "hx711_io.h"
#include "proto.h"
#include "uart.h"

static proto_link_t s_link;
static cmd_decoder_t s_cmd;
static uint8_t s_cmd_buf[CONFIG_CMD_FRAME_BYTES];
static hx711_sched_t s_hx;
static proto_hello_t s_hello;

static uint8_t s_streams = PROTO_STREAM_ALL; /* streaming from boot, unasked */
static bool s_reset_pending;
static uint8_t s_boot_flags;

static uint32_t s_idle_iters;
static uint16_t s_calib_cycles = 1; /* CPU_CALIB_ITERS idle iterations, in cycles */
static uint32_t s_status_due_us;
static uint32_t s_uptime_ms;
static uint32_t s_uptime_last_us;
static uint16_t s_cmd_errors_seen;
static uint16_t s_rx_overflows_seen;

/* The watchdog stays armed after a watchdog reset: disarm it before
 * anything else (main arms it again once booted), and remember why we
 * booted. */
static uint8_t s_mcusr __attribute__((section(".noinit")));
void early_init(void) __attribute__((naked, used, section(".init3")));
void early_init(void)
{
    s_mcusr = MCUSR;
    MCUSR = 0;
    wdt_disable();
}

static void send_hello(void)
{
    proto_send_hello(&s_link, &s_hello);
}

static void handle_command(const cmd_frame_t *f)
{
    uint8_t result = cmd_check(f);
    if (result != PROTO_RESULT_OK) {
        proto_send_ack(&s_link, f->type, f->seq, result);
        return;
    }
    switch (f->type) {
    case PROTO_GET_INFO:
        send_hello();
        break;
    case PROTO_START:
        s_streams = f->body[0];
        break;
    case PROTO_STOP:
        s_streams = 0;
        break;
    case PROTO_PING:
        /* PING is answered by PONG alone (contracts.md). */
        proto_send_pong(&s_link, cmd_body_u32(f, 0), adc_micros());
        uart_kick();
        return;
    case PROTO_RESET:
        /* Stop streaming so the line drains and the reboot cuts no frame. */
        s_reset_pending = true;
        s_streams = 0;
        break;
    default:
        break;
    }
    proto_send_ack(&s_link, f->type, f->seq, PROTO_RESULT_OK);
}

static bool service_rx(void)
{
    uint8_t b;
    bool busy = false;
    cmd_frame_t f;
    /* Bounded: at most one ring's worth per pass. */
    for (uint8_t i = 0; i < CONFIG_RX_RING_BYTES && ring_get(&uart_rx, &b); i++) {
        busy = true;
        if (cmd_feed(&s_cmd, b, &f)) {
            handle_command(&f);
        }
    }
    if (busy) {
        uart_kick();
    }
    return busy;
}

static bool service_piezo(void)
{
    sets_ring_t *r = &adc_sets;
    uint8_t avail = sets_count(r);
    if (avail < CONFIG_PIEZO_SETS_PER_FRAME) {
        return false;
    }
    if (!(s_streams & PROTO_STREAM_PIEZO)) {
        while (avail--) {
            sets_drop(r);
        }
        return true;
    }
    /* A frame holds consecutive sets only: stop at a gap left by an overrun. */
    uint16_t tick0;
    sets_peek(r, &tick0);
    uint8_t n = 1;
    while (n < CONFIG_PIEZO_SETS_PER_FRAME &&
           r->tick[(r->tail + n) & SETS_MASK] == (uint16_t)(tick0 + n * CONFIG_TICKS_PER_SET)) {
        n++;
    }
    (void)adc_micros(); /* bring the clock up to date before converting ticks */
    uint32_t t0 = adc_set_micros(tick0);
    /* No room in TX yet: leave the sets in their ring and try again later
     * (the ring holds 8 ms; a frame drains in under 2 ms). */
    if (!proto_fits(&s_link, (uint16_t)(5u + 2u * n * CONFIG_N_PIEZO))) {
        return false;
    }
    proto_writer_t w;
    proto_piezo_begin(&w, &s_link, t0, n, CONFIG_N_PIEZO);
    for (uint8_t i = 0; i < n; i++) {
        uint16_t t;
        proto_piezo_set(&w, sets_peek(r, &t), CONFIG_N_PIEZO);
        sets_drop(r);
    }
    proto_end(&w);
    uart_kick();
    return true;
}

static bool service_load(void)
{
    uint32_t now = adc_micros();
    if (!hx711_due(&s_hx, now)) {
        return false;
    }
    hx711_action_t action = hx711_poll(&s_hx, now, hx711_io_ready());
    if (action == HX711_WAIT) {
        return false;
    }
    int32_t values[CONFIG_N_LOAD] = {0};
    uint8_t valid = 0;
    if (action == HX711_READ) {
        valid = hx711_io_read(values);
    }
    hx711_round_done(&s_hx, now, valid, CONFIG_N_LOAD);
    if (s_streams & PROTO_STREAM_LOAD) {
        proto_send_load(&s_link, now, valid, values, CONFIG_N_LOAD);
        uart_kick();
    }
    return true;
}

static uint8_t status_flags(void)
{
    /* the stream bits are START's bits */
    uint8_t flags = (uint8_t)(s_boot_flags | (s_streams & PROTO_STREAM_ALL));
    if (s_hx.missed_since_status) {
        flags |= PROTO_FLAG_LOAD_MISSING;
    }
    uint16_t rx_errors = cmd_errors(&s_cmd);
    uint16_t rx_overflows = uart_rx_overflows();
    if (rx_errors != s_cmd_errors_seen || rx_overflows != s_rx_overflows_seen) {
        flags |= PROTO_FLAG_RX_ERROR;
    }
    s_cmd_errors_seen = rx_errors;
    s_rx_overflows_seen = rx_overflows;
    s_hx.missed_since_status = 0;
    return flags;
}

static bool service_status(void)
{
    uint32_t now = adc_micros();
    if ((int32_t)(now - s_status_due_us) < 0) {
        return false;
    }
    /* uptime in ms without a 64-bit clock: accumulate u32 differences
     * (one a second, far from wrapping) */
    uint32_t step_ms = (now - s_uptime_last_us) / 1000u;
    s_uptime_ms += step_ms;
    s_uptime_last_us += step_ms * 1000u;
    s_status_due_us += CONFIG_STATUS_PERIOD_MS * 1000UL;
    proto_status_t st = {
        .uptime_ms = s_uptime_ms,
        .piezo_overruns = adc_overruns(),
        .tx_dropped = s_link.tx_dropped,
        .load_timeouts = s_hx.timeouts,
        .cpu_load_pct = cpu_load_pct(s_idle_iters, s_calib_cycles,
                                     CONFIG_F_CPU_HZ / 1000UL * CONFIG_STATUS_PERIOD_MS),
        .flags = status_flags(),
    };
    s_idle_iters = 0;
    /* The main loop got round to the once-a-second job: it is alive. The
     * LED blinks with it, so a hung board is visible without a host. */
    wdt_reset();
    BOARD_LED_TOGGLE();
    if (s_streams & PROTO_STREAM_STATUS) {
        proto_send_status(&s_link, &st);
        uart_kick();
    }
    return true;
}

static bool service_reset(void)
{
    if (!s_reset_pending || !uart_tx_idle()) {
        return false;
    }
    /* The ACK is on the wire: let the watchdog reboot us. Disarm it first:
     * simavr 1.6 ignores a new timeout written to an armed watchdog. */
    cli();
    wdt_disable();
    wdt_enable(WDTO_15MS);
    for (;;) {
    }
}

/* noinline: boot calibration must time exactly the code the loop runs. */
static bool __attribute__((noinline)) service_all(void)
{
    bool busy = service_rx();
    busy |= service_piezo();
    busy |= service_load();
    busy |= service_status();
    busy |= service_reset();
    return busy;
}

/* Time CPU_CALIB_ITERS idle iterations with interrupts off, before any
 * data flows, on Timer1 running free at the CPU clock. */
static void calibrate_idle(void)
{
    TCCR1A = 0;
    OCR1A = 0xFFFF; /* no compare match: the clock stands still at 0 */
    TCNT1 = 0;
    TIFR1 = (1u << OCF1A);
    TCCR1B = (1u << CS10);
    uint16_t start = TCNT1;
    for (uint8_t i = 0; i < CPU_CALIB_ITERS; i++) {
        if (!service_all()) {
            s_idle_iters++;
        }
    }
    uint16_t cycles = TCNT1 - start;
    s_calib_cycles = cycles ? cycles : 1;
    s_idle_iters = 0;
    TCCR1B = 0;
}

static void load_device_id(void)
{
    /* Written to EEPROM by `make flash-id`; an erased EEPROM reads ff..ff. */
    eeprom_read_block(s_hello.device_id, (const void *)0, PROTO_DEVICE_ID_BYTES);
}

int main(void)
{
    s_boot_flags = (s_mcusr & (1u << WDRF)) ? PROTO_FLAG_WATCHDOG_BOOT : 0;
    s_hello = (proto_hello_t){
        .fw_major = FW_VERSION_MAJOR,
        .fw_minor = FW_VERSION_MINOR,
        .fw_patch = FW_VERSION_PATCH,
        .n_piezo = CONFIG_N_PIEZO,
        .n_load = CONFIG_N_LOAD,
        .piezo_rate_hz = CONFIG_PIEZO_RATE_HZ,
        .load_rate_hz = CONFIG_LOAD_RATE_HZ,
        .adc_bits = CONFIG_ADC_BITS,
    };
    load_device_id();
    BOARD_LED_INIT();
    hx711_io_init();
    uart_init();
    proto_link_init(&s_link, &uart_tx);
    cmd_init(&s_cmd, s_cmd_buf, sizeof s_cmd_buf);
    hx711_init(&s_hx, 0);
    s_status_due_us = CONFIG_STATUS_PERIOD_MS * 1000UL;

    calibrate_idle();
    /* Calibration ran the services with the clock near 0: restart every
     * schedule from the real start of the clock. */
    s_uptime_ms = 0;
    s_uptime_last_us = 0;
    hx711_init(&s_hx, 0);
    send_hello();
    uart_kick();
    /* A main loop that stops reaching the STATUS service (1 s) for 2 s is
     * hung: the watchdog reboots the board (STATUS flag WATCHDOG_BOOT). */
    wdt_enable(WDTO_2S);
    /* Start sampling last: the first tick must not wait behind HELLO. */
    adc_start();
    sei();

    for (;;) {
        if (!service_all()) {
            s_idle_iters++;
        }
    }
}
