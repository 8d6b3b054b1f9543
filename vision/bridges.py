"""Stage 4: find bridges (straight, diagonal, knight) between tiles of one colour.

A bridge stands on its two end tiles and arches over the cells between them, so seen at an
angle it appears displaced from those cells. For every pair of cells at bridge distance the
plan holds sample boxes along the bridge's 3D path (tile-top height at the ends, arch height
in the middle) projected through the camera pose into the top-down view. A pair scores the
fraction of its middle samples that are not bare board; pairs between two tiles of one
colour over empty cells are accepted best first, each tile carrying at most one bridge end.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from calibration.format import ColourModel, Thresholds
from vision.cells import Cell, cells_under
from vision.classify import DARK, LIGHT, colour_distance
from vision.features import SamplingPlan, box_means, field_at, to_lab
from vision.geometry import SIZE

_OFFSETS = ((0, 2), (2, 0), (2, 2), (2, -2), (1, 2), (2, 1), (2, -1), (1, -2))
_T = np.array([0.36, 0.43, 0.5, 0.57, 0.64])
_HALF = 0.07


@dataclass(frozen=True)
class BridgePlan:
    """Candidate bridges and their sample boxes in the top-down view."""

    pairs: tuple[tuple[Cell, Cell], ...]
    boxes: np.ndarray
    """(pairs * samples, 4) int boxes."""
    xy: np.ndarray
    """(pairs * samples, 2) board coordinates where the samples appear (for the light field)."""


def plan_bridges(settings: Thresholds, plan: SamplingPlan) -> BridgePlan:
    """Sample boxes along every possible bridge's arch, seen through the plan's camera."""
    pairs: list[tuple[Cell, Cell]] = []
    for f in range(SIZE):
        for r in range(SIZE):
            for df, dr in _OFFSETS:
                g, s = f + df, r + dr
                if 0 <= g < SIZE and 0 <= s < SIZE:
                    pairs.append(((f, r), (g, s)))
    a = np.array([p[0] for p in pairs], np.float64) + 0.5
    b = np.array([p[1] for p in pairs], np.float64) + 0.5
    t = _T[None, :, None]
    xy = (a[:, None, :] * (1 - t) + b[:, None, :] * t).reshape(-1, 2)
    lift = settings.bridge_height_cells - settings.tile_height_cells
    z = settings.tile_height_cells + lift * 4 * _T * (1 - _T)
    heights = np.tile(z, len(pairs))
    seen = plan.geometry.raised(xy, heights)
    px, margin = settings.cell_px, settings.margin_cells
    x = (margin + seen[:, 0]) * px
    y = (margin + SIZE - seen[:, 1]) * px
    half = max(1.0, _HALF * px)
    side = plan.side
    x0 = np.clip(np.round(x - half), 0, side - 1)
    y0 = np.clip(np.round(y - half), 0, side - 1)
    x1 = np.clip(np.round(x + half), x0 + 1, side)
    y1 = np.clip(np.round(y + half), y0 + 1, side)
    boxes = np.column_stack([x0, y0, x1, y1]).astype(np.int64)
    return BridgePlan(tuple(pairs), boxes, seen)


def find_bridges(
    settings: Thresholds,
    bridge_plan: BridgePlan,
    ii: np.ndarray,
    light_coef: np.ndarray,
    codes: np.ndarray,
    model: ColourModel,
) -> tuple[list[tuple[Cell, Cell]], list[float]]:
    """Bridges read from the frame (pairs of cells) and their scores, best first."""
    tiles = (codes == LIGHT) | (codes == DARK)
    candidates = []
    n = len(_T)
    for i, (a, b) in enumerate(bridge_plan.pairs):
        ca, cb = codes[a[1] * SIZE + a[0]], codes[b[1] * SIZE + b[0]]
        if ca != cb or not tiles[a[1] * SIZE + a[0]]:
            continue
        under = cells_under(a, b)
        if any(tiles[c[1] * SIZE + c[0]] for c in under):
            continue
        candidates.append(i)
    if not candidates:
        return [], []
    idx = np.array(candidates)
    sample_idx = (idx[:, None] * n + np.arange(n)[None, :]).ravel()
    bgr = box_means(ii, bridge_plan.boxes[sample_idx])
    norm = bgr / field_at(light_coef, bridge_plan.xy[sample_idx]) * 100.0
    lab = to_lab(norm)
    not_board = colour_distance(lab, model.empty) > settings.empty_distance
    scores = not_board.reshape(len(idx), n).mean(axis=1)
    order = np.argsort(-scores, kind="stable")
    used: set[Cell] = set()
    found: list[tuple[Cell, Cell]] = []
    found_scores: list[float] = []
    for j in order:
        score = float(scores[j])
        if score < settings.bridge_min_score:
            break
        a, b = bridge_plan.pairs[idx[j]]
        if a in used or b in used:
            continue
        used.update((a, b))
        found.append((a, b))
        found_scores.append(score)
    return found, found_scores
