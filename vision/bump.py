"""A knocked camera: where the board's printed lines lie from where they lay.

`grid_profiles` sums the top-down view's edges along each grid line; `grid_offsets` finds
how far each line has moved since the reference frame; `nudged_corners` moves the grid by
that, and `realigned` lines the border band up with the reference's grey levels.
"""

from __future__ import annotations

import cv2
import numpy as np

from contracts.calibration import Thresholds
from vision.geometry import topdown_matrix
from vision.measure import Plan


def grid_profiles(ii: np.ndarray, inner: int) -> np.ndarray:
    """(4, side - 1) the top-down view's edges across x, in the top and the bottom half of
    the grid's rows, and across y, in the left and the right half of its columns: how the
    brightness of its columns (rows), summed over those rows (columns), changes from one
    to the next. The board's lines, its edge and the tiles' sides are their peaks and
    troughs; a hand or a lamp hardly moves them. From the integral image `ii` of the view
    (any channels), `inner` pixels of margin left out across."""
    side = ii.shape[0] - 1
    at = [inner, side // 2, side - inner]
    lines = np.concatenate([ii[at], ii[:, at].swapaxes(0, 1)])  # (6, side + 1[, channels])
    if ii.ndim > 2:  # the channels summed by a product: quicker than `sum` over so few
        lines = lines @ np.ones(ii.shape[2])
    sums = lines[[1, 2, 4, 5]] - lines[[0, 1, 3, 4]]  # running sums, along each half
    result: np.ndarray = sums[:, 2:] - 2.0 * sums[:, 1:-1] + sums[:, :-2]
    return result


def grid_offsets(before: np.ndarray, now: np.ndarray, reach: int) -> np.ndarray:
    """(4,) how far (top-down view pixels, to sub-pixel by a parabola) the board's lines
    in `now` lie from where they were `before` (both `grid_profiles`), within `reach`
    either way: across x in the top and the bottom half, across y in the left and the
    right half."""
    a = before - before.mean(axis=1, keepdims=True)
    b = np.zeros((len(now), now.shape[1] + 2 * reach))
    b[:, reach:-reach] = now - now.mean(axis=1, keepdims=True)
    # score[:, reach + k]: how well `now` matches taken k pixels along
    score = np.array([np.correlate(row, ref, "valid") for row, ref in zip(b, a, strict=True)])
    k = score.argmax(axis=1)
    rows = np.arange(len(k))
    inside = np.clip(k, 1, 2 * reach - 1)
    c0, c1, c2 = (score[rows, inside + d] for d in (-1, 0, 1))
    bend = c0 - 2.0 * c1 + c2
    ok = (k == inside) & (bend < 0)
    frac = np.where(ok, 0.5 * (c0 - c2) / np.where(ok, bend, -1.0), 0.0)
    result: np.ndarray = k - reach + frac
    return result


def nudged_corners(settings: Thresholds, plan: Plan, offsets: np.ndarray
                   ) -> np.ndarray | None:
    """The grid corners (image coordinates, a1 first) moved by `grid_offsets`: each
    half's shift taken for the middle of that half and carried on in a straight line to
    the grid's corners (a turn of the camera shifts the top and the bottom apart)."""
    px, margin, side = settings.cell_px, settings.margin_cells, plan.sampling.side
    to_top = topdown_matrix(plan.sampling.geometry, px, margin)
    corners = cv2.perspectiveTransform(plan.corners.reshape(-1, 1, 2), to_top).reshape(-1, 2)
    inner = margin * px
    near, far = (inner + side / 2) / 2, (side / 2 + side - inner) / 2
    x_top, x_bottom, y_left, y_right = (float(v) for v in offsets)
    moved = corners.copy()
    for i, (x, y) in enumerate(corners):
        moved[i, 0] = x + x_top + (y - near) * (x_bottom - x_top) / (far - near)
        moved[i, 1] = y + y_left + (x - near) * (y_right - y_left) / (far - near)
    found = cv2.perspectiveTransform(moved.reshape(-1, 1, 2), np.linalg.inv(to_top))
    result = found.reshape(-1, 2)
    return result if np.isfinite(result).all() else None


def realigned(settings: Thresholds, plan: Plan, before: np.ndarray, now: np.ndarray
              ) -> tuple[np.ndarray, float] | None:
    """The grid corners (image coordinates, a1 first) that line the border band of the
    top-down view `now` up with that of `before` (grey, both made with `plan`), and how
    far the corners moved in the top-down view; None when the two do not match
    (`nudge_min_correlation`). The band (the margin around the grid and the grid's outer
    line) is what nothing but a hand changes: tiles stand inside it. A homography is
    fitted by OpenCV's ECC method at half size, then at full size, then `realign_refits`
    times at full size again without the band's pixels that match worst
    (`realign_outliers`, chosen afresh each time)."""
    px, margin, side = settings.cell_px, settings.margin_cells, plan.sampling.side
    mask = np.full((side, side), 255, np.uint8)
    inner = int(round((margin + 0.1) * px))
    mask[inner:side - inner, inner:side - inner] = 0
    half = (side // 2, side // 2)
    warp = np.eye(3, dtype=np.float32)
    try:
        for scale, steps, blur in ((0.5, 30, 3), (1.0, 10, 5)):
            if scale == 1.0:
                a, b, band = before, now, mask
                warp = _rescaled(warp, 2.0)
            else:
                a, b = (cv2.resize(x, half, interpolation=cv2.INTER_AREA) for x in (before, now))
                band = cv2.resize(mask, half, interpolation=cv2.INTER_NEAREST)
            score, warp = cv2.findTransformECC(
                a, b, warp, cv2.MOTION_HOMOGRAPHY,
                (cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, steps, 1e-4), band, blur)
    except cv2.error:
        return None  # no match: the two do not correlate, or the fit did not converge
    if not np.isfinite(warp).all() or score < settings.nudge_min_correlation:
        return None
    for _ in range(settings.realign_refits):
        try:
            _, refit = cv2.findTransformECC(
                before, now, warp, cv2.MOTION_HOMOGRAPHY,
                (cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, 10, 1e-4),
                _best_matched(before, now, warp, mask, settings.realign_outliers), 5)
        except cv2.error:
            break  # the fit before stands
        if not np.isfinite(refit).all():
            break
        warp = refit
    to_top = topdown_matrix(plan.sampling.geometry, px, margin)
    corners = cv2.perspectiveTransform(plan.corners.reshape(-1, 1, 2), to_top)
    moved = cv2.perspectiveTransform(corners, warp.astype(np.float64))
    shift = float(np.abs(moved - corners).max())
    found: np.ndarray = cv2.perspectiveTransform(moved, np.linalg.inv(to_top)).reshape(-1, 2)
    return found, shift


def _best_matched(before: np.ndarray, now: np.ndarray, warp: np.ndarray, band: np.ndarray,
                  outliers: float) -> np.ndarray:
    """`band` (a uint8 mask of the top-down view) without its `realign_outliers` pixels
    that differ most between `before` and `now` brought onto it by `warp` (each view's
    grey levels over the band in units of their spread, the difference smoothed)."""
    side = band.shape[1], band.shape[0]
    moved = cv2.warpPerspective(now, warp, side, flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                                borderMode=cv2.BORDER_REPLICATE)
    inside = band > 0
    a, b = before.astype(np.float32), moved.astype(np.float32)
    a = (a - a[inside].mean()) / max(float(a[inside].std()), 1e-6)
    b = (b - b[inside].mean()) / max(float(b[inside].std()), 1e-6)
    off = cv2.GaussianBlur(np.abs(a - b), (0, 0), 2.0)
    kept = band.copy()
    kept[off > np.quantile(off[inside], 1.0 - outliers)] = 0
    return kept


def _rescaled(warp: np.ndarray, factor: float) -> np.ndarray:
    """A homography between images `factor` times larger."""
    scale = np.diag([factor, factor, 1.0])
    result: np.ndarray = (scale @ warp.astype(np.float64) @ np.linalg.inv(scale)).astype(
        np.float32)
    return result
