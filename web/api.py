"""The JSON API: the whole state, the controls, the recorded games and their downloads,
and the calibration. Documented in web/README.md; every error is JSON {"error": ...}."""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Callable
from functools import wraps
from threading import Lock
from typing import Any, TypeVar

from flask import Blueprint, Response, current_app, jsonify, request

from contracts.live import ControlError
from contracts.standings import standings
from web.context import live_api
from web.render import board_png, board_svg
from web.replay import ReplayError, replay
from web.security import foreign_request, may_control
from web.validation import BadRequest, check_calibration, check_control

bp = Blueprint("api", __name__)

F = TypeVar("F", bound=Callable[..., Any])


def _error(message: str, status: int) -> tuple[Response, int]:
    return jsonify(error=message), status


def answers_errors(view: F) -> F:
    """Turn BadRequest, ControlError and ReplayError into JSON error answers."""

    @wraps(view)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return view(*args, **kwargs)
        except BadRequest as exc:
            return _error(str(exc), 400)
        except ControlError as exc:
            return _error(str(exc), exc.status if 400 <= exc.status < 600 else 409)
        except ReplayError as exc:
            return _error(str(exc), 422)

    return wrapper  # type: ignore[return-value]


def _json_body() -> Any:
    """The request's JSON body ({} when empty); BadRequest if it is not JSON.

    The JSON content type is required even for an empty body: a page on another site cannot
    send it without the browser asking first (CORS), so it cannot press our buttons.
    """
    if not request.is_json:
        raise BadRequest("send the body as JSON (Content-Type: application/json)")
    raw = request.get_data(cache=False)
    if not raw.strip():
        return {}
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise BadRequest(f"the body is not valid JSON ({exc})"[:160]) from None


def _require_control() -> tuple[Response, int] | None:
    problem = foreign_request()
    if problem:
        return _error(problem, 403)
    if may_control():
        return None
    return _error(
        "the controls need the token printed when the assistant started "
        "(open the link shown on the host's screen)",
        403,
    )


@bp.get("/api/state")
def state() -> Response:
    return jsonify(live_api(current_app).state())


@bp.get("/api/session")
def session() -> Response:
    """What this browser may do."""
    return jsonify(
        may_control=may_control(), token_required=bool(current_app.config["CONTROL_TOKEN"])
    )


@bp.post("/api/control/<action>")
@answers_errors
def control(action: str) -> Any:
    denied = _require_control()
    if denied:
        return denied
    body = _json_body()
    api = live_api(current_app)
    size = int(api.state().get("board", {}).get("size", 10))
    params = check_control(action, body, size)
    return jsonify(api.control(action, params))


@bp.get("/api/games")
@answers_errors
def games() -> Response:
    return jsonify(games=live_api(current_app).games())


@bp.get("/api/standings")
@answers_errors
def standings_table() -> Response:
    """Each player's wins, draws, losses and points over the finished games."""
    return jsonify(standings=standings(live_api(current_app).games()))


@bp.get("/api/games/<int:game_id>")
@answers_errors
def game(game_id: int) -> Response:
    return jsonify(live_api(current_app).game(game_id))


Replayed = tuple[dict[str, str], list[dict[str, Any]]]


class ReplayCache:
    """The last few replays, keyed by game and record text (a game still being played
    has a new text after each move, so it is replayed again)."""

    def __init__(self, size: int = 8) -> None:
        self._size = size
        self._lock = Lock()
        self._items: OrderedDict[tuple[int, str], Replayed] = OrderedDict()

    def get(self, game_id: int, text: str) -> Replayed:
        key = (game_id, text)
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        found = replay(text)
        with self._lock:
            self._items[key] = found
            while len(self._items) > self._size:
                self._items.popitem(last=False)
        return found


def _replayed(game_id: int) -> Replayed:
    cache: ReplayCache = current_app.extensions.setdefault("ponte_replays", ReplayCache())
    return cache.get(game_id, live_api(current_app).export(game_id, "pdd"))


@bp.get("/api/games/<int:game_id>/replay")
@answers_errors
def game_replay(game_id: int) -> Response:
    """The state before the first move and after each move, for stepping through."""
    tags, states = _replayed(game_id)
    return jsonify(tags=tags, states=states)


def _download(body: str | bytes, mimetype: str, filename: str) -> Response:
    response = Response(body, mimetype=mimetype)
    response.headers["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@bp.get("/games/<int:game_id>/download/<fmt>")
@answers_errors
def export(game_id: int, fmt: str) -> Any:
    if fmt == "pdd":
        text = live_api(current_app).export(game_id, "pdd")
        return _download(text, "text/plain", f"game-{game_id}.pdd")
    if fmt == "json":
        text = live_api(current_app).export(game_id, "json")
        return _download(text, "application/json", f"game-{game_id}.json")
    if fmt in ("svg", "png"):
        tags, states = _replayed(game_id)
        title = f"{tags.get('Light', 'Light')} v {tags.get('Dark', 'Dark')}"
        if fmt == "svg":
            svg = board_svg(states[-1], title)
            return _download(svg, "image/svg+xml", f"game-{game_id}.svg")
        return _download(board_png(states[-1]), "image/png", f"game-{game_id}.png")
    return _error(f"no download as {fmt[:10]!r}: choose pdd, json, svg or png", 404)


@bp.get("/games/<int:game_id>/snapshot/<int:ply>.jpg")
@answers_errors
def snapshot(game_id: int, ply: int) -> Any:
    jpeg = live_api(current_app).snapshot(game_id, ply)
    if jpeg is None:
        return _error(f"no snapshot of game {game_id} at move {ply}", 404)
    response = Response(jpeg, mimetype="image/jpeg")
    response.headers["Cache-Control"] = "max-age=3600"
    return response


_NO_CALIBRATION = (
    "this live loop cannot be calibrated from the page (its API has no calibration() / "
    "set_calibration()); use ponte calibrate"
)


@bp.get("/api/calibration")
@answers_errors
def calibration() -> Any:
    api = live_api(current_app)
    getter = getattr(api, "calibration", None)
    if getter is None:
        return _error(_NO_CALIBRATION, 501)
    return jsonify(getter())


@bp.post("/api/calibration")
@answers_errors
def set_calibration() -> Any:
    denied = _require_control()
    if denied:
        return denied
    body = check_calibration(_json_body())
    setter = getattr(live_api(current_app), "set_calibration", None)
    if setter is None:
        return _error(_NO_CALIBRATION, 501)
    return jsonify(setter(body))
