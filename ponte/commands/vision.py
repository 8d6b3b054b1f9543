"""Camera commands: `read`, `calibrate`, `calibrate-lens`, `markers`, and `eval vision`."""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

from ponte.cli import CommandError, lab_module

GENERATED_GAMES = {"setups": "all", "seeds": "1", "turns": 12, "knock": False,
                   "unmeasured_lens": False, "fast": False, "drop": 0.0, "every": 1}
"""The options of `eval games` that say how to generate its games, with their defaults
(with `--videos` the games are recorded ones, and none of these may be given)."""


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "read", help="read the board, tiles and bridges from images",
        description="Read each image and print the board: ranks 10 to 1, each cell '.' "
        "empty, 'L' light, 'D' dark, '?' hidden (something covers it). Exit status 0 if "
        "every image was read, 2 if one could not be (not an image, too small, no board).")
    p.add_argument("images", nargs="+", metavar="IMAGE")
    p.add_argument("--calibration", metavar="FILE",
                   help="calibration file: read each image as the live loop reads a frame "
                        "(else locate the board in each)")
    p.add_argument("--json", action="store_true",
                   help="one JSON object per image per line: board (10 strings, rank 10 "
                   "first, the characters above, '?' for a hidden cell), bridges, occluded, "
                   "error and error_type (null when read)")
    p.set_defaults(handler=run_read)

    p = subparsers.add_parser("calibrate", help="make a calibration from a photo of the board")
    p.add_argument("image", metavar="IMAGE")
    p.add_argument("--out", required=True, metavar="FILE")
    p.add_argument(
        "--a1",
        choices=["bottom-left", "bottom-right", "top-left", "top-right"],
        default="bottom-left",
        help="the board corner, as the image shows it, that is a1 (default bottom-left)",
    )
    p.add_argument("--lens", metavar="FILE", help="lens file from `ponte calibrate-lens`")
    p.add_argument("--markers", action="store_true", help="find the board by ArUco markers")
    p.add_argument(
        "--empty", action="store_true",
        help="the photo shows the board with nothing on it: every cell's bare board is learned,"
        " also where the light makes it look like a tile",
    )
    p.set_defaults(handler=run_calibrate)

    p = subparsers.add_parser(
        "calibrate-lens", help="lens model from photos of a printed chessboard pattern"
    )
    p.add_argument("images", nargs="+", metavar="IMAGE")
    p.add_argument("--out", required=True, metavar="FILE")
    p.add_argument("--pattern", default="9x6", help="inner corners COLSxROWS (default 9x6)")
    p.set_defaults(handler=run_calibrate_lens)

    p = subparsers.add_parser("markers", help="write a printable sheet of 4 ArUco markers")
    p.add_argument("--out", required=True, metavar="FILE", help="PNG file to write")
    p.set_defaults(handler=run_markers)

    p = subparsers.add_parser("eval", help="measure accuracy on generated data (CSV table)")
    targets = p.add_subparsers(dest="target", metavar="TARGET", required=True)
    v = targets.add_parser("vision", help="the camera pipeline on synthetic frames")
    v.add_argument("--count", type=int, default=700,
                   help="frames in all, spread evenly over the setups (default 700)")
    v.add_argument("--out", default="results/vision_eval.csv", metavar="FILE")
    v.add_argument("--seed", type=int, default=1)
    v.add_argument("--mistakes", metavar="FILE",
                   help="also list every mistake, one per line (CSV): the frame (seed, setup, "
                        "index), the mode, the cell or bridge, truth and reading")
    v.set_defaults(handler=run_eval)
    v = targets.add_parser(
        "games", help="whole generated games, or recorded game videos (--videos), through the "
                      "live loop: the record against the game played")
    v.add_argument("--setups", default=GENERATED_GAMES["setups"], metavar="NAMES",
                   help="setups, comma-separated (default: all)")
    v.add_argument("--seeds", default=GENERATED_GAMES["seeds"], metavar="SEEDS",
                   help="game seeds, comma-separated (default 1)")
    v.add_argument("--turns", type=int, default=GENERATED_GAMES["turns"],
                   help="moves a game (default 12)")
    v.add_argument("--knock", action="store_true",
                   help="knock the camera once in each game (after the first move)")
    v.add_argument("--unmeasured-lens", action="store_true",
                   help="set a wide-angle webcam up without `ponte calibrate-lens`: the loop "
                        "calibrates itself on the empty board, measuring the lens on its lines")
    v.add_argument("--fast", action="store_true",
                   help="quick players: the next hand reaches in 0.3 s after the last left")
    v.add_argument("--drop", type=float, default=GENERATED_GAMES["drop"], metavar="SHARE",
                   help="the reader loses this share of the pieces (e.g. 0.2), each from "
                        "when it is put down for up to one turn (default 0)")
    v.add_argument("--every", type=int, default=GENERATED_GAMES["every"], metavar="N",
                   help="the loop reads one frame in N, as on a core N times slower: the "
                        "newest whenever it is free (default 1: every frame)")
    v.add_argument("--videos", metavar="DIR",
                   help="instead, read recorded game videos: a folder (or a set in lab/frozen, "
                        "such as raytrace-games) holding NN.mp4 with NN.jsonl (a truth line a "
                        "frame) and NN.moves (the moves played)")
    v.add_argument("--jobs", type=int, default=1, help="games played at once (default 1)")
    v.add_argument("--out", metavar="FILE",
                   help="CSV table (default results/games_eval.csv; with --videos "
                        "results/games_<folder>.csv)")
    v.set_defaults(handler=run_eval_games)
    v = targets.add_parser(
        "set", help="the camera pipeline on a frozen scene set of either source (lab/frozen): "
                    "per setup and mode, with the empty photos calibration found no board in")
    v.add_argument("set", metavar="SET",
                   help="a set in lab/frozen (synth-test, raytrace-test, ...) or a folder "
                        "holding truth.jsonl")
    v.add_argument("--out", metavar="FILE",
                   help="CSV table (default results/set_SET.csv, dashes made underscores)")
    v.add_argument("--mistakes", metavar="FILE", help="also list every mistake (CSV)")
    v.add_argument("--limit", type=int, metavar="N", help="read only the first N images")
    v.set_defaults(handler=run_eval_set)
    v = targets.add_parser(
        "protocol", help="every test split of both sources (synth-test, raytrace-test, "
                         "raytrace-games), with networks trained on one source")
    v.add_argument("--trained-on", choices=("synth", "raytrace"), default="synth",
                   help="the source the networks were trained on (default synth: the "
                        "shipped ones)")
    v.add_argument("--models", metavar="DIR",
                   help="with --trained-on raytrace: the folder of those networks")
    v.add_argument("--train", action="store_true",
                   help="with --trained-on raytrace: first render the ray-traced train split "
                        "(resumable, in the cache) and fit every network on it into --models "
                        "(hours on two cores; needs PyTorch)")
    v.add_argument("--train-images", type=int, default=600, metavar="N",
                   help="with --train: images of the train split (default 600, and half as "
                        "many more for the patch and deck networks)")
    v.add_argument("--train-quality", choices=("draft", "fine"), default="draft",
                   help="with --train: how the train split is rendered (default draft: no "
                        "antialiasing, quicker; the test split is fine)")
    v.add_argument("--only", metavar="SPLITS", default="",
                   help="comma-separated splits to measure (default all)")
    v.add_argument("--results", default="results", metavar="DIR",
                   help="folder for the tables (default results)")
    v.set_defaults(handler=run_eval_protocol)
    v = targets.add_parser(
        "scene", help="one frame of `eval vision` (as its --mistakes names it) written out, "
                      "read again, its mistakes drawn")
    v.add_argument("seed", type=int, metavar="SEED")
    v.add_argument("setup", metavar="SETUP")
    v.add_argument("index", type=int, metavar="INDEX", help="the frame's index in its setup")
    v.add_argument("--out", required=True, metavar="DIR", help="folder to write the files in")
    v.set_defaults(handler=run_eval_scene)


