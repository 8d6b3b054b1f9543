"""The final board of a game as a picture: SVG text (pure) and PNG bytes (drawn with
OpenCV, which the project already depends on). Drawn from `referee.view.game_state`."""

from __future__ import annotations

from html import escape
from typing import Any

CELL = 40
MARGIN = 28
TILE_FILL = {"light": "#f3e6c4", "dark": "#7a2e1f"}
TILE_EDGE = {"light": "#8c7a4f", "dark": "#3d140c"}
BRIDGE_FILL = {"light": "#fbf3dc", "dark": "#a04a36"}


def _xy(name: str, size: int) -> tuple[float, float]:
    """The centre of a cell in picture coordinates (rank 1 at the bottom)."""
    file = ord(name[0]) - ord("a")
    rank = int(name[1:]) - 1
    return MARGIN + (file + 0.5) * CELL, MARGIN + (size - rank - 0.5) * CELL


def board_svg(state: dict[str, Any], title: str = "") -> str:
    """A standalone SVG picture of the board in `state` (tiles, bridges, blocked and
    flagged cells, joined groups' points)."""
    board = state["board"]
    size = int(board["size"])
    side = 2 * MARGIN + size * CELL
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {side} {side}" '
        f'width="{side}" height="{side}" font-family="sans-serif">',
        f"<title>{escape(title or 'Ponte del Diavolo board')}</title>",
        '<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" '
        'patternTransform="rotate(45)"><line x1="0" y1="0" x2="0" y2="6" '
        'stroke="#5b7f95" stroke-width="2"/></pattern></defs>',
        f'<rect width="{side}" height="{side}" fill="#ffffff"/>',
        f'<rect x="{MARGIN}" y="{MARGIN}" width="{size * CELL}" height="{size * CELL}" '
        'fill="#cfe3ee" stroke="#35576b" stroke-width="2"/>',
    ]
    for k in range(size):
        x = MARGIN + (k + 0.5) * CELL
        y = MARGIN + (size - k - 0.5) * CELL
        out.append(f'<text x="{x}" y="{MARGIN - 9}" font-size="12" text-anchor="middle">'
                   f"{chr(ord('a') + k)}</text>")
        out.append(f'<text x="{MARGIN - 8}" y="{y + 4}" font-size="12" text-anchor="end">'
                   f"{k + 1}</text>")
    for k in range(1, size):
        p = MARGIN + k * CELL
        out.append(f'<line x1="{p}" y1="{MARGIN}" x2="{p}" y2="{MARGIN + size * CELL}" '
                   'stroke="#9dbccd"/>')
        out.append(f'<line x1="{MARGIN}" y1="{p}" x2="{MARGIN + size * CELL}" y2="{p}" '
                   'stroke="#9dbccd"/>')
    for name in board["blocked"]:
        x, y = _xy(name, size)
        out.append(f'<rect x="{x - CELL / 2}" y="{y - CELL / 2}" width="{CELL}" '
                   f'height="{CELL}" fill="url(#hatch)"/>')
    for name, colour in board["tiles"].items():
        x, y = _xy(name, size)
        out.append(f'<rect x="{x - CELL / 2 + 3}" y="{y - CELL / 2 + 3}" width="{CELL - 6}" '
                   f'height="{CELL - 6}" rx="4" fill="{TILE_FILL[colour]}" '
                   f'stroke="{TILE_EDGE[colour]}" stroke-width="2"/>')
    for bridge in board["bridges"]:
        (x1, y1), (x2, y2) = _xy(bridge["from"], size), _xy(bridge["to"], size)
        colour = bridge["colour"]
        out.append(f'<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" stroke="#222" '
                   'stroke-width="13" stroke-linecap="round"/>')
        out.append(f'<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" '
                   f'stroke="{BRIDGE_FILL[colour]}" stroke-width="9" stroke-linecap="round"/>')
    for flag in state.get("flags", []):
        for name in flag.get("cells", []):
            x, y = _xy(name, size)
            out.append(f'<path d="M{x - 14} {y - 14}L{x + 14} {y + 14}M{x + 14} {y - 14}'
                       f'L{x - 14} {y + 14}" stroke="#d12" stroke-width="4"/>')
    return "\n".join(out) + "\n</svg>\n"


def board_png(state: dict[str, Any]) -> bytes:
    """The same picture as `board_svg`, as PNG bytes."""
    import cv2
    import numpy as np

    board = state["board"]
    size = int(board["size"])
    side = 2 * MARGIN + size * CELL
    img = np.full((side, side, 3), 255, np.uint8)

    def bgr(hex_colour: str) -> tuple[int, int, int]:
        r, g, b = (int(hex_colour[k : k + 2], 16) for k in (1, 3, 5))
        return (b, g, r)

    def pt(x: float, y: float) -> tuple[int, int]:
        return (round(x), round(y))

    top, bottom = MARGIN, MARGIN + size * CELL
    cv2.rectangle(img, (top, top), (bottom, bottom), bgr("#cfe3ee"), -1)
    for k in range(1, size):
        p = MARGIN + k * CELL
        cv2.line(img, (p, top), (p, bottom), bgr("#9dbccd"), 1)
        cv2.line(img, (top, p), (bottom, p), bgr("#9dbccd"), 1)
    cv2.rectangle(img, (top, top), (bottom, bottom), bgr("#35576b"), 2)
    font = cv2.FONT_HERSHEY_SIMPLEX
    for k in range(size):
        x = MARGIN + (k + 0.5) * CELL
        y = MARGIN + (size - k - 0.5) * CELL
        cv2.putText(img, chr(ord("a") + k), pt(x - 4, MARGIN - 9), font, 0.4, (0, 0, 0), 1,
                    cv2.LINE_AA)
        cv2.putText(img, str(k + 1), pt(4, y + 4), font, 0.4, (0, 0, 0), 1, cv2.LINE_AA)
    for name in board["blocked"]:
        x, y = _xy(name, size)
        for d in range(-CELL, CELL, 6):
            cv2.line(img, pt(x - CELL / 2 + max(0, d), y + CELL / 2 - max(0, -d)),
                     pt(x + CELL / 2 - max(0, -d), y - CELL / 2 + max(0, d)),
                     bgr("#5b7f95"), 1, cv2.LINE_AA)
    for name, colour in board["tiles"].items():
        x, y = _xy(name, size)
        a, b = pt(x - CELL / 2 + 3, y - CELL / 2 + 3), pt(x + CELL / 2 - 3, y + CELL / 2 - 3)
        cv2.rectangle(img, a, b, bgr(TILE_FILL[colour]), -1)
        cv2.rectangle(img, a, b, bgr(TILE_EDGE[colour]), 2)
    for bridge in board["bridges"]:
        p1, p2 = pt(*_xy(bridge["from"], size)), pt(*_xy(bridge["to"], size))
        cv2.line(img, p1, p2, (34, 34, 34), 13, cv2.LINE_AA)
        cv2.line(img, p1, p2, bgr(BRIDGE_FILL[bridge["colour"]]), 9, cv2.LINE_AA)
    for flag in state.get("flags", []):
        for name in flag.get("cells", []):
            x, y = _xy(name, size)
            cv2.line(img, pt(x - 14, y - 14), pt(x + 14, y + 14), (34, 17, 209), 4)
            cv2.line(img, pt(x + 14, y - 14), pt(x - 14, y + 14), (34, 17, 209), 4)
    ok, data = cv2.imencode(".png", img)
    if not ok:
        raise RuntimeError("OpenCV could not encode the PNG")
    return bytes(data.tobytes())
