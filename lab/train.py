"""Train the cell and bridge networks on generated scenes: `python -m lab.train`.

Scenes come from `lab.synth` (every setup, round-robin), seeded apart from those
`ponte eval vision` reads (training uses seed sequences starting at 1000, far from the
evaluation's), and are read the way the live loop reads them: a
`BoardReader` calibrated on the same scene with the board empty, fed the frame's JPEG.
Every cell becomes one example (empty / light / dark, or hidden when a hand covers it in
the truth) and every candidate pair the cell network's reading allows (see
`vision.learned.candidate_features`) becomes one bridge example. The networks
(`vision.learned.Network`) are trained with Adam on a cross-entropy loss, in plain numpy
(with `--torch`, the cell network in PyTorch: the same training, about ten times quicker),
and written to `vision/models/` (or `--out`). The cell network may also learn from more
scenes of the setups nearly all wrong cells are in (`--hard-scenes`), and keep every K-th
scene out to count how many of its cells it reads wrong (`--hold-out K`).

With `--scenes-from DIR` the scenes are instead the images of a still set (a folder as
`lab.sets` reads it, such as the `raytrace` train split `python -m lab.raytrace.trainset`
renders), each read by a reader calibrated on its table's empty photo as `ponte eval set`
calibrates it: so a network is trained on one source and measured on the other. Every
trainer (`lab.train_patches`, `lab.train_decks`) takes its scenes through `measure_scene`
and has the option.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cache, lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import cv2
import numpy as np

from contracts.calibration import ColourModel
from vision.cells import parse_cell
from vision.errors import VisionError
from vision.learned import (
    BACKGROUND_AT,
    BRIDGE_MODEL,
    CELL_CLASSES,
    CELL_MODEL,
    SCRATCH_CELL_MODEL,
    Network,
    background_change,
    cell_features,
    foot_candidates,
    merge_networks,
    model_file,
)

if TYPE_CHECKING:
    from contracts.calibration import Calibration
    from vision.measure import Measurement, Plan
    from vision.tracking import BoardReader

TRAIN_SEED = 1000


@dataclass(frozen=True)
class Raw:
    """One scene's cell measurements (what `cell_features` reads) and its colour model,
    kept so that features can be changed without generating the scenes again."""

    sub_lab: np.ndarray
    rim_lab: np.ndarray
    texture: np.ndarray
    edges: np.ndarray
    model: np.ndarray  # (5, 3): empty, ring, light, dark, bridge; NaN where not learned
    background: np.ndarray  # (100, 9, 3): the bare board seen at calibration; NaN: unknown

    def colours(self) -> ColourModel:
        def lab(row: np.ndarray) -> tuple[float, float, float] | None:
            return None if np.isnan(row).any() else (float(row[0]), float(row[1]), float(row[2]))

        empty, ring = lab(self.model[0]), lab(self.model[1])
        assert empty is not None and ring is not None
        return ColourModel(empty, ring, lab(self.model[2]), lab(self.model[3]),
                           lab(self.model[4]))


def _model_array(model: ColourModel) -> np.ndarray:
    return np.array([c if c is not None else (np.nan,) * 3
                     for c in (model.empty, model.ring, model.light, model.dark, model.bridge)],
                    np.float64)


@dataclass(frozen=True)
class Truth:
    """What the trainers learn of a scene: its board (rows from the top, as `lab.synth`
    draws them), its bridges (pairs of cell names) and the cells a hand hides."""

    board: tuple[str, ...]
    bridges: tuple[tuple[str, str], ...]
    occluded_cells: frozenset[str]


def measure_scene(seed: int, i: int, stills: Path | None = None
                  ) -> tuple[Truth, BoardReader, Plan, Measurement, ColourModel] | None:
    """Generated scene `i` of `seed` (the setups in turn), read the way the live loop reads
    it up to its measurements: its truth, the reader and what `measure_frame` gives; None
    when the scene cannot be read. Half the scenes are read with the room's light changed
    a little since calibration.

    With `stills` (a still set's folder), scene `i` is the set's `i`-th image instead, read
    by a reader calibrated on its empty photo as `ponte eval set` calibrates it
    (`lab.sets.calibration_of`); `seed` then seeds only the trainers' own random choices."""
    if stills is not None:
        return _measure_still(stills, i)
    from lab.evaluate import tracker_for
    from lab.synth import SETUPS, random_spec, render

    names = list(SETUPS)
    spec = random_spec(np.random.default_rng([seed, i]), names[i % len(names)])
    frame = render(spec)
    rng = np.random.default_rng([seed, i, 1])
    reader = tracker_for(spec, frame, relight=rng if rng.random() < 0.5 else None)
    if reader is None:
        return None
    data = frame.encoded or cv2.imencode(".jpg", frame.image)[1].tobytes()
    truth = Truth(frame.board, tuple(frame.bridges), frame.occluded_cells)
    return _measured(truth, reader, data)


def _measured(truth: Truth, reader: BoardReader, data: bytes
              ) -> tuple[Truth, BoardReader, Plan, Measurement, ColourModel] | None:
    try:
        plan, m, model = reader.measure_frame(data)
    except VisionError:
        return None
    return truth, reader, plan, m, model


@cache
def still_records(folder: Path) -> tuple[dict[str, Any], ...]:
    """The truth records of the still set in `folder` (`lab.sets.load_set`), read once a
    process."""
    from lab.sets import load_set

    return tuple(load_set(folder))


@lru_cache(maxsize=4)
def _still_calibration(folder: Path, empty: str) -> Calibration | None:
    """The calibration of one empty photo of the set (its images come table by table, so
    a few are enough)."""
    from lab.sets import calibration_of

    record = next(r for r in still_records(folder) if r["empty"] == empty)
    calibration: Calibration | None = calibration_of(folder, record)
    return calibration


def _measure_still(folder: Path, i: int
                   ) -> tuple[Truth, BoardReader, Plan, Measurement, ColourModel] | None:
    from vision.tracking import BoardReader

    record = still_records(folder)[i]
    calibration = _still_calibration(folder, str(record["empty"]))
    if calibration is None:
        return None
    truth = Truth(tuple(record["board"]), tuple((a, b) for a, b in record["bridges"]),
                  frozenset(record.get("occluded_cells", ())))
    return _measured(truth, BoardReader(calibration), (folder / record["image"]).read_bytes())


def scene_options(parser: argparse.ArgumentParser, scenes: int, out: Path,
                  seed: int = TRAIN_SEED) -> None:
    """The options of every training command: how many scenes, their seed or the still set
    they are taken from, where the model goes and how many processes read the scenes
    (`check_scene_options` completes them once parsed)."""
    parser.add_argument("--scenes", type=int,
                        help=f"scenes to generate (default {scenes}); with --scenes-from, "
                             "the first N of the set's images (default all)")
    parser.add_argument("--seed", type=int, default=seed)
    parser.add_argument("--scenes-from", type=Path, metavar="DIR",
                        help="take the scenes from this still set (a folder with "
                             "truth.jsonl, such as python -m lab.raytrace.trainset writes) "
                             "instead of generating them")
    parser.add_argument("--out", type=Path, default=out,
                        help=f"the folder the model is written to (default {out})")
    parser.add_argument("--jobs", type=int, default=2, help="processes (default 2)")
    parser.set_defaults(generated_scenes=scenes)


def check_scene_options(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Settle `args.scenes` (the default, or what the still set holds) and refuse options
    that draw more `lab.synth` scenes alongside a still set."""
    if args.scenes_from is None:
        if args.scenes is None:
            args.scenes = args.generated_scenes
        return
    if getattr(args, "more_seeds", None) or getattr(args, "hard_scenes", 0):
        parser.error("--more-seeds and --hard-scenes generate lab.synth scenes: not with "
                     "--scenes-from")
    try:
        count = len(still_records(args.scenes_from))
    except FileNotFoundError as exc:
        parser.error(f"--scenes-from: {exc}")
    args.scenes = count if args.scenes is None else min(args.scenes, count)


def read_scene(seed: int, i: int, cells: Network | None, stills: Path | None = None
               ) -> tuple[object, ...] | None:
    """One scene (`measure_scene`) read up to the classifiers' inputs: the raw cell
    measurements and labels, and (given the cell network) the bridge candidates' features
    and labels."""
    from vision.cells import cell_name
    from vision.read_bridges import bridge_candidates

    read = measure_scene(seed, i, stills)
    if read is None:
        return None
    frame, reader, plan, m, model = read
    labels = np.zeros(100, np.int64)
    for r_top, row in enumerate(frame.board):
        for f, ch in enumerate(row):
            labels[(9 - r_top) * 10 + f] = {".": 0, "L": 1, "D": 2}[ch]
    for name in frame.occluded_cells:
        f, r = parse_cell(name)
        labels[r * 10 + f] = 3
    background = m.background if m.background is not None else np.full((100, 9, 3), np.nan)
    raw = Raw(m.sub_lab.astype(np.float32), m.rim_lab.astype(np.float32),
              m.texture.astype(np.float32), m.edges.astype(np.float32), _model_array(model),
              background.astype(np.float32))
    if cells is None:
        return raw, labels
    if np.random.default_rng([seed, i, 2]).random() < NO_BACKGROUND:
        m = replace(m, background=None)  # as `ponte read` without a calibration
        scratch = model_file(Network.load, SCRATCH_CELL_MODEL)  # what `observe` reads it with
        if scratch is not None and scratch.mean.shape == cells.mean.shape:
            cells = scratch
    cx = cell_features(m, model)
    probs = cells.proba(cx)
    feats, keep = bridge_candidates(
        reader.settings, plan.bridges, m, model, probs,
        extra=foot_candidates(reader.settings, plan.bridges, probs, background_change(cx)))
    wanted = {tuple(sorted(t)) for t in frame.bridges}
    bridge_labels = np.array([
        tuple(sorted((cell_name(*plan.bridges.pairs[j][0]), cell_name(*plan.bridges.pairs[j][1]))))
        in wanted for j in keep], np.float64)
    return raw, labels, feats, bridge_labels


NO_BACKGROUND = 0.3
"""The share of scenes whose bridge candidates are read without the bare board seen before
(the cell network learns this share too, in `cell_examples`)."""


def save_raw(path: Path, scenes: Sequence[tuple[Raw, np.ndarray]]) -> None:
    """Keep the scenes' raw cell measurements and labels in one file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(
        path, **{name: np.stack([getattr(raw, name) for raw, _ in scenes])
                 for name in _RAW_FIELDS},
        labels=np.stack([labels for _, labels in scenes]))


_RAW_FIELDS = ("sub_lab", "rim_lab", "texture", "edges", "model", "background")


def load_raw(path: Path) -> list[tuple[Raw, np.ndarray]]:
    with np.load(path) as data:
        arrays = {k: data[k] for k in (*_RAW_FIELDS, "labels") if k in data}
    count = len(arrays["labels"])
    if "background" not in arrays:  # a cache written without the bare board
        arrays["background"] = np.full((count, 100, 9, 3), np.nan, np.float32)
    return [(Raw(*(arrays[k][n].astype(np.float64) for k in _RAW_FIELDS)),
             arrays["labels"][n]) for n in range(count)]


def cell_examples(
    scenes: Sequence[tuple[Raw, np.ndarray]], *, vary: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """The cell network's inputs and labels for these scenes.

    With `vary` (training), some scenes lose part or all of their background, as when the
    calibration photo had tiles on it or there is none, so the network learns to read
    cells without it too."""
    rng = np.random.default_rng(5)
    x = []
    for raw, _ in scenes:
        if vary:
            u = rng.random()
            background = raw.background.copy()
            if u < 0.3:
                background[:] = np.nan
            elif u < 0.5:
                background[rng.random(len(background)) < 0.4] = np.nan
            raw = replace(raw, background=background)
        x.append(cell_features(raw, raw.colours()))
    y = np.concatenate([labels for _, labels in scenes])
    return np.concatenate(x), y


SHADE_WEIGHTS = (3.0, 6.0)
"""How much more a cell counts in training where it is much darker than the bare board
seen there before: a deep shadow on bare board or a dark tile. Such cells are rare in the
scenes (a low window's shadows) and easily taken for one another. One cell network is
trained per weight; the shipped one averages them."""


def shade_weights(x: np.ndarray, weight: float) -> np.ndarray:
    """Per example (cell features), its weight in training: `weight` where the bare board
    is known and the cell is at most 0.75 times as light, else 1."""
    start = BACKGROUND_AT
    known = x[:, start + 9] > 0
    darker = x[:, start + 8] < np.log(0.75)
    return np.where(known & darker, weight, 1.0)


def _job(task: tuple[int, int, Path | None, Path | None]) -> tuple[object, ...] | None:
    seed, i, cell_path, stills = task
    cells = Network.load(cell_path) if cell_path is not None else None
    return read_scene(seed, i, cells, stills)


def collect(count: int, seed: int, jobs: int, cell_path: Path | None = None,
            log: bool = False, indices: Sequence[int] | None = None,
            stills: Path | None = None) -> list[tuple[object, ...]]:
    """Read `count` scenes (in `jobs` processes): the first of the seed (or of the still
    set `stills`), or these."""
    import multiprocessing

    chosen = range(count) if indices is None else indices
    tasks = [(seed, i, cell_path, stills) for i in chosen]
    out: list[tuple[object, ...]] = []
    started = time.perf_counter()
    with multiprocessing.get_context("fork").Pool(jobs) as pool:
        for n, result in enumerate(pool.imap(_job, tasks, chunksize=4), start=1):
            if result is not None:
                out.append(result)
            if log and n % 100 == 0:
                rate = (time.perf_counter() - started) / n
                print(f"{n}/{len(tasks)} scenes ({rate * 1000:.0f} ms each)", file=sys.stderr)
    return out


def train(x: np.ndarray, y: np.ndarray, classes: int, *, hidden: int = 64, epochs: int = 40,
          seed: int = 0, weight: np.ndarray | None = None) -> Network:
    """Fit a one-hidden-layer network (softmax over `classes`; 1: sigmoid) with Adam."""
    rng = np.random.default_rng(seed)
    mean = x.mean(axis=0)
    scale = x.std(axis=0) + 1e-6
    xs = (x - mean) / scale
    n, d = xs.shape
    outputs = classes if classes > 1 else 1
    params = {
        "w1": rng.normal(0, np.sqrt(2 / d), (d, hidden)), "b1": np.zeros(hidden),
        "w2": rng.normal(0, np.sqrt(1 / hidden), (hidden, outputs)), "b2": np.zeros(outputs),
    }
    m1 = {k: np.zeros_like(v) for k, v in params.items()}
    m2 = {k: np.zeros_like(v) for k, v in params.items()}
    lr, b1, b2, step = 3e-3, 0.9, 0.999, 0
    sample_w = weight if weight is not None else np.ones(n)
    for epoch in range(epochs):
        order = rng.permutation(n)
        if epoch == epochs * 3 // 4:
            lr /= 5
        for start in range(0, n, 256):
            idx = order[start:start + 256]
            xb, yb, wb = xs[idx], y[idx], sample_w[idx]
            h_pre = xb @ params["w1"] + params["b1"]
            h = np.maximum(h_pre, 0)
            s = h @ params["w2"] + params["b2"]
            if outputs == 1:
                p = 1 / (1 + np.exp(-np.clip(s[:, 0], -40, 40)))
                g_s = ((p - yb) * wb)[:, None]
            else:
                s = s - s.max(axis=1, keepdims=True)
                p = np.exp(s)
                p /= p.sum(axis=1, keepdims=True)
                g_s = p.copy()
                g_s[np.arange(len(yb)), yb] -= 1
                g_s *= wb[:, None]
            g_s /= len(idx)
            grads = {"w2": h.T @ g_s, "b2": g_s.sum(axis=0)}
            g_h = (g_s @ params["w2"].T) * (h_pre > 0)
            grads["w1"] = xb.T @ g_h + 1e-4 * params["w1"]
            grads["b1"] = g_h.sum(axis=0)
            step += 1
            for k in params:
                m1[k] = b1 * m1[k] + (1 - b1) * grads[k]
                m2[k] = b2 * m2[k] + (1 - b2) * grads[k] ** 2
                mh = m1[k] / (1 - b1 ** step)
                vh = m2[k] / (1 - b2 ** step)
                params[k] -= lr * mh / (np.sqrt(vh) + 1e-8)
    return Network(mean, scale, params["w1"], params["b1"], params["w2"], params["b2"])


HARD_SETUPS = ("warm-lamp-shadows", "window-daylight", "dim-noisy-jpeg")
"""The setups nearly all wrong cells are in (window light and shadow, a warm lamp's glare,
dim noisy frames); `--hard-scenes` adds scenes of these alone."""


def hard_scenes(start: int, count: int) -> list[int]:
    """`count` scene indices from `start` on whose setup (`measure_scene` takes the setups
    in turn) is one of `HARD_SETUPS`."""
    from lab.synth import SETUPS

    names = list(SETUPS)
    hard = {names.index(name) for name in HARD_SETUPS}
    found: list[int] = []
    i = start
    while len(found) < count:
        if i % len(names) in hard:
            found.append(i)
        i += 1
    return found


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lab.train",
                                     description=__doc__.splitlines()[0])
    scene_options(parser, 900, CELL_MODEL.parent)
    parser.add_argument("--hidden", type=int, default=96, help="cell network's hidden units")
    parser.add_argument("--epochs", type=int, default=50, help="cell network's epochs")
    parser.add_argument("--shade-weights", type=lambda v: tuple(float(w) for w in v.split(",")),
                        default=SHADE_WEIGHTS, metavar="W,W",
                        help="one cell network per weight of cells much darker than the bare "
                             "board, averaged (default 3,6)")
    parser.add_argument("--cache", type=Path,
                        help="keep (or reuse) the scenes' raw cell measurements here")
    parser.add_argument("--more-seeds", type=int, nargs="+", default=[], metavar="SEED",
                        help="the cell network learns from as many scenes of each of these "
                             "seeds besides (cached as raw-SEED.npz)")
    parser.add_argument("--hard-scenes", type=int, default=0, metavar="N",
                        help="the cell network learns from N more scenes of the hard setups "
                             "(HARD_SETUPS; cached as raw-hard.npz)")
    parser.add_argument("--hold-out", type=int, default=0, metavar="K",
                        help="keep every K-th scene out of the cell network's training and "
                             "count its cells read wrong, with the shipped network's beside")
    parser.add_argument("--torch", action="store_true",
                        help="train the cell network in PyTorch (installed apart: pip install "
                             "torch==2.13.0), about ten times quicker")
    parser.add_argument("--cells-only", action="store_true",
                        help="train the cell network only (keeps the bridge network)")
    parser.add_argument("--bridges-only", action="store_true",
                        help="train the bridge network only, on the cell network in --out")
    args = parser.parse_args(argv)
    check_scene_options(parser, args)
    cv2.setNumThreads(1)
    args.out.mkdir(parents=True, exist_ok=True)
    cell_path = args.out / CELL_MODEL.name
    if not args.bridges_only:
        _train_cells(args, cell_path)
    elif not cell_path.exists():
        parser.error(f"--bridges-only needs a cell network in {args.out}")
    if args.cells_only:
        return 0
    read = collect(args.scenes, args.seed, args.jobs, cell_path, log=True,
                   stills=args.scenes_from)
    pairs = [(np.asarray(c[2]), np.asarray(c[3])) for c in read]
    bx = np.concatenate([f for f, labels in pairs if len(labels)])
    by = np.concatenate([labels for _, labels in pairs if len(labels)])
    print(f"bridges: {len(by)} examples, {int(by.sum())} bridges", file=sys.stderr)
    bridges = train(bx, by, 1, hidden=48)
    got = bridges.proba(bx) > 0.5
    print(f"bridges: {int((got != (by == 1)).sum())} of {len(by)} training examples wrong",
          file=sys.stderr)
    bridges.save(args.out / BRIDGE_MODEL.name)
    print(f"written to {args.out}", file=sys.stderr)
    return 0


def _train_cells(args: argparse.Namespace, cell_path: Path) -> None:
    """The cell network, from the cached raw measurements when there are some."""
    scenes = _raw_scenes(args, args.seed, "raw.npz")
    for seed in args.more_seeds:
        scenes += _raw_scenes(args, seed, f"raw-{seed}.npz")
    if args.hard_scenes:
        scenes += _raw_scenes(args, args.seed, "raw-hard.npz",
                              hard_scenes(args.scenes, args.hard_scenes))
    kept = scenes[::args.hold_out] if args.hold_out else []
    if args.hold_out:
        scenes = [s for k, s in enumerate(scenes) if k % args.hold_out]
    x, y = cell_examples(scenes, vary=True)
    print(f"cells: {len(y)} examples, classes {np.bincount(y, minlength=4).tolist()}",
          file=sys.stderr)
    # One network per weight for the shaded cells, averaged: they err in different places.
    if args.torch:
        from lab.train_torch import fit_cells_torch

        nets = [fit_cells_torch(x, y, CELL_CLASSES, hidden=args.hidden, epochs=args.epochs,
                                weight=shade_weights(x, w), seed=k, log=True)
                for k, w in enumerate(args.shade_weights)]
    else:
        nets = [train(x, y, CELL_CLASSES, hidden=args.hidden, epochs=args.epochs,
                      weight=shade_weights(x, w)) for w in args.shade_weights]
    cells = merge_networks(nets)
    wrong = int((cells.proba(x).argmax(axis=1) != y).sum())
    print(f"cells: {wrong} of {len(y)} training examples wrong", file=sys.stderr)
    if kept:
        xk, yk = cell_examples(kept)
        shipped = Network.load(CELL_MODEL) if CELL_MODEL.exists() else None
        for name, net in (("this network", cells), ("the shipped one", shipped)):
            if net is not None and net.mean.shape[0] == xk.shape[1]:
                missed = int((net.proba(xk).argmax(axis=1) != yk).sum())
                print(f"cells held out: {name} reads {missed} of {len(yk)} wrong",
                      file=sys.stderr)
    cells.save(cell_path)


def _raw_scenes(args: argparse.Namespace, seed: int, name: str,
                indices: Sequence[int] | None = None) -> list[tuple[Raw, np.ndarray]]:
    """`args.scenes` scenes of this seed (or these of it) read up to the cell network's
    inputs: from the cache (`args.cache / name`) when it is there, else generated (and
    cached)."""
    raw_path = args.cache / name if args.cache is not None else None
    if raw_path is not None and raw_path.exists():
        return load_raw(raw_path)
    read = collect(args.scenes, seed, args.jobs, log=True, indices=indices,
                   stills=args.scenes_from)
    scenes = [(c[0], np.asarray(c[1])) for c in read if isinstance(c[0], Raw)]
    if raw_path is not None:
        save_raw(raw_path, scenes)
    return scenes


if __name__ == "__main__":
    raise SystemExit(main())
