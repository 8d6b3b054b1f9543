"""vision.bend: the board's printed lines measure how a camera's lens bends them, and
`make_calibration` measures a wide-angle lens on them instead of reading wrong cells."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from functools import cache
from pathlib import Path

import cv2
import numpy as np
import pytest

from calibration.make import make_calibration
from contracts.calibration import CalibrationError, Lens, default_thresholds
from vision.bend import Crossings, bend_of, grid_crossings, lens_from_board
from vision.geometry import board_homography

ROOT = Path(__file__).resolve().parents[1]
SETTINGS = default_thresholds()
EMPTY = tuple("." * 10 for _ in range(10))
TILES = (  # rank 10 first
    "L........D",
    "..........",
    "...LL.....",
    "..........",
    "D.......L.",
    "..........",
    ".....DD...",
    "..........",
    ".L......D.",
    "D........L",
)


@cache
def _wide_angle_scene(board: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    """A wide-angle webcam's frame (strong barrel distortion, k1 = -0.21: the one of the
    generated game scenes whose self-calibration missed the lines by half a cell) and the
    grid's true corners in it."""
    from lab.synth import SETUPS, render
    from lab.synth.setups import random_spec

    setup = "wide-angle-distorted"
    spec = random_spec(np.random.default_rng([2, list(SETUPS).index(setup)]), setup)
    assert spec.camera.k1 < -0.2
    shot = render(dataclasses.replace(spec, board=board, bridges=(), hands=()))
    return shot.image, np.asarray(shot.corners, np.float64)


def _undistorted(points: np.ndarray, lens: Lens) -> np.ndarray:
    k = np.array(lens.camera_matrix)
    found = cv2.undistortPoints(points.reshape(-1, 1, 2), k, np.array(lens.distortion), P=k)
    return np.asarray(found).reshape(-1, 2)


def _square_grid(cell: float = 40.0) -> tuple[np.ndarray, np.ndarray]:
    """Corners (a1 first) of a grid seen square-on, and the board-to-image homography."""
    corners = np.array([[100, 500], [100 + 10 * cell, 500], [100 + 10 * cell, 100], [100, 100]],
                       np.float64)
    return corners, board_homography(corners)


def _crossings(to_image: np.ndarray, k1: float = 0.0, size: tuple[int, int] = (640, 600)
               ) -> Crossings:
    """The 81 inner crossings a camera with a radial lens `k1` (scale: the image's longer
    side, about its centre) would show."""
    board = np.array([(i, j) for i in range(1, 10) for j in range(1, 10)], np.float64)
    ideal = cv2.perspectiveTransform(board.reshape(-1, 1, 2), to_image).reshape(-1, 2)
    centre, scale = np.array(size) / 2.0, float(max(size))
    rel = (ideal - centre) / scale
    seen = centre + scale * rel * (1.0 + k1 * (rel**2).sum(axis=1))[:, None]
    return Crossings(board, seen)


def test_a_straight_grid_has_no_bend_and_a_lens_bends_it() -> None:
    corners, to_image = _square_grid()
    assert bend_of(SETTINGS, _crossings(to_image), corners) == pytest.approx(0.0, abs=1e-6)
    assert bend_of(SETTINGS, _crossings(to_image, k1=-0.6), corners) > 0.2  # type: ignore[operator]


def test_one_crossing_out_of_place_is_not_a_bend() -> None:
    """A mark or a glint beside a line moves one crossing; a lens moves them all."""
    corners, to_image = _square_grid()
    crossings = _crossings(to_image)
    moved = crossings.image.copy()
    moved[40] += (12.0, 0.0)  # 0.3 of a cell
    off = bend_of(SETTINGS, crossings._replace(image=moved), corners)
    assert off == pytest.approx(0.0, abs=1e-6)


def test_too_few_crossings_say_nothing() -> None:
    corners, to_image = _square_grid()
    few = _crossings(to_image)
    few = Crossings(few.board[:20], few.image[:20])
    assert bend_of(SETTINGS, few, corners) is None
    assert lens_from_board(SETTINGS, few, (640, 600)) is None


