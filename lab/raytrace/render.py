"""One ray-traced frame with its truth: render, bend through the lens, expose, add the
sensor's noise, compress.

The lens is applied after tracing: the scene is traced through an ideal pinhole on a
canvas large enough for the bent image, then resampled through OpenCV's radial model, so
the truth's corners (projected with the same model) and the image agree exactly.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np

from lab.raytrace.camera import Camera, undistort_pixels
from lab.raytrace.model import Scene
from lab.raytrace.povray import render_scene
from lab.raytrace.scene import PRINT_NAME, _rotated, board_print, mask_text, scene_text

Array = np.ndarray
LABEL_CORNERS = ((0.0, 0.0), (10.0, 0.0), (10.0, 10.0), (0.0, 10.0))
"""a1, j1, j10, a10 in the labels' frame."""


@dataclass(frozen=True)
class Quality:
    """How carefully POV-Ray traces: antialiasing threshold (None: off) and threads."""

    antialias: float | None = 0.3
    threads: int = 1
    scale: float = 1.0
    """The image's size as a share of the camera's (tests render small)."""


DRAFT = Quality(antialias=None)


@dataclass(frozen=True)
class Rendered:
    """A frame as a camera delivers it (`image`, `encoded` JPEG bytes) and its truth."""

    image: Array
    encoded: bytes
    truth: dict[str, Any]


def _canvas(camera: Camera) -> tuple[int, int, Array | None]:
    """The traced canvas and, with a bending lens, the output -> canvas pixel maps."""
    if not camera.distorted:
        return camera.width, camera.height, None
    w, h = camera.width, camera.height
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float64)
    ideal = undistort_pixels(camera, np.stack([xs.ravel(), ys.ravel()], axis=1))
    f = camera.focal_px
    half_w = float(np.abs(ideal[:, 0]).max()) * f + 2
    half_h = float(np.abs(ideal[:, 1]).max()) * f + 2
    cw, ch = 2 * int(math.ceil(half_w)), 2 * int(math.ceil(half_h))
    maps = np.empty((h, w, 2), np.float32)
    maps[..., 0] = (ideal[:, 0] * f + cw / 2 - 0.5).reshape(h, w)
    maps[..., 1] = (ideal[:, 1] * f + ch / 2 - 0.5).reshape(h, w)
    return cw, ch, maps


