"""Train the patch network on generated scenes: `python -m lab.train_patches`.

Scenes are made as `lab.train` makes them (the same setups and light changes), but from
their own seeds (`PATCH_SEED`): the cell network is surer of the scenes it was trained on
than of new ones, so its unsure cells there are not those it meets. They are read up to the
cell network's probabilities the way `vision.pipeline.observe` reads them. Every cell
the cell network is not sure of (top probability below 0.999, a wider net than the
pipeline's `second_look_p`) becomes an example, and a few sure cells besides so that the
network also sees ordinary ones. Cells a hand hides are left out: the patch network only
chooses among empty, light and dark (see `vision.patches`).

The network (`vision.patches.PatchNetwork`) is trained with Adam on a weighted
cross-entropy loss in plain numpy, with the patches turned and mirrored at random (the
board looks alike from every side) and shifted by up to two pixels, and written to
`vision/models/patches.npz` (or into `--out`). With `--scenes-from DIR` the scenes are a
still set's images (see `lab.train`). With `--torch` the same training runs in PyTorch
(`lab.train_torch`; installed apart, only where networks are trained): on two cores an
epoch over 8,000 scenes' examples (about 300,000) takes about 90 seconds for the shipped
shape (`PATCH_LAYERS`), several times as long in numpy.

Nearly all the cells the reader gets wrong are in three setups (`HARD_SETUPS`: a window's
light and shadow, a warm lamp's glare, dim noisy frames), so training goes on from a
trained network at a lower rate with more scenes of those setups alone (`--from MODEL
--lr 0.0003 --epochs 8 --hard-scenes N`, N growing from 3,600 to 10,800). The examples are
read behind the cell network they will serve: when it is trained again, its unsure cells
and probabilities change, and the examples must be read again.

Each example's patch has six channels: the frame's, then the same patch of the calibration
photo's view of the bare board (`vision.patches.with_reference`; zeros without one). A
three-channel network can be carried on to six, widened with zero weights for the new
channels (`widened`): the shipped network was made so, for 10 epochs at 0.001 (`--torch
--from MODEL --lr 0.001 --epochs 10 --scenes 4000 --hard-scenes 5400 --hard-start 8000`:
about 330,000 examples; about 33 minutes to read the scenes and 12 to train on 2 cores).
"""

from __future__ import annotations

import argparse
import sys
import time
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np

from lab.train import (
    HARD_SETUPS,
    NO_BACKGROUND,
    check_scene_options,
    hard_scenes,
    measure_scene,
    scene_options,
)
from vision.patches import (
    PATCH_MODEL,
    Conv,
    PatchNetwork,
    cell_patches,
    columns,
    flat_weight,
    tile_colours,
    with_reference,
)

PATCH_SEED = 9000
"""The scenes the patch network learns from (apart from the cell network's and the
evaluation's)."""
WIDE_P = 0.999
"""Cells below this top probability from the cell network are examples ..."""
SURE_SHARE = 0.04
"""... and this share of the others."""
UNSURE_WEIGHT = 3.0
"""How much more a cell below `second_look_p` counts in training than the others."""
LAYERS = ((16, 5), (32, 3), (32, 3))
"""Per convolution (each with stride 2): output channels and kernel size; the trainer's
default shape (the deck network's, `lab.train_decks`) ..."""
HIDDEN = 64
"""... and its dense layer's units."""
PATCH_LAYERS = ((32, 5), (64, 3), (64, 3))
"""The patch network's convolutions: twice as wide as `LAYERS`. Of 9,202 unsure cells of
held-out scenes, the shipped network of this shape (30 epochs) reads 34 wrong over its
eight images, two of the narrow shape together read 56 over their sixteen."""
PATCH_HIDDEN = 128
CLASSES = 3  # empty, light, dark


SceneTask = tuple[int, int, Path | None]
"""A scene to read: the seed, its index and the still set it is taken from (None: a
generated one; see `lab.train.measure_scene`)."""


PATCH_KEYS = ("x", "p", "y", "cell", "tiles")
"""The arrays of the patch examples (see `read_scene`), besides each one's scene."""


