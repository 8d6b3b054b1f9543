"""Byte-level framing of the LED serial protocol: CRC-16, COBS and packets.

Pure functions, `bytes -> bytes`. A packet on the wire is::

    COBS( type:u8 | seq:u8 | payload | crc:u16 big-endian ) 0x00

where the CRC is CRC-16/CCITT-FALSE (polynomial 0x1021, initial value 0xFFFF, no
reflection, no final XOR) over type, seq and payload. The zero byte only ever appears as
the delimiter, so a receiver that lost its place resynchronises at the next zero.

>>> hex(crc16_ccitt_false(b"123456789"))
'0x29b1'
>>> cobs_encode(b"\\x11\\x00\\x22")
b'\\x02\\x11\\x02"'
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

#: The frame delimiter.
DELIMITER = b"\x00"


class FramingError(ValueError):
    """Bytes between two delimiters that are not a valid packet."""


class CobsError(FramingError):
    """Not valid COBS (a zero inside, or a block that runs past the end)."""


class CrcError(FramingError):
    """The packet decoded but its CRC does not match: corrupted on the way."""


class TruncatedError(FramingError):
    """Too short to hold a type, a sequence number and a CRC."""


def _crc_table() -> tuple[int, ...]:
    table = []
    for byte in range(256):
        crc = byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
        table.append(crc & 0xFFFF)
    return tuple(table)


_CRC_TABLE = _crc_table()


def crc16_ccitt_false(data: bytes) -> int:
    """CRC-16/CCITT-FALSE of `data` (check value for b"123456789" is 0x29B1)."""
    crc = 0xFFFF
    for byte in data:
        crc = ((crc << 8) & 0xFFFF) ^ _CRC_TABLE[(crc >> 8) ^ byte]
    return crc


def cobs_encode(data: bytes) -> bytes:
    """Consistent Overhead Byte Stuffing: `data` without any zero byte, one byte longer
    per 254 bytes (the delimiter is not added)."""
    out = bytearray()
    start = 0
    total = len(data)
    while True:
        end = start
        while end < total and end - start < 254 and data[end] != 0:
            end += 1
        out.append(end - start + 1)
        out += data[start:end]
        if end == total:
            return bytes(out)
        start = end if end - start == 254 else end + 1


def cobs_decode(data: bytes) -> bytes:
    """Inverse of `cobs_encode`; raises `CobsError` on bytes it could not have made."""
    out = bytearray()
    index = 0
    total = len(data)
    while index < total:
        code = data[index]
        index += 1
        if code == 0:
            raise CobsError("zero byte inside a COBS block")
        block = data[index : index + code - 1]
        if len(block) != code - 1 or 0 in block:
            raise CobsError("COBS block runs past the end of the frame")
        out += block
        index += code - 1
        if code != 0xFF and index < total:
            out.append(0)
    return bytes(out)


@dataclass(frozen=True)
class Packet:
    """One message: its type, its sequence number and its payload."""

    type: int
    seq: int
    payload: bytes = b""

    def __post_init__(self) -> None:
        if not 0 <= self.type <= 0xFF or not 0 <= self.seq <= 0xFF:
            raise ValueError(f"type and seq must be bytes, got {self.type}, {self.seq}")


def encode_packet(packet: Packet) -> bytes:
    """The packet as it goes on the wire, delimiter included."""
    body = bytes((packet.type, packet.seq)) + packet.payload
    body += crc16_ccitt_false(body).to_bytes(2, "big")
    return cobs_encode(body) + DELIMITER


def decode_packet(frame: bytes) -> Packet:
    """A packet from the bytes between two delimiters (delimiter excluded)."""
    body = cobs_decode(frame)
    if len(body) < 4:
        raise TruncatedError(f"frame of {len(body)} bytes is too short")
    if crc16_ccitt_false(body[:-2]) != int.from_bytes(body[-2:], "big"):
        raise CrcError("CRC mismatch")
    return Packet(body[0], body[1], body[2:-2])


class FrameSplitter:
    """Cuts a byte stream into frames at delimiters; frames longer than `max_length` are
    dropped whole (counted in `overlong`), and reading resumes after the next delimiter."""

    def __init__(self, max_length: int = 2048) -> None:
        self.max_length = max_length
        self.overlong = 0
        self._buffer = bytearray()
        self._discarding = False

    def feed(self, data: bytes) -> Iterator[bytes]:
        """Yields each complete, non-empty frame found so far (without its delimiter)."""
        for byte in data:
            if byte == 0:
                if not self._discarding and self._buffer:
                    yield bytes(self._buffer)
                self._buffer.clear()
                self._discarding = False
            elif self._discarding:
                continue
            elif len(self._buffer) >= self.max_length:
                self.overlong += 1
                self._buffer.clear()
                self._discarding = True
            else:
                self._buffer.append(byte)
