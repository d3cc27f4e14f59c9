#include "adc.h"

#include <avr/interrupt.h>
#include <avr/io.h>

#include "board.h"
#include "config.h"
#include "clock.h"
#include "port.h"

sets_ring_t adc_sets;

static const uint8_t s_channel[CONFIG_N_PIEZO] = BOARD_PIEZO_ADC_CHANNELS;
static uint8_t s_ch = 0xFF;          /* channel being converted; 0xFF = none yet */
static volatile uint16_t s_ticks;    /* 62.5 us ticks since start (wraps) */
static clock_state_t s_clock;             /* main-loop side of the clock */

#define ADMUX_REF (1u << REFS0) /* AVcc reference */
#define ADCSRA_RUN ((1u << ADEN) | CONFIG_ADC_PRESCALER_BITS)

void adc_start(void)
{
    sets_init(&adc_sets);
    s_ticks = 0;
    clock_init(&s_clock, 0);
    DIDR0 = 0x3F; /* digital input buffers off on ADC0..5: less noise, less current */
    ADMUX = ADMUX_REF;
    ADCSRA = ADCSRA_RUN;
    TCCR1A = 0;
    TCCR1B = 0;
    TCNT1 = 0;
    OCR1A = CONFIG_TICK_CYCLES - 1;
    TIFR1 = (1u << OCF1A);
    TIMSK1 = (1u << OCIE1A);
    TCCR1B = (1u << WGM12) | (1u << CS10); /* CTC on OCR1A, no prescaler */
}

/* The most frequent ISR (16 kHz): kept to 8- and 16-bit work so it saves
 * few registers. */
ISR(TIMER1_COMPA_vect)
{
    sets_ring_t *r = &adc_sets;
    uint8_t ch = s_ch;
    if (ch < CONFIG_N_PIEZO) {
        /* Read before touching ADMUX: the result belongs to the old channel. */
        r->samples[r->head][ch] = ADC;
        if (ch == CONFIG_N_PIEZO - 1) {
            sets_publish(r);
        }
    }
    ch = (uint8_t)((ch + 1u) & (CONFIG_N_PIEZO - 1u));
    ADMUX = (uint8_t)(ADMUX_REF | s_channel[ch]);
    ADCSRA = (uint8_t)(ADCSRA_RUN | (1u << ADSC));
    s_ch = ch;
    uint16_t t = (uint16_t)(s_ticks + 1u);
    s_ticks = t;
    if (ch == 0) {
        r->tick[r->head] = t;
    }
}

uint32_t adc_micros(void)
{
    uint16_t ticks;
    uint16_t cycles;
    uint8_t pending;
    ATOMIC_BLOCK(ATOMIC_RESTORESTATE)
    {
        ticks = s_ticks;
        cycles = TCNT1;
        pending = TIFR1 & (1u << OCF1A);
    }
    /* A tick that fired while interrupts were off has not been counted yet. */
    if (pending && cycles < CONFIG_TICK_CYCLES / 2) {
        ticks++;
    }
    clock_update(&s_clock, ticks);
    return s_clock.us + (s_clock.odd ? 1u : 0u) + cycles / 16u;
}

uint32_t adc_set_micros(uint16_t tick)
{
    return clock_us_of(&s_clock, tick);
}

uint16_t adc_overruns(void)
{
    return port_load16(&adc_sets.overruns);
}
