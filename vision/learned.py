"""Stage 3c: learned classifiers for cells and bridges, on top of the learned colours.

Hand-set thresholds read a tile under a bridge's foot, a tile in a window bar's shadow or a
bridge as dark as the board poorly. Two small neural networks (one hidden layer, plain
numpy) do better: one says for each cell empty / light / dark / hidden, the other says for
each candidate pair of cells whether a bridge joins them.

They never see absolute colours. Every feature is measured against the colours learned
from the frame itself (`vision.classify`): a sample's Lab difference from the bare board,
its distance to the light and the dark tiles' colours, how much its cell's sub-boxes agree.
So a new edition's colours are learned as before; the networks only learn what the
*shapes* of those differences mean (a foot across a tile, a deck over a cell, a shadow).

They are trained on generated scenes (`python -m lab.train`, seeds apart from those
`ponte eval vision` reads) and ship as `vision/models/*.npz`. Without the files the
pipeline falls back to the thresholds alone.

The environment variable `PONTE_MODELS`, when set to a folder, stands for `vision/models/`
for every model file (`MODELS`, read once at import): that is how the lab measures
networks trained elsewhere (on another scene source, say) without overwriting the shipped
ones. A file missing from that folder is missing: the pipeline reads without that network,
as it does when a shipped file is missing, and never falls back to the shipped one.
"""

from __future__ import annotations

import os
import threading
import warnings
import zipfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import BinaryIO, Protocol, TypeVar

import numpy as np
from threadpoolctl import LibController, ThreadpoolController

from contracts.calibration import ColourModel, Thresholds
from vision.bridges import BridgePlan, plan_tables
from vision.classify import (
    Shade,
    background_shade,
    colour_distance,
    known_background,
    median_along,
    row_max,
    row_mean,
    row_min,
    row_sum,
    shade_free_change,
    squared_lengths,
)

SIZE = 10
SHIPPED_MODELS = Path(__file__).with_name("models")
"""Where the shipped networks' weights are."""
MODELS_VARIABLE = "PONTE_MODELS"


def models_folder(environ: Mapping[str, str]) -> Path:
    """The folder the networks are loaded from: `PONTE_MODELS` when it is set (made
    absolute), else `SHIPPED_MODELS`."""
    folder = environ.get(MODELS_VARIABLE, "")
    return Path(folder).expanduser().resolve() if folder else SHIPPED_MODELS


MODELS = models_folder(os.environ)
"""The folder every model file is loaded from (see the module's docstring)."""
CELL_MODEL = MODELS / "cells.npz"
SCRATCH_CELL_MODEL = MODELS / "cells-scratch.npz"
"""The cell network for frames read from scratch, with no bare board known (`ponte read`
without a calibration). `CELL_MODEL`, trained with more scenes of the hard setups, reads
calibrated frames better but frames read from scratch worse than this one, so each
reads the frames it does best."""
BRIDGE_MODEL = MODELS / "bridges.npz"

CELL_CLASSES = 4  # empty, light, dark, hidden


class Measured(Protocol):
    """What the cell network reads of a frame (`vision.measure.Measurement` has it)."""

    sub_lab: np.ndarray
    rim_lab: np.ndarray
    texture: np.ndarray
    edges: np.ndarray
    background: np.ndarray | None


