/*
 * ponte-sim: runs the LED controller firmware in simavr at about real time and connects its
 * UART to a pseudo-terminal, so the host bridge talks to it exactly as to a USB serial port.
 *
 *   ponte-sim FIRMWARE.elf [--link PATH]
 *
 * Prints "PTY /dev/pts/N" on stdout when ready (and makes PATH a symlink to it, so a
 * restarted emulator is found at the same place). Commands on stdin, one per line:
 *   press MS   hold the button (PD2) down for MS milliseconds of emulated time -> "OK press"
 *   strip      the last complete WS2812 transmission decoded from pin PD6
 *              -> "STRIP NBYTES HEX" (bytes in wire order, G R B per LED)
 *   quit       stop (as does end of input)
 *
 * Why not simavr's uart_pty part: in Debian's simavr 1.6 it feeds the emulated UART from its
 * own thread with no lock, racing the core's cycle timers. This bridge is single threaded:
 * the emulator runs in slices of 100 us and the pty, stdin and the UART's XON/XOFF flow
 * control are serviced between slices, so nothing touches the core concurrently.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "avr_ioport.h"
#include "avr_uart.h"
#include "sim_avr.h"
#include "sim_elf.h"
#include "sim_irq.h"
#include "sim_time.h"

#define FREQUENCY 16000000UL
#define SLICE_CYCLES (FREQUENCY / 10000) /* 100 us */
#define LED_PIN 6
#define BUTTON_PIN 2
#define STRIP_MAX 2048

static avr_t *avr;
static int pty_master = -1;

/* host -> AVR bytes waiting for the UART to accept them */
static uint8_t to_avr[8192];
static size_t to_avr_len;
static int uart_xon = 1;
static avr_irq_t *uart_input;

/* AVR -> host bytes waiting to be written to the pty */
static uint8_t to_host[8192];
static size_t to_host_len;

static avr_irq_t *button_irq;

/* WS2812 decoding from the data pin */
static int led_level;
static avr_cycle_count_t led_rise;
static avr_cycle_count_t led_fall;
static uint8_t strip_bits[STRIP_MAX];
static size_t strip_bit_count;
static uint8_t strip_last[STRIP_MAX];
static size_t strip_last_len;

static double wall_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void uart_output_hook(avr_irq_t *irq, uint32_t value, void *param)
{
    (void)irq;
    (void)param;
    if (to_host_len < sizeof(to_host)) {
        to_host[to_host_len++] = (uint8_t)value;
    }
}

static void uart_xon_hook(avr_irq_t *irq, uint32_t value, void *param)
{
    (void)irq;
    (void)value;
    (void)param;
    uart_xon = 1;
}

static void uart_xoff_hook(avr_irq_t *irq, uint32_t value, void *param)
{
    (void)irq;
    (void)value;
    (void)param;
    uart_xon = 0;
}

static void latch_strip(void)
{
    if (strip_bit_count >= 8) {
        strip_last_len = strip_bit_count / 8;
        memcpy(strip_last, strip_bits, strip_last_len);
    }
    strip_bit_count = 0;
    memset(strip_bits, 0, sizeof(strip_bits));
}

/* A high pulse of 9 or more cycles (0.56 us) is a 1, shorter is a 0; a low gap of 50 us or
 * more latches the strip. */
static void led_pin_hook(avr_irq_t *irq, uint32_t value, void *param)
{
    (void)irq;
    (void)param;
    int level = value ? 1 : 0;
    if (level == led_level) {
        return;
    }
    led_level = level;
    if (level) {
        if (avr->cycle - led_fall >= 50 * (FREQUENCY / 1000000)) {
            latch_strip();
        }
        led_rise = avr->cycle;
    } else {
        led_fall = avr->cycle;
        avr_cycle_count_t high = led_fall - led_rise;
        if (strip_bit_count < STRIP_MAX * 8) {
            if (high >= 9) {
                strip_bits[strip_bit_count / 8] |= (uint8_t)(0x80 >> (strip_bit_count % 8));
            }
            strip_bit_count++;
        }
    }
}

/* Drives the button pin from outside. Declaring it external keeps simavr from pulling it
 * back up to the PORT value on every write to PORTD (its pull-up emulation). */
static void set_button(int level)
{
    avr_ioport_external_t external = {.name = 'D', .mask = 1 << BUTTON_PIN,
                                      .value = (uint8_t)(level ? 1 << BUTTON_PIN : 0)};
    avr_ioctl(avr, AVR_IOCTL_IOPORT_SET_EXTERNAL('D'), &external);
    avr_raise_irq(button_irq, (uint32_t)level);
}

