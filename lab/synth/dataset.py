"""Write a synthetic evaluation set: `python -m lab.synth.dataset --out DIR --count N --seed S`.

Images go to DIR/images/NNNNN.jpg (the exact JPEG bytes the renderer made, so the file is
the frame) and their truth to DIR/truth.jsonl, one JSON object per line:
`{"image": "images/00000.jpg", "setup": ..., "board": [10 strings, top rank first],
"bridges": [["a1", "c2"], ...], "occluded": bool, "occluded_cells": [...], "corners":
[[x, y] x 4: a1, j1, j10, a10], "homography": 3x3 or null, "camera_matrix": 3x3,
"dist_coeffs": [k1, k2, p1, p2], "a1_margin_px": float, "markers": {id: 4 corners} (ArUco
markers, when the scene has them), "spec": {the full SceneSpec}}`.
Images are spread round-robin over the chosen setups; image i is drawn from the seed
sequence (seed, i), so any one image can be made again on its own.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from lab.synth.render import Frame, render
from lab.synth.setups import SETUPS, random_spec
from lab.synth.spec import SceneSpec


def truth_record(frame: Frame, spec: SceneSpec, setup: str, image: str) -> dict[str, Any]:
    """The JSON-ready truth of one rendered frame."""
    return {
        "image": image,
        "setup": setup,
        "board": list(frame.board),
        "bridges": [list(b) for b in frame.bridges],
        "occluded": frame.occluded,
        "occluded_cells": sorted(frame.occluded_cells),
        "corners": frame.corners.round(3).tolist(),
        "homography": None if frame.homography is None else frame.homography.tolist(),
        "camera_matrix": frame.camera_matrix.tolist(),
        "dist_coeffs": list(frame.dist_coeffs),
        "a1_margin_px": round(frame.a1_margin_px, 2),
        "markers": {str(k): v.round(3).tolist() for k, v in sorted(frame.markers.items())},
        "spec": dataclasses.asdict(spec),
    }


def write_dataset(
    out: Path, count: int, seed: int, setups: Sequence[str], log: bool = False
) -> list[dict[str, Any]]:
    """Render `count` images into `out` (see module docstring); return the truth records."""
    images = out / "images"
    images.mkdir(parents=True, exist_ok=True)
    records = []
    started = time.perf_counter()
    with open(out / "truth.jsonl", "w", encoding="utf-8") as handle:
        for i in range(count):
            setup = setups[i % len(setups)]
            spec = random_spec(np.random.default_rng([seed, i]), setup)
            if spec.effects.jpeg_quality is None:
                spec = dataclasses.replace(
                    spec, effects=dataclasses.replace(spec.effects, jpeg_quality=95)
                )
            frame = render(spec)
            name = f"images/{i:05d}.jpg"
            assert frame.encoded is not None
            (out / name).write_bytes(frame.encoded)
            record = truth_record(frame, spec, setup, name)
            handle.write(json.dumps(record) + "\n")
            records.append(record)
            if log and (i + 1) % 50 == 0:
                rate = (time.perf_counter() - started) / (i + 1)
                print(f"{i + 1}/{count} images ({rate * 1000:.0f} ms each)", file=sys.stderr)
    return records


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m lab.synth.dataset", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--out", required=True, type=Path, help="output directory")
    parser.add_argument("--count", type=int, default=500, help="number of images (default 500)")
    parser.add_argument("--seed", type=int, default=0, help="seed (default 0)")
    parser.add_argument(
        "--setups",
        default=",".join(SETUPS),
        help=f"comma-separated setups (default all: {','.join(SETUPS)})",
    )
    args = parser.parse_args(argv)
    setups = [s.strip() for s in args.setups.split(",") if s.strip()]
    unknown = [s for s in setups if s not in SETUPS]
    if unknown or not setups:
        parser.error(f"unknown setup(s) {', '.join(unknown)}; known: {', '.join(SETUPS)}")
    if args.count < 1:
        parser.error("--count must be at least 1")
    try:
        write_dataset(args.out, args.count, args.seed, setups, log=True)
    except OSError as exc:
        print(f"error: cannot write the data set: {exc}", file=sys.stderr)
        return 1
    print(f"wrote {args.count} images and truth.jsonl to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
