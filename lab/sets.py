"""Measure the camera pipeline on a frozen scene set, whatever made it.

A set is a folder with `truth.jsonl` (one JSON object per image: `image`, `setup`, `board`,
`bridges`, `occluded`, `corners`, `camera_matrix`, `dist_coeffs`, and `empty`, the photo of
the same table with nothing on the board) and the images it names. Each image is read in
every mode of the evaluation (`Mode`: from the frame alone, and as the live loop reads it
after `ponte calibrate --empty` on the table's empty photo, with the lens where it bends);
the table is the evaluation's table (`COLUMNS`) per setup and mode, plus the number of
empty photos calibration found no board in.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from contracts.calibration import Thresholds
from lab.evaluate import (
    COLUMNS,
    MODES,
    Mode,
    Tally,
    _calibrated,
    _lens_of,
    _merge,
    read_modes,
    write_tables,
)

SET_COLUMNS = (*COLUMNS, "empty_photos", "calibration_misses")
"""The set table's columns: the evaluation's, then how many empty photos its rows' images
were calibrated from and how many of those gave no calibration."""


def load_set(folder: Path) -> list[dict[str, Any]]:
    """The truth records of the set in `folder`, in file order."""
    path = folder / "truth.jsonl"
    if not path.exists():
        raise FileNotFoundError(f"{folder} holds no truth.jsonl: not a scene set")
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def evaluate_set(folder: Path, out: Path, *, listing: Path | None = None,
                 limit: int | None = None) -> list[list[object]]:
    """Read every image of the set (the first `limit`), write the table to `out` (and with
    `listing`, every mistake); return the table's rows."""
    tallies, photos, misses, found = tally_set(folder, limit=limit)
    rows: list[list[object]] = []
    totals = {str(mode): Tally() for mode in MODES}
    setups = sorted({s for s, _ in tallies})
    for setup in setups:
        for mode in MODES:
            tally = tallies.get((setup, str(mode)), Tally())
            rows.append([*tally.row(setup, str(mode)), len(photos.get(setup, ())),
                         len(misses.get(setup, ()))])
            _merge(totals[str(mode)], tally)
    for mode, tally in totals.items():
        rows.append([*tally.row("all", mode), sum(len(v) for v in photos.values()),
                     sum(len(v) for v in misses.values())])
    write_tables(out, SET_COLUMNS, rows, listing, found)
    return rows


def tally_set(folder: Path, *, limit: int | None = None, modes: Sequence[Mode] = MODES,
              thresholds: Thresholds | None = None
              ) -> tuple[dict[tuple[str, str], Tally], dict[str, set[str]],
                         dict[str, set[str]], list[tuple[object, ...]]]:
    """Every image of the set (the first `limit`) read in `modes`, each table calibrated on
    its empty photo, with `thresholds` (default: the parameter file's): the counts per
    setup and mode, the empty photos per setup, those calibration found no board in, and
    the mistakes (the listing's rows)."""
    cv2.setNumThreads(1)
    records = load_set(folder)[:limit]
    calibrations: dict[str, Any] = {}
    misses: dict[str, set[str]] = {}
    photos: dict[str, set[str]] = {}
    tallies: dict[tuple[str, str], Tally] = {}
    found: list[tuple[object, ...]] = []
    for index, record in enumerate(records):
        setup = str(record["setup"])
        empty = str(record["empty"])
        if empty not in calibrations:
            calibrations[empty] = calibration_of(folder, record, thresholds)
        photos.setdefault(setup, set()).add(empty)
        if calibrations[empty] is None:
            misses.setdefault(setup, set()).add(empty)
        data = (folder / record["image"]).read_bytes()
        truth_board = tuple(record["board"])
        truth_bridges = {(a, b) for a, b in record["bridges"]}
        for mode, obs, ms, problem in read_modes(data, calibrations[empty], modes, thresholds):
            tally = tallies.setdefault((setup, str(mode)), Tally())
            found += [(folder.name, setup, index, str(mode), *m) for m in tally.add(
                truth_board, truth_bridges, bool(record["occluded"]), obs, ms, problem)]
    return tallies, photos, misses, found


def calibration_of(folder: Path, record: dict[str, Any], thresholds: Thresholds | None = None
                   ) -> Any:
    """What `ponte calibrate --empty` makes of the record's empty photo (with the camera's
    lens where it bends lines, as `ponte calibrate-lens` would have measured it), with
    `thresholds` (default: the parameter file's)."""
    photo = cv2.imread(str(folder / record["empty"]), cv2.IMREAD_COLOR)
    if photo is None:
        return None
    dist = tuple(float(v) for v in record["dist_coeffs"])
    lens = None
    if any(dist):
        size = (photo.shape[1], photo.shape[0])
        lens = _lens_of(np.asarray(record["camera_matrix"], np.float64), dist, size)
    return _calibrated(photo, lens, thresholds)


def write_synth_set(out: Path, per_setup: int, seed: int) -> int:
    """Freeze `lab.synth` scenes as a set: the frames `ponte eval vision --seed SEED` draws
    (`per_setup` of each setup, in its order), each with its empty photo (JPEG, as a camera
    takes it). Returns the number of images written."""
    from lab.evaluate import empty_photo
    from lab.synth import SETUPS, random_spec, render
    from lab.synth.dataset import truth_record

    for sub in ("images", "empty"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    lines = []
    for index, name in enumerate(SETUPS):
        rng = np.random.default_rng([seed, index])
        for number in range(per_setup):
            spec = random_spec(rng, name)
            frame = render(spec)
            stem = f"{index:02d}-{number:03d}"
            data = frame.encoded or cv2.imencode(".jpg", frame.image)[1].tobytes()
            (out / "images" / f"{stem}.jpg").write_bytes(data)
            photo, _ = empty_photo(spec)
            ok, empty = cv2.imencode(".jpg", photo, [cv2.IMWRITE_JPEG_QUALITY, 95])
            assert ok
            (out / "empty" / f"{stem}.jpg").write_bytes(empty.tobytes())
            record = truth_record(frame, spec, name, f"images/{stem}.jpg")
            record.pop("spec")
            record.update(empty=f"empty/{stem}.jpg", source="synth", seed=seed, number=number)
            lines.append(json.dumps(record))
    (out / "truth.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return len(lines)


def main(argv: Sequence[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m lab.sets", description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="the set's folder (with truth.jsonl)")
    parser.add_argument("--out", type=Path, help="the CSV table to write")
    parser.add_argument("--listing", type=Path, help="also list every mistake here (CSV)")
    parser.add_argument("--limit", type=int, help="read only the first N images")
    parser.add_argument("--freeze-synth", type=int, metavar="SEED",
                        help="instead, write a set of lab.synth frames drawn with SEED")
    parser.add_argument("--per-setup", type=int, default=20,
                        help="with --freeze-synth: frames of each setup (default 20)")
    args = parser.parse_args(argv)
    if args.freeze_synth is not None:
        count = write_synth_set(args.folder, args.per_setup, args.freeze_synth)
        print(f"wrote {count} images to {args.folder}", file=sys.stderr)
        return 0
    if args.out is None:
        parser.error("--out is needed to measure a set")
    try:
        evaluate_set(args.folder, args.out, listing=args.listing, limit=args.limit)
    except (FileNotFoundError, json.JSONDecodeError, KeyError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
