"""The host's protocol state machine (Controller, LedBridge, find_controller) against a fake
controller on a pty and against pyserial's loop://; faults on demand."""

from __future__ import annotations

import queue
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest
import serial
import serial.tools.list_ports

from firmware_bridge.bridge import LedBridge, find_controller
from firmware_bridge.controller import (
    Controller,
    ControllerLost,
    ControllerTimeout,
    NotAController,
    open_controller,
)
from firmware_bridge.framing import Packet, encode_packet
from firmware_bridge.protocol import ButtonEvent, ButtonKind, MsgType
from firmware_bridge.view import LedView, Status, Turn, load_layout, render_view
from tests.leds_fake_device import FakeDevice
from tests.waiting import wait_until

VIEW = LedView(Turn.LIGHT, frozenset({(2, 5)}), Status.FLAGGED)
FRAME = render_view(VIEW, load_layout("edges"))


@pytest.fixture
def device() -> Iterator[FakeDevice]:
    fake = FakeDevice()
    yield fake
    fake.unplug()


@pytest.fixture
def controller(device: FakeDevice) -> Iterator[Controller]:
    ctl = open_controller(device.url, timeout=0.1)
    yield ctl
    ctl.close()


def test_hello_reads_versions_and_led_count(controller: Controller) -> None:
    assert controller.info is not None
    assert controller.info.firmware_version == (1, 0, 0) and controller.info.led_count == 23


def test_a_frame_is_sent_whole_and_acknowledged(controller: Controller, device: FakeDevice) -> None:
    controller.show(FRAME)
    assert device.frames == [FRAME]


def test_a_lost_frame_is_resent_after_the_timeout(
    controller: Controller, device: FakeDevice
) -> None:
    device.drop_next = 2
    controller.show(FRAME)
    assert controller.resends == 2 and len(device.frames) == 1


def test_a_nak_makes_the_host_resend_at_once(controller: Controller, device: FakeDevice) -> None:
    device.nak_next = 1
    started = time.monotonic()
    controller.show(FRAME)
    assert controller.resends == 1
    assert time.monotonic() - started < controller.timeout


def test_duplicate_stale_and_garbled_answers_are_ignored(
    controller: Controller, device: FakeDevice
) -> None:
    device.answer_twice = True
    device.stale_answer_first = True
    device.garbage_first = b"\x42\x99\x00\x03\x80\x00"  # junk, then a frame with a bad CRC
    for _ in range(3):
        controller.show(FRAME)
    controller.heartbeat()
    assert controller.resends == 0
    assert controller.dropped >= 4


def test_no_answer_at_all_gives_up_with_a_timeout(
    controller: Controller, device: FakeDevice
) -> None:
    device.drop_next = 100
    with pytest.raises(ControllerTimeout):
        controller.show(FRAME)


def test_something_else_answering_is_not_taken_for_a_controller() -> None:
    fake = FakeDevice(magic=b"XX")
    try:
        with pytest.raises(NotAController):
            open_controller(fake.url, timeout=0.05, boot_wait=0)
    finally:
        fake.unplug()


def test_an_old_protocol_version_is_refused() -> None:
    fake = FakeDevice(protocol=9)
    try:
        with pytest.raises(NotAController, match="protocol 9"):
            open_controller(fake.url, timeout=0.05, boot_wait=0)
    finally:
        fake.unplug()


def test_button_events_arrive_once_though_resent(
    controller: Controller, device: FakeDevice
) -> None:
    device.press(kind=2, duration_ms=900)
    event = controller.buttons.get(timeout=2)
    assert event == ButtonEvent(0, ButtonKind.LONG, 900)
    device.send_raw(encode_packet(Packet(MsgType.BUTTON, 0, b"\x02\x03\x84")))  # a late resend
    device.press()
    assert controller.buttons.get(timeout=2).seq == 1
    assert controller.buttons.empty()
    assert wait_until(lambda: 1 in device.button_acks, 2)
    assert set(device.button_acks) == {0, 1}


def test_pulling_the_cable_is_noticed(controller: Controller, device: FakeDevice) -> None:
    device.unplug()

    def lost() -> bool:
        try:
            controller.heartbeat()
        except ControllerLost:
            return True
        return False

    assert wait_until(lost, 3, interval=0.02)


def test_an_io_error_from_the_port_is_noticed_and_ends_the_reader_quietly() -> None:
    """A pty whose other end closed (the emulator stopped) raises EIO from `in_waiting`,
    which pyserial's reader loop does not catch: it killed the thread and the controller
    never heard that the port was gone."""
    from serial.urlhandler.protocol_loop import Serial as LoopSerial

    class Failing(LoopSerial):
        broken = False

        @property
        def in_waiting(self) -> int:
            if self.broken:
                raise OSError(5, "Input/output error")
            return int(super().in_waiting)

    port = Failing("loop://", timeout=0.05)
    controller = Controller(port)
    try:
        assert controller.connected
        port.broken = True
        assert wait_until(lambda: not controller.connected, 3)
        with pytest.raises(ControllerLost):
            controller.heartbeat()
    finally:
        controller.close()


