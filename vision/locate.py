"""Stage 1: find the board in the image, markerless (outline + grid) or by ArUco markers.

The board is a printed 10 x 10 grid, usually inside a border. `locate_board` finds the
board's outline as the largest convex quadrilateral of edges, refines each side to a
sub-pixel straight line, warps the quadrilateral to a square and finds the grid in it as
the 11 evenly spaced lines each way that best explain the edge profile. It returns the
grid's four outer corners in image coordinates, in the image's visual order (top-left,
top-right, bottom-right, bottom-left); `orient_corners` turns them into a1-first order.
"""

from __future__ import annotations

from typing import NamedTuple

import cv2
import numpy as np

from calibration.format import A1Corner, Thresholds
from vision.errors import BoardNotFound
from vision.imageio import check_image

SIZE = 10
_SQUARE = 480  # side of the square the outline is warped to when looking for the grid

Corners = np.ndarray
"""Four (x, y) float points, shape (4, 2)."""


def locate_board(settings: Thresholds, image: np.ndarray, *, markers: bool = False) -> Corners:
    """The grid's outer corners (TL, TR, BR, BL as the image shows them), sub-pixel.

    With `markers`, the board outline comes from the four ArUco corner markers
    (see `vision.markers`) and only the grid is searched for. Without, markers in view
    still fence the search: only outlines within them are considered.
    """
    check_image(image)
    if markers:
        return _locate_by_markers(settings, image)
    scale = min(1.0, settings.work_long_side / max(image.shape[:2]))
    small = image if scale == 1.0 else cv2.resize(
        image, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA
    )
    gray = cv2.cvtColor(small, cv2.COLOR_BGR2GRAY)
    maps = _edge_maps(small)
    fence = _marker_fence(small)
    best: tuple[float, Corners] | None = None
    for quad in _candidate_quads(maps, settings.min_board_area):
        if fence is not None and not all(
            cv2.pointPolygonTest(fence, (float(x), float(y)), True) > -2 for x, y in quad
        ):
            continue  # printed markers stand outside the board: the board lies within them
        outline = _refine_quad(maps[0], quad)
        grid = _find_grid(gray, outline, settings)
        if grid is None:
            continue
        if grid.share < _MIN_GRID_SHARE:
            continue
        rank = grid.sharpness * float(cv2.contourArea(outline.astype(np.float32))) ** 0.25
        if best is None or rank > best[0]:
            best = (rank, grid.corners)
    if best is None:
        raise BoardNotFound("no board outline with a 10 x 10 grid found in the image")
    return best[1] / scale


_MIN_GRID_SHARE = 2.2


def _marker_fence(image: np.ndarray) -> np.ndarray | None:
    """The quadrilateral of the ArUco corner markers' inner corners when all four are in
    view (float32 contour), else None."""
    from vision.markers import find_marker_outline

    try:
        quad = order_visually(find_marker_outline(image))
    except BoardNotFound:
        return None
    return quad.astype(np.float32).reshape(-1, 1, 2)


def _locate_by_markers(settings: Thresholds, image: np.ndarray) -> Corners:
    from vision.markers import find_marker_outline

    outline = order_visually(find_marker_outline(image))
    gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    grid = _find_grid(gray, outline, settings)
    if grid is None:
        raise BoardNotFound("no 10 x 10 grid found between the ArUco corner markers")
    return grid.corners


def order_visually(points: np.ndarray) -> Corners:
    """Four points in the order top-left, top-right, bottom-right, bottom-left."""
    pts = np.asarray(points, dtype=np.float64).reshape(4, 2)
    centre = pts.mean(axis=0)
    angles = np.arctan2(pts[:, 1] - centre[1], pts[:, 0] - centre[0])
    ordered = pts[np.argsort(angles)]  # from about -180 degrees: TL, TR, BR, BL
    return ordered


_IMAGE_CORNER = {
    A1Corner.TOP_LEFT: (0.0, 0.0),
    A1Corner.TOP_RIGHT: (1.0, 0.0),
    A1Corner.BOTTOM_RIGHT: (1.0, 1.0),
    A1Corner.BOTTOM_LEFT: (0.0, 1.0),
}


def orient_corners(corners: Corners, a1: A1Corner, image_size: tuple[int, int]) -> Corners:
    """Grid corners in board order (a1, j1, j10, a10) from corners in visual order.

    a1 is the corner nearest the chosen image corner; j1 is the next corner counter-clockwise
    as the image shows it, so the board is turned, never mirrored.
    """
    pts = order_visually(corners)
    w, h = image_size
    ux, uy = _IMAGE_CORNER[a1]
    target = np.array([ux * w, uy * h])
    i = int(np.argmin(np.linalg.norm(pts - target, axis=1)))
    # Visual order TL, TR, BR, BL runs clockwise on screen; counter-clockwise is index - 1.
    return np.array([pts[(i - k) % 4] for k in range(4)])


