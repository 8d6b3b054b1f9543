"""Simple flat drawings of a board for the vision unit tests (no 3D, no noise).

The synthetic scene generator (lab.synth) makes the realistic frames; these drawings are
small, exact fixtures for the stage functions.
"""

from __future__ import annotations

import cv2
import numpy as np

CELL = 40
BORDER = 24


def draw_board(
    rows: list[str] | None = None,
    *,
    board_bgr: tuple[int, int, int] = (150, 200, 215),
    line_bgr: tuple[int, int, int] = (60, 80, 90),
    light_bgr: tuple[int, int, int] = (220, 240, 245),
    dark_bgr: tuple[int, int, int] = (40, 40, 150),
    bridges: list[tuple[tuple[int, int], tuple[int, int]]] = (),  # type: ignore[assignment]
) -> np.ndarray:
    """A top-down board image: border, grid lines, tiles ('L'/'D' in rows, top rank first)."""
    side = 2 * BORDER + 10 * CELL
    img = np.full((side, side, 3), board_bgr, np.uint8)
    for k in range(11):
        p = BORDER + k * CELL
        cv2.line(img, (p, BORDER), (p, BORDER + 10 * CELL), line_bgr, 2)
        cv2.line(img, (BORDER, p), (BORDER + 10 * CELL, p), line_bgr, 2)
    for r, row in enumerate(rows or []):
        for f, ch in enumerate(row):
            if ch in "LD":
                x0, y0 = BORDER + f * CELL + 3, BORDER + r * CELL + 3
                colour = light_bgr if ch == "L" else dark_bgr
                cv2.rectangle(img, (x0, y0), (x0 + CELL - 7, y0 + CELL - 7), colour, -1)
    for a, b in bridges:
        pa = _centre(a)
        pb = _centre(b)
        cv2.line(img, pa, pb, (128, 128, 128), CELL // 3)
    return img


def _centre(cell: tuple[int, int]) -> tuple[int, int]:
    f, rank = cell
    return (BORDER + f * CELL + CELL // 2, BORDER + (9 - rank) * CELL + CELL // 2)


def place_in_scene(
    board: np.ndarray,
    corners: list[tuple[float, float]],
    size: tuple[int, int] = (1280, 720),
    table_bgr: tuple[int, int, int] = (70, 110, 140),
) -> tuple[np.ndarray, np.ndarray]:
    """Warp a top-down board onto a table; corners are the board's TL, TR, BR, BL in the image.

    Returns the image and the grid's outer corners in the image (TL, TR, BR, BL).
    """
    w, h = size
    side = board.shape[0]
    src = np.array([[0, 0], [side, 0], [side, side], [0, side]], np.float32)
    dst = np.array(corners, np.float32)
    hom = cv2.getPerspectiveTransform(src, dst)
    scene = np.full((h, w, 3), table_bgr, np.uint8)
    warped = cv2.warpPerspective(board, hom, (w, h), flags=cv2.INTER_LINEAR)
    mask = cv2.warpPerspective(np.full(board.shape[:2], 255, np.uint8), hom, (w, h))
    scene[mask > 127] = warped[mask > 127]
    g0, g1 = BORDER, BORDER + 10 * CELL
    grid = np.array([[g0, g0], [g1, g0], [g1, g1], [g0, g1]], np.float32).reshape(-1, 1, 2)
    grid_img = cv2.perspectiveTransform(grid, hom).reshape(4, 2)
    return scene, grid_img
