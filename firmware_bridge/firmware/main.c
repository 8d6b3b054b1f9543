/*
 * Ponte del Diavolo LED controller: ATmega328P at 16 MHz (Arduino Uno/Nano).
 *
 * Receives whole LED states from the host over the UART (COBS frames with CRC-16, see
 * README.md), renders them with their blink/breathe effects onto a WS2812B strip, reports
 * button presses (resent until acknowledged), and falls back to a calm idle pattern when the
 * host has been quiet for IDLE_TIMEOUT_MS.
 */
#include <avr/interrupt.h>
#include <avr/io.h>
#include <avr/sleep.h>
#include <string.h>

#include "protocol.h"
#include "ws2812.h"

#ifndef LED_COUNT
#define LED_COUNT 150 /* 12x12 matrix + 3; the host sends as many as its layout uses */
#endif
#ifndef IDLE_TIMEOUT_MS
#define IDLE_TIMEOUT_MS 3000
#endif
#define BAUD 115200
#define RENDER_INTERVAL_MS 20
#define BUTTON_DEBOUNCE_MS 20
#define BUTTON_LONG_MS 800
#define BUTTON_RESEND_MS 150
#define BUTTON_QUEUE 4
#define BUTTON_PIN_BIT 2 /* PD2, Arduino pin D2, to ground; internal pull-up */

/* Largest decoded frame: type, seq, FRAME payload, CRC. */
#define FRAME_PAYLOAD_MAX (1 + MAX_COLOURS * 4 + 2 + (LED_COUNT + 1) / 2)
#define RX_FRAME_MAX (2 + FRAME_PAYLOAD_MAX + 2 + 2)
#define RX_RING 128 /* power of two */

/* ---- time ---- */
static volatile uint32_t ticks_ms;

ISR(TIMER0_COMPA_vect) { ticks_ms++; }

static uint32_t millis(void)
{
    uint8_t sreg = SREG;
    cli();
    uint32_t now = ticks_ms;
    SREG = sreg;
    return now;
}

/* ---- UART ---- */
static volatile uint8_t rx_ring[RX_RING];
static volatile uint8_t rx_head;
static volatile uint8_t rx_tail;
static volatile uint8_t rx_overruns;

ISR(USART_RX_vect)
{
    uint8_t byte = UDR0;
    uint8_t next = (uint8_t)((rx_head + 1) & (RX_RING - 1));
    if (next == rx_tail) {
        rx_overruns++;
    } else {
        rx_ring[rx_head] = byte;
        rx_head = next;
    }
}

static void uart_init(void)
{
    UCSR0A = (uint8_t)(1u << U2X0);
    uint16_t ubrr = (uint16_t)((F_CPU / 8UL / BAUD) - 1); /* 16: 117647 baud, 2.1% off */
    UBRR0H = (uint8_t)(ubrr >> 8);
    UBRR0L = (uint8_t)ubrr;
    UCSR0B = (uint8_t)((1u << RXEN0) | (1u << TXEN0) | (1u << RXCIE0));
    UCSR0C = (uint8_t)((1u << UCSZ01) | (1u << UCSZ00));
}

static void uart_put(uint8_t byte)
{
    while (!(UCSR0A & (1u << UDRE0))) {
    }
    UDR0 = byte;
}

/* ---- state ---- */
static uint8_t rx_frame[RX_FRAME_MAX];
static uint16_t rx_len;
static uint8_t rx_discarding;

static uint8_t palette[MAX_COLOURS][4]; /* r, g, b, effect */
static uint8_t colour_count;
static uint16_t shown_leds;
static uint8_t indices[(LED_COUNT + 1) / 2]; /* palette index per LED, low nibble first */
static uint8_t strip[LED_COUNT * 3];         /* G, R, B as sent to the strip */

static uint8_t have_host_seq;
static uint8_t last_host_seq;
static uint32_t last_host_ms;
static uint8_t idle = 1;
static uint8_t dirty = 1;

static struct {
    uint16_t frames_ok, crc_errors, framing_errors, unknown_types, bad_payloads;
    uint16_t duplicates, stale, idle_fallbacks, button_events, button_resends, rx_overruns;
} stats;

