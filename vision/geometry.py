"""Board geometry: homographies between the board plane and the image, and the camera pose.

Board coordinates are in cell units: a1's outer corner is (0, 0), files run along x and
ranks along y, so cell (f, r) is the unit square [f, f+1] x [r, r+1]; z is height above the
board, toward the camera. The top-down image has `margin` cells around the grid and
`cell_px` pixels per cell, top rank at the top.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

SIZE = 10
_BOARD_CORNERS = np.array([[0, 0], [SIZE, 0], [SIZE, SIZE], [0, SIZE]], np.float64)


@dataclass(frozen=True)
class BoardGeometry:
    """How the board plane maps to the image, and where the camera is.

    `to_image` maps board (x, y, 1) to image pixels; `camera_matrix`, `rvec`, `tvec` are the
    camera pose that explains it (focal length estimated from the homography when no lens
    calibration gives it).
    """

    to_image: np.ndarray
    camera_matrix: np.ndarray
    rvec: np.ndarray
    tvec: np.ndarray
    up: float

    def project(self, points: np.ndarray) -> np.ndarray:
        """Image pixels of board points (x, y, z) in cell units, shape (n, 3) -> (n, 2)."""
        pts = np.asarray(points, np.float64).reshape(-1, 3).copy()
        pts[:, 2] *= self.up
        # A pinhole without distortion, as cv2.projectPoints computes it (fx, fy, cx, cy),
        # without the Jacobian it also works out: several times quicker for many points.
        # Column by column, not a matrix product: BLAS would spread it over threads that
        # then spin on the other cores.
        rot, _ = cv2.Rodrigues(np.asarray(self.rvec, np.float64))
        t = np.asarray(self.tvec, np.float64).ravel()
        x, y, z = (pts[:, 0] * rot[i, 0] + pts[:, 1] * rot[i, 1] + pts[:, 2] * rot[i, 2] + t[i]
                   for i in range(3))
        k = self.camera_matrix
        out = np.empty((len(pts), 2))
        out[:, 0] = k[0, 0] * x / z + k[0, 2]
        out[:, 1] = k[1, 1] * y / z + k[1, 2]
        return out

    def image_to_board(self, pixels: np.ndarray) -> np.ndarray:
        """Board-plane (x, y) of image pixels, shape (n, 2) -> (n, 2)."""
        inv = np.linalg.inv(self.to_image)
        pts = np.asarray(pixels, np.float64).reshape(-1, 1, 2)
        return np.asarray(cv2.perspectiveTransform(pts, inv).reshape(-1, 2), dtype=np.float64)

    def raised(self, xy: np.ndarray, height: float | np.ndarray) -> np.ndarray:
        """Where on the board plane a point at (x, y, height) appears to lie (parallax).

        Only the pose's parallax is used (the shift between height 0 and `height`), so a
        pose that explains the homography imperfectly still moves points the right way.
        """
        xy = np.asarray(xy, np.float64).reshape(-1, 2)
        top = np.column_stack([xy, np.broadcast_to(np.asarray(height, np.float64), len(xy))])
        base = np.column_stack([xy, np.zeros(len(xy))])
        shift = self.image_to_board(self.project(top)) - self.image_to_board(self.project(base))
        result: np.ndarray = xy + shift
        return result


def board_homography(corners: np.ndarray) -> np.ndarray:
    """The homography from board cells to the image, from the grid's corners (a1, j1, j10,
    a10 order)."""
    img = np.asarray(corners, np.float32).reshape(4, 2)
    result: np.ndarray = cv2.getPerspectiveTransform(_BOARD_CORNERS.astype(np.float32), img)
    return result


def board_geometry(
    corners: np.ndarray, image_size: tuple[int, int], camera_matrix: np.ndarray | None = None
) -> BoardGeometry:
    """Geometry from the grid's corners (a1, j1, j10, a10 order) in an image of given size."""
    img = np.asarray(corners, np.float64).reshape(4, 2)
    hom = board_homography(img)
    k = camera_matrix if camera_matrix is not None else _guess_camera(hom, image_size)
    obj = np.column_stack([_BOARD_CORNERS, np.zeros(4)])
    ok, rvec, tvec = cv2.solvePnP(obj, img, k, None, flags=cv2.SOLVEPNP_IPPE)
    if not ok:
        rvec, tvec = np.zeros((3, 1)), np.array([[0.0], [0.0], [20.0]])
    rot, _ = cv2.Rodrigues(rvec)
    camera_z = float((-rot.T @ tvec).ravel()[2])
    return BoardGeometry(hom, k, rvec, tvec, 1.0 if camera_z > 0 else -1.0)


def _guess_camera(hom: np.ndarray, image_size: tuple[int, int]) -> np.ndarray:
    """A pinhole camera matrix: principal point at the centre, focal length from the homography."""
    w, h = image_size
    cx, cy = w / 2.0, h / 2.0
    shift = np.array([[1, 0, -cx], [0, 1, -cy], [0, 0, 1]], np.float64)
    hh = shift @ hom
    h1, h2 = hh[:, 0], hh[:, 1]
    estimates = []
    den = h1[2] * h2[2]
    if abs(den) > 1e-12:
        f2 = -(h1[0] * h2[0] + h1[1] * h2[1]) / den
        if f2 > 0:
            estimates.append(f2)
    den = h2[2] ** 2 - h1[2] ** 2
    if abs(den) > 1e-12:
        f2 = (h1[0] ** 2 + h1[1] ** 2 - h2[0] ** 2 - h2[1] ** 2) / den
        if f2 > 0:
            estimates.append(f2)
    f = float(max(w, h))
    good = [np.sqrt(e) for e in estimates if 0.4 * max(w, h) < np.sqrt(e) < 4 * max(w, h)]
    if good:
        f = float(np.median(good))
    return np.array([[f, 0, cx], [0, f, cy], [0, 0, 1]], np.float64)


def topdown_matrix(geometry: BoardGeometry, cell_px: int, margin: float) -> np.ndarray:
    """The homography from the image to the top-down view (top rank at the top)."""
    result: np.ndarray = board_to_topdown(cell_px, margin) @ np.linalg.inv(geometry.to_image)
    return result


def board_to_topdown(cell_px: float, margin: float) -> np.ndarray:
    """The homography from board cells to the top-down view's pixels (top rank at the top)."""
    return np.array(
        [[cell_px, 0, margin * cell_px], [0, -cell_px, (margin + SIZE) * cell_px], [0, 0, 1]],
        np.float64,
    )


def topdown_size(cell_px: int, margin: float) -> int:
    """Side in pixels of the top-down view."""
    return int(round((SIZE + 2 * margin) * cell_px))