static avr_cycle_count_t release_button(avr_t *a, avr_cycle_count_t when, void *param)
{
    (void)a;
    (void)when;
    (void)param;
    set_button(1);
    return 0;
}

static void sleep_hook(avr_t *a, avr_cycle_count_t how_long)
{
    /* pacing is done by the main loop; an emulated sleep must not block the host */
    (void)a;
    (void)how_long;
}

/* A do-nothing timer every 50 us: a sleeping AVR makes simavr jump straight to the next
 * timer event, which could be a millisecond away; this keeps the jumps short, so bytes that
 * arrive from the host are not injected late. */
#define TICK_CYCLES (FREQUENCY / 20000)
static avr_cycle_count_t pacing_tick(avr_t *a, avr_cycle_count_t when, void *param)
{
    (void)a;
    (void)param;
    return when + TICK_CYCLES;
}

static void feed_uart(void)
{
    size_t sent = 0;
    while (sent < to_avr_len && uart_xon) {
        avr_raise_irq(uart_input, to_avr[sent++]);
    }
    if (sent) {
        memmove(to_avr, to_avr + sent, to_avr_len - sent);
        to_avr_len -= sent;
    }
}

static void flush_to_host(void)
{
    if (!to_host_len) {
        return;
    }
    ssize_t n = write(pty_master, to_host, to_host_len);
    if (n < 0) {
        /* nobody is reading (or the pty is full): drop, as a wire with no listener would */
        to_host_len = 0;
        return;
    }
    memmove(to_host, to_host + n, to_host_len - (size_t)n);
    to_host_len -= (size_t)n;
}

static void read_pty(void)
{
    while (to_avr_len < sizeof(to_avr)) {
        ssize_t n = read(pty_master, to_avr + to_avr_len, sizeof(to_avr) - to_avr_len);
        if (n <= 0) {
            return; /* EAGAIN, or EIO while no one holds the terminal open */
        }
        to_avr_len += (size_t)n;
    }
}

static char command[256];
static size_t command_len;

/* Returns 0 when the harness should stop. */
static int run_command(const char *line)
{
    if (strncmp(line, "press ", 6) == 0) {
        long ms = strtol(line + 6, NULL, 10);
        if (ms <= 0) {
            ms = 100;
        }
        set_button(0);
        avr_cycle_timer_register_usec(avr, (uint32_t)ms * 1000, release_button, NULL);
        printf("OK press\n");
    } else if (strcmp(line, "strip") == 0) {
        printf("STRIP %zu ", strip_last_len);
        for (size_t i = 0; i < strip_last_len; i++) {
            printf("%02x", strip_last[i]);
        }
        printf("\n");
    } else if (strcmp(line, "quit") == 0) {
        return 0;
    } else {
        printf("ERROR unknown command: %s\n", line);
    }
    fflush(stdout);
    return 1;
}

static int read_stdin(void)
{
    char buf[256];
    ssize_t n = read(STDIN_FILENO, buf, sizeof(buf));
    if (n == 0) {
        return 0;
    }
    if (n < 0) {
        return errno == EAGAIN || errno == EINTR;
    }
    for (ssize_t i = 0; i < n; i++) {
        if (buf[i] == '\n') {
            command[command_len] = 0;
            command_len = 0;
            if (!run_command(command)) {
                return 0;
            }
        } else if (command_len < sizeof(command) - 1) {
            command[command_len++] = buf[i];
        }
    }
    return 1;
}

