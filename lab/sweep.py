"""Sweep one parameter of the parameter file over values, on validation sets: the table a
parameter's value is chosen from (`python -m lab.sweep NAME VALUE... --set DIR...`).

For each value, every image of each set is read as `ponte eval set` reads it in the live
loop's mode (`tracker`: a reader calibrated on its table's empty photo, the calibration
made with the value too, so that a parameter of locating or calibrating counts as well),
with the rest of the parameters as `contracts/thresholds.json` gives them. The table has a
row per value, set and setup (and "all" per value and set), with the evaluation's columns
(`lab.evaluate.COLUMNS`) and the calibration misses.

A test split is read only to report, never to choose by: a set whose folder name ends in
`-test` is refused. Validation sets are made with `python -m lab.sets DIR --freeze-synth
SEED` (`synth`, seeds 1, 6, 7, 8) and `python -m lab.raytrace.stills --seed 1` (`raytrace`);
see `lab/README.md`, "Evaluation protocol".
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import fields
from pathlib import Path

from contracts.calibration import CalibrationError, Thresholds, default_thresholds
from lab.evaluate import Mode, Tally, _merge
from lab.sets import SET_COLUMNS, tally_set

COLUMNS = ("parameter", "value", "also", "set", *SET_COLUMNS)
"""The table's columns: the parameter and its value, the other parameters held fixed
(`--also`), the set's folder name, then the set table's (`lab.sets.SET_COLUMNS`)."""


class SweepError(ValueError):
    """A sweep that cannot run: an unknown parameter, a value of the wrong kind, a test split
    or a folder that holds no set."""


def thresholds_with(name: str, value: str, base: Thresholds | None = None) -> Thresholds:
    """The parameter file's thresholds (or `base`) with `name` set to `value` (read as the
    parameter's kind)."""
    known = {f.name: f for f in fields(Thresholds)}
    if name not in known:
        raise SweepError(f"no parameter {name!r} in the parameter file")
    try:
        number: float = int(value) if known[name].type == "int" else float(value)
    except ValueError:
        kind = "a whole number" if known[name].type == "int" else "a number"
        raise SweepError(f"{name} takes {kind}, not {value!r}") from None
    try:
        return Thresholds.from_json({name: number}, base=base or default_thresholds())
    except CalibrationError as exc:
        raise SweepError(str(exc)) from None


def check_set(folder: Path) -> None:
    """Refuse what a sweep may not read: a test split, or a folder with no set."""
    if folder.name.endswith("-test"):
        raise SweepError(f"{folder} is a test split: it is read only to report, never to "
                         "choose a value by; sweep on a validation set")
    if not (folder / "truth.jsonl").exists():
        raise SweepError(f"{folder} holds no truth.jsonl: not a scene set")


def with_others(others: Sequence[str]) -> Thresholds:
    """The parameter file's thresholds with the `NAME=VALUE` settings of `others` (held
    fixed for every value swept)."""
    settings = default_thresholds()
    for other in others:
        name, sep, value = other.partition("=")
        if not sep:
            raise SweepError(f"--also takes NAME=VALUE, not {other!r}")
        settings = thresholds_with(name.strip(), value.strip(), settings)
    return settings


def sweep_one(name: str, value: str, folder: Path, limit: int | None = None,
              others: Sequence[str] = ()) -> list[list[object]]:
    """The rows of one value on one set (the `others` held fixed): per setup, then
    "all"."""
    settings = thresholds_with(name, value, with_others(others))
    counts, photos, misses, _ = tally_set(folder, limit=limit, modes=(Mode.TRACKER,),
                                          thresholds=settings)
    tallies = {setup: tally for (setup, _), tally in counts.items()}
    rows: list[list[object]] = []
    also = " ".join(others)
    total = Tally()
    for setup in sorted(tallies):
        rows.append([name, value, also, folder.name,
                     *tallies[setup].row(setup, str(Mode.TRACKER)),
                     len(photos[setup]), len(misses.get(setup, ()))])
        _merge(total, tallies[setup])
    rows.append([name, value, also, folder.name, *total.row("all", str(Mode.TRACKER)),
                 sum(len(v) for v in photos.values()), sum(len(v) for v in misses.values())])
    return rows


def sweep(name: str, values: Sequence[str], folders: Sequence[Path], out: Path, *,
          limit: int | None = None, jobs: int = 2, others: Sequence[str] = ()
          ) -> list[list[object]]:
    """Every value on every set (`jobs` processes, a value and set each; `others`:
    `NAME=VALUE` settings held fixed), written to `out` as CSV; returns the rows."""
    for value in values:
        thresholds_with(name, value, with_others(others))
    for folder in folders:
        check_set(folder)
    tasks = [(name, value, folder, limit, tuple(others)) for value in values
             for folder in folders]
    if jobs > 1 and len(tasks) > 1:
        with ProcessPoolExecutor(jobs) as pool:
            parts = list(pool.map(sweep_one, *zip(*tasks, strict=True)))
    else:
        parts = [sweep_one(*task) for task in tasks]
    rows = [row for part in parts for row in part]
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(COLUMNS)
        writer.writerows(rows)
    return rows


def _summary(rows: Sequence[list[object]]) -> str:
    """The "all" rows, a line each: what a value does to the figures that matter most."""
    at = {c: i for i, c in enumerate(COLUMNS)}
    lines = []
    for row in rows:
        if row[at["setup"]] != "all":
            continue
        false = int(str(row[at["bridges_found"]])) - int(str(row[at["bridges_matched"]]))
        also = f" ({row[at['also']]})" if row[at["also"]] else ""
        lines.append(
            f"{row[at['parameter']]}={row[at['value']]}{also} {row[at['set']]}: "
            f"cells wrong {row[at['cells_wrong']]}/{row[at['cells']]}, "
            f"bridges found {row[at['bridges_matched']]}/{row[at['bridges_true']]} "
            f"(and {false} false), "
            f"clean flagged {row[at['clean_flagged_occluded']]}/{row[at['clean_frames']]}, "
            f"hand frames wrong unflagged {row[at['hand_frames_wrong_unflagged']]}"
            f"/{row[at['hand_frames']]}, no calibration {row[at['calibration_misses']]}, "
            f"{row[at['ms_per_frame']]} ms")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lab.sweep",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("name", help="a parameter of contracts/thresholds.json")
    parser.add_argument("values", nargs="+", help="the values to try")
    parser.add_argument("--set", dest="sets", type=Path, action="append", required=True,
                        metavar="DIR", help="a validation set (repeat for more)")
    parser.add_argument("--out", type=Path, help="the CSV table (default "
                        "results/sweeps/NAME.csv)")
    parser.add_argument("--limit", type=int, help="read only each set's first N images")
    parser.add_argument("--jobs", type=int, default=2, help="processes (default 2)")
    parser.add_argument("--also", action="append", default=[], metavar="NAME=VALUE",
                        help="another parameter held at VALUE for every value swept")
    args = parser.parse_args(argv)
    out = args.out or Path("results") / "sweeps" / f"{args.name}.csv"
    try:
        rows = sweep(args.name, args.values, args.sets, out, limit=args.limit, jobs=args.jobs,
                     others=args.also)
    except (SweepError, json.JSONDecodeError, KeyError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(_summary(rows))
    print(f"wrote {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
