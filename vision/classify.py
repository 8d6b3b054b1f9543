"""Stage 3b: classify each cell as empty, light tile, dark tile, or unknown (something else).

Colours are compared in Lab after light normalisation (see `vision.features`). The colour model is
learned, never hard-coded: `learn_colours` clusters the cells of one image (k-means), finds the
bare board among the clusters and names the tile colours; `blend_colours` lets a kept
model follow slow light changes.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from contracts.calibration import ColourModel, Lab, Thresholds

SIZE = 10

EMPTY, LIGHT, DARK, UNKNOWN = 0, 1, 2, 3
BRIDGE = 3  # the fourth colour a sub-box may vote for
_WEIGHTS = np.array([1.0, 1.0, 1.0])


@dataclass(frozen=True)
class CellReading:
    """Per cell (index rank * 10 + file): class code, confidence, sub-box votes (n, 4) for
    board, light, dark, bridge, and the same votes of the 8 rim boxes (zeros if unmeasured)."""

    codes: np.ndarray
    confidence: np.ndarray
    votes: np.ndarray
    rim_votes: np.ndarray


def colour_distance(lab: np.ndarray, centre: Lab | np.ndarray) -> np.ndarray:
    """Lab distance of colours (n, 3) to one centre."""
    diff = (np.asarray(lab, np.float64) - np.asarray(centre, np.float64)) * _WEIGHTS
    result: np.ndarray = np.sqrt(squared_lengths(diff))
    return result


def squared_lengths(diff: np.ndarray) -> np.ndarray:
    """(...) the squared length of each (..., 3) float64 vector: numpy's
    `einsum("...k,...k->...", diff, diff)` to the bit, from the three columns (its loop
    over three float64 items side by side adds the first and third squares, then the
    second: so here), in a third of the time einsum takes to set itself up for so short a
    sum. Other arrays go to einsum itself."""
    if diff.dtype != np.float64 or diff.shape[-1] != 3 or diff.strides[-1] != 8:
        return np.asarray(np.einsum("...k,...k->...", diff, diff))
    x, y, z = diff[..., 0], diff[..., 1], diff[..., 2]
    result: np.ndarray = x * x + z * z
    result += y * y
    return result


def median_along(values: np.ndarray, axis: int) -> np.ndarray:
    """`np.median(values, axis=axis)` for values without NaN: the same numbers. Along an
    odd count it is the middle value of a partial sort, as numpy's own; along an even
    count the mean of the two middle values, summed and halved as numpy's mean of two
    does. Taken directly, without np.median's checks and its mean, it costs a third less,
    which shows at the twenty-odd medians of a few sample boxes a frame takes."""
    count = values.shape[axis]
    if count == 0:
        empty: np.ndarray = np.median(values, axis=axis)
        return empty
    middle = count // 2
    if count % 2 == 0:
        part = np.partition(values, (middle - 1, middle), axis=axis)
        even: np.ndarray = (np.take(part, middle - 1, axis=axis)
                            + np.take(part, middle, axis=axis)) / 2
        return even
    result: np.ndarray = np.take(np.partition(values, middle, axis=axis), middle, axis=axis)
    return result


def row_sum(x: np.ndarray) -> np.ndarray:
    """`x.sum(axis=-1)` for a last axis of 2 to 7 items, bit for bit (numpy adds so few in
    order), added a column at a time: numpy's reductions along such short rows take
    several times as long."""
    if not 2 <= x.shape[-1] < 8:
        return np.asarray(x.sum(axis=-1))  # numpy adds 8 or more in another order
    if x.dtype == np.bool_:
        x = x.astype(np.int_)  # counted, as numpy counts them
    total: np.ndarray = x[..., 0] + x[..., 1]
    for i in range(2, x.shape[-1]):
        total += x[..., i]
    return total


def row_mean(x: np.ndarray) -> np.ndarray:
    """`x.mean(axis=-1)` for a last axis of 2 to 7 items, bit for bit (see `row_sum`)."""
    result: np.ndarray = row_sum(x) / x.shape[-1]
    return result


def row_max(x: np.ndarray) -> np.ndarray:
    """`x.max(axis=-1)`, a column at a time (see `row_sum`)."""
    return _row_fold(np.maximum, x)


def row_min(x: np.ndarray) -> np.ndarray:
    """`x.min(axis=-1)`, a column at a time (see `row_sum`)."""
    return _row_fold(np.minimum, x)


def _row_fold(op: np.ufunc, x: np.ndarray) -> np.ndarray:
    if x.shape[-1] < 2:
        return np.asarray(op.reduce(x, axis=-1))
    result: np.ndarray = op(x[..., 0], x[..., 1])
    for i in range(2, x.shape[-1]):
        op(result, x[..., i], out=result)
    return result


def uniform_cells(settings: Thresholds, sub_lab: np.ndarray,
                  cells: np.ndarray | None = None) -> np.ndarray:
    """Cells whose 3 x 3 sub-boxes agree (no bridge, shadow edge or hand across them).
    `cells`: their medians (`median_along(sub_lab, 1)`), when worked out already."""
    med = (median_along(sub_lab, 1) if cells is None else cells)[:, None, :]
    # Along the short rows a column at a time (see `row_sum`).
    spread = np.sqrt(row_sum((sub_lab - med) ** 2))
    result: np.ndarray = row_max(spread) <= settings.uniform_spread
    return result


def learn_colours(
    settings: Thresholds, sub_lab: np.ndarray, ring: Lab, hint: ColourModel | None = None,
    background: np.ndarray | None = None, shade: Shade | None = None,
    cells: np.ndarray | None = None,
) -> ColourModel:
    """A colour model from one image's cells ((100, 9, 3) Lab of their sub-boxes; `cells`:
    their medians, `median_along(sub_lab, 1)`, when worked out already).

    Only uniform cells are clustered (k-means, at most three clusters). The bare board is
    the cluster nearest the hint's board colour when there is a hint, else the cluster
    whose cells form the largest connected area. Tiles lie in groups of at most four, so
    a cluster with a group larger than `tile_max_group` is not tiles (the board in other
    light, a sleeve). Tile clusters take the name of the nearest hint colour; without one,
    of two the lighter is light, and a single one is light when lighter than the board.
    Colours this image does not show are kept from the hint. The hint's board colour is
    compared as lighter or darker by as much as the border (`ring`) is than the hint's:
    when the whole frame is darker than the calibration photo, the light tiles can lie
    nearer to the board's old colour than the board itself.

    A cluster that looks like the board in a shadow can hold a few tiles of a colour of
    their own (four red tiles among sixteen deep shadows on a grey board): their colour is
    named too (see `_colour_of_its_own`).

    Given the bare board as seen before (`background`, (100, 9, 3) Lab, NaN where not known:
    tracking), cells that look like it in a shadow (`bare_in_shadow`) are left out, and when
    no cluster matches the hint's board colour, that colour is kept: a window's shadows over
    most of the board would otherwise make a cluster of their own, taken for a tile colour.
    """
    shaded = bare_in_shadow(settings, sub_lab, background, shade)
    cells = median_along(sub_lab, 1) if cells is None else cells
    uniform = uniform_cells(settings, sub_lab, cells) & ~shaded
    lab = cells[uniform] if uniform.sum() >= 10 else cells
    for _ in range(2):
        clusters = _clusters(lab, settings)
        clusters.sort(key=lambda c: -c[1])
        centres = [c[0] for c in clusters]
        dists = np.stack([colour_distance(cells, c) for c in centres], axis=1)
        nearest = np.argmin(dists, axis=1)
        pure = (dists.min(axis=1) <= settings.uniform_spread) & ~shaded
        spans = [_largest_group((nearest == i) & pure) for i in range(len(clusters))]
        board = max(range(len(clusters)), key=lambda i: (spans[i], clusters[i][1]))
        # A wide cluster that is not the board (a sleeve, a hand) takes a place tiles need:
        # leave its cells out and cluster again.
        wide = [i for i in range(len(clusters)) if i != board
                and spans[i] > settings.tile_max_group]
        if not wide:
            break
        owner = np.argmin(np.stack([colour_distance(lab, c) for c in centres], axis=1), axis=1)
        rest = ~np.isin(owner, wide)
        if rest.sum() < 10:
            break
        lab = lab[rest]
    empty = centres[board]
    if hint is not None:
        # The hint's board as it would look in this frame's exposure: as much lighter or
        # darker as the border is (a camera's exposure can change with what else it sees).
        was = (hint.empty[0] + ring[0] - hint.ring[0], hint.empty[1], hint.empty[2])
        gaps = [float(colour_distance(np.array([c]), was)[0]) for c in centres]
        if min(gaps) <= settings.match_distance:
            board = int(np.argmin(gaps))
            empty = centres[board]
            if _unlike_background(settings, cells, (nearest == board) & pure, background):
                # Tracking: a cluster unlike the bare board seen at its cells, where other
                # cells still look as the bare board did (so the light has not changed),
                # is tiles (white tiles on a pale board, on a board so full that no bare
                # cell is left uniform), not the board.
                # Its cells need not lie in groups as small as tiles do: the lit board
                # next to them may join them.
                spans[board] = 0
                board, empty = -1, hint.empty
        elif known_background(background) is not None:
            # Tracking, with the board's colour seen before: a board mostly in shadow (left
            # out above) may show too little of its lit colour to make a cluster; keep it.
            board, empty = -1, hint.empty
    chosen = [i for i in range(len(centres)) if i != board and spans[i] <= settings.tile_max_group]
    tiles = [centres[i] for i in chosen]
    in_shadow = _shadow_like(settings, np.array(tiles).reshape(-1, 3), empty)
    shadows = [i for i, s in zip(chosen, in_shadow, strict=True) if s]
    if shadows:
        # A tile colour can hide in a cluster of the board's shadows (see
        # `_colour_of_its_own`): it is one more to name.
        owner = np.argmin(np.stack([colour_distance(lab, c) for c in centres], axis=1), axis=1)
        for i in shadows:
            own = _colour_of_its_own(settings, lab[owner == i], empty)
            if own is not None:
                tiles.append(own)
    light, dark = _name_tiles(settings, tiles, empty, hint)
    if hint is not None:
        light = light if light is not None else hint.light
        dark = dark if dark is not None else hint.dark
    return ColourModel(empty=empty, ring=ring, light=light, dark=dark,
                       bridge=hint.bridge if hint is not None else None)


@dataclass(frozen=True)
class Shade:
    """`shade_free_change` of a frame's sample boxes (`sub_lab`) from the bare board seen
    there before (`background`), at the cells where that is known (`known`): worked out
    once a frame for the colour model and the cell features alike (see `background_shade`)."""

    sub_lab: np.ndarray
    background: np.ndarray
    known: np.ndarray
    change: np.ndarray


def make_shade(sub_lab: np.ndarray, background: np.ndarray | None) -> Shade | None:
    """The `Shade` of these sample boxes, or None where the bare board is known nowhere."""
    known = known_background(background)
    if background is None or known is None:
        return None
    return Shade(sub_lab, background, known,
                 shade_free_change(sub_lab[known], background[known]))


def background_shade(sub_lab: np.ndarray, background: np.ndarray | None,
                     made: Shade | None = None) -> Shade | None:
    """`make_shade`'s, or `made` when it was made of these very arrays."""
    if made is not None and made.sub_lab is sub_lab and made.background is background:
        return made
    return make_shade(sub_lab, background)


