"""The camera side of the live loop: frames -> `Reading`s through the vision pipeline.

An adapter on the live loop's side of the vision package: `CameraReader` holds a
`vision.tracking.BoardReader` (made from a calibration, or by calibrating on the first frame
that shows the board clearly) and turns each `vision` Observation into the loop's
`Reading` (cell names, colours, bridges, occlusion, the cells the picture moved near),
which `ponte.live.settle.Stirring` holds back while a changed place has not rested. It
also draws what the players see on the camera page (outline, grid, readings) and the
small top-down JPEG kept with each move.
Frames the pipeline cannot read become occluded readings: they hold the settle clock and
never change the board. Frames of a new size get the calibration scaled to them (or the
board found afresh when the framing changed); a board unreadable for a few seconds with
nothing moving is said (`blind`) and looked for again.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

from ponte.live.settle import BoardView, Reading, Stirring, bridge_ends
from ponte.live.sources import Image

log = logging.getLogger(__name__)

FILES = "abcdefghijklmnopqrstuvwxyz"
SNAPSHOT_PX = 240
STILL_CORNERS_PX = 3.0
"""Self-calibration waits until the board is found twice running within this many pixels."""
RETRY_S = 0.25
"""After a failed self-calibration (no board, or something over it), seconds of frames to let
pass before the next try: a try reads the frame from scratch (about 100 ms on one core), and
a hand over the board at the start of a game would otherwise keep a core busy."""
BLIND_S = 3.0
"""Seconds of frames the board cannot be read in, with nothing moving in the picture, after
which the reader says why and looks for the board afresh (a hand over the board moves)."""
STILL_GREY = 3.0
"""Mean grey-level change (0-255) between two small thumbnails of successive frames below
which the picture counts as still."""
RELOCATE_S = 1.0
"""Seconds between tries to find the board again while it cannot be read."""
SAME_SHAPE = 0.01
"""Relative difference of aspect ratio within which a new frame size is the same view
scaled (the calibration is scaled to it) rather than another framing (found afresh)."""
_COLOURS = {"L": "light", "D": "dark"}


def _name(cell: tuple[int, int]) -> str:
    return f"{FILES[cell[0]]}{cell[1] + 1}"


def observation_reading(obs: Any, t: float) -> Reading:
    """A `vision.observation.Observation` as the live loop's `Reading`."""
    tiles: dict[str, str] = {}
    for rank, row in enumerate(obs.cells):
        for file, state in enumerate(row):
            colour = _COLOURS.get(state.value)
            if colour is not None:
                tiles[_name((file, rank))] = colour
    bridges = frozenset(bridge_ends(_name(a), _name(b)) for a, b in obs.bridges)
    return Reading(
        t,
        BoardView(tiles, bridges),
        occluded=bool(obs.occluded),
        occluded_cells=frozenset(_name(c) for c in obs.occluded_cells),
        moved=frozenset(_name(c) for c in obs.moved),
    )


def _board_quad(corners: Any) -> NDArray[np.float32]:
    return np.array(corners, np.float32).reshape(4, 2)


def warped_jpeg(image: Image, corners: Any, px: int = SNAPSHOT_PX) -> bytes | None:
    """The board seen from above (a1 bottom-left) as a small JPEG."""
    src = _board_quad(corners)
    dst = np.array([[0, px - 1], [px - 1, px - 1], [px - 1, 0], [0, 0]], np.float32)
    matrix = cv2.getPerspectiveTransform(src, dst)
    top = cv2.warpPerspective(image, matrix, (px, px))
    ok, data = cv2.imencode(".jpg", top, [cv2.IMWRITE_JPEG_QUALITY, 75])
    return bytes(data) if ok else None


