"""The calibration format (load/save, clear errors) and the tools that make calibrations."""

from __future__ import annotations

import base64
import json
import re
from dataclasses import fields
from pathlib import Path

import cv2
import numpy as np
import pytest

from calibration.make import calibrate_lens, load_lens, make_calibration, save_lens
from contracts.calibration import (
    A1Corner,
    Calibration,
    CalibrationError,
    ColourModel,
    Thresholds,
    default_thresholds,
    load_calibration,
    save_calibration,
)

EXAMPLES = Path(__file__).resolve().parents[1] / "calibration" / "examples"


def _calibration() -> Calibration:
    return Calibration(
        image_size=(1280, 720),
        corners=((300.5, 650.25), (980.0, 660.0), (940.0, 90.0), (330.0, 80.0)),
        a1=A1Corner.BOTTOM_RIGHT,
        colours=ColourModel(empty=(50.0, -5.0, -20.0), ring=(45.0, 10.0, 20.0),
                            light=(85.0, 0.0, 15.0)),
        ring=((0.5, -0.25, 90.0, 120.5, 150.25), (1.5, -0.25, 91.0, 121.0, 149.0)),
        board=tuple(None if i % 7 == 0 else tuple(float(i + k) for k in range(27))
                    for i in range(100)),
        view="iVBORw0KGgo=",
        view_light=tuple(100.0 + k / 3 for k in range(18)),
    )


