"""What the blueprints find on the app: the `LiveApi` it serves and its open streams.

`create_app` puts both on the app; the blueprints reach them through `live_api` and
`streams`, so they need not import the app factory.
"""

from __future__ import annotations

import threading
from typing import Any

from flask import Flask

from contracts.live import LiveApi


class StreamRefused(Exception):
    """No stream slot for this client: `message`, the HTTP `status` and `retry_after`."""

    def __init__(self, message: str, status: int, retry_after: int) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after


class Slot:
    """One open stream's place; `release()` (idempotent) gives it back."""

    def __init__(self, streams: Streams, client: str) -> None:
        self._streams = streams
        self.client = client
        self.released = False

    def release(self) -> None:
        self._streams._release(self)


class Streams:
    """The open event and camera streams: at most `limit` in all and `per_client` for one
    client address, so that no client can take every server thread; shutting down ends
    them all."""

    def __init__(self, limit: int = 64, per_client: int = 8) -> None:
        self.limit = limit
        self.per_client = per_client
        self._lock = threading.Lock()
        self._closers: set[Any] = set()
        self._open: dict[str, int] = {}
        self.closing = threading.Event()

    def open(self, client: str) -> Slot:
        """A slot for a new stream of `client`, or StreamRefused."""
        with self._lock:
            mine = self._open.get(client, 0)
            if mine >= self.per_client:
                raise StreamRefused(
                    f"too many open streams from {client} (at most {self.per_client}); "
                    "close another page of this assistant", 429, 5)
            if sum(self._open.values()) >= self.limit:
                raise StreamRefused("too many open streams; try again later", 503, 10)
            self._open[client] = mine + 1
        return Slot(self, client)

    def _release(self, slot: Slot) -> None:
        with self._lock:
            if slot.released:
                return
            slot.released = True
            left = self._open.get(slot.client, 0) - 1
            if left > 0:
                self._open[slot.client] = left
            else:
                self._open.pop(slot.client, None)

    def add(self, closer: Any) -> None:
        with self._lock:
            self._closers.add(closer)

    def discard(self, closer: Any) -> None:
        with self._lock:
            self._closers.discard(closer)

    @property
    def count(self) -> int:
        """The open streams."""
        with self._lock:
            return sum(self._open.values())

    def count_for(self, client: str) -> int:
        with self._lock:
            return self._open.get(client, 0)

    def close_all(self) -> None:
        self.closing.set()
        with self._lock:
            closers = list(self._closers)
        for close in closers:
            close()


def live_api(app: Flask) -> LiveApi:
    api: LiveApi = app.extensions["ponte_api"]
    return api


def streams(app: Flask) -> Streams:
    found: Streams = app.extensions["ponte_streams"]
    return found