def overlay_jpeg(image: Image, obs: Any | None, width: int = 640) -> bytes | None:
    """The camera picture with the board outline, grid and readings drawn over it."""
    scale = min(1.0, width / image.shape[1])
    shown = cv2.resize(image, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
    if obs is not None:
        quad = _board_quad(obs.corners) * scale
        cv2.polylines(shown, [quad.astype(np.int32)], True, (0, 255, 255), 2)
        a1, j1, j10, a10 = quad
        size = len(obs.cells)
        for k in range(1, size):
            u = k / size
            cv2.line(shown, tuple((a1 + (j1 - a1) * u).astype(int)),
                     tuple((a10 + (j10 - a10) * u).astype(int)), (0, 200, 200), 1)
            cv2.line(shown, tuple((a1 + (a10 - a1) * u).astype(int)),
                     tuple((j1 + (j10 - j1) * u).astype(int)), (0, 200, 200), 1)
        for rank, row in enumerate(obs.cells):
            for file, state in enumerate(row):
                u, v = (file + 0.5) / size, (rank + 0.5) / size
                bottom = a1 + (j1 - a1) * u
                top = a10 + (j10 - a10) * u
                centre = tuple((bottom + (top - bottom) * v).astype(int))
                if (file, rank) in obs.occluded_cells:
                    cv2.drawMarker(shown, centre, (0, 0, 255), cv2.MARKER_TILTED_CROSS, 8, 1)
                elif state.value == "L":
                    cv2.circle(shown, centre, 5, (255, 255, 255), -1)
                    cv2.circle(shown, centre, 5, (0, 0, 0), 1)
                elif state.value == "D":
                    cv2.circle(shown, centre, 5, (40, 40, 160), -1)
                    cv2.circle(shown, centre, 5, (255, 255, 255), 1)
    ok, data = cv2.imencode(".jpg", shown, [cv2.IMWRITE_JPEG_QUALITY, 70])
    return bytes(data) if ok else None


class CameraError(ValueError):
    """The camera side cannot start (bad calibration file, no board found to calibrate)."""


class CameraReader:
    """Frames in, `Reading`s out, through the vision pipeline.

    With no calibration it calibrates itself once the board has been found in the same
    place on two frames running with nothing covering it (the board at the start of a game).
    While `expect_empty()` says the board should have nothing on it (a game with no move
    yet), it learns the bare board in every cell it sees, as `ponte calibrate --empty`
    does, also where a dim corner or a lamp's glare makes the board look like a tile;
    should any cell look surely like a tile after all (tiles put down before the assistant
    started), it learns the bare board only where it sees it, as when a game is resumed.
    """

    def __init__(self, calibration: Any | None = None, *,
                 expect_empty: Callable[[], bool] | None = None) -> None:
        self.calibration = calibration
        self.expect_empty: Callable[[], bool] = expect_empty or (lambda: False)
        self._reader: Any | None = None
        self.last_observation: Any | None = None
        self.problem: str | None = None
        """Why the last self-calibration failed, when it said why (a grid off the board's
        lines), for the person setting up."""
        self._candidate: NDArray[np.float64] | None = None
        self._next_try: float | None = None
        self.blind: str | None = None
        """Why the board cannot be read, once it has not been for `BLIND_S` seconds with
        nothing moving; None while it reads."""
        self.notices: list[str] = []
        """What the reader did by itself that players should hear of (a calibration scaled
        to a new frame size, the board found again); the loop takes them."""
        self._unread_since: float | None = None
        self._thumb: NDArray[np.float32] | None = None
        self._next_relocate = 0.0
        self._why: str | None = None
        self._stirring: Stirring | None = None
        """Holds back readings the picture moved near (see `Stirring`), made with the
        reader from its calibration's parameters."""
        if calibration is not None:
            self._use(calibration)

    def _use(self, calibration: Any) -> None:
        """Read with this calibration from now on (a new reader, a new stirring watch)."""
        from vision.tracking import BoardReader

        self._reader = BoardReader(calibration)
        settings = calibration.thresholds
        self._stirring = Stirring(settings.stir_rest_s, settings.stir_flicker_changes,
                                  settings.stir_flicker_frames)

    @staticmethod
    def from_file(path: str) -> CameraReader:
        from contracts.calibration import CalibrationError, load_calibration

        try:
            return CameraReader(load_calibration(path))
        except CalibrationError as exc:
            raise CameraError(str(exc)) from None

    @property
    def calibrated(self) -> bool:
        return self._reader is not None

    @property
    def board_size(self) -> int:
        """The board this reader reads, cells a side: the last observation's, else the
        pipeline's (the physical 10 x 10 board)."""
        if self.last_observation is not None:
            return len(self.last_observation.cells)
        from vision.geometry import SIZE

        return SIZE

    @property
    def bumps(self) -> int:
        return int(getattr(self._reader, "bumps", 0))

    def _calibrate(self, image: Image) -> bool:
        from contracts.calibration import CalibrationError
        from vision.errors import VisionError
        from vision.pipeline import read_board

        try:
            calibration = self._calibration_of(image)
            if read_board(image, calibration).occluded_cells:
                self._candidate = None
                return False
        except (VisionError, CalibrationError) as exc:
            self.problem = str(exc)
            self._candidate = None
            return False
        corners = np.array(calibration.corners)
        previous, self._candidate = self._candidate, corners
        if previous is None or np.abs(previous - corners).max() > STILL_CORNERS_PX:
            return False  # the board must be found in the same place twice running
        self.calibration = calibration
        self._use(calibration)
        self.problem = None
        return True

    def _calibration_of(self, image: Image) -> Any:
        from calibration.make import BentGrid, make_calibration
        from contracts.calibration import CalibrationError

        if self.expect_empty():
            try:
                return make_calibration(image, empty=True, most_tiles=0)
            except BentGrid:
                raise  # the board is empty, and its lines say the grid would miss them
            except CalibrationError:
                pass  # something on the board after all
        return make_calibration(image)

    def read(self, image: Image, t: float) -> Reading:
        """The frame's reading; an occluded one when the board cannot be read in it."""
        reading = self._read(image, t)
        self._watch(image, t, reading.occluded)
        return reading

    def _resized(self, size: tuple[int, int]) -> None:
        """Frames of another size than calibrated: scale the calibration when the view is
        the same shape, else find the board afresh."""
        from contracts.calibration import scaled_calibration

        assert self.calibration is not None
        old = tuple(self.calibration.image_size)
        change = f"the camera now sends {size[0]} x {size[1]} frames (calibrated at " \
                 f"{old[0]} x {old[1]})"
        if abs(size[0] / size[1] - old[0] / old[1]) <= SAME_SHAPE * old[0] / old[1]:
            self.calibration = scaled_calibration(self.calibration, size)
            self._use(self.calibration)
            self.notices.append(f"{change}: the calibration was scaled to them")
        else:
            self._reader = None
            self._candidate = None
            self._next_try = None
            self.notices.append(f"{change}, framed otherwise: finding the board again")

    def _watch(self, image: Image, t: float, unread: bool) -> None:
        """Say why when the board has not been read for `BLIND_S` seconds with nothing
        moving, and look for it afresh every `RELOCATE_S` meanwhile."""
        grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
        thumb = cv2.resize(grey, (32, 18), interpolation=cv2.INTER_AREA).astype(np.float32)
        moving = self._thumb is not None and float(np.abs(thumb - self._thumb).mean()) > STILL_GREY
        self._thumb = thumb
        if not unread:
            if self.blind is not None:
                self.notices.append("the board is read again")
            self.blind = None
            self._unread_since = None
            return
        if moving or self._unread_since is None:
            self._unread_since = t
            return
        if self.blind is None and t - self._unread_since >= BLIND_S:
            why = self._why or self.problem or "something covers part of the board, or the " \
                "picture no longer matches the calibration (another camera setting or stream " \
                "quality)"
            self.blind = (f"the board has not been readable for {t - self._unread_since:.0f} s "
                          f"with nothing moving ({why}); looking for it again")
        if self.blind is not None and self._reader is not None and t >= self._next_relocate:
            self._next_relocate = t + RELOCATE_S
            if self._calibrate(image):
                self.notices.append("found the board again and calibrated on it")

    def _read(self, image: Image, t: float) -> Reading:
        from vision.errors import VisionError

        size = (int(image.shape[1]), int(image.shape[0]))
        if (self._reader is not None and self.calibration is not None
                and size != tuple(self.calibration.image_size)):
            self._resized(size)
        if self._reader is None:
            waiting = self._next_try is not None and self._next_try - RETRY_S <= t < self._next_try
            if waiting or not self._calibrate(image):
                if not waiting and self._candidate is None:
                    self._next_try = t + RETRY_S
                return Reading(t, BoardView(), occluded=True)
        assert self._reader is not None
        try:
            obs = self._reader.read(image)
        except (ValueError, cv2.error) as exc:  # VisionError, or a pipeline bug
            if not isinstance(exc, VisionError):
                log.warning("the board reader failed on a frame; read as unreadable",
                            exc_info=True)
            self.last_observation = None
            self._why = str(exc) if isinstance(exc, VisionError) else None
            return Reading(t, BoardView(), occluded=True)
        self._why = None
        self.last_observation = obs
        reading = observation_reading(obs, t)
        return reading if self._stirring is None else self._stirring.apply(reading)

    # ----------------------------------------------------------------- calibration page

    def calibration_view(self) -> dict[str, Any] | None:
        """What the calibration page shows: image size, corners (a1's first), readings."""
        if self.calibration is None or self._reader is None:
            return None
        corners = [[round(float(x), 1), round(float(y), 1)] for x, y in self._reader.corners]
        readings = []
        obs = self.last_observation
        if obs is not None:
            for rank, row in enumerate(obs.cells):
                for file, state in enumerate(row):
                    readings.append({
                        "cell": _name((file, rank)),
                        "value": {"L": "light", "D": "dark"}.get(state.value, "empty"),
                        "confidence": round(float(obs.confidence[rank][file]), 3),
                    })
        return {"image_size": list(self.calibration.image_size), "corners": corners,
                "a1": 0, "readings": readings}

    def set_corners(self, corners: list[list[float]], a1: int) -> Any:
        """Use these grid corners (in order around the board, `a1` the index of a1's);
        returns the new calibration."""
        import dataclasses

        from contracts.calibration import CalibrationError, check_corners

        if self.calibration is None:
            raise CameraError("the camera is not calibrated yet: no board seen")
        try:
            check_corners(corners, tuple(self.calibration.image_size))
        except CalibrationError as exc:
            raise CameraError(str(exc)) from None
        ordered = corners[a1:] + corners[:a1]
        calibration = dataclasses.replace(
            self.calibration, corners=tuple((float(x), float(y)) for x, y in ordered)
        )
        self._use(calibration)
        self.calibration = calibration
        return calibration
