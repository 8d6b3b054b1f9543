"""The real firmware, built with avr-gcc, running in simavr behind a pty (hardware in the
loop without the hardware). Needs gcc-avr, avr-libc, simavr and libsimavr-dev, which
scripts/test installs."""

from __future__ import annotations

import os
import queue
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import serial

from firmware_bridge.bridge import LedBridge, find_controller
from firmware_bridge.controller import Controller, open_controller
from firmware_bridge.framing import (
    FrameSplitter,
    Packet,
    cobs_decode,
    cobs_encode,
    decode_packet,
    encode_packet,
)
from firmware_bridge.protocol import (
    ButtonKind,
    Colour,
    Effect,
    LedFrame,
    MsgType,
    NakReason,
    encode_frame,
    encode_frame_runs,
    render_expected,
)
from firmware_bridge.sim import Build, Emulator, build
from firmware_bridge.view import LedView, Status, Turn, load_layout, render_view
from tests.waiting import wait_until

pytestmark = pytest.mark.firmware

LED_COUNT = 150
STEADY = LedFrame.from_colours(
    [Colour(255, 150, 60), Colour(0, 0, 0), Colour(255, 50, 0), Colour(9, 8, 7)] * 5
)


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory) -> Build:
    return build(tmp_path_factory.mktemp("firmware"))


@pytest.fixture
def emulator(built: Build) -> Iterator[Emulator]:
    with Emulator(built).start() as emu:
        yield emu


@pytest.fixture
def controller(emulator: Emulator) -> Iterator[Controller]:
    ctl = open_controller(emulator.url)
    yield ctl
    ctl.close()


def test_hello_gives_protocol_firmware_version_and_led_count(controller: Controller) -> None:
    assert controller.info is not None
    assert controller.info.protocol_version == 1
    assert controller.info.firmware_version == (1, 0, 0)
    assert controller.info.led_count == LED_COUNT


def test_a_frame_is_stored_rendered_and_driven_onto_the_strip_pin(
    controller: Controller, emulator: Emulator
) -> None:
    controller.show(STEADY)
    readback = controller.readback()
    assert not readback.idle and readback.frame == STEADY
    expected = render_expected(STEADY, LED_COUNT)
    assert controller.render() == expected
    # the WS2812 bits decoded from the emulated data pin; the first push after the idle
    # pattern covers every LED, so that none stays lit past the frame
    assert wait_until(lambda: emulator.strip() == expected, 2.0)


