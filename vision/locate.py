"""Stage 1: find the board in the image, markerless (outline + grid) or by ArUco markers.

The board is a printed 10 x 10 grid, usually inside a border. `locate_board` finds the
board's outline as the largest convex quadrilateral of edges, refines each side to a
sub-pixel straight line, warps the quadrilateral to a square and finds the grid in it as
the 11 evenly spaced lines each way that best explain the edge profile. When no outline
holds a grid (a window bar's hard shadow or an arm across the outline joins it to the
table's edges), the grid is found from its cells instead: the small quadrilaterals lying
side by side, numbered and fitted with a perspective. It returns the grid's four outer
corners in image coordinates, in the image's visual order (top-left, top-right,
bottom-right, bottom-left); `orient_corners` turns them into a1-first order.
"""

from __future__ import annotations

from typing import NamedTuple

import cv2
import numpy as np

from contracts.calibration import A1Corner, Thresholds
from vision.errors import BoardNotFound
from vision.imageio import check_image

SIZE = 10
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
    quads = _candidate_quads(maps, settings.min_board_area)
    found = _best_grid(settings, _graded(
        gray, [_refine_quad(maps[0], q) for q in quads if _inside(fence, q)], settings))
    if found is None:
        # Something crossing the outline (a window bar's hard shadow, an arm) joins its edges
        # to the table's, so no contour is the board's quadrilateral; the grid's own cells
        # still are small quadrilaterals side by side. In a dim, noisy photo they are
        # closed only in the smoother edge maps.
        seen: list[tuple[Corners, GridFit]] = []
        for edges in maps:
            rough = [_around(g, 0.5) for g in _grids_from_cells(gray, edges, settings)]
            graded = _graded(gray, [o for o in rough if _inside(fence, o)], settings)
            found = _best_grid(settings, graded, image=small)
            if found is not None:
                break
            seen += graded
        if found is None:
            # A grid printed in a dark colour next to a dark border: its outermost lines
            # stand out on one side only (`faint_rimmed`).
            found = _best_grid(settings, seen, image=small, faint_rim=True)
        for edges in maps if found is None else []:
            # Tiles left on the table beside the board are quadrilaterals of a cell's size
            # too, and join the cells' group: only cells lying in a lattice are grouped.
            rough = [_around(g, 0.5) for g in _grids_from_cells(gray, edges, settings,
                                                                lattice=True)]
            graded = _graded(gray, [o for o in rough if _inside(fence, o)], settings)
            found = _best_grid(settings, graded, image=small)
            if found is None:
                found = _best_grid(settings, graded, image=small, faint_rim=True)
            if found is not None:
                break
    if found is None:
        raise BoardNotFound("no board outline with a 10 x 10 grid found in the image")
    return found / scale


def _inside(fence: np.ndarray | None, quad: np.ndarray) -> bool:
    """Whether an outline lies within the printed markers' fence (if there is one): the
    markers stand outside the board."""
    return fence is None or all(
        cv2.pointPolygonTest(fence, (float(x), float(y)), True) > -2 for x, y in quad
    )


def _graded(gray: np.ndarray, outlines: list[Corners], settings: Thresholds
            ) -> list[tuple[Corners, GridFit]]:
    """The outlines that hold a grid (`Thresholds.grid_min_share`), each with the grid found
    in it."""
    graded = []
    for outline in outlines:
        grid = _find_grid(gray, outline, settings)
        if grid is not None and grid.share >= settings.grid_min_share:
            graded.append((outline, grid))
    return graded


