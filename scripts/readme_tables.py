"""The README's "How well it works" tables, made from the evaluation files in `results/`.

    python scripts/readme_tables.py           # rewrite README.md between the markers
    python scripts/readme_tables.py --check   # exit 1 if README.md differs from the files

Every figure in those tables comes from a CSV written by `ponte eval` or `ponte bench
vision --out`; nothing is typed in by hand, so the README cannot drift from the measurements. The
tables go between the lines `BEGIN` and `END` below, which README.md holds once each.
"""

from __future__ import annotations

import argparse
import csv
import re
import sys
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BEGIN = "<!-- tables: made by scripts/readme_tables.py from results/*.csv; do not edit -->"
END = "<!-- tables: end -->"

GAME_SETS = {
    "games_raytrace_test.csv": "ray-traced, shipped networks",
    "games_raytrace_test_trained_raytrace.csv": "ray-traced, trained on ray-traced",
    "games_eval.csv": "every setup",
    "games_eval_knock_seed1.csv": "every setup, camera knocked once",
    "games_eval_knock_seed2.csv": "every setup, camera knocked once",
    "games_eval_unmeasured_lens.csv": "wide-angle webcam, no lens file",
    "games_eval_every3.csv": "every setup",
    "games_eval_knock_every3.csv": "every setup, camera knocked once",
}
"""The files of `ponte eval games`, each with what its games are."""

Row = dict[str, str]


def _read(path: Path) -> list[Row]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def _vision_seed(path: Path) -> int:
    """`vision_eval.csv` is seed 1 (the command's default); the others name theirs."""
    found = re.fullmatch(r"vision_eval(?:_seed(\d+))?\.csv", path.name)
    if found is None:
        raise ValueError(f"{path.name}: not a vision evaluation file")
    return int(found.group(1) or 1)


def _count(n: int) -> str:
    return f"{n:,}"


def _of(part: int, whole: int) -> str:
    return f"{_count(part)} of {_count(whole)}"


def _percent(part: int, whole: int, digits: int) -> str:
    return f"{100 * part / whole:.{digits}f}%" if whole else "-"


def _table(header: Iterable[str], rows: Iterable[Iterable[str]]) -> list[str]:
    header = list(header)
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def _totals(rows: list[Row], mode: str) -> Row:
    (total,) = [r for r in rows if r["setup"] == "all" and r["mode"] == mode]
    return total


def vision_tables(results: Path) -> list[str]:
    """Accuracy of single frames over all the validation seeds, and the speed of each seed's
    run as a range over them."""
    files = sorted(results.glob("vision_eval*.csv"), key=_vision_seed)
    if not files:
        raise ValueError(f"no vision_eval*.csv in {results}")
    seeds = [_vision_seed(f) for f in files]
    tables = {f: _read(f) for f in files}

    def total(mode: str, *columns: str) -> tuple[int, ...]:
        return tuple(sum(int(_totals(tables[f], mode)[c]) for f in files) for c in columns)

    def cells(mode: str, digits: int) -> str:
        wrong, count = total(mode, "cells_wrong", "cells")
        return f"{_of(wrong, count)} ({_percent(wrong, count, digits)})"

    matched, true, found = total("tracker", "bridges_matched", "bridges_true", "bridges_found")
    rows = [
        ["cells wrong, frames without hands", cells("tracker", 4)],
        ["bridges found (recall)", _percent(matched, true, 2)],
        ["bridges reported that are real (precision)", _percent(matched, found, 2)],
        ["hand frames read as a wrong board, not flagged",
         _of(*total("tracker", "hand_frames_wrong_unflagged", "hand_frames"))],
        ["frames without hands flagged as hidden",
         _of(*total("tracker", "clean_flagged_occluded", "clean_frames"))],
        ["no calibration: cells wrong, frames without hands", cells("read", 2)],
        ["no calibration: no board found", _of(*total("read", "errors", "frames"))],
    ]

    frames = total("tracker", "frames")[0]
    setups = len({r["setup"] for f in files for r in tables[f]} - {"all"})
    return [
        f"**Single frames, validation seeds** (`ponte eval vision`: {_count(frames)} generated "
        f"frames, {setups} setups of light, camera and board, seeds {', '.join(map(str, seeds))}, "
        "which choices were made on; calibrated on the empty board unless the row says "
        "otherwise):",
        "",
        *_table(["", f"seeds {', '.join(map(str, seeds))}"], rows),
    ]


