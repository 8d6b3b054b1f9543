"""The camera adapter: vision observations as readings, the snapshot and the camera picture."""

from __future__ import annotations

from dataclasses import replace

import cv2
import numpy as np
import pytest

from ponte.commands.demo import DEMO_VIDEO
from ponte.live.camera import CameraReader, observation_reading, overlay_jpeg, warped_jpeg
from ponte.live.sources import open_source
from vision.cells import CellState
from vision.observation import Observation


def test_an_observation_becomes_a_reading_with_cell_names() -> None:
    cells = [[CellState.EMPTY] * 10 for _ in range(10)]
    cells[0][0] = CellState.LIGHT  # a1
    cells[0][2] = CellState.LIGHT  # c1
    cells[9][9] = CellState.DARK  # j10
    obs = Observation(
        cells=tuple(tuple(row) for row in cells),
        bridges=(((0, 0), (2, 0)),),
        confidence=tuple(tuple(1.0 for _ in range(10)) for _ in range(10)),
        occluded_cells=frozenset({(4, 4)}),
        occluded=True,
        corners=((0, 100), (100, 100), (100, 0), (0, 0)),
    )
    reading = observation_reading(obs, 1.5)
    assert dict(reading.board.tiles) == {"a1": "light", "c1": "light", "j10": "dark"}
    assert reading.board.bridges == {("a1", "c1")}
    assert reading.occluded and reading.occluded_cells == {"e5"} and reading.t == 1.5
    assert not reading.pending and not reading.moved  # e5 is hidden
    # Where the picture moved goes with the reading, by cell name (the settling waits on it).
    moved = observation_reading(replace(obs, moved=frozenset({(4, 4), (0, 9)})), 1.6)
    assert moved.moved == {"e5", "a10"} and not moved.pending


def test_the_snapshot_is_the_board_from_above_with_a1_bottom_left() -> None:
    image = np.zeros((200, 300, 3), np.uint8)
    corners = ((50, 180), (250, 180), (250, 20), (50, 20))  # a1, j1, j10, a10
    cv2.rectangle(image, (50, 150), (80, 180), (0, 0, 255), -1)  # red over a1's corner
    data = warped_jpeg(image, corners)
    assert data is not None and data[:2] == b"\xff\xd8"
    top = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    assert top.shape == (240, 240, 3)
    assert top[230, 10, 2] > 200 and top[10, 230, 2] < 50


def test_the_real_pipeline_calibrates_on_the_demo_and_draws_the_camera_picture() -> None:
    source = open_source(str(DEMO_VIDEO))
    camera = CameraReader()
    try:
        for _ in range(3):
            frame = source.read()
            assert frame is not None
            reading = camera.read(frame.image, frame.t)
    finally:
        source.close()
    assert camera.calibrated and not reading.board.tiles
    picture = overlay_jpeg(frame.image, camera.last_observation)
    assert picture is not None
    drawn = cv2.imdecode(np.frombuffer(picture, np.uint8), cv2.IMREAD_COLOR)
    plain = cv2.imdecode(np.frombuffer(overlay_jpeg(frame.image, None) or b"", np.uint8),
                         cv2.IMREAD_COLOR)
    assert drawn.shape == plain.shape == (360, 640, 3)
    assert np.abs(drawn.astype(int) - plain.astype(int)).mean() > 1  # outline and grid


def test_self_calibration_tries_again_only_every_quarter_second_while_it_fails(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import calibration.make
    from ponte.live.camera import RETRY_S
    from vision.errors import BoardNotFound

    source = open_source(str(DEMO_VIDEO))
    try:
        frame = source.read()
    finally:
        source.close()
    assert frame is not None
    real = calibration.make.make_calibration
    tries: list[float] = []
    covered = True

    def counted(image: object) -> object:
        tries.append(now)
        if covered:  # a hand over the board: nothing to calibrate on
            raise BoardNotFound("no board")
        return real(image)  # type: ignore[arg-type]

    monkeypatch.setattr(calibration.make, "make_calibration", counted)
    camera = CameraReader()
    for n in range(31):  # one second at 30 fps
        now = n / 30
        assert camera.read(frame.image, now).occluded
    assert tries == [0.0, 8 / 30, 16 / 30, 24 / 30]  # RETRY_S apart, not on every frame
    covered = False  # the hand is gone: calibrated within a quarter second and a frame
    n = 31
    while not camera.calibrated:
        now = n / 30
        camera.read(frame.image, now)
        n += 1
        assert now < 31 / 30 + RETRY_S + 1 / 30
    # a fresh start of the frames' clock (another source) tries at once
    again = CameraReader()
    covered = True
    tries.clear()
    for now in (5.0, 5.1, 0.0):
        again.read(frame.image, now)
    assert tries == [5.0, 0.0]


def _glare_on_e5(board: tuple[str, ...]) -> np.ndarray:
    """A generated frame of `board` with a glare spot on e5 that reads as a cream tile."""
    from lab.synth import CameraSpec, SceneSpec, render

    frame = render(SceneSpec(board=board, bridges=(), camera=CameraSpec(elevation_deg=80.0),
                             seed=3))
    grid = np.array([[0, 0], [10, 0], [10, 10], [0, 10]], np.float32)
    h = cv2.getPerspectiveTransform(grid, np.asarray(frame.corners, np.float32))
    x, y = cv2.perspectiveTransform(np.array([[[4.5, 4.5]]], np.float32), h)[0, 0]
    image = frame.image.copy()
    cv2.circle(image, (int(round(float(x))), int(round(float(y)))), 14, (215, 238, 248), -1)
    return image


def _self_calibrated(camera: CameraReader, image: np.ndarray) -> tuple[object, ...]:
    for t in (0.0, 0.04):  # the board in the same place twice running
        camera.read(image, t)
    assert camera.calibrated and camera.calibration is not None
    board = camera.calibration.board
    assert board is not None
    return tuple(board)


def test_self_calibration_learns_the_whole_bare_board_while_nothing_should_be_on_it() -> None:
    empty = tuple("." * 10 for _ in range(10))
    image = _glare_on_e5(empty)
    e5 = 4 * 10 + 4
    assert _self_calibrated(CameraReader(), image)[e5] is None  # glare taken for a tile
    board = _self_calibrated(CameraReader(expect_empty=lambda: True), image)
    assert all(cell is not None for cell in board)
    # a tile put down before the assistant started: the bare board only where it is seen
    with_tile = ("." * 10,) * 8 + ("..L.......",) + ("." * 10,)
    board = _self_calibrated(CameraReader(expect_empty=lambda: True), _glare_on_e5(with_tile))
    assert board[1 * 10 + 2] is None and board[e5] is None  # c2 and the glare
    assert sum(cell is None for cell in board) <= 3
