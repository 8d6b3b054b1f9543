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
from vision.measure import PRINT_REACH, Measurement, Plan
from vision.read_cells import with_neighbours

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
count (see `fading_arm`): two thirds of `Thresholds.odd_levels`, which alone counts. A hand over
a border of its own colour may change one box clearly and the next just under what counts,
and one box alone is not enough. Such a frame is flagged and read as it would be
otherwise, as `edge_hidden` does."""

CLEAR_LEVELS = 30.0
"""Grey levels (twice `Thresholds.odd_levels`) by which a border sample off the bare border makes
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

REACHING_HIDDEN = 0.3
"""The cell network's chance of being hidden at which the cells between a hidden cell and
the board's edge count as a finger reaching it (see `reaches_edge`). A fingertip one cell
in is a stray cell to `edge_hidden`, but the finger over the edge cell beside it gives that
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
    return bool((with_neighbours(unknown).ravel() & edge).any())


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
    `edge_hidden`, it only flags: the reading stays."""
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

PRINT_LIKENESS = 0.35
"""... and `print_hidden` flags the frame when the print's correlation with the photo's
falls below this beside one of them. A pale hand over a pale border may change no border
sample's colour while its fingers over an edge cell read as a tile; the print they hide
correlates far below this with the photo's (0.2 or less), where a border nothing covers
stays above 0.5 in window light, with loose tiles on the table and all."""


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
    now = grey_view(m).reshape(-1)
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
    # same, but their cells are read as stray cells (see `FAINT_HIDDEN`).
    faint = (occluded and not ring_hit and not too_wide.any() and probs is not None
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
        edge_hidden(unknown)
        or beside_changed_border(plan, unknown, m.ring_outliers)
        or (probs is not None
            and (reaches_edge(unknown, probs[:, UNKNOWN])
                 or finger_on_border(plan, odd, probs[:, UNKNOWN])))
        or fading_arm(settings, plan, m, odd)
        or tile_apart_on_border(plan, m, model, ring_codes, ring_spanned)
        or print_hidden(m)))
    if occluded:
        # Next to what is hidden, a cell read without conviction is hidden too (a sleeve's
        # edge, a finger's shadow).
        near = with_neighbours(unknown)
        occluded_grid = unknown | (near & (reading.confidence.reshape(SIZE, SIZE) < 0.5))
    else:
        # A stray cell nothing fits well (a glare spot, a shadow) on a board nothing hides:
        # read it, with no confidence, as the colour the cell network finds likeliest, or
        # as the nearest colour when there is no network or it gives the three almost no
        # chance (see `STRAY_SEEN_P`).
        occluded_grid = unknown.copy() if flagged_strays else np.zeros_like(unknown)
        for i in np.flatnonzero(codes == UNKNOWN):
            codes[i] = stray_class(m.cells_lab[i], model,
                                   None if probs is None else probs[i])
    return occluded or flagged_strays, occluded_grid