def with_tile_planes(data: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The examples with six more channels in their patches: the learned tile colours of
    their scene, planes of one colour (`vision.patches.with_tile_colours`, quantised as the
    patches are), for a network that reads them (`--tile-colours`)."""
    planes = np.clip(np.round((data["tiles"] + 1.0) * 128.0), 0, 255).astype(np.uint8)
    x = data["x"]
    wide = np.empty(x.shape[:3] + (x.shape[3] + 6,), np.uint8)
    wide[..., :x.shape[3]] = x
    wide[..., x.shape[3]:] = planes[:, None, None, :]
    return {**data, "x": wide}


def read_scene(seed: int, i: int, stills: Path | None = None) -> tuple[np.ndarray, ...] | None:
    """One scene's examples: patches (uint8, `(v + 1) * 128` of `cell_patches`' values),
    the cell network's probabilities, the labels (3: hidden by a hand), the cells and the
    learned tile colours (`vision.patches.tile_colours`, the same for every cell)."""
    from vision.cells import parse_cell
    from vision.classify import classify_cells
    from vision.learned import cell_features, cell_network
    from vision.read_cells import cell_probabilities

    read = measure_scene(seed, i, stills) if cell_network() is not None else None
    if read is None:
        return None
    frame, reader, plan, m, model = read
    if np.random.default_rng([seed, i, 2]).random() < NO_BACKGROUND:
        # as `ponte read` without a calibration
        m = replace(m, background=None, bare_view=None)
    net = cell_network(scratch=m.background is None)
    if net is None:
        return None
    labels = np.zeros(100, np.int64)
    for r_top, row in enumerate(frame.board):
        for f, ch in enumerate(row):
            labels[(9 - r_top) * 10 + f] = ".LD".index(ch)
    for name in frame.occluded_cells:
        f, r = parse_cell(name)
        labels[r * 10 + f] = 3
    reading = classify_cells(reader.settings, m.sub_lab, model, m.rim_lab)
    probs, model, _ = cell_probabilities(reader.settings, m, model, reading, net,
                                         cell_features(m, model))
    pick = (probs.max(axis=1) < WIDE_P) | (
        np.random.default_rng([seed, i, 3]).random(100) < SURE_SHARE)
    cells = np.flatnonzero(pick & (labels < 3))
    patches = with_reference(
        reader.settings, plan.sampling,
        cell_patches(reader.settings, plan.sampling, m.topdown, m.light_coef, model, cells),
        m.bare_view, model, cells)
    quantised = np.clip(np.round((patches + 1.0) * 128.0), 0, 255).astype(np.uint8)
    tiles = np.tile(tile_colours(model), (len(cells), 1)).astype(np.float32)
    return quantised, probs[cells].astype(np.float32), labels[cells], cells, tiles


def _job(task: SceneTask) -> tuple[np.ndarray, ...] | None:
    return read_scene(*task)


def collect(count: int, seed: int, jobs: int, log: bool = False,
            job: Callable[[SceneTask], tuple[np.ndarray, ...] | None] = _job,
            keys: tuple[str, ...] = PATCH_KEYS,
            indices: Sequence[int] | None = None,
            stills: Path | None = None) -> dict[str, np.ndarray]:
    """Read `count` scenes (in `jobs` processes; scenes 0 to `count` - 1 of `seed` or of
    the still set `stills`, or those `indices` name) with `job` ((seed, scene, stills) -> a
    scene's arrays or None): arrays named `keys`, and scene (each example's scene)."""
    import multiprocessing

    parts: list[tuple[np.ndarray, ...]] = []
    scenes: list[np.ndarray] = []
    started = time.perf_counter()
    chosen = list(range(count)) if indices is None else list(indices)
    with multiprocessing.get_context("fork").Pool(jobs) as pool:
        tasks = [(seed, i, stills) for i in chosen]
        for n, result in enumerate(pool.imap(job, tasks, chunksize=4), start=1):
            if result is not None:
                parts.append(result)
                scenes.append(np.full(len(result[0]), chosen[n - 1]))
            if log and n % 200 == 0:
                rate = (time.perf_counter() - started) / n
                print(f"{n}/{len(chosen)} scenes ({rate * 1000:.0f} ms each)",
                      file=sys.stderr)
    if not parts:
        raise ValueError("no scene could be read")
    out = {k: np.concatenate([part[j] for part in parts]) for j, k in enumerate(keys)}
    out["scene"] = np.concatenate(scenes)
    return out


def _augment(x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The batch turned by a random quarter turn, maybe mirrored, and shifted a little."""
    x = np.rot90(x, int(rng.integers(4)), axes=(1, 2))
    if rng.random() < 0.5:
        x = x[:, :, ::-1]
    dy, dx = (int(v) for v in rng.integers(-2, 3, 2))
    return np.ascontiguousarray(np.roll(x, (dy, dx), axis=(1, 2)))