def run_read(args: argparse.Namespace) -> int:
    from contracts.calibration import CalibrationError, load_calibration
    from vision.errors import VisionError
    from vision.imageio import read_file, read_image
    from vision.pipeline import read_board
    from vision.tracking import read_calibrated

    calibration = None
    if args.calibration:
        try:
            calibration = load_calibration(args.calibration)
        except CalibrationError as exc:
            raise CommandError(str(exc)) from exc
    failed = 0
    for path in args.images:
        record: dict[str, Any] = {"image": path}
        try:
            if calibration is None:
                obs = read_board(read_image(path))
            else:  # the encoded bytes, as `ponte eval vision`'s tracker reads a frame
                obs = read_calibrated(read_file(path), calibration, source=path)
        except VisionError as exc:
            failed += 1
            message = _message(exc).removeprefix(f"{path}: ")
            record.update(board=None, bridges=None, occluded=None, error=message,
                          error_type=_error_type(exc))
            if args.json:
                print(json.dumps(record))
            else:
                print(f"ponte read: {path}: {message}", file=sys.stderr)
            continue
        record.update(obs.to_json(), error=None, error_type=None)
        record["board"] = _rows_with_hidden(obs)
        if args.json:
            print(json.dumps(record))
        else:
            print(f"{path}:")
            print(obs.picture())
    return 2 if failed else 0


