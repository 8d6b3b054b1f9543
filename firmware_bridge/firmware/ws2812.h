/* WS2812B driver: bit-banged on one pin at 16 MHz (800 kHz, GRB byte order). */
#ifndef PONTE_WS2812_H
#define PONTE_WS2812_H

#include <stdint.h>

#define WS2812_DDR DDRD
#define WS2812_PORT PORTD
#define WS2812_BIT 6 /* Arduino pin D6 */

void ws2812_init(void);
/* Sends `count` LEDs of 3 bytes (G, R, B) each; interrupts are held off for one LED at a time. */
void ws2812_send(const uint8_t *grb, uint16_t count);

#endif
