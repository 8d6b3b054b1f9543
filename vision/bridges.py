"""Stage 4: find bridges (straight, diagonal, knight) between tiles of one colour.

A bridge stands on its two end tiles and arches over the cells between them, so seen at an
angle it appears displaced from those cells. For every pair of cells at bridge distance the
plan holds sample boxes along the bridge's 3D path (tile-top height at the ends, arch height
in the middle) projected through the camera pose into the top-down view. A pair scores the
fraction of its middle samples that match the bridges' colour; pairs between two tiles of one
colour over empty cells are accepted best first, each tile carrying at most one bridge end.
The bridges' colour is learned from paths that look like decks: one colour along their
length (a shadow or a tile's side is not), unlike the board and the tiles.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache

import numpy as np

from contracts.calibration import ColourModel, Lab, Thresholds
from vision.cells import Cell, bridge_kind, cells_under
from vision.classify import BRIDGE, DARK, EMPTY, LIGHT, UNKNOWN, CellReading, colour_distance
from vision.features import (
    BoxIndexes,
    SamplingPlan,
    Slopes,
    box_means,
    design_at,
    field_at,
    field_of,
    to_lab,
)
from vision.geometry import SIZE

BRIDGE_OFFSETS = ((0, 2), (2, 0), (2, 2), (2, -2), (1, 2), (2, 1), (2, -1), (1, -2))
"""(files, ranks) from a bridge's one end to its other, one way round: straight, diagonal
and knight's-move bridges."""
_T = np.array([0.36, 0.43, 0.5, 0.57, 0.64])
_HALF = 0.07


@dataclass(frozen=True)
class BridgePlan:
    """Candidate bridges and their sample boxes in the top-down view.

    Bridges differ in height between editions and a camera at an angle sees a higher deck
    further off, so every candidate is sampled along `heights` paths, one per deck height
    tried; a candidate's rows in `boxes` are `pair * heights .. (pair + 1) * heights - 1`.
    """

    pairs: tuple[tuple[Cell, Cell], ...]
    heights: int
    boxes: np.ndarray
    """(pairs * heights * samples, 4) int boxes."""
    xy: np.ndarray
    """(pairs * heights * samples, 2) board coordinates where the samples appear."""
    ends: np.ndarray | None = None
    """(pairs, 2) the two end cells' indices (rank * 10 + file)."""
    under: np.ndarray | None = None
    """(pairs, 2) the indices of the cells passed over (one cell: repeated)."""
    kinds: np.ndarray | None = None
    """(pairs, 3) one-hot straight / diagonal / knight."""
    flanks: np.ndarray | None = None
    """(pairs * heights * samples * 2, 4) boxes beside each path sample, one either side of
    the deck, just past its edges."""
    design: np.ndarray | None = None
    """(pairs * heights * samples, 6) the path samples' `design_at` (for the light field)."""
    flank_design: np.ndarray | None = None
    """(pairs * heights * samples * 2, 6) the same for the flank samples."""
    nearest: np.ndarray | None = None
    """(pairs * heights * samples,) per path sample, the cell sample box (cell * 9 + box)
    nearest to it in the top-down view, -1 when none is near: where the bare board seen
    before under the sample is known."""
    deck_edges: np.ndarray | None = None
    """(pairs * heights * samples * 2, 4) boxes over where a deck's two long edges would
    show beside each path sample (its minus side first, then its plus side)."""
    edge_normals: np.ndarray | None = None
    """(pairs * heights * samples, 2) per path sample, the unit vector in the top-down view
    from its minus edge box to its plus edge box (across the deck)."""
    conflicts: np.ndarray | None = None
    """(pairs, pairs) `pair_conflicts` of its pairs."""
    indexes: BoxIndexes = field(default_factory=lambda: BoxIndexes(), repr=False,
                                compare=False)
    """Its boxes laid out for integral images (`features.box_index`), made once."""


