"""Stage 3a: measure colours in the top-down view: per cell, along the border ring, per path.

Everything is sampled as box means through one integral image, so a frame costs a few
hundred array look-ups. Cells are sampled at half a tile's height above the board (seen at
an angle, raised things move away from the camera): the patch then lies on a tile's top
face when there is a tile, and clear of the neighbours' sides when there is none.
Colours are normalised for uneven light with a smooth field fitted to the border ring.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import cv2
import numpy as np

from contracts.calibration import Thresholds
from vision.classify import median_along
from vision.geometry import SIZE, BoardGeometry, topdown_matrix, topdown_size


@dataclass(frozen=True)
class SamplingPlan:
    """Where to sample in the top-down view for one board geometry (computed once).

    `map_x`, `map_y` take the camera image straight to the top-down view, undoing lens
    distortion on the way when a lens model is given.
    """

    map_x: np.ndarray
    map_y: np.ndarray
    side: int
    cell_boxes: np.ndarray
    """(900, 4) int boxes x0, y0, x1, y1: 3 x 3 sub-boxes per cell, cell = rank * 10 + file."""
    outer_boxes: np.ndarray
    """(800, 4) int boxes near the rim of a tile's top face, 8 per cell: the parts of a tile
    a bridge's foot resting on it leaves in view."""
    edge_boxes: np.ndarray
    """(500, 4) int boxes per cell: four thin bands along the outline of a tile's top face
    (where a tile's edge shows) and one over the top face's middle."""
    ring_boxes: np.ndarray
    """(n, 4) int boxes along the border ring, just outside the grid."""
    ring_xy: np.ndarray
    """(n, 2) board coordinates of the ring boxes' centres."""
    ring_leaned: np.ndarray
    """(n,) whether a tile or bridge on the edge cell beside may appear over the box (seen
    at an angle, raised things lean away from the camera)."""
    ring_lean_share: np.ndarray
    """(n,) how much of the box (0..1, across the border) a tile on the edge cell beside
    can cover at most, put down off-centre and turned: its top and sides lean only so far."""
    ring_lean: np.ndarray
    """(n,) how far (cells, across the border) a tile's top on the edge cell beside leans
    out over the box's side, seen at this angle; a higher thing leans further in proportion."""
    ring_outer_boxes: np.ndarray
    """(n, 4) the outer half of each ring box (away from the grid): an arm across the
    border covers it, a tile leaning over the border rarely reaches it."""
    ring_outer_xy: np.ndarray
    """(n, 2) board coordinates of the outer halves' centres."""
    ring_outer_share: np.ndarray
    """(n,) how much of the outer half a leaning tile can cover at most."""
    cell_xy: np.ndarray
    """(100, 2) board coordinates of the cell centres."""
    cell_mid_xy: np.ndarray
    """(100, 2) where each cell's centre appears half-way up a tile (the sub-boxes' centre
    and the patches' of `vision.patches`)."""
    geometry: BoardGeometry
    fixed_maps: tuple[np.ndarray, np.ndarray] | None = None
    """`map_x` and `map_y` in OpenCV's fixed-point form (`cv2.convertMaps`), which its
    remap reads a little quicker to the same pixels (it converts float maps so anyway)."""
    indexes: BoxIndexes = field(default_factory=lambda: BoxIndexes(), repr=False,
                                compare=False)
    """Its boxes laid out for the top-down view's integral images (`index`)."""

    def index(self, *parts: np.ndarray) -> BoxIndex:
        """Some of its own boxes (one array or several, one after the other) laid out for
        integral images of its top-down view (`side` + 1 wide)."""
        return self.indexes(self.side + 1, *parts)


