"""Stage 3d: a second look at the cells the cell network is unsure of, through their image.

The cell network (`vision.learned`) reads a cell through a few dozen box means. That is
quick and mostly right, but a box mean cannot see shape: a low window's shadow on bare
board and a dark tile can give the same means, and so can a light tile in a lamp's glare
and the bare board beside it. What tells them apart is in the picture: a tile's straight
edges and corners, its side face, the grid line a shadow leaves visible.

So each cell the network gives less than `second_look_p`, or more than `rival_p` to its
second likeliest state, of what a cell in view can be, gets a second look (so does a cell
read as bare board that is unlike the bare board seen there,
`Thresholds.changed_bare`): a convolutional network reads a patch of the top-down
view around the cell (centred where its colour samples lie, half-way up a tile, with a
third of a cell of its neighbours on every side), with the frame's light
field and the bare board's colour divided out, beside the same patch of the calibration
photo's view of the bare board (`with_reference`: what the light did to the board at that
place before anything stood on it), together with the cell network's own
probabilities, and its answer replaces them. Few cells need it (about five a frame), so
it costs little. The chance that a cell is hidden is set aside in choosing them, since the
look cannot change it: counted, it would send many more cells to the look for the same
readings (seen at an angle, the cell network gives many bare cells a few per cent for
hidden).

Inference is plain numpy (`im2col` and one matrix product per layer). The network is
trained on generated scenes (`python -m lab.train_patches`) and ships as
`vision/models/patches.npz`; without the file the cell network's answer stands.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import BinaryIO

import cv2
import numpy as np

from contracts.calibration import ColourModel, Thresholds
from vision.features import SamplingPlan, field_at
from vision.geometry import SIZE
from vision.learned import MODELS, model_file, one_blas_thread

PATCH_MODEL = MODELS / "patches.npz"
HALF = 20
"""Half a patch's side in top-down pixels (a cell is `cell_px`, 24, pixels)."""
FLOOR = 1e-4
"""The smallest probability the patch network is told of (its inputs are log-probabilities)."""


@dataclass(frozen=True)
class Conv:
    """A 2-D convolution (square kernel, zero padding) followed by ReLU."""

    weight: np.ndarray
    """(out, in, k, k), as PyTorch and OpenCV's dnn keep them."""
    bias: np.ndarray
    stride: int
    rows: np.ndarray = field(init=False, repr=False, compare=False)
    """`flat_weight(weight).T`, kept: the layout is made once, not at every call."""
    tiled: np.ndarray = field(init=False, repr=False, compare=False)
    """The bias repeated for `BIAS_ROWS` output pixels, flat (see `__call__`)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "rows", flat_weight(self.weight).T)
        object.__setattr__(self, "tiled",
                           np.tile(np.asarray(self.bias, np.float32), BIAS_ROWS))

    def __call__(self, x: np.ndarray) -> np.ndarray:
        """(n, h, w, in) -> (n, h', w', out)."""
        cols, (n, h, w) = columns(x, self.weight.shape[2], self.stride)
        y = cols @ self.rows
        # The bias added over flat runs of whole rows: numpy adds a short row (8 to 64
        # channels) to each of thousands of rows far slower than two long flat arrays.
        flat, step = y.reshape(-1), len(self.tiled)
        for start in range(0, len(flat), step):
            run = flat[start:start + step]
            run += self.tiled[:len(run)]
        result: np.ndarray = np.maximum(y, 0.0, out=y).reshape(n, h, w, self.weight.shape[0])
        return result


BIAS_ROWS = 2048
"""Output pixels a convolution's bias is laid out for at once (see `Conv.__call__`)."""


