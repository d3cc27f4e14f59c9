#include "adc.h"

#include <avr/interrupt.h>
#include <avr/io.h>

#include "board.h"
#include "config.h"
#include "port.h"

sets_ring_t adc_sets;

static const uint8_t s_channel[CONFIG_N_PIEZO] = BOARD_PIEZO_ADC_CHANNELS;
static volatile uint32_t s_clock_us;          /* time of the latest tick */
static uint8_t s_ch = 0xFF;                   /* channel being converted; 0xFF = none yet */
static uint16_t *s_wp;                        /* where its result goes */

#define ADMUX_REF (1u << REFS0) /* AVcc reference */
#define ADCSRA_RUN ((1u << ADEN) | CONFIG_ADC_PRESCALER_BITS)

void adc_start(void)
{
    sets_init(&adc_sets);
    s_wp = adc_sets.samples[adc_sets.head];
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

ISR(TIMER1_COMPA_vect)
{
    sets_ring_t *r = &adc_sets;
    uint8_t ch = s_ch;
    if (ch < CONFIG_N_PIEZO) {
        /* Read before touching ADMUX: the result belongs to the old channel. */
        *s_wp++ = ADC;
        if (ch == CONFIG_N_PIEZO - 1) {
            sets_publish(r);
            s_wp = r->samples[r->head];
        }
    }
    ch = (uint8_t)((ch + 1u) & (CONFIG_N_PIEZO - 1u));
    ADMUX = (uint8_t)(ADMUX_REF | s_channel[ch]);
    ADCSRA = (uint8_t)(ADCSRA_RUN | (1u << ADSC));
    s_ch = ch;
    /* 62.5 us per tick: 62 and 63 in turn keep the clock exact per set. */
    uint32_t now = s_clock_us + 62u + (ch & 1u);
    s_clock_us = now;
    if (ch == 0) {
        r->t_us[r->head] = now;
    }
}

uint32_t adc_micros(void)
{
    uint32_t us;
    uint16_t cycles;
    uint8_t pending;
    ATOMIC_BLOCK(ATOMIC_RESTORESTATE)
    {
        us = s_clock_us;
        cycles = TCNT1;
        pending = TIFR1 & (1u << OCF1A);
    }
    /* A tick that fired while interrupts were off has not been counted yet. */
    if (pending && cycles < CONFIG_TICK_CYCLES / 2) {
        us += 62u;
    }
    return us + cycles / 16u;
}

uint16_t adc_overruns(void)
{
    return port_load16(&adc_sets.overruns);
}
