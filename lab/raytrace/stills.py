"""Write a set of ray-traced still scenes with their truth; resumable.

`python -m lab.raytrace.stills --out DIR --tables 60 --per-table 10 --seed 100 [--part K/N]`

Each table (camera, light, edition, table top; `random_table((seed, t), setup)`) is photographed
once empty (`DIR/empty/TTTT.jpg`, what `ponte calibrate --empty` is given) and with
`per-table` positions on it (`DIR/images/TTTT-PP.jpg`); setups go round-robin over the
tables. Truth for each image is written beside it as it is made (`DIR/truth/TTTT-PP.json`),
so a run that is stopped picks up where it was (positions go round the tables, so a
partial set still covers every table); `DIR/truth.jsonl` gathers them, one JSON
object per line in the evaluation set's format plus `"empty"` (the table's empty photo) and
`"table"`. `DIR/VERSION` holds the generator's version: a folder made by another version is
refused rather than mixed.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from lab.raytrace import VERSION
from lab.raytrace.model import SETUPS, empty_scene, random_scene, random_table
from lab.raytrace.render import DRAFT, Quality, render

QUALITIES = {"draft": DRAFT, "fine": Quality()}


def _check_version(out: Path) -> None:
    stamp = out / "VERSION"
    if stamp.exists():
        found = stamp.read_text(encoding="utf-8").strip()
        if found != VERSION:
            raise SystemExit(f"error: {out} was made by raytrace generator {found}, this is "
                             f"{VERSION}: use another folder")
    else:
        out.mkdir(parents=True, exist_ok=True)
        stamp.write_text(VERSION + "\n", encoding="utf-8")


def write_stills(out: Path, tables: int, per_table: int, seed: int, setups: Sequence[str],
                 quality: Quality, log: bool = False, part: tuple[int, int] = (0, 1)) -> int:
    """Render what is missing of the set; return how many images were rendered now. With
    `part` (K, N), only the tables whose number is K modulo N: N processes given the parts
    0..N-1 share the set between them, each table (its empty photo among its images) in
    one of them."""
    _check_version(out)
    for sub in ("images", "empty", "truth"):
        (out / sub).mkdir(exist_ok=True)
    made = 0
    started = time.perf_counter()
    tabled = [random_table((seed, t), setups[t % len(setups)]) for t in range(tables)]
    # Position-major, so that a run stopped early still covers every table and setup.
    for p in range(per_table):
        for t, table in enumerate(tabled):
            if t % part[1] != part[0]:
                continue
            empty = out / "empty" / f"{t:04d}.jpg"
            if not empty.exists():
                shot = render(empty_scene(table), quality, board=table.seed)
                _write_atomic(empty, shot.encoded)
            name = f"{t:04d}-{p:02d}"
            truth_file = out / "truth" / f"{name}.json"
            if truth_file.exists():
                continue
            frame = render(random_scene(table, (seed, t, p)), quality, board=table.seed)
            _write_atomic(out / "images" / f"{name}.jpg", frame.encoded)
            record = {"image": f"images/{name}.jpg", "empty": f"empty/{t:04d}.jpg",
                      "table": t, **frame.truth}
            _write_atomic(truth_file, (json.dumps(record) + "\n").encode())
            made += 1
            if log:
                rate = (time.perf_counter() - started) / made
                print(f"{name} {table.setup}: {rate:.1f} s an image", file=sys.stderr)
    gather(out)
    return made


def gather(out: Path) -> int:
    """Write DIR/truth.jsonl from the per-image truth files; return the count."""
    lines = [f.read_text(encoding="utf-8").strip() for f in sorted((out / "truth").glob("*.json"))]
    _write_atomic(out / "truth.jsonl", ("\n".join(lines) + "\n").encode() if lines else b"")
    return len(lines)


def _write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_suffix(path.suffix + ".part")
    tmp.write_bytes(data)
    tmp.replace(path)


def _part(text: str) -> tuple[int, int]:
    k, _, n = text.partition("/")
    try:
        part = int(k), int(n)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: K/N, two whole numbers") from None
    if not 0 <= part[0] < part[1]:
        raise argparse.ArgumentTypeError(f"{text!r}: K/N with 0 <= K < N")
    return part


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m lab.raytrace.stills", description=__doc__.splitlines()[0],
        epilog="setups: " + "; ".join(f"{s.name}: {s.describes}" for s in SETUPS.values()))
    parser.add_argument("--out", required=True, type=Path, help="output folder")
    parser.add_argument("--tables", type=int, default=60, help="tables (default 60)")
    parser.add_argument("--per-table", type=int, default=10,
                        help="positions photographed on each table (default 10)")
    parser.add_argument("--seed", type=int, default=0, help="seed (default 0)")
    parser.add_argument("--setups", default=",".join(SETUPS),
                        help=f"comma-separated setups (default all: {','.join(SETUPS)})")
    parser.add_argument("--quality", choices=sorted(QUALITIES), default="draft",
                        help="draft: no antialiasing (default); fine: adaptive antialiasing")
    parser.add_argument("--part", type=_part, default=(0, 1), metavar="K/N",
                        help="render only the tables whose number is K modulo N, so that N "
                             "processes (K = 0..N-1) share the set")
    args = parser.parse_args(argv)
    setups = [s.strip() for s in args.setups.split(",") if s.strip()]
    unknown = [s for s in setups if s not in SETUPS]
    if unknown or not setups:
        parser.error(f"unknown setup(s) {', '.join(unknown)}; known: {', '.join(SETUPS)}")
    if args.tables < 1 or args.per_table < 1:
        parser.error("--tables and --per-table must be at least 1")
    made = write_stills(args.out, args.tables, args.per_table, args.seed, setups,
                        QUALITIES[args.quality], log=True, part=args.part)
    print(f"rendered {made} images; {gather(args.out)} in {args.out}/truth.jsonl",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