def _edge_maps(image: np.ndarray) -> list[np.ndarray]:
    """Edge maps from fine to coarse: table texture and noise fade out at the coarse end."""
    lab = cv2.cvtColor(image, cv2.COLOR_BGR2Lab)
    maps = []
    for blur, factor in ((5, 0.5), (9, 1.0), (15, 1.6)):
        smooth = cv2.GaussianBlur(lab, (blur, blur), 0)
        edges = np.zeros(image.shape[:2], np.uint8)
        for channel in cv2.split(smooth):
            median = float(np.median(channel))
            high = max(12.0, 0.5 * median) * factor
            edges |= cv2.Canny(channel, high * 0.5, high)
        maps.append(edges)
    return maps


def _candidate_quads(edge_maps: list[np.ndarray], min_area_fraction: float) -> list[np.ndarray]:
    h, w = edge_maps[0].shape
    min_area = min_area_fraction * h * w
    quads: list[tuple[float, np.ndarray]] = []
    for edges in edge_maps:
        closed = cv2.dilate(edges, np.ones((3, 3), np.uint8))
        contours, _ = cv2.findContours(closed, cv2.RETR_LIST, cv2.CHAIN_APPROX_SIMPLE)
        for contour in contours:
            hull = cv2.convexHull(contour)
            area = cv2.contourArea(hull)
            if area < min_area:
                continue
            quad = _approx_quad(hull)
            if quad is None:
                continue
            if cv2.contourArea(quad.astype(np.float32)) < 0.85 * area:
                continue
            if (quad[:, 0].min() < 2 or quad[:, 1].min() < 2 or quad[:, 0].max() > w - 3
                    or quad[:, 1].max() > h - 3):
                continue
            quads.append((area, quad))
    quads.sort(key=lambda item: -item[0])
    unique: list[np.ndarray] = []
    for _, quad in quads:
        if all(np.abs(order_visually(quad) - order_visually(q)).max() > 4 for q in unique):
            unique.append(quad)
    return unique[:10]


def _approx_quad(hull: np.ndarray) -> np.ndarray | None:
    perimeter = cv2.arcLength(hull, True)
    for fraction in (0.01, 0.02, 0.03, 0.05, 0.08):
        approx = cv2.approxPolyDP(hull, fraction * perimeter, True)
        if len(approx) == 4:
            return approx.reshape(4, 2).astype(np.float64)
        if len(approx) < 4:
            return None
    return None


def _refine_quad(edges: np.ndarray, quad: np.ndarray) -> Corners:
    """Fit a straight line to the edge pixels along each side; intersect neighbours."""
    pts = order_visually(quad)
    ys, xs = np.nonzero(edges)
    edge_pts = np.column_stack([xs, ys]).astype(np.float64)
    lines = []
    for i in range(4):
        p, q = pts[i], pts[(i + 1) % 4]
        d = q - p
        length = float(np.hypot(*d))
        if length < 1:
            return pts
        n = np.array([-d[1], d[0]]) / length
        rel = edge_pts - p
        along = rel @ d / length**2
        across = rel @ n
        band = max(2.0, 0.006 * length)
        sel = (np.abs(across) < band) & (along > 0.08) & (along < 0.92)
        if sel.sum() < 10:
            lines.append((p, d / length))
            continue
        vx, vy, x0, y0 = cv2.fitLine(
            edge_pts[sel].astype(np.float32), cv2.DIST_HUBER, 0, 0.01, 0.01
        ).ravel()
        lines.append((np.array([x0, y0], np.float64), np.array([vx, vy], np.float64)))
    out = []
    for i in range(4):
        (p1, d1), (p2, d2) = lines[(i - 1) % 4], lines[i]
        a = np.array([d1, -d2]).T
        if abs(np.linalg.det(a)) < 1e-9:
            return pts
        t = np.linalg.solve(a, p2 - p1)
        out.append(p1 + t[0] * d1)
    refined = np.array(out)
    if np.abs(refined - pts).max() > 0.05 * np.ptp(pts[:, 0]) + 5:
        return pts
    return refined


class _Grid(NamedTuple):
    """A 10 x 10 grid found inside an outline: how well it fits and where it is."""

    sharpness: float
    """The median line's peak over the mean edge strength (the poorer axis): high when the
    outline is exact, so the warped lines are straight and sharp; ranks the candidates."""
    share: float
    """The median line's share of the edge strength (the poorer axis, see `_line_share`):
    robust to blur; says whether there is a grid at all."""
    corners: Corners


def _find_grid(gray: np.ndarray, outline: Corners, settings: Thresholds) -> _Grid | None:
    """Find the 10 x 10 grid inside a board outline."""
    square = np.array(
        [[0, 0], [_SQUARE, 0], [_SQUARE, _SQUARE], [0, _SQUARE]], dtype=np.float64
    )
    to_square = cv2.getPerspectiveTransform(outline.astype(np.float32), square.astype(np.float32))
    warped = cv2.warpPerspective(gray, to_square, (_SQUARE, _SQUARE), flags=cv2.INTER_LINEAR)
    warped = cv2.GaussianBlur(warped, (3, 3), 0)
    gx = np.abs(cv2.Sobel(warped, cv2.CV_32F, 1, 0, ksize=3))
    gy = np.abs(cv2.Sobel(warped, cv2.CV_32F, 0, 1, ksize=3))
    fits = []
    for grad, axis in ((gx, 0), (gy, 1)):
        inner = grad[8:-8, :] if axis == 0 else grad[:, 8:-8]
        profile = _robust_profile(inner, axis)
        fit = _fit_lines(profile, settings.grid_min_cells_span)
        if fit is None:
            return None
        fits.append(fit)
    (hx, sx, ox, px), (hy, sy, oy, py) = fits
    if max(px, py) > 1.3 * min(px, py):
        return None
    grid_sq = np.array(
        [[ox, oy], [ox + SIZE * px, oy], [ox + SIZE * px, oy + SIZE * py], [ox, oy + SIZE * py]]
    )
    back = np.linalg.inv(to_square)
    pts = cv2.perspectiveTransform(grid_sq.reshape(-1, 1, 2), back).reshape(4, 2)
    return _Grid(min(hx, hy), min(sx, sy), pts)