def columns(x: np.ndarray, k: int, stride: int) -> tuple[np.ndarray, tuple[int, int, int]]:
    """The k x k windows of (n, h, w, c) images, zero-padded by k // 2, every `stride`
    pixels, as rows (one per output pixel) in (k, k, c) order (see `flat_weight`); and the
    output's (n, h', w'). Windows over all three image axes keep each window's rows
    contiguous, which makes the copy a few times quicker than windows over two."""
    pad = k // 2
    n, high, wide, c = x.shape
    padded = np.zeros((n, high + 2 * pad, wide + 2 * pad, c), x.dtype)  # as np.pad makes it,
    padded[:, pad:pad + high, pad:pad + wide] = x  # without its overhead
    h, w = (high + 2 * pad - k) // stride + 1, (wide + 2 * pad - k) // stride + 1
    # The windows as a view of the padded images, every `stride` pixels: a window's k rows
    # each k * c items along memory (what `sliding_window_view` over the three image axes
    # gives, sliced, without its checks, which cost more than the view).
    image, row, pixel, item = padded.strides
    windows = np.ndarray((n, h, w, k, k * c), padded.dtype, padded, 0,
                         (image, stride * row, stride * pixel, row, item))
    return windows.reshape(n * h * w, k * k * c), (n, h, w)


def mirror_images(x: np.ndarray) -> np.ndarray:
    """The seven other images of (n, h, h, c) square patches under the square's turns and
    mirrors, one after the other: (7 n, h, h, c)."""
    turned = x.transpose(0, 2, 1, 3)
    return np.concatenate([x[:, :, ::-1], x[:, ::-1], x[:, ::-1, ::-1], turned,
                           turned[:, :, ::-1], turned[:, ::-1], turned[:, ::-1, ::-1]])


def flat_weight(weight: np.ndarray) -> np.ndarray:
    """A convolution's (out, in, k, k) weight as (out, k * k * in) rows matching `columns`."""
    result: np.ndarray = weight.transpose(0, 2, 3, 1).reshape(weight.shape[0], -1)
    return result


