"""A synchronous client of the LED controller over one open serial port.

`Controller(port)` runs a `serial.threaded.ReaderThread` that cuts the byte stream into
packets, answers and queues button events (dropping repeats of one it already has), and
hands every other reply to the caller waiting for it. Requests are numbered, resent after
`timeout` or at once on a NAK, and give up with `ControllerTimeout` after `attempts` tries.

One thread at a time may make requests (the `LedBridge` worker, a test, or a command).
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable

import serial
import serial.threaded

from firmware_bridge.framing import (
    FrameSplitter,
    FramingError,
    Packet,
    decode_packet,
    encode_packet,
)
from firmware_bridge.protocol import (
    PROTOCOL_VERSION,
    ButtonEvent,
    Hello,
    LedFrame,
    MsgType,
    PayloadError,
    Readback,
    Stats,
    decode_button,
    decode_hello,
    decode_readback,
    decode_stats,
    frame_message,
)

log = logging.getLogger(__name__)

#: Host frames are answered within a few milliseconds; this leaves room for a slow USB hop.
DEFAULT_TIMEOUT = 0.1
DEFAULT_ATTEMPTS = 4


class ControllerError(Exception):
    """The controller could not be talked to."""


class ControllerTimeout(ControllerError):
    """No answer after every attempt."""


class ControllerLost(ControllerError):
    """The port went away (cable pulled, emulator stopped)."""


class NotAController(ControllerError):
    """Something answered, but not our firmware (or an incompatible protocol version)."""


class _PacketReader(serial.threaded.Protocol):
    """Runs in the reader thread: bytes -> packets -> the controller."""

    def __init__(self, controller: Controller) -> None:
        self._controller = controller
        self._splitter = FrameSplitter()

    def data_received(self, data: bytes) -> None:
        for chunk in self._splitter.feed(data):
            try:
                packet = decode_packet(chunk)
            except FramingError:
                self._controller.dropped += 1
                continue
            self._controller._packet_received(packet)

    def connection_lost(self, exc: BaseException | None) -> None:
        self._controller._lost.set()


class _ReaderThread(serial.threaded.ReaderThread):
    """pyserial's reader thread, also ending on an `OSError` from the port. A pty whose
    other end closed (an emulator stopped) and some USB-serial drivers when the cable is
    pulled raise EIO from `in_waiting`, which pyserial's loop does not catch: the thread
    died with it and the controller never heard that the port was gone."""

    def run(self) -> None:
        try:
            super().run()
        except OSError as exc:
            self.alive = False
            if self.protocol is not None:
                self.protocol.connection_lost(exc)


class Controller:
    """Requests to one LED controller; see the module docstring."""

    def __init__(
        self,
        port: serial.Serial,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        attempts: int = DEFAULT_ATTEMPTS,
        on_button: Callable[[ButtonEvent], None] | None = None,
    ) -> None:
        self.timeout = timeout
        self.attempts = attempts
        self.on_button = on_button
        #: Button events, each once, in the order pressed.
        self.buttons: queue.Queue[ButtonEvent] = queue.Queue()
        #: Packets from the controller that failed COBS or CRC checks.
        self.dropped = 0
        #: Requests sent again after a timeout or a NAK.
        self.resends = 0
        self._replies: queue.Queue[Packet] = queue.Queue()
        self._lost = threading.Event()
        self._seq = 0
        #: What the controller said in the last HELLO.
        self.info: Hello | None = None
        self._last_button_seq: int | None = None
        self._port = port
        self._reader = _ReaderThread(port, lambda: _PacketReader(self))
        self._reader.start()
        self._reader.connect()

    # -- reader thread side --

    def _packet_received(self, packet: Packet) -> None:
        if packet.type == MsgType.BUTTON:
            self._button_received(packet)
        else:
            self._replies.put(packet)

    def _button_received(self, packet: Packet) -> None:
        self._send(Packet(MsgType.BUTTON_ACK, packet.seq))
        if packet.seq == self._last_button_seq:
            return  # a resend of one we have: our ACK was lost
        try:
            event = decode_button(packet.seq, packet.payload)
        except PayloadError:
            self.dropped += 1
            return
        self._last_button_seq = packet.seq
        self.buttons.put(event)
        if self.on_button is not None:
            try:
                self.on_button(event)
            except Exception:  # the caller's bug must not stop the reader
                log.exception("button callback failed")

    # -- caller side --

    @property
    def connected(self) -> bool:
        return not self._lost.is_set()

    def _send(self, packet: Packet) -> None:
        try:
            self._reader.write(encode_packet(packet))
        except (serial.SerialException, OSError) as exc:
            self._lost.set()
            raise ControllerLost(f"write failed: {exc}") from exc

    def request(self, type: MsgType, payload: bytes = b"", reply: MsgType = MsgType.ACK) -> Packet:
        """Sends one packet and returns the reply of type `reply` with the same sequence
        number, resending on timeout or NAK."""
        self._seq = (self._seq + 1) & 0xFF
        packet = Packet(type, self._seq, payload)
        for attempt in range(self.attempts):
            if self._lost.is_set():
                raise ControllerLost("the serial port is gone")
            if attempt:
                self.resends += 1
            self._send(packet)
            deadline = time.monotonic() + self.timeout
            while (left := deadline - time.monotonic()) > 0:
                try:
                    answer = self._replies.get(timeout=left)
                except queue.Empty:
                    break
                if answer.type == reply and answer.seq == packet.seq:
                    return answer
                if answer.type == MsgType.NAK:
                    break  # dropped on the way in: resend now
                # anything else is a late answer to an earlier try: ignore it
        if self._lost.is_set():
            raise ControllerLost("the serial port is gone")
        raise ControllerTimeout(f"no {reply.name} to {type.name} after {self.attempts} tries")

    def hello(self, boot_wait: float = 0.0, cancel: threading.Event | None = None) -> Hello:
        """Greets the controller; raises `NotAController` unless our firmware answers.
        Keeps asking for `boot_wait` seconds (or until `cancel` is set): opening a real
        Arduino's port resets it, and its bootloader holds the firmware back a second or two."""
        deadline = time.monotonic() + boot_wait
        while True:
            try:
                answer = self.request(MsgType.HELLO, reply=MsgType.HELLO_REPLY)
                break
            except ControllerTimeout:
                if time.monotonic() >= deadline or (cancel is not None and cancel.is_set()):
                    raise
        try:
            hello = decode_hello(answer.payload)
        except PayloadError as exc:
            raise NotAController(str(exc)) from exc
        if hello.protocol_version != PROTOCOL_VERSION:
            raise NotAController(
                f"controller speaks protocol {hello.protocol_version}, this host {PROTOCOL_VERSION}"
            )
        self._last_button_seq = None
        self.info = hello
        return hello

    def show(self, frame: LedFrame) -> None:
        """Sends the whole LED state (in the shorter encoding) and waits for its ACK."""
        self.request(*frame_message(frame))

    def heartbeat(self) -> None:
        self.request(MsgType.HEARTBEAT)

    def readback(self) -> Readback:
        answer = self.request(MsgType.READBACK, reply=MsgType.READBACK_REPLY)
        return decode_readback(answer.payload)

    def stats(self) -> Stats:
        return decode_stats(self.request(MsgType.STATS, reply=MsgType.STATS_REPLY).payload)

    def render(self) -> bytes:
        """The strip buffer as the firmware renders it right now (G, R, B per LED)."""
        return self.request(MsgType.RENDER, reply=MsgType.RENDER_REPLY).payload

    def write_raw(self, data: bytes) -> None:
        """Bytes straight onto the wire (tests use it for garbage)."""
        self._reader.write(data)

    def close(self) -> None:
        """Stops the reader thread and closes the port; safe to call twice."""
        self._reader.stop()
        try:
            self._port.close()
        except (serial.SerialException, OSError):
            pass

    def __enter__(self) -> Controller:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def open_controller(
    url: str,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    attempts: int = DEFAULT_ATTEMPTS,
    boot_wait: float = 3.0,
    on_button: Callable[[ButtonEvent], None] | None = None,
    cancel: threading.Event | None = None,
) -> Controller:
    """Opens the port at `url` (any pyserial URL) at 115200 baud and says HELLO (the answer
    is in `controller.info`)."""
    try:
        port = serial.serial_for_url(url, baudrate=115200, timeout=1)
        port.reset_input_buffer()
    except (serial.SerialException, OSError, ValueError) as exc:
        raise ControllerLost(f"cannot open {url}: {exc}") from exc
    controller = Controller(port, timeout=timeout, attempts=attempts, on_button=on_button)
    try:
        controller.hello(boot_wait, cancel)
    except ControllerError:
        controller.close()
        raise
    return controller