@dataclass(frozen=True)
class Network:
    """A one-hidden-layer network with standardised inputs and softmax (or sigmoid) output."""

    mean: np.ndarray
    scale: np.ndarray
    w1: np.ndarray
    b1: np.ndarray
    w2: np.ndarray
    b2: np.ndarray

    folded_w1: np.ndarray = field(init=False, repr=False, compare=False)
    folded_b1: np.ndarray = field(init=False, repr=False, compare=False)
    """The hidden layer with the standardisation folded in: it reads the raw inputs.
    Standardising them apart costs as much as the layer's product (the inputs' means are
    at most a few of their scales, so nothing is lost to rounding)."""

    def __post_init__(self) -> None:
        # Inference in float32: the products are small and the precision is plenty.
        w1 = np.asarray(self.w1, np.float64)
        object.__setattr__(self, "folded_w1", (w1 / self.scale[:, None]).astype(np.float32))
        object.__setattr__(self, "folded_b1", (np.asarray(self.b1, np.float64)
                                               - (self.mean / self.scale) @ w1).astype(np.float32))
        for name in ("w1", "b1", "w2", "b2"):
            object.__setattr__(self, name, np.asarray(getattr(self, name), np.float32))

    def scores(self, x: np.ndarray) -> np.ndarray:
        """Raw output scores (n, outputs)."""
        x32 = x.astype(np.float32)
        with one_blas_thread():
            h = np.maximum(x32 @ self.folded_w1 + self.folded_b1, 0.0)
            result: np.ndarray = (h @ self.w2 + self.b2).astype(np.float64)
        return result

    def proba(self, x: np.ndarray) -> np.ndarray:
        """Class probabilities (softmax over outputs; one output: sigmoid)."""
        s = self.scores(x)
        if s.shape[1] == 1:
            out: np.ndarray = 1.0 / (1.0 + np.exp(-np.clip(s[:, 0], -40, 40)))
            return out
        s = s - s.max(axis=1, keepdims=True)
        e = np.exp(s)
        result: np.ndarray = e / e.sum(axis=1, keepdims=True)
        return result

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(path, mean=self.mean, scale=self.scale, w1=self.w1, b1=self.b1,
                            w2=self.w2, b2=self.b2)

    @classmethod
    def load(cls, path: Path | BinaryIO) -> Network:
        with np.load(path) as data:
            return cls(*(np.asarray(data[k], np.float64)
                         for k in ("mean", "scale", "w1", "b1", "w2", "b2")))


def merge_networks(nets: Sequence[Network]) -> Network:
    """One network that gives the mean of these networks' output scores (trained on the
    same inputs, so with the same standardisation): their hidden layers side by side."""
    first = nets[0]
    if any(n.mean.shape != first.mean.shape or not np.allclose(n.mean, first.mean)
           or not np.allclose(n.scale, first.scale) for n in nets[1:]):
        raise ValueError("networks to merge must share their inputs' standardisation")
    k = len(nets)
    return Network(first.mean, first.scale,
                   np.concatenate([n.w1 for n in nets], axis=1).astype(np.float64),
                   np.concatenate([n.b1 for n in nets]).astype(np.float64),
                   np.concatenate([n.w2 for n in nets], axis=0).astype(np.float64) / k,
                   (sum(n.b2.astype(np.float64) for n in nets) / k))


@cache
def _blas() -> ThreadpoolController:
    return ThreadpoolController()


@cache
def _blas_libraries() -> tuple[LibController, ...]:
    """The BLAS libraries loaded (threadpoolctl's controllers of them)."""
    return tuple(_blas().select(user_api="blas").lib_controllers)


_held = threading.local()


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """A context in which BLAS runs on one thread. The networks' products are small:
    handing them to several BLAS threads costs more than it saves, and much more when the
    other core is busy (the live loop's other work). Inside another such context (the
    reader holds one for a whole frame) it costs nothing: setting the limit does cost a
    little, several times a frame."""
    if getattr(_held, "limited", False):  # the outer context sets and lifts the limit
        yield
        return
    # Each library's limit set and put back directly: `ThreadpoolController.limit` first
    # gathers every library's information, which costs several times as much.
    libraries = _blas_libraries()
    before = [library.get_num_threads() for library in libraries]
    for library, threads in zip(libraries, before, strict=True):
        if threads != 1:
            library.set_num_threads(1)
    _held.limited = True
    try:
        yield
    finally:
        _held.limited = False
        for library, threads in zip(libraries, before, strict=True):
            if threads != 1:
                library.set_num_threads(threads)


T = TypeVar("T")


