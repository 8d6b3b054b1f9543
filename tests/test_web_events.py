"""The live streams: server-sent events (one bounded subscription per web_client, catching up
with Last-Event-ID, heartbeats, slow clients dropped, clean ends) and the MJPEG camera."""

from __future__ import annotations

import json
import socket
import threading
import time
import urllib.request
from collections.abc import Iterator
from typing import Any

import cv2
import numpy as np
import pytest
from flask import Flask
from flask.testing import FlaskClient

from contracts.live import EventBus, EventType
from tests.live_double import FakeLive
from tests.waiting import wait_until
from web import create_app, serve
from web.context import streams
from web.events import parse_last_event_id


def chunks(response: Any) -> Iterator[str]:
    for chunk in response.response:
        yield chunk.decode() if isinstance(chunk, bytes) else chunk


def sse_fields(text: str) -> dict[str, str]:
    return dict(line.split(": ", 1) for line in text.strip().splitlines() if ": " in line)


def test_a_published_event_arrives_in_sse_form(
    web_client: FlaskClient, fake_live: FakeLive
) -> None:
    response = web_client.get("/events", buffered=False)
    assert response.mimetype == "text/event-stream"
    assert response.headers["Cache-Control"] == "no-cache"
    stream = chunks(response)
    assert next(stream).startswith("retry: 1000\n")
    assert fake_live.bus.subscriber_count == 1
    fake_live.play("c3,d4")
    fields = sse_fields(next(stream))
    assert fields["event"] == "move"
    assert json.loads(fields["data"])["move"] == "c3,d4"
    response.close()
    assert fake_live.bus.subscriber_count == 0


def test_a_reconnecting_client_catches_up_from_last_event_id(
    web_client: FlaskClient, fake_live: FakeLive
) -> None:
    first = fake_live.bus.publish(EventType.NOTICE, {"message": "one"})
    fake_live.bus.publish(EventType.NOTICE, {"message": "two"})
    fake_live.bus.publish(EventType.NOTICE, {"message": "three"})
    response = web_client.get("/events", headers={"Last-Event-ID": str(first.id)}, buffered=False)
    stream = chunks(response)
    next(stream)
    got = [json.loads(sse_fields(next(stream))["data"])["message"] for _ in range(2)]
    assert got == ["two", "three"]
    response.close()


def test_an_idle_stream_sends_heartbeats(web_client: FlaskClient) -> None:
    response = web_client.get("/events", buffered=False)
    stream = chunks(response)
    next(stream)
    assert next(stream) == ": heartbeat\n\n"
    response.close()


def test_a_slow_client_is_dropped_and_told_so() -> None:
    live = FakeLive()
    live.bus = EventBus(queue_size=2)
    web_client = create_app(live, {"TESTING": True, "SSE_HEARTBEAT": 0.2}).test_client()
    response = web_client.get("/events", buffered=False)
    stream = chunks(response)
    next(stream)
    for k in range(3):
        live.bus.publish(EventType.NOTICE, {"k": k})
    rest = list(stream)
    assert [json.loads(sse_fields(c)["data"])["k"] for c in rest[:2]] == [0, 1]
    assert rest[2].startswith("event: dropped")
    assert live.bus.subscriber_count == 0


def test_closing_the_app_streams_ends_them(web_app: Flask, fake_live: FakeLive) -> None:
    response = web_app.test_client().get("/events", buffered=False)
    stream = chunks(response)
    next(stream)
    assert streams(web_app).count == 1
    streams(web_app).close_all()
    assert list(stream) == []
    assert streams(web_app).count == 0 and fake_live.bus.subscriber_count == 0


def test_too_many_streams_are_refused(fake_live: FakeLive) -> None:
    web_client = create_app(fake_live, {"TESTING": True, "MAX_STREAMS": 2}).test_client()
    open_streams = [web_client.get(path, buffered=False) for path in ("/events", "/camera.mjpg")]
    for response in open_streams:
        next(iter(response.response))
    for path in ("/events", "/camera.mjpg"):
        refused = web_client.get(path)
        assert refused.status_code == 503
        assert refused.get_json() == {"error": "too many open streams; try again later"}
    for response in open_streams:
        response.close()
    again = web_client.get("/events", buffered=False)
    assert again.status_code == 200
    again.close()


@pytest.mark.parametrize(
    ("header", "expected"),
    [(None, None), ("17", 17), (" 3 ", 3), ("abc", None), ("-1", None), ("9" * 30, None)],
)
def test_last_event_id_header_is_parsed_safely(header: str | None, expected: int | None) -> None:
    assert parse_last_event_id(header) == expected


def test_bad_last_event_id_starts_a_fresh_stream(
    web_client: FlaskClient, fake_live: FakeLive
) -> None:
    fake_live.bus.publish(EventType.NOTICE, {"message": "old"})
    response = web_client.get("/events", headers={"Last-Event-ID": "'; drop"}, buffered=False)
    stream = chunks(response)
    next(stream)
    assert next(stream) == ": heartbeat\n\n"  # no history replayed
    response.close()


