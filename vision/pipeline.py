"""The orchestrator: image -> Observation, and the `BoardReader` for the live loop.

`read_board` runs every stage on one image: locate (or take the calibration's corners) ->
plan the top-down sampling (undoing lens distortion) -> measure colours -> classify cells
(a second look through their image at those the cell network is unsure of) -> find bridges
(a second look along their decks at the candidates the bridge network is unsure of)
-> detect occlusion -> Observation. `BoardReader` keeps the plan, the
colour model and a reference view of the border between frames, so a frame costs one
remap and a few hundred box sums; it notices when the board or camera has been bumped and
re-locates the board.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, replace

import cv2
import numpy as np

from contracts.calibration import A1Corner, Calibration, ColourModel, Thresholds, default_thresholds
from vision.bridges import (
    BridgePlan,
    find_bridges,
    learn_bridge_colour,
    measure_deck_edges,
    measure_flanks,
    measure_paths,
    measure_rows,
    plan_bridges,
    plan_conflicts,
    plan_tables,
)
from vision.cells import SIZE, Cell, CellState, cells_under
from vision.classify import (
    DARK,
    EMPTY,
    LIGHT,
    UNKNOWN,
    CellReading,
    Shade,
    blend_colours,
    classify_cells,
    colour_distance,
    learn_colours,
    make_shade,
    median_along,
    row_max,
    uniform_cells,
)
from vision.decks import HIGH as DECK_HIGH
from vision.decks import (
    deck_extras,
    deck_frames,
    deck_network,
    deck_patches,
    unsure_candidates,
)
from vision.errors import CalibrationMismatch, VisionError
from vision.features import (
    MIN_ODD_LEVELS,
    TILE_REACH,
    SamplingPlan,
    Slopes,
    box_inside,
    box_means,
    cell_colours,
    field_at,
    integral,
    light_field,
    light_field_against,
    plan_sampling,
    ring_shares,
    texture,
    to_lab,
    warp_topdown,
)
from vision.geometry import board_geometry, topdown_matrix
from vision.imageio import check_image, decode_image
from vision.learned import (
    FOOT_P,
    Network,
    background_change,
    bridge_network,
    candidate_features,
    cell_features,
    cell_network,
    end_chance,
    foot_candidates,
    one_blas_thread,
    tile_chance,
)
from vision.locate import locate_board, orient_corners
from vision.observation import Bridge, Observation, sort_bridge
from vision.patches import (
    RIVAL_P,
    SECOND_LOOK_P,
    SECOND_LOOKS,
    BareView,
    PatchNetwork,
    bare_mismatch,
    cell_patches,
    patch_network,
    with_reference,
)

_STATES = {EMPTY: CellState.EMPTY, LIGHT: CellState.LIGHT, DARK: CellState.DARK}


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
    than make them outliers or shadows (at least `FAINT_LEVELS`) ..."""
    ring_clear: np.ndarray | None = None
    """... and the outliers off it by at least `CLEAR_LEVELS` (see `fading_arm`; None when
    not worked out: no outlier, or no reference)."""
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
                strip_pixels(squares, sampling.side), beyond_groups(sampling, image_size))


def measure(settings: Thresholds, plan: Plan, image: np.ndarray, *, even: bool = True
            ) -> Measurement:
    """Warp to top-down and measure light-normalised cell colours and the ring.

    With `even` False the cells' colours are left out (no rows) for the caller to even out
    once it knows the light better (the reader, see `_relit`), instead of measuring them
    twice."""
    topdown = warp_topdown(plan.sampling, image)
    return measure_view(settings, plan, topdown, integral(topdown), even=even)


def measure_view(settings: Thresholds, plan: Plan, topdown: np.ndarray, ii: np.ndarray, *,
                 even: bool = True) -> Measurement:
    """`measure` of a top-down view already made (`warp_topdown`) and its integral image."""
    ring = box_means(ii, plan.sampling.index(plan.sampling.ring_boxes))
    coef, keep = light_field(ring, plan.sampling.ring_xy, settings.ring_outlier_error)
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


def _relit(settings: Thresholds, plan: Plan, m: Measurement, border: np.ndarray | None
           ) -> Measurement:
    """The frame's colours (measured with `even` False) evened out by the light: as the
    bare border (`border`, seen before) shows it where part of the border lies in a shadow
    or under a hand, else as the border shows it now."""
    coef = m.light_coef
    changed = m.ring_outliers if m.ring_shadows is None else m.ring_outliers | m.ring_shadows
    if border is not None and changed.any():
        coef = light_field_against(m.ring_bgr, border, plan.sampling.ring_xy, changed,
                                   settings.ring_outlier_error)
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


def observe(
    settings: Thresholds, plan: Plan, m: Measurement, model: ColourModel
) -> tuple[Observation, CellReading, ColourModel]:
    """Classify, find bridges, detect occlusion and build the Observation.

    Returns the observation, the cell reading and the colour model (with the bridges'
    colour when it was learned from this frame). With the networks, the reading's rim
    votes are zeros (only the thresholds' bridge finding uses them).
    """
    cells_net, bridges_net = cell_network(scratch=m.background is None), bridge_network()
    feats = None
    if cells_net is not None and bridges_net is not None:
        feats = cell_features(m, model)
        if feats.shape[1] != cells_net.mean.shape[0]:  # model files of another version
            feats = None
    # The rim boxes' votes serve only the thresholds' own bridge finding (`find_bridges`):
    # with the networks they would be thrown away, so they are counted only without them.
    reading = classify_cells(settings, m.sub_lab, model, m.rim_lab if feats is None else None)
    learned = None
    if cells_net is not None and bridges_net is not None and feats is not None:
        probs, model, reading, ends = looked_cells(settings, plan, m, model, reading,
                                                   cells_net, feats)
        learned = learned_bridges(settings, plan, m, model, probs, bridges_net, ends,
                                   background_change(feats))
    if learned is not None:
        reading = replace(reading, codes=probs.argmax(axis=1),
                          confidence=np.where(probs.argmax(axis=1) == UNKNOWN, 0.0,
                                              probs.max(axis=1)))
        bridges, colours = learned
    else:
        if feats is not None:  # the networks' reading, without the rim boxes' votes
            reading = classify_cells(settings, m.sub_lab, model, m.rim_lab)
        paths = measure_paths(plan.bridges, m.integral, m.light_coef)
        if model.bridge is None:
            ends = np.concatenate([m.sub_lab, m.rim_lab], axis=1)
            bridge = learn_bridge_colour(settings, plan.bridges, paths, reading, model, ends)
            if bridge is not None:
                model = replace(model, bridge=bridge)
                reading = classify_cells(settings, m.sub_lab, model, m.rim_lab)
        bridges, colours = find_bridges(settings, plan.bridges, paths, reading, model)
    codes = reading.codes.copy()
    spanned = np.zeros(SIZE * SIZE, bool)
    for (a, b), colour in zip(bridges, colours, strict=True):
        for f, r in (a, b):
            codes[r * SIZE + f] = colour
            spanned[r * SIZE + f] = True
        for f, r in cells_under(a, b):
            codes[r * SIZE + f] = EMPTY
            spanned[r * SIZE + f] = True
    unknown = (codes == UNKNOWN).reshape(SIZE, SIZE)
    ring_codes, ring_spanned = border_excuses(codes, spanned, reading.codes, bridges)
    odd = odd_boxes(settings, plan, m, ring_codes, ring_spanned, model)
    ring_hit = border_crossed(settings, odd)
    # Tiles lie in groups of a few; a wide patch of one "tile colour" is a hand or a sleeve.
    too_wide = _wide_groups(codes, settings.tile_max_group)
    unknown |= too_wide
    patches = _large_patches(unknown, settings.occlusion_min_cells)
    occluded = ring_hit or too_wide.any() or patches.any()
    # Patches of cells the cell network only half takes for hidden, with nothing crossing
    # the border, are more likely a lamp's glare than a hand: the frame is flagged all the
    # same, but their cells are read as stray cells (see `FAINT_HIDDEN`).
    faint = (occluded and not ring_hit and not too_wide.any() and learned is not None
             and float(probs[patches.ravel(), UNKNOWN].max()) < FAINT_HIDDEN)
    occluded = occluded and not faint
    # A hand comes in over the board's edge: a cell there taken for hidden may be a
    # fingertip, even where the border beside it looks as it did (a hand over a table or
    # a border of its own colour). The frame is flagged; the cell is read as a stray cell.
    # A fingertip further in is joined to the edge by the cells the finger lies over, which
    # the network half takes for hidden.
    # So may a cell at the edge that the network half takes for hidden, where the border
    # beside it changed (`finger_on_border`), and a hidden cell next to an edge cell whose
    # border changed, however the change may be excused (`beside_changed_border`).
    # An arm over a border of its own colour may change one border sample clearly and the
    # next only faintly (`fading_arm`): that too flags the frame, read as it is.
    flagged_strays = faint or (not occluded and (
        (EDGE_HIDDEN and (bool((unknown & _EDGE).any())
                          or beside_changed_border(plan, unknown, m.ring_outliers)
                          or (learned is not None
                              and (reaches_edge(unknown, probs[:, UNKNOWN])
                                   or finger_on_border(plan, odd, probs[:, UNKNOWN])))))
        or fading_arm(settings, plan, m, odd)
        or tile_apart_on_border(plan, m, model, ring_codes, ring_spanned)
        or print_hidden(m)))
    if occluded:
        # Next to what is hidden, a cell read without conviction is hidden too (a sleeve's
        # edge, a finger's shadow).
        near = _around(unknown)
        occluded_grid = unknown | (near & (reading.confidence.reshape(SIZE, SIZE) < 0.5))
    else:
        # A stray cell nothing fits well (a glare spot, a shadow) on a board nothing hides:
        # read it, with no confidence, as the colour the cell network finds likeliest, or
        # as the nearest colour when there is no network or it gives the three almost no
        # chance (see `STRAY_SEEN_P`).
        occluded_grid = unknown.copy() if flagged_strays else np.zeros_like(unknown)
        for i in np.flatnonzero(codes == UNKNOWN):
            codes[i] = stray_class(m.cells_lab[i], model,
                                   None if learned is None else probs[i])
    occluded_cells = frozenset(
        (f, r) for r in range(SIZE) for f in range(SIZE) if occluded_grid[r, f]
    )
    kept: list[Bridge] = [
        sort_bridge(a, b) for a, b in bridges if a not in occluded_cells and b not in occluded_cells
    ]
    if len(kept) < len(bridges):
        # A bridge not reported (an end is hidden) explains nothing: its cells keep their
        # own reading, not its colour (what stood under a hand is not known to be a tile).
        held = {c for a, b in kept for c in (a, b, *cells_under(a, b))}
        for a, b in bridges:
            for f, r in (a, b, *cells_under(a, b)):
                if (f, r) not in held:
                    codes[r * SIZE + f] = reading.codes[r * SIZE + f]
    states = [_STATES.get(code, CellState.EMPTY) for code in codes.tolist()]
    cells = tuple(tuple(states[r * SIZE:(r + 1) * SIZE]) for r in range(SIZE))
    conf = tuple(tuple(row) for row in reading.confidence.reshape(SIZE, SIZE).tolist())
    corners = tuple((float(x), float(y)) for x, y in plan.corners)
    obs = Observation(cells, tuple(sorted(kept)), conf, occluded_cells, occluded or flagged_strays,
                      corners)
    return obs, reading, model


FAINT_HIDDEN = 0.85
"""The cell network's chance of being hidden below which the patches of hidden cells that
alone flag a frame (nothing crossing the border, no wide group of one tile colour) are read
as stray cells (see `stray_class`) rather than left empty, when every cell of them is below
it. The frame stays flagged and the cells listed as hidden. A lamp's glare washes tiles
out so that the cell network half takes them for hidden (0.5-0.8), where a hand's cells
come near 1.0: read as stray cells, such tiles are read as tiles instead of bare board,
while a hand's cells stay bare."""

STRAY_SEEN_P = 0.05
"""A stray cell the cell network takes for hidden on a board nothing hides is read as the
colour it finds likeliest when it gives empty, light and dark at least this chance in all,
else as the nearest learned colour: where the network gives the three almost no chance,
its choice among them is a guess, and the nearest colour is the better one."""


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


_REFINE_P = 0.9  # the network's probability for a cell to count in the refit colours
_REFINE_MOVE = 6.0  # Lab units a tile colour must move by to be replaced