def model_file(load: Callable[[BinaryIO], T], path: Path) -> T | None:
    """`load` of the file at `path`, or None when it is missing or unreadable. A model file that is
    there but unreadable (cut short, damaged, of another format) is a broken installation:
    that gets a warning, and the pipeline reads without it."""
    if not path.exists():
        return None
    try:
        with path.open("rb") as stream:  # closed whatever numpy makes of it
            return load(stream)
    except (OSError, KeyError, ValueError, EOFError, zipfile.BadZipFile) as err:
        remedy = ("Reinstalling brings the shipped model files back." if
                   path.parent == SHIPPED_MODELS else
                   "Write it again, or unset PONTE_MODELS to read the shipped networks.")
        warnings.warn(f"{path} is unreadable ({err}); reading without it. {remedy}",
                      RuntimeWarning, stacklevel=2)
        return None


@cache
def _load(path: Path) -> Network | None:
    return model_file(Network.load, path)


def cell_network(*, scratch: bool = False) -> Network | None:
    """The shipped cell classifier, or None when it is missing or unreadable. With
    `scratch`, the one for frames with no bare board known (`SCRATCH_CELL_MODEL`), when it
    is shipped and reads the same inputs."""
    net = _load(CELL_MODEL)
    if scratch:
        other = _load(SCRATCH_CELL_MODEL)
        if other is not None and (net is None or other.mean.shape == net.mean.shape):
            return other
    return net


def bridge_network() -> Network | None:
    """The shipped bridge classifier, or None when it is missing or unreadable."""
    return _load(BRIDGE_MODEL)


def against_colours(lab: np.ndarray, model: ColourModel) -> np.ndarray:
    """Per colour sample (..., 3), where it lies between the learned colours -> (..., 16);
    see `against_colours_rows`."""
    result: np.ndarray = against_colours_rows(lab, model).T.astype(np.float64).reshape(
        *lab.shape[:-1], AGAINST)
    return result


def against_colours_rows(lab: np.ndarray, model: ColourModel) -> np.ndarray:
    """(AGAINST, n) float32, per colour sample ((..., 3), n in all), where it lies between
    the learned colours.

    Its Lab difference from the board's colour; then
    distances to the board, light and dark colours, each measured in units of how far
    that tile colour lies from the board (so a cream tile on a beige board and a white
    tile on a blue board give the same numbers), the share of the way from the board to
    each tile colour, and the lightness likewise. A tile colour not learned yet counts as
    far away. Last, what a shadow does not change: a and b over L + 16, against the board's
    and each tile colour's (a shadow scales a colour's channels alike, which scales L + 16,
    a and b alike through Lab's cube root: a shadowed blue board keeps them, a black tile
    does not), and the lightness as a ratio to the board's.
    """
    # Channel by channel (rows of a (3, n) array): much quicker than along short rows.
    lum, a, b = np.ascontiguousarray(lab.reshape(-1, 3).T, dtype=np.float32)
    n = len(lum)
    el, ea, eb = (float(v) for v in model.empty)
    out = np.empty((AGAINST, n), np.float32)
    # Each row written in place (`out=`): the same numbers without a copy of each.
    dl_e, da_e, db_e = lum - el, a - ea, b - eb
    np.divide(dl_e, 30.0, out=out[0])
    np.divide(da_e, 30.0, out=out[1])
    np.divide(db_e, 30.0, out=out[2])
    d_e = np.sqrt(dl_e * dl_e + da_e * da_e + db_e * db_e)
    lightness = lum + 16.0
    tone_a, tone_b = a / lightness, b / lightness
    np.subtract(tone_a, ea / (el + 16.0), out=out[11])
    np.subtract(tone_b, eb / (el + 16.0), out=out[12])
    np.log(np.maximum(lightness, 1e-3) / (el + 16.0), out=out[13])
    learned = []
    for k, centre in enumerate((model.light, model.dark)):
        if centre is None:
            row = 3 + 4 * k
            out[row:row + 2] = 3.0
            out[row + 2:row + 4] = 0.0
            out[14 + k] = 1.0
        else:
            learned.append((k, *(float(v) for v in centre)))
    if not learned:
        return out
    # Both tile colours at once, as rows of (colours, n) arrays: the same numbers as one
    # colour at a time (each a colour's numbers, as numpy casts them, in a column).
    spans, steps, tones_a, tones_b = [], [], [], []
    for _, tl, ta, tb in learned:
        spans.append(max(float(np.sqrt((tl - el) ** 2 + (ta - ea) ** 2 + (tb - eb) ** 2)), 4.0))
        dl = tl - el
        steps.append(dl if abs(dl) >= 2.0 else (2.0 if dl >= 0 else -2.0))
        tones_a.append(ta / (tl + 16.0))
        tones_b.append(tb / (tl + 16.0))
    cl, ca, cb = (_column([c[i] for c in learned]) for i in (1, 2, 3))
    span = _column(spans)
    first, last = learned[0][0], learned[-1][0]
    rows = slice(3 + 4 * first, 4 + 4 * last, 4)  # a colour's rows lie 4 apart
    d_c = np.sqrt((lum - cl) ** 2 + (a - ca) ** 2 + (b - cb) ** 2)
    np.minimum(d_e / span, 3.0, out=out[rows])
    np.minimum(d_c / span, 3.0, out=out[rows.start + 1:rows.stop + 1:4])
    np.divide(d_e, d_e + d_c + 1e-6, out=out[rows.start + 2:rows.stop + 2:4])
    np.minimum(np.maximum(dl_e / _column(steps), -3), 3,  # np.clip, quicker
               out=out[rows.start + 3:rows.stop + 3:4])
    off_a, off_b = tone_a - _column(tones_a), tone_b - _column(tones_b)
    np.minimum(np.sqrt(off_a * off_a + off_b * off_b), 1.0, out=out[14 + first:15 + last])
    return out