def test_a_radial_lens_is_recovered_from_the_crossings_alone() -> None:
    _, to_image = _square_grid()
    lens = lens_from_board(SETTINGS, _crossings(to_image, k1=-0.5), (640, 600))
    assert lens is not None
    assert lens.distortion[0] == pytest.approx(-0.5, abs=0.01)
    assert lens.rms_error < 0.05
    assert lens.image_size == (640, 600)


def test_a_lens_that_would_fold_the_picture_is_not_given() -> None:
    _, to_image = _square_grid()
    assert lens_from_board(SETTINGS, _crossings(to_image, k1=-2.5), (640, 600)) is None


def test_the_crossings_are_found_where_the_printed_lines_cross() -> None:
    image, truth = _wide_angle_scene(EMPTY)
    crossings = grid_crossings(SETTINGS, image, truth)
    assert len(crossings.board) == 81
    # the true corners make a homography that misses the bent lines in the middle of the
    # board by a fraction of a cell: the crossings are found on the lines, not the grid
    expected = cv2.perspectiveTransform(crossings.board.reshape(-1, 1, 2),
                                        board_homography(truth)).reshape(-1, 2)
    off = np.hypot(*(crossings.image - expected).T)
    assert off.max() > 3.0


def test_a_wide_angle_lens_is_measured_on_the_boards_own_lines() -> None:
    image, truth = _wide_angle_scene(EMPTY)
    calibration = make_calibration(image, empty=True)
    assert calibration.lens is not None and calibration.lens.distortion[0] < -0.3
    corners = np.array(calibration.corners)
    assert np.abs(corners - _undistorted(truth, calibration.lens)).max() < 5.0
    # with the check turned off: a grid through the bowed outline, half a cell off
    straight = dataclasses.replace(default_thresholds(), grid_bend_fit=99.0, grid_bend_limit=99.0)
    before = make_calibration(image, empty=True, thresholds=straight)
    assert before.lens is None
    assert np.abs(np.array(before.corners) - truth).max() > 15.0


def test_the_measured_lens_reads_tiles_in_their_cells() -> None:
    from vision.tracking import BoardReader

    empty, _ = _wide_angle_scene(EMPTY)
    frame, _ = _wide_angle_scene(TILES)
    calibration = make_calibration(empty, empty=True)
    seen = BoardReader(calibration).read(frame)
    assert not seen.occluded
    assert ["".join(s.value for s in row) for row in reversed(seen.cells)] == list(TILES)


def test_a_camera_without_distortion_gets_no_lens() -> None:
    image = cv2.imread(str(ROOT / "calibration" / "examples" / "empty-board.jpg"))
    assert make_calibration(image, empty=True).lens is None


def test_a_grid_that_misses_the_lines_is_refused_with_what_to_do() -> None:
    image, _ = _wide_angle_scene(EMPTY)
    strict = dataclasses.replace(default_thresholds(), grid_bend_fit=99.0)
    with pytest.raises(CalibrationError, match="ponte calibrate-lens"):
        make_calibration(image, empty=True, thresholds=strict)


def test_a_lens_file_that_does_not_undo_the_camera_is_named_as_the_cause() -> None:
    """A lens file made for another camera (here: bending the other way) leaves the grid
    off the lines; the limit is tightened so that this photo's small board shows it."""
    image, _ = _wide_angle_scene(EMPTY)
    h, w = image.shape[:2]
    scale = float(max(w, h))
    wrong = Lens(((scale, 0.0, w / 2), (0.0, scale, h / 2), (0.0, 0.0, 1.0)),
                 (0.8, 0.0, 0.0, 0.0, 0.0), (w, h))
    strict = dataclasses.replace(default_thresholds(), grid_bend_limit=0.1)
    with pytest.raises(CalibrationError, match="does not undo this camera's lens"):
        make_calibration(image, empty=True, lens=wrong, thresholds=strict)


