/* towerear-sim: the towerear firmware running in simavr, fed by a scenario.
 *
 * Loads the firmware ELF into a simulated ATmega328P at 16 MHz, feeds its
 * ADC with the scenario's piezo signal, emulates the eight HX711s on their
 * pins (hx711_sim.c), and connects the UART to a file or pipe (fast, as fast
 * as the host can simulate) or to a pseudo-terminal (paced to the wall
 * clock). It also measures the firmware from outside: cycles spent in each
 * ISR (entry seen at the vector, exit when the stack unwinds past it), the
 * timing of every ADC conversion start, SCK pulse widths, UART bytes.
 *
 * GPL-3.0-or-later (links libsimavr); see LICENSE in this directory. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "avr_adc.h"
#include "avr_ioport.h"
#include "avr_uart.h"
#include "hx711_sim.h"
#include "scenario.h"
#include "sim_avr.h"
#include "sim_elf.h"
#include "sim_time.h"
#include "uart_pty.h"

#define N_VECTORS 26
#define PIEZO_CH 8
#define SPL_ADDR 0x5D
#define SPH_ADDR 0x5E
#define MCUSR_ADDR 0x54
#define WDTCSR_ADDR 0x60
#define WDRF_BIT 3
#define WDE_BIT 3

static const char *const s_vector_names[N_VECTORS] = {
    "RESET", "INT0", "INT1", "PCINT0", "PCINT1", "PCINT2", "WDT", "TIMER2_COMPA", "TIMER2_COMPB",
    "TIMER2_OVF", "TIMER1_CAPT", "TIMER1_COMPA", "TIMER1_COMPB", "TIMER1_OVF", "TIMER0_COMPA",
    "TIMER0_COMPB", "TIMER0_OVF", "SPI_STC", "USART_RX", "USART_UDRE", "USART_TX", "ADC",
    "EE_READY", "ANALOG_COMP", "TWI", "SPM_READY"};

typedef struct {
    uint64_t count, total, max;
} isr_stat_t;

static struct {
    avr_t *avr;
    scenario_t scn;
    hxs_bank_t hx;
    FILE *out;
    int in_fd;
    int realtime;
    int loop;
    double seconds;

    /* scenario position */
    uint32_t load_row;
    uint64_t loop_offset_us; /* scenario time origin of the current loop pass */
    uint64_t conv_count[PIEZO_CH];
    avr_cycle_count_t conv_origin[PIEZO_CH];
    uint64_t conv_base[PIEZO_CH];
    int conv_anchored[PIEZO_CH];
    avr_cycle_count_t conv_dev_max;
    avr_cycle_count_t first_conv_cycle; /* first ADC start since the last (re)boot */
    uint64_t conv_late; /* conversion starts more than 10 us off their slot */

    /* host -> device bytes waiting to be clocked in, one per 10 us */
    uint8_t in_queue[4096];
    size_t in_head, in_tail;
    uint32_t next_cmd;

    /* measurements */
    isr_stat_t isr[N_VECTORS];
    int in_isr;
    int isr_vector;
    uint16_t isr_sp;
    avr_cycle_count_t isr_start;
    uint64_t isr_cycles_total;
    uint64_t uart_bytes;
    uint32_t resets;
    avr_cycle_count_t boot_cycle;
    uint64_t *profile; /* cycles spent at each flash word address */
    uint16_t sp_min;   /* deepest stack seen */
} S;

static uint64_t now_us(void)
{
    return avr_cycles_to_usec(S.avr, S.avr->cycle);
}

/* ---- piezo: each ADC conversion start gets the scenario sample of its slot ---- */

