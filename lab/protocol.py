"""`ponte eval protocol`: every test split of both scene sources, in one command each way.

The evaluation protocol (`lab/README.md`) reports every figure on the test splits of both
sources: the still sets `synth-test` and `raytrace-test`, and the ray-traced game videos
`raytrace-games`. The networks that read them were trained on one source:

- `--trained-on synth` (the default): the shipped networks in `vision/models/`, trained and
  tuned on `lab.synth`; the `raytrace` figures are "trained on A, measured on B". The
  tables are written under the names the README's tables are made from
  (`results/set_synth_test.csv`, `results/set_raytrace_test.csv`,
  `results/games_raytrace_test.csv`).
- `--trained-on raytrace --models DIR`: networks trained on the ray-traced train split
  into DIR (see `lab/README.md`); the `synth` figures are then the other direction. The
  tables get the suffix `_trained_raytrace`. With `--train`, the same command first renders
  that train split (resumable, in the cache) and fits every network on it into DIR
  (`training`), so that direction too is one command.

Each split is measured in a process of its own (`python -m ponte eval ...`), with
`PONTE_MODELS` pointing at the networks' folder where it is not the shipped one, so that
no reading can see another's networks.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

FROZEN = Path(__file__).with_name("frozen")


@dataclass(frozen=True)
class Split:
    """One test split: its frozen folder's name, and the `ponte eval` arguments that
    measure it into a table `stem` (+ suffix) `.csv` in the results folder."""

    name: str
    stem: str
    games: bool

    def command(self, results: Path, suffix: str) -> list[str]:
        """The `ponte eval` arguments (the split's folder in `FROZEN`)."""
        out = results / f"{self.stem}{suffix}.csv"
        if self.games:
            return ["games", "--videos", str(FROZEN / self.name), "--out", str(out)]
        mistakes = results / f"{self.stem}{suffix}_mistakes.csv"
        return ["set", str(FROZEN / self.name), "--out", str(out), "--mistakes",
                str(mistakes)]


SPLITS = (Split("synth-test", "set_synth_test", False),
          Split("raytrace-test", "set_raytrace_test", False),
          Split("raytrace-games", "games_raytrace_test", True))
"""The test splits of both sources, in the order they are measured."""


class ProtocolError(ValueError):
    """The protocol cannot run as asked (a missing split or networks folder)."""


TRAINERS = (("lab.train", 0), ("lab.train_patches", 1), ("lab.train_decks", 1))
"""The trainers, in the order each reads the networks the one before it wrote, and the
part of the train split each learns from: 0, the split's first seed; 1, the next one.
The patch and deck networks learn from scenes the cell and bridge networks were not fitted
on (a network is surer of its own training scenes than of new ones), as on `synth`."""


def training(models: Path, images: int, quality: str) -> list[list[str]]:
    """The `python -m` argument lists that render the `raytrace` train split (`images`
    images of its first seed, half as many of the next, at `quality`) into the cache and
    fit every network on it into `models`, each run with `PONTE_MODELS` set to `models`."""
    from lab.raytrace.trainset import TRAIN_SEED, default_folder

    if images < 2:
        raise ProtocolError("--train-images: at least 2")
    if importlib.util.find_spec("torch") is None:
        raise ProtocolError("--train fits the networks in PyTorch, which is not installed: "
                            "pip install torch==2.13.0")
    counts = (images, max(1, images // 2))
    commands: list[list[str]] = []
    for part, count in enumerate(counts):
        seed = TRAIN_SEED + part
        commands.append(["lab.raytrace.trainset", "--images", str(count), "--quality",
                         quality, "--seed", str(seed)])
    for module, part in TRAINERS:
        scenes = default_folder(os.environ, quality, TRAIN_SEED + part)
        commands.append([module, "--torch", "--scenes-from", str(scenes),
                         "--out", str(models)])
    return commands


def train(models: Path, images: int, quality: str) -> int:
    """Run `training`; return 0, or the exit status of the first step that failed (the
    steps after it are not run: each needs the one before)."""
    commands = training(models, images, quality)
    models.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PONTE_MODELS": str(models.resolve())}
    for args in commands:
        print(f"== python -m {' '.join(args)}", file=sys.stderr, flush=True)
        done = subprocess.run([sys.executable, "-m", *args], env=env, check=False)
        if done.returncode:
            return done.returncode
    return 0


def plan(trained_on: str, models: Path | None, results: Path,
         only: Sequence[str] = ()) -> tuple[dict[str, str], list[list[str]]]:
    """The environment and the `ponte eval` argument lists that measure every split (or
    those named in `only`) with networks trained on `trained_on`."""
    env = dict(os.environ)
    if trained_on == "synth":
        if models is not None:
            raise ProtocolError("--models is for networks trained elsewhere: the networks "
                                "trained on synth are the shipped ones")
        env.pop("PONTE_MODELS", None)
        suffix = ""
    elif trained_on == "raytrace":
        if models is None or not models.is_dir():
            raise ProtocolError("--trained-on raytrace needs --models DIR, the folder the "
                                "networks trained on the ray-traced train split were written "
                                "to (lab/README.md, Evaluation protocol)")
        env["PONTE_MODELS"] = str(models.resolve())
        suffix = "_trained_raytrace"
    else:
        raise ProtocolError(f"unknown source {trained_on!r}: synth or raytrace")
    unknown = sorted(set(only) - {s.name for s in SPLITS})
    if unknown:
        raise ProtocolError(f"no test split {unknown[0]!r}: "
                            f"{', '.join(s.name for s in SPLITS)}")
    chosen = [s for s in SPLITS if not only or s.name in only]
    missing = [s.name for s in chosen if not (FROZEN / s.name).is_dir()]
    if missing:
        raise ProtocolError(f"the test split {missing[0]} is not in {FROZEN}")
    return env, [s.command(results, suffix) for s in chosen]


def run(trained_on: str, models: Path | None, results: Path,
        only: Sequence[str] = ()) -> int:
    """Measure the splits one after another; return 0 when every measurement ran and its
    own verdict was good, else the first non-zero exit status (the others still run)."""
    env, commands = plan(trained_on, models, results, only)
    results.mkdir(parents=True, exist_ok=True)
    status = 0
    for args in commands:
        print(f"== ponte eval {' '.join(args)}", file=sys.stderr, flush=True)
        done = subprocess.run([sys.executable, "-m", "ponte", "eval", *args], env=env,
                              check=False)
        status = status or done.returncode
    return status
