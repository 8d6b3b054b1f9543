"""Write a synthetic game video: `python -m lab.synth.video --out game.mp4 --moves 12`.

A random plausible game (`position.random_game`) is played on a scene drawn from a setup
(hands removed; the players' hand is drawn by the sequence), written with cv2.VideoWriter,
and its truth goes to the same path with `.jsonl`: one line per frame,
`{"index", "time_s", "move", "phase": "still"|"hand", "bumped", "board", "bridges",
"occluded", "corners"}`.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from lab.synth.position import random_game
from lab.synth.sequence import CameraBump, SequenceTiming, render_sequence, write_video
from lab.synth.setups import SETUPS, SKIN_TONES, SLEEVES, random_spec
from lab.synth.spec import HandSpec


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m lab.synth.video", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--out", required=True, type=Path, help="video file (.mp4 or .avi)")
    parser.add_argument("--moves", type=int, default=12, help="moves to play (default 12)")
    parser.add_argument("--seed", type=int, default=0, help="seed (default 0)")
    parser.add_argument("--setup", default="overhead-cream-red", help="scene setup")
    parser.add_argument("--fps", type=float, default=15.0, help="frame rate (default 15)")
    parser.add_argument("--still", type=float, default=1.5, help="seconds still after a move")
    parser.add_argument("--bump-at", type=float, default=None, help="camera bump time (s)")
    parser.add_argument("--light-drift", type=float, default=0.0, help="e.g. 0.15")
    args = parser.parse_args(argv)
    if args.setup not in SETUPS:
        parser.error(f"unknown setup {args.setup!r}; known: {', '.join(SETUPS)}")
    if args.out.suffix.lower() not in (".mp4", ".avi"):
        parser.error("--out must end in .mp4 or .avi")
    if args.moves < 0 or args.fps <= 0 or args.still < 0:
        parser.error("--moves, --fps and --still must not be negative (fps positive)")
    rng = np.random.default_rng(args.seed)
    positions = random_game(rng, args.moves)
    spec = dataclasses.replace(
        random_spec(rng, args.setup), board=positions[0][0], bridges=positions[0][1], hands=()
    )
    hand = HandSpec(
        skin=SKIN_TONES[int(rng.integers(len(SKIN_TONES)))],
        sleeve=SLEEVES[int(rng.integers(len(SLEEVES)))],
        sleeve_reach=float(rng.uniform(0.0, 0.8)),
    )
    timing = SequenceTiming(
        fps=args.fps,
        still_s=args.still,
        bump=None if args.bump_at is None else CameraBump(at_s=args.bump_at),
        light_drift=args.light_drift,
    )
    try:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        frames = render_sequence(positions, spec, timing, hand)
        truths = write_video(args.out, frames, args.fps)
        with open(args.out.with_suffix(".jsonl"), "w", encoding="utf-8") as handle:
            for t in truths:
                record = {
                    "index": t.index,
                    "time_s": round(t.time_s, 4),
                    "move": t.move,
                    "phase": str(t.phase),
                    "bumped": t.bumped,
                    "board": list(t.board),
                    "bridges": [list(b) for b in t.bridges],
                    "occluded": t.occluded,
                    "corners": t.frame.corners.round(3).tolist(),
                }
                handle.write(json.dumps(record) + "\n")
    except OSError as exc:
        print(f"error: cannot write the video: {exc}", file=sys.stderr)
        return 1
    truth_path = args.out.with_suffix(".jsonl")
    print(
        f"wrote {len(truths)} frames to {args.out} and their truth to {truth_path}", file=sys.stderr
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
