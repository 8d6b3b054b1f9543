"""Evaluation on synthetic frames (not a test): accuracy and speed per setup, as a CSV table.

For each setup of `lab.synth.SETUPS`, frames are sampled with `random_spec` and read three
ways: `read` locates the board and learns the colours from the frame alone (what
`ponte read IMAGE` does); `tracker` is the live loop's `BoardReader`, built from a
calibration made on a photo of the same scene with the board empty (what `ponte calibrate
--empty` does once), reading the frame's JPEG bytes, decoded at half size (what `ponte
read IMAGE --calibration FILE` and `ponte bench vision` do); `live` is another reader from
the same calibration, reading the frame decoded whole, as the live loop gets frames from
`cv2.VideoCapture` (it takes them down to half size itself). Wide-angle frames are read
with the lens calibration of their camera in those two modes (`ponte calibrate-lens` does
that once).

Columns: frames; clean frames (no hand); cells read and cells wrong on clean frames, and
the error rate; bridges in the truth, found, matched, recall and precision on clean frames;
clean frames flagged occluded; hand frames; hand frames read as a wrong board without the
occluded flag; frames that raised an error; milliseconds per frame (the median); last, the
cells read and cells wrong on the clean frames the reader did not flag occluded (the only
frames the live loop commits: a flagged frame's cells, those it marks hidden among them,
are not vouched for).

With a listing file, every mistake behind those counts is written there too, one per line
(`MISTAKE_COLUMNS`): the frame (seed, setup and its index within the setup, so that
`scene` draws it again), the mode, what is wrong, and whether the frame was flagged.
"""

from __future__ import annotations

import csv
import json
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

import cv2
import numpy as np

from calibration.make import make_calibration, save_lens
from contracts.calibration import (
    Calibration,
    CalibrationError,
    Lens,
    Thresholds,
    save_calibration,
)
from vision.cells import SIZE, cell_name, parse_cell
from vision.errors import VisionError
from vision.observation import Observation
from vision.pipeline import read_board
from vision.tracking import BoardReader

if TYPE_CHECKING:
    from lab.synth import Frame, SceneSpec

COLUMNS = (
    "setup", "mode", "frames", "clean_frames", "cells", "cells_wrong", "cell_error_rate",
    "bridges_true", "bridges_found", "bridges_matched", "bridge_recall", "bridge_precision",
    "clean_flagged_occluded", "hand_frames", "hand_frames_wrong_unflagged", "errors",
    "ms_per_frame", "cells_unflagged", "cells_wrong_unflagged",
)

MISTAKE_COLUMNS = ("seed", "setup", "index", "mode", "kind", "where", "truth", "read",
                   "flagged")
"""The listing's columns. `kind`: `cell` (`where` a cell, `truth` and `read` its states as
'.', 'L' or 'D'), `missed` or `false` (a bridge, as "a1-c2"), on frames without a hand;
`hand` (a hand frame read as a wrong board without the flag; `where` empty); `error` (the
frame could not be read; `read` the error). `flagged`: 1 when the reader flagged the frame
`occluded`."""


