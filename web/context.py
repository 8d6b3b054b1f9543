"""What the blueprints find on the app: the `LiveApi` it serves and its open streams.

`create_app` puts both on the app; the blueprints reach them through `live_api` and
`streams`, so they need not import the app factory.
"""

from __future__ import annotations

import threading
from typing import Any

from flask import Flask

from contracts.live import LiveApi


class Streams:
    """The open event and camera streams, so that shutting down can end them all."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._closers: set[Any] = set()
        self.closing = threading.Event()

    def add(self, closer: Any) -> None:
        with self._lock:
            self._closers.add(closer)

    def discard(self, closer: Any) -> None:
        with self._lock:
            self._closers.discard(closer)

    @property
    def count(self) -> int:
        with self._lock:
            return len(self._closers)

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
