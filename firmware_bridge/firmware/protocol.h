/* Wire protocol shared by the firmware's parts; README.md in this folder is the reference. */
#ifndef PONTE_PROTOCOL_H
#define PONTE_PROTOCOL_H

#include <stdint.h>

#define PROTOCOL_VERSION 1
#define FIRMWARE_VERSION_MAJOR 1
#define FIRMWARE_VERSION_MINOR 0
#define FIRMWARE_VERSION_PATCH 0

/* Host -> controller. */
#define MSG_HELLO 0x01
#define MSG_FRAME 0x02
#define MSG_HEARTBEAT 0x03
#define MSG_READBACK 0x04
#define MSG_STATS 0x05
#define MSG_RENDER 0x06
#define MSG_FRAME_RUNS 0x07
#define MSG_BUTTON_ACK 0x10

/* Controller -> host. */
#define MSG_ACK 0x80
#define MSG_NAK 0x81
#define MSG_HELLO_REPLY 0x82
#define MSG_READBACK_REPLY 0x83
#define MSG_STATS_REPLY 0x84
#define MSG_RENDER_REPLY 0x85
#define MSG_BUTTON 0x90

/* NAK reasons. */
#define NAK_BAD_CRC 1
#define NAK_BAD_FRAMING 2
#define NAK_UNKNOWN_TYPE 3
#define NAK_BAD_PAYLOAD 4

/* Palette effects. */
#define EFFECT_STEADY 0
#define EFFECT_BLINK 1
#define EFFECT_SLOW_BLINK 2
#define EFFECT_BREATHE 3

#define MAX_COLOURS 16

/* Button event kinds. */
#define BUTTON_SHORT 1
#define BUTTON_LONG 2

/* CRC-16/CCITT-FALSE: start from 0xFFFF and feed bytes with crc16_update, or do it at once. */
uint16_t crc16_update(uint16_t crc, uint8_t byte);
uint16_t crc16_ccitt_false(const uint8_t *data, uint16_t len);
/* Decodes COBS in place; returns the decoded length, or -1 if the data is not valid COBS. */
int16_t cobs_decode_in_place(uint8_t *buf, uint16_t len);

#endif
