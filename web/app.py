"""The app factory: one Flask app around one `LiveApi`, with the pages, the JSON API and
the event stream as blueprints, and JSON error bodies (never a traceback)."""

from __future__ import annotations

import logging
import math
import secrets
import threading
import time
from typing import Any

from flask import Flask, Response, jsonify, request
from werkzeug.exceptions import HTTPException
from werkzeug.routing import IntegerConverter

from contracts.live import LiveApi
from web import api as api_blueprint
from web import events, pages
from web.context import Streams
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
    "MAX_STREAMS_PER_CLIENT": 8,
    "STREAM_POLL": 0.5,
    "PUBLIC_URL": None,
    "SERVED_NAMES": (),
    "RATE_LIMIT": (5.0, 40),
}
"""Settings: MAX_CONTENT_LENGTH caps request bodies; CONTROL_TOKEN (None: controls open to
all) is what a browser must show to use the controls; TRUST_LOOPBACK lets the host machine
itself control without it; SSE_HEARTBEAT is the seconds between keep-alive comments;
CAMERA_FPS caps the MJPEG stream; MAX_STREAMS caps the open event and camera streams (each
holds a server thread), MAX_STREAMS_PER_CLIENT those of one client address; STREAM_POLL is
the seconds between checks that a stream's client is still there; PUBLIC_URL is the address
shown on the host's screen; SERVED_NAMES are the host names (besides addresses and loopback
names) a request's Host may carry; RATE_LIMIT is (requests a second, burst) per client
address (None: no limit; static files are not counted), 429 with Retry-After beyond."""


class RateLimiter:
    """A token bucket per client address: `rate` requests a second, `burst` at once."""

    def __init__(self, rate: float, burst: int, forget_after: float = 60.0) -> None:
        self.rate = rate
        self.burst = burst
        self._forget_after = forget_after
        self._lock = threading.Lock()
        self._buckets: dict[str, tuple[float, float]] = {}

    def wait_needed(self, client: str) -> float:
        """Seconds until `client` may ask again; 0.0 if it may now (counted)."""
        now = time.monotonic()
        with self._lock:
            tokens, then = self._buckets.get(client, (float(self.burst), now))
            tokens = min(float(self.burst), tokens + (now - then) * self.rate)
            if tokens >= 1.0:
                self._buckets[client] = (tokens - 1.0, now)
                if len(self._buckets) > 4096:
                    self._forget(now)
                return 0.0
            self._buckets[client] = (tokens, now)
            return (1.0 - tokens) / self.rate

    def _forget(self, now: float) -> None:
        old = [k for k, (_, t) in self._buckets.items() if now - t > self._forget_after]
        for key in old:
            del self._buckets[key]


MAX_ID = 2**63 - 1
"""The largest game id or move number a URL may name (SQLite's integers are 64-bit)."""


class IdConverter(IntegerConverter):
    """`<id:name>`: a non-negative integer that fits SQLite; larger ones match no page."""

    def __init__(self, map: Any) -> None:
        super().__init__(map, max=MAX_ID)


def create_app(api: LiveApi, config: dict[str, Any] | None = None) -> Flask:
    """The web app for one live session (or a test double of one)."""
    app = Flask(__name__)
    app.config.update(DEFAULTS)
    app.config["SECRET_KEY"] = secrets.token_hex(16)
    if config:
        app.config.update(config)
    app.json.sort_keys = False  # type: ignore[attr-defined]
    app.url_map.converters["id"] = IdConverter
    app.extensions["ponte_api"] = api
    app.extensions["ponte_streams"] = Streams(int(app.config["MAX_STREAMS"]),
                                              int(app.config["MAX_STREAMS_PER_CLIENT"]))
    limit = app.config["RATE_LIMIT"]
    limiter = RateLimiter(float(limit[0]), int(limit[1])) if limit else None
    app.register_blueprint(pages.bp)
    app.register_blueprint(api_blueprint.bp)
    app.register_blueprint(events.bp)

    @app.before_request
    def _check_host_and_rate() -> tuple[Response, int] | None:
        problem = unknown_host()
        if problem is not None:
            return jsonify(error=problem), 421
        if limiter is None or request.path.startswith("/static/"):
            return None
        wait = limiter.wait_needed(request.remote_addr or "?")
        if wait <= 0.0:
            return None
        response = jsonify(error=f"too many requests from {request.remote_addr}; "
                           f"at most {limiter.rate:g} a second, try again shortly")
        response.headers["Retry-After"] = str(max(1, math.ceil(wait)))
        return response, 429

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

