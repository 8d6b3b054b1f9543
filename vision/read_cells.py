"""Stage 4, Cells: each cell read as empty, light, dark or hidden.

The cell network reads every cell from its measured colours (`cell_probabilities`); the
patch network takes a second look, through the cell's image beside the bare board's patch
there, at the cells the first is unsure of (`second_look`). `looked_cells` runs both.
"""

from __future__ import annotations

from dataclasses import replace

import cv2
import numpy as np

from contracts.calibration import ColourModel, Thresholds
from vision.bridges import plan_tables
from vision.cells import SIZE
from vision.classify import (
    DARK,
    EMPTY,
    LIGHT,
    UNKNOWN,
    CellReading,
    classify_cells,
    colour_distance,
    median_along,
    uniform_cells,
)
from vision.features import cell_colours
from vision.learned import Network, background_change, cell_features, end_chance
from vision.measure import Measurement, Plan
from vision.patches import (
    PatchNetwork,
    bare_mismatch,
    cell_patches,
    patch_network,
    tile_colours,
    with_reference,
    with_tile_colours,
)


def cell_probabilities(
    settings: Thresholds, m: Measurement, model: ColourModel, reading: CellReading,
    net: Network, feats: np.ndarray,
) -> tuple[np.ndarray, ColourModel, CellReading]:
    """The cell network's probabilities (`feats`: its inputs for `model`), after learning
    the tile colours once more from the cells it is sure of: a lamp's glare or a shadow can
    mislead the clustering, less so the network. Returns the probabilities and the colour
    model and reading they go with."""
    probs = _overrule(net.proba(feats), reading)
    better = refined_colours(settings, model, m, probs)
    if better is not None:
        model = better
        # Without the rim boxes' votes: only the thresholds' bridge finding reads them, and
        # `observe` classifies the cells anew for it.
        reading = classify_cells(settings, m.sub_lab, model)
        probs = _overrule(net.proba(cell_features(m, model)), reading)
    return probs, model, reading


def looked_cells(
    settings: Thresholds, plan: Plan, m: Measurement, model: ColourModel, reading: CellReading,
    net: Network, feats: np.ndarray,
) -> tuple[np.ndarray, ColourModel, CellReading, np.ndarray]:
    """`cell_probabilities`, after the second look at the cells it is unsure of: the cell
    probabilities the bridges are found with. Also each cell's chance of being a bridge's
    end (`end_chance`), before the look or after it, whichever is higher: the look can take
    a tile whose top a bridge's foot hides for bare board."""
    probs, model, reading = cell_probabilities(settings, m, model, reading, net, feats)
    looked = _overrule(second_look(settings, plan, m, model, probs, background_change(feats)),
                       reading)
    return looked, model, reading, np.maximum(end_chance(probs), end_chance(looked))


def refined_colours(
    settings: Thresholds, model: ColourModel, m: Measurement, probs: np.ndarray
) -> ColourModel | None:
    """The tile colours again, as the median of the uniform cells the network is sure of
    (at least two); None when neither moves by more than `refine_move`."""
    changes = {}
    uniform = uniform_cells(settings, m.sub_lab, m.cells_lab)
    for name, cls in (("light", LIGHT), ("dark", DARK)):
        sure = (probs[:, cls] >= settings.refine_p) & uniform
        if sure.sum() < 2:
            continue
        centre = median_along(m.cells_lab[sure], 0)
        old = getattr(model, name)
        if old is None or float(colour_distance(centre[None, :], old)[0]) > settings.refine_move:
            changes[name] = (float(centre[0]), float(centre[1]), float(centre[2]))
    return replace(model, **changes) if changes else None