def refined_colours(
    settings: Thresholds, model: ColourModel, m: Measurement, probs: np.ndarray
) -> ColourModel | None:
    """The tile colours again, as the median of the uniform cells the network is sure of
    (at least two); None when neither moves by more than `_REFINE_MOVE`."""
    changes = {}
    uniform = uniform_cells(settings, m.sub_lab, m.cells_lab)
    for name, cls in (("light", LIGHT), ("dark", DARK)):
        sure = (probs[:, cls] >= _REFINE_P) & uniform
        if sure.sum() < 2:
            continue
        centre = median_along(m.cells_lab[sure], 0)
        old = getattr(model, name)
        if old is None or float(colour_distance(centre[None, :], old)[0]) > _REFINE_MOVE:
            changes[name] = (float(centre[0]), float(centre[1]), float(centre[2]))
    return replace(model, **changes) if changes else None


def second_look(settings: Thresholds, plan: Plan, m: Measurement, model: ColourModel,
                 probs: np.ndarray, change: np.ndarray | None = None) -> np.ndarray:
    """The cell probabilities with those the cell network is unsure of replaced by the patch
    network's (`vision.patches`), when it is there. A cell the cell network takes for
    hidden keeps its own: the patch network keeps the chance that a cell is hidden, so it
    could not change that answer (and a hand makes many cells unsure). With `change` (see
    `background_change`), a cell read as bare board that has changed from the bare board
    seen there by more than `CHANGED_BARE` gets the look too, however sure, and so does a
    cell read as a tile that has changed by less than `UNCHANGED_TILE`; so does a cell
    read as bare board in a burnt-out picture (`SATURATED`). Where the look finds a tile in
    a cell the cell network read as bare board, the bare cells next to it that changed by
    more than `NEIGHBOUR_CHANGED` get the look too."""
    net = patch_network()
    # Doubt among what the cell can be in view: the look cannot change the chance that
    # it is hidden, so a cell sure of its state but for that chance gains nothing by it.
    ranked = np.sort(in_view(probs), axis=1)
    top, rival = ranked[:, -1], ranked[:, -2]
    doubt = (top < SECOND_LOOK_P) | (rival > RIVAL_P)
    best = probs.argmax(axis=1)
    bare = best == EMPTY
    if change is not None:
        changed = bare & (change > CHANGED_BARE)  # NaN (not known) compares False
        if changed.any():
            doubt |= changed & ~_maybe_spanned(plan, probs)
        tile = (best == LIGHT) | (best == DARK)
        doubt |= tile & (change < UNCHANGED_TILE)  # NaN (not known) compares False
    subs = m.sub_bgr if m.sub_bgr is not None else cell_colours(m.integral, plan.sampling)
    doubt |= bare & (subs.min(axis=(1, 2)) >= SATURATED)
    unsure = np.flatnonzero(doubt & (probs[:, UNKNOWN] < 0.5))
    if net is None or not len(unsure):
        return probs
    if len(unsure) > SECOND_LOOKS and (probs[:, UNKNOWN] >= 0.5).any():
        # An arm over the board: the least sure (the reading waits for it anyway). Without
        # one, every unsure cell is looked at: a lamp can make most of a board unsure.
        unsure = unsure[np.argsort(top[unsure], kind="stable")[:SECOND_LOOKS]]
    out = probs.copy()
    look_at_cells(settings, plan, m, model, net, unsure, out)
    if change is not None and NEIGHBOUR_CHANGED is not None:
        # The cell network sure of bare board where the look sees a tile: a shadow (a
        # hand's, held high) can make a light tile look like the board to it. The bare
        # cells next to it that have changed more than bare board does are looked at too.
        turned = unsure[(best[unsure] == EMPTY) & (out[unsure].argmax(axis=1) != EMPTY)]
        if len(turned):
            grid = np.zeros(SIZE * SIZE, bool)
            grid[turned] = True
            near = _around(grid.reshape(SIZE, SIZE)).ravel()
            near[unsure] = False
            more = np.flatnonzero(near & bare & (change > NEIGHBOUR_CHANGED)
                                  & (probs[:, UNKNOWN] < 0.5) & ~_maybe_spanned(plan, probs))
            if len(more):
                look_at_cells(settings, plan, m, model, net, more, out)
    return out


NEIGHBOUR_CHANGED: float | None = 5.0
"""Lab units (the median over a cell's sample boxes, as for `CHANGED_BARE`) by which a cell
the cell network reads as bare board must differ from the bare board seen there before to
get the second look when it is next to a cell (side by side or corner to corner) that the
cell network read as bare board and the look as a tile: where it was wrong about one cell,
what misled it (a shadow) may lie over the next. A bare cell changes by less than 4 in
nine cases out of ten (`vision.learned.FOOT_CHANGE`). None: no such look.

A hand held high beside the board casts a shade over several cells at once; light tiles in
it can look like the bare board to the cell network, one doubtfully and the next surely.
When the look finds a tile where the network saw bare board, its neighbours that changed
from their bare board are looked at too. Few frames take the extra look (a few per cent,
more of them with a hand)."""


def look_at_cells(settings: Thresholds, plan: Plan, m: Measurement, model: ColourModel,
             net: PatchNetwork, cells: np.ndarray, out: np.ndarray) -> None:
    """The patch network's probabilities for `cells` written into `out` (the cell
    network's, whose rows of `cells` it steadies; see `second_look`)."""
    patches = cell_patches(settings, plan.sampling, m.topdown, m.light_coef, model, cells)
    if net.channels == 6:
        patches = with_reference(settings, plan.sampling, patches, m.bare_view, model, cells)
    out[cells] = net.steady_proba(patches, out[cells])
    if m.bare_view is not None and patches.shape[3] == 6:
        same = cells[m.bare_view.known[cells] & (bare_mismatch(patches) < SAME_AS_BARE)]
        out[same, :UNKNOWN] = 0.0
        out[same, EMPTY] = 1.0 - out[same, UNKNOWN]


def in_view(probs: np.ndarray) -> np.ndarray:
    """(n, 4) cell probabilities as (n, 3): empty, light, dark, given that the cell is in
    view (each row's chance of being hidden taken out)."""
    seen = probs[:, :UNKNOWN]
    result: np.ndarray = seen / np.maximum(seen.sum(axis=1, keepdims=True), 1e-12)
    return result


SAME_AS_BARE = 3.0 / 128.0
"""A cell the second look is taken at whose patch (the cell and the edges of its
neighbours) differs from the calibration photo's bare board there by less than this
(`bare_mismatch`, in units of the bare board's colour) is bare board, whatever the
networks say: nothing was put there or next to it. A lamp's glare can make a bare cell
read as a light tile to both networks when it looks just as it did at calibration. A tile
differs from the bare board by more than this even where its colour is the board's (its
own edges and shadow): on generated scenes the network never learnt from, no tile came
below 4.6 / 128, while about one bare cell in ten came below 3 / 128."""


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


CHANGED_BARE = 15.0
"""Lab units (the median over a cell's sample boxes) by which a cell read as bare board must
differ from the bare board seen there before to get a second look however sure the cell
network is (see `second_look`). A light tile in a window's or a dim room's light can look
like the board to the box means yet not like the board that was there. Cells a bridge
could pass over (`_maybe_spanned`) are left out: a deck changes them too. It costs about
half a look more a frame, most of them in window light, where the light has moved since
calibration."""


UNCHANGED_TILE = 4.0
"""Lab units: a cell read as a tile whose colour differs from the bare board seen there
before by less than this (the median over its sample boxes, as for `CHANGED_BARE`) gets the
second look however sure the cell network is. A tile put down changes its cell, unless it
is of the board's own colour (a white tile where a window burns the picture out), and the
look tells that apart by the tile's edges and shadow (see `SAME_AS_BARE`); a bare cell
changes by less than 4 in nine cases out of ten (see `vision.learned.FOOT_CHANGE`). Under a
warm lamp the cell network can read a bare cell that has hardly changed since calibration
as a light tile, and be sure of it; such looks are rare."""

SATURATED = 245.0
"""Grey levels: a cell read as bare board whose sample boxes are all at least this bright in
every channel of the picture (before the light is evened out) gets the second look however
sure the cell network is. Where a window's light burns the picture out, a white tile and
the bare board are both white: only the tile's edges and shadow tell them apart, and the
box means do not see those. Such cells are rare, so the looks cost little."""


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


BRIDGE_MIN_P = 0.5
"""The bridge network's probability (after the deck network's look) from which a candidate
counts as a bridge ..."""
BRIDGE_MIN_P_SURE_ENDS = 0.3
"""... and when the cell network is sure both ends are tiles of one colour."""
SURE_ENDS = 0.9
"""The cell network's probability for an end to count as sure."""
DECK_END = 0.2
"""A candidate the bridge network gives less than it needs is made a bridge by the deck
network's look only where the cell network gives one end at least this chance of being a
tile of either colour or hidden (by the bridge's foot, say): a bridge stands on tiles,
and seen at an angle the board's far edge between two bare cells can look like a deck."""


def bridge_candidates(
    bridge_plan: BridgePlan, m: Measurement, model: ColourModel, probs: np.ndarray,
    ends: np.ndarray | None = None, extra: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The bridge network's inputs for this frame's candidates and their indices in the
    plan's pair list (see `candidate_features`, for `ends` `looked_cells` and for `extra`
    `foot_candidates`): what the pipeline reads and training learns from, measured
    alike."""
    return candidate_features(
        bridge_plan, lambda rows: measure_rows(bridge_plan, m.integral, m.light_coef, rows),
        model, probs, m.background,
        lambda rows: measure_flanks(bridge_plan, m.integral, m.light_coef, rows),
        None if m.slopes is None else (
            lambda rows: measure_deck_edges(bridge_plan, m.slopes, rows)), ends, extra)


def bridge_probabilities(
    bridge_plan: BridgePlan, m: Measurement, model: ColourModel, probs: np.ndarray,
    net: Network, ends: np.ndarray | None = None, extra: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray] | None:
    """The bridge network's probability for each candidate worth asking about (see
    `bridge_candidates`), and the candidates' indices in the plan's pair list; None when
    the network was made for other features."""
    feats, keep = bridge_candidates(bridge_plan, m, model, probs, ends, extra)
    if len(keep) == 0:
        return np.zeros(0), keep
    if feats.shape[1] != net.mean.shape[0]:
        return None
    return net.proba(feats), keep


def learned_bridges(
    settings: Thresholds, plan: Plan, m: Measurement, model: ColourModel, probs: np.ndarray,
    net: Network, ends: np.ndarray | None = None, change: np.ndarray | None = None,
) -> tuple[list[tuple[Cell, Cell]], list[int]] | None:
    """Bridges by the bridge network (with a second look at those it is unsure of), best
    first, kept only where they fit together (see `BridgeLayout`); None when the network
    was made for other features. With `change` (see `background_change`), pairs whose
    one end a bridge's foot may hide are asked about too, and need `FOOT_P`."""
    bridge_plan = plan.bridges
    foot = None if change is None else foot_candidates(bridge_plan, probs, change, ends)
    scored = bridge_probabilities(bridge_plan, m, model, probs, net, ends, foot)
    if scored is None:
        return None
    p, keep = scored
    if len(keep) == 0:
        return [], []
    pair_cells = plan_tables(bridge_plan)[0][keep]  # (k, 2)
    pair_ends = probs[pair_cells]  # (k, 2, 4)
    sure = np.maximum(pair_ends[:, :, LIGHT].min(axis=1), pair_ends[:, :, DARK].min(axis=1))
    needed = np.where(sure >= SURE_ENDS, BRIDGE_MIN_P_SURE_ENDS, BRIDGE_MIN_P)
    if foot is not None:
        needed[foot[keep]] = FOOT_P
    # A deck the bridge network did not see, found by the deck network's look, needs a
    # tile in sight at one end at least (a tile, or a foot hiding one): the look is not
    # taken where it could not count.
    tile = tile_chance(probs, ends)
    unfounded = (p < needed) & (tile[pair_cells].max(axis=1) < DECK_END)
    p = deck_look(settings, plan, m, model, p, keep, sure >= SURE_ENDS, unfounded)
    # Best first, each where it fits among those taken (`BridgeLayout`'s rules, by the
    # plan's table of pairs that cannot both stand).
    conflicts = plan_conflicts(bridge_plan)
    order = np.argsort(-p, kind="stable")
    taken: list[int] = []
    found: list[tuple[Cell, Cell]] = []
    colours: list[int] = []
    for n in order[p[order] >= needed[order]].tolist():
        k = int(keep[n])
        if taken and conflicts[k, taken].any():
            continue
        a, b = bridge_plan.pairs[k]
        ia, ib = a[1] * SIZE + a[0], b[1] * SIZE + b[0]
        light = probs[ia, LIGHT] + probs[ib, LIGHT]
        dark = probs[ia, DARK] + probs[ib, DARK]
        taken.append(k)
        found.append((a, b))
        colours.append(LIGHT if light >= dark else DARK)
    return found, colours


