"""Messages of the LED serial protocol and their payloads: pure values, `bytes <-> value`.

The reference for the wire format is `firmware/README.md`; `firmware/protocol.h` holds the
same numbers for the firmware.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from firmware_bridge.framing import FramingError

#: The protocol version this host speaks (HELLO reply byte 2).
PROTOCOL_VERSION = 1
#: The firmware's HELLO reply starts with these two bytes.
HELLO_MAGIC = b"PD"
#: At most this many palette entries in one LED frame.
MAX_COLOURS = 16


class PayloadError(FramingError):
    """A packet whose payload does not fit its type."""


class MsgType(enum.IntEnum):
    """The type byte of a packet."""

    HELLO = 0x01
    """Host asks who is there; answered by HELLO_REPLY. Resets the controller's sequence check."""
    FRAME = 0x02
    """Host sends the whole LED state (palette and one palette index per LED); ACKed."""
    HEARTBEAT = 0x03
    """Host is alive but has nothing new; ACKed."""
    READBACK = 0x04
    """Host asks for the stored LED state; answered by READBACK_REPLY."""
    STATS = 0x05
    """Host asks for the error counters; answered by STATS_REPLY."""
    RENDER = 0x06
    """Host asks for the strip buffer as rendered now (G, R, B per LED); RENDER_REPLY."""
    FRAME_RUNS = 0x07
    """Host sends the whole LED state run-length encoded (shorter when most LEDs are alike);
    ACKed like FRAME."""
    BUTTON_ACK = 0x10
    """Host acknowledges the button event with this sequence number; not answered."""
    ACK = 0x80
    """Controller accepted the host packet with this sequence number."""
    NAK = 0x81
    """Controller dropped a packet (payload: reason); the host resends at once."""
    HELLO_REPLY = 0x82
    """Magic b"PD", protocol version, firmware version (3 bytes), LED count (u16)."""
    READBACK_REPLY = 0x83
    """Mode byte (1 = idle pattern) followed by a FRAME payload."""
    STATS_REPLY = 0x84
    """Mode byte before this request, then u16 counters (see `Stats`)."""
    RENDER_REPLY = 0x85
    """The strip buffer, 3 bytes (G, R, B) per LED the firmware drives."""
    BUTTON = 0x90
    """A button press (kind, duration u16 ms), its own sequence number; resent until ACKed."""


class NakReason(enum.IntEnum):
    """Why the controller dropped a packet."""

    BAD_CRC = 1
    """The CRC did not match."""
    BAD_FRAMING = 2
    """Not valid COBS, too short, or too long."""
    UNKNOWN_TYPE = 3
    """A type byte the firmware does not know."""
    BAD_PAYLOAD = 4
    """The payload's length does not fit its type (or too many LEDs)."""


class Effect(enum.IntEnum):
    """How the firmware animates one palette colour, so colour is not the only signal."""

    STEADY = 0
    """Always on."""
    BLINK = 1
    """On 250 ms, off 250 ms."""
    SLOW_BLINK = 2
    """On 800 ms, off 800 ms."""
    BREATHE = 3
    """Fades between dim and full over 3 s."""


class ButtonKind(enum.IntEnum):
    """What the one button said."""

    SHORT = 1
    """A press shorter than 0.8 s: pass."""
    LONG = 2
    """A press of 0.8 s or more: confirm."""


@dataclass(frozen=True)
class Colour:
    """A palette entry: red, green, blue (0-255) and the firmware-side effect."""

    r: int
    g: int
    b: int
    effect: Effect = Effect.STEADY

    def __post_init__(self) -> None:
        if not all(0 <= c <= 255 for c in (self.r, self.g, self.b)):
            raise ValueError(f"colour components must be 0-255: {self}")


@dataclass(frozen=True)
class LedFrame:
    """The whole LED state: a palette and, for each LED, an index into it."""

    palette: tuple[Colour, ...]
    indices: tuple[int, ...]

    def __post_init__(self) -> None:
        if len(self.palette) > MAX_COLOURS:
            raise ValueError(f"at most {MAX_COLOURS} colours, got {len(self.palette)}")
        if any(not 0 <= i < max(len(self.palette), 1) for i in self.indices):
            raise ValueError("an LED index points outside the palette")

    @staticmethod
    def from_colours(colours: list[Colour]) -> LedFrame:
        """Builds the palette from one colour per LED."""
        palette: list[Colour] = []
        indices = []
        for colour in colours:
            if colour not in palette:
                palette.append(colour)
            indices.append(palette.index(colour))
        return LedFrame(tuple(palette), tuple(indices))

    def colours(self) -> list[Colour]:
        """One colour per LED."""
        return [self.palette[i] for i in self.indices]


def _encode_palette(frame: LedFrame) -> bytearray:
    """Colour count, (r, g, b, effect) for each, LED count (u16): both encodings start so."""
    out = bytearray([len(frame.palette)])
    for colour in frame.palette:
        out += bytes((colour.r, colour.g, colour.b, int(colour.effect)))
    return out + len(frame.indices).to_bytes(2, "big")