/* Button events waiting for the host's acknowledgement. */
static struct {
    uint8_t seq, kind;
    uint16_t duration_ms;
} button_queue[BUTTON_QUEUE];
static uint8_t button_pending;
static uint8_t button_seq;
static uint32_t button_sent_ms;
static uint8_t button_sent;

/* ---- transmit: COBS-encodes type, seq, payload and CRC on the fly ---- */
static uint8_t tx_head[2];
static const uint8_t *tx_payload;
static uint16_t tx_payload_len;
static uint8_t tx_crc[2];

static uint8_t tx_at(uint16_t i)
{
    if (i < 2) {
        return tx_head[i];
    }
    i -= 2;
    if (i < tx_payload_len) {
        return tx_payload[i];
    }
    return tx_crc[i - tx_payload_len];
}

static void send_message(uint8_t type, uint8_t seq, const uint8_t *payload, uint16_t len)
{
    tx_head[0] = type;
    tx_head[1] = seq;
    tx_payload = payload;
    tx_payload_len = len;
    uint16_t crc = 0xFFFF;
    for (uint16_t i = 0; i < len + 2u; i++) {
        crc = crc16_update(crc, tx_at(i));
    }
    tx_crc[0] = (uint8_t)(crc >> 8);
    tx_crc[1] = (uint8_t)crc;
    uint16_t total = (uint16_t)(len + 4);
    uint16_t start = 0;
    for (;;) {
        /* a block: up to 254 non-zero bytes, then a zero that the block code stands for */
        uint16_t end = start;
        while (end < total && end - start < 254 && tx_at(end) != 0) {
            end++;
        }
        uart_put((uint8_t)(end - start + 1));
        for (uint16_t i = start; i < end; i++) {
            uart_put(tx_at(i));
        }
        if (end == total) {
            break;
        }
        start = (end - start == 254) ? end : (uint16_t)(end + 1);
    }
    uart_put(0);
}

static void send_nak(uint8_t seq, uint8_t reason) { send_message(MSG_NAK, seq, &reason, 1); }

/* ---- rendering ---- */
static uint8_t scale(uint8_t value, uint8_t level)
{
    return (uint8_t)(((uint16_t)value * (uint16_t)(level + 1)) >> 8);
}

/* 0..255, a triangle wave with the given period, never fully dark. */
static uint8_t breathe_level(uint32_t now, uint16_t period)
{
    uint16_t phase = (uint16_t)(now % period);
    uint16_t half = period / 2;
    uint16_t ramp = phase < half ? phase : (uint16_t)(period - phase);
    return (uint8_t)(24 + (uint32_t)ramp * 231 / half);
}

static uint8_t effect_level(uint8_t effect, uint32_t now)
{
    switch (effect) {
    case EFFECT_BLINK:
        return (now % 500) < 250 ? 255 : 0;
    case EFFECT_SLOW_BLINK:
        return (now % 1600) < 800 ? 255 : 0;
    case EFFECT_BREATHE:
        return breathe_level(now, 3000);
    default:
        return 255;
    }
}

static void current_levels(uint32_t now, uint8_t *levels)
{
    for (uint8_t c = 0; c < colour_count; c++) {
        levels[c] = effect_level(palette[c][3], now);
    }
}

static void render(uint32_t now)
{
    if (idle) {
        /* calm idle pattern: every LED breathes a dim blue-green */
        uint8_t level = breathe_level(now, 4000);
        for (uint16_t i = 0; i < LED_COUNT; i++) {
            strip[i * 3 + 0] = scale(40, level);
            strip[i * 3 + 1] = 0;
            strip[i * 3 + 2] = scale(48, level);
        }
        return;
    }
    uint8_t levels[MAX_COLOURS];
    current_levels(now, levels);
    for (uint16_t i = 0; i < LED_COUNT; i++) {
        uint8_t *out = &strip[i * 3];
        if (i >= shown_leds) {
            out[0] = out[1] = out[2] = 0;
            continue;
        }
        uint8_t c = (uint8_t)((indices[i / 2] >> ((i & 1) ? 4 : 0)) & 0x0F);
        if (c >= colour_count) {
            out[0] = out[1] = out[2] = 0;
            continue;
        }
        out[0] = scale(palette[c][1], levels[c]);
        out[1] = scale(palette[c][0], levels[c]);
        out[2] = scale(palette[c][2], levels[c]);
    }
}