AGAINST = 16
"""Features per colour sample from `against_colours`."""


def _column(values: list[float]) -> np.ndarray:
    """(len(values), 1) float32: one number per row, broadcast along it."""
    return np.array(values, np.float32)[:, None]


def _span(model: ColourModel) -> float:
    """The smaller distance from the board's colour to a tile colour (the contrast)."""
    spans = [float(colour_distance(np.asarray([c], np.float64), model.empty)[0])
             for c in (model.light, model.dark) if c is not None]
    return max(min(spans) if spans else 30.0, 4.0)


def cell_features(m: Measured, model: ColourModel) -> np.ndarray:
    """(100, F) features per cell: its 9 sub-boxes' and 8 rim boxes' colours against the
    learned ones, their spread, the texture of the sub-boxes, the edges along a tile's
    outline, and the neighbours' colours."""
    sub_lab, rim_lab = m.sub_lab, m.rim_lab
    boxes = np.concatenate([sub_lab, rim_lab], axis=1)  # (100, 17, 3)
    rel = against_colours(boxes, model)  # (100, 17, AGAINST)
    # The nine sub-boxes sorted once give the median, least and most (as np.median and
    # min and max would, for half the cost of the three).
    ranked = np.sort(rel[:, :9], axis=1)
    med, lo, hi = ranked[:, 4], ranked[:, 0], ranked[:, 8]
    middle = getattr(m, "cells_lab", None)  # the reader's measurement has the medians
    if middle is None:
        middle = median_along(sub_lab, 1)
    off = sub_lab - middle[:, None, :]
    spread = np.sqrt(squared_lengths(off)).max(axis=1, keepdims=True) / _span(
        model)
    neighbours = _neighbour_context(med)
    local = local_contrast(middle)
    # The frame's shade when it has one worked out (`vision.measure.Measurement.shade`).
    changed = against_background(sub_lab, m.background, getattr(m, "shade", None))
    out: np.ndarray = np.concatenate(
        [rel.reshape(len(rel), -1), med, lo, hi, spread, neighbours, local, changed, m.texture,
         np.sort(m.edges[:, :4], axis=1), m.edges[:, 4:]], axis=1)
    return out


BACKGROUND_FEATURES = 10
BACKGROUND_AT = 17 * AGAINST + 3 * AGAINST + 1 + AGAINST + 48
"""Where `against_background`'s features start in a row of `cell_features`."""