def test_calibration_round_trips_through_a_file(tmp_path: Path) -> None:
    path = tmp_path / "cal.json"
    save_calibration(_calibration(), path)
    assert load_calibration(path) == _calibration()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "not JSON"),
        ("[1, 2]", "not a calibration file"),
        ('{"format": "ponte-calibration", "version": 2}', "version 2 is not supported"),
        ('{"format": "ponte-calibration", "version": 1, "image_size": [640, 480]}',
         "missing field 'corners'"),
        ('{"format": "ponte-calibration", "version": 1, "image_size": [640, 480],'
         ' "corners": [[0, 0], [1, 1]]}', "four (x, y) points"),
        ('{"format": "ponte-calibration", "version": 1, "image_size": [640, 480],'
         ' "corners": [[0, 0], [1, 0], [1, 1], [0, 1]], "a1": "middle"}', "bad field"),
        ('{"format": "ponte-calibration", "version": 1, "image_size": [640, 480],'
         ' "corners": [[0, 0], [1, 0], [1, 1], [0, 1]], "thresholds": {"nonsense": 1}}',
         "unknown threshold"),
        ('{"format": "ponte-calibration", "version": 1, "image_size": [640, 480],'
         ' "corners": [[0, 0], [1, 0], [1, 1], [0, 1]], "ring": [[1, 2, 3]]}',
         "ring: must be rows of five numbers"),
        ('{"format": "ponte-calibration", "version": 1, "image_size": [640, 480],'
         ' "corners": [[0, 0], [1, 0], [1, 1], [0, 1]], "board": [[1, 2, 3]]}',
         "board: must be 100 rows of 27 numbers or null"),
        ('{"format": "ponte-calibration", "version": 1, "image_size": [640, 480],'
         ' "corners": [[0, 0], [1, 0], [1, 1], [0, 1]], "board": [["a"]]}',
         "board: must be rows of numbers or null"),
        ('{"format": "ponte-calibration", "version": 1, "image_size": [640, 480],'
         ' "corners": [[0, 0], [1, 0], [1, 1], [0, 1]], "view": "not base64!",'
         ' "view_light": []}', "view: must be a base64 PNG image"),
        ('{"format": "ponte-calibration", "version": 1, "image_size": [640, 480],'
         ' "corners": [[0, 0], [1, 0], [1, 1], [0, 1]], "view": "iVBORw0K"}',
         "view and view_light come together"),
        ('{"format": "ponte-calibration", "version": 1, "image_size": [640, 480],'
         ' "corners": [[0, 0], [1, 0], [1, 1], [0, 1]], "view": "iVBORw0K",'
         ' "view_light": [1, 2]}', "view_light: must be 18 numbers"),
        ('{"format": "ponte-calibration", "version": 1, "image_size": [640, 480],'
         ' "corners": [[0, 0], [1, 0], [1, 1], [0, 1]], "view": "iVBORw0K",'
         ' "view_light": ["x"]}', "view_light: must be numbers"),
    ],
)
def test_bad_calibration_files_give_clear_errors(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(CalibrationError, match=re.escape(message)) as info:
        load_calibration(path)
    assert str(path) in str(info.value)


def test_the_example_calibration_is_what_ponte_calibrate_makes_of_its_photo() -> None:
    image = cv2.imread(str(EXAMPLES / "empty-board.jpg"))
    made = make_calibration(image)
    example = load_calibration(EXAMPLES / "empty-board.json")
    assert made.ring and made.board and all(row is not None for row in made.board)
    assert example.ring and example.board and all(row is not None for row in example.board)
    assert (example.image_size, example.a1) == (made.image_size, made.a1)
    assert np.allclose(example.corners, made.corners, atol=0.01)
    assert np.allclose(example.ring, made.ring, atol=0.02)
    assert np.allclose(np.array(example.board, float), np.array(made.board, float), atol=0.02)
    assert example.colours is not None and made.colours is not None
    assert np.allclose(example.colours.empty, made.colours.empty, atol=0.01)
    # the photo's top-down view, as the reader of the calibration warps it
    assert made.view is not None and made.view_light is not None
    assert example.view is not None and example.view_light is not None
    assert np.allclose(example.view_light, made.view_light, rtol=1e-3)
    side = (10 + 2 * round(made.thresholds.margin_cells)) * made.thresholds.cell_px
    views = [cv2.imdecode(np.frombuffer(base64.b64decode(v), np.uint8), cv2.IMREAD_COLOR)
             for v in (example.view, made.view)]
    assert views[0].shape == views[1].shape == (side, side, 3)
    assert np.abs(views[0].astype(int) - views[1].astype(int)).mean() < 0.5


def test_missing_calibration_file_is_a_calibration_error(tmp_path: Path) -> None:
    with pytest.raises(CalibrationError, match="cannot read"):
        load_calibration(tmp_path / "nope.json")


def test_thresholds_override_only_what_is_given() -> None:
    t = Thresholds.from_json({"cell_px": 30})
    assert t.cell_px == 30 and t.empty_distance == default_thresholds().empty_distance
    with pytest.raises(CalibrationError, match="must be a number"):
        Thresholds.from_json({"cell_px": "big"})


def test_every_threshold_is_documented_and_read_by_the_runtime() -> None:
    """A parameter the reader never reads, or one nobody can tell the meaning of, is dead
    weight in the parameter file: each field has its docstring and is read by name somewhere
    in the runtime packages."""
    root = Path(__file__).resolve().parents[1]
    source = (root / "contracts" / "calibration.py").read_text(encoding="utf-8")
    runtime = "\n".join(p.read_text(encoding="utf-8")
                        for package in ("vision", "calibration", "ponte")
                        for p in (root / package).rglob("*.py"))
    for field in fields(Thresholds):
        assert re.search(rf"^    {field.name}: \w+\n    \"\"\"", source, re.M), field.name
        assert re.search(rf"\.{field.name}\b", runtime), f"{field.name} is never read"


def test_example_calibrations_load() -> None:
    files = sorted(EXAMPLES.glob("*.json"))
    assert files
    for path in files:
        if "lens" in path.name:
            assert load_lens(path).rms_error >= 0
        else:
            assert load_calibration(path).image_size[0] > 0


def chessboard_views(count: int) -> list[np.ndarray]:
    """Photos of a flat 10 x 7 chessboard (9 x 6 inner corners) through a barrel lens."""
    square = 40
    board = np.full((7 * square + 80, 10 * square + 80), 255, np.uint8)
    for r in range(7):
        for c in range(10):
            if (r + c) % 2 == 0:
                y, x = 40 + r * square, 40 + c * square
                board[y : y + square, x : x + square] = 0
    k = np.array([[700.0, 0, 320], [0, 700.0, 240], [0, 0, 1]])
    dist = np.array([-0.25, 0.08, 0, 0, 0])
    views = []
    rng = np.random.default_rng(5)
    for _ in range(count):
        rvec = rng.uniform(-0.35, 0.35, 3)
        tvec = np.array([rng.uniform(-60, -20), rng.uniform(-50, -20), rng.uniform(700, 800)])
        h, w = board.shape
        # For every output pixel, find the board pixel it sees (undistort, then back-project).
        ys, xs = np.mgrid[0:480, 0:640].astype(np.float32)
        pts = np.column_stack([xs.ravel(), ys.ravel()]).reshape(-1, 1, 2)
        norm = cv2.undistortPoints(pts, k, dist).reshape(-1, 2)
        rot, _ = cv2.Rodrigues(rvec)
        # Ray-plane intersection with the board plane z = 0 in board coordinates.
        rays = np.column_stack([norm, np.ones(len(norm))]) @ rot
        origin = -rot.T @ tvec
        s = -origin[2] / rays[:, 2]
        hit = origin[None, :2] + s[:, None] * rays[:, :2]
        map_x = hit[:, 0].reshape(480, 640).astype(np.float32) + w / 2
        map_y = hit[:, 1].reshape(480, 640).astype(np.float32) + h / 2
        view = cv2.remap(board, map_x, map_y, cv2.INTER_LINEAR, borderValue=255)
        views.append(cv2.cvtColor(view, cv2.COLOR_GRAY2BGR))
    return views


def test_lens_calibration_recovers_barrel_distortion(tmp_path: Path) -> None:
    lens, used = calibrate_lens(chessboard_views(6), (9, 6))
    assert used >= 5
    assert lens.rms_error < 0.5
    assert lens.distortion[0] < -0.1
    assert abs(lens.camera_matrix[0][0] - 700) < 40
    path = tmp_path / "lens.json"
    save_lens(lens, path)
    assert load_lens(path) == lens


def test_lens_calibration_without_the_pattern_says_so() -> None:
    blank = [np.full((240, 320, 3), 128, np.uint8)] * 3
    with pytest.raises(CalibrationError, match="found in 0 of 3"):
        calibrate_lens(blank)


def test_calibration_learns_board_corners_and_colours() -> None:
    from tests.test_vision_stages import QUADS, ROWS
    from tests.vision_drawing import draw_board, place_in_scene

    image, truth = place_in_scene(draw_board(ROWS), QUADS["square-on"])
    cal = make_calibration(image)
    assert cal.colours is not None and cal.colours.light is not None
    assert cal.colours.light[0] > cal.colours.empty[0] > cal.colours.dark[0]  # type: ignore[index]
    bottom_left = truth[3]
    assert np.hypot(*(np.array(cal.corners[0]) - bottom_left)) < 1.0
    json.dumps(cal.to_json())
    # the bare board is kept cell by cell, where the photo shows it (not under the tiles)
    assert cal.board is not None
    tiles = {r * 10 + f for r, row in enumerate(reversed(ROWS)) for f, ch in enumerate(row)
             if ch != "."}
    known = {i for i, row in enumerate(cal.board) if row is not None}
    assert known and not known & tiles and len(known) >= 100 - len(tiles) - 3


@pytest.mark.parametrize(
    ("hidden", "arm", "left_out"),
    [
        (False, True, False),  # a wide group of tile colour (a dim far edge), no cell hidden
        (True, False, False),  # cells read as hidden, but nothing crosses the border
        (True, True, True),  # hidden cells and an arm across the border: a hand
    ],
    ids=["tile-coloured-group", "hidden-border-clear", "hand"],
)
def test_an_empty_board_leaves_out_only_what_an_arm_over_it_hides(
    monkeypatch: pytest.MonkeyPatch, hidden: bool, arm: bool, left_out: bool
) -> None:
    """The reading is faked here (what a dim far edge, a lamp's glare or a hand make of
    it); `test_calibrating_on_a_board_said_to_be_empty_learns_every_cell_it_sees` shows
    the real thing on a generated photo with a hand."""
    from types import SimpleNamespace

    from calibration import make
    from vision import pipeline
    from vision.cells import CellState
    from vision.classify import EMPTY, LIGHT, UNKNOWN

    flagged = {(f, 9) for f in range(10)} | {(f, 8) for f in range(4)}  # the far ranks
    codes = np.full(100, EMPTY)
    codes[[r * 10 + f for f, r in flagged]] = LIGHT
    if hidden:
        codes[99] = UNKNOWN
    cells = tuple(tuple(CellState.EMPTY for _ in range(10)) for _ in range(10))
    conf = tuple(tuple(0.6 for _ in range(10)) for _ in range(10))  # unsure: not "tiles"
    obs = SimpleNamespace(cells=cells, confidence=conf, occluded_cells=frozenset(flagged))
    reading = SimpleNamespace(codes=codes)
    monkeypatch.setattr(pipeline, "observe", lambda *args: (obs, reading, None))
    ring_outliers = np.zeros(40, bool)
    ring_outliers[5] = arm
    m = SimpleNamespace(sub_lab=np.full((100, 9, 3), 50.0), ring_outliers=ring_outliers)
    board = make.bare_board_colours(default_thresholds(), None, m, None, empty=True)
    assert board is not None
    unknown = {(i % 10, i // 10) for i, cell in enumerate(board) if cell is None}
    assert unknown == (flagged if left_out else set())


FIXED = {
    # the networks' inputs: each shipped network is fitted to this layout
    "vision/bridges.py": {"BRIDGE_OFFSETS", "_HALF", "_FLANK", "_DECK_EDGE", "_DECK_EDGE_HALF",
                          "NEAR_BOX"},
    "vision/decks.py": {"LONG", "WIDE", "BEFORE", "ACROSS"},
    "vision/learned.py": {"SIZE", "CELL_CLASSES", "AGAINST", "BACKGROUND_FEATURES",
                          "BACKGROUND_AT", "_AROUND", "DECK_OUTLINE"},
    "vision/patches.py": {"HALF", "FLOOR", "BIAS_ROWS"},
    # the board's and the pieces' geometry, and where they are sampled
    "vision/cells.py": {"SIZE"},
    "vision/classify.py": {"SIZE", "BRIDGE"},
    "vision/geometry.py": {"SIZE"},
    "vision/features.py": {"TILE_REACH", "_RIM", "_EDGE"},
    "vision/locate.py": {"SIZE", "_RING_OUT", "_RING_SPAN", "_LINE_WINDOW", "_MAX_CELLS"},
    "vision/bend.py": {"_PX", "_MARGIN", "_WINDOW", "_SIGMA"},
    "vision/measure.py": {"_STRIP"},
    "vision/markers.py": {"MARKER_IDS"},
    # what an input file may be
    "vision/imageio.py": {"MAX_PIXELS", "MIN_SIDE"},
}


def test_the_readers_numbers_are_in_the_parameter_file_but_its_layout_and_geometry() -> None:
    """A number the camera pipeline decides by lives in the parameter file, where a sweep can
    choose it (`python -m lab.sweep`). What stays a module constant in `vision/` is the
    layout the networks were fitted to, the board's and the pieces' geometry, and input
    limits: a new numeric constant there is one of those (listed above) or a parameter."""
    import ast

    root = Path(__file__).resolve().parents[1]

    def numeric(node: ast.expr) -> bool:
        if isinstance(node, ast.Constant):
            return isinstance(node.value, int | float) and not isinstance(node.value, bool)
        if isinstance(node, ast.Tuple):
            return all(numeric(e) for e in node.elts)
        if isinstance(node, ast.UnaryOp | ast.BinOp):
            return all(numeric(e) for e in ast.iter_child_nodes(node)
                       if isinstance(e, ast.expr))
        return isinstance(node, ast.Name) and node.id.isupper()

    found: dict[str, set[str]] = {}
    for path in sorted((root / "vision").glob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            target = node.targets[0] if isinstance(node, ast.Assign) else (
                node.target if isinstance(node, ast.AnnAssign) else None)
            value = node.value if isinstance(node, ast.Assign | ast.AnnAssign) else None
            if (isinstance(target, ast.Name) and target.id.lstrip("_").isupper()
                    and value is not None and numeric(value)):
                found.setdefault(f"vision/{path.name}", set()).add(target.id)
    extra = {f: sorted(names - FIXED.get(f, set())) for f, names in found.items()}
    assert not {f: n for f, n in extra.items() if n}, (
        "numbers to move into contracts/thresholds.json (or, if layout or geometry, list here)")
    gone = {f: sorted(names - found.get(f, set())) for f, names in FIXED.items()}
    assert not {f: n for f, n in gone.items() if n}, "listed here but no longer there"