/* ---- host messages ---- */
/* Checks the palette part shared by both frame encodings; returns the LED count's offset. */
static uint16_t palette_end(const uint8_t *payload, uint16_t len)
{
    if (len < 3) {
        return 0;
    }
    uint8_t colours = payload[0];
    uint16_t end = (uint16_t)(1 + colours * 4);
    if (colours > MAX_COLOURS || len < end + 2u) {
        return 0;
    }
    return end;
}

static void store_palette(const uint8_t *payload, uint16_t leds)
{
    colour_count = payload[0];
    memcpy(palette, payload + 1, (size_t)colour_count * 4);
    shown_leds = leds;
    idle = 0;
    dirty = 1;
}

/* FRAME: palette, LED count, one 4-bit index per LED. */
static uint8_t apply_frame(const uint8_t *payload, uint16_t len)
{
    uint16_t end = palette_end(payload, len);
    if (!end) {
        return 0;
    }
    uint16_t leds = (uint16_t)((payload[end] << 8) | payload[end + 1]);
    if (leds > LED_COUNT || len != end + 2u + (leds + 1u) / 2u) {
        return 0;
    }
    store_palette(payload, leds);
    memset(indices, 0, sizeof(indices));
    memcpy(indices, payload + end + 2, (leds + 1) / 2);
    return 1;
}

/* FRAME_RUNS: palette, LED count, then (count, index) pairs that add up to the LED count. */
static uint8_t apply_frame_runs(const uint8_t *payload, uint16_t len)
{
    uint16_t end = palette_end(payload, len);
    if (!end) {
        return 0;
    }
    uint16_t leds = (uint16_t)((payload[end] << 8) | payload[end + 1]);
    const uint8_t *runs = payload + end + 2;
    uint16_t run_bytes = (uint16_t)(len - end - 2);
    if (leds > LED_COUNT || run_bytes % 2) {
        return 0;
    }
    uint16_t total = 0;
    for (uint16_t r = 0; r < run_bytes; r += 2) {
        if (runs[r] == 0 || runs[r + 1] > 0x0F) {
            return 0;
        }
        total = (uint16_t)(total + runs[r]);
    }
    if (total != leds) {
        return 0;
    }
    store_palette(payload, leds);
    memset(indices, 0, sizeof(indices));
    uint16_t led = 0;
    for (uint16_t r = 0; r < run_bytes; r += 2) {
        for (uint8_t n = 0; n < runs[r]; n++, led++) {
            indices[led / 2] |= (uint8_t)(runs[r + 1] << ((led & 1) ? 4 : 0));
        }
    }
    return 1;
}

static void reply_readback(uint8_t seq)
{
    /* mode, then the stored frame in the FRAME payload format; built in rx_frame (free now) */
    uint8_t *out = rx_frame;
    uint16_t n = 0;
    out[n++] = idle;
    out[n++] = colour_count;
    memcpy(out + n, palette, (size_t)colour_count * 4);
    n = (uint16_t)(n + colour_count * 4);
    out[n++] = (uint8_t)(shown_leds >> 8);
    out[n++] = (uint8_t)shown_leds;
    memcpy(out + n, indices, (shown_leds + 1) / 2);
    n = (uint16_t)(n + (shown_leds + 1) / 2);
    send_message(MSG_READBACK_REPLY, seq, out, n);
}

static void reply_stats(uint8_t seq, uint8_t was_idle)
{
    uint8_t *out = rx_frame;
    const uint16_t *counters = (const uint16_t *)&stats;
    uint8_t count = sizeof(stats) / sizeof(uint16_t);
    stats.rx_overruns = rx_overruns;
    out[0] = was_idle;
    for (uint8_t i = 0; i < count; i++) {
        out[1 + i * 2] = (uint8_t)(counters[i] >> 8);
        out[2 + i * 2] = (uint8_t)counters[i];
    }
    send_message(MSG_STATS_REPLY, seq, out, (uint16_t)(1 + count * 2));
}

