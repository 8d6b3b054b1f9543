"""The app factory: one Flask app around one `LiveApi`, with the pages, the JSON API and
the event stream as blueprints, and JSON error bodies (never a traceback)."""

from __future__ import annotations

import logging
import secrets
import threading
from typing import Any

from flask import Flask, Response, jsonify, request
from werkzeug.exceptions import HTTPException
from werkzeug.routing import IntegerConverter

from ponte.live.api import LiveApi
from web.security import unknown_host

log = logging.getLogger(__name__)

DEFAULTS: dict[str, Any] = {
    "MAX_CONTENT_LENGTH": 16 * 1024,
    "CONTROL_TOKEN": None,
    "TRUST_LOOPBACK": True,
    "SSE_HEARTBEAT": 15.0,
    "SSE_RETRY_MS": 1000,
    "CAMERA_FPS": 10.0,
    "MAX_STREAMS": 64,
    "PUBLIC_URL": None,
    "SERVED_NAMES": (),
}
"""Settings: MAX_CONTENT_LENGTH caps request bodies; CONTROL_TOKEN (None: controls open to
all) is what a browser must show to use the controls; TRUST_LOOPBACK lets the host machine
itself control without it; SSE_HEARTBEAT is the seconds between keep-alive comments;
CAMERA_FPS caps the MJPEG stream; MAX_STREAMS caps the open event and camera streams (each
holds a server thread); PUBLIC_URL is the address shown on the host's screen; SERVED_NAMES
are the host names (besides addresses and loopback names) a request's Host may carry."""


MAX_ID = 2**63 - 1
"""The largest game id or move number a URL may name (SQLite's integers are 64-bit)."""


class IdConverter(IntegerConverter):
    """`<id:name>`: a non-negative integer that fits SQLite; larger ones match no page."""

    def __init__(self, map: Any) -> None:
        super().__init__(map, max=MAX_ID)


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


def create_app(api: LiveApi, config: dict[str, Any] | None = None) -> Flask:
    """The web app for one live session (or a test double of one)."""
    from web import api as api_blueprint
    from web import events, pages

    app = Flask(__name__)
    app.config.update(DEFAULTS)
    app.config["SECRET_KEY"] = secrets.token_hex(16)
    if config:
        app.config.update(config)
    app.json.sort_keys = False  # type: ignore[attr-defined]
    app.url_map.converters["id"] = IdConverter
    app.extensions["ponte_api"] = api
    app.extensions["ponte_streams"] = Streams()
    app.register_blueprint(pages.bp)
    app.register_blueprint(api_blueprint.bp)
    app.register_blueprint(events.bp)

    @app.before_request
    def _check_host() -> tuple[Response, int] | None:
        problem = unknown_host()
        if problem is None:
            return None
        return jsonify(error=problem), 421

    @app.after_request
    def _no_sniffing(response: Response) -> Response:
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        return response

    @app.errorhandler(HTTPException)
    def _http_error(exc: HTTPException) -> tuple[Response, int]:
        status = exc.code or 500
        message = _MESSAGES.get(status, exc.description or exc.name)
        if status == 404 and not request.path.startswith("/static/"):
            where = request.path if len(request.path) <= 80 else request.path[:80] + "..."
            message = f"nothing at {where}" if request.path.startswith("/api/") \
                else f"no page at {where}"
        return jsonify(error=message), status

    @app.errorhandler(Exception)
    def _unexpected(exc: Exception) -> tuple[Response, int]:
        log.exception("unexpected error on %s %s", request.method, request.path)
        return jsonify(error=f"internal error ({type(exc).__name__}); see the server log"), 500

    return app


_MESSAGES = {
    405: "method not allowed here",
    413: "request body too large",
}


def live_api(app: Flask) -> LiveApi:
    api: LiveApi = app.extensions["ponte_api"]
    return api


def streams(app: Flask) -> Streams:
    found: Streams = app.extensions["ponte_streams"]
    return found