def bare_in_shadow(settings: Thresholds, sub_lab: np.ndarray, background: np.ndarray | None,
                   made: Shade | None = None) -> np.ndarray:
    """(100,) cells that look like the bare board seen there before (`background`, Lab per
    sample box, NaN where unknown) in a shadow: 0.2 to 0.85 times as light, with the same
    shade-free colour (a shadow scales a colour's channels alike). `made`: see
    `background_shade`."""
    out = np.zeros(len(sub_lab), bool)
    shade = background_shade(sub_lab, background, made)
    if shade is None:
        return out
    known, change = shade.known, shade.change
    then = shade.background[known]
    ratio = np.exp(change[:, 2])
    light_then = then[..., 0] + 16.0
    board = median_along(np.hypot(then[..., 1] / light_then, then[..., 2] / light_then), 1)
    same_tone = np.hypot(change[:, 0], change[:, 1]) < settings.shadow_tone
    out[known] = same_tone & _shadow_depth(ratio) & (board >= settings.shadow_board_tone)
    return out


def _unlike_background(settings: Thresholds, cells: np.ndarray, members: np.ndarray,
                       background: np.ndarray | None) -> bool:
    """Whether the cells `members` ((100,) mask; `cells`: (100, 3) Lab) are, by their median,
    further than `board_unlike` from the bare board seen there before (`background`) while
    other cells look as it did; False where it is known at none of them."""
    if background is None:
        return False
    diff = (cells - background.mean(axis=1)) * _WEIGHTS
    gap = np.sqrt(squared_lengths(diff))  # NaN where not known
    mine = gap[members]
    mine = mine[~np.isnan(mine)]
    if not len(mine) or float(median_along(mine, 0)) <= settings.board_unlike:
        return False
    return int((gap[~members] <= settings.board_like).sum()) >= settings.board_like_cells