def encode_frame(frame: LedFrame) -> bytes:
    """The FRAME payload: colour count, (r, g, b, effect) each, LED count (u16), then one
    palette index per LED packed two to a byte, even LEDs in the low nibble."""
    out = _encode_palette(frame)
    packed = bytearray((len(frame.indices) + 1) // 2)
    for led, index in enumerate(frame.indices):
        packed[led // 2] |= index << (4 if led % 2 else 0)
    return bytes(out + packed)


def _decode_palette(payload: bytes) -> tuple[tuple[Colour, ...], int, int]:
    """The palette, the LED count and where the LED data starts, shared by both encodings."""
    if not payload:
        raise PayloadError("empty frame payload")
    count = payload[0]
    header = 1 + 4 * count + 2
    if count > MAX_COLOURS or len(payload) < header:
        raise PayloadError("frame payload too short for its palette")
    try:
        palette = tuple(
            Colour(r, g, b, Effect(effect))
            for r, g, b, effect in (payload[1 + 4 * i : 5 + 4 * i] for i in range(count))
        )
    except ValueError as exc:
        raise PayloadError(f"bad palette entry: {exc}") from exc
    return palette, int.from_bytes(payload[header - 2 : header], "big"), header


def _frame(palette: tuple[Colour, ...], indices: tuple[int, ...]) -> LedFrame:
    try:
        return LedFrame(palette, indices)
    except ValueError as exc:
        raise PayloadError(str(exc)) from exc


def decode_frame(payload: bytes) -> LedFrame:
    """Inverse of `encode_frame`."""
    palette, leds, header = _decode_palette(payload)
    if len(payload) != header + (leds + 1) // 2:
        raise PayloadError("frame payload length does not match its LED count")
    packed = payload[header:]
    return _frame(
        palette, tuple((packed[i // 2] >> (4 if i % 2 else 0)) & 0x0F for i in range(leds))
    )


def encode_frame_runs(frame: LedFrame) -> bytes:
    """The FRAME_RUNS payload: the palette and LED count as in FRAME, then (count, index)
    byte pairs, count 1-255, adding up to the LED count."""
    out = _encode_palette(frame)
    led = 0
    while led < len(frame.indices):
        index = frame.indices[led]
        run = 1
        while led + run < len(frame.indices) and frame.indices[led + run] == index and run < 255:
            run += 1
        out += bytes((run, index))
        led += run
    return bytes(out)


def decode_frame_runs(payload: bytes) -> LedFrame:
    """Inverse of `encode_frame_runs`."""
    palette, leds, header = _decode_palette(payload)
    if (len(payload) - header) % 2:
        raise PayloadError("run-length frame payload has an odd number of run bytes")
    indices: list[int] = []
    for at in range(header, len(payload), 2):
        count, index = payload[at], payload[at + 1]
        if count == 0:
            raise PayloadError("a run of zero LEDs")
        indices += [index] * count
    if len(indices) != leds:
        raise PayloadError(f"runs cover {len(indices)} LEDs, the frame has {leds}")
    return _frame(palette, tuple(indices))


def frame_message(frame: LedFrame) -> tuple[MsgType, bytes]:
    """The shorter of the two encodings of `frame`, with its message type."""
    packed = encode_frame(frame)
    runs = encode_frame_runs(frame)
    return (MsgType.FRAME_RUNS, runs) if len(runs) < len(packed) else (MsgType.FRAME, packed)


@dataclass(frozen=True)
class Hello:
    """What the controller says about itself."""

    protocol_version: int
    firmware_version: tuple[int, int, int]
    led_count: int


def decode_hello(payload: bytes) -> Hello:
    """The HELLO_REPLY payload; raises `PayloadError` if it is not our firmware."""
    if len(payload) != 8 or payload[:2] != HELLO_MAGIC:
        raise PayloadError(f"not a Ponte LED controller HELLO: {payload.hex()}")
    return Hello(
        payload[2], (payload[3], payload[4], payload[5]), int.from_bytes(payload[6:8], "big")
    )


#: Counter names of STATS_REPLY, in wire order.
STATS_FIELDS = (
    "frames_ok",
    "crc_errors",
    "framing_errors",
    "unknown_types",
    "bad_payloads",
    "duplicates",
    "stale",
    "idle_fallbacks",
    "button_events",
    "button_resends",
    "rx_overruns",
)


@dataclass(frozen=True)
class Stats:
    """The controller's counters; `idle` is whether it showed the idle pattern just before
    the STATS request arrived (the request itself counts as the host being alive)."""

    idle: bool
    counters: dict[str, int]


def decode_stats(payload: bytes) -> Stats:
    if len(payload) != 1 + 2 * len(STATS_FIELDS):
        raise PayloadError(f"STATS reply of {len(payload)} bytes")
    values = [
        int.from_bytes(payload[1 + 2 * i : 3 + 2 * i], "big") for i in range(len(STATS_FIELDS))
    ]
    return Stats(bool(payload[0]), dict(zip(STATS_FIELDS, values, strict=True)))


@dataclass(frozen=True)
class Readback:
    """The controller's stored LED state; `idle` when it shows the idle pattern instead."""

    idle: bool
    frame: LedFrame


def decode_readback(payload: bytes) -> Readback:
    if not payload:
        raise PayloadError("empty READBACK reply")
    return Readback(bool(payload[0]), decode_frame(payload[1:]))


@dataclass(frozen=True)
class ButtonEvent:
    """A button press reported by the controller."""

    seq: int
    kind: ButtonKind
    duration_ms: int


def decode_button(seq: int, payload: bytes) -> ButtonEvent:
    if len(payload) != 3:
        raise PayloadError(f"BUTTON payload of {len(payload)} bytes")
    try:
        kind = ButtonKind(payload[0])
    except ValueError as exc:
        raise PayloadError(f"unknown button kind {payload[0]}") from exc
    return ButtonEvent(seq, kind, int.from_bytes(payload[1:3], "big"))


def render_expected(frame: LedFrame, led_count: int) -> bytes:
    """The strip buffer the firmware renders for `frame` when every colour is at full level
    (steady colours, or blinking ones in their on phase): G, R, B per LED, unused LEDs dark.
    The firmware scales by (level + 1) / 256, which at full level is exact."""
    out = bytearray(3 * led_count)
    for led, colour in enumerate(frame.colours()[:led_count]):
        out[3 * led : 3 * led + 3] = bytes((colour.g, colour.r, colour.b))
    return bytes(out)
