"""Stage 3b: classify each cell as empty, light tile, dark tile, or unknown (something else).

Colours are compared in Lab after light normalisation (see `vision.features`), with
lightness counted half so that soft shadows matter less than hue. The colour model is
learned, never hard-coded: `learn_colours` clusters the cells of one image (k-means), takes
the largest cluster as the bare board and tells light from dark tiles by lightness;
`update_colours` lets a model follow slow light changes.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import cv2
import numpy as np

from calibration.format import ColourModel, Lab, Thresholds

EMPTY, LIGHT, DARK, UNKNOWN = 0, 1, 2, 3
_WEIGHTS = np.array([0.5, 1.0, 1.0])


@dataclass(frozen=True)
class CellReading:
    """Per cell (index rank * 10 + file): class code, confidence, distance to its class."""

    codes: np.ndarray
    confidence: np.ndarray
    distance: np.ndarray


def colour_distance(lab: np.ndarray, centre: Lab | np.ndarray) -> np.ndarray:
    """Weighted Lab distance (lightness counted half) of colours (n, 3) to one centre."""
    diff = (np.asarray(lab, np.float64) - np.asarray(centre, np.float64)) * _WEIGHTS
    result: np.ndarray = np.sqrt((diff**2).sum(axis=-1))
    return result


def learn_colours(settings: Thresholds, lab: np.ndarray, ring: Lab) -> ColourModel:
    """A colour model from one image's cell colours (n, 3 Lab).

    The largest cluster is the bare board; other clusters are tiles, the lighter one light.
    With only one tile cluster, it is light when it is lighter than the board.
    """
    clusters = _clusters(lab, settings.tile_merge_distance)
    clusters.sort(key=lambda c: -c[1])
    empty = clusters[0][0]
    tiles = [c for c in clusters[1:] if c[1] >= 1]
    light: Lab | None = None
    dark: Lab | None = None
    if len(tiles) >= 2:
        first, second = sorted(tiles[:2], key=lambda c: -c[0][0])
        light, dark = first[0], second[0]
    elif len(tiles) == 1:
        centre = tiles[0][0]
        if centre[0] > empty[0] + settings.light_vs_board_lightness:
            light = centre
        else:
            dark = centre
    return ColourModel(empty=empty, ring=ring, light=light, dark=dark)


def _clusters(lab: np.ndarray, merge: float) -> list[tuple[Lab, int]]:
    """k-means (k = 3) on weighted Lab, then clusters closer than `merge` joined."""
    data = (np.asarray(lab, np.float64) * _WEIGHTS).astype(np.float32)
    k = min(3, len(data))
    criteria = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 30, 0.1)
    cv2.setRNGSeed(7)
    _, labels, centres = cv2.kmeans(data, k, None, criteria, 4, cv2.KMEANS_PP_CENTERS)
    groups = [[int(i)] for i in range(k)]
    members = [data[labels.ravel() == i] for i in range(k)]
    merged = True
    while merged and len(groups) > 1:
        merged = False
        means = [np.concatenate([members[i] for i in g]).mean(axis=0) for g in groups]
        for i in range(len(groups)):
            for j in range(i + 1, len(groups)):
                if np.linalg.norm(means[i] - means[j]) < merge:
                    groups[i] += groups.pop(j)
                    merged = True
                    break
            if merged:
                break
    out: list[tuple[Lab, int]] = []
    for g in groups:
        pts = np.concatenate([members[i] for i in g])
        if len(pts) == 0:
            continue
        centre = np.median(pts, axis=0) / _WEIGHTS
        out.append(((float(centre[0]), float(centre[1]), float(centre[2])), len(pts)))
    return out


def classify_cells(settings: Thresholds, lab: np.ndarray, model: ColourModel) -> CellReading:
    """Nearest colour centre per cell; UNKNOWN when no centre is near enough."""
    centres = [model.empty, model.light, model.dark]
    dists = np.full((len(lab), 3), np.inf)
    for i, centre in enumerate(centres):
        if centre is not None:
            dists[:, i] = colour_distance(lab, centre)
    order = np.argsort(dists, axis=1)
    best = order[:, 0]
    d1 = dists[np.arange(len(lab)), best]
    d2 = dists[np.arange(len(lab)), order[:, 1]]
    codes = best.copy()
    codes[d1 > settings.occlusion_distance] = UNKNOWN
    with np.errstate(invalid="ignore", divide="ignore"):
        conf = np.where(np.isfinite(d2), 1.0 - d1 / np.maximum(d2, 1e-6), 1.0)
    conf = np.clip(conf, 0.0, 1.0)
    conf[codes == UNKNOWN] = 0.0
    return CellReading(codes, conf, d1)


def complete_colours(
    settings: Thresholds, lab: np.ndarray, model: ColourModel
) -> ColourModel:
    """Fill in tile colours a model lacks from cells far from the board colour."""
    if model.light is not None and model.dark is not None:
        return model
    far = colour_distance(lab, model.empty) > settings.empty_distance
    for known in (model.light, model.dark):
        if known is not None:
            far &= colour_distance(lab, known) > settings.empty_distance
    if far.sum() < 1:
        return model
    clusters = _clusters(lab[far], settings.tile_merge_distance)
    clusters.sort(key=lambda c: -c[1])
    light, dark = model.light, model.dark
    if light is None and dark is None:
        if len(clusters) >= 2:
            first, second = sorted(clusters[:2], key=lambda c: -c[0][0])
            light, dark = first[0], second[0]
        elif clusters[0][0][0] > model.empty[0] + settings.light_vs_board_lightness:
            light = clusters[0][0]
        else:
            dark = clusters[0][0]
    elif light is None:
        lighter = [c for c, _ in clusters if dark is not None and c[0] > dark[0]]
        light = lighter[0] if lighter else None
    else:
        darker = [c for c, _ in clusters if c[0] < light[0]]
        dark = darker[0] if darker else None
    return replace(model, light=light, dark=dark)


def update_colours(
    settings: Thresholds, model: ColourModel, lab: np.ndarray, reading: CellReading
) -> ColourModel:
    """Move each known centre a little (adapt_rate) toward the cells confidently read as it."""
    rate = settings.adapt_rate

    def moved(centre: Lab | None, code: int) -> Lab | None:
        if centre is None:
            return None
        sel = (reading.codes == code) & (reading.confidence > 0.5)
        if sel.sum() < 2:
            return centre
        target = np.median(lab[sel], axis=0)
        new = (1 - rate) * np.asarray(centre) + rate * target
        return (float(new[0]), float(new[1]), float(new[2]))

    empty = moved(model.empty, EMPTY)
    assert empty is not None
    return replace(
        model, empty=empty, light=moved(model.light, LIGHT), dark=moved(model.dark, DARK)
    )