static void reply_render(uint8_t seq)
{
    render(millis());
    send_message(MSG_RENDER_REPLY, seq, strip, (uint16_t)sizeof(strip));
}

static void handle_frame(uint8_t *buf, uint16_t len)
{
    int16_t decoded = cobs_decode_in_place(buf, len);
    if (decoded < 4) {
        stats.framing_errors++;
        send_nak(0, NAK_BAD_FRAMING);
        return;
    }
    uint16_t n = (uint16_t)decoded;
    uint16_t crc = (uint16_t)((buf[n - 2] << 8) | buf[n - 1]);
    if (crc16_ccitt_false(buf, (uint16_t)(n - 2)) != crc) {
        stats.crc_errors++;
        send_nak(0, NAK_BAD_CRC);
        return;
    }
    uint8_t type = buf[0];
    uint8_t seq = buf[1];
    uint8_t *payload = buf + 2;
    uint16_t payload_len = (uint16_t)(n - 4);
    uint32_t now = millis();
    uint8_t was_idle = idle;
    last_host_ms = now;
    stats.frames_ok++;

    switch (type) {
    case MSG_HELLO: {
        have_host_seq = 0;
        uint8_t reply[8] = {'P', 'D', PROTOCOL_VERSION, FIRMWARE_VERSION_MAJOR,
                            FIRMWARE_VERSION_MINOR, FIRMWARE_VERSION_PATCH,
                            (uint8_t)(LED_COUNT >> 8), (uint8_t)LED_COUNT};
        send_message(MSG_HELLO_REPLY, seq, reply, sizeof(reply));
        button_sent = 0; /* a new host: resend any pending button event at once */
        return;
    }
    case MSG_FRAME:
    case MSG_FRAME_RUNS: {
        if (have_host_seq && seq == last_host_seq) {
            stats.duplicates++;
        } else if (have_host_seq && (int8_t)(seq - last_host_seq) < 0) {
            stats.stale++; /* an older state arriving late: acknowledged, not shown */
            send_message(MSG_ACK, seq, 0, 0);
            return;
        }
        uint8_t ok = type == MSG_FRAME ? apply_frame(payload, payload_len)
                                       : apply_frame_runs(payload, payload_len);
        if (!ok) {
            stats.bad_payloads++;
            send_nak(seq, NAK_BAD_PAYLOAD);
            return;
        }
        have_host_seq = 1;
        last_host_seq = seq;
        send_message(MSG_ACK, seq, 0, 0);
        return;
    }
    case MSG_HEARTBEAT:
        send_message(MSG_ACK, seq, 0, 0);
        return;
    case MSG_READBACK:
        reply_readback(seq);
        return;
    case MSG_STATS:
        reply_stats(seq, was_idle);
        return;
    case MSG_RENDER:
        reply_render(seq);
        return;
    case MSG_BUTTON_ACK:
        if (button_pending && button_queue[0].seq == seq) {
            memmove(&button_queue[0], &button_queue[1],
                    sizeof(button_queue[0]) * (BUTTON_QUEUE - 1));
            button_pending--;
            button_sent = 0;
        }
        return;
    default:
        stats.unknown_types++;
        send_nak(seq, NAK_UNKNOWN_TYPE);
        return;
    }
}

static void poll_uart(void)
{
    while (rx_tail != rx_head) {
        uint8_t byte = rx_ring[rx_tail];
        rx_tail = (uint8_t)((rx_tail + 1) & (RX_RING - 1));
        if (byte == 0) {
            if (rx_discarding) {
                rx_discarding = 0;
            } else if (rx_len > 0) {
                handle_frame(rx_frame, rx_len);
            }
            rx_len = 0;
        } else if (rx_discarding) {
            continue;
        } else if (rx_len >= sizeof(rx_frame)) {
            stats.framing_errors++; /* too long: drop up to the next delimiter */
            rx_discarding = 1;
            rx_len = 0;
        } else {
            rx_frame[rx_len++] = byte;
        }
    }
}