@dataclass
class Tally:
    """Running counts for one setup and mode."""

    frames: int = 0
    clean: int = 0
    cells: int = 0
    wrong: int = 0
    bridges_true: int = 0
    bridges_found: int = 0
    matched: int = 0
    clean_flagged: int = 0
    hand_frames: int = 0
    hand_wrong_unflagged: int = 0
    errors: int = 0
    cells_unflagged: int = 0
    wrong_unflagged: int = 0
    ms: list[float] = field(default_factory=list)

    def add(self, truth_board: tuple[str, ...], truth_bridges: set[tuple[str, str]],
            occluded: bool, obs: Observation | None, ms: float, error: str = ""
            ) -> list[tuple[str, ...]]:
        """Count one frame's reading (`error`: why there is none); returns its mistakes
        (see `mistakes`), which are what it counts."""
        self.frames += 1
        self.ms.append(ms)
        if occluded:
            self.hand_frames += 1
        found = mistakes(truth_board, truth_bridges, occluded, obs, error)
        kinds = [m[0] for m in found]
        if obs is None:
            self.errors += 1
            return found
        if occluded:
            self.hand_wrong_unflagged += kinds.count("hand")
            return found
        wrong, missed = kinds.count("cell"), kinds.count("missed")
        self.clean += 1
        self.cells += 100
        self.wrong += wrong
        self.bridges_true += len(truth_bridges)
        self.matched += len(truth_bridges) - missed
        self.bridges_found += len(truth_bridges) - missed + kinds.count("false")
        self.clean_flagged += int(obs.occluded)
        if not obs.occluded:
            self.cells_unflagged += 100
            self.wrong_unflagged += wrong
        return found

    def row(self, setup: str, mode: str) -> list[object]:
        return [
            setup, mode, self.frames, self.clean, self.cells, self.wrong,
            f"{self.wrong / self.cells:.6f}" if self.cells else "",
            self.bridges_true, self.bridges_found, self.matched,
            f"{self.matched / self.bridges_true:.4f}" if self.bridges_true else "",
            f"{self.matched / self.bridges_found:.4f}" if self.bridges_found else "",
            self.clean_flagged, self.hand_frames, self.hand_wrong_unflagged, self.errors,
            f"{float(np.median(self.ms)):.2f}" if self.ms else "",
            self.cells_unflagged, self.wrong_unflagged,
        ]


def mistakes(truth_board: tuple[str, ...], truth_bridges: set[tuple[str, str]],
             occluded: bool, obs: Observation | None, error: str = "") -> list[tuple[str, ...]]:
    """What a reading got wrong, as `MISTAKE_COLUMNS`' (kind, where, truth, read, flagged):
    what `Tally.add` counts (a hand frame's mistakes only when the frame is not flagged)."""
    if obs is None:
        return [("error", "", "", error, "")]
    flagged = "1" if obs.occluded else "0"
    rows = obs.board_rows()
    wrong = [(cell_name(f, SIZE - 1 - r), a, b)
             for r, (ra, rb) in enumerate(zip(truth_board, rows, strict=True))
             for f, (a, b) in enumerate(zip(ra, rb, strict=True)) if a != b]
    got = {(a, b) for a, b in obs.bridge_names()}
    if occluded:
        return ([("hand", "", "", "", flagged)]
                if (wrong or got != truth_bridges) and not obs.occluded else [])
    out = [("cell", name, a, b, flagged) for name, a, b in wrong]
    out += [("missed", f"{a}-{b}", "bridge", "", flagged) for a, b in sorted(truth_bridges - got)]
    out += [("false", f"{a}-{b}", "", "bridge", flagged) for a, b in sorted(got - truth_bridges)]
    return out


def scene(seed: int, setup: str, index: int) -> SceneSpec:
    """The `index`-th scene (from 0) of `setup` that `evaluate` draws with `seed`: one
    generator per seed and setup, as the listing's lines name frames."""
    from lab.synth import SETUPS, random_spec

    if setup not in SETUPS:
        raise ValueError(f"unknown setup {setup!r}")
    rng = np.random.default_rng([seed, list(SETUPS).index(setup)])
    spec = random_spec(rng, setup)
    for _ in range(index):
        spec = random_spec(rng, setup)
    return spec


def _lens_of(frame_camera: np.ndarray, dist: tuple[float, ...], size: tuple[int, int]) -> Lens:
    return Lens(
        camera_matrix=tuple(tuple(float(v) for v in row) for row in frame_camera),
        distortion=tuple(float(v) for v in dist),
        image_size=size,
    )


