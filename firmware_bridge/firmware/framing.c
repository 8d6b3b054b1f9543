/* CRC-16/CCITT-FALSE and COBS decoding: the pure parts of the wire protocol. */
#include "protocol.h"

uint16_t crc16_update(uint16_t crc, uint8_t byte)
{
    crc ^= (uint16_t)byte << 8;
    for (uint8_t bit = 0; bit < 8; bit++) {
        crc = (crc & 0x8000) ? (uint16_t)((crc << 1) ^ 0x1021) : (uint16_t)(crc << 1);
    }
    return crc;
}

uint16_t crc16_ccitt_false(const uint8_t *data, uint16_t len)
{
    uint16_t crc = 0xFFFF;
    while (len--) {
        crc = crc16_update(crc, *data++);
    }
    return crc;
}

int16_t cobs_decode_in_place(uint8_t *buf, uint16_t len)
{
    uint16_t read = 0;
    uint16_t write = 0;
    while (read < len) {
        uint8_t code = buf[read++];
        if (code == 0) {
            return -1;
        }
        for (uint8_t i = 1; i < code; i++) {
            if (read >= len || buf[read] == 0) {
                return -1;
            }
            buf[write++] = buf[read++];
        }
        if (code != 0xFF && read < len) {
            buf[write++] = 0;
        }
    }
    return (int16_t)write;
}