@dataclass(frozen=True)
class PatchNetwork:
    """Three strided convolutions, one hidden dense layer, and an output layer that also
    reads the cell network's log-probabilities: (patches, probs) -> probs."""

    convs: tuple[Conv, ...]
    w1: np.ndarray  # (features, hidden), features in PyTorch's (channel, y, x) order
    b1: np.ndarray
    w2: np.ndarray  # (hidden + extras, classes): the output layer also reads the extras
    b2: np.ndarray

    @property
    def channels(self) -> int:
        """The channels of a patch it reads: 3 (the frame's), 6 (the frame's, then the bare
        board's from the calibration photo, see `with_reference`), or 12 (those, then the
        learned tile colours, see `with_tile_colours`)."""
        return int(self.convs[0].weight.shape[1])

    def proba(self, patches: np.ndarray, probs: np.ndarray) -> np.ndarray:
        """Class probabilities for (n, 2 HALF, 2 HALF, `channels`) patches (see
        `cell_patches` and `with_reference`) given the cell network's (n, 4) probabilities
        (empty, light, dark, hidden).

        The patch network only chooses among what a cell can be when it is in view: the
        chance that it is hidden stays the cell network's, so a hand is flagged as before.
        """
        logp = np.log(np.clip(probs, FLOOR, 1.0)).astype(np.float32)
        seen = self.scores(patches, logp)
        result: np.ndarray = np.concatenate(
            [seen * (1.0 - probs[:, 3:4]), probs[:, 3:4]], axis=1)
        return result

    def steady_proba(self, settings: Thresholds, patches: np.ndarray, probs: np.ndarray
                     ) -> np.ndarray:
        """`proba`, averaged over the patch and its seven other images under the square's
        turns and mirrors for the cells it is unsure of (see `Thresholds.mirror_below`). The network
        learned from every quarter turn and mirror image of its patches, so each is as
        fair a view of the cell as the first, and where one view is unsure their mean is
        steadier than any of them. The chance that a cell is hidden is the same in all."""
        out = self.proba(patches, probs)
        seen = out[:, :3]
        top = seen.max(axis=1) / np.maximum(seen.sum(axis=1), 1e-12)
        doubt = np.flatnonzero(top < settings.mirror_below)
        if not len(doubt):
            return out
        if len(doubt) > settings.mirror_looks:
            doubt = doubt[np.argsort(top[doubt], kind="stable")[:settings.mirror_looks]]
        views = mirror_images(patches[doubt])
        tiled = np.tile(probs[doubt], (len(views) // len(doubt), 1))
        answers = [out[doubt], self.proba(views, tiled)]
        out[doubt] = np.concatenate(answers).reshape(-1, len(doubt), out.shape[1]).mean(axis=0)
        return out

    def scores(self, patches: np.ndarray, extras: np.ndarray) -> np.ndarray:
        """Class probabilities for (n, h, w, 3) patches and (n, e) further inputs that the
        output layer reads beside the hidden layer."""
        h = np.asarray(patches, np.float32)  # the first layer reads it, never writes it
        with one_blas_thread():
            for conv in self.convs:
                h = conv(h)
            flat = h.transpose(0, 3, 1, 2).reshape(len(h), -1)
            hidden = np.maximum(flat @ self.w1 + self.b1, 0.0)
            s = (np.concatenate([hidden, extras.astype(np.float32)], axis=1) @ self.w2
                 + self.b2).astype(np.float64)
        s -= s.max(axis=1, keepdims=True)
        e = np.exp(s)
        result: np.ndarray = e / e.sum(axis=1, keepdims=True)
        return result

    def save(self, path: Path) -> None:
        arrays: dict[str, np.ndarray] = {"w1": self.w1, "b1": self.b1, "w2": self.w2,
                                         "b2": self.b2}
        for i, conv in enumerate(self.convs):
            arrays[f"conv{i}_weight"] = conv.weight
            arrays[f"conv{i}_bias"] = conv.bias
            arrays[f"conv{i}_stride"] = np.array(conv.stride)
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(path, **arrays)

    @classmethod
    def load(cls, path: Path | BinaryIO) -> PatchNetwork:
        with np.load(path) as data:
            convs = []
            i = 0
            while f"conv{i}_weight" in data:
                convs.append(Conv(np.asarray(data[f"conv{i}_weight"], np.float32),
                                  np.asarray(data[f"conv{i}_bias"], np.float32),
                                  int(data[f"conv{i}_stride"])))
                i += 1
            return cls(tuple(convs), *(np.asarray(data[k], np.float32)
                                       for k in ("w1", "b1", "w2", "b2")))


def shipped(path: Path) -> PatchNetwork | None:
    """The patch network in `path`, or None when it is missing or unreadable (see
    `vision.learned.model_file`)."""
    return model_file(PatchNetwork.load, path)


@cache
def patch_network() -> PatchNetwork | None:
    """The shipped patch network, or None when it is missing or unreadable."""
    return shipped(PATCH_MODEL)


@dataclass(frozen=True)
class BareView:
    """The board with nothing on it, as the calibration photo shows it from above."""

    image: np.ndarray
    """The photo's top-down view (BGR uint8, as `vision.features.warp_topdown` makes it)."""
    light: np.ndarray
    """(6, 3): the light field fitted to its border."""
    known: np.ndarray
    """(100,) bool: the cells the photo shows bare (a tile covered the others)."""


def with_reference(settings: Thresholds, plan: SamplingPlan, patches: np.ndarray,
                   view: BareView | None, model: ColourModel, cells: np.ndarray) -> np.ndarray:
    """`cell_patches`' patches of `cells` with three more channels: the same patch of the
    calibration photo's view, evened out by its own light (bare board reads about 1.0
    there too); zeros (a board of one even colour) where there is no view or the photo
    showed a tile there. What a cell looks like now beside what its bare board looked
    like tells a light tile in a window's light, or a lamp's glare on bare board, from
    what the light does to the board there."""
    cells = np.asarray(cells, np.int64)
    out = np.zeros(patches.shape[:3] + (6,), np.float32)
    out[..., :3] = patches
    if view is None or not len(cells):
        return out
    known = np.flatnonzero(view.known[cells])
    if len(known):
        out[known, :, :, 3:] = cell_patches(settings, plan, view.image, view.light, model,
                                            cells[known])
    return out


def tile_colours(model: ColourModel) -> np.ndarray:
    """(6,) the learned light tile's colour and the dark tile's (BGR), each over the bare
    board's, on a patch's scale (`cell_patches`: the bare board is 0); 0 for a colour not
    learned yet."""
    bare = _bgr(model.empty)
    out = np.zeros(6, np.float32)
    for n, colour in enumerate((model.light, model.dark)):
        if colour is not None:
            out[3 * n:3 * n + 3] = np.minimum(_bgr(colour) / np.maximum(bare, 8.0),
                                              255.0 / 128.0) - 1.0
    return out


def _bgr(lab: tuple[float, float, float]) -> np.ndarray:
    """A learned colour (Lab) as BGR, 0-255."""
    result: np.ndarray = cv2.cvtColor(np.array(lab, np.float32).reshape(1, 1, 3),
                                      cv2.COLOR_Lab2BGR).reshape(3) * 255.0
    return result


def with_tile_colours(patches: np.ndarray, colours: np.ndarray) -> np.ndarray:
    """`with_reference`'s patches with six more channels, planes of one colour each: the
    learned light tile's colour and the dark tile's (`tile_colours`; (6,), or (k, 6) per
    patch). A patch's colours are over the bare board's, so how light a tile looks in one
    depends on the board's colour; beside the two tile colours, which of them the cell
    shows does not."""
    out = np.empty(patches.shape[:3] + (patches.shape[3] + 6,), np.float32)
    out[..., :patches.shape[3]] = patches
    planes = np.broadcast_to(np.asarray(colours, np.float32).reshape(-1, 6), (len(patches), 6))
    out[..., patches.shape[3]:] = planes[:, None, None, :]
    return out


def bare_mismatch(patches: np.ndarray) -> np.ndarray:
    """(k,) how far each of `with_reference`'s patches is from its calibration photo's
    patch: the mean absolute difference over the patch's pixels and channels, each
    channel's mean difference (the room's light now against then) taken out first."""
    # Channels first: numpy is slow over a last axis of 3 or 6 items.
    planes = np.ascontiguousarray(
        patches[..., :6].reshape(len(patches), -1, 6).transpose(0, 2, 1))
    diff = planes[:, :3] - planes[:, 3:]
    diff -= diff.mean(axis=2, keepdims=True)
    result: np.ndarray = np.abs(diff, out=diff).mean(axis=(1, 2))
    return result


def cell_patches(settings: Thresholds, plan: SamplingPlan, topdown: np.ndarray,
                 light_coef: np.ndarray, model: ColourModel, cells: np.ndarray) -> np.ndarray:
    """Patches of the top-down view around `cells` (flat indices), centred half-way up a
    tile (where the cell's colour samples lie), each divided by the light
    field there and by the bare board's colour: bare board reads about 1.0. (k, 2 HALF,
    2 HALF, 3) float32, on a scale where 1.0 is 0 (`(v - 1)` as the network reads it)."""
    cells = np.asarray(cells, np.int64)
    out = np.empty((len(cells), 2 * HALF, 2 * HALF, 3), np.float32)
    if not len(cells):
        return out
    px, margin = settings.cell_px, settings.margin_cells
    xy = plan.cell_xy[cells]
    top = plan.cell_mid_xy[cells]
    scale = field_at(light_coef, xy) * np.maximum(_bgr(model.empty), 8.0)
    side = topdown.shape[0]
    raw = np.empty(out.shape, topdown.dtype)
    for n, (x, y) in enumerate(top):
        cx = int(round((margin + x) * px))
        cy = int(round((margin + SIZE - y) * px))
        x0, y0 = cx - HALF, cy - HALF
        if 0 <= x0 and 0 <= y0 and x0 + 2 * HALF <= side and y0 + 2 * HALF <= side:
            raw[n] = topdown[y0:y0 + 2 * HALF, x0:x0 + 2 * HALF]
        else:
            ys = np.clip(np.arange(y0, y0 + 2 * HALF), 0, side - 1)
            xs = np.clip(np.arange(x0, x0 + 2 * HALF), 0, side - 1)
            raw[n] = topdown[np.ix_(ys, xs)]
    # One division for all (numpy is slow over a last axis of 3 items, patch by patch).
    out.reshape(len(cells), -1)[:] = raw.reshape(len(cells), -1) / np.tile(scale, 4 * HALF * HALF)
    np.minimum(out, 255.0 / 128.0, out=out)
    out -= 1.0
    return out

