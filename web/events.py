"""Streams: the live events as server-sent events, and the camera as MJPEG.

Each event-stream client holds one bounded `Subscription` of the live loop's bus; the bus
drops a client that falls behind (its stream then ends and the browser reconnects with
Last-Event-ID). Comments every SSE_HEARTBEAT seconds keep proxies from closing an idle
stream. Each stream holds a slot (a server thread): a client address may hold only a few,
and a stream whose client closed or reset its connection ends within STREAM_POLL seconds,
its slot freed; shutting the server down ends every stream.
"""

from __future__ import annotations

import select
import socket
import time
from collections.abc import Callable, Iterator

from flask import Blueprint, Response, current_app, jsonify, request

from contracts.live import EventBus
from web.context import Slot, StreamRefused, Streams, live_api, streams

bp = Blueprint("events", __name__)

BOUNDARY = "ponteframe"


def parse_last_event_id(value: str | None) -> int | None:
    """The Last-Event-ID header as an event id, or None if absent or not a number."""
    if value is None:
        return None
    value = value.strip()
    if not value.isdigit() or len(value) > 18:
        return None
    return int(value)


def _open_slot() -> Slot | Response:
    """A stream slot for this client, or the answer refusing it (429 for a client holding
    its share, 503 when every slot is taken)."""
    try:
        return streams(current_app).open(request.remote_addr or "?")
    except StreamRefused as exc:
        response = jsonify(error=str(exc))
        response.status_code = exc.status
        response.headers["Retry-After"] = str(exc.retry_after)
        return response


def _client_gone_check() -> Callable[[], bool]:
    """A cheap check that this request's client has gone: it closed or reset the
    connection. (The server sets werkzeug.socket; without it the check says no.)"""
    sock: socket.socket | None = request.environ.get("werkzeug.socket")
    if sock is None or not hasattr(select, "poll"):
        return lambda: False
    _keep_alive(sock)
    poller = select.poll()
    poller.register(sock, select.POLLIN | select.POLLPRI)

    def gone() -> bool:
        try:
            ready = poller.poll(0)
            if not ready:
                return False
            if ready[0][1] & (select.POLLHUP | select.POLLERR | select.POLLNVAL):
                return True
            return sock.recv(1, socket.MSG_PEEK) == b""  # readable and empty: closed
        except (OSError, ValueError):
            return True

    return gone


def _keep_alive(sock: socket.socket) -> None:
    """Let the system notice a client that vanished without closing (a phone out of
    range) within about ten seconds: keep-alive probes, and a cap on unacknowledged data."""
    options = (("TCP_KEEPIDLE", 5), ("TCP_KEEPINTVL", 2), ("TCP_KEEPCNT", 3),
               ("TCP_USER_TIMEOUT", 10_000))
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
        for name, value in options:
            if hasattr(socket, name):
                sock.setsockopt(socket.IPPROTO_TCP, getattr(socket, name), value)
    except OSError:
        pass


@bp.get("/events")
def events() -> Response:
    slot = _open_slot()
    if isinstance(slot, Response):
        return slot
    last_id = parse_last_event_id(
        request.headers.get("Last-Event-ID") or request.args.get("lastEventId")
    )
    registry = streams(current_app)
    bus = live_api(current_app).bus
    timing = _Timing(float(current_app.config["SSE_HEARTBEAT"]),
                     float(current_app.config["STREAM_POLL"]),
                     int(current_app.config["SSE_RETRY_MS"]))
    response = Response(
        _event_stream(bus, last_id, registry, slot, _client_gone_check(), timing),
        mimetype="text/event-stream",
    )
    response.call_on_close(slot.release)
    response.headers["Cache-Control"] = "no-cache"
    response.headers["X-Accel-Buffering"] = "no"
    return response


class _Timing:
    """An event stream's clock: heartbeat and client checks (seconds), browser retry (ms)."""

    def __init__(self, heartbeat: float, poll: float, retry_ms: int) -> None:
        self.heartbeat = heartbeat
        self.poll = max(0.01, poll)
        self.retry_ms = retry_ms