BENCH_FILES = {
    "bench_vision.csv": "all",
    "bench_vision_avx2.csv": "AVX-512 off",
}
"""The files of `ponte bench vision --out`, each with the vector instructions it ran with."""


def speed_tables(results: Path) -> list[str]:
    """The reader's time per 1280 x 720 frame on one core, from `ponte bench vision`: the
    median over its setups, their 95th percentile and the quietest reads."""
    rows, machines = [], set()
    for name, vectors in BENCH_FILES.items():
        path = results / name
        if not path.exists():
            continue
        overall = next(r for r in _read(path) if r["setup"] == "all")
        machines.add(overall["cpu"])
        rows.append([f"{vectors} ({overall['vectors']})",
                     *(f"{float(overall[c]):.1f} ms" for c in
                       ("median_ms", "p95_ms", "quietest_ms", "decoded_whole_ms",
                        "from_scratch_ms"))])
    if not rows:
        raise ValueError(f"no bench_vision*.csv in {results}")
    return [
        f"**Speed** (`ponte bench vision`, one core of a shared {' / '.join(sorted(machines))}):"
        " a calibrated read of a 1280 x 720 JPEG, decoding included:",
        "",
        *_table(["vectors", "median", "p95", "quietest", "frame decoded whole",
                 "`ponte read`"], rows),
    ]


def _game_set(path: Path, rows: list[Row]) -> str:
    games = [r for r in rows if r["setup"] != "all"]
    seeds = sorted({int(r["seed"]) for r in games})
    what = GAME_SETS.get(path.name, path.stem)
    if path.name.startswith("games_raytrace"):
        void = sum(r["void"] in ("1", "True") for r in games)
        return f"{what}: {len(games)} games, {void} void"
    every = max((int(r.get("read_every") or 1) for r in games), default=1)
    slower = f", one frame in {every} read" if every > 1 else ""
    return f"{what}{slower}: {len(games)} games, seed{'s' if len(seeds) > 1 else ''} " \
        f"{_runs(seeds)}"


def _runs(numbers: list[int]) -> str:
    """Sorted numbers with runs of three or more written as ranges: 1-6, 12, 16."""
    parts: list[str] = []
    start = 0
    for i in range(1, len(numbers) + 1):
        if i == len(numbers) or numbers[i] != numbers[i - 1] + 1:
            run = numbers[start:i]
            parts.append(f"{run[0]}-{run[-1]}" if len(run) >= 3 else ", ".join(map(str, run)))
            start = i
    return ", ".join(parts)


def game_tables(results: Path) -> list[str]:
    """Whole games: the record against the game played, and how soon a move is committed."""
    files = [results / name for name in GAME_SETS if (results / name).exists()]
    if not files:
        raise ValueError(f"no games_eval*.csv in {results}")
    accuracy = []
    for path in files:
        rows = _read(path)
        (total,) = [r for r in rows if r["setup"] == "all"]
        label = _game_set(path, rows)
        accuracy.append([
            label,
            _of(int(total["read_right"]), int(total["moves"])),
            total["flags"],
            _of(int(total["hand_frames_wrong"]), int(total["hand_frames"])),
            _of(int(total["still_frames_wrong"]), int(total["still_frames"])),
            f"{total['delay_median_s']} s ({total['delay_max_s']} s)",
        ])
    return [
        "**Whole games** (`ponte eval games`, through the live loop, a hand carrying every "
        "piece in; generated: 12 moves, 720p, 15 fps; ray-traced (`--videos "
        "raytrace-games`): 24 turns, 0.6 MP, 5 fps; one frame in 3 read: a core 3 times "
        "slower; latency: from a move's last piece put down to the move in the record):",
        "",
        *_table(["games", "moves recorded right", "false flags",
                 "hand frames read wrong, not flagged",
                 "still frames read wrong, not flagged", "latency, median (longest)"],
                accuracy),
    ]


SET_NAMES = {"set_synth_test.csv": "`synth`, shipped",
             "set_raytrace_test.csv": "`raytrace`, shipped",
             "set_synth_test_trained_raytrace.csv": "`synth`, trained on `raytrace`",
             "set_raytrace_test_trained_raytrace.csv": "`raytrace`, trained on `raytrace`"}
