#include "hx711.h"

#include "config.h"

void hx711_init(hx711_sched_t *s, uint32_t now_us)
{
    s->last_round_us = now_us;
    s->first_ready_us = now_us;
    s->waiting = false;
    s->last_was_timeout = false;
    s->last_valid = 0;
    s->timeouts = 0;
    s->missed_since_status = 0;
}

bool hx711_due(const hx711_sched_t *s, uint32_t now_us)
{
    return now_us - s->last_round_us >= CONFIG_HX711_MIN_SPACING_US; /* wraps correctly */
}

hx711_action_t hx711_poll(hx711_sched_t *s, uint32_t now_us, uint8_t ready_mask)
{
    uint32_t since = now_us - s->last_round_us;
    if (since < CONFIG_HX711_MIN_SPACING_US) {
        return HX711_WAIT;
    }
    uint8_t anchor = s->last_valid;
    if (anchor == 0) {
        /* nobody to keep the beat: the first ready channel sets it */
        if (ready_mask) {
            return HX711_READ;
        }
        uint32_t limit = s->last_was_timeout ? CONFIG_HX711_PERIOD_US : CONFIG_HX711_TIMEOUT_US;
        return since >= limit ? HX711_TIMEOUT : HX711_WAIT;
    }
    uint8_t anchor_ready = ready_mask & anchor;
    if (anchor_ready == anchor) {
        return HX711_READ;
    }
    if (anchor_ready) {
        /* Some beat-keeper is late: lifted, or back at another phase. Wait
         * for it half a period at most: the ready ones convert again one
         * period after they became ready, so none of their readings is
         * lost, and a late one holds its data for the next round. */
        if (!s->waiting) {
            s->waiting = true;
            s->first_ready_us = now_us;
            return HX711_WAIT;
        }
        return now_us - s->first_ready_us >= CONFIG_HX711_GRACE_US ? HX711_READ : HX711_WAIT;
    }
    /* none of the beat-keepers is there (the whole group was lifted) */
    if (since >= CONFIG_HX711_TIMEOUT_US) {
        return ready_mask ? HX711_READ : HX711_TIMEOUT;
    }
    return HX711_WAIT;
}

void hx711_round_done(hx711_sched_t *s, uint32_t now_us, uint8_t valid, uint8_t n_ch)
{
    uint8_t all = (uint8_t)((1u << n_ch) - 1u);
    uint8_t missed = (uint8_t)(~valid & all);
    for (uint8_t m = missed; m; m &= (uint8_t)(m - 1u)) {
        s->timeouts++;
    }
    s->missed_since_status |= missed;
    s->last_round_us = now_us;
    s->waiting = false;
    s->last_was_timeout = valid == 0;
    s->last_valid = valid;
}

void hx711_unpack(const uint8_t *samples, uint8_t nports, const uint8_t *chan_port,
                  const uint8_t *chan_mask, uint8_t n_ch, int32_t *values)
{
    for (uint8_t k = 0; k < n_ch; k++) {
        const uint8_t *p = samples + chan_port[k];
        uint8_t mask = chan_mask[k];
        uint32_t v = 0;
        for (uint8_t i = 0; i < 24; i++, p += nports) {
            v = (v << 1) | ((*p & mask) ? 1u : 0u);
        }
        /* sign-extend the 24-bit two's complement */
        values[k] = (int32_t)(v ^ 0x800000u) - 0x800000;
    }
}

uint8_t hx711_ready_mask(const uint8_t *ports, const uint8_t *chan_port, const uint8_t *chan_mask,
                         uint8_t n_ch)
{
    uint8_t ready = 0;
    for (uint8_t k = 0; k < n_ch; k++) {
        if (!(ports[chan_port[k]] & chan_mask[k])) {
            ready |= (uint8_t)(1u << k);
        }
    }
    return ready;
}