def test_a_long_reply_without_zeros_crosses_cobs_block_boundaries(controller: Controller) -> None:
    bright = LedFrame.from_colours([Colour(200, 100, 50), Colour(7, 9, 11)] * (LED_COUNT // 2))
    controller.show(bright)
    rendered = controller.render()  # 450 bytes, none zero: COBS needs full 254-byte blocks
    assert 0 not in rendered and rendered == render_expected(bright, LED_COUNT)


def test_a_flag_blinks_on_the_strip(controller: Controller, emulator: Emulator) -> None:
    view = LedView(Turn.DARK, frozenset({(4, 4)}), Status.FLAGGED)
    frame = render_view(view, load_layout("edges"))
    controller.show(frame)
    flagged_led = 4  # file 'e' on the edges layout
    seen = set()

    def both_seen() -> bool:
        strip = emulator.strip()
        dark_turn_led = strip[3 * 21 : 3 * 21 + 3]
        if dark_turn_led == bytes((50, 255, 0)):  # the frame is on the strip (not idle yet)
            seen.add(strip[3 * flagged_led : 3 * flagged_led + 3])
        return len(seen) >= 2

    wait_until(both_seen, 1.5, interval=0.03)
    assert seen == {bytes((0, 255, 160)), bytes(3)}  # magenta (G, R, B) and dark


@pytest.mark.parametrize(("hold_ms", "kind"), [(120, ButtonKind.SHORT), (900, ButtonKind.LONG)])
def test_a_button_press_on_the_pin_arrives_as_one_event(
    controller: Controller, emulator: Emulator, hold_ms: int, kind: ButtonKind
) -> None:
    emulator.press(hold_ms)
    event = controller.buttons.get(timeout=3)
    assert event.kind is kind
    assert abs(event.duration_ms - hold_ms) <= 25  # the 20 ms debounce
    with pytest.raises(queue.Empty):  # and no second event comes
        controller.buttons.get(timeout=0.4)
    assert controller.stats().counters["button_events"] == 1


def test_a_switch_bounce_is_debounced(controller: Controller, emulator: Emulator) -> None:
    for _ in range(3):
        emulator.press(3)
        time.sleep(0.005)  # the contacts bounce, a few milliseconds apart
    with pytest.raises(queue.Empty):
        controller.buttons.get(timeout=0.3)


def read_packets(port: serial.SerialBase, seconds: float) -> list[Packet]:
    splitter = FrameSplitter()
    packets = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for frame in splitter.feed(port.read(256)):
            packets.append(decode_packet(frame))
    return packets


def test_a_button_event_is_resent_until_the_host_acknowledges_it(emulator: Emulator) -> None:
    port = serial.serial_for_url(emulator.url, baudrate=115200, timeout=0.05)
    try:
        emulator.press(100)
        sent = [p for p in read_packets(port, 0.8) if p.type == MsgType.BUTTON]
        assert len(sent) >= 3 and {p.seq for p in sent} == {0}
        port.write(encode_packet(Packet(MsgType.BUTTON_ACK, 0)))
        read_packets(port, 0.2)
        assert [p for p in read_packets(port, 0.5) if p.type == MsgType.BUTTON] == []
    finally:
        port.close()


def test_garbage_truncation_and_bad_crcs_are_dropped_counted_and_survived(
    controller: Controller,
) -> None:
    good = encode_packet(Packet(MsgType.FRAME, 200, encode_frame(STEADY)))
    body = bytearray(cobs_decode(good[:-1]))
    body[5] ^= 0x01
    corrupted = cobs_encode(bytes(body)) + b"\x00"
    controller.write_raw(os.urandom(40).replace(b"\x00", b"\x01") + b"\x00")
    controller.write_raw(good[: len(good) // 2] + b"\x00")  # truncated
    controller.write_raw(bytes(corrupted))
    controller.write_raw(b"\x07" * 400 + b"\x00")  # longer than any frame
    assert wait_until(lambda: sum(controller.stats().counters[k] for k in (
        "crc_errors", "framing_errors")) >= 4, 2)
    controller.show(STEADY)
    assert controller.readback().frame == STEADY
    counters = controller.stats().counters
    assert counters["crc_errors"] >= 1  # the flipped bit
    assert counters["crc_errors"] + counters["framing_errors"] >= 4
    assert counters["bad_payloads"] == 0


def test_run_length_frames_are_stored_like_packed_ones(controller: Controller) -> None:
    sparse = LedFrame.from_colours([Colour(0, 0, 0)] * 97 + [Colour(255, 0, 160, Effect.BLINK)] * 6)
    controller.request(MsgType.FRAME_RUNS, encode_frame_runs(sparse))
    assert controller.readback().frame == sparse


@pytest.mark.parametrize(
    "runs",
    [b"\x02\x00", b"\x03\x00\x00\x00", b"\x03", b"\x03\x10"],
    ids=["short", "zero", "odd", "index"],
)
def test_bad_run_length_frames_are_refused_and_counted(controller: Controller, runs: bytes) -> None:
    controller.show(STEADY)
    head = encode_frame_runs(LedFrame((Colour(1, 1, 1),), (0, 0, 0)))[:-2]
    answer = controller.request(MsgType.FRAME_RUNS, head + runs, reply=MsgType.NAK)
    assert answer.payload == bytes([NakReason.BAD_PAYLOAD])
    assert controller.readback().frame == STEADY
    assert controller.stats().counters["bad_payloads"] == 1


def test_repeated_and_late_frames_are_harmless(controller: Controller) -> None:
    other = LedFrame.from_colours([Colour(1, 2, 3, Effect.STEADY)] * 3)
    for seq, frame in ((50, STEADY), (50, STEADY), (49, other)):
        controller.write_raw(encode_packet(Packet(MsgType.FRAME, seq, encode_frame(frame))))
    # the firmware answers in order: the readback comes after the three frames are handled
    assert controller.readback().frame == STEADY
    counters = controller.stats().counters
    assert counters["duplicates"] == 1 and counters["stale"] == 1


def test_idle_pattern_replaces_stale_state_when_the_host_goes_quiet(
    controller: Controller, emulator: Emulator
) -> None:
    controller.show(STEADY)
    assert not controller.stats().idle
    time.sleep(3.4)  # the firmware's IDLE_TIMEOUT_MS is 3000
    stats = controller.stats()
    assert stats.idle and stats.counters["idle_fallbacks"] == 1
    readback = controller.readback()
    assert readback.idle and readback.frame.indices == ()
    strip = emulator.strip()
    assert len(strip) == 3 * LED_COUNT and any(strip)
    assert strip[0:3] == strip[3:6] == strip[-3:]  # one calm colour everywhere
    assert strip[1] == 0  # no red in it: nothing that looks like a player or a flag


def test_the_bridge_reconnects_after_the_emulator_restarts(built: Build, tmp_path: Path) -> None:
    link = tmp_path / "ttyLEDS"
    first = Emulator(built, link).start()
    bridge = LedBridge(str(link), "edges", retry_delay=0.1)
    try:
        bridge.show(LedView(Turn.LIGHT, status=Status.PLAYING))
        assert bridge.wait_shown(5)
        first.stop()
        assert wait_until(lambda: not bridge.connected, 5)
        view = LedView(Turn.DARK, frozenset({(9, 0)}), Status.FLAGGED)
        bridge.show(view)
        with Emulator(built, link).start():
            assert bridge.wait_shown(10)
            assert bridge.connections == 2
            bridge.close()
            with open_controller(str(link)) as ctl:
                assert ctl.readback().frame == render_view(view, bridge.layout)
    finally:
        bridge.close()
        first.stop()


def test_find_controller_picks_the_emulated_controller(emulator: Emulator, tmp_path: Path) -> None:
    assert find_controller([str(tmp_path / "none"), emulator.url], boot_wait=0.2) == emulator.url
