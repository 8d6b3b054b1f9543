/*
 * WS2812B bit-bang driver for a 16 MHz AVR.
 *
 * One bit is 20 cycles (1.25 us): the line goes high at cycle 0 and low at cycle 5 for a 0
 * (0.31 us high) or at cycle 12 for a 1 (0.75 us high). Interrupts are disabled for one LED
 * (24 bits, 30 us) at a time and enabled between LEDs, so the UART receive interrupt can run;
 * the few microseconds of extra low time between LEDs is far below the strip's latch time.
 */
#include <avr/interrupt.h>
#include <avr/io.h>

#include "ws2812.h"

void ws2812_init(void)
{
    WS2812_DDR |= (uint8_t)(1u << WS2812_BIT);
    WS2812_PORT &= (uint8_t)~(1u << WS2812_BIT);
}

static inline void send_byte(uint8_t byte, uint8_t hi, uint8_t lo)
{
    uint8_t count;
    __asm__ volatile(
        "ldi  %[count], 8        \n\t"
        "1:                      \n\t"
        "out  %[port], %[hi]     \n\t" /* 0: rising edge */
        "lsl  %[byte]            \n\t" /* 1: carry = next bit */
        "nop                     \n\t" /* 2 */
        "nop                     \n\t" /* 3 */
        "brcs 2f                 \n\t" /* 4 (5 when taken) */
        "out  %[port], %[lo]     \n\t" /* 5: a 0 ends here */
        "nop                     \n\t" /* 6 */
        "nop                     \n\t" /* 7 */
        "nop                     \n\t" /* 8 */
        "nop                     \n\t" /* 9 */
        "nop                     \n\t" /* 10 */
        "nop                     \n\t" /* 11 */
        "rjmp 3f                 \n\t" /* 12, 13 */
        "2:                      \n\t"
        "nop                     \n\t" /* 6 */
        "nop                     \n\t" /* 7 */
        "nop                     \n\t" /* 8 */
        "nop                     \n\t" /* 9 */
        "nop                     \n\t" /* 10 */
        "nop                     \n\t" /* 11 */
        "out  %[port], %[lo]     \n\t" /* 12: a 1 ends here */
        "nop                     \n\t" /* 13 */
        "3:                      \n\t"
        "nop                     \n\t" /* 14 */
        "nop                     \n\t" /* 15 */
        "nop                     \n\t" /* 16 */
        "dec  %[count]           \n\t" /* 17 */
        "brne 1b                 \n\t" /* 18, 19 */
        : [count] "=&d"(count), [byte] "+r"(byte)
        : [port] "I"(_SFR_IO_ADDR(WS2812_PORT)), [hi] "r"(hi), [lo] "r"(lo));
}

void ws2812_send(const uint8_t *grb, uint16_t count)
{
    for (uint16_t i = 0; i < count; i++) {
        uint8_t sreg = SREG;
        cli();
        uint8_t hi = (uint8_t)(WS2812_PORT | (1u << WS2812_BIT));
        uint8_t lo = (uint8_t)(WS2812_PORT & ~(1u << WS2812_BIT));
        send_byte(grb[0], hi, lo);
        send_byte(grb[1], hi, lo);
        send_byte(grb[2], hi, lo);
        SREG = sreg;
        grb += 3;
    }
}
