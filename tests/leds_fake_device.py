"""A fake LED controller on a pseudo-terminal, for unit tests of the host side.

It speaks the real framing and answers like the firmware, and can be told to misbehave:
lose packets, NAK them, answer twice, send a stale answer first, or put garbage on the line.
The real firmware is tested in simavr (test_firmware_sim.py); this fake only lets the host's
state machine meet faults on demand.
"""

from __future__ import annotations

import os
import select
import threading
import time
import tty
from pathlib import Path

from firmware_bridge.framing import (
    FrameSplitter,
    FramingError,
    Packet,
    decode_packet,
    encode_packet,
)
from firmware_bridge.protocol import LedFrame, MsgType, decode_frame, decode_frame_runs


class FakeDevice:
    def __init__(self, link: Path | None = None, magic: bytes = b"PD", protocol: int = 1) -> None:
        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)
        self.pty = os.ttyname(self.slave)
        self.link = link
        if link is not None:
            if link.is_symlink():
                link.unlink()
            link.symlink_to(self.pty)
        self.magic = magic
        self.protocol = protocol
        self.received: list[Packet] = []
        self.frames: list[LedFrame] = []
        self.button_acks: list[int] = []
        self.drop_next = 0
        self.nak_next = 0
        self.answer_twice = False
        self.stale_answer_first = False
        self.garbage_first = b""
        self._button_seq = 0
        self._pending_button: Packet | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return str(self.link) if self.link is not None else self.pty

    def _write(self, data: bytes) -> None:
        try:
            os.write(self.master, data)
        except OSError:
            pass

    def _answer(self, packet: Packet) -> Packet | None:
        if packet.type == MsgType.HELLO:
            info = self.magic + bytes((self.protocol, 1, 0, 0, 0, 23))
            return Packet(MsgType.HELLO_REPLY, packet.seq, info)
        if packet.type in (MsgType.FRAME, MsgType.FRAME_RUNS):
            decode = decode_frame if packet.type == MsgType.FRAME else decode_frame_runs
            self.frames.append(decode(packet.payload))
            return Packet(MsgType.ACK, packet.seq)
        if packet.type == MsgType.HEARTBEAT:
            return Packet(MsgType.ACK, packet.seq)
        if packet.type == MsgType.BUTTON_ACK:
            self.button_acks.append(packet.seq)
            with self._lock:
                if self._pending_button is not None and self._pending_button.seq == packet.seq:
                    self._pending_button = None
            return None
        return Packet(MsgType.NAK, packet.seq, b"\x03")

    def _handle(self, packet: Packet) -> None:
        self.received.append(packet)
        if self.drop_next > 0:
            self.drop_next -= 1
            return
        if self.nak_next > 0:
            self.nak_next -= 1
            self._write(encode_packet(Packet(MsgType.NAK, 0, b"\x01")))
            return
        answer = self._answer(packet)
        if answer is None:
            return
        out = self.garbage_first
        if self.stale_answer_first:
            out += encode_packet(Packet(answer.type, (answer.seq - 1) & 0xFF, answer.payload))
        out += encode_packet(answer)
        if self.answer_twice:
            out += encode_packet(answer)
        self._write(out)

    def _run(self) -> None:
        splitter = FrameSplitter()
        last_button = 0.0
        while not self._stop.is_set():
            ready, _, _ = select.select([self.master], [], [], 0.02)
            if ready:
                try:
                    data = os.read(self.master, 4096)
                except OSError:
                    data = b""
                for chunk in splitter.feed(data):
                    try:
                        self._handle(decode_packet(chunk))
                    except (FramingError, ValueError):
                        continue  # a damaged packet is dropped, as the firmware drops it
            with self._lock:
                pending = self._pending_button
            if pending is not None and time.monotonic() - last_button > 0.05:
                self._write(encode_packet(pending))
                last_button = time.monotonic()

    def press(self, kind: int = 1, duration_ms: int = 120) -> None:
        """A button event, resent every 50 ms until the host acknowledges it."""
        payload = bytes((kind,)) + duration_ms.to_bytes(2, "big")
        with self._lock:
            self._pending_button = Packet(MsgType.BUTTON, self._button_seq, payload)
            self._button_seq = (self._button_seq + 1) & 0xFF

    def send_raw(self, data: bytes) -> None:
        self._write(data)

    def unplug(self) -> None:
        """Like pulling the cable: the host's reads fail from now on."""
        self._stop.set()
        self._thread.join(2)
        for fd in (self.master, self.slave):
            try:
                os.close(fd)
            except OSError:
                pass
        if self.link is not None and self.link.is_symlink():
            self.link.unlink()