def known_background(background: np.ndarray | None) -> np.ndarray | None:
    """(100,) the cells where the bare board seen before is known (no NaN in any of its
    sample boxes), or None when it is known nowhere."""
    if background is None:
        return None
    known: np.ndarray = ~np.isnan(background).any(axis=(1, 2))
    return known if known.any() else None


def shade_free_change(now: np.ndarray, then: np.ndarray) -> np.ndarray:
    """(n, 3) per cell, the median over its sample boxes ((n, boxes, 3) Lab each) of how
    what a shadow does not change has changed: a and b over L + 16, and the log of the
    lightness ratio (L + 16)."""
    out: np.ndarray = median_along(_shade_free(now, then), 1)  # one median for all three
    return out


def _shade_free(now: np.ndarray, then: np.ndarray | Lab) -> np.ndarray:
    """(..., 3) per Lab colour of `now` against `then` (broadcast), what a shadow does not
    change: the differences of a and b over L + 16, and the log of the lightness ratio."""
    then = np.asarray(then, np.float64)
    light_now, light_then = now[..., 0] + 16.0, then[..., 0] + 16.0
    result: np.ndarray = np.stack([
        now[..., 1] / light_now - then[..., 1] / light_then,
        now[..., 2] / light_now - then[..., 2] / light_then,
        np.log(np.maximum(light_now, 1e-3) / np.maximum(light_then, 1e-3)),
    ], axis=-1)
    return result


