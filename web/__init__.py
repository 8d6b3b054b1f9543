"""The local web page (Flask app factory, blueprints, templates, static files).

May import Flask, OpenCV/numpy (to draw a board as PNG) and `referee` (to draw and replay
positions). It talks to the live loop only through the `contracts.live.LiveApi` object
handed to `create_app`; it never opens cameras, serial ports or files on a request's say-so.

- `create_app(api, config)`: the app (blueprints `pages`, `api`, `events`).
- `serve(api, host, port)`: a threaded server for `ponte watch`, with the control token.
"""

from web.app import create_app
from web.server import WebServer, serve

__all__ = ["WebServer", "create_app", "serve"]