def _best_grid(
    settings: Thresholds, graded: list[tuple[Corners, GridFit]], *, image: np.ndarray | None = None,
    faint_rim: bool = False,
) -> Corners | None:
    """The grid corners of the outline whose grid ranks best (`graded`: see `_graded`), or
    None when none is taken.

    Sharp lines in a large outline rank high, and a grid whose weakest line is faint ranks
    lower: one numbered a row or column off has a line on the border, where none is printed.
    Outlines found from cells come with the colour `image`: then every one of the eleven
    lines each way must stand out (no border tells the board from a smaller grid or a
    chessboard), and the border must look as a shadow could leave it (see
    `_border_is_bare`): the outline failed because of a shadow, not a hand. With
    `faint_rim`, the two outermost lines each way may be fainter, alike (`faint_rimmed`).
    """
    best: tuple[float, Corners] | None = None
    for outline, grid in graded:
        if image is not None and (
            not (faint_rimmed(settings, grid) if faint_rim
                 else grid.weakest >= settings.line_min_share)
            or not _border_is_bare(settings, image, grid.corners)
        ):
            continue
        rank = grid.sharpness * float(cv2.contourArea(outline.astype(np.float32))) ** 0.25
        rank *= min(1.0, grid.weakest / settings.line_full_share)
        if best is None or rank > best[0]:
            best = (rank, grid.corners)
    return None if best is None else best[1]


def faint_rimmed(settings: Thresholds, grid: GridFit) -> bool:
    """Whether every line of a grid stands out but its outermost ones, which stand out less,
    about alike: a grid printed in a dark colour beside a dark border, whose outermost lines
    have an edge on their inner side only (such outermost lines can come to about a third
    of the inner lines' edge strength). Numbered a line off, a grid has one end on the
    border and one on a full line: unlike."""
    for shares in grid.lines:
        inner, rim = shares[1:-1], shares[[0, -1]]
        if inner.min() < settings.line_min_share or rim.min() < settings.rim_min_share:
            return False
        if rim.max() > settings.rim_alike * rim.min():
            return False
    return True


def _border_is_bare(settings: Thresholds, image: np.ndarray, corners: Corners) -> bool:
    """Whether the border just outside the grid shows nothing but the board and its light.

    The border is sampled all round, a fifth of a cell outside the grid, and each sample
    is compared with the median of its neighbours along the ring: a shadow darkens the
    border and keeps its hue; a hand, an arm or a sleeve changes the hue (more than the
    photo's noise does) or is brighter. Brightness is taken as the mean of three depths,
    a fifth to three tenths of a cell out: a thin printed line there, sharply
    photographed, makes the samples of one depth flicker.
    """
    to_image = _grid_to_image(corners)
    steps = (np.arange(2 * SIZE) + 0.5) / 2
    h, w = image.shape[:2]
    pitch = float(np.sqrt(cv2.contourArea(corners.astype(np.float32)))) / SIZE
    size = max(3, int(0.15 * pitch) | 1)
    smooth = cv2.blur(image, (size, size)).astype(np.float64)
    samples = []
    for depth in _RING_OUT:
        out = -depth
        ring = np.concatenate([
            np.column_stack([steps, np.full_like(steps, out)]),
            np.column_stack([np.full_like(steps, SIZE - out), steps]),
            np.column_stack([steps[::-1], np.full_like(steps, SIZE - out)]),
            np.column_stack([np.full_like(steps, out), steps[::-1]]),
        ])
        at = cv2.perspectiveTransform(ring.reshape(-1, 1, 2).astype(np.float32), to_image)
        at = np.rint(at.reshape(-1, 2)).astype(int)
        if at.min() < 0 or at[:, 0].max() >= w or at[:, 1].max() >= h:
            return False
        samples.append(smooth[at[:, 1], at[:, 0]] + 1.0)
    bgr = samples[0]
    light = np.mean(samples, axis=0).sum(axis=1)
    hue = bgr / bgr.sum(axis=1)[:, None]
    n = len(bgr)
    off_hue = np.empty(n)
    for i in range(n):
        near = [(i + k) % n for k in range(-_RING_SPAN, _RING_SPAN + 1) if k]
        off_hue[i] = float(np.abs(hue[i] - np.median(hue[near], axis=0)).max())
        if light[i] > settings.bare_rim_brighter * float(np.median(light[near])):
            return False
    # A dim, noisy photo's hue varies from sample to sample by itself.
    typical = settings.bare_rim_noise * float(np.median(off_hue))
    return float(off_hue.max()) <= max(settings.bare_rim_hue, typical)