/* ---- button ---- */
static uint8_t button_stable = 1; /* 1 = released (pull-up) */
static uint8_t button_last_sample = 1;
static uint32_t button_changed_ms;
static uint32_t button_down_ms;

static void queue_button(uint8_t kind, uint16_t duration)
{
    if (button_pending == BUTTON_QUEUE) {
        return; /* the host is not acknowledging; keep the oldest events */
    }
    button_queue[button_pending].seq = button_seq++;
    button_queue[button_pending].kind = kind;
    button_queue[button_pending].duration_ms = duration;
    button_pending++;
    stats.button_events++;
}

static void poll_button(uint32_t now)
{
    uint8_t sample = (PIND >> BUTTON_PIN_BIT) & 1u;
    if (sample != button_last_sample) {
        button_last_sample = sample;
        button_changed_ms = now;
    } else if (sample != button_stable && now - button_changed_ms >= BUTTON_DEBOUNCE_MS) {
        button_stable = sample;
        if (sample == 0) {
            button_down_ms = now;
        } else {
            uint32_t held = now - button_down_ms;
            queue_button(held >= BUTTON_LONG_MS ? BUTTON_LONG : BUTTON_SHORT,
                         held > 0xFFFF ? 0xFFFF : (uint16_t)held);
        }
    }
    if (button_pending && (!button_sent || now - button_sent_ms >= BUTTON_RESEND_MS)) {
        if (button_sent) {
            stats.button_resends++;
        }
        uint8_t payload[3] = {button_queue[0].kind, (uint8_t)(button_queue[0].duration_ms >> 8),
                              (uint8_t)button_queue[0].duration_ms};
        send_message(MSG_BUTTON, button_queue[0].seq, payload, sizeof(payload));
        button_sent = 1;
        button_sent_ms = now;
    }
}

int main(void)
{
    DDRD &= (uint8_t)~(1u << BUTTON_PIN_BIT);
    PORTD |= (uint8_t)(1u << BUTTON_PIN_BIT);
    ws2812_init();
    uart_init();
    /* Timer0: CTC, /64, 250 counts = 1 ms */
    TCCR0A = (uint8_t)(1u << WGM01);
    TCCR0B = (uint8_t)((1u << CS01) | (1u << CS00));
    OCR0A = 249;
    TIMSK0 = (uint8_t)(1u << OCIE0A);
    set_sleep_mode(SLEEP_MODE_IDLE);
    sei();

    uint32_t last_render = 0;
    uint8_t pushed_levels[MAX_COLOURS] = {0};
    uint16_t pushed_count = LED_COUNT;
    uint32_t last_tick = 0;
    for (;;) {
        poll_uart();
        uint32_t now = millis();
        if (now == last_tick) {
            /* sleep until the next byte or timer tick; sei+sleep cannot miss an interrupt */
            cli();
            if (rx_tail == rx_head) {
                sleep_enable();
                sei();
                sleep_cpu();
                sleep_disable();
            }
            sei();
            continue;
        }
        last_tick = now;
        poll_button(now);
        if (!idle && now - last_host_ms > IDLE_TIMEOUT_MS) {
            /* the host went quiet: forget its state rather than show stale flags */
            idle = 1;
            colour_count = 0;
            shown_leds = 0;
            have_host_seq = 0;
            stats.idle_fallbacks++;
            dirty = 1;
        }
        /* Refresh the strip at most every RENDER_INTERVAL_MS, only when something visible
         * changed, and never while a frame is coming in: the push holds the main loop for
         * 30 us per LED, and the host is waiting for that frame's ACK. */
        if (now - last_render >= RENDER_INTERVAL_MS && rx_len == 0 && rx_tail == rx_head) {
            uint8_t levels[MAX_COLOURS];
            current_levels(now, levels);
            if (dirty || idle || memcmp(levels, pushed_levels, colour_count) != 0) {
                last_render = now;
                memcpy(pushed_levels, levels, sizeof(levels));
                render(now);
                /* LEDs past the frame are dark; send them only if they may still be lit */
                uint16_t count = idle ? LED_COUNT : shown_leds;
                ws2812_send(strip, count > pushed_count ? count : pushed_count);
                pushed_count = count;
                dirty = 0;
            }
        }
    }
}