int main(int argc, char **argv)
{
    const char *firmware = NULL;
    const char *link_path = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--link") == 0 && i + 1 < argc) {
            link_path = argv[++i];
        } else if (!firmware) {
            firmware = argv[i];
        } else {
            fprintf(stderr, "usage: %s FIRMWARE.elf [--link PATH]\n", argv[0]);
            return 2;
        }
    }
    if (!firmware) {
        fprintf(stderr, "usage: %s FIRMWARE.elf [--link PATH]\n", argv[0]);
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);

    elf_firmware_t fw;
    memset(&fw, 0, sizeof(fw));
    if (elf_read_firmware(firmware, &fw) != 0) {
        fprintf(stderr, "ponte-sim: cannot read firmware %s\n", firmware);
        return 1;
    }
    avr = avr_make_mcu_by_name("atmega328p");
    if (!avr) {
        fprintf(stderr, "ponte-sim: simavr has no atmega328p\n");
        return 1;
    }
    avr_init(avr);
    avr->log = 0;
    avr->frequency = FREQUENCY;
    avr_load_firmware(avr, &fw);
    avr->frequency = FREQUENCY;
    avr->sleep = sleep_hook;

    uint32_t flags = 0;
    avr_ioctl(avr, AVR_IOCTL_UART_GET_FLAGS('0'), &flags);
    flags &= ~(uint32_t)(AVR_UART_FLAG_STDIO | AVR_UART_FLAG_POLL_SLEEP);
    avr_ioctl(avr, AVR_IOCTL_UART_SET_FLAGS('0'), &flags);
    uart_input = avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_INPUT);
    avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_OUTPUT),
                            uart_output_hook, NULL);
    avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_OUT_XON),
                            uart_xon_hook, NULL);
    avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_OUT_XOFF),
                            uart_xoff_hook, NULL);
    avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_IOPORT_GETIRQ('D'), LED_PIN),
                            led_pin_hook, NULL);
    button_irq = avr_io_getirq(avr, AVR_IOCTL_IOPORT_GETIRQ('D'), BUTTON_PIN);
    set_button(1); /* released: the pull-up holds the pin high */

    int pty_slave = -1;
    char pty_name[256];
    if (openpty(&pty_master, &pty_slave, pty_name, NULL, NULL) < 0) {
        fprintf(stderr, "ponte-sim: openpty: %s\n", strerror(errno));
        return 1;
    }
    struct termios tio;
    tcgetattr(pty_slave, &tio);
    cfmakeraw(&tio);
    cfsetispeed(&tio, B115200);
    cfsetospeed(&tio, B115200);
    tcsetattr(pty_slave, TCSANOW, &tio);
    /* Our own slave descriptor stays open, so the master does not see a hang-up (EIO) each
     * time the host closes the port; bytes sent while no one listens are dropped. */
    fcntl(pty_master, F_SETFL, fcntl(pty_master, F_GETFL) | O_NONBLOCK);
    fcntl(STDIN_FILENO, F_SETFL, fcntl(STDIN_FILENO, F_GETFL) | O_NONBLOCK);
    if (link_path) {
        unlink(link_path);
        if (symlink(pty_name, link_path) != 0) {
            fprintf(stderr, "ponte-sim: cannot link %s: %s\n", link_path, strerror(errno));
            return 1;
        }
    }
    printf("PTY %s\n", pty_name);
    fflush(stdout);

    avr_cycle_timer_register(avr, TICK_CYCLES, pacing_tick, NULL);
    double wall_start = wall_seconds();
    double wall_first = wall_start;
    double worst_behind = 0;
    avr_cycle_count_t cycle_start = avr->cycle;
    int running = 1;
    while (running) {
        avr_cycle_count_t slice_end = avr->cycle + SLICE_CYCLES;
        while (avr->cycle < slice_end) {
            int state = avr_run(avr);
            if (state == cpu_Done || state == cpu_Crashed) {
                fprintf(stderr, "ponte-sim: firmware stopped (state %d)\n", state);
                running = 0;
                break;
            }
        }
        if (!led_level && strip_bit_count && avr->cycle - led_fall >= 50 * (FREQUENCY / 1000000)) {
            latch_strip(); /* the line has been low for the reset time: the strip shows it */
        }
        read_pty();
        feed_uart();
        flush_to_host();

        double emulated = (double)(avr->cycle - cycle_start) / (double)FREQUENCY;
        double ahead = emulated - (wall_seconds() - wall_start);
        if (-ahead > worst_behind && emulated > 0.1) {
            worst_behind = -ahead; /* after start-up */
        }
        if (ahead < -0.1) {
            /* the host machine was busy: do not rush to catch up, just carry on from now */
            wall_start = wall_seconds() - emulated;
            ahead = 0;
        }
        struct pollfd fds[2] = {{STDIN_FILENO, POLLIN, 0}, {pty_master, POLLIN, 0}};
        struct timespec wait = {0, 0};
        if (ahead > 0) {
            wait.tv_sec = (time_t)ahead;
            wait.tv_nsec = (long)((ahead - (double)wait.tv_sec) * 1e9);
        }
        int ready = ppoll(fds, 2, &wait, NULL);
        if (ready > 0 && (fds[0].revents & (POLLIN | POLLHUP))) {
            running = read_stdin() && running;
        }
        if (ready > 0 && (fds[1].revents & POLLIN)) {
            read_pty();
            feed_uart();
        }
    }
    if (link_path) {
        unlink(link_path);
    }
    fprintf(stderr,
            "ponte-sim: emulated %.3f s in %.3f s; after start-up at most %.2f ms behind "
            "real time\n",
            (double)(avr->cycle - cycle_start) / (double)FREQUENCY, wall_seconds() - wall_first,
            worst_behind * 1000);
    return 0;
}