_RING_OUT = (0.2, 0.25, 0.3)  # cells outside the grid: inside any printed border
_RING_SPAN = 4  # neighbours each way a border sample is compared with


def _grid_to_image(corners: Corners) -> np.ndarray:
    """The perspective from grid units (0..SIZE, TL first) to a grid's corners in the image."""
    unit = np.array([[0, 0], [SIZE, 0], [SIZE, SIZE], [0, SIZE]], np.float32)
    result: np.ndarray = cv2.getPerspectiveTransform(unit, corners.astype(np.float32))
    return result


def _around(corners: Corners, margin: float) -> Corners:
    """The outline `margin` cells outside a grid's corners (TL, TR, BR, BL), in perspective."""
    to_image = _grid_to_image(corners)
    out = np.array([[-margin, -margin], [SIZE + margin, -margin],
                    [SIZE + margin, SIZE + margin], [-margin, SIZE + margin]], np.float32)
    return cv2.perspectiveTransform(out.reshape(-1, 1, 2), to_image).reshape(4, 2).astype(
        np.float64
    )


def _grids_from_cells(
    gray: np.ndarray, edges: np.ndarray, settings: Thresholds, *, lattice: bool = False
) -> list[Corners]:
    """Grid corners found from the grid's cells rather than from the board's outline.

    The cells are the small quadrilateral contours of similar size lying side by side; a
    cell is linked to another of about its size up to three cells away, so a shadow's edge
    cutting a row or column of cells apart does not split the board. Each group's hull,
    widened by a cell and a half, is searched for the 11 lines each way wherever they lie
    in it; that rough grid numbers the cells, and the perspective that best maps their
    numbers to their centres gives the grid's corners, searched again around them.
    With `lattice`, only cells with two others of about their size beside them, as a
    grid's cells have, are grouped (`in_lattice`), and none when that keeps every cell
    (the grids are those found without).
    """
    h, w = edges.shape
    board_cell = settings.min_board_area * h * w / (SIZE * SIZE)
    closed = cv2.dilate(edges, np.ones((3, 3), np.uint8))
    contours, _ = cv2.findContours(closed, cv2.RETR_LIST, cv2.CHAIN_APPROX_SIMPLE)
    cells = []
    for contour in contours:
        area = cv2.contourArea(contour)
        if not 0.3 * board_cell <= area <= h * w / (SIZE * SIZE):
            continue
        approx = cv2.approxPolyDP(contour, 0.08 * cv2.arcLength(contour, True), True)
        if len(approx) != 4 or not cv2.isContourConvex(approx):
            continue
        if area < 0.8 * cv2.contourArea(approx):
            continue
        sides = np.linalg.norm(approx[:, 0] - np.roll(approx[:, 0], 1, axis=0), axis=1)
        if sides.max() > 3 * sides.min():
            continue
        cells.append(contour.reshape(-1, 2))
    if len(cells) < settings.grid_min_cells:
        return []
    if len(cells) > _MAX_CELLS:  # a tiled floor, say: keep the pairwise distances small
        cells = sorted(cells, key=cv2.contourArea, reverse=True)[:_MAX_CELLS]
    centres = np.array([_centroid(c) for c in cells])
    sizes = np.sqrt([cv2.contourArea(c) for c in cells])
    if lattice:
        keep = in_lattice(settings, centres, sizes)
        if keep.all() or keep.sum() < settings.grid_min_cells:
            return []
        cells = [c for c, k in zip(cells, keep, strict=True) if k]
        centres, sizes = centres[keep], sizes[keep]
    grids = []
    for group in _groups(_linked(centres, sizes, settings.cell_link_reach)):
        if len(group) < settings.grid_min_cells:
            continue
        quad = _approx_quad(cv2.convexHull(np.concatenate([cells[i] for i in group])))
        if quad is None:
            continue
        quad = order_visually(quad)
        middle = quad.mean(axis=0)
        reach = 1.5 * float(np.median(sizes[group]))
        outline = middle + (quad - middle) * (
            1 + reach / np.linalg.norm(quad - middle, axis=1)
        )[:, None]
        rough = _find_grid(gray, outline, settings, centred=False)
        if rough is None:
            continue
        corners = _fit_to_cells(settings, rough.corners, centres[group])
        if corners is None:
            continue
        # The cells fix the perspective but may be numbered a row or column off: the grid's
        # eleven lines each way, searched for a cell and a half around, tell.
        grid = _find_grid(gray, _around(corners, 1.5), settings, centred=False)
        if grid is not None:
            grids.append(grid.corners)
    return grids


