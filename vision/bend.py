"""The board's own printed lines as a measure of the camera's lens.

A wide-angle webcam bends straight lines: the board's edges bow, the outline found for it
is a compromise between bowed sides, and a grid laid by a homography through its corners
misses the printed lines by up to half a cell, so the reader reads the wrong cells from the
first move. The printed grid is itself a pattern of straight lines at known places, so it
can tell how much the picture bends and, when it bends too much, measure a lens that undoes
it, without the chessboard photos of `ponte calibrate-lens`.

`grid_crossings` finds where the 81 inner crossings of the printed lines lie in the image
(the outer lines are left out: the board's edge and border make edges of their own beside
them); `bend_of` says how far they lie from where the located grid puts them, in cells;
`straight_corners` lays a straight grid through them; `lens_from_board` fits a radial lens
(one coefficient, OpenCV's model) together with the board's homography to them. Pure
functions of an image and corners.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import cv2
import numpy as np

from contracts.calibration import Lens, Thresholds
from vision.geometry import SIZE, board_homography, board_to_topdown, topdown_size

_PX = 32
"""Pixels a cell in the top-down view the crossings are measured in."""
_MARGIN = 0.5
"""Cells of margin around the grid in that view."""
_WINDOW = 0.45
"""Cells either side of where a line should cross within which it is looked for."""
_SIGMA = 2.5
"""Pixels (of the view) the edge profile is smoothed by: a printed line's two edges make
one peak, wherever the line is dark on light or light on dark."""


class Crossings(NamedTuple):
    """Measured crossings of the printed lines: where each lies on the board (cells from
    a1's corner, x along the files, y along the ranks) and in the image (pixels)."""

    board: np.ndarray
    """(n, 2) board coordinates, whole numbers 1-9."""
    image: np.ndarray
    """(n, 2) image coordinates where they were found."""


def grid_crossings(settings: Thresholds, image: np.ndarray, corners: np.ndarray) -> Crossings:
    """Where the printed grid's inner lines cross, found within `_WINDOW` of a cell of
    where the grid through `corners` (a1 first) puts them; crossings where either line is
    too faint (`Thresholds.line_prominence`) are left out."""
    gray = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    to_image = board_homography(corners)
    if abs(np.linalg.det(to_image)) < 1e-12:  # corners on a line: no grid to look along
        return Crossings(np.zeros((0, 2)), np.zeros((0, 2)))
    to_view = board_to_topdown(_PX, _MARGIN) @ np.linalg.inv(to_image)
    side = topdown_size(_PX, _MARGIN)
    view = cv2.warpPerspective(gray, to_view, (side, side), flags=cv2.INTER_LINEAR)
    view = view.astype(np.float32)
    reach = int(round(_WINDOW * _PX))
    board, found = [], []
    for i in range(1, SIZE):
        cx = (_MARGIN + i) * _PX
        for j in range(1, SIZE):
            cy = (_MARGIN + SIZE - j) * _PX
            x0, y0 = int(round(cx)), int(round(cy))
            window = view[y0 - reach:y0 + reach + 1, x0 - reach:x0 + reach + 1]
            across, down = _edges(window.mean(axis=0)), _edges(window.mean(axis=1))
            dx = _peak(across, settings.line_prominence)
            dy = _peak(down, settings.line_prominence)
            if dx is None or dy is None:
                continue
            board.append((i, j))
            found.append((x0 - reach + dx, y0 - reach + dy))
    if not found:
        return Crossings(np.zeros((0, 2)), np.zeros((0, 2)))
    board_xy = np.array(board, np.float64)
    in_view = np.array(found, np.float64).reshape(-1, 1, 2)
    to_back = np.linalg.inv(to_view)
    image_xy = cv2.perspectiveTransform(in_view, to_back).reshape(-1, 2)
    return Crossings(board_xy, image_xy)


def _edges(profile: np.ndarray) -> np.ndarray:
    """How sharply a brightness profile changes along it, smoothed (`_SIGMA`): averaged
    across the window before it is differentiated, the camera's noise cancels out."""
    grad = np.abs(np.gradient(profile.astype(np.float64)))
    smoothed: np.ndarray = cv2.GaussianBlur(grad.reshape(1, -1), (0, 0), _SIGMA).ravel()
    return smoothed


def _peak(profile: np.ndarray, prominence: float) -> float | None:
    """Where (sub-pixel, by a parabola) a profile peaks, if it stands out (`prominence`
    times the profile's mean at least) and is not at an end of the window."""
    k = int(profile.argmax())
    if k == 0 or k == len(profile) - 1:
        return None
    top = float(profile[k])
    if top < prominence * float(profile.mean()) or top <= 0.0:
        return None
    a, b, c = (float(v) for v in profile[k - 1:k + 2])
    bend = a - 2.0 * b + c
    return k + (0.5 * (a - c) / bend if bend < 0 else 0.0)


def bend_of(settings: Thresholds, crossings: Crossings, corners: np.ndarray) -> float | None:
    """How far (cells) the printed lines lie from the grid through `corners`, at the worst
    crossing; None when too few crossings were measured to say (`min_crossings`).

    A line's offset across it is taken as the median of three crossings running along it:
    a lens bends a line smoothly, while one crossing can be misplaced alone (a mark or a
    glint on the board beside the line)."""
    if len(crossings.board) < settings.min_crossings:
        return None
    to_board = np.linalg.inv(board_homography(corners))
    seen = cv2.perspectiveTransform(crossings.image.reshape(-1, 1, 2), to_board).reshape(-1, 2)
    off = np.full((2, SIZE + 1, SIZE + 1), np.nan)  # [across x / y, file line, rank line]
    i, j = crossings.board.astype(int).T
    off[0, i, j], off[1, i, j] = (seen - crossings.board).T
    worst = 0.0
    for k in range(1, SIZE):
        # along file line k (its x offsets), then along rank line k (its y offsets)
        for line in (off[0, k, :], off[1, :, k]):
            for at in range(1, SIZE - 2):  # three crossings running, all measured
                run = line[at:at + 3]
                if not np.isnan(run).any():
                    worst = max(worst, abs(float(np.median(run))))
    return worst


def straight_corners(settings: Thresholds, crossings: Crossings) -> np.ndarray | None:
    """The corners (a1 first) of the straight grid that best fits the crossings (least
    median of squares: a crossing taken at a tile's edge or a mark does not pull it); None
    when too few were measured."""
    if len(crossings.board) < settings.min_crossings:
        return None
    to_image = cv2.findHomography(crossings.board, crossings.image, cv2.LMEDS)[0]
    if to_image is None:
        return None
    board = np.array([[0, 0], [SIZE, 0], [SIZE, SIZE], [0, SIZE]], np.float64)
    result: np.ndarray = cv2.perspectiveTransform(board.reshape(-1, 1, 2), to_image).reshape(4, 2)
    return result


def lens_from_board(settings: Thresholds, crossings: Crossings, image_size: tuple[int, int]
                    ) -> Lens | None:
    """A radial lens (OpenCV's model, k1 alone, about the image's centre) that, with a
    homography, puts the board's crossings where they were found; None when too few were
    measured, the fit does not converge, or the lens it gives folds the picture over.

    The focal length stands for the lens's scale only: with k1 alone, the same bending is
    described by any focal length with k1 scaled to it, so none need be measured."""
    if len(crossings.board) < settings.min_crossings:
        return None
    w, h = image_size
    centre = np.array([w / 2.0, h / 2.0])
    scale = float(max(w, h))
    board = np.column_stack([crossings.board, np.ones(len(crossings.board))])
    seen = crossings.image

    def predicted(theta: np.ndarray) -> np.ndarray:
        homography = np.append(theta[:8], 1.0).reshape(3, 3)
        p = board @ homography.T
        ideal = p[:, :2] / p[:, 2:3]
        rel = (ideal - centre) / scale
        result: np.ndarray = centre + scale * rel * (1.0 + theta[8] * (rel**2).sum(axis=1))[:, None]
        return result

    start = cv2.findHomography(crossings.board, seen)[0]
    if start is None:
        return None
    theta = np.append((start / start[2, 2]).ravel()[:8], 0.0)
    keep = np.ones(len(board), bool)
    for _ in range(2):  # fit, drop crossings far off the fit (a tile's edge taken), fit again
        theta = _least_squares(lambda t, kept=keep: (predicted(t) - seen)[kept].ravel(), theta)
        if theta is None:
            return None
        off = np.hypot(*(predicted(theta) - seen).T)
        keep = off <= max(3.0 * float(np.median(off)), 1.0)
    k1 = float(theta[8])
    corners = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float64)
    r2 = float((((corners - centre) / scale) ** 2).sum(axis=1).max())
    if 1.0 + 3.0 * k1 * r2 <= 0.0:  # the lens would fold the image's corners back inwards
        return None
    rms = float(np.sqrt(((predicted(theta) - seen)[keep] ** 2).sum(axis=1).mean()))
    matrix = ((scale, 0.0, centre[0]), (0.0, scale, centre[1]), (0.0, 0.0, 1.0))
    return Lens(matrix, (k1, 0.0, 0.0, 0.0, 0.0), (w, h), rms)