static void on_adc_start(struct avr_irq_t *irq, uint32_t value, void *param)
{
    (void)irq;
    (void)param;
    union {
        avr_adc_mux_t mux;
        uint32_t v;
    } e = {.v = value};
    if (e.mux.kind != ADC_MUX_SINGLE || e.mux.src >= PIEZO_CH) {
        return;
    }
    int ch = e.mux.src;
    uint64_t n = S.conv_count[ch]++;
    avr_cycle_count_t now = S.avr->cycle;
    avr_cycle_count_t slot = avr_usec_to_cycles(S.avr, 1000000u / S.scn.piezo_rate_hz);
    if (!S.conv_anchored[ch]) {
        if (ch == 0) {
            S.first_conv_cycle = now;
        }
        S.conv_anchored[ch] = 1;
        S.conv_origin[ch] = now;
        S.conv_base[ch] = n;
    } else {
        avr_cycle_count_t expect = S.conv_origin[ch] + (n - S.conv_base[ch]) * slot;
        avr_cycle_count_t dev = now > expect ? now - expect : expect - now;
        if (dev > S.conv_dev_max) {
            S.conv_dev_max = dev;
        }
        if (dev > avr_usec_to_cycles(S.avr, 10)) {
            S.conv_late++;
        }
    }
    /* The n-th conversion of a channel samples the signal in set slot n. */
    uint64_t idx = n % S.scn.n_sets;
    uint32_t code = S.scn.piezo[idx * PIEZO_CH + ch];
    /* simavr returns mV * 1023 / 5000, truncated: the smallest mV that
     * reads back as `code` is ceil(code * 5000 / 1023). */
    uint32_t mv = (code * 5000u + 1022u) / 1023u;
    avr_raise_irq(avr_io_getirq(S.avr, AVR_IOCTL_ADC_GETIRQ, ADC_IRQ_ADC0 + ch), mv);
}

/* ---- load cells: a conversion at every scenario load row ---- */

static avr_cycle_count_t on_load_row(avr_t *avr, avr_cycle_count_t when, void *param)
{
    (void)param;
    uint32_t row = S.load_row;
    hxs_convert(&S.hx, (int32_t)row, &S.scn.load[(size_t)row * 8], S.scn.load_valid[row]);
    uint64_t next;
    if (row + 1 < S.scn.n_load) {
        S.load_row = row + 1;
        next = S.loop_offset_us + S.scn.load_t_us[row + 1];
    } else if (S.loop) {
        S.loop_offset_us += scenario_duration_us(&S.scn);
        S.load_row = 0;
        next = S.loop_offset_us + S.scn.load_t_us[0];
    } else {
        return 0;
    }
    uint64_t t = now_us();
    return when + avr_usec_to_cycles(avr, (uint32_t)(next > t ? next - t : 1));
}

/* ---- UART ---- */

static void on_uart_out(struct avr_irq_t *irq, uint32_t value, void *param)
{
    (void)irq;
    (void)param;
    S.uart_bytes++;
    if (S.out) {
        fputc((int)(value & 0xFF), S.out);
    }
}

static void queue_in(const uint8_t *bytes, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        size_t next = (S.in_head + 1) % sizeof S.in_queue;
        if (next == S.in_tail) {
            fprintf(stderr, "towerear-sim: host input queue full, byte dropped\n");
            return;
        }
        S.in_queue[S.in_head] = bytes[i];
        S.in_head = next;
    }
}

/* Every 10 us (one byte time at 1 Mbaud): scripted commands that are due,
 * bytes from the input pipe, and one byte into the UART. */
static avr_cycle_count_t on_input_tick(avr_t *avr, avr_cycle_count_t when, void *param)
{
    (void)param;
    uint64_t t = now_us();
    while (S.next_cmd < S.scn.n_cmds && S.scn.cmds[S.next_cmd].t_us <= t) {
        queue_in(S.scn.cmds[S.next_cmd].bytes, S.scn.cmds[S.next_cmd].len);
        S.next_cmd++;
    }
    static unsigned ticks;
    if (S.in_fd >= 0 && ++ticks % 100 == 0) { /* poll the pipe every ~1 ms */
        uint8_t buf[256];
        ssize_t n = read(S.in_fd, buf, sizeof buf);
        if (n > 0) {
            queue_in(buf, (size_t)n);
        } else if (n == 0) {
            S.in_fd = -1;
        }
    }
    if (S.in_tail != S.in_head) {
        avr_raise_irq(avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_INPUT),
                      S.in_queue[S.in_tail]);
        S.in_tail = (S.in_tail + 1) % sizeof S.in_queue;
    }
    return when + avr_usec_to_cycles(avr, 10);
}

static void configure_uart(void)
{
    uint32_t flags = 0;
    avr_ioctl(S.avr, AVR_IOCTL_UART_GET_FLAGS('0'), &flags);
    flags &= ~(uint32_t)(AVR_UART_FLAG_STDIO | AVR_UART_FLAG_POLL_SLEEP);
    avr_ioctl(S.avr, AVR_IOCTL_UART_SET_FLAGS('0'), &flags);
}

