"""Stage 4b: a second look at the bridge candidates the bridge network is unsure of.

The bridge network (`vision.learned`) reads a candidate through box means along its deck and
beside it. Like the cell network it cannot see shape: a window's shadow lying along two
tiles, or a grey deck over a blue-grey board in dim light, can give the same means as a
bridge and as no bridge. The picture tells them apart: a deck's two straight long edges,
its ends resting on the tiles, the shadow it casts beside itself.

So each candidate the bridge network gives a probability between `LOW` and `HIGH`, a
few faint ones below (between `deck_faint` and `LOW`), and a few fainter still between two
tiles surely of one colour (`deck_sure_looks`), get a second look: a patch of the top-down
view along its deck (the line between its two tiles' centres, seen at a middle deck height,
from a fifth of the way before the first centre to a fifth past the second, and `ACROSS`
cells either side), with the light field and the bare board's colour divided out as for
the cells (`vision.patches`), is read by a small convolutional network together with the
bridge network's answer and the bridge's kind. Its answer replaces the bridge network's.

The network is the patch network's kind (`vision.patches.PatchNetwork`), trained on
generated scenes (`python -m lab.train_decks --torch`) and shipped as `vision/models/decks.npz`;
without the file the bridge network's answer stands.
"""

from __future__ import annotations

from functools import cache

import cv2
import numpy as np

from contracts.calibration import ColourModel, Thresholds
from vision.features import SamplingPlan, field_at
from vision.geometry import SIZE
from vision.learned import MODELS
from vision.patches import FLOOR, PatchNetwork, shipped

DECK_MODEL = MODELS / "decks.npz"
LONG = 48
"""Samples along a deck patch ..."""
WIDE = 24
"""... and across it."""
BEFORE = 0.2
"""How far the patch reaches past each end's centre, as a share of the bridge's length."""
ACROSS = 0.7
"""Cells either side of the deck's middle line that the patch covers: a deck higher or
lower than the middle height tried appears off that line at an angle."""
LOW, HIGH = 0.0008, 0.998
"""Candidates whose bridge-network probability lies between these get a second look (at
most `Thresholds.deck_looks` a frame)."""
@cache
def deck_network() -> PatchNetwork | None:
    """The shipped deck network, or None when it is missing or unreadable."""
    return shipped(DECK_MODEL)


def deck_height(settings: Thresholds) -> float:
    """The middle of the deck heights tried (cells)."""
    return settings.bridge_height_cells + settings.bridge_height_step * (
        settings.bridge_heights - 1) / 2


def deck_frames(settings: Thresholds, plan: SamplingPlan, pairs: np.ndarray) -> np.ndarray:
    """Where the patches of candidate bridges `pairs` ((k, 2, 2): per bridge its two end
    cells' (file, rank)) lie in the top-down view: (k, 3, 2) pixels, per bridge where its
    patch starts, where it has gone one bridge's length along, and where it has gone one
    cell across instead. They depend only on the board's position (the pipeline's `Plan`
    keeps them for every candidate)."""
    a = pairs[:, 0].astype(np.float64) + 0.5
    along = pairs[:, 1].astype(np.float64) + 0.5 - a
    normal = np.column_stack([-along[:, 1], along[:, 0]])
    normal /= np.maximum(np.linalg.norm(normal, axis=1, keepdims=True), 1e-9)
    start = a - BEFORE * along
    # Seen at the deck's height; the patch is the affine map through these three points (a
    # deck is a short span: perspective across it is slight).
    anchors = np.stack([start, start + along, start + normal], axis=1).reshape(-1, 2)
    seen = plan.geometry.raised(anchors, deck_height(settings)).reshape(len(pairs), 3, 2)
    px, margin = settings.cell_px, settings.margin_cells
    result: np.ndarray = np.stack([(margin + seen[..., 0]) * px,
                                   (margin + SIZE - seen[..., 1]) * px], axis=2)
    return result


_ALONG = np.linspace(0.0, 1.0 + 2 * BEFORE, LONG)
"""Where a deck patch's samples lie along the bridge, in lengths of the bridge ..."""
_ACROSS = np.linspace(ACROSS, -ACROSS, WIDE)
"""... and across it, in cells, from its left."""