def _least_squares(residual: Callable[[np.ndarray], np.ndarray], theta: np.ndarray,
                   steps: int = 30) -> np.ndarray | None:
    """Levenberg-Marquardt with a numerical Jacobian, for the few parameters above."""
    damping = 1e-3
    r = residual(theta)
    cost = float(r @ r)
    for _ in range(steps):
        eps = np.maximum(np.abs(theta), 1e-8) * 1e-6
        jac = np.column_stack([(residual(theta + e) - r) / e[i]
                               for i, e in enumerate(np.diag(eps))])
        normal = jac.T @ jac
        grad = jac.T @ r
        while True:
            try:
                step = np.linalg.solve(normal + damping * np.diag(np.diag(normal)), -grad)
            except np.linalg.LinAlgError:
                return None
            trial = theta + step
            r_trial = residual(trial)
            cost_trial = float(r_trial @ r_trial)
            if cost_trial < cost:
                theta, r, done = trial, r_trial, cost - cost_trial < 1e-10 * max(cost, 1e-12)
                cost = cost_trial
                damping = max(damping / 3.0, 1e-9)
                break
            damping *= 4.0
            if damping > 1e8:
                return theta if np.isfinite(theta).all() else None
        if done:
            break
    return theta if np.isfinite(theta).all() else None