def plan_sampling(
    settings: Thresholds,
    geometry: BoardGeometry,
    image_size: tuple[int, int],
    distortion: np.ndarray | None = None,
) -> SamplingPlan:
    """Sampling boxes for cells (at tile-top height) and the border ring (on the board).

    With `distortion` (OpenCV coefficients for `geometry.camera_matrix`), the board corners
    are taken to be in undistorted image coordinates and the frames to be raw. Ring boxes
    that fall outside an image of `image_size` are left out.
    """
    px, margin = settings.cell_px, settings.margin_cells
    side = topdown_size(px, margin)
    map_x, map_y = _topdown_maps(geometry, px, margin, side, distortion)
    ranks, files = np.mgrid[0:SIZE, 0:SIZE]
    centres = np.column_stack([files.ravel() + 0.5, ranks.ravel() + 0.5]).astype(np.float64)
    raised = geometry.raised(centres, settings.tile_height_cells / 2)
    third = settings.patch_fraction / 3
    offsets = np.array([(dx, dy) for dy in (-1, 0, 1) for dx in (-1, 0, 1)], np.float64) * third
    sub = (raised[:, None, :] + offsets[None, :, :]).reshape(-1, 2)
    cell_boxes = _boxes(sub, third / 2, third / 2, px, margin, side)
    tops = geometry.raised(centres, settings.tile_height_cells)
    rim = np.array([(dx, dy) for dy in (-1, 0, 1) for dx in (-1, 0, 1) if dx or dy],
                   np.float64) * _RIM
    outer_boxes = _boxes((tops[:, None, :] + rim[None, :, :]).reshape(-1, 2), 0.06, 0.06, px,
                         margin, side)
    band = np.array([(0.0, _EDGE), (0.0, -_EDGE), (_EDGE, 0.0), (-_EDGE, 0.0)])
    halves = [(0.3, 0.04), (0.3, 0.04), (0.04, 0.3), (0.04, 0.3)]
    edge_parts = [_boxes(tops + off, hx, hy, px, margin, side)
                  for off, (hx, hy) in zip(band, halves, strict=True)]
    edge_parts.append(_boxes(tops, 0.25, 0.25, px, margin, side))
    edge_boxes = np.stack(edge_parts, axis=1).reshape(-1, 4)
    ring_xy, ring_half = _ring_centres()
    ring_boxes = np.array(
        [_boxes(p[None, :], hx, hy, px, margin, side)[0] for p, (hx, hy) in zip(
            ring_xy, ring_half, strict=True)]
    )
    inside = [box_inside(map_x, map_y, box, image_size) for box in ring_boxes]
    ring_boxes, ring_xy = ring_boxes[inside], ring_xy[inside]
    edge = np.clip(np.floor(ring_xy), 0, SIZE - 1) + 0.5
    outward = ring_xy - edge
    outward /= np.linalg.norm(outward, axis=1, keepdims=True)
    lean = geometry.raised(edge, settings.tile_height_cells) - edge
    lean_out = (lean * outward).sum(axis=1)
    leaned = lean_out > RING_IN - 0.06
    reach = lean_out + TILE_REACH
    share, outer_share = ring_shares(reach)
    quarter = (RING_OUT - RING_IN) / 4
    outer_xy = ring_xy + outward * quarter
    across = np.abs(outward[:, 1]) > 0.5  # top and bottom sides: the border runs along x
    outer_ring_boxes = np.array([
        _boxes(p[None, :], *((0.4, quarter) if a else (quarter, 0.4)), px, margin, side)[0]
        for p, a in zip(outer_xy, across, strict=True)]).reshape(-1, 4)
    return SamplingPlan(
        map_x, map_y, side, cell_boxes, outer_boxes, edge_boxes, ring_boxes, ring_xy, leaned,
        share, lean_out, outer_ring_boxes, outer_xy, outer_share, centres, raised,
        geometry, cv2.convertMaps(map_x, map_y, cv2.CV_16SC2),
    )


