"""Stage 3b: classify each cell as empty, light tile, dark tile, or unknown (something else).

Colours are compared in Lab after light normalisation (see `vision.features`). The colour model is
learned, never hard-coded: `learn_colours` clusters the cells of one image (k-means), takes
the largest cluster as the bare board and tells light from dark tiles by lightness;
`update_colours` lets a model follow slow light changes.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import cv2
import numpy as np

from calibration.format import ColourModel, Lab, Thresholds

SIZE = 10

EMPTY, LIGHT, DARK, UNKNOWN = 0, 1, 2, 3
BRIDGE = 3  # the fourth colour a sub-box may vote for
_WEIGHTS = np.array([1.0, 1.0, 1.0])


@dataclass(frozen=True)
class CellReading:
    """Per cell (index rank * 10 + file): class code, confidence, sub-box votes (n, 3)."""

    codes: np.ndarray
    confidence: np.ndarray
    votes: np.ndarray


def colour_distance(lab: np.ndarray, centre: Lab | np.ndarray) -> np.ndarray:
    """Lab distance of colours (n, 3) to one centre."""
    diff = (np.asarray(lab, np.float64) - np.asarray(centre, np.float64)) * _WEIGHTS
    result: np.ndarray = np.sqrt((diff**2).sum(axis=-1))
    return result


def uniform_cells(settings: Thresholds, sub_lab: np.ndarray) -> np.ndarray:
    """Cells whose 3 x 3 sub-boxes agree (no bridge, shadow edge or hand across them)."""
    med = np.median(sub_lab, axis=1, keepdims=True)
    spread = np.sqrt(((sub_lab - med) ** 2).sum(axis=2)).max(axis=1)
    result: np.ndarray = spread <= settings.uniform_spread
    return result


def learn_colours(settings: Thresholds, sub_lab: np.ndarray, ring: Lab) -> ColourModel:
    """A colour model from one image's cells ((100, 9, 3) Lab of their sub-boxes).

    Only uniform cells are clustered (k-means, at most three clusters). The bare board is
    the cluster whose cells form the largest connected area (tiles lie in groups of at
    most four); of two tile clusters the lighter is light; a single tile cluster is light
    when it is lighter than the board.
    """
    uniform = uniform_cells(settings, sub_lab)
    cells = np.median(sub_lab, axis=1)
    lab = cells[uniform] if uniform.sum() >= 10 else cells
    clusters = _clusters(lab, settings)
    clusters.sort(key=lambda c: -c[1])
    clusters = clusters[:3]
    centres = np.array([c[0] for c in clusters])
    nearest = np.argmin(
        np.stack([colour_distance(cells, c) for c in centres], axis=1), axis=1
    )
    # The bare board shows in wide connected areas; tiles come in groups of at most four.
    spans = [_largest_group(nearest == i) for i in range(len(clusters))]
    board = max(range(len(clusters)), key=lambda i: (spans[i], clusters[i][1]))
    empty = clusters[board][0]
    tiles = sorted((c[0] for i, c in enumerate(clusters) if i != board), key=lambda c: -c[0])
    light: Lab | None = None
    dark: Lab | None = None
    if len(tiles) == 2:
        light, dark = tiles
    elif len(tiles) == 1:
        if tiles[0][0] > empty[0] + settings.light_vs_board_lightness:
            light = tiles[0]
        else:
            dark = tiles[0]
    return ColourModel(empty=empty, ring=ring, light=light, dark=dark)


def _largest_group(mask: np.ndarray) -> int:
    """Cells in the largest 4-connected group of a (100,) mask laid out on the board."""
    grid = mask.reshape(SIZE, SIZE).astype(np.uint8)
    count, labels = cv2.connectedComponents(grid, connectivity=4)
    if count <= 1:
        return 0
    return int(np.bincount(labels.ravel())[1:].max())


def _clusters(lab: np.ndarray, settings: Thresholds) -> list[tuple[Lab, int]]:
    """k-means (k = 3) on Lab, then clusters that are not clearly apart joined.

    Two clusters stay apart when their centres are further than both the minimum
    separation and `cluster_separation_sigmas` times their spread along the line joining
    them (a single blob cut in two by k-means fails that test).
    """
    data = (np.asarray(lab, np.float64) * _WEIGHTS).astype(np.float32)
    k = min(3, len(data))
    criteria = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 30, 0.1)
    cv2.setRNGSeed(7)
    _, labels, _ = cv2.kmeans(data, k, None, criteria, 4, cv2.KMEANS_PP_CENTERS)
    groups = [data[labels.ravel() == i] for i in range(k)]
    groups = [g for g in groups if len(g)]
    merged = True
    while merged and len(groups) > 1:
        merged = False
        for i in range(len(groups)):
            for j in range(i + 1, len(groups)):
                if not _apart(groups[i], groups[j], settings):
                    groups[i] = np.concatenate([groups[i], groups.pop(j)])
                    merged = True
                    break
            if merged:
                break
    out: list[tuple[Lab, int]] = []
    for pts in groups:
        centre = np.median(pts, axis=0) / _WEIGHTS
        out.append(((float(centre[0]), float(centre[1]), float(centre[2])), len(pts)))
    return out


def _apart(a: np.ndarray, b: np.ndarray, settings: Thresholds) -> bool:
    diff = b.mean(axis=0) - a.mean(axis=0)
    dist = float(np.linalg.norm(diff))
    if dist < settings.cluster_min_separation:
        return False
    u = diff / dist
    spread = np.sqrt((np.var(a @ u) + np.var(b @ u)) / 2)
    return dist > settings.cluster_separation_sigmas * float(spread)


def classify_cells(settings: Thresholds, sub_lab: np.ndarray, model: ColourModel) -> CellReading:
    """Per cell, a vote of its 3 x 3 sub-boxes (sub_lab: (100, 9, 3)) among the colour centres.

    A sub-box votes for the nearest centre (board, light, dark, bridge) within
    `match_distance`, or for nothing. A cell is a tile when at least `tile_min_votes`
    sub-boxes vote for that tile colour, or a few do and the rest is bridge (a bridge's
    foot rests on it); empty when at least `empty_min_votes` vote for the board, or a few
    do and the rest is bridge (a deck passes over it); UNKNOWN otherwise (a hand, a sleeve,
    something the model does not know).
    """
    n, k, _ = sub_lab.shape
    flat = sub_lab.reshape(-1, 3)
    dists = np.full((len(flat), 4), np.inf)
    for i, centre in enumerate((model.empty, model.light, model.dark, model.bridge)):
        if centre is not None:
            dists[:, i] = colour_distance(flat, centre)
    nearest = np.argmin(dists, axis=1)
    close = dists[np.arange(len(flat)), nearest] <= settings.match_distance
    votes = np.zeros((n, 4))
    for cls in range(4):
        votes[:, cls] = ((nearest == cls) & close).reshape(n, k).sum(axis=1)
    deck = votes[:, BRIDGE]
    codes = np.full(n, UNKNOWN)
    full = settings.tile_min_votes + 2
    codes[(votes[:, EMPTY] >= settings.empty_min_votes)
          | ((votes[:, EMPTY] >= 2) & (votes[:, EMPTY] + deck >= full))] = EMPTY
    for cls, other in ((LIGHT, DARK), (DARK, LIGHT)):
        clear = (votes[:, cls] >= settings.tile_min_votes) & (votes[:, cls] > votes[:, other])
        covered = (votes[:, cls] >= 2) & (votes[:, cls] + deck >= full) & (votes[:, other] <= 1)
        codes[clear | (covered & (votes[:, cls] >= votes[:, EMPTY]))] = cls
    chosen = votes[np.arange(n), np.minimum(codes, 2)] + np.where(codes == UNKNOWN, 0, deck)
    conf = np.where(codes == UNKNOWN, 0.0, np.minimum(chosen, k) / k)
    return CellReading(codes, conf, votes)


def complete_colours(
    settings: Thresholds, sub_lab: np.ndarray, model: ColourModel
) -> ColourModel:
    """Fill in tile colours a model lacks from uniform cells far from the board colour."""
    if model.light is not None and model.dark is not None:
        return model
    lab = np.median(sub_lab, axis=1)
    far = uniform_cells(settings, sub_lab)
    far &= colour_distance(lab, model.empty) > settings.empty_distance
    for known in (model.light, model.dark):
        if known is not None:
            far &= colour_distance(lab, known) > settings.empty_distance
    if far.sum() < 2:
        return model
    clusters = _clusters(lab[far], settings)
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
