"""Stage 3, Measure: what every later stage reads of a frame, measured once.

A `Plan` (made once per calibration by `make_plan`) says where to sample: the top-down
view of the board at tile height, the cells' boxes, the border's samples, the bridges'
paths. `measure` (or `measure_view`, given the top-down view) turns one image into a
`Measurement`: the cells' and border's colours, the light field across the board, the
edges, the strips of the border a bump is judged by.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import cv2
import numpy as np

from contracts.calibration import Thresholds
from vision.bridges import BridgePlan, plan_bridges
from vision.cells import SIZE
from vision.classify import Shade, median_along
from vision.decks import deck_frames
from vision.features import (
    SamplingPlan,
    Slopes,
    box_inside,
    box_means,
    field_at,
    integral,
    light_field,
    light_field_against,
    plan_sampling,
    texture,
    to_lab,
    warp_topdown,
)
from vision.geometry import board_geometry
from vision.patches import BareView


@dataclass(frozen=True)
class Plan:
    """Everything computed once per board position: sampling and bridge plans."""

    corners: np.ndarray
    sampling: SamplingPlan
    bridges: BridgePlan
    decks: np.ndarray | None = None
    """Every candidate bridge's `deck_frames`, in the order of `bridges.pairs`."""
    strips: np.ndarray | None = None
    """The ring strips' squares in the top-down view (see `strip_squares`) ..."""
    strip_pixels: np.ndarray | None = None
    """... and when they are all of one size, a whole number of times a strip's, the flat
    indices in the top-down view of their pixels, stacked ((squares * height, width), see
    `strip_pixels`)."""
    beyond: tuple[tuple[np.ndarray, np.ndarray], ...] = ()
    """The border just outside the ring's outer halves (see `beyond_groups`), in groups of
    boxes with as many pixels: per group, the ring samples' indices and the flat indices in
    the top-down view of their pixels ((samples, pixels))."""


@dataclass(frozen=True)
class Measurement:
    """One frame's measured colours (light-normalised Lab) and the ring's light fit."""

    cells_lab: np.ndarray
    """(100, 3): per cell, the median Lab of its sub-boxes."""
    sub_lab: np.ndarray
    """(100, 9, 3): Lab of each cell's 3 x 3 sub-boxes."""
    rim_lab: np.ndarray
    """(100, 8, 3): Lab of the boxes near the rim of a tile's top face."""
    ring_lab: np.ndarray
    ring_bgr: np.ndarray
    """(n, 3) BGR of the border ring's boxes, as seen."""
    ring_outliers: np.ndarray
    light_coef: np.ndarray
    integral: np.ndarray
    topdown: np.ndarray
    texture: np.ndarray
    """(100, 9) grey-level spread / mean per sub-box (wood grain, skin, print)."""
    edges: np.ndarray
    """(100, 5) edge strength along a tile's outline (four sides) and over its middle."""
    ring_shadows: np.ndarray | None = None
    """(n,) border samples off the bare border only as a shadow is (see `border_changes`)."""
    ring_outer_bgr: np.ndarray | None = None
    """(n, 3) BGR of the outer halves of the ring's boxes, as seen."""
    ring_outer_odd: np.ndarray | None = None
    """(n,) outer halves off the bare border other than as a shadow is (None: no reference
    to judge them by) ..."""
    ring_outer_shadows: np.ndarray | None = None
    """... and those off it as a shadow is."""
    ring_faint: np.ndarray | None = None
    """(n,) border samples off the bare border by the relative limit but by fewer grey levels
    than make them outliers or shadows (at least `Thresholds.faint_levels`) ..."""
    ring_clear: np.ndarray | None = None
    """... and the outliers off it by at least `Thresholds.clear_levels` (see `fading_arm`;
    None when not worked out: no outlier, or no reference)."""
    background: np.ndarray | None = None
    """(100, 9, 3) the bare board's Lab per sample box as seen before (the calibration's,
    kept up to date), NaN where not known; None when there is none."""
    bare_view: BareView | None = None
    """The calibration photo's top-down view of the bare board (None without one)."""
    slopes: Slopes | None = None
    """The integral images of the top-down view's grey level and its gradients (see
    `features.texture`)."""
    sub_bgr: np.ndarray | None = None
    """(100, 9, 3): BGR of each cell's sub-boxes as seen, before the light is evened out."""
    shade: Shade | None = None
    """How the sub-boxes have changed from the bare board seen before (`make_shade`), when
    worked out for this frame's (consumers check it is of their `sub_lab` and
    `background`)."""
    ring_levels: np.ndarray | None = None
    """(n,) the grey levels by which each border sample, or the outer half of it, differs
    most from the bare border seen before (0 within the relative limit; None: no reference,
    see `border_change_levels`)."""
    print_likeness: np.ndarray | None = None
    """`print_likeness` of this frame, worked out by a reader (None: not)."""


