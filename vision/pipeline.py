"""The orchestrator: image -> Observation.

`read_board` runs every stage on one image: locate the board (`vision.locate`, or take the
calibration's corners) -> plan the sampling and measure the frame (`vision.measure`) ->
read the cells (`vision.read_cells`) -> find the bridges (`vision.read_bridges`) -> judge
what is hidden (`vision.occlusion`) -> `Observation` (`observe`). The live loop's reader,
which keeps what it learned between frames, is `vision.tracking.BoardReader`.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from contracts.calibration import A1Corner, Calibration, ColourModel, Thresholds, default_thresholds
from vision.bridges import find_bridges, learn_bridge_colour, measure_paths
from vision.cells import SIZE, CellState, cells_under
from vision.classify import DARK, EMPTY, LIGHT, UNKNOWN, CellReading, classify_cells, learn_colours
from vision.errors import CalibrationMismatch
from vision.imageio import check_image
from vision.learned import background_change, bridge_network, cell_features, cell_network
from vision.locate import locate_board, orient_corners
from vision.measure import Measurement, Plan, make_plan, measure
from vision.observation import Bridge, Observation, sort_bridge
from vision.occlusion import judge
from vision.read_bridges import learned_bridges
from vision.read_cells import looked_cells

_STATES = {EMPTY: CellState.EMPTY, LIGHT: CellState.LIGHT, DARK: CellState.DARK}


def observe(
    settings: Thresholds, plan: Plan, m: Measurement, model: ColourModel
) -> tuple[Observation, CellReading, ColourModel]:
    """Classify, find bridges, detect occlusion and build the Observation.

    Returns the observation, the cell reading and the colour model (with the bridges'
    colour when it was learned from this frame). With the networks, the reading's rim
    votes are zeros (only the thresholds' bridge finding uses them).
    """
    cells_net, bridges_net = cell_network(scratch=m.background is None), bridge_network()
    feats = None
    if cells_net is not None and bridges_net is not None:
        feats = cell_features(m, model)
        if feats.shape[1] != cells_net.mean.shape[0]:  # model files of another version
            feats = None
    # The rim boxes' votes serve only the thresholds' own bridge finding (`find_bridges`):
    # with the networks they would be thrown away, so they are counted only without them.
    reading = classify_cells(settings, m.sub_lab, model, m.rim_lab if feats is None else None)
    learned = None
    if cells_net is not None and bridges_net is not None and feats is not None:
        probs, model, reading, ends = looked_cells(settings, plan, m, model, reading,
                                                   cells_net, feats)
        learned = learned_bridges(settings, plan, m, model, probs, bridges_net, ends,
                                   background_change(feats))
    if learned is not None:
        reading = replace(reading, codes=probs.argmax(axis=1),
                          confidence=np.where(probs.argmax(axis=1) == UNKNOWN, 0.0,
                                              probs.max(axis=1)))
        bridges, colours = learned
    else:
        if feats is not None:  # the networks' reading, without the rim boxes' votes
            reading = classify_cells(settings, m.sub_lab, model, m.rim_lab)
        paths = measure_paths(plan.bridges, m.integral, m.light_coef)
        if model.bridge is None:
            ends = np.concatenate([m.sub_lab, m.rim_lab], axis=1)
            bridge = learn_bridge_colour(settings, plan.bridges, paths, reading, model, ends)
            if bridge is not None:
                model = replace(model, bridge=bridge)
                reading = classify_cells(settings, m.sub_lab, model, m.rim_lab)
        bridges, colours = find_bridges(settings, plan.bridges, paths, reading, model)
    codes = reading.codes.copy()
    spanned = np.zeros(SIZE * SIZE, bool)
    for (a, b), colour in zip(bridges, colours, strict=True):
        for f, r in (a, b):
            codes[r * SIZE + f] = colour
            spanned[r * SIZE + f] = True
        for f, r in cells_under(a, b):
            codes[r * SIZE + f] = EMPTY
            spanned[r * SIZE + f] = True
    occluded, occluded_grid = judge(settings, plan, m, model, reading, codes, spanned,
                                    bridges, None if learned is None else probs)
    occluded_cells = frozenset(
        (f, r) for r in range(SIZE) for f in range(SIZE) if occluded_grid[r, f]
    )
    kept: list[Bridge] = [
        sort_bridge(a, b) for a, b in bridges if a not in occluded_cells and b not in occluded_cells
    ]
    if len(kept) < len(bridges):
        # A bridge not reported (an end is hidden) explains nothing: its cells keep their
        # own reading, not its colour (what stood under a hand is not known to be a tile).
        held = {c for a, b in kept for c in (a, b, *cells_under(a, b))}
        for a, b in bridges:
            for f, r in (a, b, *cells_under(a, b)):
                if (f, r) not in held:
                    codes[r * SIZE + f] = reading.codes[r * SIZE + f]
    states = [_STATES.get(code, CellState.EMPTY) for code in codes.tolist()]
    cells = tuple(tuple(states[r * SIZE:(r + 1) * SIZE]) for r in range(SIZE))
    conf = tuple(tuple(row) for row in reading.confidence.reshape(SIZE, SIZE).tolist())
    corners = tuple((float(x), float(y)) for x, y in plan.corners)
    obs = Observation(cells, tuple(sorted(kept)), conf, occluded_cells, occluded, corners)
    return obs, reading, model


def read_board(
    image: np.ndarray,
    calibration: Calibration | None = None,
    settings: Thresholds | None = None,
) -> Observation:
    """Read one image from scratch (locating the board unless a calibration is given).

    With a calibration this takes only its corners, colours and bare board's colours;
    `read_calibrated` reads an image as the live loop does, with all of it."""
    check_image(image)
    h, w = image.shape[:2]
    if calibration is not None:
        settings = calibration.thresholds
        check_size(calibration, (w, h))
    settings = settings or default_thresholds()
    k, dist = lens_of(calibration)
    if calibration is not None:
        corners = np.array(calibration.corners, np.float64)
    else:
        corners = orient_corners(locate_board(settings, image), A1Corner.BOTTOM_LEFT, (w, h))
    plan = make_plan(settings, corners, (w, h), k, dist)
    m = measure(settings, plan, image)
    if calibration is not None:
        m = replace(m, background=background_of(calibration))
    hint = calibration.colours if calibration is not None else None
    model = learn_colours(settings, m.sub_lab, lab3(m.ring_lab), hint, m.background)
    obs, _, _ = observe(settings, plan, m, model)
    return obs


def lab3(v: np.ndarray) -> tuple[float, float, float]:
    return (float(v[0]), float(v[1]), float(v[2]))


def check_size(calibration: Calibration, size: tuple[int, int]) -> None:
    if tuple(size) != tuple(calibration.image_size):
        raise CalibrationMismatch(
            f"image is {size[0]} x {size[1]} but the calibration was made for "
            f"{calibration.image_size[0]} x {calibration.image_size[1]}"
        )


def lens_of(calibration: Calibration | None, scale: float = 1.0) -> tuple[
    np.ndarray | None, np.ndarray | None
]:
    if calibration is None or calibration.lens is None:
        return None, None
    k = np.array(calibration.lens.camera_matrix, np.float64)
    k[:2] *= scale
    return k, np.array(calibration.lens.distortion, np.float64)


def background_of(calibration: Calibration) -> np.ndarray:
    """The calibration's bare board per sample box, (100, 9, 3) with NaN where a tile was
    (all NaN for a calibration without it: the reader learns it from the frames)."""
    out = np.full((SIZE * SIZE, 9, 3), np.nan)
    for i, row in enumerate(calibration.board or ()):
        if row is not None:
            out[i] = np.asarray(row, np.float64).reshape(9, 3)
    return out
