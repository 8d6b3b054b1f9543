"""The HTML pages: Game, Camera, Calibration, Games and one game's replay.

The pages are shells; the JavaScript in web/static draws them from the JSON API and the
event stream. Opening any page with ?token=... (the link shown on the host's screen) stores
the control token in a cookie and drops it from the address bar.
"""

from __future__ import annotations

from typing import Any

from flask import (
    Blueprint,
    Response,
    current_app,
    redirect,
    render_template,
    request,
    url_for,
)
from markupsafe import Markup

from web import qr
from web.security import TOKEN_COOKIE, is_host_screen, may_control, token_matches

bp = Blueprint("pages", __name__)


def _page(template: str, **context: Any) -> Any:
    given = request.args.get("token")
    if given is not None:
        if token_matches(given):
            response = redirect(url_for(request.endpoint or "pages.game",
                                        **(request.view_args or {})))
            response.set_cookie(
                TOKEN_COOKIE, given, httponly=True, samesite="Strict", max_age=7 * 24 * 3600
            )
            return response
        context["notice"] = "That control link is not valid (was the assistant restarted?)."
    control_url = current_app.config.get("CONTROL_URL")
    show_link = bool(current_app.config["CONTROL_TOKEN"] and control_url and is_host_screen())
    html = render_template(
        template,
        may_control=may_control(),
        token_required=bool(current_app.config["CONTROL_TOKEN"]),
        control_url=control_url if show_link else None,
        control_qr=Markup(qr.to_svg(qr.encode(control_url), scale=5))
        if show_link and control_url
        else None,
        page=template.removesuffix(".html"),
        **context,
    )
    response = Response(html, mimetype="text/html")
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "no-referrer"
    response.headers["Content-Security-Policy"] = (
        "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
        "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
    )
    return response


@bp.get("/")
def game() -> Any:
    return _page("game.html")


@bp.get("/camera")
def camera() -> Any:
    return _page("camera.html")


@bp.get("/calibration")
def calibration() -> Any:
    return _page("calibration.html")


@bp.get("/games")
def games() -> Any:
    return _page("games.html")


@bp.get("/games/<id:game_id>")
def game_replay(game_id: int) -> Any:
    return _page("replay.html", game_id=game_id)