def _expose(image: Array, scene: Scene, rng: np.random.Generator) -> Array:
    """Auto-exposure, vignette, blur and sharpening, noise: the camera's own processing."""
    fx = scene.effects
    lin = np.power(image.astype(np.float32) / 255.0, 2.2)
    h, w = lin.shape[:2]
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    r2 = ((xx - w / 2) ** 2 + (yy - h / 2) ** 2) / ((w / 2) ** 2 + (h / 2) ** 2)
    lin *= (1.0 - fx.vignette * r2)[..., None]
    luma = lin @ np.array([0.114, 0.587, 0.299], np.float32)
    centre = luma[h // 4: 3 * h // 4, w // 4: 3 * w // 4]
    level = float(np.percentile(centre, 55)) + 1e-4
    lin *= (fx.exposure_target ** 2.2) / level
    if fx.blur_px > 0.05:
        lin = cv2.GaussianBlur(lin, (0, 0), fx.blur_px)
    if fx.sharpen > 0:
        soft = cv2.GaussianBlur(lin, (0, 0), 1.2)
        lin = lin + fx.sharpen * (lin - soft)
    shot = np.sqrt(np.clip(lin, 0, None)) * fx.noise
    lin = lin + rng.normal(0.0, 1.0, lin.shape).astype(np.float32) * shot * fx.chroma_noise
    lin = lin + rng.normal(0.0, 1.0, lin.shape[:2]).astype(np.float32)[..., None] * shot
    out = np.power(np.clip(lin, 0.0, 1.0), 1 / 2.2) * 255.0
    return np.asarray(np.round(out), dtype=np.uint8)


def _label_corners(scene: Scene) -> Array:
    """The grid corners a1, j1, j10, a10 in the physical board frame (z = 0)."""
    pts = [(*_rotated(x, y, scene.board_turns), 0.0) for x, y in LABEL_CORNERS]
    return np.asarray(pts)


def occluded_cells(scene: Scene, mask: Array) -> list[str]:
    """Cells whose column (printed surface to the top of a bridge) the hand mask touches."""
    cam = scene.camera
    top = scene.edition.tile_height + scene.edition.bridge_height
    hidden = []
    for f in range(10):
        for r in range(10):
            corners = []
            for x, y in ((f, r), (f + 1, r), (f + 1, r + 1), (f, r + 1)):
                px, py = _rotated(x, y, scene.board_turns)
                corners += [(px, py, 0.0), (px, py, top)]
            img = cam.project(np.asarray(corners)).astype(np.float32)
            hull = cv2.convexHull(img).astype(np.int32)
            poly = np.zeros(mask.shape, np.uint8)
            cv2.fillConvexPoly(poly, hull, 1)
            if np.count_nonzero(mask[poly > 0]) >= 3:
                hidden.append(f"{chr(ord('a') + f)}{r + 1}")
    return sorted(hidden)


def render(scene: Scene, quality: Quality = Quality()) -> Rendered:
    """Trace `scene` and return the frame and its truth (the evaluation set's format)."""
    if quality.scale != 1.0:
        cam = dataclasses.replace(scene.camera, width=round(scene.camera.width * quality.scale),
                                  height=round(scene.camera.height * quality.scale))
        scene = dataclasses.replace(scene, camera=cam)
    cam = scene.camera
    rng = np.random.default_rng([*scene.seed, 7])
    cw, ch, maps = _canvas(cam)
    assets = {PRINT_NAME: board_print(scene.edition, np.random.default_rng([*scene.seed, 3]))}
    traced = render_scene(scene_text(scene, cam, cw, ch), cw, ch, antialias=quality.antialias,
                          threads=quality.threads, assets=assets)
    mask = np.zeros((cam.height, cam.width), np.uint8)
    if scene.hands:
        m = render_scene(mask_text(scene, cam, cw, ch), cw, ch, antialias=None,
                         threads=quality.threads)[..., 1]
        mask = m if maps is None else cv2.remap(m, maps[..., 0], maps[..., 1],
                                                cv2.INTER_NEAREST)
        mask = (mask > 127).astype(np.uint8)
    if maps is not None:
        traced = cv2.remap(traced, maps[..., 0], maps[..., 1], cv2.INTER_LINEAR,
                           borderMode=cv2.BORDER_REFLECT)
    image = _expose(traced, scene, rng)
    ok, jpeg = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, scene.effects.jpeg_quality])
    assert ok
    encoded = bytes(jpeg.tobytes())
    image = cv2.imdecode(np.frombuffer(encoded, np.uint8), cv2.IMREAD_COLOR)
    corners = cam.project(_label_corners(scene))
    homography = None
    if not cam.distorted:
        homography = cv2.getPerspectiveTransform(np.asarray(LABEL_CORNERS, np.float32),
                                                 corners.astype(np.float32)).tolist()
    hidden = occluded_cells(scene, mask) if scene.hands else []
    d = np.hypot(corners[:, 0], corners[:, 1] - (cam.height - 1))
    others = np.delete(d, 0)
    truth = {
        "setup": scene.setup,
        "board": list(scene.board_rows()),
        "bridges": [list(b) for b in scene.bridge_names()],
        "occluded": bool(hidden),
        "occluded_cells": hidden,
        "corners": corners.round(3).tolist(),
        "homography": homography,
        "camera_matrix": cam.matrix.tolist(),
        "dist_coeffs": list(cam.dist_coeffs),
        "a1_margin_px": round(float(others.min() - d[0]), 2),
        "markers": {},
        "hand_pixels": int(mask.sum()),
        "source": "raytrace",
        "scene": _jsonable(scene),
    }
    return Rendered(image, encoded, truth)


def _jsonable(scene: Scene) -> dict[str, Any]:
    return dataclasses.asdict(scene)
