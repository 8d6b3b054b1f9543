"""A crowd of web clients for `ponte bench web`, run in its own process (standard library
only, so that the clients' own work does not compete with the server for its interpreter).

- pollers: each on its own keep-alive connection from its own loopback address
  (127.0.1.N), asking `GET /api/state` as fast as the server answers, ignoring 429s, as a
  careless script would.
- pages: each a Game page from its own loopback address (127.0.2.N): an event stream, and
  `GET /api/state` after every event (waiting out a 429's Retry-After, as the page does);
  for every move event, the wall-clock time at which the page held a state with that move.
"""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from typing import Any


def _connect(port: int, source: str) -> http.client.HTTPConnection:
    return http.client.HTTPConnection("127.0.0.1", port, timeout=30,
                                      source_address=(source, 0))


def _get(conn: http.client.HTTPConnection, path: str) -> tuple[int, bytes, str | None]:
    conn.request("GET", path)
    answer = conn.getresponse()
    return answer.status, answer.read(), answer.getheader("Retry-After")


def _poll(port: int, source: str, stop: threading.Event, counts: dict[int, int]) -> None:
    conn = _connect(port, source)
    while not stop.is_set():
        try:
            status, _, _ = _get(conn, "/api/state")
        except (OSError, http.client.HTTPException):
            conn.close()
            conn = _connect(port, source)
            status = 0
        counts[status] = counts.get(status, 0) + 1
    conn.close()


class _Page:
    """One Game page: follows the events, refetches the state after each."""

    def __init__(self, port: int, source: str) -> None:
        self.port = port
        self.source = source
        self.fresh: dict[int, float] = {}
        """ply -> wall time when this page first held a state with that many moves."""
        self.statuses: dict[int, int] = {}
        self.moves_seen = 0
        self.connected = threading.Event()
        self._stream: socket.socket | None = None

    def run(self, stop: threading.Event) -> None:
        fetcher = _connect(self.port, self.source)
        stream = socket.create_connection(("127.0.0.1", self.port), timeout=30,
                                          source_address=(self.source, 0))
        self._stream = stream
        stream.sendall(b"GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        reader = stream.makefile("rb")
        pending: list[int] = []
        try:
            while not stop.is_set():
                line = reader.readline()
                if not line:
                    return
                if line.startswith(b"HTTP/1.1 200"):
                    self.connected.set()
                    self._refresh(fetcher, pending)
                if line.startswith(b"event: move"):
                    data = reader.readline()
                    if b'"ply":' in data:
                        payload = data.split(b"data: ", 1)[1]
                        pending.append(int(json.loads(payload)["ply"]))
                    self._refresh(fetcher, pending)
                elif line.startswith(b"event: "):
                    self._refresh(fetcher, pending)
        except (OSError, ValueError, http.client.HTTPException):
            return
        finally:
            reader.close()
            stream.close()
            fetcher.close()

    def _refresh(self, conn: http.client.HTTPConnection, pending: list[int]) -> None:
        while True:
            status, body, retry = _get(conn, "/api/state")
            self.statuses[status] = self.statuses.get(status, 0) + 1
            if status != 429:
                break
            time.sleep(float(retry or 1))
        if status != 200:
            return
        got = time.time()
        moves = len(json.loads(body).get("moves", []))
        self.moves_seen = max(self.moves_seen, moves)
        for ply in [p for p in pending if p <= moves]:
            self.fresh.setdefault(ply, got)
            pending.remove(ply)

    def close(self) -> None:
        if self._stream is not None:
            try:
                self._stream.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def run_crowd(port: int, pollers: int, pages: int, ready: Any, stop: Any, out: Any) -> None:
    """Run the crowd until `stop` (a multiprocessing Event) is set; put the results on
    `out`: poller answers by status, and per page its answers and move freshness times."""
    halt = threading.Event()
    counts: list[dict[int, int]] = [{} for _ in range(pollers)]
    threads = [threading.Thread(target=_poll, args=(port, f"127.0.1.{k + 1}", halt, counts[k]),
                                daemon=True) for k in range(pollers)]
    crowd = [_Page(port, f"127.0.2.{k + 1}") for k in range(pages)]
    threads += [threading.Thread(target=page.run, args=(halt,), daemon=True) for page in crowd]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + 30
    for page in crowd:
        page.connected.wait(max(0.0, deadline - time.monotonic()))
    ready.set()
    stop.wait()
    halt.set()
    for page in crowd:
        page.close()
    for thread in threads:
        thread.join(5)
    polled: dict[int, int] = {}
    for one in counts:
        for status, n in one.items():
            polled[status] = polled.get(status, 0) + n
    out.put({
        "polled": polled,
        "pages": [{"fresh": page.fresh, "statuses": page.statuses,
                   "moves_seen": page.moves_seen, "connected": page.connected.is_set()}
                  for page in crowd],
    })