static void start_timers(void)
{
    hxs_refresh_pins(&S.hx);
    if (S.load_row < S.scn.n_load) {
        uint64_t next = S.loop_offset_us + S.scn.load_t_us[S.load_row];
        uint64_t t = now_us();
        avr_cycle_timer_register(S.avr, avr_usec_to_cycles(S.avr, (uint32_t)(next > t ? next - t : 1)),
                                 on_load_row, NULL);
    }
    avr_cycle_timer_register(S.avr, avr_usec_to_cycles(S.avr, 10), on_input_tick, NULL);
}

/* ---- ISR accounting from the program counter and stack pointer ---- */

static inline uint16_t read_sp(void)
{
    return (uint16_t)(S.avr->data[SPL_ADDR] | S.avr->data[SPH_ADDR] << 8);
}

static inline void track_isr(void)
{
    avr_t *avr = S.avr;
    uint16_t sp = read_sp();
    if (sp < S.sp_min && sp > 0x100) { /* (SP is 0 for a moment after reset) */
        S.sp_min = sp;
    }
    if (!S.in_isr) {
        uint32_t pc = avr->pc;
        if (pc != 0 && pc < N_VECTORS * 4u && (pc & 3u) == 0) {
            S.in_isr = 1;
            S.isr_vector = (int)(pc / 4u);
            S.isr_sp = read_sp();
            /* the 4-cycle interrupt response (push PC, jump) is already spent */
            S.isr_start = avr->cycle - 4;
        }
    } else if (read_sp() > S.isr_sp) {
        avr_cycle_count_t cycles = avr->cycle - S.isr_start;
        isr_stat_t *st = &S.isr[S.isr_vector];
        st->count++;
        st->total += cycles;
        if (cycles > st->max) {
            st->max = cycles;
        }
        S.isr_cycles_total += cycles;
        S.in_isr = 0;
    }
}

/* After a reset: avr_reset() cleared every cycle timer and the UART
 * flags, so set them up again. */
static void after_reset(void)
{
    S.resets++;
    S.in_isr = 0;
    configure_uart();
    for (int ch = 0; ch < PIEZO_CH; ch++) {
        S.conv_anchored[ch] = 0; /* the firmware restarts its sampling clock */
    }
    start_timers();
}

/* Older simavr versions stop the CPU where the chip's watchdog would reset
 * it (simavr 1.6 resets by itself, see the run loop). Do the reset: the
 * firmware sees WDRF in MCUSR and boots again. Returns 0 if the stop was
 * not the watchdog. */
static int watchdog_reset(void)
{
    if (!(S.avr->data[WDTCSR_ADDR] & (1u << WDE_BIT))) {
        return 0;
    }
    avr_reset(S.avr);
    S.avr->data[MCUSR_ADDR] |= (1u << WDRF_BIT);
    S.avr->state = cpu_Running;
    after_reset();
    return 1;
}

static void no_sleep(avr_t *avr, avr_cycle_count_t how_long)
{
    (void)avr;
    (void)how_long;
}