def _shadow_like(settings: Thresholds, lab: np.ndarray, board: Lab) -> np.ndarray:
    """(n,) colours that could be the board's colour (`board`) in a shadow: 0.2 to 0.85
    times as light (L + 16), with its shade-free colour (see `shadow_tone`)."""
    ratio = (lab[:, 0] + 16.0) / (board[0] + 16.0)
    result: np.ndarray = (_tone_gap(lab, board) < settings.shadow_tone) & _shadow_depth(ratio)
    return result


def _shadow_depth(ratio: np.ndarray) -> np.ndarray:
    """Whether lightness ratios (L + 16, shadowed over lit) are a shadow's: 0.2 to 0.85."""
    result: np.ndarray = (ratio > 0.2) & (ratio < 0.85)
    return result


def _tone_gap(lab: np.ndarray, board: Lab) -> np.ndarray:
    """(n,) how far colours' shade-free colour (a and b over L + 16) lies from `board`'s."""
    change = _shade_free(lab, board)
    result: np.ndarray = np.hypot(change[:, 0], change[:, 1])
    return result


def _colour_of_its_own(settings: Thresholds, members: np.ndarray, board: Lab) -> Lab | None:
    """A tile colour hidden in a cluster whose median looks like the board in a shadow
    (`members`, (n, 3) Lab): the median of its members that do not, when at least two agree
    on a colour whose shade-free colour lies further from the board's than `tile_tone` (no
    shadow's tint, no bridge's grey comes so far). None when there is none."""
    rest = members[~_shadow_like(settings, members, board)]
    if len(rest) < 2:
        return None
    mid = median_along(rest, 0)
    if (float(colour_distance(rest, mid).max()) > settings.uniform_spread
            or float(_tone_gap(mid[None, :], board)[0]) <= settings.tile_tone):
        return None
    return (float(mid[0]), float(mid[1]), float(mid[2]))