HIDDEN = "?"
"""The character `ponte read` gives a cell something hides (its text picture's, too)."""


def _rows_with_hidden(obs: Any) -> list[str]:
    """The observation's board rows (rank 10 first) with hidden cells as `HIDDEN`."""
    rows = obs.board_rows()
    size = len(rows)
    out = []
    for k, text in enumerate(rows):
        rank = size - 1 - k
        out.append("".join(HIDDEN if (f, rank) in obs.occluded_cells else ch
                           for f, ch in enumerate(text)))
    return out


def _message(exc: Exception) -> str:
    """An error's message as a person reads it (no exception class names)."""
    return str(exc)


def _error_type(exc: Exception) -> str:
    """The error's kind for `--json`: board_not_found, image_unreadable, ..."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", type(exc).__name__).lower()


def run_calibrate(args: argparse.Namespace) -> int:
    from calibration.make import load_lens, make_calibration
    from contracts.calibration import A1Corner, CalibrationError, save_calibration
    from vision.errors import VisionError
    from vision.imageio import read_image

    _check_writable(Path(args.out))  # before the work, not after it
    try:
        lens = load_lens(args.lens) if args.lens else None
        image = read_image(args.image)
        cal = make_calibration(image, a1=A1Corner(args.a1), lens=lens, markers=args.markers,
                               empty=args.empty)
    except (VisionError, CalibrationError) as exc:
        raise CommandError(f"{args.image}: {_message(exc)}") from exc
    try:
        save_calibration(cal, args.out)
    except OSError as exc:
        raise CommandError(f"cannot write {args.out}: {exc.strerror or exc}") from None
    colours = cal.colours
    seen = [n for n in ("light", "dark") if colours and getattr(colours, n) is not None]
    known = sum(cell is not None for cell in cal.board or ())
    print(
        f"calibration written to {args.out}: board corners "
        + ", ".join(f"({x:.1f}, {y:.1f})" for x, y in cal.corners)
        + f"; a1 {args.a1}; tile colours learned: {', '.join(seen) or 'none yet'}"
        + f"; bare board known in {known} of 100 cells"
    )
    if lens is None and cal.lens is not None:
        print(f"the camera's lens bends the board's lines: lens measured on the board's lines "
              f"(k1 = {cal.lens.distortion[0]:.3f} at focal {cal.lens.camera_matrix[0][0]:.0f}"
              " px) and kept in the calibration")
    return 0


def run_calibrate_lens(args: argparse.Namespace) -> int:
    from calibration.make import calibrate_lens, save_lens
    from contracts.calibration import CalibrationError
    from vision.errors import VisionError
    from vision.imageio import read_image

    try:
        cols, rows = (int(v) for v in args.pattern.lower().split("x"))
    except ValueError as exc:
        raise CommandError(f"--pattern must look like 9x6, not {args.pattern!r}") from exc
    try:
        images = [read_image(p) for p in args.images]
        lens, used = calibrate_lens(images, (cols, rows))
    except (VisionError, CalibrationError) as exc:
        raise CommandError(_message(exc)) from exc
    save_lens(lens, args.out)
    print(f"lens written to {args.out}: pattern found in {used} of {len(images)} images, "
          f"reprojection error {lens.rms_error:.3f} px")
    return 0


def run_markers(args: argparse.Namespace) -> int:
    import cv2

    from vision.markers import marker_sheet

    out = Path(args.out)
    if out.suffix.lower() not in (".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff"):
        raise CommandError(f"{out}: write the sheet as a .png (or another image type)")
    if not cv2.imwrite(str(out), marker_sheet()):
        raise CommandError(f"{out}: cannot write the image")
    print(f"marker sheet written to {out} (A4 at 150 dpi; print at 100%)")
    return 0


def run_eval(args: argparse.Namespace) -> int:
    evaluate = lab_module("lab.evaluate").evaluate

    if args.count < 1:
        raise CommandError("--count must be at least 1")
    out = Path(args.out)
    listing = None if args.mistakes is None else Path(args.mistakes)
    for path in (out, listing):
        if path is not None:
            _check_writable(path)  # before the run, not after minutes of it
    try:
        return evaluate(args.count, out, seed=args.seed, listing=listing)
    except OSError as exc:
        raise CommandError(f"cannot write {exc.filename or out}: {exc.strerror}") from None


def run_eval_games(args: argparse.Namespace) -> int:
    if args.videos is not None:
        return _eval_game_videos(args)
    evaluate_games = lab_module("lab.gameeval").evaluate_games
    SETUPS = lab_module("lab.synth").SETUPS

    setups = list(SETUPS) if args.setups == "all" else args.setups.split(",")
    unknown = [s for s in setups if s not in SETUPS]
    if unknown:
        raise CommandError(f"unknown setup {unknown[0]!r}; known: {', '.join(SETUPS)}")
    try:
        seeds = [int(s) for s in args.seeds.split(",")]
    except ValueError:
        raise CommandError(f"--seeds must be whole numbers, comma-separated: {args.seeds!r}")\
            from None
    if args.turns < 1 or args.jobs < 1 or args.every < 1:
        raise CommandError("--turns, --jobs and --every must be at least 1")
    if not 0.0 <= args.drop <= 1.0:
        raise CommandError(f"--drop is a share between 0 and 1, not {args.drop}")
    out = Path(args.out or "results/games_eval.csv")
    _check_writable(out)
    try:
        return evaluate_games(setups, seeds, args.turns, out, knock=args.knock, jobs=args.jobs,
                              measured_lens=not args.unmeasured_lens, fast=args.fast,
                              drop=args.drop, every=args.every)
    except OSError as exc:
        raise CommandError(f"cannot write {exc.filename or out}: {exc.strerror}") from None


def _eval_game_videos(args: argparse.Namespace) -> int:
    videos = lab_module("lab.gamevideos")

    given = [name for name, default in GENERATED_GAMES.items() if getattr(args, name) != default]
    if given:
        flag = "--" + given[0].replace("_", "-")
        raise CommandError(f"{flag} says how to generate games; --videos reads recorded ones "
                           "as they are")
    if args.jobs < 1:
        raise CommandError("--jobs must be at least 1")
    try:
        folder = videos.video_folder(args.videos)
        out = Path(args.out or f"results/games_{folder.name.replace('-', '_')}.csv")
        _check_writable(out)
        return int(videos.evaluate_videos(folder, out, jobs=args.jobs))
    except videos.GameVideoError as exc:
        raise CommandError(str(exc)) from None
    except OSError as exc:
        raise CommandError(f"cannot read or write {exc.filename or args.videos}: "
                           f"{exc.strerror}") from None


def run_eval_protocol(args: argparse.Namespace) -> int:
    protocol = lab_module("lab.protocol")
    only = [name.strip() for name in args.only.split(",") if name.strip()]
    try:
        if args.train:
            if args.trained_on != "raytrace" or not args.models:
                raise protocol.ProtocolError("--train is for --trained-on raytrace --models "
                                             "DIR: the folder the networks are fitted into")
            status = int(protocol.train(Path(args.models), args.train_images,
                                        args.train_quality))
            if status:
                return status
        return int(protocol.run(args.trained_on, Path(args.models) if args.models else None,
                                Path(args.results), only))
    except protocol.ProtocolError as exc:
        raise CommandError(str(exc)) from None


def run_eval_set(args: argparse.Namespace) -> int:
    sets = lab_module("lab.sets")
    folder = Path(args.set)
    if not (folder / "truth.jsonl").exists():
        folder = Path(sets.__file__).parent / "frozen" / args.set
    if not (folder / "truth.jsonl").exists():
        known = sorted(p.name for p in (Path(sets.__file__).parent / "frozen").glob("*")
                       if (p / "truth.jsonl").exists())
        raise CommandError(f"no scene set {args.set!r}: give a folder holding truth.jsonl or "
                           f"one of {', '.join(known) or '(none frozen yet)'}")
    if args.limit is not None and args.limit < 1:
        raise CommandError("--limit must be at least 1")
    out = Path(args.out or f"results/set_{folder.name.replace('-', '_')}.csv")
    listing = None if args.mistakes is None else Path(args.mistakes)
    for path in (out, listing):
        if path is not None:
            _check_writable(path)
    try:
        sets.evaluate_set(folder, out, listing=listing, limit=args.limit)
    except OSError as exc:
        raise CommandError(f"cannot read or write {exc.filename or out}: {exc.strerror}")\
            from None
    print(f"written to {out}", file=sys.stderr)
    return 0


def run_eval_scene(args: argparse.Namespace) -> int:
    import csv

    evaluation = lab_module("lab.evaluate")
    MISTAKE_COLUMNS, show_scene = evaluation.MISTAKE_COLUMNS, evaluation.show_scene
    SETUPS = lab_module("lab.synth").SETUPS

    if args.setup not in SETUPS:
        raise CommandError(f"unknown setup {args.setup!r}; known: {', '.join(SETUPS)}")
    if args.index < 0:
        raise CommandError("INDEX must be 0 or more")
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise CommandError(f"{out}: is a file; give a folder to write in")
    _check_writable(out / "frame.jpg")
    try:
        found = show_scene(args.seed, args.setup, args.index, out)
    except OSError as exc:
        raise CommandError(f"cannot write {exc.filename or out}: {exc.strerror}") from None
    writer = csv.writer(sys.stdout, lineterminator="\n")
    writer.writerow(MISTAKE_COLUMNS)
    writer.writerows(found)
    made = (out / "calibration.json").exists()
    lens = " --lens lens.json" if (out / "lens.json").exists() else ""
    print(f"{len(found)} mistake(s); written to {out}: frame.jpg, empty.png, truth.json, "
          "read.png, tracker.png, live.png" + (", lens.json" if lens else "")
          + (f", calibration.json (what `ponte calibrate empty.png --empty{lens}` makes)"
             if made else "; no calibration could be made of empty.png"), file=sys.stderr)
    print(f"read it again: ponte read --json {out / 'frame.jpg'}"
          + (f"\n               ponte read --json --calibration {out / 'calibration.json'} "
             f"{out / 'frame.jpg'}" if made else ""), file=sys.stderr)
    return 0


def _check_writable(path: Path) -> None:
    """A CommandError unless a file can be written at `path` (its folder is made)."""
    if path.is_dir():
        raise CommandError(f"{path}: is a folder; give a file to write")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CommandError(f"cannot write {path}: {exc.strerror}") from None
    if not os.access(path.parent, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise CommandError(f"cannot write {path}: permission denied")