static void write_stats(const char *path, double wall_s)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "towerear-sim: cannot write %s\n", path);
        return;
    }
    double sim_s = (double)(S.avr->cycle) / S.avr->frequency;
    fprintf(f, "{\n  \"cycles\": %llu,\n  \"sim_seconds\": %.6f,\n  \"wall_seconds\": %.3f,\n",
            (unsigned long long)S.avr->cycle, sim_s, wall_s);
    fprintf(f, "  \"stack_peak_bytes\": %u,\n", (unsigned)(S.avr->ramend - S.sp_min));
    fprintf(f, "  \"f_cpu_hz\": %u,\n  \"uart_bytes\": %llu,\n  \"resets\": %u,\n",
            S.avr->frequency, (unsigned long long)S.uart_bytes, S.resets);
    fprintf(f, "  \"isr_cycles_total\": %llu,\n", (unsigned long long)S.isr_cycles_total);
    fprintf(f, "  \"isr\": {");
    const char *sep = "";
    for (int v = 0; v < N_VECTORS; v++) {
        if (!S.isr[v].count) {
            continue;
        }
        fprintf(f, "%s\n    \"%s\": {\"count\": %llu, \"total_cycles\": %llu, \"max_cycles\": %llu}",
                sep, s_vector_names[v], (unsigned long long)S.isr[v].count,
                (unsigned long long)S.isr[v].total, (unsigned long long)S.isr[v].max);
        sep = ",";
    }
    fprintf(f, "\n  },\n");
    uint64_t conv = 0;
    for (int ch = 0; ch < PIEZO_CH; ch++) {
        conv += S.conv_count[ch];
    }
    fprintf(f, "  \"adc_conversions\": %llu,\n  \"adc_slot_deviation_max_cycles\": %llu,\n",
            (unsigned long long)conv, (unsigned long long)S.conv_dev_max);
    fprintf(f, "  \"adc_late_starts\": %llu,\n", (unsigned long long)S.conv_late);
    fprintf(f, "  \"adc_first_start_us\": %.3f,\n", (double)S.first_conv_cycle * 1e6 / S.avr->frequency);
    fprintf(f, "  \"hx711_conversions\": %u,\n  \"hx711_reads\": %u,\n", S.hx.conversions,
            S.hx.reads_completed);
    fprintf(f, "  \"hx711_conversions_unread\": %u,\n  \"hx711_conversions_lost\": %u,\n",
            S.hx.conversions_unread, S.hx.conversions_lost);
    fprintf(f, "  \"hx711_pulses_while_busy\": %u,\n", S.hx.pulses_while_busy);
    fprintf(f, "  \"sck_high_max_cycles\": %llu,\n  \"sck_power_down_violations\": %u\n}\n",
            (unsigned long long)S.hx.sck_high_max, S.hx.power_down_violations);
    fclose(f);
}

static void usage(void)
{
    fprintf(stderr,
            "usage: towerear-sim FIRMWARE.elf SCENARIO.bin [--seconds S] [--loop]\n"
            "         [--out FILE | --out-fd N | --pty] [--in-fd N] [--realtime]\n"
            "         [--hx711-log FILE] [--stats FILE] [--profile FILE] [--verbose]\n");
    exit(2);
}

