"""`ponte bench vision`: milliseconds per 1280 x 720 JPEG frame, on one core.

Measures the live loop's `BoardReader.read(jpeg_bytes)` after calibration (JPEG decode
included) on generated frames of three setups; the same frames decoded whole and then read
(what the live loop does with the frames `cv2.VideoCapture` hands it, there decoded by the
camera's backend); and, for comparison, `read_board` on a decoded image from scratch
(locating the board and learning its colours).

Besides the median and the 95th percentile of the reads, "quietest" is the mean over a
setup's five frames of each frame's fastest read: what a read costs with nothing else on
the machine slowing it (a shared machine's neighbours only ever add time, so the fastest of
forty reads of one frame is the best measure of the work itself).

The measurement runs pinned to one core where the system allows it. With `--out FILE` the
figures are also written as CSV, one row per setup and one for all, with the CPU's name
and its widest vector instructions (the README's speed table is made from
`results/bench_vision.csv`).
"""

from __future__ import annotations

import argparse
import csv
import os
import platform
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np

SETUPS = ("overhead-cream-red", "angled45-white-black", "phone-rotated-brown")

COLUMNS = ("setup", "median_ms", "p95_ms", "quietest_ms", "decoded_whole_ms",
           "from_scratch_ms", "reads", "cpu", "vectors", "pinned")
"""The CSV's columns (`--out`): per setup (and "all", the medians over them), the reader's
milliseconds per frame, the same frames decoded whole first, from scratch; the machine."""


def cpu_name() -> str:
    """The CPU's model name (Linux's /proc/cpuinfo), else what `platform` knows."""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


VECTORS = ("AVX512-SKX", "AVX2", "AVX", "NEON", "SSE4.2", "SSE4.1", "SSE2")
"""Vector instruction sets as OpenCV names them, widest first."""


def widest_vectors() -> str:
    """The widest vector instructions OpenCV's dispatcher uses here: the last feature of
    `cv2.getCPUFeaturesLine()` this CPU has and `OPENCV_CPU_DISABLE` leaves on (those
    marked "?" are not available)."""
    usable = {f.lstrip("*") for f in cv2.getCPUFeaturesLine().split() if not f.endswith("?")}
    return next((f for f in VECTORS if f in usable), "baseline")


@contextmanager
def one_core() -> Iterator[bool]:
    """Run on one core (the first this process may use) inside the block, and on the
    cores it had after it; yields False where the system cannot pin."""
    if not hasattr(os, "sched_setaffinity"):
        yield False
        return
    allowed = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(allowed)})
    try:
        yield True
    finally:
        os.sched_setaffinity(0, allowed)


def run(args: argparse.Namespace) -> int:
    with one_core() as pinned:
        return _measure(args, pinned)


def _measure(args: argparse.Namespace, pinned: bool) -> int:
    from calibration.make import make_calibration
    from lab.synth import random_spec, render
    from vision.errors import VisionError
    from vision.pipeline import read_board
    from vision.tracking import BoardReader

    cv2.setNumThreads(1)
    repeats = 20 if args.quick else 200
    scratch_repeats = 3 if args.quick else 20
    print(f"{'setup':<24}{'reader ms median':>18}{'p95':>8}{'quietest':>10}"
          f"{'decoded whole ms':>18}{'from scratch ms':>18}")
    medians, wholes, quietest, scratches, p95s = [], [], [], [], []
    machine = [cpu_name(), widest_vectors(), "yes" if pinned else "no"]
    rows: list[list[object]] = []
    for index, name in enumerate(SETUPS):
        rng = np.random.default_rng([7, index])
        spec = random_spec(rng, name)
        empty = replace(spec, board=tuple("." * spec.size for _ in range(spec.size)),
                        bridges=(), hands=())
        calibration = make_calibration(render(empty).image, empty=True)
        frames = []
        for _ in range(5):
            frame = render(replace(random_spec(rng, name), camera=spec.camera,
                                   board_look=spec.board_look, table=spec.table,
                                   lighting=spec.lighting))
            data = frame.encoded or cv2.imencode(".jpg", frame.image)[1].tobytes()
            frames.append(data)
        reader, live = BoardReader(calibration), BoardReader(calibration)
        for data in frames:
            reader.read(data)
            live.read(cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR))
        times, whole = [], []
        for i in range(repeats):  # the two ways in turn: the machine's drift hits both
            data = frames[i % len(frames)]
            start = time.perf_counter()
            reader.read(data)
            times.append((time.perf_counter() - start) * 1000)
            start = time.perf_counter()
            live.read(cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR))
            whole.append((time.perf_counter() - start) * 1000)
        scratch = []
        failed = 0
        for i in range(scratch_repeats):
            start = time.perf_counter()
            image = cv2.imdecode(np.frombuffer(frames[i % len(frames)], np.uint8),
                                 cv2.IMREAD_COLOR)
            try:
                read_board(image)
            except VisionError:
                failed += 1  # timed all the same: giving up costs time too
            scratch.append((time.perf_counter() - start) * 1000)
        med = float(np.median(times))
        medians.append(med)
        p95s.append(float(np.percentile(times, 95)))
        scratches.append(float(np.median(scratch)))
        wholes.append(float(np.median(whole)))
        quietest.append(float(np.mean([min(times[i::len(frames)])
                                       for i in range(len(frames))])))
        print(f"{name:<24}{med:>18.2f}{np.percentile(times, 95):>8.2f}{quietest[-1]:>10.2f}"
              f"{wholes[-1]:>18.2f}{np.median(scratch):>18.1f}"
              + (f"  ({failed} of {scratch_repeats} from scratch found no board)"
                 if failed else ""))
        rows.append([name, *(f"{v:.2f}" for v in (med, p95s[-1], quietest[-1], wholes[-1],
                                                   scratches[-1])), repeats, *machine])
    print(f"reader, all setups: median {np.median(medians):.2f} ms per 1280x720 JPEG frame "
          f"on one core ({repeats} reads per setup); decoded whole first, "
          f"{np.median(wholes):.2f} ms; at its quietest, {np.median(quietest):.2f} ms")
    print(f"on {machine[0]} ({machine[1]}; {'pinned to one core' if pinned else 'not pinned'})")
    if getattr(args, "out", None) is not None:
        overall = (medians, p95s, quietest, wholes, scratches)
        rows.append(["all", *(f"{np.median(v):.2f}" for v in overall), repeats, *machine])
        args.out.parent.mkdir(parents=True, exist_ok=True)
        with args.out.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(COLUMNS)
            writer.writerows(rows)
        print(f"written to {args.out}")
    return 0