def deck_look(settings: Thresholds, plan: Plan, m: Measurement, model: ColourModel,
               p: np.ndarray, keep: np.ndarray, sure: np.ndarray,
               unfounded: np.ndarray | None = None) -> np.ndarray:
    """The candidates' bridge probabilities `p` with those the bridge network is unsure of
    (and a few faint ones, see `vision.decks.unsure_candidates`) replaced by the deck
    network's (`vision.decks`), when it is there. `sure`: the candidates whose ends the
    cell network is sure are tiles of one colour; `unfounded`: those whose look would not
    count (see `DECK_END`), which keep `p` and are not looked at. They are chosen among
    the candidates looked at all the same: they still take their places."""
    net = deck_network()
    unsure = unsure_candidates(p, sure)
    if unfounded is not None:
        unsure = unsure[~unfounded[unsure]]
    if net is None or not len(unsure):
        return p
    # A candidate that shares a tile with, or crosses, a bridge the bridge network is sure
    # of (`vision.decks.HIGH` or more: never looked at) cannot be reported beside it: its
    # look is skipped. (It could only displace that bridge by a look surer still.)
    conflicts = plan_conflicts(plan.bridges)
    settled: list[int] = []
    for n in np.argsort(-p, kind="stable"):
        if p[n] < DECK_HIGH:
            break
        if not conflicts[keep[n], settled].any():
            settled.append(int(keep[n]))
    if settled:
        unsure = unsure[~conflicts[np.ix_(keep[unsure], settled)].any(axis=1)]
        if not len(unsure):
            return p
    pairs = np.array([plan.bridges.pairs[int(j)] for j in keep[unsure]], np.int64)
    kinds = plan_tables(plan.bridges)[2][keep[unsure]]
    patches = deck_patches(settings, plan.sampling, m.topdown, m.light_coef, model, pairs,
                           None if plan.decks is None else plan.decks[keep[unsure]])
    out = p.copy()
    out[unsure] = net.scores(patches, deck_extras(p[unsure], kinds))[:, 1]
    return out


def border_excuses(
    codes: np.ndarray, spanned: np.ndarray, read: np.ndarray,
    bridges: list[tuple[Cell, Cell]],
) -> tuple[np.ndarray, np.ndarray]:
    """The cell codes and the cells under or at the end of a bridge, (100,) each, that may
    excuse a change of the border beside them (see `border_crossed`), given the codes with the
    bridges' colours and spans (`codes`, `spanned`) and the cells' own reading (`read`).

    A bridge the cells' reading sees no tile of, one end hidden and the other bare board,
    excuses nothing: a hand over a corner can look like a deck standing there, and a
    changed border is the surest sign of an arm. Its ends keep their own reading, and its
    cells count as not spanned. (A real bridge shows a tile at one end at least, or, at the
    far edge of a board seen at an angle, hides both.)"""
    doubtful = [any(read[r * SIZE + f] == UNKNOWN for f, r in pair)
                and any(read[r * SIZE + f] == EMPTY for f, r in pair) for pair in bridges]
    if not any(doubtful):
        return codes, spanned
    ring_codes, ring_spanned = codes.copy(), np.zeros_like(spanned)
    for pair, doubt in zip(bridges, doubtful, strict=True):
        ends = [r * SIZE + f for f, r in pair]
        if doubt:
            ring_codes[ends] = read[ends]
            continue
        ring_spanned[ends] = True
        for f, r in cells_under(*pair):
            ring_spanned[r * SIZE + f] = True
    return ring_codes, ring_spanned


def border_crossed(settings: Thresholds, odd: np.ndarray) -> bool:
    """Whether something lies across the board's border: enough border samples off the
    bare border (`odd`, see `odd_boxes`)."""
    return bool(odd.sum() > settings.ring_occlusion_fraction * len(odd))


def fading_arm(settings: Thresholds, plan: Plan, m: Measurement, odd: np.ndarray) -> bool:
    """Whether the border samples that count (`odd`, see `odd_boxes`), too few for
    `border_crossed`, are enough with the samples next to one that changed clearly, by
    `CLEAR_LEVELS` or more, that changed faintly (`Measurement.ring_faint`): an arm's
    picture fades out at its edges. Those count whatever else might explain them, as a
    shadow beside a change that counts does."""
    if m.ring_faint is None or m.ring_clear is None or not m.ring_faint.any():
        return False
    clear = odd & m.ring_clear
    if not clear.any():
        return False
    xy = plan.sampling.ring_xy
    apart = np.linalg.norm(xy[:, None, :] - xy[None, clear, :], axis=2).min(axis=1)
    count = int(odd.sum()) + int((m.ring_faint & (apart <= FAINT_BESIDE)).sum())
    return count > settings.ring_occlusion_fraction * len(odd)


FAINT_LEVELS = 10.0
"""Grey levels a border sample must differ by, beside one changed by `CLEAR_LEVELS`, to
count (see `fading_arm`): two thirds of `MIN_ODD_LEVELS`, which alone counts. A hand over
a border of its own colour may change one box clearly and the next just under what counts,
and one box alone is not enough. Such a frame is flagged and read as it would be
otherwise, as `EDGE_HIDDEN` does."""
CLEAR_LEVELS = 30.0
"""Grey levels (twice `MIN_ODD_LEVELS`) by which a border sample off the bare border makes
the faint changes next to it count (see `FAINT_LEVELS`)."""
FAINT_BESIDE = 1.5
"""Cells along the border from a clear change within which a faint one counts: the next box
each way."""


def odd_boxes(
    settings: Thresholds, plan: Plan, m: Measurement, codes: np.ndarray, spanned: np.ndarray,
    model: ColourModel,
) -> np.ndarray:
    """(n,) the border samples that count as something lying across the border: off the
    bare border, not counting those beside a bridge (a deck is high and leans far, and its
    shadow is long) nor those beside an edge tile that may lean over them (seen at an
    angle, raised things lean away from the camera) and look like that tile or the border
    itself, not like a sleeve, nor beside a tile unlike every tile. A change of the
    border's outer half alone counts beside a cell read as hidden or as such a tile.
    Shadows (on a whole sample, or on its outer half alone) count only beside something
    else that does."""
    xy = plan.sampling.ring_xy
    index = _ring_cells(plan)
    beside = codes[index]
    # A bridge's deck is higher than a tile: it leans over much of the border where the
    # camera looks at the board from its far side, and nowhere else.
    deck_reach = plan.sampling.ring_lean * (settings.bridge_height_cells
                                            / settings.tile_height_cells) + TILE_REACH
    deck_share, deck_outer_share = ring_shares(deck_reach)
    deck = spanned[index] & (deck_share >= _DECK_SHARE)
    if m.ring_outer_odd is not None:
        # Nor does a deck reach the border's outer half unless it leans far over it (as for
        # a tile, `_LEAN_OUTER_SHARE`), though its shadow may: a change of both halves
        # beside the end of a bridge, lighter than the border, is an arm's (`DECK_LIGHTER`).
        arm = deck & m.ring_outer_odd & (deck_outer_share < _LEAN_OUTER_SHARE)
        if arm.any():
            arm[arm] = _ring_seen(m, xy, arm)[:, 0] > float(m.ring_lab[0]) + DECK_LIGHTER
            deck &= ~arm
    odd = m.ring_outliers & ~deck
    # (Only where something changed on the border does it matter what the tiles look like.)
    changed = [m.ring_outliers, m.ring_shadows, m.ring_outer_odd]
    if any(c is not None and c.any() for c in changed):
        unlike = _unlike_tiles(m, model, beside, index)
    else:
        unlike = np.zeros(len(xy), bool)
    if m.ring_outer_odd is not None:
        # Held high, a hand's picture can leave the border's inner half as it was and
        # change only the outer half, where no tile leans: beside a cell read as hidden,
        # or as a tile unlike every tile, that is the arm of the hand over the cell.
        odd |= _outer_alone(plan, m, spanned, index) & (unlike | (beside == UNKNOWN))
    if m.ring_shadows is not None:
        # A shadow on the border counts unless a tile or a bridge near it casts it (a
        # hand's shadow reaches the border before the hand does, or beside it).
        casters = ((codes == LIGHT) | (codes == DARK) | spanned).reshape(SIZE, SIZE)
        near = _around(casters).ravel()
        odd |= m.ring_shadows & ~near[index]
    shadows = m.ring_shadows
    if shadows is not None and m.ring_outer_odd is not None:
        # A tile's shadow in window light is lit by the sky: darker than the border, but
        # tinted, so not a shadow to `border_changes`. Beside a tile or a bridge, with the
        # border's outer half unchanged, it counts as one: an arm reaches in from outside
        # the board and changes the outer half too. Not beside a tile unlike every tile:
        # that "tile" may be the hand itself (a brown hand over a brown frame is darker
        # than the border, and tinted).
        tinted = odd & m.ring_outliers & near[index] & ~m.ring_outer_odd & ~unlike
        if tinted.any():
            tinted[tinted] = _ring_seen(m, xy, tinted)[:, 0] < float(m.ring_lab[0]) - _TINTED_DARKER
            odd &= ~tinted
            shadows = shadows | tinted
    leaned = odd & plan.sampling.ring_leaned & ((beside == LIGHT) | (beside == DARK)) & ~unlike
    if leaned.any():
        lab = _ring_seen(m, xy, leaned)
        border = np.asarray(m.ring_lab, np.float64)
        like_tile = np.zeros(len(lab), bool)
        for cls, centre in ((LIGHT, model.light), (DARK, model.dark)):
            if centre is not None:
                mine = beside[leaned] == cls
                like_tile |= mine & between_tiles(lab, border, np.asarray(centre, np.float64),
                                             plan.sampling.ring_lean_share[leaned])
        if m.ring_outer_odd is not None:
            # An arm covers the border's outer half too, where a tile rarely reaches.
            reaches = plan.sampling.ring_outer_share[leaned] >= _LEAN_OUTER_SHARE
            like_tile &= ~m.ring_outer_odd[leaned] | reaches
        excused = np.zeros_like(odd)
        excused[np.flatnonzero(leaned)[like_tile]] = True
        odd &= ~excused
    if shadows is not None and odd.any():
        # Something is over the border (not a tile leaning over it): a shadow beside it is
        # its shadow. Only beside it: one changed box does not make every tile's shadow
        # around the board a hand's.
        apart = np.linalg.norm(xy[:, None, :] - xy[None, odd, :], axis=2).min(axis=1)
        near = apart <= SHADOW_BESIDE
        odd |= shadows & near
        if m.ring_outer_shadows is not None:
            # So is a shadow on the outer half alone beside it, where the inner half kept
            # its colour (`SHADOW_BESIDE`).
            odd |= m.ring_outer_shadows & ~m.ring_outliers & near
    return odd


def _ring_seen(m: Measurement, xy: np.ndarray, which: np.ndarray) -> np.ndarray:
    """(k, 3) the Lab of the border samples `which` ((n,) bool; `xy`: the samples' board
    points) with the light field divided out."""
    result: np.ndarray = to_lab(m.ring_bgr[which] / field_at(m.light_coef, xy[which]))
    return result


def _outer_alone(plan: Plan, m: Measurement, spanned: np.ndarray, index: np.ndarray
                 ) -> np.ndarray:
    """(n,) the border samples whose outer half alone changed, where no tile's lean reaches
    it and no bridge stands beside it (`m.ring_outer_odd` must be known; `index`: each
    sample's edge cell, `spanned`: the cells a bridge may excuse a change beside)."""
    assert m.ring_outer_odd is not None
    result: np.ndarray = (m.ring_outer_odd & ~m.ring_outliers & ~spanned[index]
                          & (plan.sampling.ring_outer_share < _LEAN_OUTER_SHARE))
    return result


def _around(mask: np.ndarray) -> np.ndarray:
    """(10, 10) the cells of `mask` ((10, 10) bool) and those next to them, side by side or
    corner to corner."""
    result: np.ndarray = cv2.dilate(mask.astype(np.uint8), np.ones((3, 3), np.uint8)) > 0
    return result


DECK_LIGHTER = 10.0
"""Lab lightness above the border's beyond which a change of both halves of a border sample
beside the end of a bridge is not excused as the bridge's where its deck cannot reach the
outer half (`odd_boxes`). A pale hand over a pale border beside a bridge's end makes the
border much lighter there; a deck's shadow changes both halves too, but darkens them. A
window's light over a whole side can lighten them as well, and then the rest of that side
flags the frame."""

UNLIKE_TILE = 30.0
"""Lab units (`colour_distance`) from its colour's learned tile colour beyond which a cell
read as a tile may be something else: skin, a sleeve. Such a tile beside a changed border
sample is not excused as leaning over it nor as casting a tinted shadow on it, and a change
of the outer half alone beside it counts (see `border_crossed`). Lower, more frames with
nothing over the board are flagged."""