def make_plan(
    settings: Thresholds,
    corners: np.ndarray,
    image_size: tuple[int, int],
    camera_matrix: np.ndarray | None = None,
    distortion: np.ndarray | None = None,
) -> Plan:
    """Plan the sampling for grid corners (a1, j1, j10, a10 order) in an image of this size."""
    geometry = board_geometry(corners, image_size, camera_matrix)
    sampling = plan_sampling(settings, geometry, image_size, distortion)
    bridges = plan_bridges(settings, sampling)
    decks = deck_frames(settings, sampling, np.array(bridges.pairs, np.int64))
    squares = strip_squares(sampling)
    return Plan(np.asarray(corners, np.float64), sampling, bridges, decks, squares,
                strip_pixels(squares, sampling.side), beyond_groups(settings, sampling, image_size))


def measure(settings: Thresholds, plan: Plan, image: np.ndarray, *, even: bool = True
            ) -> Measurement:
    """Warp to top-down and measure light-normalised cell colours and the ring.

    With `even` False the cells' colours are left out (no rows) for the caller to even out
    once it knows the light better (the reader, see `relit`), instead of measuring them
    twice."""
    topdown = warp_topdown(plan.sampling, image)
    return measure_view(settings, plan, topdown, integral(topdown), even=even)


def measure_view(settings: Thresholds, plan: Plan, topdown: np.ndarray, ii: np.ndarray, *,
                 even: bool = True) -> Measurement:
    """`measure` of a top-down view already made (`warp_topdown`) and its integral image."""
    ring = box_means(ii, plan.sampling.index(plan.sampling.ring_boxes))
    coef, keep = light_field(settings, ring, plan.sampling.ring_xy)
    if even:
        sub_lab, rim_lab, subs = _evened(plan, ii, coef)
    else:
        sub_lab, rim_lab, subs = np.zeros((0, 9, 3)), np.zeros((0, 8, 3)), None
    ring_lab = to_lab(ring[keep].mean(axis=0, keepdims=True))[0]
    grain, edges, slopes = texture(topdown, plan.sampling)
    return Measurement(
        median_along(sub_lab, 1), sub_lab, rim_lab, ring_lab, ring, ~keep, coef, ii, topdown,
        grain, edges,
        ring_outer_bgr=box_means(ii, plan.sampling.index(plan.sampling.ring_outer_boxes)),
        slopes=slopes, sub_bgr=subs,
    )


def relit(settings: Thresholds, plan: Plan, m: Measurement, border: np.ndarray | None
           ) -> Measurement:
    """The frame's colours (measured with `even` False) evened out by the light: as the
    bare border (`border`, seen before) shows it where part of the border lies in a shadow
    or under a hand, else as the border shows it now."""
    coef = m.light_coef
    changed = m.ring_outliers if m.ring_shadows is None else m.ring_outliers | m.ring_shadows
    if border is not None and changed.any():
        coef = light_field_against(settings, m.ring_bgr, border, plan.sampling.ring_xy,
                                   changed)
    sub_lab, rim_lab, subs = _evened(plan, m.integral, coef)
    return replace(m, cells_lab=median_along(sub_lab, 1), sub_lab=sub_lab, rim_lab=rim_lab,
                   light_coef=coef, sub_bgr=subs)