def test_ponte_calibrate_tells_when_it_measured_the_lens(tmp_path: Path) -> None:
    image, _ = _wide_angle_scene(EMPTY)
    photo = tmp_path / "wide.png"
    cv2.imwrite(str(photo), image)
    out = tmp_path / "cal.json"
    done = subprocess.run(
        [sys.executable, "-m", "ponte", "calibrate", str(photo), "--empty", "--out", str(out)],
        capture_output=True, text=True, cwd=ROOT, check=True)
    assert "lens measured on the board's lines" in done.stdout
    assert json.loads(out.read_text())["lens"]["distortion"][0] < -0.3


def test_the_live_loop_calibrates_itself_through_a_wide_angle_lens() -> None:
    from ponte.live.camera import CameraReader

    empty, _ = _wide_angle_scene(EMPTY)
    frame, _ = _wide_angle_scene(TILES)
    camera = CameraReader(expect_empty=lambda: True)
    camera.read(empty, 0.0)
    camera.read(empty, 0.125)  # the board found in the same place twice running
    assert camera.calibrated and camera.calibration.lens is not None
    # Tiles all put down at once: read, but held back until the picture has rested.
    t = 0.25
    while t < 0.25 + default_thresholds().stir_rest_s:
        assert camera.read(frame, t).pending
        t += 0.125
    reading = camera.read(frame, t)
    assert not reading.occluded
    tiles = {f"{'abcdefghij'[f]}{10 - r}": {"L": "light", "D": "dark"}[ch]
             for r, row in enumerate(TILES) for f, ch in enumerate(row) if ch != "."}
    assert reading.board.tiles == tiles


def test_the_live_loop_says_why_a_bent_grid_is_not_taken(monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    """An empty board whose grid misses its lines is not calibrated on as if tiles lay on
    it (the fallback for a game resumed): the reason is kept for the person setting up."""
    from calibration import make
    from ponte.live.camera import CameraReader

    strict = dataclasses.replace(default_thresholds(), grid_bend_fit=99.0)
    monkeypatch.setattr(make, "default_thresholds", lambda: strict)
    empty, _ = _wide_angle_scene(EMPTY)
    camera = CameraReader(expect_empty=lambda: True)
    for t in (0.0, 0.3, 0.6):
        assert camera.read(empty, t).occluded
    assert not camera.calibrated
    assert camera.problem is not None and "ponte calibrate-lens" in camera.problem


def test_a_grid_located_off_the_lines_is_laid_through_them() -> None:
    """A lamp's shadow across the board's outline put the located grid 19 px off at a
    corner (`ponte eval vision` seed 6, warm lamp, scene 67); the printed lines put it
    back, straight, with no lens."""
    from lab.evaluate import empty_photo, scene
    from lab.synth import render

    spec = scene(6, "warm-lamp-shadows", 67)
    photo, lens = empty_photo(spec)
    assert lens is None
    truth = render(dataclasses.replace(spec, board=EMPTY, bridges=(), hands=())).corners
    calibration = make_calibration(photo, empty=True)
    assert calibration.lens is None
    assert np.abs(np.array(calibration.corners) - truth).max() < 2.0
    loose = dataclasses.replace(default_thresholds(), grid_bend_fit=99.0, grid_bend_limit=99.0)
    before = make_calibration(photo, empty=True, thresholds=loose)
    assert np.abs(np.array(before.corners) - truth).max() > 10.0


@pytest.mark.parametrize("corners", [
    [[10, 90], [90, 90], [90, 10], [10, 10]],  # a square, on a blank picture
    [[0, 0], [10, 10], [20, 20], [30, 30]],  # corners on one line
], ids=["blank", "collinear"])
def test_no_grid_gives_no_crossings_and_no_error(corners: list[list[int]]) -> None:
    blank = np.zeros((100, 100, 3), np.uint8)
    crossings = grid_crossings(SETTINGS, blank, np.array(corners, np.float64))
    assert len(crossings.board) == 0
    assert bend_of(SETTINGS, crossings, np.array(corners, np.float64)) is None
