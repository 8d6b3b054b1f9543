"""Train the deck network on generated scenes: `python -m lab.train_decks`.

Scenes are generated as for `lab.train` (every setup in turn, half of them with the
room's light changed since calibration), but from their own seeds (`DECK_SEED`): the
bridge network has seen `lab.train`'s scenes, and is surer of them than of new ones. Each
is read the way `vision.pipeline.observe` reads it, up to the bridge network's
probabilities. Every candidate the bridge network gives between `TRAIN_LOW` and
`vision.decks.HIGH` becomes an example (a wider range than the pipeline looks at again, from
`vision.decks.LOW`, so that the range can be chosen after training), and so does every one
it takes for a bridge and a few of the others, so that the network also sees ordinary decks
and ordinary board. Candidates a hand covers are left out.

The network (`vision.patches.PatchNetwork`, on `vision.decks` patches) is trained as the
patch network is (`lab.train_patches.fit`), with the patches mirrored along and across
at random (a bridge looks alike from either end and either side) and shifted by up to two
pixels, and written to `vision/models/decks.npz` (or into `--out`). With `--scenes-from DIR`
the scenes are a still set's images (see `lab.train`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np

from lab.train import NO_BACKGROUND, check_scene_options, measure_scene, scene_options
from lab.train_patches import (
    HIDDEN,
    LAYERS,
    SceneTask,
    example_options,
    examples,
    fit,
    held_out,
    inputs,
    mix_option,
    mixed,
    start_options,
    starting_network,
    write,
)
from vision.decks import DECK_MODEL, HIGH, LOW, deck_extras, deck_patches
from vision.patches import PatchNetwork

DECK_SEED = 5000
TRAIN_LOW = 1e-5
"""The lowest bridge-network probability of the candidates that are all examples."""
SURE_SHARE = 0.03
"""The share of the candidates the bridge network is sure are no bridge that are examples."""
UNSURE_WEIGHT = 3.0
"""How much more a candidate the bridge network is unsure of (from `TRAIN_LOW`) counts in
training."""
KEYS = ("x", "p", "kind", "y", "pair")


def read_scene(seed: int, i: int, stills: Path | None = None) -> tuple[np.ndarray, ...] | None:
    """One scene's examples: patches (uint8, `(v + 1) * 128` of `deck_patches`' values),
    the bridge network's probabilities, the bridges' kinds (one-hot), the labels (1: a
    bridge) and the candidates' indices in the plan's pair list."""
    from vision.cells import cell_name, cells_under, parse_cell
    from vision.classify import classify_cells
    from vision.learned import (
        background_change,
        bridge_network,
        cell_features,
        cell_network,
        foot_candidates,
    )
    from vision.read_bridges import bridge_probabilities
    from vision.read_cells import looked_cells

    cells, bridges = cell_network(), bridge_network()
    read = (measure_scene(seed, i, stills) if cells is not None and bridges is not None
            else None)
    if cells is None or bridges is None or read is None:
        return None
    frame, reader, plan, m, model = read
    if np.random.default_rng([seed, i, 2]).random() < NO_BACKGROUND:
        m = replace(m, background=None)  # as `ponte read` without a calibration
        cells = cell_network(scratch=True)
        if cells is None:
            return None
    settings = reader.settings
    reading = classify_cells(settings, m.sub_lab, model, m.rim_lab)
    feats = cell_features(m, model)
    probs, model, _, ends = looked_cells(settings, plan, m, model, reading, cells, feats)
    scored = bridge_probabilities(
        settings, plan.bridges, m, model, probs, bridges, ends,
        foot_candidates(settings, plan.bridges, probs, background_change(feats), ends))
    if scored is None:
        return None
    p, keep = scored
    pick = ((p > TRAIN_LOW) & (p < HIGH)) | (p >= 0.5) | (
        np.random.default_rng([seed, i, 4]).random(len(p)) < SURE_SHARE)
    # A candidate a hand covers any of is left out: a bridge under a hand is not there to
    # see (the pipeline does not report it), and learning to find it would teach the
    # network that a hand is a bridge.
    hidden = {parse_cell(name) for name in frame.occluded_cells}
    candidates = [plan.bridges.pairs[int(j)] for j in keep]
    chosen = np.array([n for n in np.flatnonzero(pick)
                       if not hidden & {*candidates[n], *cells_under(*candidates[n])}],
                      np.int64)
    wanted = {tuple(sorted(t)) for t in frame.bridges}
    pairs = [candidates[n] for n in chosen]
    labels = np.array([tuple(sorted((cell_name(*a), cell_name(*b)))) in wanted
                       for a, b in pairs], np.int64)
    kinds = plan.bridges.kinds
    assert kinds is not None
    patches = deck_patches(settings, plan.sampling, m.topdown, m.light_coef, model,
                           np.array(pairs, np.int64).reshape(-1, 2, 2))
    quantised = np.clip(np.round((patches + 1.0) * 128.0), 0, 255).astype(np.uint8)
    return (quantised, p[chosen].astype(np.float32), kinds[keep[chosen]].astype(np.float32),
            labels, keep[chosen])


def _job(task: SceneTask) -> tuple[np.ndarray, ...] | None:
    return read_scene(*task)


def augment(x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The batch mirrored along and across at random, and shifted a little."""
    if rng.random() < 0.5:
        x = x[:, :, ::-1]
    if rng.random() < 0.5:
        x = x[:, ::-1]
    dy, dx = (int(v) for v in rng.integers(-2, 3, 2))
    return np.ascontiguousarray(np.roll(x, (dy, dx), axis=(1, 2)))


