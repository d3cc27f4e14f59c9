/* Reading eight HX711s in parallel on one shared SCK: the scheduling state
 * machine and the bit unpacking. No I/O here; the AVR layer reads the
 * pins and clocks SCK.
 *
 * The HX711s share one clock so they convert in lockstep, but a module
 * lifted off the tower has no HX711 (DOUT pulled high = never ready) and
 * one put back starts converting at its own phase. So:
 *  - the channels read in the last round keep the beat: the next round
 *    starts when all of them are ready again, or half a period after the
 *    first of them is, and never sooner than 0.75 period after the last;
 *  - every channel ready at that moment is read with them; one that came
 *    back at another phase holds its data (DOUT stays low) until then;
 *  - a channel not ready at the round is invalid for it and counted as a
 *    timeout; if none of the beat-keepers shows up within 1.5 periods,
 *    whoever is ready is read (and keeps the beat from then on), and if
 *    nobody is, an all-invalid round is still reported, then one per
 *    period, so a fully lifted tower keeps LOAD flowing.
 * A channel's valid bit therefore drops at the first round after it is
 * lifted (at most 1.5 periods later) and returns at the first round after
 * it is ready again. */
#ifndef HX711_H
#define HX711_H

#include <stdbool.h>
#include <stdint.h>

typedef enum {
    HX711_WAIT = 0, /* nothing to do now */
    HX711_READ,     /* clock out the channels in the ready mask */
    HX711_TIMEOUT,  /* report a round with no valid channel */
} hx711_action_t;

typedef struct {
    uint32_t last_round_us;
    uint32_t first_ready_us; /* when the first beat-keeper was seen ready */
    bool waiting;            /* ... and others of them were not */
    bool last_was_timeout;
    uint8_t last_valid;   /* channels read in the last round */
    uint16_t timeouts;    /* channel-readings missed (wraps) */
    uint8_t missed_since_status; /* channels missed since the flag was last cleared */
} hx711_sched_t;

void hx711_init(hx711_sched_t *s, uint32_t now_us);
/* False while too early for a round: callers can skip reading the pins. */
bool hx711_due(const hx711_sched_t *s, uint32_t now_us);
/* What to do now, given which channels have DOUT low (bit k = level k). */
hx711_action_t hx711_poll(hx711_sched_t *s, uint32_t now_us, uint8_t ready_mask);
/* Record a finished round: `valid` = channels actually read. */
void hx711_round_done(hx711_sched_t *s, uint32_t now_us, uint8_t valid, uint8_t n_ch);

/* Unpack 24 parallel port samples (sample i taken after SCK rising edge
 * i, MSB first; `nports` bytes per sample) into signed counts: channel k
 * is bit `chan_mask[k]` of port byte `chan_port[k]`. */
void hx711_unpack(const uint8_t *samples, uint8_t nports, const uint8_t *chan_port,
                  const uint8_t *chan_mask, uint8_t n_ch, int32_t *values);

/* Ready mask from one port sample: DOUT low means ready. */
uint8_t hx711_ready_mask(const uint8_t *ports, const uint8_t *chan_port, const uint8_t *chan_mask,
                         uint8_t n_ch);

#endif
