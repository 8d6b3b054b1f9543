"""Streams: the live events as server-sent events, and the camera as MJPEG.

Each event-stream client holds one bounded `Subscription` of the live loop's bus; the bus
drops a client that falls behind (its stream then ends and the browser reconnects with
Last-Event-ID). Comments every SSE_HEARTBEAT seconds keep proxies from closing an idle
stream and notice a client that went away; shutting the server down ends every stream.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

from flask import Blueprint, Response, current_app, jsonify, request

from contracts.live import EventBus
from web.context import Streams, live_api, streams

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


def _too_many() -> Response | None:
    if streams(current_app).count < int(current_app.config["MAX_STREAMS"]):
        return None
    response = jsonify(error="too many open streams; try again later")
    response.status_code = 503
    response.headers["Retry-After"] = "10"
    return response


@bp.get("/events")
def events() -> Response:
    busy = _too_many()
    if busy is not None:
        return busy
    last_id = parse_last_event_id(
        request.headers.get("Last-Event-ID") or request.args.get("lastEventId")
    )
    registry = streams(current_app)
    bus = live_api(current_app).bus
    heartbeat = float(current_app.config["SSE_HEARTBEAT"])
    retry = int(current_app.config["SSE_RETRY_MS"])
    response = Response(
        _event_stream(bus, last_id, registry, heartbeat, retry), mimetype="text/event-stream"
    )
    response.headers["Cache-Control"] = "no-cache"
    response.headers["X-Accel-Buffering"] = "no"
    return response


def _event_stream(
    bus: EventBus, last_id: int | None, registry: Streams, heartbeat: float, retry: int
) -> Iterator[str]:
    """The stream of one client; its subscription exists only while the stream runs."""
    subscription = bus.subscribe(last_id)
    registry.add(subscription.close)
    if registry.closing.is_set():  # the server began shutting down meanwhile
        subscription.close()
    try:
        yield f"retry: {retry}\n: connected\n\n"
        while True:  # closing the subscription (client dropped, shutdown) ends it, drained
            event = subscription.get(timeout=heartbeat)
            if event is not None:
                yield event.to_sse()
            elif subscription.closed:
                if subscription.dropped:
                    yield "event: dropped\ndata: {}\n\n"
                return
            else:
                yield ": heartbeat\n\n"
    finally:
        registry.discard(subscription.close)
        subscription.close()


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
    busy = _too_many()
    if busy is not None:
        return busy
    api = live_api(current_app)
    registry = streams(current_app)
    interval = 1.0 / max(0.5, float(current_app.config["CAMERA_FPS"]))

    def frames() -> Iterator[bytes]:
        stop = registry.closing
        closed: list[bool] = []

        def close() -> None:
            closed.append(True)

        registry.add(close)
        try:
            previous: bytes | None = None
            last_sent = 0.0
            while not stop.is_set() and not closed:
                jpeg = api.camera_jpeg() or placeholder_jpeg()
                now = time.monotonic()
                if jpeg is not previous or now - last_sent > 2.0:
                    yield (
                        f"--{BOUNDARY}\r\nContent-Type: image/jpeg\r\n"
                        f"Content-Length: {len(jpeg)}\r\n\r\n"
                    ).encode() + jpeg + b"\r\n"
                    previous, last_sent = jpeg, now
                stop.wait(interval)
        finally:
            registry.discard(close)

    response = Response(frames(), mimetype=f"multipart/x-mixed-replace; boundary={BOUNDARY}")
    response.headers["Cache-Control"] = "no-store"
    return response
