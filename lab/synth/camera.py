"""Pinhole camera maths for the synthetic scenes: pose, projection, lens distortion maps."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from lab.synth.lens import undistort_normalised
from lab.synth.spec import CameraSpec

Array = npt.NDArray[Any]


@dataclass(frozen=True)
class Camera:
    """A posed camera: intrinsics K (3x3), rotation R (world -> camera), centre C (world).

    Camera axes follow OpenCV: x right, y down, z forward. `width`/`height` are the size of
    the canvas this camera draws on (may exceed the output image when a lens distortion
    needs a margin: `offset` is where the output image's (0, 0) lies on the canvas).
    """

    K: Array
    R: Array
    C: Array
    width: int
    height: int
    offset: tuple[int, int] = (0, 0)

    def to_camera(self, points: Array) -> Array:
        """World points (n, 3) in camera coordinates (n, 3)."""
        return (points - self.C) @ self.R.T

    def project(self, points: Array) -> tuple[Array, Array]:
        """Canvas pixels (n, 2) and depths (n,) of world points (n, 3)."""
        cam = self.to_camera(np.asarray(points, np.float64))
        depth = cam[:, 2]
        safe = np.maximum(depth, 1e-6)
        px = cam[:, :2] / safe[:, None] * np.array([self.K[0, 0], self.K[1, 1]]) + self.K[:2, 2]
        return px, depth

    def plane_homography(self, z: float = 0.0) -> Array:
        """3x3 homography from board-plane points (x, y) at height z to canvas pixels."""
        t = -self.R @ self.C
        m = np.column_stack([self.R[:, 0], self.R[:, 1], self.R[:, 2] * z + t])
        h = self.K @ m
        return np.asarray(h / h[2, 2])


def look_at(spec: CameraSpec, azimuth_deg: float) -> tuple[Array, Array]:
    """Rotation R (world -> camera) and centre C for the spec at a given azimuth."""
    e = math.radians(spec.elevation_deg)
    a = math.radians(azimuth_deg)
    south = np.array([math.sin(a), -math.cos(a), 0.0])
    target = np.array([spec.target[0], spec.target[1], 0.0])
    forward = -(math.cos(e) * south + np.array([0.0, 0.0, math.sin(e)]))
    up = -math.sin(e) * south + np.array([0.0, 0.0, math.cos(e)])
    y_axis = -up
    x_axis = np.cross(y_axis, forward)
    roll = math.radians(spec.roll_deg)
    xr = math.cos(roll) * x_axis + math.sin(roll) * y_axis
    yr = -math.sin(roll) * x_axis + math.cos(roll) * y_axis
    rot = np.stack([xr, yr, forward])
    centre = target - forward * spec.distance
    return rot, centre


def intrinsics(spec: CameraSpec, margin: tuple[int, int] = (0, 0)) -> Array:
    """K for the output image, shifted by a canvas margin (left, top)."""
    return np.array(
        [
            [spec.focal_px, 0.0, spec.width / 2.0 + margin[0]],
            [0.0, spec.focal_px, spec.height / 2.0 + margin[1]],
            [0.0, 0.0, 1.0],
        ]
    )


@lru_cache(maxsize=8)
def distortion_maps(
    width: int, height: int, focal: float, k1: float, k2: float
) -> tuple[Array, Array, tuple[int, int], tuple[int, int]]:
    """cv2.remap maps that bend an ideal canvas into the distorted output image.

    Returns (map_x, map_y, canvas_size, margin): render the ideal image on a canvas of
    `canvas_size` with the principal point moved by `margin`, then remap with the maps.
    """
    step = 8
    gx = np.arange(0, width + step, step, dtype=np.float64)
    gy = np.arange(0, height + step, step, dtype=np.float64)
    xx, yy = np.meshgrid(gx, gy)
    cx, cy = width / 2.0, height / 2.0
    norm = np.stack([(xx - cx) / focal, (yy - cy) / focal], axis=-1)
    ideal = undistort_normalised(norm, k1, k2) * focal
    left = int(math.ceil(max(0.0, -(ideal[..., 0].min() + cx)))) + 2
    top = int(math.ceil(max(0.0, -(ideal[..., 1].min() + cy)))) + 2
    right = int(math.ceil(max(0.0, ideal[..., 0].max() + cx - width))) + 2
    bottom = int(math.ceil(max(0.0, ideal[..., 1].max() + cy - height))) + 2
    canvas = (width + left + right, height + top + bottom)
    coarse_x = (ideal[..., 0] + cx + left).astype(np.float32)
    coarse_y = (ideal[..., 1] + cy + top).astype(np.float32)
    # bilinear up-sampling of the coarse grid: output pixel (x, y) sits at (x/step, y/step)
    fx = np.arange(width, dtype=np.float32) / step
    fy = np.arange(height, dtype=np.float32) / step
    at_x, at_y = np.meshgrid(fx, fy)
    map_x = cv2.remap(coarse_x, at_x, at_y, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    map_y = cv2.remap(coarse_y, at_x, at_y, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    return map_x, map_y, canvas, (left, top)
