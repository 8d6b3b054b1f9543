"""Fault trials of the web page against a real server on 127.0.0.1 over the real live session
(SQLite store): pollers and Game pages during a game, a rebinding Host, malformed requests,
one client hogging the stream slots. Each asserts no 500, no traceback, verdicts still in
time and no lost move. Clients use their own loopback addresses (127.0.x.y) only."""

from __future__ import annotations

import json
import logging
import socket
import struct
from collections.abc import Iterator
from pathlib import Path

import pytest

from lab.bench.web import VERDICT_TARGET_MS, crowd_trial
from ponte.live.session import LiveSession
from ponte.live.settle import BoardView, Reading
from ponte.live.store import Store
from referee.playout import heuristic_game
from tests.raw_http import Answer, exchange, get, post_json
from tests.waiting import wait_until
from web import WebServer, serve
from web.context import streams

TOKEN = "fault-trial-token"


@pytest.fixture
def session(tmp_path: Path) -> Iterator[LiveSession]:
    store = Store(tmp_path / "data")
    yield LiveSession(store, settle_window=0.0, tags={"Light": "Ann", "Dark": "Bob"})
    store.close()


@pytest.fixture
def server(session: LiveSession) -> Iterator[WebServer]:
    web = serve(session, "127.0.0.1", 0, announce=lambda text: None,
                config={"STREAM_POLL": 0.1})
    yield web
    web.shutdown()