def background_change(feats: np.ndarray) -> np.ndarray:
    """(100,) each cell's change from the bare board seen there before, in Lab units (the
    median over its sample boxes; NaN where the bare board is not known), read off its
    `cell_features` row."""
    known = feats[:, BACKGROUND_AT + BACKGROUND_FEATURES - 1] > 0.5
    result: np.ndarray = np.where(known, feats[:, BACKGROUND_AT] * 30.0, np.nan)
    return result


def against_background(sub_lab: np.ndarray, background: np.ndarray | None,
                        made: Shade | None = None) -> np.ndarray:
    """(100, 10) per cell, how its sample boxes differ from the bare board seen there before.

    The median, least and most colour difference over the nine boxes, the median Lab
    difference, the median of what a shadow does not change (a and b over L + 16, the
    lightness ratio), each in units of 30 where Lab, and last whether the bare board is
    known there at all (all zero when not). A fixed shadow or glare is in the background
    too, so a bare cell under it hardly differs; a tile does.
    """
    out = np.zeros((SIZE * SIZE, BACKGROUND_FEATURES))
    shade = background_shade(sub_lab, background, made)
    if shade is None:
        return out
    known, change = shade.known, shade.change
    now, then = sub_lab[known], shade.background[known]
    diff = now - then
    dist = np.sort(np.sqrt(squared_lengths(diff)) / 30.0, axis=1)
    out[known, 0] = dist[:, dist.shape[1] // 2]  # nine boxes: the median
    out[known, 1] = dist[:, 0]
    out[known, 2] = dist[:, -1]
    out[known, 3:6] = median_along(diff, 1) / 30.0
    out[known, 6:9] = change
    out[known, 9] = 1.0
    return out


_AROUND = ((-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0), (1, 1))


def _mirrored(i: int) -> int:
    """A row or file index mirrored at the board's edge (-1 -> 1, 10 -> 8)."""
    return -i if i < 0 else 2 * (SIZE - 1) - i if i >= SIZE else i


_AROUND_INDEX = np.array([[_mirrored(r + dr) * SIZE + _mirrored(f + df) for dr, df in _AROUND]
                          for r in range(SIZE) for f in range(SIZE)], np.int64)
"""(100, 8) per cell, its eight neighbours' indices in `_AROUND`'s order, mirrored at the
board's edge."""


def local_contrast(cells_lab: np.ndarray) -> np.ndarray:
    """(100, 48) per cell, how its eight neighbours differ from it, in order.

    For each neighbour (mirrored at the board's edge): the Lab difference (in units of 30)
    and what a shadow does not change (a and b over L + 16, the lightness ratio). Each of
    the six is sorted over the eight neighbours, so the numbers do not depend on the
    board's turn. A lamp's glare or a window's light changes a region's colour, but not
    how a tile differs from the bare board right beside it. (Absolute units, not the
    learned contrast: a colour model from a frame unlike the training scenes then cannot
    blow them up.)
    """
    lum, a, b = cells_lab[:, 0], cells_lab[:, 1], cells_lab[:, 2]
    lightness = lum + 16.0
    desc = np.column_stack([lum / 30.0, a / 30.0, b / 30.0,
                            a / lightness, b / lightness, np.log(np.maximum(lightness, 1e-3))])
    # Each cell's neighbours by a table (an index per cell and neighbour): the same
    # differences as from a mirrored padding, without building it each frame.
    around = desc[_AROUND_INDEX] - desc[:, None, :]  # (100, 8, 6)
    out: np.ndarray = np.sort(around, axis=1).reshape(SIZE * SIZE, -1)
    return out


def _neighbour_context(med: np.ndarray) -> np.ndarray:
    """Per cell, the mean of its four neighbours' median features (off the board: none)."""
    grid = med.reshape(SIZE, SIZE, -1)
    pad = np.zeros((SIZE + 2, SIZE + 2, grid.shape[2]), grid.dtype)  # np.pad, less overhead
    pad[1:-1, 1:-1] = grid
    total = pad[:-2, 1:-1] + pad[2:, 1:-1] + pad[1:-1, :-2] + pad[1:-1, 2:]
    out: np.ndarray = (total / 4).reshape(SIZE * SIZE, -1)
    return out


def bridge_features(
    paths: np.ndarray, heights: int, pairs_kind: np.ndarray, ends_p: np.ndarray,
    under_p: np.ndarray, model: ColourModel, seen_before: np.ndarray | None = None,
    flanks: Callable[[np.ndarray], np.ndarray | None] | None = None,
    seen_cells: np.ndarray | None = None,
    deck_edges: Callable[[np.ndarray], np.ndarray | None] | None = None,
) -> np.ndarray:
    """(pairs, F) features per candidate bridge.

    paths: (pairs * heights, samples, 3) Lab along each deck height tried; pairs_kind:
    (pairs, 3) one-hot straight/diagonal/knight; ends_p: (pairs, 2, 4) the cell network's
    probabilities for the two ends; under_p: (pairs, 2, 4) for the cells passed over (a
    straight or diagonal bridge repeats its one cell).

    seen_before: like paths, the bare board seen before under each sample (NaN where not
    known): a deck of the board's own colour still differs from it, bare board in a shadow
    does not. flanks(rows): (len(rows), samples, 2, 3) Lab just beside the deck on either
    side, for some rows of `paths` (asked for each pair's most even height only): a deck
    stands out from the board beside it (its edges, its shadow), a path over bare board
    does not. seen_cells: (pairs * heights, samples, 4) the cell network's probabilities
    for the cell whose top each sample lies over in the view (zeros where none): seen at an
    angle, a "deck" that is the top of a tile read clearly behind it is no deck, while a
    real deck hides the top it lies over. deck_edges(rows): (len(rows), samples, 2, 2) what
    the deck's two long edges look like (see `bridges.measure_deck_edges`), asked for the
    most even height's rows like `flanks`: a grey deck on a grey board in a lamp's glare
    differs little from the board in colour, but its outline or its shadow still shows
    along it, and bare board shows neither.
    """
    n = paths.shape[1]
    # (AGAINST, P*H, n): the mean over a row's samples along contiguous memory
    mean = row_mean(against_colours_rows(paths, model).reshape(AGAINST, len(paths), n)).T
    centre = row_mean(paths.transpose(0, 2, 1))  # (P*H, 3) each row's mean colour
    off = paths - centre[:, None, :]
    spread = np.sqrt(squared_lengths(off)) / _span(model)
    # Seen at an angle, a deck's path along the far edge lies over the board's border: how
    # like the border it looks tells a wooden border from a grey deck.
    to_ring = paths - np.asarray(model.ring, np.float64)
    ring = np.sqrt(squared_lengths(to_ring)) / 30.0
    if seen_before is None:
        seen_before = np.full_like(paths, np.nan)
    known = ~np.isnan(seen_before[..., 0])  # (P*H, n)
    then = np.where(known[..., None], seen_before, paths)
    change = paths - then
    moved = np.sqrt(squared_lengths(change)) / 30.0
    count = row_sum(known)
    moved_mean = row_sum(moved) / np.maximum(count, 1)
    if seen_cells is None:
        over = np.zeros((len(paths), 2))
        middle = np.zeros((len(paths) // heights, CELL_CLASSES))
    else:
        over = np.column_stack([row_mean(seen_cells[:, :, 1] + seen_cells[:, :, 2]),
                                row_mean(seen_cells[:, :, 3])])
    per_row = np.concatenate(
        [mean, row_max(spread)[:, None], row_mean(spread)[:, None],
         row_mean(ring)[:, None], row_min(ring)[:, None],
         moved_mean[:, None], row_max(moved)[:, None], over], axis=1)
    rows = per_row.reshape(-1, heights, per_row.shape[1])
    best = np.argmin(rows[:, :, AGAINST + 1], axis=1)  # the height the deck is most even at
    pick = np.arange(len(rows)) * heights + best  # the rows at those heights
    flat_best = per_row[pick]
    chosen = centre[pick]
    # At that height: how much of the path the board seen before covers, and how what a
    # shadow does not change has changed there (a grey deck's colour against the board's).
    if seen_cells is not None:
        middle = seen_cells[pick, n // 2]
    beside = np.zeros((len(rows), 3))
    sides = flanks(pick) if flanks is not None else None
    if sides is not None:
        out_to = sides - paths[pick][:, :, None, :]
        apart = np.sort(np.sqrt(squared_lengths(out_to)), axis=2) / 30.0
        across = sides[:, :, 0] - sides[:, :, 1]
        between = np.sqrt(squared_lengths(across)) / 30.0
        beside = np.column_stack([row_mean(np.moveaxis(apart, 1, 2)), row_mean(between)])
    shade = shade_free_change(paths[pick], then[pick])
    share = (count[pick] / n)[:, None]
    steps = deck_edges(pick) if deck_edges is not None else None
    outline = np.zeros((len(rows), DECK_OUTLINE)) if steps is None else deck_outline(steps)
    out: np.ndarray = np.concatenate(
        [rows.reshape(len(rows), -1), flat_best, against_colours(chosen, model), pairs_kind,
         ends_p.reshape(len(ends_p), -1), under_p.reshape(len(under_p), -1),
         middle, share, shade, beside, outline], axis=1)
    return out


DECK_OUTLINE = 8
"""Features from `deck_outline`."""


def deck_outline(edges: np.ndarray) -> np.ndarray:
    """(pairs, 8) from a path's two long edges ((pairs, samples, 2 sides, 2): the grey
    level's rise into the deck and the edge's darkening, see `bridges.measure_deck_edges`):
    per side, the mean rise, the mean size of the rise, the share of samples rising the way
    the mean does, and the mean darkening; the side with the larger rises first (which side
    shows the shadow or the deck's side depends on the lamp and the camera)."""
    rise = np.moveaxis(edges[..., 0], 1, 2)  # (pairs, 2 sides, samples)
    per_side = np.empty((len(edges), 2, 4))
    mean = per_side[:, :, 0] = row_mean(rise)
    size = per_side[:, :, 1] = row_mean(np.abs(rise))
    rising = np.where((mean >= 0.0)[:, :, None], rise > 0, rise < 0)
    per_side[:, :, 2] = row_mean(rising.astype(np.float64))
    per_side[:, :, 3] = row_mean(np.moveaxis(edges[..., 1], 1, 2))
    swap = size[:, 1] > size[:, 0]
    per_side[swap] = per_side[swap, ::-1]
    result: np.ndarray = per_side.reshape(len(edges), -1)
    return result


def end_chance(probs: np.ndarray) -> np.ndarray:
    """(n, 2) each cell's chance of being a light bridge's end and a dark one's, by its class
    probabilities (n, 4): a tile of that colour, or hidden (by the bridge's foot, say)."""
    result: np.ndarray = probs[:, [1, 2]] + probs[:, 3:4]
    return result


def tile_chance(probs: np.ndarray, ends: np.ndarray | None) -> np.ndarray:
    """(100,) each cell's chance of being a tile of either colour or hidden, from its
    `ends` (see `candidate_features`; default: `end_chance(probs)`)."""
    colour = end_chance(probs) if ends is None else ends
    result: np.ndarray = row_sum(colour) - probs[:, 3]
    return result


def foot_candidates(
    settings: Thresholds, bridge_plan: BridgePlan, probs: np.ndarray, change: np.ndarray,
    ends: np.ndarray | None = None,
) -> np.ndarray:
    """(pairs,) bool: the pairs worth asking about only because a bridge's foot may hide
    one end's tile (see `Thresholds.foot_end_p`): one end a tile at least `foot_end_p`; the
    other not a possible end by `candidate_end_p`, but changed from the bare board seen there
    before by at least `foot_change` and `foot_spread` times what the cells read as bare
    board have (`change`: (100,) Lab units, NaN where not known; see `background_change`);
    and the cells passed over bare board (or hidden) at least `candidate_fit_p`. No
    candidate of the plain rule is among them."""
    ends_i, under_i, _ = plan_tables(bridge_plan)
    tile = tile_chance(probs, ends)
    sure = probs[:, 1] + probs[:, 2] >= settings.foot_end_p  # a tile in view: not a hand
    known = ~np.isnan(change)
    seen = change[(probs[:, 0] >= 0.5) & known]  # the cells read as bare board
    typical = float(np.median(seen)) if len(seen) else 0.0
    least = max(settings.foot_change, settings.foot_spread * typical)
    hidden = (tile <= settings.candidate_end_p) & known & (np.where(known, change, 0.0) >= least)
    a, b = ends_i[:, 0], ends_i[:, 1]
    bare = (probs[:, 0] + probs[:, 3])[under_i].min(axis=1)
    result: np.ndarray = ((sure[a] & hidden[b]) | (sure[b] & hidden[a])) & (
        bare > settings.candidate_fit_p)
    return result


def candidate_features(
    settings: Thresholds,
    bridge_plan: BridgePlan,
    paths: Callable[[np.ndarray], np.ndarray],
    model: ColourModel,
    probs: np.ndarray,
    background: np.ndarray | None = None,
    beside: Callable[[np.ndarray], np.ndarray | None] | None = None,
    edges: Callable[[np.ndarray], np.ndarray | None] | None = None,
    ends: np.ndarray | None = None,
    extra: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Features of the candidate bridges worth asking about (both ends likely tiles or
    hidden by a foot; while tracking, of one colour, the cells passed over likely bare: see
    `Thresholds.candidate_fit_p`), and their indices in the plan's pair list. `paths(rows)`
    measures the path samples of some rows (pair * heights + height) of the plan; `background` is
    the bare board seen before, per cell sample box ((100, 9, 3) Lab, NaN where unknown);
    `beside(rows)` measures the samples either side of those rows' paths, `edges(rows)`
    the grey level's rise across their decks' edges; `ends` is each cell's chance of being
    a light bridge's end and a dark one's ((100, 2), default: `end_chance(probs)`);
    `extra` ((pairs,) bool) marks pairs to ask about besides (see `foot_candidates`)."""
    ends_i, under_i, kinds_all = plan_tables(bridge_plan)
    colour = end_chance(probs) if ends is None else ends  # (100, 2)
    tile = tile_chance(probs, colour)
    first, second = ends_i[:, 0], ends_i[:, 1]
    one_colour = np.maximum(np.minimum(colour[first, 0], colour[second, 0]),
                            np.minimum(colour[first, 1], colour[second, 1]))
    bare_cell = probs[:, 0] + probs[:, 3]
    bare = np.minimum(bare_cell[under_i[:, 0]], bare_cell[under_i[:, 1]])
    least = settings.candidate_end_p
    fits = (tile[first] > least) & (tile[second] > least)
    if known_background(background) is not None:
        fits &= (one_colour > settings.candidate_fit_p) & (bare > settings.candidate_fit_p)
    if extra is not None:
        fits |= extra
    keep = np.flatnonzero(fits)
    if len(keep) == 0:
        return np.zeros((0, 1)), keep
    heights = bridge_plan.heights
    rows = (keep[:, None] * heights + np.arange(heights)[None, :]).ravel()
    kinds = kinds_all[keep]
    under = probs[under_i[keep]]  # (k, 2, 4)
    ends = probs[ends_i[keep]]  # (k, 2, 4)
    seen_before = seen_cells = None
    if bridge_plan.nearest is not None:
        n = len(bridge_plan.boxes) // (len(bridge_plan.pairs) * heights)
        nearest = bridge_plan.nearest[(rows[:, None] * n + np.arange(n)[None, :]).ravel()]
        # A sample with no box near (-1, and -1 // 9 == -1) takes the row put last: zeros
        # for the cells, NaN (not known) for the bare board.
        seen_cells = np.concatenate([probs, np.zeros((1, probs.shape[1]))])[
            nearest // 9].reshape(len(rows), n, probs.shape[1])
        if background is not None:
            flat = np.concatenate([background.reshape(-1, 3), np.full((1, 3), np.nan)])
            seen_before = flat[nearest].reshape(len(rows), n, 3)
    flanks = None if beside is None else (lambda pick: beside(rows[pick]))
    outline = None if edges is None else (lambda pick: edges(rows[pick]))
    return bridge_features(paths(rows), heights, kinds, ends, under, model, seen_before,
                           flanks, seen_cells, outline), keep