def _name_tiles(
    settings: Thresholds, tiles: list[Lab], empty: Lab, hint: ColourModel | None
) -> tuple[Lab | None, Lab | None]:
    """Which tile cluster is light and which dark.

    With a hint, each cluster takes the name of the nearest hint colour (when near enough);
    a cluster like neither takes the name still free if its lightness fits (a dark tile
    colour darker than the light one). Without a hint, of two the lighter is light, and a
    single one is light when lighter than the board.

    A colour like the board's in a shadow (`_shadow_like`) is never light, and without a
    hint it is dark only when no other cluster is: under a low window, the tiles' shadows
    on a pale board would be taken for light tiles when no light tile shows, and for dark
    ones beside red tiles a little darker than they. (A black tile on a grey board looks like the
    board in a shadow too: it is still dark.)
    """
    known: dict[str, Lab] = {}
    if hint is not None:
        known = {n: c for n, c in (("light", hint.light), ("dark", hint.dark)) if c is not None}
    shaded = (_shadow_like(settings, np.array(tiles, np.float64), empty) if tiles
              else np.zeros(0, bool))
    if not known:
        # The board's colour in a shadow (or a black tile on a grey board: the two look
        # alike) is no light tile, and the dark one only when no other colour can be.
        lit = [c for c, s in zip(tiles, shaded, strict=True) if not s]
        ordered = sorted(lit, key=lambda c: -c[0])
        light: Lab | None = None
        dark: Lab | None = None
        if len(ordered) >= 2:
            light, dark = ordered[0], ordered[1]
        elif len(ordered) == 1:
            if ordered[0][0] > empty[0] + settings.light_vs_board_lightness:
                light = ordered[0]
            else:
                dark = ordered[0]
        if dark is None and shaded.any():
            dark = min((c for c in tiles if c not in lit), key=lambda c: c[0])
        return light, dark
    named: dict[str, Lab] = {}
    pairs = sorted(
        ((float(colour_distance(np.array([c]), ref)[0]), name, i)
         for i, c in enumerate(tiles) for name, ref in known.items()),
    )
    used: set[int] = set()
    for dist, name, i in pairs:
        if dist <= 2 * settings.match_distance and name not in named and i not in used:
            named[name] = tiles[i]
            used.add(i)
    for i, centre in enumerate(tiles):
        if i in used:
            continue
        light_ref = named.get("light", known.get("light"))
        dark_ref = named.get("dark", known.get("dark"))
        if "dark" not in named and light_ref is not None and centre[0] < light_ref[0]:
            named["dark"] = centre
            used.add(i)
        elif ("light" not in named and dark_ref is not None and centre[0] > dark_ref[0]
              and not shaded[i]):
            named["light"] = centre
            used.add(i)
    return named.get("light"), named.get("dark")


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
        centre = median_along(pts, 0) / _WEIGHTS
        out.append(((float(centre[0]), float(centre[1]), float(centre[2])), len(pts)))
    return out