def in_lattice(settings: Thresholds, centres: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """(n,) the cells with at least two others beside them (centres within `lattice_near`
    times the larger one's size, sizes alike): in a grid, every cell has two or more.
    Loose tiles on the table beside the board would otherwise join the group of its
    cells, whose hull would then be no outline of the grid."""
    beside = _linked(centres, sizes, settings.lattice_near)
    np.fill_diagonal(beside, False)
    result: np.ndarray = beside.sum(axis=1) >= 2
    return result


def _linked(centres: np.ndarray, sizes: np.ndarray, reach: float) -> np.ndarray:
    """(n, n) which cells (centres (n, 2), sizes (n,)) are of about one size (within 1.5
    times) and closer than `reach` times the larger one's size."""
    apart = np.linalg.norm(centres[:, None] - centres[None, :], axis=2)
    bigger = np.maximum(sizes[:, None], sizes[None, :])
    alike = np.minimum(sizes[:, None], sizes[None, :]) > bigger / 1.5
    result: np.ndarray = alike & (apart < reach * bigger)
    return result




def _centroid(contour: np.ndarray) -> np.ndarray:
    m = cv2.moments(contour)
    if m["m00"] <= 0:
        return np.asarray(contour.mean(axis=0), np.float64)
    return np.array([m["m10"] / m["m00"], m["m01"] / m["m00"]])


def _fit_to_cells(settings: Thresholds, corners: Corners, centres: np.ndarray
                  ) -> Corners | None:
    """Grid corners from cell centres: each centre is numbered by the rough grid `corners`,
    and the perspective mapping the numbered cells to their centres is fitted (RANSAC)."""
    unit = np.array([[0, 0], [SIZE, 0], [SIZE, SIZE], [0, SIZE]], np.float32)
    for _ in range(2):
        to_grid = cv2.getPerspectiveTransform(corners.astype(np.float32), unit)
        at = cv2.perspectiveTransform(centres.reshape(-1, 1, 2).astype(np.float32), to_grid)
        at = at.reshape(-1, 2).astype(np.float64)
        cell = np.floor(at) + 0.5
        near = (np.abs(at - cell).max(axis=1) < 0.25) & (cell.min(axis=1) > 0) & (
            cell.max(axis=1) < SIZE
        )
        if near.sum() < settings.grid_min_cells:
            return None
        pitch = float(np.sqrt(cv2.contourArea(corners.astype(np.float32)))) / SIZE
        to_image, inliers = cv2.findHomography(
            cell[near].astype(np.float32), centres[near].astype(np.float32), cv2.RANSAC,
            0.1 * pitch,
        )
        if to_image is None or int(inliers.sum()) < settings.grid_min_cells:
            return None
        corners = cv2.perspectiveTransform(unit.reshape(-1, 1, 2), to_image).reshape(4, 2)
    return np.asarray(corners, np.float64)


_MAX_CELLS = 1000


def _groups(linked: np.ndarray) -> list[list[int]]:
    """Connected groups of a symmetric link matrix."""
    unseen = set(range(len(linked)))
    groups = []
    while unseen:
        stack = [unseen.pop()]
        group = []
        while stack:
            i = stack.pop()
            group.append(i)
            for j in np.flatnonzero(linked[i]):
                if int(j) in unseen:
                    unseen.remove(int(j))
                    stack.append(int(j))
        groups.append(group)
    return groups


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


class GridFit(NamedTuple):
    """A 10 x 10 grid found inside an outline: how well it fits and where it is."""

    sharpness: float
    """The median line's peak over the mean edge strength (the poorer axis): high when the
    outline is exact, so the warped lines are straight and sharp; ranks the candidates."""
    share: float
    """The median line's share of the edge strength (the poorer axis, see `_line_shares`):
    robust to blur; says whether there is a grid at all."""
    weakest: float
    """The weakest line's share (either axis): says whether all eleven lines are there."""
    corners: Corners
    lines: tuple[np.ndarray, np.ndarray]
    """Each line's share, across and down (11 each)."""


def _find_grid(
    gray: np.ndarray, outline: Corners, settings: Thresholds, *, centred: bool = True
) -> GridFit | None:
    """Find the 10 x 10 grid inside a board outline (`centred`: about its middle)."""
    side = settings.grid_square_px
    square = np.array([[0, 0], [side, 0], [side, side], [0, side]], dtype=np.float64)
    to_square = cv2.getPerspectiveTransform(outline.astype(np.float32), square.astype(np.float32))
    warped = cv2.warpPerspective(gray, to_square, (side, side), flags=cv2.INTER_LINEAR)
    warped = cv2.GaussianBlur(warped, (3, 3), 0)
    gx = np.abs(cv2.Sobel(warped, cv2.CV_32F, 1, 0, ksize=3))
    gy = np.abs(cv2.Sobel(warped, cv2.CV_32F, 0, 1, ksize=3))
    fits = []
    for grad, axis in ((gx, 0), (gy, 1)):
        inner = grad[8:-8, :] if axis == 0 else grad[:, 8:-8]
        profile = _robust_profile(inner, axis)
        fit = _fit_lines(profile, settings.grid_min_cells_span, centred=centred)
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
    share = min(float(np.median(sx)), float(np.median(sy)))
    return GridFit(min(hx, hy), share, min(float(sx.min()), float(sy.min())), pts, (sx, sy))


def _robust_profile(grad: np.ndarray, axis: int) -> np.ndarray:
    """Edge strength across the square: mean over the other axis of clipped gradients."""
    clipped = np.minimum(grad, np.percentile(grad, 99))
    profile = clipped.mean(axis=axis)
    profile = cv2.GaussianBlur(profile.reshape(1, -1).astype(np.float32), (0, 0), 1.2).ravel()
    base = cv2.blur(profile.reshape(1, -1), (41, 1)).ravel()
    return np.maximum(profile - base, 0.0)


def _fit_lines(
    profile: np.ndarray, min_span: float, *, centred: bool = True
) -> tuple[float, np.ndarray, float, float] | None:
    """The 11 evenly spaced lines that collect the most edge strength: (sharpness, each
    line's share, offset, pitch), see `GridFit`. A printed board's border is as wide on both
    sides, so `centred` keeps the lines within half a pitch of the middle of an outline that
    is the board's; a rough outline lets them lie anywhere inside."""
    n = len(profile)
    xs = np.arange(n, dtype=np.float64)
    best: tuple[float, float, float] | None = None
    k = np.arange(SIZE + 1, dtype=np.float64)
    for pitch in np.arange(min_span * n / SIZE, n / SIZE + 0.01, 0.5):
        middle = (n - SIZE * pitch) / 2
        spread = 0.5 * pitch if centred else middle
        offsets = np.arange(max(0.0, middle - spread), middle + spread + 0.01, 0.5)
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
    return sharpness, _line_shares(profile, offset, pitch), offset, pitch


def _line_shares(profile: np.ndarray, offset: float, pitch: float) -> np.ndarray:
    """How much denser the edge strength is near each line than on average (11 values).

    Each line collects the strength within 0.15 pitch either side, so a blurred line
    (a dim, noisy webcam, a small board) scores as well as a sharp one: blur spreads a
    line's strength without losing it. Evenly spread strength scores 1; a printed grid
    has all eleven lines well above it, noise a few spikes.
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
    return np.asarray(strength / mean, np.float64)


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