def plan_bridges(settings: Thresholds, plan: SamplingPlan) -> BridgePlan:
    """Sample boxes along every possible bridge's deck, for each deck height tried."""
    pairs: list[tuple[Cell, Cell]] = []
    for f in range(SIZE):
        for r in range(SIZE):
            for df, dr in BRIDGE_OFFSETS:
                g, s = f + df, r + dr
                if 0 <= g < SIZE and 0 <= s < SIZE:
                    pairs.append(((f, r), (g, s)))
    a = np.array([p[0] for p in pairs], np.float64) + 0.5
    b = np.array([p[1] for p in pairs], np.float64) + 0.5
    heights = settings.bridge_height_cells + settings.bridge_height_step * np.arange(
        settings.bridge_heights)
    count = len(heights)
    t = _T[None, None, :, None]
    xy = np.broadcast_to(a[:, None, None, :] * (1 - t) + b[:, None, None, :] * t,
                         (len(pairs), count, len(_T), 2)).reshape(-1, 2)
    z = np.broadcast_to(heights[None, :, None], (len(pairs), count, len(_T))).ravel()
    seen = plan.geometry.raised(xy, z)
    px, margin = settings.cell_px, settings.margin_cells
    boxes, x, y = _path_boxes(seen, px, margin, plan.side)
    across = np.column_stack([-(b - a)[:, 1], (b - a)[:, 0]])
    across /= np.linalg.norm(across, axis=1, keepdims=True)
    # per path sample, one step across the deck to either side (minus side first)
    sides = np.broadcast_to(across[:, None, None, None, :] * np.array([-1.0, 1.0])[
        None, None, None, :, None], (len(pairs), count, len(_T), 2, 2)).reshape(-1, 2)
    twice, z2 = np.repeat(xy, 2, axis=0), np.repeat(z, 2)
    flank_xy = plan.geometry.raised(twice + sides * _FLANK, z2)
    flanks, _, _ = _path_boxes(flank_xy, px, margin, plan.side)
    edge_xy = plan.geometry.raised(twice + sides * _DECK_EDGE, z2)
    deck_edges, ex, ey = _path_boxes(edge_xy, px, margin, plan.side, _DECK_EDGE_HALF)
    normals = np.column_stack([ex[1::2] - ex[0::2], ey[1::2] - ey[0::2]])
    normals /= np.maximum(np.linalg.norm(normals, axis=1, keepdims=True), 1e-9)
    ends, under, kinds = pair_tables(pairs)
    nearest = _nearest_boxes(np.column_stack([x, y]), plan.cell_boxes, NEAR_BOX * px)
    return BridgePlan(tuple(pairs), count, boxes, seen, ends, under, kinds, flanks,
                      design_at(seen), design_at(flank_xy), nearest, deck_edges, normals,
                      pair_conflicts(tuple(pairs)))


_FLANK = 0.3
"""Cells from a deck's middle line to the samples beside it (decks are 0.28-0.4 wide)."""
_DECK_EDGE = 0.17
"""Cells from a deck's middle line to where its long edges show (half its width)."""
_DECK_EDGE_HALF = 0.1
"""Half the side of the boxes over a deck's edges (cells): wide enough for decks 0.28-0.4
wide, put down a little off the line between their tiles' centres."""