def _conv_backward(grad: np.ndarray, cols: np.ndarray, weight: np.ndarray, stride: int,
                   in_shape: tuple[int, ...], need_input: bool
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Gradients of a convolution's weight, bias and (when asked) input, from the gradient
    of its output before the ReLU, (n, h, w, out)."""
    out_ch, in_ch, k, _ = weight.shape
    flat = grad.reshape(-1, out_ch)
    g_weight = (cols.T @ flat).T.reshape(out_ch, k, k, in_ch).transpose(0, 3, 1, 2)
    g_bias = flat.sum(axis=0)
    if not need_input:
        return g_weight, g_bias, None
    n, h, w = grad.shape[:3]
    g_cols = (flat @ flat_weight(weight)).reshape(n, h, w, k, k, in_ch)
    pad = k // 2
    g_pad = np.zeros((n, in_shape[1] + 2 * pad, in_shape[2] + 2 * pad, in_ch), grad.dtype)
    for a in range(k):
        for b in range(k):
            g_pad[:, a:a + stride * h:stride, b:b + stride * w:stride] += g_cols[:, :, :, a, b]
    return g_weight, g_bias, g_pad[:, pad:pad + in_shape[1], pad:pad + in_shape[2]]


class Trainer:
    """A patch network's parameters, and one Adam step on a batch: patches of `shape`
    (height, width), `extras` further inputs to the output layer, `classes` classes (the
    cells' by default)."""

    def __init__(self, rng: np.random.Generator, shape: tuple[int, int] = (40, 40),
                 extras: int = 4, classes: int = CLASSES,
                 layers: Sequence[tuple[int, int]] = LAYERS, hidden: int = HIDDEN,
                 channels: int = 3) -> None:
        self.params: dict[str, np.ndarray] = {}
        self.layers, self.hidden = tuple(layers), hidden
        high, wide = shape
        for i, (out_ch, k) in enumerate(self.layers):
            fan_in = channels * k * k
            self.params[f"conv{i}_weight"] = rng.normal(
                0, np.sqrt(2 / fan_in), (out_ch, channels, k, k)).astype(np.float32)
            self.params[f"conv{i}_bias"] = np.zeros(out_ch, np.float32)
            channels, high, wide = out_ch, (high + 1) // 2, (wide + 1) // 2
        features = channels * high * wide
        self.params["w1"] = rng.normal(0, np.sqrt(2 / features),
                                       (features, hidden)).astype(np.float32)
        self.params["b1"] = np.zeros(hidden, np.float32)
        self.params["w2"] = rng.normal(0, np.sqrt(1 / (hidden + extras)),
                                       (hidden + extras, classes)).astype(np.float32)
        self.params["b2"] = np.zeros(classes, np.float32)
        self.m1 = {k: np.zeros_like(v) for k, v in self.params.items()}
        self.m2 = {k: np.zeros_like(v) for k, v in self.params.items()}
        self.steps = 0

    def network(self) -> PatchNetwork:
        p = self.params
        convs = tuple(Conv(p[f"conv{i}_weight"].copy(), p[f"conv{i}_bias"].copy(), 2)
                      for i in range(len(self.layers)))
        return PatchNetwork(convs, p["w1"].copy(), p["b1"].copy(), p["w2"].copy(),
                            p["b2"].copy())

    def step(self, x: np.ndarray, extras: np.ndarray, y: np.ndarray, weight: np.ndarray,
             lr: float, decay: float = 1e-5) -> float:
        """One Adam step on a batch; returns its mean weighted loss."""
        loss, grads = self.gradients(x, extras, y, weight)
        p = self.params
        self.steps += 1
        b1, b2 = 0.9, 0.999
        for k, g in grads.items():
            g = g.astype(np.float32) + decay * p[k]
            self.m1[k] = b1 * self.m1[k] + (1 - b1) * g
            self.m2[k] = b2 * self.m2[k] + (1 - b2) * g * g
            mh = self.m1[k] / (1 - b1 ** self.steps)
            vh = self.m2[k] / (1 - b2 ** self.steps)
            p[k] -= (lr * mh / (np.sqrt(vh) + 1e-8)).astype(np.float32)
        return loss

    def gradients(self, x: np.ndarray, extras: np.ndarray, y: np.ndarray, weight: np.ndarray
                  ) -> tuple[float, dict[str, np.ndarray]]:
        """A batch's mean weighted cross-entropy and its gradient for every parameter."""
        p = self.params
        acts, cache = x, []
        for i in range(len(self.layers)):
            w = p[f"conv{i}_weight"]
            cols, (n, h, wd) = columns(acts, w.shape[2], 2)
            pre = (cols @ flat_weight(w).T + p[f"conv{i}_bias"]).reshape(
                n, h, wd, w.shape[0])
            cache.append((cols, acts.shape, pre > 0))
            acts = np.maximum(pre, 0.0)
        flat = acts.transpose(0, 3, 1, 2).reshape(len(x), -1)
        h_pre = flat @ p["w1"] + p["b1"]
        hidden = np.maximum(h_pre, 0.0)
        joined = np.concatenate([hidden, extras], axis=1)
        s = joined @ p["w2"] + p["b2"]
        s -= s.max(axis=1, keepdims=True)
        e = np.exp(s)
        prob = e / e.sum(axis=1, keepdims=True)
        rows = np.arange(len(y))
        loss = float((-np.log(np.maximum(prob[rows, y], 1e-12)) * weight).mean())
        g_s = prob
        g_s[rows, y] -= 1.0
        g_s *= (weight / len(y))[:, None].astype(g_s.dtype)
        grads = {"w2": joined.T @ g_s, "b2": g_s.sum(axis=0)}
        g_hidden = (g_s @ p["w2"][:self.hidden].T) * (h_pre > 0)
        grads["w1"] = flat.T @ g_hidden
        grads["b1"] = g_hidden.sum(axis=0)
        g_acts = (g_hidden @ p["w1"].T).reshape(acts.shape[0], acts.shape[3], acts.shape[1],
                                                acts.shape[2]).transpose(0, 2, 3, 1)
        for i in reversed(range(len(self.layers))):
            cols, in_shape, alive = cache[i]
            g_w, g_b, g_in = _conv_backward(g_acts * alive, cols, p[f"conv{i}_weight"], 2,
                                            in_shape, need_input=i > 0)
            grads[f"conv{i}_weight"], grads[f"conv{i}_bias"] = g_w, g_b
            if g_in is not None:
                g_acts = g_in
        return loss, grads


def inputs(x: np.ndarray) -> np.ndarray:
    """Stored uint8 patches as the network reads them."""
    result: np.ndarray = x.astype(np.float32) / 128.0 - 1.0
    return result


def log_probs(p: np.ndarray) -> np.ndarray:
    from vision.patches import FLOOR

    result: np.ndarray = np.log(np.clip(p, FLOOR, 1.0)).astype(np.float32)
    return result


def train(data: dict[str, np.ndarray], *, epochs: int = 20, batch: int = 256, seed: int = 0,
          log: bool = False, layers: Sequence[tuple[int, int]] = PATCH_LAYERS,
          hidden: int = PATCH_HIDDEN, use_torch: bool = False, lr: float = 1e-3,
          init: PatchNetwork | None = None, jitter: float = 0.0) -> PatchNetwork:
    """Fit the patch network to collected examples (see `collect`), with these
    convolutions and dense units: in plain numpy, or in PyTorch (`lab.train_torch`,
    which can also go on from the weights of a network `init` of the same shape, and see
    each patch in other light and colours, `jitter`)."""
    from contracts.calibration import default_thresholds

    unsure = data["p"].max(axis=1) < default_thresholds().second_look_p
    weight = np.where(unsure, UNSURE_WEIGHT, 1.0)
    if init is not None and init.channels < data["x"].shape[3]:
        init = widened(init, data["x"].shape[3])
    if use_torch:
        from lab.train_torch import fit_torch

        return fit_torch(data["x"], log_probs(data["p"]), data["y"], weight, layers=layers,
                         hidden=hidden, classes=CLASSES, epochs=epochs, batch=batch,
                         seed=seed, lr=lr, init=init, log=log, jitter=jitter)
    if init is not None or lr != 1e-3 or jitter:
        raise ValueError("only the PyTorch trainer starts from a network, takes a rate or "
                         "jitters the light")
    return fit(data["x"], log_probs(data["p"]), data["y"], weight, _augment, epochs=epochs,
               batch=batch, seed=seed, log=log, layers=layers, hidden=hidden)


def widened(net: PatchNetwork, channels: int) -> PatchNetwork:
    """The network reading `channels` channels where it read fewer, the new ones with no
    weight: it answers as before until training teaches it to use them (the shipped network
    learned the calibration photo's patch this way, from the one that read the frame's
    alone)."""
    first = net.convs[0]
    weight = np.zeros((first.weight.shape[0], channels) + first.weight.shape[2:], np.float32)
    weight[:, :first.weight.shape[1]] = first.weight
    return replace(net, convs=(Conv(weight, first.bias, first.stride), *net.convs[1:]))


def layer_list(text: str) -> tuple[tuple[int, int], ...]:
    """`--layers`' value, "16:5,32:3,32:3": per convolution, channels and kernel size."""
    try:
        layers = tuple((int(a), int(b)) for a, b in (part.split(":") for part in text.split(",")))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(
            f"{text!r}: expected channels:kernel pairs such as 16:5,32:3,32:3") from exc
    if not layers or any(c < 1 or k < 1 or k % 2 == 0 for c, k in layers):
        raise argparse.ArgumentTypeError(f"{text!r}: channels >= 1 and odd kernel sizes")
    return layers


def fit(x: np.ndarray, extras: np.ndarray, y: np.ndarray, weight: np.ndarray,
        augment: Callable[[np.ndarray, np.random.Generator], np.ndarray], *,
        classes: int = CLASSES, epochs: int = 20, batch: int = 256, seed: int = 0,
        log: bool = False, layers: Sequence[tuple[int, int]] = LAYERS,
        hidden: int = HIDDEN) -> PatchNetwork:
    """Fit a patch network to stored uint8 patches `x` (see `inputs`), the further inputs
    of its output layer and the labels, each example counting by its weight; `augment`
    changes a batch of patches at random (what the picture may be like as well)."""
    rng = np.random.default_rng(seed)
    trainer = Trainer(rng, (x.shape[1], x.shape[2]), extras.shape[1], classes, layers, hidden,
                       x.shape[3])
    y = y.astype(np.int64)
    for epoch in range(epochs):
        started = time.perf_counter()
        lr = 1e-3 * 0.5 * (1 + np.cos(np.pi * epoch / epochs))
        order = rng.permutation(len(y))
        total = 0.0
        for start in range(0, len(y), batch):
            idx = np.sort(order[start:start + batch])
            total += trainer.step(inputs(augment(x[idx], rng)), extras[idx], y[idx],
                                  weight[idx], lr) * len(idx)
        if log:
            print(f"epoch {epoch + 1}/{epochs}: loss {total / len(y):.4f} "
                  f"({time.perf_counter() - started:.0f} s)", file=sys.stderr)
    return trainer.network()


def errors(net: PatchNetwork, data: dict[str, np.ndarray], below: float) -> tuple[int, int, int]:
    """Among examples whose cell-network top probability is below `below`: how many, how
    many the cell network gets wrong, how many the patch network does."""
    p, y = data["p"], data["y"]
    sel = np.flatnonzero(p.max(axis=1) < below)
    got = np.concatenate([
        net.proba(inputs(data["x"][sel[s:s + 2048]]), p[sel[s:s + 2048]]).argmax(axis=1)
        for s in range(0, len(sel), 2048)]) if len(sel) else np.zeros(0, np.int64)
    return len(sel), int((p[sel].argmax(axis=1) != y[sel]).sum()), int((got != y[sel]).sum())


def example_options(parser: argparse.ArgumentParser, epochs: int) -> None:
    """The options both patch-training commands add to `scene_options`."""
    parser.add_argument("--epochs", type=int, default=epochs)
    parser.add_argument("--cache", type=Path,
                        help="keep (or reuse) the collected examples in this .npz file")
    parser.add_argument("--hold-out", type=int, default=7, metavar="K",
                        help="train without every K-th scene and report on those (0: "
                             "train on all)")


def start_options(parser: argparse.ArgumentParser) -> None:
    """`--from MODEL` and `--lr`: go on from a network's weights (with `--torch`)."""
    parser.add_argument("--from", dest="start", type=Path, metavar="MODEL",
                        help="go on from this network's weights (with --torch)")
    parser.add_argument("--lr", type=float, default=1e-3,
                        help="the learning rate the cosine schedule starts from (with "
                             "--torch; default 0.001)")


def starting_network(parser: argparse.ArgumentParser, args: argparse.Namespace,
                     kind: str) -> PatchNetwork | None:
    """The network `--from` names (None without it); a usage error when it is not one, or
    when `--from` or `--lr` come without `--torch`."""
    if (args.start is not None or args.lr != 1e-3) and not args.torch:
        parser.error("--from and --lr need --torch")
    if args.start is None:
        return None
    try:
        return PatchNetwork.load(args.start)
    except (OSError, KeyError, ValueError, EOFError, zipfile.BadZipFile):
        parser.error(f"--from {args.start}: not a {kind} network (the .npz file this "
                     "command writes)")


def examples(args: argparse.Namespace,
             job: Callable[[SceneTask], tuple[np.ndarray, ...] | None] = _job,
             keys: tuple[str, ...] = PATCH_KEYS) -> dict[str, np.ndarray]:
    """The examples the options ask for: from `--cache` when it exists, else collected
    (see `collect`) and kept there when it is given."""
    if args.cache is not None and args.cache.exists():
        with np.load(args.cache) as stored:
            return {k: stored[k] for k in stored.files}
    data = collect(args.scenes, args.seed, args.jobs, log=True, job=job, keys=keys,
                   stills=args.scenes_from)
    extra = getattr(args, "hard_scenes", 0)
    if extra:
        start = getattr(args, "hard_start", None)
        more = collect(extra, args.seed, args.jobs, log=True, job=job, keys=keys,
                       indices=hard_scenes(args.scenes if start is None else start, extra))
        data = {k: np.concatenate([data[k], more[k]]) for k in data}
    if args.cache is not None:
        args.cache.parent.mkdir(parents=True, exist_ok=True)
        np.savez(args.cache, **data)
    return data


def mixed(data: dict[str, np.ndarray], path: Path) -> dict[str, np.ndarray]:
    """`data` with the examples kept in the cache `path` added, their scenes numbered on
    after `data`'s (so that `--hold-out` keeps whole scenes of both out)."""
    try:
        with np.load(path) as stored:
            more = {k: stored[k] for k in stored.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
        raise SystemExit(f"error: --mix {path}: not a cache of examples ({exc})") from None
    if set(more) != set(data) or more["x"].shape[1:] != data["x"].shape[1:]:
        raise SystemExit(f"error: --mix {path}: examples of another kind or shape")
    more["scene"] = more["scene"] + int(data["scene"].max()) + 1
    return {k: np.concatenate([data[k], more[k]]) for k in data}


def mix_option(parser: argparse.ArgumentParser) -> None:
    """`--mix CACHE`: learn from another run's kept examples too (see `mixed`)."""
    parser.add_argument("--mix", type=Path, action="append", default=[], metavar="CACHE",
                        help="also learn from the examples another run kept in its --cache "
                             "(another scene source's, say); repeatable")


def held_out(data: dict[str, np.ndarray], every: int) -> np.ndarray:
    """Which examples are from every `every`-th scene (none when it is 0)."""
    if not every:
        return np.zeros(len(data["y"]), bool)
    result: np.ndarray = data["scene"] % every == 0
    return result


def write(net: PatchNetwork, path: Path) -> int:
    """Save a trained network and say where (a command's last step: returns its status)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    net.save(path)
    print(f"written to {path}", file=sys.stderr)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lab.train_patches",
                                     description=__doc__.splitlines()[0])
    scene_options(parser, 8000, PATCH_MODEL.parent, seed=PATCH_SEED)
    example_options(parser, 30)
    parser.add_argument("--torch", action="store_true",
                        help="train in PyTorch (installed apart: pip install torch==2.13.0), "
                             "several times quicker than in numpy")
    parser.add_argument("--layers", type=layer_list, default=PATCH_LAYERS, metavar="C:K,...",
                        help="the convolutions' channels and kernel sizes (default "
                             f"{','.join(f'{c}:{k}' for c, k in PATCH_LAYERS)})")
    mix_option(parser)
    parser.add_argument("--tile-colours", action="store_true",
                        help="the network also reads the learned light and dark tile "
                             "colours, beside each patch (twelve channels)")
    parser.add_argument("--jitter", type=float, default=0.0, metavar="SPREAD",
                        help="with --torch: also show each patch in other light and "
                             "colours, its colour ratios scaled per channel by gains of "
                             "this log-spread (e.g. 0.15; default 0: none)")
    parser.add_argument("--hidden", type=int, default=PATCH_HIDDEN,
                        help=f"the dense layer's units (default {PATCH_HIDDEN})")
    parser.add_argument("--hard-scenes", type=int, default=0, metavar="N",
                        help="also N scenes of the hard setups (" + ", ".join(HARD_SETUPS)
                             + "), the seed's next after --scenes")
    parser.add_argument("--hard-start", type=int, metavar="I",
                        help="take the hard setups' scenes from scene I on (default: "
                             "--scenes)")
    start_options(parser)
    args = parser.parse_args(argv)
    check_scene_options(parser, args)
    if args.jitter and not args.torch:
        parser.error("--jitter needs --torch")
    init = starting_network(parser, args, "patch")
    cv2.setNumThreads(1)
    data = examples(args)
    for path in args.mix:
        data = mixed(data, path)
    if args.tile_colours:
        data = with_tile_planes(data)
    print(f"patches: {len(data['y'])} examples, classes "
          f"{np.bincount(data['y'], minlength=CLASSES).tolist()}", file=sys.stderr)
    held = held_out(data, args.hold_out)
    train_part = {k: v[~held] for k, v in data.items()}
    net = train(train_part, epochs=args.epochs, log=True, layers=args.layers,
                hidden=args.hidden, use_torch=args.torch, lr=args.lr, init=init,
                jitter=args.jitter)
    if held.any():
        from contracts.calibration import default_thresholds

        n, before, after = errors(net, {k: v[held] for k, v in data.items()},
                                  default_thresholds().second_look_p)
        print(f"held-out scenes, {n} unsure cells: the cell network gets {before} wrong, "
              f"the patch network {after}", file=sys.stderr)
    return write(net, args.out / PATCH_MODEL.name)


if __name__ == "__main__":
    raise SystemExit(main())
