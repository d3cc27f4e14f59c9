/* Compile-time options of the towerear firmware, all in one place.
 *
 * Pins live in the generated board header (build/board.h, from
 * hardware/pinout.json); everything else that can be tuned is here. */
#ifndef CONFIG_H
#define CONFIG_H

/* Released with the app: the same version as the towerear package. */
#define FW_VERSION_MAJOR 0
#define FW_VERSION_MINOR 1
#define FW_VERSION_PATCH 0

#define CONFIG_F_CPU_HZ 16000000UL

/* Protocol (contracts.md section 1). */
#define CONFIG_PROTO_VERSION 1
#define CONFIG_N_PIEZO 8
#define CONFIG_N_LOAD 8
#define CONFIG_ADC_BITS 10
#define CONFIG_PIEZO_RATE_HZ 2000
#define CONFIG_LOAD_RATE_HZ 80

/* 10 sets per PIEZO frame: one 172-byte frame every 5 ms; framing overhead
 * about 6 %, latency well below one detector window. */
#define CONFIG_PIEZO_SETS_PER_FRAME 10

/* The ADC is driven by a 16 kHz tick (Timer1, CTC, 1000 CPU cycles): each
 * tick reads the conversion started one tick earlier and starts the next
 * channel, so eight channels give exactly 2000 sets/s. */
#define CONFIG_TICK_CYCLES 1000
#define CONFIG_TICKS_PER_SET CONFIG_N_PIEZO
/* ADC clock 16 MHz/32 = 500 kHz: a conversion takes 13 x 2 us = 26 us,
 * well inside the 62.5 us tick even when the tick ISR is delayed by other
 * ISRs. (16 MHz/128 would need 104 us, too slow for 16 conversions/ms.) */
#define CONFIG_ADC_PRESCALER_BITS 5

/* Buffers. Sizes are powers of two so indices wrap with a mask. */
#define CONFIG_PIEZO_RING_SETS 16 /* 8 ms of samples */
#define CONFIG_TX_RING_BYTES 512  /* about three PIEZO frames */
#define CONFIG_RX_RING_BYTES 64
/* The longest host command is PING: 9 bytes, 10 COBS-encoded. */
#define CONFIG_CMD_FRAME_BYTES 32

/* HX711: 80 readings/s -> a 12500 us period (see hx711.h for the rounds). */
#define CONFIG_HX711_PERIOD_US 12500UL
#define CONFIG_HX711_MIN_SPACING_US 9375UL /* 0.75 period: rounds stay on the lockstep beat */
#define CONFIG_HX711_GRACE_US 6250UL      /* half a period: wait for late beat-keepers */
#define CONFIG_HX711_TIMEOUT_US 18750UL   /* 1.5 periods with no beat-keeper: give up (< 2 periods) */
#define CONFIG_HX711_PULSES 25               /* 24 data bits + 1: channel A, gain 128 */

#define CONFIG_STATUS_PERIOD_MS 1000

#endif