def ring_shares(reach: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The shares (0-1) of a border sample, and of its outer half, that something reaching
    `reach` cells past the grid line covers."""
    mid = (RING_IN + RING_OUT) / 2
    return (np.clip((reach - RING_IN) / (RING_OUT - RING_IN), 0.0, 1.0),
            np.clip((reach - mid) / (RING_OUT - mid), 0.0, 1.0))


def box_inside(map_x: np.ndarray, map_y: np.ndarray, box: np.ndarray, size: tuple[int, int]
               ) -> bool:
    """Whether a top-down box comes from inside the camera image (the border may not)."""
    x0, y0, x1, y1 = (int(v) for v in box)
    xs, ys = map_x[y0:y1, x0:x1], map_y[y0:y1, x0:x1]
    return bool((xs >= 0).all() and (ys >= 0).all() and (xs <= size[0] - 1).all()
                and (ys <= size[1] - 1).all())


RING_IN, RING_OUT = 0.12, 0.38
TILE_REACH = 0.1  # cells past the grid line a tile's edge can lie, off-centre and turned
_RIM = 0.31  # cells from a tile's centre to the rim boxes (a tile is about 0.88 wide)
_EDGE = 0.44  # cells from a tile's centre to the edge of its top face


def _ring_centres() -> tuple[np.ndarray, list[tuple[float, float]]]:
    mid = (RING_IN + RING_OUT) / 2
    half_w = (RING_OUT - RING_IN) / 2
    pts: list[tuple[float, float]] = []
    halves: list[tuple[float, float]] = []
    for k in range(SIZE):
        c = k + 0.5
        for p in ((c, -mid), (c, SIZE + mid)):
            pts.append(p)
            halves.append((0.4, half_w))
        for p in ((-mid, c), (SIZE + mid, c)):
            pts.append(p)
            halves.append((half_w, 0.4))
    return np.array(pts, np.float64), halves


def _boxes(
    xy: np.ndarray, half_x: float, half_y: float, px: int, margin: float, side: int
) -> np.ndarray:
    x = (margin + xy[:, 0]) * px
    y = (margin + SIZE - xy[:, 1]) * px
    x0 = np.clip(np.round(x - half_x * px), 0, side - 1)
    x1 = np.clip(np.round(x + half_x * px), x0 + 1, side)
    y0 = np.clip(np.round(y - half_y * px), 0, side - 1)
    y1 = np.clip(np.round(y + half_y * px), y0 + 1, side)
    return np.column_stack([x0, y0, x1, y1]).astype(np.int64)


def _topdown_maps(
    geometry: BoardGeometry, px: int, margin: float, side: int, distortion: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    inv = np.linalg.inv(topdown_matrix(geometry, px, margin))
    ys, xs = np.mgrid[0:side, 0:side].astype(np.float64)
    pts = np.column_stack([xs.ravel(), ys.ravel()]).reshape(-1, 1, 2)
    img = cv2.perspectiveTransform(pts, inv).reshape(-1, 2)
    if distortion is not None:
        k = geometry.camera_matrix
        norm = np.column_stack(
            [(img[:, 0] - k[0, 2]) / k[0, 0], (img[:, 1] - k[1, 2]) / k[1, 1], np.ones(len(img))]
        )
        img, _ = cv2.projectPoints(norm, np.zeros(3), np.zeros(3), k, distortion)
        img = img.reshape(-1, 2)
    map_x = img[:, 0].reshape(side, side).astype(np.float32)
    map_y = img[:, 1].reshape(side, side).astype(np.float32)
    return map_x, map_y


def warp_topdown(plan: SamplingPlan, image: np.ndarray) -> np.ndarray:
    """The top-down view of the board (BGR uint8, `plan.side` pixels square)."""
    if plan.fixed_maps is not None:
        return cv2.remap(image, plan.fixed_maps[0], plan.fixed_maps[1], cv2.INTER_LINEAR)
    return cv2.remap(image, plan.map_x, plan.map_y, cv2.INTER_LINEAR)


def integral(topdown: np.ndarray) -> np.ndarray:
    """The integral image of a BGR top-down view (one extra row and column): 32-bit
    integers for 8-bit pixels (OpenCV's quick path; a view of 288 x 288 pixels sums to at
    most 2.2e7, and `box_means` takes whole numbers either way), else float64."""
    if topdown.dtype != np.uint8:
        wide: np.ndarray = cv2.integral(topdown, sdepth=cv2.CV_64F)
        return wide
    result: np.ndarray = cv2.integral(topdown, sdepth=cv2.CV_32S)
    return result


@dataclass(frozen=True)
class BoxIndex:
    """Boxes laid out for `box_means` on integral images `width` wide: what a frame's box
    means need of the boxes alone, worked out once for boxes that stay put."""

    rows: np.ndarray
    """(n, 4) each box's four corners by flat index: bottom right, top right, bottom left,
    top left (x1, y1; x1, y0; x0, y1; x0, y0)."""
    area: np.ndarray
    """(n, 1) float64 the boxes' areas."""
    width: int
    corners: np.ndarray = field(init=False, repr=False, compare=False)
    """(4 n,) `rows` corner by corner: all the boxes' first corners, then the second..."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "corners", self.rows.T.reshape(-1))

    def pick(self, index: np.ndarray) -> BoxIndex:
        """The boxes `index` of these (taken as whole rows: a few times quicker than
        picking columns of the corner-by-corner layout)."""
        return BoxIndex(np.take(self.rows, index, axis=0), np.take(self.area, index, axis=0),
                        self.width)

    def means(self, ii: np.ndarray) -> np.ndarray:
        """Mean value in each box of the integral image `ii`, (n, 3) or (n,) for one
        channel (see `box_means`)."""
        if ii.shape[1] != self.width:
            raise ValueError(f"boxes laid out for {self.width} columns, not {ii.shape[1]}")
        flat = ii.reshape(ii.shape[0] * self.width, -1)
        # The four corners by flat index, in one `take`: a few times quicker than indexing
        # rows and columns separately.
        corners = np.take(flat, self.corners, axis=0).reshape(4, len(self.rows), flat.shape[1])
        # Whole numbers when the integral image is of integers: exact, as in float64.
        total = corners[0] - corners[1] - corners[2] + corners[3]
        result: np.ndarray = total / self.area
        return result if ii.ndim == 3 else result[:, 0]


def box_index(boxes: np.ndarray, width: int) -> BoxIndex:
    """(n, 4) int boxes x0, y0, x1, y1 laid out for integral images `width` wide."""
    x0, y0, x1, y1 = (np.asarray(boxes[:, i], np.int64) for i in range(4))
    top, bottom = y0 * width, y1 * width
    rows = np.stack([bottom + x1, top + x1, bottom + x0, top + x0], axis=1)
    return BoxIndex(rows, ((x1 - x0) * (y1 - y0)).astype(np.float64)[:, None], width)


class BoxIndexes:
    """The `box_index` of a plan's own box arrays, each made on first use and kept (the
    arrays are the plan's, so they stay put while it lives)."""

    def __init__(self) -> None:
        self._made: dict[tuple[int, ...], tuple[tuple[np.ndarray, ...], BoxIndex]] = {}

    def __call__(self, width: int, *parts: np.ndarray) -> BoxIndex:
        """The index of the boxes `parts` (one array, or several one after the other)."""
        key = (width, *(id(p) for p in parts))
        made = self._made.get(key)
        if made is None or any(a is not b for a, b in zip(made[0], parts, strict=True)):
            boxes = parts[0] if len(parts) == 1 else np.concatenate(parts)
            made = (parts, box_index(boxes, width))  # the arrays kept: their ids stay theirs
            self._made[key] = made
        return made[1]


def box_means(ii: np.ndarray, boxes: np.ndarray | BoxIndex) -> np.ndarray:
    """Mean value in each box of an integral image, (n, 4) -> (n, 3), or (n,) for one
    channel; `boxes` may be laid out beforehand (`box_index`)."""
    if not isinstance(boxes, BoxIndex):
        boxes = box_index(boxes, ii.shape[1])
    return boxes.means(ii)


def cell_colours(ii: np.ndarray, plan: SamplingPlan) -> np.ndarray:
    """Per cell, its 3 x 3 sub-box mean colours, (100, 9, 3) BGR."""
    result: np.ndarray = box_means(ii, plan.index(plan.cell_boxes)).reshape(SIZE * SIZE, 9, 3)
    return result


def design_at(xy: np.ndarray) -> np.ndarray:
    """Quadratic terms in board coordinates scaled to about -0.5..0.5, (n, 2) -> (n, 6):
    what `field_of` needs of board points (worth keeping for points that stay put)."""
    u = (xy[:, 0] - SIZE / 2) / SIZE
    v = (xy[:, 1] - SIZE / 2) / SIZE
    return np.column_stack([np.ones(len(xy)), u, v, u * u, u * v, v * v])


# The quadratic terms averaged over the board (u, v uniform on -0.5..0.5).
_MEAN_DESIGN = np.array([1.0, 0.0, 0.0, 1 / 12, 0.0, 1 / 12])


def light_field(
    settings: Thresholds, ring_bgr: np.ndarray, ring_xy: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """A smooth per-channel light field fitted to the ring: (coefficients (6, 3), inliers).

    A ring sample is an outlier (a hand or an arm over the border) when it differs by more
    than `ring_outlier_error` (relative, and by `odd_levels` grey levels) from the median of
    its neighbours along the ring, four each way: light changes smoothly along the border, an
    arm does not. Each channel is then modelled as a quadratic in x and y over the board (a
    lamp's falloff), fitted to the other samples.
    """
    layout = _ring_layout(ring_xy)
    keep = ~_odd_ones_out(ring_bgr, layout, settings.ring_outlier_error, settings.odd_levels)
    if keep.sum() < 12:
        keep = np.ones(len(ring_xy), bool)
    design = layout.design
    coef, *_ = np.linalg.lstsq(design[keep], ring_bgr[keep], rcond=None)
    result: np.ndarray = coef
    return result, keep


def light_field_against(
    settings: Thresholds, ring_bgr: np.ndarray, reference: np.ndarray, ring_xy: np.ndarray,
    changed: np.ndarray,
) -> np.ndarray:
    """The light field as the bare border seen before shows it now: coefficients (6, 3).

    A tile's or a bridge's shadow under a low window can lie along a whole side of the
    border; fitted as light, it would make that side of the board look brighter than it
    is. So the border's change since `reference` (its bare look, from the calibration) is
    modelled as a plane per channel over the unchanged samples, and a changed sample
    (`changed`: a shadow, a hand) counts as its reference times that change, kept within
    the change the unchanged samples show. The field is then fitted as `light_field` does.
    """
    ratio = np.maximum(ring_bgr, 1.0) / np.maximum(reference, 1.0)
    keep = ~changed
    plane = _ring_layout(ring_xy).design[:, :3]
    if keep.sum() >= 12:
        gain, *_ = np.linalg.lstsq(plane[keep], ratio[keep], rcond=None)
    else:
        gain = np.zeros((3, 3))
        gain[0] = np.median(ratio, axis=0)
    # Where the border is seen changed, its light has changed no more and no less than
    # where it is seen bare: samples seen bare along one side only fit a plane that
    # runs wild across the board.
    seen = ratio[keep] if keep.any() else ratio
    change = np.clip(plane @ gain, seen.min(axis=0), seen.max(axis=0))
    filled = np.where(keep[:, None], ring_bgr, reference * change)
    return light_field(settings, filled, ring_xy)[0]


@dataclass(frozen=True)
class _RingLayout:
    """What `light_field` needs of the ring's points alone, worked out once per board
    position (the reader's ring stays put from frame to frame)."""

    order: np.ndarray
    """The samples in their order around the ring."""
    near: np.ndarray
    """(n, 8) per place in that order, the places of its neighbours, four each way."""
    design: np.ndarray
    """The samples' `design_at`."""


_RING_LAYOUTS: dict[bytes, _RingLayout] = {}


def _ring_layout(ring_xy: np.ndarray) -> _RingLayout:
    key = np.ascontiguousarray(ring_xy, np.float64).tobytes()
    layout = _RING_LAYOUTS.get(key)
    if layout is None:
        n = len(ring_xy)
        order = np.argsort(np.arctan2(ring_xy[:, 1] - SIZE / 2, ring_xy[:, 0] - SIZE / 2))
        span = min(4, (n - 1) // 2)
        steps = np.array([k for k in range(-span, span + 1) if k != 0], np.int64)
        near = (np.arange(n)[:, None] + steps[None, :]) % n
        layout = _RingLayout(order, near, design_at(ring_xy))
        for table in (order, near, layout.design):
            table.setflags(write=False)
        if len(_RING_LAYOUTS) >= 16:  # a few board positions at a time at most
            _RING_LAYOUTS.clear()
        _RING_LAYOUTS[key] = layout
    return layout


def _odd_ones_out(ring_bgr: np.ndarray, layout: _RingLayout, limit: float, levels: float
                  ) -> np.ndarray:
    ordered = ring_bgr[layout.order]
    ref = median_along(ordered[layout.near], 1)
    diff = np.abs(ordered - ref).max(axis=1)
    flags = (diff > limit * np.maximum(ref.mean(axis=1), 1.0)) & (diff > levels)
    odd = np.zeros(len(ordered), bool)
    odd[layout.order] = flags
    return odd


def field_at(coef: np.ndarray, xy: np.ndarray) -> np.ndarray:
    """The relative light field at board points, per channel (1.0 = the board's average).

    Dividing colours by it evens out a lamp's falloff and a window's gradient while
    keeping the colours themselves and the overall exposure as they are.
    """
    return field_of(coef, design_at(xy))


def field_of(coef: np.ndarray, design: np.ndarray) -> np.ndarray:
    """`field_at` for points given by their `design_at`."""
    field = np.maximum(design @ coef, 1.0)
    mean = np.maximum(_MEAN_DESIGN @ coef, 1.0)
    result: np.ndarray = field / mean
    np.minimum(np.maximum(result, 0.25, out=result), 4.0, out=result)  # np.clip, quicker
    return result


def to_lab(bgr: np.ndarray) -> np.ndarray:
    """Lab (L 0..100) of BGR colours on the 0..255 scale, (n, 3) -> (n, 3)."""
    # As one row of n pixels: OpenCV converts an image row by row, and n rows of one pixel
    # each take four times as long (the same numbers).
    unit = bgr / 255.0
    np.minimum(np.maximum(unit, 0.0, out=unit), 1.0, out=unit)  # np.clip, quicker
    arr = unit.astype(np.float32).reshape(1, -1, 3)
    result: np.ndarray = cv2.cvtColor(arr, cv2.COLOR_BGR2Lab).reshape(-1, 3).astype(np.float64)
    return result


@dataclass(frozen=True)
class Slopes:
    """Integral images of the top-down view's grey level (32-bit integers) and of its x and y
    gradients (Sobel; float32, one image each: a gradient's sum along a row or column
    telescopes, so its sums stay small)."""

    grey: np.ndarray
    across: np.ndarray
    """The x gradient's integral image ..."""
    down: np.ndarray
    """... and the y gradient's (kept apart: merging them costs more than measuring each)."""
    image: np.ndarray | None = None
    """The grey-level image itself (uint8), for whoever needs it after (the reader's bump
    check, `vision.measure.ring_strips`): converted once a frame."""

    @property
    def gradients(self) -> np.ndarray:
        """The two gradients' integral images as one of two channels, x first."""
        merged: np.ndarray = cv2.merge([self.across, self.down])
        return merged


def texture(
    topdown: np.ndarray, plan: SamplingPlan
) -> tuple[np.ndarray, np.ndarray, Slopes]:
    """Per cell, how textured its sub-boxes are and how strong the edges along a tile's
    outline are, both relative to the brightness (so light and exposure do not matter).

    Returns (100, 9) grey-level spread / mean per sub-box, (100, 5) mean gradient /
    mean grey along the four sides of a tile's top face and over its middle, and the
    grey level's and its gradients' integral images (for the edges along a bridge's deck,
    see `bridges.measure_deck_edges`).
    """
    grey8 = cv2.cvtColor(topdown, cv2.COLOR_BGR2GRAY)
    grey = grey8.astype(np.float32)
    # Every sum here is of whole numbers small enough to be exact in any order (8-bit
    # levels and their squares; the Sobel gradients of such levels, whose sums telescope
    # and stay below 2^24), so OpenCV's quick paths give the same numbers as slow ones:
    # 8-bit input summed in integers, and one channel at a time (a two-channel float
    # integral takes several times as long as two one-channel ones).
    total, squares = cv2.integral2(grey8, sdepth=cv2.CV_32S, sqdepth=cv2.CV_64F)
    cells = plan.index(plan.cell_boxes)
    mean = box_means(total, cells)
    var = np.maximum(box_means(squares, cells) - mean ** 2, 0.0)
    spread = (np.sqrt(var) / np.maximum(mean, 8.0)).reshape(SIZE * SIZE, 9)
    gx = cv2.Sobel(grey, cv2.CV_32F, 1, 0, ksize=3)
    gy = cv2.Sobel(grey, cv2.CV_32F, 0, 1, ksize=3)
    mag = cv2.integral(cv2.magnitude(gx, gy), sdepth=cv2.CV_64F)
    level = np.maximum(mean.reshape(SIZE * SIZE, 9).mean(axis=1, keepdims=True), 8.0)
    edges = box_means(mag, plan.index(plan.edge_boxes)).reshape(SIZE * SIZE, 5) / level
    return spread, edges, Slopes(total, cv2.integral(gx, sdepth=cv2.CV_32F),
                                 cv2.integral(gy, sdepth=cv2.CV_32F), grey8)