def _event_stream(
    bus: EventBus, last_id: int | None, registry: Streams, slot: Slot,
    gone: Callable[[], bool], timing: _Timing,
) -> Iterator[str]:
    """The stream of one client; its subscription exists only while the stream runs."""
    subscription = bus.subscribe(last_id)
    registry.add(subscription.close)
    if registry.closing.is_set():  # the server began shutting down meanwhile
        subscription.close()
    try:
        yield f"retry: {timing.retry_ms}\n: connected\n\n"
        quiet_since = time.monotonic()
        while True:  # closing the subscription (client dropped, shutdown) ends it, drained
            left = timing.heartbeat - (time.monotonic() - quiet_since)
            event = subscription.get(timeout=max(0.0, min(timing.poll, left)))
            if event is not None:
                yield event.to_sse()
                quiet_since = time.monotonic()
            elif subscription.closed:
                if subscription.dropped:
                    yield "event: dropped\ndata: {}\n\n"
                return
            elif gone():
                return
            elif time.monotonic() - quiet_since >= timing.heartbeat:
                yield ": heartbeat\n\n"
                quiet_since = time.monotonic()
    finally:
        registry.discard(subscription.close)
        subscription.close()
        slot.release()


_placeholder: bytes | None = None


def placeholder_jpeg() -> bytes:
    """A grey picture saying there is no camera picture (made once with OpenCV)."""
    global _placeholder
    if _placeholder is None:
        import cv2
        import numpy as np

        img = np.full((360, 640, 3), 60, np.uint8)
        cv2.rectangle(img, (20, 20), (620, 340), (110, 110, 110), 3)
        cv2.line(img, (20, 20), (620, 340), (90, 90, 90), 2)
        cv2.line(img, (620, 20), (20, 340), (90, 90, 90), 2)
        font = cv2.FONT_HERSHEY_SIMPLEX
        cv2.rectangle(img, (110, 140), (530, 220), (60, 60, 60), -1)
        cv2.putText(img, "NO CAMERA PICTURE", (128, 195), font, 1.3, (240, 240, 240), 3,
                    cv2.LINE_AA)
        ok, data = cv2.imencode(".jpg", img)
        _placeholder = bytes(data.tobytes()) if ok else b""
    return _placeholder


@bp.get("/camera.jpg")
def camera_jpeg() -> Response:
    """The latest camera picture (or the placeholder, with status 503)."""
    jpeg = live_api(current_app).camera_jpeg()
    response = Response(jpeg or placeholder_jpeg(), mimetype="image/jpeg")
    response.status_code = 200 if jpeg else 503
    response.headers["Cache-Control"] = "no-store"
    return response


@bp.get("/camera.mjpg")
def camera_mjpeg() -> Response:
    """The camera as a multipart MJPEG stream at most CAMERA_FPS pictures a second; the
    placeholder while there is no picture."""
    slot = _open_slot()
    if isinstance(slot, Response):
        return slot
    api = live_api(current_app)
    registry = streams(current_app)
    interval = 1.0 / max(0.5, float(current_app.config["CAMERA_FPS"]))
    poll = max(0.01, float(current_app.config["STREAM_POLL"]))
    gone = _client_gone_check()

    def frames() -> Iterator[bytes]:
        stop = registry.closing
        closed: list[bool] = []

        def close() -> None:
            closed.append(True)

        registry.add(close)
        try:
            previous: bytes | None = None
            last_sent = last_check = 0.0
            while not stop.is_set() and not closed:
                jpeg = api.camera_jpeg() or placeholder_jpeg()
                now = time.monotonic()
                if jpeg is not previous or now - last_sent > 2.0:
                    yield (
                        f"--{BOUNDARY}\r\nContent-Type: image/jpeg\r\n"
                        f"Content-Length: {len(jpeg)}\r\n\r\n"
                    ).encode() + jpeg + b"\r\n"
                    previous, last_sent = jpeg, now
                if now - last_check >= poll:
                    last_check = now
                    if gone():
                        return
                stop.wait(interval)
        finally:
            registry.discard(close)
            slot.release()

    response = Response(frames(), mimetype=f"multipart/x-mixed-replace; boundary={BOUNDARY}")
    response.call_on_close(slot.release)
    response.headers["Cache-Control"] = "no-store"
    return response