"""The frozen test splits' tables, by file: the source measured, and the networks that
read it: the shipped ones, or those trained on `raytrace` alone (`ponte eval protocol
--trained-on`)."""


def set_tables(results: Path) -> list[str]:
    """Single frames of the frozen test splits, one column per scene source."""
    files = [results / name for name in SET_NAMES if (results / name).exists()]
    if not files:
        return []
    totals = {f: {m: _totals(_read(f), m) for m in ("read", "tracker")} for f in files}

    def col(f: Path, fmt: str) -> str:
        t, r = totals[f]["tracker"], totals[f]["read"]
        n = {k: int(v) for k, v in t.items() if k not in ("setup", "mode") and v.isdigit()}
        if fmt == "cells":
            wrong, cells = n["cells_wrong"], n["cells"]
            return f"{_of(wrong, cells)} ({_percent(wrong, cells, 3)})"
        if fmt == "recall":
            return _percent(n["bridges_matched"], n["bridges_true"], 2)
        if fmt == "precision":
            return _percent(n["bridges_matched"], n["bridges_found"], 2)
        if fmt == "hands":
            return _of(n["hand_frames_wrong_unflagged"], n["hand_frames"])
        if fmt == "flagged":
            return _of(n["clean_flagged_occluded"], n["clean_frames"])
        if fmt == "calibration":
            return _of(int(t["calibration_misses"]), int(t["empty_photos"]))
        cells, wrong = int(r["cells"]), int(r["cells_wrong"])
        if fmt == "read":
            return f"{_of(wrong, cells)} ({_percent(wrong, cells, 2)})"
        return _of(int(r["errors"]), int(r["frames"]))

    rows = [[label, *(col(f, key) for f in files)] for label, key in (
        ("cells wrong, frames without hands", "cells"),
        ("bridges found (recall)", "recall"),
        ("bridges reported that are real (precision)", "precision"),
        ("hand frames read as a wrong board, not flagged", "hands"),
        ("frames without hands flagged as hidden", "flagged"),
        ("empty photos calibration found no board in", "calibration"),
        ("no calibration: cells wrong, frames without hands", "read"),
        ("no calibration: no board found", "noboard"))]
    sizes = {f.name.split("_")[1]: totals[f]["tracker"]["frames"] for f in files}
    images = ", ".join(f"{n} `{source}` images" for source, n in sizes.items())
    return [
        "**Test splits** (`ponte eval protocol`: frozen in "
        f"`lab/frozen/`, read only to report; {images}; each column: source measured, "
        "networks: shipped (fitted on `synth`, the deck network on both) or trained on "
        "`raytrace` (`lab/models-raytrace/`); thresholds tuned on `synth`; calibrated on "
        "each table's empty photo unless a row says not):",
        "",
        *_table(["", *(SET_NAMES[f.name] for f in files)], rows),
        "",
    ]


def tables(results: Path) -> str:
    """The Markdown that goes between the markers."""
    return "\n".join([*set_tables(results), *vision_tables(results), "",
                      *speed_tables(results), "", *game_tables(results)]) + "\n"


def rewrite(readme: str, made: str) -> str:
    """`readme` with the text between its markers replaced by `made`."""
    if readme.count(BEGIN) != 1 or readme.count(END) != 1:
        raise ValueError("README.md must hold each table marker exactly once")
    head, rest = readme.split(BEGIN)
    _, tail = rest.split(END)
    return f"{head}{BEGIN}\n\n{made}\n{END}{tail}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="only compare; exit 1 if README.md differs")
    parser.add_argument("--readme", type=Path, default=ROOT / "README.md")
    parser.add_argument("--results", type=Path, default=ROOT / "results")
    args = parser.parse_args(argv)
    try:
        readme = args.readme.read_text(encoding="utf-8")
        wanted = rewrite(readme, tables(args.results))
    except (OSError, ValueError, KeyError) as error:
        print(f"readme_tables: {error}", file=sys.stderr)
        return 2
    if wanted == readme:
        return 0
    if args.check:
        print(f"{args.readme}: its tables differ from {args.results}; run "
              "python scripts/readme_tables.py", file=sys.stderr)
        return 1
    args.readme.write_text(wanted, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
