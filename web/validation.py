"""Checking what a browser sends before it reaches the live loop: pure functions that
return clean values or raise `BadRequest` with a sentence a person can act on."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

ACTIONS = ("swap", "pass", "confirm", "override", "drop_override", "undo", "new_game",
           "end_game")
"""Every control the page offers, as the live API names them."""

MAX_NAME = 40
_CELL_RE = re.compile(r"([a-z])([1-9][0-9]?)\Z")
_NAME_RE = re.compile(r"[^\x00-\x1f\x7f]+\Z")


class BadRequest(ValueError):
    """Input that cannot be used; the message says what was wrong."""


def check_cell(value: Any, size: int, what: str = "cell") -> str:
    """A cell name on a board of `size`, lower-cased.

    >>> check_cell("D4", 10)
    'd4'
    """
    if not isinstance(value, str):
        raise BadRequest(f"{what} must be a cell name like \"d4\", not {_kind(value)}")
    name = value.strip().lower()
    match = _CELL_RE.match(name)
    if match is None or ord(match.group(1)) - ord("a") >= size or not (
        1 <= int(match.group(2)) <= size
    ):
        last = chr(ord("a") + size - 1) + str(size)
        raise BadRequest(f"{what} {value[:12]!r} is not a cell of the board (a1 .. {last})")
    return name


def check_control(action: str, params: Any, size: int) -> dict[str, Any]:
    """The clean parameters of a control, or BadRequest."""
    if action not in ACTIONS:
        raise BadRequest(f"unknown control {action[:30]!r}; controls are {', '.join(ACTIONS)}")
    if params is None:
        params = {}
    if not isinstance(params, Mapping):
        raise BadRequest(f"the body must be a JSON object, not {_kind(params)}")
    if action == "override":
        return _override(params, size)
    if action == "new_game":
        return _new_game(params)
    if action == "drop_override":
        return _drop_override(params, size)
    _only(params, (), action)
    return {}


def _override(params: Mapping[str, Any], size: int) -> dict[str, Any]:
    if "cell" in params:
        _only(params, ("cell", "value"), "override")
        value = params.get("value")
        if value not in ("light", "dark", "empty"):
            raise BadRequest('value must be "light", "dark" or "empty"')
        return {"cell": check_cell(params["cell"], size), "value": value}
    if "bridge" in params:
        _only(params, ("bridge", "present"), "override")
        ends = params["bridge"]
        if not isinstance(ends, list) or len(ends) != 2:
            raise BadRequest('bridge must be a list of its two end cells, like ["a1", "c1"]')
        a, b = (check_cell(e, size, "bridge end") for e in ends)
        if a == b:
            raise BadRequest("a bridge joins two different cells")
        present = params.get("present")
        if not isinstance(present, bool):
            raise BadRequest("present must be true (the bridge is there) or false")
        return {"bridge": [a, b], "present": present}
    raise BadRequest('override needs "cell" and "value", or "bridge" and "present"')


def _drop_override(params: Mapping[str, Any], size: int) -> dict[str, Any]:
    """{"key": "cell:d4"} or {"key": "bridge:a1-c1"}, as the state's "overrides" names it."""
    _only(params, ("key",), "drop_override")
    key = params.get("key")
    if not isinstance(key, str):
        raise BadRequest('drop_override needs "key", e.g. "cell:d4" or "bridge:a1-c1"')
    kind, _, where = key.partition(":")
    if kind == "cell":
        return {"key": f"cell:{check_cell(where, size)}"}
    if kind == "bridge" and where.count("-") == 1:
        a, b = (check_cell(end, size, "bridge end") for end in where.split("-"))
        return {"key": f"bridge:{a}-{b}"}
    raise BadRequest(f'{key[:30]!r} names no override: use "cell:d4" or "bridge:a1-c1"')


def _new_game(params: Mapping[str, Any]) -> dict[str, Any]:
    _only(params, ("light", "dark", "board", "supply"), "new_game")
    out: dict[str, Any] = {}
    for colour in ("light", "dark"):
        name = params.get(colour, "")
        if not isinstance(name, str):
            raise BadRequest(f"{colour} must be the player's name as text, not {_kind(name)}")
        name = name.strip()
        if len(name) > MAX_NAME:
            raise BadRequest(f"{colour}'s name is longer than {MAX_NAME} characters")
        if name and not _NAME_RE.match(name):
            raise BadRequest(f"{colour}'s name has control characters")
        out[colour] = name or colour.capitalize()
    if "board" in params:
        board = params["board"]
        if isinstance(board, bool) or board not in (10, 12):
            raise BadRequest("board must be 10 or 12")
        out["board"] = board
    if "supply" in params:
        if params["supply"] not in ("physical", "unlimited"):
            raise BadRequest('supply must be "physical" or "unlimited"')
        out["supply"] = params["supply"]
    return out


def check_calibration(body: Any) -> dict[str, Any]:
    """Corners (four [x, y] image points, in order around the board) and the a1 corner."""
    if not isinstance(body, Mapping):
        raise BadRequest(f"the body must be a JSON object, not {_kind(body)}")
    _only(body, ("corners", "a1"), "calibration")
    corners = body.get("corners")
    if not isinstance(corners, list) or len(corners) != 4:
        raise BadRequest("corners must be a list of four [x, y] points")
    clean = []
    for point in corners:
        if (
            not isinstance(point, list)
            or len(point) != 2
            or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in point)
        ):
            raise BadRequest("each corner must be [x, y] in image pixels")
        x, y = float(point[0]), float(point[1])
        if not (-1e5 < x < 1e5 and -1e5 < y < 1e5):
            raise BadRequest("a corner lies far outside the picture")
        clean.append([x, y])
    a1 = body.get("a1", 0)
    if isinstance(a1, bool) or a1 not in (0, 1, 2, 3):
        raise BadRequest("a1 must be the index 0-3 of the corner that is a1")
    return {"corners": clean, "a1": a1}


def _only(params: Mapping[str, Any], allowed: tuple[str, ...], action: str) -> None:
    extra = sorted(str(k) for k in params if k not in allowed)
    if extra:
        takes = f"takes only {', '.join(allowed)}" if allowed else "takes no parameters"
        raise BadRequest(f"{action} {takes} (got {', '.join(extra)[:60]})")


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {str: "text", bool: "true/false", int: "a number", float: "a number",
            list: "a list", dict: "an object"}.get(type(value), type(value).__name__)