def test_an_unopenable_url_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ControllerLost, match="cannot open"):
        open_controller(str(tmp_path / "no-such-port"))


def test_button_packets_through_loop_are_deduplicated_and_acknowledged() -> None:
    port = serial.serial_for_url("loop://", timeout=1)
    controller = Controller(port)
    try:
        press = encode_packet(Packet(MsgType.BUTTON, 7, b"\x01\x00\x64"))
        controller.write_raw(b"\x01\x02garbage\x00" + press + press[:4] + b"\x00" + press)
        assert controller.buttons.get(timeout=2) == ButtonEvent(7, ButtonKind.SHORT, 100)
        with pytest.raises(queue.Empty):  # the copies after it are not passed on
            controller.buttons.get(timeout=0.1)
        assert controller.dropped == 2  # the garbage and the truncated copy
    finally:
        controller.close()


def test_find_controller_skips_ports_that_are_not_ours(device: FakeDevice, tmp_path: Path) -> None:
    stranger = FakeDevice(magic=b"??")
    try:
        candidates = [str(tmp_path / "gone"), "loop://", stranger.url, device.url]
        assert find_controller(candidates, boot_wait=0) == device.url
        assert find_controller(candidates[:3], boot_wait=0) is None
    finally:
        stranger.unplug()


def test_bridge_shows_the_newest_view_and_reconnects_after_unplugging(tmp_path: Path) -> None:
    link = tmp_path / "ttyLEDS"
    first = FakeDevice(link)
    pressed: list[ButtonEvent] = []
    bridge = LedBridge(str(link), "edges", on_button=pressed.append, retry_delay=0.05)
    try:
        bridge.show(LedView(Turn.DARK, status=Status.PLAYING))
        bridge.show(VIEW)
        assert bridge.wait_shown(3)
        assert first.frames[-1] == FRAME
        first.press()
        assert wait_until(lambda: bool(pressed), 2)
        assert [e.kind for e in pressed] == [ButtonKind.SHORT]
        assert bridge.buttons.get_nowait().kind is ButtonKind.SHORT

        first.unplug()
        bridge.show(LedView(status=Status.VOID))  # must not block or raise while unplugged
        assert wait_until(lambda: not bridge.connected, 3)
        second = FakeDevice(link)
        try:
            assert bridge.wait_shown(5)
            assert bridge.connections == 2
            void = render_view(LedView(status=Status.VOID), bridge.layout)
            assert second.frames[-1] == void
        finally:
            second.unplug()
    finally:
        bridge.close()


def test_bridge_keeps_the_controller_alive_with_resends(device: FakeDevice) -> None:
    bridge = LedBridge(device.url, "edges", keepalive=0.05)
    try:
        bridge.show(VIEW)
        assert bridge.wait_shown(3)
        assert wait_until(lambda: len(device.frames) >= 4, 3)  # resent every 0.05 s
        assert set(device.frames) == {FRAME}
    finally:
        bridge.close()


def test_bridge_on_auto_finds_the_controller_by_its_hello(
    device: FakeDevice, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stranger = FakeDevice(magic=b"??")
    ports = [SimpleNamespace(device=str(tmp_path / "gone")), SimpleNamespace(device=stranger.url)]
    ports.append(SimpleNamespace(device=device.url))
    monkeypatch.setattr(serial.tools.list_ports, "comports", lambda: ports)
    bridge = LedBridge("auto", "edges", boot_wait=0)
    try:
        bridge.show(VIEW)
        assert bridge.wait_shown(5)
        assert device.frames == [FRAME]
    finally:
        bridge.close()
        stranger.unplug()


def test_bridge_never_raises_for_a_port_that_does_not_exist(tmp_path: Path) -> None:
    bridge = LedBridge(str(tmp_path / "nothing"), "matrix", retry_delay=0.05)
    try:
        bridge.show(VIEW)
        assert not bridge.wait_shown(0.3)
        assert "cannot open" in bridge.last_error
    finally:
        bridge.close()


def test_show_returns_at_once_while_the_controller_never_answers() -> None:
    mute = FakeDevice()
    mute.drop_next = 10**6
    bridge = LedBridge(mute.url, "edges", boot_wait=3.0)
    try:
        started = time.monotonic()
        for rank in range(10):
            bridge.show(LedView(Turn.LIGHT, frozenset({(0, rank)}), Status.FLAGGED))
        assert time.monotonic() - started < 0.5  # one HELLO attempt alone waits 0.1 s
        assert not bridge.connected
    finally:
        started = time.monotonic()
        bridge.close()
        assert time.monotonic() - started < 1.0  # the HELLO's boot wait is cut short
        mute.unplug()


def test_a_failing_button_callback_does_not_stop_later_events(
    controller: Controller, device: FakeDevice, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(event: ButtonEvent) -> None:
        raise RuntimeError("bug in the caller")

    controller.on_button = broken
    device.press()
    assert controller.buttons.get(timeout=2).seq == 0
    device.press()
    assert controller.buttons.get(timeout=2).seq == 1
    assert controller.connected
    assert "button callback failed" in caplog.text