def second_look(settings: Thresholds, plan: Plan, m: Measurement, model: ColourModel,
                 probs: np.ndarray, change: np.ndarray | None = None) -> np.ndarray:
    """The cell probabilities with those the cell network is unsure of replaced by the patch
    network's (`vision.patches`), when it is there. A cell the cell network takes for
    hidden keeps its own: the patch network keeps the chance that a cell is hidden, so it
    could not change that answer (and a hand makes many cells unsure). With `change` (see
    `background_change`), a cell read as bare board that has changed from the bare board
    seen there by more than `changed_bare` gets the look too, however sure, and so does a
    cell read as a tile that has changed by less than `unchanged_tile`; so does a cell
    read as bare board in a burnt-out picture (`saturated_levels`). Where the look finds a tile in
    a cell the cell network read as bare board, the bare cells next to it that changed by
    more than `neighbour_changed` get the look too."""
    net = patch_network()
    # Doubt among what the cell can be in view: the look cannot change the chance that
    # it is hidden, so a cell sure of its state but for that chance gains nothing by it.
    ranked = np.sort(in_view(probs), axis=1)
    top, rival = ranked[:, -1], ranked[:, -2]
    doubt = (top < settings.second_look_p) | (rival > settings.rival_p)
    best = probs.argmax(axis=1)
    bare = best == EMPTY
    if change is not None:
        changed = bare & (change > settings.changed_bare)  # NaN (not known) compares False
        if changed.any():
            doubt |= changed & ~_maybe_spanned(plan, probs)
        tile = (best == LIGHT) | (best == DARK)
        doubt |= tile & (change < settings.unchanged_tile)  # NaN (not known) compares False
    subs = m.sub_bgr if m.sub_bgr is not None else cell_colours(m.integral, plan.sampling)
    doubt |= bare & (subs.min(axis=(1, 2)) >= settings.saturated_levels)
    unsure = np.flatnonzero(doubt & (probs[:, UNKNOWN] < 0.5))
    if net is None or not len(unsure):
        return probs
    if len(unsure) > settings.second_looks and (probs[:, UNKNOWN] >= 0.5).any():
        # An arm over the board: the least sure (the reading waits for it anyway). Without
        # one, every unsure cell is looked at: a lamp can make most of a board unsure.
        unsure = unsure[np.argsort(top[unsure], kind="stable")[:settings.second_looks]]
    out = probs.copy()
    look_at_cells(settings, plan, m, model, net, unsure, out)
    if change is not None:
        # The cell network sure of bare board where the look sees a tile: a shadow (a
        # hand's, held high) can make a light tile look like the board to it. The bare
        # cells next to it that have changed more than bare board does are looked at too.
        turned = unsure[(best[unsure] == EMPTY) & (out[unsure].argmax(axis=1) != EMPTY)]
        if len(turned):
            grid = np.zeros(SIZE * SIZE, bool)
            grid[turned] = True
            near = with_neighbours(grid.reshape(SIZE, SIZE)).ravel()
            near[unsure] = False
            more = np.flatnonzero(near & bare & (change > settings.neighbour_changed)
                                  & (probs[:, UNKNOWN] < 0.5) & ~_maybe_spanned(plan, probs))
            if len(more):
                look_at_cells(settings, plan, m, model, net, more, out)
    return out


def look_at_cells(settings: Thresholds, plan: Plan, m: Measurement, model: ColourModel,
             net: PatchNetwork, cells: np.ndarray, out: np.ndarray) -> None:
    """The patch network's probabilities for `cells` written into `out` (the cell
    network's, whose rows of `cells` it steadies; see `second_look`)."""
    patches = cell_patches(settings, plan.sampling, m.topdown, m.light_coef, model, cells)
    if net.channels >= 6:
        patches = with_reference(settings, plan.sampling, patches, m.bare_view, model, cells)
    if net.channels == 12:
        patches = with_tile_colours(patches, tile_colours(model))
    out[cells] = net.steady_proba(settings, patches, out[cells])
    if m.bare_view is not None and patches.shape[3] >= 6:
        same = cells[m.bare_view.known[cells] & (bare_mismatch(patches) < settings.same_as_bare)]
        out[same, :UNKNOWN] = 0.0
        out[same, EMPTY] = 1.0 - out[same, UNKNOWN]


def in_view(probs: np.ndarray) -> np.ndarray:
    """(n, 4) cell probabilities as (n, 3): empty, light, dark, given that the cell is in
    view (each row's chance of being hidden taken out)."""
    seen = probs[:, :UNKNOWN]
    result: np.ndarray = seen / np.maximum(seen.sum(axis=1, keepdims=True), 1e-12)
    return result


def _maybe_spanned(plan: Plan, probs: np.ndarray) -> np.ndarray:
    """(100,) the cells a bridge could pass over: between two cells read as tiles of one
    colour at a bridge's reach. A deck over bare board changes its colour too."""
    ends, under, _ = plan_tables(plan.bridges)
    codes = probs.argmax(axis=1)
    first = codes[ends[:, 0]]
    tiles = (first == codes[ends[:, 1]]) & ((first == LIGHT) | (first == DARK))
    out = np.zeros(SIZE * SIZE, bool)
    out[under[tiles].ravel()] = True
    return out


def _overrule(probs: np.ndarray, reading: CellReading) -> np.ndarray:
    """Where every sub-box of a cell matches one learned colour, the network may choose
    among the colours but may not call the cell hidden: it knows scenes like those it was
    trained on, and a cell all of one learned colour is a tile or the board, not a hand."""
    out = probs.copy()
    hidden = out.argmax(axis=1) == UNKNOWN
    for cls in (EMPTY, LIGHT, DARK):
        sure = hidden & (reading.votes[:, cls] >= 9)
        out[sure] = 0.0
        out[sure, cls] = 1.0
    return out


def with_neighbours(mask: np.ndarray) -> np.ndarray:
    """(10, 10) the cells of `mask` ((10, 10) bool) and those next to them, side by side or
    corner to corner."""
    result: np.ndarray = cv2.dilate(mask.astype(np.uint8), np.ones((3, 3), np.uint8)) > 0
    return result