def _apart(a: np.ndarray, b: np.ndarray, settings: Thresholds) -> bool:
    # numpy's mean, norm and variance worked out as they work them out, without the checks
    # and dispatch that cost more than the sums of a few dozen points.
    diff = np.add.reduce(b, axis=0) / len(b) - np.add.reduce(a, axis=0) / len(a)
    dist = float(np.sqrt(diff.dot(diff)))
    if dist < settings.cluster_min_separation:
        return False
    u = diff / dist
    spread = np.sqrt((_variance(a @ u) + _variance(b @ u)) / 2)
    return dist > settings.cluster_separation_sigmas * float(spread)


def _variance(values: np.ndarray) -> np.ndarray:
    """`np.var` of a 1-D array, its numbers to the bit."""
    off = values - np.add.reduce(values) / len(values)
    result: np.ndarray = np.add.reduce(off * off) / len(values)
    return result


def classify_cells(
    settings: Thresholds, sub_lab: np.ndarray, model: ColourModel, rim_lab: np.ndarray | None = None
) -> CellReading:
    """Per cell, a vote of its 3 x 3 sub-boxes (sub_lab: (100, 9, 3)) among the colour centres.

    A sub-box votes for the nearest centre (board, light, dark, bridge) within
    `match_distance`, or for nothing. A cell is a tile when at least `tile_min_votes`
    sub-boxes vote for that tile colour, or a few do and the rest is bridge (a bridge's
    foot rests on it); empty when at least `empty_min_votes` vote for the board, or a few
    do and the rest is bridge (a deck passes over it); UNKNOWN otherwise (a hand, a sleeve,
    something the model does not know). The rim boxes (rim_lab: (100, 8, 3)) vote the same
    way; they only serve to tell the colour of a tile a bridge's foot hides.
    """
    n, k, _ = sub_lab.shape
    votes = _votes(settings, sub_lab, model)
    rim_votes = _votes(settings, rim_lab, model) if rim_lab is not None else np.zeros((n, 4))
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
    return CellReading(codes, conf, votes, rim_votes)


def _votes(settings: Thresholds, lab: np.ndarray, model: ColourModel) -> np.ndarray:
    n, k, _ = lab.shape
    flat = lab.reshape(-1, 3)
    dists = np.full((len(flat), 4), np.inf)
    for i, centre in enumerate((model.empty, model.light, model.dark, model.bridge)):
        if centre is not None:
            dists[:, i] = colour_distance(flat, centre)
    nearest = np.argmin(dists, axis=1)
    close = dists[np.arange(len(flat)), nearest] <= settings.match_distance
    # Counted in one go: the cell's number and its nearest class, 4 where none is close.
    which = np.where(close, nearest, 4) + np.repeat(np.arange(n) * 5, k)
    votes: np.ndarray = np.bincount(which, minlength=n * 5).reshape(n, 5)[:, :4].astype(
        np.float64)
    return votes


def blend_colours(settings: Thresholds, old: ColourModel, new: ColourModel) -> ColourModel:
    """Move the old model `adapt_rate` of the way toward the new; colours new to it are taken."""
    rate = settings.adapt_rate

    def mix(a: Lab | None, b: Lab | None) -> Lab | None:
        if a is None or b is None:
            return b if a is None else a
        m = (1 - rate) * np.asarray(a) + rate * np.asarray(b)
        return (float(m[0]), float(m[1]), float(m[2]))

    empty = mix(old.empty, new.empty)
    assert empty is not None
    return ColourModel(
        empty=empty, ring=new.ring, light=mix(old.light, new.light),
        dark=mix(old.dark, new.dark), bridge=mix(old.bridge, new.bridge),
    )
