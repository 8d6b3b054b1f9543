"""Render the `raytrace` train split into a cache folder; resumable.

`python -m lab.raytrace.trainset [--images 1000] [--quality draft] [--seed S] [--out DIR]`

The train split is seed `TRAIN_SEED` (see `lab/README.md`, "Evaluation protocol"; `--seed`
draws another part of it, from 1000 up, for a network that must not learn from the scenes
another one was fitted on, as the patch and deck networks), every setup in turn over the
tables, `--per-table` positions on each. It is a still set as
`lab.raytrace.stills` writes it (the same function: a stopped run picks up where it was, and
a larger `--images` adds tables to the same folder), kept outside the repository in
`default_folder` (keyed by the generator's version, the seed and the quality), so that the
trainers read it with `--scenes-from DIR`. Rendering about a thousand images takes hours on
two cores; it can run in the background: `nice -n 15 python -m lab.raytrace.trainset &`.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from lab.raytrace import VERSION
from lab.raytrace.model import SETUPS
from lab.raytrace.render import Quality
from lab.raytrace.stills import QUALITIES, gather, write_stills

TRAIN_SEED = 1000
"""The seed of the `raytrace` train split (apart from validation's 1 and test's 2)."""


def default_folder(environ: Mapping[str, str], quality: str, seed: int = TRAIN_SEED) -> Path:
    """Where the train split of this generator's version is kept at this quality:
    `$XDG_CACHE_HOME/ponte-lab/` (or `~/.cache/ponte-lab/`)."""
    cache = environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    name = f"raytrace-train-v{VERSION}-seed{seed}"
    return Path(cache).expanduser() / "ponte-lab" / (
        name if quality == "fine" else f"{name}-{quality}")


def write_train_split(out: Path, images: int, per_table: int, quality: Quality,
                      seed: int = TRAIN_SEED, log: bool = False) -> int:
    """Render what is missing of the first `images` images of the train split (rounded up
    to whole tables) into `out`; return how many were rendered now."""
    if seed < TRAIN_SEED:
        raise ValueError(f"seed {seed}: the train split's seeds are {TRAIN_SEED} and up")
    tables = -(-images // per_table)
    return write_stills(out, tables, per_table, seed, list(SETUPS), quality, log=log)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lab.raytrace.trainset",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=1000,
                        help="images in the split (default 1000, rounded up to whole tables)")
    parser.add_argument("--per-table", type=int, default=10,
                        help="positions photographed on each table (default 10)")
    parser.add_argument("--quality", choices=sorted(QUALITIES), default="fine",
                        help="fine (default, as the test split is rendered) or draft (no "
                             "antialiasing: quicker)")
    parser.add_argument("--seed", type=int, default=TRAIN_SEED,
                        help=f"the split's seed (default {TRAIN_SEED}; {TRAIN_SEED} and up)")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1,
                        help="POV-Ray's threads for each image (default: one a core)")
    parser.add_argument("--out", type=Path,
                        help="the folder (default: in the cache, named by version, seed and "
                             "quality)")
    args = parser.parse_args(argv)
    if args.images < 1 or args.per_table < 1 or args.threads < 1:
        parser.error("--images, --per-table and --threads must be at least 1")
    if args.seed < TRAIN_SEED:
        parser.error(f"--seed: the train split's seeds are {TRAIN_SEED} and up (the lower "
                     "ones are validation's and test's)")
    out = (args.out if args.out is not None
           else default_folder(os.environ, args.quality, args.seed))
    print(f"train split: {out}", file=sys.stderr)
    quality = dataclasses.replace(QUALITIES[args.quality], threads=args.threads)
    made = write_train_split(out, args.images, args.per_table, quality, args.seed, log=True)
    print(f"rendered {made} images; {gather(out)} in {out}/truth.jsonl", file=sys.stderr)
    print(out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