def evaluate(count: int, out: Path, *, seed: int = 1, listing: Path | None = None) -> int:
    """Read `count` generated frames spread over all setups; write the CSV table to `out`,
    and with `listing` every mistake behind it (see `MISTAKE_COLUMNS`)."""
    from lab.synth import SETUPS, random_spec, render

    cv2.setNumThreads(1)
    names = list(SETUPS)
    per_setup = [count // len(names) + (1 if i < count % len(names) else 0)
                 for i in range(len(names))]
    rows: list[list[object]] = []
    totals = {mode: Tally() for mode in MODES}
    found: list[tuple[object, ...]] = []
    for index, (name, n) in enumerate(zip(names, per_setup, strict=True)):
        rng = np.random.default_rng([seed, index])
        tallies = {mode: Tally() for mode in MODES}
        for number in range(n):
            spec = random_spec(rng, name)
            frame = render(spec)
            truth_bridges = {(a, b) for a, b in frame.bridges}
            for mode, obs, ms, problem in read_modes(_encoded(frame), calibration_for(spec)):
                found += [(seed, name, number, mode, *m) for m in tallies[mode].add(
                    frame.board, truth_bridges, frame.occluded, obs, ms, problem)]
        for mode, tally in tallies.items():
            rows.append(tally.row(name, mode))
            _merge(totals[mode], tally)
        print(f"{name}: done ({n} frames)", file=sys.stderr)
    for mode, tally in totals.items():
        rows.append(tally.row("all", mode))
    write_tables(out, COLUMNS, rows, listing, found)
    print(f"written to {out}", file=sys.stderr)
    return 0


def write_tables(out: Path, columns: Sequence[str], rows: list[list[object]],
                 listing: Path | None, found: list[tuple[object, ...]]) -> None:
    """Write the table (and, with `listing`, every mistake behind it) as CSV; print it."""
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(columns)
        writer.writerows(rows)
    _print_table(rows)
    if listing is not None:
        listing.parent.mkdir(parents=True, exist_ok=True)
        with listing.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(MISTAKE_COLUMNS)
            writer.writerows(found)
        print(f"{len(found)} mistakes listed in {listing}", file=sys.stderr)


NO_CALIBRATION = "no calibration could be made of the empty board"


def _encoded(frame: Frame) -> bytes:
    """The frame's JPEG bytes, as a camera sends them."""
    return frame.encoded or cv2.imencode(".jpg", frame.image)[1].tobytes()


class Mode(StrEnum):
    """A way `evaluate` reads each frame (the listing's and the table's `mode`)."""

    READ = "read"
    """From the frame alone: the board located and the colours learned (`ponte read IMAGE`)."""
    TRACKER = "tracker"
    """The live loop's reader (`BoardReader`) after calibrating on the empty board, on the
    JPEG bytes decoded at half size (`ponte read --calibration`, `ponte bench vision`)."""
    LIVE = "live"
    """Another reader from the same calibration, on the frame decoded whole, as the live
    loop gets frames from `cv2.VideoCapture`."""


MODES = tuple(Mode)


def read_modes(data: bytes, calibration: Calibration | None,
               modes: Sequence[Mode] = MODES, thresholds: Thresholds | None = None
               ) -> list[tuple[Mode, Observation | None, float, str]]:
    """A frame (its JPEG bytes `data`) read in each of `modes`, as `evaluate` reads it,
    the calibrated modes with `calibration` (see `calibration_for`; None when none could
    be made), `read` with `thresholds` (default: the parameter file's): per mode, the
    reading (None when there is none), the milliseconds it took and why it failed."""
    image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    readers: dict[Mode, Callable[[], Observation]] = {
        Mode.READ: lambda: read_board(image, settings=thresholds)}
    if calibration is not None:
        tracker, live = BoardReader(calibration), BoardReader(calibration)
        readers[Mode.TRACKER] = lambda: tracker.read(data)
        readers[Mode.LIVE] = lambda: live.read(image)
    out: list[tuple[Mode, Observation | None, float, str]] = []
    for mode in modes:
        if mode not in readers:
            out.append((mode, None, 0.0, NO_CALIBRATION))
            continue
        start = time.perf_counter()
        obs: Observation | None = None
        try:
            obs, problem = readers[mode](), ""
        except VisionError as exc:
            problem = str(exc)
        out.append((mode, obs, (time.perf_counter() - start) * 1000, problem))
    return out