def _unlike_tiles(m: Measurement, model: ColourModel, beside: np.ndarray,
                  index: np.ndarray) -> np.ndarray:
    """(n,) border samples beside a cell read as a tile whose colour is further than
    `UNLIKE_TILE` from its colour's learned tile colour (`beside`: each sample's cell's
    code; `index`: that cell)."""
    out = np.zeros(len(beside), bool)
    for cls, centre in ((LIGHT, model.light), (DARK, model.dark)):
        if centre is not None:
            mine = beside == cls
            if mine.any():
                out[mine] = colour_distance(m.cells_lab[index[mine]], centre) > UNLIKE_TILE
    return out


def between_tiles(
    lab: np.ndarray, border: np.ndarray, tile: np.ndarray, share: np.ndarray
) -> np.ndarray:
    """(n,) Lab samples on the way from the border's colour to a tile's: the tile's top or
    its shaded side seen over the border, or a mix of the two, however little of the tile
    (on a dark border a sliver of a tile is a large change of light; a sleeve lies off the
    way), and no further along it than the share of the box (n,) the tile can cover (an
    arm across the border covers all of it, with a colour that may well lie on the way)."""
    way = tile - border
    span = float(np.linalg.norm(way))
    if span < 1e-6:
        return np.zeros(len(lab), bool)
    t = (lab - border) @ way / (span * span)
    off = np.linalg.norm(lab - border - t[:, None] * way[None, :], axis=1)
    result: np.ndarray = (t > _LEAN_SHARE[0]) & (t < _LEAN_SHARE[1]) & (
        t < share + _LEAN_SLACK) & (off < _LEAN_OFF_WAY * span + _LEAN_OFF_MIN)
    return result


SHADOW_BESIDE = 1.5
"""Cells along the border from a changed border box within which a shadow on the border
counts as that change's shadow (see `border_crossed`): the boxes next to it, a cell apart.
An arm casts its shadow right beside where it crosses the border; a tile's long shadow in
window light can lie on the border far from any change, and counting every shadow once any
box had changed would flag frames with nothing over the board.
A shadow on a box's outer half alone counts too, where its inner half kept its colour: a
sleeve of the border's own colour may change one box clearly and only the outer halves of
its neighbours, as a shadow does. Where the inner half changed colour, a tile leaning over
it is weighed (and may be excused), and its outer half's shadow is that tile's."""
_LEAN_SHARE = (0.0, 1.3)  # how far along the way from border to tile a leaning tile lies
_TINTED_DARKER = 3.0  # Lab lightness below the border's from which a tinted change is a shadow
_LEAN_SLACK = 0.25  # on top of the share it can cover (blur, a tile's shading)
_DECK_SHARE = 0.3  # of a border box a deck must be able to cover to excuse a change there
_LEAN_OUTER_SHARE = 0.3  # a tile reaching this far over the outer half may change it
_LEAN_OFF_WAY = 0.25  # and how far off the way (relative to its length, plus the next)
_LEAN_OFF_MIN = 5.0


def _wide_groups(codes: np.ndarray, limit: int) -> np.ndarray:
    """(10, 10) mask of tile cells in 4-connected one-colour groups larger than `limit`."""
    out = np.zeros((SIZE, SIZE), bool)
    for cls in (LIGHT, DARK):
        grid = (codes == cls).reshape(SIZE, SIZE).astype(np.uint8)
        count, labels = cv2.connectedComponents(grid, connectivity=4)
        sizes = np.bincount(labels.ravel())
        for label in range(1, count):
            if sizes[label] > limit:
                out |= labels == label
    return out


EDGE_HIDDEN = True
"""A cell at the board's edge that the cell network takes for hidden flags the frame, though
it is the only one (`occlusion_min_cells` is the rule inside the board): a hand reaches in
over the edge, and where it comes in over a table or a border of its own colour the border
barely changes, so its fingertip may be all that shows. It flags a few frames in a
thousand with nothing over the board, read as they would be otherwise: the cell keeps the
stray cell's reading."""
_EDGE = np.ones((SIZE, SIZE), bool)
_EDGE[1:-1, 1:-1] = False
REACHING_HIDDEN = 0.3
"""The cell network's chance of being hidden at which the cells between a hidden cell and
the board's edge count as a finger reaching it (see `reaches_edge`). A fingertip one cell
in is a stray cell to `EDGE_HIDDEN`, but the finger over the edge cell beside it gives that
cell a fair chance of being hidden (about a half), where on boards with nothing over them
the cells between a hidden cell and the edge stay well below this.
An edge cell this likely hidden beside a border sample that counts is a finger too (see
`finger_on_border`)."""


def _ring_cells(plan: Plan) -> np.ndarray:
    """(n,) the edge cell (flat index) beside each border sample."""
    cells = np.clip(np.floor(plan.sampling.ring_xy).astype(np.int64), 0, SIZE - 1)
    result: np.ndarray = cells[:, 1] * SIZE + cells[:, 0]
    return result


def finger_on_border(plan: Plan, odd: np.ndarray, hidden: np.ndarray) -> bool:
    """Whether a border sample that counts (`odd`, see `odd_boxes`) lies beside an edge
    cell with at least `REACHING_HIDDEN` chance of being hidden (`hidden`, (100,)): a
    finger over the cell, its hand across the border beside it. A hand of the border's own
    colour may change a single sample, which alone is too little for `border_crossed`, while
    the finger's cell is read as the tile it holds. With nothing over the board, an edge
    cell beside a changed sample is hardly ever taken for hidden at all."""
    if not odd.any():
        return False
    return bool((hidden[_ring_cells(plan)[odd]] >= REACHING_HIDDEN).any())


def beside_changed_border(plan: Plan, unknown: np.ndarray, changed: np.ndarray) -> bool:
    """Whether a hidden cell ((10, 10) mask) is an edge cell, or next to one (side by side
    or corner to corner), beside which the border changed (`changed`, (n,): the border
    samples off the bare border, `Measurement.ring_outliers`, whatever may excuse them).

    A hand of the tiles' colour reaching over the far edge changes the border there, and
    the change may be excused as those tiles leaning over it; a finger over a bridge hides
    a cell and the bridge is missed. With nothing over the board, a hidden cell and a
    changed border sample side by side do not happen."""
    if not unknown.any() or not changed.any():
        return False
    edge = np.zeros(SIZE * SIZE, bool)
    edge[_ring_cells(plan)[changed]] = True
    return bool((_around(unknown).ravel() & edge).any())


APART_TILE = 15.0
"""Lab units (`colour_distance`) from its colour's learned tile colour from which a cell
read as a tile at the edge, beside a border sample whose outer half alone changed, flags
the frame when it is also `APART_RATIO` times as far as any other tile of its colour (see
`tile_apart_on_border`)."""
APART_RATIO = 3.0
"""How many times further than every other tile of its colour from the learned colour."""


def tile_apart_on_border(plan: Plan, m: Measurement, model: ColourModel, codes: np.ndarray,
                          spanned: np.ndarray) -> bool:
    """Whether a border sample whose outer half alone changed (`odd_boxes` counts such a
    change beside a cell read as hidden or as a tile unlike every tile) lies beside a cell
    read as a tile that stands apart from the other tiles of its colour: at least
    `APART_TILE` from the learned colour and `APART_RATIO` times as far as any other.
    A pale hand the colour of the board reaching over a corner reads as a light tile
    there: unlike the board's light tiles, but not enough for `UNLIKE_TILE`, which must
    allow for a lamp's glare, which moves every tile near it. With nothing over the
    board, such a tile beside such a change is either near its colour (a lamp's light
    moves a tile less than `APART_TILE`) or about as far as the other tiles. As
    `EDGE_HIDDEN`, it only flags: the reading stays."""
    if m.ring_outer_odd is None:
        return False
    index = _ring_cells(plan)
    alone = _outer_alone(plan, m, spanned, index)
    if not alone.any():
        return False
    for cls, centre in ((LIGHT, model.light), (DARK, model.dark)):
        if centre is None:
            continue
        beside = np.unique(index[alone & (codes[index] == cls)])
        if not len(beside):
            continue
        mine = np.flatnonzero(codes == cls)
        far = colour_distance(m.cells_lab[mine], centre)
        for cell in beside:
            own = float(far[mine == cell][0])
            others = far[mine != cell]
            if (len(others) and own >= APART_TILE
                    and own >= APART_RATIO * max(float(others.max()), 1.0)):
                return True
    return False


PRINT_QUIET_LEVELS = 10.0
"""Grey levels: `print_likeness` compares the border's print beside the border samples
whose colour (and their outer halves') changed by less than this from the bare border
seen before (a change of colour is the other rules' to judge) ..."""

PRINT_LEAST_SPREAD = 10.0
"""... where the calibration photo shows print there: its grey levels spread (standard
deviation) by at least this ..."""

PRINT_REACH = 2
"""... as it lies, or moved by up to this many pixels of the top-down view each way (the
camera drifts by a pixel or two, which the reading allows, `SHIFT_PX`) ..."""

PRINT_LIKENESS = 0.35
"""... and `print_hidden` flags the frame when the print's correlation with the photo's
falls below this beside one of them. A pale hand over a pale border may change no border
sample's colour while its fingers over an edge cell read as a tile; the print they hide
correlates far below this with the photo's (0.2 or less), where a border nothing covers
stays above 0.5 in window light, with loose tiles on the table and all."""


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


def beyond_groups(sampling: SamplingPlan, image_size: tuple[int, int]
                  ) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
    """`Plan.beyond`: the `beyond_boxes` that lie inside the top-down view, `PRINT_REACH`
    pixels from its edge, and come from inside the camera image, grouped by their number
    of pixels (the border's sides give boxes of one shape, lying and standing: one group,
    compared in one go)."""
    side = sampling.side
    boxes = beyond_boxes(sampling)
    groups: dict[int, list[tuple[int, np.ndarray]]] = {}
    for i, (x0, y0, x1, y1) in enumerate(boxes.tolist()):
        if not (PRINT_REACH <= x0 < x1 <= side - PRINT_REACH
                and PRINT_REACH <= y0 < y1 <= side - PRINT_REACH
                and box_inside(sampling.map_x, sampling.map_y, boxes[i], image_size)):
            continue
        rows, cols = np.mgrid[y0:y1, x0:x1]
        groups.setdefault((y1 - y0) * (x1 - x0), []).append(
            (i, (rows * side + cols).ravel()))
    return tuple((np.array([i for i, _ in members], np.int64),
                  np.stack([flat for _, flat in members]))
                 for _, members in sorted(groups.items()))


def print_likeness(plan: Plan, m: Measurement, before: np.ndarray | None) -> np.ndarray:
    """(n,) per border sample, the correlation of the grey levels just outside it (see
    `beyond_boxes`) with those of `before` there (the calibration photo's grey top-down
    view, or what a reader has seen lie still there since), where it
    lies or moved by up to `PRINT_REACH` pixels, whichever is likest; 1.0 where not
    compared: where the sample or its outer half changed by `PRINT_QUIET_LEVELS` or more,
    where the photo shows no print (`PRINT_LEAST_SPREAD`), and everywhere without a photo
    or a bare border. A patch of one grey, where the photo shows print, is nothing like it
    (0)."""
    n = len(plan.sampling.ring_boxes)
    likeness = np.ones(n)
    if before is None or m.ring_levels is None or before.shape != m.topdown.shape[:2]:
        return likeness
    quiet = m.ring_levels < PRINT_QUIET_LEVELS
    now = _grey_view(m).reshape(-1)
    for ids, flat in plan.beyond:
        use = quiet[ids]
        if not use.any():
            continue
        pixels = flat[use]
        a = before.reshape(-1).take(pixels).astype(np.float64)
        a -= a.mean(axis=1, keepdims=True)
        aa = (a * a).sum(axis=1)
        printed = np.sqrt(aa / pixels.shape[1]) >= PRINT_LEAST_SPREAD
        if not printed.any():
            continue
        a, aa, pixels = a[printed], aa[printed], pixels[printed]
        score = _correlations(a, aa, now.take(pixels))
        # Only where the print does not match as it lies is it looked for nearby: the
        # common case costs one comparison.
        off = score < PRINT_LIKENESS
        if off.any():
            steps = np.arange(-PRINT_REACH, PRINT_REACH + 1)
            moves = (steps[:, None] * int(m.topdown.shape[1]) + steps[None, :]).ravel()
            moved = now.take(pixels[off][None] + moves[:, None, None])
            score[off] = _correlations(a[off][None], aa[off][None], moved).max(axis=0)
        likeness[ids[use][printed]] = score
    return likeness


