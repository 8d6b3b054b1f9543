"""Framing of the LED protocol: CRC-16/CCITT-FALSE, COBS, packets, stream splitting."""

from __future__ import annotations

import pytest
import serial
from hypothesis import given
from hypothesis import strategies as st

from firmware_bridge.framing import (
    CobsError,
    CrcError,
    FrameSplitter,
    Packet,
    TruncatedError,
    cobs_decode,
    cobs_encode,
    crc16_ccitt_false,
    decode_packet,
    encode_packet,
)


@pytest.mark.parametrize(
    ("data", "crc"),
    [(b"123456789", 0x29B1), (b"", 0xFFFF), (b"\x00", 0xE1F0), (b"A", 0xB915)],
)
def test_crc_matches_the_ccitt_false_catalogue(data: bytes, crc: int) -> None:
    assert crc16_ccitt_false(data) == crc


@pytest.mark.parametrize(
    ("raw", "encoded"),
    [
        (b"", b"\x01"),
        (b"\x00", b"\x01\x01"),
        (b"\x00\x00", b"\x01\x01\x01"),
        (b"\x11\x22\x00\x33", b"\x03\x11\x22\x02\x33"),
        (b"\x11\x22\x33\x44", b"\x05\x11\x22\x33\x44"),
        (b"\x11\x00\x00\x00", b"\x02\x11\x01\x01\x01"),
        (bytes(range(1, 255)), b"\xff" + bytes(range(1, 255))),
        (bytes(range(1, 256)), b"\xff" + bytes(range(1, 255)) + b"\x02\xff"),
        (bytes(range(0, 255)), b"\x01\xff" + bytes(range(1, 255))),
    ],
)
def test_cobs_matches_known_encodings(raw: bytes, encoded: bytes) -> None:
    assert cobs_encode(raw) == encoded
    assert cobs_decode(encoded) == raw


@given(st.binary(max_size=1200))
def test_cobs_round_trips_and_never_emits_a_zero(data: bytes) -> None:
    encoded = cobs_encode(data)
    assert 0 not in encoded
    assert len(encoded) <= len(data) + 1 + len(data) // 254
    assert cobs_decode(encoded) == data


@pytest.mark.parametrize("bad", [b"\x00", b"\x05\x11\x22", b"\x03\x11\x00"])
def test_cobs_rejects_what_it_could_not_have_made(bad: bytes) -> None:
    with pytest.raises(CobsError):
        cobs_decode(bad)


@given(st.integers(0, 255), st.integers(0, 255), st.binary(max_size=400))
def test_packets_round_trip(type_: int, seq: int, payload: bytes) -> None:
    wire = encode_packet(Packet(type_, seq, payload))
    assert wire.endswith(b"\x00") and 0 not in wire[:-1]
    assert decode_packet(wire[:-1]) == Packet(type_, seq, payload)


@given(st.binary(min_size=1, max_size=60), st.data())
def test_any_single_bit_flip_is_caught(payload: bytes, data: st.DataObject) -> None:
    body = cobs_decode(encode_packet(Packet(2, 9, payload))[:-1])
    bit = data.draw(st.integers(0, len(body) * 8 - 1))
    corrupted = bytearray(body)
    corrupted[bit // 8] ^= 1 << (bit % 8)
    with pytest.raises(CrcError):
        decode_packet(cobs_encode(bytes(corrupted)))


def test_a_truncated_packet_is_rejected() -> None:
    with pytest.raises(TruncatedError):
        decode_packet(cobs_encode(b"\x01\x02\x03"))


def test_splitter_resynchronises_after_garbage_and_drops_overlong_frames() -> None:
    good = encode_packet(Packet(0x80, 1))
    splitter = FrameSplitter(max_length=16)
    stream = b"\xff\xfe\x00" + good + b"\x07" * 40 + b"\x00" + good[:3] + b"\x00" + good
    frames = list(splitter.feed(stream))
    assert splitter.overlong == 1
    decoded = []
    for frame in frames:
        try:
            decoded.append(decode_packet(frame))
        except ValueError:
            pass
    assert decoded == [Packet(0x80, 1), Packet(0x80, 1)]


@given(st.lists(st.binary(max_size=50), max_size=8), st.data())
def test_splitter_finds_every_packet_however_the_stream_is_chunked(
    payloads: list[bytes], data: st.DataObject
) -> None:
    packets = [Packet(0x90, i, p) for i, p in enumerate(payloads)]
    stream = b"".join(encode_packet(p) for p in packets)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=6)))
    splitter = FrameSplitter()
    found = []
    for start, end in zip([0, *cuts], [*cuts, len(stream)], strict=True):
        found += [decode_packet(f) for f in splitter.feed(stream[start:end])]
    assert found == packets


def test_packets_survive_a_trip_through_pyserial_loop() -> None:
    port = serial.serial_for_url("loop://", timeout=0.2)
    packets = [Packet(2, n, bytes([n]) * n) for n in range(5)]
    port.write(b"\x13\x37\x00" + b"".join(encode_packet(p) for p in packets))
    splitter = FrameSplitter()
    found = []
    while data := port.read(256):
        for frame in splitter.feed(data):
            try:
                found.append(decode_packet(frame))
            except ValueError:
                pass
    port.close()
    assert found == packets