def test_the_camera_stream_sends_jpeg_parts(web_client: FlaskClient, fake_live: FakeLive) -> None:
    picture = np.zeros((48, 64, 3), np.uint8)
    fake_live.jpeg = bytes(cv2.imencode(".jpg", picture)[1].tobytes())
    response = web_client.get("/camera.mjpg", buffered=False)
    assert response.mimetype == "multipart/x-mixed-replace"
    part = next(iter(response.response))
    head, body = part.split(b"\r\n\r\n", 1)
    assert head.startswith(b"--ponteframe\r\nContent-Type: image/jpeg")
    assert body.rstrip(b"\r\n") == fake_live.jpeg
    response.close()


def test_no_camera_gives_a_clear_placeholder(web_client: FlaskClient) -> None:
    response = web_client.get("/camera.jpg")
    assert response.status_code == 503 and response.mimetype == "image/jpeg"
    picture = cv2.imdecode(np.frombuffer(response.data, np.uint8), cv2.IMREAD_COLOR)
    assert picture.shape == (360, 640, 3)
    stream = web_client.get("/camera.mjpg", buffered=False)
    part = next(iter(stream.response))
    assert part.split(b"\r\n\r\n", 1)[1].rstrip(b"\r\n") == response.data
    stream.close()


def test_a_real_server_ends_open_streams_on_shutdown() -> None:
    live = FakeLive()
    web = serve(live, "127.0.0.1", 0, announce=lambda text: None,
                config={"SSE_HEARTBEAT": 30.0})
    lines: list[bytes] = []
    ended = threading.Event()

    def listen() -> None:
        with urllib.request.urlopen(web.url + "events", timeout=10) as stream:
            for line in stream:
                lines.append(line)
        ended.set()

    listener = threading.Thread(target=listen, daemon=True)
    listener.start()
    for _ in range(200):
        if live.bus.subscriber_count:
            break
        threading.Event().wait(0.01)
    live.play("c3,d4")
    web.shutdown()
    assert ended.wait(5), "the event stream did not end on shutdown"
    assert b"event: move\n" in lines
    assert live.bus.subscriber_count == 0


def test_a_client_that_goes_away_frees_its_subscription() -> None:
    live = FakeLive()
    web = serve(live, "127.0.0.1", 0, announce=lambda text: None,
                config={"SSE_HEARTBEAT": 0.1})
    try:
        stream = urllib.request.urlopen(web.url + "events", timeout=5)
        assert stream.readline().startswith(b"retry:")
        assert live.bus.subscriber_count == 1
        stream.close()
        for _ in range(100):  # noticed at the next heartbeat
            if live.bus.subscriber_count == 0 and streams(web.app).count == 0:
                break
            threading.Event().wait(0.05)
        assert live.bus.subscriber_count == 0 and streams(web.app).count == 0
    finally:
        web.shutdown()


def test_one_client_may_hold_only_its_share_of_the_streams(fake_live: FakeLive) -> None:
    app = create_app(fake_live, {"TESTING": True, "MAX_STREAMS_PER_CLIENT": 2})
    hog = app.test_client()
    held = [hog.get(path, buffered=False) for path in ("/events", "/camera.mjpg")]
    for response in held:
        next(iter(response.response))
    for path in ("/events", "/camera.mjpg"):
        refused = hog.get(path)
        assert refused.status_code == 429 and refused.headers["Retry-After"]
        assert "too many open streams from 127.0.0.1 (at most 2)" in refused.get_json()["error"]
    other = app.test_client()
    other.environ_base.update({"REMOTE_ADDR": "192.168.1.50"})
    theirs = other.get("/events", buffered=False)
    assert theirs.status_code == 200
    theirs.close()
    held[0].close()
    assert streams(app).count_for("127.0.0.1") == 1
    again = hog.get("/events", buffered=False)
    assert again.status_code == 200
    again.close()
    held[1].close()
    assert streams(app).count == 0


def _open_raw_stream(port: int, path: str) -> socket.socket:
    conn = socket.create_connection(("127.0.0.1", port), timeout=5)
    conn.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
    head = b""
    while b"\r\n\r\n" not in head:
        head += conn.recv(4096)
    assert head.startswith(b"HTTP/1.1 200")
    conn.settimeout(0.3)
    try:
        while conn.recv(65536):  # read what was sent, so that closing is a clean FIN
            pass
    except TimeoutError:
        pass
    return conn


@pytest.mark.parametrize("path", ["/events", "/camera.mjpg"])
def test_a_stream_whose_client_left_frees_its_slot_at_once(path: str) -> None:
    live = FakeLive()
    live.jpeg = bytes(cv2.imencode(".jpg", np.zeros((48, 64, 3), np.uint8))[1].tobytes())
    web = serve(live, "127.0.0.1", 0, announce=lambda text: None,
                config={"SSE_HEARTBEAT": 30.0, "STREAM_POLL": 0.1})
    try:
        conn = _open_raw_stream(web.port, path)
        assert wait_until(lambda: streams(web.app).count == 1, 5)
        conn.close()
        left = time.monotonic()
        assert wait_until(lambda: streams(web.app).count == 0, 5)
        took = time.monotonic() - left
        assert took < 1.5, f"the slot was held {took:.1f} s after the client left"
        assert live.bus.subscriber_count == 0
    finally:
        web.shutdown()
