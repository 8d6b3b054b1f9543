"""Serving the app: a threaded werkzeug server in a background thread, the control token,
and a clean shutdown that ends the open event and camera streams first."""

from __future__ import annotations

import logging
import secrets
import socket
import sys
import threading
from collections.abc import Callable
from typing import Any

from werkzeug.serving import BaseWSGIServer, make_server

from contracts.live import LiveApi
from web import qr
from web.app import create_app
from web.context import streams
from web.security import is_loopback


class WebServer:
    """A running web page: `url`, `token` (None on loopback), `control_url`, `shutdown()`."""

    def __init__(self, server: BaseWSGIServer, app: Any, host: str, token: str | None) -> None:
        self._server = server
        self.app = app
        self.host = host
        self.port = int(server.server_port)
        self.token = token
        shown = _shown_host(host)
        self.url = f"http://{shown}:{self.port}/"
        self.control_url = f"{self.url}?token={token}" if token else self.url
        self._thread = threading.Thread(
            target=server.serve_forever, name="ponte-web", kwargs={"poll_interval": 0.2},
            daemon=True,
        )

    def start(self) -> WebServer:
        self._thread.start()
        return self

    def shutdown(self, timeout: float = 5.0) -> None:
        """End the streams, stop accepting requests, and wait for the server thread."""
        streams(self.app).close_all()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout)

    def __enter__(self) -> WebServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()


def _shown_host(host: str) -> str:
    """The address to print for people: the machine's LAN address for 0.0.0.0."""
    if host in ("0.0.0.0", "", "::"):
        try:
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
                probe.connect(("192.0.2.1", 9))  # no packet is sent; this picks the route
                return str(probe.getsockname()[0])
        except OSError:
            return socket.gethostname()
    return f"[{host}]" if ":" in host else host


def _check_free(host: str, port: int) -> None:
    """Fail with a clear message if the address cannot be bound (werkzeug would exit)."""
    if port == 0:
        return
    try:
        infos = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM)
        family, kind, proto, _name, address = infos[0]
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(address)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise OSError(f"cannot serve the web page on {host}:{port}: {reason}") from None


def serve(
    api: LiveApi,
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    token: str | None = None,
    config: dict[str, Any] | None = None,
    announce: Callable[[str], None] | None = None,
    block: bool = False,
    log_requests: bool = False,
) -> WebServer:
    """Serve the web page for `api` in a background thread and return the running server.

    On a loopback host the controls are open (unless a `token` is given). On any other host
    spectators see everything read-only and the controls need a token (`token`, or a fresh
    random one), announced with the control link and a QR code (`announce`, default: print
    to stderr). With `block`,
    serve until Ctrl-C, then shut down. Requests are logged only with `log_requests`.
    """
    logging.getLogger("werkzeug").setLevel(logging.INFO if log_requests else logging.WARNING)
    loopback = is_loopback(host) or host == "localhost"
    if not loopback and not token:
        token = secrets.token_urlsafe(16)
    settings = dict(config or {})
    settings["CONTROL_TOKEN"] = token or None
    app = create_app(api, settings)
    _check_free(host, port)
    try:
        server = make_server(host, port, app, threaded=True)
    except (OSError, SystemExit):  # werkzeug exits on a bind error after printing it
        raise OSError(f"cannot serve the web page on {host}:{port}") from None
    web = WebServer(server, app, host, settings["CONTROL_TOKEN"])
    app.config["PUBLIC_URL"] = web.url
    app.config["CONTROL_URL"] = web.control_url
    say = announce or (lambda text: print(text, file=sys.stderr, flush=True))
    say(f"web page: {web.url}")
    if web.token:
        say(f"spectators: {web.url} (read-only)")
        say(f"controls token: {web.token}")
        say(f"controls link: {web.control_url}")
        say(qr.to_text(qr.encode(web.control_url)))
    web.start()
    if block:
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            pass
        finally:
            web.shutdown()
    return web