def _evened(plan: Plan, ii: np.ndarray, coef: np.ndarray
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The cells' sub-box and rim-box colours (Lab) with the light field `coef` divided out,
    and the sub-boxes' colours as seen (BGR)."""
    sampling = plan.sampling
    field = field_at(coef, sampling.cell_xy)[:, None, :]
    # The sub-boxes and the rim boxes measured in one pass (the same numbers as apart).
    split = len(sampling.cell_boxes)
    both = box_means(ii, sampling.index(sampling.cell_boxes, sampling.outer_boxes))
    subs = both[:split].reshape(SIZE * SIZE, -1, 3)
    rims = both[split:].reshape(SIZE * SIZE, -1, 3)
    lab = to_lab(np.concatenate([(subs / field).reshape(-1, 3), (rims / field).reshape(-1, 3)]))
    sub_lab = lab[:split].reshape(subs.shape)
    rim_lab = lab[split:].reshape(rims.shape)
    return sub_lab, rim_lab, subs


def beyond_boxes(sampling: SamplingPlan) -> np.ndarray:
    """(n, 4) per border sample, the box of the top-down view (x0, y0, x1, y1) just outside
    its outer half (`SamplingPlan.ring_outer_boxes`): the same box moved outward by its own
    depth, over the border's outer part and its edge. Not cut at the view's edge."""
    inner, outer = sampling.ring_boxes, sampling.ring_outer_boxes
    step = ((outer[:, :2] + outer[:, 2:]) - (inner[:, :2] + inner[:, 2:])).astype(np.float64)
    across = np.abs(step[:, 1]) > np.abs(step[:, 0])  # top and bottom: moved along y
    depth = np.where(across, outer[:, 3] - outer[:, 1], outer[:, 2] - outer[:, 0])
    sign = np.sign(np.where(across, step[:, 1], step[:, 0])).astype(np.int64)
    shift = np.zeros_like(outer)
    shift[:, 1] = shift[:, 3] = np.where(across, sign * depth, 0)
    shift[:, 0] = shift[:, 2] = np.where(across, 0, sign * depth)
    result: np.ndarray = outer + shift
    return result


def beyond_groups(settings: Thresholds, sampling: SamplingPlan, image_size: tuple[int, int]
                  ) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
    """`Plan.beyond`: the `beyond_boxes` that lie inside the top-down view,
    `Thresholds.print_reach_px` pixels from its edge, and come from inside the camera image,
    grouped by their number of pixels (the border's sides give boxes of one shape, lying and
    standing: one group, compared in one go)."""
    side = sampling.side
    boxes = beyond_boxes(sampling)
    reach = settings.print_reach_px
    groups: dict[int, list[tuple[int, np.ndarray]]] = {}
    for i, (x0, y0, x1, y1) in enumerate(boxes.tolist()):
        if not (reach <= x0 < x1 <= side - reach and reach <= y0 < y1 <= side - reach
                and box_inside(sampling.map_x, sampling.map_y, boxes[i], image_size)):
            continue
        rows, cols = np.mgrid[y0:y1, x0:x1]
        groups.setdefault((y1 - y0) * (x1 - x0), []).append(
            (i, (rows * side + cols).ravel()))
    return tuple((np.array([i for i, _ in members], np.int64),
                  np.stack([flat for _, flat in members]))
                 for _, members in sorted(groups.items()))


_STRIP = 12  # pixels a side of a ring strip as compared


def strip_squares(sampling: SamplingPlan) -> np.ndarray:
    """(n, 4) per ring box, the square of the top-down view its strip is taken from
    (y0, y1, x0, x1): about a cell across, centred on the box, cut at the view's edge."""
    side = sampling.side
    px = side / (SIZE + 2 * 1.0) if side else 1.0
    r = int(px * 0.5)
    out = []
    for x0, y0, x1, y1 in sampling.ring_boxes:
        cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
        out.append((int(max(0, cy - r)), int(min(side, cy + r)),
                    int(max(0, cx - r)), int(min(side, cx + r))))
    return np.array(out, np.int64).reshape(-1, 4)


def strip_pixels(squares: np.ndarray, side: int) -> np.ndarray | None:
    """The flat indices in a `side`-pixel-square view of the pixels of `squares` ((n, 4)
    y0, y1, x0, x1), stacked one square under the other ((n * height, width)); None unless
    the squares are all of one size, a whole number of times a strip's."""
    if not len(squares):
        return None
    high, wide = squares[:, 1] - squares[:, 0], squares[:, 3] - squares[:, 2]
    if (not (high == high[0]).all() or not (wide == wide[0]).all()
            or high[0] % _STRIP or wide[0] % _STRIP):
        return None
    rows = squares[:, :1] + np.arange(high[0])[None, :]  # (n, height)
    index: np.ndarray = (rows[:, :, None] * side + squares[:, None, 2:3]
                         + np.arange(wide[0])[None, None, :])
    return index.reshape(len(squares) * int(high[0]), int(wide[0]))


def ring_strips(plan: Plan, topdown: np.ndarray, slopes: Slopes | None = None) -> np.ndarray:
    """Grey strips across the grid's outer line and the board edge, one per ring segment
    (the grey image from `slopes` when it has it)."""
    squares = plan.strips if plan.strips is not None else strip_squares(plan.sampling)
    gray = (slopes.image if slopes is not None and slopes.image is not None
            else cv2.cvtColor(topdown, cv2.COLOR_BGR2GRAY))
    pixels = (plan.strip_pixels if plan.strip_pixels is not None
              and gray.shape[1] == plan.sampling.side else strip_pixels(squares, gray.shape[1]))
    if pixels is not None:
        # Squares of one size, a whole number of times a strip's: gathered in one go and
        # stacked, they shrink in one call to the same numbers as one by one (each strip
        # pixel is the mean of its own block).
        taken = np.take(gray.reshape(-1), pixels).astype(np.float32)
        shrunk: np.ndarray = cv2.resize(taken, (_STRIP, _STRIP * len(squares)),
                                        interpolation=cv2.INTER_AREA)
        return shrunk.reshape(len(squares), _STRIP, _STRIP)
    grey = gray.astype(np.float32)
    out = [cv2.resize(grey[ya:yb, xa:xb], (_STRIP, _STRIP), interpolation=cv2.INTER_AREA)
           for ya, yb, xa, xb in squares]
    return np.array(out)
