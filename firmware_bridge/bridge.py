"""`LedBridge`: the live loop's handle on the LEDs. Never blocks, never raises.

    bridge = LedBridge("/dev/ttyUSB0", "edges", on_button=print)
    bridge.show(LedView(turn=Turn.DARK, status=Status.PLAYING))
    ...
    bridge.close()

`url` may be "auto": the worker then looks for the controller among the system's serial
ports by its HELLO (`find_controller`) each time it (re)connects.

`show()` only stores the newest view; a background thread owns the port: it opens it by URL,
says HELLO, sends the newest whole state whenever it changes and again every `keepalive`
seconds (so the firmware does not fall back to its idle pattern), and when the port fails
(cable pulled, controller reset) closes it and tries again every `retry_delay` seconds. A
state that was not acknowledged is simply sent again: frames are idempotent. Button events
go to `on_button` (called in a background thread; keep it short) and to the `buttons` queue.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Iterable

import serial.tools.list_ports

from firmware_bridge.controller import Controller, ControllerError, open_controller
from firmware_bridge.protocol import ButtonEvent, Hello, LedFrame
from firmware_bridge.view import Layout, LedView, load_layout, render_view

log = logging.getLogger(__name__)


class LedBridge:
    """See the module docstring."""

    def __init__(
        self,
        url: str,
        layout: Layout | str = "edges",
        *,
        on_button: Callable[[ButtonEvent], None] | None = None,
        keepalive: float = 1.0,
        retry_delay: float = 0.5,
        boot_wait: float = 3.0,
    ) -> None:
        self.url = url
        self.layout = load_layout(layout) if isinstance(layout, str) else layout
        self.on_button = on_button
        self.keepalive = keepalive
        self.retry_delay = retry_delay
        self.boot_wait = boot_wait
        #: Button events, each once, in the order pressed.
        self.buttons: queue.Queue[ButtonEvent] = queue.Queue()
        #: What the controller said when last connected.
        self.info: Hello | None = None
        #: Times the port was opened and greeted successfully.
        self.connections = 0
        #: The last failure, for a status line.
        self.last_error = ""
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._connected = threading.Event()
        self._latest: LedFrame | None = None
        self._acked: LedFrame | None = None
        self._acked_changed = threading.Condition(self._lock)
        self._thread = threading.Thread(target=self._run, name="led-bridge", daemon=True)
        self._thread.start()

    # -- the caller's side: all quick, none raise --

    def show(self, view: LedView) -> None:
        """Makes `view` the state to show; returns at once."""
        try:
            frame = render_view(view, self.layout)
        except Exception:  # a view the layout cannot show must not reach the live loop
            log.exception("cannot render %r", view)
            return
        with self._lock:
            self._latest = frame
        self._wake.set()

    @property
    def connected(self) -> bool:
        return self._connected.is_set()

    def wait_shown(self, timeout: float) -> bool:
        """Waits until the controller has acknowledged the newest state."""
        deadline = time.monotonic() + timeout
        with self._acked_changed:
            while self._latest is None or self._acked != self._latest:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._acked_changed.wait(left)
            return True

    def close(self) -> None:
        """Stops the worker and closes the port (the firmware then falls back to idle)."""
        self._stop.set()
        self._wake.set()
        self._thread.join(5)

    def __enter__(self) -> LedBridge:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- the worker --

    def _button(self, event: ButtonEvent) -> None:
        self.buttons.put(event)
        if self.on_button is not None:
            try:
                self.on_button(event)
            except Exception:
                log.exception("button callback failed")

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                url = self.url
                if url == "auto":
                    url = find_controller(boot_wait=self.boot_wait) or ""
                    if not url:
                        raise ControllerError("no LED controller answered on any serial port")
                controller = open_controller(
                    url, boot_wait=self.boot_wait, on_button=self._button, cancel=self._stop
                )
            except ControllerError as exc:
                self._note_error(exc)
                self._stop.wait(self.retry_delay)
                continue
            except Exception as exc:  # an unexpected failure must not kill the worker
                log.exception("opening %s failed", self.url)
                self._note_error(exc)
                self._stop.wait(self.retry_delay)
                continue
            self.info = controller.info
            self.connections += 1
            self._connected.set()
            try:
                self._serve(controller)
            except ControllerError as exc:
                self._note_error(exc)
            except Exception as exc:
                log.exception("LED bridge worker failed")
                self._note_error(exc)
            finally:
                self._connected.clear()
                with self._lock:
                    self._acked = None
                controller.close()
            self._stop.wait(self.retry_delay)

    def _note_error(self, exc: Exception) -> None:
        if str(exc) != self.last_error:
            log.info("LED controller at %s: %s", self.url, exc)
        self.last_error = str(exc)

    def _serve(self, controller: Controller) -> None:
        sent: LedFrame | None = None
        last_sent = 0.0
        while not self._stop.is_set():
            if not controller.connected:
                raise ControllerError("the serial port is gone")
            with self._lock:
                frame = self._latest
            now = time.monotonic()
            due = now - last_sent >= self.keepalive
            if frame is not None and (frame != sent or due):
                controller.show(frame)
                sent, last_sent = frame, now
                with self._acked_changed:
                    self._acked = frame
                    self._acked_changed.notify_all()
            elif frame is None and due:
                controller.heartbeat()
                last_sent = now
            else:
                self._wake.wait(max(0.0, self.keepalive - (now - last_sent)))
                self._wake.clear()


def find_controller(candidates: Iterable[str] | None = None, boot_wait: float = 3.0) -> str | None:
    """The URL of the first port whose device answers HELLO as our firmware, trying
    `candidates` or else every serial port the system lists; None if there is none."""
    urls = (
        list(candidates)
        if candidates is not None
        else [port.device for port in serial.tools.list_ports.comports()]
    )
    for url in urls:
        try:
            controller = open_controller(url, attempts=2, boot_wait=boot_wait)
        except ControllerError:
            continue
        controller.close()
        return url
    return None