def deck_patches(settings: Thresholds, plan: SamplingPlan, topdown: np.ndarray,
                 light_coef: np.ndarray, model: ColourModel, pairs: np.ndarray,
                 frames: np.ndarray | None = None) -> np.ndarray:
    """Patches of the top-down view along candidate bridges, `pairs` (k, 2, 2): per bridge
    its two end cells' (file, rank); `frames`: their `deck_frames`, when known. Each is
    (WIDE, LONG, 3): along its length from the first end to the second, across from its
    left to its right seen from the first end; on the scale of `vision.patches.cell_patches`
    (bare board 0, clipped at 255/128 - 1).
    """
    k = len(pairs)
    out = np.empty((k, WIDE, LONG, 3), np.float32)
    if not k:
        return out
    if frames is None:
        frames = deck_frames(settings, plan, pairs)
    origin = frames[:, 0]
    step_long = frames[:, 1] - origin
    step_across = frames[:, 2] - origin
    # x and y apart: numpy is slow over a last axis of 2 (or 3, below) items.
    maps = [(origin[:, None, None, i] + _ALONG[None, None, :] * step_long[:, None, None, i]
             + _ACROSS[None, :, None] * step_across[:, None, None, i]
             ).reshape(k * WIDE, LONG).astype(np.float32) for i in (0, 1)]
    sampled = cv2.remap(topdown, maps[0], maps[1], cv2.INTER_LINEAR,
                        borderMode=cv2.BORDER_REPLICATE)
    middle = (pairs[:, 0] + pairs[:, 1]).astype(np.float64) / 2 + 0.5
    bare = cv2.cvtColor(np.array(model.empty, np.float32).reshape(1, 1, 3),
                        cv2.COLOR_Lab2BGR).reshape(3) * 255.0
    scale = (field_at(light_coef, middle) * np.maximum(bare, 8.0)).astype(np.float32)
    np.divide(sampled.reshape(k, -1), np.tile(scale, WIDE * LONG), out=out.reshape(k, -1))
    np.minimum(out, 255.0 / 128.0, out=out)
    out -= 1.0
    return out


def deck_extras(p: np.ndarray, kinds: np.ndarray) -> np.ndarray:
    """What the deck network reads besides the patch: the bridge network's log-odds as two
    log-probabilities, and the bridge's kind (one-hot straight / diagonal / knight)."""
    p = np.clip(np.asarray(p, np.float64), FLOOR, 1.0 - FLOOR)
    result: np.ndarray = np.column_stack([np.log(1.0 - p), np.log(p), kinds]).astype(
        np.float32)
    return result


def unsure_candidates(settings: Thresholds, p: np.ndarray, sure: np.ndarray | None = None
                      ) -> np.ndarray:
    """Indices of the candidates that get a second look: the unsure ones (the least sure
    first when there are more than `deck_looks`), then the faint ones (the likeliest first
    when there are more than `deck_faint_looks`), then with `sure` (per candidate, whether its
    ends are sure tiles of one colour) fainter ones between sure tiles (see
    `deck_sure_looks`)."""
    unsure = np.flatnonzero((p > LOW) & (p < HIGH))
    if len(unsure) > settings.deck_looks:
        nearest = np.argsort(np.abs(p[unsure] - 0.5), kind="stable")
        unsure = unsure[nearest[:settings.deck_looks]]
    faint = np.flatnonzero((p > settings.deck_faint) & (p <= LOW))
    if len(faint) > settings.deck_faint_looks:
        faint = faint[np.argsort(-p[faint], kind="stable")[:settings.deck_faint_looks]]
    result: np.ndarray = np.concatenate([unsure, faint])
    if sure is not None and settings.deck_sure_looks:
        rest = np.flatnonzero(sure & (p <= settings.deck_faint))
        if len(rest) > settings.deck_sure_looks:
            rest = rest[np.argsort(-p[rest], kind="stable")[:settings.deck_sure_looks]]
        result = np.concatenate([result, rest])
    return result