def _path_boxes(
    seen: np.ndarray, px: int, margin: float, side: int, half_cells: float = _HALF
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Top-down sample boxes around board points (n, 2), and their centres' x and y."""
    x = (margin + seen[:, 0]) * px
    y = (margin + SIZE - seen[:, 1]) * px
    half = max(1.0, half_cells * px)
    x0 = np.clip(np.round(x - half), 0, side - 1)
    y0 = np.clip(np.round(y - half), 0, side - 1)
    x1 = np.clip(np.round(x + half), x0 + 1, side)
    y1 = np.clip(np.round(y + half), y0 + 1, side)
    return np.column_stack([x0, y0, x1, y1]).astype(np.int64), x, y


NEAR_BOX = 0.3
"""Cells from a path sample to the nearest cell sample box for the board seen there before
to count (sample boxes lie a sixth of a cell apart, over the middle half of each cell)."""


def _nearest_boxes(points: np.ndarray, boxes: np.ndarray, limit: float) -> np.ndarray:
    """(n,) per top-down point (n, 2), the index of the cell sample box ((cells * 9, 4),
    nine per cell, the fifth in the middle) whose centre is nearest, or -1 when that centre is
    further than `limit` pixels. Each cell's boxes lie around its middle one, so the nearest
    box is one of the nearest middle's cell."""
    centres = np.column_stack([(boxes[:, 0] + boxes[:, 2]) / 2.0,
                               (boxes[:, 1] + boxes[:, 3]) / 2.0]).reshape(-1, 9, 2)
    middles = centres[:, 4]
    # |p - c|^2 = |p|^2 - 2 p.c + |c|^2, and |p|^2 does not change which c is nearest (no
    # matrix product: BLAS threads would spin on the other cores)
    dot = points[:, :1] * middles[None, :, 0] + points[:, 1:] * middles[None, :, 1]
    cell = ((middles * middles).sum(axis=1)[None, :] - 2.0 * dot).argmin(axis=1)
    d2 = ((points[:, None, :] - centres[cell]) ** 2).sum(axis=2)  # (n, 9)
    box = d2.argmin(axis=1)
    near = d2[np.arange(len(points)), box] <= limit * limit
    return np.where(near, cell * 9 + box, -1)


_KINDS = {"straight": 0, "diagonal": 1, "knight": 2}


def pair_tables(
    pairs: Sequence[tuple[Cell, Cell]],
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per candidate pair: its end cells' indices, the cells it passes over, its shape."""
    ends = np.zeros((len(pairs), 2), np.int64)
    under = np.zeros((len(pairs), 2), np.int64)
    kinds = np.zeros((len(pairs), 3))
    for j, (a, b) in enumerate(pairs):
        ends[j] = (a[1] * SIZE + a[0], b[1] * SIZE + b[0])
        passed = cells_under(a, b)
        under[j] = [c[1] * SIZE + c[0] for c in (passed[0], passed[-1])]
        kinds[j, _KINDS[str(bridge_kind(a, b))]] = 1.0
    return ends, under, kinds


@cache
def pair_conflicts(pairs: tuple[tuple[Cell, Cell], ...]) -> np.ndarray:
    """(pairs, pairs) bool: whether two candidate bridges cannot both stand, by the rules
    `BridgeLayout` keeps (a tile carries one bridge end, no bridge passes over an end, no
    two bridges cross); a bridge fits among others when it conflicts with none of them.
    The same for every board position: made once."""
    ends, under, _ = pair_tables(pairs)
    xy = np.array(pairs, np.int64)  # (P, 2 ends, 2): file, rank
    a, b = xy[:, 0], xy[:, 1]

    def meets(u: np.ndarray, v: np.ndarray) -> np.ndarray:
        return (u[:, None, :, None] == v[None, :, None, :]).any(axis=(2, 3))

    shared = meets(ends, ends)
    blocked = shared | meets(ends, under) | meets(under, ends)

    def orient(o: np.ndarray, u: np.ndarray, v: np.ndarray) -> np.ndarray:
        """sign((u - o) x (v - o)) for o, u of one bridge (rows) and v of another (columns)."""
        return np.sign((u[:, None, 0] - o[:, None, 0]) * (v[None, :, 1] - o[:, None, 1])
                       - (u[:, None, 1] - o[:, None, 1]) * (v[None, :, 0] - o[:, None, 0]))

    # (a, b) against c and d: rows a bridge, columns another
    o1, o2 = orient(a, b, a), orient(a, b, b)
    crossing = (o1 * o2 < 0) & ((o1 * o2).T < 0) & ~shared
    result: np.ndarray = blocked | crossing
    return result


def plan_conflicts(bridge_plan: BridgePlan) -> np.ndarray:
    """The plan's own `pair_conflicts` table, or made from its pairs when it has none (a
    plan made by hand, in tests): looked up by the pairs, a table costs hashing them all."""
    if bridge_plan.conflicts is not None:
        return bridge_plan.conflicts
    return pair_conflicts(bridge_plan.pairs)


def plan_tables(bridge_plan: BridgePlan) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The plan's own `pair_tables` (ends, cells passed over, kinds), or made from its
    pairs when it has none (a plan made by hand, in tests)."""
    if bridge_plan.ends is None or bridge_plan.under is None or bridge_plan.kinds is None:
        return pair_tables(bridge_plan.pairs)
    return bridge_plan.ends, bridge_plan.under, bridge_plan.kinds


def measure_flanks(
    bridge_plan: BridgePlan, ii: np.ndarray, light_coef: np.ndarray, rows: np.ndarray
) -> np.ndarray | None:
    """Light-normalised Lab beside the path samples of some rows, (len(rows), samples, 2,
    3); None when the plan has no flank samples."""
    if bridge_plan.flanks is None or bridge_plan.flank_design is None:
        return None
    n = len(_T)
    index = (np.asarray(rows, np.int64)[:, None] * (2 * n) + np.arange(2 * n)[None, :]).ravel()
    bgr = box_means(ii, bridge_plan.indexes(ii.shape[1], bridge_plan.flanks).pick(index))
    lab = to_lab(bgr / field_of(light_coef, bridge_plan.flank_design[index]))
    return lab.reshape(len(rows), n, 2, 3)


def measure_deck_edges(
    bridge_plan: BridgePlan, slopes: Slopes, rows: np.ndarray
) -> np.ndarray | None:
    """What a deck's two long edges look like, per path sample of some rows: (len(rows),
    samples, 2 sides, 2), per side (minus, plus) how steeply the grey level rises from
    beside the deck into it (the mean gradient across the edge box, towards the path) and
    how much darker the edge box is than the path sample (a shadow line or the gap under
    the deck's side), both over the local grey level. A deck lighter than the board beside
    it rises at both edges all along its length, a darker one falls; a deck of the board's
    own grey in a lamp's glare still shows an outline or a shadow along one edge; bare
    board shows neither. `slopes` comes from `features.texture`; None when the plan has no
    edge boxes."""
    if bridge_plan.deck_edges is None or bridge_plan.edge_normals is None:
        return None
    n = len(_T)
    sample = (np.asarray(rows, np.int64)[:, None] * n + np.arange(n)[None, :]).ravel()
    index = (sample[:, None] * 2 + np.arange(2)[None, :]).ravel()
    width = slopes.grey.shape[1]
    edge_boxes = bridge_plan.indexes(width, bridge_plan.deck_edges).pick(index)
    slope = np.stack([box_means(slopes.across, edge_boxes), box_means(slopes.down, edge_boxes)],
                     axis=1).reshape(len(sample), 2, 2)
    edge_grey = box_means(slopes.grey, edge_boxes).reshape(len(sample), 2)
    deck = box_means(slopes.grey, bridge_plan.indexes(width, bridge_plan.boxes).pick(sample))
    normal = bridge_plan.edge_normals[sample]
    across = slope[:, :, 0] * normal[:, None, 0] + slope[:, :, 1] * normal[:, None, 1]
    level = np.maximum((edge_grey.sum(axis=1) + deck) / 3.0, 8.0)[:, None]
    across[:, 1] = -across[:, 1]  # the plus side: the normal points out of the deck
    out = np.stack([across / level, (edge_grey - deck[:, None]) / level], axis=2)
    return out.reshape(len(rows), n, 2, 2)


def measure_paths(bridge_plan: BridgePlan, ii: np.ndarray, light_coef: np.ndarray) -> np.ndarray:
    """Light-normalised Lab of every candidate's path samples, (pairs * heights, samples, 3)."""
    bgr = box_means(ii, bridge_plan.indexes(ii.shape[1], bridge_plan.boxes))
    lab = to_lab(bgr / field_at(light_coef, bridge_plan.xy))
    return lab.reshape(len(bridge_plan.pairs) * bridge_plan.heights, len(_T), 3)


def measure_rows(
    bridge_plan: BridgePlan, ii: np.ndarray, light_coef: np.ndarray, rows: np.ndarray
) -> np.ndarray:
    """`measure_paths` for some rows only (pair * heights + height), (len(rows), samples, 3)."""
    n = len(_T)
    index = (np.asarray(rows, np.int64)[:, None] * n + np.arange(n)[None, :]).ravel()
    bgr = box_means(ii, bridge_plan.indexes(ii.shape[1], bridge_plan.boxes).pick(index))
    field = (field_of(light_coef, bridge_plan.design[index]) if bridge_plan.design is not None
             else field_at(light_coef, bridge_plan.xy[index]))
    lab = to_lab(bgr / field)
    return lab.reshape(len(rows), n, 3)


def _spread(paths: np.ndarray) -> np.ndarray:
    centre = paths.mean(axis=1, keepdims=True)
    result: np.ndarray = np.sqrt(((paths - centre) ** 2).sum(axis=2)).max(axis=1)
    return result


def learn_bridge_colour(
    settings: Thresholds,
    bridge_plan: BridgePlan,
    paths: np.ndarray,
    reading: CellReading,
    model: ColourModel,
    end_lab: np.ndarray,
) -> Lab | None:
    """The bridges' colour, from paths that look like decks, or None when there are none.

    A deck-like path is one colour along its length, off the board colour and not a tile
    colour, between two cells showing one tile colour, over no whole tile, and its colour
    shows on both end cells too (a bridge's feet stand on its tiles; a bridge's shadow
    lying between two tiles does not climb onto both). `end_lab` holds each cell's sampled
    colours ((100, k, 3): its sub-boxes and rim boxes). The colour most such pairs agree
    on is taken.
    """
    n = paths.shape[1]
    flat = paths.reshape(-1, 3)
    off_board = (colour_distance(flat, model.empty) > settings.empty_distance).reshape(-1, n)
    spread = _spread(paths)
    ok = off_board.all(axis=1) & (spread <= settings.bridge_max_spread)
    means = paths.mean(axis=1)
    for centre in (model.light, model.dark):
        if centre is not None:
            ok &= colour_distance(means, centre) > 2 * settings.cluster_min_separation
    votes = reading.votes
    best: dict[int, int] = {}  # pair -> its most deck-like row (the height that fits best)
    for i in np.flatnonzero(ok):
        pair = int(i) // bridge_plan.heights
        if pair in best:
            if spread[i] < spread[best[pair]]:
                best[pair] = int(i)
            continue
        a, b = bridge_plan.pairs[pair]
        ends = {_end_colour(reading, a), _end_colour(reading, b)} - {UNKNOWN}
        if len(ends) == 1 and ends <= {LIGHT, DARK} and not any(
            _whole_tile(votes[c[1] * SIZE + c[0]]) for c in cells_under(a, b)
        ):
            best[pair] = int(i)
    rows = [i for i in best.values() if all(
        _shows(end_lab[c[1] * SIZE + c[0]], means[i], settings.match_distance / 2)
        for c in bridge_plan.pairs[i // bridge_plan.heights])]
    if not rows:
        return None
    found = means[sorted(rows)]
    near = np.array([(colour_distance(found, c) <= settings.match_distance / 2).sum()
                     for c in found])
    best_i = int(np.argmax(near))
    best_set = found[colour_distance(found, found[best_i]) <= settings.match_distance / 2]
    centre = np.median(best_set, axis=0)
    return (float(centre[0]), float(centre[1]), float(centre[2]))


def _shows(samples: np.ndarray, colour: np.ndarray, within: float) -> bool:
    """Whether at least two of a cell's sampled colours are near `colour` (a foot)."""
    return int((colour_distance(samples, colour) <= within).sum()) >= 2


def find_bridges(
    settings: Thresholds,
    bridge_plan: BridgePlan,
    paths: np.ndarray,
    reading: CellReading,
    model: ColourModel,
) -> tuple[list[tuple[Cell, Cell]], list[int]]:
    """Bridges read from the frame (pairs of cells, best first) and each one's tile colour.

    A pair scores the fraction of its path samples nearer the bridge colour than any other. An end
    may read UNKNOWN (a bridge's foot hides much of its tile) when the rest of it shows one
    tile colour; a cell under the bridge may read as anything but a whole tile (the deck hides the
    middle of the cell, the board shows at its sides).
    """
    if model.bridge is None:
        return [], []
    votes = reading.votes
    n = paths.shape[1]
    flat = paths.reshape(-1, 3)
    to_bridge = colour_distance(flat, model.bridge)
    match = to_bridge <= settings.match_distance
    for centre in (model.empty, model.light, model.dark):
        if centre is not None:
            match &= to_bridge < colour_distance(flat, centre)
    scores = match.reshape(-1, n).mean(axis=1)
    scores[_spread(paths) > settings.bridge_max_spread] = 0.0
    scores = scores.reshape(-1, bridge_plan.heights).max(axis=1)
    order = np.argsort(-scores, kind="stable")
    layout = BridgeLayout()
    for j in order:
        if float(scores[j]) < settings.bridge_min_score:
            break
        a, b = bridge_plan.pairs[j]
        ends = {_end_colour(reading, a), _end_colour(reading, b)} - {UNKNOWN}
        if len(ends) != 1 or not ends <= {LIGHT, DARK}:
            continue
        if any(_whole_tile(votes[c[1] * SIZE + c[0]]) for c in cells_under(a, b)):
            continue
        if layout.fits(a, b):
            layout.add(a, b, ends.pop())
    return layout.found, layout.colours


class BridgeLayout:
    """The bridges accepted so far (best first) and whether another fits among them.

    Each tile carries at most one bridge end; a bridge end is a tile, so it never lies
    under another bridge, nor does a bridge pass over another's end (collinear overlaps do
    not "cross"); no two bridges cross.
    """

    def __init__(self) -> None:
        self.found: list[tuple[Cell, Cell]] = []
        self.colours: list[int] = []
        self._ends: set[Cell] = set()
        self._spanned: set[Cell] = set()

    def fits(self, a: Cell, b: Cell) -> bool:
        under = set(cells_under(a, b))
        return not ({a, b} & (self._ends | self._spanned) or under & self._ends
                    or any(crosses((a, b), f) for f in self.found))

    def add(self, a: Cell, b: Cell, colour: int) -> None:
        self._ends.update((a, b))
        self._spanned.update(cells_under(a, b))
        self.found.append((a, b))
        self.colours.append(colour)


def _end_colour(reading: CellReading, cell: Cell) -> int:
    """A bridge end's tile colour: as read; or for a cell read otherwise, the one tile colour
    its sub-boxes, or else the rim of its top face, show beside the bridge's foot (a grey
    foot can pass for the board); UNKNOWN when the foot hides it all; EMPTY when it shows
    neither (then there is no bridge)."""
    i = cell[1] * SIZE + cell[0]
    code = int(reading.codes[i])
    if code in (LIGHT, DARK):
        return code
    votes = reading.votes
    light, dark = votes[i][LIGHT], votes[i][DARK]
    least = 1 if code == UNKNOWN else 2
    if light >= least and dark == 0:
        return LIGHT
    if dark >= least and light == 0:
        return DARK
    if light == dark == 0:
        rim = reading.rim_votes[i]
        if rim[LIGHT] >= 3 and rim[DARK] == 0:
            return LIGHT
        if rim[DARK] >= 3 and rim[LIGHT] == 0:
            return DARK
        if code == UNKNOWN and votes[i][BRIDGE] >= 5:
            return UNKNOWN  # the foot hides the whole tile: the other end decides
    return EMPTY


def _whole_tile(votes: np.ndarray) -> bool:
    return bool(votes[EMPTY] == 0 and max(votes[LIGHT], votes[DARK]) >= 7)


def crosses(p: tuple[Cell, Cell], q: tuple[Cell, Cell]) -> bool:
    """Whether two bridges' centre lines cross (touching ends do not count)."""
    (a, b), (c, d) = p, q

    def orient(o: Cell, u: Cell, v: Cell) -> int:
        val = (u[0] - o[0]) * (v[1] - o[1]) - (u[1] - o[1]) * (v[0] - o[0])
        return (val > 0) - (val < 0)

    if {a, b} & {c, d}:
        return False
    o1, o2, o3, o4 = orient(a, b, c), orient(a, b, d), orient(c, d, a), orient(c, d, b)
    return o1 * o2 < 0 and o3 * o4 < 0
