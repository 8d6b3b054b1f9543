"""Stage 6, Occlusion: whether something hides the board, and where.

A hand, an arm or a sleeve shows as cells read as hidden, as wide patches of one tile
colour, and as a border that no longer looks as it did (`odd_boxes`, excused where a piece
on the board explains the change: `border_excuses`). `judge` weighs this evidence into the
frame's verdict: which cells are hidden, and whether the frame is flagged.
"""

from __future__ import annotations

from collections.abc import Sequence

import cv2
import numpy as np

from contracts.calibration import ColourModel, Thresholds
from vision.cells import SIZE, Cell, cells_under
from vision.classify import DARK, EMPTY, LIGHT, UNKNOWN, CellReading, colour_distance
from vision.features import TILE_REACH, field_at, ring_shares, to_lab
from vision.measure import Measurement, Plan
from vision.read_cells import with_neighbours


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
    `Thresholds.clear_levels` or more, that changed faintly (`Measurement.ring_faint`): an arm's
    picture fades out at its edges. Those count whatever else might explain them, as a
    shadow beside a change that counts does."""
    if m.ring_faint is None or m.ring_clear is None or not m.ring_faint.any():
        return False
    clear = odd & m.ring_clear
    if not clear.any():
        return False
    xy = plan.sampling.ring_xy
    apart = np.linalg.norm(xy[:, None, :] - xy[None, clear, :], axis=2).min(axis=1)
    count = int(odd.sum()) + int((m.ring_faint & (apart <= settings.faint_beside)).sum())
    return count > settings.ring_occlusion_fraction * len(odd)


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
    deck = spanned[index] & (deck_share >= settings.deck_share)
    if m.ring_outer_odd is not None:
        # Nor does a deck reach the border's outer half unless it leans far over it (as for
        # a tile, `lean_outer_share`), though its shadow may: a change of both halves
        # beside the end of a bridge, lighter than the border, is an arm's (`deck_lighter`).
        arm = deck & m.ring_outer_odd & (deck_outer_share < settings.lean_outer_share)
        if arm.any():
            lighter = float(m.ring_lab[0]) + settings.deck_lighter
            arm[arm] = _ring_seen(m, xy, arm)[:, 0] > lighter
            deck &= ~arm
    odd = m.ring_outliers & ~deck
    # (Only where something changed on the border does it matter what the tiles look like.)
    changed = [m.ring_outliers, m.ring_shadows, m.ring_outer_odd]
    if any(c is not None and c.any() for c in changed):
        unlike = _unlike_tiles(settings, m, model, beside, index)
    else:
        unlike = np.zeros(len(xy), bool)
    if m.ring_outer_odd is not None:
        # Held high, a hand's picture can leave the border's inner half as it was and
        # change only the outer half, where no tile leans: beside a cell read as hidden,
        # or as a tile unlike every tile, that is the arm of the hand over the cell.
        odd |= _outer_alone(settings, plan, m, spanned, index) & (unlike | (beside == UNKNOWN))
    if m.ring_shadows is not None:
        # A shadow on the border counts unless a tile or a bridge near it casts it (a
        # hand's shadow reaches the border before the hand does, or beside it).
        casters = ((codes == LIGHT) | (codes == DARK) | spanned).reshape(SIZE, SIZE)
        near = with_neighbours(casters).ravel()
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
            darker = float(m.ring_lab[0]) - settings.tinted_darker
            tinted[tinted] = _ring_seen(m, xy, tinted)[:, 0] < darker
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
                like_tile |= mine & between_tiles(
                    settings, lab, border, np.asarray(centre, np.float64),
                    plan.sampling.ring_lean_share[leaned])
        if m.ring_outer_odd is not None:
            # An arm covers the border's outer half too, where a tile rarely reaches.
            reaches = plan.sampling.ring_outer_share[leaned] >= settings.lean_outer_share
            like_tile &= ~m.ring_outer_odd[leaned] | reaches
        excused = np.zeros_like(odd)
        excused[np.flatnonzero(leaned)[like_tile]] = True
        odd &= ~excused
    if shadows is not None and odd.any():
        # Something is over the border (not a tile leaning over it): a shadow beside it is
        # its shadow. Only beside it: one changed box does not make every tile's shadow
        # around the board a hand's.
        apart = np.linalg.norm(xy[:, None, :] - xy[None, odd, :], axis=2).min(axis=1)
        near = apart <= settings.shadow_beside
        odd |= shadows & near
        if m.ring_outer_shadows is not None:
            # So is a shadow on the outer half alone beside it, where the inner half kept
            # its colour (`shadow_beside`).
            odd |= m.ring_outer_shadows & ~m.ring_outliers & near
    return odd


def _ring_seen(m: Measurement, xy: np.ndarray, which: np.ndarray) -> np.ndarray:
    """(k, 3) the Lab of the border samples `which` ((n,) bool; `xy`: the samples' board
    points) with the light field divided out."""
    result: np.ndarray = to_lab(m.ring_bgr[which] / field_at(m.light_coef, xy[which]))
    return result


def _outer_alone(settings: Thresholds, plan: Plan, m: Measurement, spanned: np.ndarray,
                 index: np.ndarray) -> np.ndarray:
    """(n,) the border samples whose outer half alone changed, where no tile's lean reaches
    it and no bridge stands beside it (`m.ring_outer_odd` must be known; `index`: each
    sample's edge cell, `spanned`: the cells a bridge may excuse a change beside)."""
    assert m.ring_outer_odd is not None
    result: np.ndarray = (m.ring_outer_odd & ~m.ring_outliers & ~spanned[index]
                          & (plan.sampling.ring_outer_share < settings.lean_outer_share))
    return result


def _unlike_tiles(settings: Thresholds, m: Measurement, model: ColourModel, beside: np.ndarray,
                  index: np.ndarray) -> np.ndarray:
    """(n,) border samples beside a cell read as a tile whose colour is further than
    `Thresholds.unlike_tile` from its colour's learned tile colour (`beside`: each sample's cell's
    code; `index`: that cell)."""
    out = np.zeros(len(beside), bool)
    for cls, centre in ((LIGHT, model.light), (DARK, model.dark)):
        if centre is not None:
            mine = beside == cls
            if mine.any():
                far = colour_distance(m.cells_lab[index[mine]], centre)
                out[mine] = far > settings.unlike_tile
    return out


def between_tiles(
    settings: Thresholds, lab: np.ndarray, border: np.ndarray, tile: np.ndarray,
    share: np.ndarray,
) -> np.ndarray:
    """(n,) Lab samples on the way from the border's colour to a tile's: the tile's top or
    its shaded side seen over the border, or a mix of the two, however little of the tile
    (on a dark border a sliver of a tile is a large change of light; a sleeve lies off the
    way), and no further along it than the share of the box (n,) the tile can cover (an
    arm across the border covers all of it, with a colour that may well lie on the way;
    `Thresholds.lean_reach`, `lean_slack`, `lean_off_way`, `lean_off_min`)."""
    way = tile - border
    span = float(np.linalg.norm(way))
    if span < 1e-6:
        return np.zeros(len(lab), bool)
    t = (lab - border) @ way / (span * span)
    off = np.linalg.norm(lab - border - t[:, None] * way[None, :], axis=1)
    result: np.ndarray = (t > 0.0) & (t < settings.lean_reach) & (
        t < share + settings.lean_slack) & (
        off < settings.lean_off_way * span + settings.lean_off_min)
    return result


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


def edge_hidden(unknown: np.ndarray) -> bool:
    """Whether a cell at the board's edge is taken for hidden (`unknown`, (10, 10)). It
    flags the frame, though it is the only one (`occlusion_min_cells` is the rule inside
    the board): a hand reaches in over the edge, and where it comes in over a table or a
    border of its own colour the border barely changes, so its fingertip may be all that
    shows. It flags a few frames in a thousand with nothing over the board, read as they
    would be otherwise: the cell keeps the stray cell's reading."""
    return bool((unknown & _EDGE).any())


_EDGE = np.ones((SIZE, SIZE), bool)

_EDGE[1:-1, 1:-1] = False

def _ring_cells(plan: Plan) -> np.ndarray:
    """(n,) the edge cell (flat index) beside each border sample."""
    cells = np.clip(np.floor(plan.sampling.ring_xy).astype(np.int64), 0, SIZE - 1)
    result: np.ndarray = cells[:, 1] * SIZE + cells[:, 0]
    return result


def finger_on_border(settings: Thresholds, plan: Plan, odd: np.ndarray, hidden: np.ndarray
                     ) -> bool:
    """Whether a border sample that counts (`odd`, see `odd_boxes`) lies beside an edge
    cell with at least `Thresholds.reaching_hidden_p` chance of being hidden (`hidden`, (100,)): a
    finger over the cell, its hand across the border beside it. A hand of the border's own
    colour may change a single sample, which alone is too little for `border_crossed`, while
    the finger's cell is read as the tile it holds. With nothing over the board, an edge
    cell beside a changed sample is hardly ever taken for hidden at all."""
    if not odd.any():
        return False
    return bool((hidden[_ring_cells(plan)[odd]] >= settings.reaching_hidden_p).any())


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
    return bool((with_neighbours(unknown).ravel() & edge).any())


def tile_apart_on_border(settings: Thresholds, plan: Plan, m: Measurement, model: ColourModel,
                         codes: np.ndarray, spanned: np.ndarray) -> bool:
    """Whether a border sample whose outer half alone changed (`odd_boxes` counts such a
    change beside a cell read as hidden or as a tile unlike every tile) lies beside a cell
    read as a tile that stands apart from the other tiles of its colour: at least
    `Thresholds.apart_tile` from the learned colour and `apart_ratio` times as far as any
    other.
    A pale hand the colour of the board reaching over a corner reads as a light tile
    there: unlike the board's light tiles, but not enough for `unlike_tile`, which must
    allow for a lamp's glare, which moves every tile near it. With nothing over the
    board, such a tile beside such a change is either near its colour (a lamp's light
    moves a tile less than `apart_tile`) or about as far as the other tiles. As
    `edge_hidden`, it only flags: the reading stays."""
    if m.ring_outer_odd is None:
        return False
    index = _ring_cells(plan)
    alone = _outer_alone(settings, plan, m, spanned, index)
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
            if (len(others) and own >= settings.apart_tile
                    and own >= settings.apart_ratio * max(float(others.max()), 1.0)):
                return True
    return False


def print_likeness(settings: Thresholds, plan: Plan, m: Measurement, before: np.ndarray | None
                   ) -> np.ndarray:
    """(n,) per border sample, the correlation of the grey levels just outside it (see
    `beyond_boxes`) with those of `before` there (the calibration photo's grey top-down
    view, or what a reader has seen lie still there since), where it
    lies or moved by up to `Thresholds.print_reach_px` pixels, whichever is likest; 1.0
    where not compared: where the sample or its outer half changed by `print_quiet_levels`
    or more, where the photo shows no print (`print_least_spread`), and everywhere without a photo
    or a bare border. A patch of one grey, where the photo shows print, is nothing like it
    (0)."""
    n = len(plan.sampling.ring_boxes)
    likeness = np.ones(n)
    if before is None or m.ring_levels is None or before.shape != m.topdown.shape[:2]:
        return likeness
    quiet = m.ring_levels < settings.print_quiet_levels
    now = grey_view(m).reshape(-1)
    for ids, flat in plan.beyond:
        use = quiet[ids]
        if not use.any():
            continue
        pixels = flat[use]
        a = before.reshape(-1).take(pixels).astype(np.float64)
        a -= a.mean(axis=1, keepdims=True)
        aa = (a * a).sum(axis=1)
        printed = np.sqrt(aa / pixels.shape[1]) >= settings.print_least_spread
        if not printed.any():
            continue
        a, aa, pixels = a[printed], aa[printed], pixels[printed]
        score = _correlations(a, aa, now.take(pixels))
        # Only where the print does not match as it lies is it looked for nearby: the
        # common case costs one comparison.
        off = score < settings.print_likeness
        if off.any():
            steps = np.arange(-settings.print_reach_px, settings.print_reach_px + 1)
            moves = (steps[:, None] * int(m.topdown.shape[1]) + steps[None, :]).ravel()
            moved = now.take(pixels[off][None] + moves[:, None, None])
            score[off] = _correlations(a[off][None], aa[off][None], moved).max(axis=0)
        likeness[ids[use][printed]] = score
    return likeness


def grey_view(m: Measurement) -> np.ndarray:
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


def print_hidden(settings: Thresholds, m: Measurement) -> bool:
    """Whether the border's print just outside a border sample that kept its colour no
    longer looks as in the calibration photo (`Measurement.print_likeness` below
    `Thresholds.print_likeness`). A pale hand over a pale border of its own colour changes no colour
    sample, but it hides the lines printed there. Flags only: the reading stays."""
    return m.print_likeness is not None and bool(
        (m.print_likeness < settings.print_likeness).any())


def reaches_edge(settings: Thresholds, unknown: np.ndarray, hidden: np.ndarray) -> bool:
    """Whether a hidden cell ((10, 10) mask) is joined to the board's edge, 8-connected,
    through cells with at least `Thresholds.reaching_hidden_p` chance of being hidden
    (`hidden`, (100,); a bridge's end or a cell under one counts too: fingers can be read as
    a bridge)."""
    if not unknown.any():
        return False
    chain = unknown | (hidden >= settings.reaching_hidden_p).reshape(SIZE, SIZE)
    _, labels = cv2.connectedComponents(chain.astype(np.uint8), connectivity=8)
    return bool(np.isin(labels[_EDGE & chain], labels[unknown]).any())


def _large_patches(mask: np.ndarray, least: int) -> np.ndarray:
    """The cells of a (10, 10) mask's 8-connected patches of at least `least` cells."""
    _, labels = cv2.connectedComponents(mask.astype(np.uint8), connectivity=8)
    sizes = np.bincount(labels.ravel())
    sizes[0] = 0  # the background
    result: np.ndarray = sizes[labels] >= least
    return result


def stray_class(settings: Thresholds, lab: np.ndarray, model: ColourModel,
                probs: np.ndarray | None = None) -> int:
    """What a stray cell nothing fits well is read as on a board nothing hides, given its
    Lab and (with the networks) the cell network's probabilities (see
    `Thresholds.stray_seen_p`)."""
    if probs is not None and float(probs[:UNKNOWN].sum()) >= settings.stray_seen_p:
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


def judge(settings: Thresholds, plan: Plan, m: Measurement, model: ColourModel,
          reading: CellReading, codes: np.ndarray, spanned: np.ndarray,
          bridges: Sequence[tuple[Cell, Cell]], probs: np.ndarray | None
          ) -> tuple[bool, np.ndarray]:
    """The frame's verdict: whether it is flagged as hidden, and the (10, 10) cells hidden.

    `codes` are the cells as read with the bridges' ends and spans filled in (`spanned`),
    `reading` the cells' own reading, `probs` the cell network's probabilities (None when
    the thresholds read the cells). Stray cells on a board nothing hides are given their
    likeliest colour in `codes` (changed in place).
    """
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
    # same, but their cells are read as stray cells (see `Thresholds.faint_hidden_p`).
    faint = (occluded and not ring_hit and not too_wide.any() and probs is not None
             and float(probs[patches.ravel(), UNKNOWN].max()) < settings.faint_hidden_p)
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
        edge_hidden(unknown)
        or beside_changed_border(plan, unknown, m.ring_outliers)
        or (probs is not None
            and (reaches_edge(settings, unknown, probs[:, UNKNOWN])
                 or finger_on_border(settings, plan, odd, probs[:, UNKNOWN])))
        or fading_arm(settings, plan, m, odd)
        or tile_apart_on_border(settings, plan, m, model, ring_codes, ring_spanned)
        or print_hidden(settings, m)))
    if occluded:
        # Next to what is hidden, a cell read without conviction is hidden too (a sleeve's
        # edge, a finger's shadow).
        near = with_neighbours(unknown)
        occluded_grid = unknown | (near & (reading.confidence.reshape(SIZE, SIZE) < 0.5))
    else:
        # A stray cell nothing fits well (a glare spot, a shadow) on a board nothing hides:
        # read it, with no confidence, as the colour the cell network finds likeliest, or
        # as the nearest colour when there is no network or it gives the three almost no
        # chance (see `Thresholds.stray_seen_p`).
        occluded_grid = unknown.copy() if flagged_strays else np.zeros_like(unknown)
        for i in np.flatnonzero(codes == UNKNOWN):
            codes[i] = stray_class(settings, m.cells_lab[i], model,
                                   None if probs is None else probs[i])
    return occluded or flagged_strays, occluded_grid