def show_scene(seed: int, setup: str, index: int, out: Path) -> list[tuple[object, ...]]:
    """One frame of `evaluate` (see `scene`) written into the folder `out`, to be looked
    at and read again with `ponte` itself: `frame.jpg` (the bytes the reader reads),
    `empty.png` (the calibration photo: the same scene with nothing on the board),
    `lens.json` for a wide-angle camera, `calibration.json` (`ponte calibrate --empty`
    on that photo), `truth.json` (as `ponte read --json` prints a board) and
    `read.png`, `tracker.png` and `live.png` (the frame with each mode's mistakes drawn
    on it).
    Returns the frame's mistakes as `evaluate`'s listing has them."""
    from lab.synth import render

    spec = scene(seed, setup, index)
    frame = render(spec)
    data = _encoded(frame)
    out.mkdir(parents=True, exist_ok=True)
    (out / "frame.jpg").write_bytes(data)
    truth = {"board": list(frame.board),
             "bridges": sorted(sorted(pair) for pair in frame.bridges),
             "occluded": frame.occluded}
    (out / "truth.json").write_text(json.dumps(truth) + "\n", encoding="utf-8")
    photo, lens = empty_photo(spec)
    cv2.imwrite(str(out / "empty.png"), photo)
    if lens is not None:
        save_lens(lens, out / "lens.json")
    calibration = _calibrated(photo, lens)
    if calibration is not None:
        save_calibration(calibration, out / "calibration.json")
    truth_bridges = {(a, b) for a, b in frame.bridges}
    image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    found: list[tuple[object, ...]] = []
    for mode, obs, _, problem in read_modes(data, calibration):
        rows = mistakes(frame.board, truth_bridges, frame.occluded, obs, problem)
        found += [(seed, setup, index, mode, *m) for m in rows]
        cv2.imwrite(str(out / f"{mode}.png"), draw_mistakes(image, obs, rows))
    return found


def draw_mistakes(image: np.ndarray, obs: Observation | None,
                  rows: list[tuple[str, ...]]) -> np.ndarray:
    """`image` with the reading's grid and its mistakes (`mistakes`' rows) drawn on it: a
    wrong cell outlined in red with its truth and reading ("L>."), a missed bridge as a red
    line, a false one as an orange line; a hand frame read wrong without the flag, or no
    reading at all, says so across the top. The grid is the board's plane seen through
    its corners (a wide-angle lens bends it a little)."""
    out = image.copy()
    font = cv2.FONT_HERSHEY_SIMPLEX
    notes = ["hand not flagged" if kind == "hand" else f"error: {read}"
             for kind, _, _, read, _ in rows if kind in ("hand", "error")]
    for k, note in enumerate(notes):
        for colour, width in (((255, 255, 255), 5), ((0, 0, 255), 2)):
            cv2.putText(out, note, (10, 30 + 30 * k), font, 0.8, colour, width, cv2.LINE_AA)
    if obs is None:
        return out
    square = np.array([[0, 0], [SIZE, 0], [SIZE, SIZE], [0, SIZE]], np.float32)
    to_image = cv2.getPerspectiveTransform(square, np.array(obs.corners, np.float32))

    def at(points: list[tuple[float, float]]) -> np.ndarray:
        flat = np.array(points, np.float32).reshape(-1, 1, 2)
        return cv2.perspectiveTransform(flat, to_image).reshape(-1, 2).round().astype(np.int32)

    def line(points: list[tuple[float, float]], colour: tuple[int, int, int], width: int
             ) -> None:
        a, b = at(points)
        cv2.line(out, (int(a[0]), int(a[1])), (int(b[0]), int(b[1])), colour, width,
                 cv2.LINE_AA)

    for k in range(SIZE + 1):
        line([(k, 0), (k, SIZE)], (0, 200, 200), 1)
        line([(0, k), (SIZE, k)], (0, 200, 200), 1)
    for kind, where, truth, read, _ in rows:
        if kind == "cell":
            f, r = parse_cell(where)
            box = at([(f, r), (f + 1, r), (f + 1, r + 1), (f, r + 1)])
            cv2.polylines(out, [box], True, (0, 0, 255), 2, cv2.LINE_AA)
            x, y = box.min(axis=0)
            for colour, width in (((255, 255, 255), 4), ((0, 0, 255), 2)):
                cv2.putText(out, f"{truth}>{read}", (int(x) + 2, int(y) - 4), font, 0.6,
                            colour, width, cv2.LINE_AA)
        elif kind in ("missed", "false"):
            ends = [parse_cell(name) for name in where.split("-")]
            line([(f + 0.5, r + 0.5) for f, r in ends],
                 (0, 0, 255) if kind == "missed" else (0, 140, 255), 3)
    return out