def train(data: dict[str, np.ndarray], *, epochs: int = 40, seed: int = 0,
          log: bool = False, use_torch: bool = False, lr: float = 1e-3,
          init: PatchNetwork | None = None) -> PatchNetwork:
    """Fit the deck network to collected examples (see `read_scene`): in plain numpy, or
    in PyTorch (`lab.train_torch`, which can also go on from `init`'s weights)."""
    p = data["p"]
    weight = np.where((p > TRAIN_LOW) & (p < HIGH), UNSURE_WEIGHT, 1.0)
    extras = deck_extras(p, data["kind"])
    if use_torch:
        from lab.train_torch import fit_torch

        return fit_torch(data["x"], extras, data["y"], weight, layers=LAYERS, hidden=HIDDEN,
                         classes=2, epochs=epochs, seed=seed, turns=False, lr=lr, init=init,
                         log=log)
    return fit(data["x"], extras, data["y"], weight, augment, classes=2, epochs=epochs,
               seed=seed, log=log)


def errors(net: PatchNetwork, data: dict[str, np.ndarray]) -> tuple[int, int, int]:
    """Among examples the pipeline looks at again: how many, how many the bridge network
    gets wrong (at 0.5), how many the deck network does."""
    p, y = data["p"], data["y"]
    sel = np.flatnonzero((p > LOW) & (p < HIGH))
    got = np.concatenate([
        net.scores(inputs(data["x"][sel[s:s + 2048]]),
                   deck_extras(p[sel[s:s + 2048]], data["kind"][sel[s:s + 2048]]))[:, 1]
        for s in range(0, len(sel), 2048)]) if len(sel) else np.zeros(0)
    return (len(sel), int(((p[sel] >= 0.5) != (y[sel] == 1)).sum()),
            int(((got >= 0.5) != (y[sel] == 1)).sum()))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lab.train_decks",
                                     description=__doc__.splitlines()[0])
    scene_options(parser, 8000, DECK_MODEL.parent, seed=DECK_SEED)
    example_options(parser, 40)
    parser.add_argument("--torch", action="store_true",
                        help="train in PyTorch (installed apart: pip install torch==2.13.0)")
    mix_option(parser)
    start_options(parser)
    args = parser.parse_args(argv)
    check_scene_options(parser, args)
    init = starting_network(parser, args, "deck")
    cv2.setNumThreads(1)
    data = examples(args, _job, KEYS)
    for path in args.mix:
        data = mixed(data, path)
    print(f"decks: {len(data['y'])} examples, {int(data['y'].sum())} bridges",
          file=sys.stderr)
    held = held_out(data, args.hold_out)
    net = train({k: v[~held] for k, v in data.items()}, epochs=args.epochs, log=True,
                use_torch=args.torch, lr=args.lr, init=init)
    if held.any():
        n, before, after = errors(net, {k: v[held] for k, v in data.items()})
        print(f"held-out scenes, {n} unsure candidates: the bridge network gets {before} "
              f"wrong, the deck network {after}", file=sys.stderr)
    return write(net, args.out / DECK_MODEL.name)


if __name__ == "__main__":
    raise SystemExit(main())
