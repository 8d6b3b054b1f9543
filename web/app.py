"""The app factory: one Flask app around one `LiveApi`, with the pages, the JSON API and
the event stream as blueprints, and JSON error bodies (never a traceback)."""

from __future__ import annotations

import logging
import secrets
from typing import Any

from flask import Flask, Response, jsonify, request
from werkzeug.exceptions import HTTPException

from contracts.live import LiveApi
from web import api as api_blueprint
from web import events, pages
from web.context import Streams

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
}
"""Settings: MAX_CONTENT_LENGTH caps request bodies; CONTROL_TOKEN (None: controls open to
all) is what a browser must show to use the controls; TRUST_LOOPBACK lets the host machine
itself control without it; SSE_HEARTBEAT is the seconds between keep-alive comments;
CAMERA_FPS caps the MJPEG stream; MAX_STREAMS caps the open event and camera streams (each
holds a server thread); PUBLIC_URL is the address shown on the host's screen."""


def create_app(api: LiveApi, config: dict[str, Any] | None = None) -> Flask:
    """The web app for one live session (or a test double of one)."""
    app = Flask(__name__)
    app.config.update(DEFAULTS)
    app.config["SECRET_KEY"] = secrets.token_hex(16)
    if config:
        app.config.update(config)
    app.json.sort_keys = False  # type: ignore[attr-defined]
    app.extensions["ponte_api"] = api
    app.extensions["ponte_streams"] = Streams()
    app.register_blueprint(pages.bp)
    app.register_blueprint(api_blueprint.bp)
    app.register_blueprint(events.bp)

    @app.errorhandler(HTTPException)
    def _http_error(exc: HTTPException) -> tuple[Response, int]:
        status = exc.code or 500
        message = _MESSAGES.get(status, exc.description or exc.name)
        if status == 404 and not request.path.startswith(("/api/", "/static/")):
            message = f"no page at {request.path}"
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