def _robust_profile(grad: np.ndarray, axis: int) -> np.ndarray:
    """Edge strength across the square: mean over the other axis of clipped gradients."""
    clipped = np.minimum(grad, np.percentile(grad, 99))
    profile = clipped.mean(axis=axis)
    profile = cv2.GaussianBlur(profile.reshape(1, -1).astype(np.float32), (0, 0), 1.2).ravel()
    base = cv2.blur(profile.reshape(1, -1), (41, 1)).ravel()
    return np.maximum(profile - base, 0.0)


def _fit_lines(
    profile: np.ndarray, min_span: float
) -> tuple[float, float, float, float] | None:
    """The 11 evenly spaced lines that collect the most edge strength: (sharpness, share,
    offset, pitch), see `_Grid`."""
    n = len(profile)
    xs = np.arange(n, dtype=np.float64)
    best: tuple[float, float, float] | None = None
    k = np.arange(SIZE + 1, dtype=np.float64)
    for pitch in np.arange(min_span * n / SIZE, n / SIZE + 0.01, 0.5):
        # A printed board's border is as wide on both sides: keep the grid near the middle.
        centred = (n - SIZE * pitch) / 2
        offsets = np.arange(max(0.0, centred - 0.5 * pitch), centred + 0.5 * pitch + 0.01, 0.5)
        offsets = offsets[offsets <= n - SIZE * pitch + 0.01]
        if len(offsets) == 0:
            continue
        pos = offsets[:, None] + pitch * k[None, :]
        vals = np.interp(pos, xs, profile).sum(axis=1)
        j = int(np.argmax(vals))
        if best is None or vals[j] > best[0]:
            best = (float(vals[j]), float(offsets[j]), float(pitch))
    if best is None:
        return None
    _, offset, pitch = best
    offset, pitch = _polish(profile, offset, pitch)
    peaks = np.interp(offset + pitch * k, xs, profile)
    sharpness = float(np.median(peaks)) / (float(profile.sum()) / n + 1e-9)
    return sharpness, _line_share(profile, offset, pitch), offset, pitch


def _line_share(profile: np.ndarray, offset: float, pitch: float) -> float:
    """How much denser the edge strength is near the median line than on average.

    Each line collects the strength within 0.15 pitch either side, so a blurred line
    (a dim, noisy webcam, a small board) scores as well as a sharp one: blur spreads a
    line's strength without losing it. The median line counts: a printed grid has all
    eleven lines, noise a few spikes. Evenly spread strength scores 1.
    """
    n = len(profile)
    mean = float(profile.sum()) / n + 1e-9
    cumulative = np.concatenate([[0.0], np.cumsum(profile, dtype=np.float64)])
    edges = np.arange(n + 1, dtype=np.float64)  # pixel i spans edges i to i + 1
    centres = 0.5 + offset + pitch * np.arange(SIZE + 1, dtype=np.float64)
    lo = np.clip(centres - _LINE_WINDOW * pitch, 0.0, n)
    hi = np.clip(centres + _LINE_WINDOW * pitch, 0.0, n)
    width = np.maximum(hi - lo, 1.0)
    strength = (np.interp(hi, edges, cumulative) - np.interp(lo, edges, cumulative)) / width
    return float(np.median(strength)) / mean


_LINE_WINDOW = 0.15  # a line collects the strength within this fraction of a pitch each side


def _polish(profile: np.ndarray, offset: float, pitch: float) -> tuple[float, float]:
    """Refine offset and pitch to sub-pixel by a least-squares fit to each line's peak."""
    peaks = []
    n = len(profile)
    for k in range(SIZE + 1):
        c = offset + k * pitch
        lo, hi = max(0, int(c - pitch * 0.2)), min(n, int(c + pitch * 0.2) + 1)
        seg = profile[lo:hi]
        if seg.sum() <= 0:
            continue
        peaks.append((k, float((seg * np.arange(lo, hi)).sum() / seg.sum())))
    if len(peaks) < 6:
        return offset, pitch
    ks = np.array([p[0] for p in peaks], np.float64)
    cs = np.array([p[1] for p in peaks], np.float64)
    slope, intercept = np.polyfit(ks, cs, 1)
    if abs(slope - pitch) > 0.1 * pitch:
        return offset, pitch
    return float(intercept), float(slope)