def empty_photo(spec: SceneSpec, relight: np.random.Generator | None = None
                ) -> tuple[np.ndarray, Lens | None]:
    """The calibration photo of a scene: the same scene with nothing on the board and no
    hands (as `ponte calibrate --empty` wants it), and its camera's lens when it is a
    wide-angle one (as `ponte calibrate-lens` measures it).

    With `relight` (training), the photo's light is a little different, as it is when
    the room's light has changed since (exposure, the lamp's place, the window's angle)."""
    from lab.synth import render

    empty = replace(spec, board=tuple("." * spec.size for _ in range(spec.size)), bridges=(),
                    hands=())
    if relight is not None:
        light = empty.lighting
        x, y, z = light.lamp
        empty = replace(empty, lighting=replace(
            light, exposure=light.exposure * float(relight.uniform(0.88, 1.12)),
            lamp=(x + float(relight.normal(0, 0.8)), y + float(relight.normal(0, 0.8)), z),
            gradient_deg=light.gradient_deg + float(relight.uniform(-15, 15))))
    shot = render(empty)
    size = (shot.image.shape[1], shot.image.shape[0])
    lens = None
    if spec.camera.distorted:
        lens = _lens_of(shot.camera_matrix, tuple(shot.dist_coeffs), size)
    return shot.image, lens


def _calibrated(photo: np.ndarray, lens: Lens | None, thresholds: Thresholds | None = None
                ) -> Calibration | None:
    try:
        return make_calibration(photo, lens=lens, empty=True, thresholds=thresholds)
    except (VisionError, CalibrationError):
        return None


def calibration_for(spec: SceneSpec, relight: np.random.Generator | None = None
                    ) -> Calibration | None:
    """The calibration `ponte calibrate --empty` makes of a scene's `empty_photo` (None
    when it cannot make one)."""
    return _calibrated(*empty_photo(spec, relight))


def tracker_for(
    spec: object, frame: object, relight: np.random.Generator | None = None
) -> BoardReader | None:
    """A BoardReader calibrated on the same scene with an empty board and no hands, as
    `ponte calibrate --empty` calibrates (None when that fails); `relight`: see
    `empty_photo`."""
    from lab.synth import SceneSpec

    assert isinstance(spec, SceneSpec)
    calibration = calibration_for(spec, relight)
    return None if calibration is None else BoardReader(calibration)


def _merge(total: Tally, part: Tally) -> None:
    for name in ("frames", "clean", "cells", "wrong", "bridges_true", "bridges_found",
                 "matched", "clean_flagged", "hand_frames", "hand_wrong_unflagged", "errors",
                 "cells_unflagged", "wrong_unflagged"):
        setattr(total, name, getattr(total, name) + getattr(part, name))
    total.ms.extend(part.ms)


def _print_table(rows: list[list[object]]) -> None:
    show = ("setup", "mode", "frames", "cells_wrong", "cell_error_rate", "bridge_recall",
            "bridge_precision", "clean_flagged_occluded", "hand_frames_wrong_unflagged",
            "errors", "ms_per_frame", "cells_wrong_unflagged")
    idx = [COLUMNS.index(c) for c in show]
    widths = [max(len(c), *(len(str(r[i])) for r in rows)) for c, i in zip(show, idx,
                                                                          strict=True)]
    print("  ".join(c.ljust(w) for c, w in zip(show, widths, strict=True)))
    for r in rows:
        print("  ".join(str(r[i]).ljust(w) for i, w in zip(idx, widths, strict=True)))
