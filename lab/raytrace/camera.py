"""A pinhole camera over the board, its projection, and the a1 labelling rule.

Board frame: origin at the outer corner of the grid at a1, x along the files, y along the
ranks, z up from the printed surface; one unit is one cell. Image pixels follow OpenCV:
x to the right, y down, pixel centres at integers. The same camera is handed to POV-Ray as
explicit `direction`, `right` and `up` vectors, so the renderer and this projection agree
exactly (`tests/test_lab_raytrace.py` checks it on a rendered marker).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

Array = np.ndarray

BOARD_CELLS = 10
GRID_CORNERS = np.array([[0.0, 0.0, 0.0], [10.0, 0.0, 0.0], [10.0, 10.0, 0.0], [0.0, 10.0, 0.0]])
"""The grid's outer corners at a1, j1, j10, a10 on the printed surface."""


@dataclass(frozen=True)
class Camera:
    """Where the camera stands and what its sensor and lens are.

    `elevation_deg` is the angle of the optical axis above the table (90: straight down);
    `azimuth_deg` the direction from the target to the camera, in the board frame (0: the
    camera stands beyond rank 1); `roll_deg` turns the image about the optical axis.
    `k1`, `k2` are OpenCV's radial coefficients on normalised coordinates (k1 < 0: barrel).
    """

    elevation_deg: float
    azimuth_deg: float
    roll_deg: float
    distance: float
    hfov_deg: float
    width: int
    height: int
    target: tuple[float, float, float] = (5.0, 5.0, 0.0)
    k1: float = 0.0
    k2: float = 0.0

    @property
    def focal_px(self) -> float:
        return self.width / 2.0 / math.tan(math.radians(self.hfov_deg) / 2.0)

    @property
    def matrix(self) -> Array:
        """OpenCV's camera matrix (principal point at the image centre)."""
        f = self.focal_px
        return np.array([[f, 0.0, self.width / 2.0 - 0.5], [0.0, f, self.height / 2.0 - 0.5],
                         [0.0, 0.0, 1.0]])

    @property
    def dist_coeffs(self) -> tuple[float, float, float, float]:
        return (self.k1, self.k2, 0.0, 0.0)

    @property
    def distorted(self) -> bool:
        return self.k1 != 0.0 or self.k2 != 0.0

    def position(self) -> Array:
        e, a = math.radians(self.elevation_deg), math.radians(self.azimuth_deg)
        away = np.array([math.sin(a) * math.cos(e), -math.cos(a) * math.cos(e), math.sin(e)])
        return np.asarray(self.target) + self.distance * away

    def axes(self) -> tuple[Array, Array, Array]:
        """The camera's right, down and forward unit vectors in the board frame."""
        forward = np.asarray(self.target) - self.position()
        forward /= np.linalg.norm(forward)
        a = math.radians(self.azimuth_deg)
        # Straight down the "up" of the table is ambiguous: use the direction away from the
        # camera's stand (towards rank 10 at azimuth 0) as the image's up.
        far = np.array([-math.sin(a), math.cos(a), 0.0])
        up_hint = far if self.elevation_deg > 89.0 else np.array([0.0, 0.0, 1.0])
        right = np.cross(forward, up_hint)
        right /= np.linalg.norm(right)
        down = np.cross(forward, right)
        r = math.radians(self.roll_deg)
        right, down = (math.cos(r) * right + math.sin(r) * down,
                       -math.sin(r) * right + math.cos(r) * down)
        return right, down, forward

    def pose(self) -> tuple[Array, Array]:
        """OpenCV's rvec and tvec: board frame -> camera frame."""
        right, down, forward = self.axes()
        rot = np.stack([right, down, forward])
        tvec = -rot @ self.position()
        rvec, _ = cv2.Rodrigues(rot)
        return rvec.reshape(3), tvec

    def project(self, points: Array) -> Array:
        """Board-frame points (N x 3) -> image pixels (N x 2), through the lens."""
        rvec, tvec = self.pose()
        pts = np.asarray(points, dtype=np.float64).reshape(-1, 1, 3)
        out, _ = cv2.projectPoints(pts, rvec, tvec, self.matrix, np.array(self.dist_coeffs))
        return np.asarray(out.reshape(-1, 2))

    def homography(self) -> Array | None:
        """Board plane (x, y) -> pixels, when the lens does not bend lines."""
        if self.distorted:
            return None
        src = GRID_CORNERS[:, :2].astype(np.float32)
        dst = self.project(GRID_CORNERS).astype(np.float32)
        return np.asarray(cv2.getPerspectiveTransform(src, dst), dtype=np.float64)


def a1_corner(camera: Camera) -> tuple[int, float]:
    """Which physical grid corner (index into GRID_CORNERS) lies nearest the image's
    bottom-left, and by how many pixels the next nearest is farther (the rule's margin)."""
    corners = camera.project(GRID_CORNERS)
    d = np.hypot(corners[:, 0], corners[:, 1] - (camera.height - 1))
    order = np.argsort(d)
    return int(order[0]), float(d[order[1]] - d[order[0]])


def corners_in_view(camera: Camera, margin_px: float) -> bool:
    """True when the whole grid projects inside the image with `margin_px` to spare, and
    in front of the camera."""
    right, down, forward = camera.axes()
    depth = (GRID_CORNERS - camera.position()) @ forward
    if np.any(depth <= 0.5):
        return False
    c = camera.project(GRID_CORNERS)
    return bool(np.all(c[:, 0] >= margin_px) and np.all(c[:, 0] <= camera.width - 1 - margin_px)
                and np.all(c[:, 1] >= margin_px)
                and np.all(c[:, 1] <= camera.height - 1 - margin_px))


def lens_folds(camera: Camera) -> bool:
    """True when the radial polynomial turns back before the image corner (no real lens)."""
    if not camera.distorted:
        return False
    f = camera.focal_px
    r_max = math.hypot(camera.width / 2.0, camera.height / 2.0) / f
    r = np.linspace(0.0, 4.0 * r_max, 2000)
    rd = r * (1.0 + camera.k1 * r**2 + camera.k2 * r**4)
    reach = np.nonzero(rd >= r_max * 1.02)[0]
    if reach.size == 0:
        return True
    return bool(np.any(np.diff(rd[: reach[0] + 1]) <= 0.0))


def undistort_pixels(camera: Camera, pixels: Array) -> Array:
    """Distorted image pixels -> normalised ideal coordinates (N x 2)."""
    pts = np.asarray(pixels, dtype=np.float64).reshape(-1, 1, 2)
    out = cv2.undistortPointsIter(
        pts, camera.matrix, np.array(camera.dist_coeffs), None, None,
        (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 40, 1e-10))
    return np.asarray(out.reshape(-1, 2))