def _grey_view(m: Measurement) -> np.ndarray:
    """The top-down view's grey levels (uint8): those worked out with its `slopes`, when
    they were."""
    if m.slopes is not None and m.slopes.image is not None:
        return m.slopes.image
    grey: np.ndarray = cv2.cvtColor(m.topdown, cv2.COLOR_BGR2GRAY)
    return grey


def _correlations(a: np.ndarray, aa: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Along the last axis, the correlation of `a` (mean taken out; `aa`: its sum of
    squares) with `b` (grey levels, broadcast against `a`); 0 where `b` is one grey."""
    b = b.astype(np.float64)
    b -= b.mean(axis=-1, keepdims=True)
    den = np.sqrt(aa * (b * b).sum(axis=-1))
    result: np.ndarray = np.where(den > 1e-6, (a * b).sum(axis=-1) / np.maximum(den, 1e-6),
                                  0.0)
    return result


def print_hidden(m: Measurement) -> bool:
    """Whether the border's print just outside a border sample that kept its colour no
    longer looks as in the calibration photo (`Measurement.print_likeness` below
    `PRINT_LIKENESS`). A pale hand over a pale border of its own colour changes no colour
    sample, but it hides the lines printed there. Flags only: the reading stays."""
    return m.print_likeness is not None and bool((m.print_likeness < PRINT_LIKENESS).any())


def reaches_edge(unknown: np.ndarray, hidden: np.ndarray) -> bool:
    """Whether a hidden cell ((10, 10) mask) is joined to the board's edge, 8-connected,
    through cells with at least `REACHING_HIDDEN` chance of being hidden (`hidden`, (100,);
    a bridge's end or a cell under one counts too: fingers can be read as a bridge)."""
    if not unknown.any():
        return False
    chain = unknown | (hidden >= REACHING_HIDDEN).reshape(SIZE, SIZE)
    _, labels = cv2.connectedComponents(chain.astype(np.uint8), connectivity=8)
    return bool(np.isin(labels[_EDGE & chain], labels[unknown]).any())


def _large_patches(mask: np.ndarray, least: int) -> np.ndarray:
    """The cells of a (10, 10) mask's 8-connected patches of at least `least` cells."""
    _, labels = cv2.connectedComponents(mask.astype(np.uint8), connectivity=8)
    sizes = np.bincount(labels.ravel())
    sizes[0] = 0  # the background
    result: np.ndarray = sizes[labels] >= least
    return result


def stray_class(lab: np.ndarray, model: ColourModel, probs: np.ndarray | None = None) -> int:
    """What a stray cell nothing fits well is read as on a board nothing hides, given its
    Lab and (with the networks) the cell network's probabilities (see `STRAY_SEEN_P`)."""
    if probs is not None and float(probs[:UNKNOWN].sum()) >= STRAY_SEEN_P:
        return int(np.argmax(probs[:UNKNOWN]))
    return _nearest_class(lab, model)


def _nearest_class(lab: np.ndarray, model: ColourModel) -> int:
    best, code = np.inf, EMPTY
    for cls, centre in ((EMPTY, model.empty), (LIGHT, model.light), (DARK, model.dark)):
        if centre is not None:
            d = float(colour_distance(lab[None, :], centre)[0])
            if d < best:
                best, code = d, cls
    return code


def read_board(
    image: np.ndarray,
    calibration: Calibration | None = None,
    settings: Thresholds | None = None,
) -> Observation:
    """Read one image from scratch (locating the board unless a calibration is given).

    With a calibration this takes only its corners, colours and bare board's colours;
    `read_calibrated` reads an image as the live loop does, with all of it."""
    check_image(image)
    h, w = image.shape[:2]
    if calibration is not None:
        settings = calibration.thresholds
        _check_size(calibration, (w, h))
    settings = settings or default_thresholds()
    k, dist = _lens(calibration)
    if calibration is not None:
        corners = np.array(calibration.corners, np.float64)
    else:
        corners = orient_corners(locate_board(settings, image), A1Corner.BOTTOM_LEFT, (w, h))
    plan = make_plan(settings, corners, (w, h), k, dist)
    m = measure(settings, plan, image)
    if calibration is not None:
        m = replace(m, background=_background_of(calibration))
    hint = calibration.colours if calibration is not None else None
    model = learn_colours(settings, m.sub_lab, _lab3(m.ring_lab), hint, m.background)
    obs, _, _ = observe(settings, plan, m, model)
    return obs


def read_calibrated(image: np.ndarray | bytes, calibration: Calibration, *,
                    source: str = "frame") -> Observation:
    """Read one image (a BGR array at the calibration's size, or its encoded bytes) as the
    live loop reads a frame: by a `BoardReader` made from the calibration, which also
    knows the bare board's border and, from `ponte calibrate --empty`, every cell's bare
    board. Bytes are what `ponte eval vision`'s `tracker` mode reads, a decoded frame what
    its `live` mode reads. A new reader for each image: no image's reading depends on
    another's. `source` names the image in errors."""
    return BoardReader(calibration).read(image, source=source)


def _lab3(v: np.ndarray) -> tuple[float, float, float]:
    return (float(v[0]), float(v[1]), float(v[2]))


def _check_size(calibration: Calibration, size: tuple[int, int]) -> None:
    if tuple(size) != tuple(calibration.image_size):
        raise CalibrationMismatch(
            f"image is {size[0]} x {size[1]} but the calibration was made for "
            f"{calibration.image_size[0]} x {calibration.image_size[1]}"
        )


def _lens(calibration: Calibration | None, scale: float = 1.0) -> tuple[
    np.ndarray | None, np.ndarray | None
]:
    if calibration is None or calibration.lens is None:
        return None, None
    k = np.array(calibration.lens.camera_matrix, np.float64)
    k[:2] *= scale
    return k, np.array(calibration.lens.distortion, np.float64)


class BoardReader:
    """Reads frames of one camera quickly after calibration (the live loop's reader).

    Frames may be BGR arrays at the calibration's size or encoded bytes (JPEG/PNG), which are
    decoded at 1/`reduce` size. The reader checks each frame's border against a reference
    taken from the first frame; when most of the border no longer matches (the board or the
    camera moved) it locates the board again. Its colour model adapts slowly.
    """

    def __init__(self, calibration: Calibration, *, reduce: int = 2, reuse: bool = True
                 ) -> None:
        self.calibration = calibration
        self.reuse = reuse
        self.reused = 0
        """Frames given the last reading without being read (see `_reusable`)."""
        self.settings = calibration.thresholds
        self.reduce = reduce
        self.model: ColourModel | None = calibration.colours
        self.bumps = 0
        w, h = calibration.image_size
        self._size = (w // reduce, h // reduce)
        self._scale = self._size[0] / w
        self._k, self._dist = _lens(calibration, self._scale)
        corners = np.array(calibration.corners, np.float64) * self._scale
        self._plan = make_plan(self.settings, corners, self._size, self._k, self._dist)
        self._reference: np.ndarray | None = None
        self._reference_grey: np.ndarray | None = None
        """The top-down view's grey levels when `_reference` was taken (`_look_again`) ..."""
        self._lines: np.ndarray | None = None
        """... and its edges (`grid_profiles`), which later frames' must line up with."""
        self._inner = round(self.settings.margin_cells * self.settings.cell_px)
        """The top-down view's margin (pixels) outside the grid."""
        self._offsets: np.ndarray | None = None
        """Where the board's lines lay from those in the last frame (`grid_offsets`) ..."""
        self._steady_offsets = 0
        """... and for how many frames running they have lain there (off by `SHIFT_PX` or
        more): the camera, knocked, has come to rest."""
        self._border = _border_of(calibration, self._plan.sampling.ring_xy)
        self._background = _background_of(calibration)
        self._outer = _border_of(calibration, self._plan.sampling.ring_outer_xy)
        self._view = _view_of(calibration, self._plan.sampling.side)
        self._print = (None if self._view is None
                       else cv2.cvtColor(self._view.image, cv2.COLOR_BGR2GRAY))
        """The grey top-down view the border's print is compared with (`print_likeness`):
        the calibration photo's, until something has lain still beside the board ..."""
        self._print_odd: np.ndarray | None = None
        """... the border samples beside which the print differs from it, on the last frame
        read in full ..."""
        self._print_steady = 0
        """... and for how many frames running the same have, nothing moving."""
        self._steady = 0
        self._last_blocks: np.ndarray | None = None
        self._last_occluded = False
        self._view_still = False
        """Whether this frame's top-down view looks as the last one's (`view_blocks`)."""
        self._moving = 0
        """Frames running whose border has moved (`_moved`) while the view was not still."""
        self._hidden_still = 0
        """Frames running flagged as hidden (the frame before each) that look as the frame
        before them (see `view_blocks`): nothing moves, yet something seems to hide the
        board ..."""
        self._next_look = NUDGE_FRAMES
        """... and the count at which the board is next located afresh (`_look_again`)."""
        self._last_odd: np.ndarray | None = None
        self._still: np.ndarray | None = None
        """The border's samples (and their outer halves) when its present difference
        began, to tell whether anything on it has moved since (see `border_unmoved`)."""
        self._clear_codes: np.ndarray | None = None
        """The cells' reading (`CellReading.codes`) of the last frame nothing hid ..."""
        self._last_codes: np.ndarray | None = None
        """... and of the last frame read."""
        self._clear_board: np.ndarray | None = None
        """What the last frame nothing hid reported of each cell (`board_codes`) ..."""
        self._last_board: np.ndarray | None = None
        """... and the last frame read that nothing hid."""
        self._clock = 0.0
        """The time of the frame being read (seconds: as given to `read`, else counted at
        `NOMINAL_FPS`) ..."""
        self._moved_at = np.zeros(SIZE * SIZE)
        """... and, for each cell, of the last frame in which the top-down view's blocks
        near it moved (see `_stirring`)."""
        self._flips: list[np.ndarray] = []
        """Which cells' report (`board_codes`) changed from the frame before, for each of the
        last `STIR_FLICKER_FRAMES` frames read that nothing hid (`_stirring` leaves a cell
        that flickers alone)."""
        self._blocks = view_blocks(self._plan.sampling.side)
        self._block_cells = blocks_near_cells(self.settings, self._plan.sampling, self._blocks)
        self._kept: tuple[np.ndarray, Observation] | None = None
        """The last frame read in full (its top-down view's blocks) and its reading, while
        nothing hides the board (see `_reusable`) ..."""
        self._same_reads = 0
        """... how many full reads running have read the board so, each frame looking as
        the one before ..."""
        self._reuses = 0
        """... and how many frames since have been given that reading."""

    @property
    def corners(self) -> np.ndarray:
        """The grid corners now in use, in full-size image coordinates."""
        return self._plan.corners / self._scale

    def measure_frame(self, frame: np.ndarray | bytes, *, source: str = "frame"
                      ) -> tuple[Plan, Measurement, ColourModel]:
        """Measure one frame (re-locating the board after a bump) and learn its colours:
        everything `observe` needs. The reader's own colour model is not changed."""
        image = self._image(frame, source)
        return self._measured(image, measure(self.settings, self._plan, image, even=False))

    def _measured(self, image: np.ndarray, m: Measurement
                  ) -> tuple[Plan, Measurement, ColourModel]:
        """`measure_frame` of a frame measured (`measure` with `even` False) with the plan
        in use."""
        if not self._moved(m):
            self._moving = 0
        elif self._view_still or self._moving >= MOVING_FRAMES:
            m = self._relocate(image)
            self._moving = 0
        else:
            # Still shaking: the board found now would not be where it comes to rest.
            self._moving += 1
        m = self._against_border(m)
        if self._hidden_still >= self._next_look:
            m = self._look_again(image, m)
        m = _relit(self.settings, self._plan, m, self._border)
        m = replace(m, background=self._background, bare_view=self._view,
                    shade=make_shade(m.sub_lab, self._background))
        m = replace(m, print_likeness=print_likeness(self._plan, m, self._print))
        self._settle_print(m)
        model = learn_colours(self.settings, m.sub_lab, _lab3(m.ring_lab), self.model,
                              self._background, m.shade, m.cells_lab)
        return self._plan, m, model

    def read(self, frame: np.ndarray | bytes, *, source: str = "frame",
             t: float | None = None) -> Observation:
        """Read one frame (BGR array at calibration size, or encoded bytes); `source`
        names it in errors, `t` is its time in seconds (default: the last frame's, and
        `1 / NOMINAL_FPS` more)."""
        self._clock = self._clock + 1.0 / NOMINAL_FPS if t is None else float(t)
        np.minimum(self._moved_at, self._clock, out=self._moved_at)  # a video started over
        with one_blas_thread():
            image = self._image(frame, source)
            topdown = warp_topdown(self._plan.sampling, image)
            ii = integral(topdown)
            lines = grid_profiles(ii, self._inner)
            if self._lines_moved(lines) and self._nudge(image):
                topdown = warp_topdown(self._plan.sampling, image)
                ii = integral(topdown)
                lines = grid_profiles(ii, self._inner)
                self._lines_moved(lines)
            shifted = self._steady_offsets > 0
            blocks = box_means(ii, self._plan.sampling.index(self._blocks))
            last, self._last_blocks = self._last_blocks, blocks
            change = (np.abs(blocks - last) if last is not None and last.shape == blocks.shape
                      else None)  # (n blocks, 3): from the frame before
            self._view_still = change is not None and float(change.max()) < REUSE_LEVELS
            self._note_moves(change)
            if not (self._view_still and self._last_occluded):
                self._hidden_still = 0
            else:
                self._hidden_still += 1
            kept = self._reusable(blocks if self.reuse and not shifted else None)
            if kept is not None:
                self.reused += 1
                self._reuses += 1
                return kept
            bumps = self.bumps
            plan, m, model = self._measured(
                image, measure_view(self.settings, self._plan, topdown, ii, even=False))
            obs, reading, model = observe(self.settings, plan, m, model)
        if (shifted or self._moving) and self.bumps == bumps and not obs.occluded:
            # The camera or the board has moved: by a fraction of a cell (the grid's border
            # samples may still lie on the border, but the edge cells take in some of it),
            # or by more, and the view is still shaking.
            obs = replace(obs, occluded=True)
        board = board_codes(obs)
        if (not obs.occluded and self.bumps == bumps and last is not None
                and last.shape == blocks.shape and self._clear_board is not None):
            stirring = self._stirring(board)
            if stirring:
                # A cell reads otherwise than on the last clear frame while the picture
                # around it has changed a moment ago: a hand, an arm or its shadow going
                # by, not yet a board to trust (a piece put down reads so once it rests).
                obs = replace(obs, occluded=True, unsettled=stirring,
                              occluded_cells=obs.occluded_cells | stirring)
        if not obs.occluded or obs.unsettled:
            # Flicker is counted on frames nothing hides: a hand going to and fro over a
            # cell is no glare spot.
            if self._last_board is not None:
                self._flips = [*self._flips[1 - STIR_FLICKER_FRAMES:],
                               board != self._last_board]
            self._last_board = board
        self._last_codes = reading.codes.copy()
        self._last_occluded = obs.occluded and not obs.unsettled  # something hides it
        if self._reference is None and not obs.occluded and self.bumps == bumps:
            # The border as the first frame nothing hides shows it: the bump check's
            # strips and the grey levels `_look_again` lines the border up with.
            self._reference = ring_strips(plan, m.topdown, m.slopes)
            self._reference_grey = None if m.slopes is None else m.slopes.image
            self._lines = lines
        if not obs.occluded:
            self._clear_codes, self._clear_board = self._last_codes, board
            self._next_look = NUDGE_FRAMES
        if self.model is None:
            self.model = model
        elif not obs.occluded:
            self.model = blend_colours(self.settings, self.model, model)
            self._background = follow_background(self.settings, self._background, m, obs,
                                                  reading)
        scaled = tuple((x / self._scale, y / self._scale) for x, y in obs.corners)
        obs = replace(obs, corners=scaled)
        self._remember(blocks if self.bumps == bumps else None, m, obs)
        return obs

    def _note_moves(self, change: np.ndarray | None) -> None:
        """Note this frame's time for the cells near which the blocks changed by
        `STIR_LEVELS` or more (`change`: (n blocks, 3) from the frame before; None when
        there is no frame before to compare, and then for every cell)."""
        if change is None:
            self._moved_at[:] = self._clock
            return
        # Channel by channel and by a product: numpy's reductions along short rows, and
        # over the rows picked out, take several times as long.
        near = (row_max(change) >= STIR_LEVELS).astype(np.float32) @ self._block_cells
        self._moved_at[near > 0] = self._clock

    def _stirring(self, board: np.ndarray) -> frozenset[Cell]:
        """The cells whose report (`board`, see `board_codes`: a bridge's cells count)
        differs from the last clear frame's while the
        top-down view's blocks near them have changed by `STIR_LEVELS` or more from one
        frame to the next less than `STIR_REST_S` ago (see `_note_moves`);
        not those whose reading changed `STIR_FLICKER_CHANGES` times or more within the last
        `STIR_FLICKER_FRAMES` frames."""
        assert self._clear_board is not None and self._last_board is not None
        changed = board != self._clear_board
        if changed.any() and len(self._flips) >= STIR_FLICKER_CHANGES:
            # A cell whose reading keeps changing is a glare spot flickering, not something
            # going by: the live loop's settling knows how to wait for the rest of the board.
            changed &= np.sum(self._flips, axis=0) + (board != self._last_board) < (
                STIR_FLICKER_CHANGES)
        near = changed & (self._clock - self._moved_at < STIR_REST_S)
        return frozenset((int(i) % SIZE, int(i) // SIZE) for i in np.flatnonzero(near))

    def _lines_moved(self, lines: np.ndarray) -> bool:
        """Follow where the board's lines in this frame (`grid_profiles`) lie from where the
        first clear frame showed them; True when they have lain `SHIFT_PX` or more off
        them, in the same place, for `SHIFT_STILL_FRAMES` frames running."""
        if self._lines is None:
            self._offsets, self._steady_offsets = None, 0
            return False
        offsets = grid_offsets(self._lines, lines)
        last, self._offsets = self._offsets, offsets
        if float(np.abs(offsets).max()) < SHIFT_PX:
            self._steady_offsets = 0
        elif last is not None and float(np.abs(offsets - last).max()) <= SHIFT_STEADY_PX:
            self._steady_offsets += 1
        else:
            self._steady_offsets = 1
        return self._steady_offsets > SHIFT_STILL_FRAMES

    def _nudge(self, image: np.ndarray) -> bool:
        """Move the grid by where the board's lines lie (`_offsets`): the camera was
        knocked by a fraction of a cell and has come to rest. The border band is then
        lined up with the first clear frame's (`realigned`, from this close start), which
        also takes the turn and the tilt the lines' shifts only approximate. What was
        learned of the board and its border (in the top-down view's own terms) still
        holds, and so do the first clear frame's lines, which the next frames are held
        to. Returns whether the grid moved."""
        assert self._offsets is not None
        corners = nudged_corners(self.settings, self._plan, self._offsets)
        if corners is None:
            return False
        self.bumps += 1
        self._follow(corners)
        if self._reference_grey is not None:
            grey = cv2.cvtColor(warp_topdown(self._plan.sampling, image), cv2.COLOR_BGR2GRAY)
            found = realigned(self.settings, self._plan, self._reference_grey, grey)
            if found is not None and found[1] >= NUDGE_MIN_PX:
                self._follow(found[0])
        return True

    def _follow(self, corners: np.ndarray) -> None:
        """`_adopt` these corners, keeping the first clear frame's border and lines."""
        kept = self._lines, self._reference, self._reference_grey
        self._adopt(corners)
        self._lines, self._reference, self._reference_grey = kept

    def _reusable(self, blocks: np.ndarray | None) -> Observation | None:
        """The last reading, when this frame (its top-down view's `blocks`, see
        `view_blocks`) may be given it without being read: the board has read the same
        for `REUSE_AFTER` full reads running, nothing hid it or crossed its border, this
        frame looks as the last one read to within `REUSE_LEVELS` in every block, and
        fewer than `REUSE_LIMIT` frames running have been given it."""
        if (blocks is None or self._kept is None or self._same_reads < REUSE_AFTER
                or self._reuses >= REUSE_LIMIT):
            return None
        before, obs = self._kept
        return obs if float(np.abs(blocks - before).max()) < REUSE_LEVELS else None

    def _remember(self, blocks: np.ndarray | None, m: Measurement, obs: Observation) -> None:
        """Keep a frame read in full (its blocks, None after a bump) for `_reusable`."""
        self._reuses = 0
        border = [m.ring_outliers, m.ring_shadows, m.ring_outer_odd]
        quiet = (blocks is not None and not obs.occluded and not obs.occluded_cells
                 and not any(b is not None and b.any() for b in border))
        if not quiet or blocks is None:
            self._kept, self._same_reads = None, 0
            return
        kept = self._kept
        same = (kept is not None and kept[1].cells == obs.cells
                and kept[1].bridges == obs.bridges
                and float(np.abs(blocks - kept[0]).max()) < REUSE_LEVELS)
        self._same_reads = self._same_reads + 1 if same else 1
        self._kept = (blocks, obs)

    def _image(self, frame: np.ndarray | bytes, source: str) -> np.ndarray:
        if isinstance(frame, bytes | bytearray | memoryview):
            image = decode_image(bytes(frame), reduce=self.reduce, source=source)
            if (image.shape[1], image.shape[0]) == self._size:
                return image
            # Not the calibration's size: decoded whole, the error names its real size.
            frame = decode_image(bytes(frame), source=source)
        check_image(frame, source=source)
        image = frame
        if (image.shape[1], image.shape[0]) != self._size:
            if (image.shape[1], image.shape[0]) != tuple(self.calibration.image_size):
                _check_size(self.calibration, (image.shape[1], image.shape[0]))
            image = cv2.resize(image, self._size, interpolation=cv2.INTER_AREA)
        return image

    def _look_again(self, image: np.ndarray, m: Measurement) -> Measurement:
        """Line the board up again after `NUDGE_FRAMES` frames running flagged as hidden
        with nothing moving: a knock that moved the camera or the board by a fraction of
        a cell leaves the bump check's strips alike but puts the border's samples on the
        grid line or past the board's edge, and every frame would be flagged (and after a
        bump found while the view still shook, the board found then may be off). The
        border band of the top-down view is aligned with that of the first clear frame
        (see `realigned`), and the corners moved with it when it has moved by
        `NUDGE_MIN_PX` or more; without that frame, the board is located afresh and taken
        when the border there looks as the bare border did (at least three samples off it
        now, at most a third as many there). The bare border and the bare board seen
        before still hold (the top-down view is the board's own). Returns the frame
        measured anew then, else `m` (and the next look, while no frame is read unhidden,
        comes twice as late: a hand at rest over the board)."""
        self._next_look = self._hidden_still + (self._next_look + 1) * 2
        grey = None if m.slopes is None else m.slopes.image
        if self._reference_grey is not None and grey is not None:
            found = realigned(self.settings, self._plan, self._reference_grey, grey)
            if found is not None:
                if found[1] < NUDGE_MIN_PX:
                    return m  # lined up: something else is flagged
                self.bumps += 1
                self._adopt(found[0])
                return self._against_border(measure(self.settings, self._plan, image,
                                                    even=False))
        border, outer = self._bare_border()
        if border is None:
            return m
        changed = _border_changed(self.settings, m, border, outer)
        if changed < 3:
            return m
        try:
            corners = orient_corners(locate_board(self.settings, image), self.calibration.a1,
                                     self._size)
        except VisionError:
            return m
        plan = make_plan(self.settings, corners, self._size, self._k, self._dist)
        there = measure(self.settings, plan, image, even=False)
        if _border_changed(self.settings, there, border, outer) * 3 > changed:
            return m
        self.bumps += 1
        self._adopt(corners, plan)
        self._border, self._outer = border, outer
        return self._against_border(there)

    def _bare_border(self) -> tuple[np.ndarray | None, np.ndarray | None]:
        """The bare border to judge a board found again by: the one followed so far, else
        the calibration's."""
        if self._border is not None:
            return self._border, self._outer
        return self._calibration_border()

    def _calibration_border(self) -> tuple[np.ndarray | None, np.ndarray | None]:
        """The calibration's bare border (whole boxes, outer halves) at the plan's ring."""
        ring = self._plan.sampling
        return (_border_of(self.calibration, ring.ring_xy),
                _border_of(self.calibration, ring.ring_outer_xy))

    def _adopt(self, corners: np.ndarray, plan: Plan | None = None) -> None:
        """Read with the grid at these corners from now on (the board was found again)."""
        self._plan = plan if plan is not None else make_plan(
            self.settings, corners, self._size, self._k, self._dist)
        ring = self._plan.sampling
        if self._border is not None and len(self._border) != len(ring.ring_boxes):
            # Other border boxes are in view now: the calibration's bare border for them.
            self._border, self._outer = self._calibration_border()
        if self._outer is not None and len(self._outer) != len(ring.ring_outer_boxes):
            self._outer = None
        self._blocks = view_blocks(ring.side)
        self._block_cells = blocks_near_cells(self.settings, ring, self._blocks)
        self._kept, self._same_reads = None, 0
        self._reference = self._reference_grey = self._lines = None
        self._offsets, self._steady_offsets = None, 0
        self._steady, self._still = 0, None
        self._last_blocks, self._hidden_still = None, 0

    def _moved(self, m: Measurement) -> bool:
        if self._reference is None:
            return False
        now = ring_strips(self._plan, m.topdown, m.slopes)
        if now.shape != self._reference.shape:
            # Kept from a grid that sampled other border strips (`_follow`): nothing to
            # compare with, so the next clear frame's strips are taken as the reference.
            self._reference = None
            return False
        score = _strip_correlation(self._reference, now)
        misaligned = float((score < 0.5).mean())
        return misaligned > self.settings.bump_misaligned_fraction

    def _against_border(self, m: Measurement) -> Measurement:
        """Judge the border against the bare border seen before (the calibration's, or
        the first clear frame's), which knows a fixed shadow from an arm. The reference
        follows slow changes; after a re-location it is taken anew."""
        outer = m.ring_outer_bgr
        if self._border is None:
            if not m.ring_outliers.any():
                self._border = m.ring_bgr.copy()
                self._outer = None if outer is None else outer.copy()
            return m
        limit = self.settings.ring_outlier_error
        change = border_change_levels(m.ring_bgr, self._border, limit)
        odd, shadows = split_changes(*change, MIN_ODD_LEVELS)
        outer_odd = outer_shadows = None
        levels = change[0]
        if self._outer is not None and outer is not None:
            outer_change = border_change_levels(outer, self._outer, limit)
            outer_odd, outer_shadows = split_changes(*outer_change, MIN_ODD_LEVELS)
            levels = np.maximum(levels, outer_change[0])
        faint = clear = None
        if odd.any():
            faint = np.logical_or(*split_changes(*change, FAINT_LEVELS)) & ~(odd | shadows)
            clear = split_changes(*change, CLEAR_LEVELS)[0]
        if not (odd | shadows).any():
            rate = self.settings.adapt_rate
            self._border = (1 - rate) * self._border + rate * m.ring_bgr
            if self._outer is not None and outer is not None:
                self._outer = (1 - rate) * self._outer + rate * outer
            self._steady = 0
            self._still = None
        else:
            # The same difference for a long time with nothing moving is the room's light
            # changed (a lamp turned on, the sun moved), not an arm: take the border as it
            # is now. Nothing moves while the same samples stay changed, or while the
            # border looks as it did when the difference began: samples near the limit
            # come and go with the camera's noise, so the set alone may never settle. An
            # arm resting on the border is as still, but the cells it lies over do not
            # read as they did before it came (`_unchanged_near`).
            changed = odd | shadows
            seen = m.ring_bgr if outer is None else np.concatenate([m.ring_bgr, outer])
            same = self._last_odd is not None and np.array_equal(changed, self._last_odd)
            still = self._still is not None and border_unmoved(seen, self._still)
            self._steady = self._steady + 1 if same or still else 0
            if not still:
                self._still = seen.copy()
            if outer_odd is not None:
                changed = changed | outer_odd
            if self._steady >= BORDER_SETTLE_FRAMES and self._unchanged_near(changed):
                self._border = m.ring_bgr.copy()
                self._outer = None if outer is None else outer.copy()
                self._steady = 0
                self._still = None
                odd = np.zeros_like(odd)
                shadows = np.zeros_like(shadows)
                outer_odd = outer_shadows = faint = clear = None
        self._last_odd = odd | shadows
        return replace(m, ring_outliers=odd, ring_shadows=shadows, ring_outer_odd=outer_odd,
                       ring_outer_shadows=outer_shadows, ring_faint=faint, ring_clear=clear,
                       ring_levels=levels)

    def _settle_print(self, m: Measurement) -> None:
        """Take the border's print as this frame shows it for the one to compare later
        frames with once it has differed from it beside the same border samples for
        `BORDER_SETTLE_FRAMES` frames running, nothing moving, and the cells near them
        read as on the last frame nothing hid (`_unchanged_near`). Something put down on
        the table against the board's edge (the box, a cup, the tiles not yet played)
        changes the print's surroundings there for good and would flag every frame after;
        a hand hiding the print lies over the cells next to it, or moves."""
        if m.print_likeness is None:
            return
        unlike = m.print_likeness < PRINT_LIKENESS
        if not unlike.any():
            self._print_odd, self._print_steady = None, 0
            return
        same = self._print_odd is not None and np.array_equal(unlike, self._print_odd)
        self._print_steady = self._print_steady + 1 if same and self._view_still else 0
        self._print_odd = unlike
        if self._print_steady >= BORDER_SETTLE_FRAMES and self._unchanged_near(unlike):
            self._print = _grey_view(m).copy()
            self._print_odd, self._print_steady = None, 0

    def _unchanged_near(self, changed: np.ndarray) -> bool:
        """Whether the cells within `REACH` of these border samples read as they did on
        the last frame nothing hid (the frame before this one is the one compared: the
        border has been still for seconds). A hand or an arm that rests over the border
        lies over the cells next to where it crosses, and is read as tiles or as hidden
        there; a lamp turned on changes the border and none of the cells.

        Without a clear frame yet (a calibration made in another day's light, or a hand
        there from the first frame) there is no reading to compare with: then none of
        those cells may be one the colour votes cannot read (`UNKNOWN`). A hand resting
        over the border leaves some of them unreadable; a lamp's light leaves them
        readable."""
        if self._last_codes is None:
            return True
        sampling = self._plan.sampling
        far = np.abs(sampling.cell_xy[:, None] - sampling.ring_xy[changed][None]).max(axis=2)
        near = (far <= REACH).any(axis=1)
        if self._clear_codes is None:
            return not bool((self._last_codes[near] == UNKNOWN).any())
        return bool(np.array_equal(self._last_codes[near], self._clear_codes[near]))

    def _lined_up(self, lines: np.ndarray | None, m: Measurement) -> bool:
        """Whether the board's lines in the frame measured (`m`) lie where `lines` (see
        `grid_profiles`) put them, to `SHIFT_PX`."""
        return lines is not None and float(np.abs(grid_offsets(
            lines, grid_profiles(m.integral, self._inner))).max()) < SHIFT_PX

    def _relocate(self, image: np.ndarray) -> Measurement:
        """Locate the board afresh (a bump); returns the frame measured there."""
        self.bumps += 1
        found = locate_board(self.settings, image)
        kept = self._lines, self._reference_grey
        self._adopt(orient_corners(found, self.calibration.a1, self._size))
        m = measure(self.settings, self._plan, image, even=False)
        lines, grey = kept
        if grey is not None and m.slopes is not None:
            # Located from scratch, the corners can lie a few pixels off those the board
            # was read with: line the border band up with the first clear frame's.
            aligned = realigned(self.settings, self._plan, grey, m.slopes.image)
            if aligned is not None:
                plan = make_plan(self.settings, aligned[0], self._size, self._k, self._dist)
                there = measure(self.settings, plan, image, even=False)
                if self._lined_up(lines, there) or not self._lined_up(lines, m):
                    self._adopt(aligned[0], plan)
                    m = there
        if self._lined_up(lines, m):
            # The board's own view lines up with the one before: what was learned of its
            # bare border and board holds, whatever the light on the border does now.
            self._lines, self._reference_grey = kept
            return m
        for border, outer in ((self._border, self._outer), self._calibration_border()):
            if border is not None and _border_changed(self.settings, m, border, outer) <= max(
                    2, len(border) // 10):
                # The border there looks as the bare border did: the camera moved, not
                # the light; what was learned of the bare board still holds.
                self._border, self._outer = border, outer
                return m
        self._border = None
        self._outer = None
        # The light falls on the board differently now: learn the bare board again.
        self._background = np.full_like(self._background, np.nan)
        self._view = None
        return m


REUSE_AFTER = 15
"""Full reads running that must read the board alike, nothing hiding it, before a frame may
be given the last reading without being read (see `BoardReader`). At 30 frames a second
that is half a second, longer than the live loop's settle window (0.4 s): the loop commits
a board on frames read in full, and a reading one frame got by chance is not repeated."""

REUSE_LIMIT = 15
"""Frames running given the last reading, at most, before one is read in full again (it
keeps the colour model and the border following the light, and the reading honest)."""

REUSE_LEVELS = 16.0
"""How far (8-bit levels, in any colour channel) the mean of a block of the top-down view
may differ from the frame last read for a frame to look the same. In generated scenes of
every setup (blocks of 8 pixels at half size), the camera's noise alone moves a block by
8 levels at most (the most in the dim, noisy setup); taking away one tile moves one by 48
or more, one bridge by 44 or more."""

REUSE_BLOCK = 8
"""Side of the blocks (top-down view pixels) compared for `REUSE_LEVELS`."""


SHIFT_PX = 2.0
"""How far (top-down view pixels, a twelfth of a cell) the board's lines may lie from where
the first clear frame showed them before a frame is not read as clear (see
`grid_offsets`). A knock that turned the camera by 1.5 degrees moved them by 2-3 pixels and
more (and a wide-angle board seen so read 3-8 edge cells wrong, the grid's border samples
still on the wide border); over game videos without a knock, with hands and up to 30
moves, the estimate stayed within 0.1 pixels."""

SHIFT_REACH = 12
"""Pixels (half a cell) either way `grid_offsets` looks for the board's lines."""

SHIFT_STILL_FRAMES = 2
"""Frames running, after the first whose lines lay off, in which they lie in the same place
(to `SHIFT_STEADY_PX`) before the reader moves the grid after them: the camera has come to
rest."""

SHIFT_STEADY_PX = 0.5
"""How far (top-down view pixels) the lines may move from one frame to the next and still
be at rest."""

MOVING_FRAMES = 8
"""Frames running, at most, flagged as hidden after the bump check found the border moved,
while the view is not yet still, before the board is located afresh all the same (a bump
is located once the view has come to rest: located while it shakes, the board is found
where it does not stay, and what was learned of its border would be thrown away)."""


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


def grid_offsets(before: np.ndarray, now: np.ndarray, reach: int = SHIFT_REACH) -> np.ndarray:
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


STIR_LEVELS = 12.0
"""Grey levels (0-255, any channel) by which a block of the top-down view (`view_blocks`)
changes from one frame to the next where something moves: a hand, an arm, its shadow
(in the game videos looked at, a camera's noise moved a block's mean by 3 or less)."""
STIR_REST_S = 0.5
"""Seconds for which the picture near a cell must not have moved (by `STIR_LEVELS`) for a
new reading of it to be trusted: an arm's shadow lying still for a moment, or a hand
holding a piece still over a cell, reads as a piece put down (in generated game videos,
for up to 0.4 s, as long as the live loop's settle window). The frames between are
flagged, their cells `unsettled`, and the live loop's settling counts them into its window
(`Reading.pending`): the two waits run together."""
NOMINAL_FPS = 30.0
"""The frame rate `BoardReader.read` assumes of frames given without their time."""
STIR_FLICKER_CHANGES = 4
STIR_FLICKER_FRAMES = 20
"""A cell whose reading changed `STIR_FLICKER_CHANGES` times within this many frames is
flickering (a glare spot) and not flagged for it: flagged, it would hold the whole board
back; the live loop's settling lets the rest of the board settle around such a cell (its
`FLICKER_CHANGES` within 2 s). A hand or a shadow going by changes a cell once or twice."""
STIR_REACH = 1.0
"""Cells (each way, from where a cell's tile top appears) within which a moving block
makes a changed reading of the cell not yet one to trust."""


_BOARD_CODES = {CellState.EMPTY: 0, CellState.LIGHT: 1, CellState.DARK: 2}


def board_codes(obs: Observation) -> np.ndarray:
    """(100,) int, cell index rank * 10 + file: what the observation reports of each cell,
    0 empty, 1 light, 2 dark, and 3 more for a bridge's end or a cell it passes over (a
    bridge's coming or going changes its cells' codes even where the tiles stay)."""
    codes = np.array([_BOARD_CODES[state] for row in obs.cells for state in row], np.int64)
    for a, b in obs.bridges:
        for f, r in (a, b, *cells_under(a, b)):
            codes[r * SIZE + f] += 3
    return codes


def blocks_near_cells(settings: Thresholds, sampling: SamplingPlan, blocks: np.ndarray
                      ) -> np.ndarray:
    """(n blocks, 100) float32, 1 where a block of the top-down view (`view_blocks`) lies
    within `STIR_REACH` of a cell, as the cell's tile top appears (`cell_mid_xy`), else 0
    (numbers, for a product: see `BoardReader._note_moves`)."""
    px, margin = settings.cell_px, settings.margin_cells
    cx = (blocks[:, 0] + blocks[:, 2]) / 2.0 / px - margin
    cy = margin + SIZE - (blocks[:, 1] + blocks[:, 3]) / 2.0 / px
    mid = sampling.cell_mid_xy
    near = ((np.abs(cx[:, None] - mid[None, :, 0]) <= STIR_REACH)
            & (np.abs(cy[:, None] - mid[None, :, 1]) <= STIR_REACH))
    return near.astype(np.float32)


def view_blocks(side: int, block: int = REUSE_BLOCK) -> np.ndarray:
    """(n, 4) int boxes tiling a `side`-pixel-square top-down view in about `block`-pixel
    squares (for `box_means`)."""
    n = max(side // block, 1)
    edges = np.arange(n + 1) * side // n
    x0, y0 = np.meshgrid(edges[:-1], edges[:-1])
    x1, y1 = np.meshgrid(edges[1:], edges[1:])
    return np.stack([x0.ravel(), y0.ravel(), x1.ravel(), y1.ravel()], axis=1).astype(np.int64)


def with_view(calibration: Calibration, image: np.ndarray) -> Calibration:
    """The calibration with its photo's top-down view and light field (`Calibration.view`),
    as a reader of it warps and measures the photo."""
    m = BoardReader(calibration).measure_frame(image)[1]
    png = cv2.imencode(".png", m.topdown)[1]  # a uint8 BGR image always encodes
    return replace(calibration, view=base64.b64encode(png.tobytes()).decode("ascii"),
                   view_light=tuple(float(v) for v in m.light_coef.ravel()))


def _view_of(calibration: Calibration, side: int) -> BareView | None:
    """The calibration's view of the bare board (None without one, or when it is not an
    image of the top-down view's size: then the second look does without it)."""
    if calibration.view is None or calibration.view_light is None or calibration.board is None:
        return None
    image = cv2.imdecode(np.frombuffer(base64.b64decode(calibration.view), np.uint8),
                         cv2.IMREAD_COLOR)
    if image is None or image.shape != (side, side, 3):
        return None
    known = np.array([row is not None for row in calibration.board])
    return BareView(image, np.array(calibration.view_light, np.float64).reshape(6, 3), known)


NUDGE_MIN_PX = 0.5
"""How far (top-down view pixels) a corner must have moved for `BoardReader._look_again` to
move the grid."""

NUDGE_MIN_CORRELATION = 0.9
"""The least correlation of the aligned border bands for `realigned` to trust them."""


def realigned(settings: Thresholds, plan: Plan, before: np.ndarray, now: np.ndarray
              ) -> tuple[np.ndarray, float] | None:
    """The grid corners (image coordinates, a1 first) that line the border band of the
    top-down view `now` up with that of `before` (grey, both made with `plan`), and how
    far the corners moved in the top-down view; None when the two do not match
    (`NUDGE_MIN_CORRELATION`). The band (the margin around the grid and the grid's outer
    line) is what nothing but a hand changes: tiles stand inside it. A homography is
    fitted by OpenCV's ECC method at half size, then at full size, then `REALIGN_REFITS`
    times at full size again without the band's pixels that match worst
    (`REALIGN_OUTLIERS`, chosen afresh each time)."""
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
    if not np.isfinite(warp).all() or score < NUDGE_MIN_CORRELATION:
        return None
    for _ in range(REALIGN_REFITS):
        try:
            _, refit = cv2.findTransformECC(
                before, now, warp, cv2.MOTION_HOMOGRAPHY,
                (cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, 10, 1e-4),
                _best_matched(before, now, warp, mask), 5)
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


REALIGN_REFITS = 3
"""How many times `realigned` fits the homography again without the pixels of the border
band that match worst (`REALIGN_OUTLIERS`), each time chosen by the fit before."""

REALIGN_OUTLIERS = 0.1
"""The share of the border band's pixels that `realigned` leaves out of its refits: those
that differ most from the view before once the two are lined up by the fit before. They
are what does not move with the board: the table beyond its edge, and the tops of the
edge cells' pieces, which stand above the board and so shift against it when the camera
moves. Fitted with them, the ECC iterations did not settle: on a knocked camera's frame
the corners went on moving by up to a pixel (half-size image) from one iteration to the
next, so that where they stopped changed with the CPU's instruction set (AVX2 or
AVX-512); without them the fit's correlation rose from 0.995 to 0.9995 and the corners
lay within a quarter of a pixel of where the camera's move put them."""


def _best_matched(before: np.ndarray, now: np.ndarray, warp: np.ndarray, band: np.ndarray
                  ) -> np.ndarray:
    """`band` (a uint8 mask of the top-down view) without its `REALIGN_OUTLIERS` pixels
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
    kept[off > np.quantile(off[inside], 1.0 - REALIGN_OUTLIERS)] = 0
    return kept


def _rescaled(warp: np.ndarray, factor: float) -> np.ndarray:
    """A homography between images `factor` times larger."""
    scale = np.diag([factor, factor, 1.0])
    result: np.ndarray = (scale @ warp.astype(np.float64) @ np.linalg.inv(scale)).astype(
        np.float32)
    return result


NUDGE_FRAMES = 8
"""Frames running flagged as hidden with nothing moving after which the reader locates the
board afresh (see `BoardReader._look_again`). A hand at rest over the board costs a
location then and ever more rarely (the gap doubles each time)."""


def _border_changed(settings: Thresholds, m: Measurement, border: np.ndarray,
                    outer: np.ndarray | None) -> int:
    """How many of a frame's border samples (whole boxes and outer halves) look off this
    bare border (see `border_changes`)."""
    if border.shape != m.ring_bgr.shape:
        return len(m.ring_bgr) + len(border)  # other boxes in view: nothing to compare
    limit = settings.ring_outlier_error
    odd, shadows = border_changes(m.ring_bgr, border, limit)
    count = int((odd | shadows).sum())
    if (outer is not None and m.ring_outer_bgr is not None
            and outer.shape == m.ring_outer_bgr.shape):
        count += int(border_changes(m.ring_outer_bgr, outer, limit)[0].sum())
    return count


BORDER_SETTLE_FRAMES = 90  # frames (3 s at 30 fps) of one unchanging border difference
REACH = 2.5
"""Board units (the larger of across and along) from a changed border sample within which
the cells must read as on the last clear frame (without one: must all be readable) before
a lasting difference of the border is taken for the room's light (see
`BoardReader._unchanged_near`)."""
STILL_SHARE = 0.05
"""A border sample has not moved while it stays within this share of its brightness of
where it was (a third of `ring_outlier_error`, the change that makes it odd; frames of
one scene in window light, each with noise of 2 grey levels and JPEG-encoded again, moved
the samples by up to 3% and 1.9 levels) ..."""
STILL_LEVELS = 6.0
"""... or within this many grey levels (a dark border's samples are noisy for their
brightness)."""


def border_unmoved(seen: np.ndarray, before: np.ndarray) -> bool:
    """Whether the border's (n, 3) samples are where they were `before`, up to the
    camera's noise and its exposure (the median change of every channel is taken out):
    an arm or a hand moves, a lamp turned on and left on does not."""
    expected, diff = _off_exposure(seen, before)
    return bool((diff <= np.maximum(STILL_SHARE * expected.mean(axis=1), STILL_LEVELS)).all())


def _off_exposure(seen: np.ndarray, before: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(n, 3) border samples `before`, as the camera's exposure now shows them (the median
    change of every channel), and (n,) how far `seen` is from them (the largest channel)."""
    gain = median_along(np.maximum(seen, 1.0) / np.maximum(before, 1.0), 0)
    expected = before * gain
    return expected, np.abs(seen - expected).max(axis=1)


def _background_of(calibration: Calibration) -> np.ndarray:
    """The calibration's bare board per sample box, (100, 9, 3) with NaN where a tile was
    (all NaN for a calibration without it: the reader learns it from the frames)."""
    out = np.full((SIZE * SIZE, 9, 3), np.nan)
    for i, row in enumerate(calibration.board or ()):
        if row is not None:
            out[i] = np.asarray(row, np.float64).reshape(9, 3)
    return out


def bare_cells(obs: Observation, reading: CellReading, sure: float = 0.0) -> np.ndarray:
    """(100,) cells read as bare board (at least this sure), with nothing hiding them and
    no bridge over them or standing on them."""
    bare = (reading.codes == EMPTY) & (reading.confidence >= sure)
    for f, r in obs.occluded_cells:
        bare[r * SIZE + f] = False
    for a, b in obs.bridges:
        for f, r in (a, b, *cells_under(a, b)):
            bare[r * SIZE + f] = False
    return bare


BACKGROUND_SURE = 0.95
"""How sure a reading must be that a cell is bare for the background to follow it."""


def follow_background(
    settings: Thresholds, background: np.ndarray, m: Measurement, obs: Observation,
    reading: CellReading,
) -> np.ndarray:
    """The bare board as it looks now: cells surely bare (no bridge over them) move towards
    this frame's colours at the colour model's rate (the light changes slowly); a cell not
    known yet (a tile stood there at calibration) is taken as it is."""
    bare = bare_cells(obs, reading, BACKGROUND_SURE)
    out = background.copy()
    unknown = np.isnan(out).any(axis=(1, 2))
    rate = settings.adapt_rate
    follow = bare & ~unknown
    out[follow] = (1 - rate) * out[follow] + rate * m.sub_lab[follow]
    out[bare & unknown] = m.sub_lab[bare & unknown]
    return out


def _border_of(calibration: Calibration, xy: np.ndarray) -> np.ndarray | None:
    """The calibration's bare border at these board points (the centres of the plan's
    ring boxes, or of their outer halves), or None when it has none or not for all."""
    if not calibration.ring:
        return None
    known = {(round(x, 2), round(y, 2)): (b, g, r) for x, y, b, g, r in calibration.ring}
    rows = [known.get((round(float(x), 2), round(float(y), 2))) for x, y in xy]
    if any(row is None for row in rows):
        return None
    return np.array(rows, np.float64)


def border_changes(
    ring: np.ndarray, reference: np.ndarray, limit: float, levels: float = MIN_ODD_LEVELS
) -> tuple[np.ndarray, np.ndarray]:
    """(n,) border samples unlike the bare border behind them, as (outliers, shadows).

    The overall change of exposure (the median ratio) is taken out first; a sample has
    changed when it then differs by more than `limit` (relative) and by `levels` (grey).
    A changed sample is a shadow when every channel is darker by about the same factor (a
    tile's or a bridge's shadow under a low lamp falls across the border, and so does a
    hand's); otherwise it is an outlier (a hand, an arm, a sleeve changes the colour).
    """
    return split_changes(*border_change_levels(ring, reference, limit), levels)


def border_change_levels(
    ring: np.ndarray, reference: np.ndarray, limit: float
) -> tuple[np.ndarray, np.ndarray]:
    """(n,) the grey levels by which each border sample differs from the bare border behind
    it where it differs by more than `limit` (relative), else 0; and (n,) whether its
    change is a shadow's (see `border_changes`, which counts the levels)."""
    expected, diff = _off_exposure(ring, reference)
    change = np.where(diff > limit * np.maximum(expected.mean(axis=1), 1.0), diff, 0.0)
    ratio = np.maximum(ring, 1.0) / np.maximum(expected, 1.0)
    top, bottom = ratio.max(axis=1), ratio.min(axis=1)
    noise = _SHADOW_NOISE_LEVELS / np.maximum(expected.min(axis=1), 1.0)
    shadow = (top < 1.0) & (bottom > _SHADOW_DEEPEST) & (
        top - bottom < _SHADOW_TINT * ratio.mean(axis=1) + noise)
    return change, shadow


def split_changes(
    change: np.ndarray, shadow: np.ndarray, levels: float
) -> tuple[np.ndarray, np.ndarray]:
    """`border_change_levels`' samples changed by more than `levels` grey levels, as
    (outliers, shadows)."""
    odd = change > levels
    return odd & ~shadow, odd & shadow


_SHADOW_TINT = 0.06  # a shadow changes the channels' ratios by less than this (relative)
_SHADOW_NOISE_LEVELS = 3.0  # grey levels of noise allowed on top of that
_SHADOW_DEEPEST = 0.2  # a "shadow" darker than this is something dark lying there


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


def _strip_correlation(ref: np.ndarray, now: np.ndarray) -> np.ndarray:
    a = ref.reshape(len(ref), -1)
    b = now.reshape(len(now), -1)
    a = a - a.mean(axis=1, keepdims=True)
    b = b - b.mean(axis=1, keepdims=True)
    den = np.sqrt((a * a).sum(axis=1) * (b * b).sum(axis=1)) + 1e-6
    result: np.ndarray = (a * b).sum(axis=1) / den
    return result
