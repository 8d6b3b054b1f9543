"""Speed of the synthetic renderer: `python -m lab.synth.bench [--count N] [--threads T]`.

Renders N random scenes (round-robin over the setups, after a warm-up that fills the texture
caches) and a short game video, and prints wall-clock and CPU milliseconds per frame. CPU
time is the fairer figure on a busy machine; with --threads 1 it is single-core time.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence

import cv2
import numpy as np

from lab.synth.position import random_position
from lab.synth.render import render
from lab.synth.sequence import SequenceTiming, render_sequence
from lab.synth.setups import SETUPS, random_spec


def _measure(work: list[object], run: object) -> tuple[float, float]:
    assert callable(run)
    wall, cpu = time.perf_counter(), time.process_time()
    for item in work:
        run(item)
    n = max(len(work), 1)
    return (time.perf_counter() - wall) / n * 1000, (time.process_time() - cpu) / n * 1000


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lab.synth.bench", description=__doc__)
    parser.add_argument("--count", type=int, default=70, help="frames to time (default 70)")
    parser.add_argument("--threads", type=int, default=1, help="OpenCV threads (default 1)")
    args = parser.parse_args(argv)
    if args.count < 1:
        parser.error("--count must be at least 1")
    cv2.setNumThreads(args.threads)
    names = list(SETUPS)
    warm = [random_spec(np.random.default_rng([1, i]), names[i % len(names)]) for i in range(100)]
    for spec in warm:
        render(spec)
    specs: list[object] = [
        random_spec(np.random.default_rng([2, i]), names[i % len(names)]) for i in range(args.count)
    ]
    wall, cpu = _measure(specs, render)
    print(f"still frames 1280x720, {len(names)} setups: {wall:.1f} ms wall, {cpu:.1f} ms CPU")
    rng = np.random.default_rng(3)
    board, bridges = random_position(rng, light_tiles=12, dark_tiles=12, bridges=2)
    empty = tuple("." * 10 for _ in range(10))
    base = random_spec(rng, "overhead-cream-red")
    timing = SequenceTiming(fps=15.0, still_s=1.0)
    positions = [(empty, ()), (board, ()), (board, bridges)]
    frames: list[object] = []
    wall0, cpu0 = time.perf_counter(), time.process_time()
    for image, _ in render_sequence(positions, base, timing):
        frames.append(image)
    n = len(frames)
    wall = (time.perf_counter() - wall0) / n * 1000
    cpu = (time.process_time() - cpu0) / n * 1000
    print(f"video frames 1280x720 ({n} frames): {wall:.1f} ms wall, {cpu:.1f} ms CPU")
    return 0


if __name__ == "__main__":
    sys.exit(main())