@pytest.fixture
def no_tracebacks(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    caplog.set_level(logging.WARNING)
    yield
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
    assert errors == [], [r.getMessage() for r in errors]


def _clean(answer: Answer, what: str) -> None:
    assert answer.status < 500, (what, answer.status, answer.body[:200])
    assert b"Traceback" not in answer.body and b'File "' not in answer.body, what
    if answer.headers.get("content-type", "").startswith("application/json"):
        assert answer.headers.get("x-content-type-options") == "nosniff", what
        body = json.loads(answer.body)
        if answer.status >= 400:
            assert isinstance(body["error"], str) and body["error"], what


def _play(session: LiveSession, cells: dict[str, str], t: float) -> None:
    session.feed(Reading(t, BoardView.of(cells)))


# --- pollers and Game pages during a game ---------------------------------------------


@pytest.mark.slow
def test_pollers_and_game_pages_do_not_hold_up_the_verdicts(
    session: LiveSession, server: WebServer, no_tracebacks: None
) -> None:
    moves = [m.move for m in heuristic_game(3).moves][:12]
    loop, result, _ = crowd_trial(session, server.port, moves, pollers=12, pages=12)
    assert len(loop.verdicts) == len(moves)
    latencies = sorted(1000.0 * t for t in loop.latencies)
    assert latencies[-2] <= VERDICT_TARGET_MS, latencies  # one stall of a busy disk allowed
    assert latencies[-1] <= 3 * VERDICT_TARGET_MS, latencies
    recorded = session.game(session.game_id)["moves"]
    assert [m["move"] for m in recorded] == [str(m) for m in moves]  # none lost or doubled
    polled = result["polled"]
    assert sum(polled.values()) > 0 and all(200 <= s < 500 for s in polled), polled
    for page in result["pages"]:
        assert page["connected"]
        assert all(s < 500 for s in page["statuses"]), page["statuses"]
        assert page["moves_seen"] == len(moves)
        assert sorted(page["fresh"]) == sorted(loop.verdicts)


def test_a_poller_beyond_the_rate_limit_is_told_when_to_come_back(
    session: LiveSession, no_tracebacks: None
) -> None:
    web = serve(session, "127.0.0.1", 0, announce=lambda text: None,
                config={"RATE_LIMIT": (1.0, 10)})
    try:
        answers = [get(web.port, "/api/state", source="127.0.3.1") for _ in range(30)]
        for answer in answers:
            _clean(answer, "poll")
        refused = [a for a in answers if a.status == 429]
        assert refused, "30 requests at once were all served"
        assert int(refused[0].headers["retry-after"]) >= 1
        assert get(web.port, "/api/state", source="127.0.3.2").status == 200  # others served
    finally:
        web.shutdown()


# --- a rebinding Host ------------------------------------------------------------------

REBOUND_HOSTS = ["rebind.attacker.example", "rebind.attacker.example:80", "localhost.evil",
                 "127.0.0.1.nip.io", "", "a" * 300]


@pytest.mark.parametrize("token", [None, TOKEN])
def test_a_rebinding_host_gets_no_page_no_state_no_token_and_no_control(
    session: LiveSession, token: str | None, no_tracebacks: None
) -> None:
    web = serve(session, "127.0.0.1", 0, token=token, announce=lambda text: None)
    try:
        _play(session, {"c3": "light", "d4": "light"}, 1.0)
        for host in REBOUND_HOSTS:
            for path in ("/", "/camera", "/games", f"/?token={TOKEN}", "/api/state",
                         "/api/session", "/events", "/camera.mjpg", "/games/1/download/pdd"):
                answer = get(web.port, path, host=host)
                _clean(answer, f"{host} {path}")
                assert answer.status == 421, (host, path)
                assert TOKEN.encode() not in answer.body and "set-cookie" not in answer.headers
            for action in ("swap", "undo", "new_game"):
                answer = post_json(web.port, f"/api/control/{action}", b"{}", host=host)
                assert answer.status == 421, (host, action)
        assert [m.move for m in session.table.game.moves][0].__str__() == "c3,d4"
        assert len(session.table.game.moves) == 1  # no control got through
        own = get(web.port, "/", host=f"127.0.0.1:{web.port}")
        assert own.status == 200
    finally:
        web.shutdown()


# --- malformed requests ------------------------------------------------------------------

DEEP = b"[" * 8000 + b"]" * 8000
HUGE_ID = "9" * 25


def _post(path: str, body: bytes, extra: str = "", kind: str = "application/json") -> bytes:
    return (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: {kind}\r\n"
            f"Content-Length: {len(body)}\r\n{extra}Connection: close\r\n\r\n").encode() + body


def _get(path: str, extra: str = "") -> bytes:
    return f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{extra}Connection: close\r\n\r\n".encode()


MALFORMED = {
    "deeply nested JSON": _post("/api/control/pass", DEEP),
    "deeply nested object": _post("/api/control/new_game", b'{"a":' * 3000 + b"1" + b"}" * 3000),
    "invalid JSON": _post("/api/control/pass", b"{pass"),
    "invalid UTF-8": _post("/api/control/pass", b'{"a": "\xff\xfe"}'),
    "a JSON list": _post("/api/control/override", b"[1, 2]"),
    "no JSON type": _post("/api/control/pass", b"{}", kind="text/plain"),
    "a huge number": _post("/api/control/new_game", b'{"board": 1' + b"0" * 5000 + b"}"),
    "NaN": _post("/api/control/new_game", b'{"board": NaN}'),
    "a bad length": b"POST /api/control/pass HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                    b"Content-Type: application/json\r\nContent-Length: -5\r\n"
                    b"Connection: close\r\n\r\n",
    "a huge game id": _get(f"/api/games/{HUGE_ID}"),
    "a huge replay id": _get(f"/api/games/{HUGE_ID}/replay"),
    "a huge download id": _get(f"/games/{HUGE_ID}/download/pdd"),
    "a huge snapshot id": _get(f"/games/{HUGE_ID}/snapshot/1.jpg"),
    "a huge snapshot move": _get(f"/games/1/snapshot/{HUGE_ID}.jpg"),
    "a huge page id": _get(f"/games/{HUGE_ID}"),
    "2^63": _get(f"/api/games/{2**63}"),
    "a negative id": _get("/api/games/-1"),
    "path traversal": _get("/static/..%2f..%2fapp.py"),
    "a long path": _get("/api/games/" + "1" * 5000),
    "an unknown method": b"BREW /api/state HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                         b"Connection: close\r\n\r\n",
    "a bad download format": _get("/games/1/download/%00exe"),
    "a query flood": _get("/api/state?" + "&".join(f"k{i}=v" for i in range(2000))),
    "a bad token": _get("/?token=" + "%ff" * 100),
}


SERVED_ANYWAY = {"a query flood", "a bad token"}
"""Odd but harmless: the state ignores the query; a wrong token gets the page with a notice."""


@pytest.mark.parametrize("name", list(MALFORMED))
def test_a_malformed_request_is_a_clear_4xx_and_the_game_goes_on(
    session: LiveSession, server: WebServer, name: str, no_tracebacks: None
) -> None:
    _play(session, {"c3": "light", "d4": "light"}, 1.0)
    answer = exchange(server.port, MALFORMED[name], timeout=10)
    _clean(answer, name)
    assert 400 <= answer.status < 500 or name in SERVED_ANYWAY, (name, answer.status)
    _play(session, {"c3": "light", "d4": "light", "f6": "dark", "g6": "dark"}, 2.0)
    assert [str(m.move) for m in session.table.game.moves] == ["c3,d4", "f6,g6"]


@pytest.mark.parametrize("size", [16 * 1024 + 1, 64 * 1024])
def test_a_chunked_body_over_16_kib_is_refused_not_cut(
    session: LiveSession, server: WebServer, size: int, no_tracebacks: None
) -> None:
    body = b'{"light": "Cleo", "dark": "Dan"}'
    body += b" " * (size - len(body))
    answer = post_json(server.port, "/api/control/new_game", body, chunked=True)
    _clean(answer, "chunked")
    assert answer.status == 413
    assert session.tags["Light"] == "Ann"  # the game was not replaced


# --- stream slots --------------------------------------------------------------------------


def _open_stream(port: int, path: str, source: str) -> tuple[socket.socket, int]:
    conn = socket.create_connection(("127.0.0.1", port), timeout=5, source_address=(source, 0))
    conn.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = conn.recv(4096)
        if not chunk:
            break
        head += chunk
    return conn, int(head.split()[1])


def test_one_client_cannot_take_every_stream_and_its_slots_free_when_it_goes(
    session: LiveSession, server: WebServer, no_tracebacks: None
) -> None:
    registry = streams(server.app)
    per_client = int(server.app.config["MAX_STREAMS_PER_CLIENT"])
    hog: list[socket.socket] = []
    statuses = []
    try:
        for k in range(2 * per_client + 4):  # within the rate limit's burst
            conn, status = _open_stream(server.port, ("/events", "/camera.mjpg")[k % 2],
                                        "127.0.4.1")
            statuses.append(status)
            (hog.append(conn) if status == 200 else conn.close())
        assert statuses.count(200) == per_client
        assert set(statuses[per_client:]) == {429}
        assert registry.count_for("127.0.4.1") == per_client
        page, status = _open_stream(server.port, "/events", "127.0.4.2")
        assert status == 200  # another client still gets a stream
        page.close()
        for k, conn in enumerate(hog):
            if k % 2:  # vanish abruptly (reset) or close cleanly
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            conn.close()
        hog.clear()
        assert wait_until(lambda: registry.count == 0, 3.0), registry.count
        assert session.bus.subscriber_count == 0
        again, status = _open_stream(server.port, "/events", "127.0.4.1")
        assert status == 200
        again.close()
    finally:
        for conn in hog:
            conn.close()
    _play(session, {"c3": "light", "d4": "light"}, 1.0)
    assert len(session.table.game.moves) == 1