static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        usage();
    }
    const char *elf = argv[1];
    const char *scn_path = argv[2];
    const char *out_path = NULL, *stats_path = NULL, *log_path = NULL, *profile_path = NULL;
    int out_fd = -1, use_pty = 0, verbose = 0;
    S.in_fd = -1;
    S.seconds = -1;
    S.sp_min = 0xFFFF;
    for (int i = 3; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--seconds") && v) {
            S.seconds = atof(v), i++;
        } else if (!strcmp(a, "--loop")) {
            S.loop = 1;
        } else if (!strcmp(a, "--out") && v) {
            out_path = v, i++;
        } else if (!strcmp(a, "--out-fd") && v) {
            out_fd = atoi(v), i++;
        } else if (!strcmp(a, "--in-fd") && v) {
            S.in_fd = atoi(v), i++;
        } else if (!strcmp(a, "--pty")) {
            use_pty = 1;
        } else if (!strcmp(a, "--realtime")) {
            S.realtime = 1;
        } else if (!strcmp(a, "--hx711-log") && v) {
            log_path = v, i++;
        } else if (!strcmp(a, "--stats") && v) {
            stats_path = v, i++;
        } else if (!strcmp(a, "--profile") && v) {
            profile_path = v, i++;
        } else if (!strcmp(a, "--verbose")) {
            verbose = 1;
        } else {
            usage();
        }
    }

    char err[256];
    if (scenario_load(&S.scn, scn_path, err, sizeof err) != 0) {
        fprintf(stderr, "towerear-sim: %s\n", err);
        return 2;
    }
    if (S.seconds < 0) {
        S.seconds = S.loop ? 1e12 : (double)scenario_duration_us(&S.scn) / 1e6;
    }

    /* simavr chats on stdout; keep stdout for nothing but our own lines */
    int saved_stdout = dup(1);
    if (!verbose) {
        int devnull = open("/dev/null", O_WRONLY);
        dup2(devnull, 1);
        close(devnull);
    }

    elf_firmware_t fw;
    memset(&fw, 0, sizeof fw);
    if (elf_read_firmware(elf, &fw) != 0) {
        fprintf(stderr, "towerear-sim: cannot read firmware %s\n", elf);
        return 2;
    }
    S.avr = avr_make_mcu_by_name("atmega328p");
    if (!S.avr) {
        fprintf(stderr, "towerear-sim: simavr has no atmega328p\n");
        return 2;
    }
    avr_init(S.avr);
    avr_load_firmware(S.avr, &fw);
    S.avr->frequency = 16000000;
    S.avr->vcc = S.avr->avcc = S.avr->aref = 5000;
    S.avr->log = verbose ? LOG_TRACE : LOG_ERROR;
    if (!use_pty && !S.realtime) {
        S.avr->sleep = no_sleep;
    }

    if (out_path) {
        S.out = fopen(out_path, "wb");
        if (!S.out) {
            fprintf(stderr, "towerear-sim: cannot write %s: %s\n", out_path, strerror(errno));
            return 2;
        }
    } else if (out_fd >= 0) {
        S.out = fdopen(out_fd, "wb");
    }
    if (S.in_fd >= 0) {
        fcntl(S.in_fd, F_SETFL, fcntl(S.in_fd, F_GETFL) | O_NONBLOCK);
    }
    FILE *log = NULL;
    if (log_path) {
        log = fopen(log_path, "w");
    }

    configure_uart();
    avr_irq_register_notify(avr_io_getirq(S.avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_OUTPUT),
                            on_uart_out, NULL);
    avr_irq_register_notify(avr_io_getirq(S.avr, AVR_IOCTL_ADC_GETIRQ, ADC_IRQ_OUT_TRIGGER),
                            on_adc_start, NULL);
    hxs_init(&S.hx, S.avr);
    S.hx.log = log;

    static uart_pty_t pty;
    if (use_pty) {
        S.realtime = 1;
        uart_pty_init(S.avr, &pty);
        uart_pty_connect(&pty, '0');
        FILE *o = fdopen(saved_stdout, "w");
        fprintf(o, "pty %s\n", pty.pty.slavename);
        fflush(o);
    }
    start_timers();

    avr_cycle_count_t end = (avr_cycle_count_t)(S.seconds * S.avr->frequency);
    double wall0 = wall_now();
    avr_cycle_count_t pace_step = avr_usec_to_cycles(S.avr, 1000), next_pace = pace_step;
    int rc = 0;
    if (profile_path) {
        S.profile = calloc(32768, sizeof *S.profile);
    }
    /* simavr 1.6 resets on a watchdog timeout by swapping avr->run for one
     * call; seeing the swap tells us a reset is happening. */
    avr_run_t normal_run = S.avr->run;
    while (S.avr->cycle < end) {
        uint32_t pc = S.avr->pc;
        avr_cycle_count_t before = S.avr->cycle;
        int resetting = S.avr->run != normal_run;
        int state = avr_run(S.avr);
        if (resetting && S.avr->run == normal_run) {
            after_reset();
            continue;
        }
        if (S.profile) {
            S.profile[(pc >> 1) & 32767u] += S.avr->cycle - before;
        }
        track_isr();
        if (state == cpu_Crashed || state == cpu_Done || state == cpu_Stopped) {
            if (state == cpu_Crashed && watchdog_reset()) {
                continue;
            }
            fprintf(stderr, "towerear-sim: firmware stopped (state %d) at pc 0x%x\n", state,
                    S.avr->pc);
            rc = 3;
            break;
        }
        if (S.avr->cycle >= next_pace) {
            next_pace += pace_step;
            if (S.out && S.realtime) {
                fflush(S.out);
            }
            if (S.realtime) {
                double ahead = (double)S.avr->cycle / S.avr->frequency - (wall_now() - wall0);
                if (ahead > 0.002) {
                    usleep((useconds_t)(ahead * 1e6));
                }
            }
        }
    }
    if (S.out) {
        fflush(S.out);
        fclose(S.out);
    }
    if (log) {
        fclose(log);
    }
    if (stats_path) {
        write_stats(stats_path, wall_now() - wall0);
    }
    if (profile_path) {
        FILE *pf = fopen(profile_path, "w");
        for (uint32_t w = 0; pf && w < 32768; w++) {
            if (S.profile[w]) {
                fprintf(pf, "%x %llu\n", w * 2, (unsigned long long)S.profile[w]);
            }
        }
        if (pf) {
            fclose(pf);
        }
    }
    return rc;
}
