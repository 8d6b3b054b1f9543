"""Making calibrations: from a photo of the board, and a lens model from pattern photos."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import cv2
import numpy as np

from contracts.calibration import (
    A1Corner,
    Calibration,
    CalibrationError,
    ColourModel,
    Lens,
    Thresholds,
    default_thresholds,
)

if TYPE_CHECKING:
    from vision.bend import Crossings

LENS_FORMAT = "ponte-lens"
LENS_VERSION = 1

EMPTY_MOST_TILES = 6
EMPTY_SURE = 0.99
"""With `empty`, how many cells may look like tiles with at least `EMPTY_SURE` conviction;
more means the photo is not of an empty board. An empty board's photo can show several
cells that look like tiles in dim light or a lamp's glare, but the reading is seldom sure of
them: at most 4 in 280 generated empty boards of the hardest setups, while a dim one showed
11 unsure ones."""


class BentGrid(CalibrationError):
    """The grid found for an empty board misses its printed lines, and neither a straight
    grid nor a lens measured on them fits them: a lens bends them more than that, or
    something lies over them."""


def make_calibration(
    image: np.ndarray,
    *,
    a1: A1Corner = A1Corner.BOTTOM_LEFT,
    lens: Lens | None = None,
    thresholds: Thresholds | None = None,
    markers: bool = False,
    empty: bool = False,
    most_tiles: int = EMPTY_MOST_TILES,
) -> Calibration:
    """A calibration from one photo of the board (empty, or with tiles on it).

    With `empty` (the photo shows the board with nothing on it), every cell nothing hides
    keeps its bare-board colours, also where the photo's light makes it look like a tile
    (a dim corner, a lamp's glare); without it, only the cells read as bare board. A photo
    said to be empty is refused (CalibrationError) when more than `most_tiles` cells look
    surely like tiles.

    With `empty`, the grid is checked against the board's printed lines (`vision.bend`).
    One that misses them by more than the thresholds' `grid_bend_fit` of a cell is laid
    through them: straight (a shadow across the outline put it off), or, without a `lens`,
    through a lens measured on them (a wide-angle webcam's bending), which the calibration
    keeps. A grid still more than `grid_bend_limit` off is refused (BentGrid): its cells
    would be read in the wrong place. (Tiles' edges beside the lines move the crossings: a
    photo with tiles is not judged so.)

    Raises the pipeline's typed errors (BoardNotFound, ImageTooSmall...) when the board
    cannot be found.
    """
    from vision.classify import learn_colours
    from vision.imageio import check_image
    from vision.measure import make_plan, measure
    from vision.tracking import with_view

    check_image(image)
    settings = thresholds or default_thresholds()
    h, w = image.shape[:2]
    if lens is not None and tuple(lens.image_size) != (w, h):
        raise CalibrationError(
            f"lens calibration is for {lens.image_size[0]} x {lens.image_size[1]} images, "
            f"this image is {w} x {h}"
        )
    corners = _located(settings, image, lens, a1, markers)
    bend = None
    if empty:  # judged on an empty board only: tiles' edges beside the lines move crossings
        from vision.bend import bend_of

        crossings = _crossings(settings, image, corners, lens)
        bend = bend_of(settings, crossings, corners)
        if bend is not None and bend > settings.grid_bend_fit:
            corners, lens, bend = _laid_through_lines(settings, image, crossings, corners,
                                                      lens, bend, a1, markers)
    if bend is not None and bend > settings.grid_bend_limit:
        raise BentGrid(_bent_message(bend, lens))
    k = dist = None
    if lens is not None:
        k = np.array(lens.camera_matrix, np.float64)
        dist = np.array(lens.distortion, np.float64)
    plan = make_plan(settings, corners, (w, h), k, dist)
    m = measure(settings, plan, image)
    ring = (float(m.ring_lab[0]), float(m.ring_lab[1]), float(m.ring_lab[2]))
    colours = learn_colours(settings, m.sub_lab, ring)
    # The border as this photo shows it, fixed shadows and all: the reader tells an arm
    # from the room's own light by comparing with it.
    # Both the ring's boxes and their outer halves (which tell an arm from a leaning tile).
    sampling = plan.sampling
    assert m.ring_outer_bgr is not None
    border = tuple(
        (float(x), float(y), float(b), float(g), float(r))
        for (x, y), (b, g, r) in zip(
            np.concatenate([sampling.ring_xy, sampling.ring_outer_xy]),
            np.concatenate([m.ring_bgr, m.ring_outer_bgr]), strict=True)
    )
    made = Calibration(
        board=bare_board_colours(settings, plan, m, colours, empty, most_tiles),
        image_size=(w, h),
        corners=tuple((float(x), float(y)) for x, y in corners),
        a1=a1,
        colours=colours,
        lens=lens,
        thresholds=settings,
        ring=border,
    )
    return with_view(made, image)


def _laid_through_lines(
    settings: Thresholds, image: np.ndarray, crossings: Crossings, corners: np.ndarray,
    lens: Lens | None, bend: float, a1: A1Corner, markers: bool,
) -> tuple[np.ndarray, Lens | None, float]:
    """A grid (through `corners`) that misses the printed lines' `crossings` by `bend`
    (cells) laid through the lines themselves: straight (the outline was found off: a
    shadow across its edge), or, without a `lens`, through a lens measured on them (a
    wide-angle lens bends them), whichever fits them, at most half as far off as before and
    within `grid_bend_fit`; the lens only when it fits them clearly better than a straight
    grid. Returns the corners, the lens and how far off the grid then is (as given when
    neither fits)."""
    from vision.bend import bend_of, lens_from_board, straight_corners

    tries = []
    straight = straight_corners(settings, crossings)
    if straight is not None:
        off = bend_of(settings, _crossings(settings, image, straight, lens), straight)
        tries.append((off, 0.7, lens, straight))
    if lens is None:
        h, w = image.shape[:2]
        fitted = lens_from_board(settings, crossings, (w, h))
        if fitted is not None:
            again = _located(settings, image, fitted, a1, markers)
            off = bend_of(settings, _crossings(settings, image, again, fitted), again)
            tries.append((off, 1.0, fitted, again))
    fits = [(off * weight, off, kept, found) for off, weight, kept, found in tries
            if off is not None and off < min(bend / 2, settings.grid_bend_fit)]
    if not fits:
        return corners, lens, bend
    _, off, kept, found = min(fits, key=lambda fit: fit[0])
    return found, kept, off


def _located(settings: Thresholds, image: np.ndarray, lens: Lens | None, a1: A1Corner,
             markers: bool) -> np.ndarray:
    """The grid's corners, a1's first (in the undistorted image when there is a lens)."""
    from vision.locate import locate_board, orient_corners

    h, w = image.shape[:2]
    located_in = image if lens is None else _undistorted(image, lens)
    return orient_corners(locate_board(settings, located_in, markers=markers), a1, (w, h))


def _undistorted(image: np.ndarray, lens: Lens) -> np.ndarray:
    k = np.array(lens.camera_matrix, np.float64)
    result: np.ndarray = cv2.undistort(image, k, np.array(lens.distortion, np.float64))
    return result


def _crossings(settings: Thresholds, image: np.ndarray, corners: np.ndarray, lens: Lens | None
               ) -> Crossings:
    """The printed lines' crossings near the grid through `corners` (`vision.bend`), in
    the undistorted image when there is a lens (where such corners lie)."""
    from vision.bend import grid_crossings

    return grid_crossings(settings, image if lens is None else _undistorted(image, lens),
                          corners)


def _bent_message(bend: float, lens: Lens | None) -> str:
    if lens is not None:
        why = ("the lens model does not undo this camera's lens (a lens file made for "
               "another camera or zoom?): measure this one with `ponte calibrate-lens`")
    else:
        why = ("the camera's lens bends straight lines more than the board's own lines "
               "can measure: measure the lens with `ponte calibrate-lens` and calibrate "
               "with --lens FILE")
    return (f"the board's printed lines lie up to {bend:.2f} of a cell off the grid found "
            f"for them, so cells would be read in the wrong place: {why}; or take the "
            "photo with nothing lying over the board's lines")


def calibrate_lens(
    images: Sequence[np.ndarray], pattern: tuple[int, int] = (9, 6)
) -> tuple[Lens, int]:
    """A lens model from photos of a printed chessboard with `pattern` inner corners.

    Returns the lens and how many images showed the pattern; CalibrationError when fewer
    than three did or the images differ in size.
    """
    sizes = {(im.shape[1], im.shape[0]) for im in images}
    if len(sizes) != 1:
        raise CalibrationError("lens calibration images must all have the same size")
    size = sizes.pop()
    cols, rows = pattern
    grid = np.zeros((cols * rows, 3), np.float32)
    grid[:, :2] = np.mgrid[0:cols, 0:rows].T.reshape(-1, 2)
    object_points, image_points = [], []
    criteria = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 40, 0.001)
    for image in images:
        gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
        ok, corners = cv2.findChessboardCorners(
            gray, pattern, flags=cv2.CALIB_CB_ADAPTIVE_THRESH + cv2.CALIB_CB_NORMALIZE_IMAGE
        )
        if not ok:
            continue
        corners = cv2.cornerSubPix(gray, corners, (5, 5), (-1, -1), criteria)
        object_points.append(grid)
        image_points.append(corners)
    if len(image_points) < 3:
        raise CalibrationError(
            f"the {cols} x {rows} chessboard pattern was found in {len(image_points)} of "
            f"{len(images)} images; need at least 3"
        )
    rms, k, dist, _, _ = cv2.calibrateCamera(object_points, image_points, size, None, None)
    lens = Lens(
        camera_matrix=tuple(tuple(float(v) for v in row) for row in k),
        distortion=tuple(float(v) for v in np.ravel(dist)),
        image_size=size,
        rms_error=float(rms),
    )
    return lens, len(image_points)


def save_lens(lens: Lens, path: str | Path) -> None:
    """Write a lens file (JSON)."""
    data = {"format": LENS_FORMAT, "version": LENS_VERSION, **lens.to_json()}
    Path(path).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def load_lens(path: str | Path) -> Lens:
    """Read a lens file, or the lens inside a calibration file."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CalibrationError(f"{path}: cannot read lens file ({exc})") from exc
    if isinstance(data, dict) and data.get("format") == "ponte-calibration":
        if data.get("lens") is None:
            raise CalibrationError(f"{path}: calibration holds no lens model")
        data = data["lens"]
    elif not isinstance(data, dict) or data.get("format") != LENS_FORMAT:
        raise CalibrationError(f"{path}: not a lens file (no \"format\": \"{LENS_FORMAT}\")")
    elif data.get("version") != LENS_VERSION:
        raise CalibrationError(f"{path}: lens format version {data.get('version')!r} unknown")
    try:
        return Lens.from_json(data)
    except CalibrationError as exc:
        raise CalibrationError(f"{path}: {exc}") from exc


def bare_board_colours(
    settings: Thresholds, plan: Any, m: Any, colours: ColourModel, empty: bool = False,
    most_tiles: int = EMPTY_MOST_TILES,
) -> tuple[tuple[float, ...] | None, ...] | None:
    """Per cell, the Lab of its sample boxes where the photo shows bare board (read as
    such, with no bridge over it and nothing hiding it; with `empty`, wherever nothing
    hides it), else None.

    With `empty`, the cells the reading flags as hidden are left out only when it takes
    some cell for hidden and something crosses the border (an arm reaching over the
    board: the border's odd samples). Otherwise the photo's light misled the reading: a
    dim far edge or a lamp's glare reads as a wide group of one tile colour (taken for a
    sleeve), or as hidden with the border clear, on a board that nothing hides. Left out,
    such cells had no bare view, and the second look, which learnt that a cell without one
    had a tile on it at calibration, read them as tiles."""
    from vision.cells import SIZE, CellState, cell_name
    from vision.classify import UNKNOWN
    from vision.pipeline import observe
    from vision.tracking import bare_cells

    obs, reading, _ = observe(settings, plan, m, colours)
    if empty:
        tiles = [cell_name(f, r) for r, row in enumerate(obs.cells) for f, state in enumerate(row)
                 if state != CellState.EMPTY and (f, r) not in obs.occluded_cells
                 and obs.confidence[r][f] >= EMPTY_SURE]
        if len(tiles) > most_tiles:
            raise CalibrationError(
                f"the photo was said to show an empty board, but {len(tiles)} cells look like "
                f"tiles ({', '.join(tiles[:6])}{'...' if len(tiles) > 6 else ''}): photograph "
                "the board with nothing on it, or calibrate without --empty")
        bare = np.ones(SIZE * SIZE, bool)
        if (reading.codes == UNKNOWN).any() and m.ring_outliers.any():
            for f, r in obs.occluded_cells:
                bare[r * SIZE + f] = False
    else:
        bare = bare_cells(obs, reading)
    return tuple(
        tuple(round(float(v), 2) for v in m.sub_lab[i].ravel()) if bare[i] else None
        for i in range(SIZE * SIZE))
